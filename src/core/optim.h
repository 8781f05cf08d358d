/* src/core/optim.h - the per-parameter optimizer updates behind
 * tensor_<dt>_adamw_update and tensor_<dt>_sgd_update
 * (gen/registry/optim.toml): their checks, and the choice between the
 * CPU kernel of the dtype's accumulation type and its CUDA launcher. */
#ifndef TENDO_SRC_CORE_OPTIM_H
#define TENDO_SRC_CORE_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/launch.h"
#include "core/traits.h"
#include "tendo/optim.h"

/* A CPU update kernel (src/gen/cpu_optim_<acc>.c). */
typedef void (*tendo__optim_cpu_fn)(const tendo__cu_optim *w, const tendo__traits *t);

/* One AdamW step of param (see tensor_<dt>_adamw_update): TENDO_OK, or an
 * error with nothing written. */
tendo_status tendo__adamw_update(const char *op, tendo__tensor *param, const tendo__tensor *grad,
                                 tendo__tensor *exp_avg, tendo__tensor *exp_avg_sq, tendo__tensor *master, double lr,
                                 double beta1, double beta2, double eps, double weight_decay, int64_t step,
                                 tendo__optim_cpu_fn cpu, tendo__cu_optim_fn cu);
/* One SGD step of param (see tensor_<dt>_sgd_update): the same. */
tendo_status tendo__sgd_update(const char *op, tendo__tensor *param, const tendo__tensor *grad,
                               tendo__tensor *momentum_buffer, tendo__tensor *master, double lr, double momentum,
                               double weight_decay, bool nesterov, int64_t step, tendo__optim_cpu_fn cpu,
                               tendo__cu_optim_fn cu);

/* What tendo_optimizer (src/core/optimizer.c) needs of each float dtype,
 * written by templates/api/traits.c.j2: its two updates (the typed entry
 * points, so grad mode and versions are handled as for any caller), the
 * sum of a gradient's squares in the state dtype (-1 with the error set on
 * failure), and a new tensor of a gradient times s, rounded once (NULL with
 * the error set). */
typedef struct {
    tendo_status (*adamw)(tendo__tensor *param, const tendo__tensor *grad, tendo__tensor *exp_avg,
                          tendo__tensor *exp_avg_sq, tendo__tensor *master, double lr, double beta1, double beta2,
                          double eps, double weight_decay, int64_t step);
    tendo_status (*sgd)(tendo__tensor *param, const tendo__tensor *grad, tendo__tensor *momentum_buffer,
                        tendo__tensor *master, double lr, double momentum, double weight_decay, bool nesterov,
                        int64_t step);
    double (*sumsq)(const tendo__tensor *g);
    tendo__tensor *(*scale)(const tendo__tensor *g, double s);
} tendo__optim_kit;

/* The kit of a float dtype; NULL for the others. */
const tendo__optim_kit *tendo__optim_kit_of(tendo_dtype dtype);

/* The live gradient of parameter i of opt (the leaf's own tensor, no new
 * handle), or NULL when it has none or i is out of range: for
 * tendo_optimizer_all_reduce_grads (src/comm/grads.c). */
tendo__tensor *tendo__optimizer_grad(const tendo_optimizer *opt, int64_t i);

#endif
