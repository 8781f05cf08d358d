/* t/bodies/compare-body.h - checking a result against a double reference
 * with per-element tolerances, per dtype (included by a body that
 * t/each-dtype.h instantiates, after values-body.h and layouts-body.h).
 * Used by t/bodies/nn-body.h, t/bodies/loss-body.h and t/bodies/matmul-body.h. */

/* One more rounding to a 16-bit dtype (for f32 only the subnormal step). */
static double DTFN(narrow_tol)(double want)
{
    if (DT_MANTISSA_BITS >= 24)
        return DTFN(tiny)();
    return DT_ULP * fabs(want) + DTFN(tiny)();
}

/* A product's reference made want and tolerance, in place, for n elements
 * summed over depth k (t_matmul_ref's sums in want, sum |a||b| in mag):
 * exact (k/8 data, every partial sum exact in float): the sum rounded once
 * to the dtype, tolerance 0; else k * 2^-23 * mag (2^-52 for f64: any
 * summation order of k products, FMA or not) plus one rounding to the
 * dtype.  (inline: not every body multiplies.) */
static inline void DTFN(matmul_bounds)(int64_t n, int64_t k, bool exact, double *want, double *mag)
{
    double eps = DT_MANTISSA_BITS > 24 ? 0x1p-52 : 0x1p-23;

    for (int64_t i = 0; i < n; i++) {
        if (exact) {
            want[i] = E_TO_DOUBLE(E_FROM_DOUBLE(want[i]));
            mag[i] = 0;
        } else {
            mag[i] = (double)k * eps * mag[i] + DTFN(narrow_tol)(want[i]);
        }
    }
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
