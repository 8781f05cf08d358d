/* bench/bench-gpu.c - tendo on cuda:0, one line per case, in the format
 * bench/gpu.py prints for PyTorch so the two can be read side by side:
 *   CASE  time_us  [GB/s or TFLOP/s]
 * Each case is warmed up, then timed over several runs ended by
 * tendo_sync.  Cases follow issue 4: add bf16/f32 over 2^28 elements (and
 * a device-to-device clone for the copy bound), softmax and layer_norm of
 * [8192,8192] bf16, sum over each dim of [8192,8192] f32, matmul bf16
 * 8192^3 and f32 4096^3, the decode-step products of issue 28 (one row
 * times a [4096, 4096] or [4096, 11008] weight, stored as nn.Linear's
 * [out, in] and read through its transposed view, or stored [in, out];
 * matmul_out into a result made once; GB/s counts the weight), the host
 * overhead of a 1-element add, and 4 MiB pool alloc+free. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tendo.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

#define D tendo_cuda(0)
#define TIME(name, reps, work_bytes, flops, stmt)                                                \
    do {                                                                                         \
        double t0;                                                                               \
        stmt;                                                                                    \
        tendo_sync(D);                                                                           \
        t0 = now_us();                                                                           \
        for (int r_ = 0; r_ < (reps); r_++) {                                                   \
            stmt;                                                                                \
        }                                                                                        \
        tendo_sync(D);                                                                           \
        double us_ = (now_us() - t0) / (reps);                                                   \
        if ((flops) > 0)                                                                         \
            printf("%-28s %12.1f us %10.1f TFLOP/s\n", name, us_, (flops) / us_ / 1e6);         \
        else if ((work_bytes) > 0)                                                               \
            printf("%-28s %12.1f us %10.1f GB/s\n", name, us_, (work_bytes) / us_ / 1e3);        \
        else                                                                                     \
            printf("%-28s %12.3f us\n", name, us_);                                              \
    } while (0)

int main(void)
{
    const int64_t big = (int64_t)1 << 28, n = 8192;

    if (!tendo_cuda_available()) {
        printf("no CUDA device\n");
        return 0;
    }
    {
        tensor_f32 *a = tensor_f32_rand(TENDO_SHAPE(big), 1, D), *b = tensor_f32_rand(TENDO_SHAPE(big), 2, D);
        TIME("add f32 2^28", 10, 3.0 * 4 * big, 0, tensor_free(tensor_add(a, b)));
        TIME("clone (D2D) f32 2^28", 10, 2.0 * 4 * big, 0, tensor_free(tensor_clone(a)));
        tensor_free(a), tensor_free(b);
    }
    {
        tensor_bf16 *a = tensor_bf16_rand(TENDO_SHAPE(big), 1, D), *b = tensor_bf16_rand(TENDO_SHAPE(big), 2, D);
        TIME("add bf16 2^28", 10, 3.0 * 2 * big, 0, tensor_free(tensor_add(a, b)));
        TIME("clone (D2D) bf16 2^28", 10, 2.0 * 2 * big, 0, tensor_free(tensor_clone(a)));
        tensor_free(a), tensor_free(b);
    }
    {
        tensor_bf16 *x = tensor_bf16_randn(TENDO_SHAPE(n, n), 3, D);
        TIME("softmax bf16 [8192,8192]", 10, 2.0 * 2 * n * n, 0, tensor_free(tensor_softmax(x, -1)));
        TIME("layer_norm bf16 [8192,8192]", 10, 2.0 * 2 * n * n, 0, tensor_free(tensor_layer_norm(x, NULL, NULL, 1e-5)));
        tensor_free(x);
    }
    {
        tensor_f32 *x = tensor_f32_randn(TENDO_SHAPE(n, n), 4, D);
        TIME("sum dim0 f32 [8192,8192]", 10, 4.0 * n * n, 0, tensor_free(tensor_sum(x, 0, false)));
        TIME("sum dim1 f32 [8192,8192]", 10, 4.0 * n * n, 0, tensor_free(tensor_sum(x, 1, false)));
        tensor_free(x);
    }
    {
        tensor_bf16 *a = tensor_bf16_randn(TENDO_SHAPE(n, n), 5, D), *b = tensor_bf16_randn(TENDO_SHAPE(n, n), 6, D);
        TIME("matmul bf16 8192^3", 5, 0, 2.0 * n * n * n, tensor_free(tensor_matmul(a, b)));
        tensor_free(a), tensor_free(b);
    }
    {
        const int64_t m = 4096;
        tensor_f32 *a = tensor_f32_randn(TENDO_SHAPE(m, m), 7, D), *b = tensor_f32_randn(TENDO_SHAPE(m, m), 8, D);
        TIME("matmul f32 4096^3", 5, 0, 2.0 * m * m * m, tensor_free(tensor_matmul(a, b)));
        tendo_set_allow_tf32(true);
        TIME("matmul f32 4096^3 tf32", 5, 0, 2.0 * m * m * m, tensor_free(tensor_matmul(a, b)));
        tendo_set_allow_tf32(false);
        tensor_free(a), tensor_free(b);
    }
    {
        /* [1, k] x weight w [k, n]: the transposed view of the stored [n, k], or the stored [k, n] */
        static const struct { const char *name; int64_t n; bool stored_nk; } mv[] = {
            {"matvec bf16 4096x4096 [n,k]^T", 4096, true},
            {"matvec bf16 4096x11008 [n,k]^T", 11008, true},
            {"matvec bf16 4096x11008 [k,n]", 11008, false},
        };
        const int64_t k = 4096;
        for (size_t i = 0; i < sizeof mv / sizeof *mv; i++) {
            tensor_bf16 *x = tensor_bf16_randn(TENDO_SHAPE(1, k), 9, D), *y = tensor_bf16_empty(TENDO_SHAPE(1, mv[i].n), D);
            tensor_bf16 *stored = mv[i].stored_nk ? tensor_bf16_randn(TENDO_SHAPE(mv[i].n, k), 10, D)
                                                  : tensor_bf16_randn(TENDO_SHAPE(k, mv[i].n), 10, D);
            tensor_bf16 *w = mv[i].stored_nk ? tensor_transpose(stored, 0, 1) : stored;
            TIME(mv[i].name, 200, 2.0 * k * mv[i].n, 0, tensor_matmul_out(y, x, w));
            if (w != stored)
                tensor_free(w);
            tensor_free(stored), tensor_free(x), tensor_free(y);
        }
        {
            tensor_f32 *x = tensor_f32_randn(TENDO_SHAPE(1, k), 9, D), *y = tensor_f32_empty(TENDO_SHAPE(1, 11008), D);
            tensor_f32 *stored = tensor_f32_randn(TENDO_SHAPE(11008, k), 10, D), *w = tensor_transpose(stored, 0, 1);
            TIME("matvec f32 4096x11008 [n,k]^T", 200, 4.0 * k * 11008, 0, tensor_matmul_out(y, x, w));
            tensor_free(w), tensor_free(stored), tensor_free(x), tensor_free(y);
        }
    }
    {
        tensor_f32 *a = tensor_f32_ones(TENDO_SHAPE(1), D);
        TIME("add 1 element (host us)", 10000, 0, 0, tensor_free(tensor_add(a, a)));
        tensor_free(a);
        TIME("pool 4 MiB alloc+free", 10000, 0, 0, tensor_free(tensor_f32_empty(TENDO_SHAPE(1 << 20), D)));
    }
    return 0;
}
