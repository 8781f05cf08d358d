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
 * Determinism: every element of C sums its k pairs in increasing order in
 * KC blocks taken in increasing order, in whichever tile and row it sits,
 * so row blocks of any size (TENDO__GEMM_MR multiples, as matmul.c cuts)
 * give bitwise the same C as one call. */
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
    BNR = 32,   /* columns: two vectors of 16 */
    BKC = 512,  /* k per block (256 pairs) */
    BMC = 96,   /* rows of A per packed panel */
    BNC = 2048, /* columns of B per packed panel */
    BALIGN = 64,
};

_Static_assert(BMC % BMR == 0 && BNC % BNR == 0 && BKC % 2 == 0, "panels must be whole slivers of k pairs");

#if GEMM_BF16
static inline int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* The bf16 bits of element (r, s) of a strided operand p, or 0 outside
 * [0, rows) x [0, cols). */
static inline uint32_t at(const uint16_t *p, int64_t rs, int64_t cs, int64_t r, int64_t s, int64_t rows,
                          int64_t cols)
{
    return r < rows && s < cols ? p[r * rs + s * cs] : 0;
}

/* Packs rows i0..i0+mc of A (m rows, strides rs, cs), k from p0 on for kc,
 * into BMR-row slivers of k pairs: sliver t at dst + t*BMR*(kc/2 rounded
 * up), word [q*BMR + r] = A(i, 2q) | A(i, 2q+1) << 16; rows past m and the
 * k past the end are zero. */
static void pack_a(const uint16_t *a, int64_t rs, int64_t cs, int64_t m, int64_t i0, int64_t mc,
                   int64_t p0, int64_t kc, uint32_t *restrict dst)
{
    int64_t pairs = (kc + 1) / 2;

    for (int64_t t = 0; t < mc; t += BMR, dst += BMR * pairs) {
        if (cs == 1 && t + BMR <= mc && kc % 2 == 0) { /* whole rows, k dense: each pair is one word */
            for (int64_t r = 0; r < BMR; r++) {
                const uint16_t *row = a + (i0 + t + r) * rs + p0;
                for (int64_t q = 0; q < pairs; q++) {
                    uint32_t w;
                    memcpy(&w, row + 2 * q, sizeof w); /* x86 is little-endian: A(i, 2q) in the low half */
                    dst[q * BMR + r] = w;
                }
            }
            continue;
        }
        for (int64_t q = 0; q < pairs; q++)
            for (int64_t r = 0; r < BMR; r++) {
                int64_t i = i0 + t + r, kk = p0 + 2 * q;
                dst[q * BMR + r] = i < i0 + mc ? at(a, rs, cs, i, kk, m, p0 + kc) | at(a, rs, cs, i, kk + 1, m, p0 + kc) << 16
                                               : 0;
            }
    }
}

/* Packs k from p0 on for kc, columns j0..j0+nc of B (n columns, strides rs,
 * cs) into BNR-column slivers: word [q*BNR + c] = B(2q, j) | B(2q+1, j) << 16. */
static void pack_b(const uint16_t *b, int64_t rs, int64_t cs, int64_t n, int64_t p0, int64_t kc,
                   int64_t j0, int64_t nc, uint32_t *restrict dst)
{
    int64_t pairs = (kc + 1) / 2;

    for (int64_t u = 0; u < nc; u += BNR, dst += BNR * pairs)
        for (int64_t q = 0; q < pairs; q++) {
            int64_t kk = p0 + 2 * q;
            uint32_t *w = dst + q * BNR;
            if (cs == 1 && j0 + u + BNR <= n && kk + 1 < p0 + kc) { /* two dense rows */
                const uint16_t *r0 = b + kk * rs + j0 + u, *r1 = r0 + rs;
                for (int64_t c = 0; c < BNR; c++)
                    w[c] = r0[c] | (uint32_t)r1[c] << 16;
            } else {
                for (int64_t c = 0; c < BNR; c++) {
                    int64_t j = j0 + u + c;
                    w[c] = j < j0 + nc ? at(b, rs, cs, kk, j, p0 + kc, n) | at(b, rs, cs, kk + 1, j, p0 + kc, n) << 16
                                       : 0;
                }
            }
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
    for (int64_t q = 0; q < pairs; q++, a += BMR, b += BNR) {
        __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 16);
#pragma GCC unroll 12
        for (int r = 0; r < BMR; r++) {
            __m512bh ar = (__m512bh)_mm512_set1_epi32((int)a[r]);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], ar, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], ar, b1);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int h = 0; h < 2 && 16 * h < nr; h++) {
            __mmask16 keep = nr - 16 * h >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - 16 * h)) - 1);
            float *cr = c + r * ldc + 16 * h;
            __m512 v = _mm512_mul_ps(acc[r][h], _mm512_set1_ps(alpha));
            if (beta != 0.0f)
                v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(keep, cr), _mm512_set1_ps(beta), v);
            _mm512_mask_storeu_ps(cr, keep, v);
        }
}
#endif

/* See cpu.h. */
int tendo__gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa, int64_t csa,
                     const void *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t ldc)
{
#if GEMM_BF16
    int64_t kcmax = imin(k, BKC), pairs_max = (kcmax + 1) / 2;
    size_t abytes = (size_t)(BMC * pairs_max) * 4, bbytes = (size_t)(BNC * pairs_max) * 4;
    size_t around = (abytes + BALIGN - 1) / BALIGN * BALIGN;
    struct tendo__pool_block *blk;
    uint32_t *ap, *bp;

    if (!tendo__cpu_has(TENDO__CPU_AVX512BF16))
        return 1;
    if (m <= 0 || n <= 0 || k <= 0)
        return 1; /* nothing to multiply: the f32 path handles beta alone */
    if (!(ap = tendo__gemm_scratch(around + bbytes, &blk))) /* the A panel, then the B panel */
        return -1;
    bp = (uint32_t *)(void *)((char *)ap + around);
    for (int64_t jc = 0; jc < n; jc += BNC) {
        int64_t nc = imin(BNC, n - jc);
        for (int64_t pc = 0; pc < k; pc += BKC) {
            int64_t kc = imin(BKC, k - pc), pairs = (kc + 1) / 2;
            float blk_beta = pc == 0 ? beta : 1.0f;
            pack_b(b, rsb, csb, n, pc, kc, jc, nc, bp);
            for (int64_t ic = 0; ic < m; ic += BMC) {
                int64_t mc = imin(BMC, m - ic);
                pack_a(a, rsa, csa, m, ic, mc, pc, kc, ap);
                for (int64_t j = 0; j < nc; j += BNR)
                    for (int64_t i = 0; i < mc; i += BMR)
                        kernel(pairs, ap + i * pairs, bp + j * pairs, c + (ic + i) * ldc + jc + j, ldc,
                               imin(BMR, mc - i), imin(BNR, nc - j), alpha, blk_beta);
            }
        }
    }
    tendo__gemm_scratch_free(blk);
    return 0;
#else
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)rsa, (void)csa, (void)b, (void)rsb, (void)csb;
    (void)beta, (void)c, (void)ldc;
    return 1;
#endif
}
