/* src/cpu/prepack.h - weights packed once: the packed GEMM's panels of a matrix
 * that tensor_<dt>_prepack asked to keep, held with its storage and used by
 * every product that reads the same view as B while the storage is
 * unchanged.
 *
 * An entry is keyed by the view (where B(0, 0) lies in the storage, its
 * rows, columns and strides) and the kind of panel, and remembers the
 * storage's version (src/core/internal.h: every write through tendo bumps
 * it) when it was packed.  A product finds it fresh (multiply from the
 * panels), stale (the storage was written since: pack again and the new
 * panels replace the old, unless the product is one of the skinny path's,
 * which streams the weight instead), or absent (pack as usual, keep
 * nothing).  The panels are a block of the CPU's pool, so
 * tendo_pool_get_stats counts them in bytes_in_use until the storage
 * goes.  One mutex guards the entries of every storage; a product holds a
 * reference to the entry it reads, so panels replaced by another thread
 * are freed only after it. */
#ifndef TENDO_SRC_CPU_PREPACK_H
#define TENDO_SRC_CPU_PREPACK_H

#include <stdint.h>

#include "core/internal.h"
#include "cpu/cpu.h"

typedef struct {
    tendo__pgemm_kind kind;
    int64_t offset; /* bytes from the storage's data to B(0, 0) */
    int64_t k, n;   /* B's rows and columns */
    int64_t rs, cs; /* and element strides */
} tendo__pack_key;

typedef enum { TENDO__PACK_ABSENT, TENDO__PACK_FRESH, TENDO__PACK_STALE } tendo__pack_state;

typedef struct tendo__prepacked tendo__prepacked;

/* Panels for key, not yet kept, packed at the storage version `version`
 * (the caller fills them: tendo__prepacked_panels), with one reference,
 * the caller's.  NULL with TENDO_ERR_OOM set for op. */
tendo__prepacked *tendo__prepacked_new(const char *op, const tendo__pack_key *key, uint64_t version);
/* Where e's panels are (tendo__pgemm_b_bytes(key) bytes). */
void *tendo__prepacked_panels(const tendo__prepacked *e);
/* Whether s keeps panels for key: FRESH sets *held to them (a reference
 * the caller drops); STALE: s was written since they were packed. */
tendo__pack_state tendo__prepacked_find(tendo__storage *s, const tendo__pack_key *key, tendo__prepacked **held);
/* Keeps e with s (s takes a reference of its own), replacing the entry of
 * the same key. */
void tendo__prepacked_keep(tendo__storage *s, tendo__prepacked *e);
/* Drops a reference to e; the last one frees it.  NULL is a no-op. */
void tendo__prepacked_drop(tendo__prepacked *e);

#endif /* TENDO_SRC_CPU_PREPACK_H */
