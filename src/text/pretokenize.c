/* src/text/pretokenize.c - the pre-tokenizers of tokenizer.json: each
 * splits the pieces of text still to tokenise into smaller ones, the words
 * the model then sees (`tokenizers`' pre_tokenizers/). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "text/text.h"

/* The spans of s with one match per character that pred accepts (`tokenizers`'
 * Pattern for a char predicate). */
static bool char_spans(const char *op, bool (*pred)(uint32_t), const char *s, size_t n, tx_spans *out)
{
    size_t i = 0, last = 0, len;

    while (i < n) {
        uint32_t c = tx_decode(s + i, n - i, &len);
        if (pred(c)) {
            if (last < i && !tx_spans_push(op, out, last, i, false))
                return false;
            if (!tx_spans_push(op, out, i, i + len, true))
                return false;
            last = i + len;
        }
        i += len;
    }
    return last < n ? tx_spans_push(op, out, last, n, false) : true;
}

/* The spans of \w+|[^\w\s]+ (Whitespace): runs of word characters and runs
 * of the others that are not whitespace are matches. */
static bool word_spans(const char *op, const char *s, size_t n, tx_spans *out)
{
    size_t i = 0, len, start = 0;
    int run = 0; /* 0 whitespace, 1 word, 2 other */

    while (i <= n) {
        int k = 0;
        if (i < n) {
            uint32_t c = tx_decode(s + i, n - i, &len);
            k = tx_is_word(c) ? 1 : tx_is_whitespace(c) ? 0 : 2;
        }
        if (i == n || k != run) {
            if (i > start && !tx_spans_push(op, out, start, i, run != 0))
                return false;
            start = i;
            run = k;
        }
        if (i == n)
            break;
        i += len;
    }
    return true;
}

/* The offset of the first needle[0..k) in s[from..n), or n. */
static size_t find(const char *s, size_t n, size_t from, const char *needle, size_t k)
{
    for (size_t i = from; i + k <= n; i++)
        if (!memcmp(s + i, needle, k))
            return i;
    return n;
}

static bool is_space(uint32_t c) { return tx_is_whitespace(c); }

/* The pieces of p by one pre-tokenizer (not a Sequence), appended to out. */
static bool split_piece(const char *op, const tx_pretok *pt, tx_piece *p, tx_pieces *out)
{
    tx_spans sp = {0};
    tx_str b = {0};
    tx_piece q = *p;
    bool ok = true;

    switch (pt->kind) {
    case TX_P_BERT: {
        tx_pieces words = {0};
        ok = char_spans(op, is_space, p->s, p->n, &sp) && tx_split(op, p, &sp, TX_REMOVED, false, &words);
        for (size_t i = 0; ok && i < words.n; i++) {
            sp.n = 0;
            ok = char_spans(op, tx_is_punctuation, words.v[i].s, words.v[i].n, &sp) &&
                 tx_split(op, &words.v[i], &sp, TX_ISOLATED, false, out);
        }
        tx_pieces_free(&words);
        break;
    }
    case TX_P_BYTE_LEVEL: {
        tx_pieces words = {0};
        if (pt->add_prefix_space && (p->n == 0 || p->s[0] != ' ')) {
            ok = tx_put(op, &b, " ", 1) && tx_put(op, &b, p->s, p->n);
            q.s = b.s, q.n = b.n;
        }
        if (ok && pt->use_regex)
            ok = tx_regex_spans(op, pt->re, q.s, q.n, &sp) && tx_split(op, &q, &sp, TX_ISOLATED, false, &words);
        else if (ok && q.n)
            ok = tx_pieces_push(op, &words, q.s, q.n, -1, q.at_start);
        for (size_t i = 0; ok && i < words.n; i++) { /* each byte as its printable code point */
            tx_str m = {0};
            for (size_t j = 0; ok && j < words.v[i].n; j++)
                ok = tx_putc(op, &m, tx_byte_char((uint8_t)words.v[i].s[j]));
            ok = ok && tx_pieces_push(op, out, m.s, m.n, -1, words.v[i].at_start);
            tx_str_free(&m);
        }
        tx_pieces_free(&words);
        break;
    }
    case TX_P_METASPACE: {
        const char *rep = pt->rep;
        size_t i, rep_n = pt->rep_n;
        ok = tx_put(op, &b, "", 0);
        if (ok && p->n && ((pt->prepend == TX_PREPEND_ALWAYS) || (pt->prepend == TX_PREPEND_FIRST && p->at_start)) &&
            !(p->n >= rep_n && !memcmp(p->s, rep, rep_n)) && !(p->s[0] == ' '))
            ok = tx_put(op, &b, rep, rep_n);
        for (i = 0; ok && i < p->n; i++)
            ok = p->s[i] == ' ' ? tx_put(op, &b, rep, rep_n) : tx_put(op, &b, p->s + i, 1);
        q.s = b.s, q.n = b.n;
        if (ok && pt->split) {
            size_t at = 0;
            while (ok && at < q.n) { /* each replacement character is a match */
                size_t h = find(q.s, q.n, at, rep, rep_n);
                bool hit = h < q.n;
                if (h > at)
                    ok = tx_spans_push(op, &sp, at, h, false);
                if (ok && hit)
                    ok = tx_spans_push(op, &sp, h, h + rep_n, true);
                at = hit ? h + rep_n : q.n;
            }
            ok = ok && tx_split(op, &q, &sp, TX_MERGED_NEXT, false, out);
        } else if (ok && q.n) {
            ok = tx_pieces_push(op, out, q.s, q.n, -1, q.at_start);
        }
        break;
    }
    case TX_P_SPLIT:
        ok = tx_regex_spans(op, pt->re, p->s, p->n, &sp) && tx_split(op, p, &sp, pt->behavior, pt->invert, out);
        break;
    case TX_P_WHITESPACE:
        ok = word_spans(op, p->s, p->n, &sp) && tx_split(op, p, &sp, TX_REMOVED, true, out);
        break;
    case TX_P_WHITESPACE_SPLIT:
        ok = char_spans(op, is_space, p->s, p->n, &sp) && tx_split(op, p, &sp, TX_REMOVED, false, out);
        break;
    case TX_P_PUNCTUATION:
        ok = char_spans(op, tx_is_punctuation, p->s, p->n, &sp) && tx_split(op, p, &sp, pt->behavior, false, out);
        break;
    case TX_P_DIGITS:
        ok = char_spans(op, tx_is_numeric, p->s, p->n, &sp) &&
             tx_split(op, p, &sp, pt->individual_digits ? TX_ISOLATED : TX_CONTIGUOUS, false, out);
        break;
    case TX_P_SEQUENCE:
        ok = (tendo__fail(TENDO_ERR_INVALID_ARG, op, "a Sequence pre-tokenizer split as one"), false);
        break;
    }
    free(sp.v);
    tx_str_free(&b);
    return ok;
}

bool tx_pretokenize(const char *op, const tx_pretok *pt, tx_pieces *ps)
{
    tx_pieces out = {0};
    bool ok = true;

    if (pt->kind == TX_P_SEQUENCE) {
        for (size_t i = 0; ok && i < pt->nseq; i++)
            ok = tx_pretokenize(op, &pt->seq[i], ps);
        return ok;
    }
    for (size_t i = 0; ok && i < ps->n; i++) {
        tx_piece *p = &ps->v[i];
        if (p->id >= 0) /* an added token: moved over as it is */
            ok = tx_pieces_push(op, &out, p->s, p->n, p->id, p->at_start);
        else
            ok = split_piece(op, pt, p, &out);
    }
    if (!ok) {
        tx_pieces_free(&out);
        return false;
    }
    tx_pieces_free(ps);
    *ps = out;
    return true;
}

void tx_pretok_free(tx_pretok *pt)
{
    if (!pt)
        return;
    tx_regex_free(pt->re);
    for (size_t i = 0; i < pt->nseq; i++)
        tx_pretok_free(&pt->seq[i]);
    free(pt->seq);
}
