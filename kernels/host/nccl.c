/* kernels/host/nccl.c - CUDA tensors' collectives over NCCL (the device
 * table's collective and comm_release slots).
 *
 * A tendo_comm makes its NCCL communicator at its first CUDA collective,
 * which every rank reaches at once (the ranks have agreed on the call,
 * src/comm/comm.c): rank 0 makes the id, MPI carries it to the others, and
 * each rank joins on the call's device, to which the communicator's CUDA
 * collectives then keep (one device per rank, as a PyTorch process group).
 * Each collective is queued on the calling thread's per-thread stream, as
 * tendo's kernels are: nothing waits for it.  NCCL has a type for every
 * dtype but the 16-bit integers (src/comm/comm.c sends those as i64); SUM
 * and PROD of signed integers use the unsigned type, so that they wrap. */
#include "config.h"

#include <string.h>

#include <nccl.h>

#include "comm/comm.h"
#include "core/traits.h"
#include "host/glue.h"

static bool nccl_ok(const char *op, ncclResult_t r, const char *what)
{
    if (r == ncclSuccess)
        return true;
    tendo__fail(TENDO_ERR_COMM, op, "%s: %s", what, ncclGetErrorString(r));
    return false;
}

/* NCCL's type for dt with op; false when it has none. */
static bool nccl_type(tendo_dtype dt, tendo_reduce_op op, ncclDataType_t *type)
{
    const tendo__traits *tr = tendo__traits_of(dt);
    bool wrap = op == TENDO_REDUCE_SUM || op == TENDO_REDUCE_PROD;
    const char *name = tr->name;

    switch (tr->compute) {
    case TENDO__COMPUTE_FLOAT:
        if (tr->own_compute)
            *type = ncclFloat32;
        else if (!strcmp(name, "f16"))
            *type = ncclFloat16;
        else if (!strcmp(name, "bf16"))
            *type = ncclBfloat16;
        else if (!strcmp(name, "f8e4m3"))
            *type = ncclFloat8e4m3;
        else if (!strcmp(name, "f8e5m2"))
            *type = ncclFloat8e5m2;
        else
            return false;
        return true;
    case TENDO__COMPUTE_DOUBLE:
        *type = ncclFloat64;
        return true;
    case TENDO__COMPUTE_INT64:
        if (dt == TENDO_BOOL) {
            *type = ncclUint8;
            return true;
        }
        if (tr->size == 2)
            return false;
        *type = tr->size == 1 ? (wrap ? ncclUint8 : ncclInt8)
                : tr->size == 4 ? (wrap ? ncclUint32 : ncclInt32)
                                : (wrap ? ncclUint64 : ncclInt64);
        return true;
    case TENDO__COMPUTE_UINT64:
        if (tr->size == 2)
            return false;
        *type = tr->size == 1 ? ncclUint8 : tr->size == 4 ? ncclUint32 : ncclUint64;
        return true;
    }
    return false;
}

static ncclRedOp_t nccl_op(tendo_dtype dt, tendo_reduce_op op)
{
    if (dt == TENDO_BOOL) /* 0 and 1: or is max, and is min */
        return op == TENDO_REDUCE_SUM || op == TENDO_REDUCE_MAX ? ncclMax : ncclMin;
    switch (op) {
    case TENDO_REDUCE_AVG:
        return ncclAvg;
    case TENDO_REDUCE_MAX:
        return ncclMax;
    case TENDO_REDUCE_MIN:
        return ncclMin;
    case TENDO_REDUCE_PROD:
        return ncclProd;
    case TENDO_REDUCE_SUM:
        break;
    }
    return ncclSum;
}

/* c's NCCL communicator, made on device d at c's first CUDA collective. */
static ncclComm_t comm_of(const char *op, tendo_comm *c, tendo_device d)
{
    ncclComm_t made = NULL;
    ncclUniqueId id;
    bool ok = true;

    pthread_mutex_lock(&c->nccl_lock);
    if (c->nccl) {
        if (c->nccl_device != d.index) {
            ok = false;
            tendo__fail(TENDO_ERR_DEVICE_MISMATCH, op,
                        "this communicator's CUDA collectives run on cuda:%d, not cuda:%d (use another "
                        "tendo_comm_world() for another device)",
                        c->nccl_device, d.index);
        }
    } else {
        memset(&id, 0, sizeof id);
        ok = (c->rank != 0 || nccl_ok(op, ncclGetUniqueId(&id), "ncclGetUniqueId")) &&
             tendo__comm_bcast_bytes(op, c, &id, sizeof id) &&
             nccl_ok(op, ncclCommInitRank(&made, c->size, id, c->rank), "ncclCommInitRank");
        if (ok) {
            c->nccl = made;
            c->nccl_device = d.index;
        }
    }
    made = ok ? c->nccl : NULL;
    pthread_mutex_unlock(&c->nccl_lock);
    return made;
}

bool tendo__cuda_collective(const char *op, const tendo_comm *cc, tendo_device d, const tendo__coll *w,
                            const tendo__tensor *const *ts, int nts)
{
    tendo_comm *c = (tendo_comm *)cc; /* its NCCL communicator is made here */
    cudaStream_t s = cudaStreamPerThread;
    ncclDataType_t type;
    ncclComm_t comm;
    ncclResult_t r = ncclSuccess;
    size_t n = (size_t)w->count;

    if (!nccl_type(w->dtype, w->op, &type))
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "NCCL has no type for %s", tendo_dtype_name(w->dtype)), false;
    if (!tendo__cuda_begin(op, ts, nts) || !(comm = comm_of(op, c, d)))
        return false;
    switch (w->kind) {
    case TENDO__COLL_ALL_REDUCE:
        r = ncclAllReduce(w->send, w->recv, n, type, nccl_op(w->dtype, w->op), comm, s);
        break;
    case TENDO__COLL_BROADCAST:
        r = ncclBroadcast(w->send, w->recv, n, type, w->root, comm, s);
        break;
    case TENDO__COLL_ALL_GATHER:
        r = ncclAllGather(w->send, w->recv, n, type, comm, s);
        break;
    case TENDO__COLL_REDUCE_SCATTER:
        r = ncclReduceScatter(w->send, w->recv, n, type, nccl_op(w->dtype, w->op), comm, s);
        break;
    case TENDO__COLL_BARRIER:
        break;
    }
    return tendo__cuda_end(ts, nts, nccl_ok(op, r, "NCCL"));
}

void tendo__cuda_comm_release(void *handle) { (void)ncclCommDestroy((ncclComm_t)handle); }
