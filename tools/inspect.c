/* tools/inspect.c - `tendo inspect FILE...`: one row per tensor, with
 * statistics, as an aligned table or as one JSON document.
 *
 * Statistics are computed in double, over chunks of CHUNK elements (f32
 * data read in place, other dtypes converted chunk by chunk), the chunks
 * spread over OpenMP threads and merged in order, so the result does not
 * depend on the thread count.  Within a chunk the mean comes first and the
 * squared deviations from it second (the chunk is in cache); chunks merge
 * with Chan et al.'s pairwise update, so the variance does not suffer the
 * cancellation of sum-of-squares formulas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CHUNK ((int64_t)1 << 16)

void tool_inspect_help(FILE *out)
{
    fprintf(out,
            "usage: tendo inspect [--json] [--no-stats] FILE...\n"
            "\n"
            "Lists the tensors of safetensors and .npy files: name, dtype, shape,\n"
            "bytes, and the statistics min, max, mean, std, nan, inf.\n"
            "\n"
            "min, max, mean and std are taken over the finite elements only; NaN\n"
            "and infinite elements are counted in the nan and inf columns instead.\n"
            "For a tensor without NaN or Inf they equal numpy's min, max, mean and\n"
            "std (ddof=0, the population standard deviation), computed in double;\n"
            "with none finite they are shown as '-' (null in JSON).  Integer and\n"
            "bool tensors are read exactly (bool as 0 and 1), summed in double.\n"
            "A tensor of a dtype this build lacks is listed with its file's\n"
            "dtype and \"(not built)\", without bytes or statistics.  A .npy array\n"
            "has no name ('-' in the table, null in JSON).  The format comes from\n"
            "the file's contents (the .npy magic), else its name.\n"
            "\n"
            "options:\n"
            "  --json       one JSON document on stdout: an array with one object\n"
            "               per FILE, {\"file\", \"format\", \"bytes\", \"metadata\",\n"
            "               \"tensors\": [{\"name\", \"dtype\", \"shape\", \"bytes\",\n"
            "               \"min\", \"max\", \"mean\", \"std\", \"nan\", \"inf\"}]},\n"
            "               or {\"file\", \"error\"} for a file that failed\n"
            "  --no-stats   list the tensors without reading their data\n"
            "  -h, --help   this text\n"
            "\n"
            "Exit status: 0, 1 when a FILE cannot be read (the others are still\n"
            "listed; the reason goes to stderr), 2 for bad usage.\n");
}

/* ---- statistics --------------------------------------------------------------- */

typedef struct {
    int64_t n, nan, inf; /* n: finite elements */
    double min, max, mean, m2;
} stats;

/* The statistics of x[0..len), elements of type T (float, double or
 * int64_t), in double. */
#define STATS_OF(fn, T)                                                                           \
    static void fn(const T *x, int64_t len, stats *s)                                             \
    {                                                                                             \
        int64_t n = 0, nan = 0, inf = 0;                                                          \
        double sum = 0, lo = INFINITY, hi = -INFINITY, mean, m2 = 0;                              \
                                                                                                  \
        for (int64_t i = 0; i < len; i++) {                                                       \
            double v = (double)x[i];                                                              \
                                                                                                  \
            if (isfinite(v)) {                                                                    \
                n++;                                                                              \
                sum += v;                                                                         \
                lo = v < lo ? v : lo;                                                             \
                hi = v > hi ? v : hi;                                                             \
            } else if (isnan(v)) {                                                                \
                nan++;                                                                            \
            } else {                                                                              \
                inf++;                                                                            \
            }                                                                                     \
        }                                                                                         \
        mean = n ? sum / (double)n : 0;                                                           \
        if (n == len) {                                                                           \
            for (int64_t i = 0; i < len; i++)                                                     \
                m2 += ((double)x[i] - mean) * ((double)x[i] - mean);                              \
        } else {                                                                                  \
            for (int64_t i = 0; i < len; i++)                                                     \
                if (isfinite((double)x[i]))                                                       \
                    m2 += ((double)x[i] - mean) * ((double)x[i] - mean);                          \
        }                                                                                         \
        *s = (stats){n, nan, inf, lo, hi, mean, m2};                                              \
    }
STATS_OF(stats_of, float)
STATS_OF(stats_of_f64, double)
STATS_OF(stats_of_i64, int64_t)

/* The dtype statistics read t's elements as: f32 for the narrow floats,
 * f64 for itself, i64 for integers and bool (exact, always built). */
static tendo_dtype stats_dtype(tendo_dtype dt)
{
#define STATS_DT(name, NAME, ct, kind) \
    if (dt == TENDO_##NAME)            \
        return !strcmp(#kind, "float") ? (sizeof(ct) == 8 ? dt : TENDO_F32) : TENDO_I64;
    TENDO_FOREACH_DTYPE_KIND(STATS_DT)
#undef STATS_DT
    return TENDO_F32;
}

/* stats_of for n elements of dtype dt (f32, f64 or i64) at x. */
static void stats_any(tendo_dtype dt, const void *x, int64_t len, stats *s)
{
    if (dt == TENDO_F32)
        stats_of(x, len, s);
    else if (dt == TENDO_I64)
        stats_of_i64(x, len, s);
    else
        stats_of_f64(x, len, s);
}

/* a += b (Chan, Golub and LeVeque's pairwise combination). */
static void stats_merge(stats *a, const stats *b)
{
    int64_t n = a->n + b->n;

    a->nan += b->nan;
    a->inf += b->inf;
    if (b->n == 0)
        return;
    if (a->n == 0) {
        a->n = b->n;
        a->min = b->min;
        a->max = b->max;
        a->mean = b->mean;
        a->m2 = b->m2;
        return;
    }
    {
        double d = b->mean - a->mean, na = (double)a->n, nb = (double)b->n;

        a->mean += d * nb / (double)n;
        a->m2 += b->m2 + d * d * na * nb / (double)n;
    }
    a->min = b->min < a->min ? b->min : a->min;
    a->max = b->max > a->max ? b->max : a->max;
    a->n = n;
}

/* The statistics of t (any dtype, on the CPU).  False on failure, with
 * the reason (about path) in why. */
static bool tensor_stats(const tendo_tensor *t, const char *path, stats *out, char *why, size_t why_size)
{
    tendo_tensor *dense = NULL;
    const tendo_tensor *src = t;
    int64_t numel = tendo_tensor_numel(t), nchunks = (numel + CHUNK - 1) / CHUNK;
    stats *part;
    tendo_dtype sdt;
    bool ok = true;

    *out = (stats){0, 0, 0, NAN, NAN, NAN, 0};
    if (numel == 0)
        return true;
    sdt = stats_dtype(tendo_tensor_dtype(t));
    if (!tendo_tensor_is_contiguous(t)) { /* a Fortran-order .npy, say: copy once */
        dense = tendo_tensor_to_dtype(t, sdt);
        if (!dense) {
            snprintf(why, why_size, "%s", tool_error_reason(path));
            return false;
        }
        src = dense;
    }
    part = malloc((size_t)nchunks * sizeof *part);
    if (!part) {
        tendo_tensor_free(dense);
        snprintf(why, why_size, "out of memory");
        return false;
    }
    if (tendo_tensor_dtype(src) == sdt) {
        const char *x = tendo_tensor_data(src);
        size_t size = tendo_dtype_size(sdt);

        TOOL_PRAGMA(omp parallel for schedule(dynamic, 16) num_threads(tendo_get_num_threads()))
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t at = c * CHUNK;

            stats_any(sdt, x + (size_t)at * size, numel - at < CHUNK ? numel - at : CHUNK, &part[c]);
        }
    } else {
        /* Each chunk converted (in cache) by the library. */
        TOOL_PRAGMA(omp parallel for schedule(dynamic, 4) num_threads(tendo_get_num_threads()))
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t at = c * CHUNK, len = numel - at < CHUNK ? numel - at : CHUNK;
            tendo_tensor *view = tool_flat_chunk(src, at, len);
            tendo_tensor *f = view ? tendo_tensor_to_dtype(view, sdt) : NULL;

            if (f) {
                stats_any(sdt, tendo_tensor_data(f), len, &part[c]);
            } else {
                /* the error is this thread's: keep its message */
                TOOL_PRAGMA(omp critical(tool_stats_error))
                {
                    if (ok)
                        snprintf(why, why_size, "%s", tool_error_reason(path));
                    ok = false;
                }
            }
            tendo_tensor_free(f);
            tendo_tensor_free(view);
        }
    }
    if (ok) {
        *out = part[0];
        for (int64_t c = 1; c < nchunks; c++)
            stats_merge(out, &part[c]);
    }
    free(part);
    tendo_tensor_free(dense);
    return ok;
}

/* ---- output ----------------------------------------------------------------------- */

typedef struct {
    const char *name; /* borrowed from the file; NULL for .npy */
    tendo_dtype dtype;
    char missing[64]; /* "" or, for a dtype this build lacks, "F64 (not built)" */
    char shape[8 * 22 + 4]; /* "[d0, d1, ...]" */
    int64_t bytes;
    bool has_stats;
    stats s;
} row;

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 when p starts
 * none (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short). */
static int utf8_length(const unsigned char *p)
{
    int n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
          : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;

    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
        (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * bytes that are not UTF-8 (a file name can hold any) as U+FFFD. */
static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_length(p);

        switch (n == 1 ? *p : 0x80) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\b': fputs("\\b", stdout); break;
        case '\f': fputs("\\f", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (n == 0)
                fputs("\\ufffd", stdout);
            else if (n == 1 && (*p < 0x20 || *p == 0x7f))
                printf("\\u%04x", *p);
            else
                fwrite(p, 1, (size_t)n, stdout);
        }
        p += n ? n : 1;
    }
    putchar('"');
}

/* A finite double as JSON, null otherwise. */
static void json_number(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        fputs("null", stdout);
}

static void json_file(const tool_file *f, const row *rows, int64_t n)
{
    int64_t nmeta = f->format == TOOL_SAFETENSORS ? tendo_collection_metadata_count(f->coll) : 0;

    fputs("  {\"file\": ", stdout);
    json_string(f->path);
    printf(", \"format\": \"%s\", \"bytes\": %lld,\n   \"metadata\": {", tool_format_name(f->format), f->size);
    for (int64_t i = 0; i < nmeta; i++) {
        const char *k = tendo_collection_metadata_key(f->coll, i);

        fputs(i ? ", " : "", stdout);
        json_string(k);
        fputs(": ", stdout);
        json_string(tendo_collection_metadata(f->coll, k));
    }
    fputs("},\n   \"tensors\": [", stdout);
    for (int64_t i = 0; i < n; i++) {
        const row *r = &rows[i];

        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", stdout);
        if (r->name)
            json_string(r->name);
        else
            fputs("null", stdout);
        if (r->missing[0]) {
            printf(", \"dtype\": \"%s\", \"shape\": %s, \"bytes\": null", r->missing, r->shape);
            if (r->has_stats)
                fputs(", \"min\": null, \"max\": null, \"mean\": null, \"std\": null, \"nan\": null, \"inf\": null",
                      stdout);
        } else {
            printf(", \"dtype\": \"%s\", \"shape\": %s, \"bytes\": %lld", tendo_dtype_name(r->dtype), r->shape,
                   (long long)r->bytes);
        }
        if (r->has_stats && !r->missing[0]) {
            bool any = r->s.n > 0;

            fputs(", \"min\": ", stdout);
            json_number(any ? r->s.min : NAN);
            fputs(", \"max\": ", stdout);
            json_number(any ? r->s.max : NAN);
            fputs(", \"mean\": ", stdout);
            json_number(any ? r->s.mean : NAN);
            fputs(", \"std\": ", stdout);
            json_number(any ? sqrt(r->s.m2 / (double)r->s.n) : NAN);
            printf(", \"nan\": %lld, \"inf\": %lld", (long long)r->s.nan, (long long)r->s.inf);
        }
        putchar('}');
    }
    fputs(n ? "\n   ]}" : "]}", stdout);
}

/* Display width of s as print_text prints it: control bytes become
 * "\\xNN", a UTF-8 sequence counts once. */
static int text_width(const char *s)
{
    int w = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += *p < 0x20 || *p == 0x7f ? 4 : (*p & 0xc0) != 0x80;
    return w;
}

/* s with its control bytes escaped, padded with spaces to width. */
static void print_text(const char *s, int width)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            printf("\\x%02x", *p);
        else
            putchar(*p);
    }
    if (width > text_width(s))
        printf("%*s", width - text_width(s), "");
}

/* The table's columns; the name (any length) is printed apart. */
enum { C_NAME, C_DTYPE, C_SHAPE, C_BYTES, C_MIN, C_MAX, C_MEAN, C_STD, C_NAN, C_INF, NCOLS };
static const char *const heading[NCOLS] = {"name", "dtype", "shape", "bytes", "min", "max", "mean", "std", "nan", "inf"};
enum { CELL = 8 * 22 + 4 };

static void cells(const row *r, char cell[NCOLS][CELL])
{
    bool any = r->has_stats && r->s.n > 0;

    cell[C_NAME][0] = '\0';
    snprintf(cell[C_DTYPE], CELL, "%s", r->missing[0] ? r->missing : tendo_dtype_name(r->dtype));
    snprintf(cell[C_SHAPE], CELL, "%s", r->shape);
    snprintf(cell[C_BYTES], CELL, r->missing[0] ? "-" : "%lld", (long long)r->bytes);
    if (any) {
        snprintf(cell[C_MIN], CELL, "%.6g", r->s.min);
        snprintf(cell[C_MAX], CELL, "%.6g", r->s.max);
        snprintf(cell[C_MEAN], CELL, "%.6g", r->s.mean);
        snprintf(cell[C_STD], CELL, "%.6g", sqrt(r->s.m2 / (double)r->s.n));
    } else {
        for (int c = C_MIN; c <= C_STD; c++)
            snprintf(cell[c], CELL, "-");
    }
    snprintf(cell[C_NAN], CELL, r->missing[0] ? "-" : "%lld", (long long)r->s.nan);
    snprintf(cell[C_INF], CELL, r->missing[0] ? "-" : "%lld", (long long)r->s.inf);
}

static void table_file(const tool_file *f, const row *rows, int64_t n, bool with_stats)
{
    int ncols = with_stats ? NCOLS : C_BYTES + 1;
    int width[NCOLS];
    char cell[NCOLS][CELL];
    int64_t nmeta = f->format == TOOL_SAFETENSORS ? tendo_collection_metadata_count(f->coll) : 0;

    print_text(f->path, 0);
    printf(": %s, %lld tensor%s, %lld bytes\n", tool_format_name(f->format), (long long)n, n == 1 ? "" : "s",
           f->size);
    for (int64_t i = 0; i < nmeta; i++) {
        const char *k = tendo_collection_metadata_key(f->coll, i);

        fputs("  metadata ", stdout);
        print_text(k, 0);
        fputs(" = ", stdout);
        print_text(tendo_collection_metadata(f->coll, k), 0);
        putchar('\n');
    }
    if (n == 0)
        return;
    for (int c = 0; c < ncols; c++)
        width[c] = (int)strlen(heading[c]);
    for (int64_t i = 0; i < n; i++) {
        int w = text_width(rows[i].name ? rows[i].name : "-");

        width[C_NAME] = w > width[C_NAME] ? w : width[C_NAME];
        cells(&rows[i], cell);
        for (int c = 1; c < ncols; c++)
            if ((int)strlen(cell[c]) > width[c])
                width[c] = (int)strlen(cell[c]);
    }
    /* text columns to the left, numbers to the right */
    for (int c = 0; c < ncols; c++)
        printf(c < C_BYTES ? "  %-*s" : "  %*s", width[c], heading[c]);
    putchar('\n');
    for (int64_t i = 0; i < n; i++) {
        cells(&rows[i], cell);
        fputs("  ", stdout);
        print_text(rows[i].name ? rows[i].name : "-", width[C_NAME]);
        for (int c = 1; c < ncols; c++)
            printf(c < C_BYTES ? "  %-*s" : "  %*s", width[c], cell[c]);
        putchar('\n');
    }
}

/* Fills r from the library's reason why a tensor is absent: "tensor 'x'
 * has dtype F64 (shape [2, 3]), which this build of tendo lacks" (see
 * src/io/collection.c); false when why is not that. */
static bool missing_row(const char *why, row *r)
{
    const char *p = NULL, *q;
    char dtype[32];

    for (q = why; (q = strstr(q, "' has dtype ")); q++)
        p = q; /* the last one: a name may hold the phrase */
    if (!p || sscanf(p, "' has dtype %31s (shape ", dtype) != 1 || !(q = strstr(p, "(shape ")) ||
        !strchr(q, ']'))
        return false;
    q += strlen("(shape ");
    snprintf(r->shape, sizeof r->shape, "%.*s", (int)(strchr(q, ']') - q + 1), q);
    snprintf(r->missing, sizeof r->missing, "%s (not built)", dtype);
    return true;
}

/* ---- the command ------------------------------------------------------------------- */

/* Loads path and prints it; false when it could not be read (said on
 * stderr, and in the JSON). */
static bool inspect_one(const char *path, bool json, bool with_stats, bool first)
{
    tool_file f;
    row *rows = NULL;
    int64_t n;
    bool ok = false;

    if (json)
        fputs(first ? "\n" : ",\n", stdout);
    else if (!first)
        putchar('\n');
    if (!tool_file_load(&f, "inspect", path, tendo_cpu()))
        goto out;
    n = tool_file_count(&f);
    rows = calloc(n ? (size_t)n : 1, sizeof *rows);
    if (!rows) {
        snprintf(f.error, sizeof f.error, "out of memory");
        tool_error_line("tendo inspect: %s: %s", path, f.error);
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        const tendo_tensor *t = tool_file_tensor(&f, i);
        row *r = &rows[i];

        r->name = tool_file_name(&f, i);
        if (!t && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
            missing_row(tool_error_reason(path), r)) {
            r->has_stats = with_stats;
            continue;
        }
        if (!t) {
            snprintf(f.error, sizeof f.error, "%s", tool_error_reason(path));
            tool_error_line("tendo inspect: %s: %s", path, f.error);
            goto out;
        }
        r->dtype = tendo_tensor_dtype(t);
        tool_shape_str(t, r->shape, sizeof r->shape);
        r->bytes = tendo_tensor_numel(t) * (int64_t)tendo_dtype_size(r->dtype);
        r->has_stats = with_stats;
        if (with_stats && !tensor_stats(t, path, &r->s, f.error, sizeof f.error)) {
            tool_error_line("tendo inspect: %s: %s", path, f.error);
            goto out;
        }
    }
    if (json)
        json_file(&f, rows, n);
    else
        table_file(&f, rows, n, with_stats);
    ok = true;
out:
    if (!ok && json) { /* the reason went to stderr too */
        fputs("  {\"file\": ", stdout);
        json_string(path);
        fputs(", \"error\": ", stdout);
        json_string(f.error);
        fputs("}", stdout);
    }
    tool_file_close(&f);
    free(rows);
    return ok;
}

int tool_inspect(int argc, char **argv)
{
    static const char *const json_opt[] = {"--json", NULL}, *const no_stats_opt[] = {"--no-stats", NULL},
                             *const help_opt[] = {"-h", "--help", NULL};
    tool_args a;
    const char *arg;
    bool json = false, with_stats = true;
    int nfiles = 0, status = TOOL_OK;

    tool_args_init(&a, "inspect", argc, argv);
    while (tool_args_next(&a, &arg)) {
        if (arg)
            nfiles++;
        else if (tool_args_flag(&a, help_opt)) {
            tool_inspect_help(stdout);
            return tool_finish_stdout("inspect", TOOL_OK);
        } else if (tool_args_flag(&a, json_opt))
            json = true;
        else if (tool_args_flag(&a, no_stats_opt))
            with_stats = false;
        else
            return tool_usage_error("inspect", "unknown option '%s'", a.opt);
    }
    if (nfiles == 0)
        return tool_usage_error("inspect", "no FILE given");

    if (json)
        putchar('[');
    tool_args_init(&a, "inspect", argc, argv);
    for (int i = 0; tool_args_next(&a, &arg);) {
        if (!arg)
            continue;
        if (!inspect_one(arg, json, with_stats, i++ == 0))
            status = TOOL_FAILED;
    }
    if (json)
        fputs("\n]\n", stdout);
    return tool_finish_stdout("inspect", status);
}
