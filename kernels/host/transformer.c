/* kernels/host/transformer.c - rope, attention and attention's gradients
 * on a GPU: the device table's entries (core/transformer.c has checked the
 * arguments).
 *
 * As on the CPU (src/cpu/attention.c), the kernels compute in the dtype's
 * compute type, float or double, on dense operands: a tensor of another
 * dtype or layout is first converted into a dense compute-type copy on the
 * device, and the result is narrowed into the dtype once at the end.  A
 * mask is read in place, broadcast through its strides, when it already
 * has the compute type; otherwise its own elements (not the broadcast
 * score shape) are converted. */
#include <stdio.h>
#include <string.h>

#include "core/traits.h"
#include "core/transformer.h"
#include "host/attention.h"
#include "host/glue.h"
#include "tendo/erased.h"

/* The dtype the kernels compute in for dt. */
static tendo_dtype compute_dtype(tendo_dtype dt)
{
    return tendo__compute_dtype(tendo__traits_of(dt)->compute);
}

/* Whether the kernels compute in double for compute dtype ct. */
static bool in_double(tendo_dtype ct) { return tendo__traits_of(ct)->compute == TENDO__COMPUTE_DOUBLE; }

/* t converted to dtype to by the public conversion, whose failure is
 * reported as op's ("attention: to_f32: out of memory ..."). */
static tendo__tensor *convert(const char *op, const tendo__tensor *t, tendo_dtype to)
{
    tendo__tensor *c = (tendo__tensor *)(void *)tendo_tensor_to_dtype((const tendo_tensor *)(const void *)t, to);
    char msg[512];

    if (!c) {
        snprintf(msg, sizeof msg, "%s", tendo_error_message(tendo_last_error()));
        tendo__fail(tendo_error_status(tendo_last_error()), op, "%s", msg);
    }
    return c;
}

/* A dense copy (or a new handle, when t already is one) of t in dtype ct,
 * on t's device; NULL with the error set. */
static tendo__tensor *dense_as(const char *op, const tendo__tensor *t, tendo_dtype ct)
{
    return t->dtype == ct ? tendo__contiguous(op, t) : convert(op, t, ct);
}

/* A new tensor of dtype dt holding the compute-type result r (which it
 * takes over): r itself when dt is the compute type, else r narrowed. */
static tendo__tensor *narrow_result(const char *op, tendo__tensor *r, tendo_dtype dt)
{
    tendo__tensor *out;

    if (!r || r->dtype == dt)
        return r;
    out = convert(op, r, dt);
    tendo__tensor_free(r);
    return out;
}

tendo__tensor *tendo__cuda_rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot,
                                double base, bool interleaved)
{
    tendo_dtype ct = compute_dtype(x->dtype);
    int64_t seq = x->shape[x->ndim - 2], hd = x->shape[x->ndim - 1], tab = 2 * seq * (rot / 2);
    tendo__tensor *X = NULL, *P = NULL, *table = NULL, *r = NULL;
    tendo__cu_rope k = {0};
    bool ok = false;

    if (!(r = tendo__tensor_new(op, ct, x->ndim, x->shape, x->storage->device)))
        return NULL;
    if (r->numel == 0)
        return narrow_result(op, r, x->dtype);
    if (!(X = dense_as(op, x, ct)) || !(P = tendo__contiguous(op, positions)) ||
        !(table = tendo__tensor_new(op, ct, 1, &tab, x->storage->device)))
        goto done;
    k.rows = x->numel / hd;
    k.seq = seq;
    k.hd = hd;
    k.rot = rot;
    k.interleaved = interleaved;
    k.base = base;
    k.x = tendo__tensor_data(X);
    k.out = tendo__tensor_data(r);
    k.table = tendo__tensor_data(table);
    k.pos = tendo__tensor_data(P);
    {
        const tendo__tensor *ts[] = {r, X, P, table};
        ok = tendo__cuda_begin(op, ts, 4) &&
             tendo__cuda_end(ts, 4, tendo__cuda_ok(op, tendo__cu_rope_run(&k, in_double(ct))));
    }
done:
    tendo__tensor_free(X);
    tendo__tensor_free(P);
    tendo__tensor_free(table);
    if (!ok) {
        tendo__tensor_free(r);
        return NULL;
    }
    return narrow_result(op, r, x->dtype);
}

/* k->mask_* for the dense mask M (mask's elements, converted): its strides
 * broadcast to [lead..., hq, lq, lk] as core/transformer.c does. */
static void dense_mask_strides(const tendo__attn *a, const tendo__tensor *M, tendo__cu_attn *k)
{
    int nd = a->nlead + 3;
    int64_t stride[TENDO_MAX_DIMS + 3];

    for (int d = 0; d < nd; d++) {
        int md = d - (nd - M->ndim);
        stride[d] = md < 0 || M->shape[md] == 1 ? 0 : M->stride[md];
    }
    for (int d = 0; d < a->nlead; d++)
        k->mask_lead[d] = stride[d];
    k->mask_h = stride[a->nlead];
    k->mask_q = stride[a->nlead + 1];
    k->mask_k = stride[a->nlead + 2];
}

/* The kernels' view of the checked problem a (no operands yet). */
static void fill_attn(const tendo__attn *a, tendo__cu_attn *c)
{
    c->batch = a->batch;
    c->hq = a->hq;
    c->hkv = a->hkv;
    c->lq = a->lq;
    c->lk = a->lk;
    c->d = a->d;
    c->dv = a->dv;
    c->causal = a->causal;
    c->nlead = a->nlead;
    c->scale = a->scale;
    for (int d = 0; d < a->nlead; d++) {
        c->lead[d] = a->lead[d];
        c->mask_lead[d] = a->mask_lead[d];
    }
    c->mask_h = a->mask_h;
    c->mask_q = a->mask_q;
    c->mask_k = a->mask_k;
}

/* The kernels' operands q, k, v (and the mask, read in place when it has
 * the compute type ct) in c, from dense compute-type copies made into
 * dense[0..3) (dense[3]: the mask's, or NULL); false with the error set. */
static bool attn_operands(const char *op, const tendo__attn *a, const tendo__tensor *q, const tendo__tensor *k,
                          const tendo__tensor *v, const tendo__tensor *mask, tendo_dtype ct, tendo__tensor *dense[4],
                          tendo__cu_attn *c)
{
    if (!(dense[0] = dense_as(op, q, ct)) || !(dense[1] = dense_as(op, k, ct)) || !(dense[2] = dense_as(op, v, ct)))
        return false;
    if (mask && mask->dtype != ct) {
        if (!(dense[3] = dense_as(op, mask, ct)))
            return false;
        dense_mask_strides(a, dense[3], c);
    }
    c->q = tendo__tensor_data(dense[0]);
    c->k = tendo__tensor_data(dense[1]);
    c->v = tendo__tensor_data(dense[2]);
    c->mask = dense[3] ? tendo__tensor_data(dense[3]) : mask ? tendo__tensor_data(mask) : NULL;
    return true;
}

tendo__tensor *tendo__cuda_attention(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                     const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask)
{
    tendo_dtype ct = compute_dtype(q->dtype);
    int64_t shape[TENDO_MAX_DIMS];
    tendo__tensor *dense[4] = {NULL}, *r;
    tendo__cu_attn c = {0};
    bool ok = false;

    memcpy(shape, q->shape, sizeof shape);
    shape[q->ndim - 1] = a->dv;
    fill_attn(a, &c);
    if (!tendo__cu_attention_tiles(&c, in_double(ct))) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                    "head dims D = %lld, Dv = %lld are too large for the GPU kernel: one query and one key "
                    "row must fit 48 KiB of shared memory", (long long)a->d, (long long)a->dv);
        return NULL;
    }
    if (!(r = tendo__tensor_new(op, ct, q->ndim, shape, q->storage->device)))
        return NULL;
    if (r->numel == 0)
        return narrow_result(op, r, q->dtype);
    if (attn_operands(op, a, q, k, v, mask, ct, dense, &c)) {
        const tendo__tensor *ts[] = {r, dense[0], dense[1], dense[2], dense[3] ? dense[3] : mask};

        c.out = tendo__tensor_data(r);
        ok = tendo__cuda_begin(op, ts, 5) &&
             tendo__cuda_end(ts, 5, tendo__cuda_ok(op, tendo__cu_attention_run(&c, in_double(ct))));
    }
    for (int i = 0; i < 4; i++)
        tendo__tensor_free(dense[i]);
    if (!ok) {
        tendo__tensor_free(r);
        return NULL;
    }
    return narrow_result(op, r, q->dtype);
}

bool tendo__cuda_attention_backward(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                    const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask,
                                    const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                                    tendo__tensor *grads[3])
{
    tendo_dtype ct = compute_dtype(q->dtype);
    const tendo__tensor *like[3] = {q, k, v};
    tendo__tensor *dense[4] = {NULL}, *O = NULL, *dO = NULL, *g[3] = {NULL}, *scratch = NULL;
    tendo__cu_attn_back c;
    int64_t rows = 2 * a->batch * a->hq * a->lq;
    bool ok = false;

    grads[0] = grads[1] = grads[2] = NULL;
    memset(&c, 0, sizeof c);
    fill_attn(a, &c.a);
    if (!tendo__cu_attention_back_tiles(&c, in_double(ct))) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                    "head dims D = %lld, Dv = %lld are too large for the GPU kernels of attention's backward",
                    (long long)a->d, (long long)a->dv);
        return false;
    }
    /* dk and dv are computed together, dq alone */
    for (int i = 0; i < 3; i++)
        if ((want[i] || (i > 0 && (want[1] || want[2]))) &&
            !(g[i] = tendo__tensor_new(op, ct, like[i]->ndim, like[i]->shape, q->storage->device)))
            goto done;
    if (!attn_operands(op, a, q, k, v, mask, ct, dense, &c.a) || !(O = dense_as(op, out, ct)) ||
        !(dO = dense_as(op, dout, ct)) || !(scratch = tendo__tensor_new(op, ct, 1, &rows, q->storage->device)))
        goto done;
    c.o = tendo__tensor_data(O);
    c.dout = tendo__tensor_data(dO);
    c.dq = g[0] ? tendo__tensor_data(g[0]) : NULL;
    c.dk = g[1] ? tendo__tensor_data(g[1]) : NULL;
    c.dv = g[2] ? tendo__tensor_data(g[2]) : NULL;
    c.lse = tendo__tensor_data(scratch);
    c.dd = (char *)c.lse + (size_t)(rows / 2) * tendo__traits_of(ct)->size;
    {
        /* dense[0] first: begin and end take the device from ts[0]; NULL entries are skipped */
        const tendo__tensor *ts[] = {dense[0], dense[1], dense[2], dense[3] ? dense[3] : mask, O, dO, scratch,
                                     g[0], g[1], g[2]};

        ok = tendo__cuda_begin(op, ts, 10) &&
             tendo__cuda_end(ts, 10, tendo__cuda_ok(op, tendo__cu_attention_back_run(&c, in_double(ct))));
    }
done:
    for (int i = 0; i < 4; i++)
        tendo__tensor_free(dense[i]);
    tendo__tensor_free(O);
    tendo__tensor_free(dO);
    tendo__tensor_free(scratch);
    for (int i = 0; i < 3; i++) {
        if (ok && want[i] && !(grads[i] = narrow_result(op, g[i], q->dtype)))
            ok = false;
        else if (!grads[i])
            tendo__tensor_free(g[i]);
    }
    if (!ok)
        for (int i = 0; i < 3; i++) {
            tendo__tensor_free(grads[i]);
            grads[i] = NULL;
        }
    return ok;
}
