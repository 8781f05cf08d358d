/* src/cpu/gemm_avx2.c - the packed-panel GEMM's kernels for CPUs with AVX2
 * and FMA but not AVX-512: f32, and f16 (F16C) and bf16 widened exactly as
 * they are packed, from the panels gemm_avx512.c's drivers lay out and share
 * (src/cpu/pgemm.h).  So on these CPUs too a weight is packed once per
 * product (or once for good, tensor_<dt>_prepack) and shared by the
 * threads, where OpenBLAS's sgemm packs it again on every call.
 *
 * An A sliver (MR = 12 rows) times a B sliver (NR = 32 columns) is four
 * register tiles of 6 rows x 16 columns (12 accumulators, two B vectors
 * and a broadcast A value: 15 of the 16 ymm registers), the column half
 * outer.  Each element is summed by FMA in increasing k from zero and
 * folded into C as alpha * s + beta * C, as the AVX-512 kernels do: the
 * same bits on either set. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpu/pgemm.h"

#if PGEMM_X86
#include <immintrin.h>
#define TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))

enum { TILE = 6 }; /* rows of a register tile */

/* 8 values of kind at p as f32: f32 as they are, f16 and BF16W widened. */
TARGET_AVX2 static inline __m256 load8(tendo__pgemm_kind kind, const char *p)
{
    if (kind == TENDO__PGEMM_F32)
        return _mm256_loadu_ps((const float *)(const void *)p);
    __m128i h = _mm_loadu_si128((const void *)p);
    if (kind == TENDO__PGEMM_BF16W)
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

/* A sliver's NR values of a row of B as f32 words. */
TARGET_AVX2 static inline void widen_sliver_row(tendo__pgemm_kind kind, const char *src, uint32_t *restrict dst)
{
    _Static_assert(NR % 8 == 0, "whole vectors of 16-bit values");
    if (kind == TENDO__PGEMM_F32)
        memcpy(dst, src, NR * 4);
    else
        for (int i = 0; i < NR; i += 8)
            _mm256_storeu_ps((float *)(void *)(dst + i), load8(kind, src + 2 * i));
}

/* See pgemm.h (tendo__pgemm_set.pack_b_slivers).  Rows of B dense: k
 * steps outer, each row's run over all the slivers' columns read at once
 * and the rows 8 k steps ahead fetched (they are far apart, where the
 * hardware prefetchers do not follow), as the AVX-512 set does. */
TARGET_AVX2 static void pack_b_slivers(tendo__pgemm_kind kind, const void *b, int64_t rs, int64_t cs, int64_t k,
                                       int64_t n, int64_t kk0, int64_t words, int64_t s0, int64_t s1,
                                       uint32_t *restrict dst)
{
    int64_t esize = elem_size(kind), full = imin(s1, n / NR), dense = 0;

    if (cs == 1 && full > s0) {
        const char *base = (const char *)b + (s0 * NR + kk0 * rs) * esize;
        int64_t run = (full - s0) * NR * esize; /* bytes of a row the slivers take */
        dense = imin(words, k - kk0);
        for (int64_t q = 0; q < dense; q++) {
            const char *row = base + q * rs * esize;
            for (int64_t off = 0; off < run; off += 64)
                _mm_prefetch(row + 8 * rs * esize + off, _MM_HINT_T0);
            for (int64_t s = s0; s < full; s++)
                widen_sliver_row(kind, row + (s - s0) * NR * esize, dst + (s - s0) * words * NR + q * NR);
        }
    }
    for (int64_t s = s0; s < s1; s++)
        tendo__pgemm_pack_b_sliver(kind, b, rs, cs, k, n, kk0, words, s * NR, s < full ? dense : 0,
                                   dst + (s - s0) * words * NR);
}

/* 8 words of a row of B from column h. */
TARGET_AVX2 static inline __m256 b_words8(tendo__pgemm_kind kind, const char *row, int h)
{
    return load8(kind, row + elem_size(kind) * h);
}

/* The register tile of `rows` rows (a constant in each caller) at a (the
 * first row's slot; row r at a + r * lda words: WORDS in a packed panel,
 * else rows read where they are, tendo__pgemm_nt's, which it fetches
 * ahead when fetch_a) by 16 columns over words k steps, into c: mr x nr of
 * it kept (nr <= 16).  B is the packed sliver's columns at b (row stride
 * NR words), or (direct: the first tile of a sliver, its first columns) a
 * sliver of B's dense rows from `rows_b` (row stride rs elements), all NR
 * of whose words are stored in keep as they are read (the rows kernel of
 * pgemm.h).  Not direct, rows_b (when not NULL) are rows of the same
 * stride to fetch into L2 as it goes, NR values of each (a later sliver).
 * kind, rows and direct are constants in each caller. */
__attribute__((always_inline)) TARGET_AVX2 static inline void
tile(tendo__pgemm_kind kind, int rows, bool direct, int64_t words, const uint32_t *a, int64_t lda, bool fetch_a,
     const uint32_t *b, uint32_t *keep, const char *rows_b, int64_t rs, float *c, int64_t ldc, int64_t mr,
     int64_t nr, float alpha, float beta)
{
    __m256 acc[TILE][2]; /* fully unrolled below, so it lives in registers */
    const float *af = (const float *)(const void *)a, *bf = (const float *)(const void *)b;
    float *kf = (float *)(void *)keep;
    int64_t esize = elem_size(kind), step = rs * esize; /* bytes from a row of B to the next */

#pragma GCC unroll 6
    for (int r = 0; r < rows; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t q = 0; q < words; q++) {
        __m256 b0, b1;
        if (direct) { /* the rows are far apart: no hardware prefetcher follows them */
            const char *row = rows_b + q * step, *ahead = row + ROWS_AHEAD * step;
            for (int64_t off = 0; off < NR * esize; off += 64) {
                _mm_prefetch(ahead + off, _MM_HINT_T0);
                _mm_prefetch(ahead + NR * esize + off, _MM_HINT_T1);
            }
            _mm256_store_ps(kf + q * NR + 16, b_words8(kind, row, 16)); /* the columns of the other half */
            _mm256_store_ps(kf + q * NR + 24, b_words8(kind, row, 24));
            b0 = b_words8(kind, row, 0);
            b1 = b_words8(kind, row, 8);
            _mm256_store_ps(kf + q * NR, b0);
            _mm256_store_ps(kf + q * NR + 8, b1);
        } else {
            if (rows_b) /* a later sliver's rows, into L2 while this tile computes */
                for (int64_t off = 0; off < NR * esize; off += 64)
                    _mm_prefetch(rows_b + q * step + off, _MM_HINT_T1);
            b0 = _mm256_load_ps(bf + q * NR);
            b1 = _mm256_load_ps(bf + q * NR + 8);
        }
        if (fetch_a && (q & 15) == 0) /* A's rows read in place: each one's line 8 lines ahead */
#pragma GCC unroll 6
            for (int r = 0; r < rows; r++)
                _mm_prefetch((const char *)(af + r * lda + q + 128), _MM_HINT_T0);
#pragma GCC unroll 6
        for (int r = 0; r < rows; r++) {
            __m256 ar = _mm256_broadcast_ss(af + r * lda + q);
            acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);
        }
    }
    /* the columns kept of each half: all 8, or the first ones */
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i keep_cols[2] = {_mm256_cmpgt_epi32(_mm256_set1_epi32((int)nr), lane),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nr - 8), lane)};
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            float *cr = c + r * ldc + 8 * h;
            __m256 v = _mm256_mul_ps(acc[r][h], _mm256_set1_ps(alpha));
            if (nr == 16) {
                if (beta != 0.0f)
                    v = _mm256_fmadd_ps(_mm256_loadu_ps(cr), _mm256_set1_ps(beta), v);
                _mm256_storeu_ps(cr, v);
            } else {
                if (beta != 0.0f)
                    v = _mm256_fmadd_ps(_mm256_maskload_ps(cr, keep_cols[h]), _mm256_set1_ps(beta), v);
                _mm256_maskstore_ps(cr, keep_cols[h], v);
            }
        }
    }
}

/* tile for `rows` rows (1 to 6) kept, in a register tile of 6, 4 or 2;
 * direct a constant in each caller. */
__attribute__((always_inline)) TARGET_AVX2 static inline void
tile_of(tendo__pgemm_kind kind, bool direct, int64_t rows, int64_t words, const uint32_t *a, int64_t lda,
        bool fetch_a, const uint32_t *b, uint32_t *keep, const char *rows_b, int64_t rs, float *c, int64_t ldc,
        int64_t nr, float alpha, float beta)
{
    if (rows > 4)
        tile(kind, 6, direct, words, a, lda, fetch_a, b, keep, rows_b, rs, c, ldc, rows, nr, alpha, beta);
    else if (rows > 2)
        tile(kind, 4, direct, words, a, lda, fetch_a, b, keep, rows_b, rs, c, ldc, rows, nr, alpha, beta);
    else
        tile(kind, 2, direct, words, a, lda, fetch_a, b, keep, rows_b, rs, c, ldc, rows, nr, alpha, beta);
}

/* The tile of mr rows of the A sliver at a by the B sliver at b (see
 * pgemm.h), in register tiles of 6 rows (the last of 4 or 2 where fewer
 * rows are kept) by 16 columns, the column half outer.  direct: B read
 * from its dense rows by the first register tile (see tile), the rest
 * reading what it kept; the first fetches the next sliver's lines into L2
 * ROWS_AHEAD rows ahead, as the AVX-512 kernel does, and the second
 * fetches them again row by row: in the first the fetches queue behind
 * the loads of its own lines, and the other tiles read only the cache.
 * Zen 4 at TENDO_CPU=avx2, [rows, 4096] x [4096, 4096], one thread, ms:
 * own lines only 8.1 (8 rows), 10.1 (16), 15.5 (32); the next sliver's in
 * the first tile 6.9, 8.9-9.2, 14.1; in the second too 4.3-4.4, 6.3-6.5,
 * 11.6-12.2 (the sliver after next in the second: 5.4-6.1, 7.6-8.2,
 * 13.1-13.6; in every tile after the first: 4.6, 6.7-6.8, 11.7).  A's rows
 * are lda words apart (see tile): read in place, the first column half's
 * tiles fetch them, and the second finds them in cache. */
__attribute__((always_inline)) TARGET_AVX2 static inline void
sliver(tendo__pgemm_kind kind, bool direct, int64_t words, const uint32_t *a, int64_t lda, const uint32_t *b,
       uint32_t *keep, const char *rows_b, int64_t rs, float *c, int64_t ldc, int64_t mr, int64_t nr, float alpha,
       float beta)
{
    if (direct)
        b = keep;
    for (int64_t h = 0; h < 2 && 16 * h < nr; h++)
        for (int64_t r = 0; r < mr; r += TILE) {
            const uint32_t *ar = a + r * lda, *bh = b + 16 * h;
            float *cr = c + r * ldc + 16 * h;
            int64_t rows = imin(TILE, mr - r), cols = imin(16, nr - 16 * h);
            bool fetch_a = lda != WORDS && h == 0;
            if (direct && h == 0 && r == 0) /* the first register tile packs the sliver */
                tile_of(kind, true, rows, words, ar, lda, fetch_a, NULL, keep, rows_b, rs, cr, ldc, cols, alpha,
                        beta);
            else /* the second fetches the next sliver (as the first does, or the next of the panels) */
                tile_of(kind, false, rows, words, ar, lda, fetch_a, bh, NULL,
                        direct && h == 1 && r == 0    ? rows_b + NR * elem_size(kind)
                        : !direct && h == 0 && r == 0 ? rows_b
                                                      : NULL,
                        rs, cr, ldc, cols, alpha, beta);
        }
}

/* See pgemm.h (tendo__pgemm_kernel); f16's and BF16W's panels hold f32, so
 * one kernel serves every kind. */
TARGET_AVX2 static void kernel(int64_t words, const uint32_t *a, const uint32_t *b, const uint32_t *pf, float *c,
                               int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)
{
    /* pf as rows of NR f32 words */
    sliver(TENDO__PGEMM_F32, false, words, a, WORDS, b, NULL, (const char *)pf, NR, c, ldc, mr, nr, alpha, beta);
}

static tendo__pgemm_kernel kernel_for(tendo__pgemm_kind kind, int64_t mr)
{
    (void)kind, (void)mr;
    return kernel;
}

/* See pgemm.h (tendo__pgemm_rows_kernel), by kind. */
#define KERNEL_ROWS(name, kind)                                                                                      \
    TARGET_AVX2 static void kernel_rows_##name(int64_t words, const uint32_t *a, uint32_t *keep, const char *rows,   \
                                               int64_t rs, float *c, int64_t ldc, int64_t mr, int64_t nr,          \
                                               float alpha, float beta)                                             \
    {                                                                                                                \
        sliver(kind, true, words, a, WORDS, NULL, keep, rows, rs, c, ldc, mr, nr, alpha, beta);                      \
    }
KERNEL_ROWS(f32, TENDO__PGEMM_F32)
KERNEL_ROWS(f16, TENDO__PGEMM_F16)
KERNEL_ROWS(bf16w, TENDO__PGEMM_BF16W)
#undef KERNEL_ROWS

static tendo__pgemm_rows_kernel kernel_rows_for(tendo__pgemm_kind kind, int64_t mr)
{
    (void)mr;
    return kind == TENDO__PGEMM_F16 ? kernel_rows_f16 : kind == TENDO__PGEMM_BF16W ? kernel_rows_bf16w : kernel_rows_f32;
}

/* See pgemm.h (tendo__pgemm_nt_kernel): f32 only, whose words are the
 * weight's own values (f16's panels hold widened ones). */
TARGET_AVX2 static void kernel_nt(int64_t words, const uint32_t *a, int64_t lda, const uint32_t *b, float *c,
                                  int64_t ldc, int64_t nr, float beta)
{
    sliver(TENDO__PGEMM_F32, false, words, a, lda, b, NULL, NULL, NR, c, ldc, MR, nr, 1.0f, beta);
}

static tendo__pgemm_nt_kernel kernel_nt_for(tendo__pgemm_kind kind)
{
    return kind == TENDO__PGEMM_F32 ? kernel_nt : NULL;
}

static const tendo__pgemm_set avx2_set = {pack_b_slivers, kernel_for, kernel_rows_for, kernel_nt_for};
const tendo__pgemm_set *const tendo__pgemm_avx2 = &avx2_set;
#else
const tendo__pgemm_set *const tendo__pgemm_avx2 = NULL;
#endif
