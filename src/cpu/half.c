/* src/cpu/half.c - f16/bf16 conversions: the public scalar API, rounding from
 * double, and the bulk converters with run-time CPU dispatch.
 *
 * Semantics are those of src/cpu/half.h: IEEE 754 round to nearest even,
 * overflow to infinity, gradual underflow, quiet NaN keeping sign and top
 * payload bits.  On x86 the bulk converters use F16C for f16 and AVX2
 * integer arithmetic for bf16 when the CPU has both, or the same at 16
 * lanes with AVX-512, and AVX512_BF16's vcvtneps2bf16 for f32 -> bf16 where
 * it rounds as they do (everywhere but subnormals); they give the same bits
 * as the scalar code, which also handles the tails.
 */
#include "cpu/half.h"

#include "core/fp8.h"
#include "cpu/cpu.h"

#include "tendo/core.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TENDO__HALF_X86 1
#include <immintrin.h>
#else
#define TENDO__HALF_X86 0
#endif

/* ---- public scalar API ------------------------------------------------- */

/* tendo_<T>_to_f32 (exact), tendo_f32_to_<T> (nearest) and tendo_f64_to_<T>
 * (nearest, rounded once) over the bit converters of <T>. */
#define TENDO__SCALAR_API(T)                                                                              \
    TENDO_API float tendo_##T##_to_f32(tendo_##T h) { return tendo__##T##_bits_to_f32(h.bits); }         \
    TENDO_API tendo_##T tendo_f32_to_##T(float f) { return (tendo_##T){tendo__f32_to_##T##_bits(f)}; }  \
    TENDO_API tendo_##T tendo_f64_to_##T(double d) { return (tendo_##T){tendo__f64_to_##T##_bits(d)}; }

TENDO__SCALAR_API(f16)
TENDO__SCALAR_API(bf16)
TENDO__SCALAR_API(f8e4m3)
TENDO__SCALAR_API(f8e5m2)

/* ---- rounding from double ---------------------------------------------- */

/* x shifted right by s (1 <= s <= 62), rounded to nearest even. */
static uint64_t shift_rne(uint64_t x, unsigned s)
{
    return (x + (UINT64_C(1) << (s - 1)) - 1u + ((x >> s) & 1u)) >> s;
}

/* The bits of the binary16-like format with `ebits` exponent bits and
 * `mbits` mantissa bits (1 + ebits + mbits == 16) nearest to d.  d's 53-bit
 * significand is rounded once, straight to the target precision. */
static uint16_t f64_to_narrow_bits(double d, unsigned ebits, unsigned mbits)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t a = x & UINT64_C(0x7fffffffffffffff);
    unsigned drop = 52 - mbits;                   /* mantissa bits lost */
    unsigned bias = (1u << (ebits - 1)) - 1;
    uint64_t inf = (uint64_t)((1u << ebits) - 1) << mbits;
    uint64_t mant = a & ((UINT64_C(1) << 52) - 1);

    if (a > UINT64_C(0x7ff0000000000000)) {       /* NaN: quiet, top payload */
        uint64_t quiet = UINT64_C(1) << (mbits - 1);
        return (uint16_t)(sign | inf | quiet | (mant >> drop));
    }
    uint64_t exp = a >> 52;
    if (exp > 1023 - bias) {                      /* normal (or overflow) */
        /* Rebias; a carry out of the mantissa bumps the exponent, and
         * anything at or past the all-ones exponent is infinity. */
        uint64_t r = shift_rne(a - ((uint64_t)(1023 - bias) << 52), drop);
        return (uint16_t)(sign | (r < inf ? r : inf));
    }
    /* Subnormal result, in units of 2^(1 - bias - mbits): the significand
     * shifted right by 1076 - bias - mbits - exp, which is at least
     * drop + 1; past 54 the result is zero anyway (double subnormals). */
    uint64_t sig = mant | (exp ? UINT64_C(1) << 52 : 0);
    uint64_t s = 1076 - bias - mbits - exp;
    return (uint16_t)(sign | shift_rne(sig, s > 54 ? 54u : (unsigned)s));
}

/* The bits of the f16 nearest to d. */
uint16_t tendo__f64_to_f16_bits(double d) { return f64_to_narrow_bits(d, 5, 10); }

/* The bits of the bf16 nearest to d. */
uint16_t tendo__f64_to_bf16_bits(double d) { return f64_to_narrow_bits(d, 8, 7); }

/* ---- x86: AVX2 + F16C bulk loops --------------------------------------- */

#if TENDO__HALF_X86
#define TENDO__AVX2 __attribute__((target("avx2,f16c")))

/* Converts n floats to f16 with F16C, 32 then 8 at a time; returns how
 * many it converted (a multiple of 8). */
TENDO__AVX2 static int64_t f32_to_f16_avx2(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < 32; k += 8) {
            __m256 v = _mm256_loadu_ps(src + i + k);
            __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
            _mm_storeu_si128((__m128i *)(dst + i + k), h);
        }
    }
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    return i;
}

/* Converts n f16 to floats with F16C, 32 then 8 at a time; returns how
 * many it converted. */
TENDO__AVX2 static int64_t f16_to_f32_avx2(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < 32; k += 8) {
            __m128i h = _mm_loadu_si128((const __m128i *)(src + i + k));
            _mm256_storeu_ps(dst + i + k, _mm256_cvtph_ps(h));
        }
    }
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    return i;
}

/* The bf16 bits of 8 floats (given as bits), one per 32-bit lane: the top
 * halves rounded to nearest even, NaN lanes quieted instead. */
TENDO__AVX2 static inline __m256i bf16_round8(__m256i x)
{
    __m256i top = _mm256_srli_epi32(x, 16);
    __m256i lsb = _mm256_and_si256(top, _mm256_set1_epi32(1));
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    __m256i rounded = _mm256_srli_epi32(sum, 16);
    __m256i nan = _mm256_or_si256(top, _mm256_set1_epi32(0x0040));
    __m256i mag = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    __m256i is_nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, nan, is_nan);
}

/* 8 bf16 at p as the floats they are. */
TENDO__AVX2 static inline __m256 bf16_load8(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

/* The 8 bf16 in the low halves of r's lanes (bf16_round8's result), packed. */
TENDO__AVX2 static inline __m128i bf16_pack8(__m256i r)
{
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

/* Converts n floats to bf16, 16 then 8 at a time; returns how many it
 * converted (a multiple of 8). */
TENDO__AVX2 static int64_t f32_to_bf16_avx2(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = bf16_round8(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m256i b = bf16_round8(_mm256_loadu_si256((const __m256i *)(src + i + 8)));
        /* packus interleaves 128-bit halves: a0-3 b0-3 a4-7 b4-7. */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
        _mm256_storeu_si256((__m256i *)(dst + i), packed);
    }
    for (; i + 8 <= n; i += 8) {
        __m256i a = bf16_round8(_mm256_loadu_si256((const __m256i *)(src + i)));
        _mm_storeu_si128((__m128i *)(dst + i), bf16_pack8(a));
    }
    return i;
}

/* Converts n bf16 to floats, 32 then 8 at a time; returns how many it
 * converted. */
TENDO__AVX2 static int64_t bf16_to_f32_avx2(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 32; k += 8)
            _mm256_storeu_ps(dst + i + k, bf16_load8(src + i + k));
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, bf16_load8(src + i));
    return i;
}

/* ---- x86: AVX-512 bulk loops (the same bits, 16 lanes) ------------------- */

#define TENDO__AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* f32 -> f16, 16 at a time (vcvtps2ph, as F16C); returns how many. */
TENDO__AVX512 static int64_t f32_to_f16_avx512(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return i;
}

/* f16 -> f32, 16 at a time; returns how many. */
TENDO__AVX512 static int64_t f16_to_f32_avx512(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    return i;
}

/* As bf16_round8, 16 lanes (vcvtneps2bf16 would flush subnormals). */
TENDO__AVX512 static inline __m512i bf16_round16(__m512i x)
{
    __m512i top = _mm512_srli_epi32(x, 16);
    __m512i lsb = _mm512_and_si512(top, _mm512_set1_epi32(1));
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(rounded, nan, top, _mm512_set1_epi32(0x0040));
}

/* ---- x86: AVX512_BF16's conversion, where it gives the same bits ---------- */

#define TENDO__AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* Whether v holds a subnormal: vcvtneps2bf16 rounds every other float
 * exactly as bf16_round16 does (NaN quieted the same way; checked over all
 * 2^32 patterns on Zen 4, and as Intel's pseudocode reads), but flushes
 * subnormals to zero, so a vector with one takes bf16_round16. */
TENDO__AVX512BF16 static inline bool has_subnormal(__m512 v) { return _mm512_fpclass_ps_mask(v, 0x20) != 0; }

/* f32 -> bf16, 16 at a time; returns how many. */
TENDO__AVX512BF16 static int64_t f32_to_bf16_avx512bf16(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        __m256i r = has_subnormal(v) ? _mm512_cvtepi32_epi16(bf16_round16(_mm512_castps_si512(v)))
                                     : (__m256i)_mm512_cvtneps_pbh(v);
        _mm256_storeu_si256((__m256i *)(dst + i), r);
    }
    return i;
}

/* f32 -> bf16, 16 at a time (vpmovdw packs the rounded halves); returns
 * how many. */
TENDO__AVX512 static int64_t f32_to_bf16_avx512(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm512_cvtepi32_epi16(bf16_round16(_mm512_loadu_si512((const void *)(src + i)))));
    return i;
}

/* bf16 -> f32, 16 at a time; returns how many. */
TENDO__AVX512 static int64_t bf16_to_f32_avx512(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_si512((void *)(dst + i),
                            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i))), 16));
    return i;
}

/* ---- x86: pairs added and rounded in one pass (tendo__<T>_add_n) -------- */

/* The sums (a[k] + b[k]) * scale of 32 bf16 pairs, in float, as two
 * halves: each 32-bit lane holds two bf16, the even one widened by a
 * shift, the odd one by masking off the even, with no shuffle across lanes
 * (vpmovzxwd and vpmovdw cost twice as much here).  A scale of 1 is not
 * multiplied (x * 1 is x: the same bits). */
TENDO__AVX512 static inline void bf16_sums32(const uint16_t *a, const uint16_t *b, __m512 scale, bool times,
                                             __m512 *even, __m512 *odd)
{
    const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
    __m512i x = _mm512_loadu_si512((const void *)a), y = _mm512_loadu_si512((const void *)b);

    *even = _mm512_add_ps(_mm512_castsi512_ps(_mm512_slli_epi32(x, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(y, 16)));
    *odd = _mm512_add_ps(_mm512_castsi512_ps(_mm512_and_si512(x, high)), _mm512_castsi512_ps(_mm512_and_si512(y, high)));
    if (times) {
        *even = _mm512_mul_ps(*even, scale);
        *odd = _mm512_mul_ps(*odd, scale);
    }
}

/* bf16_sums32's halves rounded (bf16_round16) and put back in their lanes. */
TENDO__AVX512 static inline __m512i bf16_join_rounded(__m512 even, __m512 odd)
{
    return _mm512_or_si512(bf16_round16(_mm512_castps_si512(even)),
                           _mm512_slli_epi32(bf16_round16(_mm512_castps_si512(odd)), 16));
}

/* out = (a + b) * scale, 32 at a time; returns how many. */
TENDO__AVX512 static int64_t bf16_add_avx512(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n,
                                             float scale)
{
    const __m512 s = _mm512_set1_ps(scale);
    const bool times = scale != 1.0f;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 even, odd;
        bf16_sums32(a + i, b + i, s, times, &even, &odd);
        _mm512_storeu_si512((void *)(out + i), bf16_join_rounded(even, odd));
    }
    return i;
}

/* As bf16_add_avx512, the halves rounded by vcvtne2ps2bf16 (which lays
 * them end to end: vpermw interleaves them again) where none is
 * subnormal. */
TENDO__AVX512BF16 static int64_t bf16_add_avx512bf16(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n,
                                                     float scale)
{
    const __m512 s = _mm512_set1_ps(scale);
    const __m512i weave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                           21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const bool times = scale != 1.0f;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 even, odd;
        __m512i r;
        bf16_sums32(a + i, b + i, s, times, &even, &odd);
        if (has_subnormal(even) || has_subnormal(odd))
            r = bf16_join_rounded(even, odd);
        else
            r = _mm512_permutexvar_epi16(weave, (__m512i)_mm512_cvtne2ps_pbh(odd, even));
        _mm512_storeu_si512((void *)(out + i), r);
    }
    return i;
}

TENDO__AVX512 static int64_t f16_add_avx512(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n,
                                            float scale)
{
    const __m512 s = _mm512_set1_ps(scale);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512 y = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + i)));
        __m512 r = _mm512_mul_ps(_mm512_add_ps(x, y), s);
        _mm256_storeu_si256((__m256i *)(out + i), _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}

TENDO__AVX2 static int64_t bf16_add_avx2(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale)
{
    const __m256 s = _mm256_set1_ps(scale);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 sum = _mm256_mul_ps(_mm256_add_ps(bf16_load8(a + i), bf16_load8(b + i)), s);
        _mm_storeu_si128((__m128i *)(out + i), bf16_pack8(bf16_round8(_mm256_castps_si256(sum))));
    }
    return i;
}

TENDO__AVX2 static int64_t f16_add_avx2(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale)
{
    const __m256 s = _mm256_set1_ps(scale);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256 y = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256 r = _mm256_mul_ps(_mm256_add_ps(x, y), s);
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
#endif /* TENDO__HALF_X86 */

/* ---- dispatch ---------------------------------------------------------- */

#if TENDO__HALF_X86
/* True when the bulk converters should take the AVX2/F16C loops. */
static int use_avx2(void) { return tendo__cpu_has(TENDO__CPU_AVX2 | TENDO__CPU_F16C); }
/* True when they should take the AVX-512 ones (then the AVX2 ones finish
 * a tail of 8 or more). */
static int use_avx512(void) { return tendo__cpu_has(TENDO__CPU_AVX512); }
/* True when the bf16 ones should take AVX512_BF16's conversion. */
static int use_avx512bf16(void) { return tendo__cpu_has(TENDO__CPU_AVX512 | TENDO__CPU_AVX512BF16); }
#endif /* TENDO__HALF_X86 */

/* ---- bulk converters ----------------------------------------------------- */

/* Converts n floats to f16 bits. */
void tendo__f32_to_f16_n(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
#if TENDO__HALF_X86
    if (n >= 16 && use_avx512())
        i = f32_to_f16_avx512(src, dst, n);
    if (n - i >= 8 && use_avx2())
        i += f32_to_f16_avx2(src + i, dst + i, n - i);
#endif
    for (; i < n; i++)
        dst[i] = tendo__f32_to_f16_bits(src[i]);
}

/* Converts n f16 bits to floats. */
void tendo__f16_to_f32_n(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
#if TENDO__HALF_X86
    if (n >= 16 && use_avx512())
        i = f16_to_f32_avx512(src, dst, n);
    if (n - i >= 8 && use_avx2())
        i += f16_to_f32_avx2(src + i, dst + i, n - i);
#endif
    for (; i < n; i++)
        dst[i] = tendo__f16_bits_to_f32(src[i]);
}

/* Converts n floats to bf16 bits. */
void tendo__f32_to_bf16_n(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
#if TENDO__HALF_X86
    if (n >= 16 && use_avx512bf16())
        i = f32_to_bf16_avx512bf16(src, dst, n);
    else if (n >= 16 && use_avx512())
        i = f32_to_bf16_avx512(src, dst, n);
    if (n - i >= 8 && use_avx2())
        i += f32_to_bf16_avx2(src + i, dst + i, n - i);
#endif
    for (; i < n; i++)
        dst[i] = tendo__f32_to_bf16_bits(src[i]);
}

/* Converts n bf16 bits to floats. */
void tendo__bf16_to_f32_n(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
#if TENDO__HALF_X86
    if (n >= 16 && use_avx512())
        i = bf16_to_f32_avx512(src, dst, n);
    if (n - i >= 8 && use_avx2())
        i += bf16_to_f32_avx2(src + i, dst + i, n - i);
#endif
    for (; i < n; i++)
        dst[i] = tendo__bf16_bits_to_f32(src[i]);
}

/* tendo__<T>_add_n (half.h): out[i] = (a[i] + b[i]) * scale, computed in
 * float and rounded once, the vector loops first (T_add_vector: how many
 * they did) and the scalar tail. */
#if TENDO__HALF_X86
static int64_t f16_add_vector(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale)
{
    int64_t i = use_avx512() ? f16_add_avx512(a, b, out, n, scale) : 0;
    if (n - i >= 8 && use_avx2())
        i += f16_add_avx2(a + i, b + i, out + i, n - i, scale);
    return i;
}

static int64_t bf16_add_vector(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale)
{
    int64_t i = use_avx512bf16() ? bf16_add_avx512bf16(a, b, out, n, scale)
                : use_avx512()   ? bf16_add_avx512(a, b, out, n, scale)
                                 : 0;
    if (n - i >= 8 && use_avx2())
        i += bf16_add_avx2(a + i, b + i, out + i, n - i, scale);
    return i;
}
#else
#define f16_add_vector(a, b, out, n, scale) 0
#define bf16_add_vector(a, b, out, n, scale) 0
#endif
#define TENDO__ADD_N(T)                                                                            \
    void tendo__##T##_add_n(const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t n, float scale) \
    {                                                                                              \
        for (int64_t i = T##_add_vector(a, b, out, n, scale); i < n; i++) {                        \
            float sum = tendo__##T##_bits_to_f32(a[i]) + tendo__##T##_bits_to_f32(b[i]);             \
            out[i] = tendo__f32_to_##T##_bits(sum * scale);                                        \
        }                                                                                          \
    }

TENDO__ADD_N(f16)
TENDO__ADD_N(bf16)

/* ---- FP8 bulk converters ------------------------------------------------- */

/* The f32 bits of every FP8 pattern, as integer constant expressions, so
 * the widening tables are built by the compiler (nothing to initialise at
 * run time, nothing to race on).  They mirror tendo__f8e4m3_bits_to_f32
 * and tendo__f8e5m2_bits_to_f32; t/t-fp8 checks that they agree. */

/* The exponent of the top bit of a subnormal mantissa em (1..7). */
#define FP8_TOP(em) ((em) >= 4u ? 2u : (em) >= 2u ? 1u : 0u)
/* The f32 bits of em * 2^(base - 127) for a mantissa em in 0..7. */
#define FP8_SUB(em, base)                                                                                  \
    ((em) == 0u ? 0u : (((base) + FP8_TOP(em)) << 23) | (((uint32_t)(em) << (23u - FP8_TOP(em))) & 0x7fffffu))
#define E4M3_MAG(em)                                                                                       \
    ((em) == 0x7fu ? 0x7fc00000u : (em) >= 0x08u ? ((uint32_t)(em) << 20) + (120u << 23) : FP8_SUB(em, 118u))
#define E5M2_MAG(em)                                                                                       \
    ((em) > 0x7cu    ? 0x7fc00000u                                                                         \
     : (em) == 0x7cu ? 0x7f800000u                                                                         \
     : (em) >= 0x04u ? ((uint32_t)(em) << 21) + (112u << 23)                                              \
                     : FP8_SUB(em, 111u))
#define E4M3_F32(b) ((((uint32_t)(b) & 0x80u) << 24) | E4M3_MAG((uint32_t)(b) & 0x7fu))
#define E5M2_F32(b) ((((uint32_t)(b) & 0x80u) << 24) | E5M2_MAG((uint32_t)(b) & 0x7fu))
#define FP8_ROW(f, b)                                                                                      \
    f((b) + 0u), f((b) + 1u), f((b) + 2u), f((b) + 3u), f((b) + 4u), f((b) + 5u), f((b) + 6u), f((b) + 7u), \
        f((b) + 8u), f((b) + 9u), f((b) + 10u), f((b) + 11u), f((b) + 12u), f((b) + 13u), f((b) + 14u),   \
        f((b) + 15u)
#define FP8_ALL(f)                                                                                         \
    FP8_ROW(f, 0x00u), FP8_ROW(f, 0x10u), FP8_ROW(f, 0x20u), FP8_ROW(f, 0x30u), FP8_ROW(f, 0x40u),         \
        FP8_ROW(f, 0x50u), FP8_ROW(f, 0x60u), FP8_ROW(f, 0x70u), FP8_ROW(f, 0x80u), FP8_ROW(f, 0x90u),     \
        FP8_ROW(f, 0xa0u), FP8_ROW(f, 0xb0u), FP8_ROW(f, 0xc0u), FP8_ROW(f, 0xd0u), FP8_ROW(f, 0xe0u),     \
        FP8_ROW(f, 0xf0u)

/* Initialised through the integer member, read through the float one
 * (C11 6.5.2.3: a union member read reinterprets the stored bytes). */
typedef union {
    uint32_t bits[256];
    float f[256];
} fp8_table;

static const fp8_table e4m3_f32 = {{FP8_ALL(E4M3_F32)}};
static const fp8_table e5m2_f32 = {{FP8_ALL(E5M2_F32)}};

/* Converts n f8e4m3 bits to floats (a table lookup). */
void tendo__f8e4m3_to_f32_n(const uint8_t *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = e4m3_f32.f[src[i]];
}

/* Converts n f8e5m2 bits to floats (a table lookup). */
void tendo__f8e5m2_to_f32_n(const uint8_t *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = e5m2_f32.f[src[i]];
}

/* Converts n floats to f8e4m3 bits.  The scalar code is branch-free:
 * gcc -O3 vectorizes this loop (gcc -O2's "very cheap" model does not, as
 * the trip count is unknown; blocking it did not help). */
void tendo__f32_to_f8e4m3_n(const float *src, uint8_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = tendo__f32_to_f8e4m3_bits(src[i]);
}

/* Converts n floats to f8e5m2 bits. */
void tendo__f32_to_f8e5m2_n(const float *src, uint8_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = tendo__f32_to_f8e5m2_bits(src[i]);
}
