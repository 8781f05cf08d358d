/* src/cpu/attention_back.c - attention's gradients on the CPU (the device
 * table's attention_backward; core/transformer.c has checked the
 * arguments).
 *
 * Flash attention's backward: nothing of size Lq x Lk is ever held.  A
 * task is one (batch, kv head); its dK and dV are its own, summed over the
 * query heads that share the kv head (grouped-query attention), so no two
 * tasks write one element, and every element is summed in one fixed order
 * whatever the thread count.  For each query head of the group and each
 * block of BQ queries:
 *   1. each query's log-sum-exp, recomputed blockwise with the forward's
 *      online softmax (lse = m + log l), and D = rowsum(dO * O);
 *   2. for each block of BK keys, P = exp(S - lse) from the scores S =
 *      scale Q K^T (+ mask, causal -inf), then dV += P^T dO, dP = dO V^T,
 *      dS = P (dP - D), dQ += scale dS K and dK += scale dS^T Q.
 * The memory is O(L D): the operands, their gradients, and 2 BQ x BK
 * values per task.  The operands are dense compute-type values
 * (cpu/attention.h); the gradients accumulate in the compute type and are
 * narrowed once.  A query that sees no key (its forward row is NaN) has
 * NaN gradients, as the softmax it divides by zero has. */
#include <string.h>

#include "core/device.h"
#include "cpu/attention.h"
#include "cpu/cpu.h"

#define BQ 64  /* queries per block */
#define BK 128 /* keys per block */

/* One backward: the checked problem, its dense compute-type operands and
 * the zeroed gradients (NULL where not wanted). */
typedef struct {
    const tendo__attn *a;
    const void *q, *k, *v, *o, *dout;
    const char *mask;
    const tendo__traits *mt;
    void *dq, *dk, *dv;
} back_job;

/* S (bq x bk, row stride BK) = the scores of queries [i0, i0 + bq) of Q
 * (their rows) against keys [j0, j0 + bk) of K: scale Q K^T, plus the
 * mask, -inf past the causal limit.  mrow: BK values of scratch. */
#define SCORES(T, SFX)                                                                                    \
    static void scores_##SFX(const back_job *j, const T *Q, const T *K, int64_t moff, int64_t i0,       \
                             int64_t j0, int64_t bq, int64_t bk, T *S, T *mrow)                         \
    {                                                                                                   \
        const tendo__attn *a = j->a;                                                                    \
        gemm_##SFX(false, true, bq, bk, a->d, (T)a->scale, Q, a->d, K + j0 * a->d, a->d, 0, S, BK);     \
        for (int64_t r = 0; r < bq; r++)                                                                \
            row_bias_##SFX(a, j->mask, j->mt, moff, i0 + r, j0, bk, S + r * BK, mrow);                  \
    }

/* The task of (batch b, kv head hk); false on out of memory. */
#define BACK_TASK(T, SFX, EXP, LOG)                                                                       \
    static bool back_##SFX(const back_job *j, int64_t b, int64_t hk)                                    \
    {                                                                                                   \
        const tendo__attn *a = j->a;                                                                    \
        const int64_t lq = a->lq, lk = a->lk, d = a->d, dv = a->dv, group = a->hq / a->hkv;             \
        const int64_t kv = b * a->hkv + hk;                                                             \
        const T *K = (const T *)j->k + kv * lk * d, *V = (const T *)j->v + kv * lk * dv, sc = (T)a->scale; \
        T *dK = j->dk ? (T *)j->dk + kv * lk * d : NULL, *dV = j->dv ? (T *)j->dv + kv * lk * dv : NULL; \
        tendo__pool_block *blk;                                                                         \
        T *S = tendo__gemm_scratch((size_t)(2 * BQ * BK + 4 * BQ + BK) * sizeof(T), &blk);             \
        T *dP, *lse, *D, *m, *l, *mrow;                                                                 \
                                                                                                        \
        if (!S)                                                                                         \
            return false;                                                                               \
        dP = S + BQ * BK;                                                                               \
        lse = dP + BQ * BK;                                                                             \
        D = lse + BQ;                                                                                   \
        m = D + BQ;                                                                                     \
        l = m + BQ;                                                                                     \
        mrow = l + BQ;                                                                                  \
        for (int64_t h = hk * group; h < (hk + 1) * group; h++) {                                       \
            int64_t moff = j->mask ? mask_offset(a, b, h) : 0;                                          \
            for (int64_t i0 = 0; i0 < lq; i0 += BQ) {                                                   \
                const int64_t i1 = i0 + BQ < lq ? i0 + BQ : lq, bq = i1 - i0, row0 = (b * a->hq + h) * lq + i0; \
                const T *Q = (const T *)j->q + row0 * d, *O = (const T *)j->o + row0 * dv;              \
                const T *dO = (const T *)j->dout + row0 * dv;                                           \
                T *dQ = j->dq ? (T *)j->dq + row0 * d : NULL;                                           \
                int64_t jend = lk;                                                                      \
                                                                                                        \
                if (a->causal) /* the last key the last query sees, plus one */                         \
                    jend = i1 + lk - lq < lk ? i1 + lk - lq : lk;                                       \
                /* 1: lse and D */                                                                      \
                for (int64_t r = 0; r < bq; r++) {                                                      \
                    T dot = 0;                                                                          \
                    for (int64_t c = 0; c < dv; c++)                                                    \
                        dot += dO[r * dv + c] * O[r * dv + c];                                          \
                    D[r] = dot;                                                                         \
                    m[r] = -(T)INFINITY;                                                                \
                    l[r] = 0;                                                                           \
                }                                                                                       \
                for (int64_t j0 = 0; j0 < jend; j0 += BK) {                                             \
                    const int64_t bk = jend - j0 < BK ? jend - j0 : BK;                                 \
                    scores_##SFX(j, Q, K, moff, i0, j0, bq, bk, S, mrow);                               \
                    for (int64_t r = 0; r < bq; r++) {                                                  \
                        T *s = S + r * BK, mx = row_max_##SFX(s, bk), mnew = mx > m[r] ? mx : m[r];     \
                        if (mnew == -(T)INFINITY)                                                       \
                            continue;                                                                   \
                        l[r] = l[r] * EXP(m[r] - mnew) + exp_sum_##SFX(s, mnew, bk);                    \
                        m[r] = mnew;                                                                    \
                    }                                                                                   \
                }                                                                                       \
                for (int64_t r = 0; r < bq; r++)                                                        \
                    lse[r] = m[r] + LOG(l[r]);                                                          \
                /* 2: the gradients, key block by key block */                                          \
                for (int64_t j0 = 0; j0 < jend; j0 += BK) {                                             \
                    const int64_t bk = jend - j0 < BK ? jend - j0 : BK;                                 \
                    scores_##SFX(j, Q, K, moff, i0, j0, bq, bk, S, mrow);                               \
                    for (int64_t r = 0; r < bq; r++)                                                    \
                        (void)exp_sum_##SFX(S + r * BK, lse[r], bk); /* P */                            \
                    if (dV)                                                                             \
                        gemm_##SFX(true, false, bk, dv, bq, 1, S, BK, dO, dv, 1, dV + j0 * dv, dv);     \
                    if (!dQ && !dK)                                                                     \
                        continue;                                                                       \
                    gemm_##SFX(false, true, bq, bk, dv, 1, dO, dv, V + j0 * dv, dv, 0, dP, BK);         \
                    for (int64_t r = 0; r < bq; r++) {                                                  \
                        T *p = S + r * BK, *ds = dP + r * BK, dr = D[r];                                \
                        for (int64_t c = 0; c < bk; c++)                                                \
                            ds[c] = p[c] * (ds[c] - dr);                                                \
                    }                                                                                   \
                    if (dQ)                                                                             \
                        gemm_##SFX(false, false, bq, d, bk, sc, dP, BK, K + j0 * d, d, 1, dQ, d);       \
                    if (dK)                                                                             \
                        gemm_##SFX(true, false, bk, d, bq, sc, dP, BK, Q, d, 1, dK + j0 * d, d);        \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
        tendo__gemm_scratch_free(blk);                                                                  \
        return true;                                                                                    \
    }

SCORES(float, f32)
SCORES(double, f64)
BACK_TASK(float, f32, expf, logf)
BACK_TASK(double, f64, exp, log)

bool tendo__cpu_attention_backward(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                   const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask,
                                   const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                                   tendo__tensor *grads[3])
{
    const tendo__traits *t = tendo__traits_of(q->dtype);
    const tendo__tensor *like[3] = {q, k, v};
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE, failed = false, reported = false;
    tendo__pool_block *blks[5] = {NULL}, *gblk[3] = {NULL};
    const void *src[5] = {NULL};
    void *g[3] = {NULL};
    int64_t tasks = a->batch * a->hkv;
    int threads = tendo__threads();
    back_job job = {.a = a, .mask = mask ? (const char *)tendo__tensor_data(mask) : NULL,
                    .mt = mask ? tendo__traits_of(mask->dtype) : NULL};

    grads[0] = grads[1] = grads[2] = NULL;
    /* the gradients: zeroed compute-type sums (a wanted one's own memory
     * when it is its own compute type) */
    for (int i = 0; i < 3 && !failed; i++) {
        size_t bytes;

        if (!want[i])
            continue;
        if (!(grads[i] = tendo__tensor_new(op, q->dtype, like[i]->ndim, like[i]->shape, q->storage->device))) {
            failed = reported = true; /* tendo__tensor_new said why */
            break;
        }
        bytes = (size_t)grads[i]->numel * t->compute_size;
        g[i] = t->own_compute ? tendo__tensor_data(grads[i]) : tendo__gemm_scratch(bytes, &gblk[i]);
        if (!g[i])
            failed = true;
        else
            memset(g[i], 0, bytes);
    }
    {
        const tendo__tensor *ops[5] = {q, k, v, out, dout};

        for (int i = 0; i < 5 && !failed; i++)
            failed = !(src[i] = tendo__attn_dense(ops[i], t, &blks[i]));
    }
    job.q = src[0], job.k = src[1], job.v = src[2], job.o = src[3], job.dout = src[4];
    job.dq = g[0], job.dk = g[1], job.dv = g[2];
    tendo__blas_one_thread();
    if (tasks * (a->lq + 1) * (a->lk + 1) * (a->d + a->dv + 1) < ((int64_t)1 << 16))
        threads = 1;
    if (threads > tasks)
        threads = tasks > 0 ? (int)tasks : 1;
    if (failed)
        tasks = 0;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(dynamic) reduction(|| : failed))
    for (int64_t i = 0; i < tasks; i++)
        if (!(dbl ? back_f64(&job, i / a->hkv, i % a->hkv) : back_f32(&job, i / a->hkv, i % a->hkv)))
            failed = true;
    for (int i = 0; i < 3 && !failed; i++)
        if (grads[i] && !t->own_compute)
            t->narrow(g[i], tendo__tensor_data(grads[i]), 1, grads[i]->numel);
    for (int i = 0; i < 5; i++)
        tendo__gemm_scratch_free(blks[i]);
    for (int i = 0; i < 3; i++)
        tendo__gemm_scratch_free(gblk[i]);
    if (!failed)
        return true;
    if (!reported)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for attention's backward over q %s",
                    tendo__shape_str(q->ndim, q->shape).s);
    for (int i = 0; i < 3; i++) {
        tendo__tensor_free(grads[i]);
        grads[i] = NULL;
    }
    return false;
}
