/* kernels/index.cu - the dtype-independent kernels of indexing and
 * joining (see core/launch.h): the indexed walk of index_select, gather
 * and scatter, with its index check on the device, and tril/triu's
 * zeroing.  Elements move as same-sized unsigned integers. */
#include "tendo.cuh"

template <typename U, typename I>
__global__ void k_index_walk(tendo__cu_index w)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < w.numel; i += step) {
        int64_t rest = i, doff = 0, soff = 0, ioff = 0, raw, k;

        for (int d = w.ndim - 1; d >= 0; d--) {
            int64_t p = rest % w.shape[d];
            rest /= w.shape[d];
            doff += p * w.dstride[d];
            soff += p * w.sstride[d];
            ioff += p * w.istride[d];
        }
        raw = (int64_t)((const I *)w.idx)[ioff];
        k = raw < 0 ? raw + w.ksize : raw;
        if (k < 0 || k >= w.ksize) {
            /* the first one found names itself; nothing is written for it */
            if (atomicCAS((unsigned long long *)w.bad, 0ull, 1ull) == 0ull)
                w.bad[1] = raw;
            continue;
        }
        if (!w.check_only)
            ((U *)w.dst)[doff + k * w.dst_k] = ((const U *)w.src)[soff + k * w.src_k];
    }
}

template <typename U>
static int index_as(const tendo__cu_index *w)
{
    if (w->idx_size == 4)
        TENDO_LAUNCH(tendo_blocks(w->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_index_walk<U, int32_t>)(*w);
    else
        TENDO_LAUNCH(tendo_blocks(w->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_index_walk<U, int64_t>)(*w);
    return tendo_launched();
}

extern "C" int tendo__cu_index_walk(const tendo__cu_index *w)
{
    if (w->numel == 0)
        return 0;
    switch (w->elsize) {
    case 1: return index_as<uint8_t>(w);
    case 2: return index_as<uint16_t>(w);
    case 4: return index_as<uint32_t>(w);
    case 8: return index_as<uint64_t>(w);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename U>
__global__ void k_tri_zero(U *out, int64_t numel, int64_t R, int64_t C, int64_t k, int upper)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += step) {
        int64_t c = i % C, r = i / C % R;
        bool keep = upper ? c - r >= k : c - r <= k;
        if (!keep)
            out[i] = U(0);
    }
}

template <typename U>
static int tri_as(void *out, int64_t numel, int64_t R, int64_t C, int64_t k, int upper)
{
    TENDO_LAUNCH(tendo_blocks(numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_tri_zero<U>)((U *)out, numel, R,
                                                                                                 C, k, upper);
    return tendo_launched();
}

extern "C" int tendo__cu_tri_zero(void *out, int64_t numel, int64_t R, int64_t C, int64_t k, int upper, int elsize)
{
    if (numel == 0)
        return 0;
    switch (elsize) {
    case 1: return tri_as<uint8_t>(out, numel, R, C, k, upper);
    case 2: return tri_as<uint16_t>(out, numel, R, C, k, upper);
    case 4: return tri_as<uint32_t>(out, numel, R, C, k, upper);
    case 8: return tri_as<uint64_t>(out, numel, R, C, k, upper);
    default: return (int)cudaErrorInvalidValue;
    }
}
