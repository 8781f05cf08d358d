#!/bin/sh
# t/gen/t-gen-dtype.sh - a new dtype is one gen/dtypes.toml entry, and a new
# function is one registry entry plus its CPU and CUDA kernel bodies.
#
# In a scratch copy of the source tree, and nothing else changed:
#   - gen/dtypes.toml gets four entries: h16 (the f16 format under another
#     name and code: a float reusing f16's conversions), u16 (the nine
#     fields no kind supplies, as the README walks through), u32 and u64;
#   - gen/registry/reductions.toml gets logsumexp(a, dim, keepdim): one
#     [[fn]] and its [[kernel]]; its CPU kernel body is
#     templates/cpu/reduce/logsumexp.c.j2, its CUDA kernel body
#     kernels/logsumexp.cuh.
# Configures --enable-dtypes=f32,h16,u16,u32,u64,i64,bool on the simulated
# CUDA device (--enable-cuda-sim; without CUDA when CUDA's headers are not
# at hand), builds, and runs the op, reduction, kinds, index, order, NN and
# conversion tests, t-cuda, the device coverage test and the allocation-
# failure sweep: each must pass and cover the new dtypes; t-coverage and
# t-fault must cover logsumexp.  Then: programs on tensor_u16 (add wraps,
# sum is i64, eq is bool, to_f32), on u64 past 2^63 (max, sort) and on
# logsumexp (its generic macro, against a reference in double, on the CPU
# and on cuda:0); the generated header, _Generic front, launchers, fault
# table and docs/ops.md must name logsumexp.  Needs PYTHON and top_srcdir
# (make check exports them, and CC, TEST_CFLAGS and TEST_LDFLAGS, which the
# scratch build uses).
: "${PYTHON:=python3}" "${top_srcdir:=.}"
. "$top_srcdir/t/gen/scratch-tree.sh"
dtypes=f32,h16,u16,u32,u64,i64,bool
progs="t/t-ops t/t-reduce t/t-kinds t/t-index t/t-order t/t-nn t/t-convert t/t-cuda t/t-coverage t/t-fault"
cuda_inc=/usr/local/cuda/include
if [ -f "$cuda_inc/cuda_runtime.h" ] && [ -f "$cuda_inc/cublas_v2.h" ]; then
    device="--enable-cuda-sim --with-cuda=/usr/local/cuda"
else
    device=--without-cuda
fi
echo "1..19"

# ---- the dtypes: h16 is f16's entry renamed; u16, u32 and u64 whole ---------
{ echo; echo "[[dtype]]"; sed -n '/^name = "f16"/,/^numpy/p' "$src/gen/dtypes.toml" |
    sed 's/^name = .*/name = "h16"/; s/^code = .*/code = 99/; s/^safetensors = .*/safetensors = "H16"/; s/^numpy = .*/numpy = ""/'; } \
    >>"$src/gen/dtypes.toml"
for spec in "u16 100 2" "u32 101 4" "u64 102 8"; do
    set -- $spec
    cat >>"$src/gen/dtypes.toml" <<EOF

[[dtype]]
name = "$1"
code = $2
kind = "uint"
c_type = "uint$(($3 * 8))_t"
size = $3
cuda_type = "uint$(($3 * 8))_t"
dlpack_code = 1
safetensors = "U$(($3 * 8))"
numpy = "<u$3"
EOF
done

# ---- the function: one registry entry, and its two kernel bodies ------------
cat >>"$src/gen/registry/reductions.toml" <<'EOF'

[[fn]]
name = "logsumexp"
kinds = ["float"]
ret = "tensor"
params = ["ctensor a", "int dim", "bool keepdim"]
call = "{cpu:logsumexp}(op, a, dim, keepdim, {cuda:logsumexp})"
grad = { a = "mul(expand_to(keep_dim(grad, @a, dim, keepdim), @a), exp(sub(a, expand_to(keep_dim(result, @a, dim, keepdim), @a))))" }
exact = false
test = "t-gen-dtype"
doc = "log(sum(exp(a))) along dim, as max + log(sum(exp(a - max))), so that it never overflows; kept as size 1 when keepdim.  A new tensor the caller frees."

[[kernel]]
name = "logsumexp"
cpu = "reduce"
signature = "tendo__tensor *(const char *op, const tendo__tensor *a, int dim, bool keepdim, tendo__cu_rows_fn cu)"
cuda = "rows"
source = "reduce"
header = "logsumexp.cuh"
cuda_body = "return tendo_logsumexp_launch<{CU}>(r);"
doc = "logsumexp along dim, in the accumulation type."
EOF
cat >"$src/templates/cpu/reduce/logsumexp.c.j2" <<'EOF'
{% macro kernel(k) %}
/* ---- logsumexp ---- */

static void rows_logsumexp(const tendo__rows *r, void *ctx)
{
    const tendo__traits *ti = r->in_traits, *to = r->out_traits;
    {{ CT }} buf[CHUNK], res[ROWS];

    (void)ctx;
    for (int64_t j0 = 0; j0 < r->count; j0 += ROWS) {
        int64_t m = r->count - j0 < ROWS ? r->count - j0 : ROWS;
        for (int64_t j = 0; j < m; j++) {
            const char *x = at(ti, r->in, (j0 + j) * r->in_next);
            {{ CT }} mx = -INFINITY, s = 0;
            for (int64_t i = 0; i < r->len; i += CHUNK) {
                int64_t n = r->len - i < CHUNK ? r->len - i : CHUNK;
                const {{ CT }} *v = as_compute(ti, at(ti, x, i * r->in_step), r->in_step, n, buf);
                for (int64_t q = 0; q < n; q++)
                    mx = v[q] > mx || v[q] != v[q] ? v[q] : mx;
            }
            for (int64_t i = 0; isfinite(mx) && i < r->len; i += CHUNK) {
                int64_t n = r->len - i < CHUNK ? r->len - i : CHUNK;
                const {{ CT }} *v = as_compute(ti, at(ti, x, i * r->in_step), r->in_step, n, buf);
                for (int64_t q = 0; q < n; q++)
                    s += exp{{ "f" if CT == "float" }}(v[q] - mx);
            }
            res[j] = isfinite(mx) ? mx + log{{ "f" if CT == "float" }}(s) : mx;
        }
        to->narrow(res, at_mut(to, r->out, j0 * r->out_next), r->out_next, m);
    }
}

tendo__tensor *tendo__logsumexp_{{ ct }}(const char *op, const tendo__tensor *in, int dim, bool keepdim,
                                         tendo__cu_rows_fn cu)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t shape[TENDO_MAX_DIMS];
    int nd = 0;
    tendo__tensor *out;

    if (!tendo__check_inputs(op, 1, &in) || (dim = tendo__wrap_dim(op, dim, in->ndim, in->shape)) < 0)
        return NULL;
    for (int d = 0; d < in->ndim; d++)
        if (d != dim || keepdim)
            shape[nd++] = d == dim ? 1 : in->shape[d];
    out = tendo__tensor_new(op, in->dtype, nd, shape, in->storage->device);
    if (out && !tendo__rows_run(op, out, keepdim ? dim : -1, in, dim, rows_logsumexp, NULL, cu, NULL, NULL, 0)) {
        tendo__tensor_free(out);
        out = NULL;
    }
    return out ? tendo__op_end(s, op, out, in, NULL) : NULL;
}
{%- endmacro %}
EOF
cat >"$src/kernels/logsumexp.cuh" <<'EOF'
#include "rows.cuh"

/* A block per row: the max, then the sum of exp(x - max), in the compute type. */
template <typename T, typename I>
__global__ void tendo_logsumexp_rows(tendo__cu_rows r)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        T *y = (T *)r.rows.base[0] + off[0];
        C m = -INFINITY, s = 0;

        for (int64_t k = threadIdx.x; k < r.len; k += blockDim.x)
            m = tendo_fold_max()(m, (C)tendo_ld(x[k * r.in_step]));
        m = tendo_block_reduce(m, tendo_fold_max(), (C)-INFINITY, sh);
        for (int64_t k = threadIdx.x; k < r.len; k += blockDim.x)
            s += tendo_exp((C)tendo_ld(x[k * r.in_step]) - m);
        s = tendo_block_reduce(s, tendo_fold_sum(), (C)0, sh);
        if (threadIdx.x == 0)
            *y = tendo_st<T>(m - m == 0 ? m + tendo_log(s) : m);
    }
}

template <typename T>
static int tendo_logsumexp_launch(const tendo__cu_rows *r)
{
    if (r->rows.numel == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(r->rows.numel, 1), TENDO_THREADS, 0, cudaStreamPerThread,
                 tendo_logsumexp_rows<T, int64_t>)(*r);
    return tendo_launched();
}
EOF

# ---- build ------------------------------------------------------------------
mkdir "$build"
# static only: the test programs link it so, and libtool would compile each file twice
# shellcheck disable=SC2086 # $device is one or two options
if (cd "$build" && "$src/configure" -q $device --enable-dtypes=$dtypes --without-blas --disable-shared \
        PYTHON="$PYTHON" CC="${CC:-cc}" CFLAGS="${TEST_CFLAGS--O1}" CXXFLAGS="$(echo "${TEST_CFLAGS--O1}" | sed 's/-std=c11//')" \
        LDFLAGS="${TEST_LDFLAGS-}" &&
        "$make" -j"$jobs" src/gen/stamp && "$make" -j"$jobs" libtendo.la $progs) >"$tmp/build.log" 2>&1; then
    echo "ok 1 - a scratch tree with h16, u16, u32, u64 and logsumexp (its entry and its two kernel bodies, no other change) builds ($device)"
else
    echo "not ok 1 - a scratch tree with the new dtypes and logsumexp builds ($device)"
    tail -30 "$tmp/build.log" | sed 's/^/# /'
    n=2; while [ $n -le 19 ]; do echo "not ok $n - # not built"; n=$((n + 1)); done
    exit 0
fi
n=2
for p in $progs; do
    "$build/$p" >"$tmp/out.tap" 2>&1
    rc=$?
    h16=$(grep -c '^ok [0-9]* - .*\(\bh16\b\|tensor_h16_\)' "$tmp/out.tap")
    u=$(grep -c '^ok [0-9]* - .*\(\bu\(16\|32\|64\)\b\|tensor_u\(16\|32\|64\)_\)' "$tmp/out.tap")
    lse=$(grep -c '^ok [0-9]* - .*logsumexp' "$tmp/out.tap")
    case $p in
    t/t-coverage | t/t-fault) want="$u > 0 && $lse > 0" ;; # every dtype; logsumexp too
    t/t-ops | t/t-reduce | t/t-nn | t/t-cuda) want="$h16 > 0" ;; # the floats
    t/t-convert) want="$h16 > 0 && $u > 0" ;;
    *) want="$u > 0" ;;                                     # the integers
    esac
    if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out.tap" && [ $(($want)) -ne 0 ]; then
        echo "ok $n - $p passes: $h16 of its tests on h16, $u on u16, u32 or u64, $lse on logsumexp"
    elif [ $rc -eq 0 ] && grep -q '^1\.\.0 # SKIP' "$tmp/out.tap"; then
        echo "ok $n # SKIP $p: $(sed -n 's/^1\.\.0 # SKIP //p' "$tmp/out.tap")"
    else
        echo "not ok $n - $p passes and covers the new dtypes (exit status $rc; $h16 h16, $u u16/u32/u64, $lse logsumexp tests)"
        grep '^not ok' "$tmp/out.tap" | head -10 | sed 's/^/# /'
    fi
    n=$((n + 1))
done

# ---- the new function's generated pieces -------------------------------------
has() { grep -q -- "$1" "$build/$2"; }
check() { # DESCRIPTION COMMAND...
    if "$@"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi
    n=$((n + 1))
}
gen_ok() {
    has 'TENDO_API tensor_f32 \*tensor_f32_logsumexp(const tensor_f32 \*a, int dim, bool keepdim);' include/tendo/tensor_f32.h &&
    has '^#define tensor_logsumexp(a, \.\.\.)' include/tendo.h &&
    has 'TENDO__CU_ROWS(tendo__cu_logsumexp_h16);' src/gen/cuda_launchers.h &&
    has 'tf_tensor_f32_logsumexp' t/fault-table.h &&
    has '^| `logsumexp` | ✓ | ✓ |' docs/ops.md
}
if gen_ok; then
    echo "ok $n - logsumexp has its declarations, generic macro, launchers, fault-sweep entry and docs/ops.md row"
else
    echo "not ok $n - logsumexp has its declarations, generic macro, launchers, fault-sweep entry and docs/ops.md row"
fi
n=$((n + 1))

# ---- programs through the public API: one test a line -------------------------
cat >"$tmp/prog.c" <<'EOF'
#include <math.h>
#include <stdio.h>
#include <tendo.h>

static int check(int good, const char *what)
{
    printf("%s %s\n", good ? "PASS" : "FAIL", what);
    if (!good && tendo_last_error())
        printf("# %s\n", tendo_error_message(tendo_last_error()));
    return good;
}

/* logsumexp of a [3,5] with rows that would overflow exp in f32, on d. */
static void lse(tendo_device d, const char *where)
{
    float v[15], got[3], want[3];
    char what[160];
    tensor_f32 *h, *a, *r, *k;
    int good = 1;

    for (int i = 0; i < 15; i++)
        v[i] = (float)(i / 5) * 60.0f + (float)(i % 5) * 0.75f - 30.0f; /* rows near -30, 30, 90 */
    for (int i = 0; i < 3; i++) {
        double m = v[5 * i + 4], s = 0;
        for (int j = 0; j < 5; j++)
            s += exp((double)v[5 * i + j] - m);
        want[i] = (float)(m + log(s));
    }
    h = tensor_f32_from_data(v, TENDO_SHAPE(3, 5), tendo_cpu());
    a = h ? tensor_to(h, d) : NULL;
    r = a ? tensor_logsumexp(a, -1, false) : NULL;
    k = a ? tensor_logsumexp(a, 1, true) : NULL;
    good = r && k && tensor_ndim(k) == 2 && tensor_shape(k)[1] == 1 && tensor_copy_to(r, got, 3) == TENDO_OK;
    for (int i = 0; good && i < 3; i++)
        good = fabsf(got[i] - want[i]) <= 4 * 0x1p-23f * fabsf(want[i]);
    snprintf(what, sizeof what, "logsumexp on %s: rows of [3,5] (exp overflows f32 in the last) within 4 ulps of a double reference, keepdim [3,1]", where);
    check(good, what);
    tensor_free(h), tensor_free(a), tensor_free(r), tensor_free(k);
}

int main(void)
{
    const uint16_t av[4] = {65535, 1, 300, 40000}, bv[4] = {1, 2, 65000, 40000};
    const uint64_t big[3] = {UINT64_C(1) << 63, 5, UINT64_MAX};
    tensor_u16 *a = tensor_u16_from_data(av, TENDO_SHAPE(4), tendo_cpu());
    tensor_u16 *b = tensor_u16_from_data(bv, TENDO_SHAPE(4), tendo_cpu());
    tensor_u16 *s = tensor_add(a, b);
    tensor_i64 *sum = tensor_sum_all(a);
    tensor_bool *eq = tensor_eq(a, b);
    tensor_f32 *f = tensor_to_f32(a);
    tensor_u64 *u = tensor_u64_from_data(big, TENDO_SHAPE(3), tendo_cpu()), *mx = u ? tensor_max(u, 0, false) : NULL;
    tensor_i64 *order = u ? tensor_argsort(u, 0, false) : NULL;
    const uint16_t *sv = s ? tensor_data(s) : NULL;
    const int64_t *sumv = sum ? tensor_data(sum) : NULL, *ov = order ? tensor_data(order) : NULL;
    const bool *eqv = eq ? tensor_data(eq) : NULL;
    const float *fv = f ? tensor_data(f) : NULL;
    const uint64_t *mv = mx ? tensor_data(mx) : NULL;

    check(sv && sv[0] == 0 && sv[1] == 3 && sv[2] == 65300 && sv[3] == 14464,
          "u16 add wraps modulo 2^16: [65535, 1, 300, 40000] + [1, 2, 65000, 40000] = [0, 3, 65300, 14464]");
    check(sumv && tensor_ndim(sum) == 0 && sumv[0] == 105836,
          "u16 sum_all is an i64 0-d tensor, 105836, with no wrap at 2^16");
    check(eqv && !eqv[0] && !eqv[1] && !eqv[2] && eqv[3], "u16 eq gives a bool tensor [false, false, false, true]");
    check(fv && fv[0] == 65535.0f && fv[1] == 1.0f && fv[2] == 300.0f && fv[3] == 40000.0f,
          "u16 to_f32 is exact: [65535, 1, 300, 40000]");
    check(mv && mv[0] == UINT64_MAX && ov && ov[0] == 1 && ov[1] == 0 && ov[2] == 2,
          "u64 compares unsigned: max of [2^63, 5, 2^64-1] is 2^64-1, argsort [1, 0, 2]");
    lse(tendo_cpu(), "the CPU");
    if (tendo_cuda_available())
        lse(tendo_cuda(0), "cuda:0");
    else
        printf("SKIP logsumexp on cuda:0: no CUDA device\n");
    tensor_free(a), tensor_free(b), tensor_free(s), tensor_free(sum), tensor_free(eq), tensor_free(f);
    tensor_free(u), tensor_free(mx), tensor_free(order);
    return 0;
}
EOF
if (cd "$build" && ./libtool --mode=link "${CC:-cc}" -std=c11 -I"$build/include" -I"$src/include" \
        ${TEST_CFLAGS--O1} -o "$tmp/prog" "$tmp/prog.c" libtendo.la ${TEST_LDFLAGS-} -lm) >"$tmp/prog.log" 2>&1 &&
    "$tmp/prog" >"$tmp/prog.out" 2>&1; then
    :
else
    sed 's/^/# /' "$tmp/prog.log" | tail -20
fi
for k in 1 2 3 4 5 6 7; do
    line=$(grep -v '^#' "$tmp/prog.out" 2>/dev/null | sed -n "${k}p")
    case "$line" in
    "PASS "*) echo "ok $n - ${line#PASS }" ;;
    "SKIP "*) echo "ok $n # SKIP ${line#SKIP }" ;;
    "FAIL "*) echo "not ok $n - ${line#FAIL }"; grep '^#' "$tmp/prog.out" ;;
    *) echo "not ok $n - the program ran (test $k)" ;;
    esac
    n=$((n + 1))
done
