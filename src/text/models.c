/* src/text/models.c - the models of tokenizer.json, which turn one word
 * into ids: WordPiece (greedy longest match), BPE (merges by rank, with
 * byte fallback) and WordLevel (the whole word); and the hash tables they
 * look up (`tokenizers`' models/). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "text/text.h"

/* ---- hash tables ------------------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* A power of two at least twice n. */
static size_t table_size(size_t n)
{
    size_t s = 16;

    while (s < 2 * n)
        s *= 2;
    return s;
}

int64_t tx_vocab_get(const tx_vocab *v, const char *s, size_t n)
{
    if (!v->nslot)
        return -1;
    for (size_t h = hash_bytes(s, n) & (v->nslot - 1);; h = (h + 1) & (v->nslot - 1)) {
        uint32_t e = v->slot[h];
        if (!e)
            return -1;
        if (v->len[e - 1] == n && !memcmp(v->str[e - 1], s, n))
            return v->id[e - 1];
    }
}

bool tx_vocab_init(const char *op, tx_vocab *v, size_t n)
{
    if (n >= UINT32_MAX / 2)
        return tendo__fail(TENDO_ERR_FORMAT, op, "a vocabulary of %zu entries", n), false;
    v->nslot = table_size(n);
    v->str = tendo__calloc(n ? n : 1, sizeof *v->str);
    v->len = tendo__calloc(n ? n : 1, sizeof *v->len);
    v->id = tendo__calloc(n ? n : 1, sizeof *v->id);
    v->slot = tendo__calloc(v->nslot, sizeof *v->slot);
    if (!v->str || !v->len || !v->id || !v->slot)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a vocabulary of %zu entries", n), false;
    return true;
}

bool tx_vocab_add(const char *op, tx_vocab *v, const char *s, size_t n, int64_t id)
{
    size_t h = hash_bytes(s, n) & (v->nslot - 1);
    char *copy;

    for (; v->slot[h]; h = (h + 1) & (v->nslot - 1)) {
        uint32_t e = v->slot[h];
        if (v->len[e - 1] == n && !memcmp(v->str[e - 1], s, n)) { /* a later entry wins */
            v->id[e - 1] = id;
            return true;
        }
    }
    if (2 * (v->n + 1) > v->nslot)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "vocabulary table full"), false;
    if (!(copy = tendo__malloc(n + 1)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for the vocabulary"), false;
    memcpy(copy, s, n);
    copy[n] = '\0';
    v->str[v->n] = copy;
    v->len[v->n] = n;
    v->id[v->n] = id;
    v->slot[h] = (uint32_t)++v->n;
    return true;
}

void tx_vocab_free(tx_vocab *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->str[i]);
    free(v->str);
    free(v->len);
    free(v->id);
    free(v->slot);
    *v = (tx_vocab){0};
}

bool tx_merges_init(const char *op, tx_merges *m, size_t n)
{
    m->nslot = table_size(n);
    m->key = tendo__calloc(m->nslot, sizeof *m->key);
    m->rank = tendo__calloc(m->nslot, sizeof *m->rank);
    m->merged = tendo__calloc(m->nslot, sizeof *m->merged);
    if (!m->key || !m->rank || !m->merged)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for %zu merges", n), false;
    return true;
}

static size_t merge_slot(const tx_merges *m, int64_t left, int64_t right)
{
    uint64_t key = ((uint64_t)left << 32 | (uint64_t)right) + 1;
    size_t h = hash_u64(key) & (m->nslot - 1);

    while (m->key[h] && m->key[h] != key)
        h = (h + 1) & (m->nslot - 1);
    return h;
}

void tx_merges_add(tx_merges *m, int64_t left, int64_t right, uint32_t rank, int64_t merged)
{
    size_t h = merge_slot(m, left, right); /* a later merge of the same pair wins, as in `tokenizers` */

    m->key[h] = ((uint64_t)left << 32 | (uint64_t)right) + 1;
    m->rank[h] = rank;
    m->merged[h] = merged;
}

/* The merge of (left, right): its rank and merged id, or false. */
static bool merge_of(const tx_merges *m, int64_t left, int64_t right, uint32_t *rank, int64_t *merged)
{
    size_t h;

    if (!m->nslot)
        return false;
    h = merge_slot(m, left, right);
    if (!m->key[h])
        return false;
    *rank = m->rank[h];
    *merged = m->merged[h];
    return true;
}

void tx_merges_free(tx_merges *m)
{
    free(m->key);
    free(m->rank);
    free(m->merged);
    *m = (tx_merges){0};
}

/* ---- WordPiece and WordLevel ------------------------------------------------------- */

static size_t count_chars(const char *s, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        k += ((uint8_t)s[i] & 0xC0) != 0x80;
    return k;
}

/* WordPiece: the longest vocabulary entry from the start, then from where it
 * ended with the continuing prefix, ...; one unknown token for the whole
 * word when a part has none, or when the word is too long. */
static bool wordpiece(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *out)
{
    size_t start = 0, keep = out->n, plen = m->prefix ? strlen(m->prefix) : 0;
    tx_str buf = {0};
    bool ok = true;

    if (count_chars(s, n) > m->max_chars)
        return tx_ids_push(op, out, m->unk);
    while (ok && start < n) {
        size_t end = n;
        int64_t id = -1;
        while (ok && start < end) {
            buf.n = 0;
            ok = (start > 0 ? tx_put(op, &buf, m->prefix, plen) : tx_put(op, &buf, "", 0)) &&
                 tx_put(op, &buf, s + start, end - start);
            if (ok && (id = tx_vocab_get(&m->vocab, buf.s, buf.n)) >= 0)
                break;
            do /* back one character */
                end--;
            while (end > start && ((uint8_t)s[end] & 0xC0) == 0x80);
        }
        if (!ok || id < 0)
            break;
        ok = tx_ids_push(op, out, id);
        start = end;
    }
    tx_str_free(&buf);
    if (ok && start < n) { /* a part with no entry */
        out->n = keep;
        ok = tx_ids_push(op, out, m->unk);
    }
    return ok;
}

static bool wordlevel(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *out)
{
    int64_t id = tx_vocab_get(&m->vocab, s, n);

    if (id < 0 && (id = m->unk) < 0)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "\"%.*s\" is not in the vocabulary, which has no unknown token",
                           (int)(n < 64 ? n : 64), s),
               false;
    return tx_ids_push(op, out, id);
}

/* ---- BPE ------------------------------------------------------------------------------ */

/* A candidate merge: of symbol pos with the next one, by rank, into merged. */
typedef struct {
    uint32_t rank;
    size_t pos;
    int64_t merged;
} candidate;

typedef struct {
    candidate *v;
    size_t n, cap;
} heap;

static bool before(candidate a, candidate b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

static bool heap_push(const char *op, heap *h, candidate c)
{
    size_t i;

    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 32;
        candidate *v = tendo__realloc(h->v, cap * sizeof *v);
        if (!v)
            return tendo__fail(TENDO_ERR_OOM, op, "out of memory for BPE merges"), false;
        h->v = v, h->cap = cap;
    }
    for (i = h->n++; i > 0 && before(c, h->v[(i - 1) / 2]); i = (i - 1) / 2)
        h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = c;
    return true;
}

static candidate heap_pop(heap *h)
{
    candidate top = h->v[0], last = h->v[--h->n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
            c++;
        if (!before(h->v[c], last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* The word's symbols: ids, linked both ways (-1 ends), merged ones dead. */
typedef struct {
    int64_t *id;
    ptrdiff_t *prev, *next;
    bool *dead;
    size_t n;
} symbols;

/* The symbols of the word before merging (`tokenizers`' BPE::merge_word):
 * each character, with the prefix after the first and the suffix on the
 * last; one missing from the vocabulary as its bytes' <0xXX> tokens, or as
 * the unknown token (consecutive ones fused when fuse_unk), or dropped. */
static bool initial_symbols(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *ids)
{
    tx_str c = {0};
    size_t i = 0, len;
    bool ok = true, pending = false;

    while (ok && i < n) {
        int64_t id;
        tx_decode(s + i, n - i, &len);
        c.n = 0;
        ok = (i > 0 && m->prefix ? tx_put(op, &c, m->prefix, strlen(m->prefix)) : tx_put(op, &c, "", 0)) &&
             tx_put(op, &c, s + i, len) && (i + len < n || !m->suffix || tx_put(op, &c, m->suffix, strlen(m->suffix)));
        i += len;
        if (!ok)
            break;
        if ((id = tx_vocab_get(&m->vocab, c.s, c.n)) >= 0) {
            if (pending)
                ok = tx_ids_push(op, ids, m->unk), pending = false;
            ok = ok && tx_ids_push(op, ids, id);
            continue;
        }
        if (m->byte_fallback) {
            bool all = true;
            for (size_t j = 0; j < c.n; j++)
                all = all && m->byte_id[(uint8_t)c.s[j]] >= 0;
            if (all) {
                for (size_t j = 0; ok && j < c.n; j++)
                    ok = tx_ids_push(op, ids, m->byte_id[(uint8_t)c.s[j]]);
                continue; /* a pending unknown token stays pending, as in `tokenizers` */
            }
        }
        if (m->unk >= 0) {
            if (pending && !m->fuse_unk)
                ok = tx_ids_push(op, ids, m->unk);
            pending = true;
        }
    }
    if (ok && pending)
        ok = tx_ids_push(op, ids, m->unk);
    tx_str_free(&c);
    return ok;
}

static bool bpe(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *out)
{
    tx_ids init = {0};
    symbols w = {0};
    heap h = {0};
    uint32_t rank;
    int64_t merged, id;
    bool ok;

    if (m->ignore_merges && (id = tx_vocab_get(&m->vocab, s, n)) >= 0)
        return tx_ids_push(op, out, id);
    if (!(ok = initial_symbols(op, m, s, n, &init)) || init.n == 0)
        goto done;
    w.n = init.n;
    w.id = init.v;
    w.prev = tendo__malloc(w.n * sizeof *w.prev);
    w.next = tendo__malloc(w.n * sizeof *w.next);
    w.dead = tendo__calloc(w.n, sizeof *w.dead);
    if (!w.prev || !w.next || !w.dead) {
        ok = (tendo__fail(TENDO_ERR_OOM, op, "out of memory for a word of %zu symbols", w.n), false);
        goto done;
    }
    for (size_t i = 0; i < w.n; i++) {
        w.prev[i] = (ptrdiff_t)i - 1;
        w.next[i] = i + 1 < w.n ? (ptrdiff_t)i + 1 : -1;
    }
    for (size_t i = 0; ok && i + 1 < w.n; i++)
        if (merge_of(&m->merges, w.id[i], w.id[i + 1], &rank, &merged))
            ok = heap_push(op, &h, (candidate){rank, i, merged});
    while (ok && h.n) {
        candidate c = heap_pop(&h);
        size_t p = c.pos, q;
        if (w.dead[p] || w.next[p] < 0)
            continue;
        q = (size_t)w.next[p];
        if (!merge_of(&m->merges, w.id[p], w.id[q], &rank, &merged) || merged != c.merged)
            continue; /* the pair changed since */
        w.id[p] = merged;
        w.dead[q] = true;
        w.next[p] = w.next[q];
        if (w.next[q] >= 0)
            w.prev[w.next[q]] = (ptrdiff_t)p;
        if (w.prev[p] >= 0 && merge_of(&m->merges, w.id[w.prev[p]], w.id[p], &rank, &merged))
            ok = heap_push(op, &h, (candidate){rank, (size_t)w.prev[p], merged});
        if (ok && w.next[p] >= 0 && merge_of(&m->merges, w.id[p], w.id[w.next[p]], &rank, &merged))
            ok = heap_push(op, &h, (candidate){rank, p, merged});
    }
    for (size_t i = 0; ok && i < w.n; i++)
        if (!w.dead[i])
            ok = tx_ids_push(op, out, w.id[i]);
done:
    free(init.v);
    free(w.prev);
    free(w.next);
    free(w.dead);
    free(h.v);
    return ok;
}

bool tx_model_encode(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *out)
{
    if (n == 0)
        return true;
    switch (m->kind) {
    case TX_M_WORDPIECE:
        return wordpiece(op, m, s, n, out);
    case TX_M_BPE:
        return bpe(op, m, s, n, out);
    case TX_M_WORDLEVEL:
        return wordlevel(op, m, s, n, out);
    }
    return tendo__fail(TENDO_ERR_INVALID_ARG, op, "unknown model %d", (int)m->kind), false;
}

void tx_model_free(tx_model *m)
{
    tx_vocab_free(&m->vocab);
    tx_merges_free(&m->merges);
    free(m->prefix);
    free(m->suffix);
}
