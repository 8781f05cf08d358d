/* t/lib/tap.c - implementation of t/lib/tap.h. */
#include "tap.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_planned = -1; /* -1: not yet, 0: lazy */
static int tap_run;
static int tap_failed;

void plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

void plan_lazy(void) { tap_planned = 0; }

void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(0);
}

void bail(const char *fmt, ...)
{
    va_list ap;
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(255);
}

static bool vresult(bool pass, const char *fmt, va_list ap)
{
    tap_run++;
    if (!pass)
        tap_failed++;
    printf("%sok %d - ", pass ? "" : "not ", tap_run);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    return pass;
}

bool ok(bool pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(pass, fmt, ap);
    va_end(ap);
    return pass;
}

bool is_int(int64_t want, int64_t seen, const char *fmt, ...)
{
    va_list ap;
    bool pass = want == seen;
    va_start(ap, fmt);
    vresult(pass, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("wanted: %" PRId64 "\n#   seen: %" PRId64, want, seen);
    return pass;
}

bool is_uint(uint64_t want, uint64_t seen, const char *fmt, ...)
{
    va_list ap;
    bool pass = want == seen;
    va_start(ap, fmt);
    vresult(pass, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("wanted: %" PRIu64 " (0x%" PRIx64 ")\n#   seen: %" PRIu64 " (0x%" PRIx64 ")",
             want, want, seen, seen);
    return pass;
}

bool is_double(double want, double seen, double eps, const char *fmt, ...)
{
    va_list ap;
    bool pass = (isnan(want) && isnan(seen)) || want == seen || fabs(want - seen) <= eps;
    va_start(ap, fmt);
    vresult(pass, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("wanted: %.17g\n#   seen: %.17g (eps %g)", want, seen, eps);
    return pass;
}

bool is_string(const char *want, const char *seen, const char *fmt, ...)
{
    va_list ap;
    bool pass = (want == NULL && seen == NULL) ||
                (want != NULL && seen != NULL && strcmp(want, seen) == 0);
    va_start(ap, fmt);
    vresult(pass, fmt, ap);
    va_end(ap);
    if (!pass)
        diag("wanted: \"%s\"\n#   seen: \"%s\"", want ? want : "(null)", seen ? seen : "(null)");
    return pass;
}

void skip(int n, const char *fmt, ...)
{
    for (int i = 0; i < n; i++) {
        va_list ap;
        tap_run++;
        printf("ok %d # SKIP ", tap_run);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
}

void diag(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

int tap_failures(void) { return tap_failed; }

int done_testing(void)
{
    if (tap_planned <= 0)
        printf("1..%d\n", tap_run);
    else if (tap_planned != tap_run)
        diag("planned %d tests but ran %d", tap_planned, tap_run);
    fflush(stdout);
    if (tap_planned > 0 && tap_planned != tap_run)
        return 255;
    return tap_failed > 0 ? 1 : 0;
}
