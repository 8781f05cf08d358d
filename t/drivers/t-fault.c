/* t/drivers/t-fault.c - allocation failure, swept SQLite-style.
 *
 * tendo promises that every public call fails cleanly: a status or NULL
 * with the error set, its inputs untouched, nothing leaked, the library
 * usable after.  For out of memory that is proved here: each call is run
 * once clean to count the N allocations it makes (tendo__alloc_count),
 * then N more times with allocation k = 1..N made to fail
 * (tendo_fault_inject_alloc).  Each of those runs must succeed (the library
 * may recover) or fail as TENDO_ERR_OOM naming the call the program made
 * (tendo_error_op), leave every input bit-identical and the CPU pool's
 * bytes and blocks in use as they were, and the next clean call must
 * succeed.  Leaks show under AddressSanitizer (CI runs the suite so, with
 * TENDO_POOL=off, which also makes every tensor a fresh allocation).
 *
 * Part 1 sweeps every per-dtype function of every dtype through the thunks
 * of t/fault-table.h (generated from the registry (gen/registry/), so a
 * new function is swept without a list kept here), once with contiguous
 * inputs and once with strided views.  Part 2 sweeps sequences a program
 * makes: safetensors save / load / compute, .npy save and load, a DLPack
 * round trip, a collection built and queried, the erased API, the pool's
 * segments; a save that fails must leave no stray file, and the target
 * either as it was or wholly the new file.
 *
 * One TAP line per function or sequence; T_FAULT_VERBOSE=1 prints every
 * fault found, not just the first of each.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/autograd.h"
#include "core/internal.h"
#include "fault-table.h"
#include "tap.h"
#include "tendo.h"
#include "tendo/dlpack.h"

/* ---- what a run must leave as it was ----------------------------------------- */

typedef struct {
    int64_t bytes_in_use, blocks;
} pool_use;

/* The device part 1 is sweeping (its pool is checked beside the CPU's). */
static tendo_device swept_device;

static pool_use pool_now(void)
{
    tendo_pool_stats s = tendo_pool_get_stats(tendo_cpu());
    pool_use u = {s.bytes_in_use, s.allocations - s.deallocations};

    if (swept_device.type == TENDO_CUDA) {
        s = tendo_pool_get_stats(swept_device);
        u.bytes_in_use += s.bytes_in_use;
        u.blocks += s.allocations - s.deallocations;
    }
    return u;
}

/* A tensor's elements, read back raw. */
typedef struct {
    size_t n;
    unsigned char *bytes;
} snap;

static snap snapshot(const void *t)
{
    const tendo__tensor *c = t;
    snap s = {(size_t)c->numel * tendo_dtype_size(c->dtype), NULL};

    s.bytes = malloc(s.n ? s.n : 1);
    if (!s.bytes || tendo__read_dense("t-fault", c, s.bytes) != TENDO_OK)
        bail("cannot snapshot a tensor");
    return s;
}

static bool same(const void *t, const snap *s)
{
    snap now = snapshot(t);
    bool eq = now.n == s->n && !memcmp(now.bytes, s->bytes, s->n);

    free(now.bytes);
    return eq;
}

/* The first failure of a sweep, kept for its diag; counts the rest. */
typedef struct {
    int64_t points, bad;
    char first[600];
} sweep;

static void TAP_PRINTF(2, 3) fault(sweep *w, const char *fmt, ...)
{
    va_list ap;
    char msg[sizeof w->first];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (getenv("T_FAULT_VERBOSE")) /* every fault, not just the first */
        diag("%s", msg);
    if (!w->bad++)
        memcpy(w->first, msg, sizeof msg);
}

/* The error after a failed run under injection k: OOM, reported for op
 * (the call the program made, not one it makes inside), or a fault. */
static void want_oom(sweep *w, const char *what, const char *op, int64_t k)
{
    const tendo_error *e = tendo_last_error();
    const char *msg = tendo_error_message(e);

    if (tendo_error_status(e) != TENDO_ERR_OOM)
        fault(w, "%s: allocation %lld failing gave %s (\"%s\"), not TENDO_ERR_OOM", what, (long long)k,
              tendo_status_str(tendo_error_status(e)), msg);
    else if (strcmp(tendo_error_op(e), op))
        fault(w, "%s: allocation %lld failing was reported as \"%s\", not for %s", what, (long long)k, msg, op);
}

/* ---- part 1: every per-dtype function ------------------------------------------- */

static int64_t total_points;

/* A random tensor of dtype dt on swept_device. */
static void *make_fixture(tendo_dtype dt, int ndim, const int64_t *shape, uint64_t seed)
{
    tensor_f32 *base = tensor_f32_rand(ndim, shape, seed, tendo_cpu());
    tendo_tensor *t = base ? tendo_tensor_to_dtype(tensor_erase(base), dt) : NULL, *d = t;

    tensor_f32_free(base);
    if (t && swept_device.type == TENDO_CUDA) {
        d = tendo_tensor_to_device(t, swept_device);
        tendo_tensor_free(t);
    }
    if (!d)
        bail("cannot make a fixture: %s", tendo_error_message(tendo_last_error()));
    return d;
}

/* The same, but a non-contiguous view: a transpose (2-D) or every other
 * element (1-D), so that the paths that copy strided inputs are swept.  A
 * 0-d fixture has one layout. */
static void *make_strided_fixture(tendo_dtype dt, int ndim, const int64_t *shape, uint64_t seed)
{
    if (ndim == 0)
        return make_fixture(dt, ndim, shape, seed);
    const int64_t wide[2] = {ndim == 2 ? shape[1] : 2 * shape[0], ndim == 2 ? shape[0] : 0};
    tendo__tensor *base = make_fixture(dt, ndim, wide, seed);
    tendo__tensor *v = ndim == 2 ? tendo__transpose(base, 0, 1) : tendo__slice(base, 0, 0, wide[0], 2);

    tendo__tensor_free(base);
    if (!v || tendo__tensor_contiguous(v))
        bail("cannot make a strided fixture");
    return v;
}

static void new_fresh(tf_ctx *x, tendo_dtype dt)
{
    x->fresh = make_fixture(dt, 2, (const int64_t[]){3, 4}, 99);
}

static void drop_fresh(tf_ctx *x)
{
    tendo_tensor_free(x->fresh);
    x->fresh = NULL;
}

/* One run of f under injection k (0: none), the allocations it made in
 * *made; false when the call failed.  Checks the error and the inputs. */
static bool run_one(const tf_fn *f, tf_ctx *x, int64_t k, sweep *w, int64_t *made)
{
    snap before[TF_NFIX];
    int64_t c0;
    bool good;

    for (int i = 0; i < TF_NFIX; i++)
        before[i] = snapshot(x->fix[i]);
    new_fresh(x, f->dtype);
    rewind(x->file);
    tendo_clear_error();
    c0 = tendo__alloc_count();
    tendo_fault_inject_alloc(k);
    good = f->call(x);
    tendo_fault_inject_alloc(0);
    if (made)
        *made = tendo__alloc_count() - c0;
    /* a call the registry says a GPU refuses has nothing to sweep there */
    if (!good && k == 0 && !(swept_device.type == TENDO_CUDA && f->refused_cuda))
        fault(w, "%s: the clean call failed: %s", f->name, tendo_error_message(tendo_last_error()));
    if (!good && k > 0) /* tensor_f32_add reports as "add" */
        want_oom(w, f->name, f->name + strlen("tensor__") + strlen(tendo_dtype_name(f->dtype)), k);
    drop_fresh(x);
    for (int i = 0; i < TF_NFIX; i++) {
        if ((!good || !tf_fixtures[i].mutable_) && !same(x->fix[i], &before[i]))
            fault(w, "%s: allocation %lld failing changed input %s", f->name, (long long)k, tf_fixtures[i].name);
        free(before[i].bytes);
    }
    return good;
}

static void sweep_fn(const tf_fn *f, tf_ctx *x, const char *label)
{
    sweep w = {0, 0, ""};
    int64_t n = 0;

    /* once to warm up (first-use setup, a pool already holding blocks),
     * then once to count the allocations of a call like the swept ones;
     * a call the device refuses (the registry's refuse) has nothing to sweep */
    if (!run_one(f, x, 0, &w, NULL) && w.bad == 0) {
        skip(1, "%s%s: %s", f->name, label, tendo_error_message(tendo_last_error()));
        return;
    }
    run_one(f, x, 0, &w, &n);
    for (int64_t k = 1; k <= n; k++) {
        pool_use p0 = pool_now(), p1;
        bool good = run_one(f, x, k, &w, NULL);

        p1 = pool_now();
        if (p0.bytes_in_use != p1.bytes_in_use || p0.blocks != p1.blocks)
            fault(&w, "%s: allocation %lld failing left the pool at %lld bytes in %lld blocks, was %lld in %lld",
                  f->name, (long long)k, (long long)p1.bytes_in_use, (long long)p1.blocks,
                  (long long)p0.bytes_in_use, (long long)p0.blocks);
        if (!good && !run_one(f, x, 0, &w, NULL))
            fault(&w, "%s: the clean call after allocation %lld failing failed", f->name, (long long)k);
    }
    total_points += n;
    if (!ok(w.bad == 0, "%s%s: %lld allocation failures", f->name, label, (long long)n))
        diag("%lld faults; the first: %s", (long long)w.bad, w.first);
}

/* Every function of every dtype, its tensors on dev; strided: with
 * non-contiguous inputs (the fixtures a call may write stay contiguous). */
static void part1(bool strided, tendo_device dev)
{
    tf_ctx x;
    tendo_dtype cur = (tendo_dtype)0;
    char label[64];

    snprintf(label, sizeof label, "%s%s", strided ? " (strided inputs)" : "",
             dev.type == TENDO_CUDA ? " on cuda:0" : "");
    swept_device = dev;
    memset(&x, 0, sizeof x);
    x.device = dev;
    x.comm = tf_world();
    x.file = tmpfile();
    if (!x.file)
        bail("no tmpfile");
    for (int i = 0; i < TF_NFNS; i++) {
        const tf_fn *f = &tf_fns[i];

        if (f->dtype != cur) {
            for (int j = 0; j < TF_NFIX; j++)
                tendo_tensor_free(x.fix[j]);
            for (int j = 0; j < TF_NFIX; j++) {
                x.fix[j] = (strided && !tf_fixtures[j].mutable_ ? make_strided_fixture : make_fixture)(
                    tf_fixture_dtype(j, f->dtype), tf_fixtures[j].ndim,
                    tf_fixtures[j].shape, (uint64_t)j + 1);
                if (!tf_make_leaf(j, x.fix[j]))
                    bail("cannot make fixture %s a leaf: %s", tf_fixtures[j].name,
                         tendo_error_message(tendo_last_error()));
            }
            cur = f->dtype;
        }
        sweep_fn(f, &x, label);
    }
    for (int j = 0; j < TF_NFIX; j++)
        tendo_tensor_free(x.fix[j]);
    fclose(x.file);
    swept_device = tendo_cpu();
    diag("part 1%s: %d calls, %lld injection points so far", label, TF_NFNS, (long long)total_points);
}

/* ---- part 2: sequences a program makes ---------------------------------------------- */

static char dir[64], st_path[128], npy_path[128];
/* A second dtype for the sequences: f16 (and bf16 for a conversion) where
 * this build has them, whose kernels take per-thread scratch; else i64
 * (and f32), which every build has. */
#ifdef TENDO_HAVE_F16
#define T_SECOND TENDO_F16
#else
#define T_SECOND TENDO_I64
#endif
#ifdef TENDO_HAVE_BF16
#define T_THIRD TENDO_BF16
#else
#define T_THIRD TENDO_F32
#endif

static tendo_tensor *in_a, *in_b; /* f32 [3,4] and T_SECOND [4], the sequences' inputs */

/* The op of the call a sequence is making, which an error must name:
 * CALL("npy_save", tendo_npy_save(...)). */
static const char *calling = "";
#define CALL(op, call) (calling = (op), (call))

/* Fails the sequence as a wrong result (not out of memory): want_oom reports it. */
static bool wrong(const char *what)
{
    calling = "t-fault";
    tendo__fail(TENDO_ERR_FORMAT, calling, "%s", what);
    return false;
}

static bool same_values(const tendo_tensor *t, const tendo_tensor *want)
{
    snap s = snapshot(want);
    bool eq = tendo_tensor_dtype(t) == tendo_tensor_dtype(want) && same(t, &s);

    free(s.bytes);
    return eq;
}

/* A collection saved as safetensors, loaded back (mapped, and copied),
 * then computed with. */
static bool seq_safetensors(void)
{
    tendo_collection *c = CALL("collection_new", tendo_collection_new()), *l = NULL, *lc = NULL;
    tensor_f32 *w, *sum = NULL, *prod = NULL, *wt = NULL;
    tendo_tensor *lw, *lb;
    const char *note;
    bool good = false;

    if (!c || CALL("collection_add", tendo_collection_add(c, "w", in_a)) != TENDO_OK ||
        CALL("collection_add", tendo_collection_add(c, "b\xc3\xa9", in_b)) != TENDO_OK ||
        CALL("collection_set_metadata", tendo_collection_set_metadata(c, "format", "pt")) != TENDO_OK ||
        CALL("collection_set_metadata", tendo_collection_set_metadata(c, "n\xc3\xb8te", "caf\xc3\xa9")) != TENDO_OK ||
        CALL("safetensors_save", tendo_safetensors_save(st_path, c)) != TENDO_OK)
        goto out;
    if (!(l = CALL("safetensors_load", tendo_safetensors_load(st_path, tendo_cpu()))))
        goto out;
    note = tendo_collection_metadata(l, "n\xc3\xb8te");
    if (tendo_collection_count(l) != 2 || tendo_collection_metadata_count(l) != 2 || !note ||
        strcmp(note, "caf\xc3\xa9")) {
        wrong("safetensors: the loaded collection differs");
        goto out;
    }
    lw = tendo_collection_get(l, "w");
    lb = tendo_collection_get(l, "b\xc3\xa9");
    if (!lw || !lb || !same_values(lw, in_a) || !same_values(lb, in_b)) {
        wrong("safetensors: a loaded tensor differs");
        goto out;
    }
    if (!(lc = CALL("safetensors_load_copy", tendo_safetensors_load_copy(st_path, tendo_cpu()))))
        goto out;
    if (tendo_collection_count(lc) != 2 || !same_values(tendo_collection_get(lc, "w"), in_a)) {
        wrong("safetensors: the collection loaded by copy differs");
        goto out;
    }
    w = tendo_as_f32(lw);
    if (!(sum = CALL("add", tensor_add(w, w))) || !(wt = CALL("transpose", tensor_transpose(w, 0, 1))) ||
        !(prod = CALL("matmul", tensor_matmul(w, wt))))
        goto out;
    good = true;
out:
    tensor_free(sum);
    tensor_free(prod);
    tensor_free(wt);
    tendo_collection_free(l);
    tendo_collection_free(lc);
    tendo_collection_free(c);
    return good;
}

/* A tensor through a .npy file (one save: the file a failed run leaves
 * must be the old one or the new one). */
static bool seq_npy(void)
{
    tendo_tensor *t = NULL;
    bool good = false;

    if (CALL("npy_save", tendo_npy_save(npy_path, in_b)) != TENDO_OK ||
        !(t = CALL("npy_load", tendo_npy_load(npy_path))))
        goto out;
    if (!same_values(t, in_b)) {
        wrong("npy: the loaded tensor differs");
        goto out;
    }
    good = true;
out:
    tendo_tensor_free(t);
    return good;
}

/* Export then import, versioned and legacy. */
static bool seq_dlpack(void)
{
    DLManagedTensorVersioned *v = CALL("to_dlpack_versioned", tendo_to_dlpack_versioned(in_a));
    DLManagedTensor *m = NULL;
    tendo_tensor *t = NULL, *u = NULL;
    bool good = false;

    if (!v)
        goto out;
    if (!(t = CALL("from_dlpack_versioned", tendo_from_dlpack_versioned(v)))) {
        v->deleter(v);
        goto out;
    }
    if (!(m = CALL("to_dlpack", tendo_to_dlpack(in_b))))
        goto out;
    if (!(u = CALL("from_dlpack", tendo_from_dlpack(m)))) {
        m->deleter(m);
        goto out;
    }
    if (!same_values(t, in_a) || !same_values(u, in_b)) {
        wrong("dlpack: the imported tensor differs");
        goto out;
    }
    good = true;
out:
    tendo_tensor_free(t);
    tendo_tensor_free(u);
    return good;
}

/* A collection built and queried. */
static bool seq_collection(void)
{
    tendo_collection *c = CALL("collection_new", tendo_collection_new());
    bool good = false;

    if (!c || CALL("collection_add", tendo_collection_add(c, "a", in_a)) != TENDO_OK ||
        CALL("collection_add", tendo_collection_add(c, "b", in_b)) != TENDO_OK ||
        CALL("collection_add", tendo_collection_add(c, "\xc3\xa7", in_a)) != TENDO_OK ||
        CALL("collection_set_metadata", tendo_collection_set_metadata(c, "k", "v1")) != TENDO_OK ||
        CALL("collection_set_metadata", tendo_collection_set_metadata(c, "k", "v2")) != TENDO_OK ||
        CALL("collection_set_metadata", tendo_collection_set_metadata(c, "k2", "v")) != TENDO_OK)
        goto out;
    for (int i = 0; i < 12; i++) { /* past the first growth of the arrays */
        char name[16];

        snprintf(name, sizeof name, "x%d", i);
        if (CALL("collection_add", tendo_collection_add(c, name, in_b)) != TENDO_OK)
            goto out;
    }
    if (tendo_collection_count(c) != 15 || !tendo_collection_get(c, "\xc3\xa7") ||
        strcmp(tendo_collection_metadata(c, "k"), "v2") || !same_values(tendo_collection_get(c, "x11"), in_b)) {
        wrong("collection: wrong contents");
        goto out;
    }
    good = true;
out:
    tendo_collection_free(c);
    return good;
}

/* The type-erased API: an alias, a conversion, a copy.  (The erased
 * conversions report errors as the typed call they dispatch to.) */
static bool seq_erased(void)
{
    tendo_tensor *al = NULL, *h = NULL, *d = NULL;
    bool good = false;

    if (!(al = CALL("tensor_alias", tendo_tensor_alias(in_b))) ||
        !(h = CALL(T_THIRD == TENDO_F32 ? "to_f32" : "to_bf16", tendo_tensor_to_dtype(al, T_THIRD))) ||
        !(d = CALL("to", tendo_tensor_to_device(h, tendo_cpu()))))
        goto out;
    if (!same_values(al, in_b) || !same_values(d, h)) {
        wrong("erased: wrong values");
        goto out;
    }
    good = true;
out:
    tendo_tensor_free(al);
    tendo_tensor_free(h);
    tendo_tensor_free(d);
    return good;
}

/* Tensors too big for the pool's small segments, from an emptied cache:
 * each needs a fresh segment, whose allocation is what fails. */
static bool seq_pool(void)
{
    const int64_t n[1] = {600000}; /* 2.4 MB: a medium block */
    tensor_f32 *a = NULL, *b = NULL;
    bool good = false;

    tendo_pool_empty_cache(tendo_cpu());
    if (!(a = CALL("zeros", tensor_f32_zeros(1, n, tendo_cpu()))) || !(b = CALL("add", tensor_add(a, a))))
        goto out;
    good = true;
out:
    tensor_free(a);
    tensor_free(b);
    return good;
}

/* Ops whose CPU work is spread over two OpenMP threads, each task taking
 * its own scratch inside the parallel region (bf16 GEMM panels, f16
 * attention tiles; f32's where a build has neither): a failure on either
 * thread must fail the call whole. */
#if defined(TENDO_HAVE_BF16) && defined(TENDO_HAVE_F16)
typedef tensor_bf16 gemm_t;
typedef tensor_f16 attn_t;
#define TO_GEMM(t) CALL("to_bf16", tensor_to_bf16(t))
#define TO_ATTN(t) CALL("to_f16", tensor_to_f16(t))
#else
typedef tensor_f32 gemm_t;
typedef tensor_f32 attn_t;
#define TO_GEMM(t) CALL("to_f32", tensor_to_f32(t))
#define TO_ATTN(t) CALL("to_f32", tensor_to_f32(t))
#endif
static bool seq_threads(void)
{
    const int64_t sa[2] = {300, 64}, sq[4] = {1, 4, 130, 32};
    int was = tendo_get_num_threads();
    tensor_f32 *a = NULL, *q = NULL;
    gemm_t *ab = NULL, *bt = NULL, *p = NULL;
    attn_t *qh = NULL, *o = NULL;
    bool good = false;

    tendo_set_num_threads(2);
    if (!(a = CALL("rand", tensor_f32_rand(2, sa, 11, tendo_cpu()))) || !(ab = TO_GEMM(a)) ||
        !(bt = CALL("transpose", tensor_transpose(ab, 0, 1))) || !(p = CALL("matmul", tensor_matmul(ab, bt))) ||
        !(q = CALL("rand", tensor_f32_rand(4, sq, 12, tendo_cpu()))) || !(qh = TO_ATTN(q)) ||
        !(o = CALL("attention", tensor_attention(qh, qh, qh, NULL, true, 0.0))))
        goto out;
    good = true;
out:
    tendo_set_num_threads(was);
    tensor_free(a);
    tensor_free(ab);
    tensor_free(bt);
    tensor_free(p);
    tensor_free(q);
    tensor_free(qh);
    tensor_free(o);
    return good;
}

/* A program's GPU work: a tensor to cuda:0, elementwise, cuBLAS and a
 * split reduction (its partial sums take scratch) there, a new pool
 * segment from an emptied cache, the results back. */
static bool seq_gpu(void)
{
    const tendo_device gpu = tendo_cuda(0);
    const int64_t wide[2] = {2, 40000}, big[1] = {600000};
    tendo_tensor *d = NULL, *h = NULL;
    tensor_f32 *s = NULL, *t = NULL, *m = NULL, *w = NULL, *r = NULL, *z = NULL, *want = NULL;
    bool good = false;

    if (!(d = CALL("to", tendo_tensor_to_device(in_a, gpu))) ||
        !(s = CALL("add", tensor_add(tendo_as_f32(d), tendo_as_f32(d)))) ||
        !(t = CALL("transpose", tensor_transpose(s, 0, 1))) || !(m = CALL("matmul", tensor_matmul(s, t))) ||
        !(w = CALL("rand", tensor_f32_rand(2, wide, 5, gpu))) || !(r = CALL("sum", tensor_sum(w, 1, false))))
        goto out;
    tendo_pool_empty_cache(gpu);
    if (!(z = CALL("zeros", tensor_f32_zeros(1, big, gpu))) || !(h = CALL("to", tendo_tensor_to_device(tensor_erase(s), tendo_cpu()))))
        goto out;
    if (!(want = CALL("add", tensor_add(tendo_as_f32(in_a), tendo_as_f32(in_a)))))
        goto out;
    if (!same_values(h, tensor_erase(want))) {
        wrong("gpu: add on cuda:0 differs from the CPU's");
        goto out;
    }
    good = true;
out:
    tendo_tensor_free(d);
    tendo_tensor_free(h);
    tensor_free(s);
    tensor_free(t);
    tensor_free(m);
    tensor_free(w);
    tensor_free(r);
    tensor_free(z);
    tensor_free(want);
    return good;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;

    *n = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len)
        *n = (size_t)len;
    fclose(f);
    return buf;
}

static void write_file(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        bail("cannot write %s", path);
}

/* Names in dir other than the two targets, as one string (empty: none). */
static void strays(char *out, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    out[0] = '\0';
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "m.safetensors") &&
            strcmp(e->d_name, "t.npy") && strlen(out) + strlen(e->d_name) + 2 < len) {
            strcat(out, " ");
            strcat(out, e->d_name);
        }
    if (d)
        closedir(d);
}

/* A forward and backward pass through a small network (matmul, relu,
 * layer_norm, log_softmax, a broadcast bias, a sum): a failed backward must
 * leave the leaves' gradients exactly as they were. */
static tensor_f32 *bw_w1, *bw_w2, *bw_bias;

static bool seq_backward(void)
{
    tensor_f32 *leaves[3] = {bw_w1, bw_w2, bw_bias};
    tensor_f32 *h = NULL, *r = NULL, *n = NULL, *o = NULL, *ob = NULL, *ls = NULL, *loss = NULL;
    const tensor_f32 *x = tendo_as_f32(in_a);
    snap before[3];
    bool good = false, kept = true;

    /* the gradients so far, read without allocating through tendo */
    for (int i = 0; i < 3; i++) {
        const tendo__tensor *g = ((const tendo__tensor *)(const void *)leaves[i])->ag->grad;
        before[i] = g ? snapshot((const tendo_tensor *)(const void *)g) : (snap){0};
    }
    if ((h = CALL("matmul", tensor_matmul(x, bw_w1))) && (r = CALL("relu", tensor_relu(h))) &&
        (n = CALL("layer_norm", tensor_layer_norm(r, NULL, NULL, 1e-5))) &&
        (o = CALL("matmul", tensor_matmul(n, bw_w2))) && (ob = CALL("add", tensor_add(o, bw_bias))) &&
        (ls = CALL("log_softmax", tensor_log_softmax(ob, -1))) && (loss = CALL("sum_all", tensor_sum_all(ls))))
        good = CALL("backward", tensor_backward(loss, NULL)) == TENDO_OK;
    for (int i = 0; i < 3; i++) {
        const tendo__tensor *g = ((const tendo__tensor *)(const void *)leaves[i])->ag->grad;

        if (!good)
            kept = kept && (before[i].bytes ? g && same((const tendo_tensor *)(const void *)g, &before[i]) : !g);
        free(before[i].bytes);
    }
    tensor_free(loss), tensor_free(ls), tensor_free(ob), tensor_free(o), tensor_free(n), tensor_free(r), tensor_free(h);
    if (!kept)
        return wrong("a failed backward changed a leaf's gradient");
    return good;
}

#ifdef TENDO_HAVE_BF16
static tensor_bf16 *bw_half;

/* A bf16 leaf used three times: the engine sums its gradients in f32 and
 * rounds once (conversions that can fail), into the gradient it already
 * has from the sweep's earlier runs. */
static bool seq_backward_bf16(void)
{
    const tendo__tensor *g = ((const tendo__tensor *)(const void *)bw_half)->ag->grad;
    snap before = g ? snapshot((const tendo_tensor *)(const void *)g) : (snap){0};
    tensor_bf16 *sq = NULL, *s = NULL, *loss = NULL;
    bool good = false, kept;

    if ((sq = CALL("mul", tensor_mul(bw_half, bw_half))) && (s = CALL("add", tensor_add(sq, bw_half))) &&
        (loss = CALL("sum_all", tensor_sum_all(s))))
        good = CALL("backward", tensor_backward(loss, NULL)) == TENDO_OK;
    g = ((const tendo__tensor *)(const void *)bw_half)->ag->grad;
    kept = good || (before.bytes ? g && same((const tendo_tensor *)(const void *)g, &before) : !g);
    free(before.bytes);
    tensor_free(loss), tensor_free(s), tensor_free(sq);
    if (!kept)
        return wrong("a failed backward changed a bf16 leaf's gradient");
    return good;
}
#endif

/* An optimizer's life: AdamW over an f32 leaf (and a bf16 one, whose step
 * makes an f32 master) given fresh gradients, clip_grad_norm, a step, its
 * state saved, and a second optimizer loading it.  A failed clip or step
 * leaves every parameter and gradient as it was; the state file goes. */
static tensor_f32 *op_w, *op_g;
static char op_path[128];
#ifdef TENDO_HAVE_BF16
static tensor_bf16 *op_h, *op_hg;
#endif

static bool seq_optimizer(void)
{
    tendo_tensor *ps[2] = {tensor_erase(op_w), NULL}, *gs[2] = {tensor_erase(op_g), NULL};
    tendo_optimizer *o = NULL, *o2 = NULL;
    snap pb[2] = {{0}}, gb[2] = {{0}};
    int np = 1;
    bool good, kept = true;

#ifdef TENDO_HAVE_BF16
    ps[1] = tensor_erase(op_h), gs[1] = tensor_erase(op_hg), np = 2;
#endif
    good = (o = CALL("adamw_new", tendo_adamw_new(1e-2, 0.9, 0.999, 1e-8, 0.01))) != NULL;
    for (int i = 0; good && i < np; i++)
        good = CALL("optimizer_add", tendo_optimizer_add(o, ps[i])) == TENDO_OK &&
               CALL("backward", tendo__backward("backward", (tendo__tensor *)(void *)ps[i],
                                                (tendo__tensor *)(void *)gs[i])) == TENDO_OK;
    if (good) {
        for (int i = 0; i < np; i++) {
            pb[i] = snapshot(ps[i]);
            gb[i] = snapshot(((tendo__tensor *)(void *)ps[i])->ag->grad);
        }
        good = CALL("optimizer_clip_grad_norm", tendo_optimizer_clip_grad_norm(o, 0.5)) >= 0;
        for (int i = 0; !good && i < np; i++)
            kept = kept && same(((tendo__tensor *)(void *)ps[i])->ag->grad, &gb[i]);
        good = good && CALL("optimizer_step", tendo_optimizer_step(o)) == TENDO_OK;
        for (int i = 0; !good && i < np; i++)
            kept = kept && same(ps[i], &pb[i]);
    }
    good = good && CALL("optimizer_save", tendo_optimizer_save(o, op_path)) == TENDO_OK &&
           (o2 = CALL("adamw_new", tendo_adamw_new(1e-2, 0.9, 0.999, 1e-8, 0.01))) != NULL;
    for (int i = 0; good && i < np; i++)
        good = CALL("optimizer_add", tendo_optimizer_add(o2, ps[i])) == TENDO_OK;
    good = good && CALL("optimizer_load", tendo_optimizer_load(o2, op_path)) == TENDO_OK;
    if (good && tendo_optimizer_steps(o2, np - 1) != 1)
        good = wrong("the loaded optimizer has not stepped once");
    for (int i = 0; i < np; i++)
        free(pb[i].bytes), free(gb[i].bytes);
    tendo_optimizer_free(o);
    tendo_optimizer_free(o2);
    for (int i = 0; i < np; i++) /* each run starts and ends with no gradient */
        tendo__zero_grad((tendo__tensor *)(void *)ps[i]);
    remove(op_path);
    if (!kept)
        return wrong("a failed clip or step changed a parameter or a gradient");
    return good;
}

typedef struct {
    const char *name;
    bool (*run)(void);
    const char *target; /* the file it saves, or NULL */
} seq;

static void sweep_seq(const seq *s)
{
    sweep w = {0, 0, ""};
    unsigned char *old = NULL, *done = NULL, *now;
    size_t nold = 0, ndone = 0, nnow;
    snap ia, ib;
    int64_t n, c0;
    char stray[256];

    if (s->target)
        old = read_file(s->target, &nold);
    if (!s->run())
        fault(&w, "%s: the clean run failed: %s", s->name, tendo_error_message(tendo_last_error()));
    if (s->target)
        write_file(s->target, old, nold);
    c0 = tendo__alloc_count();
    if (!s->run())
        fault(&w, "%s: the clean run failed: %s", s->name, tendo_error_message(tendo_last_error()));
    n = tendo__alloc_count() - c0;
    if (s->target) {
        done = read_file(s->target, &ndone);
        write_file(s->target, old, nold);
    }
    ia = snapshot(in_a);
    ib = snapshot(in_b);
    for (int64_t k = 1; k <= n; k++) {
        pool_use p0 = pool_now(), p1;
        bool good;

        tendo_clear_error();
        tendo_fault_inject_alloc(k);
        good = s->run();
        tendo_fault_inject_alloc(0);
        if (!good)
            want_oom(&w, s->name, calling, k);
        p1 = pool_now();
        if (p0.bytes_in_use != p1.bytes_in_use || p0.blocks != p1.blocks)
            fault(&w, "%s: allocation %lld failing left the pool at %lld bytes in %lld blocks, was %lld in %lld",
                  s->name, (long long)k, (long long)p1.bytes_in_use, (long long)p1.blocks,
                  (long long)p0.bytes_in_use, (long long)p0.blocks);
        if (!same(in_a, &ia) || !same(in_b, &ib))
            fault(&w, "%s: allocation %lld failing changed an input", s->name, (long long)k);
        strays(stray, sizeof stray);
        if (stray[0])
            fault(&w, "%s: allocation %lld failing left%s behind", s->name, (long long)k, stray);
        if (s->target) {
            now = read_file(s->target, &nnow);
            if (!(nnow == nold && !memcmp(now, old, nold)) && !(nnow == ndone && !memcmp(now, done, ndone)))
                fault(&w, "%s: allocation %lld failing left %s neither the old file nor the new one", s->name,
                      (long long)k, s->target);
            free(now);
        }
        if (!good && !s->run())
            fault(&w, "%s: the clean run after allocation %lld failing failed: %s", s->name, (long long)k,
                  tendo_error_message(tendo_last_error()));
        if (s->target)
            write_file(s->target, old, nold);
    }
    free(ia.bytes);
    free(ib.bytes);
    free(old);
    free(done);
    total_points += n;
    if (!ok(w.bad == 0, "%s: %lld allocation failures", s->name, (long long)n))
        diag("%lld faults; the first: %s", (long long)w.bad, w.first);
}

static void part2(void)
{
    static const seq seqs[] = {
        {"safetensors save, load, load_copy, compute", seq_safetensors, st_path},
        {"npy save and load", seq_npy, npy_path},
        {"dlpack export and import", seq_dlpack, NULL},
        {"collection add, get, metadata", seq_collection, NULL},
        {"erased alias, to_dtype, to_device", seq_erased, NULL},
        {"pool segments", seq_pool, NULL},
        {"matmul and attention on two OpenMP threads", seq_threads, NULL},
        {"forward and backward through matmul, relu, layer_norm, log_softmax", seq_backward, NULL},
#ifdef TENDO_HAVE_BF16
        {"backward of a bf16 leaf used three times (f32 sums)", seq_backward_bf16, NULL},
#endif
        {"an optimizer: add, clip, step (bf16 master weights), save, load", seq_optimizer, NULL},
        {"on cuda:0: to device, add, matmul, split sum, new segment, back", seq_gpu, NULL},
    };
    const size_t nseqs = sizeof seqs / sizeof seqs[0] - (tendo_cuda_device_count() > 0 ? 0 : 1);
    tendo_collection *c = tendo_collection_new();
    tensor_f32 *a = tensor_f32_rand(2, (const int64_t[]){3, 4}, 7, tendo_cpu());
    tensor_f32 *old = tensor_f32_arange(0, 5, 1, tendo_cpu());
    tensor_f32 *b4 = tensor_f32_rand(1, (const int64_t[]){4}, 8, tendo_cpu());

    strcpy(dir, "/tmp/t-fault-XXXXXX");
    if (!mkdtemp(dir))
        bail("mkdtemp failed");
    snprintf(st_path, sizeof st_path, "%s/m.safetensors", dir);
    snprintf(npy_path, sizeof npy_path, "%s/t.npy", dir);
    in_a = tensor_erase(a);
    in_b = b4 ? tendo_tensor_to_dtype(tensor_erase(b4), T_SECOND) : NULL;
    tensor_free(b4);
    if (!c || !a || !old || !in_b)
        bail("setup failed");
    /* the good files a failed save must not replace */
    if (tendo_collection_add(c, "old", tensor_erase(old)) != TENDO_OK ||
        tendo_safetensors_save(st_path, c) != TENDO_OK ||
        tendo_npy_save(npy_path, tensor_erase(old)) != TENDO_OK)
        bail("cannot write the old files: %s", tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
    tensor_free(old);
    snprintf(op_path, sizeof op_path, "%s/optimizer.safetensors", dir);
    op_w = tensor_f32_randn(2, (const int64_t[]){4, 5}, 21, tendo_cpu());
    op_g = tensor_f32_randn(2, (const int64_t[]){4, 5}, 22, tendo_cpu());
    if (!op_w || !op_g || tensor_set_requires_grad(op_w, true) != TENDO_OK)
        bail("setup failed");
#ifdef TENDO_HAVE_BF16
    op_h = tensor_bf16_randn(1, (const int64_t[]){7}, 23, tendo_cpu());
    op_hg = tensor_bf16_randn(1, (const int64_t[]){7}, 24, tendo_cpu());
    if (!op_h || !op_hg || tensor_set_requires_grad(op_h, true) != TENDO_OK)
        bail("setup failed");
#endif
    bw_w1 = tensor_f32_randn(2, (const int64_t[]){4, 5}, 11, tendo_cpu());
    bw_w2 = tensor_f32_randn(2, (const int64_t[]){5, 3}, 12, tendo_cpu());
    bw_bias = tensor_f32_randn(1, (const int64_t[]){3}, 13, tendo_cpu());
    if (!bw_w1 || !bw_w2 || !bw_bias || tensor_set_requires_grad(bw_w1, true) != TENDO_OK ||
        tensor_set_requires_grad(bw_w2, true) != TENDO_OK || tensor_set_requires_grad(bw_bias, true) != TENDO_OK)
        bail("setup failed");
#ifdef TENDO_HAVE_BF16
    bw_half = tensor_bf16_randn(1, (const int64_t[]){6}, 14, tendo_cpu());
    if (!bw_half || tensor_set_requires_grad(bw_half, true) != TENDO_OK)
        bail("setup failed");
#endif
    for (size_t i = 0; i < nseqs; i++)
        sweep_seq(&seqs[i]);
    if (nseqs < sizeof seqs / sizeof seqs[0])
        skip(1, "%s: no CUDA device", seqs[nseqs].name);
    unlink(st_path);
    unlink(npy_path);
    rmdir(dir);
    tendo_tensor_free(in_a);
    tendo_tensor_free(in_b);
    tensor_free(bw_w1), tensor_free(bw_w2), tensor_free(bw_bias);
    tensor_free(op_w), tensor_free(op_g);
#ifdef TENDO_HAVE_BF16
    tensor_free(bw_half);
    tensor_free(op_h), tensor_free(op_hg);
#endif
}

int main(void)
{
    clock_t t0 = clock();

    plan_lazy();
    tendo_set_durable_saves(false); /* thousands of saves: no need to wait for the disk */
    part1(false, tendo_cpu());
    part1(true, tendo_cpu());
    if (tendo_cuda_device_count() > 0) {
        part1(false, tendo_cuda(0));
        part1(true, tendo_cuda(0));
    } else {
        skip(2, "part 1 on cuda:0: no CUDA device");
    }
    part2();
    diag("%lld injection points in all, %.1f s of CPU", (long long)total_points,
         (double)(clock() - t0) / CLOCKS_PER_SEC);
    return done_testing();
}
