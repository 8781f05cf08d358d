/* kernels/attention.cu - the launchers of rope, attention and attention's
 * gradients (the ABI is kernels/host/attention.h, the kernels
 * kernels/attention.cuh and kernels/attention_back.cuh). */
#include "attention_back.cuh"

/* The dynamic shared memory every GPU and the simulator give a block
 * without opting in. */
#define TENDO_ATTN_SHARED (48 * 1024)

template <typename T>
static int rope_as(const tendo__cu_rope *r)
{
    int64_t n = r->rows * r->hd, tab = r->seq * (r->rot / 2);

    if (tab > 0)
        TENDO_LAUNCH(tendo_blocks(tab, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_rope_table<T>)(*r);
    if (n > 0)
        TENDO_LAUNCH(tendo_blocks(n, TENDO_THREADS), TENDO_THREADS, 0, cudaStreamPerThread, k_rope<T>)(*r);
    return tendo_launched();
}

extern "C" int tendo__cu_rope_run(const tendo__cu_rope *r, int dbl)
{
    return dbl ? rope_as<double>(r) : rope_as<float>(r);
}

extern "C" int tendo__cu_attention_tiles(tendo__cu_attn *a, int dbl)
{
    static const int bqs[] = {16, 8, 4, 2, 1}, bks[] = {64, 32, 16, 8, 4, 2, 1};
    int64_t size = dbl ? (int64_t)sizeof(double) : (int64_t)sizeof(float);

    if (a->d > TENDO_ATTN_SHARED || a->dv > TENDO_ATTN_SHARED) /* and no product below overflows */
        return 0;

    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            if (tendo_attn_shared(bqs[i], bks[j], a->d, a->dv) * size <= TENDO_ATTN_SHARED) {
                a->bq = bqs[i];
                a->bk = bks[j];
                return 1;
            }
    return 0;
}

/* The kernel with R output values per thread in registers (0: none). */
template <typename T, int R>
static int attention_as(const tendo__cu_attn *a, unsigned blocks)
{
    size_t shmem = (size_t)tendo_attn_shared(a->bq, a->bk, a->d, a->dv) * sizeof(T);

    TENDO_LAUNCH(blocks, TENDO_ATTN_THREADS, shmem, cudaStreamPerThread, k_attention<T, R>)(*a);
    return tendo_launched();
}

template <typename T>
static int attention_pick(const tendo__cu_attn *a, unsigned blocks)
{
    int64_t per_thread = (a->bq * a->dv + TENDO_ATTN_THREADS - 1) / TENDO_ATTN_THREADS;

    if (per_thread <= 4)
        return attention_as<T, 4>(a, blocks);
    if (per_thread <= 8)
        return attention_as<T, 8>(a, blocks);
    if (per_thread <= 16)
        return attention_as<T, 16>(a, blocks);
    return attention_as<T, 0>(a, blocks);
}

extern "C" int tendo__cu_attention_run(const tendo__cu_attn *a, int dbl)
{
    int64_t blocks = a->batch * a->hq * ((a->lq + a->bq - 1) / a->bq);

    if (blocks == 0 || a->dv == 0)
        return 0;
    if (blocks > INT32_MAX)
        return (int)cudaErrorInvalidConfiguration;
    return dbl ? attention_pick<double>(a, (unsigned)blocks) : attention_pick<float>(a, (unsigned)blocks);
}

extern "C" int tendo__cu_attention_back_tiles(tendo__cu_attn_back *b, int dbl)
{
    static const int tiles[] = {32, 16, 8, 4, 2, 1};
    int64_t size = dbl ? (int64_t)sizeof(double) : (int64_t)sizeof(float), d = b->a.d, dv = b->a.dv;
    bool q = false, kv = false;

    if (d > TENDO_ATTN_SHARED || dv > TENDO_ATTN_SHARED) /* and no product below overflows */
        return 0;
    for (int i = 0; i < 6; i++) {
        if (!q && tendo_attn_back_q_shared(tiles[i], tiles[i], d, dv) * size <= TENDO_ATTN_SHARED) {
            b->a.bq = b->a.bk = tiles[i];
            q = true;
        }
        if (!kv && tendo_attn_back_kv_shared(tiles[i], tiles[i], d, dv) * size <= TENDO_ATTN_SHARED) {
            b->bq2 = b->bk2 = tiles[i];
            kv = true;
        }
    }
    return q && kv;
}

template <typename T>
static int attention_back_as(const tendo__cu_attn_back *b, unsigned qblocks, unsigned kvblocks)
{
    const tendo__cu_attn *a = &b->a;
    size_t qshm = (size_t)tendo_attn_back_q_shared(a->bq, a->bk, a->d, a->dv) * sizeof(T);
    size_t kvshm = (size_t)tendo_attn_back_kv_shared(b->bq2, b->bk2, a->d, a->dv) * sizeof(T);
    int err;

    if (qblocks > 0) {
        TENDO_LAUNCH(qblocks, TENDO_ATTN_THREADS, qshm, cudaStreamPerThread, k_attn_back_q<T>)(*b);
        if ((err = tendo_launched()) != 0)
            return err;
    }
    if (!b->dk || kvblocks == 0)
        return 0;
    TENDO_LAUNCH(kvblocks, TENDO_ATTN_THREADS, kvshm, cudaStreamPerThread, k_attn_back_kv<T>)(*b);
    return tendo_launched();
}

extern "C" int tendo__cu_attention_back_run(const tendo__cu_attn_back *b, int dbl)
{
    const tendo__cu_attn *a = &b->a;
    int64_t qblocks = a->batch * a->hq * ((a->lq + a->bq - 1) / a->bq);
    int64_t kvblocks = a->batch * a->hkv * ((a->lk + b->bk2 - 1) / b->bk2);

    if (qblocks > INT32_MAX || kvblocks > INT32_MAX)
        return (int)cudaErrorInvalidConfiguration;
    return dbl ? attention_back_as<double>(b, (unsigned)qblocks, (unsigned)kvblocks)
               : attention_back_as<float>(b, (unsigned)qblocks, (unsigned)kvblocks);
}
