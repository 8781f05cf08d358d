/* t/drivers/t-dlpack.c - DLPack export and import.
 *
 * Every dtype x every layout (contiguous, transposed, sliced with a step, an
 * offset view, flipped, broadcast, 0-d, empty): both exported forms carry
 * the right fields; importing them gives back the same elements, at the
 * same address, with the same geometry; the deleter runs exactly once,
 * whatever order the handles are freed in.  Then tensors made by hand
 * (foreign memory, NULL strides, byte_offset, pinned host memory, NULL
 * deleters), and every class of bad input: refused with the right error
 * kind and a message that names the fault, the DLManagedTensor untouched
 * and its deleter not called.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tendo.h"
#if defined(TENDO_DLPACK_H) || defined(DLPACK_DLPACK_H_)
#define TENDO_H_HAS_DLPACK 1
#else
#define TENDO_H_HAS_DLPACK 0
#endif
#include "core/internal.h"
#include "tendo/dlpack.h"

static const tendo__tensor *in(const tendo_tensor *t) { return (const tendo__tensor *)(const void *)t; }
static tendo_tensor *out(tendo__tensor *t) { return (tendo_tensor *)(void *)t; }

static const char *msg(void) { return tendo_error_message(tendo_last_error()); }
static tendo_status status(void) { return tendo_error_status(tendo_last_error()); }

/* ---- counting deleters wrapped around tendo's own ----------------------------- */

static int deleted; /* calls of the counting deleters */
static void (*inner_v)(DLManagedTensorVersioned *);
static void (*inner_l)(DLManagedTensor *);

static void counting_v(DLManagedTensorVersioned *m)
{
    deleted++;
    inner_v(m);
}

static void counting_l(DLManagedTensor *m)
{
    deleted++;
    inner_l(m);
}

/* ---- layouts ------------------------------------------------------------------- */

enum { CONTIGUOUS, TRANSPOSED, STEPPED, OFFSET, FLIPPED, BROADCAST, SCALAR, EMPTY, NLAYOUTS };
static const char *const layout_name[NLAYOUTS] = {
    "contiguous [2,3,4]", "transposed [4,3,2]", "sliced with step 2", "offset view (narrow)",
    "flipped (negative stride)", "broadcast (stride 0)", "0-d", "empty [0,4]",
};

/* A new tensor of dtype dt in layout k, its values small numbers every
 * dtype holds exactly (the same for every dt). */
static tendo_tensor *make(int k, tendo_dtype dt)
{
    float v[24];
    tensor_f32 *src;
    tendo_tensor *base;
    tendo__tensor *view = NULL, *tmp;

    for (int i = 0; i < 24; i++)
        v[i] = (float)i * 0.5f - 5.0f;
    if (k == SCALAR)
        src = tensor_f32_full(0, NULL, 7.5, tendo_cpu());
    else if (k == EMPTY)
        src = tensor_f32_zeros(TENDO_SHAPE(0, 4), tendo_cpu());
    else
        src = tensor_f32_from_data(v, TENDO_SHAPE(2, 3, 4), tendo_cpu());
    base = tendo_tensor_to_dtype(tensor_f32_erase(src), dt);
    tensor_f32_free(src);
    if (!base)
        bail("cannot make a %s tensor: %s", tendo_dtype_name(dt), msg());
    switch (k) {
    case TRANSPOSED: view = tendo__transpose(in(base), 0, 2); break;
    case STEPPED: view = tendo__slice(in(base), 2, 1, 4, 2); break;
    case OFFSET: view = tendo__narrow(in(base), 0, 1, 1); break;
    case FLIPPED: view = tendo__flip(in(base), 1); break;
    case BROADCAST:
        tmp = tendo__narrow(in(base), 2, 2, 1);
        view = tmp ? tendo__expand(tmp, TENDO_SHAPE(2, 3, 5)) : NULL;
        tendo__tensor_free(tmp);
        break;
    default: return base;
    }
    tendo_tensor_free(base);
    if (!view)
        bail("cannot make layout %s: %s", layout_name[k], msg());
    return out(view);
}

/* t's values as floats in row-major order (through tendo's own conversion
 * and strided copy, so an imported tensor must work to pass). */
static bool values(const tendo_tensor *t, float *dst, int64_t n)
{
    tendo_tensor *f = tendo_tensor_to_dtype(t, TENDO_F32);
    bool good = f && tendo_tensor_numel(f) == n && tensor_copy_to(tendo_as_f32(f), dst, n) == TENDO_OK;

    tendo_tensor_free(f);
    return good;
}

static bool same_geometry(const tendo_tensor *a, const tendo_tensor *b)
{
    int n = tendo_tensor_ndim(a);

    return a && b && tendo_tensor_dtype(a) == tendo_tensor_dtype(b) && n == tendo_tensor_ndim(b) &&
           memcmp(tendo_tensor_shape(a), tendo_tensor_shape(b), (size_t)n * sizeof(int64_t)) == 0 &&
           memcmp(tendo_tensor_stride(a), tendo_tensor_stride(b), (size_t)n * sizeof(int64_t)) == 0 &&
           tendo_device_equal(tendo_tensor_device(a), tendo_tensor_device(b));
}

/* The fields of an exported DLTensor against t. */
static bool fields_ok(const DLTensor *dl, const tendo_tensor *t, int code, int bits, char *why, size_t n)
{
    int nd = tendo_tensor_ndim(t);
    void *first = tendo_tensor_numel(t) ? tendo_tensor_data(t) : NULL;

    if (dl->device.device_type != kDLCPU || dl->device.device_id != 0)
        snprintf(why, n, "device %d:%d", (int)dl->device.device_type, dl->device.device_id);
    else if (dl->dtype.code != code || dl->dtype.bits != bits || dl->dtype.lanes != 1)
        snprintf(why, n, "dtype {%u,%u,%u}", dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
    else if (dl->ndim != nd || !dl->shape || !dl->strides)
        snprintf(why, n, "ndim %d, shape %p, strides %p", dl->ndim, (void *)dl->shape, (void *)dl->strides);
    else if (memcmp(dl->shape, tendo_tensor_shape(t), (size_t)nd * sizeof(int64_t)) != 0)
        snprintf(why, n, "shape %s", tendo__shape_str(dl->ndim, dl->shape).s);
    else if (memcmp(dl->strides, tendo_tensor_stride(t), (size_t)nd * sizeof(int64_t)) != 0)
        snprintf(why, n, "strides %s", tendo__shape_str(dl->ndim, dl->strides).s);
    else if (dl->data != first || dl->byte_offset != 0)
        snprintf(why, n, "data %p + %llu, want %p + 0", dl->data, (unsigned long long)dl->byte_offset, first);
    else
        return true;
    return false;
}

/* ---- round trips, per dtype and layout ---------------------------------------------- */

static void round_trip(tendo_dtype dt, const char *name, int code, int bits, int k)
{
    tendo_tensor *t = make(k, dt), *ref = make(k, TENDO_F32), *e, *e2;
    int64_t n = tendo_tensor_numel(t);
    float want[64], got[64];
    DLManagedTensorVersioned *v;
    DLManagedTensor *l;
    char why[256] = "as t";
    bool good;

    /* t's own values (an integer or fp8 dtype rounds the f32 pattern) */
    if (n > 64 || !values(ref, want, n) || !values(t, want, n))
        bail("reference values for %s: %s", layout_name[k], msg());

    /* versioned: fields, then import through the wrapped (foreign) deleter;
     * the original is freed first */
    v = tendo_to_dlpack_versioned(t);
    ok(v && v->version.major == 1 && v->version.minor == DLPACK_MINOR_VERSION && v->flags == 0 && v->deleter &&
           fields_ok(&v->dl_tensor, t, code, bits, why, sizeof why),
       "%s %s: versioned export: version 1.%d, flags 0, dtype {%d,%d,1}, shape, strides, data (%s)", name,
       layout_name[k], DLPACK_MINOR_VERSION, code, bits, why);
    if (!v)
        bail("export failed: %s", msg());
    inner_v = v->deleter;
    v->deleter = counting_v;
    deleted = 0;
    e = tendo_from_dlpack_versioned(v);
    good = e && same_geometry(e, t) && (n == 0 || tendo_tensor_data(e) == tendo_tensor_data(t)) &&
           values(e, got, n) && memcmp(got, want, (size_t)n * sizeof *got) == 0;
    ok(good && deleted == 0, "%s %s:   imports with the same address, geometry and values (no copy)%s%s", name,
       layout_name[k], e ? "" : ": ", e ? "" : msg());
    tendo_tensor_free(t);
    t = NULL;
    e2 = tendo_tensor_alias(e);
    tendo_tensor_free(e);
    good = deleted == 0;
    tendo_tensor_free(e2);
    ok(good && deleted == 1, "%s %s:   the deleter runs once, with the last view (original freed first): %d",
       name, layout_name[k], deleted);

    /* legacy: fields, then import (wrapped deleter); the import is freed first */
    t = make(k, dt);
    l = tendo_to_dlpack(t);
    ok(l && l->deleter && fields_ok(&l->dl_tensor, t, code, bits, why, sizeof why),
       "%s %s: legacy export: dtype {%d,%d,1}, shape, strides, data (%s)", name, layout_name[k], code, bits, why);
    if (!l)
        bail("export failed: %s", msg());
    inner_l = l->deleter;
    l->deleter = counting_l;
    deleted = 0;
    e = tendo_from_dlpack(l);
    good = e && same_geometry(e, t) && (n == 0 || tendo_tensor_data(e) == tendo_tensor_data(t)) &&
           values(e, got, n) && memcmp(got, want, (size_t)n * sizeof *got) == 0;
    tendo_tensor_free(e);
    good = good && deleted == 1;
    ok(good, "%s %s:   imports the same; its deleter runs once when the import is freed first: %d", name,
       layout_name[k], deleted);

    /* tendo's own export, not wrapped: the import shares the storage and the
     * export block is freed at once (leak checkers see the rest) */
    v = tendo_to_dlpack_versioned(t);
    l = tendo_to_dlpack(t);
    e = tendo_from_dlpack_versioned(v);
    e2 = tendo_from_dlpack(l);
    ok(e && e2 && same_geometry(e, t) && same_geometry(e2, t) && in(e)->storage == in(t)->storage &&
           in(e2)->storage == in(t)->storage && values(e2, got, n) &&
           memcmp(got, want, (size_t)n * sizeof *got) == 0,
       "%s %s: importing tendo's own exports (both forms) gives views of the original storage", name,
       layout_name[k]);
    tendo_tensor_free(e);
    tendo_tensor_free(t);
    tendo_tensor_free(e2);
    tendo_tensor_free(ref);
}

/* export -> import -> export -> import, freed in every order. */
static void chains(void)
{
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int good = 0;

    for (int o = 0; o < 6; o++) {
        tendo_tensor *h[3];
        DLManagedTensorVersioned *v;
        DLManagedTensor *l;
        int early;

        h[0] = make(TRANSPOSED, TENDO_F32);
        v = tendo_to_dlpack_versioned(h[0]);
        inner_v = v->deleter;
        v->deleter = counting_v;
        deleted = 0;
        h[1] = tendo_from_dlpack_versioned(v); /* over wrapped storage */
        l = tendo_to_dlpack(h[1]);
        inner_l = l->deleter;
        l->deleter = counting_l;
        h[2] = tendo_from_dlpack(l); /* over storage wrapping the wrapper */
        tendo_tensor_free(h[orders[o][0]]);
        tendo_tensor_free(h[orders[o][1]]);
        early = deleted;
        tendo_tensor_free(h[orders[o][2]]);
        /* l's deleter runs with h[2]; v's once h[1] and h[2] (which keeps
         * h[1]'s elements through l) are both gone; h[0] plays no part */
        good += early == (orders[o][2] != 2) + (orders[o][2] == 0) && deleted == 2;
    }
    is_int(6, good, "export/import chains of both forms: each deleter runs once, when the last view "
                    "needing it dies, in all 6 free orders");
}

/* ---- tensors made by hand ------------------------------------------------------------- */

typedef struct {
    DLManagedTensorVersioned v;
    DLManagedTensor l;
    int64_t shape[TENDO_MAX_DIMS + 2], strides[TENDO_MAX_DIMS + 2];
    float buf[16];
} foreign;

static int foreign_deleted;
static void foreign_delete_v(DLManagedTensorVersioned *m) { foreign_deleted += m != NULL; }
static void foreign_delete_l(DLManagedTensor *m) { foreign_deleted += m != NULL; }

/* A good f32 [2,3] row-major tensor over f->buf in both forms. */
static void foreign_init(foreign *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 16; i++)
        f->buf[i] = (float)i;
    f->shape[0] = 2, f->shape[1] = 3;
    f->strides[0] = 3, f->strides[1] = 1;
    f->v.version = (DLPackVersion){1, 0};
    f->v.manager_ctx = f;
    f->v.deleter = foreign_delete_v;
    f->v.dl_tensor = (DLTensor){f->buf, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, f->shape, f->strides, 0};
    f->l.manager_ctx = f;
    f->l.deleter = foreign_delete_l;
    f->l.dl_tensor = f->v.dl_tensor;
}

/* A heap tensor whose deleter frees it: a double call is a double free. */
typedef struct {
    DLManagedTensorVersioned m;
    int64_t shape[1];
    float *data;
} heap_tensor;

static void heap_delete(DLManagedTensorVersioned *m)
{
    heap_tensor *h = m->manager_ctx;

    foreign_deleted++;
    free(h->data);
    free(h);
}

static void foreign_memory(void)
{
    foreign f;
    tendo_tensor *e, *e2;
    float got[6];
    heap_tensor *h = calloc(1, sizeof *h);

    /* heap memory, handed over: freed through several views */
    h->data = malloc(5 * sizeof(float));
    for (int i = 0; i < 5; i++)
        h->data[i] = 10.0f + (float)i;
    h->shape[0] = 5;
    h->m = (DLManagedTensorVersioned){{1, 0}, h, heap_delete, 0,
                                       {h->data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, h->shape, NULL, 0}};
    foreign_deleted = 0;
    e = tendo_from_dlpack_versioned(&h->m);
    e2 = e ? out(tendo__flip(in(e), 0)) : NULL;
    tendo_tensor_free(e);
    e = e2;
    e2 = e ? out(tendo__slice(in(e), 0, 0, 5, 2)) : NULL; /* [14, 12, 10] */
    tendo_tensor_free(e);
    ok(e2 && foreign_deleted == 0 && values(e2, got, 3) && got[0] == 14 && got[2] == 10 &&
           tendo_tensor_data(e2) == h->data + 4,
       "foreign heap memory (NULL strides) imports without a copy; a reversed view outlives the import");
    tendo_tensor_free(e2);
    ok(foreign_deleted == 1, "  the producer's deleter runs once, with the last view: %d", foreign_deleted);

    /* NULL strides, legacy form */
    foreign_init(&f);
    f.l.dl_tensor.strides = NULL;
    foreign_deleted = 0;
    e = tendo_from_dlpack(&f.l);
    ok(e && tendo_tensor_stride(e)[0] == 3 && tendo_tensor_stride(e)[1] == 1 && tendo_tensor_data(e) == f.buf &&
           values(e, got, 6) && got[5] == 5 && foreign_deleted == 0,
       "legacy with NULL strides imports as row-major [2,3] over the producer's memory");
    tendo_tensor_free(e);
    ok(foreign_deleted == 1, "  deleter called once on free: %d", foreign_deleted);

    /* byte_offset, column-major strides, a newer minor version, IS_COPIED */
    foreign_init(&f);
    f.v.version.minor = 7;
    f.v.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    f.v.dl_tensor.byte_offset = 2 * sizeof(float);
    f.strides[0] = 1, f.strides[1] = 2; /* [[2,4,6],[3,5,7]] */
    foreign_deleted = 0;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && tendo_tensor_data(e) == f.buf + 2 && values(e, got, 6) && got[0] == 2 && got[1] == 4 && got[3] == 3 &&
           got[5] == 7,
       "byte_offset and column-major strides are honoured (version 1.7, IS_COPIED accepted)%s%s", e ? "" : ": ",
       e ? "" : msg());
    tendo_tensor_free(e);
    ok(foreign_deleted == 1, "  deleter called once: %d", foreign_deleted);

    /* pinned host memory is CPU memory */
    foreign_init(&f);
    f.v.dl_tensor.device.device_type = kDLCUDAHost;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && tendo_tensor_device(e).type == TENDO_CPU && tendo_tensor_data(e) == f.buf,
       "kDLCUDAHost (pinned host memory) imports as a CPU tensor%s%s", e ? "" : ": ", e ? "" : msg());
    tendo_tensor_free(e);

    /* a NULL deleter: nothing to call */
    foreign_init(&f);
    f.v.deleter = NULL;
    foreign_deleted = 0;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && values(e, got, 6) && got[4] == 4, "a NULL deleter is accepted");
    tendo_tensor_free(e);
    ok(foreign_deleted == 0, "  and nothing is called when the tensor is freed");

    /* empty with NULL data (as DLPack asks) */
    foreign_init(&f);
    f.shape[0] = 0;
    f.v.dl_tensor.data = NULL;
    foreign_deleted = 0;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && tendo_tensor_numel(e) == 0 && tendo_tensor_shape(e)[1] == 3 && tendo_tensor_data(e) != NULL &&
           values(e, got, 0),
       "an empty tensor with NULL data imports (and tendo gives it an address)");
    tendo_tensor_free(e);
    ok(foreign_deleted == 1, "  deleter called once: %d", foreign_deleted);

    /* a 0-d tensor with NULL strides and shape */
    foreign_init(&f);
    f.v.dl_tensor.ndim = 0;
    f.v.dl_tensor.shape = NULL;
    f.v.dl_tensor.strides = NULL;
    f.v.dl_tensor.data = f.buf + 3;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && tendo_tensor_ndim(e) == 0 && values(e, got, 1) && got[0] == 3,
       "a 0-d tensor with NULL shape and strides imports");
    tendo_tensor_free(e);
}

/* ---- bad input --------------------------------------------------------------------------- */

/* Imports f in the form(s) asked for, expecting a refusal of kind want whose
 * message contains needle, with f untouched and no deleter called. */
static void refuse(foreign *f, bool versioned, bool legacy, tendo_status want, const char *needle,
                   const char *what)
{
    foreign before;

    memcpy(&before, f, sizeof before);
    foreign_deleted = 0;
    if (versioned) {
        tendo_tensor *e;

        tendo_clear_error();
        e = tendo_from_dlpack_versioned(&f->v);
        ok(!e && status() == want && strstr(msg(), needle) && memcmp(&before, f, sizeof before) == 0 &&
               foreign_deleted == 0,
           "%s: refused (versioned) with %s: %s", what, tendo_status_str(want), msg());
        tendo_tensor_free(e);
    }
    if (legacy) {
        tendo_tensor *e;

        f->l.dl_tensor = f->v.dl_tensor;
        memcpy(&before, f, sizeof before);
        tendo_clear_error();
        e = tendo_from_dlpack(&f->l);
        ok(!e && status() == want && strstr(msg(), needle) && memcmp(&before, f, sizeof before) == 0 &&
               foreign_deleted == 0,
           "%s: refused (legacy) with %s: %s", what, tendo_status_str(want), msg());
        tendo_tensor_free(e);
    }
}

static void bad_input(void)
{
    foreign f;
    void *p;
    tendo_tensor *e;
    int64_t to_null; /* a stride from f.buf to address 0 */

    ok(tendo_from_dlpack_versioned(NULL) == NULL && status() == TENDO_ERR_INVALID_ARG && strstr(msg(), "NULL"),
       "from_dlpack_versioned(NULL): TENDO_ERR_INVALID_ARG: %s", msg());
    ok(tendo_from_dlpack(NULL) == NULL && status() == TENDO_ERR_INVALID_ARG && strstr(msg(), "NULL"),
       "from_dlpack(NULL): TENDO_ERR_INVALID_ARG: %s", msg());
    ok(tendo_to_dlpack_versioned(NULL) == NULL && status() == TENDO_ERR_INVALID_ARG,
       "to_dlpack_versioned(NULL): TENDO_ERR_INVALID_ARG: %s", msg());
    ok(tendo_to_dlpack(NULL) == NULL && status() == TENDO_ERR_INVALID_ARG,
       "to_dlpack(NULL): TENDO_ERR_INVALID_ARG: %s", msg());

    foreign_init(&f);
    f.v.version.major = 2;
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "version 2.0", "major version 2");
    foreign_init(&f);
    f.v.version.major = 0;
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "version 0.", "major version 0");
    foreign_init(&f);
    f.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "read-only", "DLPACK_FLAG_BITMASK_READ_ONLY");
    foreign_init(&f);
    f.v.flags = (uint64_t)1 << 40;
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "0x10000000000", "an unknown flag bit");

    foreign_init(&f);
    f.v.dl_tensor.ndim = TENDO_MAX_DIMS + 1;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "ndim 9", "ndim 9");
    foreign_init(&f);
    f.v.dl_tensor.ndim = -1;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "ndim -1", "ndim -1");
    foreign_init(&f);
    f.v.dl_tensor.shape = NULL;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "shape is NULL", "NULL shape");
    foreign_init(&f);
    f.shape[1] = -3;
    refuse(&f, true, true, TENDO_ERR_SHAPE, "negative size -3", "a negative size");
    foreign_init(&f);
    f.shape[0] = (int64_t)1 << 62, f.shape[1] = 4;
    refuse(&f, true, true, TENDO_ERR_SHAPE, "2^63-1", "more than 2^63-1 elements");

    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLFloat, 128, 1};
    refuse(&f, true, true, TENDO_ERR_UNSUPPORTED, "float128", "kDLFloat 128 bits");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLUInt, 128, 1}; /* no table of dtypes has it */
    refuse(&f, true, true, TENDO_ERR_UNSUPPORTED, "uint128", "kDLUInt 128 bits");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLBfloat, 32, 1};
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "bfloat32", "kDLBfloat 32 bits");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLBool, 16, 1};
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "bool (16 bits)", "kDLBool of 16 bits");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLFloat8_e4m3fnuz, 8, 1};
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "float8_e4m3fnuz", "kDLFloat8_e4m3fnuz (not OCP's e4m3fn)");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLFloat8_e5m2fnuz, 8, 1};
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "float8_e5m2fnuz", "kDLFloat8_e5m2fnuz");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 4};
    refuse(&f, true, true, TENDO_ERR_UNSUPPORTED, "x4 lanes", "a vector dtype (4 lanes)");
    foreign_init(&f);
    f.v.dl_tensor.dtype = (DLDataType){200, 8, 1};
    refuse(&f, true, false, TENDO_ERR_UNSUPPORTED, "type code 200", "an unknown type code");

    foreign_init(&f);
    f.v.dl_tensor.device = (DLDevice){kDLROCM, 0};
    refuse(&f, true, true, TENDO_ERR_DEVICE, "kDLROCM:0", "a ROCm tensor");
    foreign_init(&f);
    f.v.dl_tensor.device = (DLDevice){(DLDeviceType)99, 0};
    refuse(&f, true, false, TENDO_ERR_DEVICE, "device type 99", "an unknown device type");
    foreign_init(&f);
    f.v.dl_tensor.device = (DLDevice){kDLCPU, 1};
    refuse(&f, true, false, TENDO_ERR_DEVICE, "cpu:1", "CPU device_id 1");
    if (!tendo_cuda_available()) {
        foreign_init(&f);
        f.v.dl_tensor.device = (DLDevice){kDLCUDA, 0};
        refuse(&f, true, true, TENDO_ERR_DEVICE, "cuda:0", "a CUDA tensor in a build or machine without CUDA");
    } else {
        skip(2, "CUDA is available");
    }

    foreign_init(&f);
    f.v.dl_tensor.data = NULL;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "data is NULL", "NULL data for 6 elements");
    foreign_init(&f);
    f.v.dl_tensor.data = (char *)f.buf + 1;
    refuse(&f, true, true, TENDO_ERR_UNSUPPORTED, "not aligned", "data not aligned to the element size");
    foreign_init(&f);
    f.v.dl_tensor.byte_offset = 2;
    refuse(&f, true, true, TENDO_ERR_UNSUPPORTED, "not aligned", "byte_offset not a multiple of the element size");
    foreign_init(&f);
    f.v.dl_tensor.byte_offset = UINT64_MAX - 2;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "past the address space", "byte_offset past the address space");
    foreign_init(&f);
    f.strides[0] = INT64_MAX / 2;
    f.shape[0] = 4;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "outside the address space", "strides that overflow");
    foreign_init(&f);
    f.strides[0] = -((int64_t)1 << 61);
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "outside the address space", "negative strides below address 0");
    foreign_init(&f); /* the lowest element exactly at address 0 (NULL): found by fuzz-dlpack */
    to_null = -(int64_t)((uintptr_t)f.buf / sizeof(float));
    f.strides[0] = to_null;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "outside the address space", "an element at address 0");
    foreign_init(&f); /* one element above address 0 is an address like any other */
    f.strides[0] = to_null + 1;
    foreign_deleted = 0;
    e = tendo_from_dlpack_versioned(&f.v);
    ok(e && tendo_tensor_data(e) == (void *)f.buf && tendo_tensor_stride(e)[0] == f.strides[0],
       "the lowest element one element above address 0: imported, element 0 at data");
    tendo_tensor_free(e);
    ok(foreign_deleted == 1, "  deleter called once on free: %d", foreign_deleted);
    foreign_init(&f);
    p = (void *)(UINTPTR_MAX - 15); /* 4-byte aligned, 16 bytes below the top */
    f.v.dl_tensor.data = p;
    refuse(&f, true, true, TENDO_ERR_INVALID_ARG, "outside the address space",
           "elements past the top of the address space");
}

/* ---- the table ------------------------------------------------------------------------------ */

static void dtype_codes(void)
{
    ok(!TENDO_H_HAS_DLPACK, "<tendo.h> does not include the DLPack header (it is opt-in)");
    ok(DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 0 && kDLBfloat == 4 && kDLFloat == 2 &&
           kDLCUDAManaged == 13 && sizeof(DLDataType) == 4,
       "the header declares DLPack %d.%d (kDLFloat 2, kDLBfloat 4, kDLCUDAManaged 13)", DLPACK_MAJOR_VERSION,
       DLPACK_MINOR_VERSION);
    /* dlpack 1.1's DLDataTypeCode, the numbers themselves (the table's
     * dlpack_code must agree with them, not with the header tendo ships) */
    ok(kDLInt == 0 && kDLUInt == 1 && kDLBool == 6 && kDLFloat8_e4m3fn == 10 && kDLFloat8_e5m2 == 12,
       "kDLInt 0, kDLUInt 1, kDLBool 6, kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12 (DLPack 1.1)");
    {
        int bad = 0;
#define CODE_OK(name, NAME, ct, np, st, dl_code, dl_bits)                                               \
    bad += !(strcmp(#name, "bool") ? strcmp(#name, "f8e4m3") ? strcmp(#name, "f8e5m2") ? strcmp(#name, "bf16")  \
                 ? (#name[0] == 'i' ? dl_code == kDLInt : #name[0] == 'u' ? dl_code == kDLUInt : dl_code == kDLFloat) \
                 : dl_code == kDLBfloat : dl_code == kDLFloat8_e5m2 : dl_code == kDLFloat8_e4m3fn : dl_code == kDLBool && dl_bits == 8);
        TENDO_FOREACH_DTYPE_INFO(CODE_OK)
#undef CODE_OK
        ok(bad == 0, "every dtype's DLPack code is its kind's (ints kDLInt, u8 kDLUInt, bool kDLBool 8 bits, fp8 the OCP codes): %d bad", bad);
    }
#ifdef TENDO_HAVE_F32
    {
        tendo_tensor *t = make(SCALAR, TENDO_F32);
        DLManagedTensorVersioned *v = tendo_to_dlpack_versioned(t);
        ok(v && v->dl_tensor.dtype.code == kDLFloat && v->dl_tensor.dtype.bits == 32, "f32 is kDLFloat 32 bits");
        v->deleter(v);
        tendo_tensor_free(t);
    }
#endif
#ifdef TENDO_HAVE_F16
    {
        tendo_tensor *t = make(SCALAR, TENDO_F16);
        DLManagedTensorVersioned *v = tendo_to_dlpack_versioned(t);
        ok(v && v->dl_tensor.dtype.code == kDLFloat && v->dl_tensor.dtype.bits == 16, "f16 is kDLFloat 16 bits");
        v->deleter(v);
        tendo_tensor_free(t);
    }
#endif
#ifdef TENDO_HAVE_BF16
    {
        tendo_tensor *t = make(SCALAR, TENDO_BF16);
        DLManagedTensor *l = tendo_to_dlpack(t);
        ok(l && l->dl_tensor.dtype.code == kDLBfloat && l->dl_tensor.dtype.bits == 16 &&
               l->dl_tensor.dtype.lanes == 1,
           "bf16 is kDLBfloat 16 bits");
        l->deleter(l);
        tendo_tensor_free(t);
    }
#endif
}

int main(void)
{
    plan_lazy();
    dtype_codes();
#define ROUND_TRIPS(name, NAME, ct, np, st, dl_code, dl_bits)                                     \
    for (int k = 0; k < NLAYOUTS; k++)                                                             \
        round_trip(TENDO_##NAME, #name, dl_code, dl_bits, k);
    TENDO_FOREACH_DTYPE_INFO(ROUND_TRIPS)
#undef ROUND_TRIPS
    chains();
    foreign_memory();
    bad_input();
    return done_testing();
}
