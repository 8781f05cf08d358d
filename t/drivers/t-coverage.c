/* t/drivers/t-coverage.c - the CUDA column of the coverage matrix (docs/ops.md).
 *
 * Every function of the registry, for every dtype it exists for, is called
 * on cuda:0 and on the CPU with the same inputs, through the sample calls
 * of t/fault-table.h (so a new function is covered with no list kept
 * here), and the results compared:
 *   - bit for bit where the CPU's result is exact: an integer or bool
 *     result, or a float one the registry marks exact (views, copies,
 *     casts, indexing, comparisons, max/min, sorts); NaN matches any NaN;
 *   - otherwise within the dtype's own ulps: the normalized error
 *     sqrt(sum (g - c)^2 / sum c^2) at most 4 ulps of the dtype plus 64 of
 *     its compute type (f64 in 2^-52; float for a function computing in
 *     float on every dtype, randn), NaN and infinities in the same places;
 *   - a function the registry refuses there must fail with the status it
 *     names, and succeed on the CPU.
 * New tensors a call returns, the fixtures a call writes (out34, st34*), the
 * buffer it copies to, the text it prints and the number it returns are
 * all compared.  The inputs: random values (about N(0, 3)) of the dtype,
 * indices valid for the fixtures' dims (negative ones too), each row of
 * idx34 a permutation so that scatter_out's writes never collide.
 * Without a CUDA device: "# SKIP no CUDA device".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "fault-table.h"
#include "tap.h"
#include "tendo.h"

/* ---- inputs --------------------------------------------------------------------- */

/* A fixture of dtype dt on the CPU: indices and masks for the fixed-dtype
 * fixtures (fixed), random values of dt otherwise (their magnitudes for an
 * optimizer state: second moments are >= 0). */
static tendo_tensor *fixture(const char *name, bool state, tendo_dtype dt, int ndim, const int64_t *shape,
                             uint64_t seed, bool fixed)
{
    int64_t n = 1;
    tendo_tensor *t;

    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    if (fixed && dt != TENDO_BOOL) { /* index fixtures: valid along a dim of 3 or 4 */
        int64_t v[16];
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i / shape[ndim - 1], c = i % shape[ndim - 1];
            v[i] = ndim == 2 ? (c + r) % 4 : (int64_t[]){2, -1, 0, 3}[i % 4];
            if (ndim == 2 && (r + c) % 2)
                v[i] -= 4; /* the same place, counted from the end */
        }
        tensor_i64 *ix = tensor_i64_from_data(v, ndim, shape, tendo_cpu());
        t = ix ? tendo_tensor_to_dtype(tensor_erase(ix), dt) : NULL;
        tensor_i64_free(ix);
    } else {
        tensor_f32 *r = tensor_f32_randn(ndim, shape, seed, tendo_cpu());
        tensor_f32 *s = r ? tensor_mul_scalar(r, dt == TENDO_BOOL ? 1.0 : 3.0) : NULL;
        if (s && state) {
            tensor_f32 *a = tensor_abs(s);
            tensor_f32_free(s);
            s = a;
        }
        t = s ? tendo_tensor_to_dtype(tensor_erase(s), dt) : NULL;
        tensor_f32_free(r);
        tensor_f32_free(s);
    }
    if (!t)
        bail("cannot make fixture %s: %s", name, tendo_error_message(tendo_last_error()));
    return t;
}

/* The fixtures of dtype dt on the CPU (cpu) and the same on cuda:0 (gpu). */
static void make_fixtures(tendo_dtype dt, tf_ctx *cpu, tf_ctx *gpu)
{
    for (int j = 0; j < TF_NFIX; j++) {
        tendo_dtype fd = tf_fixture_dtype(j, dt);

        tendo_tensor_free(cpu->fix[j]);
        tendo_tensor_free(gpu->fix[j]);
        cpu->fix[j] = fixture(tf_fixtures[j].name, tf_fixtures[j].state, fd, tf_fixtures[j].ndim, tf_fixtures[j].shape, (uint64_t)j + 7,
                              tf_fixtures[j].dtype != 0);
        gpu->fix[j] = tendo_tensor_to_device(cpu->fix[j], tendo_cuda(0));
        if (!gpu->fix[j])
            bail("cannot move fixture %s to cuda:0: %s", tf_fixtures[j].name, tendo_error_message(tendo_last_error()));
        if (!tf_make_leaf(j, cpu->fix[j]) || !tf_make_leaf(j, gpu->fix[j]))
            bail("cannot make fixture %s a leaf: %s", tf_fixtures[j].name, tendo_error_message(tendo_last_error()));
    }
}

/* ---- comparing ------------------------------------------------------------------- */

static int mantissa_of(tendo_dtype dt, int *compute)
{
    for (int i = 0; i < TF_NDTYPES; i++)
        if (tf_dtypes[i].dtype == dt) {
            *compute = tf_dtypes[i].compute_bits;
            return tf_dtypes[i].mantissa_bits;
        }
    *compute = 0;
    return 0;
}

/* t's elements as doubles on the host: through f64 where the build has it
 * (exact for every float), else f32 (exact for every float of such a build). */
static double *as_doubles(const tendo_tensor *t)
{
    tendo_tensor *h = tendo_tensor_to_device(t, tendo_cpu());
    int64_t n = tendo_tensor_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
#ifdef TENDO_HAVE_F64
    tendo_tensor *d = h ? tendo_tensor_to_dtype(h, TENDO_F64) : NULL;
    bool good = d && v && tensor_f64_copy_to(tendo_as_f64(d), v, n) == TENDO_OK;
#else
    tendo_tensor *d = h ? tendo_tensor_to_dtype(h, TENDO_F32) : NULL;
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    bool good = d && v && f && tensor_f32_copy_to(tendo_as_f32(d), f, n) == TENDO_OK;
    for (int64_t i = 0; good && i < n; i++)
        v[i] = f[i];
    free(f);
#endif

    if (!good) {
        free(v);
        v = NULL;
    }
    tendo_tensor_free(h);
    tendo_tensor_free(d);
    return v;
}

/* Whether g (the GPU's) is c (the CPU's), as the file comment says; why not in why. */
static bool same_tensor(const tendo_tensor *c, const tendo_tensor *g, bool exact, bool float_math, char *why,
                        size_t nwhy)
{
    tendo_dtype dt = tendo_tensor_dtype(c);
    int compute, bits = mantissa_of(dt, &compute);
    int64_t n = tendo_tensor_numel(c);
    double *hc, *hg, num = 0, den = 0, tol;
    bool good = true;

    if (!g || tendo_tensor_dtype(g) != dt || tendo_tensor_ndim(g) != tendo_tensor_ndim(c) ||
        memcmp(tendo_tensor_shape(g), tendo_tensor_shape(c), (size_t)tendo_tensor_ndim(c) * sizeof(int64_t))) {
        snprintf(why, nwhy, "the results differ in dtype or shape");
        return false;
    }
    if (!tendo_device_equal(tendo_tensor_device(g), tendo_cuda(0))) {
        snprintf(why, nwhy, "the result is on %s", tendo_device_str(tendo_tensor_device(g)));
        return false;
    }
    hc = as_doubles(c), hg = as_doubles(g); /* exact for every dtype but a 64-bit integer past 2^53 */
    if (!hc || !hg)
        bail("cannot read the results back");
    if (!bits || exact) { /* the same bytes, or NaN for NaN */
        size_t es = tendo_dtype_size(dt);
        unsigned char *bc = malloc((size_t)(n ? n : 1) * es), *bg = malloc((size_t)(n ? n : 1) * es);

        if (!bc || !bg || tendo__read_dense("t-coverage", (const tendo__tensor *)(const void *)c, bc) != TENDO_OK ||
            tendo__read_dense("t-coverage", (const tendo__tensor *)(const void *)g, bg) != TENDO_OK)
            bail("cannot read the results back");
        for (int64_t i = 0; good && i < n; i++)
            if (memcmp(bc + i * es, bg + i * es, es) && !(isnan(hc[i]) && isnan(hg[i]))) {
                snprintf(why, nwhy, "element %lld differs (cpu %.17g, gpu %.17g)", (long long)i, hc[i], hg[i]);
                good = false;
            }
        free(bc), free(bg), free(hc), free(hg);
        return good;
    }
    for (int64_t i = 0; good && i < n; i++) {
        if (!isfinite(hc[i]) || !isfinite(hg[i])) {
            good = (isnan(hc[i]) && isnan(hg[i])) || hc[i] == hg[i];
            if (!good)
                snprintf(why, nwhy, "element %lld: cpu %g, gpu %g", (long long)i, hc[i], hg[i]);
            continue;
        }
        num += (hg[i] - hc[i]) * (hg[i] - hc[i]);
        den += hc[i] * hc[i];
    }
    tol = 4 * ldexp(1.0, 1 - bits) + 64 * ldexp(1.0, 1 - (float_math && compute > 24 ? 24 : compute));
    if (good && (den > 0 ? sqrt(num / den) : sqrt(num)) > tol) {
        snprintf(why, nwhy, "normalized error %.3g, more than %.3g", den > 0 ? sqrt(num / den) : sqrt(num), tol);
        good = false;
    }
    free(hc), free(hg);
    return good;
}

/* The file's bytes from its start, as a new string. */
static char *slurp(FILE *f)
{
    long n = ftell(f);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);

    if (!s || n < 0)
        bail("cannot read the print file");
    rewind(f);
    if (fread(s, 1, (size_t)n, f) != (size_t)n)
        bail("cannot read the print file");
    s[n] = 0;
    return s;
}

/* ---- one cell -------------------------------------------------------------------- */

/* Runs f with x's fixtures (a fresh tensor made for it, results kept). */
static bool run(const tf_fn *f, tf_ctx *x)
{
    tendo_tensor *h = fixture("fresh", false, f->dtype, 2, (const int64_t[]){3, 4}, 99, false);

    x->fresh = x->device.type == TENDO_CPU ? h : tendo_tensor_to_device(h, x->device);
    if (x->fresh != h)
        tendo_tensor_free(h);
    x->kept[0] = x->kept[1] = NULL;
    x->value = 0;
    memset(x->buf, 0, sizeof x->buf);
    rewind(x->file);
    tendo_clear_error();
    bool good = f->call(x);
    tendo_tensor_free(x->fresh);
    x->fresh = NULL;
    return good;
}

static void cell(const tf_fn *f, tf_ctx *cpu, tf_ctx *gpu)
{
    const char *dt = tendo_dtype_name(f->dtype);
    char why[200] = "";
    bool c_ok, g_ok, good = true;
    tendo_status g_st;
    char *fc, *fg;

    /* fresh writable fixtures for each run: out34 starts the same on both */
    for (int j = 0; j < TF_NFIX; j++)
        if (tf_fixtures[j].mutable_) {
            tendo_tensor_free(cpu->fix[j]);
            tendo_tensor_free(gpu->fix[j]);
            cpu->fix[j] = fixture(tf_fixtures[j].name, tf_fixtures[j].state, tf_fixture_dtype(j, f->dtype), tf_fixtures[j].ndim,
                                  tf_fixtures[j].shape, 50, false);
            gpu->fix[j] = tendo_tensor_to_device(cpu->fix[j], tendo_cuda(0));
        }
    c_ok = run(f, cpu);
    if (!c_ok)
        bail("%s: the CPU call failed: %s", f->name, tendo_error_message(tendo_last_error()));
    g_ok = run(f, gpu);
    g_st = g_ok ? TENDO_OK : tendo_error_status(tendo_last_error());
    if (f->refused_cuda) {
        ok(!g_ok && g_st == f->refuse_with, "%s %s: refused on cuda:0 (%s)", dt, f->name,
           g_ok ? "but it succeeded" : tendo_error_message(tendo_last_error()));
        if (!g_ok || g_st != f->refuse_with)
            diag("want %s, got %s", tendo_status_str(f->refuse_with), tendo_status_str(g_st));
        goto out;
    }
    if (!g_ok) {
        ok(false, "%s %s: on cuda:0 as on the CPU", dt, f->name);
        diag("cuda:0 failed: %s", tendo_error_message(tendo_last_error()));
        goto out;
    }
    for (int i = 0; good && i < 2; i++)
        if (cpu->kept[i] && f->values)
            good = same_tensor(cpu->kept[i], gpu->kept[i], f->exact, f->float_math, why, sizeof why);
        else if (cpu->kept[i] || gpu->kept[i])
            good = cpu->kept[i] && gpu->kept[i]; /* empty: made on both, contents undefined */
    for (int j = 0; good && j < TF_NFIX; j++)
        if (tf_fixtures[j].mutable_)
            good = same_tensor(cpu->fix[j], gpu->fix[j], f->exact, f->float_math, why, sizeof why);
    if (good && (cpu->value != gpu->value || memcmp(cpu->buf, gpu->buf, sizeof cpu->buf))) {
        snprintf(why, sizeof why, "the returned number or copied elements differ (cpu %g, gpu %g)", cpu->value,
                 gpu->value);
        good = false;
    }
    fc = slurp(cpu->file), fg = slurp(gpu->file);
    if (good && strcmp(fc, fg)) {
        snprintf(why, sizeof why, "the printed text differs");
        good = false;
    }
    free(fc), free(fg);
    ok(good, "%s %s: cuda:0 agrees with the CPU%s", dt, f->name, f->exact ? " bit for bit" : "");
    if (!good)
        diag("%s", why);
out:
    for (int i = 0; i < 2; i++) {
        tendo_tensor_free(cpu->kept[i]);
        tendo_tensor_free(gpu->kept[i]);
    }
}

int main(void)
{
    tf_ctx cpu, gpu;
    tendo_dtype cur = (tendo_dtype)0;
    int refused = 0;

    if (!tendo_cuda_available())
        skip_all("no CUDA device");
    plan(TF_NFNS);
    memset(&cpu, 0, sizeof cpu);
    memset(&gpu, 0, sizeof gpu);
    cpu.device = tendo_cpu();
    gpu.device = tendo_cuda(0);
    cpu.comm = gpu.comm = tf_world();
    cpu.keep = gpu.keep = true;
    cpu.file = tmpfile(), gpu.file = tmpfile();
    if (!cpu.file || !gpu.file)
        bail("no tmpfile");
    for (int i = 0; i < TF_NFNS; i++) {
        const tf_fn *f = &tf_fns[i];

        if (f->dtype != cur) {
            make_fixtures(f->dtype, &cpu, &gpu);
            cur = f->dtype;
        }
        cell(f, &cpu, &gpu);
        refused += f->refused_cuda;
    }
    diag("%d cells: %d computed on cuda:0 and compared with the CPU, %d refused there", TF_NFNS, TF_NFNS - refused,
         refused);
    for (int j = 0; j < TF_NFIX; j++) {
        tendo_tensor_free(cpu.fix[j]);
        tendo_tensor_free(gpu.fix[j]);
    }
    fclose(cpu.file), fclose(gpu.file);
    return done_testing();
}
