#!/bin/sh
# t/t-gen-dtype.sh - a new dtype is one gen/dtypes.toml entry.
#
# In a scratch copy of the source tree: appends two dtypes and nothing
# else.  h16 is the f16 format under another name and code (a float kind
# reusing f16's two run conversions).  u16 is an unsigned integer, which
# needs only the nine fields no kind supplies (name, code, kind, c_type,
# size, cuda_type, dlpack_code, safetensors, numpy): its compute type, its
# int64_t accumulation, its saturating from_double and the rest default by
# kind.  Configures with --enable-dtypes=f32,h16,u16,i64,bool and no CUDA;
# builds and runs the per-dtype op, reduction, NN and conversion tests,
# which must pass and cover the new dtypes; then runs a small program on
# u16 tensors (add wraps, sum gives i64, eq gives bool, to_f32).  Needs
# PYTHON and top_srcdir (make check exports them, and CC, TEST_CFLAGS and
# TEST_LDFLAGS, which the scratch build uses).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
. "$top_srcdir/t/scratch-tree.sh"
progs="t/t-ops t/t-reduce t/t-nn t/t-convert"
dtypes=f32,h16,u16,i64,bool
echo "1..9"

# the h16 entry: f16's, renamed
{ echo; echo "[[dtype]]"; sed -n '/^name = "f16"/,/^numpy/p' "$src/gen/dtypes.toml" |
    sed 's/^name = .*/name = "h16"/; s/^code = .*/code = 99/; s/^safetensors = .*/safetensors = "H16"/; s/^numpy = .*/numpy = ""/'; } \
    >>"$src/gen/dtypes.toml"
# the u16 entry, whole: the README's "Adding a dtype" walks through it
cat >>"$src/gen/dtypes.toml" <<'EOF'

[[dtype]]
name = "u16"
code = 100
kind = "uint"
c_type = "uint16_t"
size = 2
cuda_type = "uint16_t"
dlpack_code = 1
safetensors = "U16"
numpy = "<u2"
EOF

mkdir "$build"
if (cd "$build" && "$src/configure" -q --without-cuda --enable-dtypes=$dtypes --without-blas \
        PYTHON="$PYTHON" CC="${CC:-cc}" CFLAGS="${TEST_CFLAGS--O1}" LDFLAGS="${TEST_LDFLAGS-}" &&
        outs=$("$PYTHON" "$src/gen/tendo-gen" --srcdir "$src" --dtypes $dtypes --list) &&
        "$make" -j"$jobs" $outs && "$make" -j"$jobs" libtendo.la $progs) >"$tmp/build.log" 2>&1; then
    echo "ok 1 - a scratch tree with h16 and u16 entries in gen/dtypes.toml (and no other change) builds $progs"
else
    echo "not ok 1 - a scratch tree with h16 and u16 entries builds $progs"
    tail -30 "$tmp/build.log" | sed 's/^/# /'
    for n in 2 3 4 5 6 7 8 9; do echo "not ok $n - # not built"; done
    exit 0
fi
n=2
for p in $progs; do
    "$build/$p" >"$tmp/out.tap" 2>&1
    rc=$?
    h16=$(grep -c '^ok [0-9]* - h16 ' "$tmp/out.tap")
    u16=$(grep -c '^ok [0-9]* - .*\bu16\b' "$tmp/out.tap")
    if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out.tap" && [ "$h16" -gt 0 ]; then
        echo "ok $n - $p passes, $h16 of its tests on h16, $u16 naming u16"
    else
        echo "not ok $n - $p passes with h16 tested (exit status $rc, $h16 h16 tests)"
        grep '^not ok' "$tmp/out.tap" | head -10 | sed 's/^/# /'
    fi
    n=$((n + 1))
done

# u16 through the public API: each line of the program is one test
cat >"$tmp/u16.c" <<'EOF'
#include <stdio.h>
#include <tendo.h>

static int check(int good, const char *what)
{
    printf("%s %s\n", good ? "PASS" : "FAIL", what);
    if (!good && tendo_last_error())
        printf("# %s\n", tendo_error_message(tendo_last_error()));
    return good;
}

int main(void)
{
    const uint16_t av[4] = {65535, 1, 300, 40000}, bv[4] = {1, 2, 65000, 40000};
    tensor_u16 *a = tensor_u16_from_data(av, TENDO_SHAPE(4), tendo_cpu());
    tensor_u16 *b = tensor_u16_from_data(bv, TENDO_SHAPE(4), tendo_cpu());
    tensor_u16 *s = tensor_add(a, b);
    tensor_i64 *sum = tensor_sum_all(a);
    tensor_bool *eq = tensor_eq(a, b);
    tensor_f32 *f = tensor_to_f32(a);
    const uint16_t *sv = s ? tensor_data(s) : NULL;
    const int64_t *sumv = sum ? tensor_data(sum) : NULL;
    const bool *eqv = eq ? tensor_data(eq) : NULL;
    const float *fv = f ? tensor_data(f) : NULL;

    check(sv && sv[0] == 0 && sv[1] == 3 && sv[2] == 65300 && sv[3] == 14464,
          "u16 add wraps modulo 2^16: [65535, 1, 300, 40000] + [1, 2, 65000, 40000] = [0, 3, 65300, 14464]");
    check(sumv && tensor_ndim(sum) == 0 && sumv[0] == 105836,
          "u16 sum_all is an i64 0-d tensor, 105836, with no wrap at 2^16");
    check(eqv && !eqv[0] && !eqv[1] && !eqv[2] && eqv[3], "u16 eq gives a bool tensor [false, false, false, true]");
    check(fv && fv[0] == 65535.0f && fv[1] == 1.0f && fv[2] == 300.0f && fv[3] == 40000.0f,
          "u16 to_f32 is exact: [65535, 1, 300, 40000]");
    tensor_free(a);
    tensor_free(b);
    tensor_free(s);
    tensor_free(sum);
    tensor_free(eq);
    tensor_free(f);
    return 0;
}
EOF
if (cd "$build" && ./libtool --mode=link "${CC:-cc}" -std=c11 -I"$build/include" -I"$src/include" \
        ${TEST_CFLAGS--O1} -o "$tmp/u16" "$tmp/u16.c" libtendo.la ${TEST_LDFLAGS-}) >"$tmp/u16.log" 2>&1 &&
    "$tmp/u16" >"$tmp/u16.out" 2>&1; then
    :
else
    sed 's/^/# /' "$tmp/u16.log" | tail -20
fi
for k in 1 2 3 4; do
    line=$(sed -n "${k}p" "$tmp/u16.out" 2>/dev/null)
    case "$line" in
    "PASS "*) echo "ok $n - ${line#PASS }" ;;
    "FAIL "*) echo "not ok $n - ${line#FAIL }"; grep '^#' "$tmp/u16.out" ;;
    *) echo "not ok $n - the u16 program ran (test $k)" ;;
    esac
    n=$((n + 1))
done
