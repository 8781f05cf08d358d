/* kernels/sim/sim.h - the simulated CUDA device (./configure --enable-cuda-sim):
 * what its parts share.  Plain C, also included by the C++ of sim.cuh.
 *
 * The simulator runs the .cu sources of tendo, compiled by the host C++
 * compiler, on the CPU: each CUDA thread of a block is a fiber (fiber.c),
 * the blocks of a launch run one after another on the launching host
 * thread (sched.c, launch.c).  The CUDA runtime calls tendo makes are
 * implemented over host memory with a table of allocations (memory.c,
 * runtime.c), and so are its cuBLAS calls (cublas.c).  Work is done when
 * it is queued, or, with TENDO_SIM_DEFER=1, at the next sync point that
 * covers it (queue.c).
 *
 * Environment: TENDO_SIM_DEVICES=N devices (default 2, at most
 * TENDO__SIM_MAX_DEVICES), TENDO_SIM_SEED the seed of the thread order
 * within a block (default 1), TENDO_SIM_FAIL_MALLOC=N makes the Nth
 * device allocation of the process fail (cudaErrorMemoryAllocation),
 * TENDO_SIM_FAIL_LAUNCH=N makes the Nth kernel launch of the process fail
 * as a faulting kernel does: the launch is accepted, the kernel does not
 * run, and its device has the sticky cudaErrorLaunchFailure from then on
 * (seen at once, or at the next sync point when deferred).
 * TENDO_SIM_DEFER=1 queues each per-thread stream's work (kernels, async
 * copies and fills, GEMMs, cudaFreeAsync) until a sync point (queue.c),
 * so that a missing event, stream wait or synchronisation shows as a
 * wrong result; cudaFree then does not wait for queued work either (the
 * API does not promise it): the memory becomes NaN at once and goes back
 * to the host when its device next runs its queues.  The variables are
 * read when used (TENDO_SIM_FAIL_* at each allocation or launch), so a
 * test may set them as it goes. */
#ifndef TENDO_SRC_SIM_SIM_H
#define TENDO_SRC_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TENDO__SIM_MAX_DEVICES 16
/* What a launch may ask for (sm_80/sm_90 without opt-in). */
#define TENDO__SIM_MAX_THREADS 1024
#define TENDO__SIM_MAX_GRID_YZ 65535
#define TENDO__SIM_MAX_SHARED (48 * 1024)
#define TENDO__SIM_WARP 32

/* ---- the running CUDA thread (set by the scheduler at each switch) ---- */
extern __thread uint3 tendo__sim_thread_idx;
extern __thread uint3 tendo__sim_block_idx;
extern __thread dim3 tendo__sim_block_dim;
extern __thread dim3 tendo__sim_grid_dim;

/* ---- launches (launch.c) ---- */
typedef struct tendo__sim_config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} tendo__sim_config;
/* Queues body(arg) to run once per CUDA thread of the launch cfg, then
 * drop(arg) (when not NULL; also when the launch is refused), or records
 * the launch's error for cudaGetLastError (a bad configuration: not
 * sticky; a kernel that deadlocks at a barrier: sticky, when it runs). */
void tendo__sim_launch(const tendo__sim_config *cfg, void (*body)(void *), void (*drop)(void *), void *arg);
/* Launches so far in the process (TENDO_SIM_FAIL_LAUNCH counts them). */
unsigned long long tendo__sim_launches(void);
/* The running block's dynamic shared memory (16-byte aligned). */
unsigned char *tendo__sim_dyn_shared(void);

/* ---- barriers (sched.c), called from kernel code ---- */
/* __syncthreads: waits for every thread of the block; site names the
 * call (threads waiting at different sites are an error). */
void tendo__sim_syncthreads(const void *site);
/* A __shfl_*_sync: the running thread writes its value (up to 16 bytes)
 * to tendo__sim_shfl_slot(), then tendo__sim_shfl_wait waits for the
 * lanes of mask and returns the slot of lane src (its own slot when src
 * is outside the warp or the mask). */
void *tendo__sim_shfl_slot(void);
const void *tendo__sim_shfl_wait(unsigned mask, int src);

/* ---- scheduler (sched.c), for launch.c ---- */
/* Runs one block of nthreads = block.x * block.y * block.z threads of
 * body(arg) with the thread order of seed; false when the block could not
 * finish (a barrier that not every thread reached, or no memory for
 * fibers), with *what saying which. */
bool tendo__sim_run_block(void (*body)(void *), void *arg, uint64_t seed, const char **what);

/* ---- state shared by the runtime's files (runtime.c) ---- */
/* Number of simulated devices (TENDO_SIM_DEVICES). */
int tendo__sim_device_count(void);
/* The calling thread's current device. */
int tendo__sim_current(void);
/* Records e as the calling thread's last error (unless e is cudaSuccess)
 * and returns it; a sticky e also breaks the current device for good. */
cudaError_t tendo__sim_error(cudaError_t e);
/* The current device's sticky error, or cudaSuccess. */
cudaError_t tendo__sim_sticky(void);
/* Whether s names a stream the calling thread may use on the current device. */
bool tendo__sim_stream_ok(cudaStream_t s);
/* Makes dev the calling thread's current device; returns the one before. */
int tendo__sim_swap_current(int dev);

/* ---- the streams' queues (queue.c) ---- */
/* Whether TENDO_SIM_DEFER is on. */
bool tendo__sim_deferred(void);
/* Has run(arg) done on stream s of the current device, then drop(arg)
 * (when not NULL): at once, or queued when deferred. */
void tendo__sim_enqueue(cudaStream_t s, void (*run)(void *), void (*drop)(void *), void *arg);
/* Runs what is queued on s (of the current device), or on every stream
 * of device dev. */
void tendo__sim_flush_stream(cudaStream_t s);
void tendo__sim_flush_device(int dev);
/* A point in a stream's queue (an event's record): done once the stream
 * has run `ticket` jobs; stream NULL is a point already passed. */
typedef struct tendo__sim_stream tendo__sim_stream;
typedef struct tendo__sim_mark {
    tendo__sim_stream *stream;
    unsigned long long ticket;
} tendo__sim_mark;
/* The point after the work queued so far on s. */
tendo__sim_mark tendo__sim_mark_now(cudaStream_t s);
/* Runs m's stream up to m. */
void tendo__sim_mark_wait(tendo__sim_mark m);
/* Queues on s a wait for m (cudaStreamWaitEvent). */
void tendo__sim_mark_enqueue_wait(cudaStream_t s, tendo__sim_mark m);
/* Takes p (device memory of device, out of the table already) to free
 * once that device has run its queues; false when not deferred. */
bool tendo__sim_bury(void *p, int device);

/* ---- the allocation table (memory.c) ---- */
enum tendo__sim_mem { TENDO__SIM_HOST = 0, TENDO__SIM_DEVICE, TENDO__SIM_PINNED };
/* What [p, p + n) is: TENDO__SIM_DEVICE (inside one device allocation,
 * whose device goes to *dev when dev is not NULL), TENDO__SIM_PINNED
 * (inside one cudaHostAlloc block) or TENDO__SIM_HOST (anything else; also
 * a range that starts in an allocation and runs past its end, which
 * *partial flags when partial is not NULL). */
enum tendo__sim_mem tendo__sim_lookup(const void *p, size_t n, int *dev, bool *partial);
/* Bytes of device memory allocated on dev. */
size_t tendo__sim_used(int dev);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_SRC_SIM_SIM_H */
