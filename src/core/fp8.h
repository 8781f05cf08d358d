/* src/core/fp8.h - FP8 <-> f32/f64 conversions on raw bits, shared by the
 * CPU code and the CUDA kernels (every function is static inline and
 * TENDO_HD, so nvcc compiles it for host and device alike).
 *
 * The two formats are the OCP 8-bit floats:
 *   - f8e4m3 ("E4M3FN"): 1 sign, 4 exponent (bias 7), 3 mantissa bits;
 *     largest finite 448 (0x7e), smallest subnormal 2^-9; no infinities;
 *     the one NaN per sign is S.1111.111 (0x7f, 0xff).
 *   - f8e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like:
 *     largest finite 57344 (0x7b), smallest subnormal 2^-16, infinity
 *     0x7c/0xfc, NaNs 0x7d-0x7f/0xfd-0xff.
 *
 * The semantics are those of Python's ml_dtypes (float8_e4m3fn,
 * float8_e5m2), checked bit for bit by t/interop/t-fp8-mldtypes.sh:
 *   - narrowing rounds to nearest, ties to even, keeping subnormals;
 *   - f8e4m3: whatever rounds past 448 (any |x| > 464; 464 itself ties
 *     to 448) becomes NaN, and so do +-infinity: the sign is kept;
 *   - f8e5m2: whatever rounds past 57344 (|x| >= 61440) becomes infinity;
 *   - NaN in gives the canonical NaN out, sign kept, payload dropped:
 *     0x7f/0xff for f8e4m3, 0x7e/0xfe for f8e5m2;
 *   - widening is exact; every NaN widens to the quiet NaN 0x7fc00000
 *     with its sign (payload dropped), so the e5m2 NaNs 0x7d and 0x7f
 *     come back as 0x7e.
 * The f64 converters round once, straight from the double's 53 bits.
 * (ml_dtypes' scalar constructor float8_e4m3fn(x) does too; its numpy
 * cast array.astype(float8_e4m3fn) from float64 goes through float32 and
 * can round twice - tendo follows the single rounding.)
 *
 * Everything is integer arithmetic on the bits plus, when widening a
 * subnormal, one exact multiply by a power of two whose result is a normal
 * float: nothing depends on the FPU rounding mode or on FTZ/DAZ.
 */
#ifndef TENDO_SRC_FP8_H
#define TENDO_SRC_FP8_H

#include <stdint.h>
#include <string.h>

#include "core/hd.h"

/* ---- bits <-> floating point ---------------------------------------------- */

/* The bits of f. */
TENDO_HD static inline uint32_t tendo__fp8_f32_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

/* The float whose bits are u. */
TENDO_HD static inline float tendo__fp8_bits_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* The bits of d. */
TENDO_HD static inline uint64_t tendo__fp8_f64_bits(double d)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
#endif
}

/* ---- generic narrowing ------------------------------------------------------ */

/* x shifted right by s (1 <= s <= 31), rounded to nearest, ties to even. */
TENDO_HD static inline uint32_t tendo__fp8_rne32(uint32_t x, uint32_t s)
{
    return (x + (UINT32_C(1) << (s - 1)) - 1u + ((x >> s) & 1u)) >> s;
}

/* x shifted right by s (1 <= s <= 63), rounded to nearest, ties to even. */
TENDO_HD static inline uint64_t tendo__fp8_rne64(uint64_t x, uint32_t s)
{
    return (x + (UINT64_C(1) << (s - 1)) - 1u + ((x >> s) & 1u)) >> s;
}

/* The fp8 bits nearest to f, for a format with `mbits` mantissa bits and
 * exponent bias `bias`.  A magnitude that rounds to `top` or beyond becomes
 * `top` (e4m3: the NaN 0x7f; e5m2: infinity 0x7c); an infinite f gives
 * `inf` and a NaN gives `nan`.  Every lane is computed and one is chosen,
 * with each shift kept in range, so the code is branch-free. */
TENDO_HD static inline uint8_t tendo__f32_to_fp8(float f, uint32_t mbits, uint32_t bias, uint32_t top,
                                                 uint32_t inf, uint32_t nan)
{
    uint32_t x = tendo__fp8_f32_bits(f);
    uint32_t sign = (x >> 24) & 0x80u;
    uint32_t a = x & 0x7fffffffu;
    /* Normal result: rebias 127 -> bias and round off 23 - mbits bits; a
     * carry out of the mantissa bumps the exponent, and anything that
     * reaches `top` (past the largest finite value) saturates there. */
    uint32_t emin = 128u - bias;                  /* f32 exponent of the fp8 2^(1-bias) */
    uint32_t r = tendo__fp8_rne32(a - ((emin - 1u) << 23), 23u - mbits);
    uint32_t normal = r < top ? r : top;
    /* Subnormal result, in units of 2^(1 - bias - mbits): f is m * 2^(e-150)
     * with the hidden bit in m, so the result is m shifted right by
     * emin + 23 - mbits - e, at least 24 - mbits.  At 25 it is zero
     * already, so e is clamped to keep the shift in range; this covers
     * f32 subnormals too, whose wrongly set hidden bit is shifted out. */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x007fffffu) | 0x00800000u;
    uint32_t ec = e >= emin ? emin - 1u : e + 2u + mbits < emin ? emin - 2u - mbits : e;
    uint32_t sub = tendo__fp8_rne32(m, emin + 23u - mbits - ec);
    uint32_t mag = a > 0x7f800000u    ? nan
                 : a == 0x7f800000u   ? inf
                 : e >= emin          ? normal
                                      : sub;
    return (uint8_t)(sign | mag);
}

/* The fp8 bits nearest to d, rounded once from d's 53-bit significand;
 * parameters as for tendo__f32_to_fp8. */
TENDO_HD static inline uint8_t tendo__f64_to_fp8(double d, uint32_t mbits, uint32_t bias, uint32_t top,
                                                 uint32_t inf, uint32_t nan)
{
    uint64_t x = tendo__fp8_f64_bits(d);
    uint32_t sign = (uint32_t)(x >> 56) & 0x80u;
    uint64_t a = x & UINT64_C(0x7fffffffffffffff);
    uint64_t emin = 1024u - bias;                 /* f64 exponent of the fp8 2^(1-bias) */
    uint64_t r = tendo__fp8_rne64(a - ((emin - 1u) << 52), 52u - mbits);
    uint32_t normal = (uint32_t)(r < top ? r : top);
    /* Subnormal result: d is m * 2^(e-1075), so the shift is
     * emin + 52 - mbits - e, at least 53 - mbits, clamped at 54 where the
     * result is zero anyway. */
    uint64_t e = a >> 52;
    uint64_t m = (a & UINT64_C(0x000fffffffffffff)) | UINT64_C(0x0010000000000000);
    uint64_t ec = e >= emin ? emin - 1u : e + 2u + mbits < emin ? emin - 2u - mbits : e;
    uint32_t sub = (uint32_t)tendo__fp8_rne64(m, (uint32_t)(emin + 52u - mbits - ec));
    uint32_t mag = a > UINT64_C(0x7ff0000000000000)  ? nan
                 : a == UINT64_C(0x7ff0000000000000) ? inf
                 : e >= emin                         ? normal
                                                     : sub;
    return (uint8_t)(sign | mag);
}

/* ---- f8e4m3 ---------------------------------------------------------------- */

/* The f32 value of the f8e4m3 with bits b (exact; 0x7f/0xff give the quiet
 * NaN 0x7fc00000 with b's sign). */
TENDO_HD static inline float tendo__f8e4m3_bits_to_f32(uint8_t b)
{
    uint32_t sign = (uint32_t)(b & 0x80u) << 24;
    uint32_t em = b & 0x7fu;
    /* Normal: exponent and mantissa into place, rebias 7 -> 127. */
    uint32_t normal = (em << 20) + (UINT32_C(120) << 23);
    /* Subnormal (and zero): em * 2^-9, exact and a normal float. */
    uint32_t sub = tendo__fp8_f32_bits((float)em * 0x1p-9f);
    uint32_t mag = em == 0x7fu ? 0x7fc00000u : em >= 0x08u ? normal : sub;
    return tendo__fp8_bits_f32(sign | mag);
}

/* The bits of the f8e4m3 nearest to f (see the file comment: past 448
 * and +-infinity give NaN, sign kept). */
TENDO_HD static inline uint8_t tendo__f32_to_f8e4m3_bits(float f)
{
    return tendo__f32_to_fp8(f, 3u, 7u, 0x7fu, 0x7fu, 0x7fu);
}

/* The bits of the f8e4m3 nearest to d, rounded once. */
TENDO_HD static inline uint8_t tendo__f64_to_f8e4m3_bits(double d)
{
    return tendo__f64_to_fp8(d, 3u, 7u, 0x7fu, 0x7fu, 0x7fu);
}

/* ---- f8e5m2 ---------------------------------------------------------------- */

/* The f32 value of the f8e5m2 with bits b (exact; every NaN gives the
 * quiet NaN 0x7fc00000 with b's sign). */
TENDO_HD static inline float tendo__f8e5m2_bits_to_f32(uint8_t b)
{
    uint32_t sign = (uint32_t)(b & 0x80u) << 24;
    uint32_t em = b & 0x7fu;
    /* Normal: rebias 15 -> 127; infinity is the all-ones f32 exponent. */
    uint32_t normal = (em << 21) + (UINT32_C(112) << 23);
    /* Subnormal (and zero): em * 2^-16, exact and a normal float. */
    uint32_t sub = tendo__fp8_f32_bits((float)em * 0x1p-16f);
    uint32_t mag = em > 0x7cu ? 0x7fc00000u : em == 0x7cu ? 0x7f800000u : em >= 0x04u ? normal : sub;
    return tendo__fp8_bits_f32(sign | mag);
}

/* The bits of the f8e5m2 nearest to f (past 57344 gives infinity). */
TENDO_HD static inline uint8_t tendo__f32_to_f8e5m2_bits(float f)
{
    return tendo__f32_to_fp8(f, 2u, 15u, 0x7cu, 0x7cu, 0x7eu);
}

/* The bits of the f8e5m2 nearest to d, rounded once. */
TENDO_HD static inline uint8_t tendo__f64_to_f8e5m2_bits(double d)
{
    return tendo__f64_to_fp8(d, 2u, 15u, 0x7cu, 0x7cu, 0x7eu);
}

/* ---- integers ---------------------------------------------------------------- */

/* u as a double rounded to odd: u truncated to 53 significant bits, and
 * the lowest kept bit set when anything nonzero was cut off.  Rounding
 * that double once more, to nearest even in any format with at most 51
 * significand bits (f32, f16, bf16, fp8), gives the same result as
 * rounding u once (Boldo & Melquiond, "Emulation of FMA and correctly
 * rounded sums: proved algorithms using rounding to odd", IEEE TC 2008):
 * the two guard bits keep every tie a tie and every non-tie off the
 * midpoint.  The truncated value has at most 53 significant bits, so the
 * final int -> double conversion is exact in any rounding mode. */
TENDO_HD static inline double tendo__u64_to_f64_odd(uint64_t u)
{
    /* v: ones from u's top bit down; v >> 53 covers the bits below the
     * top 53 (none when u < 2^53). */
    uint64_t v = u;
    v |= v >> 1;
    v |= v >> 2;
    v |= v >> 4;
    v |= v >> 8;
    v |= v >> 16;
    v |= v >> 32;
    uint64_t cut = v >> 53;
    uint64_t odd = (u & cut) != 0 ? cut + 1u : 0u;
    return (double)((u & ~cut) | odd);
}

/* The same for a signed x: its magnitude rounded to odd, then the sign. */
TENDO_HD static inline double tendo__i64_to_f64_odd(int64_t x)
{
    double mag = tendo__u64_to_f64_odd(x < 0 ? UINT64_C(0) - (uint64_t)x : (uint64_t)x);
    return x < 0 ? -mag : mag;
}

#endif /* TENDO_SRC_FP8_H */
