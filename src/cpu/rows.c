/* src/cpu/rows.c - running a function over every row of a tensor along one dim
 * (reductions, softmax, norms), rows split across threads. */
#include <string.h>

#include "core/device.h"
#include "core/iter.h"
#include "core/traits.h"
#include "cpu/rows.h"

/* t without dim d: the tensor of row starts. */
static void drop_dim(const tendo__tensor *t, int d, tendo__tensor *v)
{
    *v = *t;
    v->ndim = 0;
    v->numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (i == d)
            continue;
        v->shape[v->ndim] = t->shape[i];
        v->stride[v->ndim++] = t->stride[i];
        v->numel *= t->shape[i];
    }
}

struct rows_ctx {
    tendo__rows_fn fn;
    void *ctx;
    tendo__rows r;
};

static void rows_loop(char *const *p, const int64_t *s, int64_t n, void *vctx)
{
    struct rows_ctx *c = vctx;
    tendo__rows r = c->r;

    r.out = p[0];
    r.out_next = s[0];
    r.in = p[1];
    r.in_next = s[1];
    r.count = n;
    c->fn(&r, c->ctx);
}

bool tendo__rows_run(const char *op, tendo__tensor *out, int out_dim, const tendo__tensor *in, int dim,
                     tendo__rows_fn fn, void *ctx, tendo__cu_rows_fn cu, const void *cu_ctx,
                     const tendo__tensor *const *extra, int nextra)
{
    tendo__tensor ov, iv;
    const tendo__tensor *inputs[1] = {&iv};
    struct rows_ctx c = {fn, ctx, {0}};
    tendo__iter it;

    drop_dim(out, out_dim, &ov);
    drop_dim(in, dim, &iv);
    c.r.len = in->ndim ? in->shape[dim] : 1;
    c.r.in_step = in->ndim ? in->stride[dim] : 1;
    c.r.out_step = out_dim >= 0 && out_dim < out->ndim ? out->stride[out_dim] : 0;
    c.r.in_traits = tendo__traits_of(in->dtype);
    c.r.out_traits = tendo__traits_of(out->dtype);
    if (ov.numel == 0)
        return true;
    tendo__iter_build(&it, &ov, 1, inputs);
    if (out->storage->device.type == TENDO_CUDA) {
        const tendo__tensor *ts[2 + 2] = {out, in};
        for (int i = 0; i < nextra && i < 2; i++)
            ts[2 + i] = extra[i];
        return tendo__cuda_device.rows(op, &it, c.r.len, c.r.in_step, c.r.out_step, ts, 2 + (nextra < 2 ? nextra : 2),
                                cu, cu_ctx);
    }
    tendo__iter_run_work(&it, rows_loop, &c, c.r.len);
    return true;
}
