/* tendo/text.h - text to token ids and back, with the model's own
 * tokenizer.json (Hugging Face `tokenizers` format).  Included by <tendo.h>.
 *
 * Supported: the models WordPiece (BERT), BPE (byte-level: GPT-2, Llama 3,
 * Qwen2; SentencePiece-style with byte fallback: Llama 2, Mistral) and
 * WordLevel; the normalizers, pre-tokenizers, post-processors and decoders
 * those files use (NFC/NFD/NFKC/NFKD through utf8proc, the regular
 * expressions through PCRE2); added and special tokens.  Encoding gives the
 * ids `tokenizers` gives for the same text, decoding its strings.  A file
 * that asks for anything else (a Unigram model, a precompiled
 * SentencePiece charsmap, BPE dropout) is refused with TENDO_ERR_UNSUPPORTED,
 * naming it; one with a U+0000 in a vocabulary key, which jansson cannot
 * read, with TENDO_ERR_FORMAT.  The file's truncation and padding are not
 * applied.  A build without PCRE2 or utf8proc (configure --with-tokenizers)
 * refuses every file the same way.
 *
 * A tokenizer is immutable after loading: any number of threads may encode
 * and decode with one tokenizer at the same time.
 */
#ifndef TENDO_TEXT_H
#define TENDO_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tendo/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tendo_tokenizer tendo_tokenizer;

/* The tokenizer of path: a tokenizer.json file, or a directory holding one.
 * Returns a tokenizer the caller owns (tendo_tokenizer_free), or NULL with
 * the error set: TENDO_ERR_IO for a file that cannot be read, TENDO_ERR_FORMAT
 * for a file that is not a valid tokenizer.json, TENDO_ERR_UNSUPPORTED for a
 * valid one that asks for what tendo does not implement. */
TENDO_API tendo_tokenizer *tendo_tokenizer_load(const char *path);

/* Frees tok (NULL is allowed). */
TENDO_API void tendo_tokenizer_free(tendo_tokenizer *tok);

/* The ids of the len bytes of text (UTF-8; TENDO_ERR_INVALID_ARG naming the
 * byte offset when it is not valid UTF-8).  Special tokens written in the
 * text are recognised; add_special adds what the file's post-processor adds
 * to one sequence (BERT's [CLS] ... [SEP], Llama's <s>).  On success *ids is
 * a malloc'd array of *n ids the caller frees (free(); NULL when *n is 0);
 * on failure *ids and *n are left as they were. */
TENDO_API tendo_status tendo_tokenizer_encode(const tendo_tokenizer *tok, const char *text, size_t len, bool add_special,
                                    int64_t **ids, size_t *n);

/* The text of n ids (the file's decoder applied to their tokens), without
 * the special tokens when skip_special.  On success *text is a malloc'd,
 * NUL-terminated string of *len bytes the caller frees; an id outside the
 * vocabulary fails with TENDO_ERR_INVALID_ARG naming it and its position. */
TENDO_API tendo_status tendo_tokenizer_decode(const tendo_tokenizer *tok, const int64_t *ids, size_t n, bool skip_special,
                                    char **text, size_t *len);

/* The number of ids: one more than the largest id of the vocabulary and of
 * the added tokens; 0 for NULL. */
TENDO_API int64_t tendo_tokenizer_vocab_size(const tendo_tokenizer *tok);

/* The id of the token spelled token (a vocabulary entry or an added token),
 * or -1 when there is none. */
TENDO_API int64_t tendo_tokenizer_token_id(const tendo_tokenizer *tok, const char *token);

/* The spelling of id, owned by tok; NULL for an id that has none. */
TENDO_API const char *tendo_tokenizer_token(const tendo_tokenizer *tok, int64_t id);

/* Whether id is an added token marked special ([CLS], <|eot_id|>, ...). */
TENDO_API bool tendo_tokenizer_is_special(const tendo_tokenizer *tok, int64_t id);

#ifdef __cplusplus
}
#endif

#endif
