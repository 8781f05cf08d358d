/* src/core/scalar.h - the scalar helpers that the registry's op expressions name.
 *
 * Each float helper comes twice: NAMEf computes in float (f32 and the
 * narrower floats), NAME in double (f64); an expression of gen/registry/
 * spells them NAME{f} and tendo-gen picks one.  The integer helpers
 * compute in int64_t or uint64_t and never overflow or trap.
 *
 * Semantics follow PyTorch: NaN propagates through maximum/minimum (and
 * max/min reductions); pow of a negative base with a non-integer exponent
 * is NaN (C's pow already says so).  Where PyTorch's formula would make
 * NaN of a limit (silu and gelu at -inf give -inf * 0), these give the
 * limit, -0, agreeing with the vector routines of src/cpu/vmath.c that
 * dense f32 inputs take.  Integer division and remainder follow Python
 * (floor), and a divisor of 0 gives 0.  Plain C, also valid CUDA (TENDO_HD).
 */
#ifndef TENDO_SRC_SCALAR_H
#define TENDO_SRC_SCALAR_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* ---- float and double: NAME##f and NAME, the same formula ----------------- */

/* TENDO__BOTH(def) writes def once for float (suffix f) and once for double. */
#define TENDO__BOTH(def) def(f, float) def(, double)

/* a if a is NaN or larger, else b (so a NaN in either wins). */
#define TENDO__MAXMIN(S, T) \
    static inline TENDO_HD T tendo__maximum##S(T a, T b) { return (a != a || a > b) ? a : b; } \
    static inline TENDO_HD T tendo__minimum##S(T a, T b) { return (a != a || a < b) ? a : b; }
TENDO__BOTH(TENDO__MAXMIN)

static inline TENDO_HD float tendo__powf(float a, float b) { return powf(a, b); }
static inline TENDO_HD double tendo__pow(double a, double b) { return pow(a, b); }

/* 1 / (1 + e^-a), written so that large negative a underflows gradually
 * (sigmoid(-100) is 3.8e-44 in float, not 0), as the vector routine does. */
static inline TENDO_HD float tendo__sigmoidf(float a)
{
    if (a < 0.0f) {
        float e = expf(a);
        return e / (1.0f + e);
    }
    return 1.0f / (1.0f + expf(-a));
}

static inline TENDO_HD double tendo__sigmoid(double a)
{
    if (a < 0.0) {
        double e = exp(a);
        return e / (1.0 + e);
    }
    return 1.0 / (1.0 + exp(-a));
}

/* max(a, 0), keeping NaN (like torch.relu). */
#define TENDO__RELU(S, T) \
    static inline TENDO_HD T tendo__relu##S(T a) { return (a > 0 || a != a) ? a : 0; }
TENDO__BOTH(TENDO__RELU)

/* The exact (erf) form, PyTorch's default, as 0.5 a erfc(-a/sqrt 2) so that
 * negative a keeps its accuracy; the limit -0 at -inf (not -inf * 0). */
static inline TENDO_HD float tendo__geluf(float a)
{
    return a == -INFINITY ? -0.0f : 0.5f * a * erfcf(-a * 0.70710678118654752f);
}

static inline TENDO_HD double tendo__gelu(double a)
{
    return a == -INFINITY ? -0.0 : 0.5 * a * erfc(-a * 0.70710678118654752440);
}

/* The tanh approximation of gelu (PyTorch's approximate="tanh"):
 * 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))), with the limit -0 at -inf. */
static inline TENDO_HD float tendo__gelu_tanhf(float a)
{
    if (a == -INFINITY)
        return -0.0f;
    return 0.5f * a * (1.0f + tanhf(0.79788456080286536f * (a + 0.044715f * a * a * a)));
}

static inline TENDO_HD double tendo__gelu_tanh(double a)
{
    if (a == -INFINITY)
        return -0.0;
    return 0.5 * a * (1.0 + tanh(0.79788456080286535588 * (a + 0.044715 * a * a * a)));
}

/* a * sigmoid(a) = a / (1 + e^-a), with the limit -0 at -inf.  Below -80,
 * e^-a would overflow float (and a*e^a would lose the digits of a subnormal
 * e^a), so those tiny results are computed in double. */
static inline TENDO_HD float tendo__siluf(float a)
{
    if (a == -INFINITY)
        return -0.0f;
    if (a < -80.0f)
        return (float)((double)a * exp((double)a));
    return a / (1.0f + expf(-a));
}

static inline TENDO_HD double tendo__silu(double a)
{
    if (a == -INFINITY)
        return -0.0;
    if (a < -700.0)
        return a * exp(a);
    return a / (1.0 + exp(-a));
}

/* a clamped to [lo, hi], keeping NaN (like torch.clamp). */
#define TENDO__CLAMP(S, T) \
    static inline TENDO_HD T tendo__clamp##S(T a, T lo, T hi) { return a != a ? a : (a < lo ? lo : (a > hi ? hi : a)); }
TENDO__BOTH(TENDO__CLAMP)

/* -1, 0 or 1 by the sign of a (-0 and +0 give themselves); NaN stays NaN. */
#define TENDO__SIGN(S, T) \
    static inline TENDO_HD T tendo__sign##S(T a) { return a > 0 ? (T)1 : a < 0 ? (T)-1 : a; }
TENDO__BOTH(TENDO__SIGN)

/* Python's a // b for floats, as numpy computes it (from fmod, so that the
 * result is the floor of the exact quotient): b == 0 gives a / b (inf or NaN). */
#define TENDO__FLOORDIV(S, T) \
    static inline TENDO_HD T tendo__floordiv##S(T a, T b) \
    { \
        T mod, div, fl; \
        if (b == 0) \
            return a / b; \
        mod = fmod##S(a, b); \
        div = (a - mod) / b; \
        if (mod != 0 && ((b < 0) != (mod < 0))) \
            div -= 1; \
        if (div == 0) \
            return copysign##S((T)0, a / b); \
        fl = floor##S(div); \
        return div - fl > (T)0.5 ? fl + 1 : fl; \
    }
TENDO__BOTH(TENDO__FLOORDIV)

/* Python's a % b for floats: the sign of b (fmod corrected), b == 0 gives NaN. */
#define TENDO__REMAINDER(S, T) \
    static inline TENDO_HD T tendo__remainder##S(T a, T b) \
    { \
        T mod = fmod##S(a, b); \
        if (mod != 0) { \
            if ((b < 0) != (mod < 0)) \
                mod += b; \
        } else { \
            mod = copysign##S((T)0, b); \
        } \
        return mod; \
    }
TENDO__BOTH(TENDO__REMAINDER)

/* ---- integers --------------------------------------------------------------- */

/* Python's a // b on int64: floor; b == 0 gives 0; INT64_MIN // -1 wraps
 * to INT64_MIN (numpy's result) instead of trapping. */
static inline TENDO_HD int64_t tendo__floordiv_i64(int64_t a, int64_t b)
{
    int64_t q;
    if (b == 0)
        return 0;
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Python's a % b on int64: the sign of b; b == 0 (and b == -1) give 0. */
static inline TENDO_HD int64_t tendo__remainder_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (b == 0 || b == -1)
        return 0;
    r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Unsigned a // b and a % b; b == 0 gives 0. */
static inline TENDO_HD uint64_t tendo__floordiv_u64(uint64_t a, uint64_t b) { return b ? a / b : 0; }
static inline TENDO_HD uint64_t tendo__remainder_u64(uint64_t a, uint64_t b) { return b ? a % b : 0; }

/* The derivatives of the activations, times the incoming gradient g: what
 * the fused backward ops gelu_backward, gelu_tanh_backward and
 * silu_backward compute (PyTorch's formulas, in the compute type).  Written
 * without cancellation for negative x: Phi(x) as erfc(-x/sqrt2)/2, and
 * tanh's (1 + t) and (1 - t^2) through sigmoids of +-2u. */
#define TENDO__ACT_GRAD(S, T) \
    /* sigmoid(x) and sigmoid(-x) from one exp(-|x|), each one division */ \
    static inline TENDO_HD void tendo__sigmoid_pair##S(T x, T *sp, T *sm) \
    { \
        T e = exp##S(x < (T)0 ? x : -x), d = (T)1 + e; \
        *sp = x < (T)0 ? e / d : (T)1 / d; \
        *sm = x < (T)0 ? (T)1 / d : e / d; \
    } \
    static TENDO_HD_NOINLINE T tendo__gelu_grad##S(T g, T x) /* erfc and exp: 70 registers inlined in f64 */ \
    { \
        T cdf = (T)0.5 * erfc##S(-x * (T)0.70710678118654752440); \
        T pdf = exp##S((T)-0.5 * x * x) * (T)0.39894228040143267794; \
        return g * (cdf + x * pdf); \
    } \
    static inline TENDO_HD T tendo__gelu_tanh_grad##S(T g, T x) \
    { \
        const T k = (T)0.79788456080286535588, c = (T)0.044715; \
        T u = k * (x + c * x * x * x); \
        T sp, sm; \
        tendo__sigmoid_pair##S((T)2 * u, &sp, &sm); \
        return g * (sp + (T)2 * x * sp * sm * k * ((T)1 + (T)3 * c * x * x)); \
    } \
    static TENDO_HD_NOINLINE T tendo__silu_grad##S(T g, T x) /* f64 dense kernel: 66 registers inlined */ \
    { \
        T sp, sm; \
        tendo__sigmoid_pair##S(x, &sp, &sm); \
        return g * sp * ((T)1 + x * sm); \
    }
TENDO__BOTH(TENDO__ACT_GRAD)

#endif /* TENDO_SRC_SCALAR_H */
