/* t/bodies/views-body.h - every view op against index arithmetic, per dtype.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

/* A dense source tensor of small integers, and its values (the integers
 * rounded to the dtype: fp8 cannot hold them all) as doubles in *ref. */
static TT *DTFN(source)(int ndim, const int64_t *shape, double **ref)
{
    int64_t n = 1;
    E *raw;
    TT *t;

    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
    *ref = malloc((size_t)(n ? n : 1) * sizeof **ref);
    for (int64_t i = 0; i < n; i++) {
        raw[i] = E_FROM_DOUBLE((double)(i % 199) - 99);
        (*ref)[i] = E_TO_DOUBLE(raw[i]);
    }
    t = TFN(from_data)(raw, ndim, shape, tendo_cpu());
    free(raw);
    return t;
}

/* Reads t[idx] straight from storage through its shape and strides. */
static double DTFN(at)(const TT *t, const int64_t *idx)
{
    const E *p = tensor_data(t);
    int64_t off = 0;

    for (int d = 0; d < tensor_ndim(t); d++)
        off += idx[d] * tensor_stride(t)[d];
    return E_TO_DOUBLE(p[off]);
}

/* Maps an index of the view to an index of the source; returns false to
 * mean "the source is read in flat order" (reshape-like views). */
typedef bool (*DTFN(map_fn))(const int64_t *out_idx, int64_t *src_idx, const void *arg);

/* Checks every element of view v against the source's reference values. */
static bool DTFN(check_view)(const TT *v, const int64_t *src_shape, int src_ndim, const double *ref,
                             DTFN(map_fn) map, const void *arg)
{
    int nd = tensor_ndim(v);
    int64_t idx[TENDO_MAX_DIMS] = {0}, sidx[TENDO_MAX_DIMS];
    double *copied;
    bool good = true;

    copied = DTFN(values)(v);
    for (int64_t k = 0; k < tensor_numel(v); k++) {
        int64_t f = k, so = 0;
        double want;

        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = f % tensor_shape(v)[d];
            f /= tensor_shape(v)[d];
        }
        if (map && map(idx, sidx, arg)) {
            for (int d = 0; d < src_ndim; d++)
                so = so * src_shape[d] + sidx[d];
        } else {
            so = k;
        }
        want = ref[so];
        /* read through the view's strides and through copy_to */
        if (DTFN(at)(v, idx) != want || copied[k] != want)
            good = false;
    }
    free(copied);
    return good;
}

struct DTFN(swap) { int d0, d1; };
static bool DTFN(map_transpose)(const int64_t *o, int64_t *s, const void *arg)
{
    const struct DTFN(swap) *w = arg;
    memcpy(s, o, TENDO_MAX_DIMS * sizeof *s);
    s[w->d0] = o[w->d1];
    s[w->d1] = o[w->d0];
    return true;
}

struct DTFN(perm) { int n; const int *p; };
static bool DTFN(map_permute)(const int64_t *o, int64_t *s, const void *arg)
{
    const struct DTFN(perm) *p = arg;
    for (int i = 0; i < p->n; i++)
        s[p->p[i]] = o[i];
    return true;
}

/* narrow and slice: source index = start + out * step along dim */
struct DTFN(range) { int dim; int64_t start, step; };
static bool DTFN(map_range)(const int64_t *o, int64_t *s, const void *arg)
{
    const struct DTFN(range) *r = arg;
    memcpy(s, o, TENDO_MAX_DIMS * sizeof *s);
    s[r->dim] = r->start + o[r->dim] * r->step;
    return true;
}

struct DTFN(bcast) { int lead, ndim; const int64_t *shape; };
static bool DTFN(map_expand)(const int64_t *o, int64_t *s, const void *arg)
{
    const struct DTFN(bcast) *b = arg;
    for (int d = 0; d < b->ndim; d++)
        s[d] = b->shape[d] == 1 ? 0 : o[d + b->lead];
    return true;
}

struct DTFN(flipd) { int dim; int64_t size; };
static bool DTFN(map_flip)(const int64_t *o, int64_t *s, const void *arg)
{
    const struct DTFN(flipd) *f = arg;
    memcpy(s, o, TENDO_MAX_DIMS * sizeof *s);
    s[f->dim] = f->size - 1 - o[f->dim];
    return true;
}

/* Python's range(start, stop, step) over a dim of `size`, counted by
 * enumeration rather than by formula. */
static void DTFN(py_slice)(int64_t size, int64_t start, int64_t stop, int64_t step, int64_t *first,
                           int64_t *len)
{
    int64_t b = start < 0 ? start + size : start, e = stop < 0 ? stop + size : stop;
    if (b < 0) b = 0;
    if (b > size) b = size;
    if (e < 0) e = 0;
    if (e > size) e = size;
    *first = b;
    *len = 0;
    for (int64_t i = b; i < e; i += step)
        (*len)++;
}

static void DTFN(random_shape)(uint64_t *seed, int *ndim, int64_t *shape)
{
    *ndim = 1 + (int)(t_rand_u64(seed) % 4);
    for (int d = 0; d < *ndim; d++)
        shape[d] = 1 + (int64_t)(t_rand_u64(seed) % 6);
}

static void DTFN(test_random_views)(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int bad[8] = {0}, shared[8] = {0}, count[8] = {0};
    enum { TRANSPOSE, PERMUTE, NARROW, SLICE, EXPAND, FLIP, SQUEEZE, UNSQUEEZE };
    static const char *names[] = {"transpose", "permute", "narrow", "slice", "expand", "flip", "squeeze", "unsqueeze"};

    for (int iter = 0; iter < 400; iter++) {
        int nd, op = iter % 8;
        int64_t shape[TENDO_MAX_DIMS];
        double *ref;
        TT *src, *v = NULL;
        bool good = false;

        DTFN(random_shape)(&seed, &nd, shape);
        src = DTFN(source)(nd, shape, &ref);
        switch (op) {
        case TRANSPOSE: {
            struct DTFN(swap) w = {(int)(t_rand_u64(&seed) % nd), (int)(t_rand_u64(&seed) % nd)};
            v = tensor_transpose(src, w.d0, w.d1 - nd); /* a negative dim too */
            good = v && DTFN(check_view)(v, shape, nd, ref, DTFN(map_transpose), &w);
            break;
        }
        case PERMUTE: {
            int p[TENDO_MAX_DIMS];
            struct DTFN(perm) pm = {nd, p};
            for (int i = 0; i < nd; i++)
                p[i] = i;
            for (int i = nd - 1; i > 0; i--) {
                int j = (int)(t_rand_u64(&seed) % (uint64_t)(i + 1)), t = p[i];
                p[i] = p[j], p[j] = t;
            }
            v = tensor_permute(src, p);
            good = v && DTFN(check_view)(v, shape, nd, ref, DTFN(map_permute), &pm);
            break;
        }
        case NARROW: {
            int dim = (int)(t_rand_u64(&seed) % nd);
            int64_t start = (int64_t)(t_rand_u64(&seed) % (uint64_t)(shape[dim] + 1));
            int64_t len = (int64_t)(t_rand_u64(&seed) % (uint64_t)(shape[dim] - start + 1));
            struct DTFN(range) r = {dim, start, 1};
            v = tensor_narrow(src, dim, start, len);
            good = v && tensor_shape(v)[dim] == len && DTFN(check_view)(v, shape, nd, ref, DTFN(map_range), &r);
            break;
        }
        case SLICE: {
            int dim = (int)(t_rand_u64(&seed) % nd);
            int64_t start = (int64_t)(t_rand_u64(&seed) % 15) - 7, stop = (int64_t)(t_rand_u64(&seed) % 15) - 7;
            int64_t step = 1 + (int64_t)(t_rand_u64(&seed) % 3), first, len;
            struct DTFN(range) r;
            DTFN(py_slice)(shape[dim], start, stop, step, &first, &len);
            r = (struct DTFN(range)){dim, first, step};
            v = tensor_slice(src, dim, start, stop, step);
            good = v && tensor_shape(v)[dim] == len && DTFN(check_view)(v, shape, nd, ref, DTFN(map_range), &r);
            break;
        }
        case EXPAND: {
            int64_t to[TENDO_MAX_DIMS];
            int lead = (int)(t_rand_u64(&seed) % 3);
            struct DTFN(bcast) b = {lead, nd, shape};
            TT *base;
            double *r2;
            /* make some dims 1 first, so there is something to expand */
            for (int d = 0; d < nd; d++)
                if (t_rand_u64(&seed) & 1)
                    shape[d] = 1;
            base = DTFN(source)(nd, shape, &r2);
            for (int d = 0; d < lead; d++)
                to[d] = 1 + (int64_t)(t_rand_u64(&seed) % 3);
            for (int d = 0; d < nd; d++)
                to[lead + d] = shape[d] == 1 ? (int64_t)(t_rand_u64(&seed) % 4) : (t_rand_u64(&seed) & 1 ? -1 : shape[d]);
            if (lead + nd <= TENDO_MAX_DIMS) {
                v = tensor_expand(base, lead + nd, to);
                good = v && DTFN(check_view)(v, shape, nd, r2, DTFN(map_expand), &b);
                if (v)
                    shared[op] += tensor_shares_storage(v, base);
            }
            tensor_free(base);
            free(r2);
            count[op]++;
            if (!good)
                bad[op]++;
            tensor_free(v);
            tensor_free(src);
            free(ref);
            continue;
        }
        case FLIP: {
            int dim = (int)(t_rand_u64(&seed) % nd);
            struct DTFN(flipd) f = {dim, shape[dim]};
            v = tensor_flip(src, dim);
            good = v && DTFN(check_view)(v, shape, nd, ref, DTFN(map_flip), &f);
            break;
        }
        case SQUEEZE: {
            int dim = (int)(t_rand_u64(&seed) % nd);
            v = tensor_squeeze(src, dim);
            good = v && tensor_ndim(v) == nd - (shape[dim] == 1) && DTFN(check_view)(v, shape, nd, ref, NULL, NULL);
            break;
        }
        case UNSQUEEZE: {
            int dim = (int)(t_rand_u64(&seed) % (uint64_t)(nd + 1));
            v = tensor_unsqueeze(src, dim);
            good = v && tensor_ndim(v) == nd + 1 && tensor_shape(v)[dim] == 1 &&
                   DTFN(check_view)(v, shape, nd, ref, NULL, NULL);
            break;
        }
        }
        count[op]++;
        if (!good)
            bad[op]++;
        if (v)
            shared[op] += tensor_shares_storage(v, src);
        tensor_free(v);
        tensor_free(src);
        free(ref);
    }
    for (int op = 0; op < 8; op++)
        ok(bad[op] == 0 && shared[op] == count[op], DT_NAME " %s: %d random views, %d wrong, %d share storage",
           names[op], count[op], bad[op], shared[op]);
}

static void DTFN(test_reshapes)(void)
{
    double *ref;
    TT *src = DTFN(source)(TENDO_SHAPE(2, 3, 4), &ref);
    TT *r = tensor_reshape(src, TENDO_SHAPE(4, -1));
    TT *v = tensor_view(src, TENDO_SHAPE(6, 4));
    TT *f = tensor_flatten(src, 0, -1), *f2 = tensor_flatten(src, 1, 2);
    TT *t = tensor_transpose(src, 0, 2);
    TT *tr = tensor_reshape(t, TENDO_SHAPE(24));
    TT *tv = tensor_view(t, TENDO_SHAPE(4, 3, 2, 1));
    TT *s = tensor_reshape(src, 0, NULL);
    double tref[24];

    ok(r && tensor_shape(r)[1] == 6 && tensor_shares_storage(r, src) && DTFN(check_view)(r, NULL, 0, ref, NULL, NULL),
       DT_NAME " reshape [2,3,4] -> [4,-1] is a view in flat order");
    ok(v && tensor_shares_storage(v, src) && DTFN(check_view)(v, NULL, 0, ref, NULL, NULL),
       DT_NAME " view [2,3,4] -> [6,4]");
    ok(f && tensor_ndim(f) == 1 && tensor_numel(f) == 24 && tensor_shares_storage(f, src),
       DT_NAME " flatten(0,-1) is a 1-d view");
    ok(f2 && tensor_ndim(f2) == 2 && tensor_shape(f2)[1] == 12, DT_NAME " flatten(1,2) -> [2,12]");
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                tref[(i * 3 + j) * 2 + k] = ref[(k * 3 + j) * 4 + i];
    ok(tr && !tensor_shares_storage(tr, src) && DTFN(check_view)(tr, NULL, 0, tref, NULL, NULL),
       DT_NAME " reshape of a transpose to 1-d copies, in the transpose's order");
    ok(tv && tensor_shares_storage(tv, src) && DTFN(check_view)(tv, NULL, 0, tref, NULL, NULL),
       DT_NAME " view of a transpose that only adds a size-1 dim is a view");
    ok(s == NULL, DT_NAME " reshape of 24 elements to a scalar fails");
    tensor_free(s);
    s = TFN(full)(TENDO_SHAPE(1, 1), 3, tendo_cpu());
    tensor_free(r);
    r = tensor_reshape(s, 0, NULL);
    ok(r && tensor_ndim(r) == 0 && tensor_numel(r) == 1, DT_NAME " [1,1] reshapes to a scalar");
    tensor_free(v);
    v = r ? tensor_unsqueeze(r, 0) : NULL;
    ok(v && tensor_ndim(v) == 1 && E_TO_DOUBLE(tensor_data(v)[0]) == 3, DT_NAME " a scalar unsqueezes to [1]");
    tensor_free(src);
    tensor_free(r);
    tensor_free(v);
    tensor_free(f);
    tensor_free(f2);
    tensor_free(t);
    tensor_free(tr);
    tensor_free(tv);
    tensor_free(s);
    free(ref);
}

/* Views of views: every op composed, then made contiguous. */
static void DTFN(test_composed)(void)
{
    double *ref;
    TT *src = DTFN(source)(TENDO_SHAPE(4, 5, 6), &ref);
    TT *a = tensor_transpose(src, 0, 2);          /* [6,5,4] */
    TT *b = tensor_slice(a, 0, 1, 6, 2);          /* rows 1,3,5 -> [3,5,4] */
    TT *c = tensor_flip(b, 1);                    /* [3,5,4] reversed along 1 */
    TT *d = tensor_narrow(c, 2, 1, 2);            /* [3,5,2] */
    TT *e = tensor_unsqueeze(d, 1);               /* [3,1,5,2] */
    TT *f = tensor_expand(e, TENDO_SHAPE(3, 2, 5, 2));
    TT *g = tensor_contiguous(f);
    double *got = DTFN(values)(g);
    int bad = 0;

    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 5; j++)
                for (int k = 0; k < 2; k++) {
                    /* g[i,r,j,k] = src[k+1, 4-j, 2i+1] */
                    double want = ref[((k + 1) * 5 + (4 - j)) * 6 + (2 * i + 1)];
                    bad += got[((i * 2 + r) * 5 + j) * 2 + k] != want;
                }
    ok(g && tensor_is_contiguous(g) && bad == 0, DT_NAME " transpose+slice+flip+narrow+unsqueeze+expand: %d wrong", bad);
    free(got);
    free(ref);
    tensor_free(src); tensor_free(a); tensor_free(b); tensor_free(c);
    tensor_free(d); tensor_free(e); tensor_free(f); tensor_free(g);
}

static void DTFN(test_views)(void)
{
    DTFN(test_random_views)();
    DTFN(test_reshapes)();
    DTFN(test_composed)();
}
