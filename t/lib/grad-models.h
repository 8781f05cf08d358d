/* t/lib/grad-models.h - the two models whose gradients t/interop/t-grad-torch.sh
 * compares with PyTorch (through t/drivers/grad-model.c) and bench/bench-grad.c
 * times, written once.  GRAD_MODELS(T) defines, for tensor type T:
 *
 *   T *mlp_loss_T(x, target, w[3], b[3])
 *       mean((W3 gelu(W2 tanh(W1 x + b1) + b2) + b3 - target)^2)
 *   T *block_loss_T(const block_params_T *p, hq, hkv, positions, targets)
 *       one Llama-style decoder block (RMSNorm, RoPE, causal grouped-query
 *       attention, SwiGLU, both residuals) and an output head on p->x
 *       [B, L, D]; the mean cross-entropy of the logits [B*L, V] against
 *       targets [B*L] (cross_entropy); positions: i64 [L].
 *
 * Each returns a new 0-d loss, its intermediates freed (the record keeps
 * what backward needs).  The includer defines M(x): x, or exit with
 * tendo's last error when it is NULL.
 */
#ifndef T_GRAD_MODELS_H
#define T_GRAD_MODELS_H

#include <stddef.h>

#include "tendo.h"

#define GRAD_MODELS(T)                                                                                        \
    static T *mlp_loss_##T(const T *x, const T *y, T *const w[3], T *const b[3])                              \
    {                                                                                                         \
        T *h1 = M(tensor_matmul(x, w[0])), *h1b = M(tensor_add(h1, b[0])), *a1 = M(tensor_tanh(h1b));         \
        T *h2 = M(tensor_matmul(a1, w[1])), *h2b = M(tensor_add(h2, b[1])), *a2 = M(tensor_gelu(h2b));        \
        T *h3 = M(tensor_matmul(a2, w[2])), *o = M(tensor_add(h3, b[2])), *loss = M(tensor_mse_loss(o, y));   \
        T *tmp[] = {h1, h1b, a1, h2, h2b, a2, h3, o};                                                         \
                                                                                                              \
        for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)                                                 \
            tensor_free(tmp[i]);                                                                              \
        return loss;                                                                                          \
    }                                                                                                         \
                                                                                                              \
    /* [B, L, H*hd] -> [B, H, L, hd] */                                                                       \
    static T *heads_##T(const T *t, int64_t b, int64_t l, int64_t h, int64_t hd)                              \
    {                                                                                                         \
        T *r = M(tensor_reshape(t, TENDO_SHAPE(b, l, h, hd)));                                                \
        T *p = M(tensor_transpose(r, 1, 2));                                                                  \
                                                                                                              \
        tensor_free(r);                                                                                       \
        return p;                                                                                             \
    }                                                                                                         \
                                                                                                              \
    typedef struct {                                                                                          \
        T *x, *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down, *lm_head;                   \
    } block_params_##T;                                                                                              \
                                                                                                              \
    static T *block_loss_##T(const block_params_##T *p, int hq, int hkv, const tensor_i64 *pos, const tensor_i64 *tg) \
    {                                                                                                         \
        int64_t b = tensor_shape(p->x)[0], l = tensor_shape(p->x)[1];                                         \
        int64_t hd = tensor_shape(p->wq)[1] / hq, v = tensor_shape(p->lm_head)[1];                            \
        T *h = M(tensor_rms_norm(p->x, p->attn_norm, 1e-6));                                                  \
        T *q0 = M(tensor_matmul(h, p->wq)), *k0 = M(tensor_matmul(h, p->wk)), *v0 = M(tensor_matmul(h, p->wv)); \
        T *q1 = heads_##T(q0, b, l, hq, hd), *k1 = heads_##T(k0, b, l, hkv, hd);                              \
        T *v1 = heads_##T(v0, b, l, hkv, hd);                                                                 \
        T *q = M(tensor_rope(q1, pos, hd, 10000.0, false)), *k = M(tensor_rope(k1, pos, hd, 10000.0, false)); \
        T *at = M(tensor_attention(q, k, v1, NULL, true, 0.0));                                               \
        T *att = M(tensor_transpose(at, 1, 2)), *atm = M(tensor_reshape(att, TENDO_SHAPE(b, l, hq * hd)));    \
        T *ao = M(tensor_matmul(atm, p->wo)), *x2 = M(tensor_add(p->x, ao));                                  \
        T *h2 = M(tensor_rms_norm(x2, p->ffn_norm, 1e-6));                                                    \
        T *g = M(tensor_matmul(h2, p->w_gate)), *sg = M(tensor_silu(g)), *u = M(tensor_matmul(h2, p->w_up));  \
        T *gu = M(tensor_mul(sg, u)), *f = M(tensor_matmul(gu, p->w_down)), *x3 = M(tensor_add(x2, f));       \
        T *lg = M(tensor_matmul(x3, p->lm_head)), *lg2 = M(tensor_reshape(lg, TENDO_SHAPE(b * l, v)));        \
        T *loss = M(tensor_cross_entropy(lg2, tg, -100, 0.0));                                                \
        T *tmp[] = {h, q0, k0, v0, q1, k1, v1, q, k, at, att, atm, ao, x2, h2, g, sg, u, gu, f, x3, lg, lg2}; \
                                                                                                              \
        for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)                                                 \
            tensor_free(tmp[i]);                                                                              \
        return loss;                                                                                          \
    }

#endif
