/* t/drivers/t-print.c - tendo__print_values against numpy's str().
 *
 * The cases and numpy's output for them are in t/data/print-cases.h, written by
 * t/data/print-cases.py.  Besides comparing the text, the getter checks that
 * only shown elements are read, and a few calls check the error paths.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/print.h"
#include "print-cases.h"
#include "tap.h"
#include "tendo.h"

/* What the getter reads and what it has seen. */
typedef struct {
    int dtype;            /* 32, 16, or 0 for the virtual tensor */
    const void *bits;
    int ndim;
    const int64_t *shape;
    bool summarized;      /* more than 1000 elements */
    int64_t calls;        /* getter calls */
    int64_t elided_reads; /* calls for elements hidden by "..." */
} source;

/* float16 bits to double, exactly. */
static double f16_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp(man + 1024, exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* v rounded to float16 (nearest, ties to even) and back: scale so that the
 * float16 spacing at |v| is 1, round to an integer, scale back. */
static double f16_roundtrip(double v)
{
    if (isnan(v) || isinf(v))
        return v;
    double a = fabs(v);
    if (a >= 65520.0) /* halfway between 65504 and 2^16, and above */
        return copysign(INFINITY, v);
    int e;
    frexp(a, &e); /* a = f * 2^e, 0.5 <= f < 1 */
    int q = (e - 1 < -14 ? -14 : e - 1) - 10; /* spacing is 2^q */
    return copysign(ldexp(nearbyint(ldexp(a, -q)), q), v);
}

/* v rounded to float32 and back. */
static double f32_roundtrip(double v) { return (double)(float)v; }

/* Whether the element at flat index i is hidden by a summary. */
static bool is_elided(const source *s, int64_t i)
{
    for (int k = s->ndim - 1; k >= 0; k--) {
        int64_t n = s->shape[k], at = i % n;
        i /= n;
        if (s->summarized && n > 6 && at >= 3 && at < n - 3)
            return true;
    }
    return false;
}

/* The getter: element i of the case, counting the calls. */
static double get(const void *ctx, int64_t i)
{
    source *s = (source *)ctx; /* the tests own it; the printer sees const */
    s->calls++;
    if (is_elided(s, i))
        s->elided_reads++;
    if (s->dtype == 16)
        return f16_to_double(((const uint16_t *)s->bits)[i]);
    if (s->dtype == 32) {
        float f;
        memcpy(&f, (const uint32_t *)s->bits + i, sizeof f);
        return f;
    }
    return (double)(float)(i % PRINT_VIRTUAL_N);
}

/* Prints through tendo__print_values into a temporary file and returns the
 * text (malloc'd), storing the status. */
static char *print_to_string(int ndim, const int64_t *shape, source *s,
                             tendo__roundtrip_fn rt, tendo_status *st)
{
    FILE *f = tmpfile();
    if (!f)
        bail("tmpfile failed");
    *st = tendo__print_values(f, ndim, shape, get, s, rt);
    long len = ftell(f);
    char *text = malloc(len > 0 ? (size_t)len + 1 : 1);
    if (!text || len < 0)
        bail("out of memory");
    rewind(f);
    if (fread(text, 1, (size_t)len, f) != (size_t)len)
        bail("reading the tmpfile failed");
    text[len] = '\0';
    fclose(f);
    return text;
}

/* Number of elements shown for shape (with numel elements). */
static int64_t shown_elements(int ndim, const int64_t *shape, int64_t numel)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= numel > 1000 && shape[k] > 6 ? 6 : shape[k];
    return n;
}

/* Runs one case of print-cases.h. */
static void check_case(const struct print_case *c)
{
    source s = {.dtype = c->dtype, .bits = c->bits, .ndim = c->ndim,
                .shape = c->shape, .summarized = c->numel > 1000};
    tendo_status st;
    char *got = print_to_string(c->ndim, c->shape, &s,
                                c->dtype == 16 ? f16_roundtrip : f32_roundtrip,
                                &st);
    if (!is_string(c->want, got, "%s", c->name))
        diag("status %d", (int)st);
    int64_t shown = c->numel ? shown_elements(c->ndim, c->shape, c->numel) : 0;
    if (c->ndim == 0)
        shown = 1;
    ok(st == TENDO_OK && s.elided_reads == 0 && s.calls <= 3 * shown,
       "%s: status ok, %lld reads of %lld shown elements, none elided",
       c->name, (long long)s.calls, (long long)shown);
    free(got);
}

/* A 10^12-element tensor: only its corners may be read. */
static void check_virtual(void)
{
    const int64_t shape[] = {PRINT_VIRTUAL_N, PRINT_VIRTUAL_N};
    source s = {.dtype = 0, .ndim = 2, .shape = shape, .summarized = true};
    tendo_status st;
    char *got = print_to_string(2, shape, &s, f32_roundtrip, &st);
    is_string(PRINT_VIRTUAL_WANT, got, "virtual 10^6 x 10^6 tensor");
    ok(st == TENDO_OK && s.elided_reads == 0 && s.calls <= 3 * 36,
       "virtual tensor: %lld reads, none elided", (long long)s.calls);
    free(got);
}

/* The f16 round trip used above agrees with exact float16 values. */
static void check_f16_roundtrip(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        double v = f16_to_double((uint16_t)h);
        if (!isnan(v) && f16_roundtrip(v) != v)
            bad++;
    }
    ok(bad == 0, "f16 round trip keeps every float16 value (%d bad)", bad);
    ok(f16_roundtrip(1.0 + ldexp(1, -11)) == 1.0 &&
           f16_roundtrip(1.0 + 3 * ldexp(1, -11)) == 1.0 + ldexp(1, -9) &&
           f16_roundtrip(65519.99) == 65504.0 && isinf(f16_roundtrip(65520.0)) &&
           f16_roundtrip(ldexp(1, -25)) == 0.0 &&
           f16_roundtrip(ldexp(3, -26)) == ldexp(1, -24),
       "f16 round trip rounds to nearest, ties to even");
}

/* Failing writes and bad arguments. */
static void check_errors(void)
{
    const float one = 1.0f;
    const int64_t shape[] = {1}, bad_shape[] = {-1};
    source s = {.dtype = 32, .bits = &one, .ndim = 1, .shape = shape};
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        is_int(TENDO_ERR_IO,
               tendo__print_values(full, 1, shape, get, &s, f32_roundtrip),
               "writing to /dev/full gives TENDO_ERR_IO");
        fclose(full);
    } else {
        skip(1, "no /dev/full");
    }
    is_int(TENDO_ERR_INVALID_ARG,
           tendo__print_values(stdout, 1, shape, NULL, &s, f32_roundtrip),
           "NULL getter");
    is_int(TENDO_ERR_INVALID_ARG,
           tendo__print_values(NULL, 1, shape, get, &s, f32_roundtrip),
           "NULL stream");
    is_int(TENDO_ERR_INVALID_ARG,
           tendo__print_values(stdout, 1, bad_shape, get, &s, f32_roundtrip),
           "negative extent");
    is_int(TENDO_ERR_INVALID_ARG,
           tendo__print_values(stdout, -1, shape, get, &s, f32_roundtrip),
           "negative ndim");
}

/* What the integer getter reads. */
typedef struct {
    const struct print_int_case *c;
    int64_t calls, elided_reads;
} int_source;

static int64_t get_int(const void *ctx, int64_t flat)
{
    int_source *s = (int_source *)ctx;
    const struct print_int_case *c = s->c;
    int64_t rest = flat;

    s->calls++;
    if (c->numel > 1000)
        for (int k = c->ndim - 1; k >= 0; k--) {
            int64_t i = rest % c->shape[k];
            if (c->shape[k] > 6 && i >= 3 && i < c->shape[k] - 3)
                s->elided_reads++;
            rest /= c->shape[k];
        }
    return c->vals[flat];
}

/* Runs one integer or bool case of print-cases.h. */
static void check_int_case(const struct print_int_case *c)
{
    int_source s = {.c = c};
    FILE *f = tmpfile();
    char *got;
    long len;
    tendo_status st;

    if (!f)
        bail("tmpfile failed");
    st = tendo__print_ints(f, c->ndim, c->shape, get_int, &s, c->is_bool);
    len = ftell(f);
    got = malloc(len > 0 ? (size_t)len + 1 : 1);
    if (!got || len < 0)
        bail("out of memory");
    rewind(f);
    if (fread(got, 1, (size_t)len, f) != (size_t)len)
        bail("reading the tmpfile failed");
    got[len] = '\0';
    fclose(f);
    is_string(c->want, got, "%s", c->name);
    ok(st == TENDO_OK && s.elided_reads == 0, "%s: status ok, %lld reads, none elided", c->name,
       (long long)s.calls);
    free(got);
}

/* The generated tensor_<dt>_print of every integer and bool dtype reaches
 * tendo__print_ints, exactly (2^53 + 1 is no double). */
static void check_public_print(void)
{
    int64_t big[3] = {INT64_C(9007199254740993), -5, 0};
    bool flags[3] = {true, false, true};
    tensor_i64 *a = tensor_i64_from_data(big, TENDO_SHAPE(3), tendo_cpu());
    tensor_bool *b = tensor_bool_from_data(flags, TENDO_SHAPE(3), tendo_cpu());
    char buf[256];
    FILE *f = tmpfile();
    size_t n;

    if (!f || !a || !b)
        bail("setup failed");
    ok(tensor_i64_print(a, f) == TENDO_OK && tensor_bool_print(b, f) == TENDO_OK, "tensor_i64_print, tensor_bool_print");
    rewind(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    is_string("[9007199254740993               -5                0]\n[ True False  True]\n", buf,
              "  numpy's text, i64 exact past 2^53");
    fclose(f);
    tensor_i64_free(a);
    tensor_bool_free(b);
#ifdef TENDO_HAVE_U8
    {
        uint8_t u[2] = {255, 3};
        tensor_u8 *c = tensor_u8_from_data(u, TENDO_SHAPE(2), tendo_cpu());

        f = tmpfile();
        ok(c && f && tensor_u8_print(c, f) == TENDO_OK, "tensor_u8_print");
        rewind(f);
        n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        is_string("[255   3]\n", buf, "  u8 as numpy prints it");
        fclose(f);
        tensor_u8_free(c);
    }
#endif
}

int main(void)
{
    size_t n = sizeof print_cases / sizeof print_cases[0];
    plan_lazy();
    for (size_t i = 0; i < n; i++)
        check_case(&print_cases[i]);
    for (size_t i = 0; i < sizeof print_int_cases / sizeof print_int_cases[0]; i++)
        check_int_case(&print_int_cases[i]);
    check_public_print();
    check_virtual();
    check_f16_roundtrip();
    check_errors();
    return done_testing();
}
