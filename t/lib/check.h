/* t/lib/check.h - folding many element comparisons into one TAP line, for the
 * compute tests (t/bodies/ops-body.h, t/bodies/reduce-body.h, t/bodies/nn-body.h): a t_check
 * counts comparisons and mismatches and keeps the first mismatch, t_done
 * reports them as one ok() with a diag() of that first mismatch.  Also
 * t_failed_with, for checking the error a call left. */
#ifndef TENDO_T_CHECK_H
#define TENDO_T_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tendo.h"

/* Many element checks folded into one ok(): the count of mismatches and
 * the first one. */
typedef struct {
    int64_t bad, n;
    char first[512];
} t_check;

/* The last error has status st and its message contains frag (diag()
 * says what it was otherwise); clears the error either way. */
static inline bool t_failed_with(tendo_status st, const char *frag)
{
    const tendo_error *e = tendo_last_error();
    bool good = tendo_error_status(e) == st && strstr(tendo_error_message(e), frag);

    if (!good)
        diag("status %s, message: %s (wanted %s, \"%s\")", tendo_status_str(tendo_error_status(e)),
             tendo_error_message(e), tendo_status_str(st), frag);
    tendo_clear_error();
    return good;
}

static inline bool t_close(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    if (isnan(got))
        return false;
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= tol;
}

/* A failure that is not an element mismatch (a failed call, a shape). */
static inline void TAP_PRINTF(2, 3) t_fail(t_check *c, const char *fmt, ...)
{
    va_list ap;

    c->n++;
    if (c->bad++)
        return;
    va_start(ap, fmt);
    vsnprintf(c->first, sizeof c->first, fmt, ap);
    va_end(ap);
}

static inline void t_elem(t_check *c, const char *what, int64_t i, double got, double want, double tol)
{
    c->n++;
    if (t_close(got, want, tol))
        return;
    if (!c->bad++)
        snprintf(c->first, sizeof c->first, "%s: element %lld: got %.9g, wanted %.9g (tolerance %.3g)", what,
                 (long long)i, got, want, tol);
}

static inline bool TAP_PRINTF(2, 3) t_done(const t_check *c, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    bool pass;

    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    pass = ok(c->bad == 0 && c->n > 0, "%s (%lld checks)", name, (long long)c->n);
    if (c->bad)
        diag("%lld of %lld checks failed; first: %s", (long long)c->bad, (long long)c->n, c->first);
    return pass;
}

static inline const char *t_shape_str(char *buf, size_t size, int nd, const int64_t *shape)
{
    size_t len = 0;

    len += (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < nd && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "," : "", (long long)shape[d]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

/* Float additions an element can go through in the library's blocked sums
 * of n terms (8 lanes, chunks merged pairwise): the depth a tolerance
 * multiplies the unit roundoff by. */
static inline double t_depth(int64_t n)
{
    return n <= 256 ? (double)n : 256.0 + (double)n / 64.0 + log2((double)n);
}

static inline int64_t t_numel(int nd, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    return n;
}

/* numpy broadcasting, done here independently of the library. */
static inline bool t_bshape(int na, const int64_t *sa, int nb, const int64_t *sb, int *no, int64_t *so)
{
    int n = na > nb ? na : nb;

    for (int i = 0; i < n; i++) {
        int64_t x = i - (n - na) >= 0 ? sa[i - (n - na)] : 1, y = i - (n - nb) >= 0 ? sb[i - (n - nb)] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        so[i] = x == 1 ? y : x;
    }
    *no = n;
    return true;
}

/* The input layouts of t/bodies/layouts-body.h. */
enum { L_CONTIG, L_TRANS, L_SLICED, L_EXPAND, L_FLIP, L_COUNT };

/* Data sets of the layout tests' inputs (see DTFN(make) in layouts-body.h):
 * multiples of 1/8 (exact sums), random values, random values with NaNs. */
enum { D_EIGHTHS, D_RANDOM, D_NANS, D_COUNT };
static const char *const t_layout[L_COUNT] = {"contiguous", "transposed", "sliced", "expanded", "flipped"};

static inline bool t_same_shape(int na, const int64_t *a, int nb, const int64_t *b)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

/* Row-major index into an input of shape (ind, ish) that broadcasts to the
 * output element `flat` of shape (ond, osh). */
static inline int64_t t_bcast(int ond, const int64_t *osh, int ind, const int64_t *ish, int64_t flat)
{
    int64_t idx = 0, mul = 1;

    for (int d = ond - 1; d >= 0; d--) {
        int64_t i = flat % osh[d];
        int di = d - (ond - ind);

        flat /= osh[d];
        if (di >= 0) {
            if (ish[di] != 1)
                idx += i * mul;
            mul *= ish[di];
        }
    }
    return idx;
}

/* The shape of the base tensor that layout needs for a view of `shape`
 * (see t/bodies/layouts-body.h); *layout falls back to contiguous where the
 * layout cannot apply (a 0-d or 1-d transpose). */
static inline void t_layout_base(int *layout, int nd, const int64_t *shape, int64_t *bshape)
{
    memcpy(bshape, shape, (size_t)nd * sizeof *shape);
    if (nd == 0 || (*layout == L_TRANS && nd < 2))
        *layout = L_CONTIG;
    if (*layout == L_TRANS) {
        bshape[0] = shape[nd - 1];
        bshape[nd - 1] = shape[0];
    } else if (*layout == L_SLICED) {
        bshape[nd - 1] = 2 * shape[nd - 1] + 1;
        if (nd >= 2)
            bshape[0] = 3 * shape[0] + 2;
    } else if (*layout == L_EXPAND) {
        bshape[nd - 1] = 1;
    }
}

/* Makes sure at least 2 threads are on offer before a thread-count
 * comparison (says so when there cannot be: no OpenMP). */
static inline void t_want_threads(const char *who)
{
    if (tendo_get_num_threads() < 2) {
        tendo_set_num_threads(2);
        if (tendo_get_num_threads() < 2)
            diag("%s: only one thread available (no OpenMP?): the comparison is trivial", who);
    }
}

#endif
