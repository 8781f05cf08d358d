#!/bin/sh
# t/gen/t-gen.sh - gen/tendo-gen is deterministic and validates its tables.
#
# Renders every output twice (with the dtype list spelled in two orders)
# and expects byte-identical files; then feeds it broken tables and expects
# a refusal that names the problem; then plants an error in a template and
# expects the compiler to name the template line (the #line directives).
# (t/gen/t-gen-ops.sh checks that the op tests follow the registry's op families.)
# Needs PYTHON, top_srcdir, and CC and top_builddir for the last part
# (make check).
: "${PYTHON:=python3}" "${top_srcdir:=.}" "${top_builddir:=.}" "${CC:=cc}"
if ! "$PYTHON" -c 'import sys, tomllib, jinja2; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "1..0 # SKIP no Python 3.11+ with jinja2 (a release tarball needs none)"
    exit 0
fi
case "$top_srcdir" in /*) ;; *) top_srcdir=$(pwd)/$top_srcdir ;; esac
gen="$top_srcdir/gen/tendo-gen"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..21"

render() { # DIR DTYPES: renders every output for DTYPES under DIR
    outs=$("$PYTHON" "$gen" --srcdir "$top_srcdir" --dtypes "$2" --list) &&
    (cd "$1" && "$PYTHON" "$gen" --srcdir "$top_srcdir" --dtypes "$2" $outs)
}

mkdir "$tmp/a" "$tmp/b"
if render "$tmp/a" f32,f16,bf16,i64,bool && render "$tmp/b" bool,bf16,f32,i64,f16,f32; then
    echo "ok 1 - renders every output"
else
    echo "not ok 1 - renders every output"
fi
if diff -r "$tmp/a" "$tmp/b" >"$tmp/diff" && [ -s "$tmp/a/include/tendo.h" ]; then
    echo "ok 2 - two runs give byte-identical files, whatever the order of --dtypes"
else
    echo "not ok 2 - two runs give byte-identical files"; head -20 "$tmp/diff" | sed 's/^/# /'
fi

# broken tables, in a copy of the generator's inputs
refuses() { # N DESCRIPTION EXPECTED-MESSAGE-FRAGMENT, with $tmp/src prepared
    if "$PYTHON" "$tmp/src/gen/tendo-gen" --srcdir "$tmp/src" --dtypes "${dtypes:-f32,i64,bool}" \
           include/tendo.h >"$tmp/out" 2>&1; then
        echo "not ok $1 - $2: accepted"
    elif grep -q "$3" "$tmp/out"; then
        echo "ok $1 - $2: $(head -1 "$tmp/out")"
    else
        echo "not ok $1 - $2: wrong message"; sed 's/^/# /' "$tmp/out"
    fi
}
fresh() { # a copy of the generator and its inputs (gen/, templates/, kernels/templates/)
    rm -rf "$tmp/src" && mkdir -p "$tmp/src/gen" "$tmp/src/kernels" &&
    cp -R "$top_srcdir/gen/." "$tmp/src/gen/" && cp -R "$top_srcdir/templates" "$tmp/src/" &&
    cp -R "$top_srcdir/kernels/templates" "$tmp/src/kernels/"
}
fresh; dtypes=f32,i64,bool,f99 refuses 3 "an unknown dtype" "unknown dtype 'f99'"
fresh; sed -i 's/^code = 2$/code = 1/' "$tmp/src/gen/dtypes.toml"
refuses 4 "two dtypes with one code" "code 1 must be positive and unique"
fresh; sed -i '0,/^safetensors = .*/{/^safetensors = .*/d}' "$tmp/src/gen/dtypes.toml"
refuses 5 "a dtype missing a field no kind supplies" "dtype #1: missing field 'safetensors'"
fresh; printf '[[fn]]\nname = "free"\nret = "void"\nparams = ["tensor t"]\ncall = "t"\ntest = "t-tensor"\ndoc = "again"\n' \
    >> "$tmp/src/gen/registry/views.toml"
refuses 6 "a function declared twice" "function 'free' declared twice"
# f64 accumulates in double, which has kernels; long double has none
fresh; sed -n '/^name = "f64"/,/^numpy/p' "$top_srcdir/gen/dtypes.toml" |
    sed 's/^name = .*/name = "f80"/; s/^code = .*/code = 99/; s/^c_type = .*/c_type = "long double"/; s/^size = .*/size = 16/' |
    sed 's/^compute_type = .*/compute_type = "long double"/; s/^accum_type = .*/accum_type = "long double"/' |
    { echo "[[dtype]]"; cat; } >> "$tmp/src/gen/dtypes.toml"
dtypes=f32,i64,bool,f80 refuses 7 "a dtype accumulating in a type with no kernels" "accum_type 'long double' has no kernels"
# an integer stored as itself but computing in float: it needs run
# conversions, and an entry without them would render code that does not compile
fresh; sed -n '/^name = "f32"/,/^numpy/p' "$top_srcdir/gen/dtypes.toml" |
    sed 's/^name = .*/name = "q32"/; s/^code = .*/code = 99/; s/^c_type = .*/c_type = "int32_t"/' |
    { echo "[[dtype]]"; cat; } >> "$tmp/src/gen/dtypes.toml"
dtypes=f32,i64,bool,q32 refuses 8 "a dtype converting to its compute type without run conversions" "widen_run must name a C identifier"

# the op families' references and test fields (t/ops-table.h)
ew="$tmp/src/gen/registry/elementwise.toml"
fresh; sed -i '0,/^ref = "-a"$/s//ref = "-b"/' "$ew"
refuses 9 "a unary ref naming b" "unary #1 (neg): ref: names 'b', which is none of its operands (a)"
fresh; sed -i 's/^ref = "1.0 \/ (1.0 + exp(-a))"$/ref = "tendo__sigmoid(a)"/' "$ew"
refuses 10 "a ref calling the library's own helper" "ref: calls 'tendo__sigmoid', which is not a double function"
fresh; sed -i 's/^tol = { rel = 6, abs_x = 8 }$/tol = { rel = 6, absx = 8 }/' "$ew"
refuses 11 "a misspelt tolerance" "tol: unknown field(s) absx"
fresh; printf '[[binary]]\nname = "hypot2"\nexpr = "a * a + b * b"\n' >> "$ew"
nbinary=$(grep -c '^\[\[binary\]\]' "$ew")
refuses 12 "an op without a reference" "binary #$nbinary (hypot2): missing field 'ref'"

# the sample calls (t/fault-table.h): a function the fault sweep could not
# call is refused, not left out of the sweep
nn="$tmp/src/gen/registry/nn.toml"
fresh; sed -i '0,/^sample = { b = "t43" }$/s//sample = { c = "t43" }/' "$nn"
refuses 13 "a sample naming no param" "(matmul): sample names c, not a param"
fresh; sed -i '0,/^sample = { b = "t43" }$/s//sample = { b = "t99" }/' "$nn"
refuses 14 "a sample naming no fixture" "sample 't99' is none of"
fresh; printf '[[fn]]\nname = "frob"\nret = "tensor"\nparams = ["ctensor t", "int flavour"]\ncall = "t"\ntest = "t-nn"\ndoc = "d"\n' >> "$nn"
refuses 15 "a param the sweep cannot make a sample of" "(frob): param 'int flavour': no sample value for it"

# bool and i64 are results of other dtypes' ops: a build without them is refused
fresh; dtypes=f32,f16,i64 refuses 16 "leaving out bool" "dtype 'bool' cannot be left out"
fresh; dtypes=f32,bool refuses 17 "leaving out i64" "dtype 'i64' cannot be left out"
# no --dtypes: every dtype of gen/dtypes.toml, in table order
want=$(sed -n 's/^name = "\(.*\)"$/include\/tendo\/tensor_\1.h/p' "$top_srcdir/gen/dtypes.toml")
got=$("$PYTHON" "$gen" --srcdir "$top_srcdir" --list 2>&1 | tr ' ' '\n' | grep '^include/tendo/tensor_')
if [ -n "$want" ] && [ "$got" = "$want" ]; then
    echo "ok 18 - without --dtypes every dtype of gen/dtypes.toml is rendered, in table order"
else
    echo "not ok 18 - without --dtypes every dtype is rendered"; echo "# got: $got" | head -5
fi

# #line: an error planted in a template is reported at the template's line.
# The rendered elementwise_<dt>.c is compiled against the build tree's
# headers, for the first dtype the build has.
case "$top_builddir" in /*) ;; *) top_builddir=$(pwd)/$top_builddir ;; esac
dt=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_builddir/include/tendo/dtype.h" 2>/dev/null | head -1)
[ -n "$dt" ] || dt=$(sed -n 's/^ *X(\([a-z0-9_]*\), .*/\1/p' "$top_srcdir/include/tendo/dtype.h" 2>/dev/null | head -1)
syntax() { # renders and compiles $tmp/b/src/gen/elementwise_$dt.c, messages in $tmp/err
    (cd "$tmp/b" && "$PYTHON" "$tmp/src/gen/tendo-gen" --srcdir "$tmp/src" --dtypes "$dt,i64,bool" \
        "src/gen/elementwise_$dt.c" src/gen/cuda_launchers.h src/gen/convert.h src/gen/cpu_kernels.h) &&
    $CC -std=c11 -fsyntax-only -D_POSIX_C_SOURCE=200809L -I"$top_builddir" -I"$tmp/b/src" -I"$top_builddir/include" \
        -I"$top_srcdir/include" -I"$top_srcdir/src" -I"$top_builddir/t" \
        "$tmp/b/src/gen/elementwise_$dt.c" >"$tmp/err" 2>&1
}
if [ -z "$dt" ] || [ ! -f "$top_builddir/config.h" ]; then
    for i in 19 20 21; do echo "ok $i # SKIP no configured build tree at $top_builddir"; done
    exit 0
fi
fresh; rm -rf "$tmp/b"; mkdir "$tmp/b"
if syntax; then
    echo "ok 19 - the rendered src/gen/elementwise_$dt.c, #line directives and all, compiles"
else
    echo "not ok 19 - the rendered src/gen/elementwise_$dt.c compiles"; sed 's/^/# /' "$tmp/err" | head -20
fi
# the first line of the unary op family's macro: one error per unary op
rel=templates/api/elementwise.j2
tmpl="$tmp/src/$rel"
loop=$(grep -n '^{% macro unary(op) %}$' "$tmpl" | cut -d: -f1)
line=$((loop + 1))
sed -i "${loop}a int planted_{{ op.name }}(void) { return planted_undeclared; }" "$tmpl"
# the unary ops that apply to $dt (the first dtype, a float one), as the
# generator decides it (op.applies)
nunary=$("$PYTHON" - "$tmp/src" "$dt" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "gen"))
from tendogen.dtypes import load_dtypes
from tendogen.registry import Registry
dt = [d for d in load_dtypes(os.path.join(sys.argv[1], "gen", "dtypes.toml")) if d.name == sys.argv[2]][0]
reg = Registry.load(os.path.join(sys.argv[1], "gen", "registry"))
print(sum(1 for op in reg.ops if op.kind == "unary" and op.applies(dt)))
PY
)
if [ -z "$loop" ]; then
    echo "not ok 20 - found the unary op family's macro in $rel"
    echo "not ok 21 - found the unary op family's macro in $rel"
elif syntax; then
    echo "not ok 20 - a planted error at $rel:$line: compiled"
    echo "not ok 21 - a planted error at $rel:$line: compiled"
else
    errors=$(grep -c 'error:' "$tmp/err")
    at=$(grep -c "^$tmpl:$line:[0-9]*: error: .*planted_undeclared" "$tmp/err")
    if grep 'error:' "$tmp/err" | head -1 | grep -q "^$tmpl:$line:"; then
        echo "ok 20 - a planted error is reported at $rel:$line, where it was planted"
    else
        echo "not ok 20 - a planted error is reported at $rel:$line"; sed 's/^/# /' "$tmp/err" | head -20
    fi
    if [ "$at" -eq "$nunary" ] && [ "$errors" -eq "$nunary" ]; then
        echo "ok 21 - and so are its copies for the other $((nunary - 1)) unary ops"
    else
        echo "not ok 21 - $nunary errors at $rel:$line: $at there, $errors in all"
        grep 'error:' "$tmp/err" | sed 's/^/# /' | head -20
    fi
fi
