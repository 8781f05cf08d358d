/* src/core/error.c - the thread-local last error. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

struct tendo_error {
    tendo_status status;
    char op[32];
    char message[512];
};

static _Thread_local tendo_error last_error = {TENDO_OK, "", "no error"};

tendo_status tendo__fail(tendo_status status, const char *op, const char *fmt, ...)
{
    tendo_error *e = &last_error;
    va_list ap;
    int n = 0;

    e->status = status;
    snprintf(e->op, sizeof e->op, "%s", op ? op : "");
    if (op && op[0])
        n = snprintf(e->message, sizeof e->message, "%s: ", op);
    if (n < 0 || (size_t)n >= sizeof e->message)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(e->message + n, sizeof e->message - (size_t)n, fmt, ap);
    va_end(ap);
    return status;
}

void tendo__fail_as(const char *op)
{
    tendo_error *e = &last_error;
    char inner[sizeof e->message];

    if (e->status == TENDO_OK || !strcmp(e->op, op))
        return;
    snprintf(inner, sizeof inner, "%s", e->message);
    tendo__fail(e->status, op, "%s", inner);
}

tendo__shape_buf tendo__shape_str(int ndim, const int64_t *shape)
{
    tendo__shape_buf b;
    size_t at = 0;

    b.s[at++] = '[';
    for (int i = 0; i < ndim && i < TENDO_MAX_DIMS && shape; i++) {
        int n = snprintf(b.s + at, sizeof b.s - at, i ? ",%lld" : "%lld", (long long)shape[i]);
        if (n < 0 || (size_t)n >= sizeof b.s - at - 1)
            break;
        at += (size_t)n;
    }
    b.s[at++] = ']';
    b.s[at] = '\0';
    return b;
}

const tendo_error *tendo_last_error(void) { return &last_error; }

tendo_status tendo_error_status(const tendo_error *e) { return e ? e->status : TENDO_OK; }

const char *tendo_error_message(const tendo_error *e) { return e ? e->message : "no error"; }

const char *tendo_error_op(const tendo_error *e) { return e ? e->op : ""; }

const char *tendo_status_str(tendo_status s)
{
    switch (s) {
#define TENDO__STATUS_CASE(name, str) \
    case name:                        \
        return str;
        TENDO_STATUS_MAP(TENDO__STATUS_CASE)
#undef TENDO__STATUS_CASE
    }
    return "unknown status";
}

void tendo_clear_error(void)
{
    last_error.status = TENDO_OK;
    last_error.op[0] = '\0';
    strcpy(last_error.message, "no error");
}
