/* t/fuzz/fuzz-examples-generate.c - examples/generate.c (tendo-generate)
 * as tendo_generate_main for fuzz-examples.c, every exit going through
 * fuzz_example_exit.  A translation unit of its own: the examples share
 * static names. */
#include <stdlib.h>

#include "fuzz-examples.h"

#define main tendo_generate_main
#define exit fuzz_example_exit
#include "../../examples/generate.c"
