/* src/core/alloc.c - every allocation the library makes goes through
 * here, so that a test can make any one of them fail
 * (tendo_fault_inject_alloc) and check that the call reports
 * TENDO_ERR_OOM, leaks nothing and leaves its inputs as they were. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* Allocations left until the one that fails, that one included; 0: none
 * armed.  With nothing armed an allocation costs one relaxed load more. */
static atomic_int_fast64_t countdown;
/* Allocations counted so far (for tests: how many a call makes). */
static atomic_int_fast64_t made;

void tendo_fault_inject_alloc(int64_t n) { atomic_store(&countdown, n > 0 ? n : 0); }

int64_t tendo__alloc_count(void) { return atomic_load_explicit(&made, memory_order_relaxed); }

bool tendo__alloc_ok(void)
{
    int_fast64_t c = atomic_load_explicit(&countdown, memory_order_relaxed);

    atomic_fetch_add_explicit(&made, 1, memory_order_relaxed);
    while (c > 0)
        if (atomic_compare_exchange_weak(&countdown, &c, c - 1))
            return c != 1;
    return true;
}

void *tendo__malloc(size_t n) { return tendo__alloc_ok() ? malloc(n) : NULL; }

void *tendo__calloc(size_t count, size_t size) { return tendo__alloc_ok() ? calloc(count, size) : NULL; }

void *tendo__realloc(void *p, size_t n) { return tendo__alloc_ok() ? realloc(p, n) : NULL; }

char *tendo__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tendo__malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}
