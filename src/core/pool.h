/* src/core/pool.h - the caching allocator, one per device.
 *
 * Modelled on PyTorch's CUDACachingAllocator, but device-independent: a
 * device plugs in a raw allocator (and, for GPUs, events that make frees
 * stream-ordered).
 *
 * - Requests are rounded up to a multiple of 512 bytes.
 * - Small ones (<= 1 MiB) are carved from 2 MiB segments.
 * - Large ones come from 20 MiB segments when under 10 MiB, and otherwise
 *   from a segment of their own rounded to 2 MiB.
 * - Free blocks are found best-fit, among blocks of the same stream.
 * - A block bigger than needed is split, and a freed block merges with its
 *   free neighbours.
 *
 * A block freed while work on other streams may still read it (recorded
 * with tendo__pool_record_stream) waits on events for those streams before
 * it can be handed out again.
 *
 * All entry points lock the pool; critical sections are a few tree
 * operations long.  TENDO_POOL=off in the environment makes a pool
 * pass-through, so that ASan and valgrind see every allocation.
 */
#ifndef TENDO_SRC_POOL_H
#define TENDO_SRC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tendo/core.h"

#define TENDO__POOL_ROUND ((size_t)512)
#define TENDO__POOL_SMALL ((size_t)1 << 20)          /* largest small request */
#define TENDO__POOL_SMALL_SEGMENT ((size_t)2 << 20)
#define TENDO__POOL_MID ((size_t)10 << 20)           /* under this: shared large segments */
#define TENDO__POOL_LARGE_SEGMENT ((size_t)20 << 20)
#define TENDO__POOL_LARGE_ROUND ((size_t)2 << 20)

/* What a device gives the pool.  The event hooks are NULL on devices
 * without streams (the CPU). */
typedef struct {
    void *(*alloc)(void *ctx, size_t nbytes);          /* NULL when out of memory */
    void (*free)(void *ctx, void *ptr, size_t nbytes);
    void *(*record_event)(void *ctx, uintptr_t stream); /* NULL on failure */
    bool (*event_done)(void *ctx, void *event);
    void (*destroy_event)(void *ctx, void *event);
    void *ctx;
} tendo__device_allocator;

typedef struct tendo__pool tendo__pool;
typedef struct tendo__pool_block tendo__pool_block;

/* Extra figures beyond tendo_pool_stats, for benchmarks and tests. */
typedef struct {
    tendo_pool_stats stats;
    int64_t bytes_reserved, peak_bytes_reserved;   /* segments held from the device */
    int64_t bytes_requested, peak_bytes_requested; /* what callers asked for */
    int64_t segments, free_blocks, pending_blocks;
} tendo__pool_detail;

/* A new pool for device d over allocator a (copied).  bypass: no caching.
 * NULL on out of memory. */
tendo__pool *tendo__pool_create(tendo_device d, const tendo__device_allocator *a, bool bypass);
/* Releases every segment; blocks still allocated are leaked to the device,
 * so only destroy an idle pool. */
void tendo__pool_destroy(tendo__pool *p);

/* The process-wide pool of device d (created on first use; the CPU's honours
 * TENDO_POOL=off), or NULL for a device without one. */
tendo__pool *tendo__pool_of(tendo_device d);

/* A block of at least nbytes for work on stream (0 on the CPU); its memory
 * is at tendo__pool_block_ptr().  On failure, frees the cache, retries once,
 * then sets TENDO_ERR_OOM for op and returns NULL. */
tendo__pool_block *tendo__pool_alloc(tendo__pool *p, const char *op, size_t nbytes,
                                     uintptr_t stream);
/* Returns b to its pool (stream-ordered when b was used on other streams). */
void tendo__pool_free(tendo__pool *p, tendo__pool_block *b);
/* Notes that work on stream may use b, so its reuse waits for that stream. */
void tendo__pool_record_stream(tendo__pool *p, tendo__pool_block *b, uintptr_t stream);
/* Called by the thread whose stream it is, after queueing work that uses
 * b: records an event there (replacing the one before), which a later free
 * from any thread waits on instead of synchronizing the device. */
void tendo__pool_record_use_done(tendo__pool *p, tendo__pool_block *b, uintptr_t stream);
/* The block's memory (64-byte aligned at least) and usable size. */
void *tendo__pool_block_ptr(const tendo__pool_block *b);
size_t tendo__pool_block_size(const tendo__pool_block *b);
/* The stream b was allocated for (fixed while b is allocated). */
uintptr_t tendo__pool_block_stream(const tendo__pool_block *b);

/* The CPU's raw allocator (src/core/storage.c). */
const tendo__device_allocator *tendo__host_allocator(void);

void tendo__pool_get_detail(tendo__pool *p, tendo__pool_detail *out);
void tendo__pool_empty(tendo__pool *p);
void tendo__pool_reset_peak_of(tendo__pool *p);

#endif /* TENDO_SRC_POOL_H */
