/* src/storage.c - refcounted storage: the bytes that views share. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "internal.h"

/* Large buffers are aligned to a huge page and offered to the kernel as
 * transparent huge pages: the first touch of a fresh 64 MiB buffer then
 * takes 32 page faults instead of 16384 (numpy does the same). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_THRESHOLD ((size_t)4 << 20)

/* 64-byte aligned host memory of at least nbytes (and at least one line),
 * or NULL. */
static void *host_alloc(size_t nbytes)
{
    size_t align = nbytes >= HUGE_THRESHOLD ? HUGE_PAGE : TENDO__HOST_ALIGN, rounded;
    void *p;

    if (nbytes > SIZE_MAX - align)
        return NULL;
    rounded = (nbytes + align - 1) / align * align;
    if (rounded == 0)
        rounded = align;
    p = aligned_alloc(align, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && align == HUGE_PAGE)
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

tendo__storage *tendo__storage_new(const char *op, size_t nbytes, tendo_device d)
{
    tendo__storage *s;

    if (!tendo__check_device(op, d))
        return NULL;
    if (nbytes > (size_t)PTRDIFF_MAX) {
        tendo__fail(TENDO_ERR_OOM, op, "%zu bytes exceed the address space", nbytes);
        return NULL;
    }
    s = malloc(sizeof *s);
    if (!s) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating a storage header");
        return NULL;
    }
    s->data = host_alloc(nbytes);
    if (!s->data) {
        free(s);
        tendo__fail(TENDO_ERR_OOM, op, "out of memory allocating %zu bytes on %s", nbytes,
                    tendo_device_str(d));
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->nbytes = nbytes;
    s->device = d;
    s->release = NULL;
    s->release_ctx = NULL;
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
    if (s->release)
        s->release(s->release_ctx, s->data, s->nbytes);
    else
        free(s->data);
    free(s);
}
