/* kernels/elementwise.cuh - the elementwise kernels every generated op
 * instantiates: out = f(a) or out = f(a, b) over a tendo__cu_iter, in
 * float, with
 *   - a dense path: 16-byte vector loads and stores when every operand is
 *     one dense run and 16-byte aligned (a scalar tail after the vectors);
 *   - a strided path: per element offsets from the coalesced dims, with
 *     32-bit index math when numel < 2^31 and 64-bit beyond.
 * Each thread reads its elements before writing them, so out may be an
 * input (in place); partial overlaps are refused before a launch.
 */
#ifndef TENDO_KERNELS_ELEMENTWISE_CUH
#define TENDO_KERNELS_ELEMENTWISE_CUH

#include "tendo.cuh"

/* Elements per vector: 16 bytes of the widest operand. */
template <typename To, typename Ta, typename Tb>
struct tendo_ew_width {
    static const int w = sizeof(To) > sizeof(Ta) ? (int)sizeof(To) : (int)sizeof(Ta);
    static const int wide = w > (int)sizeof(Tb) ? w : (int)sizeof(Tb);
    static const int V = 16 / wide;
};

/* Applies f to loaded floats; NIN picks the arity. */
template <int NIN, typename F> struct tendo_apply;
template <typename F> struct tendo_apply<1, F> {
    static __device__ __forceinline__ float f(const F &fn, float a, float b) { (void)b; return fn(a); }
};
template <typename F> struct tendo_apply<2, F> {
    static __device__ __forceinline__ float f(const F &fn, float a, float b) { return fn(a, b); }
};

template <int NIN, int V, typename To, typename Ta, typename Tb, typename F>
__global__ void tendo_ew_dense(To *o, const Ta *a, const Tb *b, int64_t n, F f)
{
    int64_t nv = n / V, step = (int64_t)gridDim.x * blockDim.x;
    int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;

    for (int64_t i = first; i < nv; i += step) {
        tendo_vec<Ta, V> x = reinterpret_cast<const tendo_vec<Ta, V> *>(a)[i];
        tendo_vec<Tb, V> y;
        tendo_vec<To, V> z;
        if (NIN == 2)
            y = reinterpret_cast<const tendo_vec<Tb, V> *>(b)[i];
#pragma unroll
        for (int j = 0; j < V; j++)
            z.v[j] = tendo_st<To>(tendo_apply<NIN, F>::f(f, tendo_ld(x.v[j]), NIN == 2 ? tendo_ld(y.v[j]) : 0.0f));
        reinterpret_cast<tendo_vec<To, V> *>(o)[i] = z;
    }
    for (int64_t i = nv * V + first; i < n; i += step)
        o[i] = tendo_st<To>(tendo_apply<NIN, F>::f(f, tendo_ld(a[i]), NIN == 2 ? tendo_ld(b[i]) : 0.0f));
}

template <int NIN, typename I, typename To, typename Ta, typename Tb, typename F>
__global__ void tendo_ew_strided(tendo__cu_iter it, F f)
{
    I n = (I)it.numel, step = (I)gridDim.x * blockDim.x;

    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(it, i, off);
        float a = tendo_ld(((const Ta *)it.base[1])[off[1]]);
        float b = NIN == 2 ? tendo_ld(((const Tb *)it.base[2])[off[2]]) : 0.0f;
        ((To *)it.base[0])[off[0]] = tendo_st<To>(tendo_apply<NIN, F>::f(f, a, b));
    }
}

/* Runs out = f(a[, b]) over *it on the per-thread stream; 0 or a cudaError_t. */
template <int NIN, typename To, typename Ta, typename Tb, typename F>
static int tendo_ew_launch(const tendo__cu_iter *it, F f)
{
    const int V = tendo_ew_width<To, Ta, Tb>::V;
    bool aligned = true;

    if (it->numel == 0)
        return 0;
    for (int k = 0; k < it->nops; k++)
        aligned = aligned && tendo_aligned16(it->base[k]);
    if (tendo_dense(it)) {
        int64_t work = aligned ? it->numel / V + 1 : it->numel;
        if (aligned)
            tendo_ew_dense<NIN, V, To, Ta, Tb, F><<<tendo_blocks(work, TENDO_THREADS), TENDO_THREADS, 0,
                                                   cudaStreamPerThread>>>(
                (To *)it->base[0], (const Ta *)it->base[1], (const Tb *)it->base[2], it->numel, f);
        else
            tendo_ew_dense<NIN, 1, To, Ta, Tb, F><<<tendo_blocks(work, TENDO_THREADS), TENDO_THREADS, 0,
                                                   cudaStreamPerThread>>>(
                (To *)it->base[0], (const Ta *)it->base[1], (const Tb *)it->base[2], it->numel, f);
    } else if (tendo_small(it)) {
        tendo_ew_strided<NIN, uint32_t, To, Ta, Tb, F>
            <<<tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread>>>(*it, f);
    } else {
        tendo_ew_strided<NIN, int64_t, To, Ta, Tb, F>
            <<<tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread>>>(*it, f);
    }
    return tendo_launched();
}

#endif /* TENDO_KERNELS_ELEMENTWISE_CUH */
