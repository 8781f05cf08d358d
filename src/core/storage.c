/* src/core/storage.c - refcounted storage: the bytes that views share. */
#define _DEFAULT_SOURCE /* madvise */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <sys/sysinfo.h>
#endif

#include "core/device.h"
#include "core/internal.h"
#include "core/pool.h"

/* Large buffers are aligned to a huge page and offered to the kernel as
 * transparent huge pages: the first touch of a fresh 64 MiB buffer then
 * takes 32 page faults instead of 16384 (numpy does the same). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_THRESHOLD ((size_t)2 << 20)

/* The most host memory one buffer can ever have: RAM plus swap.  Where
 * the kernel overcommits, a larger request would still be granted, and the
 * process killed when it touches the pages; tendo refuses it up front. */
static size_t host_limit(void)
{
    static _Atomic size_t limit;
    size_t l = atomic_load_explicit(&limit, memory_order_relaxed);
#if defined(__linux__)
    struct sysinfo si;

    if (l == 0 && sysinfo(&si) == 0 && si.mem_unit > 0) {
        unsigned long long units = (unsigned long long)si.totalram + si.totalswap;
        l = units > SIZE_MAX / si.mem_unit ? SIZE_MAX : (size_t)(units * si.mem_unit);
        atomic_store_explicit(&limit, l, memory_order_relaxed);
    }
#endif
    return l ? l : SIZE_MAX;
}

/* Host memory for the CPU pool: 64-byte aligned (huge-page aligned and
 * advised when large), or NULL. */
static void *host_alloc(void *ctx, size_t nbytes)
{
    size_t align = nbytes >= HUGE_THRESHOLD ? HUGE_PAGE : TENDO__HOST_ALIGN;
    void *p = NULL;

    (void)ctx;
    if (!tendo__alloc_ok() || nbytes > host_limit() || posix_memalign(&p, align, nbytes ? nbytes : 1) != 0)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == HUGE_PAGE)
        (void)madvise(p, nbytes / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE); /* advice: failure is harmless */
#endif
    return p;
}

static void host_free(void *ctx, void *p, size_t nbytes)
{
    (void)ctx, (void)nbytes;
    free(p);
}

const tendo__device_allocator *tendo__host_allocator(void)
{
    static const tendo__device_allocator host = {host_alloc, host_free, NULL, NULL, NULL, NULL};
    return &host;
}

/* A storage header for nbytes at data on d with one reference, and
 * nothing to give the bytes back to yet; NULL (TENDO_ERR_OOM) on failure. */
static tendo__storage *header_new(const char *op, void *data, size_t nbytes, tendo_device d)
{
    tendo__storage *s = tendo__malloc(sizeof *s);

    if (!s) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating a storage header");
        return NULL;
    }
    atomic_init(&s->refs, 1);
    atomic_init(&s->version, 0);
    s->data = data;
    s->nbytes = nbytes;
    s->device = d;
    s->pool = NULL;
    s->block = NULL;
    s->release = NULL;
    s->release_ctx = NULL;
    atomic_init(&s->prepacked, NULL);
    return s;
}

tendo__storage *tendo__storage_new(const char *op, size_t nbytes, tendo_device d)
{
    tendo__storage *s;
    tendo__pool *pool;
    uintptr_t stream = 0;

    if (!tendo__check_device(op, d))
        return NULL;
    pool = tendo__pool_of(d);
    if (!pool) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for the memory pool of %s", tendo_device_str(d));
        return NULL;
    }
    if (!(s = header_new(op, NULL, nbytes, d)))
        return NULL;
    /* device memory is handed out per stream: this thread's */
    if (tendo__device_ops_of(d.type)->stream_key)
        stream = tendo__device_ops_of(d.type)->stream_key(d.index);
    s->block = tendo__pool_alloc(pool, op, nbytes, stream);
    if (!s->block) {
        free(s);
        return NULL;
    }
    s->data = tendo__pool_block_ptr(s->block);
    s->pool = pool;
    return s;
}

tendo__storage *tendo__storage_wrap(const char *op, void *data, size_t nbytes, tendo_device d,
                                    tendo__release_fn release, void *ctx)
{
    tendo__storage *s = header_new(op, data, nbytes, d);

    if (s) {
        s->release = release;
        s->release_ctx = ctx;
    }
    return s;
}

tendo__storage *tendo__storage_retain(tendo__storage *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void tendo__storage_release(tendo__storage *s)
{
    if (!s)
        return;
    /* acq_rel: the last owner must see every other owner's writes. */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    tendo__prepacked_free_all(s);
    if (s->release)
        s->release(s->release_ctx, s->data, s->nbytes);
    else
        tendo__pool_free(s->pool, s->block);
    free(s);
}
