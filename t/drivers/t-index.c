/* t/drivers/t-index.c - indexing and joining (issue 12): index_select (i64 and i32
 * indices, the generic front picking by the index's type), gather,
 * scatter_out, scatter_add_out, cat, stack, copy_into, tril and triu, on
 * every dtype, against references computed here on the raw elements (the
 * ops move bits: results must match bit for bit; scatter_add adds in the
 * dtype).  Inputs come contiguous, transposed, step-sliced, expanded and
 * flipped; indices are negative and positive, i64 and i32, and strided;
 * out-of-range indices fail naming the index, the dim and its size, and
 * leave out as it was.  The body is t/bodies/index-body.h. */
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

#define TEST_BODY "layouts-body.h" /* the views every body builds its inputs with */
#include "each-dtype.h"
#undef TEST_BODY
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
    ok(!tensor_stack(two, 1, -4) && t_failed_with(TENDO_ERR_INVALID_ARG, "dim -4 is out of range for stacking shape [2,3]"),
       "stack: dim out of range");
    {
        /* scatter with src = out: every read happens first (rows swap) */
        int64_t v[6] = {1, 2, 3, 4, 5, 6}, iv[6] = {1, 1, 1, 0, 0, 0}, got[6];
        tensor_i64 *o = tensor_i64_from_data(v, 2, s2, tendo_cpu()), *ix = tensor_i64_from_data(iv, 2, s2, tendo_cpu());
        ok(tensor_scatter_out(o, 0, ix, o) == TENDO_OK && tensor_copy_to(o, got, 6) == TENDO_OK && got[0] == 4 &&
               got[2] == 6 && got[3] == 1 && got[5] == 3,
           "scatter_out with src = out reads src before writing");
        tensor_free(o);
        tensor_free(ix);
    }
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

/* a (on the CPU) and b (anywhere) hold the same f32 values */
static bool t_same_f32(const tensor_f32 *a, const tensor_f32 *b, const char *what)
{
    int64_t n = tensor_numel(a);
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
    bool good = b && t_same_shape(tensor_ndim(a), tensor_shape(a), tensor_ndim(b), tensor_shape(b)) &&
                tensor_copy_to(a, x, n) == TENDO_OK && tensor_copy_to(b, y, n) == TENDO_OK &&
                (n == 0 || !memcmp(x, y, (size_t)n * sizeof *x));

    if (!good)
        diag("%s: differs from the CPU (%s)", what, b ? "values or shape" : tendo_error_message(tendo_last_error()));
    free(x);
    free(y);
    return good;
}

/* The same ops on a GPU against the CPU (f32, i64 indices), and the
 * device-side index check. */
static void test_cuda(void)
{
    int64_t s[2] = {5, 6}, is[2] = {3, 6}, iv[18], sel[4] = {4, -1, 0, 2};
    tendo_device g = tendo_cuda(0);
    tensor_f32 *a, *ag, *r, *rg, *o, *og;
    tensor_i64 *ix, *ixg, *sx, *sxg;
    uint64_t rng = 5;

    if (!tendo_cuda_available()) {
        skip(8, "no CUDA device");
        return;
    }
    for (int i = 0; i < 18; i++)
        iv[i] = (int64_t)(t_rand_u64(&rng) % 10) - 5;
    for (int i = 0; i < 6; i++) /* distinct rows per column for scatter */
        iv[i] = 0, iv[6 + i] = -1, iv[12 + i] = 2;
    a = tensor_f32_rand(2, s, 1, tendo_cpu());
    ag = tensor_to(a, g);
    ix = tensor_i64_from_data(iv, 2, is, tendo_cpu());
    ixg = tensor_to(ix, g);
    sx = tensor_i64_from_data(sel, 1, (const int64_t[]){4}, tendo_cpu());
    sxg = tensor_to(sx, g);
    r = tensor_index_select(a, 1, sx);
    rg = tensor_index_select(ag, 1, sxg);
    ok(t_same_f32(r, rg, "index_select"), "cuda index_select matches the CPU");
    tensor_free(r);
    tensor_free(rg);
    r = tensor_gather(a, 0, ix);
    rg = tensor_gather(ag, 0, ixg);
    ok(t_same_f32(r, rg, "gather"), "cuda gather matches the CPU");
    tensor_free(r);
    tensor_free(rg);
    o = tensor_f32_zeros(2, s, tendo_cpu());
    og = tensor_to(o, g);
    ok(tensor_scatter_out(o, 0, ix, a) == TENDO_OK && tensor_scatter_out(og, 0, ixg, ag) == TENDO_OK &&
           t_same_f32(o, og, "scatter_out"),
       "cuda scatter_out matches the CPU");
    {
        int64_t bad[4] = {0, 7, 1, 2};
        tensor_i64 *b = tensor_i64_from_data(bad, 1, (const int64_t[]){4}, tendo_cpu()), *bg = tensor_to(b, g);
        tensor_f32 *keep = tensor_clone(og);
        tensor_i64 *b2 = tensor_i64_from_data(bad, 2, (const int64_t[]){1, 4}, tendo_cpu()), *b2g = tensor_to(b2, g);
        ok(!tensor_index_select(ag, 0, bg) && t_failed_with(TENDO_ERR_INVALID_ARG, "index 7 is out of range for dim 0 of size 5") &&
               tensor_scatter_out(og, 1, b2g, ag) == TENDO_ERR_INVALID_ARG &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "index 7 is out of range for dim 1 of size 6") &&
               t_same_f32(keep, og, "out after a failed scatter"),
           "cuda: an out-of-range index fails after the kernel, out unchanged");
        tensor_free(keep);
        tensor_free(b);
        tensor_free(bg);
        tensor_free(b2);
        tensor_free(b2g);
    }
    {
        const tensor_f32 *parts[2] = {a, a}, *gparts[2] = {ag, ag};
        r = tensor_cat(parts, 2, 1);
        rg = tensor_cat(gparts, 2, 1);
        ok(t_same_f32(r, rg, "cat"), "cuda cat matches the CPU");
        tensor_free(r);
        tensor_free(rg);
        r = tensor_stack(parts, 2, 1);
        rg = tensor_stack(gparts, 2, 1);
        tensor_free(r);
        tensor_free(rg);
    }
    {
        tensor_f32 *row = tensor_narrow(a, 0, 1, 1), *rowg = tensor_narrow(ag, 0, 1, 1);
        tensor_f32 *vt = tensor_transpose(o, 0, 1), *vtg = tensor_transpose(og, 0, 1);
        tensor_f32 *rt = tensor_transpose(row, 0, 1), *rtg = tensor_transpose(rowg, 0, 1);
        /* a [6,1] column broadcast into the transposed [6,5] view */
        ok(tensor_copy_into(vt, rt) == TENDO_OK && tensor_copy_into(vtg, rtg) == TENDO_OK && t_same_f32(o, og, "copy_into"),
           "cuda copy_into a transposed view with broadcasting matches the CPU");
        tensor_free(row);
        tensor_free(rowg);
        tensor_free(vt);
        tensor_free(vtg);
        tensor_free(rt);
        tensor_free(rtg);
    }
    {
        /* integers in f32: exact sums, whatever order the atomics add in */
        tensor_f32 *ar = tensor_f32_arange(0, 30, 1, tendo_cpu()), *ints = tensor_reshape(ar, 2, s);
        tensor_f32 *intsg = tensor_to(ints, g), *z = tensor_f32_zeros(2, s, tendo_cpu()), *zg = tensor_to(z, g);
        for (int i = 0; i < 18; i++)
            iv[i] = (int64_t)(t_rand_u64(&rng) % 10) - 5;
        tensor_free(ix);
        tensor_free(ixg);
        ix = tensor_i64_from_data(iv, 2, is, tendo_cpu());
        ixg = tensor_to(ix, g);
        ok(tensor_scatter_add_out(z, 0, ix, ints) == TENDO_OK && tensor_scatter_add_out(zg, 0, ixg, intsg) == TENDO_OK &&
               t_same_f32(z, zg, "scatter_add_out"),
           "cuda scatter_add_out (repeated indices) matches the CPU");
        tensor_free(ar);
        tensor_free(ints);
        tensor_free(intsg);
        tensor_free(z);
        tensor_free(zg);
    }
    r = tensor_triu(a, 1);
    rg = tensor_triu(ag, 1);
    ok(t_same_f32(r, rg, "triu"), "cuda triu matches the CPU");
    tensor_free(r);
    tensor_free(rg);
    tensor_free(a);
    tensor_free(ag);
    tensor_free(o);
    tensor_free(og);
    tensor_free(ix);
    tensor_free(ixg);
    tensor_free(sx);
    tensor_free(sxg);
}

int main(void)
{
    FOR_EACH_DTYPE(test_index);
    test_errors();
#ifdef TENDO_HAVE_F32
    test_cuda();
#endif
    return done_testing();
}
