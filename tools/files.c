/* tools/files.c - the helpers of tools/cli.h: arguments, dtype and device
 * names, loading files, and error messages. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"

/* ---- arguments ------------------------------------------------------------- */

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv)
{
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->next = 1; /* argv[0] is the command's name */
    a->only_operands = false;
    a->value = NULL;
    a->opt = NULL;
}

bool tool_args_next(tool_args *a, const char **operand)
{
    while (a->next < a->argc) {
        const char *s = a->argv[a->next++];

        a->opt = NULL;
        a->value = NULL;
        if (!a->only_operands && !strcmp(s, "--")) {
            a->only_operands = true;
            continue;
        }
        if (a->only_operands || s[0] != '-' || s[1] == '\0') { /* "-" is an operand */
            *operand = s;
            return true;
        }
        a->opt = s;
        *operand = NULL;
        return true;
    }
    return false;
}

/* Length of the option's name: up to '=' for a long option. */
static size_t name_len(const char *opt)
{
    const char *eq = opt[1] == '-' ? strchr(opt, '=') : NULL;

    return eq ? (size_t)(eq - opt) : strlen(opt);
}

static bool matches(const char *opt, const char *const *names)
{
    size_t n = name_len(opt);

    for (; *names; names++)
        if (strlen(*names) == n && !strncmp(opt, *names, n))
            return true;
    return false;
}

bool tool_args_flag(tool_args *a, const char *const *names)
{
    return a->opt && !strchr(a->opt, '=') && matches(a->opt, names);
}

bool tool_args_option(tool_args *a, const char *const *names, int *status)
{
    const char *eq;

    if (!a->opt || !matches(a->opt, names))
        return false;
    eq = a->opt[1] == '-' ? strchr(a->opt, '=') : NULL;
    if (eq)
        a->value = eq + 1;
    else if (a->next < a->argc)
        a->value = a->argv[a->next++];
    else
        *status = tool_usage_error(a->cmd, "option '%s' needs a value", a->opt);
    return true;
}

/* Writes s to stderr with control characters escaped (see tool_error_line). */
static void put_escaped(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(stderr, "\\x%02x", *p);
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { /* C1 controls, CSI among them */
            fprintf(stderr, "\\xc2\\x%02x", p[1]);
            p++;
        } else {
            fputc(*p, stderr);
        }
    }
}

/* The message of fmt and ap, escaped, to stderr (no newline). */
static void put_message(const char *fmt, va_list ap)
{
    char small[512], *buf = small;
    va_list again;
    int n;

    va_copy(again, ap);
    n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL)
        vsnprintf(buf, (size_t)n + 1, fmt, again);
    va_end(again);
    if (n < 0)
        small[0] = '\0';
    put_escaped(buf ? buf : small); /* cut short when out of memory */
    if (buf != small)
        free(buf);
}

void tool_error_line(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tool_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tendo %s: ", cmd);
    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'tendo help %s'.\n", cmd);
    return TOOL_USAGE;
}

/* ---- dtypes and devices ----------------------------------------------------- */

/* numpy's name of a dtype of the given DLPack code and bits: float32,
 * bfloat16...; "" when there is none worth accepting. */
static void numpy_style_name(char *buf, size_t n, int code, int bits)
{
    if (code == 6)
        snprintf(buf, n, "bool");
    else if (code == 0 || code == 1 || code == 2 || code == 4)
        snprintf(buf, n, "%s%d", code == 4 ? "bfloat" : code == 2 ? "float" : code == 0 ? "int" : "uint", bits);
    else
        snprintf(buf, n, "%s", ""); /* fp8: ml_dtypes' names are not numpy's */
}

bool tool_parse_dtype(const char *s, tendo_dtype *dt)
{
    char np[32];

#define MATCH(name, NAME, ct, npy, st, code, bits)                                      \
    numpy_style_name(np, sizeof np, code, bits);                                        \
    if (!strcmp(s, #name) || !strcmp(s, st) || !strcmp(s, np) || (npy[0] && !strcmp(s, npy))) { \
        *dt = TENDO_##NAME;                                                             \
        return true;                                                                    \
    }
    TENDO_FOREACH_DTYPE_INFO(MATCH)
#undef MATCH
    return false;
}

const char *tool_dtype_list(void)
{
    /* ", f32, f16, bf16" less its first two characters */
    return &(""
#define LIST(name, NAME, ct) ", " #name
             TENDO_FOREACH_DTYPE(LIST)
#undef LIST
             )[2];
}

bool tool_dtype_is_float(tendo_dtype dt)
{
#define IS_FLOAT(name, NAME, ct, kind) \
    if (dt == TENDO_##NAME)            \
        return !strcmp(#kind, "float");
    TENDO_FOREACH_DTYPE_KIND(IS_FLOAT)
#undef IS_FLOAT
    return false;
}

bool tool_parse_device(const char *s, tendo_device *d)
{
    char *end;
    long i;

    if (!strcmp(s, "cpu")) {
        *d = tendo_cpu();
        return true;
    }
    if (!strcmp(s, "cuda")) {
        *d = tendo_cuda(0);
        return true;
    }
    if (strncmp(s, "cuda:", 5) || s[5] < '0' || s[5] > '9')
        return false;
    errno = 0;
    i = strtol(s + 5, &end, 10);
    if (*end || errno || i > 1024)
        return false;
    *d = tendo_cuda((int)i);
    return true;
}

/* ---- errors ------------------------------------------------------------------ */

const char *tool_error_reason(const char *path)
{
    const tendo_error *e = tendo_last_error();
    const char *m = tendo_error_message(e), *op = tendo_error_op(e);
    size_t n = strlen(op), p = path ? strlen(path) : 0;

    if (n && !strncmp(m, op, n) && !strncmp(m + n, ": ", 2))
        m += n + 2;
    if (p && !strncmp(m, path, p) && !strncmp(m + p, ": ", 2))
        m += p + 2;
    return m;
}

int tool_fail(const char *cmd, const char *what)
{
    tool_error_line("tendo %s: %s: %s", cmd, what, tool_error_reason(what));
    return TOOL_FAILED;
}

int tool_finish_stdout(const char *cmd, int status)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tendo %s: cannot write the output: %s\n", cmd, strerror(errno));
        return TOOL_FAILED;
    }
    return status;
}

/* ---- files --------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && !strcasecmp(s + n - m, suffix);
}

bool tool_format_of_name(const char *path, tool_format *fmt)
{
    if (ends_with(path, ".npy")) {
        *fmt = TOOL_NPY;
        return true;
    }
    if (ends_with(path, ".safetensors")) {
        *fmt = TOOL_SAFETENSORS;
        return true;
    }
    return false;
}

const char *tool_format_name(tool_format fmt) { return fmt == TOOL_NPY ? "npy" : "safetensors"; }

/* Notes and prints why f could not be loaded; returns false. */
static bool load_failed(tool_file *f, const char *cmd, const char *why)
{
    snprintf(f->error, sizeof f->error, "%s", why);
    tool_error_line("tendo %s: %s: %s", cmd, f->path, why);
    return false;
}

bool tool_file_probe(tool_file *f, const char *cmd, const char *path)
{
    static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
    char head[sizeof npy_magic];
    struct stat st;
    FILE *in;
    size_t got;

    memset(f, 0, sizeof *f);
    f->path = path;
    /* Say plainly what the loaders would only call "cannot read". */
    if (stat(path, &st) != 0)
        return load_failed(f, cmd, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return load_failed(f, cmd, "is a directory");
    in = fopen(path, "rb");
    if (!in)
        return load_failed(f, cmd, strerror(errno));
    got = fread(head, 1, sizeof head, in);
    fclose(in);
    f->size = (long long)st.st_size;
    f->format = TOOL_SAFETENSORS;
    if ((got == sizeof head && !memcmp(head, npy_magic, sizeof head)) || ends_with(path, ".npy"))
        f->format = TOOL_NPY;
    return true;
}

bool tool_file_load(tool_file *f, const char *cmd, const char *path, tendo_device d)
{
    if (!tool_file_probe(f, cmd, path))
        return false;
    if (f->format == TOOL_SAFETENSORS) {
        f->coll = tendo_safetensors_load(path, d);
        return f->coll ? true : load_failed(f, cmd, tool_error_reason(path));
    }
    f->array = tendo_npy_load(path);
    if (f->array && !tendo_device_equal(tendo_tensor_device(f->array), d)) {
        tendo_tensor *moved = tendo_tensor_to_device(f->array, d);

        tendo_tensor_free(f->array);
        f->array = moved;
    }
    return f->array ? true : load_failed(f, cmd, tool_error_reason(path));
}

void tool_file_close(tool_file *f)
{
    tendo_tensor_free(f->array);
    tendo_collection_free(f->coll);
    f->array = NULL;
    f->coll = NULL;
}

int64_t tool_file_count(const tool_file *f) { return f->format == TOOL_NPY ? 1 : tendo_collection_count(f->coll); }

const char *tool_file_name(const tool_file *f, int64_t i)
{
    return f->format == TOOL_NPY ? NULL : tendo_collection_name(f->coll, i);
}

tendo_tensor *tool_file_tensor(const tool_file *f, int64_t i)
{
    return f->format == TOOL_NPY ? f->array : tendo_collection_at(f->coll, i);
}

/* ---- tensors ---------------------------------------------------------------------- */

tendo_tensor *tool_flat_chunk(const tendo_tensor *t, int64_t start, int64_t len)
{
    int64_t numel = tendo_tensor_numel(t);
    tendo_tensor *e = (tendo_tensor *)t; /* the typed views take no const handle */

#define CHUNK(name, NAME, ct)                                                           \
    if (tendo_tensor_dtype(t) == TENDO_##NAME) {                                        \
        tensor_##name *flat = tensor_##name##_view(tendo_as_##name(e), 1, &numel);      \
        tensor_##name *part = flat ? tensor_##name##_narrow(flat, 0, start, len) : NULL; \
        tensor_##name##_free(flat);                                                     \
        return tensor_##name##_erase(part);                                             \
    }
    TENDO_FOREACH_DTYPE(CHUNK)
#undef CHUNK
    return NULL;
}

void tool_shape_str(const tendo_tensor *t, char *buf, size_t n)
{
    int nd = tendo_tensor_ndim(t);
    const int64_t *shape = tendo_tensor_shape(t);
    size_t at = 0;

    at += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < nd && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}
