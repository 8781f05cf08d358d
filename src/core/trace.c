/* src/core/trace.c - the built-in observer behind TENDO_TRACE=1: a line per op,
 * and a per-op summary table. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/internal.h"

#define MAX_OPS 256

typedef struct {
    const char *op;
    int64_t count;
    double seconds;
} op_total;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
/* Serializes start/stop, held across (un)registering the observer.  Not
 * trace_lock: the observer takes that under the registry's read lock, so
 * holding it while waiting for the write lock could deadlock. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static op_total totals[MAX_OPS];
static int ntotals;
static FILE *trace_lines;
static int trace_id;

/* The running total for op (op names are static strings), or NULL when the
 * table is full. */
static op_total *total_of(const char *op)
{
    for (int i = 0; i < ntotals; i++)
        if (totals[i].op == op || !strcmp(totals[i].op, op))
            return &totals[i];
    if (ntotals == MAX_OPS)
        return NULL;
    totals[ntotals].op = op;
    return &totals[ntotals++];
}

static void trace_observer(const tendo_event *e, void *user)
{
    op_total *t;
    FILE *f;

    (void)user;
    if (e->kind != TENDO_EVENT_OP)
        return;
    pthread_mutex_lock(&trace_lock);
    if ((t = total_of(e->op)) != NULL) {
        t->count++;
        t->seconds += e->seconds;
    }
    f = trace_lines;
    pthread_mutex_unlock(&trace_lock);
    if (f) {
        const tendo_tensor *in0 = e->ninputs > 0 ? e->inputs[0] : NULL;
        const tendo_tensor *in1 = e->ninputs > 1 ? e->inputs[1] : NULL;
        fprintf(f, "tendo: %-12s %-5s %-7s %s%s%s -> %s %10.3f us\n", e->op, tendo_dtype_name(e->dtype),
                tendo_device_str(e->device),
                in0 ? tendo__shape_str(tendo_tensor_ndim(in0), tendo_tensor_shape(in0)).s : "()",
                in1 ? " " : "", in1 ? tendo__shape_str(tendo_tensor_ndim(in1), tendo_tensor_shape(in1)).s : "",
                tendo__shape_str(tendo_tensor_ndim(e->output), tendo_tensor_shape(e->output)).s,
                e->seconds * 1e6);
    }
}

int tendo_trace_start(FILE *f)
{
    int id;

    pthread_mutex_lock(&start_lock);
    pthread_mutex_lock(&trace_lock);
    trace_lines = f;
    id = trace_id;
    pthread_mutex_unlock(&trace_lock);
    if (id <= 0) {
        id = tendo_observe(trace_observer, NULL);
        pthread_mutex_lock(&trace_lock);
        trace_id = id > 0 ? id : 0;
        pthread_mutex_unlock(&trace_lock);
    }
    pthread_mutex_unlock(&start_lock);
    return id;
}

void tendo_trace_stop(void)
{
    int id;

    pthread_mutex_lock(&start_lock);
    pthread_mutex_lock(&trace_lock);
    id = trace_id;
    trace_id = 0;
    trace_lines = NULL;
    pthread_mutex_unlock(&trace_lock);
    if (id > 0)
        tendo_unobserve(id);
    pthread_mutex_unlock(&start_lock);
}

void tendo__trace_from_env(void)
{
    const char *v = getenv("TENDO_TRACE");

    if (v && *v && strcmp(v, "0") != 0)
        tendo_trace_start(stderr);
}

static int by_time_desc(const void *a, const void *b)
{
    const op_total *x = a, *y = b;
    return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : strcmp(x->op, y->op);
}

void tendo_trace_summary_to(FILE *f)
{
    op_total copy[MAX_OPS];
    int n;
    double all = 0;

    if (!f)
        return;
    pthread_mutex_lock(&trace_lock);
    n = ntotals;
    memcpy(copy, totals, (size_t)n * sizeof *copy);
    pthread_mutex_unlock(&trace_lock);
    if (n == 0) {
        fprintf(f, "tendo: no ops traced (set TENDO_TRACE=1 or call tendo_trace_start)\n");
        return;
    }
    qsort(copy, (size_t)n, sizeof *copy, by_time_desc);
    fprintf(f, "%-16s %10s %12s %12s\n", "op", "count", "total ms", "mean us");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%-16s %10lld %12.3f %12.3f\n", copy[i].op, (long long)copy[i].count,
                copy[i].seconds * 1e3, copy[i].seconds * 1e6 / (double)copy[i].count);
        all += copy[i].seconds;
    }
    fprintf(f, "%-16s %10s %12.3f\n", "total", "", all * 1e3);
}

void tendo_trace_summary(void) { tendo_trace_summary_to(stderr); }
