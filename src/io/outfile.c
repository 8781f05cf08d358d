/* src/io/outfile.c - all-or-nothing file writes (see outfile.h).
 *
 * The fsync before the rename is what makes the rename safe across a
 * system crash, and it would cost a second pass at disk speed at the end.
 * So on Linux the file is written back as it is written: each 32 MiB is
 * handed to the disk at once (sync_file_range), and the one before it
 * waited for, which keeps the disk busy while the caller computes and
 * leaves the final fsync almost nothing to do.
 */
#define _GNU_SOURCE /* sync_file_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/outfile.h"
#include "tendo/io.h"

/* The file a save to the regular file (or dangling name) path replaces, in
 * new memory: path itself, or the file that the symbolic link at path
 * names.  NULL with the error set. */
static char *target_of(const char *op, const char *path)
{
    char buf[PATH_MAX];
    struct stat st;
    char *t;

    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) {
        t = tendo__strdup(path);
    } else if (!realpath(path, buf)) {
        tendo__fail(TENDO_ERR_IO, op, "%s: cannot follow the symbolic link: %s", path, strerror(errno));
        return NULL;
    } else {
        t = tendo__strdup(buf);
    }
    if (!t)
        tendo__fail(TENDO_ERR_OOM, op, "%s: out of memory", path);
    return t;
}

/* A temporary file is stale, and removed, when no writer holds its lock and
 * it has not changed for this long: the lock alone decides (a writer's pid
 * may live in another PID namespace), the age covers the instant between a
 * writer creating the file and locking it. */
#define STALE_SECONDS 2

/* Removes the stale TARGET.tmp-PID-N files beside target (a save that was
 * killed midway left them). */
static void remove_stale(const char *target)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dlen = slash ? (size_t)(slash - target) : 0, blen = strlen(base);
    char dir[PATH_MAX], stale[PATH_MAX];
    DIR *d;
    struct dirent *e;

    if (!slash) {
        strcpy(dir, ".");
    } else {
        dlen = dlen ? dlen : 1; /* the target is in / */
        if (dlen + 1 > sizeof dir)
            return;
        memcpy(dir, target, dlen);
        dir[dlen] = '\0';
    }
    if (!(d = opendir(dir)))
        return;
    while ((e = readdir(d))) {
        const char *p = e->d_name;
        struct stat st, now;
        const char *end;
        int fd;

        if (strncmp(p, base, blen) != 0 || strncmp(p + blen, ".tmp-", 5) != 0)
            continue;
        /* digits, '-', digits: what a save names it (strtol would also take
         * a sign or spaces, which are no pid of a tendo writer) */
        for (end = p + blen + 5; *end >= '0' && *end <= '9'; end++)
            ;
        if (end == p + blen + 5 || *end != '-')
            continue;
        for (end++; *end >= '0' && *end <= '9'; end++)
            ;
        if (*end || end[-1] == '-' || (size_t)snprintf(stale, sizeof stale, "%s/%s", dir, p) >= sizeof stale)
            continue;
        if ((fd = open(stale, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            time(NULL) - st.st_mtime >= STALE_SECONDS && lstat(stale, &now) == 0 && now.st_ino == st.st_ino &&
            now.st_dev == st.st_dev)
            (void)unlink(stale); /* still the file whose lock is held here */
        close(fd);
    }
    closedir(d);
}

/* Opens the existing FIFO, device or socket at path to be written in place
 * (it is never replaced): a FIFO without a reader is refused at once rather
 * than waited for. */
static bool open_in_place(tendo__outfile *f)
{
    int flags;

    f->fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (f->fd < 0) {
        tendo__fail(TENDO_ERR_IO, f->op, "%s: %s", f->path,
                    errno == ENXIO ? "a FIFO or socket with no reader" : strerror(errno));
        return false;
    }
    if ((flags = fcntl(f->fd, F_GETFL)) >= 0)
        (void)fcntl(f->fd, F_SETFL, flags & ~O_NONBLOCK); /* writes wait for the reader */
    f->in_place = true;
    return true;
}

/* Refuses a path that no file can be saved at, before anything is written:
 * an empty path, a directory, a name below something that is no
 * directory.  *exists tells whether path names an existing file (links
 * followed), *st its status. */
static bool check_path(const tendo__outfile *f, bool *exists, struct stat *st)
{
    size_t n = strlen(f->path);

    *exists = stat(f->path, st) == 0;
    if (n == 0)
        return tendo__fail(TENDO_ERR_INVALID_ARG, f->op, "empty path"), false;
    if ((*exists && S_ISDIR(st->st_mode)) || f->path[n - 1] == '/')
        return tendo__fail(TENDO_ERR_IO, f->op, "%s: is a directory", f->path), false;
    if (!*exists && errno != ENOENT)
        return tendo__fail(TENDO_ERR_IO, f->op, "%s: %s", f->path, strerror(errno)), false;
    return true;
}

bool tendo__outfile_open(tendo__outfile *f, const char *op, const char *path)
{
    static atomic_uint serial;
    struct stat st;
    bool exists;
    size_t len;

    f->op = op;
    f->path = path;
    f->fd = -1;
    f->failed = f->in_place = false;
    f->written = f->flushed = 0;
    f->durable = tendo_get_durable_saves();
    f->tmp = f->target = NULL;
    if (!check_path(f, &exists, &st))
        return false;
    if (exists && !S_ISREG(st.st_mode))
        return open_in_place(f);
    if (!(f->target = target_of(op, path)))
        return false;
    len = strlen(f->target) + 48;
    f->tmp = tendo__malloc(len);
    if (!f->tmp) {
        tendo__fail(TENDO_ERR_OOM, op, "%s: out of memory", path);
        goto fail;
    }
    remove_stale(f->target);
    /* O_EXCL with a name no other process or thread is using; a stale
     * leftover of the same name (a crash of a process with our pid) is
     * stepped over. */
    for (int tries = 0; tries < 100; tries++) {
        snprintf(f->tmp, len, "%s.tmp-%ld-%u", f->target, (long)getpid(), atomic_fetch_add(&serial, 1));
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd >= 0 || errno != EEXIST)
            break;
    }
    if (f->fd < 0) {
        tendo__fail(TENDO_ERR_IO, op, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        goto fail;
    }
    /* held until the rename: what tells remove_stale this writer is alive */
    (void)flock(f->fd, LOCK_EX | LOCK_NB);
    /* a replaced file keeps its permissions (a 0600 file stays 0600) */
    if (exists)
        (void)fchmod(f->fd, st.st_mode & 07777);
    return true;
fail:
    free(f->tmp);
    free(f->target);
    f->tmp = f->target = NULL;
    return false;
}

static atomic_bool durable = true;

void tendo_set_durable_saves(bool on) { atomic_store(&durable, on); }

bool tendo_get_durable_saves(void) { return atomic_load(&durable); }

#define WRITEBACK_CHUNK ((off_t)32 << 20)

/* Starts writing back the chunks completed since the last call, and waits
 * for the chunk before them (see the top of the file). */
static void stream_writeback(tendo__outfile *f)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    while (f->durable && f->written - f->flushed >= WRITEBACK_CHUNK) {
        (void)sync_file_range(f->fd, f->flushed, WRITEBACK_CHUNK, SYNC_FILE_RANGE_WRITE);
        if (f->flushed >= WRITEBACK_CHUNK)
            (void)sync_file_range(f->fd, f->flushed - WRITEBACK_CHUNK, WRITEBACK_CHUNK,
                                  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                      SYNC_FILE_RANGE_WAIT_AFTER);
        f->flushed += WRITEBACK_CHUNK;
    }
#else
    (void)f;
#endif
}

bool tendo__outfile_write(tendo__outfile *f, const void *p, size_t n)
{
    const char *c = p;

    while (!f->failed && n > 0) {
        ssize_t w = write(f->fd, c, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            tendo__fail(TENDO_ERR_IO, f->op, "%s: write failed: %s", f->path, w < 0 ? strerror(errno) : "no progress");
            f->failed = true;
            break;
        }
        c += w;
        n -= (size_t)w;
        f->written += w;
        stream_writeback(f);
    }
    return !f->failed;
}

tendo_status tendo__outfile_commit(tendo__outfile *f)
{
    if (!f->failed && f->durable && !f->in_place && fsync(f->fd) != 0) {
        tendo__fail(TENDO_ERR_IO, f->op, "%s: cannot flush to disk: %s", f->path, strerror(errno));
        f->failed = true;
    }
    /* renamed while the file is open, so that its lock is held throughout */
    if (!f->failed && !f->in_place && rename(f->tmp, f->target) != 0) {
        tendo__fail(TENDO_ERR_IO, f->op, "%s: cannot rename the temporary file into place: %s", f->path,
                    strerror(errno));
        f->failed = true;
    }
    if (f->failed) {
        tendo_status st = tendo_error_status(tendo_last_error());

        tendo__outfile_abort(f);
        return st;
    }
    if (close(f->fd) != 0) {
        f->fd = -1;
        tendo__outfile_abort(f); /* nothing left to remove: only frees */
        return tendo__fail(TENDO_ERR_IO, f->op, "%s: close failed: %s", f->path, strerror(errno));
    }
    f->fd = -1;
    free(f->tmp);
    free(f->target);
    f->tmp = f->target = NULL;
    return TENDO_OK;
}

void tendo__outfile_abort(tendo__outfile *f)
{
    if (f->tmp && !f->in_place && f->fd >= 0)
        unlink(f->tmp); /* before the close, with the lock still held */
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->tmp);
    free(f->target);
    f->tmp = f->target = NULL;
}
