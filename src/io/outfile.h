/* src/io/outfile.h - files written whole or not at all: data goes to a
 * temporary file beside the target, which is flushed to disk (unless
 * durable saves are off) and renamed over the target only when every write
 * succeeded.  A crash, a full disk or an error leaves the old file (or
 * none) under the real name.
 *
 * A path that is a symbolic link is followed: the file it names is
 * replaced and the link stays, as cp and most editors do.  A replaced file
 * keeps its permission bits.  A path naming an existing FIFO, device or
 * socket (/dev/stdout on a pipe, /dev/null) is written in place and never
 * replaced; a FIFO without a reader is refused.  An empty path, a
 * directory, or a path ending in '/' is refused before anything is
 * written.  The temporary file is TARGET.tmp-PID-N, locked (flock) while
 * its writer lives; one left behind by a killed process (its lock free,
 * untouched for two seconds) is removed by the next save to the same
 * target. */
#ifndef TENDO_SRC_OUTFILE_H
#define TENDO_SRC_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/internal.h"

typedef struct {
    const char *op, *path; /* for messages: the path the caller gave */
    char *target;          /* the file replaced: path, or the file a link at path names */
    char *tmp;             /* the temporary file's name */
    int fd;
    bool failed;           /* a write failed: the error is set */
    bool durable;          /* fsync before the rename (tendo_set_durable_saves) */
    bool in_place;         /* a FIFO, device or socket written directly: no tmp, no rename */
    off_t written, flushed; /* bytes written; bytes handed to the disk */
} tendo__outfile;

/* Creates the temporary file (the target's permission bits when it
 * exists; else mode 0666 less the umask, like fopen), or opens a FIFO or
 * device in place; false with TENDO_ERR_IO / TENDO_ERR_OOM (an empty path:
 * TENDO_ERR_INVALID_ARG) set for op otherwise. */
bool tendo__outfile_open(tendo__outfile *f, const char *op, const char *path);
/* Appends n bytes; false (and the file marked failed) on error.  After a
 * failure further writes do nothing. */
bool tendo__outfile_write(tendo__outfile *f, const void *p, size_t n);
/* Flushes the file, renames it into place and closes it (in place: only
 * closes): TENDO_OK, or the error (set) after removing the temporary file.
 * Ends f either way. */
tendo_status tendo__outfile_commit(tendo__outfile *f);
/* Closes and removes the temporary file, keeping the error already set;
 * a no-op on an f that open failed or commit ended. */
void tendo__outfile_abort(tendo__outfile *f);

#endif /* TENDO_SRC_OUTFILE_H */
