/* t/drivers/grad-model.c - a forward and backward pass of a small model,
 * for t/interop/t-grad-torch.sh to compare with PyTorch.
 *
 *   grad-model mlp|block DTYPE IN.safetensors OUT.safetensors
 *
 * Reads the inputs and parameters (f32) from IN, converts them to DTYPE
 * (f32 or bf16), makes every float one a leaf, computes the loss and runs
 * backward; writes "loss" and "grad.<name>" for each leaf (as f32) to OUT.
 *
 *   mlp:   x [B, I], target [B, O]; w1 b1 w2 b2 w3 b3;
 *          loss = mean((W3 gelu(W2 tanh(W1 x + b1) + b2) + b3 - target)^2)
 *   block: x [B, L, D], targets (i64) [B*L]; one Llama-style decoder block
 *          (RMSNorm, RoPE, causal grouped-query attention, SwiGLU, both
 *          residuals) and an output head; loss = the mean cross-entropy of
 *          the logits [B*L, V] against the targets (log_softmax, gather).
 *          Heads from the metadata: "heads", "kv_heads".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tendo.h"

static const char *model, *dtname;
static tendo_collection *in, *out;
static tendo_dtype dt;

static void die(const char *what)
{
    fprintf(stderr, "grad-model: %s: %s\n", what, tendo_error_message(tendo_last_error()));
    exit(1);
}

static void *must(void *p, const char *what)
{
    if (!p)
        die(what);
    return p;
}
#define M(x) must((void *)(x), #x)

/* Parameters and inputs in one table, as DTYPE leaves (generic handles). */
enum { MAXP = 16 };
static struct {
    const char *name;
    tendo_tensor *t;
} params[MAXP];
static int nparams;

static tendo_tensor *leaf(const char *name)
{
    tendo_tensor *src = M(tendo_collection_get(in, name));
    tendo_tensor *t = M(tendo_tensor_to_dtype(src, dt));

    tendo_status st = TENDO_ERR_DTYPE;

    if (dt == TENDO_F32)
        st = tensor_set_requires_grad(tendo_as_f32(t), true);
#ifdef TENDO_HAVE_BF16
    else
        st = tensor_set_requires_grad(tendo_as_bf16(t), true);
#endif
    if (st != TENDO_OK)
        die("set_requires_grad");
    params[nparams].name = name;
    params[nparams++].t = t;
    return t;
}

/* The model, written once for f32 and bf16: T is the tensor type, and tensor_*
 * the generic calls. */
#define MODEL(T, AS)                                                                                          \
    static T *mlp_##T(void)                                                                                   \
    {                                                                                                         \
        T *x = AS(leaf("x")), *y = AS(leaf("target"));                                                        \
        T *w1 = AS(leaf("w1")), *b1 = AS(leaf("b1")), *w2 = AS(leaf("w2")), *b2 = AS(leaf("b2"));             \
        T *w3 = AS(leaf("w3")), *b3 = AS(leaf("b3"));                                                         \
        T *h1 = M(tensor_matmul(x, w1)), *h1b = M(tensor_add(h1, b1)), *a1 = M(tensor_tanh(h1b));             \
        T *h2 = M(tensor_matmul(a1, w2)), *h2b = M(tensor_add(h2, b2)), *a2 = M(tensor_gelu(h2b));            \
        T *h3 = M(tensor_matmul(a2, w3)), *o = M(tensor_add(h3, b3)), *d = M(tensor_sub(o, y));               \
        T *sq = M(tensor_mul(d, d)), *s = M(tensor_sum_all(sq));                                              \
        T *loss = M(tensor_div_scalar(s, (double)tensor_numel(sq)));                                          \
                                                                                                              \
        tensor_free(h1), tensor_free(h1b), tensor_free(a1), tensor_free(h2), tensor_free(h2b);                \
        tensor_free(a2), tensor_free(h3), tensor_free(o), tensor_free(d), tensor_free(sq), tensor_free(s);    \
        return loss;                                                                                          \
    }                                                                                                         \
                                                                                                              \
    /* [B, L, H*hd] -> [B, H, L, hd] */                                                                       \
    static T *heads_##T(const T *t, int64_t b, int64_t l, int64_t h, int64_t hd)                              \
    {                                                                                                         \
        T *r = M(tensor_reshape(t, TENDO_SHAPE(b, l, h, hd)));                                                \
        T *p = M(tensor_transpose(r, 1, 2));                                                                  \
        tensor_free(r);                                                                                       \
        return p;                                                                                             \
    }                                                                                                         \
                                                                                                              \
    static T *block_##T(int hq, int hkv)                                                                      \
    {                                                                                                         \
        T *x = AS(leaf("x"));                                                                                 \
        T *an = AS(leaf("attn_norm")), *wq = AS(leaf("wq")), *wk = AS(leaf("wk")), *wv = AS(leaf("wv"));      \
        T *wo = AS(leaf("wo")), *fn = AS(leaf("ffn_norm")), *wg = AS(leaf("w_gate")), *wu = AS(leaf("w_up")); \
        T *wd = AS(leaf("w_down")), *head = AS(leaf("lm_head"));                                              \
        const tensor_i64 *tg = M(tendo_as_i64(M(tendo_collection_get(in, "targets"))));                      \
        int64_t b = tensor_shape(x)[0], l = tensor_shape(x)[1], dm = tensor_shape(x)[2];                       \
        int64_t hd = tensor_shape(wq)[1] / hq, v = tensor_shape(head)[1];                                     \
        tensor_i64 *pos = M(tensor_i64_arange(0, (double)l, 1, tendo_cpu()));                                 \
        T *h = M(tensor_rms_norm(x, an, 1e-6));                                                               \
        T *q0 = M(tensor_matmul(h, wq)), *k0 = M(tensor_matmul(h, wk)), *v0 = M(tensor_matmul(h, wv));        \
        T *q1 = heads_##T(q0, b, l, hq, hd), *k1 = heads_##T(k0, b, l, hkv, hd);                              \
        T *v1 = heads_##T(v0, b, l, hkv, hd);                                                                 \
        T *q = M(tensor_rope(q1, pos, hd, 10000.0, false)), *k = M(tensor_rope(k1, pos, hd, 10000.0, false)); \
        T *at = M(tensor_attention(q, k, v1, NULL, true, 0.0));                                               \
        T *att = M(tensor_transpose(at, 1, 2)), *atm = M(tensor_reshape(att, TENDO_SHAPE(b, l, hq * hd)));    \
        T *ao = M(tensor_matmul(atm, wo)), *x2 = M(tensor_add(x, ao));                                        \
        T *h2 = M(tensor_rms_norm(x2, fn, 1e-6));                                                             \
        T *g = M(tensor_matmul(h2, wg)), *sg = M(tensor_silu(g)), *u = M(tensor_matmul(h2, wu));              \
        T *gu = M(tensor_mul(sg, u)), *f = M(tensor_matmul(gu, wd)), *x3 = M(tensor_add(x2, f));              \
        T *lg = M(tensor_matmul(x3, head)), *lg2 = M(tensor_reshape(lg, TENDO_SHAPE(b * l, v)));              \
        T *ls = M(tensor_log_softmax(lg2, -1));                                                               \
        tensor_i64 *tg2 = M(tensor_reshape(tg, TENDO_SHAPE(b * l, 1)));                                       \
        T *picked = M(tensor_gather(ls, 1, tg2)), *s = M(tensor_sum_all(picked));                             \
        T *loss = M(tensor_mul_scalar(s, -1.0 / (double)(b * l)));                                            \
                                                                                                              \
        (void)dm;                                                                                             \
        tensor_free(pos), tensor_free(h), tensor_free(q0), tensor_free(k0), tensor_free(v0);                  \
        tensor_free(q1), tensor_free(k1), tensor_free(v1), tensor_free(q), tensor_free(k), tensor_free(at);   \
        tensor_free(att), tensor_free(atm), tensor_free(ao), tensor_free(x2), tensor_free(h2), tensor_free(g);\
        tensor_free(sg), tensor_free(u), tensor_free(gu), tensor_free(f), tensor_free(x3), tensor_free(lg);   \
        tensor_free(lg2), tensor_free(ls), tensor_free(tg2), tensor_free(picked), tensor_free(s);             \
        return loss;                                                                                          \
    }

MODEL(tensor_f32, tendo_as_f32)
#ifdef TENDO_HAVE_BF16
MODEL(tensor_bf16, tendo_as_bf16)
#endif

static int meta_int(const char *key)
{
    const char *v = tendo_collection_metadata(in, key);

    if (!v)
        die(key);
    return atoi(v);
}

/* Adds t (any float dtype) to out as f32 under name. */
static void put(const char *name, const tendo_tensor *t)
{
    tendo_tensor *f = M(tendo_tensor_to_dtype(t, TENDO_F32));

    if (tendo_collection_add(out, name, f) != TENDO_OK)
        die("collection_add");
    tendo_tensor_free(f);
}

int main(int argc, char **argv)
{
    tendo_tensor *loss;
    char name[96];

    if (argc != 5) {
        fprintf(stderr, "usage: grad-model mlp|block f32|bf16 IN.safetensors OUT.safetensors\n");
        return 2;
    }
    model = argv[1];
    dtname = argv[2];
    if (strcmp(dtname, "bf16") == 0) {
#ifdef TENDO_HAVE_BF16
        dt = TENDO_BF16;
#else
        fprintf(stderr, "grad-model: this build has no bf16\n");
        return 77;
#endif
    } else {
        dt = TENDO_F32;
    }
    in = M(tendo_safetensors_load_copy(argv[3], tendo_cpu()));
    out = M(tendo_collection_new());
    if (dt == TENDO_F32) {
        tensor_f32 *l = strcmp(model, "mlp") == 0 ? mlp_tensor_f32() : block_tensor_f32(meta_int("heads"), meta_int("kv_heads"));
        if (tensor_backward(l, NULL) != TENDO_OK)
            die("backward");
        loss = tensor_erase(l);
    } else {
#ifdef TENDO_HAVE_BF16
        tensor_bf16 *l = strcmp(model, "mlp") == 0 ? mlp_tensor_bf16() : block_tensor_bf16(meta_int("heads"), meta_int("kv_heads"));
        if (tensor_backward(l, NULL) != TENDO_OK)
            die("backward");
        loss = tensor_erase(l);
#else
        return 77;
#endif
    }
    put("loss", loss);
    for (int i = 0; i < nparams; i++) {
        tendo_tensor *g = NULL;

        if (dt == TENDO_F32)
            g = tensor_erase((tensor_f32 *)M(tensor_grad(tendo_as_f32(params[i].t))));
#ifdef TENDO_HAVE_BF16
        else
            g = tensor_erase((tensor_bf16 *)M(tensor_grad(tendo_as_bf16(params[i].t))));
#endif
        snprintf(name, sizeof name, "grad.%s", params[i].name);
        put(name, g);
        tendo_tensor_free(g);
        tendo_tensor_free(params[i].t);
    }
    if (tendo_safetensors_save(argv[4], out) != TENDO_OK)
        die("safetensors_save");
    tendo_tensor_free(loss);
    tendo_collection_free(out);
    tendo_collection_free(in);
    return 0;
}
