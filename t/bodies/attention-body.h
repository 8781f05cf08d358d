/* t/bodies/attention-body.h - rope and attention for one float dtype (included by
 * t/each-dtype.h from t/drivers/t-attention.c; see t/lib/dt.h): against the explicit
 * formulas computed in double on the stored values, on the CPU and on
 * cuda:0. */

/* The largest error allowed for results whose magnitude is at most scale:
 * one rounding to the dtype plus what float (double for f64) arithmetic
 * adds over a few hundred terms. */
static double DTFN(tol)(double scale) { return (DT_ULP + (DT_MANTISSA_BITS >= 53 ? 1e-12 : 2e-5)) * scale; }

/* Random values in [-1, 1) stored in the dtype: vals (logical order) get
 * the stored values back. */
static void DTFN(fill)(uint64_t *rng, double *vals, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        vals[i] = E_TO_DOUBLE(E_FROM_DOUBLE(t_rand_range(rng, -1, 1)));
}

/* A tensor of logical shape sh (4 dims) on dev holding vals; when trans,
 * stored with dims 1 and 2 swapped and transposed back (a non-contiguous
 * view). */
static TT *DTFN(make4)(const int64_t sh[4], const double *vals, bool trans, tendo_device dev)
{
    int64_t n = sh[0] * sh[1] * sh[2] * sh[3];
    E *raw = calloc((size_t)(n ? n : 1), sizeof *raw);
    int64_t st[4] = {sh[0], trans ? sh[2] : sh[1], trans ? sh[1] : sh[2], sh[3]};
    TT *t, *v;

    for (int64_t a = 0; a < sh[0]; a++)
        for (int64_t b = 0; b < sh[1]; b++)
            for (int64_t c = 0; c < sh[2]; c++)
                for (int64_t d = 0; d < sh[3]; d++) {
                    int64_t from = ((a * sh[1] + b) * sh[2] + c) * sh[3] + d;
                    int64_t to = trans ? ((a * sh[2] + c) * sh[1] + b) * sh[3] + d : from;
                    raw[to] = E_FROM_DOUBLE(vals[from]);
                }
    t = TFN(from_data)(raw, 4, st, dev);
    free(raw);
    if (!trans || !t)
        return t;
    v = tensor_transpose(t, 1, 2);
    tensor_free(t);
    return v;
}

/* t's elements (any layout) as doubles in logical order; the caller frees. */
static double *DTFN(values)(const TT *t)
{
    int64_t n = tensor_numel(t);
    TT *c = tensor_contiguous(t);
    E *raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
    double *out = malloc((size_t)(n ? n : 1) * sizeof *out);

    tensor_copy_to(c, raw, n);
    for (int64_t i = 0; i < n; i++)
        out[i] = E_TO_DOUBLE(raw[i]);
    free(raw);
    tensor_free(c);
    return out;
}

/* Compares got (n values) with want: NaN where want is NaN, else within
 * tol; says the first miss. */
static bool DTFN(close)(const double *got, const double *want, int64_t n, double tol, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        bool bad = isnan(want[i]) ? !isnan(got[i]) : !(fabs(got[i] - want[i]) <= tol);
        if (bad) {
            diag("%s %s: element %lld is %.9g, want %.9g (tol %.3g)", DT_NAME, what, (long long)i, got[i], want[i],
                 tol);
            return false;
        }
    }
    return true;
}

/* ---- attention ------------------------------------------------------------------ */

typedef struct {
    int64_t B, Hq, Hkv, Lq, Lk, D, Dv;
    int mask; /* 0: none; 1: [Lq, Lk]; 2: [B, 1, 1, Lk] padding (-inf on some keys); 3: full */
    bool causal, trans;
    double scale;
    const char *what;
} DTFN(attn_case);

/* The mask value of (b, h, i, j) from m (its own shape ms, 4 dims). */
static double DTFN(mask_at)(const double *m, const int64_t ms[4], int64_t b, int64_t h, int64_t i, int64_t j)
{
    int64_t x[4] = {b, h, i, j}, off = 0;
    for (int d = 0; d < 4; d++)
        off = off * ms[d] + (ms[d] == 1 ? 0 : x[d]);
    return m[off];
}

/* softmax(q k^T * scale + mask) v in double, the formula itself. */
static void DTFN(ref_attention)(const DTFN(attn_case) * c, const double *q, const double *k, const double *v,
                                const double *m, const int64_t ms[4], double *out)
{
    double scale = c->scale != 0 ? c->scale : 1 / sqrt((double)c->D);
    double *s = malloc((size_t)(c->Lk ? c->Lk : 1) * sizeof *s);

    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->Hq; h++)
            for (int64_t i = 0; i < c->Lq; i++) {
                int64_t hk = h / (c->Hq / c->Hkv);
                double mx = -INFINITY, sum = 0;
                double *o = out + ((b * c->Hq + h) * c->Lq + i) * c->Dv;
                for (int64_t j = 0; j < c->Lk; j++) {
                    double dot = 0;
                    for (int64_t e = 0; e < c->D; e++)
                        dot += q[((b * c->Hq + h) * c->Lq + i) * c->D + e] * k[((b * c->Hkv + hk) * c->Lk + j) * c->D + e];
                    s[j] = dot * scale + (m ? DTFN(mask_at)(m, ms, b, h, i, j) : 0);
                    if (c->causal && j > i + c->Lk - c->Lq)
                        s[j] = -INFINITY;
                    mx = s[j] > mx ? s[j] : mx;
                }
                for (int64_t j = 0; j < c->Lk; j++)
                    sum += s[j] = exp(s[j] - mx); /* mx = -inf: NaN, as softmax gives */
                for (int64_t e = 0; e < c->Dv; e++) {
                    double acc = 0;
                    for (int64_t j = 0; j < c->Lk; j++)
                        acc += s[j] / sum * v[((b * c->Hkv + hk) * c->Lk + j) * c->Dv + e];
                    o[e] = acc;
                }
            }
    free(s);
}

static void DTFN(test_attention)(uint64_t *rng, tendo_device dev)
{
    static const DTFN(attn_case) cases[] = {
        {1, 1, 1, 5, 7, 8, 8, 0, false, false, 0, "one head, no mask"},
        {2, 4, 2, 70, 300, 16, 12, 1, false, true, 0.3, "GQA 4/2, [Lq, Lk] mask, transposed q/k/v, scale 0.3"},
        {2, 2, 1, 3, 300, 8, 8, 2, true, false, 0, "causal decode rows, padding mask [B,1,1,Lk]"},
        {1, 2, 2, 9, 4, 4, 6, 3, true, false, 0, "causal Lq > Lk: the first rows see no key (NaN)"},
        {1, 2, 1, 130, 513, 32, 32, 0, true, false, 0, "causal, query and key blocks with tails"},
        {1, 1, 1, 4, 0, 4, 3, 0, false, false, 0, "no keys: zeros"},
        {2, 2, 1, 17, 70, 256, 200, 2, false, true, 0, "head dims 256 and 200, padding mask, transposed q/k/v"},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const DTFN(attn_case) *c = &cases[ci];
        int64_t qs[4] = {c->B, c->Hq, c->Lq, c->D}, ks[4] = {c->B, c->Hkv, c->Lk, c->D};
        int64_t vs[4] = {c->B, c->Hkv, c->Lk, c->Dv}, ms[4] = {1, 1, 1, 1};
        int64_t nq = c->B * c->Hq * c->Lq * c->D, nk = c->B * c->Hkv * c->Lk * c->D;
        int64_t nv = c->B * c->Hkv * c->Lk * c->Dv, no = c->B * c->Hq * c->Lq * c->Dv, nm;
        double *q = malloc((size_t)(nq + 1) * sizeof *q), *k = malloc((size_t)(nk + 1) * sizeof *k);
        double *v = malloc((size_t)(nv + 1) * sizeof *v), *want = malloc((size_t)(no + 1) * sizeof *want);
        double *m = NULL, *got = NULL;
        TT *tq, *tk, *tv, *tm = NULL, *r;

        if (c->mask == 1) { ms[2] = c->Lq; ms[3] = c->Lk; }
        if (c->mask == 2) { ms[0] = c->B; ms[3] = c->Lk; }
        if (c->mask == 3) { ms[0] = c->B; ms[1] = c->Hq; ms[2] = c->Lq; ms[3] = c->Lk; }
        nm = ms[0] * ms[1] * ms[2] * ms[3];
        DTFN(fill)(rng, q, nq);
        DTFN(fill)(rng, k, nk);
        DTFN(fill)(rng, v, nv);
        if (c->mask) {
            m = malloc((size_t)nm * sizeof *m);
            DTFN(fill)(rng, m, nm);
            if (c->mask == 2) { /* key padding: the last third of each batch's keys, -inf (f8e4m3 has none: -448) */
                double pad = E_TO_DOUBLE(E_FROM_DOUBLE(-INFINITY));
                for (int64_t b = 0; b < c->B; b++)
                    for (int64_t j = 2 * c->Lk / 3 + b; j < c->Lk; j++)
                        m[b * c->Lk + j] = isnan(pad) ? -448 : pad;
            }
            tm = DTFN(make4)(ms, m, false, dev);
            if (c->mask == 1) { /* as a 2-D [Lq, Lk] tensor */
                TT *flat = tensor_reshape(tm, TENDO_SHAPE(c->Lq, c->Lk));
                tensor_free(tm);
                tm = flat;
            }
        }
        tq = DTFN(make4)(qs, q, c->trans, dev);
        tk = DTFN(make4)(ks, k, c->trans, dev);
        tv = DTFN(make4)(vs, v, c->trans, dev);
        DTFN(ref_attention)(c, q, k, v, m, ms, want);
        r = tensor_attention(tq, tk, tv, tm, c->causal, c->scale);
        if (r) {
            const int64_t *sh = tensor_shape(r);
            got = tensor_ndim(r) == 4 && sh[0] == c->B && sh[1] == c->Hq && sh[2] == c->Lq && sh[3] == c->Dv
                      ? DTFN(values)(r) : NULL;
        } else {
            diag("%s: %s", c->what, tendo_error_message(tendo_last_error()));
        }
        ok(got && DTFN(close)(got, want, no, DTFN(tol)(1.0), c->what), "%s attention on %s: %s", DT_NAME,
           tendo_device_str(dev), c->what);
        if (ci == 1) { /* 1, 2 and 3 threads give the same bits */
            bool same = got != NULL;
            for (int th = 1; th <= 3 && same; th++) {
                tendo_set_num_threads(th);
                TT *rt = tensor_attention(tq, tk, tv, tm, c->causal, c->scale);
                double *gt = rt ? DTFN(values)(rt) : NULL;
                same = gt && !memcmp(gt, got, (size_t)no * sizeof *gt);
                free(gt);
                tensor_free(rt);
            }
            tendo_set_num_threads(0);
            ok(same, "%s attention on %s: 1, 2 and 3 threads bitwise identical", DT_NAME, tendo_device_str(dev));
        }
        free(got);
        tensor_free(r);
        tensor_free(tq);
        tensor_free(tk);
        tensor_free(tv);
        tensor_free(tm);
        free(q); free(k); free(v); free(m); free(want);
    }

    /* 2-D operands are one head */
    {
        double q[6 * 8], k[10 * 8], v[10 * 5], want[6 * 5];
        DTFN(attn_case) c = {1, 1, 1, 6, 10, 8, 5, 0, false, false, 0, "2-D"};
        TT *tq, *tk, *tv, *r;
        double *got = NULL;
        DTFN(fill)(rng, q, 48);
        DTFN(fill)(rng, k, 80);
        DTFN(fill)(rng, v, 50);
        TT *q4 = DTFN(make4)((const int64_t[]){1, 1, 6, 8}, q, false, dev);
        TT *k4 = DTFN(make4)((const int64_t[]){1, 1, 10, 8}, k, false, dev);
        TT *v4 = DTFN(make4)((const int64_t[]){1, 1, 10, 5}, v, false, dev);
        tq = tensor_reshape(q4, TENDO_SHAPE(6, 8));
        tk = tensor_reshape(k4, TENDO_SHAPE(10, 8));
        tv = tensor_reshape(v4, TENDO_SHAPE(10, 5));
        tensor_free(q4);
        tensor_free(k4);
        tensor_free(v4);
        DTFN(ref_attention)(&c, q, k, v, NULL, NULL, want);
        r = tensor_attention(tq, tk, tv, NULL, false, 0);
        got = r && tensor_ndim(r) == 2 && tensor_shape(r)[0] == 6 && tensor_shape(r)[1] == 5 ? DTFN(values)(r) : NULL;
        ok(got && DTFN(close)(got, want, 30, DTFN(tol)(1.0), "2-D"), "%s attention on %s: 2-D operands are one head [6, 5]",
           DT_NAME, tendo_device_str(dev));
        free(got);
        tensor_free(r);
        tensor_free(tq);
        tensor_free(tk);
        tensor_free(tv);
    }

    /* argument errors fail with the right status and change nothing */
    {
        TT *q = TFN(zeros)(TENDO_SHAPE(1, 3, 4, 8), dev), *k = TFN(zeros)(TENDO_SHAPE(1, 2, 5, 8), dev);
        TT *k1 = TFN(zeros)(TENDO_SHAPE(1, 1, 5, 8), dev), *k7 = TFN(zeros)(TENDO_SHAPE(1, 1, 5, 7), dev);
        TT *v = TFN(zeros)(TENDO_SHAPE(1, 1, 5, 6), dev), *bad = TFN(zeros)(TENDO_SHAPE(5, 5), dev);
        TT *v1 = TFN(zeros)(TENDO_SHAPE(8), dev);
        struct { TT *q, *k, *v, *m; double scale; tendo_status want; const char *what; } e[] = {
            {q, k, v, NULL, 0, TENDO_ERR_SHAPE, "3 query heads over 2 kv heads"},
            {q, k7, v, NULL, 0, TENDO_ERR_SHAPE, "k's D differs from q's"},
            {q, k1, v, bad, 0, TENDO_ERR_SHAPE, "a mask that does not broadcast"},
            {q, k1, v, NULL, NAN, TENDO_ERR_INVALID_ARG, "a NaN scale"},
            {v1, v1, v1, NULL, 0, TENDO_ERR_SHAPE, "1-D operands"},
            {NULL, k1, v, NULL, 0, TENDO_ERR_INVALID_ARG, "a NULL q"},
        };
        for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
            TT *r = tensor_attention(e[i].q, e[i].k, e[i].v, e[i].m, false, e[i].scale);
            tendo_status st = tendo_error_status(tendo_last_error());
            ok(!r && st == e[i].want, "%s attention on %s: %s fails with %s (got %s)", DT_NAME,
               tendo_device_str(dev), e[i].what,
               tendo_status_str(e[i].want), tendo_status_str(st));
            tensor_free(r);
        }
        if (DT_MANTISSA_BITS <= 24) { /* the scores are computed in float, where 1e300 is inf */
            TT *r = tensor_attention(q, k1, v, NULL, false, 1e300);
            tendo_status st = tendo_error_status(tendo_last_error());
            ok(!r && st == TENDO_ERR_INVALID_ARG && strstr(tendo_error_message(tendo_last_error()), "scale"),
               "%s attention on %s: a scale of 1e300, infinite in float, fails with %s naming it (got %s)", DT_NAME,
               tendo_device_str(dev), tendo_status_str(TENDO_ERR_INVALID_ARG), tendo_status_str(st));
            tensor_free(r);
        }
        tensor_free(q); tensor_free(k); tensor_free(k1); tensor_free(k7); tensor_free(v); tensor_free(bad);
        tensor_free(v1);
    }

    /* a head dim whose query and key rows do not fit a GPU block's shared
     * memory is refused there, not computed wrong */
    if (dev.type == TENDO_CUDA) {
        TT *q = TFN(zeros)(TENDO_SHAPE(1, 1, 2, 7000), dev), *r = tensor_attention(q, q, q, NULL, false, 0);
        tendo_status st = tendo_error_status(tendo_last_error());
        ok(!r && st == TENDO_ERR_UNSUPPORTED, "%s attention on %s: head dim 7000 fails with %s (got %s)", DT_NAME,
           tendo_device_str(dev), tendo_status_str(TENDO_ERR_UNSUPPORTED), tendo_status_str(st));
        tensor_free(r);
        tensor_free(q);
    }
}

/* ---- rope ------------------------------------------------------------------------ */

/* Hugging Face's rotary embedding in double: x [rows, seq, hd] (logical),
 * positions pos[seq]. */
static void DTFN(ref_rope)(const double *x, int64_t rows, int64_t seq, int64_t hd, const int64_t *pos, int64_t rot,
                           double base, bool interleaved, double *out)
{
    int64_t half = rot / 2;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t s = 0; s < seq; s++) {
            const double *xr = x + (r * seq + s) * hd;
            double *o = out + (r * seq + s) * hd;
            for (int64_t i = 0; i < hd; i++)
                o[i] = xr[i];
            for (int64_t i = 0; i < half; i++) {
                double theta = (double)pos[s] / pow(base, (double)(2 * i) / (double)rot);
                int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
                o[a] = xr[a] * cos(theta) - xr[b] * sin(theta);
                o[b] = xr[b] * cos(theta) + xr[a] * sin(theta);
            }
        }
}

static void DTFN(test_rope)(uint64_t *rng, tendo_device dev)
{
    static const int64_t pos[5] = {0, 3, 7, 100, -2};
    tensor_i64 *p = tensor_i64_from_data(pos, 1, (const int64_t[]){5}, dev);
    struct { int64_t rot; bool interleaved, trans; double base; const char *what; } cases[] = {
        {8, false, false, 10000, "rotate_half, all 8 dims"},
        {8, true, false, 10000, "interleaved, all 8 dims"},
        {4, false, true, 500, "rotate_half, 4 of 8 dims, base 500, transposed x"},
        {6, true, true, 10000, "interleaved, 6 of 8 dims, transposed x"},
    };
    int64_t sh[4] = {2, 3, 5, 8}, n = 2 * 3 * 5 * 8;
    double *x = malloc((size_t)n * sizeof *x), *want = malloc((size_t)n * sizeof *want);

    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        TT *tx, *r;
        double *got = NULL;
        DTFN(fill)(rng, x, n);
        tx = DTFN(make4)(sh, x, cases[ci].trans, dev);
        DTFN(ref_rope)(x, 6, 5, 8, pos, cases[ci].rot, cases[ci].base, cases[ci].interleaved, want);
        r = tensor_rope(tx, p, cases[ci].rot, cases[ci].base, cases[ci].interleaved);
        got = r && tensor_ndim(r) == 4 && tensor_numel(r) == n ? DTFN(values)(r) : NULL;
        ok(got && DTFN(close)(got, want, n, DTFN(tol)(2.0), cases[ci].what), "%s rope on %s: %s", DT_NAME,
           tendo_device_str(dev), cases[ci].what);
        free(got);
        tensor_free(r);
        tensor_free(tx);
    }
    {
        TT *x3 = TFN(zeros)(TENDO_SHAPE(3, 5, 8), dev), *x1 = TFN(zeros)(TENDO_SHAPE(8), dev);
        tensor_i64 *p4 = tensor_i64_zeros(TENDO_SHAPE(4), dev);
        struct { TT *x; tensor_i64 *p; int64_t rot; double base; tendo_status want; const char *what; } e[] = {
            {x3, p, 7, 10000, TENDO_ERR_INVALID_ARG, "odd rot_dims"},
            {x3, p, 10, 10000, TENDO_ERR_INVALID_ARG, "rot_dims past head_dim"},
            {x3, p, 0, 10000, TENDO_ERR_INVALID_ARG, "rot_dims 0"},
            {x3, p, 8, 0, TENDO_ERR_INVALID_ARG, "base 0"},
            {x3, p4, 8, 10000, TENDO_ERR_SHAPE, "4 positions for 5 rows"},
            {x1, p, 8, 10000, TENDO_ERR_SHAPE, "1-D x"},
        };
        for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
            TT *r = tensor_rope(e[i].x, e[i].p, e[i].rot, e[i].base, false);
            tendo_status st = tendo_error_status(tendo_last_error());
            ok(!r && st == e[i].want, "%s rope on %s: %s fails with %s (got %s)", DT_NAME,
               tendo_device_str(dev), e[i].what,
               tendo_status_str(e[i].want), tendo_status_str(st));
            tensor_free(r);
        }
        tensor_free(x3);
        tensor_free(x1);
        tensor_free(p4);
    }
    free(x);
    free(want);
    tensor_free(p);
}

/* The tests on the CPU, then the same ones on cuda:0 (skipped without a
 * GPU: 16 attention and 10 rope tests). */
static void DTFN(test_transformer)(void)
{
    uint64_t rng = 0x5eed5eedull ^ (uint64_t)DT_CODE;
    DTFN(test_attention)(&rng, tendo_cpu());
    DTFN(test_rope)(&rng, tendo_cpu());
    if (!tendo_cuda_available()) {
        skip(26, "%s: no CUDA device", DT_NAME);
        return;
    }
    rng = 0x5eed5eedull ^ (uint64_t)DT_CODE;
    DTFN(test_attention)(&rng, tendo_cuda(0));
    DTFN(test_rope)(&rng, tendo_cuda(0));
}
