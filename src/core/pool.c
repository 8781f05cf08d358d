/* src/core/pool.c - the caching allocator (see pool.h for the policy). */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/internal.h"
#include "core/pool.h"

struct tendo__pool_block {
    char *ptr;
    size_t size;                    /* bytes of this block */
    size_t requested;               /* what the caller asked for (0 when free) */
    tendo__pool_block *prev, *next; /* neighbours within the segment, by address */
    uintptr_t stream;               /* the stream it was allocated for */
    uintptr_t *uses;                /* other streams that may still read it */
    void **use_events;              /* per use: an event after its latest noted work, or NULL */
    int nuses, cap_uses;
    void **events;                  /* outstanding events once freed */
    int nevents;
    tendo__pool_block *pending_next;
    bool allocated, small;
};

/* Free blocks of one kind, sorted by (stream, size, address): best fit is
 * the first entry at or after (stream, size). */
typedef struct {
    tendo__pool_block **v;
    size_t n, cap;
} block_set;

struct tendo__pool {
    pthread_mutex_t lock;
    tendo_device device;
    tendo__device_allocator dev;
    bool bypass;
    block_set small, large;
    tendo__pool_block *pending; /* freed, waiting for other streams */
    tendo__pool_block *spare;   /* recycled block records (linked by next) */
    tendo__pool_detail d;
};

/* ---- the sorted set ------------------------------------------------------ */

static int block_cmp(uintptr_t stream, size_t size, const char *ptr, const tendo__pool_block *b)
{
    if (stream != b->stream)
        return stream < b->stream ? -1 : 1;
    if (size != b->size)
        return size < b->size ? -1 : 1;
    if (ptr != b->ptr)
        return (uintptr_t)ptr < (uintptr_t)b->ptr ? -1 : 1;
    return 0;
}

/* Index of the first entry >= (stream, size, ptr). */
static size_t set_lower_bound(const block_set *s, uintptr_t stream, size_t size, const char *ptr)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_cmp(stream, size, ptr, s->v[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool set_insert(block_set *s, tendo__pool_block *b)
{
    size_t at;

    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        tendo__pool_block **v = tendo__realloc(s->v, cap * sizeof *v);
        if (!v)
            return false;
        s->v = v;
        s->cap = cap;
    }
    at = set_lower_bound(s, b->stream, b->size, b->ptr);
    memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof *s->v);
    s->v[at] = b;
    s->n++;
    return true;
}

static void set_remove(block_set *s, const tendo__pool_block *b)
{
    size_t at = set_lower_bound(s, b->stream, b->size, b->ptr);

    if (at < s->n && s->v[at] == b) {
        memmove(s->v + at, s->v + at + 1, (s->n - at - 1) * sizeof *s->v);
        s->n--;
    }
}

/* ---- sizes ----------------------------------------------------------------- */

#ifndef FRAG_SLACK
#define FRAG_SLACK(size) ((size) / 8)
#endif

static size_t round_request(size_t n)
{
    if (n <= TENDO__POOL_ROUND)
        return TENDO__POOL_ROUND;
    return (n + TENDO__POOL_ROUND - 1) / TENDO__POOL_ROUND * TENDO__POOL_ROUND;
}

static size_t segment_size(size_t rounded)
{
    if (rounded <= TENDO__POOL_SMALL)
        return TENDO__POOL_SMALL_SEGMENT;
    if (rounded < TENDO__POOL_MID)
        return TENDO__POOL_LARGE_SEGMENT;
    return (rounded + TENDO__POOL_LARGE_ROUND - 1) / TENDO__POOL_LARGE_ROUND * TENDO__POOL_LARGE_ROUND;
}

/* Whether the rest of a block after taking `size` is worth a block of its
 * own: any 512 bytes in a small segment, more than 1 MiB in a large one
 * (smaller remainders would only feed small requests, which have their own
 * segments). */
static bool worth_splitting(const tendo__pool_block *b, size_t size)
{
    size_t rest = b->size - size;
    return b->small ? rest >= TENDO__POOL_ROUND : rest > TENDO__POOL_SMALL;
}

/* Whether the best free block is a sensible home for a request.  A whole
 * cached segment made for one big request is not carved up for a much
 * smaller one (that would pin the segment for a fraction of its size):
 * the request gets a segment of its own instead, and the cached segments
 * that cannot serve it go back to the device.  This keeps peak reserved
 * within ~10-15% of peak requested on mixed traces (bench/bench-pool). */
static bool fits_well(const tendo__pool_block *b, size_t size)
{
    if (b->prev || b->next || b->size <= TENDO__POOL_LARGE_SEGMENT)
        return true; /* part of a segment in use already, or a shared one */
    return b->size - size <= FRAG_SLACK(size);
}

/* ---- pool ------------------------------------------------------------------ */

tendo__pool *tendo__pool_create(tendo_device d, const tendo__device_allocator *a, bool bypass)
{
    tendo__pool *p = tendo__calloc(1, sizeof *p);

    if (!p)
        return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    p->device = d;
    p->dev = *a;
    p->bypass = bypass;
    return p;
}

static block_set *set_of(tendo__pool *p, const tendo__pool_block *b)
{
    return b->small ? &p->small : &p->large;
}

/* A zeroed block record, recycled when possible (splits and merges happen
 * on most allocations and frees). */
static tendo__pool_block *block_new(tendo__pool *p)
{
    tendo__pool_block *b = p->spare;

    if (!b)
        return tendo__calloc(1, sizeof *b);
    p->spare = b->next;
    memset(b, 0, sizeof *b);
    return b;
}

/* Destroys the use events b still holds (its uses are forgotten next). */
static void drop_use_events(tendo__pool *p, tendo__pool_block *b)
{
    for (int i = 0; i < b->nuses; i++)
        if (b->use_events[i]) {
            p->dev.destroy_event(p->dev.ctx, b->use_events[i]);
            b->use_events[i] = NULL;
        }
}

static void block_delete(tendo__pool *p, tendo__pool_block *b)
{
    drop_use_events(p, b);
    free(b->uses);
    free(b->use_events);
    free(b->events);
    b->next = p->spare;
    p->spare = b;
}

/* Gives a wholly free segment back to the device. */
static void release_segment(tendo__pool *p, tendo__pool_block *b)
{
    set_remove(set_of(p, b), b);
    p->dev.free(p->dev.ctx, b->ptr, b->size);
    p->d.bytes_reserved -= (int64_t)b->size;
    p->d.segments--;
    p->d.free_blocks--;
    block_delete(p, b);
}

/* Frees every free block of s that is a whole segment (of stream, or of
 * any stream when stream is UINTPTR_MAX). */
static void release_whole_segments(tendo__pool *p, block_set *s, uintptr_t stream)
{
    for (size_t i = s->n; i-- > 0;) {
        tendo__pool_block *b = s->v[i];
        if (!b->prev && !b->next && (stream == UINTPTR_MAX || b->stream == stream))
            release_segment(p, b);
    }
}

/* Frees every free block that is a whole segment. */
static void empty_locked(tendo__pool *p)
{
    release_whole_segments(p, &p->small, UINTPTR_MAX);
    release_whole_segments(p, &p->large, UINTPTR_MAX);
}

/* Merges b's right neighbour (out of every set already) into b. */
static void absorb_next(tendo__pool *p, tendo__pool_block *b)
{
    tendo__pool_block *n = b->next;

    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    block_delete(p, n);
}

/* Puts a block back among the free ones, merged with free neighbours. */
static void free_block(tendo__pool *p, tendo__pool_block *b)
{
    block_set *s = set_of(p, b);
    tendo__pool_block *n;

    b->allocated = false;
    drop_use_events(p, b);
    b->nuses = 0;
    if (b->prev && !b->prev->allocated) { /* b goes into its free left neighbour */
        b = b->prev;
        set_remove(s, b);
        p->d.free_blocks--;
        absorb_next(p, b);
    }
    n = b->next;
    if (n && !n->allocated) {
        set_remove(s, n);
        p->d.free_blocks--;
        absorb_next(p, b);
    }
    if (!set_insert(s, b)) {
        /* no memory for the index: give the segment back if it is whole,
         * else keep the block out of reach until its neighbours merge it */
        if (!b->prev && !b->next) {
            p->dev.free(p->dev.ctx, b->ptr, b->size);
            p->d.bytes_reserved -= (int64_t)b->size;
            p->d.segments--;
            block_delete(p, b);
        }
        return;
    }
    p->d.free_blocks++;
}

/* Frees the pending blocks whose events have all completed.  A pending
 * block stays marked allocated, so no neighbour merges into it meanwhile. */
static void process_pending(tendo__pool *p)
{
    tendo__pool_block **link = &p->pending;

    while (*link) {
        tendo__pool_block *b = *link;
        while (b->nevents > 0 && p->dev.event_done(p->dev.ctx, b->events[b->nevents - 1]))
            p->dev.destroy_event(p->dev.ctx, b->events[--b->nevents]);
        if (b->nevents == 0) {
            free(b->events);
            b->events = NULL;
            *link = b->pending_next;
            p->d.pending_blocks--;
            free_block(p, b);
        } else {
            link = &b->pending_next;
        }
    }
}

/* A fresh segment as one free-to-split block, or NULL. */
static tendo__pool_block *new_segment(tendo__pool *p, size_t size, bool small, uintptr_t stream)
{
    tendo__pool_block *b = block_new(p);

    if (!b)
        return NULL;
    b->ptr = p->dev.alloc(p->dev.ctx, size);
    if (!b->ptr) {
        block_delete(p, b);
        return NULL;
    }
    b->size = size;
    b->small = small;
    b->stream = stream;
    p->d.bytes_reserved += (int64_t)size;
    if (p->d.bytes_reserved > p->d.peak_bytes_reserved)
        p->d.peak_bytes_reserved = p->d.bytes_reserved;
    p->d.segments++;
    return b;
}

/* Cuts b down to size; the rest becomes a free block after it. */
static void split(tendo__pool *p, tendo__pool_block *b, size_t size)
{
    tendo__pool_block *rest = block_new(p);

    if (!rest)
        return; /* keep the whole block: correct, only less frugal */
    rest->ptr = b->ptr + size;
    rest->size = b->size - size;
    rest->small = b->small;
    rest->stream = b->stream;
    rest->prev = b;
    rest->next = b->next;
    if (b->next)
        b->next->prev = rest;
    b->next = rest;
    b->size = size;
    if (set_insert(set_of(p, rest), rest))
        p->d.free_blocks++;
}

static void count_alloc(tendo__pool *p, tendo__pool_block *b, size_t nbytes, bool hit)
{
    b->allocated = true;
    b->requested = nbytes;
    p->d.stats.allocations++;
    p->d.stats.bytes_in_use += (int64_t)b->size;
    if (p->d.stats.bytes_in_use > p->d.stats.peak_bytes_in_use)
        p->d.stats.peak_bytes_in_use = p->d.stats.bytes_in_use;
    p->d.bytes_requested += (int64_t)nbytes;
    if (p->d.bytes_requested > p->d.peak_bytes_requested)
        p->d.peak_bytes_requested = p->d.bytes_requested;
    if (hit)
        p->d.stats.hits++;
    else
        p->d.stats.misses++;
}

/* The allocation itself, under the lock; *hit says whether the cache
 * served it. */
static tendo__pool_block *alloc_locked(tendo__pool *p, size_t nbytes, uintptr_t stream, bool *hit)
{
    size_t size = round_request(nbytes);
    bool small = size <= TENDO__POOL_SMALL;
    block_set *s = small ? &p->small : &p->large;
    tendo__pool_block *b = NULL;
    size_t at;

    if (p->bypass) { /* the exact size, so that ASan sees any overrun */
        b = new_segment(p, nbytes ? nbytes : 1, small, stream);
        *hit = false;
        return b;
    }
    if (p->pending)
        process_pending(p);
    at = set_lower_bound(s, stream, size, NULL);
    if (at < s->n && s->v[at]->stream == stream && fits_well(s->v[at], size)) {
        b = s->v[at];
        set_remove(s, b);
        p->d.free_blocks--;
        *hit = true;
    } else {
        size_t seg = segment_size(size);
        /* whole cached large segments could not serve this request (or it
         * is small): give them back before asking the device for more */
        release_whole_segments(p, &p->large, stream);
        b = new_segment(p, seg, small, stream);
        if (!b) { /* out of memory: drop the cache and try once more */
            empty_locked(p);
            b = new_segment(p, seg, small, stream);
        }
        *hit = false;
    }
    if (b && worth_splitting(b, size))
        split(p, b, size);
    return b;
}

tendo__pool_block *tendo__pool_alloc(tendo__pool *p, const char *op, size_t nbytes,
                                     uintptr_t stream)
{
    tendo__pool_block *b;
    bool hit = false;

    if (nbytes > (size_t)PTRDIFF_MAX - TENDO__POOL_LARGE_SEGMENT) {
        tendo__fail(TENDO_ERR_OOM, op, "%zu bytes exceed the address space", nbytes);
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    b = alloc_locked(p, nbytes, stream, &hit);
    if (b)
        count_alloc(p, b, nbytes, hit);
    pthread_mutex_unlock(&p->lock);
    if (!b) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating %zu bytes on %s", nbytes,
                    tendo_device_str(p->device));
        return NULL;
    }
    tendo__emit_pool(TENDO_EVENT_POOL_ALLOC, p->device, (int64_t)b->size, hit);
    return b;
}

/* Waits for other streams' work before the block may be reused; false
 * when it can be freed at once. */
static bool defer_free(tendo__pool *p, tendo__pool_block *b)
{
    int n = 0;

    if (b->nuses == 0 || !p->dev.record_event)
        return false;
    b->events = tendo__calloc((size_t)b->nuses, sizeof *b->events);
    if (!b->events)
        return false; /* cannot track: see below */
    for (int i = 0; i < b->nuses; i++) {
        /* the event the using thread left after its work, or one made now
         * (which costs a device sync when this is another thread) */
        void *ev = b->use_events[i] ? b->use_events[i] : p->dev.record_event(p->dev.ctx, b->uses[i]);

        b->use_events[i] = NULL;
        if (ev)
            b->events[n++] = ev;
    }
    b->nevents = n;
    if (n == 0) { /* every use was waited for already: nothing to track */
        free(b->events);
        b->events = NULL;
        return false;
    }
    b->pending_next = p->pending;
    p->pending = b;
    p->d.pending_blocks++;
    return true;
}

void tendo__pool_free(tendo__pool *p, tendo__pool_block *b)
{
    int64_t size;

    if (!b)
        return;
    size = (int64_t)b->size;
    pthread_mutex_lock(&p->lock);
    p->d.stats.deallocations++;
    p->d.stats.bytes_in_use -= size;
    p->d.bytes_requested -= (int64_t)b->requested;
    b->requested = 0;
    if (p->bypass) {
        p->dev.free(p->dev.ctx, b->ptr, b->size);
        p->d.bytes_reserved -= size;
        p->d.segments--;
        block_delete(p, b);
    } else if (!defer_free(p, b)) {
        free_block(p, b);
    }
    pthread_mutex_unlock(&p->lock);
    tendo__emit_pool(TENDO_EVENT_POOL_FREE, p->device, size, false);
}

void tendo__pool_record_stream(tendo__pool *p, tendo__pool_block *b, uintptr_t stream)
{
    pthread_mutex_lock(&p->lock);
    if (stream != b->stream) {
        bool seen = false;
        for (int i = 0; i < b->nuses; i++)
            seen = seen || b->uses[i] == stream;
        if (!seen && b->nuses == b->cap_uses) {
            int cap = b->cap_uses ? 2 * b->cap_uses : 4;
            uintptr_t *u = tendo__realloc(b->uses, (size_t)cap * sizeof *u);
            void **e = u ? tendo__realloc(b->use_events, (size_t)cap * sizeof *e) : NULL;
            if (u)
                b->uses = u;
            if (e) {
                b->use_events = e;
                b->cap_uses = cap;
            }
        }
        if (!seen && b->nuses < b->cap_uses) {
            b->use_events[b->nuses] = NULL;
            b->uses[b->nuses++] = stream;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

void tendo__pool_record_use_done(tendo__pool *p, tendo__pool_block *b, uintptr_t stream)
{
    if (!p->dev.record_event)
        return;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < b->nuses; i++)
        if (b->uses[i] == stream) {
            void *ev = p->dev.record_event(p->dev.ctx, stream);

            if (ev) { /* the newer event covers the older one's work too */
                if (b->use_events[i])
                    p->dev.destroy_event(p->dev.ctx, b->use_events[i]);
                b->use_events[i] = ev;
            }
            break;
        }
    pthread_mutex_unlock(&p->lock);
}

void *tendo__pool_block_ptr(const tendo__pool_block *b) { return b->ptr; }

size_t tendo__pool_block_size(const tendo__pool_block *b) { return b->size; }

uintptr_t tendo__pool_block_stream(const tendo__pool_block *b) { return b->stream; }

void tendo__pool_get_detail(tendo__pool *p, tendo__pool_detail *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->d;
    out->stats.bytes_cached = p->d.bytes_reserved - p->d.stats.bytes_in_use;
    pthread_mutex_unlock(&p->lock);
}

void tendo__pool_empty(tendo__pool *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->pending)
        process_pending(p);
    empty_locked(p);
    pthread_mutex_unlock(&p->lock);
}

void tendo__pool_reset_peak_of(tendo__pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->d.stats.peak_bytes_in_use = p->d.stats.bytes_in_use;
    p->d.peak_bytes_reserved = p->d.bytes_reserved;
    p->d.peak_bytes_requested = p->d.bytes_requested;
    pthread_mutex_unlock(&p->lock);
}

void tendo__pool_destroy(tendo__pool *p)
{
    if (!p)
        return;
    tendo__pool_empty(p);
    while (p->spare) {
        tendo__pool_block *b = p->spare;
        p->spare = b->next;
        free(b);
    }
    free(p->small.v);
    free(p->large.v);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* ---- the process-wide pools ------------------------------------------------ */

/* The CPU's pool, made on first use; a making that failed (out of memory)
 * is tried again on the next use, not left failing every allocation after. */
static _Atomic(tendo__pool *) cpu_pool;
static pthread_mutex_t cpu_pool_lock = PTHREAD_MUTEX_INITIALIZER;

static tendo__pool *cpu_pool_get(void)
{
    tendo__pool *p = atomic_load_explicit(&cpu_pool, memory_order_acquire);

    if (p)
        return p;
    pthread_mutex_lock(&cpu_pool_lock);
    if (!(p = atomic_load_explicit(&cpu_pool, memory_order_relaxed))) {
        const char *env = getenv("TENDO_POOL");
        bool off = env && (!strcmp(env, "off") || !strcmp(env, "0"));
        p = tendo__pool_create(tendo_cpu(), tendo__host_allocator(), off);
        atomic_store_explicit(&cpu_pool, p, memory_order_release);
    }
    pthread_mutex_unlock(&cpu_pool_lock);
    return p;
}

tendo__pool *tendo__pool_of(tendo_device d)
{
    if (d.type == TENDO_CPU && d.index == 0)
        return cpu_pool_get();
    if (d.type != TENDO_CPU && tendo__device_ops_of(d.type)->pool)
        return tendo__device_ops_of(d.type)->pool(d.index);
    return NULL;
}

tendo_pool_stats tendo_pool_get_stats(tendo_device d)
{
    tendo__pool *p = tendo__pool_of(d);
    tendo__pool_detail det;

    memset(&det, 0, sizeof det);

    if (p)
        tendo__pool_get_detail(p, &det);
    return det.stats;
}

void tendo_pool_empty_cache(tendo_device d)
{
    tendo__pool *p = tendo__pool_of(d);

    if (p)
        tendo__pool_empty(p);
}

void tendo_pool_reset_peak(tendo_device d)
{
    tendo__pool *p = tendo__pool_of(d);

    if (p)
        tendo__pool_reset_peak_of(p);
}
