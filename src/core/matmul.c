/* src/core/matmul.c - numpy.matmul: shapes and batches, then the device's GEMM. */
#include "core/device.h"
#include "core/events.h"
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

tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__tensor *in[2] = {a, b};
    tendo__tensor *out;

    if (!tendo__check_inputs(op, 2, in))
        return NULL;
    out = tendo__device_ops_of(a->storage->device.type)->matmul(op, a, b);
    return out ? tendo__op_end(s, op, out, a, b) : NULL;
}

tendo__tensor *tendo__matmul_i32(const char *op, const tendo__tensor *a, const tendo__tensor *b)
{
    tendo__op_scope s = tendo__op_begin();
    const tendo__tensor *in[2] = {a, b};
    const tendo__device_ops *ops;
    tendo__tensor *out;

    if (!tendo__check_inputs(op, 2, in))
        return NULL;
    ops = tendo__device_ops_of(a->storage->device.type);
    if (!ops->matmul_i32) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "no int8 matmul on %s yet (move the tensors to the CPU first)",
                    tendo_device_str(a->storage->device));
        return NULL;
    }
    out = ops->matmul_i32(op, a, b);
    return out ? tendo__op_end(s, op, out, a, b) : NULL;
}
