/* kernels/index.cuh - scatter_add on the device: the indexed walk of
 * kernels/index.cu (core/launch.h's tendo__cu_index), adding each element
 * into its place with an atomic update, for the per-dtype launchers of
 * kernels/templates/ops.cu.j2 (which bring the addition).  The order of additions
 * into one element is not fixed, as with any atomic accumulation. */
#ifndef TENDO_KERNELS_INDEX_CUH
#define TENDO_KERNELS_INDEX_CUH

#include <string.h>

#include "tendo.cuh"

/* *p = add(*p, v) atomically, for an element type T of 1, 2, 4 or 8
 * bytes: a compare-and-swap loop on the aligned word holding *p (a 1- or
 * 2-byte element shares its 32-bit word with its neighbours, which the
 * loop leaves as they are). */
template <typename T, typename Add>
static __device__ void tendo_atomic_update(T *p, T v, Add add)
{
    if constexpr (sizeof(T) == 8) {
        unsigned long long *w = (unsigned long long *)p, old = *w, assumed, nb;
        do {
            T cur, nxt;
            assumed = old;
            memcpy(&cur, &assumed, sizeof cur);
            nxt = add(cur, v);
            memcpy(&nb, &nxt, sizeof nb);
            old = atomicCAS(w, assumed, nb);
        } while (assumed != old);
    } else if constexpr (sizeof(T) == 4) {
        unsigned int *w = (unsigned int *)p, old = *w, assumed, nb;
        do {
            T cur, nxt;
            assumed = old;
            memcpy(&cur, &assumed, sizeof cur);
            nxt = add(cur, v);
            memcpy(&nb, &nxt, sizeof nb);
            old = atomicCAS(w, assumed, nb);
        } while (assumed != old);
    } else {
        static_assert(sizeof(T) == 1 || sizeof(T) == 2, "elements of 1, 2, 4 or 8 bytes");
        uintptr_t a = (uintptr_t)p;
        unsigned int *w = (unsigned int *)(a & ~(uintptr_t)3);
        unsigned int shift = (unsigned int)(a & 3) * 8, mask = sizeof(T) == 1 ? 0xffu : 0xffffu;
        unsigned int old = *w, assumed;
        do {
            T cur, nxt;
            unsigned int bits, nb = 0;
            assumed = old;
            bits = (assumed >> shift) & mask; /* little-endian: the element is the low bytes */
            memcpy(&cur, &bits, sizeof cur);
            nxt = add(cur, v);
            memcpy(&nb, &nxt, sizeof nxt);
            old = atomicCAS(w, assumed, (assumed & ~(mask << shift)) | (nb << shift));
        } while (assumed != old);
    }
}

/* The walk of core/launch.h, adding src's element into dst's; an index out
 * of range adds nothing and raises w.bad (as kernels/index.cu). */
template <typename T, typename Add>
__global__ void tendo_k_scatter_add(tendo__cu_index w, Add add)
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
        raw = w.idx_size == 4 ? (int64_t)((const int32_t *)w.idx)[ioff] : ((const int64_t *)w.idx)[ioff];
        k = raw < 0 ? raw + w.ksize : raw;
        if (k < 0 || k >= w.ksize) {
            if (atomicCAS((unsigned long long *)w.bad, 0ull, 1ull) == 0ull)
                w.bad[1] = raw;
            continue;
        }
        tendo_atomic_update((T *)w.dst + doff + k * w.dst_k, ((const T *)w.src)[soff + k * w.src_k], add);
    }
}

template <typename T, typename Add>
static int tendo_scatter_add_launch(const tendo__cu_index *w, Add add)
{
    if (w->numel == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(w->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_k_scatter_add<T, Add>)(*w, add);
    return tendo_launched();
}

#endif /* TENDO_KERNELS_INDEX_CUH */
