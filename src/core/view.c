/* src/core/view.c - view operations: new handles on a tensor's storage with a
 * new shape, stride and offset.  Nothing here copies elements, except
 * reshape/flatten when the strides leave no choice. */
#include <string.h>

#include "core/internal.h"

/* reshape and view share everything but the fallback. */
static tendo__tensor *reshape_impl(const char *op, const tendo__tensor *t, int ndim,
                                   const int64_t *shape, bool may_copy)
{
    int64_t new_shape[TENDO_MAX_DIMS], new_stride[TENDO_MAX_DIMS];
    tendo__tensor *dense, *out;

    if (!tendo__check_tensor(op, "t", t) ||
        !tendo__infer_shape(op, t->ndim, t->shape, t->numel, ndim, shape, new_shape))
        return NULL;
    if (tendo__view_strides(t->ndim, t->shape, t->stride, ndim, new_shape, new_stride))
        return tendo__tensor_view(op, t, ndim, new_shape, new_stride, t->offset);
    if (!may_copy) {
        tendo__fail(TENDO_ERR_SHAPE, op,
                    "cannot view shape %s with strides %s as %s without a copy (use reshape)",
                    tendo__shape_str(t->ndim, t->shape).s, tendo__shape_str(t->ndim, t->stride).s,
                    tendo__shape_str(ndim, new_shape).s);
        return NULL;
    }
    dense = tendo__clone(op, t);
    if (!dense)
        return NULL;
    tendo__contiguous_strides(ndim, new_shape, new_stride);
    out = tendo__tensor_view(op, dense, ndim, new_shape, new_stride, 0);
    tendo__tensor_free(dense);
    return out;
}

tendo__tensor *tendo__reshape(const tendo__tensor *t, int ndim, const int64_t *shape)
{
    return reshape_impl("reshape", t, ndim, shape, true);
}

tendo__tensor *tendo__view(const tendo__tensor *t, int ndim, const int64_t *shape)
{
    return reshape_impl("view", t, ndim, shape, false);
}

tendo__tensor *tendo__flatten(const tendo__tensor *t, int start_dim, int end_dim)
{
    static const char op[] = "flatten";
    int64_t shape[TENDO_MAX_DIMS];
    int n = 0, ndim;

    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (t->ndim == 0) /* like torch: a scalar flattens to [1] */
        return reshape_impl(op, t, 1, (const int64_t[]){1}, true);
    ndim = t->ndim;
    if ((start_dim = tendo__wrap_dim(op, start_dim, ndim, t->shape)) < 0 ||
        (end_dim = tendo__wrap_dim(op, end_dim, ndim, t->shape)) < 0)
        return NULL;
    if (start_dim > end_dim) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "start_dim %d comes after end_dim %d for shape %s",
                    start_dim, end_dim, tendo__shape_str(ndim, t->shape).s);
        return NULL;
    }
    for (int i = 0; i < start_dim; i++)
        shape[n++] = t->shape[i];
    shape[n] = 1;
    for (int i = start_dim; i <= end_dim; i++)
        shape[n] *= t->shape[i];
    n++;
    for (int i = end_dim + 1; i < ndim; i++)
        shape[n++] = t->shape[i];
    return reshape_impl(op, t, n, shape, true);
}

tendo__tensor *tendo__transpose(const tendo__tensor *t, int d0, int d1)
{
    static const char op[] = "transpose";
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS], tmp;

    if (!tendo__check_tensor(op, "t", t) || (d0 = tendo__wrap_dim(op, d0, t->ndim, t->shape)) < 0 ||
        (d1 = tendo__wrap_dim(op, d1, t->ndim, t->shape)) < 0)
        return NULL;
    memcpy(shape, t->shape, sizeof shape);
    memcpy(stride, t->stride, sizeof stride);
    tmp = shape[d0], shape[d0] = shape[d1], shape[d1] = tmp;
    tmp = stride[d0], stride[d0] = stride[d1], stride[d1] = tmp;
    return tendo__tensor_view(op, t, t->ndim, shape, stride, t->offset);
}

tendo__tensor *tendo__permute(const tendo__tensor *t, const int *perm)
{
    static const char op[] = "permute";
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS];
    bool seen[TENDO_MAX_DIMS] = {false};

    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (t->ndim > 0 && !perm) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "perm is NULL for shape %s",
                    tendo__shape_str(t->ndim, t->shape).s);
        return NULL;
    }
    for (int i = 0; i < t->ndim; i++) {
        int d = perm[i] < 0 ? perm[i] + t->ndim : perm[i];

        if (d < 0 || d >= t->ndim || seen[d]) {
            int64_t p[TENDO_MAX_DIMS];
            for (int j = 0; j < t->ndim; j++)
                p[j] = perm[j];
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is not a permutation of the %d dims of shape %s",
                        tendo__shape_str(t->ndim, p).s, t->ndim, tendo__shape_str(t->ndim, t->shape).s);
            return NULL;
        }
        seen[d] = true;
        shape[i] = t->shape[d];
        stride[i] = t->stride[d];
    }
    return tendo__tensor_view(op, t, t->ndim, shape, stride, t->offset);
}

tendo__tensor *tendo__squeeze(const tendo__tensor *t, int dim)
{
    static const char op[] = "squeeze";
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS];
    int n = 0;

    if (!tendo__check_tensor(op, "t", t) || (dim = tendo__wrap_dim(op, dim, t->ndim, t->shape)) < 0)
        return NULL;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim && t->shape[i] == 1)
            continue;
        shape[n] = t->shape[i];
        stride[n++] = t->stride[i];
    }
    return tendo__tensor_view(op, t, n, shape, stride, t->offset);
}

tendo__tensor *tendo__unsqueeze(const tendo__tensor *t, int dim)
{
    static const char op[] = "unsqueeze";
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS];
    int n = 0;

    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (t->ndim == TENDO_MAX_DIMS) {
        tendo__fail(TENDO_ERR_SHAPE, op, "shape %s already has the maximum of %d dims",
                    tendo__shape_str(t->ndim, t->shape).s, TENDO_MAX_DIMS);
        return NULL;
    }
    if (dim < -(t->ndim + 1) || dim > t->ndim) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "dim %d is out of range for shape %s (expected %d..%d)",
                    dim, tendo__shape_str(t->ndim, t->shape).s, -(t->ndim + 1), t->ndim);
        return NULL;
    }
    if (dim < 0)
        dim += t->ndim + 1;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == dim) {
            shape[n] = 1;
            stride[n++] = i < t->ndim ? t->shape[i] * t->stride[i] : 1;
        }
        if (i < t->ndim) {
            shape[n] = t->shape[i];
            stride[n++] = t->stride[i];
        }
    }
    return tendo__tensor_view(op, t, n, shape, stride, t->offset);
}

tendo__tensor *tendo__narrow(const tendo__tensor *t, int dim, int64_t start, int64_t length)
{
    static const char op[] = "narrow";
    int64_t shape[TENDO_MAX_DIMS], size;

    if (!tendo__check_tensor(op, "t", t) || (dim = tendo__wrap_dim(op, dim, t->ndim, t->shape)) < 0)
        return NULL;
    size = t->shape[dim];
    if (start < -size || start > size) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "start %lld is out of range for dim %d of shape %s",
                    (long long)start, dim, tendo__shape_str(t->ndim, t->shape).s);
        return NULL;
    }
    if (start < 0)
        start += size;
    if (length < 0 || length > size - start) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op,
                    "start %lld + length %lld runs past the end of dim %d of shape %s",
                    (long long)start, (long long)length, dim, tendo__shape_str(t->ndim, t->shape).s);
        return NULL;
    }
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = length;
    /* an empty view keeps the offset: start*stride could point outside */
    return tendo__tensor_view(op, t, t->ndim, shape, t->stride,
                              length > 0 ? t->offset + start * t->stride[dim] : t->offset);
}

/* Python's rule for a slice bound: negative counts from the end, then clamp. */
static int64_t clamp_bound(int64_t i, int64_t size)
{
    if (i < 0)
        i = i + size < 0 ? 0 : i + size;
    return i > size ? size : i;
}

tendo__tensor *tendo__slice(const tendo__tensor *t, int dim, int64_t start, int64_t stop,
                            int64_t step)
{
    static const char op[] = "slice";
    int64_t shape[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS], len, offset;

    if (!tendo__check_tensor(op, "t", t) || (dim = tendo__wrap_dim(op, dim, t->ndim, t->shape)) < 0)
        return NULL;
    if (step <= 0) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "step %lld must be positive (use flip to reverse)",
                    (long long)step);
        return NULL;
    }
    start = clamp_bound(start, t->shape[dim]);
    stop = clamp_bound(stop, t->shape[dim]);
    len = stop > start ? (stop - start - 1) / step + 1 : 0;
    memcpy(shape, t->shape, sizeof shape);
    memcpy(stride, t->stride, sizeof stride);
    shape[dim] = len;
    offset = len > 0 ? t->offset + start * t->stride[dim] : t->offset;
    if (len > 1)
        stride[dim] = t->stride[dim] * step; /* stays inside the storage: no overflow */
    return tendo__tensor_view(op, t, t->ndim, shape, stride, offset);
}

tendo__tensor *tendo__expand(const tendo__tensor *t, int ndim, const int64_t *shape)
{
    static const char op[] = "expand";
    int64_t out[TENDO_MAX_DIMS], stride[TENDO_MAX_DIMS], numel;
    int lead;

    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (ndim < t->ndim || ndim > TENDO_MAX_DIMS || (ndim > 0 && !shape)) {
        tendo__fail(TENDO_ERR_SHAPE, op, "cannot expand shape %s to %d dims",
                    tendo__shape_str(t->ndim, t->shape).s, ndim);
        return NULL;
    }
    lead = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) {
        int64_t have = i >= lead ? t->shape[i - lead] : 1;

        if (i >= lead && (shape[i] == -1 || shape[i] == have)) {
            out[i] = have;
            stride[i] = t->stride[i - lead];
        } else if (have == 1 && shape[i] >= 0) {
            out[i] = shape[i];
            stride[i] = 0;
        } else {
            tendo__fail(TENDO_ERR_SHAPE, op, "cannot expand shape %s to %s: dim %d has size %lld",
                        tendo__shape_str(t->ndim, t->shape).s, tendo__shape_str(ndim, shape).s, i,
                        (long long)have);
            return NULL;
        }
    }
    if (!tendo__check_shape(op, ndim, out, &numel))
        return NULL;
    return tendo__tensor_view(op, t, ndim, out, stride, t->offset);
}

tendo__tensor *tendo__flip(const tendo__tensor *t, int dim)
{
    static const char op[] = "flip";
    int64_t stride[TENDO_MAX_DIMS], offset;

    if (!tendo__check_tensor(op, "t", t) || (dim = tendo__wrap_dim(op, dim, t->ndim, t->shape)) < 0)
        return NULL;
    memcpy(stride, t->stride, sizeof stride);
    offset = t->offset;
    if (t->shape[dim] > 1) {
        offset += (t->shape[dim] - 1) * stride[dim];
        stride[dim] = -stride[dim];
    }
    return tendo__tensor_view(op, t, t->ndim, t->shape, stride, offset);
}
