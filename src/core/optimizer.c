/* src/core/optimizer.c - tendo_optimizer (tendo/optim.h): torch.optim.SGD
 * and AdamW over a list of parameters, their state, clipping, and the
 * state's checkpoint.
 *
 * Each parameter is a slot: the optimizer's own handle on it (sharing its
 * autograd state, so that its gradient is the one backward accumulates),
 * the states its update keeps (made at its first step), its step count,
 * and the storage version the last update left, by which a parameter
 * written by someone else is noticed and copied into its master.  The
 * update itself is the dtype's tensor_<dt>_*_update (src/core/optim.c),
 * reached through the dtype's kit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tendo.h"

#include "core/autograd.h"
#include "core/device.h"
#include "core/index.h"
#include "core/internal.h"
#include "core/optim.h"

typedef enum { SGD, ADAMW } kind;

/* The states of each kind, in slot order, as checkpoints name them. */
static const char *const state_names[2][2] = {{"momentum_buffer", NULL}, {"exp_avg", "exp_avg_sq"}};

typedef struct {
    tendo__tensor *param;
    tendo__tensor *state[2]; /* state_names[kind]; NULL until the first step */
    tendo__tensor *master;   /* a 16- or 8-bit parameter's, in f32; else NULL */
    int64_t steps;
    uint64_t version; /* param's storage version after the last update */
} slot;

struct tendo_optimizer {
    kind kind;
    double lr, momentum, weight_decay, beta1, beta2, eps;
    bool nesterov;
    int64_t n, cap;
    slot *slots;
};

static uint64_t version_of(const tendo__tensor *t)
{
    return atomic_load_explicit(&t->storage->version, memory_order_relaxed);
}

static bool valid_number(const char *op, const char *what, double v)
{
    if (v >= 0 && isfinite(v))
        return true;
    tendo__fail(TENDO_ERR_INVALID_ARG, op, "invalid %s %g", what, v);
    return false;
}

static tendo_optimizer *optimizer_new(const char *op, kind k)
{
    tendo_optimizer *o = tendo__malloc(sizeof *o);

    if (!o) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory");
        return NULL;
    }
    memset(o, 0, sizeof *o);
    o->kind = k;
    return o;
}

tendo_optimizer *tendo_sgd_new(double lr, double momentum, double weight_decay, bool nesterov)
{
    static const char op[] = "sgd_new";
    tendo_optimizer *o;

    if (!valid_number(op, "learning rate", lr) || !valid_number(op, "momentum", momentum) ||
        !valid_number(op, "weight_decay", weight_decay))
        return NULL;
    if (nesterov && momentum == 0) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "Nesterov momentum requires a momentum");
        return NULL;
    }
    if (!(o = optimizer_new(op, SGD)))
        return NULL;
    o->lr = lr;
    o->momentum = momentum;
    o->weight_decay = weight_decay;
    o->nesterov = nesterov;
    return o;
}

tendo_optimizer *tendo_adamw_new(double lr, double beta1, double beta2, double eps, double weight_decay)
{
    static const char op[] = "adamw_new";
    tendo_optimizer *o;

    if (!valid_number(op, "learning rate", lr) || !valid_number(op, "eps", eps) ||
        !valid_number(op, "weight_decay", weight_decay))
        return NULL;
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "betas (%g, %g): each in [0, 1)", beta1, beta2);
        return NULL;
    }
    if (!(o = optimizer_new(op, ADAMW)))
        return NULL;
    o->lr = lr;
    o->beta1 = beta1;
    o->beta2 = beta2;
    o->eps = eps;
    o->weight_decay = weight_decay;
    return o;
}

tendo_status tendo_optimizer_add(tendo_optimizer *opt, tendo_tensor *param)
{
    static const char op[] = "optimizer_add";
    tendo__tensor *p = (tendo__tensor *)(void *)param, *h;

    if (!opt)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "opt is NULL");
    if (!tendo__check_tensor(op, "param", p))
        return TENDO_ERR_INVALID_ARG;
    if (!tendo__optim_kit_of(p->dtype))
        return tendo__fail(TENDO_ERR_DTYPE, op, "param is %s: an optimizer updates float tensors",
                           tendo_dtype_name(p->dtype));
    if (!p->ag || !p->ag->leaf)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "param %s: want a leaf that requires grad",
                           p->ag && p->ag->fn ? "is the result of a function" : "does not require grad");
    for (int64_t i = 0; i < opt->n; i++)
        if (opt->slots[i].param->ag == p->ag)
            return tendo__fail(TENDO_ERR_INVALID_ARG, op, "param was added before (as parameter %lld)",
                               (long long)i);
    if (opt->n == opt->cap) {
        int64_t cap = opt->cap ? 2 * opt->cap : 16;
        slot *s = tendo__realloc(opt->slots, (size_t)cap * sizeof *s);
        if (!s)
            return tendo__fail(TENDO_ERR_OOM, op, "out of memory for %lld parameters", (long long)cap);
        opt->slots = s;
        opt->cap = cap;
    }
    if (!(h = tendo__tensor_share(op, p)))
        return TENDO_ERR_OOM;
    memset(&opt->slots[opt->n], 0, sizeof opt->slots[opt->n]);
    opt->slots[opt->n++].param = h;
    return TENDO_OK;
}

/* A zero tensor of dtype dt and like's shape and device. */
static tendo__tensor *zeros(const char *op, tendo_dtype dt, const tendo__tensor *like)
{
    tendo__tensor *t = tendo__tensor_new(op, dt, like->ndim, like->shape, like->storage->device);
    double zero = 0;

    if (!t)
        return NULL;
    if (like->storage->device.type == TENDO_CPU) {
        memset(tendo__tensor_data(t), 0, (size_t)t->numel * tendo_dtype_size(dt));
    } else if (!tendo__device_ops_of(like->storage->device.type)->fill(op, t, &zero)) {
        tendo__tensor_free(t);
        return NULL;
    }
    return t;
}

/* The dtype of a parameter's state, and whether it has a master copy. */
static tendo_dtype state_dtype(const tendo__tensor *p)
{
    return tendo__compute_dtype(tendo__traits_of(p->dtype)->compute);
}

static bool has_master(const tendo__tensor *p)
{
    return state_dtype(p) != p->dtype;
}

static int nstates(const tendo_optimizer *o)
{
    return o->kind == ADAMW ? 2 : o->momentum != 0 ? 1 : 0;
}

/* Makes the states slot s lacks into made[] (3: the states, the master);
 * false with the error set, the made ones freed. */
static bool make_states(const char *op, const tendo_optimizer *o, const slot *s, tendo__tensor *made[3])
{
    tendo__tensor *p = s->param;

    for (int k = 0; k < nstates(o); k++)
        if (!s->state[k] && !(made[k] = zeros(op, state_dtype(p), p)))
            goto fail;
    if (has_master(p) && (!s->master || version_of(p) != s->version)) {
        made[2] = (tendo__tensor *)(void *)tendo_tensor_to_dtype((const tendo_tensor *)(const void *)p, state_dtype(p));
        if (!made[2])
            goto fail;
    }
    return true;
fail:
    for (int k = 0; k < 3; k++) {
        tendo__tensor_free(made[k]);
        made[k] = NULL;
    }
    return false;
}

tendo_status tendo_optimizer_step(tendo_optimizer *opt)
{
    static const char op[] = "optimizer_step";
    tendo__tensor *(*made)[3];
    tendo_status st = TENDO_OK;
    bool grad_mode;

    if (!opt)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "opt is NULL");
    made = tendo__malloc((size_t)(opt->n ? opt->n : 1) * sizeof *made);
    if (!made)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    memset(made, 0, (size_t)(opt->n ? opt->n : 1) * sizeof *made);
    grad_mode = tendo__set_grad_enabled(false); /* a master is a copy, not a record */
    for (int64_t i = 0; i < opt->n; i++) /* every missing state first: out of memory changes nothing */
        if (opt->slots[i].param->ag->grad && !make_states(op, opt, &opt->slots[i], made[i])) {
            for (int64_t j = 0; j < i; j++)
                for (int k = 0; k < 3; k++)
                    tendo__tensor_free(made[j][k]);
            free(made);
            tendo__set_grad_enabled(grad_mode);
            tendo__fail_as(op);
            return tendo_error_status(tendo_last_error());
        }
    for (int64_t i = 0; i < opt->n; i++) {
        slot *s = &opt->slots[i];
        const tendo__tensor *g = s->param->ag->grad;
        const tendo__optim_kit *kit = tendo__optim_kit_of(s->param->dtype);

        for (int k = 0; k < 2; k++)
            if (made[i][k])
                s->state[k] = made[i][k];
        if (made[i][2]) {
            tendo__tensor_free(s->master);
            s->master = made[i][2];
        }
        if (!g || st != TENDO_OK)
            continue;
        st = opt->kind == ADAMW ? kit->adamw(s->param, g, s->state[0], s->state[1], s->master, opt->lr, opt->beta1,
                                             opt->beta2, opt->eps, opt->weight_decay, s->steps + 1)
                                : kit->sgd(s->param, g, s->state[0], s->master, opt->lr, opt->momentum,
                                           opt->weight_decay, opt->nesterov, s->steps + 1);
        if (st == TENDO_OK)
            s->steps++;
    }
    /* after every update: parameters that share storage (views of one
       buffer) bump each other's version, which is no write from outside */
    for (int64_t i = 0; i < opt->n; i++)
        opt->slots[i].version = version_of(opt->slots[i].param);
    tendo__set_grad_enabled(grad_mode);
    free(made);
    if (st != TENDO_OK)
        tendo__fail_as(op);
    return st;
}

void tendo_optimizer_zero_grad(tendo_optimizer *opt)
{
    for (int64_t i = 0; opt && i < opt->n; i++)
        tendo__zero_grad(opt->slots[i].param);
}

void tendo_optimizer_set_lr(tendo_optimizer *opt, double lr)
{
    if (opt)
        opt->lr = lr;
}

double tendo_optimizer_lr(const tendo_optimizer *opt)
{
    return opt ? opt->lr : NAN;
}

/* Scales every gradient of opt by coef in place: the scaled copies are
 * all made first, so that a failure changes none.  False with the error set. */
static bool scale_grads(const char *op, tendo_optimizer *opt, double coef)
{
    tendo__tensor **scaled = tendo__malloc((size_t)(opt->n ? opt->n : 1) * sizeof *scaled);
    bool good = scaled != NULL;

    if (!scaled)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    for (int64_t i = 0; good && i < opt->n; i++) {
        const tendo__tensor *g = opt->slots[i].param->ag->grad;
        scaled[i] = g ? tendo__optim_kit_of(g->dtype)->scale(g, coef) : NULL;
        good = !g || scaled[i];
        if (!good)
            while (i-- > 0)
                tendo__tensor_free(scaled[i]);
    }
    if (!good) {
        free(scaled); /* what the first loop made is freed there */
        return false;
    }
    for (int64_t i = 0; good && i < opt->n; i++) {
        tendo__tensor *g = opt->slots[i].param->ag->grad;
        if (g && tendo__copy_into(op, g, scaled[i]) != TENDO_OK)
            good = false; /* a device failure: no allocation happens here */
    }
    for (int64_t i = 0; i < opt->n; i++)
        tendo__tensor_free(scaled[i]);
    free(scaled);
    return good;
}

double tendo_optimizer_clip_grad_norm(tendo_optimizer *opt, double max_norm)
{
    static const char op[] = "optimizer_clip_grad_norm";
    double total = 0;
    bool grad_mode, good = true;

    if (!opt) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "opt is NULL");
        return -1;
    }
    if (!(max_norm > 0)) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "max_norm %g is not positive", max_norm);
        return -1;
    }
    grad_mode = tendo__set_grad_enabled(false);
    for (int64_t i = 0; good && i < opt->n; i++) {
        const tendo__tensor *g = opt->slots[i].param->ag->grad;
        double ss = g ? tendo__optim_kit_of(g->dtype)->sumsq(g) : 0;

        good = !(ss < 0);
        total += ss;
    }
    if (good) {
        double coef;

        total = sqrt(total);
        coef = max_norm / (total + 1e-6);
        if (!(coef >= 1)) /* a NaN norm scales by NaN, as torch */
            good = scale_grads(op, opt, coef);
    }
    tendo__set_grad_enabled(grad_mode);
    if (!good)
        tendo__fail_as(op);
    return good ? total : -1;
}

void tendo_optimizer_free(tendo_optimizer *opt)
{
    if (!opt)
        return;
    for (int64_t i = 0; i < opt->n; i++) {
        slot *s = &opt->slots[i];
        tendo__tensor_free(s->param);
        tendo__tensor_free(s->state[0]);
        tendo__tensor_free(s->state[1]);
        tendo__tensor_free(s->master);
    }
    free(opt->slots);
    free(opt);
}

tendo__tensor *tendo__optimizer_grad(const tendo_optimizer *opt, int64_t i)
{
    return opt && i >= 0 && i < opt->n ? opt->slots[i].param->ag->grad : NULL;
}

int64_t tendo_optimizer_count(const tendo_optimizer *opt)
{
    return opt ? opt->n : -1;
}

int64_t tendo_optimizer_steps(const tendo_optimizer *opt, int64_t i)
{
    return opt && i >= 0 && i < opt->n ? opt->slots[i].steps : -1;
}

double tendo_lr_cosine(int64_t step, int64_t warmup, int64_t total, double lr_max, double lr_min)
{
    const double pi = 3.14159265358979323846;

    if (step < 0 || warmup < 0 || total < warmup)
        return NAN;
    if (step < warmup)
        return lr_max * (double)step / (double)warmup;
    if (step >= total)
        return lr_min;
    return lr_min + (lr_max - lr_min) * 0.5 * (1.0 + cos(pi * (double)(step - warmup) / (double)(total - warmup)));
}

/* ---- the state in a checkpoint ---------------------------------------------------------- */

static const char *kind_name(kind k)
{
    return k == ADAMW ? "adamw" : "sgd";
}

/* The checkpoint name of parameter i's state `what`. */
static void entry_name(char *buf, size_t n, int64_t i, const char *what)
{
    snprintf(buf, n, "optimizer.%lld.%s", (long long)i, what);
}

/* Adds opt's state to the new collection c; false with the error set. */
static bool fill_state(const tendo_optimizer *opt, tendo_collection *c)
{
    char name[96], value[64];

    snprintf(value, sizeof value, "%lld", (long long)opt->n);
    if (tendo_collection_set_metadata(c, "optimizer", kind_name(opt->kind)) != TENDO_OK ||
        tendo_collection_set_metadata(c, "optimizer.params", value) != TENDO_OK)
        return false;
    snprintf(value, sizeof value, "%.17g", opt->lr);
    if (tendo_collection_set_metadata(c, "optimizer.lr", value) != TENDO_OK)
        return false;
    for (int64_t i = 0; i < opt->n; i++) {
        const slot *s = &opt->slots[i];

        if (!s->steps)
            continue;
        entry_name(name, sizeof name, i, "step");
        snprintf(value, sizeof value, "%lld", (long long)s->steps);
        if (tendo_collection_set_metadata(c, name, value) != TENDO_OK)
            return false;
        for (int k = 0; k < nstates(opt); k++) {
            entry_name(name, sizeof name, i, state_names[opt->kind][k]);
            if (tendo_collection_add(c, name, (const tendo_tensor *)(const void *)s->state[k]) != TENDO_OK)
                return false;
        }
        if (s->master) {
            entry_name(name, sizeof name, i, "master");
            if (tendo_collection_add(c, name, (const tendo_tensor *)(const void *)s->master) != TENDO_OK)
                return false;
        }
    }
    return true;
}

tendo_status tendo_optimizer_save(const tendo_optimizer *opt, const char *path)
{
    static const char op[] = "optimizer_save";
    tendo_collection *c;
    tendo_status st;

    if (!opt || !path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL", opt ? "path" : "opt");
    if (!(c = tendo_collection_new())) {
        tendo__fail_as(op);
        return TENDO_ERR_OOM;
    }
    st = fill_state(opt, c) ? tendo_safetensors_save(path, c) : tendo_error_status(tendo_last_error());
    tendo_collection_free(c);
    if (st != TENDO_OK)
        tendo__fail_as(op);
    return st;
}

/* c's tensor `name`, checked to be a state of param p, copied to p's
 * device into *out; false with TENDO_ERR_FORMAT (or the copy's error). */
static bool load_state(const char *op, const tendo_collection *c, const char *name, const tendo__tensor *p,
                       tendo__tensor **out)
{
    const tendo__tensor *t = (const tendo__tensor *)(const void *)tendo_collection_get(c, name);

    if (!t) {
        tendo__fail(TENDO_ERR_FORMAT, op, "the checkpoint has no %s", name);
        return false;
    }
    if (t->dtype != state_dtype(p) || t->ndim != p->ndim ||
        memcmp(t->shape, p->shape, (size_t)p->ndim * sizeof *p->shape)) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s is %s %s; the parameter's state is %s %s", name,
                    tendo_dtype_name(t->dtype), tendo__shape_str(t->ndim, t->shape).s,
                    tendo_dtype_name(state_dtype(p)), tendo__shape_str(p->ndim, p->shape).s);
        return false;
    }
    *out = tendo__move(op, t, p->storage->device);
    return *out != NULL;
}

/* A metadata entry of c as a non-negative count; -1 (and the error set
 * when required) when absent or malformed. */
static int64_t meta_count(const char *op, const tendo_collection *c, const char *key, bool required)
{
    const char *v = tendo_collection_metadata(c, key);
    char *end;
    long long n;

    if (!v) {
        if (required)
            tendo__fail(TENDO_ERR_FORMAT, op, "the checkpoint has no %s", key);
        return -1;
    }
    n = strtoll(v, &end, 10);
    if (end == v || *end || n < 0) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s is \"%s\", not a count", key, v);
        return -2;
    }
    return n;
}

/* Loads the state c holds into opt (see tendo_optimizer_load). */
static tendo_status load_from(const char *op, tendo_optimizer *opt, const tendo_collection *c)
{
    tendo__tensor *(*got)[3];
    int64_t *steps, n;
    const char *v;
    char name[96], *end;
    double lr;
    bool good = true;

    v = tendo_collection_metadata(c, "optimizer");
    if (!v)
        return tendo__fail(TENDO_ERR_FORMAT, op, "the checkpoint holds no optimizer state");
    if (strcmp(v, kind_name(opt->kind)))
        return tendo__fail(TENDO_ERR_FORMAT, op, "the checkpoint holds %s state, not %s", v, kind_name(opt->kind));
    if ((n = meta_count(op, c, "optimizer.params", true)) < 0)
        return TENDO_ERR_FORMAT;
    if (n != opt->n)
        return tendo__fail(TENDO_ERR_FORMAT, op, "the checkpoint holds the state of %lld parameters, the optimizer "
                           "has %lld", (long long)n, (long long)opt->n);
    v = tendo_collection_metadata(c, "optimizer.lr");
    lr = v ? strtod(v, &end) : opt->lr;
    if (v && (end == v || *end || !(lr >= 0) || !isfinite(lr)))
        return tendo__fail(TENDO_ERR_FORMAT, op, "optimizer.lr is \"%s\"", v);
    got = tendo__malloc((size_t)(opt->n ? opt->n : 1) * sizeof *got);
    steps = tendo__malloc((size_t)(opt->n ? opt->n : 1) * sizeof *steps);
    if (!got || !steps) {
        free(got);
        free(steps);
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    }
    memset(got, 0, (size_t)(opt->n ? opt->n : 1) * sizeof *got);
    for (int64_t i = 0; good && i < opt->n; i++) { /* everything read and checked before anything changes */
        const tendo__tensor *p = opt->slots[i].param;

        entry_name(name, sizeof name, i, "step");
        steps[i] = meta_count(op, c, name, false);
        if (steps[i] == -2) {
            good = false;
            break;
        }
        if (steps[i] < 0)
            steps[i] = 0; /* never stepped */
        if (!steps[i])
            continue;
        for (int k = 0; good && k < nstates(opt); k++) {
            entry_name(name, sizeof name, i, state_names[opt->kind][k]);
            good = load_state(op, c, name, p, &got[i][k]);
        }
        if (good && has_master(p)) {
            entry_name(name, sizeof name, i, "master");
            good = load_state(op, c, name, p, &got[i][2]);
        }
    }
    if (good)
        for (int64_t i = 0; i < opt->n; i++) {
            slot *s = &opt->slots[i];
            for (int k = 0; k < 2; k++) {
                tendo__tensor_free(s->state[k]);
                s->state[k] = got[i][k];
            }
            tendo__tensor_free(s->master);
            s->master = got[i][2];
            s->steps = steps[i];
            s->version = version_of(s->param); /* the parameters are loaded first: the master is the truth */
        }
    else
        for (int64_t i = 0; i < opt->n; i++)
            for (int k = 0; k < 3; k++)
                tendo__tensor_free(got[i][k]);
    if (good)
        opt->lr = lr;
    free(got);
    free(steps);
    return good ? TENDO_OK : tendo_error_status(tendo_last_error());
}

tendo_status tendo_optimizer_load(tendo_optimizer *opt, const char *path)
{
    static const char op[] = "optimizer_load";
    tendo_collection *c;
    tendo_status st;

    if (!opt || !path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL", opt ? "path" : "opt");
    if (!(c = tendo_safetensors_load_copy(path, tendo_cpu()))) {
        tendo__fail_as(op);
        return tendo_error_status(tendo_last_error());
    }
    st = load_from(op, opt, c);
    tendo_collection_free(c);
    if (st != TENDO_OK)
        tendo__fail_as(op);
    return st;
}
