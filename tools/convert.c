/* tools/convert.c - `tendo convert --dtype DT [--from WHICH] IN OUT`: every
 * floating tensor of IN (or every tensor, or those of one dtype) converted
 * to DT by the library's casts, the rest and the metadata kept, written to
 * OUT in IN's format.
 *
 * OUT is written by the library through a temporary file renamed into
 * place, so a failure at any step leaves no half-written OUT.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The progress bar appears on a terminal for this much input or more. */
#define PROGRESS_MIN_BYTES ((int64_t)64 << 20)
/* Elements converted per step when a progress bar is shown. */
#define STEP ((int64_t)1 << 22)

void tool_convert_help(FILE *out)
{
    fprintf(out,
            "usage: tendo convert --dtype DTYPE [--from WHICH] [--device DEVICE] [--no-sync] IN OUT\n"
            "\n"
            "Writes OUT with every floating-point tensor of IN (or those --from\n"
            "picks) converted to DTYPE, and every other tensor, the names, their\n"
            "order and the metadata unchanged.  To a float, each element is rounded\n"
            "once, to nearest even (overflow gives inf, or NaN in f8e4m3, which has\n"
            "no inf); to an integer, a float is truncated and saturated (NaN gives\n"
            "0) and an integer wraps; to bool, anything is != 0.\n"
            "A safetensors IN gives a safetensors OUT, a .npy IN a .npy OUT (numpy\n"
            "has no bf16: a bf16 .npy is refused).  OUT is replaced only when\n"
            "complete; on failure no OUT is left behind.\n"
            "\n"
            "options:\n"
            "  --dtype DTYPE    the new dtype: %s (safetensors\n"
            "                   spellings such as BF16 and numpy ones such as\n"
            "                   bfloat16 or float32 are accepted too)\n"
            "  --from WHICH     the tensors to convert: float (the default: every\n"
            "                   floating-point tensor), all, or one dtype\n"
            "  --device DEVICE  convert on cpu (the default), cuda or cuda:N\n"
            "  --progress       show a progress bar on stderr (by default shown\n"
            "                   only when stderr is a terminal and IN holds at\n"
            "                   least 64 MiB to convert)\n"
            "  --no-progress    never show it\n"
            "  --no-sync        do not wait for OUT to reach the disk before\n"
            "                   renaming it into place (faster; a system crash\n"
            "                   may then lose OUT, though never half-write it)\n"
            "  -h, --help       this text\n"
            "\n"
            "Exit status: 0, 1 when IN cannot be read or OUT written (the reason and\n"
            "the file name go to stderr), 2 for bad usage.\n",
            tool_dtype_list());
}

/* ---- progress ------------------------------------------------------------------ */

typedef struct {
    bool on;
    const char *label;
    int64_t total, done;
    int shown; /* per mille last drawn; -1 before the first */
    double start;
} progress;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_draw(progress *p, const char *tail)
{
    enum { WIDTH = 30 };
    int permille = p->total ? (int)(1000 * p->done / p->total) : 1000, fill = permille * WIDTH / 1000;
    double secs = now() - p->start;

    fprintf(stderr, "\r%s [%.*s%*s] %3d%% %lld/%lld MiB %.1fs%s", p->label, fill, "##############################",
            WIDTH - fill, "", permille / 10, (long long)(p->done >> 20), (long long)(p->total >> 20), secs, tail);
    fflush(stderr);
    p->shown = permille;
}

static void progress_add(progress *p, int64_t bytes)
{
    p->done += bytes;
    if (p->on && (p->shown < 0 || p->total == 0 || 1000 * p->done / p->total >= p->shown + 5))
        progress_draw(p, "");
}

/* Ends the bar's line, then says why what failed; returns TOOL_FAILED. */
static int progress_fail(progress *p, const char *what)
{
    if (p->on && p->shown >= 0)
        fputc('\n', stderr);
    p->on = false;
    return tool_fail("convert", what);
}

/* ---- converting ------------------------------------------------------------------ */

/* A new empty contiguous CPU tensor of dtype dt and t's shape. */
static tendo_tensor *empty_like(const tendo_tensor *t, tendo_dtype dt)
{
#define EMPTY(name, NAME, ct)                                                                    \
    if (dt == TENDO_##NAME)                                                                      \
        return tensor_##name##_erase(tensor_##name##_empty(tendo_tensor_ndim(t), tendo_tensor_shape(t), \
                                                           tendo_tensor_device(t)));
    TENDO_FOREACH_DTYPE(EMPTY)
#undef EMPTY
    return NULL;
}

/* t converted to dtype to: a new tensor the caller frees, NULL with the
 * library's error set on failure.  With a progress bar on a contiguous
 * CPU tensor, step by step. */
static tendo_tensor *convert_tensor(const tendo_tensor *t, tendo_dtype to, progress *p)
{
    int64_t numel = tendo_tensor_numel(t), in_size = (int64_t)tendo_dtype_size(tendo_tensor_dtype(t)),
            out_size = (int64_t)tendo_dtype_size(to);
    tendo_tensor *out;
    char *dst;

    if (!p->on || numel <= STEP || tendo_tensor_device(t).type != TENDO_CPU || !tendo_tensor_is_contiguous(t)) {
        out = tendo_tensor_to_dtype(t, to);
        if (out)
            progress_add(p, numel * in_size);
        return out;
    }
    out = empty_like(t, to);
    dst = out ? tendo_tensor_data(out) : NULL;
    if (!dst)
        goto out_free;
    for (int64_t at = 0; at < numel; at += STEP) {
        int64_t len = numel - at < STEP ? numel - at : STEP;
        tendo_tensor *view = tool_flat_chunk(t, at, len);
        tendo_tensor *part = view ? tendo_tensor_to_dtype(view, to) : NULL;
        bool done = part != NULL;

        if (done)
            memcpy(dst + at * out_size, tendo_tensor_data(part), (size_t)(len * out_size));
        tendo_tensor_free(part);
        tendo_tensor_free(view);
        if (!done)
            goto out_free;
        progress_add(p, len * in_size);
    }
    return out;
out_free:
    tendo_tensor_free(out);
    return NULL;
}

/* Which tensors --from selects. */
typedef struct {
    enum { FROM_FLOAT, FROM_ALL, FROM_DTYPE } which;
    tendo_dtype dtype; /* for FROM_DTYPE */
} selection;

/* Reads --from's value into *sel; false when it names nothing. */
static bool parse_from(const char *s, selection *sel)
{
    if (!strcmp(s, "float"))
        sel->which = FROM_FLOAT;
    else if (!strcmp(s, "all"))
        sel->which = FROM_ALL;
    else if (tool_parse_dtype(s, &sel->dtype))
        sel->which = FROM_DTYPE;
    else
        return false;
    return true;
}

/* Should t be converted to dtype to? */
static bool wants_conversion(const tendo_tensor *t, tendo_dtype to, const selection *sel)
{
    tendo_dtype dt = t ? tendo_tensor_dtype(t) : to;

    if (dt == to)
        return false;
    switch (sel->which) {
    case FROM_FLOAT: return tool_dtype_is_float(dt);
    case FROM_ALL: return true;
    case FROM_DTYPE: return dt == sel->dtype;
    }
    return false;
}

/* Converts the loaded file in and writes it to out_path; TOOL_OK or
 * TOOL_FAILED (said on stderr). */
static int convert_file(const tool_file *in, const char *out_path, tendo_dtype to, const selection *sel,
                        progress *p)
{
    int64_t n = tool_file_count(in);
    tendo_collection *coll = NULL;
    tendo_tensor *single = NULL;
    int status = TOOL_FAILED;

    for (int64_t i = 0; i < n; i++) {
        const tendo_tensor *t = tool_file_tensor(in, i);

        if (!t) /* a dtype this build lacks: OUT could not hold it */
            return progress_fail(p, in->path);
        if (wants_conversion(t, to, sel))
            p->total += tendo_tensor_numel(t) * (int64_t)tendo_dtype_size(tendo_tensor_dtype(t));
    }
    if (p->on)
        progress_draw(p, "");

    if (in->format == TOOL_NPY) {
        const tendo_tensor *t = in->array;

        /* a GPU result is fine: the savers copy to the host themselves */
        single = wants_conversion(t, to, sel) ? convert_tensor(t, to, p) : tendo_tensor_alias(t);
        if (!single)
            return progress_fail(p, in->path);
        if (p->on)
            progress_draw(p, " writing...");
        if (tendo_npy_save(out_path, single) != TENDO_OK)
            progress_fail(p, out_path);
        else
            status = TOOL_OK;
        tendo_tensor_free(single);
        return status;
    }

    coll = tendo_collection_new();
    if (!coll)
        return progress_fail(p, out_path);
    for (int64_t i = 0; i < n; i++) {
        const tendo_tensor *t = tool_file_tensor(in, i);
        tendo_tensor *c = wants_conversion(t, to, sel) ? convert_tensor(t, to, p) : tendo_tensor_alias(t);
        tendo_status st = c ? tendo_collection_add(coll, tool_file_name(in, i), c) : TENDO_ERR_OOM;

        tendo_tensor_free(c);
        if (st != TENDO_OK) {
            progress_fail(p, in->path);
            goto out_free_coll;
        }
    }
    for (int64_t i = 0; i < tendo_collection_metadata_count(in->coll); i++) {
        const char *k = tendo_collection_metadata_key(in->coll, i);

        if (tendo_collection_set_metadata(coll, k, tendo_collection_metadata(in->coll, k)) != TENDO_OK) {
            progress_fail(p, in->path);
            goto out_free_coll;
        }
    }
    if (p->on)
        progress_draw(p, " writing...");
    if (tendo_safetensors_save(out_path, coll) != TENDO_OK)
        progress_fail(p, out_path);
    else
        status = TOOL_OK;
out_free_coll:
    tendo_collection_free(coll);
    return status;
}

int tool_convert(int argc, char **argv)
{
    static const char *const dtype_opt[] = {"--dtype", NULL}, *const device_opt[] = {"--device", NULL},
                             *const from_opt[] = {"--from", NULL},
                             *const progress_opt[] = {"--progress", NULL},
                             *const no_progress_opt[] = {"--no-progress", NULL},
                             *const no_sync_opt[] = {"--no-sync", NULL},
                             *const help_opt[] = {"-h", "--help", NULL};
    tool_args a;
    const char *arg, *dtype_name = NULL, *device_name = "cpu", *from_name = "float", *paths[2] = {NULL, NULL};
    int npaths = 0, status = TOOL_OK, want_progress = -1; /* -1: when stderr is a terminal */
    tendo_dtype to;
    selection sel;
    tendo_device dev;
    tool_file in;
    tool_format named;
    progress p = {false, "converting", 0, 0, -1, 0};

    tool_args_init(&a, "convert", argc, argv);
    while (tool_args_next(&a, &arg)) {
        if (arg) {
            if (npaths == 2)
                return tool_usage_error("convert", "too many arguments (from '%s' on)", arg);
            paths[npaths++] = arg;
        } else if (tool_args_flag(&a, help_opt)) {
            tool_convert_help(stdout);
            return tool_finish_stdout("convert", TOOL_OK);
        } else if (tool_args_option(&a, dtype_opt, &status)) {
            dtype_name = a.value;
        } else if (tool_args_option(&a, device_opt, &status)) {
            device_name = a.value;
        } else if (tool_args_option(&a, from_opt, &status)) {
            from_name = a.value;
        } else if (tool_args_flag(&a, progress_opt)) {
            want_progress = 1;
        } else if (tool_args_flag(&a, no_progress_opt)) {
            want_progress = 0;
        } else if (tool_args_flag(&a, no_sync_opt)) {
            tendo_set_durable_saves(false);
        } else {
            return tool_usage_error("convert", "unknown option '%s'", a.opt);
        }
        if (status != TOOL_OK)
            return status;
    }
    if (!dtype_name)
        return tool_usage_error("convert", "--dtype is required");
    if (!tool_parse_dtype(dtype_name, &to))
        return tool_usage_error("convert", "unknown dtype '%s' (this build has %s)", dtype_name, tool_dtype_list());
    if (!parse_from(from_name, &sel))
        return tool_usage_error("convert", "--from '%s' is neither float, all nor a dtype of this build (%s)",
                                from_name, tool_dtype_list());
    if (!tool_parse_device(device_name, &dev))
        return tool_usage_error("convert", "unknown device '%s' (cpu, cuda or cuda:N)", device_name);
    if (npaths < 2)
        return tool_usage_error("convert", npaths ? "no OUT given" : "no IN and OUT given");

    if (!tool_file_probe(&in, "convert", paths[0]))
        return TOOL_FAILED;
    if (tool_format_of_name(paths[1], &named) && named != in.format)
        return tool_usage_error("convert", "%s is a %s file: OUT '%s' would be %s", paths[0],
                                tool_format_name(in.format), paths[1], tool_format_name(named));
    if (dev.type != TENDO_CPU) { /* fail on the device before reading IN */
        tensor_f32 *probe = tensor_f32_empty(TENDO_SHAPE(1), dev);

        if (!probe)
            return tool_fail("convert", device_name);
        tensor_f32_free(probe);
    }
    if (!tool_file_load(&in, "convert", paths[0], dev))
        return TOOL_FAILED;
    p.start = now();
    p.on = want_progress == 1;
    if (want_progress < 0 && isatty(STDERR_FILENO)) {
        int64_t bytes = 0;

        for (int64_t i = 0; i < tool_file_count(&in); i++) {
            const tendo_tensor *t = tool_file_tensor(&in, i);

            if (wants_conversion(t, to, &sel))
                bytes += tendo_tensor_numel(t) * (int64_t)tendo_dtype_size(tendo_tensor_dtype(t));
        }
        p.on = bytes >= PROGRESS_MIN_BYTES;
    }
    status = convert_file(&in, paths[1], to, &sel, &p);
    if (p.on && status == TOOL_OK)
        progress_draw(&p, " done\n");
    tool_file_close(&in);
    return status;
}
