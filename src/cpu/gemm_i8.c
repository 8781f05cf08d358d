/* src/cpu/gemm_i8.c - int8 x int8 -> int32 GEMM (tendo__gemm_i8, cpu.h).
 *
 * Integer sums are exact and, wrapping modulo 2^32, associative: every
 * path below gives the same bits whatever its blocking or order, and row
 * blocks on threads change nothing.
 *
 * Goto/BLIS structure: B is packed per KC x NC block into NR-column
 * slivers, A per MC x KC block into MR-row slivers, and a micro-kernel
 * multiplies one A sliver by one B sliver.  k is packed in groups of G:
 *   - AVX512_VNNI (G = 4, 12 x 32 tile): vpdpbusd multiplies unsigned by
 *     signed bytes and adds each group of 4 products into an int32 lane.
 *     A is packed as a + 128 (unsigned), so a tile sums (a + 128) b, and
 *     128 times the column sums of B (kept beside each B sliver) is taken
 *     off at the end: exact, no saturation (vpdpbusd, not vpdpbusds).
 *   - AVX2 (G = 2, 6 x 16 tile) and portable C (the same packing): both
 *     operands widened to int16 pairs, vpmaddwd (or plain C) adds each
 *     pair of products, exact in int32, into an int32 lane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) &&                                  \
    (defined(__clang__) ? __clang_major__ >= 8 : __GNUC__ >= 9)
#define GEMM_X86 1
#include <immintrin.h>
#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define TARGET_AVX2 __attribute__((target("avx2")))
#else
#define GEMM_X86 0
#endif

enum { KC = 1024, MC = 96, NC = 1024, ALIGN = 64 };

/* One way of multiplying: its tile, its k group, and its kernel.  The
 * kernel sets (first) or adds to (!first) the mr x nr valid part of the
 * MR x NR tile at c: A sliver ap times B sliver bp over q groups of k;
 * colsum (VNNI only) holds the B sliver's column sums. */
typedef struct {
    int mr, nr, g;
    bool offset_a; /* A packed as a + 128 (VNNI) */
    void (*kernel)(int64_t q, const uint32_t *ap, const void *bp, const int32_t *colsum, int32_t *c,
                   int64_t ldc, int64_t mr, int64_t nr, bool first);
} path;

static inline int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* Element (r, s) of a strided operand, or 0 outside [0, rows) x [0, cols). */
static inline int at(const int8_t *p, int64_t rs, int64_t cs, int64_t r, int64_t s, int64_t rows, int64_t cols)
{
    return r < rows && s < cols ? p[r * rs + s * cs] : 0;
}

/* Packs rows i0..i0+mc, k p0..p0+kc of A into MR-row slivers of k groups:
 * word [q*MR + r] holds A(i, q*G + e) for e < G, as int16 pairs (G = 2)
 * or bytes + 128 (G = 4); rows and k past the block are zero. */
static void pack_a(const path *w, const int8_t *a, int64_t rs, int64_t cs, int64_t i0, int64_t mc, int64_t p0,
                   int64_t kc, uint32_t *restrict dst)
{
    int64_t groups = (kc + w->g - 1) / w->g;

    for (int64_t t = 0; t < mc; t += w->mr, dst += w->mr * groups) {
        if (cs == 1 && t + w->mr <= mc && kc % w->g == 0) { /* whole rows, k dense: one load per group */
            for (int64_t r = 0; r < w->mr; r++) {
                const int8_t *row = a + (i0 + t + r) * rs + p0;
                for (int64_t q = 0; q < groups; q++) {
                    uint32_t word;
                    if (w->offset_a) { /* x86 is little-endian; a + 128 as a byte is a ^ 0x80 */
                        memcpy(&word, row + 4 * q, 4);
                        word ^= 0x80808080u;
                    } else {
                        word = (uint32_t)(uint16_t)(int16_t)row[2 * q] | (uint32_t)(uint16_t)(int16_t)row[2 * q + 1] << 16;
                    }
                    dst[q * w->mr + r] = word;
                }
            }
            continue;
        }
        for (int64_t q = 0; q < groups; q++)
            for (int64_t r = 0; r < w->mr; r++) {
                int64_t i = i0 + t + r, kk = p0 + q * w->g;
                uint32_t word = 0;
                for (int e = 0; e < w->g; e++) {
                    int v = at(a, rs, cs, i, kk + e, i0 + mc, p0 + kc);
                    word |= w->offset_a ? (uint32_t)(v + 128) << (8 * e) : (uint32_t)(uint16_t)(int16_t)v << (16 * e);
                }
                dst[q * w->mr + r] = word;
            }
    }
}

/* Bytes of one packed B sliver of kc: the groups, then (VNNI) NR column sums. */
static size_t sliver_bytes(const path *w, int64_t kc)
{
    return (size_t)((kc + w->g - 1) / w->g) * (size_t)w->nr * 4 + (w->offset_a ? (size_t)w->nr * 4 : 0);
}

#if GEMM_X86
/* The VNNI pack_b_dense of a B dense along its columns (cs 1): each group
 * of 4 rows interleaved bytewise, 16 columns per step; then the column
 * sums, each word's 4 signed bytes added by vpdpbusd against ones. */
TARGET_VNNI static void pack_b_vnni_rows(const int8_t *b, int64_t rs, int64_t p0, int64_t groups, int64_t j,
                                         char *restrict dst, int32_t *restrict colsum)
{
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512(), ones = _mm512_set1_epi8(1);

    for (int64_t q = 0; q < groups; q++) {
        const int8_t *r0 = b + (p0 + 4 * q) * rs + j;
        __m128i *out = (__m128i *)(void *)(dst + q * 32 * 4);
        for (int h = 0; h < 32; h += 16) {
            __m128i x0 = _mm_loadu_si128((const void *)(r0 + h)), x1 = _mm_loadu_si128((const void *)(r0 + rs + h));
            __m128i x2 = _mm_loadu_si128((const void *)(r0 + 2 * rs + h));
            __m128i x3 = _mm_loadu_si128((const void *)(r0 + 3 * rs + h));
            __m128i lo01 = _mm_unpacklo_epi8(x0, x1), hi01 = _mm_unpackhi_epi8(x0, x1);
            __m128i lo23 = _mm_unpacklo_epi8(x2, x3), hi23 = _mm_unpackhi_epi8(x2, x3);
            _mm_store_si128(out + h / 4 + 0, _mm_unpacklo_epi16(lo01, lo23)); /* columns h..h+3 */
            _mm_store_si128(out + h / 4 + 1, _mm_unpackhi_epi16(lo01, lo23));
            _mm_store_si128(out + h / 4 + 2, _mm_unpacklo_epi16(hi01, hi23));
            _mm_store_si128(out + h / 4 + 3, _mm_unpackhi_epi16(hi01, hi23));
        }
        s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_load_si512(out));
        s1 = _mm512_dpbusd_epi32(s1, ones, _mm512_load_si512(out + 4));
    }
    _mm512_storeu_si512(colsum, s0);
    _mm512_storeu_si512(colsum + 16, s1);
}
#endif

/* pack_b for one whole sliver (columns j.. j+NR) of whole k groups from
 * p0, B dense along its columns (cs 1) or along k (rs 1). */
static void pack_b_dense(const path *w, const int8_t *b, int64_t rs, int64_t cs, int64_t p0, int64_t groups,
                         int64_t j, char *restrict dst, int32_t *restrict colsum)
{
#if GEMM_X86
    if (w->offset_a && cs == 1) {
        pack_b_vnni_rows(b, rs, p0, groups, j, dst, colsum);
        return;
    }
#endif
    int32_t sum[32] = {0};

    for (int64_t q = 0; q < groups; q++)
        for (int e = 0; e < w->g; e++) {
            const int8_t *src = b + (p0 + q * w->g + e) * rs + j * cs;
            for (int64_t c = 0; c < w->nr; c++) {
                int v = src[c * cs];
                if (w->g == 4)
                    ((int8_t *)dst)[(q * w->nr + c) * 4 + e] = (int8_t)v;
                else
                    ((int16_t *)(void *)dst)[(q * w->nr + c) * 2 + e] = (int16_t)v;
                sum[c] += v;
            }
        }
    if (w->offset_a)
        memcpy(colsum, sum, (size_t)w->nr * sizeof *sum);
}

/* Packs k p0..p0+kc, columns j0..j0+nc of B (n columns) into NR-column
 * slivers: G values of column j for group q at [(q*NR + c)*G + e], int8
 * (G = 4) or int16 (G = 2), then the column sums (VNNI). */
static void pack_b(const path *w, const int8_t *b, int64_t rs, int64_t cs, int64_t n, int64_t p0, int64_t kc,
                   int64_t j0, int64_t nc, char *restrict dst)
{
    int64_t groups = (kc + w->g - 1) / w->g;

    for (int64_t u = 0; u < nc; u += w->nr, dst += sliver_bytes(w, kc)) {
        int32_t *colsum = (int32_t *)(void *)(dst + groups * w->nr * 4);
        if ((cs == 1 || rs == 1) && u + w->nr <= nc && kc % w->g == 0) { /* whole groups, a dense dim */
            pack_b_dense(w, b, rs, cs, p0, groups, j0 + u, dst, colsum);
            continue;
        }
        for (int64_t c = 0; c < w->nr; c++) {
            int64_t j = j0 + u + c;
            int32_t sum = 0;
            for (int64_t q = 0; q < groups; q++)
                for (int e = 0; e < w->g; e++) {
                    int v = j < j0 + nc ? at(b, rs, cs, p0 + q * w->g + e, j, p0 + kc, n) : 0;
                    if (w->g == 4)
                        ((int8_t *)dst)[(q * w->nr + c) * 4 + e] = (int8_t)v;
                    else
                        ((int16_t *)(void *)dst)[(q * w->nr + c) * 2 + e] = (int16_t)v;
                    sum += v;
                }
            if (w->offset_a)
                colsum[c] = sum;
        }
    }
}

/* Adds (or stores) the mr x nr valid part of an MR x NR tile t to c. */
static void put(const int32_t *t, int64_t tld, int32_t *c, int64_t ldc, int64_t mr, int64_t nr, bool first)
{
    for (int64_t r = 0; r < mr; r++)
        for (int64_t j = 0; j < nr; j++)
            c[r * ldc + j] = first ? t[r * tld + j] : (int32_t)((uint32_t)c[r * ldc + j] + (uint32_t)t[r * tld + j]);
}

/* Portable: int16 pairs, summed in uint32 (wrapping, never undefined). */
static void kernel_c(int64_t q, const uint32_t *ap, const void *bp, const int32_t *colsum, int32_t *c, int64_t ldc,
                     int64_t mr, int64_t nr, bool first)
{
    enum { R = 6, N = 16 };
    const int16_t *b = bp;
    uint32_t acc[R][N] = {{0}};

    (void)colsum;
    for (int64_t p = 0; p < q; p++, ap += R, b += 2 * N)
        for (int r = 0; r < R; r++) {
            int32_t a0 = (int16_t)(ap[r] & 0xffff), a1 = (int16_t)(ap[r] >> 16);
            for (int j = 0; j < N; j++)
                acc[r][j] += (uint32_t)(a0 * b[2 * j] + a1 * b[2 * j + 1]);
        }
    put((const int32_t *)(const void *)acc, N, c, ldc, mr, nr, first);
}

#if GEMM_X86
/* AVX2: vpmaddwd of a broadcast pair of A by 8 columns' pairs of B. */
TARGET_AVX2 static void kernel_avx2(int64_t q, const uint32_t *ap, const void *bp, const int32_t *colsum, int32_t *c,
                                    int64_t ldc, int64_t mr, int64_t nr, bool first)
{
    enum { R = 6, N = 16 };
    const __m256i *b = bp;
    __m256i acc[R][2];
    int32_t t[R * N];

    (void)colsum;
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t p = 0; p < q; p++, ap += R, b += 2) {
        __m256i b0 = _mm256_load_si256(b), b1 = _mm256_load_si256(b + 1);
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m256i ar = _mm256_set1_epi32((int)ap[r]);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(ar, b0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(ar, b1));
        }
    }
    if (mr == R && nr == N) {
        for (int r = 0; r < R; r++)
            for (int h = 0; h < 2; h++) {
                __m256i *cr = (__m256i *)(void *)(c + r * ldc + 8 * h);
                __m256i v = first ? acc[r][h] : _mm256_add_epi32(acc[r][h], _mm256_loadu_si256(cr));
                _mm256_storeu_si256(cr, v);
            }
        return;
    }
    for (int r = 0; r < R; r++)
        for (int h = 0; h < 2; h++)
            _mm256_storeu_si256((__m256i *)(void *)(t + r * N + 8 * h), acc[r][h]);
    put(t, N, c, ldc, mr, nr, first);
}

/* AVX512_VNNI: vpdpbusd of 4 broadcast bytes of A + 128 by 16 columns'
 * 4 bytes of B, less 128 x the columns' sums.  The 24 accumulators are
 * named variables: GCC 12 keeps an array of them in registers only with
 * a copy around every vpdpbusd, which took half the kernel's time. */
#define VNNI_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define VNNI_ZERO(r) __m512i c##r##a = _mm512_setzero_si512(), c##r##b = _mm512_setzero_si512();
#define VNNI_STEP(r)                                                 \
    {                                                                \
        __m512i ar = _mm512_set1_epi32((int)ap[r]);                  \
        c##r##a = _mm512_dpbusd_epi32(c##r##a, ar, b0);              \
        c##r##b = _mm512_dpbusd_epi32(c##r##b, ar, b1);              \
    }
#define VNNI_PUT(r)                                                  \
    {                                                                \
        __m512i va = _mm512_sub_epi32(c##r##a, off0), vb = _mm512_sub_epi32(c##r##b, off1); \
        int32_t *cr = c + (r) * ldc;                                 \
        if (!first) {                                                \
            va = _mm512_add_epi32(va, _mm512_loadu_si512(cr));       \
            vb = _mm512_add_epi32(vb, _mm512_loadu_si512(cr + 16));  \
        }                                                            \
        _mm512_storeu_si512(cr, va);                                 \
        _mm512_storeu_si512(cr + 16, vb);                            \
    }
#define VNNI_SAVE(r)                                                 \
    _mm512_store_si512(t + (r) * 32, c##r##a);                       \
    _mm512_store_si512(t + (r) * 32 + 16, c##r##b);

TARGET_VNNI static void kernel_vnni(int64_t q, const uint32_t *ap, const void *bp, const int32_t *colsum, int32_t *c,
                                    int64_t ldc, int64_t mr, int64_t nr, bool first)
{
    enum { R = 12, N = 32 };
    const __m512i *b = bp;
    __m512i off0, off1;
    _Alignas(64) int32_t t[R * N];

    VNNI_ROWS(VNNI_ZERO)
    for (int64_t p = 0; p < q; p++, ap += R, b += 2) {
        __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 1);
        VNNI_ROWS(VNNI_STEP)
    }
    off0 = _mm512_slli_epi32(_mm512_loadu_si512(colsum), 7);
    off1 = _mm512_slli_epi32(_mm512_loadu_si512(colsum + 16), 7);
    if (mr == R && nr == N) { /* a whole tile: straight from the registers (wrapping adds, as int32 does) */
        VNNI_ROWS(VNNI_PUT)
        return;
    }
    VNNI_ROWS(VNNI_SAVE)
    for (int r = 0; r < R; r++) {
        _mm512_store_si512(t + r * N, _mm512_sub_epi32(_mm512_load_si512(t + r * N), off0));
        _mm512_store_si512(t + r * N + 16, _mm512_sub_epi32(_mm512_load_si512(t + r * N + 16), off1));
    }
    put(t, N, c, ldc, mr, nr, first);
}
#endif

/* The path this CPU (as TENDO_CPU allows) takes. */
static const path *choose(void)
{
    static const path portable = {6, 16, 2, false, kernel_c};
#if GEMM_X86
    static const path avx2 = {6, 16, 2, false, kernel_avx2};
    static const path vnni = {12, 32, 4, true, kernel_vnni};

    if (tendo__cpu_has(TENDO__CPU_AVX512 | TENDO__CPU_AVX512VNNI))
        return &vnni;
    if (tendo__cpu_has(TENDO__CPU_AVX2))
        return &avx2;
#endif
    return &portable;
}

_Static_assert(MC % 12 == 0 && MC % 6 == 0 && NC % 32 == 0, "panels must be whole slivers");

int tendo__gemm_i8(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t rsa, int64_t csa, const int8_t *b,
                   int64_t rsb, int64_t csb, int32_t *c, int64_t ldc)
{
    const path *w = choose();
    int64_t kcmax = imin(k, KC);
    size_t abytes = (size_t)MC * (size_t)((kcmax + 3) / 2) * 4, bbytes = (size_t)(NC / w->nr) * sliver_bytes(w, kcmax);
    size_t around = (abytes + ALIGN - 1) / ALIGN * ALIGN;
    struct tendo__pool_block *blk;
    uint32_t *ap;
    char *bp;

    if (m <= 0 || n <= 0)
        return 0;
    if (k <= 0) {
        for (int64_t i = 0; i < m; i++)
            memset(c + i * ldc, 0, (size_t)n * sizeof *c);
        return 0;
    }
    if (!(ap = tendo__gemm_scratch(around + bbytes, &blk))) /* the A panel, then the B panel */
        return -1;
    bp = (char *)ap + around;
    for (int64_t jc = 0; jc < n; jc += NC) {
        int64_t nc = imin(NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += KC) {
            int64_t kc = imin(KC, k - pc), groups = (kc + w->g - 1) / w->g;
            size_t sb = sliver_bytes(w, kc);
            pack_b(w, b, rsb, csb, n, pc, kc, jc, nc, bp);
            for (int64_t ic = 0; ic < m; ic += MC) {
                int64_t mc = imin(MC, m - ic);
                pack_a(w, a, rsa, csa, ic, mc, pc, kc, ap);
                for (int64_t j = 0; j < nc; j += w->nr) {
                    const char *bs = bp + (size_t)(j / w->nr) * sb;
                    for (int64_t i = 0; i < mc; i += w->mr)
                        w->kernel(groups, ap + i * groups, bs, (const int32_t *)(const void *)(bs + groups * w->nr * 4),
                                  c + (ic + i) * ldc + jc + j, ldc, imin(w->mr, mc - i), imin(w->nr, nc - j), pc == 0);
                }
            }
        }
    }
    tendo__gemm_scratch_free(blk);
    return 0;
}
