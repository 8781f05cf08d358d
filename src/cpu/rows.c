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
    if (r.in2_traits) {
        r.in2 = p[2];
        r.in2_next = s[2];
    }
    r.count = n;
    c->fn(&r, c->ctx);
}

bool tendo__rows_run2(const char *op, tendo__tensor *out, int out_dim, const tendo__tensor *in,
                      const tendo__tensor *in2, int dim, tendo__rows_fn fn, void *ctx, tendo__cu_rows_fn cu,
                      const void *cu_ctx, const tendo__tensor *const *extra, int nextra)
{
    tendo__tensor ov, iv, iv2;
    const tendo__tensor *inputs[2] = {&iv, &iv2};
    struct rows_ctx c = {fn, ctx, {0}};
    tendo__iter it;

    drop_dim(out, out_dim, &ov);
    drop_dim(in, dim, &iv);
    if (in2)
        drop_dim(in2, dim, &iv2);
    c.r.len = in->ndim ? in->shape[dim] : 1;
    c.r.in_step = in->ndim ? in->stride[dim] : 1;
    c.r.in2_step = in2 && in2->ndim ? in2->stride[dim] : 1;
    c.r.out_step = out_dim >= 0 && out_dim < out->ndim ? out->stride[out_dim] : 0;
    c.r.in_traits = tendo__traits_of(in->dtype);
    c.r.in2_traits = in2 ? tendo__traits_of(in2->dtype) : NULL;
    c.r.out_traits = tendo__traits_of(out->dtype);
    if (ov.numel == 0)
        return true;
    tendo__iter_build(&it, &ov, in2 ? 2 : 1, inputs);
    if (out->storage->device.type == TENDO_CUDA) {
        const tendo__tensor *ts[3 + 2] = {out, in};
        int n = 2;

        if (in2)
            ts[n++] = in2;
        for (int i = 0; i < nextra && i < 2; i++)
            ts[n++] = extra[i];
        return tendo__cuda_device.rows(op, &it, c.r.len, c.r.in_step, c.r.in2_step, c.r.out_step, ts, n, cu, cu_ctx);
    }
    tendo__iter_run_work(&it, rows_loop, &c, c.r.len);
    return true;
}

bool tendo__rows_run(const char *op, tendo__tensor *out, int out_dim, const tendo__tensor *in, int dim,
                     tendo__rows_fn fn, void *ctx, tendo__cu_rows_fn cu, const void *cu_ctx,
                     const tendo__tensor *const *extra, int nextra)
{
    return tendo__rows_run2(op, out, out_dim, in, NULL, dim, fn, ctx, cu, cu_ctx, extra, nextra);
}
