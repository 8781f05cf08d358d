/* src/io/collection.h - what loaders need of a collection beyond the public API. */
#ifndef TENDO_SRC_COLLECTION_H
#define TENDO_SRC_COLLECTION_H

#include "core/internal.h"
#include "tendo/io.h"

/* Appends t under name, taking ownership of the handle t (freed with c, or
 * at once on failure).  Errors are reported for op. */
tendo_status tendo__collection_take(tendo_collection *c, const char *op, const char *name, tendo__tensor *t);
/* Appends, under name, a tensor this build cannot hold (its safetensors
 * dtype is one tendo was built without): tendo_collection_get and _at of it
 * fail with TENDO_ERR_UNSUPPORTED naming the tensor, the dtype and shape. */
tendo_status tendo__collection_take_missing(tendo_collection *c, const char *op, const char *name,
                                            const char *dtype, int ndim, const int64_t *shape);
/* tendo_collection_new and _set_metadata for a loader: errors are
 * reported for op. */
tendo_collection *tendo__collection_new(const char *op);
tendo_status tendo__collection_set_metadata(tendo_collection *c, const char *op, const char *key,
                                            const char *value);
/* Index of the first byte of s[0..n) that is not valid UTF-8, or n. */
size_t tendo__utf8_prefix(const unsigned char *s, size_t n);
/* Points jansson's allocations at the library's (once; before any json_*
 * call of tendo), so that they too count for tendo_fault_inject_alloc. */
void tendo__json_setup(void);
/* Whether a jansson allocation of this thread failed since the last call
 * (which clears it): a json_* failure with it set was out of memory. */
bool tendo__json_oom(void);

#endif /* TENDO_SRC_COLLECTION_H */
