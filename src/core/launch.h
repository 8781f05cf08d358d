/* src/core/launch.h - the launch ABI: how the core describes work to a device's kernels.
 *
 * Plain C, with no CUDA types, so that it compiles both in the C files of
 * src/ (gcc) and in the .cu files (nvcc, as C++).  The C side describes the
 * work (a coalesced elementwise iteration, or rows along one dim) in these
 * POD structs; a launcher in a .cu file runs it on the calling thread's
 * per-thread default stream of the current device and returns 0, or the
 * cudaError_t of the first failure (the C side turns it into
 * TENDO_ERR_CUDA with CUDA's message).  Launchers never synchronize.
 */
#ifndef TENDO_SRC_CORE_LAUNCH_H
#define TENDO_SRC_CORE_LAUNCH_H

/* TENDO__CU below depends on TENDO_HAVE_CUDA: config.h first, whatever
 * the including file included before */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TENDO__CU_DIMS 8 /* TENDO_MAX_DIMS */
#define TENDO__CU_OPS 4  /* an output and up to three inputs */

/* Elementwise work over numel elements: operand 0 is the output.  Element
 * i (row-major over shape) of operand k is at base[k] + the sum over d of
 * (i's index along d) * stride[k][d] elements of elsize[k] bytes.  Dims are
 * already coalesced (src/core/iter.c), so dense work has ndim 1 and stride 1. */
typedef struct {
    int ndim, nops;
    int64_t numel;
    int64_t shape[TENDO__CU_DIMS];
    int64_t stride[TENDO__CU_OPS][TENDO__CU_DIMS];
    char *base[TENDO__CU_OPS];
    int elsize[TENDO__CU_OPS];
} tendo__cu_iter;

/* Row-wise work (reductions, softmax, norms): rows.numel rows; row j's
 * input starts at the input operand (1) of element j of `rows` and steps
 * in_step elements len times; its output starts at the output operand (0)
 * and steps out_step (one element for a reduction). */
typedef struct {
    tendo__cu_iter rows;
    int64_t len, in_step, out_step;
    int64_t in2_step; /* a second input's (operand 2, when rows.nops is 3) */
} tendo__cu_rows;

/* The ctx of the softmax and norm launchers. */
typedef struct {
    int log; /* log_softmax */
} tendo__cu_softmax_ctx;

/* The ctx of the argmax/argmin launchers. */
typedef struct {
    int largest; /* argmax; argmin otherwise */
} tendo__cu_arg_ctx;

typedef struct {
    const void *w, *b;          /* weight and bias on the device, or NULL */
    int64_t w_stride, b_stride; /* in elements */
    double eps;                 /* converted to the compute type on the device, as the CPU does */
    int rms;                    /* rms_norm (no mean, no bias) */
} tendo__cu_norm_ctx;

/* The ctx of the cross_entropy launchers: rows of logits (operand 1) with
 * their int64 target repeated along the row (operand 2, step 0).  The
 * forward writes each row's loss, in the compute type, to operand 0; the
 * backward each row's gradient, scaled by g (one element of the logits'
 * dtype on the device) times `scale`. */
typedef struct {
    int64_t ignore_index;
    double smoothing; /* label smoothing */
    double scale;     /* backward: 1 / the count of targets not ignored */
    const void *g;    /* backward: the loss's gradient */
} tendo__cu_ce_ctx;

/* The ctx of the sort launchers (sort, argsort, topk): the first k of each
 * row's stable sort go to the rows of the output (rows.base[0]), and
 * through it to the indices and the values, which have its layout: its
 * element e is element e of each.  Rows longer than TENDO__CU_SORT_TILE
 * are sorted in tiles merged through `scratch`: device memory for
 * 2 * rows * len pairs of 16 bytes (NULL when every row fits a tile). */
#define TENDO__CU_SORT_TILE 2048
typedef struct {
    int64_t k;
    int descending;         /* NaN first; otherwise NaN last */
    int out_size;           /* the output's element size */
    const char *out_base;   /* the output's element 0 */
    int64_t *indices;       /* element 0 of the int64 indices, or NULL */
    char *values;           /* of the values (the input's dtype), or NULL */
    void *scratch;
} tendo__cu_order_ctx;

/* The ctx of the var launchers: sum((x - mean)^2) / max(0, len - correction),
 * or its square root. */
typedef struct {
    int64_t correction;
    int sqrt;
} tendo__cu_var_ctx;

/* One optimizer update of one parameter (src/core/optim.c): n dense
 * elements of param and grad (the parameter's dtype) and of the states,
 * which are dense in the compute type (float, double for f64).  The same
 * struct describes the work to the CPU kernels (tendo__adamw_<acc>,
 * tendo__sgd_<acc>) and to the launchers. */
typedef struct {
    int64_t n;
    void *param;
    const void *grad;
    void *m;      /* AdamW's exp_avg; SGD's momentum buffer (NULL without momentum) */
    void *v;      /* AdamW's exp_avg_sq; NULL for SGD */
    void *master; /* param in the compute type, updated and rounded into param; NULL: param itself */
    double lr, weight_decay;
    double beta1, beta2, eps;   /* AdamW */
    double step_size, bc2_sqrt; /* AdamW, in double as torch does: lr / (1 - beta1^step), sqrt(1 - beta2^step) */
    double momentum;            /* SGD */
    int nesterov, first;        /* SGD: first: the momentum buffer starts as the step's gradient */
} tendo__cu_optim;

/* Per-dtype launchers tendo__cu_<kernel>_<dt>, one for each [[kernel]] of
 * gen/registry/ that a dtype's functions use (declared in the generated
 * src/gen/cuda_launchers.h, defined by kernels/templates/<source>.cu.j2),
 * of these ABIs:
 *   TENDO__CU_LOOP   an elementwise op over a tendo__cu_iter: the op
 *                    families' <op> (ctx NULL, or the scalar b of
 *                    <op>_scalar in the compute type: a double for an op
 *                    with a bool result), clamp (ctx compute-type[2] {lo,
 *                    hi}), where (operands out, cond (bool), a, b), masked_fill
 *                    (operands out, a, mask (bool); ctx one <dt> element),
 *                    to_<to> (a conversion into <to>; ctx NULL)
 *   TENDO__CU_ROWS   row-wise work over a tendo__cu_rows: reduce_<op> (output
 *                    of the op's result dtype; ctx NULL), arg (ctx
 *                    tendo__cu_arg_ctx; int64 output), softmax (ctx
 *                    tendo__cu_softmax_ctx), norm (ctx tendo__cu_norm_ctx), sort
 *                    (ctx tendo__cu_order_ctx), cumsum (ctx NULL; a float's own
 *                    dtype, else int64), var (ctx tendo__cu_var_ctx),
 *                    cross_entropy and cross_entropy_back (ctx tendo__cu_ce_ctx)
 *   TENDO__CU_RAND   rand: Philox uniforms or normals into n dense elements
 *   TENDO__CU_OPTIM  adamw, sgd: one optimizer update (tendo__cu_optim) */
#define TENDO__CU_LOOP(name) int name(const tendo__cu_iter *it, const void *ctx)
#define TENDO__CU_ROWS(name) int name(const tendo__cu_rows *r, const void *ctx)
#define TENDO__CU_RAND(name) int name(void *dst, int64_t n, uint64_t seed, int normal)

/* TENDO__CU(f) names a launcher in a CUDA build and is NULL without (the
 * typed entry points pass both their CPU loop and their launcher). */
#ifdef TENDO_HAVE_CUDA
#define TENDO__CU(f) (f)
#else
#define TENDO__CU(f) NULL
#endif

typedef TENDO__CU_LOOP((*tendo__cu_loop_fn));
typedef TENDO__CU_ROWS((*tendo__cu_rows_fn));
typedef TENDO__CU_RAND((*tendo__cu_rand_fn));
#define TENDO__CU_OPTIM(name) int name(const tendo__cu_optim *w)
typedef TENDO__CU_OPTIM((*tendo__cu_optim_fn));

/* An indexed walk (index_select, gather, scatter: src/core/index.c), over
 * numel positions p, row-major over shape: k = idx[sum_d p[d] * istride[d]]
 * (an int64_t, or int32_t when idx_size is 4), wrapped when negative, then
 * element dst[sum_d p[d] * dstride[d] + k * dst_k] = src[sum_d p[d] *
 * sstride[d] + k * src_k] (strides in elements of elsize bytes).  A k out
 * of [-ksize, ksize) writes nothing: the first one found sets bad[0] = 1
 * and bad[1] = its value (bad: two int64_t in device memory, zeroed by the
 * caller).  check_only: only the checks, no element written. */
typedef struct {
    int ndim, elsize, idx_size, check_only;
    int64_t numel, ksize, dst_k, src_k;
    int64_t shape[TENDO__CU_DIMS], dstride[TENDO__CU_DIMS], sstride[TENDO__CU_DIMS], istride[TENDO__CU_DIMS];
    char *dst;
    const char *src;
    const void *idx;
    int64_t *bad;
} tendo__cu_index;

/* Dtype-independent kernels (kernels/index.cu): the indexed walk, and
 * tril/triu's zeroing of the dense out (numel elements of elsize bytes,
 * matrices of R x C): element (r, c) becomes 0 unless c - r <= k (upper
 * 0) or c - r >= k (upper 1). */
int tendo__cu_index_walk(const tendo__cu_index *w);
/* Per dtype (not bool): the walk adding instead of copying, atomically
 * (scatter_add; kernels/templates/ops.cu.j2). */
#define TENDO__CU_SCATTER_ADD(name) int name(const tendo__cu_index *w)
typedef TENDO__CU_SCATTER_ADD((*tendo__cu_scatter_add_fn));
int tendo__cu_tri_zero(void *out, int64_t numel, int64_t R, int64_t C, int64_t k, int upper, int elsize);

/* Dtype-independent kernels (kernels/copy.cu). */
/* Copies operand 1 into operand 0 element by element (same elsize: 1, 2,
 * 4 or 8 bytes), any strides. */
int tendo__cu_copy(const tendo__cu_iter *it);
/* Sets n elements of elsize bytes (1, 2, 4 or 8) at dst to *value. */
int tendo__cu_fill(void *dst, int64_t n, int elsize, const void *value);

/* Device scratch for a launcher (kernels/host/runtime.c): n bytes from the
 * pool of the current device, for the calling thread's stream, so that
 * the pool's out-of-memory handling (empty the cache, retry) covers it.
 * *block gets the handle for tendo__cu_scratch_free, which the launcher
 * calls once the work using it is queued (the pool reuses a block on
 * its own stream in order).  NULL when out of memory. */
void *tendo__cu_scratch(size_t n, void **block);
void tendo__cu_scratch_free(void *block);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_SRC_CORE_LAUNCH_H */
