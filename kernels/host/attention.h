/* kernels/host/attention.h - the launch ABI of rope, attention and
 * attention's gradients on a GPU: plain C structs that
 * kernels/host/transformer.c fills in and the launchers of
 * kernels/attention.cu (kernels in kernels/attention.cuh and
 * kernels/attention_back.cuh) run.
 *
 * The kernels compute in one type, float or double (dbl), on dense
 * row-major operands already widened to it: kernels/host/transformer.c converts
 * the narrow floats on the device first, as the CPU does on the host
 * (src/cpu/attention.c).  Launchers return 0 or the cudaError_t of a bad
 * launch, and never wait. */
#ifndef TENDO_SRC_CUDA_ATTENTION_H
#define TENDO_SRC_CUDA_ATTENTION_H

#include <stdint.h>

#include "core/launch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rope of x (rows x hd values, rows a multiple of seq, position s = row %
 * seq) into out, pairing i with i + rot/2 or (interleaved) 2i with 2i+1
 * for i < rot/2; the rest is copied.  table: 2 * seq * rot/2 values of
 * scratch for the cosines and sines, which the launcher computes first
 * from pos (seq i64 positions) in double, as the CPU does. */
typedef struct {
    int64_t rows, seq, hd, rot;
    int interleaved;
    double base;
    const void *x;
    void *out, *table;
    const int64_t *pos;
} tendo__cu_rope;

/* out [batch, hq, lq, dv] = softmax(q k^T * scale + mask) v for q [batch,
 * hq, lq, d], k [batch, hkv, lk, d], v [batch, hkv, lk, dv] (dense), query
 * head h reading kv head h / (hq / hkv).  mask (or NULL) element (b, h, i,
 * j) is at sum(digit_d(b) * mask_lead[d]) + h * mask_h + i * mask_q + j *
 * mask_k (b's digits over lead[0..nlead)).  causal: query i sees keys j <=
 * i + lk - lq.  bq queries per block, keys staged bk at a time (chosen by
 * tendo__cu_attention_tiles). */
typedef struct {
    int64_t batch, hq, hkv, lq, lk, d, dv;
    int causal, nlead, bq, bk;
    double scale;
    int64_t lead[TENDO__CU_DIMS], mask_lead[TENDO__CU_DIMS];
    int64_t mask_h, mask_q, mask_k;
    const void *q, *k, *v, *mask;
    void *out;
} tendo__cu_attn;

/* attention's gradients (flash attention's backward, no Lq x Lk scores):
 * a, as the forward's, with out unused, plus the forward's result o and
 * its gradient dout ([batch, hq, lq, dv], dense, the compute type); dq,
 * dk, dv receive the gradients (dense, q's, k's, v's shape; dk and dv
 * both or neither), lse and dd 2 x batch*hq*lq values of scratch.  The
 * query side runs a.bq queries a block against a.bk keys at a time, the
 * key side bq2 queries against bk2 keys (tendo__cu_attention_back_tiles). */
typedef struct {
    tendo__cu_attn a;
    int bq2, bk2;
    const void *o, *dout;
    void *dq, *dk, *dv, *lse, *dd;
} tendo__cu_attn_back;

int tendo__cu_rope_run(const tendo__cu_rope *r, int dbl);
/* Picks a->bq and a->bk for a->d and a->dv so that a block's tiles fit the
 * shared memory every GPU (and the simulator) gives; 0 when even one query
 * and one key do not fit (D too large), else 1. */
int tendo__cu_attention_tiles(tendo__cu_attn *a, int dbl);
int tendo__cu_attention_run(const tendo__cu_attn *a, int dbl);
/* The tiles of attention's backward, as tendo__cu_attention_tiles; 0 when
 * D is too large. */
int tendo__cu_attention_back_tiles(tendo__cu_attn_back *b, int dbl);
int tendo__cu_attention_back_run(const tendo__cu_attn_back *b, int dbl);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_SRC_CUDA_ATTENTION_H */
