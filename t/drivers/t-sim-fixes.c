/* t/drivers/t-sim-fixes.c - the fixes of a review of tendo's CUDA code, each
 * shown on the simulated device (./configure --enable-cuda-sim) with the
 * work of every stream deferred to its next sync point (TENDO_SIM_DEFER),
 * so that work tendo fails to wait for is still pending when it matters;
 * and how tendo reports a kernel that faults (TENDO_SIM_FAIL_LAUNCH).
 * Skips in any other build. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tendo.h"

#ifndef TENDO_CUDA_SIM
int main(void) { skip_all("not a --enable-cuda-sim build"); }
#else

#include <cuda_runtime_api.h>

#include "sim/sim.h"
#include "tendo/dlpack.h"

/* Review item 3: a cached segment released while a kernel queued on its
 * memory has not run yet. */
static void test_release_waits(void)
{
    tensor_f32 *x = tensor_f32_full(TENDO_SHAPE(1 << 19), 1.0, tendo_cuda(0)), *s;
    float v = NAN;

    if (!x || tendo_sync(tendo_cuda(0)) != TENDO_OK)
        bail("cuda:0 setup failed");
    s = tensor_sum_all(x); /* queued: reads x */
    tensor_free(x);        /* x's 2 MiB go to the cache, a whole segment */
    tendo_pool_empty_cache(tendo_cuda(0));
    ok(s && tensor_copy_to(s, &v, 1) == TENDO_OK, "sum of a tensor freed and released before the sum ran");
    is_double(524288.0, v, 0, "... is right: the segment went back to CUDA after the queued sum");
    tensor_free(s);
}

/* Review item 1: an imported CUDA tensor's deleter runs after tendo's
 * work on it.  The producer here frees its memory in the deleter. */
static int deleted;

static void producer_delete(DLManagedTensor *m)
{
    deleted++;
    (void)cudaFree(m->dl_tensor.data);
    free(m->dl_tensor.shape);
    free(m);
}

static void test_dlpack_deleter(void)
{
    float host[4096];
    void *data = NULL;
    DLManagedTensor *m = calloc(1, sizeof *m);
    int64_t *shape = malloc(sizeof *shape);
    tendo_tensor *e;
    tensor_f32 *x, *s;
    float v = NAN;

    for (int i = 0; i < 4096; i++)
        host[i] = 2.0f;
    if (!m || !shape || cudaMalloc(&data, sizeof host) != cudaSuccess ||
        cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess)
        bail("producer setup failed");
    shape[0] = 4096;
    m->dl_tensor = (DLTensor){data, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
    m->deleter = producer_delete;
    e = tendo_from_dlpack(m);
    x = e ? tendo_as_f32(e) : NULL;
    ok(x != NULL, "a producer's CUDA tensor is imported");
    if (!x)
        return;
    s = tensor_sum_all(x); /* queued: reads the producer's memory */
    tensor_free(x);
    is_int(1, deleted, "freeing the last view calls the producer's deleter");
    ok(s && tensor_copy_to(s, &v, 1) == TENDO_OK, "the sum queued before it is read back");
    is_double(8192.0, v, 0, "... and is right: the deleter ran after tendo's work on the memory");
    tensor_free(s);
}

/* Review item 2: the split reduction's scratch comes from the pool. */
static void test_scratch_pooled(void)
{
    /* a column sum over 2048 rows: four passes of 512 rows each, then a
     * pass adding their partial sums up */
    tensor_f32 *x = tensor_f32_full(TENDO_SHAPE(2048, 4), 0.5, tendo_cuda(0)), *s;
    tendo_pool_stats before, after;
    float got[4] = {0};

    if (!x)
        bail("cuda:0 setup failed");
    before = tendo_pool_get_stats(tendo_cuda(0));
    s = tensor_sum(x, 0, false);
    after = tendo_pool_get_stats(tendo_cuda(0));
    ok(s && tensor_copy_to(s, got, 4) == TENDO_OK, "a split column sum");
    ok(got[0] == 1024 && got[3] == 1024, "... is right (%g %g)", got[0], got[3]);
    is_int(before.allocations + 2, after.allocations, "its output and its scratch came from the pool");
    is_int(before.deallocations + 1, after.deallocations, "... and the scratch went back to it");
    tensor_free(x), tensor_free(s);
}

/* Review item 6: the caller's current device and pending error. */
static void test_caller_state(void)
{
    tensor_f32 *a, *b;
    int dev = -1;
    float v[8] = {0};

    is_int(cudaSuccess, cudaSetDevice(1), "the application makes cuda:1 current");
    a = tensor_f32_full(TENDO_SHAPE(8), 3.0, tendo_cuda(0));
    b = a ? tensor_neg(a) : NULL;
    ok(b && tensor_copy_to(b, v, 8) == TENDO_OK && v[7] == -3, "tendo works on cuda:0");
    is_int(cudaSuccess, cudaGetDevice(&dev), "cudaGetDevice");
    is_int(1, dev, "... and leaves cuda:1 current, as the application had it");
    tensor_free(b);

    is_int(cudaErrorInvalidDevice, cudaSetDevice(99), "an application's own CUDA call fails");
    b = tensor_neg(a);
    ok(b != NULL, "a tendo op after it is not blamed for that error (%s)",
       tendo_error_message(tendo_last_error()));
    tensor_free(a), tensor_free(b);
    (void)cudaSetDevice(0);
}

/* A launch failing on the device (injected; cuda:3 stays broken). */
static void test_launch_failure(void)
{
    tensor_f32 *a = tensor_f32_full(TENDO_SHAPE(64), 1.0, tendo_cuda(3)), *b = NULL;
    char env[32];
    float v[64];
    bool failed;

    if (!a || tendo_sync(tendo_cuda(3)) != TENDO_OK)
        bail("cuda:3 setup failed");
    snprintf(env, sizeof env, "%llu", tendo__sim_launches() + 1);
    setenv("TENDO_SIM_FAIL_LAUNCH", env, 1);
    b = tensor_neg(a);
    /* reported by the launch or, deferred, by the copy that waits for it */
    failed = !b || tensor_copy_to(b, v, 64) != TENDO_OK;
    unsetenv("TENDO_SIM_FAIL_LAUNCH");
    ok(failed, "a kernel that faults fails the op");
    is_int(TENDO_ERR_CUDA, tendo_error_status(tendo_last_error()), "... with TENDO_ERR_CUDA");
    ok(strstr(tendo_error_message(tendo_last_error()), "unspecified launch failure") != NULL,
       "... and CUDA's message (%s)", tendo_error_message(tendo_last_error()));
    tensor_free(b);
    /* TENDO_ERR_CUDA from the launch, or TENDO_ERR_OOM when the output
     * needs a new cudaMalloc (the pool's allocator cannot tell why) */
    ok(tensor_neg(a) == NULL, "the device stays broken: later ops fail too (%s)",
       tendo_error_message(tendo_last_error()));
    tensor_free(a);
    is_int(TENDO_OK, tendo_sync(tendo_cuda(0)), "cuda:0 is unaffected");
}

int main(void)
{
    setenv("TENDO_SIM_DEVICES", "4", 1);
    setenv("TENDO_SIM_DEFER", "1", 1);
    test_release_waits();
    test_dlpack_deleter();
    test_scratch_pooled();
    test_caller_state();
    test_launch_failure();
    return done_testing();
}
#endif
