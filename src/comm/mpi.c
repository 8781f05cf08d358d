/* src/comm/mpi.c - dense host buffers between processes, over MPI.
 *
 * tendo joins MPI only when this process is part of an MPI job (started by
 * mpirun, or the program initialised MPI): otherwise, and in a build
 * without MPI, it is a world of one and no MPI call is ever made.  Its
 * collectives run on its own duplicate of MPI_COMM_WORLD, with errors
 * returned rather than fatal, one call at a time (a lock: tendo asks for
 * MPI_THREAD_SERIALIZED; where the program started MPI at a lower level,
 * only MPI's main thread may call the collectives).
 *
 * Every collective starts with the ranks' agreement on it ("the
 * agreement" below), which also carries the data of a small all_reduce.
 * Past that, native MPI types and ops carry f32, f64 and the 32- and
 * 64-bit integers (SUM and PROD of signed integers as the unsigned type of
 * the same size, so that they wrap).  The 16- and 8-bit floats have no MPI type, nor the
 * 8- and 16-bit integers a trustworthy MPI sum (see native_type): their
 * elements travel as stored, and tendo reduces them, in float for the
 * floats, rounding once, so that every rank gets the same bits.  Where
 * combining pairs is exact - integers, and two ranks - that is one
 * MPI_Allreduce with a user-defined op (fold.c's pairwise combine);
 * otherwise a small buffer is gathered whole by every rank and reduced in
 * rank order, and a large one is split in `size` chunks, chunk r of every
 * rank sent to rank r (alltoall), which reduces it and shares the result
 * (allgather): the bytes on the wire of a ring all-reduce.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/iter.h"
#include "core/traits.h"

#ifdef TENDO_HAVE_MPI
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

struct tendo__mpi {
    MPI_Comm comm;
    int rank, size;
    /* the agreement's records, one slot per rank (see "the agreement"
     * below); NULL in a world too large to exchange them */
    char *slots;
    /* the ranks' chunks of a reduction done here (fold_reduce), kept
     * between calls so that a large one does not fault its pages in each
     * time; as large as the largest so far, freed at exit */
    void *scratch;
    size_t scratch_n;
};

/* tendo's MPI calls go one thread at a time (MPI_THREAD_SERIALIZED), a
 * CPU collective whole, from its agreement to its last message, and the
 * slots and scratch of struct tendo__mpi are one collective's at a time: a
 * lock taken with one atomic exchange and given back with a release store
 * (a plain store on x86), where a mutex takes two atomic operations (two
 * ranks, 1 KiB f32 all_reduces in a loop: 0-2.5 % faster, three runs).  A
 * thread that finds it taken (another thread's collective) yields a few
 * times, then sleeps 50 us at a time, rather than spin through a long
 * collective. */
static atomic_flag mpi_busy = ATOMIC_FLAG_INIT;

static void lock_mpi(void)
{
    for (int tries = 0; atomic_flag_test_and_set_explicit(&mpi_busy, memory_order_acquire);) {
        if (tries < 64) {
            tries++;
            sched_yield();
        } else {
            nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
        }
    }
}

static void unlock_mpi(void) { atomic_flag_clear_explicit(&mpi_busy, memory_order_release); }
#define MAX_CODES 32
static MPI_Datatype user_type[MAX_CODES]; /* see "user-defined ops" below */
static bool user_type_made[MAX_CODES];
static MPI_Op user_op[TENDO_REDUCE_PROD + 1];
static bool user_op_made[TENDO_REDUCE_PROD + 1];
static struct tendo__mpi world;
static bool joined, we_initialised;
/* The thread level MPI runs at: MPI_Init_thread's answer, or
 * MPI_Query_thread's where the program started MPI (thread_may_call). */
static int thread_level = MPI_THREAD_SERIALIZED;
/* TENDO_COMM_CHECK=0: no agreement before each collective (tendo__mpi_agree) */
static bool check_calls = true;

/* An MPI launcher's variables: Open MPI, PMIx, Hydra (MPICH) and PMI-2. */
static bool launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "MPI_LOCALNRANKS"};

    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

/* Whether this thread may call MPI: any thread at MPI_THREAD_SERIALIZED
 * or above (tendo's lock makes the calls one at a time), else MPI's main
 * thread alone (MPI_Is_thread_main may be asked from any thread, before
 * MPI_Finalize). */
static bool on_mpi_thread(void)
{
    int main_here = 0;

    return thread_level >= MPI_THREAD_SERIALIZED || (MPI_Is_thread_main(&main_here) == MPI_SUCCESS && main_here);
}

/* on_mpi_thread, else false with TENDO_ERR_COMM, no other MPI call made. */
static bool thread_may_call(const char *op)
{
    if (on_mpi_thread())
        return true;
    tendo__fail(TENDO_ERR_COMM, op, "MPI runs at thread level %s: only the thread that started it may call it",
                thread_level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SINGLE");
    return false;
}

static void finalize_at_exit(void)
{
    int done = 0;

    lock_mpi();
    /* exit() on a thread that may not call MPI leaves it all to the system */
    if (MPI_Finalized(&done) == MPI_SUCCESS && !done && on_mpi_thread()) {
        if (joined)
            MPI_Comm_free(&world.comm);
        joined = false;
        free(world.scratch);
        free(world.slots);
        world.scratch = NULL;
        world.slots = NULL;
        world.scratch_n = 0;
        for (int c = 0; c < MAX_CODES; c++)
            if (user_type_made[c])
                MPI_Type_free(&user_type[c]);
        for (int o = 0; o <= TENDO_REDUCE_PROD; o++)
            if (user_op_made[o])
                MPI_Op_free(&user_op[o]);
        memset(user_type_made, 0, sizeof user_type_made);
        memset(user_op_made, 0, sizeof user_op_made);
        if (we_initialised)
            MPI_Finalize();
    }
    unlock_mpi();
}

static bool mpi_ok(const char *op, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;

    if (rc == MPI_SUCCESS)
        return true;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    tendo__fail(TENDO_ERR_COMM, op, "%s: %s", what, msg);
    return false;
}

/* ---- the agreement ------------------------------------------------------------ */

/* Before a collective the ranks agree on it: each tells every other what
 * it was asked (a signature: the collective, dtype, count, ...) and
 * whether its own checks passed, and each compares.  In a world of up to
 * EXCHANGE_MAX_RANKS ranks that is an exchange of records, every rank's to
 * every other, each received into its rank's slot whatever its tag and
 * size: the records of calls that differ still match each other's
 * receives, so every rank sees a mismatch, rather than leaving it to MPI
 * (where collectives of different sizes are undefined).
 *
 * A record is a head (agree_head: the signature and whether the rank's
 * checks failed), or, for a small CPU all_reduce whose checks passed
 * (carry_limit), the rank's data itself, sent from the tensor: its tag
 * names the dtype and the reduce op, its length gives the count, which is
 * the whole signature of such a call (tendo__all_reduce_signature).  That
 * call is done when the exchange is, each rank reducing the ranks' data in
 * rank order (fold.c, so the same bits everywhere): one round trip of the
 * bytes MPI_Allreduce sends, where the agreement and MPI_Allreduce take
 * two.  A larger world agrees through one MAX MPI_Allreduce of [failed,
 * sig, -sig], the same call whatever each rank was asked. */
#define EXCHANGE_MAX_RANKS 8
#define SIG_MAX 16

/* The largest all_reduce carried: 64 KiB between two ranks (a 64 KiB f32
 * all_reduce carried ran at 1.04-1.05x MPI_Allreduce's bus bandwidth
 * here, 0.97 through the agreement and MPI_Allreduce); 16 KiB in a larger
 * world, where each rank sends its data to every other. */
#define CARRY_BYTES ((size_t)64 << 10)
static size_t carry_limit(int size) { return size == 2 ? CARRY_BYTES : (size_t)16 << 10; }

typedef struct {
    int64_t failed;       /* the rank's own checks refused its call */
    int64_t sig[SIG_MAX]; /* the signature, zeros past its n values */
} agree_head;
_Static_assert(TENDO__SIG_N <= SIG_MAX, "comm.c's signature fits in a head");

/* The records' tags, all below 32768 (the least MPI_TAG_UB MPI allows):
 * a head's, and a carried all_reduce's, TAG_CARRY | dtype << 3 | reduce
 * op, with TAG_MORE where its data come in two pieces (PIECE_BYTES), the
 * second tagged TAG_SECOND. */
#define TAG_HEAD 0x0e0d
#define TAG_SECOND 0x0e0e
#define TAG_MORE 0x2000
#define TAG_CARRY 0x4000
#define TAG_DTYPE_SHIFT 3
_Static_assert(TENDO_REDUCE_PROD < (1 << TAG_DTYPE_SHIFT), "a reduce op fits below the dtype in a tag");
_Static_assert(MAX_CODES << TAG_DTYPE_SHIFT <= TAG_MORE, "a dtype fits below TAG_MORE in a tag");

/* A slot holds the largest record: a multiple of every element size, so
 * that the ranks' data are the rows of one strided block. */
#define SLOT_BYTES CARRY_BYTES
_Static_assert(sizeof(agree_head) <= SLOT_BYTES, "a head fits in a slot");

static bool make_slots(const char *op)
{
    world.slots = NULL;
    if (world.size > EXCHANGE_MAX_RANKS)
        return true;
    if (!(world.slots = tendo__malloc((size_t)world.size * SLOT_BYTES)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for the ranks' records of a call"), false;
    return true;
}

/* One MAX over [failed, sig, -sig]: every signature is the same when
 * max(sig) == -max(-sig).  Always SIG_MAX values (zeros past n), so that
 * agreements on signatures of different lengths (all_reduce_grads' and a
 * collective's) still meet in one MPI_Allreduce of one count.  Called with
 * the lock held. */
static bool agree_by_max(const char *op, struct tendo__mpi *m, const int64_t *sig, const char *const *names, int n,
                         bool ok_here)
{
    int64_t v[1 + 2 * SIG_MAX], r[1 + 2 * SIG_MAX];
    bool ok;

    v[0] = ok_here ? 0 : 1;
    for (int i = 0; i < SIG_MAX; i++) {
        v[1 + i] = i < n ? sig[i] : 0;
        v[1 + SIG_MAX + i] = -v[1 + i];
    }
    ok = mpi_ok(op, MPI_Allreduce(v, r, 1 + 2 * SIG_MAX, MPI_INT64_T, MPI_MAX, m->comm), "agreeing on the call");
    if (!ok || !ok_here)
        return false; /* a rank that failed keeps its own error */
    if (r[0])
        return tendo__fail(TENDO_ERR_COMM, op, "another rank's arguments were refused (see its error)"), false;
    for (int i = 0; i < SIG_MAX; i++)
        if (r[1 + i] != -r[1 + SIG_MAX + i])
            return tendo__fail(TENDO_ERR_COMM, op,
                               "the ranks' calls do not match: %s differs (%lld here, from %lld to %lld across "
                               "the ranks)",
                               i < n ? names[i] : "the call", (long long)v[1 + i], (long long)-r[1 + SIG_MAX + i],
                               (long long)r[1 + i]),
                   false;
    return true;
}

/* A record a little past the eager limit of Open MPI's shared-memory
 * transport (4 KiB with its header: 4032 bytes of data go eagerly, 4064
 * not) would wait for the receiver's handshake; as two messages of at
 * most PIECE_BYTES it does not (a 4240-byte record, a head and 4 KiB of
 * data as records were then: one message took 2.0-2.1 us between two
 * ranks here, two 1.5-1.6).  Past two pieces the messages cost more than
 * the handshake saves. */
#define PIECE_BYTES ((size_t)4000)

/* What a rank sends: bytes of data, in one message tagged tag or, where
 * tag has TAG_MORE, in two (PIECE_BYTES, then the rest). */
typedef struct {
    const char *data;
    size_t bytes;
    int tag;
} record;

static record record_of(const void *data, size_t bytes, int tag)
{
    bool two = bytes > PIECE_BYTES && bytes <= 2 * PIECE_BYTES;
    return (record){.data = data, .bytes = bytes, .tag = two ? tag | TAG_MORE : tag};
}

/* Waits for n requests whatever *rc says (nothing of the slots is left to
 * MPI after a failure); *rc takes MPI_Waitall's result if it was
 * MPI_SUCCESS, and st the statuses then. */
static void wait_all(int n, MPI_Request *rq, MPI_Status *st, int *rc)
{
    int w = MPI_Waitall(n, rq, *rc == MPI_SUCCESS && st ? st : MPI_STATUSES_IGNORE);

    if (*rc == MPI_SUCCESS)
        *rc = w;
}

/* exchange() between two ranks for a record of one message: one
 * MPI_Sendrecv, where the Irecv, Isend and two waits of any world size
 * take four calls (two ranks, a 1 KiB f32 all_reduce, mean us per call
 * over 100000 calls, three runs: 0.64-0.66 against 0.59).  The other
 * rank's record may still come in two pieces (its call differs): then its
 * second is received too, so that no message is left behind. */
static bool exchange_two(const char *op, struct tendo__mpi *m, const record *r, int *got, int *tag)
{
    int peer = 1 - m->rank, more = 0;
    char *slot = m->slots + (size_t)peer * SLOT_BYTES;
    MPI_Status st;
    int rc = MPI_Sendrecv(r->data, (int)r->bytes, MPI_BYTE, peer, r->tag, slot, (int)SLOT_BYTES, MPI_BYTE, peer,
                          MPI_ANY_TAG, m->comm, &st);

    if (rc == MPI_SUCCESS) {
        MPI_Get_count(&st, MPI_BYTE, &got[peer]);
        tag[peer] = st.MPI_TAG;
        if ((tag[peer] & TAG_MORE) &&
            (rc = MPI_Recv(slot + got[peer], (int)SLOT_BYTES - got[peer], MPI_BYTE, peer, TAG_SECOND, m->comm,
                           &st)) == MPI_SUCCESS) {
            MPI_Get_count(&st, MPI_BYTE, &more);
            got[peer] += more;
        }
    }
    return mpi_ok(op, rc, "exchanging the calls");
}

/* Sends this rank's record r to every other rank and receives theirs into
 * their slots, in one message or two; got[j] is the bytes received from
 * rank j, tag[j] the tag of its first message.  Called with the lock
 * held. */
static bool exchange(const char *op, struct tendo__mpi *m, const record *r, int *got, int *tag)
{
    MPI_Request recv[EXCHANGE_MAX_RANKS], second[EXCHANGE_MAX_RANKS], send[2 * EXCHANGE_MAX_RANKS];
    MPI_Status st[EXCHANGE_MAX_RANKS];
    int from[EXCHANGE_MAX_RANKS], second_from[EXCHANGE_MAX_RANKS], nrecv = 0, nsecond = 0, nsend = 0;
    size_t first = r->tag & TAG_MORE ? PIECE_BYTES : r->bytes;
    int rc = MPI_SUCCESS;

    if (m->size == 2 && first == r->bytes)
        return exchange_two(op, m, r, got, tag);
    for (int j = 0; j < m->size && rc == MPI_SUCCESS; j++)
        if (j != m->rank && (rc = MPI_Irecv(m->slots + (size_t)j * SLOT_BYTES, (int)SLOT_BYTES, MPI_BYTE, j,
                                            MPI_ANY_TAG, m->comm, &recv[nrecv])) == MPI_SUCCESS)
            from[nrecv++] = j;
    for (int j = 0; j < m->size && rc == MPI_SUCCESS; j++) {
        if (j == m->rank)
            continue;
        if ((rc = MPI_Isend(r->data, (int)first, MPI_BYTE, j, r->tag, m->comm, &send[nsend])) == MPI_SUCCESS)
            nsend++;
        if (rc == MPI_SUCCESS && first < r->bytes &&
            (rc = MPI_Isend(r->data + first, (int)(r->bytes - first), MPI_BYTE, j, TAG_SECOND, m->comm,
                            &send[nsend])) == MPI_SUCCESS)
            nsend++;
    }
    wait_all(nrecv, recv, st, &rc);
    /* a first message whose tag announces a second: that one */
    for (int i = 0; i < nrecv && rc == MPI_SUCCESS; i++) {
        char *slot = m->slots + (size_t)from[i] * SLOT_BYTES;
        int j = from[i];

        MPI_Get_count(&st[i], MPI_BYTE, &got[j]);
        tag[j] = st[i].MPI_TAG;
        if ((tag[j] & TAG_MORE) && (rc = MPI_Irecv(slot + got[j], (int)SLOT_BYTES - got[j], MPI_BYTE, j,
                                                   TAG_SECOND, m->comm, &second[nsecond])) == MPI_SUCCESS)
            second_from[nsecond++] = j;
    }
    wait_all(nsecond, second, st, &rc);
    for (int i = 0; i < nsecond && rc == MPI_SUCCESS; i++) {
        int more = 0;
        MPI_Get_count(&st[i], MPI_BYTE, &more);
        got[second_from[i]] += more;
    }
    wait_all(nsend, send, NULL, &rc);
    return mpi_ok(op, rc, "exchanging the calls");
}

/* The signature rank j's record stands for, into theirs (SIG_MAX values);
 * NULL when it is no record of tendo's (the caller says so). */
static const int64_t *record_signature(const char *slot, int got, int tag, int64_t *theirs)
{
    const agree_head *p = (const agree_head *)(const void *)slot;

    if (tag & TAG_CARRY) {
        tendo_dtype dt = (tendo_dtype)((tag & (TAG_MORE - 1)) >> TAG_DTYPE_SHIFT);
        size_t es = tendo_dtype_size(dt);

        if (!es || got % (int)es)
            return NULL;
        memset(theirs, 0, SIG_MAX * sizeof *theirs);
        tendo__all_reduce_signature(dt, (tendo_reduce_op)(tag & ((1 << TAG_DTYPE_SHIFT) - 1)), got / (int)es, theirs);
        return theirs;
    }
    return tag == TAG_HEAD && got == (int)sizeof *p ? p->sig : NULL;
}

/* What one rank's record says against this rank's call (sig, n values,
 * zeros past them; carry: this rank sent its data): -1 when it is no
 * record of tendo's, 1 when that rank's checks failed, 2 when the calls
 * differ (*what, *here and *there naming the first value that does), 0
 * when they are the same call. */
static int compare_record(const char *slot, int got, int tag, const int64_t *sig, const char *const *names, int n,
                          bool carry, size_t bytes, const char **what, long long *here, long long *there)
{
    int64_t theirs[SIG_MAX];
    const int64_t *ps = record_signature(slot, got, tag, theirs);
    bool carried = tag & TAG_CARRY;

    if (!ps)
        return -1;
    if (!carried && ((const agree_head *)(const void *)slot)->failed)
        return 1;
    for (int i = 0; i < SIG_MAX; i++) {
        int64_t v = i < n ? sig[i] : 0;
        if (ps[i] != v) {
            *what = i < n ? names[i] : "the call", *here = v, *there = ps[i];
            return 2;
        }
    }
    if (carried != carry) { /* the same call carried by one rank only */
        *what = "the data carried", *here = (long long)bytes, *there = carried ? got : 0;
        return 2;
    }
    return 0;
}

/* The agreement between up to EXCHANGE_MAX_RANKS ranks; w (not NULL: a
 * CPU collective) is done with it when it is a small all_reduce (*done).
 * Called with the lock held. */
static bool agree_by_exchange(const char *op, struct tendo__mpi *m, const int64_t *sig, const char *const *names,
                              int n, bool ok_here, const tendo__coll *w, bool *done)
{
    size_t es = w ? tendo_dtype_size(w->dtype) : 1;
    bool carry = ok_here && w && w->kind == TENDO__COLL_ALL_REDUCE && (size_t)w->count * es <= carry_limit(m->size) &&
                 (int)w->dtype < MAX_CODES; /* its code fits in the tag */
    size_t bytes = carry ? (size_t)w->count * es : 0;
    agree_head *h = (agree_head *)(void *)(m->slots + (size_t)m->rank * SLOT_BYTES);
    int got[EXCHANGE_MAX_RANKS], tag[EXCHANGE_MAX_RANKS];
    int failed = -1, differs = -1;
    long long here = 0, there = 0; /* the first value that differs, here and on rank `differs` */
    const char *what = NULL;
    record r;
    bool ok;

    if (carry) {
        r = record_of(w->recv, bytes, TAG_CARRY | (int)w->dtype << TAG_DTYPE_SHIFT | (int)w->op);
    } else {
        h->failed = !ok_here;
        for (int i = 0; i < SIG_MAX; i++)
            h->sig[i] = i < n ? sig[i] : 0;
        r = record_of(h, sizeof *h, TAG_HEAD);
    }
    ok = exchange(op, m, &r, got, tag);
    for (int j = 0; ok && j < m->size; j++) {
        const char *what_j = NULL;
        long long here_j = 0, there_j = 0;
        int c;

        /* the same small all_reduce: the same tag and length */
        if (j == m->rank || (carry && tag[j] == r.tag && (size_t)got[j] == bytes))
            continue;
        c = compare_record(m->slots + (size_t)j * SLOT_BYTES, got[j], tag[j], sig, names, n, carry, bytes, &what_j,
                           &here_j, &there_j);
        if (c < 0) {
            tendo__fail(TENDO_ERR_COMM, op, "rank %d's record of the call (%d bytes, tag %d) is not tendo's: another "
                        "build of tendo?", j, got[j], tag[j]);
            ok = false;
        } else if (c == 1 && failed < 0) {
            failed = j;
        } else if (c == 2 && differs < 0) {
            differs = j, what = what_j, here = here_j, there = there_j;
        }
    }
    if (ok && carry && failed < 0 && differs < 0) {
        if (m->size == 2) {
            const void *peer = m->slots + (size_t)(1 - m->rank) * SLOT_BYTES;
            tendo__fold_pair(w->dtype, w->op, m->rank ? peer : w->recv, m->rank ? w->recv : peer, w->recv, w->count);
        } else { /* the ranks' slots in rank order, this rank's data in its own */
            memcpy(m->slots + (size_t)m->rank * SLOT_BYTES, w->recv, bytes);
            tendo__fold(w->dtype, w->op, m->size, m->slots, (int64_t)(SLOT_BYTES / es), w->count, w->recv, m->size);
        }
        *done = true;
    }
    if (!ok || !ok_here)
        return false; /* a rank that failed keeps its own error */
    if (failed >= 0)
        return tendo__fail(TENDO_ERR_COMM, op, "rank %d's arguments were refused (see its error)", failed), false;
    if (differs >= 0)
        return tendo__fail(TENDO_ERR_COMM, op, "the ranks' calls do not match: %s differs (%lld here, %lld on rank %d)",
                           what, here, there, differs),
               false;
    return true;
}

bool tendo__mpi_join(const char *op, struct tendo__mpi **m, int *rank, int *size)
{
    int inited = 0, done = 0, provided = 0;
    bool ok = true;

    *m = NULL;
    *rank = 0;
    *size = 1;
    lock_mpi();
    if (!joined) {
        MPI_Initialized(&inited);
        MPI_Finalized(&done);
        if (done) {
            ok = false;
            tendo__fail(TENDO_ERR_COMM, op, "MPI was finalized already");
        } else if (!inited && launched_by_mpi()) {
            ok = mpi_ok(op, MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
            if (ok) {
                we_initialised = true;
                inited = 1;
                thread_level = provided;
            }
        } else if (inited) {
            ok = mpi_ok(op, MPI_Query_thread(&thread_level), "MPI_Query_thread") && thread_may_call(op);
        }
        if (ok && inited) {
            const char *check = getenv("TENDO_COMM_CHECK");
            check_calls = !(check && !strcmp(check, "0"));
            bool dup = mpi_ok(op, MPI_Comm_dup(MPI_COMM_WORLD, &world.comm), "MPI_Comm_dup");
            ok = dup && mpi_ok(op, MPI_Comm_set_errhandler(world.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler") &&
                 mpi_ok(op, MPI_Comm_rank(world.comm, &world.rank), "MPI_Comm_rank") &&
                 mpi_ok(op, MPI_Comm_size(world.comm, &world.size), "MPI_Comm_size") && make_slots(op);
            if (!ok && dup)
                MPI_Comm_free(&world.comm);
            if (ok) {
                /* the ranks on this machine share its cores by default */
                MPI_Comm here;
                int nhere = 1;
                if (MPI_Comm_split_type(world.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &here) == MPI_SUCCESS) {
                    MPI_Comm_size(here, &nhere);
                    MPI_Comm_free(&here);
                }
                tendo__threads_share(nhere);
                joined = true;
                if (atexit(finalize_at_exit) != 0) {
                    ok = false;
                    tendo__fail(TENDO_ERR_COMM, op, "cannot register MPI's finalization at exit");
                }
            }
        }
    }
    if (ok && joined) {
        *m = &world;
        *rank = world.rank;
        *size = world.size;
    }
    unlock_mpi();
    return ok;
}

/* On any thread, without the lock: a rank that cannot go on ends the job
 * (the one MPI call tendo makes whatever the thread level). */
_Noreturn void tendo__mpi_abort(struct tendo__mpi *m, int code)
{
    if (m)
        MPI_Abort(m->comm, code);
    exit(code);
}

bool tendo__mpi_bcast_bytes(const char *op, struct tendo__mpi *m, void *buf, size_t n)
{
    bool ok;

    if (n > INT_MAX)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "broadcast of %zu bytes", n), false;
    lock_mpi();
    ok = thread_may_call(op) && mpi_ok(op, MPI_Bcast(buf, (int)n, MPI_BYTE, 0, m->comm), "MPI_Bcast");
    unlock_mpi();
    return ok;
}

/* ---- the collectives --------------------------------------------------------- */

/* The MPI type of dt's elements for op; MPI_DATATYPE_NULL for the narrow
 * floats (stored as 16- or 8-bit patterns, reduced by fold.c), and for the
 * 8- and 16-bit integers and bool too: Open MPI 4.1's vectorised ops sum
 * those with saturation (Debian 12's 4.1.4 gives 200 + 100 = 255 for
 * uint8 once a buffer holds 32 elements), where tendo's integers wrap. */
static MPI_Datatype native_type(tendo_dtype dt, tendo_reduce_op op)
{
    const tendo__traits *tr = tendo__traits_of(dt);
    bool wrap = op == TENDO_REDUCE_SUM || op == TENDO_REDUCE_PROD;

    if (tr->size <= 2)
        return MPI_DATATYPE_NULL;
    switch (tr->compute) {
    case TENDO__COMPUTE_FLOAT:
        return tr->own_compute ? MPI_FLOAT : MPI_DATATYPE_NULL;
    case TENDO__COMPUTE_DOUBLE:
        return MPI_DOUBLE;
    case TENDO__COMPUTE_INT64:
        return tr->size == 4 ? (wrap ? MPI_UINT32_T : MPI_INT32_T) : (wrap ? MPI_UINT64_T : MPI_INT64_T);
    case TENDO__COMPUTE_UINT64:
        return tr->size == 4 ? MPI_UINT32_T : MPI_UINT64_T;
    }
    return MPI_DATATYPE_NULL;
}

/* An MPI type of dt's size that moves elements as they are (no reduction). */
static MPI_Datatype bits_type(size_t size)
{
    return size == 1 ? MPI_UINT8_T : size == 2 ? MPI_UINT16_T : size == 4 ? MPI_UINT32_T : MPI_UINT64_T;
}

static MPI_Op native_op(tendo_reduce_op op)
{
    switch (op) {
    case TENDO_REDUCE_MAX:
        return MPI_MAX;
    case TENDO_REDUCE_MIN:
        return MPI_MIN;
    case TENDO_REDUCE_PROD:
        return MPI_PROD;
    case TENDO_REDUCE_SUM:
    case TENDO_REDUCE_AVG:
        break;
    }
    return MPI_SUM;
}

/* ---- user-defined ops: tendo's own reduction inside one MPI call ---- */

/* A reduction native_type leaves out can still be one MPI call with an op
 * of tendo's (fold.c's pairwise combine) where combining pairs gives the
 * exact result: integers (their arithmetic wraps, in any order), and the
 * 16- and 8-bit floats between two ranks (one combine: rounded once). */
/* user_type[code]: the type MPI hands the op for dtype code (made at
 * first use, like user_op[op]; both freed before MPI_Finalize) */
static tendo_dtype dtype_of(MPI_Datatype t)
{
    for (int c = 0; c < MAX_CODES; c++)
        if (user_type_made[c] && user_type[c] == t)
            return (tendo_dtype)c;
    return (tendo_dtype)0;
}

#define USER_FN(name, op)                                                                          \
    static void user_##name(void *in, void *inout, int *len, MPI_Datatype *t)                     \
    {                                                                                              \
        tendo__fold_pair(dtype_of(*t), op, inout, in, inout, *len);                               \
    }
USER_FN(sum, TENDO_REDUCE_SUM)
USER_FN(avg, TENDO_REDUCE_AVG)
USER_FN(max, TENDO_REDUCE_MAX)
USER_FN(min, TENDO_REDUCE_MIN)
USER_FN(prod, TENDO_REDUCE_PROD)
#undef USER_FN

static bool pairwise_exact(tendo_dtype dt, int size)
{
    tendo__compute c = tendo__traits_of(dt)->compute;
    return c == TENDO__COMPUTE_INT64 || c == TENDO__COMPUTE_UINT64 || size == 2;
}

/* The user-defined type and op of dt and op (made at first use). */
static bool user_pair(const char *op, tendo_dtype dt, tendo_reduce_op rop, MPI_Datatype *type, MPI_Op *mop)
{
    static MPI_User_function *const fns[] = {user_sum, user_avg, user_max, user_min, user_prod};

    if ((int)dt >= MAX_CODES)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "dtype code %d", (int)dt), false;
    if (!user_type_made[dt]) {
        if (!mpi_ok(op, MPI_Type_contiguous(1, bits_type(tendo_dtype_size(dt)), &user_type[dt]), "MPI_Type_contiguous"))
            return false;
        if (!mpi_ok(op, MPI_Type_commit(&user_type[dt]), "MPI_Type_commit")) {
            MPI_Type_free(&user_type[dt]);
            return false;
        }
        user_type_made[dt] = true;
    }
    if (!user_op_made[rop]) {
        if (!mpi_ok(op, MPI_Op_create(fns[rop], 1, &user_op[rop]), "MPI_Op_create"))
            return false;
        user_op_made[rop] = true;
    }
    *type = user_type[dt];
    *mop = user_op[rop];
    return true;
}

/* Gathered whole below this many bytes of every rank's data together. */
#define GATHER_WHOLE_BYTES ((size_t)64 << 10)

/* all_reduce or reduce_scatter of the types native_type leaves out: see
 * the top of the file. */
/* m's scratch buffer of at least n bytes, or NULL with the error set. */
static void *scratch(const char *op, struct tendo__mpi *m, size_t n)
{
    if (n > m->scratch_n) {
        void *p = tendo__malloc(n);
        if (!p) {
            tendo__fail(TENDO_ERR_OOM, op, "out of memory for %zu bytes of the ranks' data", n);
            return NULL;
        }
        free(m->scratch);
        m->scratch = p;
        m->scratch_n = n;
    }
    return m->scratch;
}

static bool fold_reduce(const char *op, struct tendo__mpi *m, const tendo__coll *w)
{
    int rank = m->rank, size = m->size;
    MPI_Comm comm = m->comm;
    size_t es = tendo_dtype_size(w->dtype);
    MPI_Datatype bt = bits_type(es);
    bool scatter = w->kind == TENDO__COLL_REDUCE_SCATTER;
    int64_t n = scatter ? w->count * size : w->count; /* each rank's elements */
    int64_t chunk = scatter ? w->count : (n + size - 1) / size;
    int *cnt = NULL, *dsp = NULL;
    char *buf;
    bool ok;

    if (!scatter && (size_t)n * es * (size_t)size <= GATHER_WHOLE_BYTES) {
        if (!(buf = scratch(op, m, (size_t)n * es * (size_t)size)))
            return false;
        ok = mpi_ok(op, MPI_Allgather(w->send, (int)n, bt, buf, (int)n, bt, comm), "MPI_Allgather");
        if (ok)
            tendo__fold(w->dtype, w->op, size, buf, n, n, w->recv, size);
        return ok;
    }
    cnt = tendo__malloc(4 * (size_t)size * sizeof *cnt);
    if (!cnt)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for the ranks' chunks"), false;
    if (!(buf = scratch(op, m, (size_t)chunk * es * (size_t)size))) {
        free(cnt);
        return false;
    }
    dsp = cnt + size;
    /* send: chunk j of my data to rank j; receive: chunk `rank` of every rank */
    int64_t mine = rank * chunk >= n ? 0 : (n - rank * chunk < chunk ? n - rank * chunk : chunk);
    int *rcnt = dsp + size, *rdsp = rcnt + size;
    for (int j = 0; j < size; j++) {
        int64_t len = j * chunk >= n ? 0 : (n - j * chunk < chunk ? n - j * chunk : chunk);
        cnt[j] = (int)len;
        dsp[j] = (int)(j * chunk);
        rcnt[j] = (int)mine;
        rdsp[j] = (int)(j * mine);
    }
    ok = mpi_ok(op, MPI_Alltoallv(w->send, cnt, dsp, bt, buf, rcnt, rdsp, bt, comm), "MPI_Alltoallv");
    if (ok && scatter) {
        tendo__fold(w->dtype, w->op, size, buf, mine, mine, w->recv, size);
    } else if (ok) {
        tendo__fold(w->dtype, w->op, size, buf, mine, mine, (char *)w->recv + (size_t)(rank * chunk) * es, size);
        ok = mpi_ok(op, MPI_Allgatherv(MPI_IN_PLACE, 0, bt, w->recv, cnt, dsp, bt, comm), "MPI_Allgatherv");
    }
    free(cnt);
    return ok;
}

static bool run_locked(const char *op, struct tendo__mpi *m, const tendo__coll *w)
{
    int size = m->size;
    MPI_Comm comm = m->comm;
    size_t es;
    MPI_Datatype nt;
    MPI_Op mop;
    bool divide = true;
    int64_t n = w->count;

    if (w->kind == TENDO__COLL_BARRIER)
        return mpi_ok(op, MPI_Barrier(comm), "MPI_Barrier");
    es = tendo_dtype_size(w->dtype);
    nt = native_type(w->dtype, w->op);
    switch (w->kind) {
    case TENDO__COLL_BARRIER:
        break;
    case TENDO__COLL_BROADCAST:
        for (int64_t at = 0; at < n; at += INT_MAX) {
            int m = (int)(n - at < INT_MAX ? n - at : INT_MAX);
            if (!mpi_ok(op, MPI_Bcast((char *)w->recv + (size_t)at * es, m, bits_type(es), w->root, comm),
                        "MPI_Bcast"))
                return false;
        }
        return true;
    case TENDO__COLL_ALL_GATHER:
        return mpi_ok(op, MPI_Allgather(w->send, (int)n, bits_type(es), w->recv, (int)n, bits_type(es), comm),
                      "MPI_Allgather");
    case TENDO__COLL_REDUCE_SCATTER:
    case TENDO__COLL_ALL_REDUCE:
        if (nt != MPI_DATATYPE_NULL) {
            mop = native_op(w->op);
        } else if (!pairwise_exact(w->dtype, size)) {
            return fold_reduce(op, m, w);
        } else {
            if (!user_pair(op, w->dtype, w->op, &nt, &mop))
                return false;
            divide = false; /* the user op's AVG is the mean of two */
        }
        if (w->kind == TENDO__COLL_REDUCE_SCATTER) {
            if (!mpi_ok(op, MPI_Reduce_scatter_block(w->send, w->recv, (int)n, nt, mop, comm),
                        "MPI_Reduce_scatter_block"))
                return false;
            break;
        }
        for (int64_t at = 0; at < n; at += INT_MAX) {
            int k = (int)(n - at < INT_MAX ? n - at : INT_MAX);
            if (!mpi_ok(op, MPI_Allreduce(MPI_IN_PLACE, (char *)w->recv + (size_t)at * es, k, nt, mop, comm),
                        "MPI_Allreduce"))
                return false;
        }
        break;
    }
    if (divide && w->op == TENDO_REDUCE_AVG) /* the sum divided by the size, in place */
        tendo__fold(w->dtype, TENDO_REDUCE_AVG, 1, w->recv, n, n, w->recv, size);
    return true;
}

/* run_locked, after the counts that MPI cannot take are refused.  Called
 * with the lock held. */
static bool run_checked(const char *op, struct tendo__mpi *m, const tendo__coll *w)
{
    int size = m->size;
    bool chunked = w->kind == TENDO__COLL_ALL_REDUCE || w->kind == TENDO__COLL_BROADCAST;

    if (!chunked && w->count > INT_MAX / size)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "more than 2^31 - 1 elements across the ranks in one call"),
               false;
    if (w->kind == TENDO__COLL_ALL_REDUCE && w->count > INT_MAX && native_type(w->dtype, w->op) == MPI_DATATYPE_NULL &&
        !pairwise_exact(w->dtype, size))
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "more than 2^31 - 1 elements of a 16- or 8-bit float"), false;
    return run_locked(op, m, w);
}

bool tendo__mpi_agree(const char *op, struct tendo__mpi *m, const int64_t *sig, const char *const *names, int n,
                      bool ok_here, const tendo__coll *w)
{
    bool ok, done = false;

    lock_mpi();
    if (!thread_may_call(op)) /* before any message: every rank's same call fails alike */
        ok = false;
    else if (!check_calls) /* the program vouches for its calls */
        ok = ok_here;
    else if (m->slots)
        ok = agree_by_exchange(op, m, sig, names, n, ok_here, w, &done);
    else
        ok = agree_by_max(op, m, sig, names, n, ok_here);
    if (ok && w && !done)
        ok = run_checked(op, m, w);
    unlock_mpi();
    return ok;
}

bool tendo__mpi_run(const char *op, struct tendo__mpi *m, const tendo__coll *w)
{
    bool ok;

    lock_mpi();
    ok = thread_may_call(op) && run_checked(op, m, w);
    unlock_mpi();
    return ok;
}

#else /* no MPI: a world of one, which never reaches the transport */

bool tendo__mpi_join(const char *op, struct tendo__mpi **m, int *rank, int *size)
{
    (void)op;
    *m = NULL;
    *rank = 0;
    *size = 1;
    return true;
}

_Noreturn void tendo__mpi_abort(struct tendo__mpi *m, int code)
{
    (void)m;
    exit(code);
}

bool tendo__mpi_bcast_bytes(const char *op, struct tendo__mpi *m, void *buf, size_t n)
{
    (void)m, (void)buf, (void)n;
    return tendo__fail(TENDO_ERR_COMM, op, "this build has no MPI"), false;
}

bool tendo__mpi_agree(const char *op, struct tendo__mpi *m, const int64_t *sig, const char *const *names, int n,
                      bool ok_here, const tendo__coll *w)
{
    (void)m, (void)sig, (void)names, (void)n;
    if (ok_here && w) /* a world of one never has data to move */
        return tendo__fail(TENDO_ERR_COMM, op, "this build has no MPI"), false;
    return ok_here;
}

bool tendo__mpi_run(const char *op, struct tendo__mpi *m, const tendo__coll *w)
{
    (void)m, (void)w;
    return tendo__fail(TENDO_ERR_COMM, op, "this build has no MPI"), false;
}

#endif
