/* t/bodies/errors-body.h - every class of bad input, per dtype: the call fails
 * with the right status and a message naming the op (and the shape), and
 * its inputs are left as they were.  Leaks show in the sanitizer run.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

/* The last error has status st and its message contains each of the
 * (NULL-terminated) fragments. */
static bool DTFN(failed_with)(tendo_status st, const char *frag1, const char *frag2)
{
    const tendo_error *e = tendo_last_error();
    const char *m = tendo_error_message(e);
    bool good = tendo_error_status(e) == st && strstr(m, frag1) && (!frag2 || strstr(m, frag2));

    if (!good)
        diag("status %d (%s), message: %s", (int)tendo_error_status(e),
             tendo_status_str(tendo_error_status(e)), m);
    tendo_clear_error();
    return good;
}

/* Geometry and values of t, to prove a failed call changed nothing. */
struct DTFN(snap) { int ndim; int64_t shape[8], stride[8], offset; double v[64]; };
static struct DTFN(snap) DTFN(snapshot)(const TT *t)
{
    struct DTFN(snap) s = {0};
    s.ndim = tensor_ndim(t);
    memcpy(s.shape, tensor_shape(t), (size_t)s.ndim * sizeof(int64_t));
    memcpy(s.stride, tensor_stride(t), (size_t)s.ndim * sizeof(int64_t));
    s.offset = tensor_offset(t);
    for (int64_t i = 0; i < tensor_numel(t) && i < 64; i++)
        s.v[i] = E_TO_DOUBLE(tensor_data(t)[t_offset_of(s.ndim, s.shape, s.stride, i)]);
    return s;
}

static bool DTFN(same_snap)(const struct DTFN(snap) *a, const struct DTFN(snap) *b)
{
    bool same = a->ndim == b->ndim && a->offset == b->offset;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d] && a->stride[d] == b->stride[d];
    for (int i = 0; same && i < 64; i++)
        same = a->v[i] == b->v[i];
    return same;
}

#define FAILS_NULL(call, st, f1, f2, what) ok((call) == NULL && DTFN(failed_with)(st, f1, f2), DT_NAME " " what)
#define FAILS_ST(call, st, f1, f2, what) ok((call) == st && DTFN(failed_with)(st, f1, f2), DT_NAME " " what)

static void DTFN(test_null_tensors)(void)
{
    E buf[4];

    FAILS_NULL(TFN(transpose)(NULL, 0, 1), TENDO_ERR_INVALID_ARG, "transpose: ", "NULL", "transpose(NULL)");
    FAILS_NULL(TFN(reshape)(NULL, TENDO_SHAPE(2)), TENDO_ERR_INVALID_ARG, "reshape: ", "NULL", "reshape(NULL)");
    FAILS_NULL(TFN(view)(NULL, TENDO_SHAPE(2)), TENDO_ERR_INVALID_ARG, "view: ", "NULL", "view(NULL)");
    FAILS_NULL(TFN(permute)(NULL, (int[]){0}), TENDO_ERR_INVALID_ARG, "permute: ", "NULL", "permute(NULL)");
    FAILS_NULL(TFN(squeeze)(NULL, 0), TENDO_ERR_INVALID_ARG, "squeeze: ", "NULL", "squeeze(NULL)");
    FAILS_NULL(TFN(unsqueeze)(NULL, 0), TENDO_ERR_INVALID_ARG, "unsqueeze: ", "NULL", "unsqueeze(NULL)");
    FAILS_NULL(TFN(narrow)(NULL, 0, 0, 1), TENDO_ERR_INVALID_ARG, "narrow: ", "NULL", "narrow(NULL)");
    FAILS_NULL(TFN(slice)(NULL, 0, 0, 1, 1), TENDO_ERR_INVALID_ARG, "slice: ", "NULL", "slice(NULL)");
    FAILS_NULL(TFN(expand)(NULL, TENDO_SHAPE(2)), TENDO_ERR_INVALID_ARG, "expand: ", "NULL", "expand(NULL)");
    FAILS_NULL(TFN(flip)(NULL, 0), TENDO_ERR_INVALID_ARG, "flip: ", "NULL", "flip(NULL)");
    FAILS_NULL(TFN(flatten)(NULL, 0, -1), TENDO_ERR_INVALID_ARG, "flatten: ", "NULL", "flatten(NULL)");
    FAILS_NULL(TFN(contiguous)(NULL), TENDO_ERR_INVALID_ARG, "contiguous: ", "NULL", "contiguous(NULL)");
    FAILS_NULL(TFN(clone)(NULL), TENDO_ERR_INVALID_ARG, "clone: ", "NULL", "clone(NULL)");
    FAILS_NULL(TFN(to)(NULL, tendo_cpu()), TENDO_ERR_INVALID_ARG, "to: ", "NULL", "to(NULL)");
    FAILS_NULL(TFN(to_f32)(NULL), TENDO_ERR_INVALID_ARG, "to_f32: ", "NULL", "to_f32(NULL)");
    FAILS_NULL(TFN(data)(NULL), TENDO_ERR_INVALID_ARG, "data: ", "NULL", "data(NULL)");
    FAILS_NULL(TFN(shape)(NULL), TENDO_ERR_INVALID_ARG, "shape: ", "NULL", "shape(NULL)");
    FAILS_NULL(TFN(stride)(NULL), TENDO_ERR_INVALID_ARG, "stride: ", "NULL", "stride(NULL)");
    ok(TFN(ndim)(NULL) == -1 && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "ndim: ", NULL), DT_NAME " ndim(NULL) is -1");
    ok(TFN(numel)(NULL) == -1 && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "numel: ", NULL), DT_NAME " numel(NULL) is -1");
    ok(TFN(offset)(NULL) == -1 && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "offset: ", NULL), DT_NAME " offset(NULL) is -1");
    ok(TFN(size)(NULL, 0) == -1 && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "size: ", NULL), DT_NAME " size(NULL) is -1");
    ok(!TFN(is_contiguous)(NULL) && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "is_contiguous: ", NULL),
       DT_NAME " is_contiguous(NULL) is false");
    ok(!TFN(shares_storage)(NULL, NULL) && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "shares_storage: ", NULL),
       DT_NAME " shares_storage(NULL, NULL) is false");
    FAILS_ST(TFN(copy_to)(NULL, buf, 4), TENDO_ERR_INVALID_ARG, "copy_to: ", "NULL", "copy_to(NULL)");
    FAILS_ST(TFN(print)(NULL, stdout), TENDO_ERR_INVALID_ARG, "print: ", "NULL", "print(NULL)");
    TFN(free)(NULL);
    ok(true, DT_NAME " free(NULL) is a no-op");
}

static void DTFN(test_bad_shapes)(void)
{
    E one = E_FROM_DOUBLE(1);

    FAILS_NULL(TFN(zeros)(-1, (int64_t[]){1}, tendo_cpu()), TENDO_ERR_INVALID_ARG, "zeros: ", "ndim -1", "zeros with ndim -1");
    FAILS_NULL(TFN(empty)(9, (int64_t[9]){1, 1, 1, 1, 1, 1, 1, 1, 1}, tendo_cpu()), TENDO_ERR_INVALID_ARG, "empty: ",
               "ndim 9", "empty with ndim 9 > TENDO_MAX_DIMS");
    FAILS_NULL(TFN(ones)(2, NULL, tendo_cpu()), TENDO_ERR_INVALID_ARG, "ones: ", "NULL", "ones with a NULL shape");
    FAILS_NULL(TFN(full)(TENDO_SHAPE(2, -3), 1.0, tendo_cpu()), TENDO_ERR_SHAPE, "full: ", "[2,-3]", "a negative size");
    FAILS_NULL(TFN(rand)(TENDO_SHAPE(1LL << 32, 1LL << 32), 1, tendo_cpu()), TENDO_ERR_SHAPE, "rand: ",
               "[4294967296,4294967296]", "a shape of 2^64 elements");
    FAILS_NULL(TFN(randn)(TENDO_SHAPE(1LL << 62, 8), 1, tendo_cpu()), TENDO_ERR_SHAPE, "randn: ", "2^63",
               "a shape of 2^65 elements");
    if (sizeof(E) > 1) /* (2^61 * 3 one-byte elements fit in the address space) */
        FAILS_NULL(TFN(empty)(TENDO_SHAPE(1LL << 61, 3), tendo_cpu()), TENDO_ERR_OOM, "empty: ", "address space",
                   "a shape whose bytes overflow the address space");
    FAILS_NULL(TFN(zeros)(TENDO_SHAPE(1LL << 45), tendo_cpu()), TENDO_ERR_OOM, "zeros: ", "out of memory",
               "a shape larger than memory");
    FAILS_NULL(TFN(from_data)(NULL, TENDO_SHAPE(2), tendo_cpu()), TENDO_ERR_INVALID_ARG, "from_data: ", "NULL",
               "from_data with NULL data");
    FAILS_NULL(TFN(from_data)(&one, TENDO_SHAPE(-1), tendo_cpu()), TENDO_ERR_SHAPE, "from_data: ", "[-1]",
               "from_data with a negative size");
}

static void DTFN(test_bad_devices)(void)
{
    E one = E_FROM_DOUBLE(1);
    TT *t = TFN(ones)(TENDO_SHAPE(2), tendo_cpu());

    /* the first CUDA device past the ones there are (cuda:0 without a GPU) */
    int n = tendo_cuda_device_count();
    tendo_device past = tendo_cuda(n), past1 = tendo_cuda(n + 1);
    char past_s[24], past1_s[24];

    snprintf(past_s, sizeof past_s, "%s", tendo_device_str(past));
    snprintf(past1_s, sizeof past1_s, "%s", tendo_device_str(past1));
    FAILS_NULL(TFN(zeros)(TENDO_SHAPE(2), past), TENDO_ERR_DEVICE, "zeros: ", past_s, "zeros on a missing GPU");
    FAILS_NULL(TFN(from_data)(&one, TENDO_SHAPE(1), past1), TENDO_ERR_DEVICE, "from_data: ", past1_s,
               "from_data to a missing GPU");
    FAILS_NULL(TFN(arange)(0, 4, 1, past), TENDO_ERR_DEVICE, "arange: ", "is not available", "arange on a missing GPU");
    FAILS_NULL(TFN(rand)(TENDO_SHAPE(2), 1, past), TENDO_ERR_DEVICE, "rand: ", past_s, "rand on a missing GPU");
    FAILS_NULL(tensor_to(t, past), TENDO_ERR_DEVICE, "to: ", past_s, "to(a missing GPU)");
    FAILS_NULL(TFN(zeros)(TENDO_SHAPE(2), tendo_cuda(-1)), TENDO_ERR_DEVICE, "zeros: ", "cuda:-1", "a negative CUDA index");
    FAILS_NULL(TFN(zeros)(TENDO_SHAPE(2), ((tendo_device){TENDO_CPU, 3})), TENDO_ERR_DEVICE, "zeros: ", "cpu:3",
               "a CPU index other than 0");
    tensor_free(t);
}

static void DTFN(test_bad_view_args)(void)
{
    TT *a = TFN(arange)(0, 24, 1, tendo_cpu());
    TT *t = tensor_reshape(a, TENDO_SHAPE(2, 3, 4));
    TT *tr = tensor_transpose(t, 0, 2);
    struct DTFN(snap) before = DTFN(snapshot)(t), trb = DTFN(snapshot)(tr), after;
    E small[5];

    FAILS_NULL(tensor_transpose(t, 0, 3), TENDO_ERR_INVALID_ARG, "transpose: ", "[2,3,4]", "transpose dim 3 of 3");
    FAILS_NULL(tensor_transpose(t, -4, 0), TENDO_ERR_INVALID_ARG, "transpose: dim -4", "[2,3,4]", "transpose dim -4");
    FAILS_NULL(tensor_squeeze(t, 7), TENDO_ERR_INVALID_ARG, "squeeze: ", "[2,3,4]", "squeeze dim out of range");
    FAILS_NULL(tensor_unsqueeze(t, 4), TENDO_ERR_INVALID_ARG, "unsqueeze: ", "[2,3,4]", "unsqueeze dim 4 of 3");
    FAILS_NULL(tensor_unsqueeze(t, -5), TENDO_ERR_INVALID_ARG, "unsqueeze: ", "[2,3,4]", "unsqueeze dim -5 of 3");
    FAILS_NULL(tensor_flip(t, 3), TENDO_ERR_INVALID_ARG, "flip: ", "[2,3,4]", "flip dim out of range");
    FAILS_NULL(tensor_narrow(t, 5, 0, 1), TENDO_ERR_INVALID_ARG, "narrow: ", "[2,3,4]", "narrow dim out of range");
    FAILS_NULL(tensor_slice(t, -9, 0, 1, 1), TENDO_ERR_INVALID_ARG, "slice: ", "[2,3,4]", "slice dim out of range");
    FAILS_NULL(tensor_flatten(t, 2, 1), TENDO_ERR_INVALID_ARG, "flatten: ", "[2,3,4]", "flatten start after end");
    ok(tensor_size(t, 3) == -1 && DTFN(failed_with)(TENDO_ERR_INVALID_ARG, "size: ", "[2,3,4]"), DT_NAME " size of dim 3");
    FAILS_NULL(tensor_permute(t, ((int[]){0, 0, 1})), TENDO_ERR_INVALID_ARG, "permute: ", "[0,0,1]", "permute with a repeat");
    FAILS_NULL(tensor_permute(t, ((int[]){0, 1, 3})), TENDO_ERR_INVALID_ARG, "permute: ", "[2,3,4]", "permute with dim 3 of 3");
    FAILS_NULL(tensor_permute(t, NULL), TENDO_ERR_INVALID_ARG, "permute: ", "NULL", "permute with NULL");
    FAILS_NULL(tensor_reshape(t, TENDO_SHAPE(-1, 2, -1)), TENDO_ERR_INVALID_ARG, "reshape: ", "[-1,2,-1]", "reshape with two -1");
    FAILS_NULL(tensor_reshape(t, TENDO_SHAPE(5, -1)), TENDO_ERR_SHAPE, "reshape: ", "[2,3,4]", "reshape 24 to [5,-1]");
    FAILS_NULL(tensor_reshape(t, TENDO_SHAPE(5, 5)), TENDO_ERR_SHAPE, "reshape: ", "[5,5]", "reshape 24 to [5,5]");
    FAILS_NULL(tensor_reshape(t, TENDO_SHAPE(4, -3, 2)), TENDO_ERR_SHAPE, "reshape: ", "-3", "reshape with size -3");
    FAILS_NULL(tensor_reshape(t, 9, (int64_t[9]){0}), TENDO_ERR_INVALID_ARG, "reshape: ", "ndim 9", "reshape to 9 dims");
    FAILS_NULL(tensor_view(tr, TENDO_SHAPE(24)), TENDO_ERR_SHAPE, "view: ", "[4,3,2]", "view of a transpose as 1-d");
    FAILS_NULL(tensor_expand(t, TENDO_SHAPE(2, 5, 4)), TENDO_ERR_SHAPE, "expand: ", "[2,3,4]", "expand of a non-1 dim");
    FAILS_NULL(tensor_expand(t, TENDO_SHAPE(3, 4)), TENDO_ERR_SHAPE, "expand: ", "[2,3,4]", "expand to fewer dims");
    FAILS_NULL(tensor_expand(t, TENDO_SHAPE(-1, 2, 3, 4)), TENDO_ERR_SHAPE, "expand: ", "[-1,2,3,4]", "expand with -1 in a new dim");
    FAILS_NULL(tensor_slice(t, 1, 0, 3, 0), TENDO_ERR_INVALID_ARG, "slice: ", "step 0", "slice with step 0");
    FAILS_NULL(tensor_slice(t, 1, 3, 0, -1), TENDO_ERR_INVALID_ARG, "slice: ", "step -1", "slice with a negative step");
    FAILS_NULL(tensor_narrow(t, 2, 2, 3), TENDO_ERR_INVALID_ARG, "narrow: ", "[2,3,4]", "narrow past the end");
    FAILS_NULL(tensor_narrow(t, 2, 5, 0), TENDO_ERR_INVALID_ARG, "narrow: ", "start 5", "narrow starting past the end");
    FAILS_NULL(tensor_narrow(t, 2, 0, -1), TENDO_ERR_INVALID_ARG, "narrow: ", "length -1", "narrow with a negative length");
    FAILS_ST(tensor_copy_to(t, small, 5), TENDO_ERR_INVALID_ARG, "copy_to: ", "[2,3,4]", "copy_to into too small a buffer");
    FAILS_ST(tensor_copy_to(t, NULL, 24), TENDO_ERR_INVALID_ARG, "copy_to: ", "NULL", "copy_to into NULL");
    FAILS_ST(tensor_print(t, NULL), TENDO_ERR_INVALID_ARG, "print: ", "NULL", "print to a NULL FILE");

    after = DTFN(snapshot)(t);
    ok(DTFN(same_snap)(&before, &after), DT_NAME " the failed calls left t as it was");
    after = DTFN(snapshot)(tr);
    ok(DTFN(same_snap)(&trb, &after), DT_NAME " and its transpose as it was");
    tensor_free(a);
    tensor_free(t);
    tensor_free(tr);
}

static void DTFN(test_bad_arange)(void)
{
    FAILS_NULL(TFN(arange)(0, 10, 0, tendo_cpu()), TENDO_ERR_INVALID_ARG, "arange: ", "step", "arange with step 0");
    FAILS_NULL(TFN(arange)(0, 10, -1, tendo_cpu()), TENDO_ERR_INVALID_ARG, "arange: ", "points away", "arange step of the wrong sign");
    FAILS_NULL(TFN(arange)(5, 0, 1, tendo_cpu()), TENDO_ERR_INVALID_ARG, "arange: ", "points away", "arange counting up from above");
    FAILS_NULL(TFN(arange)(0, NAN, 1, tendo_cpu()), TENDO_ERR_INVALID_ARG, "arange: ", "finite", "arange to NaN");
    FAILS_NULL(TFN(arange)(0, 1e300, 1e-300, tendo_cpu()), TENDO_ERR_SHAPE, "arange: ", "too many", "arange of 1e600 elements");
}

static void DTFN(test_errors)(void)
{
    DTFN(test_null_tensors)();
    DTFN(test_bad_shapes)();
    DTFN(test_bad_devices)();
    DTFN(test_bad_view_args)();
    DTFN(test_bad_arange)();
}
#undef FAILS_NULL
#undef FAILS_ST
