/* src/io/print.h - internal: the text form of a tensor's values, as numpy's
 * str(array) writes it with the default print options (precision 8,
 * threshold 1000, edgeitems 3, linewidth 75, floatmode 'maxprec').
 *
 * The printer knows nothing of dtypes: the per-dtype code hands it a getter
 * that reads one element as a double and a function that rounds a double to
 * the dtype and back, from which it works out the dtype's shortest
 * round-trip digits (numpy's "unique" dragon4 digits).
 */
#ifndef TENDO_SRC_PRINT_H
#define TENDO_SRC_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tendo/core.h"

/* The element at row-major logical flat index `flat`. */
typedef double (*tendo__elem_getter)(const void *ctx, int64_t flat);
/* Rounds v to the dtype and back to double (the identity for f64). */
typedef double (*tendo__roundtrip_fn)(double v);

/* Writes the values of a tensor of shape shape[0..ndim) in numpy str()
 * format, followed by "\n".  A 0-d tensor (ndim 0) prints its scalar alone,
 * a tensor with no elements prints "[]".  roundtrip may be NULL for f64.
 *
 * Returns TENDO_OK; TENDO_ERR_IO if writing (or the final fflush) fails;
 * TENDO_ERR_INVALID_ARG for a NULL f or get, a negative ndim or extent.
 * It never sets the thread's last error: the caller reports.  It allocates
 * no memory, and with more than 1000 elements the getter is only called for
 * the elements that are shown (never for the ones elided by "..."), three
 * times each. */
tendo_status tendo__print_values(FILE *f, int ndim, const int64_t *shape,
                                 tendo__elem_getter get, const void *ctx,
                                 tendo__roundtrip_fn roundtrip);

/* The element at row-major logical flat index `flat`, of an integer or
 * bool tensor. */
typedef int64_t (*tendo__int_getter)(const void *ctx, int64_t flat);

/* tendo__print_values for integers (exact, as numpy's IntegerFormat: no
 * decimal point, right-aligned to the widest shown element) and, is_bool,
 * for bools (numpy's BoolFormat: "True"/"False", " True" in an array). */
tendo_status tendo__print_ints(FILE *f, int ndim, const int64_t *shape, tendo__int_getter get, const void *ctx,
                               bool is_bool);

#endif /* TENDO_SRC_PRINT_H */
