/* kernels/sim/sched.c - runs one block of a simulated launch: its CUDA
 * threads, their __syncthreads and warp shuffles.
 *
 * Threads are started in a random order (from the launch's seed) by
 * "worker" fibers.  A worker runs thread after thread to completion as
 * plain calls; only when a thread waits at a barrier does its worker stay
 * with it, and a fresh worker starts the next threads.  So a kernel with
 * no barrier costs one fiber switch pair per block, and one with barriers
 * a fiber per thread.  Once every thread has started, the scheduler
 * releases whatever barrier is complete (a warp whose shuffle every lane
 * of its mask reached; the block, when every thread waits at the same
 * __syncthreads) and resumes the released threads, again
 * in the random order, until all have returned.  A barrier that can never
 * complete (a __syncthreads skipped by part of the block, a full-mask
 * shuffle reached by half a warp) fails the block. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fiber.h"
#include "sim/sim.h"

__thread uint3 tendo__sim_thread_idx;
__thread uint3 tendo__sim_block_idx;
__thread dim3 tendo__sim_block_dim;
__thread dim3 tendo__sim_grid_dim;

enum state { UNSTARTED, RUNNING, AT_SYNC, AT_SHFL, DONE };

typedef struct sim_thread {
    uint3 idx;
    unsigned char state;
    unsigned char phase;   /* which of the two shuffle slots it writes next */
    unsigned char release; /* set while the scheduler resumes it */
    unsigned mask;         /* AT_SHFL: the shuffle's lanes */
    const void *site;      /* AT_SYNC: the __syncthreads it waits at */
    tendo__sim_fiber *fiber; /* while it waits at a barrier */
} sim_thread;

typedef struct block_state {
    int n, next;                /* threads, and how many have been started */
    int done, waiting_sync, waiting_shfl; /* threads in each state */
    int order[TENDO__SIM_MAX_THREADS];
    sim_thread t[TENDO__SIM_MAX_THREADS];
    void (*body)(void *);
    void *arg;
    sim_thread *cur;            /* the running thread */
    tendo__sim_fiber *fiber;    /* the running fiber */
    bool fiber_free;            /* the fiber left because it ran out of threads */
    /* shuffle values: each lane writes slot[phase][thread] then waits */
    unsigned char slot[2][TENDO__SIM_MAX_THREADS][16];
} block_state;

static __thread block_state *bs;
static pthread_key_t bs_key;
static pthread_once_t bs_once = PTHREAD_ONCE_INIT;

/* At host thread exit: frees the thread's block state (made again should
 * a later exit handler still run a stream's queue, queue.c). */
static void bs_free(void *b)
{
    if (bs == b)
        bs = NULL;
    free(b);
}

static void bs_key_init(void) { (void)pthread_key_create(&bs_key, bs_free); }

/* Makes t the running thread (what threadIdx reads). */
static void set_current(block_state *b, sim_thread *t)
{
    b->cur = t;
    tendo__sim_thread_idx = t->idx;
}

/* A worker fiber: starts threads until none is left, then goes back to
 * the scheduler, which gives the fiber back (a later block reuses it from
 * its first frame). */
static void worker(void)
{
    for (;;) {
        block_state *b = bs;

        while (b->next < b->n) {
            sim_thread *t = &b->t[b->order[b->next++]];
            t->state = RUNNING;
            set_current(b, t);
            b->body(b->arg);
            t->state = DONE;
            b->done++;
        }
        b->fiber_free = true;
        tendo__sim_fiber_leave(b->fiber);
    }
}

/* Switches to fiber f until it waits or runs out of threads. */
static void run_fiber(block_state *b, tendo__sim_fiber *f)
{
    b->fiber = f;
    b->fiber_free = false;
    tendo__sim_fiber_enter(f);
    if (b->fiber_free)
        tendo__sim_fiber_put(f);
}

/* The running thread waits in state s until the scheduler resumes it. */
static void wait_as(block_state *b, unsigned char s)
{
    sim_thread *t = b->cur;

    t->state = s;
    t->fiber = b->fiber;
    tendo__sim_fiber_leave(t->fiber);
}

void tendo__sim_syncthreads(const void *site)
{
    bs->cur->site = site;
    bs->waiting_sync++;
    wait_as(bs, AT_SYNC);
}

void *tendo__sim_shfl_slot(void)
{
    sim_thread *t = bs->cur;

    return bs->slot[t->phase][t - bs->t];
}

const void *tendo__sim_shfl_wait(unsigned mask, int src)
{
    block_state *b = bs;
    sim_thread *t = b->cur;
    int self = (int)(t - b->t), base = self & ~(TENDO__SIM_WARP - 1), ph = t->phase;

    t->mask = mask;
    b->waiting_shfl++;
    wait_as(b, AT_SHFL);
    /* every lane of the mask has written its slot of this phase, and none
     * can write it again before all have passed the next shuffle */
    t->phase ^= 1;
    if (src >= 0 && src < TENDO__SIM_WARP && base + src < b->n && (mask >> src & 1u))
        return b->slot[ph][base + src];
    return b->slot[ph][self];
}

/* 64 random bits from *s (splitmix64). */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Marks for release the lanes of each warp whose shuffle is complete;
 * false (with *what) when a lane of a waiting mask has returned or waits
 * at __syncthreads.  *any: whether something was released. */
static bool release_warps(block_state *b, bool *any, const char **what)
{
    if (!b->waiting_shfl)
        return true;
    for (int base = 0; base < b->n; base += TENDO__SIM_WARP) {
        unsigned mask = 0;
        bool waiting = false;
        for (int l = 0; l < TENDO__SIM_WARP && base + l < b->n; l++)
            if (b->t[base + l].state == AT_SHFL) {
                mask |= b->t[base + l].mask;
                waiting = true;
            }
        if (!waiting)
            continue;
        for (int l = 0; l < TENDO__SIM_WARP; l++) {
            if (!(mask >> l & 1u))
                continue;
            if (base + l >= b->n || b->t[base + l].state != AT_SHFL) {
                *what = "a warp shuffle that not every lane of its mask reached";
                return false;
            }
        }
        for (int l = 0; l < TENDO__SIM_WARP; l++)
            if (mask >> l & 1u)
                b->t[base + l].release = 1;
        b->waiting_shfl -= __builtin_popcount(mask);
        *any = true;
    }
    return true;
}

/* Marks for release the threads at __syncthreads when every thread of
 * the block waits at the same one; false (with *what) otherwise. */
static bool release_block(block_state *b, const char **what)
{
    const void *site = NULL;

    if (b->done) { /* CUDA: only when every thread of the block gets there */
        *what = "a __syncthreads that threads of the block returned without reaching";
        return false;
    }
    for (int i = 0; i < b->n; i++) {
        sim_thread *t = &b->t[i];
        if (t->state != AT_SYNC) {
            *what = "a block with threads at __syncthreads and at a shuffle at once";
            return false;
        }
        if (site && t->site != site) {
            *what = "threads of one block at different __syncthreads";
            return false;
        }
        site = t->site;
    }
    for (int i = 0; i < b->n; i++)
        if (b->t[i].state == AT_SYNC)
            b->t[i].release = 1;
    b->waiting_sync = 0;
    return true;
}

/* Gives back the fibers of the threads still waiting (a failed block). */
static void abandon(block_state *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->t[i].state == AT_SYNC || b->t[i].state == AT_SHFL) {
            tendo__sim_fiber_put(b->t[i].fiber);
            b->t[i].state = DONE;
        }
}

bool tendo__sim_run_block(void (*body)(void *), void *arg, uint64_t seed, const char **what)
{
    block_state *b = bs;
    unsigned bx = tendo__sim_block_dim.x, by = tendo__sim_block_dim.y;

    if (!b) {
        if (!(b = bs = calloc(1, sizeof *b))) {
            *what = "no memory for the block's state";
            return false;
        }
        pthread_once(&bs_once, bs_key_init);
        (void)pthread_setspecific(bs_key, b);
    }
    b->n = (int)(bx * by * tendo__sim_block_dim.z);
    b->next = 0;
    b->done = b->waiting_sync = b->waiting_shfl = 0;
    b->body = body;
    b->arg = arg;
    for (int i = 0; i < b->n; i++) {
        sim_thread *t = &b->t[i];
        t->idx.x = (unsigned)i % bx;
        t->idx.y = (unsigned)i / bx % by;
        t->idx.z = (unsigned)i / (bx * by);
        t->state = UNSTARTED;
        t->phase = 0;
        t->release = 0;
        t->fiber = NULL;
        b->order[i] = i;
    }
    for (int i = b->n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(next_random(&seed) % (uint64_t)(i + 1)), x = b->order[i];
        b->order[i] = b->order[j];
        b->order[j] = x;
    }
    while (b->next < b->n) {
        tendo__sim_fiber *f = tendo__sim_fiber_get(worker);
        if (!f) {
            *what = "no memory for fibers";
            abandon(b);
            return false;
        }
        run_fiber(b, f);
    }
    for (;;) {
        bool any = false;
        if (b->done == b->n)
            return true;
        if (!release_warps(b, &any, what) || (!any && !release_block(b, what))) {
            abandon(b);
            return false;
        }
        for (int k = 0; k < b->n; k++) {
            sim_thread *t = &b->t[b->order[k]];
            if (!t->release)
                continue;
            t->release = 0;
            t->state = RUNNING;
            set_current(b, t);
            run_fiber(b, t->fiber);
        }
    }
}
