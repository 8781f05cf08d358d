/* src/comm/comm.h - collectives between processes: what src/comm/ and the
 * CUDA backend's NCCL glue share.
 *
 * comm.c gives tensors their collective semantics (checks, strides, the
 * agreement between ranks, the choice of transport); mpi.c moves dense
 * host buffers over MPI (or is a world of one without MPI); fold.c reduces
 * the ranks' blocks of a buffer in the compute type.  CUDA tensors go to
 * the device table's collective slot (kernels/host/nccl.c, NCCL).
 */
#ifndef TENDO_SRC_COMM_COMM_H
#define TENDO_SRC_COMM_COMM_H

#include <pthread.h>

#include "tendo/comm.h"
#include "core/internal.h"

/* One collective over dense buffers.  count is the elements each rank
 * contributes (all_reduce, broadcast, all_gather) or receives
 * (reduce_scatter).  send holds count elements (count * size for
 * reduce_scatter, rank r's chunk at r * count), recv count elements (count
 * * size for all_gather, rank r's at r * count); all_reduce and broadcast
 * have send == recv (in place). */
typedef enum {
    TENDO__COLL_ALL_REDUCE = 1,
    TENDO__COLL_BROADCAST,
    TENDO__COLL_ALL_GATHER,
    TENDO__COLL_REDUCE_SCATTER,
    TENDO__COLL_BARRIER,
} tendo__coll_kind;

typedef struct tendo__coll {
    tendo__coll_kind kind;
    tendo_dtype dtype;
    tendo_reduce_op op;
    int64_t count;
    int root;
    const void *send;
    void *recv;
} tendo__coll;

struct tendo__mpi;

struct tendo_comm {
    int rank, size;
    struct tendo__mpi *mpi; /* NULL: a world of one */
    /* The NCCL communicator of this handle's CUDA collectives, made at the
     * first (on every rank at once: the calls are matched) on that call's
     * device, nccl_device; released through the device table.  A handle's
     * CUDA collectives stay on that device, as a process group's. */
    pthread_mutex_t nccl_lock;
    void *nccl;
    int nccl_device;
};

/* ---- comm.c: the signature of a call, what the ranks agree on ---- */

/* The values of a signature, in order; the last three are all_gather's and
 * reduce_scatter's (zero for the others). */
enum {
    TENDO__SIG_KIND,
    TENDO__SIG_DTYPE,
    TENDO__SIG_OP,
    TENDO__SIG_COUNT,
    TENDO__SIG_ROOT,
    TENDO__SIG_DEVICE,
    TENDO__SIG_NDIM,
    TENDO__SIG_DIM,
    TENDO__SIG_SHAPE,
    TENDO__SIG_N
};

/* sig (TENDO__SIG_N values) of an all_reduce of count elements of dt on
 * the CPU: what a record that carries such a call's data stands for in
 * the agreement (mpi.c). */
void tendo__all_reduce_signature(tendo_dtype dt, tendo_reduce_op rop, int64_t count, int64_t *sig);

/* ---- mpi.c: the transport of CPU buffers ---- */

/* Joins the job's MPI world when this process was started by an MPI
 * launcher or the program initialised MPI itself: *m (tendo's own
 * duplicate of MPI_COMM_WORLD), *rank and *size.  Otherwise (or in a build
 * without MPI) *m = NULL, a world of one.  The world lives until exit
 * (mpi.c finalizes it).  False with TENDO_ERR_COMM. */
bool tendo__mpi_join(const char *op, struct tendo__mpi **m, int *rank, int *size);
/* The agreement before a collective: every rank passes its n-value
 * signature sig (n <= 16) and whether its own checks passed; true when all
 * passed and every signature is the same.  Otherwise false on every rank:
 * a rank that failed keeps its own error; the others get TENDO_ERR_COMM
 * naming op and, through names[i], the first value that differs.  w, when
 * not NULL, is the CPU collective agreed on, run under the same hold of
 * the MPI lock (a small all_reduce's data travel with the agreement), so
 * that each CPU collective runs whole even when threads call them at once;
 * then true means it is done, and false may also come from moving its
 * data (a count MPI cannot take, out of memory, an MPI error), on some
 * ranks only. */
bool tendo__mpi_agree(const char *op, struct tendo__mpi *m, const int64_t *sig, const char *const *names, int n,
                      bool ok_here, const tendo__coll *w);
/* Runs w over host buffers, with no agreement (a barrier); false with
 * TENDO_ERR_COMM (or TENDO_ERR_OOM). */
bool tendo__mpi_run(const char *op, struct tendo__mpi *m, const tendo__coll *w);
/* n bytes of rank 0's buf to every rank's. */
bool tendo__mpi_bcast_bytes(const char *op, struct tendo__mpi *m, void *buf, size_t n);
_Noreturn void tendo__mpi_abort(struct tendo__mpi *m, int code);

/* ---- fold.c: reductions of the ranks' blocks, in the compute type ---- */

/* out[i] = op over b = 0..nb-1 of in[b * stride + i], for i < n, in that
 * order, computed in dt's compute type (float for the 16- and 8-bit
 * floats) and rounded once; integers wrap; AVG divides the sum by
 * avg_div.  out may be in (block 0). */
void tendo__fold(tendo_dtype dt, tendo_reduce_op op, int nb, const void *in, int64_t stride, int64_t n, void *out,
                 int avg_div);

/* out[i] = x[i] op y[i] for i < n, x the first operand, in dt's compute
 * type, rounded once (AVG: the mean of the two); out may be x or y.  The
 * body of the user-defined MPI ops, of tendo__fold's two blocks, and of
 * the sum of a small all_reduce between two ranks (mpi.c); SUM and AVG
 * take the dtype's add_pairs where it has one (f32's vectors). */
void tendo__fold_pair(tendo_dtype dt, tendo_reduce_op op, const void *x, const void *y, void *out, int64_t n);

/* ---- comm.c: the collectives of gen/registry/comm.toml (tensor_<dt>_all_reduce, ...), op naming the entry point ---- */

tendo_status tendo__all_reduce(const char *op, const tendo_comm *c, tendo__tensor *t, tendo_reduce_op rop);
tendo_status tendo__broadcast(const char *op, const tendo_comm *c, tendo__tensor *t, int root);
tendo__tensor *tendo__all_gather(const char *op, const tendo_comm *c, const tendo__tensor *t, int dim);
tendo__tensor *tendo__reduce_scatter(const char *op, const tendo_comm *c, const tendo__tensor *t, int dim,
                                     tendo_reduce_op rop);

/* ---- comm.c: for the CUDA backend's NCCL glue ---- */

/* n bytes of rank 0's buf to every rank of c (the NCCL id). */
bool tendo__comm_bcast_bytes(const char *op, const tendo_comm *c, void *buf, size_t n);

#endif /* TENDO_SRC_COMM_COMM_H */
