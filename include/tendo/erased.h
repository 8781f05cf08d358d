/* tendo/erased.h - tendo_tensor, a tensor whose dtype is known only at run
 * time: what events name, and what file loaders and DLPack import return.
 *
 * A tendo_tensor * is the same handle as the typed tensor_<dt> * it came
 * from: tensor_<dt>_erase(t) and tendo_as_<dt>(e) convert between the two
 * without a new reference, so a handle is freed once, through either type.
 * Included by <tendo.h>.
 */
#ifndef TENDO_ERASED_H
#define TENDO_ERASED_H

#include "tendo/core.h"
#include "tendo/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read-only facts; for NULL: dtype 0, -1, NULL, the CPU (with the error set). */
TENDO_API tendo_dtype tendo_tensor_dtype(const tendo_tensor *t);
TENDO_API int tendo_tensor_ndim(const tendo_tensor *t);
TENDO_API const int64_t *tendo_tensor_shape(const tendo_tensor *t);
TENDO_API const int64_t *tendo_tensor_stride(const tendo_tensor *t);
TENDO_API int64_t tendo_tensor_numel(const tendo_tensor *t);
TENDO_API tendo_device tendo_tensor_device(const tendo_tensor *t);
/* True when t is dense row-major (size-1 dims and empty tensors count as
 * contiguous whatever their strides); false for NULL (with the error set). */
TENDO_API bool tendo_tensor_is_contiguous(const tendo_tensor *t);
/* A new handle viewing the same elements as t (same storage, shape and
 * strides); the caller frees it.  NULL on failure. */
TENDO_API tendo_tensor *tendo_tensor_alias(const tendo_tensor *t);
/* A contiguous copy of t converted to dtype to (rounded once), on t's
 * device; the caller frees it.  TENDO_ERR_DTYPE for a dtype this build
 * lacks. */
TENDO_API tendo_tensor *tendo_tensor_to_dtype(const tendo_tensor *t, tendo_dtype to);
/* A contiguous copy of t on device d; the caller frees it. */
TENDO_API tendo_tensor *tendo_tensor_to_device(const tendo_tensor *t, tendo_device d);
/* Address of element 0 of a CPU tensor (index it with tendo_tensor_stride),
 * borrowed; NULL for a GPU tensor or on error. */
TENDO_API void *tendo_tensor_data(const tendo_tensor *t);
/* Releases the handle t (its storage goes with its last view); NULL is a
 * no-op. */
TENDO_API void tendo_tensor_free(tendo_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_ERASED_H */
