/* bench/bench-skinny.c - the tendo side of bench/skinny.sh: times one
 * skinny product x @ W at a given thread count, or the machine's read
 * bandwidth.
 *
 *   bench-skinny DTYPE M K N THREADS LAYOUT    DTYPE: f32 f16 bf16; LAYOUT: kn nkT
 *   bench-skinny --bandwidth THREADS
 *
 * x is a contiguous [M, K] tensor of DTYPE.  W is "kn", a contiguous
 * [K, N] tensor, or "nkT", a contiguous [N, K] tensor (nn.Linear's
 * layout) viewed transposed to [K, N] by tensor_transpose.  Each call is
 * tensor_matmul(x, W), whose result is freed, or, where <tendo.h> defines
 * tensor_matmul_out, tensor_matmul_out into one preallocated [M, N].  With
 * SKINNY_PREPACK=1 in the environment every copy of W is first given to
 * tensor_prepack (a weight packed once, as ggml repacks at load; the call
 * is then reported as "...+prepack").  Prints one line:
 *
 *   hot MS cold MS copies C call matmul|matmul_out
 *
 * "hot": the same W every call (whatever of it the caches hold); "cold":
 * calls rotate among C copies of W whose total size is over four times the
 * last-level cache (SKINNY_LLC_BYTES, else sysfs' index3, else 32 MiB),
 * so each call reads its W from memory.  MS is the median of the per-call
 * times of ~0.3 s of calls after a warm-up.  bench/ggml-skinny.c measures
 * ggml the same way.
 *
 * --bandwidth sums a 1 GiB buffer of floats split among THREADS pthreads
 * (GCC vector extensions, cloned for AVX-512/AVX2, so -O2 is enough) and
 * prints "bw GB/S", the best of 5 passes, GB = 1e9 bytes.  Not a test. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tendo.h>

#include "skinny-common.h"

static void die(const char *what)
{
    fprintf(stderr, "bench-skinny: %s: %s\n", what, tendo_error_message(tendo_last_error()));
    exit(1);
}

/* ---- read bandwidth --------------------------------------------------- */

typedef struct {
    const float *p;
    size_t n;
    float sum;
} chunk_t;

/* GCC's vector extensions, one clone per ISA (the widest loads read
 * fastest here), so the file needs no -march of its own. */
#if defined(__GNUC__) && defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 6)
#define SUM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SUM_CLONES
#endif
#if defined(__GNUC__)
typedef float v16f __attribute__((vector_size(64)));
#endif

SUM_CLONES static float sum_floats(const float *p, size_t n)
{
    size_t i = 0;
    float s = 0;
#if defined(__GNUC__)
    v16f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (; i + 64 <= n; i += 64) {
        v16f b0, b1, b2, b3;
        memcpy(&b0, p + i, 64);
        memcpy(&b1, p + i + 16, 64);
        memcpy(&b2, p + i + 32, 64);
        memcpy(&b3, p + i + 48, 64);
        a0 += b0; a1 += b1; a2 += b2; a3 += b3;
    }
    a0 += a1 + a2 + a3;
    for (int j = 0; j < 16; j++)
        s += a0[j];
#endif
    for (; i < n; i++)
        s += p[i];
    return s;
}

static void *sum_chunk(void *arg)
{
    chunk_t *c = arg;
    c->sum = sum_floats(c->p, c->n);
    return NULL;
}

static int bandwidth(int nth)
{
    size_t n = (size_t)1 << 28; /* 1 GiB of floats */
    float *p = malloc(n * sizeof *p);
    if (!p || nth < 1 || nth > 64) {
        fprintf(stderr, "bench-skinny: bandwidth: bad thread count or out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(i & 7);
    double best = 1e30, total = 0;
    for (int pass = 0; pass < 6; pass++) {
        pthread_t th[64];
        chunk_t ch[64];
        double t = now();
        for (int k = 0; k < nth; k++) {
            ch[k].p = p + n / nth * k;
            ch[k].n = k == nth - 1 ? n - n / nth * k : n / nth;
            if (k)
                pthread_create(&th[k], NULL, sum_chunk, &ch[k]);
        }
        sum_chunk(&ch[0]);
        for (int k = 1; k < nth; k++)
            pthread_join(th[k], NULL);
        t = now() - t;
        for (int k = 0; k < nth; k++)
            total += ch[k].sum;
        if (pass && t < best) /* pass 0 warms up */
            best = t;
    }
    printf("bw %.3f\n", (double)(n * sizeof *p) / best / 1e9);
    if (total < 0) /* keeps the sums live */
        printf("%g\n", total);
    free(p);
    return 0;
}

/* ---- matmul ----------------------------------------------------------- */

/* One median per regime, in res[0] (hot) and res[1] (cold). */
#ifdef tensor_matmul_out
#define CALL(dt, x, w, out)                                            \
    do {                                                               \
        if (tensor_matmul_out(out, x, w) != TENDO_OK)                  \
            die("tensor_matmul_out");                                  \
    } while (0)
#else
#define CALL(dt, x, w, out)                                            \
    do {                                                               \
        tensor_##dt *y_ = tensor_matmul(x, w);                         \
        if (!y_)                                                       \
            die("tensor_matmul");                                      \
        tensor_free(y_);                                               \
    } while (0)
#endif

static int prepacked;

#ifdef tensor_prepack
#define PREPACK(w)                                                     \
    do {                                                               \
        if (prepacked && tensor_prepack(w) != TENDO_OK)                \
            die("tensor_prepack");                                     \
    } while (0)
#else
#define PREPACK(w) (void)(w)
#endif

#define DEFINE_RUN(dt)                                                                        \
    static void run_##dt(int64_t M, int64_t K, int64_t N, int nkT, int ncopies, double *res) \
    {                                                                                         \
        tensor_##dt *x = tensor_##dt##_randn(TENDO_SHAPE(M, K), 1, tendo_cpu());              \
        tensor_##dt *base = nkT ? tensor_##dt##_randn(TENDO_SHAPE(N, K), 2, tendo_cpu())      \
                                : tensor_##dt##_randn(TENDO_SHAPE(K, N), 2, tendo_cpu());     \
        tensor_##dt *out = tensor_##dt##_empty(TENDO_SHAPE(M, N), tendo_cpu());               \
        tensor_##dt **own = calloc((size_t)ncopies, sizeof *own);                            \
        tensor_##dt **w = calloc((size_t)ncopies, sizeof *w);                                \
        if (!x || !base || !out || !own || !w)                                                \
            die("setup");                                                                     \
        (void)out;                                                                            \
        for (int c = 0; c < ncopies; c++) {                                                   \
            own[c] = c ? tensor_clone(base) : base;                                           \
            w[c] = nkT ? tensor_transpose(own[c], 0, 1) : own[c];                             \
            if (!own[c] || !w[c])                                                             \
                die("copies");                                                                \
            PREPACK(w[c]);                                                                    \
        }                                                                                     \
        for (int regime = 0; regime < 2; regime++) {                                          \
            int nc = regime ? ncopies : 1;                                                    \
            int warm = 3; /* every copy was just written */                                   \
            for (int i = 0; i < warm; i++)                                                    \
                CALL(dt, x, w[i % nc], out);                                                  \
            int cap = 1 << 16, n = 0;                                                         \
            double *t = malloc((size_t)cap * sizeof *t);                                      \
            double t0 = now();                                                                \
            while (n < cap && (n < 5 || now() - t0 < 0.3)) {                                  \
                double a = now();                                                             \
                CALL(dt, x, w[n % nc], out);                                                  \
                t[n++] = now() - a;                                                           \
            }                                                                                 \
            qsort(t, (size_t)n, sizeof *t, cmp_double);                                       \
            res[regime] = 1e3 * t[n / 2];                                                     \
            free(t);                                                                          \
        }                                                                                     \
        for (int c = 0; c < ncopies; c++) {                                                   \
            if (w[c] != own[c])                                                               \
                tensor_free(w[c]);                                                            \
            tensor_free(own[c]);                                                              \
        }                                                                                     \
        free(own);                                                                            \
        free(w);                                                                              \
        tensor_free(out);                                                                     \
        tensor_free(x);                                                                       \
    }

DEFINE_RUN(f32)
DEFINE_RUN(f16)
DEFINE_RUN(bf16)

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--bandwidth"))
        return bandwidth(atoi(argv[2]));
    if (argc != 7) {
        fprintf(stderr, "usage: %s f32|f16|bf16 M K N THREADS kn|nkT\n"
                        "       %s --bandwidth THREADS\n", argv[0], argv[0]);
        return 2;
    }
    const char *dts = argv[1];
    int64_t M = atoll(argv[2]), K = atoll(argv[3]), N = atoll(argv[4]);
    int nth = atoi(argv[5]);
    int nkT = !strcmp(argv[6], "nkT");
    if (!nkT && strcmp(argv[6], "kn")) {
        fprintf(stderr, "bench-skinny: layout is kn or nkT, not %s\n", argv[6]);
        return 2;
    }
    int esize = !strcmp(dts, "f32") ? 4 : 2;
    long long wbytes = (long long)K * N * esize;
    int ncopies = (int)((4 * llc_bytes() + wbytes - 1) / wbytes) + 1;
    if (ncopies < 2)
        ncopies = 2;
    tendo_set_num_threads(nth);
#ifdef tensor_prepack
    prepacked = getenv("SKINNY_PREPACK") && !strcmp(getenv("SKINNY_PREPACK"), "1");
#endif
    double res[2];
    if (!strcmp(dts, "f32"))
        run_f32(M, K, N, nkT, ncopies, res);
    else if (!strcmp(dts, "f16"))
        run_f16(M, K, N, nkT, ncopies, res);
    else if (!strcmp(dts, "bf16"))
        run_bf16(M, K, N, nkT, ncopies, res);
    else {
        fprintf(stderr, "bench-skinny: unknown dtype %s\n", dts);
        return 2;
    }
#ifdef tensor_matmul_out
    const char *call = "matmul_out";
#else
    const char *call = "matmul";
#endif
    printf("hot %.4f cold %.4f copies %d call %s%s\n", res[0], res[1], ncopies, call, prepacked ? "+prepack" : "");
    return 0;
}
