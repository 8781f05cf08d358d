/* src/core/matmul.c - numpy.matmul: shapes and batches, then the device's GEMM. */
#include "core/device.h"
#include "core/events.h"
#include "core/index.h"
#include "core/iter.h"
#include "core/matmul.h"

bool tendo__mm_plan_make(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__mm_plan *p)
{
    tendo__mm_operand *A = &p->A, *B = &p->B;
    int an = a->ndim, bn = b->ndim, abatch, bbatch, nb;

    if (an == 0 || bn == 0) {
        tendo__fail(TENDO_ERR_SHAPE, op, "%s @ %s: operands must have at least one dim",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s);
        return false;
    }
    /* a: [..., m, k]; a 1-D a is [1, k] */
    A->rows = an == 1 ? 1 : a->shape[an - 2];
    A->cols = a->shape[an - 1];
    A->rs = an == 1 ? 0 : a->stride[an - 2];
    A->cs = a->stride[an - 1];
    /* b: [..., k, n]; a 1-D b is [k, 1] */
    B->rows = bn == 1 ? b->shape[0] : b->shape[bn - 2];
    B->cols = bn == 1 ? 1 : b->shape[bn - 1];
    B->rs = bn == 1 ? b->stride[0] : b->stride[bn - 2];
    B->cs = bn == 1 ? 0 : b->stride[bn - 1];
    if (A->cols != B->rows) {
        tendo__fail(TENDO_ERR_SHAPE, op, "%s @ %s: inner dimensions %lld and %lld differ",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s, (long long)A->cols,
                    (long long)B->rows);
        return false;
    }
    abatch = an > 2 ? an - 2 : 0;
    bbatch = bn > 2 ? bn - 2 : 0;
    if (!tendo__broadcast_shapes(op, abatch, a->shape, bbatch, b->shape, &nb, p->batch))
        return false;
    p->nbatches = 1;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - abatch), db = d - (nb - bbatch);
        A->batch_stride[d] = da >= 0 && a->shape[da] != 1 ? a->stride[da] : 0;
        B->batch_stride[d] = db >= 0 && b->shape[db] != 1 ? b->stride[db] : 0;
        p->nbatches *= p->batch[d];
    }
    p->nbatch = nb;
    p->out_ndim = 0;
    for (int d = 0; d < nb; d++)
        p->out_shape[p->out_ndim++] = p->batch[d];
    if (an > 1)
        p->out_shape[p->out_ndim++] = A->rows;
    if (bn > 1)
        p->out_shape[p->out_ndim++] = B->cols;
    if (p->out_ndim > TENDO_MAX_DIMS) {
        tendo__fail(TENDO_ERR_SHAPE, op, "result of %s @ %s has too many dims",
                    tendo__shape_str(an, a->shape).s, tendo__shape_str(bn, b->shape).s);
        return false;
    }
    return true;
}

void tendo__mm_batch_offsets(const tendo__mm_plan *p, int64_t bi, int64_t *aoff, int64_t *boff)
{
    *aoff = *boff = 0;
    for (int d = p->nbatch - 1; d >= 0; d--) {
        int64_t i = bi % p->batch[d];
        bi /= p->batch[d];
        *aoff += i * p->A.batch_stride[d];
        *boff += i * p->B.batch_stride[d];
    }
}

/* Whether out's elements may share memory with t's (same storage and
 * overlapping ranges: a product reads its operands while it writes). */
static bool may_share(const tendo__tensor *out, const tendo__tensor *t)
{
    int64_t olo, ohi, tlo, thi;

    if (out->storage != t->storage || out->numel == 0 || t->numel == 0)
        return false;
    tendo__span(out, out->ndim, out->shape, &olo, &ohi);
    tendo__span(t, t->ndim, t->shape, &tlo, &thi);
    return !(ohi < tlo || thi < olo);
}

/* Whether a's device has the product (i8 x i8 -> i32 where i32 is set);
 * UNSUPPORTED naming the device otherwise.  Checked before the shapes. */
static bool device_has(const char *op, const tendo__tensor *a, bool i32)
{
    if (i32 && !tendo__device_ops_of(a->storage->device.type)->matmul_i32) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no int8 matmul on %s yet (move the tensors to the CPU first)",
                    tendo_device_str(a->storage->device));
        return false;
    }
    return true;
}

/* a @ b into the dense out (the plan's shape, the operands' device and
 * dtype) by the device's kernel (device_has checked); false with the
 * error set. */
static bool run(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out, bool i32)
{
    const tendo__device_ops *ops = tendo__device_ops_of(a->storage->device.type);

    return (i32 ? ops->matmul_i32 : ops->matmul)(op, a, b, out);
}

/* a @ b into a new tensor of their dtype, or i32 for i8 operands (i32). */
static tendo__tensor *product(const char *op, const tendo__tensor *a, const tendo__tensor *b, bool i32)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__tensor *in[2] = {a, b};
    tendo__mm_plan p;
    tendo__tensor *out;
    tendo_dtype dt;

    if (!tendo__check_inputs(op, 2, in) || !device_has(op, a, i32) || !tendo__mm_plan_make(op, a, b, &p))
        return NULL;
    dt = a->dtype;
#ifdef TENDO_HAVE_I32
    if (i32)
        dt = TENDO_I32;
#endif
    if (!(out = tendo__tensor_new(op, dt, p.out_ndim, p.out_shape, a->storage->device)))
        return NULL;
    if (!run(op, a, b, out, i32)) {
        tendo__tensor_free(out);
        return NULL;
    }
    return tendo__op_end(s, op, out, a, b);
}

/* a @ b into out: checked, then written in place when out is dense, else
 * through a dense temporary copied in. */
static tendo_status product_into(const char *op, tendo__tensor *out, const tendo__tensor *a, const tendo__tensor *b,
                                 bool i32)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__tensor *in[2] = {a, b};
    tendo__mm_plan p;
    tendo__tensor *tmp;
    tendo_status st = TENDO_OK;

    if (!tendo__check_inputs(op, 2, in) || !device_has(op, a, i32) || !tendo__mm_plan_make(op, a, b, &p) ||
        !tendo__check_tensor(op, "out", out))
        return tendo_error_status(tendo_last_error());
    if (may_share(out, a) || may_share(out, b))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "out shares memory with %s (a product reads its operands "
                           "while it writes)", may_share(out, a) ? "a" : "b");
    if (!tendo__check_out(op, out, p.out_ndim, p.out_shape, 2, in))
        return tendo_error_status(tendo_last_error());
    if (tendo__tensor_contiguous(out)) {
        if (!run(op, a, b, out, i32))
            return tendo_error_status(tendo_last_error());
    } else {
        if (!(tmp = tendo__tensor_new(op, out->dtype, p.out_ndim, p.out_shape, a->storage->device)))
            return tendo_error_status(tendo_last_error());
        if (!run(op, a, b, tmp, i32))
            st = tendo_error_status(tendo_last_error());
        else
            st = tendo__copy_into(op, out, tmp);
        tendo__tensor_free(tmp);
        if (st != TENDO_OK)
            return st;
    }
    tendo__op_end(s, op, out, a, b);
    return TENDO_OK;
}

tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    return product(op, a, b, false);
}

tendo__tensor *tendo__matmul_i32(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    return product(op, a, b, true);
}

tendo_status tendo__matmul_out(const char *op, tendo__tensor *out, const tendo__tensor *a, const tendo__tensor *b)
{
    return product_into(op, out, a, b, false);
}

tendo_status tendo__matmul_i32_out(const char *op, tendo__tensor *out, const tendo__tensor *a,
                                   const tendo__tensor *b)
{
    return product_into(op, out, a, b, true);
}

tendo_status tendo__prepack(const char *op, const tendo__tensor *w)
{
    const tendo__tensor *in[1] = {w};
    const tendo__device_ops *ops;

    if (!tendo__check_inputs(op, 1, in))
        return tendo_error_status(tendo_last_error());
    if (w->ndim != 2)
        return tendo__fail(TENDO_ERR_SHAPE, op, "a weight to pack is a matrix [k, n]; w has shape %s",
                           tendo__shape_str(w->ndim, w->shape).s);
    ops = tendo__device_ops_of(w->storage->device.type);
    if (ops->prepack && !ops->prepack(op, w))
        return tendo_error_status(tendo_last_error());
    return TENDO_OK;
}
