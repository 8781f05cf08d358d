/* src/cpu/half.h - internal f16/bf16 <-> f32/f64 conversions on raw bits.
 *
 * The scalar converters are static inline so element-wise kernels can use
 * them in their inner loops; they do not depend on the FPU rounding mode
 * or FTZ/DAZ and match IEEE 754 hardware (F16C) bit for bit: round to
 * nearest even, overflow to infinity, gradual underflow, NaN kept as a
 * quiet NaN with its sign and top payload bits (f16 -> f32 quiets a
 * signaling NaN like F16C; bf16 -> f32 is a plain shift, bits << 16).
 * The bulk *_n converters in half.c dispatch at run time to AVX2/F16C code
 * on x86 and fall back to these scalar functions elsewhere.
 */
#ifndef TENDO_SRC_HALF_H
#define TENDO_SRC_HALF_H

#include <stdint.h>
#include <string.h>

/* The bits of f. */
static inline uint32_t tendo__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The float whose bits are u. */
static inline float tendo__bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The f32 value of the f16 with bits h (exact). */
static inline float tendo__f16_bits_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    /* Normal: move exponent and mantissa into place, rebias 15 -> 127. */
    uint32_t normal = (em << 13) + 0x38000000u;
    /* Inf/NaN: the exponent field becomes all ones, mantissa kept; a NaN
     * also gets the quiet bit, as F16C and IEEE 754 conversion do. */
    uint32_t quiet = em > 0x7c00u ? 0x00400000u : 0u;
    uint32_t special = (normal + 0x38000000u) | quiet;
    /* Subnormal (and zero): em * 2^-24, exact and a normal float. */
    uint32_t sub = tendo__f32_bits((float)em * 0x1p-24f);
    uint32_t mag = em >= 0x7c00u ? special : em >= 0x0400u ? normal : sub;
    return tendo__bits_f32(sign | mag);
}

/* The bits of the f16 nearest to f (ties to even, see the file comment). */
static inline uint16_t tendo__f32_to_f16_bits(float f)
{
    uint32_t x = tendo__f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t a = x & 0x7fffffffu;
    /* NaN: quiet bit set, top 10 payload bits kept. */
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    /* Normal result: rebias 127 -> 15, round off 13 bits to nearest even;
     * a carry out of the mantissa correctly bumps the exponent. */
    uint32_t n = a - 0x38000000u;
    uint32_t normal = (n + 0x0fffu + ((n >> 13) & 1u)) >> 13;
    /* Subnormal result (exponent e <= 112): the significand shifted right
     * by 126 - e, capped at 25, which already rounds to zero.  e is
     * clamped so the shift stays defined when this lane is not chosen. */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x007fffffu) | 0x00800000u;
    uint32_t s = 126u - (e > 112u ? 112u : e < 101u ? 101u : e);
    uint32_t sub = (m + (1u << (s - 1)) - 1u + ((m >> s) & 1u)) >> s;
    uint32_t mag = a > 0x7f800000u   ? nan
                 : a >= 0x477ff000u ? 0x7c00u /* |f| >= 65520: infinity */
                 : a >= 0x38800000u ? normal  /* |f| >= 2^-14 */
                                    : sub;
    return (uint16_t)(sign | mag);
}

/* The f32 value of the bf16 with bits h (exact). */
static inline float tendo__bf16_bits_to_f32(uint16_t h)
{
    return tendo__bits_f32((uint32_t)h << 16);
}

/* The bits of the bf16 nearest to f: the top 16 bits of f rounded to
 * nearest even; NaN keeps its top bits and gets the quiet bit. */
static inline uint16_t tendo__f32_to_bf16_bits(float f)
{
    uint32_t x = tendo__f32_bits(f);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t nan = (x >> 16) | 0x0040u;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/* The bits of the f16 nearest to d, rounded once from d's bits. */
uint16_t tendo__f64_to_f16_bits(double d);
/* The bits of the bf16 nearest to d, rounded once from d's bits. */
uint16_t tendo__f64_to_bf16_bits(double d);

/* Bulk contiguous conversions of n elements (n <= 0 does nothing); src and
 * dst need only their natural alignment and must not overlap. */
void tendo__f32_to_f16_n(const float *src, uint16_t *dst, int64_t n);
void tendo__f16_to_f32_n(const uint16_t *src, float *dst, int64_t n);
void tendo__f32_to_bf16_n(const float *src, uint16_t *dst, int64_t n);
void tendo__bf16_to_f32_n(const uint16_t *src, float *dst, int64_t n);
/* out[i] = (a[i] + b[i]) * scale for n dense elements, computed in float
 * and rounded once (scale 1: a sum; 0.5: the mean of two); out may be a or
 * b.  a is the first operand: of two NaNs, its payload is kept. */
void tendo__f16_add_n(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale);
void tendo__bf16_add_n(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale);
/* The same for the FP8 formats (scalar semantics in src/core/fp8.h). */
void tendo__f32_to_f8e4m3_n(const float *src, uint8_t *dst, int64_t n);
void tendo__f8e4m3_to_f32_n(const uint8_t *src, float *dst, int64_t n);
void tendo__f32_to_f8e5m2_n(const float *src, uint8_t *dst, int64_t n);
void tendo__f8e5m2_to_f32_n(const uint8_t *src, float *dst, int64_t n);

#endif /* TENDO_SRC_HALF_H */
