/* src/cpu/vmath.h - elementwise f32 math over contiguous arrays.
 *
 * Each tendo__v*_f32(x, y, n) sets y[i] = f(x[i]) for 0 <= i < n.  n may be
 * 0; no alignment is assumed; y may equal x (in place), otherwise the two
 * must not overlap.  On x86 with AVX2 and FMA the work is done 8 lanes at a
 * time (the last n % 8 elements go through the same vector code via a
 * small buffer, so a result never depends on where an element sits in the
 * array); elsewhere the scalar functions below are used.  IEEE special
 * values follow libm, NaN propagates, subnormals are neither flushed nor
 * assumed away, and only the default rounding mode is relied on.
 *
 * The scalar functions tendo__*_f32(x) compute in double and round once;
 * they are the portable fallback and the definition the vector code
 * approximates (see src/cpu/vmath.c for the error bounds).
 */
#ifndef TENDO_SRC_VMATH_H
#define TENDO_SRC_VMATH_H

#include <stdint.h>

void tendo__vexp_f32(const float *x, float *y, int64_t n);
/* The same for doubles (y may equal x): max error below 1 ulp (0.5 ulp
 * plus a little; subnormal results too), exp(+-0) = 1, inf from
 * 0x1.62e42fefa39f0p+9 on, the same bits on every dispatch level. */
void tendo__vexp_f64(const double *x, double *y, int64_t n);
/* x[i] = exp(x[i] - shift) in place for 0 <= i < n, with tendo__vexp_f32's
 * accuracy; returns the sum of the new x[i] in one order on every path:
 * element i added into lane i % 16 in increasing i, then the 16 lanes
 * folded by tendo__vmath_fold16.  The softmax step of attention, in one
 * pass. */
float tendo__vexp_shift_sum_f32(float *x, float shift, int64_t n);
/* (l[0] + l[8]) ... (l[7] + l[15]), then those eight added pairwise. */
static inline float tendo__vmath_fold16(const float *l)
{
    float a[8];
    for (int i = 0; i < 8; i++)
        a[i] = l[i] + l[i + 8];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}
void tendo__vlog_f32(const float *x, float *y, int64_t n);
void tendo__vtanh_f32(const float *x, float *y, int64_t n);
/* 1/(1+exp(-x)) */
void tendo__vsigmoid_f32(const float *x, float *y, int64_t n);
/* x*sigmoid(x); silu(-inf) is -0, the limit. */
void tendo__vsilu_f32(const float *x, float *y, int64_t n);
/* silu's derivative, s (1 + x (1 - s)) with s = sigmoid(x): -0 at -inf, 1 at +inf. */
void tendo__vsilu_deriv_f32(const float *x, float *y, int64_t n);
/* 0.5*x*(1+erf(x/sqrt(2))), the exact (erf) form; gelu(-inf) is -0. */
void tendo__vgelu_f32(const float *x, float *y, int64_t n);
/* gelu's derivative, Phi(x) + x phi(x): -0 at -inf, 1 at +inf. */
void tendo__vgelu_deriv_f32(const float *x, float *y, int64_t n);
void tendo__vsin_f32(const float *x, float *y, int64_t n);
void tendo__vcos_f32(const float *x, float *y, int64_t n);
/* 1/sqrt(x): rsqrt(+-0) = +-inf, rsqrt(x < 0) = NaN, rsqrt(inf) = 0. */
void tendo__vrsqrt_f32(const float *x, float *y, int64_t n);

/* One torch.optim.AdamW update of n elements in place, in f32 (the CPU
 * kernel of adamw_update, templates/cpu/optim/adamw.c.j2): with c = {decay
 * (1 - lr wd), wt (1 - beta1), beta2, wt2 (1 - beta2), step (-lr / (1 -
 * beta1^t)), bc2 (sqrt(1 - beta2^t)), eps},
 *   p = p decay;  m = lerp(m, g, wt) (from the nearer end, as torch);
 *   v = v beta2 + wt2 g g;  p = p + step m / (sqrt(v) / bc2 + eps).
 * The same IEEE operations in the same order (no FMA) on every path and
 * at every width, so the result never depends on the dispatch level. */
void tendo__vadamw_f32(float *p, const float *g, float *m, float *v, int64_t n, const float c[7]);
/* out[i] = (a[i] + b[i]) * scale for 0 <= i < n (scale 1: no multiply;
 * 0.5: the mean of two, the bits of the sum divided by 2); out may be a
 * or b.  The same bits on every path: f32's add_pairs in the dtype table
 * (gen/dtypes.toml), the collectives' sum of two ranks' floats. */
void tendo__vadd_pairs_f32(const float *a, const float *b, float *out, int64_t n, float scale);

/* Scalar versions, same semantics (computed in double, rounded once). */
float tendo__exp_f32(float x);
/* exp(x) in double, the scalar form of tendo__vexp_f64 (same bits). */
double tendo__exp_f64(double x);
float tendo__log_f32(float x);
float tendo__tanh_f32(float x);
float tendo__sigmoid_f32(float x);
float tendo__silu_f32(float x);
float tendo__silu_deriv_f32(float x);
float tendo__gelu_f32(float x);
float tendo__gelu_deriv_f32(float x);
float tendo__sin_f32(float x);
float tendo__cos_f32(float x);
float tendo__rsqrt_f32(float x);

/* For tests: nonzero makes the tendo__v*_f32 loops use the scalar
 * functions even where AVX2+FMA is available; zero restores the choice by
 * CPU.  Not for concurrent use with the loops. */
void tendo__vmath_force_scalar(int on);

/* Which code the loops take now: "avx512" (16 lanes; sin, cos and the f64
 * exp stay at 8), "avx2" or "scalar".  A static string. */
const char *tendo__vmath_path(void);

#endif
