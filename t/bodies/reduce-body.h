/* t/bodies/reduce-body.h - every [[reduction]] of the registry (sum, mean, max,
 * min...) and sum_all against double references, per dtype.
 *
 * The reductions, their references and tolerances come from t/ops-table.h,
 * which gen/tendo-gen writes from the registry: this file keeps no list of
 * them.  Every dim (counted from the front and from the back), keepdim on
 * and off, of 1-D..4-D tensors in every layout (contiguous, transposed,
 * sliced with a step, expanded with stride 0, flipped with negative
 * strides), on three data sets:
 *
 *   eighths  k/8 for |k| <= 16: exact in every dtype, and every partial sum
 *            is exact in float, so a pairwise (summing) reduction must give
 *            its exact result rounded once to the dtype: sum the exact sum,
 *            mean the exact mean (float division, then one narrowing: both
 *            innocuous double roundings);
 *   random   U[x[0], x[1]) (the entry's x, by default [-1, 1)): sum within
 *            depth(n) * 2^-24 * sum|x| of the double sum (tol.fold = 0.5 f32
 *            ulps), where depth(n) = n for n <= 256, else 256 + n/64 +
 *            log2(n): the library sums blocked/pairwise (8 lanes over chunks
 *            of 1024, chunks pairwise; outer dims in blocks of 64), so no
 *            element goes through more float additions than that; that
 *            bound is carried through the entry's ref_finalize (mean: over
 *            n), plus tol.rel f32 ulps of the result (mean: its float
 *            division) and one rounding to the dtype (DT_ULP * |result|)
 *            for 16-bit dtypes;
 *   NaNs     random with NaNs: a NaN in a row makes sum, mean, max and min
 *            of that row NaN (their references say so).
 *
 * A reduction whose tol is all zero (max, min) is exact in every case.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

#ifndef T_REDUCE_BODY_ONCE
#define T_REDUCE_BODY_ONCE

#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const t_dname[D_COUNT] = {"eighths", "random", "random with NaNs"};

/* Tensors reduced in the matrix. */
static const struct t_rshape {
    int n;
    int64_t s[4];
} t_rshapes[] = {
    {1, {37}}, {1, {1}}, {2, {7, 9}}, {3, {4, 1, 6}}, {3, {3, 5, 4}}, {4, {2, 3, 4, 5}},
};
#define T_NRSHAPES ((int)(sizeof t_rshapes / sizeof t_rshapes[0]))

#endif /* T_REDUCE_BODY_ONCE */

/* ---- per dtype ------------------------------------------------------------------- */

#include "ops-table.h"

/* x rounded once to the dtype. */
static double DTFN(round)(double x) { return E_TO_DOUBLE(E_FROM_DOUBLE(x)); }

/* The [[reduction]] entry named name (for the tests of one op by name). */
static const DTFN(t_redop) *DTFN(redop_named)(const char *name)
{
    for (int op = 0; op < T_NREDUCTION; op++)
        if (strcmp(DTFN(t_reduction)()[op].name, name) == 0)
            return &DTFN(t_reduction)()[op];
    bail("the registry has no [[reduction]] %s", name);
    return NULL;
}

/* Reference reduction o of vals (shape nd/shape) along dim: the fold of
 * o's ref into acc[] (outer * inner elements, not finalized), with sum|x|
 * per output in absum[]. */
static void DTFN(reduce_ref)(const DTFN(t_redop) *o, int nd, const int64_t *shape, int dim, const double *vals,
                             double *acc, double *absum)
{
    int64_t outer = 1, inner = 1, len = shape[dim];

    for (int d = 0; d < dim; d++)
        outer *= shape[d];
    for (int d = dim + 1; d < nd; d++)
        inner *= shape[d];
    for (int64_t i = 0; i < outer * inner; i++) {
        int64_t out = i / inner, in = i % inner;
        double a = o->identity(), ab = 0;

        for (int64_t k = 0; k < len; k++) {
            double x = vals[(out * len + k) * inner + in];
            ab += fabs(x);
            a = o->ref(a, x);
        }
        acc[i] = a;
        absum[i] = ab;
    }
}

/* Whether o on data set ds is compared exactly, with its reference rounded
 * once to the dtype: an exact reduction always, a pairwise (summing) one
 * on eighths. */
static bool DTFN(exact)(const DTFN(t_redop) *o, int ds)
{
    return (o->tol.rel == 0 && o->tol.fold == 0) || (o->pairwise && ds == D_EIGHTHS);
}

/* a == b, or both NaN (a sum past f8e4m3's range is NaN: it has no infinity). */
static inline bool DTFN(same)(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Tolerance for one element of o over len elements whose reference fold
 * is acc and sum|x| is absum (see the top of this file): the summation
 * bound, carried through finalize, plus rel ulps of the result. */
static double DTFN(rtol)(const DTFN(t_redop) *o, int ds, int64_t len, double acc, double absum)
{
    double n = (double)len, want = o->finalize(acc, n), e, t;

    if (DTFN(exact)(o, ds))
        return 0;
    e = o->tol.fold * 0x1p-23 * (o->pairwise ? t_depth(len) : n) * absum;
    t = fmax(fabs(o->finalize(acc + e, n) - want), fabs(o->finalize(acc - e, n) - want));
    t += o->tol.rel * 0x1p-23 * fabs(want);
    if (DT_MANTISSA_BITS < 24)
        t += DT_ULP * fabs(want) + DTFN(tiny)(); /* a product may end below the normal range */
    return t;
}

/* Checks r = op(a, dim, keepdim) for a with values vals. */
static void DTFN(check_reduce)(t_check *c, const char *what, int op, int ds, const TT *r, int nd,
                               const int64_t *shape, int dim, bool keepdim, const double *vals)
{
    const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];
    int64_t oshape[TENDO_MAX_DIMS], m;
    int ond = 0;
    double *acc, *absum, *got;

    for (int d = 0; d < nd; d++)
        if (d != dim || keepdim)
            oshape[ond++] = d == dim ? 1 : shape[d];
    if (!DTFN(result_ok)(c, what, r, ond, oshape))
        return;
    m = t_numel(ond, oshape);
    acc = malloc((size_t)(m ? m : 1) * sizeof *acc);
    absum = malloc((size_t)(m ? m : 1) * sizeof *absum);
    if (!acc || !absum)
        bail("out of memory");
    DTFN(reduce_ref)(o, nd, shape, dim, vals, acc, absum);
    got = DTFN(values)(r);
    for (int64_t i = 0; i < m; i++) {
        double want = o->finalize(acc[i], (double)shape[dim]);
        t_elem(c, what, i, got[i], DTFN(exact)(o, ds) ? DTFN(round)(want) : want,
               DTFN(rtol)(o, ds, shape[dim], acc[i], absum[i]));
    }
    free(got);
    free(acc);
    free(absum);
}

/* op over every dim (as d and d - nd) with keepdim off and on, every data
 * set, one shape and layout. */
static void DTFN(test_reduce)(int op, int sh, int layout)
{
    const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];
    const struct t_rshape *s = &t_rshapes[sh];
    t_check c = {0};
    char s1[64];

    for (int ds = 0; ds < D_COUNT; ds++) {
        uint64_t rng = 0x2ed0ceu + (uint64_t)(op * 1000 + sh * 100 + layout * 10 + ds) * 104729u;
        TT *a = DTFN(make)(layout, s->n, s->s, &rng, ds, ds == D_EIGHTHS ? -2 : o->x[0], ds == D_EIGHTHS ? 2 : o->x[1]);
        double *vals = DTFN(values)(a);

        for (int d = -s->n; d < s->n; d++)
            for (int keep = 0; keep < 2; keep++) {
                char what[160];
                TT *r = o->op(a, d, keep);

                snprintf(what, sizeof what, "%s, dim %d, keepdim %s", t_dname[ds], d, keep ? "true" : "false");
                DTFN(check_reduce)(&c, what, op, ds, r, s->n, s->s, d < 0 ? d + s->n : d, keep, vals);
                tensor_free(r);
            }
        free(vals);
        tensor_free(a);
    }
    t_done(&c, "%s %s of %s %s over every dim, keepdim both ways", DT_NAME, o->name,
           t_shape_str(s1, sizeof s1, s->n, s->s), t_layout[layout]);
}

/* Rows longer than a 1024-float chunk (pairwise merging of chunks), outer
 * dims of many columns (the blocked column path, more than 2048 columns
 * at once) and long columns: contiguous and transposed. */
static void DTFN(test_reduce_long)(void)
{
    static const int64_t shapes[][2] = {{3, 3000}, {3000, 7}, {5, 2100}, {2100, 5}};

    for (int op = 0; op < T_NREDUCTION; op++) {
        const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];
        t_check c = {0};

        for (int sh = 0; sh < 4; sh++)
            for (int layout = 0; layout < L_COUNT; layout += (layout == L_CONTIG ? 1 : 3)) /* contiguous, transposed, flipped */
                for (int ds = 0; ds < D_COUNT; ds++) {
                    uint64_t rng = 0x10f6u + (uint64_t)(op * 1000 + sh * 100 + layout * 10 + ds);
                    TT *a = DTFN(make)(layout, 2, shapes[sh], &rng, ds, ds == D_EIGHTHS ? -2 : o->x[0],
                                       ds == D_EIGHTHS ? 2 : o->x[1]);
                    double *vals = DTFN(values)(a);

                    for (int d = 0; d < 2; d++) {
                        char what[160], s1[64];
                        TT *r = o->op(a, d, false);

                        snprintf(what, sizeof what, "%s %s %s, dim %d", t_shape_str(s1, sizeof s1, 2, shapes[sh]),
                                 t_layout[layout], t_dname[ds], d);
                        DTFN(check_reduce)(&c, what, op, ds, r, 2, shapes[sh], d, false, vals);
                        tensor_free(r);
                    }
                    free(vals);
                    tensor_free(a);
                }
        t_done(&c, "%s %s of [3,3000], [3000,7], [5,2100], [2100,5] along both dims", DT_NAME, o->name);
    }
}

/* sum_all: a 0-d tensor with the sum of everything, checked as the sum
 * entry of the registry over all elements. */
static void DTFN(test_sum_all)(void)
{
    const DTFN(t_redop) *sum = DTFN(redop_named)("sum");
    t_check c = {0};

    for (int sh = 0; sh < T_NRSHAPES; sh++)
        for (int layout = 0; layout < L_COUNT; layout++)
            for (int ds = 0; ds < D_COUNT; ds++) {
                const struct t_rshape *s = &t_rshapes[sh];
                uint64_t rng = 0x5a11u + (uint64_t)(sh * 100 + layout * 10 + ds);
                TT *a = DTFN(make)(layout, s->n, s->s, &rng, ds, ds == D_EIGHTHS ? -2 : -1, ds == D_EIGHTHS ? 2 : 1);
                double *vals = DTFN(values)(a), want = 0, absum = 0, *got;
                int64_t n = tensor_numel(a);
                TT *r = tensor_sum_all(a);
                char what[160], s1[64];

                for (int64_t i = 0; i < n; i++) {
                    want += vals[i];
                    absum += fabs(vals[i]);
                }
                snprintf(what, sizeof what, "%s %s %s", t_shape_str(s1, sizeof s1, s->n, s->s), t_layout[layout],
                         t_dname[ds]);
                if (!r || tensor_ndim(r) != 0) {
                    t_fail(&c, "%s: %s", what, r ? "result is not 0-d" : tendo_error_message(tendo_last_error()));
                } else {
                    got = DTFN(values)(r);
                    t_elem(&c, what, 0, got[0], DTFN(exact)(sum, ds) ? DTFN(round)(want) : want,
                           DTFN(rtol)(sum, ds, n, want, absum));
                    free(got);
                }
                tensor_free(r);
                free(vals);
                tensor_free(a);
            }
    t_done(&c, "%s sum_all over %d shapes x %d layouts x %d data sets", DT_NAME, T_NRSHAPES, L_COUNT, D_COUNT);
}

/* r has shape (nd, shape) and every element equals want (NaN matches NaN). */
static bool DTFN(is_all)(const TT *r, int nd, const int64_t *shape, double want)
{
    double *v;
    bool good;

    if (!r) {
        diag("failed: %s", tendo_error_message(tendo_last_error()));
        return false;
    }
    if (!t_same_shape(tensor_ndim(r), tensor_shape(r), nd, shape))
        return false;
    v = DTFN(values)(r);
    good = true;
    for (int64_t i = 0; i < tensor_numel(r); i++)
        good = good && (isnan(want) ? isnan(v[i]) : v[i] == want);
    free(v);
    return good;
}

/* Empty dims, 0-d tensors and dims out of range. */
static void DTFN(test_reduce_edges)(void)
{
    TT *e30 = TFN(zeros)(2, (const int64_t[]){3, 0}, tendo_cpu());
    TT *e03 = TFN(zeros)(2, (const int64_t[]){0, 3}, tendo_cpu());
    TT *a = TFN(full)(2, (const int64_t[]){3, 4}, 0.5, tendo_cpu());
    TT *s = TFN(full)(0, NULL, -2.5, tendo_cpu());
    TT *r;
    bool good;

    /* reducing an empty dim: an empty_ok reduction gives its reference's
     * empty fold (sum 0, mean 0/0 = NaN); the others (max, min) are refused */
    for (int op = 0; op < T_NREDUCTION; op++) {
        const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];

        if (o->empty_ok) {
            double want = DTFN(round)(o->finalize(o->identity(), 0));
            char ws[32];

            r = o->op(e30, 1, false);
            good = DTFN(is_all)(r, 1, (const int64_t[]){3}, want);
            tensor_free(r);
            r = o->op(e30, -1, true);
            good = DTFN(is_all)(r, 2, (const int64_t[]){3, 1}, want) && good;
            tensor_free(r);
            r = o->op(e03, 0, false);
            good = DTFN(is_all)(r, 1, (const int64_t[]){3}, want) && good;
            tensor_free(r);
            r = o->op(e03, 0, true);
            good = DTFN(is_all)(r, 2, (const int64_t[]){1, 3}, want) && good;
            tensor_free(r);
            if (isnan(want))
                snprintf(ws, sizeof ws, "NaN");
            else
                snprintf(ws, sizeof ws, "%g", want);
            ok(good, "%s %s over an empty dim is %s ([3,0] dim 1 and -1 keepdim, [0,3] dim 0 both ways)", DT_NAME,
               o->name, ws);
        } else {
            good = o->op(e30, 1, false) == NULL && t_failed_with(TENDO_ERR_SHAPE, o->name);
            good = o->op(e30, -1, true) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[3,0]") && good;
            good = o->op(e03, 0, false) == NULL && t_failed_with(TENDO_ERR_SHAPE, "[0,3]") && good;
            ok(good, "%s %s over an empty dim: TENDO_ERR_SHAPE naming the shape", DT_NAME, o->name);
        }
    }
    /* reducing a non-empty dim of an empty tensor gives an empty result */
    for (int op = 0; op < T_NREDUCTION; op++) {
        const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];

        r = o->op(e30, 0, false);
        good = r && t_same_shape(tensor_ndim(r), tensor_shape(r), 1, (const int64_t[]){0});
        tensor_free(r);
        r = o->op(e03, 1, true);
        good = good && r && t_same_shape(tensor_ndim(r), tensor_shape(r), 2, (const int64_t[]){0, 1});
        tensor_free(r);
        ok(good, "%s %s of [3,0] over dim 0 is [0], of [0,3] over dim 1 keepdim is [0,1]", DT_NAME, o->name);
    }
    r = tensor_sum_all(e30);
    ok(DTFN(is_all)(r, 0, NULL, 0), "%s sum_all of an empty tensor is a 0-d 0", DT_NAME);
    tensor_free(r);

    /* dim out of range */
    for (int op = 0; op < T_NREDUCTION; op++) {
        const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];

        good = o->op(a, 2, false) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "dim 2");
        good = o->op(a, -3, true) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "dim -3") && good;
        good = o->op(s, 1, false) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "dim 1") && good;
        good = o->op(NULL, 0, false) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, o->name) && good;
        ok(good, "%s %s: dim 2 and -3 of [3,4], dim 1 of a 0-d tensor, NULL: TENDO_ERR_INVALID_ARG", DT_NAME, o->name);
    }
    ok(TFN(sum_all)(NULL) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "sum_all"),
       "%s sum_all(NULL): TENDO_ERR_INVALID_ARG", DT_NAME);

    /* a 0-d tensor reduces over dim 0 or -1 as its one element (to itself,
     * for sum, mean, max and min) */
    for (int op = 0; op < T_NREDUCTION; op++) {
        const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];
        double want = DTFN(round)(o->finalize(o->ref(o->identity(), -2.5), 1));
        TT *r0 = o->op(s, 0, false), *r1 = o->op(s, -1, true);

        ok(DTFN(is_all)(r0, 0, NULL, want) && DTFN(is_all)(r1, 0, NULL, want), "%s %s of a 0-d tensor -2.5 is %g",
           DT_NAME, o->name, want);
        tensor_free(r0);
        tensor_free(r1);
    }
    r = tensor_sum_all(s);
    ok(DTFN(is_all)(r, 0, NULL, -2.5), "%s sum_all of a 0-d tensor is itself", DT_NAME);
    tensor_free(r);

    /* a row of constant values: mean exact, max = min */
    r = tensor_mean(a, 1, false);
    ok(DTFN(is_all)(r, 1, (const int64_t[]){3}, 0.5), "%s mean of a constant row is that constant", DT_NAME);
    tensor_free(r);
    tensor_free(e30);
    tensor_free(e03);
    tensor_free(a);
    tensor_free(s);
}

/* 2^24 ones sum to 16777216 exactly (float pairwise; also exact in bf16,
 * inf in f16); 2^24 + 4096 ones to 16781312 in float, which a sequential
 * float sum could not reach (it stops at 2^24), rounded once to the dtype. */
static void DTFN(test_reduce_big)(void)
{
    const int64_t n24 = (int64_t)1 << 24, n = n24 + 4096;
    TT *ones = TFN(ones)(1, &n, tendo_cpu());
    TT *v24 = ones ? tensor_narrow(ones, 0, 0, n24) : NULL;
    TT *r;
    double *got;
    const double want24 = DTFN(round)(16777216.0), want = DTFN(round)(16781312.0);

    if (!v24)
        bail("ones(2^24 + 4096) failed: %s", tendo_error_message(tendo_last_error()));
    r = tensor_sum_all(v24);
    got = r ? DTFN(values)(r) : NULL;
    ok(got && DTFN(same)(got[0], want24), "%s sum_all of 2^24 ones is %.0f (got %.9g)", DT_NAME, want24, got ? got[0] : NAN);
    free(got);
    tensor_free(r);
    r = tensor_sum(v24, 0, false);
    got = r ? DTFN(values)(r) : NULL;
    ok(got && tensor_ndim(r) == 0 && DTFN(same)(got[0], want24), "%s sum(dim 0) of 2^24 ones is %.0f (got %.9g)", DT_NAME,
       want24, got ? got[0] : NAN);
    free(got);
    tensor_free(r);
    r = tensor_mean(v24, -1, true);
    got = r ? DTFN(values)(r) : NULL;
    ok(got && tensor_ndim(r) == 1 && got[0] == 1, "%s mean of 2^24 ones is 1", DT_NAME);
    free(got);
    tensor_free(r);
    r = tensor_sum_all(ones);
    got = r ? DTFN(values)(r) : NULL;
    ok(got && DTFN(same)(got[0], want), "%s sum_all of 2^24 + 4096 ones is %.0f (got %.9g)", DT_NAME, want, got ? got[0] : NAN);
    free(got);
    tensor_free(r);
    r = tensor_sum(ones, 0, false);
    got = r ? DTFN(values)(r) : NULL;
    ok(got && DTFN(same)(got[0], want), "%s sum(dim 0) of 2^24 + 4096 ones is %.0f (got %.9g)", DT_NAME, want,
       got ? got[0] : NAN);
    free(got);
    tensor_free(r);
    tensor_free(v24);
    tensor_free(ones);
}

/* 16-bit dtypes accumulate in float: 4096 copies of 0.1 (rounded to the
 * dtype) sum close to the double sum; a 16-bit running sum would stall
 * near 32 (bf16) or 256 (f16).  Along a row, down columns, and sum_all. */
static void DTFN(test_accumulation)(void)
{
    TT *row = TFN(full)(1, (const int64_t[]){4096}, 0.1, tendo_cpu());
    TT *cols = TFN(full)(2, (const int64_t[]){4096, 3}, 0.1, tendo_cpu());
    const double x = DTFN(round)(0.1), want = 4096 * x;
    const double tol = DTFN(rtol)(DTFN(redop_named)("sum"), D_RANDOM, 4096, want, want);
    TT *r1 = tensor_sum(row, 0, false), *r2 = tensor_sum(cols, 0, false), *r3 = tensor_sum_all(cols);
    TT *r4 = tensor_mean(cols, 0, false);
    double *v1 = DTFN(values)(r1), *v2 = DTFN(values)(r2), *v3 = DTFN(values)(r3), *v4 = DTFN(values)(r4);

    ok(fabs(v1[0] - want) <= tol, "%s sum of 4096 x %.9g along a row: %.9g, double %.9g, tolerance %.3g", DT_NAME, x,
       v1[0], want, tol);
    ok(fabs(v2[0] - want) <= tol && fabs(v2[1] - want) <= tol && fabs(v2[2] - want) <= tol,
       "%s sum of 4096 x %.9g down columns: %.9g, double %.9g", DT_NAME, x, v2[0], want);
    ok(fabs(v3[0] - 3 * want) <= 3 * tol || (isnan(v3[0]) && isnan(DTFN(round)(3 * want))), "%s sum_all of 3 x 4096 x %.9g: %.9g, double %.9g", DT_NAME, x, v3[0],
       3 * want);
    ok(fabs(v4[0] - x) <= tol / 4096 + DT_ULP * x, "%s mean of 4096 x %.9g down columns: %.9g", DT_NAME, x, v4[0]);
    free(v1);
    free(v2);
    free(v3);
    free(v4);
    tensor_free(r1);
    tensor_free(r2);
    tensor_free(r3);
    tensor_free(r4);
    tensor_free(row);
    tensor_free(cols);
}

/* Results of 1, 2 and 3 threads are bitwise identical.  Reductions split
 * their rows (not the elements of a row) across threads once there are at
 * least 2^15 rows, so besides 300x500 (dims 0 and -1) the [40000,8] and
 * [8,40000] cases have that many rows; sum_all of 10^6 elements splits
 * its blocks. */
static void DTFN(test_reduce_threads)(void)
{
    static const struct {
        int64_t s[2];
        int dim;
    } cases[] = {{{300, 500}, 0}, {{300, 500}, -1}, {{40000, 8}, -1}, {{8, 40000}, 0}, {{40000, 8}, 0}};
    uint64_t rng = 0x7e57u;
    const int64_t mil = 1000000;
    const int ncases = (int)(sizeof cases / sizeof cases[0]);

    t_want_threads(DT_NAME);
    for (int k = 0; k < ncases; k++) {
        TT *a = DTFN(make)(L_CONTIG, 2, cases[k].s, &rng, D_RANDOM, -1, 1);
        TT *at = DTFN(make)(L_TRANS, 2, cases[k].s, &rng, D_RANDOM, -1, 1);
        char s1[64];

        for (int op = 0; op < T_NREDUCTION; op++)
            for (int tr = 0; tr < 2; tr++) {
                const DTFN(t_redop) *o = &DTFN(t_reduction)()[op];
                DTFN(tcheck) c = {0};

                for (int threads = 1; threads <= 3; threads++) {
                    tendo_set_num_threads(threads);
                    DTFN(tcheck_add)(&c, o->op(tr ? at : a, cases[k].dim, false), o->name);
                }
                ok(DTFN(tcheck_done)(&c), "%s %s of %s%s over dim %d: 1, 2 and 3 threads bitwise identical", DT_NAME,
                   o->name, t_shape_str(s1, sizeof s1, 2, cases[k].s), tr ? " (transposed)" : "", cases[k].dim);
            }
        tensor_free(a);
        tensor_free(at);
    }
    {
        TT *a = DTFN(make)(L_CONTIG, 1, &mil, &rng, D_RANDOM, -1, 1);
        TT *af = DTFN(make)(L_FLIP, 2, (const int64_t[]){1000, 1000}, &rng, D_RANDOM, -1, 1);

        for (int which = 0; which < 2; which++) {
            DTFN(tcheck) c = {0};

            for (int threads = 1; threads <= 3; threads++) {
                tendo_set_num_threads(threads);
                DTFN(tcheck_add)(&c, tensor_sum_all(which ? af : a), "sum_all");
            }
            ok(DTFN(tcheck_done)(&c), "%s sum_all of 10^6 elements%s: 1, 2 and 3 threads bitwise identical", DT_NAME,
               which ? " (flipped 1000x1000)" : "");
        }
        tensor_free(a);
        tensor_free(af);
    }
    tendo_set_num_threads(0); /* back to the default */
}

static void DTFN(test_reductions)(void)
{
    for (int op = 0; op < T_NREDUCTION; op++)
        for (int sh = 0; sh < T_NRSHAPES; sh++)
            for (int layout = 0; layout < L_COUNT; layout++)
                if (t_rshapes[sh].n >= 2 || layout != L_TRANS) /* a 1-D transpose is the tensor itself */
                    DTFN(test_reduce)(op, sh, layout);
    DTFN(test_reduce_long)();
    DTFN(test_sum_all)();
    DTFN(test_reduce_edges)();
    DTFN(test_reduce_big)();
    DTFN(test_accumulation)();
    DTFN(test_reduce_threads)();
}
