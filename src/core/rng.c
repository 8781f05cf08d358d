/* src/core/rng.c - host loops that fill buffers from tendo's random streams.
 *
 * Speed.  One Philox block is a chain of ten dependent multiply rounds, so
 * a loop that finishes one counter before starting the next is bound by
 * that latency and gcc -O2 will not vectorize it.  Here counters go in
 * blocks of RNG_BLOCK consecutive ones sharing the high counter word, and
 * the rounds go "round-major": each pass is a plain loop over the block
 * that takes every counter two rounds further, from and to small arrays in
 * L1.  Such a loop has a fixed trip count and independent iterations, which
 * gcc -O2 and clang -O2 turn into SIMD code (16M f32 uniforms: about 80 ms
 * on one 3.2 GHz Zen 3 core, against about 170 ms counter by counter).
 *
 * Exactness.  The passes call the same tendo__philox_round as
 * tendo__philox4x32_10, in the same order, on 32-bit integers, so a block
 * gives the very bits of tendo__philox_draw; counters outside a whole block
 * (a short tail, or a block whose low word would wrap) go one at a time
 * through tendo__philox_draw.  Which path a counter takes therefore never
 * changes its value, and results do not depend on how a range is split.
 */
#include "core/rng.h"

#include "core/philox.h"

#define RNG_BLOCK 256

/* Philox state of one block: w[r][j] is word r of counter lo+j. */
typedef struct {
    uint32_t w[4][RNG_BLOCK];
} rng_block;

/* Returns nonzero when the RNG_BLOCK counters from `index` on can go as a
 * block: at least RNG_BLOCK are wanted and the low word does not wrap. */
static int rng_block_fits(uint64_t index, int64_t left)
{
    return left >= RNG_BLOCK && (uint32_t)index <= UINT32_MAX - (RNG_BLOCK - 1);
}

/* Takes the state x[4] two rounds further: under key k, then under the
 * next key; leaves k advanced by two steps. */
static inline TENDO__ALWAYS_INLINE void rng_two_rounds(uint32_t x[4],
                                                       uint32_t k[2])
{
    tendo__philox_round(x, k);
    tendo__philox_bump(k);
    tendo__philox_round(x, k);
    tendo__philox_bump(k);
}

/* Fills *b with the 10-round Philox blocks of the RNG_BLOCK counters
 * (lo + j, hi, 0, 0) under `key`: rounds 1-2 straight from the counters,
 * then four passes of two rounds each over the stored state. */
static void rng_philox_block(const uint32_t key[2], uint32_t lo, uint32_t hi,
                             rng_block *restrict b)
{
    uint32_t k[2] = {key[0], key[1]};

    for (uint32_t j = 0; j < RNG_BLOCK; j++) {
        uint32_t x[4] = {lo + j, hi, 0u, 0u};
        uint32_t kj[2] = {k[0], k[1]};
        rng_two_rounds(x, kj);
        b->w[0][j] = x[0];
        b->w[1][j] = x[1];
        b->w[2][j] = x[2];
        b->w[3][j] = x[3];
    }
    for (int pass = 1; pass < 5; pass++) {
        tendo__philox_bump(k);
        tendo__philox_bump(k);
        for (int j = 0; j < RNG_BLOCK; j++) {
            uint32_t x[4] = {b->w[0][j], b->w[1][j], b->w[2][j], b->w[3][j]};
            uint32_t kj[2] = {k[0], k[1]};
            rng_two_rounds(x, kj);
            b->w[0][j] = x[0];
            b->w[1][j] = x[1];
            b->w[2][j] = x[2];
            b->w[3][j] = x[3];
        }
    }
}

/* Stores in column 0 of *b the Philox block of counter `index` alone. */
static void rng_philox_one(uint64_t seed, uint64_t index, rng_block *b)
{
    uint32_t x[4];
    tendo__philox_draw(seed, index, x);
    b->w[0][0] = x[0];
    b->w[1][0] = x[1];
    b->w[2][0] = x[2];
    b->w[3][0] = x[3];
}

/* Writes elements k .. k+count-1 of an output from columns 0 .. count-1. */
typedef void (*rng_emit)(const rng_block *b, int count, void *out, int64_t k);

/* Fills elements 0 .. n-1 of `out` with the elements first .. first+n-1 of
 * the stream keyed by `seed`, converting the Philox words with `emit`:
 * whole blocks where they fit, single counters elsewhere. */
static inline TENDO__ALWAYS_INLINE void rng_fill(uint64_t seed, int64_t first,
                                                 int64_t n, void *out,
                                                 rng_emit emit)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint64_t index = (uint64_t)first;
    int64_t k = 0;
    rng_block b;

    /* Each emit call has a constant count, so that once inlined the block
     * case is a fixed-length loop the vectorizer accepts. */
    while (k < n) {
        if (rng_block_fits(index, n - k)) {
            rng_philox_block(key, (uint32_t)index, (uint32_t)(index >> 32), &b);
            emit(&b, RNG_BLOCK, out, k);
            k += RNG_BLOCK;
            index += RNG_BLOCK;
        } else {
            rng_philox_one(seed, index, &b);
            emit(&b, 1, out, k);
            k++;
            index++;
        }
    }
}

/* out[k+j] = f32 uniform from word 0 of column j. */
static void emit_uniform_f32(const rng_block *b, int count, void *out, int64_t k)
{
    float *o = (float *)out + k;
    for (int j = 0; j < count; j++)
        o[j] = tendo__uniform_f32_from(b->w[0][j]);
}

/* out[k+j] = f64 uniform from words 0-1 of column j. */
static void emit_uniform_f64(const rng_block *b, int count, void *out, int64_t k)
{
    double *o = (double *)out + k;
    for (int j = 0; j < count; j++)
        o[j] = tendo__uniform_f64_from(b->w[0][j], b->w[1][j]);
}

/* out[k+j] = f32 normal from words 0-1 of column j. */
static void emit_normal_f32(const rng_block *b, int count, void *out, int64_t k)
{
    float *o = (float *)out + k;
    for (int j = 0; j < count; j++)
        o[j] = tendo__normal_f32_from(b->w[0][j], b->w[1][j]);
}

/* out[k+j] = f64 normal from words 0-3 of column j. */
static void emit_normal_f64(const rng_block *b, int count, void *out, int64_t k)
{
    double *o = (double *)out + k;
    for (int j = 0; j < count; j++)
        o[j] = tendo__normal_f64_from(b->w[0][j], b->w[1][j], b->w[2][j],
                                      b->w[3][j]);
}

void tendo__rand_uniform_f32(uint64_t seed, int64_t first, int64_t n, float *out)
{
    rng_fill(seed, first, n, out, emit_uniform_f32);
}

void tendo__rand_normal_f32(uint64_t seed, int64_t first, int64_t n, float *out)
{
    rng_fill(seed, first, n, out, emit_normal_f32);
}

void tendo__rand_uniform_f64(uint64_t seed, int64_t first, int64_t n, double *out)
{
    rng_fill(seed, first, n, out, emit_uniform_f64);
}

void tendo__rand_normal_f64(uint64_t seed, int64_t first, int64_t n, double *out)
{
    rng_fill(seed, first, n, out, emit_normal_f64);
}
