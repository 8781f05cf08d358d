/* src/text/load.c - reading tokenizer.json (jansson) into the pipeline's
 * structures, every field checked: a file that is not what `tokenizers`
 * writes is TENDO_ERR_FORMAT naming the field; a valid one asking for what
 * tendo lacks is TENDO_ERR_UNSUPPORTED naming it. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "core/internal.h"
#include "io/collection.h"
#include "text/text.h"

/* The largest id a tokenizer may use (ids index arrays of that size). */
#define MAX_ID ((int64_t)1 << 24)

typedef struct {
    const char *op, *path;
} ctx;

static bool bad(const ctx *c, tendo_status st, const char *fmt, ...) TENDO__PRINTF(3, 4);

/* Fails with st: "path: what". */
static bool bad(const ctx *c, tendo_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tendo__fail(st, c->op, "%s: %s", c->path, msg);
    return false;
}

static bool oom(const ctx *c) { return bad(c, TENDO_ERR_OOM, "out of memory"); }

/* ---- typed fields ------------------------------------------------------------------- */

/* The string field key of o (def when absent or null), or false. */
static bool get_str(const ctx *c, const json_t *o, const char *where, const char *key, const char *def,
                    const char **out)
{
    json_t *v = json_object_get(o, key);

    *out = def;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v))
        return bad(c, TENDO_ERR_FORMAT, "%s.%s is not a string", where, key);
    *out = json_string_value(v);
    return true;
}

static bool get_bool(const ctx *c, const json_t *o, const char *where, const char *key, bool def, bool *out)
{
    json_t *v = json_object_get(o, key);

    *out = def;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_boolean(v))
        return bad(c, TENDO_ERR_FORMAT, "%s.%s is not true or false", where, key);
    *out = json_is_true(v);
    return true;
}

static bool get_size(const ctx *c, const json_t *o, const char *where, const char *key, size_t def, size_t *out)
{
    json_t *v = json_object_get(o, key);

    *out = def;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return bad(c, TENDO_ERR_FORMAT, "%s.%s is not a count", where, key);
    *out = (size_t)json_integer_value(v);
    return true;
}

/* An id: an integer in [0, MAX_ID). */
static bool get_id(const ctx *c, const json_t *v, const char *where, int64_t *id)
{
    if (!json_is_integer(v))
        return bad(c, TENDO_ERR_FORMAT, "%s is not an integer id", where);
    *id = json_integer_value(v);
    if (*id < 0 || *id >= MAX_ID)
        return bad(c, TENDO_ERR_FORMAT, "%s: id %lld is outside 0..%lld", where, (long long)*id,
                   (long long)MAX_ID - 1);
    return true;
}

static bool copy_str(const ctx *c, const char *s, char **out)
{
    if (!s)
        return *out = NULL, true;
    return (*out = tendo__strdup(s)) != NULL || oom(c);
}

/* The single code point of a string field (Metaspace's replacement, Strip's content). */
static bool get_char(const ctx *c, const json_t *o, const char *where, const char *key, uint32_t def, uint32_t *out)
{
    const char *s;
    size_t len;

    if (!get_str(c, o, where, key, NULL, &s))
        return false;
    *out = def;
    if (!s)
        return true;
    if (!*s || (*out = tx_decode(s, strlen(s), &len), s[len] != '\0'))
        return bad(c, TENDO_ERR_FORMAT, "%s.%s is not one character", where, key);
    return true;
}

/* A pattern field {"String": s} or {"Regex": r}. */
static bool get_pattern(const ctx *c, const json_t *o, const char *where, tx_regex **re)
{
    json_t *p = json_object_get(o, "pattern"), *s = json_object_get(p, "String"), *r = json_object_get(p, "Regex");
    json_t *v = s ? s : r;

    if (!json_is_object(p) || !json_is_string(v))
        return bad(c, TENDO_ERR_FORMAT, "%s.pattern is not {\"String\": ...} or {\"Regex\": ...}", where);
    if (!(*re = tx_regex_new(c->op, json_string_value(v), json_string_length(v), s != NULL))) {
        const char *why = tendo_error_message(tendo_last_error());
        char msg[256];
        size_t k = strlen(c->op);
        snprintf(msg, sizeof msg, "%s", strncmp(why, c->op, k) || why[k] != ':' ? why : why + k + 2);
        return bad(c, tendo_error_status(tendo_last_error()), "%s.pattern: %s", where, msg);
    }
    return true;
}

static bool get_behavior(const ctx *c, const json_t *o, const char *where, tx_behavior def, tx_behavior *out)
{
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *s;

    *out = def;
    if (!get_str(c, o, where, "behavior", NULL, &s))
        return false;
    if (!s)
        return true;
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i]))
            return *out = (tx_behavior)i, true;
    return bad(c, TENDO_ERR_FORMAT, "%s.behavior \"%s\" is none of Removed, Isolated, MergedWithPrevious, "
                                    "MergedWithNext, Contiguous",
               where, s);
}

/* Metaspace's prepend_scheme (and the older add_prefix_space). */
static bool get_prepend(const ctx *c, const json_t *o, const char *where, tx_prepend *out)
{
    const char *s;
    bool add;

    if (!get_str(c, o, where, "prepend_scheme", "always", &s) || !get_bool(c, o, where, "add_prefix_space", true, &add))
        return false;
    *out = !strcmp(s, "always") ? TX_PREPEND_ALWAYS : !strcmp(s, "first") ? TX_PREPEND_FIRST : TX_PREPEND_NEVER;
    if (strcmp(s, "always") && strcmp(s, "first") && strcmp(s, "never"))
        return bad(c, TENDO_ERR_FORMAT, "%s.prepend_scheme \"%s\" is none of always, first, never", where, s);
    if (!add)
        *out = TX_PREPEND_NEVER;
    return true;
}

/* The type of a component o at where, or false. */
static bool type_of(const ctx *c, const json_t *o, const char *where, const char **type)
{
    if (!json_is_object(o))
        return bad(c, TENDO_ERR_FORMAT, "%s is not an object", where);
    if (!get_str(c, o, where, "type", NULL, type))
        return false;
    if (!*type)
        return bad(c, TENDO_ERR_FORMAT, "%s has no type", where);
    return true;
}

/* The array field key of a Sequence, its elements allocated in *items. */
static bool sequence_of(const ctx *c, const json_t *o, const char *where, const char *key, size_t size, void **items,
                        size_t *n, json_t **arr)
{
    *arr = json_object_get(o, key);
    if (!json_is_array(*arr))
        return bad(c, TENDO_ERR_FORMAT, "%s.%s is not an array", where, key);
    *n = json_array_size(*arr);
    if (!(*items = tendo__calloc(*n ? *n : 1, size)))
        return oom(c);
    return true;
}

/* ---- normalizers, pre-tokenizers, decoders ----------------------------------------- */

static bool normalizer(const ctx *c, const json_t *o, const char *where, tx_normalizer *nz)
{
    const char *type, *s;
    char sub[160];

    if (!type_of(c, o, where, &type))
        return false;
    if (!strcmp(type, "BertNormalizer")) {
        nz->kind = TX_N_BERT;
        if (!get_bool(c, o, where, "clean_text", true, &nz->clean_text) ||
            !get_bool(c, o, where, "handle_chinese_chars", true, &nz->chinese) ||
            !get_bool(c, o, where, "lowercase", true, &nz->lowercase) ||
            !get_bool(c, o, where, "strip_accents", nz->lowercase, &nz->strip_accents))
            return false;
        return true;
    }
    if (!strcmp(type, "NFC") || !strcmp(type, "NFD") || !strcmp(type, "NFKC") || !strcmp(type, "NFKD")) {
        nz->kind = !strcmp(type, "NFC") ? TX_N_NFC : !strcmp(type, "NFD") ? TX_N_NFD : !strcmp(type, "NFKC") ? TX_N_NFKC : TX_N_NFKD;
        return true;
    }
    if (!strcmp(type, "Lowercase"))
        return nz->kind = TX_N_LOWERCASE, true;
    if (!strcmp(type, "StripAccents"))
        return nz->kind = TX_N_STRIP_ACCENTS, true;
    if (!strcmp(type, "Strip")) {
        nz->kind = TX_N_STRIP;
        return get_bool(c, o, where, "strip_left", true, &nz->left) && get_bool(c, o, where, "strip_right", true, &nz->right);
    }
    if (!strcmp(type, "Replace")) {
        nz->kind = TX_N_REPLACE;
        if (!get_pattern(c, o, where, &nz->re) || !get_str(c, o, where, "content", NULL, &s))
            return false;
        if (!s)
            return bad(c, TENDO_ERR_FORMAT, "%s has no content", where);
        nz->content_n = strlen(s);
        return copy_str(c, s, &nz->content);
    }
    if (!strcmp(type, "Prepend")) {
        nz->kind = TX_N_PREPEND;
        if (!get_str(c, o, where, "prepend", NULL, &s))
            return false;
        if (!s)
            return bad(c, TENDO_ERR_FORMAT, "%s has no prepend", where);
        nz->content_n = strlen(s);
        return copy_str(c, s, &nz->content);
    }
    if (!strcmp(type, "Sequence")) {
        json_t *arr;
        nz->kind = TX_N_SEQUENCE;
        if (!sequence_of(c, o, where, "normalizers", sizeof *nz->seq, (void **)&nz->seq, &nz->nseq, &arr))
            return false;
        for (size_t i = 0; i < nz->nseq; i++) {
            snprintf(sub, sizeof sub, "%s.normalizers[%zu]", where, i);
            if (!normalizer(c, json_array_get(arr, i), sub, &nz->seq[i]))
                return false;
        }
        return true;
    }
    return bad(c, TENDO_ERR_UNSUPPORTED, "%s: the %s normalizer is not supported", where, type);
}

/* GPT-2's split, as the ByteLevel pre-tokenizer uses it. */
static const char gpt2_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static bool pretok(const ctx *c, const json_t *o, const char *where, tx_pretok *pt)
{
    const char *type;
    char sub[160];

    if (!type_of(c, o, where, &type))
        return false;
    if (!strcmp(type, "BertPreTokenizer"))
        return pt->kind = TX_P_BERT, true;
    if (!strcmp(type, "Whitespace"))
        return pt->kind = TX_P_WHITESPACE, true;
    if (!strcmp(type, "WhitespaceSplit"))
        return pt->kind = TX_P_WHITESPACE_SPLIT, true;
    if (!strcmp(type, "ByteLevel")) {
        pt->kind = TX_P_BYTE_LEVEL;
        if (!get_bool(c, o, where, "add_prefix_space", true, &pt->add_prefix_space) ||
            !get_bool(c, o, where, "use_regex", true, &pt->use_regex))
            return false;
        if (pt->use_regex && !(pt->re = tx_regex_new(c->op, gpt2_pattern, sizeof gpt2_pattern - 1, false)))
            return false;
        return true;
    }
    if (!strcmp(type, "Metaspace")) {
        pt->kind = TX_P_METASPACE;
        if (!get_char(c, o, where, "replacement", 0x2581, &pt->replacement))
            return false;
        pt->rep_n = tx_encode(pt->replacement, pt->rep);
        return get_prepend(c, o, where, &pt->prepend) && get_bool(c, o, where, "split", true, &pt->split);
    }
    if (!strcmp(type, "Split")) {
        pt->kind = TX_P_SPLIT;
        if (!json_object_get(o, "behavior"))
            return bad(c, TENDO_ERR_FORMAT, "%s has no behavior", where);
        return get_pattern(c, o, where, &pt->re) && get_behavior(c, o, where, TX_ISOLATED, &pt->behavior) &&
               get_bool(c, o, where, "invert", false, &pt->invert);
    }
    if (!strcmp(type, "Punctuation")) {
        pt->kind = TX_P_PUNCTUATION;
        return get_behavior(c, o, where, TX_ISOLATED, &pt->behavior);
    }
    if (!strcmp(type, "Digits")) {
        pt->kind = TX_P_DIGITS;
        return get_bool(c, o, where, "individual_digits", false, &pt->individual_digits);
    }
    if (!strcmp(type, "Sequence")) {
        json_t *arr;
        pt->kind = TX_P_SEQUENCE;
        if (!sequence_of(c, o, where, "pretokenizers", sizeof *pt->seq, (void **)&pt->seq, &pt->nseq, &arr))
            return false;
        for (size_t i = 0; i < pt->nseq; i++) {
            snprintf(sub, sizeof sub, "%s.pretokenizers[%zu]", where, i);
            if (!pretok(c, json_array_get(arr, i), sub, &pt->seq[i]))
                return false;
        }
        return true;
    }
    return bad(c, TENDO_ERR_UNSUPPORTED, "%s: the %s pre-tokenizer is not supported", where, type);
}

static bool decoder(const ctx *c, const json_t *o, const char *where, tx_decoder *d)
{
    const char *type, *s;
    char sub[160];

    if (!type_of(c, o, where, &type))
        return false;
    if (!strcmp(type, "ByteLevel"))
        return d->kind = TX_D_BYTE_LEVEL, true;
    if (!strcmp(type, "ByteFallback"))
        return d->kind = TX_D_BYTE_FALLBACK, true;
    if (!strcmp(type, "Fuse"))
        return d->kind = TX_D_FUSE, true;
    if (!strcmp(type, "WordPiece")) {
        d->kind = TX_D_WORDPIECE;
        return get_str(c, o, where, "prefix", "##", &s) && copy_str(c, s, &d->text) &&
               get_bool(c, o, where, "cleanup", true, &d->cleanup);
    }
    if (!strcmp(type, "BPEDecoder")) {
        d->kind = TX_D_BPE;
        return get_str(c, o, where, "suffix", "</w>", &s) && copy_str(c, s, &d->text);
    }
    if (!strcmp(type, "Metaspace")) {
        d->kind = TX_D_METASPACE;
        return get_char(c, o, where, "replacement", 0x2581, &d->replacement) && get_prepend(c, o, where, &d->prepend);
    }
    if (!strcmp(type, "Strip")) {
        d->kind = TX_D_STRIP;
        return get_char(c, o, where, "content", ' ', &d->replacement) && get_size(c, o, where, "start", 0, &d->start) &&
               get_size(c, o, where, "stop", 0, &d->stop);
    }
    if (!strcmp(type, "Replace")) {
        d->kind = TX_D_REPLACE;
        if (!get_pattern(c, o, where, &d->re) || !get_str(c, o, where, "content", NULL, &s))
            return false;
        if (!s)
            return bad(c, TENDO_ERR_FORMAT, "%s has no content", where);
        return copy_str(c, s, &d->text);
    }
    if (!strcmp(type, "Sequence")) {
        json_t *arr;
        d->kind = TX_D_SEQUENCE;
        if (!sequence_of(c, o, where, "decoders", sizeof *d->seq, (void **)&d->seq, &d->nseq, &arr))
            return false;
        for (size_t i = 0; i < d->nseq; i++) {
            snprintf(sub, sizeof sub, "%s.decoders[%zu]", where, i);
            if (!decoder(c, json_array_get(arr, i), sub, &d->seq[i]))
                return false;
        }
        return true;
    }
    return bad(c, TENDO_ERR_UNSUPPORTED, "%s: the %s decoder is not supported", where, type);
}

/* ---- the model ------------------------------------------------------------------------ */

static bool vocab_of(const ctx *c, const json_t *model, tx_vocab *v)
{
    json_t *vocab = json_object_get(model, "vocab"), *val;
    const char *key;
    char where[96];

    if (!json_is_object(vocab))
        return bad(c, TENDO_ERR_FORMAT, "model.vocab is not an object of tokens and ids");
    if (!tx_vocab_init(c->op, v, json_object_size(vocab)))
        return false;
    json_object_foreach(vocab, key, val) {
        int64_t id;
        snprintf(where, sizeof where, "model.vocab[\"%.40s\"]", key);
        if (!get_id(c, val, where, &id) || !tx_vocab_add(c->op, v, key, strlen(key), id))
            return false;
    }
    return true;
}

/* The id of the model's unknown token (-1 when it has none). */
static bool unk_of(const ctx *c, const json_t *model, tx_model *m, bool required)
{
    const char *unk;

    if (!get_str(c, model, "model", "unk_token", NULL, &unk))
        return false;
    m->unk = unk ? tx_vocab_get(&m->vocab, unk, strlen(unk)) : -1;
    if (unk && m->unk < 0)
        return bad(c, TENDO_ERR_FORMAT, "model.unk_token \"%.40s\" is not in the vocabulary", unk);
    if (!unk && required)
        return bad(c, TENDO_ERR_FORMAT, "model has no unk_token");
    return true;
}

/* One merge: "a b", or ["a", "b"]. */
static bool merge_parts(const ctx *c, const json_t *e, size_t i, const char **a, size_t *an, const char **b,
                        size_t *bn)
{
    if (json_is_string(e)) {
        const char *s = json_string_value(e), *sp = strchr(s, ' ');
        if (!sp || strchr(sp + 1, ' '))
            return bad(c, TENDO_ERR_FORMAT, "model.merges[%zu] \"%.60s\" is not two tokens and a space", i, s);
        *a = s, *an = (size_t)(sp - s), *b = sp + 1, *bn = strlen(sp + 1);
        return true;
    }
    if (json_is_array(e) && json_array_size(e) == 2 && json_is_string(json_array_get(e, 0)) &&
        json_is_string(json_array_get(e, 1))) {
        *a = json_string_value(json_array_get(e, 0)), *an = json_string_length(json_array_get(e, 0));
        *b = json_string_value(json_array_get(e, 1)), *bn = json_string_length(json_array_get(e, 1));
        return true;
    }
    return bad(c, TENDO_ERR_FORMAT, "model.merges[%zu] is not \"a b\" or [\"a\", \"b\"]", i);
}

static bool merges_of(const ctx *c, const json_t *model, tx_model *m)
{
    json_t *merges = json_object_get(model, "merges");
    size_t n, plen = m->prefix ? strlen(m->prefix) : 0;
    tx_str buf = {0};
    bool ok = true;

    if (!json_is_array(merges))
        return bad(c, TENDO_ERR_FORMAT, "model.merges is %s", merges ? "not an array" : "missing");
    n = json_array_size(merges);
    if (n >= UINT32_MAX / 2)
        return bad(c, TENDO_ERR_FORMAT, "model.merges has %zu entries", n);
    if (!tx_merges_init(c->op, &m->merges, n))
        return false;
    for (size_t i = 0; ok && i < n; i++) {
        const char *a = NULL, *b = NULL;
        size_t an = 0, bn = 0;
        int64_t ia, ib, im;
        if (!(ok = merge_parts(c, json_array_get(merges, i), i, &a, &an, &b, &bn)))
            break;
        if ((ia = tx_vocab_get(&m->vocab, a, an)) < 0 || (ib = tx_vocab_get(&m->vocab, b, bn)) < 0) {
            ok = bad(c, TENDO_ERR_FORMAT, "model.merges[%zu]: \"%.*s\" is not in the vocabulary", i,
                     (int)(ia < 0 ? an : bn), ia < 0 ? a : b);
            break;
        }
        if (bn < plen || (plen && memcmp(b, m->prefix, plen))) {
            ok = bad(c, TENDO_ERR_FORMAT, "model.merges[%zu]: \"%.*s\" lacks the prefix \"%s\"", i, (int)bn, b,
                     m->prefix);
            break;
        }
        buf.n = 0;
        ok = tx_put(c->op, &buf, a, an) && tx_put(c->op, &buf, b + plen, bn - plen);
        if (ok && (im = tx_vocab_get(&m->vocab, buf.s, buf.n)) < 0)
            ok = bad(c, TENDO_ERR_FORMAT, "model.merges[%zu]: the merged \"%.60s\" is not in the vocabulary", i, buf.s);
        if (ok)
            tx_merges_add(&m->merges, ia, ib, (uint32_t)i, im);
    }
    tx_str_free(&buf);
    return ok;
}

static bool model_of(const ctx *c, const json_t *model, tx_model *m)
{
    const char *type, *s;
    json_t *dropout = json_object_get(model, "dropout");

    if (!json_is_object(model))
        return bad(c, TENDO_ERR_FORMAT, "model is %s", model ? "not an object" : "missing");
    if (!get_str(c, model, "model", "type", NULL, &type))
        return false;
    if (!type) /* files from before the type field: told apart by their fields */
        type = json_object_get(model, "merges") ? "BPE"
               : json_object_get(model, "continuing_subword_prefix") ? "WordPiece"
               : json_is_array(json_object_get(model, "vocab")) ? "Unigram"
                                                                 : "WordLevel";
    if (strcmp(type, "BPE") && strcmp(type, "WordPiece") && strcmp(type, "WordLevel"))
        return bad(c, TENDO_ERR_UNSUPPORTED, "the %s model is not supported (BPE, WordPiece and WordLevel are)", type);
    if (!vocab_of(c, model, &m->vocab))
        return false;
    if (!strcmp(type, "WordPiece")) {
        m->kind = TX_M_WORDPIECE;
        return unk_of(c, model, m, true) && get_str(c, model, "model", "continuing_subword_prefix", "##", &s) &&
               copy_str(c, s, &m->prefix) && get_size(c, model, "model", "max_input_chars_per_word", 100, &m->max_chars);
    }
    if (!strcmp(type, "WordLevel")) {
        m->kind = TX_M_WORDLEVEL;
        return unk_of(c, model, m, false);
    }
    m->kind = TX_M_BPE;
    if (dropout && !json_is_null(dropout) && (!json_is_number(dropout) || json_number_value(dropout) != 0.0))
        return bad(c, TENDO_ERR_UNSUPPORTED, "BPE dropout (random merges) is not supported");
    if (!unk_of(c, model, m, false) || !get_str(c, model, "model", "continuing_subword_prefix", NULL, &s) ||
        !copy_str(c, s, &m->prefix) || !get_str(c, model, "model", "end_of_word_suffix", NULL, &s) ||
        !copy_str(c, s, &m->suffix) || !get_bool(c, model, "model", "fuse_unk", false, &m->fuse_unk) ||
        !get_bool(c, model, "model", "byte_fallback", false, &m->byte_fallback) ||
        !get_bool(c, model, "model", "ignore_merges", false, &m->ignore_merges))
        return false;
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        m->byte_id[b] = tx_vocab_get(&m->vocab, name, 6);
    }
    return merges_of(c, model, m);
}

/* ---- added tokens and the post-processor ---------------------------------------------- */

static bool added_of(const ctx *c, const json_t *root, tendo_tokenizer *tok)
{
    json_t *arr = json_object_get(root, "added_tokens");
    char where[64];

    if (!arr || json_is_null(arr))
        return true;
    if (!json_is_array(arr))
        return bad(c, TENDO_ERR_FORMAT, "added_tokens is not an array");
    if (!(tok->added = tendo__calloc(json_array_size(arr) + 1, sizeof *tok->added)))
        return oom(c);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        tx_added *a = &tok->added[tok->nadded];
        const char *content;
        snprintf(where, sizeof where, "added_tokens[%zu]", i);
        if (!json_is_object(e))
            return bad(c, TENDO_ERR_FORMAT, "%s is not an object", where);
        if (!get_id(c, json_object_get(e, "id"), where, &a->id) || !get_str(c, e, where, "content", NULL, &content) ||
            !get_bool(c, e, where, "single_word", false, &a->single_word) ||
            !get_bool(c, e, where, "lstrip", false, &a->lstrip) || !get_bool(c, e, where, "rstrip", false, &a->rstrip) ||
            !get_bool(c, e, where, "special", false, &a->special) ||
            !get_bool(c, e, where, "normalized", !a->special, &a->normalized))
            return false;
        if (!content)
            return bad(c, TENDO_ERR_FORMAT, "%s has no content", where);
        if (!copy_str(c, content, &a->content))
            return false;
        a->n = strlen(content);
        tok->nadded++;
    }
    return true;
}

/* The normalized form of each normalized added token (what the normalized
 * text is searched for). */
static bool normalize_added(const ctx *c, tendo_tokenizer *tok)
{
    for (size_t i = 0; i < tok->nadded; i++) {
        tx_added *a = &tok->added[i];
        tx_str s = {0};
        if (!a->normalized)
            continue;
        if (!(tok->normalizer ? tx_normalize(c->op, tok->normalizer, a->content, a->n, &s) : tx_put(c->op, &s, a->content, a->n)))
            return tx_str_free(&s), false;
        a->norm = s.s;
        a->norm_n = s.n;
    }
    return true;
}

/* Appends the ids of the special token named name (TemplateProcessing's
 * special_tokens) to *ids. */
static bool template_ids(const ctx *c, const json_t *specials, const char *name, int64_t **ids, size_t *n)
{
    json_t *sp = json_object_get(specials, name), *arr = json_object_get(sp, "ids");
    char where[128];

    if (!json_is_array(arr))
        return bad(c, TENDO_ERR_FORMAT, "post_processor.special_tokens has no ids for \"%.40s\"", name);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        int64_t id, *grown;
        snprintf(where, sizeof where, "post_processor.special_tokens[\"%.40s\"].ids[%zu]", name, i);
        if (!get_id(c, json_array_get(arr, i), where, &id))
            return false;
        if (!(grown = tendo__realloc(*ids, (*n + 1) * sizeof *grown)))
            return oom(c);
        *ids = grown;
        (*ids)[(*n)++] = id;
    }
    return true;
}

/* Puts ids[0..k) at the start (front) or the end of *v. */
static bool wrap(const ctx *c, int64_t **v, size_t *n, const int64_t *ids, size_t k, bool front)
{
    int64_t *grown;

    if (k == 0)
        return true;
    if (!(grown = tendo__realloc(*v, (*n + k + 1) * sizeof *grown)))
        return oom(c);
    if (front) {
        memmove(grown + k, grown, *n * sizeof *grown);
        memcpy(grown, ids, k * sizeof *ids);
    } else {
        memcpy(grown + *n, ids, k * sizeof *ids);
    }
    *v = grown;
    *n += k;
    return true;
}

/* A [token, id] pair of Bert/RobertaProcessing. */
static bool pair_id(const ctx *c, const json_t *o, const char *key, int64_t *id)
{
    json_t *p = json_object_get(o, key);
    char where[64];

    snprintf(where, sizeof where, "post_processor.%s", key);
    if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_string(json_array_get(p, 0)))
        return bad(c, TENDO_ERR_FORMAT, "%s is not [token, id]", where);
    return get_id(c, json_array_get(p, 1), where, id);
}

static bool post_processor(const ctx *c, const json_t *o, const char *where, tendo_tokenizer *tok)
{
    const char *type;
    char sub[96];

    if (!type_of(c, o, where, &type))
        return false;
    if (!strcmp(type, "ByteLevel"))
        return true; /* offsets only */
    if (!strcmp(type, "BertProcessing") || !strcmp(type, "RobertaProcessing")) {
        int64_t cls, sep;
        return pair_id(c, o, "cls", &cls) && pair_id(c, o, "sep", &sep) && wrap(c, &tok->before, &tok->nbefore, &cls, 1, true) &&
               wrap(c, &tok->after, &tok->nafter, &sep, 1, false);
    }
    if (!strcmp(type, "TemplateProcessing")) {
        json_t *single = json_object_get(o, "single"), *specials = json_object_get(o, "special_tokens");
        int64_t *pre = NULL, *post = NULL;
        size_t npre = 0, npost = 0;
        bool seen = false, ok = true;
        if (!json_is_array(single) || !json_is_object(specials))
            return bad(c, TENDO_ERR_FORMAT, "%s lacks single or special_tokens", where);
        for (size_t i = 0; ok && i < json_array_size(single); i++) {
            json_t *e = json_array_get(single, i), *st = json_object_get(e, "SpecialToken");
            if (json_object_get(e, "Sequence")) {
                seen = true;
                continue;
            }
            if (!json_is_string(json_object_get(st, "id"))) {
                ok = bad(c, TENDO_ERR_FORMAT, "%s.single[%zu] is neither a Sequence nor a SpecialToken", where, i);
                break;
            }
            ok = template_ids(c, specials, json_string_value(json_object_get(st, "id")), seen ? &post : &pre,
                              seen ? &npost : &npre);
        }
        ok = ok && wrap(c, &tok->before, &tok->nbefore, pre, npre, true) && wrap(c, &tok->after, &tok->nafter, post, npost, false);
        free(pre);
        free(post);
        return ok;
    }
    if (!strcmp(type, "Sequence")) {
        json_t *arr = json_object_get(o, "processors");
        if (!json_is_array(arr))
            return bad(c, TENDO_ERR_FORMAT, "%s.processors is not an array", where);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            snprintf(sub, sizeof sub, "%s.processors[%zu]", where, i);
            if (!post_processor(c, json_array_get(arr, i), sub, tok))
                return false;
        }
        return true;
    }
    return bad(c, TENDO_ERR_UNSUPPORTED, "%s: the %s post-processor is not supported", where, type);
}

/* ---- ids to tokens ----------------------------------------------------------------------- */

static bool index_ids(const ctx *c, tendo_tokenizer *tok)
{
    const tx_vocab *v = &tok->model.vocab;
    int64_t size = 0;

    for (size_t i = 0; i < v->n; i++)
        size = v->id[i] + 1 > size ? v->id[i] + 1 : size;
    for (size_t i = 0; i < tok->nadded; i++)
        size = tok->added[i].id + 1 > size ? tok->added[i].id + 1 : size;
    for (size_t i = 0; i < tok->nbefore; i++)
        if (tok->before[i] >= size)
            return bad(c, TENDO_ERR_FORMAT, "the post-processor's id %lld has no token", (long long)tok->before[i]);
    for (size_t i = 0; i < tok->nafter; i++)
        if (tok->after[i] >= size)
            return bad(c, TENDO_ERR_FORMAT, "the post-processor's id %lld has no token", (long long)tok->after[i]);
    tok->size = size;
    tok->token = tendo__calloc((size_t)size + 1, sizeof *tok->token);
    tok->special = tendo__calloc((size_t)size + 1, sizeof *tok->special);
    if (!tok->token || !tok->special)
        return oom(c);
    for (size_t i = 0; i < v->n; i++) {
        if (tok->token[v->id[i]])
            return bad(c, TENDO_ERR_FORMAT, "model.vocab gives id %lld to both \"%.40s\" and \"%.40s\"",
                       (long long)v->id[i], tok->token[v->id[i]], v->str[i]);
        tok->token[v->id[i]] = v->str[i];
    }
    for (size_t i = 0; i < tok->nadded; i++) { /* an added token's spelling wins, as in `tokenizers` */
        const tx_added *a = &tok->added[i];
        tok->token[a->id] = a->content;
        if (a->special) {
            int64_t same = tx_vocab_get(v, a->content, a->n);
            tok->special[a->id] = true;
            if (same >= 0)
                tok->special[same] = true;
        }
    }
    return true;
}

/* ---- the file ------------------------------------------------------------------------------ */

/* The tokenizer.json of path (path itself, or inside the directory path):
 * a malloc'd path, or NULL with the error set. */
static char *file_of(const char *op, const char *path)
{
    struct stat st;
    char *file;
    size_t n = strlen(path);

    if (n == 0)
        return tendo__fail(TENDO_ERR_IO, op, "empty path"), NULL;
    if (stat(path, &st) != 0)
        return tendo__fail(TENDO_ERR_IO, op, "%s: %s", path, strerror(errno)), NULL;
    if (!S_ISDIR(st.st_mode)) {
        if (!S_ISREG(st.st_mode))
            return tendo__fail(TENDO_ERR_IO, op, "%s: not a regular file", path), NULL;
        file = tendo__strdup(path);
    } else if ((file = tendo__malloc(n + sizeof "/tokenizer.json"))) {
        snprintf(file, n + sizeof "/tokenizer.json", "%s/tokenizer.json", path);
        if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
            tendo__fail(TENDO_ERR_IO, op, "%s: no tokenizer.json in the directory", path);
            free(file);
            return NULL;
        }
    }
    if (!file)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a path");
    return file;
}

static bool component(const ctx *c, const json_t *root, const char *key, void **out, size_t size)
{
    json_t *o = json_object_get(root, key);

    if (!o || json_is_null(o))
        return true;
    if (!(*out = tendo__calloc(1, size)))
        return oom(c);
    if (!strcmp(key, "normalizer"))
        return normalizer(c, o, key, *out);
    if (!strcmp(key, "pre_tokenizer"))
        return pretok(c, o, key, *out);
    return decoder(c, o, key, *out);
}

bool tx_load(const char *op, const char *path, tendo_tokenizer *tok)
{
    char *file = file_of(op, path);
    json_error_t jerr;
    json_t *root, *post;
    ctx c = {op, path};
    bool ok;

    if (!file)
        return false;
    tendo__json_setup();
    tendo__json_oom();
    root = json_load_file(file, JSON_ALLOW_NUL, &jerr);
    free(file);
    if (!root) {
        if (tendo__json_oom())
            return oom(&c);
        return bad(&c, jerr.line < 0 ? TENDO_ERR_IO : TENDO_ERR_FORMAT, "%s%s (line %d)",
                   jerr.line < 0 ? "" : "not valid JSON: ", jerr.text, jerr.line);
    }
    post = json_object_get(root, "post_processor");
    ok = json_is_object(root) || bad(&c, TENDO_ERR_FORMAT, "not a JSON object");
    ok = ok && model_of(&c, json_object_get(root, "model"), &tok->model) && added_of(&c, root, tok) &&
         component(&c, root, "normalizer", (void **)&tok->normalizer, sizeof *tok->normalizer) &&
         component(&c, root, "pre_tokenizer", (void **)&tok->pretok, sizeof *tok->pretok) &&
         component(&c, root, "decoder", (void **)&tok->decoder, sizeof *tok->decoder) && normalize_added(&c, tok) &&
         (!post || json_is_null(post) || post_processor(&c, post, "post_processor", tok)) && index_ids(&c, tok);
    json_decref(root);
    return ok;
}

void tx_release(tendo_tokenizer *tok)
{
    tx_model_free(&tok->model);
    tx_normalizer_free(tok->normalizer);
    free(tok->normalizer);
    tx_pretok_free(tok->pretok);
    free(tok->pretok);
    tx_decoder_free(tok->decoder);
    free(tok->decoder);
    for (size_t i = 0; i < tok->nadded; i++) {
        free(tok->added[i].content);
        free(tok->added[i].norm);
    }
    free(tok->added);
    free(tok->before);
    free(tok->after);
    free(tok->token);
    free(tok->special);
}
