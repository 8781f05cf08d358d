/* examples/common.h - what the example programs share: giving up with
 * tendo's last error.  Define PROGRAM (the name in messages) first. */
#ifndef TENDO_EXAMPLES_COMMON_H
#define TENDO_EXAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <tendo.h>

/* Prints what failed and tendo's last error, and exits. */
static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", PROGRAM, what, tendo_error_message(tendo_last_error()));
    exit(1);
}

/* p, or exit with tendo's last error when it is NULL. */
static void *checked(void *p, const char *what)
{
    if (!p)
        die(what);
    return p;
}
#define CHECK(expr) checked((void *)(expr), #expr)

#endif
