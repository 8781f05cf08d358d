/* src/text/text.h - what the parts of tendo_tokenizer share.
 *
 * A tokenizer.json describes a pipeline (Hugging Face `tokenizers`):
 *
 *   text -> added tokens split off -> normalizer -> pre-tokenizer -> model
 *        -> post-processor (special tokens)           ids -> decoder -> text
 *
 * load.c reads the file into the structures below; tokenizer.c runs the
 * pipeline and holds the public functions; unicode.c has UTF-8, the Unicode
 * classes the steps use, PCRE2 and the split behaviours; normalize.c,
 * pretokenize.c, models.c and decode.c are one step each.  Every function
 * returning bool sets tendo's error (naming op) when it returns false.
 */
#ifndef TENDO_TEXT_INTERNAL_H
#define TENDO_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tendo/text.h"

/* ---- growable arrays (unicode.c) ----------------------------------------------- */

/* Bytes: s[n] is kept '\0' (s may be NULL while n == 0). */
typedef struct {
    char *s;
    size_t n, cap;
} tx_str;

bool tx_put(const char *op, tx_str *b, const char *s, size_t n);
bool tx_putc(const char *op, tx_str *b, uint32_t cp); /* one code point, UTF-8 encoded */
size_t tx_encode(uint32_t cp, char out[4]);           /* cp as UTF-8 into out: its length */
void tx_str_free(tx_str *b);

typedef struct {
    int64_t *v;
    size_t n, cap;
} tx_ids;

bool tx_ids_push(const char *op, tx_ids *ids, int64_t id);

/* A piece of the text on its way through the pipeline: its bytes (owned),
 * the id of the added token it is (-1 for text still to tokenise), and
 * whether it starts where the text started (Metaspace's "first"). */
typedef struct {
    char *s;
    size_t n;
    int64_t id;
    bool at_start;
} tx_piece;

typedef struct {
    tx_piece *v;
    size_t n, cap;
} tx_pieces;

bool tx_pieces_push(const char *op, tx_pieces *ps, const char *s, size_t n, int64_t id, bool at_start);
void tx_pieces_free(tx_pieces *ps);

/* ---- UTF-8 and Unicode (unicode.c) ------------------------------------------- */

/* The code point at s[0..n) (n > 0) of valid UTF-8, its length in *len. */
uint32_t tx_decode(const char *s, size_t n, size_t *len);
/* The offset of the first byte that is not valid UTF-8 in s, or n. */
size_t tx_invalid_at(const char *s, size_t n);
/* s as UTF-8, each maximal invalid part replaced by U+FFFD (Rust's
 * String::from_utf8_lossy), appended to out. */
bool tx_put_lossy(const char *op, tx_str *out, const char *s, size_t n);

bool tx_is_whitespace(uint32_t c);  /* Rust's char::is_whitespace (White_Space) */
bool tx_is_punctuation(uint32_t c); /* categories P*, and ASCII's symbols too */
bool tx_is_control(uint32_t c);     /* BERT's: Cc, Cf, Co, Cs (not unassigned), not \t \n \r */
bool tx_is_numeric(uint32_t c);     /* categories Nd, Nl, No */
bool tx_is_word(uint32_t c);        /* Rust regex's \w: letters, marks, Nd, Nl, Pc, ZWJ/ZWNJ */
bool tx_is_mark_nonspacing(uint32_t c); /* Mn */
bool tx_is_mark(uint32_t c);            /* Mn, Mc, Me */
bool tx_is_chinese(uint32_t c);     /* BERT's CJK ideograph blocks */

/* GPT-2's map of bytes to printable code points, and back (-1: none). */
uint32_t tx_byte_char(uint8_t b);
int tx_char_byte(uint32_t c);

/* Unicode normal forms through utf8proc; form is one of "NFC" "NFD" "NFKC"
 * "NFKD". */
bool tx_normal_form(const char *op, const char *form, const char *s, size_t n, tx_str *out);
/* Rust's to_lowercase of each code point (full mappings: U+0130 -> i + U+0307). */
bool tx_lowercase(const char *op, const char *s, size_t n, tx_str *out);

/* ---- regular expressions and splitting (unicode.c) -------------------------- */

typedef struct tx_regex tx_regex;

/* pattern compiled by PCRE2 (UTF, Unicode properties); literal: a plain
 * string.  NULL with the error set. */
tx_regex *tx_regex_new(const char *op, const char *pattern, size_t n, bool literal);
void tx_regex_free(tx_regex *re);

/* A span of bytes [a, b) of a piece, and whether it is a match. */
typedef struct {
    size_t a, b;
    bool match;
} tx_span;

typedef struct {
    tx_span *v;
    size_t n, cap;
} tx_spans;

bool tx_spans_push(const char *op, tx_spans *sp, size_t a, size_t b, bool match);

/* The matches of re in s[0..n) and the gaps between them, in order
 * (`tokenizers`' Pattern::find_matches for a regex). */
bool tx_regex_spans(const char *op, const tx_regex *re, const char *s, size_t n, tx_spans *out);

/* s[0..n) with every match of re replaced by content, appended to out
 * (the Replace normalizer and decoder). */
bool tx_replace(const char *op, const tx_regex *re, const char *content, size_t content_n, const char *s, size_t n,
                tx_str *out);

/* How a split treats the matches (`tokenizers`' SplitDelimiterBehavior). */
typedef enum { TX_REMOVED, TX_ISOLATED, TX_MERGED_PREVIOUS, TX_MERGED_NEXT, TX_CONTIGUOUS } tx_behavior;

/* Appends to out the pieces p splits into by spans (covering p) and
 * behaviour; invert swaps matches and gaps first.  Empty pieces are dropped. */
bool tx_split(const char *op, const tx_piece *p, tx_spans *spans, tx_behavior behavior, bool invert, tx_pieces *out);

/* ---- normalizers (normalize.c) ---------------------------------------------- */

typedef enum {
    TX_N_BERT,
    TX_N_NFC,
    TX_N_NFD,
    TX_N_NFKC,
    TX_N_NFKD,
    TX_N_LOWERCASE,
    TX_N_STRIP,
    TX_N_STRIP_ACCENTS,
    TX_N_REPLACE,
    TX_N_PREPEND,
    TX_N_SEQUENCE
} tx_normalizer_kind;

typedef struct tx_normalizer {
    tx_normalizer_kind kind;
    bool clean_text, chinese, strip_accents, lowercase; /* BERT */
    bool left, right;                                   /* Strip */
    tx_regex *re;                                       /* Replace */
    char *content;                                      /* Replace, Prepend */
    size_t content_n;
    struct tx_normalizer *seq; /* Sequence */
    size_t nseq;
} tx_normalizer;

/* s[0..n) normalized by nz into out (replacing what out held). */
bool tx_normalize(const char *op, const tx_normalizer *nz, const char *s, size_t n, tx_str *out);
void tx_normalizer_free(tx_normalizer *nz);

/* ---- pre-tokenizers (pretokenize.c) ----------------------------------------- */

typedef enum {
    TX_P_BERT,
    TX_P_BYTE_LEVEL,
    TX_P_METASPACE,
    TX_P_SPLIT,
    TX_P_WHITESPACE,
    TX_P_WHITESPACE_SPLIT,
    TX_P_PUNCTUATION,
    TX_P_DIGITS,
    TX_P_SEQUENCE
} tx_pretok_kind;

typedef enum { TX_PREPEND_ALWAYS, TX_PREPEND_FIRST, TX_PREPEND_NEVER } tx_prepend;

typedef struct tx_pretok {
    tx_pretok_kind kind;
    bool add_prefix_space, use_regex; /* ByteLevel */
    uint32_t replacement;             /* Metaspace, and as UTF-8: */
    char rep[4];
    size_t rep_n;
    tx_prepend prepend;
    bool split;
    tx_regex *re; /* Split (ByteLevel's own regex when use_regex) */
    tx_behavior behavior;
    bool invert;
    bool individual_digits; /* Digits */
    struct tx_pretok *seq;  /* Sequence */
    size_t nseq;
} tx_pretok;

/* Splits the pieces still to tokenise (id < 0) of *ps in place. */
bool tx_pretokenize(const char *op, const tx_pretok *pt, tx_pieces *ps);
void tx_pretok_free(tx_pretok *pt);

/* ---- vocabularies and models (models.c) ------------------------------------- */

/* Strings to ids: a hash index over entries. */
typedef struct {
    char **str; /* owned, '\0'-terminated (tokens hold no NUL) */
    size_t *len;
    int64_t *id;
    size_t n;
    uint32_t *slot; /* entry index + 1; 0 empty */
    size_t nslot;
} tx_vocab;

int64_t tx_vocab_get(const tx_vocab *v, const char *s, size_t n); /* -1 when absent */
bool tx_vocab_init(const char *op, tx_vocab *v, size_t n);        /* room for n entries */
bool tx_vocab_add(const char *op, tx_vocab *v, const char *s, size_t n, int64_t id); /* a later entry wins */
void tx_vocab_free(tx_vocab *v);

/* BPE merges: (left id, right id) -> (rank, merged id). */
typedef struct {
    uint64_t *key; /* (left << 32 | right) + 1; 0 empty */
    uint32_t *rank;
    int64_t *merged;
    size_t nslot;
} tx_merges;

bool tx_merges_init(const char *op, tx_merges *m, size_t n); /* room for n merges */
void tx_merges_add(tx_merges *m, int64_t left, int64_t right, uint32_t rank, int64_t merged);
void tx_merges_free(tx_merges *m);

typedef enum { TX_M_WORDPIECE, TX_M_BPE, TX_M_WORDLEVEL } tx_model_kind;

typedef struct {
    tx_model_kind kind;
    tx_vocab vocab;
    int64_t unk; /* the unknown token's id, -1 when the model has none */
    char *prefix, *suffix; /* continuing_subword_prefix, end_of_word_suffix (NULL: none) */
    size_t max_chars;      /* WordPiece's max_input_chars_per_word */
    bool byte_fallback, fuse_unk, ignore_merges;
    tx_merges merges;
    int64_t byte_id[256]; /* <0xXX> tokens for byte_fallback, -1 absent */
} tx_model;

/* Appends the ids of one pre-tokenized piece to out. */
bool tx_model_encode(const char *op, const tx_model *m, const char *s, size_t n, tx_ids *out);
void tx_model_free(tx_model *m);

/* ---- decoders (decode.c) ------------------------------------------------------ */

typedef enum {
    TX_D_BYTE_LEVEL,
    TX_D_WORDPIECE,
    TX_D_METASPACE,
    TX_D_BYTE_FALLBACK,
    TX_D_FUSE,
    TX_D_STRIP,
    TX_D_REPLACE,
    TX_D_BPE,
    TX_D_SEQUENCE
} tx_decoder_kind;

typedef struct tx_decoder {
    tx_decoder_kind kind;
    char *text; /* WordPiece's prefix, BPE's suffix, Replace's content */
    bool cleanup;
    uint32_t replacement; /* Metaspace; Strip's content */
    tx_prepend prepend;
    size_t start, stop; /* Strip */
    tx_regex *re;       /* Replace */
    struct tx_decoder *seq;
    size_t nseq;
} tx_decoder;

/* The tokens (each an owned string in *ps, ids ignored) turned by the
 * decoder chain into the pieces of the text, in place. */
bool tx_decode_chain(const char *op, const tx_decoder *d, tx_pieces *ps);
void tx_decoder_free(tx_decoder *d);

/* ---- the tokenizer (tokenizer.c, load.c) ------------------------------------ */

typedef struct {
    char *content, *norm; /* the token, and its normalized form (normalized tokens) */
    size_t n, norm_n;
    int64_t id;
    bool single_word, lstrip, rstrip, normalized, special;
} tx_added;

struct tendo_tokenizer {
    tx_model model;
    tx_normalizer *normalizer; /* NULL: none */
    tx_pretok *pretok;
    tx_decoder *decoder;
    tx_added *added;
    size_t nadded;
    int64_t *before, *after; /* what the post-processor puts around one sequence */
    size_t nbefore, nafter;
    int64_t size;       /* number of ids */
    const char **token; /* [size]: each id's spelling (added tokens first), NULL none */
    bool *special;      /* [size] */
};

/* Reads the tokenizer.json at path into tok (zeroed by the caller). */
bool tx_load(const char *op, const char *path, tendo_tokenizer *tok);
void tx_release(tendo_tokenizer *tok);

#endif
