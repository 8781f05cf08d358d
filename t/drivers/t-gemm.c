/* t/drivers/t-gemm.c - tests for tendo__sgemm (src/cpu/gemm.c), and for the bf16
 * cases again through tendo__pgemm (src/cpu/gemm_avx512.c: vdpbf16ps where
 * the CPU has AVX512_BF16), and the f32 and f16 cases through its FMA
 * kernels: AVX-512, and AVX2 (src/cpu/gemm_avx2.c), which must agree bit
 * for bit.
 *
 * Every product is checked against a double-precision reference computed
 * from the same (widened) operand values, with a rigorous error bound:
 * each term of alpha*sum_k a*b + beta*c0 passes through at most
 * k + 2*ceil(k/KC) + 2 roundings of unit u = 2^-24 in tendo__sgemm (the
 * k-block sum in increasing k, then alpha*s, the fold into C and beta*c0
 * with at most two roundings each), so by Higham's lemma
 *     |C - ref| <= gamma_r * (|alpha| * sum_k |a||b| + |beta||c0|),
 * gamma_r = r*u / (1 - r*u), r = k + 2*ceil(k/KMIN) + 2 (KMIN <= KC: the
 * AVX-512 f32 kernel's shorter k blocks),
 * plus a few units of 2^-52 for the double reference's own rounding.
 * C sits in a larger buffer (row stride ldc > n, a tail after the last
 * row) filled with a sentinel pattern that must survive bit for bit.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/traits.h"
#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/half.h"
#include "tap.h"

/* The kernels tested here serve dtypes a build may leave out (--enable-dtypes). */
#if defined(TENDO_HAVE_F16) && defined(TENDO_HAVE_BF16)

/* KMIN: the smallest k block of any kernel (AVX-512 f32: 256 < KC). */
enum { MR = TENDO__GEMM_MR, KC = TENDO__GEMM_KC, KMIN = 256, TAIL = 37 };

static const uint32_t SENTINEL = 0xdeadbeefu;

/* The largest error/bound ratio seen by check_case, for a final diag. */
static double worst_seen;

/* ---- random numbers ------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* The next 64 random bits (splitmix64). */
static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A random integer in [lo, hi]. */
static int64_t rnd_int(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd64() % (uint64_t)(hi - lo + 1)); }

/* A random float in [-1, 1), a multiple of 2^-23. */
static float rnd_unit(void) { return (float)((int64_t)(rnd64() >> 40) - (1 << 23)) * 0x1p-23f; }

/* ---- operands ------------------------------------------------------------ */

typedef enum {
    L_ROW,        /* row-major, leading dimension >= cols */
    L_COL,        /* column-major (a transposed row-major matrix) */
    L_FLIP_ROWS,  /* row-major, rows in reverse order (rs < 0) */
    L_FLIP_COLS,  /* column-major, columns in reverse order (cs < 0) */
    L_FLIP_BOTH,  /* row-major, both reversed */
    L_STRIDED,    /* neither stride 1 */
    L_BCAST_ROWS, /* rs == 0: every row the same */
    L_BCAST_COLS, /* cs == 0: every column the same */
    L_SCALAR,     /* rs == cs == 0 */
    L_COUNT
} layout;

static const char *const layout_name[L_COUNT] = {
    "row", "col", "fliprows", "flipcols", "flipboth", "strided", "bcastrows", "bcastcols", "scalar",
};

/* The element types tested, and the dtype-table entries tendo__sgemm reads them through. */
typedef enum { G_F32, G_F16, G_BF16 } gtype;
static const char *const type_name[] = {"f32", "f16", "bf16"};
static const tendo__traits *traits(gtype type)
{
    return tendo__traits_of(type == G_F32 ? TENDO_F32 : type == G_F16 ? TENDO_F16 : TENDO_BF16);
}

/* A rows x cols matrix: element (i, j) is buf[off + i*rs + j*cs]. */
typedef struct {
    int64_t rows, cols, rs, cs, off, nbuf;
    gtype type;
    void *buf;
    double *val; /* dense row-major widened values, for the reference */
} mat;

/* Bytes per element of type. */
static size_t elsize(gtype type) { return type == G_F32 ? 4 : 2; }

/* Sets m's strides for its layout; pad widens the leading dimension. */
static void set_strides(mat *m, layout l, int64_t pad)
{
    int64_t ldr = m->cols + pad, ldc = m->rows + pad;
    switch (l) {
    case L_ROW: m->rs = ldr, m->cs = 1; break;
    case L_COL: m->rs = 1, m->cs = ldc; break;
    case L_FLIP_ROWS: m->rs = -ldr, m->cs = 1; break;
    case L_FLIP_COLS: m->rs = 1, m->cs = -ldc; break;
    case L_FLIP_BOTH: m->rs = -ldr, m->cs = -1; break;
    case L_STRIDED: m->rs = 2, m->cs = 2 * m->rows + 1; break;
    case L_BCAST_ROWS: m->rs = 0, m->cs = 1; break;
    case L_BCAST_COLS: m->rs = 1, m->cs = 0; break;
    default: m->rs = 0, m->cs = 0; break;
    }
}

/* A random element of type, as its stored bits (f16/bf16) or float. */
static void rnd_elem(gtype type, void *dst)
{
    float f = rnd_unit() * 2.0f;
    if (type == G_F32) {
        memcpy(dst, &f, 4);
    } else {
        uint16_t h = type == G_F16 ? tendo__f32_to_f16_bits(f) : tendo__f32_to_bf16_bits(f);
        memcpy(dst, &h, 2);
    }
}

/* The exact value of element `at` of m's buffer. */
static double elem_value(const mat *m, int64_t at)
{
    if (m->type == G_F32)
        return ((const float *)m->buf)[at];
    uint16_t h = ((const uint16_t *)m->buf)[at];
    return m->type == G_F16 ? tendo__f16_bits_to_f32(h) : tendo__bf16_bits_to_f32(h);
}

/* A random rows x cols matrix of type in layout l. */
static mat make_mat(int64_t rows, int64_t cols, layout l, gtype type, int64_t pad)
{
    mat m = {.rows = rows, .cols = cols, .type = type};
    set_strides(&m, l, pad);
    int64_t lo = 0, hi = 0;
    if (rows > 0 && cols > 0) {
        int64_t dr = (rows - 1) * m.rs, dc = (cols - 1) * m.cs;
        lo = (dr < 0 ? dr : 0) + (dc < 0 ? dc : 0);
        hi = (dr > 0 ? dr : 0) + (dc > 0 ? dc : 0);
    }
    m.off = -lo;
    m.nbuf = hi - lo + 1;
    m.buf = malloc((size_t)m.nbuf * elsize(type));
    m.val = malloc((size_t)(rows * cols + 1) * sizeof(double));
    if (!m.buf || !m.val)
        bail("out of memory");
    for (int64_t i = 0; i < m.nbuf; i++)
        rnd_elem(type, (char *)m.buf + i * (int64_t)elsize(type));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            m.val[i * cols + j] = elem_value(&m, m.off + i * m.rs + j * m.cs);
    return m;
}

/* The pointer to element (i, 0) of m, as tendo__sgemm takes it. */
static const void *row_ptr(const mat *m, int64_t i)
{
    return (const char *)m->buf + (m->off + i * m->rs) * (int64_t)elsize(m->type);
}

/* Frees m's buffers. */
static void free_mat(mat *m)
{
    free(m->buf);
    free(m->val);
}

/* ---- C with sentinels ---------------------------------------------------- */

/* An m x n C with row stride ldc inside a buffer of m*ldc + TAIL floats. */
typedef struct {
    int64_t m, n, ldc, nbuf;
    float *buf, *c0;
} cmat;

/* True when buffer index x lies inside the m x n part of C. */
static int in_c(const cmat *c, int64_t x) { return x / c->ldc < c->m && x % c->ldc < c->n; }

/* A C whose gaps and tail hold SENTINEL and whose elements are random, or
 * NaN when nan_c is set; c0 keeps a copy of the starting values. */
static cmat make_c(int64_t m, int64_t n, int64_t pad, int nan_c)
{
    cmat c = {.m = m, .n = n, .ldc = n + pad};
    if (c.ldc < 1)
        c.ldc = 1;
    c.nbuf = m * c.ldc + TAIL;
    c.buf = malloc((size_t)c.nbuf * sizeof(float));
    c.c0 = malloc((size_t)c.nbuf * sizeof(float));
    if (!c.buf || !c.c0)
        bail("out of memory");
    for (int64_t x = 0; x < c.nbuf; x++) {
        if (!in_c(&c, x))
            memcpy(c.buf + x, &SENTINEL, 4);
        else
            c.buf[x] = nan_c ? NAN : rnd_unit() * 4.0f;
    }
    memcpy(c.c0, c.buf, (size_t)c.nbuf * sizeof(float));
    return c;
}

/* True when every gap and tail float of c still holds SENTINEL. */
static int sentinels_ok(const cmat *c)
{
    for (int64_t x = 0; x < c->nbuf; x++) {
        uint32_t u;
        memcpy(&u, c->buf + x, 4);
        if (!in_c(c, x) && u != SENTINEL)
            return 0;
    }
    return 1;
}

/* Frees c's buffers. */
static void free_c(cmat *c)
{
    free(c->buf);
    free(c->c0);
}

/* ---- checking against the reference -------------------------------------- */

/* The largest |C - ref| / bound over c (0 when all within the bound, > 1
 * on failure; INFINITY for a NaN where none is expected). */
static double worst_error(const mat *A, const mat *B, const cmat *c, int64_t k, float alpha,
                          float beta)
{
    int64_t nb = (k + KMIN - 1) / KMIN;
    double r = (double)(k + 2 * nb + 2), u = 0x1p-24;
    double gamma = r * u / (1.0 - r * u) + (double)(k + 4) * 0x1p-52;
    double worst = 0.0;
    for (int64_t i = 0; i < c->m; i++) {
        for (int64_t j = 0; j < c->n; j++) {
            double s = 0.0, abs_s = 0.0;
            for (int64_t p = 0; p < k; p++) {
                double t = A->val[i * k + p] * B->val[p * c->n + j];
                s += t;
                abs_s += fabs(t);
            }
            double c0 = beta == 0.0f ? 0.0 : c->c0[i * c->ldc + j];
            double want = (double)alpha * s + (double)beta * c0;
            double bound = gamma * (fabs((double)alpha) * abs_s + fabs((double)beta * c0));
            double got = c->buf[i * c->ldc + j], err = fabs(got - want);
            if (isnan(got) || isnan(err))
                return INFINITY;
            if (err > 0.0) {
                double ratio = bound > 0.0 ? err / bound : INFINITY;
                if (ratio > worst)
                    worst = ratio;
            }
        }
    }
    return worst;
}

/* When via[type] is a kind, products of that type go through the packed
 * kernel of tendo__pgemm of that kind instead.  pgemm_kind: each type's
 * own kind (bf16's with vdpbf16ps; TENDO__PGEMM_BF16W widens it). */
static tendo__pgemm_kind via[3] = {TENDO__PGEMM_NONE, TENDO__PGEMM_NONE, TENDO__PGEMM_NONE};
static const tendo__pgemm_kind pgemm_kind[3] = {TENDO__PGEMM_F32, TENDO__PGEMM_F16, TENDO__PGEMM_BF16};

/* tendo__sgemm, or tendo__pgemm where via asks for it (and it has
 * something to multiply: it leaves k == 0 to tendo__sgemm). */
static int run_gemm(int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa, int64_t csa,
                    const void *b, int64_t rsb, int64_t csb, const tendo__traits *t, float beta, float *c, int64_t ldc)
{
    int rc = 1;

    for (int g = G_F32; g <= G_BF16; g++)
        if (via[g] != TENDO__PGEMM_NONE && t == traits((gtype)g))
            rc = tendo__pgemm(via[g], m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, ldc);
    return rc == 1 ? tendo__sgemm(m, n, k, alpha, a, rsa, csa, b, rsb, csb, t, beta, c, ldc) : rc;
}

/* One test case. */
typedef struct {
    int64_t m, n, k;
    layout la, lb;
    gtype type;
    float alpha, beta;
    int64_t pad; /* extra leading dimension for A, B and C */
    int nan_c;   /* C starts as NaN (only with beta == 0) */
} gcase;

/* Runs one case and records one test for it. */
static void check_case(const char *what, gcase g)
{
    mat A = make_mat(g.m, g.k, g.la, g.type, g.pad);
    mat B = make_mat(g.k, g.n, g.lb, g.type, g.pad);
    cmat c = make_c(g.m, g.n, g.pad, g.nan_c);
    int rc = run_gemm(g.m, g.n, g.k, g.alpha, row_ptr(&A, 0), A.rs, A.cs, row_ptr(&B, 0), B.rs,
                          B.cs, traits(g.type), g.beta, c.buf, c.ldc);
    double worst = worst_error(&A, &B, &c, g.k, g.alpha, g.beta);
    int sent = sentinels_ok(&c);
    if (worst > worst_seen)
        worst_seen = worst;
    if (!ok(rc == 0 && worst <= 1.0 && sent,
            "%s: %lldx%lldx%lld A=%s B=%s %s alpha=%g beta=%g pad=%lld%s", what, (long long)g.m,
            (long long)g.n, (long long)g.k, layout_name[g.la], layout_name[g.lb],
            type_name[g.type], (double)g.alpha, (double)g.beta, (long long)g.pad,
            g.nan_c ? " nanC" : ""))
        diag("rc=%d worst error/bound=%g sentinels %s", rc, worst, sent ? "ok" : "clobbered");
    free_c(&c);
    free_mat(&A);
    free_mat(&B);
}

/* A case with the usual defaults. */
static gcase plain(int64_t m, int64_t n, int64_t k, layout la, layout lb, gtype type)
{
    gcase g = {m, n, k, la, lb, type, 1.0f, 0.0f, 0, 0};
    return g;
}

/* ---- groups of tests ---------------------------------------------------- */

static const int64_t shapes[][3] = {
    {1, 1, 1},    {1, 1, 7},     {2, 3, 4},     {5, 17, 3},      {6, 16, 1},   {6, 16, 384},
    {7, 15, 385}, {12, 32, 769}, {13, 33, 100}, {97, 40, 70},    {1, 300, 50}, {300, 1, 50},
    {100, 130, 400}, {300, 257, 513},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* Fixed shapes in all four row/column-major combinations. */
static void test_shapes(const char *what, gtype type, int upto)
{
    static const layout ab[2] = {L_ROW, L_COL};
    for (int s = 0; s < upto; s++)
        for (int t = 0; t < 4; t++) {
            gcase g = plain(shapes[s][0], shapes[s][1], shapes[s][2], ab[t >> 1], ab[t & 1], type);
            g.pad = s % 3;
            check_case(what, g);
        }
}

/* Random small shapes, layouts, scalars and paddings. */
static void test_random(const char *what, gtype type, int count)
{
    static const float scalars[] = {0.0f, 1.0f, -1.0f, 2.5f, -0.75f, 0.5f};
    for (int t = 0; t < count; t++) {
        gcase g = plain(rnd_int(1, 40), rnd_int(1, 40), rnd_int(1, 900),
                        (layout)rnd_int(0, L_COUNT - 1), (layout)rnd_int(0, L_COUNT - 1), type);
        g.alpha = scalars[rnd_int(1, 5)];
        g.beta = scalars[rnd_int(0, 5)];
        g.pad = rnd_int(0, 3);
        g.nan_c = g.beta == 0.0f && (t & 1);
        check_case(what, g);
    }
}

/* Negative and zero strides on each operand. */
static void test_strides(gtype type)
{
    for (int l = L_FLIP_ROWS; l < L_COUNT; l++) {
        check_case("strides A", plain(23, 37, 411, (layout)l, L_ROW, type));
        check_case("strides B", plain(23, 37, 411, L_COL, (layout)l, type));
        check_case("strides AB", plain(19, 20, 29, (layout)l, (layout)l, type));
    }
}

/* alpha/beta combinations, with NaN garbage in C whenever beta == 0. */
static void test_scalars(void)
{
    static const float ab[][2] = {{1, 0}, {2.5f, 0}, {-1, 0}, {1, 1}, {-0.5f, 0.75f},
                                  {1, -1}, {0, 2}, {0, 0}, {3, 1}};
    for (size_t t = 0; t < sizeof ab / sizeof ab[0]; t++) {
        gcase g = plain(31, 45, 800, L_ROW, L_ROW, G_F32);
        g.alpha = ab[t][0], g.beta = ab[t][1];
        g.nan_c = g.beta == 0.0f;
        g.pad = 2;
        check_case("scalars", g);
    }
}

/* Zero-size problems: k == 0 gives beta*C (zeros over NaN for beta == 0);
 * m == 0 or n == 0 touches nothing. */
static void test_empty(void)
{
    gcase g = plain(9, 21, 0, L_ROW, L_ROW, G_F32);
    g.pad = 3;
    check_case("k=0 beta=0", (g.nan_c = 1, g));
    g.nan_c = 0;
    check_case("k=0 beta=2", (g.beta = 2.0f, g));
    check_case("k=0 beta=1", (g.beta = 1.0f, g));
    check_case("m=0", plain(0, 21, 5, L_ROW, L_ROW, G_F32));
    check_case("n=0", plain(21, 0, 5, L_ROW, L_COL, G_F32));
    check_case("m=n=k=0", plain(0, 0, 0, L_ROW, L_ROW, G_F16));

    /* Exactness of the k == 0 and alpha == 0 paths, and no reads of A/B. */
    cmat c = make_c(5, 7, 1, 0);
    int rc = tendo__sgemm(5, 7, 0, 1.0f, NULL, 0, 0, NULL, 0, 0, traits(G_F32), -3.0f, c.buf, c.ldc);
    int exact = rc == 0 && sentinels_ok(&c);
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 7; j++)
            exact &= c.buf[i * c.ldc + j] == -3.0f * c.c0[i * c.ldc + j];
    ok(exact, "k=0: C = beta*C exactly, A and B not read");
    memcpy(c.c0, c.buf, (size_t)c.nbuf * sizeof(float));
    rc = tendo__sgemm(5, 7, 4, 0.0f, NULL, 0, 0, NULL, 0, 0, traits(G_F32), 0.5f, c.buf, c.ldc);
    exact = rc == 0 && sentinels_ok(&c);
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 7; j++)
            exact &= c.buf[i * c.ldc + j] == 0.5f * c.c0[i * c.ldc + j];
    ok(exact, "alpha=0: C = beta*C exactly, A and B not read");
    free_c(&c);
}

/* With every row of A the same (rs == 0) and beta == 0, every row of C
 * must come out bitwise equal: the tile position does not matter. */
static void test_bcast_rows_equal(gtype type)
{
    mat A = make_mat(29, 300, L_BCAST_ROWS, type, 0);
    mat B = make_mat(300, 35, L_ROW, type, 0);
    cmat c = make_c(29, 35, 0, 1);
    int rc = run_gemm(29, 35, 300, 1.5f, row_ptr(&A, 0), A.rs, A.cs, row_ptr(&B, 0), B.rs,
                          B.cs, traits(type), 0.0f, c.buf, c.ldc);
    int same = rc == 0;
    for (int64_t i = 1; i < 29; i++)
        same &= memcmp(c.buf, c.buf + i * c.ldc, 35 * sizeof(float)) == 0;
    ok(same, "broadcast rows of A give bitwise equal rows of C (%s)", type_name[type]);
    free_c(&c);
    free_mat(&A);
    free_mat(&B);
}

/* Splitting m into row blocks that start at multiples of MR gives C
 * bitwise identical to one call over all rows. */
static void test_row_split(layout la, layout lb, gtype type, float beta)
{
    int64_t m = 131, n = 53, k = 2 * KC + 77;
    mat A = make_mat(m, k, la, type, 1);
    mat B = make_mat(k, n, lb, type, 1);
    cmat whole = make_c(m, n, 2, 0), split = make_c(m, n, 2, 0);
    memcpy(split.buf, whole.buf, (size_t)whole.nbuf * sizeof(float));
    int rc = run_gemm(m, n, k, 0.75f, row_ptr(&A, 0), A.rs, A.cs, row_ptr(&B, 0), B.rs, B.cs,
                          traits(type), beta, whole.buf, whole.ldc);
    for (int64_t i0 = 0; i0 < m && rc == 0;) {
        int64_t rows = MR * rnd_int(1, 5);
        if (rows > m - i0)
            rows = m - i0;
        rc = run_gemm(rows, n, k, 0.75f, row_ptr(&A, i0), A.rs, A.cs, row_ptr(&B, 0), B.rs,
                          B.cs, traits(type), beta, split.buf + i0 * split.ldc, split.ldc);
        i0 += rows;
    }
    ok(rc == 0 && memcmp(whole.buf, split.buf, (size_t)whole.nbuf * sizeof(float)) == 0,
       "row blocks of MR multiples give bitwise identical C (A=%s B=%s %s beta=%g)",
       layout_name[la], layout_name[lb], type_name[type], (double)beta);
    free_c(&whole);
    free_c(&split);
    free_mat(&A);
    free_mat(&B);
}

/* The determinism checks over a few layouts and types. */
static void test_splits(void)
{
    test_row_split(L_ROW, L_ROW, G_F32, 0.0f);
    test_row_split(L_COL, L_ROW, G_F32, 0.5f);
    test_row_split(L_FLIP_ROWS, L_COL, G_F32, 1.0f);
    test_row_split(L_STRIDED, L_FLIP_COLS, G_F32, 0.0f);
    test_row_split(L_ROW, L_COL, G_F16, 0.0f);
    test_row_split(L_COL, L_ROW, G_BF16, -1.0f);
}

/* Everything that depends on the micro-kernel, once per kernel. */
static void test_kernel(const char *kernel)
{
    char what[64];
    diag("micro-kernel: %s", kernel);
    snprintf(what, sizeof what, "%s shapes f32", kernel);
    test_shapes(what, G_F32, NSHAPES);
    snprintf(what, sizeof what, "%s shapes f16", kernel);
    test_shapes(what, G_F16, NSHAPES - 1);
    snprintf(what, sizeof what, "%s shapes bf16", kernel);
    test_shapes(what, G_BF16, NSHAPES - 1);
    snprintf(what, sizeof what, "%s random f32", kernel);
    test_random(what, G_F32, 40);
    snprintf(what, sizeof what, "%s random f16", kernel);
    test_random(what, G_F16, 15);
    snprintf(what, sizeof what, "%s random bf16", kernel);
    test_random(what, G_BF16, 15);
    test_strides(G_F32);
    test_strides(G_F16);
    test_strides(G_BF16);
    test_scalars();
    test_empty();
    test_bcast_rows_equal(G_F32);
    test_bcast_rows_equal(G_BF16);
    test_splits();
}

/* The cases of type through the packed kernel of tendo__pgemm of kind
 * (bf16: vdpbf16ps, or widened; f32 and f16: FMA, on AVX-512 or, forced
 * or where the CPU has no more, AVX2), where this CPU (as TENDO_CPU caps
 * it) runs it. */
static void test_packed_kernel(gtype type, tendo__pgemm_kind kind, const char *name)
{
    char what[64];

    if (!tendo__pgemm_available(kind)) {
        skip(1, "no %s on this CPU (or TENDO_CPU caps it): its %s kernel is not used", name, type_name[type]);
        return;
    }
    diag("micro-kernel: %s (%s operands)", name, type_name[type]);
    via[type] = kind;
    snprintf(what, sizeof what, "%s shapes %s", name, type_name[type]);
    test_shapes(what, type, NSHAPES);
    snprintf(what, sizeof what, "%s random %s", name, type_name[type]);
    test_random(what, type, type == G_F32 ? 40 : 25);
    test_strides(type);
    test_bcast_rows_equal(type);
    if (type == G_F32) { /* alpha, beta and k == 0 reach the f32 kernel alone */
        test_scalars();
        test_empty();
    }
    test_row_split(L_COL, L_ROW, type, -1.0f);
    test_row_split(L_FLIP_ROWS, L_STRIDED, type, 0.5f);
    test_row_split(L_ROW, L_FLIP_COLS, type, 0.0f);
    test_row_split(L_STRIDED, L_COL, type, 1.0f);
    via[type] = TENDO__PGEMM_NONE;
}

/* The AVX2 and AVX-512 kernels give the same bits: random shapes (one A
 * panel and several, edges in m, n and k), layouts and scalars through
 * tendo__pgemm on each set, where this CPU has both. */
static void test_sets_agree(gtype type, tendo__pgemm_kind kind)
{
    static const float scalars[] = {0.0f, 1.0f, -1.0f, 2.5f, -0.75f, 0.5f};
    int same = 0, count = 12;

    if (!tendo__cpu_has(TENDO__CPU_AVX512) || !tendo__pgemm_force_avx2(0)) {
        skip(1, "AVX2 against AVX-512 %s: this CPU (or TENDO_CPU) does not run both", type_name[type]);
        return;
    }
    for (int t = 0; t < count; t++) {
        int64_t m = t % 3 == 2 ? rnd_int(265, 400) : rnd_int(1, 40), n = rnd_int(1, 100), k = rnd_int(1, 700);
        float alpha = scalars[rnd_int(1, 5)], beta = scalars[rnd_int(0, 5)];
        mat A = make_mat(m, k, (layout)rnd_int(0, L_COUNT - 1), type, 1);
        mat B = make_mat(k, n, (layout)rnd_int(0, L_COUNT - 1), type, 1);
        cmat c512 = make_c(m, n, 1, 0), c2 = make_c(m, n, 1, 0);
        int rc;
        memcpy(c2.buf, c512.buf, (size_t)c512.nbuf * sizeof(float));
        rc = tendo__pgemm(kind, m, n, k, alpha, row_ptr(&A, 0), A.rs, A.cs, row_ptr(&B, 0), B.rs, B.cs, beta,
                          c512.buf, c512.ldc);
        tendo__pgemm_force_avx2(1);
        rc |= tendo__pgemm(kind, m, n, k, alpha, row_ptr(&A, 0), A.rs, A.cs, row_ptr(&B, 0), B.rs,
                           B.cs, beta, c2.buf, c2.ldc);
        tendo__pgemm_force_avx2(0);
        if (rc == 0 && memcmp(c512.buf, c2.buf, (size_t)c512.nbuf * sizeof(float)) == 0)
            same++;
        else
            diag("%lldx%lldx%lld alpha=%g beta=%g: rc %d or bits differ", (long long)m, (long long)n, (long long)k,
                 (double)alpha, (double)beta, rc);
        free_c(&c512);
        free_c(&c2);
        free_mat(&A);
        free_mat(&B);
    }
    ok(same == count, "AVX2 and AVX-512 packed kernels give the same bits (%s, %d of %d products)", type_name[type],
       same, count);
}

/* tendo__pgemm_nt (A times a transposed weight, the weight's rows read in
 * place) gives tendo__pgemm's bits for the same product: random shapes
 * (one and several slivers of A's rows, a last weight tile of fewer than
 * MR rows, several k blocks), A in any layout, the weight's rows padded;
 * C's gaps keep their sentinels.  A bf16 row of odd length is refused
 * with C untouched. */
static void test_nt_agrees(gtype type, const char *set)
{
    int same = 0, count = 16;

    if (!tendo__pgemm_nt_takes(pgemm_kind[type], 2, &same, 2)) {
        skip(1, "tendo__pgemm_nt for %s (%s): not on this CPU (or TENDO_CPU)", type_name[type], set);
        return;
    }
    for (int t = 0; t < count; t++) {
        int64_t m = t % 4 == 3 ? rnd_int(33, 70) : rnd_int(1, 32), n = rnd_int(1, 60), k = rnd_int(1, 1300);
        int64_t pad = rnd_int(0, 3);
        if (type == G_BF16)
            k += k % 2, pad += pad % 2; /* whole words: as nt_takes asks */
        mat A = make_mat(m, k, (layout)rnd_int(0, L_FLIP_BOTH), type, 1);
        mat W = make_mat(n, k, L_ROW, type, pad);
        cmat cn = make_c(m, n, 1, 0), cp = make_c(m, n, 1, 0);
        int rc;
        memcpy(cp.buf, cn.buf, (size_t)cn.nbuf * sizeof(float));
        rc = tendo__pgemm_nt(pgemm_kind[type], m, n, k, row_ptr(&A, 0), A.rs, A.cs, W.buf, W.rs, cn.buf, cn.ldc);
        rc |= tendo__pgemm(pgemm_kind[type], m, n, k, 1.0f, row_ptr(&A, 0), A.rs, A.cs, W.buf, 1, W.rs, 0.0f, cp.buf,
                           cp.ldc);
        if (rc == 0 && memcmp(cn.buf, cp.buf, (size_t)cn.nbuf * sizeof(float)) == 0)
            same++;
        else
            diag("%lldx%lldx%lld: rc %d or bits differ", (long long)m, (long long)n, (long long)k, rc);
        free_c(&cn);
        free_c(&cp);
        free_mat(&A);
        free_mat(&W);
    }
    ok(same == count, "tendo__pgemm_nt gives tendo__pgemm's bits (%s, %s, %d of %d products)", type_name[type], set,
       same, count);
    if (type == G_F32) { /* an empty sum: zeros, the gaps untouched */
        mat A = make_mat(4, 5, L_ROW, type, 0), W = make_mat(3, 5, L_ROW, type, 1);
        cmat c = make_c(4, 3, 1, 0);
        bool zeros = true;
        int rc = tendo__pgemm_nt(pgemm_kind[type], 4, 3, 0, A.buf, A.rs, A.cs, W.buf, W.rs, c.buf, c.ldc);
        for (int64_t i = 0; i < 4; i++)
            for (int64_t j = 0; j < 3; j++)
                zeros &= c.buf[i * c.ldc + j] == 0.0f;
        ok(rc == 0 && zeros && sentinels_ok(&c), "tendo__pgemm_nt with k 0 writes zeros (%s)", set);
        free_c(&c);
        free_mat(&A);
        free_mat(&W);
    }
    if (type == G_BF16) {
        mat A = make_mat(4, 5, L_ROW, type, 0), W = make_mat(3, 5, L_ROW, type, 1);
        cmat c = make_c(4, 3, 1, 0);
        int rc = tendo__pgemm_nt(pgemm_kind[type], 4, 3, 5, A.buf, A.rs, A.cs, W.buf, W.rs, c.buf, c.ldc);
        ok(rc == 1 && memcmp(c.buf, c.c0, (size_t)c.nbuf * sizeof(float)) == 0,
           "tendo__pgemm_nt refuses bf16 rows of odd length, C untouched");
        free_c(&c);
        free_mat(&A);
        free_mat(&W);
    }
}

int main(void)
{
    plan_lazy();
    test_kernel("native");
    tendo__gemm_force_portable(1);
    test_kernel("portable");
    tendo__gemm_force_portable(0);
    test_packed_kernel(G_BF16, TENDO__PGEMM_BF16, "avx512bf16");
    test_packed_kernel(G_F32, TENDO__PGEMM_F32, tendo__cpu_has(TENDO__CPU_AVX512) ? "avx512" : "avx2");
    test_packed_kernel(G_F16, TENDO__PGEMM_F16, tendo__cpu_has(TENDO__CPU_AVX512) ? "avx512" : "avx2");
    test_packed_kernel(G_BF16, TENDO__PGEMM_BF16W, "avx2 widened"); /* the AVX2 set's alone */
    if (tendo__cpu_has(TENDO__CPU_AVX512) && tendo__pgemm_force_avx2(1)) { /* the AVX2 set here too */
        test_packed_kernel(G_F32, TENDO__PGEMM_F32, "avx2");
        test_packed_kernel(G_F16, TENDO__PGEMM_F16, "avx2");
        tendo__pgemm_force_avx2(0);
    }
    test_sets_agree(G_F32, TENDO__PGEMM_F32);
    test_sets_agree(G_F16, TENDO__PGEMM_F16);
    test_nt_agrees(G_F32, tendo__cpu_has(TENDO__CPU_AVX512) ? "avx512" : "avx2");
    test_nt_agrees(G_BF16, "avx512bf16");
    if (tendo__cpu_has(TENDO__CPU_AVX512) && tendo__pgemm_force_avx2(1)) { /* f32's AVX2 nt kernel */
        test_nt_agrees(G_F32, "avx2");
        tendo__pgemm_force_avx2(0);
    }
    diag("largest error / bound: %g", worst_seen);
    return done_testing();
}
#else
int main(void) { skip_all("this build has no f16 or no bf16, whose GEMM paths these are"); }
#endif
