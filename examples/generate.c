/* examples/generate.c - tendo-generate: greedy decoding with a Llama-style
 * decoder from a Hugging Face safetensors checkpoint (RMSNorm, RoPE,
 * grouped-query attention over a KV cache written by copy_into, SwiGLU),
 * every step a tendo op in f32.
 *
 *   tendo-generate [--tokens N] [--device cpu|cuda:N] [--logits LOGITS.npy] MODEL_DIR PROMPT.npy OUT.npy
 *
 * MODEL_DIR holds model.safetensors and config.json.  PROMPT.npy holds the
 * prompt's token ids (i64 [len] or [1, len]).  OUT.npy gets the N (default
 * 32) tokens chosen greedily after the prompt, i64 [N]; LOGITS.npy, when
 * asked for, the prompt's logits, f32 [len, vocab]. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tendo.h>

#define PROGRAM "tendo-generate"
#include "common.h"

#define MAX_LAYERS 128

typedef tensor_f32 T;


typedef struct {
    T *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *gate, *up, *down;
    T *kcache, *vcache; /* [1, kv_heads, max_len, head_dim] */
} layer;

typedef struct {
    int64_t hidden, heads, kv_heads, head_dim, layers, vocab, max_len;
    double eps, theta;
    T *embed, *norm, *lm_head;
    layer l[MAX_LAYERS];
} model;

/* The tensor called name, as an f32 handle of its own. */
static T *weight(const tendo_collection *c, const char *name)
{
    tendo_tensor *e = checked(tendo_collection_get(c, name), name);
    tendo_tensor *t = tendo_tensor_dtype(e) == TENDO_F32 ? tendo_tensor_alias(e) : tendo_tensor_to_dtype(e, TENDO_F32);

    return checked(tendo_as_f32(checked(t, name)), name);
}

/* An integer field of the config (def when absent). */
static int64_t cfg_int(json_t *root, const char *key, int64_t def)
{
    json_t *v = json_object_get(root, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

static double cfg_num(json_t *root, const char *key, double def)
{
    json_t *v = json_object_get(root, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

static void load(model *m, const char *dir, int64_t max_len, tendo_device dev)
{
    char path[4096], name[160];
    json_t *root;
    tendo_collection *c;
    bool tied;

    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!(root = json_load_file(path, 0, NULL))) {
        fprintf(stderr, "tendo-generate: cannot read %s\n", path);
        exit(1);
    }
    m->hidden = cfg_int(root, "hidden_size", 0);
    m->heads = cfg_int(root, "num_attention_heads", 0);
    m->kv_heads = cfg_int(root, "num_key_value_heads", m->heads);
    m->head_dim = cfg_int(root, "head_dim", m->heads ? m->hidden / m->heads : 0);
    m->layers = cfg_int(root, "num_hidden_layers", 0);
    m->vocab = cfg_int(root, "vocab_size", 0);
    m->eps = cfg_num(root, "rms_norm_eps", 1e-6);
    m->theta = cfg_num(root, "rope_theta", 10000.0);
    { /* transformers 5 keeps it in rope_parameters; only the plain rotation is done here */
        json_t *rp = json_object_get(root, "rope_parameters"), *type = json_object_get(rp, "rope_type");
        if (json_is_object(rp))
            m->theta = cfg_num(rp, "rope_theta", m->theta);
        if (json_is_string(type) && strcmp(json_string_value(type), "default")) {
            fprintf(stderr, "tendo-generate: %s: rope_type %s is not supported\n", path, json_string_value(type));
            exit(1);
        }
    }
    tied = json_is_true(json_object_get(root, "tie_word_embeddings"));
    json_decref(root);
    if (m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->layers <= 0 || m->layers > MAX_LAYERS) {
        fprintf(stderr, "tendo-generate: %s: not a Llama-style config\n", path);
        exit(1);
    }
    m->max_len = max_len;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    c = checked(tendo_safetensors_load(path, dev), path);
    m->embed = weight(c, "model.embed_tokens.weight");
    m->norm = weight(c, "model.norm.weight");
    m->lm_head = weight(c, tied ? "model.embed_tokens.weight" : "lm_head.weight");
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
#define W(field, suffix) (snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, suffix), l->field = weight(c, name))
        W(attn_norm, "input_layernorm.weight");
        W(wq, "self_attn.q_proj.weight");
        W(wk, "self_attn.k_proj.weight");
        W(wv, "self_attn.v_proj.weight");
        W(wo, "self_attn.o_proj.weight");
        W(mlp_norm, "post_attention_layernorm.weight");
        W(gate, "mlp.gate_proj.weight");
        W(up, "mlp.up_proj.weight");
        W(down, "mlp.down_proj.weight");
#undef W
        l->kcache = CHECK(tensor_f32_zeros(TENDO_SHAPE(1, m->kv_heads, max_len, m->head_dim), dev));
        l->vcache = CHECK(tensor_f32_zeros(TENDO_SHAPE(1, m->kv_heads, max_len, m->head_dim), dev));
    }
    tendo_collection_free(c); /* the weights hold their own references */
}

static void unload(model *m)
{
    tensor_free(m->embed);
    tensor_free(m->norm);
    tensor_free(m->lm_head);
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        T *ws[] = {l->attn_norm, l->wq, l->wk, l->wv, l->wo, l->mlp_norm, l->gate, l->up, l->down, l->kcache, l->vcache};
        for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++)
            tensor_free(ws[j]);
    }
}

/* x @ w^T (w is [out, in]). */
static T *linear(const T *x, const T *w)
{
    T *wt = CHECK(tensor_transpose(w, 0, 1));
    T *y = CHECK(tensor_matmul(x, wt));
    tensor_free(wt);
    return y;
}

/* [L, heads * d] -> [1, heads, L, d] (a view). */
static T *heads_of(const T *x, int64_t L, int64_t heads, int64_t d)
{
    T *r = CHECK(tensor_reshape(x, TENDO_SHAPE(1, L, heads, d)));
    T *p = CHECK(tensor_transpose(r, 1, 2));
    tensor_free(r);
    return p;
}

/* The logits [L, vocab] of tokens ids[0..L) at positions pos, pos+1, ...;
 * each layer's keys and values go into its cache at [pos, pos+L). */
static T *forward(model *m, const tensor_i64 *ids, int64_t pos)
{
    int64_t L = tensor_numel(ids), qd = m->heads * m->head_dim;
    tensor_i64 *positions = CHECK(tensor_i64_arange(pos, pos + L, 1, tensor_device(ids)));
    T *x = CHECK(tensor_index_select(m->embed, 0, ids)); /* [L, hidden] */

    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        T *h = CHECK(tensor_rms_norm(x, l->attn_norm, m->eps));
        T *q = linear(h, l->wq), *k = linear(h, l->wk), *v = linear(h, l->wv);
        T *qh = heads_of(q, L, m->heads, m->head_dim), *kh = heads_of(k, L, m->kv_heads, m->head_dim);
        T *vh = heads_of(v, L, m->kv_heads, m->head_dim);
        T *qr = CHECK(tensor_rope(qh, positions, m->head_dim, m->theta, false));
        T *kr = CHECK(tensor_rope(kh, positions, m->head_dim, m->theta, false));
        T *kslot = CHECK(tensor_narrow(l->kcache, 2, pos, L)), *vslot = CHECK(tensor_narrow(l->vcache, 2, pos, L));
        T *kall, *vall, *ctx, *ctx_t, *ctx_c, *ctx_m, *o, *res, *h2, *g, *u, *gs, *gu, *mlp, *next;

        if (tensor_copy_into(kslot, kr) != TENDO_OK || tensor_copy_into(vslot, vh) != TENDO_OK)
            die("the KV cache");
        kall = CHECK(tensor_narrow(l->kcache, 2, 0, pos + L));
        vall = CHECK(tensor_narrow(l->vcache, 2, 0, pos + L));
        ctx = CHECK(tensor_attention(qr, kall, vall, NULL, true, 0)); /* [1, heads, L, d] */
        ctx_t = CHECK(tensor_transpose(ctx, 1, 2));
        ctx_c = CHECK(tensor_contiguous(ctx_t));
        ctx_m = CHECK(tensor_reshape(ctx_c, TENDO_SHAPE(L, qd)));
        o = linear(ctx_m, l->wo);
        res = CHECK(tensor_add(x, o));
        h2 = CHECK(tensor_rms_norm(res, l->mlp_norm, m->eps));
        g = linear(h2, l->gate);
        u = linear(h2, l->up);
        gs = CHECK(tensor_silu(g));
        gu = CHECK(tensor_mul(gs, u));
        mlp = linear(gu, l->down);
        next = CHECK(tensor_add(res, mlp));
        {
            T *ts[] = {x, h, q, k, v, qh, kh, vh, qr, kr, kslot, vslot, kall, vall, ctx, ctx_t, ctx_c, ctx_m,
                       o, res, h2, g, u, gs, gu, mlp};
            for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
                tensor_free(ts[j]);
        }
        x = next;
    }
    {
        T *h = CHECK(tensor_rms_norm(x, m->norm, m->eps));
        T *logits = linear(h, m->lm_head);
        tensor_free(h);
        tensor_free(x);
        tensor_free(positions);
        return logits;
    }
}

/* The greedy choice after the last row of logits. */
static int64_t next_token(const T *logits)
{
    int64_t L = tensor_size(logits, 0), tok;
    T *last = CHECK(tensor_narrow(logits, 0, L - 1, 1));
    tensor_i64 *am = CHECK(tensor_argmax(last, 1, false));

    if (tensor_copy_to(am, &tok, 1) != TENDO_OK)
        die("argmax");
    tensor_free(am);
    tensor_free(last);
    return tok;
}

static int usage(void)
{
    fprintf(stderr, "usage: tendo-generate [--tokens N] [--device cpu|cuda:N] [--logits LOGITS.npy] MODEL_DIR PROMPT.npy OUT.npy\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *paths[3], *logits_path = NULL, *device = "cpu";
    int npaths = 0;
    int64_t ntok = 32, L, *out_ids;
    tendo_device dev = tendo_cpu();
    tendo_tensor *pe, *pd;
    tensor_i64 *prompt, *flat, *out;
    model m;
    T *logits;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            ntok = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--logits") && i + 1 < argc)
            logits_path = argv[++i];
        else if (argv[i][0] == '-' || npaths == 3)
            return usage();
        else
            paths[npaths++] = argv[i];
    }
    if (npaths != 3 || ntok < 1)
        return usage();
    if (strcmp(device, "cpu")) {
        int index = 0;
        if (strncmp(device, "cuda", 4) || (device[4] && sscanf(device + 4, ":%d", &index) != 1))
            return usage();
        dev = tendo_cuda(index);
    }
    pe = checked(tendo_npy_load(paths[1]), paths[1]);
    pd = checked(tendo_tensor_to_device(pe, dev), paths[1]);
    prompt = checked(tendo_as_i64(pd), paths[1]);
    L = tensor_numel(prompt);
    if (L < 1) {
        fprintf(stderr, "tendo-generate: %s: an empty prompt\n", paths[1]);
        return 1;
    }
    flat = CHECK(tensor_reshape(prompt, TENDO_SHAPE(L)));
    load(&m, paths[0], L + ntok, dev);
    out_ids = malloc((size_t)ntok * sizeof *out_ids);
    if (!out_ids)
        return 1;
    logits = forward(&m, flat, 0);
    if (logits_path && tendo_npy_save(logits_path, tensor_f32_erase(logits)) != TENDO_OK)
        die(logits_path);
    for (int64_t t = 0; t < ntok; t++) {
        tensor_i64 *one;
        out_ids[t] = next_token(logits);
        tensor_free(logits);
        one = CHECK(tensor_i64_from_data(&out_ids[t], TENDO_SHAPE(1), dev));
        logits = t + 1 < ntok ? forward(&m, one, L + t) : NULL;
        tensor_free(one);
    }
    out = CHECK(tensor_i64_from_data(out_ids, TENDO_SHAPE(ntok), tendo_cpu()));
    if (tendo_npy_save(paths[2], tensor_i64_erase(out)) != TENDO_OK)
        die(paths[2]);
    tensor_free(out);
    free(out_ids);
    unload(&m);
    tensor_free(flat);
    tensor_free(prompt);
    tendo_tensor_free(pe);
    return 0;
}
