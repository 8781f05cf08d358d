/* src/io/dlpack.c - DLPack export and import (see include/tendo/dlpack.h).
 *
 * Export: one malloc'd block holds the DLManagedTensor(Versioned), its
 * shape and strides arrays and a reference to the tensor's storage; its
 * deleter drops the reference and frees the block.
 *
 * Import: validate everything before touching anything, then wrap the
 * elements as storage (tendo__storage_wrap) whose last release calls the
 * producer's deleter.  The storage is created with a release that does
 * nothing and armed only once the tensor exists, so that a failure never
 * calls the deleter; for CUDA memory the deleter runs after tendo's work
 * on the device is done.  A tensor tendo itself exported is recognised by its
 * deleter and imported as a view of the original storage.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "tendo/dlpack.h"

/* The layout of the ABI as the specification gives it (LP64). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
_Static_assert(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
_Static_assert(offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor layout");
_Static_assert(offsetof(DLManagedTensorVersioned, flags) == 24 &&
                   offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
               "DLManagedTensorVersioned layout");
#endif

/* Flag bits this file knows the meaning of. */
#define KNOWN_FLAGS                                                                                \
    ((uint64_t)(DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED |                   \
                DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED))

/* ---- names for messages ---------------------------------------------------- */

typedef struct { char s[64]; } name_buf;

/* "float64", "bfloat16", "int32", "bool", "float8_e4m3fn", "float32 x4 lanes",
 * "type code 99 (8 bits)". */
static name_buf dl_dtype_name(DLDataType t)
{
    static const char *const names[] = {
        "int", "uint", "float", "opaque handle", "bfloat", "complex", "bool",
        "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
        "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
        "float4_e2m1fn",
    };
    static const unsigned char natural_bits[] = {0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8,
                                                 8, 8, 8, 6, 6, 4};
    name_buf b;
    int n;

    if (t.code >= sizeof names / sizeof names[0])
        n = snprintf(b.s, sizeof b.s, "type code %u (%u bits)", t.code, t.bits);
    else if (natural_bits[t.code] == 0 && t.code != kDLOpaqueHandle)
        n = snprintf(b.s, sizeof b.s, "%s%u", names[t.code], t.bits);
    else if (natural_bits[t.code] == t.bits)
        n = snprintf(b.s, sizeof b.s, "%s", names[t.code]);
    else
        n = snprintf(b.s, sizeof b.s, "%s (%u bits)", names[t.code], t.bits);
    if (t.lanes != 1 && n > 0 && (size_t)n < sizeof b.s)
        snprintf(b.s + n, sizeof b.s - (size_t)n, " x%u lanes", t.lanes);
    return b;
}

/* "kDLROCM:0", "device type 99:0". */
static name_buf dl_device_name(DLDevice d)
{
    static const char *const names[] = {
        NULL, "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", NULL, NULL, "kDLVulkan",
        "kDLMetal", "kDLVPI", "kDLROCM", "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged",
        "kDLOneAPI", "kDLWebGPU", "kDLHexagon", "kDLMAIA", "kDLTrn",
    };
    int type = (int)d.device_type;
    name_buf b;

    if (type >= 0 && (size_t)type < sizeof names / sizeof names[0] && names[type])
        snprintf(b.s, sizeof b.s, "%s:%d", names[type], (int)d.device_id);
    else
        snprintf(b.s, sizeof b.s, "device type %d:%d", type, (int)d.device_id);
    return b;
}

/* ---- dtypes and devices ------------------------------------------------------ */

static DLDataType dl_of_dtype(tendo_dtype dt)
{
#define DL_OF(name, NAME, ct, np, st, dl_code, dl_bits)                                            \
    if (dt == TENDO_##NAME)                                                                        \
        return (DLDataType){(uint8_t)(dl_code), (uint8_t)(dl_bits), 1};
    TENDO_FOREACH_DTYPE_INFO(DL_OF)
#undef DL_OF
    return (DLDataType){0, 0, 0};
}

/* The tendo dtype of t; false with TENDO_ERR_UNSUPPORTED naming it when
 * this build has none. */
static bool dtype_of_dl(const char *op, DLDataType t, tendo_dtype *out)
{
#define OF_DL(name, NAME, ct, np, st, dl_code, dl_bits)                                            \
    if (t.code == (dl_code) && t.bits == (dl_bits) && t.lanes == 1) {                              \
        *out = TENDO_##NAME;                                                                       \
        return true;                                                                               \
    }
    TENDO_FOREACH_DTYPE_INFO(OF_DL)
#undef OF_DL
#define LIST(name, NAME, ct, np, st, dl_code, dl_bits) " " #name
    tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                "dtype %s (DLPack code %u, %u bits, %u lanes) is not one this build of tendo has "
                "(it has" TENDO_FOREACH_DTYPE_INFO(LIST) ")",
                dl_dtype_name(t).s, t.code, t.bits, t.lanes);
#undef LIST
    return false;
}

static bool dl_of_device(const char *op, tendo_device d, DLDevice *out)
{
    switch (d.type) {
    case TENDO_CPU:
        *out = (DLDevice){kDLCPU, 0};
        return true;
    case TENDO_CUDA:
        *out = (DLDevice){kDLCUDA, d.index};
        return true;
    }
    tendo__fail(TENDO_ERR_DEVICE, op, "tensor on %s has no DLPack device", tendo_device_str(d));
    return false;
}

/* The tendo device for d, checked usable; false with TENDO_ERR_DEVICE. */
static bool device_of_dl(const char *op, DLDevice d, tendo_device *out)
{
    switch ((int)d.device_type) {
    case kDLCPU:
        *out = (tendo_device){TENDO_CPU, d.device_id};
        break;
    case kDLCUDAHost:
    case kDLROCMHost: /* pinned host memory: ordinary addresses for the CPU */
        *out = tendo_cpu();
        break;
    case kDLCUDA:
    case kDLCUDAManaged:
        *out = tendo_cuda(d.device_id);
        break;
    default:
        tendo__fail(TENDO_ERR_DEVICE, op, "DLPack device %s is not one tendo can use (CPU, CUDA)",
                    dl_device_name(d).s);
        return false;
    }
    return tendo__check_device(op, *out);
}

/* ---- export ---------------------------------------------------------------- */

typedef struct exported {
    union {
        DLManagedTensorVersioned v;
        DLManagedTensor l;
    } m; /* first: the pointer handed out is the block's */
    tendo__storage *storage;
    int64_t shape[TENDO_MAX_DIMS];
    int64_t strides[TENDO_MAX_DIMS];
} exported;

static void exported_free(exported *x)
{
    tendo__storage_release(x->storage);
    free(x);
}

static void delete_versioned(DLManagedTensorVersioned *self)
{
    if (self)
        exported_free(self->manager_ctx);
}

static void delete_legacy(DLManagedTensor *self)
{
    if (self)
        exported_free(self->manager_ctx);
}

/* A new export block for t with dl filled in (the caller fills the rest of
 * the managed struct); NULL with the error set. */
static exported *export_new(const char *op, const tendo_tensor *t, bool versioned)
{
    const tendo__tensor *c = (const tendo__tensor *)(const void *)t;
    DLTensor *dl;
    DLDevice dev;
    exported *x;

    if (!tendo__check_tensor(op, "t", c) || !dl_of_device(op, c->storage->device, &dev))
        return NULL;
    /* the consumer may read on any stream: tendo's queued writes land first */
    if (c->storage->device.type == TENDO_CUDA && tendo_sync(c->storage->device) != TENDO_OK)
        return NULL;
    x = tendo__calloc(1, sizeof *x);
    if (!x) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating a DLPack tensor");
        return NULL;
    }
    dl = versioned ? &x->m.v.dl_tensor : &x->m.l.dl_tensor;
    for (int i = 0; i < c->ndim; i++) {
        x->shape[i] = c->shape[i];
        x->strides[i] = c->stride[i];
    }
    dl->data = c->numel == 0 ? NULL
                             : (char *)c->storage->data + c->offset * (int64_t)tendo_dtype_size(c->dtype);
    dl->device = dev;
    dl->ndim = c->ndim;
    dl->dtype = dl_of_dtype(c->dtype);
    dl->shape = x->shape;
    dl->strides = x->strides;
    dl->byte_offset = 0;
    x->storage = tendo__storage_retain(c->storage);
    return x;
}

DLManagedTensorVersioned *tendo_to_dlpack_versioned(const tendo_tensor *t)
{
    exported *x = export_new("to_dlpack_versioned", t, true);

    if (!x)
        return NULL;
    x->m.v.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    x->m.v.manager_ctx = x;
    x->m.v.deleter = delete_versioned;
    x->m.v.flags = 0;
    return &x->m.v;
}

DLManagedTensor *tendo_to_dlpack(const tendo_tensor *t)
{
    exported *x = export_new("to_dlpack", t, false);

    if (!x)
        return NULL;
    x->m.l.manager_ctx = x;
    x->m.l.deleter = delete_legacy;
    return &x->m.l;
}

/* ---- import ---------------------------------------------------------------- */

/* Where an empty tensor's storage points when the producer gave NULL:
 * tendo's tensors always have an address. */
static _Alignas(TENDO__HOST_ALIGN) unsigned char no_elements[TENDO__HOST_ALIGN];

static void release_nothing(void *ctx, void *data, size_t nbytes)
{
    (void)ctx, (void)data, (void)nbytes;
}

/* Before the producer gets its memory back: waits for the work tendo
 * queued on it, which may still be pending on any thread's stream (the
 * producer may free or reuse the memory at once).  Wrapped memory has no
 * pool block to note its uses, so the whole device; a broken device runs
 * nothing more, and its error is the thread's last. */
static void wait_for_tendo(DLDevice d)
{
    if (d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged)
        (void)tendo_sync(tendo_cuda(d.device_id));
}

static void release_versioned(void *ctx, void *data, size_t nbytes)
{
    DLManagedTensorVersioned *m = ctx;

    (void)data, (void)nbytes;
    wait_for_tendo(m->dl_tensor.device);
    if (m->deleter)
        m->deleter(m);
}

static void release_legacy(void *ctx, void *data, size_t nbytes)
{
    DLManagedTensor *m = ctx;

    (void)data, (void)nbytes;
    wait_for_tendo(m->dl_tensor.device);
    if (m->deleter)
        m->deleter(m);
}

/* What import found out about a DLTensor, all validated. */
typedef struct {
    tendo_dtype dtype;
    tendo_device device;
    int ndim;
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS];
    int64_t numel;
    uintptr_t first; /* address of element 0 */
    uintptr_t base;  /* lowest address an element lies at */
    size_t nbytes;   /* bytes from base to the end of the highest element */
    int64_t offset;  /* element 0 from base, in elements */
} layout;

/* Fills *out from dl; false with the error set when tendo cannot view it. */
static bool read_layout(const char *op, const DLTensor *dl, layout *out)
{
    int64_t lo = 0, hi = 0, span, size;
    uintptr_t first = (uintptr_t)dl->data;
    size_t elsize;

    if (!dtype_of_dl(op, dl->dtype, &out->dtype) || !device_of_dl(op, dl->device, &out->device) ||
        !tendo__check_shape(op, dl->ndim, dl->shape, &out->numel))
        return false;
    elsize = tendo_dtype_size(out->dtype);
    out->ndim = dl->ndim;
    for (int i = 0; i < out->ndim; i++)
        out->shape[i] = dl->shape[i];
    if (out->ndim > 0 && dl->strides)
        memcpy(out->stride, dl->strides, (size_t)out->ndim * sizeof out->stride[0]);
    else
        tendo__contiguous_strides(out->ndim, out->shape, out->stride);
    if (out->numel == 0) { /* no element: any address and strides will do */
        out->first = out->base = dl->data ? first : (uintptr_t)no_elements;
        out->nbytes = 0;
        out->offset = 0;
        return true;
    }
    if (!dl->data) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "data is NULL for a tensor of shape %s",
                    tendo__shape_str(out->ndim, out->shape).s);
        return false;
    }
    if (dl->byte_offset > UINTPTR_MAX - first) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "byte_offset %llu takes data %p past the address space",
                    (unsigned long long)dl->byte_offset, dl->data);
        return false;
    }
    first += (uintptr_t)dl->byte_offset;
    if (first % elsize != 0) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                    "element 0 (data %p + byte_offset %llu) is not aligned to the %zu-byte elements of %s",
                    dl->data, (unsigned long long)dl->byte_offset, elsize, tendo_dtype_name(out->dtype));
        return false;
    }
    /* the elements reached: lo..hi elements from element 0 */
    for (int i = 0; i < out->ndim; i++) {
        int64_t reach;

        if (__builtin_mul_overflow(out->stride[i], out->shape[i] - 1, &reach) ||
            __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
            goto out_of_range;
    }
    if (__builtin_sub_overflow(hi, lo, &span) || __builtin_add_overflow(span, 1, &span) ||
        __builtin_mul_overflow(span, (int64_t)elsize, &size) || (uint64_t)-lo >= first / elsize ||
        (uint64_t)hi > (UINTPTR_MAX - first) / elsize) /* (the last two bound size too; no element
                                                           lies at address 0, which is NULL) */
        goto out_of_range;
    out->first = first;
    out->base = first - (uintptr_t)-lo * elsize;
    out->nbytes = (size_t)size;
    out->offset = -lo;
    return true;
out_of_range:
    tendo__fail(TENDO_ERR_INVALID_ARG, op, "strides %s of shape %s at %p reach outside the address space",
                tendo__shape_str(out->ndim, out->stride).s, tendo__shape_str(out->ndim, out->shape).s,
                (void *)first);
    return false;
}

/* For a tensor tendo exported: a view of the original storage when the
 * layout lies inside it; NULL (no error set) otherwise, or on OOM with it set. */
static tendo__tensor *import_own(const char *op, const layout *l, const exported *x, bool *oom)
{
    tendo__storage *s = x->storage;
    uintptr_t start = (uintptr_t)s->data;
    size_t elsize = tendo_dtype_size(l->dtype);
    int64_t offset = 0;
    tendo__tensor *t;

    if (!tendo_device_equal(s->device, l->device))
        return NULL;
    if (l->numel > 0) {
        if (l->base < start || l->base - start > s->nbytes || l->nbytes > s->nbytes - (l->base - start) ||
            (l->first - start) % elsize != 0)
            return NULL;
        offset = (int64_t)((l->first - start) / elsize);
    }
    t = tendo__tensor_over(op, s, l->dtype, l->ndim, l->shape, l->stride, offset);
    *oom = !t;
    return t;
}

/* The tensor over dl's elements; on success release(managed) is called
 * exactly once: now for tendo's own export x, else when the last view dies.
 * NULL with the error set, release not called. */
static tendo_tensor *import(const char *op, const DLTensor *dl, void *managed, tendo__release_fn release,
                            const exported *x)
{
    tendo__storage *s;
    tendo__tensor *t;
    layout l;

    if (!read_layout(op, dl, &l))
        return NULL;
    if (x) {
        bool oom = false;

        t = import_own(op, &l, x, &oom);
        if (oom)
            return NULL;
        if (t) {
            release(managed, NULL, 0); /* the view holds its own reference */
            return (tendo_tensor *)(void *)t;
        }
    }
    s = tendo__storage_wrap(op, (void *)l.base, l.nbytes, l.device, release_nothing, NULL);
    if (!s)
        return NULL;
    t = tendo__tensor_over(op, s, l.dtype, l.ndim, l.shape, l.stride, l.offset);
    if (t) { /* arm: from now on the last release calls the producer's deleter */
        s->release = release;
        s->release_ctx = managed;
    }
    tendo__storage_release(s);
    return (tendo_tensor *)(void *)t;
}

tendo_tensor *tendo_from_dlpack_versioned(DLManagedTensorVersioned *m)
{
    static const char op[] = "from_dlpack_versioned";

    if (!m) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "the DLManagedTensorVersioned is NULL");
        return NULL;
    }
    if (m->version.major != DLPACK_MAJOR_VERSION) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "DLPack version %u.%u is not supported (tendo reads %d.x)",
                    m->version.major, m->version.minor, DLPACK_MAJOR_VERSION);
        return NULL;
    }
    if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                    "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and tendo tensors are "
                    "writable; ask the producer for a copy");
        return NULL;
    }
    if (m->flags & ~KNOWN_FLAGS) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                    "unknown DLPack flags 0x%llx (DLPack %u.%u; tendo knows %d.%d)",
                    (unsigned long long)(m->flags & ~KNOWN_FLAGS), m->version.major, m->version.minor,
                    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
        return NULL;
    }
    return import(op, &m->dl_tensor, m, release_versioned,
                  m->deleter == delete_versioned ? m->manager_ctx : NULL);
}

tendo_tensor *tendo_from_dlpack(DLManagedTensor *m)
{
    static const char op[] = "from_dlpack";

    if (!m) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "the DLManagedTensor is NULL");
        return NULL;
    }
    return import(op, &m->dl_tensor, m, release_legacy, m->deleter == delete_legacy ? m->manager_ctx : NULL);
}
