/* src/core/copy.c - strided walks and copies into dense memory, and moves
 * between devices. */
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/events.h"
#include "core/internal.h"

/* A tensor's geometry with size-1 dims dropped and adjacent dims merged
 * where one steps over the other exactly; always at least one dim. */
typedef struct {
    int ndim;
    int64_t shape[TENDO_MAX_DIMS];
    int64_t stride[TENDO_MAX_DIMS];
} coalesced;

static void coalesce(const tendo__tensor *t, coalesced *c)
{
    c->ndim = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] == 1)
            continue;
        if (c->ndim > 0 && c->stride[c->ndim - 1] == t->shape[i] * t->stride[i]) {
            c->shape[c->ndim - 1] *= t->shape[i];
            c->stride[c->ndim - 1] = t->stride[i];
        } else {
            c->shape[c->ndim] = t->shape[i];
            c->stride[c->ndim] = t->stride[i];
            c->ndim++;
        }
    }
    if (c->ndim == 0) {
        c->ndim = 1;
        c->shape[0] = 1;
        c->stride[0] = 1;
    }
}

/* Calls fn once per row of the last `inner` coalesced dims: iterates the
 * first c->ndim - inner dims like an odometer.  The position is kept as an
 * element offset and only turned into a pointer for fn, so that negative
 * strides never form a pointer outside the storage. */
static void for_each_outer(const coalesced *c, int inner, size_t elsize, const char *base,
                           void (*fn)(void *, const coalesced *, const char *, int64_t),
                           void *ctx)
{
    int outer = c->ndim - inner;
    int64_t idx[TENDO_MAX_DIMS] = {0}, rows = 1, row_len = 1, off = 0;

    for (int i = 0; i < outer; i++)
        rows *= c->shape[i];
    for (int i = outer; i < c->ndim; i++)
        row_len *= c->shape[i];
    for (int64_t r = 0; r < rows; r++) {
        fn(ctx, c, base + off * (int64_t)elsize, r * row_len);
        for (int d = outer - 1; d >= 0; d--) { /* advance the odometer */
            if (++idx[d] < c->shape[d]) {
                off += c->stride[d];
                break;
            }
            off -= (c->shape[d] - 1) * c->stride[d];
            idx[d] = 0;
        }
    }
}

struct walk_ctx {
    tendo__row_fn fn;
    void *ctx;
};

static void walk_one(void *vctx, const coalesced *c, const char *p, int64_t at)
{
    struct walk_ctx *w = vctx;

    w->fn(w->ctx, p, c->stride[c->ndim - 1], c->shape[c->ndim - 1], at);
}

void tendo__walk_rows(const tendo__tensor *t, tendo__row_fn fn, void *ctx)
{
    coalesced c;
    struct walk_ctx w = {fn, ctx};

    if (t->numel == 0)
        return;
    coalesce(t, &c);
    for_each_outer(&c, 1, tendo_dtype_size(t->dtype), tendo__tensor_data(t), walk_one, &w);
}

/* ---- dense copies, one version per element width ------------------------- */

/* Tile edge for transposed copies: a tile of source and one of destination
 * stay in L1 together. */
#define TILE 32

#define DEFINE_COPIES(T)                                                               \
    /* dst[i] = src[i * s] for a strided row */                                        \
    static void gather_##T(T *restrict dst, const T *restrict src, int64_t s, int64_t n) \
    {                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                \
            dst[i] = src[i * s];                                                       \
    }                                                                                  \
    /* dst (R x C dense) = src with strides (sr, sc), in TILE x TILE blocks so that     \
     * both the strided reads and the dense writes stay in cache */                    \
    static void tile2d_##T(T *restrict dst, const T *restrict src, int64_t R, int64_t C, \
                           int64_t sr, int64_t sc)                                     \
    {                                                                                  \
        for (int64_t r0 = 0; r0 < R; r0 += TILE) {                                     \
            int64_t r1 = r0 + TILE < R ? r0 + TILE : R;                                \
            for (int64_t c0 = 0; c0 < C; c0 += TILE) {                                 \
                int64_t c1 = c0 + TILE < C ? c0 + TILE : C;                            \
                for (int64_t c = c0; c < c1; c++)                                      \
                    for (int64_t r = r0; r < r1; r++)                                  \
                        dst[r * C + c] = src[r * sr + c * sc];                         \
            }                                                                          \
        }                                                                              \
    }

DEFINE_COPIES(uint8_t)
DEFINE_COPIES(uint16_t)
DEFINE_COPIES(uint32_t)
DEFINE_COPIES(uint64_t)

struct dense_ctx {
    char *dst;
    size_t elsize;
};

/* One row of the last coalesced dim. */
static void copy_row(void *vctx, const coalesced *c, const char *p, int64_t at)
{
    struct dense_ctx *d = vctx;
    int64_t n = c->shape[c->ndim - 1], s = c->stride[c->ndim - 1];
    char *out = d->dst + at * (int64_t)d->elsize;

    if (s == 1) {
        memcpy(out, p, (size_t)n * d->elsize);
        return;
    }
    switch (d->elsize) {
    case 1: gather_uint8_t((uint8_t *)out, (const uint8_t *)p, s, n); break;
    case 2: gather_uint16_t((uint16_t *)out, (const uint16_t *)p, s, n); break;
    case 4: gather_uint32_t((uint32_t *)out, (const uint32_t *)p, s, n); break;
    case 8: gather_uint64_t((uint64_t *)out, (const uint64_t *)p, s, n); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(out + i * (int64_t)d->elsize, p + i * s * (int64_t)d->elsize, d->elsize);
    }
}

/* One 2-D slab of the last two coalesced dims, copied in tiles. */
static void copy_slab(void *vctx, const coalesced *c, const char *p, int64_t at)
{
    struct dense_ctx *d = vctx;
    int64_t R = c->shape[c->ndim - 2], C = c->shape[c->ndim - 1];
    int64_t sr = c->stride[c->ndim - 2], sc = c->stride[c->ndim - 1];
    char *out = d->dst + at * (int64_t)d->elsize;

    if (sr == 1 && tendo__cpu_device.transpose(out, p, R, C, sc, d->elsize))
        return;
    switch (d->elsize) {
    case 1: tile2d_uint8_t((uint8_t *)out, (const uint8_t *)p, R, C, sr, sc); break;
    case 2: tile2d_uint16_t((uint16_t *)out, (const uint16_t *)p, R, C, sr, sc); break;
    case 4: tile2d_uint32_t((uint32_t *)out, (const uint32_t *)p, R, C, sr, sc); break;
    case 8: tile2d_uint64_t((uint64_t *)out, (const uint64_t *)p, R, C, sr, sc); break;
    default:
        for (int64_t r = 0; r < R; r++)
            for (int64_t k = 0; k < C; k++)
                memcpy(out + (r * C + k) * (int64_t)d->elsize,
                       p + (r * sr + k * sc) * (int64_t)d->elsize, d->elsize);
    }
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

void tendo__copy_to_dense(const tendo__tensor *t, void *dst)
{
    coalesced c;
    struct dense_ctx d = {dst, tendo_dtype_size(t->dtype)};
    const char *src;

    if (t->numel == 0)
        return;
    coalesce(t, &c);
    src = tendo__tensor_data(t);
    /* transposed: the row dim steps less than the column dim, so walking
     * rows of the output would touch a new cache line per element */
    if (c.ndim >= 2 && c.stride[c.ndim - 1] != 1 &&
        abs64(c.stride[c.ndim - 2]) < abs64(c.stride[c.ndim - 1]))
        for_each_outer(&c, 2, d.elsize, src, copy_slab, &d);
    else
        for_each_outer(&c, 1, d.elsize, src, copy_row, &d);
}

tendo__tensor *tendo__clone(const char *op, const tendo__tensor *t)
{
    tendo__tensor *out;

    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    out = tendo__tensor_new(op, t->dtype, t->ndim, t->shape, t->storage->device);
    if (!out)
        return NULL;
    if (t->storage->device.type == TENDO_CUDA) {
        if (!tendo__cuda_device.copy(op, out, t)) {
            tendo__tensor_free(out);
            return NULL;
        }
    } else {
        tendo__copy_to_dense(t, tendo__tensor_data(out));
    }
    return out;
}

tendo__tensor *tendo__contiguous(const char *op, const tendo__tensor *t)
{
    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (tendo__tensor_contiguous(t))
        return tendo__tensor_alias(op, t);
    return tendo__clone(op, t);
}

tendo__tensor *tendo__to_device(const tendo__tensor *t, tendo_device d)
{
    return tendo__move("to", t, d);
}

tendo__tensor *tendo__move(const char *op, const tendo__tensor *t, tendo_device d)
{
    tendo_device from;
    tendo__tensor *dense, *out;
    size_t nbytes;
    bool ok;

    if (!tendo__check_tensor(op, "t", t) || !tendo__check_device(op, d))
        return NULL;
    from = t->storage->device;
    if (tendo_device_equal(from, d)) {
        out = tendo__clone(op, t);
    } else {
        /* a dense copy where t is, moved whole */
        if (!(dense = tendo__contiguous(op, t)))
            return NULL;
        out = tendo__tensor_new(op, t->dtype, t->ndim, t->shape, d);
        nbytes = (size_t)t->numel * tendo_dtype_size(t->dtype);
        if (!out)
            ok = false;
        else if (from.type == TENDO_CPU)
            ok = tendo__cuda_device.upload(op, d, tendo__tensor_data(out), tendo__tensor_data(dense), nbytes);
        else if (d.type == TENDO_CPU)
            ok = tendo__cuda_device.download(op, from, tendo__tensor_data(out), tendo__tensor_data(dense), nbytes);
        else
            ok = tendo__cuda_device.peer(op, d, tendo__tensor_data(out), from, tendo__tensor_data(dense), nbytes);
        tendo__tensor_free(dense);
        if (!ok) {
            tendo__tensor_free(out);
            return NULL;
        }
    }
    if (out)
        tendo__emit_transfer(t, out);
    return out;
}

tendo__tensor *tendo__host_contiguous(const char *op, const tendo__tensor *t)
{
    if (t->storage->device.type == TENDO_CPU)
        return tendo__contiguous(op, t);
    return tendo__move(op, t, tendo_cpu());
}

tendo_status tendo__read_dense(const char *op, const tendo__tensor *t, void *dst)
{
    tendo__tensor *dense;
    bool ok;

    if (t->storage->device.type != TENDO_CUDA) {
        tendo__copy_to_dense(t, dst);
        return TENDO_OK;
    }
    if (!(dense = tendo__contiguous(op, t)))
        return tendo_error_status(tendo_last_error());
    ok = tendo__cuda_device.download(op, t->storage->device, dst, tendo__tensor_data(dense),
                              (size_t)t->numel * tendo_dtype_size(t->dtype));
    tendo__tensor_free(dense);
    return ok ? TENDO_OK : tendo_error_status(tendo_last_error());
}

tendo_status tendo__copy_out(const char *op, const tendo__tensor *t, void *dst, int64_t count)
{
    if (!tendo__check_tensor(op, "t", t))
        return TENDO_ERR_INVALID_ARG;
    if (count < t->numel)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op,
                           "dst has room for %lld elements, tensor of shape %s has %lld",
                           (long long)count, tendo__shape_str(t->ndim, t->shape).s,
                           (long long)t->numel);
    if (!dst && t->numel > 0)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "dst is NULL");
    return tendo__read_dense(op, t, dst);
}
