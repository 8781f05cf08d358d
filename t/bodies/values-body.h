/* t/bodies/values-body.h - values(t): all of t in row-major order as doubles
 * (the caller frees).  Included once per dtype by t/each-dtype.h. */
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
