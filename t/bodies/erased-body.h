/* t/bodies/erased-body.h - type-erased handles, per dtype: erase and the checked
 * down-casts give back the same handle; a wrong dtype is refused.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

/* tendo_as_<to>(e) for a dtype that is not DT: NULL, TENDO_ERR_DTYPE naming both. */
#define TRY_AS(to, TO, ct)                                                                          \
    if (TENDO_##TO != DT_CODE) {                                                                    \
        const char *m;                                                                              \
        refused += tendo_as_##to(e) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_DTYPE; \
        m = tendo_error_message(tendo_last_error());                                                \
        named += strstr(m, "as_" #to ": ") != NULL && strstr(m, "is " DT_NAME ", not " #to) != NULL; \
        others++;                                                                                   \
    }

static void DTFN(test_erased)(void)
{
    TT *t = TFN(arange)(0, 6, 1, tendo_cpu());
    TT *v = tensor_reshape(t, TENDO_SHAPE(2, 3));
    tendo_tensor *e = tensor_erase(v);
    int refused = 0, named = 0, others = 0;

    ok((void *)e == (void *)v, DT_NAME " erase gives the same handle");
    ok(tendo_tensor_dtype(e) == DT_CODE && tendo_tensor_ndim(e) == 2 && tendo_tensor_shape(e)[1] == 3 &&
           tendo_tensor_stride(e)[0] == 3 && tendo_tensor_numel(e) == 6 && tendo_tensor_device(e).type == TENDO_CPU,
       DT_NAME " the erased handle reports dtype, ndim, shape, strides, numel and device");
    ok(TFN(ndim)(DTFN(tendo_as)(e)) == 2 && (void *)DTFN(tendo_as)(e) == (void *)v,
       DT_NAME " tendo_as_" DT_NAME " gives it back");
    TENDO_FOREACH_DTYPE(TRY_AS)
    ok(refused == others && named == others, DT_NAME " every other tendo_as_<dt> refuses it with TENDO_ERR_DTYPE naming both (%d of %d)",
       named, others);
    {
        tendo_tensor *a = tendo_tensor_alias(e), *tr = tensor_erase(tensor_transpose(v, 0, 1));
        int converted = 0;

        ok(a && a != e && tendo_tensor_data(a) == tendo_tensor_data(e) && tendo_tensor_stride(a)[0] == 3 &&
               TFN(shares_storage)(DTFN(tendo_as)(a), v),
           DT_NAME " tendo_tensor_alias is a new handle on the same elements");
        /* the transposed view converted to every dtype: contiguous, each
         * element k of the row-major walk equal to the source's */
#define TRY_TO(to, TO, ct)                                                                                  {                                                                                                       tendo_tensor *c = tendo_tensor_to_dtype(tr, TENDO_##TO);                                            tensor_##to *tc = c ? tendo_as_##to(c) : NULL;                                                      double want[6] = {0, 3, 1, 4, 2, 5};                                                                bool same = tc && tendo_tensor_dtype(c) == TENDO_##TO && tensor_is_contiguous(tc) &&                            tendo_tensor_shape(c)[0] == 3;                                                          for (int k = 0; same && k < 6; k++) {                                                                   tensor_f32 *f = tensor_to_f32(tc);                                                                  same = f && tensor_data(f)[k] == (float)(TENDO_##TO == TENDO_BOOL ? want[k] != 0 : want[k]);                                                    tensor_free(f);                                                                                 }                                                                                                   converted += same;                                                                                  tendo_tensor_free(c);                                                                           }
        TENDO_FOREACH_DTYPE(TRY_TO)
#undef TRY_TO
        is_int(TENDO_NUM_DTYPES, converted, DT_NAME " tendo_tensor_to_dtype of a transposed view, to every dtype");
        ok(tendo_tensor_to_dtype(e, (tendo_dtype)999) == NULL &&
               tendo_error_status(tendo_last_error()) == TENDO_ERR_DTYPE,
           DT_NAME " tendo_tensor_to_dtype to an unknown code is TENDO_ERR_DTYPE");
        {
            tendo_tensor *d = tendo_tensor_to_device(tr, tendo_cpu());
            ok(d && tendo_tensor_data(d) != tendo_tensor_data(tr) && tendo_tensor_stride(d)[0] == 2,
               DT_NAME " tendo_tensor_to_device makes a contiguous copy");
            tendo_tensor_free(d);
        }
        ok(tendo_tensor_is_contiguous(e) && !tendo_tensor_is_contiguous(tr) && !tendo_tensor_is_contiguous(NULL),
           DT_NAME " tendo_tensor_is_contiguous: the [2,3] view yes, its transpose and NULL no");
        ok(tendo_tensor_data(NULL) == NULL && tendo_tensor_alias(NULL) == NULL &&
               tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG,
           DT_NAME " data and alias refuse NULL");
        tendo_tensor_free(a);
        tendo_tensor_free(tr);
    }
    tendo_tensor_free(e); /* frees v through the erased type */
    tensor_free(t);
}
#undef TRY_AS
