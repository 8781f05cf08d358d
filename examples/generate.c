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
 * asked for, the prompt's logits, f32 [len, vocab].
 *
 * Under mpirun -np N it runs tensor-parallel, as Megatron-LM splits a
 * layer: rank r holds heads [r H/N, (r+1) H/N) of the attention (their rows
 * of q_proj, k_proj and v_proj, the same columns of o_proj, its share of
 * the KV cache) and its N-th of the MLP (rows of gate_proj and up_proj,
 * columns of down_proj); o_proj's and down_proj's partial products are
 * summed across the ranks, one all_reduce each per layer.  Each rank maps
 * the checkpoint and takes its slices of it (only those pages are read):
 * views of the rows, dense copies of the columns; the embeddings, norms and lm_head are whole on every rank, so
 * every rank computes the same logits and tokens, and rank 0 writes the
 * files.  N must divide the attention and key-value heads and the MLP's
 * width.
 *
 * At the end (stderr, rank 0): the prompt's time and the time per token
 * generated after the first (which comes with the prompt), with the
 * all_reduces' share of it under mpirun. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    /* heads, kv_heads and intermediate are this rank's share */
    int64_t hidden, heads, kv_heads, head_dim, intermediate, layers, vocab, max_len;
    double eps, theta;
    T *embed, *norm, *lm_head;
    layer l[MAX_LAYERS];
    tendo_comm *comm; /* the ranks the layers are split over */
    int rank, ranks;
    double comm_s; /* time in the all_reduces */
} model;

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
    m->intermediate = cfg_int(root, "intermediate_size", 0);
    json_decref(root);
    if (m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->layers <= 0 || m->layers > MAX_LAYERS ||
        m->intermediate <= 0) {
        fprintf(stderr, "tendo-generate: %s: not a Llama-style config\n", path);
        exit(1); /* on every rank alike */
    }
    if (m->heads % m->ranks || m->kv_heads % m->ranks || m->intermediate % m->ranks) {
        if (m->rank == 0)
            fprintf(stderr, "tendo-generate: %s: %d ranks do not divide the %lld heads, %lld key-value heads and "
                            "%lld-wide MLP evenly\n",
                    path, m->ranks, (long long)m->heads, (long long)m->kv_heads, (long long)m->intermediate);
        exit(1); /* on every rank alike */
    }
    m->heads /= m->ranks, m->kv_heads /= m->ranks, m->intermediate /= m->ranks;
    m->max_len = max_len;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    c = checked(tendo_safetensors_load(path, tendo_cpu()), path); /* a mapping: each rank reads its slices */
    m->embed = weight(m, c, "model.embed_tokens.weight", -1, dev);
    m->norm = weight(m, c, "model.norm.weight", -1, dev);
    m->lm_head = weight(m, c, tied ? "model.embed_tokens.weight" : "lm_head.weight", -1, dev);
    for (int64_t i = 0; i < m->layers; i++) {
        layer *l = &m->l[i];
        /* column-parallel (rows of [out, in]) in, row-parallel (columns) out */
#define W(field, suffix, dim) (snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)i, suffix), \
                               l->field = weight(m, c, name, m->ranks > 1 ? dim : -1, dev))
        W(attn_norm, "input_layernorm.weight", -1);
        W(wq, "self_attn.q_proj.weight", 0);
        W(wk, "self_attn.k_proj.weight", 0);
        W(wv, "self_attn.v_proj.weight", 0);
        W(wo, "self_attn.o_proj.weight", 1);
        W(mlp_norm, "post_attention_layernorm.weight", -1);
        W(gate, "mlp.gate_proj.weight", 0);
        W(up, "mlp.up_proj.weight", 0);
        W(down, "mlp.down_proj.weight", 1);
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
        sum_across(m, o);
        res = CHECK(tensor_add(x, o));
        h2 = CHECK(tensor_rms_norm(res, l->mlp_norm, m->eps));
        g = linear(h2, l->gate);
        u = linear(h2, l->up);
        gs = CHECK(tensor_silu(g));
        gu = CHECK(tensor_mul(gs, u));
        mlp = linear(gu, l->down);
        sum_across(m, mlp);
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
    struct timespec tp, t0, t1;
    double prompt_comm_s;

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
    m.comm = die_comm = CHECK(tendo_comm_world());
    m.rank = tendo_comm_rank(m.comm);
    m.ranks = tendo_comm_size(m.comm);
    m.comm_s = 0;
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
    clock_gettime(CLOCK_MONOTONIC, &tp);
    logits = forward(&m, flat, 0);
    if (m.rank == 0 && logits_path && tendo_npy_save(logits_path, tensor_f32_erase(logits)) != TENDO_OK)
        die(logits_path);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    prompt_comm_s = m.comm_s;
    for (int64_t t = 0; t < ntok; t++) {
        tensor_i64 *one;
        out_ids[t] = next_token(logits);
        tensor_free(logits);
        one = CHECK(tensor_i64_from_data(&out_ids[t], TENDO_SHAPE(1), dev));
        logits = t + 1 < ntok ? forward(&m, one, L + t) : NULL;
        tensor_free(one);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (m.rank == 0) {
        double ps = (double)(t0.tv_sec - tp.tv_sec) + 1e-9 * (double)(t0.tv_nsec - tp.tv_nsec);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        fprintf(stderr, "tendo-generate: prompt of %lld tokens in %.1f ms; %lld tokens at %.2f ms each (%.1f tokens/s)",
                (long long)L, 1e3 * ps, (long long)ntok, ntok > 1 ? 1e3 * s / (double)(ntok - 1) : 0.0,
                ntok > 1 && s > 0 ? (double)(ntok - 1) / s : 0.0);
        if (m.ranks > 1)
            fprintf(stderr, "; tensor-parallel over %d ranks, %.1f %% of each token in the all_reduces",
                    m.ranks, s > 0 ? 100 * (m.comm_s - prompt_comm_s) / s : 0.0);
        fputc('\n', stderr);
    }
    out = CHECK(tensor_i64_from_data(out_ids, TENDO_SHAPE(ntok), tendo_cpu()));
    if (m.rank == 0 && tendo_npy_save(paths[2], tensor_i64_erase(out)) != TENDO_OK)
        die(paths[2]);
    tensor_free(out);
    free(out_ids);
    unload(&m);
    tensor_free(flat);
    tensor_free(prompt);
    tendo_tensor_free(pe);
    tendo_comm_free(m.comm);
    return 0;
}
