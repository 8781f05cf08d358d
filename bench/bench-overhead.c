/* bench/bench-overhead.c - the fixed cost of tendo's ops: each called many
 * times on tensors of one element (or a few), where the work itself is
 * nothing and what is timed is the argument checks, the shape and
 * iteration setup, the allocation of a result (pool), and the event
 * sites with no observer.  A second column runs the same with one
 * observer that does nothing, the cost of the events when watched.
 *
 *   bench-overhead [THREADS]       (default 1)
 *
 * Prints a table: op, ns per call, ns per call observed.  Best of 5 runs
 * of N calls each; CPU time of the process, so a busy machine inflates it
 * less than wall time would.  Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tendo.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void watch(const tendo_event *e, void *user)
{
    (void)e;
    ++*(long *)user;
}

/* The tensors every case reads, made once. */
static tensor_f32 *one, *out1, *row8, *sq4, *mat4, *q, *k, *v;
static tensor_bool *mask1;
static tensor_i64 *idx1, *pos;
static tensor_f16 *half1;

static void setup(void)
{
    one = tensor_f32_ones(TENDO_SHAPE(1), tendo_cpu());
    out1 = tensor_f32_empty(TENDO_SHAPE(1), tendo_cpu());
    row8 = tensor_f32_randn(TENDO_SHAPE(1, 8), 1, tendo_cpu());
    sq4 = tensor_f32_randn(TENDO_SHAPE(4, 4), 2, tendo_cpu());
    mat4 = tensor_f32_randn(TENDO_SHAPE(4, 4), 3, tendo_cpu());
    q = tensor_f32_randn(TENDO_SHAPE(1, 1, 1, 8), 4, tendo_cpu());
    k = tensor_f32_randn(TENDO_SHAPE(1, 1, 4, 8), 5, tendo_cpu());
    v = tensor_f32_randn(TENDO_SHAPE(1, 1, 4, 8), 6, tendo_cpu());
    mask1 = tensor_gt_scalar(one, 0.5);
    idx1 = tensor_i64_zeros(TENDO_SHAPE(1), tendo_cpu());
    pos = tensor_i64_zeros(TENDO_SHAPE(1), tendo_cpu());
    half1 = tensor_to_f16(one);
    if (!one || !out1 || !row8 || !sq4 || !mat4 || !q || !k || !v || !mask1 || !idx1 || !pos || !half1) {
        fprintf(stderr, "bench-overhead: %s\n", tendo_error_message(tendo_last_error()));
        exit(1);
    }
}

/* One call of each case; false on an error. */
typedef bool (*one_call)(void);

#define NEW(expr)                    \
    do {                             \
        void *r_ = (expr);           \
        if (!r_)                     \
            return false;            \
        tendo_tensor_free(r_);       \
    } while (0)

static bool c_add_out(void) { return tensor_add_out(out1, one, one) == TENDO_OK; }
static bool c_exp_out(void) { return tensor_exp_out(out1, one) == TENDO_OK; }
static bool c_add(void) { NEW(tensor_add(one, one)); return true; }
static bool c_mul_scalar(void) { NEW(tensor_mul_scalar(one, 2.0)); return true; }
static bool c_exp(void) { NEW(tensor_exp(one)); return true; }
static bool c_gt(void) { NEW(tensor_gt(one, one)); return true; }
static bool c_where(void) { NEW(tensor_where(mask1, one, one)); return true; }
static bool c_to_f16(void) { NEW(tensor_to_f16(one)); return true; }
static bool c_to_f32(void) { NEW(tensor_to_f32(half1)); return true; }
static bool c_sum(void) { NEW(tensor_sum(row8, 1, false)); return true; }
static bool c_sum_all(void) { NEW(tensor_sum_all(one)); return true; }
static bool c_argmax(void) { NEW(tensor_argmax(row8, 1, false)); return true; }
static bool c_softmax(void) { NEW(tensor_softmax(row8, 1)); return true; }
static bool c_rms_norm(void) { NEW(tensor_rms_norm(row8, NULL, 1e-6)); return true; }
static bool c_matmul(void) { NEW(tensor_matmul(sq4, mat4)); return true; }
static bool c_transpose(void) { NEW(tensor_transpose(sq4, 0, 1)); return true; }
static bool c_reshape(void) { NEW(tensor_reshape(sq4, 1, (const int64_t[]){16})); return true; }
static bool c_contiguous(void) { NEW(tensor_contiguous(sq4)); return true; }
static bool c_index_select(void) { NEW(tensor_index_select(sq4, 0, idx1)); return true; }
static bool c_cat(void)
{
    const tensor_f32 *two[2] = {one, one};

    NEW(tensor_cat(two, 2, 0));
    return true;
}
static bool c_copy_into(void) { return tensor_copy_into(out1, one) == TENDO_OK; }
static bool c_rope(void) { NEW(tensor_rope(q, pos, 8, 10000.0, false)); return true; }
static bool c_attention(void) { NEW(tensor_attention(q, k, v, NULL, false, 0.0)); return true; }
static bool c_empty(void) { NEW(tensor_f32_empty(TENDO_SHAPE(1), tendo_cpu())); return true; }

static const struct {
    const char *name;
    one_call call;
} cases[] = {
    {"add_out [1]", c_add_out},
    {"exp_out [1]", c_exp_out},
    {"copy_into [1]", c_copy_into},
    {"empty [1]", c_empty},
    {"add [1]", c_add},
    {"mul_scalar [1]", c_mul_scalar},
    {"exp [1]", c_exp},
    {"gt [1] -> bool", c_gt},
    {"where [1]", c_where},
    {"to_f16 [1]", c_to_f16},
    {"to_f32 [1] f16", c_to_f32},
    {"sum [1,8] dim 1", c_sum},
    {"sum_all [1]", c_sum_all},
    {"argmax [1,8] dim 1", c_argmax},
    {"softmax [1,8]", c_softmax},
    {"rms_norm [1,8]", c_rms_norm},
    {"matmul [4,4]@[4,4]", c_matmul},
    {"transpose (view)", c_transpose},
    {"reshape (view)", c_reshape},
    {"contiguous [4,4]", c_contiguous},
    {"index_select [4,4] 1 row", c_index_select},
    {"cat 2 x [1]", c_cat},
    {"rope [1,1,1,8]", c_rope},
    {"attention 1 query, 4 keys", c_attention},
};

/* Best ns per call over 5 runs of n calls. */
static double time_case(one_call call, int n)
{
    double best = 1e30;

    for (int r = 0; r < 5; r++) {
        double t = cpu_now();
        for (int i = 0; i < n; i++)
            if (!call()) {
                fprintf(stderr, "bench-overhead: %s\n", tendo_error_message(tendo_last_error()));
                exit(1);
            }
        t = (cpu_now() - t) / n * 1e9;
        best = t < best ? t : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    long seen = 0;

    tendo_set_num_threads(threads > 0 ? threads : 1);
    setup();
    printf("fixed cost per call, %d thread(s), ns (CPU time, best of 5 x 20000)\n", tendo_get_num_threads());
    printf("%-28s %10s %12s\n", "op", "ns", "observed ns");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double plain = time_case(cases[i].call, 20000), watched;
        int id = tendo_observe(watch, &seen);

        watched = time_case(cases[i].call, 20000);
        tendo_unobserve(id);
        printf("%-28s %10.0f %12.0f\n", cases[i].name, plain, watched);
    }
    fprintf(stderr, "(%ld events seen)\n", seen);
    return 0;
}
