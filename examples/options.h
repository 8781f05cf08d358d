/* examples/options.h - the example programs' option values and config.json
 * fields, read whole: a number with trailing junk, out of range or
 * overflowing, or a device that is not cpu or cuda:N, exits with the
 * program's usage (status 2) rather than being read as what strtol or atof
 * would make of it; a config field of the wrong type or out of range exits
 * with status 1 naming the file and the field (fail, examples/common.h).
 * Define PROGRAM and `static int usage(void)` (prints, returns 2), and
 * include common.h, first. */
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

#include <jansson.h>
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

/* ---- config.json fields (inline: a program need not use each) ------------------------ */

/* What a JSON value is, for messages. */
static inline const char *json_kind(const json_t *v)
{
    return json_is_string(v) ? "a string" : json_is_boolean(v) ? "a boolean" : json_is_object(v) ? "an object"
           : json_is_array(v) ? "an array" : json_is_real(v) ? "a fraction" : "a number";
}

/* Field key of root (read from path), or NULL when it is absent or null;
 * one that is_type refuses exits 1: "path: key must be want, not ...". */
static inline json_t *cfg_field(const json_t *root, const char *path, const char *key, int (*is_type)(const json_t *),
                                const char *want)
{
    json_t *v = json_object_get(root, key);

    if (!v || json_is_null(v))
        return NULL;
    if (!is_type(v))
        fail("%s: %s must be %s, not %s", path, key, want, json_kind(v));
    return v;
}

static inline int cfg_is_integer(const json_t *v) { return json_is_integer(v); }
static inline int cfg_is_number(const json_t *v) { return json_is_number(v); }
static inline int cfg_is_boolean(const json_t *v) { return json_is_boolean(v); }

/* An integer field in [lo, hi] (def when absent or null). */
static inline int64_t cfg_int(const json_t *root, const char *path, const char *key, int64_t def, int64_t lo,
                              int64_t hi)
{
    json_t *v = cfg_field(root, path, key, cfg_is_integer, "an integer");
    int64_t x = v ? (int64_t)json_integer_value(v) : def;

    if (v && (x < lo || x > hi))
        fail("%s: %s %lld is out of range [%lld, %lld]", path, key, (long long)x, (long long)lo, (long long)hi);
    return x;
}

/* A number field (def when absent or null). */
static inline double cfg_num(const json_t *root, const char *path, const char *key, double def)
{
    json_t *v = cfg_field(root, path, key, cfg_is_number, "a number");
    return v ? json_number_value(v) : def;
}

/* A true/false field (def when absent or null). */
static inline bool cfg_bool(const json_t *root, const char *path, const char *key, bool def)
{
    json_t *v = cfg_field(root, path, key, cfg_is_boolean, "true or false");
    return v ? json_is_true(v) : def;
}

#endif
