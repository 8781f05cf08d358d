/* kernels/sim/launch.c - a kernel launch on the simulated device: the checks
 * CUDA makes of a launch configuration, then (when its stream gets to it,
 * queue.c) every block in turn on the host thread that runs the stream,
 * with its dynamic shared memory poisoned. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

static __thread unsigned char *dyn_shared;
static __thread size_t dyn_size;
static pthread_key_t dyn_key;
static pthread_once_t dyn_once = PTHREAD_ONCE_INIT;

/* At host thread exit: frees the thread's dynamic shared memory (made
 * again should a later exit handler still run a stream's queue, queue.c). */
static void dyn_free(void *p)
{
    if (dyn_shared == p) {
        dyn_shared = NULL;
        dyn_size = 0;
    }
    free(p);
}

static void dyn_key_init(void) { (void)pthread_key_create(&dyn_key, dyn_free); }
static atomic_ullong launches;

unsigned char *tendo__sim_dyn_shared(void) { return dyn_shared; }

/* TENDO_SIM_SEED, or 1. */
static uint64_t base_seed(void)
{
    const char *s = getenv("TENDO_SIM_SEED");

    return s && *s ? strtoull(s, NULL, 0) : 1;
}

/* Whether CUDA would accept the launch shape of cfg. */
static bool config_ok(const tendo__sim_config *c)
{
    unsigned long long threads = (unsigned long long)c->block.x * c->block.y * c->block.z;

    if (!c->grid.x || !c->grid.y || !c->grid.z || !threads)
        return false;
    if (threads > TENDO__SIM_MAX_THREADS || c->block.x > 1024 || c->block.y > 1024 || c->block.z > 64)
        return false;
    if (c->grid.x > 0x7fffffffu || c->grid.y > TENDO__SIM_MAX_GRID_YZ || c->grid.z > TENDO__SIM_MAX_GRID_YZ)
        return false;
    /* static __shared__ is not counted: it is not known here */
    return c->shmem <= TENDO__SIM_MAX_SHARED;
}

/* The calling thread's dynamic shared memory, at least n bytes. */
static bool reserve_shared(size_t n)
{
    unsigned char *p;

    if (n <= dyn_size && dyn_shared)
        return true;
    n = (n + 15) & ~(size_t)15;
    p = aligned_alloc(16, n ? n : 16);
    if (!p)
        return false;
    free(dyn_shared);
    dyn_shared = p;
    dyn_size = n;
    pthread_once(&dyn_once, dyn_key_init);
    (void)pthread_setspecific(dyn_key, p);
    return true;
}

unsigned long long tendo__sim_launches(void) { return atomic_load(&launches); }

/* A launch accepted, to run when its stream gets to it. */
typedef struct launch_job {
    tendo__sim_config cfg;
    uint64_t seed;
    unsigned long long ordinal; /* 1 for the process's first launch */
    void (*body)(void *), (*drop)(void *);
    void *arg;
} launch_job;

/* Whether TENDO_SIM_FAIL_LAUNCH names launch n. */
static bool injected_failure(unsigned long long n)
{
    const char *s = getenv("TENDO_SIM_FAIL_LAUNCH");

    return s && *s && strtoull(s, NULL, 10) == n;
}

/* Runs every block of a launch in turn (on its device's broken context:
 * nothing, as a GPU runs nothing more there). */
static void run_launch(void *v)
{
    const launch_job *j = v;
    const tendo__sim_config *cfg = &j->cfg;
    const char *what = NULL;

    if (tendo__sim_sticky() != cudaSuccess)
        return;
    if (injected_failure(j->ordinal)) {
        (void)tendo__sim_error(cudaErrorLaunchFailure);
        return;
    }
    if (!reserve_shared(cfg->shmem)) {
        (void)tendo__sim_error(cudaErrorLaunchOutOfResources);
        return;
    }
    tendo__sim_grid_dim = cfg->grid;
    tendo__sim_block_dim = cfg->block;
    for (unsigned z = 0; z < cfg->grid.z; z++)
        for (unsigned y = 0; y < cfg->grid.y; y++)
            for (unsigned x = 0; x < cfg->grid.x; x++) {
                tendo__sim_block_idx.x = x;
                tendo__sim_block_idx.y = y;
                tendo__sim_block_idx.z = z;
                /* NaN in every float type: reads before writes show */
                memset(dyn_shared, 0xFF, cfg->shmem);
                if (!tendo__sim_run_block(j->body, j->arg,
                                          j->seed + (((uint64_t)z * cfg->grid.y + y) * cfg->grid.x + x), &what)) {
                    /* on a GPU: a hang or an unspecified launch failure */
                    (void)tendo__sim_error(cudaErrorLaunchFailure);
                    return;
                }
            }
}

static void drop_launch(void *v)
{
    launch_job *j = v;

    if (j->drop)
        j->drop(j->arg);
    free(j);
}

void tendo__sim_launch(const tendo__sim_config *cfg, void (*body)(void *), void (*drop)(void *), void *arg)
{
    cudaError_t e = tendo__sim_sticky();
    launch_job *j = NULL;

    if (e == cudaSuccess && !tendo__sim_stream_ok(cfg->stream))
        e = cudaErrorInvalidResourceHandle;
    else if (e == cudaSuccess && !config_ok(cfg))
        e = cudaErrorInvalidConfiguration;
    else if (e == cudaSuccess && !(j = malloc(sizeof *j)))
        e = cudaErrorLaunchOutOfResources;
    if (e != cudaSuccess) {
        if (drop)
            drop(arg);
        (void)tendo__sim_error(e);
        return;
    }
    j->cfg = *cfg;
    j->ordinal = atomic_fetch_add(&launches, 1) + 1;
    j->seed = base_seed() * 0x2545F4914F6CDD1Dull + (j->ordinal - 1);
    j->body = body;
    j->drop = drop;
    j->arg = arg;
    tendo__sim_enqueue(cfg->stream, run_launch, drop_launch, j);
}
