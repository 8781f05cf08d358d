/* bench/ggml-skinny.c - the ggml side of bench/skinny.sh: times one
 * skinny product y = x W^T on ggml's CPU backend, at a given thread count.
 *
 *   ggml-skinny DTYPE M K N THREADS        DTYPE: f32 f16 bf16
 *
 * W is a ggml tensor of DTYPE with ne0 = K, ne1 = N (the nn.Linear [N, K]
 * layout, ggml's native weight layout), x is F32 with ne0 = K, ne1 = M,
 * and the graph holds ggml_mul_mat(W, x) (so y is F32 [M, N]; for f16 and
 * bf16 ggml converts x to DTYPE itself, inside the op).  Prints one line:
 *
 *   hot MS cold MS copies C
 *
 * "hot": the same W every call (whatever of it the caches hold);
 * "cold": calls rotate among C copies of W whose total size is over four
 * times the last-level cache (SKINNY_LLC_BYTES, else sysfs' index3, else
 * 32 MiB), so each call reads its W from memory.  MS is the median of the
 * per-call times of ~0.3 s of calls after a warm-up.
 *
 * Not part of tendo: bench/skinny.sh compiles it against a local ggml
 * build (see there).  Not a test. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml.h"
#include "ggml-cpu.h"

#include "skinny-common.h"

/* A cheap deterministic fill in [-1, 1). */
static void fill(float *p, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        p[i] = (float)((double)(s >> 11) * (1.0 / 4503599627370496.0) - 1.0);
    }
}

typedef struct {
    struct ggml_context *ctx;
    struct ggml_tensor *w, *y;
    struct ggml_cgraph *gf;
} copy_t;

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s f32|f16|bf16 M K N THREADS\n", argv[0]);
        return 2;
    }
    const char *dts = argv[1];
    int64_t M = atoll(argv[2]), K = atoll(argv[3]), N = atoll(argv[4]);
    int nth = atoi(argv[5]);
    enum ggml_type type;
    if (!strcmp(dts, "f32"))
        type = GGML_TYPE_F32;
    else if (!strcmp(dts, "f16"))
        type = GGML_TYPE_F16;
    else if (!strcmp(dts, "bf16"))
        type = GGML_TYPE_BF16;
    else {
        fprintf(stderr, "ggml-skinny: unknown dtype %s\n", dts);
        return 2;
    }
    ggml_cpu_init();

    size_t wbytes = ggml_row_size(type, K) * (size_t)N;
    long long llc = llc_bytes();
    int ncopies = (int)((4 * llc + (long long)wbytes - 1) / (long long)wbytes) + 1;
    if (ncopies < 2)
        ncopies = 2;

    /* x in its own context, shared by every copy's graph */
    struct ggml_init_params xp = {ggml_row_size(GGML_TYPE_F32, K) * M + 2 * ggml_tensor_overhead() + 4096,
                                  NULL, false};
    struct ggml_context *xctx = ggml_init(xp);
    struct ggml_tensor *x = ggml_new_tensor_2d(xctx, GGML_TYPE_F32, K, M);
    fill((float *)x->data, K * M, 1);

    /* W's values once, as float (rounded to DTYPE and back, for the check) */
    float *w32 = malloc((size_t)K * N * sizeof(float));
    if (!w32) {
        fprintf(stderr, "ggml-skinny: out of memory\n");
        return 1;
    }
    fill(w32, K * N, 2);

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(nth);
    struct ggml_threadpool *tp = ggml_threadpool_new(&tpp);
    copy_t *cp = calloc((size_t)ncopies, sizeof *cp);
    size_t work = 0;
    for (int c = 0; c < ncopies; c++) {
        struct ggml_init_params p = {wbytes + ggml_row_size(GGML_TYPE_F32, N) * M + ggml_graph_overhead() +
                                         4 * ggml_tensor_overhead() + 65536,
                                     NULL, false};
        cp[c].ctx = ggml_init(p);
        if (!cp[c].ctx) {
            fprintf(stderr, "ggml-skinny: ggml_init failed\n");
            return 1;
        }
        cp[c].w = ggml_new_tensor_2d(cp[c].ctx, type, K, N);
        if (c == 0) {
            if (type == GGML_TYPE_F32)
                memcpy(cp[0].w->data, w32, wbytes);
            else if (type == GGML_TYPE_F16) {
                ggml_fp32_to_fp16_row(w32, cp[0].w->data, K * N);
                ggml_fp16_to_fp32_row(cp[0].w->data, w32, K * N);
            } else {
                ggml_fp32_to_bf16_row(w32, cp[0].w->data, K * N);
                ggml_bf16_to_fp32_row(cp[0].w->data, w32, K * N);
            }
        } else
            memcpy(cp[c].w->data, cp[0].w->data, wbytes);
        cp[c].y = ggml_mul_mat(cp[c].ctx, cp[c].w, x);
        cp[c].gf = ggml_new_graph(cp[c].ctx);
        ggml_build_forward_expand(cp[c].gf, cp[c].y);
        struct ggml_cplan pl = ggml_graph_plan(cp[c].gf, nth, tp);
        if (pl.work_size > work)
            work = pl.work_size;
    }
    uint8_t *wdata = work ? malloc(work) : NULL;

#define COMPUTE(c)                                                            \
    do {                                                                      \
        struct ggml_cplan pl_ = ggml_graph_plan(cp[c].gf, nth, tp);           \
        pl_.work_data = wdata;                                                \
        if (ggml_graph_compute(cp[c].gf, &pl_) != GGML_STATUS_SUCCESS) {      \
            fprintf(stderr, "ggml-skinny: compute failed\n");                 \
            return 1;                                                         \
        }                                                                     \
    } while (0)

    /* a check that W, x and y are laid out as meant: y[m, n] = sum_k x[m, k] W[n, k] */
    COMPUTE(0);
    {
        int64_t ms[2] = {0, M - 1}, ns[3] = {0, N / 2, N - 1};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                double ref = 0, mag = 0;
                const float *xr = (const float *)x->data + ms[i] * K;
                for (int64_t k = 0; k < K; k++) {
                    ref += (double)xr[k] * w32[ns[j] * K + k];
                    mag += fabs((double)xr[k] * w32[ns[j] * K + k]);
                }
                double got = ((const float *)cp[0].y->data)[ms[i] * N + ns[j]];
                if (fabs(got - ref) > 2e-2 * mag + 1e-3) {
                    fprintf(stderr, "ggml-skinny: check failed at [%lld,%lld]: %g vs %g\n",
                            (long long)ms[i], (long long)ns[j], got, ref);
                    return 1;
                }
            }
    }
    free(w32);

    double res[2];
    for (int regime = 0; regime < 2; regime++) {
        int nc = regime ? ncopies : 1;
        int warm = 3; /* every copy was just written */
        for (int i = 0; i < warm; i++)
            COMPUTE(i % nc);
        int cap = 1 << 16, n = 0;
        double *t = malloc((size_t)cap * sizeof *t);
        double t0 = now();
        while (n < cap && (n < 5 || now() - t0 < 0.3)) {
            double a = now();
            COMPUTE(n % nc);
            t[n++] = now() - a;
        }
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        res[regime] = 1e3 * t[n / 2];
        free(t);
    }
    printf("hot %.4f cold %.4f copies %d\n", res[0], res[1], ncopies);

    for (int c = 0; c < ncopies; c++)
        ggml_free(cp[c].ctx);
    free(cp);
    free(wdata);
    ggml_free(xctx);
    ggml_threadpool_free(tp);
    return 0;
}
