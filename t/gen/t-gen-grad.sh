#!/bin/sh
# t/gen/t-gen-grad.sh - gradients follow the registry: a new function is
# gradchecked with no other edit, a wrong formula fails the check, and a
# function with no formula does not build.
#
# In a scratch copy of the source tree, configured for f32 and f64 (and i64
# and bool, which every build has) without CUDA:
#   1. adds a [[unary]] cube (a * a * a) with its ref and no grad: the
#      generator refuses, naming cube and what it lacks;
#   2. breaks attention's joint formula (an input left out; a formula
#      that is no "tensors" helper's call): the generator refuses each;
#   3. gives cube grad = 3 a^2 grad, and nothing else: t/t-grad builds and
#      passes, with cube checked against central differences in f64
#      (contiguous and strided inputs) and in f32 against f64;
#   4. makes the formula wrong (a^2 grad): t-grad fails on exactly cube's
#      two f64 checks.
# Needs PYTHON and top_srcdir (make check exports them, and CC, TEST_CFLAGS
# and TEST_LDFLAGS, which the scratch build uses).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
. "$top_srcdir/t/gen/scratch-tree.sh"
echo "1..4"

reg=$src/gen/registry/elementwise.toml
cat >>"$reg" <<'EOF'

[[unary]]
name = "cube"
expr = "a * a * a"
ref = "a * a * a"
EOF

report() { # N DESCRIPTION LOG: not ok, with the end of LOG
    echo "not ok $1 - $2"
    tail -30 "$3" | sed 's/^/# /'
}

# 1. no formula: the generator refuses
mkdir "$tmp/gen1"
if (cd "$tmp/gen1" && "$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" --dtypes f32,f64,i64,bool --all) \
        >"$tmp/gen.log" 2>&1; then
    report 1 "tendo-gen refuses a differentiable op without a gradient" "$tmp/gen.log"
elif grep -q "cube.*no derivative" "$tmp/gen.log"; then
    echo "ok 1 - tendo-gen refuses cube without a gradient: $(head -c 160 "$tmp/gen.log")"
else
    report 1 "tendo-gen names cube and the missing derivative" "$tmp/gen.log"
fi

# cube's formula, and nothing else (what 2 and 3 build on)
echo 'grad = "mul(grad, mul_scalar(mul(a, a), 3))"' >>"$reg"

# 2. joint formulas: a key naming several params is one call of a
# "tensors" helper, and every input has exactly one formula
nn=$src/gen/registry/nn.toml
cp "$nn" "$tmp/nn.toml"
joint_refused() { # SED-EXPRESSION LOG: the generator run on nn.toml so edited fails
    sed -i "$1" "$nn" && ! (cd "$tmp/gen1" && "$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" \
        --dtypes f32,f64,i64,bool --all) >"$2" 2>&1
}
if joint_refused 's/"q, k, v" = "attention_qkv_back/"q, k" = "attention_qkv_back/' "$tmp/j1.log" &&
        grep -q "none for v" "$tmp/j1.log" && cp "$tmp/nn.toml" "$nn" &&
        joint_refused 's/"q, k, v" = "attention_qkv_back([^"]*)"/"q, k, v" = "mul(grad, q)"/' "$tmp/j2.log" &&
        grep -q 'returning .tensors' "$tmp/j2.log"; then
    echo "ok 2 - tendo-gen refuses a joint formula that leaves an input out, or is not a \"tensors\" helper's call"
else
    cat "$tmp/j2.log" >>"$tmp/j1.log" 2>/dev/null
    report 2 "tendo-gen refuses bad joint formulas" "$tmp/j1.log"
fi
cp "$tmp/nn.toml" "$nn"

# 3. cube's formula: t-grad checks it
build() { # LOG: (re)builds t/t-grad in $build, the generator's outputs first
    outs=$("$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" --dtypes f32,f64,i64,bool --list) &&
        (cd "$build" && "$make" -j"$jobs" $outs && "$make" -j"$jobs" t/t-grad) >"$1" 2>&1
}
mkdir "$build"
if (cd "$build" && "$src/configure" -q --without-cuda --enable-dtypes=f32,f64,i64,bool --without-blas \
        PYTHON="$PYTHON" CC="${CC:-cc}" CFLAGS="${TEST_CFLAGS--O1}" LDFLAGS="${TEST_LDFLAGS-}") \
        >"$tmp/configure.log" 2>&1 && build "$tmp/build.log"; then
    "$build/t/t-grad" >"$tmp/a.tap" 2>&1
    rc=$?
    n=$(grep -c -e '^ok [0-9]* - f64 cube: analytic' -e '^ok [0-9]* - f64 cube, strided inputs: analytic' \
        -e '^ok [0-9]* - f32 cube: gradient within' "$tmp/a.tap")
    if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/a.tap" && [ "$n" -eq 3 ]; then
        echo "ok 3 - with grad = 3 a^2 grad, t-grad passes and checks cube 3 times (f64, f64 strided, f32)"
    else
        report 3 "t-grad passes with cube checked 3 times (exit status $rc, $n checks)" "$tmp/a.tap"
    fi
else
    cat "$tmp/build.log" >>"$tmp/configure.log" 2>/dev/null
    report 3 "a scratch tree (f32, f64, i64, bool, no CUDA) with cube builds t/t-grad" "$tmp/configure.log"
    echo "not ok 4 - # no t/t-grad to run"
    exit 0
fi

# 4. a wrong formula fails exactly cube's f64 checks
sed -i 's/^grad = "mul(grad, mul_scalar(mul(a, a), 3))"$/grad = "mul(grad, mul(a, a))"/' "$reg"
if grep -q '^grad = "mul(grad, mul(a, a))"$' "$reg" && build "$tmp/rebuild.log"; then
    "$build/t/t-grad" >"$tmp/b.tap" 2>&1
    rc=$?
    bad=$(grep -c '^not ok [0-9]* - f64 cube' "$tmp/b.tap")
    others=$(grep '^not ok' "$tmp/b.tap" | grep -v ' - f64 cube')
    if [ $rc -ne 0 ] && [ "$bad" -eq 2 ] && [ -z "$others" ]; then
        echo "ok 4 - with the formula a^2 grad, t-grad fails (exit status $rc) on cube's two f64 checks only"
    else
        report 4 "t-grad fails on cube's two f64 checks only (exit status $rc, $bad failed)" "$tmp/b.tap"
    fi
else
    report 4 "with the formula changed, t/t-grad rebuilds" "$tmp/rebuild.log"
fi
