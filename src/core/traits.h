/* src/core/traits.h - the dtype table: what kernels need to know of a
 * storage dtype (in the manner of ggml's type_traits).
 *
 * Kernels exist once per accumulation type (float, double, int64_t), not
 * once per storage dtype.  A storage dtype is its size plus two conversions of runs of
 * elements, to and from its compute type; a kernel reads its input through
 * widen, computes, and writes through narrow.  The table is generated from
 * gen/dtypes.toml (templates/api/traits.c.j2 -> src/gen/traits.c).
 */
#ifndef TENDO_SRC_CORE_TRAITS_H
#define TENDO_SRC_CORE_TRAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tendo/dtype.h"

/* The types reductions accumulate in: one set of CPU kernels each (float
 * for f32 and the narrower floats, double for f64, int64_t for the signed
 * integers and bool, uint64_t for the unsigned integers). */
typedef enum { TENDO__COMPUTE_FLOAT, TENDO__COMPUTE_DOUBLE, TENDO__COMPUTE_INT64, TENDO__COMPUTE_UINT64 } tendo__compute;

typedef struct tendo__traits {
    const char *name;       /* "bf16" */
    size_t size;            /* bytes per element */
    tendo__compute compute; /* what its kernels compute in */
    size_t compute_size;    /* bytes of one compute-type value */
    /* The elements already are the compute type: dense runs are read and
     * written in place, with no conversion. */
    bool own_compute;
    /* n elements starting at x, `stride` elements apart (0 repeats the
     * first), widened exactly to the compute type into the dense out. */
    void (*widen)(const void *x, int64_t stride, void *out, int64_t n);
    /* n dense compute-type values at x, each rounded once into y, `stride`
     * elements apart.  x and y may be the same memory when stride is 1 and
     * the sizes are equal. */
    void (*narrow)(const void *x, void *y, int64_t stride, int64_t n);
    /* For a dtype that computes in float, or NULL: out[i] = (a[i] + b[i])
     * * scale for n dense elements, a the first operand, in float and
     * rounded once, in one pass (what widen, an add and narrow give,
     * without the float buffers); out may be a or b. */
    void (*add_pairs)(const void *a, const void *b, void *out, int64_t n, float scale);
} tendo__traits;

/* The table entry of a dtype this build has (never NULL for one). */
const tendo__traits *tendo__traits_of(tendo_dtype dt);
/* The dtype whose elements are compute type c itself (f32 for float, f64
 * for double, i64 for int64_t); 0 when this build has none, and then no
 * dtype of the build computes in c. */
tendo_dtype tendo__compute_dtype(tendo__compute c);

#endif /* TENDO_SRC_CORE_TRAITS_H */
