/* src/matmul.c - numpy.matmul: shapes, batches, and the choice of GEMM. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/events.h"
#include "core/iter.h"
#include "cpu/matmul.h"

#ifdef TENDO_HAVE_CBLAS
#include <cblas.h>
#endif

#ifdef TENDO_HAVE_CUDA
#include <cublas_v2.h>

#include "cuda/glue.h"
#endif

/* One operand's matrix view: rows x cols with element strides, plus the
 * strides of its batch dims broadcast to the result's batch shape. */
typedef struct {
    int64_t rows, cols, rs, cs;
    int64_t batch_stride[TENDO_MAX_DIMS];
    const char *base;
} operand;

/* Resolves shapes like numpy.matmul; false with TENDO_ERR_SHAPE otherwise.
 * out_shape gets the result's shape (1-D operands' added dims removed). */
static bool plan(const char *op, const tendo__tensor *a, const tendo__tensor *b, operand *A, operand *B,
                 int *nbatch, int64_t *batch, int *out_ndim, int64_t *out_shape)
{
    int an = a->ndim, bn = b->ndim, abatch, bbatch, nb;
    int64_t ak, bk;

    if (an == 0 || bn == 0) {
        tendo__fail(TENDO_ERR_SHAPE, op, "%s @ %s: operands must have at least one dim",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s);
        return false;
    }
    /* a: [..., m, k]; a 1-D a is [1, k] */
    A->rows = an == 1 ? 1 : a->shape[an - 2];
    A->cols = a->shape[an - 1];
    A->rs = an == 1 ? 0 : a->stride[an - 2];
    A->cs = a->stride[an - 1];
    /* b: [..., k, n]; a 1-D b is [k, 1] */
    B->rows = bn == 1 ? b->shape[0] : b->shape[bn - 2];
    B->cols = bn == 1 ? 1 : b->shape[bn - 1];
    B->rs = bn == 1 ? b->stride[0] : b->stride[bn - 2];
    B->cs = bn == 1 ? 0 : b->stride[bn - 1];
    ak = A->cols;
    bk = B->rows;
    if (ak != bk) {
        tendo__fail(TENDO_ERR_SHAPE, op, "%s @ %s: inner dimensions %lld and %lld differ",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s, (long long)ak,
                    (long long)bk);
        return false;
    }
    abatch = an > 2 ? an - 2 : 0;
    bbatch = bn > 2 ? bn - 2 : 0;
    if (!tendo__broadcast_shapes(op, abatch, a->shape, bbatch, b->shape, &nb, batch))
        return false;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - abatch), db = d - (nb - bbatch);
        A->batch_stride[d] = da >= 0 && a->shape[da] != 1 ? a->stride[da] : 0;
        B->batch_stride[d] = db >= 0 && b->shape[db] != 1 ? b->stride[db] : 0;
    }
    *nbatch = nb;
    *out_ndim = 0;
    for (int d = 0; d < nb; d++)
        out_shape[(*out_ndim)++] = batch[d];
    if (an > 1)
        out_shape[(*out_ndim)++] = A->rows;
    if (bn > 1)
        out_shape[(*out_ndim)++] = B->cols;
    if (*out_ndim > TENDO_MAX_DIMS) {
        tendo__fail(TENDO_ERR_SHAPE, op, "result of %s @ %s has too many dims",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s);
        return false;
    }
    return true;
}

#ifdef TENDO_HAVE_CBLAS
/* A strided matrix as CBLAS wants it: one unit stride, the other the
 * leading dimension; false when it has neither (then tendo__sgemm runs). */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, enum CBLAS_TRANSPOSE *tr, int *ld)
{
    if ((cs == 1 || cols == 1) && rs >= (cols > 1 ? cols : 1) && rs <= INT32_MAX) {
        *tr = CblasNoTrans;
        *ld = (int)(rs > 0 ? rs : 1);
        return true;
    }
    if ((rs == 1 || rows == 1) && cs >= (rows > 1 ? rows : 1) && cs <= INT32_MAX) {
        *tr = CblasTrans;
        *ld = (int)(cs > 0 ? cs : 1);
        return true;
    }
    return false;
}
#endif

/* Rows of C per task: a multiple of tendo__sgemm's MR.  The row blocks
 * are the same whatever the thread count, and each is one single-threaded
 * GEMM call, so C never depends on how many threads ran. */
#define ROW_BLOCK (32 * TENDO__GEMM_MR)

#ifdef TENDO_HAVE_CBLAS
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int n);
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* tendo runs BLAS calls on its own threads, one row block each. */
static void blas_single_threaded(void) { openblas_set_num_threads(1); }
#endif
#endif

/* Rows [r0, r1) of C (dense f32, n columns) = A @ B; false on out of memory. */
static bool gemm_rows(const operand *A, const operand *B, const char *a, const char *b, int64_t n, float *c,
                      tendo__gemm_type type, size_t elsize, int64_t r0, int64_t r1, bool blas)
{
    int64_t k = A->cols;
    const char *ar = a + r0 * A->rs * (int64_t)elsize;

#ifdef TENDO_HAVE_CBLAS
    if (blas) {
        enum CBLAS_TRANSPOSE ta, tb;
        int lda, ldb;
        blas_layout(r1 - r0, k, A->rs, A->cs, &ta, &lda);
        blas_layout(k, n, B->rs, B->cs, &tb, &ldb);
        cblas_sgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0f, (const float *)(const void *)ar,
                    lda, (const float *)(const void *)b, ldb, 0.0f, c + r0 * n, (int)(n > 0 ? n : 1));
        return true;
    }
#else
    (void)blas;
#endif
    return tendo__sgemm(r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, type, 0.0f, c + r0 * n, n) == 0;
}

/* C (m x n, dense f32) = A @ B for one batch; false on out of memory. */
static bool gemm_one(const operand *A, const operand *B, const char *a, const char *b, int64_t n, float *c,
                     tendo__gemm_type type, size_t elsize)
{
    int64_t m = A->rows, k = A->cols, blocks = (m + ROW_BLOCK - 1) / ROW_BLOCK;
    int threads = tendo__threads();
    bool blas = false, failed = false;

#ifdef TENDO_HAVE_CBLAS
    {
        enum CBLAS_TRANSPOSE tr;
        int ld;
        blas = type == TENDO__GEMM_F32 && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && k > 0 &&
               blas_layout(m, k, A->rs, A->cs, &tr, &ld) && blas_layout(k, n, B->rs, B->cs, &tr, &ld);
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
        if (blas)
            pthread_once(&blas_once, blas_single_threaded);
#endif
    }
#endif
    if (blocks < 2 || threads < 2 || m * n * k < ((int64_t)1 << 18))
        threads = 1;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(dynamic) reduction(|| : failed))
    for (int64_t bi = 0; bi < blocks; bi++) {
        int64_t r0 = bi * ROW_BLOCK, r1 = r0 + ROW_BLOCK < m ? r0 + ROW_BLOCK : m;
        if (!gemm_rows(A, B, a, b, n, c, type, elsize, r0, r1, blas))
            failed = true;
    }
    return !failed;
}


#ifdef TENDO_HAVE_CUDA
/* ---- CUDA: cuBLAS -------------------------------------------------------------
 *
 * cuBLAS is column-major: the row-major C (m x n) = A @ B is, read as
 * column-major memory, C^T (n x m) = B^T A^T.  So B goes first and A second,
 * each with the transpose flag that makes its memory read as B^T and A^T:
 * a row-major operand (unit column stride) is already its own transpose in
 * column-major terms (CUBLAS_OP_N); a transposed view (unit row stride) is
 * passed with CUBLAS_OP_T instead of being copied.  Anything else is made
 * contiguous first.  Products accumulate in f32 (CUBLAS_COMPUTE_32F; TF32
 * tensor cores for f32 only when tendo_set_allow_tf32(true)). */

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

/* Element offsets of batch bi in each operand. */
static void batch_offsets(const operand *A, const operand *B, int nbatch, const int64_t *batch, int64_t bi,
                          int64_t *aoff, int64_t *boff)
{
    *aoff = *boff = 0;
    for (int d = nbatch - 1; d >= 0; d--) {
        int64_t i = bi % batch[d];
        bi /= batch[d];
        *aoff += i * A->batch_stride[d];
        *boff += i * B->batch_stride[d];
    }
}

/* out = a @ b on the GPU; a and b already planned into A and B. */
static bool cuda_gemm(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                      const operand *A, const operand *B, int nbatch, const int64_t *batch, int cuda_type)
{
    const tendo__tensor *ts[3] = {out, a, b};
    int64_t m = A->rows, n = B->cols, k = A->cols, nbatches = 1, lda, ldb, sa = 0, sb = 0;
    size_t elsize = tendo_dtype_size(out->dtype);
    cublasOperation_t ta, tb;
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    cublasHandle_t h;
    const float one = 1.0f, zero = 0.0f;
    bool uniform = true;
    const char *pa = tendo__tensor_data(a), *pb = tendo__tensor_data(b);
    char *pc = tendo__tensor_data(out);

    for (int d = 0; d < nbatch; d++)
        nbatches *= batch[d];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || nbatches > INT32_MAX) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "a %lldx%lldx%lld product (%lld batches) is too large for cuBLAS",
                    (long long)m, (long long)k, (long long)n, (long long)nbatches);
        return false;
    }
    cu_layout(m, k, A->rs, A->cs, &ta, &lda); /* both checked by the caller */
    cu_layout(k, n, B->rs, B->cs, &tb, &ldb);
    if (!tendo__cuda_begin(op, ts, 3) || !(h = tendo__cuda_cublas(op, out->storage->device.index)))
        return false;
    if (out->dtype == TENDO_F32 && tendo_get_allow_tf32())
        ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    /* one stride per operand between batches, or a call per batch */
    if (nbatches > 1) {
        int64_t a1, b1;
        batch_offsets(A, B, nbatch, batch, 1, &sa, &sb);
        for (int64_t bi = 2; bi < nbatches && uniform; bi++) {
            batch_offsets(A, B, nbatch, batch, bi, &a1, &b1);
            uniform = a1 == bi * sa && b1 == bi * sb;
        }
    }
    if (uniform)
        return tendo__cuda_end(ts, 3, tendo__cuda_blas_ok(op, (int)cublasGemmStridedBatchedEx(
                                   h, tb, ta, (int)n, (int)m, (int)k, &one, pb, (cudaDataType)cuda_type, (int)ldb, sb,
                                   pa, (cudaDataType)cuda_type, (int)lda, sa, &zero, pc, (cudaDataType)cuda_type,
                                   (int)n, m * n, (int)nbatches, ct, CUBLAS_GEMM_DEFAULT)));
    for (int64_t bi = 0; bi < nbatches; bi++) {
        int64_t ao, bo;
        batch_offsets(A, B, nbatch, batch, bi, &ao, &bo);
        if (!tendo__cuda_blas_ok(op, (int)cublasGemmEx(h, tb, ta, (int)n, (int)m, (int)k, &one, pb + bo * (int64_t)elsize,
                                          (cudaDataType)cuda_type, (int)ldb, pa + ao * (int64_t)elsize,
                                          (cudaDataType)cuda_type, (int)lda, &zero,
                                          pc + bi * m * n * (int64_t)elsize, (cudaDataType)cuda_type, (int)n, ct,
                                          CUBLAS_GEMM_DEFAULT)))
            return false;
    }
    return tendo__cuda_end(ts, 3, true);
}

/* numpy.matmul on a GPU: operands with no unit stride are made contiguous
 * first (once); an empty inner dim gives zeros. */
static tendo__tensor *cuda_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo_dtype dt,
                                  int cuda_type)
{
    operand A, B;
    int64_t batch[TENDO_MAX_DIMS], out_shape[TENDO_MAX_DIMS], ld;
    int nbatch, out_ndim;
    cublasOperation_t tr;
    tendo__tensor *ac = NULL, *bc = NULL, *out = NULL;
    bool ok = false;

    if (!plan(op, a, b, &A, &B, &nbatch, batch, &out_ndim, out_shape))
        return NULL;
    if (!cu_layout(A.rows, A.cols, A.rs, A.cs, &tr, &ld)) {
        if (!(ac = tendo__contiguous(op, a)))
            return NULL;
        a = ac;
    }
    if (!cu_layout(B.rows, B.cols, B.rs, B.cs, &tr, &ld)) {
        if (!(bc = tendo__contiguous(op, b)))
            goto out;
        b = bc;
    }
    if ((ac || bc) && !plan(op, a, b, &A, &B, &nbatch, batch, &out_ndim, out_shape))
        goto out;
    out = tendo__tensor_new(op, dt, out_ndim, out_shape, a->storage->device);
    if (!out)
        goto out;
    if (out->numel == 0) {
        ok = true;
    } else if (A.cols == 0) { /* a sum of nothing: all-zero bits are +0 in every float dtype */
        static const uint64_t zero_bits = 0;
        ok = tendo__cuda_fill(op, out, &zero_bits);
    } else {
        ok = cuda_gemm(op, a, b, out, &A, &B, nbatch, batch, cuda_type);
    }
out:
    if (!ok) {
        tendo__tensor_free(out);
        out = NULL;
    }
    tendo__tensor_free(ac);
    tendo__tensor_free(bc);
    return out;
}
#endif

tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo_dtype dt,
                             tendo__gemm_type gemm_type, tendo__narrow_fn narrow, int cuda_type)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__tensor *in[2] = {a, b};
    operand A, B;
    int64_t batch[TENDO_MAX_DIMS], out_shape[TENDO_MAX_DIMS], nbatches = 1, m, n;
    int nbatch, out_ndim;
    size_t elsize = tendo_dtype_size(dt);
    tendo__tensor *out;
    float *c = NULL;
    char *dst;

    if (!tendo__check_inputs(op, 2, in))
        return NULL;
#ifdef TENDO_HAVE_CUDA
    if (a->storage->device.type == TENDO_CUDA) {
        out = cuda_matmul(op, a, b, dt, cuda_type);
        return out ? tendo__op_end(s, op, out, a, b) : NULL;
    }
#endif
    (void)cuda_type;
    if (!plan(op, a, b, &A, &B, &nbatch, batch, &out_ndim, out_shape))
        return NULL;
    out = tendo__tensor_new(op, dt, out_ndim, out_shape, a->storage->device);
    if (!out)
        return NULL;
    m = A.rows;
    n = B.cols;
    for (int d = 0; d < nbatch; d++)
        nbatches *= batch[d];
    if (narrow && m * n > 0 && !(c = malloc((size_t)(m * n) * sizeof *c))) {
        tendo__tensor_free(out);
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a %lldx%lld float result", (long long)m, (long long)n);
        return NULL;
    }
    dst = tendo__tensor_data(out);
    for (int64_t bi = 0; bi < nbatches && m * n > 0; bi++) {
        int64_t rest = bi, aoff = 0, boff = 0;
        float *cb = narrow ? c : (float *)(void *)(dst + bi * m * n * (int64_t)elsize);

        for (int d = nbatch - 1; d >= 0; d--) {
            int64_t i = rest % batch[d];
            rest /= batch[d];
            aoff += i * A.batch_stride[d];
            boff += i * B.batch_stride[d];
        }
        if (!gemm_one(&A, &B, (const char *)tendo__tensor_data(a) + aoff * (int64_t)elsize,
                      (const char *)tendo__tensor_data(b) + boff * (int64_t)elsize, n, cb, gemm_type, elsize)) {
            free(c);
            tendo__tensor_free(out);
            tendo__fail(TENDO_ERR_OOM, op, "out of memory for GEMM panels");
            return NULL;
        }
        if (narrow)
            narrow(c, dst + bi * m * n * (int64_t)elsize, m * n);
    }
    free(c);
    return tendo__op_end(s, op, out, a, b);
}
