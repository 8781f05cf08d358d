/* src/scalar.h - the scalar helpers that gen/ops.toml expressions name.
 *
 * Semantics follow PyTorch: NaN propagates through maximum/minimum (and
 * max/min reductions); pow of a negative base with a non-integer exponent
 * is NaN (C's powf already says so).  Where PyTorch's formula would make
 * NaN of a limit (silu and gelu at -inf give -inf * 0), these give the
 * limit, -0, agreeing with the vector routines of src/vmath.c that dense
 * inputs take.  Plain C, also valid CUDA (TENDO_HD).
 */
#ifndef TENDO_SRC_SCALAR_H
#define TENDO_SRC_SCALAR_H

#include <math.h>

#include "core/hd.h"

/* a if a is NaN or larger, else b (so a NaN in either wins). */
static inline TENDO_HD float tendo__maximum(float a, float b) { return (a != a || a > b) ? a : b; }
static inline TENDO_HD float tendo__minimum(float a, float b) { return (a != a || a < b) ? a : b; }

static inline TENDO_HD float tendo__pow(float a, float b) { return powf(a, b); }

/* 1 / (1 + e^-a), written so that large negative a underflows gradually
 * (sigmoid(-100) is 3.8e-44, not 0), as the vector routine does. */
static inline TENDO_HD float tendo__sigmoid(float a)
{
    if (a < 0.0f) {
        float e = expf(a);
        return e / (1.0f + e);
    }
    return 1.0f / (1.0f + expf(-a));
}

/* max(a, 0), keeping NaN (like torch.relu). */
static inline TENDO_HD float tendo__relu(float a) { return (a > 0.0f || a != a) ? a : 0.0f; }

/* The exact (erf) form, PyTorch's default, as 0.5 a erfc(-a/sqrt 2) so that
 * negative a keeps its accuracy; the limit -0 at -inf (not -inf * 0). */
static inline TENDO_HD float tendo__gelu(float a)
{
    return a == -INFINITY ? -0.0f : 0.5f * a * erfcf(-a * 0.70710678118654752f);
}

/* a * sigmoid(a) = a / (1 + e^-a), with the limit -0 at -inf.  Below -80,
 * e^-a would overflow float (and a*e^a would lose the digits of a subnormal
 * e^a), so those tiny results are computed in double. */
static inline TENDO_HD float tendo__silu(float a)
{
    if (a == -INFINITY)
        return -0.0f;
    if (a < -80.0f)
        return (float)((double)a * exp((double)a));
    return a / (1.0f + expf(-a));
}

/* a clamped to [lo, hi], keeping NaN (like torch.clamp). */
static inline TENDO_HD float tendo__clamp(float a, float lo, float hi)
{
    return a != a ? a : (a < lo ? lo : (a > hi ? hi : a));
}

#endif /* TENDO_SRC_SCALAR_H */
