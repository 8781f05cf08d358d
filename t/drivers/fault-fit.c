/* t/drivers/fault-fit.c - examples/fit.c for t-fault-examples.c: its main
 * renamed tendo_fit_main, its exit tendo_fault_exit (the examples share
 * static names, so each is a translation unit of its own). */
#include <stdlib.h>

int tendo_fit_main(int argc, char **argv);
_Noreturn void tendo_fault_exit(int status);
#define main tendo_fit_main
#define exit(status) tendo_fault_exit(status)
#include "../../examples/fit.c"
