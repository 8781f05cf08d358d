/* src/core/philox.h - the counter-based random core shared by CPU and GPU code.
 *
 * tendo's random streams are Philox-4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC11) keyed by a 64-bit seed:
 * element i of a contiguous result is made from the block of counter i.
 * Everything here is a static inline function usable from C11 and from
 * CUDA (nvcc marks them __host__ __device__), so a kernel and the host
 * loops in src/core/rng.c compute the very same bits.
 *
 * Cross-device agreement:
 *   - the Philox words and the uniforms are integer arithmetic plus one
 *     exact conversion and one multiply by a power of two, so they are
 *     bit-identical on every device;
 *   - the normals go through logf/cosf (log/cos for double), which are
 *     not correctly rounded: CPU libm and CUDA's libdevice may differ in
 *     the last bits, so normals agree across devices only to within the
 *     rounding of logf/cosf (a few ulp).  Every other step is a single
 *     IEEE operation (a multiply by -2 is exact; sqrt is correctly
 *     rounded; no a*b+c is written, so nothing can be contracted to an
 *     FMA).  GPU code must not be built with --use_fast_math, which would
 *     swap logf/cosf for the much coarser intrinsics.
 */
#ifndef TENDO_SRC_PHILOX_H
#define TENDO_SRC_PHILOX_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* Forces inlining of the Philox block: gcc -O2 otherwise keeps it as an
 * out-of-line call, which costs a call per element and stops the caller's
 * loop from being vectorized.  (nvcc and clang accept the attribute too.) */
#if defined(__GNUC__) || defined(__clang__)
#define TENDO__ALWAYS_INLINE __attribute__((always_inline))
#else
#define TENDO__ALWAYS_INLINE
#endif

/* Philox-4x32 round multipliers and Weyl key increments (Random123). */
#define TENDO__PHILOX_M0 0xD2511F53u
#define TENDO__PHILOX_M1 0xCD9E8D57u
#define TENDO__PHILOX_W0 0x9E3779B9u
#define TENDO__PHILOX_W1 0xBB67AE85u

/* 2^-24 and 2^-53, exactly, in decimal: hexadecimal float literals
 * (0x1p-24f) are not C++ before C++17, and nvcc compiles .cu as C++. */
#define TENDO__TWO_M24F 5.9604644775390625e-8f
#define TENDO__TWO_M53 1.1102230246251565404236316680908203125e-16

/* Returns the low 32 bits of a*b and stores the high 32 bits in *hi. */
static inline TENDO_HD uint32_t tendo__mulhilo32(uint32_t a, uint32_t b,
                                                 uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* One Philox-4x32 round: updates the state x[4] in place under key k. */
static inline TENDO_HD TENDO__ALWAYS_INLINE void tendo__philox_round(uint32_t x[4],
                                                const uint32_t k[2])
{
    uint32_t hi0, hi1;
    uint32_t lo0 = tendo__mulhilo32(TENDO__PHILOX_M0, x[0], &hi0);
    uint32_t lo1 = tendo__mulhilo32(TENDO__PHILOX_M1, x[2], &hi1);
    uint32_t y0 = hi1 ^ x[1] ^ k[0];
    uint32_t y2 = hi0 ^ x[3] ^ k[1];
    x[0] = y0;
    x[1] = lo1;
    x[2] = y2;
    x[3] = lo0;
}

/* Advances the key k[2] to the next round's key (Weyl sequence). */
static inline TENDO_HD void tendo__philox_bump(uint32_t k[2])
{
    k[0] += TENDO__PHILOX_W0;
    k[1] += TENDO__PHILOX_W1;
}

/* Philox-4x32-10: stores in out[4] the 10-round block of counter ctr[4]
 * under key key[2].  out may not alias ctr or key. */
static inline TENDO_HD TENDO__ALWAYS_INLINE void tendo__philox4x32_10(const uint32_t ctr[4],
                                                 const uint32_t key[2],
                                                 uint32_t out[4])
{
    uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};

    /* Written out rather than looped so that -O2 sees straight-line code
     * it can inline into (and vectorize across) a caller's loop. */
    tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);
    tendo__philox_bump(k); tendo__philox_round(x, k);

    out[0] = x[0];
    out[1] = x[1];
    out[2] = x[2];
    out[3] = x[3];
}

/* tendo's stream: stores in out[4] the Philox block of element `index`
 * of the stream keyed by `seed` (counter = index in the low two words). */
static inline TENDO_HD TENDO__ALWAYS_INLINE void tendo__philox_draw(uint64_t seed, uint64_t index,
                                               uint32_t out[4])
{
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), 0u, 0u};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    tendo__philox4x32_10(ctr, key, out);
}

/* Returns a float uniform on [0,1) with 24 random bits: the top 24 bits of
 * x0 times 2^-24 (exact).  The shifted value is < 2^24, so converting it
 * as a signed int is exact and lets SSE2 vectorize the conversion. */
static inline TENDO_HD float tendo__uniform_f32_from(uint32_t x0)
{
    return (float)(int32_t)(x0 >> 8) * TENDO__TWO_M24F;
}

/* Returns a double uniform on [0,1) with 53 random bits: the top 53 bits of
 * the 64-bit word x0:x1 (x0 high) times 2^-53 (exact). */
static inline TENDO_HD double tendo__uniform_f64_from(uint32_t x0, uint32_t x1)
{
    uint64_t w = ((uint64_t)x0 << 32) | x1;
    return (double)(int64_t)(w >> 11) * TENDO__TWO_M53;
}

/* Returns a standard normal float by Box-Muller from two words: radius from
 * u1 = (top 24 bits of x0 + 1) * 2^-24 in (0,1] (so logf never sees 0), angle
 * from u2 = top 24 bits of x1 * 2^-24 in [0,1).  Finite: |z| <= ~5.77.
 * Agrees across devices to within the rounding of logf/cosf. */
static inline TENDO_HD float tendo__normal_f32_from(uint32_t x0, uint32_t x1)
{
    float u1 = (float)(int32_t)((x0 >> 8) + 1u) * TENDO__TWO_M24F;
    float u2 = (float)(int32_t)(x1 >> 8) * TENDO__TWO_M24F;
    float r = sqrtf(-2.0f * logf(u1));
    float c = cosf(6.2831853071795864769f * u2);
    return r * c;
}

/* Returns a standard normal double by Box-Muller from four words: u1 from
 * the top 53 bits of x0:x1, plus one, times 2^-53 (in (0,1]); u2 from the
 * top 53 bits of x2:x3 times 2^-53 (in [0,1)).  Finite: |z| <= ~8.57.
 * Agrees across devices to within the rounding of log/cos. */
static inline TENDO_HD double tendo__normal_f64_from(uint32_t x0, uint32_t x1,
                                                     uint32_t x2, uint32_t x3)
{
    uint64_t w1 = ((uint64_t)x0 << 32) | x1;
    uint64_t w2 = ((uint64_t)x2 << 32) | x3;
    double u1 = (double)(int64_t)((w1 >> 11) + 1u) * TENDO__TWO_M53;
    double u2 = (double)(int64_t)(w2 >> 11) * TENDO__TWO_M53;
    double r = sqrt(-2.0 * log(u1));
    double c = cos(6.2831853071795864769 * u2);
    return r * c;
}

#endif /* TENDO_SRC_PHILOX_H */
