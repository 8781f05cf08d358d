/* t/fuzz/fuzz.h - what the fuzz targets share (t/fuzz/README).
 *
 * Each fuzz-*.c defines LLVMFuzzerTestOneInput.  Built with clang
 * -fsanitize=fuzzer (t/fuzz/build.sh) it is a libFuzzer target; built with
 * replay.c by `make check` it replays the checked-in corpus and every input
 * that ever failed.  Either way a failure is an abort (fuzz_check), which
 * both turn into a report naming the input.
 */
#ifndef TENDO_T_FUZZ_H
#define TENDO_T_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <tendo.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts, naming the broken promise, when cond is false. */
#define fuzz_check(cond, ...)                                                           \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            abort();                                                                    \
        }                                                                               \
    } while (0)

/* A private temporary directory, made once per process and removed at
 * exit (with what is in it, one level); aborts when it cannot be made. */
const char *fuzz_tmpdir(void);
/* Writes data to a file called name (one name per process), replacing
 * what it held: a memfd where there is one (faster), named by its
 * /proc/self/fd path, else a file in fuzz_tmpdir().  Returns its path
 * (static). */
const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size);
/* Reads every element of the CPU tensor t by its strides and returns a
 * checksum; checks that shape, strides and numel agree with each other. */
uint64_t fuzz_touch(const tendo_tensor *t);
/* Checks the last error of a loader that refused the file at path: one of
 * the statuses io.h promises (FORMAT, UNSUPPORTED, OOM), and a FORMAT or
 * UNSUPPORTED message that names the file. */
void fuzz_check_refusal(const char *path);

#endif /* TENDO_T_FUZZ_H */
