/* t/bodies/index-body.h - per dtype: indexing and joining against references on
 * the raw elements.  Included by t/each-dtype.h from t/drivers/t-index.c. */

/* A random element: any bits (bool: 0 or 1); small: multiples of 1/8 in
 * [-4, 4) (floats) or small integers, whose sums are exact. */
static E DTFN(ielem)(uint64_t *rng, bool small)
{
    E e;
    uint64_t r = t_rand_u64(rng);
#if defined(DT_KIND_BOOL)
    (void)small;
    e = (r >> 9) & 1;
#elif defined(DT_KIND_FLOAT)
    if (small)
        e = E_FROM_DOUBLE(floor(t_rand_range(rng, -4, 4) * 8) / 8);
    else
        memcpy(&e, &r, sizeof e);
#else
    if (small)
        e = (E)(int)((r >> 11) % 9);
    else
        memcpy(&e, &r, sizeof e);
#endif
    return e;
}

/* A view of shape (nd, shape) in layout lay with random elements. */
static TT *DTFN(imake)(int lay, int nd, const int64_t *shape, uint64_t *rng, bool small)
{
    DTFN(lbase) b;
    E *raw = DTFN(layout_begin)(&b, lay, nd, shape);

    for (int64_t i = 0; i < b.n; i++)
        raw[i] = DTFN(ielem)(rng, small);
    return DTFN(layout_end)(&b, tendo_cpu());
}

/* r has shape (nd, shape) and its elements are want's, bit for bit. */
static bool DTFN(isame)(const TT *r, int nd, const int64_t *shape, const E *want, const char *what)
{
    E *got;
    int64_t n = t_numel(nd, shape);
    bool good;

    if (!r) {
        diag("%s: failed: %s", what, tendo_error_message(tendo_last_error()));
        return false;
    }
    if (!t_same_shape(tensor_ndim(r), tensor_shape(r), nd, shape)) {
        char a[200], b[200];
        diag("%s: shape %s, want %s", what, t_shape_str(a, sizeof a, tensor_ndim(r), tensor_shape(r)),
             t_shape_str(b, sizeof b, nd, shape));
        return false;
    }
    got = DTFN(raw)(r);
    good = n == 0 || !memcmp(got, want, (size_t)n * sizeof *got);
    for (int64_t i = 0; !good && i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof *got)) {
            diag("%s: element %lld differs (got %g, want %g)", what, (long long)i, E_TO_DOUBLE(got[i]),
                 E_TO_DOUBLE(want[i]));
            break;
        }
    free(got);
    return good;
}

/* Random indices in [-size, size) (negative ones count from the end). */
static void DTFN(irand_idx)(uint64_t *rng, int64_t *v, int64_t n, int64_t size)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = (int64_t)(t_rand_u64(rng) % (uint64_t)(2 * size)) - size;
}

static int64_t DTFN(iwrap)(int64_t k, int64_t size) { return k < 0 ? k + size : k; }

static void DTFN(test_index_select)(uint64_t *rng)
{
    static const int64_t shapes[][3] = {{5, 7, 0}, {3, 4, 5}};
    static const int nds[] = {2, 3};

    for (int si = 0; si < 2; si++) {
        int nd = nds[si];
        const int64_t *shape = shapes[si];
        for (int lay = 0; lay < L_COUNT; lay++) {
            bool good = true;
            TT *src = DTFN(imake)(lay, nd, shape, rng, false);
            E *sv = DTFN(raw)(src);

            for (int dim = 0; dim < nd; dim++)
                for (int ilay = 0; ilay < 4; ilay++) {
                    int64_t n = 6, idx[6], oshape[3], c[3];
                    TT *r;
                    E *want;
                    char what[160];

                    DTFN(irand_idx)(rng, idx, n, shape[dim]);
                    memcpy(oshape, shape, sizeof oshape);
                    oshape[dim] = n;
                    want = malloc((size_t)t_numel(nd, oshape) * sizeof *want);
                    for (int64_t f = 0; f < t_numel(nd, oshape); f++) {
                        t_coords(nd, oshape, f, c);
                        c[dim] = DTFN(iwrap)(idx[c[dim]], shape[dim]);
                        want[f] = sv[t_flat(nd, shape, c)];
                    }
                    if (ilay < 3) {
                        tensor_i64 *ix = t_idx64(idx, n, ilay);
                        /* the generic front, with a negative dim spelled once */
                        r = tensor_index_select(src, dim == nd - 1 && ilay == 1 ? -1 : dim, ix);
                        tensor_free(ix);
                    } else {
#ifdef TENDO_HAVE_I32
                        tensor_i32 *ix = t_idx32(idx, n);
                        r = tensor_index_select(src, dim, ix);
                        tensor_free(ix);
#else
                        r = TFN(index_select)(src, dim, NULL), tendo_clear_error();
                        good = good && !r;
                        free(want);
                        continue;
#endif
                    }
                    snprintf(what, sizeof what, "index_select %s dim %d index %s", t_layout[lay], dim,
                             ilay == 3 ? "i32" : ilay == 1 ? "i64 strided" : ilay == 2 ? "i64 flipped" : "i64");
                    good = DTFN(isame)(r, nd, oshape, want, what) && good;
                    tensor_free(r);
                    free(want);
                }
            ok(good, "%s index_select, %d-D %s src, every dim, i64/i32/strided indices", DT_NAME, nd, t_layout[lay]);
            free(sv);
            tensor_free(src);
        }
    }
    /* a 0-d index keeps the dim with size 1; an empty index gives size 0 */
    {
        int64_t shape[2] = {3, 4}, k = -1, z = 0;
        TT *src = DTFN(imake)(L_CONTIG, 2, shape, rng, false);
        E *sv = DTFN(raw)(src);
        tensor_i64 *i0 = tensor_i64_from_data(&k, 0, NULL, tendo_cpu());
        tensor_i64 *ie = tensor_i64_from_data(&k, 1, &z, tendo_cpu());
        TT *r = tensor_index_select(src, 0, i0), *re = tensor_index_select(src, 1, ie);
        int64_t os[2] = {1, 4}, es[2] = {3, 0};
        ok(DTFN(isame)(r, 2, os, sv + 8, "0-d index") && DTFN(isame)(re, 2, es, sv, "empty index"),
           "%s index_select with a 0-d index and with an empty one", DT_NAME);
        tensor_free(r);
        tensor_free(re);
        tensor_free(i0);
        tensor_free(ie);
        free(sv);
        tensor_free(src);
    }
    /* out of range, either side, names the index, the dim and its size */
    {
        int64_t shape[2] = {3, 5}, bad[3] = {0, 5, 1}, neg[2] = {-6, 0};
        TT *src = DTFN(imake)(L_CONTIG, 2, shape, rng, false);
        tensor_i64 *ib = t_idx64(bad, 3, 0), *in = t_idx64(neg, 2, 1);
        ok(!tensor_index_select(src, 1, ib) && t_failed_with(TENDO_ERR_INVALID_ARG, "index 5 is out of range for dim 1 of size 5"),
           "%s index_select: index 5 of size 5 fails", DT_NAME);
        ok(!tensor_index_select(src, -1, in) && t_failed_with(TENDO_ERR_INVALID_ARG, "index -6 is out of range for dim 1 of size 5"),
           "%s index_select: index -6 of size 5 fails", DT_NAME);
#ifdef TENDO_HAVE_I32
        {
            tensor_i32 *i32 = t_idx32(bad, 3);
            ok(!tensor_index_select(src, 0, i32) && t_failed_with(TENDO_ERR_INVALID_ARG, "index 5 is out of range for dim 0 of size 3"),
               "%s index_select_i32: index 5 of size 3 fails", DT_NAME);
            tensor_free(i32);
        }
#endif
        tensor_free(ib);
        tensor_free(in);
        tensor_free(src);
    }
}

static void DTFN(test_gather)(uint64_t *rng)
{
    int64_t shape[2] = {4, 5};

    for (int lay = 0; lay < L_COUNT; lay++) {
        bool good = true;
        TT *src = DTFN(imake)(lay, 2, shape, rng, false);
        E *sv = DTFN(raw)(src);

        for (int dim = -2; dim < 2; dim++) {
            int d = dim < 0 ? dim + 2 : dim;
            /* index larger than src along dim, smaller off it */
            int64_t is[2] = {d == 0 ? 7 : 3, d == 1 ? 8 : 4}, c[2];
            int64_t n = is[0] * is[1], *iv = malloc((size_t)n * sizeof *iv);
            E *want = malloc((size_t)n * sizeof *want);
            char what[120];

            DTFN(irand_idx)(rng, iv, n, shape[d]);
            for (int64_t f = 0; f < n; f++) {
                t_coords(2, is, f, c);
                c[d] = DTFN(iwrap)(iv[f], shape[d]);
                want[f] = sv[t_flat(2, shape, c)];
            }
            for (int trans = 0; trans < 2; trans++) {
                tensor_i64 *ix = t_idx64_nd(iv, 2, is, trans);
                TT *r = tensor_gather(src, dim, ix);
                snprintf(what, sizeof what, "gather %s dim %d%s", t_layout[lay], dim, trans ? " transposed index" : "");
                good = DTFN(isame)(r, 2, is, want, what) && good;
                tensor_free(r);
                tensor_free(ix);
            }
            free(iv);
            free(want);
        }
        ok(good, "%s gather, %s src, dims -2..1, contiguous and transposed indices", DT_NAME, t_layout[lay]);
        free(sv);
        tensor_free(src);
    }
    {
        int64_t is[2] = {1, 2}, bad[2] = {0, 4};
        TT *src = DTFN(imake)(L_CONTIG, 2, shape, rng, false);
        tensor_i64 *ix = tensor_i64_from_data(bad, 2, is, tendo_cpu());
        ok(!tensor_gather(src, 0, ix) && t_failed_with(TENDO_ERR_INVALID_ARG, "index 4 is out of range for dim 0 of size 4"),
           "%s gather: index 4 of size 4 fails", DT_NAME);
        tensor_free(ix);
        tensor_free(src);
    }
}

/* scatter (add false) or scatter_add (add true) into out views. */
static void DTFN(test_scatter)(uint64_t *rng, bool add)
{
    int64_t oshape[2] = {4, 5}, sshape[2] = {5, 6};
    const char *name = add ? "scatter_add_out" : "scatter_out";

    for (int olay = 0; olay < L_COUNT; olay++) {
        bool good = true;
        if (olay == L_EXPAND)
            continue; /* an out with repeated elements is refused (below) */
        for (int dim = 0; dim < 2; dim++) {
            /* index [3,4] for dim 0 (3 <= 4 rows), [4,3] for dim 1 */
            int64_t is[2] = {dim == 0 ? 3 : 4, dim == 0 ? 4 : 3}, c[2];
            int64_t n = is[0] * is[1], iv[12];
            TT *out = DTFN(imake)(olay, 2, oshape, rng, true);
            TT *src = DTFN(imake)((olay + dim) % L_COUNT, 2, sshape, rng, true);
            E *ov = DTFN(raw)(out), *sv = DTFN(raw)(src);
            tendo_status st;
            tensor_i64 *ix;
            char what[120];

            if (add) {
                DTFN(irand_idx)(rng, iv, n, oshape[dim]); /* repeats accumulate */
            } else {
                /* distinct positions along dim for each line (a repeat's winner is unspecified) */
                for (int64_t line = 0; line < (dim == 0 ? is[1] : is[0]); line++) {
                    int64_t perm[5] = {0, 1, 2, 3, 4}, len = oshape[dim], m = is[dim];
                    for (int64_t i = len - 1; i > 0; i--) {
                        int64_t j = (int64_t)(t_rand_u64(rng) % (uint64_t)(i + 1)), t = perm[i];
                        perm[i] = perm[j];
                        perm[j] = t;
                    }
                    for (int64_t i = 0; i < m; i++) {
                        int64_t k = perm[i] - (t_rand_u64(rng) & 1 ? len : 0);
                        if (dim == 0)
                            iv[i * is[1] + line] = k;
                        else
                            iv[line * is[1] + i] = k;
                    }
                }
            }
            for (int64_t f = 0; f < n; f++) { /* the reference, in index order */
                int64_t oc[2];
                t_coords(2, is, f, c);
                oc[0] = c[0];
                oc[1] = c[1];
                oc[dim] = DTFN(iwrap)(iv[f], oshape[dim]);
                E *o = &ov[t_flat(2, oshape, oc)];
                E x = sv[t_flat(2, sshape, c)];
                if (!add) {
                    *o = x;
                } else {
#if defined(DT_KIND_FLOAT)
                    *o = E_FROM_DOUBLE(E_TO_DOUBLE(*o) + E_TO_DOUBLE(x));
#elif !defined(DT_KIND_BOOL)
                    *o = (E)(uint64_t)((uint64_t)*o + (uint64_t)x);
#endif
                }
            }
            ix = t_idx64_nd(iv, 2, is, dim == 1);
#if defined(DT_KIND_BOOL)
            st = TFN(scatter_out)(out, dim, ix, src);
#else
            st = add ? tensor_scatter_add_out(out, dim, ix, src) : tensor_scatter_out(out, dim, ix, src);
#endif
            snprintf(what, sizeof what, "%s %s out dim %d", name, t_layout[olay], dim);
            if (st != TENDO_OK) {
                diag("%s: %s", what, tendo_error_message(tendo_last_error()));
                good = false;
            } else {
                good = DTFN(isame)(out, 2, oshape, ov, what) && good;
            }
            tensor_free(ix);
            free(ov);
            free(sv);
            tensor_free(out);
            tensor_free(src);
        }
        ok(good, "%s %s into a %s out, dims 0 and 1, negative indices", DT_NAME, name, t_layout[olay]);
    }
    /* a bad index anywhere (here the last) fails, and out is as it was */
    {
        int64_t is[2] = {2, 2}, iv[4] = {0, 1, 2, 9};
        TT *out = DTFN(imake)(L_TRANS, 2, oshape, rng, true), *src = DTFN(imake)(L_CONTIG, 2, sshape, rng, true);
        TT *e = tensor_expand(src, 2, sshape);
        E *before = DTFN(raw)(out);
        tensor_i64 *ix = tensor_i64_from_data(iv, 2, is, tendo_cpu());
        tendo_status st;
#if defined(DT_KIND_BOOL)
        st = TFN(scatter_out)(out, 1, ix, src);
#else
        st = add ? TFN(scatter_add_out)(out, 1, ix, src) : TFN(scatter_out)(out, 1, ix, src);
#endif
        ok(st == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "index 9 is out of range for dim 1 of size 5") &&
               DTFN(isame)(out, 2, oshape, before, "out after a failed call"),
           "%s %s: index 9 of size 5 fails and leaves out unchanged", DT_NAME, name);
        {
            int64_t one[2] = {1, 5};
            TT *o1 = DTFN(imake)(L_CONTIG, 2, one, rng, true), *ex = tensor_expand(o1, 2, oshape);
            st = TFN(scatter_out)(ex, 1, ix, src);
            ok(st == TENDO_ERR_INVALID_ARG && t_failed_with(TENDO_ERR_INVALID_ARG, "overlapping"),
               "%s scatter_out into an expanded out fails", DT_NAME);
            tensor_free(ex);
            tensor_free(o1);
        }
        tensor_free(ix);
        tensor_free(e);
        free(before);
        tensor_free(out);
        tensor_free(src);
    }
}

static void DTFN(test_cat_stack)(uint64_t *rng)
{
    /* three [3,*,4] parts along dim 1 of sizes 2, 0, 3 (one empty), in
     * different layouts */
    static const int64_t sizes[3] = {2, 0, 3};

    for (int dim = -3; dim < 3; dim++) {
        int d = dim < 0 ? dim + 3 : dim;
        bool good = true;
        for (int lay0 = 0; lay0 < L_COUNT; lay0++) {
            TT *parts[3];
            E *pv[3];
            int64_t shapes[3][3], oshape[3] = {3, 4, 5}, c[3];
            E *want;
            TT *r;
            char what[120];

            oshape[d] = 0;
            for (int i = 0; i < 3; i++) {
                shapes[i][0] = 3;
                shapes[i][1] = 4;
                shapes[i][2] = 5;
                shapes[i][d] = sizes[i];
                oshape[d] += sizes[i];
                parts[i] = DTFN(imake)((lay0 + i) % L_COUNT, 3, shapes[i], rng, false);
                pv[i] = DTFN(raw)(parts[i]);
            }
            want = malloc((size_t)(t_numel(3, oshape) + 1) * sizeof *want);
            for (int64_t f = 0; f < t_numel(3, oshape); f++) {
                int i = 0;
                t_coords(3, oshape, f, c);
                while (c[d] >= shapes[i][d]) {
                    c[d] -= shapes[i][d];
                    i++;
                }
                want[f] = pv[i][t_flat(3, shapes[i], c)];
            }
            r = tensor_cat((const TT *const *)parts, 3, dim);
            snprintf(what, sizeof what, "cat dim %d from %s", dim, t_layout[lay0]);
            good = DTFN(isame)(r, 3, oshape, want, what) && good;
            tensor_free(r);
            /* cat of one tensor is a copy of it */
            r = tensor_cat(&parts[0], 1, dim);
            good = DTFN(isame)(r, 3, shapes[0], pv[0], "cat of one") && good;
            good = good && (!r || !tensor_shares_storage(r, parts[0]));
            tensor_free(r);
            free(want);
            for (int i = 0; i < 3; i++) {
                tensor_free(parts[i]);
                free(pv[i]);
            }
        }
        ok(good, "%s cat of 3 (one empty) and of 1, dim %d, every layout", DT_NAME, dim);
    }
    for (int dim = -3; dim < 3; dim++) {
        int d = dim < 0 ? dim + 3 : dim;
        bool good = true;
        for (int lay0 = 0; lay0 < L_COUNT; lay0++) {
            int64_t shape[2] = {3, 4}, oshape[3], c[3], pc[2];
            TT *parts[3];
            E *pv[3], *want;
            TT *r;
            char what[120];

            for (int j = 0, k = 0; j < 3; j++)
                oshape[j] = j == d ? 3 : shape[k++];
            for (int i = 0; i < 3; i++) {
                parts[i] = DTFN(imake)((lay0 + 2 * i) % L_COUNT, 2, shape, rng, false);
                pv[i] = DTFN(raw)(parts[i]);
            }
            want = malloc((size_t)t_numel(3, oshape) * sizeof *want);
            for (int64_t f = 0; f < t_numel(3, oshape); f++) {
                t_coords(3, oshape, f, c);
                for (int j = 0, k = 0; j < 3; j++)
                    if (j != d)
                        pc[k++] = c[j];
                want[f] = pv[c[d]][t_flat(2, shape, pc)];
            }
            r = tensor_stack((const TT *const *)parts, 3, dim);
            snprintf(what, sizeof what, "stack dim %d from %s", dim, t_layout[lay0]);
            good = DTFN(isame)(r, 3, oshape, want, what) && good;
            tensor_free(r);
            free(want);
            for (int i = 0; i < 3; i++) {
                tensor_free(parts[i]);
                free(pv[i]);
            }
        }
        ok(good, "%s stack of 3, dim %d, every layout", DT_NAME, dim);
    }
}

/* copy_into a slice of a KV cache (a strided view), with broadcasting;
 * into transposed and flipped views; the rest of the cache untouched. */
static void DTFN(test_copy_into)(uint64_t *rng)
{
    int64_t cshape[3] = {2, 8, 4}, vshape[3] = {2, 3, 4};
    static const int64_t srcs[][3] = {{2, 3, 4}, {3, 4, 0}, {1, 1, 4}, {4, 0, 0}, {2, 1, 1}};
    static const int snd[] = {3, 2, 3, 1, 3};
    bool good = true;

    for (int si = 0; si < 5; si++)
        for (int lay = 0; lay < L_COUNT; lay++) {
            TT *cache = DTFN(imake)(L_CONTIG, 3, cshape, rng, false);
            TT *view = tensor_narrow(cache, 1, 5, 3); /* positions 5..7 */
            TT *src = DTFN(imake)(lay, snd[si], srcs[si], rng, false);
            E *cv = DTFN(raw)(cache), *sv = DTFN(raw)(src);
            int64_t c[3];
            char what[120];

            for (int64_t f = 0; f < t_numel(3, vshape); f++) {
                t_coords(3, vshape, f, c);
                int64_t at = (c[0] * 8 + 5 + c[1]) * 4 + c[2];
                cv[at] = sv[t_bcast(3, vshape, snd[si], srcs[si], f)];
            }
            snprintf(what, sizeof what, "copy_into a cache slice from %s src %d", t_layout[lay], si);
            if (tensor_copy_into(view, src) != TENDO_OK) {
                diag("%s: %s", what, tendo_error_message(tendo_last_error()));
                good = false;
            } else {
                good = DTFN(isame)(cache, 3, cshape, cv, what) && good;
            }
            free(cv);
            free(sv);
            tensor_free(src);
            tensor_free(view);
            tensor_free(cache);
        }
    ok(good, "%s copy_into a narrowed cache slice, broadcast srcs, every src layout", DT_NAME);
    good = true;
    for (int lay = 1; lay < L_COUNT; lay++) {
        int64_t shape[2] = {4, 6};
        if (lay == L_EXPAND)
            continue;
        TT *dst = DTFN(imake)(lay, 2, shape, rng, false), *src = DTFN(imake)(L_CONTIG, 2, shape, rng, false);
        E *sv = DTFN(raw)(src);
        good = tensor_copy_into(dst, src) == TENDO_OK && DTFN(isame)(dst, 2, shape, sv, t_layout[lay]) && good;
        free(sv);
        tensor_free(dst);
        tensor_free(src);
    }
    ok(good, "%s copy_into transposed, sliced and flipped views", DT_NAME);
}

static void DTFN(test_tri)(uint64_t *rng)
{
    static const int64_t ks[] = {-9, -2, -1, 0, 1, 3, 9};
    static const int64_t shapes[][3] = {{4, 6, 0}, {2, 5, 3}, {3, 0, 2}};
    static const int nds[] = {2, 3, 3};

    for (int upper = 0; upper < 2; upper++) {
        bool good = true;
        for (int si = 0; si < 3; si++)
            for (int lay = 0; lay < L_COUNT; lay++) {
                int nd = nds[si];
                TT *a = DTFN(imake)(lay, nd, shapes[si], rng, false);
                E *av = DTFN(raw)(a), zero;
                int64_t n = t_numel(nd, shapes[si]), R = shapes[si][nd - 2], C = shapes[si][nd - 1];
                E *want = malloc((size_t)(n ? n : 1) * sizeof *want);

                memset(&zero, 0, sizeof zero);
                for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
                    int64_t k = ks[ki];
                    TT *r;
                    char what[120];
                    for (int64_t f = 0; f < n; f++) {
                        int64_t col = f % C, row = f / C % R;
                        bool keep = upper ? col - row >= k : col - row <= k;
                        want[f] = keep ? av[f] : zero;
                    }
                    r = upper ? tensor_triu(a, k) : tensor_tril(a, k);
                    snprintf(what, sizeof what, "%s %s shape %d k %lld", upper ? "triu" : "tril", t_layout[lay], si,
                             (long long)k);
                    good = DTFN(isame)(r, nd, shapes[si], want, what) && good;
                    tensor_free(r);
                }
                free(want);
                free(av);
                tensor_free(a);
            }
        ok(good, "%s %s, 2-D and batched, k from -9 to 9, every layout", DT_NAME, upper ? "triu" : "tril");
    }
    {
        int64_t big[2] = {2, 3};
        TT *a = DTFN(imake)(L_CONTIG, 2, big, rng, false);
        TT *r1 = tensor_tril(a, INT64_MAX), *r2 = tensor_triu(a, INT64_MIN);
        E *av = DTFN(raw)(a);
        ok(DTFN(isame)(r1, 2, big, av, "tril INT64_MAX") && DTFN(isame)(r2, 2, big, av, "triu INT64_MIN"),
           "%s tril(k = INT64_MAX) and triu(k = INT64_MIN) keep everything", DT_NAME);
        free(av);
        tensor_free(r1);
        tensor_free(r2);
        tensor_free(a);
    }
}

static void DTFN(test_index)(void)
{
    uint64_t rng = 0x1dc0ffee + DT_CODE;

    DTFN(test_index_select)(&rng);
    DTFN(test_gather)(&rng);
    DTFN(test_scatter)(&rng, false);
#if !defined(DT_KIND_BOOL)
    DTFN(test_scatter)(&rng, true);
#endif
    DTFN(test_cat_stack)(&rng);
    DTFN(test_copy_into)(&rng);
    DTFN(test_tri)(&rng);
}
