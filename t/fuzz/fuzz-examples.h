/* t/fuzz/fuzz-examples.h - what the pieces of fuzz-examples share: the
 * example programs as functions (fuzz-examples-generate.c and
 * fuzz-examples-embed.c compile examples/generate.c and examples/embed.c
 * with main renamed and every exit routed to fuzz_example_exit), and the
 * child process each runs in (fuzz-child.c). */
#ifndef TENDO_T_FUZZ_EXAMPLES_H
#define TENDO_T_FUZZ_EXAMPLES_H

int tendo_generate_main(int argc, char **argv);
int tendo_embed_main(int argc, char **argv);

/* The status of a child whose sanitizer reported an error (the
 * sanitizers' own, 1, is a status the programs use). */
enum { FUZZ_CHILD_DIED = 97 };

/* In the parent, before each fork: readies the copy of the child's
 * coverage. */
void fuzz_child_prepare(void);
/* In the child, first: a sanitizer's report ends it with FUZZ_CHILD_DIED. */
void fuzz_child_start(void);
/* Ends the child with status (what exit would do, minus the atexit
 * handlers it inherited from the fuzzer), its coverage handed over first;
 * a status outside [0, 255] or FUZZ_CHILD_DIED becomes 255. */
_Noreturn void fuzz_example_exit(int status);
/* In the parent, after a child ended by fuzz_example_exit: its coverage
 * added to this process's. */
void fuzz_child_merge(void);

#endif /* TENDO_T_FUZZ_EXAMPLES_H */
