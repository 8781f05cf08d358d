/* src/comm/fold.c - the ranks' elements reduced in the dtype's compute
 * type: what MPI has no type or op for (the 16- and 8-bit floats, the 8-
 * and 16-bit integers, AVG), done here, the same way on every rank. */
#include <string.h>

#include "comm/comm.h"
#include "core/iter.h"
#include "core/traits.h"

#define FOLD_CHUNK 2048

#define PLAIN_ADD(x, y) ((x) + (y))
#define PLAIN_MUL(x, y) ((x) * (y))
/* MAX and MIN of floats propagate NaN (tendo's maximum and minimum) */
#define FMAX_NAN(x, y) ((x) != (x) || (x) > (y) ? (x) : (y))
#define FMIN_NAN(x, y) ((x) != (x) || (x) < (y) ? (x) : (y))
#define IMAX(x, y) ((x) > (y) ? (x) : (y))
#define IMIN(x, y) ((x) < (y) ? (x) : (y))
/* signed integers wrap: their arithmetic is done in uint64_t */
#define WRAP_ADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WRAP_MUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

/* o[i] = a[i] op v[i] for i < n (o may be a; AVG adds: its division is
 * the caller's), one loop per op, each marked for vectorising (GCC's -O2
 * vectorises by itself only loops whose count needs no epilogue). */
#define COMBINE(o, a, v, n, ADD, MUL, MAXF, MINF)                                                  \
    switch (op) {                                                                                  \
    case TENDO_REDUCE_MAX:                                                                         \
        TENDO__SIMD for (int64_t i = 0; i < (n); i++) o[i] = MAXF(a[i], v[i]);                     \
        break;                                                                                     \
    case TENDO_REDUCE_MIN:                                                                         \
        TENDO__SIMD for (int64_t i = 0; i < (n); i++) o[i] = MINF(a[i], v[i]);                     \
        break;                                                                                     \
    case TENDO_REDUCE_PROD:                                                                        \
        TENDO__SIMD for (int64_t i = 0; i < (n); i++) o[i] = MUL(a[i], v[i]);                      \
        break;                                                                                     \
    case TENDO_REDUCE_SUM:                                                                         \
    case TENDO_REDUCE_AVG:                                                                         \
        TENDO__SIMD for (int64_t i = 0; i < (n); i++) o[i] = ADD(a[i], v[i]);                      \
        break;                                                                                     \
    }

/* o[i] /= div for i < n, in T, when op is AVG. */
#define DIVIDE(T, o, n)                                                                            \
    if (op == TENDO_REDUCE_AVG) {                                                                  \
        TENDO__SIMD for (int64_t i = 0; i < (n); i++) o[i] = (T)(o[i] / (T)div);                   \
    }

/* The body of one compute type T, in chunks: each chunk's values are
 * widened, combined, AVG's sums divided by `div`, and rounded once by
 * narrow into `dst`.  FIRST(at) is the first operand's chunk at element
 * `at`, NEXT(b, at) the b-th of the `nb - 1` others'. */
#define CHUNKS(T, ADD, MUL, MAXF, MINF)                                                            \
    do {                                                                                           \
        T acc[FOLD_CHUNK], v[FOLD_CHUNK];                                                          \
        for (int64_t at = 0; at < n; at += FOLD_CHUNK) {                                           \
            int64_t m = n - at < FOLD_CHUNK ? n - at : FOLD_CHUNK;                                 \
            tr->widen(FIRST(at), 1, acc, m);                                                       \
            for (int b = 1; b < nb; b++) {                                                         \
                tr->widen(NEXT(b, at), 1, v, m);                                                   \
                COMBINE(acc, acc, v, m, ADD, MUL, MAXF, MINF)                                      \
            }                                                                                      \
            DIVIDE(T, acc, m)                                                                      \
            tr->narrow(acc, (char *)dst + (size_t)at * tr->size, 1, m);                            \
        }                                                                                          \
    } while (0)

/* The blocks of a dtype whose elements are its compute type T (FIRST(0),
 * then NEXT(b, 0) for b = 1 .. nb - 1, as CHUNKS reads them), combined
 * straight into out, block 0 first: what CHUNKS computes, the same bits,
 * without its conversion buffers. */
#define DIRECT(T, ADD, MUL, MAXF, MINF)                                                            \
    do {                                                                                           \
        const T *b0 = (const T *)(const void *)FIRST(0);                                           \
        T *o = out;                                                                                \
        if (nb == 1 && o != b0)                                                                    \
            memmove(o, b0, (size_t)n * sizeof(T));                                                 \
        for (int b = 1; b < nb; b++) {                                                             \
            const T *a = b == 1 ? b0 : o, *v = (const T *)(const void *)NEXT(b, 0);                \
            COMBINE(o, a, v, n, ADD, MUL, MAXF, MINF)                                              \
        }                                                                                          \
        DIVIDE(T, o, n)                                                                            \
    } while (0)

/* BODY (CHUNKS or DIRECT) for dt's compute type; bool's SUM is or, its
 * PROD and. */
#define BY_COMPUTE(BODY)                                                                           \
    do {                                                                                           \
        if (dt == TENDO_BOOL)                                                                      \
            op = op == TENDO_REDUCE_SUM ? TENDO_REDUCE_MAX : op == TENDO_REDUCE_PROD ? TENDO_REDUCE_MIN : op; \
        switch (tr->compute) {                                                                     \
        case TENDO__COMPUTE_FLOAT:                                                                 \
            BODY(float, PLAIN_ADD, PLAIN_MUL, FMAX_NAN, FMIN_NAN);                                 \
            break;                                                                                 \
        case TENDO__COMPUTE_DOUBLE:                                                                \
            BODY(double, PLAIN_ADD, PLAIN_MUL, FMAX_NAN, FMIN_NAN);                                \
            break;                                                                                 \
        case TENDO__COMPUTE_INT64:                                                                 \
            BODY(int64_t, WRAP_ADD, WRAP_MUL, IMAX, IMIN);                                         \
            break;                                                                                 \
        case TENDO__COMPUTE_UINT64:                                                                \
            BODY(uint64_t, PLAIN_ADD, PLAIN_MUL, IMAX, IMIN);                                      \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

void tendo__fold(tendo_dtype dt, tendo_reduce_op op, int nb, const void *in, int64_t stride, int64_t n, void *out,
                 int avg_div)
{
    const tendo__traits *tr = tendo__traits_of(dt);
    void *dst = out;
    int div = avg_div;

#define FIRST(at) ((const char *)in + (size_t)(at) * tr->size)
#define NEXT(b, at) ((const char *)in + (size_t)((b) * stride + (at)) * tr->size)
    if (tr->own_compute) {
        BY_COMPUTE(DIRECT);
        return;
    }
    /* two blocks: fold_pair's pair (a narrow float's one-pass sum), block 0
     * the first operand */
    if (nb == 2 && avg_div == 2) {
        tendo__fold_pair(dt, op, in, NEXT(1, 0), out, n);
        return;
    }
    BY_COMPUTE(CHUNKS);
#undef FIRST
#undef NEXT
}

void tendo__fold_pair(tendo_dtype dt, tendo_reduce_op op, const void *x, const void *y, void *out, int64_t n)
{
    const tendo__traits *tr = tendo__traits_of(dt);
    void *dst = out;
    int nb = 2, div = 2; /* AVG: the mean of the two */

    /* a sum or mean in one pass, where the dtype has one (f32's vectors,
     * a narrow float's widen-add-round): the same bits as the chunks below
     * ((x + y) * 0.5 is (x + y) / 2) */
    if (tr->add_pairs && (op == TENDO_REDUCE_SUM || op == TENDO_REDUCE_AVG)) {
        tr->add_pairs(x, y, out, n, op == TENDO_REDUCE_AVG ? 0.5f : 1.0f);
        return;
    }

/* each chunk of x and y is widened before its place in out is written */
#define FIRST(at) ((const char *)x + (size_t)(at) * tr->size)
#define NEXT(k, at) ((void)(k), (const char *)y + (size_t)(at) * tr->size)
    if (tr->own_compute) {
        BY_COMPUTE(DIRECT);
        return;
    }
    BY_COMPUTE(CHUNKS);
#undef FIRST
#undef NEXT
}
