/* src/cpu/skinny_amx.c - bf16 products of a few rows by a weight on AMX
 * tiles (skinny_amx.h).
 *
 * Eight tiles of 16 rows by 64 bytes: four accumulate a 32 x 32 block of
 * the result (or of its transpose), two hold the weight's operand, two
 * A's (A packed into tiles first, so that they load from consecutive
 * bytes).  A dot product of two tiles (tdpbf16ps) multiplies 16 x 16 x
 * 32 in the time the AVX-512 path takes for a sixteenth of it, so a few
 * rows by a weight cost what streaming the weight does.
 *
 * The transposed view of an [n, k] weight (rows of k) is A's operand of
 * the tile product as stored: C^T = W A^T, A transposed and its pairs of k
 * interleaved once by tendo__skinny_amx_pack.  A [k, n] weight is
 * B's operand, which wants pairs of rows interleaved: 32 columns of two
 * rows at a time are interleaved into a staging tile (two permutes per 64
 * bytes). */
#include <stdbool.h>
#include <string.h>

#include "cpu/skinny_amx.h"

#ifdef TENDO__HAVE_AMX
#include <immintrin.h>

#define TARGET_AMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,amx-tile,amx-bf16")))

/* The tile intrinsics are assembly that names its pointers only: memory
 * written for a tile load, or read after a tile store, is fenced from the
 * compiler with this, on both sides (so that neither the writes for the
 * next load nor the reads of the last store move past them). */
#define COMPILER_FENCE() __asm__ volatile("" ::: "memory")

/* A [k, n] weight is interleaved CHUNK blocks of 32 rows by PANEL columns
 * at a time: each pair of rows read along PANEL * 2 bytes. */
#define CHUNK 2
#define PANEL 512

/* Palette 1, tiles 0-7 all 16 rows of 64 bytes. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

TARGET_AMX static void tiles_configure(void)
{
    tile_config cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    COMPILER_FENCE();
    _tile_loadconfig(&cfg);
}

/* C's rows r0.. and columns c0.. (at most 16 of each, limited by nr and nc)
 * += tile, 16 x 16 floats; transposed: C(r0 + q, c0 + p) += tile[p][q]. */
static void add_tile(const float *tile, int transposed, float *c, int64_t ldc, int64_t r0, int64_t c0, int64_t nr,
                     int64_t nc)
{
    int64_t rs = transposed ? 1 : 16, cs = transposed ? 16 : 1;

    for (int64_t i = 0; i < nr && i < 16; i++)
        for (int64_t j = 0; j < nc && j < 16; j++)
            c[(r0 + i) * ldc + c0 + j] += tile[i * rs + j * cs];
}

/* The staging tiles of tendo__skinny_amx_axpy: CHUNK blocks of 32 rows by
 * PANEL columns, two tiles per 32 columns. */
typedef uint16_t axpy_stage[CHUNK][PANEL / 32][2][512];

int64_t tendo__skinny_amx_axpy_acc_bytes(int64_t m, int64_t n)
{
    return (int64_t)sizeof(axpy_stage) + (m + 15) / 16 * 16 * ((n + 31) / 32 * 32) * 4;
}

int64_t tendo__skinny_amx_a_bytes(int64_t m, int64_t lda) { return (m + 15) / 16 * 16 * lda * 2; }

void tendo__skinny_amx_pack(int64_t m, int64_t k, const uint16_t *a, int64_t rsa, int64_t csa, uint16_t *ap,
                            int64_t lda, bool transposed)
{
    int64_t mts = (m + 15) / 16;

    memset(ap, 0, (size_t)tendo__skinny_amx_a_bytes(m, lda));
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = 0; q < k; q++) {
            uint16_t *tile = ap + ((q / 32) * mts + i / 16) * 512;
            if (transposed)
                tile[(q % 32) / 2 * 32 + (i % 16) * 2 + (q & 1)] = a[i * rsa + q * csa];
            else
                tile[(i % 16) * 32 + q % 32] = a[i * rsa + q * csa];
        }
}

/* Weight rows j.. (nj of them, at most 16) over k block kb into a staging
 * tile, zeros past them and past k: the end of the weight, in rows or in
 * k.  Masked vector moves, no library call: tiles hold live sums here, and
 * the ABI lets a called function clobber them. */
TARGET_AMX static void stage_rows(const char *w, int64_t ldw, int64_t j, int64_t nj, int64_t kb, int64_t k,
                                  uint16_t *tile)
{
    int64_t kc = k - kb * 32 < 32 ? k - kb * 32 : 32;
    __mmask32 cols = kc >= 32 ? 0xffffffffu : (1u << kc) - 1;

    for (int64_t r = 0; r < 16; r++)
        _mm512_store_si512((void *)(tile + r * 32), r < nj ? _mm512_maskz_loadu_epi16(cols, w + (j + r) * ldw + kb * 64)
                                                           : _mm512_setzero_si512());
}

TARGET_AMX void tendo__skinny_amx_dot(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *w,
                                      int64_t ldw, void *cv, int64_t ldc)
{
    const char *av = ap;
    float *c = cv;
    int64_t kbs = lda / 32, kfull = k / 32, mts = (m + 15) / 16;
    _Alignas(64) uint16_t stage[2][512];
    _Alignas(64) float out[256];

    tiles_configure();
    for (int64_t j = 0; j < n; j += 32) {
        int64_t nj = n - j < 32 ? n - j : 32;
        int wtwo = nj > 16; /* a second tile of weight rows */
        for (int64_t t = 0; t < mts; t += 2) {
            int two = t + 1 < mts;
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int64_t kb = 0; kb < kbs; kb++) {
                const char *a0 = av + (kb * mts + t) * 1024;
                if (nj == 32 && kb < kfull) {
                    _tile_loadd(4, w + j * ldw + kb * 64, ldw);
                    _tile_loadd(5, w + (j + 16) * ldw + kb * 64, ldw);
                } else {
                    COMPILER_FENCE();
                    stage_rows(w, ldw, j, nj, kb, k, stage[0]);
                    if (wtwo)
                        stage_rows(w, ldw, j + 16, nj - 16, kb, k, stage[1]);
                    COMPILER_FENCE();
                    _tile_loadd(4, stage[0], 64);
                    if (wtwo)
                        _tile_loadd(5, stage[1], 64);
                }
                _tile_loadd(6, a0, 64);
                _tile_dpbf16ps(0, 4, 6);
                if (wtwo)
                    _tile_dpbf16ps(2, 5, 6);
                if (two) {
                    _tile_loadd(7, a0 + 1024, 64);
                    _tile_dpbf16ps(1, 4, 7);
                    if (wtwo)
                        _tile_dpbf16ps(3, 5, 7);
                }
            }
            /* tile 2u + v holds C^T's rows j + 16u.., columns 16(t + v).. */
#define ADD_TILE(tmm, i0, j0)                                                                                  \
    do {                                                                                                       \
        COMPILER_FENCE();                                                                                      \
        _tile_stored(tmm, out, 64);                                                                            \
        COMPILER_FENCE();                                                                                      \
        add_tile(out, 1, c, ldc, i0, j0, m - (i0), j + nj - (j0));                                             \
    } while (0)
            ADD_TILE(0, t * 16, j);
            if (wtwo)
                ADD_TILE(2, t * 16, j + 16);
            if (two) {
                ADD_TILE(1, t * 16 + 16, j);
                if (wtwo)
                    ADD_TILE(3, t * 16 + 16, j + 16);
            }
#undef ADD_TILE
        }
    }
    _tile_release();
}

/* Rows 32 kb .. 32 kb + 31 of B (those below k), columns j.. (nj of them, at
 * most 32), pairs of rows interleaved into two staging tiles: tile u, row
 * r holds B(32 kb + 2r, j + 16u + q), B(32 kb + 2r + 1, j + 16u + q) for
 * q < 16; zeros past k and n. */
TARGET_AMX static void stage_pairs(const char *b, int64_t ldb, int64_t j, int64_t nj, int64_t kb, int64_t k,
                                   uint16_t tile[2][512])
{
    /* lane 2q of the first tile takes row 2r's element q, lane 2q + 1 row
     * 2r + 1's (the second source's lanes are 32..63); the second tile
     * the same from element 16 on */
    static const uint16_t lo_lanes[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                          8,  40, 9,  41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    static const uint16_t hi_lanes[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                          24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
    __m512i lo = _mm512_loadu_si512((const void *)lo_lanes), hi = _mm512_loadu_si512((const void *)hi_lanes);
    __mmask32 cols = nj >= 32 ? 0xffffffffu : (1u << nj) - 1;
    const char *row = b + kb * 32 * ldb + j * 2;

    for (int64_t r = 0; r < 16; r++) {
        int64_t p = kb * 32 + 2 * r;
        __m512i r0 = p < k ? _mm512_maskz_loadu_epi16(cols, row + 2 * r * ldb) : _mm512_setzero_si512();
        __m512i r1 = p + 1 < k ? _mm512_maskz_loadu_epi16(cols, row + (2 * r + 1) * ldb) : _mm512_setzero_si512();
        _mm512_store_si512((void *)(tile[0] + r * 32), _mm512_permutex2var_epi16(r0, lo, r1));
        _mm512_store_si512((void *)(tile[1] + r * 32), _mm512_permutex2var_epi16(r0, hi, r1));
    }
}

/* The f32 accumulator tile of tendo__skinny_amx_axpy holding C's rows
 * 16 t.., columns 32 jb + 16 u.. (tiles stored whole, one after another). */
#define ACC_TILE(acc, mts, jb, t, u) ((acc) + (((jb) * (mts) + (t)) * 2 + (u)) * 256)

TARGET_AMX void tendo__skinny_amx_axpy(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,
                                       int64_t ldb, float *acc, void *cv, int64_t ldc)
{
    const char *a = ap;
    float *c = cv;
    int64_t kbs = lda / 32, mts = (m + 15) / 16;
    uint16_t(*stage)[PANEL / 32][2][512] = (void *)acc; /* then the sums */

    acc += sizeof(axpy_stage) / sizeof *acc;
    memset(acc, 0, (size_t)(tendo__skinny_amx_axpy_acc_bytes(m, n) - (int64_t)sizeof(axpy_stage)));
    tiles_configure();
    for (int64_t kb0 = 0; kb0 < kbs; kb0 += CHUNK) {
        int64_t kbn = kbs - kb0 < CHUNK ? kbs - kb0 : CHUNK;
        for (int64_t j0 = 0; j0 < n; j0 += PANEL) {
            int64_t jn = n - j0 < PANEL ? n - j0 : PANEL;
            for (int64_t q = 0; q < kbn; q++)
                for (int64_t j = 0; j < jn; j += 32)
                    stage_pairs(b, ldb, j0 + j, jn - j, kb0 + q, k, stage[q][j / 32]);
            COMPILER_FENCE();
            for (int64_t j = 0; j < jn; j += 32)
                for (int64_t t = 0; t < mts; t += 2) {
                    /* tile 2v + u: rows 16(t + v).., columns j0 + j + 16u.. */
                    int64_t jb = (j0 + j) / 32;
                    const char *a0 = a + (kb0 * mts + t) * 1024;
                    int two = t + 1 < mts;
                    _tile_loadd(0, ACC_TILE(acc, mts, jb, t, 0), 64);
                    _tile_loadd(1, ACC_TILE(acc, mts, jb, t, 1), 64);
                    if (two) {
                        _tile_loadd(2, ACC_TILE(acc, mts, jb, t + 1, 0), 64);
                        _tile_loadd(3, ACC_TILE(acc, mts, jb, t + 1, 1), 64);
                    }
                    for (int64_t q = 0; q < kbn; q++) {
                        _tile_loadd(4, stage[q][j / 32][0], 64);
                        _tile_loadd(5, stage[q][j / 32][1], 64);
                        _tile_loadd(6, a0 + q * mts * 1024, 64);
                        _tile_dpbf16ps(0, 6, 4);
                        _tile_dpbf16ps(1, 6, 5);
                        if (two) {
                            _tile_loadd(7, a0 + q * mts * 1024 + 1024, 64);
                            _tile_dpbf16ps(2, 7, 4);
                            _tile_dpbf16ps(3, 7, 5);
                        }
                    }
                    _tile_stored(0, ACC_TILE(acc, mts, jb, t, 0), 64);
                    _tile_stored(1, ACC_TILE(acc, mts, jb, t, 1), 64);
                    if (two) {
                        _tile_stored(2, ACC_TILE(acc, mts, jb, t + 1, 0), 64);
                        _tile_stored(3, ACC_TILE(acc, mts, jb, t + 1, 1), 64);
                    }
                }
            COMPILER_FENCE();
        }
    }
    _tile_release();
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] += ACC_TILE(acc, mts, j / 32, i / 16, j % 32 / 16)[i % 16 * 16 + j % 16];
}
#endif
