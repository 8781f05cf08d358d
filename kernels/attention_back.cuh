/* kernels/attention_back.cuh - the kernels of attention's gradients
 * (launched by kernels/attention.cu; the ABI is kernels/host/attention.h,
 * tendo__cu_attn_back).  T is the compute type; the operands are dense.
 *
 * Flash attention's backward in two kernels, neither holding more than a
 * tile of scores, and neither racing: every gradient element is summed by
 * one thread in a fixed order (no atomics), so results do not change from
 * run to run.
 *   k_attn_back_q: one block per (batch, query head, tile of bq queries):
 *     each query's log-sum-exp (the forward's online softmax, again) and
 *     D = rowsum(dO * O), stored for the other kernel; then, tile of keys
 *     by tile, dS = P (dO V^T - D) with P = exp(scale Q K^T + mask - lse),
 *     and dQ += scale dS K.
 *   k_attn_back_kv: one block per (batch, kv head, tile of bk2 keys): for
 *     every query head of the group and every tile of bq2 queries that
 *     sees a key of the tile, P and dS again, dV += P^T dO and dK += scale
 *     dS^T Q; grouped-query heads sum in the block.
 * A query that sees no key has NaN gradients, as on the CPU
 * (src/cpu/attention_back.c). */
#ifndef TENDO_KERNELS_ATTENTION_BACK_CUH
#define TENDO_KERNELS_ATTENTION_BACK_CUH

#include "attention.cuh"

static __device__ __forceinline__ float tendo_attn_log(float x) { return logf(x); }
static __device__ __forceinline__ double tendo_attn_log(double x) { return log(x); }

/* Shared memory (in Ts) of k_attn_back_q: Q, dO, the key and value tiles
 * (rows padded by one), the tile's dS, dQ's sums, and m, l, D per query. */
static inline __host__ __device__ int64_t tendo_attn_back_q_shared(int64_t bq, int64_t bk, int64_t d, int64_t dv)
{
    return bq * d + bq * dv + bk * (d + 1) + bk * (dv + 1) + bq * bk + bq * d + 3 * bq;
}

/* Shared memory of k_attn_back_kv: the key and value tiles, Q and dO
 * (padded), P and dS, dK's and dV's sums, and lse and D per query. */
static inline __host__ __device__ int64_t tendo_attn_back_kv_shared(int64_t bq, int64_t bk, int64_t d, int64_t dv)
{
    return bk * (d + 1) + bk * (dv + 1) + bq * (d + 1) + bq * (dv + 1) + 2 * bq * bk + bk * d + bk * dv + 2 * bq;
}

/* The score of query i0 + r (its row qr) and key j0 + c (its row kr): scale
 * q.k, plus the mask, -inf past the causal limit. */
template <typename T>
static __device__ __forceinline__ T tendo_attn_back_score(const tendo__cu_attn &a, const T *M, int64_t moff,
                                                          const T *qr, const T *kr, int d, int64_t i, int64_t j)
{
    T dot = 0, s;

    for (int x = 0; x < d; x++)
        dot += qr[x] * kr[x];
    s = (T)a.scale * dot;
    if (M)
        s += M[moff + i * a.mask_q + j * a.mask_k];
    if (a.causal && j > i + a.lk - a.lq)
        s = -(T)INFINITY;
    return s;
}

/* P = exp(score - lse) of query i (row qr, its gradient's row dor) and
 * key j (rows kr, vr), returned, and dS = P (dO . v - D) into *ds. */
template <typename T>
static __device__ __forceinline__ T tendo_attn_back_pds(const tendo__cu_attn &a, const T *M, int64_t moff,
                                                        const T *qr, const T *kr, int d, const T *dor, const T *vr,
                                                        int dv, int64_t i, int64_t j, T lse, T D, T *ds)
{
    T p = tendo_attn_exp(tendo_attn_back_score(a, M, moff, qr, kr, d, i, j) - lse), dp = 0;

    for (int x = 0; x < dv; x++)
        dp += dor[x] * vr[x];
    *ds = p * (dp - D);
    return p;
}

/* Both kernels bound to one block an SM: ptxas then keeps their 64-bit
 * loop state in registers (at the default it spills some; t-ptxas checks). */
template <typename T>
__global__ void __launch_bounds__(TENDO_ATTN_THREADS, 1) k_attn_back_q(tendo__cu_attn_back g)
{
    const tendo__cu_attn &a = g.a;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = TENDO_ATTN_THREADS / 32;
    const int BQ = a.bq, BK = a.bk, d = (int)a.d, dv = (int)a.dv;
    const int64_t lq = a.lq, lk = a.lk;
    const unsigned nqt = (unsigned)((lq + BQ - 1) / BQ), blk = blockIdx.x, hq = (unsigned)a.hq;
    const unsigned qt = blk % nqt, h = blk / nqt % hq, b = blk / nqt / hq, hk = h / (hq / (unsigned)a.hkv);
    const int64_t i0 = (int64_t)qt * BQ, row0 = ((int64_t)b * a.hq + h) * lq + i0;
    const int bq = (int)(lq - i0 < BQ ? lq - i0 : BQ);
    const T *Q = (const T *)a.q + row0 * d, *O = (const T *)g.o + row0 * dv, *dO = (const T *)g.dout + row0 * dv;
    const T *K = (const T *)a.k + ((int64_t)b * a.hkv + hk) * lk * d;
    const T *V = (const T *)a.v + ((int64_t)b * a.hkv + hk) * lk * dv;
    const T *M = (const T *)a.mask;
    T *Qs = (T *)(void *)TENDO_DYN_SHARED, *dOs = Qs + BQ * d, *Ks = dOs + BQ * dv, *Vs = Ks + BK * (d + 1);
    T *dS = Vs + BK * (dv + 1), *acc = dS + BQ * BK, *m = acc + BQ * d, *l = m + BQ, *D = l + BQ;
    int64_t moff = M ? tendo_attn_mask_offset(a, b, h) : 0, jend = lk;

    tendo_attn_stage(Qs, d, Q, bq, d);
    tendo_attn_stage(dOs, dv, dO, bq, dv);
    for (int e = tid; e < bq * d; e += TENDO_ATTN_THREADS)
        acc[e] = 0;
    for (int r = warp; r < bq; r += nwarps) { /* D = rowsum(dO * O), a warp a row */
        T s = 0;
        for (int c = lane; c < dv; c += 32)
            s += dO[(int64_t)r * dv + c] * O[(int64_t)r * dv + c];
        s = tendo_warp_reduce(s, tendo_attn_sum());
        if (lane == 0) {
            D[r] = s;
            m[r] = -(T)INFINITY;
            l[r] = 0;
        }
    }
    if (a.causal) /* the last key the last query sees, plus one */
        jend = i0 + bq + lk - lq < lk ? i0 + bq + lk - lq : lk;
    __syncthreads();

    /* 1: the log-sum-exp of each query's scores */
    for (int64_t j0 = 0; j0 < jend; j0 += BK) {
        const int bk = (int)(jend - j0 < BK ? jend - j0 : BK);

        tendo_attn_stage(Ks, d + 1, K + j0 * d, bk, d);
        __syncthreads();
        for (int e = tid; e < bq * bk; e += TENDO_ATTN_THREADS)
            dS[e / bk * BK + e % bk] = tendo_attn_back_score(a, M, moff, Qs + e / bk * d, Ks + e % bk * (d + 1), d,
                                                             i0 + e / bk, j0 + e % bk);
        __syncthreads();
        for (int r = warp; r < bq; r += nwarps) {
            T *sr = dS + r * BK, mold = m[r], mx = -(T)INFINITY, mnew, sum = 0;

            for (int j = lane; j < bk; j += 32)
                mx = sr[j] > mx ? sr[j] : mx;
            mx = tendo_warp_reduce(mx, tendo_attn_max());
            mnew = mx > mold ? mx : mold;
            if (mnew == -(T)INFINITY)
                continue;
            for (int j = lane; j < bk; j += 32)
                sum += tendo_attn_exp(sr[j] - mnew);
            sum = tendo_warp_reduce(sum, tendo_attn_sum());
            if (lane == 0) {
                l[r] = l[r] * tendo_attn_exp(mold - mnew) + sum;
                m[r] = mnew;
            }
        }
        __syncthreads();
    }
    for (int r = tid; r < bq; r += TENDO_ATTN_THREADS) {
        l[r] = m[r] + tendo_attn_log(l[r]); /* l holds lse from here */
        ((T *)g.lse)[row0 + r] = l[r];
        ((T *)g.dd)[row0 + r] = D[r];
    }
    __syncthreads();

    /* 2: dS and dQ, tile of keys by tile */
    for (int64_t j0 = 0; j0 < jend && g.dq; j0 += BK) {
        const int bk = (int)(jend - j0 < BK ? jend - j0 : BK);

        tendo_attn_stage(Ks, d + 1, K + j0 * d, bk, d);
        tendo_attn_stage(Vs, dv + 1, V + j0 * dv, bk, dv);
        __syncthreads();
        for (int e = tid; e < bq * bk; e += TENDO_ATTN_THREADS) {
            int r = e / bk, c = e % bk;

            tendo_attn_back_pds(a, M, moff, Qs + r * d, Ks + c * (d + 1), d, dOs + r * dv, Vs + c * (dv + 1), dv,
                                i0 + r, j0 + c, l[r], D[r], &dS[r * BK + c]);
        }
        __syncthreads();
        for (int e = tid; e < bq * d; e += TENDO_ATTN_THREADS) {
            int r = e / d, x = e % d;
            T s = 0;

            for (int c = 0; c < bk; c++)
                s += dS[r * BK + c] * Ks[c * (d + 1) + x];
            acc[e] += (T)a.scale * s;
        }
        __syncthreads();
    }
    if (g.dq)
        for (int e = tid; e < bq * d; e += TENDO_ATTN_THREADS)
            ((T *)g.dq)[row0 * d + e] = acc[e];
}

template <typename T>
__global__ void __launch_bounds__(TENDO_ATTN_THREADS, 1) k_attn_back_kv(tendo__cu_attn_back g)
{
    const tendo__cu_attn &a = g.a;
    const int tid = threadIdx.x, BQ = g.bq2, BK = g.bk2, d = (int)a.d, dv = (int)a.dv;
    const int64_t lq = a.lq, lk = a.lk, group = a.hq / a.hkv;
    const unsigned nkt = (unsigned)((lk + BK - 1) / BK), blk = blockIdx.x, hkv = (unsigned)a.hkv;
    const unsigned kt = blk % nkt, hk = blk / nkt % hkv, b = blk / nkt / hkv;
    const int64_t j0 = (int64_t)kt * BK, kv0 = ((int64_t)b * a.hkv + hk) * lk + j0;
    const int bk = (int)(lk - j0 < BK ? lk - j0 : BK);
    const T *M = (const T *)a.mask;
    T *Ks = (T *)(void *)TENDO_DYN_SHARED, *Vs = Ks + BK * (d + 1), *Qs = Vs + BK * (dv + 1), *dOs = Qs + BQ * (d + 1);
    T *P = dOs + BQ * (dv + 1), *dS = P + BQ * BK, *dK = dS + BQ * BK, *dV = dK + BK * d, *lse = dV + BK * dv;
    T *D = lse + BQ;
    /* the first query that sees key j0: i + lk - lq >= j0 */
    int64_t ifirst = a.causal && j0 - (lk - lq) > 0 ? j0 - (lk - lq) : 0;

    tendo_attn_stage(Ks, d + 1, (const T *)a.k + kv0 * d, bk, d);
    tendo_attn_stage(Vs, dv + 1, (const T *)a.v + kv0 * dv, bk, dv);
    for (int e = tid; e < bk * d; e += TENDO_ATTN_THREADS)
        dK[e] = 0;
    for (int e = tid; e < bk * dv; e += TENDO_ATTN_THREADS)
        dV[e] = 0;
    for (int64_t h = hk * group; h < (int64_t)(hk + 1) * group; h++) {
        /* the head's mask, from its first element (offsets below within it) */
        const T *Mh = M ? M + tendo_attn_mask_offset(a, b, (unsigned)h) : NULL;

        for (int64_t i0 = ifirst; i0 < lq; i0 += BQ) {
            const int bq = (int)(lq - i0 < BQ ? lq - i0 : BQ);
            const int64_t row0 = ((int64_t)b * a.hq + h) * lq + i0;

            __syncthreads(); /* the last tile's sums are done with Qs, dOs, P and dS */
            tendo_attn_stage(Qs, d + 1, (const T *)a.q + row0 * d, bq, d);
            tendo_attn_stage(dOs, dv + 1, (const T *)g.dout + row0 * dv, bq, dv);
            tendo_attn_stage(lse, bq, (const T *)g.lse + row0, 1, bq);
            tendo_attn_stage(D, bq, (const T *)g.dd + row0, 1, bq);
            __syncthreads();
            for (int e = tid; e < bq * bk; e += TENDO_ATTN_THREADS) {
                int r = e / bk, c = e % bk;

                P[r * BK + c] = tendo_attn_back_pds(a, Mh, 0, Qs + r * (d + 1), Ks + c * (d + 1), d,
                                                    dOs + r * (dv + 1), Vs + c * (dv + 1), dv, i0 + r, j0 + c,
                                                    lse[r], D[r], &dS[r * BK + c]);
            }
            __syncthreads();
            for (int e = tid; e < bk * dv; e += TENDO_ATTN_THREADS) {
                int c = e / dv, x = e % dv;
                T s = 0;

                for (int r = 0; r < bq; r++)
                    s += P[r * BK + c] * dOs[r * (dv + 1) + x];
                dV[e] += s;
            }
            for (int e = tid; e < bk * d; e += TENDO_ATTN_THREADS) {
                int c = e / d, x = e % d;
                T s = 0;

                for (int r = 0; r < bq; r++)
                    s += dS[r * BK + c] * Qs[r * (d + 1) + x];
                dK[e] += (T)a.scale * s;
            }
        }
    }
    for (int e = tid; e < bk * d; e += TENDO_ATTN_THREADS)
        ((T *)g.dk)[kv0 * d + e] = dK[e];
    for (int e = tid; e < bk * dv; e += TENDO_ATTN_THREADS)
        ((T *)g.dv)[kv0 * dv + e] = dV[e];
}

#endif /* TENDO_KERNELS_ATTENTION_BACK_CUH */
