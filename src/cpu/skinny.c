/* src/cpu/skinny.c - products of a few rows by a weight with no packing (see
 * skinny.h): a decoder's matrix-vector products stream the weight once, at
 * the memory's speed, where the packed GEMMs would first copy all of it.
 *
 * Paths, chosen at run time as TENDO_CPU allows: bf16 on AMX tiles from a
 * few rows on (skinny_amx.c, at any number of rows); AVX-512 and AVX2 vector
 * kernels (skinny-kernels.h) widen f32, f16 and bf16 weights in registers
 * (bf16 by a transposed bf16 weight multiplies pairs with vdpbf16ps where
 * the CPU has AVX512_BF16);
 * the other float dtypes (the fp8 ones) are widened through the dtype
 * table a block at a time into a buffer that the f32 kernels then read;
 * the portable path does the same with plain C kernels, and f64 has plain C
 * kernels of its own, summing in double. */
#include <string.h>

#include "config.h"
#include "core/iter.h"
#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/skinny.h"
#include "cpu/skinny_amx.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) &&                                  \
    (defined(__clang__) ? __clang_major__ >= 11 : __GNUC__ >= 10)
#define SK_X86 1
#include <immintrin.h>
/* The vector kernels ask for each weight stream's bytes SK_AHEAD past
 * where they read, as they read: the hardware prefetchers alone leave a
 * Xeon (Emerald Rapids) short of its read bandwidth on 16-bit weights (f16
 * and bf16 [1, 4096] x [4096, 11008], both layouts, 1 and 2 threads, out
 * of cache: 0.81-0.92 of the time without, 512 bytes ahead; f32
 * 0.91-1.01).  On a Zen 4, 1024 bytes ahead against 512 took 0.85-1.04
 * of the time for f16 and bf16 (median of five interleaved rounds, the
 * same cases, hot and cold; f32 0.93-1.05), 1536 or more lost at two
 * threads.  But on an AMD CPU the dot kernels over one or two rows on
 * AVX-512 fetch nothing ahead (skinny-kernels.h: SK(dot_fetch)): a Zen
 * 4's hardware prefetchers read faster without, and f16 (f32 on one
 * thread) stages each next tile's rows instead, as the [k, n] kernels
 * stage each next group of rows (SK(axpy_fetch)).  A
 * prefetch never faults, so one past the end of the weight is harmless. */
#define SK_AHEAD 1024
#define SK_PREFETCH(p) SK_PREFETCH_AT(p, SK_AHEAD)
/* The line off bytes (any sign) from p. */
#define SK_PREFETCH_AT(p, off)                                                                                 \
    _mm_prefetch((const char *)((uintptr_t)(const void *)(p) + (uintptr_t)(int64_t)(off)), _MM_HINT_T0)
/* The line at p, into the L2 cache only (a staged group: skinny-kernels.h). */
#define SK_STAGE_LINE(p) _mm_prefetch((const char *)(const void *)(p), _MM_HINT_T1)
/* How a vector kernel fetches its weight ahead of its loads: not at all
 * (the hardware prefetchers alone), each stream SK_AHEAD bytes on, or the
 * weight rows it reads next staged (skinny-kernels.h: SK(dot_fetch) and
 * SK(axpy_fetch)). */
enum { SK_FETCH_NONE, SK_FETCH_AHEAD, SK_FETCH_STAGE };
/* The weight rows a kernel reads after its current group or tile: `rows`
 * of them, the first at `first`, each `stride` bytes after the last, of
 * which it reads `bytes` (its share of a [k, n] weight's columns, or a
 * whole row of k). */
typedef struct {
    const char *first;
    int64_t stride, bytes;
    int rows;
} sk_stage;
#else
#define SK_X86 0
#endif

/* Weight element kinds the vector kernels widen in registers. */
enum { SK_F32, SK_F16, SK_BF16, SK_KINDS };

/* C (m x n, row stride ldc) += A B over k: A in the kernel's form (f32;
 * raw bf16 for vdpbf16ps; f64 for f64, as C is), row stride lda, its rows
 * padded with zeros to whole vectors; B's column j (dot) or row p (axpy)
 * at b + j * ldb or b + p * ldb bytes. */
typedef void (*sk_fn)(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b, int64_t ldb,
                      void *c, int64_t ldc);

/* A's rows are padded to a multiple of this many elements (the widest vector). */
#define PAD 16
/* Block of k (dot) or of weight rows and columns (axpy) widened at a time
 * into a buffer, for the dtypes no vector kernel reads directly. */
#define KB 512
#define RB 8

/* ---- portable kernels ---------------------------------------------------------- */

/* dot_c and axpy_c (float, eight partial sums), dot_d and axpy_d (f64's,
 * in double, four): the dot products sum lane l = p mod LANES apart,
 * then the lanes in order; axpy sums each element of C in increasing p. */
#define SK_PORTABLE(sfx, T, LANES)                                                                             \
    static void dot_##sfx(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,       \
                          int64_t ldb, void *c, int64_t ldc)                                                 \
    {                                                                                                        \
        for (int64_t j = 0; j < n; j++) {                                                                    \
            const T *w = (const T *)(const void *)(b + j * ldb);                                             \
            for (int64_t i = 0; i < m; i++) {                                                                \
                const T *a = (const T *)ap + i * lda;                                                        \
                T acc[LANES] = {0}, s = 0;                                                                   \
                int64_t p = 0;                                                                               \
                for (; p + LANES <= k; p += LANES)                                                           \
                    for (int l = 0; l < LANES; l++)                                                          \
                        acc[l] += a[p + l] * w[p + l];                                                       \
                for (int l = 0; p + l < k; l++)                                                              \
                    acc[l] += a[p + l] * w[p + l];                                                           \
                for (int l = 0; l < LANES; l++)                                                              \
                    s += acc[l];                                                                             \
                ((T *)c)[i * ldc + j] += s;                                                                  \
            }                                                                                                \
        }                                                                                                    \
    }                                                                                                        \
    static void axpy_##sfx(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,      \
                           int64_t ldb, void *c, int64_t ldc)                                                \
    {                                                                                                        \
        for (int64_t p = 0; p < k; p++) {                                                                    \
            const T *w = (const T *)(const void *)(b + p * ldb);                                             \
            for (int64_t i = 0; i < m; i++) {                                                                \
                T a = ((const T *)ap)[i * lda + p], *ci = (T *)c + i * ldc;                                  \
                for (int64_t j = 0; j < n; j++)                                                              \
                    ci[j] += a * w[j];                                                                       \
            }                                                                                                \
        }                                                                                                    \
    }
SK_PORTABLE(c, float, 8)
SK_PORTABLE(d, double, 4)
#undef SK_PORTABLE

/* ---- vector kernels, one copy per width ------------------------------------------ */

/* The tiles of C += A W^T for the vector kernels: NJ weight rows (row j at
 * w + j * ldw bytes) by up to four rows of A, TILE(MI, NJ, rows of A,
 * weight rows, C's rows, C's column of each weight row, weight rows
 * stored, the weight rows the next tile reads as an sk_stage whose bytes
 * the tile fills in) with MI and NJ constants, so that each tile's
 * accumulators are registers.  One or two rows of A (a decoder's) take
 * eight weight rows a tile (but one row by vdpbf16ps takes two:
 * dot_dpbf16; the widening kernels four on more than one thread:
 * skinny-kernels.h), more take
 * NJ_MANY: eight streams of the weight in flight read it from memory
 * faster than four (about 1.3x for f16 on a Zen 4), and more rows of A are
 * bound by arithmetic, whose accumulators must fit the registers (AVX2's
 * 16 take 4 x 3: at 4 x 4 they spilled, and bf16 [32, 4096] x [4096,
 * 4096]^T took 21-27 ms against 14.6-15.5 on a Zen 3, f16 25 against
 * 13.7).  Slot q
 * of tile t takes row q * run + t, run = ceil(n / NJ): each slot walks a
 * run of consecutive rows and so reads on where it left off, where tiles
 * of NJ consecutive rows make every stream jump NJ rows ahead at each
 * tile (on a Zen 4, one thread, out of cache: f16 [1, 1024] x [512,
 * 1024]^T 1.4-1.8x, f16 and bf16 [1, 4096] x [11008, 4096]^T 1.1-1.2x
 * faster so).  The slots in use are the first nj; the others read row t
 * again and are not stored.  Neither the tile's shape nor the walk
 * changes any bits: each sum has its own accumulator. */
#define SK_DOT_TILES(NJ_MANY, m, n, ap, lda, w, ldw, c, ldc, TILE)                                             \
    do {                                                                                                     \
        if ((m) <= 2) {                                                                                      \
            SK_DOT_TILES_NJ(8, m, n, ap, lda, w, ldw, c, ldc, TILE)                                          \
        } else {                                                                                             \
            SK_DOT_TILES_NJ(NJ_MANY, m, n, ap, lda, w, ldw, c, ldc, TILE)                                    \
        }                                                                                                    \
    } while (0)
#define SK_DOT_TILES_NJ(NJ, m, n, ap, lda, w, ldw, c, ldc, TILE)                                              \
    for (int64_t run_ = ((n) + (NJ) - 1) / (NJ), t_ = 0; t_ < run_; t_++) {                                 \
        int64_t cj_[8];                                                                                      \
        const char *wr_[8];                                                                                  \
        /* the rows the next tile reads: slot q's next, while in the weight */                              \
        sk_stage st_ = {t_ + 1 < run_ ? (w) + (t_ + 1) * (ldw) : (w), run_ * (ldw), 0, 0};                  \
        int nj_ = 0;                                                                                         \
        for (int q_ = 0; q_ < (NJ); q_++) {                                                                  \
            int64_t j_ = q_ * run_ + t_;                                                                     \
            if (j_ < (n))                                                                                    \
                nj_ = q_ + 1; /* the slots in use are the first nj_ */                                       \
            else                                                                                             \
                j_ = t_;                                                                                     \
            cj_[q_] = j_;                                                                                    \
            wr_[q_] = (w) + j_ * (ldw);                                                                      \
            if (t_ + 1 < run_ && q_ * run_ + t_ + 1 < (n))                                                   \
                st_.rows = q_ + 1;                                                                           \
        }                                                                                                    \
        for (int64_t i_ = 0; i_ < (m); i_ += 4) {                                                            \
            switch ((m) - i_ < 4 ? (m) - i_ : 4) {                                                           \
            case 1: TILE(1, NJ, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc), cj_, nj_, &st_); break;           \
            case 2: TILE(2, NJ, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc), cj_, nj_, &st_); break;           \
            case 3: TILE(3, NJ, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc), cj_, nj_, &st_); break;           \
            default: TILE(4, NJ, (ap) + i_ * (lda), wr_, (c) + i_ * (ldc), cj_, nj_, &st_); break;          \
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

/* One vector of 32 k of a dpbf16_tile: acc[i][j] += pairs of row i of ap
 * times pairs of wv[j], j < NJ. */
TARGET_BF16 static inline __attribute__((always_inline)) void dpbf16_step(int MI, int NJ, const uint16_t *ap,
                                                                        int64_t lda, const __m512i wv[8],
                                                                        __m512 acc[4][8])
{
    _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
    {
        __m512i a = _mm512_loadu_si512((const void *)(ap + i * lda));
        _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++)
            acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (__m512bh)a, (__m512bh)wv[j]);
    }
}

/* c[i*ldc + cj[j]] += the dot product of bf16 row i of ap (row stride lda,
 * zero padded to whole vectors of 32) and bf16 weight row w[j], for i < MI,
 * j < nj <= NJ: vdpbf16ps multiplies 32 pairs at a time, each product exact
 * in f32, added into 16 lanes (it treats bf16 subnormals and f32 subnormal
 * results as zero).  PF: whether each stream is prefetched SK_AHEAD on. */
TARGET_BF16 static inline __attribute__((always_inline)) void dpbf16_tile(bool PF, int MI, int NJ, int64_t k,
                                                                        const uint16_t *ap, int64_t lda,
                                                                        const char *const w[8], float *c,
                                                                        int64_t ldc, const int64_t cj[8], int nj)
{
    __m512 acc[4][8];
    int64_t p = 0;

    _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++) acc[i][j] = _mm512_setzero_ps();
    for (; p + 32 <= k; p += 32) {
        __m512i wv[8];
        if (PF)
            _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++) SK_PREFETCH(w[j] + p * 2);
        _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++) wv[j] = _mm512_loadu_si512((const void *)(w[j] + p * 2));
        dpbf16_step(MI, NJ, ap + p, lda, wv, acc);
    }
    if (p < k) { /* the end of the rows, through zeroed buffers */
        uint16_t part[8][32] = {{0}};
        __m512i wv[8];
        _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++)
        {
            memcpy(part[j], w[j] + p * 2, (size_t)(k - p) * 2);
            wv[j] = _mm512_loadu_si512((const void *)part[j]);
        }
        dpbf16_step(MI, NJ, ap + p, lda, wv, acc);
    }
    _Pragma("GCC unroll 4") for (int i = 0; i < MI; i++)
        _Pragma("GCC unroll 8") for (int j = 0; j < NJ; j++)
        {
            if (j < nj)
                c[i * ldc + cj[j]] += _mm512_reduce_add_ps(acc[i][j]);
        }
}

/* C += A W^T for bf16 A (raw, as dpbf16_tile takes it) and bf16 weight rows
 * at w + j * ldw bytes, in the tiles of SK_DOT_TILES; but one row of A (a
 * decoder's) reads two streams of the weight and asks for none of it
 * ahead, which streams it from memory faster than eight prefetched ones,
 * where vdpbf16ps takes a whole 64-byte line of a stream per instruction.
 * Zen 4, five interleaved rounds, ms cold, 1 / 2 threads, two streams
 * against eight: [1, 4096] x [11008, 4096]^T 3.43-3.59 against 4.35-5.17
 * / 2.22-2.61 against 2.98-3.17, [1, 4096] x [4096, 4096]^T 1.29 against
 * 1.66-1.88 / 1.06-1.07 against 1.12-1.18 (0.69-0.95; hot 0.59-1.02); one
 * or four streams 0.69-1.01, two prefetched 0.86-0.91; at two rows of A
 * eight prefetched streams stay faster (two: 1.09 cold, 1.31 hot).  f16 and
 * f32 (skinny-kernels.h), whose vectors take half a line, measured no
 * such gain (two or four streams, prefetched or not: 0.90-1.35 of eight). */
TARGET_BF16 static void dot_dpbf16(int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const char *w,
                                   int64_t ldw, void *cv, int64_t ldc)
{
    const uint16_t *ap = a;
    float *c = cv;

#define DP_TILE(MI, NJ, ai, wr, ci, cj, nj, next)                                                              \
    (dpbf16_tile(true, MI, NJ, k, ai, lda, wr, ci, ldc, cj, nj), (void)(next))
#define DP_TILE_ROW(MI, NJ, ai, wr, ci, cj, nj, next)                                                          \
    (dpbf16_tile(false, MI, NJ, k, ai, lda, wr, ci, ldc, cj, nj), (void)(next))
    if (m == 1) {
        SK_DOT_TILES_NJ(2, m, n, ap, lda, w, ldw, c, ldc, DP_TILE_ROW)
    } else {
        SK_DOT_TILES(4, m, n, ap, lda, w, ldw, c, ldc, DP_TILE);
    }
#undef DP_TILE_ROW
#undef DP_TILE
}
#endif

/* The kernels of one path: per weight kind, NULL where the path widens
 * through a buffer instead (the f32 kernel then reads the buffer); bf16
 * pairs: its dot[SK_BF16] takes A as raw bf16 (vdpbf16ps), else f32. */
typedef struct {
    sk_fn dot[SK_KINDS], axpy[SK_KINDS];
    bool bf16_pairs;
} sk_path;

static const sk_path portable = {{dot_c, NULL, NULL}, {axpy_c, NULL, NULL}, false};
#if SK_X86
static const sk_path avx2 = {{dot_f32_8, dot_f16_8, dot_bf16_8}, {axpy_f32_8, axpy_f16_8, axpy_bf16_8}, false};
static const sk_path avx512 = {{dot_f32_16, dot_f16_16, dot_bf16_16}, {axpy_f32_16, axpy_f16_16, axpy_bf16_16},
                               false};
static const sk_path avx512_bf16 = {{dot_f32_16, dot_f16_16, dot_dpbf16},
                                    {axpy_f32_16, axpy_f16_16, axpy_bf16_16}, true};
#endif

/* The path this CPU takes, as TENDO_CPU allows. */
static const sk_path *path(void)
{
#if SK_X86
    if (tendo__cpu_has(TENDO__CPU_AVX512 | TENDO__CPU_AVX512BF16))
        return &avx512_bf16;
    if (tendo__cpu_has(TENDO__CPU_AVX512))
        return &avx512;
    if (tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA | TENDO__CPU_F16C))
        return &avx2;
#endif
    return &portable;
}

/* Whether an m-row bf16 product (dot: by a weight of unit row stride) goes
 * to the AMX tiles (skinny_amx.c).  Below TENDO__SKINNY_AMX_MIN_DOT and
 * _AXPY rows the AVX-512 kernels are faster (a tile of 16 rows is mostly
 * padding; a [k, n] weight's pairs of rows must be interleaved). */
static bool amx_bf16(int64_t m, bool dot)
{
#ifdef TENDO__HAVE_AMX
    return m >= (dot ? TENDO__SKINNY_AMX_MIN_DOT : TENDO__SKINNY_AMX_MIN_AXPY) && tendo__cpu_has(TENDO__CPU_AMXBF16);
#else
    (void)m, (void)dot;
    return false;
#endif
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

bool tendo__skinny_on_amx(const tendo__traits *t) { return kind_of(t) == SK_BF16 && amx_bf16(INT64_MAX, true); }

/* Whether an m-row product by a transposed weight of pgemm kind pk goes
 * to tendo__pgemm_nt: where it has a kernel for pk, m whole slivers of
 * TENDO__PGEMM_NR rows but a few (AVX-512), or whole halves of them
 * (AVX2; skinny.h). */
static bool nt_pays(tendo__pgemm_kind pk, int64_t m)
{
    _Static_assert(TENDO__SKINNY_NT_ROWS_AVX2 <= TENDO__SKINNY_NT_ROWS, "the fewest rows of either set");
    bool avx2;
    int64_t unit, padded;

    /* rows first: a decoder's one-row products ask no more */
    if (m < TENDO__SKINNY_NT_ROWS_AVX2 || !tendo__pgemm_nt_takes(pk, 0, NULL, 0))
        return false;
    avx2 = tendo__pgemm_on_avx2(pk);
    unit = avx2 ? TENDO__PGEMM_NR / 2 : TENDO__PGEMM_NR;
    padded = (m + unit - 1) / unit * unit;
    return avx2 ? padded - m <= TENDO__SKINNY_NT_SHORT_AVX2
                : m >= TENDO__SKINNY_NT_ROWS && padded - m <= TENDO__SKINNY_NT_SHORT;
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
    if (kind_of(t) == SK_BF16 && amx_bf16(m, rsb == 1 || k == 1)) /* any rows: faster than packing */
        return rsb == 1 || k == 1 || csb == 1 || n == 1;
    tendo__pgemm_kind pk = tendo__pgemm_kind_of(t);
    if (rsb == 1 || k == 1) {
        if (tendo__pgemm_on_avx2(pk))
            return m <= (pk == TENDO__PGEMM_F32 ? TENDO__SKINNY_DOT_ROWS_AVX2_F32 : TENDO__SKINNY_DOT_ROWS_AVX2_F16) ||
                   (m <= TENDO__SKINNY_DOT_ROWS && nt_pays(pk, m));
        return m <= TENDO__SKINNY_DOT_ROWS;
    }
    if (pk != TENDO__PGEMM_NONE &&
        m > (tendo__pgemm_on_avx2(pk) ? TENDO__SKINNY_AXPY_PGEMM_ROWS_AVX2 : TENDO__SKINNY_AXPY_PGEMM_ROWS))
        return false;
    return (csb == 1 || n == 1) && m <= TENDO__SKINNY_AXPY_ROWS;
}

/* C += A W^T for a weight of dtype t no kernel reads directly: k in blocks
 * of KB, each block of eight weight rows widened to f32, then dot. */
static void dot_widened(const tendo__traits *t, sk_fn dot, int64_t m, int64_t n, int64_t k, const float *ap,
                        int64_t lda, const char *w, int64_t ldw, float *c, int64_t ldc)
{
    float buf[8][KB];

    for (int64_t j = 0; j < n; j += 8) {
        int64_t nj = n - j < 8 ? n - j : 8;
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

/* Row i of A (k elements, strides rsa, csa, of dtype t) into row i of ap
 * (row stride lda) in the form the kernel takes: raw bf16 (pairs), else
 * widened to the compute type; zero padded to lda. */
static void pack_a_row(const tendo__traits *t, bool pairs, const char *a, int64_t rsa, int64_t csa, int64_t i,
                       int64_t k, char *ap, int64_t lda, size_t asize)
{
    const char *src = a + i * rsa * (int64_t)t->size;
    char *dst = ap + (size_t)(i * lda) * asize;

    if (pairs && csa == 1)
        memcpy(dst, src, (size_t)k * 2);
    else if (pairs)
        for (int64_t q = 0; q < k; q++)
            memcpy(dst + q * 2, src + q * csa * 2, 2);
    else
        t->widen(src, csa, dst, k);
    memset(dst + (size_t)k * asize, 0, (size_t)(lda - k) * asize);
}

int tendo__skinny(const tendo__traits *t, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
                  const void *b, int64_t rsb, int64_t csb, void *c, int64_t ldc)
{
    bool dbl = t->compute == TENDO__COMPUTE_DOUBLE, dot = rsb == 1 || k == 1;
    const sk_path *p = path();
    int kind = kind_of(t);
    bool amx = kind == SK_BF16 && amx_bf16(m, dot);
    bool pairs = amx || (dot && kind == SK_BF16 && p->bf16_pairs);
    size_t csize = dbl ? sizeof(double) : sizeof(float), asize = pairs ? 2 : csize;
    int64_t pad = pairs ? 2 * PAD : PAD, lda = (k + pad - 1) / pad * pad, ldb = (dot ? csb : rsb) * (int64_t)t->size;
    sk_fn direct = dbl ? (dot ? dot_d : axpy_d) : kind < 0 ? NULL : dot ? p->dot[kind] : p->axpy[kind];
    struct tendo__pool_block *blk;
    size_t abytes = (size_t)(m * lda) * asize, accbytes = 0;
    char *ap;

    if (dot && !amx && nt_pays(tendo__pgemm_kind_of(t), m)) { /* C^T = W A^T on the packed GEMM's kernels */
        int done = tendo__pgemm_nt(tendo__pgemm_kind_of(t), m, n, k, a, rsa, csa, b, csb, c, ldc);
        if (done <= 0)
            return done;
    }
#ifdef TENDO__HAVE_AMX
    if (amx) /* A in tiles; a [k, n] weight's f32 sums after it */
        abytes = (size_t)tendo__skinny_amx_a_bytes(m, lda),
        accbytes = dot ? 0 : (size_t)tendo__skinny_amx_axpy_acc_bytes(m, n);
#endif
    if (!(ap = tendo__gemm_scratch(abytes + accbytes, &blk)))
        return -1;
    for (int64_t i = 0; i < m; i++)
        memset((char *)c + (size_t)(i * ldc) * csize, 0, (size_t)n * csize);
#ifdef TENDO__HAVE_AMX
    if (amx) { /* the tiles' forms (skinny_amx.h) */
        tendo__skinny_amx_pack(m, k, a, rsa, csa, (uint16_t *)(void *)ap, lda, dot);
        if (dot)
            tendo__skinny_amx_dot(m, n, k, ap, lda, b, ldb, c, ldc);
        else
            tendo__skinny_amx_axpy(m, n, k, ap, lda, b, ldb, (float *)(void *)(ap + abytes), c, ldc);
        tendo__gemm_scratch_free(blk);
        return 0;
    }
#endif
    for (int64_t i = 0; i < m; i++)
        pack_a_row(t, pairs, a, rsa, csa, i, k, ap, lda, asize);
    if (direct)
        direct(m, n, k, ap, lda, b, ldb, c, ldc);
    else if (dot)
        dot_widened(t, p->dot[SK_F32], m, n, k, (const float *)(const void *)ap, lda, b, ldb, c, ldc);
    else
        axpy_widened(t, p->axpy[SK_F32], m, n, k, (const float *)(const void *)ap, lda, b, ldb, c, ldc);
    tendo__gemm_scratch_free(blk);
    return 0;
}
