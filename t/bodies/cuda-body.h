/* t/bodies/cuda-body.h - every op on a CUDA device against the CPU, per dtype
 * (included by t/each-dtype.h from t/drivers/t-cuda.c; see t/lib/dt.h).
 *
 * Each case builds the same input on the CPU and (by tensor_to) on cuda:0,
 * takes the same view of both (contiguous, transposed, sliced with steps,
 * broadcast, flipped), runs the op on both and compares the GPU result
 * with the CPU's by normalized error (sqrt of sum (g-c)^2 / sum c^2): a
 * NaN or infinity must sit where the CPU has the same, never elsewhere.
 * _out forms write into a window of a larger device buffer whose rest is
 * filled with a sentinel, which must come back unchanged.  The elementwise
 * ops and reductions are those of the registry (t/ops-table.h), so a new
 * entry runs on the device too with no edit here. */

#include "ops-table.h"

static TT *DTFN(cu_rand_input)(int nd, const int64_t *shape, uint64_t seed, double lo, double hi)
{
    int64_t n = 1;
    E *v;
    TT *t;

    for (int d = 0; d < nd; d++)
        n *= shape[d];
    v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        bail("out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = E_FROM_DOUBLE(t_rand_range(&seed, lo, hi));
    t = TFN(from_data)(v, nd, shape, tendo_cpu());
    free(v);
    return t;
}

/* The same view of t (which it takes over) for each layout code:
 * 0 contiguous, 1 transposed (first and last dims), 2 sliced with steps,
 * 3 flipped. */
static TT *DTFN(cu_view)(TT *t, int layout)
{
    TT *v = NULL;
    int nd = tensor_ndim(t);

    if (layout == 0 || nd == 0)
        return t;
    if (layout == 1)
        v = tensor_transpose(t, 0, nd - 1);
    else if (layout == 2)
        v = tensor_slice(t, nd - 1, 1, tensor_shape(t)[nd - 1], 2);
    else
        v = tensor_flip(t, 0);
    tensor_free(t);
    return v;
}

static const char *const DTFN(cu_layout_name)[] = {"contiguous", "transposed", "sliced", "flipped"};

/* Host copy of t as doubles (NULL on failure). */
static double *DTFN(cu_host)(const TT *t, int64_t *n)
{
    int64_t m = tensor_numel(t);
    E *e = malloc((size_t)(m ? m : 1) * sizeof *e);
    double *d = malloc((size_t)(m ? m : 1) * sizeof *d);

    if (!e || !d || tensor_copy_to(t, e, m) != TENDO_OK) {
        free(e);
        free(d);
        return NULL;
    }
    for (int64_t i = 0; i < m; i++)
        d[i] = E_TO_DOUBLE(e[i]);
    free(e);
    *n = m;
    return d;
}

/* The GPU result g agrees with the CPU result c (same shape, on the GPU,
 * normalized error <= tol, special values in the same places). */
static bool DTFN(cu_same)(const TT *c, const TT *g, double tol, const char *what)
{
    int64_t nc = 0, ng = 0, odd = -1;
    double *hc, *hg, num = 0, den = 0, err;
    bool pass;

    if (!c || !g) {
        return ok(false, "%s %s: %s", DT_NAME, what,
                  c ? tendo_error_message(tendo_last_error()) : "the CPU failed");
    }
    if (!tendo_device_equal(tensor_device(g), tendo_cuda(0)))
        return ok(false, "%s %s: the result is on %s", DT_NAME, what, tendo_device_str(tensor_device(g)));
    if (tensor_ndim(c) != tensor_ndim(g) ||
        memcmp(tensor_shape(c), tensor_shape(g), (size_t)tensor_ndim(c) * sizeof(int64_t)) != 0)
        return ok(false, "%s %s: shapes differ", DT_NAME, what);
    hc = DTFN(cu_host)(c, &nc);
    hg = DTFN(cu_host)(g, &ng);
    if (!hc || !hg || nc != ng) {
        free(hc);
        free(hg);
        return ok(false, "%s %s: copying the results failed", DT_NAME, what);
    }
    for (int64_t i = 0; i < nc; i++) {
        if (isnan(hc[i]) || isnan(hg[i]) || isinf(hc[i]) || isinf(hg[i])) {
            bool same = (isnan(hc[i]) && isnan(hg[i])) || hc[i] == hg[i];
            if (!same && odd < 0)
                odd = i;
            continue;
        }
        num += (hg[i] - hc[i]) * (hg[i] - hc[i]);
        den += hc[i] * hc[i];
    }
    err = den > 0 ? sqrt(num / den) : sqrt(num);
    pass = odd < 0 && err <= tol;
    ok(pass, "%s %s (normalized error %.3g)", DT_NAME, what, err);
    if (odd >= 0)
        diag("element %lld: cpu %g, gpu %g", (long long)odd, hc[odd], hg[odd]);
    free(hc);
    free(hg);
    return pass;
}

/* Tolerance of GPU against CPU for results a few roundings apart, in the
 * dtype's own ulps (f64 in 2^-52): 16 of them, 8 for the narrow floats,
 * whose results are computed in float and rounded once. */
#define CU_TOL (DT_MANTISSA_BITS >= 24 ? 16 * DT_ULP : 8 * DT_ULP)

typedef TT *(*DTFN(cu_red_fn))(const TT *, int, bool);

/* Every [[binary]] and [[unary]] op of the registry (t/ops-table.h) and
 * clamp, on the device against the CPU, on inputs drawn from each op's own
 * ranges (a binary op's b kept at |b| >= bmin by drawing it positive). */
static void DTFN(test_cuda_elementwise)(void)
{
    const DTFN(t_binop) *bins = DTFN(t_binary)();
    const DTFN(t_unop) *uns = DTFN(t_unary)();
    const int64_t shape[2] = {37, 53};
    char what[128];

    for (int layout = 0; layout < 4; layout++) {
        const char *ln = DTFN(cu_layout_name)[layout];

        for (int i = 0; i < T_NBINARY + T_NUNARY + 1; i++) {
            bool bin = i < T_NBINARY, clamp = i == T_NBINARY + T_NUNARY;
            const double *ra = bin ? bins[i].a : clamp ? (const double[]){-2, 2} : uns[i - T_NBINARY].a;
            double blo = bin ? (bins[i].bmin > 0 ? bins[i].bmin : bins[i].b[0]) : 0, bhi = bin ? bins[i].b[1] : 1;
            const char *name = bin ? bins[i].name : clamp ? "clamp" : uns[i - T_NBINARY].name;
            TT *ca = DTFN(cu_view)(DTFN(cu_rand_input)(2, shape, 1 + layout + 16 * i, ra[0], ra[1]), layout);
            TT *cb = DTFN(cu_view)(DTFN(cu_rand_input)(2, shape, 9 + layout + 16 * i, blo, bhi), layout);
            /* broadcast along rows: one row as wide as the view (the
             * transposed and sliced views change the width) */
            int64_t bshape[2] = {1, ca ? tensor_shape(ca)[1] : 1};
            TT *cr = DTFN(cu_rand_input)(2, bshape, 17 + 16 * i, blo, bhi);
            TT *ga0 = DTFN(cu_rand_input)(2, shape, 1 + layout + 16 * i, ra[0], ra[1]);
            TT *gb0 = DTFN(cu_rand_input)(2, shape, 9 + layout + 16 * i, blo, bhi);
            TT *ga = DTFN(cu_view)(tensor_to(ga0, tendo_cuda(0)), layout);
            TT *gb = DTFN(cu_view)(tensor_to(gb0, tendo_cuda(0)), layout);
            TT *gr = tensor_to(cr, tendo_cuda(0));
            TT *c, *g;

            tensor_free(ga0);
            tensor_free(gb0);
            if (!ca || !cb || !cr || !ga || !gb || !gr)
                bail("making %s inputs failed: %s", ln, tendo_error_message(tendo_last_error()));
            if (bin) {
                snprintf(what, sizeof what, "%s %s", name, ln);
                c = bins[i].op(ca, cb), g = bins[i].op(ga, gb);
                DTFN(cu_same)(c, g, CU_TOL, what);
                tensor_free(c), tensor_free(g);
                snprintf(what, sizeof what, "%s %s, b broadcast", name, ln);
                c = bins[i].op(ca, cr), g = bins[i].op(ga, gr);
                DTFN(cu_same)(c, g, CU_TOL, what);
                tensor_free(c), tensor_free(g);
                snprintf(what, sizeof what, "%s_scalar %s", name, ln);
                c = bins[i].scalar(ca, bins[i].scalars[0]), g = bins[i].scalar(ga, bins[i].scalars[0]);
            } else if (clamp) {
                snprintf(what, sizeof what, "clamp %s", ln);
                c = TFN(clamp)(ca, -0.5, 0.75), g = TFN(clamp)(ga, -0.5, 0.75);
            } else {
                snprintf(what, sizeof what, "%s %s", name, ln);
                c = uns[i - T_NBINARY].op(ca), g = uns[i - T_NBINARY].op(ga);
            }
            DTFN(cu_same)(c, g, CU_TOL, what);
            tensor_free(c), tensor_free(g);
            tensor_free(ca), tensor_free(cb), tensor_free(cr), tensor_free(ga), tensor_free(gb), tensor_free(gr);
        }
    }
}

/* _out into the middle of a larger device buffer whose rest holds a
 * sentinel: out-of-bounds writes show as changed sentinels. */
static void DTFN(test_cuda_sentinel)(void)
{
    const int64_t n = 1000, pad = 77;
    E *host = malloc((size_t)(n + 2 * pad) * sizeof *host);
    const E sentinel = E_FROM_DOUBLE(-12345.0);
    TT *buf, *win, *a, *b, *ga, *gb, *want;
    int64_t bad = 0;

    if (!host)
        bail("out of memory");
    for (int64_t i = 0; i < n + 2 * pad; i++)
        host[i] = sentinel;
    buf = TFN(from_data)(host, 1, (const int64_t[]){n + 2 * pad}, tendo_cuda(0));
    win = buf ? tensor_narrow(buf, 0, pad, n) : NULL;
    a = DTFN(cu_rand_input)(1, &n, 5, -1, 1);
    b = DTFN(cu_rand_input)(1, &n, 6, -1, 1);
    ga = tensor_to(a, tendo_cuda(0));
    gb = tensor_to(b, tendo_cuda(0));
    ok(win && ga && gb && tensor_add_out(win, ga, gb) == TENDO_OK, "%s add_out into a window of a device buffer",
       DT_NAME);
    want = tensor_add(a, b);
    DTFN(cu_same)(want, win, CU_TOL, "add_out result");
    ok(win && tensor_exp_out(win, win) == TENDO_OK, "%s exp_out in place on the device", DT_NAME);
    if (!buf || tensor_copy_to(buf, host, n + 2 * pad) != TENDO_OK)
        bad = -1;
    for (int64_t i = 0; bad >= 0 && i < pad; i++)
        bad += memcmp(&host[i], &sentinel, sizeof sentinel) != 0 ||
               memcmp(&host[pad + n + i], &sentinel, sizeof sentinel) != 0;
    is_int(0, bad, "%s the sentinels around the window are untouched", DT_NAME);
    tensor_free(want), tensor_free(a), tensor_free(b), tensor_free(ga), tensor_free(gb), tensor_free(win), tensor_free(buf);
    free(host);
}

/* Every row op over each dim of a [3]-shaped input in each layout; tag
 * follows the layout's name in each test's description. */
static void DTFN(test_cuda_rows_of)(const int64_t shape[3], const char *tag)
{
    const DTFN(t_redop) *reds = DTFN(t_reduction)(); /* every [[reduction]] of the registry */
    char what[160], ln[64];

    for (int layout = 0; layout < 4; layout++) {
        TT *c = DTFN(cu_view)(DTFN(cu_rand_input)(3, shape, 3 + layout, -1, 1), layout);
        TT *h = DTFN(cu_rand_input)(3, shape, 3 + layout, -1, 1);
        TT *g = DTFN(cu_view)(tensor_to(h, tendo_cuda(0)), layout);
        snprintf(ln, sizeof ln, "%s%s", DTFN(cu_layout_name)[layout], tag);
        int64_t last = c ? tensor_shape(c)[2] : 1;
        TT *w = DTFN(cu_rand_input)(1, &last, 4, 0.5, 1.5), *bias = DTFN(cu_rand_input)(1, &last, 5, -1, 1);
        TT *gw = tensor_to(w, tendo_cuda(0)), *gbias = tensor_to(bias, tendo_cuda(0));
        TT *rc, *rg;

        tensor_free(h);
        if (!c || !g || !gw || !gbias)
            bail("making %s inputs failed: %s", ln, tendo_error_message(tendo_last_error()));
        for (int i = 0; i < T_NREDUCTION; i++)
            for (int dim = 0; dim < 3; dim++) {
                rc = reds[i].op(c, dim, dim == 1), rg = reds[i].op(g, dim, dim == 1);
                snprintf(what, sizeof what, "%s over dim %d, %s", reds[i].name, dim, ln);
                /* sums of ~1000 terms in another order: a little more slack */
                DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
                tensor_free(rc), tensor_free(rg);
            }
        rc = TFN(sum_all)(c), rg = TFN(sum_all)(g);
        snprintf(what, sizeof what, "sum_all %s", ln);
        DTFN(cu_same)(rc, rg, 8 * CU_TOL, what);
        tensor_free(rc), tensor_free(rg);
        for (int dim = 0; dim < 3; dim++) {
            for (int lg = 0; lg < 2; lg++) {
                TT *bc, *bg;

                rc = lg ? TFN(log_softmax)(c, dim) : TFN(softmax)(c, dim);
                rg = lg ? TFN(log_softmax)(g, dim) : TFN(softmax)(g, dim);
                snprintf(what, sizeof what, "%s over dim %d, %s", lg ? "log_softmax" : "softmax", dim, ln);
                DTFN(cu_same)(rc, rg, 2 * CU_TOL, what);
                /* its fused gradient, the input standing in for the output's gradient */
                bc = lg ? TFN(log_softmax_backward)(c, rc, dim) : TFN(softmax_backward)(c, rc, dim);
                bg = lg ? TFN(log_softmax_backward)(g, rg, dim) : TFN(softmax_backward)(g, rg, dim);
                snprintf(what, sizeof what, "%s_backward over dim %d, %s", lg ? "log_softmax" : "softmax", dim, ln);
                DTFN(cu_same)(bc, bg, 4 * CU_TOL, what);
                tensor_free(rc), tensor_free(rg), tensor_free(bc), tensor_free(bg);
            }
        }
        rc = TFN(layer_norm)(c, w, bias, 1e-5), rg = TFN(layer_norm)(g, gw, gbias, 1e-5);
        snprintf(what, sizeof what, "layer_norm %s", ln);
        DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
        tensor_free(rc), tensor_free(rg);
        rc = TFN(layer_norm)(c, NULL, NULL, 1e-5), rg = TFN(layer_norm)(g, NULL, NULL, 1e-5);
        snprintf(what, sizeof what, "layer_norm without weight, %s", ln);
        DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
        tensor_free(rc), tensor_free(rg);
        rc = TFN(rms_norm)(c, w, 1e-6), rg = TFN(rms_norm)(g, gw, 1e-6);
        snprintf(what, sizeof what, "rms_norm %s", ln);
        DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
        tensor_free(rc), tensor_free(rg);
        { /* the norms' fused gradients, given a gradient of the same layout */
            TT *dc = DTFN(cu_view)(DTFN(cu_rand_input)(3, shape, 9 + layout, -1, 1), layout);
            TT *dh = DTFN(cu_rand_input)(3, shape, 9 + layout, -1, 1);
            TT *dg = DTFN(cu_view)(tensor_to(dh, tendo_cuda(0)), layout);

            rc = TFN(layer_norm_backward)(dc, c, w, 1e-5), rg = TFN(layer_norm_backward)(dg, g, gw, 1e-5);
            snprintf(what, sizeof what, "layer_norm_backward %s", ln);
            DTFN(cu_same)(rc, rg, 8 * CU_TOL, what);
            tensor_free(rc), tensor_free(rg);
            rc = TFN(rms_norm_backward)(dc, c, NULL, 1e-6), rg = TFN(rms_norm_backward)(dg, g, NULL, 1e-6);
            snprintf(what, sizeof what, "rms_norm_backward without weight, %s", ln);
            DTFN(cu_same)(rc, rg, 8 * CU_TOL, what);
            tensor_free(rc), tensor_free(rg), tensor_free(dc), tensor_free(dh), tensor_free(dg);
        }
        { /* the losses: cross_entropy over the rows of the last dim (some
           * targets ignored) and its fused gradient; mse_loss against w */
            int64_t rows = tensor_numel(c) / last, flat[2] = {rows, last};
            int64_t *tv = malloc((size_t)rows * sizeof *tv);
            tensor_i64 *tc, *tg;
            TT *xc = tensor_reshape(c, 2, flat), *xg = tensor_reshape(g, 2, flat);
            TT *oc = TFN(full)(0, NULL, 1.5, tendo_cpu()), *og = tensor_to(oc, tendo_cuda(0));

            for (int64_t i = 0; i < rows; i++)
                tv[i] = i % 4 == 1 ? -100 : i * 7919 % last;
            tc = tensor_i64_from_data(tv, 1, &rows, tendo_cpu());
            free(tv);
            tg = tc ? tensor_to(tc, tendo_cuda(0)) : NULL;
            if (!xc || !xg || !og || !tg)
                bail("making loss inputs failed: %s", tendo_error_message(tendo_last_error()));
            rc = TFN(cross_entropy)(xc, tc, -100, 0.1), rg = TFN(cross_entropy)(xg, tg, -100, 0.1);
            snprintf(what, sizeof what, "cross_entropy %s", ln);
            DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
            tensor_free(rc), tensor_free(rg);
            rc = TFN(cross_entropy_backward)(oc, xc, tc, -100, 0.1);
            rg = TFN(cross_entropy_backward)(og, xg, tg, -100, 0.1);
            snprintf(what, sizeof what, "cross_entropy_backward %s", ln);
            DTFN(cu_same)(rc, rg, 4 * CU_TOL, what);
            tensor_free(rc), tensor_free(rg);
            rc = TFN(mse_loss)(c, w), rg = TFN(mse_loss)(g, gw);
            snprintf(what, sizeof what, "mse_loss %s", ln);
            DTFN(cu_same)(rc, rg, 8 * CU_TOL, what);
            tensor_free(rc), tensor_free(rg), tensor_free(xc), tensor_free(xg), tensor_free(oc), tensor_free(og);
            tensor_i64_free(tc), tensor_i64_free(tg);
        }
        tensor_free(c), tensor_free(g), tensor_free(w), tensor_free(bias), tensor_free(gw), tensor_free(gbias);
    }
}

/* Rows of 1104 (a block per row; a multiple of 16, so that contiguous rows
 * take the 16-byte loads of every dtype, the other layouts one element at
 * a time), of 130 or 3 and of 6 or 2 (a thread per row for softmax and the
 * norms; a warp per row, or columns, for the reductions); simulated, each
 * row of a block costs 256 fibers.  Then rows of 32 and 33 elements, each
 * side of TENDO_SHORT_ROW, where softmax and the norms change team. */
static void DTFN(test_cuda_rows)(void)
{
    const int64_t wide[3] = {cu_simulated ? 2 : 6, cu_simulated ? 3 : 130, 1104};
    const int64_t at[3] = {3, 5, 32}, past[3] = {3, 5, 33};

    DTFN(test_cuda_rows_of)(wide, "");
    DTFN(test_cuda_rows_of)(at, " [3,5,32]");
    DTFN(test_cuda_rows_of)(past, " [3,5,33]");
}

/* Reductions over few long rows and over few tall columns take the
 * two-pass split path (kernels/rows.cuh); these shapes are chosen to. */
static void DTFN(test_cuda_split)(void)
{
    static const int64_t wide[2] = {4, 70000}, tall[2] = {5000, 40};
    const struct {
        const char *name;
        DTFN(cu_red_fn) f;
        double tol; /* max is exact; sums of many terms differ in order */
    } reds[] = {{"sum", TFN(sum), 8 * CU_TOL}, {"max", TFN(max), 0}, {"mean", TFN(mean), 8 * CU_TOL}};
    TT *c, *g, *h, *rc, *rg;
    char what[128];

    for (int k = 0; k < 2; k++) {
        const int64_t *shape = k ? tall : wide;
        int dim = k ? 0 : 1;

        c = DTFN(cu_rand_input)(2, shape, 40 + k, -1, 1);
        h = DTFN(cu_rand_input)(2, shape, 40 + k, -1, 1);
        g = tensor_to(h, tendo_cuda(0));
        tensor_free(h);
        if (!c || !g)
            bail("making split inputs failed: %s", tendo_error_message(tendo_last_error()));
        for (size_t i = 0; i < sizeof reds / sizeof *reds; i++) {
            rc = reds[i].f(c, dim, i == 1), rg = reds[i].f(g, dim, i == 1);
            snprintf(what, sizeof what, "%s over dim %d of [%lld,%lld]%s (split in two passes)", reds[i].name, dim,
                     (long long)shape[0], (long long)shape[1], i == 1 ? ", keepdim" : "");
            DTFN(cu_same)(rc, rg, reds[i].tol, what);
            tensor_free(rc), tensor_free(rg);
        }
        tensor_free(c), tensor_free(g);
    }
}

static void DTFN(test_cuda_matmul)(void)
{
    const int64_t as[3] = {3, 33, 17}, bs[2] = {17, 29}, bts[2] = {29, 17}, vs[1] = {17}, bb[3] = {1, 17, 29};
    TT *a = DTFN(cu_rand_input)(3, as, 1, -1, 1), *b = DTFN(cu_rand_input)(2, bs, 2, -1, 1);
    TT *bt0 = DTFN(cu_rand_input)(2, bts, 3, -1, 1), *v = DTFN(cu_rand_input)(1, vs, 4, -1, 1);
    TT *b3 = DTFN(cu_rand_input)(3, bb, 5, -1, 1);
    TT *bt = tensor_transpose(bt0, 0, 1);
    TT *ga = tensor_to(a, tendo_cuda(0)), *gb = tensor_to(b, tendo_cuda(0)), *gbt0 = tensor_to(bt0, tendo_cuda(0));
    TT *gv = tensor_to(v, tendo_cuda(0)), *gb3 = tensor_to(b3, tendo_cuda(0));
    TT *gbt = gbt0 ? tensor_transpose(gbt0, 0, 1) : NULL;
    TT *at = tensor_slice(a, 2, 0, 17, 2), *gat = ga ? tensor_slice(ga, 2, 0, 17, 2) : NULL;
    TT *bs2 = tensor_slice(b, 0, 0, 17, 2), *gbs2 = gb ? tensor_slice(gb, 0, 0, 17, 2) : NULL;
    TT *af = tensor_flip(a, 0), *gaf = ga ? tensor_flip(ga, 0) : NULL;
    /* the same product on the CPU (x @ y) and on cuda:0 (gx @ gy) */
    const struct {
        const TT *x, *y, *gx, *gy;
        const char *what;
    } cases[] = {
        {a, b, ga, gb, "matmul [3,33,17] @ [17,29] (batch broadcast)"},
        {a, bt, ga, gbt, "matmul with a transposed b (a transpose flag, no copy)"},
        {a, v, ga, gv, "matmul by a vector"},
        {a, b3, ga, gb3, "matmul [3,33,17] @ [1,17,29]"},
        {at, bs2, gat, gbs2, "matmul of stepped slices (made contiguous first)"},
        {af, b3, gaf, gb3, "matmul of a batch-flipped a (a negative batch stride: a call per batch)"},
    };
    /* k terms accumulated in another order (f32, or f64 for f64), rounded once */
    double tol = DT_MANTISSA_BITS >= 24 ? 64 * DT_ULP : 4 * DT_ULP;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TT *c, *g;
        if (DT_BITS == 8) { /* cublasGemmEx takes no fp8: refused (kernels/host/blas.c) */
            g = tensor_matmul(cases[i].gx, cases[i].gy);
            ok(!g && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED, "%s %s is refused on a GPU",
               DT_NAME, cases[i].what);
            tensor_free(g);
            continue;
        }
        c = tensor_matmul(cases[i].x, cases[i].y), g = tensor_matmul(cases[i].gx, cases[i].gy);
        DTFN(cu_same)(c, g, tol, cases[i].what);
        tensor_free(c), tensor_free(g);
    }
    tensor_free(a), tensor_free(b), tensor_free(bt0), tensor_free(v), tensor_free(b3), tensor_free(bt);
    tensor_free(ga), tensor_free(gb), tensor_free(gbt0), tensor_free(gv), tensor_free(gb3), tensor_free(gbt);
    tensor_free(at), tensor_free(gat), tensor_free(bs2), tensor_free(gbs2), tensor_free(af), tensor_free(gaf);
}

static void DTFN(test_cuda_create_and_move)(void)
{
    const int64_t shape[2] = {123, 457};
    TT *c, *g, *t, *back, *gv, *cv;
    int64_t n = 123 * 457;
    E *hc = malloc((size_t)n * sizeof *hc), *hg = malloc((size_t)n * sizeof *hg);

    if (!hc || !hg)
        bail("out of memory");
    c = TFN(rand)(2, shape, 42, tendo_cpu()), g = TFN(rand)(2, shape, 42, tendo_cuda(0));
    ok(c && g && tensor_copy_to(c, hc, n) == TENDO_OK && tensor_copy_to(g, hg, n) == TENDO_OK &&
           memcmp(hc, hg, (size_t)n * sizeof *hc) == 0,
       "%s rand on cuda:0 is bit-identical to the CPU's", DT_NAME);
    tensor_free(c), tensor_free(g);
    c = TFN(randn)(2, shape, 7, tendo_cpu()), g = TFN(randn)(2, shape, 7, tendo_cuda(0));
    /* normals are drawn in float for every dtype (src/core/philox.h):
     * logf and cosf may round differently on the two devices */
    DTFN(cu_same)(c, g, CU_TOL > 16 * 0x1p-23 ? CU_TOL : 16 * 0x1p-23, "randn agrees with the CPU to float rounding");
    tensor_free(c), tensor_free(g);
    c = TFN(full)(2, shape, 2.5, tendo_cpu()), g = TFN(full)(2, shape, 2.5, tendo_cuda(0));
    DTFN(cu_same)(c, g, 0, "full");
    tensor_free(c), tensor_free(g);
    c = TFN(arange)(-3, 7, 0.25, tendo_cpu()), g = TFN(arange)(-3, 7, 0.25, tendo_cuda(0));
    DTFN(cu_same)(c, g, 0, "arange");
    tensor_free(c), tensor_free(g);
    /* round trips, strided downloads, views made contiguous on the device */
    c = DTFN(cu_rand_input)(2, shape, 11, -5, 5);
    g = tensor_to(c, tendo_cuda(0));
    back = g ? tensor_to(g, tendo_cpu()) : NULL;
    ok(back && tensor_copy_to(c, hc, n) == TENDO_OK && tensor_copy_to(back, hg, n) == TENDO_OK &&
           memcmp(hc, hg, (size_t)n * sizeof *hc) == 0,
       "%s cpu -> cuda:0 -> cpu is exact", DT_NAME);
    {
        /* 24 MiB of f32 (12 of 16-bit): several 8 MiB pinned stages each way,
         * the last one partial */
        int64_t big = ((int64_t)6 << 20) + 777;
        TT *bc = DTFN(cu_rand_input)(1, &big, 12, -5, 5);
        TT *bg = bc ? tensor_to(bc, tendo_cuda(0)) : NULL;
        TT *bb = bg ? tensor_to(bg, tendo_cpu()) : NULL;
        ok(bb && memcmp(tensor_data(bc), tensor_data(bb), (size_t)big * sizeof(E)) == 0,
           "%s a %lld-element transfer through the pinned stages round-trips exactly", DT_NAME, (long long)big);
        tensor_free(bc), tensor_free(bg), tensor_free(bb);
    }
    cv = tensor_transpose(c, 0, 1), gv = g ? tensor_transpose(g, 0, 1) : NULL;
    t = gv ? tensor_contiguous(gv) : NULL;
    DTFN(cu_same)(cv, t, 0, "contiguous of a transposed device view");
    tensor_free(t);
    t = gv ? tensor_clone(gv) : NULL;
    DTFN(cu_same)(cv, t, 0, "clone of a transposed device view");
    tensor_free(t);
    {
        tensor_f32 *c32 = TFN(to_f32)(cv), *g32 = gv ? TFN(to_f32)(gv) : NULL;
        float *f1 = malloc((size_t)n * sizeof *f1), *f2 = malloc((size_t)n * sizeof *f2);
        ok(c32 && g32 && f1 && f2 && tensor_copy_to(c32, f1, n) == TENDO_OK && tensor_copy_to(g32, f2, n) == TENDO_OK &&
               memcmp(f1, f2, (size_t)n * sizeof *f1) == 0,
           "%s to_f32 on the device matches the CPU exactly", DT_NAME);
#ifdef TENDO_HAVE_BF16
        tensor_bf16 *cb = TFN(to_bf16)(cv), *gb = gv ? TFN(to_bf16)(gv) : NULL;
        ok(cb && gb && f1 && tensor_copy_to(cb, (tendo_bf16 *)f1, n) == TENDO_OK &&
               tensor_copy_to(gb, (tendo_bf16 *)f2, n) == TENDO_OK && memcmp(f1, f2, (size_t)n * 2) == 0,
           "%s to_bf16 on the device matches the CPU exactly", DT_NAME);
        tensor_bf16_free(cb), tensor_bf16_free(gb);
#else
        skip(1, "%s to_bf16: this build has no bf16", DT_NAME);
#endif
        free(f1), free(f2);
        tensor_f32_free(c32), tensor_f32_free(g32);
    }
    if (tendo_cuda_device_count() >= 2) {
        TT *p = g ? tensor_to(g, tendo_cuda(1)) : NULL;
        TT *pb = p ? tensor_to(p, tendo_cpu()) : NULL;
        ok(pb && tensor_copy_to(pb, hg, n) == TENDO_OK && memcmp(hc, hg, (size_t)n * sizeof *hc) == 0,
           "%s cuda:0 -> cuda:1 (peer) -> cpu is exact", DT_NAME);
        tensor_free(p), tensor_free(pb);
    } else {
        skip(1, "peer copies need 2 GPUs");
    }
    tensor_free(cv), tensor_free(gv), tensor_free(back), tensor_free(c), tensor_free(g);
    free(hc), free(hg);
}

static void DTFN(test_cuda_errors)(void)
{
    TT *c = TFN(ones)(TENDO_SHAPE(2), tendo_cpu()), *g = TFN(ones)(TENDO_SHAPE(2), tendo_cuda(0));
    int n = tendo_cuda_device_count();

    ok(tensor_add(c, g) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_DEVICE_MISMATCH &&
           strstr(tendo_error_message(tendo_last_error()), "add: cpu and cuda:0") != NULL,
       "%s add of cpu and cuda:0 tensors: %s", DT_NAME, tendo_error_message(tendo_last_error()));
    ok(tensor_matmul(g, c) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_DEVICE_MISMATCH,
       "%s matmul of cuda:0 and cpu tensors is refused", DT_NAME);
    ok(TFN(zeros)(TENDO_SHAPE(2), tendo_cuda(n)) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_DEVICE,
       "%s a device index past the count is TENDO_ERR_DEVICE", DT_NAME);
    tensor_free(c), tensor_free(g);
}

static void DTFN(test_cuda)(void)
{
    DTFN(test_cuda_elementwise)();
    DTFN(test_cuda_sentinel)();
    DTFN(test_cuda_rows)();
    DTFN(test_cuda_split)();
    DTFN(test_cuda_matmul)();
    DTFN(test_cuda_create_and_move)();
    DTFN(test_cuda_errors)();
}
