/* src/comm/fold.c - the ranks' blocks of a buffer reduced into one, in the
 * dtype's compute type: what MPI has no type or op for (the 16- and 8-bit
 * floats, AVG), done here, the same way on every rank. */
#include "comm/comm.h"
#include "core/traits.h"

#define FOLD_CHUNK 2048

/* The fold of one compute type T: acc over the blocks in rank order, then
 * AVG's division, each value rounded once by narrow.  MAX and MIN of
 * floats propagate NaN (tendo's maximum and minimum). */
#define FOLD_BODY(T, ADD, MUL, MAXF, MINF)                                                            \
    do {                                                                                           \
        T acc[FOLD_CHUNK], v[FOLD_CHUNK];                                                          \
        for (int64_t at = 0; at < n; at += FOLD_CHUNK) {                                           \
            int64_t m = n - at < FOLD_CHUNK ? n - at : FOLD_CHUNK;                                 \
            tr->widen((const char *)in + (size_t)at * tr->size, 1, acc, m);                        \
            for (int b = 1; b < nb; b++) {                                                         \
                tr->widen((const char *)in + (size_t)(b * stride + at) * tr->size, 1, v, m);       \
                switch (op) { /* one loop per op, so that each vectorises */                       \
                case TENDO_REDUCE_MAX:                                                             \
                    for (int64_t i = 0; i < m; i++)                                                \
                        acc[i] = MAXF(acc[i], v[i]);                                               \
                    break;                                                                         \
                case TENDO_REDUCE_MIN:                                                             \
                    for (int64_t i = 0; i < m; i++)                                                \
                        acc[i] = MINF(acc[i], v[i]);                                               \
                    break;                                                                         \
                case TENDO_REDUCE_PROD:                                                            \
                    for (int64_t i = 0; i < m; i++)                                                \
                        acc[i] = MUL(acc[i], v[i]);                                                \
                    break;                                                                         \
                case TENDO_REDUCE_SUM:                                                             \
                case TENDO_REDUCE_AVG:                                                             \
                    for (int64_t i = 0; i < m; i++)                                                \
                        acc[i] = ADD(acc[i], v[i]);                                                \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
            if (op == TENDO_REDUCE_AVG)                                                            \
                for (int64_t i = 0; i < m; i++)                                                    \
                    acc[i] = (T)(acc[i] / (T)avg_div);                                             \
            tr->narrow(acc, (char *)out + (size_t)at * tr->size, 1, m);                            \
        }                                                                                          \
    } while (0)

#define PLAIN_ADD(x, y) ((x) + (y))
#define PLAIN_MUL(x, y) ((x) * (y))
#define FMAX_NAN(x, y) ((x) != (x) || (x) > (y) ? (x) : (y))
#define FMIN_NAN(x, y) ((x) != (x) || (x) < (y) ? (x) : (y))
#define IMAX(x, y) ((x) > (y) ? (x) : (y))
#define IMIN(x, y) ((x) < (y) ? (x) : (y))
/* signed integers wrap: their arithmetic is done in uint64_t */
#define WRAP_ADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WRAP_MUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

void tendo__fold(tendo_dtype dt, tendo_reduce_op op, int nb, const void *in, int64_t stride, int64_t n, void *out,
                 int avg_div)
{
    const tendo__traits *tr = tendo__traits_of(dt);

    if (dt == TENDO_BOOL) /* logical or (SUM, MAX) and and (PROD, MIN) */
        op = op == TENDO_REDUCE_SUM ? TENDO_REDUCE_MAX : op == TENDO_REDUCE_PROD ? TENDO_REDUCE_MIN : op;
    switch (tr->compute) {
    case TENDO__COMPUTE_FLOAT:
        FOLD_BODY(float, PLAIN_ADD, PLAIN_MUL, FMAX_NAN, FMIN_NAN);
        break;
    case TENDO__COMPUTE_DOUBLE:
        FOLD_BODY(double, PLAIN_ADD, PLAIN_MUL, FMAX_NAN, FMIN_NAN);
        break;
    case TENDO__COMPUTE_INT64:
        FOLD_BODY(int64_t, WRAP_ADD, WRAP_MUL, IMAX, IMIN);
        break;
    case TENDO__COMPUTE_UINT64:
        FOLD_BODY(uint64_t, PLAIN_ADD, PLAIN_MUL, IMAX, IMIN);
        break;
    }
}
