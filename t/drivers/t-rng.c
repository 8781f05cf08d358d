/* t/drivers/t-rng.c - tests of the Philox-4x32-10 core (src/core/philox.h) and of the
 * host fill loops (src/core/rng.c).
 *
 * Known answers, the exact mapping from (seed, index) to counter and key,
 * exact agreement of the block path with the one-counter formula, chunking
 * independence, and the first two moments of the distributions.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "core/rng.h"
#include "tap.h"

/* ---- helpers ----------------------------------------------------------- */

/* Returns a zeroed buffer of n elements of `size` bytes; bails on failure. */
static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p == NULL)
        bail("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* Returns true when the four words agree; prints both on a mismatch. */
static bool same_words(const uint32_t want[4], const uint32_t seen[4])
{
    if (memcmp(want, seen, 4 * sizeof want[0]) == 0)
        return true;
    diag("wanted: %08x %08x %08x %08x", (unsigned)want[0], (unsigned)want[1],
         (unsigned)want[2], (unsigned)want[3]);
    diag("  seen: %08x %08x %08x %08x", (unsigned)seen[0], (unsigned)seen[1],
         (unsigned)seen[2], (unsigned)seen[3]);
    return false;
}

/* ---- known answers ----------------------------------------------------- */

struct kat {
    uint32_t ctr[4], key[2], want[4];
};

/* Philox4x32-10 known-answer vectors from the Random123 distribution
 * (https://github.com/DEShawResearch/random123, commit 9545ff6413f2):
 * the three "philox4x32 10" lines of tests/kat_vectors (lines 27-29:
 * counter and key all zero, all ones, and digits of pi), then two lines of
 * tests/old_kat_vectors (key 1:0 and 0:1, unequal halves).  Each line
 * lists CTR (4 words), KEY (2 words), EXPECTED (4 words), in hex. */
static const struct kat kats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    {{0x00000001, 0x00000000, 0x00000000, 0x00000000}, {0x00000001, 0x00000000},
     {0xac08141b, 0xdfc5ccbe, 0x79c07a47, 0xa7f66093}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0x00000000, 0x00000001},
     {0x126514c3, 0xd1898b69, 0xda2707b3, 0x6e6fb436}},
};

/* Checks tendo__philox4x32_10 against every known answer. */
static void test_kat(void)
{
    for (size_t i = 0; i < sizeof kats / sizeof kats[0]; i++) {
        uint32_t out[4];
        tendo__philox4x32_10(kats[i].ctr, kats[i].key, out);
        ok(same_words(kats[i].want, out), "philox4x32-10 known answer %zu", i);
    }
}

/* Checks how tendo__philox_draw turns (seed, index) into key and counter. */
static void test_draw_mapping(void)
{
    uint32_t out[4];
    const uint64_t seed = 0x299f31d0a4093822u, index = 0x85a308d3243f6a88u;
    const uint32_t ctr[4] = {0x243f6a88, 0x85a308d3, 0, 0};
    const uint32_t key[2] = {0xa4093822, 0x299f31d0};
    uint32_t want[4];

    tendo__philox_draw(0, 0, out);
    ok(same_words(kats[0].want, out), "draw(seed 0, index 0) is the all-zero known answer");

    tendo__philox4x32_10(ctr, key, want);
    tendo__philox_draw(seed, index, out);
    ok(same_words(want, out), "draw: counter = index low:high:0:0, key = seed low:high");
}

/* Checks the word-to-number conversions at their end points. */
static void test_conversions(void)
{
    const double r_max = sqrt(-2.0 * log(0x1p-24)); /* radius at u1 = 2^-24 */

    is_double(0.0, tendo__uniform_f32_from(0u), 0.0, "uniform f32 of 0 is 0");
    is_double(1.0 - 0x1p-24, tendo__uniform_f32_from(0xffffffffu), 0.0,
              "uniform f32 of all ones is 1 - 2^-24");
    is_double(0x1p-24, tendo__uniform_f32_from(0x100u), 0.0,
              "uniform f32 uses the top 24 bits");
    is_double(0.0, tendo__uniform_f64_from(0u, 0u), 0.0, "uniform f64 of 0 is 0");
    is_double(1.0 - 0x1p-53, tendo__uniform_f64_from(0xffffffffu, 0xffffffffu), 0.0,
              "uniform f64 of all ones is 1 - 2^-53");
    is_double(0.5, tendo__uniform_f64_from(0x80000000u, 0u), 0.0,
              "uniform f64 takes x0 as the high word");
    is_double(0.0, tendo__normal_f32_from(0xffffffffu, 0u), 0.0,
              "normal f32: u1 = 1 gives 0");
    is_double(r_max, tendo__normal_f32_from(0u, 0u), 1e-5,
              "normal f32: u1 = 2^-24, u2 = 0 gives sqrt(48 ln 2)");
    is_double(-r_max, tendo__normal_f32_from(0u, 0x80000000u), 1e-5,
              "normal f32: u2 = 1/2 gives the negative radius");
    is_double(0.0, tendo__normal_f64_from(0xffffffffu, 0xffffffffu, 0u, 0u), 0.0,
              "normal f64: u1 = 1 gives 0");
    is_double(sqrt(-2.0 * log(0x1p-53)), tendo__normal_f64_from(0u, 0u, 0u, 0u), 1e-12,
              "normal f64: u1 = 2^-53, u2 = 0 gives sqrt(106 ln 2)");
}

/* ---- the fill loops against the one-counter formula -------------------- */

/* Returns how many of out[0..n) differ from the one-counter formula for
 * counters first+k; `kind` 0-3: uniform f32, normal f32, uniform f64,
 * normal f64. */
static int64_t count_formula_mismatches(int kind, uint64_t seed, int64_t first, int64_t n)
{
    float *f = xcalloc((size_t)n, sizeof *f);
    double *d = xcalloc((size_t)n, sizeof *d);
    int64_t bad = 0;

    if (kind == 0)
        tendo__rand_uniform_f32(seed, first, n, f);
    else if (kind == 1)
        tendo__rand_normal_f32(seed, first, n, f);
    else if (kind == 2)
        tendo__rand_uniform_f64(seed, first, n, d);
    else
        tendo__rand_normal_f64(seed, first, n, d);

    for (int64_t k = 0; k < n; k++) {
        uint32_t x[4];
        tendo__philox_draw(seed, (uint64_t)(first + k), x);
        if (kind == 0)
            bad += f[k] != tendo__uniform_f32_from(x[0]);
        else if (kind == 1)
            bad += f[k] != tendo__normal_f32_from(x[0], x[1]);
        else if (kind == 2)
            bad += d[k] != tendo__uniform_f64_from(x[0], x[1]);
        else
            bad += d[k] != tendo__normal_f64_from(x[0], x[1], x[2], x[3]);
    }
    free(f);
    free(d);
    return bad;
}

static const char *const kind_name[4] = {"uniform f32", "normal f32", "uniform f64",
                                         "normal f64"};

/* Checks every fill loop, bit for bit, against the one-counter formula,
 * including ranges whose low counter word wraps into the high word. */
static void test_fill_matches_formula(void)
{
    const int64_t wrap = (int64_t)1 << 32;
    for (int kind = 0; kind < 4; kind++) {
        is_int(0, count_formula_mismatches(kind, 0x0123456789abcdefu, 0, 5000),
               "%s: counters 0..4999 match the formula", kind_name[kind]);
        is_int(0, count_formula_mismatches(kind, 7, 12345, 3001),
               "%s: counters from 12345 match the formula", kind_name[kind]);
        is_int(0, count_formula_mismatches(kind, 99, wrap - 700, 1500),
               "%s: counters across 2^32 match the formula", kind_name[kind]);
    }
}

/* ---- determinism and chunking ------------------------------------------ */

/* Fills out[0..n) from counter `first` on with fill loop `kind`, as bytes
 * (elements of 4 bytes for f32, 8 for f64). */
static void fill_kind(int kind, uint64_t seed, int64_t first, int64_t n, void *out)
{
    if (kind == 0)
        tendo__rand_uniform_f32(seed, first, n, out);
    else if (kind == 1)
        tendo__rand_normal_f32(seed, first, n, out);
    else if (kind == 2)
        tendo__rand_uniform_f64(seed, first, n, out);
    else
        tendo__rand_normal_f64(seed, first, n, out);
}

/* Returns the element size in bytes of fill loop `kind`. */
static size_t kind_size(int kind) { return kind < 2 ? sizeof(float) : sizeof(double); }

/* Same seed gives the same bits; another seed gives different ones. */
static void test_determinism(void)
{
    const int64_t n = 10000;
    for (int kind = 0; kind < 4; kind++) {
        size_t sz = kind_size(kind);
        unsigned char *a = xcalloc((size_t)n, sz);
        unsigned char *b = xcalloc((size_t)n, sz);
        int64_t equal = 0;

        fill_kind(kind, 2024, 0, n, a);
        fill_kind(kind, 2024, 0, n, b);
        ok(memcmp(a, b, (size_t)n * sz) == 0, "%s: same seed, same bits", kind_name[kind]);

        fill_kind(kind, 2025, 0, n, b);
        for (int64_t k = 0; k < n; k++)
            equal += memcmp(a + k * (int64_t)sz, b + k * (int64_t)sz, sz) == 0;
        /* Two 24-bit (or wider) values collide with probability <= 2^-24. */
        ok(equal <= 2, "%s: seeds 2024 and 2025 differ (%lld equal elements)",
           kind_name[kind], (long long)equal);

        fill_kind(kind, (uint64_t)1 << 32 | 2024, 0, n, b);
        ok(memcmp(a, b, (size_t)n * sz) != 0, "%s: the high seed word matters",
           kind_name[kind]);
        free(a);
        free(b);
    }
}

/* Generating [0,k) and then [k,n) with first = k equals one call over [0,n). */
static void test_chunking(void)
{
    const int64_t n = 4099;
    const int64_t cuts[] = {1, 255, 256, 257, 1000, 4098};
    for (int kind = 0; kind < 4; kind++) {
        size_t sz = kind_size(kind);
        unsigned char *whole = xcalloc((size_t)n, sz);
        unsigned char *parts = xcalloc((size_t)n, sz);
        int same = 1;

        fill_kind(kind, 31337, 0, n, whole);
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            int64_t k = cuts[c];
            memset(parts, 0, (size_t)n * sz);
            fill_kind(kind, 31337, 0, k, parts);
            fill_kind(kind, 31337, k, n - k, parts + k * (int64_t)sz);
            if (memcmp(whole, parts, (size_t)n * sz) != 0) {
                diag("cut at %lld differs", (long long)k);
                same = 0;
            }
        }
        /* Many small pieces of odd lengths, too. */
        memset(parts, 0, (size_t)n * sz);
        for (int64_t k = 0, len = 1; k < n; k += len, len = len * 3 % 1021 + 1)
            fill_kind(kind, 31337, k, (len < n - k ? len : n - k), parts + k * (int64_t)sz);
        if (memcmp(whole, parts, (size_t)n * sz) != 0) {
            diag("odd-length pieces differ");
            same = 0;
        }
        ok(same, "%s: chunked generation equals one-shot", kind_name[kind]);
        free(whole);
        free(parts);
    }
}

/* ---- distributions ----------------------------------------------------- */

/* Tolerances: each check allows 5 standard errors of its estimator, computed
 * from the theory for n independent draws:
 *   uniform on [0,1): mean 1/2, SE sqrt(1/(12n)); variance 1/12, and the
 *     estimator's SE is sqrt(Var((U-1/2)^2)/n) = sqrt((1/80 - 1/144)/n)
 *     = sqrt(1/(180n));
 *   standard normal: mean 0, SE sqrt(1/n); variance 1, SE sqrt(2/n);
 *     P(|Z| < 1) = erf(1/sqrt 2) = 0.682689..., SE sqrt(p(1-p)/n).
 * The 24-bit (53-bit) grid moves the uniform's mean by 2^-25 (2^-54) and
 * its variance by less, far below these tolerances.  With 5 SE a correct
 * generator fails a given check with probability about 6e-7, and the
 * seeds are fixed, so the outcome is reproducible. */
#define STAT_N 1000000
#define STAT_Z 5.0

/* Returns the mean of v[0..n). */
static double mean_of(const double *v, int64_t n)
{
    double s = 0.0;
    for (int64_t k = 0; k < n; k++)
        s += v[k];
    return s / (double)n;
}

/* Returns the variance (divisor n) of v[0..n) about `mean`. */
static double variance_of(const double *v, int64_t n, double mean)
{
    double s = 0.0;
    for (int64_t k = 0; k < n; k++)
        s += (v[k] - mean) * (v[k] - mean);
    return s / (double)n;
}

/* Checks n uniforms (as doubles) for range, mean and variance. */
static void check_uniform(const char *name, const double *v, int64_t n)
{
    int64_t outside = 0;
    for (int64_t k = 0; k < n; k++)
        outside += !(v[k] >= 0.0 && v[k] < 1.0);
    is_int(0, outside, "%s: all %lld values in [0,1)", name, (long long)n);

    double m = mean_of(v, n), var = variance_of(v, n, m);
    is_double(0.5, m, STAT_Z * sqrt(1.0 / (12.0 * (double)n)), "%s: mean 1/2", name);
    is_double(1.0 / 12.0, var, STAT_Z * sqrt(1.0 / (180.0 * (double)n)),
              "%s: variance 1/12", name);
}

/* Checks n normals (as doubles) for finiteness, mean, variance and the
 * fraction inside one standard deviation. */
static void check_normal(const char *name, const double *v, int64_t n)
{
    const double p1 = 0.68268949213708590; /* erf(1/sqrt(2)) */
    int64_t bad = 0, inside = 0;
    for (int64_t k = 0; k < n; k++) {
        bad += !isfinite(v[k]);
        inside += fabs(v[k]) < 1.0;
    }
    is_int(0, bad, "%s: all %lld values finite", name, (long long)n);

    double m = mean_of(v, n), var = variance_of(v, n, m);
    is_double(0.0, m, STAT_Z * sqrt(1.0 / (double)n), "%s: mean 0", name);
    is_double(1.0, var, STAT_Z * sqrt(2.0 / (double)n), "%s: variance 1", name);
    is_double(p1, (double)inside / (double)n, STAT_Z * sqrt(p1 * (1.0 - p1) / (double)n),
              "%s: P(|z| < 1) = 0.6827", name);
}

/* Draws STAT_N values of every kind and checks their distributions. */
static void test_distributions(void)
{
    const int64_t n = STAT_N;
    float *f = xcalloc((size_t)n, sizeof *f);
    double *d = xcalloc((size_t)n, sizeof *d);

    tendo__rand_uniform_f32(12345, 0, n, f);
    for (int64_t k = 0; k < n; k++)
        d[k] = f[k];
    check_uniform("uniform f32", d, n);

    tendo__rand_uniform_f64(54321, 1000, n, d);
    check_uniform("uniform f64", d, n);

    tendo__rand_normal_f32(777, 0, n, f);
    for (int64_t k = 0; k < n; k++)
        d[k] = f[k];
    check_normal("normal f32", d, n);

    tendo__rand_normal_f64(888, 5, n, d);
    check_normal("normal f64", d, n);

    free(f);
    free(d);
}

/* ---- main -------------------------------------------------------------- */

int main(void)
{
    plan_lazy();
    test_kat();
    test_draw_mapping();
    test_conversions();
    test_fill_matches_formula();
    test_determinism();
    test_chunking();
    test_distributions();
    return done_testing();
}
