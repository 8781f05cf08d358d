/* src/cpu/skinny.c - products of a few rows by a weight with no packing (see
 * skinny.h): a decoder's matrix-vector products stream the weight once, at
 * the memory's speed, where the packed GEMMs would first copy all of it.
 *
 * Paths, chosen at run time as TENDO_CPU allows: AVX-512 and AVX2 vector
 * kernels (skinny-kernels.h) widen f32, f16 and bf16 weights in registers
 * (bf16 by a transposed bf16 weight multiplies pairs with vdpbf16ps where
 * the CPU has AVX512_BF16);
 * the other float dtypes (the fp8 ones) are widened through the dtype
 * table a block at a time into a buffer that the f32 kernels then read;
 * the portable path does the same with plain C kernels, and f64 has plain C
 * kernels of its own, summing in double. */
#include <string.h>

#include "config.h"
#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/skinny.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) &&                                  \
    (defined(__clang__) ? __clang_major__ >= 11 : __GNUC__ >= 10)
#define SK_X86 1
#include <immintrin.h>
#else
#define SK_X86 0
#endif

/* Weight element kinds the vector kernels widen in registers. */
enum { SK_F32, SK_F16, SK_BF16, SK_KINDS };

/* C (m x n, row stride ldc) += A B over k, A f32 (row stride lda, rows
 * padded with zeros to whole vectors), B's column j (dot) or row p (axpy)
 * at b + j * ldb or b + p * ldb bytes. */
typedef void (*sk_fn)(int64_t m, int64_t n, int64_t k, const float *ap, int64_t lda, const char *b, int64_t ldb,
                      float *c, int64_t ldc);

/* A's rows are padded to a multiple of this many elements (the widest vector). */
#define PAD 16
/* Block of k (dot) or of weight rows and columns (axpy) widened at a time
 * into a buffer, for the dtypes no vector kernel reads directly. */
#define KB 512
#define RB 8

/* ---- portable kernels ---------------------------------------------------------- */

/* Dot products in eight partial sums (lane l takes p = l mod 8), added in
 * lane order at the end. */
static void dot_c(int64_t m, int64_t n, int64_t k, const float *ap, int64_t lda, const char *b, int64_t ldb,
                  float *c, int64_t ldc)
{
    for (int64_t j = 0; j < n; j++) {
        const float *w = (const float *)(const void *)(b + j * ldb);
        for (int64_t i = 0; i < m; i++) {
            const float *a = ap + i * lda;
            float acc[8] = {0}, s = 0.0f;
            int64_t p = 0;
            for (; p + 8 <= k; p += 8)
                for (int l = 0; l < 8; l++)
                    acc[l] += a[p + l] * w[p + l];
            for (int l = 0; p + l < k; l++)
                acc[l] += a[p + l] * w[p + l];
            for (int l = 0; l < 8; l++)
                s += acc[l];
            c[i * ldc + j] += s;
        }
    }
}

/* Each element of C summed in increasing p. */
static void axpy_c(int64_t m, int64_t n, int64_t k, const float *ap, int64_t lda, const char *b, int64_t ldb,
                   float *c, int64_t ldc)
{
    for (int64_t p = 0; p < k; p++) {
        const float *w = (const float *)(const void *)(b + p * ldb);
        for (int64_t i = 0; i < m; i++) {
            float a = ap[i * lda + p], *ci = c + i * ldc;
            for (int64_t j = 0; j < n; j++)
                ci[j] += a * w[j];
        }
    }
}

/* The f64 kernels: as dot_c and axpy_c, in double. */
static void dot_d(int64_t m, int64_t n, int64_t k, const double *ap, int64_t lda, const double *w, int64_t ldw,
                  double *c, int64_t ldc)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const double *a = ap + i * lda, *wj = w + j * ldw;
            double acc[4] = {0}, s = 0.0;
            int64_t p = 0;
            for (; p + 4 <= k; p += 4)
                for (int l = 0; l < 4; l++)
                    acc[l] += a[p + l] * wj[p + l];
            for (int l = 0; p + l < k; l++)
                acc[l] += a[p + l] * wj[p + l];
            for (int l = 0; l < 4; l++)
                s += acc[l];
            c[i * ldc + j] = s;
        }
}

static void axpy_d(int64_t m, int64_t n, int64_t k, const double *ap, int64_t lda, const double *b, int64_t ldb,
                   double *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++)
        memset(c + i * ldc, 0, (size_t)n * sizeof *c);
    for (int64_t p = 0; p < k; p++)
        for (int64_t i = 0; i < m; i++) {
            double a = ap[i * lda + p], *ci = c + i * ldc;
            const double *w = b + p * ldb;
            for (int64_t j = 0; j < n; j++)
                ci[j] += a * w[j];
        }
}

/* ---- vector kernels, one copy per width ------------------------------------------ */

/* The tiles of C += A W^T for the vector kernels: four weight rows (row j at
 * w + j * ldw bytes; a missing one reads row j again and is not stored) by
 * up to four rows of A, TILE(MI, rows of A, weight rows, C, weight rows
 * stored) with MI a constant, so that each tile's accumulators are
 * registers. */
#define SK_DOT_TILES(m, n, ap, lda, w, ldw, c, ldc, TILE)                                                      \
    for (int64_t j_ = 0; j_ < (n); j_ += 4) {                                                                \
        int nj_ = (n) - j_ < 4 ? (int)((n) - j_) : 4;                                                        \
        const char *wr_[4];                                                                                  \
        for (int q_ = 0; q_ < 4; q_++)                                                                       \
            wr_[q_] = (w) + (j_ + (q_ < nj_ ? q_ : 0)) * (ldw);                                              \
        for (int64_t i_ = 0; i_ < (m); i_ += 4) {                                                            \
            switch ((m) - i_ < 4 ? (m) - i_ : 4) {                                                           \
            case 1: TILE(1, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc) + j_, nj_); break;                      \
            case 2: TILE(2, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc) + j_, nj_); break;                      \
            case 3: TILE(3, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc) + j_, nj_); break;                      \
            default: TILE(4, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc) + j_, nj_); break;                     \
            }                                                                                                \
        }                                                                                                    \
    }

#if SK_X86
#define SK_WIDTH 8
#include "cpu/skinny-kernels.h"
#undef SK_WIDTH
#define SK_WIDTH 16
#include "cpu/skinny-kernels.h"
#undef SK_WIDTH
#endif

#if SK_X86
#define TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* c[i*ldc + j] += the dot product of bf16 row i of ap (row stride lda,
 * zero padded to whole vectors of 32) and bf16 weight row w[j], for i < MI,
 * j < 4: vdpbf16ps multiplies 32 pairs at a time, each product exact in
 * f32, added into 16 lanes (it treats bf16 subnormals and f32 subnormal
 * results as zero). */
TARGET_BF16 static inline __attribute__((always_inline)) void dpbf16_tile(int MI, int64_t k, const uint16_t *ap,
                                                                        int64_t lda, const char *const w[4],
                                                                        float *c, int64_t ldc, int nj)
{
    __m512 acc[4][4];
    int64_t p = 0;

    _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) acc[i][j] = _mm512_setzero_ps();
    for (; p + 32 <= k; p += 32) {
        __m512i wv[4];
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) wv[j] = _mm512_loadu_si512((const void *)(w[j] + p * 2));
        _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        {
            __m512i a = _mm512_loadu_si512((const void *)(ap + i * lda + p));
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
                acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (__m512bh)a, (__m512bh)wv[j]);
        }
    }
    if (p < k) { /* the end of the rows, through zeroed buffers */
        uint16_t part[4][32] = {{0}};
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) memcpy(part[j], w[j] + p * 2, (size_t)(k - p) * 2);
        _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        {
            __m512i a = _mm512_loadu_si512((const void *)(ap + i * lda + p));
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
                acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (__m512bh)a, (__m512bh)_mm512_loadu_si512((const void *)part[j]));
        }
    }
    _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        for (int j = 0; j < nj; j++)
            c[i * ldc + j] += _mm512_reduce_add_ps(acc[i][j]);
}

/* C += A W^T for bf16 A (raw, as dpbf16_tile takes it) and bf16 weight rows
 * at w + j * ldw bytes: four weight rows by four rows of A at a time. */
TARGET_BF16 static void dot_dpbf16(int64_t m, int64_t n, int64_t k, const uint16_t *ap, int64_t lda, const char *w,
                                   int64_t ldw, float *c, int64_t ldc)
{
#define DP_TILE(MI, ai, wr, ci, nj) dpbf16_tile(MI, k, ai, lda, wr, ci, ldc, nj)
    SK_DOT_TILES(m, n, ap, lda, w, ldw, c, ldc, DP_TILE);
#undef DP_TILE
}
#endif

/* The kernels of one path: per weight kind, NULL where the path widens
 * through a buffer instead (the f32 kernel then reads the buffer). */
typedef struct {
    sk_fn dot[SK_KINDS], axpy[SK_KINDS];
} sk_path;

static const sk_path portable = {{dot_c, NULL, NULL}, {axpy_c, NULL, NULL}};
#if SK_X86
static const sk_path avx2 = {{dot_f32_8, dot_f16_8, dot_bf16_8}, {axpy_f32_8, axpy_f16_8, axpy_bf16_8}};
static const sk_path avx512 = {{dot_f32_16, dot_f16_16, dot_bf16_16}, {axpy_f32_16, axpy_f16_16, axpy_bf16_16}};
#endif

/* The path this CPU takes, as TENDO_CPU allows. */
static const sk_path *path(void)
{
#if SK_X86
    if (tendo__cpu_has(TENDO__CPU_AVX512))
        return &avx512;
    if (tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA | TENDO__CPU_F16C))
        return &avx2;
#endif
    return &portable;
}

/* The weight kind of dtype t the vector kernels read, or -1. */
static int kind_of(const tendo__traits *t)
{
    if (t == tendo__traits_of(TENDO_F32))
        return SK_F32;
#ifdef TENDO_HAVE_F16
    if (t == tendo__traits_of(TENDO_F16))
        return SK_F16;
#endif
#ifdef TENDO_HAVE_BF16
    if (t == tendo__traits_of(TENDO_BF16))
        return SK_BF16;
#endif
    return -1;
}

bool tendo__skinny_takes(const tendo__traits *t, int64_t m, int64_t k, int64_t n, int64_t rsb, int64_t csb)
{
    if (!(t->compute == TENDO__COMPUTE_FLOAT || (t->compute == TENDO__COMPUTE_DOUBLE && t->own_compute)))
        return false;
    if (m < 1 || k < 1 || n < 1)
        return false;
    /* f64 has plain C kernels only: past a row or two the product is no
     * longer bound by reading the weight, and OpenBLAS's dgemm is faster
     * (a 1024 x 1024 f64 weight, 16 rows: 2-5 GFLOPS here against 8) */
    if (t->compute == TENDO__COMPUTE_DOUBLE && m > TENDO__SKINNY_F64_ROWS)
        return false;
    if (rsb == 1 || k == 1)
        return m <= TENDO__SKINNY_DOT_ROWS;
    return (csb == 1 || n == 1) && m <= TENDO__SKINNY_AXPY_ROWS;
}

/* C += A W^T for a weight of dtype t no kernel reads directly: k in blocks
 * of KB, each block of four weight rows widened to f32, then dot. */
static void dot_widened(const tendo__traits *t, sk_fn dot, int64_t m, int64_t n, int64_t k, const float *ap,
                        int64_t lda, const char *w, int64_t ldw, float *c, int64_t ldc)
{
    float buf[4][KB];

    for (int64_t j = 0; j < n; j += 4) {
        int64_t nj = n - j < 4 ? n - j : 4;
        for (int64_t p = 0; p < k; p += KB) {
            int64_t kc = k - p < KB ? k - p : KB;
            for (int64_t q = 0; q < nj; q++)
                t->widen(w + (j + q) * ldw + p * (int64_t)t->size, 1, buf[q], kc);
            dot(m, nj, kc, ap + p, lda, (const char *)buf, KB * (int64_t)sizeof(float), c + j, ldc);
        }
    }
}

/* C += A B for B's rows of dtype t no kernel reads directly: blocks of RB
 * rows by KB columns widened to f32, then axpy. */
static void axpy_widened(const tendo__traits *t, sk_fn axpy, int64_t m, int64_t n, int64_t k, const float *ap,
                         int64_t lda, const char *b, int64_t ldb, float *c, int64_t ldc)
{
    float buf[RB][KB];

    for (int64_t j = 0; j < n; j += KB) {
        int64_t nc = n - j < KB ? n - j : KB;
        for (int64_t p = 0; p < k; p += RB) {
            int64_t rc = k - p < RB ? k - p : RB;
            for (int64_t q = 0; q < rc; q++)
                t->widen(b + (p + q) * ldb + j * (int64_t)t->size, 1, buf[q], nc);
            axpy(m, nc, rc, ap + p, lda, (const char *)buf, KB * (int64_t)sizeof(float), c + j, ldc);
        }
    }
}

int tendo__skinny(const tendo__traits *t, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
                  const void *b, int64_t rsb, int64_t csb, void *c, int64_t ldc)
{
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE, dot = rsb == 1 || k == 1;
    size_t csize = dbl ? sizeof(double) : sizeof(float), es = t->size;
    int64_t lda = (k + PAD - 1) / PAD * PAD, ldb = (dot ? csb : rsb) * (int64_t)es;
    struct tendo__pool_block *blk;
    char *ap = tendo__gemm_scratch((size_t)(m * lda) * csize, &blk);
    const sk_path *p = path();
    int kind = kind_of(t);

    if (!ap)
        return -1;
#if SK_X86
    /* bf16 by bf16 with AVX512_BF16: A stays bf16, pairs multiplied by vdpbf16ps */
    if (kind == SK_BF16 && dot && p == &avx512 && tendo__cpu_has(TENDO__CPU_AVX512BF16)) {
        int64_t ld16 = (k + 31) / 32 * 32;
        uint16_t *ab = (uint16_t *)(void *)ap; /* m * ld16 halves fit in the m * lda floats */
        float *cf = c;

        for (int64_t i = 0; i < m; i++) {
            const uint16_t *src = (const uint16_t *)a + i * rsa;
            for (int64_t q = 0; q < k; q++)
                ab[i * ld16 + q] = src[q * csa];
            memset(ab + i * ld16 + k, 0, (size_t)(ld16 - k) * 2);
            memset(cf + i * ldc, 0, (size_t)n * sizeof *cf);
        }
        dot_dpbf16(m, n, k, ab, ld16, b, ldb, cf, ldc);
        tendo__gemm_scratch_free(blk);
        return 0;
    }
#endif
    for (int64_t i = 0; i < m; i++) { /* A widened, each row zero padded */
        t->widen((const char *)a + i * rsa * (int64_t)es, csa, ap + (size_t)(i * lda) * csize, k);
        memset(ap + (size_t)(i * lda + k) * csize, 0, (size_t)(lda - k) * csize);
    }
    if (dbl) {
        if (dot)
            dot_d(m, n, k, (const double *)(const void *)ap, lda, b, csb, c, ldc);
        else
            axpy_d(m, n, k, (const double *)(const void *)ap, lda, b, rsb, c, ldc);
    } else {
        const float *af = (const float *)(const void *)ap;
        float *cf = c;
        sk_fn direct = kind < 0 ? NULL : dot ? p->dot[kind] : p->axpy[kind];

        for (int64_t i = 0; i < m; i++)
            memset(cf + i * ldc, 0, (size_t)n * sizeof *cf);
        if (direct)
            direct(m, n, k, af, lda, b, ldb, cf, ldc);
        else if (dot)
            dot_widened(t, p->dot[SK_F32], m, n, k, af, lda, b, ldb, cf, ldc);
        else
            axpy_widened(t, p->axpy[SK_F32], m, n, k, af, lda, b, ldb, cf, ldc);
    }
    tendo__gemm_scratch_free(blk);
    return 0;
}
