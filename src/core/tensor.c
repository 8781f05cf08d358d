/* src/core/tensor.c - the tensor header: creation, views of storage, freeing,
 * and the few properties that take more than a field. */
#include <stdlib.h>
#include <string.h>

#include "core/autograd.h"
#include "core/device.h"
#include "core/events.h"
#include "core/internal.h"

bool tendo__check_tensor(const char *op, const char *arg, const tendo__tensor *t)
{
    if (t)
        return true;
    tendo__fail(TENDO_ERR_INVALID_ARG, op, "tensor argument '%s' is NULL", arg);
    return false;
}

static tendo__tensor *header_new(const char *op)
{
    tendo__tensor *t = tendo__calloc(1, sizeof *t);

    if (!t)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating a tensor header");
    return t;
}

tendo__tensor *tendo__tensor_new(const char *op, tendo_dtype dtype, int ndim,
                                 const int64_t *shape, tendo_device d)
{
    int64_t numel;
    size_t elsize = tendo_dtype_size(dtype), nbytes;
    tendo__tensor *t;

    if (!tendo__check_shape(op, ndim, shape, &numel) || !tendo__check_device(op, d))
        return NULL;
    if ((uint64_t)numel > SIZE_MAX / elsize) {
        tendo__fail(TENDO_ERR_OOM, op, "shape %s needs more bytes than the address space holds",
                    tendo__shape_str(ndim, shape).s);
        return NULL;
    }
    nbytes = (size_t)numel * elsize;
    t = header_new(op);
    if (!t)
        return NULL;
    t->storage = tendo__storage_new(op, nbytes, d);
    if (!t->storage) {
        free(t);
        return NULL;
    }
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim > 0)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    tendo__contiguous_strides(ndim, t->shape, t->stride);
    t->offset = 0;
    t->numel = numel;
    tendo__emit_tensor(TENDO_EVENT_TENSOR_CREATED, t);
    return t;
}

tendo__tensor *tendo__tensor_over(const char *op, tendo__storage *s, tendo_dtype dtype, int ndim,
                                  const int64_t *shape, const int64_t *stride, int64_t offset)
{
    tendo__tensor *t = header_new(op);

    if (!t)
        return NULL;
    t->dtype = dtype;
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->numel *= shape[i];
    }
    if (stride)
        memcpy(t->stride, stride, (size_t)ndim * sizeof *stride);
    else
        tendo__contiguous_strides(ndim, t->shape, t->stride);
    t->offset = offset;
    t->storage = tendo__storage_retain(s);
    tendo__emit_tensor(TENDO_EVENT_TENSOR_CREATED, t);
    return t;
}

tendo__tensor *tendo__tensor_view(const char *op, const tendo__tensor *base, int ndim,
                                  const int64_t *shape, const int64_t *stride, int64_t offset)
{
    return tendo__tensor_over(op, base->storage, base->dtype, ndim, shape, stride, offset);
}

tendo__tensor *tendo__tensor_alias(const char *op, const tendo__tensor *t)
{
    return tendo__tensor_view(op, t, t->ndim, t->shape, t->stride, t->offset);
}

void tendo__tensor_free(tendo__tensor *t)
{
    if (!t)
        return;
    tendo__emit_tensor(TENDO_EVENT_TENSOR_FREED, t);
    tendo__grad_release(t);
    tendo__storage_release(t->storage);
    free(t);
}

void *tendo__tensor_data(const tendo__tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)tendo_dtype_size(t->dtype);
}

bool tendo__check_bool_bytes(const char *op, const char *what, tendo_status status, const void *bytes, size_t n)
{
    const unsigned char *p = bytes; /* read as bytes: a byte past 1 is no value of bool */

    for (size_t i = 0; i < n; i++)
        if (p[i] > 1) {
            tendo__fail(status, op, "%s: byte %zu of bool data is %u, not 0 or 1", what, i, (unsigned)p[i]);
            return false;
        }
    return true;
}

bool tendo__tensor_contiguous(const tendo__tensor *t)
{
    return tendo__strides_contiguous(t->ndim, t->shape, t->stride);
}

tendo__tensor *tendo__fill_from_host(const char *op, tendo__tensor *t, const void *data)
{
    size_t n = (size_t)t->numel * tendo_dtype_size(t->dtype);

    if (t->storage->device.type == TENDO_CPU) {
        if (n)
            memcpy(tendo__tensor_data(t), data, n);
    } else if (!tendo__device_ops_of(t->storage->device.type)->upload(op, t->storage->device, tendo__tensor_data(t),
                                                                          data, n)) {
        tendo__tensor_free(t);
        return NULL;
    }
    return t;
}

int64_t tendo__size(const char *op, const tendo__tensor *t, int dim)
{
    if (!tendo__check_tensor(op, "t", t) || (dim = tendo__wrap_dim(op, dim, t->ndim, t->shape)) < 0)
        return -1;
    return t->shape[dim];
}

void *tendo__host_data(const char *op, const tendo__tensor *t)
{
    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (t->storage->device.type != TENDO_CPU) {
        tendo__fail(TENDO_ERR_DEVICE, op, "tensor is on %s, not the CPU", tendo_device_str(t->storage->device));
        return NULL;
    }
    return tendo__tensor_data(t);
}
