/* t/fuzz/fuzz-cli.c - the `tendo` program (tendo_cli_main) on arbitrary
 * argument lists.
 *
 * The input is the arguments after "tendo", one per line (at most 32, of
 * at most 255 bytes; a NUL ends an argument early).  The program runs in a
 * private temporary directory holding a.npy and b.safetensors; a '/' in an
 * argument becomes '_', so that no real file is read or written outside
 * it, and what a command leaves there is removed after it.  Its stdout goes
 * to /dev/null.  Checked: the exit status is 0, 1 or 2.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/cli.h"
#include "fuzz.h"

static bool is_seed(const char *name) { return !strcmp(name, "a.npy") || !strcmp(name, "b.safetensors"); }

/* The files every run sees, made once; then the directory is the cwd. */
static void setup(void)
{
    static bool done;
    tensor_f32 *a;
    tendo_collection *c;

    if (done)
        return;
    done = true;
    fuzz_check(chdir(fuzz_tmpdir()) == 0, "chdir %s", fuzz_tmpdir());
    a = tensor_f32_arange(0, 6, 1, tendo_cpu());
    c = tendo_collection_new();
    fuzz_check(a && c, "setup: %s", tendo_error_message(tendo_last_error()));
    fuzz_check(tendo_npy_save("a.npy", tensor_f32_erase(a)) == TENDO_OK &&
                   tendo_collection_add(c, "w", tensor_f32_erase(a)) == TENDO_OK &&
                   tendo_collection_set_metadata(c, "k", "v") == TENDO_OK &&
                   tendo_safetensors_save("b.safetensors", c) == TENDO_OK,
               "setup: %s", tendo_error_message(tendo_last_error()));
    tensor_f32_free(a);
    tendo_collection_free(c);
}

/* Removes what the command wrote into the directory. */
static void tidy(void)
{
    DIR *d = opendir(".");
    struct dirent *e;

    fuzz_check(d != NULL, "opendir");
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_seed(e->d_name))
            unlink(e->d_name);
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAXARGS = 32, MAXLEN = 255 };
    char args[MAXARGS][MAXLEN + 1], *argv[MAXARGS + 2];
    int argc = 1, saved, devnull, status;
    size_t at = 0;

    setup();
    argv[0] = "tendo";
    while (at < size && argc <= MAXARGS) {
        char *a = args[argc - 1];
        size_t n = 0;

        for (; at < size && data[at] != '\n'; at++)
            if (n < MAXLEN && data[at] != '\0')
                a[n++] = data[at] == '/' ? '_' : (char)data[at];
        at++; /* the newline */
        a[n] = '\0';
        argv[argc++] = a;
    }
    argv[argc] = NULL;

    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    devnull = open("/dev/null", O_WRONLY);
    fuzz_check(saved >= 0 && devnull >= 0 && dup2(devnull, STDOUT_FILENO) >= 0, "cannot redirect stdout");
    status = tendo_cli_main(argc, argv);
    fflush(stdout);
    clearerr(stdout);
    fuzz_check(dup2(saved, STDOUT_FILENO) >= 0, "cannot restore stdout");
    close(saved);
    close(devnull);
    tidy();
    tendo_set_durable_saves(true); /* --no-sync is process-wide */
    fuzz_check(status == 0 || status == 1 || status == 2, "exit status %d", status);
    return 0;
}
