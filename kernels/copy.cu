/* kernels/copy.cu - the dtype-independent kernels: strided copies of
 * elements of 1, 2, 4 or 8 bytes (clone, contiguous, to), and fills. */
#include <string.h>

#include "elementwise.cuh"

/* Raw elements moved as same-sized unsigned integers. */
template <typename U>
__global__ void k_copy_strided(tendo__cu_iter it)
{
    int64_t n = it.numel, step = (int64_t)gridDim.x * blockDim.x;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<int64_t>(it, i, off);
        ((U *)it.base[0])[off[0]] = ((const U *)it.base[1])[off[1]];
    }
}

template <typename U>
__global__ void k_copy_strided32(tendo__cu_iter it)
{
    uint32_t n = (uint32_t)it.numel, step = (uint32_t)gridDim.x * blockDim.x;

    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<uint32_t>(it, i, off);
        ((U *)it.base[0])[off[0]] = ((const U *)it.base[1])[off[1]];
    }
}

template <typename U>
static int copy_as(const tendo__cu_iter *it)
{
    if (tendo_dense(it))
        return (int)cudaMemcpyAsync(it->base[0], it->base[1], (size_t)it->numel * sizeof(U),
                                    cudaMemcpyDeviceToDevice, cudaStreamPerThread);
    if (tendo_small(it))
        TENDO_LAUNCH(tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_copy_strided32<U>)(*it);
    else
        TENDO_LAUNCH(tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_copy_strided<U>)(*it);
    return tendo_launched();
}

extern "C" int tendo__cu_copy(const tendo__cu_iter *it)
{
    if (it->numel == 0)
        return 0;
    switch (it->elsize[0]) {
    case 1: return copy_as<uint8_t>(it);
    case 2: return copy_as<uint16_t>(it);
    case 4: return copy_as<uint32_t>(it);
    case 8: return copy_as<uint64_t>(it);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename U>
__global__ void k_fill(U *dst, int64_t n, U v)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = v;
}

template <typename U>
static int fill_as(void *dst, int64_t n, const void *value)
{
    U v;
    memcpy(&v, value, sizeof v);
    TENDO_LAUNCH(tendo_blocks(n, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_fill<U>)((U *)dst, n, v);
    return tendo_launched();
}

extern "C" int tendo__cu_fill(void *dst, int64_t n, int elsize, const void *value)
{
    if (n <= 0)
        return 0;
    switch (elsize) {
    case 1: return fill_as<uint8_t>(dst, n, value);
    case 2: return fill_as<uint16_t>(dst, n, value);
    case 4: return fill_as<uint32_t>(dst, n, value);
    case 8: return fill_as<uint64_t>(dst, n, value);
    default: return (int)cudaErrorInvalidValue;
    }
}
