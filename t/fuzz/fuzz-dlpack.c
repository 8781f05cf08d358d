/* t/fuzz/fuzz-dlpack.c - tendo_from_dlpack_versioned and tendo_from_dlpack
 * on DLPack structs built from arbitrary bytes.
 *
 * The bytes choose every field a producer fills in: version, flags, ndim
 * (-128..127, with a shape array (or NULL) of exactly that many entries, so that a
 * read past ndim shows), dtype code/bits/lanes, device, shape and strides
 * (small or any 64-bit value), byte_offset, data (inside a buffer this
 * harness owns, or NULL), and the deleter.  Or they rewrite a tensor tendo
 * exported itself, which import recognises.  The promises checked
 * (tendo/dlpack.h): a refusal has a documented status and never calls the
 * deleter; an import views exactly the elements described and calls the
 * deleter exactly once, when its last view is freed.  The harness reads
 * elements only where the layout lies inside its own buffer.
 */
#include <string.h>

#include <tendo/dlpack.h>

#include "fuzz.h"

enum { BUF = 4096 };
static _Alignas(64) unsigned char buffer[BUF];

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t take(input *in, int bytes)
{
    uint64_t v = 0;

    for (int i = 0; i < bytes; i++) {
        v = v << 8 | (in->n ? *in->p : 0);
        if (in->n) {
            in->p++;
            in->n--;
        }
    }
    return v;
}

/* A size or stride: mostly small, sometimes any 64-bit value. */
static int64_t take_dim(input *in, bool signed_small)
{
    uint8_t tag = (uint8_t)take(in, 1);

    if (tag >= 0xf0)
        return (int64_t)take(in, 8);
    return signed_small ? (int64_t)(int8_t)tag % 9 : tag % 9;
}

static int deleted; /* calls of the harness's deleters */

static void deleter_v(DLManagedTensorVersioned *m) { (void)m, deleted++; }
static void deleter_l(DLManagedTensor *m) { (void)m, deleted++; }

/* Whether elements described by dl all lie in [lo, lo + len). */
static bool inside(const DLTensor *dl, const int64_t *strides, size_t elsize, const unsigned char *lo, size_t len)
{
    __int128 first = (__int128)(intptr_t)((const char *)dl->data - (const char *)lo) + (__int128)dl->byte_offset,
             min = 0, max = 0;

    for (int d = 0; d < dl->ndim; d++) {
        __int128 reach;

        if (dl->shape[d] == 0)
            return true;
        reach = (__int128)strides[d] * (dl->shape[d] - 1);
        if (reach < 0)
            min += reach;
        else
            max += reach;
    }
    return first + min * (__int128)elsize >= 0 && first + (max + 1) * (__int128)elsize <= (__int128)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    uint8_t mode = (uint8_t)take(&in, 1);
    bool legacy = mode & 1, null_data = mode & 2, null_strides = mode & 4, null_deleter = mode & 8,
         own = mode & 16;
    int ndim = (int8_t)take(&in, 1);
    DLManagedTensorVersioned v;
    DLManagedTensor l;
    DLTensor *dl = legacy ? &l.dl_tensor : &v.dl_tensor, desc;
    int64_t *shape = NULL, *strides = NULL, contiguous[TENDO_MAX_DIMS];
    const unsigned char *region = buffer;
    size_t region_len = BUF;
    tensor_f32 *exported_src = NULL;
    DLManagedTensorVersioned *mine = NULL;
    tendo_tensor *t;
    tendo_dtype dt;
    int64_t numel = 1;
    size_t elsize;

    memset(&v, 0, sizeof v);
    memset(&l, 0, sizeof l);
    deleted = 0;
    v.version.major = (uint8_t)take(&in, 1) == 0xff ? (uint32_t)take(&in, 4) : 1;
    v.version.minor = (uint32_t)take(&in, 1);
    v.flags = take(&in, 1);
    if (v.flags & 0x80)
        v.flags |= (uint64_t)1 << (take(&in, 1) % 64);
    dl->dtype.code = (uint8_t)take(&in, 1);
    dl->dtype.bits = (uint8_t)take(&in, 1);
    dl->dtype.lanes = (uint16_t)take(&in, 2);
    dl->device.device_type = (DLDeviceType)(int32_t)(int8_t)take(&in, 1);
    dl->device.device_id = (int32_t)(int8_t)take(&in, 1);
    /* a real GPU would be handed host addresses as device memory */
    if ((dl->device.device_type == kDLCUDA || dl->device.device_type == kDLCUDAManaged) &&
        tendo_cuda_device_count() > 0)
        dl->device.device_type = kDLCPU;
    dl->byte_offset = take(&in, 1);
    if (dl->byte_offset >= 0xf0)
        dl->byte_offset = take(&in, 8);
    dl->ndim = ndim;
    if (ndim > 0) {
        shape = malloc((size_t)ndim * sizeof *shape);
        strides = malloc((size_t)ndim * sizeof *strides);
        fuzz_check(shape && strides, "out of memory");
        for (int d = 0; d < ndim; d++) {
            shape[d] = take_dim(&in, false);
            strides[d] = take_dim(&in, true);
        }
    }
    if (own) { /* rewrite a tensor tendo exported: import may see it as its own */
        exported_src = tensor_f32_empty(TENDO_SHAPE(64), tendo_cpu());
        fuzz_check(exported_src != NULL, "empty: %s", tendo_error_message(tendo_last_error()));
        mine = tendo_to_dlpack_versioned(tensor_f32_erase(exported_src));
        fuzz_check(mine != NULL, "export: %s", tendo_error_message(tendo_last_error()));
        region = tendo_tensor_data(tensor_f32_erase(exported_src));
        region_len = 64 * sizeof(float);
        /* (a kDLBool producer's bytes are 0 or 1, as a C bool's must be: an
         * import is a view and reads nothing, so that is the producer's
         * promise, not something tendo checks) */
        memset((void *)region, v.dl_tensor.dtype.code == 6 ? 1 : 0x3c, region_len);
        tensor_f32_free(exported_src); /* the export holds the storage */
        legacy = false;
        null_deleter = false;
        dl = &mine->dl_tensor;
        *dl = v.dl_tensor;
        mine->flags = v.flags;
        mine->version = v.version;
    }
    dl->data = null_data ? NULL : (void *)(region + take(&in, 1) % region_len);
    dl->shape = mode & 32 ? NULL : shape;
    dl->strides = null_strides ? NULL : strides;
    v.deleter = null_deleter ? NULL : deleter_v;
    l.deleter = null_deleter ? NULL : deleter_l;

    desc = *dl; /* a successful import of tendo's own export frees mine */
    dl = &desc;
    t = own ? tendo_from_dlpack_versioned(mine) : legacy ? tendo_from_dlpack(&l) : tendo_from_dlpack_versioned(&v);
    fuzz_check(deleted == 0, "the deleter ran %d times during import", deleted);
    if (!t) {
        tendo_status st = tendo_error_status(tendo_last_error());

        fuzz_check(st == TENDO_ERR_INVALID_ARG || st == TENDO_ERR_SHAPE || st == TENDO_ERR_UNSUPPORTED ||
                       st == TENDO_ERR_DEVICE || st == TENDO_ERR_OOM,
                   "status %s: %s", tendo_status_str(st), tendo_error_message(tendo_last_error()));
        if (own)
            mine->deleter(mine); /* a refusal leaves m the caller's */
        goto out;
    }
    /* an import is exactly what was described */
    fuzz_check(ndim >= 0 && ndim <= TENDO_MAX_DIMS, "ndim %d accepted", ndim);
    fuzz_check(tendo_tensor_ndim(t) == ndim, "ndim %d, not %d", tendo_tensor_ndim(t), ndim);
    dt = tendo_tensor_dtype(t);
    elsize = tendo_dtype_size(dt);
    fuzz_check(dl->dtype.lanes == 1 && (size_t)dl->dtype.bits == 8 * elsize, "dtype %u/%u/%u imported as %s",
               dl->dtype.code, dl->dtype.bits, dl->dtype.lanes, tendo_dtype_name(dt));
    for (int d = 0; d < ndim; d++) {
        fuzz_check(tendo_tensor_shape(t)[d] == shape[d], "dim %d: size %lld, not %lld", d,
                   (long long)tendo_tensor_shape(t)[d], (long long)shape[d]);
        fuzz_check(!__builtin_mul_overflow(numel, shape[d], &numel), "more than 2^63-1 elements accepted");
    }
    fuzz_check(tendo_tensor_numel(t) == numel, "numel");
    if (ndim > 0 && !dl->strides) { /* row-major */
        int64_t s = 1;

        for (int d = ndim - 1; d >= 0; d--) {
            contiguous[d] = s;
            s *= shape[d] ? shape[d] : 1;
        }
    }
    if (numel > 0) {
        const int64_t *want = dl->strides ? dl->strides : contiguous;

        for (int d = 0; d < ndim; d++)
            fuzz_check(shape[d] == 1 || tendo_tensor_stride(t)[d] == want[d], "dim %d: stride %lld, not %lld",
                       d, (long long)tendo_tensor_stride(t)[d], (long long)want[d]);
        fuzz_check(tendo_tensor_data(t) == (char *)dl->data + dl->byte_offset, "data %p, not %p + %llu",
                   tendo_tensor_data(t), dl->data, (unsigned long long)dl->byte_offset);
        if (numel <= 4096 && inside(dl, want, elsize, region, region_len)) {
            tendo_tensor *f = tendo_tensor_to_dtype(t, TENDO_F32);

            (void)fuzz_touch(t);
            fuzz_check(f != NULL, "to f32: %s", tendo_error_message(tendo_last_error()));
            tendo_tensor_free(f);
        }
    }
    {
        tendo_tensor *alias = tendo_tensor_alias(t);

        fuzz_check(alias != NULL, "alias: %s", tendo_error_message(tendo_last_error()));
        tendo_tensor_free(t);
        fuzz_check(own || deleted == 0, "the deleter ran while a view lives");
        tendo_tensor_free(alias);
        fuzz_check(own || deleted == (null_deleter ? 0 : 1), "the deleter ran %d times", deleted);
    }
out:
    free(shape);
    free(strides);
    return 0;
}
