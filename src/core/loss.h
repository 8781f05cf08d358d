/* src/core/loss.h - cross_entropy's argument checks, shared by its CPU
 * kernels of every accumulation type (templates/cpu/reduce/) and through
 * them by the CUDA launchers. */
#ifndef TENDO_SRC_CORE_LOSS_H
#define TENDO_SRC_CORE_LOSS_H

#include "core/internal.h"

/* cross_entropy's operands, checked: x is the logits as [rows, classes]
 * (a 1-D logits tensor is one row), t the target as [rows, classes] with
 * stride 0 along the classes (each row's target repeated along it, the
 * second input of a row kernel); counted is the number of targets that
 * are not ignore_index. */
typedef struct {
    tendo__tensor x, t;
    int64_t rows, classes, counted;
} tendo__ce;

/* Checks logits, target and label smoothing, reads the targets (from the
 * GPU when they are there) and checks each against the class count.
 * False with the error set. */
bool tendo__ce_prepare(const char *op, const tendo__tensor *logits, const tendo__tensor *target, int64_t ignore_index,
                       double smoothing, tendo__ce *ce);

#endif /* TENDO_SRC_CORE_LOSS_H */
