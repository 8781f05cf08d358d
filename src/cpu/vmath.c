/* src/cpu/vmath.c - elementwise f32 math over contiguous arrays, with AVX2+FMA
 * kernels chosen at run time and a portable scalar fallback.
 *
 * Semantics are those of src/cpu/vmath.h.  The scalar functions compute in
 * double and round once (libm's double exp, log, tanh, erfc, sin, cos,
 * sqrt), so they are within a hair of correct rounding.  The AVX2 kernels
 * work on 8 floats at a time; every element, the tail's included, goes
 * through the same vector code, so results do not depend on n or on
 * alignment.  Their largest error against a double reference, measured
 * over all 2^32 inputs (t/drivers/t-vmath.c checks dense sweeps of the same), is:
 *
 *   exp     1.02 ulp  (subnormal results by gradual underflow, inf from
 *                      0x1.62e430p+6 on, as libm)
 *   log     0.91 ulp  (subnormal inputs included)
 *   tanh    1.47 ulp
 *   sigmoid 1.01 ulp  (subnormal results for x < -87.3 included)
 *   silu    1.73 ulp
 *   gelu    4.26 ulp  (relative error 3.0e-7 for normal results; erfc, so no
 *                      cancellation for x < 0)
 *   silu'   relative 1e-6 or absolute 1e-7 (dense sweeps; its root is -1.2785)
 *   gelu'   relative 1e-6 or absolute 1e-7 (dense sweeps; Phi(x) + x phi(x)
 *                      cancels near its root at -0.7518, where ulps mean nothing)
 *   sin/cos 0.5001 ulp (double-precision reduction and polynomials for
 *                      |x| <= 2^24; larger |x|, inf and NaN lanes use the
 *                      scalar functions)
 *   rsqrt   0.5000 ulp (sqrt, divide, then one correction step from the
 *                      exact residuals; 99.99999% correctly rounded)
 *
 * How the polynomial coefficients were made: a weighted Remez exchange
 * (numpy, float64) minimising the relative error of the final function on
 * the reduced interval, each coefficient then rounded to float (or kept as
 * double for sin/cos) in turn, lowest degree first, with the remaining
 * ones refitted after each rounding.
 */
#include "cpu/vmath.h"

#include "cpu/cpu.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TENDO__VMATH_X86 1
#include <immintrin.h>
#include <stdatomic.h>
#else
#define TENDO__VMATH_X86 0
#endif

/* ---- scalar versions (portable; also the large-|x| sin/cos lanes) ------ */

/* exp(x), rounded once from double. */
float tendo__exp_f32(float x) { return (float)exp((double)x); }

/* log(x), rounded once from double. */
float tendo__log_f32(float x) { return (float)log((double)x); }

/* tanh(x), rounded once from double. */
float tendo__tanh_f32(float x) { return (float)tanh((double)x); }

/* 1/(1+exp(-x)); for x < 0 as e/(1+e) with e = exp(x), so no overflow. */
float tendo__sigmoid_f32(float x)
{
    double e = exp(-fabs((double)x));
    return (float)((x < 0 ? e : 1.0) / (1.0 + e));
}

/* x*sigmoid(x), with silu(-inf) = -0 (the limit, not -inf*0). */
float tendo__silu_f32(float x)
{
    if (x == -INFINITY)
        return -0.0f;
    double e = exp(-fabs((double)x));
    return (float)((double)x * (x < 0 ? e : 1.0) / (1.0 + e));
}

/* silu'(x) = s (1 + x (1 - s)), s = sigmoid(x): -0 at -inf (it is
 * negative below -1.28), 1 at +inf. */
float tendo__silu_deriv_f32(float x)
{
    if (isinf(x))
        return x < 0 ? -0.0f : 1.0f;
    double e = exp(-fabs((double)x)), s = (x < 0 ? e : 1.0) / (1.0 + e), sm = (x < 0 ? 1.0 : e) / (1.0 + e);
    return (float)(s * (1.0 + (double)x * sm));
}

/* 0.5*x*erfc(-x/sqrt(2)) (= 0.5*x*(1+erf(x/sqrt(2)))), gelu(-inf) = -0. */
float tendo__gelu_f32(float x)
{
    if (x == -INFINITY)
        return -0.0f;
    return (float)(0.5 * (double)x * erfc(-(double)x * 0.70710678118654752440));
}

/* gelu'(x) = 0.5*erfc(-x/sqrt(2)) + x*exp(-x^2/2)/sqrt(2 pi): -0 at -inf
 * (it is negative below -0.75), 1 at +inf. */
float tendo__gelu_deriv_f32(float x)
{
    double xd = isinf(x) ? 0.0 : (double)x;

    if (x <= -15.0f) /* negative, and under float's smallest: as the vector form */
        return -0.0f;
    return (float)(0.5 * erfc(-(double)x * 0.70710678118654752440) +
                   xd * exp(-0.5 * xd * xd) * 0.39894228040143267794);
}

/* sin(x), rounded once from double. */
float tendo__sin_f32(float x) { return (float)sin((double)x); }

/* cos(x), rounded once from double. */
float tendo__cos_f32(float x) { return (float)cos((double)x); }

/* 1/sqrt(x), rounded once from double. */
float tendo__rsqrt_f32(float x) { return (float)(1.0 / sqrt((double)x)); }

/* ---- f64 exp (portable; also the AVX2 kernel's special lanes) ---------- */

/* x = k ln2 + r with k = round(x/ln2) (ties to even, by the 1.5*2^52
 * shift, which also leaves k in the low bits of x/ln2 + SHIFT; an
 * explicit fma, like every multiply-add here, so that contraction settings
 * cannot make the levels differ) and
 * ln2 = LN2_HI + LN2_LO: LN2_HI has all 53 bits, and x - k*LN2_HI is still
 * exact in an FMA (it is a multiple of 2^-54 below 1/2 in magnitude).
 * e^r = 1 + r + r^2 Q(r), Q the Taylor series of (e^r - 1 - r)/r^2 to
 * degree 11 (e^r to degree 13): truncation error 4e-18 relative for
 * |r| <= 0.347.  See exp64_core for how the sum keeps to one rounding;
 * t/drivers/t-vmath.c measures the result: max 0.69 ulp. */
#define EXP64_INVLN2 0x1.71547652b82fep+0
#define EXP64_SHIFT 0x1.8p52
#define EXP64_LN2_HI 0x1.62e42fefa39efp-1
#define EXP64_LN2_LO 0x1.abc9e3b39803fp-56
/* |x| <= EXP64_FAST gives |k| <= 1021, so (1 + t) 2^k is a normal double,
 * made by adding k to the exponent field. */
#define EXP64_FAST 708.0
/* 1/n!, n = 2..13, rounded to double. */
#define X2 0x1.0000000000000p-1
#define X3 0x1.5555555555555p-3
#define X4 0x1.5555555555555p-5
#define X5 0x1.1111111111111p-7
#define X6 0x1.6c16c16c16c17p-10
#define X7 0x1.a01a01a01a01ap-13
#define X8 0x1.a01a01a01a01ap-16
#define X9 0x1.71de3a556c734p-19
#define X10 0x1.27e4fb7789f5cp-22
#define X11 0x1.ae64567f544e4p-26
#define X12 0x1.1eed8eff8d898p-29
#define X13 0x1.6124613a86d09p-33

/* The bits of d, and the double with bits u. */
static inline uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}
static inline double u2d(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Q(r) = (e^r - 1 - r)/r^2 for |r| <= 0.35, by Estrin's scheme; *r2 gets
 * r^2.  Every multiply-add is an explicit fma() and the order of
 * operations is that of exp4d_q below, so the two give the same bits. */
static inline double exp64_q(double r, double *r2p)
{
    double r2 = r * r;
    double r4 = r2 * r2;
    double p01 = fma(X3, r, X2), p23 = fma(X5, r, X4), p45 = fma(X7, r, X6);
    double p67 = fma(X9, r, X8), p89 = fma(X11, r, X10), pab = fma(X13, r, X12);
    double q03 = fma(p23, r2, p01), q47 = fma(p67, r2, p45), q8b = fma(pab, r2, p89);
    *r2p = r2;
    return fma(fma(q8b, r4, q47), r4, q03);
}

/* e^(x - k ln2) = sh + tl with sh = 1 + r (rounded) and tl small, for
 * k = round(x/ln2), returned in *kt as in EXP64_SHIFT's comment.  The
 * reduced argument is kept as r + rl (rl from the exact residual), and
 * 1 + r as sh + (1 - sh) + r (exact), so that the only rounding that
 * matters is the final sh + tl (0.5 ulp): the rest stays below 0.1 ulp. */
static inline double exp64_core(double x, double *kt, double *tl)
{
    *kt = fma(x, EXP64_INVLN2, EXP64_SHIFT);
    double kd = *kt - EXP64_SHIFT;
    double r1 = fma(-kd, EXP64_LN2_HI, x); /* exact */
    double r = fma(-kd, EXP64_LN2_LO, r1);
    double rl = fma(-kd, EXP64_LN2_LO, r1 - r);
    double sh = 1.0 + r;
    double r2;
    double q = exp64_q(r, &r2);
    *tl = fma(r2, q, ((1.0 - sh) + r) + rl);
    return sh;
}

/* exp(x) for |x| > EXP64_FAST, inf and NaN: (sh + tl) 2^k rounded once,
 * overflowing to inf, underflowing gradually (for subnormal results the
 * rounding happens at 1 + y, whose ulp is the subnormal one, so there is
 * no double rounding). */
static double exp64_special(double x)
{
    if (isnan(x))
        return x + x;
    /* exp(720) overflows and exp(-760) rounds to 0; k in [-1097, 1039]. */
    double xc = x > 720.0 ? 720.0 : x < -760.0 ? -760.0 : x;
    double kt, tl;
    double sh = exp64_core(xc, &kt, &tl);
    int k = (int)(kt - EXP64_SHIFT);
    if (k > 0) {
        double s = u2d((uint64_t)(k - 1009 + 1023) << 52); /* 2^(k-1009) */
        return fma(s, sh, s * tl) * 0x1p1009;
    }
    double s = u2d((uint64_t)(k + 1022 + 1023) << 52); /* 2^(k+1022) */
    double stl = s * tl;                               /* exact */
    double y = fma(s, sh, stl);
    if (y < 1.0) {
        double lo = fma(s, sh, -y) + stl; /* s (sh + tl) ~ y + lo */
        double hi = 1.0 + y;
        lo = (1.0 - hi) + y + lo;
        y = (hi + lo) - 1.0; /* rounded at 2^-52, i.e. 2^-1074 below */
    }
    return y * 0x1p-1022;
}

double tendo__exp_f64(double x)
{
    if (!(fabs(x) <= EXP64_FAST))
        return exp64_special(x);
    double kt, tl;
    double sh = exp64_core(x, &kt, &tl);
    double y = sh + tl;
    return u2d(d2u(y) + (d2u(kt) << 52)); /* k << 52, mod 2^64 */
}

/* ---- x86: AVX2 + FMA kernels ------------------------------------------- */

#if TENDO__VMATH_X86
#define TENDO__AVX2 __attribute__((target("avx2,fma")))
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* exp: x = k ln2 + r, |r| <= ln2/2; ln2 = LN2_HI + LN2_LO where k*LN2_HI
 * is exact in an FMA and x - k*LN2_HI is exact for the k that occur. */
#define LOG2E 0x1.715476p+0f
#define LN2_HI 0x1.62e430p-1f
#define LN2_LO -0x1.05c610p-29f
/* exp's argument clamp: below EXP_LO the result is 0 even after a factor
 * of 120 (silu), above EXP_HI it is inf; k stays within [-173, 128]. */
#define EXP_LO -120.0f
#define EXP_HI 89.0f
/* e^r = 1 + r + r^2 (E0 + E1 r + ... + E4 r^4), |r| <= 0.3467:
 * relative error 3.2e-9 (0.054 ulp) with these float coefficients. */
#define E0 0x1.fffffcp-2f
#define E1 0x1.55548cp-3f
#define E2 0x1.555858p-5f
#define E3 0x1.123de0p-7f
#define E4 0x1.6ac710p-10f

/* log: x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1, log x = k ln2 +
 * log1p(f); here LN2_HI has 16 bits so that k*LN2_HI is exact. */
#define LOG_OFF 0x3f3504f3 /* the bits of sqrt(1/2) */
#define LOG_LN2_HI 0x1.62e4p-1f
#define LOG_LN2_LO 0x1.7f7d1cp-20f
/* log1p(f) = f + f^2 (-1/2 + f (L0 + L1 f + ... + L7 f^7)) on
 * [sqrt(1/2)-1, sqrt(2)-1): relative error 6.7e-9 (0.11 ulp). */
#define L0 0x1.555554p-2f
#define L1 -0x1.000228p-2f
#define L2 0x1.99a036p-3f
#define L3 -0x1.547208p-3f
#define L4 0x1.22d58ap-3f
#define L5 -0x1.0d84e8p-3f
#define L6 0x1.05858ap-3f
#define L7 -0x1.392c26p-4f

/* tanh x = x + x^3 (T0 + T1 s + ... + T4 s^4), s = x^2, for |x| < 0.55:
 * relative error 1.0e-8 (0.17 ulp); beyond, 1 - 2/(exp(2|x|) + 1). */
#define TANH_SMALL 0.55f
#define T0 -0x1.555556p-2f
#define T1 0x1.1113e8p-3f
#define T2 -0x1.ba8666p-5f
#define T3 0x1.6574f0p-6f
#define T4 -0x1.e2aa3ep-8f

/* gelu: Phi(-a) = 0.5 erfc(a/sqrt2) = 0.5 G(t) exp(-a^2/2) with
 * t = 1/(1 + GELU_K a), 0 <= a <= 15; G is a degree-10 polynomial in t,
 * relative error 5.1e-9 (0.085 ulp). */
#define GELU_K 0.25f
#define GELU_MAX 15.0f
#define G0 -0x1.b33504p-17f
#define G1 0x1.992764p-3f
#define G2 0x1.91e218p-3f
#define G3 0x1.a651b2p-3f
#define G4 0x1.7405aap-4f
#define G5 0x1.3035b4p-2f
#define G6 -0x1.5964ecp-3f
#define G7 0x1.09d07cp-2f
#define G8 -0x1.05260ap-5f
#define G9 -0x1.2d2e32p-4f
#define G10 0x1.8f0f90p-6f

/* sin/cos in double: x = q pi/2 + r, |r| <= pi/4, with pi/2 = PIO2_HI +
 * PIO2_LO (x - q*PIO2_HI is exact); sin r = r + r^3 S(r^2) (relative error
 * 5.2e-12), cos r = 1 - r^2/2 + r^4 C(r^2) (1.2e-13).  Lanes with |x| over
 * TRIG_MAX (and inf, NaN) use the scalar functions. */
#define TWO_OVER_PI 0x1.45f306dc9c883p-1
#define PIO2_HI 0x1.921fb54442d18p+0
#define PIO2_LO 0x1.1a62633145c07p-54
#define TRIG_MAX 0x1p24f
#define S0 -0x1.5555554c71cbdp-3
#define S1 0x1.1111086a5d7abp-7
#define S2 -0x1.a00f7f25a2a1cp-13
#define S3 0x1.6cd1f1f210774p-19
#define C0 0x1.5555554ed981bp-5
#define C1 -0x1.6c16b82a12333p-10
#define C2 0x1.a010decea6bbbp-16
#define C3 -0x1.241e9bd458640p-22

/* c in all 8 lanes. */
TENDO__AVX2 static inline __m256 k8(float c) { return _mm256_set1_ps(c); }

/* c in all 4 double lanes. */
TENDO__AVX2 static inline __m256d k4d(double c) { return _mm256_set1_pd(c); }

/* The sign bit of x alone. */
TENDO__AVX2 static inline __m256 sign_of(__m256 x) { return _mm256_and_ps(x, k8(-0.0f)); }

/* |x|. */
TENDO__AVX2 static inline __m256 abs8(__m256 x) { return _mm256_andnot_ps(k8(-0.0f), x); }

/* The lanes of a where the sign bit of mask is set, else those of b. */
TENDO__AVX2 static inline __m256 pick(__m256 mask, __m256 a, __m256 b)
{
    return _mm256_blendv_ps(b, a, mask);
}

/* sin r and cos r (rounded to float) and the quadrant q of 4 lanes
 * |x| <= TRIG_MAX, where |x| = q pi/2 + r. */
TENDO__AVX2 static inline void trig4(__m128 xf, __m128 *s, __m128 *c, __m128i *q)
{
    __m256d x = _mm256_cvtps_pd(xf);
    __m256d qd = _mm256_round_pd(_mm256_mul_pd(x, k4d(TWO_OVER_PI)), ROUND_NEAREST);
    __m256d r = _mm256_fnmadd_pd(qd, k4d(PIO2_HI), x); /* exact */
    r = _mm256_fnmadd_pd(qd, k4d(PIO2_LO), r);
    __m256d z = _mm256_mul_pd(r, r);
    __m256d ps = _mm256_fmadd_pd(k4d(S3), z, k4d(S2));
    ps = _mm256_fmadd_pd(ps, z, k4d(S1));
    ps = _mm256_fmadd_pd(ps, z, k4d(S0));
    __m256d pc = _mm256_fmadd_pd(k4d(C3), z, k4d(C2));
    pc = _mm256_fmadd_pd(pc, z, k4d(C1));
    pc = _mm256_fmadd_pd(pc, z, k4d(C0));
    __m256d sinr = _mm256_fmadd_pd(_mm256_mul_pd(r, z), ps, r);
    __m256d one_less = _mm256_fnmadd_pd(k4d(0.5), z, k4d(1.0)); /* 1 - z/2 */
    __m256d cosr = _mm256_fmadd_pd(_mm256_mul_pd(z, z), pc, one_less);
    *s = _mm256_cvtpd_ps(sinr);
    *c = _mm256_cvtpd_ps(cosr);
    *q = _mm256_cvtpd_epi32(qd); /* integral already: exact */
}

/* y with the lanes in `lanes` (a movemask) replaced by the scalar sin or
 * cos of those of x: huge |x|, inf and NaN. */
TENDO__AVX2 static __m256 trig_scalar_lanes(__m256 x, __m256 y, int lanes, int is_cos)
{
    float xs[8], ys[8];
    _mm256_storeu_ps(xs, x);
    _mm256_storeu_ps(ys, y);
    for (int i = 0; i < 8; i++)
        if (lanes >> i & 1)
            ys[i] = is_cos ? tendo__cos_f32(xs[i]) : tendo__sin_f32(xs[i]);
    return _mm256_loadu_ps(ys);
}

/* sin(x) (is_cos = 0) or cos(x) (is_cos = 1), from |x| and the parity of
 * sin and cos. */
TENDO__AVX2 static inline __m256 trig8(__m256 x, int is_cos)
{
    __m256 a = abs8(x);
    __m128 slo, clo, shi, chi;
    __m128i qlo, qhi;
    trig4(_mm256_castps256_ps128(a), &slo, &clo, &qlo);
    trig4(_mm256_extractf128_ps(a, 1), &shi, &chi, &qhi);
    __m256 s = _mm256_set_m128(shi, slo);
    __m256 c = _mm256_set_m128(chi, clo);
    __m256i q = _mm256_set_m128i(qhi, qlo);
    if (is_cos)
        q = _mm256_add_epi32(q, _mm256_set1_epi32(1)); /* cos x = sin(x + pi/2) */
    /* Quadrant q: odd takes cos r, q & 2 negates; sin is odd in x. */
    __m256 y = pick(_mm256_castsi256_ps(_mm256_slli_epi32(q, 31)), c, s);
    __m256 neg = _mm256_castsi256_ps(_mm256_slli_epi32(q, 30));
    y = _mm256_xor_ps(y, sign_of(neg));
    if (!is_cos)
        y = _mm256_xor_ps(y, sign_of(x));
    int big = _mm256_movemask_ps(_mm256_cmp_ps(a, k8(TRIG_MAX), _CMP_NLE_UQ));
    if (big)
        y = trig_scalar_lanes(x, y, big, is_cos);
    return y;
}

/* sin(x). */
TENDO__AVX2 static inline __m256 sin8(__m256 x) { return trig8(x, 0); }

/* cos(x). */
TENDO__AVX2 static inline __m256 cos8(__m256 x) { return trig8(x, 1); }

/* ---- f64 exp: 4 lanes, the same operations as tendo__exp_f64 ---- */

/* Q(r) and r^2, as exp64_q. */
TENDO__AVX2 static inline __m256d exp4d_q(__m256d r, __m256d *r2p)
{
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d r4 = _mm256_mul_pd(r2, r2);
    __m256d p01 = _mm256_fmadd_pd(k4d(X3), r, k4d(X2));
    __m256d p23 = _mm256_fmadd_pd(k4d(X5), r, k4d(X4));
    __m256d p45 = _mm256_fmadd_pd(k4d(X7), r, k4d(X6));
    __m256d p67 = _mm256_fmadd_pd(k4d(X9), r, k4d(X8));
    __m256d p89 = _mm256_fmadd_pd(k4d(X11), r, k4d(X10));
    __m256d pab = _mm256_fmadd_pd(k4d(X13), r, k4d(X12));
    __m256d q03 = _mm256_fmadd_pd(p23, r2, p01);
    __m256d q47 = _mm256_fmadd_pd(p67, r2, p45);
    __m256d q8b = _mm256_fmadd_pd(pab, r2, p89);
    *r2p = r2;
    return _mm256_fmadd_pd(_mm256_fmadd_pd(q8b, r4, q47), r4, q03);
}

/* exp of 4 doubles, as tendo__exp_f64; lanes with |x| > EXP64_FAST (and
 * NaN) go through the scalar function. */
TENDO__AVX2 static inline __m256d exp4d(__m256d x)
{
    __m256d ax = _mm256_andnot_pd(k4d(-0.0), x);
    int fast = _mm256_movemask_pd(_mm256_cmp_pd(ax, k4d(EXP64_FAST), _CMP_LE_OQ));
    __m256d kt = _mm256_fmadd_pd(x, k4d(EXP64_INVLN2), k4d(EXP64_SHIFT));
    __m256d kd = _mm256_sub_pd(kt, k4d(EXP64_SHIFT));
    __m256d r1 = _mm256_fnmadd_pd(kd, k4d(EXP64_LN2_HI), x);
    __m256d r = _mm256_fnmadd_pd(kd, k4d(EXP64_LN2_LO), r1);
    __m256d rl = _mm256_fnmadd_pd(kd, k4d(EXP64_LN2_LO), _mm256_sub_pd(r1, r));
    __m256d sh = _mm256_add_pd(k4d(1.0), r);
    __m256d r2;
    __m256d q = exp4d_q(r, &r2);
    __m256d c = _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(k4d(1.0), sh), r), rl);
    __m256d y = _mm256_add_pd(sh, _mm256_fmadd_pd(r2, q, c));
    __m256i e = _mm256_slli_epi64(_mm256_castpd_si256(kt), 52);
    y = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(y), e));
    if (fast != 0xf) {
        double xs[4], ys[4];
        _mm256_storeu_pd(xs, x);
        _mm256_storeu_pd(ys, y);
        for (int i = 0; i < 4; i++)
            if (!(fast >> i & 1))
                ys[i] = exp64_special(xs[i]);
        y = _mm256_loadu_pd(ys);
    }
    return y;
}

/* From this many elements on, a loop writing to a separate y uses
 * non-temporal stores: the arrays are then past the caches anyway, and
 * streaming y saves reading its lines in before they are overwritten (a
 * third of the memory traffic).  In place, y's lines are already read. */
#define VMATH_STREAM_MIN (INT64_C(1) << 22)

/* Defines name(x, y, n), applying kernel to W elements of T at a time:
 * one vector of PFX intrinsics (_mm256 or _mm512) on _ps or _pd (sfx),
 * compiled for target attr.  The last n % W go through a zero-padded
 * buffer, which also makes y == x safe.  The streaming loop (from
 * VMATH_STREAM_MIN floats' worth of bytes) starts with one unaligned
 * store and then goes on from the first vector boundary of y (redoing up
 * to W - 1 elements).  vmath-kernels.h uses it at every width. */
#define VMATH_LOOP_T(name, kernel, T, W, PFX, sfx, attr)                             \
    attr static void name(const T *x, T *y, int64_t n)                                \
    {                                                                                 \
        enum { VB = W * (int)sizeof(T) }; /* bytes per vector */                      \
        int64_t i = 0;                                                                \
        if (n >= VMATH_STREAM_MIN * 4 / (int64_t)sizeof(T) && x != y &&               \
            ((uintptr_t)y & (sizeof(T) - 1)) == 0) {                                  \
            PFX##_storeu_##sfx(y, kernel(PFX##_loadu_##sfx(x)));                      \
            i = (int64_t)((VB - ((uintptr_t)y & (VB - 1))) & (VB - 1)) / (int64_t)sizeof(T); \
            for (; i + W <= n; i += W)                                                \
                PFX##_stream_##sfx(y + i, kernel(PFX##_loadu_##sfx(x + i)));          \
            _mm_sfence();                                                             \
        }                                                                             \
        for (; i + W <= n; i += W)                                                    \
            PFX##_storeu_##sfx(y + i, kernel(PFX##_loadu_##sfx(x + i)));              \
        if (i < n) {                                                                  \
            T buf[W] = {0};                                                           \
            size_t rest = (size_t)(n - i) * sizeof(T);                                \
            memcpy(buf, x + i, rest);                                                 \
            PFX##_storeu_##sfx(buf, kernel(PFX##_loadu_##sfx(buf)));                  \
            memcpy(y + i, buf, rest);                                                 \
        }                                                                             \
    }
#define VMATH_AVX2_LOOP(name, kernel) VMATH_LOOP_T(name, kernel, float, 8, _mm256, ps, TENDO__AVX2)
/* As VMATH_AVX2_LOOP, for doubles, 4 at a time. */
#define VMATH_AVX2_LOOP_F64(name, kernel) VMATH_LOOP_T(name, kernel, double, 4, _mm256, pd, TENDO__AVX2)

VMATH_AVX2_LOOP(vsin_avx2, sin8)
VMATH_AVX2_LOOP(vcos_avx2, cos8)
VMATH_AVX2_LOOP_F64(vexp_f64_avx2, exp4d)

/* ---- the width-generic kernels: exp_8 ... at 8 lanes, exp_16 ... at 16 ---- */

#define VMATH_WIDTH 8
#include "cpu/vmath-kernels.h"
#undef VMATH_WIDTH
#define VMATH_WIDTH 16
#include "cpu/vmath-kernels.h"
#undef VMATH_WIDTH

/* ---- dispatch ---------------------------------------------------------- */

/* Set by tendo__vmath_force_scalar (tests). */
static atomic_int force_scalar;

/* The vector width the loops take now: 16 (AVX-512), 8 (AVX2+FMA) or 0
 * (scalar), as the CPU (capped by TENDO_CPU) and force_scalar allow. */
static int width(void)
{
    if (atomic_load_explicit(&force_scalar, memory_order_relaxed))
        return 0;
    if (tendo__cpu_has(TENDO__CPU_AVX512 | TENDO__CPU_FMA))
        return 16;
    return tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_FMA) ? 8 : 0;
}

void tendo__vmath_force_scalar(int on) { atomic_store_explicit(&force_scalar, on != 0, memory_order_relaxed); }

const char *tendo__vmath_path(void)
{
    int w = width();
    return w == 16 ? "avx512" : w == 8 ? "avx2" : "scalar";
}

/* Defines the public loop name over the kernel fn: 16 or 8 lanes where
 * the CPU allows (fn_16 may be the 8-lane loop where there is no wider
 * one), else scalar. */
#define VMATH_ENTRY(name, fn_16, fn_8, scalar)                                  \
    void name(const float *x, float *y, int64_t n)                             \
    {                                                                          \
        int w = n > 0 ? width() : 0;                                           \
        if (w) {                                                               \
            (w == 16 ? fn_16 : fn_8)(x, y, n);                                 \
            return;                                                            \
        }                                                                      \
        for (int64_t i = 0; i < n; i++)                                        \
            y[i] = scalar(x[i]);                                               \
    }

/* As VMATH_ENTRY, for doubles (one AVX2 loop). */
#define VMATH_ENTRY_F64(name, avx2_loop, scalar)                               \
    void name(const double *x, double *y, int64_t n)                           \
    {                                                                          \
        if (n > 0 && width()) {                                                \
            avx2_loop(x, y, n);                                                \
            return;                                                            \
        }                                                                      \
        for (int64_t i = 0; i < n; i++)                                        \
            y[i] = scalar(x[i]);                                               \
    }

#else /* !TENDO__VMATH_X86 */

void tendo__vmath_force_scalar(int on) { (void)on; }

const char *tendo__vmath_path(void) { return "scalar"; }

#define VMATH_ENTRY(name, fn_16, fn_8, scalar)                                  \
    void name(const float *x, float *y, int64_t n)                             \
    {                                                                          \
        for (int64_t i = 0; i < n; i++)                                        \
            y[i] = scalar(x[i]);                                               \
    }

#define VMATH_ENTRY_F64(name, avx2_loop, scalar)                               \
    void name(const double *x, double *y, int64_t n)                           \
    {                                                                          \
        for (int64_t i = 0; i < n; i++)                                        \
            y[i] = scalar(x[i]);                                               \
    }

#endif /* TENDO__VMATH_X86 */

/* ---- public loops ------------------------------------------------------- */

void tendo__vadamw_f32(float *p, const float *g, float *m, float *v, int64_t n, const float c[7])
{
    const float decay = c[0], wt = c[1], beta2 = c[2], wt2 = c[3], step = c[4], bc2 = c[5], eps = c[6];
    const float rest = 1.0f - wt;
    int64_t i = 0;

#if TENDO__VMATH_X86
    int w = n > 0 ? width() : 0;
    if (w)
        i = w == 16 ? vadamw_16(p, g, m, v, n, c) : vadamw_8(p, g, m, v, n, c);
#endif
    for (; i < n; i++) { /* vadamw_W's operations, one element at a time */
        float gi = g[i], pi = p[i] * decay;
        float mi = wt < 0.5f ? m[i] + wt * (g[i] - m[i]) : gi - (gi - m[i]) * rest;
        float vi = v[i] * beta2 + wt2 * gi * gi;

        m[i] = mi;
        v[i] = vi;
        p[i] = pi + step * mi / (sqrtf(vi) / bc2 + eps);
    }
}

void tendo__vadd_pairs_f32(const float *a, const float *b, float *out, int64_t n, float scale)
{
    int64_t i = 0;

#if TENDO__VMATH_X86
    int w = n > 0 ? width() : 0;
    if (w)
        i = w == 16 ? vadd_pairs_16(a, b, out, n, scale) : vadd_pairs_8(a, b, out, n, scale);
#endif
    for (; i < n; i++) {
        float sum = a[i] + b[i];
        out[i] = scale != 1.0f ? sum * scale : sum;
    }
}

float tendo__vexp_shift_sum_f32(float *x, float shift, int64_t n)
{
    float lane[16] = {0};

#if TENDO__VMATH_X86
    int w = n > 0 ? width() : 0;
    if (w)
        return w == 16 ? vexp_shift_sum_16(x, shift, n) : vexp_shift_sum_8(x, shift, n);
#endif
    for (int64_t i = 0; i < n; i++) {
        x[i] = tendo__exp_f32(x[i] - shift);
        lane[i % 16] += x[i];
    }
    return tendo__vmath_fold16(lane);
}

VMATH_ENTRY(tendo__vexp_f32, vexp_16, vexp_8, tendo__exp_f32)
VMATH_ENTRY(tendo__vlog_f32, vlog_16, vlog_8, tendo__log_f32)
VMATH_ENTRY(tendo__vtanh_f32, vtanh_16, vtanh_8, tendo__tanh_f32)
VMATH_ENTRY(tendo__vsigmoid_f32, vsigmoid_16, vsigmoid_8, tendo__sigmoid_f32)
VMATH_ENTRY(tendo__vsilu_f32, vsilu_16, vsilu_8, tendo__silu_f32)
VMATH_ENTRY(tendo__vsilu_deriv_f32, vsilu_deriv_16, vsilu_deriv_8, tendo__silu_deriv_f32)
VMATH_ENTRY(tendo__vgelu_f32, vgelu_16, vgelu_8, tendo__gelu_f32)
VMATH_ENTRY(tendo__vgelu_deriv_f32, vgelu_deriv_16, vgelu_deriv_8, tendo__gelu_deriv_f32)
VMATH_ENTRY(tendo__vsin_f32, vsin_avx2, vsin_avx2, tendo__sin_f32)
VMATH_ENTRY(tendo__vcos_f32, vcos_avx2, vcos_avx2, tendo__cos_f32)
VMATH_ENTRY(tendo__vrsqrt_f32, vrsqrt_16, vrsqrt_8, tendo__rsqrt_f32)
VMATH_ENTRY_F64(tendo__vexp_f64, vexp_f64_avx2, tendo__exp_f64)
