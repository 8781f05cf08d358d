/* t/bodies/loss-body.h - cross_entropy, its fused gradient and mse_loss
 * against double references, per float dtype, on inputs in every layout.
 *
 * The reference takes the inputs' exact values.  Tolerances, with u the
 * compute type's half ulp (2^-24, or 2^-53 for f64), n the classes and D
 * the depth of a row sum of n terms:
 *
 *   cross_entropy  per counted row (D + 32) u (|lse| + R + |x_t| + |max|),
 *                  R = max |x - max| (the subtraction, the row sums, log),
 *                  averaged, plus the mean's pairwise sum and one rounding
 *                  to the dtype;
 *   its gradient   (D + 32) u |g / count| (p_i + s / n + 1) per element,
 *                  one rounding to the dtype;
 *   mse_loss       (D + 8) u of the mean square (the differences, squares
 *                  and sum in the compute type), one rounding; each
 *                  gradient element a sum of terms 2 (a - b) / N, each
 *                  rounded once to the dtype (4u for f32 and f64), the sum
 *                  in the compute type, one more rounding.
 *
 * Included by t/each-dtype.h; see t/lib/dt.h. */

#ifndef T_LOSS_BODY_ONCE
#define T_LOSS_BODY_ONCE

#include <stdio.h>
#include <string.h>

#include "check.h"

#define T_IGNORE (-100) /* torch's default ignore_index */

/* [rows, classes] of the cross-entropy cases */
static const int64_t t_ce_shapes[][2] = {{1, 1}, {3, 4}, {5, 17}, {33, 100}, {4, 1000}, {2, 5000}, {0, 7}};
#define T_NCE ((int)(sizeof t_ce_shapes / sizeof *t_ce_shapes))

/* Random targets in [0, classes); with ignore_some, every fifth (from the
 * third) is T_IGNORE. */
static tensor_i64 *t_targets(int64_t rows, int64_t classes, uint64_t *rng, bool ignore_some, int64_t *tv)
{
    tensor_i64 *t;

    for (int64_t i = 0; i < rows; i++)
        tv[i] = ignore_some && i % 5 == 2 ? T_IGNORE : (int64_t)(t_rand_u64(rng) % (uint64_t)classes);
    if (!(t = tensor_i64_from_data(tv, 1, &rows, tendo_cpu())))
        bail("tensor_i64_from_data: %s", tendo_error_message(tendo_last_error()));
    return t;
}

/* cross_entropy of x (rows x n doubles, row-major) against tv in double:
 * the loss (NaN when no target counts), its tolerance in the compute type
 * of half ulp u (*tol, without the final rounding), each row's softmax
 * (p, rows x n) and the count of targets not ignored. */
static double t_ce_ref(const double *x, const int64_t *tv, int64_t rows, int64_t n, double sm, double u, double *tol,
                       double *p, int64_t *counted)
{
    double sum = 0, err = 0;

    *counted = 0;
    for (int64_t i = 0; i < rows; i++) {
        const double *r = x + i * n;
        double m = -INFINITY, s = 0, mean = 0, spread = 0, lse;

        for (int64_t k = 0; k < n; k++)
            m = r[k] > m ? r[k] : m;
        for (int64_t k = 0; k < n; k++) {
            s += exp(r[k] - m);
            mean += r[k] / (double)n;
            spread = fabs(r[k] - m) > spread ? fabs(r[k] - m) : spread;
        }
        lse = m + log(s);
        for (int64_t k = 0; k < n; k++)
            p[i * n + k] = exp(r[k] - lse);
        if (tv[i] == T_IGNORE)
            continue;
        (*counted)++;
        sum += (1 - sm) * (lse - r[tv[i]]) + sm * (lse - mean);
        err += (t_depth(n) + 32) * u * (fabs(lse) + spread + fabs(r[tv[i]]) + fabs(m));
    }
    *tol = *counted ? err / (double)*counted + (t_depth(rows) + 4) * u * fabs(sum / (double)*counted) : 0;
    return *counted ? sum / (double)*counted : NAN;
}

/* [a] and [b] of the mse_loss cases: same shapes and broadcasts */
static const struct {
    int na, nb;
    int64_t a[3], b[3];
} t_mse_shapes[] = {
    {2, 2, {3, 4}, {3, 4}}, {2, 1, {5, 7}, {7}}, {2, 2, {3, 1}, {1, 4}}, {3, 3, {2, 3, 300}, {2, 3, 300}},
    {1, 1, {4097}, {4097}}, {0, 0, {0}, {0}},   {2, 2, {0, 3}, {0, 3}},
};
#define T_NMSE ((int)(sizeof t_mse_shapes / sizeof *t_mse_shapes))

#endif /* T_LOSS_BODY_ONCE */

#include "compare-body.h" /* per dtype */

/* ---- per dtype ------------------------------------------------------------------- */

/* The compute type's half ulp. */
static double DTFN(u)(void)
{
    return DT_MANTISSA_BITS >= 53 ? 0x1p-53 : 0x1p-24;
}

static double DTFN(scalar)(const TT *t)
{
    double *v = DTFN(values)(t), x = v[0];

    free(v);
    return x;
}

/* One case of cross_entropy and cross_entropy_backward: logits [rows, n]
 * in layout l (values in [lo, -lo]), smoothing sm, some targets ignored or
 * none; a logits tensor made 1-D (one sample, a 0-d target) when one_d. */
static void DTFN(check_ce)(t_check *c, t_check *cb, const int64_t *shape, int l, double sm, bool ignore_some,
                           bool one_d, uint64_t *rng)
{
    double lo = DT_MANTISSA_BITS < 8 ? -4 : -12, tol, want, gv, sc;
    int64_t rows = shape[0], n = shape[1], counted, *tv = malloc((size_t)(rows + 1) * sizeof *tv);
    TT *x2 = DTFN(make)(l, 2, shape, rng, D_RANDOM, lo, -lo);
    tensor_i64 *t2 = t_targets(rows, n, rng, ignore_some, tv);
    TT *x1 = one_d ? tensor_narrow(x2, 0, 0, 1) : NULL, *x = one_d ? tensor_squeeze(x1, 0) : x2;
    tensor_i64 *t1 = one_d ? tensor_narrow(t2, 0, 0, 1) : NULL, *t = one_d ? tensor_squeeze(t1, 0) : t2;
    TT *g = TFN(full)(0, NULL, t_rand_range(rng, 0.5, 2), tendo_cpu());
    double *xv = DTFN(values)(x), *p = malloc((size_t)(rows * n + 1) * sizeof *p);
    double *gw = calloc((size_t)(rows * n + 1), sizeof *gw), *gt = calloc((size_t)(rows * n + 1), sizeof *gt);
    TT *r = tensor_cross_entropy(x, t, T_IGNORE, sm);
    TT *dx = tensor_cross_entropy_backward(g, x, t, T_IGNORE, sm);
    char what[160];

    if (one_d)
        rows = 1;
    gv = DTFN(scalar)(g);
    want = t_ce_ref(xv, tv, rows, n, sm, DTFN(u)(), &tol, p, &counted);
    tol += DTFN(narrow_tol)(want);
    snprintf(what, sizeof what, "%s%s, smoothing %g%s", t_layout[l], one_d ? " 1-D" : "", sm,
             ignore_some ? ", some ignored" : "");
    DTFN(check_against)(c, what, r, 0, NULL, &want, &tol);
    sc = gv / (double)counted;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = 0; k < n; k++) {
            int64_t at = i * n + k;
            bool hit = k == tv[i];

            gw[at] = tv[i] == T_IGNORE ? 0 : sc * (p[at] - sm / (double)n - (hit ? 1 - sm : 0));
            gt[at] = (t_depth(n) + 32) * DTFN(u)() * fabs(sc) * (p[at] + sm / (double)n + 1) + DTFN(narrow_tol)(gw[at]);
        }
    DTFN(check_against)(cb, what, dx, tensor_ndim(x), tensor_shape(x), gw, gt);
    if (one_d) {
        tensor_free(x1);
        tensor_free(x2);
        tensor_i64_free(t1);
        tensor_i64_free(t2);
    }
    tensor_free(r);
    tensor_free(dx);
    tensor_free(x);
    tensor_free(g);
    tensor_i64_free(t);
    free(xv);
    free(p);
    free(gw);
    free(gt);
    free(tv);
}

static void DTFN(test_cross_entropy)(void)
{
    static const double smooth[] = {0.0, 0.1, 1.0};

    for (int sh = 0; sh < T_NCE; sh++) {
        const int64_t *shape = t_ce_shapes[sh];
        t_check c = {0}, cb = {0};

        for (int l = 0; l < L_COUNT; l++)
            for (int v = 0; v < 6; v++) {
                uint64_t rng = 0xce11u + (uint64_t)(sh * 100 + l * 10 + v) * 7919u;
                DTFN(check_ce)(&c, &cb, shape, l, smooth[v % 3], v >= 3, false, &rng);
                if (shape[0] > 0 && l == L_CONTIG)
                    DTFN(check_ce)(&c, &cb, shape, l, smooth[v % 3], false, true, &rng);
            }
        t_done(&c, "%s cross_entropy of [%lld, %lld]: %d layouts, smoothing 0 / 0.1 / 1, targets ignored or not, 1-D",
               DT_NAME, (long long)shape[0], (long long)shape[1], L_COUNT);
        t_done(&cb, "%s cross_entropy_backward of [%lld, %lld]: the same cases", DT_NAME, (long long)shape[0],
               (long long)shape[1]);
    }
}

/* Rows near +-1e4 (+-300 where the dtype cannot hold 1e4): finite, and
 * the gradient of autograd is cross_entropy_backward's, bit for bit. */
static void DTFN(test_cross_entropy_stable)(void)
{
    const int64_t shape[2] = {4, 33};
    bool small = !isfinite(E_TO_DOUBLE(E_FROM_DOUBLE(1e4))) || E_TO_DOUBLE(E_FROM_DOUBLE(1.1e4)) < 1e4;
    E raw[4 * 33];
    int64_t tv[4] = {0, 32, 5, T_IGNORE}, four = 4;
    uint64_t rng = 0x5ab1eu;
    double want, tol, p[4 * 33], xv[4 * 33];
    int64_t counted;
    t_check c = {0};

    for (int i = 0; i < 4 * 33; i++) {
        raw[i] = E_FROM_DOUBLE((i / 33 % 2 ? -1 : 1) * (small ? 300 : 1e4) + t_rand_range(&rng, -20, 20));
        xv[i] = E_TO_DOUBLE(raw[i]);
    }
    {
        TT *x = TFN(from_data)(raw, 2, shape, tendo_cpu());
        tensor_i64 *t = tensor_i64_from_data(tv, 1, &four, tendo_cpu());
        TT *one = TFN(full)(0, NULL, 1.0, tendo_cpu());
        TT *loss, *dx, *gx;
        E *a, *b;
        bool same = true;

        if (!x || !t || !one || tensor_set_requires_grad(x, true) != TENDO_OK)
            bail("setup: %s", tendo_error_message(tendo_last_error()));
        loss = tensor_cross_entropy(x, t, T_IGNORE, 0.1);
        want = t_ce_ref(xv, tv, 4, 33, 0.1, DTFN(u)(), &tol, p, &counted);
        tol += DTFN(narrow_tol)(want);
        DTFN(check_against)(&c, "rows near +-1e4", loss, 0, NULL, &want, &tol);
        ok(loss && tensor_backward(loss, NULL) == TENDO_OK, "%s cross_entropy: backward through it", DT_NAME);
        gx = tensor_grad(x);
        dx = tensor_cross_entropy_backward(one, x, t, T_IGNORE, 0.1);
        a = gx ? DTFN(raw)(gx) : NULL;
        b = dx ? DTFN(raw)(dx) : NULL;
        for (int i = 0; a && b && i < 4 * 33; i++)
            same = same && memcmp(&a[i], &b[i], sizeof *a) == 0;
        ok(a && b && same, "%s cross_entropy: autograd's gradient is cross_entropy_backward(1, ...)'s, bitwise",
           DT_NAME);
        free(a);
        free(b);
        tensor_free(gx);
        tensor_free(dx);
        tensor_free(loss);
        tensor_free(one);
        tensor_free(x);
        tensor_i64_free(t);
    }
    t_done(&c, "%s cross_entropy of rows near +-1e4 matches the reference", DT_NAME);
}

static void DTFN(test_cross_entropy_errors)(void)
{
    int64_t s34[2] = {3, 4}, s30[2] = {3, 0}, three = 3, two = 2, zero = 0;
    TT *x = TFN(zeros)(2, s34, tendo_cpu()), *x0 = TFN(zeros)(2, s30, tendo_cpu());
    TT *e = TFN(zeros)(2, (int64_t[]){0, 4}, tendo_cpu()), *g2 = TFN(zeros)(1, &two, tendo_cpu());
    tensor_i64 *bad = tensor_i64_from_data((int64_t[]){0, 4, 1}, 1, &three, tendo_cpu());
    tensor_i64 *neg = tensor_i64_from_data((int64_t[]){0, -1, 1}, 1, &three, tendo_cpu());
    tensor_i64 *all = tensor_i64_from_data((int64_t[]){T_IGNORE, T_IGNORE, T_IGNORE}, 1, &three, tendo_cpu());
    tensor_i64 *short_ = tensor_i64_from_data((int64_t[]){0, 1}, 1, &two, tendo_cpu());
    tensor_i64 *none = tensor_i64_zeros(1, &zero, tendo_cpu());
    TT *r;
    bool good;

    good = !tensor_cross_entropy(x, bad, T_IGNORE, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "target 4 of sample 1");
    good = !tensor_cross_entropy(x, neg, T_IGNORE, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "target -1") && good;
    ok(good, "%s cross_entropy: a target out of [0, C) that is not ignore_index: TENDO_ERR_INVALID_ARG", DT_NAME);
    r = tensor_cross_entropy(x, neg, -1, 0);
    ok(r && isfinite(DTFN(scalar)(r)), "%s cross_entropy: ignore_index -1 ignores the -1", DT_NAME);
    tensor_free(r);
    good = !tensor_cross_entropy(x, short_, T_IGNORE, 0) && t_failed_with(TENDO_ERR_SHAPE, "target [2]");
    good = !tensor_cross_entropy(x0, bad, T_IGNORE, 0) && t_failed_with(TENDO_ERR_SHAPE, "no classes") && good;
    ok(good, "%s cross_entropy: target of another length, no classes: TENDO_ERR_SHAPE", DT_NAME);
    good = !tensor_cross_entropy(x, all, T_IGNORE, 1.5) && t_failed_with(TENDO_ERR_INVALID_ARG, "label_smoothing 1.5");
    good = !tensor_cross_entropy(x, all, T_IGNORE, NAN) && t_failed_with(TENDO_ERR_INVALID_ARG, "label_smoothing") && good;
    good = !TFN(cross_entropy)(NULL, all, T_IGNORE, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "logits") && good;
    good = !TFN(cross_entropy)(x, NULL, T_IGNORE, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "target") && good;
    ok(good, "%s cross_entropy: label smoothing outside [0, 1] or NaN, NULL operands: TENDO_ERR_INVALID_ARG", DT_NAME);
    r = tensor_cross_entropy(x, all, T_IGNORE, 0);
    ok(r && isnan(DTFN(scalar)(r)), "%s cross_entropy: every target ignored is NaN (0 / 0, as torch)", DT_NAME);
    tensor_free(r);
    r = tensor_cross_entropy(e, none, T_IGNORE, 0);
    ok(r && tensor_ndim(r) == 0 && isnan(DTFN(scalar)(r)), "%s cross_entropy: no samples is a 0-d NaN", DT_NAME);
    tensor_free(r);
    good = !tensor_cross_entropy_backward(g2, x, all, T_IGNORE, 0) && t_failed_with(TENDO_ERR_SHAPE, "one element");
    ok(good, "%s cross_entropy_backward: a gradient of two elements: TENDO_ERR_SHAPE", DT_NAME);
    tensor_free(x);
    tensor_free(x0);
    tensor_free(e);
    tensor_free(g2);
    tensor_i64_free(bad);
    tensor_i64_free(neg);
    tensor_i64_free(all);
    tensor_i64_free(short_);
    tensor_i64_free(none);
}

/* mse_loss over same shapes and broadcasts, every layout of the first
 * operand; its gradients through backward for both operands. */
static void DTFN(test_mse)(void)
{
    for (int sh = 0; sh < T_NMSE; sh++) {
        t_check c = {0}, cg = {0};
        int na = t_mse_shapes[sh].na, nb = t_mse_shapes[sh].nb;
        const int64_t *sa = t_mse_shapes[sh].a, *sb = t_mse_shapes[sh].b;
        int64_t so[3];
        int no = 0;
        char s1[64], s2[64];

        if (!t_bshape(na, sa, nb, sb, &no, so))
            bail("t_mse_shapes[%d] do not broadcast", sh);
        for (int l = 0; l < L_COUNT; l++) {
            uint64_t rng = 0x3e5u + (uint64_t)(sh * 10 + l) * 104729u;
            TT *a = DTFN(make)(na ? l : L_CONTIG, na, sa, &rng, D_RANDOM, -2, 2);
            TT *b = DTFN(make)(L_CONTIG, nb, sb, &rng, D_RANDOM, -2, 2);
            double *av = DTFN(values)(a), *bv = DTFN(values)(b), want = 0, tol;
            int64_t n = t_numel(no, so), nga = t_numel(na, sa), ngb = t_numel(nb, sb);
            double *ga = calloc((size_t)nga + 1, sizeof *ga), *gb = calloc((size_t)ngb + 1, sizeof *gb);
            double *ta = calloc((size_t)nga + 1, sizeof *ta), *tb = calloc((size_t)ngb + 1, sizeof *tb);
            /* a term's own error: a few roundings in the compute type, or
             * one to a narrower dtype */
            double term = DT_MANTISSA_BITS >= 24 ? 4 * DTFN(u)() : DT_ULP;
            TT *r, *dga, *dgb;

            if (tensor_set_requires_grad(a, true) != TENDO_OK || tensor_set_requires_grad(b, true) != TENDO_OK)
                bail("set_requires_grad: %s", tendo_error_message(tendo_last_error()));
            r = tensor_mse_loss(a, b);
            for (int64_t i = 0; i < n; i++) {
                double d = av[t_bcast(no, so, na, sa, i)] - bv[t_bcast(no, so, nb, sb, i)];
                want += d * d;
            }
            want = n ? want / (double)n : NAN;
            tol = n ? (t_depth(n) + 8) * DTFN(u)() * want + DTFN(narrow_tol)(want) : 0;
            DTFN(check_against)(&c, t_layout[l], r, 0, NULL, &want, &tol);
            /* d/da = 2 (a - b) / n, summed over a's broadcast, each term
             * rounded to the dtype once, the sum in the compute type; d/db
             * its negation */
            for (int64_t i = 0; i < n; i++) {
                int64_t ia = t_bcast(no, so, na, sa, i), ib = t_bcast(no, so, nb, sb, i);
                double d = 2 * (av[ia] - bv[ib]) / (double)n;
                ga[ia] += d;
                gb[ib] -= d;
                ta[ia] += fabs(d);
                tb[ib] += fabs(d);
            }
            for (int64_t i = 0; i < nga; i++)
                ta[i] = (term + (t_depth(n / nga) + 8) * DTFN(u)()) * ta[i] + (double)(n / nga + 1) * DTFN(tiny)() +
                        DTFN(narrow_tol)(ga[i]);
            for (int64_t i = 0; i < ngb; i++)
                tb[i] = (term + (t_depth(n / ngb) + 8) * DTFN(u)()) * tb[i] + (double)(n / ngb + 1) * DTFN(tiny)() +
                        DTFN(narrow_tol)(gb[i]);
            if (r && tensor_backward(r, NULL) == TENDO_OK) {
                dga = tensor_grad(a);
                dgb = tensor_grad(b);
                DTFN(check_against)(&cg, "gradient of input", dga, na, sa, ga, ta);
                DTFN(check_against)(&cg, "gradient of target", dgb, nb, sb, gb, tb);
                tensor_free(dga);
                tensor_free(dgb);
            } else {
                t_fail(&cg, "%s: backward failed: %s", t_layout[l], tendo_error_message(tendo_last_error()));
            }
            tensor_free(r);
            tensor_free(a);
            tensor_free(b);
            free(av);
            free(bv);
            free(ga);
            free(gb);
            free(ta);
            free(tb);
        }
        t_done(&c, "%s mse_loss of %s and %s: %d layouts", DT_NAME, t_shape_str(s1, sizeof s1, na, sa),
               t_shape_str(s2, sizeof s2, nb, sb), L_COUNT);
        t_done(&cg, "%s mse_loss of %s and %s: both gradients", DT_NAME, t_shape_str(s1, sizeof s1, na, sa),
               t_shape_str(s2, sizeof s2, nb, sb));
    }
    {
        TT *a = TFN(zeros)(2, (int64_t[]){3, 4}, tendo_cpu()), *b = TFN(zeros)(2, (int64_t[]){3, 5}, tendo_cpu());
        bool good = !tensor_mse_loss(a, b) && t_failed_with(TENDO_ERR_SHAPE, "");

        good = !TFN(mse_loss)(a, NULL) && t_failed_with(TENDO_ERR_INVALID_ARG, "target") && good;
        ok(good, "%s mse_loss: shapes that do not broadcast, NULL: clear errors", DT_NAME);
        tensor_free(a);
        tensor_free(b);
    }
}

static void DTFN(test_loss)(void)
{
    DTFN(test_cross_entropy)();
    DTFN(test_cross_entropy_stable)();
    DTFN(test_cross_entropy_errors)();
    DTFN(test_mse)();
}
