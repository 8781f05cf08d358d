/* tools/tendo.c - the `tendo` command: what this build is, and a demo.
 *
 *   tendo info        version, dtypes and devices of this build
 *   tendo demo        a short tour: creation, views, conversion, printing
 *   tendo --help
 *
 * With TENDO_TRACE=1, every op is printed to stderr as it runs, and demo
 * ends with the per-op summary table.
 *
 * Exit status: 0 on success, 1 when a tendo call fails, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tendo.h>

static int usage(FILE *out, int status)
{
    fprintf(out,
            "usage: tendo COMMAND\n"
            "\n"
            "commands:\n"
            "  info    print the version, dtypes and devices of this build\n"
            "  demo    create, view, convert and print a few tensors\n"
            "\n"
            "options:\n"
            "  -h, --help     this text\n"
            "  --version      the library version\n");
    return status;
}

static int info(void)
{
    int ndev = tendo_cuda_device_count();

    printf("tendo %s\n", tendo_version());
    printf("build: %s\n", tendo_build_options());
    printf("cpu threads: %d\n", tendo_get_num_threads());
    printf("dtypes:");
#define PRINT_DTYPE(name, NAME, ct) printf(" %s(%zu bytes)", #name, tendo_dtype_size(TENDO_##NAME));
    TENDO_FOREACH_DTYPE(PRINT_DTYPE)
#undef PRINT_DTYPE
    printf("\n");
    printf("devices: cpu");
    for (int i = 0; i < ndev; i++)
        printf(" %s", tendo_device_str(tendo_cuda(i)));
    printf("\n");
    printf("cuda: %s\n", tendo_cuda_available() ? "available" : "not available (built without CUDA)");
    printf("max dims: %d\n", TENDO_MAX_DIMS);
    return 0;
}

/* Prints tendo's last error and returns 1. */
static int failed(const char *what)
{
    fprintf(stderr, "tendo demo: %s: %s\n", what, tendo_error_message(tendo_last_error()));
    return 1;
}

static int demo(void)
{
    tensor_f32 *a = NULL, *m = NULL, *t = NULL, *s = NULL, *r = NULL, *back = NULL;
    tensor_bf16 *h = NULL;
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
    h = r ? tensor_to_bf16(r) : NULL;
    back = h ? tensor_to_f32(h) : NULL;
    if (!back) {
        failed("randn/to_bf16");
        goto out;
    }
    printf("\nrandn(2, 3, seed=42) in f32:\n");
    tensor_print(r, stdout);
    printf("the same rounded to bf16 (8 significant bits):\n");
    tensor_print(h, stdout);

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
    tensor_free(back);
    tensor_bf16_free(h);
    return status;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return usage(stderr, 2);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return usage(stdout, 0);
    if (!strcmp(argv[1], "--version")) {
        printf("tendo %s\n", tendo_version());
        return 0;
    }
    if (!strcmp(argv[1], "info"))
        return info();
    if (!strcmp(argv[1], "demo")) {
        int status = demo();
        if (getenv("TENDO_TRACE")) /* the trace observer ran: show its totals */
            tendo_trace_summary();
        return status;
    }
    fprintf(stderr, "tendo: unknown command '%s'\n", argv[1]);
    return usage(stderr, 2);
}
