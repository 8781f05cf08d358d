/* kernels/sim/fiber.h - fibers: stacks to run simulated CUDA threads on, and
 * the switch between them (x86-64 assembly; ucontext elsewhere). */
#ifndef TENDO_SRC_SIM_FIBER_H
#define TENDO_SRC_SIM_FIBER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tendo__sim_fiber tendo__sim_fiber;

/* A fiber that will call entry() (which must never return) on its first
 * switch-in, with a stack of its own; NULL when out of memory.  Fibers
 * are kept for reuse by the thread that made them. */
tendo__sim_fiber *tendo__sim_fiber_get(void (*entry)(void));
/* Gives f back for reuse by this thread (its stack's contents are dropped). */
void tendo__sim_fiber_put(tendo__sim_fiber *f);
/* From the host thread's own stack into f; returns when f switches back. */
void tendo__sim_fiber_enter(tendo__sim_fiber *f);
/* From the running fiber f back to where it was entered from. */
void tendo__sim_fiber_leave(tendo__sim_fiber *f);

#endif /* TENDO_SRC_SIM_FIBER_H */
