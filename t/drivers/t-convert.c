/* t/drivers/t-convert.c - dtype conversion between every ordered pair of dtypes on
 * contiguous, offset, transposed, strided, flipped and expanded inputs
 * (the body is t/bodies/convert-body.h), bit-exact against API.md's cast rules:
 * float -> float rounds once from the exact value; float -> int/uint
 * truncates toward zero, saturates, NaN -> 0; int -> int wraps modulo
 * 2^bits; int -> float rounds once (i64 past 2^53 included: the reference
 * rounds the exact integer itself); anything -> bool is x != 0 (NaN true);
 * bool -> anything 0 or 1. */
#include <stdbool.h>
#include <string.h>

#define TEST_KINDS T_ALL
#include "dt.h"
#include "core/internal.h"

/* An element's exact value: an integer (int, uint, bool dtypes) or a double
 * (float dtypes: every one of their values is a double). */
typedef struct {
    bool is_int;
    bool uns; /* i holds an unsigned value's bits (a u64 past 2^63) */
    int64_t i;
    double d;
} t_exact;

/* The low `bits` bits set (bits in 1..64). */
static uint64_t t_mask(int bits) { return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << (bits & 63)) - 1; }

/* i rounded to p significant bits, to nearest, ties to even, in integer
 * arithmetic: exactly representable in a double for p <= 53, so that a
 * float dtype's from_double of it rounds nothing more (its range aside:
 * overflow is the same for the rounded and the exact value). */
static double t_round_uint(uint64_t m, int p);
static double t_round_int(int64_t i, int p)
{
    uint64_t m = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    double r = t_round_uint(m, p);

    return i < 0 ? -r : r;
}

/* The same for the unsigned m. */
static double t_round_uint(uint64_t m, int p)
{
    int len = 0, shift;
    uint64_t q, rem, half;

    for (uint64_t x = m; x; x >>= 1)
        len++;
    if (len <= p)
        return (double)m;
    shift = len - p;
    q = m >> shift;
    rem = m & t_mask(shift);
    half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return ldexp((double)q, shift);
}

/* Per dtype: the raw bits of an element (NaNs collapsed to one pattern,
 * since only NaN-ness is promised across conversions). */
static uint64_t nan_or(bool nan, uint64_t bits) { return nan ? UINT64_MAX : bits; }
#define TEST_BODY "convert-helpers.h"
#include "each-dtype.h"
#undef TEST_BODY
#define DEFINE_BITS(name, NAME, ct)                                         \
    static uint64_t bits_##name(ct x)                                       \
    {                                                                       \
        uint64_t b = 0;                                                     \
        t_exact v = exact_##name(x);                                        \
        memcpy(&b, &x, sizeof x);                                           \
        return nan_or(!v.is_int && isnan(v.d), b);                          \
    }
TENDO_FOREACH_DTYPE(DEFINE_BITS)
#define TEST_BODY "convert-body.h"
#include "each-dtype.h"

int main(void)
{
    /* the reference's integer rounding itself, on cases worked by hand */
    is_double(0x1p53, t_round_int((INT64_C(1) << 53) + 1, 53), 0, "2^53+1 -> 53 bits: tie to even, down");
    is_double(0x1p53 + 4, t_round_int((INT64_C(1) << 53) + 3, 53), 0, "2^53+3 -> 53 bits: tie to even, up");
    is_double(0x1p63, t_round_int(INT64_MAX, 24), 0, "INT64_MAX -> 24 bits: 2^63");
    is_double(-0x1p63, t_round_int(INT64_MIN, 11), 0, "INT64_MIN -> 11 bits: exact");
    is_double(2048, t_round_int(2049, 11), 0, "2049 -> 11 bits: tie to even, down");
    is_double(2052, t_round_int(2051, 11), 0, "2051 -> 11 bits: tie to even, up");
    is_double(-16777216, t_round_int(-16777217, 24), 0, "-(2^24+1) -> 24 bits");
    is_double(0x1p64, t_round_uint(UINT64_MAX, 24), 0, "UINT64_MAX -> 24 bits: 2^64");
    is_double(0x1p63 + 0x1p41, t_round_uint((UINT64_C(1) << 63) + (UINT64_C(1) << 40) + (UINT64_C(1) << 39), 24),
              0, "2^63 + 2^40 + 2^39 -> 24 bits: tie to even, up");
    FOR_EACH_DTYPE(test_convert);
    return done_testing();
}
