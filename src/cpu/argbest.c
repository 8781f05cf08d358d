/* src/cpu/argbest.c - the largest or smallest of a dense run of floats or
 * doubles, and whether a NaN is among them: the value pass of argmax and
 * argmin (templates/cpu/reduce.c.j2 then looks for its first index).
 *
 * The AVX2 kernels keep four accumulators of max (min) and test two loads
 * at a time for NaN with one unordered compare; they are memory bound (an
 * AVX-512 version measured slower on Zen 4, so AVX-512 CPUs use them too).  Every path returns the same value for the same input except when
 * a NaN is present (then only *nan counts) or the best is a zero (then
 * +0 and -0 may differ; the caller compares with ==, so either does). */
#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define ARGBEST_X86 1
#include <immintrin.h>
#define TARGET_AVX2 __attribute__((target("avx2")))
#else
#define ARGBEST_X86 0
#endif

/* The scalar rule every path follows: replace the best when the new value
 * compares greater (smaller); a NaN never compares, so it only sets any. */
#define SCALAR_TAIL(v, i, n, largest, best, any)                             \
    for (; (i) < (n); (i)++) {                                               \
        if ((largest) ? (v)[i] > (best) : (v)[i] < (best))                   \
            (best) = (v)[i];                                                 \
        (any) |= (v)[i] != (v)[i];                                           \
    }

/* Portable: eight independent lanes per direction, which compilers
 * vectorize at the baseline width. */
#define PORTABLE_LOOP(CMP)                                                   \
    for (; i + 8 <= n; i += 8)                                               \
        for (int l = 0; l < 8; l++) {                                        \
            lane[l] = v[i + l] CMP lane[l] ? v[i + l] : lane[l];             \
            any |= v[i + l] != v[i + l];                                     \
        }
#define PORTABLE_BEST(name, T)                                               \
    static T name(const T *v, int64_t n, bool largest, bool *nan)            \
    {                                                                        \
        T lane[8];                                                           \
        int any = 0;                                                         \
        int64_t i = 0;                                                       \
                                                                             \
        for (int l = 0; l < 8; l++)                                          \
            lane[l] = v[0];                                                  \
        if (largest) {                                                       \
            PORTABLE_LOOP(>)                                                 \
        } else {                                                             \
            PORTABLE_LOOP(<)                                                 \
        }                                                                    \
        for (int l = 1; l < 8; l++)                                          \
            lane[0] = (largest ? lane[l] > lane[0] : lane[l] < lane[0]) ? lane[l] : lane[0]; \
        SCALAR_TAIL(v, i, n, largest, lane[0], any)                          \
        *nan = any != 0;                                                     \
        return lane[0];                                                      \
    }

PORTABLE_BEST(best_f32_portable, float)
PORTABLE_BEST(best_f64_portable, double)

#if ARGBEST_X86
/* An AVX2 kernel for T (float: W = 8 lanes, intrinsic suffix ps; double:
 * 4, pd): four loads per step, each into its own max (min) accumulator --
 * _mm256_max(x, acc) keeps acc unless x compares greater, the scalar rule
 * -- and two loads at a time tested for NaN with one unordered compare.
 * The lanes are then folded by the scalar rule and the tail done by it. */
#define AVX2_STEP(SFX, OP)                                                   \
    for (; i + 4 * W <= n; i += 4 * W) {                                     \
        x0 = _mm256_loadu_##SFX(v + i);                                      \
        x1 = _mm256_loadu_##SFX(v + i + W);                                  \
        x2 = _mm256_loadu_##SFX(v + i + 2 * W);                              \
        x3 = _mm256_loadu_##SFX(v + i + 3 * W);                              \
        a0 = _mm256_##OP##_##SFX(x0, a0);                                    \
        a1 = _mm256_##OP##_##SFX(x1, a1);                                    \
        a2 = _mm256_##OP##_##SFX(x2, a2);                                    \
        a3 = _mm256_##OP##_##SFX(x3, a3);                                    \
        bad = _mm256_or_##SFX(bad, _mm256_cmp_##SFX(x0, x1, _CMP_UNORD_Q));  \
        bad = _mm256_or_##SFX(bad, _mm256_cmp_##SFX(x2, x3, _CMP_UNORD_Q));  \
    }                                                                        \
    a0 = _mm256_##OP##_##SFX(_mm256_##OP##_##SFX(a0, a1), _mm256_##OP##_##SFX(a2, a3));

#define AVX2_BEST(name, T, V, W, SFX)                                        \
    TARGET_AVX2 static T name(const T *v, int64_t n, bool largest, bool *nan) \
    {                                                                        \
        V a0 = _mm256_set1_##SFX(v[0]), a1 = a0, a2 = a0, a3 = a0, x0, x1, x2, x3; \
        V bad = _mm256_setzero_##SFX();                                      \
        T lane[W], best;                                                     \
        int64_t i = 0;                                                       \
        int any = 0;                                                         \
                                                                             \
        if (largest) {                                                       \
            AVX2_STEP(SFX, max)                                              \
        } else {                                                             \
            AVX2_STEP(SFX, min)                                              \
        }                                                                    \
        _mm256_storeu_##SFX(lane, a0);                                       \
        best = lane[0];                                                      \
        for (int l = 1; l < W; l++)                                          \
            best = (largest ? lane[l] > best : lane[l] < best) ? lane[l] : best; \
        SCALAR_TAIL(v, i, n, largest, best, any)                             \
        *nan = _mm256_movemask_##SFX(bad) != 0 || any;                       \
        return best;                                                         \
    }

#define W 8
AVX2_BEST(best_f32_avx2, float, __m256, W, ps)
#undef W
#define W 4
AVX2_BEST(best_f64_avx2, double, __m256d, W, pd)
#undef W
#endif /* ARGBEST_X86 */

float tendo__best_f32(const float *v, int64_t n, bool largest, bool *nan)
{
#if ARGBEST_X86
    if (tendo__cpu_has(TENDO__CPU_AVX2))
        return best_f32_avx2(v, n, largest, nan);
#endif
    return best_f32_portable(v, n, largest, nan);
}

double tendo__best_f64(const double *v, int64_t n, bool largest, bool *nan)
{
#if ARGBEST_X86
    if (tendo__cpu_has(TENDO__CPU_AVX2))
        return best_f64_avx2(v, n, largest, nan);
#endif
    return best_f64_portable(v, n, largest, nan);
}
