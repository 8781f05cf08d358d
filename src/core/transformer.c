/* src/core/transformer.c - rope, attention and attention's gradients:
 * argument checks and shapes, then the device's kernels (core/device.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/traits.h"
#include "core/transformer.h"

/* Whether v is finite once converted to dt's compute type (float for
 * every float dtype narrower than f64). */
static bool finite_in(tendo_dtype dt, double v)
{
    return isfinite(v) && (tendo__traits_of(dt)->compute != TENDO__COMPUTE_FLOAT || fabs(v) <= FLT_MAX);
}

static const char *compute_name(tendo_dtype dt)
{
    return tendo__traits_of(dt)->compute == TENDO__COMPUTE_FLOAT ? "float" : "double";
}

/* Checks the named tensors (NULL entries of an optional one are skipped)
 * and that they share one device; false with the error set. */
static bool check_operands(const char *op, int n, const char *const *names, const tendo__tensor *const *ts)
{
    const tendo__tensor *first = NULL;

    for (int i = 0; i < n; i++) {
        if (!ts[i] && !strcmp(names[i], "mask"))
            continue;
        if (!tendo__check_tensor(op, names[i], ts[i]))
            return false;
        if (!first) {
            first = ts[i];
        } else if (!tendo_device_equal(first->storage->device, ts[i]->storage->device)) {
            tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "%s is on %s, %s on %s", names[0],
                        tendo_device_str(first->storage->device), names[i], tendo_device_str(ts[i]->storage->device));
            return false;
        }
    }
    return tendo__check_device(op, first->storage->device);
}

tendo__tensor *tendo__rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot_dims,
                           double base, bool interleaved)
{
    tendo__op_scope s = tendo__op_begin();
    static const char *const names[] = {"x", "positions"};
    const tendo__tensor *ts[] = {x, positions};
    const tendo__device_ops *ops;
    tendo__tensor *out;
    int64_t seq, hd;

    if (!check_operands(op, 2, names, ts))
        return NULL;
    if (x->ndim < 2) {
        tendo__fail(TENDO_ERR_SHAPE, op, "x has shape %s: it needs [..., seq, head_dim]",
                    tendo__shape_str(x->ndim, x->shape).s);
        return NULL;
    }
    seq = x->shape[x->ndim - 2];
    hd = x->shape[x->ndim - 1];
    if (positions->dtype != TENDO_I64 || positions->ndim != 1 || positions->shape[0] != seq) {
        tendo__fail(TENDO_ERR_SHAPE, op, "positions must be an i64 tensor of shape [%lld] (x has shape %s), not %s %s",
                    (long long)seq, tendo__shape_str(x->ndim, x->shape).s, tendo__traits_of(positions->dtype)->name,
                    tendo__shape_str(positions->ndim, positions->shape).s);
        return NULL;
    }
    if (rot_dims <= 0 || rot_dims > hd || rot_dims % 2) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "rot_dims %lld must be even and in [2, head_dim = %lld]",
                    (long long)rot_dims, (long long)hd);
        return NULL;
    }
    if (!(base > 0) || !finite_in(x->dtype, base)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "base %g must be positive and finite in %s, x's compute type", base,
                    compute_name(x->dtype));
        return NULL;
    }
    ops = tendo__device_ops_of(x->storage->device.type);
    if (!ops->rope) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "rope is not implemented on %s yet",
                    tendo_device_str(x->storage->device));
        return NULL;
    }
    out = ops->rope(op, x, positions, rot_dims, base, interleaved);
    return out ? tendo__op_end(s, op, out, x, positions) : NULL;
}

/* Fills a->mask_* with mask's strides broadcast to [lead..., hq, lq, lk];
 * false with the error set when it does not broadcast. */
static bool mask_strides(const char *op, const tendo__tensor *mask, const tendo__tensor *q, tendo__attn *a)
{
    int nd = a->nlead + 3;
    int64_t want[TENDO_MAX_DIMS + 3], stride[TENDO_MAX_DIMS + 3];

    memcpy(want, a->lead, (size_t)a->nlead * sizeof *want);
    want[a->nlead] = a->hq;
    want[a->nlead + 1] = a->lq;
    want[a->nlead + 2] = a->lk;
    if (mask->ndim > nd)
        goto bad;
    for (int d = 0; d < nd; d++) {
        int md = d - (nd - mask->ndim);
        int64_t size = md < 0 ? 1 : mask->shape[md];

        if (size != 1 && size != want[d])
            goto bad;
        stride[d] = size == 1 ? 0 : mask->stride[md];
    }
    memcpy(a->mask_lead, stride, (size_t)a->nlead * sizeof *stride);
    a->mask_h = stride[a->nlead];
    a->mask_q = stride[a->nlead + 1];
    a->mask_k = stride[a->nlead + 2];
    return true;
bad:
    tendo__fail(TENDO_ERR_SHAPE, op, "mask of shape %s does not broadcast to the scores' shape %s (q %s)",
                tendo__shape_str(mask->ndim, mask->shape).s, tendo__shape_str(nd, want).s,
                tendo__shape_str(q->ndim, q->shape).s);
    return false;
}

/* Checks attention's operands and fills a (core/transformer.h); false with
 * the error set. */
static bool attn_setup(const char *op, const tendo__tensor *q, const tendo__tensor *k, const tendo__tensor *v,
                       const tendo__tensor *mask, bool causal, double scale, tendo__attn *a)
{
    static const char *const names[] = {"q", "k", "v", "mask"};
    const tendo__tensor *ts[] = {q, k, v, mask};
    int nd;

    if (!check_operands(op, 4, names, ts))
        return false;
    nd = q->ndim;
    if (nd < 2 || k->ndim != nd || v->ndim != nd) {
        tendo__fail(TENDO_ERR_SHAPE, op, "q %s, k %s and v %s need one number of dims, at least 2 ([..., heads, len, dim])",
                    tendo__shape_str(q->ndim, q->shape).s, tendo__shape_str(k->ndim, k->shape).s,
                    tendo__shape_str(v->ndim, v->shape).s);
        return false;
    }
    a->nlead = nd >= 3 ? nd - 3 : 0;
    a->batch = 1;
    for (int d = 0; d < a->nlead; d++) {
        if (k->shape[d] != q->shape[d] || v->shape[d] != q->shape[d])
            goto bad_shape;
        a->lead[d] = q->shape[d];
        a->batch *= q->shape[d];
    }
    a->hq = nd >= 3 ? q->shape[nd - 3] : 1;
    a->hkv = nd >= 3 ? k->shape[nd - 3] : 1;
    a->lq = q->shape[nd - 2];
    a->d = q->shape[nd - 1];
    a->lk = k->shape[nd - 2];
    a->dv = v->shape[nd - 1];
    if (k->shape[nd - 1] != a->d || v->shape[nd - 2] != a->lk || (nd >= 3 && v->shape[nd - 3] != a->hkv))
        goto bad_shape;
    if (a->hkv == 0 ? a->hq != 0 : a->hq % a->hkv != 0) {
        tendo__fail(TENDO_ERR_SHAPE, op, "q's %lld heads are not a multiple of k's and v's %lld",
                    (long long)a->hq, (long long)a->hkv);
        return false;
    }
    if (!finite_in(q->dtype, scale)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "scale %g is not finite in %s, q's compute type", scale,
                    compute_name(q->dtype));
        return false;
    }
    a->scale = scale != 0 ? scale : 1.0 / sqrt((double)(a->d > 0 ? a->d : 1));
    a->causal = causal;
    if (mask && mask->dtype != q->dtype) {
        tendo__fail(TENDO_ERR_DTYPE, op, "mask is %s, q is %s", tendo__traits_of(mask->dtype)->name,
                    tendo__traits_of(q->dtype)->name);
        return false;
    }
    return !mask || mask_strides(op, mask, q, a);
bad_shape:
    tendo__fail(TENDO_ERR_SHAPE, op, "q %s, k %s and v %s do not fit [..., Hq, Lq, D], [..., Hkv, Lk, D], [..., Hkv, Lk, Dv]",
                tendo__shape_str(q->ndim, q->shape).s, tendo__shape_str(k->ndim, k->shape).s,
                tendo__shape_str(v->ndim, v->shape).s);
    return false;
}

tendo__tensor *tendo__attention(const char *op, const tendo__tensor *q, const tendo__tensor *k,
                                const tendo__tensor *v, const tendo__tensor *mask, bool causal, double scale)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__device_ops *ops;
    tendo__attn a = {0};
    tendo__tensor *out;

    if (!attn_setup(op, q, k, v, mask, causal, scale, &a))
        return NULL;
    ops = tendo__device_ops_of(q->storage->device.type);
    if (!ops->attention) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "attention is not implemented on %s yet",
                    tendo_device_str(q->storage->device));
        return NULL;
    }
    out = ops->attention(op, &a, q, k, v, mask);
    return out ? tendo__op_end(s, op, out, q, k) : NULL;
}

bool tendo__attention_backward(const char *op, const tendo__tensor *q, const tendo__tensor *k,
                               const tendo__tensor *v, const tendo__tensor *mask, bool causal, double scale,
                               const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                               tendo__tensor *grads[3])
{
    static const char *const names[] = {"out", "grad"};
    const tendo__tensor *ts[] = {out, dout};
    const tendo__device_ops *ops;
    tendo__attn a = {0};
    int nd;

    grads[0] = grads[1] = grads[2] = NULL;
    if (!attn_setup(op, q, k, v, mask, causal, scale, &a) || !check_operands(op, 2, names, ts))
        return false;
    nd = q->ndim;
    for (int i = 0; i < 2; i++) {
        bool fits = ts[i]->ndim == nd && ts[i]->dtype == q->dtype &&
                    tendo_device_equal(ts[i]->storage->device, q->storage->device) &&
                    !memcmp(ts[i]->shape, q->shape, (size_t)(nd - 1) * sizeof *q->shape) &&
                    ts[i]->shape[nd - 1] == a.dv;

        if (!fits) {
            tendo__fail(TENDO_ERR_SHAPE, op, "%s is %s %s on %s: attention's output is %s [..., %lld, %lld, %lld] on %s",
                        names[i], tendo__traits_of(ts[i]->dtype)->name, tendo__shape_str(ts[i]->ndim, ts[i]->shape).s,
                        tendo_device_str(ts[i]->storage->device), tendo__traits_of(q->dtype)->name, (long long)a.hq,
                        (long long)a.lq, (long long)a.dv, tendo_device_str(q->storage->device));
            return false;
        }
    }
    ops = tendo__device_ops_of(q->storage->device.type);
    if (!ops->attention_backward) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "attention's backward is not implemented on %s yet",
                    tendo_device_str(q->storage->device));
        return false;
    }
    return ops->attention_backward(op, &a, q, k, v, mask, out, dout, want, grads);
}
