/* bench/bench-core.c - times tendo's core copies and conversions.
 *
 *   bench-core DIR
 *
 * Writes each benchmark's input to DIR/<name>.f32 (raw little-endian
 * floats, so bench/compare.py can hand numpy the same data; the integer
 * inputs to DIR/<name>.raw in their own dtype) and prints one
 * line per benchmark: "<name> <best seconds> <shape>".  Not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tendo.h>

#define REPEATS 10

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void save(const char *dir, const char *name, const tensor_f32 *t)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(tensor_data(t), sizeof(float), (size_t)tensor_numel(t), f) != (size_t)tensor_numel(t)) {
        fprintf(stderr, "bench-core: cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

/* Writes n bytes at p to DIR/<name>.raw (the integer inputs, in their own
 * dtype, for numpy to read with the same dtype). */
static void save_raw(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.raw", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "bench-core: cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

/* Best wall time of REPEATS runs of an op that returns a new tensor. */
#define TIME_BEST(best, expr, free_fn)            \
    do {                                          \
        best = 1e30;                              \
        for (int r_ = 0; r_ < REPEATS; r_++) {    \
            double t0_ = now();                   \
            void *out_ = (expr);                  \
            double t1_ = now();                   \
            if (!out_) {                          \
                fprintf(stderr, "bench-core: %s\n", \
                        tendo_error_message(tendo_last_error())); \
                exit(1);                          \
            }                                     \
            free_fn(out_);                        \
            if (t1_ - t0_ < best)                 \
                best = t1_ - t0_;                 \
        }                                         \
    } while (0)

/* Best wall time of REPEATS runs of a status-returning _out call. */
#define TIME_OUT(best, expr)                                              \
    do {                                                                  \
        best = 1e30;                                                      \
        for (int r_ = 0; r_ < REPEATS; r_++) {                            \
            double t0_ = now();                                           \
            if ((expr) != TENDO_OK) {                                     \
                fprintf(stderr, "bench-core: %s\n",                       \
                        tendo_error_message(tendo_last_error()));         \
                exit(1);                                                  \
            }                                                             \
            double t1_ = now();                                           \
            if (t1_ - t0_ < best)                                         \
                best = t1_ - t0_;                                         \
        }                                                                 \
    } while (0)

/* The compute benchmarks of the CPU ops. */
static void bench_compute(const char *dir, tensor_f32 *x, tensor_f32 *m)
{
    const int64_t n = tensor_numel(x);
    tensor_f32 *y = tensor_f32_randn(TENDO_SHAPE(n), 3, tendo_cpu());
    tensor_f32 *o = tensor_f32_empty(TENDO_SHAPE(n), tendo_cpu());
    tensor_f16 *x16 = tensor_to_f16(x), *y16 = tensor_to_f16(y);
    tensor_f16 *o16 = tensor_f16_empty(TENDO_SHAPE(n), tendo_cpu());
    tensor_f32 *a = tensor_f32_randn(TENDO_SHAPE(1024, 1024), 4, tendo_cpu());
    tensor_f32 *b = tensor_f32_randn(TENDO_SHAPE(1024, 1024), 5, tendo_cpu());
    double best;

    save(dir, "y16m", y);
    save(dir, "a1024", a);
    save(dir, "b1024", b);
    TIME_OUT(best, tensor_add_out(o, x, y));
    printf("add_f32_out %.6f [16777216]\n", best);
    TIME_OUT(best, tensor_add_out(o16, x16, y16));
    printf("add_f16_out %.6f [16777216]\n", best);
    TIME_OUT(best, tensor_exp_out(o, x));
    printf("exp_f32_out %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_sum_all(x), tensor_f32_free);
    printf("sum_f32 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_sum(m, 0, false), tensor_f32_free);
    printf("sum_dim0 %.6f [4096,4096]\n", best);
    TIME_BEST(best, tensor_sum(m, 1, false), tensor_f32_free);
    printf("sum_dim1 %.6f [4096,4096]\n", best);
    TIME_BEST(best, tensor_softmax(m, -1), tensor_f32_free);
    printf("softmax %.6f [4096,4096]\n", best);
    TIME_BEST(best, tensor_matmul(a, b), tensor_f32_free);
    printf("matmul_f32 %.6f [1024,1024]@[1024,1024]\n", best);
    TIME_BEST(best, tensor_layer_norm(m, NULL, NULL, 1e-5), tensor_f32_free);
    printf("layer_norm %.6f [4096,4096]\n", best);
    {   /* the 16-bit paths of the reductions, row ops and GEMM */
        tensor_bf16 *mh = tensor_to_bf16(m), *ah = tensor_to_bf16(a), *bh = tensor_to_bf16(b);
        TIME_BEST(best, tensor_sum(mh, 1, false), tensor_bf16_free);
        printf("sum_dim1_bf16 %.6f [4096,4096]\n", best);
        TIME_BEST(best, tensor_softmax(mh, -1), tensor_bf16_free);
        printf("softmax_bf16 %.6f [4096,4096]\n", best);
        TIME_BEST(best, tensor_layer_norm(mh, NULL, NULL, 1e-5), tensor_bf16_free);
        printf("layer_norm_bf16 %.6f [4096,4096]\n", best);
        TIME_BEST(best, tensor_matmul(ah, bh), tensor_bf16_free);
        printf("matmul_bf16 %.6f [1024,1024]@[1024,1024]\n", best);
        tensor_free(mh);
        tensor_free(ah);
        tensor_free(bh);
    }
    tensor_free(y);
    tensor_free(o);
    tensor_free(x16);
    tensor_free(y16);
    tensor_free(o16);
    tensor_free(a);
    tensor_free(b);
}

/* numpy's where(x > y, x, y): the mask and the select, as one benchmark. */
static tensor_f32 *gt_where(const tensor_f32 *x, const tensor_f32 *y)
{
    tensor_bool *mask = tensor_gt(x, y);
    tensor_f32 *r = mask ? tensor_where(mask, x, y) : NULL;

    tensor_free(mask);
    return r;
}

/* The dtype families: integer, f64 and bool paths against numpy's. */
static void bench_kinds(const char *dir, tensor_f32 *x)
{
    const int64_t n = tensor_numel(x);
    tensor_f32 *y = tensor_f32_randn(TENDO_SHAPE(n), 3, tendo_cpu()); /* bench_compute's y */
    tensor_f32 *xs = tensor_mul_scalar(x, 1000.0), *ys = tensor_mul_scalar(y, 1000.0);
    tensor_i32 *xi = tensor_to_i32(xs), *yi = tensor_to_i32(ys);
    tensor_i32 *oi = tensor_i32_empty(TENDO_SHAPE(n), tendo_cpu());
    tensor_i64 *xl = tensor_to_i64(xi);
    tensor_u8 *xu = tensor_to_u8(xi);
    tensor_f64 *xd = tensor_to_f64(x), *yd = tensor_to_f64(y);
    tensor_f64 *od = tensor_f64_empty(TENDO_SHAPE(n), tendo_cpu());
    tensor_f32 *a = tensor_f32_randn(TENDO_SHAPE(1024, 1024), 4, tendo_cpu()); /* bench_compute's a, b */
    tensor_f32 *b = tensor_f32_randn(TENDO_SHAPE(1024, 1024), 5, tendo_cpu());
    tensor_f64 *ad = tensor_to_f64(a), *bd = tensor_to_f64(b);
    double best;

    if (!xu || !xl || !oi || !od || !ad || !bd) {
        fprintf(stderr, "bench-core: %s\n", tendo_error_message(tendo_last_error()));
        exit(1);
    }
    save(dir, "xs16m", xs);
    save_raw(dir, "xi16m", tensor_data(xi), (size_t)n * 4);
    save_raw(dir, "yi16m", tensor_data(yi), (size_t)n * 4);
    save_raw(dir, "xl16m", tensor_data(xl), (size_t)n * 8);
    save_raw(dir, "xu16m", tensor_data(xu), (size_t)n);
    TIME_OUT(best, tensor_add_out(oi, xi, yi));
    printf("add_i32_out %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_sum_all(xl), tensor_i64_free);
    printf("sum_i64 %.6f [16777216]\n", best);
    TIME_OUT(best, tensor_add_out(od, xd, yd));
    printf("add_f64_out %.6f [16777216]\n", best);
    TIME_OUT(best, tensor_exp_out(od, xd));
    printf("exp_f64_out %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_matmul(ad, bd), tensor_f64_free);
    printf("matmul_f64 %.6f [1024,1024]@[1024,1024]\n", best);
    TIME_BEST(best, gt_where(x, y), tensor_f32_free);
    printf("gt_where_f32 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_argmax(x, 0, false), tensor_i64_free);
    printf("argmax_f32 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_to_i32(xs), tensor_i32_free);
    printf("f32_to_i32 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_to_f32(xi), tensor_f32_free);
    printf("i32_to_f32 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_to_f32(xu), tensor_f32_free);
    printf("u8_to_f32 %.6f [16777216]\n", best);
    tensor_free(y);
    tensor_free(xs);
    tensor_free(ys);
    tensor_free(xi);
    tensor_free(yi);
    tensor_free(oi);
    tensor_free(xl);
    tensor_free(xu);
    tensor_free(xd);
    tensor_free(yd);
    tensor_free(od);
    tensor_free(a);
    tensor_free(b);
    tensor_free(ad);
    tensor_free(bd);
}

int main(int argc, char **argv)
{
    const int64_t n = 16 * 1024 * 1024, side = 4096;
    tensor_f32 *x, *m, *mt;
    double best;

    if (argc != 2) {
        fprintf(stderr, "usage: bench-core DIR\n");
        return 2;
    }
    x = tensor_f32_randn(TENDO_SHAPE(n), 1, tendo_cpu());
    m = tensor_f32_rand(TENDO_SHAPE(side, side), 2, tendo_cpu());
    mt = tensor_transpose(m, 0, 1);
    if (!x || !m || !mt) {
        fprintf(stderr, "bench-core: %s\n", tendo_error_message(tendo_last_error()));
        return 1;
    }
    save(argv[1], "x16m", x);
    save(argv[1], "m4096", m);

    TIME_BEST(best, tensor_to_f16(x), tensor_f16_free);
    printf("to_f16 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_to_bf16(x), tensor_bf16_free);
    printf("to_bf16 %.6f [16777216]\n", best);
    TIME_BEST(best, tensor_contiguous(mt), tensor_f32_free);
    printf("transpose_copy %.6f [4096,4096]\n", best);
    TIME_BEST(best, tensor_clone(x), tensor_f32_free);
    printf("clone %.6f [16777216]\n", best);
    bench_compute(argv[1], x, m);
    bench_kinds(argv[1], x);

    tensor_free(x);
    tensor_free(m);
    tensor_free(mt);
    return 0;
}
