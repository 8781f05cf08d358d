/* src/core/transformer.h - rope, attention and attention's gradients: the
 * shapes and argument checks (src/core/transformer.c), which hand checked
 * operands to the device table's entries (src/cpu/attention.c and
 * src/cpu/attention_back.c on the CPU). */
#ifndef TENDO_SRC_CORE_TRANSFORMER_H
#define TENDO_SRC_CORE_TRANSFORMER_H

#include "core/internal.h"

/* tensor_<dt>_rope for every float dtype: a new tensor, or NULL with the
 * error set (gen/registry/nn.toml has the semantics). */
tendo__tensor *tendo__rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot_dims,
                           double base, bool interleaved);
/* tensor_<dt>_attention for every float dtype; mask may be NULL. */
tendo__tensor *tendo__attention(const char *op, const tendo__tensor *q, const tendo__tensor *k,
                                const tendo__tensor *v, const tendo__tensor *mask, bool causal, double scale);
/* The gradients of o = attention(q, k, v, mask, causal, scale) given o
 * and dout, the gradient of o: grads[0], [1], [2] (for q, k, v: new
 * tensors of q's dtype and of q's, k's, v's shape, the caller's) for each
 * wanted one, the rest NULL.  The probabilities are recomputed blockwise
 * (never Lq x Lk), grouped-query heads summed.  False with the error set
 * and every grads[i] NULL. */
bool tendo__attention_backward(const char *op, const tendo__tensor *q, const tendo__tensor *k,
                               const tendo__tensor *v, const tendo__tensor *mask, bool causal, double scale,
                               const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                               tendo__tensor *grads[3]);

/* One attention problem, checked: q [lead..., hq, lq, d], k [lead..., hkv,
 * lk, d], v [lead..., hkv, lk, dv] (lead: nlead dims, batch = their
 * product; none when q is 2-D, and then hq = hkv = 1), scale resolved
 * (never 0).  The mask element of (batch b, head h, query i, key j) is at
 * element offset sum(digit_d(b) * mask_lead[d]) + h * mask_h + i * mask_q +
 * j * mask_k from the mask's first element (strides 0 where it
 * broadcasts). */
typedef struct tendo__attn {
    int64_t batch, hq, hkv, lq, lk, d, dv;
    bool causal;
    double scale;
    int nlead;
    int64_t lead[TENDO_MAX_DIMS], mask_lead[TENDO_MAX_DIMS];
    int64_t mask_h, mask_q, mask_k;
} tendo__attn;

#endif /* TENDO_SRC_CORE_TRANSFORMER_H */
