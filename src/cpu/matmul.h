/* src/matmul.h - numpy.matmul over any strides, batched with broadcast
 * batch dims, through CBLAS (f32, when built with it) or tendo__sgemm. */
#ifndef TENDO_SRC_MATMUL_H
#define TENDO_SRC_MATMUL_H

#include "cpu/gemm.h"
#include "core/internal.h"

/* Rounds n dense floats into the output's dtype. */
typedef void (*tendo__narrow_fn)(const float *src, void *dst, int64_t n);

/* a @ b for dtype dt, whose elements tendo__sgemm reads as gemm_type and
 * whose results narrow() rounds from float (NULL for f32 itself); on a GPU
 * through cuBLAS, cuda_type being the dtype's cudaDataType.  Returns a new
 * tensor, or NULL with the error set. */
tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo_dtype dt,
                             tendo__gemm_type gemm_type, tendo__narrow_fn narrow, int cuda_type);

#endif /* TENDO_SRC_MATMUL_H */
