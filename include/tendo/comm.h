/* tendo/comm.h - many processes: a communicator and what tendo's
 * collectives share.  Included by <tendo.h>; the per-dtype collectives
 * (tensor_<dt>_all_reduce, _broadcast, _all_gather, _reduce_scatter) are
 * declared with each dtype's other functions.
 *
 * A program runs as many processes under mpirun (Open MPI); tendo_comm_world()
 * is all of them, ranked 0..size-1.  CPU tensors travel over MPI, CUDA
 * tensors over NCCL on the calling thread's stream of their device (the
 * NCCL communicator of a device is made at its first collective, its id
 * sent over MPI).  A process started without mpirun is a world of one,
 * which needs no MPI runtime: its collectives copy nothing anywhere.
 *
 * Every process of the job must make the same collective calls in the same
 * order.  CPU collectives called from two threads at once run one after
 * the other, each whole, in whichever order, so only calls that are the
 * same on every rank may race (and one thread's data may then meet
 * another thread's on the other ranks); CUDA collectives not at all.  Before moving any data each call compares what the ranks asked
 * for (the function, dtype, element count, shape, op, root, device type),
 * and whether each rank's own checks passed: a mismatch, or a rank whose
 * arguments were refused, fails the call on every rank with
 * TENDO_ERR_COMM (or the rank's own error), never a hang.  In a world of
 * up to 8 ranks the ranks exchange records of their calls, and a CPU
 * all_reduce of at most 64 KiB between two ranks (16 KiB among more) is
 * its own record (one round trip in all); a larger world agrees through
 * one small MPI_Allreduce before the data.
 * TENDO_COMM_CHECK=0 in the environment skips the agreement, for a
 * program whose calls are known to match (a mismatch or a refused argument
 * then leaves the ranks as MPI does: undefined, often hanging).  A rank
 * that dies makes mpirun end the job.
 */
#ifndef TENDO_COMM_H
#define TENDO_COMM_H

#include "tendo/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tendo_comm tendo_comm;

/* How a collective combines the ranks' elements.  Floats of 16 and 8 bits
 * reduce in float and round once; SUM and PROD of integers wrap like the
 * dtype; AVG (the sum divided by the size, in the compute type) is for
 * the float dtypes only; bool's MAX and SUM are logical or, MIN and PROD
 * logical and. */
typedef enum {
    TENDO_REDUCE_SUM,
    TENDO_REDUCE_AVG,
    TENDO_REDUCE_MAX,
    TENDO_REDUCE_MIN,
    TENDO_REDUCE_PROD
} tendo_reduce_op;

/* Every process of this job: under mpirun, MPI_COMM_WORLD (tendo
 * initialises MPI, thread level MPI_THREAD_SERIALIZED, if the program has
 * not, and finalizes it at exit); a process started alone is a world of
 * one.  Where MPI runs at a lower thread level (MPI_THREAD_FUNNELED, or
 * _SINGLE, which a program's plain MPI_Init often gets), only MPI's main
 * thread may call tendo_comm_world and the collectives: on another they
 * fail with TENDO_ERR_COMM, sending nothing (so a call every rank makes
 * off its main thread fails on every rank).  tendo works on its own
 * duplicate of MPI_COMM_WORLD, so its messages never meet the program's.
 * The ranks on one machine share its cores: unless OMP_NUM_THREADS is set
 * or the program called tendo_set_num_threads, each rank's CPU ops take
 * cores / (ranks there) threads.  The first call is collective (every
 * rank makes it).  A new handle the caller frees with tendo_comm_free;
 * NULL with TENDO_ERR_COMM when MPI fails to start or may not be called
 * from this thread. */
TENDO_API tendo_comm *tendo_comm_world(void);
/* This process's rank in c (0 for NULL). */
TENDO_API int tendo_comm_rank(const tendo_comm *c);
/* The number of processes in c (1 for NULL). */
TENDO_API int tendo_comm_size(const tendo_comm *c);
/* Returns once every rank of c has called it: TENDO_OK, or TENDO_ERR_COMM. */
TENDO_API tendo_status tendo_comm_barrier(const tendo_comm *c);
/* Frees the handle (and the NCCL communicators it made); NULL is a no-op. */
TENDO_API void tendo_comm_free(tendo_comm *c);
/* Ends every process of c's job with exit status code (MPI_Abort): what a
 * rank that cannot go on calls, so that the others, which may be waiting
 * for it in a collective, do not wait forever.  In a world of one, exits
 * the process with code.  Does not return. */
TENDO_API void tendo_comm_abort(const tendo_comm *c, int code);
/* "mpi" when c's processes talk over MPI, "self" in a world of one. */
TENDO_API const char *tendo_comm_backend(const tendo_comm *c);

/* Data-parallel training: replaces every parameter's gradient in opt by
 * its average across the ranks of c (each rank having run backward on its
 * share of the batch), so that every rank then steps alike.  The
 * gradients go in buckets of up to 4 MiB, each one collective, as
 * PyTorch's DistributedDataParallel.  Every rank's opt must hold the same
 * parameters with gradients; TENDO_ERR_COMM on every rank when not. */
typedef struct tendo_optimizer tendo_optimizer;
TENDO_API tendo_status tendo_optimizer_all_reduce_grads(tendo_optimizer *opt, const tendo_comm *c);

/* The name of op ("sum", "avg", "max", "min", "prod"; "?" for none). */
TENDO_API const char *tendo_reduce_op_name(tendo_reduce_op op);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_COMM_H */
