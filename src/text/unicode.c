/* src/text/unicode.c - what every step of the tokenizer stands on: growable
 * strings and lists, UTF-8, the Unicode classes of `tokenizers` (Rust's
 * char methods and the unicode_categories crate, answered here by
 * utf8proc), regular expressions (PCRE2) and the split behaviours. */
#include "config.h"

#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include "core/internal.h"
#include "text/text.h"

/* ---- growable arrays -------------------------------------------------------- */

/* Makes room for `more` elements of `size` bytes in *v (holding n of cap). */
static bool grow(const char *op, void **v, size_t *cap, size_t n, size_t more, size_t size)
{
    size_t want, c;
    void *p;

    if (n + more <= *cap)
        return true;
    if (more > SIZE_MAX / size - n)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a string of %zu + %zu", n, more), false;
    want = n + more;
    c = *cap ? *cap : 16;
    while (c < want)
        c = c > SIZE_MAX / 4 ? want : c * 2;
    if (!(p = tendo__realloc(*v, c * size)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for %zu bytes of text", c * size), false;
    *v = p;
    *cap = c;
    return true;
}

bool tx_put(const char *op, tx_str *b, const char *s, size_t n)
{
    if (!grow(op, (void **)&b->s, &b->cap, b->n, n + 1, 1))
        return false;
    if (n)
        memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return true;
}

size_t tx_encode(uint32_t cp, char out[4])
{
    return (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)out);
}

bool tx_putc(const char *op, tx_str *b, uint32_t cp)
{
    char u[4];

    return tx_put(op, b, u, tx_encode(cp, u));
}

void tx_str_free(tx_str *b)
{
    free(b->s);
    *b = (tx_str){0};
}

bool tx_ids_push(const char *op, tx_ids *ids, int64_t id)
{
    if (!grow(op, (void **)&ids->v, &ids->cap, ids->n, 1, sizeof *ids->v))
        return false;
    ids->v[ids->n++] = id;
    return true;
}

bool tx_pieces_push(const char *op, tx_pieces *ps, const char *s, size_t n, int64_t id, bool at_start)
{
    char *copy;

    if (!grow(op, (void **)&ps->v, &ps->cap, ps->n, 1, sizeof *ps->v))
        return false;
    if (!(copy = tendo__malloc(n + 1)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a piece of %zu bytes", n), false;
    if (n)
        memcpy(copy, s, n);
    copy[n] = '\0';
    ps->v[ps->n++] = (tx_piece){copy, n, id, at_start};
    return true;
}

void tx_pieces_free(tx_pieces *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].s);
    free(ps->v);
    *ps = (tx_pieces){0};
}

bool tx_spans_push(const char *op, tx_spans *sp, size_t a, size_t b, bool match)
{
    if (!grow(op, (void **)&sp->v, &sp->cap, sp->n, 1, sizeof *sp->v))
        return false;
    sp->v[sp->n++] = (tx_span){a, b, match};
    return true;
}

/* ---- UTF-8 ------------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s[0..n) (n > 0), or 0 with the
 * length of its maximal invalid part (Unicode's "maximal subpart", as
 * Rust's lossy decoding counts it) in *bad. */
static size_t valid_at(const uint8_t *s, size_t n, size_t *bad)
{
    uint8_t b = s[0], lo = 0x80, hi = 0xBF;
    size_t need, i;

    *bad = 1;
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF)
        need = 1;
    else if (b >= 0xE0 && b <= 0xEF)
        need = 2, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4)
        need = 3, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    for (i = 1; i <= need; i++) {
        if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF)) {
            *bad = i;
            return 0;
        }
    }
    return need + 1;
}

uint32_t tx_decode(const char *s, size_t n, size_t *len)
{
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t k = utf8proc_iterate((const uint8_t *)s, (utf8proc_ssize_t)(n < 4 ? n : 4), &cp);

    *len = k > 0 ? (size_t)k : 1;
    return k > 0 ? (uint32_t)cp : 0xFFFD;
}

size_t tx_invalid_at(const char *s, size_t n)
{
    size_t i = 0, bad, k;

    while (i < n) {
        if ((uint8_t)s[i] < 0x80) {
            i++;
            continue;
        }
        if (!(k = valid_at((const uint8_t *)s + i, n - i, &bad)))
            return i;
        i += k;
    }
    return n;
}

bool tx_put_lossy(const char *op, tx_str *out, const char *s, size_t n)
{
    size_t i = 0, run = 0, bad, k;

    while (i < n) {
        if ((k = valid_at((const uint8_t *)s + i, n - i, &bad))) {
            i += k;
            continue;
        }
        if (!tx_put(op, out, s + run, i - run) || !tx_put(op, out, "\xEF\xBF\xBD", 3))
            return false;
        i += bad;
        run = i;
    }
    return tx_put(op, out, s + run, n - run);
}

/* ---- Unicode classes ---------------------------------------------------------- */

bool tx_is_whitespace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static utf8proc_category_t category(uint32_t c) { return utf8proc_category((utf8proc_int32_t)c); }

bool tx_is_punctuation(uint32_t c)
{
    utf8proc_category_t k = category(c);

    if (c < 0x80 && ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)))
        return true;
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

bool tx_is_control(uint32_t c)
{
    utf8proc_category_t k = category(c);

    if (c == '\t' || c == '\n' || c == '\r')
        return false;
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CO ||
           k == UTF8PROC_CATEGORY_CS;
}

bool tx_is_numeric(uint32_t c)
{
    utf8proc_category_t k = category(c);

    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

bool tx_is_word(uint32_t c)
{
    utf8proc_category_t k = category(c);

    /* Alphabetic (letters, Nl, the circled letters), marks, Nd, Pc, Join_Control */
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ME) || k == UTF8PROC_CATEGORY_ND ||
           k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_PC || c == 0x200C || c == 0x200D ||
           (c >= 0x24B6 && c <= 0x24E9);
}

bool tx_is_mark_nonspacing(uint32_t c) { return category(c) == UTF8PROC_CATEGORY_MN; }

bool tx_is_mark(uint32_t c)
{
    utf8proc_category_t k = category(c);

    return k >= UTF8PROC_CATEGORY_MN && k <= UTF8PROC_CATEGORY_ME;
}

bool tx_is_chinese(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* GPT-2's printable bytes stand for themselves; the others take the code
 * points from 256 up, in byte order. */
static bool printable_byte(unsigned b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

uint32_t tx_byte_char(uint8_t b)
{
    unsigned n = 0;

    if (printable_byte(b))
        return b;
    for (unsigned x = 0; x < b; x++)
        n += !printable_byte(x);
    return 256 + n;
}

int tx_char_byte(uint32_t c)
{
    unsigned n = 0;

    if (c < 256)
        return printable_byte(c) ? (int)c : -1;
    for (unsigned x = 0; x < 256; x++)
        if (!printable_byte(x) && 256 + n++ == c)
            return (int)x;
    return -1;
}

bool tx_normal_form(const char *op, const char *form, const char *s, size_t n, tx_str *out)
{
    int flags = UTF8PROC_STABLE;
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t k;
    bool ok;

    flags |= form[2] == 'K' ? UTF8PROC_COMPAT : 0;
    flags |= form[strlen(form) - 1] == 'C' ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE;
    k = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &dst, (utf8proc_option_t)flags);
    if (k < 0)
        return tendo__fail(k == UTF8PROC_ERROR_NOMEM ? TENDO_ERR_OOM : TENDO_ERR_INVALID_ARG, op, "%s: %s", form,
                           utf8proc_errmsg(k)),
               false;
    out->n = 0;
    ok = tx_put(op, out, (const char *)dst, (size_t)k);
    free(dst);
    return ok;
}

bool tx_lowercase(const char *op, const char *s, size_t n, tx_str *out)
{
    size_t i = 0, len;

    out->n = 0;
    if (!tx_put(op, out, "", 0))
        return false;
    while (i < n) {
        uint32_t c = tx_decode(s + i, n - i, &len);
        bool ok = c == 0x130 ? tx_put(op, out, "i\xCC\x87", 3)
                             : tx_putc(op, out, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
        if (!ok)
            return false;
        i += len;
    }
    return true;
}

/* ---- regular expressions ------------------------------------------------------- */

struct tx_regex {
    pcre2_code *code;
};

tx_regex *tx_regex_new(const char *op, const char *pattern, size_t n, bool literal)
{
    int err = 0;
    PCRE2_SIZE at = 0;
    tx_regex *re = tendo__calloc(1, sizeof *re);

    if (!re)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a regular expression"), NULL;
    re->code = pcre2_compile((PCRE2_SPTR)pattern, n, PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP), &err, &at,
                             NULL);
    if (!re->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        free(re);
        tendo__fail(err == PCRE2_ERROR_HEAPLIMIT || err == PCRE2_ERROR_NOMEMORY ? TENDO_ERR_OOM
                                                                                : TENDO_ERR_FORMAT,
                    op, "the regular expression %.*s: %s at offset %zu", (int)(n < 80 ? n : 80), pattern,
                    (const char *)msg, (size_t)at);
        return NULL;
    }
    (void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE); /* the interpreter when JIT is unavailable */
    return re;
}

void tx_regex_free(tx_regex *re)
{
    if (re) {
        pcre2_code_free(re->code);
        free(re);
    }
}

bool tx_regex_spans(const char *op, const tx_regex *re, const char *s, size_t n, tx_spans *out)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
    size_t prev = 0, at = 0, len;
    bool ok = true;

    if (!md)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory for a regular expression's match"), false;
    while (ok && at <= n) {
        int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, md, NULL);
        PCRE2_SIZE *ov;

        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            ok = tendo__fail(TENDO_ERR_INVALID_ARG, op, "matching a regular expression: %s", (const char *)msg);
            break;
        }
        ov = pcre2_get_ovector_pointer(md);
        if (prev != ov[0])
            ok = tx_spans_push(op, out, prev, ov[0], false);
        ok = ok && tx_spans_push(op, out, ov[0], ov[1], true);
        prev = ov[1];
        if (ov[1] > ov[0]) {
            at = ov[1];
        } else { /* an empty match: go on after the next character */
            if (ov[1] >= n)
                break;
            tx_decode(s + ov[1], n - ov[1], &len);
            at = ov[1] + len;
        }
    }
    pcre2_match_data_free(md);
    if (ok && prev != n)
        ok = tx_spans_push(op, out, prev, n, false);
    return ok;
}

bool tx_replace(const char *op, const tx_regex *re, const char *content, size_t content_n, const char *s, size_t n,
                tx_str *out)
{
    tx_spans sp = {0};
    bool ok = tx_regex_spans(op, re, s, n, &sp) && tx_put(op, out, "", 0);

    for (size_t i = 0; ok && i < sp.n; i++)
        ok = sp.v[i].match ? tx_put(op, out, content, content_n) : tx_put(op, out, s + sp.v[i].a, sp.v[i].b - sp.v[i].a);
    free(sp.v);
    return ok;
}

/* ---- splitting ------------------------------------------------------------------ */

bool tx_split(const char *op, const tx_piece *p, tx_spans *sp, tx_behavior behavior, bool invert, tx_pieces *out)
{
    size_t n = 0;

    if (invert)
        for (size_t i = 0; i < sp->n; i++)
            sp->v[i].match = !sp->v[i].match;
    /* merge the spans in place as the behaviour says; a kept span has match == false */
    if (behavior == TX_MERGED_NEXT) {
        bool prev = false;
        size_t w = sp->n;
        for (size_t i = sp->n; i-- > 0;) {
            tx_span s = sp->v[i];
            if (s.match && !prev && w < sp->n)
                sp->v[w].a = s.a;
            else
                sp->v[--w] = (tx_span){s.a, s.b, false};
            prev = s.match;
        }
        memmove(sp->v, sp->v + w, (sp->n - w) * sizeof *sp->v);
        n = sp->n - w;
    } else {
        bool prev = false;
        for (size_t i = 0; i < sp->n; i++) {
            tx_span s = sp->v[i];
            bool merge = (behavior == TX_CONTIGUOUS && s.match == prev) ||
                         (behavior == TX_MERGED_PREVIOUS && s.match && !prev);
            if (merge && n > 0)
                sp->v[n - 1].b = s.b;
            else
                sp->v[n++] = (tx_span){s.a, s.b, behavior == TX_REMOVED && s.match};
            prev = s.match;
        }
    }
    for (size_t i = 0; i < n; i++) {
        tx_span s = sp->v[i];
        if (s.match || s.b == s.a)
            continue;
        if (!tx_pieces_push(op, out, p->s + s.a, s.b - s.a, -1, p->at_start && s.a == 0))
            return false;
    }
    return true;
}
