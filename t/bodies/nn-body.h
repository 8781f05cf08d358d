/* t/bodies/nn-body.h - matmul, softmax, log_softmax, layer_norm and
 * rms_norm, and the fused gradients of the last four, against double
 * references, per dtype.
 *
 * Inputs come in every layout (contiguous, transposed, sliced with a
 * step, expanded with stride 0, flipped with negative strides); the
 * reference is computed in double from their exact values.  Tolerances,
 * with u = 2^-24 (half an f32 ulp) and, for 16-bit dtypes, one more
 * rounding of the float result (DT_ULP * |want|), plus the dtype's
 * smallest subnormal (results near 0):
 *
 *   matmul       k * 2^-23 * sum_p |a_ip| |b_pj|: any float summation order
 *                of k products, FMA or not (the classic gamma_k bound, x2);
 *                k * 2^-52 * ... for f64, which accumulates in double (the
 *                reference is summed in long double);
 *                on k/8 data every partial sum is exact in float, so the
 *                result must be the exact product rounded once to the dtype;
 *                1 + 4x - 1 (x below the dtype's rounding step at 1) tells
 *                the accumulator is wider than the dtype (float for fp8,
 *                f16, bf16; double for f64).
 *   softmax      relative (2R + n + 24) u, R = max |x_i - max|: the
 *                subtraction x - max feeds exp an absolute error up to R u,
 *                exp (a few ulp), the row sum (n u), one division.
 *   log_softmax  absolute (R + |y| + 2|log S| + n + 24) u.
 *   layer_norm   2u (|w| ((D+2) A/sigma + (D+8)|z|) + |y| + |b|), D =
 *                depth of the row sums (n, or 256 + n/64 + log2 n past
 *                256), A = mean |x|, sigma = sqrt(var + eps), z the
 *                normalized value: the mean's error (D A u) is divided by
 *                sigma, the variance's relative error (D u) scales z.
 *   rms_norm     2 (D + 8) u |y|.
 *
 * Included by t/each-dtype.h; see t/lib/dt.h. */

#ifndef T_NN_BODY_ONCE
#define T_NN_BODY_ONCE

#include "check.h"
#include "matmul-ref.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define T_U 0x1p-24

static const struct t_mmcase {
    int na;
    int64_t a[4];
    int nb;
    int64_t b[4];
} t_mmcases[] = {
    {2, {7, 5}, 2, {5, 6}},
    {2, {33, 17}, 2, {17, 29}},  /* edges of the 6x16 register tile */
    {2, {9, 400}, 2, {400, 20}}, /* more than one 384-deep k block */
    {2, {1, 1}, 2, {1, 1}},
    {1, {5}, 2, {5, 6}},        /* 1-D @ 2-D -> [6] */
    {2, {7, 5}, 1, {5}},        /* 2-D @ 1-D -> [7] */
    {1, {5}, 1, {5}},           /* 1-D @ 1-D -> 0-d */
    {4, {2, 1, 3, 4}, 3, {5, 4, 2}}, /* batch dims broadcast -> [2,5,3,2] */
    {3, {3, 6, 5}, 2, {5, 4}},  /* batched @ 2-D -> [3,6,4] */
    {3, {2, 3, 4}, 1, {4}},     /* batched @ 1-D -> [2,3] */
    {1, {4}, 3, {2, 4, 3}},     /* 1-D @ batched -> [2,3] */
    {2, {3, 0}, 2, {0, 4}},     /* k = 0: zeros */
    {2, {0, 3}, 2, {3, 4}},     /* m = 0: empty */
    {2, {3, 20}, 2, {20, 1100}}, /* one row block, wide: three column blocks */
    {2, {310, 9}, 2, {9, 5}},   /* two row blocks, 156 + 154 rows */
    {2, {600, 520}, 2, {520, 56}}, /* four row blocks sharing one packed B (AVX-512 kernels; past PGEMM_MIN for f32) */
};
#define T_NMMCASES ((int)(sizeof t_mmcases / sizeof t_mmcases[0]))

/* Shapes for softmax and log_softmax. */
static const struct t_sshape {
    int n;
    int64_t s[3];
} t_sshapes[] = {
    {0, {0}}, {1, {1}}, {1, {37}}, {2, {7, 9}}, {3, {3, 5, 4}}, {2, {2, 2500}},
};
#define T_NSSHAPES ((int)(sizeof t_sshapes / sizeof t_sshapes[0]))

/* Shapes for layer_norm and rms_norm (over the last dim). */
static const struct t_nshape {
    int n;
    int64_t s[3];
} t_nshapes[] = {
    {1, {7}}, {2, {5, 9}}, {3, {2, 3, 16}}, {2, {3, 3000}},
};
#define T_NNSHAPES ((int)(sizeof t_nshapes / sizeof t_nshapes[0]))

/* Variants: layer_norm with weight and bias, weight only, bias only,
 * neither; rms_norm with weight, without. */
enum { N_LN_WB, N_LN_W, N_LN_B, N_LN, N_RMS_W, N_RMS, N_COUNT };
static const char *const t_norm_names[N_COUNT] = {
    "layer_norm(a, w, b)", "layer_norm(a, w, NULL)", "layer_norm(a, NULL, b)", "layer_norm(a, NULL, NULL)",
    "rms_norm(a, w)",      "rms_norm(a, NULL)"};

#endif /* T_NN_BODY_ONCE */

#include "compare-body.h" /* per dtype */

/* ---- matmul ------------------------------------------------------------------------ */

static void DTFN(test_matmul_case)(int cs)
{
    const struct t_mmcase *mc = &t_mmcases[cs];
    t_check c = {0};
    char s1[64], s2[64];

    for (int ds = 0; ds < 2; ds++)
        for (int la = 0; la < L_COUNT; la++)
            for (int lb = 0; lb < L_COUNT; lb++) {
                uint64_t rng = 0x3a7u + (uint64_t)(cs * 1000 + ds * 100 + la * 10 + lb) * 6007u;
                TT *a = DTFN(make)(la, mc->na, mc->a, &rng, ds, -2, 2);
                TT *b = DTFN(make)(lb, mc->nb, mc->b, &rng, ds, -2, 2);
                double *av = DTFN(values)(a), *bv = DTFN(values)(b), *want, *mag;
                int no = 0;
                int64_t so[TENDO_MAX_DIMS], k;
                TT *r = tensor_matmul(a, b);
                char what[160];

                snprintf(what, sizeof what, "%s, a %s, b %s", ds == D_EIGHTHS ? "eighths" : "random", t_layout[la],
                         t_layout[lb]);
                if (!t_matmul_ref(mc->na, mc->a, av, mc->nb, mc->b, bv, &no, so, &want, &mag, &k))
                    bail("bad matmul case %d", cs);
                DTFN(matmul_bounds)(t_numel(no, so), k, ds == D_EIGHTHS, want, mag);
                DTFN(check_against)(&c, what, r, no, so, want, mag);
                free(want);
                free(mag);
                free(av);
                free(bv);
                tensor_free(r);
                tensor_free(a);
                tensor_free(b);
            }
    t_done(&c, "%s matmul %s @ %s: 2 data sets x %d x %d layouts", DT_NAME, t_shape_str(s1, sizeof s1, mc->na, mc->a),
           t_shape_str(s2, sizeof s2, mc->nb, mc->b), L_COUNT, L_COUNT);
}

/* Stride-0 batch dims (an expanded operand) and a batch dim of stride 0
 * on the other side: [5,3,4] expanded from [1,3,4] @ [5,4,2] transposed. */
static void DTFN(test_matmul_expanded_batch)(void)
{
    uint64_t rng = 0xba7c4u;
    TT *a1 = DTFN(make)(L_CONTIG, 3, (const int64_t[]){1, 3, 4}, &rng, D_RANDOM, -2, 2);
    TT *a = tensor_expand(a1, 3, (const int64_t[]){5, 3, 4});
    TT *b = DTFN(make)(L_TRANS, 3, (const int64_t[]){5, 4, 2}, &rng, D_RANDOM, -2, 2);
    TT *b1 = DTFN(make)(L_FLIP, 3, (const int64_t[]){1, 4, 2}, &rng, D_RANDOM, -2, 2);
    TT *bx = tensor_expand(b1, 3, (const int64_t[]){5, 4, 2});
    t_check c = {0};

    for (int k = 0; k < 2; k++) {
        const TT *rhs = k ? bx : b;
        double *av = DTFN(values)(a), *bv = DTFN(values)(rhs), *want, *tol;
        int no = 0;
        int64_t so[TENDO_MAX_DIMS], kk;
        TT *r = tensor_matmul(a, rhs);

        t_matmul_ref(3, (const int64_t[]){5, 3, 4}, av, 3, (const int64_t[]){5, 4, 2}, bv, &no, so, &want, &tol, &kk);
        DTFN(matmul_bounds)(t_numel(no, so), kk, false, want, tol);
        DTFN(check_against)(&c, k ? "b expanded too" : "b transposed", r, no, so, want, tol);
        tensor_free(r);
        free(av);
        free(bv);
        free(want);
        free(tol);
    }
    t_done(&c, "%s matmul of [5,3,4] expanded from [1,3,4] @ [5,4,2] (transposed, or expanded from [1,4,2])",
           DT_NAME);
    tensor_free(a1);
    tensor_free(a);
    tensor_free(b);
    tensor_free(b1);
    tensor_free(bx);
}

/* [1, x, x, x, x, -1] @ ones: 4x exactly when the sum runs in a type
 * wider than the dtype, 0 when it runs in the dtype (1 + x == 1 there).
 * x = 2^-(mantissa bits + 1) for the narrow floats (float accumulates it
 * exactly in any order); 2^-40 for f64, lost in float, exact in double. */
static void DTFN(test_matmul_accumulator)(void)
{
    double x = DT_MANTISSA_BITS > 24 ? 0x1p-40 : ldexp(1.0, -(DT_MANTISSA_BITS + 1));
    const E av[6] = {E_FROM_DOUBLE(1), E_FROM_DOUBLE(x), E_FROM_DOUBLE(x), E_FROM_DOUBLE(x), E_FROM_DOUBLE(x),
                     E_FROM_DOUBLE(-1)};
    TT *a = TFN(from_data)(av, 2, (const int64_t[]){1, 6}, tendo_cpu()), *b = TFN(ones)(2, (const int64_t[]){6, 1}, tendo_cpu());
    TT *bt = TFN(ones)(2, (const int64_t[]){1, 6}, tendo_cpu()), *btv = tensor_transpose(bt, 0, 1);
    bool good = a && b && btv;

    if (DT_MANTISSA_BITS == 24) { /* f32 accumulates in itself, in any order */
        skip(1, "%s matmul accumulates in the dtype itself", DT_NAME);
        good = false;
    }
    for (int t = 0; t < 2 && good; t++) {
        TT *r = tensor_matmul(a, t ? btv : b);
        double *got = r ? DTFN(values)(r) : NULL;
        good = got && got[0] == 4 * x;
        if (!good)
            diag("%s: got %g, wanted %g", t ? "b transposed" : "b contiguous", got ? got[0] : NAN, 4 * x);
        free(got);
        tensor_free(r);
    }
    if (DT_MANTISSA_BITS != 24)
        ok(good, "%s matmul accumulates wider than the dtype: [1, %g x4, -1] @ ones = %g", DT_NAME, x, 4 * x);
    tensor_free(a);
    tensor_free(b);
    tensor_free(bt);
    tensor_free(btv);
}

static void DTFN(test_matmul_errors)(void)
{
    TT *a34 = TFN(ones)(2, (const int64_t[]){3, 4}, tendo_cpu());
    TT *b56 = TFN(ones)(2, (const int64_t[]){5, 6}, tendo_cpu());
    TT *s = TFN(ones)(0, NULL, tendo_cpu());
    TT *v3 = TFN(ones)(1, (const int64_t[]){3}, tendo_cpu());
    TT *a234 = TFN(ones)(3, (const int64_t[]){2, 3, 4}, tendo_cpu());
    TT *b345 = TFN(ones)(3, (const int64_t[]){3, 4, 5}, tendo_cpu());
    const char *want = "matmul: [3,4] @ [5,6]: inner dimensions 4 and 5 differ";
    tendo_status st;
    bool good;

    good = tensor_matmul(a34, b56) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_SHAPE &&
           strcmp(tendo_error_message(tendo_last_error()), want) == 0;
    if (!good)
        diag("status %s, message \"%s\"", tendo_status_str(tendo_error_status(tendo_last_error())),
             tendo_error_message(tendo_last_error()));
    ok(good, "%s matmul([3,4], [5,6]) fails with TENDO_ERR_SHAPE: \"%s\"", DT_NAME, want);
    tendo_clear_error();

    /* a 0-d operand is refused (numpy: "matmul: Input operand does not have
     * enough dimensions"); either a shape or an argument error will do */
    good = tensor_matmul(s, v3) == NULL;
    st = tendo_error_status(tendo_last_error());
    good = good && (st == TENDO_ERR_SHAPE || st == TENDO_ERR_INVALID_ARG) &&
           strncmp(tendo_error_message(tendo_last_error()), "matmul: ", 8) == 0;
    tendo_clear_error();
    good = good && tensor_matmul(v3, s) == NULL;
    st = tendo_error_status(tendo_last_error());
    good = good && (st == TENDO_ERR_SHAPE || st == TENDO_ERR_INVALID_ARG);
    tendo_clear_error();
    good = good && tensor_matmul(s, s) == NULL;
    ok(good, "%s matmul with a 0-d operand is refused (%s)", DT_NAME, tendo_error_message(tendo_last_error()));
    tendo_clear_error();

    ok(tensor_matmul(a234, b345) == NULL && t_failed_with(TENDO_ERR_SHAPE, "matmul: "),
       "%s matmul([2,3,4], [3,4,5]): batch dims 2 and 3 do not broadcast: TENDO_ERR_SHAPE", DT_NAME);
    good = TFN(matmul)(NULL, a34) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "matmul");
    good = TFN(matmul)(a34, NULL) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "matmul") && good;
    ok(good, "%s matmul with NULL: TENDO_ERR_INVALID_ARG", DT_NAME);
    tensor_free(a34);
    tensor_free(b56);
    tensor_free(s);
    tensor_free(v3);
    tensor_free(a234);
    tensor_free(b345);
}

/* ---- softmax and log_softmax ------------------------------------------------------------ */

/* Reference softmax (or log_softmax) of vals along dim, with tolerances;
 * rowsum gets each row's sum of the reference's tolerances, for the
 * rows-sum-to-1 check (indexed by row = outer * inner + i). */
static void DTFN(softmax_ref)(bool lg, int nd, const int64_t *shape, int dim, const double *vals, double *want,
                              double *tol)
{
    int64_t outer = 1, inner = 1, len = nd ? shape[dim] : 1;

    for (int d = 0; d < dim; d++)
        outer *= shape[d];
    for (int d = dim + 1; d < nd; d++)
        inner *= shape[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0, range = 0;
            for (int64_t k = 0; k < len; k++) {
                double x = vals[(o * len + k) * inner + i];
                m = x > m ? x : m;
            }
            for (int64_t k = 0; k < len; k++) {
                double x = vals[(o * len + k) * inner + i];
                s += exp(x - m);
                range = m - x > range ? m - x : range;
            }
            for (int64_t k = 0; k < len; k++) {
                int64_t at = (o * len + k) * inner + i;
                double x = vals[at], y;
                if (lg) {
                    y = x - m - log(s);
                    tol[at] = (range + fabs(y) + 2 * fabs(log(s)) + (double)len + 24) * T_U;
                } else {
                    y = exp(x - m) / s;
                    tol[at] = (2 * range + (double)len + 24) * T_U * y + 0x1p-126;
                }
                want[at] = y;
                tol[at] += DTFN(narrow_tol)(y);
            }
        }
}

static TT *DTFN(softmax_op)(bool lg, const TT *a, int dim)
{
    return lg ? tensor_log_softmax(a, dim) : tensor_softmax(a, dim);
}

/* Checks softmax/log_softmax of a (values vals) along dim; for softmax
 * also that each row sums to 1 within the sum of its tolerances. */
static void DTFN(check_softmax)(t_check *c, const char *what, bool lg, const TT *a, int dim)
{
    int nd = tensor_ndim(a);
    const int64_t *shape = tensor_shape(a);
    int64_t n = tensor_numel(a), outer = 1, inner = 1, len;
    int wd = dim < 0 ? dim + nd : dim;
    double *vals = DTFN(values)(a), *want, *tol, *got;
    TT *r = DTFN(softmax_op)(lg, a, dim);

    if (nd == 0)
        wd = 0;
    len = nd ? shape[wd] : 1;
    for (int d = 0; d < wd; d++)
        outer *= shape[d];
    for (int d = wd + 1; d < nd; d++)
        inner *= shape[d];
    want = malloc((size_t)(n ? n : 1) * sizeof *want);
    tol = malloc((size_t)(n ? n : 1) * sizeof *tol);
    DTFN(softmax_ref)(lg, nd, shape, wd, vals, want, tol);
    DTFN(check_against)(c, what, r, nd, shape, want, tol);
    if (r && !lg && t_same_shape(tensor_ndim(r), tensor_shape(r), nd, shape)) {
        got = DTFN(values)(r);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                double s = 0, st = 0;
                for (int64_t k = 0; k < len; k++) {
                    s += got[(o * len + k) * inner + i];
                    st += tol[(o * len + k) * inner + i];
                }
                t_elem(c, "row sum", o * inner + i, s, 1.0, st + 1e-12);
            }
        free(got);
    }
    tensor_free(r);
    free(vals);
    free(want);
    free(tol);
}

static void DTFN(test_softmax)(bool lg)
{
    const char *name = lg ? "log_softmax" : "softmax";

    for (int sh = 0; sh < T_NSSHAPES; sh++) {
        const struct t_sshape *s = &t_sshapes[sh];
        t_check c = {0};
        char s1[64];

        for (int l = 0; l < L_COUNT; l++) {
            uint64_t rng = 0x50f7u + (uint64_t)(sh * 100 + l * 10 + lg) * 7u;
            TT *a = DTFN(make)(l, s->n, s->s, &rng, D_RANDOM, -10, 10);
            /* every dim, from the front and from the back; a 0-d tensor is a
             * row of one along dim 0 or -1 */
            for (int d = s->n ? -s->n : -1; d < (s->n ? s->n : 1); d++) {
                char what[160];
                snprintf(what, sizeof what, "%s, dim %d", t_layout[l], d);
                DTFN(check_softmax)(&c, what, lg, a, d);
            }
            tensor_free(a);
        }
        t_done(&c, "%s %s of %s over every dim, %d layouts%s", DT_NAME, name, t_shape_str(s1, sizeof s1, s->n, s->s),
               L_COUNT, lg ? "" : "; rows sum to 1");
    }
}

/* softmax_backward / log_softmax_backward of g against the output y along
 * dim, in double from their exact values: y (g - sum(g y)), or g - exp(y)
 * sum(g).  Tolerance: the row sum's depth times u of the terms' magnitudes,
 * a few ulps of exp, one rounding to the dtype. */
static void DTFN(check_softmax_back)(t_check *c, const char *what, bool lg, const TT *g, const TT *y, int dim)
{
    int nd = tensor_ndim(y), wd = nd == 0 ? 0 : dim < 0 ? dim + nd : dim;
    const int64_t *shape = tensor_shape(y);
    int64_t n = tensor_numel(y), outer = 1, inner = 1, len = nd ? shape[wd] : 1;
    double *gv = DTFN(values)(g), *yv = DTFN(values)(y), *want, *tol;
    TT *r = lg ? tensor_log_softmax_backward(g, y, dim) : tensor_softmax_backward(g, y, dim);

    for (int d = 0; d < wd; d++)
        outer *= shape[d];
    for (int d = wd + 1; d < nd; d++)
        inner *= shape[d];
    want = malloc((size_t)(n ? n : 1) * sizeof *want);
    tol = malloc((size_t)(n ? n : 1) * sizeof *tol);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double sum = 0, mag = 0;
            for (int64_t k = 0; k < len; k++) {
                int64_t at = (o * len + k) * inner + i;
                sum += lg ? gv[at] : gv[at] * yv[at];
                mag += fabs(lg ? gv[at] : gv[at] * yv[at]);
            }
            for (int64_t k = 0; k < len; k++) {
                int64_t at = (o * len + k) * inner + i;
                double e = exp(yv[at]);
                want[at] = lg ? gv[at] - e * sum : yv[at] * (gv[at] - sum);
                tol[at] = (t_depth(len) + 16) * T_U * (lg ? fabs(gv[at]) + e * mag : fabs(yv[at]) * (fabs(gv[at]) + mag)) +
                          DTFN(narrow_tol)(want[at]) + 0x1p-126;
            }
        }
    DTFN(check_against)(c, what, r, nd, shape, want, tol);
    tensor_free(r);
    free(gv);
    free(yv);
    free(want);
    free(tol);
}

static void DTFN(test_softmax_back)(bool lg)
{
    const char *name = lg ? "log_softmax_backward" : "softmax_backward";

    for (int sh = 0; sh < T_NSSHAPES; sh++) {
        const struct t_sshape *s = &t_sshapes[sh];
        t_check c = {0};
        char s1[64];

        for (int l = 0; l < L_COUNT; l++) {
            uint64_t rng = 0x5b0cu + (uint64_t)(sh * 100 + l * 10 + lg) * 7u;
            TT *g = DTFN(make)(l, s->n, s->s, &rng, D_RANDOM, -1, 1);
            /* outputs small enough that a row of 2500 stays inside fp8's range */
            TT *y = DTFN(make)((l + 1) % L_COUNT, s->n, s->s, &rng, D_RANDOM, lg ? -8 : 0, lg ? -4 : 0.1);
            for (int d = s->n ? -s->n : -1; d < (s->n ? s->n : 1); d++) {
                char what[160];
                snprintf(what, sizeof what, "g %s, output %s, dim %d", t_layout[l], t_layout[(l + 1) % L_COUNT], d);
                DTFN(check_softmax_back)(&c, what, lg, g, y, d);
            }
            tensor_free(g);
            tensor_free(y);
        }
        t_done(&c, "%s %s of %s over every dim, %d layout pairs", DT_NAME, name, t_shape_str(s1, sizeof s1, s->n, s->s),
               L_COUNT);
    }
    {
        int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
        TT *a = TFN(zeros)(2, s23, tendo_cpu()), *b = TFN(zeros)(2, s32, tendo_cpu());
        TT *r = lg ? tensor_log_softmax_backward(a, b, 0) : tensor_softmax_backward(a, b, 0);
        bool good = r == NULL && t_failed_with(TENDO_ERR_SHAPE, "one shape");

        r = lg ? TFN(log_softmax_backward)(a, NULL, 0) : TFN(softmax_backward)(a, NULL, 0);
        good = r == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        r = lg ? tensor_log_softmax_backward(a, a, 2) : tensor_softmax_backward(a, a, 2);
        good = r == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "dim 2") && good;
        ok(good, "%s %s: shapes that differ, NULL, a dim out of range: clear errors", DT_NAME, name);
        tensor_free(a);
        tensor_free(b);
    }
}

/* Inputs near +1e4 and -1e4 (exp would overflow or underflow without
 * subtracting the max): finite results that match the reference. */
static void DTFN(test_softmax_stable)(bool lg)
{
    const char *name = lg ? "log_softmax" : "softmax";
    const int64_t shape[2] = {4, 33};
    E raw[4 * 33];
    uint64_t rng = 0x1e4u;
    t_check c = {0};
    bool finite = true;

    /* rows 0, 2 near +1e4, rows 1, 3 near -1e4; rows 2, 3 spread over
     * +-200, so that some exp(x - max) underflow.  A dtype that cannot
     * hold 1e4 (f8e4m3, largest 448) gets +-300, spread over +-140. */
    bool small = !isfinite(E_TO_DOUBLE(E_FROM_DOUBLE(1e4))) || E_TO_DOUBLE(E_FROM_DOUBLE(1.1e4)) < 1e4;
    for (int i = 0; i < 4 * 33; i++) {
        double big = small ? 300 : 1e4, base = (i / 33) % 2 ? -big : big,
               spread = i / 33 >= 2 ? (small ? 140 : 200) : 20;
        raw[i] = E_FROM_DOUBLE(base + t_rand_range(&rng, -spread, spread));
    }
    {
        TT *a = TFN(from_data)(raw, 2, shape, tendo_cpu());
        TT *at = tensor_transpose(a, 0, 1);
        TT *r = DTFN(softmax_op)(lg, a, 1);
        double *v = r ? DTFN(values)(r) : NULL;

        for (int i = 0; v && i < 4 * 33; i++)
            finite = finite && isfinite(v[i]);
        free(v);
        tensor_free(r);
        DTFN(check_softmax)(&c, "rows", lg, a, -1);
        DTFN(check_softmax)(&c, "columns of the transpose", lg, at, 0);
        tensor_free(a);
        tensor_free(at);
    }
    ok(finite, "%s %s of rows near +1e4 and -1e4 has no inf or NaN", DT_NAME, name);
    t_done(&c, "%s %s of rows near +1e4 and -1e4 matches the reference", DT_NAME, name);
}

static void DTFN(test_softmax_edges)(void)
{
    TT *a = TFN(ones)(2, (const int64_t[]){3, 4}, tendo_cpu());
    TT *e = TFN(zeros)(2, (const int64_t[]){3, 0}, tendo_cpu());
    bool good = true;

    for (int lg = 0; lg < 2; lg++) {
        const char *name = lg ? "log_softmax" : "softmax";
        TT *r;

        good = DTFN(softmax_op)(lg, a, 2) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name);
        good = DTFN(softmax_op)(lg, a, -3) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "dim -3") && good;
        good = DTFN(softmax_op)(lg, NULL, 0) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        ok(good, "%s %s: dim 2 or -3 of [3,4], NULL: TENDO_ERR_INVALID_ARG", DT_NAME, name);
        for (int d = 0; d < 2; d++) {
            r = DTFN(softmax_op)(lg, e, d);
            good = r && t_same_shape(tensor_ndim(r), tensor_shape(r), 2, (const int64_t[]){3, 0});
            ok(good, "%s %s of an empty [3,0] over dim %d is an empty [3,0]", DT_NAME, name, d);
            tensor_free(r);
        }
    }
    tensor_free(a);
    tensor_free(e);
}

/* ---- layer_norm and rms_norm ----------------------------------------------------------------- */

/* Reference over the last dim of vals (rows of n), eps as the library
 * sees it (a float). */
static void DTFN(norm_ref)(int variant, int64_t rows, int64_t n, const double *vals, const double *w, const double *b,
                           double eps, double *want, double *tol)
{
    const bool rms = variant >= N_RMS_W;
    const double D = t_depth(n);

    for (int64_t r = 0; r < rows; r++) {
        const double *x = vals + r * n;
        double mean = 0, var = 0, absmean = 0, sigma;

        for (int64_t i = 0; i < n; i++) {
            mean += x[i];
            absmean += fabs(x[i]);
        }
        mean /= (double)n;
        absmean /= (double)n;
        if (rms)
            mean = 0;
        for (int64_t i = 0; i < n; i++)
            var += (x[i] - mean) * (x[i] - mean);
        var /= (double)n;
        sigma = sqrt(var + eps);
        for (int64_t i = 0; i < n; i++) {
            double z = (x[i] - mean) / sigma, wi = w ? w[i] : 1, bi = b ? b[i] : 0, y = z * wi + bi;
            want[r * n + i] = y;
            if (rms)
                tol[r * n + i] = 2 * (D + 8) * T_U * fabs(y);
            else
                tol[r * n + i] = 2 * T_U * (fabs(wi) * ((D + 2) * absmean / sigma + (D + 8) * fabs(z)) + fabs(y) + fabs(bi));
            tol[r * n + i] += DTFN(narrow_tol)(y);
        }
    }
}

static TT *DTFN(norm_op)(int variant, const TT *a, const TT *w, const TT *b, double eps)
{
    switch (variant) {
    case N_LN_WB: return tensor_layer_norm(a, w, b, eps);
    case N_LN_W: return tensor_layer_norm(a, w, NULL, eps);
    case N_LN_B: return tensor_layer_norm(a, NULL, b, eps);
    case N_LN: return tensor_layer_norm(a, NULL, NULL, eps);
    case N_RMS_W: return tensor_rms_norm(a, w, eps);
    case N_RMS: return tensor_rms_norm(a, NULL, eps);
    }
    return NULL;
}

static void DTFN(test_norm)(int variant, int sh)
{
    const struct t_nshape *s = &t_nshapes[sh];
    const int64_t n = s->s[s->n - 1], rows = t_numel(s->n, s->s) / n;
    t_check c = {0};
    char s1[64];

    for (int l = 0; l < L_COUNT; l++)
        for (int k = 0; k < 2; k++) {
            /* eps as a float, as the library takes it */
            const double eps = k ? 0.25 : 1e-5, feps = (double)(float)eps;
            uint64_t rng = 0x4e0u + (uint64_t)(variant * 1000 + sh * 100 + l * 10 + k) * 31u;
            TT *a = DTFN(make)(l, s->n, s->s, &rng, D_RANDOM, -2, 3);
            /* the parameters in various layouts too: stride 1, 2, 0, -1 */
            TT *w = DTFN(make)((l + 1) % L_COUNT, 1, &n, &rng, D_RANDOM, 0.5, 1.5);
            TT *b = DTFN(make)((l + 2) % L_COUNT, 1, &n, &rng, D_RANDOM, -1, 1);
            double *av = DTFN(values)(a), *wv = DTFN(values)(w), *bv = DTFN(values)(b);
            double *want = malloc((size_t)(rows * n) * sizeof *want), *tol = malloc((size_t)(rows * n) * sizeof *tol);
            bool uw = variant == N_LN_WB || variant == N_LN_W || variant == N_RMS_W;
            bool ub = variant == N_LN_WB || variant == N_LN_B;
            TT *r = DTFN(norm_op)(variant, a, w, b, eps);
            char what[160];

            snprintf(what, sizeof what, "a %s, weight %s, bias %s, eps %g", t_layout[l], t_layout[(l + 1) % L_COUNT],
                     t_layout[(l + 2) % L_COUNT], eps);
            DTFN(norm_ref)(variant, rows, n, av, uw ? wv : NULL, ub ? bv : NULL, feps, want, tol);
            DTFN(check_against)(&c, what, r, s->n, s->s, want, tol);
            tensor_free(r);
            tensor_free(a);
            tensor_free(w);
            tensor_free(b);
            free(av);
            free(wv);
            free(bv);
            free(want);
            free(tol);
        }
    t_done(&c, "%s %s over the last dim of %s: %d layouts x eps 1e-5, 0.25", DT_NAME, t_norm_names[variant],
           t_shape_str(s1, sizeof s1, s->n, s->s), L_COUNT);
}

/* layer_norm_backward / rms_norm_backward against double: with xhat =
 * (a - mean) rstd (rms: a rstd) and gw = g w, dx = rstd (gw - mean(gw) -
 * xhat mean(gw xhat)) (rms without mean(gw)).  Tolerance: the row sums'
 * depth times u, relative to the terms' magnitudes, the statistics'
 * error carried through rstd, one rounding to the dtype. */
static void DTFN(test_norm_back)(bool rms, bool use_w, int sh)
{
    const struct t_nshape *s = &t_nshapes[sh];
    const int64_t n = s->s[s->n - 1], rows = t_numel(s->n, s->s) / n;
    const char *name = rms ? "rms_norm_backward" : "layer_norm_backward";
    t_check c = {0};
    char s1[64];

    for (int l = 0; l < L_COUNT; l++) {
        /* an expanded a has constant rows: 1/sqrt(eps) would scale its
         * gradient past fp8's range */
        const double eps = l == L_EXPAND ? 0.25 : 1e-5, feps = (double)(float)eps;
        uint64_t rng = 0x6b0u + (uint64_t)(rms * 1000 + use_w * 500 + sh * 100 + l * 10) * 31u;
        TT *a = DTFN(make)(l, s->n, s->s, &rng, D_RANDOM, -2, 3);
        TT *g = DTFN(make)((l + 2) % L_COUNT, s->n, s->s, &rng, D_RANDOM, -1, 1);
        TT *w = DTFN(make)((l + 1) % L_COUNT, 1, &n, &rng, D_RANDOM, 0.5, 1.5);
        double *av = DTFN(values)(a), *gv = DTFN(values)(g), *wv = DTFN(values)(w);
        double *want = malloc((size_t)(rows * n) * sizeof *want), *tol = malloc((size_t)(rows * n) * sizeof *tol);
        TT *r = rms ? TFN(rms_norm_backward)(g, a, use_w ? w : NULL, eps)
                    : TFN(layer_norm_backward)(g, a, use_w ? w : NULL, eps);
        char what[160];

        for (int64_t i = 0; i < rows; i++) {
            const double *x = av + i * n, *gr = gv + i * n;
            double mean = 0, var = 0, rstd, m1 = 0, m2 = 0, a1 = 0, a2 = 0, am = 0;
            for (int64_t k = 0; k < n && !rms; k++)
                mean += x[k] / (double)n;
            for (int64_t k = 0; k < n; k++) {
                var += (x[k] - mean) * (x[k] - mean) / (double)n;
                am += fabs(x[k]) / (double)n;
            }
            rstd = 1 / sqrt(var + feps);
            for (int64_t k = 0; k < n; k++) {
                double gw = gr[k] * (use_w ? wv[k] : 1), xh = (x[k] - mean) * rstd;
                m1 += rms ? 0 : gw / (double)n;
                m2 += gw * xh / (double)n;
                a1 += rms ? 0 : fabs(gw) / (double)n;
                a2 += fabs(gw * xh) / (double)n;
            }
            for (int64_t k = 0; k < n; k++) {
                double gw = gr[k] * (use_w ? wv[k] : 1), xh = (x[k] - mean) * rstd;
                want[i * n + k] = rstd * (gw - m1 - xh * m2);
                tol[i * n + k] = 4 * (t_depth(n) + 16) * T_U * rstd * (fabs(gw) + a1 + fabs(xh) * a2) *
                                     (1 + am * rstd) + DTFN(narrow_tol)(want[i * n + k]) + 0x1p-126;
            }
        }
        snprintf(what, sizeof what, "a %s, g %s, weight %s, eps %g", t_layout[l], t_layout[(l + 2) % L_COUNT],
                 use_w ? t_layout[(l + 1) % L_COUNT] : "NULL", eps);
        DTFN(check_against)(&c, what, r, s->n, s->s, want, tol);
        tensor_free(r), tensor_free(a), tensor_free(g), tensor_free(w);
        free(av), free(gv), free(wv), free(want), free(tol);
    }
    t_done(&c, "%s %s%s over the last dim of %s: %d layouts", DT_NAME, name, use_w ? "" : " without weight",
           t_shape_str(s1, sizeof s1, s->n, s->s), L_COUNT);
    if (sh == 0) {
        int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
        TT *x = TFN(zeros)(2, s23, tendo_cpu()), *y = TFN(zeros)(2, s32, tendo_cpu());
        TT *w2 = TFN(ones)(1, (const int64_t[]){2}, tendo_cpu());
        bool good = (rms ? TFN(rms_norm_backward)(x, y, NULL, 1e-5) : TFN(layer_norm_backward)(x, y, NULL, 1e-5)) == NULL &&
                    t_failed_with(TENDO_ERR_SHAPE, "one shape");

        good = (rms ? TFN(rms_norm_backward)(x, x, w2, 1e-5) : TFN(layer_norm_backward)(x, x, w2, 1e-5)) == NULL &&
               t_failed_with(TENDO_ERR_SHAPE, "[2]") && good;
        good = (rms ? TFN(rms_norm_backward)(x, x, NULL, -1) : TFN(layer_norm_backward)(x, x, NULL, -1)) == NULL &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "eps") && good;
        good = (rms ? TFN(rms_norm_backward)(NULL, x, NULL, 1e-5) : TFN(layer_norm_backward)(NULL, x, NULL, 1e-5)) ==
                   NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        ok(good, "%s %s: shapes that differ, a weight that does not fit, eps < 0, NULL: clear errors", DT_NAME, name);
        tensor_free(x), tensor_free(y), tensor_free(w2);
    }
}

static void DTFN(test_norm_edges)(void)
{
    const int64_t s34[2] = {3, 4};
    TT *a = TFN(ones)(2, s34, tendo_cpu());
    TT *w4 = TFN(ones)(1, (const int64_t[]){4}, tendo_cpu());
    TT *w5 = TFN(ones)(1, (const int64_t[]){5}, tendo_cpu());
    TT *w14 = TFN(ones)(2, (const int64_t[]){1, 4}, tendo_cpu());
    TT *c38 = TFN(full)(2, (const int64_t[]){3, 8}, 1.25, tendo_cpu());
    TT *s = TFN(full)(0, NULL, 3.5, tendo_cpu());
    uint64_t rng = 0xed6e5u;
    TT *w8 = DTFN(make)(L_CONTIG, 1, (const int64_t[]){8}, &rng, D_RANDOM, 0.5, 1.5);
    TT *b8 = DTFN(make)(L_FLIP, 1, (const int64_t[]){8}, &rng, D_RANDOM, -1, 1);
    TT *r;
    double *v, *bv;
    bool good;

    good = tensor_layer_norm(a, w5, w4, 1e-5) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[5]");
    good = tensor_layer_norm(a, w14, NULL, 1e-5) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[1,4]") && good;
    ok(good, "%s layer_norm with a weight of shape [5] or [1,4] for [3,4]: TENDO_ERR_SHAPE naming it", DT_NAME);
    good = tensor_layer_norm(a, w4, w5, 1e-5) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[5]");
    ok(good, "%s layer_norm with a bias of shape [5] for [3,4]: TENDO_ERR_SHAPE naming it", DT_NAME);
    good = tensor_rms_norm(a, w5, 1e-5) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[5]");
    ok(good, "%s rms_norm with a weight of shape [5] for [3,4]: TENDO_ERR_SHAPE naming it", DT_NAME);
    good = tensor_layer_norm(a, w4, w4, -1e-5) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "eps");
    good = tensor_rms_norm(a, NULL, -1) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "eps") && good;
    ok(good, "%s layer_norm and rms_norm refuse a negative eps: TENDO_ERR_INVALID_ARG", DT_NAME);
    if (DT_MANTISSA_BITS <= 24) { /* eps is added in float: 1e308 would be inf there, and the result 0 */
        good = tensor_rms_norm(a, NULL, 1e308) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "eps");
        good = tensor_layer_norm(a, NULL, NULL, 1e39) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "eps") && good;
        ok(good, "%s rms_norm and layer_norm refuse an eps that is infinite in float: TENDO_ERR_INVALID_ARG", DT_NAME);
    } else {
        r = tensor_rms_norm(a, NULL, 1e308);
        ok(r != NULL, "%s rms_norm takes eps 1e308, finite in double", DT_NAME);
        tensor_free(r);
    }
    good = TFN(layer_norm)(NULL, NULL, NULL, 1e-5) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "layer_norm");
    good = TFN(rms_norm)(NULL, NULL, 1e-5) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "rms_norm") && good;
    ok(good, "%s layer_norm and rms_norm of NULL: TENDO_ERR_INVALID_ARG", DT_NAME);

    /* a constant row (variance 0): exactly the bias */
    r = tensor_layer_norm(c38, w8, b8, 1e-5);
    v = r ? DTFN(values)(r) : NULL;
    bv = DTFN(values)(b8);
    good = v != NULL;
    for (int i = 0; v && i < 24; i++)
        good = good && v[i] == bv[i % 8];
    ok(good, "%s layer_norm of constant rows is the bias exactly", DT_NAME);
    free(v);
    free(bv);
    tensor_free(r);
    /* a 0-d tensor is a row of one: layer_norm 0, rms_norm x/sqrt(x^2+eps) */
    r = tensor_layer_norm(s, NULL, NULL, 1e-5);
    v = r ? DTFN(values)(r) : NULL;
    ok(v && tensor_ndim(r) == 0 && v[0] == 0, "%s layer_norm of a 0-d tensor is 0", DT_NAME);
    free(v);
    tensor_free(r);
    r = tensor_rms_norm(s, NULL, 0);
    v = r ? DTFN(values)(r) : NULL;
    ok(v && tensor_ndim(r) == 0 && fabs(v[0] - 1) <= 4 * T_U + DTFN(narrow_tol)(1), "%s rms_norm of a 0-d tensor, eps 0, is 1",
       DT_NAME);
    free(v);
    tensor_free(r);

    tensor_free(a);
    tensor_free(w4);
    tensor_free(w5);
    tensor_free(w14);
    tensor_free(c38);
    tensor_free(s);
    tensor_free(w8);
    tensor_free(b8);
}

/* ---- threads --------------------------------------------------------------------------------- */

/* Results of 1, 2 and 3 threads are bitwise identical.  Row-wise ops split
 * rows (not the elements of one) once there are 2^15 of them, so besides
 * 300x500 the cases include [40000,8] (dim -1) and [8,40000] (dim 0). */
static void DTFN(test_nn_threads)(void)
{
    enum { N_CASES = 16 };
    static const char *names[N_CASES] = {
        "softmax [300,500] dim -1",    "softmax [300,500] dim 0",        "softmax [40000,8] dim -1",
        "softmax [8,40000] dim 0",     "log_softmax [40000,8] dim -1",   "log_softmax [300,500] dim 0",
        "layer_norm [300,500]",        "layer_norm [40000,8]",           "rms_norm [40000,8]",
        "matmul [128,256] @ [256,96]", "matmul flipped [128,256] @ transposed [256,96]",
        "matmul [4,64,70] @ [70,50]",  "matmul [300] @ [300,200]",
        "matmul [310,40] @ [40,64] (two row blocks)", "matmul [2,256] @ transposed [256,1100] (column blocks)",
        "matmul [128,256] @ [256,512] (one row block, columns split by thread count)"};
    uint64_t rng = 0x71a5u;
    TT *big = DTFN(make)(L_CONTIG, 2, (const int64_t[]){300, 500}, &rng, D_RANDOM, -5, 5);
    TT *tall = DTFN(make)(L_CONTIG, 2, (const int64_t[]){40000, 8}, &rng, D_RANDOM, -5, 5);
    TT *wide = DTFN(make)(L_CONTIG, 2, (const int64_t[]){8, 40000}, &rng, D_RANDOM, -5, 5);
    TT *w500 = DTFN(make)(L_CONTIG, 1, (const int64_t[]){500}, &rng, D_RANDOM, 0.5, 1.5);
    TT *b500 = DTFN(make)(L_CONTIG, 1, (const int64_t[]){500}, &rng, D_RANDOM, -1, 1);
    TT *w8 = DTFN(make)(L_FLIP, 1, (const int64_t[]){8}, &rng, D_RANDOM, 0.5, 1.5);
    TT *ma = DTFN(make)(L_CONTIG, 2, (const int64_t[]){128, 256}, &rng, D_RANDOM, -1, 1);
    TT *mb = DTFN(make)(L_CONTIG, 2, (const int64_t[]){256, 96}, &rng, D_RANDOM, -1, 1);
    TT *maf = DTFN(make)(L_FLIP, 2, (const int64_t[]){128, 256}, &rng, D_RANDOM, -1, 1);
    TT *mbt = DTFN(make)(L_TRANS, 2, (const int64_t[]){256, 96}, &rng, D_RANDOM, -1, 1);
    TT *m3 = DTFN(make)(L_CONTIG, 3, (const int64_t[]){4, 64, 70}, &rng, D_RANDOM, -1, 1);
    TT *m70 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){70, 50}, &rng, D_RANDOM, -1, 1);
    TT *v300 = DTFN(make)(L_CONTIG, 1, (const int64_t[]){300}, &rng, D_RANDOM, -1, 1);
    TT *m300 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){300, 200}, &rng, D_RANDOM, -1, 1);
    TT *m310 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){310, 40}, &rng, D_RANDOM, -1, 1);
    TT *m40 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){40, 64}, &rng, D_RANDOM, -1, 1);
    TT *m2 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){2, 256}, &rng, D_RANDOM, -1, 1);
    TT *mwt = DTFN(make)(L_TRANS, 2, (const int64_t[]){256, 1100}, &rng, D_RANDOM, -1, 1);
    TT *m512 = DTFN(make)(L_CONTIG, 2, (const int64_t[]){256, 512}, &rng, D_RANDOM, -1, 1);

    t_want_threads(DT_NAME);
    for (int k = 0; k < N_CASES; k++) {
        DTFN(tcheck) c = {0};

        for (int threads = 1; threads <= 3; threads++) {
            TT *r = NULL;

            tendo_set_num_threads(threads);
            switch (k) {
            case 0: r = tensor_softmax(big, -1); break;
            case 1: r = tensor_softmax(big, 0); break;
            case 2: r = tensor_softmax(tall, -1); break;
            case 3: r = tensor_softmax(wide, 0); break;
            case 4: r = tensor_log_softmax(tall, -1); break;
            case 5: r = tensor_log_softmax(big, 0); break;
            case 6: r = tensor_layer_norm(big, w500, b500, 1e-5); break;
            case 7: r = tensor_layer_norm(tall, w8, NULL, 1e-5); break;
            case 8: r = tensor_rms_norm(tall, w8, 1e-5); break;
            case 9: r = tensor_matmul(ma, mb); break;
            case 10: r = tensor_matmul(maf, mbt); break;
            case 11: r = tensor_matmul(m3, m70); break;
            case 12: r = tensor_matmul(v300, m300); break;
            case 13: r = tensor_matmul(m310, m40); break;
            case 14: r = tensor_matmul(m2, mwt); break;
            case 15: r = tensor_matmul(ma, m512); break;
            }
            DTFN(tcheck_add)(&c, r, names[k]);
        }
        ok(DTFN(tcheck_done)(&c), "%s %s: 1, 2 and 3 threads bitwise identical", DT_NAME, names[k]);
    }
    tendo_set_num_threads(0); /* back to the default */
    tensor_free(big);
    tensor_free(tall);
    tensor_free(wide);
    tensor_free(w500);
    tensor_free(b500);
    tensor_free(w8);
    tensor_free(ma);
    tensor_free(mb);
    tensor_free(maf);
    tensor_free(mbt);
    tensor_free(m3);
    tensor_free(m70);
    tensor_free(v300);
    tensor_free(m300);
    tensor_free(m310);
    tensor_free(m40);
    tensor_free(m2);
    tensor_free(mwt);
    tensor_free(m512);
}

static void DTFN(test_nn)(void)
{
    for (int cs = 0; cs < T_NMMCASES; cs++)
        DTFN(test_matmul_case)(cs);
    DTFN(test_matmul_expanded_batch)();
    DTFN(test_matmul_accumulator)();
    DTFN(test_matmul_errors)();
    for (int lg = 0; lg < 2; lg++) {
        DTFN(test_softmax)(lg);
        DTFN(test_softmax_stable)(lg);
        DTFN(test_softmax_back)(lg);
    }
    DTFN(test_softmax_edges)();
    for (int variant = 0; variant < N_COUNT; variant++)
        for (int sh = 0; sh < T_NNSHAPES; sh++)
            DTFN(test_norm)(variant, sh);
    for (int sh = 0; sh < T_NNSHAPES; sh++)
        for (int k = 0; k < 4; k++)
            DTFN(test_norm_back)(k & 1, k & 2, sh);
    DTFN(test_norm_edges)();
    DTFN(test_nn_threads)();
}
