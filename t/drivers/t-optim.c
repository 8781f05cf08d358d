/* t/drivers/t-optim.c - tendo_optimizer (tendo/optim.h) and the updates
 * behind it (tensor_<dt>_adamw_update, _sgd_update), for every float dtype,
 * on the CPU and on cuda:0 when there is one, against a double-precision
 * reference of torch.optim's algorithms run on the same exact inputs:
 * several steps of AdamW and of SGD (momentum, Nesterov, weight decay),
 * the states and master weights a checkpoint holds, parameters without a
 * gradient, clip_grad_norm, the cosine schedule, a checkpoint resumed
 * bit for bit, strided parameters, and the errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/autograd.h"
#include "core/internal.h"
#include "fault-table.h"
#include "tendo.h"

/* A float dtype's significand and compute type, from the build's dtype
 * table (t/fault-table.h, generated from gen/dtypes.toml): every float
 * dtype of the build is tested, with nothing listed here. */
static int entry_of(tendo_dtype dt)
{
    for (int i = 0; i < TF_NDTYPES; i++)
        if (tf_dtypes[i].dtype == dt)
            return i;
    bail("%s is not in the dtype table", tendo_dtype_name(dt));
    return 0;
}

/* Whether dt's state (its compute type) is f64 rather than f32. */
static bool is_f64(tendo_dtype dt)
{
    return tf_dtypes[entry_of(dt)].compute_bits == 53;
}

/* The relative spacing of dtype dt's values: 2^-(significand bits - 1). */
static double dtype_eps(tendo_dtype dt)
{
    return ldexp(1.0, 1 - tf_dtypes[entry_of(dt)].mantissa_bits);
}

static tendo_tensor *random_tensor(tendo_dtype dt, tendo_device d, int nd, const int64_t *shape, double scale);
static double *values(const tendo_tensor *t);

/* The spacing of dtype dt's subnormals (the absolute error of a rounding
 * near 0): the least power of two dt holds, found by rounding 2^-k into it. */
static double dtype_tiny(tendo_dtype dt)
{
    double tiny = 0;

    if (is_f64(dt))
        return 0; /* below f32's range: no error of this test comes near it */
    for (int k = 1; k <= 149; k++) {
        float x = ldexpf(1.0f, -k);
        tensor_f32 *f = tensor_f32_from_data(&x, TENDO_SHAPE(1), tendo_cpu());
        tendo_tensor *c = f ? tendo_tensor_to_dtype(tensor_erase(f), dt) : NULL;
        double *v = c ? values(c) : NULL;

        if (!v)
            bail("cannot round 2^-%d to %s", k, tendo_dtype_name(dt));
        if (v[0] == (double)x)
            tiny = x;
        free(v);
        tendo_tensor_free(c);
        tensor_f32_free(f);
    }
    return tiny;
}

static uint64_t rng = 88172645463325252ULL;

static double normal(void)
{
    double u, v;

    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    u = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    v = (double)(rng >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- tensors of any dtype and device, through the erased API ----------------------- */

/* A new tensor of dtype dt on d holding random N(0, scale) values (rounded to dt). */
static tendo_tensor *random_tensor(tendo_dtype dt, tendo_device d, int nd, const int64_t *shape, double scale)
{
    int64_t n = t_numel(nd, shape);
    float *v = malloc((size_t)n * sizeof *v);
    tensor_f32 *f;
    tendo_tensor *c, *r;

    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(scale * normal());
    f = tensor_f32_from_data(v, nd, shape, tendo_cpu());
    free(v);
    c = f ? tendo_tensor_to_dtype(tensor_erase(f), dt) : NULL;
    tensor_f32_free(f);
    r = c ? tendo_tensor_to_device(c, d) : NULL;
    tendo_tensor_free(c);
    if (!r)
        bail("cannot make a tensor: %s", tendo_error_message(tendo_last_error()));
    return r;
}

/* t's values in row-major order, as doubles, from any device. */
static double *values(const tendo_tensor *t)
{
    int64_t n = tendo_tensor_numel(t);
    double *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    tendo_tensor *h = tendo_tensor_to_device(t, tendo_cpu());
    tendo_tensor *w = h && tendo_tensor_dtype(h) != TENDO_F32 && !is_f64(tendo_tensor_dtype(h))
                          ? tendo_tensor_to_dtype(h, TENDO_F32) : h;

    if (!w)
        bail("cannot read a tensor: %s", tendo_error_message(tendo_last_error()));
    for (int64_t i = 0; i < n; i++) /* to_device and to_dtype give dense tensors */
        out[i] = is_f64(tendo_tensor_dtype(w)) ? ((const double *)tendo_tensor_data(w))[i]
                                                    : ((const float *)tendo_tensor_data(w))[i];
    if (w != h)
        tendo_tensor_free(w);
    tendo_tensor_free(h);
    return out;
}

static tendo__tensor *core(tendo_tensor *t) { return (tendo__tensor *)(void *)t; }

static void make_leaf(tendo_tensor *t)
{
    if (tendo__set_requires_grad("t-optim", core(t), true) != TENDO_OK)
        bail("set_requires_grad: %s", tendo_error_message(tendo_last_error()));
}

/* Gives leaf p the gradient g (added to what it has). */
static void give_grad(tendo_tensor *p, tendo_tensor *g)
{
    if (tendo__backward("t-optim", core(p), core(g)) != TENDO_OK)
        bail("backward: %s", tendo_error_message(tendo_last_error()));
}

/* ---- the reference: torch.optim's single-tensor algorithms in double ---------------- */

typedef struct {
    bool adamw;
    double lr, momentum, weight_decay, beta1, beta2, eps;
    bool nesterov;
    const char *name;
} hyper;

static void ref_step(const hyper *h, int64_t step, int64_t n, double *p, double *m, double *v, const double *g)
{
    for (int64_t i = 0; i < n; i++) {
        if (h->adamw) {
            p[i] *= 1 - h->lr * h->weight_decay;
            m[i] += (1 - h->beta1) * (g[i] - m[i]);
            v[i] = h->beta2 * v[i] + (1 - h->beta2) * g[i] * g[i];
            p[i] -= h->lr / (1 - pow(h->beta1, (double)step)) * m[i] /
                    (sqrt(v[i]) / sqrt(1 - pow(h->beta2, (double)step)) + h->eps);
        } else {
            double d = g[i] + h->weight_decay * p[i];
            if (h->momentum != 0) {
                m[i] = step == 1 ? d : h->momentum * m[i] + d;
                d = h->nesterov ? d + h->momentum * m[i] : m[i];
            }
            p[i] -= h->lr * d;
        }
    }
}

static tendo_optimizer *new_optimizer(const hyper *h)
{
    tendo_optimizer *o = h->adamw ? tendo_adamw_new(h->lr, h->beta1, h->beta2, h->eps, h->weight_decay)
                                  : tendo_sgd_new(h->lr, h->momentum, h->weight_decay, h->nesterov);
    if (!o)
        bail("cannot make an optimizer: %s", tendo_error_message(tendo_last_error()));
    return o;
}

/* Compares n values got with want: |got - want| <= rel |want| + abs. */
static void compare(t_check *c, const char *what, const double *got, const double *want, int64_t n, double rel,
                    double abs)
{
    for (int64_t i = 0; i < n; i++)
        t_elem(c, what, i, got[i], want[i], rel * fabs(want[i]) + abs);
}

/* The state tensor `what` of parameter i, from a file of the optimizer's
 * state (NULL when absent). */
static double *state_values(const tendo_collection *c, int i, const char *what)
{
    char name[64];
    tendo_tensor *t;

    snprintf(name, sizeof name, "optimizer.%d.%s", i, what);
    t = tendo_collection_get(c, name);
    tendo_clear_error();
    return t ? values(t) : NULL;
}

/* nsteps steps of h on a parameter of dtype dt and shape [r, k] on d, and a
 * second parameter that never gets a gradient, against the reference. */
static void check_steps(const hyper *h, tendo_dtype dt, tendo_device d, int64_t r, int64_t k, int nsteps,
                        const char *path)
{
    const int64_t shape[2] = {r, k}, n = r * k;
    tendo_tensor *p = random_tensor(dt, d, 2, shape, 1.0), *idle = random_tensor(dt, d, 1, shape, 1.0); /* [r] */
    double *ref = values(p), *idle0 = values(idle), *m = calloc((size_t)n, sizeof *m), *v = calloc((size_t)n, sizeof *v);
    double es = is_f64(dt) ? 0x1p-52 : 0x1p-23; /* the state dtype's */
    double tol_state = 16 * nsteps * es, tol_abs = 16 * nsteps * es * (h->lr + 1);
    tendo_optimizer *o = new_optimizer(h);
    tendo_collection *c;
    t_check ck = {0};
    char dev[32];

    snprintf(dev, sizeof dev, "%s", tendo_device_str(d));
    make_leaf(p);
    make_leaf(idle);
    if (tendo_optimizer_add(o, p) != TENDO_OK || tendo_optimizer_add(o, idle) != TENDO_OK)
        bail("optimizer_add: %s", tendo_error_message(tendo_last_error()));
    for (int s = 1; s <= nsteps; s++) {
        tendo_tensor *g = random_tensor(dt, d, 2, shape, 1.0);
        double *gv = values(g);

        tendo_optimizer_zero_grad(o);
        give_grad(p, g);
        if (tendo_optimizer_step(o) != TENDO_OK)
            t_fail(&ck, "step %d: %s", s, tendo_error_message(tendo_last_error()));
        ref_step(h, s, n, ref, m, v, gv);
        free(gv);
        tendo_tensor_free(g);
    }
    if (tendo_optimizer_save(o, path) != TENDO_OK || !(c = tendo_safetensors_load(path, tendo_cpu())))
        bail("optimizer_save: %s", tendo_error_message(tendo_last_error()));
    {
        double *got = values(p), *gi = values(idle);
        double *sm = state_values(c, 0, h->adamw ? "exp_avg" : "momentum_buffer");
        double *sv = h->adamw ? state_values(c, 0, "exp_avg_sq") : NULL;
        double *master = state_values(c, 0, "master");
        bool want_master = dt != TENDO_F32 && !is_f64(dt), want_m = h->adamw || h->momentum != 0;

        /* the parameter is its master rounded to dt once */
        compare(&ck, "param", got, ref, n, tol_state + dtype_eps(dt) / 2, tol_abs + dtype_tiny(dt) / 2);
        if (want_master != (master != NULL))
            t_fail(&ck, "master weights: %s", master ? "present for a parameter that has none" : "missing");
        if (master)
            compare(&ck, "master", master, ref, n, tol_state, tol_abs);
        if (want_m != (sm != NULL))
            t_fail(&ck, "first state: %s", sm ? "present without momentum" : "missing");
        if (sm)
            compare(&ck, h->adamw ? "exp_avg" : "momentum_buffer", sm, m, n, tol_state, tol_abs);
        if (h->adamw && !sv)
            t_fail(&ck, "exp_avg_sq: missing");
        if (sv)
            compare(&ck, "exp_avg_sq", sv, v, n, tol_state, tol_abs);
        if (tendo_optimizer_steps(o, 0) != nsteps || tendo_optimizer_steps(o, 1) != 0)
            t_fail(&ck, "step counts %lld and %lld, want %d and 0", (long long)tendo_optimizer_steps(o, 0),
                   (long long)tendo_optimizer_steps(o, 1), nsteps);
        for (int64_t i = 0; i < r; i++) /* no gradient: skipped, unchanged */
            if (gi[i] != idle0[i] && !(isnan(gi[i]) && isnan(idle0[i]))) {
                t_fail(&ck, "the parameter without a gradient changed at %lld", (long long)i);
                break;
            }
        free(got), free(gi), free(sm), free(sv), free(master);
    }
    t_done(&ck, "%s %s %s: %d steps of [%lld, %lld] as the double reference", tendo_dtype_name(dt), dev, h->name,
           nsteps, (long long)r, (long long)k);
    tendo_collection_free(c);
    remove(path);
    tendo_optimizer_free(o);
    tendo_tensor_free(p);
    tendo_tensor_free(idle);
    free(ref), free(idle0), free(m), free(v);
}

/* ---- clip_grad_norm ----------------------------------------------------------------- */

static void check_clip(tendo_dtype dt, tendo_device d)
{
    const int64_t s1[2] = {7, 9}, s2[1] = {40000};
    tendo_tensor *p1 = random_tensor(dt, d, 2, s1, 1.0), *p2 = random_tensor(dt, d, 1, s2, 1.0);
    tendo_tensor *g1 = random_tensor(dt, d, 2, s1, 1.0), *g2 = random_tensor(dt, d, 1, s2, 0.5);
    double *v1 = values(g1), *v2 = values(g2), norm, want_norm, coef, es = is_f64(dt) ? 0x1p-52 : 0x1p-23;
    long double ss = 0;
    tendo_optimizer *o = tendo_sgd_new(0.1, 0, 0, false);
    t_check ck = {0};

    make_leaf(p1);
    make_leaf(p2);
    tendo_optimizer_add(o, p1);
    tendo_optimizer_add(o, p2);
    give_grad(p1, g1);
    give_grad(p2, g2);
    for (int64_t i = 0; i < 63; i++)
        ss += v1[i] * v1[i];
    for (int64_t i = 0; i < 40000; i++)
        ss += v2[i] * v2[i];
    want_norm = sqrt((double)ss);
    norm = tendo_optimizer_clip_grad_norm(o, 1e6); /* above the norm: nothing scaled */
    t_elem(&ck, "norm", 0, norm, want_norm, 64 * es * want_norm);
    {
        tendo_tensor *h = (tendo_tensor *)(void *)tendo__grad_of("t", core(p2));
        double *b = values(h);

        for (int64_t i = 0; i < 40000; i++)
            if (b[i] != v2[i]) {
                t_fail(&ck, "a gradient below max_norm changed at %lld", (long long)i);
                break;
            }
        free(b);
        tendo_tensor_free(h);
    }
    norm = tendo_optimizer_clip_grad_norm(o, 2.0);
    t_elem(&ck, "norm", 1, norm, want_norm, 64 * es * want_norm);
    coef = 2.0 / (want_norm + 1e-6);
    {
        tendo_tensor *h1 = (tendo_tensor *)(void *)tendo__grad_of("t", core(p1));
        tendo_tensor *h2 = (tendo_tensor *)(void *)tendo__grad_of("t", core(p2));
        double *b1 = values(h1), *b2 = values(h2), *w1 = malloc(63 * sizeof *w1), *w2 = malloc(40000 * sizeof *w2);

        for (int64_t i = 0; i < 63; i++)
            w1[i] = v1[i] * coef;
        for (int64_t i = 0; i < 40000; i++)
            w2[i] = v2[i] * coef;
        compare(&ck, "clipped grad", b1, w1, 63, dtype_eps(dt) / 2 + 64 * es, dtype_tiny(dt) / 2);
        compare(&ck, "clipped grad", b2, w2, 40000, dtype_eps(dt) / 2 + 64 * es, dtype_tiny(dt) / 2);
        norm = tendo_optimizer_clip_grad_norm(o, 1e6);
        t_elem(&ck, "norm after clipping", 2, norm, coef * want_norm, 2.0 * (dtype_eps(dt) + 64 * es));
        free(b1), free(b2), free(w1), free(w2);
        tendo_tensor_free(h1);
        tendo_tensor_free(h2);
    }
    t_done(&ck, "%s %s: clip_grad_norm over two gradients as the double reference", tendo_dtype_name(dt),
           tendo_device_str(d));
    tendo_optimizer_free(o);
    tendo_tensor_free(p1), tendo_tensor_free(p2), tendo_tensor_free(g1), tendo_tensor_free(g2);
    free(v1), free(v2);
}

/* ---- a checkpoint resumed ------------------------------------------------------------ */

#define RESUME_STEPS 5
#define RESUME_AT 3

/* Runs h on two parameters of dtype dt on d for RESUME_STEPS steps, saving
 * the parameters (to path.params) and the optimizer's state (to path)
 * after RESUME_AT; a second optimizer loads them and takes the remaining
 * steps with the same gradients: its parameters must be the first's, bit
 * for bit. */
static void check_resume(const hyper *h, tendo_dtype dt, tendo_device d, const char *path)
{
    char ppath[96];
    const int64_t shapes[2][2] = {{5, 7}, {33, 1}};
    tendo_tensor *pa[2], *pb[2], *g[RESUME_STEPS][2];
    tendo_optimizer *a = new_optimizer(h), *b = new_optimizer(h);
    tendo_collection *c = tendo_collection_new(), *loaded;
    t_check ck = {0};

    snprintf(ppath, sizeof ppath, "%s.params", path);
    for (int j = 0; j < 2; j++) {
        pa[j] = random_tensor(dt, d, 2, shapes[j], 1.0);
        make_leaf(pa[j]);
        tendo_optimizer_add(a, pa[j]);
        for (int s = 0; s < RESUME_STEPS; s++)
            g[s][j] = random_tensor(dt, d, 2, shapes[j], 1.0);
    }
    for (int s = 0; s < RESUME_STEPS; s++) {
        if (s == RESUME_AT) {
            if (tendo_collection_add(c, "p0", pa[0]) != TENDO_OK || tendo_collection_add(c, "p1", pa[1]) != TENDO_OK ||
                tendo_safetensors_save(ppath, c) != TENDO_OK || tendo_optimizer_save(a, path) != TENDO_OK)
                bail("saving the checkpoint: %s", tendo_error_message(tendo_last_error()));
        }
        tendo_optimizer_zero_grad(a);
        give_grad(pa[0], g[s][0]);
        give_grad(pa[1], g[s][1]);
        if (tendo_optimizer_step(a) != TENDO_OK)
            t_fail(&ck, "step %d: %s", s + 1, tendo_error_message(tendo_last_error()));
    }
    if (!(loaded = tendo_safetensors_load(ppath, d)))
        bail("loading the checkpoint: %s", tendo_error_message(tendo_last_error()));
    for (int j = 0; j < 2; j++) {
        pb[j] = tendo_tensor_to_device(tendo_collection_get(loaded, j ? "p1" : "p0"), d); /* a copy of its own */
        if (!pb[j])
            bail("p%d: %s", j, tendo_error_message(tendo_last_error()));
        make_leaf(pb[j]);
        tendo_optimizer_add(b, pb[j]);
    }
    if (tendo_optimizer_load(b, path) != TENDO_OK)
        t_fail(&ck, "optimizer_load: %s", tendo_error_message(tendo_last_error()));
    if (tendo_optimizer_steps(b, 1) != RESUME_AT)
        t_fail(&ck, "the loaded step count is %lld, not %d", (long long)tendo_optimizer_steps(b, 1), RESUME_AT);
    for (int s = RESUME_AT; s < RESUME_STEPS; s++) {
        tendo_optimizer_zero_grad(b);
        give_grad(pb[0], g[s][0]);
        give_grad(pb[1], g[s][1]);
        if (tendo_optimizer_step(b) != TENDO_OK)
            t_fail(&ck, "resumed step %d: %s", s + 1, tendo_error_message(tendo_last_error()));
    }
    for (int j = 0; j < 2; j++) {
        double *va = values(pa[j]), *vb = values(pb[j]);
        compare(&ck, j ? "p1" : "p0", vb, va, tendo_tensor_numel(pa[j]), 0, 0);
        free(va), free(vb);
    }
    t_done(&ck, "%s %s %s: resumed from a checkpoint after step %d, the same parameters bit for bit",
           tendo_dtype_name(dt), tendo_device_str(d), h->name, RESUME_AT);
    for (int j = 0; j < 2; j++) {
        tendo_tensor_free(pa[j]);
        tendo_tensor_free(pb[j]);
        for (int s = 0; s < RESUME_STEPS; s++)
            tendo_tensor_free(g[s][j]);
    }
    tendo_collection_free(c);
    tendo_collection_free(loaded);
    tendo_optimizer_free(a);
    tendo_optimizer_free(b);
    remove(path);
    remove(ppath);
}

/* ---- the update functions on strided tensors; a parameter written between steps ---- */

static void check_strided(void)
{
    const int64_t base[2] = {6, 4}, shape[2] = {4, 6};
    tensor_f32 *pb = (tensor_f32 *)(void *)random_tensor(TENDO_F32, tendo_cpu(), 2, base, 1.0);
    tensor_f32 *gb = (tensor_f32 *)(void *)random_tensor(TENDO_F32, tendo_cpu(), 2, base, 1.0);
    tensor_f32 *p = tensor_transpose(pb, 0, 1), *gr = tensor_transpose(gb, 0, 1);
    tensor_f32 *pd = tensor_contiguous(p), *gd = tensor_contiguous(gr);
    tensor_f32 *m[2], *v[2];
    bool good = true;

    for (int k = 0; k < 2; k++) {
        m[k] = tensor_f32_zeros(2, shape, tendo_cpu());
        v[k] = tensor_f32_zeros(2, shape, tendo_cpu());
    }
    for (int64_t s = 1; good && s <= 3; s++)
        good = tensor_adamw_update(p, gr, m[0], v[0], NULL, 1e-2, 0.9, 0.999, 1e-8, 0.1, s) == TENDO_OK &&
               tensor_adamw_update(pd, gd, m[1], v[1], NULL, 1e-2, 0.9, 0.999, 1e-8, 0.1, s) == TENDO_OK;
    if (good) {
        double *a = values(tensor_erase(p)), *b = values(tensor_erase(pd));
        good = !memcmp(a, b, 24 * sizeof *a);
        free(a), free(b);
    }
    ok(good, "f32 adamw_update of a transposed parameter and gradient: the dense result bit for bit");
    for (int k = 0; k < 2; k++) {
        tensor_f32_free(m[k]);
        tensor_f32_free(v[k]);
    }
    tensor_f32_free(p), tensor_f32_free(gr), tensor_f32_free(pd), tensor_f32_free(gd);
    tensor_f32_free(pb), tensor_f32_free(gb);
}

#ifdef TENDO_HAVE_BF16
/* A bf16 parameter written by someone else between steps: its master copy
 * follows (the next step starts from the new value, not the old master). */
static void check_master_follows(void)
{
    const int64_t shape[1] = {16};
    tendo_tensor *p = random_tensor(TENDO_BF16, tendo_cpu(), 1, shape, 1.0);
    tendo_tensor *g = random_tensor(TENDO_BF16, tendo_cpu(), 1, shape, 1.0);
    tensor_bf16 *ones = tensor_bf16_full(1, shape, 3.0, tendo_cpu());
    tendo_optimizer *o = tendo_sgd_new(0.5, 0, 0, false);
    double *gv = values(g), *after;
    bool good = true;

    make_leaf(p);
    tendo_optimizer_add(o, p);
    give_grad(p, g);
    tendo_optimizer_step(o);
    bool prev = tendo_set_grad_enabled(false);
    good = tensor_copy_into((tensor_bf16 *)(void *)p, ones) == TENDO_OK;
    tendo_set_grad_enabled(prev);
    good = good && tendo_optimizer_step(o) == TENDO_OK;
    after = values(p);
    for (int i = 0; good && i < 16; i++) /* 3 - 0.5 g, rounded to bf16 */
        good = fabs(after[i] - (3.0 - 0.5 * gv[i])) <= 0x1p-8 * fabs(3.0 - 0.5 * gv[i]);
    ok(good, "bf16: a parameter written between steps is what the next step starts from");
    free(gv), free(after);
    tensor_bf16_free(ones);
    tendo_optimizer_free(o);
    tendo_tensor_free(p);
    tendo_tensor_free(g);
}

/* Two bf16 parameters that are views of one buffer: updating one bumps the
 * version both see, which must not count as a write from outside (their
 * masters would be re-read from bf16 values, and steps too small for bf16
 * lost).  100 steps of 1e-4 from 1.0: 0.99 with masters, 1.0 without. */
static void check_shared_storage(void)
{
    tensor_bf16 *base = tensor_bf16_ones(2, (const int64_t[]){2, 8}, tendo_cpu());
    tensor_bf16 *v0 = tensor_narrow(base, 0, 0, 1), *v1 = tensor_narrow(base, 0, 1, 1);
    tensor_bf16 *p0 = tensor_detach(v0), *p1 = tensor_detach(v1);
    tensor_bf16 *g = tensor_bf16_ones(2, (const int64_t[]){1, 8}, tendo_cpu());
    tendo_optimizer *o = tendo_sgd_new(1e-4, 0, 0, false);
    double *a, *b;
    bool good = true;

    make_leaf(tensor_erase(p0));
    make_leaf(tensor_erase(p1));
    tendo_optimizer_add(o, tensor_erase(p0));
    tendo_optimizer_add(o, tensor_erase(p1));
    for (int s = 0; good && s < 100; s++) {
        give_grad(tensor_erase(p0), tensor_erase(g));
        give_grad(tensor_erase(p1), tensor_erase(g));
        good = tendo_optimizer_step(o) == TENDO_OK;
        tendo_optimizer_zero_grad(o);
    }
    a = values(tensor_erase(p0)), b = values(tensor_erase(p1));
    for (int i = 0; good && i < 8; i++)
        good = fabs(a[i] - 0.99) < 0.004 && fabs(b[i] - 0.99) < 0.004;
    ok(good, "bf16 parameters sharing one buffer keep their masters: 100 steps of 1e-4 reach %g, %g", a[0], b[0]);
    free(a), free(b);
    tendo_optimizer_free(o);
    tensor_bf16_free(base), tensor_bf16_free(v0), tensor_bf16_free(v1), tensor_bf16_free(p0), tensor_bf16_free(p1);
    tensor_bf16_free(g);
}
#endif

/* ---- errors ----------------------------------------------------------------------------- */

static void check_errors(const char *path)
{
    const int64_t shape[2] = {2, 3}, other[2] = {3, 2};
    tendo_tensor *p = random_tensor(TENDO_F32, tendo_cpu(), 2, shape, 1.0);
    tendo_tensor *q = random_tensor(TENDO_F32, tendo_cpu(), 2, shape, 1.0);
    tensor_f32 *pt = (tensor_f32 *)(void *)p, *g = (tensor_f32 *)(void *)random_tensor(TENDO_F32, tendo_cpu(), 2, shape, 1.0);
    tensor_f32 *m = tensor_f32_zeros(2, shape, tendo_cpu()), *v = tensor_f32_zeros(2, shape, tendo_cpu());
    tensor_f32 *bad = tensor_f32_zeros(2, other, tendo_cpu()), *wide = tensor_f32_zeros(2, (const int64_t[]){2, 6}, tendo_cpu());
    tensor_f32 *strided = tensor_f32_slice(wide, 1, 0, 6, 2);
    tensor_i64 *ints = tensor_i64_zeros(2, shape, tendo_cpu());
    tendo_optimizer *o;

    ok(!tendo_adamw_new(1e-3, 1.0, 0.999, 1e-8, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "betas"),
       "adamw_new: beta1 = 1 is refused");
    ok(!tendo_adamw_new(1e-3, 0.9, 0.999, -1, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "eps"),
       "adamw_new: a negative eps is refused");
    ok(!tendo_sgd_new(-0.1, 0, 0, false) && t_failed_with(TENDO_ERR_INVALID_ARG, "learning rate"),
       "sgd_new: a negative learning rate is refused");
    ok(!tendo_sgd_new(0.1, 0, 0, true) && t_failed_with(TENDO_ERR_INVALID_ARG, "Nesterov"),
       "sgd_new: Nesterov without momentum is refused");

    o = tendo_sgd_new(0.1, 0.9, 0, false);
    ok(tendo_optimizer_add(o, p) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "does not require grad"),
       "optimizer_add: a tensor that does not require grad is refused");
    ok(tendo_optimizer_add(o, tensor_erase(ints)) == TENDO_ERR_DTYPE && t_failed_with(TENDO_ERR_DTYPE, "float"),
       "optimizer_add: an integer tensor is refused");
    make_leaf(p);
    make_leaf(q);
    ok(tendo_optimizer_add(o, p) == TENDO_OK && tendo_optimizer_add(o, p) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "added before"), "optimizer_add: a parameter added twice is refused");
    ok(tendo_optimizer_clip_grad_norm(o, 0) < 0 && t_failed_with(TENDO_ERR_INVALID_ARG, "max_norm"),
       "clip_grad_norm: max_norm 0 is refused");
    ok(tendo_optimizer_clip_grad_norm(o, 1) == 0, "clip_grad_norm: no gradients, norm 0");

    ok(tensor_adamw_update(pt, g, m, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "adamw_update"),
       "adamw_update of a parameter that requires grad, grad mode on: refused");
    bool prev = tendo_set_grad_enabled(false);
    ok(tensor_adamw_update(pt, g, bad, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1) == TENDO_ERR_SHAPE &&
       t_failed_with(TENDO_ERR_SHAPE, "exp_avg"), "adamw_update: a state of another shape is refused");
    ok(tensor_adamw_update(pt, g, NULL, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "exp_avg is NULL"), "adamw_update: a missing moment is refused");
    ok(tensor_adamw_update(pt, g, m, m, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "share storage"), "adamw_update: the same tensor as both moments is refused");
    ok(tensor_adamw_update(pt, g, m, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 0) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "step"), "adamw_update: step 0 is refused");
    ok(tensor_adamw_update(pt, g, strided, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "dense"), "adamw_update: a strided state is refused");
    {
        tensor_f32 *row = tensor_f32_ones(1, (const int64_t[]){3}, tendo_cpu());
        tensor_f32 *wide = tensor_expand(row, 2, shape); /* [2, 3], each element twice */
        tendo_status st = tensor_adamw_update(wide, g, m, v, NULL, 1e-3, 0.9, 0.999, 1e-8, 0, 1);
        float mv[6];

        tensor_copy_to(m, mv, 6);
        ok(st != TENDO_OK && t_failed_with(st, "adamw_update") && mv[0] == 0 && mv[5] == 0,
           "adamw_update of an expanded parameter (elements written twice): refused, the moments untouched");
        tensor_f32_free(wide);
        tensor_f32_free(row);
    }
    ok(tensor_sgd_update(pt, g, m, NULL, 0.1, 0, 0, false, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "takes no"), "sgd_update: a momentum buffer without momentum is refused");
    ok(tensor_sgd_update(pt, g, NULL, NULL, 0.1, 0.9, 0, false, 1) == TENDO_ERR_INVALID_ARG &&
       t_failed_with(TENDO_ERR_INVALID_ARG, "needs"), "sgd_update: momentum without a buffer is refused");
    tendo_set_grad_enabled(prev);

    /* checkpoints that do not fit leave the optimizer as it was */
    give_grad(p, tensor_erase(g));
    tendo_optimizer_step(o);
    tendo_optimizer_save(o, path);
    {
        tendo_optimizer *a = tendo_adamw_new(1e-3, 0.9, 0.999, 1e-8, 0), *two = tendo_sgd_new(0.1, 0.9, 0, false);
        tendo_optimizer *other_shape = tendo_sgd_new(0.1, 0.9, 0, false);
        tendo_tensor *r = random_tensor(TENDO_F32, tendo_cpu(), 2, other, 1.0);

        make_leaf(r);
        tendo_optimizer_add(a, p);
        tendo_optimizer_add(two, p);
        tendo_optimizer_add(two, q);
        tendo_optimizer_add(other_shape, r);
        ok(tendo_optimizer_load(a, path) == TENDO_ERR_FORMAT && t_failed_with(TENDO_ERR_FORMAT, "sgd state"),
           "optimizer_load: SGD state into AdamW is refused");
        ok(tendo_optimizer_load(two, path) == TENDO_ERR_FORMAT && t_failed_with(TENDO_ERR_FORMAT, "1 parameters"),
           "optimizer_load: the state of another number of parameters is refused");
        ok(tendo_optimizer_load(other_shape, path) == TENDO_ERR_FORMAT &&
           t_failed_with(TENDO_ERR_FORMAT, "optimizer.0.momentum_buffer") && tendo_optimizer_steps(other_shape, 0) == 0,
           "optimizer_load: a state of another shape is refused, nothing changed");
        ok(tendo_optimizer_load(other_shape, "/nonexistent/optimizer.safetensors") == TENDO_ERR_IO &&
           t_failed_with(TENDO_ERR_IO, "nonexistent"), "optimizer_load: a file that is not there is TENDO_ERR_IO");
        tendo_optimizer_free(a);
        tendo_optimizer_free(two);
        tendo_optimizer_free(other_shape);
        tendo_tensor_free(r);
    }
    remove(path);
    tendo_optimizer_free(o);
    tendo_tensor_free(p), tendo_tensor_free(q);
    tensor_f32_free(g), tensor_f32_free(m), tensor_f32_free(v), tensor_f32_free(bad);
    tensor_f32_free(wide), tensor_f32_free(strided);
    tensor_i64_free(ints);
}

static void check_schedule(void)
{
    const double pi = 3.14159265358979323846;
    bool good = tendo_lr_cosine(0, 10, 110, 1e-3, 1e-4) == 0 && tendo_lr_cosine(5, 10, 110, 1e-3, 1e-4) == 5e-4 &&
                tendo_lr_cosine(10, 10, 110, 1e-3, 1e-4) == 1e-3 &&
                fabs(tendo_lr_cosine(60, 10, 110, 1e-3, 1e-4) - 5.5e-4) < 1e-15 &&
                fabs(tendo_lr_cosine(35, 10, 110, 1e-3, 0) - 1e-3 * 0.5 * (1 + cos(pi / 4))) < 1e-15 &&
                tendo_lr_cosine(110, 10, 110, 1e-3, 1e-4) == 1e-4 && tendo_lr_cosine(500, 10, 110, 1e-3, 1e-4) == 1e-4 &&
                tendo_lr_cosine(3, 0, 0, 1e-3, 1e-4) == 1e-4 && isnan(tendo_lr_cosine(1, 20, 10, 1e-3, 0)) &&
                isnan(tendo_lr_cosine(-1, 2, 10, 1e-3, 0));
    ok(good, "lr_cosine: linear warmup, cosine to lr_min, NaN for bad counts");
}

int main(void)
{
    static const hyper hypers[] = {
        {.adamw = true, .lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.01, .name = "adamw"},
        {.adamw = true, .lr = 3e-3, .beta1 = 0.3, .beta2 = 0.95, .eps = 1e-6, .name = "adamw beta1 0.3"},
        {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3, .name = "sgd momentum"},
        {.lr = 0.05, .momentum = 0.8, .nesterov = true, .name = "sgd nesterov"},
        {.lr = 0.1, .weight_decay = 0.05, .name = "sgd"},
    };
    const int nh = (int)(sizeof hypers / sizeof hypers[0]);
    tendo_device devs[2] = {tendo_cpu(), tendo_cuda(0)};
    int ndev = tendo_cuda_available() ? 2 : 1, nfloat = 0;
    tendo_dtype floats[TF_NDTYPES];
    char path[64];

    for (int i = 0; i < TF_NDTYPES; i++)
        if (tf_dtypes[i].mantissa_bits > 0)
            floats[nfloat++] = tf_dtypes[i].dtype;

    snprintf(path, sizeof path, "t-optim-%ld.safetensors", (long)getpid());
    /* per dtype and device: each hyper, clip, two resumes; then strided,
       schedule and 22 errors, and bf16's masters */
    plan(ndev * nfloat * (nh + 3) + 24
#ifdef TENDO_HAVE_BF16
         + 2
#endif
    );
    for (int di = 0; di < ndev; di++)
        for (int k = 0; k < nfloat; k++) {
            for (int h = 0; h < nh; h++) /* a parameter past the threading threshold once per dtype */
                check_steps(&hypers[h], floats[k], devs[di], h ? 9 : 130, h ? 7 : 257, 4, path);
            check_clip(floats[k], devs[di]);
            check_resume(&hypers[0], floats[k], devs[di], path);
            check_resume(&hypers[2], floats[k], devs[di], path);
        }
    check_strided();
#ifdef TENDO_HAVE_BF16
    check_master_follows();
    check_shared_storage();
#endif
    check_schedule();
    check_errors(path);
    return done_testing();
}
