/* kernels/order.cuh - row-wise kernels of the ordering ops over a
 * tendo__cu_rows: a stable sort (sort, argsort, topk), cumsum, and var/std.
 *
 * Sorting compares (key, index) pairs: the key an unsigned integer in the
 * order of the sort (the CPU's sort_key, templates/cpu/order.c.j2), the
 * index the element's place along the row.  No two pairs are equal, so
 * any sorting network gives the one stable order, the CPU's bit for bit.
 *   - A row of up to TENDO__CU_SORT_TILE elements: one block sorts it in
 *     shared memory (bitonic, padded to a power of two with pairs that go
 *     after every element) and writes its first k.
 *   - Longer rows: blocks sort tiles of TENDO__CU_SORT_TILE into the
 *     scratch pairs, merge passes double the sorted runs (each element
 *     finds its place by a binary search in the other run), then the
 *     first k are written from the last pass.
 * cumsum runs a block per row over tiles of the row, carrying the running
 * sum from tile to tile: a float accumulates in double, an integer or
 * bool in wrapping 64-bit unsigned.  var/std run a block per row in
 * double, in the CPU's two passes: the mean, then the squared deviations
 * with the rounding error of the mean taken out.
 */
#ifndef TENDO_KERNELS_ORDER_CUH
#define TENDO_KERNELS_ORDER_CUH

#include <string.h>

#include "rows.cuh" /* tendo_fold_sum, tendo_sqrt */

/* ---- sort keys --------------------------------------------------------------- */

/* K: the key type of compute type C; of(v, desc): v's key, ascending or
 * descending (the bits inverted).  An integer's key is its bits, widened,
 * with the sign bit flipped when C is signed (so negatives come first), as
 * the CPU keys the int64_t or uint64_t it widens every integer dtype to. */
template <bool Wide> struct tendo_key_bits {
    typedef uint32_t K;
};
template <> struct tendo_key_bits<true> {
    typedef uint64_t K;
};
template <typename C> struct tendo_sort_key {
    typedef typename tendo_key_bits<(sizeof(C) > 4)>::K K;
    static __device__ __forceinline__ K of(C v, bool desc)
    {
        K u = (K)v;
        if ((C)-1 < (C)0)
            u ^= (K)1 << (8 * sizeof(K) - 1);
        return desc ? ~u : u;
    }
};
/* A float: NaN (any sign or payload) beyond every number, so last
 * ascending and first descending; -0.0 the key of +0.0. */
template <typename F, typename U> struct tendo_float_key {
    typedef U K;
    static __device__ __forceinline__ K of(F v, bool desc)
    {
        const int top = 8 * (int)sizeof(U) - 1;
        U u;
        if (v != v)
            return desc ? (U)0 : ~(U)0;
        if (v == 0)
            v = 0;
        memcpy(&u, &v, sizeof u);
        u = u >> top ? ~u : u | (U)1 << top;
        return desc ? ~u : u;
    }
};
template <> struct tendo_sort_key<float> : tendo_float_key<float, uint32_t> {};
template <> struct tendo_sort_key<double> : tendo_float_key<double, uint64_t> {};

/* A key and where it came from along its row (the scratch of long rows). */
template <typename K> struct tendo_pair {
    K key;
    int64_t idx;
};

/* The order of the sort: by key, equal keys by index. */
template <typename K, typename I>
static __device__ __forceinline__ bool tendo_before(K ka, I ia, K kb, I ib)
{
    return ka < kb || (ka == kb && ia < ib);
}

/* Element e of the output's layout for row j's element 0 (see
 * tendo__cu_order_ctx): where its indices and values go. */
static __device__ __forceinline__ int64_t tendo_order_out(const tendo__cu_rows &r, const tendo__cu_order_ctx &c,
                                                         const int64_t *off)
{
    return (int64_t)(r.rows.base[0] - c.out_base) / c.out_size + off[0];
}

/* Result i of a row: its index and its value (the element's own bytes). */
template <typename T>
static __device__ __forceinline__ void tendo_order_put(const tendo__cu_rows &r, const tendo__cu_order_ctx &c,
                                                       int64_t o, int64_t i, const T *x, int64_t idx)
{
    if (c.indices)
        c.indices[o + i * r.out_step] = idx;
    if (c.values)
        memcpy((T *)c.values + o + i * r.out_step, x + idx * r.in_step, sizeof(T));
}

/* ---- in shared memory: a row, or a tile of a long one ------------------------ */

/* Sorts the p pairs (keys, idx) in shared memory, p a power of two:
 * bitonic, every stage's compare-exchanges spread over the block.  Every
 * thread must call; the block is synced on return. */
template <typename K>
static __device__ void tendo_bitonic(K *keys, int *idx, int p)
{
    for (int size = 2; size <= p; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int q = threadIdx.x; q < p / 2; q += blockDim.x) {
                int i = ((q & ~(stride - 1)) << 1) | (q & (stride - 1)), l = i + stride;
                K ki = keys[i], kl = keys[l];
                int ii = idx[i], il = idx[l];
                bool up = (i & size) == 0;
                if (up ? tendo_before(kl, il, ki, ii) : tendo_before(ki, ii, kl, il)) {
                    keys[i] = kl;
                    keys[l] = ki;
                    idx[i] = il;
                    idx[l] = ii;
                }
            }
            __syncthreads();
        }
}

/* Block g sorts tile g % ntiles of row g / ntiles (tiles of `tile`
 * elements; p, a power of two >= tile, pairs of shared memory).  With no
 * scratch a row is one tile and its first k go to the outputs; otherwise
 * the tile's pairs go to scratch (row j's at j * len, in place). */
template <typename T, typename K>
__global__ void tendo_sort_tiles(tendo__cu_rows r, tendo__cu_order_ctx c, int64_t tile, int p, tendo_pair<K> *scratch)
{
    K *keys = (K *)TENDO_DYN_SHARED;
    int *idx = (int *)(keys + p);
    int64_t ntiles = (r.len + tile - 1) / tile;

    for (int64_t g = blockIdx.x; g < r.rows.numel * ntiles; g += gridDim.x) { /* uniform per block */
        int64_t j = g / ntiles, lo = g % ntiles * tile, n = r.len - lo < tile ? r.len - lo : tile;
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<int64_t>(r.rows, j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];

        for (int i = threadIdx.x; i < p; i += blockDim.x) { /* padding: the largest key, after every element */
            keys[i] = i < n ? tendo_sort_key<decltype(tendo_ld(T()))>::of(tendo_ld(x[(lo + i) * r.in_step]),
                                                                          c.descending != 0)
                            : ~(K)0;
            idx[i] = i;
        }
        __syncthreads();
        tendo_bitonic(keys, idx, p);
        if (scratch) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                tendo_pair<K> q = {keys[i], lo + idx[i]};
                scratch[j * r.len + lo + i] = q;
            }
        } else {
            int64_t o = tendo_order_out(r, c, off);
            for (int i = threadIdx.x; i < c.k; i += blockDim.x)
                tendo_order_put(r, c, o, i, x, idx[i]);
        }
        __syncthreads(); /* keys and idx are rewritten by the next tile */
    }
}

/* ---- long rows: merge passes ------------------------------------------------ */

/* The number of pairs of src[lo, hi), a sorted run, that go before q. */
template <typename K>
static __device__ __forceinline__ int64_t tendo_rank_in(const tendo_pair<K> *src, int64_t lo, int64_t hi,
                                                        tendo_pair<K> q)
{
    int64_t a = lo, b = hi;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (tendo_before(src[m].key, src[m].idx, q.key, q.idx))
            a = m + 1;
        else
            b = m;
    }
    return a - lo;
}

/* Merges the sorted runs of w pairs of every row of len (rows of them, at
 * j * len) pairwise into runs of 2w, src to dst: a thread per pair, which
 * lands after the pairs of its own run before it and the other run's
 * pairs that go before it. */
template <typename K>
__global__ void tendo_sort_merge(const tendo_pair<K> *src, tendo_pair<K> *dst, int64_t rows, int64_t len, int64_t w)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < rows * len;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t base = e / len * len, p = e - base, s = p / (2 * w) * (2 * w);
        int64_t mid = s + w < len ? s + w : len, end = s + 2 * w < len ? s + 2 * w : len;
        tendo_pair<K> q = src[e];
        int64_t at = p < mid ? p + tendo_rank_in(src + base, mid, end, q)
                             : s + (p - mid) + tendo_rank_in(src + base, s, mid, q);
        dst[base + at] = q;
    }
}

/* The first k of every sorted row of pairs (row j at j * len) to the
 * outputs: a thread per result. */
template <typename T, typename K>
__global__ void tendo_sort_emit(tendo__cu_rows r, tendo__cu_order_ctx c, const tendo_pair<K> *pairs)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < r.rows.numel * c.k;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = e / c.k, i = e - j * c.k;
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<int64_t>(r.rows, j, off);
        tendo_order_put(r, c, tendo_order_out(r, c, off), i, (const T *)r.rows.base[1] + off[1],
                        pairs[j * r.len + i].idx);
    }
}

/* The smallest power of two >= n (n >= 1). */
static inline int tendo_pow2(int64_t n)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

template <typename T>
static int tendo_sort_launch(const tendo__cu_rows *r, const tendo__cu_order_ctx *c)
{
    typedef typename tendo_sort_key<decltype(tendo_ld(T()))>::K K;
    int64_t rows = r->rows.numel, tile = r->len < TENDO__CU_SORT_TILE ? r->len : TENDO__CU_SORT_TILE;
    int p = tendo_pow2(tile), threads = p / 2 < 32 ? 32 : p / 2 > TENDO_THREADS ? TENDO_THREADS : p / 2;
    size_t shmem = (size_t)p * (sizeof(K) + sizeof(int));
    tendo_pair<K> *a = (tendo_pair<K> *)c->scratch, *b = a ? a + rows * r->len : NULL;
    cudaError_t e;

    if (rows == 0 || r->len == 0 || c->k == 0)
        return 0;
    if (r->len <= TENDO__CU_SORT_TILE) {
        TENDO_LAUNCH(tendo_blocks(rows, 1), threads, shmem, cudaStreamPerThread, tendo_sort_tiles<T, K>)(*r, *c, tile, p, (tendo_pair<K> *)NULL);
        return tendo_launched();
    }
    if (!a)
        return (int)cudaErrorInvalidValue; /* the caller owes the scratch */
    TENDO_LAUNCH(tendo_blocks(rows * ((r->len + tile - 1) / tile), 1), threads, shmem, cudaStreamPerThread, tendo_sort_tiles<T, K>)(*r, *c, tile, p, a);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return (int)e;
    for (int64_t w = tile; w < r->len; w *= 2) {
        tendo_pair<K> *t;
        TENDO_LAUNCH(tendo_blocks(rows * r->len, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_sort_merge<K>)(a, b, rows, r->len, w);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return (int)e;
        t = a;
        a = b;
        b = t;
    }
    TENDO_LAUNCH(tendo_blocks(rows * c->k, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_sort_emit<T, K>)(*r, *c, a);
    return tendo_launched();
}

/* ---- cumsum ----------------------------------------------------------------- */

/* The exclusive scan of v across the block (blockDim.x a multiple of 32):
 * the sum of the vs of the threads before this one (never a sum minus v,
 * which an infinity would turn into NaN); *total gets the block's sum.
 * sh holds 32 As; every thread must call. */
template <typename A>
static __device__ __forceinline__ A tendo_block_scan(A v, A *sh, A *total)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    A before;

    for (int o = 1; o < 32; o <<= 1) { /* inclusive, within the warp */
        A t = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o)
            v += t;
    }
    before = __shfl_up_sync(0xffffffffu, v, 1);
    __syncthreads(); /* sh may still be read by a previous call */
    if (lane == 31)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) { /* the warps' totals, scanned inclusively */
        A s = lane < nwarps ? sh[lane] : (A)0;
        for (int o = 1; o < 32; o <<= 1) {
            A t = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o)
                s += t;
        }
        sh[lane] = s;
    }
    __syncthreads();
    *total = sh[nwarps - 1];
    if (lane == 0)
        return warp ? sh[warp - 1] : (A)0;
    return warp ? sh[warp - 1] + before : before;
}

#define TENDO_CUMSUM_ITEMS 8 /* consecutive elements per thread per tile */

/* A is the accumulator (double, or uint64_t wrapping), C what it is
 * rounded to first (the CPU's compute type; int64_t for the integers), O
 * the output's element type. */
template <typename T, typename A, typename C, typename O>
__global__ void __launch_bounds__(TENDO_THREADS) tendo_cumsum_rows(tendo__cu_rows r)
{
    __shared__ A sh[32];
    const int64_t per = (int64_t)blockDim.x * TENDO_CUMSUM_ITEMS;

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) { /* uniform per block */
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<int64_t>(r.rows, j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        O *y = (O *)r.rows.base[0] + off[0];
        A carry = 0;

        for (int64_t lo = 0; lo < r.len; lo += per) {
            int64_t i0 = lo + (int64_t)threadIdx.x * TENDO_CUMSUM_ITEMS;
            A v[TENDO_CUMSUM_ITEMS], run = 0, total, before;
#pragma unroll
            for (int i = 0; i < TENDO_CUMSUM_ITEMS; i++) {
                if (i0 + i < r.len)
                    run += (A)tendo_ld(x[(i0 + i) * r.in_step]);
                v[i] = run;
            }
            before = carry + tendo_block_scan(run, sh, &total);
#pragma unroll
            for (int i = 0; i < TENDO_CUMSUM_ITEMS; i++)
                if (i0 + i < r.len)
                    y[(i0 + i) * r.out_step] = tendo_st<O>((C)(before + v[i]));
            carry += total;
        }
    }
}

/* Threads for a block per row of len: a multiple of 32, at most TENDO_THREADS. */
static inline int tendo_row_threads(int64_t len)
{
    return len >= TENDO_THREADS ? TENDO_THREADS : len <= 32 ? 32 : (int)((len + 31) / 32 * 32);
}

template <typename T, typename A, typename C, typename O>
static int tendo_cumsum_launch(const tendo__cu_rows *r)
{
    if (r->rows.numel == 0 || r->len == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(r->rows.numel, 1), tendo_row_threads((r->len + TENDO_CUMSUM_ITEMS - 1) / TENDO_CUMSUM_ITEMS), 0, cudaStreamPerThread, tendo_cumsum_rows<T, A, C, O>)(*r);
    return tendo_launched();
}

/* ---- var and std ------------------------------------------------------------ */

/* C is the dtype's compute type (the result is rounded to it first). */
template <typename T, typename C>
__global__ void __launch_bounds__(TENDO_THREADS) tendo_var_rows(tendo__cu_rows r, tendo__cu_var_ctx c)
{
    __shared__ double sh[32];
    const int64_t n = r.len;
    const double div = (double)n - (double)c.correction > 0 ? (double)n - (double)c.correction : 0;

    for (int64_t j = blockIdx.x; j < r.rows.numel; j += gridDim.x) { /* uniform per block */
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<int64_t>(r.rows, j, off);
        const T *x = (const T *)r.rows.base[1] + off[1];
        double s = 0, sd = 0, sdd = 0, mean, m2 = 0, var;

        for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
            s += (double)tendo_ld(x[k * r.in_step]);
        s = tendo_block_reduce(s, tendo_fold_sum(), 0.0, sh);
        mean = n ? s / (double)n : 0;
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
            double d = (double)tendo_ld(x[k * r.in_step]) - mean;
            sd += d;
            sdd += d * d;
        }
        sd = tendo_block_reduce(sd, tendo_fold_sum(), 0.0, sh);
        sdd = tendo_block_reduce(sdd, tendo_fold_sum(), 0.0, sh);
        if (n) {
            m2 = sdd - sd * sd / (double)n;
            if (m2 < 0) /* rounding; a NaN stays */
                m2 = 0;
        }
        var = m2 / div; /* N - correction <= 0: 0/0 = NaN, else inf (torch's rule) */
        if (threadIdx.x == 0)
            ((T *)r.rows.base[0])[off[0]] = tendo_st<T>((C)(c.sqrt ? tendo_sqrt(var) : var));
    }
}

template <typename T>
static int tendo_var_launch(const tendo__cu_rows *r, const tendo__cu_var_ctx *c)
{
    typedef decltype(tendo_ld(T())) C;

    if (r->rows.numel == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(r->rows.numel, 1), tendo_row_threads(r->len), 0, cudaStreamPerThread, tendo_var_rows<T, C>)(*r, *c);
    return tendo_launched();
}

#endif /* TENDO_KERNELS_ORDER_CUH */
