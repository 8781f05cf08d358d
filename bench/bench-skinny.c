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
 * and prints "bw GB/S", the best of 10 passes, GB = 1e9 bytes (then
 * "forms rows GB/S stream GB/S", each form's best).  Not a
 * test.  The passes take two forms in turn, as no one form reads fastest
 * on every machine: the way the skinny kernels read a weight, each
 * thread's share in blocks of 8 rows of 16 KiB read side by side, 8
 * streams in flight, each fetched 512 bytes ahead; and one plain stream a
 * thread, nothing fetched ahead (AVX-512 or AVX2 loads, chosen at run
 * time), from a buffer advised into huge pages as tendo's storage is.  On
 * an AMD EPYC (Zen 3) VM the plain stream read 7-14 GB/s at one thread,
 * the rows 15-19, while the products streamed their weight at 19-21
 * (2026-12-01); on a Zen 4 VM the plain stream read 1.21-1.32x as fast
 * as the rows at 1 and 2 threads, and the rows' figure alone had put the
 * products by transposed weights at up to 133% of it (2026-12-03). */
#define _DEFAULT_SOURCE /* madvise */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

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
    bool stream; /* one stream, unprefetched, instead of rows side by side */
    float sum;
} chunk_t;

/* The rows of a block the sum reads side by side, and their length. */
enum { SUM_ROWS = 8, SUM_ROW = 4096 };

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SUM_X86 1
#else
#define SUM_X86 0
#endif

#if SUM_X86
/* The sum (in some order) of blocks * SUM_ROWS * SUM_ROW floats at p:
 * each block's rows read in step, 64 bytes of each in turn, each fetched
 * 512 bytes ahead.  One per instruction set, as the skinny kernels are. */
__attribute__((target("avx512f"))) static float sum_blocks_avx512(const float *p, size_t blocks)
{
    __m512 acc[SUM_ROWS];
    _Pragma("GCC unroll 8") for (int r = 0; r < SUM_ROWS; r++) acc[r] = _mm512_setzero_ps();
    for (size_t b = 0; b < blocks; b++, p += SUM_ROWS * SUM_ROW)
        for (size_t j = 0; j < SUM_ROW; j += 16)
            _Pragma("GCC unroll 8") for (int r = 0; r < SUM_ROWS; r++) {
                const float *q = p + (size_t)r * SUM_ROW + j;
                _mm_prefetch((const char *)(q + 128), _MM_HINT_T0);
                acc[r] = _mm512_add_ps(acc[r], _mm512_loadu_ps(q));
            }
    _Pragma("GCC unroll 8") for (int r = 1; r < SUM_ROWS; r++) acc[0] = _mm512_add_ps(acc[0], acc[r]);
    return _mm512_reduce_add_ps(acc[0]);
}

/* The sum of v's lanes. */
__attribute__((target("avx2"))) static float sum_lanes_avx2(__m256 v)
{
    float lane[8], s = 0;
    _mm256_storeu_ps(lane, v);
    for (int i = 0; i < 8; i++)
        s += lane[i];
    return s;
}

/* The sum (in some order) of n floats at p, a multiple of 64, read in
 * order with nothing asked for ahead. */
__attribute__((target("avx512f"))) static float sum_stream_avx512(const float *p, size_t n)
{
    __m512 acc[4];
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 64)
        _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] = _mm512_add_ps(acc[r], _mm512_loadu_ps(p + i + 16 * r));
    acc[0] = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
    return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2"))) static float sum_stream_avx2(const float *p, size_t n)
{
    __m256 acc[4];
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 64)
        _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) acc[r] = _mm256_add_ps(
            acc[r], _mm256_add_ps(_mm256_loadu_ps(p + i + 16 * r), _mm256_loadu_ps(p + i + 16 * r + 8)));
    acc[0] = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    return sum_lanes_avx2(acc[0]);
}

__attribute__((target("avx2"))) static float sum_blocks_avx2(const float *p, size_t blocks)
{
    __m256 acc[SUM_ROWS];
    _Pragma("GCC unroll 8") for (int r = 0; r < SUM_ROWS; r++) acc[r] = _mm256_setzero_ps();
    for (size_t b = 0; b < blocks; b++, p += SUM_ROWS * SUM_ROW)
        for (size_t j = 0; j < SUM_ROW; j += 16)
            _Pragma("GCC unroll 8") for (int r = 0; r < SUM_ROWS; r++) {
                const float *q = p + (size_t)r * SUM_ROW + j;
                _mm_prefetch((const char *)(q + 128), _MM_HINT_T0);
                acc[r] = _mm256_add_ps(acc[r], _mm256_add_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(q + 8)));
            }
    _Pragma("GCC unroll 8") for (int r = 1; r < SUM_ROWS; r++) acc[0] = _mm256_add_ps(acc[0], acc[r]);
    return sum_lanes_avx2(acc[0]);
}
#endif

/* The sum of the n floats at p, in blocks of SUM_ROWS rows of SUM_ROW
 * floats, each block's rows read in step; or, stream, in one stream. */
static float sum_floats(const float *p, size_t n, bool stream)
{
    size_t blocks = n / (SUM_ROWS * SUM_ROW), i = blocks * SUM_ROWS * SUM_ROW;
    float s = 0;
#if SUM_X86
    if (__builtin_cpu_supports("avx512f"))
        s = stream ? sum_stream_avx512(p, i) : sum_blocks_avx512(p, blocks);
    else if (__builtin_cpu_supports("avx2"))
        s = stream ? sum_stream_avx2(p, i) : sum_blocks_avx2(p, blocks);
    else
        i = 0;
#else
    i = 0;
#endif
    for (; i < n; i++)
        s += p[i];
    return s;
}

static void *sum_chunk(void *arg)
{
    chunk_t *c = arg;
    c->sum = sum_floats(c->p, c->n, c->stream);
    return NULL;
}

static int bandwidth(int nth)
{
    size_t n = (size_t)1 << 28, huge = (size_t)1 << 21; /* 1 GiB of floats, in 2 MiB pages where it can */
    float *p = aligned_alloc(huge, n * sizeof *p);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p)
        (void)madvise(p, n * sizeof *p, MADV_HUGEPAGE);
#endif
    if (!p || nth < 1 || nth > 64) {
        fprintf(stderr, "bench-skinny: bandwidth: bad thread count or out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(i & 7);
    double best[2] = {1e30, 1e30}, total = 0;
    for (int pass = 0; pass < 12; pass++) { /* the two forms in turn */
        pthread_t th[64];
        chunk_t ch[64];
        double t = now();
        for (int k = 0; k < nth; k++) {
            ch[k].p = p + n / nth * k;
            ch[k].n = k == nth - 1 ? n - n / nth * k : n / nth;
            ch[k].stream = pass % 2;
            if (k)
                pthread_create(&th[k], NULL, sum_chunk, &ch[k]);
        }
        sum_chunk(&ch[0]);
        for (int k = 1; k < nth; k++)
            pthread_join(th[k], NULL);
        t = now() - t;
        for (int k = 0; k < nth; k++)
            total += ch[k].sum;
        if (pass > 1 && t < best[pass % 2]) /* passes 0 and 1 warm up */
            best[pass % 2] = t;
    }
    printf("bw %.3f\n", (double)(n * sizeof *p) / (best[0] < best[1] ? best[0] : best[1]) / 1e9);
    printf("forms rows %.3f stream %.3f\n", (double)(n * sizeof *p) / best[0] / 1e9,
           (double)(n * sizeof *p) / best[1] / 1e9);
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
