/* t/drivers/t-sim.c - the simulated CUDA device itself (./configure
 * --enable-cuda-sim, kernels/sim/): that it refuses what a GPU refuses and
 * catches the bugs it is there to catch.  Kernels here are C functions run
 * through the simulator's launch entry, one call per CUDA thread.
 * Skips in any other build. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* out[t] = the float one past the end of the device buffer arg points to
 * (64 floats): an out-of-bounds global read. */
static void k_read_past(void *arg)
{
    const float *p = *(float *const *)arg;

    out_ints[tendo__sim_thread_idx.x] = (int)p[64 + tendo__sim_thread_idx.x];
}

/* A 16-byte vector load from 4 bytes into a 16-byte aligned buffer. */
typedef float v4f __attribute__((vector_size(16)));
static void k_misaligned(void *arg)
{
    const float *p = *(float *const *)arg;
    v4f v = *(const v4f *)(const void *)(p + 1);

    out_ints[tendo__sim_thread_idx.x] = (int)v[0];
}

/* A launch on this thread's stream, waited for (work is deferred here):
 * the launch's error, or else the kernel's. */
static cudaError_t launch(unsigned gx, unsigned gy, unsigned bx, size_t shmem, void (*body)(void *), void *arg)
{
    tendo__sim_config c = {{gx, gy, 1}, {bx, 1, 1}, shmem, cudaStreamPerThread};
    cudaError_t e;

    tendo__sim_launch(&c, body, NULL, arg);
    e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaStreamSynchronize(cudaStreamPerThread);
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
    is_int(5, n, "TENDO_SIM_DEVICES=5 gives 5 devices");
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

/* ---- deferred streams (TENDO_SIM_DEFER=1, set by main) ------------------------ */

/* What k_store and k_load work on: dst[t] = value, or dst[t] = src[t]. */
typedef struct {
    int *dst;
    const int *src;
    int value;
} ints_job;

static void k_store(void *arg)
{
    const ints_job *j = arg;

    j->dst[tendo__sim_thread_idx.x] = j->value;
}

static void k_load(void *arg)
{
    const ints_job *j = arg;

    j->dst[tendo__sim_thread_idx.x] = j->src[tendo__sim_thread_idx.x];
}

/* Queues body(job) on this thread's stream, one block of 64 threads. */
static cudaError_t queue64(void (*body)(void *), ints_job *job)
{
    tendo__sim_config c = {{1, 1, 1}, {64, 1, 1}, 0, cudaStreamPerThread};

    tendo__sim_launch(&c, body, NULL, job);
    return cudaGetLastError();
}

static int *dev_a, *dev_b;
static cudaEvent_t stored;
static ints_job load_job;

/* Another host thread (so another stream): b = a, after waiting for the
 * main thread's event when *arg says so; then the host reads b. */
static void *reader(void *arg)
{
    static int got[64];
    bool wait = *(const bool *)arg;
    int wrong = 0;

    if (wait && cudaStreamWaitEvent(cudaStreamPerThread, stored, 0) != cudaSuccess)
        return NULL;
    load_job = (ints_job){dev_b, dev_a, 0};
    if (queue64(k_load, &load_job) != cudaSuccess || cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess ||
        cudaMemcpy(got, dev_b, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess)
        return NULL;
    for (int t = 0; t < 64; t++)
        wrong += got[t] != 7;
    return (void *)(intptr_t)(wrong + 1);
}

/* Wrong values the reader saw (-1: it failed). */
static int read_on_other_stream(bool wait)
{
    pthread_t th;
    void *r = NULL;

    if (pthread_create(&th, NULL, reader, &wait) != 0)
        bail("pthread_create failed");
    pthread_join(th, &r);
    return (int)(intptr_t)r - 1;
}

static void test_defer(void)
{
    static ints_job store = {NULL, NULL, 7}, load;
    int got[64] = {0}, wrong = 0;

    if (cudaMalloc((void **)&dev_a, 64 * sizeof(int)) || cudaMalloc((void **)&dev_b, 64 * sizeof(int)) ||
        cudaEventCreateWithFlags(&stored, cudaEventDisableTiming))
        bail("device setup failed");
    store.dst = dev_a;
    is_int(cudaSuccess, queue64(k_store, &store), "a = 7 is queued on the main thread's stream");
    is_int(cudaSuccess, cudaEventRecord(stored, cudaStreamPerThread), "... and an event after it");
    ok(read_on_other_stream(false) > 0, "another stream reading a without waiting for the event gets old values");

    is_int(cudaSuccess, cudaMemset(dev_a, 0xFF, 64 * sizeof(int)), "a is reset (the legacy stream)");
    is_int(cudaSuccess, queue64(k_store, &store), "a = 7 is queued again");
    is_int(cudaSuccess, cudaEventRecord(stored, cudaStreamPerThread), "... and the event after it");
    is_int(0, read_on_other_stream(true), "with cudaStreamWaitEvent the other stream reads 7 everywhere");

    /* cudaFree does not wait for work still queued on the memory */
    load = (ints_job){dev_b, dev_a, 0};
    is_int(cudaSuccess, cudaMemset(dev_b, 0, 64 * sizeof(int)), "b = 0");
    is_int(cudaSuccess, queue64(k_load, &load), "b = a is queued");
    is_int(cudaSuccess, cudaFree(dev_a), "a is freed before the copy ran");
    is_int(cudaSuccess, cudaMemcpy(got, dev_b, sizeof got, cudaMemcpyDeviceToHost), "b read back");
    for (int t = 0; t < 64; t++)
        wrong += got[t] != -1;
    is_int(0, wrong, "the queued copy read freed memory as NaN (0xFF bytes)");
    (void)cudaFree(dev_b);
    (void)cudaEventDestroy(stored);
}

/* TENDO_SIM_FAIL_LAUNCH, on cuda:4 (it stays broken). */
static void test_fail_launch(void)
{
    char env[32];
    void *p = NULL;

    is_int(cudaSuccess, cudaSetDevice(4), "cudaSetDevice(4)");
    snprintf(env, sizeof env, "%llu", tendo__sim_launches() + 2);
    setenv("TENDO_SIM_FAIL_LAUNCH", env, 1);
    is_int(cudaSuccess, launch(1, 1, 32, 0, k_nothing, NULL), "the launch before the one named runs");
    {
        tendo__sim_config c = {{1, 1, 1}, {32, 1, 1}, 0, cudaStreamPerThread};
        tendo__sim_launch(&c, k_nothing, NULL, NULL);
    }
    is_int(cudaSuccess, cudaGetLastError(), "TENDO_SIM_FAIL_LAUNCH's launch is accepted");
    is_int(cudaErrorLaunchFailure, cudaStreamSynchronize(cudaStreamPerThread), "... and fails when it runs");
    is_int(cudaErrorLaunchFailure, cudaMalloc(&p, 64), "... stickily: the device refuses everything after");
    is_int(cudaErrorLaunchFailure, cudaGetLastError(), "... and cudaGetLastError keeps saying so");
    unsetenv("TENDO_SIM_FAIL_LAUNCH");
    is_int(cudaSuccess, cudaSetDevice(0), "cudaSetDevice(0)");
    is_int(cudaSuccess, launch(1, 1, 32, 0, k_nothing, NULL), "cuda:0 is unaffected");
}

#if defined(__SANITIZE_ADDRESS__)
/* Whether one block of body, run in a child process, dies with a report
 * whose text has want in it (ASan and UBSan abort here, CI's way). */
static bool dies_with(void (*body)(void *), void *arg, const char *want)
{
    char buf[8192];
    size_t got = 0;
    ssize_t r;
    int fds[2], st = 0;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        bail("pipe or fork failed");
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        launch(1, 1, 32, 0, body, arg);
        _exit(0);
    }
    close(fds[1]);
    while (got + 1 < sizeof buf && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fds[0]);
    waitpid(pid, &st, 0);
    if (!strstr(buf, want))
        diag("the child said: %.300s", buf);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0) && strstr(buf, want);
}
#endif

/* A kernel's out-of-bounds read and misaligned vector load, caught by
 * AddressSanitizer and UndefinedBehaviorSanitizer in a sanitized build
 * (CI's simulated ASan + UBSan step), since the kernels run as host code. */
static void test_sanitizers(void)
{
#if defined(__SANITIZE_ADDRESS__)
    float *d = NULL;

    is_int(cudaSuccess, cudaMalloc((void **)&d, 64 * sizeof(float)), "cudaMalloc of 64 floats");
    ok(dies_with(k_read_past, &d, "heap-buffer-overflow"), "a kernel reading past its buffer is caught by ASan");
    ok(dies_with(k_misaligned, &d, "misaligned address"),
       "a kernel's 16-byte vector load from a 4-byte aligned address is caught by UBSan");
    is_int(cudaSuccess, cudaFree(d), "cudaFree");
#else
    skip(4, "an out-of-bounds read and a misaligned vector load show in an ASan + UBSan build (CI runs one)");
#endif
}

int main(void)
{
    /* devices 2 and 3 take the sticky failures of test_launches, 4 the
     * injected one; cuBLAS's fault comes last, on cuda:0.  Work is
     * deferred throughout (the immediate mode is every other test's). */
    setenv("TENDO_SIM_DEVICES", "5", 1);
    setenv("TENDO_SIM_FAIL_MALLOC", "2", 1);
    setenv("TENDO_SIM_DEFER", "1", 1);
    test_injected();
    test_memory();
    test_launches();
    test_defer();
    test_fail_launch();
    test_sanitizers();
    test_cublas();
    return done_testing();
}
#endif
