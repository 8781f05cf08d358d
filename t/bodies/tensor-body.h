/* t/bodies/tensor-body.h - creation, properties, copies and printing, per dtype.
 * Included by t/each-dtype.h; see t/lib/dt.h. */

/* True when every element of t equals want(i) exactly. */
static bool DTFN(all_equal)(const TT *t, const double *want)
{
    double *v = DTFN(values)(t);
    bool same = true;

    for (int64_t i = 0; i < tensor_numel(t); i++)
        if (!(v[i] == want[i] || (isnan(v[i]) && isnan(want[i]))))
            same = false;
    free(v);
    return same;
}

static void DTFN(test_fills)(void)
{
    TT *z = TFN(zeros)(TENDO_SHAPE(2, 3, 4), tendo_cpu());
    TT *o = TFN(ones)(TENDO_SHAPE(5), tendo_cpu());
    TT *f = TFN(full)(TENDO_SHAPE(3, 1), 0.1, tendo_cpu());
    TT *e = TFN(empty)(TENDO_SHAPE(2, 0, 3), tendo_cpu());
    TT *s = TFN(full)(0, NULL, -2.5, tendo_cpu());
    double want[24];

    ok(z && tensor_ndim(z) == 3 && tensor_numel(z) == 24, DT_NAME " zeros: ndim 3, numel 24");
    ok(z && tensor_stride(z)[0] == 12 && tensor_stride(z)[1] == 4 && tensor_stride(z)[2] == 1 &&
           tensor_offset(z) == 0 && tensor_is_contiguous(z), DT_NAME " zeros: row-major strides");
    ok(tensor_shape(z)[1] == 3 && tensor_size(z, -1) == 4 && tensor_size(z, 0) == 2,
       DT_NAME " shape and size(dim)");
    ok(tensor_device(z).type == TENDO_CPU, DT_NAME " lives on the CPU");
    for (int i = 0; i < 24; i++)
        want[i] = 0.0;
    ok(DTFN(all_equal)(z, want), DT_NAME " zeros are 0");
    for (int i = 0; i < 5; i++)
        want[i] = 1.0;
    ok(DTFN(all_equal)(o, want), DT_NAME " ones are 1");
    want[0] = want[1] = want[2] = E_TO_DOUBLE(E_FROM_DOUBLE(0.1));
    ok(DTFN(all_equal)(f, want), DT_NAME " full(0.1) is 0.1 rounded once (%.9g)", want[0]);
    ok(fabs(want[0] - 0.1) <= 0.1 * DT_ULP / 2, DT_NAME "   within half an ulp of 0.1");
    ok(e && tensor_numel(e) == 0 && tensor_ndim(e) == 3 && tensor_is_contiguous(e),
       DT_NAME " empty [2,0,3] has no elements");
    ok(s && tensor_ndim(s) == 0 && tensor_numel(s) == 1, DT_NAME " a 0-d tensor has one element");
    want[0] = -2.5;
    ok(DTFN(all_equal)(s, want), DT_NAME " full 0-d holds its value");
    ok(((uintptr_t)tensor_data(z) & 63) == 0, DT_NAME " host data is 64-byte aligned");
    tensor_free(z);
    tensor_free(o);
    tensor_free(f);
    tensor_free(e);
    tensor_free(s);
}

static void DTFN(test_from_data_and_arange)(void)
{
    E raw[6];
    double want[10];
    TT *t, *a;

    for (int i = 0; i < 6; i++)
        raw[i] = E_FROM_DOUBLE(i * 1.5 - 2);
    t = TFN(from_data)(raw, TENDO_SHAPE(2, 3), tendo_cpu());
    raw[0] = E_FROM_DOUBLE(99); /* the tensor holds a copy */
    for (int i = 0; i < 6; i++) /* (rounded: fp8 cannot hold them all) */
        want[i] = E_TO_DOUBLE(E_FROM_DOUBLE(i * 1.5 - 2));
    ok(t && DTFN(all_equal)(t, want), DT_NAME " from_data copies the values");
    ok(E_TO_DOUBLE(tensor_data(t)[4]) == 4.0, DT_NAME " data() points at element 0");
    tensor_free(t);

    a = TFN(arange)(0, 10, 1, tendo_cpu());
    for (int i = 0; i < 10; i++)
        want[i] = E_TO_DOUBLE(E_FROM_DOUBLE(i));
    ok(a && tensor_numel(a) == 10 && DTFN(all_equal)(a, want), DT_NAME " arange(0,10,1)");
    tensor_free(a);
    a = TFN(arange)(1, 2, 0.25, tendo_cpu());
    want[0] = 1, want[1] = 1.25, want[2] = 1.5, want[3] = 1.75;
    ok(a && tensor_numel(a) == 4 && DTFN(all_equal)(a, want), DT_NAME " arange(1,2,0.25)");
    tensor_free(a);
    a = TFN(arange)(5, 0, -1.5, tendo_cpu());
    want[0] = 5, want[1] = 3.5, want[2] = 2, want[3] = 0.5;
    ok(a && tensor_numel(a) == 4 && DTFN(all_equal)(a, want), DT_NAME " arange(5,0,-1.5) counts down");
    tensor_free(a);
    a = TFN(arange)(0, 1, 0.3, tendo_cpu());
    for (int i = 0; i < 4; i++)
        want[i] = E_TO_DOUBLE(E_FROM_DOUBLE(i * 0.3));
    ok(a && tensor_numel(a) == 4 && DTFN(all_equal)(a, want), DT_NAME " arange(0,1,0.3) has ceil(1/0.3)=4");
    tensor_free(a);
    a = TFN(arange)(3, 3, 1, tendo_cpu());
    ok(a && tensor_numel(a) == 0 && tensor_ndim(a) == 1, DT_NAME " arange(3,3) is empty");
    tensor_free(a);
}

static void DTFN(test_copies)(void)
{
    TT *a = TFN(arange)(0, 12, 1, tendo_cpu());
    TT *m = tensor_reshape(a, TENDO_SHAPE(3, 4));
    TT *t = tensor_transpose(m, 0, 1);
    TT *c = tensor_contiguous(t), *c2 = tensor_contiguous(m), *k = tensor_clone(m);
    TT *d = tensor_to(t, tendo_cpu());
    double want[12];

    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            want[i * 3 + j] = E_TO_DOUBLE(E_FROM_DOUBLE(j * 4 + i));
    ok(c && tensor_is_contiguous(c) && !tensor_shares_storage(c, t) && DTFN(all_equal)(c, want),
       DT_NAME " contiguous() of a transpose copies in the new order");
    ok(c2 && tensor_shares_storage(c2, m), DT_NAME " contiguous() of a contiguous tensor is a view");
    ok(k && !tensor_shares_storage(k, m), DT_NAME " clone() never shares");
    ok(d && !tensor_shares_storage(d, t) && tensor_is_contiguous(d) && DTFN(all_equal)(d, want),
       DT_NAME " to(cpu) makes a contiguous copy");
    tensor_data(k)[0] = E_FROM_DOUBLE(42);
    ok(E_TO_DOUBLE(tensor_data(m)[0]) == 0, DT_NAME " writing a clone leaves the original");
    tensor_data(c2)[1] = E_FROM_DOUBLE(7);
    ok(E_TO_DOUBLE(tensor_data(a)[1]) == 7, DT_NAME " writing a view writes the original");
    tensor_free(a);
    tensor_free(m);
    tensor_free(t);
    tensor_free(c);
    tensor_free(c2);
    tensor_free(k);
    tensor_free(d);
}

/* A big transposed copy through the tiled path, against index arithmetic. */
static void DTFN(test_big_transpose)(void)
{
    const int64_t R = 301, C = 157;
    TT *a = TFN(arange)(0, (double)(R * C), 1, tendo_cpu());
    TT *m = tensor_reshape(a, TENDO_SHAPE(R, C));
    TT *t = tensor_transpose(m, 0, 1);
    TT *f = tensor_flip(t, 1);
    E *raw = malloc((size_t)(R * C) * sizeof *raw);
    const E *src = tensor_data(a);
    int64_t bad = 0;

    tensor_copy_to(t, raw, R * C);
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < R; j++)
            if (memcmp(&raw[i * R + j], &src[j * C + i], sizeof *raw) != 0)
                bad++;
    is_int(0, bad, DT_NAME " a transposed %lldx%lld copies element for element",
           (long long)C, (long long)R);
    bad = 0;
    tensor_copy_to(f, raw, R * C);
    for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < R; j++)
            if (memcmp(&raw[i * R + j], &src[(R - 1 - j) * C + i], sizeof *raw) != 0)
                bad++;
    is_int(0, bad, DT_NAME " a flipped transposed %lldx%lld copies element for element",
           (long long)C, (long long)R);
    free(raw);
    tensor_free(a);
    tensor_free(m);
    tensor_free(t);
    tensor_free(f);
}

static void DTFN(test_random)(void)
{
    const int64_t n = 1000000;
    TT *u = TFN(rand)(TENDO_SHAPE(1000, 1000), 42, tendo_cpu());
    TT *u2 = TFN(rand)(TENDO_SHAPE(n), 42, tendo_cpu());
    TT *u3 = TFN(rand)(TENDO_SHAPE(n), 43, tendo_cpu());
    TT *g = TFN(randn)(TENDO_SHAPE(n), 7, tendo_cpu());
    tensor_f32 *u32 = tensor_f32_rand(TENDO_SHAPE(n), 42, tendo_cpu());
    tensor_f32 *g32 = tensor_f32_randn(TENDO_SHAPE(n), 7, tendo_cpu());
    double *v = DTFN(values)(u), *v2 = DTFN(values)(u2), *v3 = DTFN(values)(u3), *w = DTFN(values)(g);
    const float *f32 = tensor_data(u32), *g32d = tensor_data(g32);
    double mean = 0, var = 0, gm = 0, gv = 0;
    int64_t out_of_range = 0, same_other_seed = 0, off_grid = 0, bad_normal = 0;
    bool same = true;

    for (int64_t i = 0; i < n; i++) {
        same = same && v[i] == v2[i];
        same_other_seed += v[i] == v3[i];
        out_of_range += !(v[i] >= 0 && v[i] < 1);
        /* the dtype's own grid: the f32 draw cut to DT_MANTISSA_BITS bits
         * (every dtype computes in float, so DT_MANTISSA_BITS <= 24) */
        off_grid += v[i] != floor((double)f32[i] * ldexp(1, DT_MANTISSA_BITS)) * ldexp(1, -DT_MANTISSA_BITS);
        /* randn: the f32 draw rounded once */
        bad_normal += w[i] != E_TO_DOUBLE(E_FROM_DOUBLE((double)g32d[i]));
        mean += v[i];
        gm += w[i];
    }
    mean /= n;
    gm /= n;
    for (int64_t i = 0; i < n; i++) {
        var += (v[i] - mean) * (v[i] - mean);
        gv += (w[i] - gm) * (w[i] - gm);
    }
    var /= n - 1;
    gv /= n - 1;
    ok(same, DT_NAME " rand: the same seed gives the same values, whatever the shape");
    /* on a coarse grid (fp8: 2^-4) two draws land on one value that often */
    ok(same_other_seed < n / 100 + 2 * n * ldexp(1, -DT_MANTISSA_BITS),
       DT_NAME " rand: another seed gives other values (%lld equal)",
       (long long)same_other_seed);
    is_int(0, out_of_range, DT_NAME " rand: every value in [0,1)");
    is_int(0, off_grid, DT_NAME " rand: element i is Philox draw i on the " DT_NAME " grid");
    /* 5 standard errors: sd(mean) = sqrt(1/12/n); sd(var) ~ sqrt(1/180/n) for U[0,1)
     * (plus the grid's quantization: mean shifts down by 2^-(bits+1)) */
    ok(fabs(mean - (0.5 - ldexp(1, -DT_MANTISSA_BITS - 1))) < 5 * sqrt(1.0 / 12 / n),
       DT_NAME " rand: mean %.5f of 1e6 draws near 1/2", mean);
    ok(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / n) + ldexp(1, -2 * DT_MANTISSA_BITS),
       DT_NAME " rand: variance %.5f near 1/12", var);
    is_int(0, bad_normal, DT_NAME " randn: element i is Philox draw i (f32, rounded once when narrower)");
    ok(fabs(gm) < 5 * sqrt(1.0 / n), DT_NAME " randn: mean %.5f near 0", gm);
    ok(fabs(gv - 1) < 5 * sqrt(2.0 / n) + 2 * DT_ULP, DT_NAME " randn: variance %.5f near 1", gv);
    free(v);
    free(v2);
    free(v3);
    free(w);
    tensor_free(u);
    tensor_free(u2);
    tensor_free(u3);
    tensor_free(g);
    tensor_f32_free(u32);
    tensor_f32_free(g32);
}

/* What tensor_print writes for t. */
static char *DTFN(printed)(const TT *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f || tensor_print(t, f) != TENDO_OK)
        bail("print failed");
    fclose(f);
    return buf;
}

static void DTFN(test_print)(void)
{
    TT *a = TFN(arange)(0, 6, 1, tendo_cpu());
    TT *m = tensor_reshape(a, TENDO_SHAPE(2, 3));
    TT *t = tensor_transpose(m, 0, 1);
    TT *h = TFN(full)(TENDO_SHAPE(2), 0.5, tendo_cpu());
    TT *big = TFN(zeros)(TENDO_SHAPE(2000), tendo_cpu());
    char *s;

    s = DTFN(printed)(m);
    is_string("[[0. 1. 2.]\n [3. 4. 5.]]\n", s, DT_NAME " print of a 2x3 matrix");
    free(s);
    s = DTFN(printed)(t);
    is_string("[[0. 3.]\n [1. 4.]\n [2. 5.]]\n", s, DT_NAME " print of its transpose");
    free(s);
    s = DTFN(printed)(h);
    is_string("[0.5 0.5]\n", s, DT_NAME " print of halves");
    free(s);
    s = DTFN(printed)(big);
    is_string("[0. 0. 0. ... 0. 0. 0.]\n", s, DT_NAME " print summarizes 2000 elements");
    free(s);
    tensor_free(a);
    tensor_free(m);
    tensor_free(t);
    tensor_free(h);
    tensor_free(big);
}

static void DTFN(test_tensor)(void)
{
    DTFN(test_fills)();
    DTFN(test_from_data_and_arange)();
    DTFN(test_copies)();
    DTFN(test_big_transpose)();
    DTFN(test_random)();
    DTFN(test_print)();
}
