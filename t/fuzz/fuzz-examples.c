/* t/fuzz/fuzz-examples.c - the example programs tendo-generate and
 * tendo-embed (examples/generate.c, examples/embed.c) on hostile model
 * directories, prompts and command lines.
 *
 * Made once per process, in a directory of fuzz_tmpdir(): gen/, a tiny
 * random Llama-style checkpoint (vocabulary 280, hidden 16, 2 heads, 1
 * key-value head, 1 layer, MLP 32, 128 positions; q/k/v biases, one f16
 * weight) with config.json, generation_config.json, a byte-level BPE
 * tokenizer.json and a tokenizer_config.json with a ChatML template; bert/,
 * a tiny random BERT (24 ids, hidden 8, 2 heads, 1 layer, 8 positions) with
 * config.json, sentence_bert_config.json and a WordPiece tokenizer.json;
 * p.npy (prompt ids), ids.npy (a padded batch), s.txt (sentences) and
 * b.safetensors (the BERT alone).  Every file is written with tendo's own
 * API or as text here.
 *
 * The input's first byte picks (% 16) what the rest of it is:
 *    0 gen/config.json                 tendo-generate --tokens 2 gen p.npy out.npy
 *    1 gen/generation_config.json      tendo-generate --tokens 2 gen --prompt TEXT
 *    2 gen/tokenizer.json              the same
 *    3 p.npy                           as 0
 *    4 gen/tokenizer_config.json       tendo-generate --tokens 2 gen --prompt TEXT --chat
 *    5 gen/chat_template.jinja         as 4
 *    6 the prompt text                 as 1 (greedy)
 *    7 the prompt text                 as 4, sampled (every sampling option)
 *    8 tendo-generate's arguments, one a line
 *    9 bert/config.json                tendo-embed bert SENTENCE SENTENCE
 *   10 bert/sentence_bert_config.json  as 9
 *   11 bert/tokenizer.json             as 9
 *   12 ids.npy                         tendo-embed bert ids.npy out.npy
 *   13 s.txt                           tendo-embed --out out.npy bert --file s.txt
 *   14 tendo-embed's arguments, one a line
 *   15 bert/config.json                tendo-embed bert/model.safetensors ids.npy out.npy
 * Arguments: at most 32, of at most 255 bytes, a NUL ending one early, a
 * '/' made '_' (no path leaves the directory), a --repeat above 3 made 3
 * (a run stays short).  Each run happens in a child process (the programs
 * exit), in the directory, stdin and stdout on /dev/null, stderr to a file
 * shown when a promise breaks; then every file is put back as it was.
 *
 * Promises checked: the child exits normally with status 0, 1 or 2 (a
 * signal, a sanitizer report, a hang past 10 s or any other status
 * aborts); and after a 0, the OUT.npy of the forms that write one holds
 * what the usage says: tendo-generate's the 2 ids chosen, i64 [2] within
 * the vocabulary; tendo-embed's f32 [n, 8], every value finite.
 *
 * Under libFuzzer the child's coverage counters are copied back to the
 * parent before the child ends (fuzz-child.c), so that the fuzzer sees
 * what the child ran.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz-examples.h"
#include "fuzz.h"

#define LLAMA_VOCAB 280 /* the tokenizer's 272 ids and 8 it does not know (a padded vocabulary) */
#define LLAMA_HIDDEN 16
#define LLAMA_KV 8 /* one key-value head of 8 */
#define LLAMA_MLP 32
#define BERT_VOCAB 24
#define BERT_HIDDEN 8
#define BERT_MLP 16
#define BERT_POSITIONS 8

/* ---- the files ------------------------------------------------------------------- */

static char work[4096], errpath[4096];

/* A file every run starts from, kept in memory to be put back. */
typedef struct {
    const char *name; /* relative to work */
    char *data;
    size_t size;
} seed;

enum {
    GEN_CONFIG, GEN_GENCONFIG, GEN_TOKENIZER, GEN_TOKCONFIG, GEN_MODEL, BERT_CONFIG, BERT_STCONFIG, BERT_TOKENIZER,
    BERT_MODEL, PROMPT, IDS, SENTENCES, BERT_FILE, NSEEDS
};
static seed seeds[NSEEDS] = {
    {"gen/config.json", NULL, 0}, {"gen/generation_config.json", NULL, 0}, {"gen/tokenizer.json", NULL, 0},
    {"gen/tokenizer_config.json", NULL, 0}, {"gen/model.safetensors", NULL, 0}, {"bert/config.json", NULL, 0},
    {"bert/sentence_bert_config.json", NULL, 0}, {"bert/tokenizer.json", NULL, 0},
    {"bert/model.safetensors", NULL, 0}, {"p.npy", NULL, 0}, {"ids.npy", NULL, 0}, {"s.txt", NULL, 0},
    {"b.safetensors", NULL, 0},
};

/* work/name (a static buffer, the next call's too). */
static const char *at(const char *name)
{
    static char buf[8192];

    snprintf(buf, sizeof buf, "%s/%s", work, name);
    return buf;
}

/* Writes n bytes to work/name, replacing it. */
static void put(const char *name, const void *data, size_t n)
{
    const char *path = at(name);
    FILE *f = fopen(path, "wb");

    fuzz_check(f != NULL, "cannot write %s", path);
    fuzz_check((n == 0 || fwrite(data, 1, n, f) == n) && fclose(f) == 0, "cannot write %s", path);
}

/* Reads work/name into seed s (written before by whatever made it). */
static void keep(seed *s)
{
    const char *path = at(s->name);
    FILE *f = fopen(path, "rb");
    long n = -1;

    fuzz_check(f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0,
               "cannot read %s", path);
    s->size = (size_t)n;
    fuzz_check((s->data = malloc(s->size + 1)) != NULL, "out of memory");
    fuzz_check(fread(s->data, 1, s->size, f) == s->size, "cannot read %s", path);
    fclose(f);
}

/* Puts seed i back as it was. */
static void restore(int i) { put(seeds[i].name, seeds[i].data, seeds[i].size); }

/* Writes text to seed i and keeps it. */
static void put_seed(int i, const char *text)
{
    put(seeds[i].name, text, strlen(text));
    keep(&seeds[i]);
}

/* ---- the models ------------------------------------------------------------------- */

static uint64_t rng = 0x243F6A8885A308D3u;

/* A number in [-scale, scale) from splitmix64. */
static float uniform(double scale)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (float)(((double)(z >> 11) * 0x1p-53 * 2 - 1) * scale);
}

/* Adds a random f32 tensor of shape [rows] (cols 0) or [rows, cols] to c
 * as name: offset + uniform(scale), in dtype. */
static void add(tendo_collection *c, const char *name, int64_t rows, int64_t cols, double offset, double scale,
                tendo_dtype dtype)
{
    int64_t n = rows * (cols ? cols : 1);
    float *v = malloc((size_t)n * sizeof *v);
    tensor_f32 *t;
    tendo_tensor *e;

    fuzz_check(v != NULL, "out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)offset + uniform(scale);
    t = cols ? tensor_f32_from_data(v, TENDO_SHAPE(rows, cols), tendo_cpu())
             : tensor_f32_from_data(v, TENDO_SHAPE(rows), tendo_cpu());
    fuzz_check(t != NULL, "%s: %s", name, tendo_error_message(tendo_last_error()));
    e = dtype == TENDO_F32 ? tendo_tensor_alias(tensor_f32_erase(t)) : tendo_tensor_to_dtype(tensor_f32_erase(t), dtype);
    fuzz_check(e && tendo_collection_add(c, name, e) == TENDO_OK, "%s: %s", name,
               tendo_error_message(tendo_last_error()));
    tendo_tensor_free(e);
    tensor_f32_free(t);
    free(v);
}

/* Saves c as work/name and frees it. */
static void save(tendo_collection *c, const char *name)
{
    fuzz_check(tendo_safetensors_save(at(name), c) == TENDO_OK, "%s: %s", name,
               tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
}

static void make_llama(void)
{
    tendo_collection *c = tendo_collection_new();
    const int64_t H = LLAMA_HIDDEN, KV = LLAMA_KV, I = LLAMA_MLP;
    const double w = 0.25;
#ifdef TENDO_HAVE_F16
    const tendo_dtype half = TENDO_F16;
#else
    const tendo_dtype half = TENDO_F32;
#endif

    fuzz_check(c != NULL, "out of memory");
    add(c, "model.embed_tokens.weight", LLAMA_VOCAB, H, 0, 1, TENDO_F32);
    add(c, "model.norm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "lm_head.weight", LLAMA_VOCAB, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.input_layernorm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "model.layers.0.post_attention_layernorm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "model.layers.0.self_attn.q_proj.weight", H, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.self_attn.k_proj.weight", KV, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.self_attn.v_proj.weight", KV, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.self_attn.o_proj.weight", H, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.self_attn.q_proj.bias", H, 0, 0, 0.1, TENDO_F32);
    add(c, "model.layers.0.self_attn.k_proj.bias", KV, 0, 0, 0.1, TENDO_F32);
    add(c, "model.layers.0.self_attn.v_proj.bias", KV, 0, 0, 0.1, TENDO_F32);
    add(c, "model.layers.0.mlp.gate_proj.weight", I, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.mlp.up_proj.weight", I, H, 0, w, TENDO_F32);
    add(c, "model.layers.0.mlp.down_proj.weight", H, I, 0, w, half);
    save(c, "gen/model.safetensors");
}

static void make_bert(void)
{
    static const char *const dense[][2] = {{"attention.self.query", "HH"}, {"attention.self.key", "HH"},
                                           {"attention.self.value", "HH"}, {"attention.output.dense", "HH"},
                                           {"intermediate.dense", "IH"},   {"output.dense", "HI"}};
    tendo_collection *c = tendo_collection_new();
    const int64_t H = BERT_HIDDEN;
    char name[128];

    fuzz_check(c != NULL, "out of memory");
    add(c, "embeddings.word_embeddings.weight", BERT_VOCAB, H, 0, 1, TENDO_F32);
    add(c, "embeddings.position_embeddings.weight", BERT_POSITIONS, H, 0, 0.5, TENDO_F32);
    add(c, "embeddings.token_type_embeddings.weight", 2, H, 0, 0.5, TENDO_F32);
    add(c, "embeddings.LayerNorm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "embeddings.LayerNorm.bias", H, 0, 0, 0.1, TENDO_F32);
    for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++) {
        int64_t out = dense[i][1][0] == 'H' ? H : BERT_MLP, in = dense[i][1][1] == 'H' ? H : BERT_MLP;
        snprintf(name, sizeof name, "encoder.layer.0.%s.weight", dense[i][0]);
        add(c, name, out, in, 0, 1 / sqrt((double)in), TENDO_F32);
        snprintf(name, sizeof name, "encoder.layer.0.%s.bias", dense[i][0]);
        add(c, name, out, 0, 0, 0.1, TENDO_F32);
    }
    add(c, "encoder.layer.0.attention.output.LayerNorm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "encoder.layer.0.attention.output.LayerNorm.bias", H, 0, 0, 0.1, TENDO_F32);
    add(c, "encoder.layer.0.output.LayerNorm.weight", H, 0, 1, 0.1, TENDO_F32);
    add(c, "encoder.layer.0.output.LayerNorm.bias", H, 0, 0, 0.1, TENDO_F32);
    save(c, "bert/model.safetensors");
}

/* GPT-2's byte-to-character table: printable bytes stand for themselves,
 * the others for U+0100 on, in order. */
static unsigned byte_char(unsigned b)
{
    unsigned n = 0;

    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))
        return b;
    for (unsigned i = 0; i < b; i++)
        n += !((i >= '!' && i <= '~') || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE && i <= 0xFF));
    return 256 + n;
}

/* Appends the JSON string of the bytes s (every character escaped) to f. */
static void json_bytes(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        fprintf(f, "\\u%04x", byte_char((unsigned char)*s));
    fputc('"', f);
}

/* gen/tokenizer.json: byte-level BPE over all 256 bytes, a few merges
 * ("hello", " world"), seven special tokens, BOS added by the post-processor. */
static char *llama_tokenizer(void)
{
    static const char *const merges[][2] = {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"},
                                            {"o", "r"}, {" w", "or"}, {"l", "d"}, {" wor", "ld"}};
    static const char *const special[] = {"<|begin_of_text|>", "<|end_of_text|>",     "<|im_start|>", "<|im_end|>",
                                          "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
    const int nmerges = sizeof merges / sizeof merges[0], nspecial = sizeof special / sizeof special[0];
    char *text = NULL, merged[16];
    size_t len;
    FILE *f = open_memstream(&text, &len);

    fuzz_check(f != NULL, "out of memory");
    fputs("{\"version\": \"1.0\", \"added_tokens\": [", f);
    for (int i = 0; i < nspecial; i++)
        fprintf(f, "%s{\"id\": %d, \"content\": \"%s\", \"special\": true}", i ? ", " : "", 256 + nmerges + i,
                special[i]);
    fputs("], \"normalizer\": null,"
          " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true},"
          " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\":"
          " \"<|begin_of_text|>\"}}, {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<|begin_of_text|>\":"
          " {\"id\": \"<|begin_of_text|>\", \"ids\": [", f);
    fprintf(f, "%d], \"tokens\": [\"<|begin_of_text|>\"]}}},", 256 + nmerges);
    fputs(" \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {", f);
    for (unsigned b = 0; b < 256; b++) {
        char one[2] = {(char)b, 0};
        if (b)
            fputs(", ", f);
        if (b == 0)
            fprintf(f, "\"\\u%04x\"", byte_char(0));
        else
            json_bytes(f, one);
        fprintf(f, ": %u", b);
    }
    for (int i = 0; i < nmerges; i++) {
        snprintf(merged, sizeof merged, "%s%s", merges[i][0], merges[i][1]);
        fputs(", ", f);
        json_bytes(f, merged);
        fprintf(f, ": %d", 256 + i);
    }
    for (int i = 0; i < nspecial; i++)
        fprintf(f, ", \"%s\": %d", special[i], 256 + nmerges + i);
    fputs("}, \"merges\": [", f);
    for (int i = 0; i < nmerges; i++) {
        fputs(i ? ", [" : "[", f);
        json_bytes(f, merges[i][0]);
        fputs(", ", f);
        json_bytes(f, merges[i][1]);
        fputs("]", f);
    }
    fputs("]}}", f);
    fuzz_check(fclose(f) == 0, "out of memory");
    return text;
}

static const char bert_tokenizer[] =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"[PAD]\", \"special\": true},"
    " {\"id\": 1, \"content\": \"[UNK]\", \"special\": true}, {\"id\": 2, \"content\": \"[CLS]\", \"special\": true},"
    " {\"id\": 3, \"content\": \"[SEP]\", \"special\": true}],"
    " \"normalizer\": {\"type\": \"BertNormalizer\", \"lowercase\": true},"
    " \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},"
    " \"post_processor\": {\"type\": \"TemplateProcessing\","
    "   \"single\": [{\"SpecialToken\": {\"id\": \"[CLS]\"}}, {\"Sequence\": {\"id\": \"A\"}},"
    "              {\"SpecialToken\": {\"id\": \"[SEP]\"}}],"
    "   \"special_tokens\": {\"[CLS]\": {\"ids\": [2]}, \"[SEP]\": {\"ids\": [3]}}},"
    " \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true},"
    " \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\","
    "   \"vocab\": {\"[PAD]\": 0, \"[UNK]\": 1, \"[CLS]\": 2, \"[SEP]\": 3, \"the\": 4, \"cat\": 5, \"sat\": 6,"
    "     \"on\": 7, \"mat\": 8, \"a\": 9, \"dog\": 10, \"ran\": 11, \"far\": 12, \"away\": 13, \",\": 14, \".\": 15,"
    "     \"##s\": 16, \"caf\": 17, \"##e\": 18, \"big\": 19, \"hello\": 20, \"world\": 21, \"!\": 22, \"zebra\": 29}}}";

/* An i64 .npy of rows x cols ids (rows 0: 1-D) at work/name. */
static void save_ids(const char *name, const int64_t *ids, int64_t rows, int64_t cols)
{
    tensor_i64 *t = rows ? tensor_i64_from_data(ids, TENDO_SHAPE(rows, cols), tendo_cpu())
                         : tensor_i64_from_data(ids, TENDO_SHAPE(cols), tendo_cpu());

    fuzz_check(t && tendo_npy_save(at(name), tensor_i64_erase(t)) == TENDO_OK, "%s: %s", name,
               tendo_error_message(tendo_last_error()));
    tensor_i64_free(t);
}

/* Removes work and what it holds (at exit: fuzz_tmpdir removes one level). */
static void remove_work(void)
{
    static const char *const dirs[] = {"gen", "bert", ""};

    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[8192];
        DIR *d;
        struct dirent *e;

        snprintf(path, sizeof path, "%s/%s", work, dirs[i]);
        if (!(d = opendir(path)))
            continue;
        while ((e = readdir(d)) != NULL) {
            char file[16384];
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            (void)unlink(file); /* fails for . and .. and the directories, removed next */
        }
        closedir(d);
        (void)rmdir(path);
    }
}

/* The directory and every file in it, made once. */
static void setup(void)
{
    static bool done;
    static const int64_t prompt[] = {265, 259, 264}, batch[] = {2, 4, 5, 3, 2, 22, 3, 0};
    char *tok;

    if (done)
        return;
    done = true;
    snprintf(work, sizeof work, "%s/examples", fuzz_tmpdir());
    snprintf(errpath, sizeof errpath, "%s/stderr", fuzz_tmpdir());
    fuzz_check(mkdir(work, 0755) == 0 && mkdir(at("gen"), 0755) == 0 && mkdir(at("bert"), 0755) == 0,
               "cannot make %s", work);
    atexit(remove_work); /* before fuzz_tmpdir's own */
    tendo_set_durable_saves(false);
    make_llama();
    keep(&seeds[GEN_MODEL]);
    put_seed(GEN_CONFIG, "{\"model_type\": \"llama\", \"hidden_size\": 16, \"intermediate_size\": 32,"
                         " \"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"num_hidden_layers\": 1,"
                         " \"vocab_size\": 280, \"max_position_embeddings\": 128, \"rms_norm_eps\": 1e-05,"
                         " \"rope_theta\": 10000.0, \"tie_word_embeddings\": false, \"eos_token_id\": 266}");
    put_seed(GEN_GENCONFIG, "{\"bos_token_id\": 265, \"eos_token_id\": [266, 271, 268], \"do_sample\": false}");
    tok = llama_tokenizer();
    put_seed(GEN_TOKENIZER, tok);
    free(tok);
    put_seed(GEN_TOKCONFIG,
             "{\"bos_token\": \"<|begin_of_text|>\", \"eos_token\": {\"content\": \"<|im_end|>\"},"
             " \"chat_template\": \"{% for message in messages %}{% if loop.first and messages[0]['role'] !="
             " 'system' %}{{ '<|im_start|>system\\nYou are a small model.<|im_end|>\\n' }}{% endif %}"
             "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
             "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}\"}");
    make_bert();
    keep(&seeds[BERT_MODEL]);
    put_seed(BERT_CONFIG, "{\"num_attention_heads\": 2, \"layer_norm_eps\": 1e-12, \"pad_token_id\": 0,"
                          " \"max_position_embeddings\": 8, \"hidden_size\": 8}");
    put_seed(BERT_STCONFIG, "{\"max_seq_length\": 6, \"do_lower_case\": false}");
    put_seed(BERT_TOKENIZER, bert_tokenizer);
    save_ids("p.npy", prompt, 0, 3);
    keep(&seeds[PROMPT]);
    save_ids("ids.npy", batch, 2, 4);
    keep(&seeds[IDS]);
    put_seed(SENTENCES, "the cat sat on the mat.\r\nHello, world!\n\ncaf\xc3\xa9 dogs ran far away");
    seeds[BERT_FILE].data = seeds[BERT_MODEL].data;
    seeds[BERT_FILE].size = seeds[BERT_MODEL].size;
    restore(BERT_FILE);
}

/* Removes what a run left in work (files not seeds), and puts the
 * top-level seeds back (a command line may have written over them). */
static void tidy(void)
{
    DIR *d = opendir(work);
    struct dirent *e;

    fuzz_check(d != NULL, "opendir %s", work);
    while ((e = readdir(d)) != NULL) {
        bool known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "gen") ||
                     !strcmp(e->d_name, "bert");
        for (int i = 0; i < NSEEDS && !known; i++)
            known = !strcmp(e->d_name, seeds[i].name);
        if (!known)
            fuzz_check(unlink(at(e->d_name)) == 0, "cannot remove %s: %s", at(e->d_name), strerror(errno));
    }
    closedir(d);
    restore(PROMPT);
    restore(IDS);
    restore(SENTENCES);
    restore(BERT_FILE);
}

/* ---- a run ------------------------------------------------------------------------ */

/* Prints what the child wrote to stderr (its end), for a broken promise. */
static void show_stderr(void)
{
    static char buf[8192];
    FILE *f = fopen(errpath, "rb");
    size_t n;

    if (!f)
        return;
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof buf - 1)
        fseek(f, -(long)(sizeof buf - 1), SEEK_END);
    else
        fseek(f, 0, SEEK_SET);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    fprintf(stderr, "fuzz: the program's stderr:\n%s\n", buf);
}

/* Runs main(argc, argv) in a child process, in work; returns its status
 * as waitpid gives it, the child's coverage merged into this process's. */
static int run(int (*main_fn)(int, char **), int argc, char **argv)
{
    int status;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    fuzz_child_prepare();
    pid = fork();
    fuzz_check(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY),
            err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
            chdir(work) != 0)
            _exit(126);
        close(in);
        close(out);
        close(err);
        signal(SIGALRM, SIG_DFL);
        alarm(10);
        fuzz_child_start();
        fuzz_example_exit(main_fn(argc, argv));
    }
    while (waitpid(pid, &status, 0) < 0)
        fuzz_check(errno == EINTR, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) <= 2)
        fuzz_child_merge();
    return status;
}

/* Checks OUT.npy of a run that exited 0: ids (generate) or embeddings. */
static void check_out(bool generate)
{
    tendo_tensor *t = tendo_npy_load(at("out.npy"));
    const int64_t *shape;

    fuzz_check(t != NULL, "the run exited 0, and out.npy does not load: %s", tendo_error_message(tendo_last_error()));
    shape = tendo_tensor_shape(t);
    if (generate) {
        const int64_t *ids = tendo_tensor_data(t); /* a loaded .npy is contiguous */
        fuzz_check(tendo_tensor_dtype(t) == TENDO_I64 && tendo_tensor_ndim(t) == 1 && shape[0] == 2,
                   "tendo-generate wrote %s [%lld%s], not i64 [2]", tendo_dtype_name(tendo_tensor_dtype(t)),
                   tendo_tensor_ndim(t) ? (long long)shape[0] : -1LL, tendo_tensor_ndim(t) > 1 ? ", ..." : "");
        for (int i = 0; i < 2; i++)
            fuzz_check(ids[i] >= 0 && ids[i] < LLAMA_VOCAB, "tendo-generate chose id %lld", (long long)ids[i]);
        tendo_tensor_free(t);
        return;
    }
    fuzz_check(tendo_tensor_dtype(t) == TENDO_F32 && tendo_tensor_ndim(t) == 2 && shape[1] == BERT_HIDDEN,
               "tendo-embed wrote %s of %d dims, not f32 [n, %d]", tendo_dtype_name(tendo_tensor_dtype(t)),
               tendo_tensor_ndim(t), BERT_HIDDEN);
    for (int64_t i = 0; i < tendo_tensor_numel(t); i++)
        fuzz_check(isfinite(((const float *)tendo_tensor_data(t))[i]), "tendo-embed wrote a value that is not finite");
    tendo_tensor_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAXARGS = 32, MAXLEN = 255 };
    static char args[MAXARGS][MAXLEN + 1], text[4096];
    char *argv[MAXARGS + 16];
    int argc = 0, mode, replaced = -1, status;
    bool generate, jinja = false, out = false;
    const uint8_t *rest;
    size_t n;

    if (size == 0)
        return 0;
    setup();
    mode = data[0] % 16;
    rest = data + 1;
    n = size - 1;
    generate = mode <= 8;
    argv[argc++] = generate ? "tendo-generate" : "tendo-embed";
    switch (mode) {
    case 0: case 1: case 2: case 4:
    case 9: case 10: case 11: case 15: {
        static const int which[16] = {GEN_CONFIG, GEN_GENCONFIG, GEN_TOKENIZER, 0, GEN_TOKCONFIG, [9] = BERT_CONFIG,
                                      BERT_STCONFIG, BERT_TOKENIZER, [15] = BERT_CONFIG};
        replaced = which[mode];
        put(seeds[replaced].name, rest, n);
        break;
    }
    case 3:
        put(seeds[PROMPT].name, rest, n);
        break;
    case 5:
        put("gen/chat_template.jinja", rest, n);
        jinja = true;
        break;
    case 12:
        put(seeds[IDS].name, rest, n);
        break;
    case 13:
        put(seeds[SENTENCES].name, rest, n);
        break;
    case 6: case 7: /* the text, to its first NUL */
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text - 1 ? n : sizeof text - 1), (const char *)rest);
        break;
    default: /* 8, 14: the arguments */
        for (size_t i = 0; i < n && argc <= MAXARGS;) {
            char *a = args[argc - 1];
            size_t k = 0;

            for (; i < n && rest[i] != '\n'; i++)
                if (k < MAXLEN && rest[i] != '\0')
                    a[k++] = rest[i] == '/' ? '_' : (char)rest[i];
            i++; /* the newline */
            a[k] = '\0';
            if (argc > 1 && !strcmp(argv[argc - 1], "--repeat") && strtoll(a, NULL, 10) > 3)
                strcpy(a, "3");
            argv[argc++] = a;
        }
        break;
    }
    switch (mode) {
    case 0: case 3:
        out = true;
        argv[argc++] = "--tokens", argv[argc++] = "2", argv[argc++] = "gen", argv[argc++] = "p.npy";
        argv[argc++] = "out.npy";
        break;
    case 1: case 2: case 6:
        argv[argc++] = "--tokens", argv[argc++] = "2", argv[argc++] = "gen", argv[argc++] = "--prompt";
        argv[argc++] = mode == 6 ? text : "hello world";
        break;
    case 4: case 5: case 7:
        argv[argc++] = "--tokens", argv[argc++] = "2", argv[argc++] = "gen", argv[argc++] = "--prompt";
        argv[argc++] = mode == 7 ? text : "hello world";
        argv[argc++] = "--chat";
        if (mode == 7) {
            static char *sampled[] = {"--temperature", "0.8", "--top-k", "40", "--top-p", "0.9", "--min-p", "0.05",
                                      "--repeat-penalty", "1.3", "--seed", "7"};
            for (size_t i = 0; i < sizeof sampled / sizeof sampled[0]; i++)
                argv[argc++] = sampled[i];
        }
        break;
    case 9: case 10: case 11:
        argv[argc++] = "bert", argv[argc++] = "the cat sat on the big mat.", argv[argc++] = "Hello, world! caf\xc3\xa9";
        break;
    case 12: case 15:
        out = true;
        argv[argc++] = mode == 12 ? "bert" : "bert/model.safetensors";
        argv[argc++] = "ids.npy", argv[argc++] = "out.npy";
        break;
    case 13:
        out = true;
        argv[argc++] = "--out", argv[argc++] = "out.npy", argv[argc++] = "bert", argv[argc++] = "--file";
        argv[argc++] = "s.txt";
        break;
    default:
        break;
    }
    argv[argc] = NULL;

    status = run(generate ? tendo_generate_main : tendo_embed_main, argc, argv);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) <= 2)) {
        show_stderr();
        if (WIFSIGNALED(status))
            fuzz_check(false, "%s (mode %d) died of signal %d%s", argv[0], mode, WTERMSIG(status),
                       WTERMSIG(status) == SIGALRM ? " (it ran past 10 s)" : "");
        fuzz_check(false, "%s (mode %d) exited with status %d%s", argv[0], mode, WEXITSTATUS(status),
                   WEXITSTATUS(status) == FUZZ_CHILD_DIED ? " (a sanitizer's report: see its stderr above)" : "");
    }
    if (out && WEXITSTATUS(status) == 0)
        check_out(generate);
    if (replaced >= 0)
        restore(replaced);
    if (jinja)
        fuzz_check(unlink(at("gen/chat_template.jinja")) == 0, "cannot remove the chat template");
    tidy();
    return 0;
}
