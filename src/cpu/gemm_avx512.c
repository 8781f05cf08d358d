/* src/cpu/gemm_avx512.c - the packed-panel GEMMs: their drivers, and the
 * kernels of AVX-512 CPUs: bf16 x bf16 with the dot-product instruction
 * vdpbf16ps (AVX512_BF16), and f32 x f32 with vfmadd (AVX-512F), both
 * accumulating in f32; f16 goes through the f32 kernel, widened exactly
 * (vcvtph2ps) as it is packed.  CPUs with AVX2 but not AVX-512 multiply
 * f32 and f16 from the same panels with src/cpu/gemm_avx2.c's kernels
 * (the layout, and what each set provides: src/cpu/pgemm.h).
 *
 * Goto/BLIS structure, one layout for every kind.  A packed element is a
 * 32-bit word holding one k step: for f32 and f16 one f32 value; for bf16
 * a pair, A(i,
 * 2p) in the low half and A(i, 2p+1) in the high half (likewise for B), so
 * that one vdpbf16ps multiplies 16 columns by two k: 32 products, each
 * exact in f32, added into the f32 accumulator one after the other (odd k
 * first, as the instruction does) with round-to-nearest-even.  vdpbf16ps
 * treats bf16 subnormal inputs and f32 subnormal results as zero.
 *
 * k goes in blocks of WORDS steps (256 words: 512 k for bf16, 256 for
 * f32).  B is packed whole, block after block, each block in slivers of NR
 * columns (tendo__pgemm_pack_b): matmul.c packs it once on all threads and
 * hands row blocks of A to the threads, which share it, and attention
 * packs K and V once per head.  A is packed per MC rows into MR-row
 * slivers whose rows sit in fixed WORDS-word slots, so the micro-kernel
 * broadcasts all MR rows from one pointer with constant displacements.
 *
 * Determinism: every element of C sums its k steps in increasing order in
 * blocks taken in increasing order, in whichever tile and row it sits, so
 * row blocks of any size and column blocks of whole slivers give bitwise
 * the same C as one call, on either instruction set. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/half.h"
#include "cpu/pgemm.h"

#if PGEMM_X86
#include <immintrin.h>
#define TARGET_512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#endif

/* A tile of at most MR_SHORT rows (a batch of 8, the last of 32 rows) is
 * multiplied by the short tile's kernels, not MR rows of which a third
 * are padding.  Zen 4, x 4096 x 4096 by a [k, n] weight, one thread, ms,
 * two rounds, MR against MR_SHORT: 8 rows bf16 3.4-4.0 against 2.8-3.4,
 * f16 5.0-5.8 against 3.8-4.1, f32 7.0-9.6 against 7.0-7.8; 32 rows bf16
 * 7.4-10.4 against 6.8-7.0, f32 14.1-19.7 against 12.9-17.5. */

/* Whether this file's set has kernels for kind: all but BF16W, which only
 * the AVX2 set multiplies (where it runs, AVX-512 without AVX512_BF16,
 * bf16 is not worth a second set of kernels). */
static bool in_avx512_set(tendo__pgemm_kind kind) { return kind != TENDO__PGEMM_BF16W; }

/* See cpu.h. */
bool tendo__pgemm_available(tendo__pgemm_kind kind)
{
    if (!PGEMM_X86 || kind == TENDO__PGEMM_NONE)
        return false;
    if (kind == TENDO__PGEMM_BF16)
        return tendo__cpu_has(TENDO__CPU_AVX512BF16);
    return (in_avx512_set(kind) && tendo__cpu_has(TENDO__CPU_AVX512)) ||
           (tendo__pgemm_avx2 &&
            tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA | (kind == TENDO__PGEMM_F16 ? TENDO__CPU_F16C : 0)));
}

/* See cpu.h. */
tendo__pgemm_kind tendo__pgemm_kind_of(const tendo__traits *t)
{
#ifdef TENDO_HAVE_BF16
    if (t == tendo__traits_of(TENDO_BF16))
        return tendo__pgemm_available(TENDO__PGEMM_BF16)    ? TENDO__PGEMM_BF16
               : tendo__pgemm_available(TENDO__PGEMM_BF16W) ? TENDO__PGEMM_BF16W
                                                            : TENDO__PGEMM_NONE;
#endif
    if (t == tendo__traits_of(TENDO_F32) && tendo__pgemm_available(TENDO__PGEMM_F32))
        return TENDO__PGEMM_F32;
#ifdef TENDO_HAVE_F16
    if (t == tendo__traits_of(TENDO_F16) && tendo__pgemm_available(TENDO__PGEMM_F16))
        return TENDO__PGEMM_F16;
#endif
    return TENDO__PGEMM_NONE;
}

/* See cpu.h. */
size_t tendo__pgemm_b_bytes(tendo__pgemm_kind kind, int64_t k, int64_t n)
{
    int64_t g = per_word(kind);

    return (size_t)((n + NR - 1) / NR * NR) * (size_t)((k + g - 1) / g) * 4;
}

#if PGEMM_X86
/* 16 words from p: 64 bytes as they are (f32, bf16 pairs), or 16 f16
 * widened to f32. */
TARGET_512 static inline __m512i load16(tendo__pgemm_kind kind, const char *p)
{
    if (kind == TENDO__PGEMM_F16)
        return _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256((const void *)p)));
    return _mm512_loadu_si512((const void *)p);
}

/* Packs rows i0..i0+mc of A (m rows, element strides rs, cs), the words
 * of k from p0 on for kc k, into MR-row slivers, each row a slot of WORDS
 * words: sliver t at dst + t*MR*WORDS, word [r*WORDS + q] is k step q of
 * row r.  Rows past the panel are zero.  For either set: a dense row is
 * copied (f32 values, bf16 pairs) or widened (f16, BF16W) by routines
 * that dispatch themselves. */
static void pack_a(tendo__pgemm_kind kind, const void *a, int64_t rs, int64_t cs, int64_t m, int64_t i0, int64_t mc,
                   int64_t p0, int64_t kc, uint32_t *restrict dst)
{
    int64_t g = per_word(kind), words = (kc + g - 1) / g, esize = elem_size(kind);

    for (int64_t t = 0; t < mc; t += MR, dst += MR * WORDS)
        for (int64_t r = 0; r < MR; r++) {
            int64_t i = i0 + t + r;
            uint32_t *w = dst + r * WORDS;
            const char *row = (const char *)a + (i * rs + p0) * esize;
            if (t + r >= mc)
                memset(w, 0, (size_t)words * sizeof *w);
            else if (cs == 1 && kc % g == 0 && widened(kind)) /* k dense */
                widen_n(kind, (const uint16_t *)(const void *)row, (float *)(void *)w, words);
            else if (cs == 1 && kc % g == 0) /* the words are the row's as they are */
                memcpy(w, row, (size_t)words * sizeof *w);
            else
                for (int64_t q = 0; q < words; q++)
                    w[q] = pgemm_word(kind, (const char *)a + p0 * cs * esize, rs, cs, i, q, m, kc);
        }
}

/* 16 words of B's dense rows (cs 1) from column h of row, which holds k
 * step g*q (bf16: rows 2q and 2q+1 interleaved, a pair per word; rs B's
 * row stride in elements). */
TARGET_512 static inline __m512i b_words(tendo__pgemm_kind kind, const char *row, int64_t rs, int h)
{
    if (kind != TENDO__PGEMM_BF16)
        return load16(kind, row + elem_size(kind) * h);
    return _mm512_or_si512(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(row + 2 * h))),
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(row + 2 * (h + rs)))), 16));
}

/* Word q of a sliver of B's dense rows into dst (NR words): the NR columns
 * from row (as b_words). */
TARGET_512 static inline void pack_b_word(tendo__pgemm_kind kind, const char *row, int64_t rs, uint32_t *restrict dst)
{
    for (int h = 0; h < NR; h += 16)
        _mm512_store_si512(dst + h, b_words(kind, row, rs, h));
}

/* See pgemm.h.  Word [q*NR + c] is k step q of column j0 + c; words
 * before q0 come from a set's pack_b_slivers (the dense rows of B, cs 1: a
 * weight used as is, V).  Columns of B dense (rs 1) hold each column's
 * words in order, so the sliver is their transposed copy (of the words, or
 * of the 16-bit values then widened). */
void tendo__pgemm_pack_b_sliver(tendo__pgemm_kind kind, const void *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                                int64_t kk0, int64_t words, int64_t j0, int64_t q0, uint32_t *restrict dst)
{
    int64_t g = per_word(kind), esize = elem_size(kind), q = q0;
    int64_t dense = j0 + NR <= n ? imin(words, (k - kk0) / g) : 0; /* words whose k all exist */
    const char *base = (const char *)b;

    if (rs == 1 && cs != 1 && dense > 0) {
        const char *src = base + (j0 * cs + kk0) * esize;
        if (widened(kind)) { /* the 16-bit values transposed, then widened */
            uint16_t half[WORDS * NR];
            int64_t h = 0;
            for (; ((uintptr_t)src & 1) == 0 && h < dense; h += 32) { /* a line of each column at a time, as below */
                for (int c = 0; c < NR; c++)
                    _mm_prefetch(src + ((NR + c) * cs + h) * 2, _MM_HINT_T1);
                if (!tendo__transpose_copy(half + h * NR, src + 2 * h, imin(32, dense - h), NR, cs, 2))
                    break;
            }
            if (h >= dense) {
                widen_n(kind, half, (float *)(void *)dst, dense * NR);
                q = dense;
            }
        } else if (((uintptr_t)src & 3) == 0 && cs * esize % 4 == 0)
            /* 16 words (a line) of each column at a time, the next sliver's
             * same lines fetched into L2 (into L1 they were evicted before
             * use: bf16 65 x 4096 x 4096 by the transposed view, Zen 4, one
             * thread, 21-22 -> 16-17 ms) */
            for (; q < dense; q += 16) {
                for (int c = 0; c < NR; c++)
                    _mm_prefetch(src + (NR + c) * cs * esize + 4 * q, _MM_HINT_T1);
                if (!tendo__transpose_copy(dst + q * NR, src + 4 * q, imin(16, dense - q), NR, cs * esize / 4, 4))
                    break;
            }
        q = imin(q, dense);
    }
    for (; q < words; q++)
        for (int64_t c = 0; c < NR; c++)
            dst[q * NR + c] = pgemm_word(kind, base + kk0 * rs * esize, cs, rs, j0 + c, q, n, k - kk0);
}

/* Slivers s0..s1 of the k block from kk0 (words words), each as
 * pack_b_sliver packs it, sliver s at dst + (s - s0)*words*NR.  Rows of B
 * dense: k steps outer, so that each row's run over all the slivers'
 * columns is read at once.  Sliver by sliver, a row is read one sliver
 * (a line or two) at a time, each row in a page of its own, where the
 * hardware prefetchers do not follow: bf16 32 x 4096 x 4096 by a [k, n]
 * weight, Zen 4, one thread, spent half its time packing. */
TARGET_512 static void pack_b_slivers(tendo__pgemm_kind kind, const void *b, int64_t rs, int64_t cs, int64_t k,
                                      int64_t n, int64_t kk0, int64_t words, int64_t s0, int64_t s1,
                                      uint32_t *restrict dst)
{
    int64_t g = per_word(kind), esize = elem_size(kind), full = imin(s1, n / NR), dense = 0;

    if (cs == 1 && full > s0) {
        const char *base = (const char *)b + (s0 * NR + kk0 * rs) * esize;
        int64_t run = (full - s0) * NR * esize; /* bytes of a row the slivers take */
        dense = imin(words, (k - kk0) / g);
        for (int64_t q = 0; q < dense; q++) {
            const char *r0 = base + g * q * rs * esize;
            for (int64_t p = 0; p < g; p++) /* 8 k steps ahead: the rows are far apart */
                for (int64_t off = 0; off < run; off += 64)
                    _mm_prefetch(r0 + (8 * g + p) * rs * esize + off, _MM_HINT_T0);
            for (int64_t s = s0; s < full; s++)
                pack_b_word(kind, r0 + (s - s0) * NR * esize, rs, dst + (s - s0) * words * NR + q * NR);
        }
    }
    for (int64_t s = s0; s < s1; s++)
        tendo__pgemm_pack_b_sliver(kind, b, rs, cs, k, n, kk0, words, s * NR, s < full ? dense : 0,
                                   dst + (s - s0) * words * NR);
}

/* The tile x NR tile at c (row stride ldc, mr x nr of it valid; tile is
 * MR, or MR_SHORT for a tile of at most that many rows, which then
 * multiplies no rows it does not keep) becomes
 * alpha * (A sliver x B sliver over words k steps) + beta * c (beta 0: c
 * not read).  B is the packed sliver b, or (direct) the sliver's columns
 * of B's dense rows from `rows` (row stride rs elements), each word made
 * as pack_b_word makes it and stored in `keep`, so that the other row
 * tiles read the packed sliver: the same words in the same order, so the
 * same bits, whatever the tile.  Not direct, `rows` (when not NULL) is the
 * next packed sliver, fetched into L2 as the kernel goes (pgemm.h's pf).
 * A's row r is at a + r*lda words: WORDS in a packed panel, else rows
 * read where they are (tendo__pgemm_nt), which the kernel fetches ahead.
 * kind, tile and direct are constants in each caller, so each gets its
 * loop. */
__attribute__((always_inline)) TARGET_BF16 static inline void
kernel_body(tendo__pgemm_kind kind, int tile, bool direct, int64_t words, const uint32_t *a, int64_t lda,
            const uint32_t *b, uint32_t *keep, const char *rows, int64_t rs, float *c, int64_t ldc, int64_t mr,
            int64_t nr, float alpha, float beta)
{
    __m512 acc[MR][2]; /* fully unrolled below, so it lives in 24 registers */
    int64_t step = direct ? per_word(kind) * rs * elem_size(kind) : 0; /* bytes from a word's row to the next's */

#pragma GCC unroll 12
    for (int r = 0; r < tile; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < words; q++, a++) {
        __m512i b0, b1;
        if (direct) { /* the rows are far apart: no hardware prefetcher follows them */
            const char *row = rows + q * step, *ahead = row + ROWS_AHEAD * step;
            for (int64_t p = 0; p < per_word(kind); p++)
                for (int64_t off = 0; off < NR * elem_size(kind); off += 64) {
                    _mm_prefetch(ahead + p * rs * elem_size(kind) + off, _MM_HINT_T0);
                    /* the next sliver's lines, into L2 */
                    _mm_prefetch(ahead + p * rs * elem_size(kind) + NR * elem_size(kind) + off, _MM_HINT_T1);
                }
            b0 = b_words(kind, row, rs, 0);
            b1 = b_words(kind, row, rs, 16);
            _mm512_store_si512(keep + q * NR, b0);
            _mm512_store_si512(keep + q * NR + 16, b1);
        } else {
            if (rows) /* the next packed sliver (pf), into L2 */
                for (int64_t off = 0; off < NR * 4; off += 64)
                    _mm_prefetch(rows + q * NR * 4 + off, _MM_HINT_T1);
            b0 = _mm512_load_si512(b + q * NR);
            b1 = _mm512_load_si512(b + q * NR + 16);
        }
        if (lda != WORDS && (q & 15) == 0) /* A's rows read in place: each one's line 8 lines ahead */
            for (int r = 0; r < tile; r++)
                _mm_prefetch((const char *)(a + r * lda + 128), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int r = 0; r < tile; r++) {
            __m512i ar = _mm512_set1_epi32((int)a[r * lda]);
            if (kind == TENDO__PGEMM_BF16) {
                acc[r][0] = _mm512_dpbf16_ps(acc[r][0], (__m512bh)ar, (__m512bh)b0);
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], (__m512bh)ar, (__m512bh)b1);
            } else {
                acc[r][0] = _mm512_fmadd_ps(_mm512_castsi512_ps(ar), _mm512_castsi512_ps(b0), acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(_mm512_castsi512_ps(ar), _mm512_castsi512_ps(b1), acc[r][1]);
            }
        }
    }
    if (mr == tile && nr == NR) { /* a whole tile: stored straight from the registers */
#pragma GCC unroll 12
        for (int r = 0; r < tile; r++)
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                float *cr = c + r * ldc + 16 * h;
                __m512 v = _mm512_mul_ps(acc[r][h], _mm512_set1_ps(alpha));
                if (beta != 0.0f)
                    v = _mm512_fmadd_ps(_mm512_loadu_ps(cr), _mm512_set1_ps(beta), v);
                _mm512_storeu_ps(cr, v);
            }
        return;
    }
    float part[MR][NR] __attribute__((aligned(64))); /* an edge tile: through memory, mr x nr of it */
#pragma GCC unroll 12
    for (int r = 0; r < tile; r++) {
        _mm512_store_ps(part[r], acc[r][0]);
        _mm512_store_ps(part[r] + 16, acc[r][1]);
    }
    for (int r = 0; r < mr; r++)
        for (int h = 0; h < 2 && 16 * h < nr; h++) {
            __mmask16 keep = nr - 16 * h >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - 16 * h)) - 1);
            float *cr = c + r * ldc + 16 * h;
            __m512 v = _mm512_mul_ps(_mm512_load_ps(part[r] + 16 * h), _mm512_set1_ps(alpha));
            if (beta != 0.0f)
                v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(keep, cr), _mm512_set1_ps(beta), v);
            _mm512_mask_storeu_ps(cr, keep, v);
        }
}

/* The micro-kernels of B's packed slivers, by kind and tile. */
#define KERNEL(name, kind, tile)                                                                                     \
    TARGET_BF16 static void kernel_##name(int64_t words, const uint32_t *a, const uint32_t *b, const uint32_t *pf,  \
                                          float *c, int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)     \
    {                                                                                                                \
        kernel_body(kind, tile, false, words, a, WORDS, b, NULL, (const char *)pf, 0, c, ldc, mr, nr, alpha, beta);  \
    }
KERNEL(bf16, TENDO__PGEMM_BF16, MR)
KERNEL(bf16_short, TENDO__PGEMM_BF16, MR_SHORT)
/* (No bf16 instruction is reached in these: the target only lets the
 * shared body compile.) */
KERNEL(f32, TENDO__PGEMM_F32, MR)
KERNEL(f32_short, TENDO__PGEMM_F32, MR_SHORT)
#undef KERNEL

/* The kernels of tendo__pgemm_nt: a whole tile of A's rows read in place
 * (lda words apart), B a packed sliver. */
#define KERNEL_NT(name, kind)                                                                                        \
    TARGET_BF16 static void kernel_nt_##name(int64_t words, const uint32_t *a, int64_t lda, const uint32_t *b,     \
                                             float *c, int64_t ldc, int64_t nr, float beta)                         \
    {                                                                                                                \
        kernel_body(kind, MR, false, words, a, lda, b, NULL, NULL, 0, c, ldc, MR, nr, 1.0f, beta);                   \
    }
KERNEL_NT(bf16, TENDO__PGEMM_BF16)
KERNEL_NT(f32, TENDO__PGEMM_F32)
#undef KERNEL_NT

static tendo__pgemm_nt_kernel kernel_nt_for(tendo__pgemm_kind kind)
{
    return kind == TENDO__PGEMM_BF16 ? kernel_nt_bf16 : kind == TENDO__PGEMM_F32 ? kernel_nt_f32 : NULL;
}

/* The micro-kernel of kind (f16's panels hold f32) for a tile of mr rows. */
static tendo__pgemm_kernel kernel_for(tendo__pgemm_kind kind, int64_t mr)
{
    static const tendo__pgemm_kernel fns[][2] = {[TENDO__PGEMM_BF16] = {kernel_bf16, kernel_bf16_short},
                                       [TENDO__PGEMM_F32] = {kernel_f32, kernel_f32_short},
                                       [TENDO__PGEMM_F16] = {kernel_f32, kernel_f32_short}};
    return fns[kind][mr <= MR_SHORT];
}

/* The direct kernels: B from its dense rows, the packed sliver written to
 * keep on the way (kernel_body). */
#define KERNEL_ROWS(name, kind, tile)                                                                                \
    TARGET_BF16 static void kernel_rows_##name(int64_t words, const uint32_t *a, uint32_t *keep, const char *rows,   \
                                               int64_t rs, float *c, int64_t ldc, int64_t mr, int64_t nr,          \
                                               float alpha, float beta)                                             \
    {                                                                                                                \
        kernel_body(kind, tile, true, words, a, WORDS, NULL, keep, rows, rs, c, ldc, mr, nr, alpha, beta);           \
    }
KERNEL_ROWS(bf16, TENDO__PGEMM_BF16, MR)
KERNEL_ROWS(bf16_short, TENDO__PGEMM_BF16, MR_SHORT)
KERNEL_ROWS(f32, TENDO__PGEMM_F32, MR)
KERNEL_ROWS(f32_short, TENDO__PGEMM_F32, MR_SHORT)
KERNEL_ROWS(f16, TENDO__PGEMM_F16, MR)
KERNEL_ROWS(f16_short, TENDO__PGEMM_F16, MR_SHORT)
#undef KERNEL_ROWS

static tendo__pgemm_rows_kernel kernel_rows_for(tendo__pgemm_kind kind, int64_t mr)
{
    static const tendo__pgemm_rows_kernel fns[][2] = {[TENDO__PGEMM_BF16] = {kernel_rows_bf16, kernel_rows_bf16_short},
                                            [TENDO__PGEMM_F32] = {kernel_rows_f32, kernel_rows_f32_short},
                                            [TENDO__PGEMM_F16] = {kernel_rows_f16, kernel_rows_f16_short}};
    return fns[kind][mr <= MR_SHORT];
}

static const tendo__pgemm_set avx512_set = {pack_b_slivers, kernel_for, kernel_rows_for, kernel_nt_for};

/* Set by tendo__pgemm_force_avx2 (tests). */
static atomic_int force_avx2;

/* The set that multiplies kind on this CPU, where tendo__pgemm_available. */
static const tendo__pgemm_set *set_of(tendo__pgemm_kind kind)
{
    bool avx512 = in_avx512_set(kind) && tendo__cpu_has(TENDO__CPU_AVX512) &&
                  !atomic_load_explicit(&force_avx2, memory_order_relaxed);

    return kind == TENDO__PGEMM_BF16 || avx512 || !tendo__pgemm_avx2 ? &avx512_set : tendo__pgemm_avx2;
}
#endif

/* See cpu.h. */
bool tendo__pgemm_on_avx2(tendo__pgemm_kind kind)
{
#if PGEMM_X86
    return tendo__pgemm_available(kind) && set_of(kind) == tendo__pgemm_avx2;
#else
    (void)kind;
    return false;
#endif
}

/* See cpu.h. */
bool tendo__pgemm_force_avx2(int avx2)
{
#if PGEMM_X86
    if (!tendo__pgemm_avx2 || !tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA | TENDO__CPU_F16C))
        return false;
    atomic_store_explicit(&force_avx2, avx2 != 0, memory_order_relaxed);
    return true;
#else
    (void)avx2;
    return false;
#endif
}

/* See cpu.h. */
void tendo__pgemm_pack_b(tendo__pgemm_kind kind, int64_t k, int64_t n, const void *b, int64_t rsb, int64_t csb,
                         int64_t s0, int64_t s1, void *dst)
{
#if PGEMM_X86
    const tendo__pgemm_set *set = set_of(kind);
    int64_t g = per_word(kind), slivers = (n + NR - 1) / NR;

    for (int64_t pc = 0; pc < k; pc += WORDS * g) { /* block pc: all slivers of its words, sliver after sliver */
        int64_t words = (imin(WORDS * g, k - pc) + g - 1) / g;
        uint32_t *blk = (uint32_t *)dst + pc / g * slivers * NR;
        for (int64_t s = s0; s < s1; s += SLIVER_GROUP)
            set->pack_b_slivers(kind, b, rsb, csb, k, n, pc, words, s, imin(s + SLIVER_GROUP, s1),
                                blk + s * words * NR);
    }
#else
    (void)kind, (void)k, (void)n, (void)b, (void)rsb, (void)csb, (void)s0, (void)s1, (void)dst;
#endif
}

/* See cpu.h. */
int tendo__pgemm_packed(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, float alpha, const void *a,
                        int64_t rsa, int64_t csa, const void *bp, int64_t bn, int64_t s0, float beta, float *c,
                        int64_t ldc)
{
#if PGEMM_X86
    const tendo__pgemm_set *set = set_of(kind);
    int64_t g = per_word(kind), slivers = (bn + NR - 1) / NR;
    struct tendo__pool_block *blk;
    uint32_t *ap;

    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    if (!(ap = tendo__gemm_scratch((size_t)(MC * WORDS) * 4, &blk))) /* the A panel */
        return -1;
    for (int64_t jc = 0; jc < n; jc += NC) {
        int64_t nc = imin(NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += WORDS * g) {
            int64_t kc = imin(WORDS * g, k - pc), words = (kc + g - 1) / g;
            const uint32_t *bblk = (const uint32_t *)bp + (pc / g * slivers + s0 * words) * NR;
            float blk_beta = pc == 0 ? beta : 1.0f;
            for (int64_t ic = 0; ic < m; ic += MC) {
                int64_t mc = imin(MC, m - ic);
                pack_a(kind, a, rsa, csa, m, ic, mc, pc, kc, ap);
                for (int64_t j = 0; j < nc; j += NR)
                    for (int64_t i = 0; i < mc; i += MR) {
                        /* the first row tile fetches the next sliver: B's panels come from
                         * memory (kept panels of a 4096 x 4096 weight, one thread, ms before
                         * and after: 8 rows 3.4 -> 2.7, 32 rows 10.7 -> 10.0; at
                         * TENDO_CPU=avx2 7.0 -> 4.6 and 14.1 -> 12.3) */
                        const uint32_t *pf = i == 0 && j + NR < nc ? bblk + (jc + j + NR) * words : NULL;
                        set->kernel_for(kind, mc - i)(words, ap + i * WORDS, bblk + (jc + j) * words, pf,
                                                      c + (ic + i) * ldc + jc + j, ldc, imin(MR, mc - i),
                                                      imin(NR, nc - j), alpha, blk_beta);
                    }
            }
        }
    }
    tendo__gemm_scratch_free(blk);
    return 0;
#else
    (void)kind, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)rsa, (void)csa, (void)bp, (void)bn, (void)s0;
    (void)beta, (void)c, (void)ldc;
    return -1;
#endif
}

/* See cpu.h.  C^T = W A^T: W's rows are the GEMM's A, read where they
 * are (its words are W's own: bf16 pairs or f32 values), and A^T is a
 * packed B of one sliver per NR rows of A, which stays in cache while the
 * weight streams past it once.  So W is neither packed nor read twice,
 * and each element of C is summed as tendo__pgemm sums it (the same words
 * in the same order: a product's two factors commute), so the bits are
 * the packed GEMM's.  C^T is made a tile of MR weight rows at a time, all
 * k blocks, then stored transposed.  A last tile of fewer than MR rows is
 * packed (pack_a zero fills the rest). */
int tendo__pgemm_nt(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
                    const void *w, int64_t ldw, float *c, int64_t ldc)
{
#if PGEMM_X86
    const tendo__pgemm_set *set = set_of(kind);
    tendo__pgemm_nt_kernel nt = set->kernel_nt_for(kind); /* not NULL where nt_takes says yes */
    int64_t g = per_word(kind), esize = elem_size(kind), slivers = (m + NR - 1) / NR, ldt = slivers * NR;
    bool whole = m == ldt && csa == 1 && (rsa * esize) % 4 == 0 && ((uintptr_t)a & 3) == 0;
    struct tendo__pool_block *bblk, *ablk;
    uint32_t *bp, *ap;
    float *ct;

    if (!tendo__pgemm_nt_takes(kind, k, w, ldw))
        return 1;
    if (m <= 0 || n <= 0)
        return 0;
    if (k <= 0) { /* an empty sum */
        for (int64_t j = 0; j < m; j++)
            memset(c + j * ldc, 0, (size_t)n * sizeof *c);
        return 0;
    }
    /* B (A^T) packed; the last tile of W and C^T's tile; A's rows dense and
     * zero padded to whole slivers where they are not, so that B is packed
     * by transposing words (a sliver of fewer columns is packed a word at
     * a time: bf16 28 x 4096 by a 4096 x 4096 weight, one thread, 6.8 ms
     * so, 5.9 padded; 32 rows 5.7) */
    size_t bbytes = tendo__pgemm_b_bytes(kind, k, ldt), abytes = whole ? 0 : (size_t)(ldt * k * esize + 3) / 4 * 4;
    if (!(bp = tendo__gemm_scratch(bbytes + abytes, &bblk)))
        return -1;
    if (!(ap = tendo__gemm_scratch((size_t)(MR * WORDS + MR * ldt) * 4, &ablk))) {
        tendo__gemm_scratch_free(bblk);
        return -1;
    }
    ct = (float *)(void *)(ap + MR * WORDS);
    if (whole) {
        tendo__pgemm_pack_b(kind, k, m, a, csa, rsa, 0, slivers, bp);
    } else {
        char *dense = (char *)bp + bbytes;
        for (int64_t j = 0; j < m; j++)
            if (csa == 1)
                memcpy(dense + j * k * esize, (const char *)a + j * rsa * esize, (size_t)(k * esize));
            else
                for (int64_t p = 0; p < k; p++)
                    memcpy(dense + (j * k + p) * esize, (const char *)a + (j * rsa + p * csa) * esize,
                           (size_t)esize);
        memset(dense + m * k * esize, 0, (size_t)((ldt - m) * k * esize));
        tendo__pgemm_pack_b(kind, k, ldt, dense, 1, k, 0, slivers, bp);
    }
    for (int64_t i = 0; i < n; i += MR) {
        int64_t mr = imin(MR, n - i);
        for (int64_t pc = 0; pc < k; pc += WORDS * g) {
            int64_t kc = imin(WORDS * g, k - pc), words = kc / g;
            const uint32_t *bblk0 = bp + pc / g * slivers * NR;
            float beta = pc == 0 ? 0.0f : 1.0f;
            if (mr < MR)
                pack_a(kind, w, ldw, 1, n, i, mr, pc, kc, ap);
            for (int64_t s = 0; s < slivers; s++) {
                const uint32_t *bs = bblk0 + s * words * NR;
                int64_t nr = imin(NR, m - s * NR);
                if (mr == MR)
                    nt(words, (const uint32_t *)(const void *)((const char *)w + (i * ldw + pc) * esize), ldw / g, bs,
                       ct + s * NR, ldt, nr, beta);
                else
                    set->kernel_for(kind, mr)(words, ap, bs, NULL, ct + s * NR, ldt, mr, nr, 1.0f, beta);
            }
        }
        for (int64_t j = 0; j < m; j++)
            for (int64_t r = 0; r < mr; r++)
                c[j * ldc + i + r] = ct[r * ldt + j];
    }
    tendo__gemm_scratch_free(ablk);
    tendo__gemm_scratch_free(bblk);
    return 0;
#else
    (void)kind, (void)m, (void)n, (void)k, (void)a, (void)rsa, (void)csa, (void)w, (void)ldw, (void)c, (void)ldc;
    return 1;
#endif
}

/* See cpu.h. */
bool tendo__pgemm_nt_takes(tendo__pgemm_kind kind, int64_t k, const void *w, int64_t ldw)
{
    /* where the set that multiplies kind has an nt kernel for it (bf16's
     * need AVX512_BF16 as ever; f16 would be widened first), and a bf16
     * row of odd length or start has no whole words */
#if PGEMM_X86
    return tendo__pgemm_available(kind) && set_of(kind)->kernel_nt_for(kind) && k % per_word(kind) == 0 &&
           ldw % per_word(kind) == 0 && ((uintptr_t)w & 3) == 0;
#else
    (void)kind, (void)k, (void)w, (void)ldw;
    return false;
#endif
}

/* tendo__pgemm for m <= MC, one A panel, B packed a sliver at a time just
 * before the row tiles multiply it, so that B is read from memory once and
 * its packed copy stays in cache.  A sliver of B's dense rows (a [k, n]
 * weight) whose words all exist is packed by the first row tile's kernel
 * as it multiplies (the set's rows kernel), so that reading B from memory
 * overlaps the arithmetic, and that kernel fetches the next sliver's lines
 * into L2 (the rows are pages apart, where the hardware prefetchers do
 * not follow).  Zen 4, 32 x 4096 x 4096 by a [k, n] weight, one thread,
 * ms, eight slivers packed then multiplied against packed as multiplied:
 * bf16 9.3-10.8 against 7.1-7.9 (6.0 from panels packed beforehand), f16
 * 15.8-17.5 against 12.0-12.7, f32 18.6-21.1 against 14.3-15.5.  Fetching
 * the next sliver's lines rather than, at the first sliver of each eight,
 * the lines of all eight (two to four runs, ms, the eight against the
 * next; 1 thread): f32 8 rows 5.6-6.1 against 3.5-3.6, 16 rows 8.1-8.2
 * against 7.0-7.1, 32 rows 11.5-12.0 against 10.3-10.8; bf16 8 rows
 * 1.9-2.2 against 1.6-1.9, 32 rows 5.4-5.6 against 5.1-5.3; f16 8 rows
 * 2.9-3.2 against 2.5-2.6, 32 rows 10.1-10.3 against 9.7.  The tiles, k blocks
 * and their order are tendo__pgemm_packed's, so the bits are too. */
static int pgemm_one_panel(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, float alpha, const void *a,
                           int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb, float beta, float *c,
                           int64_t ldc)
{
#if PGEMM_X86
    const tendo__pgemm_set *set = set_of(kind);
    int64_t g = per_word(kind), esize = elem_size(kind), slivers = (n + NR - 1) / NR;
    struct tendo__pool_block *ablk, *bblk;
    uint32_t *ap = tendo__gemm_scratch((size_t)(MC * WORDS) * 4, &ablk), *bs;

    if (!ap)
        return -1;
    if (!(bs = tendo__gemm_scratch((size_t)(WORDS * NR) * 4, &bblk))) {
        tendo__gemm_scratch_free(ablk);
        return -1;
    }
    for (int64_t pc = 0; pc < k; pc += WORDS * g) {
        int64_t kc = imin(WORDS * g, k - pc), words = (kc + g - 1) / g;
        float blk_beta = pc == 0 ? beta : 1.0f;
        bool rows = csb == 1 && kc == words * g; /* dense rows, every k of the block there */
        pack_a(kind, a, rsa, csa, m, 0, m, pc, kc, ap);
        for (int64_t s = 0; s < slivers; s++) {
            int64_t i = 0, nr = imin(NR, n - s * NR);
            float *cs = c + s * NR;
            if (rows && nr == NR) {
                set->kernel_rows_for(kind, m)(words, ap, bs, (const char *)b + (pc * rsb + s * NR) * esize, rsb, cs,
                                              ldc, imin(MR, m), NR, alpha, blk_beta);
                i = MR;
            } else {
                set->pack_b_slivers(kind, b, rsb, csb, k, n, pc, words, s, s + 1, bs);
            }
            for (; i < m; i += MR)
                set->kernel_for(kind, m - i)(words, ap + i * WORDS, bs, NULL, cs + i * ldc, ldc, imin(MR, m - i), nr,
                                             alpha, blk_beta);
        }
    }
    tendo__gemm_scratch_free(bblk);
    tendo__gemm_scratch_free(ablk);
    return 0;
#else
    (void)kind, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)rsa, (void)csa, (void)b, (void)rsb, (void)csb;
    (void)beta, (void)c, (void)ldc;
    return -1;
#endif
}

/* See cpu.h. */
int tendo__pgemm(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa,
                 int64_t csa, const void *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t ldc)
{
    struct tendo__pool_block *blk;
    void *bp;
    int rc;

    if (!tendo__pgemm_available(kind))
        return 1;
    if (m <= 0 || n <= 0 || k <= 0)
        return 1; /* nothing to multiply: the f32 path handles beta alone */
    if (m <= MC)
        return pgemm_one_panel(kind, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, ldc);
    if (!(bp = tendo__gemm_scratch(tendo__pgemm_b_bytes(kind, k, n), &blk)))
        return -1;
    tendo__pgemm_pack_b(kind, k, n, b, rsb, csb, 0, (n + NR - 1) / NR, bp);
    rc = tendo__pgemm_packed(kind, m, n, k, alpha, a, rsa, csa, bp, n, 0, beta, c, ldc);
    tendo__gemm_scratch_free(blk);
    return rc;
}
