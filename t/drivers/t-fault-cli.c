/* t/drivers/t-fault-cli.c - the `tendo` program's commands with each of the
 * library's allocations failing in turn (tendo_fault_inject_alloc).
 *
 * For each command: a clean run counts N, the allocations it makes; then
 * for k = 1..N the same run with the k-th failing.  Each must end with exit
 * status 0 (the library recovered) or 1 with "out of memory" in its message,
 * leave no temporary file behind and, for convert, no output file when it
 * failed.  Commands read in.txt as stdin (tokenize).  Leaks show in the ASan build.  The program runs as
 * tendo_cli_main (tools/tendo.c) in a private temporary directory, with its
 * stdout and stderr sent to files there.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/cli.h"
#include "core/internal.h"
#include "tap.h"

static char dir[] = "/tmp/tendo-fault-cli-XXXXXX";

/* Runs `tendo args...` with its output in out.txt and err.txt; returns its
 * exit status, and the text of err.txt (up to n bytes) in err. */
static int run(char **args, int nargs, char *err, size_t n)
{
    char *argv[16] = {"tendo"};
    int saved_out = dup(1), saved_err = dup(2), o, e, rc;
    FILE *f;
    size_t got;

    for (int i = 0; i < nargs; i++)
        argv[i + 1] = args[i];
    if (freopen("in.txt", "r", stdin) == NULL) /* what tokenize reads, from its start each run */
        bail("cannot read in.txt");
    fflush(stdout);
    fflush(stderr);
    o = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    e = open("err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (saved_out < 0 || saved_err < 0 || o < 0 || e < 0)
        bail("cannot redirect the program's output");
    dup2(o, 1);
    dup2(e, 2);
    rc = tendo_cli_main(nargs + 1, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(o), close(e), close(saved_out), close(saved_err);
    f = fopen("err.txt", "r");
    got = f ? fread(err, 1, n - 1, f) : 0;
    err[got] = '\0';
    if (f)
        fclose(f);
    return rc;
}

/* Whether the directory holds a file whose name contains part. */
static bool has_file(const char *part)
{
    DIR *d = opendir(".");
    struct dirent *de;
    bool found = false;

    while (d && (de = readdir(d)))
        found |= strstr(de->d_name, part) != NULL;
    if (d)
        closedir(d);
    return found;
}

static void sweep(const char *what, char **args, int nargs, const char *output)
{
    char err[4096];
    int64_t before = tendo__alloc_count(), n;
    int rc = run(args, nargs, err, sizeof err), bad = 0, recovered = 0;

    n = tendo__alloc_count() - before;
    if (output)
        unlink(output);
    if (!ok(rc == 0, "tendo %s: a clean run succeeds (%lld allocations)", what, (long long)n))
        diag("%s", err);
    for (int64_t k = 1; k <= n; k++) {
        tendo_fault_inject_alloc(k);
        rc = run(args, nargs, err, sizeof err);
        tendo_fault_inject_alloc(0);
        if (rc == 0) {
            recovered++;
        } else if (rc != 1 || !strstr(err, "out of memory") || has_file(".tmp-") ||
                   (output && access(output, F_OK) == 0)) {
            if (bad++ == 0)
                diag("allocation %lld: exit status %d, %s", (long long)k, rc, err);
        }
        if (output)
            unlink(output);
    }
    ok(bad == 0, "tendo %s: each of its %lld allocations failing gives exit status 1 and \"out of memory\", "
                 "no temporary file%s (%d runs recovered)",
       what, (long long)n, output ? " and no output" : "", recovered);
}

/* The dtypes the conversions sweep: narrow floats where this build has
 * them, else i64, which every build has. */
#ifdef TENDO_HAVE_BF16
#define CONVERT_ST "bf16"
#else
#define CONVERT_ST "i64"
#endif
#ifdef TENDO_HAVE_F16
#define CONVERT_NPY "f16"
#else
#define CONVERT_NPY "i64"
#endif

int main(void)
{
    char *info[] = {"info"};
    char *inspect[] = {"inspect", "b.safetensors"};
    char *inspect_json[] = {"inspect", "--json", "b.safetensors", "a.npy"};
    char *convert_st[] = {"convert", "--dtype", CONVERT_ST, "b.safetensors", "out.safetensors"};
    char *convert_npy[] = {"convert", "--dtype", CONVERT_NPY, "a.npy", "out.npy"};
    char *tokenize[] = {"tokenize", "tokenizer.json"};
    tensor_f32 *a, *w;
    tendo_collection *c;
    tendo_tensor *ea, *ew;
    char cmd[200];

    plan_lazy();
    if (!mkdtemp(dir) || chdir(dir) != 0)
        bail("cannot make %s", dir);
    a = tensor_f32_arange(0, 6, 1, tendo_cpu());
    w = tensor_f32_randn(TENDO_SHAPE(8, 16), 3, tendo_cpu());
    ea = a ? tensor_erase(a) : NULL;
    ew = w ? tensor_erase(w) : NULL;
    c = tendo_collection_new();
    if (!ea || !ew || !c || tendo_npy_save("a.npy", ea) != TENDO_OK || tendo_collection_add(c, "a", ea) != TENDO_OK ||
        tendo_collection_add(c, "w", ew) != TENDO_OK || tendo_collection_set_metadata(c, "k", "v") != TENDO_OK ||
        tendo_safetensors_save("b.safetensors", c) != TENDO_OK)
        bail("making the input files: %s", tendo_error_message(tendo_last_error()));
    tendo_tensor_free(ea), tendo_tensor_free(ew), tendo_collection_free(c);
    /* erase took a and w over: ea and ew were their handles */

    {
        FILE *f = fopen("tokenizer.json", "w"), *in = fopen("in.txt", "w");
        if (!f || !in)
            bail("cannot write tokenizer.json and in.txt");
        fputs("{\"added_tokens\": [{\"id\": 5, \"content\": \"<|end|>\", \"special\": true}],"
              " \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"},"
              " \"model\": {\"type\": \"BPE\", \"vocab\": {\"h\": 0, \"i\": 1, \"\\u0120\": 2, \"hi\": 3,"
              " \"\\u0120hi\": 4}, \"merges\": [\"h i\", \"\\u0120 hi\"]}}",
              f);
        fputs("hi hi<|end|>hi\n\nhi\n", in);
        fclose(f);
        fclose(in);
    }
    sweep("info", info, 1, NULL);
    sweep("inspect", inspect, 2, NULL);
    sweep("inspect --json", inspect_json, 4, NULL);
    sweep("convert to " CONVERT_ST " safetensors", convert_st, 5, "out.safetensors");
    sweep("convert an .npy to " CONVERT_NPY, convert_npy, 5, "out.npy");
    if (strstr(tendo_build_options(), "tokenizers=yes"))
        sweep("tokenize", tokenize, 2, NULL);
    else
        ok(1, "# SKIP this build has no tokenizers");

    if (chdir("/") != 0)
        diag("chdir / failed");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return done_testing();
}
