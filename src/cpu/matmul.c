/* src/cpu/matmul.c - numpy.matmul on the CPU (the device table's matmul):
 * row blocks of each batch on the threads, each through CBLAS (f32, when
 * built with it) or tendo__sgemm, which reads any float storage dtype
 * through the dtype table and accumulates in float.  f64 (computing in
 * double) goes through cblas_dgemm, or tendo__dgemm where CBLAS is missing
 * or cannot take the strides, and accumulates in double. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/iter.h"
#include "core/matmul.h"
#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"

#ifdef TENDO_HAVE_CBLAS
#include <cblas.h>
#endif

typedef tendo__mm_operand operand;

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

/* Rows of C are cut into one block per thread, each block a multiple of
 * tendo__sgemm's MR rows and one single-threaded GEMM call (so B is packed
 * once per thread, not once per small block).  Each element of C gets the
 * same bits however the rows are cut at multiples of MR: tendo__sgemm by
 * design (gemm.h), and OpenBLAS because its k blocking depends on k alone.
 * So C never depends on how many threads ran; t-nn checks 1, 2 and 3
 * threads bit for bit.  Below MIN_ROWS rows a block is not worth a thread. */
#define MIN_ROWS (8 * TENDO__GEMM_MR)

#ifdef TENDO_HAVE_CBLAS
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int n);
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* tendo runs BLAS calls on its own threads, one row block each. */
static void blas_single_threaded(void) { openblas_set_num_threads(1); }
#endif
#endif

/* Rows [r0, r1) of C (dense, n columns: f32, or f64 for a dtype computing
 * in double) = A @ B; false on out of memory. */
static bool gemm_rows(const operand *A, const operand *B, const char *a, const char *b, int64_t n, void *c,
                      const tendo__traits *t, int64_t r0, int64_t r1, bool blas)
{
    int64_t k = A->cols;
    const char *ar = a + r0 * A->rs * (int64_t)t->size;
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE;

#ifdef TENDO_HAVE_CBLAS
    if (blas) {
        enum CBLAS_TRANSPOSE ta, tb;
        int lda, ldb;
        blas_layout(r1 - r0, k, A->rs, A->cs, &ta, &lda);
        blas_layout(k, n, B->rs, B->cs, &tb, &ldb);
        if (dbl)
            cblas_dgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0,
                        (const double *)(const void *)ar, lda, (const double *)(const void *)b, ldb, 0.0,
                        (double *)c + r0 * n, (int)(n > 0 ? n : 1));
        else
            cblas_sgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0f,
                        (const float *)(const void *)ar, lda, (const float *)(const void *)b, ldb, 0.0f,
                        (float *)c + r0 * n, (int)(n > 0 ? n : 1));
        return true;
    }
#else
    (void)blas;
#endif
    if (dbl)
        return tendo__dgemm(r1 - r0, n, k, 1.0, (const double *)(const void *)ar, A->rs, A->cs,
                            (const double *)(const void *)b, B->rs, B->cs, 0.0, (double *)c + r0 * n, n) == 0;
    return tendo__sgemm(r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, t, 0.0f, (float *)c + r0 * n,
                        n) == 0;
}

/* C (m x n, dense f32 or f64, as gemm_rows) = A @ B for one batch; false
 * on out of memory. */
static bool gemm_one(const operand *A, const operand *B, const char *a, const char *b, int64_t n, void *c,
                     const tendo__traits *t)
{
    int64_t m = A->rows, k = A->cols, rows, blocks;
    int threads = tendo__threads();
    bool blas = false, failed = false;

#ifdef TENDO_HAVE_CBLAS
    {
        enum CBLAS_TRANSPOSE tr;
        int ld;
        blas = t->own_compute && (t->compute == TENDO__COMPUTE_FLOAT || t->compute == TENDO__COMPUTE_DOUBLE) && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && k > 0 &&
               blas_layout(m, k, A->rs, A->cs, &tr, &ld) && blas_layout(k, n, B->rs, B->cs, &tr, &ld);
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
        if (blas)
            pthread_once(&blas_once, blas_single_threaded);
#endif
    }
#endif
    if (m * n * k < ((int64_t)1 << 18) || m < 2 * MIN_ROWS)
        threads = 1;
    else if (threads > m / MIN_ROWS)
        threads = (int)(m / MIN_ROWS);
    rows = (m + threads - 1) / threads;
    rows = (rows + TENDO__GEMM_MR - 1) / TENDO__GEMM_MR * TENDO__GEMM_MR;
    blocks = (m + rows - 1) / rows;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(static) reduction(|| : failed))
    for (int64_t bi = 0; bi < blocks; bi++) {
        int64_t r0 = bi * rows, r1 = r0 + rows < m ? r0 + rows : m;
        if (!gemm_rows(A, B, a, b, n, c, t, r0, r1, blas))
            failed = true;
    }
    return !failed;
}



tendo__tensor *tendo__cpu_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    const tendo__traits *t = tendo__traits_of(a->dtype);
    tendo__mm_plan p;
    int64_t m, n, csize = (int64_t)t->size;
    tendo__tensor *out;
    void *c = NULL;
    size_t rsize = t->compute == TENDO__COMPUTE_DOUBLE ? sizeof(double) : sizeof(float);
    char *dst;

    if (t->compute != TENDO__COMPUTE_FLOAT && !(t->compute == TENDO__COMPUTE_DOUBLE && t->own_compute)) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CPU matmul for %s", t->name);
        return NULL;
    }
    if (!tendo__mm_plan_make(op, a, b, &p))
        return NULL;
    out = tendo__tensor_new(op, a->dtype, p.out_ndim, p.out_shape, a->storage->device);
    if (!out)
        return NULL;
    m = p.A.rows;
    n = p.B.cols;
    /* a dtype that is not float itself gets each batch's float result here */
    if (!t->own_compute && m * n > 0 && !(c = tendo__malloc((size_t)(m * n) * rsize))) {
        tendo__tensor_free(out);
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a %lldx%lld float result", (long long)m, (long long)n);
        return NULL;
    }
    dst = tendo__tensor_data(out);
    for (int64_t bi = 0; bi < p.nbatches && m * n > 0; bi++) {
        int64_t aoff, boff;
        void *cb = c ? c : (void *)(dst + bi * m * n * csize);

        tendo__mm_batch_offsets(&p, bi, &aoff, &boff);
        if (!gemm_one(&p.A, &p.B, (const char *)tendo__tensor_data(a) + aoff * csize,
                      (const char *)tendo__tensor_data(b) + boff * csize, n, cb, t)) {
            free(c);
            tendo__tensor_free(out);
            tendo__fail(TENDO_ERR_OOM, op, "out of memory for GEMM panels");
            return NULL;
        }
        if (c)
            t->narrow(c, dst + bi * m * n * csize, 1, m * n);
    }
    free(c);
    return out;
}
