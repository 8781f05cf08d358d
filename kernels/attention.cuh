/* kernels/attention.cuh - the kernels of rope and attention (launched by
 * kernels/attention.cu; the ABI is kernels/host/attention.h).  T is the
 * compute type, float or double; the operands are dense.
 *
 * Attention is flash attention: one block per (batch, query head, tile of
 * bq queries).  The tile's queries sit in shared memory; the keys go by bk
 * at a time, staged through shared memory, and so do the values after
 * them, in the same buffer.  Each tile of scores S = scale * Q K^T (+
 * mask, causal -inf) updates a running row max m and row sum l (the online
 * softmax: a warp per row, reduced by shuffles); the output rows are
 * rescaled by exp(m_old - m_new) and P V added.  The output accumulates in
 * registers (R values per thread) when the tile's bq x dv outputs fit
 * them, else in the output itself, each element always by the same thread.
 * A block never holds more than bq x bk scores.  A row whose keys are all
 * masked gives NaN (0/0), with no keys at all (lk = 0) it is 0, as on the
 * CPU. */
#ifndef TENDO_KERNELS_ATTENTION_CUH
#define TENDO_KERNELS_ATTENTION_CUH

#include "tendo.cuh"
#include "host/attention.h"

#define TENDO_ATTN_THREADS 128

static __device__ __forceinline__ float tendo_attn_exp(float x) { return expf(x); }
static __device__ __forceinline__ double tendo_attn_exp(double x) { return exp(x); }

/* The folds of a row's max (NaN never wins, as on the CPU) and sum. */
struct tendo_attn_max {
    template <typename T> __device__ __forceinline__ T operator()(T x, T y) const { return y > x ? y : x; }
};
struct tendo_attn_sum {
    template <typename T> __device__ __forceinline__ T operator()(T x, T y) const { return x + y; }
};

/* The cosines (table[0, seq*half)) and sines (the next seq*half) of the
 * angles pos[s] * base^(-2i/rot), computed in double as on the CPU. */
template <typename T>
__global__ void k_rope_table(tendo__cu_rope r)
{
    int64_t half = r.rot / 2, n = r.seq * half, step = (int64_t)gridDim.x * blockDim.x;
    T *cs = (T *)r.table;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t s = i / half, p = i % half;
        double a = (double)r.pos[s] * exp(-(double)(2 * p) / (double)r.rot * log(r.base));
        cs[i] = (T)cos(a);
        cs[n + i] = (T)sin(a);
    }
}

/* One output element per thread: a rotated pair's member, or a copy. */
template <typename T>
__global__ void k_rope(tendo__cu_rope r)
{
    int64_t half = r.rot / 2, n = r.rows * r.hd, tab = r.seq * half, step = (int64_t)gridDim.x * blockDim.x;
    const T *x = (const T *)r.x, *cs = (const T *)r.table;
    T *out = (T *)r.out;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t c = i % r.hd, row = i - c, s = (i / r.hd) % r.seq, p, c0, c1;

        if (c >= r.rot) {
            out[i] = x[i];
            continue;
        }
        p = r.interleaved ? c / 2 : c % half;           /* the pair */
        c0 = r.interleaved ? 2 * p : p;                 /* its first member */
        c1 = r.interleaved ? 2 * p + 1 : p + half;      /* and its second */
        T a = x[row + c0], b = x[row + c1], co = cs[s * half + p], si = cs[tab + s * half + p];
        out[i] = c == c0 ? a * co - b * si : b * co + a * si;
    }
}

/* The mask's element offset of batch b and head h. */
static __device__ __forceinline__ int64_t tendo_attn_mask_offset(const tendo__cu_attn &a, unsigned b, unsigned h)
{
    int64_t off = h * a.mask_h;

    for (int d = a.nlead - 1; d >= 0; d--) { /* the batch's digits (batch < 2^31) */
        off += (int64_t)(b % (unsigned)a.lead[d]) * a.mask_lead[d];
        b /= (unsigned)a.lead[d];
    }
    return off;
}

/* rows x cols dense values of src into dst with row stride ld (a tile in
 * shared memory, rows padded where ld > cols), by the block's threads. */
template <typename T>
static __device__ __forceinline__ void tendo_attn_stage(T *dst, int ld, const T *src, int rows, int cols)
{
    for (int e = threadIdx.x; e < rows * cols; e += TENDO_ATTN_THREADS)
        dst[e / cols * ld + e % cols] = src[e];
}

/* Shared memory of one block (in Ts): the queries (bq x d), the key or
 * value tile (bk rows of max(d, dv) + 1: the pad keeps a warp's lanes,
 * reading one column of consecutive rows, off one bank), the scores (bq x
 * bk), and per query m, l and this tile's rescale factor. */
static inline __host__ __device__ int64_t tendo_attn_row(int64_t d, int64_t dv) { return (d > dv ? d : dv) + 1; }
static inline __host__ __device__ int64_t tendo_attn_shared(int64_t bq, int64_t bk, int64_t d, int64_t dv)
{
    return bq * d + bk * tendo_attn_row(d, dv) + bq * bk + 3 * bq;
}

/* Attention, one block per (batch, query head, tile of a.bq queries), in
 * grid order tile fastest.  The tile's output element e (< bq * dv) is
 * thread e % TENDO_ATTN_THREADS's throughout: with R > 0 it accumulates in
 * acc[e / TENDO_ATTN_THREADS], with R = 0 in the output itself. */
template <typename T, int R>
/* nvcc keeps its registers within 128 threads a block (t-ptxas checks). */
__global__ void __launch_bounds__(TENDO_ATTN_THREADS) k_attention(tendo__cu_attn a)
{
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = TENDO_ATTN_THREADS / 32;
    const int BQ = a.bq, BK = a.bk;
    /* d and dv fit an int (the tiles fit shared memory): 32-bit index math */
    const int d = (int)a.d, dv = (int)a.dv, kst = (int)tendo_attn_row(d, dv);
    const int64_t lq = a.lq, lk = a.lk;
    /* the block's (batch, head, tile): fewer than 2^31 blocks, so 32 bits */
    const unsigned nqt = (unsigned)((lq + BQ - 1) / BQ), blk = blockIdx.x, hq = (unsigned)a.hq;
    const unsigned qt = blk % nqt, h = blk / nqt % hq, b = blk / nqt / hq, hk = h / (hq / (unsigned)a.hkv);
    const int64_t i0 = (int64_t)qt * BQ;
    const int bq = (int)(lq - i0 < BQ ? lq - i0 : BQ), nout = bq * dv;
    const T *Q = (const T *)a.q + (((int64_t)b * a.hq + h) * lq + i0) * d;
    const T *K = (const T *)a.k + ((int64_t)b * a.hkv + hk) * lk * d;
    const T *V = (const T *)a.v + ((int64_t)b * a.hkv + hk) * lk * dv;
    const T *M = (const T *)a.mask;
    T *O = (T *)a.out + (((int64_t)b * a.hq + h) * lq + i0) * dv;
    T *Qs = (T *)(void *)TENDO_DYN_SHARED, *KVs = Qs + BQ * d, *S = KVs + BK * kst;
    T *m = S + BQ * BK, *l = m + BQ, *corr = l + BQ;
    T acc[R > 0 ? R : 1];
    int64_t moff = M ? tendo_attn_mask_offset(a, b, h) : 0, jend = lk;

    tendo_attn_stage(Qs, d, Q, bq, d);
    for (int r = tid; r < bq; r += TENDO_ATTN_THREADS) {
        m[r] = -(T)INFINITY;
        l[r] = 0;
    }
    if (R > 0) {
#pragma unroll
        for (int s = 0; s < (R > 0 ? R : 1); s++)
            acc[s] = 0;
    } else {
        for (int e = tid; e < nout; e += TENDO_ATTN_THREADS)
            O[e] = 0;
    }
    if (a.causal) /* the last key the last query sees, plus one */
        jend = i0 + bq + lk - lq < lk ? i0 + bq + lk - lq : lk;
    __syncthreads();

    for (int64_t j0 = 0; j0 < jend; j0 += BK) {
        const int bk = (int)(jend - j0 < BK ? jend - j0 : BK);

        tendo_attn_stage(KVs, kst, K + j0 * d, bk, d);
        __syncthreads();
        /* the tile's scores */
        for (int e = tid; e < bq * bk; e += TENDO_ATTN_THREADS) {
            int r = e / bk, j = e % bk;
            const T *qr = Qs + r * d, *kr = KVs + j * kst;
            T dot = 0, s;
            for (int c = 0; c < d; c++)
                dot += qr[c] * kr[c];
            s = (T)a.scale * dot;
            if (M)
                s += M[moff + (i0 + r) * a.mask_q + (j0 + j) * a.mask_k];
            if (a.causal && j0 + j > i0 + r + lk - lq)
                s = -(T)INFINITY;
            S[r * BK + j] = s;
        }
        __syncthreads();
        /* the values replace the keys while the warps turn scores into
         * probabilities, a row each */
        tendo_attn_stage(KVs, kst, V + j0 * dv, bk, dv);
        for (int r = warp; r < bq; r += nwarps) {
            T *sr = S + r * BK, mold = m[r], mx = -(T)INFINITY, mnew, cr, sum = 0;

            for (int j = lane; j < bk; j += 32)
                mx = sr[j] > mx ? sr[j] : mx; /* NaN never wins, as on the CPU */
            mx = tendo_warp_reduce(mx, tendo_attn_max());
            mnew = mx > mold ? mx : mold;
            if (mnew == -(T)INFINITY) { /* nothing visible yet: P is 0 */
                for (int j = lane; j < bk; j += 32)
                    sr[j] = 0;
                if (lane == 0)
                    corr[r] = 1;
                continue;
            }
            cr = tendo_attn_exp(mold - mnew);
            for (int j = lane; j < bk; j += 32) {
                T p = tendo_attn_exp(sr[j] - mnew);
                sr[j] = p;
                sum += p;
            }
            sum = tendo_warp_reduce(sum, tendo_attn_sum());
            if (lane == 0) {
                l[r] = l[r] * cr + sum;
                m[r] = mnew;
                corr[r] = cr;
            }
        }
        __syncthreads();
        /* O = O * corr + P V, each output element by its own thread */
        if (R > 0) {
#pragma unroll
            for (int s = 0; s < (R > 0 ? R : 1); s++) {
                int e = tid + s * TENDO_ATTN_THREADS;
                if (e < nout) {
                    int r = e / dv, c = e % dv;
                    const T *pr = S + r * BK;
                    T o = acc[s] * corr[r];
                    for (int j = 0; j < bk; j++)
                        o += pr[j] * KVs[j * kst + c];
                    acc[s] = o;
                }
            }
        } else {
            for (int e = tid; e < nout; e += TENDO_ATTN_THREADS) {
                int r = e / dv, c = e % dv;
                const T *pr = S + r * BK;
                T o = O[e] * corr[r];
                for (int j = 0; j < bk; j++)
                    o += pr[j] * KVs[j * kst + c];
                O[e] = o;
            }
        }
        __syncthreads();
    }

    /* divide by the row sums (0/0 = NaN where no key was visible); with no
     * keys at all the rows stay 0 */
    if (R > 0) {
#pragma unroll
        for (int s = 0; s < (R > 0 ? R : 1); s++) {
            int e = tid + s * TENDO_ATTN_THREADS;
            if (e < nout)
                O[e] = lk > 0 ? acc[s] / l[e / dv] : acc[s];
        }
    } else if (lk > 0) {
        for (int e = tid; e < nout; e += TENDO_ATTN_THREADS)
            O[e] /= l[e / dv];
    }
}

#endif /* TENDO_KERNELS_ATTENTION_CUH */
