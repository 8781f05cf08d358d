/* src/core/autograd.h - the record of reverse-mode differentiation and the
 * engine that walks it (src/core/autograd.c).
 *
 * Like PyTorch's eager autograd: a float tensor that requires grad carries
 * a tendo__grad_meta.  A leaf's meta accumulates its gradient; a result of
 * a differentiable function computed from one (while grad mode is on) gets
 * a meta whose node records how to differentiate that function: an edge per
 * input (to the input's own node, to a leaf, or nowhere), what each input
 * looked like, the tensors its derivative formulas need (with the storage
 * version they had), and its scalar params.  The generated entry points
 * (templates/api/grad.j2, from the `grad` formulas of gen/registry/) make
 * the nodes; tendo__backward walks them.
 *
 * Ownership: a handle owns a reference to its meta, a meta to its node, a
 * node to the nodes and leaf metas its edges name.  Freeing intermediate
 * handles is safe; freeing the last handle of the root frees the record.
 */
#ifndef TENDO_SRC_AUTOGRAD_H
#define TENDO_SRC_AUTOGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

typedef struct tendo__node tendo__node;
typedef struct tendo__grad_meta tendo__grad_meta;

/* How a leaf's gradient is kept: the handle's and the leaf edges' share. */
struct tendo__grad_meta {
    int refs;
    bool leaf;           /* set_requires_grad(on): backward accumulates into grad */
    tendo__tensor *grad; /* the accumulated gradient (own storage), or NULL */
    tendo__node *fn;     /* what made this tensor (a non-leaf), a reference */
};

/* What an input looked like when its function ran: its gradient has this
 * dtype, shape and device. */
typedef struct {
    tendo_dtype dtype;
    int ndim;
    int64_t shape[TENDO_MAX_DIMS];
    tendo_device device;
} tendo__input_meta;

/* Where the gradient of one input goes: the node that made it, the leaf it
 * is, or nowhere (both NULL: the input does not require grad). */
typedef struct {
    tendo__node *node;
    tendo__grad_meta *leaf;
} tendo__edge;

/* A node's derivative: from grad (the gradient of its result) writes a new
 * tensor into grad_in[i] for every input i whose edge goes somewhere (see
 * tendo__node_wants), broadcast-reducible to that input's shape.  False
 * with the error set on failure (then it has freed what it wrote). */
typedef bool (*tendo__backward_fn)(const tendo__node *n, const tendo__tensor *grad, tendo__tensor **grad_in);

struct tendo__node {
    int refs;
    const char *op; /* the function that recorded it, for errors */
    tendo__backward_fn backward;
    int n_in;
    tendo__edge *next;        /* [n_in] */
    tendo__input_meta *in;    /* [n_in] */
    int n_saved;
    tendo__tensor **saved;    /* [n_saved]: handles of their own (NULL: not needed) */
    uint64_t *saved_version;  /* [n_saved]: their storage's version when saved */
    void *ctx;                /* the function's scalar params (a generated struct) */
    tendo_dtype dtype;        /* its result's (the dtype of the gradient it is given) */
    bool released;            /* backward has run through it: saved tensors freed */
    /* the engine's scratch, valid during one backward */
    int deps;
    bool seen;
    tendo__tensor *buf;
};

/* The few per-dtype functions the engine itself needs, written once per
 * float dtype by templates/api/grad.j2; tendo__grad_kit_of (src/gen/traits.c)
 * finds a dtype's. */
typedef struct {
    tendo__tensor *(*add)(const tendo__tensor *a, const tendo__tensor *b);
    tendo__tensor *(*sum)(const tendo__tensor *a, int dim, bool keepdim);
    tendo__tensor *(*full)(int ndim, const int64_t *shape, double value, tendo_device d);
    tendo__tensor *(*clone)(const tendo__tensor *a);
    tendo_status (*copy_into)(tendo__tensor *dst, const tendo__tensor *src);
} tendo__grad_kit;

/* The kit of a float dtype; NULL for the others. */
const tendo__grad_kit *tendo__grad_kit_of(tendo_dtype dtype);

/* ---- grad mode and the per-tensor state -------------------------------------- */

/* The calling thread's grad mode (on until set off). */
bool tendo__grad_enabled(void);
/* Sets it; returns the previous setting. */
bool tendo__set_grad_enabled(bool on);

/* True when t is a leaf that requires grad or a result recorded from one. */
static inline bool tendo__requires_grad(const tendo__tensor *t)
{
    return t && t->ag && (t->ag->leaf || t->ag->fn);
}

/* True when grad mode is on and t requires grad: a function given t must
 * record itself (or, writing in place, refuse). */
static inline bool tendo__grad_wanted(const tendo__tensor *t)
{
    return tendo__requires_grad(t) && tendo__grad_enabled();
}

/* A new handle on t's elements that shares its autograd state (a leaf's
 * gradient, a result's record), as the handles an optimizer keeps; NULL
 * (TENDO_ERR_OOM naming op) on failure. */
tendo__tensor *tendo__tensor_share(const char *op, const tendo__tensor *t);
/* Drops t's reference to its meta (tendo__tensor_free calls it). */
void tendo__grad_release(tendo__tensor *t);

/* The status of a function that writes into out (an _out form, copy_into,
 * scatter_out) given n tensors: TENDO_OK, or TENDO_ERR_INVALID_ARG naming
 * op when grad mode is on and one of them requires grad (such a write
 * would not be recorded). */
tendo_status tendo__grad_check_write(const char *op, int n, const tendo__tensor *const *ts);
/* Counts a write into t's storage: a tensor saved for backward before it
 * no longer has the values its formula needs. */
void tendo__grad_bump_version(const tendo__tensor *t);

/* ---- recording (the generated entry points) ---------------------------------------- */

/* A new node for op with n_in inputs, n_saved saved-tensor slots and a
 * zeroed ctx of ctx_size bytes; NULL (TENDO_ERR_OOM) on failure. */
tendo__node *tendo__node_new(const char *op, tendo__backward_fn backward, int n_in, int n_saved,
                             size_t ctx_size);
/* Makes input i of n: t's metadata, and an edge to t when it requires
 * grad.  t NULL (an optional param left out) makes an edge to nowhere. */
void tendo__node_input(tendo__node *n, int i, const tendo__tensor *t);
/* True when the gradient of input i is wanted. */
static inline bool tendo__node_wants(const tendo__node *n, int i)
{
    return n->next[i].node || n->next[i].leaf;
}
/* Saves t (NULL: nothing) in slot i as a handle of its own; false
 * (TENDO_ERR_OOM) on failure. */
bool tendo__node_save(tendo__node *n, int i, const tendo__tensor *t);
/* Makes n the record of result r and returns r; on failure (or r NULL)
 * frees both and returns NULL.  Takes the caller's reference to n. */
tendo__tensor *tendo__node_attach(tendo__node *n, tendo__tensor *r);
/* Drops a reference to n (and, with its last, to what it names). */
void tendo__node_unref(tendo__node *n);

/* ---- the public functions' cores (gen/registry/autograd.toml) ---------------------- */

tendo_status tendo__set_requires_grad(const char *op, tendo__tensor *t, bool on);
tendo_status tendo__backward(const char *op, const tendo__tensor *root, const tendo__tensor *grad);
tendo__tensor *tendo__grad_of(const char *op, const tendo__tensor *t);
void tendo__zero_grad(tendo__tensor *t);
tendo__tensor *tendo__detach(const char *op, const tendo__tensor *t);

/* ---- what derivative formulas use ------------------------------------------------- */

/* The temporaries of one backward function: every tensor a formula's calls
 * return is kept here and freed at the end, but the results taken out. */
#define TENDO__GRAD_SCOPE_MAX 48
typedef struct {
    int n;
    void *t[TENDO__GRAD_SCOPE_MAX];
    tendo_status status; /* the first failure, kept past later calls given NULL */
    char op[64], msg[256];
} tendo__grad_scope;

/* Keeps t (a tensor_<dt> * of any dtype) in s and returns it; NULL is kept
 * as the scope's first failure. */
void *tendo__grad_keep(tendo__grad_scope *s, void *t);
/* Takes result t out of s: a tensor s holds is removed from it, one it does
 * not (grad itself, a saved tensor) becomes a new handle.  NULL on failure. */
tendo__tensor *tendo__grad_take(tendo__grad_scope *s, const void *t);
/* Frees the temporaries s holds, keeping its first failure. */
void tendo__grad_scope_flush(tendo__grad_scope *s);
/* Frees what s holds; true when nothing failed, else false with the first
 * failure as the thread's error and every grad_in[0..n) freed and NULLed. */
bool tendo__grad_scope_end(tendo__grad_scope *s, tendo__tensor **grad_in, int n);

#endif
