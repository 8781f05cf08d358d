/* src/io/npy.c - numpy's .npy format: load (versions 1.0, 2.0, 3.0; little- and
 * big-endian; C and Fortran order) and save (1.0, or 2.0 for huge headers).
 *
 * Header: "\x93NUMPY", major, minor, a little-endian header length (2 bytes
 * in 1.0, 4 in 2.0/3.0), then a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 * spaces and ended by '\n', so that the data starts at a multiple of 64.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/outfile.h"
#include "tendo/io.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The dtype whose numpy name is descr in any byte order ('<', '>', '=' or,
 * for one-byte types, '|'), and whether the file is big-endian; false when
 * tendo has no such dtype. */
static bool dtype_of_descr(const char *descr, tendo_dtype *dt, bool *big)
{
    if (strlen(descr) < 2 || !strchr("<>|=", descr[0]))
        return false;
#define MATCH(name, NAME, ct, np, st, code, bits)                                        \
    if (np[0] && !strcmp(&np[1], descr + 1) && (bits == 8 || descr[0] != '|')) {        \
        *dt = TENDO_##NAME;                                                              \
        *big = descr[0] == '>' && bits > 8;                                              \
        return true;                                                                     \
    }
    TENDO_FOREACH_DTYPE_INFO(MATCH)
#undef MATCH
    return false;
}

/* The value after 'key': in the header dict, or NULL. */
static const char *find_key(const char *h, const char *key)
{
    char pat[32];
    const char *p;

    snprintf(pat, sizeof pat, "'%s'", key);
    p = strstr(h, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (isspace((unsigned char)*p))
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parses the header dict into descr, fortran order and shape; false with
 * TENDO_ERR_FORMAT (or _SHAPE, _UNSUPPORTED) set for path otherwise. */
static bool parse_header(const char *path, const char *h, tendo_dtype *dt, bool *big, bool *fortran, int *ndim,
                         int64_t *shape)
{
    static const char op[] = "npy_load";
    const char *p = find_key(h, "descr"), *q;
    char descr[16];

    if (!p || (*p != '\'' && *p != '"') || !(q = strchr(p + 1, *p)) || q - p - 1 >= (ptrdiff_t)sizeof descr) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: the header has no valid 'descr'", path);
        return false;
    }
    memcpy(descr, p + 1, (size_t)(q - p - 1));
    descr[q - p - 1] = '\0';
    if (!dtype_of_descr(descr, dt, big)) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "%s: dtype '%s' is not one tendo was built with", path, descr);
        return false;
    }
    p = find_key(h, "fortran_order");
    if (p && !strncmp(p, "True", 4))
        *fortran = true;
    else if (p && !strncmp(p, "False", 5))
        *fortran = false;
    else {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: the header has no valid 'fortran_order'", path);
        return false;
    }
    p = find_key(h, "shape");
    if (!p || *p != '(') {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: the header has no valid 'shape'", path);
        return false;
    }
    *ndim = 0;
    for (p++;;) {
        char *end;
        long long v;

        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == ')')
            break;
        errno = 0;
        v = strtoll(p, &end, 10);
        if (end == p || v < 0 || *ndim == TENDO_MAX_DIMS) {
            tendo__fail(TENDO_ERR_FORMAT, op, "%s: bad shape in the header (sizes >= 0, at most %d dims)", path,
                        TENDO_MAX_DIMS);
            return false;
        }
        /* strtoll reads a size past int64 as INT64_MAX: refuse it, not clamp it */
        if (errno == ERANGE) {
            tendo__fail(TENDO_ERR_FORMAT, op, "%s: shape entry %d of the header is past 2^63-1", path, *ndim);
            return false;
        }
        shape[(*ndim)++] = v;
        p = end;
    }
    /* the element count must fit in int64 (empty dims counted as 1, as
     * tendo__check_shape counts them): a fault of the file, not the caller */
    {
        int64_t dense = 1;

        for (int d = 0; d < *ndim; d++)
            if (__builtin_mul_overflow(dense, shape[d] ? shape[d] : 1, &dense)) {
                tendo__fail(TENDO_ERR_FORMAT, op, "%s: shape %s in the header has more than 2^63-1 elements",
                            path, tendo__shape_str(*ndim, shape).s);
                return false;
            }
    }
    return true;
}

/* Reverses the byte order of n elements of size bytes, in place. */
static void swap_bytes(char *p, int64_t n, size_t size)
{
    for (int64_t i = 0; i < n; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* The whole file in a malloc'd buffer, or NULL with TENDO_ERR_IO (or
 * TENDO_ERR_OOM) set.  Only a regular file is read: a directory, a FIFO
 * or a device is refused before anything is allocated. */
static char *read_all(const char *op, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    struct stat st;

    if (!f) {
        tendo__fail(TENDO_ERR_IO, op, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        tendo__fail(TENDO_ERR_IO, op, "%s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = tendo__malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        if (n >= 0 && !buf)
            tendo__fail(TENDO_ERR_OOM, op, "%s: out of memory for the file's %ld bytes", path, n);
        else
            tendo__fail(TENDO_ERR_IO, op, "%s: cannot read the file", path);
        free(buf);
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

tendo_tensor *tendo_npy_load(const char *path)
{
    static const char op[] = "npy_load";
    size_t len, hlen, hstart, elsize;
    char *file, *header = NULL;
    int64_t shape[TENDO_MAX_DIMS], rshape[TENDO_MAX_DIMS], numel;
    int ndim = 0, perm[TENDO_MAX_DIMS];
    bool big = false, fortran = false;
    tendo_dtype dt;
    tendo__tensor *t = NULL, *out = NULL;

    if (!path) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "path is NULL");
        return NULL;
    }
    if (!(file = read_all(op, path, &len)))
        return NULL;
    if (len < 10 || memcmp(file, magic, 6) != 0 || file[6] < 1 || file[6] > 3) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: not a .npy file of version 1, 2 or 3", path);
        goto out;
    }
    hstart = file[6] == 1 ? 10 : 12;
    if (len < hstart) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: truncated header", path);
        goto out;
    }
    hlen = file[6] == 1 ? (size_t)(unsigned char)file[8] | (size_t)(unsigned char)file[9] << 8
                        : (size_t)(unsigned char)file[8] | (size_t)(unsigned char)file[9] << 8 |
                              (size_t)(unsigned char)file[10] << 16 | (size_t)(unsigned char)file[11] << 24;
    if (hlen > len - hstart) {
        tendo__fail(TENDO_ERR_FORMAT, op, "%s: header length %zu runs past the end of the file", path, hlen);
        goto out;
    }
    header = tendo__malloc(hlen + 1);
    if (!header) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for the header of %s", path);
        goto out;
    }
    memcpy(header, file + hstart, hlen);
    header[hlen] = '\0';
    if (!parse_header(path, header, &dt, &big, &fortran, &ndim, shape) ||
        !tendo__check_shape(op, ndim, shape, &numel))
        goto out;
    elsize = tendo_dtype_size(dt);
    if ((uint64_t)numel > (len - hstart - hlen) / elsize || (size_t)numel * elsize != len - hstart - hlen) {
        /* numel * elsize may overflow: say it in elements */
        tendo__fail(TENDO_ERR_FORMAT, op,
                    "%s: shape %s of %s needs %lld elements of %zu bytes, the file has %zu data bytes", path, tendo__shape_str(ndim, shape).s, tendo_dtype_name(dt), (long long)numel, elsize,
                    len - hstart - hlen);
        goto out;
    }
    /* Fortran order is C order of the reversed shape, seen transposed */
    for (int d = 0; d < ndim; d++) {
        rshape[d] = fortran ? shape[ndim - 1 - d] : shape[d];
        perm[d] = ndim - 1 - d;
    }
    t = tendo__tensor_new(op, dt, ndim, rshape, tendo_cpu());
    if (!t)
        goto out;
    if (numel > 0) {
        memcpy(tendo__tensor_data(t), file + hstart + hlen, (size_t)numel * elsize);
        if (big)
            swap_bytes(tendo__tensor_data(t), numel, elsize);
        if (dt == TENDO_BOOL) { /* a bool holds 0 or 1: any other byte is true */
            unsigned char *b = tendo__tensor_data(t);

            for (int64_t i = 0; i < numel; i++)
                b[i] = b[i] != 0;
        }
    }
    out = fortran && ndim > 1 ? tendo__permute(t, perm) : t;
    if (out != t)
        tendo__tensor_free(t);
out:
    free(header);
    free(file);
    return (tendo_tensor *)(void *)out;
}

tendo_status tendo_npy_save(const char *path, const tendo_tensor *e)
{
    static const char op[] = "npy_save";
    const tendo__tensor *t = (const tendo__tensor *)(const void *)e;
    const char *descr = NULL;
    char dict[512];
    size_t dlen, total, pad;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    static const char spaces[64] = "                                                               ";
    tendo__tensor *dense;
    tendo__outfile f;
    int n;

    if (!path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "path is NULL");
    if (!tendo__check_tensor(op, "t", t))
        return TENDO_ERR_INVALID_ARG;
#define NAME_OF(name, NAME, ct, np, st_, code, bits) \
    if (t->dtype == TENDO_##NAME && np[0])           \
        descr = np;
    TENDO_FOREACH_DTYPE_INFO(NAME_OF)
#undef NAME_OF
    if (!descr)
        return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "%s: numpy has no dtype for %s (convert it first, e.g. to f32)",
                           path, tendo_dtype_name(t->dtype));
    n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int d = 0; d < t->ndim; d++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)t->shape[d],
                      d + 1 < t->ndim ? " " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    dlen = (size_t)n;
    total = 10 + dlen + 1; /* '\n' ends the header */
    pad = (64 - total % 64) % 64;
    pre[8] = (unsigned char)((dlen + pad + 1) & 0xff);
    pre[9] = (unsigned char)((dlen + pad + 1) >> 8);
    dense = tendo__host_contiguous(op, t);
    if (!dense)
        return tendo_error_status(tendo_last_error());
    if (!tendo__outfile_open(&f, op, path)) {
        tendo__tensor_free(dense);
        return tendo_error_status(tendo_last_error());
    }
    tendo__outfile_write(&f, pre, sizeof pre);
    tendo__outfile_write(&f, dict, dlen);
    tendo__outfile_write(&f, spaces, pad);
    tendo__outfile_write(&f, "\n", 1);
    tendo__outfile_write(&f, tendo__tensor_data(dense), (size_t)t->numel * tendo_dtype_size(t->dtype));
    tendo__tensor_free(dense);
    return tendo__outfile_commit(&f);
}
