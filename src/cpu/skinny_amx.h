/* src/cpu/skinny_amx.h - the skinny products of bf16 on AMX tiles
 * (src/cpu/skinny_amx.c), for src/cpu/skinny.c where the CPU has AMX-BF16.
 *
 * Both take A packed into tiles by tendo__skinny_amx_pack, its rows padded
 * with zeros to whole tiles of 16 and its k to whole blocks of 32 (lda, a
 * multiple of 32), and add into f32 C (m x n, row stride ldc).  Element (i, j) of C is the
 * sum of one tile dot product per block of 32 k, in increasing k: the same
 * bits for any m, any columns a caller hands over and any thread count.
 * Like vdpbf16ps, the tiles treat bf16 subnormals and f32 subnormal results
 * as zero.  Single-threaded, thread-safe; each call loads the tile
 * configuration and releases the tiles before it returns. */
#ifndef TENDO_SRC_CPU_SKINNY_AMX_H
#define TENDO_SRC_CPU_SKINNY_AMX_H

#include <stdbool.h>
#include <stdint.h>

#if (defined(__x86_64__) && defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 12 : __GNUC__ >= 11))
#define TENDO__HAVE_AMX 1

/* Bytes of A packed by tendo__skinny_amx_pack, for m rows and lda (k
 * padded to 32). */
int64_t tendo__skinny_amx_a_bytes(int64_t m, int64_t lda);

/* A (m x k bf16 elements, element strides rsa, csa) into ap as tiles, one
 * per block of 32 k and 16 rows (block kb's tile of rows 16 t.. at ap +
 * (kb * tiles of rows + t) * 512 elements), zeros past m and k: A's rows of
 * 32 k, or (transposed) A^T with pairs of k interleaved: 16 pairs of k by
 * 16 rows. */
void tendo__skinny_amx_pack(int64_t m, int64_t k, const uint16_t *a, int64_t rsa, int64_t csa, uint16_t *ap,
                            int64_t lda, bool transposed);

/* C += A W^T for A packed transposed and bf16 weight row j (k elements) at
 * w + j * ldw bytes: W's rows are loaded into tiles as they are stored. */
void tendo__skinny_amx_dot(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *w,
                           int64_t ldw, void *c, int64_t ldc);

/* Bytes of the scratch tendo__skinny_amx_axpy takes, for m x n: its
 * staging tiles, then f32 sums. */
int64_t tendo__skinny_amx_axpy_acc_bytes(int64_t m, int64_t n);

/* C += A B for A packed (not transposed) and bf16 B row p (n elements) at
 * b + p * ldb bytes, staged and summed in acc
 * (tendo__skinny_amx_axpy_acc_bytes, 64-byte aligned, overwritten).  B is
 * read along its rows, CHUNK blocks of 32 rows by PANEL columns at a time,
 * pairs of rows interleaved into staging tiles; C's tiles are kept in acc
 * between those blocks. */
void tendo__skinny_amx_axpy(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,
                            int64_t ldb, float *acc, void *c, int64_t ldc);
#endif

#endif /* TENDO_SRC_CPU_SKINNY_AMX_H */
