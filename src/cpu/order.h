/* src/cpu/order.h - sort, argsort, topk, cumsum, var and std: the kernels of
 * each accumulation type (templates/cpu_order.c.j2, rendered once per type
 * as src/gen/cpu_order_<float|double|int64>.c), called by the typed entry
 * points of templates/order.c.j2.  Only the types this build's dtypes use
 * are defined.  A tensor on a GPU runs the dtype's launcher cu instead
 * (templates/order.cu.j2; NULL: TENDO_ERR_UNSUPPORTED there), with the
 * same results.
 */
#ifndef TENDO_SRC_CPU_ORDER_H
#define TENDO_SRC_CPU_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/launch.h"

/* The first k elements along dim of a stable sort of a (all of them
 * unless topk; topk checks 0 <= k <= size), descending or ascending (NaN
 * last ascending, first descending).  New tensors of a's shape (dim of
 * size k) go to *values (a's dtype; the elements' own bytes) and *indices
 * (i64); either pointer may be NULL to skip that result.  On failure both
 * are set to NULL and the status returned, with the error set. */
tendo_status tendo__order_float(const char *op, const tendo__tensor *a, int dim, bool descending, bool topk,
                                int64_t k, tendo__tensor **values, tendo__tensor **indices,
                                tendo__cu_rows_fn cu);
tendo_status tendo__order_double(const char *op, const tendo__tensor *a, int dim, bool descending, bool topk,
                                 int64_t k, tendo__tensor **values, tendo__tensor **indices,
                                 tendo__cu_rows_fn cu);
tendo_status tendo__order_int64(const char *op, const tendo__tensor *a, int dim, bool descending, bool topk,
                                int64_t k, tendo__tensor **values, tendo__tensor **indices,
                                tendo__cu_rows_fn cu);

/* Inclusive prefix sums of a along dim, as out_dtype (a float accumulates
 * in double, an integer or bool in wrapping int64); a new tensor or NULL. */
tendo__tensor *tendo__cumsum_float(const char *op, const tendo__tensor *a, int dim, tendo_dtype out_dtype,
                                   tendo__cu_rows_fn cu);
tendo__tensor *tendo__cumsum_double(const char *op, const tendo__tensor *a, int dim, tendo_dtype out_dtype,
                                    tendo__cu_rows_fn cu);
tendo__tensor *tendo__cumsum_int64(const char *op, const tendo__tensor *a, int dim, tendo_dtype out_dtype,
                                   tendo__cu_rows_fn cu);

/* var (or its square root, std) of a along dim: sum((x - mean)^2) /
 * max(0, N - correction), in double; a new tensor of a's dtype or NULL. */
tendo__tensor *tendo__var_float(const char *op, const tendo__tensor *a, int dim, int64_t correction, bool keepdim,
                                bool sqrt, tendo__cu_rows_fn cu);
tendo__tensor *tendo__var_double(const char *op, const tendo__tensor *a, int dim, int64_t correction, bool keepdim,
                                 bool sqrt, tendo__cu_rows_fn cu);

#endif /* TENDO_SRC_CPU_ORDER_H */
