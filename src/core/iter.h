/* src/core/iter.h - the strided-iteration core of elementwise ops (the role of
 * PyTorch's TensorIterator).
 *
 * Operands (an output and up to two inputs) are broadcast to the output's
 * shape (stride 0 on broadcast dims), size-1 dims are dropped, and dims that
 * every operand steps over contiguously are merged, so that a dense op is
 * one run of numel elements.  A loop function then sees runs: pointers to
 * each operand's first element and their strides in elements, so that it
 * can pick a dense path (all strides 1), a scalar-broadcast path (an input
 * with stride 0), or the general strided one.  Large iterations are split
 * across threads by element ranges, which never changes a result.
 */
#ifndef TENDO_SRC_ITER_H
#define TENDO_SRC_ITER_H

#include "config.h"

#include "core/launch.h"
#include "core/internal.h"

#define TENDO__ITER_OPS 4 /* an output and up to three inputs (where) */

/* Runs of at least this many elements in all are split across threads. */
#define TENDO__PARALLEL_MIN ((int64_t)1 << 15)

typedef struct {
    int ndim; /* >= 1 after coalescing */
    int nops;
    int64_t shape[TENDO_MAX_DIMS];
    int64_t stride[TENDO__ITER_OPS][TENDO_MAX_DIMS]; /* elements */
    char *base[TENDO__ITER_OPS];
    size_t elsize[TENDO__ITER_OPS];
    int64_t numel;
} tendo__iter;

/* n elements: operand k's first at ptrs[k], then every strides[k] elements. */
typedef void (*tendo__loop_fn)(char *const *ptrs, const int64_t *strides, int64_t n, void *ctx);

/* Sets up out = f(in[0..nin)) where out has the broadcast shape. */
void tendo__iter_build(tendo__iter *it, const tendo__tensor *out, int nin,
                       const tendo__tensor *const *in);
/* Calls fn over every element, on several threads when large. */
void tendo__iter_run(const tendo__iter *it, tendo__loop_fn fn, void *ctx);
/* The same, where each element stands for `work` elements of work (a row
 * that fn reduces), which decides whether threads are worth it. */
void tendo__iter_run_work(const tendo__iter *it, tendo__loop_fn fn, void *ctx, int64_t work);

/* An elementwise op from start to finish: checks that the inputs are on
 * one device and broadcast; with out == NULL allocates the result (dtype
 * out_dtype), else checks out's shape and that it overlaps no input except
 * exactly (in place); runs fn on the CPU, or the CUDA launcher cu (NULL
 * without one) on a GPU, both with ctx; raises the op event.  Returns the
 * result (a new tensor, or out), or NULL with the error set. */
tendo__tensor *tendo__elementwise(const char *op, tendo__tensor *out, tendo_dtype out_dtype, int nin,
                                  const tendo__tensor *const *in, tendo__loop_fn fn, tendo__cu_loop_fn cu,
                                  void *ctx);
/* Whether `small` broadcasts to big's shape exactly (the broadcast of
 * the two is big's shape); sets TENDO_ERR_SHAPE naming both otherwise. */
bool tendo__broadcasts_to(const char *op, const tendo__tensor *small, const tendo__tensor *big);
/* The lowest and highest storage offsets t touches over shape (with t's
 * strides broadcast to it; ndim >= t's). */
void tendo__span(const tendo__tensor *t, int ndim, const int64_t *shape, int64_t *lo, int64_t *hi);
/* The same checks for an op whose output must have a given shape. */
bool tendo__check_out(const char *op, const tendo__tensor *out, int ndim, const int64_t *shape,
                      int nin, const tendo__tensor *const *in);
/* Inputs are non-NULL and share one device (the op's); sets the error
 * (TENDO_ERR_DEVICE_MISMATCH naming both) otherwise. */
bool tendo__check_inputs(const char *op, int nin, const tendo__tensor *const *in);

/* The threads CPU ops may use now (1 without OpenMP). */
int tendo__threads(void);
/* How many threads run at once where it is called: the product of the
 * team sizes of the enclosing parallel regions (1 outside any, and
 * without OpenMP).  A kernel that reads memory differently when other
 * threads read beside it asks this, not tendo__threads(): a small
 * product runs on one thread whatever the threads allowed. */
int tendo__team_threads(void);
/* ranks_here processes of one MPI job share this machine: unless the
 * program chose (tendo_set_num_threads) or OMP_NUM_THREADS is set, each
 * takes its share of the cores (at least one), rather than all of them
 * each (torchrun's default is one). */
void tendo__threads_share(int ranks_here);

/* TENDO__OMP(omp parallel for ...) is that pragma with OpenMP, nothing
 * without (so that -Wunknown-pragmas stays quiet). */
#if defined(_OPENMP)
#define TENDO__OMP(x) _Pragma(#x)
#else
#define TENDO__OMP(x)
#endif

/* Loops in generated code mark their dense inner loops with TENDO__SIMD. */
#if defined(_OPENMP)
#define TENDO__SIMD _Pragma("omp simd")
#elif defined(__GNUC__) && !defined(__clang__)
#define TENDO__SIMD _Pragma("GCC ivdep")
#else
#define TENDO__SIMD
#endif

#endif /* TENDO_SRC_ITER_H */
