/* tools/main.c - the `tendo` program's entry point: everything else is
 * tendo_cli_main (tools/tendo.c), which the fuzzer t/fuzz/fuzz-cli.c calls
 * with argument lists of its own. */
#include "cli.h"

int main(int argc, char **argv) { return tendo_cli_main(argc, argv); }
