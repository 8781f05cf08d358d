/* t/fuzz/fuzz-util.c - the helpers of t/fuzz/fuzz.h. */
#define _GNU_SOURCE /* memfd_create */
#include <dirent.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[4096];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[8192];

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

const char *fuzz_tmpdir(void)
{
    const char *base = getenv("TMPDIR");

    if (dir[0])
        return dir;
    snprintf(dir, sizeof dir, "%s/tendo-fuzz-XXXXXX", base && *base ? base : "/tmp");
    fuzz_check(mkdtemp(dir) != NULL, "cannot make a temporary directory under %s", base ? base : "/tmp");
    atexit(remove_dir);
    return dir;
}

const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[8192];
    static int fd = -2;
    FILE *f;

#ifdef MFD_CLOEXEC
    /* a file in memory, named by /proc: several times faster than a disk's */
    if (fd == -2)
        fd = memfd_create(name, MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        return path;
    }
#endif
    fd = -1;
    snprintf(path, sizeof path, "%s/%s", fuzz_tmpdir(), name);
    f = fopen(path, "wb");
    fuzz_check(f != NULL, "cannot write %s", path);
    fuzz_check(fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
    return path;
}

uint64_t fuzz_touch(const tendo_tensor *t)
{
    int nd = tendo_tensor_ndim(t);
    const int64_t *shape = tendo_tensor_shape(t), *stride = tendo_tensor_stride(t);
    size_t elsize = tendo_dtype_size(tendo_tensor_dtype(t));
    const unsigned char *base = tendo_tensor_data(t);
    int64_t numel = tendo_tensor_numel(t), n = 1, idx[TENDO_MAX_DIMS] = {0};
    uint64_t sum = 0;

    fuzz_check(nd >= 0 && nd <= TENDO_MAX_DIMS, "ndim %d", nd);
    for (int d = 0; d < nd; d++) {
        fuzz_check(shape[d] >= 0, "negative size %lld", (long long)shape[d]);
        n *= shape[d];
    }
    fuzz_check(n == numel, "numel %lld, the shape says %lld", (long long)numel, (long long)n);
    if (numel == 0)
        return 0;
    fuzz_check(base != NULL, "a CPU tensor of %lld elements without data", (long long)numel);
    for (int64_t i = 0; i < numel; i++) {
        int64_t off = 0;

        for (int d = 0; d < nd; d++)
            off += idx[d] * stride[d];
        for (size_t b = 0; b < elsize; b++)
            sum = sum * 31 + base[off * (int64_t)elsize + (int64_t)b];
        for (int d = nd - 1; d >= 0; d--) { /* the next multi-index */
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    return sum;
}

void fuzz_check_refusal(const char *path)
{
    tendo_status st = tendo_error_status(tendo_last_error());
    const char *m = tendo_error_message(tendo_last_error());

    fuzz_check(st == TENDO_ERR_FORMAT || st == TENDO_ERR_UNSUPPORTED || st == TENDO_ERR_OOM, "status %s: %s",
               tendo_status_str(st), m);
    fuzz_check(st == TENDO_ERR_OOM || (m && strstr(m, path)), "the message does not name the file: %s", m);
}
