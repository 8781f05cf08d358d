/* t/drivers/t-pool.c - the caching allocator: rounding, segments, best fit,
 * splitting and merging, stream-ordered reuse, out-of-memory recovery,
 * pass-through mode, and the CPU pool behind tensors. */
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "core/internal.h"
#include "core/pool.h"

/* ---- a mock device: counts its bytes, can run out, has fake events ---- */

typedef struct {
    int64_t live_bytes, limit, allocs, frees;
    int events_made, events_destroyed;
    bool events_done; /* what every event reports */
} mock_dev;

static void *mock_alloc(void *ctx, size_t n)
{
    mock_dev *m = ctx;
    void *p;

    if (m->limit && m->live_bytes + (int64_t)n > m->limit)
        return NULL;
    if (posix_memalign(&p, 512, n) != 0)
        return NULL;
    m->live_bytes += (int64_t)n;
    m->allocs++;
    return p;
}

static void mock_free(void *ctx, void *p, size_t n)
{
    mock_dev *m = ctx;
    m->live_bytes -= (int64_t)n;
    m->frees++;
    free(p);
}

static void *mock_record(void *ctx, uintptr_t stream)
{
    mock_dev *m = ctx;
    m->events_made++;
    return (void *)(stream + 1); /* any non-NULL token */
}

static bool mock_done(void *ctx, void *ev)
{
    (void)ev;
    return ((mock_dev *)ctx)->events_done;
}

static void mock_destroy(void *ctx, void *ev)
{
    (void)ev;
    ((mock_dev *)ctx)->events_destroyed++;
}

static tendo__pool *mock_pool(mock_dev *m, bool bypass)
{
    tendo__device_allocator a = {mock_alloc, mock_free, mock_record, mock_done, mock_destroy, m};
    memset(m, 0, sizeof *m);
    return tendo__pool_create(tendo_cuda(0), &a, bypass);
}

static tendo__pool_detail detail(tendo__pool *p)
{
    tendo__pool_detail d;
    tendo__pool_get_detail(p, &d);
    return d;
}

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

static void test_rounding_and_segments(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    tendo__pool_block *b[100];
    tendo__pool_detail d;

    b[0] = tendo__pool_alloc(p, "t", 1, 0);
    b[1] = tendo__pool_alloc(p, "t", 513, 0);
    b[2] = tendo__pool_alloc(p, "t", MiB, 0);
    ok(tendo__pool_block_size(b[0]) == 512 && tendo__pool_block_size(b[1]) == 1024 &&
           tendo__pool_block_size(b[2]) == MiB, "requests round up to multiples of 512");
    ok(((uintptr_t)tendo__pool_block_ptr(b[1]) & 63) == 0, "blocks are 64-byte aligned");
    d = detail(p);
    is_int(1, d.segments, "three small requests share one 2 MiB segment");
    is_int((int64_t)(2 * MiB), d.bytes_reserved, "  which is all the pool holds");
    is_int(1, d.stats.misses, "  one miss");
    is_int(2, d.stats.hits, "  then hits from its remainder");
    for (int i = 0; i < 3; i++)
        tendo__pool_free(p, b[i]);
    d = detail(p);
    is_int(1, d.free_blocks, "freeing every block merges the segment back into one");
    is_int(0, d.stats.bytes_in_use, "nothing in use");
    is_int((int64_t)(2 * MiB), d.stats.bytes_cached, "all of it cached");
    for (int i = 0; i < 100; i++)
        b[i] = tendo__pool_alloc(p, "t", 4 * KiB, 0);
    d = detail(p);
    is_int(1, d.segments, "100 x 4 KiB reuse the cached segment");
    is_int(101, d.stats.hits + d.stats.misses - 2, "  hits and misses count every allocation");
    for (int i = 0; i < 100; i += 2)
        tendo__pool_free(p, b[i]);
    for (int i = 1; i < 100; i += 2)
        tendo__pool_free(p, b[i]);
    tendo__pool_empty(p);
    d = detail(p);
    ok(d.segments == 0 && d.bytes_reserved == 0 && m.live_bytes == 0, "empty_cache gives every segment back");
    tendo__pool_destroy(p);
}

static void test_best_fit_and_large(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    tendo__pool_block *b[7], *x, *y, *l1, *l2, *l3;
    void *p16;

    /* free 8K, 16K, 32K blocks kept apart by live ones */
    b[0] = tendo__pool_alloc(p, "t", 8 * KiB, 0);
    b[1] = tendo__pool_alloc(p, "t", 512, 0);
    b[2] = tendo__pool_alloc(p, "t", 16 * KiB, 0);
    b[3] = tendo__pool_alloc(p, "t", 512, 0);
    b[4] = tendo__pool_alloc(p, "t", 32 * KiB, 0);
    b[5] = tendo__pool_alloc(p, "t", 512, 0);
    p16 = tendo__pool_block_ptr(b[2]);
    tendo__pool_free(p, b[0]);
    tendo__pool_free(p, b[2]);
    tendo__pool_free(p, b[4]);
    x = tendo__pool_alloc(p, "t", 12 * KiB, 0);
    ok(tendo__pool_block_ptr(x) == p16, "12 KiB takes the best fit, the free 16 KiB block");
    is_int((int64_t)(12 * KiB), (int64_t)tendo__pool_block_size(x), "  split to 12 KiB");
    b[6] = tendo__pool_alloc(p, "t", 4 * KiB, 0);
    ok((char *)tendo__pool_block_ptr(b[6]) == (char *)p16 + 12 * KiB, "  and its 4 KiB rest serves the next 4 KiB");

    l3 = tendo__pool_alloc(p, "t", 12 * MiB + 1, 0);
    ok(tendo__pool_block_size(l3) == 12 * MiB + 512 && detail(p).bytes_reserved == (int64_t)(2 * MiB + 14 * MiB),
       "12 MiB + 1 gets a segment of its own, rounded to 14 MiB");
    l1 = tendo__pool_alloc(p, "t", 3 * MiB, 0);
    l2 = tendo__pool_alloc(p, "t", 3 * MiB, 0);
    ok((char *)tendo__pool_block_ptr(l2) == (char *)tendo__pool_block_ptr(l1) + 3 * MiB &&
           detail(p).bytes_reserved == (int64_t)(2 * MiB + 14 * MiB + 20 * MiB),
       "two 3 MiB requests share a new 20 MiB segment (the 2 MiB left of the 14 is too small)");
    tendo__pool_free(p, l1);
    y = tendo__pool_alloc(p, "t", 12 * MiB, 0);
    ok((char *)tendo__pool_block_ptr(y) == (char *)tendo__pool_block_ptr(l2) + 3 * MiB,
       "12 MiB then fits best in the 14 MiB left after l2");
    tendo__pool_free(p, y);
    tendo__pool_free(p, l2);
    tendo__pool_free(p, l3);
    tendo__pool_free(p, x);
    for (int i = 1; i < 7; i += 2)
        tendo__pool_free(p, b[i]);
    tendo__pool_free(p, b[6]);
    ok(detail(p).free_blocks == 3, "all free: one block per segment");
    tendo__pool_destroy(p);
    ok(m.live_bytes == 0, "destroy releases everything");
}

static void test_streams(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    tendo__pool_block *a, *b, *c, *s2;
    void *pa;

    a = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    pa = tendo__pool_block_ptr(a);
    tendo__pool_record_stream(p, a, 2);
    tendo__pool_record_stream(p, a, 2);
    tendo__pool_record_stream(p, a, 1); /* its own stream: nothing to wait for */
    tendo__pool_free(p, a);
    is_int(1, detail(p).pending_blocks, "a block used on another stream waits after free");
    is_int(1, m.events_made, "  on one event, for that stream");
    b = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    ok(tendo__pool_block_ptr(b) != pa, "  and is not handed out while the event is pending");
    m.events_done = true;
    c = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    ok(tendo__pool_block_ptr(c) == pa, "once the event completes, it is reused");
    is_int(1, m.events_destroyed, "  and the event is destroyed");
    s2 = tendo__pool_alloc(p, "t", 64 * KiB, 2);
    ok(tendo__pool_block_ptr(s2) != pa && detail(p).segments == 2,
       "a request on another stream never takes stream 1's blocks");
    tendo__pool_free(p, b);
    tendo__pool_free(p, c);
    tendo__pool_free(p, s2);
    tendo__pool_destroy(p);
    ok(m.live_bytes == 0, "nothing leaked");
}

/* A stream that used a block leaves an event after its work
 * (record_use_done); a later free, from any thread, waits on that event
 * instead of asking for a new one, and the superseded events are
 * destroyed. */
static void test_use_events(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    tendo__pool_block *a, *b;
    void *pa;

    a = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    pa = tendo__pool_block_ptr(a);
    tendo__pool_record_use_done(p, a, 2); /* not a noted use yet: ignored */
    is_int(0, m.events_made, "record_use_done of a stream with no noted use makes no event");
    tendo__pool_record_stream(p, a, 2);
    tendo__pool_record_use_done(p, a, 2);
    tendo__pool_record_use_done(p, a, 2); /* later work: replaces the first event */
    ok(m.events_made == 2 && m.events_destroyed == 1, "each record_use_done replaces the stream's event (2 made, 1 destroyed)");
    tendo__pool_free(p, a);
    ok(m.events_made == 2 && detail(p).pending_blocks == 1,
       "the free waits on the event left after the use, making none");
    b = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    ok(tendo__pool_block_ptr(b) != pa, "  and the block is not reused while it is pending");
    m.events_done = true;
    tendo__pool_free(p, b);
    b = tendo__pool_alloc(p, "t", 64 * KiB, 1);
    ok(tendo__pool_block_ptr(b) == pa && m.events_destroyed == 2, "  then it is, and its event is destroyed");
    tendo__pool_record_stream(p, b, 3);
    tendo__pool_record_use_done(p, b, 3);
    tendo__pool_free(p, b); /* on stream 3's event, already done */
    tendo__pool_destroy(p);
    ok(m.live_bytes == 0 && m.events_made == m.events_destroyed, "destroy releases everything, every event destroyed (%d of %d)",
       m.events_destroyed, m.events_made);
}

static void test_oom(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    tendo__pool_block *a, *b;

    m.limit = 30 * MiB;
    a = tendo__pool_alloc(p, "t", 4 * MiB, 0); /* a 20 MiB segment */
    tendo__pool_free(p, a);
    b = tendo__pool_alloc(p, "t", 16 * MiB, 0); /* needs 16 more: 36 > 30 */
    ok(b != NULL && detail(p).segments == 1, "out of memory: the cache is emptied and the allocation retried");
    a = tendo__pool_alloc(p, "zeros", 20 * MiB, 0);
    ok(a == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_OOM, "then TENDO_ERR_OOM");
    ok(strstr(tendo_error_message(tendo_last_error()), "zeros: out of memory") != NULL, "  naming the op: %s",
       tendo_error_message(tendo_last_error()));
    tendo__pool_free(p, b);
    tendo__pool_destroy(p);
}

static void test_bypass(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, true);
    tendo__pool_block *a = tendo__pool_alloc(p, "t", 1000, 0);
    tendo__pool_block *b = tendo__pool_alloc(p, "t", 1000, 0);

    ok(m.allocs == 2 && m.live_bytes == 2000, "bypass: every allocation goes to the device, at its exact size");
    tendo__pool_free(p, a);
    ok(m.frees == 1 && m.live_bytes == 1000, "bypass: every free goes straight back");
    tendo__pool_free(p, b);
    is_int(0, detail(p).stats.hits, "bypass: no hits");
    tendo__pool_destroy(p);
}

/* Random allocations and frees on three streams: live blocks never overlap,
 * and everything comes back. */
static void test_random_trace(void)
{
    mock_dev m;
    tendo__pool *p = mock_pool(&m, false);
    enum { LIVE = 200 };
    tendo__pool_block *live[LIVE] = {0};
    uint64_t seed = 7;
    int overlaps = 0;

    for (int step = 0; step < 20000; step++) {
        int i = (int)(t_rand_u64(&seed) % LIVE);
        if (live[i]) {
            tendo__pool_free(p, live[i]);
            live[i] = NULL;
        } else {
            /* sizes log-uniform from 512 B to 32 MiB */
            size_t n = (size_t)exp(t_rand_range(&seed, log(512.0), log(32.0 * MiB)));
            live[i] = tendo__pool_alloc(p, "t", n, t_rand_u64(&seed) % 3);
            if (live[i] && tendo__pool_block_size(live[i]) < n)
                overlaps++;
        }
        if (step % 1000 == 999)
            for (int a = 0; a < LIVE; a++)
                for (int b = a + 1; b < LIVE && live[a]; b++) {
                    char *pa, *pb;
                    if (!live[b])
                        continue;
                    pa = tendo__pool_block_ptr(live[a]);
                    pb = tendo__pool_block_ptr(live[b]);
                    if (pa < pb + tendo__pool_block_size(live[b]) && pb < pa + tendo__pool_block_size(live[a]))
                        overlaps++;
                }
    }
    is_int(0, overlaps, "20000 random allocs/frees on 3 streams: no two live blocks overlap, none too small");
    for (int i = 0; i < LIVE; i++)
        tendo__pool_free(p, live[i]);
    is_int(0, detail(p).stats.bytes_in_use, "after freeing all, nothing is in use");
    tendo__pool_empty(p);
    ok(detail(p).segments == 0 && m.live_bytes == 0, "and empty_cache returns every segment");
    tendo__pool_destroy(p);
}

/* The CPU pool, through tensors and the public statistics.  Under
 * TENDO_POOL=off (the sanitizer run) blocks have their exact sizes and
 * nothing is cached. */
static void test_cpu_pool(void)
{
    const char *env = getenv("TENDO_POOL");
    bool off = env && (!strcmp(env, "off") || !strcmp(env, "0"));
    tendo_pool_stats s0 = tendo_pool_get_stats(tendo_cpu()), s1, s2;
    tensor_f32 *a = tensor_f32_zeros(TENDO_SHAPE(1000), tendo_cpu());
    tensor_f32 *s = tensor_f32_zeros(0, NULL, tendo_cpu());
    tensor_f32 *v = tensor_transpose(s, 0, 0);

    s1 = tendo_pool_get_stats(tendo_cpu());
    is_int(s0.allocations + 2, s1.allocations, "two tensors, two pool allocations");
    ok(v == NULL, "(a failed view allocates nothing)");
    tendo_clear_error();
    is_int(s0.bytes_in_use + (off ? 4000 + 4 : 4096 + 512), s1.bytes_in_use,
           off ? "bytes in use: exact sizes with TENDO_POOL=off" : "bytes in use: 4000 -> 4096, 4 -> 512");
    ok(s1.peak_bytes_in_use >= s1.bytes_in_use, "peak >= in use");
    tensor_free(a);
    s2 = tendo_pool_get_stats(tendo_cpu());
    is_int(s1.bytes_in_use - (off ? 4000 : 4096), s2.bytes_in_use, "freeing a tensor returns its block");
    is_int(s1.deallocations + 1, s2.deallocations, "  one deallocation");
    a = tensor_f32_zeros(TENDO_SHAPE(1000), tendo_cpu());
    if (off)
        is_int(s2.misses + 1, tendo_pool_get_stats(tendo_cpu()).misses, "TENDO_POOL=off: every allocation misses");
    else
        is_int(s2.hits + 1, tendo_pool_get_stats(tendo_cpu()).hits, "the same size again is a hit");
    tensor_free(a);
    tensor_free(s);
    tendo_pool_reset_peak(tendo_cpu());
    s2 = tendo_pool_get_stats(tendo_cpu());
    is_int(s2.bytes_in_use, s2.peak_bytes_in_use, "reset_peak restarts the peak from the bytes in use");
    tendo_pool_empty_cache(tendo_cpu());
    is_int(0, tendo_pool_get_stats(tendo_cpu()).bytes_cached, "empty_cache leaves no whole free segment cached");
    is_int(0, tendo_pool_get_stats(tendo_cuda(0)).allocations, "a device without a pool reports zeros");
}

int main(void)
{
    test_rounding_and_segments();
    test_best_fit_and_large();
    test_streams();
    test_use_events();
    test_oom();
    test_bypass();
    test_random_trace();
    test_cpu_pool();
    return done_testing();
}
