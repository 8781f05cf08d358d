/* t/fuzz/fuzz-child.c - a fuzz input run in a child process (the
 * examples exit), its coverage handed back to the parent: libFuzzer reads
 * the inline 8-bit counters of its own process, and a child's increments
 * would be lost with the child.  The parent maps a shared copy before the
 * fork; the child copies its counters there as it ends (fuzz_example_exit);
 * the parent takes the larger of each pair.  Where there are no counters
 * (gcc, `make check`) all of it does nothing but the fork.
 *
 * A translation unit of its own, never instrumented: where a file the
 * coverage pass instruments declares the section's bounds, the pass renames
 * its own declarations, and libFuzzer never hears of the counters. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-examples.h"
#include "fuzz.h"

#ifdef __clang__
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

/* The counters' section, whose bounds the linker names (NULL without
 * one), and the sanitizers' hook for the end of a report. */
extern uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static uint8_t *shared; /* the child's counters, for the parent */

NO_COVERAGE static size_t ncounters(void)
{
    const uint8_t *start = __start___sancov_cntrs, *stop = __stop___sancov_cntrs;

    return start && stop > start ? (size_t)(stop - start) : 0;
}

NO_COVERAGE void fuzz_child_prepare(void)
{
    if (!ncounters())
        return;
    if (!shared) {
        void *p = mmap(NULL, ncounters(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        fuzz_check(p != MAP_FAILED, "cannot map the counters' copy");
        shared = p;
    }
    memset(shared, 0, ncounters());
}

NO_COVERAGE static void died(void) { _exit(FUZZ_CHILD_DIED); }

NO_COVERAGE void fuzz_child_start(void)
{
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(died);
}

NO_COVERAGE _Noreturn void fuzz_example_exit(int status)
{
    if (shared)
        memcpy(shared, __start___sancov_cntrs, ncounters());
    _exit(status >= 0 && status <= 255 && status != FUZZ_CHILD_DIED ? status : 255);
}

NO_COVERAGE void fuzz_child_merge(void)
{
    if (!shared)
        return;
    for (size_t i = 0, n = ncounters(); i < n; i++)
        if (shared[i] > __start___sancov_cntrs[i])
            __start___sancov_cntrs[i] = shared[i];
}
