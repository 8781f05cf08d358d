/* src/core/events.c - the observer registry and event dispatch. */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np: writers must not starve */
#include <pthread.h>
#include <time.h>

#include "core/events.h"
#include "core/internal.h"

#define MAX_OBSERVERS 64

atomic_int tendo__observers;

static struct {
    int id;
    tendo_observer_fn fn;
    void *user;
} registry[MAX_OBSERVERS];
static int registered, next_id = 1;
static pthread_rwlock_t registry_lock;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
/* >0 while this thread runs an observer: its own calls raise no events */
static _Thread_local int in_observer;

static void registry_init(void)
{
    pthread_rwlockattr_t attr;

    pthread_rwlockattr_init(&attr);
#ifdef PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&registry_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

/* TENDO_TRACE is read when the library is loaded. */
__attribute__((constructor)) static void events_on_load(void) { tendo__trace_from_env(); }

double tendo__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Calls every observer with e; observers' own tendo calls are not seen. */
static void dispatch(const tendo_event *e)
{
    if (in_observer)
        return;
    pthread_once(&registry_once, registry_init);
    in_observer++;
    pthread_rwlock_rdlock(&registry_lock);
    for (int i = 0; i < registered; i++)
        registry[i].fn(e, registry[i].user);
    pthread_rwlock_unlock(&registry_lock);
    in_observer--;
}

int tendo_observe(tendo_observer_fn fn, void *user)
{
    static const char op[] = "observe";
    int id = -1;

    if (!fn) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "observer function is NULL");
        return -1;
    }
    if (in_observer) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "cannot register an observer from inside one");
        return -1;
    }
    pthread_once(&registry_once, registry_init);
    pthread_rwlock_wrlock(&registry_lock);
    if (registered < MAX_OBSERVERS) {
        id = next_id++;
        registry[registered].id = id;
        registry[registered].fn = fn;
        registry[registered].user = user;
        registered++;
        atomic_store_explicit(&tendo__observers, registered, memory_order_relaxed);
    }
    pthread_rwlock_unlock(&registry_lock);
    if (id < 0)
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "all %d observer slots are taken", MAX_OBSERVERS);
    return id;
}

void tendo_unobserve(int id)
{
    if (in_observer) {
        tendo__fail(TENDO_ERR_INVALID_ARG, "unobserve", "cannot remove an observer from inside one");
        return;
    }
    pthread_once(&registry_once, registry_init);
    /* the write lock waits for every running observer to return */
    pthread_rwlock_wrlock(&registry_lock);
    for (int i = 0; i < registered; i++)
        if (registry[i].id == id) {
            registry[i] = registry[--registered];
            atomic_store_explicit(&tendo__observers, registered, memory_order_relaxed);
            break;
        }
    pthread_rwlock_unlock(&registry_lock);
}

const char *tendo_event_kind_str(tendo_event_kind k)
{
    switch (k) {
    case TENDO_EVENT_TENSOR_CREATED: return "tensor created";
    case TENDO_EVENT_TENSOR_FREED: return "tensor freed";
    case TENDO_EVENT_TRANSFER: return "transfer";
    case TENDO_EVENT_OP: return "op";
    case TENDO_EVENT_POOL_ALLOC: return "pool alloc";
    case TENDO_EVENT_POOL_FREE: return "pool free";
    }
    return "unknown event";
}

/* ---- the slow halves of the event sites -------------------------------------- */

static const tendo_tensor *erase(const tendo__tensor *t) { return (const tendo_tensor *)(const void *)t; }

/* numel x element size, saturated (an expanded view can claim 2^62 elements). */
static int64_t tensor_bytes(const tendo__tensor *t)
{
    int64_t bytes;
    return __builtin_mul_overflow(t->numel, (int64_t)tendo_dtype_size(t->dtype), &bytes) ? INT64_MAX : bytes;
}

tendo__tensor *tendo__op_end_slow(tendo__op_scope s, const char *op, tendo__tensor *out,
                                  const tendo__tensor *a, const tendo__tensor *b)
{
    const tendo_tensor *inputs[2];
    tendo_event e = {0};

    if (!out)
        return out;
    if (a)
        inputs[e.ninputs++] = erase(a);
    if (b)
        inputs[e.ninputs++] = erase(b);
    e.kind = TENDO_EVENT_OP;
    e.op = op;
    e.dtype = out->dtype;
    e.device = e.to = out->storage->device;
    e.inputs = inputs;
    e.output = erase(out);
    e.seconds = tendo__now() - s.t0;
    dispatch(&e);
    return out;
}

void tendo__emit_tensor_slow(tendo_event_kind kind, const tendo__tensor *t)
{
    tendo_event e = {0};

    e.kind = kind;
    e.op = "";
    e.dtype = t->dtype;
    e.device = e.to = t->storage->device;
    e.bytes = tensor_bytes(t);
    e.output = erase(t);
    dispatch(&e);
}

void tendo__emit_transfer_slow(const tendo__tensor *from, const tendo__tensor *to)
{
    const tendo_tensor *inputs[1] = {erase(from)};
    tendo_event e = {0};

    e.kind = TENDO_EVENT_TRANSFER;
    e.op = "to";
    e.dtype = to->dtype;
    e.device = from->storage->device;
    e.to = to->storage->device;
    e.bytes = tensor_bytes(to);
    e.ninputs = 1;
    e.inputs = inputs;
    e.output = erase(to);
    dispatch(&e);
}

void tendo__emit_pool_slow(tendo_event_kind kind, tendo_device d, int64_t bytes, bool hit)
{
    tendo_event e = {0};

    e.kind = kind;
    e.op = "";
    e.device = e.to = d;
    e.bytes = bytes;
    e.hit = hit;
    dispatch(&e);
}
