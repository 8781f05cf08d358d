/* tendo/io.h - tensors to and from files.  Included by <tendo.h>. */
#ifndef TENDO_IO_H
#define TENDO_IO_H

#include "tendo/core.h"
#include "tendo/erased.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether saves (npy, safetensors) flush the file to disk before renaming
 * it into place.  Every save writes a temporary file and renames it, so a
 * crashing program never leaves half a file under the real name; with
 * durable saves on (the default) that also holds across a system crash or
 * power loss, at the cost of waiting for the disk.  Off, the flush is left
 * to the operating system, as numpy and the safetensors package leave it.
 * Process-wide; safe to call from any thread. */
TENDO_API void tendo_set_durable_saves(bool on);
TENDO_API bool tendo_get_durable_saves(void);

/* Loads a numpy .npy file (format 1.0, 2.0 or 3.0; '<f8' '<f4' '<f2' '|i1'
 * '<i2' '<i4' '<i8' '|u1' '|b1', and the big-endian '>' forms, byte-swapped;
 * C or Fortran order, the latter as a transposed view) as
 * a new CPU tensor of the matching dtype; the caller frees it with
 * tendo_tensor_free (or tendo_as_<dt> and tensor_free).  NULL on failure:
 * TENDO_ERR_IO (unreadable), TENDO_ERR_FORMAT (not a valid .npy, naming the
 * file and the fault, among them a shape entry or an element count past
 * 2^63-1), TENDO_ERR_UNSUPPORTED (a dtype tendo lacks, named). */
TENDO_API tendo_tensor *tendo_npy_load(const char *path);
/* Writes t (any strides, row-major order) as a format 1.0 .npy file,
 * little-endian, C order, through a temporary file renamed into place.
 * TENDO_ERR_UNSUPPORTED for a dtype numpy lacks (bf16, f8e4m3, f8e5m2),
 * naming it. */
TENDO_API tendo_status tendo_npy_save(const char *path, const tendo_tensor *t);

/* ---- collections: named tensors plus string metadata ---------------------
 *
 * What a safetensors file holds: tensors in file order, each under a unique
 * name, and a string -> string map (the file's "__metadata__").  A
 * collection holds its own handle on each tensor; the tensors it hands out
 * are borrowed (valid until the collection is freed; tendo_tensor_alias
 * makes one that outlives it).
 */
typedef struct tendo_collection tendo_collection;

/* A new, empty collection the caller frees with tendo_collection_free;
 * NULL (TENDO_ERR_OOM) on failure. */
TENDO_API tendo_collection *tendo_collection_new(void);
/* Frees c and its handles (storage lives on in other views); NULL is a
 * no-op. */
TENDO_API void tendo_collection_free(tendo_collection *c);
/* Appends t under name; the collection takes its own handle, the caller
 * keeps t.  TENDO_ERR_INVALID_ARG for an empty or duplicate name. */
TENDO_API tendo_status tendo_collection_add(tendo_collection *c, const char *name, const tendo_tensor *t);
/* Number of tensors; -1 for NULL. */
TENDO_API int64_t tendo_collection_count(const tendo_collection *c);
/* Name of tensor i (0 <= i < count), borrowed; NULL when out of range. */
TENDO_API const char *tendo_collection_name(const tendo_collection *c, int64_t i);
/* Tensor i, borrowed; NULL when out of range, and NULL with
 * TENDO_ERR_UNSUPPORTED (naming the tensor, its file dtype and shape) for
 * a loaded tensor of a dtype this build lacks. */
TENDO_API tendo_tensor *tendo_collection_at(const tendo_collection *c, int64_t i);
/* The tensor called name, borrowed; NULL (TENDO_ERR_INVALID_ARG naming it)
 * when there is none; TENDO_ERR_UNSUPPORTED as tendo_collection_at. */
TENDO_API tendo_tensor *tendo_collection_get(const tendo_collection *c, const char *name);
/* Sets metadata key to value (both copied; a key set twice keeps the last). */
TENDO_API tendo_status tendo_collection_set_metadata(tendo_collection *c, const char *key, const char *value);
/* Number of metadata entries; -1 for NULL. */
TENDO_API int64_t tendo_collection_metadata_count(const tendo_collection *c);
/* Key of metadata entry i, borrowed; NULL when out of range. */
TENDO_API const char *tendo_collection_metadata_key(const tendo_collection *c, int64_t i);
/* The value of key, borrowed; NULL (no error set) when absent. */
TENDO_API const char *tendo_collection_metadata(const tendo_collection *c, const char *key);

/* ---- safetensors ------------------------------------------------------------ */

/* Loads a safetensors file into a new collection the caller frees.  On the
 * CPU the tensors are views of one private mapping of the file: nothing is
 * read until touched, and the mapping lives until the last view of any
 * tensor from it is freed (a write to a loaded tensor changes that page of
 * the mapping, never the file).  A tensor whose offset is not a multiple of
 * its element size is copied instead.  On a GPU device each tensor is
 * copied there.  NULL on failure: TENDO_ERR_IO (unreadable), TENDO_ERR_FORMAT
 * (not valid safetensors: the file name and the fault; also a tensor with
 * an empty name or an empty __metadata__ key, which the reference
 * implementation accepts but a collection cannot hold), TENDO_ERR_DEVICE.
 * A tensor of a valid dtype this build lacks (F64 where configure left f64
 * out, U16...) does not fail the load: its name is in the collection, in
 * its place, and tendo_collection_get/_at of it fail with
 * TENDO_ERR_UNSUPPORTED naming it and the dtype.  The collection keeps
 * the header's order. */
TENDO_API tendo_collection *tendo_safetensors_load(const char *path, tendo_device dev);
/* A file truncated or rewritten by another process while views of its
 * mapping live is read as the mapping is then: on Linux a touch past the
 * new end of the file kills the process with SIGBUS.  For files that may
 * change underneath, this loads the same collection from a copy: the whole
 * file is read once into memory of the library's own, and nothing refers
 * to the file afterwards.  Errors as tendo_safetensors_load. */
TENDO_API tendo_collection *tendo_safetensors_load_copy(const char *path, tendo_device dev);
/* Writes c's tensors (any device, any strides) in c's order, and its
 * metadata, in the reference layout: header length (8 bytes, little-endian),
 * the JSON header padded with spaces to a multiple of 8, then the data,
 * widest element size first (as the reference implementation lays it out,
 * so every tensor is aligned).  Written to a temporary file in the same
 * directory and renamed into place.  TENDO_ERR_UNSUPPORTED, naming it, for
 * a collection holding a tensor of a dtype this build lacks. */
TENDO_API tendo_status tendo_safetensors_save(const char *path, const tendo_collection *c);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_IO_H */
