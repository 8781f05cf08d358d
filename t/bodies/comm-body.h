/* t/bodies/comm-body.h - the collectives of one dtype (t/drivers/t-comm.c):
 * every rank makes its input from (case, rank, element) alone, so each
 * rank computes every rank's input, and the reference, by itself. */
#include "dt.h"

#if defined(DT_KIND_FLOAT)
#define DT_IS_FLOAT 1
#else
#define DT_IS_FLOAT 0
#endif

/* Rank r's element i in case seed (PROD gets values near 1). */
static E DTFN(comm_val)(uint64_t seed, int r, int64_t i, tendo_reduce_op op)
{
    uint64_t s = seed * 1000003u + (uint64_t)r * 7919u + (uint64_t)i * 104729u + 1;

    (void)t_rand_u64(&s);
#if DT_IS_FLOAT
    return E_FROM_DOUBLE(op == TENDO_REDUCE_PROD ? t_rand_range(&s, 0.5, 1.5) : t_rand_range(&s, -2, 2));
#elif defined(DT_KIND_BOOL)
    (void)op;
    return (t_rand_u64(&s) >> 20) & 1;
#elif defined(DT_KIND_UINT)
    (void)op;
    return (E)(t_rand_u64(&s) % 250);
#else
    (void)op;
    return (E)((int64_t)(t_rand_u64(&s) % 241) - 120);
#endif
}

/* Rank r's input of case seed as a tensor of shape [a, b] on d: dense, or
 * (strided) the transposed view of a dense [b, a]. */
static TT *DTFN(comm_input)(uint64_t seed, int r, int64_t a, int64_t b, bool strided, tendo_reduce_op op,
                             tendo_device d)
{
    E *h = malloc((size_t)(a * b) * sizeof *h + 1);
    TT *t, *base;

    if (!h)
        return NULL;
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++)
            h[strided ? j * a + i : i * b + j] = DTFN(comm_val)(seed, r, i * b + j, op);
    base = TFN(from_data)(h, 2, strided ? (int64_t[]){b, a} : (int64_t[]){a, b}, d);
    free(h);
    if (!base || !strided)
        return base;
    t = tensor_transpose(base, 0, 1);
    tensor_free(base);
    return t;
}

/* Whether got is the reduction by op of every rank's element i of case
 * seed: integers exactly (wrapping), floats against the double reduction
 * rounded once, within the ranks' summation orders. */
static bool DTFN(comm_elem_ok)(E got, uint64_t seed, int64_t i, tendo_reduce_op op, int size)
{
#if DT_IS_FLOAT
    double acc = E_TO_DOUBLE(DTFN(comm_val)(seed, 0, i, op)), mag = fabs(acc), want, g = E_TO_DOUBLE(got);

    for (int r = 1; r < size; r++) {
        double x = E_TO_DOUBLE(DTFN(comm_val)(seed, r, i, op));
        acc = op == TENDO_REDUCE_MAX ? fmax(acc, x) : op == TENDO_REDUCE_MIN ? fmin(acc, x)
              : op == TENDO_REDUCE_PROD ? acc * x : acc + x;
        mag = op == TENDO_REDUCE_PROD ? fabs(acc) : mag + fabs(x);
    }
    if (op == TENDO_REDUCE_AVG) {
        acc /= size;
        mag /= size;
    }
    want = E_TO_DOUBLE(E_FROM_DOUBLE(acc));
    if (op == TENDO_REDUCE_MAX || op == TENDO_REDUCE_MIN)
        return g == want;
    return fabs(g - want) <= (size + 1) * DT_ULP * mag + 1e-300;
#else
    uint64_t acc = (uint64_t)(int64_t)DTFN(comm_val)(seed, 0, i, op);
    for (int r = 1; r < size; r++) {
        E x = DTFN(comm_val)(seed, r, i, op);
        uint64_t u = (uint64_t)(int64_t)x;
#if defined(DT_KIND_BOOL)
        acc = op == TENDO_REDUCE_SUM || op == TENDO_REDUCE_MAX ? (acc | u) : (acc & u);
#else
        acc = op == TENDO_REDUCE_SUM ? acc + u : op == TENDO_REDUCE_PROD ? acc * u
              : op == TENDO_REDUCE_MAX ? ((int64_t)u > (int64_t)acc ? u : acc)
                                       : ((int64_t)u < (int64_t)acc ? u : acc);
#endif
    }
    return got == (E)acc;
#endif
}

/* all_reduce of every op on [a, b]: values, and the same bits on every rank. */
static void DTFN(comm_all_reduce)(tendo_device d, bool strided, int64_t a, int64_t b)
{
    static const tendo_reduce_op ops[] = {TENDO_REDUCE_SUM, TENDO_REDUCE_AVG, TENDO_REDUCE_MAX, TENDO_REDUCE_MIN,
                                          TENDO_REDUCE_PROD};

    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        tendo_reduce_op op = ops[k];
        uint64_t seed = 11 + k + 100 * (uint64_t)a;
        TT *t;
        E *got;
        bool local;
        int64_t bad = -1;

        if (!DT_IS_FLOAT && op == TENDO_REDUCE_AVG)
            continue;
        got = malloc((size_t)(a * b) * sizeof *got + 1);
        local = got != NULL;
        t = DTFN(comm_input)(seed, g_rank, a, b, strided, op, d);
        local = local && t && tensor_all_reduce(g_comm, t, op) == TENDO_OK &&
                TFN(copy_to)(t, got, a * b) == TENDO_OK;
        for (int64_t i = 0; local && i < a * b; i++)
            if (!DTFN(comm_elem_ok)(got[i], seed, i, op, g_size))
                local = false, bad = i;
        if (bad >= 0)
            comm_diag("%s %s: element %lld is %g", DT_NAME, tendo_reduce_op_name(op), (long long)bad,
                      (double)E_TO_DOUBLE(got[bad]));
        else if (!local)
            comm_diag("%s: %s", DT_NAME, tendo_error_message(tendo_last_error()));
        ok(comm_all(local) && comm_same_bits(got, (size_t)(a * b) * sizeof *got, local),
           "all_reduce %s %s [%lld, %lld]%s on %s", tendo_reduce_op_name(op), DT_NAME, (long long)a, (long long)b,
           strided ? " (strided)" : "", tendo_device_str(d));
        tensor_free(t);
        free(got);
    }
}

/* broadcast from the last rank. */
static void DTFN(comm_broadcast)(tendo_device d, bool strided)
{
    int root = g_size - 1;
    TT *t = DTFN(comm_input)(21, g_rank, 4, 5, strided, TENDO_REDUCE_SUM, d);
    E got[20];
    bool local = t && tensor_broadcast(g_comm, t, root) == TENDO_OK && TFN(copy_to)(t, got, 20) == TENDO_OK;

    for (int64_t i = 0; local && i < 20; i++) {
        E want = DTFN(comm_val)(21, root, i, TENDO_REDUCE_SUM);
        local = memcmp(&got[i], &want, sizeof want) == 0;
    }
    ok(comm_all(local), "broadcast %s from rank %d%s on %s", DT_NAME, root, strided ? " (strided)" : "",
       tendo_device_str(d));
    tensor_free(t);
}

/* all_gather of [3, 4] along dim 0 and dim -1 (1). */
static void DTFN(comm_all_gather)(tendo_device d, bool strided, int dim)
{
    TT *t = DTFN(comm_input)(31, g_rank, 3, 4, strided, TENDO_REDUCE_SUM, d), *g = NULL;
    int64_t n = 12 * (int64_t)g_size;
    E *got = malloc((size_t)n * sizeof *got);
    bool local = t && got && (g = tensor_all_gather(g_comm, t, dim)) != NULL &&
                 tensor_ndim(g) == 2 && tensor_size(g, 0) == (dim == 0 ? 3 * g_size : 3) &&
                 tensor_size(g, 1) == (dim == 0 ? 4 : 4 * g_size) && TFN(copy_to)(g, got, n) == TENDO_OK;

    for (int64_t i = 0; local && i < n; i++) {
        int64_t row = i / tensor_size(g, 1), col = i % tensor_size(g, 1);
        int r = (int)(dim == 0 ? row / 3 : col / 4);
        E want = DTFN(comm_val)(31, r, dim == 0 ? (row % 3) * 4 + col : row * 4 + col % 4, TENDO_REDUCE_SUM);
        local = memcmp(&got[i], &want, sizeof want) == 0;
    }
    if (!local)
        comm_diag("%s all_gather: %s", DT_NAME, tendo_error_message(tendo_last_error()));
    ok(comm_all(local), "all_gather %s [3, 4] dim %d%s on %s", DT_NAME, dim, strided ? " (strided)" : "",
       tendo_device_str(d));
    tensor_free(g);
    tensor_free(t);
    free(got);
}

/* reduce_scatter of [2 size, 3] along dim 0 or [3, 2 size] along dim 1. */
static void DTFN(comm_reduce_scatter)(tendo_device d, bool strided, int dim, tendo_reduce_op op)
{
    int64_t a = dim == 0 ? 2 * g_size : 3, b = dim == 0 ? 3 : 2 * g_size;
    TT *t = DTFN(comm_input)(41 + (uint64_t)op, g_rank, a, b, strided, op, d), *s = NULL;
    E got[6];
    bool local = t && (s = tensor_reduce_scatter(g_comm, t, dim, op)) != NULL && tensor_numel(s) == 6 &&
                 TFN(copy_to)(s, got, 6) == TENDO_OK;

    for (int64_t i = 0; local && i < 6; i++) {
        /* element i of this rank's chunk: its place in the whole [a, b] */
        int64_t full = dim == 0 ? (2 * g_rank + i / 3) * b + i % 3 : (i / 2) * b + 2 * g_rank + i % 2;
        local = DTFN(comm_elem_ok)(got[i], 41 + (uint64_t)op, full, op, g_size);
    }
    if (!local)
        comm_diag("%s reduce_scatter: %s", DT_NAME, tendo_error_message(tendo_last_error()));
    ok(comm_all(local), "reduce_scatter %s %s dim %d%s on %s", tendo_reduce_op_name(op), DT_NAME, dim,
       strided ? " (strided)" : "", tendo_device_str(d));
    tensor_free(s);
    tensor_free(t);
}

static void DTFN(comm_dtype)(void)
{
    tendo_device devs[2] = {tendo_cpu(), tendo_cuda(0)};

    for (int k = 0; k < (tendo_cuda_available() ? 2 : 1); k++)
        for (int strided = 0; strided < 2; strided++) {
            DTFN(comm_all_reduce)(devs[k], strided, 5, 7);
            DTFN(comm_broadcast)(devs[k], strided);
            DTFN(comm_all_gather)(devs[k], strided, 0);
            DTFN(comm_all_gather)(devs[k], strided, -1);
            DTFN(comm_reduce_scatter)(devs[k], strided, 0, TENDO_REDUCE_SUM);
            DTFN(comm_reduce_scatter)(devs[k], strided, 1, TENDO_REDUCE_MAX);
        }
    /* large enough that the 16- and 8-bit floats take the chunked path */
    DTFN(comm_all_reduce)(tendo_cpu(), false, 97, 130);
    /* 4 KiB: a record the agreement sends in two pieces (src/comm/mpi.c's
     * PIECE_BYTES) */
    DTFN(comm_all_reduce)(tendo_cpu(), false, 1, 4096 / (int64_t)sizeof(E));
    /* the most data the ranks' agreement carries (src/comm/mpi.c's
     * carry_limit: 16 KiB past two ranks, 64 KiB between two), and one
     * element more, which goes to MPI */
    DTFN(comm_all_reduce)(tendo_cpu(), false, 1, 16384 / (int64_t)sizeof(E));
    DTFN(comm_all_reduce)(tendo_cpu(), false, 1, 16384 / (int64_t)sizeof(E) + 1);
    DTFN(comm_all_reduce)(tendo_cpu(), false, 1, 65536 / (int64_t)sizeof(E));
    DTFN(comm_all_reduce)(tendo_cpu(), false, 1, 65536 / (int64_t)sizeof(E) + 1);
}

#undef DT_IS_FLOAT
