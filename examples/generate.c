/* examples/generate.c - tendo-generate: text generation with a Llama-style
 * decoder (Llama 2 and 3.x, Mistral, Qwen2/2.5, SmolLM) from a Hugging Face
 * safetensors checkpoint (RMSNorm, RoPE, grouped-query attention over a KV
 * cache written by copy_into, SwiGLU), every step a tendo op in f32.
 *
 *   tendo-generate [options] MODEL_DIR PROMPT.npy OUT.npy
 *   tendo-generate [options] MODEL_DIR --prompt TEXT [--chat]
 *
 * MODEL_DIR holds model.safetensors and config.json (and, for --prompt,
 * tokenizer.json).  PROMPT.npy holds the prompt's token ids (i64 [len] or
 * [1, len]); OUT.npy gets the N (--tokens, default 32) tokens chosen after
 * it, i64 [N].  --prompt TEXT instead tokenises TEXT with the model's
 * tokenizer.json (with the BOS its post-processor adds) and streams the
 * text of the tokens to stdout as they come, stopping at an end-of-sequence
 * id (config.json's and generation_config.json's eos_token_id) or after N;
 * --chat first puts TEXT into the model's chat template, when that is one of
 * the common fixed forms (Llama 3 headers, ChatML, [INST]).  --logits
 * LOGITS.npy gets the prompt's logits, f32 [len, vocab].
 *
 * The next token is the greedy choice unless one of --temperature T (0:
 * greedy), --top-k K, --top-p P, --min-p P or --seed S asks for sampling
 * (then T defaults to 1).  The logits of the last position are processed
 * in double on the host in transformers' order: --repeat-penalty R (greedy
 * or not), temperature, top-k, top-p, min-p; then a draw from a PRNG seeded
 * with S (splitmix64; the same S, the same tokens on every device).
 *
 * RoPE follows config.json's rope_parameters (transformers 5) or
 * rope_scaling (transformers 4): default (tensor_rope), or linear, dynamic
 * NTK, llama3 or YaRN, whose cos and sin are tabled on the host from the
 * inverse frequencies transformers computes (modeling_rope_utils.py, in its
 * float32 and double steps) and applied with mul, cat and add.  Attention
 * and MLP biases (Qwen2), tied embeddings, a head_dim of its own and
 * Mistral's and Qwen2's sliding window (an additive mask) are read too.
 * The prompt and the tokens must fit the model's context: its
 * max_position_embeddings, or the longer one dynamic and YaRN scaling give.
 *
 * Each token after the prompt writes its products (q, k, v, o, the MLP's
 * and the logits) into buffers of one token's size allocated at load
 * (tensor_matmul_out), and the residual stream, biases and SwiGLU are
 * updated in place (add_out, silu_out, mul_out).
 *
 * Under mpirun -np N it runs tensor-parallel, as Megatron-LM splits a
 * layer: rank r holds heads [r H/N, (r+1) H/N) of the attention (their rows
 * of q_proj, k_proj and v_proj, the same columns of o_proj, its share of
 * the KV cache) and its N-th of the MLP (rows of gate_proj and up_proj,
 * columns of down_proj); o_proj's and down_proj's partial products are
 * summed across the ranks, one all_reduce each per layer.  Each rank maps
 * the checkpoint and takes its slices of it (only those pages are read):
 * views of the rows, dense copies of the columns; the embeddings, norms
 * and lm_head are whole on every rank, so every rank computes the same
 * logits and tokens (with one seed, agreed on), and rank 0 writes the files
 * and the text.  N must divide the attention and key-value heads and the
 * MLP's width.
 *
 * At the end (stderr, rank 0): the prompt's time and tokens/s, and the time
 * per token generated after the first (which comes with the prompt), with
 * the all_reduces' share of it under mpirun. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tendo.h>

#define PROGRAM "tendo-generate"
#include "common.h"

#define MAX_LAYERS 128
#define MAX_EOS 16
#define PI 3.14159265358979323846

typedef tensor_f32 T;



/* ---- options: numbers parsed whole ---------------------------------------------- */

/* Prints how to call the program; returns its status for a bad call, 2. */
static int usage(void)
{
    fprintf(stderr,
            "usage: tendo-generate [options] MODEL_DIR PROMPT.npy OUT.npy\n"
            "       tendo-generate [options] MODEL_DIR --prompt TEXT [--chat]\n"
            "  --tokens N (32)  --device cpu|cuda:N  --logits LOGITS.npy\n"
            "  --temperature T (0: greedy)  --top-k K (0: off)  --top-p P (1: off)  --min-p P (0: off)\n"
            "  --repeat-penalty R (1: off)  --seed S\n");
    return 2;
}

#include "options.h"

/* ---- the model's configuration -------------------------------------------------- */

/* The largest size field a config may give (the largest any model has, with
 * room: products of two of them cannot overflow). */
#define MAX_SIZE ((int64_t)1 << 24)

/* A size field config.json must give, in [1, MAX_SIZE]. */
static int64_t cfg_size(const json_t *root, const char *path, const char *key)
{
    int64_t v = cfg_int(root, path, key, 0, 1, MAX_SIZE);

    if (!v)
        fail("%s: %s is missing", path, key);
    return v;
}

/* A number field of a RoPE configuration that its type requires. */
static double cfg_need(json_t *rp, const char *key, const char *path, const char *type)
{
    json_t *v = json_object_get(rp, key);
    if (!json_is_number(v))
        fail("%s: rope_type %s wants a number %s", path, type, key);
    return json_number_value(v);
}

typedef enum { ROPE_DEFAULT, ROPE_LINEAR, ROPE_DYNAMIC, ROPE_LLAMA3, ROPE_YARN } rope_type;

typedef struct {
    rope_type type;
    int64_t dim;     /* head_dim: every dim rotates */
    int64_t max_pos; /* max_position_embeddings: where dynamic starts to grow */
    double theta, factor;
    double low_freq_factor, high_freq_factor; /* llama3 */
    int64_t original_max;                     /* llama3, yarn: the pretraining context */
    double ramp_lo, ramp_hi;                  /* yarn: the correction range, in pairs */
    double attention_factor;                  /* yarn's mscale; 1 otherwise */
    T *cos, *sin; /* [max_len, dim] on the device (not for default); sin with rotate_half's sign */
} rope;

/* YaRN's find_correction_dim: the pair that turns rotations times over
 * max_pos positions. */
static double yarn_dim(double rotations, int64_t dim, double base, int64_t max_pos)
{
    return ((double)dim * log((double)max_pos / (rotations * 2 * PI))) / (2 * log(base));
}

/* YaRN's get_mscale. */
static double yarn_mscale(double scale, double mscale)
{
    return scale <= 1 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

/* r from config.json's rope_parameters (transformers 5) or rope_scaling
 * and rope_theta (transformers 4), with transformers' defaults; a type or
 * a partial rotation it does not do exits with status 1. */
static void rope_config(rope *r, json_t *root, const char *path, int64_t head_dim, int64_t max_pos)
{
    json_t *rp = json_object_get(root, "rope_parameters"), *type;
    const char *name = "default";

    if (!json_is_object(rp))
        rp = json_object_get(root, "rope_scaling");
    type = json_object_get(rp, "rope_type");
    if (!json_is_string(type))
        type = json_object_get(rp, "type");
    if (json_is_string(type))
        name = json_string_value(type);
    *r = (rope){.dim = head_dim, .max_pos = max_pos, .attention_factor = 1.0,
                .theta = cfg_num(rp, path, "rope_theta", cfg_num(root, path, "rope_theta", 10000.0)),
                .original_max = cfg_int(root, path, "original_max_position_embeddings",
                                        cfg_int(rp, path, "original_max_position_embeddings", max_pos, 1, MAX_SIZE),
                                        1, MAX_SIZE)};
    if (cfg_num(rp, path, "partial_rotary_factor", cfg_num(root, path, "partial_rotary_factor", 1.0)) != 1.0)
        fail("%s: a partial_rotary_factor is not supported", path);
    if (head_dim < 4 || head_dim % 2)
        fail("%s: head_dim %lld: RoPE wants an even head_dim of 4 or more", path, (long long)head_dim);
    if (!strcmp(name, "default")) {
        r->type = ROPE_DEFAULT;
    } else if (!strcmp(name, "linear") || !strcmp(name, "dynamic")) {
        r->type = !strcmp(name, "linear") ? ROPE_LINEAR : ROPE_DYNAMIC;
        r->factor = cfg_need(rp, "factor", path, name);
    } else if (!strcmp(name, "llama3")) {
        r->type = ROPE_LLAMA3;
        r->factor = cfg_need(rp, "factor", path, name);
        r->low_freq_factor = cfg_need(rp, "low_freq_factor", path, name);
        r->high_freq_factor = cfg_need(rp, "high_freq_factor", path, name);
    } else if (!strcmp(name, "yarn")) {
        double mscale = cfg_num(rp, path, "mscale", 0), mscale_all = cfg_num(rp, path, "mscale_all_dim", 0);
        double fast = cfg_num(rp, path, "beta_fast", 0), slow = cfg_num(rp, path, "beta_slow", 0);
        r->type = ROPE_YARN;
        r->factor = cfg_num(rp, path, "factor", (double)max_pos / (double)r->original_max);
        r->attention_factor = cfg_num(rp, path, "attention_factor", mscale != 0 && mscale_all != 0
                                                                  ? yarn_mscale(r->factor, mscale) /
                                                                        yarn_mscale(r->factor, mscale_all)
                                                                  : yarn_mscale(r->factor, 1));
        /* beta_fast and beta_slow: `or 32`, `or 1`; the range floored and ceiled unless truncate is false */
        r->ramp_lo = yarn_dim(fast != 0 ? fast : 32, head_dim, r->theta, r->original_max);
        r->ramp_hi = yarn_dim(slow != 0 ? slow : 1, head_dim, r->theta, r->original_max);
        if (!json_is_false(json_object_get(rp, "truncate")))
            r->ramp_lo = floor(r->ramp_lo), r->ramp_hi = ceil(r->ramp_hi);
        r->ramp_lo = fmax(r->ramp_lo, 0), r->ramp_hi = fmin(r->ramp_hi, (double)(head_dim - 1));
        if (r->ramp_lo == r->ramp_hi)
            r->ramp_hi += 0.001;
    } else {
        fail("%s: rope_type %s is not supported (default, linear, dynamic, llama3 and yarn are)", path, name);
    }
    if (r->type != ROPE_DEFAULT && !(r->factor > 0))
        fail("%s: rope_type %s wants a factor > 0", path, name);
    if (r->original_max <= 0)
        fail("%s: original_max_position_embeddings must be positive", path);
}

/* The dim / 2 inverse frequencies of r for a sequence of seq_len positions
 * (dynamic grows them past max_pos), as modeling_rope_utils.py computes
 * them: in float32 where it works on tensors, in double where on Python
 * numbers (the -ffp-contract=off build keeps each step rounded); a number
 * divided by a tensor is torch's reciprocal times the number. */
static void inv_freqs(const rope *r, int64_t seq_len, float *inv)
{
    double dim = (double)r->dim;
    float base = (float)r->theta;

    if (r->type == ROPE_DYNAMIC && seq_len > r->max_pos) /* the update, on a 0-d float32 tensor */
        base = (float)r->theta * powf((float)r->factor * (float)seq_len / (float)r->max_pos - (float)(r->factor - 1),
                                      (float)(dim / (dim - 2)));
    else if (r->type == ROPE_DYNAMIC) /* at load, on Python floats */
        base = (float)(r->theta * pow(r->factor * (double)r->max_pos / (double)r->max_pos - (r->factor - 1),
                                      dim / (dim - 2)));
    for (int64_t i = 0; i < r->dim / 2; i++) {
        float p = powf(base, (float)(2 * i) / (float)r->dim), f = 1.0f / p;
        switch (r->type) {
        case ROPE_DEFAULT:
        case ROPE_DYNAMIC:
            break;
        case ROPE_LINEAR:
            f = f / (float)r->factor;
            break;
        case ROPE_LLAMA3: { /* long wavelengths divided by factor, short ones kept, a smooth blend between */
            float low = (float)((double)r->original_max / r->low_freq_factor);
            float high = (float)((double)r->original_max / r->high_freq_factor);
            float wavelen = 1.0f / f * (float)(2 * PI), scaled = wavelen > low ? f / (float)r->factor : f;
            if (!(wavelen < high) && !(wavelen > low)) {
                float s = (1.0f / wavelen * (float)r->original_max - (float)r->low_freq_factor) /
                          (float)(r->high_freq_factor - r->low_freq_factor);
                scaled = (1.0f - s) * scaled / (float)r->factor + s * scaled;
            }
            f = scaled;
            break;
        }
        case ROPE_YARN: { /* interpolated below the correction range, extrapolated above, a ramp between */
            float interp = 1.0f / ((float)r->factor * p);
            float ramp = ((float)i - (float)r->ramp_lo) / (float)(r->ramp_hi - r->ramp_lo);
            float extrap = 1.0f - (ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp);
            f = interp * (1.0f - extrap) + f * extrap;
            break;
        }
        }
        inv[i] = f;
    }
}

/* *cos and *sin, new [n, dim] tensors on dev, of positions [pos, pos + n)
 * under inv, in the steps of the rotary embedding's forward: the angle
 * pos * inv in float32 for both halves, its cos and sin times the attention
 * factor in float32.  sin carries rotate_half's sign (negative on the
 * first half), so that x rotated is x * cos + swap_halves(x) * sin. */
static void rope_rows(const rope *r, const float *inv, int64_t pos, int64_t n, tendo_device dev, T **cos_t, T **sin_t)
{
    int64_t d = r->dim, half = d / 2;
    float *c = malloc((size_t)(n * d) * sizeof *c), *s = malloc((size_t)(n * d) * sizeof *s);
    float scale = (float)r->attention_factor;

    if (!c || !s)
        fail("out of memory for the RoPE tables");
    for (int64_t p = 0; p < n; p++)
        for (int64_t i = 0; i < half; i++) {
            float angle = (float)(pos + p) * inv[i];
            float cv = (float)cos((double)angle) * scale, sv = (float)sin((double)angle) * scale;
            c[p * d + i] = c[p * d + half + i] = cv;
            s[p * d + i] = -sv, s[p * d + half + i] = sv;
        }
    *cos_t = CHECK(tensor_f32_from_data(c, TENDO_SHAPE(n, d), dev));
    *sin_t = CHECK(tensor_f32_from_data(s, TENDO_SHAPE(n, d), dev));
    free(c);
    free(s);
}

/* Tables r's cos and sin for positions [0, max_len) on dev (nothing for
 * the default type, which tensor_rope rotates). */
static void rope_tables(rope *r, int64_t max_len, tendo_device dev)
{
    float *inv = malloc((size_t)(r->dim / 2) * sizeof *inv);

    if (!inv)
        fail("out of memory for the RoPE tables");
    if (r->type != ROPE_DEFAULT) {
        inv_freqs(r, 0, inv);
        rope_rows(r, inv, 0, max_len, dev, &r->cos, &r->sin);
    }
    free(inv);
}

/* cos and sin for a forward pass over positions [pos, pos + n): rows of
 * the tables, or, for dynamic past max_pos, rows of frequencies grown to
 * pos + n (as transformers' dynamic_rope_update does on each forward; the
 * keys already cached keep the rotation they had). */
static void rope_at(const rope *r, int64_t pos, int64_t n, tendo_device dev, T **cos_t, T **sin_t)
{
    if (r->type == ROPE_DYNAMIC && pos + n > r->max_pos) {
        float *inv = malloc((size_t)(r->dim / 2) * sizeof *inv);
        if (!inv)
            fail("out of memory for the RoPE tables");
        inv_freqs(r, pos + n, inv);
        rope_rows(r, inv, pos, n, dev, cos_t, sin_t);
        free(inv);
    } else {
        *cos_t = CHECK(tensor_narrow(r->cos, 0, pos, n));
        *sin_t = CHECK(tensor_narrow(r->sin, 0, pos, n));
    }
}

/* x [1, heads, L, d] rotated by rows cos and sin [L, d] of rope_at:
 * x * cos + swap_halves(x) * sin, which is Hugging Face's
 * q * cos + rotate_half(q) * sin to the bit. */
static T *rotate(const T *x, const T *cos_t, const T *sin_t)
{
    int64_t half = tensor_size(x, 3) / 2;
    T *lo = CHECK(tensor_narrow(x, 3, 0, half)), *hi = CHECK(tensor_narrow(x, 3, half, half));
    const T *halves[2] = {hi, lo};
    T *swapped = CHECK(tensor_cat(halves, 2, 3));
    T *a = CHECK(tensor_mul(x, cos_t)), *b = CHECK(tensor_mul(swapped, sin_t)), *y = CHECK(tensor_add(a, b));

    tensor_free(lo);
    tensor_free(hi);
    tensor_free(swapped);
    tensor_free(a);
    tensor_free(b);
    return y;
}

/* ---- the model ------------------------------------------------------------------ */

typedef struct {
    T *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *gate, *up, *down;
    T *bq, *bk, *bv, *bo, *bgate, *bup, *bdown; /* biases, NULL where the checkpoint has none */
    T *kcache, *vcache;                         /* [1, kv_heads, max_len, head_dim] */
    bool sliding;                               /* attends to the last window positions only */
} layer;

/* The results of a forward's products: each layer's in turn (q, k, v,
 * o_proj's, gate_proj's, up_proj's, down_proj's) and lm_head's logits. */
typedef struct {
    T *q, *k, *v, *o, *gate, *up, *down, *logits;
} products;

typedef struct {
    /* heads, kv_heads and intermediate are this rank's share */
    int64_t hidden, heads, kv_heads, head_dim, intermediate, layers, vocab, max_pos, max_len;
    int64_t window; /* the sliding window's width (0: none) */
    double eps;
    bool tied;
    rope rope;
    int64_t eos[MAX_EOS];
    int neos;
    T *embed, *norm, *lm_head;
    layer l[MAX_LAYERS];
    products one; /* for one token (a decode step), [1, n] each, from load to unload */
    tendo_comm *comm; /* the ranks the layers are split over */
    int rank, ranks;
    double comm_s; /* time in the all_reduces */
} model;

/* Adds v's ids (an integer or a list of integers) to m's end-of-sequence ids. */
static void add_eos(model *m, json_t *v)
{
    size_t i;
    json_t *e;

    if (json_is_integer(v) && m->neos < MAX_EOS)
        m->eos[m->neos++] = (int64_t)json_integer_value(v);
    if (json_is_array(v))
        json_array_foreach(v, i, e) add_eos(m, e);
}

/* Whether id is one of m's end-of-sequence ids. */
static bool is_eos(const model *m, int64_t id)
{
    for (int i = 0; i < m->neos; i++)
        if (m->eos[i] == id)
            return true;
    return false;
}

/* m's shapes, RoPE, sliding window and end-of-sequence ids from dir's
 * config.json (and generation_config.json); exits with status 1 on a
 * config it cannot run. */
static void configure(model *m, const char *dir)
{
    char path[4096];
    json_t *root, *types, *gen;
    bool sliding = false;

    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!(root = json_load_file(path, 0, NULL)))
        fail("cannot read %s", path);
    if (!json_is_object(root))
        fail("%s: not a JSON object", path);
    m->hidden = cfg_size(root, path, "hidden_size");
    m->heads = cfg_size(root, path, "num_attention_heads");
    m->kv_heads = cfg_int(root, path, "num_key_value_heads", m->heads, 1, MAX_SIZE);
    m->head_dim = cfg_int(root, path, "head_dim", m->hidden / m->heads, 1, MAX_SIZE);
    m->layers = cfg_size(root, path, "num_hidden_layers");
    m->vocab = cfg_size(root, path, "vocab_size");
    m->max_pos = cfg_int(root, path, "max_position_embeddings", 2048, 1, MAX_SIZE); /* LlamaConfig's default */
    m->eps = cfg_num(root, path, "rms_norm_eps", 1e-6);
    m->tied = cfg_bool(root, path, "tie_word_embeddings", false);
    m->intermediate = cfg_size(root, path, "intermediate_size");
    if (m->layers > MAX_LAYERS)
        fail("%s: %lld layers (at most %d)", path, (long long)m->layers, MAX_LAYERS);
    if (m->heads % m->kv_heads)
        fail("%s: num_attention_heads %lld is not a multiple of num_key_value_heads %lld", path,
             (long long)m->heads, (long long)m->kv_heads);
    if (!(m->eps > 0 && m->eps <= FLT_MAX)) /* added to a mean of squares in f32 */
        fail("%s: rms_norm_eps %g must be positive and finite in f32", path, m->eps);
    rope_config(&m->rope, root, path, m->head_dim, m->max_pos);
    /* Mistral's window covers every layer; Qwen2's the layers that layer_types names (or, in
     * transformers 4, those from max_window_layers on, with use_sliding_window) */
    m->window = !cfg_bool(root, path, "use_sliding_window", true) ? 0 : cfg_int(root, path, "sliding_window", 0, 0, MAX_SIZE);
    types = json_object_get(root, "layer_types");
    for (int64_t i = 0; i < m->layers; i++) {
        const char *type = json_string_value(json_array_get(types, (size_t)i));
        if (json_is_array(types))
            m->l[i].sliding = type && !strcmp(type, "sliding_attention");
        else if (json_is_true(json_object_get(root, "use_sliding_window")))
            m->l[i].sliding = i >= cfg_int(root, path, "max_window_layers", 0, 0, MAX_SIZE);
        else
            m->l[i].sliding = true;
        sliding = sliding || m->l[i].sliding;
    }
    if (!sliding)
        m->window = 0;
    add_eos(m, json_object_get(root, "eos_token_id"));
    json_decref(root);
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    if ((gen = json_load_file(path, 0, NULL))) {
        add_eos(m, json_object_get(gen, "eos_token_id"));
        json_decref(gen);
    }
    if (m->heads % m->ranks || m->kv_heads % m->ranks || m->intermediate % m->ranks)
        fail("%s/config.json: %d ranks do not divide the %lld heads, %lld key-value heads and %lld-wide MLP evenly",
             dir, m->ranks, (long long)m->heads, (long long)m->kv_heads, (long long)m->intermediate);
    m->heads /= m->ranks, m->kv_heads /= m->ranks, m->intermediate /= m->ranks;
}

/* The positions m can attend over: max_position_embeddings, or more where
 * the scaling is there to stretch it (dynamic: factor times as many; YaRN:
 * factor times the pretraining context). */
static int64_t context(const model *m)
{
    const rope *r = &m->rope;
    double ctx = (double)m->max_pos;

    if (r->type == ROPE_DYNAMIC)
        ctx = fmax(ctx, floor(r->factor * (double)m->max_pos));
    if (r->type == ROPE_YARN)
        ctx = fmax(ctx, floor(r->factor * (double)r->original_max));
    return ctx < 9e15 ? (int64_t)ctx : (int64_t)9e15;
}

/* Where context(m) comes from, for messages. */
static const char *context_source(const model *m)
{
    return context(m) > m->max_pos ? "max_position_embeddings, as the RoPE scaling stretches it"
                                   : "max_position_embeddings";
}

/* e's elements [start, start + len) along dim (a view); NULL with the error set. */
static tendo_tensor *narrow_erased(tendo_tensor *e, int dim, int64_t start, int64_t len)
{
    switch (tendo_tensor_dtype(e)) {
#define NARROW(dt, DT, ct)                                                                                  \
    case TENDO_##DT:                                                                                        \
        return tensor_##dt##_erase(tensor_narrow(tendo_as_##dt(e), dim, start, len));
        TENDO_FOREACH_DTYPE(NARROW)
#undef NARROW
    }
    return NULL;
}

/* This rank's part of the tensor called name as an f32 handle of its own
 * on dev: its N-th along dim (-1: all of it), a view of the file's mapping
 * for an f32 tensor on the CPU whose part is rows, a copy of that part
 * otherwise (columns are copied, so that products read them densely). */
static T *weight(const model *m, const tendo_collection *c, const char *name, int dim, tendo_device dev)
{
    tendo_tensor *e = checked(tendo_collection_get(c, name), name), *part, *t;

    if (dim >= 0) {
        int64_t n = tendo_tensor_shape(e)[dim] / m->ranks;
        part = checked(narrow_erased(e, dim, m->rank * n, n), name);
        if (!tendo_tensor_is_contiguous(part)) {
            tendo_tensor *dense = checked(tendo_tensor_to_device(part, tendo_cpu()), name);
            tendo_tensor_free(part);
            part = dense;
        }
    } else {
        part = checked(tendo_tensor_alias(e), name);
    }
    t = tendo_tensor_dtype(part) == TENDO_F32 ? tendo_tensor_alias(part) : tendo_tensor_to_dtype(part, TENDO_F32);
    tendo_tensor_free(part);
    if (t && dev.type != TENDO_CPU) {
        tendo_tensor *d = tendo_tensor_to_device(t, dev);
        tendo_tensor_free(t);
        t = d;
    }
    return checked(tendo_as_f32(checked(t, name)), name);
}

/* Exits unless the tensor called name in c (when there is one) is [rows,
 * cols], or [rows] when cols < 0: what config.json says it is. */
static void expect(const tendo_collection *c, const char *path, const char *name, int64_t rows, int64_t cols)
{
    const tendo_tensor *e = NULL;
    const int64_t *sh;

    for (int64_t i = 0; i < tendo_collection_count(c) && !e; i++)
        if (!strcmp(tendo_collection_name(c, i), name))
            e = tendo_collection_at(c, i);
    if (!e)
        return; /* a missing weight is weight()'s to report */
    sh = tendo_tensor_shape(e);
    if (tendo_tensor_ndim(e) != (cols < 0 ? 1 : 2) || sh[0] != rows || (cols >= 0 && sh[1] != cols)) {
        if (cols < 0)
            fail("%s: %s is not [%lld], as config.json says", path, name, (long long)rows);
        fail("%s: %s is not [%lld, %lld], as config.json says", path, name, (long long)rows, (long long)cols);
    }
}

/* weight(), or NULL when the checkpoint has no tensor called name (a bias). */
static T *weight_if_any(const model *m, const tendo_collection *c, const char *name, int dim, tendo_device dev)
{
    for (int64_t i = 0; i < tendo_collection_count(c); i++)
        if (!strcmp(tendo_collection_name(c, i), name))
            return weight(m, c, name, dim, dev);
    return NULL;
}

/* m's weights from dir's model.safetensors, its KV cache for max_len
 * positions and its RoPE tables, all on dev. */
static void load(model *m, const char *dir, int64_t max_len, tendo_device dev)
{
    char path[4096], name[160];
    tendo_collection *c;

    m->max_len = max_len;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    c = checked(tendo_safetensors_load(path, tendo_cpu()), path); /* a mapping: each rank reads its slices */
    {
        const int64_t H = m->hidden, q = m->heads * m->ranks * m->head_dim, kv = m->kv_heads * m->ranks * m->head_dim,
                      I = m->intermediate * m->ranks;
        tendo_tensor *emb = checked(tendo_collection_get(c, "model.embed_tokens.weight"), path);
        if (tendo_tensor_ndim(emb) != 2 || tendo_tensor_shape(emb)[1] != H)
            fail("%s: model.embed_tokens.weight is not [vocab, %lld] (hidden_size)", path, (long long)H);
        expect(c, path, "model.norm.weight", H, -1);
        expect(c, path, "lm_head.weight", m->vocab, H);
        for (int64_t i = 0; i < m->layers; i++) {
            static const struct { const char *suffix; int rows, cols; } shapes[] = {
                {"input_layernorm.weight", 'H', 0},   {"post_attention_layernorm.weight", 'H', 0},
                {"self_attn.q_proj.weight", 'q', 'H'}, {"self_attn.k_proj.weight", 'k', 'H'},
                {"self_attn.v_proj.weight", 'k', 'H'}, {"self_attn.o_proj.weight", 'H', 'q'},
                {"mlp.gate_proj.weight", 'I', 'H'},    {"mlp.up_proj.weight", 'I', 'H'},
                {"mlp.down_proj.weight", 'H', 'I'},    {"self_attn.q_proj.bias", 'q', 0},
                {"self_attn.k_proj.bias", 'k', 0},     {"self_attn.v_proj.bias", 'k', 0},
                {"self_attn.o_proj.bias", 'H', 0},     {"mlp.gate_proj.bias", 'I', 0},
                {"mlp.up_proj.bias", 'I', 0},          {"mlp.down_proj.bias", 'H', 0}};
            for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
#define SIZE(code) ((code) == 'H' ? H : (code) == 'q' ? q : (code) == 'k' ? kv : (code) == 'I' ? I : -1)
                snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, shapes[j].suffix);
                expect(c, path, name, SIZE(shapes[j].rows), SIZE(shapes[j].cols));
#undef SIZE
            }
        }
    }
    m->embed = weight(m, c, "model.embed_tokens.weight", -1, dev);
    m->norm = weight(m, c, "model.norm.weight", -1, dev);
    m->lm_head = weight(m, c, m->tied ? "model.embed_tokens.weight" : "lm_head.weight", -1, dev);
    if (tensor_size(m->embed, 0) < m->vocab || tensor_size(m->lm_head, 0) != m->vocab)
        fail("%s: the embeddings and lm_head do not have config.json's %lld rows", path, (long long)m->vocab);
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        /* column-parallel (rows of [out, in], and their biases) in, row-parallel (columns) out; the
         * biases of o_proj and down_proj whole, added once after the sum across the ranks */
#define W(field, suffix, dim) (snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, suffix), \
                               l->field = weight(m, c, name, m->ranks > 1 ? dim : -1, dev))
#define B(field, suffix, dim) (snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, suffix), \
                               l->field = weight_if_any(m, c, name, m->ranks > 1 ? dim : -1, dev))
        W(attn_norm, "input_layernorm.weight", -1);
        W(wq, "self_attn.q_proj.weight", 0);
        W(wk, "self_attn.k_proj.weight", 0);
        W(wv, "self_attn.v_proj.weight", 0);
        W(wo, "self_attn.o_proj.weight", 1);
        W(mlp_norm, "post_attention_layernorm.weight", -1);
        W(gate, "mlp.gate_proj.weight", 0);
        W(up, "mlp.up_proj.weight", 0);
        W(down, "mlp.down_proj.weight", 1);
        B(bq, "self_attn.q_proj.bias", 0);
        B(bk, "self_attn.k_proj.bias", 0);
        B(bv, "self_attn.v_proj.bias", 0);
        B(bo, "self_attn.o_proj.bias", -1);
        B(bgate, "mlp.gate_proj.bias", 0);
        B(bup, "mlp.up_proj.bias", 0);
        B(bdown, "mlp.down_proj.bias", -1);
#undef W
#undef B
        l->kcache = CHECK(tensor_f32_zeros(TENDO_SHAPE(1, m->kv_heads, max_len, m->head_dim), dev));
        l->vcache = CHECK(tensor_f32_zeros(TENDO_SHAPE(1, m->kv_heads, max_len, m->head_dim), dev));
    }
    tendo_collection_free(c); /* the weights hold their own references */
    rope_tables(&m->rope, max_len, dev);
    m->one.q = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->heads * m->head_dim), dev));
    m->one.k = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->kv_heads * m->head_dim), dev));
    m->one.v = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->kv_heads * m->head_dim), dev));
    m->one.o = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->hidden), dev));
    m->one.gate = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->intermediate), dev));
    m->one.up = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->intermediate), dev));
    m->one.down = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->hidden), dev));
    m->one.logits = CHECK(tensor_f32_empty(TENDO_SHAPE(1, m->vocab), dev));
}

/* Frees m's tensors. */
static void unload(model *m)
{
    tensor_free(m->embed);
    tensor_free(m->norm);
    tensor_free(m->lm_head);
    tensor_free(m->rope.cos);
    tensor_free(m->rope.sin);
    {
        T *ts[] = {m->one.q, m->one.k, m->one.v, m->one.o, m->one.gate, m->one.up, m->one.down, m->one.logits};
        for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
            tensor_free(ts[j]);
    }
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        T *ws[] = {l->attn_norm, l->wq, l->wk, l->wv, l->wo, l->mlp_norm, l->gate, l->up, l->down, l->bq, l->bk,
                   l->bv, l->bo, l->bgate, l->bup, l->bdown, l->kcache, l->vcache};
        for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++)
            tensor_free(ws[j]);
    }
}

/* y, a row-parallel layer's partial product on each rank, summed across
 * the ranks in place. */
static void sum_across(model *m, T *y)
{
    struct timespec a, b;

    if (m->ranks == 1)
        return;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (tensor_all_reduce(m->comm, y, TENDO_REDUCE_SUM) != TENDO_OK)
        die("all_reduce");
    clock_gettime(CLOCK_MONOTONIC, &b);
    m->comm_s += (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

/* y += b, in place, when there is a bias b; returns y. */
static T *plus_bias(T *y, const T *b)
{
    if (b && tensor_add_out(y, y, b) != TENDO_OK)
        die("adding a bias");
    return y;
}

/* x @ w^T (w is [out, in]), plus b when there is one: into out, which it
 * returns, when out is not NULL (one of m->one's, for one token), else a
 * new tensor. */
static T *linear(const T *x, const T *w, const T *b, T *out)
{
    T *wt = CHECK(tensor_transpose(w, 0, 1));

    if (out && tensor_matmul_out(out, x, wt) != TENDO_OK)
        die("matmul into a step buffer");
    if (!out)
        out = CHECK(tensor_matmul(x, wt));
    tensor_free(wt);
    return plus_bias(out, b);
}

/* [L, heads * d] -> [1, heads, L, d] (a view). */
static T *heads_of(const T *x, int64_t L, int64_t heads, int64_t d)
{
    T *r = CHECK(tensor_reshape(x, TENDO_SHAPE(1, L, heads, d)));
    T *p = CHECK(tensor_transpose(r, 1, 2));
    tensor_free(r);
    return p;
}

/* The additive mask [n, pos + n] of a sliding window of w positions for
 * queries at [pos, pos + n): -inf where key j <= query - w (transformers'
 * sliding_window_overlay; causality is attention's); NULL while no query
 * reaches past the window. */
static T *window_mask(int64_t w, int64_t pos, int64_t n, tendo_device dev)
{
    int64_t keys = pos + n;
    float *buf;
    T *mask;

    if (w <= 0 || keys <= w)
        return NULL;
    if (!(buf = malloc((size_t)(n * keys) * sizeof *buf)))
        fail("out of memory for the sliding window's mask");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < keys; j++)
            buf[i * keys + j] = j <= pos + i - w ? -INFINITY : 0.0f;
    mask = CHECK(tensor_f32_from_data(buf, TENDO_SHAPE(n, keys), dev));
    free(buf);
    return mask;
}

/* The logits [L, vocab] of tokens ids[0..L) at positions pos, pos+1, ...;
 * each layer's keys and values go into its cache at [pos, pos+L).  For one
 * token (a decode step) every product is written into m->one's buffers
 * (tensor_matmul_out) and the logits are m->one.logits, m's, which the
 * next forward overwrites; for more, new tensors, the logits the caller's
 * to free. */
static T *forward(model *m, const tensor_i64 *ids, int64_t pos)
{
    int64_t L = tensor_numel(ids), qd = m->heads * m->head_dim;
    tendo_device dev = tensor_device(ids);
    products out = L == 1 ? m->one : (products){0}; /* NULL: a new tensor */
    tensor_i64 *positions = NULL;
    T *x = CHECK(tensor_index_select(m->embed, 0, ids)); /* [L, hidden] */
    T *cos_t = NULL, *sin_t = NULL, *mask = window_mask(m->window, pos, L, dev);

    if (m->rope.type == ROPE_DEFAULT)
        positions = CHECK(tensor_i64_arange(pos, pos + L, 1, dev));
    else
        rope_at(&m->rope, pos, L, dev, &cos_t, &sin_t);
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        T *h = CHECK(tensor_rms_norm(x, l->attn_norm, m->eps));
        T *q = linear(h, l->wq, l->bq, out.q), *k = linear(h, l->wk, l->bk, out.k);
        T *v = linear(h, l->wv, l->bv, out.v);
        T *qh = heads_of(q, L, m->heads, m->head_dim), *kh = heads_of(k, L, m->kv_heads, m->head_dim);
        T *vh = heads_of(v, L, m->kv_heads, m->head_dim);
        T *qr = positions ? CHECK(tensor_rope(qh, positions, m->head_dim, m->rope.theta, false))
                          : rotate(qh, cos_t, sin_t);
        T *kr = positions ? CHECK(tensor_rope(kh, positions, m->head_dim, m->rope.theta, false))
                          : rotate(kh, cos_t, sin_t);
        T *kslot = CHECK(tensor_narrow(l->kcache, 2, pos, L)), *vslot = CHECK(tensor_narrow(l->vcache, 2, pos, L));
        T *kall, *vall, *ctx, *ctx_t, *ctx_c, *ctx_m, *o, *h2, *g, *u, *mlp;

        if (tensor_copy_into(kslot, kr) != TENDO_OK || tensor_copy_into(vslot, vh) != TENDO_OK)
            die("the KV cache");
        kall = CHECK(tensor_narrow(l->kcache, 2, 0, pos + L));
        vall = CHECK(tensor_narrow(l->vcache, 2, 0, pos + L));
        ctx = CHECK(tensor_attention(qr, kall, vall, l->sliding ? mask : NULL, true, 0)); /* [1, heads, L, d] */
        ctx_t = CHECK(tensor_transpose(ctx, 1, 2));
        ctx_c = CHECK(tensor_contiguous(ctx_t));
        ctx_m = CHECK(tensor_reshape(ctx_c, TENDO_SHAPE(L, qd)));
        o = linear(ctx_m, l->wo, NULL, out.o);
        sum_across(m, o);
        plus_bias(o, l->bo); /* whole on every rank: once, after the sum */
        if (tensor_add_out(x, x, o) != TENDO_OK) /* the residual stream, x (ours), in place */
            die("the residual");
        h2 = CHECK(tensor_rms_norm(x, l->mlp_norm, m->eps));
        g = linear(h2, l->gate, l->bgate, out.gate);
        u = linear(h2, l->up, l->bup, out.up);
        if (tensor_silu_out(g, g) != TENDO_OK || tensor_mul_out(g, g, u) != TENDO_OK) /* silu(g) * u, in g */
            die("the MLP's SwiGLU");
        mlp = linear(g, l->down, NULL, out.down);
        sum_across(m, mlp);
        plus_bias(mlp, l->bdown);
        if (tensor_add_out(x, x, mlp) != TENDO_OK)
            die("the residual");
        {
            T *ts[] = {h, qh, kh, vh, qr, kr, kslot, vslot, kall, vall, ctx, ctx_t, ctx_c, ctx_m, h2};
            T *made[] = {q, k, v, o, g, u, mlp};
            for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
                tensor_free(ts[j]);
            if (L > 1) /* one token's are m->one's */
                for (size_t j = 0; j < sizeof made / sizeof made[0]; j++)
                    tensor_free(made[j]);
        }
    }
    {
        T *h = CHECK(tensor_rms_norm(x, m->norm, m->eps));
        T *logits = linear(h, m->lm_head, NULL, out.logits);
        T *ts[] = {h, x, cos_t, sin_t, mask};
        for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
            tensor_free(ts[j]);
        tensor_free(positions);
        return logits;
    }
}

/* ---- choosing the next token ---------------------------------------------------- */

typedef struct {
    double temperature; /* 0: greedy */
    double top_p, min_p, penalty;
    int64_t top_k;
    uint64_t state; /* splitmix64's */
    int64_t vocab;
    float *row;     /* [vocab] the last logits, copied to the host */
    double *score;  /* [vocab] */
    bool *seen;     /* [vocab] ids of the prompt and of the tokens so far */
    struct ranked {
        double score;
        int64_t id;
    } *order; /* [vocab] */
} sampler;

/* The next number of splitmix64's stream. */
static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Higher score first, lower id first among equals (qsort's order). */
static int by_score(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The id of the largest score: the first of equals, the first NaN if
 * any (torch.argmax's and tensor_argmax's choice). */
static int64_t argmax(const double *x, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return i;
        if (x[i] > x[best])
            best = i;
    }
    return best;
}

/* The token after logits' last row, under s's processing in
 * transformers' order (RepetitionPenaltyLogitsProcessor, then the
 * Temperature, TopK, TopP and MinP warpers, with min_tokens_to_keep 1),
 * in double: the greedy choice at temperature 0, else a draw. */
static int64_t choose(sampler *s, const T *logits)
{
    int64_t V = s->vocab, alive = V, tok = -1;
    double *x = s->score, top, sum = 0, u;
    T *last = CHECK(tensor_narrow(logits, 0, tensor_size(logits, 0) - 1, 1));

    if (tensor_copy_to(last, s->row, V) != TENDO_OK)
        die("the last logits");
    tensor_free(last);
    for (int64_t v = 0; v < V; v++)
        x[v] = s->row[v];
    if (s->penalty != 1.0) /* the prompt's and the generated ids: less likely whatever their sign */
        for (int64_t v = 0; v < V; v++)
            if (s->seen[v])
                x[v] = x[v] < 0 ? x[v] * s->penalty : x[v] / s->penalty;
    if (s->temperature == 0)
        return argmax(x, V);
    for (int64_t v = 0; v < V; v++)
        x[v] /= s->temperature;
    if ((s->top_k > 0 && s->top_k < V) || s->top_p < 1.0) {
        for (int64_t v = 0; v < V; v++)
            s->order[v] = (struct ranked){x[v], v};
        qsort(s->order, (size_t)V, sizeof *s->order, by_score);
    }
    if (s->top_k > 0 && s->top_k < V) { /* below the k-th score (its equals stay) */
        double kth = s->order[s->top_k - 1].score;
        for (int64_t v = 0; v < V; v++)
            if (x[v] < kth)
                x[v] = -INFINITY;
        while (alive > 0 && s->order[alive - 1].score < kth)
            alive--;
    }
    top = x[argmax(x, V)];
    if (s->top_p < 1.0) { /* the least likely, while their mass stays <= 1 - top_p; never the most likely */
        double cum = 0;
        for (int64_t i = 0; i < alive; i++)
            sum += exp(s->order[i].score - top);
        for (int64_t i = alive - 1; i > 0; i--) {
            cum += exp(s->order[i].score - top) / sum;
            if (cum > 1.0 - s->top_p)
                break;
            x[s->order[i].id] = -INFINITY;
        }
    }
    if (s->min_p > 0) /* probability below min_p times the largest (that one stays) */
        for (int64_t v = 0; v < V; v++)
            if (exp(x[v] - top) < s->min_p && x[v] != top)
                x[v] = -INFINITY;
    sum = 0;
    for (int64_t v = 0; v < V; v++)
        sum += exp(x[v] - top);
    u = (double)(next_u64(&s->state) >> 11) * 0x1p-53 * sum; /* uniform in [0, sum) */
    for (int64_t v = 0; v < V && u >= 0; v++)
        if (x[v] > -INFINITY) {
            tok = v;
            u -= exp(x[v] - top);
        }
    return tok;
}

/* ---- text: the tokenizer, the chat template, streaming -------------------------- */

/* The contents of path as a string the caller frees, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1))) {
        if (fread(s, 1, (size_t)n, f) != (size_t)n)
            free(s), s = NULL;
        else
            s[n] = 0;
    }
    if (f)
        fclose(f);
    return s;
}

/* A special token's text in tokenizer_config.json (a string, or an added
 * token's {"content": ...}); "" when absent. */
static const char *special_text(json_t *cfg, const char *key)
{
    json_t *v = json_object_get(cfg, key);
    if (json_is_object(v))
        v = json_object_get(v, "content");
    return json_is_string(v) ? json_string_value(v) : "";
}

/* The body of the Jinja string literal whose text starts at start (after
 * its opening quote tpl[start - 1]), unescaped, as a string the caller
 * frees; NULL when start does not follow a quote. */
static char *literal_at(const char *tpl, const char *start)
{
    char quote = start > tpl ? start[-1] : 0, *out, *o;

    if (quote != '\'' && quote != '"')
        return NULL;
    out = o = malloc(strlen(start) + 1);
    if (!out)
        fail("out of memory");
    for (const char *p = start; *p && *p != quote; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

/* The string literal of tpl that starts with marker, unescaped (the
 * caller frees it); NULL when tpl has none. */
static char *literal_starting(const char *tpl, const char *marker)
{
    const char *p = tpl;
    char *lit;

    while ((p = strstr(p, marker))) {
        if ((lit = literal_at(tpl, p)))
            return lit;
        p++;
    }
    return NULL;
}

/* The string literal of tpl right after the first marker followed by
 * one (`set date_string = "26 Jul 2024"`), unescaped (the caller frees
 * it); NULL when tpl has none. */
static char *literal_after(const char *tpl, const char *marker)
{
    const char *p = tpl;

    while ((p = strstr(p, marker))) {
        p += strlen(marker);
        if (*p == '\'' || *p == '"')
            return literal_at(tpl, p + 1);
    }
    return NULL;
}

/* The default system prompt of a ChatML template (Qwen2.5's "You are
 * Qwen, ...", SmolLM2's): the text of a literal
 * '<|im_start|>system\n...<|im_end|>', which the caller frees; NULL when it
 * writes none. */
static char *chatml_system(const char *tpl)
{
    const char *p = tpl;
    char *lit, *end;

    while ((p = strstr(p, "<|im_start|>system"))) {
        if ((lit = literal_at(tpl, p))) {
            if (!strncmp(lit, "<|im_start|>system\n", 19) && (end = strstr(lit + 19, "<|im_end|>")) && end > lit + 19) {
                *end = 0;
                memmove(lit, lit + 19, strlen(lit + 19) + 1);
                return lit;
            }
            free(lit);
        }
        p++;
    }
    return NULL;
}

/* text without leading and trailing whitespace (Jinja's trim, Python's strip), into f. */
static void put_trimmed(FILE *f, const char *text)
{
    size_t n = strlen(text);
    while (n && strchr(" \t\n\r\v\f", *text))
        text++, n--;
    while (n && strchr(" \t\n\r\v\f", text[n - 1]))
        n--;
    fwrite(text, 1, n, f);
}

/* prompt as the one user message of dir's chat template, with the
 * assistant's turn opened (add_generation_prompt), as a string the caller
 * frees.  The template (chat_template.jinja, or tokenizer_config.json's
 * chat_template) is recognised by its markers, not run: Llama 3's headers
 * (with 3.1's system block of dates where it writes one), ChatML (with the
 * default system prompt it writes) and [INST] (Llama 2, Mistral).  Any
 * other exits with status 2. */
static char *chat_prompt(const char *dir, const char *prompt)
{
    char path[4096], *tpl, *out = NULL;
    size_t len;
    json_t *cfg, *t;
    FILE *f;

    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    cfg = json_load_file(path, 0, NULL);
    snprintf(path, sizeof path, "%s/chat_template.jinja", dir);
    if (!(tpl = slurp(path))) {
        t = json_object_get(cfg, "chat_template");
        if (json_is_array(t)) { /* named templates: the default one */
            size_t i;
            json_t *e, *named = NULL;
            json_array_foreach(t, i, e) {
                const char *name = json_string_value(json_object_get(e, "name"));
                if (name && !strcmp(name, "default"))
                    named = json_object_get(e, "template");
            }
            t = named;
        }
        if (json_is_string(t) && !(tpl = strdup(json_string_value(t))))
            fail("out of memory");
    }
    if (!tpl) {
        fprintf(stderr, "%s: --chat: %s has no chat template (chat_template.jinja or tokenizer_config.json)\n",
                PROGRAM, dir);
        exit(2);
    }
    if (!(f = open_memstream(&out, &len)))
        fail("out of memory");
    if (strstr(tpl, "<|start_header_id|>") && strstr(tpl, "<|end_header_id|>") && strstr(tpl, "<|eot_id|>")) {
        char *knowledge = literal_starting(tpl, "Cutting Knowledge Date:");
        if (strstr(tpl, "bos_token"))
            fputs(special_text(cfg, "bos_token"), f);
        if (knowledge) { /* 3.1 and later: a system block of dates, today's where it calls strftime_now */
            char today[64] = "", *fixed = literal_after(tpl, "date_string = ");
            time_t now = time(NULL);
            if (strstr(tpl, "strftime_now"))
                strftime(today, sizeof today, "%d %b %Y", localtime(&now));
            fprintf(f, "<|start_header_id|>system<|end_header_id|>\n\n%sToday Date: %s\n\n<|eot_id|>", knowledge,
                    *today ? today : fixed ? fixed : "26 Jul 2024");
            free(fixed);
            free(knowledge);
        }
        fputs("<|start_header_id|>user<|end_header_id|>\n\n", f);
        put_trimmed(f, prompt);
        fputs("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", f);
    } else if (strstr(tpl, "<|im_start|>") && strstr(tpl, "<|im_end|>")) {
        char *sys = chatml_system(tpl);
        if (sys)
            fprintf(f, "<|im_start|>system\n%s<|im_end|>\n", sys);
        fprintf(f, "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n", prompt);
        free(sys);
    } else if (strstr(tpl, "[INST]") && strstr(tpl, "[/INST]")) {
        if (strstr(tpl, "bos_token"))
            fputs(special_text(cfg, "bos_token"), f);
        fputs("[INST] ", f);
        if (strstr(tpl, "strip()") || strstr(tpl, "trim"))
            put_trimmed(f, prompt);
        else
            fputs(prompt, f);
        /* ' [/INST]' (Llama 2, Mistral v0.1) or '[/INST]' (v0.3) */
        fputs(strstr(tpl, "' [/INST]'") || strstr(tpl, "\" [/INST]\"") ? " [/INST]" : "[/INST]", f);
    } else {
        fprintf(stderr, "%s: --chat: cannot apply %s's chat template: it is none of the forms tendo-generate knows "
                        "(Llama 3 headers, ChatML, [INST])\n", PROGRAM, dir);
        exit(2);
    }
    fclose(f);
    free(tpl);
    json_decref(cfg);
    return out;
}

/* How many of text's n bytes can be shown now: all but a trailing
 * incomplete UTF-8 sequence or U+FFFD (a token that ends inside a
 * character), which a later token may complete. */
static size_t complete_prefix(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t start = n, cont = 0;

    while (start > 0 && cont < 3 && (s[start - 1] & 0xC0) == 0x80) /* back over continuation bytes */
        start--, cont++;
    if (start > 0 && s[start - 1] >= 0xC0) { /* to a lead byte: does the character end here? */
        size_t need = s[start - 1] >= 0xF0 ? 4 : s[start - 1] >= 0xE0 ? 3 : 2;
        if (cont + 1 < need)
            n = start - 1;
    }
    while (n >= 3 && !memcmp(s + n - 3, "\xEF\xBF\xBD", 3))
        n -= 3;
    return n;
}

/* Prints the new part of the text of ids[0..n) (*shown bytes of it are
 * out already): what is complete, or all of it when last. */
static void stream(const tendo_tokenizer *tok, const int64_t *ids, size_t n, size_t *shown, bool last)
{
    char *text;
    size_t len, ready;

    if (n == 0)
        return;
    if (tendo_tokenizer_decode(tok, ids, n, true, &text, &len) != TENDO_OK)
        die("decoding the tokens");
    ready = last ? len : complete_prefix(text, len);
    if (ready > *shown) {
        fwrite(text + *shown, 1, ready - *shown, stdout);
        fflush(stdout);
        *shown = ready;
    }
    free(text);
}

/* ---- the prompt ----------------------------------------------------------------- */

/* The ids of path's .npy, i64 [len] or [1, len], as a malloc'd array of *n;
 * anything else exits with status 1. */
static int64_t *npy_prompt(const char *path, int64_t *n)
{
    tendo_tensor *e = checked(tendo_npy_load(path), path);
    const int64_t *shape = tendo_tensor_shape(e);
    int nd = tendo_tensor_ndim(e);
    int64_t *ids;

    if (tendo_tensor_dtype(e) != TENDO_I64)
        fail("%s: token ids of dtype %s; want i64", path, tendo_dtype_name(tendo_tensor_dtype(e)));
    if (!(nd == 1 || (nd == 2 && shape[0] == 1))) {
        char dims[128] = "";
        for (int i = 0; i < nd; i++)
            snprintf(dims + strlen(dims), sizeof dims - strlen(dims), i ? ", %lld" : "%lld", (long long)shape[i]);
        fail("%s: a prompt of shape [%s]; want [len] or [1, len]", path, dims);
    }
    *n = tendo_tensor_numel(e);
    if (*n < 1)
        fail("%s: an empty prompt", path);
    if (!(ids = malloc((size_t)*n * sizeof *ids)) || tensor_copy_to(tendo_as_i64(e), ids, *n) != TENDO_OK)
        die(path);
    tendo_tensor_free(e);
    return ids;
}

/* The ids of text (BOS added as the tokenizer's post-processor adds it;
 * not for a chat, whose template writes its own) as a malloc'd array of *n. */
static int64_t *text_prompt(const tendo_tokenizer *tok, const char *text, bool add_special, int64_t *n)
{
    int64_t *ids = NULL;
    size_t len = 0;

    if (tendo_tokenizer_encode(tok, text, strlen(text), add_special, &ids, &len) != TENDO_OK)
        die("tokenizing the prompt");
    if (len == 0)
        fail("the prompt has no tokens");
    *n = (int64_t)len;
    return ids;
}

/* Seconds between two readings of a clock. */
static double seconds(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

int main(int argc, char **argv)
{
    const char *paths[3], *logits_path = NULL, *text = NULL;
    int npaths = 0;
    bool chat = false, sampling = false, seeded = false;
    int64_t ntok = 32, L, *ids, *shown_ids = NULL, ngen = 0, nfwd = 0, seed = 0;
    double temperature = -1;
    tendo_device dev = tendo_cpu();
    tendo_tokenizer *tok = NULL;
    sampler s = {.top_p = 1.0, .penalty = 1.0};
    tensor_i64 *prompt;
    model m = {0};
    T *logits;
    struct timespec tp, t0, t1;
    double prompt_comm_s;
    size_t shown = 0, nshow = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tokens"))
            ntok = whole(a, v, 1, INT32_MAX), i++;
        else if (!strcmp(a, "--device"))
            dev = parse_device(v), i++;
        else if (!strcmp(a, "--logits") && v)
            logits_path = v, i++;
        else if (!strcmp(a, "--prompt") && v)
            text = v, i++;
        else if (!strcmp(a, "--chat"))
            chat = true;
        else if (!strcmp(a, "--temperature"))
            temperature = real(a, v, 0, INFINITY, false, "a number >= 0"), i++;
        else if (!strcmp(a, "--top-k"))
            s.top_k = whole(a, v, 0, INT64_MAX), sampling = true, i++;
        else if (!strcmp(a, "--top-p"))
            s.top_p = real(a, v, 0, 1, false, "a number from 0 to 1"), sampling = true, i++;
        else if (!strcmp(a, "--min-p"))
            s.min_p = real(a, v, 0, 1, false, "a number from 0 to 1"), sampling = true, i++;
        else if (!strcmp(a, "--repeat-penalty"))
            s.penalty = real(a, v, 0, INFINITY, true, "a number > 0"), i++;
        else if (!strcmp(a, "--seed"))
            seed = whole(a, v, 0, INT64_MAX), seeded = sampling = true, i++;
        else if (a[0] == '-' || npaths == 3)
            return usage();
        else
            paths[npaths++] = a;
    }
    if (npaths != (text ? 1 : 3) || (chat && !text)) {
        fprintf(stderr, "%s: want MODEL_DIR PROMPT.npy OUT.npy, or MODEL_DIR --prompt TEXT [--chat]\n", PROGRAM);
        return usage();
    }
    s.temperature = temperature >= 0 ? temperature : sampling ? 1.0 : 0.0;
    m.comm = die_comm = CHECK(tendo_comm_world());
    m.rank = tendo_comm_rank(m.comm);
    m.ranks = tendo_comm_size(m.comm);
    configure(&m, paths[0]);
    if (text) {
        char *rendered = chat ? chat_prompt(paths[0], text) : NULL;
        if (!(tok = tendo_tokenizer_load(paths[0])))
            die(paths[0]);
        ids = text_prompt(tok, rendered ? rendered : text, !chat, &L);
        free(rendered);
    } else {
        ids = npy_prompt(paths[1], &L);
    }
    for (int64_t i = 0; i < L; i++)
        if (ids[i] < 0 || ids[i] >= m.vocab)
            fail("%s: token id %lld at position %lld is outside the vocabulary [0, %lld)",
                 text ? "the prompt" : paths[1], (long long)ids[i], (long long)i, (long long)m.vocab);
    if (L > context(&m))
        fail("a prompt of %lld tokens is longer than the model's context of %lld positions (%s)", (long long)L,
             (long long)context(&m), context_source(&m));
    if (ntok > context(&m) - L) {
        if (m.rank == 0)
            fprintf(stderr, "%s: --tokens %lld: the prompt's %lld tokens and %lld more exceed the model's context of "
                            "%lld positions (%s); at most %lld more fit\n", PROGRAM, (long long)ntok, (long long)L,
                    (long long)ntok, (long long)context(&m), context_source(&m), (long long)(context(&m) - L));
        free(ids);
        tendo_tokenizer_free(tok);
        tendo_comm_free(m.comm);
        return 2;
    }
    if (!(ids = realloc(ids, (size_t)(L + ntok) * sizeof *ids)) ||
        (text && !(shown_ids = malloc((size_t)ntok * sizeof *shown_ids))))
        fail("out of memory");
    s.vocab = m.vocab;
    s.row = malloc((size_t)m.vocab * sizeof *s.row);
    s.score = malloc((size_t)m.vocab * sizeof *s.score);
    s.order = malloc((size_t)m.vocab * sizeof *s.order);
    s.seen = calloc((size_t)m.vocab, sizeof *s.seen);
    if (!s.row || !s.score || !s.order || !s.seen)
        fail("out of memory");
    for (int64_t i = 0; i < L; i++)
        s.seen[ids[i]] = true;
    if (s.temperature > 0 && !seeded) { /* a seed of the clock's, the same on every rank */
        struct timespec now;
        tensor_i64 *agreed;
        clock_gettime(CLOCK_REALTIME, &now);
        seed = (int64_t)(((uint64_t)now.tv_sec * 1000000007u ^ (uint64_t)now.tv_nsec) & INT64_MAX);
        agreed = CHECK(tensor_i64_from_data(&seed, TENDO_SHAPE(1), tendo_cpu()));
        if ((m.ranks > 1 && tensor_broadcast(m.comm, agreed, 0) != TENDO_OK) ||
            tensor_copy_to(agreed, &seed, 1) != TENDO_OK)
            die("the seed");
        tensor_free(agreed);
    }
    s.state = (uint64_t)seed;
    load(&m, paths[0], L + ntok, dev);
    prompt = CHECK(tensor_i64_from_data(ids, TENDO_SHAPE(L), dev));
    clock_gettime(CLOCK_MONOTONIC, &tp);
    logits = forward(&m, prompt, 0);
    if (m.rank == 0 && logits_path && tendo_npy_save(logits_path, tensor_f32_erase(logits)) != TENDO_OK)
        die(logits_path);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    prompt_comm_s = m.comm_s;
    while (logits) {
        int64_t next = choose(&s, logits);
        if (logits != m.one.logits) /* the prompt's; one token's are m's */
            tensor_free(logits);
        logits = NULL;
        if (text && is_eos(&m, next)) /* the text ends (npy's tokens are all N, as before) */
            break;
        ids[L + ngen++] = next;
        s.seen[next] = true;
        if (text && m.rank == 0) { /* the ids the tokenizer has (a padded vocabulary has more) */
            if (tendo_tokenizer_token(tok, next))
                shown_ids[nshow++] = next;
            stream(tok, shown_ids, nshow, &shown, false);
        }
        if (ngen < ntok) {
            tensor_i64 *one = CHECK(tensor_i64_from_data(&next, TENDO_SHAPE(1), dev));
            logits = forward(&m, one, L + ngen - 1);
            nfwd++;
            tensor_free(one);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (text && m.rank == 0)
        stream(tok, shown_ids, nshow, &shown, true);
    if (m.rank == 0) {
        double ps = seconds(tp, t0), gs = seconds(t0, t1);
        fprintf(stderr, "%s: prompt of %lld tokens in %.1f ms (%.1f tokens/s); %lld tokens at %.2f ms each "
                        "(%.1f tokens/s)", PROGRAM, (long long)L, 1e3 * ps, ps > 0 ? (double)L / ps : 0.0,
                (long long)ngen, nfwd ? 1e3 * gs / (double)nfwd : 0.0, nfwd && gs > 0 ? (double)nfwd / gs : 0.0);
        if (s.temperature > 0)
            fprintf(stderr, "; sampled with seed %lld", (long long)seed);
        if (m.ranks > 1)
            fprintf(stderr, "; tensor-parallel over %d ranks, %.1f %% of each token in the all_reduces",
                    m.ranks, gs > 0 ? 100 * (m.comm_s - prompt_comm_s) / gs : 0.0);
        fputc('\n', stderr);
    }
    if (!text) {
        tensor_i64 *out = CHECK(tensor_i64_from_data(ids + L, TENDO_SHAPE(ngen), tendo_cpu()));
        if (m.rank == 0 && tendo_npy_save(paths[2], tensor_i64_erase(out)) != TENDO_OK)
            die(paths[2]);
        tensor_free(out);
    }
    free(ids);
    free(shown_ids);
    free(s.row);
    free(s.score);
    free(s.order);
    free(s.seen);
    tendo_tokenizer_free(tok);
    unload(&m);
    tensor_free(prompt);
    tendo_comm_free(m.comm);
    return 0;
}
