/* src/text/normalize.c - the normalizers of tokenizer.json: each rewrites
 * a piece of text before it is split (`tokenizers`' normalizers/). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "text/text.h"

/* BertNormalizer: control characters dropped and whitespace made ' '
 * (clean_text), CJK ideographs surrounded by spaces, accents stripped
 * (NFD, then no non-spacing marks), lowercased; in that order. */
static bool bert(const char *op, const tx_normalizer *nz, const char *s, size_t n, tx_str *out)
{
    tx_str a = {0}, b = {0};
    size_t i = 0, len;
    bool ok = tx_put(op, &a, "", 0);

    while (ok && i < n) {
        uint32_t c = tx_decode(s + i, n - i, &len);
        i += len;
        if (nz->clean_text && (c == 0 || c == 0xFFFD || tx_is_control(c)))
            continue;
        if (nz->clean_text && tx_is_whitespace(c))
            c = ' ';
        if (nz->chinese && tx_is_chinese(c))
            ok = tx_put(op, &a, " ", 1) && tx_putc(op, &a, c) && tx_put(op, &a, " ", 1);
        else
            ok = tx_putc(op, &a, c);
    }
    if (ok && nz->strip_accents) {
        ok = tx_normal_form(op, "NFD", a.s, a.n, &b);
        a.n = 0;
        for (i = 0; ok && i < b.n; i += len) {
            uint32_t c = tx_decode(b.s + i, b.n - i, &len);
            if (!tx_is_mark_nonspacing(c))
                ok = tx_put(op, &a, b.s + i, len);
        }
    }
    if (ok && nz->lowercase)
        ok = tx_lowercase(op, a.s, a.n, out);
    else if (ok)
        out->n = 0, ok = tx_put(op, out, a.s, a.n);
    tx_str_free(&a);
    tx_str_free(&b);
    return ok;
}

/* Strip: whitespace off the left and/or right end. */
static bool strip(const char *op, const tx_normalizer *nz, const char *s, size_t n, tx_str *out)
{
    size_t a = 0, b = n, len;

    while (nz->left && a < b && tx_is_whitespace(tx_decode(s + a, b - a, &len)))
        a += len;
    while (nz->right && b > a) {
        size_t k = b - 1;
        while (k > a && ((uint8_t)s[k] & 0xC0) == 0x80)
            k--;
        if (!tx_is_whitespace(tx_decode(s + k, b - k, &len)))
            break;
        b = k;
    }
    out->n = 0;
    return tx_put(op, out, s + a, b - a);
}

/* StripAccents: every combining mark (Mn, Mc, Me) removed, no decomposition
 * first (BERT's own stripping keeps the spacing marks). */
static bool strip_accents(const char *op, const char *s, size_t n, tx_str *out)
{
    size_t i, len;

    out->n = 0;
    if (!tx_put(op, out, "", 0))
        return false;
    for (i = 0; i < n; i += len)
        if (!tx_is_mark(tx_decode(s + i, n - i, &len)) && !tx_put(op, out, s + i, len))
            return false;
    return true;
}

bool tx_normalize(const char *op, const tx_normalizer *nz, const char *s, size_t n, tx_str *out)
{
    switch (nz->kind) {
    case TX_N_BERT:
        return bert(op, nz, s, n, out);
    case TX_N_NFC:
        return tx_normal_form(op, "NFC", s, n, out);
    case TX_N_NFD:
        return tx_normal_form(op, "NFD", s, n, out);
    case TX_N_NFKC:
        return tx_normal_form(op, "NFKC", s, n, out);
    case TX_N_NFKD:
        return tx_normal_form(op, "NFKD", s, n, out);
    case TX_N_LOWERCASE:
        return tx_lowercase(op, s, n, out);
    case TX_N_STRIP:
        return strip(op, nz, s, n, out);
    case TX_N_STRIP_ACCENTS:
        return strip_accents(op, s, n, out);
    case TX_N_REPLACE:
        out->n = 0;
        return tx_replace(op, nz->re, nz->content, nz->content_n, s, n, out);
    case TX_N_PREPEND: /* `tokenizers` prepends to non-empty text only */
        out->n = 0;
        return n ? tx_put(op, out, nz->content, nz->content_n) && tx_put(op, out, s, n) : tx_put(op, out, "", 0);
    case TX_N_SEQUENCE: {
        tx_str tmp = {0};
        bool ok = true;
        out->n = 0;
        ok = tx_put(op, out, s, n);
        for (size_t i = 0; ok && i < nz->nseq; i++) {
            ok = tx_normalize(op, &nz->seq[i], out->s, out->n, &tmp);
            if (ok) { /* swap: out holds the result */
                tx_str t = *out;
                *out = tmp;
                tmp = t;
            }
        }
        tx_str_free(&tmp);
        return ok;
    }
    }
    return tendo__fail(TENDO_ERR_INVALID_ARG, op, "unknown normalizer %d", (int)nz->kind), false;
}

void tx_normalizer_free(tx_normalizer *nz)
{
    if (!nz)
        return;
    tx_regex_free(nz->re);
    free(nz->content);
    for (size_t i = 0; i < nz->nseq; i++)
        tx_normalizer_free(&nz->seq[i]);
    free(nz->seq);
}
