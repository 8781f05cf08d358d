/* src/core/autograd.c - the autograd record and the engine that walks it
 * (src/core/autograd.h): grad mode, leaves and their gradients, nodes, and
 * tendo__backward.
 *
 * backward is all or nothing for the leaves: every gradient a leaf receives
 * is summed aside (allocations that may fail) and only then copied into the
 * leaves' gradients (no allocation), so a failed backward leaves them as
 * they were, and the record is released only after a backward succeeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/autograd.h"
#include "core/internal.h"
#include "core/traits.h"
#include "tendo/erased.h"

/* ---- grad mode ------------------------------------------------------------------- */

static _Thread_local bool grad_off; /* zero-initialised: grad mode starts on */

bool tendo__grad_enabled(void)
{
    return !grad_off;
}

bool tendo__set_grad_enabled(bool on)
{
    bool was = !grad_off;

    grad_off = !on;
    return was;
}

bool tendo_set_grad_enabled(bool on)
{
    return tendo__set_grad_enabled(on);
}

bool tendo_is_grad_enabled(void)
{
    return tendo__grad_enabled();
}

/* ---- metas ------------------------------------------------------------------------- */

static tendo__grad_meta *meta_new(const char *op)
{
    tendo__grad_meta *m = tendo__calloc(1, sizeof *m);

    if (!m)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory recording a gradient");
    else
        m->refs = 1;
    return m;
}

static void meta_unref(tendo__grad_meta *m)
{
    if (!m || --m->refs > 0)
        return;
    tendo__tensor_free(m->grad);
    tendo__node_unref(m->fn);
    free(m);
}

void tendo__grad_release(tendo__tensor *t)
{
    meta_unref(t->ag);
    t->ag = NULL;
}

tendo_status tendo__grad_check_write(const char *op, int n, const tendo__tensor *const *ts)
{
    if (!tendo__grad_enabled())
        return TENDO_OK;
    for (int i = 0; i < n; i++)
        if (tendo__requires_grad(ts[i]))
            return tendo__fail(TENDO_ERR_INVALID_ARG, op,
                               "writes in place, which autograd does not record, and an operand requires grad "
                               "(turn grad mode off, or detach it)");
    return TENDO_OK;
}

void tendo__grad_bump_version(const tendo__tensor *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->storage->version, 1, memory_order_relaxed);
}

/* ---- nodes ------------------------------------------------------------------------- */

/* One allocation: the node, then its edges, input metas, saved handles and
 * versions, and its ctx (aligned for any scalar). */
tendo__node *tendo__node_new(const char *op, tendo__backward_fn backward, int n_in, int n_saved,
                             size_t ctx_size)
{
    size_t off_next = (sizeof(tendo__node) + 15) & ~(size_t)15;
    size_t off_in = off_next + (size_t)n_in * sizeof(tendo__edge);
    size_t off_saved = off_in + (size_t)n_in * sizeof(tendo__input_meta);
    size_t off_ver = off_saved + (size_t)n_saved * sizeof(tendo__tensor *);
    size_t off_ctx = (off_ver + (size_t)n_saved * sizeof(uint64_t) + 15) & ~(size_t)15;
    char *p = tendo__calloc(1, off_ctx + ctx_size);
    tendo__node *n = (tendo__node *)(void *)p;

    if (!p) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory recording a gradient");
        return NULL;
    }
    n->refs = 1;
    n->op = op;
    n->backward = backward;
    n->n_in = n_in;
    n->next = (tendo__edge *)(void *)(p + off_next);
    n->in = (tendo__input_meta *)(void *)(p + off_in);
    n->n_saved = n_saved;
    n->saved = (tendo__tensor **)(void *)(p + off_saved);
    n->saved_version = (uint64_t *)(void *)(p + off_ver);
    n->ctx = ctx_size ? p + off_ctx : NULL;
    return n;
}

void tendo__node_input(tendo__node *n, int i, const tendo__tensor *t)
{
    tendo__input_meta *m = &n->in[i];

    if (!t)
        return;
    m->dtype = t->dtype;
    m->ndim = t->ndim;
    memcpy(m->shape, t->shape, sizeof m->shape);
    m->device = t->storage->device;
    if (!tendo__requires_grad(t))
        return;
    if (t->ag->leaf) {
        n->next[i].leaf = t->ag;
        t->ag->refs++;
    } else {
        n->next[i].node = t->ag->fn;
        t->ag->fn->refs++;
    }
}

bool tendo__node_save(tendo__node *n, int i, const tendo__tensor *t)
{
    if (!t)
        return true;
    n->saved[i] = tendo__tensor_alias(n->op, t);
    if (!n->saved[i])
        return false;
    n->saved_version[i] = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
    return true;
}

tendo__tensor *tendo__node_attach(tendo__node *n, tendo__tensor *r)
{
    tendo__grad_meta *m = r ? meta_new(n->op) : NULL;

    if (!m) {
        tendo__node_unref(n);
        tendo__tensor_free(r);
        return NULL;
    }
    m->fn = n;
    n->dtype = r->dtype;
    r->ag = m;
    return r;
}

static void free_saved(tendo__node *n)
{
    for (int i = 0; i < n->n_saved; i++) {
        tendo__tensor_free(n->saved[i]);
        n->saved[i] = NULL;
    }
}

/* Iterative, so that freeing a record thousands of nodes deep takes no
 * stack: the nodes to free are chained through their buf field. */
void tendo__node_unref(tendo__node *n)
{
    tendo__node *todo = NULL;

    if (!n || --n->refs > 0)
        return;
    n->buf = (tendo__tensor *)(void *)todo;
    todo = n;
    while (todo) {
        tendo__node *x = todo;

        todo = (tendo__node *)(void *)x->buf;
        for (int i = 0; i < x->n_in; i++) {
            tendo__node *m = x->next[i].node;

            meta_unref(x->next[i].leaf);
            if (m && --m->refs == 0) {
                m->buf = (tendo__tensor *)(void *)todo;
                todo = m;
            }
        }
        free_saved(x);
        free(x);
    }
}

/* ---- the public functions' cores ------------------------------------------------------ */

tendo_status tendo__set_requires_grad(const char *op, tendo__tensor *t, bool on)
{
    if (!tendo__check_tensor(op, "t", t))
        return TENDO_ERR_INVALID_ARG;
    if (t->ag && t->ag->fn)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op,
                           "t is the result of %s, not a leaf: only a leaf's requires_grad can be set "
                           "(detach it first)", t->ag->fn->op);
    if (on && !t->ag) {
        t->ag = meta_new(op);
        if (!t->ag)
            return TENDO_ERR_OOM;
    }
    if (t->ag)
        t->ag->leaf = on;
    if (!on && t->ag && !t->ag->grad)
        tendo__grad_release(t);
    return TENDO_OK;
}

tendo__tensor *tendo__tensor_share(const char *op, const tendo__tensor *t)
{
    tendo__tensor *h = tendo__tensor_alias(op, t);

    if (h && t->ag) {
        h->ag = t->ag;
        h->ag->refs++;
    }
    return h;
}

tendo__tensor *tendo__grad_of(const char *op, const tendo__tensor *t)
{
    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    if (!t->ag || !t->ag->grad) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "t has no gradient: %s",
                    !t->ag ? "it does not require grad" :
                    t->ag->fn ? "it is not a leaf (only leaves keep theirs)" : "no backward has reached it yet");
        return NULL;
    }
    return tendo__tensor_alias(op, t->ag->grad);
}

void tendo__zero_grad(tendo__tensor *t)
{
    if (!t || !t->ag)
        return;
    tendo__tensor_free(t->ag->grad);
    t->ag->grad = NULL;
    if (!t->ag->leaf && !t->ag->fn)
        tendo__grad_release(t);
}

tendo__tensor *tendo__detach(const char *op, const tendo__tensor *t)
{
    if (!tendo__check_tensor(op, "t", t))
        return NULL;
    return tendo__tensor_alias(op, t);
}

/* ---- what derivative formulas use ------------------------------------------------------- */

/* e's message without the "op: " that tendo__fail puts before it. */
static const char *error_body(const tendo_error *e)
{
    const char *m = tendo_error_message(e), *op = tendo_error_op(e);
    size_t n = strlen(op);

    return n && !strncmp(m, op, n) && m[n] == ':' && m[n + 1] == ' ' ? m + n + 2 : m;
}

void *tendo__grad_keep(tendo__grad_scope *s, void *t)
{
    if (!t) {
        if (s->status == TENDO_OK) {
            s->status = tendo_error_status(tendo_last_error());
            if (s->status == TENDO_OK)
                s->status = TENDO_ERR_INVALID_ARG;
            snprintf(s->op, sizeof s->op, "%s", tendo_error_op(tendo_last_error()));
            snprintf(s->msg, sizeof s->msg, "%s", error_body(tendo_last_error()));
        }
        return NULL;
    }
    if (s->n == TENDO__GRAD_SCOPE_MAX) {
        /* the generator sizes formulas well below this; never silently leak */
        tendo__tensor_free(t);
        if (s->status == TENDO_OK) {
            s->status = TENDO_ERR_INVALID_ARG;
            snprintf(s->op, sizeof s->op, "backward");
            snprintf(s->msg, sizeof s->msg, "a derivative formula made more than %d tensors",
                     TENDO__GRAD_SCOPE_MAX);
        }
        return NULL;
    }
    s->t[s->n++] = t;
    return t;
}

tendo__tensor *tendo__grad_take(tendo__grad_scope *s, const void *t)
{
    const tendo__tensor *x = t;

    if (!x) {
        tendo__grad_keep(s, NULL);
        return NULL;
    }
    for (int i = s->n - 1; i >= 0; i--)
        if (s->t[i] == t) {
            s->t[i] = s->t[--s->n];
            return (tendo__tensor *)(void *)t;
        }
    x = tendo__tensor_alias("backward", x);
    if (!x)
        tendo__grad_keep(s, NULL);
    return (tendo__tensor *)x;
}

void tendo__grad_scope_flush(tendo__grad_scope *s)
{
    for (int i = 0; i < s->n; i++)
        tendo__tensor_free(s->t[i]);
    s->n = 0;
}

bool tendo__grad_scope_end(tendo__grad_scope *s, tendo__tensor **grad_in, int n)
{
    tendo__grad_scope_flush(s);
    if (s->status == TENDO_OK)
        return true;
    for (int i = 0; i < n; i++) {
        tendo__tensor_free(grad_in[i]);
        grad_in[i] = NULL;
    }
    tendo__fail(s->status, s->op, "%s", s->msg);
    return false;
}

/* ---- the engine ----------------------------------------------------------------------- */

/* A growable array of pointers. */
typedef struct {
    void **v;
    int n, cap;
} ptrs;

static bool push(ptrs *a, void *p)
{
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 64;
        void **v = tendo__realloc(a->v, (size_t)cap * sizeof *v);

        if (!v)
            return tendo__fail(TENDO_ERR_OOM, "backward", "out of memory walking the record"), false;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = p;
    return true;
}

/* g summed over the dims it was broadcast along to reach m's shape: a new
 * tensor (g itself is freed), or NULL with the error set. */
static tendo__tensor *sum_to(tendo__tensor *g, const tendo__input_meta *m, const char *op)
{
    const tendo__grad_kit *kit = tendo__grad_kit_of(g->dtype);
    int lead = g->ndim - m->ndim;
    bool ok = lead >= 0 && g->dtype == m->dtype;

    for (int i = 0; ok && i < m->ndim; i++)
        ok = m->shape[i] == g->shape[lead + i] || m->shape[i] == 1;
    if (!ok) {
        tendo__fail(TENDO_ERR_SHAPE, op, "backward: a %s gradient of shape %s for an input of shape %s "
                    "(a derivative formula is wrong)", tendo_dtype_name(g->dtype),
                    tendo__shape_str(g->ndim, g->shape).s, tendo__shape_str(m->ndim, m->shape).s);
        tendo__tensor_free(g);
        return NULL;
    }
    while (g && g->ndim > m->ndim) {
        tendo__tensor *s = kit->sum(g, 0, false);

        tendo__tensor_free(g);
        g = s;
    }
    for (int i = 0; g && i < m->ndim; i++)
        if (m->shape[i] == 1 && g->shape[i] != 1) {
            tendo__tensor *s = kit->sum(g, i, true);

            tendo__tensor_free(g);
            g = s;
        }
    return g;
}

/* Whether the gradients of dtype dt are summed in f32 and rounded to dt
 * once (a narrow float: bf16, f16, the fp8s; as PyTorch's autocast sums in
 * f32 what it computes in them), when this build has f32. */
static bool sums_in_f32(tendo_dtype dt)
{
    const tendo__traits *t = tendo__traits_of(dt);

    return !t->own_compute && t->compute == TENDO__COMPUTE_FLOAT && tendo__grad_kit_of(TENDO_F32);
}

/* t converted to dtype dt (a new tensor; t itself is left alone), or NULL
 * with the error set. */
static tendo__tensor *converted(const tendo__tensor *t, tendo_dtype dt)
{
    return (tendo__tensor *)(void *)tendo_tensor_to_dtype((const tendo_tensor *)(const void *)t, dt);
}

/* t (taken) as dtype dt: t itself when it has it, else converted. */
static tendo__tensor *as_dtype(tendo__tensor *t, tendo_dtype dt)
{
    tendo__tensor *c;

    if (!t || t->dtype == dt)
        return t;
    c = converted(t, dt);
    tendo__tensor_free(t);
    return c;
}

/* *acc += g, out of place: *acc becomes a new tensor (g is taken); in f32
 * for a narrow float (as_dtype(*acc, its dtype) rounds the sum once). */
static bool accumulate(tendo__tensor **acc, tendo__tensor *g)
{
    tendo__tensor *s;

    if (!*acc) {
        *acc = g;
        return true;
    }
    if (sums_in_f32(g->dtype) && (!(*acc = as_dtype(*acc, TENDO_F32)) || !(g = as_dtype(g, TENDO_F32)))) {
        tendo__tensor_free(g);
        return false;
    }
    s = tendo__grad_kit_of(g->dtype)->add(*acc, g);
    tendo__tensor_free(g);
    if (!s)
        return false;
    tendo__tensor_free(*acc);
    *acc = s;
    return true;
}

/* What one backward gives each leaf, summed aside until the end. */
typedef struct {
    tendo__grad_meta *leaf;
    tendo__tensor *g;
    tendo_dtype dtype; /* the leaf's (g may be an f32 sum) */
} leaf_grad;

static bool give_leaf(leaf_grad **lg, int *nlg, int *cap, tendo__grad_meta *leaf, tendo__tensor *g)
{
    for (int i = 0; i < *nlg; i++)
        if ((*lg)[i].leaf == leaf)
            return accumulate(&(*lg)[i].g, g);
    if (*nlg == *cap) {
        int c = *cap ? 2 * *cap : 16;
        leaf_grad *v = tendo__realloc(*lg, (size_t)c * sizeof *v);

        if (!v) {
            tendo__tensor_free(g);
            return tendo__fail(TENDO_ERR_OOM, "backward", "out of memory walking the record"), false;
        }
        *lg = v;
        *cap = c;
    }
    (*lg)[(*nlg)++] = (leaf_grad){leaf, g, g->dtype};
    return true;
}

/* The sum a leaf will hold: its gradient so far plus g (a new tensor of
 * its own storage, of the leaf's dtype), computed now so that the commit
 * cannot fail.  A narrow float's is summed in f32 and rounded once. */
static bool stage_leaf(leaf_grad *x)
{
    tendo__tensor *old = x->leaf->grad, *s;

    if (old && sums_in_f32(x->dtype)) {
        tendo__tensor *o32 = converted(old, TENDO_F32);

        x->g = as_dtype(x->g, TENDO_F32);
        s = o32 && x->g ? tendo__grad_kit_of(TENDO_F32)->add(o32, x->g) : NULL;
        tendo__tensor_free(o32);
        s = as_dtype(s, x->dtype);
    } else if (x->g->dtype != x->dtype) { /* an f32 sum: rounded into a tensor of its own */
        s = converted(x->g, x->dtype);
    } else {
        const tendo__grad_kit *kit = tendo__grad_kit_of(x->dtype);

        s = old ? kit->add(old, x->g) : kit->clone(x->g);
    }
    if (!s)
        return false;
    tendo__tensor_free(x->g);
    x->g = s;
    return true;
}

static const char *saved_modified(const tendo__node *n)
{
    for (int i = 0; i < n->n_saved; i++)
        if (n->saved[i] &&
            atomic_load_explicit(&n->saved[i]->storage->version, memory_order_relaxed) != n->saved_version[i])
            return n->op;
    return NULL;
}

tendo_status tendo__backward(const char *op, const tendo__tensor *root, const tendo__tensor *grad)
{
    ptrs nodes = {0}, ready = {0};
    leaf_grad *lg = NULL;
    int nlg = 0, caplg = 0;
    tendo__tensor *seed = NULL;
    tendo__tensor **gin = NULL;
    int maxin = 1;
    tendo_status st = TENDO_OK;
    const tendo__grad_kit *kit;
    bool was;

    if (!tendo__check_tensor(op, "root", root))
        return TENDO_ERR_INVALID_ARG;
    if (!tendo__requires_grad(root))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "root does not require grad: no leaf that requires grad "
                           "reaches it (or it was computed with grad mode off)");
    if (root->ag->fn && root->ag->fn->released)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "the record behind root was released by an earlier backward");
    kit = tendo__grad_kit_of(root->dtype);
    if (grad) {
        if (grad->dtype != root->dtype || grad->ndim != root->ndim ||
            memcmp(grad->shape, root->shape, (size_t)root->ndim * sizeof *root->shape) != 0 ||
            !tendo_device_equal(grad->storage->device, root->storage->device))
            return tendo__fail(TENDO_ERR_SHAPE, op, "grad (%s %s) must have root's dtype, shape and device (%s %s)",
                               tendo_dtype_name(grad->dtype), tendo__shape_str(grad->ndim, grad->shape).s,
                               tendo_dtype_name(root->dtype), tendo__shape_str(root->ndim, root->shape).s);
    } else if (root->numel != 1) {
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "grad may be NULL only for a root of one element; root has "
                           "shape %s", tendo__shape_str(root->ndim, root->shape).s);
    }

    was = tendo__set_grad_enabled(false);
    seed = grad ? tendo__tensor_alias(op, grad)
                : kit->full(root->ndim, root->shape, 1.0, root->storage->device);
    if (!seed) {
        st = tendo_error_status(tendo_last_error());
        goto out;
    }
    if (!root->ag->fn) { /* backward of a leaf: its gradient is grad */
        tendo__tensor *g = seed;

        seed = NULL;
        if (!give_leaf(&lg, &nlg, &caplg, root->ag, g)) {
            st = tendo_error_status(tendo_last_error());
            goto out;
        }
        goto stage;
    }

    /* every node root reaches, and how many edges reach each */
    if (!push(&nodes, root->ag->fn)) {
        st = TENDO_ERR_OOM;
        goto out;
    }
    root->ag->fn->seen = true;
    for (int k = 0; k < nodes.n; k++) {
        tendo__node *n = nodes.v[k];

        maxin = n->n_in > maxin ? n->n_in : maxin;
        for (int i = 0; i < n->n_in; i++) {
            tendo__node *m = n->next[i].node;

            if (!m)
                continue;
            if (m->released) {
                st = tendo__fail(TENDO_ERR_INVALID_ARG, op, "part of the record (%s) was released by an earlier "
                                 "backward", m->op);
                goto out;
            }
            m->deps++;
            if (!m->seen) {
                m->seen = true;
                if (!push(&nodes, m)) {
                    st = TENDO_ERR_OOM;
                    goto out;
                }
            }
        }
    }
    for (int k = 0; k < nodes.n; k++) {
        const char *bad = saved_modified(nodes.v[k]);

        if (bad) {
            st = tendo__fail(TENDO_ERR_INVALID_ARG, op, "a tensor that %s saved for backward has been modified in "
                             "place since (its storage's version changed)", bad);
            goto out;
        }
    }

    gin = tendo__calloc((size_t)maxin, sizeof *gin);
    if (!gin) {
        st = tendo__fail(TENDO_ERR_OOM, op, "out of memory walking the record");
        goto out;
    }
    /* in topological order: a node runs when every edge into it has delivered */
    root->ag->fn->buf = seed;
    seed = NULL;
    if (!push(&ready, root->ag->fn)) {
        st = TENDO_ERR_OOM;
        goto out;
    }
    while (ready.n) {
        tendo__node *n = ready.v[--ready.n];
        int nin = n->n_in;

        memset(gin, 0, (size_t)nin * sizeof *gin);
        if (!(n->buf = as_dtype(n->buf, n->dtype)) || !n->backward(n, n->buf, gin)) {
            st = tendo_error_status(tendo_last_error());
            goto out;
        }
        tendo__tensor_free(n->buf);
        n->buf = NULL;
        for (int i = 0; i < nin; i++) {
            tendo__edge *e = &n->next[i];
            tendo__tensor *g = gin[i];

            gin[i] = NULL;
            if (!g || (!e->node && !e->leaf)) {
                tendo__tensor_free(g);
                continue;
            }
            if (g->ndim != n->in[i].ndim ||
                memcmp(g->shape, n->in[i].shape, (size_t)g->ndim * sizeof *g->shape) != 0) {
                g = sum_to(g, &n->in[i], n->op);
            }
            if (!g || (e->leaf ? !give_leaf(&lg, &nlg, &caplg, e->leaf, g) : !accumulate(&e->node->buf, g))) {
                for (int j = i + 1; j < nin; j++)
                    tendo__tensor_free(gin[j]);
                st = tendo_error_status(tendo_last_error());
                goto out;
            }
            if (e->node && --e->node->deps == 0 && !push(&ready, e->node)) {
                for (int j = i + 1; j < nin; j++)
                    tendo__tensor_free(gin[j]);
                st = TENDO_ERR_OOM;
                goto out;
            }
        }
    }
stage:
    for (int i = 0; i < nlg; i++)
        if (!stage_leaf(&lg[i])) {
            st = tendo_error_status(tendo_last_error());
            goto out;
        }
    /* nothing below allocates: every sum is made */
    for (int i = 0; i < nlg; i++) {
        tendo__grad_meta *leaf = lg[i].leaf;

        if (leaf->grad && tendo__grad_kit_of(leaf->grad->dtype)->copy_into(leaf->grad, lg[i].g) == TENDO_OK) {
            tendo__tensor_free(lg[i].g);
        } else {
            tendo__tensor_free(leaf->grad);
            leaf->grad = lg[i].g;
        }
        lg[i].g = NULL;
    }
    for (int k = 0; k < nodes.n; k++) {
        tendo__node *n = nodes.v[k];

        free_saved(n);
        n->released = true;
    }

out:
    if (st != TENDO_OK) {
        /* a failure inside a derivative or a sum is backward's, naming where it happened */
        const tendo_error *e = tendo_last_error();

        if (strcmp(tendo_error_op(e), op) != 0) {
            char msg[512];

            snprintf(msg, sizeof msg, "%s", tendo_error_message(e)); /* "where: what" */
            tendo__fail(st, op, "%s", msg);
        }
    }
    for (int k = 0; k < nodes.n; k++) {
        tendo__node *n = nodes.v[k];

        tendo__tensor_free(n->buf);
        n->buf = NULL;
        n->deps = 0;
        n->seen = false;
    }
    for (int i = 0; i < nlg; i++)
        tendo__tensor_free(lg[i].g);
    tendo__tensor_free(seed);
    free(gin);
    free(lg);
    free(nodes.v);
    free(ready.v);
    tendo__set_grad_enabled(was);
    return st;
}
