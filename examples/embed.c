/* examples/embed.c - tendo-embed: sentence embeddings from a BERT-family
 * safetensors checkpoint (e.g. all-MiniLM-L6-v2), every step a tendo op.
 *
 *   tendo-embed [options] MODEL_DIR [--out OUT.npy] "sentence" ...
 *   tendo-embed [options] MODEL_DIR [--out OUT.npy] --file SENTENCES.txt
 *   tendo-embed [options] MODEL.safetensors IDS.npy OUT.npy
 *
 * Given text (the sentences, or the lines of SENTENCES.txt, "-" for the
 * standard input), MODEL_DIR holds model.safetensors, config.json and
 * tokenizer.json: each sentence is tokenised with [CLS] ... [SEP], cut to
 * the model's max_seq_length (sentence_bert_config.json's, else
 * config.json's max_position_embeddings) as the tokenizer's truncation cuts
 * it, [SEP] kept last, and embedded in batches of BATCH sentences, each
 * padded to its longest.  OUT.npy gets the embeddings, f32 [n, hidden];
 * without --out each sentence's embedding is one line of stdout, the floats
 * (%.9g, so that they read back exactly) separated by spaces.
 *
 * Given token ids, IDS.npy holds them, i64 [batch, len], padded with the
 * pad id, and OUT.npy gets the embeddings.  MODEL_DIR works here too (its
 * model.safetensors), when the two other operands end in .npy.
 *
 * The embeddings are mean-pooled over the real tokens and L2-normalised,
 * as sentence-transformers computes them; a row with no real token gives
 * the zero vector.  An id outside the word-embedding table is refused,
 * naming it and its (row, column), as torch.nn.Embedding refuses it.  The
 * number of layers comes from the checkpoint's tensor names; the heads, the
 * layer-norm epsilon and the pad id from config.json (or --heads, --eps,
 * --pad).  --repeat N runs the forward passes N times and prints the best
 * time to stderr (a benchmark).  Exit status: 0 on success, 1 for an input
 * or a model it cannot use (the reason on stderr), 2 for bad usage. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tendo.h>

#define PROGRAM "tendo-embed"
#include "common.h"

#define MAX_LAYERS 64
#define BATCH 32 /* sentences a forward pass, as sentence-transformers' encode batches them */

/* One forward pass's input, on the device. */
typedef struct {
    tensor_i64 *ids;   /* [rows, len], padded */
    tensor_bool *real; /* [rows, len]: true for a real token, false for padding */
} batch;


/* Seconds on a monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define T tensor_f32
#define SFX f32
#define AS tendo_as_f32
#define DTYPE TENDO_F32
#define CONVERT_BOOL tensor_bool_to_f32
#define TO_F32 tensor_f32_contiguous
#include "bert-body.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#undef CONVERT_BOOL
#undef TO_F32

#ifdef TENDO_HAVE_BF16 /* --dtype bf16, where this build has it */
#define T tensor_bf16
#define SFX bf16
#define AS tendo_as_bf16
#define DTYPE TENDO_BF16
#define CONVERT_BOOL tensor_bool_to_bf16
#define TO_F32 tensor_bf16_to_f32
#include "bert-body.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#undef CONVERT_BOOL
#undef TO_F32
#endif


/* p, or exit when an allocation failed (p is NULL). */
static void *need(void *p)
{
    if (!p)
        fail("out of memory");
    return p;
}

/* A new zeroed array of n (>= 0) elements of size bytes; exits when memory
 * runs out. */
static void *array(int64_t n, size_t size)
{
    return need(calloc(n > 0 ? (size_t)n : 1, size));
}

/* ---- options: numbers parsed whole ---------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: tendo-embed [options] MODEL_DIR [--out OUT.npy] \"sentence\" ...\n"
                    "       tendo-embed [options] MODEL_DIR [--out OUT.npy] --file SENTENCES.txt\n"
                    "       tendo-embed [options] MODEL.safetensors|MODEL_DIR IDS.npy OUT.npy\n"
                    "  --dtype f32|bf16  --device cpu|cuda:N  --repeat N (1)  --heads N  --eps E  --pad ID\n"
                    "  (-- ends the options: the operands after it may start with -)\n");
    return 2;
}

#include "options.h"

/* Whether s ends with suffix. */
static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* ---- the model and its configuration -------------------------------------------- */

/* What the program takes from the checkpoint and its configuration. */
typedef struct {
    int64_t vocab, hidden, positions; /* the word and position embedding tables' shapes */
    int64_t heads, pad, max_len;      /* 0, -1, 0 until given */
    double eps;                       /* 0 until given */
} settings;

/* In buf, the path of file name in the model's directory: model itself
 * when it is a directory, else the directory holding the file model. */
static void beside(char *buf, size_t size, const char *model, bool is_dir, const char *name)
{
    const char *slash = strrchr(model, '/');

    if (is_dir)
        snprintf(buf, size, "%s/%s", model, name);
    else
        snprintf(buf, size, "%.*s%s", slash ? (int)(slash - model + 1) : 0, model, name);
}

/* The JSON object in path, a new reference; NULL when there is no such
 * file.  Exits 1 when it cannot be read or is not a JSON object. */
static json_t *load_json(const char *path)
{
    json_error_t err;
    json_t *root;

    if (access(path, F_OK) != 0)
        return NULL;
    if (!(root = json_load_file(path, 0, &err)))
        fail("%s: %s", path, err.text);
    if (!json_is_object(root)) {
        json_decref(root);
        fail("%s: not a JSON object", path);
    }
    return root;
}

/* What s lacks from the files beside model (is_dir: a directory):
 * config.json's num_attention_heads (a divisor of the hidden size),
 * layer_norm_eps (finite, above 0), pad_token_id (an id of the vocabulary)
 * and, for text, the length to cut sentences to: sentence_bert_config.json's
 * max_seq_length, else config.json's max_position_embeddings (at most the
 * positions the model has).  Exits 1 naming a field it cannot use. */
static void read_config(const char *model, bool is_dir, settings *s, bool text)
{
    char path[4096];
    json_t *root;
    double eps;

    beside(path, sizeof path, model, is_dir, "sentence_bert_config.json");
    if (text && (root = load_json(path))) {
        s->max_len = cfg_int(root, path, "max_seq_length", s->max_len, 1, s->positions);
        json_decref(root);
    }
    beside(path, sizeof path, model, is_dir, "config.json");
    if (!(root = load_json(path)))
        return;
    if (!s->heads && (s->heads = cfg_int(root, path, "num_attention_heads", 0, 1, s->hidden)) && s->hidden % s->heads)
        fail("%s: num_attention_heads %lld does not divide the hidden size %lld (of the word embeddings)", path,
             (long long)s->heads, (long long)s->hidden);
    if (!s->eps && !isnan(eps = cfg_num(root, path, "layer_norm_eps", NAN))) { /* NaN: absent (JSON has none) */
        if (!isfinite(eps) || eps <= 0)
            fail("%s: layer_norm_eps %g: want a finite number above 0", path, eps);
        s->eps = eps;
    }
    if (s->pad < 0)
        s->pad = cfg_int(root, path, "pad_token_id", -1, 0, s->vocab - 1);
    if (text && !s->max_len)
        s->max_len = cfg_int(root, path, "max_position_embeddings", 0, 1, s->positions);
    json_decref(root);
}

/* The shape of the matrix name in c (from path) in *rows and *cols; exits
 * 1 when there is none or it is not a matrix. */
static void matrix_shape(const tendo_collection *c, const char *path, const char *name, int64_t *rows, int64_t *cols)
{
    tendo_tensor *t = tendo_collection_get(c, name);

    if (!t)
        die(path);
    if (tendo_tensor_ndim(t) != 2)
        fail("%s: %s is not a matrix", path, name);
    *rows = tendo_tensor_shape(t)[0];
    *cols = tendo_tensor_shape(t)[1];
}

/* How many encoder.layer.N. prefixes the file has (N = 0, 1, ...). */
static int count_layers(const tendo_collection *c)
{
    int n = 0;

    for (int64_t i = 0; i < tendo_collection_count(c); i++) {
        int k;
        if (sscanf(tendo_collection_name(c, i), "encoder.layer.%d.", &k) == 1 && k + 1 > n)
            n = k + 1;
    }
    return n;
}

/* ---- the input: token ids, from a file or from text ----------------------------- */

/* ids and real [rows, len] (host arrays) as a batch on dev, once every id
 * is checked: one outside [0, vocab) exits 1, naming it and its position
 * (row0 + row, column) in what, as torch.nn.Embedding refuses it (where
 * index_select would count a negative id from the end). */
static batch make_batch(const int64_t *ids, const bool *real, int64_t rows, int64_t len, int64_t row0, int64_t vocab,
                        const char *what, tendo_device dev)
{
    batch b;

    for (int64_t i = 0; i < rows * len; i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            fail("%s: token id %lld at (%lld, %lld) is outside the vocabulary [0, %lld)", what, (long long)ids[i],
                 (long long)(row0 + i / len), (long long)(i % len), (long long)vocab);
    b.ids = CHECK(tensor_i64_from_data(ids, TENDO_SHAPE(rows, len), dev));
    b.real = CHECK(tensor_bool_from_data(real, TENDO_SHAPE(rows, len), dev));
    return b;
}

/* The token ids of path (.npy, i64 [batch, len], padded with s's pad id)
 * as one batch on dev; exits 1 on a file it cannot use. */
static batch npy_batch(const char *path, const settings *s, tendo_device dev)
{
    tensor_i64 *t = checked(tendo_as_i64(checked(tendo_npy_load(path), path)), path);
    int64_t rows, len, n = tensor_numel(t), *ids;
    bool *real;
    batch b;

    if (tensor_ndim(t) != 2)
        fail("%s: token ids must be [batch, len]", path);
    rows = tensor_size(t, 0), len = tensor_size(t, 1);
    if (len > s->positions)
        fail("%s: %lld tokens a row, but the model has %lld positions", path, (long long)len,
             (long long)s->positions);
    ids = array(n, sizeof *ids);
    real = array(n, sizeof *real);
    if (tensor_copy_to(t, ids, n) != TENDO_OK)
        die(path);
    for (int64_t i = 0; i < n; i++)
        real[i] = ids[i] != s->pad;
    b = make_batch(ids, real, rows, len, 0, s->vocab, path, dev);
    free(ids);
    free(real);
    tensor_free(t);
    return b;
}

/* Sentences [first, first + n) of sents as a batch on dev: each tokenised
 * with the special tokens ([CLS] ... [SEP]), cut to s's max_len ids as the
 * tokenizer's truncation cuts it (the text, never the [SEP] the
 * post-processor puts last), padded with s's pad id to the longest.  Exits
 * 1 when a sentence cannot be tokenised. */
static batch text_batch(const tendo_tokenizer *tok, char *const *sents, int64_t first, int64_t n, const settings *s,
                        tendo_device dev)
{
    int64_t **tokens = array(n, sizeof *tokens), len = 0, *ids;
    size_t *lens = array(n, sizeof *lens);
    bool *real;
    batch b;

    for (int64_t i = 0; i < n; i++) {
        char what[48];
        int64_t *t;

        snprintf(what, sizeof what, "sentence %lld", (long long)(first + i + 1));
        if (tendo_tokenizer_encode(tok, sents[first + i], strlen(sents[first + i]), true, &tokens[i], &lens[i]) !=
            TENDO_OK)
            die(what);
        t = tokens[i];
        if ((int64_t)lens[i] > s->max_len) {
            if (tendo_tokenizer_is_special(tok, t[lens[i] - 1]))
                t[s->max_len - 1] = t[lens[i] - 1];
            lens[i] = (size_t)s->max_len;
        }
        len = (int64_t)lens[i] > len ? (int64_t)lens[i] : len;
    }
    ids = array(n * len, sizeof *ids);
    real = array(n * len, sizeof *real);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < len; j++) {
            real[i * len + j] = j < (int64_t)lens[i];
            ids[i * len + j] = real[i * len + j] ? tokens[i][j] : s->pad;
        }
    b = make_batch(ids, real, n, len, first, s->vocab, "tokenizer.json", dev);
    for (int64_t i = 0; i < n; i++)
        free(tokens[i]);
    free(tokens);
    free(lens);
    free(ids);
    free(real);
    return b;
}

/* The lines of path ("-": the standard input), without their line ends
 * (\n or \r\n), as a new array of *n new strings; exits 1 when the file
 * cannot be read. */
static char **read_lines(const char *path, int64_t *n)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    char **lines = NULL, *line = NULL;
    size_t cap = 0, size = 0;
    ssize_t len;

    if (!f)
        fail("%s: %s", path, strerror(errno));
    *n = 0;
    while ((len = getline(&line, &size, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = 0;
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = 0;
        if ((size_t)*n == cap)
            lines = need(realloc(lines, (cap = cap ? 2 * cap : 64) * sizeof *lines));
        lines[(*n)++] = line;
        line = NULL, size = 0;
    }
    free(line);
    if (ferror(f))
        fail("%s: %s", path, strerror(errno));
    if (f != stdin)
        fclose(f);
    return lines;
}

/* ---- the output ----------------------------------------------------------------- */

/* out [rows, hidden] to path as .npy, or, without a path, to stdout, one
 * row a line; exits 1 when it cannot be written. */
static void write_out(const char *path, const float *out, int64_t rows, int64_t hidden)
{
    if (path) {
        tensor_f32 *t = CHECK(tensor_f32_from_data(out, TENDO_SHAPE(rows, hidden), tendo_cpu()));
        if (tendo_npy_save(path, tensor_f32_erase(t)) != TENDO_OK)
            die(path);
        tensor_free(t);
        return;
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < hidden; j++)
            printf(j + 1 < hidden ? "%.9g " : "%.9g\n", (double)out[i * hidden + j]);
    if (fflush(stdout) != 0 || ferror(stdout))
        fail("stdout: %s", strerror(errno));
}

int main(int argc, char **argv)
{
    const char *dtype = "f32", *out_path = NULL, *file = NULL;
    char model[4096], **ops = array(argc, sizeof *ops), **sents;
    int nops = 0, layers, repeat = 1;
    int64_t nsents, nb, rows = 0, width;
    bool is_dir, ids_form, options = true;
    struct stat st;
    settings s = {.pad = -1};
    double best = INFINITY;
    tendo_device dev = tendo_cpu();
    tendo_collection *c;
    tendo_tokenizer *tok = NULL;
    batch *batches;
    float *out;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!options || a[0] != '-')
            ops[nops++] = argv[i];
        else if (!strcmp(a, "--"))
            options = false;
        else if (!strcmp(a, "--dtype") && v && (!strcmp(v, "f32") || !strcmp(v, "bf16")))
            dtype = v, i++;
        else if (!strcmp(a, "--device"))
            dev = parse_device(v), i++;
        else if (!strcmp(a, "--heads"))
            s.heads = whole(a, v, 1, INT_MAX), i++;
        else if (!strcmp(a, "--eps"))
            s.eps = real(a, v, 0, HUGE_VAL, true, "a finite number above 0"), i++;
        else if (!strcmp(a, "--pad"))
            s.pad = whole(a, v, 0, INT64_MAX), i++;
        else if (!strcmp(a, "--repeat"))
            repeat = (int)whole(a, v, 1, INT_MAX), i++;
        else if (!strcmp(a, "--out") && v)
            out_path = v, i++;
        else if (!strcmp(a, "--file") && v)
            file = v, i++;
        else
            return free(ops), usage();
    }
    /* a model file takes token ids; a directory takes text, unless just IDS.npy OUT.npy follow it */
    is_dir = nops > 0 && stat(ops[0], &st) == 0 && S_ISDIR(st.st_mode);
    ids_form = !is_dir || (!file && !out_path && nops == 3 && ends_with(ops[1], ".npy") && ends_with(ops[2], ".npy"));
    if (nops < 1 || (ids_form && (nops != 3 || file || out_path)) || (!ids_form && (nops > 1) == (file != NULL)))
        return free(ops), usage();
#ifndef TENDO_HAVE_BF16
    if (strcmp(dtype, "f32")) {
        fprintf(stderr, "tendo-embed: this tendo was built without bf16 (--enable-dtypes)\n");
        free(ops);
        return 2;
    }
#endif

    /* the model, its shapes and settings */
    if (is_dir)
        beside(model, sizeof model, ops[0], true, "model.safetensors");
    else
        snprintf(model, sizeof model, "%s", ops[0]);
    c = checked(tendo_safetensors_load(model, dev), model);
    layers = count_layers(c);
    if (layers < 1 || layers > MAX_LAYERS)
        fail("%s: %d encoder layers (want 1 to %d)", model, layers, MAX_LAYERS);
    matrix_shape(c, model, "embeddings.word_embeddings.weight", &s.vocab, &s.hidden);
    matrix_shape(c, model, "embeddings.position_embeddings.weight", &s.positions, &width);
    if (width != s.hidden)
        fail("%s: the position embeddings are %lld wide, the word embeddings %lld", model, (long long)width,
             (long long)s.hidden);
    if (s.heads && s.hidden % s.heads)
        fail("--heads %lld does not divide the hidden size %lld (of the word embeddings)", (long long)s.heads,
             (long long)s.hidden);
    read_config(ops[0], is_dir, &s, !ids_form);
    if (!ids_form) {
        tok = checked(tendo_tokenizer_load(ops[0]), ops[0]);
        s.pad = s.pad >= 0 ? s.pad : tendo_tokenizer_token_id(tok, "[PAD]");
        s.max_len = s.max_len ? s.max_len : s.positions;
    }
    if (!s.heads || !s.eps || s.pad < 0) {
        fprintf(stderr, "%s: no %s in a config.json beside %s: give %s\n", PROGRAM,
                !s.heads ? "num_attention_heads" : !s.eps ? "layer_norm_eps" : "pad_token_id", ops[0],
                !s.heads ? "--heads" : !s.eps ? "--eps" : "--pad");
        free(ops);
        tendo_tokenizer_free(tok);
        tendo_collection_free(c);
        return 2;
    }

    /* the input, as batches on the device */
    if (ids_form) {
        nb = 1;
        batches = array(1, sizeof *batches);
        batches[0] = npy_batch(ops[1], &s, dev);
    } else {
        if (file)
            sents = read_lines(file, &nsents);
        else
            sents = ops + 1, nsents = nops - 1;
        nb = (nsents + BATCH - 1) / BATCH;
        batches = array(nb, sizeof *batches);
        for (int64_t i = 0; i < nb; i++)
            batches[i] = text_batch(tok, sents, i * BATCH, nsents - i * BATCH < BATCH ? nsents - i * BATCH : BATCH,
                                    &s, dev);
        if (file) {
            for (int64_t i = 0; i < nsents; i++)
                free(sents[i]);
            free(sents);
        }
    }
    for (int64_t i = 0; i < nb; i++)
        rows += tensor_size(batches[i].ids, 0);

    /* the forward passes and the output */
    out = array(rows * s.hidden, sizeof *out);
#ifdef TENDO_HAVE_BF16
    if (strcmp(dtype, "f32"))
        run_bf16(c, layers, (int)s.heads, s.eps, batches, nb, repeat, &best, out);
    else
#endif
        run_f32(c, layers, (int)s.heads, s.eps, batches, nb, repeat, &best, out);
    if (repeat > 1)
        fprintf(stderr, "tendo-embed: %s, best of %d: %.3f ms\n", nb == 1 ? "forward pass" : "forward passes", repeat,
                best * 1e3);
    write_out(ids_form ? ops[2] : out_path, out, rows, s.hidden);
    for (int64_t i = 0; i < nb; i++) {
        tensor_free(batches[i].ids);
        tensor_free(batches[i].real);
    }
    free(batches);
    free(out);
    free(ops);
    tendo_tokenizer_free(tok);
    tendo_collection_free(c);
    return 0;
}
