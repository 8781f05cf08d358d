/* src/sim/sim.h - the simulated CUDA device (./configure --enable-cuda-sim):
 * what its parts share.  Plain C, also included by the C++ of sim.cuh.
 *
 * The simulator runs the .cu sources of tendo, compiled by the host C++
 * compiler, on the CPU: each CUDA thread of a block is a fiber (fiber.c),
 * the blocks of a launch run one after another on the launching host
 * thread (sched.c, launch.c).  The CUDA runtime calls tendo makes are
 * implemented over host memory with a table of allocations (memory.c,
 * runtime.c), and so are its cuBLAS calls (cublas.c).  Work is done when
 * it is queued: streams and events are always complete.
 *
 * Environment: TENDO_SIM_DEVICES=N devices (default 2, at most
 * TENDO__SIM_MAX_DEVICES), TENDO_SIM_SEED the seed of the thread order
 * within a block (default 1), TENDO_SIM_FAIL_MALLOC=N makes the Nth
 * device allocation of the process fail (cudaErrorMemoryAllocation). */
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
/* Runs body(arg) once per CUDA thread of the launch cfg, or records the
 * launch's error for cudaGetLastError (a bad configuration: not sticky; a
 * kernel that deadlocks at a barrier: sticky).  Returns when all is done. */
void tendo__sim_launch(const tendo__sim_config *cfg, void (*body)(void *), void *arg);
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
