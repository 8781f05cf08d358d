#!/bin/sh
# t/t-gen.sh - gen/tendo-gen is deterministic and validates its tables.
#
# Renders every output twice (with the dtype list spelled in two orders)
# and expects byte-identical files; then feeds it broken tables and expects
# a refusal that names the problem (t/t-gen-ops.sh checks that the op tests
# follow gen/ops.toml).  Needs PYTHON, top_srcdir (make check).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
if ! "$PYTHON" -c 'import sys, tomllib, jinja2; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "1..0 # SKIP no Python 3.11+ with jinja2 (a release tarball needs none)"
    exit 0
fi
case "$top_srcdir" in /*) ;; *) top_srcdir=$(pwd)/$top_srcdir ;; esac
gen="$top_srcdir/gen/tendo-gen"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..11"

render() { # DIR DTYPES: renders every output for DTYPES under DIR
    outs=$("$PYTHON" "$gen" --srcdir "$top_srcdir" --dtypes "$2" --list) &&
    (cd "$1" && "$PYTHON" "$gen" --srcdir "$top_srcdir" --dtypes "$2" $outs)
}

mkdir "$tmp/a" "$tmp/b"
if render "$tmp/a" f32,f16,bf16 && render "$tmp/b" bf16,f32,f16,f32; then
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
    if "$PYTHON" "$tmp/src/gen/tendo-gen" --srcdir "$tmp/src" --dtypes "${dtypes:-f32}" \
           include/tendo.h >"$tmp/out" 2>&1; then
        echo "not ok $1 - $2: accepted"
    elif grep -q "$3" "$tmp/out"; then
        echo "ok $1 - $2: $(head -1 "$tmp/out")"
    else
        echo "not ok $1 - $2: wrong message"; sed 's/^/# /' "$tmp/out"
    fi
}
fresh() {
    rm -rf "$tmp/src" && mkdir -p "$tmp/src/gen" &&
    cp -R "$top_srcdir/gen/." "$tmp/src/gen/" && cp -R "$top_srcdir/templates" "$tmp/src/"
}
fresh; dtypes=f32,f99 refuses 3 "an unknown dtype" "unknown dtype 'f99'"
fresh; sed -i 's/^code = 2$/code = 1/' "$tmp/src/gen/dtypes.toml"
refuses 4 "two dtypes with one code" "code 1 must be positive and unique"
fresh; sed -i '0,/^mantissa_bits = .*/{/^mantissa_bits = .*/d}' "$tmp/src/gen/dtypes.toml"
refuses 5 "a dtype missing a field" "missing field 'mantissa_bits'"
fresh; printf '[[fn]]\nname = "free"\nret = "void"\nparams = ["tensor t"]\ndoc = "again"\n' >> "$tmp/src/gen/api.toml"
refuses 6 "a function declared twice" "function 'free' declared twice"
fresh; sed -n '/^name = "f32"/,/^numpy/p' "$top_srcdir/gen/dtypes.toml" |
    sed 's/^name = .*/name = "f64"/; s/^code = .*/code = 9/; s/^compute_type = .*/compute_type = "double"/' |
    { echo "[[dtype]]"; cat; } >> "$tmp/src/gen/dtypes.toml"
dtypes=f32,f64 refuses 7 "a dtype computing in double (no compute templates yet)" "only compute in float"

# gen/ops.toml's references and test fields (t/ops-table.h)
fresh; sed -i '0,/^ref = "-a"$/s//ref = "-b"/' "$tmp/src/gen/ops.toml"
refuses 8 "a unary ref naming b" "unary #1 (neg): ref: names 'b', which is none of its operands (a)"
fresh; sed -i 's/^ref = "1.0 \/ (1.0 + exp(-a))"$/ref = "tendo__sigmoid(a)"/' "$tmp/src/gen/ops.toml"
refuses 9 "a ref calling the library's own helper" "ref: calls 'tendo__sigmoid', which is not a double function"
fresh; sed -i 's/^tol = { rel = 6, abs_x = 8 }$/tol = { rel = 6, absx = 8 }/' "$tmp/src/gen/ops.toml"
refuses 10 "a misspelt tolerance" "tol: unknown field(s) absx"
fresh; printf '[[binary]]\nname = "hypot2"\nexpr = "a * a + b * b"\n' >> "$tmp/src/gen/ops.toml"
refuses 11 "an op without a reference" "binary #8 (hypot2): missing field 'ref'"
