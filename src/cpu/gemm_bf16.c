/* src/cpu/gemm_bf16.c - bf16 x bf16 -> f32 GEMM with the AVX512_BF16
 * dot-product instruction (vdpbf16ps), for CPUs that have it.
 *
 * Same Goto/BLIS structure as gemm.c, but the panels stay bf16: k is taken
 * in pairs, and a packed element is one 32-bit word holding A(i, 2p) in its
 * low half and A(i, 2p+1) in its high half (likewise for B), so that one
 * vdpbf16ps multiplies 16 columns by two k steps: 32 products, each exact
 * in f32, added into the f32 accumulator one after the other (odd k first,
 * as the instruction does) with round-to-nearest-even.  The instruction
 * treats bf16 subnormal inputs and f32 subnormal results as zero.
 *
 * B is packed whole, once per product (tendo__gemm_bf16_pack_b): matmul.c
 * packs it on all threads together and then hands row blocks of A to the
 * threads, which share the packed B instead of each packing its own.
 *
 * Determinism: every element of C sums its k pairs in increasing order in
 * BKC blocks taken in increasing order, in whichever tile and row it sits,
 * so row blocks of any size (TENDO__GEMM_MR multiples, as matmul.c cuts)
 * and column blocks of whole slivers give bitwise the same C as one call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) &&                                  \
    (defined(__clang__) ? __clang_major__ >= 11 : __GNUC__ >= 10)
#define GEMM_BF16 1
#include <immintrin.h>
#define TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#else
#define GEMM_BF16 0
#endif

enum {
    BMR = 12,   /* rows of C per micro-kernel tile (12 x 2 accumulators) */
    BNR = TENDO__GEMM_BF16_NR, /* columns: two vectors of 16 */
    BKC = 512,  /* k per block */
    BKP = BKC / 2, /* k pairs per block: the slot of a packed A row */
    BMC = 264,  /* rows of A per packed panel */
    BNC = 2048, /* columns of B per pass over the A panel */
    BALIGN = 64,
};

_Static_assert(BMC % BMR == 0 && BNC % BNR == 0 && BKC % 2 == 0, "panels must be whole slivers of k pairs");

static inline int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* See cpu.h. */
size_t tendo__gemm_bf16_b_bytes(int64_t k, int64_t n)
{
    return (size_t)((n + BNR - 1) / BNR * BNR) * (size_t)((k + 1) / 2) * 4;
}

#if GEMM_BF16
/* The bf16 bits of element (r, s) of a strided operand p, or 0 outside
 * [0, rows) x [0, cols). */
static inline uint32_t at(const uint16_t *p, int64_t rs, int64_t cs, int64_t r, int64_t s, int64_t rows,
                          int64_t cols)
{
    return r < rows && s < cols ? p[r * rs + s * cs] : 0;
}

/* The 32-bit word at p (two bf16 of consecutive k), unaligned. */
static inline uint32_t word(const uint16_t *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w); /* x86 is little-endian: *p in the low half */
    return w;
}

/* Packs rows i0..i0+mc of A (m rows, strides rs, cs), k from p0 on for kc,
 * into BMR-row slivers of k pairs, each row a slot of BKP words: sliver t
 * at dst + t*BMR*BKP, word [r*BKP + q] = A(i, 2q) | A(i, 2q+1) << 16.  The
 * fixed slot lets the kernel broadcast every row from one pointer with
 * constant displacements, and makes packing a dense row a plain copy.
 * Rows past the block and the k past its end are zero. */
TARGET_BF16 static void pack_a(const uint16_t *a, int64_t rs, int64_t cs, int64_t m, int64_t i0, int64_t mc,
                               int64_t p0, int64_t kc, uint32_t *restrict dst)
{
    int64_t pairs = (kc + 1) / 2;

    for (int64_t t = 0; t < mc; t += BMR, dst += BMR * BKP)
        for (int64_t r = 0; r < BMR; r++) {
            int64_t i = i0 + t + r;
            uint32_t *w = dst + r * BKP;
            if (t + r >= mc)
                memset(w, 0, (size_t)pairs * sizeof *w);
            else if (cs == 1 && kc % 2 == 0) { /* k dense: the pairs are the row's words as they are */
                const uint16_t *row = a + i * rs + p0;
                for (int64_t q = 0; q < pairs; q += 16) { /* the slot is 64-byte aligned */
                    __mmask16 keep = pairs - q >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (pairs - q)) - 1);
                    _mm512_mask_store_epi32(w + q, keep, _mm512_maskz_loadu_epi32(keep, row + 2 * q));
                }
            }
            else
                for (int64_t q = 0; q < pairs; q++)
                    w[q] = at(a, rs, cs, i, p0 + 2 * q, m, p0 + kc) | at(a, rs, cs, i, p0 + 2 * q + 1, m, p0 + kc) << 16;
        }
}

/* dst[w*BNR + r] = word w of row r, for 16 rows of 16 words (32 bf16) at
 * src + r*ld: a 16 x 16 transpose of 32-bit words, in three shuffle
 * stages (words within 128-bit lanes, then pairs, then the lanes). */
TARGET_BF16 static void transpose16(const uint16_t *src, int64_t ld, uint32_t *restrict dst)
{
    __m512i r[16], t[16];

#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_si512((const void *)(src + i * ld));
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) { /* lane L of t[i]: rows i, i+1 of words 4L, 4L+1; t[i+1]: 4L+2, 4L+3 */
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) { /* lane L of r[g + j]: rows g..g+3 of word 4L + j */
        r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) { /* word 4L + j: lane L of r[j], r[4+j], r[8+j], r[12+j] */
        __m512i x0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44), x1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xee);
        __m512i y0 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44), y1 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xee);
        _mm512_store_si512(dst + (0 + j) * BNR, _mm512_shuffle_i32x4(x0, y0, 0x88));
        _mm512_store_si512(dst + (4 + j) * BNR, _mm512_shuffle_i32x4(x0, y0, 0xdd));
        _mm512_store_si512(dst + (8 + j) * BNR, _mm512_shuffle_i32x4(x1, y1, 0x88));
        _mm512_store_si512(dst + (12 + j) * BNR, _mm512_shuffle_i32x4(x1, y1, 0xdd));
    }
}

/* One B sliver, columns j0..j0+BNR, pairs k pairs from kk0 on (k rows in
 * all, n columns): word [q*BNR + c] = B(2q, j) | B(2q+1, j) << 16, zero
 * past k or n.  Rows of B dense (cs 1, a weight used as is) go 16 columns
 * a vector at a time; columns of B dense (rs 1, a transposed Linear
 * weight) hold each pair as one word: 16 x 16 blocks of them are
 * transposed in registers, reading each column in order. */
TARGET_BF16 static void pack_b_sliver(const uint16_t *b, int64_t rs, int64_t cs, int64_t k, int64_t n, int64_t kk0,
                                      int64_t pairs, int64_t j0, uint32_t *restrict dst)
{
    bool cols = j0 + BNR <= n;
    int64_t q = 0, dense = cols ? imin(pairs, (k - kk0) / 2) : 0; /* pairs whose two rows exist */

    if (cs == 1)
        for (; q < dense; q++) {
            const uint16_t *r0 = b + (kk0 + 2 * q) * rs + j0, *r1 = r0 + rs;
            for (int h = 0; h < BNR; h += 16) {
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(r0 + h)));
                __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(r1 + h)));
                _mm512_store_si512(dst + q * BNR + h, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    else if (rs == 1 && dense > 0) {
        for (; q + 16 <= dense; q += 16) {
            for (int c = 0; c < BNR; c++) /* the same line of the next sliver's columns: a weight is read once */
                _mm_prefetch((const char *)(b + (j0 + BNR + c) * cs + kk0 + 2 * q), _MM_HINT_T0);
            for (int h = 0; h < BNR; h += 16)
                transpose16(b + (j0 + h) * cs + kk0 + 2 * q, cs, dst + q * BNR + h);
        }
        for (int64_t c = 0; c < BNR; c++) {
            const uint16_t *col = b + (j0 + c) * cs + kk0;
            for (int64_t p = q; p < dense; p++)
                dst[p * BNR + c] = word(col + 2 * p);
        }
        q = dense;
    }
    for (; q < pairs; q++)
        for (int64_t c = 0; c < BNR; c++) {
            int64_t kk = kk0 + 2 * q;
            dst[q * BNR + c] = at(b, rs, cs, kk, j0 + c, k, n) | at(b, rs, cs, kk + 1, j0 + c, k, n) << 16;
        }
}

/* The BMR x BNR tile at c (row stride ldc, mr x nr of it valid) becomes
 * alpha * (A sliver x B sliver over pairs k pairs) + beta * c (beta 0: c
 * not read). */
TARGET_BF16 static void kernel(int64_t pairs, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc,
                               int64_t mr, int64_t nr, float alpha, float beta)
{
    __m512 acc[BMR][2]; /* fully unrolled below, so it lives in 24 registers */

#pragma GCC unroll 12
    for (int r = 0; r < BMR; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < pairs; q++, a++, b += BNR) {
        __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 16);
#pragma GCC unroll 12
        for (int r = 0; r < BMR; r++) {
            __m512bh ar = (__m512bh)_mm512_set1_epi32((int)a[r * BKP]);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], ar, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], ar, b1);
        }
    }
    if (mr == BMR && nr == BNR) { /* a whole tile: stored straight from the registers */
#pragma GCC unroll 12
        for (int r = 0; r < BMR; r++)
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
    float part[BMR][BNR] __attribute__((aligned(64))); /* an edge tile: through memory, mr x nr of it */
#pragma GCC unroll 12
    for (int r = 0; r < BMR; r++) {
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
#endif

/* See cpu.h. */
void tendo__gemm_bf16_pack_b(int64_t k, int64_t n, const void *b, int64_t rsb, int64_t csb, int64_t s0, int64_t s1,
                             void *dst)
{
#if GEMM_BF16
    int64_t slivers = (n + BNR - 1) / BNR;

    for (int64_t pc = 0; pc < k; pc += BKC) { /* block pc: all slivers of its BKC/2 pairs, sliver after sliver */
        int64_t pairs = (imin(BKC, k - pc) + 1) / 2;
        uint32_t *blk = (uint32_t *)dst + pc / 2 * slivers * BNR;
        for (int64_t s = s0; s < s1; s++)
            pack_b_sliver(b, rsb, csb, k, n, pc, pairs, s * BNR, blk + s * pairs * BNR);
    }
#else
    (void)k, (void)n, (void)b, (void)rsb, (void)csb, (void)s0, (void)s1, (void)dst;
#endif
}

/* See cpu.h. */
int tendo__gemm_bf16_packed(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa, int64_t csa,
                            const void *bp, int64_t bn, int64_t s0, float beta, float *c, int64_t ldc)
{
#if GEMM_BF16
    int64_t slivers = (bn + BNR - 1) / BNR;
    struct tendo__pool_block *blk;
    uint32_t *ap;

    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    if (!(ap = tendo__gemm_scratch((size_t)(BMC * BKP) * 4, &blk))) /* the A panel */
        return -1;
    for (int64_t jc = 0; jc < n; jc += BNC) {
        int64_t nc = imin(BNC, n - jc);
        for (int64_t pc = 0; pc < k; pc += BKC) {
            int64_t pairs = (imin(BKC, k - pc) + 1) / 2;
            const uint32_t *bblk = (const uint32_t *)bp + (pc / 2 * slivers + s0 * pairs) * BNR;
            float blk_beta = pc == 0 ? beta : 1.0f;
            for (int64_t ic = 0; ic < m; ic += BMC) {
                int64_t mc = imin(BMC, m - ic);
                pack_a(a, rsa, csa, m, ic, mc, pc, imin(BKC, k - pc), ap);
                for (int64_t j = 0; j < nc; j += BNR)
                    for (int64_t i = 0; i < mc; i += BMR)
                        kernel(pairs, ap + i * BKP, bblk + (jc + j) * pairs, c + (ic + i) * ldc + jc + j, ldc,
                               imin(BMR, mc - i), imin(BNR, nc - j), alpha, blk_beta);
            }
        }
    }
    tendo__gemm_scratch_free(blk);
    return 0;
#else
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)rsa, (void)csa, (void)bp, (void)bn, (void)s0;
    (void)beta, (void)c, (void)ldc;
    return -1;
#endif
}

/* See cpu.h. */
int tendo__gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa, int64_t csa,
                     const void *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t ldc)
{
    struct tendo__pool_block *blk;
    void *bp;
    int rc;

    if (!tendo__cpu_has(TENDO__CPU_AVX512BF16) || !GEMM_BF16)
        return 1;
    if (m <= 0 || n <= 0 || k <= 0)
        return 1; /* nothing to multiply: the f32 path handles beta alone */
    if (!(bp = tendo__gemm_scratch(tendo__gemm_bf16_b_bytes(k, n), &blk)))
        return -1;
    tendo__gemm_bf16_pack_b(k, n, b, rsb, csb, 0, (n + BNR - 1) / BNR, bp);
    rc = tendo__gemm_bf16_packed(m, n, k, alpha, a, rsa, csa, bp, n, 0, beta, c, ldc);
    tendo__gemm_scratch_free(blk);
    return rc;
}
