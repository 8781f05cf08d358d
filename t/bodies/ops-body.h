/* t/bodies/ops-body.h - elementwise ops against double references, per dtype.
 *
 * Every [[binary]] op of the registry (op, op_out, op_scalar), every
 * [[unary]] op (op, op_out) and clamp, on contiguous, transposed,
 * sliced-with-step, expanded (stride 0) and flipped (negative stride)
 * inputs, over several broadcast patterns.  The ops, their references and
 * their parameters come from t/ops-table.h, which gen/tendo-gen writes from
 * the registry: this file keeps no list of ops, so a new entry is tested
 * with no change here.  The reference (the entry's `ref`) is computed in
 * double from the inputs' exact values (read back through copy_to), and
 * each element must be within a tolerance:
 *
 *   tol = (rel * |want| + abs + abs_x * max|x|) * 2^-23          (the f32 part)
 *       + DT_ULP * |want|                                        (16-bit dtypes)
 *       + the dtype's smallest subnormal + rel * 2^-149           (subnormal results)
 *
 * where rel, abs and abs_x are the entry's tol (f32 ulps; max|x| is the
 * largest finite |operand|): exact ops (neg, abs, relu, maximum, minimum,
 * clamp) must be exact; correctly rounded f32 ops (add, sub, mul, div,
 * sqrt) get 1 ulp; transcendental ones a few ulp.  Unary inputs are dense
 * for the vector (src/cpu/vmath.h) paths and strided for the scalar
 * expressions of the registry; both must meet it.  A 16-bit result is
 * computed in float and rounded once, so it may be off by at most half an
 * ulp of the dtype plus the f32 error: DT_ULP = 2^(1-p) relative covers
 * both with room to spare.  NaN passes only where the reference is NaN,
 * infinities only when equal.  Outputs of _out calls are NaN-filled first,
 * so an element left unwritten fails.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

#ifndef T_OPS_BODY_ONCE
#define T_OPS_BODY_ONCE

#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define T_U23 0x1p-23 /* one f32 ulp, relative */

/* |x| where finite, else 0: the scale of a tolerance's abs_x term. */
static double t_finite_abs(double x) { return isfinite(x) ? fabs(x) : 0; }

/* Shapes of the broadcast patterns: a's, then b's. */
static const struct t_pattern {
    int na;
    int64_t a[3];
    int nb;
    int64_t b[3];
} t_patterns[] = {
    {2, {7, 5}, 2, {7, 5}},       /* same shape */
    {2, {7, 5}, 1, {5}},          /* a row */
    {2, {7, 1}, 2, {1, 5}},       /* outer product */
    {2, {7, 5}, 0, {0}},          /* a 0-d tensor */
    {3, {3, 7, 5}, 2, {7, 5}},    /* 3-D with 2-D */
    {1, {5}, 3, {3, 7, 5}},       /* the broadcast one first */
    {2, {40, 30}, 2, {40, 30}},   /* several 256-element chunks */
    {2, {40, 30}, 1, {30}},
};
#define T_NPATTERNS ((int)(sizeof t_patterns / sizeof t_patterns[0]))

/* Shapes for unary ops, _scalar and clamp. */
static const struct t_ushape {
    int n;
    int64_t s[3];
} t_ushapes[] = {
    {0, {0}}, {1, {1}}, {1, {35}}, {2, {7, 5}}, {2, {40, 30}}, {3, {3, 4, 5}}, {2, {0, 5}},
};
#define T_NUSHAPES ((int)(sizeof t_ushapes / sizeof t_ushapes[0]))

#endif /* T_OPS_BODY_ONCE */

/* ---- per dtype ------------------------------------------------------------------- */

#include "ops-table.h"

/* The [[binary]] entry named name (for the tests of one op's semantics). */
static const DTFN(t_binop) *DTFN(binop_named)(const char *name)
{
    for (int op = 0; op < T_NBINARY; op++)
        if (strcmp(DTFN(t_binary)()[op].name, name) == 0)
            return &DTFN(t_binary)()[op];
    bail("the registry has no [[binary]] %s", name);
    return NULL;
}

/* Tolerance for one element (see the top of this file) of an op with
 * tolerance t, whose largest finite |operand| is x; results in the
 * subnormal range are allowed rel f32 subnormal steps (2^-149) and one
 * step of the dtype. */
static double DTFN(tol)(const struct t_tol *t, double x, double want)
{
    double tol;

    if (t->rel == 0 && t->abs == 0 && t->abs_x == 0)
        return 0; /* exact ops stay exact in every dtype */
    tol = (t->rel * fabs(want) + t->abs + t->abs_x * x) * T_U23 + t->rel * 0x1p-149 + DTFN(tiny)();
    if (DT_MANTISSA_BITS < 24)
        tol += DT_ULP * fabs(want);
    return tol;
}

/* Whether the dtype has infinities (f8e4m3 has none). */
static bool DTFN(has_inf)(void) { return isinf(E_TO_DOUBLE(E_FROM_DOUBLE(INFINITY))); }

/* want rounded to the dtype when that overflows (exp(20) in f16 is inf,
 * in f8e4m3 NaN). */
static double DTFN(fit)(double want)
{
    double r = E_TO_DOUBLE(E_FROM_DOUBLE(want));
    /* (f8e4m3 has no infinity: it overflows to NaN) */
    return (isinf(r) && !isinf(want)) || (isnan(r) && !isnan(want)) ? r : want;
}

static double DTFN(rand_val)(uint64_t *rng, double lo, double hi, double minabs)
{
    double v = t_rand_range(rng, lo, hi);
    if (fabs(v) < minabs)
        v = v < 0 ? v - minabs : v + minabs;
    return v;
}

/* A view of the given layout and shape.  Its base holds random values in
 * [lo, hi) (|v| >= minabs; every nan_every-th one NaN when nan_every > 0),
 * or NaN everywhere when poison is set (for outputs). */
static TT *DTFN(make_operand)(int layout, int nd, const int64_t *shape, uint64_t *rng, double lo, double hi, double minabs,
                      int nan_every, bool poison)
{
    DTFN(lbase) b;
    E *raw = DTFN(layout_begin)(&b, layout, nd, shape);

    for (int64_t i = 0; i < b.n; i++)
        raw[i] = E_FROM_DOUBLE(poison || (nan_every > 0 && i % nan_every == nan_every / 2)
                                   ? NAN
                                   : DTFN(rand_val)(rng, lo, hi, minabs));
    return DTFN(layout_end)(&b, tendo_cpu());
}

/* An output layout for _out calls: contiguous, transposed, sliced or
 * flipped (an expanded out is refused; see test_out_errors). */
static int DTFN(out_layout)(int k)
{
    static const int l[4] = {L_CONTIG, L_TRANS, L_SLICED, L_FLIP};
    return l[k % 4];
}

/* Checks result r (shape nd/shape) of binary op on a (values av) and b
 * (values bv) against the double reference. */
static void DTFN(check_binary)(t_check *c, const char *what, int op, const TT *r, int na, const int64_t *sa,
                               const double *av, int nb, const int64_t *sb, const double *bv, int no,
                               const int64_t *so)
{
    const DTFN(t_binop) *o = &DTFN(t_binary)()[op];
    double *rv;

    if (!DTFN(result_ok)(c, what, r, no, so))
        return;
    rv = DTFN(values)(r);
    for (int64_t i = 0; i < t_numel(no, so); i++) {
        double x = av[t_bcast(no, so, na, sa, i)], y = bv[t_bcast(no, so, nb, sb, i)];
        double want = DTFN(fit)(o->ref(x, y));
        double sc = fmax(t_finite_abs(x), t_finite_abs(y));
        t_elem(c, what, i, rv[i], want, DTFN(tol)(&o->tol, sc, want));
    }
    free(rv);
}

/* op(a, b) and op_out(out, a, b) over every broadcast pattern and every
 * pair of input layouts; a few NaNs in the inputs must propagate. */
static void DTFN(test_binary)(int op)
{
    const DTFN(t_binop) *o = &DTFN(t_binary)()[op];

    for (int form = 0; form < 2; form++) {
        t_check c = {0};
        for (int p = 0; p < T_NPATTERNS; p++) {
            const struct t_pattern *pt = &t_patterns[p];
            int no = 0;
            int64_t so[TENDO_MAX_DIMS];

            if (!t_bshape(pt->na, pt->a, pt->nb, pt->b, &no, so))
                bail("bad pattern %d", p);
            for (int la = 0; la < L_COUNT; la++)
                for (int lb = 0; lb < L_COUNT; lb++) {
                    uint64_t rng = 0x5eed0000u + (uint64_t)(op * 1000 + p * 100 + la * 10 + lb) * 7919u;
                    TT *a = DTFN(make_operand)(la, pt->na, pt->a, &rng, o->a[0], o->a[1], 0, 23, false);
                    TT *b = DTFN(make_operand)(lb, pt->nb, pt->b, &rng, o->b[0], o->b[1], o->bmin, 29, false);
                    double *av = DTFN(values)(a), *bv = DTFN(values)(b);
                    char what[160], s1[64], s2[64];
                    TT *r = NULL;
                    tendo_status st = TENDO_OK;

                    snprintf(what, sizeof what, "%s a %s %s, b %s %s", form ? "out" : "new",
                             t_shape_str(s1, sizeof s1, pt->na, pt->a), t_layout[la],
                             t_shape_str(s2, sizeof s2, pt->nb, pt->b), t_layout[lb]);
                    if (form == 0) {
                        r = o->op(a, b);
                    } else {
                        r = DTFN(make_operand)(DTFN(out_layout)(la + lb), no, so, &rng, 0, 0, 0, 0, true);
                        st = o->out(r, a, b);
                    }
                    if (!r || st != TENDO_OK)
                        t_fail(&c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
                    else
                        DTFN(check_binary)(&c, what, op, r, pt->na, pt->a, av, pt->nb, pt->b, bv, no, so);
                    tensor_free(r);
                    tensor_free(a);
                    tensor_free(b);
                    free(av);
                    free(bv);
                }
        }
        t_done(&c, "%s %s%s: %d broadcast patterns x %d x %d layouts", DT_NAME, o->name, form ? "_out" : "",
               T_NPATTERNS, L_COUNT, L_COUNT);
    }
}

/* op_scalar(a, s): s is converted to the compute type (float, or double
 * for f64), not to the dtype, so the reference uses DT_COMPUTE(s). */
static void DTFN(test_binary_scalar)(int op)
{
    const DTFN(t_binop) *o = &DTFN(t_binary)()[op];
    t_check c = {0};

    for (int sh = 0; sh < T_NUSHAPES; sh++)
        for (int l = 0; l < L_COUNT; l++)
            for (int k = 0; k < o->nscalars; k++) {
                const struct t_ushape *u = &t_ushapes[sh];
                uint64_t rng = 0xabcdefu + (uint64_t)(op * 1000 + sh * 100 + l * 10 + k);
                TT *a = DTFN(make_operand)(l, u->n, u->s, &rng, o->scalar_a[0], o->scalar_a[1], 0, 31, false);
                double s = DT_COMPUTE(o->scalars[k]), *av = DTFN(values)(a);
                TT *r = o->scalar(a, o->scalars[k]);
                char what[160], s1[64];

                snprintf(what, sizeof what, "a %s %s, s %g", t_shape_str(s1, sizeof s1, u->n, u->s), t_layout[l],
                         o->scalars[k]);
                if (!r)
                    t_fail(&c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
                else
                    DTFN(check_binary)(&c, what, op, r, u->n, u->s, av, 0, NULL, &s, u->n, u->s);
                tensor_free(r);
                tensor_free(a);
                free(av);
            }
    t_done(&c, "%s %s_scalar: %d shapes x %d layouts x %d scalars", DT_NAME, o->name, T_NUSHAPES, L_COUNT,
           o->nscalars);
}

/* op_out with out == a and with out == b (the same view: in place). */
static void DTFN(test_binary_inplace)(int op)
{
    const DTFN(t_binop) *o = &DTFN(t_binary)()[op];
    t_check c = {0};

    for (int p = 0; p < T_NPATTERNS; p++) {
        const struct t_pattern *pt = &t_patterns[p];
        int no = 0;
        int64_t so[TENDO_MAX_DIMS];

        t_bshape(pt->na, pt->a, pt->nb, pt->b, &no, so);
        for (int l = 0; l < L_COUNT; l++)
            for (int which = 0; which < 3; which++) {
                /* the written operand must have the result's shape and must
                 * not be expanded (an out with repeated elements is refused);
                 * which == 2: out, a and b all the same tensor */
                bool into_a = which != 1;
                uint64_t rng = 0x1f2e3d + (uint64_t)(op * 1000 + p * 100 + l * 10 + which);
                TT *a, *b;
                double *av, *bv;
                char what[160], s1[64], s2[64];
                tendo_status st;

                if (l == L_EXPAND || !t_same_shape(into_a ? pt->na : pt->nb, into_a ? pt->a : pt->b, no, so) ||
                    (which == 2 && !t_same_shape(pt->na, pt->a, pt->nb, pt->b)))
                    continue;
                /* the written operand in layout l, the other one in another */
                a = DTFN(make_operand)(into_a ? l : (l + 2) % L_COUNT, pt->na, pt->a, &rng, o->a[0], o->a[1], 0, 0, false);
                b = DTFN(make_operand)(into_a ? (l + 2) % L_COUNT : l, pt->nb, pt->b, &rng, o->b[0], o->b[1], o->bmin, 0,
                                       false);
                if (which == 2) { /* op(a, a) into a; the pow base in the exponent's range too */
                    tensor_free(b);
                    b = a;
                }
                av = DTFN(values)(a);
                bv = DTFN(values)(b);
                snprintf(what, sizeof what, "out = %s, a %s, b %s, %s", which == 2 ? "a = b" : into_a ? "a" : "b",
                         t_shape_str(s1, sizeof s1, pt->na, pt->a), t_shape_str(s2, sizeof s2, pt->nb, pt->b),
                         t_layout[l]);
                st = o->out(into_a ? a : b, a, b);
                if (st != TENDO_OK)
                    t_fail(&c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
                else
                    DTFN(check_binary)(&c, what, op, into_a ? a : b, pt->na, pt->a, av, pt->nb, pt->b, bv, no, so);
                if (b != a)
                    tensor_free(b);
                tensor_free(a);
                free(av);
                free(bv);
            }
    }
    t_done(&c, "%s %s_out in place (out is a, out is b, out is a is b)", DT_NAME, o->name);
}

static void DTFN(check_unary)(t_check *c, const char *what, int op, const TT *r, int n, const int64_t *s,
                              const double *av)
{
    const DTFN(t_unop) *o = &DTFN(t_unary)()[op];
    double *rv;

    if (!DTFN(result_ok)(c, what, r, n, s))
        return;
    rv = DTFN(values)(r);
    for (int64_t i = 0; i < t_numel(n, s); i++) {
        double want = DTFN(fit)(o->ref(av[i]));
        t_elem(c, what, i, rv[i], want, DTFN(tol)(&o->tol, t_finite_abs(av[i]), want));
    }
    free(rv);
}

/* op(a), op_out(out, a) and op_out(a, a) over shapes and layouts. */
static void DTFN(test_unary)(int op)
{
    const DTFN(t_unop) *o = &DTFN(t_unary)()[op];

    for (int form = 0; form < 3; form++) {
        t_check c = {0};
        for (int sh = 0; sh < T_NUSHAPES; sh++)
            for (int l = 0; l < L_COUNT; l++) {
                const struct t_ushape *u = &t_ushapes[sh];
                uint64_t rng = 0x77aa55u + (uint64_t)(op * 1000 + sh * 100 + l * 10 + form);
                TT *a, *r = NULL;
                double *av;
                char what[160], s1[64];
                tendo_status st = TENDO_OK;

                if (form == 2 && l == L_EXPAND)
                    continue;
                a = DTFN(make_operand)(l, u->n, u->s, &rng, o->a[0], o->a[1], 0, 19, false);
                av = DTFN(values)(a);
                snprintf(what, sizeof what, "%s a %s %s", form == 0 ? "new" : form == 1 ? "out" : "in place",
                         t_shape_str(s1, sizeof s1, u->n, u->s), t_layout[l]);
                if (form == 0) {
                    r = o->op(a);
                } else if (form == 1) {
                    r = DTFN(make_operand)(DTFN(out_layout)(l + sh), u->n, u->s, &rng, 0, 0, 0, 0, true);
                    st = o->out(r, a);
                } else {
                    st = o->out(a, a);
                }
                if ((form != 2 && !r) || st != TENDO_OK)
                    t_fail(&c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
                else
                    DTFN(check_unary)(&c, what, op, form == 2 ? a : r, u->n, u->s, av);
                tensor_free(r);
                tensor_free(a);
                free(av);
            }
        t_done(&c, "%s %s%s: %d shapes x %d layouts", DT_NAME, o->name,
               form == 0 ? "" : form == 1 ? "_out" : "_out in place", T_NUSHAPES, L_COUNT);
    }
}

/* Special inputs (zeros, infinities, NaN, large magnitudes), dense (the
 * vector routines) and flipped (the scalar expressions): one function
 * whatever the layout, so both must match the reference. */
static void DTFN(test_unary_special)(int op)
{
    static const double sp[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 20.0, -20.0, 10.0, -10.0, INFINITY, -INFINITY,
                                NAN, 3.0, -3.0, 0.125, 100.0, -100.0};
    const int n = (int)(sizeof sp / sizeof sp[0]);
    const DTFN(t_unop) *o = &DTFN(t_unary)()[op];
    t_check c = {0};
    E raw[sizeof sp / sizeof sp[0]];
    int m = 0;

    for (int i = 0; i < n; i++)
        raw[m++] = E_FROM_DOUBLE(sp[i]);
    /* dense in and out; flipped in; flipped in and out (16-bit dtypes take
     * the scalar expression only for a strided out) */
    for (int pass = 0; pass < 3; pass++) {
        static const char *what[3] = {"dense", "flipped", "flipped, into a flipped out"};
        TT *a = TFN(from_data)(raw, 1, (const int64_t[]){m}, tendo_cpu());
        TT *v = pass ? tensor_flip(a, 0) : tensor_clone(a);
        TT *r = NULL;
        double *av = DTFN(values)(v);
        bool good;

        if (pass < 2) {
            good = (r = o->op(v)) != NULL;
        } else {
            TT *out = TFN(full)(1, (const int64_t[]){m}, NAN, tendo_cpu());
            r = tensor_flip(out, 0);
            tensor_free(out);
            good = o->out(r, v) == TENDO_OK;
        }
        if (!good)
            t_fail(&c, "%s: failed: %s", what[pass], tendo_error_message(tendo_last_error()));
        else
            DTFN(check_unary)(&c, what[pass], op, r, 1, (const int64_t[]){m}, av);
        free(av);
        tensor_free(r);
        tensor_free(v);
        tensor_free(a);
    }
    t_done(&c, "%s %s of 0, -0, +-1, +-20, +-inf, NaN, +-100...", DT_NAME, o->name);
}

/* The semantics the issue names, on exact values. */
static void DTFN(test_semantics)(void)
{
    const double pa[] = {-2, -2, -2, 2, 0, -0.5, 4, -8, 1, 2};
    const double pb[] = {0.5, 3, 2, -1, 0, 2, 0.5, 1.0 / 3.0, NAN, -2};
    const double pw[] = {NAN, -8, 4, 0.5, 1, 0.25, 2, NAN, 1, 0.25};
    const double ma[] = {NAN, 1, NAN, -INFINITY, INFINITY, 3, -2};
    const double mb[] = {1, NAN, NAN, 0, 5, -INFINITY, -2};
    E ra[16], rb[16];
    const DTFN(t_binop) *pow_op = DTFN(binop_named)("pow");
    t_check c = {0}, cm = {0};
    TT *a, *b, *r;
    double *v;

    /* pow: negative base with a non-integer exponent is NaN, with an
     * integer one the signed power; pow(1, NaN) = 1 like C and PyTorch */
    for (int i = 0; i < 10; i++) {
        ra[i] = E_FROM_DOUBLE(pa[i]);
        rb[i] = E_FROM_DOUBLE(pb[i]);
    }
    a = TFN(from_data)(ra, 1, (const int64_t[]){10}, tendo_cpu());
    b = TFN(from_data)(rb, 1, (const int64_t[]){10}, tendo_cpu());
    r = tensor_pow(a, b);
    v = r ? DTFN(values)(r) : NULL;
    for (int i = 0; v && i < 10; i++) {
        /* -8^(1/3) in the dtype: 1/3 rounded, still not an integer: NaN */
        t_elem(&c, "pow", i, v[i], pw[i], DTFN(tol)(&pow_op->tol, 0, pw[i]));
    }
    if (!v)
        t_fail(&c, "pow failed: %s", tendo_error_message(tendo_last_error()));
    free(v);
    tensor_free(r);
    r = tensor_pow_scalar(a, 3);
    v = r ? DTFN(values)(r) : NULL;
    for (int i = 0; v && i < 10; i++)
        t_elem(&c, "pow_scalar 3", i, v[i], DTFN(fit)(pa[i] * pa[i] * pa[i]),
               DTFN(tol)(&pow_op->tol, 0, pa[i] * pa[i] * pa[i]));
    free(v);
    tensor_free(r);
    r = tensor_pow_scalar(a, 0.5);
    v = r ? DTFN(values)(r) : NULL;
    for (int i = 0; v && i < 10; i++)
        t_elem(&c, "pow_scalar 0.5", i, v[i], sqrt(pa[i]), DTFN(tol)(&pow_op->tol, 0, sqrt(pa[i])));
    free(v);
    tensor_free(r);
    tensor_free(a);
    tensor_free(b);
    t_done(&c, "%s pow(-2, 0.5) is NaN, pow(-2, 3) = -8, pow(x, 0) = 1", DT_NAME);

    /* maximum/minimum: a NaN on either side wins; infinities order */
    for (int i = 0; i < 7; i++) {
        ra[i] = E_FROM_DOUBLE(ma[i]);
        rb[i] = E_FROM_DOUBLE(mb[i]);
    }
    a = TFN(from_data)(ra, 1, (const int64_t[]){7}, tendo_cpu());
    b = TFN(from_data)(rb, 1, (const int64_t[]){7}, tendo_cpu());
    for (int k = 0; k < 2; k++)
        for (int swap = 0; swap < 2; swap++) {
            const DTFN(t_binop) *o = DTFN(binop_named)(k ? "minimum" : "maximum");

            r = o->op(swap ? b : a, swap ? a : b);
            v = r ? DTFN(values)(r) : NULL;
            for (int i = 0; v && i < 7; i++)
                t_elem(&cm, o->name, i, v[i], o->ref(E_TO_DOUBLE(ra[i]), E_TO_DOUBLE(rb[i])), 0);
            if (!v)
                t_fail(&cm, "%s failed", o->name);
            free(v);
            tensor_free(r);
        }
    /* and through the _scalar form with a NaN scalar */
    r = tensor_maximum_scalar(a, NAN);
    v = r ? DTFN(values)(r) : NULL;
    for (int i = 0; v && i < 7; i++)
        t_elem(&cm, "maximum_scalar NaN", i, v[i], NAN, 0);
    free(v);
    tensor_free(r);
    t_done(&cm, "%s maximum/minimum propagate NaN from either side", DT_NAME);

    /* relu keeps NaN, clamp keeps NaN */
    r = tensor_relu(a);
    v = r ? DTFN(values)(r) : NULL;
    /* (f8e4m3 has no infinities: they were stored as NaN) */
    ok(v && isnan(v[0]) && (!DTFN(has_inf)() || (v[3] == 0 && v[4] == INFINITY && v[6] == 0)),
       "%s relu(NaN) = NaN, relu(-inf) = 0", DT_NAME);
    free(v);
    tensor_free(r);
    r = tensor_clamp(a, -1, 1);
    v = r ? DTFN(values)(r) : NULL;
    ok(v && isnan(v[0]) && v[1] == 1 && (!DTFN(has_inf)() || (v[3] == -1 && v[4] == 1 && v[6] == -1)),
       "%s clamp(NaN) = NaN, clamps +-inf", DT_NAME);
    free(v);
    tensor_free(r);
    tensor_free(a);
    tensor_free(b);
}

/* clamp and clamp_out: bounds converted to float, then rounded with the
 * result; lo == hi allowed; lo > hi refused. */
static void DTFN(test_clamp)(void)
{
    static const double bounds[][2] = {{-1, 2}, {-0.3, 0.7}, {0.5, 0.5}, {-INFINITY, 0}, {0, INFINITY}, {-10, 10}};
    const int nb = (int)(sizeof bounds / sizeof bounds[0]);

    for (int form = 0; form < 3; form++) {
        t_check c = {0};
        for (int sh = 0; sh < T_NUSHAPES; sh++)
            for (int l = 0; l < L_COUNT; l++)
                for (int k = 0; k < nb; k++) {
                    const struct t_ushape *u = &t_ushapes[sh];
                    uint64_t rng = 0xc1a3u + (uint64_t)(sh * 1000 + l * 100 + k * 10 + form);
                    TT *a, *r = NULL;
                    double *av, *rv, lo = DT_COMPUTE(bounds[k][0]), hi = DT_COMPUTE(bounds[k][1]);
                    char what[160], s1[64];
                    tendo_status st = TENDO_OK;

                    if (form == 2 && l == L_EXPAND)
                        continue;
                    a = DTFN(make_operand)(l, u->n, u->s, &rng, -3, 3, 0, 13, false);
                    av = DTFN(values)(a);
                    snprintf(what, sizeof what, "%s a %s %s, [%g, %g]", form == 0 ? "new" : form == 1 ? "out" : "in place",
                             t_shape_str(s1, sizeof s1, u->n, u->s), t_layout[l], bounds[k][0], bounds[k][1]);
                    if (form == 0) {
                        r = tensor_clamp(a, bounds[k][0], bounds[k][1]);
                    } else if (form == 1) {
                        r = DTFN(make_operand)(DTFN(out_layout)(l + k), u->n, u->s, &rng, 0, 0, 0, 0, true);
                        st = tensor_clamp_out(r, a, bounds[k][0], bounds[k][1]);
                    } else {
                        st = tensor_clamp_out(a, a, bounds[k][0], bounds[k][1]);
                    }
                    if ((form != 2 && !r) || st != TENDO_OK) {
                        t_fail(&c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
                    } else if (!t_same_shape(tensor_ndim(form == 2 ? a : r), tensor_shape(form == 2 ? a : r), u->n, u->s)) {
                        t_fail(&c, "%s: wrong result shape", what);
                    } else {
                        rv = DTFN(values)(form == 2 ? a : r);
                        for (int64_t i = 0; i < t_numel(u->n, u->s); i++) {
                            double x = av[i];
                            /* the bound rounds to the dtype once, like any result */
                            double want = isnan(x) ? x : x < lo ? E_TO_DOUBLE(E_FROM_DOUBLE(lo))
                                                   : x > hi ? E_TO_DOUBLE(E_FROM_DOUBLE(hi)) : x;
                            t_elem(&c, what, i, rv[i], want, 0);
                        }
                        free(rv);
                    }
                    tensor_free(r);
                    tensor_free(a);
                    free(av);
                }
        t_done(&c, "%s clamp%s: %d shapes x %d layouts x %d bounds", DT_NAME,
               form == 0 ? "" : form == 1 ? "_out" : "_out in place", T_NUSHAPES, L_COUNT, nb);
    }
}

/* Every element of t is NaN (the poison is still there). */
static bool DTFN(all_nan)(const TT *t)
{
    double *v = DTFN(values)(t);
    bool all = true;
    for (int64_t i = 0; i < tensor_numel(t); i++)
        all = all && isnan(v[i]);
    free(v);
    return all;
}

/* The bytes of t are those in snap. */
static bool DTFN(unchanged)(const TT *t, const E *snap)
{
    E *now = DTFN(raw)(t);
    bool same = memcmp(now, snap, (size_t)tensor_numel(t) * sizeof *now) == 0;
    free(now);
    return same;
}

/* Broadcast failures, outs of the wrong shape, outs that partly overlap an
 * input or repeat elements: refused with the right status, nothing
 * written. */
static void DTFN(test_out_errors)(void)
{
    uint64_t rng = 0xe770u;
    TT *a34 = DTFN(make_operand)(L_CONTIG, 2, (const int64_t[]){3, 4}, &rng, -2, 2, 0, 0, false);
    TT *b24 = DTFN(make_operand)(L_CONTIG, 2, (const int64_t[]){2, 4}, &rng, -2, 2, 0, 0, false);
    TT *b34 = DTFN(make_operand)(L_TRANS, 2, (const int64_t[]){3, 4}, &rng, 0.5, 2, 0, 0, false);
    TT *sq = DTFN(make_operand)(L_CONTIG, 2, (const int64_t[]){4, 4}, &rng, 0.5, 2, 0, 0, false);
    TT *sqt = tensor_transpose(sq, 0, 1);
    TT *base = DTFN(make_operand)(L_CONTIG, 1, (const int64_t[]){11}, &rng, 0.5, 2, 0, 0, false);
    TT *lo = tensor_narrow(base, 0, 0, 10), *hi = tensor_narrow(base, 0, 1, 10);
    TT *b10 = DTFN(make_operand)(L_CONTIG, 1, (const int64_t[]){10}, &rng, 0.5, 2, 0, 0, false);
    TT *one4 = DTFN(make_operand)(L_CONTIG, 2, (const int64_t[]){1, 4}, &rng, 0, 0, 0, 0, true);
    TT *exp34 = tensor_expand(one4, 2, (const int64_t[]){3, 4});
    E *snap = DTFN(raw)(base), *snapsq = DTFN(raw)(sq);
    char want[96];

    for (int op = 0; op < T_NBINARY; op++) {
        const DTFN(t_binop) *o = &DTFN(t_binary)()[op];
        const char *name = o->name;
        bool good;
        TT *out43 = TFN(full)(2, (const int64_t[]){4, 3}, NAN, tendo_cpu());
        TT *out4 = TFN(full)(1, (const int64_t[]){4}, NAN, tendo_cpu());
        TT *out34 = TFN(full)(2, (const int64_t[]){3, 4}, NAN, tendo_cpu());

        /* the message the issue quotes, for every op */
        snprintf(want, sizeof want, "%s: shapes [3,4] and [2,4] cannot broadcast", name);
        good = o->op(a34, b24) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_SHAPE &&
               strcmp(tendo_error_message(tendo_last_error()), want) == 0;
        if (!good)
            diag("status %s, message \"%s\"; wanted \"%s\"", tendo_status_str(tendo_error_status(tendo_last_error())),
                 tendo_error_message(tendo_last_error()), want);
        ok(good, "%s %s([3,4], [2,4]) fails with TENDO_ERR_SHAPE: \"%s\"", DT_NAME, name, want);
        tendo_clear_error();
        ok(o->out(out34, a34, b24) == TENDO_ERR_SHAPE &&
               t_failed_with(TENDO_ERR_SHAPE, "shapes [3,4] and [2,4] cannot broadcast") && DTFN(all_nan)(out34),
           "%s %s_out(out, [3,4], [2,4]) fails with TENDO_ERR_SHAPE, out untouched", DT_NAME, name);

        /* out of the wrong shape: transposed, or only broadcastable */
        good = o->out(out43, a34, b34) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "[4,3]");
        good = o->out(out4, a34, b34) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "[4]") && good;
        ok(good && DTFN(all_nan)(out43) && DTFN(all_nan)(out4),
           "%s %s_out into [4,3] and [4] for a [3,4] result: TENDO_ERR_SHAPE, out untouched", DT_NAME, name);

        /* partial overlap: out shifted by one element over a (or b); out the
         * transpose of an input (same elements, other order); an expanded
         * out */
        good = o->out(hi, lo, b10) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap");
        good = o->out(hi, b10, lo) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = o->out(lo, hi, hi) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = o->out(sqt, sq, sq) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        ok(good && DTFN(unchanged)(base, snap) && DTFN(unchanged)(sq, snapsq),
           "%s %s_out into a shifted or transposed view of an input: TENDO_ERR_INVALID_ARG, nothing written", DT_NAME,
           name);
        ok(o->out(exp34, a34, b34) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "overlapping") && DTFN(all_nan)(one4),
           "%s %s_out into an expanded (stride 0) out: TENDO_ERR_INVALID_ARG", DT_NAME, name);

        /* NULL anywhere */
        good = o->op(NULL, b34) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name);
        good = o->op(a34, NULL) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        good = o->out(NULL, a34, b34) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        good = o->out(out34, a34, NULL) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        good = o->scalar(NULL, 1) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        ok(good, "%s %s with a NULL tensor: TENDO_ERR_INVALID_ARG naming the op", DT_NAME, name);
        tensor_free(out43);
        tensor_free(out4);
        tensor_free(out34);
    }

    for (int op = 0; op < T_NUNARY; op++) {
        const DTFN(t_unop) *o = &DTFN(t_unary)()[op];
        const char *name = o->name;
        TT *out43 = TFN(full)(2, (const int64_t[]){4, 3}, NAN, tendo_cpu());
        bool good;

        good = o->out(out43, a34) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "[4,3]") && DTFN(all_nan)(out43);
        good = o->out(hi, lo) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = o->out(lo, hi) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = o->out(sqt, sq) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = o->out(exp34, a34) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "overlapping") && good;
        good = o->op(NULL) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        good = o->out(NULL, a34) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, name) && good;
        ok(good && DTFN(unchanged)(base, snap) && DTFN(unchanged)(sq, snapsq) && DTFN(all_nan)(one4),
           "%s %s_out: wrong shape -> TENDO_ERR_SHAPE; overlapping, expanded or NULL -> TENDO_ERR_INVALID_ARG", DT_NAME,
           name);
        tensor_free(out43);
    }

    {
        TT *out34 = TFN(full)(2, (const int64_t[]){3, 4}, NAN, tendo_cpu());
        TT *out43 = TFN(full)(2, (const int64_t[]){4, 3}, NAN, tendo_cpu());
        bool good;

        good = tensor_clamp(a34, 1, -1) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "clamp");
        good = tensor_clamp_out(out34, a34, 1, -1) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "clamp") && DTFN(all_nan)(out34) && good;
        ok(good, "%s clamp with lo > hi: TENDO_ERR_INVALID_ARG, out untouched", DT_NAME);
        good = tensor_clamp_out(out43, a34, -1, 1) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "[4,3]");
        good = tensor_clamp_out(hi, lo, -1, 1) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "overlap") && good;
        good = TFN(clamp)(NULL, -1, 1) == NULL && t_failed_with(TENDO_ERR_INVALID_ARG, "clamp") && good;
        ok(good && DTFN(all_nan)(out43) && DTFN(unchanged)(base, snap),
           "%s clamp_out: wrong shape -> TENDO_ERR_SHAPE, partial overlap -> TENDO_ERR_INVALID_ARG", DT_NAME);
        tensor_free(out34);
        tensor_free(out43);
    }

    {
        /* interleaved views share a range of storage but no element: out =
         * x[0::2], input x[1::2] is allowed and writes only the even ones */
        TT *x = TFN(arange)(0, 8, 1, tendo_cpu());
        TT *even = tensor_slice(x, 0, 0, 8, 2), *odd = tensor_slice(x, 0, 1, 8, 2);
        bool good = tensor_neg_out(even, odd) == TENDO_OK;
        for (int i = 0; good && i < 8; i++)
            good = E_TO_DOUBLE(tensor_data(x)[i]) == (i % 2 ? i : -(i + 1));
        ok(good, "%s neg_out(x[0::2], x[1::2]): interleaved views do not overlap", DT_NAME);
        tensor_free(x);
        tensor_free(even);
        tensor_free(odd);
    }

    free(snap);
    free(snapsq);
    tensor_free(a34);
    tensor_free(b24);
    tensor_free(b34);
    tensor_free(sq);
    tensor_free(sqt);
    tensor_free(base);
    tensor_free(lo);
    tensor_free(hi);
    tensor_free(b10);
    tensor_free(one4);
    tensor_free(exp34);
}

/* Results of 1, 2 and 3 threads are bitwise identical on inputs past the
 * parallel threshold (2^15 elements): 300x500. */
static void DTFN(test_threads)(void)
{
    enum { N_CASES = 8 };
    static const char *names[N_CASES] = {"add (row broadcast)", "mul (transposed)", "div_scalar", "pow (flipped)",
                                         "exp",                 "gelu (transposed)", "sigmoid (sliced)", "clamp"};
    const int64_t shape[2] = {300, 500};
    uint64_t rng = 0x7777u;
    TT *a = DTFN(make_operand)(L_CONTIG, 2, shape, &rng, -4, 4, 0, 1001, false);
    TT *at = DTFN(make_operand)(L_TRANS, 2, shape, &rng, -4, 4, 0, 0, false);
    TT *af = DTFN(make_operand)(L_FLIP, 2, shape, &rng, 0.25, 4, 0, 0, false);
    TT *as = DTFN(make_operand)(L_SLICED, 2, shape, &rng, -8, 8, 0, 0, false);
    TT *row = DTFN(make_operand)(L_CONTIG, 1, shape + 1, &rng, -4, 4, 0, 0, false);

    t_want_threads(DT_NAME);
    for (int k = 0; k < N_CASES; k++) {
        DTFN(tcheck) c = {0};

        for (int threads = 1; threads <= 3; threads++) {
            TT *r = NULL;

            tendo_set_num_threads(threads);
            switch (k) {
            case 0: r = tensor_add(a, row); break;
            case 1: r = tensor_mul(at, a); break;
            case 2: r = tensor_div_scalar(a, 3.0); break;
            case 3: r = tensor_pow(af, at); break;
            case 4: r = tensor_exp(a); break;
            case 5: r = tensor_gelu(at); break;
            case 6: r = tensor_sigmoid(as); break;
            case 7: r = tensor_clamp(af, 0.5, 2.5); break;
            }
            DTFN(tcheck_add)(&c, r, names[k]);
        }
        ok(DTFN(tcheck_done)(&c) && c.n == 150000, "%s %s on 300x500: 1, 2 and 3 threads bitwise identical",
           DT_NAME, names[k]);
    }
    tendo_set_num_threads(0); /* back to the default */
    tensor_free(a);
    tensor_free(at);
    tensor_free(af);
    tensor_free(as);
    tensor_free(row);
}

static void DTFN(test_ops)(void)
{
    for (int op = 0; op < T_NBINARY; op++) {
        DTFN(test_binary)(op);
        DTFN(test_binary_scalar)(op);
        DTFN(test_binary_inplace)(op);
    }
    for (int op = 0; op < T_NUNARY; op++) {
        DTFN(test_unary)(op);
        DTFN(test_unary_special)(op);
    }
    DTFN(test_semantics)();
    DTFN(test_clamp)();
    DTFN(test_out_errors)();
    DTFN(test_threads)();
}
