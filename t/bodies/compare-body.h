/* t/bodies/compare-body.h - checking a result against a double reference
 * with per-element tolerances, per dtype (included by a body that
 * t/each-dtype.h instantiates, after values-body.h and layouts-body.h).
 * Used by t/bodies/nn-body.h and t/bodies/loss-body.h. */

/* One more rounding to a 16-bit dtype (for f32 only the subnormal step). */
static double DTFN(narrow_tol)(double want)
{
    if (DT_MANTISSA_BITS >= 24)
        return DTFN(tiny)();
    return DT_ULP * fabs(want) + DTFN(tiny)();
}

/* Checks r against a finished reference want[] with tolerances tol[]. */
static void DTFN(check_against)(t_check *c, const char *what, const TT *r, int no, const int64_t *so,
                                const double *want, const double *tol)
{
    double *got;

    if (!DTFN(result_ok)(c, what, r, no, so))
        return;
    c->n++; /* the shape, which counts for empty results too */
    got = DTFN(values)(r);
    for (int64_t i = 0; i < t_numel(no, so); i++)
        t_elem(c, what, i, got[i], want[i], tol[i]);
    free(got);
}
