/* src/io/safetensors.c - the safetensors format: load (zero-copy on the CPU)
 * and save.
 *
 * A file is: N, the header's length (8 bytes, little-endian); N bytes of
 * UTF-8 JSON, an object mapping each tensor name to {"dtype": "F32",
 * "shape": [2, 3], "data_offsets": [begin, end]} plus an optional
 * "__metadata__" object of strings; then the data section, in which the
 * tensors' byte ranges (relative to its start) tile it exactly.  Loading
 * checks what the reference implementation checks, with a message naming
 * the file and the fault.
 */
#define _DEFAULT_SOURCE /* MAP_PRIVATE and friends under _POSIX_C_SOURCE */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/collection.h"
#include "core/internal.h"
#include "io/outfile.h"
#include "tendo/io.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian: this file assumes a little-endian host"
#endif

#define MAX_HEADER 100000000 /* the reference implementation's limit */

/* Every dtype the format defines, with its width in bits: a file may use
 * any of them, and those this build lacks are refused by name. */
static const struct {
    const char *name;
    int bits;
} formats[] = {
    {"BOOL", 8},    {"U8", 8},      {"I8", 8},       {"F8_E5M2", 8},  {"F8_E4M3", 8}, {"F8_E8M0", 8},
    {"I16", 16},    {"U16", 16},    {"F16", 16},     {"BF16", 16},    {"I32", 32},    {"U32", 32},
    {"F32", 32},    {"F64", 64},    {"I64", 64},     {"U64", 64},     {"C64", 64},    {"F4", 4},
    {"F6_E2M3", 6}, {"F6_E3M2", 6},
};

/* One tensor of a header, validated. */
typedef struct {
    const char *name; /* borrowed from the JSON tree */
    const char *format;
    size_t pos; /* in the header's order */
    int bits;
    int ndim;
    int64_t shape[TENDO_MAX_DIMS];
    uint64_t begin, end;
} entry;

/* A header being read: for messages and cleanup. */
typedef struct {
    const char *path;
    json_t *root;
    entry *entries;
    size_t n;
} header;

/* The op the loading helpers report errors for: the public function this
 * thread called (safetensors_load or safetensors_load_copy). */
static _Thread_local const char *load_op = "safetensors_load";

/* The tendo dtype called name in safetensors, or false. */
static bool tendo_dtype_of(const char *name, tendo_dtype *dt)
{
#define MATCH(n, NAME, ct, np, st, code, bits) \
    if (!strcmp(st, name)) {                   \
        *dt = TENDO_##NAME;                    \
        return true;                           \
    }
    TENDO_FOREACH_DTYPE_INFO(MATCH)
#undef MATCH
    return false;
}

/* The safetensors name of dt ("" when the format has none). */
static const char *format_of(tendo_dtype dt)
{
#define MATCH(n, NAME, ct, np, st, code, bits) \
    if (dt == TENDO_##NAME)                    \
        return st;
    TENDO_FOREACH_DTYPE_INFO(MATCH)
#undef MATCH
    return "";
}

/* A non-negative JSON integer as uint64; false otherwise. */
static bool get_uint(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* Reads one tensor's description into e; false with TENDO_ERR_FORMAT. */
static bool parse_entry(const header *h, const char *name, const json_t *info, entry *e)
{
    const json_t *dtype = json_object_get(info, "dtype"), *shape = json_object_get(info, "shape"),
                 *offs = json_object_get(info, "data_offsets");
    size_t ndim;
    uint64_t numel = 1, dense = 1, bits, nbytes;

    e->name = name;
    if (!json_is_object(info) || !json_is_string(dtype) || !json_is_array(shape) || !json_is_array(offs)) {
        tendo__fail(TENDO_ERR_FORMAT, load_op,
                    "%s: tensor '%s' is not an object with \"dtype\" (a string), \"shape\" and \"data_offsets\" "
                    "(arrays)",
                    h->path, name);
        return false;
    }
    e->format = json_string_value(dtype);
    e->bits = 0;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(formats[i].name, e->format))
            e->bits = formats[i].bits;
    if (!e->bits) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s' has an unknown dtype \"%s\"", h->path, name,
                    e->format);
        return false;
    }
    ndim = json_array_size(shape);
    if (ndim > TENDO_MAX_DIMS) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s' has %zu dims; tendo tensors have at most %d",
                    h->path, name, ndim, TENDO_MAX_DIMS);
        return false;
    }
    e->ndim = (int)ndim;
    for (size_t d = 0; d < ndim; d++) {
        uint64_t size;

        if (!get_uint(json_array_get(shape, d), &size)) {
            tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': shape entry %zu is not an integer >= 0",
                        h->path, name, d);
            return false;
        }
        /* dense counts empty dims as 1: it bounds every row-major stride */
        if ((size ? size : 1) > (uint64_t)INT64_MAX / dense) {
            tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': the shape has more than 2^63-1 elements",
                        h->path, name);
            return false;
        }
        dense *= size ? size : 1;
        numel *= size;
        e->shape[d] = (int64_t)size;
    }
    if (json_array_size(offs) != 2 || !get_uint(json_array_get(offs, 0), &e->begin) ||
        !get_uint(json_array_get(offs, 1), &e->end)) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': data_offsets is not [begin, end] of integers >= 0",
                    h->path, name);
        return false;
    }
    if (e->end < e->begin) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
                    h->path, name, (unsigned long long)e->begin, (unsigned long long)e->end);
        return false;
    }
    bits = (uint64_t)e->bits;
    if (numel > UINT64_MAX / bits || numel * bits > (uint64_t)INT64_MAX) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': the byte size overflows 64 bits", h->path, name);
        return false;
    }
    if (numel * bits % 8 != 0) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: tensor '%s': %llu elements of %s do not fill whole bytes",
                    h->path, name, (unsigned long long)numel, e->format);
        return false;
    }
    nbytes = numel * bits / 8;
    if (e->end - e->begin != nbytes) {
        tendo__fail(TENDO_ERR_FORMAT, load_op,
                    "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but %s %s needs %llu", h->path,
                    name, (unsigned long long)e->begin, (unsigned long long)e->end,
                    (unsigned long long)(e->end - e->begin), e->format,
                    tendo__shape_str(e->ndim, e->shape).s, (unsigned long long)nbytes);
        return false;
    }
    return true;
}

static int by_pos(const void *a, const void *b)
{
    const entry *x = a, *y = b;

    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int by_offset(const void *a, const void *b)
{
    const entry *x = a, *y = b;

    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Parses and validates the header text (n bytes) against a data section
 * of data_len bytes, filling h->root and h->entries (in the header's order);
 * false with TENDO_ERR_FORMAT set. */
static bool parse_header(header *h, const char *text, size_t n, uint64_t data_len)
{
    json_error_t jerr;
    const char *key;
    json_t *value;
    size_t bad = tendo__utf8_prefix((const unsigned char *)text, n), k = 0;
    uint64_t at = 0;

    if (bad < n) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the header is not valid UTF-8 (byte %zu of %zu)", h->path, bad,
                    n);
        return false;
    }
    if (text[0] != '{') {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the header does not start with '{'", h->path);
        return false;
    }
    tendo__json_oom();
    h->root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
    /* jansson reports an allocation failing inside its lexer as a syntax
     * error (an unexpected token): ask whether one failed instead */
    if (tendo__json_oom()) {
        json_decref(h->root);
        h->root = NULL;
        tendo__fail(TENDO_ERR_OOM, load_op, "%s: out of memory reading the header", h->path);
        return false;
    }
    if (!h->root) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the header is not valid JSON: %s (at byte %d)", h->path,
                    jerr.text, jerr.position);
        return false;
    }
    if (!json_is_object(h->root)) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the header is not a JSON object", h->path);
        return false;
    }
    h->entries = tendo__malloc((json_object_size(h->root) + 1) * sizeof *h->entries);
    if (!h->entries) {
        tendo__fail(TENDO_ERR_OOM, load_op, "%s: out of memory reading the header", h->path);
        return false;
    }
    json_object_foreach(h->root, key, value)
    {
        if (!strcmp(key, "__metadata__")) {
            const char *mk;
            json_t *mv;

            if (json_is_null(value)) /* the reference writes an absent map so */
                continue;
            if (!json_is_object(value)) {
                tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: __metadata__ is not an object", h->path);
                return false;
            }
            json_object_foreach(value, mk, mv)
            {
                if (!*mk) { /* a collection has no empty keys (io.h) */
                    tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: __metadata__ has an empty key", h->path);
                    return false;
                }
                if (!json_is_string(mv)) {
                    tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: __metadata__ value of '%s' is not a string",
                                h->path, mk);
                    return false;
                }
            }
            continue;
        }
        if (!*key) { /* a collection has no empty names (io.h) */
            tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: a tensor has an empty name", h->path);
            return false;
        }
        if (!parse_entry(h, key, value, &h->entries[k]))
            return false;
        h->entries[k].pos = k;
        k++;
    }
    h->n = k;
    qsort(h->entries, h->n, sizeof *h->entries, by_offset);
    for (size_t i = 0; i < h->n; i++) {
        const entry *e = &h->entries[i];

        if (e->begin != at) {
            tendo__fail(TENDO_ERR_FORMAT, load_op,
                        "%s: tensor '%s' starts at byte %llu of the data, where %s ends at %llu: %s", h->path,
                        e->name, (unsigned long long)e->begin,
                        i ? "the tensor before it" : "nothing (the data begins)", (unsigned long long)at,
                        e->begin > at ? "a gap" : "an overlap");
            return false;
        }
        at = e->end;
    }
    if (at != data_len) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the tensors cover %llu bytes of a %llu-byte data section",
                    h->path, (unsigned long long)at, (unsigned long long)data_len);
        return false;
    }
    /* the collection keeps the header's order (which a save keeps), not the
     * data's (which a save arranges for alignment) */
    qsort(h->entries, h->n, sizeof *h->entries, by_pos);
    return true;
}

/* Reads exactly n bytes at offset; false with TENDO_ERR_IO. */
static bool read_at(int fd, const char *path, void *buf, size_t n, off_t offset)
{
    char *p = buf;

    while (n > 0) {
        ssize_t r = pread(fd, p, n, offset);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            tendo__fail(TENDO_ERR_IO, load_op, "%s: read failed: %s", path, r < 0 ? strerror(errno) : "early end");
            return false;
        }
        p += r;
        n -= (size_t)r;
        offset += r;
    }
    return true;
}

static void unmap(void *ctx, void *data, size_t nbytes)
{
    (void)ctx;
    munmap(data, nbytes);
}

/* Tensor e of the mapped file `path` (data at byte base of the mapping
 * `map`) on dev: a view of the mapping when aligned, else a copy; NULL with
 * the error set (a bool tensor holding a byte other than 0 or 1 is refused). */
static tendo__tensor *tensor_of(const char *path, const entry *e, tendo__storage *map, uint64_t base,
                                tendo_device dev)
{
    char what[512];
    tendo_dtype dt;
    size_t elsize;
    tendo__tensor *t, *moved;
    uint64_t at = base + e->begin;

    tendo_dtype_of(e->format, &dt);
    elsize = tendo_dtype_size(dt);
    if (map && at % elsize == 0) {
        t = tendo__tensor_over(load_op, map, dt, e->ndim, e->shape, NULL, (int64_t)(at / elsize));
    } else {
        t = tendo__tensor_new(load_op, dt, e->ndim, e->shape, tendo_cpu());
        if (t && e->end > e->begin)
            memcpy(tendo__tensor_data(t), (char *)map->data + at, e->end - e->begin);
    }
    snprintf(what, sizeof what, "%s: tensor '%s'", path, e->name);
    if (t && dt == TENDO_BOOL && /* dense: the tensor's bytes are its elements */
        !tendo__check_bool_bytes(load_op, what, TENDO_ERR_FORMAT, tendo__tensor_data(t), (size_t)t->numel)) {
        tendo__tensor_free(t);
        return NULL;
    }
    if (!t || dev.type == TENDO_CPU)
        return t;
    moved = tendo__move(load_op, t, dev);
    tendo__tensor_free(t);
    return moved;
}

/* tendo_safetensors_load (copy: tendo_safetensors_load_copy). */
static tendo_collection *load(const char *path, tendo_device dev, bool copy)
{
    header h = {path, NULL, NULL, 0};
    tendo_collection *c = NULL;
    tendo__storage *map = NULL;
    unsigned char len8[8];
    char *text = NULL;
    uint64_t n = 0, size;
    struct stat sb;
    int fd;

    load_op = copy ? "safetensors_load_copy" : "safetensors_load";
    tendo__json_setup();
    if (!path) {
        tendo__fail(TENDO_ERR_INVALID_ARG, load_op, "path is NULL");
        return NULL;
    }
    if (!tendo__check_device(load_op, dev))
        return NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tendo__fail(TENDO_ERR_IO, load_op, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        tendo__fail(TENDO_ERR_IO, load_op, "%s: not a regular file", path);
        goto out;
    }
    size = (uint64_t)sb.st_size;
    if (size < 8) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: the file is %llu bytes, too short for the 8-byte header length",
                    path, (unsigned long long)size);
        goto out;
    }
    if (!read_at(fd, path, len8, 8, 0))
        goto out;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | len8[i];
    if (n < 2 || n > MAX_HEADER || n > size - 8) {
        tendo__fail(TENDO_ERR_FORMAT, load_op, "%s: header length %llu is %s", path, (unsigned long long)n,
                    n < 2 ? "below 2" : n > MAX_HEADER ? "over the 100000000-byte limit" : "past the end of the file");
        goto out;
    }
    text = tendo__malloc((size_t)n);
    if (!text) {
        tendo__fail(TENDO_ERR_OOM, load_op, "%s: out of memory reading the header", path);
        goto out;
    }
    if (!read_at(fd, path, text, (size_t)n, 8) || !parse_header(&h, text, (size_t)n, size - 8 - n))
        goto out;
    if (size > 8 + n && copy) {
        /* the whole file read once into memory of its own: nothing refers
         * to the file after this, whatever happens to it */
        map = tendo__storage_new(load_op, (size_t)size, tendo_cpu());
        if (!map || !read_at(fd, path, map->data, (size_t)size, 0))
            goto out;
    } else if (size > 8 + n) {
        /* private: a write to a tensor copies that page, never reaching the file */
        void *p = MAP_FAILED;

        if (!tendo__alloc_ok())
            errno = ENOMEM;
        else
            p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED && errno == ENOMEM) {
            tendo__fail(TENDO_ERR_OOM, load_op, "%s: out of memory mapping the file", path);
            goto out;
        } else if (p == MAP_FAILED) {
            tendo__fail(TENDO_ERR_IO, load_op, "%s: mmap failed: %s", path, strerror(errno));
            goto out;
        }
        map = tendo__storage_wrap(load_op, p, (size_t)size, tendo_cpu(), unmap, NULL);
        if (!map) {
            munmap(p, (size_t)size);
            goto out;
        }
    }
    c = tendo__collection_new(load_op);
    if (!c)
        goto out;
    {
        const char *key;
        json_t *value;

        json_object_foreach(json_object_get(h.root, "__metadata__"), key, value)
        {
            if (tendo__collection_set_metadata(c, load_op, key, json_string_value(value)) != TENDO_OK)
                goto fail;
        }
    }
    for (size_t i = 0; i < h.n; i++) {
        const entry *e = &h.entries[i];
        tendo__tensor *t;
        tendo_dtype dt;

        /* a dtype of the format this build lacks: the other tensors still
         * load, and asking for this one says why it is not there */
        if (!tendo_dtype_of(e->format, &dt)) {
            if (tendo__collection_take_missing(c, load_op, e->name, e->format, e->ndim, e->shape) != TENDO_OK)
                goto fail;
            continue;
        }
        t = tensor_of(path, e, map, 8 + n, dev);
        if (!t || tendo__collection_take(c, load_op, e->name, t) != TENDO_OK)
            goto fail;
    }
    goto out;
fail:
    tendo_collection_free(c);
    c = NULL;
out:
    tendo__storage_release(map); /* the tensors hold their own references */
    json_decref(h.root);
    free(h.entries);
    free(text);
    close(fd);
    return c;
}

tendo_collection *tendo_safetensors_load(const char *path, tendo_device dev) { return load(path, dev, false); }

tendo_collection *tendo_safetensors_load_copy(const char *path, tendo_device dev) { return load(path, dev, true); }

/* The header text being built: jansson is not used for it, because its
 * json_dumps drops an object key whose allocation fails and still returns
 * the rest, which a save would then write as a file that does not load. */
typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} text_buf;

static void put(text_buf *b, const char *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *s;

        while (cap < b->len + n + 1)
            cap *= 2;
        if (!(s = tendo__realloc(b->s, cap))) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void put_str(text_buf *b, const char *s) { put(b, s, strlen(s)); }

/* s as a JSON string, escaped as jansson's json_dumps escapes it (s is
 * valid UTF-8, checked by the caller). */
static void put_json_string(text_buf *b, const char *s)
{
    put(b, "\"", 1);
    for (const char *run = s;; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];

        if (c && c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(b, run, (size_t)(s - run));
        if (!c)
            break;
        switch (c) {
        case '"': put_str(b, "\\\""); break;
        case '\\': put_str(b, "\\\\"); break;
        case '\b': put_str(b, "\\b"); break;
        case '\f': put_str(b, "\\f"); break;
        case '\n': put_str(b, "\\n"); break;
        case '\r': put_str(b, "\\r"); break;
        case '\t': put_str(b, "\\t"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", c);
            put_str(b, esc);
        }
        run = s + 1;
    }
    put(b, "\"", 1);
}

static void put_uint(text_buf *b, uint64_t v)
{
    char num[24];

    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    put_str(b, num);
}

static bool is_utf8(const char *s) { return tendo__utf8_prefix((const unsigned char *)s, strlen(s)) == strlen(s); }

/* The header JSON for c's tensors (with their byte offsets) and metadata,
 * compact, keys in c's order (metadata first), as a string the caller
 * frees; NULL with the error set. */
static char *header_json(const char *op, const char *path, const tendo_collection *c, const uint64_t *begin)
{
    int64_t count = tendo_collection_count(c), nmeta = tendo_collection_metadata_count(c);
    text_buf b = {NULL, 0, 0, false};

    put(&b, "{", 1);
    if (nmeta > 0) {
        put_str(&b, "\"__metadata__\":{");
        for (int64_t i = 0; i < nmeta; i++) {
            const char *k = tendo_collection_metadata_key(c, i), *v = tendo_collection_metadata(c, k);

            if (!is_utf8(k) || !is_utf8(v)) {
                tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s: metadata '%s' is not valid UTF-8", path, k);
                goto fail;
            }
            put_str(&b, i ? "," : "");
            put_json_string(&b, k);
            put(&b, ":", 1);
            put_json_string(&b, v);
        }
        put(&b, "}", 1);
    }
    for (int64_t i = 0; i < count; i++) {
        const tendo__tensor *t = (const tendo__tensor *)(const void *)tendo_collection_at(c, i);
        const char *name = tendo_collection_name(c, i);
        uint64_t nbytes = (uint64_t)t->numel * tendo_dtype_size(t->dtype);

        if (!strcmp(name, "__metadata__")) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s: a tensor cannot be called __metadata__", path);
            goto fail;
        }
        if (!is_utf8(name)) {
            tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s: tensor name '%s' is not valid UTF-8", path, name);
            goto fail;
        }
        put_str(&b, i || nmeta > 0 ? "," : "");
        put_json_string(&b, name);
        put_str(&b, ":{\"dtype\":");
        put_json_string(&b, format_of(t->dtype));
        put_str(&b, ",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            put_str(&b, d ? "," : "");
            put_uint(&b, (uint64_t)t->shape[d]);
        }
        put_str(&b, "],\"data_offsets\":[");
        put_uint(&b, begin[i]);
        put(&b, ",", 1);
        put_uint(&b, begin[i] + nbytes);
        put_str(&b, "]}");
    }
    put(&b, "}", 1);
    if (!b.oom)
        return b.s;
    tendo__fail(TENDO_ERR_OOM, op, "%s: out of memory building the header", path);
fail:
    free(b.s);
    return NULL;
}

tendo_status tendo_safetensors_save(const char *path, const tendo_collection *c)
{
    static const char op[] = "safetensors_save";
    static const char spaces[8] = "       ";
    int64_t count, *order;
    uint64_t *begin, at = 0;
    char *text;
    size_t len, pad;
    unsigned char len8[8];
    tendo__outfile f;

    if (!path)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "path is NULL");
    if (!c)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "collection argument is NULL");
    count = tendo_collection_count(c);
    for (int64_t i = 0; i < count; i++) {
        const tendo__tensor *t = (const tendo__tensor *)(const void *)tendo_collection_at(c, i);

        if (!t) /* a tensor of a dtype this build lacks: nothing to write */
            return tendo__fail(TENDO_ERR_UNSUPPORTED, op,
                               "%s: tensor '%s' has a dtype this build of tendo lacks: there is nothing to save",
                               path, tendo_collection_name(c, i));
        if (!format_of(t->dtype)[0])
            return tendo__fail(TENDO_ERR_UNSUPPORTED, op, "%s: safetensors has no dtype for %s ('%s')", path,
                               tendo_dtype_name(t->dtype), tendo_collection_name(c, i));
    }
    /* the data laid out widest element first (stable), as the reference
     * implementation does: with the header padded to 8 bytes every tensor
     * starts aligned, so a load maps them all in place */
    order = tendo__malloc((size_t)(count ? count : 1) * sizeof *order);
    begin = tendo__malloc((size_t)(count ? count : 1) * sizeof *begin);
    if (!order || !begin) {
        free(order);
        free(begin);
        return tendo__fail(TENDO_ERR_OOM, op, "%s: out of memory building the header", path);
    }
    for (size_t size = 8, k = 0; size >= 1; size /= 2)
        for (int64_t i = 0; i < count; i++) {
            const tendo__tensor *t = (const tendo__tensor *)(const void *)tendo_collection_at(c, i);
            size_t el = tendo_dtype_size(t->dtype);

            if (el == size || (size == 8 && el > 8)) {
                begin[i] = at;
                at += (uint64_t)t->numel * el;
                order[k++] = i;
            }
        }
    text = header_json(op, path, c, begin);
    free(begin);
    if (!text) {
        free(order);
        return tendo_error_status(tendo_last_error());
    }
    len = strlen(text);
    pad = (8 - len % 8) % 8;
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)(len + pad) >> (8 * i));
    if (!tendo__outfile_open(&f, op, path)) {
        free(text);
        free(order);
        return tendo_error_status(tendo_last_error());
    }
    tendo__outfile_write(&f, len8, 8);
    tendo__outfile_write(&f, text, len);
    tendo__outfile_write(&f, spaces, pad);
    free(text);
    for (int64_t k = 0; k < count && !f.failed; k++) {
        const tendo__tensor *t = (const tendo__tensor *)(const void *)tendo_collection_at(c, order[k]);
        tendo__tensor *dense = tendo__host_contiguous(op, t);

        if (!dense) {
            free(order);
            tendo__outfile_abort(&f);
            return tendo_error_status(tendo_last_error());
        }
        tendo__outfile_write(&f, tendo__tensor_data(dense), (size_t)t->numel * tendo_dtype_size(t->dtype));
        tendo__tensor_free(dense);
    }
    free(order);
    return tendo__outfile_commit(&f);
}
