/* t/erased-body.h - type-erased handles, per dtype: erase and the checked
 * down-casts give back the same handle; a wrong dtype is refused.
 * Included by t/each-dtype.h; see t/dt.h. */

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
    ok(TFN(ndim)(DT_CAT(tendo_as, DT)(e)) == 2 && (void *)DT_CAT(tendo_as, DT)(e) == (void *)v,
       DT_NAME " tendo_as_" DT_NAME " gives it back");
    TENDO_FOREACH_DTYPE(TRY_AS)
    ok(refused == others && named == others, DT_NAME " every other tendo_as_<dt> refuses it with TENDO_ERR_DTYPE naming both (%d of %d)",
       named, others);
    tendo_tensor_free(e); /* frees v through the erased type */
    tensor_free(t);
}
#undef TRY_AS
