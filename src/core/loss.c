/* src/core/loss.c - cross_entropy's argument checks (core/loss.h).  The
 * targets are read on the host: a class index out of range must be a clear
 * error before any kernel runs, and the mean needs their count.  That is N
 * integers against the N x C logits the kernels read. */
#include <stdlib.h>

#include "core/iter.h"
#include "core/loss.h"

bool tendo__ce_prepare(const char *op, const tendo__tensor *logits, const tendo__tensor *target, int64_t ignore_index,
                       double smoothing, tendo__ce *ce)
{
    const tendo__tensor *ts[2] = {logits, target};
    int64_t *tv;

    if (!tendo__check_tensor(op, "logits", logits) || !tendo__check_tensor(op, "target", target) ||
        !tendo__check_inputs(op, 2, ts))
        return false;
    if (target->dtype != TENDO_I64) {
        tendo__fail(TENDO_ERR_DTYPE, op, "target is %s, not i64", tendo_dtype_name(target->dtype));
        return false;
    }
    if ((logits->ndim != 1 && logits->ndim != 2) || target->ndim != logits->ndim - 1 ||
        (logits->ndim == 2 && target->shape[0] != logits->shape[0])) {
        tendo__fail(TENDO_ERR_SHAPE, op, "logits %s and target %s: want logits [N, C] and target [N], or [C] and a 0-d target",
                    tendo__shape_str(logits->ndim, logits->shape).s, tendo__shape_str(target->ndim, target->shape).s);
        return false;
    }
    if (!(smoothing >= 0.0 && smoothing <= 1.0)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "label_smoothing %g is not in [0, 1]", smoothing);
        return false;
    }
    ce->rows = logits->ndim == 2 ? logits->shape[0] : 1;
    ce->classes = logits->shape[logits->ndim - 1];
    if (ce->classes == 0) {
        tendo__fail(TENDO_ERR_SHAPE, op, "logits %s have no classes", tendo__shape_str(logits->ndim, logits->shape).s);
        return false;
    }
    ce->x = *logits;
    ce->x.ndim = 2;
    ce->x.shape[0] = ce->rows;
    ce->x.shape[1] = ce->classes;
    ce->x.stride[0] = logits->ndim == 2 ? logits->stride[0] : 0;
    ce->x.stride[1] = logits->stride[logits->ndim - 1];
    ce->t = *target;
    ce->t.ndim = 2;
    ce->t.shape[0] = ce->rows;
    ce->t.shape[1] = ce->classes;
    ce->t.stride[0] = target->ndim ? target->stride[0] : 0;
    ce->t.stride[1] = 0;
    ce->t.numel = ce->x.numel;
    ce->counted = 0;
    if (!(tv = tendo__malloc((size_t)(ce->rows ? ce->rows : 1) * sizeof *tv))) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for %lld targets", (long long)ce->rows);
        return false;
    }
    if (tendo__read_dense(op, target, tv) != TENDO_OK) {
        free(tv);
        return false;
    }
    for (int64_t i = 0; i < ce->rows; i++) {
        if (tv[i] == ignore_index)
            continue;
        if (tv[i] < 0 || tv[i] >= ce->classes) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "target %lld of sample %lld is out of range for %lld classes",
                        (long long)tv[i], (long long)i, (long long)ce->classes);
            free(tv);
            return false;
        }
        ce->counted++;
    }
    free(tv);
    return true;
}
