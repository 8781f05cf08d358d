/* t/t-sim.c - the simulated CUDA device itself (./configure
 * --enable-cuda-sim, src/sim/): that it refuses what a GPU refuses and
 * catches the bugs it is there to catch.  Kernels here are C functions run
 * through the simulator's launch entry, one call per CUDA thread.
 * Skips in any other build. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

#ifndef TENDO_CUDA_SIM
int main(void) { skip_all("not a --enable-cuda-sim build"); }
#else

#include <cublas_v2.h>

#include "sim/sim.h"

/* ---- kernels -------------------------------------------------------------- */

static int shared_ints[1024]; /* the block's __shared__ int[1024] */
static int out_ints[1024];
static int started[1024], nstarted;

/* out[t] = t's right neighbour's id, read from shared memory after a
 * barrier (or, with *arg false, without one: a race). */
static void k_neighbour(void *arg)
{
    bool barrier = *(const bool *)arg;
    unsigned t = tendo__sim_thread_idx.x, n = tendo__sim_block_dim.x;

    started[nstarted++] = (int)t;
    shared_ints[t] = (int)t + 1000;
    if (barrier)
        tendo__sim_syncthreads("k_neighbour");
    out_ints[t] = shared_ints[(t + 1) % n];
}

/* A __syncthreads that only the first half of the block reaches. */
static void k_half_barrier(void *arg)
{
    (void)arg;
    if (tendo__sim_thread_idx.x < tendo__sim_block_dim.x / 2)
        tendo__sim_syncthreads("k_half_barrier");
}

/* A full-mask shuffle that only lanes 0-15 reach. */
static void k_half_shuffle(void *arg)
{
    (void)arg;
    if (tendo__sim_thread_idx.x < 16) {
        int v = (int)tendo__sim_thread_idx.x;
        memcpy(tendo__sim_shfl_slot(), &v, sizeof v);
        (void)tendo__sim_shfl_wait(0xffffffffu, 0);
    }
}

/* out[t] = lane t ^ 1's value, through a shuffle. */
static void k_shuffle(void *arg)
{
    int v = (int)tendo__sim_thread_idx.x * 3;

    (void)arg;
    memcpy(tendo__sim_shfl_slot(), &v, sizeof v);
    memcpy(&out_ints[tendo__sim_thread_idx.x],
           tendo__sim_shfl_wait(0xffffffffu, (int)((tendo__sim_thread_idx.x & 31) ^ 1)), sizeof v);
}

/* out[0] = whether the dynamic shared memory came poisoned (0xFF bytes). */
static void k_poisoned(void *arg)
{
    size_t n = *(const size_t *)arg;
    const unsigned char *p = tendo__sim_dyn_shared();
    bool all = true;

    for (size_t i = 0; i < n; i++)
        all = all && p[i] == 0xFF;
    out_ints[tendo__sim_thread_idx.x] = all;
}

static void k_nothing(void *arg) { (void)arg; }

static cudaError_t launch(unsigned gx, unsigned gy, unsigned bx, size_t shmem, void (*body)(void *), void *arg)
{
    tendo__sim_config c = {{gx, gy, 1}, {bx, 1, 1}, shmem, cudaStreamPerThread};

    tendo__sim_launch(&c, body, arg);
    return cudaGetLastError();
}

static void test_launches(void)
{
    bool yes = true, no = false;
    size_t shmem = 4096;
    int wrong = 0, moved = 0;

    is_int(cudaErrorInvalidConfiguration, launch(1, 1, 1025, 0, k_nothing, NULL), "a block of 1025 threads is refused");
    is_int(cudaSuccess, cudaGetLastError(), "... and the error is not sticky");
    is_int(cudaErrorInvalidConfiguration, launch(1, 65536, 32, 0, k_nothing, NULL), "a grid.y of 65536 is refused");
    is_int(cudaErrorInvalidConfiguration, launch(1, 1, 32, 48 * 1024 + 1, k_nothing, NULL),
           "48 KiB + 1 of dynamic shared memory is refused");
    is_int(cudaSuccess, launch(1, 1, 1024, 48 * 1024, k_nothing, NULL), "1024 threads and 48 KiB are fine");

    nstarted = 0;
    is_int(cudaSuccess, launch(1, 1, 256, 0, k_neighbour, &yes), "a block with a barrier runs");
    for (int t = 0; t < 256; t++)
        wrong += out_ints[t] != (t + 1) % 256 + 1000;
    for (int t = 0; t < 256; t++)
        moved += started[t] != t;
    is_int(0, wrong, "with __syncthreads every thread reads its neighbour's value");
    ok(moved > 0, "threads start in a random order (%d of 256 out of place)", moved);
    memset(shared_ints, 0, sizeof shared_ints);
    is_int(cudaSuccess, launch(1, 1, 256, 0, k_neighbour, &no), "the same block without the barrier runs");
    wrong = 0;
    for (int t = 0; t < 256; t++)
        wrong += out_ints[t] != (t + 1) % 256 + 1000;
    ok(wrong > 0, "... and the missing __syncthreads shows as wrong values (%d of 256)", wrong);

    is_int(cudaSuccess, launch(1, 1, 64, 0, k_shuffle, NULL), "a block of shuffles runs");
    wrong = 0;
    for (int t = 0; t < 64; t++)
        wrong += out_ints[t] != (t ^ 1) * 3;
    is_int(0, wrong, "every lane gets its partner's value");

    is_int(cudaSuccess, launch(2, 1, 32, shmem, k_poisoned, &shmem), "a launch with dynamic shared memory runs");
    ok(out_ints[0] && out_ints[31], "dynamic shared memory starts as 0xFF bytes (NaN)");

    /* the sticky failures, each on a device of its own */
    is_int(cudaSuccess, cudaSetDevice(2), "cudaSetDevice(2)");
    is_int(cudaErrorLaunchFailure, launch(1, 1, 64, 0, k_half_barrier, NULL),
           "a __syncthreads skipped by half the block fails the launch");
    is_int(cudaErrorLaunchFailure, cudaDeviceSynchronize(), "... and the failure is sticky");
    is_int(cudaSuccess, cudaSetDevice(3), "cudaSetDevice(3)");
    is_int(cudaErrorLaunchFailure, launch(1, 1, 32, 0, k_half_shuffle, NULL),
           "a full-mask shuffle reached by half a warp fails the launch");
    is_int(cudaSuccess, cudaSetDevice(0), "cudaSetDevice(0)");
    is_int(cudaSuccess, cudaDeviceSynchronize(), "other devices are unaffected");
}

/* ---- memory ----------------------------------------------------------------- */

static void test_memory(void)
{
    unsigned char host[512], back[512];
    void *d = NULL, *d1 = NULL;
    int n = 0;
    size_t f = 0, t = 0;

    is_int(cudaSuccess, cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    is_int(4, n, "TENDO_SIM_DEVICES=4 gives 4 devices");
    is_int(cudaSuccess, cudaMalloc(&d, 256), "cudaMalloc 256 bytes");
    memset(back, 0, sizeof back);
    is_int(cudaSuccess, cudaMemcpy(back, d, 256, cudaMemcpyDeviceToHost), "device -> host");
    ok(back[0] == 0xFF && back[255] == 0xFF, "new device memory is 0xFF bytes (NaN)");
    for (int i = 0; i < 512; i++)
        host[i] = (unsigned char)i;
    is_int(cudaSuccess, cudaMemcpy(d, host, 256, cudaMemcpyHostToDevice), "host -> device");
    is_int(cudaSuccess, cudaMemcpy(back, d, 256, cudaMemcpyDefault), "device -> host, cudaMemcpyDefault");
    ok(!memcmp(host, back, 256), "the bytes come back");
    is_int(cudaErrorInvalidValue, cudaMemcpy(back, d, 256, cudaMemcpyHostToDevice),
           "a copy of the wrong direction is refused");
    is_int(cudaErrorInvalidValue, cudaGetLastError(), "... and is the last error");
    is_int(cudaSuccess, cudaGetLastError(), "... once");
    is_int(cudaErrorInvalidValue, cudaMemcpy(d, host, 512, cudaMemcpyHostToDevice),
           "a copy past the end of the allocation is refused");
    is_int(cudaErrorInvalidValue, cudaMemset(host, 0, 16), "cudaMemset of host memory is refused");
    is_int(cudaErrorInvalidValue, cudaFree(host), "cudaFree of host memory is refused");
    is_int(cudaSuccess, cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
    ok(f < t, "allocated memory is not free (%zu of %zu)", f, t);
    is_int(cudaSuccess, cudaSetDevice(1), "cudaSetDevice(1)");
    is_int(cudaSuccess, cudaMalloc(&d1, 256), "cudaMalloc on cuda:1");
    is_int(cudaErrorInvalidValue, cudaMemcpyPeerAsync(d1, 0, d, 0, 256, cudaStreamPerThread),
           "a peer copy naming the wrong device is refused");
    is_int(cudaSuccess, cudaMemcpyPeerAsync(d1, 1, d, 0, 256, cudaStreamPerThread), "a peer copy cuda:0 -> cuda:1");
    is_int(cudaSuccess, cudaMemcpy(back, d1, 256, cudaMemcpyDeviceToHost), "... read back");
    ok(!memcmp(host, back, 256), "... the same bytes");
    is_int(cudaSuccess, cudaFree(d1), "cudaFree on cuda:1");
    is_int(cudaSuccess, cudaSetDevice(0), "cudaSetDevice(0)");
    is_int(cudaSuccess, cudaFree(d), "cudaFree");
    is_int(cudaErrorInvalidValue, cudaFree(d), "a second cudaFree is refused");
    (void)cudaGetLastError();
}

/* TENDO_SIM_FAIL_MALLOC=2 (set by main): the process's second device
 * allocation fails, the others do not.  Runs first. */
static void test_injected(void)
{
    void *a = NULL, *b = NULL, *c = NULL;

    is_int(cudaSuccess, cudaMalloc(&a, 64), "the first allocation succeeds");
    is_int(cudaErrorMemoryAllocation, cudaMalloc(&b, 64), "TENDO_SIM_FAIL_MALLOC=2 fails the second");
    is_int(cudaErrorMemoryAllocation, cudaGetLastError(), "... as the last error");
    is_int(cudaSuccess, cudaMalloc(&c, 64), "... which is not sticky: the third succeeds");
    (void)cudaFree(a);
    (void)cudaFree(c);
}

/* ---- cuBLAS ------------------------------------------------------------------ */

static void test_cublas(void)
{
    /* column-major A 2x3, B 3x2: C = A B is 2x2 */
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 2, 1, 1, 1}, one = 1, zero = 0;
    float c[4] = {0}, *da = NULL, *db = NULL, *dc = NULL;
    cublasHandle_t h = NULL;

    is_int(CUBLAS_STATUS_SUCCESS, cublasCreate(&h), "cublasCreate");
    if (cudaMalloc((void **)&da, sizeof a) || cudaMalloc((void **)&db, sizeof b) || cudaMalloc((void **)&dc, sizeof c) ||
        cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice) || cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice))
        bail("device setup failed");
    is_int(CUBLAS_STATUS_SUCCESS,
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, CUDA_R_32F, 2, db, CUDA_R_32F, 3, &zero, dc,
                        CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "cublasGemmEx 2x3 @ 3x2");
    (void)cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    /* C(0,0) = 1*1 + 3*0 + 5*2 = 11, C(1,0) = 2 + 0 + 12 = 14, C(0,1) = 1 + 3 + 5 = 9, C(1,1) = 12 */
    ok(c[0] == 11 && c[1] == 14 && c[2] == 9 && c[3] == 12, "column-major product (%g %g %g %g)", c[0], c[1], c[2],
       c[3]);
    is_int(CUBLAS_STATUS_INVALID_VALUE,
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, CUDA_R_32F, 1, db, CUDA_R_32F, 3, &zero, dc,
                        CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "lda < m is refused");
    is_int(CUBLAS_STATUS_INVALID_VALUE,
           cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, da, CUDA_R_32F, 2, db, CUDA_R_32F, 3, &zero, dc,
                        CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "lda < k for a transposed A is refused");
    is_int(CUBLAS_STATUS_NOT_SUPPORTED,
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, CUDA_R_32F, 2, db, CUDA_R_32F, 3, &zero, dc,
                        CUDA_R_16F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "f32 inputs with an f16 output are not in cuBLAS's table");
    is_int(CUBLAS_STATUS_EXECUTION_FAILED,
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, a, CUDA_R_32F, 2, db, CUDA_R_32F, 3, &zero, dc,
                        CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "a host matrix passed as device memory faults");
    is_int(cudaErrorIllegalAddress, cudaDeviceSynchronize(), "... with a sticky illegal address");
    (void)cublasDestroy(h);
}

int main(void)
{
    /* devices 2 and 3 take the sticky failures of test_launches; cuBLAS's
     * fault comes last, on cuda:0 */
    setenv("TENDO_SIM_DEVICES", "4", 1);
    setenv("TENDO_SIM_FAIL_MALLOC", "2", 1);
    test_injected();
    test_memory();
    test_launches();
    test_cublas();
    return done_testing();
}
#endif
