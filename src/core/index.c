/* src/core/index.c - index_select, gather, scatter and scatter_add, once
 * for every dtype (by element size; see core/index.h).
 *
 * The three share one walk: positions over an iteration shape, two
 * operands (dst, src) with strides, and an index buffer read densely into
 * int64 (negative entries already wrapped, every entry checked) that
 * replaces one operand's position along dim.  All checks, the indices
 * included, come before the first write, so a failed call leaves its
 * output as it was and touches nothing outside the tensors.  On a GPU the
 * same walk runs as a kernel (the device table's index slot) that reads
 * the index where it is and checks it there, raising a flag that is read
 * back after the kernel; scatter runs a checking pass before the writing
 * one; scatter_add's writing pass is the dtype's own launcher (an atomic
 * add per element, so its order of additions is not fixed on a GPU).
 */
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/index.h"
#include "core/iter.h"

/* One indexed walk.  For each position p over shape (row-major):
 *   k   = idx[sum_d p[d] * istride[d]]
 *   dst = dst_base + sum_d p[d] * dstride[d] (+ k * dst_dim_stride when dst is indexed)
 *   src = src_base + sum_d p[d] * sstride[d] (+ k * src_dim_stride when src is indexed)
 * where the indexed operand's stride along dim is 0 in its stride list.
 * Strides in elements. */
typedef struct {
    int ndim;
    int64_t shape[TENDO_MAX_DIMS];
    int64_t dstride[TENDO_MAX_DIMS], sstride[TENDO_MAX_DIMS], istride[TENDO_MAX_DIMS];
    char *dst;
    const char *src;
    const int64_t *idx;
    int64_t dst_k, src_k; /* the stride k multiplies in each operand (0: not indexed) */
    size_t elsize;
    tendo__add1_fn add; /* NULL: assign */
} walk;

#define COPY_ROW(T)                                                                        \
    for (int64_t j = 0; j < n; j++) {                                                      \
        int64_t k = w->idx[io + j * is];                                                   \
        ((T *)(void *)w->dst)[d0 + j * ds + k * w->dst_k] =                                \
            ((const T *)(const void *)w->src)[s0 + j * ss + k * w->src_k];                 \
    }

/* The positions of rows [r0, r1) (a row is the last dim). */
static void walk_rows(const walk *w, int64_t r0, int64_t r1)
{
    int last = w->ndim - 1;
    int64_t pos[TENDO_MAX_DIMS], rest = r0;
    int64_t n = w->shape[last], ds = w->dstride[last], ss = w->sstride[last], is = w->istride[last];

    for (int d = last - 1; d >= 0; d--) {
        pos[d] = rest % w->shape[d];
        rest /= w->shape[d];
    }
    for (int64_t r = r0; r < r1; r++) {
        int64_t d0 = 0, s0 = 0, io = 0;

        for (int d = 0; d < last; d++) {
            d0 += pos[d] * w->dstride[d];
            s0 += pos[d] * w->sstride[d];
            io += pos[d] * w->istride[d];
        }
        if (!w->add && is == 0 && ds == 1 && ss == 1) {
            /* one index for the whole dense row (index_select off the
             * last dim: an embedding lookup): a row copy */
            int64_t k = w->idx[io];
            memcpy(w->dst + (d0 + k * w->dst_k) * (int64_t)w->elsize,
                   w->src + (s0 + k * w->src_k) * (int64_t)w->elsize, (size_t)n * w->elsize);
        } else if (w->add) {
            for (int64_t j = 0; j < n; j++) {
                int64_t k = w->idx[io + j * is];
                w->add(w->dst + (d0 + j * ds + k * w->dst_k) * (int64_t)w->elsize,
                       w->src + (s0 + j * ss + k * w->src_k) * (int64_t)w->elsize);
            }
        } else {
            switch (w->elsize) {
            case 1: COPY_ROW(uint8_t) break;
            case 2: COPY_ROW(uint16_t) break;
            case 4: COPY_ROW(uint32_t) break;
            case 8: COPY_ROW(uint64_t) break;
            default:
                for (int64_t j = 0; j < n; j++) {
                    int64_t k = w->idx[io + j * is];
                    memcpy(w->dst + (d0 + j * ds + k * w->dst_k) * (int64_t)w->elsize,
                           w->src + (s0 + j * ss + k * w->src_k) * (int64_t)w->elsize, w->elsize);
                }
            }
        }
        for (int d = last - 1; d >= 0; d--) { /* next row */
            if (++pos[d] < w->shape[d])
                break;
            pos[d] = 0;
        }
    }
}

/* Runs the walk, on several threads when it is large and writes no
 * element twice (parallel: index_select and gather, never scatter). */
static void walk_run(const walk *w, bool parallel)
{
    int64_t numel = 1, rows, n = w->shape[w->ndim - 1];
    int threads = parallel ? tendo__threads() : 1;

    for (int d = 0; d < w->ndim; d++)
        numel *= w->shape[d];
    if (numel == 0)
        return;
    rows = numel / n;
    if (threads > rows)
        threads = (int)rows;
    if (threads <= 1 || numel < TENDO__PARALLEL_MIN) {
        walk_rows(w, 0, rows);
        return;
    }
TENDO__OMP(omp parallel for num_threads(threads) schedule(static))
    for (int c = 0; c < threads; c++) {
        int64_t per = (rows + threads - 1) / threads, b = c * per, e = b + per < rows ? b + per : rows;
        if (b < e)
            walk_rows(w, b, e);
    }
}

/* i64, or i32 where this build has it. */
static bool index_dtype_ok(tendo_dtype dt)
{
#ifdef TENDO_HAVE_I32
    if (dt == TENDO_I32)
        return true;
#endif
    return dt == TENDO_I64;
}

/* The index's entries as int64 in row-major order, each wrapped (negative
 * counts from the end) and checked against size; a new buffer (free it),
 * or NULL with the error set. */
static int64_t *read_index(const char *op, const tendo__tensor *index, int dim, int64_t size)
{
    int64_t n = index->numel;
    int64_t *buf;

    buf = tendo__malloc(n > 0 ? (size_t)n * sizeof *buf : 1);
    if (!buf) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory reading the index");
        return NULL;
    }
    if (tendo__read_dense(op, index, buf) != TENDO_OK) {
        free(buf);
        return NULL;
    }
    if (index->dtype != TENDO_I64) /* i32, dense at the start: widen from the end */
        for (int64_t i = n - 1; i >= 0; i--) {
            int32_t v;
            memcpy(&v, (const char *)buf + i * (int64_t)sizeof v, sizeof v);
            buf[i] = v;
        }
    for (int64_t i = 0; i < n; i++) {
        int64_t k = buf[i] < 0 ? buf[i] + size : buf[i];
        if (k < 0 || k >= size) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "index %lld is out of range for dim %d of size %lld",
                        (long long)buf[i], dim, (long long)size);
            free(buf);
            return NULL;
        }
        buf[i] = k;
    }
    return buf;
}

/* src and index are given, on one device, and index is i64 or i32. */
static bool check_args(const char *op, const tendo__tensor *a, const char *aname, const tendo__tensor *index,
                       const tendo__tensor *src)
{
    if (!tendo__check_tensor(op, aname, a) || !tendo__check_tensor(op, "index", index) ||
        (src && !tendo__check_tensor(op, "src", src)))
        return false;
    if (!tendo_device_equal(a->storage->device, index->storage->device) ||
        (src && !tendo_device_equal(a->storage->device, src->storage->device))) {
        tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op, "%s is on %s, index on %s%s%s", aname,
                    tendo_device_str(a->storage->device), tendo_device_str(index->storage->device),
                    src ? ", src on " : "", src ? tendo_device_str(src->storage->device) : "");
        return false;
    }
    if (!tendo__check_device(op, a->storage->device))
        return false;
    if (!index_dtype_ok(index->dtype)) {
        tendo__fail(TENDO_ERR_DTYPE, op, "index has dtype %s, want i64 or i32", tendo_dtype_name(index->dtype));
        return false;
    }
    if (src && src->dtype != a->dtype) {
        tendo__fail(TENDO_ERR_DTYPE, op, "src has dtype %s, %s %s", tendo_dtype_name(src->dtype), aname,
                    tendo_dtype_name(a->dtype));
        return false;
    }
    return true;
}

/* Runs w on the GPU of index, reading the index where it is (strides
 * istride) and checking it there: a pass that only checks first when
 * check_first (scatter: out stays as it was on failure), then the writing
 * pass.  ts[0..nts): every tensor the walk touches.  False with the error
 * set (TENDO_ERR_INVALID_ARG naming the first bad index found). */
static bool cuda_walk(const char *op, const walk *w, const tendo__tensor *index, const int64_t *istride,
                      int64_t ksize, int dim, bool check_first, const tendo__tensor *const *ts, int nts,
                      tendo__cu_scatter_add_fn add)
{
    const tendo__device_ops *dev = tendo__device_ops_of(index->storage->device.type);
    tendo_device d = index->storage->device;
    int64_t two = 2, bad[2] = {0, 0}, zero = 0;
    tendo__tensor *flag;
    tendo__cu_index c;
    bool good;

    if (!dev->index || !dev->fill || !dev->download) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "not implemented on %s", tendo_device_str(d));
        return false;
    }
    memset(&c, 0, sizeof c);
    c.ndim = w->ndim;
    c.numel = 1;
    for (int i = 0; i < w->ndim; i++) {
        c.numel *= w->shape[i];
        c.shape[i] = w->shape[i];
        c.dstride[i] = w->dstride[i];
        c.sstride[i] = w->sstride[i];
        c.istride[i] = istride[i];
    }
    if (c.numel == 0)
        return true;
    if (!(flag = tendo__tensor_new(op, TENDO_I64, 1, &two, d)))
        return false;
    c.elsize = (int)w->elsize;
    c.idx_size = (int)tendo_dtype_size(index->dtype);
    c.ksize = ksize;
    c.dst_k = w->dst_k;
    c.src_k = w->src_k;
    c.dst = w->dst;
    c.src = w->src;
    c.idx = tendo__tensor_data(index);
    c.bad = tendo__tensor_data(flag);
    good = dev->fill(op, flag, &zero);
    for (int pass = check_first ? 0 : 1; good && pass < 2; pass++) {
        c.check_only = pass == 0;
        good = dev->index(op, &c, ts, nts, add) && dev->download(op, d, bad, c.bad, sizeof bad);
        if (good && bad[0]) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "index %lld is out of range for dim %d of size %lld",
                        (long long)bad[1], dim, (long long)ksize);
            good = false;
        }
    }
    tendo__tensor_free(flag);
    return good;
}

/* index's strides on the walk's nd dims: its own (gather, scatter; 0 for
 * a 0-d index), or along dim only (index_select's 1-D or 0-d index). */
static void index_strides(const tendo__tensor *index, int nd, int dim, bool select, int64_t *istride)
{
    for (int d = 0; d < nd; d++)
        istride[d] = select ? (d == dim && index->ndim ? index->stride[0] : 0) : index->ndim ? index->stride[d] : 0;
}

/* The copy of index_select and gather, once w's shape and strides are set:
 * src's elements picked by index (read into idx on the CPU, on the device
 * by the kernel; along_dim_only: a 1-D index_select index) into out.  out,
 * or NULL with out freed and the error set. */
static tendo__tensor *pick(const char *op, walk *w, tendo__tensor *out, const tendo__tensor *src,
                           const tendo__tensor *index, int64_t *idx, int64_t ksize, int dim, bool along_dim_only)
{
    w->dst = tendo__tensor_data(out);
    w->src = tendo__tensor_data(src);
    w->idx = idx;
    w->src_k = src->ndim > 0 ? src->stride[dim] : 0;
    w->elsize = tendo_dtype_size(src->dtype);
    if (src->storage->device.type != TENDO_CPU) {
        const tendo__tensor *ts[3] = {out, src, index};
        int64_t istr[TENDO_MAX_DIMS];
        index_strides(index, w->ndim, dim, along_dim_only, istr);
        if (!cuda_walk(op, w, index, istr, ksize, dim, false, ts, 3, NULL)) {
            tendo__tensor_free(out);
            return NULL;
        }
    } else {
        walk_run(w, true);
        free(idx);
    }
    return out;
}

tendo__tensor *tendo__index_select(const char *op, const tendo__tensor *src, int dim, const tendo__tensor *index)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t shape[TENDO_MAX_DIMS], *idx = NULL, ksize;
    tendo__tensor *out;
    bool cuda;
    walk w;
    int nd;

    if (!check_args(op, src, "src", index, NULL))
        return NULL;
    nd = src->ndim > 0 ? src->ndim : 1; /* a 0-d src is treated as [1] */
    if ((dim = tendo__wrap_dim(op, dim, nd, src->shape)) < 0)
        return NULL;
    if (index->ndim > 1) {
        tendo__fail(TENDO_ERR_SHAPE, op, "index has shape %s, want 1-D or 0-d",
                    tendo__shape_str(index->ndim, index->shape).s);
        return NULL;
    }
    if (src->ndim == 0 && index->numel != 1) {
        tendo__fail(TENDO_ERR_SHAPE, op, "a 0-d src takes one index, not %lld", (long long)index->numel);
        return NULL;
    }
    ksize = src->ndim > 0 ? src->shape[dim] : 1;
    cuda = src->storage->device.type != TENDO_CPU;
    if (!cuda && !(idx = read_index(op, index, dim, ksize)))
        return NULL;
    if (src->ndim > 0) {
        memcpy(shape, src->shape, (size_t)src->ndim * sizeof *shape);
        shape[dim] = index->numel;
    }
    out = tendo__tensor_new(op, src->dtype, src->ndim, shape, src->storage->device);
    if (!out) {
        free(idx);
        return NULL;
    }
    memset(&w, 0, sizeof w);
    w.ndim = nd;
    for (int d = 0; d < nd; d++) {
        w.shape[d] = src->ndim > 0 ? shape[d] : 1;
        w.dstride[d] = src->ndim > 0 ? out->stride[d] : 0;
        w.sstride[d] = src->ndim > 0 && d != dim ? src->stride[d] : 0;
        w.istride[d] = d == dim ? 1 : 0;
    }
    out = pick(op, &w, out, src, index, idx, ksize, dim, true);
    return out ? tendo__op_end(s, op, out, src, index) : NULL;
}

/* index's shape against a's along every dim but dim (index no larger), and
 * their ndims (equal; torch allows a 0-d pair). */
static bool check_index_shape(const char *op, const tendo__tensor *index, const tendo__tensor *a, const char *aname,
                              int dim, bool along_dim_too)
{
    bool ok = index->ndim == a->ndim;

    for (int d = 0; ok && d < a->ndim; d++)
        ok = (d == dim && !along_dim_too) || index->shape[d] <= a->shape[d];
    if (!ok)
        tendo__fail(TENDO_ERR_SHAPE, op, "index has shape %s, %s %s: want the same ndim and no size larger%s",
                    tendo__shape_str(index->ndim, index->shape).s, aname, tendo__shape_str(a->ndim, a->shape).s,
                    along_dim_too ? "" : " but along dim");
    return ok;
}

tendo__tensor *tendo__gather(const char *op, const tendo__tensor *src, int dim, const tendo__tensor *index)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t *idx = NULL, ksize;
    tendo__tensor *out;
    bool cuda;
    walk w;
    int nd;

    if (!check_args(op, src, "src", index, NULL))
        return NULL;
    nd = src->ndim > 0 ? src->ndim : 1;
    if ((dim = tendo__wrap_dim(op, dim, nd, src->shape)) < 0)
        return NULL;
    if (!check_index_shape(op, index, src, "src", dim, false))
        return NULL;
    ksize = src->ndim > 0 ? src->shape[dim] : 1;
    cuda = src->storage->device.type != TENDO_CPU;
    if (!cuda && !(idx = read_index(op, index, dim, ksize)))
        return NULL;
    out = tendo__tensor_new(op, src->dtype, index->ndim, index->shape, src->storage->device);
    if (!out) {
        free(idx);
        return NULL;
    }
    memset(&w, 0, sizeof w);
    w.ndim = nd;
    for (int d = 0; d < nd; d++) {
        w.shape[d] = src->ndim > 0 ? index->shape[d] : 1;
        w.dstride[d] = src->ndim > 0 ? out->stride[d] : 0;
        w.sstride[d] = src->ndim > 0 && d != dim ? src->stride[d] : 0;
        w.istride[d] = src->ndim > 0 ? out->stride[d] : 0; /* idx is dense in index's shape, as out */
    }
    out = pick(op, &w, out, src, index, idx, ksize, dim, false);
    return out ? tendo__op_end(s, op, out, src, index) : NULL;
}

tendo_status tendo__scatter(const char *op, tendo__tensor *out, int dim, const tendo__tensor *index,
                            const tendo__tensor *src, tendo__add1_fn add, tendo__cu_scatter_add_fn cu_add)
{
    tendo__op_scope s = tendo__op_begin();
    int64_t *idx = NULL, istr[TENDO_MAX_DIMS], ksize;
    tendo__tensor *copy = NULL;
    const tendo__tensor *src_in = src;
    bool cuda, good = true;
    walk w;
    int nd;

    if (!check_args(op, out, "out", index, src))
        return tendo_error_status(tendo_last_error());
    nd = out->ndim > 0 ? out->ndim : 1;
    if ((dim = tendo__wrap_dim(op, dim, nd, out->shape)) < 0)
        return TENDO_ERR_INVALID_ARG;
    if (!check_index_shape(op, index, out, "out", dim, false) || !check_index_shape(op, index, src, "src", dim, true))
        return TENDO_ERR_SHAPE;
    for (int d = 0; d < out->ndim; d++)
        if (out->stride[d] == 0 && out->shape[d] > 1)
            return tendo__fail(TENDO_ERR_INVALID_ARG, op, "out (shape %s, strides %s) has overlapping elements",
                               tendo__shape_str(out->ndim, out->shape).s,
                               tendo__shape_str(out->ndim, out->stride).s);
    cuda = out->storage->device.type != TENDO_CPU;
    if (cuda && add && !cu_add)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "not implemented on %s", tendo_device_str(out->storage->device));
    ksize = out->ndim > 0 ? out->shape[dim] : 1;
    if (!cuda && !(idx = read_index(op, index, dim, ksize)))
        return tendo_error_status(tendo_last_error());
    if (src->storage == out->storage && index->numel > 0) {
        /* src may be (part of) out: read it from a copy, as if all reads came first */
        if (!(copy = tendo__clone(op, src))) {
            free(idx);
            return tendo_error_status(tendo_last_error());
        }
        src = copy;
    }
    tendo__contiguous_strides(index->ndim, index->shape, istr);
    memset(&w, 0, sizeof w);
    w.ndim = nd;
    for (int d = 0; d < nd; d++) {
        w.shape[d] = out->ndim > 0 ? index->shape[d] : 1;
        w.dstride[d] = out->ndim > 0 && d != dim ? out->stride[d] : 0;
        w.sstride[d] = out->ndim > 0 ? src->stride[d] : 0;
        w.istride[d] = out->ndim > 0 ? istr[d] : 0;
    }
    w.dst = tendo__tensor_data(out);
    w.src = tendo__tensor_data(src);
    w.idx = idx;
    w.dst_k = out->ndim > 0 ? out->stride[dim] : 0;
    w.elsize = tendo_dtype_size(out->dtype);
    w.add = add;
    if (cuda) {
        const tendo__tensor *ts[3] = {out, src, index};
        index_strides(index, nd, dim, false, istr);
        good = cuda_walk(op, &w, index, istr, ksize, dim, true, ts, 3, add ? cu_add : NULL);
    } else {
        walk_run(&w, false); /* repeated indices write one element twice: one thread */
        free(idx);
    }
    if (good)
        tendo__op_end(s, op, out, src_in, index);
    tendo__tensor_free(copy);
    return good ? TENDO_OK : tendo_error_status(tendo_last_error());
}
