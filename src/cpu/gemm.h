/* src/cpu/gemm.h - tendo's own single-precision matrix multiply.
 *
 * Used when tendo is built without BLAS, and for f16/bf16 operands, which
 * are widened exactly to f32 while they are packed.  The structure is the
 * Goto/BLIS one: B is packed into KC x NC panels, A into MC x KC panels,
 * and a register-tile micro-kernel (AVX2+FMA when the CPU has them, a
 * portable C one otherwise, chosen at run time) multiplies MR x KC by
 * KC x NR slivers.
 *
 * Determinism.  For a given (m, n, k) and kernel, every element of C is
 * computed in a fixed order: k is cut into blocks [0, KC), [KC, 2 KC), ...
 * taken in increasing order; each block's products are summed in the
 * micro-kernel in increasing k starting from zero, and the block sum s is
 * then folded into C as C = alpha*s + beta*C (first block) or C = alpha*s
 * + C (later blocks).  Nothing in that order depends on where the element
 * sits in its tile, on m or n, or on the MC/NC blocking.  So a caller may
 * split the m dimension into row blocks whose starts are multiples of
 * TENDO__GEMM_MR (offsetting a and c by the block's first row) and hand
 * them to different threads: C comes out bitwise identical to one call
 * over all rows.
 */
#ifndef TENDO_SRC_GEMM_H
#define TENDO_SRC_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Register tile: rows of A (MR) and columns of B (NR) per micro-kernel
 * call, the same for every kernel.  KC is the depth of one k block (see
 * the determinism note above); MC and NC bound the packed A and B panels. */
#define TENDO__GEMM_MR 6
#define TENDO__GEMM_NR 16
#define TENDO__GEMM_KC 384
#define TENDO__GEMM_MC 96
#define TENDO__GEMM_NC 4080
/* Columns per B sliver of the AVX-512 kernels (src/cpu/gemm_avx512.c). */
#define TENDO__PGEMM_NR 32

struct tendo__traits;

/* C[i*ldc + j] = alpha * sum_k A(i,k) * B(k,j) + beta * C[i*ldc + j]
 * for i < m, j < n, where A(i,k) = a[i*rsa + k*csa] and
 * B(k,j) = b[k*rsb + j*csb] (element strides, any value including 0 or
 * negative, so transposed or broadcast operands need no copy), of the
 * dtype t (any dtype computing in float, widened exactly to f32 through
 * the dtype table while packing) and accumulated in f32.  C is f32 with row stride ldc (unit column stride);
 * only its m x n elements are touched.  beta == 0 means C is write-only
 * (it may hold NaN garbage).  k == 0 or alpha == 0 gives beta*C without
 * reading A or B (as in BLAS).  m <= 0 or n <= 0 does nothing.
 * Returns 0, or -1 if a scratch allocation failed (C untouched then).
 * Thread-safe (no global mutable state except the CPU-feature cache);
 * single-threaded; see the determinism note above for splitting m. */
int tendo__sgemm(int64_t m, int64_t n, int64_t k, float alpha,
                 const void *a, int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb,
                 const struct tendo__traits *t, float beta, float *c, int64_t ldc);

/* The same product on double operands (f64, own compute type), summed in
 * double: tendo's fallback where CBLAS is missing or cannot take the
 * strides.  Element (i, j) of C is alpha times the sum over k, in
 * increasing k from zero, of A(i,k) B(k,j), plus beta*C when beta != 0;
 * the order does not depend on m, n or the row, so m may be split into row
 * blocks of any size with bitwise identical results.  Any strides (0 and
 * negative too); k == 0 or alpha == 0 gives beta*C.  Returns 0.
 * Single-threaded, thread-safe. */
int tendo__dgemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t rsa, int64_t csa,
                 const double *b, int64_t rsb, int64_t csb, double beta, double *c, int64_t ldc);

/* Scratch for a GEMM's packed panels: at least bytes, 64-byte aligned,
 * from the CPU's pool, so that a product repeated (every layer of a model,
 * every call of a benchmark) faults in no fresh pages; *blk is what to
 * give back to tendo__gemm_scratch_free.  NULL on out of memory. */
struct tendo__pool_block;
void *tendo__gemm_scratch(size_t bytes, struct tendo__pool_block **blk);
void tendo__gemm_scratch_free(struct tendo__pool_block *blk);

/* For tests and benchmarks: portable != 0 makes later calls use the
 * portable C micro-kernel even where AVX2+FMA is available; 0 goes back
 * to detecting the CPU.  It rewrites the CPU-feature cache, so it affects
 * every thread; do not call it while other threads multiply. */
void tendo__gemm_force_portable(int portable);

#endif /* TENDO_SRC_GEMM_H */
