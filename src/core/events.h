/* src/core/events.h - raising events (see include/tendo/events.h).
 *
 * Every event site first reads tendo__observers with one relaxed atomic
 * load; only when an observer is registered does it build the event.  Ops
 * are bracketed: tendo__op_begin() reads the flag (and the clock, when
 * observed), tendo__op_end() emits if the begin saw an observer.
 */
#ifndef TENDO_SRC_EVENTS_H
#define TENDO_SRC_EVENTS_H

#include <stdatomic.h>

#include "tendo/events.h"

struct tendo__tensor;

#ifndef TENDO_EVENTS
#define TENDO_EVENTS 1 /* configure --disable-events sets 0: no event code at all */
#endif

/* Number of registered observers. */
extern atomic_int tendo__observers;

static inline bool tendo__observed(void)
{
#if TENDO_EVENTS
    return atomic_load_explicit(&tendo__observers, memory_order_relaxed) > 0;
#else
    return false;
#endif
}

typedef struct {
    bool on;
    double t0;
} tendo__op_scope;

double tendo__now(void);

static inline tendo__op_scope tendo__op_begin(void)
{
    tendo__op_scope s = {tendo__observed(), 0.0};
    if (s.on)
        s.t0 = tendo__now();
    return s;
}

/* Emits the op event when s saw an observer and out is not NULL; returns
 * out.  a and b are the inputs (NULL when fewer). */
struct tendo__tensor *tendo__op_end_slow(tendo__op_scope s, const char *op, struct tendo__tensor *out,
                                         const struct tendo__tensor *a, const struct tendo__tensor *b);
static inline struct tendo__tensor *tendo__op_end(tendo__op_scope s, const char *op,
                                                  struct tendo__tensor *out,
                                                  const struct tendo__tensor *a,
                                                  const struct tendo__tensor *b)
{
    return s.on ? tendo__op_end_slow(s, op, out, a, b) : out;
}

void tendo__emit_tensor_slow(tendo_event_kind kind, const struct tendo__tensor *t);
static inline void tendo__emit_tensor(tendo_event_kind kind, const struct tendo__tensor *t)
{
    if (tendo__observed())
        tendo__emit_tensor_slow(kind, t);
}

void tendo__emit_transfer_slow(const struct tendo__tensor *from, const struct tendo__tensor *to);
static inline void tendo__emit_transfer(const struct tendo__tensor *from, const struct tendo__tensor *to)
{
    if (tendo__observed())
        tendo__emit_transfer_slow(from, to);
}

void tendo__emit_pool_slow(tendo_event_kind kind, tendo_device d, int64_t bytes, bool hit);
static inline void tendo__emit_pool(tendo_event_kind kind, tendo_device d, int64_t bytes, bool hit)
{
    if (tendo__observed())
        tendo__emit_pool_slow(kind, d, bytes, hit);
}

/* Registers the trace observer when TENDO_TRACE is set (src/core/trace.c). */
void tendo__trace_from_env(void);

#endif /* TENDO_SRC_EVENTS_H */
