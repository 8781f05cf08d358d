/* src/cpu/cpu.h - which x86 vector extensions this CPU (and OS) offers, asked
 * once and cached: the runtime dispatch of half.c, vmath.c, gemm.c and
 * transpose.c rests on it. */
#ifndef TENDO_SRC_CPU_H
#define TENDO_SRC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tendo__tensor;

/* AVX512 stands for AVX-512 F, BW, VL and DQ together (with the OS
 * saving ZMM registers); AVX512BF16 for its bf16 dot products, AVX512VNNI
 * for its int8 dot products, AVX512FP16 for its f16 arithmetic (newer
 * Intel parts; detected and shown, no kernel uses it yet), AMXBF16 for
 * AMX tiles with bf16 dot products (the OS saving tile data and granting
 * this process their use). */
enum {
    TENDO__CPU_AVX2 = 1,
    TENDO__CPU_FMA = 2,
    TENDO__CPU_F16C = 4,
    TENDO__CPU_AVX512 = 8,
    TENDO__CPU_AVX512BF16 = 16,
    TENDO__CPU_AVX512VNNI = 32,
    TENDO__CPU_AVX512FP16 = 64,
    TENDO__CPU_AMXBF16 = 128,
};

/* True when the CPU has every feature in mask (the AVX2 check includes
 * the OS saving YMM registers); always false off x86.  Thread-safe. */
bool tendo__cpu_has(unsigned mask);

/* Whether the CPU is AMD's, by its vendor, whatever TENDO_CPU says; false
 * off x86.  Not a feature: the skinny kernels tune their prefetches by it
 * (src/cpu/skinny-kernels.h).  Thread-safe. */
bool tendo__cpu_amd(void);

/* The largest (largest true) or smallest of v[0..n), n >= 1, by the C
 * comparison operators; *nan is set when a NaN is among them (the value
 * returned then means nothing).  AVX2 where the CPU has it
 * (src/cpu/argbest.c); for argmax and argmin. */
float tendo__best_f32(const float *v, int64_t n, bool largest, bool *nan);
double tendo__best_f64(const double *v, int64_t n, bool largest, bool *nan);

/* The packed-panel GEMMs (src/cpu/gemm_avx512.c): bf16 operands with
 * vdpbf16ps (AVX512_BF16), f32 operands with vfmadd (AVX-512F, or AVX2 and
 * FMA: src/cpu/gemm_avx2.c), f16 operands widened to f32 as they are
 * packed (AVX-512F, or AVX2, FMA and F16C), and bf16 operands widened so
 * (BF16W, AVX2 and FMA) where the CPU has no AVX512_BF16; all accumulate
 * in f32, with the same bits on either instruction set. */
typedef enum {
    TENDO__PGEMM_NONE = -1,
    TENDO__PGEMM_BF16,
    TENDO__PGEMM_F32,
    TENDO__PGEMM_F16,
    TENDO__PGEMM_BF16W
} tendo__pgemm_kind;
/* Whether this CPU (and build) runs kind's kernel. */
bool tendo__pgemm_available(tendo__pgemm_kind kind);
/* The kernel that multiplies dtype t on this CPU: bf16 with AVX512_BF16
 * (else widened, BF16W), f32 and f16 with AVX-512F or AVX2; else
 * TENDO__PGEMM_NONE. */
struct tendo__traits;
tendo__pgemm_kind tendo__pgemm_kind_of(const struct tendo__traits *t);
/* C (m x n, f32, row stride ldc) = alpha * A B + beta * C for A and B of
 * kind (element strides, any): 0 when done, 1 when this CPU has no such
 * kernel or there is nothing to multiply (C untouched: use tendo__sgemm),
 * -1 out of memory.  Packs B itself; the three functions after it let
 * callers pack B once and share it between threads. */
int tendo__pgemm(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t rsa,
                 int64_t csa, const void *b, int64_t rsb, int64_t csb, float beta, float *c, int64_t ldc);
/* Bytes of the packed form of a B of k rows and n columns (64-byte
 * aligned storage expected), in TENDO__PGEMM_NR-column slivers. */
size_t tendo__pgemm_b_bytes(tendo__pgemm_kind kind, int64_t k, int64_t n);
/* Packs slivers [s0, s1) (columns s0*NR .. s1*NR) of B (k x n, element
 * strides rsb, csb) into dst, laid out for all n: disjoint sliver ranges
 * may be packed by different threads into one dst.  Only where
 * tendo__pgemm_available(kind). */
void tendo__pgemm_pack_b(tendo__pgemm_kind kind, int64_t k, int64_t n, const void *b, int64_t rsb, int64_t csb,
                         int64_t s0, int64_t s1, void *dst);
/* As tendo__pgemm with B already packed by tendo__pgemm_pack_b: bp packs
 * a B of bn columns, and this product takes its n columns from sliver s0
 * on.  0, or -1 when the A panel could not be allocated. */
int tendo__pgemm_packed(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, float alpha, const void *a,
                        int64_t rsa, int64_t csa, const void *bp, int64_t bn, int64_t s0, float beta, float *c,
                        int64_t ldc);

/* C (m x n, f32, row stride ldc) = A W^T for A (m x k, element strides
 * rsa, csa, any) and W (n x k, row stride ldw elements, its rows dense) of
 * kind: a few rows by a transposed weight (nn.Linear's), each element of
 * W read once, the bits tendo__pgemm's.  0 when done, 1 where
 * tendo__pgemm_nt_takes says no (C untouched), -1 out of memory. */
int tendo__pgemm_nt(tendo__pgemm_kind kind, int64_t m, int64_t n, int64_t k, const void *a, int64_t rsa, int64_t csa,
                    const void *w, int64_t ldw, float *c, int64_t ldc);
/* Whether tendo__pgemm_nt multiplies by such a W here: bf16 on the
 * AVX-512 kernels, f32 on either set, W's rows whole 32-bit words from a
 * 4-byte boundary (W NULL and ldw 0: whether it would for some W). */
bool tendo__pgemm_nt_takes(tendo__pgemm_kind kind, int64_t k, const void *w, int64_t ldw);
/* Whether kind's products run on the AVX2 kernels here (available, and
 * no AVX-512 or tendo__pgemm_force_avx2): the skinny path's and matmul's
 * limits differ there. */
bool tendo__pgemm_on_avx2(tendo__pgemm_kind kind);
/* For tests: avx2 != 0 makes later f32 and f16 products use the AVX2
 * kernels even where the CPU has AVX-512 (0: the CPU chooses again), so
 * the two sets can be compared bit for bit.  False (nothing changed) where
 * this CPU or build has no AVX2 set.  Affects every thread: do not call it
 * while other threads multiply. */
bool tendo__pgemm_force_avx2(int avx2);

/* C (m x n, int32, row stride ldc) = A B for int8 A and B (element
 * strides, any), every product summed exactly, wrapping modulo 2^32 as
 * int32 arithmetic does (src/cpu/gemm_i8.c): VNNI (vpdpbusd) with
 * AVX512_VNNI, vpmaddwd with AVX2, plain C otherwise; the same bits on
 * every path.  0, or -1 when a scratch allocation failed (C untouched). */
int tendo__gemm_i8(int64_t m, int64_t n, int64_t k, const int8_t *a, int64_t rsa, int64_t csa, const int8_t *b,
                   int64_t rsb, int64_t csb, int32_t *c, int64_t ldc);

/* ---- the CPU kernels of the device table (src/cpu/device.c) ---- */

/* dst (R x C, dense) = src with strides (1, sc) in elements, with vector
 * transposes; false (nothing done) when there is no fast kernel for elsize
 * on this CPU (src/cpu/transpose.c). */
bool tendo__transpose_copy(void *dst, const void *src, int64_t R, int64_t C, int64_t sc, size_t elsize);
/* numpy.matmul of two CPU tensors of one float dtype into the dense out
 * (the device table's matmul; src/cpu/matmul.c). */
bool tendo__cpu_matmul(const char *op, const struct tendo__tensor *a, const struct tendo__tensor *b,
                       struct tendo__tensor *out);
/* The device table's prepack: the 2-D CPU tensor w packed as the B of the
 * packed GEMM of its dtype, the panels kept with its storage
 * (src/cpu/prepack.h); nothing where this CPU has no such kernel for the
 * dtype or multiplies it on AMX tiles.  False (TENDO_ERR_OOM) when the panels could not be allocated. */
bool tendo__cpu_prepack(const char *op, const struct tendo__tensor *w);
/* numpy.matmul of two i8 CPU tensors into the dense i32 out (src/cpu/matmul.c). */
bool tendo__cpu_matmul_i32(const char *op, const struct tendo__tensor *a, const struct tendo__tensor *b,
                           struct tendo__tensor *out);
/* Makes OpenBLAS single-threaded, once (tendo runs BLAS calls on its own
 * threads); nothing without it (src/cpu/matmul.c). */
void tendo__blas_one_thread(void);
/* rope and attention of CPU tensors, arguments checked by
 * core/transformer.c (src/cpu/attention.c). */
struct tendo__attn;
struct tendo__tensor *tendo__cpu_rope(const char *op, const struct tendo__tensor *x,
                                      const struct tendo__tensor *positions, int64_t rot, double base,
                                      bool interleaved);
struct tendo__tensor *tendo__cpu_attention(const char *op, const struct tendo__attn *a,
                                           const struct tendo__tensor *q, const struct tendo__tensor *k,
                                           const struct tendo__tensor *v, const struct tendo__tensor *mask);
/* attention's gradients (src/cpu/attention_back.c). */
bool tendo__cpu_attention_backward(const char *op, const struct tendo__attn *a, const struct tendo__tensor *q,
                                   const struct tendo__tensor *k, const struct tendo__tensor *v,
                                   const struct tendo__tensor *mask, const struct tendo__tensor *out,
                                   const struct tendo__tensor *dout, const bool want[3],
                                   struct tendo__tensor *grads[3]);

#endif /* TENDO_SRC_CPU_H */
