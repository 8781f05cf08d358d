/* src/cpu/skinny-kernels.h - the vector kernels of src/cpu/skinny.c, written
 * once for any vector width: skinny.c includes this file with SK_WIDTH 8
 * (AVX2 + FMA + F16C, __m256) and 16 (AVX-512, __m512); each function's
 * name gets the width as a suffix (SK(dot) is dot_8 or dot_16).
 *
 * A weight element of kind SK_F32, SK_F16 or SK_BF16 is widened exactly to
 * f32 in a register as it is loaded; A is f32 already (skinny.c's copy, its
 * rows padded with zeros to whole vectors).  A run shorter than a vector
 * (the end of a row) is copied into a zeroed buffer and loaded from there,
 * so every element goes through the same arithmetic wherever it sits. */

#if SK_WIDTH == 8
#define SK(name) name##_8
#define SK_TARGET __attribute__((target("avx2,fma,f16c")))
#define VF __m256
#define VF_ZERO _mm256_setzero_ps
#define VF_LOADU _mm256_loadu_ps
#define VF_STOREU _mm256_storeu_ps
#define VF_SET1 _mm256_set1_ps
#define VF_FMADD _mm256_fmadd_ps
#define LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define VI __m256i
#define VI_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VI_EVEN_BF16(v) _mm256_castsi256_ps(_mm256_slli_epi32(v, 16))
#define VI_ODD_BF16(v) _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)))
#define LOAD_BF16(p)                                                                                           \
    _mm256_castsi256_ps(                                                                                       \
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
/* The lanes of v summed in a fixed order (halves, then pairs). */
SK_TARGET static inline float SK(hsum)(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#elif SK_WIDTH == 16
#define SK(name) name##_16
#define SK_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))
#define VF __m512
#define VF_ZERO _mm512_setzero_ps
#define VF_LOADU _mm512_loadu_ps
#define VF_STOREU _mm512_storeu_ps
#define VF_SET1 _mm512_set1_ps
#define VF_FMADD _mm512_fmadd_ps
#define LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define VI __m512i
#define VI_LOADU(p) _mm512_loadu_si512((const void *)(p))
#define VI_EVEN_BF16(v) _mm512_castsi512_ps(_mm512_slli_epi32(v, 16))
#define VI_ODD_BF16(v) _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)))
#define LOAD_BF16(p)                                                                                           \
    _mm512_castsi512_ps(                                                                                       \
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p))), 16))
SK_TARGET static inline float SK(hsum)(__m512 v) { return _mm512_reduce_add_ps(v); }
#else
#error "SK_WIDTH must be 8 or 16"
#endif

#define W SK_WIDTH
/* Weight rows a dot tile of more than two rows of A takes: four rows of A
 * by SK_DOT_NJ weight rows are 4 * SK_DOT_NJ accumulators, plus the weight
 * vectors and a vector of A, in the 16 registers of AVX2 (3: 16 of them)
 * or the 32 of AVX-512 (4: 21). */
#define SK_DOT_NJ (W == 8 ? 3 : 4)
/* The most weight rows axpy_group adds into C in one pass. */
#define SK_GROUP 8
#define SK_INLINE SK_TARGET static inline __attribute__((always_inline))
/* The loops over a tile's rows and weight rows run a constant number of
 * times: unrolled, their accumulators live in registers. */
#define SK_UNROLL _Pragma("GCC unroll 8")

/* How a dot kernel of kind over `rows` rows of A, on a team of `threads`,
 * fetches its weight.  Each stream SK_AHEAD on (skinny.c), but for one or
 * two rows on AVX-512 on an AMD CPU, whose hardware prefetchers feed those
 * faster unaided (Zen 4, out of cache, [1, 4096] by [4096, 4096] and
 * [4096, 11008] weights, f32, f16 and bf16, both layouts, 1 and 2 threads,
 * five interleaved rounds: 0.73-0.92 of the time in 17 cases of 18, 1.01
 * in the other; in cache 0.71-1.07), where the Xeon the prefetches were
 * measured on needs them; AVX2's narrower loads keep them.  There f16, and
 * f32 on one thread, stage each next tile's rows into L2 (SK(stage)), and
 * bf16 leaves it to the hardware.  Zen 4, [n, k] weights viewed
 * transposed, interleaved rounds, staged against nothing fetched, out of
 * cache: f16 one row [4096, 4096]^T 1.01 / 0.95 of the time at 1 / 2
 * threads, [11008, 4096]^T 0.92 / 0.99, two rows 0.85-0.86 (in cache
 * 0.59-0.91); f32 one row 0.88-0.90 on one thread (eight rows side by side
 * outrun its hardware prefetchers: [11008, 4096]^T at 23 GB/s, not 21),
 * two rows 0.86, but on two threads one row 0.97-1.02 (two rows 0.84), and
 * tendo-generate's f32 decode step (bench/decoder.py's model, weights of
 * [512, 512] to [32000, 512]) 0.85-0.89 on one thread, 1.07 on two; bf16
 * widened 0.97-1.07, and its two streams by vdpbf16ps 1.14-1.21.  Fetching
 * each stream 2 or 4 KB ahead into L2 instead measured as staging did (f32
 * 0.93-1.03 of it).  The [k, n] kernels: SK(axpy_fetch). */
SK_TARGET static inline int SK(dot_fetch)(int kind, int64_t rows, int threads)
{
    if (!(W == 16 && rows <= 2 && tendo__cpu_amd()))
        return SK_FETCH_AHEAD;
    return kind == SK_F16 || (kind == SK_F32 && threads == 1) ? SK_FETCH_STAGE : SK_FETCH_NONE;
}

/* How axpy_rows fetches a [k, n] weight: on an AMD CPU, the next group of
 * weight rows staged into L2 while the current one is read (SK(stage)), so
 * that memory sees one stream a thread, in address order, where the group's
 * loads are eight streams side by side.  Zen 4, out of cache, five
 * interleaved rounds, against no prefetch (AVX-512, one row of A: bf16
 * [1, 4096] x [4096, 11008] 0.79-0.80 of the time at 1 and 2 threads, f16
 * 0.88-0.95, f32 0.91, bf16 [1, 4096] x [4096, 4096] 0.94) and against
 * SK_AHEAD (AVX2: one row 0.99-1.00, f32 0.82, two and four rows
 * 0.83-0.85).  A standalone read of bf16 [4096, 11008] at two threads put
 * the staged groups at 28.0-29.7 GB/s against 23.8-24.6 unprefetched and
 * 29.2-30.8 for the dot kernel's rows; staging two groups ahead, or groups
 * of four rows, read no faster.  Other CPUs keep SK_AHEAD, as measured on
 * the Xeon. */
SK_TARGET static inline int SK(axpy_fetch)(void) { return tendo__cpu_amd() ? SK_FETCH_STAGE : SK_FETCH_AHEAD; }

/* Asks for the next G lines of the staged rows st (from row *seg, byte
 * *off on) into L2, in memory order: G lines for each line of G rows the
 * group reads, so the next group is in L2 as this one ends. */
SK_INLINE void SK(stage)(int G, const sk_stage *st, int *seg, int64_t *off)
{
    SK_UNROLL
    for (int g = 0; g < G; g++)
        if (*seg < st->rows) {
            SK_STAGE_LINE(st->first + *seg * st->stride + *off);
            if ((*off += 64) >= st->bytes)
                *off = 0, ++*seg;
        }
}

/* W elements of kind at p, widened to f32. */
SK_INLINE VF SK(load)(int kind, const char *p)
{
    return kind == SK_F16 ? LOAD_F16(p) : kind == SK_BF16 ? LOAD_BF16(p) : VF_LOADU((const float *)(const void *)p);
}

/* The first n (< W) elements of kind at p, the rest zero. */
SK_INLINE VF SK(load_part)(int kind, const char *p, int64_t n)
{
    char buf[W * 4] = {0};

    memcpy(buf, p, (size_t)n * (kind == SK_F32 ? 4 : 2));
    return SK(load)(kind, buf);
}

/* One vector of k of a dot_tile: acc[i][j] += ap[i*lda ..] * wv[j], j < NJ. */
SK_INLINE void SK(dot_step)(int MI, int NJ, const float *ap, int64_t lda, const VF wv[8], VF acc[4][8])
{
    SK_UNROLL
    for (int i = 0; i < MI; i++) {
        VF a = VF_LOADU(ap + i * lda);
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            acc[i][j] = VF_FMADD(a, wv[j], acc[i][j]);
    }
}

/* c[i*ldc + cj[j]] += the dot product of row i of ap (row stride lda, zero
 * padded to whole vectors) and weight row w[j] (elements of kind), over k,
 * for i < MI, j < nj <= NJ.  Each (i, j) has its own accumulator, summed
 * across lanes at the end.  fetch: how the weight is fetched (SK(dot_fetch));
 * where staged, the rows of next (the next tile's). */
SK_INLINE void SK(dot_tile)(int kind, int fetch, int MI, int NJ, int64_t k, const float *ap, int64_t lda,
                            const char *const w[8], float *c, int64_t ldc, const int64_t cj[8], int nj,
                            const sk_stage *next)
{
    int64_t es = kind == SK_F32 ? 4 : 2, p = 0, off = 0;
    int seg = 0;
    const sk_stage st = {next->first, next->stride, k * es, next->rows};
    VF acc[4][8];

    SK_UNROLL
    for (int i = 0; i < MI; i++)
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            acc[i][j] = VF_ZERO();
    for (; p + W <= k; p += W) {
        VF wv[8];
        if (fetch == SK_FETCH_STAGE && ((p * es) & 63) == 0)
            SK(stage)(NJ, &st, &seg, &off);
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            if (fetch == SK_FETCH_AHEAD)
                SK_PREFETCH(w[j] + p * es);
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            wv[j] = SK(load)(kind, w[j] + p * es);
        SK(dot_step)(MI, NJ, ap + p, lda, wv, acc);
    }
    if (p < k) {
        VF wv[8];
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            wv[j] = SK(load_part)(kind, w[j] + p * es, k - p);
        SK(dot_step)(MI, NJ, ap + p, lda, wv, acc);
    }
    SK_UNROLL
    for (int i = 0; i < MI; i++)
        SK_UNROLL
        for (int j = 0; j < NJ; j++)
            if (j < nj)
                c[i * ldc + cj[j]] += SK(hsum)(acc[i][j]);
}

/* C (m x n, row stride ldc) += A W^T over k: the weight's row j at w + j *
 * ldw bytes, in the tiles of SK_DOT_TILES; but one or two rows of A with
 * more than one thread running (tendo__team_threads: the product's team,
 * one for a product too small to split, not the threads allowed) take
 * four weight rows a tile, not eight: four streams a thread read an
 * out-of-cache weight faster when two threads
 * read at once (Zen 4, 2 threads, f16 and f32 [1, 4096] x [4096, 4096]^T
 * and x [11008, 4096]^T, two sittings of five and seven interleaved
 * rounds: 0.82-0.97 of the time, AVX2 0.85-0.90; two streams 1.01-1.10
 * of four), where one thread reads as fast or faster with eight (f16 out
 * of cache 1.00 with four, in cache 1.38).  A weight the last-level cache
 * holds is read faster by eight at two threads too (f16 [4096, 4096]^T
 * hot: 1.28-1.36 with four), but a decoder reads each weight once per
 * token, after all the others.  Fetched as SK(dot_fetch) says. */
SK_INLINE void SK(dot)(int kind, int64_t m, int64_t n, int64_t k, const float *ap, int64_t lda, const char *w,
                       int64_t ldw, float *c, int64_t ldc)
{
    const int threads = tendo__team_threads(), fetch = SK(dot_fetch)(kind, m, threads);
#define SK_TILE(MI, NJ, ai, wr, ci, cj, nj, next)                                                              \
    SK(dot_tile)(kind, fetch, MI, NJ, k, ai, lda, wr, ci, ldc, cj, nj, next)
    if (m <= 2 && threads > 1) {
        SK_DOT_TILES_NJ(4, m, n, ap, lda, w, ldw, c, ldc, SK_TILE)
    } else {
        SK_DOT_TILES(SK_DOT_NJ, m, n, ap, lda, w, ldw, c, ldc, SK_TILE);
    }
#undef SK_TILE
}

/* Rows i < MI of C (n columns, row stride ldc) += sum over the G (1 to
 * SK_GROUP) weight rows b[g] of ap[i*lda + g] * b[g]: one multiply-add per
 * element and weight row, in increasing g (so the grouping changes no
 * bits: only how often C is loaded and stored).  Stream g reads row
 * b[g] now and the row next bytes on in the next group, so near the end
 * of a row its prefetches ask for the start of that one, not of the
 * following row, which (but for the last stream's) this group reads
 * already.  A short row (a thread's share of a [k, n] weight's columns:
 * 4 KB of f16 4096 at two threads) thus starts prefetched (a Xeon, Emerald
 * Rapids, out of cache, f16, bf16 and f32 [1, 4096] x [4096, 4096] at two
 * threads: 0.89-0.96 of the time).  fetch: SK_FETCH_AHEAD so, or
 * SK_FETCH_STAGE, the rows st (the next group's) staged instead
 * (axpy_rows). */
SK_INLINE void SK(axpy_group)(int kind, int fetch, int MI, int G, int64_t n, const float *ap, int64_t lda,
                              const char *const b[SK_GROUP], int64_t next, const sk_stage *st, float *c,
                              int64_t ldc)
{
    int64_t es = kind == SK_F32 ? 4 : 2, j = 0, row = n * es, off = 0;
    int seg = 0;
    VF a[8][SK_GROUP];

    SK_UNROLL
    for (int i = 0; i < MI; i++)
        SK_UNROLL
        for (int g = 0; g < G; g++)
            a[i][g] = VF_SET1(ap[i * lda + g]);
    for (; j + W <= n; j += W) {
        VF bv[SK_GROUP];
        int64_t ahead = j * es + SK_AHEAD, at = ahead < row ? ahead : ahead - row + next;
        if (fetch == SK_FETCH_STAGE && ((j * es) & 63) == 0)
            SK(stage)(G, st, &seg, &off);
        SK_UNROLL
        for (int g = 0; g < G; g++)
            if (fetch == SK_FETCH_AHEAD)
                SK_PREFETCH_AT(b[g], at);
        SK_UNROLL
        for (int g = 0; g < G; g++)
            bv[g] = SK(load)(kind, b[g] + j * es);
        SK_UNROLL
        for (int i = 0; i < MI; i++) {
            VF cv = VF_LOADU(c + i * ldc + j);
            SK_UNROLL
            for (int g = 0; g < G; g++)
                cv = VF_FMADD(a[i][g], bv[g], cv);
            VF_STOREU(c + i * ldc + j, cv);
        }
    }
    if (j < n) {
        VF bv[SK_GROUP];
        SK_UNROLL
        for (int g = 0; g < G; g++)
            bv[g] = SK(load_part)(kind, b[g] + j * es, n - j);
        SK_UNROLL
        for (int i = 0; i < MI; i++) {
            float part[W] = {0};
            VF cv;
            memcpy(part, c + i * ldc + j, (size_t)(n - j) * sizeof(float));
            cv = VF_LOADU(part);
            SK_UNROLL
            for (int g = 0; g < G; g++)
                cv = VF_FMADD(a[i][g], bv[g], cv);
            VF_STOREU(part, cv);
            memcpy(c + i * ldc + j, part, (size_t)(n - j) * sizeof(float));
        }
    }
}

/* One row of C += sum over the G weight rows b[g] of a[g] * b[g], for bf16
 * rows of n2 columns (a multiple of 2W), C held pair-split: each block of
 * 2W columns keeps its W even columns, then its W odd ones.  2W bf16 of a
 * row are one load, widened exactly by a shift (the even ones) and a mask
 * (the odd ones), with no shuffle; the sums are axpy_group's, in the same
 * order (the same bits), its weight fetched as fetch says. */
SK_INLINE void SK(axpy_split_group)(int fetch, int G, int64_t n2, const float *ap, const char *const b[SK_GROUP],
                                    int64_t next, const sk_stage *st, float *c)
{
    int64_t row = n2 * 2, off = 0;
    int seg = 0;
    VF a[SK_GROUP];

    SK_UNROLL
    for (int g = 0; g < G; g++)
        a[g] = VF_SET1(ap[g]);
    for (int64_t j = 0; j < n2; j += 2 * W) {
        VF ce = VF_LOADU(c + j), co = VF_LOADU(c + j + W);
        int64_t ahead = j * 2 + SK_AHEAD, at = ahead < row ? ahead : ahead - row + next;
        if (fetch == SK_FETCH_STAGE)
            SK(stage)(G, st, &seg, &off);
        SK_UNROLL
        for (int g = 0; g < G; g++)
            if (fetch == SK_FETCH_AHEAD)
                SK_PREFETCH_AT(b[g], at);
        SK_UNROLL
        for (int g = 0; g < G; g++) {
            VI v = VI_LOADU(b[g] + j * 2);
            ce = VF_FMADD(a[g], VI_EVEN_BF16(v), ce);
            co = VF_FMADD(a[g], VI_ODD_BF16(v), co);
        }
        VF_STOREU(c + j, ce);
        VF_STOREU(c + j + W, co);
    }
}

/* Rows i < MI of C += A's rows times the k weight rows (row p at b + p *
 * ldb bytes): eight weight rows per pass over C for one or two rows of A
 * (a decoder's: C is loaded and stored half as often), four for more,
 * whose broadcast elements of A take the registers.  split: one row of
 * bf16 rows into a pair-split C (axpy_split_group; MI 1, n a multiple of
 * 2W).  The weight fetched as SK(axpy_fetch) says: stage, the next
 * group of rows. */
SK_INLINE void SK(axpy_rows)(int kind, bool split, int MI, int64_t n, int64_t k, const float *ap, int64_t lda,
                             const char *b, int64_t ldb, float *c, int64_t ldc)
{
    const int G = MI <= 2 ? SK_GROUP : 4, fetch = SK(axpy_fetch)();
    const sk_stage none = {b, 0, 0, 0};
    int64_t p = 0;

    for (; p + G <= k; p += G) {
        const char *br[SK_GROUP];
        /* the next group: up to G rows, as many as the weight has left */
        const int next_rows = (int)(k - p - G < G ? k - p - G : G);
        const sk_stage st = {next_rows > 0 ? b + (p + G) * ldb : b, ldb, n * (kind == SK_F32 ? 4 : 2), next_rows};
        SK_UNROLL
        for (int g = 0; g < SK_GROUP; g++)
            br[g] = b + (p + (g < G ? g : 0)) * ldb;
        if (split)
            SK(axpy_split_group)(fetch, G, n, ap + p, br, G * ldb, &st, c);
        else
            SK(axpy_group)(kind, fetch, MI, G, n, ap + p, lda, br, G * ldb, &st, c, ldc);
    }
    for (; p < k; p++) {
        const char *br[SK_GROUP] = {b + p * ldb};
        if (split)
            SK(axpy_split_group)(fetch, 1, n, ap + p, br, ldb, &none, c);
        else
            SK(axpy_group)(kind, fetch, MI, 1, n, ap + p, lda, br, ldb, &none, c, ldc);
    }
}

/* C (m x n) += A B for B's rows at b + p * ldb bytes: A's rows eight at a time. */
SK_INLINE void SK(axpy)(int kind, int64_t m, int64_t n, int64_t k, const float *ap, int64_t lda, const char *b,
                        int64_t ldb, float *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i += 8) {
        const float *ai = ap + i * lda;
        float *ci = c + i * ldc;

        switch (m - i < 8 ? m - i : 8) {
        case 1: SK(axpy_rows)(kind, false, 1, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 2: SK(axpy_rows)(kind, false, 2, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 3: SK(axpy_rows)(kind, false, 3, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 4: SK(axpy_rows)(kind, false, 4, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 5: SK(axpy_rows)(kind, false, 5, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 6: SK(axpy_rows)(kind, false, 6, n, k, ai, lda, b, ldb, ci, ldc); break;
        case 7: SK(axpy_rows)(kind, false, 7, n, k, ai, lda, b, ldb, ci, ldc); break;
        default: SK(axpy_rows)(kind, false, 8, n, k, ai, lda, b, ldb, ci, ldc); break;
        }
    }
}

/* One row of C (n columns, zero) += a B for bf16 B (rows at b + p * ldb
 * bytes): the whole blocks of 2W columns pair-split (axpy_rows with
 * axpy_split_group), then put back in order; the last n mod 2W
 * columns by axpy.  A decoder's matrix-vector product by a [k, n] bf16
 * weight: on a Zen 4, AVX-512, five interleaved rounds, [1, 4096] x [4096,
 * 4096] and x [4096, 11008], 1 and 2 threads, 0.90-0.97 of axpy's time
 * out of cache, 0.96-1.00 in it (medians); AVX2 (the same machine under
 * TENDO_CPU=avx2) lost at two threads (1.01-1.35; one thread 0.96-1.00)
 * and two rows of A lost (1.01-1.09; four and eight 0.97-1.03), so those
 * keep axpy. */
SK_INLINE void SK(axpy_bf16_split)(int64_t n, int64_t k, const float *ap, const char *b, int64_t ldb, float *c)
{
    int64_t n2 = n / (2 * W) * (2 * W);

    if (n2 > 0)
        SK(axpy_rows)(SK_BF16, true, 1, n2, k, ap, 0, b, ldb, c, 0);
    for (int64_t j = 0; j < n2; j += 2 * W) {
        float split[2 * W];
        memcpy(split, c + j, sizeof split);
        for (int l = 0; l < W; l++)
            c[j + 2 * l] = split[l], c[j + 2 * l + 1] = split[W + l];
    }
    if (n2 < n)
        SK(axpy)(SK_BF16, 1, n - n2, k, ap, 0, b + n2 * 2, ldb, c + n2, 0);
}

/* The entry points of each kind (skinny.c's table): dot_f32 ... axpy_bf16. */
#define SK_ENTRY(op, name, KIND)                                                                                 \
    SK_TARGET static void SK(name)(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,  \
                                   int64_t ldb, void *c, int64_t ldc)                                         \
    {                                                                                                         \
        SK(op)(KIND, m, n, k, ap, lda, b, ldb, c, ldc);                                                       \
    }
SK_ENTRY(dot, dot_f32, SK_F32)
SK_ENTRY(dot, dot_f16, SK_F16)
SK_ENTRY(dot, dot_bf16, SK_BF16)
SK_ENTRY(axpy, axpy_f32, SK_F32)
SK_ENTRY(axpy, axpy_f16, SK_F16)
#undef SK_ENTRY
/* bf16 by a [k, n] weight: one row of A pair-split on AVX-512, else axpy. */
SK_TARGET static void SK(axpy_bf16)(int64_t m, int64_t n, int64_t k, const void *ap, int64_t lda, const char *b,
                                    int64_t ldb, void *c, int64_t ldc)
{
    if (W == 16 && m == 1)
        SK(axpy_bf16_split)(n, k, ap, b, ldb, c);
    else
        SK(axpy)(SK_BF16, m, n, k, ap, lda, b, ldb, c, ldc);
}

#undef SK
#undef SK_TARGET
#undef SK_INLINE
#undef SK_UNROLL
#undef VF
#undef VF_ZERO
#undef VF_LOADU
#undef VF_STOREU
#undef VF_SET1
#undef VF_FMADD
#undef LOAD_F16
#undef LOAD_BF16
#undef VI
#undef VI_LOADU
#undef VI_EVEN_BF16
#undef VI_ODD_BF16
#undef W
#undef SK_DOT_NJ
#undef SK_GROUP
