/* tendo/optim.h - optimizers: torch.optim.SGD and torch.optim.AdamW over a
 * list of parameters, gradient clipping, a learning-rate schedule, and the
 * optimizer's state in a checkpoint.  Included by <tendo.h>.
 *
 * An optimizer holds its own handle on each parameter (a float tensor that
 * requires grad, given type-erased: tensor_erase(w)) and the state it
 * keeps for it, made at the parameter's first step: AdamW's two moments,
 * SGD's momentum buffer, in f32 (f64 for an f64 parameter).  A bf16, f16
 * or fp8 parameter also gets an f32 master copy: the update runs on the
 * master and the parameter is its rounding, as in mixed-precision training
 * with master weights (a parameter written by someone else between steps
 * is copied into its master at the next step).  Each step is one fused
 * pass per parameter (tensor_<dt>_adamw_update, _sgd_update), on the
 * parameter's device.
 */
#ifndef TENDO_OPTIM_H
#define TENDO_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

#include "tendo/core.h"
#include "tendo/erased.h"
#include "tendo/io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tendo_optimizer tendo_optimizer;

/* torch.optim.SGD(lr, momentum, dampening=0, weight_decay, nesterov): a new
 * optimizer with no parameters, freed with tendo_optimizer_free; NULL with
 * TENDO_ERR_INVALID_ARG for a negative or non-finite number, or nesterov
 * without momentum. */
TENDO_API tendo_optimizer *tendo_sgd_new(double lr, double momentum, double weight_decay, bool nesterov);
/* torch.optim.AdamW(lr, betas=(beta1, beta2), eps, weight_decay): the same;
 * TENDO_ERR_INVALID_ARG also for a beta outside [0, 1). */
TENDO_API tendo_optimizer *tendo_adamw_new(double lr, double beta1, double beta2, double eps, double weight_decay);
/* Adds param (tensor_erase() of a float tensor that requires grad, a
 * leaf) to opt, which keeps its own handle on it (the caller keeps its
 * own).  TENDO_ERR_INVALID_ARG for a parameter that is not such a leaf or
 * was added before. */
TENDO_API tendo_status tendo_optimizer_add(tendo_optimizer *opt, tendo_tensor *param);
/* One step of torch.optim.SGD / AdamW with grad mode off: each parameter
 * that has a gradient is updated in place (its step count, from 1, is its
 * own); one without is skipped.  The missing states are made first, so
 * that running out of memory changes nothing (a strided parameter or
 * gradient goes through a dense copy, made as its turn comes). */
TENDO_API tendo_status tendo_optimizer_step(tendo_optimizer *opt);
/* Drops every parameter's gradient (set_to_none, torch's default). */
TENDO_API void tendo_optimizer_zero_grad(tendo_optimizer *opt);
/* Sets the learning rate of the next steps. */
TENDO_API void tendo_optimizer_set_lr(tendo_optimizer *opt, double lr);
/* The learning rate; NaN for NULL. */
TENDO_API double tendo_optimizer_lr(const tendo_optimizer *opt);
/* torch.nn.utils.clip_grad_norm_ over the parameters' gradients: the total
 * 2-norm (each gradient's sum of squares in f32, f64 for f64, added in
 * double) is returned, and when it exceeds max_norm every gradient is
 * scaled in place by max_norm / (norm + 1e-6) (a NaN or infinite norm
 * scales them by NaN or 0, as torch).  A negative value with
 * tendo_last_error() set on failure (max_norm not positive, out of
 * memory), and then no gradient has changed. */
TENDO_API double tendo_optimizer_clip_grad_norm(tendo_optimizer *opt, double max_norm);
/* Frees opt, its state and its handles on the parameters; NULL is a no-op. */
TENDO_API void tendo_optimizer_free(tendo_optimizer *opt);

/* The number of parameters added; -1 for NULL. */
TENDO_API int64_t tendo_optimizer_count(const tendo_optimizer *opt);
/* The step count of parameter i (0 before its first step); -1 when out of range. */
TENDO_API int64_t tendo_optimizer_steps(const tendo_optimizer *opt, int64_t i);

/* Writes opt's state to the safetensors file path, atomically (a
 * temporary file renamed into place: a failed save leaves the old file):
 * for parameter i that has stepped, "optimizer.<i>.exp_avg" and
 * ".exp_avg_sq" (AdamW), or ".momentum_buffer" (SGD), and ".master" (16-
 * and 8-bit parameters); its step count as metadata "optimizer.<i>.step",
 * with "optimizer" (adamw or sgd), "optimizer.params" and "optimizer.lr".
 * The parameters themselves are the caller's to save (as torch keeps
 * optimizer.pt beside the model's weights). */
TENDO_API tendo_status tendo_optimizer_save(const tendo_optimizer *opt, const char *path);
/* Loads the state tendo_optimizer_save wrote into opt, whose parameters
 * must be the same in number, order, shape and dtype: the states are
 * copied to each parameter's device, and the step counts and learning rate
 * restored.  Load the parameters first, then this: the next step is the one
 * a run that never stopped would take, bit for bit.  Everything is checked
 * before anything changes: TENDO_ERR_FORMAT (naming the entry) for a state
 * that does not fit or is missing, and the load's own errors (TENDO_ERR_IO). */
TENDO_API tendo_status tendo_optimizer_load(tendo_optimizer *opt, const char *path);

/* The learning rate at step (from 0) of a linear warmup over warmup steps
 * followed by a cosine decay to lr_min at total steps, as transformers'
 * get_cosine_with_min_lr_schedule_with_warmup: lr_max step / warmup during
 * the warmup, then lr_min + (lr_max - lr_min) (1 + cos(pi p)) / 2 with p
 * the fraction of the decay done (lr_min from total on).  NaN for
 * negative counts or warmup > total. */
TENDO_API double tendo_lr_cosine(int64_t step, int64_t warmup, int64_t total, double lr_max, double lr_min);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_OPTIM_H */
