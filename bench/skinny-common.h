/* bench/skinny-common.h - what both sides of bench/skinny.sh share
 * (bench/bench-skinny.c for tendo, bench/ggml-skinny.c for ggml): the
 * clock, the median's comparison, and the last-level cache size that sizes
 * the "cold" regime's copies of W. */
#ifndef TENDO_BENCH_SKINNY_COMMON_H
#define TENDO_BENCH_SKINNY_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* qsort's order of doubles, for medians. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Bytes of the last-level cache: SKINNY_LLC_BYTES, else sysfs' index3,
 * else 32 MiB. */
static long long llc_bytes(void)
{
    const char *e = getenv("SKINNY_LLC_BYTES");
    if (e && atoll(e) > 0)
        return atoll(e);
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    long long v = 0;
    char unit = 0;
    if (f) {
        if (fscanf(f, "%lld%c", &v, &unit) < 1)
            v = 0;
        fclose(f);
    }
    if (unit == 'K')
        v <<= 10;
    else if (unit == 'M')
        v <<= 20;
    return v > 0 ? v : 32LL << 20;
}

#endif
