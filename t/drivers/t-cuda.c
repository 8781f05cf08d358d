/* t/drivers/t-cuda.c - every op on cuda:0 against the CPU for every dtype and
 * layout (t/bodies/cuda-body.h), the pool's statistics on the device, and two
 * host threads driving one GPU.  Without a GPU: "# SKIP no CUDA device". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"

/* Whether cuda:0 is tendo's simulated device (./configure --enable-cuda-sim),
 * where each CUDA thread is a fiber on the CPU: the row tests then take
 * smaller shapes down the same kernel paths. */
static bool cu_simulated;

#define TEST_BODY "cuda-body.h"
#include "each-dtype.h"

/* One thread's loop: c = a + b on the device, checked on the host. */
static void *worker(void *arg)
{
    float seed = *(const float *)arg, want[256], got[256];
    int bad = 0;

    for (int it = 0; it < 50 && !bad; it++) {
        tensor_f32 *a = tensor_f32_full(TENDO_SHAPE(256), seed, tendo_cuda(0));
        tensor_f32 *b = tensor_f32_arange(0, 256, 1, tendo_cuda(0));
        tensor_f32 *c = a && b ? tensor_add(a, b) : NULL;
        if (!c || tensor_copy_to(c, got, 256) != TENDO_OK)
            bad = 1;
        for (int i = 0; !bad && i < 256; i++) {
            want[i] = seed + (float)i;
            bad = got[i] != want[i];
        }
        tensor_free(a), tensor_free(b), tensor_free(c);
    }
    return bad ? (void *)1 : NULL;
}

static void test_threads(void)
{
    pthread_t th[2];
    float seeds[2] = {1.0f, 1000.0f};
    void *r[2] = {(void *)1, (void *)1};

    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, worker, &seeds[i]) != 0)
            bail("pthread_create failed");
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], &r[i]);
    ok(r[0] == NULL && r[1] == NULL, "two host threads drive cuda:0 at once, each on its own stream");
    is_int(TENDO_OK, tendo_sync(tendo_cuda(0)), "tendo_sync(cuda:0)");
}

/* Whether the pools cache (TENDO_POOL=off, as in sanitizer runs, makes
 * every allocation a cudaMalloc of its own). */
static bool pool_caches(void)
{
    const char *env = getenv("TENDO_POOL");

    return !env || (strcmp(env, "off") != 0 && strcmp(env, "0") != 0);
}

static void test_pool(void)
{
    tendo_pool_stats before = tendo_pool_get_stats(tendo_cuda(0)), after;
    tensor_f32 *t = tensor_f32_zeros(TENDO_SHAPE(1024, 1024), tendo_cuda(0));

    after = tendo_pool_get_stats(tendo_cuda(0));
    ok(t && after.allocations == before.allocations + 1 && after.bytes_in_use >= before.bytes_in_use + (4 << 20),
       "a device tensor comes from cuda:0's pool");
    tensor_free(t);
    after = tendo_pool_get_stats(tendo_cuda(0));
    if (pool_caches())
        ok(after.bytes_in_use == before.bytes_in_use && after.bytes_cached > 0, "freeing it caches the block");
    else
        skip(1, "TENDO_POOL=off: nothing is cached");
    tendo_pool_empty_cache(tendo_cuda(0));
    is_int(TENDO_OK, tendo_sync(tendo_cuda(0)), "empty_cache leaves the device usable");
}

/* One thread's whole life on cuda:0: a small tensor made and freed. */
static void *short_lived(void *arg)
{
    tensor_f32 *t = tensor_f32_full(TENDO_SHAPE(256), 1.0, tendo_cuda(0));
    float v[256] = {0};
    bool good = t && tensor_copy_to(t, v, 256) == TENDO_OK && v[0] == 1 && v[255] == 1;

    (void)arg;
    tensor_free(t);
    return good ? NULL : (void *)1;
}

/* Threads that come and go: what the pool cached for one serves the next. */
static void test_thread_churn(void)
{
    tendo_pool_stats before, after;
    int bad = 0;

    tendo_pool_empty_cache(tendo_cuda(0));
    before = tendo_pool_get_stats(tendo_cuda(0));
    for (int i = 0; i < 16; i++) {
        pthread_t th;
        void *r = (void *)1;

        if (pthread_create(&th, NULL, short_lived, NULL) != 0)
            bail("pthread_create failed");
        pthread_join(th, &r);
        bad += r != NULL;
    }
    after = tendo_pool_get_stats(tendo_cuda(0));
    is_int(0, bad, "16 threads in turn each make, read and free a device tensor");
    ok(after.bytes_in_use + after.bytes_cached - before.bytes_in_use - before.bytes_cached <= (2 << 20),
       "... and the pool holds at most one more small segment for all of them (%lld bytes more)",
       (long long)(after.bytes_in_use + after.bytes_cached - before.bytes_in_use - before.bytes_cached));
    if (pool_caches())
        ok(after.hits - before.hits >= 15, "... the later ones reusing the block of an exited one (%lld hits)",
           (long long)(after.hits - before.hits));
    else
        skip(1, "TENDO_POOL=off: nothing is cached");
}

int main(void)
{
    if (!tendo_cuda_available())
        skip_all("no CUDA device");
    {
        char name[256] = "";
        cu_simulated = tendo_cuda_device_info(0, name, sizeof name, NULL, NULL) == TENDO_OK &&
                       !strncmp(name, "tendo simulated", 15);
        if (cu_simulated)
            diag("cuda:0 is %s: smaller row shapes", name);
    }
    FOR_EACH_DTYPE(test_cuda);
    test_pool();
    test_threads();
    test_thread_churn();
    return done_testing();
}
