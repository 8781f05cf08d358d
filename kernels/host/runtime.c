/* kernels/host/runtime.c - the CUDA backend's host side: devices, the pools'
 * device allocator, per-thread streams, transfers, cuBLAS handles, and the
 * launch wrappers that turn CUDA failures into tendo errors.
 *
 * Streams.  All work goes on cudaStreamPerThread, so two host threads
 * drive one GPU concurrently.  The pool orders frees per stream: a block
 * is reused by its own stream at once, and waits for events when other
 * streams used it.  The pool needs a name for each thread's stream; that
 * is a slot number the thread holds until it exits (see below).  A use of
 * a tensor by another thread's stream is noted at launch
 * (tendo__pool_record_stream), and after the launch that thread
 * leaves an event on its stream (tendo__cuda_end, replacing the previous
 * one).  A free from any thread then waits on those events; only a use
 * with no event (its recording failed) costs a device synchronization,
 * since CUDA offers no handle to another thread's per-thread stream.
 *
 * The current device.  tendo switches to a tensor's device to work on
 * it; every entry point (the device table's, the pool's allocator) puts
 * the caller's current device back before returning.
 *
 * Errors.  Every CUDA and cuBLAS call is checked; a failure becomes
 * TENDO_ERR_CUDA with CUDA's message.  A failed cudaMalloc is cleared
 * (cudaGetLastError) so that it is not reported again by a later launch
 * check; the pool then empties its cache and retries once before
 * TENDO_ERR_OOM.  An error the application's own CUDA calls left pending
 * is cleared when an op starts (tendo__cuda_use): CUDA keeps one per
 * thread, and the op's launch check would otherwise report it as the
 * op's own.  A sticky error (a faulted kernel: the device's context is
 * broken) is not lost that way: CUDA returns it again from every later
 * call on that device, so the op fails with it.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "host/glue.h"
#include "core/pool.h"

#define MAX_DEVICES 64

/* ---- devices ------------------------------------------------------------ */

static int device_count;
static pthread_once_t count_once = PTHREAD_ONCE_INIT;

static void count_init(void)
{
    int n = 0;

    /* no driver, or no GPU: an error here only means "none" */
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0) {
        (void)cudaGetLastError();
        n = 0;
    }
    device_count = n > MAX_DEVICES ? MAX_DEVICES : n;
}

int tendo__cuda_count(void)
{
    pthread_once(&count_once, count_init);
    return device_count;
}

/* The caller's current device, for device_leave (-1: none). */
static int device_enter(void)
{
    int d = -1;

    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError(); /* no device: nothing to restore */
        d = -1;
    }
    return d;
}

/* Makes d current again, when it is a device and tendo changed it. */
static void device_leave(int d)
{
    int now = -1;

    if (d >= 0 && cudaGetDevice(&now) == cudaSuccess && now != d && cudaSetDevice(d) != cudaSuccess)
        (void)cudaGetLastError();
}

bool tendo__cuda_info(const char *op, int index, char *name, size_t n, size_t *total, size_t *free_bytes)
{
    struct cudaDeviceProp prop;
    size_t f = 0, t = 0;
    int prev;
    bool ok;

    if (!tendo__cuda_ok(op, (int)cudaGetDeviceProperties(&prop, index)))
        return false;
    if (name && n > 0)
        snprintf(name, n, "%s", prop.name);
    if (total)
        *total = prop.totalGlobalMem;
    if (!free_bytes)
        return true;
    /* cudaMemGetInfo asks the current device: switch to index and back */
    prev = device_enter();
    ok = tendo__cuda_ok(op, (int)cudaSetDevice(index)) && tendo__cuda_ok(op, (int)cudaMemGetInfo(&f, &t));
    device_leave(prev);
    if (ok)
        *free_bytes = f;
    return ok;
}

bool tendo__cuda_ok(const char *op, int err)
{
    if (err == (int)cudaSuccess)
        return true;
    /* reported here once: the next launch's cudaGetLastError must not see
     * it again (a sticky error stays, whatever this does) */
    (void)cudaGetLastError();
    tendo__fail(TENDO_ERR_CUDA, op, "CUDA error %d (%s): %s", err, cudaGetErrorName((cudaError_t)err),
                cudaGetErrorString((cudaError_t)err));
    return false;
}

bool tendo__cuda_blas_ok(const char *op, int status)
{
    if (status == (int)CUBLAS_STATUS_SUCCESS)
        return true;
    tendo__fail(TENDO_ERR_CUDA, op, "cuBLAS error %d (%s)", status, cublasGetStatusString((cublasStatus_t)status));
    return false;
}

bool tendo__cuda_use(const char *op, tendo_device d)
{
    /* an error the application's own CUDA calls left pending is not this
     * op's: cleared, so that the check after this op's launches sees only
     * theirs (see the top of this file) */
    (void)cudaGetLastError();
    return tendo__cuda_ok(op, (int)cudaSetDevice(d.index));
}

bool tendo__cuda_sync(const char *op, tendo_device d)
{
    return tendo__cuda_use(op, d) && tendo__cuda_ok(op, (int)cudaDeviceSynchronize());
}

/* ---- per-thread streams --------------------------------------------------- */

/* The pool's name for a thread's stream on a device is a slot number,
 * taken on the thread's first use of the device and given back at the
 * thread's exit, once that stream's work is done: a later thread takes
 * the slot over, and with it the blocks the exited one cached (a name
 * that died with its thread would strand them, and memory would grow in
 * programs that make threads).  A slot is never held by two live threads
 * on one device, which is all the pool needs. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *free_slots;
static size_t nfree_slots, cap_free_slots;
static uintptr_t next_slot = 1;
static pthread_key_t slots_key;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static bool slots_key_ok;

static _Thread_local uintptr_t stream_keys[MAX_DEVICES];

/* Gives slot k back (kept out of use for good when the list cannot grow). */
static void slot_put(uintptr_t k)
{
    pthread_mutex_lock(&slots_lock);
    if (nfree_slots == cap_free_slots) {
        size_t cap = cap_free_slots ? 2 * cap_free_slots : 16;
        uintptr_t *v = realloc(free_slots, cap * sizeof *v);
        if (v) {
            free_slots = v;
            cap_free_slots = cap;
        }
    }
    if (nfree_slots < cap_free_slots)
        free_slots[nfree_slots++] = k;
    pthread_mutex_unlock(&slots_lock);
}

/* At thread exit: waits for the thread's streams, then frees its slots. */
static void slots_exit(void *v)
{
    uintptr_t *keys = v;

    for (int i = 0; i < MAX_DEVICES; i++)
        if (keys[i]) {
            if (cudaSetDevice(i) != cudaSuccess || cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess)
                (void)cudaGetLastError(); /* a broken device runs nothing more */
            slot_put(keys[i]);
            keys[i] = 0;
        }
}

static void slots_init(void) { slots_key_ok = pthread_key_create(&slots_key, slots_exit) == 0; }

uintptr_t tendo__cuda_stream_key(int index)
{
    if (index < 0 || index >= MAX_DEVICES)
        return 0;
    if (stream_keys[index])
        return stream_keys[index];
    pthread_once(&slots_once, slots_init);
    if (!slots_key_ok || pthread_setspecific(slots_key, stream_keys) != 0)
        return 0;
    pthread_mutex_lock(&slots_lock);
    stream_keys[index] = nfree_slots ? free_slots[--nfree_slots] : next_slot++;
    pthread_mutex_unlock(&slots_lock);
    return stream_keys[index];
}

/* ---- the pools' device allocator ---------------------------------------------- */

static void *dev_alloc(void *ctx, size_t nbytes)
{
    void *p = NULL;
    int caller;

    if (!tendo__alloc_ok())
        return NULL;
    caller = device_enter();
    if (cudaSetDevice((int)(intptr_t)ctx) != cudaSuccess ||
        cudaMalloc(&p, nbytes ? nbytes : 1) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: clear it for the next check */
        p = NULL;
    }
    device_leave(caller);
    return p;
}

/* Gives a segment back once the device's queued work is done: the pool
 * releases cached segments (a cache miss, out of memory, empty_cache)
 * while kernels of the stream that last used them may still be queued,
 * and cudaFree is not documented to wait for those.  The whole device,
 * as that stream may be another thread's (no handle to it). */
static void dev_free(void *ctx, void *p, size_t nbytes)
{
    int caller = device_enter();

    (void)nbytes;
    if (cudaSetDevice((int)(intptr_t)ctx) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
        cudaFree(p) != cudaSuccess)
        (void)cudaGetLastError(); /* nothing to report it to (a broken device frees nothing more) */
    device_leave(caller);
}

/* An event after the work queued so far on `stream` of device index
 * (current), or NULL once that work is known to be done. */
static void *record_event_on(int index, uintptr_t stream)
{
    cudaEvent_t ev;

    if (stream != tendo__cuda_stream_key(index))
        goto sync;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess)
        goto sync;
    if (cudaEventRecord(ev, cudaStreamPerThread) != cudaSuccess) {
        (void)cudaEventDestroy(ev);
        goto sync;
    }
    return ev;
sync: /* another thread's stream (or a failure): wait for the whole device */
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess)
        (void)cudaGetLastError();
    return NULL;
}

/* record_event_on the pool's device (see the top of this file). */
static void *dev_record_event(void *ctx, uintptr_t stream)
{
    int caller = device_enter(), index = (int)(intptr_t)ctx;
    void *ev = NULL;

    if (cudaSetDevice(index) != cudaSuccess) {
        (void)cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) /* the one it is on: the best it can do */
            (void)cudaGetLastError();
    } else {
        ev = record_event_on(index, stream);
    }
    device_leave(caller);
    return ev;
}

static bool dev_event_done(void *ctx, void *ev)
{
    int caller = device_enter();
    cudaError_t e;

    (void)cudaSetDevice((int)(intptr_t)ctx);
    e = cudaEventQuery((cudaEvent_t)ev);
    if (e != cudaSuccess) /* not ready yet, or a broken context (nothing will ever run again) */
        (void)cudaGetLastError();
    device_leave(caller);
    return e != cudaErrorNotReady;
}

static void dev_destroy_event(void *ctx, void *ev)
{
    (void)ctx;
    if (cudaEventDestroy((cudaEvent_t)ev) != cudaSuccess)
        (void)cudaGetLastError();
}

static tendo__pool *pools[MAX_DEVICES];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;

tendo__pool *tendo__cuda_pool(int index)
{
    tendo__pool *p;

    if (index < 0 || index >= tendo__cuda_count())
        return NULL;
    pthread_mutex_lock(&pools_lock);
    p = pools[index];
    if (!p) {
        const char *env = getenv("TENDO_POOL");
        bool off = env && (!strcmp(env, "off") || !strcmp(env, "0"));
        tendo__device_allocator a = {dev_alloc, dev_free, dev_record_event, dev_event_done,
                                     dev_destroy_event, (void *)(intptr_t)index};
        p = pools[index] = tendo__pool_create(tendo_cuda(index), &a, off);
    }
    pthread_mutex_unlock(&pools_lock);
    return p;
}

void *tendo__cu_scratch(size_t n, void **block)
{
    int dev = 0;
    tendo__pool *p;
    tendo__pool_block *b;

    *block = NULL;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (!(p = tendo__cuda_pool(dev)) || !(b = tendo__pool_alloc(p, "scratch", n, tendo__cuda_stream_key(dev))))
        return NULL;
    *block = b;
    return tendo__pool_block_ptr(b);
}

void tendo__cu_scratch_free(void *block)
{
    int dev = 0;

    if (block && cudaGetDevice(&dev) == cudaSuccess)
        tendo__pool_free(tendo__cuda_pool(dev), block);
}

/* ---- launches ----------------------------------------------------------------- */

/* Notes that t's block is used by this thread's stream, when it was
 * allocated for another one (so that its reuse waits for this work). */
static void note_use(const tendo__tensor *t, uintptr_t key)
{
    const tendo__storage *s = t->storage;

    if (s->pool && s->block && key && tendo__pool_block_stream(s->block) != key)
        tendo__pool_record_stream(s->pool, s->block, key);
}

static void to_cu_iter(const tendo__iter *it, tendo__cu_iter *c)
{
    memset(c, 0, sizeof *c);
    c->ndim = it->ndim;
    c->nops = it->nops;
    c->numel = it->numel;
    for (int d = 0; d < it->ndim; d++) {
        c->shape[d] = it->shape[d];
        for (int k = 0; k < it->nops; k++)
            c->stride[k][d] = it->stride[k][d];
    }
    for (int k = 0; k < it->nops; k++) {
        c->base[k] = it->base[k];
        c->elsize[k] = (int)it->elsize[k];
    }
}

bool tendo__cuda_begin(const char *op, const tendo__tensor *const *ts, int n)
{
    tendo_device d = ts[0]->storage->device;
    uintptr_t key;

    if (!tendo__cuda_use(op, d))
        return false;
    key = tendo__cuda_stream_key(d.index);
    for (int i = 0; i < n; i++)
        if (ts[i])
            note_use(ts[i], key);
    return true;
}

bool tendo__cuda_end(const tendo__tensor *const *ts, int n, bool ok)
{
    uintptr_t key;

    if (!ok || n == 0 || !ts[0])
        return ok;
    key = tendo__cuda_stream_key(ts[0]->storage->device.index);
    for (int i = 0; i < n; i++) {
        const tendo__storage *s = ts[i] ? ts[i]->storage : NULL;

        if (s && s->pool && s->block && key && tendo__pool_block_stream(s->block) != key)
            tendo__pool_record_use_done(s->pool, s->block, key);
    }
    return ok;
}

bool tendo__cuda_loop(const char *op, const tendo__iter *it, const tendo__tensor *const *ts,
                      tendo__cu_loop_fn fn, const void *ctx)
{
    tendo__cu_iter c;

    if (!fn) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CUDA kernel for this op");
        return false;
    }
    if (!tendo__cuda_begin(op, ts, it->nops))
        return false;
    to_cu_iter(it, &c);
    return tendo__cuda_end(ts, it->nops, tendo__cuda_ok(op, fn(&c, ctx)));
}

bool tendo__cuda_rows(const char *op, const tendo__iter *starts, int64_t len, int64_t in_step,
                      int64_t in2_step, int64_t out_step, const tendo__tensor *const *ts, int nts,
                      tendo__cu_rows_fn fn, const void *ctx)
{
    tendo__cu_rows r;

    if (!fn) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CUDA kernel for this op");
        return false;
    }
    if (!tendo__cuda_begin(op, ts, nts))
        return false;
    to_cu_iter(starts, &r.rows);
    r.len = len;
    r.in_step = in_step;
    r.in2_step = in2_step;
    r.out_step = out_step;
    return tendo__cuda_end(ts, nts, tendo__cuda_ok(op, fn(&r, ctx)));
}

bool tendo__cuda_copy(const char *op, tendo__tensor *out, const tendo__tensor *in)
{
    const tendo__tensor *ts[2] = {out, in};
    tendo__iter it;
    tendo__cu_iter c;

    if (out->numel == 0)
        return true;
    if (!tendo__cuda_begin(op, ts, 2))
        return false;
    tendo__iter_build(&it, out, 1, &in);
    to_cu_iter(&it, &c);
    return tendo__cuda_end(ts, 2, tendo__cuda_ok(op, tendo__cu_copy(&c)));
}

bool tendo__cuda_index(const char *op, const tendo__cu_index *w, const tendo__tensor *const *ts, int nts,
                       tendo__cu_scatter_add_fn add)
{
    if (w->numel == 0)
        return true;
    if (!tendo__cuda_begin(op, ts, nts))
        return false;
    return tendo__cuda_end(ts, nts, tendo__cuda_ok(op, add && !w->check_only ? add(w) : tendo__cu_index_walk(w)));
}

bool tendo__cuda_tri_zero(const char *op, tendo__tensor *t, int64_t k, bool upper)
{
    const tendo__tensor *ts[1] = {t};

    if (t->numel == 0)
        return true;
    if (!tendo__cuda_begin(op, ts, 1))
        return false;
    return tendo__cuda_end(ts, 1, tendo__cuda_ok(op, tendo__cu_tri_zero(tendo__tensor_data(t), t->numel,
                                                                        t->shape[t->ndim - 2], t->shape[t->ndim - 1],
                                                                        k, upper, (int)tendo_dtype_size(t->dtype))));
}

bool tendo__cuda_optim(const char *op, const tendo__cu_optim *w, const tendo__tensor *const *ts, int nts,
                       tendo__cu_optim_fn fn)
{
    if (!fn) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CUDA kernel for this op");
        return false;
    }
    if (w->n == 0)
        return true;
    if (!tendo__cuda_begin(op, ts, nts))
        return false;
    return tendo__cuda_end(ts, nts, tendo__cuda_ok(op, fn(w)));
}

bool tendo__cuda_rand(const char *op, tendo__tensor *t, tendo__cu_rand_fn fn, uint64_t seed, bool normal)
{
    if (!fn) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no CUDA kernel for this op");
        return false;
    }
    return tendo__cuda_use(op, t->storage->device) &&
           tendo__cuda_ok(op, fn(tendo__tensor_data(t), t->numel, seed, normal));
}

bool tendo__cuda_fill(const char *op, tendo__tensor *t, const void *value)
{
    const tendo__tensor *ts[1] = {t};

    if (t->numel == 0)
        return true;
    return tendo__cuda_begin(op, ts, 1) &&
           tendo__cuda_end(ts, 1, tendo__cuda_ok(op, tendo__cu_fill(tendo__tensor_data(t), t->numel,
                                                                   (int)tendo_dtype_size(t->dtype), value)));
}

/* ---- transfers ------------------------------------------------------------------ */

/* Copies of at least STAGE_MIN bytes go through two pinned buffers of
 * STAGE bytes, so that the host memcpy of one chunk overlaps the DMA of
 * the other.  One set of buffers for the process: a thread that finds it
 * busy copies from pageable memory instead. */
#define STAGE ((size_t)8 << 20)
#define STAGE_MIN ((size_t)1 << 20)

static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static void *stage_buf[2];

/* The pinned buffers, locked for the caller; false when they are busy or
 * cannot be had (then the caller copies without them). */
static bool stage_acquire(void)
{
    if (pthread_mutex_trylock(&stage_lock) != 0)
        return false;
    for (int i = 0; i < 2; i++)
        if (!stage_buf[i] && cudaHostAlloc(&stage_buf[i], STAGE, cudaHostAllocPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            stage_buf[i] = NULL;
            pthread_mutex_unlock(&stage_lock);
            return false;
        }
    return true;
}

static void stage_release(void) { pthread_mutex_unlock(&stage_lock); }

/* Host -> device through the pinned buffers: chunk i goes through buffer
 * i % 2, which is refilled only after the event of its previous DMA. */
static int staged_upload(char *dst, const char *src, size_t n)
{
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaError_t e = cudaSuccess;
    size_t off = 0;

    for (int i = 0; i < 2 && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming);
    for (int i = 0; e == cudaSuccess && off < n; i++) {
        int b = i & 1;
        size_t m = n - off < STAGE ? n - off : STAGE;
        if (i >= 2 && (e = cudaEventSynchronize(ev[b])) != cudaSuccess)
            break;
        memcpy(stage_buf[b], src + off, m);
        if ((e = cudaMemcpyAsync(dst + off, stage_buf[b], m, cudaMemcpyHostToDevice, cudaStreamPerThread)) !=
            cudaSuccess)
            break;
        e = cudaEventRecord(ev[b], cudaStreamPerThread);
        off += m;
    }
    /* always drain the stream: the buffers are reused after this returns */
    if (cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess && e == cudaSuccess)
        e = cudaGetLastError();
    for (int i = 0; i < 2; i++)
        if (ev[i])
            (void)cudaEventDestroy(ev[i]);
    return (int)e;
}

/* Device -> host through the pinned buffers: the DMA of chunk i overlaps
 * the host memcpy of chunk i-1 out of the other buffer. */
static int staged_download(char *dst, const char *src, size_t n)
{
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaError_t e = cudaSuccess;
    size_t off = 0, prev_off = 0, prev_m = 0;
    int i = 0;

    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        e = cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming);
    for (; e == cudaSuccess && off < n; i++) {
        int b = i & 1;
        size_t m = n - off < STAGE ? n - off : STAGE;
        /* buffer b was emptied into dst in the previous iteration */
        if ((e = cudaMemcpyAsync(stage_buf[b], src + off, m, cudaMemcpyDeviceToHost, cudaStreamPerThread)) !=
            cudaSuccess)
            break;
        if ((e = cudaEventRecord(ev[b], cudaStreamPerThread)) != cudaSuccess)
            break;
        if (i > 0) {
            if ((e = cudaEventSynchronize(ev[1 - b])) != cudaSuccess)
                break;
            memcpy(dst + prev_off, stage_buf[1 - b], prev_m);
        }
        prev_off = off;
        prev_m = m;
        off += m;
    }
    if (e == cudaSuccess && i > 0 && (e = cudaEventSynchronize(ev[(i - 1) & 1])) == cudaSuccess)
        memcpy(dst + prev_off, stage_buf[(i - 1) & 1], prev_m);
    if (cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess && e == cudaSuccess)
        e = cudaGetLastError();
    for (int k = 0; k < 2; k++)
        if (ev[k])
            (void)cudaEventDestroy(ev[k]);
    return (int)e;
}

static int plain_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, cudaStreamPerThread);

    if (e == cudaSuccess)
        e = cudaStreamSynchronize(cudaStreamPerThread);
    return (int)e;
}

/* n bytes between host and device memory on d, either way. */
static bool transfer(const char *op, tendo_device d, void *dst, const void *src, size_t n, bool up)
{
    int e;

    if (n == 0)
        return true;
    if (!tendo__cuda_use(op, d))
        return false;
    if (n >= STAGE_MIN && stage_acquire()) {
        e = up ? staged_upload(dst, src, n) : staged_download(dst, src, n);
        stage_release();
    } else {
        e = plain_copy(dst, src, n, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    }
    return tendo__cuda_ok(op, e);
}

bool tendo__cuda_upload(const char *op, tendo_device d, void *dst, const void *src, size_t n)
{
    return transfer(op, d, dst, src, n, true);
}

bool tendo__cuda_download(const char *op, tendo_device d, void *dst, const void *src, size_t n)
{
    return transfer(op, d, dst, src, n, false);
}

/* Peer access between each ordered pair of devices, enabled once where
 * the GPUs support it (cudaMemcpyPeer works without it, through the host). */
static atomic_uchar peer_tried[MAX_DEVICES][MAX_DEVICES];

static void enable_peer(int dd, int sd)
{
    int can = 0;

    if (atomic_exchange(&peer_tried[dd][sd], 1))
        return;
    if (cudaDeviceCanAccessPeer(&can, dd, sd) == cudaSuccess && can && cudaSetDevice(dd) == cudaSuccess)
        (void)cudaDeviceEnablePeerAccess(sd, 0); /* "already enabled" is fine too */
    (void)cudaGetLastError();
}

/* Waits for this thread's work on device d. */
static bool sync_stream(const char *op, tendo_device d)
{
    return tendo__cuda_use(op, d) && tendo__cuda_ok(op, (int)cudaStreamSynchronize(cudaStreamPerThread));
}

bool tendo__cuda_peer(const char *op, tendo_device dd, void *dst, tendo_device sd, const void *src, size_t n)
{
    if (n == 0)
        return true;
    enable_peer(dd.index, sd.index);
    /* the source's earlier work is on the source device's stream */
    if (!sync_stream(op, sd) || !tendo__cuda_use(op, dd))
        return false;
    return tendo__cuda_ok(op, (int)cudaMemcpyPeerAsync(dst, dd.index, src, sd.index, n, cudaStreamPerThread)) &&
           tendo__cuda_ok(op, (int)cudaStreamSynchronize(cudaStreamPerThread));
}

/* ---- cuBLAS: one handle per device per thread ------------------------------------ */

static pthread_key_t handles_key;
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;
static bool handles_key_ok;

/* At thread exit: destroys the thread's handles. */
static void handles_free(void *v)
{
    cublasHandle_t *h = v;

    for (int i = 0; i < MAX_DEVICES; i++)
        if (h[i] && cudaSetDevice(i) == cudaSuccess)
            (void)cublasDestroy(h[i]);
    free(h);
}

static void handles_init(void) { handles_key_ok = pthread_key_create(&handles_key, handles_free) == 0; }

void *tendo__cuda_cublas(const char *op, int index)
{
    cublasHandle_t *h;

    pthread_once(&handles_once, handles_init);
    if (!handles_key_ok) {
        tendo__fail(TENDO_ERR_OOM, op, "no thread-specific key for cuBLAS handles");
        return NULL;
    }
    h = pthread_getspecific(handles_key);
    if (!h) {
        h = tendo__calloc(MAX_DEVICES, sizeof *h);
        if (!h || pthread_setspecific(handles_key, h) != 0) {
            free(h);
            tendo__fail(TENDO_ERR_OOM, op, "out of memory for cuBLAS handles");
            return NULL;
        }
    }
    if (!h[index]) {
        cublasHandle_t made = NULL;

        /* cached only once fully set up: a failed create leaves no handle */
        if (!tendo__cuda_use(op, tendo_cuda(index)) || !tendo__cuda_blas_ok(op, (int)cublasCreate(&made)))
            return NULL;
        /* f16/bf16 outputs: keep the split-K sums in f32, so each result
         * is rounded once, as on the CPU */
        if (!tendo__cuda_blas_ok(op, (int)cublasSetStream(made, cudaStreamPerThread)) ||
            !tendo__cuda_blas_ok(op, (int)cublasSetMathMode(made, CUBLAS_DEFAULT_MATH |
                                                                      CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))) {
            (void)cublasDestroy(made);
            return NULL;
        }
        h[index] = made;
    }
    return h[index];
}

/* ---- the device table ------------------------------------------------------------ */

/* The entries that switch devices, each leaving the caller's current
 * device as it found it: guarded_NAME calls tendo__cuda_NAME between
 * device_enter and device_leave.  (count, info, pool and stream_key
 * leave the device alone.) */
#define GUARDED(type, name, params, args)                                                                      \
    static type guarded_##name params                                                                         \
    {                                                                                                         \
        int caller = device_enter();                                                                          \
        type r = tendo__cuda_##name args;                                                                     \
        device_leave(caller);                                                                                 \
        return r;                                                                                             \
    }
GUARDED(bool, sync, (const char *op, tendo_device d), (op, d))
GUARDED(bool, copy, (const char *op, tendo__tensor *out, const tendo__tensor *in), (op, out, in))
GUARDED(bool, upload, (const char *op, tendo_device d, void *dst, const void *src, size_t n), (op, d, dst, src, n))
GUARDED(bool, download, (const char *op, tendo_device d, void *dst, const void *src, size_t n),
        (op, d, dst, src, n))
GUARDED(bool, peer, (const char *op, tendo_device dd, void *dst, tendo_device sd, const void *src, size_t n),
        (op, dd, dst, sd, src, n))
GUARDED(bool, fill, (const char *op, tendo__tensor *t, const void *value), (op, t, value))
GUARDED(bool, rand, (const char *op, tendo__tensor *t, tendo__cu_rand_fn fn, uint64_t seed, bool normal),
        (op, t, fn, seed, normal))
GUARDED(bool, loop,
        (const char *op, const tendo__iter *it, const tendo__tensor *const *ts, tendo__cu_loop_fn fn,
         const void *ctx),
        (op, it, ts, fn, ctx))
GUARDED(bool, rows,
        (const char *op, const tendo__iter *starts, int64_t len, int64_t in_step, int64_t in2_step,
         int64_t out_step, const tendo__tensor *const *ts, int nts, tendo__cu_rows_fn fn, const void *ctx),
        (op, starts, len, in_step, in2_step, out_step, ts, nts, fn, ctx))
GUARDED(bool, index,
        (const char *op, const tendo__cu_index *w, const tendo__tensor *const *ts, int nts,
         tendo__cu_scatter_add_fn add),
        (op, w, ts, nts, add))
GUARDED(bool, optim,
        (const char *op, const tendo__cu_optim *w, const tendo__tensor *const *ts, int nts, tendo__cu_optim_fn fn),
        (op, w, ts, nts, fn))
GUARDED(bool, tri_zero, (const char *op, tendo__tensor *t, int64_t k, bool upper), (op, t, k, upper))
GUARDED(bool, matmul, (const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out),
        (op, a, b, out))
GUARDED(tendo__tensor *, rope,
        (const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot, double base,
         bool interleaved),
        (op, x, positions, rot, base, interleaved))
GUARDED(tendo__tensor *, attention,
        (const char *op, const struct tendo__attn *a, const tendo__tensor *q, const tendo__tensor *k,
         const tendo__tensor *v, const tendo__tensor *mask),
        (op, a, q, k, v, mask))
GUARDED(bool, attention_backward,
        (const char *op, const struct tendo__attn *a, const tendo__tensor *q, const tendo__tensor *k,
         const tendo__tensor *v, const tendo__tensor *mask, const tendo__tensor *out, const tendo__tensor *dout,
         const bool want[3], tendo__tensor *grads[3]),
        (op, a, q, k, v, mask, out, dout, want, grads))

#ifdef TENDO_HAVE_NCCL
GUARDED(bool, collective,
        (const char *op, const struct tendo_comm *c, tendo_device d, const struct tendo__coll *w,
         const tendo__tensor *const *ts, int nts),
        (op, c, d, w, ts, nts))
#endif

const tendo__device_ops tendo__cuda_device = {
    .built = true,
    .count = tendo__cuda_count,
    .info = tendo__cuda_info,
    .pool = tendo__cuda_pool,
    .stream_key = tendo__cuda_stream_key,
    .sync = guarded_sync,
    .copy = guarded_copy,
    .upload = guarded_upload,
    .download = guarded_download,
    .peer = guarded_peer,
    .fill = guarded_fill,
    .rand = guarded_rand,
    .loop = guarded_loop,
    .rows = guarded_rows,
    .index = guarded_index,
    .tri_zero = guarded_tri_zero,
    .optim = guarded_optim,
    .matmul = guarded_matmul,
    .rope = guarded_rope,
    .attention = guarded_attention,
    .attention_backward = guarded_attention_backward,
#ifdef TENDO_HAVE_NCCL
    .collective = guarded_collective,
    .comm_release = tendo__cuda_comm_release,
#endif
};
