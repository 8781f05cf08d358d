/* t/drivers/t-half.c - f16/bf16 conversions (src/cpu/half.h, src/cpu/half.c).
 *
 * Every 16-bit pattern is widened and narrowed back; narrowing is checked
 * against F16C hardware (where the CPU has it) and against an exact
 * reference that picks the nearest of all 16-bit values by comparing with
 * midpoints in double; bf16 narrowing also against a 64-bit integer
 * reference.  The bulk *_n converters must equal the scalar ones bit for
 * bit, on odd lengths and unaligned pointers too.
 */
#include "cpu/half.h"
#include "tap.h"
#include "tendo/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM 4000000
#define N_RANDOM_F64 2000000

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

/* The next value of a fixed-seed xorshift64* generator. */
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

/* The float with bits u. */
static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The bits of f. */
static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The bits of d. */
static uint64_t bits64_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The double with bits u. */
static double f64_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Allocates n elements of size sz or bails out. */
static void *xmalloc(size_t n, size_t sz)
{
    void *p = malloc(n * sz + 64);
    if (!p)
        bail("out of memory");
    return p;
}

/* Number of i < n with want[i] != seen[i]; the first few are shown with
 * their input bits in[i]. */
static int64_t count_diff(const char *what, const uint64_t *in, const uint16_t *want,
                          const uint16_t *seen, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (want[i] == seen[i])
            continue;
        if (bad++ < 4)
            diag("%s: input 0x%" PRIx64 ": wanted 0x%04x, got 0x%04x", what, in[i],
                 (unsigned)want[i], (unsigned)seen[i]);
    }
    return bad;
}

/* ---- F16C hardware reference ----------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86 1

/* True when the CPU has F16C and the OS saves AVX state (cpuid, since
 * clang before 16 does not know __builtin_cpu_supports("f16c")). */
static int have_f16c(void)
{
    unsigned eax, ebx, ecx, edx;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
           (ecx & bit_F16C);
}

/* dst[i] = F16C's scalar f32 -> f16 (round to nearest even) of src[i]. */
__attribute__((target("f16c"))) static void hw_f32_to_f16_n(const float *src, uint16_t *dst,
                                                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (uint16_t)_cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

/* dst[i] = F16C's scalar f16 -> f32 of src[i]. */
__attribute__((target("f16c"))) static void hw_f16_to_f32_n(const uint16_t *src, float *dst,
                                                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = _cvtsh_ss(src[i]);
}
#else
#define HAVE_X86 0
static int have_f16c(void) { return 0; }
static void hw_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n)
{
    (void)src, (void)dst, (void)n;
}
static void hw_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n)
{
    (void)src, (void)dst, (void)n;
}
#endif

/* ---- exact references ---------------------------------------------------- */

/* The value of f16 bits h, decoded with ldexp (NaN for NaN patterns);
 * the infinity pattern decodes as 2^16, the next power past the range,
 * unless real_inf. */
static double decode_f16(uint16_t h, int real_inf)
{
    int e = (h >> 10) & 31, m = h & 0x3ff;
    double v;
    if (e == 31 && (m || real_inf))
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -24);
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The value of bf16 bits h, decoded with ldexp like decode_f16 (the
 * infinity pattern is 2^128 unless real_inf). */
static double decode_bf16(uint16_t h, int real_inf)
{
    int e = (h >> 7) & 255, m = h & 0x7f;
    double v;
    if (e == 255 && (m || real_inf))
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -133);
    else
        v = ldexp(m + 128, e - 134);
    return (h & 0x8000) ? -v : v;
}

/* A 16-bit format for ref_round: the values of the non-negative patterns
 * 0..top in increasing order (val[top] is the first power of two past the
 * range, standing in for infinity) and the mantissa width. */
typedef struct {
    double *val;
    unsigned top;
    unsigned mbits;
} fmt16;

static fmt16 F16, BF16;

/* Builds the value tables of F16 and BF16. */
static void build_tables(void)
{
    F16.top = 0x7c00, F16.mbits = 10;
    BF16.top = 0x7f80, BF16.mbits = 7;
    F16.val = xmalloc(F16.top + 1, sizeof(double));
    BF16.val = xmalloc(BF16.top + 1, sizeof(double));
    for (unsigned k = 0; k <= F16.top; k++)
        F16.val[k] = decode_f16((uint16_t)k, 0);
    for (unsigned k = 0; k <= BF16.top; k++)
        BF16.val[k] = decode_bf16((uint16_t)k, 0);
}

/* The bits of the value of format f nearest to d, found by binary search
 * in f's table and an exact comparison with the midpoint of the two
 * neighbours (ties to the even pattern); NaN: quiet, top payload bits. */
static uint16_t ref_round(const fmt16 *f, double d)
{
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (isnan(d)) {
        uint64_t mant = bits64_of(d) & ((UINT64_C(1) << 52) - 1);
        return (uint16_t)(sign | f->top | (1u << (f->mbits - 1)) | (mant >> (52 - f->mbits)));
    }
    double a = fabs(d);
    if (a >= f->val[f->top])
        return (uint16_t)(sign | f->top);
    unsigned lo = 0, hi = f->top; /* val[lo] <= a < val[hi] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (f->val[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    if (f->val[lo] == a)
        return (uint16_t)(sign | lo);
    double mid = (f->val[lo] + f->val[hi]) / 2; /* exact */
    unsigned pick = a < mid ? lo : a > mid ? hi : (lo & 1) ? hi : lo;
    return (uint16_t)(sign | pick);
}

/* The bf16 bits of the float with bits x, by 64-bit floor division of the
 * magnitude by 2^16 and an explicit look at the remainder. */
static uint16_t ref_bf16(uint32_t x)
{
    uint64_t mag = x & 0x7fffffffu, sign = x >> 31 << 15;
    if (mag > 0x7f800000u)
        return (uint16_t)(sign | (mag / 65536) | 0x40);
    uint64_t q = mag / 65536, r = mag % 65536;
    if (r > 32768 || (r == 32768 && q % 2 == 1))
        q += 1;
    return (uint16_t)(sign | q);
}

/* ---- round trips and widening ---------------------------------------------- */

/* Whether the 16-bit float pattern h, whose infinity is inf, is a NaN. */
static int is_nan16(uint16_t h, uint16_t inf) { return (h & inf) == inf && (h & (inf ^ 0x7fff)); }

/* What narrowing the widened pattern h must give: h itself, or for a NaN
 * the same with the quiet bit (qbit) set. */
static uint16_t roundtrip_want(uint16_t h, uint16_t inf, uint16_t qbit)
{
    return is_nan16(h, inf) ? (uint16_t)(h | qbit) : h;
}

/* Round trips of all 65536 f16 and bf16 patterns, scalar and bulk. */
static void test_roundtrip(void)
{
    enum { N = 65536 };
    uint16_t *h = xmalloc(N, 2), *back = xmalloc(N, 2), *want = xmalloc(N, 2);
    uint16_t *bulk = xmalloc(N, 2);
    uint64_t *in = xmalloc(N, 8);
    float *wide = xmalloc(N, 4), *wide_bulk = xmalloc(N, 4);

    for (int is_bf = 0; is_bf < 2; is_bf++) {
        const char *name = is_bf ? "bf16" : "f16";
        uint16_t inf = is_bf ? 0x7f80 : 0x7c00, qbit = is_bf ? 0x40 : 0x200;
        int64_t nan_bad = 0, num_bad = 0, wide_bad = 0;
        for (int i = 0; i < N; i++) {
            h[i] = (uint16_t)i, in[i] = (uint64_t)i;
            want[i] = roundtrip_want(h[i], inf, qbit);
            if (is_bf) {
                tendo_bf16 b = {h[i]};
                wide[i] = tendo_bf16_to_f32(b);
                back[i] = tendo_f32_to_bf16(wide[i]).bits;
            } else {
                tendo_f16 b = {h[i]};
                wide[i] = tendo_f16_to_f32(b);
                back[i] = tendo_f32_to_f16(wide[i]).bits;
            }
            int nan = is_nan16(h[i], inf);
            /* NaN: same sign, quiet bit set, payload kept (so a quiet NaN
             * comes back exactly, a signaling one with the quiet bit). */
            if (nan)
                nan_bad += (back[i] & 0x8000) != (h[i] & 0x8000) ||
                           (back[i] & (inf | qbit)) != (inf | qbit) || back[i] != want[i];
            else
                num_bad += back[i] != h[i];
        }
        is_int(0, num_bad, "%s -> f32 -> %s is the identity on non-NaN (scalar)", name, name);
        is_int(0, nan_bad, "%s NaNs stay NaN with sign, quiet bit and payload (scalar)", name);

        if (is_bf) {
            tendo__bf16_to_f32_n(h, wide_bulk, N);
            tendo__f32_to_bf16_n(wide_bulk, bulk, N);
        } else {
            tendo__f16_to_f32_n(h, wide_bulk, N);
            tendo__f32_to_f16_n(wide_bulk, bulk, N);
        }
        for (int i = 0; i < N; i++)
            wide_bad += bits_of(wide[i]) != bits_of(wide_bulk[i]);
        is_int(0, wide_bad, "bulk %s -> f32 equals scalar bit for bit", name);
        is_int(0, count_diff(name, in, want, bulk, N), "bulk %s round trip (incl. NaN)", name);
    }
    free(h), free(back), free(want), free(bulk), free(in), free(wide), free(wide_bulk);
}

/* Widening against F16C, an ldexp decode, and bits << 16 for bf16. */
static void test_widen(void)
{
    enum { N = 65536 };
    uint16_t *h = xmalloc(N, 2);
    float *hw = xmalloc(N, 4);
    int64_t hw_bad = 0, dec_bad = 0, bf_bad = 0;
    for (int i = 0; i < N; i++)
        h[i] = (uint16_t)i;
    for (int i = 0; i < N; i++) {
        float f = tendo__f16_bits_to_f32(h[i]);
        double want = decode_f16(h[i], 1);
        if (isnan(want))
            dec_bad += !isnan(f) || !signbit(f) != !(h[i] & 0x8000);
        else
            dec_bad += (double)f != want || !signbit(f) != !signbit(want);
        bf_bad += bits_of(tendo__bf16_bits_to_f32(h[i])) != (uint32_t)i << 16;
    }
    is_int(0, dec_bad, "f16 -> f32 equals an ldexp decode on all 65536 patterns");
    is_int(0, bf_bad, "bf16 -> f32 is bits << 16 on all 65536 patterns");
    if (have_f16c()) {
        hw_f16_to_f32_n(h, hw, N);
        for (int i = 0; i < N; i++)
            hw_bad += bits_of(hw[i]) != bits_of(tendo__f16_bits_to_f32(h[i]));
        is_int(0, hw_bad, "f16 -> f32 equals F16C _cvtsh_ss bit for bit (NaNs too)");
    } else {
        skip(1, "no F16C");
    }
    free(h), free(hw);
}

/* ---- narrowing f32 --------------------------------------------------------- */

/* Hand-picked f32 inputs (bits) for narrowing to f16. */
static const uint32_t f16_edges[] = {
    0x00000000, 0x80000000,             /* +-0 */
    0x00000001, 0x80000001, 0x007fffff, /* f32 subnormals */
    0x00400000, 0x00800000,             /* half the f32 minimum normal, min normal */
    0x33000000, 0x33000001, 0xb3000000, /* 2^-25: half the smallest f16 subnormal */
    0x32ffffff, 0x33800000,             /* just below it, 2^-24 */
    0x33c00000, 0x34200000, 0x34400000, /* 1.5, 2.5, 3 * 2^-24: ties */
    0x387fc000, 0x387fe000, 0x387ff000, /* largest subnormal, ties to min normal */
    0x387fefff, 0x38800000, 0x38000000, /* min normal f16, 2^-15 */
    0x3f800000, 0x3f801000, 0x3f803000, /* 1, 1 + 2^-11 (tie to even), 1 + 3*2^-11 */
    0x3f801001, 0x3f800fff, 0x3f802000, /* just above/below a tie, 1 + 2^-10 */
    0x477fe000, 0x477fe001, 0x477fefff, /* 65504 and just above */
    0x477ff000, 0x477ff001, 0x477feffe, /* 65520 (-> inf), 65519.99.. */
    0xc77ff000, 0xc77fe000, 0x47800000, /* -65520, -65504, 65536 */
    0x7f7fffff, 0xff7fffff,             /* FLT_MAX */
    0x7f800000, 0xff800000,             /* +-inf */
    0x7f800001, 0x7fa00000, 0x7fbfffff, /* signaling NaNs */
    0xff812345, 0xffa02000,             /* negative signaling NaNs */
    0x7fc00000, 0xffc00000, 0x7fd55555, /* quiet NaNs */
    0x7fffffff, 0xffffe000,
};

/* Hand-picked f32 inputs (bits) for narrowing to bf16. */
static const uint32_t bf16_edges[] = {
    0x00000000, 0x80000000, 0x00000001, 0x00007fff, /* zeros, tiny f32 subnormals */
    0x00008000, 0x00018000, 0x00008001, 0x80018000, /* subnormal ties (even, odd), above */
    0x007f8000, 0x007fffff, 0x00800000,             /* up to the f32 min normal */
    0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, /* ties at 1 + 2^-8, 1 + 3*2^-8 */
    0x7f7f0000, 0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, /* bf16 max, just below/at the overflow tie */
    0xff7f8000, 0x7f800000, 0xff800000,             /* -overflow, +-inf */
    0x7f800001, 0x7f810000, 0x7fbfffff, 0xff80ffff, /* signaling NaNs */
    0x7fc00000, 0xffffffff, 0x7fffffff, 0x7fc0ffff, /* quiet NaNs */
};

/* The f16 results of in[0..n) (f32 bits) by the scalar, public and bulk
 * converters are compared with the exact reference and F16C. */
static void check_f32_to_f16(const char *what, const uint32_t *bits, int64_t n)
{
    float *src = xmalloc((size_t)n, 4);
    uint64_t *in = xmalloc((size_t)n, 8);
    uint16_t *ref = xmalloc((size_t)n, 2), *scal = xmalloc((size_t)n, 2);
    uint16_t *pub = xmalloc((size_t)n, 2), *bulk = xmalloc((size_t)n, 2);
    uint16_t *hw = xmalloc((size_t)n, 2);
    for (int64_t i = 0; i < n; i++) {
        src[i] = f32_of(bits[i]), in[i] = bits[i];
        ref[i] = ref_round(&F16, (double)src[i]);
        scal[i] = tendo__f32_to_f16_bits(src[i]);
        pub[i] = tendo_f32_to_f16(src[i]).bits;
    }
    tendo__f32_to_f16_n(src, bulk, n);
    is_int(0, count_diff(what, in, ref, scal, n), "f32 -> f16 %s: scalar = exact reference", what);
    is_int(0, count_diff(what, in, scal, pub, n), "f32 -> f16 %s: public = scalar", what);
    is_int(0, count_diff(what, in, scal, bulk, n), "f32 -> f16 %s: bulk = scalar", what);
    if (have_f16c()) {
        hw_f32_to_f16_n(src, hw, n);
        is_int(0, count_diff(what, in, hw, scal, n), "f32 -> f16 %s: scalar = F16C", what);
    } else {
        skip(1, "no F16C");
    }
    free(src), free(in), free(ref), free(scal), free(pub), free(bulk), free(hw);
}

/* The bf16 results of bits[0..n) by the scalar, public and bulk converters
 * are compared with the integer reference and the exact reference. */
static void check_f32_to_bf16(const char *what, const uint32_t *bits, int64_t n)
{
    float *src = xmalloc((size_t)n, 4);
    uint64_t *in = xmalloc((size_t)n, 8);
    uint16_t *ref = xmalloc((size_t)n, 2), *exact = xmalloc((size_t)n, 2);
    uint16_t *scal = xmalloc((size_t)n, 2), *pub = xmalloc((size_t)n, 2);
    uint16_t *bulk = xmalloc((size_t)n, 2);
    for (int64_t i = 0; i < n; i++) {
        src[i] = f32_of(bits[i]), in[i] = bits[i];
        ref[i] = ref_bf16(bits[i]);
        exact[i] = ref_round(&BF16, (double)src[i]);
        scal[i] = tendo__f32_to_bf16_bits(src[i]);
        pub[i] = tendo_f32_to_bf16(src[i]).bits;
    }
    tendo__f32_to_bf16_n(src, bulk, n);
    is_int(0, count_diff(what, in, ref, scal, n), "f32 -> bf16 %s: scalar = integer reference", what);
    /* ref_round quiets a NaN from the double, which keeps f32's payload. */
    is_int(0, count_diff(what, in, exact, scal, n), "f32 -> bf16 %s: scalar = exact reference", what);
    is_int(0, count_diff(what, in, scal, pub, n), "f32 -> bf16 %s: public = scalar", what);
    is_int(0, count_diff(what, in, scal, bulk, n), "f32 -> bf16 %s: bulk = scalar", what);
    free(src), free(in), free(ref), free(exact), free(scal), free(pub), free(bulk);
}

/* The bit patterns (i << shift) + d for every i and each d in deltas. */
static uint32_t *sweep(unsigned shift, const int32_t *deltas, int nd, int64_t *n)
{
    int64_t count = ((int64_t)1 << (32 - shift)) * nd, k = 0;
    uint32_t *bits = xmalloc((size_t)count, 4);
    for (uint64_t i = 0; i < (UINT64_C(1) << (32 - shift)); i++)
        for (int j = 0; j < nd; j++)
            bits[k++] = (uint32_t)(i << shift) + (uint32_t)deltas[j];
    *n = count;
    return bits;
}

/* n random f32 bit patterns. */
static uint32_t *random_bits(int64_t n)
{
    uint32_t *bits = xmalloc((size_t)n, 4);
    for (int64_t i = 0; i < n; i++)
        bits[i] = (uint32_t)(rng() >> 32);
    return bits;
}

/* n random floats with a random sign, mantissa and binary exponent in
 * [emin, emax]. */
static uint32_t *random_in_range(int64_t n, int emin, int emax)
{
    uint32_t *bits = xmalloc((size_t)n, 4);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rng();
        int e = emin + (int)((r >> 40) % (uint64_t)(emax - emin + 1));
        float f = ldexpf(1.0f + (float)(r & 0x7fffff) * 0x1p-23f, e);
        bits[i] = bits_of(f) | (uint32_t)(r >> 63 << 31);
    }
    return bits;
}

/* f32 -> f16 and f32 -> bf16 on edges, sweeps and random inputs. */
static void test_narrow_f32(void)
{
    static const int32_t d16[] = {0, 1, -1, 0x1000, -0x1000, 0xfff, -0xfff, 0x1001, -0x1001};
    static const int32_t dbf[] = {0, 1, -1, 0x8000, -0x8000, 0x7fff, -0x7fff, 0x8001, -0x8001};
    int64_t n;
    uint32_t *bits;

    check_f32_to_f16("edge cases", f16_edges, sizeof f16_edges / sizeof *f16_edges);
    check_f32_to_bf16("edge cases", bf16_edges, sizeof bf16_edges / sizeof *bf16_edges);
    check_f32_to_bf16("f16 edge cases", f16_edges, sizeof f16_edges / sizeof *f16_edges);
    bits = sweep(13, d16, 9, &n);
    check_f32_to_f16("sweep (i<<13)+-{0,1,0xfff,0x1000,0x1001}", bits, n);
    free(bits);
    bits = sweep(16, dbf, 9, &n);
    check_f32_to_bf16("sweep (i<<16)+-{0,1,0x7fff,0x8000,0x8001}", bits, n);
    free(bits);
    bits = random_bits(N_RANDOM);
    check_f32_to_f16("random bits", bits, N_RANDOM);
    check_f32_to_bf16("random bits", bits, N_RANDOM);
    free(bits);
    bits = random_in_range(N_RANDOM, -26, 16);
    check_f32_to_f16("random values in f16 range", bits, N_RANDOM);
    free(bits);
}

/* Bulk on every length 0..80 at every pair of element offsets 0..7 must
 * equal scalar and must not write past the end. */
static void test_bulk_shapes(void)
{
    enum { LEN = 80, OFF = 8, PAD = 8 };
    float src[LEN + OFF], wide[LEN + OFF + PAD];
    uint16_t h[LEN + OFF], out[LEN + OFF + PAD];
    int64_t bad[4] = {0, 0, 0, 0};
    for (int i = 0; i < LEN + OFF; i++) {
        src[i] = f32_of((uint32_t)(rng() >> 32));
        if (i % 5 == 0)
            src[i] = ldexpf((float)(rng() % 2048), (int)(rng() % 40) - 34);
        h[i] = (uint16_t)rng();
    }
    for (int len = 0; len <= LEN; len++) {
        for (int so = 0; so < OFF; so++) {
            for (int dof = 0; dof < OFF; dof++) {
                for (int kind = 0; kind < 4; kind++) {
                    memset(out, 0xa5, sizeof out);
                    memset(wide, 0xa5, sizeof wide);
                    if (kind == 0)
                        tendo__f32_to_f16_n(src + so, out + dof, len);
                    else if (kind == 1)
                        tendo__f32_to_bf16_n(src + so, out + dof, len);
                    else if (kind == 2)
                        tendo__f16_to_f32_n(h + so, wide + dof, len);
                    else
                        tendo__bf16_to_f32_n(h + so, wide + dof, len);
                    for (int i = 0; i < LEN + OFF + PAD; i++) {
                        int in = i >= dof && i < dof + len;
                        uint32_t want, got;
                        if (kind < 2) {
                            float x = in ? src[so + i - dof] : 0.0f;
                            want = !in ? 0xa5a5u
                                 : kind == 0 ? tendo__f32_to_f16_bits(x)
                                             : tendo__f32_to_bf16_bits(x);
                            got = out[i];
                        } else {
                            uint16_t x = in ? h[so + i - dof] : 0;
                            want = !in ? 0xa5a5a5a5u
                                 : bits_of(kind == 2 ? tendo__f16_bits_to_f32(x)
                                                     : tendo__bf16_bits_to_f32(x));
                            got = bits_of(wide[i]);
                        }
                        bad[kind] += want != got;
                    }
                }
            }
        }
    }
    is_int(0, bad[0], "bulk f32 -> f16: lengths 0..80, offsets 0..7, no overrun");
    is_int(0, bad[1], "bulk f32 -> bf16: lengths 0..80, offsets 0..7, no overrun");
    is_int(0, bad[2], "bulk f16 -> f32: lengths 0..80, offsets 0..7, no overrun");
    is_int(0, bad[3], "bulk bf16 -> f32: lengths 0..80, offsets 0..7, no overrun");
}

/* ---- narrowing f64 ----------------------------------------------------------- */

/* The f64 inputs of in[0..n) narrowed by the library (internal and public)
 * against ref_round, for f16 and bf16. */
static void check_f64(const char *what, const double *d, int64_t n)
{
    uint64_t *in = xmalloc((size_t)n, 8);
    uint16_t *r16 = xmalloc((size_t)n, 2), *g16 = xmalloc((size_t)n, 2);
    uint16_t *rbf = xmalloc((size_t)n, 2), *gbf = xmalloc((size_t)n, 2);
    int64_t pub_bad = 0;
    for (int64_t i = 0; i < n; i++) {
        in[i] = bits64_of(d[i]);
        r16[i] = ref_round(&F16, d[i]);
        rbf[i] = ref_round(&BF16, d[i]);
        g16[i] = tendo__f64_to_f16_bits(d[i]);
        gbf[i] = tendo__f64_to_bf16_bits(d[i]);
        pub_bad += tendo_f64_to_f16(d[i]).bits != g16[i];
        pub_bad += tendo_f64_to_bf16(d[i]).bits != gbf[i];
    }
    is_int(0, count_diff(what, in, r16, g16, n), "f64 -> f16 %s: = exact reference", what);
    is_int(0, count_diff(what, in, rbf, gbf, n), "f64 -> bf16 %s: = exact reference", what);
    is_int(0, pub_bad, "f64 -> f16/bf16 %s: public = internal", what);
    free(in), free(r16), free(g16), free(rbf), free(gbf);
}

/* f64 NaNs narrowed like the hardware chain double -> float (cvtsd2ss
 * keeps the top payload bits and quiets) -> F16C / bf16 rule. */
static void test_f64_nan(void)
{
    enum { N = 4096 };
    int64_t bad16 = 0, badbf = 0;
    for (int i = 0; i < N; i++) {
        uint64_t mant = (rng() >> 12) | (i & 1 ? 0 : UINT64_C(1) << 51);
        if (mant == 0)
            mant = 1;
        double d = f64_of((uint64_t)(i & 2) << 62 | UINT64_C(0x7ff0000000000000) | mant);
        uint16_t sign = (i & 2) ? 0x8000 : 0;
        /* The spec: sign | quiet | top payload bits. */
        uint16_t want16 = (uint16_t)(sign | 0x7e00 | (mant >> 42));
        uint16_t wantbf = (uint16_t)(sign | 0x7fc0 | (mant >> 45));
        bad16 += tendo__f64_to_f16_bits(d) != want16;
        badbf += tendo__f64_to_bf16_bits(d) != wantbf;
#if HAVE_X86
        if (have_f16c()) {
            volatile double vd = d;
            float f = (float)vd;
            uint16_t hw;
            hw_f32_to_f16_n(&f, &hw, 1);
            bad16 += tendo__f64_to_f16_bits(d) != hw;
            badbf += tendo__f64_to_bf16_bits(d) != (uint16_t)(bits_of(f) >> 16 | 0x40);
        }
#endif
    }
    is_int(0, bad16, "f64 NaN -> f16: quiet, sign and top payload (as cvtsd2ss + F16C)");
    is_int(0, badbf, "f64 NaN -> bf16: quiet, sign and top payload (as cvtsd2ss + bf16)");
}

/* f64 -> f16/bf16 on edges (double-rounding traps included), random
 * doubles, and midpoints of random neighbours nudged by one ulp. */
static void test_narrow_f64(void)
{
    static const double edges[] = {
        0.0, -0.0, 1.0, -1.0, 0x1p-1074, 0x1p-1022, 1e-300, 1e300, -1e300,
        0x1p-25, 0x1.0000000000001p-25, 0x1.fffffffffffffp-26, 0x3p-25, 0x5p-25,
        0x1p-24, 0x3ffp-24, 0x7ffp-25, 0x7fep-25, 0x1p-14, 0x1p-133, 0x1p-134,
        0x1.0000000000001p-134, 0x3p-134, 0x1p-126, 0x1.fcp-127, 0x1.fdp-127,
        65504.0, 65519.0, 65519.99, 0x1.ffdffffffffffp15, 65520.0, 65536.0, -65520.0,
        0x1.fep127, 0x1.fefffffffffffp127, 0x1.ffp127, 0x1p128, -0x1.ffp127,
        1.0 + 0x1p-11, 1.0 + 0x3p-11, 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11 - 0x1p-40,
        1.0 + 0x1p-8, 1.0 + 0x3p-8, 1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-8 - 0x1p-40,
        1.0 + 0x1p-11 + 0x1p-30, 1.0 + 0x1p-8 + 0x1p-30, /* survive through float */
        0x1p-25 + 0x1p-60, 0x1p-134 + 0x1p-170,
        INFINITY, -INFINITY,
    };
    int64_t n = sizeof edges / sizeof *edges;
    check_f64("edge cases", edges, n);

    /* The classic double-rounding traps, spelled out. */
    is_uint(0x3c01, tendo_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40).bits,
            "f64 -> f16 of 1 + 2^-11 + 2^-40 rounds once (up), not via float");
    is_uint(0x3f81, tendo_f64_to_bf16(1.0 + 0x1p-8 + 0x1p-40).bits,
            "f64 -> bf16 of 1 + 2^-8 + 2^-40 rounds once (up), not via float");
    is_uint(0x0001, tendo_f64_to_f16(0x1p-25 + 0x1p-60).bits,
            "f64 -> f16 just above half the smallest subnormal rounds up");

    double *d = xmalloc(N_RANDOM_F64, sizeof(double));
    for (int64_t i = 0; i < N_RANDOM_F64; i++)
        d[i] = f64_of(rng());
    check_f64("random bits", d, N_RANDOM_F64);
    for (int64_t i = 0; i < N_RANDOM_F64; i++) {
        uint64_t r = rng();
        int e = (int)((r >> 53) % 170) - 140; /* 2^-140 .. 2^29 */
        d[i] = ldexp(1.0 + (double)(r & ((UINT64_C(1) << 52) - 1)) * 0x1p-52, e);
        if (r & 1)
            d[i] = -d[i];
    }
    check_f64("random values 2^-140..2^30", d, N_RANDOM_F64);
    for (int64_t i = 0; i < N_RANDOM_F64; i++) {
        uint64_t r = rng();
        const fmt16 *f = (r & 1) ? &F16 : &BF16;
        unsigned k = (unsigned)((r >> 8) % f->top); /* neighbours k, k + 1 */
        double mid = (f->val[k] + f->val[k + 1]) / 2;
        int nudge = (int)((r >> 40) % 3);
        d[i] = nudge == 0 ? mid : nudge == 1 ? nextafter(mid, 0.0) : nextafter(mid, INFINITY);
        if (r & 2)
            d[i] = -d[i];
    }
    check_f64("midpoints and their neighbours", d, N_RANDOM_F64);
    free(d);
    test_f64_nan();
}

/* tendo__<T>_add_n, pairs added in one pass, against widen, add, narrow
 * one element at a time: random patterns (NaN, infinities and subnormals
 * among them, so that some vectors of bf16 sums hold a subnormal and some
 * none), sums and means, every length to 40 and a long run, at any offset,
 * into the first operand and (offset 1) into a third buffer.  A NaN result
 * is checked to be a NaN (which operand's payload an add keeps is the
 * hardware's). */
static void test_add_pairs(void)
{
    enum { N = 70000 };
    uint16_t *x = xmalloc(N, 2), *y0 = xmalloc(N, 2), *y = xmalloc(N, 2), *z = xmalloc(N, 2);

    for (int i = 0; i < N; i++) {
        x[i] = (uint16_t)rng();
        y0[i] = (uint16_t)rng();
    }
    for (int is_bf = 0; is_bf < 2; is_bf++)
        for (int mean = 0; mean < 2; mean++) {
            float scale = mean ? 0.5f : 1.0f;
            uint16_t inf = is_bf ? 0x7f80 : 0x7c00;
            int64_t bad = 0, runs = 0;
            for (int64_t len = 0; len <= 41; len++)
                for (int64_t off = 0; off < 3; off++) {
                    int64_t n = len == 41 ? N - off : len;
                    uint16_t *out = off == 1 ? z : y;
                    memcpy(y, y0, (size_t)N * 2);
                    memcpy(z, y0, (size_t)N * 2);
                    if (is_bf)
                        tendo__bf16_add_n(y + off, x + off, out + off, n, scale);
                    else
                        tendo__f16_add_n(y + off, x + off, out + off, n, scale);
                    runs++;
                    for (int64_t i = 0; i < N; i++) {
                        uint16_t want = y0[i];
                        if (i >= off && i < off + n) {
                            float a = is_bf ? tendo_bf16_to_f32((tendo_bf16){y0[i]})
                                            : tendo_f16_to_f32((tendo_f16){y0[i]});
                            float b = is_bf ? tendo_bf16_to_f32((tendo_bf16){x[i]})
                                            : tendo_f16_to_f32((tendo_f16){x[i]});
                            float r = (a + b) * scale;
                            want = is_bf ? tendo_f32_to_bf16(r).bits : tendo_f32_to_f16(r).bits;
                        }
                        if (is_nan16(want, inf) ? !is_nan16(out[i], inf) : out[i] != want) {
                            if (bad++ < 3)
                                diag("%s %s: len %lld off %lld, element %lld: %04x + %04x gave %04x, wanted %04x",
                                     is_bf ? "bf16" : "f16", mean ? "mean" : "sum", (long long)n, (long long)off,
                                     (long long)i, y0[i], x[i], out[i], want);
                        }
                        bad += out != y && y[i] != y0[i]; /* the operands as they were */
                    }
                }
            is_int(0, bad, "%s pairs %s in one pass (%lld runs of 0 to %d elements) = widen, add%s, narrow",
                   is_bf ? "bf16" : "f16", mean ? "averaged" : "added", (long long)runs, N, mean ? ", halve" : "");
        }
    free(x), free(y0), free(y), free(z);
}

int main(void)
{
    plan_lazy();
    build_tables();
    if (!have_f16c())
        diag("no F16C on this CPU: hardware comparisons are skipped");
    test_roundtrip();
    test_widen();
    test_narrow_f32();
    test_bulk_shapes();
    test_narrow_f64();
    test_add_pairs();
    free(F16.val), free(BF16.val);
    return done_testing();
}
