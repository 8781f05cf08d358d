/* t/fuzz/fuzz-tokenizer.c - tendo_tokenizer on arbitrary bytes.
 *
 * The input's first byte picks what the rest is:
 *   even  a tokenizer.json: loaded, then (when it loads) a fixed text with
 *         special tokens, stray bytes and several scripts encoded and its ids
 *         decoded;
 *   odd   text, encoded by one of three built-in tokenizers (byte-level BPE
 *         with a Llama 3 split, WordPiece with BERT's normalizer, and
 *         SentencePiece-style BPE with byte fallback; byte / 2 % 3 picks)
 *         with and without special tokens, and its ids decoded.
 * Promises checked: a refused file has a documented status naming the
 * file; text that is not UTF-8 is TENDO_ERR_INVALID_ARG and valid text
 * encodes; every id is below vocab_size and decodes to valid UTF-8; a
 * failed call leaves its outputs untouched.
 */
#include <string.h>

#include "fuzz.h"

static const char *const builtin[3] = {
    "{\"added_tokens\": [{\"id\": 9, \"content\": \"<|eot|>\", \"special\": true}],"
    " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\":"
    " \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+"
    "[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\"},"
    " {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]},"
    " \"decoder\": {\"type\": \"ByteLevel\"},"
    " \"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"a\": 0, \"b\": 1, \"\\u0120\": 2,"
    " \"ab\": 3, \"\\u0120a\": 4, \"\\u0120ab\": 5, \"c\": 6, \"\\u00c3\": 7, \"\\u00a9\": 8},"
    " \"merges\": [\"a b\", \"\\u0120 a\", \"\\u0120a b\"]}}",
    "{\"added_tokens\": [{\"id\": 1, \"content\": \"[CLS]\", \"special\": true},"
    " {\"id\": 2, \"content\": \"[SEP]\", \"special\": true}, {\"id\": 9, \"content\": \"xy\", \"single_word\": true,"
    " \"lstrip\": true, \"rstrip\": true, \"normalized\": true}],"
    " \"normalizer\": {\"type\": \"BertNormalizer\"}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
    " \"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 2], \"cls\": [\"[CLS]\", 1]},"
    " \"decoder\": {\"type\": \"WordPiece\"}, \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\","
    " \"max_input_chars_per_word\": 8, \"vocab\": {\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2, \"a\": 3, \"##b\": 4,"
    " \"ab\": 5, \"!\": 6, \"##a\": 7, \"e\": 8}}}",
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, {\"id\": 1, \"content\": \"<s>\","
    " \"special\": true}], \"normalizer\": {\"type\": \"NFKC\"},"
    " \"pre_tokenizer\": {\"type\": \"Metaspace\", \"prepend_scheme\": \"first\"},"
    " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
    " {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"ids\": [1]}}},"
    " \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Metaspace\", \"prepend_scheme\": \"first\"},"
    " {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}]},"
    " \"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"byte_fallback\": true, \"fuse_unk\": true,"
    " \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"<0xC3>\": 2, \"<0xA9>\": 3, \"\\u2581\": 4, \"a\": 5, \"\\u2581a\": 6},"
    " \"merges\": [\"\\u2581 a\"]}}",
};

/* Encodes text with tok and decodes the ids back, checking the promises. */
static void round_trip(const tendo_tokenizer *tok, const char *text, size_t n, bool special)
{
    int64_t *ids = (int64_t *)(uintptr_t)0x10, vocab = tendo_tokenizer_vocab_size(tok);
    size_t nids = 12345, len = 777;
    char *back = (char *)(uintptr_t)0x10;
    tendo_status st = tendo_tokenizer_encode(tok, text, n, special, &ids, &nids);

    if (st != TENDO_OK) {
        fuzz_check(st == TENDO_ERR_INVALID_ARG || st == TENDO_ERR_OOM, "encode: %s",
                   tendo_error_message(tendo_last_error()));
        fuzz_check(ids == (int64_t *)(uintptr_t)0x10 && nids == 12345, "a failed encode wrote its outputs");
        return;
    }
    for (size_t i = 0; i < nids; i++)
        fuzz_check(ids[i] >= 0 && ids[i] < vocab, "id %lld of a vocabulary of %lld", (long long)ids[i],
                   (long long)vocab);
    st = tendo_tokenizer_decode(tok, ids, nids, !special, &back, &len);
    if (st == TENDO_OK) {
        fuzz_check(strlen(back) <= len, "decode: the length is wrong");
        free(back);
    } else {
        fuzz_check(st == TENDO_ERR_OOM || st == TENDO_ERR_INVALID_ARG, "decode: %s",
                   tendo_error_message(tendo_last_error()));
        fuzz_check(back == (char *)(uintptr_t)0x10 && len == 777, "a failed decode wrote its outputs");
    }
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sample[] = "Hello <|eot|>[CLS] world's 123,456 caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
                                 "\xf0\x9f\x98\x80  \t ab abab <s> xy";
    tendo_tokenizer *tok;

    if (size == 0)
        return 0;
    if (data[0] % 2 == 0) {
        const char *path = fuzz_write_file("tokenizer.json", data + 1, size - 1);
        if (!(tok = tendo_tokenizer_load(path))) {
            fuzz_check_refusal(path);
            return 0;
        }
        round_trip(tok, sample, sizeof sample - 1, false);
        round_trip(tok, sample, sizeof sample - 1, true);
    } else {
        const char *path = fuzz_write_file("tokenizer.json", (const uint8_t *)builtin[data[0] / 2 % 3],
                                           strlen(builtin[data[0] / 2 % 3]));
        fuzz_check((tok = tendo_tokenizer_load(path)) != NULL || tendo_error_status(tendo_last_error()) == TENDO_ERR_OOM,
                   "a built-in tokenizer: %s", tendo_error_message(tendo_last_error()));
        if (!tok)
            return 0;
        round_trip(tok, (const char *)data + 1, size - 1, false);
        round_trip(tok, (const char *)data + 1, size - 1, true);
    }
    tendo_tokenizer_free(tok);
    return 0;
}
