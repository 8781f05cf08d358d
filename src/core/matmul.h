/* src/core/matmul.h - numpy.matmul's shape rules, and its dispatch to the
 * device that holds the operands (tendo__device_ops.matmul: src/cpu/matmul.c,
 * kernels/host/blas.c). */
#ifndef TENDO_SRC_CORE_MATMUL_H
#define TENDO_SRC_CORE_MATMUL_H

#include "core/internal.h"

/* One operand as a matrix: rows x cols with element strides, plus the
 * strides of its batch dims broadcast to the result's batch shape (0
 * where it is broadcast). */
typedef struct {
    int64_t rows, cols, rs, cs;
    int64_t batch_stride[TENDO_MAX_DIMS];
} tendo__mm_operand;

/* a @ b resolved: A is [m, k], B is [k, n], over nbatches batches. */
typedef struct {
    tendo__mm_operand A, B;
    int nbatch;
    int64_t batch[TENDO_MAX_DIMS];
    int64_t nbatches;
    int out_ndim;
    int64_t out_shape[TENDO_MAX_DIMS]; /* 1-D operands' added dims removed */
} tendo__mm_plan;

/* Resolves the shapes of a @ b like numpy.matmul into p; false with
 * TENDO_ERR_SHAPE naming op and both shapes otherwise. */
bool tendo__mm_plan_make(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__mm_plan *p);
/* Element offsets of batch bi in A and in B. */
void tendo__mm_batch_offsets(const tendo__mm_plan *p, int64_t bi, int64_t *aoff, int64_t *boff);
/* a @ b on the device that holds both (same dtype, checked by the caller's
 * types); a new tensor of their dtype, or NULL with the error set.  The
 * device's kernel (tendo__device_ops.matmul) writes into a dense result. */
tendo__tensor *tendo__matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b);
/* a @ b of i8 tensors summed in int32 (wrapping): a new i32 tensor, or NULL
 * with the error set (UNSUPPORTED on a device without the kernel). */
tendo__tensor *tendo__matmul_i32(const char *op, const tendo__tensor *a, const tendo__tensor *b);

/* a @ b into out (the result's shape, on the operands' device; dtypes
 * checked by the callers' types): written in place when out is dense,
 * else through a dense temporary; out may not share memory with a or b.
 * TENDO_OK, or the error (out unchanged). */
tendo_status tendo__matmul_out(const char *op, tendo__tensor *out, const tendo__tensor *a, const tendo__tensor *b);
/* The same for the i32 product of i8 a and b (tendo__matmul_i32). */
tendo_status tendo__matmul_i32_out(const char *op, tendo__tensor *out, const tendo__tensor *a,
                                   const tendo__tensor *b);
/* tensor_<dt>_prepack: the 2-D w packed for the products that read it as
 * their B, the panels kept with its storage (the device's prepack; nothing
 * on a device without one).  TENDO_OK, or the error. */
tendo_status tendo__prepack(const char *op, const tendo__tensor *w);

#endif /* TENDO_SRC_CORE_MATMUL_H */
