/* t/bodies/matmul-body.h - the skinny products (a few rows by a weight, in
 * the layouts weights are stored in) and matmul_out, per float dtype,
 * against a double reference.
 *
 * Reference and tolerance as t-nn's matmul (t_matmul_ref, matmul_bounds):
 * k * 2^-23 * sum_p |a_ip| |b_pj| (2^-52 for f64) plus one rounding to the
 * dtype; on k/8 data every partial sum is exact, so the result is the exact
 * product rounded once.  The weight comes
 * as a dense [k, n], as the transposed view of a dense [n, k] (an
 * nn.Linear weight), and as both again cut from a wider buffer at an
 * offset; A dense, transposed, or every other element.  Results must be
 * the same bits at 1, 2 and 3 threads, and matmul_out must give matmul's
 * bits.  Included by t/each-dtype.h (float dtypes). */

#ifndef T_MATMUL_BODY_ONCE
#define T_MATMUL_BODY_ONCE
#include <stdio.h>
#include <string.h>

#include "matmul-ref.h"

/* The layouts of B and of A. */
enum { B_KN, B_NKT, B_KN_CUT, B_NKT_CUT, B_COUNT };
static const char *const t_blayout[B_COUNT] = {"[k,n]", "[n,k]^T", "[k,n] cut", "[n,k]^T cut"};
enum { A_DENSE, A_TRANS, A_STEP, A_COUNT };
static const char *const t_alayout[A_COUNT] = {"dense", "transposed", "every other"};

/* (m, k, n): vector tails, a k past the widening block (512), m past a
 * row group (4 and 8) and at and past the skinny limits (32 and 64 rows),
 * rows that tendo__pgemm_nt takes by a transposed weight (28 on either
 * set; 16 and 44 where only AVX2 runs), n past a column group; and a
 * packed GEMM of one A panel over two k blocks (bf16's 512 k, the second
 * odd) and two groups of B slivers (8 of 32 columns, the last cut). */
static const int64_t t_mkn[][3] = {
    {1, 1, 1},   {1, 7, 5},    {1, 16, 4},   {1, 17, 33},  {1, 600, 130}, {2, 33, 7},  {3, 100, 9},
    {4, 64, 64}, {5, 129, 31}, {7, 15, 100}, {8, 513, 17}, {9, 40, 65},   {13, 77, 6}, {16, 256, 20},
    {17, 31, 50}, {24, 18, 19}, {28, 130, 70}, {32, 21, 9}, {33, 20, 21}, {44, 40, 33}, {64, 9, 40},
    {65, 10, 11}, {66, 515, 290},
};
#endif

/* A [rows, cols] tensor of data set ds in one of the A layouts (or, for
 * B, the B layouts), its values row-major in *vals (the caller frees). */
static TT *DTFN(mm_operand)(bool is_b, int layout, int64_t rows, int64_t cols, int ds, uint64_t *rng, double **vals)
{
    /* the base: [rows, cols], [cols, rows] to transpose, or wider to cut */
    bool trans = is_b ? layout == B_NKT || layout == B_NKT_CUT : layout == A_TRANS;
    bool cut = is_b && (layout == B_KN_CUT || layout == B_NKT_CUT), step = !is_b && layout == A_STEP;
    int64_t br = trans ? cols : rows, bc = (trans ? rows : cols) * (step ? 2 : 1) + (cut ? 3 : 0);
    E *raw = malloc((size_t)(br * bc) * sizeof *raw);
    TT *base, *v, *w;

    for (int64_t i = 0; i < br * bc; i++) {
        double x = t_rand_range(rng, -2, 2);
        raw[i] = E_FROM_DOUBLE(ds == D_EIGHTHS ? floor(x * 8) / 8 : x);
    }
    base = TFN(from_data)(raw, 2, (const int64_t[]){br, bc}, tendo_cpu());
    free(raw);
    if (!base)
        bail("from_data: %s", tendo_error_message(tendo_last_error()));
    v = cut ? tensor_slice(base, 1, 1, 1 + (trans ? rows : cols), 1)
        : step ? tensor_slice(base, 1, 0, bc, 2) : base;
    if (v != base)
        tensor_free(base);
    w = trans ? tensor_transpose(v, 0, 1) : v;
    if (w != v)
        tensor_free(v);
    if (!w || tensor_size(w, 0) != rows || tensor_size(w, 1) != cols)
        bail("making a %s operand failed", is_b ? t_blayout[layout] : t_alayout[layout]);
    *vals = DTFN(values)(w);
    return w;
}

/* Every (m, k, n) x B layout x A layout x data set against the reference. */
static void DTFN(test_skinny_values)(void)
{
    for (int bl = 0; bl < B_COUNT; bl++) {
        t_check c = {0};
        for (size_t s = 0; s < sizeof t_mkn / sizeof *t_mkn; s++)
            for (int al = 0; al < A_COUNT; al++)
                for (int ds = 0; ds < 2; ds++) {
                    int64_t m = t_mkn[s][0], k = t_mkn[s][1], n = t_mkn[s][2];
                    uint64_t rng = 0x5eed + s * 131 + (uint64_t)(al * 7 + bl * 31 + ds * 101);
                    double *av, *bv, *want, *tol;
                    int64_t so[TENDO_MAX_DIMS], kk;
                    int no;
                    TT *a = DTFN(mm_operand)(false, al, m, k, ds, &rng, &av);
                    TT *b = DTFN(mm_operand)(true, bl, k, n, ds, &rng, &bv);
                    TT *r = tensor_matmul(a, b);
                    char what[128];

                    snprintf(what, sizeof what, "[%lld,%lld] %s @ [%lld,%lld] %s, %s", (long long)m, (long long)k,
                             t_alayout[al], (long long)k, (long long)n, t_blayout[bl],
                             ds == D_EIGHTHS ? "eighths" : "random");
                    if (!t_matmul_ref(2, (const int64_t[]){m, k}, av, 2, (const int64_t[]){k, n}, bv, &no, so, &want,
                                      &tol, &kk))
                        bail("bad skinny case %zu", s);
                    DTFN(matmul_bounds)(m * n, kk, ds == D_EIGHTHS, want, tol);
                    DTFN(check_against)(&c, what, r, no, so, want, tol);
                    tensor_free(r);
                    tensor_free(a);
                    tensor_free(b);
                    free(av);
                    free(bv);
                    free(want);
                    free(tol);
                }
        t_done(&c, "%s skinny and small products with B %s: %zu shapes x %d A layouts x 2 data sets", DT_NAME,
               t_blayout[bl], sizeof t_mkn / sizeof *t_mkn, A_COUNT);
    }
}

/* Element i of t's first dim, that dim removed (a view). */
static TT *DTFN(pick)(const TT *t, int64_t i)
{
    TT *one = tensor_narrow(t, 0, i, 1), *v = one ? tensor_squeeze(one, 0) : NULL;

    tensor_free(one);
    if (!v)
        bail("pick: %s", tendo_error_message(tendo_last_error()));
    return v;
}

/* Broadcast batches: [2,3,m,k] @ a weight (folded into 6m rows, within
 * the skinny limit), and [3,m,k] @ [3,k,n] transposed views, against the
 * 2-D products of each batch. */
static void DTFN(test_skinny_batches)(void)
{
    uint64_t rng = 0xba7c;
    bool good = true;

    for (int64_t m = 1; m <= 2; m++) {
        int64_t k = 37, n = 45;
        TT *a = TFN(rand)(4, (const int64_t[]){2, 3, m, k}, rng++, tendo_cpu());
        TT *wb = TFN(rand)(2, (const int64_t[]){n, k}, rng++, tendo_cpu());
        TT *w = tensor_transpose(wb, 0, 1);
        TT *b3b = TFN(rand)(3, (const int64_t[]){3, n, k}, rng++, tendo_cpu());
        TT *b3 = tensor_transpose(b3b, 1, 2);
        TT *r = tensor_matmul(a, w), *r3;

        for (int64_t b0 = 0; good && r && b0 < 2; b0++)
            for (int64_t b1 = 0; good && b1 < 3; b1++) {
                TT *a1 = DTFN(pick)(a, b0), *a2 = DTFN(pick)(a1, b1);
                TT *r1 = DTFN(pick)(r, b0), *r2 = DTFN(pick)(r1, b1);
                TT *want = tensor_matmul(a2, w), *bw = DTFN(pick)(b3, b1), *want3 = tensor_matmul(a2, bw);
                TT *got3;
                E *x = DTFN(raw)(r2), *y = DTFN(raw)(want);
                r3 = tensor_matmul(a1, b3);
                got3 = DTFN(pick)(r3, b1);
                good = memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0;
                free(x);
                free(y);
                x = DTFN(raw)(got3);
                y = DTFN(raw)(want3);
                good = good && memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0;
                free(x);
                free(y);
                tensor_free(got3);
                tensor_free(r3);
                tensor_free(want3);
                tensor_free(bw);
                tensor_free(want);
                tensor_free(r2);
                tensor_free(r1);
                tensor_free(a2);
                tensor_free(a1);
            }
        good = good && r;
        tensor_free(r);
        tensor_free(b3);
        tensor_free(b3b);
        tensor_free(w);
        tensor_free(wb);
        tensor_free(a);
    }
    ok(good, "%s [2,3,m,k] @ [n,k]^T and [3,m,k] @ [3,n,k]^T: each batch the bits of its own 2-D product", DT_NAME);
}

/* The same bits at 1, 2 and 3 threads, for products big enough to be split. */
static void DTFN(test_skinny_threads)(void)
{
    static const int64_t cases[][3] = {{1, 600, 1000}, {3, 257, 2100}, {9, 300, 1000},
                                       {16, 200, 1000}, {30, 260, 1000}, {40, 128, 1500}};

    for (size_t s = 0; s < sizeof cases / sizeof *cases; s++)
        for (int bl = 0; bl < 2; bl++) {
            int64_t m = cases[s][0], k = cases[s][1], n = cases[s][2];
            uint64_t rng = 0x7417 + s;
            double *av, *bv;
            TT *a = DTFN(mm_operand)(false, A_DENSE, m, k, D_RANDOM, &rng, &av);
            TT *b = DTFN(mm_operand)(true, bl, k, n, D_RANDOM, &rng, &bv);
            DTFN(tcheck) tc = {0};
            int saved = tendo_get_num_threads();

            for (int th = 1; th <= 3; th++) {
                tendo_set_num_threads(th);
                DTFN(tcheck_add)(&tc, tensor_matmul(a, b), "matmul");
            }
            tendo_set_num_threads(saved);
            ok(DTFN(tcheck_done)(&tc), "%s [%lld,%lld] @ [%lld,%lld] %s: the same bits at 1, 2 and 3 threads", DT_NAME,
               (long long)m, (long long)k, (long long)k, (long long)n, t_blayout[bl]);
            free(av);
            free(bv);
            tensor_free(a);
            tensor_free(b);
        }
}

/* matmul_out: matmul's bits in a dense out, its values in a transposed one,
 * a broadcast batch, and the refusals (out unchanged). */
static void DTFN(test_matmul_out)(tendo_device dev)
{
    uint64_t rng = 0x07;
    const char *dn = tendo_device_str(dev);
    TT *a = TFN(rand)(2, (const int64_t[]){3, 40}, rng++, dev), *wb = TFN(rand)(2, (const int64_t[]){50, 40}, rng++, dev);
    TT *w = tensor_transpose(wb, 0, 1), *want = tensor_matmul(a, w);
    TT *out = TFN(full)(2, (const int64_t[]){3, 50}, 7.0, dev);
    TT *outtb = TFN(full)(2, (const int64_t[]){50, 3}, 7.0, dev), *outt = tensor_transpose(outtb, 0, 1);
    TT *a4 = TFN(rand)(4, (const int64_t[]){2, 3, 2, 40}, rng++, dev), *out4 = TFN(zeros)(4, (const int64_t[]){2, 3, 2, 50}, dev);
    TT *want4 = tensor_matmul(a4, w), *bad = TFN(full)(2, (const int64_t[]){3, 49}, 7.0, dev);
    TT *alias = TFN(zeros)(2, (const int64_t[]){6, 50}, dev), *alias_a, *alias_out, *part;
    E *x, *y;
    bool good;

    if (!want || !out || !outt || !want4 || !bad || !alias)
        bail("%s matmul_out setup on %s: %s", DT_NAME, dn, tendo_error_message(tendo_last_error()));
    ok(tensor_matmul_out(out, a, w) == TENDO_OK, "%s matmul_out on %s into a dense out", DT_NAME, dn);
    x = DTFN(raw)(out);
    y = DTFN(raw)(want);
    ok(memcmp(x, y, 150 * sizeof *x) == 0, "%s matmul_out on %s: matmul's bits", DT_NAME, dn);
    free(x);
    ok(tensor_matmul_out(outt, a, w) == TENDO_OK, "%s matmul_out on %s into a transposed view", DT_NAME, dn);
    x = DTFN(raw)(outt);
    ok(memcmp(x, y, 150 * sizeof *x) == 0, "%s matmul_out on %s into a transposed view: matmul's bits", DT_NAME, dn);
    free(x);
    free(y);
    ok(tensor_matmul_out(out4, a4, w) == TENDO_OK, "%s matmul_out on %s: [2,3,2,40] @ [40,50] into [2,3,2,50]",
       DT_NAME, dn);
    x = DTFN(raw)(out4);
    y = DTFN(raw)(want4);
    ok(memcmp(x, y, 600 * sizeof *x) == 0, "%s matmul_out on %s with batches: matmul's bits", DT_NAME, dn);
    free(x);
    free(y);

    x = DTFN(raw)(bad);
    good = tensor_matmul_out(bad, a, w) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "matmul_out: ");
    y = DTFN(raw)(bad);
    ok(good && memcmp(x, y, 147 * sizeof *x) == 0, "%s matmul_out on %s into a [3,49] out: TENDO_ERR_SHAPE (%s), out unchanged",
       DT_NAME, dn, tendo_error_message(tendo_last_error()));
    free(x);
    free(y);
    /* out and a in one [6,50] buffer: rows 2..4 and 0..2 overlap, 3..5 and 0..2 do not */
    part = tensor_narrow(alias, 0, 0, 3);
    alias_a = tensor_narrow(part, 1, 0, 40);
    tensor_free(part);
    alias_out = tensor_narrow(alias, 0, 2, 3);
    ok(tensor_matmul_out(alias_out, alias_a, w) == TENDO_ERR_INVALID_ARG &&
           t_failed_with(TENDO_ERR_INVALID_ARG, "shares memory with a"),
       "%s matmul_out on %s with out overlapping a: TENDO_ERR_INVALID_ARG (%s)", DT_NAME, dn,
       tendo_error_message(tendo_last_error()));
    tensor_free(alias_out);
    alias_out = tensor_narrow(alias, 0, 3, 3);
    ok(tensor_matmul_out(alias_out, alias_a, w) == TENDO_OK, "%s matmul_out on %s: out and a disjoint rows of one buffer",
       DT_NAME, dn);
    ok(tensor_matmul_out(out, a, a) == TENDO_ERR_SHAPE, "%s matmul_out on %s with mismatched inner dims: TENDO_ERR_SHAPE",
       DT_NAME, dn);
    tensor_free(alias_out);
    tensor_free(alias_a);
    tensor_free(alias);
    tensor_free(bad);
    tensor_free(want4);
    tensor_free(out4);
    tensor_free(a4);
    tensor_free(outt);
    tensor_free(outtb);
    tensor_free(out);
    tensor_free(want);
    tensor_free(w);
    tensor_free(wb);
    tensor_free(a);
}

#ifndef T_PREPACK_ONCE
#define T_PREPACK_ONCE
/* Whether tendo_cpu_features() lists word (a whole word). */
static bool t_cpu_has(const char *word)
{
    size_t n = strlen(word);

    for (const char *f = tendo_cpu_features(); (f = strstr(f, word)) != NULL; f += n)
        if ((f == tendo_cpu_features() || f[-1] == ' ') && (f[n] == ' ' || f[n] == '\0'))
            return true;
    return false;
}

static int64_t t_cpu_bytes(void) { return tendo_pool_get_stats(tendo_cpu()).bytes_in_use; }

/* (m, k, n) of the prepacked products: fewer rows than take kept panels
 * (4), the fewest that do (8), rows the skinny path would take (24, 40,
 * 64: the panels are used instead, and left stale after a write), past it,
 * tails in k and n, and one of several row blocks. */
static const int64_t t_pp_mkn[][3] = {{4, 64, 50}, {8, 129, 37}, {24, 100, 70}, {40, 300, 130}, {64, 77, 45},
                                      {300, 513, 33}};
#endif

/* Bytes of the panels a prepack of a [k, n] weight keeps on this CPU: 0
 * where no packed kernel multiplies the dtype (bf16 on AMX tiles; f32, f16
 * and bf16 without AVX-512 or AVX2), else at least k*n elements (bf16
 * pairs with AVX512_BF16; f16, and bf16 without it, widened to f32). */
static int64_t DTFN(pp_least)(int64_t k, int64_t n)
{
    bool bf16 = !strcmp(DT_NAME, "bf16");

    if (bf16 && t_cpu_has("amxbf16"))
        return 0; /* AMX: tiles, no panels */
    if (bf16 && t_cpu_has("avx512bf16"))
        return k * n * 2;
    bool avx2 = t_cpu_has("avx2") && t_cpu_has("fma") && (t_cpu_has("f16c") || strcmp(DT_NAME, "f16"));
    if (!t_cpu_has("avx512") && !avx2)
        return 0;
    return !strcmp(DT_NAME, "f32") || !strcmp(DT_NAME, "f16") || bf16 ? k * n * 4 : 0;
}

/* tensor_prepack: the products of a prepacked weight give the bits of the
 * unpacked ones (eighths data: both are the exact product rounded once) at
 * 1, 2 and 3 threads, in every stored layout; the panels show in the pool
 * and go with the weight; a write through tendo makes the next product
 * pack again (never stale values); another view of the same storage is
 * not taken for the packed one; and the refusals. */
static void DTFN(test_prepack)(void)
{
    static const int bls[] = {B_KN, B_NKT, B_NKT_CUT};
    int saved = tendo_get_num_threads();

    for (size_t s = 0; s < sizeof t_pp_mkn / sizeof *t_pp_mkn; s++)
        for (size_t li = 0; li < sizeof bls / sizeof *bls; li++) {
            int64_t m = t_pp_mkn[s][0], k = t_pp_mkn[s][1], n = t_pp_mkn[s][2], least = DTFN(pp_least)(k, n);
            uint64_t rng = 0x9acc + s * 17 + li;
            double *av, *bv, *bv2, *want, *tol;
            int64_t so[TENDO_MAX_DIMS], kk, base = t_cpu_bytes(), before, kept, after;
            int no, bl = bls[li];
            TT *a = DTFN(mm_operand)(false, A_DENSE, m, k, D_EIGHTHS, &rng, &av);
            TT *b = DTFN(mm_operand)(true, bl, k, n, D_EIGHTHS, &rng, &bv);
            TT *b2 = DTFN(mm_operand)(true, B_KN, k, n, D_EIGHTHS, &rng, &bv2);
            TT *plain = tensor_matmul(a, b), *narrow = tensor_narrow(b, 1, 0, n - 5), *r, *rn, *rnw;
            DTFN(tcheck) tc = {0};
            t_check c = {0};
            char what[160];

            snprintf(what, sizeof what, "%s [%lld,%lld] @ prepacked [%lld,%lld] %s", DT_NAME, (long long)m,
                     (long long)k, (long long)k, (long long)n, t_blayout[bl]);
            if (!plain || !narrow)
                bail("%s: %s", what, tendo_error_message(tendo_last_error()));
            before = t_cpu_bytes();
            ok(tensor_prepack(b) == TENDO_OK, "%s: prepack", what);
            kept = t_cpu_bytes() - before;
            ok(least ? kept >= least : kept == 0, "%s: the pool holds %lld bytes of panels (%s %lld)", what,
               (long long)kept, least ? "at least" : "expected", (long long)least);
            for (int th = 1; th <= 3; th++) {
                tendo_set_num_threads(th);
                DTFN(tcheck_add)(&tc, tensor_matmul(a, b), "prepacked");
            }
            tendo_set_num_threads(saved);
            ok(DTFN(tcheck_done)(&tc), "%s: the same bits at 1, 2 and 3 threads", what);
            r = tensor_matmul(a, b);
            {
                E *x = DTFN(raw)(r), *y = DTFN(raw)(plain);
                ok(memcmp(x, y, (size_t)(m * n) * sizeof *x) == 0, "%s: the bits of the product before prepack", what);
                free(x);
                free(y);
            }
            tensor_free(r);
            ok(t_cpu_bytes() - before == kept, "%s: products add no panels", what);

            /* another view of the storage: its own product, the panels unused */
            rn = tensor_matmul(a, narrow);
            rnw = tensor_narrow(plain, 1, 0, n - 5);
            {
                TT *d = rnw ? tensor_contiguous(rnw) : NULL;
                E *x = DTFN(raw)(rn), *y = d ? DTFN(raw)(d) : NULL;
                ok(rn && y && memcmp(x, y, (size_t)(m * (n - 5)) * sizeof *x) == 0,
                   "%s: a narrower view of its storage multiplies its own values", what);
                free(x);
                free(y);
                tensor_free(d);
            }
            tensor_free(rnw);
            tensor_free(rn);

            /* new values written through tendo: packed again, never stale */
            ok(tensor_copy_into(b, b2) == TENDO_OK, "%s: new values copied in", what);
            r = tensor_matmul(a, b);
            if (!t_matmul_ref(2, (const int64_t[]){m, k}, av, 2, (const int64_t[]){k, n}, bv2, &no, so, &want, &tol,
                              &kk))
                bail("%s: bad reference", what);
            DTFN(matmul_bounds)(m * n, kk, true, want, tol);
            DTFN(check_against)(&c, "after a write", r, no, so, want, tol);
            t_done(&c, "%s: after a write to the weight, the new values' product", what);
            tensor_free(r);
            after = t_cpu_bytes() - before;
            ok(after == kept, "%s: the panels packed again (or left stale) take no more room (%lld bytes, %lld before)", what,
               (long long)after, (long long)kept);
            free(want);
            free(tol);

            tensor_free(narrow);
            tensor_free(plain);
            tensor_free(b);
            tensor_free(b2);
            tensor_free(a);
            free(av);
            free(bv);
            free(bv2);
            ok(t_cpu_bytes() == base, "%s: the panels go with the weight (pool in use %lld bytes, %lld before)", what,
               (long long)t_cpu_bytes(), (long long)base);
        }
}

/* prepack's refusals, and a device whose products read weights as
 * stored (cuda:0): TENDO_OK, nothing kept. */
static void DTFN(test_prepack_args)(void)
{
    TT *v = TFN(rand)(1, (const int64_t[]){5}, 1, tendo_cpu());
    TT *w3 = TFN(rand)(3, (const int64_t[]){2, 3, 4}, 2, tendo_cpu());

    ok(tensor_prepack(v) == TENDO_ERR_SHAPE && t_failed_with(TENDO_ERR_SHAPE, "prepack: "),
       "%s prepack of a vector: TENDO_ERR_SHAPE (%s)", DT_NAME, tendo_error_message(tendo_last_error()));
    ok(tensor_prepack(w3) == TENDO_ERR_SHAPE, "%s prepack of a [2,3,4] tensor: TENDO_ERR_SHAPE", DT_NAME);
    ok(tensor_prepack((TT *)NULL) == TENDO_ERR_INVALID_ARG, "%s prepack(NULL): TENDO_ERR_INVALID_ARG", DT_NAME);
    tensor_free(w3);
    tensor_free(v);
    if (tendo_cuda_device_count() > 0) {
        TT *w = TFN(rand)(2, (const int64_t[]){40, 30}, 3, tendo_cuda(0));
        int64_t cpu = t_cpu_bytes(), dev = tendo_pool_get_stats(tendo_cuda(0)).bytes_in_use;

        ok(w && tensor_prepack(w) == TENDO_OK && t_cpu_bytes() == cpu &&
               tendo_pool_get_stats(tendo_cuda(0)).bytes_in_use == dev,
           "%s prepack on cuda:0: TENDO_OK, nothing kept (cuBLAS reads the weight as stored)", DT_NAME);
        tensor_free(w);
    }
}

static void DTFN(test_matmul)(void)
{
    DTFN(test_skinny_values)();
    DTFN(test_skinny_batches)();
    DTFN(test_skinny_threads)();
    DTFN(test_matmul_out)(tendo_cpu());
    DTFN(test_prepack)();
    DTFN(test_prepack_args)();
    if (DT_BITS > 8 && tendo_cuda_device_count() > 0) /* cuBLAS has no fp8 GEMM: refused, as t-coverage checks */
        DTFN(test_matmul_out)(tendo_cuda(0));
}
