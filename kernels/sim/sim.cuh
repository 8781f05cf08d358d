/* kernels/sim/sim.cuh - force-included (g++ -include) before every .cu source
 * of a --enable-cuda-sim build, which g++ then compiles as host C++.
 *
 * The CUDA qualifiers become plain C++ (__global__, __device__ and
 * __launch_bounds__ vanish,
 * __shared__ is per host thread: the blocks of a launch run one after
 * another on it); threadIdx, blockIdx, blockDim and gridDim read the
 * simulator's running thread; __syncthreads and the warp shuffles are the
 * scheduler's barriers (sched.c); TENDO_LAUNCH hands the kernel and its
 * arguments to tendo__sim_launch (launch.c). */
#ifndef TENDO_SRC_SIM_SIM_CUH
#define TENDO_SRC_SIM_SIM_CUH

#define __global__
#define __device__
#define __host__
#define __shared__ static thread_local

#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <new>
#include <string.h>
#include <tuple>
#include <type_traits>

#include "sim/sim.h"

/* A kernel's register budget is ptxas's business (t-ptxas checks it): no
 * meaning on the simulator. */
#undef __launch_bounds__
#define __launch_bounds__(...)

#define threadIdx tendo__sim_thread_idx
#define blockIdx tendo__sim_block_idx
#define blockDim tendo__sim_block_dim
#define gridDim tendo__sim_grid_dim

/* The call site names the barrier: threads at different ones are a bug. */
#define __syncthreads() tendo__sim_syncthreads(__FILE__ ":" TENDO_SIM_STR(__LINE__))
#define TENDO_SIM_STR(x) TENDO_SIM_STR_(x)
#define TENDO_SIM_STR_(x) #x

/* __shfl_*_sync of any value of up to 16 bytes; width splits the warp
 * into groups of that many lanes, as CUDA's. */
template <typename T> static inline T tendo_sim_shfl(unsigned mask, T v, int src)
{
    static_assert(sizeof(T) <= 16, "a shuffle moves at most 16 bytes");
    T out;
    memcpy(tendo__sim_shfl_slot(), &v, sizeof v);
    memcpy(&out, tendo__sim_shfl_wait(mask, src), sizeof out);
    return out;
}
template <typename T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    int lane = (int)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) & 31);
    return tendo_sim_shfl(mask, v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    int lane = (int)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) & 31);
    int src = lane ^ lane_mask;
    return tendo_sim_shfl(mask, v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    int lane = (int)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) & 31);
    int src = lane + (int)delta;
    return tendo_sim_shfl(mask, v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    int lane = (int)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) & 31);
    int src = lane - (int)delta;
    return tendo_sim_shfl(mask, v, src >= (lane & ~(width - 1)) ? src : lane);
}

/* atomicCAS: the blocks of a launch may run on several host threads, so a
 * real compare-and-swap; it returns the old value, as CUDA's does. */
static inline unsigned int atomicCAS(unsigned int *p, unsigned int cmp, unsigned int val)
{
    __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long val)
{
    __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}

/* In an unnamed namespace: each .cu file has its own instantiations.  The
 * generated files each define functors of the same names (f_add_scalar
 * holds a float in one, a double in another); shared instantiations keyed
 * on those types alone would be merged by the linker, one for all. */
namespace {
namespace tendo_sim {
/* A launch of a kernel taking P...: called with the kernel's arguments,
 * it keeps a copy of them for as long as the launch is queued, and the
 * kernel runs once per simulated thread, each with its own copy. */
template <typename... P> struct launch {
    tendo__sim_config cfg;
    void (*kernel)(P...);

    struct job {
        void (*kernel)(P...);
        std::tuple<P...> args;
    };
    static_assert(!std::disjunction<std::is_reference<P>...>::value, "kernel parameters are values");

    void operator()(P... p) const
    {
        job *j = new (std::nothrow) job{kernel, std::tuple<P...>(p...)};

        if (!j) {
            (void)tendo__sim_error(cudaErrorLaunchOutOfResources);
            return;
        }
        tendo__sim_launch(
            &cfg, [](void *v) { std::apply(static_cast<job *>(v)->kernel, static_cast<job *>(v)->args); },
            [](void *v) { delete static_cast<job *>(v); }, j);
    }
};
template <typename... P>
static inline launch<P...> make(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, void (*kernel)(P...))
{
    return launch<P...>{{grid, block, shmem, stream}, kernel};
}
} // namespace tendo_sim
} // namespace

#define TENDO_LAUNCH(grid, block, shmem, stream, ...) tendo_sim::make(grid, block, shmem, stream, __VA_ARGS__)
#define TENDO_DYN_SHARED tendo__sim_dyn_shared()

#endif /* TENDO_SRC_SIM_SIM_CUH */
