/* t/bodies/convert-body.h - to_<dt2> from this dtype to every dtype, on every
 * layout, bit-exact against ref_from_<dt2>() of the exact source value.
 * Included by t/each-dtype.h; see t/lib/dt.h.  Uses the per-dtype bits_<dt>(),
 * exact_<dt>() and ref_from_<dt>() helpers of t-convert.c. */

/* Raw elements of t in row-major order; the caller frees. */
static E *DTFN(raw_elems)(const TT *t)
{
    int64_t n = tensor_numel(t);
    E *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    if (!r || tensor_copy_to(t, r, n) != TENDO_OK)
        bail("copy_to failed: %s", tendo_error_message(tendo_last_error()));
    return r;
}

/* Source values.  Floats: random magnitudes over the whole f32 range
 * (overflowing the narrow floats), subnormals, exact halfway cases of the
 * floats and of the integers (x.5), values just inside and past every
 * integer range, +-0, NaN, +-inf.  Integers: min, max, -1, 0, 1, ties of
 * the narrow floats (2049, 2^24+1, 2^53+1 ...), random bits at random
 * magnitudes.  Bool: 0 and 1. */
static TT *DTFN(convert_source)(int64_t n, uint64_t *seed)
{
    E *raw = malloc((size_t)n * sizeof *raw);
    TT *t;

#if defined(DT_KIND_FLOAT)
    static const double special[] = {
        0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 1e-8, 6e-8, 3.0e38, 1.0 + 0x1p-11, 1.0 + 0x1p-8,
        1.0 + 0x1p-9 + 0x1p-11, NAN, INFINITY, -INFINITY, 0.5, -0.5, 2.5, -2.5, 0.999, -0.999, 127.5,
        -128.5, 128, -129, 255.5, 256, -1.5, 32767.5, -32769, 40000, -40000, 65535, 65536, 0x1p31,
        -0x1p31, -0x1p31 - 1, 0x1p31 - 1, 3e9, -3e9, 0x1p32, 0x1p53, 0x1p53 + 2, 0x1p63, -0x1p63,
        0x1p63 - 1024, -0x1p63 + 1024, 0x1p64, -0x1p64, 1e20, -1e20, 1e300, -1e300, 448, 464, 465,
        480, 57344, 61440, 1e-310, -1e-310, 0x1p-149, 0x1p-24, 0x1p-9, 0x1p-16};
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (i < (int64_t)(sizeof special / sizeof *special))
            v = special[i];
        else if (i % 97 == 0)
            v = i % 2 ? INFINITY : -INFINITY;
        else if (i % 89 == 0)
            v = NAN;
        else if (i % 7 == 0) /* integers of every range, some past it */
            v = (t_rand_u64(seed) & 1 ? -1 : 1) * trunc(ldexp(t_rand_range(seed, 1, 2), (int)(t_rand_u64(seed) % 70)));
        else
            v = (t_rand_u64(seed) & 1 ? -1 : 1) * ldexp(t_rand_range(seed, 1, 2), (int)(t_rand_u64(seed) % 80) - 30);
        raw[i] = E_FROM_DOUBLE(v);
    }
#elif defined(DT_KIND_BOOL)
    for (int64_t i = 0; i < n; i++)
        raw[i] = i < 2 ? i == 1 : (t_rand_u64(seed) & 1);
#else
    static const int64_t special[] = {0, -1, 1, 2, -2, 127, 128, -128, -129, 255, 256, 2049, 2051, -2049,
                                      32767, 32768, -32768, 65535, 65536, 65520, 65519, 448, 464, 465,
                                      (INT64_C(1) << 24) + 1, -(INT64_C(1) << 24) - 1, (INT64_C(1) << 24) + 3,
                                      INT32_MAX, INT32_MIN, (INT64_C(1) << 53) + 1, (INT64_C(1) << 53) + 3,
                                      -(INT64_C(1) << 53) - 1, (INT64_C(1) << 54) + 2, (INT64_C(1) << 62) + 1,
                                      INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                                      /* ties after a rounding to double (53 bits), not before:
                                         2^62 + half an ulp of p bits + 1, p = 24, 11, 8, 4, 3 */
                                      (INT64_C(1) << 62) + (INT64_C(1) << 38) + 1,
                                      -(INT64_C(1) << 62) - (INT64_C(1) << 38) - 1,
                                      (INT64_C(1) << 62) + (INT64_C(1) << 51) + 1,
                                      -(INT64_C(1) << 62) - (INT64_C(1) << 51) - 1,
                                      (INT64_C(1) << 62) + (INT64_C(1) << 54) + 1,
                                      (INT64_C(1) << 62) + (INT64_C(1) << 58) + 1,
                                      (INT64_C(1) << 62) + (INT64_C(1) << 59) + 1,
                                      -(INT64_C(1) << 62) - (INT64_C(1) << 59) - 1};
    const int64_t nsp = (int64_t)(sizeof special / sizeof *special);
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (i < 2) /* the dtype's max and min, below */
            v = 0;
        else if (i < 2 + nsp)
            v = special[i - 2];
        else {
            uint64_t r = t_rand_u64(seed);
            v = (int64_t)(r >> (t_rand_u64(seed) % 64));
            if (t_rand_u64(seed) & 1)
                v = (int64_t)(0 - (uint64_t)v);
        }
        raw[i] = DTFN(wrap)(v);
    }
#if defined(DT_KIND_INT)
    raw[0] = DTFN(wrap)((int64_t)(t_mask(DT_BITS) >> 1));                      /* max */
    raw[1] = DTFN(wrap)((int64_t)(~(t_mask(DT_BITS) >> 1) & t_mask(DT_BITS))); /* min */
#else
    raw[0] = (E)t_mask(DT_BITS); /* max */
    raw[1] = 0;                  /* min */
#endif
#endif
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
        E *src = DTFN(raw_elems)(v);                                                                 \
        if (!out || tensor_##to##_copy_to(out, got, n) != TENDO_OK || !tensor_##to##_is_contiguous(out)) \
            bad = -1;                                                                                \
        for (int64_t i = 0; bad >= 0 && i < n; i++)                                                  \
            bad += bits_##to(got[i]) != bits_##to(ref_from_##to(DTFN(exact)(src[i])));                               \
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
