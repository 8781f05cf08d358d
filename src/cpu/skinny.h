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
/* By a [k, n] weight where the AVX-512 packed GEMM multiplies the dtype
 * (f32 and f16 with AVX-512; bf16 with AVX512_BF16, AMX aside): the
 * scaled-row kernels sweep C once per group of weight rows, and each eight
 * rows of A read the weight again, while the GEMM reads it once into
 * cache-sized panels and keeps C's tile in registers, so the GEMM is
 * faster past 8 rows.  Zen 4, 4096 x 4096, one thread, ms skinny against
 * GEMM: f32 12 rows 11.9-16.1 against 10.6-10.8, 32 rows 29-43 against
 * 18-20; f16 12 rows 8.0-10.5 against 7.3-7.6, 32 rows 21-34 against
 * 15-17; bf16 16 rows 13.0 against 9.9; 8 rows about even (f32 6.9-11.0
 * against 10.1-12.0, f16 5.8-7.7 against 7.0-7.7, bf16 5.9 against 7.8). */
#define TENDO__SKINNY_AXPY_PGEMM_ROWS 8
/* f64, whose kernels are plain C: where reading the weight is the cost. */
#define TENDO__SKINNY_F64_ROWS 2

/* Whether the skinny kernels take an m-row product with B of strides
 * (rsb, csb), elements of dtype t: a float dtype (f64 included), m within
 * the layout's limit (and f64's, and the packed GEMM's; none for bf16 on
 * AMX), and B with a unit stride. */
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
