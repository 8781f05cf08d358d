/* src/text/decode.c - the decoders of tokenizer.json: each rewrites the
 * list of tokens on their way back to text (`tokenizers`' decoders/). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "text/text.h"

/* Replaces piece i of ps by b's bytes (b is taken over). */
static void take(tx_pieces *ps, size_t i, tx_str *b)
{
    free(ps->v[i].s);
    ps->v[i].s = b->s ? b->s : NULL;
    ps->v[i].n = b->n;
    *b = (tx_str){0};
}

/* Replaces ps by the one piece b (taken over). */
static bool take_one(const char *op, tx_pieces *ps, tx_str *b)
{
    tx_pieces one = {0};
    bool ok = tx_pieces_push(op, &one, b->s ? b->s : "", b->n, -1, true);

    tx_str_free(b);
    if (!ok) {
        tx_pieces_free(&one);
        return false;
    }
    tx_pieces_free(ps);
    *ps = one;
    return true;
}

/* Every occurrence of from replaced by to in s, appended to out. */
static bool put_replaced(const char *op, tx_str *out, const char *s, size_t n, const char *from, const char *to)
{
    size_t k = strlen(from), run = 0;

    for (size_t i = 0; k && i + k <= n;) {
        if (memcmp(s + i, from, k)) {
            i++;
            continue;
        }
        if (!tx_put(op, out, s + run, i - run) || !tx_put(op, out, to, strlen(to)))
            return false;
        i += k;
        run = i;
    }
    return tx_put(op, out, s + run, n - run);
}

/* WordPiece's cleanup: the spaces of a detokenised English sentence. */
static bool cleanup(const char *op, tx_pieces *ps, size_t i)
{
    static const char *const pairs[][2] = {{" .", "."},     {" ?", "?"},     {" !", "!"},           {" ,", ","},
                                           {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"},         {" do not", " don't"},
                                           {" 's", "'s"},   {" 've", "'ve"}, {" 're", "'re"}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        tx_str b = {0};
        if (!put_replaced(op, &b, ps->v[i].s, ps->v[i].n, pairs[p][0], pairs[p][1]))
            return tx_str_free(&b), false;
        take(ps, i, &b);
    }
    return true;
}

/* ByteFallback: runs of <0xXX> tokens become their bytes' text (one U+FFFD
 * per byte when they are not valid UTF-8). */
static bool byte_fallback(const char *op, tx_pieces *ps)
{
    tx_pieces out = {0};
    tx_str bytes = {0};
    bool ok = true;

    for (size_t i = 0; ok && i <= ps->n; i++) {
        const tx_piece *p = i < ps->n ? &ps->v[i] : NULL;
        unsigned v = 0;
        bool is_byte = p && p->n == 6 && !memcmp(p->s, "<0x", 3) && p->s[5] == '>';
        for (int k = 3; is_byte && k < 5; k++) {
            char c = p->s[k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            is_byte = d >= 0;
            v = v * 16 + (unsigned)(d < 0 ? 0 : d);
        }
        if (is_byte) {
            char c = (char)v;
            ok = tx_put(op, &bytes, &c, 1);
            continue;
        }
        if (bytes.n) {
            if (tx_invalid_at(bytes.s, bytes.n) == bytes.n)
                ok = tx_pieces_push(op, &out, bytes.s, bytes.n, -1, false);
            else
                for (size_t k = 0; ok && k < bytes.n; k++)
                    ok = tx_pieces_push(op, &out, "\xEF\xBF\xBD", 3, -1, false);
            bytes.n = 0;
        }
        if (ok && p)
            ok = tx_pieces_push(op, &out, p->s, p->n, -1, false);
    }
    tx_str_free(&bytes);
    if (!ok)
        return tx_pieces_free(&out), false;
    tx_pieces_free(ps);
    *ps = out;
    return true;
}

/* One decoder (not a Sequence) applied to the tokens. */
static bool decode_one(const char *op, const tx_decoder *d, tx_pieces *ps)
{
    tx_str b = {0};
    bool ok = true;
    size_t len;

    switch (d->kind) {
    case TX_D_BYTE_LEVEL: { /* each token's code points back to bytes; the whole as lossy UTF-8 */
        tx_str raw = {0};
        for (size_t i = 0; ok && i < ps->n; i++) {
            size_t mark = raw.n;
            bool mapped = true;
            for (size_t j = 0; ok && mapped && j < ps->v[i].n; j += len) {
                int byte = tx_char_byte(tx_decode(ps->v[i].s + j, ps->v[i].n - j, &len));
                char c = (char)byte;
                mapped = byte >= 0;
                ok = !mapped || tx_put(op, &raw, &c, 1);
            }
            if (ok && !mapped) { /* not byte-level text: its own bytes */
                raw.n = mark;
                ok = tx_put(op, &raw, ps->v[i].s, ps->v[i].n);
            }
        }
        ok = ok && tx_put(op, &b, "", 0) && tx_put_lossy(op, &b, raw.s, raw.n);
        tx_str_free(&raw);
        return ok ? take_one(op, ps, &b) : (tx_str_free(&b), false);
    }
    case TX_D_WORDPIECE: {
        size_t k = strlen(d->text);
        for (size_t i = 0; ok && i < ps->n; i++) {
            if (i > 0) {
                tx_piece *p = &ps->v[i];
                ok = p->n >= k && !memcmp(p->s, d->text, k) ? tx_put(op, &b, p->s + k, p->n - k)
                                                             : tx_put(op, &b, " ", 1) && tx_put(op, &b, p->s, p->n);
                if (ok)
                    take(ps, i, &b);
            }
            ok = ok && (!d->cleanup || cleanup(op, ps, i));
        }
        break;
    }
    case TX_D_METASPACE:
        for (size_t i = 0; ok && i < ps->n; i++) {
            bool drop = i == 0 && d->prepend != TX_PREPEND_NEVER;
            ok = tx_put(op, &b, "", 0);
            for (size_t j = 0; ok && j < ps->v[i].n; j += len) {
                uint32_t c = tx_decode(ps->v[i].s + j, ps->v[i].n - j, &len);
                if (c != d->replacement)
                    ok = tx_put(op, &b, ps->v[i].s + j, len);
                else if (!drop)
                    ok = tx_put(op, &b, " ", 1);
            }
            if (ok)
                take(ps, i, &b);
        }
        break;
    case TX_D_BYTE_FALLBACK:
        return byte_fallback(op, ps);
    case TX_D_FUSE:
        for (size_t i = 0; ok && i < ps->n; i++)
            ok = tx_put(op, &b, ps->v[i].s, ps->v[i].n);
        ok = ok && tx_put(op, &b, "", 0);
        return ok ? take_one(op, ps, &b) : (tx_str_free(&b), false);
    case TX_D_STRIP:
        for (size_t i = 0; ok && i < ps->n; i++) {
            tx_piece *p = &ps->v[i];
            size_t a = 0, e = p->n;
            for (size_t k = 0; k < d->start && a < e && tx_decode(p->s + a, e - a, &len) == d->replacement; k++)
                a += len;
            for (size_t k = 0; k < d->stop && e > a; k++) {
                size_t j = e - 1;
                while (j > a && ((uint8_t)p->s[j] & 0xC0) == 0x80)
                    j--;
                if (tx_decode(p->s + j, e - j, &len) != d->replacement)
                    break;
                e = j;
            }
            ok = tx_put(op, &b, "", 0) && tx_put(op, &b, p->s + a, e - a);
            if (ok)
                take(ps, i, &b);
        }
        break;
    case TX_D_REPLACE:
        for (size_t i = 0; ok && i < ps->n; i++)
            if ((ok = tx_replace(op, d->re, d->text, strlen(d->text), ps->v[i].s, ps->v[i].n, &b)))
                take(ps, i, &b);
        break;
    case TX_D_BPE:
        for (size_t i = 0; ok && i < ps->n; i++) {
            ok = tx_put(op, &b, "", 0) &&
                 put_replaced(op, &b, ps->v[i].s, ps->v[i].n, d->text, i + 1 == ps->n ? "" : " ");
            if (ok)
                take(ps, i, &b);
        }
        break;
    case TX_D_SEQUENCE:
        for (size_t i = 0; ok && i < d->nseq; i++)
            ok = decode_one(op, &d->seq[i], ps);
        break;
    }
    tx_str_free(&b);
    return ok;
}

bool tx_decode_chain(const char *op, const tx_decoder *d, tx_pieces *ps)
{
    return ps->n == 0 || decode_one(op, d, ps);
}

void tx_decoder_free(tx_decoder *d)
{
    if (!d)
        return;
    free(d->text);
    tx_regex_free(d->re);
    for (size_t i = 0; i < d->nseq; i++)
        tx_decoder_free(&d->seq[i]);
    free(d->seq);
}
