/* src/core/internal.h - tendo's internal, dtype-independent core.
 *
 * Every generated tensor_<dt> is a tendo__tensor underneath: the per-dtype
 * code in src/gen/ is a thin typed layer over the functions declared here.
 * Internal names are tendo__*; nothing here is installed.
 */
#ifndef TENDO_SRC_INTERNAL_H
#define TENDO_SRC_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tendo/core.h"
#include "tendo/dtype.h"

#if defined(__GNUC__)
#define TENDO__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TENDO__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TENDO__PRINTF(f, a)
#define TENDO__UNLIKELY(x) (x)
#endif

/* Host allocations are aligned to this many bytes (a cache line, and
 * enough for any vector load). */
#define TENDO__HOST_ALIGN 64

/* ---- allocation (src/core/alloc.c) ----------------------------------------- */

/* malloc, calloc, realloc and strdup for everything the library allocates
 * (release with free): each may be the one tendo_fault_inject_alloc makes
 * fail. */
void *tendo__malloc(size_t n);
void *tendo__calloc(size_t count, size_t size);
void *tendo__realloc(void *p, size_t n);
char *tendo__strdup(const char *s);
/* Counts one allocation the library makes some other way (aligned, mapped,
 * on a device); false when it must fail as out of memory. */
bool tendo__alloc_ok(void);
/* How many allocations the library has counted so far, in all threads (for
 * tests: the allocations a call makes are the difference over the call). */
int64_t tendo__alloc_count(void);

/* ---- errors (src/core/error.c) ------------------------------------------------ */

/* Records "op: message" as the calling thread's last error; returns status
 * so that callers can write `return tendo__fail(...)`. */
tendo_status tendo__fail(tendo_status status, const char *op, const char *fmt, ...)
    TENDO__PRINTF(3, 4);
/* Reports the last error, left by a call that function op made inside,
 * as op's own: same status, op's name, "op: " before the message (a
 * function written in tendo's own functions, such as mse_loss). */
void tendo__fail_as(const char *op);

/* A shape rendered as "[3,4]" (at most TENDO_MAX_DIMS sizes); usable inside
 * one printf-like call as tendo__shape_str(n, s).s */
typedef struct { char s[TENDO_MAX_DIMS * 21 + 3]; } tendo__shape_buf;
tendo__shape_buf tendo__shape_str(int ndim, const int64_t *shape);

/* ---- storage (src/core/storage.c) --------------------------------------------- */

typedef struct tendo__storage tendo__storage;
typedef void (*tendo__release_fn)(void *ctx, void *data, size_t nbytes);
struct tendo__pool;
struct tendo__pool_block;

struct tendo__storage {
    atomic_int_fast64_t refs;
    void *data;
    size_t nbytes;
    tendo_device device;
    struct tendo__pool *pool;        /* where data came from ... */
    struct tendo__pool_block *block; /* ... and goes back to */
    tendo__release_fn release;       /* or: frees borrowed data (pool unused) */
    void *release_ctx;
    atomic_uint_fast64_t version; /* writes so far (autograd's version counter) */
    struct tendo__prepacked *_Atomic prepacked; /* CPU: panels kept by tensor_<dt>_prepack (src/cpu/prepack.h) */
};

/* New storage of nbytes 64-byte aligned bytes on d, from d's pool, with one
 * reference; NULL (TENDO_ERR_OOM) on failure. */
tendo__storage *tendo__storage_new(const char *op, size_t nbytes, tendo_device d);
/* Storage over nbytes at data that tendo did not allocate (a file mapping,
 * another framework's buffer), with one reference; the last release calls
 * release(ctx, data, nbytes).  NULL (TENDO_ERR_OOM) on failure, and then
 * release is not called: the caller still owns data. */
tendo__storage *tendo__storage_wrap(const char *op, void *data, size_t nbytes, tendo_device d,
                                    tendo__release_fn release, void *ctx);
/* Adds a reference to s and returns s. */
tendo__storage *tendo__storage_retain(tendo__storage *s);
/* Drops a reference; frees s and its data with the last one. NULL is a no-op. */
void tendo__storage_release(tendo__storage *s);
/* Frees the panels kept with s (src/cpu/prepack.c); for its last release. */
void tendo__prepacked_free_all(tendo__storage *s);

/* ---- the tensor header --------------------------------------------------- */

typedef struct tendo__tensor {
    tendo_dtype dtype;
    int ndim;
    int64_t shape[TENDO_MAX_DIMS];
    int64_t stride[TENDO_MAX_DIMS]; /* in elements */
    int64_t offset;                 /* in elements */
    int64_t numel;
    tendo__storage *storage;
    struct tendo__grad_meta *ag;    /* autograd state (src/core/autograd.h); NULL: none */
} tendo__tensor;

/* ---- layout (src/core/layout.c): shapes and strides, no tensors ----------------- */

/* Validates (ndim, shape) for op and stores the element count in *numel;
 * false with TENDO_ERR_INVALID_ARG / TENDO_ERR_SHAPE set otherwise. */
bool tendo__check_shape(const char *op, int ndim, const int64_t *shape, int64_t *numel);
/* Row-major strides of shape. */
void tendo__contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
/* True when (shape, stride) is dense row-major; size-1 dims and empty
 * shapes are contiguous whatever their strides. */
bool tendo__strides_contiguous(int ndim, const int64_t *shape, const int64_t *stride);
/* Normalizes dim (negative counts from the end) against ndim; -1 with
 * TENDO_ERR_INVALID_ARG naming op and shape when out of range. */
int tendo__wrap_dim(const char *op, int dim, int ndim, const int64_t *shape);
/* NumPy broadcast of two shapes into out (ndim = max); false with
 * TENDO_ERR_SHAPE naming op and both shapes when they cannot broadcast. */
bool tendo__broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                             int *nout, int64_t *out);
/* Resolves one -1 in shape against numel into out; false with an error
 * when there are two, a size is invalid, or the counts differ. */
bool tendo__infer_shape(const char *op, int old_ndim, const int64_t *old_shape, int64_t numel,
                        int ndim, const int64_t *shape, int64_t *out);
/* Strides that view (old shape, old stride) as new_shape without copying,
 * written to new_stride; false (no error set) when impossible. */
bool tendo__view_strides(int old_ndim, const int64_t *old_shape, const int64_t *old_stride,
                         int new_ndim, const int64_t *new_shape, int64_t *new_stride);

/* ---- devices (src/core/device.c) ----------------------------------------------- */

/* True when tensors can be made on d by this build; else sets
 * TENDO_ERR_DEVICE naming op and d. */
bool tendo__check_device(const char *op, tendo_device d);

/* ---- tensors (src/core/tensor.c) ---------------------------------------------- */

/* True when t is non-NULL; sets TENDO_ERR_INVALID_ARG naming op and the
 * argument otherwise. */
bool tendo__check_tensor(const char *op, const char *arg, const tendo__tensor *t);
/* New contiguous tensor with fresh storage on d; NULL with the error set. */
tendo__tensor *tendo__tensor_new(const char *op, tendo_dtype dtype, int ndim,
                                 const int64_t *shape, tendo_device d);
/* New handle on t's storage with the given geometry (validated by the
 * caller); NULL on out of memory. */
tendo__tensor *tendo__tensor_view(const char *op, const tendo__tensor *t, int ndim,
                                  const int64_t *shape, const int64_t *stride, int64_t offset);
/* A new handle on t's elements (same storage, shape, strides and offset),
 * outside any autograd record; NULL (TENDO_ERR_OOM naming op) on failure. */
tendo__tensor *tendo__tensor_alias(const char *op, const tendo__tensor *t);
/* New handle over storage s (a new reference to it) with the given dtype,
 * shape, strides (NULL: row-major) and offset in elements, all validated by
 * the caller; NULL on out of memory. */
tendo__tensor *tendo__tensor_over(const char *op, tendo__storage *s, tendo_dtype dtype, int ndim,
                                  const int64_t *shape, const int64_t *stride, int64_t offset);
/* Frees the handle and drops its storage reference; NULL is a no-op. */
void tendo__tensor_free(tendo__tensor *t);
/* Address of element 0 (the offset applied): host memory on the CPU, a
 * device address (only for kernels and copies) on a GPU. */
void *tendo__tensor_data(const tendo__tensor *t);
/* True when t is dense row-major. */
bool tendo__tensor_contiguous(const tendo__tensor *t);
/* Copies numel elements from host memory at data into the new tensor t, on
 * any device: t, or NULL (t freed, the error set) when the upload fails. */
tendo__tensor *tendo__fill_from_host(const char *op, tendo__tensor *t, const void *data);
/* Size of t's dim (negative counts from the end); -1 with the error set. */
int64_t tendo__size(const char *op, const tendo__tensor *t, int dim);
/* Element 0 of a CPU tensor; NULL with the error set for a NULL or GPU tensor. */
void *tendo__host_data(const char *op, const tendo__tensor *t);
/* The tensor behind the erased handle e when it has dtype, else NULL with
 * TENDO_ERR_DTYPE naming both dtypes (the same handle: no new reference). */
tendo__tensor *tendo__as_dtype(const char *op, tendo_tensor *e, tendo_dtype dtype);
/* For bool data on the CPU read from a file, the n bytes it spans: true when every byte is 0 or
 * 1, as a C bool must be (reading another byte as bool is undefined); false
 * with error `status` naming op, what and the first bad byte otherwise. */
bool tendo__check_bool_bytes(const char *op, const char *what, tendo_status status, const void *bytes, size_t n);

/* ---- views (src/core/view.c): new handles sharing t's storage ------------------ */

tendo__tensor *tendo__reshape(const tendo__tensor *t, int ndim, const int64_t *shape);
tendo__tensor *tendo__view(const tendo__tensor *t, int ndim, const int64_t *shape);
tendo__tensor *tendo__flatten(const tendo__tensor *t, int start_dim, int end_dim);
tendo__tensor *tendo__transpose(const tendo__tensor *t, int d0, int d1);
tendo__tensor *tendo__permute(const tendo__tensor *t, const int *perm);
tendo__tensor *tendo__squeeze(const tendo__tensor *t, int dim);
tendo__tensor *tendo__unsqueeze(const tendo__tensor *t, int dim);
tendo__tensor *tendo__narrow(const tendo__tensor *t, int dim, int64_t start, int64_t length);
tendo__tensor *tendo__slice(const tendo__tensor *t, int dim, int64_t start, int64_t stop,
                            int64_t step);
tendo__tensor *tendo__expand(const tendo__tensor *t, int ndim, const int64_t *shape);
tendo__tensor *tendo__flip(const tendo__tensor *t, int dim);

/* ---- copies (src/core/copy.c) --------------------------------------------------- */

/* Called on each run of elements of a strided walk: n elements starting at
 * src, step src_stride elements apart, that land at row-major logical
 * positions at..at+n-1. */
typedef void (*tendo__row_fn)(void *ctx, const void *src, int64_t src_stride, int64_t n,
                              int64_t at);
/* Visits all of t in row-major logical order, in runs, after merging the
 * dims that can be merged (so a contiguous t is one run). */
void tendo__walk_rows(const tendo__tensor *t, tendo__row_fn fn, void *ctx);
/* Copies t's elements in row-major logical order to the dense buffer dst
 * (cache-blocked for transposed layouts). */
void tendo__copy_to_dense(const tendo__tensor *t, void *dst);
/* A contiguous copy of t with its own storage on t's device. */
tendo__tensor *tendo__clone(const char *op, const tendo__tensor *t);
/* t as a new handle if contiguous, else tendo__clone(t). */
tendo__tensor *tendo__contiguous(const char *op, const tendo__tensor *t);
/* A contiguous copy of t on device d (errors reported as "to"). */
tendo__tensor *tendo__to_device(const tendo__tensor *t, tendo_device d);
/* The same, its errors reported for op: a call that moves a tensor on
 * its way (print of a GPU tensor). */
tendo__tensor *tendo__move(const char *op, const tendo__tensor *t, tendo_device d);
/* t's elements in row-major order in host memory: t itself as a new handle
 * when it is a contiguous CPU tensor, else a contiguous CPU copy. */
tendo__tensor *tendo__host_contiguous(const char *op, const tendo__tensor *t);
/* t's elements in row-major logical order into the dense host buffer dst,
 * from any device (a GPU's are copied there first, then downloaded). */
tendo_status tendo__read_dense(const char *op, const tendo__tensor *t, void *dst);
/* copy_to: validates dst/count and copies. */
tendo_status tendo__copy_out(const char *op, const tendo__tensor *t, void *dst, int64_t count);

#endif /* TENDO_SRC_INTERNAL_H */
