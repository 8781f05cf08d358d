/* t/drivers/t-tokenizer.c - tendo_tokenizer on small tokenizer.json files
 * written here, with ids worked out by hand: WordPiece (BERT's normalizer,
 * pre-tokenizer, template and decoder), byte-level BPE (merges by rank,
 * added tokens), SentencePiece-style BPE (byte fallback both ways); the
 * arguments every function refuses; hostile files (not JSON, unknown
 * components, missing merges, ids out of range or given twice, bad
 * regular expressions), each a clear error; invalid UTF-8; and every
 * allocation of load, encode and decode failing in turn (an error, no
 * leak, the outputs untouched).  The comparison with Hugging Face
 * `tokenizers` on real and trained files is t/interop/t-tokenize-hf.sh.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tendo.h>

#include "core/internal.h"
#include "tap.h"

static char dir[] = "/tmp/tendo-tokenizer-XXXXXX";

/* Writes text as dir/name; returns the path (static). */
static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0)
        bail("cannot write %s", path);
    return path;
}

static const char wordpiece_json[] =
    "{\"added_tokens\": [{\"id\": 1, \"content\": \"[CLS]\", \"special\": true},"
    "  {\"id\": 2, \"content\": \"[SEP]\", \"special\": true}],"
    " \"normalizer\": {\"type\": \"BertNormalizer\", \"lowercase\": true},"
    " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
    " \"post_processor\": {\"type\": \"TemplateProcessing\","
    "   \"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\"}}, {\"Sequence\": {\"id\": \"A\"}},"
    "              {\"SpecialToken\": {\"id\": \"[SEP]\"}}],"
    "   \"special_tokens\": {\"[CLS]\": {\"ids\": [1]}, \"[SEP]\": {\"ids\": [2]}}},"
    " \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true},"
    " \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\","
    "   \"vocab\": {\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2, \"hello\": 3, \"world\": 4, \"##s\": 5, \"un\": 6,"
    "             \"##able\": 7, \",\": 8, \"!\": 9, \"caf\": 10, \"##e\": 11}}}";

/* Byte-level: h i Ġ, "hi" and "Ġhi" merged, one special token. */
static const char bytelevel_json[] =
    "{\"added_tokens\": [{\"id\": 5, \"content\": \"<|end|>\", \"special\": true}],"
    " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false},"
    " \"decoder\": {\"type\": \"ByteLevel\"},"
    " \"model\": {\"type\": \"BPE\", \"vocab\": {\"h\": 0, \"i\": 1, \"\\u0120\": 2, \"hi\": 3, \"\\u0120hi\": 4,"
    "   \"<|end|>\": 5}, \"merges\": [\"h i\", [\"\\u0120\", \"hi\"]]}}";

/* SentencePiece-style: "▁" prepended, spaces as "▁", bytes as <0xXX>. */
static const char sentencepiece_json[] =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true},"
    "  {\"id\": 1, \"content\": \"<s>\", \"special\": true}],"
    " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"},"
    "   {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]},"
    " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
    "   {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"ids\": [1]}}},"
    " \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"},"
    "   \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"},"
    "   {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
    " \"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"byte_fallback\": true, \"fuse_unk\": true,"
    "   \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"<0xC3>\": 2, \"<0xA9>\": 3, \"\\u2581\": 4, \"a\": 5, \"\\u2581a\": 6},"
    "   \"merges\": [\"\\u2581 a\"]}}";

/* ids of text as "3 8 4" (static). */
static const char *encoded(const tendo_tokenizer *tok, const char *text, bool special)
{
    static char buf[512];
    int64_t *ids = NULL;
    size_t n = 0, at = 0;

    buf[0] = '\0';
    if (tendo_tokenizer_encode(tok, text, strlen(text), special, &ids, &n) != TENDO_OK)
        return tendo_error_message(tendo_last_error());
    for (size_t i = 0; i < n && at < sizeof buf - 24; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, i ? " %lld" : "%lld", (long long)ids[i]);
    free(ids);
    return buf;
}

/* The text of ids (static). */
static const char *decoded(const tendo_tokenizer *tok, const int64_t *ids, size_t n, bool skip)
{
    static char buf[512];
    char *text;
    size_t len;

    if (tendo_tokenizer_decode(tok, ids, n, skip, &text, &len) != TENDO_OK)
        return tendo_error_message(tendo_last_error());
    snprintf(buf, sizeof buf, "%s", text);
    free(text);
    return buf;
}

static tendo_tokenizer *load(const char *name, const char *json)
{
    tendo_tokenizer *tok = tendo_tokenizer_load(write_file(name, json));

    if (!tok)
        bail("%s: %s", name, tendo_error_message(tendo_last_error()));
    return tok;
}

static void test_wordpiece(void)
{
    tendo_tokenizer *tok = load("wordpiece.json", wordpiece_json);
    const int64_t ids[] = {1, 3, 8, 4, 5, 9, 6, 7, 2};

    is_string("3 8 4 5 9 6 7 10 11 0", encoded(tok, "Hello, Worlds! UNABLE café xyz", false),
              "WordPiece: lowercased, accents stripped, ## pieces, [UNK]");
    is_string("1 3 4 2", encoded(tok, "hello world", true), "WordPiece: the template adds [CLS] and [SEP]");
    is_string("3 1 4", encoded(tok, "hello[CLS]world", false), "WordPiece: a special token in the text");
    is_string("", encoded(tok, "  \t ", false), "WordPiece: whitespace gives no ids");
    is_string("hello, worlds! unable", decoded(tok, ids, 9, true), "WordPiece: decoded, ## joined, cleaned up");
    is_string("[CLS] hello, worlds! unable [SEP]", decoded(tok, ids, 9, false), "WordPiece: decoded with specials");
    is_int(12, tendo_tokenizer_vocab_size(tok), "vocab_size");
    is_int(7, tendo_tokenizer_token_id(tok, "##able"), "token_id");
    is_int(-1, tendo_tokenizer_token_id(tok, "nope"), "token_id of no token");
    is_string("caf", tendo_tokenizer_token(tok, 10), "token");
    ok(tendo_tokenizer_is_special(tok, 2) && !tendo_tokenizer_is_special(tok, 3), "is_special");
    ok(!tendo_tokenizer_token(tok, 12) && !tendo_tokenizer_token(tok, -1), "token of an id out of range is NULL");
    tendo_tokenizer_free(tok);
}

static void test_bytelevel(void)
{
    tendo_tokenizer *tok = load("bytelevel.json", bytelevel_json);
    const int64_t ids[] = {3, 5, 4};

    is_string("3 4", encoded(tok, "hi hi", false), "byte-level BPE: merges by rank");
    is_string("3 5 3", encoded(tok, "hi<|end|>hi", false), "byte-level BPE: an added token splits the text");
    is_string("0 3", encoded(tok, "hxhi", false), "byte-level BPE: a byte with no token and no unk is dropped");
    is_string("hi hi", decoded(tok, ids, 3, true), "byte-level: decoded, special skipped");
    is_string("hi<|end|> hi", decoded(tok, ids, 3, false), "byte-level: decoded with the special token");
    tendo_tokenizer_free(tok);
}

static void test_sentencepiece(void)
{
    tendo_tokenizer *tok = load("sp.json", sentencepiece_json);
    const int64_t ids[] = {1, 6, 4, 2, 3, 4, 2};

    is_string("1 6 4 2 3", encoded(tok, "a \xc3\xa9", true), "SentencePiece BPE: byte fallback for é");
    is_string("6 0", encoded(tok, "aqq", false), "SentencePiece BPE: unknown characters fused into one <unk>");
    is_string("a \xc3\xa9 \xef\xbf\xbd", decoded(tok, ids, 7, true),
              "SentencePiece: bytes joined back, a lone byte as U+FFFD, the first space stripped");
    tendo_tokenizer_free(tok);
}

static void test_arguments(void)
{
    tendo_tokenizer *tok = load("wordpiece.json", wordpiece_json);
    int64_t *ids = (int64_t *)(uintptr_t)0x1, bad_ids[] = {3, 12};
    size_t n = 77, len;
    char *text = (char *)(uintptr_t)0x1;

    ok(!tendo_tokenizer_load(NULL) && tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG, "load(NULL)");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(NULL, "a", 1, false, &ids, &n), "encode: tok NULL");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(tok, NULL, 1, false, &ids, &n), "encode: text NULL");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(tok, "a", 1, false, NULL, &n), "encode: ids NULL");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(tok, "ab\xff", 3, false, &ids, &n), "encode: invalid UTF-8");
    ok(strstr(tendo_error_message(tendo_last_error()), "byte 2") != NULL, "... naming the byte: %s",
       tendo_error_message(tendo_last_error()));
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(tok, "a\xed\xa0\x80", 4, false, &ids, &n),
           "encode: a UTF-16 surrogate in UTF-8");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_encode(tok, "\xc0\xaf", 2, false, &ids, &n), "encode: overlong");
    ok(ids == (int64_t *)(uintptr_t)0x1 && n == 77, "a failed encode leaves ids and n as they were");
    is_int(TENDO_OK, tendo_tokenizer_encode(tok, NULL, 0, false, &ids, &n), "encode: no text");
    ok(ids == NULL && n == 0, "... gives no ids");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_decode(tok, bad_ids, 2, true, &text, &len), "decode: id 12 of 12");
    ok(strstr(tendo_error_message(tendo_last_error()), "position 1") != NULL, "... naming its position: %s",
       tendo_error_message(tendo_last_error()));
    bad_ids[1] = -1;
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_decode(tok, bad_ids, 2, true, &text, &len), "decode: id -1");
    ok(text == (char *)(uintptr_t)0x1, "a failed decode leaves text as it was");
    is_int(TENDO_ERR_INVALID_ARG, tendo_tokenizer_decode(tok, bad_ids, 2, true, NULL, &len), "decode: text NULL");
    is_int(TENDO_OK, tendo_tokenizer_decode(tok, NULL, 0, true, &text, &len), "decode: no ids");
    ok(text && len == 0 && text[0] == '\0', "... gives the empty string");
    free(text);
    is_int(0, tendo_tokenizer_vocab_size(NULL), "vocab_size(NULL)");
    is_int(-1, tendo_tokenizer_token_id(tok, NULL), "token_id(NULL)");
    tendo_tokenizer_free(NULL);
    tendo_tokenizer_free(tok);
}

/* A file that must be refused with status, its message holding part. */
static void refused(const char *what, const char *json, tendo_status status, const char *part)
{
    const char *path = json ? write_file("bad.json", json) : what;
    tendo_tokenizer *tok = tendo_tokenizer_load(path);
    const char *msg = tendo_error_message(tendo_last_error());

    ok(!tok && tendo_error_status(tendo_last_error()) == status && strstr(msg, part) != NULL,
       "refused: %s (%s)", json ? what : "a path", msg);
    tendo_tokenizer_free(tok);
}

#define MODEL_BPE(vocab, merges) "{\"model\": {\"type\": \"BPE\", \"vocab\": " vocab ", \"merges\": " merges "}}"

static void test_hostile(void)
{
    char missing[300], subdir[300];

    snprintf(missing, sizeof missing, "%s/none.json", dir);
    snprintf(subdir, sizeof subdir, "%s/empty-dir", dir);
    mkdir(subdir, 0700);
    refused(missing, NULL, TENDO_ERR_IO, "No such file");
    refused(subdir, NULL, TENDO_ERR_IO, "no tokenizer.json");
    refused("", NULL, TENDO_ERR_IO, "empty path");
    refused("not JSON", "{\"model\": ", TENDO_ERR_FORMAT, "not valid JSON");
    refused("an array", "[1, 2]", TENDO_ERR_FORMAT, "not a JSON object");
    refused("no model", "{}", TENDO_ERR_FORMAT, "model is missing");
    refused("a Unigram model", "{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0.0]]}}",
            TENDO_ERR_UNSUPPORTED, "Unigram");
    refused("an unknown model type", "{\"model\": {\"type\": \"Magic\", \"vocab\": {}}}", TENDO_ERR_UNSUPPORTED,
            "Magic");
    refused("BPE without merges", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}}", TENDO_ERR_FORMAT,
            "merges is missing");
    refused("a merge of unknown tokens", MODEL_BPE("{\"a\": 0}", "[\"a b\"]"), TENDO_ERR_FORMAT,
            "\"b\" is not in the vocabulary");
    refused("a merge whose result is unknown", MODEL_BPE("{\"a\": 0, \"b\": 1}", "[\"a b\"]"), TENDO_ERR_FORMAT,
            "merged \"ab\"");
    refused("a merge of three", MODEL_BPE("{\"a\": 0}", "[\"a a a\"]"), TENDO_ERR_FORMAT, "two tokens");
    refused("a huge id", MODEL_BPE("{\"a\": 1000000000000}", "[]"), TENDO_ERR_FORMAT, "outside");
    refused("a negative id", MODEL_BPE("{\"a\": -1}", "[]"), TENDO_ERR_FORMAT, "outside");
    refused("an id that is a string", MODEL_BPE("{\"a\": \"0\"}", "[]"), TENDO_ERR_FORMAT, "not an integer id");
    refused("one id for two tokens", MODEL_BPE("{\"a\": 0, \"b\": 0}", "[]"), TENDO_ERR_FORMAT, "both");
    refused("BPE dropout", "{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_UNSUPPORTED, "dropout");
    refused("WordPiece without unk", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}",
            TENDO_ERR_FORMAT, "no unk_token");
    refused("an unk not in the vocabulary",
            "{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"vocab\": {\"a\": 0}}}",
            TENDO_ERR_FORMAT, "not in the vocabulary");
    refused("a bad regular expression",
            "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"((\"}, \"behavior\": \"Isolated\"},"
            " \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_FORMAT, "regular expression");
    refused("an unknown split behaviour",
            "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"Sideways\"},"
            " \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_FORMAT, "Sideways");
    refused("an unsupported pre-tokenizer",
            "{\"pre_tokenizer\": {\"type\": \"UnicodeScripts\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {},"
            " \"merges\": []}}",
            TENDO_ERR_UNSUPPORTED, "UnicodeScripts");
    refused("a precompiled charsmap",
            "{\"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"AA==\"}, \"model\": {\"type\":"
            " \"BPE\", \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_UNSUPPORTED, "Precompiled");
    refused("a component without a type", "{\"decoder\": {}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, "
                                          "\"merges\": []}}",
            TENDO_ERR_FORMAT, "decoder has no type");
    refused("an added token with a huge id",
            "{\"added_tokens\": [{\"id\": 99999999999, \"content\": \"x\"}], " "\"model\": {\"type\": \"BPE\", "
            "\"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_FORMAT, "outside");
    refused("a template naming no special token",
            "{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": "
            "\"<s>\"}}], \"special_tokens\": {}}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_FORMAT, "no ids for \"<s>\"");
    refused("a Metaspace replacement of two characters",
            "{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"ab\"}, \"model\": {\"type\": \"BPE\","
            " \"vocab\": {}, \"merges\": []}}",
            TENDO_ERR_FORMAT, "not one character");
}

/* Load, encode and decode with each allocation failing in turn. */
static void test_alloc_failures(void)
{
    const char *path = write_file("bytelevel.json", bytelevel_json);
    int64_t before = tendo__alloc_count(), total, bad_status = 0, wrong_output = 0;

    {
        tendo_tokenizer *tok = tendo_tokenizer_load(path);
        int64_t *ids = NULL;
        size_t n = 0, len;
        char *text = NULL;
        if (!tok || tendo_tokenizer_encode(tok, "hi hi<|end|>", 12, true, &ids, &n) != TENDO_OK ||
            tendo_tokenizer_decode(tok, ids, n, false, &text, &len) != TENDO_OK)
            bail("the clean run failed: %s", tendo_error_message(tendo_last_error()));
        free(ids);
        free(text);
        tendo_tokenizer_free(tok);
    }
    total = tendo__alloc_count() - before;
    for (int64_t k = 1; k <= total; k++) {
        tendo_tokenizer *tok;
        int64_t *ids = (int64_t *)(uintptr_t)0x1;
        size_t n = 99, len = 99;
        char *text = (char *)(uintptr_t)0x1;
        tendo_status st = TENDO_OK;

        tendo_fault_inject_alloc(k);
        tok = tendo_tokenizer_load(path);
        if (!tok) {
            st = tendo_error_status(tendo_last_error());
        } else if ((st = tendo_tokenizer_encode(tok, "hi hi<|end|>", 12, true, &ids, &n)) != TENDO_OK) {
            wrong_output += ids != (int64_t *)(uintptr_t)0x1 || n != 99;
        } else {
            if ((st = tendo_tokenizer_decode(tok, ids, n, false, &text, &len)) != TENDO_OK)
                wrong_output += text != (char *)(uintptr_t)0x1 || len != 99;
            else
                free(text);
            free(ids);
        }
        tendo_fault_inject_alloc(0);
        bad_status += st != TENDO_OK && st != TENDO_ERR_OOM;
        tendo_tokenizer_free(tok);
    }
    ok(total > 10, "the clean run allocates (%lld times)", (long long)total);
    is_int(0, bad_status, "each failing allocation gives TENDO_ERR_OOM");
    is_int(0, wrong_output, "a failed encode or decode leaves its outputs as they were");
}

int main(void)
{
    char cmd[300];
    tendo_tokenizer *probe;

    if (!(probe = tendo_tokenizer_load("/")) && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED)
        skip_all("this build has no tokenizers (PCRE2 and utf8proc)");
    tendo_tokenizer_free(probe);
    if (!mkdtemp(dir))
        bail("cannot make a temporary directory");
    plan_lazy();
    test_wordpiece();
    test_bytelevel();
    test_sentencepiece();
    test_arguments();
    test_hostile();
    test_alloc_failures();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    return done_testing();
}
