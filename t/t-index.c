/* t/t-index.c - indexing and joining (issue 12): index_select (i64 and i32
 * indices, the generic front picking by the index's type), gather,
 * scatter_out, scatter_add_out, cat, stack, copy_into, tril and triu, on
 * every dtype, against references computed here on the raw elements (the
 * ops move bits: results must match bit for bit; scatter_add adds in the
 * dtype).  Inputs come contiguous, transposed, step-sliced, expanded and
 * flipped; indices are negative and positive, i64 and i32, and strided;
 * out-of-range indices fail naming the index, the dim and its size, and
 * leave out as it was.  The body is t/index-body.h. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#define TEST_KINDS T_ALL
#include "dt.h"

/* i64 index tensor of n values, in layout: 0 contiguous, 1 every other
 * element of a longer one, 2 flipped. */
static tensor_i64 *t_idx64(const int64_t *v, int64_t n, int lay)
{
    int64_t m = lay == 1 ? 2 * n : n;
    int64_t *raw = malloc((size_t)(m ? m : 1) * sizeof *raw);
    tensor_i64 *base, *view;

    for (int64_t i = 0; i < m; i++)
        raw[i] = lay == 1 ? (i % 2 ? 12345 : v[i / 2]) : lay == 2 ? v[n - 1 - i] : v[i];
    base = tensor_i64_from_data(raw, 1, &m, tendo_cpu());
    free(raw);
    if (!base)
        bail("index: %s", tendo_error_message(tendo_last_error()));
    if (lay == 0)
        return base;
    view = lay == 1 ? tensor_slice(base, 0, 0, m, 2) : tensor_flip(base, 0);
    tensor_free(base);
    return view;
}

/* An i64 index of shape (nd, shape) holding v (row-major), transposed
 * (a view) when trans and 2-D. */
static tensor_i64 *t_idx64_nd(const int64_t *v, int nd, const int64_t *shape, bool trans)
{
    tensor_i64 *base, *view;
    int64_t n = t_numel(nd, shape);

    if (!trans || nd != 2)
        return tensor_i64_from_data(v, nd, shape, tendo_cpu());
    {
        int64_t bs[2] = {shape[1], shape[0]};
        int64_t *raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
        for (int64_t i = 0; i < shape[0]; i++)
            for (int64_t j = 0; j < shape[1]; j++)
                raw[j * shape[0] + i] = v[i * shape[1] + j];
        base = tensor_i64_from_data(raw, 2, bs, tendo_cpu());
        free(raw);
    }
    view = tensor_transpose(base, 0, 1);
    tensor_free(base);
    return view;
}

#ifdef TENDO_HAVE_I32
static tensor_i32 *t_idx32(const int64_t *v, int64_t n)
{
    int32_t *raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
    tensor_i32 *t;

    for (int64_t i = 0; i < n; i++)
        raw[i] = (int32_t)v[i];
    t = tensor_i32_from_data(raw, 1, &n, tendo_cpu());
    free(raw);
    return t;
}
#endif

/* Row-major position flat of shape -> its coordinates. */
static void t_coords(int nd, const int64_t *shape, int64_t flat, int64_t *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = flat % shape[d];
        flat /= shape[d];
    }
}

static int64_t t_flat(int nd, const int64_t *shape, const int64_t *c)
{
    int64_t f = 0;
    for (int d = 0; d < nd; d++)
        f = f * shape[d] + c[d];
    return f;
}

#define TEST_BODY "index-body.h"
#include "each-dtype.h"

/* Argument errors that need no dtype loop. */
static void test_errors(void)
{
    int64_t s2[2] = {2, 3};
    tensor_i64 *a = tensor_i64_zeros(2, s2, tendo_cpu()), *r;
    tensor_i64 *idx2d = tensor_i64_zeros(2, s2, tendo_cpu());
    const tensor_i64 *two[2] = {a, NULL};

    ok(!tensor_index_select((const tensor_i64 *)NULL, 0, a) && t_failed_with(TENDO_ERR_INVALID_ARG, "src"),
       "index_select(NULL src) fails");
    ok(!tensor_index_select(a, 0, (const tensor_i64 *)NULL) && t_failed_with(TENDO_ERR_INVALID_ARG, "index"),
       "index_select(NULL index) fails");
    ok(!tensor_index_select(a, 2, a) && t_failed_with(TENDO_ERR_INVALID_ARG, "dim"), "index_select: dim 2 of 2-D");
    ok(!tensor_index_select(a, 0, idx2d) && t_failed_with(TENDO_ERR_SHAPE, "1-D"), "index_select: 2-D index");
    ok(!tensor_gather(a, 0, (const tensor_i64 *)NULL) &&
           t_failed_with(TENDO_ERR_INVALID_ARG, "index"),
       "gather(NULL index) fails");
    {
        int64_t s3[2] = {2, 4};
        tensor_i64 *big = tensor_i64_zeros(2, s3, tendo_cpu());
        ok(!tensor_gather(a, 0, big) && t_failed_with(TENDO_ERR_SHAPE, "index has shape [2,4]"),
           "gather: index larger than src off dim fails");
        ok(tensor_scatter_out(a, 0, big, big) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "index"),
           "scatter_out: index larger than out off dim fails");
        tensor_free(big);
    }
    ok(!tensor_cat(two, 2, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "tensor 1 of 2 is NULL"), "cat with a NULL");
    ok(!tensor_i64_cat(NULL, 1, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "NULL"), "cat(NULL array)");
    ok(!tensor_i64_cat(two, 0, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "at least one"), "cat of 0 tensors");
    ok(!tensor_i64_stack(two, -1, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "at least one"), "stack of -1 tensors");
    ok(!tensor_cat(two, 1, 2) && t_failed_with(TENDO_ERR_INVALID_ARG, "dim"), "cat: dim out of range");
    ok(!tensor_stack(two, 1, -4) && t_failed_with(TENDO_ERR_INVALID_ARG, "dim"), "stack: dim out of range");
    {
        int64_t s1 = 3;
        tensor_i64 *v = tensor_i64_zeros(1, &s1, tendo_cpu());
        const tensor_i64 *mix[2] = {a, v};
        tensor_i64 *z0 = tensor_i64_zeros(0, NULL, tendo_cpu());
        const tensor_i64 *zs[1] = {z0};
        ok(!tensor_cat(mix, 2, 0) && t_failed_with(TENDO_ERR_SHAPE, "tensor 1 has shape [3]"), "cat: ndims differ");
        ok(!tensor_tril(v, 0) && t_failed_with(TENDO_ERR_SHAPE, "at least 2 dims"), "tril of 1-D fails");
        ok(!tensor_triu(z0, 0) && t_failed_with(TENDO_ERR_SHAPE, "at least 2 dims"), "triu of 0-d fails");
        ok(!tensor_cat(zs, 1, 0) && t_failed_with(TENDO_ERR_SHAPE, "0-d"), "cat of 0-d tensors fails");
        r = tensor_stack(zs, 1, 0);
        ok(r && tensor_ndim(r) == 1 && tensor_size(r, 0) == 1, "stack of one 0-d tensor is [1]");
        tensor_free(r);
        ok(tensor_copy_into(a, v) == TENDO_OK, "copy_into: [3] broadcasts into [2,3]");
        ok(tensor_copy_into(v, a) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "does not broadcast"),
           "copy_into: [2,3] into [3] fails");
        {
            tensor_i64 *e = tensor_expand(v, 2, s2);
            ok(tensor_copy_into(e, a) == TENDO_ERR_INVALID_ARG &&
                   t_failed_with(TENDO_ERR_INVALID_ARG, "overlapping"),
               "copy_into an expanded view fails");
            tensor_free(e);
        }
        ok(tensor_copy_into((tensor_i64 *)NULL, a) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "dst"),
           "copy_into(NULL) fails");
        ok(tensor_copy_into(a, a) == TENDO_OK, "copy_into itself (exact overlap) is allowed");
        tensor_free(v);
        tensor_free(z0);
    }
    tensor_free(a);
    tensor_free(idx2d);
}

int main(void)
{
    FOR_EACH_DTYPE(test_index);
    test_errors();
    return done_testing();
}
