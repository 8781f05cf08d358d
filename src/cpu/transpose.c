/* src/cpu/transpose.c - the transposed copy behind contiguous()/clone() of a
 * transposed view: dst (R x C, dense) = src with strides (1, sc).
 *
 * The naive loop touches a new cache line per element on one side; here
 * blocks are transposed in vector registers (16x16 with AVX-512 and 8x8
 * with AVX2 for 4-byte elements, 8x8 with SSE2 for 2-byte ones), walked in
 * larger tiles so both sides stay cached.  Elsewhere it reports false and
 * copy.c falls back to its scalar tiles.  The AVX-512 GEMM packs
 * transposed operands through it too (src/cpu/gemm_avx512.c).
 */
#include "cpu/cpu.h"
#include "core/internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

/* Outer tile edge, in elements: a tile of each side stays in L1/L2. */
#define OUTER 64

#if HAVE_X86
/* dst rows i = 0..7 (C apart) get column i of the 8x8 block whose row j
 * starts at src + j*sc. */
__attribute__((target("avx2"))) static void block8_u32(const float *src, int64_t sc, float *dst,
                                                        int64_t C)
{
    __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + sc);
    __m256 r2 = _mm256_loadu_ps(src + 2 * sc), r3 = _mm256_loadu_ps(src + 3 * sc);
    __m256 r4 = _mm256_loadu_ps(src + 4 * sc), r5 = _mm256_loadu_ps(src + 5 * sc);
    __m256 r6 = _mm256_loadu_ps(src + 6 * sc), r7 = _mm256_loadu_ps(src + 7 * sc);
    /* pairs of rows interleaved, then pairs of pairs, then 128-bit halves */
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));

    _mm256_storeu_ps(dst, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + C, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * C, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * C, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * C, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * C, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * C, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * C, _mm256_permute2f128_ps(s3, s7, 0x31));
}

/* The same for a 16x16 block with AVX-512, in three shuffle stages:
 * elements within 128-bit lanes, then pairs, then the lanes. */
__attribute__((target("avx512f"))) static void block16_u32(const float *src, int64_t sc, float *dst, int64_t C)
{
    __m512i r[16], t[16];

#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_si512((const void *)(src + i * sc));
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) { /* lane L of t[i]: rows i, i+1 of columns 4L, 4L+1; t[i+1]: 4L+2, 4L+3 */
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) { /* lane L of r[g + j]: rows g..g+3 of column 4L + j */
        r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) { /* column 4L + j: lane L of r[j], r[4+j], r[8+j], r[12+j] */
        __m512i x0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44), x1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xee);
        __m512i y0 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44), y1 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xee);
        _mm512_storeu_si512((void *)(dst + (0 + j) * C), _mm512_shuffle_i32x4(x0, y0, 0x88));
        _mm512_storeu_si512((void *)(dst + (4 + j) * C), _mm512_shuffle_i32x4(x0, y0, 0xdd));
        _mm512_storeu_si512((void *)(dst + (8 + j) * C), _mm512_shuffle_i32x4(x1, y1, 0x88));
        _mm512_storeu_si512((void *)(dst + (12 + j) * C), _mm512_shuffle_i32x4(x1, y1, 0xdd));
    }
}

/* The same for 2-byte elements, with SSE2 (always there on x86-64). */
static void block8_u16(const uint16_t *src, int64_t sc, uint16_t *dst, int64_t C)
{
    __m128i a[8], b[8], c[8];

    for (int j = 0; j < 8; j++)
        a[j] = _mm_loadu_si128((const __m128i *)(const void *)(src + j * sc));
    for (int j = 0; j < 8; j += 2) {
        b[j] = _mm_unpacklo_epi16(a[j], a[j + 1]);
        b[j + 1] = _mm_unpackhi_epi16(a[j], a[j + 1]);
    }
    c[0] = _mm_unpacklo_epi32(b[0], b[2]), c[1] = _mm_unpackhi_epi32(b[0], b[2]);
    c[2] = _mm_unpacklo_epi32(b[1], b[3]), c[3] = _mm_unpackhi_epi32(b[1], b[3]);
    c[4] = _mm_unpacklo_epi32(b[4], b[6]), c[5] = _mm_unpackhi_epi32(b[4], b[6]);
    c[6] = _mm_unpacklo_epi32(b[5], b[7]), c[7] = _mm_unpackhi_epi32(b[5], b[7]);
    for (int i = 0; i < 4; i++) {
        _mm_storeu_si128((__m128i *)(void *)(dst + 2 * i * C), _mm_unpacklo_epi64(c[i], c[i + 4]));
        _mm_storeu_si128((__m128i *)(void *)(dst + (2 * i + 1) * C), _mm_unpackhi_epi64(c[i], c[i + 4]));
    }
}

/* NAME(src, sc, dst, R, C): the whole copy in B x B blocks of BLOCK
 * (OUTER must be a multiple of B), the ragged edges element by element. */
#define DEFINE_SLAB(NAME, T, B, BLOCK, ATTR)                                                  \
    ATTR static void NAME(const T *src, int64_t sc, T *dst, int64_t R, int64_t C)           \
    {                                                                                         \
        int64_t RB = R / B * B, CB = C / B * B;                                               \
        for (int64_t r0 = 0; r0 < RB; r0 += OUTER)                                            \
            for (int64_t c0 = 0; c0 < CB; c0 += OUTER) {                                      \
                int64_t r1 = r0 + OUTER < RB ? r0 + OUTER : RB;                               \
                int64_t c1 = c0 + OUTER < CB ? c0 + OUTER : CB;                               \
                for (int64_t r = r0; r < r1; r += B)                                          \
                    for (int64_t c = c0; c < c1; c += B)                                      \
                        BLOCK(src + r + c * sc, sc, dst + r * C + c, C);                      \
            }                                                                                 \
        /* the ragged right and bottom edges */                                               \
        for (int64_t r = 0; r < R; r++)                                                       \
            for (int64_t c = r < RB ? CB : 0; c < C; c++)                                     \
                dst[r * C + c] = src[r + c * sc];                                             \
    }

DEFINE_SLAB(slab16_float, float, 16, block16_u32, __attribute__((target("avx512f"))))
DEFINE_SLAB(slab_float, float, 8, block8_u32, __attribute__((target("avx2"))))
DEFINE_SLAB(slab_uint16_t, uint16_t, 8, block8_u16, )
#endif /* HAVE_X86 */

bool tendo__transpose_copy(void *dst, const void *src, int64_t R, int64_t C, int64_t sc,
                           size_t elsize)
{
#if HAVE_X86
    if (elsize == 4 && tendo__cpu_has(TENDO__CPU_AVX512)) {
        slab16_float(src, sc, dst, R, C);
        return true;
    }
    if (elsize == 4 && tendo__cpu_has(TENDO__CPU_AVX2)) {
        slab_float(src, sc, dst, R, C);
        return true;
    }
    if (elsize == 2) {
        slab_uint16_t(src, sc, dst, R, C);
        return true;
    }
#else
    (void)dst, (void)src, (void)R, (void)C, (void)sc, (void)elsize;
#endif
    return false;
}
