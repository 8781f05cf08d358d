/* src/cpu/attention.c - rope and attention on the CPU (the device table's
 * entries; core/transformer.c has checked the arguments).
 *
 * Both read their operands as dense compute-type values (float, or double
 * for f64: a dtype that is its own compute type and contiguous is read in
 * place), compute, and narrow into a new tensor of the input's dtype.
 *
 * attention is blocked as flash attention is: for each (batch, head, block
 * of BQ queries), the keys go by in blocks of BK; each block's scores
 * S = scale * Q K^T (+ mask, causal -inf) update a running row max m and
 * row sum l (the online softmax), the output rows are rescaled by
 * exp(m_old - m_new) and P V added.  Memory is BQ x BK scores per task,
 * never Lq x Lk.  A row whose keys are all masked gives NaN (0/0), as
 * softmax(-inf, ..., -inf) does; with no keys at all (Lk = 0) it is 0.  Tasks are spread over the threads; each
 * output row is computed by one task in a fixed order, so results do not
 * depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/iter.h"
#include "cpu/attention.h"
#include "cpu/cpu.h"

#define BQ 128  /* queries per task */
#define BK 512 /* keys per step: whole k blocks (256) and slivers (32) of the packed K^T and V */

/* Dense compute-type operands (cpu/attention.h). */
void *tendo__attn_dense(const tendo__tensor *t, const tendo__traits *tr, tendo__pool_block **blk)
{
    size_t n = (size_t)t->numel;
    tendo__pool_block *rawblk;
    void *buf, *raw;

    *blk = NULL;
    if (tr->own_compute && tendo__tensor_contiguous(t))
        return tendo__tensor_data(t);
    if (!(buf = tendo__gemm_scratch(n * tr->compute_size, blk)))
        return NULL;
    if (tendo__tensor_contiguous(t)) {
        tr->widen(tendo__tensor_data(t), 1, buf, (int64_t)n);
        return buf;
    }
    if (!(raw = tendo__gemm_scratch(n * tr->size, &rawblk))) {
        tendo__gemm_scratch_free(*blk);
        *blk = NULL;
        return NULL;
    }
    tendo__copy_to_dense(t, raw);
    tr->widen(raw, 1, buf, (int64_t)n);
    tendo__gemm_scratch_free(rawblk);
    return buf;
}

/* ---- rope ------------------------------------------------------------------------ */

/* rope of rows rows of hd values of type T in place; cs[s][i] and
 * sn[s][i] (rot/2 per position) are the cosines and sines. */
#define ROPE_ROWS(NAME, T)                                                                      \
    static void NAME(T *x, int64_t rows, int64_t seq, int64_t hd, const T *cs, const T *sn,     \
                     int64_t rot, bool interleaved)                                             \
    {                                                                                           \
        int64_t half = rot / 2;                                                                 \
        int threads = rows * hd >= TENDO__PARALLEL_MIN ? tendo__threads() : 1;                  \
        (void)threads;                                                                          \
        TENDO__OMP(omp parallel for num_threads(threads) schedule(static))                      \
        for (int64_t r = 0; r < rows; r++) {                                                    \
            T *row = x + r * hd;                                                                \
            const T *c = cs + (r % seq) * half, *s = sn + (r % seq) * half;                     \
            for (int64_t i = 0; i < half; i++) {                                                \
                int64_t i0 = interleaved ? 2 * i : i, i1 = interleaved ? 2 * i + 1 : i + half;  \
                T a = row[i0], b = row[i1];                                                     \
                row[i0] = a * c[i] - b * s[i];                                                  \
                row[i1] = b * c[i] + a * s[i];                                                  \
            }                                                                                   \
        }                                                                                       \
    }

ROPE_ROWS(rope_rows_f32, float)
ROPE_ROWS(rope_rows_f64, double)

/* The angle of position p and pair i: p * base^(-2i/rot), in double. */
static double rope_angle(int64_t p, int64_t i, int64_t rot, double base)
{
    return (double)p * exp(-(double)(2 * i) / (double)rot * log(base));
}

static tendo__tensor *cpu_rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot,
                               double base, bool interleaved)
{
    const tendo__traits *t = tendo__traits_of(x->dtype);
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE;
    int64_t seq = x->shape[x->ndim - 2], hd = x->shape[x->ndim - 1], half = rot / 2;
    int64_t rows = seq > 0 && hd > 0 ? x->numel / hd : 0;
    size_t table = (size_t)(seq > 0 ? seq * half : 1) * t->compute_size;
    tendo__tensor *out = tendo__tensor_new(op, x->dtype, x->ndim, x->shape, x->storage->device), *pos;
    const int64_t *p;
    char *buf, *cs, *sn;

    if (!out)
        return NULL;
    if (!(pos = tendo__host_contiguous(op, positions))) {
        tendo__tensor_free(out);
        return NULL;
    }
    /* x's values (widened to a copy: x is read-only), then the cosines and sines */
    buf = tendo__malloc((size_t)(x->numel ? x->numel : 1) * t->compute_size + 2 * table);
    if (!buf) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a %lld x %lld rope", (long long)rows, (long long)hd);
        tendo__tensor_free(pos);
        tendo__tensor_free(out);
        return NULL;
    }
    cs = buf + (size_t)x->numel * t->compute_size;
    sn = cs + table;
    if (tendo__tensor_contiguous(x)) {
        t->widen(tendo__tensor_data(x), 1, buf, x->numel);
    } else { /* the raw elements in order, in out's memory, then widened */
        tendo__copy_to_dense(x, tendo__tensor_data(out));
        t->widen(tendo__tensor_data(out), 1, buf, x->numel);
    }
    p = tendo__tensor_data(pos);
    for (int64_t s = 0; s < seq; s++)
        for (int64_t i = 0; i < half; i++) {
            double a = rope_angle(p[s], i, rot, base);
            if (dbl) {
                ((double *)(void *)cs)[s * half + i] = cos(a);
                ((double *)(void *)sn)[s * half + i] = sin(a);
            } else {
                ((float *)(void *)cs)[s * half + i] = (float)cos(a);
                ((float *)(void *)sn)[s * half + i] = (float)sin(a);
            }
        }
    if (dbl)
        rope_rows_f64((double *)(void *)buf, rows, seq, hd, (const double *)(void *)cs, (const double *)(void *)sn,
                      rot, interleaved);
    else
        rope_rows_f32((float *)(void *)buf, rows, seq, hd, (const float *)(void *)cs, (const float *)(void *)sn, rot,
                      interleaved);
    t->narrow(buf, tendo__tensor_data(out), 1, x->numel);
    free(buf);
    tendo__tensor_free(pos);
    return out;
}

/* ---- attention ------------------------------------------------------------------- */

/* K^T and V of one (batch, kv head) packed for tendo__pgemm_packed (f32
 * with AVX-512 or AVX2): packed once per head instead of once per query block
 * and key block, as a BLAS call would. */
typedef struct {
    const void *kt, *v;
} packed_kv;

/* S (bq x bk, row stride BK) = scale * Q K^T over keys [j0, j0 + bk):
 * from the packed K^T of pk when there is one.  False on out of memory. */
static bool qk_f32(const tendo__attn *a, const float *Q, const float *K, const packed_kv *pk, int64_t j0, int64_t bq,
                   int64_t bk, float *S)
{
    if (pk)
        return tendo__pgemm_packed(TENDO__PGEMM_F32, bq, bk, a->d, (float)a->scale, Q, a->d, 1, pk->kt, a->lk,
                                   j0 / TENDO__PGEMM_NR, 0.0f, S, BK) == 0;
    gemm_f32(false, true, bq, bk, a->d, (float)a->scale, Q, a->d, K + j0 * a->d, a->d, 0, S, BK);
    return true;
}

/* O (bq x dv) += P V over keys [j0, j0 + bk), P in S (row stride BK). */
static bool pv_f32(const tendo__attn *a, const float *S, const float *V, const packed_kv *pk, int64_t j0, int64_t bq,
                   int64_t bk, float *O)
{
    if (pk) { /* the packed V's k blocks start at j0, a multiple of its block (BK is) */
        int64_t slivers = (a->dv + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR;
        return tendo__pgemm_packed(TENDO__PGEMM_F32, bq, a->dv, bk, 1.0f, S, BK, 1,
                                   (const uint32_t *)pk->v + j0 * slivers * TENDO__PGEMM_NR, a->dv, 0, 1.0f, O,
                                   a->dv) == 0;
    }
    gemm_f32(false, false, bq, a->dv, bk, 1, S, BK, V + j0 * a->dv, a->dv, 1, O, a->dv);
    return true;
}

static bool qk_f64(const tendo__attn *a, const double *Q, const double *K, const packed_kv *pk, int64_t j0, int64_t bq,
                   int64_t bk, double *S)
{
    (void)pk;
    gemm_f64(false, true, bq, bk, a->d, a->scale, Q, a->d, K + j0 * a->d, a->d, 0, S, BK);
    return true;
}

static bool pv_f64(const tendo__attn *a, const double *S, const double *V, const packed_kv *pk, int64_t j0, int64_t bq,
                   int64_t bk, double *O)
{
    (void)pk;
    gemm_f64(false, false, bq, a->dv, bk, 1, S, BK, V + j0 * a->dv, a->dv, 1, O, a->dv);
    return true;
}

/* One task of attention in type T: queries [i0, i0 + BQ) of head h of
 * batch b, into out's rows (dense [batch, hq, lq, dv]).  mask (or NULL)
 * is read through its dtype's widen.  False on out of memory. */
#define ATTEND_BLOCK(NAME, T, EXP, SFX)                                                              \
    static bool NAME(const tendo__attn *a, const T *q, const T *k, const T *v, const packed_kv *pk,  \
                     const char *mask, const tendo__traits *mt, T *out, int64_t b, int64_t h, int64_t i0) \
    {                                                                                                \
        const int64_t lq = a->lq, lk = a->lk, d = a->d, dv = a->dv, hk = h / (a->hq / a->hkv);       \
        const int64_t i1 = i0 + BQ < lq ? i0 + BQ : lq, bq = i1 - i0;                                \
        const T *Q = q + ((b * a->hq + h) * lq + i0) * d;                                            \
        const T *K = k + (b * a->hkv + hk) * lk * d, *V = v + (b * a->hkv + hk) * lk * dv;           \
        T *O = out + ((b * a->hq + h) * lq + i0) * dv;                                               \
        tendo__pool_block *sblk;                                                                     \
        T *S = tendo__gemm_scratch((size_t)(bq * BK + 2 * bq + BK) * sizeof(T), &sblk), *m, *l, *mrow; \
        int64_t moff = mask ? mask_offset(a, b, h) : 0, jend = lk;                                   \
        bool ok = true;                                                                              \
                                                                                                     \
        if (!S)                                                                                      \
            return false;                                                                            \
        if (pk)                                                                                      \
            pk += b * a->hkv + hk;                                                                   \
        m = S + bq * BK;                                                                             \
        l = m + bq;                                                                                  \
        mrow = l + bq;                                                                               \
        for (int64_t r = 0; r < bq; r++) {                                                           \
            m[r] = -(T)INFINITY;                                                                     \
            l[r] = 0;                                                                                \
        }                                                                                            \
        memset(O, 0, (size_t)(bq * dv) * sizeof(T));                                                 \
        if (a->causal) /* the last key the last query sees, plus one */                              \
            jend = i1 + lk - lq < lk ? i1 + lk - lq : lk;                                            \
        for (int64_t j0 = 0; j0 < jend && ok; j0 += BK) {                                            \
            const int64_t bk = jend - j0 < BK ? jend - j0 : BK;                                      \
            if (!(ok = qk_##SFX(a, Q, K, pk, j0, bq, bk, S)))                                        \
                break;                                                                               \
            for (int64_t r = 0; r < bq; r++) {                                                       \
                T *s = S + r * BK, mx, mnew, corr;                                                   \
                row_bias_##SFX(a, mask, mt, moff, i0 + r, j0, bk, s, mrow);                          \
                mx = row_max_##SFX(s, bk);                                                           \
                mnew = mx > m[r] ? mx : m[r];                                                        \
                if (mnew == -(T)INFINITY) { /* nothing visible yet: P is 0 */                        \
                    memset(s, 0, (size_t)bk * sizeof(T));                                            \
                    continue;                                                                        \
                }                                                                                    \
                corr = EXP(m[r] - mnew);                                                             \
                l[r] = l[r] * corr + exp_sum_##SFX(s, mnew, bk);                                     \
                if (corr != 1)                                                                       \
                    row_scale_##SFX(O + r * dv, corr, dv);                                           \
                m[r] = mnew;                                                                         \
            }                                                                                        \
            ok = pv_##SFX(a, S, V, pk, j0, bq, bk, O);                                               \
        }                                                                                            \
        for (int64_t r = 0; r < bq && lk > 0; r++) /* no keys at all: a sum of nothing, 0 */         \
            for (int64_t c = 0; c < dv; c++)                                                         \
                O[r * dv + c] /= l[r]; /* 0/0 = NaN where no key was visible */                      \
        tendo__gemm_scratch_free(sblk);                                                              \
        return ok;                                                                                   \
    }

ATTEND_BLOCK(attend_f32, float, expf, f32)
ATTEND_BLOCK(attend_f64, double, exp, f64)

/* Packs K^T and V of every (batch, kv head) for the packed f32 GEMM
 * into one pool block (*blk), on the threads; NULL (and *blk NULL) where
 * that kernel does not run (f64, other CPUs) or on out of memory (*oom). */
static packed_kv *pack_kv(const tendo__attn *a, const float *K, const float *V, int threads,
                          tendo__pool_block **blk, bool *oom)
{
    int64_t heads = a->batch * a->hkv;
    size_t kbytes = tendo__pgemm_b_bytes(TENDO__PGEMM_F32, a->d, a->lk);
    size_t vbytes = tendo__pgemm_b_bytes(TENDO__PGEMM_F32, a->lk, a->dv);
    size_t each = (kbytes + vbytes + 63) / 64 * 64, head = (size_t)heads * sizeof(packed_kv);
    char *buf;
    packed_kv *pk;

    *blk = NULL;
    *oom = false;
    if (!tendo__pgemm_available(TENDO__PGEMM_F32) || heads == 0 || a->lk == 0 || a->d == 0 || a->dv == 0)
        return NULL;
    head = (head + 63) / 64 * 64;
    if (!(buf = tendo__gemm_scratch(head + (size_t)heads * each, blk))) {
        *oom = true;
        return NULL;
    }
    pk = (packed_kv *)(void *)buf;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(static))
    for (int64_t i = 0; i < heads; i++) {
        char *kt = buf + head + (size_t)i * each, *v = kt + kbytes;
        /* K^T: d x lk, K's rows are its columns */
        tendo__pgemm_pack_b(TENDO__PGEMM_F32, a->d, a->lk, K + i * a->lk * a->d, 1, a->d, 0,
                            (a->lk + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR, kt);
        tendo__pgemm_pack_b(TENDO__PGEMM_F32, a->lk, a->dv, V + i * a->lk * a->dv, a->dv, 1, 0,
                            (a->dv + TENDO__PGEMM_NR - 1) / TENDO__PGEMM_NR, v);
        pk[i].kt = kt;
        pk[i].v = v;
    }
    return pk;
}

static tendo__tensor *cpu_attention(const char *op, const tendo__attn *a, const tendo__tensor *q,
                                    const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask)
{
    const tendo__traits *t = tendo__traits_of(q->dtype);
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE, failed = false;
    tendo__pool_block *qblk = NULL, *kblk = NULL, *vblk = NULL, *oblk = NULL, *pblk = NULL;
    packed_kv *pk = NULL;
    int64_t shape[TENDO_MAX_DIMS], nqb = (a->lq + BQ - 1) / BQ, tasks = a->batch * a->hq * nqb;
    tendo__tensor *out;
    void *Q = NULL, *K = NULL, *V = NULL, *O = NULL;
    const char *mdata = mask ? (const char *)tendo__tensor_data(mask) : NULL;
    int threads = tendo__threads();

    memcpy(shape, q->shape, sizeof shape);
    shape[q->ndim - 1] = a->dv;
    if (!(out = tendo__tensor_new(op, q->dtype, q->ndim, shape, q->storage->device)))
        return NULL;
    failed = !(Q = tendo__attn_dense(q, t, &qblk)) || !(K = tendo__attn_dense(k, t, &kblk)) ||
             !(V = tendo__attn_dense(v, t, &vblk)) ||
             !(O = t->own_compute ? tendo__tensor_data(out)
                                  : tendo__gemm_scratch((size_t)out->numel * t->compute_size, &oblk));
    tendo__blas_one_thread();
    if (tasks * (a->lk + 1) * (a->d + a->dv + 1) < ((int64_t)1 << 16))
        threads = 1;
    if (threads > tasks)
        threads = tasks > 0 ? (int)tasks : 1;
    if (!failed && !dbl)
        pk = pack_kv(a, K, V, threads, &pblk, &failed);
    if (failed)
        tasks = 0;
    (void)threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(dynamic) reduction(|| : failed))
    for (int64_t i = 0; i < tasks; i++) {
        int64_t b = i / (a->hq * nqb), h = (i / nqb) % a->hq, i0 = (i % nqb) * BQ;
        bool done = dbl ? attend_f64(a, Q, K, V, NULL, mdata, mask ? tendo__traits_of(mask->dtype) : NULL, O, b, h, i0)
                        : attend_f32(a, Q, K, V, pk, mdata, mask ? tendo__traits_of(mask->dtype) : NULL, O, b, h, i0);
        if (!done)
            failed = true;
    }
    if (failed) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for attention over q %s", tendo__shape_str(q->ndim, q->shape).s);
        tendo__tensor_free(out);
        out = NULL;
    } else if (!t->own_compute)
        t->narrow(O, tendo__tensor_data(out), 1, out->numel);
    tendo__gemm_scratch_free(pblk);
    tendo__gemm_scratch_free(oblk);
    tendo__gemm_scratch_free(qblk);
    tendo__gemm_scratch_free(kblk);
    tendo__gemm_scratch_free(vblk);
    return out;
}

/* ---- the device table's entries (src/cpu/device.c) ---- */

tendo__tensor *tendo__cpu_rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot,
                               double base, bool interleaved)
{
    return cpu_rope(op, x, positions, rot, base, interleaved);
}

tendo__tensor *tendo__cpu_attention(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                    const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask)
{
    return cpu_attention(op, a, q, k, v, mask);
}
