/* tendo/io.h - tensors to and from files.  Included by <tendo.h>. */
#ifndef TENDO_IO_H
#define TENDO_IO_H

#include "tendo/core.h"
#include "tendo/erased.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads a numpy .npy file (format 1.0, 2.0 or 3.0; little- or big-endian
 * '<f4'/'<f2'...; C or Fortran order, the latter as a transposed view) as
 * a new CPU tensor of the matching dtype; the caller frees it with
 * tendo_tensor_free (or tendo_as_<dt> and tensor_free).  NULL on failure:
 * TENDO_ERR_IO (unreadable), TENDO_ERR_FORMAT (not a valid .npy, naming the
 * file and the fault), TENDO_ERR_UNSUPPORTED (a dtype tendo lacks, named). */
TENDO_API tendo_tensor *tendo_npy_load(const char *path);
/* Writes t (any strides, row-major order) as a format 1.0 .npy file,
 * little-endian, C order, through a temporary file renamed into place.
 * TENDO_ERR_UNSUPPORTED for a dtype numpy lacks (bf16), naming it. */
TENDO_API tendo_status tendo_npy_save(const char *path, const tendo_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_IO_H */
