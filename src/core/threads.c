/* src/core/threads.c - how many threads CPU ops use (at most 4 per core). */
#include <stdatomic.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/iter.h"

static atomic_int requested; /* 0: the default */
#ifdef _OPENMP
/* omp_get_num_procs() asks the kernel for the affinity mask (a system call,
 * ~300 ns): it is asked once, not once per op.  0: not yet asked. */
static atomic_int procs;
#endif

void tendo_set_num_threads(int n)
{
    atomic_store_explicit(&requested, n > 0 ? n : 0, memory_order_relaxed);
}

int tendo__threads(void)
{
#ifdef _OPENMP
    int n = atomic_load_explicit(&requested, memory_order_relaxed);
    /* more threads than a few per core only risks failing to create them
     * (which libgomp answers by exiting) */
    int p = atomic_load_explicit(&procs, memory_order_relaxed), cap;

    if (p == 0) {
        p = omp_get_num_procs();
        atomic_store_explicit(&procs, p, memory_order_relaxed);
    }
    cap = 4 * p;
    if (n <= 0)
        n = omp_get_max_threads();
    return n < cap ? n : cap;
#else
    return 1;
#endif
}

int tendo_get_num_threads(void) { return tendo__threads(); }

int tendo__team_threads(void)
{
#ifdef _OPENMP
    int n = 1;

    for (int level = omp_get_level(); level > 0; level--)
        n *= omp_get_team_size(level);
    return n;
#else
    return 1;
#endif
}

void tendo__threads_share(int ranks_here)
{
#ifdef _OPENMP
    int want;

    if (ranks_here <= 1 || getenv("OMP_NUM_THREADS") ||
        atomic_load_explicit(&requested, memory_order_relaxed) != 0)
        return;
    want = omp_get_num_procs() / ranks_here;
    atomic_store_explicit(&requested, want > 1 ? want : 1, memory_order_relaxed);
#else
    (void)ranks_here;
#endif
}
