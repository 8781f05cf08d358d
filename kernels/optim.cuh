/* kernels/optim.cuh - the optimizer updates on a GPU: one pass over a
 * parameter, its gradient and its state (tendo__cu_optim, src/core/launch.h),
 * a thread per element in a grid-stride loop.  The same operations in the
 * same order as the CPU kernels (templates/cpu/optim/), in the compute type
 * C (float, double for f64), so a GPU step matches a CPU step to rounding.
 * Called by the generated launchers of src/gen/cuda_reduce_<dt>.cu. */
#ifndef TENDO_KERNELS_OPTIM_CUH
#define TENDO_KERNELS_OPTIM_CUH

#include "tendo.cuh"

/* Element i's parameter value in C: the master copy, or the parameter. */
template <typename T, typename C>
static __device__ __forceinline__ C tendo_optim_param(const tendo__cu_optim &w, int64_t i)
{
    return w.master ? ((const C *)w.master)[i] : (C)tendo_ld(((const T *)w.param)[i]);
}

template <typename T, typename C>
static __device__ __forceinline__ void tendo_optim_store(const tendo__cu_optim &w, int64_t i, C p)
{
    if (w.master)
        ((C *)w.master)[i] = p;
    ((T *)w.param)[i] = tendo_st<T>(p);
}

template <typename T>
__global__ void tendo_adamw_kernel(tendo__cu_optim w)
{
    typedef decltype(tendo_ld(T())) C;
    const C decay = (C)(1.0 - w.lr * w.weight_decay);
    const C wt = (C)(1.0 - w.beta1), beta2 = (C)w.beta2, wt2 = (C)(1.0 - w.beta2);
    const C step = (C)-w.step_size, bc2 = (C)w.bc2_sqrt, eps = (C)w.eps;
    C *m = (C *)w.m, *v = (C *)w.v;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < w.n; i += (int64_t)gridDim.x * blockDim.x) {
        C g = (C)tendo_ld(((const T *)w.grad)[i]);
        C p = tendo_optim_param<T, C>(w, i) * decay;
        C mi = wt < (C)0.5 ? m[i] + wt * (g - m[i]) : g - (g - m[i]) * ((C)1 - wt);
        C vi = v[i] * beta2;

        vi = vi + wt2 * g * g;
        m[i] = mi;
        v[i] = vi;
        tendo_optim_store<T, C>(w, i, p + step * mi / (sqrt(vi) / bc2 + eps));
    }
}

template <typename T>
__global__ void tendo_sgd_kernel(tendo__cu_optim w)
{
    typedef decltype(tendo_ld(T())) C;
    const C wd = (C)w.weight_decay, mu = (C)w.momentum, lr = (C)-w.lr;
    C *buf = (C *)w.m;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < w.n; i += (int64_t)gridDim.x * blockDim.x) {
        C p = tendo_optim_param<T, C>(w, i);
        C d = (C)tendo_ld(((const T *)w.grad)[i]);

        if (wd != 0)
            d = d + wd * p;
        if (buf) {
            buf[i] = w.first ? d : buf[i] * mu + d;
            d = w.nesterov ? d + mu * buf[i] : buf[i];
        }
        tendo_optim_store<T, C>(w, i, p + lr * d);
    }
}

template <typename T>
static int tendo_adamw_launch(const tendo__cu_optim *w)
{
    if (w->n == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(w->n, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_adamw_kernel<T>)(*w);
    return tendo_launched();
}

template <typename T>
static int tendo_sgd_launch(const tendo__cu_optim *w)
{
    if (w->n == 0)
        return 0;
    TENDO_LAUNCH(tendo_blocks(w->n, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, tendo_sgd_kernel<T>)(*w);
    return tendo_launched();
}

#endif /* TENDO_KERNELS_OPTIM_CUH */
