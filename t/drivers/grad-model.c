/* t/drivers/grad-model.c - a forward and backward pass of a small model,
 * or a few training steps of it, for t/interop/t-grad-torch.sh and
 * t/interop/t-optim-torch.sh to compare with PyTorch.
 *
 *   grad-model mlp|block DTYPE IN.safetensors OUT.safetensors [adamw|sgd STEPS]
 *
 * Reads the inputs and parameters (f32) from IN, converts them to DTYPE
 * (f32 or bf16), makes every float one a leaf, computes the loss and runs
 * backward; writes "loss" and "grad.<name>" for each leaf (as f32) to OUT.
 * With an optimizer, trains instead for STEPS steps, step s on the batch
 * "x.<s>" and "target.<s>" (mlp) or "targets.<s>" (block) of IN: each
 * step the loss, backward, clip_grad_norm(1.0), the learning rate of step
 * s from tendo_lr_cosine(s, 2, STEPS, LR, LR / 10), the optimizer's step
 * over every parameter (every leaf: the data are not), zero_grad; writes "loss"
 * and "norm" (one value per step) and "param.<name>" after the last step.
 * AdamW: LR 3e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1; SGD: LR
 * 0.05, momentum 0.9, Nesterov, weight decay 1e-3.
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

/* The leaf called name: made from IN at its first use. */
static tendo_tensor *leaf(const char *name)
{
    tendo_tensor *src;

    for (int i = 0; i < nparams; i++)
        if (!strcmp(params[i].name, name))
            return params[i].t;
    src = M(tendo_collection_get(in, name));
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

/* The training step whose batch the data are (x, target, targets:
 * "x.<step>" in IN...), or -1: the data are IN's own "x", as leaves. */
static int batch = -1;
enum { MAXD = 4 };
static tendo_tensor *batch_data[MAXD]; /* this step's, freed by end_batch */
static int nbatch;

/* Data tensor name: a leaf, or this step's batch converted to DTYPE (the
 * targets stay i64). */
static tendo_tensor *data(const char *name)
{
    char key[64];
    tendo_tensor *src, *t;

    if (batch < 0)
        return strcmp(name, "targets") ? leaf(name) : M(tendo_collection_get(in, name));
    snprintf(key, sizeof key, "%s.%d", name, batch);
    src = M(tendo_collection_get(in, key));
    t = M(tendo_tensor_to_dtype(src, tendo_tensor_dtype(src) == TENDO_I64 ? TENDO_I64 : dt));
    if (nbatch == MAXD)
        die("too many data tensors");
    return batch_data[nbatch++] = t;
}

static void end_batch(void)
{
    while (nbatch)
        tendo_tensor_free(batch_data[--nbatch]);
}

#include "grad-models.h"

/* The models of t/lib/grad-models.h on the inputs' leaves, for tensor type T
 * (AS: the erased handle's view as T). */
#define MODEL(T, AS)                                                                                          \
    GRAD_MODELS(T)                                                                                            \
    static T *mlp_##T(void)                                                                                   \
    {                                                                                                         \
        T *x = AS(data("x")), *y = AS(data("target"));                                                        \
        T *w[3] = {AS(leaf("w1")), AS(leaf("w2")), AS(leaf("w3"))};                                           \
        T *b[3] = {AS(leaf("b1")), AS(leaf("b2")), AS(leaf("b3"))};                                           \
                                                                                                              \
        return mlp_loss_##T(x, y, w, b);                                                                      \
    }                                                                                                         \
    static T *block_##T(int hq, int hkv)                                                                      \
    {                                                                                                         \
        block_params_##T p = {AS(data("x")), AS(leaf("attn_norm")), AS(leaf("wq")), AS(leaf("wk")), AS(leaf("wv")),  \
                       AS(leaf("wo")), AS(leaf("ffn_norm")), AS(leaf("w_gate")), AS(leaf("w_up")),            \
                       AS(leaf("w_down")), AS(leaf("lm_head"))};                                              \
        const tensor_i64 *tg = M(tendo_as_i64(data("targets")));                                             \
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

/* The loss of the model on the leaves (made at the first call), as an
 * erased handle the caller frees. */
static tendo_tensor *forward(void)
{
    if (dt == TENDO_F32)
        return tensor_erase(strcmp(model, "mlp") == 0 ? mlp_tensor_f32()
                                                      : block_tensor_f32(meta_int("heads"), meta_int("kv_heads")));
#ifdef TENDO_HAVE_BF16
    return tensor_erase(strcmp(model, "mlp") == 0 ? mlp_tensor_bf16()
                                                  : block_tensor_bf16(meta_int("heads"), meta_int("kv_heads")));
#else
    return NULL;
#endif
}

static void backward(tendo_tensor *loss)
{
    tendo_status st = TENDO_ERR_DTYPE;

    if (dt == TENDO_F32)
        st = tensor_backward(tendo_as_f32(loss), NULL);
#ifdef TENDO_HAVE_BF16
    else
        st = tensor_backward(tendo_as_bf16(loss), NULL);
#endif
    if (st != TENDO_OK)
        die("backward");
}

static double value(const tendo_tensor *t)
{
    tendo_tensor *f = M(tendo_tensor_to_dtype(t, TENDO_F32));
    float v;

    if (tensor_copy_to(tendo_as_f32(f), &v, 1) != TENDO_OK)
        die("copy_to");
    tendo_tensor_free(f);
    return v;
}

/* STEPS training steps with optimizer kind (adamw, sgd); see the top. */
static void train(const char *kind, int steps)
{
    bool adamw = strcmp(kind, "adamw") == 0;
    double lr = adamw ? 3e-3 : 0.05;
    tendo_optimizer *opt = M(adamw ? tendo_adamw_new(lr, 0.9, 0.95, 1e-8, 0.1) : tendo_sgd_new(lr, 0.9, 1e-3, true));
    float *losses = M(calloc((size_t)steps, sizeof *losses)), *norms = M(calloc((size_t)steps, sizeof *norms));
    char name[96];

    for (int s = 0; s < steps; s++) {
        tendo_tensor *loss;

        batch = s;
        loss = M(forward());
        losses[s] = (float)value(loss);
        backward(loss);
        tendo_tensor_free(loss);
        end_batch();
        if (s == 0)
            for (int i = 0; i < nparams; i++)
                if (tendo_optimizer_add(opt, params[i].t) != TENDO_OK)
                    die("optimizer_add");
        norms[s] = (float)tendo_optimizer_clip_grad_norm(opt, 1.0);
        if (norms[s] < 0)
            die("clip_grad_norm");
        tendo_optimizer_set_lr(opt, tendo_lr_cosine(s, 2, steps, lr, lr / 10));
        if (tendo_optimizer_step(opt) != TENDO_OK)
            die("optimizer_step");
        tendo_optimizer_zero_grad(opt);
    }
    {
        tensor_f32 *l = M(tensor_f32_from_data(losses, TENDO_SHAPE(steps), tendo_cpu()));
        tensor_f32 *n = M(tensor_f32_from_data(norms, TENDO_SHAPE(steps), tendo_cpu()));
        put("loss", tensor_erase(l));
        put("norm", tensor_erase(n));
        tensor_free(l);
        tensor_free(n);
    }
    for (int i = 0; i < nparams; i++) {
        snprintf(name, sizeof name, "param.%s", params[i].name);
        put(name, params[i].t);
    }
    tendo_optimizer_free(opt);
    free(losses);
    free(norms);
}

int main(int argc, char **argv)
{
    tendo_tensor *loss;
    char name[96];

    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: grad-model mlp|block f32|bf16 IN.safetensors OUT.safetensors [adamw|sgd STEPS]\n");
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
    if (argc == 7) {
        train(argv[5], atoi(argv[6]));
    } else {
        loss = M(forward());
        backward(loss);
        put("loss", loss);
        tendo_tensor_free(loss);
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
        }
    }
    for (int i = 0; i < nparams; i++)
        tendo_tensor_free(params[i].t);
    if (tendo_safetensors_save(argv[4], out) != TENDO_OK)
        die("safetensors_save");
    tendo_collection_free(out);
    tendo_collection_free(in);
    return 0;
}
