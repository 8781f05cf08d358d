/* src/io/print.c - numpy-compatible text form of tensor values (see print.h).
 *
 * Two parts.  The digits: numpy prints each float with dragon4's "unique"
 * digits in the element's own dtype, cut at 8 digits.  Here they are found
 * without big integers: for m significant digits, printf gives the m-digit
 * decimal nearest the value and the other m-digit neighbour is one unit
 * away; a decimal identifies the value when strtod followed by the dtype's
 * round trip gives the value back.  That round trip rounds ties to even,
 * which is exactly dragon4's boundary rule (boundaries count for an even
 * mantissa).  The layout: numpy's arrayprint in str mode (legacy=False):
 * a common element width, wrapping at 75 columns, "..." summaries.
 */
#include "io/print.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
    LINE_WIDTH = 75,  /* numpy's linewidth */
    THRESHOLD = 1000, /* more elements than this are summarized */
    EDGE_ITEMS = 3,   /* items kept at each end of a summarized axis */
    PRECISION = 8,    /* digits after the '.' at most */
    MAX_DIGITS = 17,  /* significant digits that identify any double */
    TEXT_MAX = 64     /* room for one formatted element or scalar */
};

/* ---- decimal digits ---------------------------------------------------- */

/* A magnitude as dig[0].dig[1]...dig[n-1] x 10^exp10 (NUL-terminated). */
typedef struct {
    char dig[MAX_DIGITS + 2];
    int n;
    int exp10;
} decimal;

/* The round trip used when the caller passes none (f64). */
static double identity(double v) { return v; }

/* 10^k for 0 <= k <= 19. */
static uint64_t pow10_u64(int k)
{
    uint64_t r = 1;
    while (k-- > 0)
        r *= 10;
    return r;
}

/* floor(log10(a)) for a finite a > 0, exactly: printf is exact (glibc,
 * musl and the BSDs convert exactly) and with 41 digits no double below
 * 10^k rounds up to it. */
static int decade_of(double a)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.40e", a);
    return atoi(strchr(buf, 'e') + 1);
}

/* Whether the decimal mant x 10^scale reads back as a in the dtype. */
static bool reads_back(uint64_t mant, int scale, double a,
                       tendo__roundtrip_fn rt)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%" PRIu64 "e%d", mant, scale);
    return rt(strtod(buf, NULL)) == a;
}

/* Stores the m-digit integer mant (or 10^m after a carry), whose first
 * digit has decade e, in d. */
static void set_digits(decimal *d, uint64_t mant, int m, int e)
{
    if (mant == pow10_u64(m)) {
        mant /= 10;
        e++;
    }
    snprintf(d->dig, sizeof d->dig, "%0*" PRIu64, m, mant);
    d->n = m;
    d->exp10 = e;
}

/* Rounds a > 0 (first digit of decade e) to m significant digits the way
 * dragon4 does where it stops: of the two m-digit neighbours of a, the one
 * that reads back as a when only that one does, else the nearest (exact
 * ties to even, as printf rounds in the default rounding mode).  Returns
 * whether either neighbour reads back, i.e. whether m digits identify a. */
static bool round_at(double a, int e, int m, tendo__roundtrip_fn rt,
                     decimal *d)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", m - 1, a);
    uint64_t nearest = 0;
    const char *c = buf;
    for (; *c != 'e'; c++) /* skip the radix point, whatever the locale */
        if (*c >= '0' && *c <= '9')
            nearest = nearest * 10 + (uint64_t)(*c - '0');
    if (atoi(c + 1) > e)
        nearest *= 10; /* rounded up to 10^(e+1): keep a's scale */

    double near_val = strtod(buf, NULL);
    bool unique = true;
    if (near_val != a) {
        uint64_t other = near_val > a ? nearest - 1 : nearest + 1;
        bool near_ok = rt(near_val) == a;
        bool other_ok = reads_back(other, e - m + 1, a, rt);
        unique = near_ok || other_ok;
        if (other_ok && !near_ok)
            nearest = other;
    }
    set_digits(d, nearest, m, e);
    return unique;
}

/* numpy's digits for a >= 0 (decade e when a > 0) when dragon4 must print
 * at least min and at most max significant digits: the fewest that
 * identify a in the dtype, within those bounds. */
static void dragon_digits(double a, int e, int min, int max,
                          tendo__roundtrip_fn rt, decimal *d)
{
    if (a == 0) {
        strcpy(d->dig, "0");
        d->n = 1;
        d->exp10 = 0;
        return;
    }
    if (max > MAX_DIGITS)
        max = MAX_DIGITS;
    if (max < 1)
        max = 1;
    int m = 1;
    decimal tmp;
    while (m < max && !round_at(a, e, m, rt, &tmp))
        m++;
    if (m < min)
        m = min < max ? min : max;
    round_at(a, e, m, rt, d);
}

/* Drops trailing zero digits (keeping one digit). */
static void trim_zeros(decimal *d)
{
    while (d->n > 1 && d->dig[d->n - 1] == '0')
        d->dig[--d->n] = '\0';
}

/* A bounded piece of text; what does not fit is dropped. */
typedef struct {
    char s[TEXT_MAX];
    int len;
} text;

/* Appends the first n chars of s (all of s when n < 0). */
static void text_add(text *t, const char *s, int n)
{
    if (n < 0)
        n = (int)strlen(s);
    if (n > TEXT_MAX - 1 - t->len)
        n = TEXT_MAX - 1 - t->len;
    memcpy(t->s + t->len, s, (size_t)n);
    t->len += n;
    t->s[t->len] = '\0';
}

/* Appends n copies of c. */
static void text_fill(text *t, char c, int n)
{
    for (; n > 0 && t->len < TEXT_MAX - 1; n--)
        t->s[t->len++] = c;
    t->s[t->len] = '\0';
}

/* Appends s right-aligned in a field of width chars. */
static void text_right(text *t, const char *s, int width)
{
    text_fill(t, ' ', width - (int)strlen(s));
    text_add(t, s, -1);
}

/* Splits d into positional integer digits (at least "0") and fraction
 * digits without trailing zeros. */
static void positional_parts(const decimal *d, text *ip, text *fp)
{
    ip->len = fp->len = 0;
    ip->s[0] = fp->s[0] = '\0';
    if (d->exp10 < 0) {
        text_add(ip, "0", 1);
        text_fill(fp, '0', -d->exp10 - 1);
        text_add(fp, d->dig, d->n);
    } else {
        int whole = d->exp10 + 1;
        text_add(ip, d->dig, whole < d->n ? whole : d->n);
        text_fill(ip, '0', whole - d->n);
        if (whole < d->n)
            text_add(fp, d->dig + whole, d->n - whole);
    }
    while (fp->len > 0 && fp->s[fp->len - 1] == '0')
        fp->s[--fp->len] = '\0';
}

/* Appends numpy's exponent suffix: 'e', sign, at least `digits` digits. */
static void text_exponent(text *t, int exp10, int digits)
{
    char num[16];
    int n = snprintf(num, sizeof num, "%d", exp10 < 0 ? -exp10 : exp10);
    text_add(t, exp10 < 0 ? "e-" : "e+", 2);
    text_fill(t, '0', digits - n);
    text_add(t, num, n);
}

/* Number of exponent digits numpy uses for exp10 without padding. */
static int exponent_len(int exp10)
{
    text t = {.len = 0};
    text_exponent(&t, exp10, 2);
    return t.len - 2;
}

/* ---- 0-d tensors: numpy's str of a float scalar ------------------------- */

/* Formats v as str(np.float32(v)) etc.: unique digits, positional with at
 * least one fraction digit for 1e-4 <= |v| < 1e16 (and zero), else
 * scientific without trailing zeros ("1e+20", "1.5e-05"). */
static void format_scalar(double v, tendo__roundtrip_fn rt, text *out)
{
    out->len = 0;
    out->s[0] = '\0';
    if (isnan(v) || isinf(v)) {
        text_add(out, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf", -1);
        return;
    }
    double a = fabs(v);
    int e = a == 0 ? 0 : decade_of(a);
    decimal d;
    dragon_digits(a, e, 1, MAX_DIGITS, rt, &d);
    if (signbit(v))
        text_add(out, "-", 1);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        text ip, fp;
        positional_parts(&d, &ip, &fp);
        text_add(out, ip.s, ip.len);
        text_add(out, ".", 1);
        text_add(out, fp.len ? fp.s : "0", -1);
        return;
    }
    trim_zeros(&d);
    text_add(out, d.dig, 1);
    if (d.n > 1) {
        text_add(out, ".", 1);
        text_add(out, d.dig + 1, d.n - 1);
    }
    text_exponent(out, d.exp10, 2);
}

/* ---- the printer --------------------------------------------------------- */

/* How every element of one array is formatted (numpy's FloatingFormat). */
typedef struct {
    bool sci;       /* scientific notation */
    int pad_left;   /* characters before the '.', sign included */
    int pad_right;  /* characters after the '.' (through the exponent) */
    int frac;       /* scientific: digits after the '.' */
    int exp_digits; /* scientific: exponent digits */
} float_format;

/* State of one tendo__print_values call. */
typedef struct {
    FILE *f;
    int ndim;
    const int64_t *shape;
    tendo__elem_getter get;
    const void *ctx;
    tendo__roundtrip_fn rt;
    tendo__int_getter geti; /* set for integer and bool tensors (get is NULL) */
    bool is_bool;
    int int_width;    /* integers: the widest shown element */
    bool summarize;   /* more than THRESHOLD elements: elide with "..." */
    float_format fmt;
    int col;          /* column of the next character */
    int spaces;       /* spaces owed before the next visible character */
    bool failed;      /* a write failed */
} printer;

/* Whether axis shows only its EDGE_ITEMS first and last items. */
static bool axis_elided(const printer *p, int axis)
{
    return p->summarize && p->shape[axis] > 2 * EDGE_ITEMS;
}

/* Number of items of axis that are shown. */
static int64_t shown_count(const printer *p, int axis)
{
    return axis_elided(p, axis) ? 2 * EDGE_ITEMS : p->shape[axis];
}

/* Index along axis of its j-th shown item. */
static int64_t shown_index(const printer *p, int axis, int64_t j)
{
    if (axis_elided(p, axis) && j >= EDGE_ITEMS)
        return p->shape[axis] - 2 * EDGE_ITEMS + j;
    return j;
}

/* Row-major stride of axis, in elements. */
static int64_t axis_stride(const printer *p, int axis)
{
    int64_t s = 1;
    for (int k = axis + 1; k < p->ndim; k++)
        s *= p->shape[k];
    return s;
}

/* Calls fn on each shown element, in row-major order. */
typedef void (*visit_fn)(printer *p, double v, void *acc);
static void visit_shown(printer *p, int axis, int64_t offset, visit_fn fn,
                        void *acc)
{
    if (axis == p->ndim) {
        if (p->geti) { /* integers: the widths, exactly */
            char num[24];
            int n = snprintf(num, sizeof num, "%" PRId64, p->geti(p->ctx, offset));
            (void)fn;
            (void)acc;
            if (n > p->int_width)
                p->int_width = n;
            return;
        }
        fn(p, p->get(p->ctx, offset), acc);
        return;
    }
    int64_t stride = axis_stride(p, axis), count = shown_count(p, axis);
    for (int64_t j = 0; j < count; j++)
        visit_shown(p, axis + 1, offset + shown_index(p, axis, j) * stride,
                    fn, acc);
}

/* ---- choosing the format ------------------------------------------------- */

/* What the first pass learns about the shown values. */
typedef struct {
    bool any_finite, any_nonzero, any_nonfinite, neg_inf;
    double max_abs, min_abs; /* over finite nonzero values */
} value_range;

/* Adds v to a value_range. */
static void scan_range(printer *p, double v, void *acc)
{
    value_range *r = acc;
    (void)p;
    if (isnan(v) || isinf(v)) {
        r->any_nonfinite = true;
        r->neg_inf |= isinf(v) && v < 0;
        return;
    }
    r->any_finite = true;
    double a = fabs(v);
    if (a == 0)
        return;
    if (!r->any_nonzero || a > r->max_abs)
        r->max_abs = a;
    if (!r->any_nonzero || a < r->min_abs)
        r->min_abs = a;
    r->any_nonzero = true;
}

/* Widens p->fmt to fit v as numpy's first (unpadded) pass prints it. */
static void scan_widths(printer *p, double v, void *acc)
{
    float_format *w = &p->fmt;
    (void)acc;
    if (isnan(v) || isinf(v))
        return;
    double a = fabs(v);
    int sign = signbit(v) ? 1 : 0, e = a == 0 ? 0 : decade_of(a);
    decimal d;
    if (w->sci) {
        dragon_digits(a, e, 1, PRECISION + 1, p->rt, &d);
        trim_zeros(&d);
        int xl = exponent_len(d.exp10);
        if (sign + 1 > w->pad_left)
            w->pad_left = sign + 1;
        if (d.n - 1 > w->frac)
            w->frac = d.n - 1;
        if (xl > w->exp_digits)
            w->exp_digits = xl;
    } else {
        text ip, fp;
        dragon_digits(a, e, 1, e + 1 + PRECISION, p->rt, &d);
        positional_parts(&d, &ip, &fp);
        int il = sign + ip.len, fl = fp.len;
        if (il > w->pad_left)
            w->pad_left = il;
        if (fl > w->pad_right)
            w->pad_right = fl;
    }
}

/* Sets p->fmt from the shown values, as numpy's FloatingFormat.fillFormat:
 * scientific when the largest finite magnitude is >= 1e8, the smallest
 * nonzero one < 1e-4, or their ratio (in the dtype) > 1000. */
static void choose_format(printer *p)
{
    value_range r = {0};
    visit_shown(p, 0, 0, scan_range, &r);
    memset(&p->fmt, 0, sizeof p->fmt);
    p->fmt.sci = r.any_nonzero &&
                 (r.max_abs >= 1e8 || r.min_abs < 1e-4 ||
                  p->rt(r.max_abs / r.min_abs) > 1000.0);
    if (r.any_finite)
        visit_shown(p, 0, 0, scan_widths, NULL);
    if (p->fmt.sci)
        p->fmt.pad_right = p->fmt.exp_digits + 2 + p->fmt.frac;
    if (r.any_nonfinite) {
        /* "nan" and "inf" (or "-inf") must fit the element width */
        int room = p->fmt.pad_right + 1, inf_len = r.neg_inf ? 4 : 3;
        if (3 - room > p->fmt.pad_left)
            p->fmt.pad_left = 3 - room;
        if (inf_len - room > p->fmt.pad_left)
            p->fmt.pad_left = inf_len - room;
    }
}

/* Formats v as one element of the array, padded to the common width. */
static void format_element(const printer *p, double v, text *out)
{
    const float_format *w = &p->fmt;
    out->len = 0;
    out->s[0] = '\0';
    if (isnan(v) || isinf(v)) {
        text_right(out, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf",
                   w->pad_left + w->pad_right + 1);
        return;
    }
    double a = fabs(v);
    int e = a == 0 ? 0 : decade_of(a);
    decimal d;
    text lead = {.len = 0};
    if (signbit(v))
        text_add(&lead, "-", 1);
    if (w->sci) {
        dragon_digits(a, e, w->frac + 1, w->frac + 1, p->rt, &d);
        text_add(&lead, d.dig, 1);
        text_right(out, lead.s, w->pad_left);
        text_add(out, ".", 1);
        text_add(out, d.dig + 1, d.n - 1);
        /* zero has the single digit "0": pad its fraction with zeros */
        text_fill(out, '0', w->frac - (d.n - 1));
        text_exponent(out, d.exp10, w->exp_digits);
    } else {
        text ip, fp;
        /* maxprec passes min_digits=0: all integer digits are exact */
        dragon_digits(a, e, e + 1, e + 1 + PRECISION, p->rt, &d);
        positional_parts(&d, &ip, &fp);
        text_add(&lead, ip.s, ip.len);
        text_right(out, lead.s, w->pad_left);
        text_add(out, ".", 1);
        text_add(out, fp.s, fp.len);
        text_fill(out, ' ', w->pad_right - fp.len);
    }
}

/* ---- output -------------------------------------------------------------- */

/* Writes n bytes, remembering a failure. */
static void put_raw(printer *p, const char *s, size_t n)
{
    if (!p->failed && n > 0 && fwrite(s, 1, n, p->f) != n)
        p->failed = true;
}

/* Owes n spaces: they are written only if a visible character follows on
 * the same line, since numpy strips the spaces that end a line. */
static void put_spaces(printer *p, int n)
{
    p->spaces += n;
    p->col += n;
}

/* Writes s, tracking the column; its spaces are owed (see put_spaces). */
static void put_text(printer *p, const char *s)
{
    static const char blanks[] = "                ";
    while (*s) {
        if (*s == ' ') {
            put_spaces(p, 1);
            s++;
        } else if (*s == '\n') {
            p->spaces = 0;
            p->col = 0;
            put_raw(p, "\n", 1);
            s++;
        } else {
            size_t run = strcspn(s, " \n");
            for (; p->spaces > 0; p->spaces -= 16)
                put_raw(p, blanks, p->spaces < 16 ? (size_t)p->spaces : 16);
            p->spaces = 0;
            put_raw(p, s, run);
            p->col += (int)run;
            s += run;
        }
    }
}

/* Writes word, first starting a new line indented by indent when it would
 * pass column limit, unless the line holds only its indent (numpy's
 * _extendLine). */
static void put_word(printer *p, const char *word, int limit, int indent)
{
    if (p->col + (int)strlen(word) > limit && p->col > indent) {
        put_text(p, "\n");
        put_spaces(p, indent);
    }
    put_text(p, word);
}

/* Writes count newlines then indent spaces: what separates two items of a
 * non-last axis (count is 1 between rows, 2 between 3-D blocks, ...). */
static void put_break(printer *p, int count, int indent)
{
    while (count-- > 0)
        put_text(p, "\n");
    put_spaces(p, indent);
}

/* Writes the sub-array of axis at flat offset, within `width` columns: a
 * bracketed row of elements for the last axis, else bracketed sub-arrays
 * one per line (blank lines between blocks); its continuation lines are
 * indented by axis + 1 spaces, to align with the items after the '['. */
static void print_axis(printer *p, int axis, int64_t offset, int width)
{
    int indent = axis + 1, last = axis == p->ndim - 1;
    int64_t stride = axis_stride(p, axis), count = shown_count(p, axis);
    text word;

    put_text(p, "[");
    for (int64_t j = 0; j < count; j++) {
        if (j > 0) {
            if (last)
                put_text(p, " ");
            else
                put_break(p, p->ndim - axis - 1, indent);
        }
        if (j == EDGE_ITEMS && axis_elided(p, axis)) {
            if (last) {
                put_word(p, "...", width - 1, indent);
                put_text(p, " ");
            } else {
                put_text(p, "...");
                put_break(p, p->ndim - axis - 1, indent);
            }
        }
        int64_t at = offset + shown_index(p, axis, j) * stride;
        if (last && p->geti) {
            int64_t v = p->geti(p->ctx, at);
            char num[24];
            if (p->is_bool)
                snprintf(num, sizeof num, "%s", v ? " True" : "False");
            else
                snprintf(num, sizeof num, "%" PRId64, v);
            word.len = 0;
            word.s[0] = '\0';
            text_right(&word, num, p->is_bool ? 5 : p->int_width);
            put_word(p, word.s, width - 1, indent);
        } else if (last) {
            format_element(p, p->get(p->ctx, at), &word);
            put_word(p, word.s, width - 1, indent);
        } else {
            print_axis(p, axis + 1, at, width - 1);
        }
    }
    put_text(p, "]");
}

/* Prints p's values (floats through p->get, integers or bools through
 * p->geti): a scalar, [] for an empty shape, else the axes, summarized past
 * THRESHOLD elements; then a newline. */
static tendo_status print_all(printer *p)
{
    bool empty = false;
    int64_t numel = 1; /* saturates just above THRESHOLD */

    for (int k = 0; k < p->ndim; k++) {
        if (p->shape[k] < 0)
            return TENDO_ERR_INVALID_ARG;
        empty |= p->shape[k] == 0;
        numel = p->shape[k] > THRESHOLD ? THRESHOLD + 1 : numel * p->shape[k];
        if (numel > THRESHOLD)
            numel = THRESHOLD + 1;
    }
    if (p->ndim == 0 && p->geti) {
        char num[24];
        int64_t v = p->geti(p->ctx, 0);
        if (p->is_bool)
            snprintf(num, sizeof num, "%s", v ? "True" : "False");
        else
            snprintf(num, sizeof num, "%" PRId64, v);
        put_text(p, num);
    } else if (p->ndim == 0) {
        text scalar;
        format_scalar(p->get(p->ctx, 0), p->rt, &scalar);
        put_text(p, scalar.s);
    } else if (empty) {
        put_text(p, "[]");
    } else {
        p->summarize = numel > THRESHOLD;
        if (!p->geti)
            choose_format(p);
        else if (!p->is_bool) /* the widest shown element sets the width */
            visit_shown(p, 0, 0, NULL, NULL);
        print_axis(p, 0, 0, LINE_WIDTH);
    }
    put_text(p, "\n");
    if (fflush(p->f) != 0)
        p->failed = true;
    return p->failed ? TENDO_ERR_IO : TENDO_OK;
}

/* See print.h: validates, then prints a 0-d scalar, "[]", or the array. */
tendo_status tendo__print_values(FILE *f, int ndim, const int64_t *shape,
                                 tendo__elem_getter get, const void *ctx,
                                 tendo__roundtrip_fn roundtrip)
{
    if (!f || !get || ndim < 0 || (ndim > 0 && !shape))
        return TENDO_ERR_INVALID_ARG;
    printer p = {.f = f, .ndim = ndim, .shape = shape, .get = get,
                 .ctx = ctx, .rt = roundtrip ? roundtrip : identity};
    return print_all(&p);
}

/* See print.h: the layout of tendo__print_values, with numpy's integer and
 * bool element formats. */
tendo_status tendo__print_ints(FILE *f, int ndim, const int64_t *shape, tendo__int_getter get, const void *ctx,
                               bool is_bool)
{
    if (!f || !get || ndim < 0 || (ndim > 0 && !shape))
        return TENDO_ERR_INVALID_ARG;
    printer p = {.f = f, .ndim = ndim, .shape = shape, .geti = get, .ctx = ctx, .is_bool = is_bool, .rt = identity};
    return print_all(&p);
}
