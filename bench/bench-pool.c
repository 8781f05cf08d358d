/* bench/bench-pool.c - the caching allocator and the cost of event sites.
 *
 *   bench-pool            (run it by bench/pool.sh, which also runs it with
 *                          TENDO_POOL=off and against a --disable-events build)
 *
 * Prints "name value unit" lines:
 *   alloc_free_4k / _4m   tensor_f32_empty + tensor_free, per pair
 *   malloc_free_4k / _4m  plain malloc + free of the same bytes, per pair
 *   op_call               tensor_transpose + tensor_free of a tiny tensor, no observer
 *   op_call_observed      the same with an observer that does nothing
 *   frag_pool             peak bytes reserved / peak bytes requested, replaying a
 *                         mixed-size trace (1 KiB..64 MiB, interleaved lifetimes)
 *   frag_pow2             the same trace through power-of-two size classes
 * Not a test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/pool.h"
#include <tendo.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of 5 runs of n calls of body, in ns per call. */
#define NS_PER_CALL(result, n, body)                       \
    do {                                                   \
        double best_ = 1e30;                               \
        for (int rep_ = 0; rep_ < 5; rep_++) {             \
            double t0_ = now();                            \
            for (long i_ = 0; i_ < (n); i_++) {            \
                body;                                      \
            }                                              \
            double dt_ = (now() - t0_) / (double)(n);      \
            if (dt_ < best_)                               \
                best_ = dt_;                               \
        }                                                  \
        result = best_ * 1e9;                              \
    } while (0)

static void bench_alloc(const char *name, int64_t floats, long n)
{
    double ns;
    char label[64];
    size_t bytes = (size_t)floats * sizeof(float);

    NS_PER_CALL(ns, n, {
        tensor_f32 *t = tensor_f32_empty(TENDO_SHAPE(floats), tendo_cpu());
        if (!t)
            exit(1);
        tensor_f32_free(t);
    });
    printf("alloc_free_%s %.1f ns\n", name, ns);
    NS_PER_CALL(ns, n, {
        void *volatile p = malloc(bytes);
        free(p);
    });
    snprintf(label, sizeof label, "malloc_free_%s", name);
    printf("%s %.1f ns\n", label, ns);
}

static void nothing(const tendo_event *e, void *user)
{
    (void)e, (void)user;
}

static void bench_op_call(void)
{
    tensor_f32 *t = tensor_f32_zeros(TENDO_SHAPE(2, 3), tendo_cpu());
    double ns;
    int id;

    NS_PER_CALL(ns, 1000000L, tensor_free(tensor_transpose(t, 0, 1)));
    printf("op_call %.1f ns\n", ns);
    id = tendo_observe(nothing, NULL);
    NS_PER_CALL(ns, 1000000L, tensor_free(tensor_transpose(t, 0, 1)));
    printf("op_call_observed %.1f ns\n", ns);
    tendo_unobserve(id);
    tensor_free(t);
}

/* ---- fragmentation: one trace, two allocators ------------------------------ */

enum { STEPS = 40000, LIVE = 64 };

typedef struct {
    size_t size[STEPS];
    int slot[STEPS]; /* which live slot each step frees-then-fills */
} trace;

static uint64_t rng = 88172645463325252ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Sizes log-uniform over 1 KiB..64 MiB; each step replaces a random one of
 * LIVE live allocations, so lifetimes interleave. */
static void make_trace(trace *tr)
{
    for (int i = 0; i < STEPS; i++) {
        double u = (double)(next_u64() >> 11) * 0x1p-53;
        tr->size[i] = (size_t)exp(log(1024.0) + u * (log(64.0 * 1024 * 1024) - log(1024.0)));
        tr->slot[i] = (int)(next_u64() % LIVE);
    }
}

/* Memory the pool asks for is never touched here, so the trace costs no RSS. */
static void *untouched_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void untouched_free(void *ctx, void *p, size_t n)
{
    (void)ctx, (void)n;
    free(p);
}

static double frag_pool(const trace *tr)
{
    tendo__device_allocator a = {untouched_alloc, untouched_free, NULL, NULL, NULL, NULL};
    tendo__pool *p = tendo__pool_create(tendo_cpu(), &a, false);
    tendo__pool_block *live[LIVE] = {0};
    tendo__pool_detail d;

    for (int i = 0; i < STEPS; i++) {
        int s = tr->slot[i];
        tendo__pool_free(p, live[s]);
        live[s] = tendo__pool_alloc(p, "bench", tr->size[i], 0);
    }
    tendo__pool_get_detail(p, &d);
    for (int s = 0; s < LIVE; s++)
        tendo__pool_free(p, live[s]);
    tendo__pool_destroy(p);
    return (double)d.peak_bytes_reserved / (double)d.peak_bytes_requested;
}

/* Power-of-two classes that cache freed blocks per class and never split:
 * reserved bytes grow whenever a class has no free block. */
static double frag_pow2(const trace *tr)
{
    int64_t free_in[64] = {0}, live_class[LIVE], requested = 0, peak_req = 0, reserved = 0;
    size_t live_size[LIVE] = {0};

    for (int s = 0; s < LIVE; s++)
        live_class[s] = -1;
    for (int i = 0; i < STEPS; i++) {
        int s = tr->slot[i], c = 0;
        if (live_class[s] >= 0) {
            free_in[live_class[s]]++;
            requested -= (int64_t)live_size[s];
        }
        while (((size_t)1 << c) < tr->size[i])
            c++;
        if (free_in[c] > 0)
            free_in[c]--;
        else
            reserved += (int64_t)1 << c;
        live_class[s] = c;
        live_size[s] = tr->size[i];
        requested += (int64_t)tr->size[i];
        if (requested > peak_req)
            peak_req = requested;
    }
    return (double)reserved / (double)peak_req;
}

int main(void)
{
    static trace tr;

    bench_alloc("4k", 1024, 1000000L);
    bench_alloc("4m", 1024 * 1024, 20000L);
    bench_op_call();
    make_trace(&tr);
    printf("frag_pool %.3f ratio\n", frag_pool(&tr));
    printf("frag_pow2 %.3f ratio\n", frag_pow2(&tr));
    return 0;
}
