/* t/drivers/t-fp8.c - FP8 conversions (src/core/fp8.h, the bulk ones in
 * src/cpu/half.c, the public ones in tendo/core.h).
 *
 * Every pattern of both formats is widened (checked against an ldexp
 * decoder) and narrowed back.  Narrowing from f32 and f64 is checked
 * against an exact reference that finds the nearest of all finite values
 * by comparing with midpoints in double (ties to the even pattern; the
 * pattern past the largest finite value stands for overflow), on all f16
 * values widened, hand-picked edges and random floats; f64 also on cases
 * where rounding through float would round twice.  The bulk *_n converters
 * must equal the scalar ones on odd lengths and unaligned pointers, and
 * tendo__i64_to_f64_odd is checked against an integer reference.
 *
 * `t-fp8 dump f32|f64` is a helper for t/interop/t-fp8-mldtypes.sh: it reads raw
 * native floats (doubles) on stdin and writes two bytes per value, the
 * f8e4m3 and the f8e5m2 bits from the public API; `t-fp8 dump widen`
 * writes the f32 bits of the 256 f8e4m3 then the 256 f8e5m2 patterns.
 */
#include "core/fp8.h"
#include "cpu/half.h"
#include "tap.h"
#include "tendo/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM 1000000

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state = UINT64_C(0x243f6a8885a308d3);

/* The next value of a fixed-seed xorshift64* generator. */
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(0x2545f4914f6cdd1d);
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

/* Allocates n elements of size sz (plus slack for offset views) or bails. */
static void *xmalloc(size_t n, size_t sz)
{
    void *p = malloc(n * sz + 64);
    if (!p)
        bail("out of memory");
    return p;
}

/* ---- the formats and the exact reference ------------------------------------ */

/* An FP8 format: mantissa width, exponent bias, the pattern `top` just past
 * the largest finite value (val[top] is its value in an unbounded
 * exponent range), what overflow and NaN give, and the decoded values
 * of the non-negative patterns 0..top. */
typedef struct {
    const char *name;
    int mbits, bias;
    unsigned top, ovf, nan;
    double val[128];
    uint8_t (*from_f32)(float);
    uint8_t (*from_f64)(double);
    float (*to_f32)(uint8_t);
    void (*narrow_n)(const float *, uint8_t *, int64_t);
    void (*widen_n)(const uint8_t *, float *, int64_t);
} fmt8;

static uint8_t e4m3_from_f32(float f) { return tendo_f32_to_f8e4m3(f).bits; }
static uint8_t e4m3_from_f64(double d) { return tendo_f64_to_f8e4m3(d).bits; }
static float e4m3_to_f32(uint8_t b) { return tendo_f8e4m3_to_f32((tendo_f8e4m3){b}); }
static uint8_t e5m2_from_f32(float f) { return tendo_f32_to_f8e5m2(f).bits; }
static uint8_t e5m2_from_f64(double d) { return tendo_f64_to_f8e5m2(d).bits; }
static float e5m2_to_f32(uint8_t b) { return tendo_f8e5m2_to_f32((tendo_f8e5m2){b}); }

static fmt8 E4M3 = {"f8e4m3", 3, 7, 0x7f, 0x7f, 0x7f, {0}, e4m3_from_f32, e4m3_from_f64, e4m3_to_f32,
                    tendo__f32_to_f8e4m3_n, tendo__f8e4m3_to_f32_n};
static fmt8 E5M2 = {"f8e5m2", 2, 15, 0x7c, 0x7c, 0x7e, {0}, e5m2_from_f32, e5m2_from_f64, e5m2_to_f32,
                    tendo__f32_to_f8e5m2_n, tendo__f8e5m2_to_f32_n};

/* The value of the non-negative pattern k of f by the textbook formula
 * (exponent field 0: subnormal). */
static double decode(const fmt8 *f, unsigned k)
{
    int e = (int)(k >> f->mbits), m = (int)(k & ((1u << f->mbits) - 1));
    if (e == 0)
        return ldexp(m, 1 - f->bias - f->mbits);
    return ldexp(m + (1 << f->mbits), e - f->bias - f->mbits);
}

/* Fills the value tables. */
static void build_tables(void)
{
    for (unsigned k = 0; k <= E4M3.top; k++)
        E4M3.val[k] = decode(&E4M3, k);
    for (unsigned k = 0; k <= E5M2.top; k++)
        E5M2.val[k] = decode(&E5M2, k);
}

/* The bits f's nearest value to d must have: nearest of val[0..top] by an
 * exact comparison with the midpoint of the two neighbours, ties to the
 * even pattern; reaching top (or an infinite d) gives f->ovf; NaN gives
 * f->nan; the sign is kept throughout. */
static uint8_t ref_round(const fmt8 *f, double d)
{
    unsigned sign = signbit(d) ? 0x80u : 0u;
    double a = fabs(d);
    if (isnan(d))
        return (uint8_t)(sign | f->nan);
    if (a >= f->val[f->top])
        return (uint8_t)(sign | f->ovf);
    /* lo: the largest k with val[k] <= a */
    unsigned lo = 0, hi = f->top;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (f->val[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    unsigned k = lo;
    if (a > f->val[lo]) {
        double half = (f->val[lo] + f->val[lo + 1]) / 2; /* exact: both are short */
        k = a < half ? lo : a > half ? lo + 1 : (lo % 2 ? lo + 1 : lo);
    }
    if (k >= f->top)
        k = f->ovf;
    return (uint8_t)(sign | k);
}

/* ---- widening and round trips ----------------------------------------------- */

/* Every pattern widens to its decoded value (NaN patterns: the quiet NaN
 * 0x7fc00000 with the sign; e5m2 infinity: infinity) and narrows back to
 * itself (NaN patterns: the format's NaN); the bulk widening and its
 * compile-time table agree with the scalar code. */
static void test_widen(fmt8 *f)
{
    int bad_val = 0, bad_rt = 0, bad_bulk = 0;
    uint8_t src[256 + 8];
    float dst[256 + 8];

    for (unsigned b = 0; b < 256; b++) {
        unsigned k = b & 0x7f;
        uint32_t sign = (b & 0x80u) << 24;
        float w = f->to_f32((uint8_t)b);
        int is_nan = f == &E4M3 ? k == 0x7f : k > 0x7c;
        uint32_t want;
        if (is_nan)
            want = sign | 0x7fc00000u;
        else if (f == &E5M2 && k == 0x7c)
            want = sign | 0x7f800000u;
        else
            want = tendo__f32_bits((float)((b & 0x80) ? -decode(f, k) : decode(f, k)));
        if (tendo__f32_bits(w) != want && bad_val++ < 4)
            diag("%s 0x%02x widens to 0x%08" PRIx32 ", wanted 0x%08" PRIx32, f->name, b, tendo__f32_bits(w), want);
        uint8_t back = f->from_f32(w);
        uint8_t back_want = is_nan ? (uint8_t)((b & 0x80) | f->nan) : (uint8_t)b;
        if (back != back_want && bad_rt++ < 4)
            diag("%s 0x%02x comes back as 0x%02x, wanted 0x%02x", f->name, b, back, back_want);
        if (f->from_f64((double)w) != back_want && bad_rt++ < 4)
            diag("%s 0x%02x comes back from double as 0x%02x", f->name, b, f->from_f64((double)w));
    }
    ok(!bad_val, "%s: all 256 patterns widen to their exact values", f->name);
    ok(!bad_rt, "%s: all 256 patterns narrow back to themselves (NaN to the NaN) from f32 and f64", f->name);

    for (unsigned off = 0; off < 4; off++) {
        for (unsigned b = 0; b < 256; b++)
            src[off + b] = (uint8_t)(b * 37u + 11u); /* a permutation */
        f->widen_n(src + off, dst + off, 256 - off);
        for (unsigned i = 0; i < 256 - off; i++)
            if (tendo__f32_bits(dst[off + i]) != tendo__f32_bits(f->to_f32(src[off + i])) && bad_bulk++ < 4)
                diag("%s bulk widening of 0x%02x at offset %u differs", f->name, src[off + i], off);
    }
    ok(!bad_bulk, "%s: bulk widening equals the scalar one (offsets 0-3)", f->name);
}

/* ---- narrowing ------------------------------------------------------------------ */

/* Checks f32 narrowing of in[0..n) against the reference, the bulk
 * converter against the scalar one on several offsets and odd lengths,
 * and the f64 converter on the same (exactly representable) values. */
static void check_f32_inputs(fmt8 *f, const float *in, int64_t n, const char *what)
{
    int64_t bad = 0, bad64 = 0, bad_bulk = 0;
    uint8_t *out = xmalloc((size_t)n + 8, 1);
    float *src = xmalloc((size_t)n + 8, sizeof(float));

    for (int64_t i = 0; i < n; i++) {
        uint8_t want = ref_round(f, (double)in[i]);
        uint8_t got = f->from_f32(in[i]);
        if (got != want && bad++ < 4)
            diag("%s: f32 0x%08" PRIx32 " (%.9g) gives 0x%02x, wanted 0x%02x", f->name, tendo__f32_bits(in[i]),
                 (double)in[i], got, want);
        uint8_t got64 = f->from_f64((double)in[i]);
        if (got64 != want && bad64++ < 4)
            diag("%s: f64 %.17g gives 0x%02x, wanted 0x%02x", f->name, (double)in[i], got64, want);
    }
    ok(!bad, "%s: f32 -> fp8 matches the reference on %s (%" PRId64 " values)", f->name, what, n);
    ok(!bad64, "%s: f64 -> fp8 matches the reference on %s", f->name, what);

    /* bulk: unaligned starts and odd lengths, with a guard byte after */
    static const int64_t cut[] = {0, 1, 3, 7, 15, 17, 31, 33, 63, 65};
    for (unsigned off = 0; off < 4; off++) {
        for (size_t c = 0; c < sizeof cut / sizeof cut[0]; c++) {
            int64_t len = n - (int64_t)off - cut[c];
            if (len < 0)
                continue;
            memcpy(src + off, in, (size_t)len * sizeof(float));
            out[off + len] = 0xa5;
            f->narrow_n(src + off, out + off, len);
            if (out[off + len] != 0xa5 && bad_bulk++ < 4)
                diag("%s: bulk narrowing wrote past %" PRId64 " elements", f->name, len);
            for (int64_t i = 0; i < len; i++)
                if (out[off + i] != f->from_f32(src[off + i]) && bad_bulk++ < 4)
                    diag("%s: bulk narrowing of 0x%08" PRIx32 " differs (offset %u, length %" PRId64 ")",
                         f->name, tendo__f32_bits(src[off + i]), off, len);
        }
    }
    ok(!bad_bulk, "%s: bulk f32 -> fp8 equals the scalar one on %s (offsets 0-3, odd lengths)", f->name, what);
    free(out);
    free(src);
}

/* All 65536 f16 patterns widened to float (every fp8 value, midpoint and
 * overflow threshold is among them, and much more). */
static void test_f16_inputs(fmt8 *f)
{
    enum { N = 65536 };
    float *in = xmalloc(N, sizeof(float));
    for (unsigned h = 0; h < N; h++)
        in[h] = tendo__f16_bits_to_f32((uint16_t)h);
    check_f32_inputs(f, in, N, "all f16 values");
    free(in);
}

/* The edges, named: zeros, subnormals and their midpoints, the largest
 * value and the first values past it, infinities and NaNs. */
static void test_edges(fmt8 *f)
{
    double sub = ldexp(1, 1 - f->bias - f->mbits);   /* smallest subnormal */
    double mx = f->val[f->top - 1], past = f->val[f->top];
    double ulp = past - mx;                            /* spacing at the top */
    float in[] = {
        0.0f, -0.0f, (float)sub, (float)-sub, (float)(sub / 2), (float)(-sub / 2),
        nextafterf((float)(sub / 2), 1), nextafterf((float)(sub / 2), 0), (float)(sub * 1.5),
        (float)(sub * 2.5), (float)(sub * 3.5), (float)(sub / 4), 1e-30f, 1e-45f, -1e-45f,
        (float)mx, (float)-mx, (float)(mx + ulp / 2), (float)-(mx + ulp / 2),
        nextafterf((float)(mx + ulp / 2), 0), nextafterf((float)(mx + ulp / 2), INFINITY), (float)past,
        (float)-past, 1e30f, -1e30f, 3.4e38f, INFINITY, -INFINITY, NAN, -NAN, tendo__bits_f32(0x7f800001u),
        tendo__bits_f32(0xff800001u), tendo__bits_f32(0x7fffffffu), tendo__bits_f32(0x7fa00000u), 1.0f, -1.0f, 0.1f, 3.0f,
    };
    check_f32_inputs(f, in, (int64_t)(sizeof in / sizeof in[0]), "edge cases");

    /* a few named facts, also stated in the file comment of fp8.h */
    unsigned inf_to = f == &E4M3 ? 0x7fu : 0x7cu;
    ok(f->from_f32(INFINITY) == inf_to && f->from_f32(-INFINITY) == (0x80u | inf_to) &&
           f->from_f64(-INFINITY) == (0x80u | inf_to),
       "%s: +-infinity gives 0x%02x with the sign", f->name, inf_to);
    ok(f->from_f32(-NAN) == (0x80u | f->nan) && f->from_f64(f64_of(UINT64_C(0x7ff0000000000001))) == f->nan,
       "%s: NaN gives 0x%02x with the sign", f->name, f->nan);
    ok(f->from_f32((float)(mx + ulp / 2)) == (f == &E4M3 ? 0x7eu : 0x7cu),
       "%s: the midpoint past the largest value ties to %s", f->name, f == &E4M3 ? "448" : "infinity");
}

/* Random floats: any bits, and values near the format's range. */
static void test_random(fmt8 *f)
{
    float *in = xmalloc(N_RANDOM, sizeof(float));
    for (int64_t i = 0; i < N_RANDOM; i++) {
        uint64_t r = rng();
        if (i % 2)
            in[i] = tendo__bits_f32((uint32_t)r);
        else /* exponent within a few steps of the fp8 range */
            in[i] = ldexpf((float)(r >> 40) * 0x1p-24f, (int)((r >> 8) % 48) - 24 - (f == &E5M2) * 8);
    }
    check_f32_inputs(f, in, N_RANDOM, "random floats");
    free(in);
}

/* f64 -> fp8 rounds once: random doubles, and values just off a midpoint
 * that float would round onto the midpoint (a second rounding then goes
 * the wrong way). */
static void test_f64(fmt8 *f)
{
    int64_t bad = 0, twice = 0;
    for (int64_t i = 0; i < N_RANDOM; i++) {
        uint64_t r = rng();
        double d = i % 2 ? f64_of(r) : ldexp((double)(r >> 11) * 0x1p-53, (int)(r % 64) - 32);
        uint8_t want = ref_round(f, d), got = f->from_f64(d);
        if (got != want && bad++ < 4)
            diag("%s: f64 0x%016" PRIx64 " gives 0x%02x, wanted 0x%02x", f->name, bits64_of(d), got, want);
    }
    ok(!bad, "%s: f64 -> fp8 matches the reference on %d random doubles", f->name, N_RANDOM);

    /* every midpoint between neighbours (and below the smallest
     * subnormal), nudged by 2^-30 relative: float rounds the nudge away */
    bad = 0;
    for (unsigned k = 0; k < f->top; k++) {
        double half = (f->val[k] + f->val[k + 1]) / 2;
        for (int s = -1; s <= 1; s += 2) {
            double d = half + s * half * 0x1p-30;
            uint8_t want = ref_round(f, d), got = f->from_f64(d);
            uint8_t via = f->from_f32((float)d);
            twice += via != want;
            if (got != want && bad++ < 4)
                diag("%s: f64 %.17g (near a midpoint) gives 0x%02x, wanted 0x%02x", f->name, d, got, want);
            if (f->from_f64(-d) != (want | 0x80u) && bad++ < 4)
                diag("%s: f64 %.17g gives 0x%02x", f->name, -d, f->from_f64(-d));
        }
    }
    ok(!bad, "%s: f64 just off every midpoint rounds once", f->name);
    ok(twice > 0, "%s: rounding those through float would differ %" PRId64 " times (the test has teeth)",
       f->name, twice);

    /* the named cases: 1 + 1/2 ulp + 2^-40 */
    double one_up = f == &E4M3 ? 1.0625 + 0x1p-40 : 1.125 + 0x1p-40;
    double tiny_up = ldexp(1, -f->bias - f->mbits) + 0x1p-60;
    is_uint(f == &E4M3 ? 0x39 : 0x3d, f->from_f64(one_up), "%s: f64 %.17g rounds up once", f->name, one_up);
    is_uint(f == &E4M3 ? 0x38 : 0x3c, f->from_f32((float)one_up), "%s: ... while through float it rounds down",
            f->name);
    is_uint(1, f->from_f64(tiny_up), "%s: f64 just past half the smallest subnormal rounds up", f->name);
    is_uint(0, f->from_f32((float)tiny_up), "%s: ... while through float it rounds to zero", f->name);
}

/* ---- round to odd from int64 -------------------------------------------------- */

/* The reference: |x| truncated to its top 53 bits, the lowest kept bit
 * set if anything was cut, with x's sign. */
static double ref_odd(int64_t x)
{
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    int p = 63;
    while (p > 0 && !(u >> p))
        p--;
    if (p > 52) {
        int cut = p - 52;
        uint64_t t = u >> cut << cut;
        if (t != u)
            t |= UINT64_C(1) << cut;
        u = t;
    }
    double m = ldexp((double)(u >> 32), 32) + (double)(u & 0xffffffffu); /* both exact */
    return x < 0 ? -m : m;
}

/* x rounded once to float, to nearest even, by integer arithmetic. */
static float ref_i64_to_f32(int64_t x)
{
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    int p = 63;
    while (p > 0 && !(u >> p))
        p--;
    if (p > 23) {
        int cut = p - 23;
        uint64_t q = u >> cut, r = u & ((UINT64_C(1) << cut) - 1), h = UINT64_C(1) << (cut - 1);
        if (r > h || (r == h && (q & 1)))
            q++;
        return (float)(x < 0 ? -ldexp((double)q, cut) : ldexp((double)q, cut));
    }
    return x < 0 ? -(float)u : (float)u;
}

/* tendo__i64_to_f64_odd on edges and random integers of every size. */
static void test_i64_odd(void)
{
    static const int64_t edge[] = {0, 1, -1, 2, (INT64_C(1) << 53) - 1, INT64_C(1) << 53,
                                   (INT64_C(1) << 53) + 1, (INT64_C(1) << 53) + 2, (INT64_C(1) << 53) + 3,
                                   -((INT64_C(1) << 53) + 1), (INT64_C(1) << 54) + 1, (INT64_C(1) << 54) + 2,
                                   INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, (INT64_C(1) << 62) + 1,
                                   INT64_C(16777217), INT64_C(16777219), (INT64_C(1) << 24) + (INT64_C(1) << 40)};
    int64_t bad = 0, bad_f32 = 0;
    for (int64_t i = 0; i < N_RANDOM + (int64_t)(sizeof edge / sizeof edge[0]); i++) {
        int64_t x;
        if (i < (int64_t)(sizeof edge / sizeof edge[0]))
            x = edge[i];
        else {
            uint64_t r = rng();
            x = (int64_t)(r >> (r & 63)); /* every magnitude */
            if (r & 64)
                x = (int64_t)(0 - (uint64_t)x);
        }
        double got = tendo__i64_to_f64_odd(x), want = ref_odd(x);
        if (bits64_of(got) != bits64_of(want) && bad++ < 4)
            diag("i64_to_f64_odd(%" PRId64 ") = %.17g, wanted %.17g", x, got, want);
        float once = ref_i64_to_f32(x), twice = (float)got;
        if (tendo__f32_bits(once) != tendo__f32_bits(twice) && bad_f32++ < 4)
            diag("i64 %" PRId64 ": odd double then float gives %.9g, wanted %.9g", x, (double)twice,
                 (double)once);
    }
    ok(!bad, "tendo__i64_to_f64_odd matches the reference (edges and %d random)", N_RANDOM);
    ok(!bad_f32, "rounding that double to float equals rounding the integer once");
    is_uint(bits64_of(0x1p53 + 2), bits64_of(tendo__i64_to_f64_odd((INT64_C(1) << 53) + 1)),
            "2^53 + 1 becomes 2^53 + 2 (odd significand)");
    is_uint(bits64_of(-0x1p63), bits64_of(tendo__i64_to_f64_odd(INT64_MIN)), "INT64_MIN is exact");
    is_uint(bits64_of(0x1p63 - 0x1p10), bits64_of(tendo__i64_to_f64_odd(INT64_MAX)),
            "INT64_MAX becomes 2^63 - 2^10 (truncated, lowest bit set)");
}

/* ---- the helper for t-fp8-mldtypes.sh ---------------------------------------- */

/* Writes all bytes of p or fails. */
static int put(const void *p, size_t n)
{
    return fwrite(p, 1, n, stdout) == n ? 0 : 1;
}

/* The dump helper (see the file comment); returns the exit status. */
static int dump(const char *what)
{
    if (!strcmp(what, "widen")) {
        for (unsigned b = 0; b < 256; b++) {
            uint32_t u = tendo__f32_bits(tendo_f8e4m3_to_f32((tendo_f8e4m3){(uint8_t)b}));
            if (put(&u, 4))
                return 1;
        }
        for (unsigned b = 0; b < 256; b++) {
            uint32_t u = tendo__f32_bits(tendo_f8e5m2_to_f32((tendo_f8e5m2){(uint8_t)b}));
            if (put(&u, 4))
                return 1;
        }
        return fflush(stdout) != 0;
    }
    int is64 = !strcmp(what, "f64");
    if (!is64 && strcmp(what, "f32"))
        return 2;
    for (;;) {
        unsigned char in[8], out[2];
        size_t sz = is64 ? 8 : 4;
        size_t got = fread(in, 1, sz, stdin);
        if (got == 0)
            break;
        if (got != sz)
            return 1;
        if (is64) {
            double d;
            memcpy(&d, in, 8);
            out[0] = tendo_f64_to_f8e4m3(d).bits, out[1] = tendo_f64_to_f8e5m2(d).bits;
        } else {
            float f;
            memcpy(&f, in, 4);
            out[0] = tendo_f32_to_f8e4m3(f).bits, out[1] = tendo_f32_to_f8e5m2(f).bits;
        }
        if (put(out, 2))
            return 1;
    }
    return fflush(stdout) != 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "dump"))
        return dump(argv[2]);
    plan_lazy();
    build_tables();
    fmt8 *fmts[] = {&E4M3, &E5M2};
    for (int i = 0; i < 2; i++) {
        test_widen(fmts[i]);
        test_f16_inputs(fmts[i]);
        test_edges(fmts[i]);
        test_random(fmts[i]);
        test_f64(fmts[i]);
    }
    test_i64_odd();
    return done_testing();
}
