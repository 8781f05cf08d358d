/* t/drivers/t-matmul-i8.c - tensor_i8_matmul_i32: int8 products summed exactly in
 * int32, against an int64 reference wrapped to int32.
 *
 * Shapes cover the micro-kernels' edges (rows and columns past a whole
 * tile, k past a whole group and past a packed block, n past a packed
 * panel), the extremes -128 x -128 (where an unsigned-by-signed kernel's
 * offset trick must stay exact), a dot product long enough to wrap, views
 * (transposed, every other element, a flipped dim, broadcast batches,
 * 1-D operands) and 1, 2 and 3 threads; matmul_i32_out into dense,
 * transposed and batched outs.  The path is whatever the CPU has
 * as TENDO_CPU allows (CI runs this at every level); the results must be
 * the same bits on each.  Argument errors and a GPU (UNSUPPORTED) last.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tap.h"
#include "tendo.h"

/* The kernels tested here serve dtypes a build may leave out (--enable-dtypes). */
#if defined(TENDO_HAVE_I8) && defined(TENDO_HAVE_I32)

static uint64_t rng = 0x9e3779b97f4a7c15u;

static int8_t next_i8(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int8_t)(rng >> 24);
}

/* A new [rows, cols] i8 tensor: random, or every element v (fill true). */
static tensor_i8 *matrix(int64_t rows, int64_t cols, bool fill, int8_t v)
{
    int64_t n = rows * cols;
    int8_t *d = malloc((size_t)(n ? n : 1));
    tensor_i8 *t;

    for (int64_t i = 0; i < n; i++)
        d[i] = fill ? v : next_i8();
    t = tensor_i8_from_data(d, 2, (const int64_t[]){rows, cols}, tendo_cpu());
    free(d);
    if (!t)
        bail("from_data: %s", tendo_error_message(tendo_last_error()));
    return t;
}

/* Element (i, j) of a 2-D view. */
static int8_t el(const tensor_i8 *t, int64_t i, int64_t j)
{
    return tensor_i8_data(t)[i * tensor_i8_stride(t)[0] + j * tensor_i8_stride(t)[1]]; /* data(): element 0 */
}

/* c == a @ b for 2-D a [m, k], b [k, n], wrapped to int32 like the kernel. */
static bool check_2d(const tensor_i8 *a, const tensor_i8 *b, const tensor_i32 *c, const char *what)
{
    int64_t m = tensor_i8_size(a, 0), k = tensor_i8_size(a, 1), n = tensor_i8_size(b, 1);
    const int32_t *got = tensor_i32_data(c);
    int64_t bad = 0;

    if (!ok(c && tensor_i32_ndim(c) == 2 && tensor_i32_size(c, 0) == m && tensor_i32_size(c, 1) == n,
            "%s: shape [%lld, %lld]", what, (long long)m, (long long)n))
        return false;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (int64_t)el(a, i, p) * el(b, p, j);
            if (got[i * n + j] != (int32_t)(uint32_t)(uint64_t)s && bad++ == 0)
                diag("%s: C[%lld, %lld] = %d, want %d", what, (long long)i, (long long)j, got[i * n + j],
                     (int32_t)(uint32_t)(uint64_t)s);
        }
    return ok(bad == 0, "%s: %lld x %lld x %lld exact (%lld wrong)", what, (long long)m, (long long)k,
              (long long)n, (long long)bad);
}

static void shapes(void)
{
    static const int64_t cases[][3] = {
        {1, 1, 1},     {5, 3, 7},     {6, 16, 16},   {12, 32, 32},  {13, 33, 33}, {7, 2, 17},  {25, 61, 70},
        {96, 128, 64}, {97, 130, 65}, {3, 1030, 5},  {2, 7, 1100},  {300, 40, 50}, {0, 4, 3},  {4, 0, 3},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t m = cases[i][0], k = cases[i][1], n = cases[i][2];
        tensor_i8 *a = matrix(m, k, false, 0), *b = matrix(k, n, false, 0);
        tensor_i32 *c = tensor_matmul_i32(a, b);
        char what[64];

        snprintf(what, sizeof what, "random %lldx%lldx%lld", (long long)m, (long long)k, (long long)n);
        check_2d(a, b, c, what);
        tensor_free(a);
        tensor_free(b);
        tensor_free(c);
    }
}

/* -128 everywhere: every product is 16384, the most any path must hold. */
static void extremes(void)
{
    static const int8_t vals[][2] = {{-128, -128}, {-128, 127}, {127, 127}};

    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        tensor_i8 *a = matrix(14, 1029, true, vals[i][0]), *b = matrix(1029, 35, true, vals[i][1]);
        tensor_i32 *c = tensor_matmul_i32(a, b);
        char what[64];

        snprintf(what, sizeof what, "all %d times all %d", vals[i][0], vals[i][1]);
        check_2d(a, b, c, what);
        tensor_free(a);
        tensor_free(b);
        tensor_free(c);
    }
}

/* 140000 products of 16384 pass 2^31: the sum wraps as int32 does. */
static void wraps(void)
{
    const int64_t k = 140000;
    tensor_i8 *a = matrix(1, k, true, -128), *b = matrix(k, 1, true, -128);
    tensor_i32 *c = tensor_matmul_i32(a, b);
    int32_t want = (int32_t)(uint32_t)(uint64_t)(16384 * k);

    ok(c && tensor_i32_data(c)[0] == want, "a dot product of %lld x 16384 wraps to %d", (long long)k, want);
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

static void views(void)
{
    tensor_i8 *a = matrix(40, 30, false, 0), *b = matrix(30, 50, false, 0);
    tensor_i8 *a2 = matrix(30, 40, false, 0), *at = tensor_transpose(a2, 0, 1);
    tensor_i8 *wide = matrix(60, 50, false, 0), *every = tensor_slice(wide, 0, 0, 60, 2);
    tensor_i8 *bt = tensor_transpose(b, 0, 1), *btt = tensor_transpose(bt, 0, 1);
    tensor_i8 *flip = tensor_flip(a, 0);
    tensor_i32 *c;

    c = tensor_matmul_i32(at, b);
    check_2d(at, b, c, "transposed a");
    tensor_free(c);
    c = tensor_matmul_i32(a, every);
    check_2d(a, every, c, "b every other row");
    tensor_free(c);
    c = tensor_matmul_i32(a, btt);
    check_2d(a, btt, c, "b through two transposes");
    tensor_free(c);
    c = tensor_matmul_i32(flip, b);
    check_2d(flip, b, c, "a flipped (negative stride)");
    tensor_free(c);
    tensor_free(a);
    tensor_free(b);
    tensor_free(a2);
    tensor_free(at);
    tensor_free(wide);
    tensor_free(every);
    tensor_free(bt);
    tensor_free(btt);
    tensor_free(flip);
}

/* Element idx of an n-D i8 view. */
static int8_t el_nd(const tensor_i8 *t, const int64_t *idx)
{
    int64_t off = 0;

    for (int d = 0; d < tensor_i8_ndim(t); d++)
        off += idx[d] * tensor_i8_stride(t)[d];
    return tensor_i8_data(t)[off];
}

/* [2, 1, m, k] @ [3, k, n] -> [2, 3, m, n]: batches broadcast like numpy. */
static void batches(void)
{
    const int64_t m = 9, k = 21, n = 19;
    int8_t *da = malloc(2 * m * k), *db = malloc(3 * k * n);
    tensor_i8 *a, *b;
    tensor_i32 *c;
    int64_t bad = 0;

    for (int64_t i = 0; i < 2 * m * k; i++)
        da[i] = next_i8();
    for (int64_t i = 0; i < 3 * k * n; i++)
        db[i] = next_i8();
    a = tensor_i8_from_data(da, 4, (const int64_t[]){2, 1, m, k}, tendo_cpu());
    b = tensor_i8_from_data(db, 3, (const int64_t[]){3, k, n}, tendo_cpu());
    c = tensor_matmul_i32(a, b);
    if (ok(c && tensor_i32_ndim(c) == 4 && tensor_i32_size(c, 0) == 2 && tensor_i32_size(c, 1) == 3,
           "broadcast batches: [2, 1, %lld, %lld] @ [3, %lld, %lld] is [2, 3, %lld, %lld]", (long long)m,
           (long long)k, (long long)k, (long long)n, (long long)m, (long long)n)) {
        for (int64_t x = 0; x < 2; x++)
            for (int64_t y = 0; y < 3; y++)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        int64_t s = 0;
                        for (int64_t p = 0; p < k; p++)
                            s += (int64_t)el_nd(a, (const int64_t[]){x, 0, i, p}) *
                                 el_nd(b, (const int64_t[]){y, p, j});
                        bad += tensor_i32_data(c)[((x * 3 + y) * m + i) * n + j] != (int32_t)s;
                    }
        ok(bad == 0, "broadcast batches exact (%lld wrong)", (long long)bad);
    }
    free(da);
    free(db);
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

/* 1-D operands are promoted and the added dim removed, as numpy does. */
static void one_d(void)
{
    tensor_i8 *v = matrix(1, 33, false, 0), *m = matrix(33, 7, false, 0), *vt = matrix(7, 33, false, 0);
    tensor_i8 *v1 = tensor_reshape(v, 1, (const int64_t[]){33});
    tensor_i32 *vm = tensor_matmul_i32(v1, m), *mv = tensor_matmul_i32(vt, v1), *vv = tensor_matmul_i32(v1, v1);
    int64_t s = 0, bad = 0;

    ok(vm && tensor_i32_ndim(vm) == 1 && tensor_i32_size(vm, 0) == 7, "[33] @ [33, 7] is [7]");
    ok(mv && tensor_i32_ndim(mv) == 1 && tensor_i32_size(mv, 0) == 7, "[7, 33] @ [33] is [7]");
    ok(vv && tensor_i32_ndim(vv) == 0, "[33] @ [33] is 0-d");
    for (int64_t j = 0; vm && mv && j < 7; j++) {
        int64_t x = 0, y = 0;
        for (int64_t p = 0; p < 33; p++) {
            x += (int64_t)el(v, 0, p) * el(m, p, j);
            y += (int64_t)el(vt, j, p) * el(v, 0, p);
        }
        bad += (tensor_i32_data(vm)[j] != x) + (tensor_i32_data(mv)[j] != y);
    }
    for (int64_t p = 0; p < 33; p++)
        s += (int64_t)el(v, 0, p) * el(v, 0, p);
    ok(bad == 0 && vv && tensor_i32_data(vv)[0] == s, "1-D products exact");
    tensor_free(v);
    tensor_free(m);
    tensor_free(vt);
    tensor_free(v1);
    tensor_free(vm);
    tensor_free(mv);
    tensor_free(vv);
}

/* 1, 2 and 3 threads give the same bits (and the right ones). */
static void threads(void)
{
    tensor_i8 *a = matrix(600, 200, false, 0), *b = matrix(200, 300, false, 0);
    tensor_i32 *c[3];
    int was = tendo_get_num_threads();

    for (int t = 0; t < 3; t++) {
        tendo_set_num_threads(t + 1);
        c[t] = tensor_matmul_i32(a, b);
    }
    tendo_set_num_threads(was);
    check_2d(a, b, c[0], "600x200x300, 1 thread");
    ok(c[1] && c[2] && !memcmp(tensor_i32_data(c[0]), tensor_i32_data(c[1]), 600 * 300 * 4) &&
           !memcmp(tensor_i32_data(c[0]), tensor_i32_data(c[2]), 600 * 300 * 4),
       "2 and 3 threads give the same bits as 1");
    for (int t = 0; t < 3; t++)
        tensor_free(c[t]);
    tensor_free(a);
    tensor_free(b);
}

/* matmul_i32_out: matmul_i32's bits into a dense out (written in place), a
 * transposed out and a broadcast batch; a wrong shape, an out of another
 * dtype's size or one sharing a's memory refused, out unchanged. */
static void out_forms(void)
{
    tensor_i8 *a = matrix(37, 70, false, 0), *b = matrix(70, 45, false, 0);
    tensor_i32 *want = tensor_matmul_i32(a, b), *out = tensor_i32_full(TENDO_SHAPE(37, 45), 7, tendo_cpu());
    tensor_i32 *outtb = tensor_i32_full(TENDO_SHAPE(45, 37), 7, tendo_cpu()), *outt = tensor_transpose(outtb, 0, 1);
    tensor_i32 *bad = tensor_i32_full(TENDO_SHAPE(37, 44), 7, tendo_cpu()), *dense;
    tensor_i8 *a3 = tensor_i8_zeros(TENDO_SHAPE(2, 37, 70), tendo_cpu());
    tensor_i32 *out3 = tensor_i32_zeros(TENDO_SHAPE(2, 37, 45), tendo_cpu()), *want3;
    bool same = true;

    if (!want || !out || !outt || !bad || !a3 || !out3)
        bail("out_forms setup: %s", tendo_error_message(tendo_last_error()));
    ok(tensor_matmul_i32_out(out, a, b) == TENDO_OK, "matmul_i32_out into a dense [37, 45]");
    ok(!memcmp(tensor_i32_data(out), tensor_i32_data(want), 37 * 45 * 4), "a dense out: matmul_i32's bits");
    ok(tensor_matmul_i32_out(outt, a, b) == TENDO_OK, "matmul_i32_out into a transposed view");
    dense = tensor_contiguous(outt);
    ok(dense && !memcmp(tensor_i32_data(dense), tensor_i32_data(want), 37 * 45 * 4),
       "a transposed out: matmul_i32's values");
    tensor_free(dense);
    ok(tensor_copy_into(a3, a) == TENDO_OK && tensor_matmul_i32_out(out3, a3, b) == TENDO_OK,
       "matmul_i32_out: [2, 37, 70] @ [70, 45] into [2, 37, 45]");
    want3 = tensor_matmul_i32(a3, b);
    ok(want3 && !memcmp(tensor_i32_data(out3), tensor_i32_data(want3), 2 * 37 * 45 * 4), "batches: matmul_i32's bits");
    check_2d(a, b, out, "matmul_i32_out");
    ok(tensor_matmul_i32_out(bad, a, b) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "matmul_i32_out: "),
       "a [37, 44] out: SHAPE");
    for (int64_t i = 0; i < 37 * 44; i++)
        same = same && tensor_i32_data(bad)[i] == 7;
    ok(same, "the refused out is unchanged");
    ok(tensor_i8_matmul_i32_out(NULL, a, b) == TENDO_ERR_INVALID_ARG, "a NULL out: INVALID_ARG");
    if (tendo_cuda_device_count() > 0) {
        tensor_i8 *g = tensor_to(a, tendo_cuda(0)), *gb = tensor_to(b, tendo_cuda(0));
        tensor_i32 *go = tensor_i32_zeros(TENDO_SHAPE(37, 45), tendo_cuda(0));
        ok(g && gb && go && tensor_matmul_i32_out(go, g, gb) == TENDO_ERR_UNSUPPORTED &&
               t_failed_with(TENDO_ERR_UNSUPPORTED, "no int8 matmul on cuda:0"),
           "matmul_i32_out on cuda:0: UNSUPPORTED, naming the device");
        tensor_free(go);
        tensor_free(gb);
        tensor_free(g);
    } else {
        skip(1, "no CUDA device");
    }
    tensor_free(want3);
    tensor_free(out3);
    tensor_free(a3);
    tensor_free(bad);
    tensor_free(outt);
    tensor_free(outtb);
    tensor_free(out);
    tensor_free(want);
    tensor_free(b);
    tensor_free(a);
}

static void errors(void)
{
    tensor_i8 *a = matrix(3, 4, false, 0), *b = matrix(5, 2, false, 0);

    ok(!tensor_matmul_i32(a, b) && t_failed_with(TENDO_ERR_SHAPE, "inner dimensions 4 and 5 differ"),
       "[3, 4] @ [5, 2]: SHAPE");
    ok(!tensor_i8_matmul_i32(NULL, b) && t_failed_with(TENDO_ERR_INVALID_ARG, "NULL"), "a NULL: INVALID_ARG");
    if (tendo_cuda_device_count() > 0) {
        tensor_i8 *g = tensor_to(a, tendo_cuda(0));
        ok(g && !tensor_matmul_i32(g, g) && t_failed_with(TENDO_ERR_UNSUPPORTED, "no int8 matmul on cuda:0"),
           "on cuda:0: UNSUPPORTED, naming the device");
        tensor_free(g);
    } else {
        skip(1, "no CUDA device");
    }
    tensor_free(a);
    tensor_free(b);
}

int main(void)
{
    plan_lazy();
    diag("cpu kernels: %s", tendo_cpu_features());
    shapes();
    extremes();
    wraps();
    views();
    batches();
    one_d();
    threads();
    out_forms();
    errors();
    return done_testing();
}
#else
int main(void) { skip_all("this build has no i8 or no i32: no matmul_i32"); }
#endif
