/* kernels/elementwise.cuh - the elementwise kernels every generated op
 * instantiates: out = f(a), f(a, b) or f(a, b, c) over a tendo__cu_iter.
 * f takes the operands' elements as stored and returns the output element
 * (the generated functors widen with tendo_ld, compute in the dtype's
 * compute type and convert with tendo_st, or move elements untouched, as
 * where does), with
 *   - a dense path: 16-byte vector loads and stores when every operand is
 *     one dense run and 16-byte aligned (a scalar tail after the vectors);
 *   - a strided path: per element offsets from the coalesced dims, with
 *     32-bit index math when numel < 2^31 and 64-bit beyond.  Dense but
 *     unaligned work takes it too (one instantiation fewer per op: nvcc's
 *     time grows with every kernel, and unaligned dense views are rare).
 * Each thread reads its elements before writing them, so out may be an
 * input (in place); partial overlaps are refused before a launch.
 */
#ifndef TENDO_KERNELS_ELEMENTWISE_CUH
#define TENDO_KERNELS_ELEMENTWISE_CUH

#include "tendo.cuh"

/* Elements per vector: 16 bytes of the widest operand, at most 4 (each
 * element's f is inlined V + 1 times: 16 copies of an fp8 gelu cost nvcc
 * far more than 4-byte loads of 1-byte elements cost the GPU). */
template <typename To, typename Ta, typename Tb, typename Tc>
struct tendo_ew_width {
    static const int w1 = sizeof(To) > sizeof(Ta) ? (int)sizeof(To) : (int)sizeof(Ta);
    static const int w2 = w1 > (int)sizeof(Tb) ? w1 : (int)sizeof(Tb);
    static const int wide = w2 > (int)sizeof(Tc) ? w2 : (int)sizeof(Tc);
    static const int V = 16 / wide < 4 ? 16 / wide : 4;
};

/* Applies f to NIN operands. */
template <int NIN> struct tendo_apply;
template <> struct tendo_apply<1> {
    template <typename F, typename A, typename B, typename C>
    static __device__ __forceinline__ auto f(const F &fn, A a, B, C) { return fn(a); }
};
template <> struct tendo_apply<2> {
    template <typename F, typename A, typename B, typename C>
    static __device__ __forceinline__ auto f(const F &fn, A a, B b, C) { return fn(a, b); }
};
template <> struct tendo_apply<3> {
    template <typename F, typename A, typename B, typename C>
    static __device__ __forceinline__ auto f(const F &fn, A a, B b, C c) { return fn(a, b, c); }
};

template <int NIN, int V, typename To, typename Ta, typename Tb, typename Tc, typename F>
__global__ void tendo_ew_dense(To *o, const Ta *a, const Tb *b, const Tc *c, int64_t n, F f)
{
    int64_t nv = n / V, step = (int64_t)gridDim.x * blockDim.x;
    int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;

    for (int64_t i = first; i < nv; i += step) {
        tendo_vec<Ta, V> x = reinterpret_cast<const tendo_vec<Ta, V> *>(a)[i];
        tendo_vec<Tb, V> y = {};
        tendo_vec<Tc, V> w = {};
        tendo_vec<To, V> z;
        if (NIN >= 2)
            y = reinterpret_cast<const tendo_vec<Tb, V> *>(b)[i];
        if (NIN >= 3)
            w = reinterpret_cast<const tendo_vec<Tc, V> *>(c)[i];
#pragma unroll
        for (int j = 0; j < V; j++)
            z.v[j] = tendo_apply<NIN>::f(f, x.v[j], y.v[j], w.v[j]);
        reinterpret_cast<tendo_vec<To, V> *>(o)[i] = z;
    }
    for (int64_t i = nv * V + first; i < n; i += step)
        o[i] = tendo_apply<NIN>::f(f, a[i], NIN >= 2 ? b[i] : Tb(), NIN >= 3 ? c[i] : Tc());
}

template <int NIN, typename I, typename To, typename Ta, typename Tb, typename Tc, typename F>
__global__ void tendo_ew_strided(tendo__cu_iter it, F f)
{
    I n = (I)it.numel, step = (I)gridDim.x * blockDim.x;

    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off[TENDO__CU_OPS];
        tendo_offsets<I>(it, i, off);
        Ta a = ((const Ta *)it.base[1])[off[1]];
        Tb b = NIN >= 2 ? ((const Tb *)it.base[2])[off[2]] : Tb();
        Tc c = NIN >= 3 ? ((const Tc *)it.base[3])[off[3]] : Tc();
        ((To *)it.base[0])[off[0]] = tendo_apply<NIN>::f(f, a, b, c);
    }
}

/* Runs out = f(a[, b[, c]]) over *it on the per-thread stream (operand k
 * of elements Tk: To the output, then Ta, Tb, Tc); 0 or a cudaError_t. */
template <int NIN, typename To, typename Ta, typename Tb = Ta, typename Tc = Ta, typename F>
static int tendo_ew_launch(const tendo__cu_iter *it, F f)
{
    const int V = tendo_ew_width<To, Ta, Tb, Tc>::V; /* Tb, Tc default to Ta when unused */
    bool aligned = true;

    if (it->numel == 0)
        return 0;
    for (int k = 0; k < it->nops; k++)
        aligned = aligned && tendo_aligned16(it->base[k]);
    if (aligned && tendo_dense(it)) {
        TENDO_LAUNCH(tendo_blocks(it->numel / V + 1, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_ew_dense<NIN, V, To, Ta, Tb, Tc, F>)(
                (To *)it->base[0], (const Ta *)it->base[1], (const Tb *)it->base[2], (const Tc *)it->base[3],
                it->numel, f);
    } else if (tendo_small(it)) {
        TENDO_LAUNCH(tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_ew_strided<NIN, uint32_t, To, Ta, Tb, Tc, F>)(*it, f);
    } else {
        TENDO_LAUNCH(tendo_blocks(it->numel, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_ew_strided<NIN, int64_t, To, Ta, Tb, Tc, F>)(*it, f);
    }
    return tendo_launched();
}

#endif /* TENDO_KERNELS_ELEMENTWISE_CUH */
