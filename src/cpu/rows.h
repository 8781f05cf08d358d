/* src/cpu/rows.h - row-wise ops: a function sees runs of rows along one dim. */
#ifndef TENDO_SRC_ROWS_H
#define TENDO_SRC_ROWS_H

#include "core/launch.h"
#include "core/internal.h"

/* `count` rows of `len` elements each, read and written through the dtype
 * table (core/traits.h).  Row r of the input starts at
 * in + r*in_next elements and steps in_step elements along the dim; its
 * output (one element for a reduction, a row of len for softmax) starts at
 * out + r*out_next and steps out_step. */
typedef struct {
    const char *in;
    char *out;
    int64_t count, len;
    int64_t in_next, in_step, out_next, out_step;
    const struct tendo__traits *in_traits, *out_traits; /* the dtypes of in and out */
    /* a second input of in's shape (tendo__rows_run2; else NULL), its row r
     * at in2 + r*in2_next, stepping in2_step */
    const char *in2;
    int64_t in2_next, in2_step;
    const struct tendo__traits *in2_traits;
} tendo__rows;

typedef void (*tendo__rows_fn)(const tendo__rows *r, void *ctx);

/* Calls fn over every row of in along dim, paired with out's rows along
 * out_dim (out_dim out of range: out has no such dim, one element per row).
 * Runs of rows are split across threads; each row's result never depends
 * on the split.  On a GPU, runs the launcher cu with cu_ctx instead (extra:
 * further tensors the launch reads, nextra of them).  False with the error
 * set when a GPU launch fails; the CPU path cannot fail. */
bool tendo__rows_run(const char *op, tendo__tensor *out, int out_dim, const tendo__tensor *in, int dim,
                     tendo__rows_fn fn, void *ctx, tendo__cu_rows_fn cu, const void *cu_ctx,
                     const tendo__tensor *const *extra, int nextra);
/* The same over the rows of in and in2 (in's shape) together: row r of
 * both goes to fn at once (a backward reading the gradient and the
 * forward's result). */
bool tendo__rows_run2(const char *op, tendo__tensor *out, int out_dim, const tendo__tensor *in,
                      const tendo__tensor *in2, int dim, tendo__rows_fn fn, void *ctx, tendo__cu_rows_fn cu,
                      const void *cu_ctx, const tendo__tensor *const *extra, int nextra);

#endif /* TENDO_SRC_ROWS_H */
