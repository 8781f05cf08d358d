/* tools/tendo.c - the `tendo` command: what this build is, what a tensor
 * file holds, converting one to another dtype, and tokenising text.
 *
 *   tendo info                     version, build options, dtypes, devices
 *   tendo inspect FILE...          tensors and statistics (tools/inspect.c)
 *   tendo convert --dtype DT IN OUT  (tools/convert.c)
 *   tendo tokenize MODEL           text to ids and back (tools/tokenize.c)
 *   tendo demo                     a short tour: creation, views, printing
 *   tendo help [COMMAND], tendo COMMAND --help
 *
 * With TENDO_TRACE=1, every op is printed to stderr as it runs, and demo
 * ends with the per-op summary table.
 *
 * Exit status: 0 on success, 1 when an input cannot be read or a tendo call
 * fails, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int info(int argc, char **argv);
static void info_help(FILE *out);
static int demo(int argc, char **argv);
static void demo_help(FILE *out);

static const struct command {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
    void (*help)(FILE *out);
} commands[] = {
    {"info", "the version, build options, dtypes and devices of this build", info, info_help},
    {"inspect", "list the tensors of safetensors and .npy files, with statistics", tool_inspect,
     tool_inspect_help},
    {"convert", "convert the floating tensors of a file to another dtype", tool_convert, tool_convert_help},
    {"tokenize", "text to token ids and back with a model's tokenizer.json", tool_tokenize, tool_tokenize_help},
    {"demo", "create, view, convert and print a few tensors", demo, demo_help},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const struct command *find_command(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: tendo COMMAND [ARGS...]\n"
                 "\n"
                 "commands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "  help      this text, or 'tendo help COMMAND' for a command's\n"
                 "\n"
                 "options:\n"
                 "  -h, --help     this text\n"
                 "  --version      the library version\n"
                 "\n"
                 "Exit status: 0 on success, 1 when an input file cannot be read or an\n"
                 "operation fails (the reason on stderr), 2 for bad usage.\n");
}

/* A command that takes no arguments but --help. */
static int no_arguments(const char *cmd, int argc, char **argv, void (*help)(FILE *), bool *helped)
{
    *helped = false;
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        help(stdout);
        *helped = true;
        return TOOL_OK;
    }
    if (argc > 1)
        return argv[1][0] == '-' ? tool_usage_error(cmd, "unknown option '%s'", argv[1])
                                 : tool_usage_error(cmd, "unexpected argument '%s'", argv[1]);
    return TOOL_OK;
}

static void info_help(FILE *out)
{
    fprintf(out, "usage: tendo info\n"
                 "\n"
                 "Prints the library's version and build options (BLAS, OpenMP, events,\n"
                 "CUDA, MPI, NCCL), the threads CPU ops use (tendo_set_num_threads or OMP_NUM_THREADS\n"
                 "when set), the dtypes of this build with their sizes and file names,\n"
                 "and the devices: the CPU and each CUDA device.\n");
}

/* The value of key in the build options ("blas=cblas openmp=yes ..."),
 * which may contain spaces inside parentheses; "?" when absent. */
static void build_option(const char *key, char *buf, size_t n)
{
    const char *opts = tendo_build_options(), *p = opts;
    size_t klen = strlen(key), len = 0;
    int depth = 0;

    snprintf(buf, n, "?");
    while ((p = strstr(p, key)) != NULL) {
        if ((p == opts || p[-1] == ' ') && p[klen] == '=')
            break;
        p += klen;
    }
    if (!p)
        return;
    p += klen + 1;
    while (p[len] && (depth > 0 || p[len] != ' ')) {
        depth += p[len] == '(' ? 1 : p[len] == ')' ? -1 : 0;
        len++;
    }
    if (len >= n)
        len = n - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
}

static int info(int argc, char **argv)
{
    bool helped;
    int status = no_arguments("info", argc, argv, info_help, &helped), ndev;
    char blas[128], openmp[32], mpi[16], nccl[16], text[8];

    if (status != TOOL_OK || helped)
        return status;
    build_option("blas", blas, sizeof blas);
    build_option("openmp", openmp, sizeof openmp);
    printf("tendo %s\n", tendo_version());
    printf("build:       %s\n", tendo_build_options());
    printf("blas:        %s\n", blas);
    printf("openmp:      %s, %d thread%s for CPU ops\n", openmp, tendo_get_num_threads(),
           tendo_get_num_threads() == 1 ? "" : "s");
    printf("cpu kernels: %s\n", tendo_cpu_features());
    build_option("mpi", mpi, sizeof mpi);
    build_option("nccl", nccl, sizeof nccl);
    printf("collectives: MPI %s (CPU tensors), NCCL %s (CUDA tensors)%s\n", mpi, nccl,
           strcmp(mpi, "yes") ? "; a world of one" : "; run under mpirun for many processes");
    build_option("tokenizers", text, sizeof text);
    printf("tokenizers:  %s\n", strcmp(text, "yes") ? "no (configure found no PCRE2 or utf8proc)"
                                                    : "yes (tokenizer.json: WordPiece, BPE, WordLevel)");
    printf("max dims:    %d\n", TENDO_MAX_DIMS);
    printf("dtypes:\n");
#define PRINT_DTYPE(name, NAME, ct, npy, st, code, bits)                                         \
    printf("  %-6s %zu byte%s  safetensors %-7s numpy %s\n", #name, tendo_dtype_size(TENDO_##NAME), \
           tendo_dtype_size(TENDO_##NAME) == 1 ? " " : "s", st, npy[0] ? npy : "(none)");
    TENDO_FOREACH_DTYPE_INFO(PRINT_DTYPE)
#undef PRINT_DTYPE
    printf("devices:\n  cpu\n");
    ndev = tendo_cuda_device_count();
    for (int i = 0; i < ndev; i++) {
        char name[256];
        size_t total, avail;

        if (tendo_cuda_device_info(i, name, sizeof name, &total, &avail) == TENDO_OK)
            printf("  %-7s %s, %.1f GiB (%.1f GiB free)\n", tendo_device_str(tendo_cuda(i)), name,
                   (double)total / (1 << 30), (double)avail / (1 << 30));
        else
            printf("  %-7s (%s)\n", tendo_device_str(tendo_cuda(i)), tendo_error_message(tendo_last_error()));
    }
    if (ndev == 0)
        printf("  no CUDA devices available (%s)\n", strstr(tendo_build_options(), "cuda=yes")
                                                        ? "no CUDA driver or GPU found"
                                                        : "this build has no CUDA");
    return tool_finish_stdout("info", TOOL_OK);
}

static void demo_help(FILE *out)
{
    fprintf(out, "usage: tendo demo\n"
                 "\n"
                 "A short tour of the library: arange, views, bf16 rounding, matmul,\n"
                 "softmax and an error reported rather than aborted.  With\n"
                 "TENDO_TRACE=1 every op is printed to stderr and a summary follows.\n");
}

/* Prints tendo's last error and returns 1. */
static int failed(const char *what)
{
    fprintf(stderr, "tendo demo: %s: %s\n", what, tendo_error_message(tendo_last_error()));
    return 1;
}

static int demo_tour(void)
{
    tensor_f32 *a = NULL, *m = NULL, *t = NULL, *s = NULL, *r = NULL;
#ifdef TENDO_HAVE_BF16 /* a build may leave bf16 out (--enable-dtypes) */
    tensor_f32 *back = NULL;
    tensor_bf16 *h = NULL;
#endif
    int status = 1;

    a = tensor_f32_arange(0, 12, 1, tendo_cpu());
    m = a ? tensor_reshape(a, TENDO_SHAPE(3, 4)) : NULL;
    if (!m) {
        failed("arange/reshape");
        goto out;
    }
    printf("m = arange(12).reshape(3, 4):\n");
    tensor_print(m, stdout);

    t = tensor_transpose(m, 0, 1);
    s = t ? tensor_slice(t, 0, 0, 4, 2) : NULL; /* rows 0 and 2 of the transpose */
    if (!s) {
        failed("transpose/slice");
        goto out;
    }
    printf("\nm.T[0:4:2]  (a view: shares storage with m: %s, contiguous: %s):\n",
           tensor_shares_storage(s, m) ? "yes" : "no", tensor_is_contiguous(s) ? "yes" : "no");
    tensor_print(s, stdout);

    r = tensor_f32_randn(TENDO_SHAPE(2, 3), 42, tendo_cpu());
    if (!r) {
        failed("randn");
        goto out;
    }
    printf("\nrandn(2, 3, seed=42) in f32:\n");
    tensor_print(r, stdout);
#ifdef TENDO_HAVE_BF16
    h = tensor_to_bf16(r);
    back = h ? tensor_to_f32(h) : NULL;
    if (!back) {
        failed("to_bf16");
        goto out;
    }
    printf("the same rounded to bf16 (8 significant bits):\n");
    tensor_print(h, stdout);
#endif

    {
        tensor_f32 *mm = tensor_matmul(m, t), *sm = tensor_softmax(m, -1), *sd = tensor_sum(m, 0, false);
        if (!mm || !sm || !sd) {
            failed("matmul/softmax/sum");
            tensor_free(mm);
            tensor_free(sm);
            tensor_free(sd);
            goto out;
        }
        printf("\nm @ m.T:\n");
        tensor_print(mm, stdout);
        printf("softmax(m, -1):\n");
        tensor_print(sm, stdout);
        printf("m.sum(0):\n");
        tensor_print(sd, stdout);
        tensor_free(mm);
        tensor_free(sm);
        tensor_free(sd);
    }

    printf("\nan error, reported rather than aborted:\n");
    if (tensor_reshape(m, TENDO_SHAPE(5, -1)) == NULL)
        printf("  %s (%s)\n", tendo_error_message(tendo_last_error()),
               tendo_status_str(tendo_error_status(tendo_last_error())));
    status = 0;
out:
    tensor_free(a);
    tensor_free(m);
    tensor_free(t);
    tensor_free(s);
    tensor_free(r);
#ifdef TENDO_HAVE_BF16
    tensor_free(back);
    tensor_free(h);
#endif
    return status;
}

static int demo(int argc, char **argv)
{
    bool helped;
    int status = no_arguments("demo", argc, argv, demo_help, &helped);

    if (status != TOOL_OK || helped)
        return status;
    status = demo_tour();
    if (getenv("TENDO_TRACE")) /* the trace observer ran: show its totals */
        tendo_trace_summary();
    return tool_finish_stdout("demo", status);
}

static bool is_help(const char *s) { return !strcmp(s, "-h") || !strcmp(s, "--help"); }

int tendo_cli_main(int argc, char **argv)
{
    const struct command *c;

    if (argc < 2) {
        usage(stderr);
        return TOOL_USAGE;
    }
    if (is_help(argv[1]) || (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        return tool_finish_stdout("help", TOOL_OK);
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tendo %s\n", tendo_version());
        return tool_finish_stdout("help", TOOL_OK);
    }
    if (!strcmp(argv[1], "help")) {
        if (argc > 3)
            return tool_usage_error("help", "one COMMAND at most");
        if (!(c = find_command(argv[2]))) {
            tool_error_line("tendo help: unknown command '%s'", argv[2]);
            usage(stderr);
            return TOOL_USAGE;
        }
        c->help(stdout);
        return tool_finish_stdout("help", TOOL_OK);
    }
    if (!(c = find_command(argv[1]))) {
        tool_error_line(argv[1][0] == '-' ? "tendo: unknown option '%s'" : "tendo: unknown command '%s'",
                        argv[1]);
        usage(stderr);
        return TOOL_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
