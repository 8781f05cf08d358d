/* kernels/host/blas.c - numpy.matmul on a GPU through cuBLAS (the device
 * table's matmul for CUDA).
 *
 * cuBLAS is column-major: the row-major C (m x n) = A @ B is, read as
 * column-major memory, C^T (n x m) = B^T A^T.  So B goes first and A second,
 * each with the transpose flag that makes its memory read as B^T and A^T:
 * a row-major operand (unit column stride) is already its own transpose in
 * column-major terms (CUBLAS_OP_N); a transposed view (unit row stride) is
 * passed with CUBLAS_OP_T instead of being copied.  Anything else is made
 * contiguous first.  Products accumulate in f32 (CUBLAS_COMPUTE_32F; TF32
 * tensor cores for f32 only when tendo_set_allow_tf32(true)), f64 in
 * double (CUDA_R_64F with CUBLAS_COMPUTE_64F, alpha and beta doubles). */
#include <cublas_v2.h>

#include "core/matmul.h"
#include "host/glue.h"
#include "gen/cuda_types.h"

/* The cudaDataType of a dtype (gen/dtypes.toml's cuda_data_type) into
 * *type; false for a dtype cuBLAS has no GEMM for (fp8: cublasGemmEx does
 * not take it; the integers and bool have no matmul). */
static bool data_type(tendo_dtype dt, cudaDataType *type)
{
    switch ((int)dt) {
#define TENDO__CUDA_TYPE_CASE(NAME, cuda_type) \
    case TENDO_##NAME:                          \
        *type = cuda_type;                      \
        return true;
        TENDO__FOREACH_CUDA_TYPE(TENDO__CUDA_TYPE_CASE)
#undef TENDO__CUDA_TYPE_CASE
    default:
        return false;
    }
}

/* How cuBLAS reads a rows x cols operand with strides (rs, cs): *tr and
 * the leading dimension *ld; false when it has no unit stride (or ld would
 * not fit an int). */
static bool cu_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t *tr, int64_t *ld)
{
    int64_t nr = rows > 1 ? rows : 1, nc = cols > 1 ? cols : 1;
    /* a dim of size 1 is never stepped over: its stride may be anything */
    int64_t rrs = rows == 1 ? nc : rs, rcs = cols == 1 ? 1 : cs;
    int64_t crs = rows == 1 ? 1 : rs, ccs = cols == 1 ? nr : cs;

    if (rcs == 1 && rrs >= nc && rrs <= INT32_MAX) {
        *tr = CUBLAS_OP_N;
        *ld = rrs;
        return true;
    }
    if (crs == 1 && ccs >= nr && ccs <= INT32_MAX) {
        *tr = CUBLAS_OP_T;
        *ld = ccs;
        return true;
    }
    return false;
}

/* out = a @ b on the GPU, planned in p (operands with a unit stride each). */
static bool cuda_gemm(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                      const tendo__mm_plan *p)
{
    const tendo__tensor *ts[3] = {out, a, b};
    const tendo__mm_operand *A = &p->A, *B = &p->B;
    int64_t m = A->rows, n = B->cols, k = A->cols, nbatches = p->nbatches, lda, ldb, sa = 0, sb = 0;
    size_t elsize = tendo_dtype_size(out->dtype);
    cudaDataType type = CUDA_R_32F;
    cublasOperation_t ta, tb;
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    cublasHandle_t h;
    const float onef = 1.0f, zerof = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    const void *one = &onef, *zero = &zerof; /* of the compute type's scalar type */
    bool uniform = true;
    const char *pa = tendo__tensor_data(a), *pb = tendo__tensor_data(b);
    char *pc = tendo__tensor_data(out);

    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || nbatches > INT32_MAX) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "a %lldx%lldx%lld product (%lld batches) is too large for cuBLAS",
                    (long long)m, (long long)k, (long long)n, (long long)nbatches);
        return false;
    }
    data_type(out->dtype, &type); /* checked by the caller */
    cu_layout(m, k, A->rs, A->cs, &ta, &lda); /* both checked by the caller */
    cu_layout(k, n, B->rs, B->cs, &tb, &ldb);
    if (!tendo__cuda_begin(op, ts, 3) || !(h = tendo__cuda_cublas(op, out->storage->device.index)))
        return false;
    if (type == CUDA_R_32F && tendo_get_allow_tf32()) /* f32: TF32 tensor cores when allowed */
        ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    if (type == CUDA_R_64F) {
        ct = CUBLAS_COMPUTE_64F;
        one = &oned;
        zero = &zerod;
    }
    /* one stride per operand between batches, or a call per batch (also
     * for a flipped batch dim: cuBLAS documents no negative stride) */
    if (nbatches > 1) {
        int64_t a1, b1;
        tendo__mm_batch_offsets(p, 1, &sa, &sb);
        uniform = sa >= 0 && sb >= 0;
        for (int64_t bi = 2; bi < nbatches && uniform; bi++) {
            tendo__mm_batch_offsets(p, bi, &a1, &b1);
            uniform = a1 == bi * sa && b1 == bi * sb;
        }
    }
    if (uniform)
        return tendo__cuda_end(ts, 3, tendo__cuda_blas_ok(op, (int)cublasGemmStridedBatchedEx(
                                   h, tb, ta, (int)n, (int)m, (int)k, one, pb, type, (int)ldb, sb, pa, type,
                                   (int)lda, sa, zero, pc, type, (int)n, m * n, (int)nbatches, ct,
                                   CUBLAS_GEMM_DEFAULT)));
    for (int64_t bi = 0; bi < nbatches; bi++) {
        int64_t ao, bo;
        tendo__mm_batch_offsets(p, bi, &ao, &bo);
        if (!tendo__cuda_blas_ok(op, (int)cublasGemmEx(h, tb, ta, (int)n, (int)m, (int)k, one,
                                                       pb + bo * (int64_t)elsize, type, (int)ldb,
                                                       pa + ao * (int64_t)elsize, type, (int)lda, zero,
                                                       pc + bi * m * n * (int64_t)elsize, type, (int)n, ct,
                                                       CUBLAS_GEMM_DEFAULT)))
            return false;
    }
    return tendo__cuda_end(ts, 3, true);
}

/* numpy.matmul on a GPU into the dense out: operands with no unit stride
 * are made contiguous first (once); an empty inner dim gives zeros. */
bool tendo__cuda_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out)
{
    tendo__mm_plan p;
    int64_t ld;
    cublasOperation_t tr;
    tendo__tensor *ac = NULL, *bc = NULL;
    cudaDataType type;
    bool ok = false;

    if (!data_type(a->dtype, &type)) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no cuBLAS matmul for %s on a GPU (copy to f32 or to the CPU first)",
                    tendo_dtype_name(a->dtype));
        return false;
    }
    if (!tendo__mm_plan_make(op, a, b, &p))
        return false;
    if (!cu_layout(p.A.rows, p.A.cols, p.A.rs, p.A.cs, &tr, &ld)) {
        if (!(ac = tendo__contiguous(op, a)))
            return false;
        a = ac;
    }
    if (!cu_layout(p.B.rows, p.B.cols, p.B.rs, p.B.cs, &tr, &ld)) {
        if (!(bc = tendo__contiguous(op, b)))
            goto out;
        b = bc;
    }
    if ((ac || bc) && !tendo__mm_plan_make(op, a, b, &p))
        goto out;
    if (out->numel == 0) {
        ok = true;
    } else if (p.A.cols == 0) { /* a sum of nothing: all-zero bits are +0 in every float dtype */
        static const uint64_t zero_bits = 0;
        ok = tendo__cuda_fill(op, out, &zero_bits);
    } else {
        ok = cuda_gemm(op, a, b, out, &p);
    }
out:
    tendo__tensor_free(ac);
    tendo__tensor_free(bc);
    return ok;
}
