/* src/cpu/gemm.c - tendo's own sgemm: Goto/BLIS blocking, packing that reads
 * any strides and widens f16/bf16, and an AVX2+FMA 6x16 micro-kernel with
 * a portable C fallback chosen at run time.
 *
 * Loop nest (outermost first): columns of C in NC blocks; k in KC blocks,
 * each packing a KC x NC panel of B; rows of C in MC blocks, each packing
 * an MC x KC panel of A; then NR-column and MR-row slivers of those panels,
 * one micro-kernel call per MR x NR tile of C.  Packed slivers are
 * zero-padded to full width, so the micro-kernel always computes a full
 * tile; tiles hanging over the edge of C go through a small buffer.
 * Element offsets are computed in int64_t and only offsets of elements
 * that exist are turned into pointers, so negative strides are fine.
 */
#include "cpu/gemm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/pool.h"
#include "core/traits.h"
#include "cpu/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TENDO__GEMM_X86 1
#include <immintrin.h>
#else
#define TENDO__GEMM_X86 0
#endif

enum {
    MR = TENDO__GEMM_MR,
    NR = TENDO__GEMM_NR,
    KC = TENDO__GEMM_KC,
    MC = TENDO__GEMM_MC,
    NC = TENDO__GEMM_NC,
    ALIGN = 64, /* bytes, for the packed panels */
};

_Static_assert(MC % MR == 0 && NC % NR == 0, "panel sizes must be whole slivers");
_Static_assert(MR == 6 && NR == 16, "the AVX2 micro-kernel is written for 6x16");

/* One operand: element (r, s) is p[r*rs + s*cs], of the dtype t. */
typedef struct {
    const void *p;
    int64_t rs, cs;
    const tendo__traits *t;
} operand;

/* A micro-kernel: the MR x NR tile c (row stride ldc) becomes
 * alpha * (a-sliver x b-sliver) + beta * c, where the sum over kc is taken
 * in increasing k from zero; beta == 0 means c is not read. */
typedef void (*kernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                          float alpha, float beta);

/* The smaller of x and y. */
static inline int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* x rounded up to a multiple of q. */
static inline int64_t round_up(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

/* ---- reading and packing ------------------------------------------------ */

/* n elements of src from element off on, step elements apart, as floats:
 * a pointer into src itself for dense f32, else widened into tmp. */
static inline const float *load_run(const void *src, int64_t off, int64_t step, int64_t n, const tendo__traits *t,
                                    float *tmp)
{
    const char *p = (const char *)src + off * (int64_t)t->size;

    if (t->own_compute && step == 1)
        return (const float *)(const void *)p;
    t->widen(p, step, tmp, n);
    return tmp;
}

/* Packs one sliver: w <= W lanes by kc depth, lane l at depth d being
 * element base + l*ls + d*ds of src, into dst[d*W + l], with lanes w..W-1
 * zero.  tmp holds W*kc floats. */
static void pack_sliver(const void *src, const tendo__traits *t, int64_t base, int64_t ls, int64_t ds, int64_t w,
                        int64_t W, int64_t kc, float *restrict dst, float *restrict tmp)
{
    if (ls == 1 && t->own_compute) {
        /* f32 lanes contiguous: a short copy per depth step. */
        const float *s = src;
        for (int64_t d = 0; d < kc; d++)
            for (int64_t l = 0; l < w; l++)
                dst[d * W + l] = s[base + d * ds + l];
    } else if (ls == 1) {
        /* lanes contiguous: widen one run per depth step, in place. */
        for (int64_t d = 0; d < kc; d++)
            load_run(src, base + d * ds, 1, w, t, dst + d * W);
    } else {
        /* each lane's run along the depth (read in place when dense f32,
         * else widened or gathered), then interleaved */
        const float *run[NR > MR ? NR : MR];
        for (int64_t l = 0; l < w; l++)
            run[l] = load_run(src, base + l * ls, ds, kc, t, tmp + l * kc);
        for (int64_t d = 0; d < kc; d++)
            for (int64_t l = 0; l < w; l++)
                dst[d * W + l] = run[l][d];
    }
    if (w < W)
        for (int64_t d = 0; d < kc; d++)
            memset(dst + d * W + w, 0, (size_t)(W - w) * sizeof *dst);
}

/* pack_a for a non-f32 A with unit row stride: each column's mc elements
 * are widened in one bulk call (tmp holds mc floats), then dealt out to
 * the slivers; the padding lanes of the last sliver are zeroed. */
static void pack_a_half_cols(const operand *A, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                             float *restrict dst, float *restrict tmp)
{
    for (int64_t d = 0; d < kc; d++) {
        const float *run = load_run(A->p, i0 + (p0 + d) * A->cs, 1, mc, A->t, tmp);
        for (int64_t i = 0; i < mc; i += MR) {
            int64_t w = min64(MR, mc - i);
            float *out = dst + i * kc + d * MR;
            for (int64_t l = 0; l < w; l++)
                out[l] = run[i + l];
            for (int64_t l = w; l < MR; l++)
                out[l] = 0.0f;
        }
    }
}

/* Packs rows i0..i0+mc-1, columns p0..p0+kc-1 of A into MR-row slivers
 * (sliver t at dst + t*MR*kc, k-major, the last one zero-padded). */
static void pack_a(const operand *A, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                   float *restrict dst, float *restrict tmp)
{
    if (A->rs == 1 && !A->t->own_compute) {
        pack_a_half_cols(A, i0, mc, p0, kc, dst, tmp);
        return;
    }
    for (int64_t i = 0; i < mc; i += MR) {
        int64_t base = (i0 + i) * A->rs + p0 * A->cs;
        pack_sliver(A->p, A->t, base, A->rs, A->cs, min64(MR, mc - i), MR, kc, dst + i * kc,
                    tmp);
    }
}

/* Packs rows p0..p0+kc-1, columns j0..j0+nc-1 of B into NR-column slivers
 * (sliver u at dst + u*NR*kc, k-major, the last one zero-padded). */
static void pack_b(const operand *B, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float *restrict dst, float *restrict tmp)
{
    for (int64_t j = 0; j < nc; j += NR) {
        int64_t base = p0 * B->rs + (j0 + j) * B->cs;
        pack_sliver(B->p, B->t, base, B->cs, B->rs, min64(NR, nc - j), NR, kc, dst + j * kc,
                    tmp);
    }
}

/* ---- micro-kernels ------------------------------------------------------ */

/* Portable micro-kernel: plain C, one accumulator per tile element. */
static void kernel_portable(int64_t kc, const float *restrict a, const float *restrict b,
                            float *restrict c, int64_t ldc, float alpha, float beta)
{
    float acc[MR][NR] = {{0}};
    for (int64_t p = 0; p < kc; p++, a += MR, b += NR)
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < NR; j++)
                acc[r][j] += a[r] * b[j];
    for (int r = 0; r < MR; r++) {
        float *cr = c + r * ldc;
        for (int j = 0; j < NR; j++)
            cr[j] = beta == 0.0f ? alpha * acc[r][j] : alpha * acc[r][j] + beta * cr[j];
    }
}

#if TENDO__GEMM_X86
#define TENDO__GEMM_AVX2 __attribute__((target("avx2,fma")))

/* One k step of the 6x16 tile: two B vectors times six broadcast A values. */
#define KSTEP(P)                                                                                  \
    do {                                                                                          \
        __m256 b0 = _mm256_load_ps(b + (P) * NR), b1 = _mm256_load_ps(b + (P) * NR + 8);         \
        __m256 ar;                                                                                \
        ar = _mm256_broadcast_ss(a + (P) * MR + 0);                                               \
        c00 = _mm256_fmadd_ps(ar, b0, c00), c01 = _mm256_fmadd_ps(ar, b1, c01);                  \
        ar = _mm256_broadcast_ss(a + (P) * MR + 1);                                               \
        c10 = _mm256_fmadd_ps(ar, b0, c10), c11 = _mm256_fmadd_ps(ar, b1, c11);                  \
        ar = _mm256_broadcast_ss(a + (P) * MR + 2);                                               \
        c20 = _mm256_fmadd_ps(ar, b0, c20), c21 = _mm256_fmadd_ps(ar, b1, c21);                  \
        ar = _mm256_broadcast_ss(a + (P) * MR + 3);                                               \
        c30 = _mm256_fmadd_ps(ar, b0, c30), c31 = _mm256_fmadd_ps(ar, b1, c31);                  \
        ar = _mm256_broadcast_ss(a + (P) * MR + 4);                                               \
        c40 = _mm256_fmadd_ps(ar, b0, c40), c41 = _mm256_fmadd_ps(ar, b1, c41);                  \
        ar = _mm256_broadcast_ss(a + (P) * MR + 5);                                               \
        c50 = _mm256_fmadd_ps(ar, b0, c50), c51 = _mm256_fmadd_ps(ar, b1, c51);                  \
    } while (0)

/* Writes one row of the tile: alpha*acc, or alpha*acc + beta*c. */
TENDO__GEMM_AVX2 static inline void store_row(float *cr, __m256 x0, __m256 x1, __m256 va,
                                              __m256 vb, int read_c)
{
    if (read_c) {
        x0 = _mm256_fmadd_ps(va, x0, _mm256_mul_ps(vb, _mm256_loadu_ps(cr)));
        x1 = _mm256_fmadd_ps(va, x1, _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8)));
    } else {
        x0 = _mm256_mul_ps(va, x0);
        x1 = _mm256_mul_ps(va, x1);
    }
    _mm256_storeu_ps(cr, x0);
    _mm256_storeu_ps(cr + 8, x1);
}

/* AVX2+FMA micro-kernel: the 6x16 tile lives in twelve ymm registers. */
TENDO__GEMM_AVX2 static void kernel_avx2(int64_t kc, const float *restrict a,
                                         const float *restrict b, float *restrict c, int64_t ldc,
                                         float alpha, float beta)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int r = 0; r < MR; r++)
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
    int64_t p = 0;
    for (; p + 4 <= kc; p += 4, a += 4 * MR, b += 4 * NR) {
        KSTEP(0);
        KSTEP(1);
        KSTEP(2);
        KSTEP(3);
    }
    for (; p < kc; p++, a += MR, b += NR)
        KSTEP(0);
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    int read_c = beta != 0.0f;
    store_row(c + 0 * ldc, c00, c01, va, vb, read_c);
    store_row(c + 1 * ldc, c10, c11, va, vb, read_c);
    store_row(c + 2 * ldc, c20, c21, va, vb, read_c);
    store_row(c + 3 * ldc, c30, c31, va, vb, read_c);
    store_row(c + 4 * ldc, c40, c41, va, vb, read_c);
    store_row(c + 5 * ldc, c50, c51, va, vb, read_c);
}
#undef KSTEP
#endif /* TENDO__GEMM_X86 */

/* ---- dispatch ----------------------------------------------------------- */

#if TENDO__GEMM_X86
/* Set by tendo__gemm_force_portable (tests and benchmarks). */
static atomic_int force_portable;

/* The micro-kernel for this CPU. */
static kernel_fn pick_kernel(void)
{
    bool forced = atomic_load_explicit(&force_portable, memory_order_relaxed);
    return !forced && tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA) ? kernel_avx2 : kernel_portable;
}

/* Forces the portable kernel, or lets the CPU choose again. */
void tendo__gemm_force_portable(int portable)
{
    atomic_store_explicit(&force_portable, portable != 0, memory_order_relaxed);
}
#else
/* Without x86 there is only the portable kernel. */
static kernel_fn pick_kernel(void) { return kernel_portable; }

/* Nothing to force: the portable kernel is the only one. */
void tendo__gemm_force_portable(int portable) { (void)portable; }
#endif

/* ---- driver ------------------------------------------------------------- */

/* Runs the kernel on a tile that overhangs C (mr x nr valid) through a
 * full-size buffer, so its arithmetic is exactly that of a full tile. */
static void edge_tile(kernel_fn kern, int64_t kc, const float *a, const float *b, float *c,
                      int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)
{
    _Alignas(ALIGN) float t[MR * NR] = {0};
    if (beta != 0.0f)
        for (int64_t r = 0; r < mr; r++)
            memcpy(t + r * NR, c + r * ldc, (size_t)nr * sizeof *t);
    kern(kc, a, b, t, NR, alpha, beta);
    for (int64_t r = 0; r < mr; r++)
        memcpy(c + r * ldc, t + r * NR, (size_t)nr * sizeof *t);
}

/* Multiplies a packed mc x kc A panel by a packed kc x nc B panel into the
 * C block at c, tile by tile: B slivers outer (they stay in L1), A inner. */
static void macro_kernel(kernel_fn kern, int64_t mc, int64_t nc, int64_t kc, const float *ap,
                         const float *bp, float *c, int64_t ldc, float alpha, float beta)
{
    for (int64_t j = 0; j < nc; j += NR) {
        int64_t nr = min64(NR, nc - j);
        for (int64_t i = 0; i < mc; i += MR) {
            int64_t mr = min64(MR, mc - i);
            float *ct = c + (i * ldc + j);
            if (mr == MR && nr == NR)
                kern(kc, ap + i * kc, bp + j * kc, ct, ldc, alpha, beta);
            else
                edge_tile(kern, kc, ap + i * kc, bp + j * kc, ct, ldc, mr, nr, alpha, beta);
        }
    }
}

/* C = beta*C over m x n (beta == 0 writes zeros without reading C). */
static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc)
{
    if (beta == 1.0f)
        return;
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        for (int64_t j = 0; j < n; j++)
            ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
    }
}

void *tendo__gemm_scratch(size_t bytes, tendo__pool_block **blk)
{
    tendo__pool *pool = tendo__pool_of(tendo_cpu());

    *blk = pool ? tendo__pool_alloc(pool, "matmul", bytes ? bytes : 1, 0) : NULL;
    return *blk ? tendo__pool_block_ptr(*blk) : NULL;
}

void tendo__gemm_scratch_free(tendo__pool_block *blk)
{
    if (blk)
        tendo__pool_free(tendo__pool_of(tendo_cpu()), blk);
}

/* The Goto/BLIS loop nest over packed panels (see the file comment). */
static void run_blocked(kernel_fn kern, int64_t m, int64_t n, int64_t k, float alpha,
                        const operand *A, const operand *B, float beta, float *c, int64_t ldc,
                        float *ap, float *bp, float *tmp)
{
    for (int64_t jc = 0; jc < n; jc += NC) {
        int64_t nc = min64(NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += KC) {
            int64_t kc = min64(KC, k - pc);
            float blk_beta = pc == 0 ? beta : 1.0f;
            pack_b(B, pc, kc, jc, nc, bp, tmp);
            for (int64_t ic = 0; ic < m; ic += MC) {
                int64_t mc = min64(MC, m - ic);
                pack_a(A, ic, mc, pc, kc, ap, tmp);
                macro_kernel(kern, mc, nc, kc, ap, bp, c + (ic * ldc + jc), ldc, alpha,
                             blk_beta);
            }
        }
    }
}

/* See gemm.h. */
int tendo__sgemm(int64_t m, int64_t n, int64_t k, float alpha,
                 const void *a, int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb,
                 const tendo__traits *t, float beta, float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return 0;
    if (k <= 0 || alpha == 0.0f) {
        scale_c(m, n, beta, c, ldc);
        return 0;
    }
    /* one scratch block: the A panel, the B panel, then widened runs */
    int64_t kcmax = min64(k, KC), na = round_up(round_up(min64(m, MC), MR) * kcmax, ALIGN / 4),
            nb = round_up(round_up(min64(n, NC), NR) * kcmax, ALIGN / 4), nt = NR * kcmax > MC ? NR * kcmax : MC;
    struct tendo__pool_block *blk;
    float *ap = tendo__gemm_scratch((size_t)(na + nb + nt) * sizeof(float), &blk);
    operand A = {a, rsa, csa, t}, B = {b, rsb, csb, t};

    if (!ap)
        return -1;
    run_blocked(pick_kernel(), m, n, k, alpha, &A, &B, beta, c, ldc, ap, ap + na, ap + na + nb);
    tendo__gemm_scratch_free(blk);
    return 0;
}

/* ---- double --------------------------------------------------------------- */

/* The double fallback (no BLAS, or strides BLAS cannot take): for each row
 * of C and each block of DNC columns, C(i, j) = sum over k of A(i,k) B(k,j),
 * summed in double in increasing k from zero; alpha scales the sum and
 * beta*C is added once at the end.  The order of each element's sum does
 * not depend on m, n or the row it sits in, so a caller may split m into
 * row blocks freely (the result is bitwise the same). */
enum { DNC = 512 };

int tendo__dgemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t rsa, int64_t csa,
                 const double *b, int64_t rsb, int64_t csb, double beta, double *c, int64_t ldc)
{
    double acc[DNC];

    for (int64_t j0 = 0; j0 < n; j0 += DNC) {
        int64_t nc = min64(DNC, n - j0);
        for (int64_t i = 0; i < m; i++) {
            double *ci = c + i * ldc + j0;
            for (int64_t j = 0; j < nc; j++)
                acc[j] = 0.0;
            if (alpha != 0.0) {
                for (int64_t p = 0; p < k; p++) {
                    double aip = a[i * rsa + p * csa];
                    const double *bp = b + p * rsb + j0 * csb;
                    if (csb == 1) {
                        for (int64_t j = 0; j < nc; j++)
                            acc[j] += aip * bp[j];
                    } else {
                        for (int64_t j = 0; j < nc; j++)
                            acc[j] += aip * bp[j * csb];
                    }
                }
            }
            for (int64_t j = 0; j < nc; j++)
                ci[j] = beta == 0.0 ? alpha * acc[j] : alpha * acc[j] + beta * ci[j];
        }
    }
    return 0;
}
