/* src/core/join.c - cat, stack, copy_into, tril and triu, once for every
 * dtype (by element size; see core/index.h).
 *
 * cat and stack copy each input into its slice of the result, and
 * copy_into copies into a caller's view: all three are one strided copy
 * (the elementwise iteration of core/iter.h with a copy loop per element
 * width on the CPU, the device table's copy on a GPU, which broadcasts
 * the same way).  tril/triu copy, then zero what they drop (all-zero
 * bytes are 0 in every dtype; on a GPU through the device's tri_zero).
 */
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/index.h"
#include "core/iter.h"

#define COPY_LOOP(T)                                                     \
    static void copy_##T(char *const *p, const int64_t *s, int64_t n, void *ctx) \
    {                                                                    \
        T *o = (T *)(void *)p[0];                                        \
        const T *a = (const T *)(const void *)p[1];                      \
        (void)ctx;                                                       \
        if (s[0] == 1 && s[1] == 1) {                                    \
            memmove(o, a, (size_t)n * sizeof *o);                        \
            return;                                                      \
        }                                                                \
        for (int64_t i = 0; i < n; i++)                                  \
            o[i * s[0]] = a[i * s[1]];                                   \
    }

COPY_LOOP(uint8_t)
COPY_LOOP(uint16_t)
COPY_LOOP(uint32_t)
COPY_LOOP(uint64_t)

/* out = in broadcast to out's shape, any strides (checked by the caller). */
static bool copy_view(const char *op, tendo__tensor *out, const tendo__tensor *in)
{
    tendo__iter it;
    tendo__loop_fn fn;

    if (out->numel == 0)
        return true;
    if (out->storage->device.type != TENDO_CPU)
        return tendo__device_ops_of(out->storage->device.type)->copy(op, out, in);
    switch (tendo_dtype_size(out->dtype)) {
    case 1: fn = copy_uint8_t; break;
    case 2: fn = copy_uint16_t; break;
    case 4: fn = copy_uint32_t; break;
    default: fn = copy_uint64_t; break;
    }
    tendo__iter_build(&it, out, 1, &in);
    tendo__iter_run(&it, fn, NULL);
    return true;
}

tendo_status tendo__copy_into(const char *op, tendo__tensor *dst, const tendo__tensor *src)
{
    tendo__op_scope s = tendo__op_begin();

    if (!tendo__check_tensor(op, "dst", dst) || !tendo__check_tensor(op, "src", src))
        return TENDO_ERR_INVALID_ARG;
    if (src->dtype != dst->dtype)
        return tendo__fail(TENDO_ERR_DTYPE, op, "src has dtype %s, dst %s", tendo_dtype_name(src->dtype),
                           tendo_dtype_name(dst->dtype));
    if (!tendo__check_inputs(op, 1, &src))
        return tendo_error_status(tendo_last_error());
    /* dst's own shape, so that only src broadcasts; and dst has no
     * repeated elements and overlaps src not at all or exactly */
    if (!tendo__broadcasts_to(op, src, dst) || !tendo__check_out(op, dst, dst->ndim, dst->shape, 1, &src))
        return tendo_error_status(tendo_last_error());
    if (!copy_view(op, dst, src))
        return tendo_error_status(tendo_last_error());
    tendo__op_end(s, op, dst, src, NULL);
    return TENDO_OK;
}

tendo__tensor *tendo__join(const char *op, const tendo__tensor *const *ts, int n, int dim, bool stack)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t shape[TENDO_MAX_DIMS];
    const tendo__tensor *t0;
    tendo__tensor *out, part;
    int nd;

    if (!ts)
        return (tendo__fail(TENDO_ERR_INVALID_ARG, op, "the array of tensors is NULL"), NULL);
    if (n < 1)
        return (tendo__fail(TENDO_ERR_INVALID_ARG, op, "needs at least one tensor, got n = %d", n), NULL);
    for (int i = 0; i < n; i++)
        if (!ts[i])
            return (tendo__fail(TENDO_ERR_INVALID_ARG, op, "tensor %d of %d is NULL", i, n), NULL);
    t0 = ts[0];
    nd = t0->ndim + (stack ? 1 : 0);
    if (nd > TENDO_MAX_DIMS)
        return (tendo__fail(TENDO_ERR_SHAPE, op, "stacking %d-D tensors passes %d dims", t0->ndim,
                            TENDO_MAX_DIMS), NULL);
    if (!stack && t0->ndim == 0)
        return (tendo__fail(TENDO_ERR_SHAPE, op, "cannot join 0-d tensors (stack them)"), NULL);
    if (stack && (dim < -nd || dim >= nd))
        return (tendo__fail(TENDO_ERR_INVALID_ARG, op, "dim %d is out of range for stacking shape %s (expected %d..%d)",
                            dim, tendo__shape_str(t0->ndim, t0->shape).s, -nd, nd - 1),
                NULL);
    if ((dim = tendo__wrap_dim(op, dim, nd, t0->shape)) < 0)
        return NULL;
    for (int i = 0; i < n; i++) {
        const tendo__tensor *t = ts[i];
        bool same = t->ndim == t0->ndim && t->dtype == t0->dtype;

        for (int d = 0; same && d < t0->ndim; d++)
            same = t->shape[d] == t0->shape[d] || (!stack && d == dim);
        if (!same)
            return (tendo__fail(TENDO_ERR_SHAPE, op, "tensor %d has shape %s, tensor 0 %s: want %s", i,
                                tendo__shape_str(t->ndim, t->shape).s, tendo__shape_str(t0->ndim, t0->shape).s,
                                stack ? "the same shape" : "the same sizes but along dim"),
                    NULL);
        if (!tendo_device_equal(t->storage->device, t0->storage->device))
            return (tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "tensor %d is on %s, tensor 0 on %s", i,
                                tendo_device_str(t->storage->device), tendo_device_str(t0->storage->device)),
                    NULL);
    }
    if (!tendo__check_device(op, t0->storage->device))
        return NULL;
    /* the result's shape */
    for (int d = 0, j = 0; d < nd; d++)
        shape[d] = stack && d == dim ? n : t0->shape[j++];
    if (!stack) {
        int64_t total = 0;
        for (int i = 0; i < n; i++)
            if (__builtin_add_overflow(total, ts[i]->shape[dim], &total))
                return (tendo__fail(TENDO_ERR_SHAPE, op, "the sizes along dim %d overflow", dim), NULL);
        shape[dim] = total;
    }
    if (!(out = tendo__tensor_new(op, t0->dtype, nd, shape, t0->storage->device)))
        return NULL;
    /* each input into its slice: a header on the stack over out's storage */
    for (int64_t i = 0, at = 0; i < n; i++) {
        part = *out;
        if (stack) {
            part.ndim = nd - 1;
            for (int d = dim; d < nd - 1; d++) {
                part.shape[d] = out->shape[d + 1];
                part.stride[d] = out->stride[d + 1];
            }
            part.offset = out->offset + i * out->stride[dim];
        } else {
            part.shape[dim] = ts[i]->shape[dim];
            part.offset = out->offset + at * out->stride[dim];
            at += ts[i]->shape[dim];
        }
        part.numel = ts[i]->numel;
        if (!copy_view(op, &part, ts[i])) {
            tendo__tensor_free(out);
            return NULL;
        }
    }
    return tendo__op_end(s, op, out, t0, n > 1 ? ts[1] : NULL);
}

tendo__tensor *tendo__tri(const char *op, const tendo__tensor *a, int64_t k, bool upper)
{
    tendo__op_scope s = tendo__op_begin();
    tendo__tensor *out;
    int64_t R, C, rows;
    size_t el;
    char *p;

    if (!tendo__check_inputs(op, 1, &a))
        return NULL;
    if (a->ndim < 2)
        return (tendo__fail(TENDO_ERR_SHAPE, op, "a has shape %s, want at least 2 dims",
                            tendo__shape_str(a->ndim, a->shape).s),
                NULL);
    if (!(out = tendo__tensor_new(op, a->dtype, a->ndim, a->shape, a->storage->device)))
        return NULL;
    if (out->numel == 0)
        return tendo__op_end(s, op, out, a, NULL);
    if (out->storage->device.type != TENDO_CPU) { /* a copy, then a kernel zeroing in place */
        const tendo__device_ops *dev = tendo__device_ops_of(out->storage->device.type);
        if (!dev->tri_zero) {
            tendo__fail(TENDO_ERR_UNSUPPORTED, op, "not implemented on %s", tendo_device_str(out->storage->device));
            tendo__tensor_free(out);
            return NULL;
        }
        if (!copy_view(op, out, a) || !dev->tri_zero(op, out, k, upper)) {
            tendo__tensor_free(out);
            return NULL;
        }
        return tendo__op_end(s, op, out, a, NULL);
    }
    tendo__copy_to_dense(a, tendo__tensor_data(out));
    R = a->shape[a->ndim - 2];
    C = a->shape[a->ndim - 1];
    rows = out->numel / C;
    el = tendo_dtype_size(a->dtype);
    p = tendo__tensor_data(out);
    /* clamp k so that r + k cannot overflow: past +-(R + C) every k acts the same */
    if (k > R + C)
        k = R + C;
    if (k < -(R + C))
        k = -(R + C);
    for (int64_t row = 0; row < rows; row++) {
        int64_t r = row % R, lo, hi; /* zero columns [lo, hi) */
        char *line = p + row * C * (int64_t)el;

        if (upper) { /* keep c >= r + k */
            lo = 0;
            hi = r + k < 0 ? 0 : r + k > C ? C : r + k;
        } else { /* keep c <= r + k */
            lo = r + k + 1 < 0 ? 0 : r + k + 1 > C ? C : r + k + 1;
            hi = C;
        }
        if (hi > lo)
            memset(line + lo * (int64_t)el, 0, (size_t)(hi - lo) * el);
    }
    return tendo__op_end(s, op, out, a, NULL);
}
