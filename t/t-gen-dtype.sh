#!/bin/sh
# t/t-gen-dtype.sh - a new float storage dtype is one gen/dtypes.toml entry.
#
# In a scratch copy of the source tree: appends a dtype h16 (the f16 format
# under another name and code, so that it reuses f16's two run
# conversions) and nothing else; configures with --enable-dtypes=f32,h16
# and no CUDA; builds and runs the per-dtype op, reduction and NN tests,
# which must pass and cover h16.  Needs PYTHON and top_srcdir (make check
# exports them, and CC, TEST_CFLAGS and TEST_LDFLAGS, which the scratch
# build uses).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
. "$top_srcdir/t/scratch-tree.sh"
progs="t/t-ops t/t-reduce t/t-nn"
echo "1..4"

# the one entry: f16's, renamed
{ echo; echo "[[dtype]]"; sed -n '/^name = "f16"/,/^numpy/p' "$src/gen/dtypes.toml" |
    sed 's/^name = .*/name = "h16"/; s/^code = .*/code = 99/; s/^safetensors = .*/safetensors = "H16"/; s/^numpy = .*/numpy = ""/'; } \
    >>"$src/gen/dtypes.toml"

mkdir "$build"
if (cd "$build" && "$src/configure" -q --without-cuda --enable-dtypes=f32,h16 --without-blas \
        PYTHON="$PYTHON" CC="${CC:-cc}" CFLAGS="${TEST_CFLAGS--O1}" LDFLAGS="${TEST_LDFLAGS-}" &&
        outs=$("$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" --dtypes f32,h16 --list) &&
        "$make" -j"$jobs" $outs && "$make" -j"$jobs" $progs) >"$tmp/build.log" 2>&1; then
    echo "ok 1 - a scratch tree with an h16 entry in gen/dtypes.toml (and no other change) builds $progs"
else
    echo "not ok 1 - a scratch tree with an h16 entry builds $progs"
    tail -30 "$tmp/build.log" | sed 's/^/# /'
    for n in 2 3 4; do echo "not ok $n - # not built"; done
    exit 0
fi
n=2
for p in $progs; do
    "$build/$p" >"$tmp/out.tap" 2>&1
    rc=$?
    h16=$(grep -c '^ok [0-9]* - h16 ' "$tmp/out.tap")
    if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out.tap" && [ "$h16" -gt 0 ]; then
        echo "ok $n - $p passes, $h16 of its tests on h16"
    else
        echo "not ok $n - $p passes with h16 tested (exit status $rc, $h16 h16 tests)"
        grep '^not ok' "$tmp/out.tap" | head -10 | sed 's/^/# /'
    fi
    n=$((n + 1))
done
