/* kernels/sim/memory.c - device and pinned memory of the simulated devices,
 * and the copies and fills between them.
 *
 * Every allocation is host memory noted in one table (sorted by address,
 * under a lock), so that a host pointer passed as device memory, a copy of
 * the wrong direction, or a range running past the end of its allocation
 * is cudaErrorInvalidValue, as on a GPU without unified memory.  New device
 * memory is filled with 0xFF bytes (NaN in every float type), so a read of
 * memory never written shows.  TENDO_SIM_FAIL_MALLOC=N makes the Nth
 * device allocation of the process fail.  The copies, fills and frees
 * that CUDA orders on a stream go through queue.c. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

typedef struct block {
    uintptr_t base;
    size_t size;
    int device; /* -1: pinned host memory */
} block;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static block *table;
static size_t nblocks, capacity;
static size_t used[TENDO__SIM_MAX_DEVICES];
static atomic_long allocations;

/* Index of the first block whose base is above p (table_lock held). */
static size_t upper(uintptr_t p)
{
    size_t lo = 0, hi = nblocks;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (table[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Notes [p, p + size) as memory of device (or pinned, -1); false when
 * the table cannot grow. */
static bool note(void *p, size_t size, int device)
{
    size_t i;
    bool ok = true;

    pthread_mutex_lock(&table_lock);
    if (nblocks == capacity) {
        size_t c = capacity ? 2 * capacity : 64;
        block *t = realloc(table, c * sizeof *t);
        if (t) {
            table = t;
            capacity = c;
        } else {
            ok = false;
        }
    }
    if (ok) {
        i = upper((uintptr_t)p);
        memmove(&table[i + 1], &table[i], (nblocks - i) * sizeof *table);
        table[i] = (block){(uintptr_t)p, size, device};
        nblocks++;
        if (device >= 0)
            used[device] += size;
    }
    pthread_mutex_unlock(&table_lock);
    return ok;
}

/* Drops the block starting at p when it is of the kind asked for (a
 * device's, or pinned when pinned), its size to *size and device to *dev
 * (when not NULL); false when there is none. */
static bool forget(void *p, bool pinned, size_t *size, int *dev)
{
    size_t i;
    bool found = false;

    pthread_mutex_lock(&table_lock);
    i = upper((uintptr_t)p);
    if (i > 0 && table[i - 1].base == (uintptr_t)p && (table[i - 1].device < 0) == pinned) {
        if (table[i - 1].device >= 0)
            used[table[i - 1].device] -= table[i - 1].size;
        if (size)
            *size = table[i - 1].size;
        if (dev)
            *dev = table[i - 1].device;
        memmove(&table[i - 1], &table[i], (nblocks - i) * sizeof *table);
        nblocks--;
        found = true;
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

enum tendo__sim_mem tendo__sim_lookup(const void *p, size_t n, int *dev, bool *partial)
{
    enum tendo__sim_mem kind = TENDO__SIM_HOST;
    uintptr_t a = (uintptr_t)p;
    size_t i;

    if (partial)
        *partial = false;
    pthread_mutex_lock(&table_lock);
    i = upper(a);
    if (i > 0 && a - table[i - 1].base < (table[i - 1].size ? table[i - 1].size : 1)) {
        const block *b = &table[i - 1];
        if (n <= b->size - (a - b->base)) {
            kind = b->device < 0 ? TENDO__SIM_PINNED : TENDO__SIM_DEVICE;
            if (dev)
                *dev = b->device;
        } else if (partial) {
            *partial = true;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return kind;
}

size_t tendo__sim_used(int dev)
{
    size_t n;

    pthread_mutex_lock(&table_lock);
    n = dev >= 0 && dev < TENDO__SIM_MAX_DEVICES ? used[dev] : 0;
    pthread_mutex_unlock(&table_lock);
    return n;
}

/* Whether this allocation is the one TENDO_SIM_FAIL_MALLOC names. */
static bool injected_failure(void)
{
    const char *s = getenv("TENDO_SIM_FAIL_MALLOC");
    long n = atomic_fetch_add(&allocations, 1) + 1;

    return s && *s && strtol(s, NULL, 10) == n;
}

/* 256-byte aligned memory of n bytes (at least 1) noted as device's. */
static cudaError_t alloc(void **p, size_t size, int device)
{
    size_t n = (size + 255) & ~(size_t)255;
    void *m;

    if (!p)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (device >= 0 && (injected_failure() || size > ((size_t)8 << 30) - tendo__sim_used(device)))
        return tendo__sim_error(cudaErrorMemoryAllocation);
    m = aligned_alloc(256, n ? n : 256);
    if (!m)
        return tendo__sim_error(cudaErrorMemoryAllocation);
    if (device >= 0)
        memset(m, 0xFF, n);
    if (!note(m, size, device)) {
        free(m);
        return tendo__sim_error(cudaErrorMemoryAllocation);
    }
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (devPtr && size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    return alloc(devPtr, size, tendo__sim_current());
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    return cudaMalloc(devPtr, size);
}

/* Takes device allocation p out of the table and frees it, or, while
 * work may be queued on it (deferred, unless in_order), makes it NaN and
 * leaves it to queue.c to free once its device has run its queues. */
static cudaError_t release(void *p, bool in_order)
{
    size_t size = 0;
    int dev = 0;

    if (!forget(p, false, &size, &dev))
        return tendo__sim_error(cudaErrorInvalidValue);
    if (tendo__sim_deferred() && !in_order) {
        memset(p, 0xFF, size);
        if (tendo__sim_bury(p, dev))
            return cudaSuccess;
        tendo__sim_flush_device(dev); /* no memory to wait: wait now */
    }
    free(p);
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (!devPtr)
        return cudaSuccess;
    return release(devPtr, false);
}

/* A queued cudaFreeAsync: its stream's earlier work is done. */
static void run_free(void *p)
{
    if (release(p, true) != cudaSuccess)
        (void)cudaGetLastError(); /* freed twice meanwhile: nothing to tell */
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (!devPtr)
        return cudaSuccess;
    if (tendo__sim_lookup(devPtr, 1, NULL, NULL) != TENDO__SIM_DEVICE)
        return tendo__sim_error(cudaErrorInvalidValue);
    tendo__sim_enqueue(stream, run_free, NULL, devPtr);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
        return tendo__sim_error(cudaErrorInvalidValue);
    return alloc(pHost, size, -1);
}

cudaError_t cudaFreeHost(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    if (!forget(ptr, true, NULL, NULL))
        return tendo__sim_error(cudaErrorInvalidValue);
    free(ptr);
    return cudaSuccess;
}

/* Whether [p, p + n) may be used as the kind a copy says: all of it in
 * one allocation of a device (want_device), or host memory that is no
 * part of any device allocation. */
static bool side_ok(const void *p, size_t n, bool want_device, int *dev)
{
    bool partial;
    enum tendo__sim_mem k = tendo__sim_lookup(p, n, dev, &partial);

    if (!p && n)
        return false;
    if (want_device)
        return k == TENDO__SIM_DEVICE;
    return k != TENDO__SIM_DEVICE && !partial;
}

/* A copy or fill on a stream: from src, or of value when src is NULL;
 * from its own snapshot of a pageable source when own is set. */
typedef struct move {
    void *dst;
    const void *src;
    size_t n;
    int value;
    bool own;
} move;

static void run_move(void *v)
{
    const move *m = v;

    if (tendo__sim_sticky())
        return; /* a broken context runs nothing */
    if (m->src)
        memmove(m->dst, m->src, m->n);
    else
        memset(m->dst, m->value, m->n);
}

static void drop_move(void *v)
{
    move *m = v;

    if (m->own)
        free((void *)m->src);
    free(m);
}

/* Has the move of n bytes from src (or fill with value) to dst done on
 * stream as CUDA would: a pageable source is read before the call
 * returns, a pageable destination is written before it returns, and
 * anything else happens when the stream gets to it. */
static cudaError_t move_on(cudaStream_t stream, void *dst, const void *src, size_t n, int value)
{
    bool host_dst = tendo__sim_lookup(dst, n, NULL, NULL) == TENDO__SIM_HOST;
    bool host_src = src && tendo__sim_lookup(src, n, NULL, NULL) == TENDO__SIM_HOST;
    move *m;

    if (!tendo__sim_deferred() || host_dst) {
        tendo__sim_flush_stream(stream);
        if (src)
            memmove(dst, src, n);
        else
            memset(dst, value, n);
        return cudaSuccess;
    }
    if (!(m = malloc(sizeof *m)))
        return tendo__sim_error(cudaErrorMemoryAllocation);
    *m = (move){dst, src, n, value, false};
    if (host_src) {
        void *snap = malloc(n);
        if (!snap) {
            free(m);
            return tendo__sim_error(cudaErrorMemoryAllocation);
        }
        memcpy(snap, src, n);
        m->src = snap;
        m->own = true;
    }
    tendo__sim_enqueue(stream, run_move, drop_move, m);
    return cudaSuccess;
}

/* The copy of every cudaMemcpy*: checks each side's kind, then copies. */
static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    bool dd, sd;

    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    if (count == 0)
        return cudaSuccess;
    switch (kind) {
    case cudaMemcpyHostToHost: dd = false, sd = false; break;
    case cudaMemcpyHostToDevice: dd = true, sd = false; break;
    case cudaMemcpyDeviceToHost: dd = false, sd = true; break;
    case cudaMemcpyDeviceToDevice: dd = true, sd = true; break;
    case cudaMemcpyDefault:
        dd = tendo__sim_lookup(dst, count, NULL, NULL) == TENDO__SIM_DEVICE;
        sd = tendo__sim_lookup(src, count, NULL, NULL) == TENDO__SIM_DEVICE;
        break;
    default: return tendo__sim_error(cudaErrorInvalidMemcpyDirection);
    }
    if (!side_ok(dst, count, dd, NULL) || !side_ok(src, count, sd, NULL))
        return tendo__sim_error(cudaErrorInvalidValue);
    return move_on(stream, dst, src, count, 0);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, NULL);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    int dd = -1, sd = -1;

    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    if (dstDevice < 0 || dstDevice >= tendo__sim_device_count() || srcDevice < 0 ||
        srcDevice >= tendo__sim_device_count())
        return tendo__sim_error(cudaErrorInvalidDevice);
    if (count == 0)
        return cudaSuccess;
    if (!side_ok(dst, count, true, &dd) || !side_ok(src, count, true, &sd) || dd != dstDevice || sd != srcDevice)
        return tendo__sim_error(cudaErrorInvalidValue);
    return move_on(stream, dst, src, count, 0);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    if (tendo__sim_sticky())
        return tendo__sim_error(tendo__sim_sticky());
    if (count == 0)
        return cudaSuccess;
    if (!side_ok(devPtr, count, true, NULL))
        return tendo__sim_error(cudaErrorInvalidValue);
    return move_on(NULL, devPtr, NULL, count, value);
}
