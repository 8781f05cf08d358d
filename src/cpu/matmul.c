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
#include "core/pool.h"
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

/* C's rows are cut into blocks of ROW_BLOCK rows, each one single-threaded
 * GEMM call, and the tasks (batch, row block) are spread over the threads,
 * so many small matrices (attention's batched products) use every thread
 * as a big one does.  The blocks depend on the shapes alone, never on the
 * thread count: OpenBLAS gives an element different bits when its rows are
 * cut differently (its kernels for the last rows of a call sum in another
 * order), so C never depends on how many threads ran; t-nn checks 1, 2 and
 * 3 threads bit for bit.  256 rows split the common power-of-two sizes
 * evenly over 2 or 4 threads, and pack B a quarter as often as 64 would. */
#define ROW_BLOCK 256

#ifdef TENDO_HAVE_CBLAS
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int n);
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* tendo runs BLAS calls on its own threads, one row block each. */
static void blas_single_threaded(void) { openblas_set_num_threads(1); }
#endif
#endif

void tendo__blas_one_thread(void)
{
#if defined(TENDO_HAVE_CBLAS) && defined(HAVE_OPENBLAS_SET_NUM_THREADS)
    pthread_once(&blas_once, blas_single_threaded);
#endif
}

/* Rows [r0, r1) of C (dense, n columns: f32, or f64 for a dtype computing
 * in double; crow points at row r0) = A @ B; false on out of memory. */
static bool gemm_rows(const operand *A, const operand *B, const char *a, const char *b, int64_t n, void *crow,
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
                        (double *)crow, (int)(n > 0 ? n : 1));
        else
            cblas_sgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0f,
                        (const float *)(const void *)ar, lda, (const float *)(const void *)b, ldb, 0.0f,
                        (float *)crow, (int)(n > 0 ? n : 1));
        return true;
    }
#else
    (void)blas;
#endif
    if (dbl)
        return tendo__dgemm(r1 - r0, n, k, 1.0, (const double *)(const void *)ar, A->rs, A->cs,
                            (const double *)(const void *)b, B->rs, B->cs, 0.0, (double *)crow, n) == 0;
#ifdef TENDO_HAVE_BF16
    if (t == tendo__traits_of(TENDO_BF16)) { /* vdpbf16ps where the CPU has it */
        int done = tendo__gemm_bf16(r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, 0.0f, (float *)crow, n);
        if (done <= 0)
            return done == 0;
    }
#endif
    return tendo__sgemm(r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, t, 0.0f, (float *)crow, n) == 0;
}

/* Whether CBLAS computes A @ B for dtype t (its own float or double, strides
 * CBLAS can take); false without CBLAS. */
static bool use_blas(const operand *A, const operand *B, const tendo__traits *t)
{
#ifdef TENDO_HAVE_CBLAS
    enum CBLAS_TRANSPOSE tr;
    int ld;
    int64_t m = A->rows, k = A->cols, n = B->cols;
    bool blas = t->own_compute && (t->compute == TENDO__COMPUTE_FLOAT || t->compute == TENDO__COMPUTE_DOUBLE) &&
                m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && k > 0 &&
                blas_layout(m, k, A->rs, A->cs, &tr, &ld) && blas_layout(k, n, B->rs, B->cs, &tr, &ld);
    if (blas)
        tendo__blas_one_thread();
    return blas;
#else
    (void)A, (void)B, (void)t;
    return false;
#endif
}

/* One task: rows [r0, r1) of batch bi of C (p's shapes, out's storage).  A
 * dtype that is not its own compute type gets the rows in a float scratch
 * from the CPU's pool, then narrowed.  False on out of memory. */
static bool gemm_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                      const tendo__traits *t, int64_t bi, int64_t r0, int64_t r1, bool blas)
{
    int64_t aoff, boff, m = p->A.rows, n = p->B.cols, csize = (int64_t)t->size;
    size_t rsize = t->compute == TENDO__COMPUTE_DOUBLE ? sizeof(double) : sizeof(float);
    char *dst = (char *)tendo__tensor_data(out) + (bi * m + r0) * n * csize;
    tendo__pool *pool = t->own_compute ? NULL : tendo__pool_of(tendo_cpu());
    tendo__pool_block *blk = NULL;
    void *c = dst;
    bool done;

    if (!t->own_compute) { /* from the pool: a fresh mapping per call would fault in every page */
        blk = pool ? tendo__pool_alloc(pool, "matmul", (size_t)((r1 - r0) * n) * rsize, 0) : NULL;
        if (!blk)
            return false;
        c = tendo__pool_block_ptr(blk);
    }
    tendo__mm_batch_offsets(p, bi, &aoff, &boff);
    done = gemm_rows(&p->A, &p->B, (const char *)tendo__tensor_data(a) + aoff * csize,
                     (const char *)tendo__tensor_data(b) + boff * csize, n, c, t, r0, r1, blas);
    if (blk) {
        if (done)
            t->narrow(c, dst, 1, (r1 - r0) * n);
        tendo__pool_free(pool, blk);
    }
    return done;
}

/* When B is the same matrix for every batch (a Linear layer's weight) and
 * A's batches follow one another row after row, the batches are one tall
 * product: folds them into A's rows (C is dense, so its rows follow too).
 * One GEMM packs B once instead of once per batch. */
static void fold_batches(tendo__mm_plan *p)
{
    int64_t next = p->A.rows * p->A.rs;

    if (p->nbatches < 2)
        return;
    for (int d = p->nbatch - 1; d >= 0; d--) {
        if (p->batch[d] == 1)
            continue;
        if (p->B.batch_stride[d] != 0 || p->A.batch_stride[d] != next)
            return;
        next *= p->batch[d];
    }
    p->A.rows *= p->nbatches;
    p->nbatches = 1;
    for (int d = 0; d < p->nbatch; d++)
        p->A.batch_stride[d] = p->B.batch_stride[d] = 0;
}

/* One task of a product: rows [r0, r1) of batch bi of C; false on out of
 * memory.  ctx: what the kind of product needs (its dtype's traits...). */
typedef bool (*mm_task)(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b,
                        tendo__tensor *out, int64_t bi, int64_t r0, int64_t r1, const void *ctx);

/* a @ b into a new tensor of dtype out_dt: the shapes planned, the batches
 * folded where they can be, then (batch, row block) tasks on the threads. */
static tendo__tensor *run_tasks(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo_dtype out_dt,
                                bool (*prepare)(tendo__mm_plan *p, void *ctx), mm_task task, void *ctx)
{
    tendo__mm_plan p;
    int64_t m, n, k, blocks, tasks;
    tendo__tensor *out;
    int threads = tendo__threads();
    bool failed = false;

    if (!tendo__mm_plan_make(op, a, b, &p))
        return NULL;
    out = tendo__tensor_new(op, out_dt, p.out_ndim, p.out_shape, a->storage->device);
    if (!out)
        return NULL;
    fold_batches(&p);
    m = p.A.rows;
    n = p.B.cols;
    k = p.A.cols;
    if (m * n == 0 || p.nbatches == 0)
        return out;
    if (prepare)
        prepare(&p, ctx);
    if (p.nbatches * m * n * (k > 0 ? k : 1) < ((int64_t)1 << 18))
        threads = 1;
    blocks = (m + ROW_BLOCK - 1) / ROW_BLOCK;
    tasks = p.nbatches * blocks;
    if (threads > tasks)
        threads = (int)tasks;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(dynamic) reduction(|| : failed))
    for (int64_t i = 0; i < tasks; i++) {
        int64_t r0 = (i % blocks) * ROW_BLOCK, r1 = r0 + ROW_BLOCK < m ? r0 + ROW_BLOCK : m;
        if (!task(&p, a, b, out, i / blocks, r0, r1, ctx))
            failed = true;
    }
    if (failed) {
        tendo__tensor_free(out);
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for GEMM panels");
        return NULL;
    }
    return out;
}

/* A float product's task context: its dtype, and whether CBLAS runs it. */
typedef struct {
    const tendo__traits *t;
    bool blas;
} float_ctx;

static bool float_prepare(tendo__mm_plan *p, void *ctx)
{
    float_ctx *c = ctx;

    c->blas = use_blas(&p->A, &p->B, c->t);
    return true;
}

static bool float_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                       int64_t bi, int64_t r0, int64_t r1, const void *ctx)
{
    const float_ctx *c = ctx;

    return gemm_task(p, a, b, out, c->t, bi, r0, r1, c->blas);
}

tendo__tensor *tendo__cpu_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    float_ctx c = {tendo__traits_of(a->dtype), false};

    if (c.t->compute != TENDO__COMPUTE_FLOAT && !(c.t->compute == TENDO__COMPUTE_DOUBLE && c.t->own_compute)) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CPU matmul for %s", c.t->name);
        return NULL;
    }
    return run_tasks(op, a, b, a->dtype, float_prepare, float_task, &c);
}

#if defined(TENDO_HAVE_I8) && defined(TENDO_HAVE_I32) /* tensor_i8_matmul_i32 */
/* Rows [r0, r1) of batch bi of the i32 C = A @ B for i8 A and B. */
static bool i8_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                    int64_t bi, int64_t r0, int64_t r1, const void *ctx)
{
    int64_t aoff, boff, m = p->A.rows, n = p->B.cols;
    int32_t *c = (int32_t *)tendo__tensor_data(out) + (bi * m + r0) * n;

    (void)ctx;
    tendo__mm_batch_offsets(p, bi, &aoff, &boff);
    return tendo__gemm_i8(r1 - r0, n, p->A.cols, (const int8_t *)tendo__tensor_data(a) + aoff + r0 * p->A.rs,
                          p->A.rs, p->A.cs, (const int8_t *)tendo__tensor_data(b) + boff, p->B.rs, p->B.cs, c,
                          n) == 0;
}

tendo__tensor *tendo__cpu_matmul_i32(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    return run_tasks(op, a, b, TENDO_I32, NULL, i8_task, NULL);
}
#endif
