/* src/text/none.c - tendo_tokenizer in a build without PCRE2 or utf8proc
 * (configure --without-tokenizers, or neither found): every file is
 * refused, saying what the build lacks. */
#include "config.h"

#include <stdlib.h>

#include "core/internal.h"
#include "tendo/text.h"

tendo_tokenizer *tendo_tokenizer_load(const char *path)
{
    static const char op[] = "tokenizer_load";

    if (!path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "path is NULL"), NULL;
    tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                "%s: this build has no tokenizers (configure found no PCRE2 or utf8proc: "
                "apt-get install libpcre2-dev libutf8proc-dev)",
                path);
    return NULL;
}

void tendo_tokenizer_free(tendo_tokenizer *tok) { (void)tok; }

/* No tokenizer can exist in this build: every call with one is refused. */
static tendo_status no_tokenizer(const char *op)
{
    return tendo__fail(TENDO_ERR_INVALID_ARG, op, "tok is NULL (this build has no tokenizers)");
}

tendo_status tendo_tokenizer_encode(const tendo_tokenizer *tok, const char *text, size_t len, bool add_special,
                                    int64_t **ids, size_t *n)
{
    (void)tok, (void)text, (void)len, (void)add_special, (void)ids, (void)n;
    return no_tokenizer("tokenizer_encode");
}

tendo_status tendo_tokenizer_decode(const tendo_tokenizer *tok, const int64_t *ids, size_t n, bool skip_special,
                                    char **text, size_t *len)
{
    (void)tok, (void)ids, (void)n, (void)skip_special, (void)text, (void)len;
    return no_tokenizer("tokenizer_decode");
}

int64_t tendo_tokenizer_vocab_size(const tendo_tokenizer *tok) { return (void)tok, 0; }

int64_t tendo_tokenizer_token_id(const tendo_tokenizer *tok, const char *token) { return (void)tok, (void)token, -1; }

const char *tendo_tokenizer_token(const tendo_tokenizer *tok, int64_t id) { return (void)tok, (void)id, NULL; }

bool tendo_tokenizer_is_special(const tendo_tokenizer *tok, int64_t id) { return (void)tok, (void)id, false; }
