/* src/cpu/skinny.h - products of a few rows by a weight, streaming the
 * weight once with no packing (src/cpu/skinny.c): a decoder's
 * matrix-vector products and small batches.
 *
 * B, the weight, is read in the layout it is stored in: the transposed view
 * of an [n, k] nn.Linear weight (unit row stride: each column of B is a
 * contiguous row of the weight, and C(i, j) a dot product), or a dense
 * [k, n] one (unit column stride: C's rows are sums of B's rows scaled by
 * A's elements).  A is widened into a small float (double for f64) copy
 * first.
 *
 * Determinism.  Element (i, j) of C is computed alone, in an order that
 * depends on k, the layout and the CPU path (AMX, AVX-512, AVX2, portable)
 * only, the AMX path being taken for bf16 from a number of rows on: not on
 * n, the column range a caller hands over, or the thread count.  So
 * callers may split the columns anywhere, between any threads, and get the
 * same bits (and rows in blocks that do not depend on the thread count). */
#ifndef TENDO_SRC_CPU_SKINNY_H
#define TENDO_SRC_CPU_SKINNY_H

#include <stdbool.h>
#include <stdint.h>

struct tendo__traits;

/* The most rows of A the skinny kernels take, for B of unit row stride
 * (dot products) and of unit column stride (scaled rows); more rows go to
 * the packed GEMMs.  Measured on AVX-512 (Sapphire Rapids) with 4096 x 4096
 * weights: packing B costs more than these products up to about 64 and 32
 * rows, since the packed GEMMs pack B on every call. */
#define TENDO__SKINNY_DOT_ROWS 64
#define TENDO__SKINNY_AXPY_ROWS 32
/* bf16 where the CPU has AMX tiles (skinny_amx.h): from 4 rows by a
 * transposed weight, 8 by a [k, n] one (fewer rows go to the AVX-512
 * kernels, which are faster there), with no upper limit: streaming the
 * weight through the tiles once per row block beats the packed AVX-512
 * GEMM at every size measured (Sapphire Rapids, 4096 x 4096 weights, one
 * thread: 64 rows 11 / 14 ms against 42 / 31, 1024 rows 170 / 75 ms
 * against 531 / 577, [k, n] / [n, k]^T). */
#define TENDO__SKINNY_AMX_MIN_DOT 4
#define TENDO__SKINNY_AMX_MIN_AXPY 8
/* bf16 by a [k, n] weight with AVX512_BF16 but no AMX: the scaled-row
 * kernels widen every element, while the packed GEMM multiplies pairs with
 * vdpbf16ps, so the GEMM is faster from about 16 rows (Zen 4, 4096 x 4096,
 * one thread: 16 rows 13.0 ms against 9.9, 32 rows 27.1 against 13.1; 8
 * rows 5.9 against 7.8). */
#define TENDO__SKINNY_AXPY_BF16_ROWS 8
/* f64, whose kernels are plain C: where reading the weight is the cost. */
#define TENDO__SKINNY_F64_ROWS 2

/* Whether the skinny kernels take an m-row product with B of strides
 * (rsb, csb), elements of dtype t: a float dtype (f64 included), m within
 * the layout's limit (and f64's; none for bf16 on AMX), and B with a unit
 * stride. */
bool tendo__skinny_takes(const struct tendo__traits *t, int64_t m, int64_t k, int64_t n, int64_t rsb, int64_t csb);

/* Whether dtype t's products by a weight of unit row or column stride go
 * to the AMX tiles from a few rows on (bf16 where the CPU has them): then
 * panels packed for the AVX-512 GEMM would never be read. */
bool tendo__skinny_on_amx(const struct tendo__traits *t);

/* C (m x n, row stride ldc; float, double for a dtype computing in double)
 * = A B for A (m x k, element strides rsa, csa, any) and B (k x n, element
 * strides rsb, csb, as tendo__skinny_takes accepts) of dtype t.  Every
 * element of B is read once.  0, or -1 when the scratch copy of A could not
 * be allocated (C untouched).  Single-threaded, thread-safe. */
int tendo__skinny(const struct tendo__traits *t, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa,
                  int64_t csa, const void *b, int64_t rsb, int64_t csb, void *c, int64_t ldc);

#endif /* TENDO_SRC_CPU_SKINNY_H */
