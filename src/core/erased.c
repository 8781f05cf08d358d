/* src/core/erased.c - tendo_tensor: the type-erased view of any tensor handle. */
#include "core/internal.h"
#include "tendo.h"

static const tendo__tensor *unerase(const tendo_tensor *t) { return (const tendo__tensor *)(const void *)t; }

tendo_dtype tendo_tensor_dtype(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_dtype", "t", unerase(t)) ? unerase(t)->dtype : (tendo_dtype)0;
}

int tendo_tensor_ndim(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_ndim", "t", unerase(t)) ? unerase(t)->ndim : -1;
}

const int64_t *tendo_tensor_shape(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_shape", "t", unerase(t)) ? unerase(t)->shape : NULL;
}

const int64_t *tendo_tensor_stride(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_stride", "t", unerase(t)) ? unerase(t)->stride : NULL;
}

int64_t tendo_tensor_numel(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_numel", "t", unerase(t)) ? unerase(t)->numel : -1;
}

bool tendo_tensor_is_contiguous(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_is_contiguous", "t", unerase(t)) && tendo__tensor_contiguous(unerase(t));
}

tendo_device tendo_tensor_device(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_device", "t", unerase(t)) ? unerase(t)->storage->device : tendo_cpu();
}

void tendo_tensor_free(tendo_tensor *t) { tendo__tensor_free((tendo__tensor *)(void *)t); }

tendo_tensor *tendo_tensor_alias(const tendo_tensor *t)
{
    static const char op[] = "tensor_alias";
    const tendo__tensor *c = unerase(t);

    if (!tendo__check_tensor(op, "t", c))
        return NULL;
    return (tendo_tensor *)(void *)tendo__tensor_alias(op, c);
}

tendo_tensor *tendo_tensor_to_dtype(const tendo_tensor *t, tendo_dtype to)
{
    static const char op[] = "tensor_to_dtype";
    const tendo__tensor *c = unerase(t);

    if (!tendo__check_tensor(op, "t", c))
        return NULL;
#define CONVERT(a, A, b, B)                                                                        \
    if (c->dtype == TENDO_##A && to == TENDO_##B)                                                  \
        return tensor_##b##_erase(tensor_##a##_to_##b((const tensor_##a *)(const void *)c));
    TENDO_FOREACH_DTYPE_PAIR(CONVERT)
#undef CONVERT
    tendo__fail(TENDO_ERR_DTYPE, op, "no dtype with code %d in this build", (int)to);
    return NULL;
}

tendo_tensor *tendo_tensor_to_device(const tendo_tensor *t, tendo_device d)
{
    return (tendo_tensor *)(void *)tendo__to_device(unerase(t), d);
}

void *tendo_tensor_data(const tendo_tensor *t)
{
    const tendo__tensor *c = unerase(t);

    if (!tendo__check_tensor("tensor_data", "t", c))
        return NULL;
    if (c->storage->device.type != TENDO_CPU) {
        tendo__fail(TENDO_ERR_DEVICE, "tensor_data", "the tensor is on %s, not the CPU",
                    tendo_device_str(c->storage->device));
        return NULL;
    }
    return tendo__tensor_data(c);
}

tendo__tensor *tendo__as_dtype(const char *op, tendo_tensor *e, tendo_dtype dtype)
{
    tendo__tensor *c = (tendo__tensor *)(void *)e;

    if (!tendo__check_tensor(op, "e", c))
        return NULL;
    if (c->dtype != dtype) {
        tendo__fail(TENDO_ERR_DTYPE, op, "tensor of shape %s is %s, not %s", tendo__shape_str(c->ndim, c->shape).s,
                    tendo_dtype_name(c->dtype), tendo_dtype_name(dtype));
        return NULL;
    }
    return c;
}
