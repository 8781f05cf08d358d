/* tools/cli.h - what the `tendo` program's commands share: exit codes,
 * option and argument parsing, loading a .npy or safetensors file, and
 * turning a library error into "tendo CMD: FILE: reason".
 *
 * The program is tools/tendo.c (dispatch, help, info, demo),
 * tools/inspect.c, tools/convert.c, tools/tokenize.c and tools/files.c (this header's
 * helpers).  Nothing here is part of the library's API.
 */
#ifndef TENDO_TOOLS_CLI_H
#define TENDO_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <tendo.h>

#ifndef TENDO_HAVE_F32
#error "the tendo program computes statistics in f32: configure with f32 among the dtypes"
#endif

/* OpenMP pragmas that vanish (with no unknown-pragma warning) without it. */
#ifdef _OPENMP
#define TOOL_PRAGMA(x) _Pragma(#x)
#else
#define TOOL_PRAGMA(x)
#endif

/* Exit status of every command. */
enum { TOOL_OK = 0, TOOL_FAILED = 1, TOOL_USAGE = 2 };

/* ---- commands (each returns its exit status) -------------------------- */

/* The whole program: `tendo ARGS...` with argv[0] the program's name;
 * returns the exit status.  main (tools/main.c) only calls it. */
int tendo_cli_main(int argc, char **argv);

int tool_inspect(int argc, char **argv);
void tool_inspect_help(FILE *out);
int tool_convert(int argc, char **argv);
void tool_convert_help(FILE *out);
int tool_tokenize(int argc, char **argv);
void tool_tokenize_help(FILE *out);

/* ---- argument parsing --------------------------------------------------
 *
 * Options may come before, between or after the operands; "--" ends them.
 * A long option's value is the next argument or follows '=' ("--dtype=f16").
 */
typedef struct {
    const char *cmd; /* "inspect": for messages */
    int argc, next;  /* the arguments and the index of the next one */
    char **argv;
    bool only_operands; /* after "--" */
    const char *value;  /* the value of the option just matched */
    const char *opt;    /* the option argument being matched */
} tool_args;

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv);
/* Moves to the next argument.  Returns false at the end; else sets
 * *operand to the argument when it is an operand, or to NULL when it is an
 * option (to be tested with tool_args_flag / tool_args_option). */
bool tool_args_next(tool_args *a, const char **operand);
/* True when the current option is one of names (a NULL-ended list of
 * spellings) and takes no value. */
bool tool_args_flag(tool_args *a, const char *const *names);
/* True when the current option is one of names and has a value (in
 * a->value); a missing value is a usage error: *status is set to
 * TOOL_USAGE (after the message) and true is returned. */
bool tool_args_option(tool_args *a, const char *const *names, int *status);

/* Prints "tendo CMD: message" and a pointer to the help to stderr;
 * returns TOOL_USAGE. */
int tool_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints the formatted line and a newline to stderr with its control
 * characters (bytes below 0x20, 0x7f, and U+0080..U+009F) escaped as
 * "\\xNN": tensor names and metadata come from files, and an escape
 * sequence in one must not reach the terminal. */
void tool_error_line(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- dtypes and devices ------------------------------------------------ */

/* The dtype spelled s: tendo's name ("bf16"), the safetensors name
 * ("BF16"), or the numpy-style name ("bfloat16", "float32", "<f4"); false
 * for a dtype this build lacks. */
bool tool_parse_dtype(const char *s, tendo_dtype *dt);
/* The dtype names of this build, as "f32, f16, bf16" (static). */
const char *tool_dtype_list(void);
/* True for a floating-point dtype (DLPack float or bfloat code). */
bool tool_dtype_is_float(tendo_dtype dt);
/* "cpu", "cuda" (device 0) or "cuda:N"; false for anything else. */
bool tool_parse_device(const char *s, tendo_device *d);

/* ---- files --------------------------------------------------------------- */

typedef enum { TOOL_NPY, TOOL_SAFETENSORS } tool_format;

/* A loaded file: a .npy array, or a safetensors collection. */
typedef struct {
    const char *path; /* borrowed */
    tool_format format;
    long long size;          /* bytes on disk */
    tendo_tensor *array;     /* TOOL_NPY: the array (owned) */
    tendo_collection *coll;  /* TOOL_SAFETENSORS: the tensors (owned) */
    char error[640];         /* why loading failed */
} tool_file;

/* Loads path onto device d.  The format comes from the file's first bytes
 * (the .npy magic), else its name (".npy"), else safetensors.  On failure
 * prints "tendo CMD: PATH: reason" to stderr and returns false with *f
 * holding nothing but the reason (f->error). */
bool tool_file_load(tool_file *f, const char *cmd, const char *path, tendo_device d);
/* The first half of tool_file_load: checks that path is a readable file
 * and sets f->format and f->size, loading nothing. */
bool tool_file_probe(tool_file *f, const char *cmd, const char *path);
/* Frees what f holds; an empty f is a no-op. */
void tool_file_close(tool_file *f);
/* Number of tensors (1 for .npy). */
int64_t tool_file_count(const tool_file *f);
/* Name of tensor i, borrowed; NULL for a .npy array. */
const char *tool_file_name(const tool_file *f, int64_t i);
/* Tensor i, borrowed. */
tendo_tensor *tool_file_tensor(const tool_file *f, int64_t i);
/* The format a file name asks for by its extension: true, with *fmt set,
 * for ".npy" and ".safetensors"; false for any other name. */
bool tool_format_of_name(const char *path, tool_format *fmt);
const char *tool_format_name(tool_format fmt);

/* The last library error as a reason about path: its message without the
 * leading "op: " and "PATH: " (borrowed, valid until the next tendo call). */
const char *tool_error_reason(const char *path);
/* Prints "tendo CMD: WHAT: reason" (the last library error) to stderr;
 * returns TOOL_FAILED. */
int tool_fail(const char *cmd, const char *what);
/* A new view of elements [start, start + len) of the contiguous tensor t,
 * flattened to one dimension; the caller frees it.  NULL on failure. */
tendo_tensor *tool_flat_chunk(const tendo_tensor *t, int64_t start, int64_t len);
/* Writes "[2, 3]" into buf. */
void tool_shape_str(const tendo_tensor *t, char *buf, size_t n);

/* Prints stdout's write error, if any, as "tendo CMD: ..." and returns
 * TOOL_FAILED; else returns status. */
int tool_finish_stdout(const char *cmd, int status);

#endif /* TENDO_TOOLS_CLI_H */
