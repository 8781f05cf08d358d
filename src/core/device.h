/* src/core/device.h - the device table: what the core asks of a backend.
 *
 * The core (src/core/) knows no compute kernel and no device API.  What it
 * needs from the CPU kernels (src/cpu/) or from CUDA (kernels/host/) it asks
 * through one table per device type, defined by that backend:
 * tendo__cpu_device in src/cpu/device.c, tendo__cuda_device in
 * kernels/host/runtime.c (or kernels/host/none.c in a build without CUDA, whose
 * slots fail with TENDO_ERR_DEVICE).  A slot a backend has no use for is
 * NULL.  Every slot that can fail sets the thread's error naming op.
 *
 * GPU work goes on the calling thread's per-thread stream of the tensors'
 * device, and nothing waits for it unless the slot says so.
 */
#ifndef TENDO_SRC_CORE_DEVICE_H
#define TENDO_SRC_CORE_DEVICE_H

#include "core/internal.h"
#include "core/iter.h"

struct tendo__pool;
struct tendo__attn;
struct tendo__coll;
struct tendo_comm;

typedef struct tendo__device_ops {
    /* This build has the backend (false: tendo was built without it). */
    bool built;
    /* Usable devices of this type (0 when there is no driver or no GPU;
     * never an error). */
    int (*count)(void);
    /* tendo_cuda_device_info for a valid index (see core.h). */
    bool (*info)(const char *op, int index, char *name, size_t n, size_t *total, size_t *free_bytes);
    /* The caching pool of device index (created on first use), or NULL
     * when the core's own host pool serves it. */
    struct tendo__pool *(*pool)(int index);
    /* The pool's name for the calling thread's stream on device index
     * (nonzero; 0 when there is no such thing). */
    uintptr_t (*stream_key)(int index);
    /* Waits for all work on device d (every thread's). */
    bool (*sync)(const char *op, tendo_device d);

    /* out (dense, same device and dtype) = in, any strides. */
    bool (*copy)(const char *op, tendo__tensor *out, const tendo__tensor *in);
    /* dst (R x C, dense host memory) = src with strides (1, sc) elements of
     * elsize bytes, with vector transposes; false (nothing done) when there
     * is no fast kernel for elsize on this CPU. */
    bool (*transpose)(void *dst, const void *src, int64_t R, int64_t C, int64_t sc, size_t elsize);
    /* n bytes from host src to device memory dst on d; returns when src
     * may be reused. */
    bool (*upload)(const char *op, tendo_device d, void *dst, const void *src, size_t n);
    /* n bytes from device memory src on d to host dst; waits for the
     * device's earlier work on this thread's stream and for the copy. */
    bool (*download)(const char *op, tendo_device d, void *dst, const void *src, size_t n);
    /* n bytes from src on device sd to dst on device dd; returns when the
     * copy is done. */
    bool (*peer)(const char *op, tendo_device dd, void *dst, tendo_device sd, const void *src, size_t n);

    /* Runs the launcher fn over it, whose operands are the tensors
     * ts[0..it->nops) (output first), on their device. */
    bool (*loop)(const char *op, const tendo__iter *it, const tendo__tensor *const *ts, tendo__cu_loop_fn fn,
                 const void *ctx);
    /* Runs the launcher fn over rows: `starts` iterates the row starts
     * (operand 0 the output's, 1 the input's, 2 a second input's, stepping
     * in2_step along the row); ts[0..nts) are every tensor
     * the launch reads or writes. */
    bool (*rows)(const char *op, const tendo__iter *starts, int64_t len, int64_t in_step, int64_t in2_step,
                 int64_t out_step, const tendo__tensor *const *ts, int nts, tendo__cu_rows_fn fn, const void *ctx);
    /* Sets every element of the dense t to the element at *value. */
    bool (*fill)(const char *op, tendo__tensor *t, const void *value);
    /* Fills the dense t with the Philox stream of seed (uniform, or
     * normal), through the launcher fn (NULL: none for this dtype). */
    bool (*rand)(const char *op, tendo__tensor *t, tendo__cu_rand_fn fn, uint64_t seed, bool normal);
    /* The indexed walk w (core/launch.h) over the tensors ts[0..nts) it
     * reads or writes, copying, or adding through add when not NULL
     * (scatter_add); queued, not waited for (the caller downloads w->bad). */
    bool (*index)(const char *op, const tendo__cu_index *w, const tendo__tensor *const *ts, int nts,
                  tendo__cu_scatter_add_fn add);
    /* One optimizer update (core/launch.h) by the launcher fn over the
     * tensors ts[0..nts) it reads or writes.  NULL entry: the CPU's
     * kernels run instead (src/core/optim.c). */
    bool (*optim)(const char *op, const tendo__cu_optim *w, const tendo__tensor *const *ts, int nts,
                  tendo__cu_optim_fn fn);
    /* tril (upper false) / triu (upper true) zeroing of the dense t in place. */
    bool (*tri_zero)(const char *op, tendo__tensor *t, int64_t k, bool upper);
    /* numpy.matmul of a and b (same device and dtype, checked) into out:
     * dense, of their dtype and the result's shape, on their device, not
     * sharing memory with them (checked by src/core/matmul.c).  False with
     * the error set. */
    bool (*matmul)(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out);
    /* numpy.matmul of i8 a and b summed in int32, into the dense i32 out
     * (as matmul).  NULL entry: not on this device. */
    bool (*matmul_i32)(const char *op, const tendo__tensor *a, const tendo__tensor *b, tendo__tensor *out);
    /* Packs the 2-D w (checked) for the products that will read it as
     * their B, and keeps the panels with its storage (tensor_<dt>_prepack).
     * NULL entry: the device's products read weights as stored.  False
     * with the error set. */
    bool (*prepack)(const char *op, const tendo__tensor *w);
    /* rope and attention with checked arguments (core/transformer.h): a
     * new tensor of x's (q's) dtype.  NULL entries: not on this device. */
    tendo__tensor *(*rope)(const char *op, const tendo__tensor *x, const tendo__tensor *positions, int64_t rot,
                           double base, bool interleaved);
    tendo__tensor *(*attention)(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                                const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask);
    /* attention's gradients (core/transformer.h, tendo__attention_backward),
     * out and dout checked to be [lead..., hq, lq, dv] of q's dtype and
     * device; grads[i] NULL where !want[i]; false with the error set. */
    bool (*attention_backward)(const char *op, const struct tendo__attn *a, const tendo__tensor *q,
                               const tendo__tensor *k, const tendo__tensor *v, const tendo__tensor *mask,
                               const tendo__tensor *out, const tendo__tensor *dout, const bool want[3],
                               tendo__tensor *grads[3]);
    /* One collective of src/comm/comm.h among the ranks of c (more than
     * one) over dense buffers on device d, queued on the calling thread's
     * stream; ts[0..nts) are the tensors it reads or writes.  NULL entry:
     * no collectives on this device (a CUDA build without NCCL). */
    bool (*collective)(const char *op, const struct tendo_comm *c, tendo_device d, const struct tendo__coll *w,
                       const tendo__tensor *const *ts, int nts);
    /* Frees a communicator handle collective made (the tendo_comm's). */
    void (*comm_release)(void *handle);
} tendo__device_ops;

extern const tendo__device_ops tendo__cpu_device;
extern const tendo__device_ops tendo__cuda_device;

/* The table of device type t. */
static inline const tendo__device_ops *tendo__device_ops_of(tendo_device_type t)
{
    return t == TENDO_CUDA ? &tendo__cuda_device : &tendo__cpu_device;
}

#endif /* TENDO_SRC_CORE_DEVICE_H */
