/* tendo/events.h - observing what tendo does.
 *
 * An observer is a callback that sees every event: tensors created and
 * freed, transfers, ops, pool allocations and frees.  It runs on the thread
 * that caused the event, after the fact; it may read the tensors an event
 * names but not free them, and tendo calls it makes raise no events of
 * their own.  With no observer registered, an event site costs one relaxed
 * atomic load.  Included by <tendo.h>.
 */
#ifndef TENDO_EVENTS_H
#define TENDO_EVENTS_H

#include "tendo/core.h"
#include "tendo/dtype.h"
#include "tendo/erased.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TENDO_EVENT_TENSOR_CREATED, /* output: the new handle (views included) */
    TENDO_EVENT_TENSOR_FREED,   /* output: the handle, just before it goes */
    TENDO_EVENT_TRANSFER,       /* device -> to, bytes; output: the copy */
    TENDO_EVENT_OP,             /* op, inputs, output, seconds */
    TENDO_EVENT_POOL_ALLOC,     /* device, bytes (the block), hit */
    TENDO_EVENT_POOL_FREE       /* device, bytes (the block) */
} tendo_event_kind;

struct tendo_event {
    tendo_event_kind kind;
    const char *op;                    /* the public op that caused it ("" if none) */
    tendo_dtype dtype;                 /* element type, for tensor events */
    tendo_device device;               /* where it happened (a transfer's source) */
    tendo_device to;                   /* a transfer's destination */
    int64_t bytes;                     /* transfer size, or pool block size */
    bool hit;                          /* pool alloc served from the cache */
    int ninputs;                       /* op inputs ... */
    const tendo_tensor *const *inputs; /* ... readable during the callback */
    const tendo_tensor *output;        /* the tensor the event is about */
    double seconds;                    /* op wall time */
};
typedef struct tendo_event tendo_event;
typedef void (*tendo_observer_fn)(const tendo_event *e, void *user);

/* Registers fn(e, user) for every event from now on, on every thread.
 * Returns an id > 0, or -1 (TENDO_ERR_INVALID_ARG) for a NULL fn, a full
 * table (64 observers), or a call from inside an observer. */
TENDO_API int tendo_observe(tendo_observer_fn fn, void *user);
/* Removes observer id; when it returns, fn is running nowhere and will not
 * be called again.  Unknown ids are ignored.  Not from inside an observer. */
TENDO_API void tendo_unobserve(int id);
/* A short static name for an event kind, e.g. "op". */
TENDO_API const char *tendo_event_kind_str(tendo_event_kind k);

/* The built-in trace observer.  TENDO_TRACE=1 in the environment starts it
 * when the library loads, printing one line per op to stderr.  This starts
 * it by hand: lines go to f (NULL: count only).  Returns its observer id. */
TENDO_API int tendo_trace_start(FILE *f);
/* Stops the trace observer (the totals are kept). */
TENDO_API void tendo_trace_stop(void);
/* Prints a table of ops traced so far: count, total and mean time, to
 * stderr. */
TENDO_API void tendo_trace_summary(void);
/* The same table, to f. */
TENDO_API void tendo_trace_summary_to(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_EVENTS_H */
