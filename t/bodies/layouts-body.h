/* t/bodies/layouts-body.h - the input layouts the compute tests run every op on,
 * per dtype (included by t/each-dtype.h; see t/lib/dt.h and t/lib/check.h):
 * the one place a test builds its transposed, sliced, expanded and flipped
 * views (layout_view), used by every body that runs ops over layouts. */

/* A view of base (which it takes over) with the given shape in one of the
 * layouts; base was made with the shape that layout needs (transposed:
 * first and last dims swapped; sliced: last dim 2n+1 taken with step 2, first
 * 3n+2 with step 3; expanded: size 1 where the shape broadcasts; flipped:
 * the shape itself, read backwards along the first and last dims). */
static inline TT *DTFN(layout_view)(TT *base, int layout, int nd, const int64_t *shape)
{
    TT *v = NULL, *t1;

    switch (layout) {
    case L_CONTIG:
        return base;
    case L_TRANS:
        v = tensor_transpose(base, 0, nd - 1);
        break;
    case L_SLICED:
        t1 = tensor_slice(base, nd - 1, 1, 2 * shape[nd - 1] + 1, 2);
        v = nd >= 2 ? tensor_slice(t1, 0, 2, 3 * shape[0] + 2, 3) : t1;
        if (nd >= 2)
            tensor_free(t1);
        break;
    case L_EXPAND:
        v = tensor_expand(base, nd, shape);
        break;
    case L_FLIP:
        t1 = tensor_flip(base, nd - 1);
        v = nd >= 2 ? tensor_flip(t1, 0) : t1;
        if (nd >= 2)
            tensor_free(t1);
        break;
    }
    tensor_free(base);
    if (!v || !t_same_shape(tensor_ndim(v), tensor_shape(v), nd, shape))
        bail("making a %s view failed: %s", t_layout[layout], tendo_error_message(tendo_last_error()));
    return v;
}

/* The base tensor a layout view is cut from: layout_begin gives a buffer
 * for its n elements (row-major), the caller fills it, and layout_end makes
 * the view of the shape asked for on dev (freeing the buffer).  A layout the
 * shape cannot take falls back to L_CONTIG (see t_layout_base). */
typedef struct {
    int layout, nd;
    int64_t shape[TENDO_MAX_DIMS], bshape[TENDO_MAX_DIMS], n;
    E *raw;
} DTFN(lbase);

static inline E *DTFN(layout_begin)(DTFN(lbase) *b, int layout, int nd, const int64_t *shape)
{
    b->layout = layout;
    b->nd = nd;
    memcpy(b->shape, shape, (size_t)nd * sizeof *shape);
    t_layout_base(&b->layout, nd, shape, b->bshape);
    b->n = t_numel(nd, b->bshape);
    b->raw = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->raw);
    if (!b->raw)
        bail("out of memory");
    return b->raw;
}

static inline TT *DTFN(layout_end)(DTFN(lbase) *b, tendo_device dev)
{
    TT *base = TFN(from_data)(b->raw, b->nd, b->bshape, dev);

    free(b->raw);
    b->raw = NULL;
    if (!base)
        bail("from_data failed: %s", tendo_error_message(tendo_last_error()));
    return DTFN(layout_view)(base, b->layout, b->nd, b->shape);
}

/* A view of the given layout and shape whose base holds values of data
 * set ds (D_EIGHTHS, D_RANDOM, D_NANS) in [lo, hi).  (inline: t-ops makes
 * its operands with its own DTFN(make_operand), and leaves this unused.) */
static inline TT *DTFN(make)(int layout, int nd, const int64_t *shape, uint64_t *rng, int ds, double lo, double hi)
{
    DTFN(lbase) b;
    E *raw = DTFN(layout_begin)(&b, layout, nd, shape);

    for (int64_t i = 0; i < b.n; i++) {
        double x = t_rand_range(rng, lo, hi);
        if (ds == D_EIGHTHS)
            x = floor(x * 8) / 8;
        else if (ds == D_NANS && t_rand_u64(rng) % 29 == 0)
            x = NAN;
        raw[i] = E_FROM_DOUBLE(x);
    }
    return DTFN(layout_end)(&b, tendo_cpu());
}

/* True when op's result r exists and has shape (n, s); a t_fail saying what
 * went wrong otherwise.  (inline: not every test program uses it.) */
static inline bool DTFN(result_ok)(t_check *c, const char *what, const TT *r, int n, const int64_t *s)
{
    char s1[64], s2[64];

    if (!r) {
        t_fail(c, "%s: failed: %s", what, tendo_error_message(tendo_last_error()));
        return false;
    }
    if (!t_same_shape(tensor_ndim(r), tensor_shape(r), n, s)) {
        t_fail(c, "%s: result has shape %s, wanted %s", what, t_shape_str(s1, sizeof s1, tensor_ndim(r), tensor_shape(r)),
               t_shape_str(s2, sizeof s2, n, s));
        return false;
    }
    return true;
}

/* Raw elements of t (row-major), for bitwise comparisons; the caller frees. */
static inline E *DTFN(raw)(const TT *t)
{
    int64_t n = tensor_numel(t);
    E *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    if (!r || tensor_copy_to(t, r, n) != TENDO_OK)
        bail("copy_to failed: %s", tendo_error_message(tendo_last_error()));
    return r;
}

/* Bitwise comparison of one op's results under different thread counts:
 * each result handed to tcheck_add (which frees it) must equal the first. */
typedef struct {
    E *first;
    int64_t n;
    bool same;
} DTFN(tcheck);

static inline void DTFN(tcheck_add)(DTFN(tcheck) *c, TT *r, const char *what)
{
    E *now;

    if (!r)
        bail("%s failed: %s", what, tendo_error_message(tendo_last_error()));
    now = DTFN(raw)(r);
    if (!c->first) {
        c->first = now;
        c->n = tensor_numel(r);
        c->same = true;
    } else {
        c->same = c->same && tensor_numel(r) == c->n && memcmp(c->first, now, (size_t)c->n * sizeof *now) == 0;
        free(now);
    }
    tensor_free(r);
}

/* Whether every result was the same; frees the first. */
static inline bool DTFN(tcheck_done)(DTFN(tcheck) *c)
{
    bool same = c->first && c->same;
    free(c->first);
    c->first = NULL;
    return same;
}
