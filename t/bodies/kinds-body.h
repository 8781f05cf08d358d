/* t/bodies/kinds-body.h - per dtype: the ops of its kind against int64_t (double
 * for floats) references.  Included by t/each-dtype.h from t/drivers/t-kinds.c. */

#if defined(DT_KIND_INT)
#define DT_SGN true
#else
#define DT_SGN false
#endif

/* A random element: small values (ties, equal operands), full-width random
 * bits, the extremes; floats: eighths, NaN, +-inf, +-0. */
static E DTFN(rand_elem)(uint64_t *rng)
{
    uint64_t r = t_rand_u64(rng);
#if defined(DT_KIND_FLOAT)
    switch (r % 16) {
    case 0: return E_FROM_DOUBLE(NAN);
    case 1: return E_FROM_DOUBLE(r & 16 ? INFINITY : -INFINITY);
    case 2: return E_FROM_DOUBLE(r & 16 ? 0.0 : -0.0);
    default: return E_FROM_DOUBLE(floor(t_rand_range(rng, -4, 4) * 8) / 8);
    }
#elif defined(DT_KIND_BOOL)
    return (r >> 7) & 1;
#else
    int64_t v;
    switch (r % 6) {
    case 0: v = (int64_t)t_rand_u64(rng); break;
    case 1: v = (int64_t)(t_rand_u64(rng) >> (t_rand_u64(rng) % 64)); if (r & 64) v = (int64_t)(0 - (uint64_t)v); break;
    case 2: { static const int64_t ex[] = {0, -1, 1, INT64_MIN, INT64_MAX};
              v = ex[(r >> 8) % 5];
              if (v == INT64_MIN) v = (int64_t)(~(t_mask(DT_BITS) >> 1)); /* the width's min */
              if (v == INT64_MAX) v = (int64_t)(t_mask(DT_BITS) >> (DT_SGN ? 1 : 0)); } break;
    default: v = (int64_t)((r >> 8) % 17) - (DT_SGN ? 8 : 0); break;
    }
    return (E)t_wrap((uint64_t)v, DT_BITS, DT_SGN);
#endif
}

/* A view of the given shape in layout lay, holding random elements. */
static TT *DTFN(kmake)(int lay, int nd, const int64_t *shape, uint64_t *rng)
{
    DTFN(lbase) b;
    E *raw = DTFN(layout_begin)(&b, lay, nd, shape);

    for (int64_t i = 0; i < b.n; i++)
        raw[i] = DTFN(rand_elem)(rng);
    return DTFN(layout_end)(&b, tendo_cpu());
}

/* Elements as int64_t (integers, bool) and double (all). */
static void DTFN(kvals)(const TT *t, int64_t **iv, double **dv)
{
    int64_t n = tensor_numel(t);
    E *raw = malloc((size_t)(n ? n : 1) * sizeof *raw);
    *iv = malloc((size_t)(n ? n : 1) * sizeof **iv);
    *dv = malloc((size_t)(n ? n : 1) * sizeof **dv);
    if (tensor_copy_to(t, raw, n) != TENDO_OK)
        bail("copy_to failed");
    for (int64_t i = 0; i < n; i++) {
#if defined(DT_KIND_FLOAT)
        (*iv)[i] = 0;
#else
        (*iv)[i] = (int64_t)raw[i];
#endif
        (*dv)[i] = E_TO_DOUBLE(raw[i]);
    }
    free(raw);
}

/* ---- binary ops -------------------------------------------------------- */

#if !defined(DT_KIND_FLOAT)
static const struct {
    int op;
    TT *(*f)(const TT *, const TT *);
    tendo_status (*fo)(TT *, const TT *, const TT *);
    TT *(*fs)(const TT *, double);
} DTFN(same_ops)[] = {
#if !defined(DT_KIND_BOOL)
    {B_ADD, TFN(add), TFN(add_out), TFN(add_scalar)},
    {B_SUB, TFN(sub), TFN(sub_out), TFN(sub_scalar)},
    {B_MUL, TFN(mul), TFN(mul_out), TFN(mul_scalar)},
    {B_MAX, TFN(maximum), TFN(maximum_out), TFN(maximum_scalar)},
    {B_MIN, TFN(minimum), TFN(minimum_out), TFN(minimum_scalar)},
    {B_FDIV, TFN(floor_divide), TFN(floor_divide_out), TFN(floor_divide_scalar)},
    {B_REM, TFN(remainder), TFN(remainder_out), TFN(remainder_scalar)},
#endif
    {B_AND, TFN(bitwise_and), TFN(bitwise_and_out), NULL},
    {B_OR, TFN(bitwise_or), TFN(bitwise_or_out), NULL},
    {B_XOR, TFN(bitwise_xor), TFN(bitwise_xor_out), NULL},
};
#endif
static const struct {
    int op;
    tensor_bool *(*f)(const TT *, const TT *);
    tensor_bool *(*fs)(const TT *, double);
} DTFN(bool_ops)[] = {
    {B_EQ, TFN(eq), TFN(eq_scalar)}, {B_NE, TFN(ne), TFN(ne_scalar)}, {B_LT, TFN(lt), TFN(lt_scalar)},
    {B_LE, TFN(le), TFN(le_scalar)}, {B_GT, TFN(gt), TFN(gt_scalar)}, {B_GE, TFN(ge), TFN(ge_scalar)},
    {B_LAND, TFN(logical_and), NULL}, {B_LOR, TFN(logical_or), NULL}, {B_LXOR, TFN(logical_xor), NULL},
};

/* Checks a same-dtype result r (freed) of shape (no, os) against want[]. */
static inline void DTFN(check_same)(t_check *c, const char *what, TT *r, int no, const int64_t *os, const int64_t *want)
{
    int64_t *iv;
    double *dv;
    if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), no, os)) {
        t_fail(c, "%s: failed or wrong shape: %s", what, tendo_error_message(tendo_last_error()));
        tensor_free(r);
        return;
    }
    DTFN(kvals)(r, &iv, &dv);
    for (int64_t i = 0; i < t_numel(no, os); i++)
        t_ielem(c, what, i, iv[i], want[i]);
    free(iv);
    free(dv);
    tensor_free(r);
}

static void DTFN(check_bool)(t_check *c, const char *what, tensor_bool *r, int no, const int64_t *os, const int64_t *want)
{
    if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), no, os)) {
        t_fail(c, "%s: failed or wrong shape: %s", what, tendo_error_message(tendo_last_error()));
        tensor_free(r);
        return;
    }
    bool *v = t_bools(r);
    for (int64_t i = 0; i < t_numel(no, os); i++)
        t_ielem(c, what, i, v[i], want[i]);
    free(v);
    tensor_free(r);
}

static void DTFN(test_binary)(uint64_t *rng)
{
    static const double cmp_scalars[] = {0, 1.5, -2.5, NAN, 1e30, -1e30, 3};
#if defined(DT_KIND_INT)
    static const double arith_scalars[] = {3, -2, 0, -1};
#else
    static const double arith_scalars[] = {3, 0, 1};
#endif
    (void)arith_scalars;
    int nops = (int)(sizeof DTFN(bool_ops) / sizeof DTFN(bool_ops)[0]);
#if !defined(DT_KIND_FLOAT)
    int nsame = (int)(sizeof DTFN(same_ops) / sizeof DTFN(same_ops)[0]);
#else
    int nsame = 0;
#endif
    for (int k = 0; k < nsame + nops; k++) {
        int op = k < nsame ? -1 : DTFN(bool_ops)[k - nsame].op;
        t_check c = {0};
#if !defined(DT_KIND_FLOAT)
        if (k < nsame)
            op = DTFN(same_ops)[k].op;
#endif
        for (int p = 0; p < T_NPATS; p++)
            for (int lay = 0; lay < L_COUNT; lay++) {
                const struct t_pat *P = &t_pats[p];
                int64_t os[TENDO_MAX_DIMS], *ai, *bi, *want;
                double *ad, *bd;
                int no = 0;
                char what[160];
                if (!t_bshape(P->na, P->a, P->nb, P->b, &no, os))
                    bail("bad pattern");
                TT *a = DTFN(kmake)(lay, P->na, P->a, rng), *b = DTFN(kmake)((lay + p) % L_COUNT, P->nb, P->b, rng);
                int64_t n = t_numel(no, os);
                DTFN(kvals)(a, &ai, &ad);
                DTFN(kvals)(b, &bi, &bd);
                want = malloc((size_t)(n ? n : 1) * sizeof *want);
                for (int64_t i = 0; i < n; i++) {
                    int64_t ia = t_bcast(no, os, P->na, P->a, i), ib = t_bcast(no, os, P->nb, P->b, i);
#if defined(DT_KIND_FLOAT)
                    want[i] = t_ref_cmp(op, ad[ia], bd[ib]);
#else
                    want[i] = t_ref_bin(op, ai[ia], bi[ib], DT_BITS, DT_SGN);
#endif
                }
                snprintf(what, sizeof what, "%s %s pattern %d", t_bin_name[op], t_layout[lay], p);
                if (k >= nsame)
                    DTFN(check_bool)(&c, what, DTFN(bool_ops)[k - nsame].f(a, b), no, os, want);
#if !defined(DT_KIND_FLOAT)
                else {
                    DTFN(check_same)(&c, what, DTFN(same_ops)[k].f(a, b), no, os, want);
                    /* _out into a fresh tensor and into a transposed view */
                    TT *out = TFN(full)(no, os, 1, tendo_cpu());
                    if (DTFN(same_ops)[k].fo(out, a, b) != TENDO_OK)
                        t_fail(&c, "%s _out failed: %s", what, tendo_error_message(tendo_last_error()));
                    DTFN(check_same)(&c, what, out, no, os, want);
                }
#endif
                /* _scalar, on a alone */
                if (p == 0 || p == 6) {
                    int64_t na = tensor_numel(a);
                    int64_t *sw = malloc((size_t)(na ? na : 1) * sizeof *sw);
                    if (k >= nsame && DTFN(bool_ops)[k - nsame].fs)
                        for (size_t s = 0; s < sizeof cmp_scalars / sizeof *cmp_scalars; s++) {
                            for (int64_t i = 0; i < na; i++)
                                sw[i] = t_ref_cmp(op, ad[i], cmp_scalars[s]);
                            snprintf(what, sizeof what, "%s_scalar(%g) %s", t_bin_name[op], cmp_scalars[s], t_layout[lay]);
                            DTFN(check_bool)(&c, what, DTFN(bool_ops)[k - nsame].fs(a, cmp_scalars[s]), P->na, P->a, sw);
                        }
#if !defined(DT_KIND_FLOAT)
                    if (k < nsame && DTFN(same_ops)[k].fs)
                        for (size_t s = 0; s < sizeof arith_scalars / sizeof *arith_scalars; s++) {
                            for (int64_t i = 0; i < na; i++)
                                sw[i] = t_ref_bin(op, ai[i], (int64_t)arith_scalars[s], DT_BITS, DT_SGN);
                            snprintf(what, sizeof what, "%s_scalar(%g) %s", t_bin_name[op], arith_scalars[s], t_layout[lay]);
                            DTFN(check_same)(&c, what, DTFN(same_ops)[k].fs(a, arith_scalars[s]), P->na, P->a, sw);
                        }
#endif
                    free(sw);
                }
                free(ai); free(bi); free(ad); free(bd); free(want);
                tensor_free(a);
                tensor_free(b);
            }
        t_done(&c, DT_NAME " %s (%s) over layouts and broadcasts", t_bin_name[op],
               k < nsame ? "+ _out, _scalar" : "bool result, + _scalar");
    }
}

/* ---- unary ops ----------------------------------------------------------- */

static const char *const DTFN(un_name)[] = {"neg", "abs", "sign", "relu", "bitwise_not", "clamp", "logical_not",
                                            "isnan", "isinf", "isfinite"};

#if defined(DT_KIND_INT)
#define DT_CLO (-3.0)
#define DT_CHI 5.0
#else
#define DT_CLO 2.0
#define DT_CHI 100.0
#endif

#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
static TT *DTFN(clamp_fixed)(const TT *a) { return TFN(clamp)(a, DT_CLO, DT_CHI); }
static tendo_status DTFN(clamp_fixed_out)(TT *o, const TT *a) { return TFN(clamp_out)(o, a, DT_CLO, DT_CHI); }
#endif
#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
static const struct {
    int op;
    TT *(*f)(const TT *);
    tendo_status (*fo)(TT *, const TT *);
} DTFN(un_same)[] = {
#if defined(DT_KIND_INT)
    {U_NEG, TFN(neg), TFN(neg_out)}, {U_SIGN, TFN(sign), TFN(sign_out)}, {U_RELU, TFN(relu), TFN(relu_out)},
#endif
    {U_ABS, TFN(abs), TFN(abs_out)}, {U_NOT, TFN(bitwise_not), TFN(bitwise_not_out)},
    {U_CLAMP, DTFN(clamp_fixed), DTFN(clamp_fixed_out)},
};
#elif defined(DT_KIND_BOOL)
static const struct {
    int op;
    TT *(*f)(const TT *);
    tendo_status (*fo)(TT *, const TT *);
} DTFN(un_same)[] = {{U_NOT, TFN(bitwise_not), TFN(bitwise_not_out)}};
#endif

static int64_t DTFN(ref_un)(int op, int64_t a, double d)
{
    (void)d;
    switch (op) {
    case U_NEG: return t_wrap(0 - (uint64_t)a, DT_BITS, DT_SGN);
    case U_ABS: return DT_SGN && a < 0 ? t_wrap(0 - (uint64_t)a, DT_BITS, DT_SGN) : a;
    case U_SIGN: return (a > 0) - (a < 0);
    case U_RELU: return a > 0 ? a : 0;
#if defined(DT_KIND_BOOL)
    case U_NOT: return !a;
#else
    case U_NOT: return t_wrap(~(uint64_t)a, DT_BITS, DT_SGN);
#endif
    case U_CLAMP: return d < DT_CLO ? (int64_t)DT_CLO : d > DT_CHI ? (int64_t)DT_CHI : a;
#if defined(DT_KIND_FLOAT)
    case U_LNOT: return d == 0;
    case U_ISNAN: return isnan(d) != 0;
    case U_ISINF: return isinf(d) != 0; /* glibc: -1 for -inf */
    case U_ISFINITE: return isfinite(d) != 0;
#else
    case U_LNOT: return a == 0;
#endif
    }
    return 0;
}

static void DTFN(test_unary)(uint64_t *rng)
{
    static const struct {
        int op;
        tensor_bool *(*f)(const TT *);
    } bops[] = {
        {U_LNOT, TFN(logical_not)},
#if defined(DT_KIND_FLOAT)
        {U_ISNAN, TFN(isnan)}, {U_ISINF, TFN(isinf)}, {U_ISFINITE, TFN(isfinite)},
#endif
    };
#if defined(DT_KIND_FLOAT)
    int nsame = 0;
#else
    int nsame = (int)(sizeof DTFN(un_same) / sizeof DTFN(un_same)[0]);
#endif
    int nb = (int)(sizeof bops / sizeof *bops);
    for (int k = 0; k < nsame + nb; k++) {
        t_check c = {0};
        int op = k < nsame ? 0 : bops[k - nsame].op;
#if !defined(DT_KIND_FLOAT)
        if (k < nsame)
            op = DTFN(un_same)[k].op;
#endif
        for (int p = 0; p < T_NPATS; p++)
            for (int lay = 0; lay < L_COUNT; lay++) {
                const struct t_pat *P = &t_pats[p];
                TT *a = DTFN(kmake)(lay, P->na, P->a, rng);
                int64_t *ai, n = tensor_numel(a), *want = malloc((size_t)(n ? n : 1) * sizeof *want);
                double *ad;
                char what[128];
                DTFN(kvals)(a, &ai, &ad);
                for (int64_t i = 0; i < n; i++)
                    want[i] = DTFN(ref_un)(op, ai[i], ad[i]);
                snprintf(what, sizeof what, "%s %s pattern %d", DTFN(un_name)[op], t_layout[lay], p);
                if (k >= nsame)
                    DTFN(check_bool)(&c, what, bops[k - nsame].f(a), P->na, P->a, want);
#if !defined(DT_KIND_FLOAT)
                else {
                    DTFN(check_same)(&c, what, DTFN(un_same)[k].f(a), P->na, P->a, want);
                    TT *out = TFN(full)(P->na, P->a, 1, tendo_cpu());
                    if (DTFN(un_same)[k].fo(out, a) != TENDO_OK)
                        t_fail(&c, "%s _out failed", what);
                    DTFN(check_same)(&c, what, out, P->na, P->a, want);
                }
#endif
                free(ai); free(ad); free(want);
                tensor_free(a);
            }
        t_done(&c, DT_NAME " %s (+ _out) over layouts", DTFN(un_name)[op]);
    }
}

/* ---- where, masked_fill ------------------------------------------------------ */

static void DTFN(test_select)(uint64_t *rng)
{
    t_check cw = {0}, cm = {0};
#if defined(DT_KIND_FLOAT)
    const double fill = 2.5;
#elif defined(DT_KIND_INT)
    const double fill = -5;
#else
    const double fill = 1;
#endif
    for (int p = 0; p < T_NPATS; p++)
        for (int lay = 0; lay < L_COUNT; lay++) {
            const struct t_pat *P = &t_pats[p];
            int64_t os[TENDO_MAX_DIMS] = {0}, *ai, *bi, n;
            double *ad, *bd;
            int no = 0;
            char what[96];
            /* cond takes b's shape, a a's, b the row [last dim of the output] */
            t_bshape(P->na, P->a, P->nb, P->b, &no, os);
            int64_t rowshape[1] = {no ? os[no - 1] : 1};
            TT *a = DTFN(kmake)(lay, P->na, P->a, rng), *b = DTFN(kmake)((lay + 1) % L_COUNT, 1, rowshape, rng);
            tensor_bool *cond = t_rand_bool(P->nb, P->b, rng);
            bool *cv = t_bools(cond);
            n = t_numel(no, os);
            DTFN(kvals)(a, &ai, &ad);
            DTFN(kvals)(b, &bi, &bd);
            {
                TT *r = tensor_where(cond, a, b); /* the generic front */
                int64_t *ri;
                double *rd;
                snprintf(what, sizeof what, "where %s pattern %d", t_layout[lay], p);
                if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), no, os))
                    t_fail(&cw, "%s: failed or wrong shape", what);
                else {
                    DTFN(kvals)(r, &ri, &rd);
                    for (int64_t i = 0; i < n; i++) {
                        int64_t ia = t_bcast(no, os, P->na, P->a, i), ib = t_bcast(no, os, 1, rowshape, i);
                        bool cc = cv[t_bcast(no, os, P->nb, P->b, i)];
#if defined(DT_KIND_FLOAT)
                        t_elem(&cw, what, i, rd[i], cc ? ad[ia] : bd[ib], 0);
#else
                        t_ielem(&cw, what, i, ri[i], cc ? ai[ia] : bi[ib]);
#endif
                    }
                    free(ri); free(rd);
                }
                tensor_free(r);
            }
            /* masked_fill: the mask broadcasts to a's shape */
            if (t_same_shape(no, os, P->na, P->a)) {
                TT *r = tensor_masked_fill(a, cond, fill);
                int64_t *ri;
                double *rd;
                snprintf(what, sizeof what, "masked_fill %s pattern %d", t_layout[lay], p);
                if (!r || !t_same_shape(tensor_ndim(r), tensor_shape(r), P->na, P->a))
                    t_fail(&cm, "%s: failed or wrong shape", what);
                else {
                    DTFN(kvals)(r, &ri, &rd);
                    for (int64_t i = 0; i < n; i++) {
                        bool cc = cv[t_bcast(no, os, P->nb, P->b, i)];
#if defined(DT_KIND_FLOAT)
                        t_elem(&cm, what, i, rd[i], cc ? fill : ad[i], 0);
#else
                        t_ielem(&cm, what, i, ri[i], cc ? (int64_t)fill : ai[i]);
#endif
                    }
                    free(ri); free(rd);
                }
                tensor_free(r);
            }
            free(ai); free(bi); free(ad); free(bd); free(cv);
            tensor_free(a); tensor_free(b); tensor_free(cond);
        }
    t_done(&cw, DT_NAME " where (cond, a, b broadcast together) over layouts");
    t_done(&cm, DT_NAME " masked_fill over layouts");
}

/* ---- reductions ------------------------------------------------------------ */

static const char *const DTFN(red_name)[] = {"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"};

/* Whether x beats the best so far (argmax: larger, or NaN over non-NaN;
 * argmin: smaller, or NaN) -- the first index stays on ties. */
static bool DTFN(beats)(bool mx, int64_t xi, double xd, int64_t bi, double bd)
{
#if defined(DT_KIND_FLOAT)
    (void)xi; (void)bi;
    if (isnan(bd))
        return false;
    if (isnan(xd))
        return true;
    return mx ? xd > bd : xd < bd;
#else
    (void)xd; (void)bd;
    return mx ? t_less(bi, xi, DT_SGN) : t_less(xi, bi, DT_SGN);
#endif
}

static void DTFN(test_reduce)(uint64_t *rng)
{
    for (int op = 0; op < R_COUNT; op++) {
        t_check c = {0};
#if defined(DT_KIND_FLOAT)
        if (op != R_ARGMAX && op != R_ARGMIN && op != R_ANY && op != R_ALL)
            continue;
#elif defined(DT_KIND_BOOL)
        if (op == R_MAX || op == R_MIN || op == R_ARGMAX || op == R_ARGMIN)
            continue;
#endif
        for (int p = 0; p < T_NPATS; p++)
            for (int lay = 0; lay < L_COUNT; lay++)
                for (int dim = 0; dim < t_pats[p].na; dim++)
                    for (int keep = 0; keep < 2; keep++) {
                        const struct t_pat *P = &t_pats[p];
                        TT *a = DTFN(kmake)(lay, P->na, P->a, rng);
                        int64_t *ai, outer = 1, len = P->a[dim], inner = 1, os[3];
                        double *ad;
                        int no = 0;
                        char what[128];
                        tensor_i64 *ri = NULL;
                        tensor_bool *rb = NULL;
                        TT *rt = NULL;
                        void *r = NULL;
                        int rnd = -1;
                        const int64_t *rsh = NULL;
                        int64_t *got = NULL;
                        DTFN(kvals)(a, &ai, &ad);
                        for (int d = 0; d < P->na; d++) {
                            if (d < dim) outer *= P->a[d];
                            if (d > dim) inner *= P->a[d];
                            if (d != dim || keep) os[no++] = d == dim ? 1 : P->a[d];
                        }
                        snprintf(what, sizeof what, "%s dim %d keepdim %d %s pattern %d", DTFN(red_name)[op], dim, keep,
                                 t_layout[lay], p);
                        switch (op) {
#if !defined(DT_KIND_FLOAT)
                        case R_SUM: ri = tensor_sum(a, dim, keep); break; /* tensor_i64 * */
                        case R_PROD: ri = TFN(prod)(a, dim, keep); break;
#endif
#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
                        case R_MAX: rt = tensor_max(a, dim, keep); break;
                        case R_MIN: rt = TFN(min)(a, dim, keep); break;
#endif
#if !defined(DT_KIND_BOOL)
                        case R_ARGMAX: ri = tensor_argmax(a, dim, keep); break;
                        case R_ARGMIN: ri = TFN(argmin)(a, dim, keep); break;
#endif
                        case R_ANY: rb = tensor_any(a, dim, keep); break;
                        case R_ALL: rb = TFN(all)(a, dim, keep); break;
                        }
                        if (ri) { r = ri; rnd = tensor_ndim(ri); rsh = tensor_shape(ri); }
                        if (rb) { r = rb; rnd = tensor_ndim(rb); rsh = tensor_shape(rb); }
                        if (rt) { r = rt; rnd = tensor_ndim(rt); rsh = tensor_shape(rt); }
                        if (!r || !t_same_shape(rnd, rsh, no, os)) {
                            t_fail(&c, "%s: failed or wrong shape: %s", what, tendo_error_message(tendo_last_error()));
                        } else {
                            int64_t m = outer * inner;
                            got = malloc((size_t)(m ? m : 1) * sizeof *got);
                            if (op == R_ANY || op == R_ALL) {
                                bool *b = t_bools(r);
                                for (int64_t i = 0; i < m; i++) got[i] = b[i];
                                free(b);
                            } else if (op == R_MAX || op == R_MIN) {
                                int64_t *iv; double *dv;
                                DTFN(kvals)(r, &iv, &dv);
                                memcpy(got, iv, (size_t)m * sizeof *got);
                                free(iv); free(dv);
                            } else {
                                int64_t *iv = t_i64s(r);
                                memcpy(got, iv, (size_t)m * sizeof *got);
                                free(iv);
                            }
                            for (int64_t o = 0; o < outer; o++)
                                for (int64_t in = 0; in < inner; in++) {
                                    uint64_t acc = op == R_PROD || op == R_ALL ? 1 : 0;
                                    int64_t best = 0, bi = 0;
                                    for (int64_t k = 0; k < len; k++) {
                                        int64_t f = (o * len + k) * inner + in, x = ai[f];
                                        switch (op) {
                                        case R_SUM: acc += (uint64_t)x; break;
                                        case R_PROD: acc *= (uint64_t)x; break;
                                        case R_MAX: if (k == 0 || t_less((int64_t)acc, x, DT_SGN)) acc = (uint64_t)x; break;
                                        case R_MIN: if (k == 0 || t_less(x, (int64_t)acc, DT_SGN)) acc = (uint64_t)x; break;
                                        case R_ANY: acc = acc || (ad[f] != 0); break;
                                        case R_ALL: acc = acc && (ad[f] != 0); break;
                                        default:
                                            if (k == 0 || DTFN(beats)(op == R_ARGMAX, x, ad[f], ai[bi], ad[bi])) {
                                                best = k;
                                                bi = f;
                                            }
                                            acc = (uint64_t)best;
                                        }
                                    }
                                    t_ielem(&c, what, o * inner + in, got[o * inner + in], (int64_t)acc);
                                }
                        }
                        free(got); free(ai); free(ad);
                        tensor_free(ri);
                        tensor_free(rb);
                        tensor_free(rt);
                        tensor_free(a);
                    }
        t_done(&c, DT_NAME " %s over every dim, keepdim, layouts", DTFN(red_name)[op]);
    }
#if !defined(DT_KIND_FLOAT)
    { /* sum_all -> 0-d i64, wrapping */
        t_check c = {0};
        for (int lay = 0; lay < L_COUNT; lay++) {
            TT *a = DTFN(kmake)(lay, 2, t_pats[6].a, rng);
            int64_t *ai;
            double *ad;
            uint64_t acc = 0;
            DTFN(kvals)(a, &ai, &ad);
            for (int64_t i = 0; i < tensor_numel(a); i++)
                acc += (uint64_t)ai[i];
            tensor_i64 *s = tensor_sum_all(a);
            if (!s || tensor_ndim(s) != 0)
                t_fail(&c, "sum_all %s: failed or not 0-d", t_layout[lay]);
            else {
                int64_t *v = t_i64s(s);
                t_ielem(&c, "sum_all", 0, v[0], (int64_t)acc);
                free(v);
            }
            tensor_free(s); tensor_free(a); free(ai); free(ad);
        }
        t_done(&c, DT_NAME " sum_all -> i64 over layouts");
    }
#endif
}

/* ---- edge cases, through the generic front ----------------------------------- */

#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
/* r (freed) must hold want[0..n). */
static void DTFN(expect)(const char *what, TT *r, const int64_t *want, int n)
{
    t_check c = {0};
    DTFN(check_same)(&c, what, r, 1, (int64_t[]){n}, want);
    t_done(&c, DT_NAME " %s", what);
}

static TT *DTFN(from_i64)(const int64_t *v, int n)
{
    E raw[16];
    for (int i = 0; i < n; i++)
        raw[i] = (E)t_wrap((uint64_t)v[i], DT_BITS, DT_SGN);
    return TFN(from_data)(raw, 1, (int64_t[]){n}, tendo_cpu());
}

static void DTFN(test_edges)(void)
{
#if defined(DT_KIND_INT)
    const int64_t MIN = t_wrap(UINT64_C(1) << (DT_BITS - 1), DT_BITS, true), MAX = (int64_t)(t_mask(DT_BITS) >> 1);
    /* Python: MIN // -1 = 2^(bits-1), wrapped to MIN; MIN % -1 = 0; 7 // 2 = 3,
       -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3, and the remainders take the
       divisor's sign: 1, 1, -1, -1; -7 // 3 = -3 r 2, 7 // -3 = -3 r -2,
       -1 // 5 = -1 r 4, 1 // -5 = -1 r -4; a divisor of 0 gives 0. */
    const int64_t a[] = {MIN, 7, -7, 7, -7, -7, 7, -1, 1, 5, -5, 0, MAX, MIN};
    const int64_t b[] = {-1, 2, 2, -2, -2, 3, -3, 5, -5, 0, 0, 0, -1, 1};
    const int64_t fdiv[] = {MIN, 3, -4, -4, 3, -3, -3, -1, -1, 0, 0, 0, -MAX, MIN};
    const int64_t rem[] = {0, 1, 1, -1, -1, 2, -2, 4, -4, 0, 0, 0, 0, 0};
    /* wraparound: MAX + 1 = MIN, MIN + MIN = 0, MAX + 2 = MIN + 1, MIN + -1 = MAX,
       MAX + MAX = -2; MAX * 1, MIN * MIN = 0, MAX * 2 = -2, MIN * -1 = MIN, MAX * MAX = 1 */
    const int64_t a2[] = {MAX, MIN, MAX, MIN, MAX};
    const int64_t b2[] = {1, MIN, 2, -1, MAX};
    const int64_t add[] = {MIN, 0, MIN + 1, MAX, -2};
    const int64_t sub[] = {MAX - 1, 0, MAX - 2, MIN + 1, 0};
    const int64_t mul[] = {MAX, 0, -2, MIN, 1};
#else
    const int64_t MAX = (int64_t)t_mask(DT_BITS); /* all ones: a u64's MAX is -1 as int64_t */
    /* u8: 255 // 1, 0 // 1, 200 // 2, 7 // 0 = 0, 7 // 2, 255 // 255, 255 // 16 */
    const int64_t a[] = {MAX, 0, 200, 7, 7, MAX, MAX};
    const int64_t b[] = {1, 1, 2, 0, 2, MAX, 16};
    const int64_t fdiv[] = {MAX, 0, 100, 0, 3, 1, (int64_t)((uint64_t)MAX / 16)};
    const int64_t rem[] = {0, 0, 0, 0, 1, 0, (int64_t)((uint64_t)MAX % 16)};
    const int64_t a2[] = {MAX, 0, 200, MAX, MAX};
    const int64_t b2[] = {1, 1, 2, MAX, 16};
    const int64_t add[] = {0, 1, 202, MAX - 1, 15};
    const int64_t sub[] = {MAX - 1, MAX, 198, 0, MAX - 16};
    const int64_t mul[] = {MAX, 0, 400 & MAX, 1, (int64_t)((uint64_t)(MAX * 16) & t_mask(DT_BITS))};
#endif
    int n = (int)(sizeof a / sizeof *a), m = (int)(sizeof a2 / sizeof *a2);
    TT *ta = DTFN(from_i64)(a, n), *tb = DTFN(from_i64)(b, n), *ta2 = DTFN(from_i64)(a2, m), *tb2 = DTFN(from_i64)(b2, m);
    TT *out = TFN(zeros)(1, (int64_t[]){n}, tendo_cpu());

    DTFN(expect)("floor_divide edge cases (generic)", tensor_floor_divide(ta, tb), fdiv, n);
    DTFN(expect)("remainder edge cases (generic)", tensor_remainder(ta, tb), rem, n);
    ok(tensor_floor_divide_out(out, ta, tb) == TENDO_OK, DT_NAME " floor_divide_out (generic) succeeds");
    DTFN(expect)("floor_divide_out edge cases", tensor_clone(out), fdiv, n);
    ok(tensor_remainder_out(out, ta, tb) == TENDO_OK, DT_NAME " remainder_out (generic) succeeds");
    DTFN(expect)("remainder_out edge cases", tensor_clone(out), rem, n);
    DTFN(expect)("add wraparound (generic)", tensor_add(ta2, tb2), add, m);
    DTFN(expect)("sub wraparound (generic)", tensor_sub(ta2, tb2), sub, m);
    DTFN(expect)("mul wraparound (generic)", tensor_mul(ta2, tb2), mul, m);
    {
        TT *o2 = TFN(zeros)(1, (int64_t[]){m}, tendo_cpu());
        ok(tensor_add_out(o2, ta2, tb2) == TENDO_OK && tensor_mul_out(o2, o2, tb2) == TENDO_OK,
           DT_NAME " add_out then mul_out in place (generic) succeed");
        int64_t am[8];
        for (int i = 0; i < m; i++)
            am[i] = t_wrap((uint64_t)add[i] * (uint64_t)b2[i], DT_BITS, DT_SGN);
        DTFN(expect)("add_out, mul_out into out == a", o2, am, m);
    }
#if defined(DT_KIND_INT)
    {
        int64_t want[5];
        for (int i = 0; i < m; i++)
            want[i] = t_wrap(0 - (uint64_t)a2[i], DT_BITS, true);
        DTFN(expect)("neg wraparound, -MIN = MIN (generic)", tensor_neg(ta2), want, m);
    }
#endif
    { /* generic comparison and sum dispatch */
        tensor_bool *e = tensor_eq(ta, tb);
        tensor_i64 *s = tensor_sum(ta2, 0, false);
        bool *ev = e ? t_bools(e) : NULL;
        int64_t *sv = s ? t_i64s(s) : NULL, bad = !ev || !sv;
        uint64_t acc = 0;
        for (int i = 0; !bad && i < n; i++)
            bad += ev[i] != (a[i] == b[i]);
        for (int i = 0; i < m; i++)
            acc += (uint64_t)t_wrap((uint64_t)a2[i], DT_BITS, DT_SGN);
        ok(!bad && sv[0] == (int64_t)acc, DT_NAME " tensor_eq -> tensor_bool *, tensor_sum -> tensor_i64 * (generic)");
        free(ev); free(sv);
        tensor_free(e); tensor_free(s);
    }
    tensor_free(ta); tensor_free(tb); tensor_free(ta2); tensor_free(tb2); tensor_free(out);
}
#endif

#if defined(DT_KIND_FLOAT)
/* argmax/argmin with NaN: the NaN wins, the first NaN on ties; ties of
 * equal values keep the first index. */
static void DTFN(test_nan_arg)(void)
{
    E raw[6] = {E_FROM_DOUBLE(1), E_FROM_DOUBLE(3), E_FROM_DOUBLE(NAN), E_FROM_DOUBLE(3), E_FROM_DOUBLE(NAN),
                E_FROM_DOUBLE(-2)};
    E tie[4] = {E_FROM_DOUBLE(2), E_FROM_DOUBLE(-1), E_FROM_DOUBLE(2), E_FROM_DOUBLE(-1)};
    TT *t = TFN(from_data)(raw, 1, (int64_t[]){6}, tendo_cpu()), *u = TFN(from_data)(tie, 1, (int64_t[]){4}, tendo_cpu());
    tensor_i64 *mx = tensor_argmax(t, 0, false), *mn = tensor_argmin(t, 0, false);
    tensor_i64 *tx = tensor_argmax(u, 0, false), *tn = tensor_argmin(u, 0, false);
    int64_t *v1 = t_i64s(mx), *v2 = t_i64s(mn), *v3 = t_i64s(tx), *v4 = t_i64s(tn);
    is_int(2, v1[0], DT_NAME " argmax: the first NaN wins");
    is_int(2, v2[0], DT_NAME " argmin: the first NaN wins");
    is_int(0, v3[0], DT_NAME " argmax: first index on ties");
    is_int(1, v4[0], DT_NAME " argmin: first index on ties");
    free(v1); free(v2); free(v3); free(v4);
    tensor_free(mx); tensor_free(mn); tensor_free(tx); tensor_free(tn); tensor_free(t); tensor_free(u);
}
#endif

#if !defined(DT_KIND_BOOL)
/* argmax/argmin of one row long enough to be cut into segments on the
 * threads (and strided, through the widening path): ties across segments
 * keep the first index, the first NaN wins, and 1, 2 and 3 threads agree. */
static void DTFN(test_long_arg)(void)
{
    enum { N = 3 * (1 << 20) + 12345 };
    const int64_t p1 = N / 3 + 7, p2 = N - 5;
#if defined(DT_KIND_FLOAT)
    const int64_t q1 = 2 * (N / 3) + 11, q2 = N - 2;
    const int passes = 2; /* 0: no NaN; 1: NaNs at q1 and q2 */
#else
    const int passes = 1;
#endif
    E *raw = malloc((size_t)N * 2 * sizeof *raw);
    bool bad = raw == NULL;

    for (int pass = 0; pass < passes && raw; pass++) {
        for (int64_t i = 0; i < 2 * (int64_t)N; i++)
            raw[i] = E_FROM_DOUBLE(1);
        for (int strided = 0; strided < 2; strided++) {
            const int64_t k = strided ? 2 : 1; /* element i of the row is raw[i * k] */
            raw[p1 * k] = raw[p2 * k] = E_FROM_DOUBLE(2);
            raw[(p1 + 1) * k] = raw[(p2 - 1) * k] = E_FROM_DOUBLE(-1);
#if defined(DT_KIND_FLOAT)
            if (pass)
                raw[q1 * k] = raw[q2 * k] = E_FROM_DOUBLE(NAN);
#endif
            TT *all = TFN(from_data)(raw, 1, (int64_t[]){2 * (int64_t)N}, tendo_cpu());
            TT *row = all ? tensor_slice(all, 0, 0, k * N, k) : NULL;
#if defined(DT_KIND_FLOAT)
            int64_t want_max = pass ? q1 : p1, want_min = pass ? q1 : p1 + 1;
#else
            int64_t want_max = p1, want_min = p1 + 1;
#endif
            for (int threads = 1; threads <= 3; threads++) {
                tendo_set_num_threads(threads);
                tensor_i64 *mx = row ? tensor_argmax(row, 0, false) : NULL;
                tensor_i64 *mn = row ? TFN(argmin)(row, 0, false) : NULL;
                int64_t *vx = mx ? t_i64s(mx) : NULL, *vn = mn ? t_i64s(mn) : NULL;
                if (!vx || !vn || vx[0] != want_max || vn[0] != want_min) {
                    diag("%s %s pass %d, %d threads: argmax %lld (want %lld), argmin %lld (want %lld)", DT_NAME,
                         strided ? "strided" : "dense", pass, threads, vx ? (long long)vx[0] : -1LL,
                         (long long)want_max, vn ? (long long)vn[0] : -1LL, (long long)want_min);
                    bad = true;
                }
                free(vx); free(vn); tensor_free(mx); tensor_free(mn);
            }
            tensor_free(row);
            tensor_free(all);
            for (int64_t i = 0; i < 2 * (int64_t)N; i++)
                raw[i] = E_FROM_DOUBLE(1);
        }
    }
    tendo_set_num_threads(0);
    free(raw);
#if defined(DT_KIND_FLOAT)
    ok(!bad, "%s argmax/argmin of a %d-long row, dense and strided, on 1-3 threads: first index on ties, first NaN",
       DT_NAME, (int)N);
#else
    ok(!bad, "%s argmax/argmin of a %d-long row, dense and strided, on 1-3 threads: first index on ties", DT_NAME,
       (int)N);
#endif
}
#endif

static void DTFN(test_kinds)(void)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)DT_CODE;
    DTFN(test_binary)(&rng);
    DTFN(test_unary)(&rng);
    DTFN(test_select)(&rng);
    DTFN(test_reduce)(&rng);
#if defined(DT_KIND_INT) || defined(DT_KIND_UINT)
    DTFN(test_edges)();
#endif
#if defined(DT_KIND_FLOAT)
    DTFN(test_nan_arg)();
#endif
#if !defined(DT_KIND_BOOL)
    DTFN(test_long_arg)();
#endif
}

#undef DT_SGN
#undef DT_CLO
#undef DT_CHI
