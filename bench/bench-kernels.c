/* bench/bench-kernels.c - times tendo's GEMMs, attention and the fixed
 * cost of a small op, at a given thread count.
 *
 *   bench-kernels THREADS
 *
 * i8 GEMM is matmul_i32 (int8 products summed in int32).
 * Prints one line per case: "<name> <best seconds>".  The inputs are
 * random normal; bench/kernels-torch.py runs the same cases in PyTorch (and
 * numpy for f32 GEMM) with the same thread count and prints the ratios.
 * Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tendo.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best wall time of reps runs of expr, whose result free_fn frees. */
#define BEST(best, reps, expr, free_fn)              \
    do {                                             \
        best = 1e30;                                 \
        for (int r_ = 0; r_ < (reps); r_++) {        \
            double t_ = now();                       \
            void *o_ = (expr);                       \
            t_ = now() - t_;                         \
            if (!o_) {                               \
                fprintf(stderr, "bench-kernels: %s\n", tendo_error_message(tendo_last_error())); \
                exit(1);                             \
            }                                        \
            free_fn(o_);                             \
            best = t_ < best ? t_ : best;            \
        }                                            \
    } while (0)

static void free_any(void *t) { tendo_tensor_free(t); }

static void gemms(void)
{
    static const int sizes[] = {512, 1024, 2048};
    double best;

    for (int i = 0; i < 3; i++) {
        int64_t n = sizes[i];
        tensor_f32 *a = tensor_f32_randn(TENDO_SHAPE(n, n), 1, tendo_cpu());
        tensor_f32 *b = tensor_f32_randn(TENDO_SHAPE(n, n), 2, tendo_cpu());
        tensor_bf16 *ab = tensor_to_bf16(a), *bb = tensor_to_bf16(b);
        tensor_f16 *ah = tensor_to_f16(a), *bh = tensor_to_f16(b);
        tensor_i8 *ai = tensor_to_i8(a), *bi = tensor_to_i8(b);
        int reps = n >= 2048 ? 3 : 10;

        BEST(best, reps, tensor_matmul(ab, bb), free_any);
        printf("matmul_bf16_%lld %.6f\n", (long long)n, best);
        BEST(best, reps, tensor_matmul(ah, bh), free_any);
        printf("matmul_f16_%lld %.6f\n", (long long)n, best);
        BEST(best, reps, tensor_matmul(a, b), free_any);
        printf("matmul_f32_%lld %.6f\n", (long long)n, best);
        BEST(best, reps, tensor_matmul_i32(ai, bi), free_any);
        printf("matmul_i8_%lld %.6f\n", (long long)n, best);
        tensor_free(a);
        tensor_free(b);
        tensor_free(ab);
        tensor_free(bb);
        tensor_free(ah);
        tensor_free(bh);
        tensor_free(ai);
        tensor_free(bi);
    }
}

static void attention(void)
{
    tensor_f32 *q = tensor_f32_randn(TENDO_SHAPE(10, 12, 54, 32), 3, tendo_cpu());
    tensor_f32 *kt = tensor_f32_randn(TENDO_SHAPE(10, 12, 32, 54), 4, tendo_cpu());
    tensor_f32 *Q = tensor_f32_randn(TENDO_SHAPE(1, 8, 2048, 64), 5, tendo_cpu());
    tensor_f32 *K = tensor_f32_randn(TENDO_SHAPE(1, 8, 2048, 64), 6, tendo_cpu());
    tensor_f32 *V = tensor_f32_randn(TENDO_SHAPE(1, 8, 2048, 64), 7, tendo_cpu());
    double best;

    BEST(best, 50, tensor_matmul(q, kt), free_any);
    printf("bmm_attn_f32 %.6f\n", best);
    BEST(best, 3, tensor_attention(Q, K, V, NULL, false, 0), free_any);
    printf("attention_2048 %.6f\n", best);
    BEST(best, 3, tensor_attention(Q, K, V, NULL, true, 0), free_any);
    printf("attention_2048_causal %.6f\n", best);
    tensor_free(q);
    tensor_free(kt);
    tensor_free(Q);
    tensor_free(K);
    tensor_free(V);
}

/* The fixed cost of one op: a 1-element add_out, many times. */
static void small_op(void)
{
    tensor_f32 *a = tensor_f32_ones(TENDO_SHAPE(1), tendo_cpu()), *o = tensor_f32_empty(TENDO_SHAPE(1), tendo_cpu());
    double best = 1e30;

    for (int r = 0; r < 10; r++) {
        double t = now();
        for (int i = 0; i < 100000; i++)
            tensor_add_out(o, a, a);
        t = (now() - t) / 100000;
        best = t < best ? t : best;
    }
    printf("add_out_1 %.9f\n", best);
    tensor_free(a);
    tensor_free(o);
}

int main(int argc, char **argv)
{
    if (argc != 2 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: bench-kernels THREADS\n");
        return 2;
    }
    tendo_set_num_threads(atoi(argv[1]));
    gemms();
    attention();
    small_op();
    return 0;
}
