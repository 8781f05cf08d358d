/* t/bodies/values-body.h - values(t): all of t in row-major order as doubles
 * (the caller frees), and tiny(): the dtype's smallest positive value.
 * Included once per dtype by t/each-dtype.h. */
static double *DTFN(values)(const TT *t)
{
    int64_t n = tensor_numel(t);
    E *raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);

    if (!raw || !v || tensor_copy_to(t, raw, n) != TENDO_OK)
        bail("copy_to failed: %s", tendo_error_message(tendo_last_error()));
    for (int64_t i = 0; i < n; i++)
        v[i] = E_TO_DOUBLE(raw[i]);
    free(raw);
    return v;
}

/* The dtype's smallest positive (subnormal) value: its absolute rounding
 * step near 0. */
static inline double DTFN(tiny)(void)
{
    static double x = 0;
    if (x == 0)
        for (x = 1; x / 2 > 0 && E_TO_DOUBLE(E_FROM_DOUBLE(x / 2)) == x / 2;)
            x /= 2;
    return x;
}
