/* kernels/sim/queue.c - when the simulated devices do the work they are given.
 *
 * By default at once: a kernel, copy or GEMM has run when its call
 * returns, and every stream and event is complete.  With TENDO_SIM_DEFER=1
 * each per-thread stream keeps a queue instead, run only at a sync point,
 * so that work ordered by nothing but luck shows as a wrong result:
 * cudaStreamSynchronize and cudaDeviceSynchronize run the queues,
 * cudaEventSynchronize and cudaEventQuery run the event's stream up to
 * the event, a cudaStreamWaitEvent runs the other stream up to the event
 * only when the waiting stream reaches it, and work on the legacy (NULL)
 * stream runs at once after every queue of its device, as that stream
 * waits for all others.  A queue left by a host thread that exits is run
 * at its exit (the GPU would run it too) and then serves a later thread.
 *
 * The queues are run by whichever host thread syncs, under one lock (the
 * simulated device does one thing at a time), with that thread's current
 * device switched to the stream's while it runs. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

typedef struct job {
    struct job *next;
    void (*run)(void *);
    void (*drop)(void *);
    void *arg;
} job;

struct tendo__sim_stream {
    int device;
    unsigned long long queued, done; /* jobs ever queued, and run */
    job *head, *tail;
    bool owned;                     /* a live host thread's per-thread stream */
    struct tendo__sim_stream *next; /* every stream there is */
};

/* A block cudaFree'd while work was queued: returned to the host once
 * its device has run its queues. */
typedef struct grave {
    struct grave *next;
    void *p;
    int device;
} grave;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tendo__sim_stream *streams;
static grave *graves;

static bool deferred;
static pthread_once_t deferred_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;

/* The calling thread's per-thread streams, one per device. */
typedef struct own {
    tendo__sim_stream *s[TENDO__SIM_MAX_DEVICES];
} own;
static __thread own *mine;

static void thread_exit(void *v);

/* Reads TENDO_SIM_DEFER once. */
static void deferred_init(void)
{
    const char *s = getenv("TENDO_SIM_DEFER");

    deferred = s && *s && strcmp(s, "0") != 0;
    (void)pthread_key_create(&exit_key, thread_exit);
}

bool tendo__sim_deferred(void)
{
    pthread_once(&deferred_once, deferred_init);
    return deferred;
}

static bool is_legacy(cudaStream_t s) { return s == NULL || s == cudaStreamLegacy; }

/* Runs st's jobs until `upto` of them have run (lock held). */
static void drain(tendo__sim_stream *st, unsigned long long upto)
{
    int prev;

    if (st->done >= upto)
        return;
    prev = tendo__sim_swap_current(st->device);
    while (st->done < upto && st->head) {
        job *j = st->head;

        st->head = j->next;
        if (!st->head)
            st->tail = NULL;
        j->run(j->arg);
        if (j->drop)
            j->drop(j->arg);
        free(j);
        st->done++;
    }
    (void)tendo__sim_swap_current(prev);
}

/* Runs every queue of device dev, then frees the blocks it buried (lock
 * held). */
static void drain_device(int dev)
{
    grave **link = &graves;

    for (tendo__sim_stream *st = streams; st; st = st->next)
        if (st->device == dev)
            drain(st, st->queued);
    while (*link) {
        grave *g = *link;
        if (g->device == dev) {
            *link = g->next;
            free(g->p);
            free(g);
        } else {
            link = &g->next;
        }
    }
}

/* The calling thread's stream on the current device, made (or taken over
 * from a thread that exited) on first use; NULL without memory (lock held). */
static tendo__sim_stream *own_stream(void)
{
    int dev = tendo__sim_current();
    tendo__sim_stream *st;

    if (!mine) {
        if (!(mine = calloc(1, sizeof *mine)))
            return NULL;
        (void)pthread_setspecific(exit_key, mine);
    }
    if (mine->s[dev])
        return mine->s[dev];
    for (st = streams; st; st = st->next)
        if (!st->owned && st->device == dev)
            break;
    if (!st) {
        if (!(st = calloc(1, sizeof *st)))
            return NULL;
        st->device = dev;
        st->next = streams;
        streams = st;
    }
    st->owned = true;
    mine->s[dev] = st;
    return st;
}

/* At host thread exit: runs the thread's queues and frees them for others. */
static void thread_exit(void *v)
{
    own *o = v;

    pthread_mutex_lock(&lock);
    for (int d = 0; d < TENDO__SIM_MAX_DEVICES; d++)
        if (o->s[d]) {
            drain(o->s[d], o->s[d]->queued);
            o->s[d]->owned = false;
        }
    pthread_mutex_unlock(&lock);
    if (mine == o)
        mine = NULL;
    free(o);
}

void tendo__sim_enqueue(cudaStream_t s, void (*run)(void *), void (*drop)(void *), void *arg)
{
    tendo__sim_stream *st;
    job *j;

    if (!tendo__sim_deferred()) {
        run(arg);
        if (drop)
            drop(arg);
        return;
    }
    pthread_mutex_lock(&lock);
    st = is_legacy(s) ? NULL : own_stream();
    j = st ? malloc(sizeof *j) : NULL;
    if (!j) { /* the legacy stream, or no memory to queue: in order, now */
        drain_device(tendo__sim_current());
        run(arg);
        if (drop)
            drop(arg);
    } else {
        *j = (job){NULL, run, drop, arg};
        if (st->tail)
            st->tail->next = j;
        else
            st->head = j;
        st->tail = j;
        st->queued++;
    }
    pthread_mutex_unlock(&lock);
}

void tendo__sim_flush_stream(cudaStream_t s)
{
    tendo__sim_stream *st;

    if (!tendo__sim_deferred())
        return;
    pthread_mutex_lock(&lock);
    if (is_legacy(s))
        drain_device(tendo__sim_current());
    else if ((st = own_stream()) != NULL)
        drain(st, st->queued);
    pthread_mutex_unlock(&lock);
}

void tendo__sim_flush_device(int dev)
{
    if (!tendo__sim_deferred())
        return;
    pthread_mutex_lock(&lock);
    drain_device(dev);
    pthread_mutex_unlock(&lock);
}

tendo__sim_mark tendo__sim_mark_now(cudaStream_t s)
{
    tendo__sim_mark m = {NULL, 0};

    if (!tendo__sim_deferred())
        return m;
    pthread_mutex_lock(&lock);
    if (is_legacy(s)) {
        drain_device(tendo__sim_current()); /* the legacy stream has nothing queued */
    } else if ((m.stream = own_stream()) != NULL) {
        m.ticket = m.stream->queued;
    } else {
        drain_device(tendo__sim_current());
    }
    pthread_mutex_unlock(&lock);
    return m;
}

void tendo__sim_mark_wait(tendo__sim_mark m)
{
    if (!m.stream)
        return;
    pthread_mutex_lock(&lock);
    drain(m.stream, m.ticket);
    pthread_mutex_unlock(&lock);
}

/* A queued cudaStreamWaitEvent: runs the other stream up to the event. */
static void run_wait(void *arg)
{
    const tendo__sim_mark *m = arg;

    drain(m->stream, m->ticket); /* the lock is held while jobs run */
}

void tendo__sim_mark_enqueue_wait(cudaStream_t s, tendo__sim_mark m)
{
    tendo__sim_mark *copy;

    if (!m.stream)
        return;
    if (is_legacy(s) || !(copy = malloc(sizeof *copy))) {
        tendo__sim_mark_wait(m); /* waited for now: as ordered, only sooner */
        return;
    }
    *copy = m;
    tendo__sim_enqueue(s, run_wait, free, copy);
}

bool tendo__sim_bury(void *p, int device)
{
    grave *g;

    if (!tendo__sim_deferred() || !(g = malloc(sizeof *g)))
        return false;
    pthread_mutex_lock(&lock);
    *g = (grave){graves, p, device};
    graves = g;
    pthread_mutex_unlock(&lock);
    return true;
}
