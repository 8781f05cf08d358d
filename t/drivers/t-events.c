/* t/drivers/t-events.c - observers: which events come, with what in them; what an
 * observer may do; the trace observer's lines and summary. */
#include <stdlib.h>
#include <string.h>

#include "dt.h"

typedef struct {
    int n[6];            /* per event kind */
    char ops[32][16];    /* op names, in order */
    int nops;
    char shapes[32][64]; /* "in -> out" per op */
    int64_t pool_bytes;
    int hits;
    bool dtype_ok, seconds_ok, nested_refused;
    int try_nested;      /* call tendo from inside, on the next event */
} record;

static void recorder(const tendo_event *e, void *user)
{
    record *r = user;

    r->n[e->kind]++;
    if (e->kind == TENDO_EVENT_OP && r->nops < 32) {
        snprintf(r->ops[r->nops], sizeof r->ops[0], "%s", e->op);
        snprintf(r->shapes[r->nops], sizeof r->shapes[0], "%d:%lld->%lld", e->ninputs,
                 e->ninputs ? (long long)tendo_tensor_numel(e->inputs[0]) : -1LL,
                 (long long)tendo_tensor_numel(e->output));
        r->dtype_ok = r->dtype_ok && e->dtype == tendo_tensor_dtype(e->output);
        r->seconds_ok = r->seconds_ok && e->seconds >= 0 && e->seconds < 10;
        r->nops++;
    }
    if (e->kind == TENDO_EVENT_POOL_ALLOC) {
        r->pool_bytes += e->bytes;
        r->hits += e->hit;
    }
    if (r->try_nested && e->kind == TENDO_EVENT_OP) {
        /* tendo calls from an observer work, raise no events, and it may
         * not register or remove observers */
        tensor_f32 *x = tensor_f32_ones(TENDO_SHAPE(2), tendo_cpu());
        tensor_f32_free(x);
        r->nested_refused = tendo_observe(recorder, r) == -1 &&
                            tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG;
        r->try_nested = 0;
    }
}

static void test_events(void)
{
    record r = {0};
    int id;
    tensor_f32 *a, *t, *bad;
    tensor_i64 *h;

    r.dtype_ok = r.seconds_ok = true;
    id = tendo_observe(recorder, &r);
    ok(id > 0, "observe returns an id > 0");
    a = tensor_f32_zeros(TENDO_SHAPE(2, 3), tendo_cpu());
    t = tensor_transpose(a, 0, 1);
    h = tensor_to_i64(t);
    bad = tensor_reshape(a, TENDO_SHAPE(7));
    tensor_free(t);
    tensor_free(a);
    tensor_free(h);
    tendo_unobserve(id);
    tensor_free(tensor_f32_ones(TENDO_SHAPE(3), tendo_cpu()));

    is_int(3, r.nops, "three ops observed (the failed reshape is not an op)");
    ok(bad == NULL, "(the reshape failed)");
    is_string("zeros", r.ops[0], "  zeros");
    is_string("transpose", r.ops[1], "  transpose");
    is_string("to_i64", r.ops[2], "  to_i64");
    is_string("0:-1->6", r.shapes[0], "  zeros: no input, 6 elements out");
    is_string("1:6->6", r.shapes[1], "  transpose: the input and the output are readable");
    ok(r.dtype_ok, "  each op's dtype is its output's");
    ok(r.seconds_ok, "  each op's time is sane");
    is_int(3, r.n[TENDO_EVENT_TENSOR_CREATED], "three tensors created (the view too)");
    is_int(3, r.n[TENDO_EVENT_TENSOR_FREED], "three freed");
    is_int(2, r.n[TENDO_EVENT_POOL_ALLOC], "two pool allocations (the view has none)");
    is_int(2, r.n[TENDO_EVENT_POOL_FREE], "two pool frees");
    {
        const char *env = getenv("TENDO_POOL"); /* off: blocks have their exact sizes */
        bool off = env && (!strcmp(env, "off") || !strcmp(env, "0"));
        is_int(off ? 6 * 4 + 6 * 8 : 512 + 512, r.pool_bytes, "pool events carry block sizes");
    }
    is_int(0, r.n[TENDO_EVENT_TRANSFER], "no transfer");
}

static void test_transfer_and_nesting(void)
{
    record r = {0}, r2 = {0};
    int id, id2;
    tensor_i64 *a = tensor_i64_ones(TENDO_SHAPE(4), tendo_cpu()), *b;

    r.dtype_ok = r.seconds_ok = true;
    r2.dtype_ok = r2.seconds_ok = true;
    id = tendo_observe(recorder, &r);
    id2 = tendo_observe(recorder, &r2);
    ok(id2 > 0 && id2 != id, "a second observer gets its own id");
    r.try_nested = 1;
    b = tensor_to(a, tendo_cpu());
    tendo_unobserve(id);
    tendo_unobserve(id2);
    is_int(1, r.n[TENDO_EVENT_TRANSFER], "to(cpu) raises a transfer");
    is_int(1, r2.n[TENDO_EVENT_TRANSFER], "  seen by both observers");
    is_int(1, r.n[TENDO_EVENT_OP], "the ones() made inside the observer raised nothing");
    ok(r.nested_refused, "registering from inside an observer is refused");
    ok(tendo_observe(NULL, NULL) == -1 && tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG,
       "a NULL observer is refused");
    tendo_unobserve(12345); /* unknown: ignored */
    tensor_free(a);
    tensor_free(b);
    is_string("op", tendo_event_kind_str(TENDO_EVENT_OP), "event kinds have names");
}

static void test_trace(void)
{
    char *lines = NULL, *table = NULL;
    size_t nlines = 0, ntable = 0;
    FILE *fl = open_memstream(&lines, &nlines), *ft;
    tensor_f32 *a, *t;
    int id;

    id = tendo_trace_start(fl);
    ok(id > 0, "trace_start registers the trace observer");
    a = tensor_f32_arange(0, 6, 1, tendo_cpu());
    t = tensor_reshape(a, TENDO_SHAPE(2, 3));
    tensor_free(t);
    t = tensor_reshape(a, TENDO_SHAPE(3, 2));
    is_int(id, tendo_trace_start(fl), "starting it again keeps the same observer");
    fflush(fl);
    ok(lines && strstr(lines, "tendo: arange       f32   cpu     () -> [6]") != NULL,
       "a line per op: op, dtype, device, shapes, time");
    ok(lines && strstr(lines, "tendo: reshape      f32   cpu     [6] -> [3,2]") != NULL, "  reshape [6] -> [3,2]");
    ft = open_memstream(&table, &ntable);
    tendo_trace_summary_to(ft);
    fclose(ft);
    ok(table && strstr(table, "reshape") && strstr(table, "count"), "the summary has a row per op");
    {
        const char *row = table ? strstr(table, "reshape") : NULL;
        long long count = 0;
        ok(row && sscanf(row, "reshape %lld", &count) == 1 && count == 2, "  counting reshape twice");
    }
    tendo_trace_stop();
    tensor_free(a);
    tensor_free(t);
    fclose(fl);
    free(lines);
    free(table);
}

int main(void)
{
    test_events();
    test_transfer_and_nesting();
    test_trace();
    return done_testing();
}
