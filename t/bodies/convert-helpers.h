/* t/bodies/convert-helpers.h - per dtype: an element's exact value, and the
 * reference conversion of an exact value to the dtype by API.md's cast
 * rules, computed here with no library code but the float dtypes' own
 * from_double (one rounding of an exact double, checked exhaustively by
 * t-half and t-fp8).  Included by t/each-dtype.h; needs t_exact and the
 * helpers above it in t-convert.c. */

/* The exact value of an element: an integer (int, uint, bool) or a double. */
static t_exact DTFN(exact)(E x)
{
    t_exact v;
#if defined(DT_KIND_FLOAT)
    v.is_int = false;
    v.uns = false;
    v.i = 0;
    v.d = E_TO_DOUBLE(x);
#else
    v.is_int = true;
#if defined(DT_KIND_UINT)
    v.uns = true;
#else
    v.uns = false;
#endif
    v.i = (int64_t)x;
    v.d = 0;
#endif
    return v;
}

/* An integer value wrapped modulo 2^bits into this dtype (int/uint), as an
 * element; for a float or bool dtype unused. */
#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
static E DTFN(wrap)(int64_t i)
{
    uint64_t u = (uint64_t)i;
    u &= t_mask(DT_BITS);
#if defined(DT_KIND_INT)
    if ((u >> (DT_BITS - 1)) & 1)
        return (E)(int64_t)(u | ~t_mask(DT_BITS)); /* sign-extend */
    return (E)(int64_t)u;
#else
    return (E)u;
#endif
}
#endif

/* The reference: v converted to this dtype. */
static E DTFN(ref_from)(t_exact v)
{
#if defined(DT_KIND_BOOL)
    return v.is_int ? v.i != 0 : v.d != 0; /* NaN != 0 is true */
#elif defined(DT_KIND_FLOAT)
    if (!v.is_int)
        return E_FROM_DOUBLE(v.d); /* exact double rounded once */
    return E_FROM_DOUBLE(v.uns ? t_round_uint((uint64_t)v.i, DT_MANTISSA_BITS)
                               : t_round_int(v.i, DT_MANTISSA_BITS)); /* exact, then exact */
#else
    if (v.is_int)
        return DTFN(wrap)(v.i); /* modulo 2^bits */
    if (isnan(v.d))
        return 0;
    double t = trunc(v.d);
#if defined(DT_KIND_INT)
    if (t >= ldexp(1, DT_BITS - 1)) /* saturate to max */
        return DTFN(wrap)((int64_t)(t_mask(DT_BITS) >> 1));
    if (t <= -ldexp(1, DT_BITS - 1)) /* saturate to min */
        return DTFN(wrap)((int64_t)(~(t_mask(DT_BITS) >> 1) & t_mask(DT_BITS)));
    return (E)(int64_t)t;
#else
    if (t >= ldexp(1, DT_BITS))
        return (E)t_mask(DT_BITS);
    if (t <= 0)
        return 0;
    return (E)(uint64_t)t;
#endif
#endif
}
