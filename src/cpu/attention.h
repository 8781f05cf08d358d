/* src/cpu/attention.h - what attention's forward (src/cpu/attention.c) and
 * backward (src/cpu/attention_back.c) on the CPU share: dense compute-type
 * operands, the mask's offsets, the products, and row loops written so
 * that -O2 vectorizes them in a fixed order. */
#ifndef TENDO_SRC_CPU_ATTENTION_H
#define TENDO_SRC_CPU_ATTENTION_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "core/pool.h"
#include "core/traits.h"
#include "core/transformer.h"
#include "cpu/gemm.h"
#include "cpu/vmath.h"

#ifdef TENDO_HAVE_CBLAS
#include <cblas.h>
#endif

/* t's elements in row-major order as dense compute-type values: t's own
 * memory when it is contiguous and its own compute type (*blk NULL), else
 * a buffer from the CPU's pool (*blk, for tendo__gemm_scratch_free: the
 * pool's pages are faulted in already, fresh ones each call are not).
 * NULL on out of memory. */
void *tendo__attn_dense(const tendo__tensor *t, const tendo__traits *tr, tendo__pool_block **blk);

/* The mask's element offset for batch b and head h (core/transformer.h). */
static inline int64_t mask_offset(const tendo__attn *a, int64_t b, int64_t h)
{
    int64_t off = h * a->mask_h;

    for (int d = a->nlead - 1; d >= 0; d--) {
        off += (b % a->lead[d]) * a->mask_lead[d];
        b /= a->lead[d];
    }
    return off;
}

/* C (m x n, row stride ldc) = alpha * op(A) op(B) + beta * C for row-major
 * A and B (row strides lda, ldb), op transposing when ta / tb: CBLAS when
 * built with it, else tendo's GEMM (which takes the transposes as strides). */
static inline void gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                                        float *C, int64_t ldc)
{
#ifdef TENDO_HAVE_CBLAS
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, A, (int)(lda > 0 ? lda : 1), B, (int)(ldb > 0 ? ldb : 1), beta, C,
                (int)(ldc > 0 ? ldc : 1));
#else
    tendo__sgemm(m, n, k, alpha, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1,
                 tendo__traits_of(TENDO_F32), beta, C, ldc);
#endif
}

static inline void gemm_f64(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                                        const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                                        double *C, int64_t ldc)
{
#ifdef TENDO_HAVE_CBLAS
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, A, (int)(lda > 0 ? lda : 1), B, (int)(ldb > 0 ? ldb : 1), beta, C,
                (int)(ldc > 0 ? ldc : 1));
#else
    tendo__dgemm(m, n, k, alpha, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1, beta, C, ldc);
#endif
}

/* The largest of s[0..n) (-inf when n is 0 or all are -inf; NaN never wins)
 * and the sum of s[0..n): eight independent lanes in a fixed order, so the
 * compiler vectorizes them without reassociating. */
#define ATTN_ROW_REDUCE(T, SFX)                                                                       \
    static inline T row_max_##SFX(const T *s, int64_t n)                                         \
    {                                                                                            \
        T lane[8], mx;                                                                           \
        int64_t j = 0;                                                                           \
        for (int l = 0; l < 8; l++)                                                              \
            lane[l] = -(T)INFINITY;                                                              \
        for (; j + 8 <= n; j += 8)                                                               \
            for (int l = 0; l < 8; l++)                                                          \
                lane[l] = s[j + l] > lane[l] ? s[j + l] : lane[l];                               \
        for (; j < n; j++)                                                                       \
            lane[0] = s[j] > lane[0] ? s[j] : lane[0];                                           \
        mx = lane[0];                                                                            \
        for (int l = 1; l < 8; l++)                                                              \
            mx = lane[l] > mx ? lane[l] : mx;                                                    \
        return mx;                                                                               \
    }                                                                                            \
    static inline T row_sum_##SFX(const T *s, int64_t n)                                         \
    {                                                                                            \
        T lane[8] = {0}, sum;                                                                    \
        int64_t j = 0;                                                                           \
        for (; j + 8 <= n; j += 8)                                                               \
            for (int l = 0; l < 8; l++)                                                          \
                lane[l] += s[j + l];                                                             \
        for (; j < n; j++)                                                                       \
            lane[0] += s[j];                                                                     \
        sum = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])); \
        return sum;                                                                              \
    }

/* x[j] += y[j], x[j] += v and x[j] *= v over n values, in blocks of eight
 * (so that -O2 vectorizes them; it leaves plain loops of unknown length
 * scalar). */
#define ATTN_ROW_MAP(T, SFX)                                                                          \
    static inline void row_add_##SFX(T *restrict x, const T *restrict y, int64_t n)              \
    {                                                                                            \
        int64_t j = 0;                                                                           \
        for (; j + 8 <= n; j += 8)                                                               \
            for (int l = 0; l < 8; l++)                                                          \
                x[j + l] += y[j + l];                                                            \
        for (; j < n; j++)                                                                       \
            x[j] += y[j];                                                                        \
    }                                                                                            \
    static inline void row_shift_##SFX(T *x, T v, int64_t n)                                     \
    {                                                                                            \
        int64_t j = 0;                                                                           \
        for (; j + 8 <= n; j += 8)                                                               \
            for (int l = 0; l < 8; l++)                                                          \
                x[j + l] += v;                                                                   \
        for (; j < n; j++)                                                                       \
            x[j] += v;                                                                           \
    }                                                                                            \
    static inline void row_scale_##SFX(T *x, T v, int64_t n)                                     \
    {                                                                                            \
        int64_t j = 0;                                                                           \
        for (; j + 8 <= n; j += 8)                                                               \
            for (int l = 0; l < 8; l++)                                                          \
                x[j + l] *= v;                                                                   \
        for (; j < n; j++)                                                                       \
            x[j] *= v;                                                                           \
    }

/* The scores s[0..bk) of query i against keys [j0, j0 + bk) plus the
 * mask's row (mask NULL: none; moff its head's offset, its elements of
 * dtype mt widened into mrow, bk values of scratch), and -inf past the
 * causal limit. */
#define ATTN_ROW_BIAS(T, SFX)                                                                    \
    static inline void row_bias_##SFX(const tendo__attn *a, const char *mask, const tendo__traits *mt,     \
                                      int64_t moff, int64_t i, int64_t j0, int64_t bk, T *s, T *mrow)     \
    {                                                                                            \
        if (mask) {                                                                              \
            mt->widen(mask + (moff + i * a->mask_q + j0 * a->mask_k) * (int64_t)mt->size, a->mask_k, mrow, bk); \
            row_add_##SFX(s, mrow, bk);                                                          \
        }                                                                                        \
        if (a->causal) {                                                                         \
            int64_t lim = i + a->lk - a->lq - j0; /* the last visible key in this block */       \
            for (int64_t c = lim + 1 > 0 ? lim + 1 : 0; c < bk; c++)                             \
                s[c] = -(T)INFINITY;                                                             \
        }                                                                                        \
    }

ATTN_ROW_REDUCE(float, f32)
ATTN_ROW_REDUCE(double, f64)
ATTN_ROW_MAP(float, f32)
ATTN_ROW_MAP(double, f64)
ATTN_ROW_BIAS(float, f32)
ATTN_ROW_BIAS(double, f64)
#undef ATTN_ROW_REDUCE
#undef ATTN_ROW_MAP
#undef ATTN_ROW_BIAS

/* s[j] = exp(s[j] - m) over n values, returning their sum (one pass for
 * f32, tendo__vexp_shift_sum_f32). */
static inline float exp_sum_f32(float *s, float m, int64_t n) { return tendo__vexp_shift_sum_f32(s, m, n); }

static inline double exp_sum_f64(double *s, double m, int64_t n)
{
    row_shift_f64(s, -m, n);
    tendo__vexp_f64(s, s, n);
    return row_sum_f64(s, n);
}

#endif
