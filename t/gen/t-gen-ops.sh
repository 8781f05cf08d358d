#!/bin/sh
# t/gen/t-gen-ops.sh - the op tests follow gen/registry/elementwise.toml: a new entry is tested
# with no change to them, and an entry whose expr disagrees with its ref
# fails them.
#
# In a scratch copy of the source tree, configured for f32 (and i64 and
# bool, which every build has) without CUDA:
# adds a [[binary]] hypot2 (a * a + b * b) and a [[unary]] cube (a * a * a),
# each with its ref and gradient (t-gen-grad.sh checks those), and nothing else; builds t/t-ops and expects it to pass
# with hypot2 and cube among its tests.  Then changes only their exprs
# (a * a + b, a * a), rebuilds, and expects t-ops to fail on exactly their
# value checks.  Needs PYTHON and top_srcdir (make check exports them, and
# CC, TEST_CFLAGS and TEST_LDFLAGS, which the scratch build uses: under
# ASan it is an ASan build too).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
. "$top_srcdir/t/gen/scratch-tree.sh"
echo "1..5"

# Two new entries: name, expr, ref and gradient, nothing else.
cat >>"$src/gen/registry/elementwise.toml" <<'EOF'

[[binary]]
name = "hypot2"
expr = "a * a + b * b"
ref = "a * a + b * b"
grad = { a = "mul_scalar(mul(grad, a), 2)", b = "mul_scalar(mul(grad, b), 2)" }
grad_scalar = "mul_scalar(mul(grad, a), 2)"

[[unary]]
name = "cube"
expr = "a * a * a"
ref = "a * a * a"
grad = "mul(grad, mul_scalar(mul(a, a), 3))"
EOF

build() { # LOG: (re)builds t/t-ops in $build: the generator's outputs first (as
    # `make all` would, which also builds tools/tendo, a program that wants bf16)
    outs=$("$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" --dtypes f32,i64,bool --list) &&
        (cd "$build" && "$make" -j"$jobs" $outs && "$make" -j"$jobs" t/t-ops) >"$1" 2>&1
}
report() { # N DESCRIPTION LOG: not ok, with the end of LOG
    echo "not ok $1 - $2"
    tail -30 "$3" | sed 's/^/# /'
}

mkdir "$build"
# static only: the test programs link it so, and libtool would compile each file twice
if (cd "$build" && "$src/configure" -q --without-cuda --enable-dtypes=f32,i64,bool --without-blas --disable-shared \
        PYTHON="$PYTHON" CC="${CC:-cc}" CFLAGS="${TEST_CFLAGS--O1}" LDFLAGS="${TEST_LDFLAGS-}") \
        >"$tmp/configure.log" 2>&1 && build "$tmp/build.log"; then
    echo "ok 1 - a scratch tree (f32, i64, bool, no CUDA) with hypot2 and cube added to gen/registry/elementwise.toml builds t/t-ops"
else
    cat "$tmp/build.log" >>"$tmp/configure.log" 2>/dev/null
    report 1 "a scratch tree with hypot2 and cube added to gen/registry/elementwise.toml builds t/t-ops" "$tmp/configure.log"
    for n in 2 3 4 5; do echo "not ok $n - # no t/t-ops to run"; done
    exit 0
fi

# (a) the new entries are tested, and pass
"$build/t/t-ops" >"$tmp/a.tap" 2>&1
rc=$?
# every value check is one line ending "(N checks)"; the error cases too
nb=$(grep -c '^ok [0-9]* - f32 hypot2[ _:(]' "$tmp/a.tap")
nu=$(grep -c '^ok [0-9]* - f32 cube[ _:(]' "$tmp/a.tap")
values=$(grep -c -e '^ok [0-9]* - f32 hypot2[ _:].*checks)$' -e '^ok [0-9]* - f32 cube[ _:].*checks)$' "$tmp/a.tap")
if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/a.tap" && [ "$values" -eq 8 ]; then
    echo "ok 2 - t-ops passes, $nb of its tests on hypot2 and $nu on cube (8 of them value checks against their refs)"
else
    report 2 "t-ops passes with hypot2 and cube tested (exit status $rc, $values of 8 value checks)" "$tmp/a.tap"
fi

# (b) only the exprs change: they now disagree with the refs
sed -i 's/^expr = "a \* a + b \* b"$/expr = "a * a + b"/; s/^expr = "a \* a \* a"$/expr = "a * a"/' \
    "$src/gen/registry/elementwise.toml"
if grep -q '^expr = "a \* a + b"$' "$src/gen/registry/elementwise.toml" && grep -q '^expr = "a \* a"$' "$src/gen/registry/elementwise.toml" &&
    build "$tmp/rebuild.log"; then
    echo "ok 3 - with hypot2's expr a * a + b and cube's a * a (refs unchanged), t/t-ops rebuilds"
else
    report 3 "with the exprs changed, t/t-ops rebuilds" "$tmp/rebuild.log"
fi
"$build/t/t-ops" >"$tmp/b.tap" 2>&1
rc=$?
bad_b=$(grep -c '^not ok [0-9]* - f32 hypot2[ _:].*checks)$' "$tmp/b.tap")
bad_u=$(grep -c '^not ok [0-9]* - f32 cube[ _:].*checks)$' "$tmp/b.tap")
others=$(grep '^not ok' "$tmp/b.tap" | grep -v -e ' - f32 hypot2[ _:]' -e ' - f32 cube[ _:]')
if [ $rc -ne 0 ] && [ "$bad_b" -eq 4 ] && [ -z "$others" ]; then
    echo "ok 4 - t-ops fails (exit status $rc): hypot2, hypot2_out, hypot2_scalar and hypot2_out in place disagree with the ref"
else
    report 4 "t-ops fails on hypot2's 4 value checks only (exit status $rc, $bad_b failed)" "$tmp/b.tap"
fi
if [ $rc -ne 0 ] && [ "$bad_u" -eq 4 ] && [ -z "$others" ]; then
    echo "ok 5 - ... and cube, cube_out, cube_out in place and cube of special values; no other op's test fails"
else
    report 5 "t-ops fails on cube's 4 value checks only (exit status $rc, $bad_u failed)" "$tmp/b.tap"
fi
