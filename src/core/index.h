/* src/core/index.h - indexing and joining, dtype-erased (issue 12).
 *
 * These ops move elements and never look at their values, so they exist
 * once for every dtype, by element size: index_select, gather and scatter
 * in src/core/index.c; cat, stack, copy_into, tril and triu in
 * src/core/join.c.  The only arithmetic, scatter_add's, comes from the
 * per-dtype layer as an `add` callback.  The typed wrappers in
 * src/gen/index_<dt>.c (gen/registry/index.toml) call these with their op name.
 *
 * Every function validates its arguments and sets the thread's error
 * naming op on failure; none writes anything before all of its checks
 * (indices included) have passed.
 */
#ifndef TENDO_SRC_CORE_INDEX_H
#define TENDO_SRC_CORE_INDEX_H

#include "core/internal.h"
#include "core/launch.h"

/* *dst += *src for one element of the dtype (rounded once to the dtype;
 * integers wrap). */
typedef void (*tendo__add1_fn)(void *dst, const void *src);

/* ---- src/core/index.c: index is an i64 or i32 tensor (any strides) ------ */

/* torch.index_select: src's slices along dim at the 1-D or 0-d index. */
tendo__tensor *tendo__index_select(const char *op, const tendo__tensor *src, int dim, const tendo__tensor *index);
/* torch.gather: a new tensor of index's shape. */
tendo__tensor *tendo__gather(const char *op, const tendo__tensor *src, int dim, const tendo__tensor *index);
/* torch.Tensor.scatter_ (add NULL) or scatter_add_ (add set) into out;
 * cu_add: the dtype's CUDA scatter_add launcher (NULL without CUDA). */
tendo_status tendo__scatter(const char *op, tendo__tensor *out, int dim, const tendo__tensor *index,
                            const tendo__tensor *src, tendo__add1_fn add, tendo__cu_scatter_add_fn cu_add);

/* ---- src/core/join.c ------------------------------------------------------ */

/* torch.cat (stack false) or torch.stack (stack true) of ts[0..n). */
tendo__tensor *tendo__join(const char *op, const tendo__tensor *const *ts, int n, int dim, bool stack);
/* src broadcast into the view dst. */
tendo_status tendo__copy_into(const char *op, tendo__tensor *dst, const tendo__tensor *src);
/* numpy.tril (upper false) or numpy.triu (upper true) over the last two dims. */
tendo__tensor *tendo__tri(const char *op, const tendo__tensor *a, int64_t k, bool upper);

#endif /* TENDO_SRC_CORE_INDEX_H */
