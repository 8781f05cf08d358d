/* examples/train-model.h - the Llama-style decoder tendo-train trains, in
 * one float dtype: its parameters under their Hugging Face names, their
 * initialisation, and the loss of a batch.  Included by examples/train.c
 * once per dtype with T (tensor_f32), SFX (f32), AS (tendo_as_f32) and
 * DTYPE (TENDO_F32) defined; the shapes and hyperparameters (llama_config)
 * and the parameter table (param) are train.c's. */

#define FN(name) PASTE(name, SFX)
#define PASTE(a, b) PASTE_(a, b)
#define PASTE_(a, b) a##_##b

/* Makes every parameter of cfg a new leaf of this dtype on dev, drawn as
 * transformers' LlamaPreTrainedModel._init_weights does (normal with
 * standard deviation initializer_range, norms 1) from seed, or taken from
 * the collection `from` (a checkpoint) when it is not NULL.  Exits with a
 * clear error when `from` lacks a parameter or has one of another shape. */
static void FN(make_params)(const llama_config *cfg, param *ps, int n, uint64_t seed, const tendo_collection *from,
                            tendo_device dev)
{
    for (int i = 0; i < n; i++) {
        param *p = &ps[i];
        tendo_tensor *t;

        if (from) {
            tendo_tensor *e = tendo_collection_get(from, p->name);
            if (!e)
                die(p->name);
            if (tendo_tensor_ndim(e) != p->ndim || memcmp(tendo_tensor_shape(e), p->shape, (size_t)p->ndim * sizeof *p->shape)) {
                fprintf(stderr, "%s: the checkpoint's %s has shape %s; the config makes it %s\n", PROGRAM, p->name,
                        shape_str(tendo_tensor_ndim(e), tendo_tensor_shape(e)).s, shape_str(p->ndim, p->shape).s);
                exit(1);
            }
            t = CHECK(tendo_tensor_to_device(e, dev)); /* a copy of its own */
            if (tendo_tensor_dtype(t) != DTYPE) {
                tendo_tensor *c = CHECK(tendo_tensor_to_dtype(t, DTYPE));
                tendo_tensor_free(t);
                t = c;
            }
        } else {
            tensor_f32 *r = p->norm ? NULL : CHECK(tensor_f32_randn(p->ndim, p->shape, seed + (uint64_t)i, dev));
            tensor_f32 *s = p->norm ? CHECK(tensor_f32_full(p->ndim, p->shape, 1.0, dev))
                                    : CHECK(tensor_mul_scalar(r, cfg->init_std));
            t = CHECK(tendo_tensor_to_dtype(tensor_erase(s), DTYPE));
            tensor_free(r);
            tensor_free(s);
        }
        if (tensor_set_requires_grad(AS(t), true) != TENDO_OK)
            die(p->name);
        p->t = t;
    }
}

/* x @ w^T for a Linear weight w [out, in]. */
static T *FN(linear)(const T *x, const T *w)
{
    T *wt = CHECK(tensor_transpose(w, 0, 1)), *y = CHECK(tensor_matmul(x, wt));

    tensor_free(wt);
    return y;
}

/* [B, L, H * hd] -> [B, H, L, hd] (a view). */
static T *FN(heads)(const T *x, int64_t b, int64_t l, int64_t h, int64_t hd)
{
    T *r = CHECK(tensor_reshape(x, TENDO_SHAPE(b, l, h, hd))), *p = CHECK(tensor_transpose(r, 1, 2));

    tensor_free(r);
    return p;
}

/* Frees n tensors. */
static void FN(drop)(T **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tensor_free(ts[i]);
}

/* The mean cross-entropy of the next-token logits of ids [B, L] against
 * targets [B, L] (i64, on the parameters' device): a new 0-d tensor, its
 * record (when grad mode is on) reaching every parameter. */
static T *FN(loss)(const llama_config *cfg, const param *ps, const tensor_i64 *ids, const tensor_i64 *targets,
                   const tensor_i64 *positions)
{
    int64_t b = tensor_shape(ids)[0], l = tensor_shape(ids)[1], d = cfg->hidden, hd = cfg->head_dim;
    tensor_i64 *flat = CHECK(tensor_reshape(ids, TENDO_SHAPE(b * l)));
    tensor_i64 *tflat = CHECK(tensor_reshape(targets, TENDO_SHAPE(b * l)));
    const T *embed = AS(ps[0].t);
    T *e = CHECK(tensor_index_select(embed, 0, flat)), *x = CHECK(tensor_reshape(e, TENDO_SHAPE(b, l, d)));

    tensor_free(e);
    for (int64_t i = 0; i < cfg->layers; i++) {
        const param *lp = &ps[1 + i * LAYER_PARAMS];
        const T *an = AS(lp[0].t), *wq = AS(lp[1].t), *wk = AS(lp[2].t), *wv = AS(lp[3].t), *wo = AS(lp[4].t);
        const T *mn = AS(lp[5].t), *wg = AS(lp[6].t), *wu = AS(lp[7].t), *wd = AS(lp[8].t);
        T *h = CHECK(tensor_rms_norm(x, an, cfg->eps));
        T *q0 = FN(linear)(h, wq), *k0 = FN(linear)(h, wk), *v0 = FN(linear)(h, wv);
        T *q1 = FN(heads)(q0, b, l, cfg->heads, hd), *k1 = FN(heads)(k0, b, l, cfg->kv_heads, hd);
        T *v1 = FN(heads)(v0, b, l, cfg->kv_heads, hd);
        T *q = CHECK(tensor_rope(q1, positions, hd, cfg->theta, false));
        T *k = CHECK(tensor_rope(k1, positions, hd, cfg->theta, false));
        T *a = CHECK(tensor_attention(q, k, v1, NULL, true, 0.0)); /* grouped-query heads as they are */
        T *at = CHECK(tensor_transpose(a, 1, 2)), *am = CHECK(tensor_reshape(at, TENDO_SHAPE(b, l, cfg->heads * hd)));
        T *o = FN(linear)(am, wo), *x2 = CHECK(tensor_add(x, o));
        T *h2 = CHECK(tensor_rms_norm(x2, mn, cfg->eps));
        T *g = FN(linear)(h2, wg), *sg = CHECK(tensor_silu(g)), *u = FN(linear)(h2, wu);
        T *gu = CHECK(tensor_mul(sg, u)), *f = FN(linear)(gu, wd), *x3 = CHECK(tensor_add(x2, f));
        T *tmp[] = {x, h, q0, k0, v0, q1, k1, v1, q, k, a, at, am, o, x2, h2, g, sg, u, gu, f};

        FN(drop)(tmp, sizeof tmp / sizeof *tmp);
        x = x3;
    }
    {
        const param *tail = &ps[1 + cfg->layers * LAYER_PARAMS];
        const T *head = cfg->tied ? embed : AS(tail[1].t);
        T *h = CHECK(tensor_rms_norm(x, AS(tail[0].t), cfg->eps)), *lg = FN(linear)(h, head);
        T *lg2 = CHECK(tensor_reshape(lg, TENDO_SHAPE(b * l, cfg->vocab)));
        T *loss = CHECK(tensor_cross_entropy(lg2, tflat, -100, 0.0));
        T *tmp[] = {x, h, lg, lg2};

        FN(drop)(tmp, sizeof tmp / sizeof *tmp);
        tensor_free(flat);
        tensor_free(tflat);
        return loss;
    }
}

/* The loss as a double. */
static double FN(value)(T *loss)
{
    tensor_f32 *f = CHECK(tendo_as_f32(CHECK(tendo_tensor_to_dtype(tensor_erase(loss), TENDO_F32))));
    float v;

    if (tensor_copy_to(f, &v, 1) != TENDO_OK)
        die("the loss");
    tensor_free(f);
    return v;
}

/* One training step's forward and backward: the loss's value. */
static double FN(forward_backward)(const llama_config *cfg, const param *ps, const tensor_i64 *ids,
                                   const tensor_i64 *targets, const tensor_i64 *positions)
{
    T *loss = FN(loss)(cfg, ps, ids, targets, positions);
    double v = FN(value)(loss);

    if (tensor_backward(loss, NULL) != TENDO_OK)
        die("backward");
    tensor_free(loss);
    return v;
}

/* The loss with grad mode off (validation). */
static double FN(evaluate)(const llama_config *cfg, const param *ps, const tensor_i64 *ids, const tensor_i64 *targets,
                           const tensor_i64 *positions)
{
    bool was = tendo_set_grad_enabled(false);
    T *loss = FN(loss)(cfg, ps, ids, targets, positions);
    double v = FN(value)(loss);

    tensor_free(loss);
    tendo_set_grad_enabled(was);
    return v;
}

#undef FN
#undef PASTE
#undef PASTE_
