/* examples/options.h - the example programs' option values, parsed whole:
 * a number with trailing junk, out of range or overflowing, or a device
 * that is not cpu or cuda:N, exits with the program's usage (status 2)
 * rather than being read as what strtol or atof would make of it.
 * Define PROGRAM and `static int usage(void)` (prints, returns 2) first. */
#ifndef TENDO_EXAMPLES_OPTIONS_H
#define TENDO_EXAMPLES_OPTIONS_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tendo.h>

/* Whether option value v is there and starts with what a number can
 * (strtoll and strtod would skip leading space). */
static bool present(const char *v)
{
    return v && *v && !isspace((unsigned char)*v);
}

/* The value of option flag, v, as an integer in [lo, hi]; anything else
 * (trailing junk, overflow, out of range, missing) exits with usage. */
static int64_t whole(const char *flag, const char *v, int64_t lo, int64_t hi)
{
    char *end = NULL;
    long long x = 0;

    errno = 0;
    if (present(v))
        x = strtoll(v, &end, 10);
    if (!end || *end || errno == ERANGE || x < lo || x > hi) {
        fprintf(stderr, "%s: %s %s: want a whole number from %lld to %lld\n", PROGRAM, flag, v ? v : "(missing)",
                (long long)lo, (long long)hi);
        exit(usage());
    }
    return (int64_t)x;
}

/* The value of option flag, v, as a finite number in [lo, hi] (above lo
 * when open); anything else exits with usage, saying it wants want. */
static double real(const char *flag, const char *v, double lo, double hi, bool open, const char *want)
{
    char *end = NULL;
    double x = 0;

    errno = 0;
    if (present(v))
        x = strtod(v, &end);
    if (!end || *end || errno == ERANGE || !isfinite(x) || x < lo || x > hi || (open && x == lo)) {
        fprintf(stderr, "%s: %s %s: want %s\n", PROGRAM, flag, v ? v : "(missing)", want);
        exit(usage());
    }
    return x;
}

/* cpu, cuda or cuda:N; anything else exits with usage. */
static tendo_device parse_device(const char *v)
{
    char *end;
    long index;

    if (v && !strcmp(v, "cpu"))
        return tendo_cpu();
    if (v && !strcmp(v, "cuda"))
        return tendo_cuda(0);
    if (v && !strncmp(v, "cuda:", 5) && v[5] >= '0' && v[5] <= '9') {
        errno = 0;
        index = strtol(v + 5, &end, 10);
        if (!*end && errno != ERANGE && index <= 1023)
            return tendo_cuda((int)index);
    }
    fprintf(stderr, "%s: --device %s: want cpu or cuda:N\n", PROGRAM, v ? v : "(missing)");
    exit(usage());
}

#endif
