/* t/fuzz/replay.c - `make check`'s side of a fuzz target: every file of
 * t/fuzz/corpus/TARGET and t/fuzz/regressions/TARGET through the target's
 * LLVMFuzzerTestOneInput, one TAP line each, with gcc and no libFuzzer.
 *
 * TARGET is FUZZ_TARGET, compiled in ("npy", "safetensors", "dlpack",
 * "cli", "tokenizer", "save", "examples").  The harness aborts on a broken
 * promise; the line "# replaying FILE" before each call names the input in
 * the test's log.  An input that once crashed, hung or tripped a sanitizer
 * belongs in regressions/ for good (t/fuzz/README).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <string.h>

#include "fuzz.h"
#include "tap.h"

#ifndef FUZZ_TARGET
#error "compile with -DFUZZ_TARGET='\"npy\"' (the target's name)"
#endif

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Replays the files of top/t/fuzz/KIND/FUZZ_TARGET; returns how many. */
static int replay_dir(const char *top, const char *kind)
{
    char dir[4096], path[8192];
    struct dirent **names;
    int n;

    snprintf(dir, sizeof dir, "%s/t/fuzz/%s/%s", top, kind, FUZZ_TARGET);
    n = scandir(dir, &names, not_hidden, alphasort);
    if (n < 0)
        return 0;
    for (int i = 0; i < n; i++) {
        FILE *f;
        uint8_t *buf = NULL;
        long len = -1;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        f = fopen(path, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (buf = malloc((size_t)len + 1)) != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len)
            len = -1;
        if (f)
            fclose(f);
        if (len < 0 || !buf) {
            ok(false, "%s %s: cannot read %s", kind, names[i]->d_name, path);
        } else {
            printf("# replaying %s\n", path);
            fflush(stdout);
            LLVMFuzzerTestOneInput(buf, (size_t)len);
            ok(true, "%s %s/%s", FUZZ_TARGET, kind, names[i]->d_name);
        }
        free(buf);
        free(names[i]);
    }
    free(names);
    return n;
}

int main(void)
{
    const char *env = getenv("top_srcdir");
    char top[4096];
    int corpus;

    plan_lazy();
    /* absolute: the cli and save targets change directory */
    if (!realpath(env ? env : ".", top))
        bail("cannot find the source tree (top_srcdir=%s)", env ? env : "");
    corpus = replay_dir(top, "corpus");
    ok(corpus > 0, "%s: the corpus has %d inputs", FUZZ_TARGET, corpus);
    replay_dir(top, "regressions");
    return done_testing();
}
