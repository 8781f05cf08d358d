/* t/drivers/t-vmath.c - accuracy and special values of src/cpu/vmath.c's f32 loops
 * (and of the f64 exp, section (d)).
 *
 * Every function is measured against a double-precision reference (libm's
 * double exp, log, tanh, erfc, sin, cos, sqrt) in ulps of the exact result
 * (subnormal results in units of 2^-149, an infinite result counted as
 * 2^128): over a dense sweep of the meaningful f32 range (every 37th bit
 * pattern, both signs), random bit patterns in that range, exhaustive runs
 * over the delicate ranges (exp's subnormal results, log of subnormals),
 * special values, lengths 0..40 at every alignment and in place, and the
 * streaming path for large n.  All of it runs twice: with the AVX2+FMA
 * kernels (when the CPU has them) and with the portable scalar loops.
 */
#include "tap.h"
#include "cpu/vmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*vfun)(const float *, float *, int64_t);
typedef float (*sfun)(float);
typedef double (*dref)(double);

/* ---- references ---------------------------------------------------------- */

static double ref_exp(double x) { return exp(x); }
static double ref_log(double x) { return log(x); }
static double ref_tanh(double x) { return tanh(x); }
static double ref_sin(double x) { return sin(x); }
static double ref_cos(double x) { return cos(x); }
static double ref_rsqrt(double x) { return 1.0 / sqrt(x); }

/* 1/(1+exp(-x)), without overflow for x < 0. */
static double ref_sigmoid(double x)
{
    return x < 0 ? exp(x) / (1.0 + exp(x)) : 1.0 / (1.0 + exp(-x));
}

/* x*sigmoid(x), with the limit -0 at -inf. */
static double ref_silu(double x) { return x == -INFINITY ? -0.0 : x * ref_sigmoid(x); }

/* 0.5*x*(1+erf(x/sqrt2)) as 0.5*x*erfc(-x/sqrt2), with the limit -0 at -inf. */
static double ref_gelu(double x)
{
    return x == -INFINITY ? -0.0 : 0.5 * x * erfc(-x / sqrt(2.0));
}

/* gelu's derivative, Phi(x) + x phi(x), with the limits -0 and 1 at -inf and +inf. */
static double ref_gelu_deriv(double x)
{
    double xd = isinf(x) ? 0.0 : x;

    if (x == -INFINITY)
        return -0.0;
    return 0.5 * erfc(-x / sqrt(2.0)) + xd * exp(-0.5 * xd * xd) * 0.39894228040143267794;
}

/* silu's derivative, s (1 + x (1 - s)), with the limits -0 and 1 at -inf and +inf. */
static double ref_silu_deriv(double x)
{
    if (isinf(x))
        return x < 0 ? -0.0 : 1.0;
    return ref_sigmoid(x) * (1.0 + x * ref_sigmoid(-x));
}

/* ---- the table of functions -------------------------------------------- */

struct fn {
    const char *name;
    vfun v;
    sfun s;
    dref ref;
    uint32_t lo;     /* sweep |x| bit patterns [lo, hi) densely, */
    uint32_t hi;     /* [0, lo) sparsely (there f(x) is ~linear) */
    int both_signs;  /* sweep negative x too */
    double max_ulp;  /* bound for the AVX2 kernels */
    int gelu_rule;   /* 1: also relative 1e-6 or absolute 1e-7; 2: that rule only */
};

/* |x| below 2^-40, where every f here is x, 1, or linear, gets a sparse
 * sweep only. */
#define TINY 0x2b800000u

static const struct fn fns[] = {
    {"exp", tendo__vexp_f32, tendo__exp_f32, ref_exp, TINY, 0x42e00000 /* 112 */, 1, 2.0, 0},
    {"log", tendo__vlog_f32, tendo__log_f32, ref_log, 0, 0x7f800000, 0, 2.0, 0},
    {"tanh", tendo__vtanh_f32, tendo__tanh_f32, ref_tanh, TINY, 0x41400000 /* 12 */, 1, 3.0, 0},
    {"sigmoid", tendo__vsigmoid_f32, tendo__sigmoid_f32, ref_sigmoid, TINY, 0x42f00000, 1, 3.0, 0},
    {"silu", tendo__vsilu_f32, tendo__silu_f32, ref_silu, TINY, 0x42f00000 /* 120 */, 1, 3.0, 0},
    {"gelu", tendo__vgelu_f32, tendo__gelu_f32, ref_gelu, TINY, 0x41800000 /* 16 */, 1, 6.0, 1},
    {"sin", tendo__vsin_f32, tendo__sin_f32, ref_sin, TINY, 0x4b800000 /* 2^24 */, 0, 2.0, 0},
    {"cos", tendo__vcos_f32, tendo__cos_f32, ref_cos, TINY, 0x4b800000, 0, 2.0, 0},
    {"rsqrt", tendo__vrsqrt_f32, tendo__rsqrt_f32, ref_rsqrt, 0, 0x7f800000, 0, 1.0, 0},
    /* the rule only: at its root (x = -0.7518) the sum cancels, so ulps there mean nothing */
    {"gelu_deriv", tendo__vgelu_deriv_f32, tendo__gelu_deriv_f32, ref_gelu_deriv, TINY, 0x41800000, 1, 0.0, 2},
    /* the same rule, for the same reason (its root: x = -1.2785) */
    {"silu_deriv", tendo__vsilu_deriv_f32, tendo__silu_deriv_f32, ref_silu_deriv, TINY, 0x42f00000, 1, 0.0, 2},
};
enum { NFNS = sizeof fns / sizeof fns[0] };

/* ---- helpers ------------------------------------------------------------ */

/* The float with bits u. */
static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* True when a and b are the same value: both NaN, or equal with the same
 * sign (so -0 differs from +0). */
static int same(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* The error of y in ulps of the exact value r (NaN/inf-aware). */
static double ulp_err(float y, double r)
{
    if (isnan(r) || isnan(y))
        return isnan(r) && isnan(y) ? 0.0 : INFINITY;
    double yd = isinf(y) ? copysign(0x1p128, y) : y;
    double rd = fabs(r) >= 0x1p128 ? copysign(0x1p128, r) : r;
    if (yd == rd)
        return 0.0;
    /* ulp(r) = 2^(e - 23), e = r's exponent clamped to [-126, 127]. */
    uint64_t b;
    memcpy(&b, &rd, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    e = e < -126 ? -126 : e > 127 ? 127 : e;
    uint64_t sb = (uint64_t)(1023 + 23 - e) << 52;
    double inv_ulp;
    memcpy(&inv_ulp, &sb, sizeof inv_ulp);
    return fabs(yd - rd) * inv_ulp;
}

/* True when y meets the gelu rule: relative 1e-6 or absolute 1e-7. */
static int gelu_ok(float y, double r)
{
    if (isnan(r) || isnan(y) || isinf(r) || isinf(y))
        return same(y, (float)r);
    double d = fabs((double)y - r);
    return d <= 1e-7 || d <= 1e-6 * fabs(r);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* 64 random bits (xorshift64*). */
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

/* Running figures of one function over many inputs. */
struct stats {
    double worst;     /* max ulp error */
    float worst_x;    /* where */
    double worst_rel; /* max relative error, |r| >= FLT_MIN */
    uint64_t n, over, gelu_bad, cr;
};

/* Folds y = f(x) against the reference into st. */
static void account(const struct fn *f, double bound, float x, float y, struct stats *st)
{
    double r = f->ref(x);
    double e = ulp_err(y, r);
    st->n++;
    if (same(y, (float)r))
        st->cr++;
    if (e > st->worst) {
        st->worst = e;
        st->worst_x = x;
    }
    if (isfinite(r) && fabs(r) >= FLT_MIN && isfinite(y)) {
        double rel = fabs(y - r) / fabs(r);
        if (rel > st->worst_rel)
            st->worst_rel = rel;
    }
    if (f->gelu_rule) {
        if (!gelu_ok(y, r))
            st->gelu_bad++;
    } else if (e > bound) {
        st->over++;
    }
    if (f->gelu_rule == 1 && e > bound)
        st->over++;
}

enum { CHUNK = 4096 };

/* Runs f over the bit patterns [lo, hi) with the given stride (and their
 * negatives when neg), folding the errors into st. */
static void sweep(const struct fn *f, double bound, uint32_t lo, uint32_t hi, uint32_t stride,
                  int neg, struct stats *st)
{
    static float xs[CHUNK], ys[CHUNK];
    uint64_t u = lo;
    while (u < hi) {
        int m = 0;
        for (; m + 2 <= CHUNK && u < hi; u += stride) {
            xs[m++] = from_bits((uint32_t)u);
            if (neg)
                xs[m++] = from_bits((uint32_t)u | 0x80000000u);
        }
        f->v(xs, ys, m);
        for (int i = 0; i < m; i++)
            account(f, bound, xs[i], ys[i], st);
    }
}

/* Runs f over `count` random bit patterns in [lo, hi) (random signs when
 * neg). */
static void sweep_random(const struct fn *f, double bound, uint32_t lo, uint32_t hi, int neg,
                         int count, struct stats *st)
{
    static float xs[CHUNK], ys[CHUNK];
    for (int done = 0; done < count;) {
        int m = count - done < CHUNK ? count - done : CHUNK;
        for (int i = 0; i < m; i++) {
            uint64_t r = rng();
            uint32_t u = lo + (uint32_t)((r >> 32) % (hi - lo));
            if (neg && (r & 1))
                u |= 0x80000000u;
            xs[i] = from_bits(u);
        }
        f->v(xs, ys, m);
        for (int i = 0; i < m; i++)
            account(f, bound, xs[i], ys[i], st);
        done += m;
    }
}

/* Reports st as one test (and a diag line). */
static void report(const struct fn *f, const char *what, const char *path, double bound,
                   const struct stats *st)
{
    diag("%-7s %-6s %-28s n=%-9llu max %.3f ulp at %a (%.9g), max rel %.3g, "
         "correctly rounded %.3f%%",
         f->name, path, what, (unsigned long long)st->n, st->worst, st->worst_x, st->worst_x,
         st->worst_rel, st->n ? 100.0 * (double)st->cr / (double)st->n : 100.0);
    if (f->gelu_rule == 2)
        ok(st->gelu_bad == 0, "%s %s %s: within rel 1e-6 / abs 1e-7 (%llu out)", f->name, path, what,
           (unsigned long long)st->gelu_bad);
    else if (f->gelu_rule)
        ok(st->over == 0 && st->gelu_bad == 0,
           "%s %s %s: within rel 1e-6 / abs 1e-7 (%llu out) and %.1f ulp", f->name, path, what,
           (unsigned long long)st->gelu_bad, bound);
    else
        ok(st->over == 0, "%s %s %s: max %.3f ulp <= %.1f (%llu over)", f->name, path, what,
           st->worst, bound, (unsigned long long)st->over);
}

/* ---- (a) sweeps --------------------------------------------------------- */

/* Dense and random sweeps of the meaningful range, plus exhaustive runs
 * over the ranges where a mistake would hide: exp's subnormal results,
 * log of subnormals, the small-|x| branches. */
static void test_sweeps(const struct fn *f, const char *path, double bound, int dense)
{
    struct stats st = {0};
    sweep(f, bound, f->lo, f->hi, dense ? 37 : 997, f->both_signs, &st);
    sweep(f, bound, 0, f->lo, dense ? 997 : 9973, f->both_signs, &st);
    report(f, dense ? "every 37th pattern" : "every 997th pattern", path, bound, &st);

    struct stats rs = {0};
    sweep_random(f, bound, f->lo, f->hi, f->both_signs, dense ? 1 << 20 : 1 << 16, &rs);
    report(f, "random patterns", path, bound, &rs);

    if (!dense)
        return;
    struct stats ex = {0};
    const char *what = NULL;
    if (!strcmp(f->name, "exp")) {
        /* x in [-104, -87]: subnormal results, all of them. */
        sweep(f, bound, 0xc2ae0000u, 0xc2d00000u, 1, 0, &ex);
        what = "all x in [-104,-87]";
    } else if (!strcmp(f->name, "log")) {
        sweep(f, bound, 0, 0x00800000u, 1, 0, &ex);
        sweep(f, bound, 0x3f700000u, 0x3f880000u, 1, 0, &ex); /* x near 1 */
        what = "all subnormal x, x in [0.94,1.06]";
    } else if (!strcmp(f->name, "tanh")) {
        sweep(f, bound, 0x3f000000u, 0x3f200000u, 1, 1, &ex); /* 0.5 <= |x| < 0.625 */
        what = "all 0.5 <= |x| < 0.625";
    } else if (!strcmp(f->name, "gelu")) {
        sweep(f, bound, 0x3f000000u, 0x3f400000u, 1, 1, &ex); /* 0.5 <= |x| < 0.75 */
        what = "all 0.5 <= |x| < 0.75";
    } else if (!strcmp(f->name, "sigmoid") || !strcmp(f->name, "silu")) {
        sweep(f, bound, 0x42a00000u, 0x42f00000u, 3, 1, &ex); /* 80 <= |x| < 120 */
        what = "every 3rd 80 <= |x| < 120";
    } else if (!strcmp(f->name, "sin") || !strcmp(f->name, "cos")) {
        sweep(f, bound, 0x46000000u, 0x46200000u, 3, 0, &ex); /* [8192, 10240) */
        what = "every 3rd x in [8192,10240)";
    } else {
        return;
    }
    report(f, what, path, bound, &ex);
}

/* ---- (b) special values ------------------------------------------------- */

struct special {
    float x, want;
};

/* Checks f on x = each special value, in lanes of an array long enough
 * for the vector code, each value at every lane position. */
static void check_specials(const struct fn *f, const char *path, const struct special *sp, int n)
{
    enum { W = 19 };
    int bad = 0;
    for (int k = 0; k < n; k++) {
        for (int pos = 0; pos < W; pos++) {
            float xs[W], ys[W];
            for (int i = 0; i < W; i++)
                xs[i] = 0.5f;
            xs[pos] = sp[k].x;
            f->v(xs, ys, W);
            if (!same(ys[pos], sp[k].want)) {
                if (bad++ < 5)
                    diag("%s(%a) = %a at lane %d, want %a", f->name, sp[k].x, ys[pos], pos,
                         sp[k].want);
            }
        }
    }
    ok(bad == 0, "%s %s: %d special values exact", f->name, path, n);
}

/* Checks f within bound ulps on x = each value given. */
static void check_near(const struct fn *f, const char *path, const float *xs, int n, double bound)
{
    float ys[64];
    struct stats st = {0};
    f->v(xs, ys, n);
    for (int i = 0; i < n; i++)
        account(f, bound, xs[i], ys[i], &st);
    report(f, "edge values", path, bound, &st);
}

/* Special and edge values for each function. */
static void test_specials(const char *path)
{
    const float inf = INFINITY, nan = NAN;
    const float tiny = 0x1p-149f, maxf = FLT_MAX;
    {
        const struct special sp[] = {
            {-inf, 0}, {inf, inf}, {nan, nan}, {-nan, nan}, {0, 1}, {-0.0f, 1},
            {0x1.62e430p+6f, inf}, {89.0f, inf}, {1e30f, inf}, {maxf, inf},
            {-0x1.9fe36ap+6f, 0},    /* -103.972084: exp < 2^-150, rounds to 0 */
            {-0x1.9fe368p+6f, tiny}, /* -103.972076: exp > 2^-150, to 2^-149 */
            {-104.0f, 0}, {-1e30f, 0}, {-maxf, 0}};
        check_specials(&fns[0], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {0x1.62e42ep+6f, 88.0f, -87.33654f, -87.0f, -88.0f, -100.0f, -103.0f,
                        -103.9f, 0x1p-30f, -0x1p-30f, tiny, -tiny, 1.0f, -1.0f, 10.0f, -10.0f};
        check_near(&fns[0], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[0].max_ulp);
        float big[8];
        fns[0].v(edge, big, 1);
        ok(isfinite(big[0]), "%s exp(0x1.62e42ep+6) = %a is finite", path, big[0]);
    }
    {
        const struct special sp[] = {
            {0, -inf}, {-0.0f, -inf}, {-1, nan}, {-tiny, nan}, {-inf, nan}, {inf, inf},
            {nan, nan}, {1, 0}, {-maxf, nan}};
        check_specials(&fns[1], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {tiny, 0x1p-140f, 0x1.fffffcp-127f, FLT_MIN, maxf, 2.0f, 0.5f,
                        0x1.000002p0f, 0x1.fffffep-1f, 0x1.6a09e6p-1f, 0x1.6a09e8p-1f};
        check_near(&fns[1], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[1].max_ulp);
    }
    {
        const struct special sp[] = {
            {0, 0}, {-0.0f, -0.0f}, {inf, 1}, {-inf, -1}, {nan, nan}, {10, 1}, {-10, -1},
            {1e30f, 1}, {-maxf, -1}, {tiny, tiny}, {-tiny, -tiny}, {0x1p-30f, 0x1p-30f}};
        check_specials(&fns[2], path, sp, (int)(sizeof sp / sizeof sp[0]));
    }
    {
        const struct special sp[] = {
            {-inf, 0}, {inf, 1}, {nan, nan}, {0, 0.5f}, {-0.0f, 0.5f}, {30, 1}, {-200, 0},
            {maxf, 1}, {-maxf, 0}};
        check_specials(&fns[3], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {-87.0f, -88.0f, -100.0f, -103.0f, -103.9f, -104.0f, 16.0f, 17.0f, -17.0f};
        check_near(&fns[3], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[3].max_ulp);
    }
    {
        const struct special sp[] = {
            {-inf, -0.0f}, {inf, inf}, {nan, nan}, {0, 0}, {-0.0f, -0.0f}, {-200, -0.0f},
            {maxf, maxf}, {-maxf, -0.0f}, {100, 100}};
        check_specials(&fns[4], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {-87.0f, -92.0f, -100.0f, -104.0f, -108.0f, -110.0f, -tiny, tiny};
        check_near(&fns[4], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[4].max_ulp);
    }
    {
        const struct special sp[] = {
            {-inf, -0.0f}, {inf, inf}, {nan, nan}, {0, 0}, {-0.0f, -0.0f}, {-20, -0.0f},
            {20, 20}, {maxf, maxf}, {-maxf, -0.0f}};
        check_specials(&fns[5], path, sp, (int)(sizeof sp / sizeof sp[0]));
    }
    {
        const struct special sp[] = {
            {-inf, -0.0f}, {inf, 1}, {nan, nan}, {0, 0.5f}, {-0.0f, 0.5f}, {20, 1}, {maxf, 1},
            {-20, -0.0f}, {-maxf, -0.0f}};
        check_specials(&fns[9], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {-14.0f, -0.75179f, -0x1.80eb3ep-1f, 15.0f, -15.0f, 16.0f};
        check_near(&fns[9], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[9].max_ulp);
    }
    {
        const struct special sp[] = {
            {-inf, -0.0f}, {inf, 1}, {nan, nan}, {0, 0.5f}, {-0.0f, 0.5f}, {100, 1}, {maxf, 1}};
        check_specials(&fns[10], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {-200.0f, -maxf, -90.0f, -1.2785f, -20.0f, 17.0f, 40.0f, 41.0f};
        check_near(&fns[10], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[10].max_ulp);
    }
    for (int k = 6; k <= 7; k++) {
        int is_cos = k == 7;
        const struct special sp[] = {
            {inf, nan}, {-inf, nan}, {nan, nan}, {0, is_cos ? 1.0f : 0.0f},
            {-0.0f, is_cos ? 1.0f : -0.0f}};
        check_specials(&fns[k], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {tiny, -tiny, 0x1p-20f, 0x1.921fb6p0f, 0x1.921fb6p1f, 0x1.921fb6p2f,
                        1e4f, -1e4f, 0x1p24f, -0x1p24f, 0x1.000002p24f, 1e30f, -1e30f, maxf,
                        -maxf, 12345.678f, 0x1.5cp+22f, 0x1.fffffep23f};
        check_near(&fns[k], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[k].max_ulp);
    }
    {
        const struct special sp[] = {
            {0, inf}, {-0.0f, -inf}, {-1, nan}, {-tiny, nan}, {-inf, nan}, {inf, 0},
            {nan, nan}, {1, 1}, {4, 0.5f}, {0x1p-148f, 0x1p74f}};
        check_specials(&fns[8], path, sp, (int)(sizeof sp / sizeof sp[0]));
        float edge[] = {tiny, 0x1p-140f, 0x1.fffffcp-127f, FLT_MIN, 0x1p-101f, 0x1p-100f,
                        0x1.fffffep-101f, maxf, 3.0f, 0x1.000002p0f};
        check_near(&fns[8], path, edge, (int)(sizeof edge / sizeof edge[0]), fns[8].max_ulp);
    }
}

/* ---- (c) lengths, alignment, in place ----------------------------------- */

/* A random input for f: mostly its sweep range, sometimes a special. */
static float random_input(const struct fn *f)
{
    static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f,
                                     0x1p-149f, FLT_MAX};
    uint64_t r = rng();
    if ((r & 15) == 0)
        return specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
    uint32_t u = (uint32_t)((r >> 32) % f->hi);
    if (f->both_signs && (r & 16))
        u |= 0x80000000u;
    return from_bits(u);
}

/* For n = 0..40 at input/output offsets 0..7 floats and in place: the
 * results agree bit for bit with those of one long call (so tails and
 * alignment change nothing), nothing outside y[0..n) is written, and on
 * the scalar path they equal the scalar function. */
static void test_lengths(const struct fn *f, const char *path, int scalar)
{
    enum { MAXN = 40, PAD = 8, M = MAXN + 2 * PAD + 8 };
    float src[MAXN], want[MAXN];
    float xbuf[M], ybuf[M];
    const float guard = -12345.0f;
    for (int i = 0; i < MAXN; i++)
        src[i] = random_input(f);
    f->v(src, want, MAXN);
    int bad = 0, bad_scalar = 0;
    for (int i = 0; i < MAXN; i++)
        if (scalar && !same(want[i], f->s(src[i])))
            bad_scalar++;
    f->v(NULL, NULL, 0); /* n = 0 touches nothing */
    for (int n = 0; n <= MAXN; n++) {
        for (int xo = 0; xo < 8; xo++) {
            for (int yo = 0; yo < 8; yo++) {
                for (int i = 0; i < M; i++)
                    ybuf[i] = guard;
                memcpy(xbuf + xo, src + MAXN - n, (size_t)n * sizeof(float));
                f->v(xbuf + xo, ybuf + PAD + yo, n);
                for (int i = 0; i < M; i++) {
                    int in = i >= PAD + yo && i < PAD + yo + n;
                    float w = in ? want[MAXN - n + i - PAD - yo] : guard;
                    if (!same(ybuf[i], w))
                        bad++;
                }
            }
            /* In place. */
            for (int i = 0; i < M; i++)
                xbuf[i] = guard;
            memcpy(xbuf + PAD + xo, src, (size_t)n * sizeof(float));
            f->v(xbuf + PAD + xo, xbuf + PAD + xo, n);
            for (int i = 0; i < M; i++) {
                int in = i >= PAD + xo && i < PAD + xo + n;
                if (!same(xbuf[i], in ? want[i - PAD - xo] : guard))
                    bad++;
            }
        }
    }
    ok(bad == 0, "%s %s: lengths 0..%d, offsets, in place agree with one long call (%d bad)",
       f->name, path, MAXN, bad);
    if (scalar)
        ok(bad_scalar == 0, "%s %s: loop equals the scalar function", f->name, path);
}

/* Past the streaming threshold, at an odd offset of y: the same bits as
 * the same inputs in short calls. */
static void test_streaming(const struct fn *f, const char *path)
{
    const int64_t n = ((int64_t)1 << 22) + 13;
    float *x = malloc((size_t)n * sizeof(float));
    float *y = malloc((size_t)(n + 1) * sizeof(float));
    float *z = malloc((size_t)n * sizeof(float));
    if (!x || !y || !z)
        bail("out of memory");
    for (int64_t i = 0; i < n; i++)
        x[i] = random_input(f);
    f->v(x, y + 1, n);
    for (int64_t i = 0; i < n; i += 1000)
        f->v(x + i, z + i, n - i < 1000 ? n - i : 1000);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!same(y[i + 1], z[i]))
            bad++;
    ok(bad == 0, "%s %s: n = 2^22+13 (streaming stores) agrees with short calls", f->name, path);
    free(x);
    free(y);
    free(z);
}

/* ---- (d) f64 exp -------------------------------------------------------- */

/* tendo__vexp_f64 against expl (long double: 11 more bits than double, so
 * its own error is ~0.0005 double ulp) over random values, bit patterns
 * and the edges: overflow near 709.78, the normal/subnormal boundary near
 * -708.4, the last nonzero results near -745.13, |x| < 2^-54, and the
 * specials.  Errors are in ulps of the exact result (subnormal ulp 2^-1074,
 * an infinite result counted as 2^1024); the bound is below 1 ulp on every
 * level, and on every level the loop equals the scalar tendo__exp_f64 bit
 * for bit (so the levels agree with each other). */

#define EXP64_BOUND 1.0

static double from_bits64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t bits64(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Both NaN, or the same bits. */
static int same64(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return bits64(a) == bits64(b);
}

/* The error of y in ulps of the exact value r. */
static double ulp_err64(double y, long double r)
{
    if (isnan(r) || isnan(y))
        return isnan(r) && isnan(y) ? 0.0 : INFINITY;
    long double yd = isinf(y) ? copysignl(0x1p1024L, y) : (long double)y;
    long double rd = fabsl(r) >= 0x1p1024L ? copysignl(0x1p1024L, r) : r;
    if (yd == rd)
        return 0.0;
    int e;
    frexpl(rd, &e); /* rd = m 2^e, 1/2 <= |m| < 1 */
    e -= 1;
    e = e < -1022 ? -1022 : e > 1023 ? 1023 : e;
    return (double)(fabsl(yd - rd) * ldexpl(1.0L, 52 - e));
}

struct stats64 {
    double worst;
    double worst_x;
    uint64_t n, over, cr, not_scalar;
};

/* Runs tendo__vexp_f64 over xs[0..n) and folds the results into st. */
static void run64(const double *xs, int n, struct stats64 *st)
{
    static double ys[CHUNK];
    tendo__vexp_f64(xs, ys, n);
    for (int i = 0; i < n; i++) {
        long double r = expl((long double)xs[i]);
        double e = ulp_err64(ys[i], r);
        st->n++;
        if (same64(ys[i], (double)r))
            st->cr++;
        if (!same64(ys[i], tendo__exp_f64(xs[i])))
            st->not_scalar++;
        if (e > st->worst || isnan(e)) {
            st->worst = e;
            st->worst_x = xs[i];
        }
        if (!(e < EXP64_BOUND))
            st->over++;
    }
}

static void report64(const char *what, const char *path, const struct stats64 *st)
{
    diag("exp_f64 %-6s %-30s n=%-8llu max %.3f ulp at %a (%.17g), correctly rounded %.4f%%",
         path, what, (unsigned long long)st->n, st->worst, st->worst_x, st->worst_x,
         st->n ? 100.0 * (double)st->cr / (double)st->n : 100.0);
    ok(st->over == 0, "exp_f64 %s %s: max %.3f ulp < %.1f (%llu over)", path, what, st->worst,
       EXP64_BOUND, (unsigned long long)st->over);
    ok(st->not_scalar == 0, "exp_f64 %s %s: loop equals tendo__exp_f64 bit for bit (%llu differ)",
       path, what, (unsigned long long)st->not_scalar);
}

/* A uniform double in [lo, hi). */
static double uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng() >> 11) * 0x1p-53;
}

enum { U_UNIFORM, U_BITS, U_ULPS };

/* count inputs: uniform in [a, b), or random bit patterns of |x| in
 * [a, b) with random signs, or a +- up to b ulps (stepping by one). */
static void sweep64(const char *what, const char *path, int kind, double a, double b, int count)
{
    static double xs[CHUNK];
    struct stats64 st = {0};
    int64_t step = -(int64_t)b;
    for (int done = 0; done < count;) {
        int m = count - done < CHUNK ? count - done : CHUNK;
        for (int i = 0; i < m; i++) {
            if (kind == U_UNIFORM) {
                xs[i] = uniform(a, b);
            } else if (kind == U_BITS) {
                uint64_t lo = bits64(a), hi = bits64(b);
                uint64_t r = rng();
                xs[i] = from_bits64(lo + r % (hi - lo));
                if (rng() & 1)
                    xs[i] = -xs[i];
            } else {
                xs[i] = from_bits64(bits64(a) + (uint64_t)step);
                step = step >= (int64_t)b ? -(int64_t)b : step + 1;
            }
        }
        run64(xs, m, &st);
        done += m;
    }
    report64(what, path, &st);
}

static void test_exp64(const char *path, int dense)
{
    int big = dense ? 1 << 20 : 1 << 17;
    sweep64("uniform [-746,710]", path, U_UNIFORM, -746.0, 710.0, big);
    sweep64("uniform [-1,1]", path, U_UNIFORM, -1.0, 1.0, big / 4);
    sweep64("bit patterns 2^-60 <= |x| < 746", path, U_BITS, 0x1p-60, 746.0, big);
    sweep64("bit patterns |x| < 2^-54", path, U_BITS, 0x1p-1074, 0x1p-54, big / 16);
    sweep64("subnormal results [-745.2,-708.3]", path, U_UNIFORM, -745.2, -708.3, big);
    sweep64("x in [-709,-707]", path, U_UNIFORM, -709.0, -707.0, big / 8);
    sweep64("x in [707,709.8]", path, U_UNIFORM, 707.0, 709.8, big / 8);
    /* 2^14 ulps either side of the overflow threshold, the last normal
     * result, the last nonzero result, the fast path's limits. */
    sweep64("+-2^14 ulps of 0x1.62e42fefa39efp+9", path, U_ULPS, 0x1.62e42fefa39efp+9,
            16384, 32769);
    sweep64("+-2^14 ulps of -708.3964185322641", path, U_ULPS, -708.3964185322641, 16384,
            32769);
    sweep64("+-2^14 ulps of -745.1332191019411", path, U_ULPS, -745.1332191019411, 16384,
            32769);
    sweep64("+-2^14 ulps of -744.4400719213812", path, U_ULPS, -744.4400719213812, 16384,
            32769);
    sweep64("+-256 ulps of +-708", path, U_ULPS, 708.0, 256, 513);
    sweep64("+-256 ulps of -708", path, U_ULPS, -708.0, 256, 513);
    sweep64("+-256 ulps of ln2/2", path, U_ULPS, 0.34657359027997264, 256, 513);

    /* Specials, each at every lane position of an array of 11. */
    const double inf = INFINITY, nan = NAN;
    const struct {
        double x, want;
    } sp[] = {
        {0.0, 1.0}, {-0.0, 1.0}, {inf, inf}, {-inf, 0.0}, {nan, nan}, {-nan, nan},
        {0x1p-1074, 1.0}, {-0x1p-1074, 1.0}, {0x1p-55, 1.0}, {-0x1p-55, 1.0},
        {0x1p-54, 1.0}, {-0x1p-54, 1.0}, {0x1.62e42fefa39f0p+9, inf}, {710.0, inf},
        {1e300, inf}, {DBL_MAX, inf}, {-746.0, 0.0}, {-1e300, 0.0}, {-DBL_MAX, 0.0},
        {-0x1.74910d52d3051p+9, 0x1p-1074}, /* -745.13321910194111: just above 2^-1075 */
        {-0x1.74910d52d3052p+9, 0.0},       /* -745.13321910194122: just below */
        {1.0, 0x1.5bf0a8b145769p+1}, {-1.0, 0x1.78b56362cef38p-2},
    };
    enum { W = 11 };
    int bad = 0, nsp = (int)(sizeof sp / sizeof sp[0]);
    for (int k = 0; k < nsp; k++) {
        for (int pos = 0; pos < W; pos++) {
            double xs[W], ys[W];
            for (int i = 0; i < W; i++)
                xs[i] = 0.5;
            xs[pos] = sp[k].x;
            tendo__vexp_f64(xs, ys, W);
            if (!same64(ys[pos], sp[k].want) || !same64(ys[pos], tendo__exp_f64(sp[k].x))) {
                if (bad++ < 5)
                    diag("exp_f64(%a) = %a at lane %d, want %a", sp[k].x, ys[pos], pos,
                         sp[k].want);
            }
        }
    }
    ok(bad == 0, "exp_f64 %s: %d special values exact", path, nsp);
    double last = tendo__exp_f64(0x1.62e42fefa39efp+9);
    ok(isfinite(last) && last > 0x1.fffffffffff00p+1023,
       "exp_f64 %s: exp(0x1.62e42fefa39efp+9) = %a is finite", path, last);

    /* Lengths 0..20 at every offset and in place agree with one long call;
     * nothing outside y[0..n) is written. */
    enum { MAXN = 20, PAD = 4, M = MAXN + 2 * PAD + 4 };
    double src[MAXN], want[MAXN], xbuf[M], ybuf[M];
    const double guard = -12345.0;
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 709.9, -745.0,
                                      -710.0, 0x1p-1074};
    for (int i = 0; i < MAXN; i++) {
        uint64_t r = rng();
        src[i] = (r & 7) == 0 ? specials[(r >> 8) % 9] : uniform(-750.0, 712.0);
    }
    tendo__vexp_f64(src, want, MAXN);
    tendo__vexp_f64(NULL, NULL, 0);
    bad = 0;
    for (int n = 0; n <= MAXN; n++) {
        for (int xo = 0; xo < 4; xo++) {
            for (int yo = 0; yo < 4; yo++) {
                for (int i = 0; i < M; i++)
                    ybuf[i] = guard;
                memcpy(xbuf + xo, src + MAXN - n, (size_t)n * sizeof(double));
                tendo__vexp_f64(xbuf + xo, ybuf + PAD + yo, n);
                for (int i = 0; i < M; i++) {
                    int in = i >= PAD + yo && i < PAD + yo + n;
                    if (!same64(ybuf[i], in ? want[MAXN - n + i - PAD - yo] : guard))
                        bad++;
                }
            }
            for (int i = 0; i < M; i++)
                xbuf[i] = guard;
            memcpy(xbuf + PAD + xo, src, (size_t)n * sizeof(double));
            tendo__vexp_f64(xbuf + PAD + xo, xbuf + PAD + xo, n);
            for (int i = 0; i < M; i++) {
                int in = i >= PAD + xo && i < PAD + xo + n;
                if (!same64(xbuf[i], in ? want[i - PAD - xo] : guard))
                    bad++;
            }
        }
    }
    ok(bad == 0, "exp_f64 %s: lengths 0..%d, offsets, in place agree with one long call (%d bad)",
       path, MAXN, bad);

    if (!dense)
        return;
    /* Past the streaming threshold, at an odd offset of y. */
    const int64_t n = ((int64_t)1 << 21) + 13;
    double *x = malloc((size_t)n * sizeof(double));
    double *y = malloc((size_t)(n + 1) * sizeof(double));
    double *z = malloc((size_t)n * sizeof(double));
    if (!x || !y || !z)
        bail("out of memory");
    for (int64_t i = 0; i < n; i++)
        x[i] = uniform(-750.0, 712.0);
    tendo__vexp_f64(x, y + 1, n);
    for (int64_t i = 0; i < n; i += 1000)
        tendo__vexp_f64(x + i, z + i, n - i < 1000 ? n - i : 1000);
    int64_t sbad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!same64(y[i + 1], z[i]))
            sbad++;
    ok(sbad == 0, "exp_f64 %s: n = 2^21+13 (streaming stores) agrees with short calls", path);
    free(x);
    free(y);
    free(z);
}

/* tendo__vexp_shift_sum_f32: every x[i] becomes exactly what
 * tendo__vexp_f32 gives for x[i] - shift, and the sum is those values
 * added in the documented order (lane i % 16, then folded), for lengths
 * 0..70 with -inf entries (masked scores) among them. */
static void test_exp_shift_sum(const char *path)
{
    enum { MAXN = 70 };
    float x[MAXN], y[MAXN], want[MAXN];
    int bad = 0;

    for (int n = 0; n <= MAXN; n++) {
        float shift = (float)uniform(-3.0, 3.0), lane[16] = {0};
        for (int i = 0; i < n; i++) {
            x[i] = i % 7 == 3 ? -INFINITY : (float)uniform(-30.0, 3.0);
            want[i] = x[i] - shift;
        }
        tendo__vexp_f32(want, want, n);
        memcpy(y, x, sizeof y);
        float sum = tendo__vexp_shift_sum_f32(y, shift, n);
        for (int i = 0; i < n; i++) {
            bad += !same(y[i], want[i]);
            lane[i % 16] += want[i];
        }
        bad += !same(sum, tendo__vmath_fold16(lane));
    }
    ok(bad == 0, "exp_shift_sum %s: lengths 0..%d equal exp(x - shift) and their sum in lane order (%d bad)", path,
       MAXN, bad);
}

/* ---- the AdamW update ------------------------------------------------------------------- */

/* tendo__vadamw_f32 on this path against the same operations written out
 * here in float (no FMA), bit for bit, over every length up to 40 (every
 * tail) and both lerp branches; the constants of two torch settings. */
static void test_adamw(const char *path)
{
    const float cs[2][7] = {{1.0f - 1e-3f * 0.01f, 0.1f, 0.999f, 1e-3f, -1e-3f / 0.271f, 0.0447f, 1e-8f},
                            {1.0f, 0.7f, 0.95f, 0.05f, -3e-3f / 0.657f, 0.3122f, 1e-6f}};
    float p[40], g[40], m[40], v[40], wp[40], wm[40], wv[40];
    int bad = 0;

    for (int k = 0; k < 2; k++)
        for (int n = 0; n <= 40; n++) {
            const float *c = cs[k];
            for (int i = 0; i < n; i++) {
                p[i] = wp[i] = (float)(sin(i + 0.5 * n) * 2);
                g[i] = (float)(cos(3.0 * i + n) * 1e-2);
                m[i] = wm[i] = (float)(sin(5.0 * i) * 1e-2);
                v[i] = wv[i] = (float)(1e-4 * (1.5 + cos(7.0 * i)));
            }
            tendo__vadamw_f32(p, g, m, v, n, c);
            for (int i = 0; i < n; i++) {
                float pi = wp[i] * c[0];
                float mi = c[1] < 0.5f ? wm[i] + c[1] * (g[i] - wm[i]) : g[i] - (g[i] - wm[i]) * (1.0f - c[1]);
                float vi = wv[i] * c[2] + c[3] * g[i] * g[i];
                float pn = pi + c[4] * mi / (sqrtf(vi) / c[5] + c[6]);
                bad += !same(p[i], pn) || !same(m[i], mi) || !same(v[i], vi);
            }
        }
    ok(bad == 0, "adamw %s: lengths 0..40, both lerp branches, the scalar operations' bits (%d bad)", path, bad);
}

/* tendo__vadd_pairs_f32 on this path against float's own add (and
 * multiply by 0.5) here, bit for bit: every length up to 40, out in place
 * of a and of b, with infinities, NaN, signed zeros and subnormals among
 * the values. */
static void test_add_pairs(const char *path)
{
    const float odd[] = {INFINITY, -INFINITY, NAN, -0.0f, 0.0f, 0x1p-149f, -0x1p-140f, 0x1.fffffep127f};
    float a[40], b[40], out[40], ref[40];
    int bad = 0;

    for (int where = 0; where < 3; where++)
        for (int half = 0; half < 2; half++)
            for (int n = 0; n <= 40; n++) {
                float scale = half ? 0.5f : 1.0f;
                for (int i = 0; i < n; i++) {
                    a[i] = i % 7 == 3 ? odd[(i + n) % 8] : (float)(sin(i + 0.25 * n) * 3);
                    b[i] = i % 5 == 1 ? odd[(i * 3 + n) % 8] : (float)(cos(2.0 * i - n) * 1e-3);
                    ref[i] = half ? (a[i] + b[i]) * 0.5f : a[i] + b[i];
                }
                float *o = where == 0 ? out : where == 1 ? a : b;
                tendo__vadd_pairs_f32(a, b, o, n, scale);
                for (int i = 0; i < n; i++)
                    bad += !same(o[i], ref[i]);
            }
    ok(bad == 0, "add_pairs %s: lengths 0..40, scale 1 and 0.5, in place of a and b, the scalar bits (%d bad)", path,
       bad);
}

/* ---- main --------------------------------------------------------------- */

/* All checks for one path: the CPU's choice ("avx512" or "avx2", as
 * TENDO_CPU caps it) or "scalar". */
static void run_path(int scalar)
{
    tendo__vmath_force_scalar(scalar);
    const char *path = tendo__vmath_path();
    if (!scalar && !strcmp(path, "scalar"))
        diag("no AVX2+FMA here: the default path is the scalar one");
    for (int k = 0; k < NFNS; k++) {
        const struct fn *f = &fns[k];
        double bound = scalar ? 1.0 : f->max_ulp;
        if (scalar) {
            struct fn g = *f;
            if (g.gelu_rule)
                g.max_ulp = 1.0;
            test_sweeps(&g, path, bound, 0);
        } else {
            test_sweeps(f, path, bound, 1);
        }
        test_lengths(f, path, scalar);
        if (!scalar)
            test_streaming(f, path);
    }
    test_specials(path);
    test_exp64(path, !scalar);
    test_exp_shift_sum(path);
    test_adamw(path);
    test_add_pairs(path);
    tendo__vmath_force_scalar(0);
}

int main(void)
{
    plan_lazy();
    run_path(0);
    run_path(1);
    return done_testing();
}
