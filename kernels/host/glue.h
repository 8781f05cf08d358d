/* kernels/host/glue.h - what the C files of the CUDA backend share.
 *
 * Compiled only when configure found CUDA (TENDO_HAVE_CUDA); the rest of
 * tendo reaches these through the CUDA entry of the device table
 * (core/device.h, filled in at the end of kernels/host/runtime.c).  Only
 * called on tensors whose device is CUDA.  Every function that can fail sets the thread's error
 * (TENDO_ERR_CUDA with CUDA's own message, naming op) and returns false or
 * NULL.  Work goes on the calling thread's per-thread default stream of
 * the tensors' device; nothing here waits for it unless it says so.
 */
#ifndef TENDO_SRC_CUDA_GLUE_H
#define TENDO_SRC_CUDA_GLUE_H

#include "core/launch.h"
#include "core/internal.h"
#include "core/device.h"
#include "core/iter.h"

struct tendo__pool;

/* Usable CUDA devices (0 when there is no driver or no GPU; never an error). */
int tendo__cuda_count(void);
/* tendo_cuda_device_info for a valid index (see core.h). */
bool tendo__cuda_info(const char *op, int index, char *name, size_t n, size_t *total, size_t *free_bytes);
/* The caching pool of CUDA device index (created on first use), or NULL. */
struct tendo__pool *tendo__cuda_pool(int index);
/* The pool's name for the calling thread's per-thread stream on device
 * index (nonzero; 0 when CUDA cannot say). */
uintptr_t tendo__cuda_stream_key(int index);
/* Makes d the calling thread's current device. */
bool tendo__cuda_use(const char *op, tendo_device d);
/* True for err == 0 (cudaSuccess); else sets TENDO_ERR_CUDA for op with
 * CUDA's message and returns false. */
bool tendo__cuda_ok(const char *op, int err);
/* The same for a cublasStatus_t. */
bool tendo__cuda_blas_ok(const char *op, int status);

/* Makes the device of ts[0] current and notes that this thread's stream
 * uses ts[0..n) (NULL entries skipped), so that their blocks are not
 * reused before this work is done. */
bool tendo__cuda_begin(const char *op, const tendo__tensor *const *ts, int n);
/* After the work is queued: leaves an event after it for each of ts that
 * this thread's stream used but did not allocate, so that freeing it from
 * any thread waits for that event instead of the whole device.  Returns ok
 * (for `return tendo__cuda_end(ts, n, launched);`). */
bool tendo__cuda_end(const tendo__tensor *const *ts, int n, bool ok);
/* Runs fn (a launcher of src/gen/cuda_*.cu) over it, whose operands are
 * the tensors ts[0..it->nops) (output first), on their device. */
bool tendo__cuda_loop(const char *op, const tendo__iter *it, const tendo__tensor *const *ts,
                      tendo__cu_loop_fn fn, const void *ctx);
/* Runs fn over rows: `starts` iterates the row starts (operand 0 the
 * output's, 1 the input's, 2 a second input's); extra tensors (norm
 * weights) are noted as used. */
bool tendo__cuda_rows(const char *op, const tendo__iter *starts, int64_t len, int64_t in_step,
                      int64_t in2_step, int64_t out_step, const tendo__tensor *const *ts, int nts,
                      tendo__cu_rows_fn fn, const void *ctx);
/* out (dense, same device and dtype) = in, any strides. */
bool tendo__cuda_copy(const char *op, tendo__tensor *out, const tendo__tensor *in);
/* Fills the dense t through the Philox launcher fn (see core/device.h). */
bool tendo__cuda_rand(const char *op, tendo__tensor *t, tendo__cu_rand_fn fn, uint64_t seed, bool normal);
/* Sets every element of the dense t to the element at *value. */
bool tendo__cuda_fill(const char *op, tendo__tensor *t, const void *value);
/* n bytes from host src to device memory dst on d (pinned staging for
 * large copies); returns when src may be reused. */
bool tendo__cuda_upload(const char *op, tendo_device d, void *dst, const void *src, size_t n);
/* n bytes from device memory src on d to host dst; waits for the device's
 * earlier work on this thread's stream and for the copy. */
bool tendo__cuda_download(const char *op, tendo_device d, void *dst, const void *src, size_t n);
/* n bytes from src on device sd to dst on device dd (peer to peer where
 * the GPUs allow it); returns when the copy is done. */
bool tendo__cuda_peer(const char *op, tendo_device dd, void *dst, tendo_device sd, const void *src, size_t n);
/* The calling thread's cuBLAS handle for device index (a cublasHandle_t,
 * created on first use), or NULL with the error set. */
void *tendo__cuda_cublas(const char *op, int index);
/* Waits for all work on device d (every thread's). */
bool tendo__cuda_sync(const char *op, tendo_device d);
/* The indexed walk w over ts[0..nts) (core/device.h's index slot). */
bool tendo__cuda_index(const char *op, const tendo__cu_index *w, const tendo__tensor *const *ts, int nts,
                       tendo__cu_scatter_add_fn add);
/* One collective among the ranks of c over NCCL (core/device.h's collective slot;
 * kernels/host/nccl.c), and the release of the communicator it made. */
struct tendo_comm;
struct tendo__coll;
bool tendo__cuda_collective(const char *op, const struct tendo_comm *c, tendo_device d, const struct tendo__coll *w,
                            const tendo__tensor *const *ts, int nts);
void tendo__cuda_comm_release(void *handle);
/* One optimizer update by the launcher fn over ts[0..nts) (core/device.h's optim slot). */
bool tendo__cuda_optim(const char *op, const tendo__cu_optim *w, const tendo__tensor *const *ts, int nts,
                       tendo__cu_optim_fn fn);
/* tril/triu zeroing of the dense t (core/device.h's tri_zero slot). */
bool tendo__cuda_tri_zero(const char *op, tendo__tensor *t, int64_t k, bool upper);
/* numpy.matmul through cuBLAS (kernels/host/blas.c). */
bool tendo__cuda_matmul(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out);
/* rope, attention and its gradients with checked arguments (kernels/host/transformer.c). */
tendo__tensor *tendo__cuda_rope(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot,
                                double base, bool interleaved);
tendo__tensor *tendo__cuda_attention(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                     const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask);
bool tendo__cuda_attention_backward(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                    const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask,
                                    const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                                    tendo__tensor *grads[3]);

#endif /* TENDO_SRC_CUDA_GLUE_H */
