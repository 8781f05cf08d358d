/* t/drivers/t-kinds.c - the ops of the registry (gen/registry/) on the integer,
 * unsigned and bool dtypes (and the bool-result ops on the floats), against
 * references computed here in int64_t (double for the floats): wrapping
 * add/sub/mul, Python's floor_divide/remainder (divisor 0 gives 0),
 * bitwise, neg/abs/sign/relu/clamp, comparisons and their _scalar (in
 * double), logical ops, where, masked_fill, sum/prod (i64, wrapping),
 * max/min, argmax/argmin (first on ties, NaN wins), any/all, sum_all.
 * Every op on contiguous, transposed, sliced-with-step, expanded and
 * flipped inputs and broadcast patterns; then explicit edge cases at every
 * width (INT_MIN / -1, wraparound, division by zero, negative operands),
 * and the _Generic front and the _out forms.  The body is t/bodies/kinds-body.h. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#define TEST_KINDS T_ALL
#include "dt.h"

/* The low `bits` bits set (1..64). */
static uint64_t t_mask(int bits) { return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << (bits & 63)) - 1; }

/* v modulo 2^bits, as the value of a signed (sgn) or unsigned integer of
 * that width. */
static int64_t t_wrap(uint64_t v, int bits, bool sgn)
{
    v &= t_mask(bits);
    if (sgn && (v >> (bits - 1)) & 1)
        v |= ~t_mask(bits);
    return (int64_t)v;
}

/* a < b for the values of a signed (sgn) or unsigned integer dtype held in
 * int64_t: a u64 past 2^63 is negative as int64_t but the largest unsigned. */
static bool t_less(int64_t a, int64_t b, bool sgn) { return sgn ? a < b : (uint64_t)a < (uint64_t)b; }

/* Python's a // b and a % b on exact integers (b != 0), before wrapping;
 * the quotient of INT64_MIN // -1 is 2^63, returned wrapped (INT64_MIN). */
static int64_t t_floordiv(int64_t a, int64_t b)
{
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}
static int64_t t_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

enum { B_ADD, B_SUB, B_MUL, B_MAX, B_MIN, B_FDIV, B_REM, B_AND, B_OR, B_XOR, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,
       B_LAND, B_LOR, B_LXOR };

/* The reference of binary op on the values a, b of a dtype of `bits` bits
 * (sgn: signed; uns: unsigned, where a and b hold the unsigned value). */
static int64_t t_ref_bin(int op, int64_t a, int64_t b, int bits, bool sgn)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case B_ADD: return t_wrap(ua + ub, bits, sgn);
    case B_SUB: return t_wrap(ua - ub, bits, sgn);
    case B_MUL: return t_wrap(ua * ub, bits, sgn);
    case B_MAX: return t_less(b, a, sgn) ? a : b;
    case B_MIN: return t_less(a, b, sgn) ? a : b;
    case B_FDIV: return b == 0 ? 0 : t_wrap((uint64_t)(sgn ? t_floordiv(a, b) : (int64_t)(ua / ub)), bits, sgn);
    case B_REM: return b == 0 ? 0 : sgn ? t_mod(a, b) : (int64_t)(ua % ub);
    case B_AND: return t_wrap(ua & ub, bits, sgn);
    case B_OR: return t_wrap(ua | ub, bits, sgn);
    case B_XOR: return t_wrap(ua ^ ub, bits, sgn);
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return t_less(a, b, sgn);
    case B_LE: return !t_less(b, a, sgn);
    case B_GT: return t_less(b, a, sgn);
    case B_GE: return !t_less(a, b, sgn);
    case B_LAND: return a != 0 && b != 0;
    case B_LOR: return a != 0 || b != 0;
    case B_LXOR: return (a != 0) != (b != 0);
    }
    return 0;
}

/* Comparisons in double (the _scalar forms, and the float dtypes). */
static int t_ref_cmp(int op, double a, double b)
{
    switch (op) {
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_LAND: return a != 0 && b != 0;
    case B_LOR: return a != 0 || b != 0;
    case B_LXOR: return (a != 0) != (b != 0);
    }
    return 0;
}

static const char *const t_bin_name[] = {"add", "sub", "mul", "maximum", "minimum", "floor_divide", "remainder",
                                         "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt",
                                         "ge", "logical_and", "logical_or", "logical_xor"};

/* Broadcast patterns: a's shape, then b's (and the where/masked_fill cond). */
static struct t_pat {
    int na;
    int64_t a[3];
    int nb;
    int64_t b[3];
} t_pats[] = {
    {2, {7, 5}, 2, {7, 5}}, {2, {7, 5}, 1, {5}}, {2, {7, 1}, 2, {1, 5}}, {2, {6, 4}, 0, {0}},
    {3, {3, 7, 5}, 2, {7, 5}}, {1, {5}, 3, {3, 7, 5}}, {2, {40, 30}, 2, {40, 30}},
    {2, {0, 0}, 2, {0, 0}}, /* random, filled in by main */
};
#define T_NPATS ((int)(sizeof t_pats / sizeof t_pats[0]))

/* i64 and bool results read back. */
static int64_t *t_i64s(const tensor_i64 *t)
{
    int64_t n = tensor_numel(t), *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v || tensor_copy_to(t, v, n) != TENDO_OK)
        bail("copy_to failed");
    return v;
}
static bool *t_bools(const tensor_bool *t)
{
    int64_t n = tensor_numel(t);
    bool *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v || tensor_copy_to(t, v, n) != TENDO_OK)
        bail("copy_to failed");
    return v;
}

static void t_ielem(t_check *c, const char *what, int64_t i, int64_t got, int64_t want)
{
    c->n++;
    if (got != want && !c->bad++)
        snprintf(c->first, sizeof c->first, "%s: element %lld: got %lld, wanted %lld", what, (long long)i,
                 (long long)got, (long long)want);
}

/* A bool tensor of the given shape (random, or a layout), for where/masked_fill. */
static tensor_bool *t_rand_bool(int nd, const int64_t *shape, uint64_t *rng)
{
    int64_t n = t_numel(nd, shape);
    bool *v = malloc((size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = t_rand_u64(rng) % 3 == 0;
    tensor_bool *t = tensor_bool_from_data(v, nd, shape, tendo_cpu());
    free(v);
    return t;
}

enum { U_NEG, U_ABS, U_SIGN, U_RELU, U_NOT, U_CLAMP, U_LNOT, U_ISNAN, U_ISINF, U_ISFINITE };
enum { R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_ANY, R_ALL, R_COUNT };

#define TEST_BODY "layouts-body.h" /* the views every body builds its inputs with */
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "kinds-body.h"
#include "each-dtype.h"

int main(void)
{
    uint64_t rng = 77;
    t_pats[T_NPATS - 1].a[0] = t_pats[T_NPATS - 1].b[0] = 1 + (int64_t)(t_rand_u64(&rng) % 9);
    t_pats[T_NPATS - 1].a[1] = t_pats[T_NPATS - 1].b[1] = 1 + (int64_t)(t_rand_u64(&rng) % 11);
    if (t_rand_u64(&rng) & 1)
        t_pats[T_NPATS - 1].b[0] = 1;
    FOR_EACH_DTYPE(test_kinds);
    return done_testing();
}
