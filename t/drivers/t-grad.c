/* t/drivers/t-grad.c - reverse-mode autograd.
 *
 * Part 1, the gradient check, is generated from the registry: every
 * differentiable function (t/fault-table.h marks them from their `grad`
 * entries) is called through its sample call on fixtures that require
 * grad, backward runs with random weights w (the loss is sum(result * w)),
 * and
 *   - in f64 on the CPU, each fixture's gradient is checked against central
 *     differences (eps 1e-6, torch.autograd.gradcheck's atol 1e-5 and rtol
 *     1e-3), with contiguous fixtures and with non-contiguous views;
 *   - every other float dtype on the CPU, and every float dtype on cuda:0
 *     (when there is one), against the f64 analytic gradient at the same
 *     (rounded) inputs, in relative 2-norm at that dtype's tolerance.
 * A sample call uses one fixture for both operands of a binary op, so a
 * tensor used twice (gradient accumulation) is checked throughout.
 *
 * Part 2, the record itself: grad mode, leaves, accumulation over two
 * backwards, freeing handles before backward, a deep chain, and the errors
 * of API.md (backward twice, a non-scalar root without grad, a saved tensor
 * modified in place, in-place writes under grad mode, non-leaves).
 *
 * Part 3, attention's fused backward (and its mask's gradient) in f64 and
 * f32, on the CPU and cuda:0, against a naive double-precision reference,
 * on the shapes part 1's sample call does not reach.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/autograd.h"
#include "core/internal.h"
#include "fault-table.h"
#include "tap.h"
#include "tendo.h"

#ifdef TENDO_HAVE_F64 /* part 1 checks against f64 */

/* ---- fixtures ------------------------------------------------------------------- */

static uint64_t rng_state;

static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static bool is_grad_fixture(int j)
{
    return !tf_fixtures[j].dtype && !tf_fixtures[j].mutable_;
}

/* Fixture j in f64 on the CPU: floats in [lo, hi] (a transposed or every-
 * other-element view when strided), indices in [0, 3), random masks. */
static tendo__tensor *f64_fixture(int j, double lo, double hi, bool strided, uint64_t seed)
{
    int nd = tf_fixtures[j].ndim;
    const int64_t *shape = tf_fixtures[j].shape;
    int64_t n = 1, wide[2];
    double vals[64];
    tendo__tensor *base, *v;

    rng_state = seed * 0x9E3779B97F4A7C15ULL + 12345;
    for (int k = 0; k < nd; k++)
        n *= shape[k];
    if (tf_fixtures[j].dtype == TENDO_BOOL) {
        bool b[64];
        for (int64_t k = 0; k < n; k++)
            b[k] = uniform() < 0.5;
        return (tendo__tensor *)(void *)tensor_bool_from_data(b, nd, shape, tendo_cpu());
    }
    if (tf_fixtures[j].dtype == TENDO_I64) {
        int64_t ix[64];
        for (int64_t k = 0; k < n; k++)
            ix[k] = (int64_t)(uniform() * 3);
        return (tendo__tensor *)(void *)tensor_i64_from_data(ix, nd, shape, tendo_cpu());
    }
#ifdef TENDO_HAVE_I32
    if (tf_fixtures[j].dtype == TENDO_I32) {
        int32_t ix[64];
        for (int64_t k = 0; k < n; k++)
            ix[k] = (int32_t)(uniform() * 3);
        return (tendo__tensor *)(void *)tensor_i32_from_data(ix, nd, shape, tendo_cpu());
    }
#endif
    if (tf_fixtures[j].dtype)
        bail("fixture %s: a dtype t-grad cannot make", tf_fixtures[j].name);
    for (int64_t k = 0; k < 2 * n; k++)
        vals[k] = lo + (hi - lo) * uniform();
    if (!strided || nd == 0) /* a 0-d fixture has one layout */
        return (tendo__tensor *)(void *)tensor_f64_from_data(vals, nd, shape, tendo_cpu());
    wide[0] = nd == 2 ? shape[1] : 2 * shape[0];
    wide[1] = nd == 2 ? shape[0] : 0;
    base = (tendo__tensor *)(void *)tensor_f64_from_data(vals, nd, wide, tendo_cpu());
    v = nd == 2 ? tendo__transpose(base, 0, 1) : tendo__slice(base, 0, 0, wide[0], 2);
    tendo__tensor_free(base);
    if (!v || tendo__tensor_contiguous(v))
        bail("cannot make a strided fixture");
    return v;
}

/* t as a new contiguous tensor of dtype dt on device d. */
static tendo__tensor *convert(const tendo__tensor *t, tendo_dtype dt, tendo_device d)
{
    bool was = tendo_set_grad_enabled(false); /* a copy outside any record */
    tendo__tensor *c = (tendo__tensor *)(void *)tendo_tensor_to_dtype((const tendo_tensor *)(const void *)t, dt);
    tendo__tensor *m = c && !tendo_device_equal(c->storage->device, d)
                           ? (tendo__tensor *)(void *)tendo_tensor_to_device((tendo_tensor *)(void *)c, d)
                           : c;

    tendo_set_grad_enabled(was);
    if (m != c)
        tendo__tensor_free(c);
    if (!m)
        bail("cannot convert a fixture: %s", tendo_error_message(tendo_last_error()));
    return m;
}

/* t's values as a new contiguous f64 CPU tensor. */
static tendo__tensor *as_f64(const tendo__tensor *t)
{
    return convert(t, TENDO_F64, tendo_cpu());
}

static double dot(const tendo__tensor *r, const tendo__tensor *w)
{
    tendo__tensor *a = as_f64(r);
    const double *x = tendo__tensor_data(a), *y = tendo__tensor_data(w);
    double s = 0;

    for (int64_t k = 0; k < a->numel; k++)
        s += x[k] * y[k];
    tendo__tensor_free(a);
    return s;
}

/* The gradient of fixture t as a contiguous f64 CPU tensor (zeros when
 * backward gave it none). */
static tendo__tensor *grad_f64(const tendo__tensor *t)
{
    if (t->ag && t->ag->grad)
        return as_f64(t->ag->grad);
    return (tendo__tensor *)(void *)tensor_f64_zeros(t->ndim, t->shape, tendo_cpu());
}

/* ---- one backward --------------------------------------------------------------- */

typedef struct {
    tendo__tensor *g[TF_NFIX]; /* each float fixture's gradient, f64 */
    bool good;
    char why[200];
} grads;

static void grads_free(grads *g)
{
    for (int j = 0; j < TF_NFIX; j++)
        tendo__tensor_free(g->g[j]);
}

/* Runs f on x's fixtures (which require grad), backward with weights w64
 * (f64 values; converted to the result's dtype and device). */
static grads run_backward(const tf_fn *f, tf_ctx *x, const double *w64, int64_t nw)
{
    grads out = {.good = false};
    tendo__tensor *r, *w, *wd;

    x->keep = true;
    x->kept[0] = NULL;
    if (!f->call(x) || !(r = x->kept[0])) {
        snprintf(out.why, sizeof out.why, "the call failed: %s", tendo_error_message(tendo_last_error()));
        return out;
    }
    if (!tendo__requires_grad(r)) {
        snprintf(out.why, sizeof out.why, "its result does not require grad");
        tendo__tensor_free(r);
        return out;
    }
    if (r->numel > nw)
        bail("%s: a result of %lld elements, past the weights", f->name, (long long)r->numel);
    w = (tendo__tensor *)(void *)tensor_f64_from_data(w64, r->ndim, r->shape, tendo_cpu());
    wd = convert(w, r->dtype, r->storage->device);
    if (tendo__backward("t-grad", r, wd) != TENDO_OK)
        snprintf(out.why, sizeof out.why, "backward failed: %s", tendo_error_message(tendo_last_error()));
    else
        out.good = true;
    for (int j = 0; j < TF_NFIX; j++)
        if (is_grad_fixture(j))
            out.g[j] = grad_f64(x->fix[j]);
    tendo__tensor_free(wd);
    tendo__tensor_free(w);
    tendo__tensor_free(r);
    return out;
}

/* Fresh fixtures for f: f64 values from the seed (strided views: f64 on
 * the CPU only), as dtype dt on device d; the float ones require grad. */
static void make_fixtures(tf_ctx *x, const tf_fn *f, tendo_dtype dt, tendo_device d, bool strided)
{
    for (int j = 0; j < TF_NFIX; j++) {
        tendo__tensor *t64 = f64_fixture(j, f->lo, f->hi, strided, (uint64_t)j + 1);
        tendo__tensor_free(x->fix[j]);
        if (tf_fixtures[j].dtype || (dt == TENDO_F64 && d.type == TENDO_CPU)) {
            x->fix[j] = tf_fixtures[j].dtype && d.type != TENDO_CPU ? convert(t64, t64->dtype, d) : t64;
            if (x->fix[j] != t64)
                tendo__tensor_free(t64);
        } else { /* rounded to dt (the other dtypes are checked on contiguous fixtures) */
            x->fix[j] = convert(t64, dt, d);
            tendo__tensor_free(t64);
        }
        if (is_grad_fixture(j) && tendo__set_requires_grad("t-grad", x->fix[j], true) != TENDO_OK)
            bail("set_requires_grad: %s", tendo_error_message(tendo_last_error()));
    }
}

static void drop_fixtures(tf_ctx *x)
{
    for (int j = 0; j < TF_NFIX; j++) {
        tendo__tensor_free(x->fix[j]);
        x->fix[j] = NULL;
    }
}

/* Fixtures of f64 holding the values x's fixtures of another dtype hold
 * (so that the reference is computed where the other dtype was). */
static void f64_at_same_points(tf_ctx *ref, const tf_ctx *x)
{
    for (int j = 0; j < TF_NFIX; j++) {
        tendo__tensor_free(ref->fix[j]);
        ref->fix[j] = tf_fixtures[j].dtype ? convert(x->fix[j], ((tendo__tensor *)x->fix[j])->dtype, tendo_cpu())
                                           : as_f64(x->fix[j]);
        if (is_grad_fixture(j))
            tendo__set_requires_grad("t-grad", ref->fix[j], true);
    }
}

/* ---- part 1: the gradient check ------------------------------------------------------ */

static double weights[256];

/* Central differences of sum(f(x) * w) against the analytic gradients. */
static void numeric_check(const tf_fn *f, bool strided)
{
    tf_ctx x;
    grads an;
    const double eps = 1e-6;
    char why[256] = "";
    int64_t checked = 0;
    tendo__tensor *w;

    memset(&x, 0, sizeof x);
    x.device = tendo_cpu();
    x.comm = tf_world();
    x.file = tmpfile();
    make_fixtures(&x, f, TENDO_F64, tendo_cpu(), strided);
    an = run_backward(f, &x, weights, 256);
    if (!an.good) {
        ok(false, "%s%s: gradcheck", f->name, strided ? " (strided)" : "");
        diag("%s", an.why);
        grads_free(&an);
        drop_fixtures(&x);
        fclose(x.file);
        return;
    }
    tendo_set_grad_enabled(false);
    w = NULL;
    for (int j = 0; j < TF_NFIX && !why[0]; j++) {
        tendo__tensor *t = x.fix[j];
        const double *ga;
        int64_t idx[TENDO_MAX_DIMS] = {0};

        if (!is_grad_fixture(j))
            continue;
        ga = tendo__tensor_data(an.g[j]);
        for (int64_t e = 0; e < t->numel && !why[0]; e++) {
            double *p = (double *)tendo__tensor_data(t), save, lp, lm, num;
            int64_t off = 0;

            for (int k = 0; k < t->ndim; k++)
                off += idx[k] * t->stride[k];
            p += off;
            save = *p;
            *p = save + eps;
            x.kept[0] = NULL;
            if (!f->call(&x) || !x.kept[0])
                bail("%s: the call failed under perturbation", f->name);
            if (!w)
                w = (tendo__tensor *)(void *)tensor_f64_from_data(weights, ((tendo__tensor *)x.kept[0])->ndim,
                                                                   ((tendo__tensor *)x.kept[0])->shape, tendo_cpu());
            lp = dot(x.kept[0], w);
            tendo__tensor_free(x.kept[0]);
            *p = save - eps;
            x.kept[0] = NULL;
            if (!f->call(&x) || !x.kept[0])
                bail("%s: the call failed under perturbation", f->name);
            lm = dot(x.kept[0], w);
            tendo__tensor_free(x.kept[0]);
            *p = save;
            num = (lp - lm) / (2 * eps);
            if (!(fabs(ga[e] - num) <= 1e-5 + 1e-3 * fabs(num)))
                snprintf(why, sizeof why, "%s[%lld]: analytic %.10g, numeric %.10g", tf_fixtures[j].name,
                         (long long)e, ga[e], num);
            checked++;
            for (int k = t->ndim - 1; k >= 0; k--) {
                if (++idx[k] < t->shape[k])
                    break;
                idx[k] = 0;
            }
        }
    }
    tendo_set_grad_enabled(true);
    if (!ok(!why[0] && checked > 0, "f64 %s%s: analytic gradient = central differences (%lld elements)",
            f->name + strlen("tensor_f64_"), strided ? ", strided inputs" : "", (long long)checked))
        diag("%s", why[0] ? why : "no input was checked");
    tendo__tensor_free(w);
    grads_free(&an);
    drop_fixtures(&x);
    fclose(x.file);
}

/* A cast's gradient is grad cast back: exactly w rounded through the result's dtype. */
static void cast_check(const tf_fn *f)
{
    tf_ctx x;
    grads an;
    bool good;

    memset(&x, 0, sizeof x);
    x.device = tendo_cpu();
    x.comm = tf_world();
    make_fixtures(&x, f, TENDO_F64, tendo_cpu(), false);
    an = run_backward(f, &x, weights, 256);
    good = an.good;
    if (good) {
        x.keep = true;
        f->call(&x);
        tendo__tensor *r = x.kept[0];
        tendo__tensor *w = (tendo__tensor *)(void *)tensor_f64_from_data(weights, r->ndim, r->shape, tendo_cpu());
        tendo__tensor *wr = convert(w, r->dtype, tendo_cpu()), *back = as_f64(wr);
        const double *a = tendo__tensor_data(an.g[TF_T34]), *b = tendo__tensor_data(back);

        for (int64_t k = 0; k < back->numel; k++)
            good = good && a[k] == b[k];
        tendo__tensor_free(back);
        tendo__tensor_free(wr);
        tendo__tensor_free(w);
        tendo__tensor_free(r);
    }
    ok(good, "f64 %s: the gradient is the weights cast back", f->name + strlen("tensor_f64_"));
    if (!an.good)
        diag("%s", an.why);
    grads_free(&an);
    drop_fixtures(&x);
}

/* The relative 2-norm tolerance of a gradient in dt (against f64's at the same inputs). */
static double dtype_tol(tendo_dtype dt, bool cuda)
{
    switch (dt) {
    case TENDO_F64: return cuda ? 1e-9 : 0;
    case TENDO_F32: return 1e-4;
#ifdef TENDO_HAVE_F16
    case TENDO_F16: return 1e-2;
#endif
#ifdef TENDO_HAVE_BF16
    case TENDO_BF16: return 6e-2;
#endif
    default: return 0.5; /* the 8-bit floats: 3 or 2 significand bits, rounded at every op */
    }
}

static const tf_fn *find_fn(const char *suffix, tendo_dtype dt)
{
    char name[128];

    snprintf(name, sizeof name, "tensor_%s_%s", tendo_dtype_name(dt), suffix);
    for (int i = 0; i < TF_NFNS; i++)
        if (tf_fns[i].dtype == dt && strcmp(tf_fns[i].name, name) == 0)
            return &tf_fns[i];
    return NULL;
}

/* f (of dtype dt, on d) against f64 on the CPU at the same inputs. */
static void dtype_check(const tf_fn *f64fn, tendo_dtype dt, tendo_device d)
{
    const char *suffix = f64fn->name + strlen("tensor_f64_");
    const tf_fn *f = find_fn(suffix, dt);
    tf_ctx x, ref;
    grads g, rg;
    double num = 0, den = 0, tol = dtype_tol(dt, d.type == TENDO_CUDA);
    bool good;

    if (!f || !f->grad || (d.type == TENDO_CUDA && f->refused_cuda))
        return;
    memset(&x, 0, sizeof x);
    memset(&ref, 0, sizeof ref);
    x.device = d;
    x.comm = tf_world();
    ref.device = tendo_cpu();
    ref.comm = tf_world();
    make_fixtures(&x, f, dt, d, false);
    f64_at_same_points(&ref, &x);
    g = run_backward(f, &x, weights, 256);
    rg = run_backward(f64fn, &ref, weights, 256);
    good = g.good && rg.good;
    for (int j = 0; good && j < TF_NFIX; j++) {
        const double *a, *b;

        if (!is_grad_fixture(j))
            continue;
        a = tendo__tensor_data(g.g[j]);
        b = tendo__tensor_data(rg.g[j]);
        for (int64_t k = 0; k < g.g[j]->numel; k++) {
            if (isnan(a[k]) != isnan(b[k]))
                good = false;
            else if (!isnan(b[k])) {
                num += (a[k] - b[k]) * (a[k] - b[k]);
                den += b[k] * b[k];
            }
        }
    }
    good = good && sqrt(num) <= tol * sqrt(den) + tol * 1e-3;
    if (!ok(good, "%s %s%s: gradient within %g of f64's (relative 2-norm)", tendo_dtype_name(dt), suffix,
            d.type == TENDO_CUDA ? " on cuda:0" : "", tol))
        diag("%s%s relative error %g", g.why, rg.why, den > 0 ? sqrt(num / den) : sqrt(num));
    grads_free(&g);
    grads_free(&rg);
    drop_fixtures(&x);
    drop_fixtures(&ref);
}

static void part1(void)
{
    const tendo_dtype others[] = {
        TENDO_F32,
#ifdef TENDO_HAVE_F16
        TENDO_F16,
#endif
#ifdef TENDO_HAVE_BF16
        TENDO_BF16,
#endif
#ifdef TENDO_HAVE_F8E4M3
        TENDO_F8E4M3,
#endif
#ifdef TENDO_HAVE_F8E5M2
        TENDO_F8E5M2,
#endif
    };
    bool cuda = tendo_cuda_available();
    int nfn = 0;

    rng_state = 7;
    for (int k = 0; k < 256; k++)
        weights[k] = 2 * uniform() - 1;
    for (int i = 0; i < TF_NFNS; i++) {
        const tf_fn *f = &tf_fns[i];
        bool is_cast;

        if (f->dtype != TENDO_F64 || !f->grad)
            continue;
        nfn++;
        is_cast = strncmp(f->name, "tensor_f64_to_", 14) == 0 && strcmp(f->name, "tensor_f64_to_f64") != 0;
        if (is_cast) {
            cast_check(f);
        } else {
            numeric_check(f, false);
            numeric_check(f, true);
        }
        for (size_t k = 0; k < sizeof others / sizeof *others; k++)
            dtype_check(f, others[k], tendo_cpu());
        if (cuda) {
            dtype_check(f, TENDO_F64, tendo_cuda(0));
            for (size_t k = 0; k < sizeof others / sizeof *others; k++)
                dtype_check(f, others[k], tendo_cuda(0));
        }
    }
    diag("part 1: %d differentiable functions of f64%s", nfn, cuda ? ", on the CPU and cuda:0" : " (no CUDA device)");
}

/* ---- part 3: attention's fused backward ---------------------------------------------- */

/* One attention problem: q [batch, hq, lq, d] (2-D [lq, d] when batch and
 * hq are 0), k [.., hkv, lk, d], v [.., hkv, lk, dv]; the mask of shape
 * mshape (nm dims, 0: none), broadcast to the scores; q a non-contiguous
 * view when strided (f64 on the CPU). */
typedef struct {
    int64_t batch, hq, hkv, lq, lk, d, dv;
    bool causal, strided;
    int nm;
    int64_t mshape[4];
} attn_case;

/* The mask element of (b, h, i, j): mshape right-aligned against [batch,
 * hq, lq, lk], size-1 dims broadcast. */
static double mask_at(const attn_case *c, const double *m, int64_t b, int64_t h, int64_t i, int64_t j)
{
    int64_t full[4] = {b, h, i, j}, off = 0;

    for (int k = 0; k < c->nm; k++) {
        int64_t size = c->mshape[k], at = full[4 - c->nm + k];
        off = off * size + (size == 1 ? 0 : at);
    }
    return m[off];
}

/* The gradients of sum(attention(q, k, v, mask) * w) in double, naively
 * (the whole score matrix of each head): dq, dk, dv zeroed by the caller,
 * dm (the mask's shape) too, or NULL. */
static void attn_reference(const attn_case *c, const double *q, const double *k, const double *v, const double *m,
                           const double *w, double *dq, double *dk, double *dv, double *dm)
{
    int64_t nb = c->batch ? c->batch : 1, hq = c->hq ? c->hq : 1, hkv = c->hkv ? c->hkv : 1;
    int64_t lq = c->lq, lk = c->lk, d = c->d, e = c->dv;
    double sc = 1 / sqrt((double)d), *p = calloc((size_t)(lk * 2), sizeof *p), *dp = p + lk;

    for (int64_t b = 0; b < nb; b++)
        for (int64_t h = 0; h < hq; h++) {
            int64_t kh = b * hkv + h / (hq / hkv);
            const double *Q = q + (b * hq + h) * lq * d, *K = k + kh * lk * d, *V = v + kh * lk * e;
            const double *W = w + (b * hq + h) * lq * e;
            double *dQ = dq + (b * hq + h) * lq * d, *dK = dk + kh * lk * d, *dV = dv + kh * lk * e;

            for (int64_t i = 0; i < lq; i++) {
                double mx = -INFINITY, sum = 0, dd = 0;

                for (int64_t j = 0; j < lk; j++) {
                    double s = 0;
                    for (int64_t x = 0; x < d; x++)
                        s += Q[i * d + x] * K[j * d + x];
                    s = s * sc + (m ? mask_at(c, m, b, h, i, j) : 0);
                    if (c->causal && j > i + lk - lq)
                        s = -INFINITY;
                    p[j] = s;
                    mx = s > mx ? s : mx;
                }
                for (int64_t j = 0; j < lk; j++)
                    sum += p[j] = exp(p[j] - mx);
                for (int64_t j = 0; j < lk; j++) {
                    p[j] /= sum;
                    dp[j] = 0;
                    for (int64_t x = 0; x < e; x++) {
                        dp[j] += W[i * e + x] * V[j * e + x];
                        dV[j * e + x] += p[j] * W[i * e + x];
                    }
                    dd += p[j] * dp[j];
                }
                for (int64_t j = 0; j < lk; j++) {
                    double ds = p[j] * (dp[j] - dd);
                    if (dm) { /* summed where the mask broadcast */
                        int64_t full[4] = {b, h, i, j}, off = 0;
                        for (int x = 0; x < c->nm; x++)
                            off = off * c->mshape[x] + (c->mshape[x] == 1 ? 0 : full[4 - c->nm + x]);
                        dm[off] += ds;
                    }
                    for (int64_t x = 0; x < d; x++) {
                        dQ[i * d + x] += sc * ds * K[j * d + x];
                        dK[j * d + x] += sc * ds * Q[i * d + x];
                    }
                }
            }
        }
    free(p);
}

/* n random values in [-1, 1]. */
static double *randoms(int64_t n)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);

    for (int64_t i = 0; i < n; i++)
        x[i] = 2 * uniform() - 1;
    return x;
}

/* The relative 2-norm distance of t (any float dtype and device) from ref. */
static double rel_dist(const tendo__tensor *t, const double *ref)
{
    tendo__tensor *a = t ? as_f64(t) : NULL;
    const double *x = a ? tendo__tensor_data(a) : NULL;
    double num = 0, den = 0;

    if (!a)
        return INFINITY;
    for (int64_t i = 0; i < a->numel; i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    tendo__tensor_free(a);
    return sqrt(num) / (sqrt(den) > 1e-300 ? sqrt(den) : 1);
}

static tendo__tensor *attention_of(tendo_dtype dt, const tendo__tensor *q, const tendo__tensor *k,
                                   const tendo__tensor *v, const tendo__tensor *m, bool causal)
{
    if (dt == TENDO_F64)
        return (tendo__tensor *)(void *)tensor_f64_attention((const tensor_f64 *)(const void *)q,
                                                             (const tensor_f64 *)(const void *)k,
                                                             (const tensor_f64 *)(const void *)v,
                                                             (const tensor_f64 *)(const void *)m, causal, 0.0);
    return (tendo__tensor *)(void *)tensor_f32_attention((const tensor_f32 *)(const void *)q,
                                                         (const tensor_f32 *)(const void *)k,
                                                         (const tensor_f32 *)(const void *)v,
                                                         (const tensor_f32 *)(const void *)m, causal, 0.0);
}

/* Case c in dtype dt on device dev against the double reference. */
static void attn_grad_check(const attn_case *c, const char *what, tendo_dtype dt, tendo_device dev)
{
    int two = c->batch == 0, nd = two ? 2 : 4;
    int64_t nb = two ? 1 : c->batch, hq = two ? 1 : c->hq, hkv = two ? 1 : c->hkv;
    int64_t qs[4] = {nb, hq, c->lq, c->d}, ks[4] = {nb, hkv, c->lk, c->d}, vs[4] = {nb, hkv, c->lk, c->dv};
    int64_t ws[4] = {nb, hq, c->lq, c->dv}, nq = nb * hq * c->lq * c->d, nk = nb * hkv * c->lk * c->d;
    int64_t nv = nb * hkv * c->lk * c->dv, nw = nb * hq * c->lq * c->dv, nmask = 1;
    double tol = dt == TENDO_F64 ? 1e-10 : 1e-4, *q, *k, *v, *w, *m = NULL, *dq, *dk, *dv, *dm = NULL, err[4];
    tendo__tensor *t[5] = {NULL}, *wt, *o;
    const double *ref[4];
    char name[160];

    for (int i = 0; i < c->nm; i++)
        nmask *= c->mshape[i];
    q = randoms(nq), k = randoms(nk), v = randoms(nv), w = randoms(nw);
    if (c->nm)
        m = randoms(nmask);
    dq = calloc((size_t)nq, sizeof *dq), dk = calloc((size_t)nk, sizeof *dk), dv = calloc((size_t)nv, sizeof *dv);
    if (c->nm)
        dm = calloc((size_t)nmask, sizeof *dm);
    attn_reference(c, q, k, v, m, w, dq, dk, dv, dm);
    {
        const double *src[5] = {q, k, v, w, m};
        const int64_t *shp[4] = {qs, ks, vs, ws};

        for (int i = 0; i < 5; i++) {
            tendo__tensor *f;

            if (i == 4 && !m)
                break;
            if (i == 0 && c->strided) { /* q as the first d columns of [.., lq, 2d] */
                int64_t wide[4] = {qs[0], qs[1], qs[2], 2 * qs[3]};
                double *x = malloc((size_t)(2 * nq) * sizeof *x);
                tendo__tensor *big;

                for (int64_t r = 0; r < nq / c->d; r++)
                    for (int64_t j = 0; j < 2 * c->d; j++)
                        x[r * 2 * c->d + j] = j < c->d ? q[r * c->d + j] : 99;
                big = (tendo__tensor *)(void *)tensor_f64_from_data(x, nd, two ? wide + 2 : wide, tendo_cpu());
                f = (tendo__tensor *)(void *)tensor_f64_narrow((tensor_f64 *)(void *)big, -1, 0, c->d);
                tendo__tensor_free(big);
                free(x);
            } else {
                f = (tendo__tensor *)(void *)tensor_f64_from_data(src[i], i == 4 ? c->nm : nd,
                                                                  i == 4 ? c->mshape : two ? shp[i] + 2 : shp[i],
                                                                  tendo_cpu());
            }
            t[i] = dt == TENDO_F64 && dev.type == TENDO_CPU ? f : convert(f, dt, dev);
            if (t[i] != f)
                tendo__tensor_free(f);
        }
    }
    for (int i = 0; i < 5; i++)
        if (t[i] && i != 3)
            tendo__set_requires_grad("t-grad", t[i], true);
    wt = t[3];
    o = attention_of(dt, t[0], t[1], t[2], t[4], c->causal);
    snprintf(name, sizeof name, "%s attention %s on %s", dt == TENDO_F64 ? "f64" : "f32", what, tendo_device_str(dev));
    if (!o || tendo__backward("t-grad", o, wt) != TENDO_OK) {
        ok(false, "%s: backward", name);
        diag("%s", tendo_error_message(tendo_last_error()));
    } else {
        ref[0] = dq, ref[1] = dk, ref[2] = dv, ref[3] = dm;
        for (int i = 0; i < 4; i++) {
            const tendo__tensor *g = i < 3 ? t[i] : t[4];
            err[i] = g ? rel_dist(g->ag && g->ag->grad ? g->ag->grad : NULL, ref[i]) : 0;
        }
        if (!ok(err[0] <= tol && err[1] <= tol && err[2] <= tol && err[3] <= tol,
                "%s: dq, dk, dv%s within %g of the double reference", name, m ? ", dmask" : "", tol))
            diag("relative errors %g %g %g %g", err[0], err[1], err[2], err[3]);
    }
    tendo__tensor_free(o);
    for (int i = 0; i < 5; i++)
        tendo__tensor_free(t[i]);
    free(q), free(k), free(v), free(w), free(m), free(dq), free(dk), free(dv), free(dm);
}

/* The fused kernels past what part 1's sample call reaches: grouped-query
 * heads, causal with Lq != Lk, masks broadcast, blocks of queries and keys
 * crossed, one head of 2-D operands, a non-contiguous q. */
static void part3(void)
{
    static const attn_case cases[] = {
        {2, 4, 2, 5, 7, 3, 4, true, false, 0, {0}},
        {1, 2, 1, 70, 300, 8, 5, false, false, 2, {70, 300}},
        {2, 2, 2, 6, 9, 4, 4, true, false, 3, {2, 1, 9}},
        {0, 0, 0, 5, 8, 3, 2, false, false, 2, {5, 8}},
        {1, 3, 1, 66, 66, 5, 3, true, true, 0, {0}},
    };
    static const char *const what[] = {"GQA causal Lq<Lk", "blocks crossed, [Lq, Lk] mask",
                                       "causal + [H, 1, Lk] mask", "2-D, one head", "strided q, causal"};
    bool cuda = tendo_cuda_available();

    rng_state = 11;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        attn_case c = cases[i];

        attn_grad_check(&c, what[i], TENDO_F64, tendo_cpu());
        c.strided = false;
        attn_grad_check(&c, what[i], TENDO_F32, tendo_cpu());
        if (cuda) {
            attn_grad_check(&c, what[i], TENDO_F64, tendo_cuda(0));
            attn_grad_check(&c, what[i], TENDO_F32, tendo_cuda(0));
        }
    }
}

#else
static void part1(void)
{
    diag("part 1 skipped: this build has no f64 to check gradients against");
}

static void part3(void)
{
    diag("part 3 skipped: this build has no f64 to check gradients against");
}
#endif

/* ---- part 2: the record --------------------------------------------------------------- */

static tensor_f32 *vec(int64_t n, double start)
{
    tensor_f32 *t = tensor_f32_arange(start, start + (double)n, 1.0, tendo_cpu());

    if (!t)
        bail("arange: %s", tendo_error_message(tendo_last_error()));
    return t;
}

static double at(const tensor_f32 *t, int64_t k)
{
    return tensor_f32_data(t)[k];
}

#ifdef TENDO_HAVE_BF16
/* The gradient of bf16 x [1] = 1 through 1 + 4 * 2^-9, in terms of x used
 * five times (through x itself, or through h = x * 1 when via_node): summed
 * in bf16 one term at a time each 2^-9 (a quarter of bf16's step at 1)
 * would be lost, giving 1; summed in f32 and rounded once it is exactly
 * 1 + 2^-7. */
static void bf16_sums_in_f32(bool via_node)
{
    static const double c[5] = {0x1p-9, 0x1p-9, 1, 0x1p-9, 0x1p-9}; /* 1 in the middle of either order */
    int64_t one = 1;
    tensor_bf16 *x = tensor_bf16_full(1, &one, 1.0, tendo_cpu()), *h, *acc = NULL, *g;
    tensor_f32 *g32;

    tensor_set_requires_grad(x, true);
    h = via_node ? tensor_bf16_mul_scalar(x, 1.0) : tensor_bf16_detach(x);
    if (!via_node)
        tensor_bf16_free(h), h = NULL;
    for (int k = 0; k < 5; k++) {
        tensor_bf16 *t = tensor_bf16_mul_scalar(h ? h : x, c[k]), *s = acc ? tensor_bf16_add(acc, t) : t;

        if (s != t)
            tensor_bf16_free(t);
        tensor_bf16_free(acc);
        acc = s;
    }
    ok(tensor_bf16_backward(acc, NULL) == TENDO_OK, "bf16 x used five times%s: backward", via_node ? " via a node" : "");
    g = tensor_bf16_grad(x);
    g32 = g ? tensor_bf16_to_f32(g) : NULL;
    if (!ok(g32 && at(g32, 0) == 1 + 0x1p-7, "bf16 gradient summed in f32, rounded once: 1 + 2^-7%s",
            via_node ? " (an intermediate's gradient)" : " (a leaf's)"))
        diag("got %.10g", g32 ? at(g32, 0) : NAN);
    tensor_f32_free(g32);
    tensor_bf16_free(g);
    tensor_bf16_free(acc);
    tensor_bf16_free(h);
    tensor_bf16_free(x);
}
#endif

static void part2(void)
{
    tensor_f32 *x = vec(4, 1), *y, *z, *g, *u, *v;
    tendo_status st;

    /* leaves, grad mode, detach */
    ok(!tensor_requires_grad(x), "a new tensor does not require grad");
    ok(tensor_set_requires_grad(x, true) == TENDO_OK && tensor_requires_grad(x), "set_requires_grad makes a leaf");
    y = tensor_exp(x);
    ok(tensor_requires_grad(y), "a result computed from a leaf requires grad");
    ok(tensor_set_requires_grad(y, false) == TENDO_ERR_INVALID_ARG, "a recorded result's requires_grad cannot be set");
    u = tensor_detach(y);
    ok(u && !tensor_requires_grad(u) && tensor_shares_storage(u, y), "detach: a view outside the record");
    tensor_free(u);
    ok(!tendo_set_grad_enabled(false) == false, "grad mode starts on");
    u = tensor_exp(x);
    ok(!tensor_requires_grad(u), "with grad mode off nothing is recorded");
    ok(tendo_set_grad_enabled(true) == false, "set_grad_enabled returns the previous setting");
    tensor_free(u);

    /* errors */
    g = tensor_grad(x);
    ok(!g && tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG, "grad before any backward: an error");
    ok(tensor_backward(y, NULL) == TENDO_ERR_INVALID_ARG, "backward of a non-scalar root without grad: an error");
    z = tensor_sum_all(y);
    tensor_free(y); /* an intermediate freed before backward */
    ok(tensor_backward(z, NULL) == TENDO_OK, "backward through a freed intermediate");
    g = tensor_grad(x);
    ok(g && fabs(at(g, 0) - exp(1.0)) < 1e-5 && fabs(at(g, 3) - exp(4.0)) < 1e-4, "d sum(exp(x)) / dx = exp(x)");
    st = tensor_backward(z, NULL);
    ok(st == TENDO_ERR_INVALID_ARG, "backward twice: an error");
    diag("%s", tendo_error_message(tendo_last_error()));
    tensor_free(z);

    /* accumulation: a second record adds into the same gradient, seen through the first handle */
    y = tensor_mul_scalar(x, 3.0);
    z = tensor_sum_all(y);
    ok(tensor_backward(z, NULL) == TENDO_OK && fabs(at(g, 0) - (exp(1.0) + 3)) < 1e-5,
       "gradients accumulate over backwards, in place");
    tensor_free(z);
    tensor_free(y);
    tensor_free(g);
    tensor_zero_grad(x);
    g = tensor_grad(x);
    ok(!g, "zero_grad drops the gradient");

    /* writes */
    u = vec(4, 0);
    st = tensor_add_out(x, x, u);
    ok(st == TENDO_ERR_INVALID_ARG, "an _out form writing a tensor that requires grad fails under grad mode");
    diag("%s", tendo_error_message(tendo_last_error()));
    tendo_set_grad_enabled(false);
    ok(tensor_add_out(x, x, u) == TENDO_OK, "and works with grad mode off");
    tendo_set_grad_enabled(true);
    y = tensor_mul(x, u); /* saves u */
    ok(tensor_add_out(u, u, u) == TENDO_OK, "u (no grad) can be written");
    z = tensor_sum_all(y);
    st = tensor_backward(z, NULL);
    ok(st == TENDO_ERR_INVALID_ARG && strstr(tendo_error_message(tendo_last_error()), "mul"),
       "a saved tensor modified in place fails backward, naming the op that saved it");
    diag("%s", tendo_error_message(tendo_last_error()));
    ok(!tensor_grad(x), "and the failed backward left the leaf's gradient as it was");
    tensor_free(z);
    tensor_free(y);
    tensor_free(u);

    /* a deep chain: backward and freeing take no stack per node */
    v = tensor_mul_scalar(x, 1.0);
    for (int k = 0; k < 20000; k++) {
        tensor_f32 *w = tensor_add_scalar(v, 0.0);
        tensor_free(v);
        v = w;
    }
    z = tensor_sum_all(v);
    ok(tensor_backward(z, NULL) == TENDO_OK, "backward through 20000 nodes");
    g = tensor_grad(x);
    ok(g && at(g, 0) == 1 && at(g, 3) == 1, "the chain's gradient is 1");
    tensor_free(g);
    tensor_free(z);
    tensor_free(v);

    /* a function of many inputs: cat of 100 (one node, 100 edges) */
    {
        tensor_f32 *parts[100];
        bool good = true;

        for (int k = 0; k < 100; k++) {
            parts[k] = vec(2, k);
            tensor_set_requires_grad(parts[k], true);
        }
        y = tensor_cat((const tensor_f32 *const *)parts, 100, 0);
        u = tensor_mul(y, y);
        z = tensor_sum_all(u);
        ok(z && tensor_backward(z, NULL) == TENDO_OK, "backward through cat of 100 tensors");
        for (int k = 0; k < 100 && good; k++) {
            g = tensor_grad(parts[k]);
            good = g && at(g, 0) == 2.0 * k && at(g, 1) == 2.0 * (k + 1);
            tensor_free(g);
        }
        ok(good, "each of the 100 gets d sum(x^2) = 2x");
        for (int k = 0; k < 100; k++)
            tensor_free(parts[k]);
        tensor_free(z), tensor_free(u), tensor_free(y);
    }

    /* the leaf freed before backward: the record keeps what it needs */
    u = vec(3, 1);
    tensor_set_requires_grad(u, true);
    y = tensor_mul(u, u);
    tensor_free(u);
    z = tensor_sum_all(y);
    ok(tensor_backward(z, NULL) == TENDO_OK, "backward after the leaf's handle was freed");
    tensor_free(z);
    tensor_free(y);
    tensor_free(x);
}

int main(void)
{
    plan_lazy();
    part1();
    part2();
#ifdef TENDO_HAVE_BF16
    bf16_sums_in_f32(false);
    bf16_sums_in_f32(true);
#endif
    part3();
    return done_testing();
}
