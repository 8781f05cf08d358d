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
 * depends on k, the layout, the CPU path (AMX, AVX-512, AVX2, portable)
 * and m only (the AMX path is taken for bf16 from a number of rows on, and
 * tendo__pgemm_nt for the row counts of TENDO__SKINNY_NT_ROWS below): not
 * on n, the column range a caller hands over, or the thread count.  So
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
/* By a [k, n] weight where a packed GEMM multiplies the dtype (f32 and
 * f16 with AVX-512 or AVX2; bf16 with AVX512_BF16, AMX aside): the
 * scaled-row kernels sweep C once per group of weight rows, and each few
 * rows of A read the weight again, while the GEMM reads the weight once,
 * its first row tile packing each sliver as it multiplies and fetching the
 * next, and keeps C's tile in registers.  So the GEMM takes products past
 * 2 rows.  Zen 4, 4096 x 4096, one thread, two runs, ms skinny against
 * GEMM: f32 2 rows 2.5-2.6 against 3.6-3.8, 3 rows 3.8 against 3.4-3.5,
 * 4 rows 3.6-3.9 against 3.6-3.9, 6 rows 5.7-5.8 against 3.5-3.6; bf16 2
 * rows 1.1-1.4 against 1.7-2.2, 3 rows 3.4 against 1.7; f16 2 rows 1.7
 * against 2.5, 3 rows 2.6 against 2.5; at TENDO_CPU=avx2, f32 2 rows
 * 2.5-2.6 against 2.6-2.8, 3 rows 3.3-3.4 against 2.7-2.8, 6 rows 4.7-4.8
 * against 3.2-3.3; f16 5 rows 2.4 against 2.7, 6 rows 2.9 against 2.8.
 * Where the AVX2 set multiplies (bf16 too, widened: TENDO__PGEMM_BF16W),
 * a CPU with no more than AVX2 says otherwise: AMD EPYC (Zen 3), 4096 x
 * 4096, one thread, two rounds, ms skinny against GEMM: f32 3 rows
 * 3.9-4.2 against 8.8-12.7, 4 rows 3.7-4.9 against 9.1-10.7, 6 rows
 * 8.5-11.0 against 9.6-12.4, 8 rows 11.7-14.7 against 11.2-13.4; f16 3
 * rows 1.7-2.4 against 5.1-10.4, 4 rows 2.3-2.9 against 4.3-6.8, 8 rows
 * 7.2-7.9 against 5.8-8.6; bf16 3 rows 2.3-2.9 against 5.4-8.7, 4 rows
 * 3.3 against 6.4-8.8, 6 rows 5.4-5.5 against 5.6-7.2, 8 rows 8.1-9.5
 * against 7.5-8.1. */
#define TENDO__SKINNY_AXPY_PGEMM_ROWS 2
#define TENDO__SKINNY_AXPY_PGEMM_ROWS_AVX2 4
/* By a transposed [n, k] weight where the AVX2 set multiplies (no
 * AVX-512): the dot kernels up to these rows, the packed GEMM (each sliver
 * transposed as it is packed) past them, but for f32's rows that
 * tendo__pgemm_nt takes (TENDO__SKINNY_NT_ROWS_AVX2 below).  Zen 4 at
 * TENDO_CPU=avx2, 4096 x 4096, one thread, two runs, ms skinny against
 * GEMM: f32 20 rows 12.4 against 13.3-13.6, 24 rows 14.2-14.5 against
 * 14.0-14.1, 28 rows 16.2-16.3 against 15.3, 64 rows 35.3-35.4 against
 * 26.3-26.7; f16 (panels of f32, twice the weight's bytes) 32 rows 17.3
 * against 18.2, 40 rows 21.4 against 20.1, 64 rows 33.9 against 27.8.  With
 * AVX-512 the dot kernels stay faster up to TENDO__SKINNY_DOT_ROWS (f32 64
 * rows 24.9-25.2 against 25.8-25.9). */
#define TENDO__SKINNY_DOT_ROWS_AVX2_F32 24
#define TENDO__SKINNY_DOT_ROWS_AVX2_F16 32
/* By a transposed weight, bf16 and f32 products of TENDO__SKINNY_NT_ROWS
 * rows or more whose rows fill their slivers of TENDO__PGEMM_NR but at
 * most TENDO__SKINNY_NT_SHORT go to tendo__pgemm_nt where it takes them
 * (AVX-512): it multiplies whole slivers of rows at the packed kernel's
 * rate, the dot kernels row by row at a lower one.  Zen 4, 4096 x 4096, one
 * thread, ms hot and cold, dot kernels against tendo__pgemm_nt: bf16 24
 * rows 5.3 against 5.8-5.9, 28 rows 5.9-6.0 against 5.9, 32 rows 6.6-7.1
 * against 5.6-5.7 (once 7.0), 54 rows 10.5-10.6 against 11.2, 64 rows
 * 12.0-12.1 against 11.0-11.1; f32 24 rows 10.3-10.5 against 11.3, 28 rows
 * 11.7-11.8 against 11.1-11.2, 32 rows 12.8-13.1 against 10.8-11.0, 54
 * rows 21.5-21.6 against 22.6-22.7, 64 rows 25.1-25.2 against 22.1. */
#define TENDO__SKINNY_NT_ROWS 28
#define TENDO__SKINNY_NT_SHORT 4
/* Where the AVX2 set multiplies f32, its tendo__pgemm_nt kernel works in
 * half slivers of 16 columns (a sliver of at most 16 rows of A costs half
 * a whole one), so from TENDO__SKINNY_NT_ROWS_AVX2 rows the products whose
 * rows fill their halves but at most TENDO__SKINNY_NT_SHORT_AVX2 go there
 * (16, 26-32, 42-48, 58-64 rows), past the dot kernels' limit too; the
 * rest keep the dot kernels or the packed GEMM.  Zen 4 at TENDO_CPU=avx2,
 * 4096 x 4096, one thread, two to five runs, ms hot and cold, dot kernels
 * / nt / packed GEMM: 14 rows 8.7 / 8.8-9.5 / -, 15 rows 8.8-9.0 / 8.8-8.9
 * / 11.9-12.1, 16 rows 10.0-11.4 / 8.6-9.8 / 11.9-12.3, 18 rows 10.9-11.3
 * / 13.7-14.3 / 12.3-12.6, 22 rows 13.1-13.3 / 13.7-14.0 / 13.7-13.9, 24
 * rows 14.3-16.4 / 14.0-14.3 (once 17.8) / 14.2-15.5, 26 rows 15.1-15.4 /
 * 13.8-14.4 / 15.5, 32 rows 18.9-19.1 / 13.7-14.3 / 17.5, 40 rows - /
 * 20.7-22.6 / 19.3-20.0, 44 rows - / 21.0-21.4 / 21.2-21.9, 48 rows - /
 * 20.9-21.1 / 22.1-22.6, 52 rows - / 25.8-26.1 / 23.0-23.5, 60 rows - /
 * 25.5-25.7 / 25.5-25.8, 64 rows - / 25.6 / 27.2. */
#define TENDO__SKINNY_NT_ROWS_AVX2 16
#define TENDO__SKINNY_NT_SHORT_AVX2 6
/* f64, whose kernels are plain C: where reading the weight is the cost. */
#define TENDO__SKINNY_F64_ROWS 2

/* Whether the skinny kernels take an m-row product with B of strides
 * (rsb, csb), elements of dtype t: a float dtype (f64 included), m within
 * the layout's limit (and f64's, and the packed GEMM's; none for bf16 on
 * AMX; or one tendo__pgemm_nt takes for it), and B with a unit stride. */
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
