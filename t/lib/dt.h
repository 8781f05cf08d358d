/* t/lib/dt.h - helpers for test bodies instantiated once per dtype.
 *
 * A body (t/<area>-body.h) is included by t/each-dtype.h with DT (f32...),
 * TT (tensor_f32), E (element type), DT_MANTISSA_BITS, E_TO_DOUBLE and
 * E_FROM_DOUBLE defined.  It names its functions DTFN(test_x), which become
 * test_x_f32, and calls typed functions as TFN(zeros) -> tensor_f32_zeros;
 * everything that takes a tensor goes through the _Generic front instead.
 */
#ifndef TENDO_T_DT_H
#define TENDO_T_DT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/fp8.h"
#include "cpu/half.h"
#include "gen/convert.h"
#include "tap.h"
#include "tendo.h"

/* DT_SUFFIX is _<dt> (_f32, _bool): pasted whole, so that a dtype whose
 * name is a macro (bool, from <stdbool.h>) is never expanded. */
#define DT_PASTE_(a, b) a##b
#define DT_PASTE(a, b) DT_PASTE_(a, b)
#define DT_CAT(a, b) DT_PASTE(a, DT_PASTE(_, b))
#define DTFN(name) DT_PASTE(name, DT_SUFFIX)
#define TFN(verb) DT_PASTE(DT_PASTE(tensor, DT_SUFFIX), DT_PASTE(_, verb))

/* Relative tolerance of one rounding to the dtype. */
#define DT_ULP ldexp(1.0, 1 - DT_MANTISSA_BITS)

/* A small deterministic PRNG for test data (xorshift64*). */
static inline uint64_t t_rand_u64(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Uniform double in [lo, hi). */
static inline double t_rand_range(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(t_rand_u64(s) >> 11) * 0x1p-53;
}

/* Row-major index -> storage offset for (shape, stride). */
static inline int64_t t_offset_of(int ndim, const int64_t *shape, const int64_t *stride,
                                  int64_t flat)
{
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        off += flat % shape[d] * stride[d];
        flat /= shape[d];
    }
    return off;
}

#endif
