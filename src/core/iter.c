/* src/core/iter.c - broadcasting, coalescing and (threaded) running of
 * elementwise loops; the checks every elementwise op shares. */
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/iter.h"

void tendo__iter_build(tendo__iter *it, const tendo__tensor *out, int nin,
                       const tendo__tensor *const *in)
{
    int64_t st[TENDO__ITER_OPS][TENDO_MAX_DIMS];
    const tendo__tensor *ops[TENDO__ITER_OPS] = {out, nin > 0 ? in[0] : NULL, nin > 1 ? in[1] : NULL,
                                                 nin > 2 ? in[2] : NULL};
    int nd = out->ndim;

    memset(it, 0, sizeof *it);
    it->nops = 1 + nin;
    it->numel = out->numel;
    /* each operand's strides on the output's dims: 0 where it broadcasts */
    for (int k = 0; k < it->nops; k++) {
        const tendo__tensor *t = ops[k];
        int lead = nd - t->ndim;
        for (int d = 0; d < nd; d++)
            st[k][d] = d < lead || t->shape[d - lead] == 1 ? 0 : t->stride[d - lead];
        it->base[k] = tendo__tensor_data(t);
        it->elsize[k] = tendo_dtype_size(t->dtype);
    }
    /* drop size-1 dims; merge a dim into the one before when every operand
     * steps over it exactly */
    for (int d = 0; d < nd; d++) {
        bool merge = it->ndim > 0;
        if (out->shape[d] == 1)
            continue;
        for (int k = 0; merge && k < it->nops; k++)
            merge = it->stride[k][it->ndim - 1] == out->shape[d] * st[k][d];
        if (merge) {
            it->shape[it->ndim - 1] *= out->shape[d];
            for (int k = 0; k < it->nops; k++)
                it->stride[k][it->ndim - 1] = st[k][d];
        } else {
            it->shape[it->ndim] = out->shape[d];
            for (int k = 0; k < it->nops; k++)
                it->stride[k][it->ndim] = st[k][d];
            it->ndim++;
        }
    }
    if (it->ndim == 0) {
        it->ndim = 1;
        it->shape[0] = 1;
    }
}

/* Elements [begin, end) in row-major order, as runs along the last dim. */
static void run_range(const tendo__iter *it, int64_t begin, int64_t end, tendo__loop_fn fn, void *ctx)
{
    int nd = it->ndim, last = nd - 1;
    int64_t idx[TENDO_MAX_DIMS], rest = begin, strides[TENDO__ITER_OPS];
    char *p[TENDO__ITER_OPS];

    for (int d = last; d >= 0; d--) {
        idx[d] = rest % it->shape[d];
        rest /= it->shape[d];
    }
    for (int k = 0; k < it->nops; k++)
        strides[k] = it->stride[k][last];
    while (begin < end) {
        int64_t n = it->shape[last] - idx[last];

        if (n > end - begin)
            n = end - begin;
        for (int k = 0; k < it->nops; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++)
                off += idx[d] * it->stride[k][d];
            p[k] = it->base[k] + off * (int64_t)it->elsize[k];
        }
        fn(p, strides, n, ctx);
        begin += n;
        idx[last] += n;
        for (int d = last; d > 0 && idx[d] == it->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void tendo__iter_run(const tendo__iter *it, tendo__loop_fn fn, void *ctx)
{
    tendo__iter_run_work(it, fn, ctx, 1);
}

void tendo__iter_run_work(const tendo__iter *it, tendo__loop_fn fn, void *ctx, int64_t work)
{
    int threads = tendo__threads();
    int64_t chunks, total;

    if (it->numel == 0)
        return;
    if (threads > it->numel)
        threads = (int)it->numel;
    if (__builtin_mul_overflow(it->numel, work > 0 ? work : 1, &total))
        total = INT64_MAX;
    if (threads <= 1 || total < TENDO__PARALLEL_MIN) {
        run_range(it, 0, it->numel, fn, ctx);
        return;
    }
    /* contiguous element ranges, cut at multiples of 64 elements when
     * there are many (so runs stay aligned) */
    chunks = threads;
TENDO__OMP(omp parallel for num_threads(threads) schedule(static))
    for (int64_t c = 0; c < chunks; c++) {
        int64_t per = (it->numel + chunks - 1) / chunks;
        if (it->numel >= 64 * chunks)
            per = (per + 63) / 64 * 64;
        int64_t b = c * per, e = b + per < it->numel ? b + per : it->numel;
        if (b < e)
            run_range(it, b, e, fn, ctx);
    }
}

bool tendo__check_inputs(const char *op, int nin, const tendo__tensor *const *in)
{
    for (int i = 0; i < nin; i++)
        if (!tendo__check_tensor(op, i == 0 ? "a" : i == 1 ? "b" : "c", in[i]))
            return false;
    for (int i = 1; i < nin; i++)
        if (!tendo_device_equal(in[0]->storage->device, in[i]->storage->device)) {
            tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "%s and %s",
                        tendo_device_str(in[0]->storage->device), tendo_device_str(in[i]->storage->device));
            return false;
        }
    return tendo__check_device(op, in[0]->storage->device);
}

void tendo__span(const tendo__tensor *t, int ndim, const int64_t *shape, int64_t *lo, int64_t *hi)
{
    int lead = ndim - t->ndim;

    *lo = *hi = t->offset;
    for (int d = lead; d < ndim; d++) {
        int64_t ext = (shape[d] - 1) * (t->shape[d - lead] == 1 ? 0 : t->stride[d - lead]);
        if (ext < 0)
            *lo += ext;
        else
            *hi += ext;
    }
}

static int64_t gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Whether out and in share storage in a way an elementwise op cannot
 * handle: anything but no overlap at all, or exactly the same elements in
 * the same order (in place). */
static bool partial_overlap(const tendo__tensor *out, const tendo__tensor *in)
{
    int64_t olo, ohi, ilo, ihi;
    bool same = in->offset == out->offset;
    int lead = out->ndim - in->ndim;

    if (out->storage != in->storage || out->numel == 0)
        return false;
    for (int d = 0; same && d < out->ndim; d++) {
        int64_t s = d < lead || in->shape[d - lead] == 1 ? 0 : in->stride[d - lead];
        same = out->shape[d] == 1 || s == out->stride[d];
    }
    if (same)
        return false;
    tendo__span(out, out->ndim, out->shape, &olo, &ohi);
    tendo__span(in, out->ndim, out->shape, &ilo, &ihi);
    if (ohi < ilo || ihi < olo)
        return false;
    /* interleaved views (x[0::2] and x[1::2]) share a range but no element:
     * every offset of one is congruent to its own start modulo the gcd of
     * all strides */
    {
        int64_t g = 0, diff = out->offset - in->offset;
        for (int d = 0; d < out->ndim; d++)
            g = gcd64(g, out->shape[d] > 1 ? out->stride[d] : 0);
        for (int d = 0; d < in->ndim; d++)
            g = gcd64(g, in->shape[d] > 1 ? in->stride[d] : 0);
        return !(g > 1 && diff % g != 0);
    }
}

bool tendo__check_out(const char *op, const tendo__tensor *out, int ndim, const int64_t *shape,
                      int nin, const tendo__tensor *const *in)
{
    if (!tendo__check_tensor(op, "out", out))
        return false;
    if (!tendo_device_equal(out->storage->device, in[0]->storage->device)) {
        tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "out is on %s, the inputs on %s",
                    tendo_device_str(out->storage->device), tendo_device_str(in[0]->storage->device));
        return false;
    }
    if (out->ndim != ndim || (ndim > 0 && memcmp(out->shape, shape, (size_t)ndim * sizeof *shape) != 0)) {
        tendo__fail(TENDO_ERR_SHAPE, op, "out has shape %s, the result has shape %s",
                    tendo__shape_str(out->ndim, out->shape).s, tendo__shape_str(ndim, shape).s);
        return false;
    }
    for (int d = 0; d < out->ndim; d++)
        if (out->stride[d] == 0 && out->shape[d] > 1) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "out (shape %s, strides %s) has overlapping elements",
                        tendo__shape_str(out->ndim, out->shape).s, tendo__shape_str(out->ndim, out->stride).s);
            return false;
        }
    for (int i = 0; i < nin; i++)
        if (partial_overlap(out, in[i])) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op,
                        "out partly overlaps input %d (write into a copy, or into the input itself)", i + 1);
            return false;
        }
    return true;
}

bool tendo__broadcasts_to(const char *op, const tendo__tensor *small, const tendo__tensor *big)
{
    int64_t shape[TENDO_MAX_DIMS];
    int ndim;

    if (!tendo__broadcast_shapes(op, big->ndim, big->shape, small->ndim, small->shape, &ndim, shape))
        return false;
    if (ndim != big->ndim || (ndim > 0 && memcmp(shape, big->shape, (size_t)ndim * sizeof *shape) != 0)) {
        tendo__fail(TENDO_ERR_SHAPE, op, "shape %s does not broadcast to %s",
                    tendo__shape_str(small->ndim, small->shape).s, tendo__shape_str(big->ndim, big->shape).s);
        return false;
    }
    return true;
}

tendo__tensor *tendo__elementwise(const char *op, tendo__tensor *out, tendo_dtype out_dtype, int nin,
                                  const tendo__tensor *const *in, tendo__loop_fn fn, tendo__cu_loop_fn cu,
                                  void *ctx)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t shape[TENDO_MAX_DIMS];
    int ndim = 0;
    tendo__iter it;
    tendo__tensor *result = out;

    if (!tendo__check_inputs(op, nin, in))
        return NULL;
    ndim = in[0]->ndim;
    memcpy(shape, in[0]->shape, sizeof shape);
    for (int i = 1; i < nin; i++) {
        int64_t prev[TENDO_MAX_DIMS];
        memcpy(prev, shape, sizeof prev);
        if (!tendo__broadcast_shapes(op, ndim, prev, in[i]->ndim, in[i]->shape, &ndim, shape))
            return NULL;
    }
    if (out) {
        if (!tendo__check_out(op, out, ndim, shape, nin, in))
            return NULL;
    } else if (!(result = tendo__tensor_new(op, out_dtype, ndim, shape, in[0]->storage->device))) {
        return NULL;
    }
    tendo__iter_build(&it, result, nin, in);
    if (result->storage->device.type == TENDO_CUDA) {
        const tendo__tensor *ts[TENDO__ITER_OPS] = {result, in[0], nin > 1 ? in[1] : NULL, nin > 2 ? in[2] : NULL};
        if (!tendo__cuda_device.loop(op, &it, ts, cu, ctx)) {
            if (!out)
                tendo__tensor_free(result);
            return NULL;
        }
    } else {
        tendo__iter_run(&it, fn, ctx);
    }
    return tendo__op_end(s, op, result, in[0], nin > 1 ? in[1] : NULL);
}
