/* t/lib/tap.h - a small TAP producer for tendo's tests, after the C TAP Harness.
 *
 * plan(n) or plan_lazy() first; then ok()/is_*(); finish with done_testing(),
 * whose value is the program's exit status (0 when every test passed).
 * Failures print what was wanted and what was seen as TAP diagnostics.
 */
#ifndef TENDO_T_TAP_H
#define TENDO_T_TAP_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TAP_PRINTF(f, a)
#endif

void plan(int n);
void plan_lazy(void);
/* Prints "1..0 # SKIP reason" and exits 0. */
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Prints "Bail out! reason" and exits 255. */
void bail(const char *fmt, ...) TAP_PRINTF(1, 2);

bool ok(bool pass, const char *fmt, ...) TAP_PRINTF(2, 3);
bool is_int(int64_t want, int64_t seen, const char *fmt, ...) TAP_PRINTF(3, 4);
bool is_uint(uint64_t want, uint64_t seen, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Passes when |want - seen| <= eps (both NaN also passes). */
bool is_double(double want, double seen, double eps, const char *fmt, ...) TAP_PRINTF(4, 5);
bool is_string(const char *want, const char *seen, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Records n skipped tests. */
void skip(int n, const char *fmt, ...) TAP_PRINTF(2, 3);
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);

/* Number of failures so far. */
int tap_failures(void);
/* Ends the run: prints the lazy plan if any, returns the exit status. */
int done_testing(void);

#endif
