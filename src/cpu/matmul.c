/* src/cpu/matmul.c - numpy.matmul on the CPU (the device table's matmul):
 * tiles of each batch on the threads, each through
 *   - the AVX-512 packed kernels (src/cpu/gemm_avx512.c) where the CPU has
 *     them: bf16 (vdpbf16ps), f16 and f32 (FMA; f32 only for products big
 *     enough to pay for packing, see PGEMM_MIN), B packed once and shared,
 *     or kept packed across products by tensor_<dt>_prepack (prepack.h);
 *   - else CBLAS (f32, when built with it), or tendo__sgemm, which reads
 *     any float storage dtype through the dtype table and accumulates in
 *     float;
 *   - f64 (computing in double): cblas_dgemm, or tendo__dgemm where CBLAS
 *     is missing or cannot take the strides, accumulating in double;
 * and int8 x int8 -> int32 through tendo__gemm_i8 (tensor_matmul_i32). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core/iter.h"
#include "core/matmul.h"
#include "core/pool.h"
#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/prepack.h"
#include "cpu/skinny.h"

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

/* C is cut into tiles, each one single-threaded GEMM call, and the tasks
 * (batch, tile) are spread over the threads, so many small matrices
 * (attention's batched products) use every thread as a big one does.  The
 * tiles depend on the shapes alone, never on the thread count: OpenBLAS
 * gives an element different bits when its rows are cut differently (its
 * kernels for the last rows of a call sum in another order), so C never
 * depends on how many threads ran; t-nn checks 1, 2 and 3 threads bit for
 * bit.  Rows go in about ROW_BLOCK at a time, in an even number of
 * blocks where there is more than one, as equal as whole micro-kernel
 * tiles allow (ROW_ALIGN rows: 2048 rows are 8 blocks of 252 to 264, not 7
 * of 288 and one of 32, which would leave one of two threads idle an
 * eighth of the time); a product of one row block whose B is wide is cut
 * into column blocks of about COL_BLOCK instead (a decoder's [1, d] @
 * [d, 4d]), starting at whole B slivers (COL_ALIGN columns).  The AVX-512
 * kernels give the same bits on any tiles, so for them alone the columns
 * may also be split by thread count (float_prepare): where there are fewer
 * tiles than threads, and to even out uneven row blocks. */
#define ROW_BLOCK 256
#define ROW_ALIGN 12
#define COL_BLOCK 512
#define COL_ALIGN 32

/* How a length is cut: count blocks of about target, an even count where
 * there is more than one, block b starting at unit b*units/count of align
 * elements each (see cut_start). */
typedef struct {
    int64_t len, count, units, align;
} cuts;

static cuts cut(int64_t len, int64_t target, int64_t align)
{
    cuts c = {len, (len + target - 1) / target, (len + align - 1) / align, align};

    if (c.count > 1 && c.count % 2)
        c.count++;
    if (c.count > c.units)
        c.count = c.units;
    if (c.count < 1)
        c.count = 1;
    return c;
}

/* Where block b of c starts (b == c->count: the end). */
static int64_t cut_start(const cuts *c, int64_t b)
{
    int64_t at = b * c->units / c->count * c->align;

    return at < c->len ? at : c->len;
}

/* Whether c's blocks hold different numbers of align-sized units (whole
 * micro-kernel tiles, counting a partial one as whole). */
static bool cut_uneven(const cuts *c)
{
    for (int64_t b = 1; b < c->count; b++)
        if ((cut_start(c, b + 1) - cut_start(c, b) + c->align - 1) / c->align !=
            (cut_start(c, 1) + c->align - 1) / c->align)
            return true;
    return false;
}

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

/* A float product's context: its dtype, how its tiles are multiplied
 * (CBLAS, one of the AVX-512 kernels, or tendo__sgemm/dgemm), and B packed
 * once for all row blocks for the AVX-512 kernels (NULL where each task
 * packs its own): into scratch, or panels kept with B's storage. */
typedef struct {
    const tendo__traits *t;
    bool skinny; /* src/cpu/skinny.c: a few rows, B streamed unpacked */
    bool blas;
    tendo__pgemm_kind pkind; /* TENDO__PGEMM_NONE: no AVX-512 kernel */
    const char *b;     /* B's first element */
    const operand *B;  /* its shape and strides */
    void *bpacked;
    tendo__pool_block *bblk;
    tendo__prepacked *kept; /* the kept panels bpacked points into (held) */
    tendo__storage *keep_in; /* where kept goes once packed (stale panels replaced), else NULL */
} float_ctx;

/* Rows [r0, r1) of C (n columns, row stride ldc: f32, or f64 for a dtype
 * computing in double; crow points at row r0) = A @ B, b pointing at B's
 * first column of them; false on out of memory. */
static bool gemm_rows(const operand *A, const operand *B, const char *a, const char *b, int64_t n, int64_t ldc,
                      void *crow, const float_ctx *ctx, int64_t r0, int64_t r1, int64_t c0)
{
    const tendo__traits *t = ctx->t;
    int64_t k = A->cols;
    const char *ar = a + r0 * A->rs * (int64_t)t->size;
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE;

    if (ctx->skinny)
        return tendo__skinny(t, r1 - r0, n, k, ar, A->rs, A->cs, b, B->rs, B->cs, crow, ldc) == 0;
#ifdef TENDO_HAVE_CBLAS
    if (ctx->blas) {
        enum CBLAS_TRANSPOSE ta, tb;
        int lda, ldb;
        blas_layout(r1 - r0, k, A->rs, A->cs, &ta, &lda);
        blas_layout(k, n, B->rs, B->cs, &tb, &ldb);
        if (dbl)
            cblas_dgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0,
                        (const double *)(const void *)ar, lda, (const double *)(const void *)b, ldb, 0.0,
                        (double *)crow, (int)(ldc > 0 ? ldc : 1));
        else
            cblas_sgemm(CblasRowMajor, ta, tb, (int)(r1 - r0), (int)n, (int)k, 1.0f,
                        (const float *)(const void *)ar, lda, (const float *)(const void *)b, ldb, 0.0f,
                        (float *)crow, (int)(ldc > 0 ? ldc : 1));
        return true;
    }
#endif
    if (dbl)
        return tendo__dgemm(r1 - r0, n, k, 1.0, (const double *)(const void *)ar, A->rs, A->cs,
                            (const double *)(const void *)b, B->rs, B->cs, 0.0, (double *)crow, ldc) == 0;
    if (ctx->bpacked) /* B packed once for every tile (see float_prepare); c0 is a whole sliver */
        return tendo__pgemm_packed(ctx->pkind, r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, ctx->bpacked, B->cols,
                                   c0 / TENDO__PGEMM_NR, 0.0f, (float *)crow, ldc) == 0;
    if (ctx->pkind != TENDO__PGEMM_NONE) {
        int done = tendo__pgemm(ctx->pkind, r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, 0.0f,
                                (float *)crow, ldc);
        if (done <= 0)
            return done == 0;
    }
    return tendo__sgemm(r1 - r0, n, k, 1.0f, ar, A->rs, A->cs, b, B->rs, B->cs, t, 0.0f, (float *)crow, ldc) == 0;
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

/* A tile of C: rows [r0, r1), columns [c0, c1). */
typedef struct {
    int64_t r0, r1, c0, c1;
} tile;

/* One task: tile x of batch bi of C (p's shapes, out's storage).  A dtype
 * that is not its own compute type gets the tile in a float scratch from
 * the CPU's pool, then narrowed row by row.  False on out of memory. */
static bool gemm_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                      const float_ctx *ctx, int64_t bi, tile x)
{
    const tendo__traits *t = ctx->t;
    int64_t aoff, boff, m = p->A.rows, n = p->B.cols, csize = (int64_t)t->size, nc = x.c1 - x.c0;
    size_t rsize = t->compute == TENDO__COMPUTE_DOUBLE ? sizeof(double) : sizeof(float);
    char *dst = (char *)tendo__tensor_data(out) + ((bi * m + x.r0) * n + x.c0) * csize;
    tendo__pool *pool = t->own_compute ? NULL : tendo__pool_of(tendo_cpu());
    tendo__pool_block *blk = NULL;
    void *c = dst;
    bool done;

    if (!t->own_compute) { /* from the pool: a fresh mapping per call would fault in every page */
        blk = pool ? tendo__pool_alloc(pool, "matmul", (size_t)((x.r1 - x.r0) * nc) * rsize, 0) : NULL;
        if (!blk)
            return false;
        c = tendo__pool_block_ptr(blk);
    }
    tendo__mm_batch_offsets(p, bi, &aoff, &boff);
    done = gemm_rows(&p->A, &p->B, (const char *)tendo__tensor_data(a) + aoff * csize,
                     (const char *)tendo__tensor_data(b) + (boff + x.c0 * p->B.cs) * csize, nc, blk ? nc : n, c, ctx,
                     x.r0, x.r1, x.c0);
    if (blk) {
        for (int64_t r = 0; done && r < x.r1 - x.r0; r++)
            t->narrow((const char *)c + r * nc * (int64_t)rsize, dst + r * n * csize, 1, nc);
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

/* One task of a product: tile x of batch bi of C; false on out of memory.
 * ctx: what the kind of product needs (its dtype's traits...). */
typedef bool (*mm_task)(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b,
                        tendo__tensor *out, int64_t bi, tile x, const void *ctx);

/* What a kind of product may do around its tasks (every hook optional).
 * prepare: called once the batches are folded, with the row blocks, the
 * size of column blocks planned (which it may change, for kernels whose
 * results do not depend on the tiles) and the threads; returns how many parts of
 * shared work (a B packed once for all tiles) the threads do before the
 * tasks start, or -1 on out of memory.  share: does part i of them.
 * finish: releases what prepare took, whatever happened. */
typedef struct {
    int64_t (*prepare)(const tendo__mm_plan *p, const tendo__tensor *b, const cuts *rows, int64_t *col_block,
                       int threads, void *ctx);
    void (*share)(int64_t i, void *ctx);
    void (*finish)(void *ctx);
} mm_hooks;

/* a @ b into the dense out (the result's shape): the shapes planned, the
 * batches folded where they can be, then the shared work and the (batch,
 * tile) tasks on the threads.  False with the error set. */
static bool run_tasks(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                      const mm_hooks *hooks, mm_task task, void *ctx)
{
    tendo__mm_plan p;
    int64_t m, n, k, tiles, tasks, parts = 0, col_block;
    cuts rows, cols;
    int threads = tendo__threads();
    bool failed = false;

    if (!tendo__mm_plan_make(op, a, b, &p))
        return false;
    fold_batches(&p);
    m = p.A.rows;
    n = p.B.cols;
    k = p.A.cols;
    if (m * n == 0 || p.nbatches == 0)
        return true;
    if (p.nbatches * m * n * (k > 0 ? k : 1) < ((int64_t)1 << 18))
        threads = 1;
    rows = cut(m, ROW_BLOCK, ROW_ALIGN);
    col_block = rows.count == 1 ? COL_BLOCK : n;
    if (hooks && hooks->prepare && (parts = hooks->prepare(&p, b, &rows, &col_block, threads, ctx)) < 0)
        failed = true;
    else {
        cols = cut(n, col_block, COL_ALIGN);
        tiles = rows.count * cols.count;
        tasks = p.nbatches * tiles;
        if (threads > tasks)
            threads = (int)tasks;
        (void)threads;
TENDO__OMP(omp parallel num_threads(threads) reduction(|| : failed))
        {
TENDO__OMP(omp for schedule(static))
            for (int64_t i = 0; i < parts; i++)
                hooks->share(i, ctx);
TENDO__OMP(omp for schedule(dynamic))
            for (int64_t i = 0; i < tasks; i++) {
                int64_t r = (i % tiles) / cols.count, c = i % cols.count;
                tile x = {cut_start(&rows, r), cut_start(&rows, r + 1), cut_start(&cols, c), cut_start(&cols, c + 1)};
                if (!task(&p, a, b, out, i / tiles, x, ctx))
                    failed = true;
            }
        }
    }
    if (hooks && hooks->finish)
        hooks->finish(ctx);
    if (failed)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for GEMM panels");
    return !failed;
}

/* Multiply-adds below which an f32 product (per batch) goes to CBLAS
 * rather than the AVX-512 kernel: packing both operands does not pay for
 * itself there. */
#define PGEMM_MIN ((int64_t)1 << 24)
/* Nor does it with fewer rows than this (B of other strides than the
 * skinny path takes: products of up to 2 rows by a [k, n] weight, 4 where
 * the AVX2 set multiplies, more by a transposed one, are its; see
 * TENDO__SKINNY_AXPY_PGEMM_ROWS), so that
 * the products the skinny path leaves go to the packed kernel (Zen 4,
 * 4096 x 4096, [k, n], one thread: 8 rows 6.8-7.4 ms against OpenBLAS's
 * 15.7-19.5 as first measured, 3.5-3.6 since the kernel fetches the next
 * sliver; 3 rows 3.4-3.5 against 10.0-10.1). */
#define PGEMM_MIN_ROWS (TENDO__SKINNY_AXPY_PGEMM_ROWS + 1)

/* Rows of A from which a weight's kept panels (tensor_<dt>_prepack) are
 * multiplied from rather than the weight streamed by the skinny kernels:
 * there the products are bound by arithmetic, which the packed kernels'
 * register tiles do better.  Zen 4, 4096 x 4096 weights, ms with panels
 * against skinny, one thread: f32 [n, k]^T 8 rows 4.8 against 5.6, 32
 * rows 12.3 against 13.6; bf16 [n, k]^T 8 rows 2.5 against 3.0-3.2, 32
 * rows 6.0 against 7.4-7.7; [k, n] 8 rows f32 4.9 against 8.1, f16 4.8
 * against 6.0-7.1, bf16 2.4 against 5.9-7.8; 4 rows about even.  Not f16
 * by a transposed view: its panels hold f32, twice the weight's bytes, and
 * the skinny dot stays faster up to its 64 rows (8 rows 3.5-3.7 against
 * 4.7-5.0, 64 rows 20.7-20.9 against 22.8). */
#define KEPT_MIN_ROWS 8

/* Where B's storage keeps panels for it (tensor_<dt>_prepack) and B is
 * one matrix for every batch: fresh panels are multiplied from as they
 * are; stale ones (the storage written since) are packed again into new
 * panels, which replace them when the product is done, unless fresh_only.
 * Returns the slivers to pack (0: nothing, or nothing kept), -1 on out of
 * memory. */
static int64_t use_kept(const tendo__mm_plan *p, const tendo__tensor *b, float_ctx *c, bool fresh_only)
{
    tendo__storage *s = b->storage;
    uint64_t version = atomic_load_explicit(&s->version, memory_order_relaxed);
    tendo__pack_key key;

    for (int d = 0; d < p->nbatch; d++)
        if (p->B.batch_stride[d] != 0)
            return 0;
    c->b = (const char *)tendo__tensor_data(b);
    c->B = &p->B;
    key = (tendo__pack_key){c->pkind, c->b - (const char *)s->data, p->B.rows, p->B.cols, p->B.rs, p->B.cs};
    switch (tendo__prepacked_find(s, &key, &c->kept)) {
    case TENDO__PACK_FRESH:
        c->bpacked = tendo__prepacked_panels(c->kept);
        return 0;
    case TENDO__PACK_STALE:
        if (fresh_only)
            return 0;
        if (!(c->kept = tendo__prepacked_new("matmul", &key, version)))
            return -1;
        c->bpacked = tendo__prepacked_panels(c->kept);
        c->keep_in = s;
        return (p->B.cols + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR;
    default:
        return 0;
    }
}

/* Decided once the batches are folded (the folded A is what CBLAS takes).
 * Where an AVX-512 kernel runs, a B that every task reads whole (one
 * batch, several row blocks) is packed once, one sliver per part, instead
 * of once per row block, unless its storage keeps it packed (use_kept). */
static int64_t float_prepare(const tendo__mm_plan *p, const tendo__tensor *b, const cuts *rows, int64_t *col_block,
                             int threads, void *ctx)
{
    float_ctx *c = ctx;
    int64_t boff, aoff, kept = 0;

    /* A few rows: the weight streamed once, unpacked (src/cpu/skinny.c);
     * else an AVX-512 kernel, CBLAS or tendo__sgemm. */
    c->skinny = tendo__skinny_takes(c->t, p->A.rows, p->A.cols, p->B.cols, p->B.rs, p->B.cs);
    c->pkind = tendo__pgemm_kind_of(c->t);
    if (c->skinny) {
        /* fresh kept panels from KEPT_MIN_ROWS rows on; stale ones are left
         * for a product past the skinny limits to pack again */
        if (p->A.rows >= KEPT_MIN_ROWS && c->pkind != TENDO__PGEMM_NONE && p->A.cols > 0 &&
            !((c->pkind == TENDO__PGEMM_F16 || c->pkind == TENDO__PGEMM_BF16W) && p->B.rs == 1))
            (void)use_kept(p, b, c, true);
        c->skinny = !c->bpacked;
        if (c->skinny)
            c->pkind = TENDO__PGEMM_NONE;
    } else if (c->pkind != TENDO__PGEMM_NONE && p->A.cols > 0 && (kept = use_kept(p, b, c, false)) < 0)
        return -1;
    /* kept panels cost nothing to pack: the AVX-512 kernel at any size */
    c->blas = !c->skinny && !c->bpacked && use_blas(&p->A, &p->B, c->t);
    /* small f32 products (attention's per-head ones, a decoder's rows):
     * OpenBLAS; and where the AVX2 set would multiply, products of several
     * row blocks, which OpenBLAS's Haswell kernels do 0-9 % faster (Zen 4
     * at TENDO_CPU=avx2 and OPENBLAS_CORETYPE=Haswell, one thread, ms:
     * 1024^3 20.0-20.5 against 19.9-20.1, 2048^3 167-172 against 158; one
     * row block, 256 x 4096 x 4096, 83.8-85.8 against 81.5-86.0, and the
     * AVX2 set faster below that: 64 rows 21.1-21.5 against 23.2) */
    if (c->pkind == TENDO__PGEMM_F32 && c->blas &&
        (p->A.rows * p->B.cols * p->A.cols < PGEMM_MIN || p->A.rows < PGEMM_MIN_ROWS ||
         (rows->count > 1 && tendo__pgemm_on_avx2(c->pkind))))
        c->pkind = TENDO__PGEMM_NONE;
    /* bf16 widened (no AVX512_BF16): products of one row block, the
     * batches of a decoder or a prompt, which tendo__sgemm packs for badly;
     * past it, tendo__sgemm, as fast at 1024^3 (Zen 3, one thread, 28-31
     * ms either way; at two, 17-19 against 20-23) */
    if (c->pkind == TENDO__PGEMM_BF16W && !c->bpacked && rows->count > 1)
        c->pkind = TENDO__PGEMM_NONE;
    if (c->pkind != TENDO__PGEMM_NONE)
        c->blas = false;
    /* The skinny and AVX-512 kernels give the same bits on any tiles, so
     * their columns may be split by thread count: where there are fewer
     * tiles than threads (one row block of a product too small for two, as
     * an MLP's [128, 512] layers are; AVX-512: whole slivers each), and
     * always for a skinny product by a [k, n] weight, of whose rows a tile
     * reads a piece each: pieces as long as they can be, one per thread,
     * keep the prefetchers streaming (a transposed [n, k] view streams
     * whole rows in any tile). */
    if ((c->skinny || c->pkind != TENDO__PGEMM_NONE) &&
        ((c->skinny && p->B.rs != 1 && p->A.cols > 1) ||
         (threads > 1 && p->nbatches * rows->count * ((p->B.cols + *col_block - 1) / *col_block) < threads))) {
        int64_t per = (p->B.cols + threads - 1) / threads;

        *col_block = (per + COL_ALIGN - 1) / COL_ALIGN * COL_ALIGN;
    }
    if (c->pkind == TENDO__PGEMM_NONE || p->A.cols == 0 || (!c->bpacked && (p->nbatches != 1 || rows->count < 2)))
        return 0;
    /* Row blocks of 21 and 22 tiles would idle a thread 1/22 of the time:
     * halve the columns (the AVX-512 kernels give the same bits on any
     * tiles, so this may depend on the thread count). */
    if (threads > 1 && rows->count <= 2 * threads && cut_uneven(rows))
        *col_block = (p->B.cols + 1) / 2;
    if (c->bpacked)
        return kept;
    if (!(c->bpacked = tendo__gemm_scratch(tendo__pgemm_b_bytes(c->pkind, p->A.cols, p->B.cols), &c->bblk)))
        return -1;
    tendo__mm_batch_offsets(p, 0, &aoff, &boff);
    c->b = (const char *)tendo__tensor_data(b) + boff * (int64_t)c->t->size;
    c->B = &p->B;
    return (p->B.cols + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR;
}

static void float_share(int64_t i, void *ctx)
{
    float_ctx *c = ctx;

    tendo__pgemm_pack_b(c->pkind, c->B->rows, c->B->cols, c->b, c->B->rs, c->B->cs, i, i + 1, c->bpacked);
}

static void float_finish(void *ctx)
{
    float_ctx *c = ctx;

    tendo__gemm_scratch_free(c->bblk);
    if (c->keep_in) /* packed again by float_share: every part runs before any task */
        tendo__prepacked_keep(c->keep_in, c->kept);
    tendo__prepacked_drop(c->kept);
}

static bool float_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                       int64_t bi, tile x, const void *ctx)
{
    const float_ctx *c = ctx;

    return gemm_task(p, a, b, out, c, bi, x);
}

bool tendo__cpu_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out)
{
    static const mm_hooks hooks = {float_prepare, float_share, float_finish};
    float_ctx c = {.t = tendo__traits_of(a->dtype), .pkind = TENDO__PGEMM_NONE};

    if (c.t->compute != TENDO__COMPUTE_FLOAT && !(c.t->compute == TENDO__COMPUTE_DOUBLE && c.t->own_compute)) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CPU matmul for %s", c.t->name);
        return false;
    }
    return run_tasks(op, a, b, out, &hooks, float_task, &c);
}

/* See cpu.h.  The panels are the ones a product would pack for this B
 * (use_kept finds them by the same key), slivers on the threads. */
bool tendo__cpu_prepack(const char *op, const tendo__tensor *w)
{
    tendo__pgemm_kind kind = tendo__pgemm_kind_of(tendo__traits_of(w->dtype));
    const char *b = (const char *)tendo__tensor_data(w);
    tendo__pack_key key = {kind, b - (const char *)w->storage->data, w->shape[0], w->shape[1], w->stride[0],
                           w->stride[1]};
    uint64_t version = atomic_load_explicit(&w->storage->version, memory_order_relaxed);
    int64_t slivers = (key.n + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR;
    int threads = key.k * key.n < ((int64_t)1 << 16) ? 1 : tendo__threads();
    tendo__prepacked *e;
    char *panels;

    if (kind == TENDO__PGEMM_NONE || key.k == 0 || key.n == 0)
        return true; /* this CPU multiplies the dtype without panels */
    if (tendo__skinny_on_amx(tendo__traits_of(w->dtype)) &&
        tendo__skinny_takes(tendo__traits_of(w->dtype), TENDO__SKINNY_AMX_MIN_AXPY, key.k, key.n, key.rs, key.cs))
        return true; /* nor this view: AMX tiles read it as stored */
    if (!(e = tendo__prepacked_new(op, &key, version)))
        return false;
    panels = tendo__prepacked_panels(e);
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(static))
    for (int64_t s = 0; s < slivers; s++)
        tendo__pgemm_pack_b(kind, key.k, key.n, b, key.rs, key.cs, s, s + 1, panels);
    tendo__prepacked_keep(w->storage, e);
    tendo__prepacked_drop(e);
    return true;
}

#if defined(TENDO_HAVE_I8) && defined(TENDO_HAVE_I32) /* tensor_i8_matmul_i32 */
/* Tile x of batch bi of the i32 C = A @ B for i8 A and B. */
static bool i8_task(const tendo__mm_plan *p, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out,
                    int64_t bi, tile x, const void *ctx)
{
    int64_t aoff, boff, m = p->A.rows, n = p->B.cols;
    int32_t *c = (int32_t *)tendo__tensor_data(out) + (bi * m + x.r0) * n + x.c0;

    (void)ctx;
    tendo__mm_batch_offsets(p, bi, &aoff, &boff);
    return tendo__gemm_i8(x.r1 - x.r0, x.c1 - x.c0, p->A.cols,
                          (const int8_t *)tendo__tensor_data(a) + aoff + x.r0 * p->A.rs, p->A.rs, p->A.cs,
                          (const int8_t *)tendo__tensor_data(b) + boff + x.c0 * p->B.cs, p->B.rs, p->B.cs, c,
                          n) == 0;
}

bool tendo__cpu_matmul_i32(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out)
{
    return run_tasks(op, a, b, out, NULL, i8_task, NULL);
}
#endif
