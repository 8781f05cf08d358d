/* t/drivers/t-fault-examples.c - the example programs (examples/) with
 * each of the library's allocations failing in turn
 * (tendo_fault_inject_alloc), as t-fault-cli.c sweeps the tendo program.
 *
 * Each example runs as a function (its main renamed by a wrapper,
 * t/drivers/fault-<name>.c) in a forked child, since the examples exit
 * through die() on a library error: in the directory run/ of a private
 * temporary directory, its stdout and stderr in files beside run/, its
 * inputs (made with tendo's API: a tiny BERT and a tiny Llama, each with a
 * tokenizer.json, a byte-level training config and text, a digits CSV)
 * beside run/ too.  A clean run counts N, the allocations it makes; then
 * for k = 1..N the same run with the k-th failing.  Each must end with
 * exit status 0 or 1 (no signal, no other status) and leave no temporary
 * file (no name containing ".tmp") in run/; then
 *   - status 1 must say "out of memory" on stderr and leave no output: run/
 *     as empty as it started (no OUT.npy, no --out file, no plot), except
 *     tendo-train's OUT_DIR, which may hold loss.csv (a line per step, by
 *     design) and either no checkpoint file at all or the whole step-1
 *     checkpoint (each file the bytes of a clean step-1 save): never a
 *     partial one, nor a step-1 checkpoint that a failed step-2 save broke;
 *   - status 0 (the library recovered) must give the clean run's results:
 *     its stdout and its output files, byte for byte;
 *   - stdout after a failure must be a prefix of the clean run's: the text
 *     that tendo-generate --prompt streams (and the progress lines the
 *     trainers print) as it came, never anything else.  Streamed text is
 *     the one partial output there is, by design: files are whole or absent.
 * tendo-fit's runs are long in allocations (its line fit is 201 steps), so
 * it is swept at every allocation up to FIT_FULL and then at a stride
 * (prime to the allocations of one step); under AddressSanitizer every
 * example is swept so, more sparsely (SAN_FULL): the TAP lines say so.
 *
 * The inputs are made in a child, so that the examples start as a program
 * does: before the library's first collection, which makes the library
 * jansson's allocator for the whole process (src/io/collection.c).  From
 * there on every jansson allocation can be made to fail, and jansson 2.14
 * does not report all of them: its lexer drops the byte it cannot grow its
 * buffer for (akheron/jansson#362; the library detects that in its own
 * parses, a program cannot), and a dropped closing quote sends it past the
 * buffer.  Hence tendo-embed takes its settings as options, not from a
 * config.json read after the checkpoint, and the JSON files here are
 * written so that no string's closing quote is the byte that first grows
 * the lexer's buffer (the 16th, 32nd, ... of a token): the first string
 * longer than 13 bytes is not exactly 14, none of 30 comes before a longer.
 * Leaks show in the ASan build (LeakSanitizer's exit status), in the runs
 * that return from main: an example's exit (die()) ends its process
 * without the check (tendo_fault_exit).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tendo.h>

#include "core/internal.h"
#include "tap.h"

_Noreturn void tendo_fault_exit(int status);
int tendo_embed_main(int argc, char **argv);
int tendo_generate_main(int argc, char **argv);
int tendo_train_main(int argc, char **argv);
int tendo_digits_main(int argc, char **argv);
int tendo_fit_main(int argc, char **argv);

enum { MAX_ARGS = 24, MAX_OUTPUTS = 6, MAX_FILES = 64, WHY = 1024 /* bytes of a reason */ };
#define FIT_FULL 1000 /* tendo-fit: every allocation up to here, then a stride */
#define FIT_STRIDE 13

/* Under AddressSanitizer a child costs some 30 ms (the fork of its shadow
 * memory, LeakSanitizer's scan at its exit): there every example is swept
 * at every allocation up to SAN_FULL, then at SAN_STRIDE times its stride. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#define SAN_FULL 200
#define SAN_STRIDE 11

static char dir[] = "/tmp/tendo-fault-examples-XXXXXX";

typedef struct example example;
struct example {
    const char *what;  /* for the TAP lines */
    int (*fn)(int, char **);
    const char *args[MAX_ARGS]; /* argv[1...], NULL-terminated; run in run/ */
    /* files of run/ the program writes; after a recovery, the clean run's bytes */
    const char *outputs[MAX_OUTPUTS];
    void (*setup)(void);           /* fills run/ before each run (NULL: it starts empty) */
    bool (*failed_ok)(char *why); /* whether run/ is right after status 1, else why not (NULL: empty) */
    int64_t full, stride;         /* every allocation up to full, then every stride-th (0: every one) */
};

/* ---- files ---------------------------------------------------------------------- */

/* The whole of path in new memory (*n bytes), or NULL. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, got;

    *n = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (*n + 4096 + 1 > cap) {
            char *more = realloc(buf, cap = 2 * cap + 8192);
            if (!more)
                bail("out of memory reading %s", path);
            buf = more;
        }
        if ((got = fread(buf + *n, 1, 4096, f)) == 0)
            break;
        *n += got;
    }
    fclose(f);
    buf[*n] = '\0';
    return buf;
}

/* Whether files a and b both exist with the same bytes. */
static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);

    free(x);
    free(y);
    return same;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        bail("cannot write %s", path);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *buf = slurp(from, &n);
    FILE *f = fopen(to, "wb");

    if (!buf || !f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
        bail("cannot copy %s to %s", from, to);
    free(buf);
}

/* The paths under root (relative to it, directories too), in *n (at most
 * MAX_FILES); files[i] has room for 256 bytes. */
static void list(const char *root, const char *rel, char files[][256], int *n)
{
    char path[1024];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    if (!(d = opendir(path)))
        return;
    while ((de = readdir(d))) {
        char sub[512];
        struct stat st;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(sub, sizeof sub, "%.200s%s%.200s", rel, *rel ? "/" : "", de->d_name);
        if (*n < MAX_FILES)
            snprintf(files[(*n)++], 256, "%.255s", sub);
        snprintf(path, sizeof path, "%s/%s", root, sub);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            list(root, sub, files, n);
    }
    closedir(d);
}

/* Removes path and, when it is a directory, everything under it. */
static void remove_all(const char *path)
{
    char files[MAX_FILES][256], sub[1024];
    int n = 0;

    list(path, "", files, &n);
    for (int i = n - 1; i >= 0; i--) { /* children after their directory in the list: remove backwards */
        snprintf(sub, sizeof sub, "%s/%s", path, files[i]);
        remove(sub);
    }
    if (remove(path) != 0 && errno != ENOENT)
        bail("cannot remove %s: %s", path, strerror(errno));
}

/* ---- the inputs ----------------------------------------------------------------- */

/* name, a new [d0] (d1 0) or [d0, d1] tensor of normal values times scale, into c. */
static void add_randn(tendo_collection *c, const char *name, int64_t d0, int64_t d1, uint64_t seed, double scale)
{
    const int64_t shape[2] = {d0, d1};
    tensor_f32 *r = tensor_f32_randn(d1 ? 2 : 1, shape, seed, tendo_cpu());
    tensor_f32 *s = r ? tensor_mul_scalar(r, scale) : NULL;

    if (!s || tendo_collection_add(c, name, tensor_erase(s)) != TENDO_OK)
        bail("making %s: %s", name, tendo_error_message(tendo_last_error()));
    tensor_free(r);
    tensor_free(s);
}

static void save_collection(tendo_collection *c, const char *path)
{
    if (tendo_safetensors_save(path, c) != TENDO_OK)
        bail("saving %s: %s", path, tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
}

static void save_ids(const char *path, const int64_t *ids, int nd, const int64_t *shape)
{
    tensor_i64 *t = tensor_i64_from_data(ids, nd, shape, tendo_cpu());

    if (!t || tendo_npy_save(path, tensor_erase(t)) != TENDO_OK)
        bail("saving %s: %s", path, tendo_error_message(tendo_last_error()));
    tensor_free(t);
}

/* bert/: a BERT of 1 layer, hidden 8, 20 ids, 8 positions, with a WordPiece
 * tokenizer.json and no config.json (the settings are options); ids.npy:
 * two rows of ids, one padded. */
static void make_bert(void)
{
    static const char *linear[][3] = {{"attention.self.query", "8", "8"}, {"attention.self.key", "8", "8"},
                                      {"attention.self.value", "8", "8"}, {"attention.output.dense", "8", "8"},
                                      {"intermediate.dense", "16", "8"},  {"output.dense", "8", "16"}};
    tendo_collection *c = tendo_collection_new();
    char name[128];
    uint64_t seed = 100;

    if (!c || mkdir("bert", 0777) != 0)
        bail("cannot make bert/");
    add_randn(c, "embeddings.word_embeddings.weight", 20, 8, seed++, 1.0);
    add_randn(c, "embeddings.position_embeddings.weight", 8, 8, seed++, 0.5);
    add_randn(c, "embeddings.token_type_embeddings.weight", 2, 8, seed++, 0.5);
    add_randn(c, "embeddings.LayerNorm.weight", 8, 0, seed++, 1.0);
    add_randn(c, "embeddings.LayerNorm.bias", 8, 0, seed++, 0.1);
    for (size_t i = 0; i < sizeof linear / sizeof linear[0]; i++) {
        int64_t out = atoi(linear[i][1]), in = atoi(linear[i][2]);
        snprintf(name, sizeof name, "encoder.layer.0.%s.weight", linear[i][0]);
        add_randn(c, name, out, in, seed++, 0.3);
        snprintf(name, sizeof name, "encoder.layer.0.%s.bias", linear[i][0]);
        add_randn(c, name, out, 0, seed++, 0.1);
    }
    add_randn(c, "encoder.layer.0.attention.output.LayerNorm.weight", 8, 0, seed++, 1.0);
    add_randn(c, "encoder.layer.0.attention.output.LayerNorm.bias", 8, 0, seed++, 0.1);
    add_randn(c, "encoder.layer.0.output.LayerNorm.weight", 8, 0, seed++, 1.0);
    add_randn(c, "encoder.layer.0.output.LayerNorm.bias", 8, 0, seed++, 0.1);
    save_collection(c, "bert/model.safetensors");
    /* "model" first: its long key grows jansson's buffer before "BertNormalizer" (see the top) */
    put("bert/tokenizer.json",
        "{\"model\": {\"type\": \"WordPiece\", \"continuing_subword_prefix\": \"##\", \"unk_token\": \"[UNK]\","
        "   \"vocab\": {\"[PAD]\": 0, \"[UNK]\": 1, \"[CLS]\": 2, \"[SEP]\": 3, \"the\": 4, \"cat\": 5, \"sat\": 6,"
        "     \"on\": 7, \"mat\": 8, \"a\": 9, \"dog\": 10, \"ran\": 11, \"far\": 12, \"away\": 13, \",\": 14,"
        "     \".\": 15, \"##s\": 16}},"
        " \"added_tokens\": [{\"id\": 0, \"content\": \"[PAD]\", \"special\": true},"
        "  {\"id\": 1, \"content\": \"[UNK]\", \"special\": true}, {\"id\": 2, \"content\": \"[CLS]\", \"special\": true},"
        "  {\"id\": 3, \"content\": \"[SEP]\", \"special\": true}],"
        " \"normalizer\": {\"type\": \"BertNormalizer\", \"lowercase\": true},"
        " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
        " \"post_processor\": {\"type\": \"TemplateProcessing\","
        "   \"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\"}}, {\"Sequence\": {\"id\": \"A\"}},"
        "              {\"SpecialToken\": {\"id\": \"[SEP]\"}}],"
        "   \"special_tokens\": {\"[CLS]\": {\"ids\": [2]}, \"[SEP]\": {\"ids\": [3]}}},"
        " \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true}}\n");
    save_ids("ids.npy", (const int64_t[]){2, 4, 5, 6, 3, 2, 9, 10, 3, 0}, 2, (const int64_t[]){2, 5});
}

/* llama/: a Llama of 1 layer, vocab 64, hidden 16, 2 heads, 1 key-value
 * head, MLP 32, 64 positions, with a byte-level tokenizer.json (ids 0-61
 * letters and digits, 62 the space, 63 <|end|>, the end of sequence);
 * llama-scaled/: the same weights under linear RoPE scaling and a sliding
 * window of 4; prompt.npy: three ids. */
static void make_llama(void)
{
    static const char *layer[][3] = {{"input_layernorm", "16", "0"},          {"post_attention_layernorm", "16", "0"},
                                     {"self_attn.q_proj", "16", "16"},        {"self_attn.k_proj", "8", "16"},
                                     {"self_attn.v_proj", "8", "16"},         {"self_attn.o_proj", "16", "16"},
                                     {"mlp.gate_proj", "32", "16"},           {"mlp.up_proj", "32", "16"},
                                     {"mlp.down_proj", "16", "32"}};
    static const char config[] = "\"hidden_size\": 16, \"num_attention_heads\": 2, \"num_key_value_heads\": 1,"
                                 " \"num_hidden_layers\": 1, \"vocab_size\": 64, \"intermediate_size\": 32,"
                                 " \"max_position_embeddings\": 64, \"rms_norm_eps\": 1e-5, \"eos_token_id\": 63";
    tendo_collection *c = tendo_collection_new();
    char name[128], text[4096], *p = text;
    uint64_t seed = 200;

    if (!c || mkdir("llama", 0777) != 0 || mkdir("llama-scaled", 0777) != 0)
        bail("cannot make llama/");
    add_randn(c, "model.embed_tokens.weight", 64, 16, seed++, 1.0);
    for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) {
        snprintf(name, sizeof name, "model.layers.0.%s.weight", layer[i][0]);
        add_randn(c, name, atoi(layer[i][1]), atoi(layer[i][2]), seed++, 0.3);
    }
    add_randn(c, "model.norm.weight", 16, 0, seed++, 1.0);
    add_randn(c, "lm_head.weight", 64, 16, seed++, 0.5);
    save_collection(c, "llama/model.safetensors");
    snprintf(text, sizeof text, "{%s}\n", config);
    put("llama/config.json", text);
    snprintf(text, sizeof text,
             "{%s, \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}, \"sliding_window\": 4}\n", config);
    put("llama-scaled/config.json", text);
    p += sprintf(p, "{\"added_tokens\": [{\"id\": 63, \"content\": \"<|end|>\", \"special\": true}],"
                    " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false},"
                    " \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {");
    for (int i = 0; i < 62; i++)
        p += sprintf(p, "\"%c\": %d, ", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[i], i);
    sprintf(p, "\"\\u0120\": 62, \"<|end|>\": 63}, \"merges\": []}}\n");
    put("llama/tokenizer.json", text);
    put("llama-scaled/tokenizer.json", text);
    if (symlink("../llama/model.safetensors", "llama-scaled/model.safetensors") != 0)
        bail("cannot link llama-scaled/model.safetensors");
    save_ids("prompt.npy", (const int64_t[]){1, 7, 20}, 1, (const int64_t[]){3});
}

/* train.json, a byte-level Llama of 1 layer, hidden 16; train.txt, 240 bytes;
 * digits.csv, 100 lines of 64 pixels and a label. */
static void make_training_data(void)
{
    FILE *f;

    put("train.json", "{\"model_type\": \"llama\", \"hidden_size\": 16, \"intermediate_size\": 32,"
                      " \"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"num_hidden_layers\": 1,"
                      " \"vocab_size\": 256, \"max_position_embeddings\": 16, \"rms_norm_eps\": 1e-5,"
                      " \"tie_word_embeddings\": true, \"hidden_act\": \"silu\"}\n");
    put("train.txt", "The example programs and the tendo tool run under the allocation-failure sweep: each exits 1 "
                     "with out of memory, leaves no temporary file and no partial output. A checkpoint is whole or "
                     "it is not there at all.\n");
    if (!(f = fopen("digits.csv", "w")))
        bail("cannot write digits.csv");
    for (int i = 0; i < 100; i++)
        for (int j = 0; j <= 64; j++)
            fprintf(f, j < 64 ? "%d," : "%d\n", j < 64 ? (i * 7 + j * (i % 10 + 1)) % 17 : i % 10);
    if (fclose(f) != 0)
        bail("cannot write digits.csv");
}

/* ---- running an example ----------------------------------------------------------- */

/* The examples' exit (their wrappers define exit as this): the process ends
 * as exit ends it, stdio flushed, but without LeakSanitizer's check, which
 * would count as leaked what the live frames of a program that gives up
 * midway still hold (in registers it cannot see).  Leaks are checked in
 * the runs that return from main. */
_Noreturn void tendo_fault_exit(int status)
{
    fflush(NULL);
    _exit(status);
}

/* Runs e in a child, in run/ (made afresh, then e->setup), with allocation
 * k failing (0: none); returns its wait status.  count (when not NULL)
 * gets the allocations the run made, through a pipe. */
static int run(const example *e, int64_t k, int64_t *count)
{
    int fds[2] = {-1, -1}, status;
    pid_t pid;

    remove_all("run");
    if (mkdir("run", 0777) != 0)
        bail("cannot make run/: %s", strerror(errno));
    if (e->setup)
        e->setup();
    if (count && pipe(fds) != 0)
        bail("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    if ((pid = fork()) < 0)
        bail("fork: %s", strerror(errno));
    if (pid == 0) {
        char *argv[MAX_ARGS + 2] = {(char *)e->what};
        int argc = 1, in = open("/dev/null", O_RDONLY), out = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644),
            err = open("err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644), rc;
        int64_t before;

        for (int i = 0; e->args[i]; i++)
            argv[argc++] = (char *)e->args[i];
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
            chdir("run") != 0)
            _exit(99);
        close(in), close(out), close(err);
        if (count)
            close(fds[0]);
        alarm(120); /* a hang ends as a signal, which the parent reports */
        tendo_fault_inject_alloc(k);
        before = tendo__alloc_count();
        rc = e->fn(argc, argv);
        if (count) {
            int64_t n = tendo__alloc_count() - before;
            if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n)
                _exit(98);
        }
        exit(rc);
    }
    if (count) {
        close(fds[1]);
        if (read(fds[0], count, sizeof *count) != (ssize_t)sizeof *count)
            *count = -1;
        close(fds[0]);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            bail("waitpid: %s", strerror(errno));
    return status;
}

/* Whether run/ holds a name with ".tmp" in it (the library's TARGET.tmp-PID-N,
 * tendo-train's NAME.tmpPID); the first in why. */
static bool temporary_left(char *why)
{
    char files[MAX_FILES][256];
    int n = 0;

    list("run", "", files, &n);
    for (int i = 0; i < n; i++)
        if (strstr(files[i], ".tmp")) {
            snprintf(why, WHY, "a temporary file left: %.255s", files[i]);
            return true;
        }
    return false;
}

/* After a failure: run/ is empty. */
static bool nothing_left(char *why)
{
    char files[MAX_FILES][256];
    int n = 0;

    list("run", "", files, &n);
    if (n > 0)
        snprintf(why, WHY, "%.255s left after the failure", files[0]);
    return n == 0;
}

/* The description of wait status st. */
static const char *status_text(int st)
{
    static char buf[64];

    if (WIFSIGNALED(st))
        snprintf(buf, sizeof buf, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, sizeof buf, "exit status %d", WEXITSTATUS(st));
    return buf;
}

/* Sweeps e: the clean run (kept as clean/ and clean-out.txt), then each
 * allocation failing. */
static void sweep(const example *e)
{
    int64_t n = -1, swept = 0, full = e->full, stride = e->stride;
    int st = run(e, 0, &n), bad = 0, recovered = 0;
    size_t nerr, nout, nclean;
    char *err = slurp("err.txt", &nerr), *clean_out, detail[WHY];

    if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0, "%s: a clean run succeeds (%lld allocations)", e->what,
            (long long)n)) {
        diag("%s: %s", status_text(st), err ? err : "");
        free(err);
        return;
    }
    free(err);
    remove_all("clean");
    if (rename("run", "clean") != 0 || rename("out.txt", "clean-out.txt") != 0)
        bail("cannot keep the clean run: %s", strerror(errno));
    if (!(clean_out = slurp("clean-out.txt", &nclean)))
        bail("cannot read clean-out.txt");
    if (SANITIZED) {
        full = stride && full < SAN_FULL ? full : SAN_FULL;
        stride = (stride ? stride : 1) * SAN_STRIDE;
    }
    for (int64_t k = 1; k <= n; k += stride && k >= full ? stride : 1) {
        char *out;
        const char *why = NULL;

        st = run(e, k, NULL);
        swept++;
        err = slurp("err.txt", &nerr);
        if (!(out = slurp("out.txt", &nout)))
            bail("cannot read out.txt");
        if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1)) {
            why = status_text(st);
        } else if (temporary_left(detail)) {
            why = detail;
        } else if (WEXITSTATUS(st) == 0) {
            recovered++;
            if (nout != nclean || memcmp(out, clean_out, nout))
                why = "recovered, with another stdout than the clean run's";
            for (int i = 0; !why && i < MAX_OUTPUTS && e->outputs[i]; i++) {
                char a[512], b[512];
                snprintf(a, sizeof a, "run/%s", e->outputs[i]);
                snprintf(b, sizeof b, "clean/%s", e->outputs[i]);
                if (!same_file(a, b)) {
                    snprintf(detail, sizeof detail, "recovered, with another %s than the clean run's", e->outputs[i]);
                    why = detail;
                }
            }
        } else if (!err || !strstr(err, "out of memory")) {
            why = "exit status 1 without \"out of memory\"";
        } else if (nout > nclean || memcmp(out, clean_out, nout)) {
            why = "stdout is not a prefix of the clean run's";
        } else if (!(e->failed_ok ? e->failed_ok : nothing_left)(detail)) {
            why = detail;
        }
        if (why && bad++ < 3)
            diag("%s: allocation %lld of %lld failing: %s; stderr: %s", e->what, (long long)k, (long long)n, why,
                 err ? err : "");
        free(err);
        free(out);
    }
    free(clean_out);
    if (stride)
        ok(bad == 0, "%s: allocations 1 to %lld and every %lld-th after, %lld of its %lld, failing: exit status 1 "
                     "and \"out of memory\", no temporary file, no output (%d runs recovered, as the clean run)",
           e->what, (long long)full, (long long)stride, (long long)swept, (long long)n, recovered);
    else
        ok(bad == 0, "%s: each of its %lld allocations failing: exit status 1 and \"out of memory\", no temporary "
                     "file, no output (%d runs recovered, as the clean run)",
           e->what, (long long)n, recovered);
}

/* ---- tendo-train's checkpoints ---------------------------------------------------- */

static const char *const ckpt_files[] = {"model.safetensors", "optimizer.safetensors", "config.json",
                                         "trainer_state.json"};
#define NCKPT (int)(sizeof ckpt_files / sizeof ckpt_files[0])

/* run/ckpt/ holds the step-1 checkpoint of seed/ (for --resume). */
static void seed_checkpoint(void)
{
    char from[256], to[256];

    if (mkdir("run/ckpt", 0777) != 0)
        bail("cannot make run/ckpt");
    for (int i = 0; i <= NCKPT; i++) {
        const char *name = i < NCKPT ? ckpt_files[i] : "loss.csv";
        snprintf(from, sizeof from, "seed/%s", name);
        snprintf(to, sizeof to, "run/ckpt/%s", name);
        copy_file(from, to);
    }
}

/* After a failure: run/ holds ckpt/ with loss.csv and either no checkpoint
 * file or all of them, seed/'s (step 1's) bytes; nothing else. */
static bool no_partial_checkpoint(char *why)
{
    char files[MAX_FILES][256], a[512], b[512];
    int n = 0, have = 0;

    list("run", "", files, &n);
    for (int i = 0; i < n; i++) {
        bool known = !strcmp(files[i], "ckpt") || !strcmp(files[i], "ckpt/loss.csv");
        for (int j = 0; j < NCKPT; j++)
            if (!strncmp(files[i], "ckpt/", 5) && !strcmp(files[i] + 5, ckpt_files[j]))
                known = true, have++;
        if (!known) {
            snprintf(why, WHY, "%.255s left after the failure", files[i]);
            return false;
        }
    }
    if (have == 0)
        return true;
    for (int j = 0; j < NCKPT; j++) {
        snprintf(a, sizeof a, "run/ckpt/%s", ckpt_files[j]);
        snprintf(b, sizeof b, "seed/%s", ckpt_files[j]);
        if (!same_file(a, b)) {
            snprintf(why, WHY, "a partial checkpoint: ckpt/%s is %s", ckpt_files[j],
                    access(a, F_OK) ? "missing" : "not step 1's");
            return false;
        }
    }
    return true;
}

/* ---- the examples ---------------------------------------------------------------- */

#define EMBED_ARGS "--heads", "2", "--eps", "1e-12", "--pad", "0", "../bert"
#define TRAIN_ARGS "--quiet", "--steps", "2", "--save-every", "1", "--batch", "2", "--seq", "8"

static const example embed_ids = {"tendo-embed IDS.npy", tendo_embed_main, {EMBED_ARGS, "../ids.npy", "out.npy"},
                                  {"out.npy"}, NULL, NULL, 0, 0};
static const example embed_text = {"tendo-embed --out", tendo_embed_main,
                                   {EMBED_ARGS, "--out", "out.npy", "The cat sat on the mat.", "a dog, far away"},
                                   {"out.npy"}, NULL, NULL, 0, 0};
static const example embed_stdout = {"tendo-embed (text to stdout)", tendo_embed_main, {EMBED_ARGS, "cats ran"},
                                     {NULL}, NULL, NULL, 0, 0};
static const example generate_npy = {"tendo-generate PROMPT.npy", tendo_generate_main,
                                     {"--tokens", "2", "../llama", "../prompt.npy", "out.npy"}, {"out.npy"}, NULL,
                                     NULL, 0, 0};
static const example generate_text = {"tendo-generate --prompt (sampled; linear RoPE, sliding window)",
                                      tendo_generate_main,
                                      {"--tokens", "3", "--seed", "3", "--top-k", "8", "--top-p", "0.9",
                                       "../llama-scaled", "--prompt", "hi there"},
                                      {NULL}, NULL, NULL, 0, 0};
static const example train_fresh = {"tendo-train (its step-1 checkpoint)", tendo_train_main,
                                    {TRAIN_ARGS, "--stop-after", "1", "--val-batches", "1", "--plot", "loss.svg",
                                     "../train.json", "../train.txt", "ckpt"},
                                    {"loss.svg", "ckpt/model.safetensors", "ckpt/optimizer.safetensors",
                                     "ckpt/config.json", "ckpt/trainer_state.json"},
                                    NULL, no_partial_checkpoint, 0, 0};
static const example train_resume = {"tendo-train --resume (its step-2 checkpoint over step 1's)", tendo_train_main,
                                     {TRAIN_ARGS, "--val-batches", "0", "--resume", "../train.json", "../train.txt",
                                      "ckpt"},
                                     {"ckpt/model.safetensors", "ckpt/optimizer.safetensors", "ckpt/config.json",
                                      "ckpt/trainer_state.json"},
                                     seed_checkpoint, no_partial_checkpoint, 0, 0};
/* the step-1 checkpoint (seed/) that --resume starts from, and a failed save must leave whole */
static const example train_seed = {"tendo-train --stop-after 1", tendo_train_main,
                                   {TRAIN_ARGS, "--stop-after", "1", "../train.json", "../train.txt", "ckpt"}, {NULL},
                                   NULL, NULL, 0, 0};
static const example digits = {"tendo-digits (1 epoch)", tendo_digits_main, {"--epochs", "1", "../digits.csv"},
                               {NULL}, NULL, NULL, 0, 0};
static const example fit = {"tendo-fit (1 MLP step)", tendo_fit_main, {"1"}, {NULL}, NULL, NULL, FIT_FULL,
                            FIT_STRIDE};

int main(void)
{
    bool text = strstr(tendo_build_options(), "tokenizers=yes") != NULL;
    char cmd[200];
    int st;
    pid_t pid;

    plan_lazy();
    if (!mkdtemp(dir) || chdir(dir) != 0)
        bail("cannot make %s", dir);
    /* in a child: the library, once it has made a collection, is jansson's allocator, and the
     * examples' runs should start as a program starts, before that */
    fflush(stdout);
    if ((pid = fork()) < 0)
        bail("fork: %s", strerror(errno));
    if (pid == 0) {
        make_bert();
        make_llama();
        make_training_data();
        exit(0);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bail("making the inputs: %s", status_text(st));

    sweep(&embed_ids);
    if (text) {
        sweep(&embed_text);
        sweep(&embed_stdout);
    } else {
        skip(2, "this build has no tokenizers");
    }
    sweep(&generate_npy);
    if (text)
        sweep(&generate_text);
    else
        skip(1, "this build has no tokenizers");

    st = run(&train_seed, 0, NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || rename("run/ckpt", "seed") != 0)
        bail("tendo-train --stop-after 1: %s", status_text(st));
    sweep(&train_fresh);
    sweep(&train_resume);
    sweep(&digits);
    sweep(&fit);

    if (chdir("/") != 0)
        diag("chdir / failed");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return done_testing();
}
