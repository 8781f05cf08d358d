/* src/text/tokenizer.c - tendo_tokenizer's public functions: the encoding
 * pipeline (added tokens, normalizer, pre-tokenizer, model, special tokens)
 * and decoding (ids to tokens, the decoder chain). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "text/text.h"

tendo_tokenizer *tendo_tokenizer_load(const char *path)
{
    static const char op[] = "tokenizer_load";
    tendo_tokenizer *tok;

    if (!path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "path is NULL"), NULL;
    if (!(tok = tendo__calloc(1, sizeof *tok)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a tokenizer"), NULL;
    if (!tx_load(op, path, tok)) {
        tendo_tokenizer_free(tok);
        return NULL;
    }
    return tok;
}

void tendo_tokenizer_free(tendo_tokenizer *tok)
{
    if (!tok)
        return;
    tx_release(tok);
    free(tok);
}

/* ---- added tokens -------------------------------------------------------------- */

/* The code point that ends s[0..n) (n > 0), its first byte at *at. */
static uint32_t last_char(const char *s, size_t n, size_t *at)
{
    size_t k = n - 1, len;

    while (k > 0 && ((uint8_t)s[k] & 0xC0) == 0x80)
        k--;
    *at = k;
    return tx_decode(s + k, n - k, &len);
}

/* The added token (of the normalized ones, or the others) that starts at
 * s[i], the longest when several do; NULL when none. */
static const tx_added *added_at(const tendo_tokenizer *tok, bool normalized, const char *s, size_t n, size_t i)
{
    const tx_added *best = NULL;
    size_t best_n = 0;

    for (size_t k = 0; k < tok->nadded; k++) {
        const tx_added *a = &tok->added[k];
        const char *pat = normalized ? a->norm : a->content;
        size_t pn = normalized ? a->norm_n : a->n;
        if (a->normalized != normalized || pn == 0 || pn <= best_n || pn > n - i || pat[0] != s[i])
            continue;
        if (!memcmp(s + i, pat, pn))
            best = a, best_n = pn;
    }
    return best;
}

/* Splits p by the added tokens of one kind (`tokenizers`' leftmost-longest
 * AddedVocabulary::find_matches, with single_word, lstrip and rstrip),
 * appending the pieces to out. */
static bool split_added(const char *op, const tendo_tokenizer *tok, bool normalized, const tx_piece *p, tx_pieces *out)
{
    const char *s = p->s;
    size_t n = p->n, done = 0, i = 0, len, at;
    bool ok = true;

    while (ok && i < n) {
        const tx_added *a = added_at(tok, normalized, s, n, i);
        size_t start = i, stop;
        if (!a) {
            i++;
            continue;
        }
        stop = i + (normalized ? a->norm_n : a->n);
        i = stop; /* the search goes on after this match, kept or not */
        if (a->single_word && ((start > 0 && tx_is_word(last_char(s, start, &at))) ||
                               (stop < n && tx_is_word(tx_decode(s + stop, n - stop, &len)))))
            continue;
        if (a->lstrip) {
            size_t k = start;
            while (k > 0 && tx_is_whitespace(last_char(s, k, &at)))
                k = at;
            start = k > done ? k : done;
        }
        if (a->rstrip)
            while (stop < n && tx_is_whitespace(tx_decode(s + stop, n - stop, &len)))
                stop += len;
        if (done < start)
            ok = tx_pieces_push(op, out, s + done, start - done, -1, p->at_start && done == 0);
        ok = ok && tx_pieces_push(op, out, s + start, stop - start, a->id, p->at_start && start == 0);
        done = stop;
        if (i < stop)
            i = stop;
    }
    if (ok && done < n)
        ok = tx_pieces_push(op, out, s + done, n - done, -1, p->at_start && done == 0);
    return ok;
}

/* ---- encoding ---------------------------------------------------------------------- */

/* The pieces of text: split by the added tokens, normalized, split again by
 * the normalized added tokens, pre-tokenized. */
static bool pieces_of(const char *op, const tendo_tokenizer *tok, const char *text, size_t len, tx_pieces *ps)
{
    tx_pieces raw = {0};
    tx_piece whole = {(char *)(uintptr_t)text, len, -1, true};
    tx_str norm = {0};
    bool ok = split_added(op, tok, false, &whole, &raw);

    for (size_t i = 0; ok && i < raw.n; i++) {
        tx_piece p = raw.v[i];
        if (p.id >= 0) {
            ok = tx_pieces_push(op, ps, p.s, p.n, p.id, p.at_start);
            continue;
        }
        if (tok->normalizer) {
            ok = tx_normalize(op, tok->normalizer, p.s, p.n, &norm);
            p.s = norm.s, p.n = norm.n;
        }
        ok = ok && split_added(op, tok, true, &p, ps);
    }
    tx_pieces_free(&raw);
    tx_str_free(&norm);
    return ok && (!tok->pretok || tx_pretokenize(op, tok->pretok, ps));
}

tendo_status tendo_tokenizer_encode(const tendo_tokenizer *tok, const char *text, size_t len, bool add_special,
                                    int64_t **ids, size_t *n)
{
    static const char op[] = "tokenizer_encode";
    tx_pieces ps = {0};
    tx_ids out = {0};
    size_t bad;
    bool ok = true;

    if (!tok || !ids || !n || (!text && len))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL",
                           !tok ? "tok" : !ids ? "ids" : !n ? "n" : "text");
    if (!text)
        text = "";
    if ((bad = tx_invalid_at(text, len)) < len)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "the text is not valid UTF-8 at byte %zu (0x%02x)", bad,
                           (unsigned)(uint8_t)text[bad]);
    if (add_special)
        for (size_t i = 0; ok && i < tok->nbefore; i++)
            ok = tx_ids_push(op, &out, tok->before[i]);
    ok = ok && pieces_of(op, tok, text, len, &ps);
    for (size_t i = 0; ok && i < ps.n; i++)
        ok = ps.v[i].id >= 0 ? tx_ids_push(op, &out, ps.v[i].id) : tx_model_encode(op, &tok->model, ps.v[i].s, ps.v[i].n, &out);
    if (add_special)
        for (size_t i = 0; ok && i < tok->nafter; i++)
            ok = tx_ids_push(op, &out, tok->after[i]);
    tx_pieces_free(&ps);
    if (!ok) {
        free(out.v);
        return tendo_error_status(tendo_last_error());
    }
    if (out.n == 0) {
        free(out.v);
        out.v = NULL;
    }
    *ids = out.v;
    *n = out.n;
    return TENDO_OK;
}

/* ---- decoding ------------------------------------------------------------------------ */

tendo_status tendo_tokenizer_decode(const tendo_tokenizer *tok, const int64_t *ids, size_t n, bool skip_special,
                                    char **text, size_t *len)
{
    static const char op[] = "tokenizer_decode";
    tx_pieces ps = {0};
    tx_str out = {0};
    bool ok = true;

    if (!tok || !text || !len || (!ids && n))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL",
                           !tok ? "tok" : !text ? "text" : !len ? "len" : "ids");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= tok->size || !tok->token[ids[i]])
            return tendo__fail(TENDO_ERR_INVALID_ARG, op, "id %lld at position %zu is not in the vocabulary (0..%lld)",
                               (long long)ids[i], i, (long long)tok->size - 1);
    for (size_t i = 0; ok && i < n; i++)
        if (!(skip_special && tok->special[ids[i]]))
            ok = tx_pieces_push(op, &ps, tok->token[ids[i]], strlen(tok->token[ids[i]]), ids[i], false);
    if (ok && tok->decoder)
        ok = tx_decode_chain(op, tok->decoder, &ps);
    ok = ok && tx_put(op, &out, "", 0);
    for (size_t i = 0; ok && i < ps.n; i++) /* joined as they are after a decoder, by spaces without one */
        ok = (tok->decoder || i == 0 || tx_put(op, &out, " ", 1)) && tx_put(op, &out, ps.v[i].s, ps.v[i].n);
    tx_pieces_free(&ps);
    if (!ok) {
        tx_str_free(&out);
        return tendo_error_status(tendo_last_error());
    }
    *text = out.s;
    *len = out.n;
    return TENDO_OK;
}

/* ---- the vocabulary ---------------------------------------------------------------- */

int64_t tendo_tokenizer_vocab_size(const tendo_tokenizer *tok) { return tok ? tok->size : 0; }

int64_t tendo_tokenizer_token_id(const tendo_tokenizer *tok, const char *token)
{
    if (!tok || !token)
        return -1;
    for (size_t i = 0; i < tok->nadded; i++)
        if (!strcmp(tok->added[i].content, token))
            return tok->added[i].id;
    return tx_vocab_get(&tok->model.vocab, token, strlen(token));
}

const char *tendo_tokenizer_token(const tendo_tokenizer *tok, int64_t id)
{
    return tok && id >= 0 && id < tok->size ? tok->token[id] : NULL;
}

bool tendo_tokenizer_is_special(const tendo_tokenizer *tok, int64_t id)
{
    return tok && id >= 0 && id < tok->size && tok->special[id];
}
