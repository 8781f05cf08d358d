/* t/drivers/t-comm.c - the collectives (tendo/comm.h) in whatever world it
 * is started in: alone (a world of one), or under mpirun (t/drivers/t-comm.sh
 * runs it with 4 ranks).  Every collective, every dtype, dense and strided
 * tensors, on the CPU (MPI) and on cuda:0 (NCCL) when there is one, against
 * the value each rank computes alone from every rank's known input; the
 * same bits on every rank; mismatched and refused calls failing on every
 * rank; the gradients of all_gather and reduce_scatter; all_reduces from
 * two threads at once.
 *
 * Every rank runs every check; a check passes when it passed on all ranks
 * (the test combines them over MPI itself).  Only rank 0 prints TAP; the
 * others' diagnostics go to stderr with their rank.
 *
 * With TENDO_COMM_CHECK=0 (no agreement: the data of small calls go
 * through MPI's own collectives, not with the agreement) it checks the
 * values only.
 *
 * t-comm --agreement runs only the calls that must fail on every rank
 * (and the few that follow them): t-comm.sh runs it with more ranks than
 * agree by exchanging records (src/comm/mpi.c), so that the other way of
 * agreeing is tested too.
 *
 * t-comm --funneled starts MPI itself at MPI_THREAD_FUNNELED and checks
 * that tendo's collectives work on MPI's main thread and fail cleanly on
 * another (test_funneled).
 *
 * t-comm --die N: every rank all-reduces in a loop and the last rank exits
 * (status 3, without finalizing) at iteration N, while the others wait for
 * it: t-comm.sh checks that the job then ends, with an error, in time. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TENDO_HAVE_MPI
#include <mpi.h>
#endif

#include "check.h"
#include "tendo.h"

static tendo_comm *g_comm;
static int g_rank, g_size = 1;
static bool agreement_only; /* --agreement: the failing calls and a few that work, no dtype sweep */

static void comm_diag(const char *fmt, ...) TAP_PRINTF(1, 2);
static void comm_diag(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "# rank %d: ", g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Whether every rank's `local` is true (MPI directly, not tendo). */
static bool comm_all(bool local)
{
#ifdef TENDO_HAVE_MPI
    int in = local, out = local;

    if (g_size > 1 && MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        bail("MPI_Allreduce failed");
    return out != 0;
#else
    return local;
#endif
}

/* Whether the n bytes at p are the same on every rank (`valid` false:
 * skip the comparison, the check fails anyway). */
static bool comm_same_bits(const void *p, size_t n, bool valid)
{
#ifdef TENDO_HAVE_MPI
    unsigned char *first = malloc(n + 1);
    bool same;

    if (!first)
        bail("out of memory");
    if (valid)
        memcpy(first, p, n);
    else
        memset(first, 0, n);
    if (g_size > 1 && MPI_Bcast(first, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        bail("MPI_Bcast failed");
    same = !valid || memcmp(first, p, n) == 0;
    if (!same)
        comm_diag("my result's bits differ from rank 0's");
    free(first);
    return comm_all(same);
#else
    (void)p, (void)n, (void)valid;
    return true;
#endif
}

#define TEST_BODY "comm-body.h"
#define TEST_KINDS T_ALL
#include "each-dtype.h"

/* Whether the last error has status st (when want) on every rank. */
static bool failed_with(tendo_status got, tendo_status st)
{
    if (got != st)
        comm_diag("got %s (%s), wanted %s", tendo_status_str(got), tendo_error_message(tendo_last_error()),
                  tendo_status_str(st));
    return got == st;
}

/* Calls that cannot go on fail on every rank, and change nothing; the
 * communicator still works after them. */
static void test_errors(void)
{
    float data[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, got[13];
    int64_t n = g_rank == 0 ? 12 : 13;
    tensor_f32 *t = tensor_f32_from_data(data, 1, &n, tendo_cpu());
    tensor_i64 *ti = tensor_i64_zeros(1, (int64_t[]){12}, tendo_cpu());
    tensor_f32 *odd = tensor_f32_zeros(2, (int64_t[]){2 * g_size + 1, 2}, tendo_cpu());
    tendo_status st;
    bool local;

    if (!t || !ti || !odd)
        bail("fixtures: %s", tendo_error_message(tendo_last_error()));
    if (g_size > 1) {
        st = tensor_all_reduce(g_comm, t, TENDO_REDUCE_SUM);
        local = failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "element count") &&
                tensor_copy_to(t, got, n) == TENDO_OK && memcmp(got, data, (size_t)n * sizeof *got) == 0;
        ok(comm_all(local), "element counts that differ: TENDO_ERR_COMM on every rank, nothing written");

        /* element counts whose records differ in how they travel: carried in
         * one message (100 f32, and 5000 between two ranks: 20 KB), in two
         * (1024, 1500: 4 and 6 KiB), or not carried (20000: 80 KB); rank 0
         * has the first count */
        static const int64_t counts[][2] = {{100, 20000}, {100, 1024}, {1024, 1500}, {1500, 20000}, {5000, 1024}};
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            int64_t nbig = counts[c][g_rank == 0 ? 0 : 1];
            tensor_f32 *big = tensor_f32_full(1, &nbig, 1.0, tendo_cpu());
            float *back = malloc((size_t)nbig * sizeof *back);
            st = big && back ? tensor_all_reduce(g_comm, big, TENDO_REDUCE_SUM) : TENDO_ERR_OOM;
            local = failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "element count") &&
                    tensor_copy_to(big, back, nbig) == TENDO_OK;
            for (int64_t i = 0; local && i < nbig; i++)
                local = back[i] == 1;
            free(back);
            ok(comm_all(local), "element counts of %lld and %lld: TENDO_ERR_COMM on every rank, nothing written",
               (long long)counts[c][0], (long long)counts[c][1]);
            tensor_free(big);
        }

        /* rank 0 reduces f32, the others i64, of 12 elements each */
        tensor_f32 *t12 = tensor_f32_narrow(t, 0, 0, 12);
        st = g_rank == 0 ? tensor_all_reduce(g_comm, t12, TENDO_REDUCE_SUM)
                         : tensor_all_reduce(g_comm, ti, TENDO_REDUCE_SUM);
        ok(comm_all(failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "dtype")),
           "dtypes that differ: TENDO_ERR_COMM on every rank");
        tensor_free(t12);

        /* calls carried with their data that differ only in what the
         * records' tags say: the same 1 KiB as f32 on rank 0 and i64
         * elsewhere; SUM on rank 0 and MAX elsewhere; and an all_reduce on
         * rank 0 against a broadcast of the same tensor elsewhere */
        tensor_f32 *k32 = tensor_f32_full(1, (int64_t[]){256}, 2.0, tendo_cpu());
        tensor_i64 *k64 = tensor_i64_full(1, (int64_t[]){128}, 2.0, tendo_cpu());
        float k32_back[256];
        bool same_data;
        if (!k32 || !k64)
            bail("fixtures: %s", tendo_error_message(tendo_last_error()));
        st = g_rank == 0 ? tensor_all_reduce(g_comm, k32, TENDO_REDUCE_SUM)
                         : tensor_all_reduce(g_comm, k64, TENDO_REDUCE_SUM);
        ok(comm_all(failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "dtype")),
           "the same bytes carried as f32 and as i64: TENDO_ERR_COMM naming the dtype on every rank");
        st = tensor_all_reduce(g_comm, k32, g_rank == 0 ? TENDO_REDUCE_SUM : TENDO_REDUCE_MAX);
        ok(comm_all(failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "reduce op")),
           "SUM on one rank, MAX on the others: TENDO_ERR_COMM naming the reduce op on every rank");
        st = g_rank == 0 ? tensor_all_reduce(g_comm, k32, TENDO_REDUCE_SUM) : tensor_broadcast(g_comm, k32, 0);
        same_data = tensor_copy_to(k32, k32_back, 256) == TENDO_OK;
        for (int i = 0; same_data && i < 256; i++)
            same_data = k32_back[i] == 2.0f;
        ok(comm_all(failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "collective") &&
                    same_data),
           "an all_reduce carried against a broadcast: TENDO_ERR_COMM naming the collective, nothing written");
        tensor_free(k64);
        tensor_free(k32);

        /* the last rank passes NULL: its own error there, TENDO_ERR_COMM elsewhere */
        st = tensor_f32_all_reduce(g_comm, g_rank == g_size - 1 ? NULL : odd, TENDO_REDUCE_SUM);
        ok(comm_all(failed_with(st, g_rank == g_size - 1 ? TENDO_ERR_INVALID_ARG : TENDO_ERR_COMM)),
           "a rank whose arguments are refused: its error there, TENDO_ERR_COMM on the others");

        tensor_f32 *rs = tensor_reduce_scatter(g_comm, odd, 0, TENDO_REDUCE_SUM);
        ok(comm_all(!rs && failed_with(tendo_error_status(tendo_last_error()), TENDO_ERR_SHAPE)),
           "reduce_scatter of a dim that does not split: TENDO_ERR_SHAPE on every rank");
        tensor_free(rs);

        /* one rank all_gathers while the others broadcast */
        tensor_f32 *gth = NULL;
        if (g_rank == 0) {
            gth = tensor_all_gather(g_comm, odd, 0);
            st = gth ? TENDO_OK : tendo_error_status(tendo_last_error());
        } else {
            st = tensor_broadcast(g_comm, odd, 0);
        }
        ok(comm_all(failed_with(st, TENDO_ERR_COMM) && strstr(tendo_error_message(tendo_last_error()), "collective")),
           "different collectives on the ranks: TENDO_ERR_COMM on every rank");
        tensor_free(gth);
    }
    st = tensor_all_reduce(g_comm, ti, TENDO_REDUCE_AVG);
    ok(comm_all(failed_with(st, TENDO_ERR_INVALID_ARG)), "AVG of i64: TENDO_ERR_INVALID_ARG on every rank");
    st = tensor_broadcast(g_comm, odd, g_size);
    ok(comm_all(failed_with(st, TENDO_ERR_INVALID_ARG)), "a root past the last rank: TENDO_ERR_INVALID_ARG");
    st = tensor_all_reduce(g_comm, odd, (tendo_reduce_op)99);
    ok(comm_all(failed_with(st, TENDO_ERR_INVALID_ARG)), "an op that is none: TENDO_ERR_INVALID_ARG");
    tensor_f32 *g3 = tensor_all_gather(g_comm, odd, 2);
    ok(comm_all(!g3 && failed_with(tendo_error_status(tendo_last_error()), TENDO_ERR_INVALID_ARG)),
       "all_gather along a dim that is none: TENDO_ERR_INVALID_ARG");
    ok(tensor_all_reduce((const tendo_comm *)NULL, odd, TENDO_REDUCE_SUM) == TENDO_ERR_INVALID_ARG,
       "a NULL communicator: TENDO_ERR_INVALID_ARG");

    /* empty tensors: nothing moves, the shapes are right */
    tensor_f32 *e0 = tensor_f32_zeros(2, (int64_t[]){0, 3}, tendo_cpu()), *eg = NULL;
    local = e0 && tensor_all_reduce(g_comm, e0, TENDO_REDUCE_SUM) == TENDO_OK &&
            (eg = tensor_all_gather(g_comm, e0, 1)) != NULL && tensor_size(eg, 0) == 0 &&
            tensor_size(eg, 1) == 3 * g_size;
    ok(comm_all(local), "an empty tensor: all_reduce and all_gather ([0, %d])", 3 * g_size);
    tensor_free(eg);
    tensor_free(e0);

    /* still usable: the sum of every rank's rank */
    tensor_i64 *one = tensor_i64_full(1, (int64_t[]){1}, (double)g_rank, tendo_cpu());
    int64_t sum = -1;
    local = one && tensor_all_reduce(g_comm, one, TENDO_REDUCE_SUM) == TENDO_OK &&
            tensor_copy_to(one, &sum, 1) == TENDO_OK && sum == (int64_t)g_size * (g_size - 1) / 2;
    ok(comm_all(local), "after the failures, all_reduce works: the ranks sum to %lld", (long long)sum);
    ok(comm_all(tendo_comm_barrier(g_comm) == TENDO_OK), "barrier");
    tensor_free(one);
    tensor_free(odd);
    tensor_free(ti);
    tensor_free(t);
}

/* all_gather's gradient is reduce_scatter's sum of the gradients, and
 * reduce_scatter's (sum) is all_gather's. */
static void test_grads(tendo_device d)
{
    int64_t n = 2 * 3;
    float w[64], got[6];
    tensor_f32 *x = tensor_f32_rand(2, (int64_t[]){2, 3}, 7 + (uint64_t)g_rank, d), *wt, *y, *p, *l, *gx;
    bool local;

    for (int i = 0; i < 6 * g_size; i++)
        w[i] = (float)(i + 1);
    wt = tensor_f32_from_data(w, 2, (int64_t[]){2 * g_size, 3}, d);
    local = x && wt && tensor_set_requires_grad(x, true) == TENDO_OK;
    y = local ? tensor_all_gather(g_comm, x, 0) : NULL;
    p = y ? tensor_mul(y, wt) : NULL;
    l = p ? tensor_sum_all(p) : NULL;
    local = l && tensor_backward(l, NULL) == TENDO_OK && (gx = tensor_grad(x)) != NULL &&
            tensor_copy_to(gx, got, n) == TENDO_OK;
    for (int i = 0; local && i < 6; i++)
        local = got[i] == (float)g_size * w[6 * g_rank + i];
    ok(comm_all(local), "all_gather's gradient on %s: every rank's gradient of its rows, summed",
       tendo_device_str(d));
    if (local)
        tensor_free(gx);
    tensor_free(l), tensor_free(p), tensor_free(y);
    tensor_zero_grad(x);

    /* y = reduce_scatter(x [2 size, 3]); loss = (rank + 1) sum(y) */
    tensor_free(x);
    x = tensor_f32_rand(2, (int64_t[]){2 * g_size, 3}, 9, d);
    local = x && tensor_set_requires_grad(x, true) == TENDO_OK;
    y = local ? tensor_reduce_scatter(g_comm, x, 0, TENDO_REDUCE_SUM) : NULL;
    p = y ? tensor_mul_scalar(y, g_rank + 1.0) : NULL;
    l = p ? tensor_sum_all(p) : NULL;
    float *all = malloc((size_t)(6 * g_size) * sizeof *all);
    local = all && l && tensor_backward(l, NULL) == TENDO_OK && (gx = tensor_grad(x)) != NULL &&
            tensor_copy_to(gx, all, 6 * g_size) == TENDO_OK;
    for (int i = 0; local && i < 6 * g_size; i++)
        local = all[i] == (float)(i / 6 + 1);
    ok(comm_all(local), "reduce_scatter's gradient on %s: rank r's rows get rank r's gradient",
       tendo_device_str(d));
    if (local)
        tensor_free(gx);
    free(all);
    tensor_free(l), tensor_free(p), tensor_free(y), tensor_free(x), tensor_free(wt);
}

/* tendo_optimizer_all_reduce_grads: parameters of several sizes (one past
 * a bucket, so reduced where it is) and dtypes, each rank's gradient its
 * rank + 1 times the parameter's index + 1: the average is (size + 1) / 2
 * times that.  Then a rank without one of the gradients: an error on every
 * rank. */
static void test_all_reduce_grads(tendo_device d)
{
    int64_t sizes[] = {3, 1100000, 7, 40};
    tendo_tensor *ps[5];
    tendo_optimizer *opt = tendo_sgd_new(0.1, 0, 0, false);
    int np = 0;
    bool local = opt != NULL;

    for (int i = 0; i < 4; i++, np++) {
        tensor_f32 *p = tensor_f32_zeros(1, &sizes[i], d);
        local = local && p && tensor_set_requires_grad(p, true) == TENDO_OK &&
                tendo_optimizer_add(opt, ps[np] = tensor_erase(p)) == TENDO_OK;
    }
#ifdef TENDO_HAVE_BF16
    {
        tensor_bf16 *p = tensor_bf16_zeros(1, (int64_t[]){5}, d);
        local = local && p && tensor_set_requires_grad(p, true) == TENDO_OK &&
                tendo_optimizer_add(opt, ps[np++] = tensor_erase(p)) == TENDO_OK;
    }
#endif
    /* loss = sum_i (rank + 1) (i + 1) sum(p_i): gradient (rank + 1) (i + 1) */
    for (int i = 0; local && i < np; i++) {
        tendo_tensor *f = tendo_tensor_to_dtype(ps[i], TENDO_F32);
        tensor_f32 *pf = f ? tendo_as_f32(f) : NULL, *sc = pf ? tensor_mul_scalar(pf, (g_rank + 1.0) * (i + 1)) : NULL;
        tensor_f32 *l = sc ? tensor_sum_all(sc) : NULL;
        local = l && tensor_backward(l, NULL) == TENDO_OK;
        tensor_free(l), tensor_free(sc), tendo_tensor_free(f);
    }
    local = local && tendo_optimizer_all_reduce_grads(opt, g_comm) == TENDO_OK;
    for (int i = 0; local && i < np; i++) {
        tendo_tensor *g = NULL;
        float *got = malloc((size_t)tendo_tensor_numel(ps[i]) * sizeof *got);
        double want = (g_size + 1) / 2.0 * (i + 1);
        if (tendo_tensor_dtype(ps[i]) == TENDO_F32)
            g = tensor_erase(tensor_grad(tendo_as_f32(ps[i])));
#ifdef TENDO_HAVE_BF16
        else
            g = tensor_erase(tensor_grad(tendo_as_bf16(ps[i])));
#endif
        tendo_tensor *gf = g ? tendo_tensor_to_dtype(g, TENDO_F32) : NULL;
        local = got && gf && tensor_copy_to(tendo_as_f32(gf), got, tendo_tensor_numel(ps[i])) == TENDO_OK;
        for (int64_t k = 0; local && k < tendo_tensor_numel(ps[i]); k++)
            local = fabs(got[k] - want) <= 1e-6 * want + (tendo_tensor_dtype(ps[i]) == TENDO_F32 ? 0 : 0.02 * want);
        if (!local)
            comm_diag("parameter %d: %s", i, got ? "wrong average" : "out of memory");
        tendo_tensor_free(gf), tendo_tensor_free(g);
        free(got);
    }
    ok(comm_all(local), "all_reduce_grads on %s: %d parameters (f32, one of 4.4 MB, bf16) averaged", tendo_device_str(d),
       np);
    if (g_size > 1) {
        tendo_optimizer_zero_grad(opt);
        /* every rank but the last has a gradient of parameter 0 */
        tensor_f32 *p0 = tendo_as_f32(ps[0]), *l = g_rank < g_size - 1 ? tensor_sum_all(p0) : NULL;
        local = (g_rank == g_size - 1 || (l && tensor_backward(l, NULL) == TENDO_OK));
        tendo_status st = tendo_optimizer_all_reduce_grads(opt, g_comm);
        ok(comm_all(local && failed_with(st, TENDO_ERR_COMM)),
           "all_reduce_grads with a gradient missing on one rank: TENDO_ERR_COMM on every rank");
        tensor_free(l);
    }
    tendo_optimizer_free(opt);
    for (int i = 0; i < np; i++)
        tendo_tensor_free(ps[i]);
}

/* One thread's share of test_threads: `calls` all_reduces (SUM) of n f32
 * ones, each result checked. */
typedef struct {
    int64_t n;
    int calls;
    bool ok;
} ones_job;

static void *all_reduce_ones(void *arg)
{
    ones_job *j = arg;
    tensor_f32 *t = tensor_f32_zeros(1, &j->n, tendo_cpu());
    float *p = t ? tensor_f32_data(t) : NULL;

    j->ok = p != NULL;
    for (int i = 0; i < j->calls; i++) { /* every call made (t NULL too), so that the ranks' calls match */
        for (int64_t k = 0; p && k < j->n; k++)
            p[k] = 1.0f;
        j->ok = tensor_all_reduce(g_comm, t, TENDO_REDUCE_SUM) == TENDO_OK && j->ok;
        for (int64_t k = 0; j->ok && k < j->n; k++)
            j->ok = p[k] == (float)g_size;
    }
    tensor_free(t);
    return NULL;
}

/* Two threads' all_reduces at once: a rank's CPU collectives run one
 * after the other, each whole (its agreement and its data under one hold
 * of tendo's MPI lock), so each meets one call of each other rank, in
 * whichever order they came; every call is the same (ones, SUM), so every
 * result is the world's size.  A small one (its data carried with the
 * agreement) and one past that (agreement, then MPI_Allreduce). */
static void test_threads(void)
{
    static const int64_t sizes[] = {256, 65536};

    for (int s = 0; s < 2; s++) {
        ones_job jobs[2] = {{sizes[s], 40, false}, {sizes[s], 40, false}};
        pthread_t th[2];
        bool made[2];

        for (int i = 0; i < 2; i++)
            if (!(made[i] = pthread_create(&th[i], NULL, all_reduce_ones, &jobs[i]) == 0))
                all_reduce_ones(&jobs[i]); /* the same calls, on this thread */
        for (int i = 0; i < 2; i++)
            if (made[i])
                pthread_join(th[i], NULL);
        ok(comm_all(jobs[0].ok && jobs[1].ok),
           "all_reduces of %lld f32 from two threads at once, 40 each: every result %d", (long long)sizes[s], g_size);
    }
}

#ifdef TENDO_HAVE_MPI
/* What a call on a thread MPI does not allow (test_funneled) did. */
typedef struct {
    const char *level; /* the name of the thread level MPI granted */
    tendo_status all_reduce, barrier;
    bool untouched, names_level;
} refused_calls;

static void *call_off_main(void *arg)
{
    refused_calls *r = arg;
    tensor_f32 *t = tensor_f32_ones(1, (int64_t[]){1024}, tendo_cpu());
    const float *p = t ? tensor_f32_data(t) : NULL;

    r->all_reduce = t ? tensor_all_reduce(g_comm, t, TENDO_REDUCE_SUM) : TENDO_ERR_OOM;
    r->names_level = strstr(tendo_error_message(tendo_last_error()), r->level) != NULL;
    r->untouched = p != NULL;
    for (int k = 0; p && k < 1024; k++)
        r->untouched = r->untouched && p[k] == 1.0f;
    r->barrier = tendo_comm_barrier(g_comm);
    tensor_free(t);
    return NULL;
}

/* t-comm --funneled: the program started MPI at MPI_THREAD_FUNNELED, so
 * MPI's main thread alone may call it: there tendo's collectives work;
 * on another thread they fail with TENDO_ERR_COMM on every rank, sending
 * nothing (so no rank waits), and the main thread's next calls work. */
static void test_funneled(int provided)
{
    ones_job before = {1024, 3, false}, after = {65536, 3, false};
    refused_calls r = {provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED", TENDO_OK, TENDO_OK,
                       false, false};
    pthread_t th;

    ok(comm_all(provided < MPI_THREAD_SERIALIZED), "MPI granted thread level %d (below MPI_THREAD_SERIALIZED)",
       provided);
    all_reduce_ones(&before);
    ok(comm_all(before.ok), "all_reduces of 1024 f32 from MPI's main thread: every result %d", g_size);
    if (pthread_create(&th, NULL, call_off_main, &r) == 0)
        pthread_join(th, NULL);
    ok(comm_all(r.all_reduce == TENDO_ERR_COMM && r.names_level && r.untouched),
       "an all_reduce on another thread fails with TENDO_ERR_COMM naming the thread level, its tensor untouched");
    ok(comm_all(r.barrier == TENDO_ERR_COMM), "a barrier on another thread fails with TENDO_ERR_COMM");
    all_reduce_ones(&after);
    ok(comm_all(after.ok), "then the main thread's all_reduces of 65536 f32 work: every result %d", g_size);
}
#endif

/* LeakSanitizer's check, where the build has it: made before MPI is
 * finalized, so that what Open MPI keeps until then (reachable) is not
 * reported, and its plugins, unloaded at exit, need no naming; tendo's
 * own leaks are unreachable by then and are. */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/* The last rank leaves at iteration `at` while the others all-reduce. */
static int die_at(int at)
{
    tensor_f32 *t = tensor_f32_ones(1, (int64_t[]){1024}, tendo_cpu());

    for (int i = 0; t; i++) {
        if (g_rank == g_size - 1 && i == at) {
            fprintf(stderr, "t-comm: rank %d exits now, in the middle of the job\n", g_rank);
            _exit(3);
        }
        if (tensor_all_reduce(g_comm, t, TENDO_REDUCE_MAX) != TENDO_OK) {
            fprintf(stderr, "t-comm: rank %d: %s\n", g_rank, tendo_error_message(tendo_last_error()));
            return 1;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *check = getenv("TENDO_COMM_CHECK");
    bool checked = !(check && !strcmp(check, "0"));
    bool funneled = argc == 2 && !strcmp(argv[1], "--funneled");
#ifdef TENDO_HAVE_MPI
    int provided = -1;

    if (funneled && MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        bail("MPI_Init_thread failed");
#endif
    if (!(g_comm = tendo_comm_world()))
        bail("tendo_comm_world: %s", tendo_error_message(tendo_last_error()));
    g_rank = tendo_comm_rank(g_comm);
    g_size = tendo_comm_size(g_comm);
    if (argc == 3 && !strcmp(argv[1], "--die"))
        return die_at(atoi(argv[2]));
    agreement_only = argc == 2 && !strcmp(argv[1], "--agreement");
    if (g_rank != 0 && !freopen("/dev/null", "w", stdout))
        return 1;
    plan_lazy();
    diag("%d rank%s over %s%s", g_size, g_size == 1 ? "" : "s", tendo_comm_backend(g_comm),
         tendo_cuda_available() ? ", and cuda:0 of each" : "");
    ok(g_rank >= 0 && g_rank < g_size && g_size >= 1, "rank %d of %d", g_rank, g_size);
    if (funneled) {
#ifdef TENDO_HAVE_MPI
        test_funneled(provided);
#else
        skip(1, "--funneled: a build without MPI");
#endif
    } else {
        if (!agreement_only)
            FOR_EACH_DTYPE(comm_dtype);
        if (checked) { /* TENDO_COMM_CHECK=0: the values only, over MPI's own calls */
            test_errors();
            if (!agreement_only) {
                test_grads(tendo_cpu());
                if (tendo_cuda_available())
                    test_grads(tendo_cuda(0));
            }
            test_all_reduce_grads(tendo_cpu());
            if (!agreement_only)
                test_threads();
            if (!agreement_only && tendo_cuda_available())
                test_all_reduce_grads(tendo_cuda(0));
        }
    }
    tendo_comm_free(g_comm);
    int status = done_testing();
    if (__lsan_do_leak_check)
        __lsan_do_leak_check();
#ifdef TENDO_HAVE_MPI
    if (funneled)
        MPI_Finalize(); /* the program started MPI, so it finalizes it */
#endif
    return status;
}
