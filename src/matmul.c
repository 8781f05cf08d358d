/* src/matmul.c - numpy.matmul: shapes, batches, and the choice of GEMM. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "events.h"
#include "iter.h"
#include "matmul.h"

#ifdef TENDO_HAVE_CBLAS
#include <cblas.h>
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

tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo_dtype dt,
                             tendo__gemm_type gemm_type, tendo__narrow_fn narrow)
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

    if (!tendo__check_inputs(op, 2, in) || !plan(op, a, b, &A, &B, &nbatch, batch, &out_ndim, out_shape))
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
