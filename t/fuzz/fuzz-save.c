/* t/fuzz/fuzz-save.c - where tendo_npy_save and tendo_safetensors_save
 * write (src/io/outfile.h): the input picks the target and what lies
 * around it, a small tensor, and which save.
 *
 * The bytes, in order (0 once the input runs out):
 *   kind     what the path names (byte % NKINDS, the list below): a new or
 *            an existing regular file, a symbolic link to one (or a chain of
 *            two, a dangling one, one to a directory or to a FIFO), a FIFO
 *            with or without a reader, /dev/null, /dev/full, a directory, a
 *            path ending in '/', a name below a regular file, a name in a
 *            missing directory, an empty path, a file in a read-only
 *            directory;
 *   flags    1 safetensors (else npy), 2 relative path (the save runs in
 *            the target's directory), 4 the link's file in a subdirectory,
 *            8 a relative link, 16 a transposed (non-contiguous) tensor,
 *            32 a second tensor and metadata (safetensors), 64|128 both:
 *            durable saves (else off, for speed), also "./" before a
 *            relative path;
 *   name     1 + byte % 24 characters of [a-z0-9._-] (255: 240 of them,
 *            too long for a temporary file's name beside it), one byte each;
 *   mode     two bytes: the existing file's permission bits (0400 added:
 *            the checks read it);
 *   temps    TARGET.tmp-PID-N files beside the file a save replaces: byte &
 *            3 old ones (mtime ten seconds ago), >> 2 & 3 fresh ones, 16 one
 *            more old one flock'ed here on another fd, 32 named with this
 *            process's pid (else pids no process has), >> 6 one hostile
 *            neighbour: a directory, a symbolic link or a FIFO with such a
 *            name, or an old file whose name only looks like one;
 *   content  a byte n, then n % 64 bytes: the existing file's contents;
 *   tensor   dtype (byte % the build's dtypes), ndim (% 4), each dim (% 5),
 *            then the elements' bytes (the rest of the input, cycled).
 *
 * Promises checked after the save: its status is TENDO_OK or
 * TENDO_ERR_IO, TENDO_ERR_INVALID_ARG exactly for the empty path,
 * TENDO_ERR_UNSUPPORTED exactly for an npy of a dtype numpy lacks, or
 * TENDO_ERR_OOM; a save to a writable regular file (or to a link to one,
 * the link kept) succeeds, and the file loads back equal, its permission
 * bits kept (0666 less the umask when new); a FIFO or device is still one
 * (a FIFO's reader reads the whole file), a directory still one, empty;
 * after a failure an existing file is byte for byte and mode for mode what
 * it was, and a missing one still missing; nothing else appears in any
 * directory involved, no temporary file of this process is left, and no
 * file descriptor; an unlocked well-formed temporary file untouched for two
 * seconds is removed by a save that replaces a file beside it, and every
 * other neighbour (fresh, locked, hostile, or beside a save that replaces
 * nothing) is kept.
 *
 * Everything happens in a directory of its own under fuzz_tmpdir(), made
 * and removed for each input; the harness's own names there (R, T-NAME,
 * M-NAME, MISSING, KEEP) have capitals, which the input's names never do.  The save may change directory (relative
 * paths) and comes back: give libFuzzer absolute corpus paths.
 */
#define _GNU_SOURCE /* flock, utimensat, O_DIRECTORY */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

enum kind {
    K_NEW,          /* a regular file that does not exist yet */
    K_OLD,          /* an existing regular file */
    K_LINK,         /* a symbolic link to an existing regular file */
    K_LINK_NEW,     /* a symbolic link to a missing file (dangling) */
    K_CHAIN,        /* a link to a link to an existing regular file */
    K_LINK_DIR,     /* a link to a directory */
    K_LINK_FIFO,    /* a link to a FIFO with a reader */
    K_FIFO,         /* a FIFO with a reader */
    K_FIFO_ALONE,   /* a FIFO without one */
    K_DEVNULL,      /* /dev/null */
    K_DEVFULL,      /* /dev/full: every write fails */
    K_DIR,          /* a directory */
    K_SLASH,        /* a path ending in '/' (after a file, a missing name or a directory) */
    K_BELOW_FILE,   /* FILE/name, FILE a regular file */
    K_NO_PARENT,    /* MISSING/name */
    K_EMPTY,        /* "" */
    K_READONLY_DIR, /* an existing file in a directory without write permission */
    NKINDS
};

#define MAX_LEFT 12

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

/* The next byte of the input, 0 once it runs out. */
static unsigned take(input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

/* One file or directory entry that the harness put beside the target. */
typedef struct {
    char name[300];
    bool stale; /* a save that replaces the file beside it must remove it */
} neighbour;

typedef struct {
    char work[2048];    /* this input's directory (absolute) */
    char dir[4096];     /* the directory of the file a save would replace (absolute) */
    char base[256];     /* that file's name */
    char path[8192];    /* the path given to the save */
    char file[8192];    /* the regular file, FIFO or directory behind path (absolute) */
    char link[8192];    /* the link at path (absolute), when there is one */
    char link_to[8192]; /* what it says */
    char link2[8192], link2_to[8192]; /* the middle link of a chain */
    neighbour left[MAX_LEFT];
    int nleft, lock_fd, reader_fd;
    bool existed, readonly;
    struct stat before;   /* of file, when it existed */
    uint8_t old[64];      /* its contents */
    size_t nold;
} scene;

static mode_t file_umask;
static int home_fd = -1; /* the directory to come back to */
static unsigned serial;  /* makes each input's directory name new */

/* Writes n bytes to path, creating it with mode; aborts on failure. */
static void put(const char *path, const void *data, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    fuzz_check(fd >= 0, "cannot create %s: %s", path, strerror(errno));
    fuzz_check(n == 0 || write(fd, data, n) == (ssize_t)n, "cannot write %s", path);
    fuzz_check(fchmod(fd, mode) == 0 && close(fd) == 0, "cannot finish %s", path);
}

/* Whether path holds exactly data[0..n). */
static bool holds(const char *path, const uint8_t *data, size_t n)
{
    uint8_t buf[128];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got;

    if (fd < 0)
        return false;
    got = read(fd, buf, sizeof buf);
    close(fd);
    return got == (ssize_t)n && memcmp(buf, data, n) == 0;
}

/* Sets path's times (not following a link) to ago seconds before now. */
static void age(const char *path, int ago)
{
    struct timespec t[2];

    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= ago;
    t[1] = t[0];
    fuzz_check(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) == 0, "utimensat %s: %s", path, strerror(errno));
}

/* Removes path and, for a directory, what it holds (links not followed). */
static void remove_tree(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    char sub[8192];

    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        fuzz_check(unlink(path) == 0, "cannot remove %s: %s", path, strerror(errno));
        return;
    }
    (void)chmod(path, 0700);
    fuzz_check((d = opendir(path)) != NULL, "cannot list %s", path);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
    closedir(d);
    fuzz_check(rmdir(path) == 0, "cannot remove %s: %s", path, strerror(errno));
}

/* The names in directory path (sorted, newline-separated, into buf). */
static void listing(const char *path, char *buf, size_t size)
{
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    size_t at = 0;

    buf[0] = '\0';
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
            at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s\n", names[i]->d_name);
        free(names[i]);
    }
    free(names);
    fuzz_check(at < size, "%s lists too much", path);
}

/* Whether the newline-separated list has name. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p;) {
        const char *nl = strchr(p, '\n');
        if ((size_t)(nl - p) == n && !memcmp(p, name, n))
            return true;
        p = nl + 1;
    }
    return false;
}

/* How many file descriptors this process has open (-1: cannot tell). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* ---- the tensor ---------------------------------------------------------------- */

#define DTYPE_OF(dt, DT, ct) TENDO_##DT,
static const tendo_dtype dtypes[] = {TENDO_FOREACH_DTYPE(DTYPE_OF)};
#undef DTYPE_OF

/* A new CPU tensor from the input (see the top), transposed when asked. */
static tendo_tensor *make_tensor(input *in, bool transposed)
{
    tendo_dtype dt = dtypes[take(in) % (sizeof dtypes / sizeof dtypes[0])];
    int nd = (int)(take(in) % 4);
    int64_t shape[3] = {1, 1, 1}, numel = 1;
    size_t el = tendo_dtype_size(dt), nbytes;
    unsigned char *buf;
    tendo_tensor *t = NULL;

    for (int d = 0; d < nd; d++)
        numel *= shape[d] = take(in) % 5;
    nbytes = (size_t)numel * el;
    buf = calloc(nbytes ? nbytes : 1, 1);
    fuzz_check(buf != NULL, "out of memory");
    for (size_t i = 0; i < nbytes && in->n; i++)
        buf[i] = (unsigned char)take(in);
    if (dt == TENDO_BOOL)
        for (size_t i = 0; i < nbytes; i++)
            buf[i] &= 1;
    switch (dt) {
#define MAKE(dt_, DT, ct)                                                                                 \
    case TENDO_##DT: {                                                                                    \
        tensor_##dt_ *x = tensor_##dt_##_from_data((const ct *)(const void *)buf, nd, shape, tendo_cpu()); \
        if (x && transposed && nd >= 2) {                                                                 \
            tensor_##dt_ *y = tensor_##dt_##_transpose(x, 0, nd - 1);                                     \
            tensor_##dt_##_free(x);                                                                       \
            x = y;                                                                                        \
        }                                                                                                 \
        t = x ? tensor_##dt_##_erase(x) : NULL;                                                           \
        break;                                                                                            \
    }
        TENDO_FOREACH_DTYPE(MAKE)
#undef MAKE
    }
    free(buf);
    fuzz_check(t != NULL, "cannot make a tensor: %s", tendo_error_message(tendo_last_error()));
    return t;
}

/* Whether a and b have one dtype, one shape and the same elements. */
static bool same_tensor(const tendo_tensor *a, const tendo_tensor *b)
{
    if (!a || !b || tendo_tensor_dtype(a) != tendo_tensor_dtype(b) || tendo_tensor_ndim(a) != tendo_tensor_ndim(b))
        return false;
    for (int d = 0; d < tendo_tensor_ndim(a); d++)
        if (tendo_tensor_shape(a)[d] != tendo_tensor_shape(b)[d])
            return false;
    return fuzz_touch(a) == fuzz_touch(b);
}

/* Checks that path loads back as what was saved: t, or c. */
static void check_loads(const char *path, const tendo_tensor *t, const tendo_collection *c)
{
    if (t) {
        tendo_tensor *back = tendo_npy_load(path);

        fuzz_check(back != NULL, "%s does not load: %s", path, tendo_error_message(tendo_last_error()));
        fuzz_check(same_tensor(t, back), "%s does not load back as the tensor saved", path);
        tendo_tensor_free(back);
    } else {
        tendo_collection *back = tendo_safetensors_load(path, tendo_cpu());

        fuzz_check(back != NULL, "%s does not load: %s", path, tendo_error_message(tendo_last_error()));
        fuzz_check(tendo_collection_count(back) == tendo_collection_count(c) &&
                       tendo_collection_metadata_count(back) == tendo_collection_metadata_count(c),
                   "%s holds %lld tensors and %lld metadata, not %lld and %lld", path,
                   (long long)tendo_collection_count(back), (long long)tendo_collection_metadata_count(back),
                   (long long)tendo_collection_count(c), (long long)tendo_collection_metadata_count(c));
        for (int64_t i = 0; i < tendo_collection_count(c); i++) {
            const char *name = tendo_collection_name(c, i);
            fuzz_check(same_tensor(tendo_collection_at(c, i), tendo_collection_get(back, name)),
                       "%s: '%s' does not load back as saved", path, name);
        }
        for (int64_t i = 0; i < tendo_collection_metadata_count(c); i++) {
            const char *k = tendo_collection_metadata_key(c, i), *v = tendo_collection_metadata(back, k);
            fuzz_check(v && !strcmp(v, tendo_collection_metadata(c, k)), "%s: metadata '%s' is lost", path, k);
        }
        tendo_collection_free(back);
    }
}

/* ---- the scene ------------------------------------------------------------------ */

/* Puts the temporary-looking neighbours beside s->dir/s->base. */
static void put_neighbours(scene *s, unsigned spec)
{
    static const char *const hostile[] = {"%s.tmp-+%d-1", "%s.tmp- %d-1", "%s.tmp-%d-", "%s.tmp-%d-1x",
                                          "%s.tmp--%d-1", "%s.tmp-%d", "%sx.tmp-%d-1", "%s.tmp-%d-1-2"};
    long pid = spec & 32 ? (long)getpid() : 4190000;
    int nold = (int)(spec & 3), nfresh = (int)(spec >> 2 & 3), kind = (int)(spec >> 6);
    char path[8192];

    s->lock_fd = -1;
    if (strlen(s->base) > 200) /* no room for the suffix in a name */
        return;
    for (int i = 0; i < nold + nfresh + !!(spec & 16); i++) {
        neighbour *nb = &s->left[s->nleft++];
        bool locked = i == nold + nfresh;

        snprintf(nb->name, sizeof nb->name, "%s.tmp-%ld-%d", s->base, pid + (spec & 32 ? 0 : i), 1000 + i);
        snprintf(path, sizeof path, "%s/%s", s->dir, nb->name);
        put(path, "stale", 5, 0644);
        if (i < nold || locked)
            age(path, 10);
        nb->stale = i < nold;
        if (locked) {
            s->lock_fd = open(path, O_RDWR | O_CLOEXEC);
            fuzz_check(s->lock_fd >= 0 && flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0, "cannot lock %s", path);
        }
    }
    if (kind) {
        neighbour *nb = &s->left[s->nleft++];

        snprintf(nb->name, sizeof nb->name, "%s.tmp-%ld-7", s->base, pid);
        snprintf(path, sizeof path, "%s/%s", s->dir, nb->name);
        if (kind == 1) {
            fuzz_check(mkdir(path, 0755) == 0, "mkdir %s", path);
        } else if (kind == 2) { /* to a file that must survive */
            fuzz_check(symlink("KEEP", path) == 0, "symlink %s", path);
            snprintf(path, sizeof path, "%s/KEEP", s->dir);
            put(path, "keep", 4, 0644);
            snprintf(path, sizeof path, "%s/%s", s->dir, nb->name);
        } else {
            int which = (int)(spec >> 4 & 1) * 4 + (int)(spec >> 2 & 3);
            if (spec & 1) { /* a FIFO */
                fuzz_check(mkfifo(path, 0644) == 0, "mkfifo %s", path);
            } else { /* an old file whose name is not one a save makes */
                snprintf(nb->name, sizeof nb->name, hostile[which], s->base, 4190000);
                snprintf(path, sizeof path, "%s/%s", s->dir, nb->name);
                put(path, "keep", 4, 0644);
            }
        }
        age(path, 10);
    }
}

/* Makes an existing regular file at s->file with the input's mode and contents. */
static void put_file(scene *s, mode_t mode)
{
    put(s->file, s->old, s->nold, mode);
    fuzz_check(stat(s->file, &s->before) == 0, "stat %s", s->file);
    s->existed = true;
}

/* Everything a kind needs, in s->work (made here); s->path is what to save to. */
static void build(scene *s, enum kind kind, unsigned flags, const char *name, mode_t mode, unsigned spec)
{
    bool relative = flags & 2, sub = flags & 4, rel_link = flags & 8, dot = (flags & 0xc0) == 0xc0;
    const char *lead = relative ? (dot ? "./" : "") : s->work;
    const char *sep = relative ? "" : "/";

    snprintf(s->dir, sizeof s->dir, "%s", s->work);
    snprintf(s->base, sizeof s->base, "%s", name);
    snprintf(s->file, sizeof s->file, "%s/%s", s->work, name);
    snprintf(s->path, sizeof s->path, "%s%s%s", lead, sep, name);
    s->reader_fd = -1;
    switch (kind) {
    case K_NEW:
        break;
    case K_OLD:
        put_file(s, mode);
        break;
    case K_READONLY_DIR:
        put_file(s, mode);
        s->readonly = true;
        break;
    case K_LINK:
    case K_LINK_NEW:
    case K_CHAIN:
    case K_LINK_DIR:
    case K_LINK_FIFO:
        if (sub) {
            snprintf(s->dir, sizeof s->dir, "%s/R", s->work);
            fuzz_check(mkdir(s->dir, 0755) == 0, "mkdir %s", s->dir);
        }
        snprintf(s->base, sizeof s->base, "T-%s", name);
        snprintf(s->file, sizeof s->file, "%s/%s", s->dir, s->base);
        snprintf(s->link, sizeof s->link, "%s/%s", s->work, name);
        if (rel_link)
            snprintf(s->link_to, sizeof s->link_to, "%s%s", sub ? "R/" : "", s->base);
        else
            snprintf(s->link_to, sizeof s->link_to, "%s", s->file);
        if (kind == K_CHAIN) { /* name -> M-name -> the file */
            snprintf(s->link2, sizeof s->link2, "%s/M-%s", s->work, name);
            snprintf(s->link2_to, sizeof s->link2_to, "%s", s->link_to);
            fuzz_check(symlink(s->link2_to, s->link2) == 0, "symlink %s", s->link2);
            snprintf(s->link_to, sizeof s->link_to, "M-%s", name);
        }
        fuzz_check(symlink(s->link_to, s->link) == 0, "symlink %s: %s", s->link, strerror(errno));
        if (kind == K_LINK || kind == K_CHAIN)
            put_file(s, mode);
        else if (kind == K_LINK_DIR)
            fuzz_check(mkdir(s->file, 0755) == 0, "mkdir %s", s->file);
        else if (kind == K_LINK_FIFO)
            fuzz_check(mkfifo(s->file, 0644) == 0, "mkfifo %s", s->file);
        break;
    case K_FIFO:
    case K_FIFO_ALONE:
        fuzz_check(mkfifo(s->file, 0644) == 0, "mkfifo %s", s->file);
        break;
    case K_DEVNULL:
    case K_DEVFULL:
        snprintf(s->path, sizeof s->path, kind == K_DEVNULL ? "/dev/null" : "/dev/full");
        snprintf(s->file, sizeof s->file, "%s", s->path);
        break;
    case K_DIR:
        fuzz_check(mkdir(s->file, 0755) == 0, "mkdir %s", s->file);
        break;
    case K_SLASH: /* after a regular file, a missing name or a directory */
        if (spec % 3 == 0)
            put_file(s, mode);
        else if (spec % 3 == 1)
            fuzz_check(mkdir(s->file, 0755) == 0, "mkdir %s", s->file);
        strcat(s->path, "/");
        break;
    case K_BELOW_FILE:
        put_file(s, mode);
        strcat(s->path, "/x");
        break;
    case K_NO_PARENT:
        snprintf(s->path, sizeof s->path, "%s%sMISSING/%s", lead, sep, name);
        break;
    case K_EMPTY:
        s->path[0] = '\0';
        break;
    case NKINDS:
        break;
    }
    if (kind == K_FIFO || kind == K_LINK_FIFO) {
        s->reader_fd = open(s->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        fuzz_check(s->reader_fd >= 0, "cannot open %s to read: %s", s->file, strerror(errno));
    }
}

/* Whether a save to this kind replaces a regular file (and so clears the
 * stale temporary files beside it). */
static bool replaces(enum kind kind)
{
    return kind == K_NEW || kind == K_OLD || kind == K_LINK || kind == K_CHAIN || kind == K_READONLY_DIR;
}

/* Checks the neighbours after a save: the stale ones gone when the save
 * replaced a file beside them (may_clear), everything else kept. */
static void check_neighbours(const scene *s, bool must_clear, bool may_clear)
{
    char list[16384];

    listing(s->dir, list, sizeof list);
    for (int i = 0; i < s->nleft; i++) {
        bool there = listed(list, s->left[i].name);
        if (s->left[i].stale && must_clear)
            fuzz_check(!there, "the stale %s/%s is still there", s->dir, s->left[i].name);
        else if (!(s->left[i].stale && may_clear))
            fuzz_check(there, "%s/%s was removed", s->dir, s->left[i].name);
    }
}

/* Checks that directory path holds only what was there before (before) and
 * the names the save may have made (made, or NULL): no temporary file of
 * this process, nothing else. */
static void check_nothing_new(const char *path, const char *before, const char *made)
{
    char after[16384], tmpmark[64];

    listing(path, after, sizeof after);
    snprintf(tmpmark, sizeof tmpmark, ".tmp-%ld-", (long)getpid());
    for (const char *p = after; *p;) {
        const char *nl = strchr(p, '\n');
        char name[512];

        snprintf(name, sizeof name, "%.*s", (int)(nl - p), p);
        fuzz_check(listed(before, name) || (made && !strcmp(name, made)), "the save left %s/%s%s", path, name,
                   strstr(name, tmpmark) ? " (a temporary file of this process)" : "");
        p = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    static scene s;
    enum kind kind = (enum kind)(take(&in) % NKINDS);
    unsigned flags = take(&in), nlen = take(&in), mode_lo = take(&in), mode_hi = take(&in), spec;
    char name[256], before_work[16384], before_dir[16384], *made;
    mode_t mode = (mode_t)((mode_lo | mode_hi << 8) & 0777) | 0400; /* readable, for the checks */
    bool npy = !(flags & 1), relative = flags & 2, was_there, ok_expected;
    tendo_tensor *t = NULL;
    tendo_collection *c = NULL;
    tendo_status st;
    struct stat now;
    int fds;

    if (home_fd < 0) {
        home_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_check(home_fd >= 0, "cannot open the working directory");
        file_umask = umask(022);
        umask(file_umask);
    }
    memset(&s, 0, sizeof s);
    nlen = nlen == 255 ? 240 : 1 + nlen % 24;
    for (unsigned i = 0; i < nlen; i++)
        name[i] = "abcdefghijklmnopqrstuvwxyz0123456789._-"[take(&in) % 39];
    name[nlen] = '\0';
    if (name[strspn(name, ".")] == '\0') /* "." and ".." name directories */
        name[0] = 'n';
    spec = take(&in);
    s.nold = take(&in) % 64;
    for (size_t i = 0; i < s.nold; i++)
        s.old[i] = (uint8_t)take(&in);

    snprintf(s.work, sizeof s.work, "%s/save-%u", fuzz_tmpdir(), serial++);
    fuzz_check(mkdir(s.work, 0755) == 0, "mkdir %s: %s", s.work, strerror(errno));
    build(&s, kind, flags, name, mode, spec);
    put_neighbours(&s, spec);
    if (s.readonly)
        fuzz_check(chmod(s.dir, 0555) == 0, "chmod %s", s.dir);

    t = make_tensor(&in, flags & 16);
    if (!npy) {
        c = tendo_collection_new();
        fuzz_check(c && tendo_collection_add(c, "w", t) == TENDO_OK, "collection: %s",
                   tendo_error_message(tendo_last_error()));
        if (flags & 32) {
            tendo_tensor *t2 = make_tensor(&in, false);
            fuzz_check(tendo_collection_add(c, "b.bias", t2) == TENDO_OK &&
                           tendo_collection_set_metadata(c, "format", "pt") == TENDO_OK &&
                           tendo_collection_set_metadata(c, name, "v") == TENDO_OK,
                       "collection: %s", tendo_error_message(tendo_last_error()));
            tendo_tensor_free(t2);
        }
    }
    tendo_set_durable_saves((flags & 0xc0) == 0xc0);
    listing(s.work, before_work, sizeof before_work);
    listing(s.dir, before_dir, sizeof before_dir);
    was_there = stat(s.file, &now) == 0;
    if (relative)
        fuzz_check(chdir(s.work) == 0, "chdir %s", s.work);

    fds = open_fds();
    st = npy ? tendo_npy_save(s.path, t) : tendo_safetensors_save(s.path, c);
    fuzz_check(fds == open_fds(), "the save to %s left a file descriptor open (%d before, %d after)", s.path, fds,
               open_fds());
    fuzz_check(fchdir(home_fd) == 0, "cannot go back");

    /* the status */
    {
        tendo_dtype dt = tendo_tensor_dtype(t);
        const char *name = tendo_dtype_name(dt); /* by name: a build may lack these dtypes */
        bool unsupported = npy && (!strcmp(name, "bf16") || !strcmp(name, "f8e4m3") || !strcmp(name, "f8e5m2"));
        const char *msg = tendo_error_message(tendo_last_error());

        fuzz_check(st == TENDO_OK || st == TENDO_ERR_IO || st == TENDO_ERR_OOM ||
                       (st == TENDO_ERR_INVALID_ARG && kind == K_EMPTY) || (st == TENDO_ERR_UNSUPPORTED && unsupported),
                   "saving to '%s' (kind %d): %s: %s", s.path, kind, tendo_status_str(st), st ? msg : "");
        fuzz_check(kind != K_EMPTY || unsupported || st == TENDO_ERR_INVALID_ARG, "an empty path: %s",
                   tendo_status_str(st));
        fuzz_check(!unsupported || st != TENDO_OK, "an npy of %s was saved", tendo_dtype_name(dt));
        /* a writable file is written (root writes in a read-only directory too) */
        ok_expected = !unsupported && strlen(s.base) <= 200 &&
                      (replaces(kind) || kind == K_FIFO || kind == K_LINK_FIFO || kind == K_DEVNULL) &&
                      (kind != K_READONLY_DIR || geteuid() == 0);
        fuzz_check(!ok_expected || st == TENDO_OK, "saving to '%s' (kind %d) failed: %s", s.path, kind, msg);
        if (st == TENDO_OK)
            fuzz_check(kind != K_FIFO_ALONE && kind != K_DEVFULL && kind != K_DIR && kind != K_SLASH &&
                           kind != K_BELOW_FILE && kind != K_NO_PARENT && kind != K_LINK_DIR,
                       "saving to '%s' (kind %d) succeeded", s.path, kind);
    }

    /* the links stay links, saying what they said */
    if (s.link[0]) {
        char got[8192];
        ssize_t n = readlink(s.link, got, sizeof got - 1);
        fuzz_check(n >= 0 && (got[n] = '\0', !strcmp(got, s.link_to)), "the link %s was replaced", s.link);
    }
    if (s.link2[0]) {
        char got[8192];
        ssize_t n = readlink(s.link2, got, sizeof got - 1);
        fuzz_check(n >= 0 && (got[n] = '\0', !strcmp(got, s.link2_to)), "the link %s was replaced", s.link2);
    }

    /* what the path names */
    switch (kind) {
    case K_FIFO:
    case K_LINK_FIFO:
    case K_FIFO_ALONE:
        fuzz_check(lstat(s.file, &now) == 0 && S_ISFIFO(now.st_mode), "the FIFO %s was replaced", s.file);
        if (s.reader_fd >= 0 && st == TENDO_OK) {
            static uint8_t piped[1 << 16];
            size_t got = 0;
            ssize_t r;
            while (got < sizeof piped && (r = read(s.reader_fd, piped + got, sizeof piped - got)) > 0)
                got += (size_t)r;
            check_loads(fuzz_write_file("piped", piped, got), npy ? t : NULL, c);
        }
        break;
    case K_DEVNULL:
    case K_DEVFULL:
        fuzz_check(stat(s.file, &now) == 0 && S_ISCHR(now.st_mode), "%s is no longer a device", s.file);
        break;
    case K_DIR:
    case K_LINK_DIR: {
        char list[64];
        fuzz_check(lstat(s.file, &now) == 0 && S_ISDIR(now.st_mode), "the directory %s was replaced", s.file);
        listing(s.file, list, sizeof list);
        fuzz_check(!list[0], "the save wrote into the directory %s: %s", s.file, list);
        break;
    }
    default:
        if (st == TENDO_OK && replaces(kind)) {
            check_loads(s.file, npy ? t : NULL, c);
            fuzz_check(lstat(s.file, &now) == 0 && S_ISREG(now.st_mode), "%s is not a regular file", s.file);
            fuzz_check((now.st_mode & 07777) == (s.existed ? s.before.st_mode & 07777 : 0666 & ~file_umask),
                       "%s has mode %o, not %o", s.file, (unsigned)(now.st_mode & 07777),
                       (unsigned)(s.existed ? s.before.st_mode & 07777 : 0666 & ~file_umask));
        } else if (st == TENDO_OK && kind == K_LINK_NEW) {
            check_loads(s.file, npy ? t : NULL, c);
        } else if (s.existed) {
            fuzz_check(lstat(s.file, &now) == 0 && S_ISREG(now.st_mode) && now.st_ino == s.before.st_ino &&
                           (now.st_mode & 07777) == (s.before.st_mode & 07777) && holds(s.file, s.old, s.nold),
                       "the failed save (%s) changed %s", tendo_status_str(st), s.file);
        } else if (kind != K_DEVNULL && kind != K_EMPTY && !(kind == K_SLASH && spec % 3 == 1)) {
            fuzz_check(lstat(s.file, &now) != 0 && errno == ENOENT, "the failed save (%s) made %s",
                       tendo_status_str(st), s.file);
        }
        break;
    }

    /* the neighbours, and nothing new anywhere */
    {
        bool clears = st == TENDO_OK && (replaces(kind) || kind == K_LINK_NEW);
        bool can_remove = !s.readonly || geteuid() == 0;

        if (s.nleft)
            check_neighbours(&s, clears && can_remove, clears || (st != TENDO_OK && replaces(kind)));
        made = NULL;
        if (st == TENDO_OK && !was_there && !strcmp(s.dir, s.work))
            made = s.base;
        check_nothing_new(s.work, before_work, made);
        if (strcmp(s.dir, s.work))
            check_nothing_new(s.dir, before_dir, st == TENDO_OK && !was_there ? s.base : NULL);
    }

    if (s.lock_fd >= 0)
        close(s.lock_fd);
    if (s.reader_fd >= 0)
        close(s.reader_fd);
    tendo_collection_free(c);
    tendo_tensor_free(t);
    remove_tree(s.work);
    return 0;
}
