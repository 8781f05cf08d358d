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
 *          loss = mean((W3 gelu(W2 tanh(W1 x + b1) + b2) + b3 - target)^2) (mse_loss)
 *   block: x [B, L, D], targets (i64) [B*L]; one Llama-style decoder block
 *          (RMSNorm, RoPE, causal grouped-query attention, SwiGLU, both
 *          residuals) and an output head; loss = the mean cross-entropy of
 *          the logits [B*L, V] against the targets (cross_entropy).
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

#include "grad-models.h"

/* The models of t/lib/grad-models.h on the inputs' leaves, for tensor type T
 * (AS: the erased handle's view as T). */
#define MODEL(T, AS)                                                                                          \
    GRAD_MODELS(T)                                                                                            \
    static T *mlp_##T(void)                                                                                   \
    {                                                                                                         \
        T *x = AS(leaf("x")), *y = AS(leaf("target"));                                                        \
        T *w[3] = {AS(leaf("w1")), AS(leaf("w2")), AS(leaf("w3"))};                                           \
        T *b[3] = {AS(leaf("b1")), AS(leaf("b2")), AS(leaf("b3"))};                                           \
                                                                                                              \
        return mlp_loss_##T(x, y, w, b);                                                                      \
    }                                                                                                         \
    static T *block_##T(int hq, int hkv)                                                                      \
    {                                                                                                         \
        block_params_##T p = {AS(leaf("x")), AS(leaf("attn_norm")), AS(leaf("wq")), AS(leaf("wk")), AS(leaf("wv")),  \
                       AS(leaf("wo")), AS(leaf("ffn_norm")), AS(leaf("w_gate")), AS(leaf("w_up")),            \
                       AS(leaf("w_down")), AS(leaf("lm_head"))};                                              \
        const tensor_i64 *tg = M(tendo_as_i64(M(tendo_collection_get(in, "targets"))));                      \
        tensor_i64 *pos = M(tensor_i64_arange(0, (double)tensor_shape(p.x)[1], 1, tendo_cpu()));              \
        T *loss = block_loss_##T(&p, hq, hkv, pos, tg);                                                       \
                                                                                                              \
        tensor_free(pos);                                                                                     \
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
