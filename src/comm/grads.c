/* src/comm/grads.c - tendo_optimizer_all_reduce_grads: data-parallel
 * training's average of the gradients across the ranks, in buckets, as
 * PyTorch's DistributedDataParallel does.
 *
 * The gradients, in reverse parameter order (the order backward makes
 * them), go in buckets of one dtype and device of up to BUCKET_BYTES: a
 * bucket's gradients are copied into one dense buffer, all-reduced (AVG)
 * in one collective, and copied back, so that a model of many small
 * tensors costs a few collectives, not one per tensor; a dense gradient
 * of BUCKET_BYTES or more is all-reduced where it is.  Every rank must
 * hold gradients of the same parameters (sizes, dtypes and devices): one
 * small all-reduce first compares them, so that a difference is an error
 * on every rank rather than ranks making different collectives.
 *
 * The buckets are reduced after backward, not during it: on the CPU, MPI
 * moves data only inside its calls and the compute has every core, so a
 * collective started early gains nothing here (README, "Data-parallel:
 * mpirun -np N tendo-train"). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/autograd.h"
#include "core/index.h"
#include "core/optim.h"

#define BUCKET_BYTES ((size_t)4 << 20)

/* Averages gs[0..n) (one dtype and device) through one dense bucket.
 * False with the error set; the bucket's collective has been made either
 * way (with nothing, when this rank failed before it: the others' then
 * fails too), so that every rank makes the same calls. */
static bool reduce_bucket(const char *op, const tendo_comm *c, tendo__tensor *const *gs, int64_t n, int64_t elems)
{
    tendo__tensor *b = tendo__tensor_new(op, gs[0]->dtype, 1, &elems, gs[0]->storage->device);
    tendo_status st = b ? TENDO_OK : TENDO_ERR_OOM;
    int64_t at = 0;

    for (int64_t i = 0; st == TENDO_OK && i < n; at += gs[i]->numel, i++) {
        tendo__tensor *v = tendo__tensor_view(op, b, gs[i]->ndim, gs[i]->shape, NULL, at);
        st = v ? tendo__copy_into(op, v, gs[i]) : TENDO_ERR_OOM;
        tendo__tensor_free(v);
    }
    if (st == TENDO_OK)
        st = tendo__all_reduce(op, c, b, TENDO_REDUCE_AVG);
    else
        (void)tendo__all_reduce(op, c, NULL, TENDO_REDUCE_AVG);
    at = 0;
    for (int64_t i = 0; st == TENDO_OK && i < n; at += gs[i]->numel, i++) {
        tendo__tensor *v = tendo__tensor_view(op, b, gs[i]->ndim, gs[i]->shape, NULL, at);
        st = v ? tendo__copy_into(op, gs[i], v) : tendo__fail(TENDO_ERR_OOM, op, "out of memory");
        tendo__tensor_free(v);
    }
    tendo__tensor_free(b);
    return st == TENDO_OK;
}

/* Whether every rank of c holds gradients of the same parameters, of the
 * same sizes, dtypes and device types (a hash of them, through the ranks'
 * agreement of comm.c's collectives): the buckets, and so the collectives
 * each rank makes, follow from them.  False with the error set on every
 * rank when not. */
static bool same_gradients(const char *op, const tendo_comm *c, const tendo_optimizer *opt, int64_t n)
{
    static const char *const what[] = {"the parameters holding gradients (or their sizes, dtypes or devices)"};
    uint64_t h = 1469598103934665603ull;
    int64_t sig;

    for (int64_t i = 0; i < n; i++) {
        const tendo__tensor *g = tendo__optimizer_grad(opt, i);
        uint64_t f[4] = {(uint64_t)i, g ? (uint64_t)g->numel : UINT64_MAX, g ? (uint64_t)g->dtype : 0,
                         g ? (uint64_t)g->storage->device.type : 0};
        for (int k = 0; k < 4; k++)
            h = (h ^ f[k]) * 1099511628211ull;
    }
    sig = (int64_t)(h >> 1);
    return tendo__mpi_agree(op, c->mpi, &sig, what, 1, true, NULL);
}

tendo_status tendo_optimizer_all_reduce_grads(tendo_optimizer *opt, const tendo_comm *c)
{
    static const char op[] = "optimizer_all_reduce_grads";
    int64_t n = tendo_optimizer_count(opt), nb = 0, elems = 0;
    size_t bytes = 0;
    tendo__tensor **bucket;
    tendo_status st = TENDO_OK;
    char msg[512] = "";
    bool grad_mode;

    if (!opt || !c)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL", opt ? "c" : "opt");
    if (c->size == 1) /* the average of one rank */
        return TENDO_OK;
    if (!same_gradients(op, c, opt, n))
        return tendo_error_status(tendo_last_error());
    if (!(bucket = tendo__malloc((size_t)(n ? n : 1) * sizeof *bucket))) {
        (void)tendo__all_reduce(op, c, NULL, TENDO_REDUCE_AVG); /* the others fail too */
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    }
    grad_mode = tendo__set_grad_enabled(false);
    /* every bucket's collective is made, by every rank, whatever failed
     * before (then with nothing), and the first failure is kept */
    for (int64_t i = n - 1; i >= -1; i--) {
        tendo__tensor *g = i >= 0 ? tendo__optimizer_grad(opt, i) : NULL;
        size_t gb = g ? (size_t)g->numel * tendo_dtype_size(g->dtype) : 0;
        bool fits = g && nb > 0 && g->dtype == bucket[0]->dtype &&
                    tendo_device_equal(g->storage->device, bucket[0]->storage->device) && bytes + gb <= BUCKET_BYTES;
        bool ok = true;

        if (i >= 0 && !g)
            continue;
        if (nb > 0 && !fits) { /* the bucket so far is full, or the last */
            if (st == TENDO_OK)
                ok = reduce_bucket(op, c, bucket, nb, elems);
            else
                (void)tendo__all_reduce(op, c, NULL, TENDO_REDUCE_AVG);
            nb = 0, elems = 0, bytes = 0;
        }
        if (g && gb >= BUCKET_BYTES && tendo__tensor_contiguous(g)) {
            if (st == TENDO_OK && ok)
                ok = tendo__all_reduce(op, c, g, TENDO_REDUCE_AVG) == TENDO_OK;
            else
                (void)tendo__all_reduce(op, c, NULL, TENDO_REDUCE_AVG);
        } else if (g) {
            bucket[nb++] = g;
            elems += g->numel;
            bytes += gb;
        }
        if (!ok && st == TENDO_OK) {
            st = tendo_error_status(tendo_last_error());
            snprintf(msg, sizeof msg, "%s", tendo_error_message(tendo_last_error()));
        }
    }
    tendo__set_grad_enabled(grad_mode);
    free(bucket);
    if (st == TENDO_OK)
        return TENDO_OK;
    /* the message kept already names op */
    size_t k = strlen(op);
    return tendo__fail(st, op, "%s", strncmp(msg, op, k) == 0 && msg[k] == ':' ? msg + k + 2 : msg);
}
