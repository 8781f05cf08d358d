/* src/comm/comm.c - tendo_comm, and the collectives' tensor semantics: the
 * checks, any strides (a dense copy goes on the wire and comes back), the
 * ranks' agreement on the call before any data moves, and the transport
 * (MPI for CPU tensors, the CUDA backend's NCCL for CUDA tensors).
 * The typed entry points (tensor_<dt>_all_reduce, ...) are generated from
 * gen/registry/comm.toml and call the tendo__ functions at the end. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/device.h"
#include "core/index.h"
#include "core/traits.h"
#include "tendo/erased.h"

/* ---- the communicator ---------------------------------------------------------- */

tendo_comm *tendo_comm_world(void)
{
    static const char op[] = "comm_world";
    tendo_comm *c = tendo__calloc(1, sizeof *c);

    if (!c) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a communicator");
        return NULL;
    }
    if (pthread_mutex_init(&c->nccl_lock, NULL) != 0) {
        free(c);
        tendo__fail(TENDO_ERR_OOM, op, "cannot make a lock");
        return NULL;
    }
    c->nccl_device = -1;
    if (!tendo__mpi_join(op, &c->mpi, &c->rank, &c->size)) {
        pthread_mutex_destroy(&c->nccl_lock);
        free(c);
        return NULL;
    }
    return c;
}

int tendo_comm_rank(const tendo_comm *c) { return c ? c->rank : 0; }

int tendo_comm_size(const tendo_comm *c) { return c ? c->size : 1; }

const char *tendo_comm_backend(const tendo_comm *c) { return c && c->mpi ? "mpi" : "self"; }

void tendo_comm_free(tendo_comm *c)
{
    if (!c)
        return;
    if (c->nccl)
        tendo__device_ops_of(TENDO_CUDA)->comm_release(c->nccl);
    pthread_mutex_destroy(&c->nccl_lock);
    free(c);
}

void tendo_comm_abort(const tendo_comm *c, int code) { tendo__mpi_abort(c ? c->mpi : NULL, code); }

const char *tendo_reduce_op_name(tendo_reduce_op op)
{
    switch (op) {
    case TENDO_REDUCE_SUM:
        return "sum";
    case TENDO_REDUCE_AVG:
        return "avg";
    case TENDO_REDUCE_MAX:
        return "max";
    case TENDO_REDUCE_MIN:
        return "min";
    case TENDO_REDUCE_PROD:
        return "prod";
    }
    return "?";
}

bool tendo__comm_bcast_bytes(const char *op, const tendo_comm *c, void *buf, size_t n)
{
    return c->size == 1 || tendo__mpi_bcast_bytes(op, c->mpi, buf, n);
}

tendo_status tendo_comm_barrier(const tendo_comm *c)
{
    static const char op[] = "comm_barrier";
    tendo__coll w = {.kind = TENDO__COLL_BARRIER};

    if (!c)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "c is NULL");
    if (c->size == 1 || tendo__mpi_run(op, c->mpi, &w))
        return TENDO_OK;
    return tendo_error_status(tendo_last_error());
}

/* ---- one collective ----------------------------------------------------------- */

/* The names of the signature's values (comm.h), for the agreement's errors. */
static const char *const sig_names[TENDO__SIG_N] = {
    "the collective", "the dtype", "the reduce op", "the element count", "the root",
    "the device type", "the number of dims", "the dim", "the shape (other than dim)"};

/* What a call is: its kind and arguments, and the dense tensors it moves. */
typedef struct {
    const char *op;
    const tendo_comm *c;
    tendo__coll_kind kind;
    tendo_reduce_op rop;
    int root, dim;
    const tendo__tensor *t; /* the argument */
    tendo__tensor *target;  /* all_reduce and broadcast: t, which the result is written into */
    tendo_dtype wire;       /* the dtype on the wire: t's, or i64 for a 16-bit integer over NCCL */
    tendo__tensor *send;    /* dense, of dtype wire: target itself, a new handle of t's memory, or a copy */
    tendo__tensor *recv;    /* where the result lands: send (in place) or a new tensor */
} call;

static void call_free(call *k)
{
    if (k->recv != k->send)
        tendo__tensor_free(k->recv);
    if (k->send != k->target)
        tendo__tensor_free(k->send);
}

/* NCCL has no 16-bit integer type: those travel as i64 (sums and products
 * wrap the same way in the low 16 bits). */
static tendo_dtype wire_dtype(const tendo__tensor *t)
{
    const tendo__traits *tr = tendo__traits_of(t->dtype);
    bool integer = tr->compute == TENDO__COMPUTE_INT64 || tr->compute == TENDO__COMPUTE_UINT64;

    return t->storage->device.type == TENDO_CUDA && integer && tr->size == 2 ? TENDO_I64 : t->dtype;
}

/* t as a dense tensor of dtype `to` (a new handle: t's own memory when it
 * is already that), or NULL with the error set for op. */
static tendo__tensor *dense_as(const char *op, const tendo__tensor *t, tendo_dtype to)
{
    tendo__tensor *d;

    if (to == t->dtype) {
        d = tendo__contiguous(op, t);
    } else {
        d = (tendo__tensor *)(void *)tendo_tensor_to_dtype((const tendo_tensor *)(const void *)t, to);
        if (!d)
            tendo__fail_as(op);
    }
    return d;
}

/* The values every collective has (the rest zero). */
static void signature_head(tendo__coll_kind kind, tendo_dtype dt, tendo_reduce_op rop, int64_t count, int root,
                           tendo_device_type dev, int64_t *sig)
{
    memset(sig, 0, TENDO__SIG_N * sizeof *sig);
    sig[TENDO__SIG_KIND] = kind;
    sig[TENDO__SIG_DTYPE] = dt;
    sig[TENDO__SIG_OP] = kind == TENDO__COLL_ALL_REDUCE || kind == TENDO__COLL_REDUCE_SCATTER ? (int64_t)rop : -1;
    sig[TENDO__SIG_COUNT] = count;
    sig[TENDO__SIG_ROOT] = kind == TENDO__COLL_BROADCAST ? root : -1;
    sig[TENDO__SIG_DEVICE] = dev;
}

void tendo__all_reduce_signature(tendo_dtype dt, tendo_reduce_op rop, int64_t count, int64_t *sig)
{
    signature_head(TENDO__COLL_ALL_REDUCE, dt, rop, count, -1, TENDO_CPU, sig);
}

/* The signature of a call for the agreement. */
static void signature(const call *k, int64_t *sig)
{
    const tendo__tensor *t = k->t;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the shape, dim left out */

    if (!t) {
        memset(sig, 0, TENDO__SIG_N * sizeof *sig);
        sig[TENDO__SIG_KIND] = k->kind;
        return;
    }
    signature_head(k->kind, t->dtype, k->rop, t->numel, k->root, t->storage->device.type, sig);
    if (k->kind == TENDO__COLL_ALL_GATHER || k->kind == TENDO__COLL_REDUCE_SCATTER) {
        sig[TENDO__SIG_NDIM] = t->ndim;
        sig[TENDO__SIG_DIM] = k->dim;
        for (int i = 0; i < t->ndim; i++) {
            uint64_t v = i == k->dim && k->kind == TENDO__COLL_ALL_GATHER ? UINT64_MAX : (uint64_t)t->shape[i];
            for (int b = 0; b < 8; b++)
                h = (h ^ ((v >> (8 * b)) & 0xff)) * 1099511628211ull;
        }
        sig[TENDO__SIG_SHAPE] = (int64_t)(h >> 1);
    }
}

/* Whether rop reduces elements of dt (AVG: a float dtype's only). */
static bool check_reduce_op(const char *op, tendo_dtype dt, tendo_reduce_op rop)
{
    const tendo__traits *tr;

    if ((unsigned)rop > TENDO_REDUCE_PROD)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "op %d is no tendo_reduce_op", (int)rop), false;
    tr = rop == TENDO_REDUCE_AVG ? tendo__traits_of(dt) : NULL;
    if (tr && tr->compute != TENDO__COMPUTE_FLOAT && tr->compute != TENDO__COMPUTE_DOUBLE)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "TENDO_REDUCE_AVG needs a float dtype, not %s",
                           tendo_dtype_name(dt)),
               false;
    return true;
}

/* The checks every rank makes on its own arguments. */
static bool check_args(call *k)
{
    const char *op = k->op;
    const tendo__tensor *t = k->t;

    if (!tendo__check_tensor(op, "t", t))
        return false;
    if ((k->kind == TENDO__COLL_ALL_REDUCE || k->kind == TENDO__COLL_REDUCE_SCATTER) &&
        !check_reduce_op(op, t->dtype, k->rop))
        return false;
    if (k->kind == TENDO__COLL_BROADCAST && (k->root < 0 || k->root >= k->c->size))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "root %d is not a rank of a world of %d", k->root, k->c->size),
               false;
    if (k->kind == TENDO__COLL_ALL_GATHER || k->kind == TENDO__COLL_REDUCE_SCATTER) {
        tendo__shape_buf sb = tendo__shape_str(t->ndim, t->shape);
        if ((k->dim = tendo__wrap_dim(op, k->dim, t->ndim, t->shape)) < 0)
            return false;
        if (k->kind == TENDO__COLL_REDUCE_SCATTER && t->shape[k->dim] % k->c->size != 0)
            return tendo__fail(TENDO_ERR_SHAPE, op, "dim %d of %s does not split into %d equal chunks", k->dim, sb.s,
                               k->c->size),
                   false;
    }
    if (t->storage->device.type == TENDO_CUDA && k->c->size > 1 &&
        !tendo__device_ops_of(TENDO_CUDA)->collective)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "this build has no NCCL for CUDA tensors"), false;
    return true;
}

/* The dense d viewed as shape (n dims), permuted by perm and copied
 * dense: a new tensor, or NULL with the error set for op. */
static tendo__tensor *rearranged(const char *op, const tendo__tensor *d, int n, const int64_t *shape, const int *perm)
{
    tendo__tensor *v = tendo__view(d, n, shape), *p = v ? tendo__permute(v, perm) : NULL;
    tendo__tensor *out = p ? tendo__clone(op, p) : NULL;

    if (!out && (!v || !p))
        tendo__fail_as(op);
    tendo__tensor_free(p);
    tendo__tensor_free(v);
    return out;
}

/* The dense send buffer of k: the elements in the order they go on the
 * wire.  reduce_scatter's chunk r of dim must be contiguous block r: dim
 * is split into [size, chunk] and the size axis moved first. */
static tendo__tensor *make_send(call *k)
{
    const tendo__tensor *t = k->t;
    tendo__tensor *d, *out;
    int64_t shape[TENDO_MAX_DIMS + 1];
    int perm[TENDO_MAX_DIMS + 1], n = t->ndim + 1, j = 0;

    if (k->target && k->wire == t->dtype && tendo__tensor_contiguous(t))
        return k->target; /* in place, as it is (no handle to make and free on a small call's way) */
    if (k->kind != TENDO__COLL_REDUCE_SCATTER || k->dim == 0 || k->c->size == 1)
        return dense_as(k->op, t, k->wire);
    if (t->ndim + 1 > TENDO_MAX_DIMS) { /* no room for the split axis */
        tendo__fail(TENDO_ERR_UNSUPPORTED, k->op, "reduce_scatter along dim %d of a %d-dim tensor", k->dim, t->ndim);
        return NULL;
    }
    if (!(d = dense_as(k->op, t, k->wire)))
        return NULL;
    for (int i = 0; i < t->ndim; i++) {
        if (i == k->dim) {
            shape[j++] = k->c->size;
            shape[j++] = t->shape[i] / k->c->size;
        } else {
            shape[j++] = t->shape[i];
        }
    }
    perm[0] = k->dim;
    for (int i = 0, q = 1; i < n; i++)
        if (i != k->dim)
            perm[q++] = i;
    out = rearranged(k->op, d, n, shape, perm);
    tendo__tensor_free(d);
    return out;
}

/* The tensor the result lands in. */
static tendo__tensor *make_recv(call *k)
{
    const tendo__tensor *t = k->t;
    int64_t shape[TENDO_MAX_DIMS];

    if (k->kind == TENDO__COLL_ALL_REDUCE || k->kind == TENDO__COLL_BROADCAST)
        return k->send;
    memcpy(shape, t->shape, (size_t)t->ndim * sizeof *shape);
    if (k->kind == TENDO__COLL_ALL_GATHER) { /* [size, t's elements], rearranged after */
        int64_t g[2] = {k->c->size, t->numel};
        return tendo__tensor_new(k->op, k->wire, 2, g, t->storage->device);
    }
    shape[k->dim] /= k->c->size;
    return tendo__tensor_new(k->op, k->wire, t->ndim, shape, t->storage->device);
}

/* The dense buffers of k (send and recv made) for the transport. */
static tendo__coll coll_of(const call *k)
{
    return (tendo__coll){.kind = k->kind,
                         .dtype = k->wire,
                         .op = k->rop,
                         .count = k->kind == TENDO__COLL_REDUCE_SCATTER ? k->recv->numel : k->send->numel,
                         .root = k->root,
                         .send = tendo__tensor_data(k->send),
                         .recv = tendo__tensor_data(k->recv)};
}

/* Moves the data of a CUDA collective k (size > 1, arguments agreed)
 * over NCCL. */
static bool transport_cuda(call *k, const tendo__coll *w)
{
    const tendo__tensor *ts[2] = {k->recv, k->send};

    return tendo__device_ops_of(TENDO_CUDA)->collective(k->op, k->c, k->send->storage->device, w, ts,
                                                        k->recv == k->send ? 1 : 2);
}

/* The common part of every collective: checks, buffers, agreement and
 * transport (a CPU collective's with the agreement, mpi.c).  False with
 * the error set (and nothing in k to free). */
static bool run(call *k)
{
    bool ok = check_args(k), cpu = false;
    int64_t sig[TENDO__SIG_N];
    tendo__coll w = {0};

    if (ok) {
        k->wire = wire_dtype(k->t);
        ok = (k->send = make_send(k)) != NULL && (k->recv = make_recv(k)) != NULL;
    }
    if (ok) {
        w = coll_of(k);
        cpu = k->send->storage->device.type != TENDO_CUDA;
    }
    signature(k, sig);
    if (k->c->size > 1) {
        ok = tendo__mpi_agree(k->op, k->c->mpi, sig, sig_names, TENDO__SIG_N, ok, cpu ? &w : NULL) &&
             (cpu || transport_cuda(k, &w));
    }
    if (!ok)
        call_free(k);
    return ok;
}

/* Writes the dense result r back into t (any strides; converted from the
 * wire dtype). */
static bool write_back(const char *op, tendo__tensor *t, tendo__tensor *r)
{
    tendo__tensor *conv = NULL;
    bool ok;

    if (r->storage == t->storage && tendo__tensor_data(r) == tendo__tensor_data(t) && r->dtype == t->dtype)
        return true; /* it was done in place */
    if (r->dtype != t->dtype && !(conv = dense_as(op, r, t->dtype)))
        return false;
    ok = tendo__copy_into(op, t, conv ? conv : r) == TENDO_OK;
    tendo__tensor_free(conv);
    return ok;
}

static tendo_status status_now(void) { return tendo_error_status(tendo_last_error()); }

static bool check_comm(const char *op, const tendo_comm *c)
{
    return c ? true : (tendo__fail(TENDO_ERR_INVALID_ARG, op, "c is NULL"), false);
}

/* all_reduce and broadcast: the result written back into t.  In a world
 * of one both leave t as it is. */
static tendo_status in_place(call *k, tendo__tensor *t)
{
    bool ok;

    if (!check_comm(k->op, k->c))
        return status_now();
    if (k->c->size == 1)
        return check_args(k) ? TENDO_OK : status_now();
    if (!run(k))
        return status_now();
    ok = write_back(k->op, t, k->recv);
    call_free(k);
    return ok ? TENDO_OK : status_now();
}

/* An all_reduce of a dense CPU tensor between processes (a training
 * step's gradient buckets, a tensor-parallel decoder's activations): what
 * run() does for it, without a call to build, since its own memory is
 * what goes on the wire and where the result lands.  The signature is
 * signature()'s; a small one's data travel with the agreement (mpi.c).
 * (Two ranks, 1 KiB f32 all_reduces in a loop against MPI_Allreduce:
 * 0.91-0.93 of its speed through run(), 0.95-0.98 this way, three runs.) */
static tendo_status dense_cpu_all_reduce(const char *op, const tendo_comm *c, tendo__tensor *t, tendo_reduce_op rop)
{
    void *data = tendo__tensor_data(t);
    tendo__coll w = {.kind = TENDO__COLL_ALL_REDUCE, .dtype = t->dtype, .op = rop, .count = t->numel, .send = data,
                     .recv = data};
    int64_t sig[TENDO__SIG_N];
    bool ok = check_reduce_op(op, t->dtype, rop);

    tendo__all_reduce_signature(t->dtype, rop, t->numel, sig);
    ok = tendo__mpi_agree(op, c->mpi, sig, sig_names, TENDO__SIG_N, ok, &w);
    return ok ? TENDO_OK : status_now();
}

tendo_status tendo__all_reduce(const char *op, const tendo_comm *c, tendo__tensor *t, tendo_reduce_op rop)
{
    call k = {.op = op, .c = c, .kind = TENDO__COLL_ALL_REDUCE, .rop = rop, .t = t, .target = t};

    if (c && c->size > 1 && t && t->storage->device.type == TENDO_CPU && tendo__tensor_contiguous(t))
        return dense_cpu_all_reduce(op, c, t, rop);
    return in_place(&k, t);
}

tendo_status tendo__broadcast(const char *op, const tendo_comm *c, tendo__tensor *t, int root)
{
    call k = {.op = op, .c = c, .kind = TENDO__COLL_BROADCAST, .root = root, .t = t, .target = t};

    return in_place(&k, t);
}

/* The result of k as a new tensor of t's dtype and the result's shape:
 * recv itself, converted back from the wire dtype when it differs. */
static tendo__tensor *take_result(call *k, tendo__tensor *r)
{
    tendo__tensor *out = r;

    if (r->dtype != k->t->dtype) {
        out = dense_as(k->op, r, k->t->dtype);
        tendo__tensor_free(r);
    }
    return out;
}

tendo__tensor *tendo__all_gather(const char *op, const tendo_comm *c, const tendo__tensor *t, int dim)
{
    call k = {.op = op, .c = c, .kind = TENDO__COLL_ALL_GATHER, .dim = dim, .t = t};
    int64_t shape[TENDO_MAX_DIMS + 1];
    int perm[TENDO_MAX_DIMS + 1];
    tendo__tensor *r;

    if (!check_comm(op, c))
        return NULL;
    if (c->size == 1)
        return check_args(&k) ? tendo__clone(op, t) : NULL;
    if (!run(&k))
        return NULL;
    /* recv is [size, t's shape]: move the rank axis next to dim, merge them */
    shape[0] = c->size;
    memcpy(shape + 1, t->shape, (size_t)t->ndim * sizeof *shape);
    for (int i = 0, q = 0; i <= t->ndim; i++) {
        if (i == k.dim)
            perm[q++] = 0;
        if (i < t->ndim)
            perm[q++] = i + 1;
    }
    r = rearranged(op, k.recv, t->ndim + 1, shape, perm);
    if (r) {
        int64_t rs[TENDO_MAX_DIMS];
        tendo__tensor *m;

        memcpy(rs, t->shape, (size_t)t->ndim * sizeof *rs);
        rs[k.dim] *= c->size;
        m = tendo__view(r, t->ndim, rs);
        if (!m)
            tendo__fail_as(op);
        tendo__tensor_free(r);
        r = m;
    }
    call_free(&k);
    return r ? take_result(&k, r) : NULL;
}

tendo__tensor *tendo__reduce_scatter(const char *op, const tendo_comm *c, const tendo__tensor *t, int dim,
                                     tendo_reduce_op rop)
{
    call k = {.op = op, .c = c, .kind = TENDO__COLL_REDUCE_SCATTER, .rop = rop, .dim = dim, .t = t};
    tendo__tensor *r;

    if (!check_comm(op, c))
        return NULL;
    if (c->size == 1)
        return check_args(&k) ? tendo__clone(op, t) : NULL;
    if (!run(&k))
        return NULL;
    r = k.recv;
    k.recv = k.send; /* keep recv: call_free frees send only */
    call_free(&k);
    return take_result(&k, r);
}
