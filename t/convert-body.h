/* t/convert-body.h - to_<dt2> from this dtype to every dtype, on every
 * layout, bit-exact against a conversion rounded once from double.
 * Included by t/each-dtype.h; see t/dt.h.  Uses the per-dtype bits_<dt>()
 * and round_<dt>() helpers of t-convert.c. */

/* Source values: random magnitudes over the whole f32 range (overflowing
 * 16-bit types), subnormals, exact halfway cases, and specials. */
static TT *DTFN(convert_source)(int64_t n, uint64_t *seed)
{
    E *raw = malloc((size_t)n * sizeof *raw);
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 1e-8, 6e-8, 3.0e38,
                                     1.0 + 0x1p-11, 1.0 + 0x1p-8, 1.0 + 0x1p-9 + 0x1p-11};
    TT *t;

    for (int64_t i = 0; i < n; i++) {
        double v;
        if (i < (int64_t)(sizeof special / sizeof *special))
            v = special[i];
        else if (i % 97 == 0)
            v = i % 2 ? INFINITY : -INFINITY;
        else if (i % 89 == 0)
            v = NAN;
        else
            v = (t_rand_u64(seed) & 1 ? -1 : 1) * ldexp(t_rand_range(seed, 1, 2), (int)(t_rand_u64(seed) % 60) - 30);
        raw[i] = E_FROM_DOUBLE(v);
    }
    t = TFN(from_data)(raw, TENDO_SHAPE(n), tendo_cpu());
    free(raw);
    return t;
}

/* One target: converts v with tensor_to_<to>() and compares each element's
 * bits with round_<to>(value of the source element). */
#define CHECK_TARGET(to, TO, ct)                                                                     \
    {                                                                                                \
        tensor_##to *out = tensor_to_##to(v);                                                        \
        int64_t n = tensor_numel(v), bad = 0;                                                        \
        ct *got = malloc((size_t)n * sizeof *got);                                                   \
        double *src = DTFN(values)(v);                                                               \
        if (!out || tensor_##to##_copy_to(out, got, n) != TENDO_OK || !tensor_##to##_is_contiguous(out)) \
            bad = -1;                                                                                \
        for (int64_t i = 0; bad >= 0 && i < n; i++)                                                  \
            bad += bits_##to(got[i]) != bits_##to(round_##to(src[i]));                               \
        is_int(0, bad, DT_NAME " -> " #to " on %s layout %s", layout, tendo__shape_str(tensor_ndim(v), tensor_shape(v)).s); \
        free(got);                                                                                   \
        free(src);                                                                                   \
        tensor_##to##_free(out);                                                                     \
    }

static void DTFN(convert_all)(const TT *v, const char *layout)
{
    TENDO_FOREACH_DTYPE(CHECK_TARGET)
}

static void DTFN(test_convert)(void)
{
    uint64_t seed = 2024;
    TT *flat = DTFN(convert_source)(64 * 48, &seed);
    TT *m = tensor_reshape(flat, TENDO_SHAPE(64, 48));
    TT *tr = tensor_transpose(m, 0, 1);
    TT *sl = tensor_slice(m, 1, 1, 47, 3);
    TT *fl = tensor_flip(m, 0);
    TT *row = tensor_narrow(m, 0, 5, 1);
    TT *ex = tensor_expand(row, TENDO_SHAPE(7, 48));
    TT *odd = tensor_narrow(flat, 0, 3, 1000); /* length and start not multiples of 8 */

    DTFN(convert_all)(m, "contiguous");
    DTFN(convert_all)(odd, "offset");
    DTFN(convert_all)(tr, "transposed");
    DTFN(convert_all)(sl, "sliced-with-step");
    DTFN(convert_all)(fl, "flipped");
    DTFN(convert_all)(ex, "expanded");
    tensor_free(flat); tensor_free(m); tensor_free(tr); tensor_free(sl);
    tensor_free(fl); tensor_free(row); tensor_free(ex); tensor_free(odd);
}
#undef CHECK_TARGET
