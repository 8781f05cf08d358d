/* src/erased.c - tendo_tensor: the type-erased view of any tensor handle. */
#include "internal.h"
#include "tendo/erased.h"

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

tendo_device tendo_tensor_device(const tendo_tensor *t)
{
    return tendo__check_tensor("tensor_device", "t", unerase(t)) ? unerase(t)->storage->device : tendo_cpu();
}

void tendo_tensor_free(tendo_tensor *t) { tendo__tensor_free((tendo__tensor *)(void *)t); }
