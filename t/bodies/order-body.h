/* t/bodies/order-body.h - per dtype: sort/argsort/topk, cumsum, var/std against
 * references computed in double (int64_t for integers).  Included by
 * t/each-dtype.h from t/drivers/t-order.c. */

#if defined(DT_KIND_INT)
#define DT_SGN true
#else
#define DT_SGN false
#endif
#if defined(DT_KIND_FLOAT)
#define DT_ISF true
#else
#define DT_ISF false
#endif

/* A random element.  OD_TIES: few distinct values (many ties), and for a
 * float NaN, +-inf, -0.0 and +0.0; for an integer also its extremes.
 * OD_EIGHTHS: multiples of 1/8 in [-2, 2) (small integers for the integer
 * dtypes; 0 or 1 for bool), no NaN. */
static E DTFN(oelem)(uint64_t *rng, int data)
{
    uint64_t r = t_rand_u64(rng);
#if defined(DT_KIND_FLOAT)
    if (data == OD_EIGHTHS)
        return E_FROM_DOUBLE(floor(t_rand_range(rng, -2, 2) * 8) / 8);
    switch (r % 12) {
    case 0: return E_FROM_DOUBLE(NAN);
    case 1: return E_FROM_DOUBLE(r & 16 ? INFINITY : -INFINITY);
    case 2: case 3: return E_FROM_DOUBLE(r & 16 ? 0.0 : -0.0);
    default: return E_FROM_DOUBLE((double)((int)((r >> 8) % 9) - 4) / 2);
    }
#elif defined(DT_KIND_BOOL)
    (void)data;
    return (r >> 7) & 1;
#else
    int64_t v;
    if (data == OD_EIGHTHS || r % 4)
        v = (int64_t)((r >> 8) % 9) - (DT_SGN ? 4 : 0);
    else if (r & 64)
        v = (int64_t)t_rand_u64(rng);
    else
        v = r & 128 ? (int64_t)(t_mask(DT_BITS) >> (DT_SGN ? 1 : 0)) : DT_SGN ? (int64_t)(~(t_mask(DT_BITS) >> 1)) : 0;
    return (E)t_wrap((uint64_t)v, DT_BITS, DT_SGN);
#endif
}

/* A view of the given shape in layout lay holding random elements. */
static TT *DTFN(omake)(int lay, int nd, const int64_t *shape, uint64_t *rng, int data)
{
    DTFN(lbase) b;
    E *raw = DTFN(layout_begin)(&b, lay, nd, shape);

    for (int64_t i = 0; i < b.n; i++)
        raw[i] = DTFN(oelem)(rng, data);
    return DTFN(layout_end)(&b, t_dev);
}

/* t's elements in row-major order: raw, as double and as int64_t. */
typedef struct {
    int64_t n;
    E *raw;
    double *d;
    int64_t *i;
} DTFN(vals);

static DTFN(vals) DTFN(read)(const TT *t)
{
    DTFN(vals) v;

    v.n = tensor_numel(t);
    v.raw = malloc((size_t)(v.n ? v.n : 1) * sizeof *v.raw);
    v.d = malloc((size_t)(v.n ? v.n : 1) * sizeof *v.d);
    v.i = malloc((size_t)(v.n ? v.n : 1) * sizeof *v.i);
    if (!v.raw || !v.d || !v.i || tensor_copy_to(t, v.raw, v.n) != TENDO_OK)
        bail("reading a tensor failed");
    for (int64_t k = 0; k < v.n; k++) {
        v.d[k] = E_TO_DOUBLE(v.raw[k]);
#if defined(DT_KIND_FLOAT)
        v.i[k] = 0;
#else
        v.i[k] = (int64_t)v.raw[k];
#endif
    }
    return v;
}

static void DTFN(drop)(DTFN(vals) *v)
{
    free(v->raw);
    free(v->d);
    free(v->i);
}

/* (outer, len, inner) of shape (nd, s) around dim d (a 0-d tensor: 1, 1, 1). */
static void DTFN(split)(int nd, const int64_t *s, int d, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    *len = nd ? s[d] : 1;
    for (int i = 0; i < nd; i++) {
        if (i < d)
            *outer *= s[i];
        else if (i > d)
            *inner *= s[i];
    }
}

#if !defined(DT_KIND_BOOL)
/* Checks values vt and indices it (either may be NULL; both freed) of the
 * first k (k < 0: all) of a stable sort of a along dim d (>= 0). */
static void DTFN(check_order)(t_check *c, const char *what, const TT *a, int d, bool desc, int64_t k, TT *vt,
                              tensor_i64 *it)
{
    int nd = tensor_ndim(a);
    const int64_t *s = tensor_shape(a);
    int64_t outer, len, inner, want_shape[TENDO_MAX_DIMS];
    DTFN(vals) in = DTFN(read)(a), vo = {0, NULL, NULL, NULL};
    int64_t *io = NULL, *ord;

    DTFN(split)(nd, s, d, &outer, &len, &inner);
    if (k < 0)
        k = len;
    memcpy(want_shape, s, (size_t)nd * sizeof *s);
    if (nd)
        want_shape[d] = k;
    if (vt && !t_same_shape(tensor_ndim(vt), tensor_shape(vt), nd, want_shape))
        t_fail(c, "%s: values have the wrong shape", what);
    else if (it && !t_same_shape(tensor_ndim(it), tensor_shape(it), nd, want_shape))
        t_fail(c, "%s: indices have the wrong shape", what);
    else {
        if (vt)
            vo = DTFN(read)(vt);
        if (it)
            io = t_i64s(it);
        ord = malloc((size_t)(len ? len : 1) * sizeof *ord);
        for (int64_t o = 0; o < outer; o++) {
            for (int64_t in_ = 0; in_ < inner; in_++) {
                int64_t base = o * len * inner + in_;
                t_ref_order(DT_ISF, DT_SGN, in.d, in.i, base, inner, len, desc, ord);
                for (int64_t i = 0; i < k; i++) {
                    int64_t at = (o * k + i) * inner + in_;
                    c->n++;
                    if (io && io[at] != ord[i]) {
                        if (!c->bad++)
                            snprintf(c->first, sizeof c->first, "%s: index %lld: got %lld, wanted %lld", what,
                                     (long long)at, (long long)io[at], (long long)ord[i]);
                    } else if (vt && memcmp(&vo.raw[at], &in.raw[base + ord[i] * inner], sizeof(E))) {
                        if (!c->bad++)
                            snprintf(c->first, sizeof c->first, "%s: value %lld: got %.9g, wanted %.9g (bits differ)",
                                     what, (long long)at, vo.d[at], in.d[base + ord[i] * inner]);
                    }
                }
            }
        }
        free(ord);
    }
    DTFN(drop)(&in);
    DTFN(drop)(&vo);
    free(io);
    tensor_free(vt);
    tensor_free(it);
}

static void DTFN(test_sort)(uint64_t *rng)
{
    t_check cs = {0}, ca = {0}, ck = {0};
    char what[200], sh[64];

    for (int si = 0; si < T_NSHAPES; si++) {
        int nd = t_shapes[si].nd;
        const int64_t *shape = t_shapes[si].s;
        for (int lay = 0; lay < L_COUNT; lay++) {
            TT *a = DTFN(omake)(lay, nd, shape, rng, OD_TIES);
            for (int dim = -(nd ? nd : 1); dim < (nd ? nd : 1); dim++) {
                int d = dim < 0 ? dim + (nd ? nd : 1) : dim;
                int64_t len = nd ? shape[d] : 1;
                for (int desc = 0; desc < 2; desc++) {
                    TT *v = NULL;
                    tensor_i64 *ix = NULL;
                    t_shape_str(sh, sizeof sh, nd, shape);
                    snprintf(what, sizeof what, "sort %s %s dim %d %s", sh, t_layout[lay], dim, desc ? "desc" : "asc");
                    if (tensor_sort(a, dim, desc, &v, &ix) != TENDO_OK)
                        t_fail(&cs, "%s failed: %s", what, tendo_error_message(tendo_last_error()));
                    else
                        DTFN(check_order)(&cs, what, a, d, desc, -1, v, ix);
                    /* values only, then argsort */
                    v = NULL;
                    if (TFN(sort)(a, dim, desc, &v, NULL) != TENDO_OK || !v)
                        t_fail(&cs, "%s (values only) failed", what);
                    else
                        DTFN(check_order)(&cs, what, a, d, desc, -1, v, NULL);
                    ix = tensor_argsort(a, dim, desc);
                    if (!ix)
                        t_fail(&ca, "arg%s failed", what);
                    else
                        DTFN(check_order)(&ca, what, a, d, desc, -1, NULL, ix);
                    /* topk: k = 0, 1, 3 and the whole dim */
                    const int64_t ks[] = {0, 1, 3, len};
                    for (int ki = 0; ki < 4; ki++) {
                        if (ks[ki] > len || (nd == 0 && ks[ki] != 1))
                            continue;
                        v = NULL;
                        ix = NULL;
                        snprintf(what, sizeof what, "topk %s %s dim %d k %lld %s", sh, t_layout[lay], dim,
                                 (long long)ks[ki], desc ? "largest" : "smallest");
                        if (tensor_topk(a, ks[ki], dim, desc, &v, &ix) != TENDO_OK)
                            t_fail(&ck, "%s failed: %s", what, tendo_error_message(tendo_last_error()));
                        else
                            DTFN(check_order)(&ck, what, a, d, desc, ks[ki], v, ix);
                    }
                }
            }
            tensor_free(a);
        }
    }
    t_done(&cs, DT_NAME "%s sort (values and indices; stable, NaN placement) over shapes, layouts, every dim", t_on);
    t_done(&ca, DT_NAME "%s argsort over shapes, layouts, every dim", t_on);
    t_done(&ck, DT_NAME "%s topk, k = 0, 1, 3, size, largest and smallest, over shapes, layouts, every dim", t_on);
}

/* Rows long enough for the merge passes and the heap, strided too. */
static void DTFN(test_long)(uint64_t *rng)
{
    t_check c = {0};
    char what[160];
    const int64_t n = 2100;

    for (int lay = 0; lay < L_COUNT; lay++) {
        if (lay == L_TRANS)
            continue;
        for (int data = 0; data < 2; data++) {
            TT *a = DTFN(omake)(lay, 2, (const int64_t[]){2, n}, rng, data);
            for (int desc = 0; desc < 2; desc++) {
                TT *v = NULL;
                tensor_i64 *ix = NULL;
                snprintf(what, sizeof what, "sort [2,%lld] %s data %d %s", (long long)n, t_layout[lay], data,
                         desc ? "desc" : "asc");
                if (tensor_sort(a, 1, desc, &v, &ix) != TENDO_OK)
                    t_fail(&c, "%s failed", what);
                else
                    DTFN(check_order)(&c, what, a, 1, desc, -1, v, ix);
                const int64_t ks[] = {1, 10, 600, 2000};
                for (int ki = 0; ki < 4; ki++) {
                    v = NULL;
                    ix = NULL;
                    snprintf(what, sizeof what, "topk [2,%lld] k %lld %s data %d %s", (long long)n, (long long)ks[ki],
                             t_layout[lay], data, desc ? "largest" : "smallest");
                    if (tensor_topk(a, ks[ki], -1, desc, &v, &ix) != TENDO_OK)
                        t_fail(&c, "%s failed", what);
                    else
                        DTFN(check_order)(&c, what, a, 1, desc, ks[ki], v, ix);
                }
            }
            tensor_free(a);
        }
    }
    t_done(&c, DT_NAME "%s sort and topk of rows of %lld (merge and heap paths, strided)", t_on, (long long)n);

    /* rows of more than two GPU sort tiles (an odd tile out in the first
     * merge pass), along dim 0: two rows, stepping 2 */
    {
        t_check c2 = {0};
        const int64_t m = 4500;
        TT *a = DTFN(omake)(L_CONTIG, 2, (const int64_t[]){m, 2}, rng, OD_TIES);
        for (int desc = 0; desc < 2; desc++) {
            TT *v = NULL;
            tensor_i64 *ix = NULL;
            snprintf(what, sizeof what, "sort [%lld,2] dim 0 %s", (long long)m, desc ? "desc" : "asc");
            if (tensor_sort(a, 0, desc, &v, &ix) != TENDO_OK)
                t_fail(&c2, "%s failed", what);
            else
                DTFN(check_order)(&c2, what, a, 0, desc, -1, v, ix);
        }
        {
            TT *v = NULL;
            tensor_i64 *ix = NULL;
            if (tensor_topk(a, 4100, 0, true, &v, &ix) != TENDO_OK)
                t_fail(&c2, "topk [%lld,2] k 4100 failed", (long long)m);
            else
                DTFN(check_order)(&c2, "topk k 4100", a, 0, true, 4100, v, ix);
        }
        tensor_free(a);
        t_done(&c2, DT_NAME "%s sort and topk along dim 0 of [%lld, 2]", t_on, (long long)m);
    }
}

/* Allocation failures (the outputs, and the row buffers of a row too long
 * for the stack): each fails as TENDO_ERR_OOM with both outputs NULL,
 * until the call has what it needs and succeeds. */
static void DTFN(test_oom)(void)
{
    TT *a = TFN(zeros)(2, (const int64_t[]){3, 3000}, t_dev);
    int fails = 0;
    bool good = a != NULL, done = false;

    for (int64_t k = 1; good && !done && k < 64; k++) {
        TT *v = a;
        tensor_i64 *ix = (tensor_i64 *)(void *)a;
        tendo_status st;

        tendo_fault_inject_alloc(k);
        st = tensor_sort(a, 1, true, &v, &ix);
        tendo_fault_inject_alloc(0);
        if (st == TENDO_OK) {
            done = v && ix;
            tensor_free(v);
            tensor_free(ix);
        } else {
            good = st == TENDO_ERR_OOM && !v && !ix && t_failed_with(TENDO_ERR_OOM, "sort");
            fails++;
        }
    }
    ok(good && done && fails >= 3, DT_NAME "%s sort under allocation failures: TENDO_ERR_OOM, outputs NULL, then "
       "success (%d failure points)", t_on, fails);
    tensor_free(a);
}

/* The rules one at a time: NaN placement, -0.0/+0.0, ties, errors. */
static void DTFN(test_sort_edges)(void)
{
    TT *v = NULL;
    tensor_i64 *ix = NULL;
    int64_t *iv;

#if defined(DT_KIND_FLOAT)
    {
        /* 3, NaN, 1, NaN, -0.0, 0.0, -4 */
        const double x[7] = {3, NAN, 1, NAN, -0.0, 0.0, -4};
        const int64_t asc[7] = {6, 4, 5, 2, 0, 1, 3}, desc[7] = {1, 3, 0, 2, 4, 5, 6};
        E raw[7], got[7];
        TT *t;
        for (int i = 0; i < 7; i++)
            raw[i] = E_FROM_DOUBLE(x[i]);
        t = TFN(from_data)(raw, 1, (const int64_t[]){7}, t_dev);
        for (int de = 0; de < 2; de++) {
            const int64_t *want = de ? desc : asc;
            bool good = tensor_sort(t, 0, de, &v, &ix) == TENDO_OK;
            good = good && tensor_copy_to(v, got, 7) == TENDO_OK;
            iv = good ? t_i64s(ix) : NULL;
            for (int i = 0; good && i < 7; i++)
                good = iv[i] == want[i] && !memcmp(&got[i], &raw[want[i]], sizeof(E));
            ok(good, DT_NAME "%s sort %s: NaN %s, -0.0 before +0.0 as they came, their bits kept", t_on,
               de ? "descending" : "ascending", de ? "first" : "last");
            free(iv);
            tensor_free(v);
            tensor_free(ix);
        }
        /* topk: NaN counts as the largest */
        iv = NULL;
        ok(tensor_topk(t, 2, 0, true, NULL, &ix) == TENDO_OK && (iv = t_i64s(ix)) && iv[0] == 1 && iv[1] == 3,
           DT_NAME "%s topk largest: the NaNs first, in index order", t_on);
        free(iv);
        tensor_free(ix);
        tensor_free(t);
    }
#endif
    {
        /* ties: 1 3 3 2 3 -> largest 2: indices 1, 2; smallest 2 of 2 1 1 0 -> 3, 1 */
        E a1[5] = {E_FROM_DOUBLE(1), E_FROM_DOUBLE(3), E_FROM_DOUBLE(3), E_FROM_DOUBLE(2), E_FROM_DOUBLE(3)};
        E a2[4] = {E_FROM_DOUBLE(2), E_FROM_DOUBLE(1), E_FROM_DOUBLE(1), E_FROM_DOUBLE(0)};
        TT *t1 = TFN(from_data)(a1, 1, (const int64_t[]){5}, t_dev);
        TT *t2 = TFN(from_data)(a2, 1, (const int64_t[]){4}, t_dev);
        iv = NULL;
        ok(tensor_topk(t1, 2, 0, true, NULL, &ix) == TENDO_OK && (iv = t_i64s(ix)) && iv[0] == 1 && iv[1] == 2,
           DT_NAME "%s topk largest: ties go to the lower index", t_on);
        free(iv);
        tensor_free(ix);
        iv = NULL;
        ok(tensor_topk(t2, 2, 0, false, NULL, &ix) == TENDO_OK && (iv = t_i64s(ix)) && iv[0] == 3 && iv[1] == 1,
           DT_NAME "%s topk smallest: ties go to the lower index", t_on);
        free(iv);
        tensor_free(ix);
        iv = NULL;
        ok(tensor_sort(t1, 0, true, &v, &ix) == TENDO_OK && (iv = t_i64s(ix)) && iv[0] == 1 && iv[1] == 2 &&
               iv[2] == 4 && iv[3] == 3 && iv[4] == 0,
           DT_NAME "%s sort descending is stable: equal elements keep their order", t_on);
        free(iv);
        tensor_free(ix);
        tensor_free(v);
        ok(tensor_sort(t1, 0, false, NULL, NULL) == TENDO_OK, DT_NAME "%s sort with both results skipped succeeds", t_on);

        /* errors: outputs NULL, error set */
        v = (TT *)t1;
        ix = (tensor_i64 *)(void *)t1;
        iv = NULL;
        ok(tensor_topk(t1, 6, 0, true, &v, &ix) == TENDO_ERR_INVALID_ARG && !v && !ix &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "k = 6"),
           DT_NAME "%s topk k > size: TENDO_ERR_INVALID_ARG, outputs NULL", t_on);
        iv = NULL;
        ok(tensor_topk(t1, -1, 0, true, &v, &ix) == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "k = -1"),
           DT_NAME "%s topk k < 0: TENDO_ERR_INVALID_ARG", t_on);
        ok(tensor_sort(t1, 1, false, &v, &ix) == TENDO_ERR_INVALID_ARG && !v && !ix &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "sort"),
           DT_NAME "%s sort dim out of range: TENDO_ERR_INVALID_ARG, outputs NULL", t_on);
        ok(!tensor_argsort(t1, -2, false) && t_failed_with(TENDO_ERR_INVALID_ARG, "argsort"),
           DT_NAME "%s argsort dim out of range: NULL, TENDO_ERR_INVALID_ARG", t_on);
        ok(TFN(sort)(NULL, 0, false, &v, &ix) == TENDO_ERR_INVALID_ARG && !v && !ix &&
               t_failed_with(TENDO_ERR_INVALID_ARG, "sort"),
           DT_NAME "%s sort(NULL): TENDO_ERR_INVALID_ARG", t_on);
        tensor_free(t1);
        tensor_free(t2);
    }
}
#endif

/* ---- cumsum ------------------------------------------------------------------ */

#if defined(DT_KIND_FLOAT)
typedef TT DTFN(sum_t);
#else
typedef tensor_i64 DTFN(sum_t);
#endif

static void DTFN(test_cumsum)(uint64_t *rng)
{
    t_check c = {0};
    char what[200], sh[64];

    for (int si = 0; si < T_NSHAPES; si++) {
        int nd = t_shapes[si].nd;
        const int64_t *shape = t_shapes[si].s;
        for (int lay = 0; lay < L_COUNT; lay++) {
            for (int data = 0; data < 2; data++) {
                TT *a = DTFN(omake)(lay, nd, shape, rng, data);
                DTFN(vals) in = DTFN(read)(a);
                for (int dim = -(nd ? nd : 1); dim < (nd ? nd : 1); dim++) {
                    int d = dim < 0 ? dim + (nd ? nd : 1) : dim;
                    int64_t outer, len, inner;
                    DTFN(sum_t) *r = tensor_cumsum(a, dim);
                    DTFN(split)(nd, shape, d, &outer, &len, &inner);
                    t_shape_str(sh, sizeof sh, nd, shape);
                    snprintf(what, sizeof what, "cumsum %s %s data %d dim %d", sh, t_layout[lay], data, dim);
                    if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), nd, shape)) {
                        t_fail(&c, "%s: failed or wrong shape", what);
                        tensor_free(r);
                        continue;
                    }
#if defined(DT_KIND_FLOAT)
                    DTFN(vals) out = DTFN(read)(r);
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t k = 0; k < inner; k++) {
                            double acc = 0;
                            for (int64_t i = 0; i < len; i++) {
                                int64_t at = (o * len + i) * inner + k;
                                acc += in.d[at];
                                /* rounded once or twice to the dtype */
                                double want = E_TO_DOUBLE(E_FROM_DOUBLE(acc));
                                t_elem(&c, what, at, out.d[at], want, fabs(want) * DT_ULP * 1.01 + 1e-300);
                            }
                        }
                    DTFN(drop)(&out);
#else
                    int64_t *out = t_i64s(r);
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t k = 0; k < inner; k++) {
                            uint64_t acc = 0;
                            for (int64_t i = 0; i < len; i++) {
                                int64_t at = (o * len + i) * inner + k;
                                acc += (uint64_t)in.i[at];
                                t_ielem(&c, what, at, out[at], (int64_t)acc);
                            }
                        }
                    free(out);
#endif
                    tensor_free(r);
                }
                DTFN(drop)(&in);
                tensor_free(a);
            }
        }
    }
    t_done(&c, DT_NAME "%s cumsum -> %s over shapes, layouts, every dim", t_on, DT_ISF ? DT_NAME : "i64");

#if !defined(DT_KIND_FLOAT)
    { /* wraparound in int64 (never at the dtype's width) */
#if defined(DT_KIND_BOOL)
        E raw[3] = {1, 1, 1};
        const int64_t want[3] = {1, 2, 3};
#elif DT_BITS == 64 && defined(DT_KIND_INT)
        E raw[3] = {INT64_MAX, 1, -1};
        const int64_t want[3] = {INT64_MAX, INT64_MIN, INT64_MAX};
#elif DT_BITS == 64
        E raw[3] = {(E)UINT64_MAX, 1, 1}; /* u64 read as i64: -1 + 1 + 1 */
        const int64_t want[3] = {-1, 0, 1};
#else
        E raw[3] = {(E)t_mask(DT_BITS - DT_SGN), 1, (E)t_mask(DT_BITS - DT_SGN)};
        const int64_t m = (int64_t)t_mask(DT_BITS - DT_SGN), want[3] = {m, m + 1, 2 * m + 1};
#endif
        TT *t = TFN(from_data)(raw, 1, (const int64_t[]){3}, t_dev);
        tensor_i64 *r = TFN(cumsum)(t, 0);
        int64_t *v = r ? t_i64s(r) : NULL;
        ok(v && v[0] == want[0] && v[1] == want[1] && v[2] == want[2],
           DT_NAME "%s cumsum accumulates in int64 (past the dtype's max; int64 wraps)", t_on);
        free(v);
        tensor_free(r);
        tensor_free(t);
    }
#endif
    {
        TT *z = TFN(zeros)(1, (const int64_t[]){3}, t_dev);
        ok(!tensor_cumsum(z, 1) && t_failed_with(TENDO_ERR_INVALID_ARG, "cumsum"),
           DT_NAME "%s cumsum dim out of range: NULL, TENDO_ERR_INVALID_ARG", t_on);
        ok(!TFN(cumsum)(NULL, 0) && t_failed_with(TENDO_ERR_INVALID_ARG, "cumsum"), DT_NAME "%s cumsum(NULL) fails", t_on);
        tensor_free(z);
    }
}

/* ---- var and std ------------------------------------------------------------- */

#if defined(DT_KIND_FLOAT)
static void DTFN(test_var)(uint64_t *rng)
{
    t_check c = {0};
    char what[200], sh[64];

    for (int si = 0; si < T_NSHAPES; si++) {
        int nd = t_shapes[si].nd;
        const int64_t *shape = t_shapes[si].s;
        for (int lay = 0; lay < L_COUNT; lay++) {
            TT *a = DTFN(omake)(lay, nd, shape, rng, OD_EIGHTHS);
            DTFN(vals) in = DTFN(read)(a);
            for (int dim = -(nd ? nd : 1); dim < (nd ? nd : 1); dim++) {
                int d = dim < 0 ? dim + (nd ? nd : 1) : dim;
                int64_t outer, len, inner;
                DTFN(split)(nd, shape, d, &outer, &len, &inner);
                for (int64_t corr = -1; corr <= 2; corr++)
                    for (int keep = 0; keep < 2; keep++)
                        for (int sq = 0; sq < 2; sq++) {
                            TT *r = sq ? tensor_std(a, dim, corr, keep) : tensor_var(a, dim, corr, keep);
                            int64_t want_shape[TENDO_MAX_DIMS];
                            int wn = 0;
                            for (int i = 0; i < nd; i++)
                                if (i != d || keep)
                                    want_shape[wn++] = i == d ? 1 : shape[i];
                            t_shape_str(sh, sizeof sh, nd, shape);
                            snprintf(what, sizeof what, "%s %s %s dim %d correction %lld%s", sq ? "std" : "var", sh,
                                     t_layout[lay], dim, (long long)corr, keep ? " keepdim" : "");
                            if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), wn, want_shape)) {
                                t_fail(&c, "%s: failed or wrong shape", what);
                                tensor_free(r);
                                continue;
                            }
                            DTFN(vals) out = DTFN(read)(r);
                            for (int64_t o = 0; o < outer; o++)
                                for (int64_t k = 0; k < inner; k++) {
                                    double sum = 0, m2 = 0, div = (double)(len - corr), want;
                                    for (int64_t i = 0; i < len; i++)
                                        sum += in.d[(o * len + i) * inner + k];
                                    for (int64_t i = 0; i < len; i++) {
                                        double e = in.d[(o * len + i) * inner + k] - sum / (double)len;
                                        m2 += e * e;
                                    }
                                    want = m2 / (div > 0 ? div : 0.0);
                                    if (sq)
                                        want = sqrt(want);
                                    want = E_TO_DOUBLE(E_FROM_DOUBLE(want));
                                    t_elem(&c, what, o * inner + k, out.d[o * inner + k], want,
                                           fabs(want) * (DT_ULP * 2 + 4.0 * (double)(len + 1) * 0x1p-52) + 1e-300);
                                }
                            DTFN(drop)(&out);
                            tensor_free(r);
                        }
            }
            DTFN(drop)(&in);
            tensor_free(a);
        }
    }
    t_done(&c, DT_NAME "%s var and std, corrections -1..2, keepdim, over shapes, layouts, every dim", t_on);

    { /* N = 1: correction 1 divides 0 by 0; correction 0 gives 0; 2 values, correction 2: 0 or inf */
        E one = E_FROM_DOUBLE(1.5), two[2] = {E_FROM_DOUBLE(1), E_FROM_DOUBLE(2)};
        TT *t1 = TFN(from_data)(&one, 1, (const int64_t[]){1}, t_dev);
        TT *t2 = TFN(from_data)(two, 1, (const int64_t[]){2}, t_dev);
        TT *r1 = tensor_var(t1, 0, 1, false), *r0 = tensor_std(t1, -1, 0, true), *r2 = tensor_var(t2, 0, 2, false);
        TT *rv = tensor_var(t2, 0, 1, false), *rs = tensor_std(t2, 0, 0, false);
        E g1, g0, g2, gv, gs;
        bool good = r1 && r0 && r2 && rv && rs && tensor_ndim(r1) == 0 && tensor_ndim(r0) == 1 &&
                    tensor_copy_to(r1, &g1, 1) == TENDO_OK && tensor_copy_to(r0, &g0, 1) == TENDO_OK &&
                    tensor_copy_to(r2, &g2, 1) == TENDO_OK && tensor_copy_to(rv, &gv, 1) == TENDO_OK &&
                    tensor_copy_to(rs, &gs, 1) == TENDO_OK;
        ok(good && isnan(E_TO_DOUBLE(g1)) && E_TO_DOUBLE(g0) == 0, DT_NAME "%s var of N = 1: NaN with correction 1, 0 with 0", t_on);
        E inf = E_FROM_DOUBLE(INFINITY);
        ok(good && !memcmp(&g2, &inf, sizeof(E)),
           DT_NAME "%s var with N - correction = 0 and spread values: inf (the dtype's)", t_on);
        ok(good && E_TO_DOUBLE(gv) == 0.5 && E_TO_DOUBLE(gs) == E_TO_DOUBLE(E_FROM_DOUBLE(0.5)),
           DT_NAME "%s var([1, 2], correction 1) = 0.5, std(correction 0) = 0.5", t_on);
        tensor_free(r1); tensor_free(r0); tensor_free(r2); tensor_free(rv); tensor_free(rs);
        ok(!tensor_var(t1, 1, 1, false) && t_failed_with(TENDO_ERR_INVALID_ARG, "var"),
           DT_NAME "%s var dim out of range: NULL, TENDO_ERR_INVALID_ARG", t_on);
        tensor_free(t1);
        tensor_free(t2);
    }
}
#endif

static void DTFN(test_order)(void)
{
    uint64_t rng = 0x5eed0000u + DT_CODE;

#if !defined(DT_KIND_BOOL)
    DTFN(test_sort)(&rng);
    DTFN(test_long)(&rng);
    DTFN(test_sort_edges)();
    DTFN(test_oom)();
#endif
    DTFN(test_cumsum)(&rng);
#if defined(DT_KIND_FLOAT)
    DTFN(test_var)(&rng);
#endif
}

#undef DT_SGN
#undef DT_ISF
