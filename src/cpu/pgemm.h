/* src/cpu/pgemm.h - what the packed-panel GEMMs of each instruction set
 * share: the layout of the panels, and the table through which the
 * drivers (src/cpu/gemm_avx512.c) reach one set's packing and kernels
 * (AVX-512 there; AVX2 in src/cpu/gemm_avx2.c).
 *
 * One layout for every set, so panels kept by tensor_<dt>_prepack serve
 * any of them, and every kernel sums each element of C in the same order
 * (k steps in increasing order by FMA from zero, blocks of WORDS in
 * increasing order, each block folded as alpha * s + beta * C): the same
 * bits on every set, in any tile.  A packed element is a 32-bit word
 * holding one k step (an f32 value, f16 and BF16W widened to one; for
 * bf16, a pair of k steps).  B is
 * packed in slivers of NR columns, word [q*NR + c] k step q of column c;
 * A in slivers of MR rows, each row a slot of WORDS words. */
#ifndef TENDO_SRC_CPU_PGEMM_H
#define TENDO_SRC_CPU_PGEMM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/gemm.h"
#include "cpu/half.h"

/* Whether the packed GEMMs are built: x86 with a compiler that knows the
 * AVX-512 BF16 intrinsics. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) &&                                  \
    (defined(__clang__) ? __clang_major__ >= 11 : __GNUC__ >= 10)
#define PGEMM_X86 1
#else
#define PGEMM_X86 0
#endif

enum {
    MR = 12,                /* rows of an A sliver: the AVX-512 kernel's tile (12 x 2 accumulators) */
    MR_SHORT = 8,           /* rows of the AVX-512 short tile, for a tile of at most that many rows */
    NR = TENDO__PGEMM_NR,   /* columns of a B sliver: two vectors of 16 */
    WORDS = 256,            /* k steps per block: the slot of a packed A row */
    MC = 264,               /* rows of A per packed panel (a row block of matmul.c) */
    NC = 2048,              /* columns of B per pass over the A panel */
    SLIVER_GROUP = 8,       /* B slivers whose rows' runs are packed at once (256 KB) */
};

_Static_assert(MC % MR == 0 && NC % NR == 0, "panels must be whole slivers");

static inline int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* k per word: 2 for bf16 pairs, 1 for f32 and f16 (widened). */
static inline int64_t per_word(tendo__pgemm_kind kind) { return kind == TENDO__PGEMM_BF16 ? 2 : 1; }

/* Bytes per element of the operands. */
static inline int64_t elem_size(tendo__pgemm_kind kind) { return kind == TENDO__PGEMM_F32 ? 4 : 2; }

/* Whether kind's 16-bit values are widened to f32 words (f16, BF16W). */
static inline bool widened(tendo__pgemm_kind kind) { return kind == TENDO__PGEMM_F16 || kind == TENDO__PGEMM_BF16W; }

/* n 16-bit values of a widened kind at src as f32 at dst. */
static inline void widen_n(tendo__pgemm_kind kind, const uint16_t *src, float *dst, int64_t n)
{
    if (kind == TENDO__PGEMM_BF16W)
        tendo__bf16_to_f32_n(src, dst, n);
    else
        tendo__f16_to_f32_n(src, dst, n);
}

/* The 32-bit word of k step p (k p*g .. p*g+g-1) of row r of a strided
 * operand (element strides rs, cs), zero past rows x cols. */
static inline uint32_t pgemm_word(tendo__pgemm_kind kind, const void *x, int64_t rs, int64_t cs, int64_t r, int64_t p,
                                  int64_t rows, int64_t cols)
{
    if (kind != TENDO__PGEMM_BF16) {
        float v = !(r < rows && p < cols)        ? 0.0f
                  : kind == TENDO__PGEMM_F32   ? ((const float *)x)[r * rs + p * cs]
                  : kind == TENDO__PGEMM_BF16W ? tendo__bf16_bits_to_f32(((const uint16_t *)x)[r * rs + p * cs])
                                               : tendo__f16_bits_to_f32(((const uint16_t *)x)[r * rs + p * cs]);
        uint32_t w;
        memcpy(&w, &v, sizeof w);
        return w;
    }
    const uint16_t *h = x;
    uint32_t lo = r < rows && 2 * p < cols ? h[r * rs + 2 * p * cs] : 0;
    uint32_t hi = r < rows && 2 * p + 1 < cols ? h[r * rs + (2 * p + 1) * cs] : 0;
    return lo | hi << 16;
}

/* The tile (at most MR rows of an A sliver, mr of them kept) x NR tile at c
 * (row stride ldc, mr x nr of it valid) becomes alpha * (A sliver x B
 * sliver over words k steps) + beta * c (beta 0: c not read).  pf, when
 * not NULL: a packed sliver (the next one of panels read from memory) to
 * fetch into L2 as it goes. */
typedef void (*tendo__pgemm_kernel)(int64_t words, const uint32_t *a, const uint32_t *b, const uint32_t *pf,
                                    float *c, int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta);

/* As tendo__pgemm_kernel, but B's sliver read straight from its dense rows
 * (from `rows`, row stride rs elements; all NR columns and words k steps
 * there), each word made as the set's pack_b_slivers makes it and stored
 * in keep (words x NR, 64-byte aligned), so that the other row tiles read
 * the packed sliver: the same words, so the same bits.  The rows are far
 * apart, where no hardware prefetcher follows: it fetches its own lines
 * ROWS_AHEAD rows ahead, and the next sliver's (the NR columns after its
 * own, wherever they are: a prefetch never faults) into L2. */
typedef void (*tendo__pgemm_rows_kernel)(int64_t words, const uint32_t *a, uint32_t *keep, const char *rows,
                                         int64_t rs, float *c, int64_t ldc, int64_t mr, int64_t nr, float alpha,
                                         float beta);

/* The kernel of tendo__pgemm_nt: a whole tile of MR rows of A read where
 * they are (row r at a + r * lda words: a weight's rows, in place), times
 * the packed sliver b, into c as tendo__pgemm_kernel does with alpha 1.
 * It fetches each of A's rows ahead as it goes (no hardware prefetcher
 * follows a dozen rows far apart). */
typedef void (*tendo__pgemm_nt_kernel)(int64_t words, const uint32_t *a, int64_t lda, const uint32_t *b, float *c,
                                       int64_t ldc, int64_t nr, float beta);

/* Words a row sliver of B is fetched ahead of a rows kernel reading it:
 * 8, 16 and 32 were within noise of each other (AVX-512). */
#define ROWS_AHEAD 16

/* One instruction set's part of the packed GEMMs (A is packed the same
 * way for both, by routines that dispatch themselves). */
typedef struct {
    /* Slivers s0..s1 of B's k block from kk0 (words words; B k x n,
     * element strides rs, cs), sliver s at dst + (s - s0)*words*NR. */
    void (*pack_b_slivers)(tendo__pgemm_kind kind, const void *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                           int64_t kk0, int64_t words, int64_t s0, int64_t s1, uint32_t *restrict dst);
    /* The kernel of kind for a tile of mr rows (at most MR). */
    tendo__pgemm_kernel (*kernel_for)(tendo__pgemm_kind kind, int64_t mr);
    /* Its rows kernel (for the first row tile of a sliver of B's dense rows). */
    tendo__pgemm_rows_kernel (*kernel_rows_for)(tendo__pgemm_kind kind, int64_t mr);
    /* Its tendo__pgemm_nt kernel of kind, or NULL (f16, whose words are
     * widened values, not the weight's own). */
    tendo__pgemm_nt_kernel (*kernel_nt_for)(tendo__pgemm_kind kind);
} tendo__pgemm_set;

/* The AVX2 set (src/cpu/gemm_avx2.c): f32 and BF16W (which only it
 * multiplies) with AVX2 and FMA, f16 with F16C too; NULL where the packed
 * GEMMs are not built (PGEMM_X86 0). */
extern const tendo__pgemm_set *const tendo__pgemm_avx2;

/* One B sliver: columns j0..j0+NR, words k steps from k kk0 on (k rows in
 * all, n columns), zero past k or n; words before q0 are packed already
 * (by a set's pack_b_slivers, from B's dense rows).  Columns of B dense
 * (rs 1: a transposed Linear weight, K^T) are copied by
 * tendo__transpose_copy, the rest word by word; for any set (the copy
 * dispatches itself).  In gemm_avx512.c. */
void tendo__pgemm_pack_b_sliver(tendo__pgemm_kind kind, const void *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                                int64_t kk0, int64_t words, int64_t j0, int64_t q0, uint32_t *restrict dst);

#endif /* TENDO_SRC_CPU_PGEMM_H */
