/* kernels/sim/nccl.c - the NCCL calls of tendo on the simulated devices,
 * carried between processes by MPI with the data staged through host
 * memory (a simulated device's memory is host memory already).
 *
 * What it proves: tendo's NCCL path - the id made by rank 0 and sent over
 * MPI, one communicator per rank and device, the types and reduce ops
 * tendo picks for each dtype, buffers that are device memory of the
 * communicator's device, and stream order (each collective is queued on
 * its stream like a kernel, so TENDO_SIM_DEFER=1 shows a missing
 * synchronisation).  What it cannot: NCCL's own transports, its speed,
 * and its rounding of 16- and 8-bit sums (a ring rounds at each hop; here
 * every rank's data is gathered and reduced in rank order, rounded once).
 *
 * ncclCommInitRank splits MPI_COMM_WORLD by the id: every process of the
 * MPI job must make the communicator together (tendo's communicators are
 * the whole world).  Without MPI only a world of one can be made.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nccl.h>

#include "comm/comm.h"
#include "core/traits.h"
#include "sim/sim.h"

#ifdef TENDO_HAVE_MPI
#include <mpi.h>
#endif

#define COMM_MAGIC 0x6e63636cu /* "nccl" */
#define ID_MAGIC 0x73696d6eccull

struct ncclComm {
    unsigned magic;
    int rank, nranks, device;
    ncclResult_t async; /* a failure seen when queued work ran */
#ifdef TENDO_HAVE_MPI
    MPI_Comm mpi;
#endif
};

static bool comm_ok(ncclComm_t c) { return c && c->magic == COMM_MAGIC; }

const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (simulated)";
    case ncclSystemError:
        return "unhandled system error (simulated: MPI failed)";
    case ncclInternalError:
        return "internal error (simulated)";
    case ncclInvalidArgument:
        return "invalid argument (simulated)";
    case ncclInvalidUsage:
        return "invalid usage (simulated)";
    default:
        return "unknown result code (simulated)";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return "";
}

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    static unsigned long long made;
    unsigned long long v[3] = {ID_MAGIC, (unsigned long long)getpid(), __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED)};

    if (!uniqueId)
        return ncclInvalidArgument;
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, v, sizeof v);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    unsigned long long v[3];
    ncclComm_t c;

    memcpy(v, commId.internal, sizeof v);
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks || v[0] != ID_MAGIC)
        return ncclInvalidArgument;
    if (tendo__sim_device_count() == 0 || tendo__sim_sticky())
        return ncclUnhandledCudaError;
    if (!(c = calloc(1, sizeof *c)))
        return ncclSystemError;
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->device = tendo__sim_current();
    if (nranks > 1) {
#ifdef TENDO_HAVE_MPI
        int inited = 0, size = 0, got = -1;
        /* the color: the id's maker and serial number */
        int color = (int)((v[1] * 1000003ull + v[2]) & 0x3fffffff);

        if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited ||
            MPI_Comm_split(MPI_COMM_WORLD, color, rank, &c->mpi) != MPI_SUCCESS ||
            MPI_Comm_size(c->mpi, &size) != MPI_SUCCESS || MPI_Comm_rank(c->mpi, &got) != MPI_SUCCESS ||
            size != nranks || got != rank) {
            free(c);
            return ncclInvalidUsage;
        }
#else
        free(c);
        return ncclInvalidUsage;
#endif
    }
    *comm = c;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm_ok(comm))
        return ncclInvalidArgument;
#ifdef TENDO_HAVE_MPI
    if (comm->nranks > 1)
        MPI_Comm_free(&comm->mpi);
#endif
    comm->magic = 0;
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (!comm_ok(comm) || !asyncError)
        return ncclInvalidArgument;
    *asyncError = comm->async;
    return ncclSuccess;
}

/* ---- the collectives ------------------------------------------------------------ */

/* tendo's dtype whose fold (comm/fold.c) computes NCCL's reduction of t
 * with op; 0 for a pair tendo never asks for. */
static tendo_dtype fold_dtype(ncclDataType_t t, ncclRedOp_t op)
{
    bool wrap = op == ncclSum || op == ncclProd;

    switch (t) {
    case ncclInt8:
#ifdef TENDO_HAVE_I8
        return TENDO_I8;
#else
        return 0;
#endif
    case ncclUint8:
        /* u8, or bool (as 0 and 1 with max and min) */
#ifdef TENDO_HAVE_U8
        return TENDO_U8;
#else
        return op == ncclMax || op == ncclMin ? TENDO_BOOL : 0;
#endif
    case ncclInt32:
    case ncclUint32:
#ifdef TENDO_HAVE_I32
        return t == ncclInt32 || wrap ? TENDO_I32 : 0;
#else
        return 0;
#endif
    case ncclInt64:
    case ncclUint64:
        return t == ncclInt64 || wrap ? TENDO_I64 : 0;
    case ncclFloat32:
        return TENDO_F32;
#ifdef TENDO_HAVE_F64
    case ncclFloat64:
        return TENDO_F64;
#endif
#ifdef TENDO_HAVE_F16
    case ncclFloat16:
        return TENDO_F16;
#endif
#ifdef TENDO_HAVE_BF16
    case ncclBfloat16:
        return TENDO_BF16;
#endif
#ifdef TENDO_HAVE_F8E4M3
    case ncclFloat8e4m3:
        return TENDO_F8E4M3;
#endif
#ifdef TENDO_HAVE_F8E5M2
    case ncclFloat8e5m2:
        return TENDO_F8E5M2;
#endif
    default:
        return 0;
    }
}

/* Bytes per element of t; 0 for none. */
static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

static tendo_reduce_op fold_op(ncclRedOp_t op)
{
    return op == ncclProd ? TENDO_REDUCE_PROD
           : op == ncclMax ? TENDO_REDUCE_MAX
           : op == ncclMin ? TENDO_REDUCE_MIN
           : op == ncclAvg ? TENDO_REDUCE_AVG
                           : TENDO_REDUCE_SUM;
}

typedef struct job {
    tendo__coll_kind kind;
    ncclComm_t comm;
    tendo_dtype dt;
    tendo_reduce_op op;
    size_t count, es;
    int root;
    const void *send;
    void *recv;
} job;

#ifdef TENDO_HAVE_MPI
/* Every rank's n bytes at src, in rank order, in a new host buffer. */
static char *gather_all(ncclComm_t c, const void *src, size_t n)
{
    char *all = malloc(n * (size_t)c->nranks + 1);

    if (all && MPI_Allgather(src, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, c->mpi) != MPI_SUCCESS) {
        free(all);
        return NULL;
    }
    return all;
}
#endif

/* The collective, when its stream gets to it. */
static void run_job(void *v)
{
    const job *j = v;
    ncclComm_t c = j->comm;
    size_t bytes = j->count * j->es;

    if (c->nranks == 1) {
        if (j->recv != j->send) /* a world of one: every collective is a copy */
            memmove(j->recv, j->send, bytes);
        return;
    }
#ifdef TENDO_HAVE_MPI
    char *all = NULL;
    bool ok = true;

    switch (j->kind) {
    case TENDO__COLL_BROADCAST:
        if (c->rank == j->root && j->recv != j->send)
            memmove(j->recv, j->send, bytes);
        ok = MPI_Bcast(j->recv, (int)bytes, MPI_BYTE, j->root, c->mpi) == MPI_SUCCESS;
        break;
    case TENDO__COLL_ALL_GATHER:
        if ((ok = (all = gather_all(c, j->send, bytes)) != NULL))
            memcpy(j->recv, all, bytes * (size_t)c->nranks);
        break;
    case TENDO__COLL_ALL_REDUCE:
        if ((ok = (all = gather_all(c, j->send, bytes)) != NULL))
            tendo__fold(j->dt, j->op, c->nranks, all, (int64_t)j->count, (int64_t)j->count, j->recv, c->nranks);
        break;
    case TENDO__COLL_REDUCE_SCATTER:
        /* every rank's whole send buffer; this rank's chunk of each */
        if ((ok = (all = gather_all(c, j->send, bytes * (size_t)c->nranks)) != NULL))
            tendo__fold(j->dt, j->op, c->nranks, all + (size_t)c->rank * bytes, (int64_t)j->count * c->nranks,
                        (int64_t)j->count, j->recv, c->nranks);
        break;
    case TENDO__COLL_BARRIER:
        break;
    }
    free(all);
    if (!ok && c->async == ncclSuccess)
        c->async = ncclSystemError;
#endif
}

/* The checks NCCL makes at the call (and the simulator adds: buffers in
 * device memory of the communicator's device, a usable stream), then the
 * job queued on the stream. */
static ncclResult_t queue(tendo__coll_kind kind, const void *send, void *recv, size_t count, ncclDataType_t type,
                          ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    job *j;
    size_t es, send_n, recv_n;
    int dev = -1;

    if (!comm_ok(comm))
        return ncclInvalidArgument;
    if (comm->async != ncclSuccess)
        return comm->async;
    if (tendo__sim_sticky() || tendo__sim_current() != comm->device)
        return ncclUnhandledCudaError;
    if (!tendo__sim_stream_ok(stream) || (kind == TENDO__COLL_BROADCAST && (root < 0 || root >= comm->nranks)))
        return ncclInvalidArgument;
    /* broadcast and all_gather move elements as they are: any type */
    tendo_dtype dt = kind == TENDO__COLL_BROADCAST || kind == TENDO__COLL_ALL_GATHER ? TENDO_BOOL : fold_dtype(type, op);
    if (!dt || (es = type_size(type)) == 0)
        return ncclInvalidArgument;
    send_n = count * (kind == TENDO__COLL_REDUCE_SCATTER ? (size_t)comm->nranks : 1);
    recv_n = count * (kind == TENDO__COLL_ALL_GATHER ? (size_t)comm->nranks : 1);
    if (send_n * es * (size_t)comm->nranks > INT_MAX)
        return ncclInvalidUsage; /* past what one MPI call of this simulator carries */
    if (count > 0 && ((send && (tendo__sim_lookup(send, send_n * es, &dev, NULL) != TENDO__SIM_DEVICE ||
                                dev != comm->device)) ||
                      tendo__sim_lookup(recv, recv_n * es, &dev, NULL) != TENDO__SIM_DEVICE || dev != comm->device))
        return ncclInvalidArgument;
    if (!(j = malloc(sizeof *j)))
        return ncclSystemError;
    *j = (job){.kind = kind, .comm = comm, .dt = dt, .op = fold_op(op), .count = count, .es = es, .root = root,
               .send = send, .recv = recv};
    tendo__sim_enqueue(stream, run_job, free, j);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    return queue(TENDO__COLL_ALL_REDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    return queue(TENDO__COLL_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    return queue(TENDO__COLL_ALL_GATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    return queue(TENDO__COLL_REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream);
}
