/* src/core/layout.c - shapes and strides: validation, contiguity, broadcasting,
 * and which reshapes can be views.  Pure arithmetic: no tensors, no memory. */
#include "core/internal.h"

/* ndim in 0..TENDO_MAX_DIMS and a shape array when ndim > 0. */
static bool check_ndim(const char *op, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > TENDO_MAX_DIMS) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "ndim %d is out of range 0..%d", ndim, TENDO_MAX_DIMS);
        return false;
    }
    if (ndim > 0 && !shape) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "shape is NULL for ndim %d", ndim);
        return false;
    }
    return true;
}

bool tendo__check_shape(const char *op, int ndim, const int64_t *shape, int64_t *numel)
{
    int64_t n = 1, dense = 1;

    if (!check_ndim(op, ndim, shape))
        return false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            tendo__fail(TENDO_ERR_SHAPE, op, "negative size %lld in dim %d of shape %s",
                        (long long)shape[i], i, tendo__shape_str(ndim, shape).s);
            return false;
        }
        /* dense: the product with empty dims counted as 1, which bounds
         * every stride of a contiguous layout */
        if (__builtin_mul_overflow(dense, shape[i] ? shape[i] : 1, &dense)) {
            tendo__fail(TENDO_ERR_SHAPE, op, "shape %s has more than 2^63-1 elements",
                        tendo__shape_str(ndim, shape).s);
            return false;
        }
        n *= shape[i];
    }
    *numel = n;
    return true;
}

void tendo__contiguous_strides(int ndim, const int64_t *shape, int64_t *stride)
{
    int64_t s = 1;

    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = s;
        s *= shape[i] ? shape[i] : 1;
    }
}

bool tendo__strides_contiguous(int ndim, const int64_t *shape, const int64_t *stride)
{
    int64_t expected = 1;

    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return true;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] == 1)
            continue;
        if (stride[i] != expected)
            return false;
        expected *= shape[i];
    }
    return true;
}

int tendo__wrap_dim(const char *op, int dim, int ndim, const int64_t *shape)
{
    if (dim < -ndim || dim >= ndim) {
        if (ndim == 0)
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "dim %d is out of range for a 0-d tensor", dim);
        else
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "dim %d is out of range for shape %s (expected %d..%d)",
                        dim, tendo__shape_str(ndim, shape).s, -ndim, ndim - 1);
        return -1;
    }
    return dim < 0 ? dim + ndim : dim;
}

bool tendo__broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                             int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;

    for (int i = 0; i < n; i++) {
        /* aligned from the right; missing dims are 1 */
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;

        if (sa != sb && sa != 1 && sb != 1) {
            tendo__fail(TENDO_ERR_SHAPE, op, "shapes %s and %s cannot broadcast",
                        tendo__shape_str(na, a).s, tendo__shape_str(nb, b).s);
            return false;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return true;
}

bool tendo__infer_shape(const char *op, int old_ndim, const int64_t *old_shape, int64_t numel,
                        int ndim, const int64_t *shape, int64_t *out)
{
    int infer = -1;
    int64_t known = 1;

    if (!check_ndim(op, ndim, shape))
        return false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == -1) {
            if (infer >= 0) {
                tendo__fail(TENDO_ERR_INVALID_ARG, op, "only one dim may be -1, shape %s has two",
                            tendo__shape_str(ndim, shape).s);
                return false;
            }
            infer = i;
        } else if (shape[i] < 0) {
            tendo__fail(TENDO_ERR_SHAPE, op, "invalid size %lld in dim %d of shape %s",
                        (long long)shape[i], i, tendo__shape_str(ndim, shape).s);
            return false;
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            tendo__fail(TENDO_ERR_SHAPE, op, "shape %s has more than 2^63-1 elements",
                        tendo__shape_str(ndim, shape).s);
            return false;
        }
        out[i] = shape[i];
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0) {
            tendo__fail(TENDO_ERR_SHAPE, op, "cannot reshape %s (%lld elements) to %s",
                        tendo__shape_str(old_ndim, old_shape).s, (long long)numel,
                        tendo__shape_str(ndim, shape).s);
            return false;
        }
        out[infer] = numel / known;
    } else if (known != numel) {
        tendo__fail(TENDO_ERR_SHAPE, op, "cannot reshape %s (%lld elements) to %s (%lld elements)",
                    tendo__shape_str(old_ndim, old_shape).s, (long long)numel,
                    tendo__shape_str(ndim, shape).s, (long long)known);
        return false;
    }
    return true;
}

/* Walks the old dims from the right in "chunks" of dims that are mutually
 * contiguous; each chunk must be covered exactly by a run of new dims, whose
 * strides then follow from the chunk's innermost stride (PyTorch's
 * computeStride). */
bool tendo__view_strides(int old_ndim, const int64_t *old_shape, const int64_t *old_stride,
                         int new_ndim, const int64_t *new_shape, int64_t *new_stride)
{
    static const int64_t one = 1;
    int64_t numel = 1, chunk_base, tensor_numel = 1, view_numel = 1;
    int view_d = new_ndim - 1;

    for (int i = 0; i < old_ndim; i++)
        numel *= old_shape[i];
    if (numel == 0) {
        tendo__contiguous_strides(new_ndim, new_shape, new_stride);
        return true;
    }
    if (old_ndim == 0) { /* a scalar: view it as [1] */
        old_ndim = 1;
        old_shape = &one;
        old_stride = &one;
    }
    chunk_base = old_stride[old_ndim - 1];
    for (int d = old_ndim - 1; d >= 0; d--) {
        tensor_numel *= old_shape[d];
        if (d == 0 ||
            (old_shape[d - 1] != 1 && old_stride[d - 1] != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
                new_stride[view_d] = view_numel * chunk_base;
                view_numel *= new_shape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (d > 0) {
                chunk_base = old_stride[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}
