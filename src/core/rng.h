/* src/core/rng.h - host loops that fill buffers from tendo's random streams.
 *
 * The stream keyed by `seed` gives element i the Philox-4x32-10 block of
 * counter i (see src/core/philox.h).  Each function fills out[0..n) with the
 * elements first .. first+n-1, so a caller may split one result into chunks
 * (e.g. one per thread) and get the same bits as one call over everything.
 * n <= 0 writes nothing; first must be >= 0.
 */
#ifndef TENDO_SRC_RNG_H
#define TENDO_SRC_RNG_H

#include <stdint.h>

/* out[k] = uniform float on [0,1) from counter first+k (24 random bits). */
void tendo__rand_uniform_f32(uint64_t seed, int64_t first, int64_t n, float *out);
/* out[k] = standard normal float (Box-Muller) from counter first+k. */
void tendo__rand_normal_f32(uint64_t seed, int64_t first, int64_t n, float *out);
/* out[k] = uniform double on [0,1) from counter first+k (53 random bits). */
void tendo__rand_uniform_f64(uint64_t seed, int64_t first, int64_t n, double *out);
/* out[k] = standard normal double (Box-Muller) from counter first+k. */
void tendo__rand_normal_f64(uint64_t seed, int64_t first, int64_t n, double *out);

#endif /* TENDO_SRC_RNG_H */
