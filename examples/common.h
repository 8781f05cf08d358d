/* examples/common.h - what the example programs share: giving up with
 * tendo's last error, or with a message about the input.  Define PROGRAM
 * (the name in messages) first. */
#ifndef TENDO_EXAMPLES_COMMON_H
#define TENDO_EXAMPLES_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <tendo.h>

/* The program's communicator when it runs as many processes (mpirun), so
 * that a rank that gives up ends the whole job rather than leave the
 * others waiting for it in a collective. */
static tendo_comm *die_comm;

/* Prints what failed and tendo's last error, and exits (ending every rank
 * of die_comm's job). */
static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", PROGRAM, what, tendo_error_message(tendo_last_error()));
    if (tendo_comm_size(die_comm) > 1)
        tendo_comm_abort(die_comm, 1);
    exit(1);
}

/* Prints "PROGRAM: message" about the input (on rank 0 alone when the
 * program runs as many processes) and exits with status 1, on every rank
 * alike (each rank checks the same input).  Inline, so that a program
 * that never calls it is not warned about it. */
static inline void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
static inline void fail(const char *fmt, ...)
{
    va_list ap;

    if (tendo_comm_rank(die_comm) == 0) {
        va_start(ap, fmt);
        fputs(PROGRAM ": ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
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
