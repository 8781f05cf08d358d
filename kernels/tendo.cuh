/* kernels/tendo.cuh - device helpers shared by tendo's CUDA kernels:
 * element loads and stores (generated), 64- or 32-bit index math over a
 * tendo__cu_iter, 16-byte vectors, warp and block reductions, launch
 * geometry and error returns.  Included by the generated
 * src/gen/cuda_*.cu and by kernels/*.cu; hand-written, never installed.
 */
#ifndef TENDO_KERNELS_TENDO_CUH
#define TENDO_KERNELS_TENDO_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "tendo/core.h" /* the C element types */
#include "core/fp8.h"
#include "core/launch.h"

/* ---- elements ------------------------------------------------------------------
 *
 * tendo_ld(x) widens element x to its dtype's compute type, and
 * tendo_st<T>(v) rounds a compute-type (or accumulator) value v back to
 * element type T, once: both generated for every CUDA element type from
 * gen/dtypes.toml (src/gen/cuda_elements.cuh, kernels/templates/elements.cuh.j2). */
#include "half.cuh"
#include "gen/cuda_elements.cuh"

/* V elements of T, loaded or stored as one 16-byte (or smaller) access. */
template <typename T, int V> struct alignas(sizeof(T) * V) tendo_vec {
    T v[V];
};

/* ---- launch geometry ------------------------------------------------------- */

/* Every kernel launch is spelt TENDO_LAUNCH(grid, block, shmem, stream,
 * kernel)(args...), and a block's dynamic shared memory is
 * TENDO_DYN_SHARED (an unsigned char *, 16-byte aligned): CUDA's own
 * syntax under nvcc; in a --enable-cuda-sim build, kernels/sim/sim.cuh
 * (included before this file) defines both to run on the simulator. */
#ifndef TENDO_LAUNCH
#define TENDO_LAUNCH(grid, block, shmem, stream, ...) __VA_ARGS__<<<grid, block, shmem, stream>>>
extern __shared__ __align__(16) unsigned char tendo_dyn_shared[];
#define TENDO_DYN_SHARED tendo_dyn_shared
#endif

#define TENDO_THREADS 256
/* Grid-stride loops: enough blocks to fill any GPU, never more than this. */
#define TENDO_MAX_BLOCKS 65536

static inline unsigned tendo_blocks(int64_t work, int per_block)
{
    int64_t b = (work + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b > TENDO_MAX_BLOCKS ? TENDO_MAX_BLOCKS : b);
}

/* The launch's error (a bad configuration), as the launcher's return. */
static inline int tendo_launched(void) { return (int)cudaGetLastError(); }

/* ---- index math -------------------------------------------------------------- */

/* Element offsets of row-major index i in each of it's nops operands.  I is
 * the index type: uint32_t when numel and every size fit (fast divisions),
 * int64_t otherwise; offsets are always 64-bit. */
template <typename I>
static __device__ __forceinline__ void tendo_offsets(const tendo__cu_iter &it, I i, int64_t *off)
{
#pragma unroll
    for (int k = 0; k < TENDO__CU_OPS; k++)
        off[k] = 0;
    for (int d = it.ndim - 1; d >= 0; d--) {
        I size = (I)it.shape[d];
        I q = i / size;
        int64_t r = (int64_t)(i - q * size);
#pragma unroll
        for (int k = 0; k < TENDO__CU_OPS; k++)
            off[k] += r * it.stride[k][d];
        i = q;
    }
}

/* Whether 32-bit index math is safe: numel < 2^31 (so i + grid stride
 * never wraps an unsigned 32-bit index). */
static inline bool tendo_small(const tendo__cu_iter *it) { return it->numel < ((int64_t)1 << 31); }

/* Whether every operand of it is one dense run. */
static inline bool tendo_dense(const tendo__cu_iter *it)
{
    if (it->ndim != 1)
        return false;
    for (int k = 0; k < it->nops; k++)
        if (it->stride[k][0] != 1)
            return false;
    return true;
}

static __host__ __device__ inline bool tendo_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ---- reductions ------------------------------------------------------------ */

/* Folds v across the warp with F (every lane gets the result). */
template <typename A, typename F>
static __device__ __forceinline__ A tendo_warp_reduce(A v, F f)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Folds v across the block (blockDim.x a multiple of 32, at most 1024)
 * with F; every thread gets the result.  sh holds 32 As; the call
 * syncs the block, so every thread must make it. */
template <typename A, typename F>
static __device__ __forceinline__ A tendo_block_reduce(A v, F f, A identity, A *sh)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;

    v = tendo_warp_reduce(v, f);
    __syncthreads(); /* sh may still be read by a previous call */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    v = lane < nwarps ? sh[lane] : identity;
    return tendo_warp_reduce(v, f);
}

#endif /* TENDO_KERNELS_TENDO_CUH */
