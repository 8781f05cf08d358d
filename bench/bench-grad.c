/* bench/bench-grad.c - autograd's cost: forward + backward of the models of
 * t/interop/t-grad-torch.sh at bench sizes, attention's backward, and an
 * AdamW step.
 * bench/grad.py runs it beside PyTorch.  (A small op's fixed cost, grad
 * mode on as by default, is bench-kernels' add_out_1.)
 *
 *   bench-grad THREADS
 *
 * Prints "case seconds" lines (the best of several runs) and, for
 * attention, "case_peak bytes": the CPU pool's peak over one backward.
 */
#define _POSIX_C_SOURCE 200809L
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

static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "bench-grad: %s: %s\n", what, tendo_error_message(tendo_last_error()));
        exit(1);
    }
    return p;
}
#define M(x) must((void *)(x), #x)

static tensor_f32 *param(int ndim, const int64_t *shape, double scale, uint64_t seed)
{
    tensor_f32 *r = M(tensor_f32_randn(ndim, shape, seed, tendo_cpu()));
    tensor_f32 *p = M(tensor_mul_scalar(r, scale));

    tensor_free(r);
    tensor_set_requires_grad(p, true);
    return p;
}

#include "grad-models.h"

/* The models of t/lib/grad-models.h at bench sizes, for tensor type T (TO:
 * the conversion of a new f32 parameter): the best time of forward + backward. */
#define MODELS(T, TO)                                                                                         \
    GRAD_MODELS(T)                                                                                            \
    static T *cast_##T(tensor_f32 *p)                                                                         \
    {                                                                                                         \
        bool was = tendo_set_grad_enabled(false);                                                             \
        T *c = M(TO(p));                                                                                      \
                                                                                                              \
        tendo_set_grad_enabled(was);                                                                          \
        tensor_set_requires_grad(c, true);                                                                    \
        tensor_free(p);                                                                                       \
        return c;                                                                                             \
    }                                                                                                         \
    static double mlp_##T(void)                                                                               \
    {                                                                                                         \
        const int64_t B = 128, I = 256, H = 512, O = 256;                                                     \
        T *x = cast_##T(param(TENDO_SHAPE(B, I), 1, 1)), *y = cast_##T(param(TENDO_SHAPE(B, O), 1, 2));       \
        T *w[3] = {cast_##T(param(TENDO_SHAPE(I, H), 0.06, 3)), cast_##T(param(TENDO_SHAPE(H, H), 0.04, 4)),  \
                   cast_##T(param(TENDO_SHAPE(H, O), 0.04, 5))};                                              \
        T *b[3] = {cast_##T(param(TENDO_SHAPE(H), 0.1, 6)), cast_##T(param(TENDO_SHAPE(H), 0.1, 7)),          \
                   cast_##T(param(TENDO_SHAPE(O), 0.1, 8))};                                                  \
        double best = 1e30;                                                                                   \
                                                                                                              \
        tensor_set_requires_grad(x, false);                                                                   \
        tensor_set_requires_grad(y, false);                                                                   \
        for (int r = 0; r < 12; r++) {                                                                        \
            double t = now();                                                                                 \
            T *loss = mlp_loss_##T(x, y, w, b);                                                               \
                                                                                                              \
            if (tensor_backward(loss, NULL) != TENDO_OK)                                                      \
                must(NULL, "backward");                                                                       \
            t = now() - t;                                                                                    \
            best = r >= 2 && t < best ? t : best;                                                             \
            tensor_free(loss);                                                                                \
            for (int k = 0; k < 3; k++)                                                                       \
                tensor_zero_grad(w[k]), tensor_zero_grad(b[k]);                                               \
        }                                                                                                     \
        for (int k = 0; k < 3; k++)                                                                           \
            tensor_free(w[k]), tensor_free(b[k]);                                                             \
        tensor_free(x), tensor_free(y);                                                                       \
        return best;                                                                                          \
    }                                                                                                         \
    static double block_##T(void)                                                                             \
    {                                                                                                         \
        const int64_t B = 4, L = 128, D = 256, HQ = 8, HKV = 4, HD = 32, FF = 688, V = 512;                   \
        block_params_##T p = {cast_##T(param(TENDO_SHAPE(B, L, D), 1, 1)), cast_##T(param(TENDO_SHAPE(D), 0.1, 2)),  \
                       cast_##T(param(TENDO_SHAPE(D, HQ * HD), 0.06, 4)),                                     \
                       cast_##T(param(TENDO_SHAPE(D, HKV * HD), 0.06, 5)),                                    \
                       cast_##T(param(TENDO_SHAPE(D, HKV * HD), 0.06, 6)),                                    \
                       cast_##T(param(TENDO_SHAPE(HQ * HD, D), 0.06, 7)), cast_##T(param(TENDO_SHAPE(D), 0.1, 3)), \
                       cast_##T(param(TENDO_SHAPE(D, FF), 0.06, 8)), cast_##T(param(TENDO_SHAPE(D, FF), 0.06, 9)), \
                       cast_##T(param(TENDO_SHAPE(FF, D), 0.04, 10)), cast_##T(param(TENDO_SHAPE(D, V), 0.06, 11))}; \
        T *ps[] = {p.x, p.attn_norm, p.wq, p.wk, p.wv, p.wo, p.ffn_norm, p.w_gate, p.w_up, p.w_down, p.lm_head}; \
        tensor_i64 *pos = M(tensor_i64_arange(0, (double)L, 1, tendo_cpu()));                                 \
        tensor_i64 *tg = M(tensor_i64_arange(0, (double)(B * L), 1, tendo_cpu()));                            \
        tensor_i64 *tgm = M(tensor_remainder_scalar(tg, (double)V));                                          \
        double best = 1e30;                                                                                   \
                                                                                                              \
        tensor_set_requires_grad(p.x, false);                                                                 \
        for (int r = 0; r < 8; r++) {                                                                         \
            double t = now();                                                                                 \
            T *loss = block_loss_##T(&p, (int)HQ, (int)HKV, pos, tgm);                                        \
                                                                                                              \
            if (tensor_backward(loss, NULL) != TENDO_OK)                                                      \
                must(NULL, "backward");                                                                       \
            t = now() - t;                                                                                    \
            best = r >= 2 && t < best ? t : best;                                                             \
            tensor_free(loss);                                                                                \
            for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)                                               \
                tensor_zero_grad(ps[i]);                                                                      \
        }                                                                                                     \
        for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)                                                   \
            tensor_free(ps[i]);                                                                               \
        tensor_free(pos), tensor_free(tg), tensor_free(tgm);                                                  \
        return best;                                                                                          \
    }

static tensor_f32 *same_f32(tensor_f32 *p)
{
    return tensor_clone(p);
}
MODELS(tensor_f32, same_f32)
#ifdef TENDO_HAVE_BF16
MODELS(tensor_bf16, tensor_to_bf16)
#endif

/* Attention's backward alone (forward excluded) at [1, 8, L, 64], causal,
 * f32, and the pool's peak during it. */
static void attention_bwd(int64_t L)
{
    tensor_f32 *q = param(TENDO_SHAPE(1, 8, L, 64), 1, 1), *k = param(TENDO_SHAPE(1, 8, L, 64), 1, 2);
    tensor_f32 *v = param(TENDO_SHAPE(1, 8, L, 64), 1, 3), *w = param(TENDO_SHAPE(1, 8, L, 64), 1, 4);
    double best = 1e30;
    int64_t peak = 0;

    tensor_set_requires_grad(w, false);
    for (int r = 0; r < (L > 1024 ? 3 : 6); r++) {
        tensor_f32 *o = M(tensor_attention(q, k, v, NULL, true, 0.0));
        tendo_pool_stats s0 = tendo_pool_get_stats(tendo_cpu());
        double t;

        tendo_pool_reset_peak(tendo_cpu());
        t = now();
        if (tensor_backward(o, w) != TENDO_OK)
            must(NULL, "backward");
        t = now() - t;
        best = r >= 1 && t < best ? t : best;
        peak = tendo_pool_get_stats(tendo_cpu()).peak_bytes_in_use - s0.bytes_in_use;
        tensor_free(o);
        tensor_zero_grad(q), tensor_zero_grad(k), tensor_zero_grad(v);
    }
    printf("attention_bwd_%lld %.6f\n", (long long)L, best);
    printf("attention_bwd_%lld_peak %lld\n", (long long)L, (long long)peak);
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(w);
}

/* One AdamW step (tendo_optimizer_step: weight decay, clip excluded) over
 * 8 parameters of [512, 512] (2M elements) of type T, each with a
 * gradient. */
#define OPTIM(T, TO)                                                                                          \
    static double adamw_##T(void)                                                                             \
    {                                                                                                         \
        tendo_optimizer *o = M(tendo_adamw_new(1e-3, 0.9, 0.999, 1e-8, 0.01));                                \
        T *p[8];                                                                                              \
        double best = 1e30;                                                                                   \
                                                                                                              \
        for (int i = 0; i < 8; i++) {                                                                         \
            T *g = TO(param(TENDO_SHAPE(512, 512), 1e-3, 100 + (uint64_t)i));                                 \
            p[i] = TO(param(TENDO_SHAPE(512, 512), 0.05, 200 + (uint64_t)i));                                 \
            tensor_set_requires_grad(g, false);                                                               \
            if (tensor_backward(p[i], g) != TENDO_OK || tendo_optimizer_add(o, tensor_erase(p[i])) != TENDO_OK) \
                must(NULL, "a parameter");                                                                    \
            tensor_free(g);                                                                                   \
        }                                                                                                     \
        for (int r = 0; r < 12; r++) {                                                                        \
            double t = now();                                                                                 \
                                                                                                              \
            if (tendo_optimizer_step(o) != TENDO_OK)                                                          \
                must(NULL, "optimizer_step");                                                                 \
            t = now() - t;                                                                                    \
            best = r >= 2 && t < best ? t : best;                                                             \
        }                                                                                                     \
        tendo_optimizer_free(o);                                                                              \
        for (int i = 0; i < 8; i++)                                                                           \
            tensor_free(p[i]);                                                                                \
        return best;                                                                                          \
    }
OPTIM(tensor_f32, cast_tensor_f32)
#ifdef TENDO_HAVE_BF16
OPTIM(tensor_bf16, cast_tensor_bf16)
#endif

int main(int argc, char **argv)
{
    if (argc != 2 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: bench-grad THREADS\n");
        return 2;
    }
    tendo_set_num_threads(atoi(argv[1]));
    printf("mlp_f32 %.6f\n", mlp_tensor_f32());
    printf("block_f32 %.6f\n", block_tensor_f32());
#ifdef TENDO_HAVE_BF16
    printf("mlp_bf16 %.6f\n", mlp_tensor_bf16());
    printf("block_bf16 %.6f\n", block_tensor_bf16());
#endif
    attention_bwd(512);
    attention_bwd(2048);
    printf("adamw_f32 %.6f\n", adamw_tensor_f32());
#ifdef TENDO_HAVE_BF16
    printf("adamw_bf16 %.6f\n", adamw_tensor_bf16());
#endif
    return 0;
}
