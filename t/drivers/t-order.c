/* t/drivers/t-order.c - sort, argsort, topk (float, int and uint dtypes), cumsum
 * (every dtype) and var/std (float dtypes) against references computed here
 * in double (int64_t for the integers): on contiguous, transposed,
 * step-sliced, expanded and flipped inputs, along every dim (negative ones
 * too), with many ties (stability: equal keys keep their order), NaN
 * (last ascending, first descending, like torch.sort), -0.0 and +0.0
 * (equal: kept in order, their bits kept), topk's ties and k = 0 / size,
 * long rows (the heap and the merge paths), cumsum's int64 wraparound,
 * var/std with several corrections and N = 1, empty dims and 0-d tensors,
 * and the errors (bad dim, bad k, NULL).  The body is t/bodies/order-body.h; it
 * runs on the CPU, then on cuda:0 where there is one (the simulated
 * device of a --enable-cuda-sim build), against the same references: the
 * sort's order bit for bit, rows longer than the GPU's shared-memory sort
 * tile (the merge passes) included. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#define TEST_KINDS T_ALL
#include "dt.h"

/* The low `bits` bits set (1..64). */
static uint64_t t_mask(int bits) { return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << (bits & 63)) - 1; }

/* v modulo 2^bits, as a signed (sgn) or unsigned integer of that width. */
static int64_t t_wrap(uint64_t v, int bits, bool sgn)
{
    v &= t_mask(bits);
    if (sgn && (v >> (bits - 1)) & 1)
        v |= ~t_mask(bits);
    return (int64_t)v;
}

static void t_ielem(t_check *c, const char *what, int64_t i, int64_t got, int64_t want)
{
    c->n++;
    if (got != want && !c->bad++)
        snprintf(c->first, sizeof c->first, "%s: element %lld: got %lld, wanted %lld", what, (long long)i,
                 (long long)got, (long long)want);
}

/* An i64 tensor read back (freed by the caller). */
static int64_t *t_i64s(const tensor_i64 *t)
{
    int64_t n = tensor_numel(t), *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v || tensor_copy_to(t, v, n) != TENDO_OK)
        bail("copy_to failed");
    return v;
}

/* Whether key a goes strictly before key b: doubles (isf) with NaN last
 * ascending and first descending, else the int64 keys (their bits as an
 * unsigned value unless sgn: a u64 past 2^63). */
static bool t_key_before(bool isf, bool sgn, double da, double db, int64_t ia, int64_t ib, bool desc)
{
    if (isf) {
        bool na = isnan(da), nb = isnan(db);
        if (na || nb)
            return desc ? na && !nb : !na && nb;
        return desc ? da > db : da < db;
    }
    if (!sgn)
        return desc ? (uint64_t)ia > (uint64_t)ib : (uint64_t)ia < (uint64_t)ib;
    return desc ? ia > ib : ia < ib;
}

/* The stable order of the n keys (dk or ik) at stride `step` from `base`:
 * insertion sort, which is stable by construction; into ord[0..n). */
static void t_ref_order(bool isf, bool sgn, const double *dk, const int64_t *ik, int64_t base, int64_t step,
                        int64_t n, bool desc, int64_t *ord)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0 && t_key_before(isf, sgn, dk[base + i * step], dk[base + ord[j - 1] * step], ik[base + i * step],
                                     ik[base + ord[j - 1] * step], desc)) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
}

/* The shapes every op is checked on (0-d, 1-d, empty dims, 3-d). */
static const struct {
    int nd;
    int64_t s[3];
} t_shapes[] = {{0, {0}}, {1, {37}}, {2, {7, 5}}, {2, {1, 9}}, {3, {3, 4, 6}}, {2, {0, 5}}, {2, {4, 0}}, {3, {2, 1, 33}}};
#define T_NSHAPES ((int)(sizeof t_shapes / sizeof t_shapes[0]))

/* The data sets of the random inputs (see oelem in t/bodies/order-body.h). */
enum { OD_TIES, OD_EIGHTHS };

/* Where the body's tensors live (the CPU, then cuda:0), and what its
 * test names say about it. */
static tendo_device t_dev;
static const char *t_on = "";

#define TEST_BODY "layouts-body.h" /* the views every body builds its inputs with */
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "order-body.h"
#include "each-dtype.h"

int main(void)
{
    t_dev = tendo_cpu();
    FOR_EACH_DTYPE(test_order);
    if (!tendo_cuda_available()) {
        skip(1, "no CUDA device: sort, argsort, topk, cumsum, var and std on cuda:0");
        return done_testing();
    }
    t_dev = tendo_cuda(0);
    t_on = " cuda:0";
    FOR_EACH_DTYPE(test_order);
    return done_testing();
}
