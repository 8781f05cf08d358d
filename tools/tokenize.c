/* tools/tokenize.c - `tendo tokenize [--special] [--decode] MODEL`: text to
 * token ids and back, line by line, with a model's tokenizer.json
 * (tendo_tokenizer). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void tool_tokenize_help(FILE *out)
{
    fprintf(out, "usage: tendo tokenize [--special] [--decode] MODEL_DIR_OR_TOKENIZER_JSON\n"
                 "\n"
                 "Reads lines from stdin and writes one line to stdout for each: the token\n"
                 "ids of the line's text (without its newline), separated by spaces, as\n"
                 "Hugging Face `tokenizers` gives them with the model's tokenizer.json.\n"
                 "Special tokens written in the text are recognised either way.\n"
                 "\n"
                 "options:\n"
                 "  --special   encoding: add the special tokens the tokenizer adds around a\n"
                 "              sequence (BERT's [CLS] ... [SEP], Llama's <s>); decoding:\n"
                 "              keep the special tokens in the text (by default skipped)\n"
                 "  --decode    read lines of ids separated by spaces and write their text\n"
                 "  -h, --help  this text\n"
                 "\n"
                 "The tokenizer.json's truncation and padding are not applied.\n"
                 "Exit status: 0, 1 when the tokenizer cannot be read or a line cannot be\n"
                 "encoded or decoded (the reason and the line number go to stderr), 2 for\n"
                 "bad usage.\n");
}

/* Reads one line of f into *buf (without its '\n'); false at the end. */
static bool read_line(FILE *f, char **buf, size_t *cap, size_t *len, bool *oom)
{
    size_t n = 0;
    int ch;

    *oom = false;
    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (n + 1 >= *cap) {
            size_t c = *cap ? 2 * *cap : 256;
            char *p = realloc(*buf, c);
            if (!p)
                return *oom = true, false;
            *buf = p, *cap = c;
        }
        (*buf)[n++] = (char)ch;
    }
    if (ch == EOF && n == 0)
        return false;
    if (!*buf && !(*buf = malloc(*cap = 1)))
        return *oom = true, false;
    (*buf)[n] = '\0';
    *len = n;
    return true;
}

/* Prints "tendo tokenize: line N: reason" (the library's last error). */
static bool line_failed(long lineno)
{
    char what[32];

    snprintf(what, sizeof what, "line %ld", lineno);
    tool_fail("tokenize", what);
    return false;
}

static bool encode_line(const tendo_tokenizer *tok, const char *line, size_t len, bool special, long lineno)
{
    int64_t *ids = NULL;
    size_t n = 0;

    if (tendo_tokenizer_encode(tok, line, len, special, &ids, &n) != TENDO_OK)
        return line_failed(lineno);
    for (size_t i = 0; i < n; i++)
        printf(i ? " %lld" : "%lld", (long long)ids[i]);
    putchar('\n');
    free(ids);
    return true;
}

/* The ids of a line "1 2 3"; false (with what is wrong in why) for anything else. */
static bool parse_ids(const char *line, int64_t **ids, size_t *n, char *why, size_t whyn)
{
    size_t cap = 0;
    const char *p = line;

    *ids = NULL, *n = 0;
    for (;;) {
        char *end;
        long long v;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            return true;
        errno = 0;
        v = strtoll(p, &end, 10);
        if (end == p || errno || (*end && *end != ' ' && *end != '\t' && *end != '\r')) {
            snprintf(why, whyn, "'%.*s' is not an id", (int)strcspn(p, " \t\r") > 40 ? 40 : (int)strcspn(p, " \t\r"), p);
            free(*ids);
            return false;
        }
        if (*n == cap) {
            int64_t *g = realloc(*ids, (cap = cap ? 2 * cap : 64) * sizeof *g);
            if (!g) {
                snprintf(why, whyn, "out of memory");
                free(*ids);
                return false;
            }
            *ids = g;
        }
        (*ids)[(*n)++] = v;
        p = end;
    }
}

static bool decode_line(const tendo_tokenizer *tok, const char *line, bool special, long lineno)
{
    int64_t *ids;
    size_t n, len;
    char why[96], *text;
    tendo_status st;

    if (!parse_ids(line, &ids, &n, why, sizeof why)) {
        tool_error_line("tendo tokenize: line %ld: %s", lineno, why);
        return false;
    }
    st = tendo_tokenizer_decode(tok, ids, n, !special, &text, &len);
    free(ids);
    if (st != TENDO_OK)
        return line_failed(lineno);
    fwrite(text, 1, len, stdout);
    putchar('\n');
    free(text);
    return true;
}

int tool_tokenize(int argc, char **argv)
{
    static const char *const special_opt[] = {"--special", NULL}, *const decode_opt[] = {"--decode", NULL},
                             *const help_opt[] = {"-h", "--help", NULL};
    tool_args a;
    const char *arg, *path = NULL;
    bool special = false, decode = false, oom = false, ok = true;
    tendo_tokenizer *tok;
    char *line = NULL;
    size_t cap = 0, len = 0;
    long lineno = 0;

    tool_args_init(&a, "tokenize", argc, argv);
    while (tool_args_next(&a, &arg)) {
        if (arg) {
            if (path)
                return tool_usage_error("tokenize", "too many arguments (from '%s' on)", arg);
            path = arg;
        } else if (tool_args_flag(&a, help_opt)) {
            tool_tokenize_help(stdout);
            return tool_finish_stdout("tokenize", TOOL_OK);
        } else if (tool_args_flag(&a, special_opt)) {
            special = true;
        } else if (tool_args_flag(&a, decode_opt)) {
            decode = true;
        } else {
            return tool_usage_error("tokenize", "unknown option '%s'", a.opt);
        }
    }
    if (!path)
        return tool_usage_error("tokenize", "no MODEL_DIR or tokenizer.json given");
    if (!(tok = tendo_tokenizer_load(path)))
        return tool_fail("tokenize", path);
    while (ok && read_line(stdin, &line, &cap, &len, &oom)) {
        lineno++;
        ok = decode ? decode_line(tok, line, special, lineno) : encode_line(tok, line, len, special, lineno);
    }
    if (oom) {
        tool_error_line("tendo tokenize: line %ld: out of memory", lineno + 1);
        ok = false;
    }
    if (ferror(stdin)) {
        tool_error_line("tendo tokenize: reading stdin: %s", strerror(errno));
        ok = false;
    }
    free(line);
    tendo_tokenizer_free(tok);
    return tool_finish_stdout("tokenize", ok ? TOOL_OK : TOOL_FAILED);
}
