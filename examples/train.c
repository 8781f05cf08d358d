/* examples/tendo-train: trains a Llama-style decoder (the architecture
 * tendo-generate runs: RMSNorm, RoPE, grouped-query attention, SwiGLU, tied
 * or untied embeddings) on the bytes of a text file, with AdamW, a linear
 * warmup and cosine decay of the learning rate, gradient clipping and a
 * validation split (or SGD with momentum: --optimizer sgd).
 *
 *   tendo-train [options] CONFIG.json TEXT OUT_DIR
 *
 * CONFIG.json is a Hugging Face Llama config (the form tendo-generate
 * reads); tokens are bytes, so vocab_size is at least 256.  The last
 * --val-fraction of TEXT is held out.  OUT_DIR is made if it is not there.  Step s trains on --batch windows of
 * --seq bytes at offsets drawn from (seed, s) alone, so a resumed run sees
 * the batches an uninterrupted one would.  Progress goes to standard
 * output (one line overwritten in place on a terminal, a line per step
 * otherwise); OUT_DIR gets loss.csv, and at every --save-every steps and
 * at the end a checkpoint: config.json and model.safetensors in the
 * Hugging Face layout (tendo-generate and transformers'
 * LlamaForCausalLM.from_pretrained load it), optimizer.safetensors and
 * trainer_state.json, each written atomically, the step marker last.
 * --resume continues from OUT_DIR's checkpoint with the same losses as a
 * run that never stopped.  --plot FILE.svg draws the loss curves.
 *
 * Under mpirun -np N it trains data-parallel: every rank holds the whole
 * model, takes rows [r B/N, (r+1) B/N) of each global batch of B windows,
 * and the gradients are averaged across the ranks before each step
 * (tendo_optimizer_all_reduce_grads), so the run is the one-process run
 * of the same global batch; rank 0 alone prints and writes OUT_DIR.
 * --check-ranks compares every parameter's bits across the ranks after
 * each step. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tendo.h>

#define PROGRAM "tendo-train"
#include "common.h"

#define MAX_LAYERS 64
#define LAYER_PARAMS 9 /* per layer, in param table order */

/* The model's shapes and hyperparameters, from CONFIG.json. */
typedef struct {
    int64_t hidden, intermediate, heads, kv_heads, head_dim, layers, vocab, max_pos;
    double eps, theta, init_std;
    bool tied;
} llama_config;

/* A parameter: its Hugging Face name, shape, whether it is a norm's weight
 * (initialised to 1), and the leaf (of the training dtype). */
typedef struct {
    char name[96];
    int ndim;
    int64_t shape[2];
    bool norm;
    tendo_tensor *t;
} param;

typedef struct {
    char s[64];
} shape_buf;

static shape_buf shape_str(int nd, const int64_t *shape)
{
    shape_buf b = {"["};

    for (int i = 0; i < nd; i++)
        snprintf(b.s + strlen(b.s), sizeof b.s - strlen(b.s), i ? ", %lld" : "%lld", (long long)shape[i]);
    strcat(b.s, "]");
    return b;
}

#define T tensor_f32
#define SFX f32
#define AS tendo_as_f32
#define DTYPE TENDO_F32
#include "train-model.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#ifdef TENDO_HAVE_BF16
#define T tensor_bf16
#define SFX bf16
#define AS tendo_as_bf16
#define DTYPE TENDO_BF16
#include "train-model.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#endif

/* ---- options --------------------------------------------------------------------- */

typedef struct {
    const char *config, *text, *out, *plot, *device, *dtype, *init, *optimizer;
    int64_t steps, stop_after, batch, seq, warmup, save_every, val_every, val_batches;
    int rank, ranks; /* this process's rank and the ranks (mpirun), not options */
    double lr, min_lr, weight_decay, beta1, beta2, momentum, clip, val_fraction;
    uint64_t seed;
    int threads;
    bool resume, quiet, check_ranks;
} options;

static int usage(void)
{
    fprintf(stderr,
            "usage: tendo-train [options] CONFIG.json TEXT OUT_DIR\n"
            "  --steps N (200)  --stop-after K (steps: save at step K and stop)  --batch B (8)  --seq L (128)  --lr LR (3e-3)  --min-lr LR (lr / 10)\n"
            "  --warmup N (steps / 10)  --weight-decay W (0.1)  --beta1 B (0.9)  --beta2 B (0.95)  --clip C (1.0)\n"
            "  --val-fraction F (0.1)  --val-every N (steps / 10)  --val-batches N (4)  --save-every N (0: at the end)\n"
            "  --optimizer adamw|sgd  --momentum M (0.9, sgd)  --init HF_DIR (start from its model.safetensors)\n"
            "  --seed S (1)  --device cpu|cuda:N  --dtype f32|bf16  --threads N  --plot FILE.svg  --resume  --quiet\n"
            "  --check-ranks (under mpirun: check after each step that every rank holds the same parameters)\n");
    return 2;
}

/* The number after option name, or exit with usage. */
static double number(const char *name, const char *v)
{
    char *end;
    double x = strtod(v, &end);

    if (end == v || *end || !isfinite(x)) {
        fprintf(stderr, "%s: %s: \"%s\" is not a number\n", PROGRAM, name, v);
        exit(2);
    }
    return x;
}

static void parse_options(int argc, char **argv, options *o)
{
    const char *pos[3];
    int npos = 0;

    *o = (options){.device = "cpu", .dtype = "f32", .optimizer = "adamw", .momentum = 0.9, .steps = 200, .batch = 8, .seq = 128, .warmup = -1,
                   .val_every = -1, .val_batches = 4, .lr = 3e-3, .min_lr = -1, .weight_decay = 0.1, .beta1 = 0.9,
                   .beta2 = 0.95, .clip = 1.0, .val_fraction = 0.1, .seed = 1, .ranks = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(flag, field, conv) \
    if (!strcmp(a, flag) && v) { o->field = conv; i++; continue; }
        OPT("--steps", steps, (int64_t)number(a, v))
        OPT("--stop-after", stop_after, (int64_t)number(a, v))
        OPT("--batch", batch, (int64_t)number(a, v))
        OPT("--seq", seq, (int64_t)number(a, v))
        OPT("--lr", lr, number(a, v))
        OPT("--min-lr", min_lr, number(a, v))
        OPT("--warmup", warmup, (int64_t)number(a, v))
        OPT("--weight-decay", weight_decay, number(a, v))
        OPT("--beta1", beta1, number(a, v))
        OPT("--beta2", beta2, number(a, v))
        OPT("--clip", clip, number(a, v))
        OPT("--val-fraction", val_fraction, number(a, v))
        OPT("--val-every", val_every, (int64_t)number(a, v))
        OPT("--val-batches", val_batches, (int64_t)number(a, v))
        OPT("--save-every", save_every, (int64_t)number(a, v))
        OPT("--seed", seed, (uint64_t)number(a, v))
        OPT("--threads", threads, (int)number(a, v))
        OPT("--device", device, v)
        OPT("--dtype", dtype, v)
        OPT("--plot", plot, v)
        OPT("--init", init, v)
        OPT("--optimizer", optimizer, v)
        OPT("--momentum", momentum, number(a, v))
#undef OPT
        if (!strcmp(a, "--resume"))
            o->resume = true;
        else if (!strcmp(a, "--quiet"))
            o->quiet = true;
        else if (!strcmp(a, "--check-ranks"))
            o->check_ranks = true;
        else if (a[0] == '-' || npos == 3)
            exit(usage());
        else
            pos[npos++] = a;
    }
    if (npos != 3)
        exit(usage());
    o->config = pos[0], o->text = pos[1], o->out = pos[2];
    if (o->warmup < 0)
        o->warmup = o->steps / 10;
    if (o->val_every < 0)
        o->val_every = o->steps / 10 > 0 ? o->steps / 10 : 1;
    if (o->val_every == 0) {
        fprintf(stderr, "%s: --val-every 0: want a number of steps (no validation: --val-batches 0)\n", PROGRAM);
        exit(2);
    }
    if (o->min_lr < 0)
        o->min_lr = o->lr / 10;
    if (o->stop_after <= 0 || o->stop_after > o->steps)
        o->stop_after = o->steps;
    if (o->steps < 1 || o->batch < 1 || o->seq < 1 || o->warmup > o->steps || o->val_batches < 0 ||
        o->save_every < 0 || !(o->val_fraction >= 0 && o->val_fraction < 1) || !(o->clip > 0) || o->threads < 0) {
        fprintf(stderr, "%s: an option is out of range (steps, batch and seq >= 1, warmup <= steps, "
                        "0 <= val-fraction < 1, clip > 0)\n", PROGRAM);
        exit(2);
    }
    if (strcmp(o->optimizer, "adamw") && strcmp(o->optimizer, "sgd")) {
        fprintf(stderr, "%s: --optimizer %s: want adamw or sgd\n", PROGRAM, o->optimizer);
        exit(2);
    }
    if (o->resume && o->init) {
        fprintf(stderr, "%s: --resume and --init: a resumed run starts from its own checkpoint\n", PROGRAM);
        exit(2);
    }
    if (strcmp(o->dtype, "f32") && strcmp(o->dtype, "bf16")) {
        fprintf(stderr, "%s: --dtype %s: want f32 or bf16\n", PROGRAM, o->dtype);
        exit(2);
    }
    if (o->plot && (strlen(o->plot) < 4 || strcmp(o->plot + strlen(o->plot) - 4, ".svg"))) {
        fprintf(stderr, "%s: --plot %s: the plot is an SVG file (name it .svg)\n", PROGRAM, o->plot);
        exit(2);
    }
}

/* ---- the config -------------------------------------------------------------------- */

static void config_error(const char *path, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", PROGRAM, path, what);
    exit(1);
}

static int64_t cfg_int(const char *path, json_t *root, const char *key, int64_t def)
{
    json_t *v = json_object_get(root, key);
    char msg[128];

    if (!v || json_is_null(v))
        return def;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        snprintf(msg, sizeof msg, "%s is not a count", key);
        config_error(path, msg);
    }
    return (int64_t)json_integer_value(v);
}

static double cfg_num(const char *path, json_t *root, const char *key, double def)
{
    json_t *v = json_object_get(root, key);
    char msg[128];

    if (!v || json_is_null(v))
        return def;
    if (!json_is_number(v)) {
        snprintf(msg, sizeof msg, "%s is not a number", key);
        config_error(path, msg);
    }
    return json_number_value(v);
}

/* A field that, when present, must have the value want (what this program
 * trains), else a clear error naming it. */
static void cfg_want(const char *path, json_t *root, const char *key, json_t *want)
{
    json_t *v = json_object_get(root, key);
    char msg[256];

    if (v && !json_is_null(v) && !json_equal(v, want)) {
        char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT), *w = json_dumps(want, JSON_ENCODE_ANY);
        snprintf(msg, sizeof msg, "%s is %s: tendo-train trains %s %s", key, got ? got : "?", key, w ? w : "?");
        free(got);
        free(w);
        json_decref(want);
        config_error(path, msg);
    }
    json_decref(want);
}

static void read_config(const char *path, llama_config *c, json_t **root_out)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err), *rs;
    char msg[256];

    if (!root) {
        snprintf(msg, sizeof msg, "not a JSON config (%s, line %d)", err.text, err.line);
        config_error(path, msg);
    }
    cfg_want(path, root, "model_type", json_string("llama"));
    cfg_want(path, root, "hidden_act", json_string("silu"));
    cfg_want(path, root, "attention_bias", json_false());
    cfg_want(path, root, "mlp_bias", json_false());
    rs = json_object_get(root, "rope_scaling");
    if (rs && !json_is_null(rs))
        config_error(path, "rope_scaling is set: tendo-train trains the plain rotation (null)");
    c->hidden = cfg_int(path, root, "hidden_size", 0);
    c->intermediate = cfg_int(path, root, "intermediate_size", 0);
    c->heads = cfg_int(path, root, "num_attention_heads", 0);
    c->kv_heads = cfg_int(path, root, "num_key_value_heads", c->heads);
    c->head_dim = cfg_int(path, root, "head_dim", c->heads ? c->hidden / c->heads : 0);
    c->layers = cfg_int(path, root, "num_hidden_layers", 0);
    c->vocab = cfg_int(path, root, "vocab_size", 256);
    c->max_pos = cfg_int(path, root, "max_position_embeddings", 2048);
    c->eps = cfg_num(path, root, "rms_norm_eps", 1e-6);
    c->theta = cfg_num(path, root, "rope_theta", 10000.0);
    c->init_std = cfg_num(path, root, "initializer_range", 0.02);
    c->tied = json_is_true(json_object_get(root, "tie_word_embeddings"));
    if (c->hidden < 1 || c->intermediate < 1 || c->heads < 1 || c->layers < 1)
        config_error(path, "hidden_size, intermediate_size, num_attention_heads and num_hidden_layers are required");
    if (c->layers > MAX_LAYERS)
        config_error(path, "num_hidden_layers is past 64");
    if (c->kv_heads < 1 || c->heads % c->kv_heads)
        config_error(path, "num_key_value_heads must divide num_attention_heads");
    if (c->head_dim < 2 || c->head_dim % 2)
        config_error(path, "head_dim must be even (the rotation pairs dims)");
    if (c->vocab < 256)
        config_error(path, "vocab_size is below 256: the tokens are bytes");
    if (!(c->eps > 0) || !(c->theta > 0) || !(c->init_std > 0))
        config_error(path, "rms_norm_eps, rope_theta and initializer_range must be positive");
    *root_out = root;
}

/* The parameter table of c: the embedding, LAYER_PARAMS per layer, the
 * final norm and (untied) the output head, under their Hugging Face names. */
static int make_table(const llama_config *c, param *ps)
{
    int n = 0;
    const int64_t d = c->hidden, qd = c->heads * c->head_dim, kvd = c->kv_heads * c->head_dim, f = c->intermediate;

#define P(nd, s0, s1, isnorm, ...) \
    (snprintf(ps[n].name, sizeof ps[n].name, __VA_ARGS__), ps[n].ndim = nd, ps[n].shape[0] = s0, \
     ps[n].shape[1] = s1, ps[n].norm = isnorm, ps[n].t = NULL, n++)
    P(2, c->vocab, d, false, "model.embed_tokens.weight");
    for (int64_t i = 0; i < c->layers; i++) {
        P(1, d, 0, true, "model.layers.%lld.input_layernorm.weight", (long long)i);
        P(2, qd, d, false, "model.layers.%lld.self_attn.q_proj.weight", (long long)i);
        P(2, kvd, d, false, "model.layers.%lld.self_attn.k_proj.weight", (long long)i);
        P(2, kvd, d, false, "model.layers.%lld.self_attn.v_proj.weight", (long long)i);
        P(2, d, qd, false, "model.layers.%lld.self_attn.o_proj.weight", (long long)i);
        P(1, d, 0, true, "model.layers.%lld.post_attention_layernorm.weight", (long long)i);
        P(2, f, d, false, "model.layers.%lld.mlp.gate_proj.weight", (long long)i);
        P(2, f, d, false, "model.layers.%lld.mlp.up_proj.weight", (long long)i);
        P(2, d, f, false, "model.layers.%lld.mlp.down_proj.weight", (long long)i);
    }
    P(1, d, 0, true, "model.norm.weight");
    if (!c->tied)
        P(2, c->vocab, d, false, "lm_head.weight");
#undef P
    return n;
}

/* ---- the data -------------------------------------------------------------------------- */

typedef struct {
    unsigned char *bytes;
    int64_t n, ntrain; /* the training split is bytes[0, ntrain), validation the rest */
} text;

static void read_text(const char *path, const options *o, text *t)
{
    FILE *f = fopen(path, "rb");
    long size;

    if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        fprintf(stderr, "%s: %s: %s\n", PROGRAM, path, strerror(errno));
        exit(1);
    }
    t->bytes = malloc((size_t)size + 1);
    if (!t->bytes || fread(t->bytes, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: %s: cannot read it\n", PROGRAM, path);
        exit(1);
    }
    fclose(f);
    t->n = size;
    t->ntrain = size - (int64_t)((double)size * o->val_fraction);
    if (t->ntrain < o->seq + 1 || (o->val_batches > 0 && o->val_fraction > 0 && t->n - t->ntrain < o->seq + 1)) {
        fprintf(stderr, "%s: %s: %lld bytes is too short: each split needs more than one sequence (--seq %lld)\n",
                PROGRAM, path, (long long)size, (long long)o->seq);
        exit(1);
    }
}

/* splitmix64: the batch offsets come from (seed, step, row) alone. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* The inputs and next-byte targets [batch, seq] of training step `step`
 * (val < 0), or of validation batch val (windows from the start of the
 * validation split, one after another), on dev. */
static void make_batch(const text *t, const options *o, int64_t step, int64_t val, tendo_device dev, tensor_i64 **ids,
                       tensor_i64 **targets)
{
    /* this rank's rows of the global batch */
    int64_t rows = o->batch / o->ranks, b0 = o->rank * rows;
    int64_t *x = malloc((size_t)(rows * o->seq) * sizeof *x), *y = malloc((size_t)(rows * o->seq) * sizeof *y);

    if (!x || !y)
        die("out of memory");
    for (int64_t b = b0; b < b0 + rows; b++) {
        int64_t off;
        if (val < 0) {
            off = (int64_t)(mix((mix(o->seed) ^ mix((uint64_t)step)) + (uint64_t)b) % (uint64_t)(t->ntrain - o->seq));
        } else {
            int64_t span = t->n - t->ntrain - o->seq, k = val * o->batch + b;
            off = t->ntrain + (span > 0 ? (k * o->seq) % span : 0);
        }
        for (int64_t i = 0; i < o->seq; i++) {
            x[(b - b0) * o->seq + i] = t->bytes[off + i];
            y[(b - b0) * o->seq + i] = t->bytes[off + i + 1];
        }
    }
    *ids = CHECK(tensor_i64_from_data(x, TENDO_SHAPE(rows, o->seq), dev));
    *targets = CHECK(tensor_i64_from_data(y, TENDO_SHAPE(rows, o->seq), dev));
    free(x);
    free(y);
}

/* ---- checkpoints ----------------------------------------------------------------------- */

/* errno's text, "out of memory" for ENOMEM (the library's words for it). */
static const char *error_text(int e)
{
    return e == ENOMEM ? "out of memory" : strerror(e);
}

/* Writes JSON root and a newline to path; false with errno set when it
 * cannot (ENOMEM when jansson ran out of memory). */
static bool write_json(const char *path, const json_t *root)
{
    FILE *f = fopen(path, "w");
    bool good;

    if (!f)
        return false;
    errno = 0;
    good = json_dumpf(root, f, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15)) == 0 && fputc('\n', f) != EOF;
    if (!good && !errno) /* not a write (which sets errno): an allocation */
        errno = ENOMEM;
    return (fclose(f) == 0) && good;
}

/* The Hugging Face config of the trained model: the input config with the
 * fields transformers needs to load it filled in; NULL when memory runs out. */
static json_t *hf_config(json_t *in, const llama_config *c, const char *dtype)
{
    json_t *root = json_deep_copy(in);
    const struct {
        const char *key;
        json_t *value;
    } fields[] = {{"architectures", json_pack("[s]", "LlamaForCausalLM")},
                  {"model_type", json_string("llama")},
                  {"hidden_size", json_integer(c->hidden)},
                  {"intermediate_size", json_integer(c->intermediate)},
                  {"num_attention_heads", json_integer(c->heads)},
                  {"num_key_value_heads", json_integer(c->kv_heads)},
                  {"head_dim", json_integer(c->head_dim)},
                  {"num_hidden_layers", json_integer(c->layers)},
                  {"vocab_size", json_integer(c->vocab)},
                  {"max_position_embeddings", json_integer(c->max_pos)},
                  {"rms_norm_eps", json_real(c->eps)},
                  {"rope_theta", json_real(c->theta)},
                  {"tie_word_embeddings", json_boolean(c->tied)},
                  {"hidden_act", json_string("silu")},
                  {"torch_dtype", json_string(strcmp(dtype, "bf16") ? "float32" : "bfloat16")}};
    bool good = root != NULL;

    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) /* each value taken, set or not */
        good = json_object_set_new(root, fields[i].key, fields[i].value) == 0 && good;
    if (!good) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* The options that decide a run's batches and steps: a resumed run must
 * have the same, or its losses would not be those of a run that never
 * stopped.  (trainer_state.json holds them beside the step.) */
static json_t *run_options(const options *o)
{
    return json_pack("{sI sI sI sI sI sf sf sf sf sf sf sf sf ss ss}", "seed", (json_int_t)o->seed, "steps",
                     (json_int_t)o->steps, "batch", (json_int_t)o->batch, "seq", (json_int_t)o->seq, "warmup",
                     (json_int_t)o->warmup, "lr", o->lr, "min_lr", o->min_lr, "weight_decay", o->weight_decay,
                     "beta1", o->beta1, "beta2", o->beta2, "momentum", o->momentum, "clip", o->clip,
                     "val_fraction", o->val_fraction, "dtype", o->dtype, "optimizer", o->optimizer);
}

/* The files of a checkpoint, the step marker last. */
static const char *const ckpt_files[] = {"model.safetensors", "optimizer.safetensors", "config.json",
                                         "trainer_state.json"};
#define NCKPT (sizeof ckpt_files / sizeof ckpt_files[0])

/* Saves the checkpoint of step `step` to o->out: false (a message printed,
 * the previous checkpoint's files intact) when a write fails.  Each file is
 * written beside its name (NAME.tmpPID) and they are renamed into place
 * once all are written, the step marker last. */
static bool save_checkpoint(const options *o, json_t *cfg_json, const llama_config *c, const param *ps, int np,
                            const tendo_optimizer *opt, int64_t step)
{
    char tmp[NCKPT][4200], path[4096];
    tendo_collection *col = NULL;
    json_t *hf = hf_config(cfg_json, c, o->dtype), *state = run_options(o);
    bool good = hf && state && json_object_set_new(state, "step", json_integer((json_int_t)step)) == 0 &&
                (col = tendo_collection_new());

    if (!good)
        fprintf(stderr, "%s: saving step %lld: out of memory\n", PROGRAM, (long long)step);
    for (size_t i = 0; i < NCKPT; i++)
        snprintf(tmp[i], sizeof tmp[i], "%s/%s.tmp%ld", o->out, ckpt_files[i], (long)getpid());
    for (int i = 0; i < np && good; i++)
        good = tendo_collection_add(col, ps[i].name, ps[i].t) == TENDO_OK;
    snprintf(path, sizeof path, "%lld", (long long)step); /* checked against trainer_state.json on resume */
    good = good && tendo_collection_set_metadata(col, "format", "pt") == TENDO_OK &&
           tendo_collection_set_metadata(col, "tendo.step", path) == TENDO_OK &&
           tendo_safetensors_save(tmp[0], col) == TENDO_OK && tendo_optimizer_save(opt, tmp[1]) == TENDO_OK;
    if (!good && col)
        fprintf(stderr, "%s: saving step %lld: %s\n", PROGRAM, (long long)step, tendo_error_message(tendo_last_error()));
    for (size_t i = 2; i < NCKPT && good; i++)
        if (!write_json(tmp[i], i == 2 ? hf : state)) {
            path_in(path, sizeof path, o->out, ckpt_files[i]);
            fprintf(stderr, "%s: saving step %lld: %s: %s\n", PROGRAM, (long long)step, path, error_text(errno));
            good = false;
        }
    for (size_t i = 0; i < NCKPT; i++) { /* all written: into place, in order */
        path_in(path, sizeof path, o->out, ckpt_files[i]);
        if (good && rename(tmp[i], path) != 0) {
            fprintf(stderr, "%s: saving step %lld: %s: %s\n", PROGRAM, (long long)step, path, strerror(errno));
            good = false;
        }
        if (!good)
            remove(tmp[i]);
    }
    json_decref(state);
    json_decref(hf);
    tendo_collection_free(col);
    return good;
}

/* The step of OUT_DIR's checkpoint, which must have been made with the
 * same batch, sequence, seed and dtype; exits with a clear error otherwise. */
static int64_t checkpoint_step(const options *o)
{
    char path[4096];
    json_t *st;
    json_error_t err;
    int64_t step;

    path_in(path, sizeof path, o->out, "trainer_state.json");
    if (!(st = json_load_file(path, 0, &err))) {
        fprintf(stderr, "%s: --resume: %s: %s\n", PROGRAM, path, err.text);
        exit(1);
    }
    step = json_integer_value(json_object_get(st, "step"));
    {
        json_t *want = run_options(o), *v;
        const char *key;

        if (!want) {
            fprintf(stderr, "%s: --resume: out of memory\n", PROGRAM);
            exit(1);
        }

        json_object_foreach(want, key, v) {
            json_t *had = json_object_get(st, key);
            bool same = json_is_real(v) ? json_is_number(had) &&
                                              fabs(json_number_value(had) - json_real_value(v)) <=
                                                  1e-12 * fabs(json_real_value(v))
                                        : json_equal(had, v);
            if (!same) {
                char *a = had ? json_dumps(had, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15)) : NULL;
                char *b = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
                fprintf(stderr, "%s: --resume: %s was made with %s %s, not %s: the run would not continue as it was\n",
                        PROGRAM, path, key, a ? a : "(none)", b ? b : "?");
                exit(1);
            }
        }
        json_decref(want);
    }
    json_decref(st);
    if (step < 1 || step > o->steps) {
        fprintf(stderr, "%s: --resume: %s is at step %lld, not within --steps %lld\n", PROGRAM, path, (long long)step,
                (long long)o->steps);
        exit(1);
    }
    return step;
}

/* ---- the loss curve ----------------------------------------------------------------------- */

/* Draws the training loss (a line) and the validation loss (points) per
 * step as an SVG file; false when it cannot be written. */
static bool plot_svg(const char *path, const double *loss, const double *val, int64_t n)
{
    const double W = 720, H = 400, L = 60, R = 20, TOP = 20, B = 40;
    double lo = INFINITY, hi = -INFINITY;
    char tmp[4200];
    FILE *f;

    for (int64_t i = 0; i < n; i++) {
        double v[2] = {loss[i], val[i]};
        for (int k = 0; k < 2; k++)
            if (isfinite(v[k]))
                lo = fmin(lo, v[k]), hi = fmax(hi, v[k]);
    }
    if (!(hi > lo))
        lo = (isfinite(lo) ? lo : 0) - 1, hi = lo + 2;
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    if (!(f = fopen(tmp, "w")))
        return false;
#define X(i) (L + (W - L - R) * ((n > 1 ? (double)(i) / (double)(n - 1) : 0.5)))
#define Y(v) (TOP + (H - TOP - B) * (hi - (v)) / (hi - lo))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, TOP, L, H - B);
    for (int k = 0; k <= 4; k++) {
        double v = lo + (hi - lo) * k / 4;
        fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.3g</text>\n", L - 6, Y(v) + 4, v);
        fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/>\n", L, Y(v), W - R, Y(v));
    }
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">step (1 to %lld)</text>\n", (L + W - R) / 2, H - 10,
            (long long)n);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"");
    for (int64_t i = 0; i < n; i++)
        if (isfinite(loss[i]))
            fprintf(f, "%.1f,%.1f ", X(i), Y(loss[i]));
    fprintf(f, "\"/>\n");
    for (int64_t i = 0; i < n; i++)
        if (isfinite(val[i]))
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62728\"/>\n", X(i), Y(val[i]));
    fprintf(f, "<text x=\"%g\" y=\"%g\" fill=\"#1f77b4\">training loss</text>\n", W - R - 200, TOP + 12);
    fprintf(f, "<text x=\"%g\" y=\"%g\" fill=\"#d62728\">validation loss</text>\n", W - R - 100, TOP + 12);
    fprintf(f, "</svg>\n");
#undef X
#undef Y
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return false;
    }
    return true;
}

/* ---- training ------------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static tendo_device parse_device(const char *s)
{
    int index = 0;

    if (!strcmp(s, "cpu"))
        return tendo_cpu();
    if (strncmp(s, "cuda", 4) || (s[4] && sscanf(s + 4, ":%d", &index) != 1) || index < 0) {
        fprintf(stderr, "%s: --device %s: want cpu or cuda:N\n", PROGRAM, s);
        exit(2);
    }
    return tendo_cuda(index);
}

/* The losses read back from OUT_DIR/loss.csv for steps 1..upto (a resumed
 * run's curve starts with them); rows past upto are dropped from the file. */
static void reload_csv(const char *path, int64_t upto, double *loss, double *val)
{
    FILE *f = fopen(path, "r");
    char line[512];
    char *kept = NULL;
    size_t nk = 0;

    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        long long s;
        if (!strchr(line, '\n'))
            break; /* a row cut short (the run was stopped while writing it) */
        double l;
        char vb[64] = "";
        bool row = sscanf(line, "%lld,%lf,%63[^,]", &s, &l, vb) >= 2;
        if (row && (s < 1 || s > upto))
            continue;
        if (row) {
            loss[s - 1] = l;
            val[s - 1] = vb[0] ? strtod(vb, NULL) : NAN;
        }
        kept = realloc(kept, nk + strlen(line) + 1);
        if (!kept)
            die("out of memory");
        memcpy(kept + nk, line, strlen(line) + 1);
        nk += strlen(line);
    }
    fclose(f);
    if ((f = fopen(path, "w"))) {
        fwrite(kept ? kept : "", 1, nk, f);
        fclose(f);
    }
    free(kept);
}

/* v averaged across the ranks of c (a loss: every rank's share is the same
 * number of tokens, so the average of their means is the global mean). */
static double mean_across(tendo_comm *c, double v)
{
    double got = v;

    if (tendo_comm_size(c) == 1)
        return v;
#ifdef TENDO_HAVE_F64
    tensor_f64 *t = CHECK(tensor_f64_full(0, NULL, v, tendo_cpu()));
#else
    tensor_f32 *t = CHECK(tensor_f32_full(0, NULL, v, tendo_cpu()));
#endif
    if (tensor_all_reduce(c, t, TENDO_REDUCE_AVG) != TENDO_OK)
        die("the loss across the ranks");
#ifdef TENDO_HAVE_F64
    if (tensor_copy_to(t, &got, 1) != TENDO_OK)
        die("the loss across the ranks");
#else
    float f;
    if (tensor_copy_to(t, &f, 1) != TENDO_OK)
        die("the loss across the ranks");
    got = f;
#endif
    tensor_free(t);
    return got;
}

/* --check-ranks: whether every rank of c holds the same parameter bits
 * (an FNV-1a hash of them all, compared through its largest and smallest
 * value across the ranks). */
static bool same_on_every_rank(tendo_comm *c, const param *ps, int np)
{
    uint64_t h = 1469598103934665603ull;
    int64_t v[2], got[2];

    for (int i = 0; i < np; i++) {
        tendo_tensor *host = CHECK(tendo_tensor_to_device(ps[i].t, tendo_cpu()));
        const unsigned char *b = tendo_tensor_data(host);
        size_t n = (size_t)tendo_tensor_numel(host) * tendo_dtype_size(tendo_tensor_dtype(host));

        for (size_t k = 0; k < n; k++)
            h = (h ^ b[k]) * 1099511628211ull;
        tendo_tensor_free(host);
    }
    v[0] = (int64_t)(h >> 1);
    v[1] = -v[0];
    tensor_i64 *t = CHECK(tensor_i64_from_data(v, TENDO_SHAPE(2), tendo_cpu()));
    if (tensor_all_reduce(c, t, TENDO_REDUCE_MAX) != TENDO_OK || tensor_copy_to(t, got, 2) != TENDO_OK)
        die("comparing the ranks' parameters");
    tensor_free(t);
    return got[0] == -got[1];
}

int main(int argc, char **argv)
{
    options o;
    llama_config cfg;
    json_t *cfg_json;
    text data = {0};
    param ps[3 + MAX_LAYERS * LAYER_PARAMS];
    int np = 0, status = 1;
    bool bf16, tty = isatty(1), lead = true;
    tendo_device dev;
    tendo_comm *comm = NULL;
    tendo_optimizer *opt = NULL;
    tendo_collection *from = NULL;
    tensor_i64 *positions = NULL;
    int64_t start = 0;
    double *losses = NULL, *vals = NULL, t0, tokens_per_s = 0, comm_s = 0;
    char path[4096];
    FILE *csv = NULL;

    signal(SIGXFSZ, SIG_IGN); /* past a file-size limit, a write fails instead of killing us */
    parse_options(argc, argv, &o);
    read_config(o.config, &cfg, &cfg_json);
    if (o.seq > cfg.max_pos) {
        fprintf(stderr, "%s: --seq %lld is past the config's max_position_embeddings %lld\n", PROGRAM,
                (long long)o.seq, (long long)cfg.max_pos);
        json_decref(cfg_json);
        return 2;
    }
    read_text(o.text, &o, &data);
    dev = parse_device(o.device);
    comm = die_comm = CHECK(tendo_comm_world());
    o.rank = tendo_comm_rank(comm);
    o.ranks = tendo_comm_size(comm);
    lead = o.rank == 0;
    if (o.batch % o.ranks != 0) {
        if (lead)
            fprintf(stderr, "%s: --batch %lld does not split over %d ranks: give each rank as many rows\n", PROGRAM,
                    (long long)o.batch, o.ranks);
        goto out;
    }
    if (!lead)
        o.quiet = true, o.plot = NULL;
    if (o.threads)
        tendo_set_num_threads(o.threads);
    bf16 = !strcmp(o.dtype, "bf16");
#ifndef TENDO_HAVE_BF16
    if (bf16) {
        fprintf(stderr, "%s: this build of tendo has no bf16\n", PROGRAM);
        goto out;
    }
#endif
    np = make_table(&cfg, ps);
    if (o.resume || o.init) {
        if (o.resume)
            start = checkpoint_step(&o);
        path_in(path, sizeof path, o.resume ? o.out : o.init, "model.safetensors");
        from = checked(tendo_safetensors_load_copy(path, tendo_cpu()), path);
        if (o.resume && (!tendo_collection_metadata(from, "tendo.step") ||
                         atoll(tendo_collection_metadata(from, "tendo.step")) != start)) {
            fprintf(stderr, "%s: --resume: %s is not of the step trainer_state.json names (%lld): a save was cut "
                            "short\n", PROGRAM, path, (long long)start);
            goto out;
        }
    }
#ifdef TENDO_HAVE_BF16
    if (bf16)
        make_params_bf16(&cfg, ps, np, o.seed * 7919, from, dev);
    else
#endif
        make_params_f32(&cfg, ps, np, o.seed * 7919, from, dev);
    tendo_collection_free(from);
    from = NULL;
    opt = CHECK(strcmp(o.optimizer, "sgd") ? tendo_adamw_new(o.lr, o.beta1, o.beta2, 1e-8, o.weight_decay)
                                           : tendo_sgd_new(o.lr, o.momentum, o.weight_decay, false));
    for (int i = 0; i < np; i++)
        if (tendo_optimizer_add(opt, ps[i].t) != TENDO_OK)
            die("optimizer_add");
    if (o.resume) {
        path_in(path, sizeof path, o.out, "optimizer.safetensors");
        if (tendo_optimizer_load(opt, path) != TENDO_OK)
            die(path);
        if (tendo_optimizer_steps(opt, 0) != start) {
            fprintf(stderr, "%s: --resume: %s is at step %lld, trainer_state.json at %lld\n", PROGRAM, path,
                    (long long)tendo_optimizer_steps(opt, 0), (long long)start);
            goto out;
        }
    }
    losses = malloc((size_t)o.steps * sizeof *losses);
    vals = malloc((size_t)o.steps * sizeof *vals);
    if (!losses || !vals)
        die("out of memory");
    for (int64_t i = 0; i < o.steps; i++)
        losses[i] = vals[i] = NAN;
    path_in(path, sizeof path, o.out, "loss.csv");
    if (o.resume)
        reload_csv(path, start, losses, vals);
    if (lead && mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", PROGRAM, o.out, strerror(errno));
        goto out;
    }
    if (lead && !(csv = fopen(path, o.resume ? "a" : "w"))) {
        fprintf(stderr, "%s: %s: %s\n", PROGRAM, path, strerror(errno));
        goto out;
    }
    if (csv && fseek(csv, 0, SEEK_END) == 0 && ftell(csv) == 0) /* new, or lost: the header first */
        fprintf(csv, "step,loss,val_loss,lr,grad_norm,tokens_per_s,seconds\n");
    positions = CHECK(tensor_i64_arange(0, (double)o.seq, 1, dev));
    if (!o.quiet) {
        int64_t total = 0;
        for (int i = 0; i < np; i++)
            total += tendo_tensor_numel(ps[i].t);
        printf("%s: %lld parameters in %d tensors, %lld layers, d %lld, %s on %s; %lld training bytes, %lld held out\n",
               PROGRAM, (long long)total, np, (long long)cfg.layers, (long long)cfg.hidden, o.dtype, o.device,
               (long long)data.ntrain, (long long)(data.n - data.ntrain));
        if (o.ranks > 1)
            printf("%s: data-parallel over %d ranks (%s), %lld rows of each batch of %lld per rank\n", PROGRAM,
                   o.ranks, tendo_comm_backend(comm), (long long)(o.batch / o.ranks), (long long)o.batch);
    }
    t0 = now();
    for (int64_t s = start + 1; s <= o.stop_after; s++) {
        tensor_i64 *ids, *targets;
        double t = now(), lr = tendo_lr_cosine(s - 1, o.warmup, o.steps, o.lr, o.min_lr), norm, val = NAN;

        make_batch(&data, &o, s, -1, dev, &ids, &targets);
#ifdef TENDO_HAVE_BF16
        if (bf16)
            losses[s - 1] = forward_backward_bf16(&cfg, ps, ids, targets, positions);
        else
#endif
            losses[s - 1] = forward_backward_f32(&cfg, ps, ids, targets, positions);
        tensor_free(ids);
        tensor_free(targets);
        if (o.ranks > 1) { /* every rank's gradient, averaged: the global batch's */
            double c0 = now();
            if (tendo_optimizer_all_reduce_grads(opt, comm) != TENDO_OK)
                die("optimizer_all_reduce_grads");
            comm_s += now() - c0;
            losses[s - 1] = mean_across(comm, losses[s - 1]);
        }
        if ((norm = tendo_optimizer_clip_grad_norm(opt, o.clip)) < 0)
            die("clip_grad_norm");
        tendo_optimizer_set_lr(opt, lr);
        if (tendo_optimizer_step(opt) != TENDO_OK)
            die("optimizer_step");
        tendo_optimizer_zero_grad(opt);
        if (o.val_batches > 0 && o.val_fraction > 0 && (s % o.val_every == 0 || s == o.steps)) {
            val = 0;
            for (int64_t v = 0; v < o.val_batches; v++) {
                make_batch(&data, &o, s, v, dev, &ids, &targets);
#ifdef TENDO_HAVE_BF16
                if (bf16)
                    val += evaluate_bf16(&cfg, ps, ids, targets, positions);
                else
#endif
                    val += evaluate_f32(&cfg, ps, ids, targets, positions);
                tensor_free(ids);
                tensor_free(targets);
            }
            vals[s - 1] = val = mean_across(comm, val / (double)o.val_batches);
        }
        if (o.check_ranks && o.ranks > 1 && !same_on_every_rank(comm, ps, np)) {
            if (lead)
                fprintf(stderr, "%s: step %lld: the ranks' parameters differ\n", PROGRAM, (long long)s);
            goto out;
        }
        t = now() - t;
        tokens_per_s = (double)(o.batch * o.seq) / t;
        if (csv) {
            fprintf(csv, "%lld,%.9g,", (long long)s, losses[s - 1]);
            if (isfinite(val))
                fprintf(csv, "%.9g", val);
            fprintf(csv, ",%.6g,%.6g,%.1f,%.3f\n", lr, norm, tokens_per_s, now() - t0);
            fflush(csv);
        }
        if (!o.quiet) {
            double left = (now() - t0) / (double)(s - start) * (double)(o.stop_after - s);
            printf("%sstep %lld/%lld  loss %.4f%s", tty ? "\r\033[K" : "", (long long)s, (long long)o.steps,
                   losses[s - 1], isfinite(val) ? "  val " : "");
            if (isfinite(val))
                printf("%.4f", val);
            printf("  lr %.2e  norm %.3f  %.0f tokens/s  %d:%02d left%s", lr, norm, tokens_per_s, (int)left / 60,
                   (int)left % 60, tty && s < o.stop_after ? "" : "\n");
            fflush(stdout);
        }
        if (lead && ((o.save_every > 0 && s % o.save_every == 0) || s == o.stop_after))
            if (!save_checkpoint(&o, cfg_json, &cfg, ps, np, opt, s))
                goto out;
    }
    if (csv)
        fclose(csv);
    csv = NULL;
    if (o.plot && !plot_svg(o.plot, losses, vals, o.stop_after)) {
        fprintf(stderr, "%s: %s: %s\n", PROGRAM, o.plot, strerror(errno));
        goto out;
    }
    if (!o.quiet)
        printf("%s: trained %lld steps in %.1f s (peak memory in tendo's pool: %.1f MiB); checkpoint in %s%s%s\n",
               PROGRAM, (long long)(o.stop_after - start), now() - t0,
               (double)tendo_pool_get_stats(dev).peak_bytes_in_use / 1048576.0, o.out,
               o.plot ? ", loss curve in " : "", o.plot ? o.plot : "");
    if (!o.quiet && o.ranks > 1)
        printf("%s: averaging the gradients across the ranks took %.2f s of the %.1f s (%.1f %%)\n", PROGRAM, comm_s,
               now() - t0, 100 * comm_s / (now() - t0));
    if (getenv("TENDO_TRACE"))
        tendo_trace_summary(); /* where the time went, per op */
    status = 0;
out:
    if (csv)
        fclose(csv);
    tendo_collection_free(from);
    tendo_optimizer_free(opt);
    for (int i = 0; i < np; i++)
        tendo_tensor_free(ps[i].t);
    tensor_free(positions);
    json_decref(cfg_json);
    free(data.bytes);
    free(losses);
    free(vals);
    if (status != 0 && tendo_comm_size(comm) > 1)
        tendo_comm_abort(comm, status); /* the other ranks may be waiting for this one */
    tendo_comm_free(comm);
    return status;
}
