/* t/drivers/t-threads.c - many threads creating, viewing, converting and freeing
 * tensors at once, while another registers and removes observers; then the
 * pool holds exactly what it held before.  Run under ThreadSanitizer in CI.
 *
 *   t-threads [SEQUENCES_PER_THREAD]   (default 100000)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"

#define THREADS 8

static int64_t sequences = 100000;
static atomic_int workers_left;
static atomic_llong events_seen;

typedef struct {
    uint64_t seed;
    int64_t wrong, failed;
} worker;

static void counter(const tendo_event *e, void *user)
{
    (void)user;
    /* observers may read what an event names */
    if (e->output)
        (void)tendo_tensor_numel(e->output);
    atomic_fetch_add_explicit(&events_seen, 1, memory_order_relaxed);
}

/* The rounding conversion the sequences make: to bf16 where this build has
 * it, else to i64 (every build has it); both keep the small integer fills. */
#ifdef TENDO_HAVE_BF16
typedef tensor_bf16 narrow_t;
#define TO_NARROW(t) tensor_to_bf16(t)
#define NARROW_0(h) tendo_bf16_to_f32(tensor_data(h)[0])
#else
typedef tensor_i64 narrow_t;
#define TO_NARROW(t) tensor_to_i64(t)
#define NARROW_0(h) ((float)tensor_data(h)[0])
#endif

/* One random create/view/op/free sequence; checks a value it can predict. */
static void sequence(worker *w)
{
    int64_t rows = 1 + (int64_t)(t_rand_u64(&w->seed) % 16), cols = 1 + (int64_t)(t_rand_u64(&w->seed) % 16);
    double fill = (double)(t_rand_u64(&w->seed) % 64);
    tensor_f32 *a = tensor_f32_full(TENDO_SHAPE(rows, cols), fill, tendo_cpu());
    tensor_f32 *t = a ? tensor_transpose(a, 0, 1) : NULL;
    tensor_f32 *s = t ? tensor_slice(t, 0, 0, cols, 2) : NULL;
    narrow_t *h = s ? TO_NARROW(s) : NULL;
    tensor_f32 *c = NULL, *r = NULL;

    switch (t_rand_u64(&w->seed) % 3) {
    case 0: c = t ? tensor_contiguous(t) : NULL; break;
    case 1: c = h ? tensor_to_f32(h) : NULL; break;
    case 2: r = tensor_f32_rand(TENDO_SHAPE(rows), w->seed, tendo_cpu()); c = r ? tensor_clone(r) : NULL; break;
    }
    if (!a || !t || !s || !h || !c)
        w->failed++;
    else if (h && NARROW_0(h) != (float)fill)
        w->wrong++;
    /* free in a scrambled order: views may outlive their base */
    tensor_free(a);
    tensor_free(h);
    tensor_free(c);
    tensor_free(s);
    tensor_free(r);
    tensor_free(t);
}

static void *work(void *arg)
{
    worker *w = arg;

    for (int64_t i = 0; i < sequences; i++)
        sequence(w);
    atomic_fetch_sub(&workers_left, 1);
    return NULL;
}

/* Registers and removes observers while the workers run. */
static void *churn(void *arg)
{
    int64_t *rounds = arg;

    while (atomic_load(&workers_left) > 0) {
        int id = tendo_observe(counter, NULL);
        for (volatile int spin = 0; spin < 1000; spin++)
            ;
        tendo_unobserve(id);
        (*rounds)++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[THREADS], ch;
    worker w[THREADS];
    int64_t wrong = 0, failed = 0, rounds = 0;
    tendo_pool_stats before, after;

    if (argc > 1)
        sequences = atoll(argv[1]);
    before = tendo_pool_get_stats(tendo_cpu());
    atomic_store(&workers_left, THREADS);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.seed = 0x1234567ull * (uint64_t)(i + 1)};
        if (pthread_create(&th[i], NULL, work, &w[i]) != 0)
            bail("pthread_create failed");
    }
    if (pthread_create(&ch, NULL, churn, &rounds) != 0)
        bail("pthread_create failed");
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        wrong += w[i].wrong;
        failed += w[i].failed;
    }
    pthread_join(ch, NULL);
    after = tendo_pool_get_stats(tendo_cpu());

    is_int(0, failed, "%d threads x %lld sequences: no call failed", THREADS, (long long)sequences);
    is_int(0, wrong, "  every predicted value was right");
    is_int(before.bytes_in_use, after.bytes_in_use, "  the pool's bytes in use are back to the start");
    is_int(after.allocations - before.allocations, after.deallocations - before.deallocations,
           "  as many pool frees as allocations");
    ok(rounds > 0, "  observers were added and removed %lld times meanwhile (%lld events seen)",
       (long long)rounds, (long long)atomic_load(&events_seen));
    return done_testing();
}
