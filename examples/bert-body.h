/* examples/bert-body.h - a BERT encoder and mean pooling in one float
 * dtype, every step a tendo op.  Included by examples/embed.c once per
 * dtype with T (tensor_f32), SFX (f32) and AS (tendo_as_f32) defined, after
 * its batch type. */

#define FN(name) PASTE(name, SFX)
#define PASTE(a, b) PASTE_(a, b)
#define PASTE_(a, b) a##_##b

/* One encoder layer's weights (borrowed from, or converted from, the file;
 * the Linear weights wq ... wo2 as transposed views of the stored [out, in]
 * tensors: matmul reads that layout as fast as a dense [in, out] one, and
 * faster on the skinny and AMX paths, so no copy is made). */
typedef struct {
    T *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln1_w, *ln1_b, *wi, *bi, *wo2, *bo2, *ln2_w, *ln2_b;
} FN(layer);

typedef struct {
    T *word, *pos, *type, *ln_w, *ln_b;
    FN(layer) layers[MAX_LAYERS];
    int nlayers, heads;
    double eps;
} FN(model);

/* The tensor called name in the file, in this dtype: a new handle (on the
 * file's own memory, or a converted copy when the model runs in another
 * dtype). */
static T *FN(weight)(const tendo_collection *c, const char *name)
{
    tendo_tensor *e = tendo_collection_get(c, name);
    tendo_tensor *t = !e ? NULL : tendo_tensor_dtype(e) == DTYPE ? tendo_tensor_alias(e) : tendo_tensor_to_dtype(e, DTYPE);

    if (!t)
        die(name);
    return AS(t);
}

/* A Linear layer's weight [out, in] as an [in, out] view (a new handle). */
static T *FN(weight_t)(const tendo_collection *c, const char *name)
{
    T *w = FN(weight)(c, name), *wt = tensor_transpose(w, 0, 1);

    if (!wt)
        die(name);
    tensor_free(w);
    return wt;
}

static void FN(load)(FN(model) * m, const tendo_collection *c, int nlayers, int heads, double eps)
{
    char name[128];

    m->word = FN(weight)(c, "embeddings.word_embeddings.weight");
    m->pos = FN(weight)(c, "embeddings.position_embeddings.weight");
    m->type = FN(weight)(c, "embeddings.token_type_embeddings.weight");
    m->ln_w = FN(weight)(c, "embeddings.LayerNorm.weight");
    m->ln_b = FN(weight)(c, "embeddings.LayerNorm.bias");
    m->nlayers = nlayers;
    m->heads = heads;
    m->eps = eps;
    for (int i = 0; i < nlayers; i++) {
        FN(layer) *l = &m->layers[i];
#define W(field, suffix) (snprintf(name, sizeof name, "encoder.layer.%d.%s", i, suffix), l->field = FN(weight)(c, name))
#define WT(field, suffix) (snprintf(name, sizeof name, "encoder.layer.%d.%s", i, suffix), l->field = FN(weight_t)(c, name))
        WT(wq, "attention.self.query.weight");
        W(bq, "attention.self.query.bias");
        WT(wk, "attention.self.key.weight");
        W(bk, "attention.self.key.bias");
        WT(wv, "attention.self.value.weight");
        W(bv, "attention.self.value.bias");
        WT(wo, "attention.output.dense.weight");
        W(bo, "attention.output.dense.bias");
        W(ln1_w, "attention.output.LayerNorm.weight");
        W(ln1_b, "attention.output.LayerNorm.bias");
        WT(wi, "intermediate.dense.weight");
        W(bi, "intermediate.dense.bias");
        WT(wo2, "output.dense.weight");
        W(bo2, "output.dense.bias");
        W(ln2_w, "output.LayerNorm.weight");
        W(ln2_b, "output.LayerNorm.bias");
#undef W
#undef WT
    }
}

static void FN(unload)(FN(model) * m)
{
    T **all[] = {&m->word, &m->pos, &m->type, &m->ln_w, &m->ln_b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tensor_free(*all[i]);
    for (int i = 0; i < m->nlayers; i++) {
        FN(layer) *l = &m->layers[i];
        T *ws[] = {l->wq, l->bq, l->wk, l->bk, l->wv, l->bv, l->wo, l->bo,
                   l->ln1_w, l->ln1_b, l->wi, l->bi, l->wo2, l->bo2, l->ln2_w, l->ln2_b};
        for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++)
            tensor_free(ws[j]);
    }
}

/* x @ wt + b (a Linear layer: wt is its weight's [in, out] view). */
static T *FN(linear)(const T *x, const T *wt, const T *b)
{
    T *y = CHECK(tensor_matmul(x, wt));
    T *z = CHECK(tensor_add(y, b));
    tensor_free(y);
    return z;
}

/* [B, L, H] -> [B, heads, L, H/heads] (a view). */
static T *FN(split_heads)(const T *x, int64_t B, int64_t L, int heads, int64_t dh)
{
    T *r = CHECK(tensor_reshape(x, TENDO_SHAPE(B, L, heads, dh)));
    T *p = CHECK(tensor_permute(r, (const int[]){0, 2, 1, 3}));
    tensor_free(r);
    return p;
}

/* The encoder's last hidden state [B, L, H] for token ids [B, L] and the
 * additive attention mask [B, 1, 1, L]. */
static T *FN(encode)(const FN(model) * m, const tensor_i64 *ids, const T *bias)
{
    int64_t B = tensor_size(ids, 0), L = tensor_size(ids, 1), H = tensor_size(m->word, 1), dh = H / m->heads;
    tensor_i64 *flat = CHECK(tensor_reshape(ids, TENDO_SHAPE(B * L)));
    T *tok = CHECK(tensor_index_select(m->word, 0, flat));
    T *emb = CHECK(tensor_reshape(tok, TENDO_SHAPE(B, L, H)));
    T *pos = CHECK(tensor_narrow(m->pos, 0, 0, L));
    T *type0 = CHECK(tensor_narrow(m->type, 0, 0, 1));
    T *s1 = CHECK(tensor_add(emb, pos)), *s2 = CHECK(tensor_add(s1, type0));
    T *x = CHECK(tensor_layer_norm(s2, m->ln_w, m->ln_b, m->eps));

    tensor_free(flat);
    tensor_free(tok);
    tensor_free(emb);
    tensor_free(pos);
    tensor_free(type0);
    tensor_free(s1);
    tensor_free(s2);
    for (int i = 0; i < m->nlayers; i++) {
        const FN(layer) *l = &m->layers[i];
        T *q = FN(linear)(x, l->wq, l->bq), *k = FN(linear)(x, l->wk, l->bk), *v = FN(linear)(x, l->wv, l->bv);
        T *qh = FN(split_heads)(q, B, L, m->heads, dh), *kh = FN(split_heads)(k, B, L, m->heads, dh);
        T *vh = FN(split_heads)(v, B, L, m->heads, dh);
        T *ctx = CHECK(tensor_attention(qh, kh, vh, bias, false, 0));
        T *ctx_t = CHECK(tensor_permute(ctx, (const int[]){0, 2, 1, 3}));
        T *ctx_c = CHECK(tensor_contiguous(ctx_t));
        T *ctx_m = CHECK(tensor_reshape(ctx_c, TENDO_SHAPE(B, L, H)));
        T *att = FN(linear)(ctx_m, l->wo, l->bo);
        T *res1 = CHECK(tensor_add(att, x));
        T *x1 = CHECK(tensor_layer_norm(res1, l->ln1_w, l->ln1_b, m->eps));
        T *inter = FN(linear)(x1, l->wi, l->bi);
        T *act = CHECK(tensor_gelu(inter));
        T *out = FN(linear)(act, l->wo2, l->bo2);
        T *res2 = CHECK(tensor_add(out, x1));
        T *ts[] = {q, k, v, qh, kh, vh, ctx, ctx_t, ctx_c, ctx_m, att, res1, inter, act, out, x};

        x = CHECK(tensor_layer_norm(res2, l->ln2_w, l->ln2_b, m->eps));
        for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
            tensor_free(ts[j]);
        tensor_free(x1);
        tensor_free(res2);
    }
    return x;
}

/* Mean of the hidden states over the real tokens (real [B, L]: true for
 * a real token, false for padding), L2-normalised: [B, H] f32.  A row with
 * no real token attends to nothing, so its hidden states are NaN: the
 * padding is cut out with masked_fill (not a multiply, which keeps NaN),
 * and the count clamped at 1e-9 as sentence-transformers clamps it, which
 * makes such a row the zero vector. */
static tensor_f32 *FN(embed)(const FN(model) * m, const tensor_i64 *ids, const tensor_bool *real)
{
    int64_t B = tensor_size(ids, 0), L = tensor_size(ids, 1);
    tensor_bool *padded = CHECK(tensor_logical_not(real));
    tensor_bool *padded3 = CHECK(tensor_reshape(padded, TENDO_SHAPE(B, L, 1)));
    T *keep = CHECK(CONVERT_BOOL(real)); /* 1 for a real token, 0 for padding */
    T *zeros = CHECK(tensor_mul_scalar(keep, 0.0));
    T *bias2 = CHECK(tensor_masked_fill(zeros, padded, -INFINITY));
    T *bias = CHECK(tensor_reshape(bias2, TENDO_SHAPE(B, 1, 1, L)));
    T *h = FN(encode)(m, ids, bias);
    T *masked = CHECK(tensor_masked_fill(h, padded3, 0.0));
    T *total = CHECK(tensor_sum(masked, 1, false));
    T *count = CHECK(tensor_sum(keep, 1, true)); /* [B, 1] */
    T *countc = CHECK(tensor_clamp(count, 1e-9, INFINITY));
    T *mean = CHECK(tensor_div(total, countc));
    T *sq = CHECK(tensor_mul(mean, mean));
    T *ss = CHECK(tensor_sum(sq, 1, true));
    T *norm = CHECK(tensor_sqrt(ss));
    T *normc = CHECK(tensor_clamp(norm, 1e-12, INFINITY));
    T *unit = CHECK(tensor_div(mean, normc));
    tensor_f32 *out = CHECK(TO_F32(unit));
    T *ts[] = {keep, zeros, bias2, bias, h, masked, total, count, countc, mean, sq, ss, norm, normc, unit};

    for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
        tensor_free(ts[j]);
    tensor_free(padded);
    tensor_free(padded3);
    return out;
}

/* Loads the model from c, embeds the nb batches repeat times (the best
 * time of a pass over them all in *best), frees the model.  The
 * embeddings of the last pass, f32 [rows, hidden], the batches' rows in
 * order, go to out. */
static void FN(run)(const tendo_collection *c, int layers, int heads, double eps, const batch *b, int64_t nb,
                    int repeat, double *best, float *out)
{
    FN(model) m;

    FN(load)(&m, c, layers, heads, eps);
    for (int r = 0; r < repeat; r++) {
        double t = now();
        float *row = out;
        for (int64_t i = 0; i < nb; i++) {
            tensor_f32 *e = FN(embed)(&m, b[i].ids, b[i].real);
            if (tensor_copy_to(e, row, tensor_numel(e)) != TENDO_OK)
                die("the embeddings");
            row += tensor_numel(e);
            tensor_free(e);
        }
        t = now() - t;
        *best = t < *best ? t : *best;
    }
    FN(unload)(&m);
}

#undef FN
#undef PASTE
#undef PASTE_
