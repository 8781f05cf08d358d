/* t/fuzz/fuzz-examples-embed.c - examples/embed.c (tendo-embed) as
 * tendo_embed_main for fuzz-examples.c, every exit going through
 * fuzz_example_exit.  A translation unit of its own: the examples share
 * static names. */
#include <stdlib.h>

#include "fuzz-examples.h"

#define main tendo_embed_main
#define exit fuzz_example_exit
#include "../../examples/embed.c"
