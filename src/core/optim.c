/* src/core/optim.c - one optimizer step of one parameter (core/optim.h).
 *
 * Everything is checked before anything is written: the hyperparameters
 * as torch.optim checks them, the gradient and every state against the
 * parameter (shape, device, and the state dtype: the parameter's compute
 * type, f32 or f64).  The kernels walk dense memory, so a strided gradient
 * is read through a dense copy, and a strided parameter is updated in a
 * dense copy that is then written back; the states are the caller's own
 * and must be dense. */
#include <math.h>
#include <string.h>

#include "core/device.h"
#include "core/index.h"
#include "core/iter.h"
#include "core/optim.h"

/* Checks state `name` (NULL allowed when optional) against param. */
static bool check_state(const char *op, const char *name, const tendo__tensor *s, const tendo__tensor *param,
                        bool optional)
{
    tendo_dtype want = tendo__compute_dtype(tendo__traits_of(param->dtype)->compute);

    if (!s) {
        if (!optional)
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL", name);
        return optional;
    }
    if (s->dtype != want) {
        tendo__fail(TENDO_ERR_DTYPE, op, "%s is %s: the state of a %s parameter is %s", name,
                    tendo_dtype_name(s->dtype), tendo_dtype_name(param->dtype), tendo_dtype_name(want));
        return false;
    }
    if (s->ndim != param->ndim || memcmp(s->shape, param->shape, (size_t)s->ndim * sizeof *s->shape)) {
        tendo__fail(TENDO_ERR_SHAPE, op, "%s %s is not of param's shape %s", name,
                    tendo__shape_str(s->ndim, s->shape).s, tendo__shape_str(param->ndim, param->shape).s);
        return false;
    }
    if (!tendo_device_equal(s->storage->device, param->storage->device)) {
        tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "%s is on %s, param on %s", name,
                    tendo_device_str(s->storage->device), tendo_device_str(param->storage->device));
        return false;
    }
    if (!tendo__tensor_contiguous(s)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is not dense: an optimizer state is a dense tensor", name);
        return false;
    }
    return true;
}

/* Checks param and grad. */
static bool check_param(const char *op, const tendo__tensor *param, const tendo__tensor *grad, double lr,
                        double weight_decay, int64_t step)
{
    const tendo__tensor *ts[2] = {param, grad};

    if (!tendo__check_tensor(op, "param", param) || !tendo__check_tensor(op, "grad", grad) ||
        !tendo__check_inputs(op, 2, ts))
        return false;
    if (grad->ndim != param->ndim || memcmp(grad->shape, param->shape, (size_t)grad->ndim * sizeof *grad->shape)) {
        tendo__fail(TENDO_ERR_SHAPE, op, "grad %s is not of param's shape %s",
                    tendo__shape_str(grad->ndim, grad->shape).s, tendo__shape_str(param->ndim, param->shape).s);
        return false;
    }
    if (!(lr >= 0) || !isfinite(lr)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "invalid learning rate %g", lr);
        return false;
    }
    if (!(weight_decay >= 0) || !isfinite(weight_decay)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "invalid weight_decay %g", weight_decay);
        return false;
    }
    if (step < 1) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "step %lld: steps count from 1", (long long)step);
        return false;
    }
    return true;
}

/* Runs w over param, grad and the states (ts: the tensors it touches, for
 * the device; w->n, w->param and w->grad are set here).  Dense param and
 * grad are used as they are, with no allocation; a strided one goes
 * through a dense copy (param's written back, which can then fail only on
 * a device error: param was checked to be writable first). */
static tendo_status run(const char *op, tendo__cu_optim *w, tendo__tensor *param, const tendo__tensor *grad,
                        const tendo__tensor *const *states, int nstates, tendo__optim_cpu_fn cpu,
                        tendo__cu_optim_fn cu)
{
    const tendo__tensor *reads[4] = {grad};
    int nreads = 1;
    bool gdense, pdense;

    for (int i = 0; i < nstates; i++)
        if (states[i])
            reads[nreads++] = states[i];
    /* param gets written: no element twice, no partial overlap with what is read */
    if (!tendo__check_out(op, param, param->ndim, param->shape, nreads, reads))
        return tendo_error_status(tendo_last_error());
    gdense = tendo__tensor_contiguous(grad), pdense = tendo__tensor_contiguous(param);
    tendo__tensor *gc = gdense ? NULL : tendo__clone(op, grad);
    tendo__tensor *pc = pdense || (!gdense && !gc) ? NULL : tendo__clone(op, param);
    const tendo__tensor *g = gc ? gc : grad;
    tendo__tensor *p = pc ? pc : param;
    bool good = (gdense || gc) && (pdense || pc);


    if (good) {
        w->n = param->numel;
        w->param = tendo__tensor_data(p);
        w->grad = tendo__tensor_data(g);
        if (param->storage->device.type == TENDO_CUDA) {
            const tendo__tensor *ts[5] = {p, g, states[0], states[1], states[2]};
            good = tendo__device_ops_of(TENDO_CUDA)->optim(op, w, ts, 2 + nstates, cu);
        } else {
            cpu(w, tendo__traits_of(param->dtype));
        }
    }
    if (good && pc)
        good = tendo__copy_into(op, param, pc) == TENDO_OK;
    tendo__tensor_free(pc);
    tendo__tensor_free(gc);
    return good ? TENDO_OK : tendo_error_status(tendo_last_error());
}

static void *state_data(tendo__tensor *s)
{
    return s ? tendo__tensor_data(s) : NULL;
}

tendo_status tendo__adamw_update(const char *op, tendo__tensor *param, const tendo__tensor *grad,
                                 tendo__tensor *exp_avg, tendo__tensor *exp_avg_sq, tendo__tensor *master, double lr,
                                 double beta1, double beta2, double eps, double weight_decay, int64_t step,
                                 tendo__optim_cpu_fn cpu, tendo__cu_optim_fn cu)
{
    tendo__cu_optim w = {0};
    const tendo__tensor *states[3] = {exp_avg, exp_avg_sq, master};

    if (!check_param(op, param, grad, lr, weight_decay, step) ||
        !check_state(op, "exp_avg", exp_avg, param, false) || !check_state(op, "exp_avg_sq", exp_avg_sq, param, false) ||
        !check_state(op, "master", master, param, true))
        return tendo_error_status(tendo_last_error());
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "betas (%g, %g): each in [0, 1)", beta1, beta2);
    if (!(eps >= 0) || !isfinite(eps))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "invalid eps %g", eps);
    if (exp_avg->storage == exp_avg_sq->storage || (master && (master->storage == exp_avg->storage ||
                                                               master->storage == exp_avg_sq->storage)))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "exp_avg, exp_avg_sq and master share storage");
    w.m = state_data(exp_avg);
    w.v = state_data(exp_avg_sq);
    w.master = state_data(master);
    w.lr = lr;
    w.weight_decay = weight_decay;
    w.beta1 = beta1;
    w.beta2 = beta2;
    w.eps = eps;
    w.step_size = lr / (1.0 - pow(beta1, (double)step));
    w.bc2_sqrt = sqrt(1.0 - pow(beta2, (double)step));
    return run(op, &w, param, grad, states, 3, cpu, cu);
}

tendo_status tendo__sgd_update(const char *op, tendo__tensor *param, const tendo__tensor *grad,
                               tendo__tensor *momentum_buffer, tendo__tensor *master, double lr, double momentum,
                               double weight_decay, bool nesterov, int64_t step, tendo__optim_cpu_fn cpu,
                               tendo__cu_optim_fn cu)
{
    tendo__cu_optim w = {0};
    const tendo__tensor *states[3] = {momentum_buffer, master, NULL};

    if (!check_param(op, param, grad, lr, weight_decay, step))
        return tendo_error_status(tendo_last_error());
    if (!(momentum >= 0) || !isfinite(momentum))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "invalid momentum %g", momentum);
    if (nesterov && momentum == 0)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "Nesterov momentum requires a momentum");
    if ((momentum != 0) != (momentum_buffer != NULL))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "momentum %g %s a momentum_buffer", momentum,
                           momentum != 0 ? "needs" : "takes no");
    if (!check_state(op, "momentum_buffer", momentum_buffer, param, true) ||
        !check_state(op, "master", master, param, true))
        return tendo_error_status(tendo_last_error());
    if (master && momentum_buffer && master->storage == momentum_buffer->storage)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "momentum_buffer and master share storage");
    w.m = state_data(momentum_buffer);
    w.master = state_data(master);
    w.lr = lr;
    w.weight_decay = weight_decay;
    w.momentum = momentum;
    w.nesterov = nesterov;
    w.first = step == 1;
    return run(op, &w, param, grad, states, 2, cpu, cu);
}
