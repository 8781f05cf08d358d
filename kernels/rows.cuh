/* kernels/rows.cuh - row-wise kernels over a tendo__cu_rows: reductions
 * (one [[reduction]] of gen/registry/reductions.toml each), softmax/log_softmax,
 * layer_norm and rms_norm, their gradients, cross_entropy and its gradient,
 * and argmax/argmin.
 *
 * Reductions pick one of three shapes of work (and split long rows into
 * chunks over two passes when there are too few of them to fill the GPU,
 * see "split reductions" below):
 *   - columns: the rows start at adjacent elements and step over a larger
 *     stride (reducing an outer dim): a 32x8 block takes 32 adjacent rows,
 *     so each of its loads is one coalesced 128-byte line, and splits their
 *     length 8 ways, folded through shared memory;
 *   - long rows (len >= 1024): a block per row, block-wide fold;
 *   - short rows: a warp per row, folded with shuffles.
 * Softmax, the norms and cross_entropy give each row a team (see "who
 * takes a row" below): a block, or one thread for a row of at most
 * TENDO_SHORT_ROW elements.  A block's row of up to TENDO_ROW_CACHE floats
 * is read from global memory once into shared memory (one read, one write
 * per element), longer rows are read again.
 * Contiguous rows are read and written 16 bytes at a time: long-row
 * reductions check each row, softmax and the norms are launched with
 * V = 16 / sizeof(T) elements per access when every row allows it (step 1,
 * 16-byte aligned starts, a whole number of vectors) and V = 1 otherwise.
 * Rows are indexed in 64 bits only: the index math is per row, not per
 * element, so a 32-bit variant would double the kernels (and nvcc's time)
 * for nothing measurable.
 * Reductions accumulate in R::A; softmax and the norms in the dtype's
 * compute type (double for f64, float otherwise).
 */
#ifndef TENDO_KERNELS_ROWS_CUH
#define TENDO_KERNELS_ROWS_CUH

#include "tendo.cuh"

#define TENDO_ROW_CACHE 8192 /* floats: 32 KiB of shared memory */
#define TENDO_COLS_X 32
#define TENDO_COLS_Y 8

/* R is a reduction: R::A its accumulator type (float, double or int64_t),
 * R::O the output's element type, R::identity(), R::combine(acc, x) (x an
 * input element widened by tendo_ld), R::finalize(acc, n); R() folds two
 * accumulators. */

template <typename T, typename I, typename R>
__global__ void tendo_reduce_warp(tendo__cu_rows r)
{
    int lane = threadIdx.x & 31;
    int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t j = warp; j < r.rows.numel; j += nwarps) { /* the same j for the whole warp */
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        typename R::A acc = R::identity();
        for (int64_t k = lane; k < r.len; k += 32)
            acc = R::combine(acc, tendo_ld(x[k * r.in_step]));
        acc = tendo_warp_reduce(acc, R());
        if (lane == 0)
            ((typename R::O *)r.rows.base[0])[off[0]] = tendo_st<typename R::O>(R::finalize(acc, r.len));
    }
}

/* The block's fold of x[k * step] for k in [lo, hi) (every thread gets
 * it; every thread must call, since it syncs). */
template <typename T, typename R>
static __device__ __forceinline__ typename R::A tendo_fold_row(const T *x, int64_t lo, int64_t hi, int64_t step, typename R::A *sh)
{
    const int V = 16 / sizeof(T);
    typename R::A acc = R::identity();

    if (step == 1 && tendo_aligned16(x + lo) && (hi - lo) % V == 0) { /* uniform per block */
        const tendo_vec<T, V> *xv = (const tendo_vec<T, V> *)(x + lo);
        for (int64_t q = threadIdx.x; q < (hi - lo) / V; q += blockDim.x) {
            tendo_vec<T, V> e = xv[q];
#pragma unroll
            for (int i = 0; i < V; i++)
                acc = R::combine(acc, tendo_ld(e.v[i]));
        }
    } else {
#pragma unroll 4
        for (int64_t k = lo + threadIdx.x; k < hi; k += blockDim.x)
            acc = R::combine(acc, tendo_ld(x[k * step]));
    }
    return tendo_block_reduce(acc, R(), R::identity(), sh);
}

/* The fold of column j = 32g + threadIdx.x over rows [lo, hi) (element
 * in[j + k * step]), by the block's TENDO_COLS_Y rows of threads; the
 * result is in the threads with threadIdx.y == 0.  Every thread must call. */
template <typename T, typename R>
static __device__ __forceinline__ typename R::A tendo_fold_col(const T *in, int64_t j, int64_t count, int64_t lo,
                                                       int64_t hi, int64_t step,
                                                       typename R::A (*sh)[TENDO_COLS_X + 1])
{
    typename R::A acc = R::identity();
    if (j < count)
        for (int64_t k = lo + threadIdx.y; k < hi; k += TENDO_COLS_Y)
            acc = R::combine(acc, tendo_ld(in[j + k * step]));
    sh[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0)
        for (int y = 1; y < TENDO_COLS_Y; y++)
            acc = R::combine(acc, sh[y][threadIdx.x]);
    __syncthreads(); /* sh is rewritten by the caller's next fold */
    return acc;
}

template <typename T, typename I, typename R>
__global__ void tendo_reduce_block(tendo__cu_rows r)
{
    __shared__ typename R::A sh[32];

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) { /* the same j for the whole block */
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        typename R::A acc = tendo_fold_row<T, R>((const T *)r.rows.base[1] + off[1], 0, r.len, r.in_step, sh);
        if (threadIdx.x == 0)
            ((typename R::O *)r.rows.base[0])[off[0]] = tendo_st<typename R::O>(R::finalize(acc, r.len));
    }
}

/* Rows j start at in + j (rows.ndim == 1, input row stride 1) and write
 * out + j * out_next. */
template <typename T, typename R>
__global__ void tendo_reduce_cols(tendo__cu_rows r)
{
    __shared__ typename R::A sh[TENDO_COLS_Y][TENDO_COLS_X + 1];
    int64_t count = r.rows.numel, out_next = r.rows.stride[0][0];

    for (int64_t g = blockIdx.x; g * TENDO_COLS_X < count; g += gridDim.x) { /* uniform per block */
        int64_t j = g * TENDO_COLS_X + threadIdx.x;
        typename R::A acc = tendo_fold_col<T, R>((const T *)r.rows.base[1], j, count, 0, r.len, r.in_step, sh);
        if (threadIdx.y == 0 && j < count)
            ((typename R::O *)r.rows.base[0])[j * out_next] = tendo_st<typename R::O>(R::finalize(acc, r.len));
    }
}

/* ---- split reductions: too few rows to fill the GPU ------------------------
 *
 * When the rows are long but few (sum_all is one row of numel elements;
 * reducing the outer dim of a tall matrix gives few column groups), one
 * block per row (or per 32 columns) would leave most SMs idle.  Each row is
 * then cut into fixed chunks: pass 1 folds every (row, chunk) into a float
 * partial, pass 2 folds each row's partials in chunk order and finalizes.
 * The chunking is fixed, so the result does not depend on the GPU. */
#define TENDO_SPLIT_ROW_CHUNK 16384 /* elements of a row per pass-1 block */
#define TENDO_SPLIT_COL_CHUNK 512   /* rows per pass-1 block of 32 columns */
#define TENDO_SPLIT_MIN_BLOCKS 1024 /* fewer natural blocks than this: split */

/* Pass 1 for rows: partial g = row g / nchunks, chunk g % nchunks. */
template <typename T, typename I, typename R>
__global__ void tendo_reduce_split_rows(tendo__cu_rows r, int64_t nchunks, typename R::A *part)
{
    __shared__ typename R::A sh[32];

    for (int64_t g = blockIdx.x; g < r.rows.numel * nchunks; g += gridDim.x) { /* uniform per block */
        int64_t j = g / nchunks, lo = g % nchunks * TENDO_SPLIT_ROW_CHUNK;
        int64_t hi = lo + TENDO_SPLIT_ROW_CHUNK < r.len ? lo + TENDO_SPLIT_ROW_CHUNK : r.len;
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        typename R::A acc = tendo_fold_row<T, R>((const T *)r.rows.base[1] + off[1], lo, hi, r.in_step, sh);
        if (threadIdx.x == 0)
            part[g] = acc;
    }
}

/* Pass 2 for rows: a block folds row j's nchunks partials. */
template <typename T, typename I, typename R>
__global__ void tendo_reduce_parts_rows(tendo__cu_rows r, int64_t nchunks, const typename R::A *part)
{
    __shared__ typename R::A sh[32];

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) {
        typename R::A acc = R::identity();
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x)
            acc = R::combine(acc, part[j * nchunks + c]);
        acc = tendo_block_reduce(acc, R(), R::identity(), sh);
        if (threadIdx.x == 0) {
            int64_t off[TENDO__CU_OPS];
            tendo_offsets<I>(r.rows, (I)j, off);
            ((typename R::O *)r.rows.base[0])[off[0]] = tendo_st<typename R::O>(R::finalize(acc, r.len));
        }
    }
}

/* Pass 1 for columns (the layout of tendo_reduce_cols): block (g, c) folds
 * rows [c * CHUNK, (c + 1) * CHUNK) of columns 32g..32g+31 into
 * part[c * count + j]. */
template <typename T, typename R>
__global__ void tendo_reduce_split_cols(tendo__cu_rows r, int64_t nchunks, typename R::A *part)
{
    __shared__ typename R::A sh[TENDO_COLS_Y][TENDO_COLS_X + 1];
    int64_t count = r.rows.numel, groups = (count + TENDO_COLS_X - 1) / TENDO_COLS_X;

    for (int64_t b = blockIdx.x; b < groups * nchunks; b += gridDim.x) { /* uniform per block */
        int64_t g = b % groups, c = b / groups, j = g * TENDO_COLS_X + threadIdx.x;
        int64_t lo = c * TENDO_SPLIT_COL_CHUNK;
        int64_t hi = lo + TENDO_SPLIT_COL_CHUNK < r.len ? lo + TENDO_SPLIT_COL_CHUNK : r.len;
        typename R::A acc = tendo_fold_col<T, R>((const T *)r.rows.base[1], j, count, lo, hi, r.in_step, sh);
        if (threadIdx.y == 0 && j < count)
            part[c * count + j] = acc;
    }
}

/* Pass 2 for columns: a thread per column folds its nchunks partials. */
template <typename T, typename R>
__global__ void tendo_reduce_parts_cols(tendo__cu_rows r, int64_t nchunks, const typename R::A *part)
{
    int64_t count = r.rows.numel, out_next = r.rows.stride[0][0];

    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < count;
         j += (int64_t)gridDim.x * blockDim.x) {
        typename R::A acc = R::identity();
        for (int64_t c = 0; c < nchunks; c++)
            acc = R::combine(acc, part[c * count + j]);
        ((typename R::O *)r.rows.base[0])[j * out_next] = tendo_st<typename R::O>(R::finalize(acc, r.len));
    }
}

template <typename T, typename R>
static int tendo_reduce_launch(const tendo__cu_rows *r)
{
    int64_t count = r->rows.numel;
    bool cols;
    int64_t natural, nchunks;
    typename R::A *part = NULL;

    if (count == 0)
        return 0;
    cols = r->rows.ndim == 1 && r->rows.stride[1][0] == 1 && r->in_step != 1 && count > 1;
    natural = cols ? (count + TENDO_COLS_X - 1) / TENDO_COLS_X : count;
    nchunks = (r->len + (cols ? TENDO_SPLIT_COL_CHUNK : TENDO_SPLIT_ROW_CHUNK) - 1) /
              (cols ? TENDO_SPLIT_COL_CHUNK : TENDO_SPLIT_ROW_CHUNK);
    if ((cols || r->len >= 1024) && natural < TENDO_SPLIT_MIN_BLOCKS && nchunks >= 4) {
        void *block = NULL;
        part = (typename R::A *)tendo__cu_scratch((size_t)(count * nchunks) * sizeof(typename R::A), &block);
        if (!part)
            return (int)cudaErrorMemoryAllocation;
        if (cols) {
            dim3 block(TENDO_COLS_X, TENDO_COLS_Y);
            TENDO_LAUNCH(tendo_blocks(natural * nchunks, 1), block, 0, cudaStreamPerThread, tendo_reduce_split_cols<T, R>)(*r, nchunks, part);
            TENDO_LAUNCH(tendo_blocks(count, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_reduce_parts_cols<T, R>)(*r, nchunks, part);
        } else {
            TENDO_LAUNCH(tendo_blocks(count * nchunks, 1), TENDO_THREADS, 0, cudaStreamPerThread, tendo_reduce_split_rows<T, int64_t, R>)(*r, nchunks, part);
            TENDO_LAUNCH(tendo_blocks(count, 1), TENDO_THREADS, 0, cudaStreamPerThread, tendo_reduce_parts_rows<T, int64_t, R>)(*r, nchunks, part);
        }
        tendo__cu_scratch_free(block); /* reused in stream order: after both passes */
        return tendo_launched();
    }
    if (cols) {
        dim3 block(TENDO_COLS_X, TENDO_COLS_Y);
        TENDO_LAUNCH(tendo_blocks(count, TENDO_COLS_X), block, 0, cudaStreamPerThread, tendo_reduce_cols<T, R>)(*r);
    } else if (r->len >= 1024) {
        TENDO_LAUNCH(tendo_blocks(count, 1), TENDO_THREADS, 0, cudaStreamPerThread, tendo_reduce_block<T, int64_t, R>)(*r);
    } else {
        TENDO_LAUNCH(tendo_blocks(count, TENDO_THREADS / 32), TENDO_THREADS, 0, cudaStreamPerThread, tendo_reduce_warp<T, int64_t, R>)(*r);
    }
    return tendo_launched();
}

/* ---- softmax and the norms ------------------------------------------------- */

/* The compute type of element type T: double for f64, float otherwise. */
template <typename T> struct tendo_ct_ {
    typedef float C;
};
template <> struct tendo_ct_<double> {
    typedef double C;
};

static __device__ __forceinline__ float tendo_exp(float x) { return expf(x); }
static __device__ __forceinline__ double tendo_exp(double x) { return exp(x); }
static __device__ __forceinline__ float tendo_log(float x) { return logf(x); }
static __device__ __forceinline__ double tendo_log(double x) { return log(x); }
static __device__ __forceinline__ float tendo_sqrt(float x) { return sqrtf(x); }
static __device__ __forceinline__ double tendo_sqrt(double x) { return sqrt(x); }

/* Rows of up to this many compute-type elements are cached. */
#define TENDO_ROW_CACHE_OF(C) (TENDO_ROW_CACHE * (int64_t)sizeof(float) / (int64_t)sizeof(C))

struct tendo_fold_sum {
    template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};
struct tendo_fold_max {
    /* NaN wins, as tendo__maximum */
    template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return (a != a || a > b) ? a : b; }
};

/* Elements k0 .. k0 + V - 1 of the row into v: from the shared cache, or
 * from global memory (and into the cache when one is used); V > 1 reads
 * them as one 16-byte vector (step 1, k0 a multiple of V, the row
 * aligned), V == 1 reads element k0 at step. */
template <int V, typename T, typename C>
static __device__ __forceinline__ void tendo_row_get(const T *x, int64_t step, int64_t k0, C *cache, bool fill, C *v)
{
    if (cache && !fill) {
#pragma unroll
        for (int i = 0; i < V; i++)
            v[i] = cache[k0 + i];
        return;
    }
    if (V == 1) {
        v[0] = tendo_ld(x[k0 * step]);
    } else {
        tendo_vec<T, V> e = *(const tendo_vec<T, V> *)(x + k0);
#pragma unroll
        for (int i = 0; i < V; i++)
            v[i] = tendo_ld(e.v[i]);
    }
    if (cache)
#pragma unroll
        for (int i = 0; i < V; i++)
            cache[k0 + i] = v[i];
}

/* v rounded to T into elements k0 .. k0 + V - 1 of the row (as tendo_row_get). */
template <int V, typename T, typename C>
static __device__ __forceinline__ void tendo_row_put(T *y, int64_t step, int64_t k0, const C *v)
{
    if (V == 1) {
        y[k0 * step] = tendo_st<T>(v[0]);
    } else {
        tendo_vec<T, V> e;
#pragma unroll
        for (int i = 0; i < V; i++)
            e.v[i] = tendo_st<T>(v[i]);
        *(tendo_vec<T, V> *)(y + k0) = e;
    }
}

/* ---- who takes a row ----------------------------------------------------------
 *
 * A team is the threads that share one row: its rows are first(), first()
 * + stride(), ...; each member takes the row's elements rank(), rank() +
 * size(), ...; fold() combines the members' partial values (every member
 * gets the result, and every member must make the call).  Short rows go
 * to one thread each: a block of 256 on a row of 2 leaves 254 threads idle
 * and pays two block-wide folds for two elements, while neighbouring
 * threads on neighbouring rows read neighbouring memory when the rows are
 * a tensor's outer dim (softmax over dim 0 of a row-major tensor). */
#define TENDO_SHORT_ROW 32

/* a block per row (uniform per block: the block's fold syncs it), the
 * row kept in shared memory when it fits */
struct tendo_team_block {
    static const bool caches = true;
    static __device__ __forceinline__ int64_t first() { return blockIdx.x; }
    static __device__ __forceinline__ int64_t stride() { return gridDim.x; }
    static __device__ __forceinline__ int64_t rank() { return threadIdx.x; }
    static __device__ __forceinline__ int64_t size() { return blockDim.x; }
    template <typename C, typename F>
    static __device__ __forceinline__ C fold(C v, F f, C identity, C *sh)
    {
        return tendo_block_reduce(v, f, identity, sh);
    }
};

/* a thread per row (rows of at most TENDO_SHORT_ROW elements, read
 * again from global memory: a block's threads take different rows) */
struct tendo_team_thread {
    static const bool caches = false;
    static __device__ __forceinline__ int64_t first() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
    static __device__ __forceinline__ int64_t stride() { return (int64_t)gridDim.x * blockDim.x; }
    static __device__ __forceinline__ int64_t rank() { return 0; }
    static __device__ __forceinline__ int64_t size() { return 1; }
    template <typename C, typename F>
    static __device__ __forceinline__ C fold(C v, F, C, C *)
    {
        return v;
    }
};

/* Whether r's rows go to a thread each (tendo_team_thread). */
static inline bool tendo_rows_short(const tendo__cu_rows *r) { return r->len <= TENDO_SHORT_ROW; }

/* Blocks for r's rows: a row per thread when short_rows, else per block. */
static inline unsigned tendo_row_blocks(const tendo__cu_rows *r, bool short_rows)
{
    return tendo_blocks(r->rows.numel, short_rows ? TENDO_THREADS : 1);
}

/* Whether a team of Team keeps a row of len compute-type C elements in
 * dynamic shared memory (its launch gives len * sizeof(C) bytes). */
#define TENDO_ROW_CACHED(Team, C, len) ((Team::caches) && (len) <= TENDO_ROW_CACHE_OF(C))

/* Each member's V-element pieces of a row of len: the same pieces in every
 * pass, so that a thread reads back from the cache only what it wrote. */
#define TENDO_ROW_PIECES(k0, len, V, Team) \
    for (int64_t k0 = Team::rank() * (V); k0 < (len); k0 += Team::size() * (V))

/* Each member's elements k of a row of len. */
#define TENDO_ROW_EACH(k, len, Team) for (int64_t k = Team::rank(); k < (len); k += Team::size())

/* Whether every row of r can be read (operand 1) and written (operand 0)
 * 16 / sizeof(T) elements at a time, as tendo_row_get and tendo_row_put
 * do; a row parameter p (a norm's weight or bias: NULL for none) with
 * stride step too. */
static bool tendo_row_param_vectored(const void *p, int64_t step) { return !p || (step == 1 && tendo_aligned16(p)); }

template <typename T>
static bool tendo_rows_vectored(const tendo__cu_rows *r)
{
    if (r->in_step != 1 || r->out_step != 1 || r->len % (int64_t)(16 / sizeof(T)) != 0)
        return false;
    for (int k = 0; k < 2; k++) {
        if (!tendo_aligned16(r->rows.base[k]))
            return false;
        for (int d = 0; d < r->rows.ndim; d++)
            if (r->rows.stride[k][d] * (int64_t)sizeof(T) % 16 != 0)
                return false;
    }
    return true;
}

template <typename T, typename I, int V, typename Team>
__global__ void tendo_softmax_rows(tendo__cu_rows r, int log)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];
    C *cache = TENDO_ROW_CACHED(Team, C, r.len) ? (C *)TENDO_DYN_SHARED : NULL;

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        T *y = (T *)r.rows.base[0] + off[0];
        C m = -INFINITY, s = 0, v[V];

        TENDO_ROW_PIECES(k0, r.len, V, Team) {
            tendo_row_get<V>(x, r.in_step, k0, cache, true, v);
#pragma unroll
            for (int i = 0; i < V; i++)
                m = tendo_fold_max()(m, v[i]);
        }
        m = Team::fold(m, tendo_fold_max(), (C)-INFINITY, sh);
        TENDO_ROW_PIECES(k0, r.len, V, Team) {
            tendo_row_get<V>(x, r.in_step, k0, cache, false, v);
#pragma unroll
            for (int i = 0; i < V; i++)
                s += tendo_exp(v[i] - m);
        }
        s = Team::fold(s, tendo_fold_sum(), (C)0, sh);
        C ls = log ? tendo_log(s) : (C)0, inv = (C)1 / s;
        TENDO_ROW_PIECES(k0, r.len, V, Team) {
            tendo_row_get<V>(x, r.in_step, k0, cache, false, v);
#pragma unroll
            for (int i = 0; i < V; i++)
                v[i] = log ? (v[i] - m) - ls : tendo_exp(v[i] - m) * inv;
            tendo_row_put<V>(y, r.out_step, k0, v);
        }
    }
}

/* softmax's gradient y (g - sum(g y)) (log: log_softmax's g - exp(y)
 * sum(g)), y the forward's result (operand 1), g its gradient (operand 2),
 * a team per row. */
template <typename T, typename I, typename Team>
__global__ void tendo_softmax_back_rows(tendo__cu_rows r, int log)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *y = (const T *)r.rows.base[1] + off[1], *g = (const T *)r.rows.base[2] + off[2];
        T *dx = (T *)r.rows.base[0] + off[0];
        C s = 0;

        TENDO_ROW_EACH(k, r.len, Team)
            s += log ? (C)tendo_ld(g[k * r.in2_step])
                     : (C)tendo_ld(g[k * r.in2_step]) * (C)tendo_ld(y[k * r.in_step]);
        s = Team::fold(s, tendo_fold_sum(), (C)0, sh);
        TENDO_ROW_EACH(k, r.len, Team) {
            C yk = tendo_ld(y[k * r.in_step]), gk = tendo_ld(g[k * r.in2_step]);
            dx[k * r.out_step] = tendo_st<T>(log ? gk - tendo_exp(yk) * s : yk * (gk - s));
        }
    }
}

/* Launched with TENDO_THREADS threads: the bound lets V = 16 one-byte
 * elements (fp8) and their weight and bias keep their registers (t-ptxas). */
template <typename T, typename I, int V, typename Team>
__global__ void __launch_bounds__(TENDO_THREADS) tendo_norm_rows(tendo__cu_rows r, tendo__cu_norm_ctx c)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];
    C *cache = TENDO_ROW_CACHED(Team, C, r.len) ? (C *)TENDO_DYN_SHARED : NULL;
    const T *w = (const T *)c.w, *b = (const T *)c.b;

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        T *y = (T *)r.rows.base[0] + off[0];
        C mean = 0, s = 0, scale, v[V];

        if (c.rms) {
            TENDO_ROW_PIECES(k0, r.len, V, Team) {
                tendo_row_get<V>(x, r.in_step, k0, cache, true, v);
#pragma unroll
                for (int i = 0; i < V; i++)
                    s += v[i] * v[i];
            }
        } else { /* two passes, as the CPU: the mean, then the mean square deviation */
            TENDO_ROW_PIECES(k0, r.len, V, Team) {
                tendo_row_get<V>(x, r.in_step, k0, cache, true, v);
#pragma unroll
                for (int i = 0; i < V; i++)
                    s += v[i];
            }
            mean = Team::fold(s, tendo_fold_sum(), (C)0, sh) / (C)r.len;
            s = 0;
            TENDO_ROW_PIECES(k0, r.len, V, Team) {
                tendo_row_get<V>(x, r.in_step, k0, cache, false, v);
#pragma unroll
                for (int i = 0; i < V; i++)
                    s += (v[i] - mean) * (v[i] - mean);
            }
        }
        s = Team::fold(s, tendo_fold_sum(), (C)0, sh);
        scale = (C)1 / tendo_sqrt(s / (C)r.len + (C)c.eps);
        TENDO_ROW_PIECES(k0, r.len, V, Team) {
            C wv[V], bv[V];
#pragma unroll
            for (int i = 0; i < V; i++)
                wv[i] = 1, bv[i] = 0;
            tendo_row_get<V>(x, r.in_step, k0, cache, false, v);
            if (w)
                tendo_row_get<V>(w, c.w_stride, k0, (C *)NULL, false, wv);
            if (b)
                tendo_row_get<V>(b, c.b_stride, k0, (C *)NULL, false, bv);
#pragma unroll
            for (int i = 0; i < V; i++)
                v[i] = (v[i] - mean) * scale * wv[i] + bv[i];
            tendo_row_put<V>(y, r.out_step, k0, v);
        }
    }
}

/* layer_norm's (rms: rms_norm's) gradient for the input: a (operand 1),
 * g the gradient of the norm's result (operand 2), weight in c; with xhat
 * = (a - mean) rstd and gw = g w, rstd (gw - mean(gw) - xhat mean(gw
 * xhat)), rms without mean(gw).  A team per row, the statistics as
 * tendo_norm_rows computes them. */
template <typename T, typename I, typename Team>
__global__ void tendo_norm_back_rows(tendo__cu_rows r, tendo__cu_norm_ctx c)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];
    const T *w = (const T *)c.w;
    const C n = (C)r.len;

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *a = (const T *)r.rows.base[1] + off[1], *g = (const T *)r.rows.base[2] + off[2];
        T *dx = (T *)r.rows.base[0] + off[0];
        C mean = 0, s = 0, rstd, m1 = 0, m2 = 0;

        if (!c.rms) {
            TENDO_ROW_EACH(k, r.len, Team)
                s += tendo_ld(a[k * r.in_step]);
            mean = Team::fold(s, tendo_fold_sum(), (C)0, sh) / n;
            s = 0;
        }
        TENDO_ROW_EACH(k, r.len, Team) {
            C d = (C)tendo_ld(a[k * r.in_step]) - mean;
            s += d * d;
        }
        rstd = (C)1 / tendo_sqrt(Team::fold(s, tendo_fold_sum(), (C)0, sh) / n + (C)c.eps);
        TENDO_ROW_EACH(k, r.len, Team) {
            C gw = (C)tendo_ld(g[k * r.in2_step]) * (w ? (C)tendo_ld(w[k * c.w_stride]) : (C)1);
            m1 += gw;
            m2 += gw * ((C)tendo_ld(a[k * r.in_step]) - mean) * rstd;
        }
        m1 = c.rms ? (C)0 : Team::fold(m1, tendo_fold_sum(), (C)0, sh) / n;
        m2 = Team::fold(m2, tendo_fold_sum(), (C)0, sh) / n;
        TENDO_ROW_EACH(k, r.len, Team) {
            C gw = (C)tendo_ld(g[k * r.in2_step]) * (w ? (C)tendo_ld(w[k * c.w_stride]) : (C)1);
            C xh = ((C)tendo_ld(a[k * r.in_step]) - mean) * rstd;
            dx[k * r.out_step] = tendo_st<T>(rstd * (gw - m1 - xh * m2));
        }
    }
}

/* cross_entropy's row loss (1 - s) (lse - x[t]) + s (lse - mean(x)), or 0
 * for an ignored target: logits in operand 1, the row's int64 target in
 * operand 2 (step 0), the loss (compute type) into operand 0.  A team
 * per row; the team's target is one value, so every branch is uniform. */
template <typename T, typename I, typename Team>
__global__ void tendo_cross_entropy_rows(tendo__cu_rows r, tendo__cu_ce_ctx c)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];
    const C sm = (C)c.smoothing;

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        int64_t t = ((const int64_t *)r.rows.base[2])[off[2]];
        C m = -INFINITY, s = 0, sd = 0;

        if (t == c.ignore_index) {
            if (Team::rank() == 0)
                ((C *)r.rows.base[0])[off[0]] = 0;
            continue;
        }
        TENDO_ROW_EACH(k, r.len, Team)
            m = tendo_fold_max()(m, (C)tendo_ld(x[k * r.in_step]));
        m = Team::fold(m, tendo_fold_max(), (C)-INFINITY, sh);
        TENDO_ROW_EACH(k, r.len, Team) {
            C d = (C)tendo_ld(x[k * r.in_step]) - m;
            s += tendo_exp(d);
            sd += d;
        }
        s = Team::fold(s, tendo_fold_sum(), (C)0, sh);
        sd = Team::fold(sd, tendo_fold_sum(), (C)0, sh);
        if (Team::rank() == 0) {
            C lse = tendo_log(s), dt = (C)tendo_ld(x[t * r.in_step]) - m;
            ((C *)r.rows.base[0])[off[0]] = ((C)1 - sm) * (lse - dt) + sm * (lse - sd / (C)r.len);
        }
    }
}

/* cross_entropy's gradient for the logits (operands as above, the row's
 * gradient into operand 0): scale (softmax(x) - (1 - s) onehot(t) - s /
 * n), scale = g / count, zeros for an ignored target.  A team per row. */
template <typename T, typename I, typename Team>
__global__ void tendo_cross_entropy_back_rows(tendo__cu_rows r, tendo__cu_ce_ctx c)
{
    typedef typename tendo_ct_<T>::C C;
    __shared__ C sh[32];
    const C sm = (C)c.smoothing, scale = (C)tendo_ld(*(const T *)c.g) * (C)c.scale;
    const C spread = scale * sm / (C)r.len, hit = scale * ((C)1 - sm);

    for (int64_t j = Team::first(); j < r.rows.numel; j += Team::stride()) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        int64_t t = ((const int64_t *)r.rows.base[2])[off[2]];
        T *dx = (T *)r.rows.base[0] + off[0];
        C m = -INFINITY, s = 0, p;

        if (t == c.ignore_index) {
            TENDO_ROW_EACH(k, r.len, Team)
                dx[k * r.out_step] = tendo_st<T>((C)0);
            continue;
        }
        TENDO_ROW_EACH(k, r.len, Team)
            m = tendo_fold_max()(m, (C)tendo_ld(x[k * r.in_step]));
        m = Team::fold(m, tendo_fold_max(), (C)-INFINITY, sh);
        TENDO_ROW_EACH(k, r.len, Team)
            s += tendo_exp((C)tendo_ld(x[k * r.in_step]) - m);
        p = scale / Team::fold(s, tendo_fold_sum(), (C)0, sh);
        TENDO_ROW_EACH(k, r.len, Team) {
            C v = tendo_exp((C)tendo_ld(x[k * r.in_step]) - m) * p - spread;
            dx[k * r.out_step] = tendo_st<T>(k == t ? v - hit : v);
        }
    }
}

/* The launches: short rows (tendo_rows_short) a thread each, V = 1; longer
 * rows a block each, V = 16 / sizeof(T) when every row allows it. */
template <typename T>
static int tendo_softmax_launch(const tendo__cu_rows *r, int log)
{
    typedef typename tendo_ct_<T>::C C;
    bool short_rows = tendo_rows_short(r);
    size_t shmem = TENDO_ROW_CACHED(tendo_team_block, C, r->len) ? (size_t)r->len * sizeof(C) : 0;
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_softmax_rows<T, int64_t, 1, tendo_team_thread>)(*r, log);
    else if (tendo_rows_vectored<T>(r))
        TENDO_LAUNCH(blocks, TENDO_THREADS, shmem, cudaStreamPerThread, tendo_softmax_rows<T, int64_t, 16 / sizeof(T), tendo_team_block>)(*r, log);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, shmem, cudaStreamPerThread, tendo_softmax_rows<T, int64_t, 1, tendo_team_block>)(*r, log);
    return tendo_launched();
}

template <typename T>
static int tendo_softmax_back_launch(const tendo__cu_rows *r, int log)
{
    bool short_rows = tendo_rows_short(r);
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_softmax_back_rows<T, int64_t, tendo_team_thread>)(*r, log);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_softmax_back_rows<T, int64_t, tendo_team_block>)(*r, log);
    return tendo_launched();
}

template <typename T>
static int tendo_norm_launch(const tendo__cu_rows *r, const tendo__cu_norm_ctx *c)
{
    typedef typename tendo_ct_<T>::C C;
    bool short_rows = tendo_rows_short(r);
    size_t shmem = TENDO_ROW_CACHED(tendo_team_block, C, r->len) ? (size_t)r->len * sizeof(C) : 0;
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_norm_rows<T, int64_t, 1, tendo_team_thread>)(*r, *c);
    else if (tendo_rows_vectored<T>(r) && tendo_row_param_vectored(c->w, c->w_stride) &&
             tendo_row_param_vectored(c->b, c->b_stride))
        TENDO_LAUNCH(blocks, TENDO_THREADS, shmem, cudaStreamPerThread, tendo_norm_rows<T, int64_t, 16 / sizeof(T), tendo_team_block>)(*r, *c);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, shmem, cudaStreamPerThread, tendo_norm_rows<T, int64_t, 1, tendo_team_block>)(*r, *c);
    return tendo_launched();
}

template <typename T>
static int tendo_norm_back_launch(const tendo__cu_rows *r, const tendo__cu_norm_ctx *c)
{
    bool short_rows = tendo_rows_short(r);
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_norm_back_rows<T, int64_t, tendo_team_thread>)(*r, *c);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_norm_back_rows<T, int64_t, tendo_team_block>)(*r, *c);
    return tendo_launched();
}

template <typename T>
static int tendo_cross_entropy_launch(const tendo__cu_rows *r, const tendo__cu_ce_ctx *c)
{
    bool short_rows = tendo_rows_short(r);
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_cross_entropy_rows<T, int64_t, tendo_team_thread>)(*r, *c);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_cross_entropy_rows<T, int64_t, tendo_team_block>)(*r, *c);
    return tendo_launched();
}

template <typename T>
static int tendo_cross_entropy_back_launch(const tendo__cu_rows *r, const tendo__cu_ce_ctx *c)
{
    bool short_rows = tendo_rows_short(r);
    unsigned blocks = tendo_row_blocks(r, short_rows);

    if (r->rows.numel == 0)
        return 0;
    if (short_rows)
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_cross_entropy_back_rows<T, int64_t, tendo_team_thread>)(*r, *c);
    else
        TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_cross_entropy_back_rows<T, int64_t, tendo_team_block>)(*r, *c);
    return tendo_launched();
}

/* ---- argmax / argmin --------------------------------------------------------
 *
 * A block per row writes the int64 index of the row's largest (smallest)
 * element: the first one on ties; a NaN beats everything, the first NaN
 * (PyTorch's rule, as the CPU).  Each thread keeps its best (value, index)
 * over a strided slice of the row; the block folds the pairs, preferring
 * the lower index whenever neither beats the other. */

/* Whether candidate (v, i) beats (bv, bi) */
template <typename C>
static __device__ __forceinline__ bool tendo_arg_beats(C v, int64_t i, C bv, int64_t bi, bool largest)
{
    if (bi < 0)
        return i >= 0;
    if (i < 0)
        return false;
    bool vn = v != v, bn = bv != bv;
    if (vn || bn)
        return vn && (!bn || i < bi);
    if (v == bv)
        return i < bi;
    return largest ? v > bv : v < bv;
}

template <typename T, typename I>
__global__ void tendo_arg_rows(tendo__cu_rows r, int largest)
{
    typedef decltype(tendo_ld(T())) C;
    __shared__ C shv[TENDO_THREADS];
    __shared__ int64_t shi[TENDO_THREADS];

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) { /* uniform per block */
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(r.rows, (I)j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        C bv = C();
        int64_t bi = -1;
        for (int64_t k = threadIdx.x; k < r.len; k += blockDim.x) {
            C v = tendo_ld(x[k * r.in_step]);
            if (tendo_arg_beats(v, k, bv, bi, largest != 0)) {
                bv = v;
                bi = k;
            }
        }
        shv[threadIdx.x] = bv;
        shi[threadIdx.x] = bi;
        __syncthreads();
        for (int h = blockDim.x / 2; h > 0; h >>= 1) {
            if ((int)threadIdx.x < h &&
                tendo_arg_beats(shv[threadIdx.x + h], shi[threadIdx.x + h], shv[threadIdx.x], shi[threadIdx.x],
                                largest != 0)) {
                shv[threadIdx.x] = shv[threadIdx.x + h];
                shi[threadIdx.x] = shi[threadIdx.x + h];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0)
            ((int64_t *)r.rows.base[0])[off[0]] = shi[0] < 0 ? 0 : shi[0];
        __syncthreads(); /* shv/shi are rewritten by the next row */
    }
}

template <typename T>
static int tendo_arg_launch(const tendo__cu_rows *r, const tendo__cu_arg_ctx *c)
{
    unsigned blocks = tendo_blocks(r->rows.numel, 1);

    if (r->rows.numel == 0)
        return 0;
    TENDO_LAUNCH(blocks, TENDO_THREADS, 0, cudaStreamPerThread, tendo_arg_rows<T, int64_t>)(*r, c->largest);
    return tendo_launched();
}

#endif /* TENDO_KERNELS_ROWS_CUH */
