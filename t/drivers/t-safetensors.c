/* t/drivers/t-safetensors.c - safetensors load/save and collections: round trips of
 * every dtype and layout, the reference byte layout, zero-copy loading and
 * the mapping's lifetime, all-or-nothing saves, and a corpus of malformed
 * files (each must fail with TENDO_ERR_FORMAT and a message naming the
 * fault).
 *
 *   t-safetensors              run the tests
 *   t-safetensors check DIR    t/interop/t-safetensors-py.sh's half: load DIR/py.safetensors
 *                              (written by the Python package), check its values, and
 *                              write DIR/tendo.safetensors and DIR/resaved.safetensors
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/internal.h"
#include "tap.h"
#include "tendo.h"

static char dir[] = "/tmp/tendo-st-XXXXXX";

static const char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;

    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static const char *msg(void) { return tendo_error_message(tendo_last_error()); }
static tendo_status status(void) { return tendo_error_status(tendo_last_error()); }

/* Writes a safetensors file from a header string (padded to a multiple of
 * 8 with spaces) and n data bytes. */
static void write_st(const char *name, const char *json, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    size_t len = strlen(json), pad = (8 - len % 8) % 8;
    unsigned char l8[8];

    if (!f)
        bail("cannot write %s", path_of(name));
    for (int i = 0; i < 8; i++)
        l8[i] = (unsigned char)((uint64_t)(len + pad) >> (8 * i));
    fwrite(l8, 1, 8, f);
    fputs(json, f);
    fprintf(f, "%*s", (int)pad, "");
    if (n)
        fwrite(data, 1, n, f);
    fclose(f);
}

static void write_bytes(const char *name, const void *p, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");

    if (!f || (n && fwrite(p, 1, n, f) != n))
        bail("cannot write %s", path_of(name));
    fclose(f);
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *p;
    long len;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc((size_t)len + 1);
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* True when a and b have the same dtype, shape and elements, bit for bit. */
static bool same_tensor(const tendo_tensor *a, const tendo_tensor *b)
{
    tendo_tensor *ca, *cb;
    bool same;

    if (!a || !b || tendo_tensor_dtype(a) != tendo_tensor_dtype(b) || tendo_tensor_ndim(a) != tendo_tensor_ndim(b))
        return false;
    for (int d = 0; d < tendo_tensor_ndim(a); d++)
        if (tendo_tensor_shape(a)[d] != tendo_tensor_shape(b)[d])
            return false;
    ca = tendo_tensor_to_dtype(a, tendo_tensor_dtype(a));
    cb = tendo_tensor_to_dtype(b, tendo_tensor_dtype(b));
    same = ca && cb &&
           memcmp(tendo_tensor_data(ca), tendo_tensor_data(cb),
                  (size_t)tendo_tensor_numel(a) * tendo_dtype_size(tendo_tensor_dtype(a))) == 0;
    tendo_tensor_free(ca);
    tendo_tensor_free(cb);
    return same;
}

/* Number of lines of /proc/self/maps that map path. */
static int mappings_of(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strstr(line, path))
            n++;
    fclose(f);
    return n;
}

/* Adds, for dtype `name`, five layouts of base converted to it. */
#define ADD_LAYOUTS(name, NAME, ct)                                                                      \
    static void add_layouts_##name(tendo_collection *c, const tensor_f32 *base)                            \
    {                                                                                                    \
        tensor_##name *x = tensor_f32_to_##name(base);                                                   \
        tensor_##name *views[5] = {                                                                      \
            tensor_##name##_alias_for_test(x), tensor_transpose(x, 0, 2), tensor_slice(x, 1, 0, 4, 2),   \
            tensor_##name##_full(0, NULL, 2.5, tendo_cpu()), tensor_##name##_zeros(TENDO_SHAPE(0, 3), tendo_cpu())}; \
        static const char *kinds[5] = {"contiguous", "transposed", "sliced", "0-d", "empty"};           \
        char key[64];                                                                                    \
                                                                                                         \
        for (int i = 0; i < 5; i++) {                                                                    \
            snprintf(key, sizeof key, "%s.%s", #name, kinds[i]);                                         \
            if (tendo_collection_add(c, key, tensor_erase(views[i])) != TENDO_OK)                        \
                bail("collection_add %s: %s", key, msg());                                               \
            tensor_free(views[i]);                                                                       \
        }                                                                                                \
        tensor_free(x);                                                                                  \
    }
#define ALIAS_FN(name, NAME, ct)                                                                         \
    static tensor_##name *tensor_##name##_alias_for_test(tensor_##name *t)                               \
    {                                                                                                    \
        return tendo_as_##name(tendo_tensor_alias(tensor_erase(t)));                                     \
    }
TENDO_FOREACH_DTYPE(ALIAS_FN)
TENDO_FOREACH_DTYPE(ADD_LAYOUTS)

static void test_roundtrip(void)
{
    tensor_f32 *base = tensor_f32_randn(TENDO_SHAPE(3, 4, 5), 7, tendo_cpu());
    tendo_collection *c = tendo_collection_new(), *back;
    const tendo__tensor *first;
    bool all_same = true, shared = true, all_named = true;
    char *bytes;
    size_t n;
    uint64_t hlen = 0;

#define ADD(name, NAME, ct) add_layouts_##name(c, base);
    TENDO_FOREACH_DTYPE(ADD)
#undef ADD
    ok(tendo_collection_set_metadata(c, "format", "pt") == TENDO_OK &&
           tendo_collection_set_metadata(c, "note", "r\xc3\xa9sum\xc3\xa9 \"quoted\"\n") == TENDO_OK &&
           tendo_collection_set_metadata(c, "format", "np") == TENDO_OK && tendo_collection_metadata_count(c) == 2,
       "metadata: two keys, the second set of 'format' replacing the first");
    ok(tendo_safetensors_save(path_of("rt.safetensors"), c) == TENDO_OK, "save %lld tensors of every dtype",
       (long long)tendo_collection_count(c));
    back = tendo_safetensors_load(path_of("rt.safetensors"), tendo_cpu());
    ok(back && tendo_collection_count(back) == tendo_collection_count(c), "it loads back with %lld tensors",
       (long long)tendo_collection_count(c));
    if (!back)
        diag("%s", msg());
    for (int64_t i = 0; back && i < tendo_collection_count(c); i++) {
        const char *name = tendo_collection_name(c, i);

        all_named &= !strcmp(name, tendo_collection_name(back, i));
        all_same &= same_tensor(tendo_collection_at(c, i), tendo_collection_get(back, name));
    }
    ok(back && all_named, "  in the order they were saved");
    ok(back && all_same, "  every dtype x {contiguous, transposed, sliced, 0-d, empty}: dtype, shape, bits");
    ok(back && !strcmp(tendo_collection_metadata(back, "format"), "np") &&
           !strcmp(tendo_collection_metadata(back, "note"), "r\xc3\xa9sum\xc3\xa9 \"quoted\"\n") &&
           tendo_collection_metadata(back, "absent") == NULL,
       "  with the metadata (UTF-8, quotes and newlines survive)");
    first = back ? (const tendo__tensor *)(const void *)tendo_collection_at(back, 0) : NULL;
    for (int64_t i = 0; back && i < tendo_collection_count(back); i++)
        if (tendo_tensor_numel(tendo_collection_at(back, i)) > 0)
            shared &= ((const tendo__tensor *)(const void *)tendo_collection_at(back, i))->storage == first->storage;
    ok(back && shared && first->storage->release != NULL, "  every tensor is a view of one mapping (no copy)");
    ok(back && mappings_of(path_of("rt.safetensors")) > 0, "  the file is mapped while the collection lives");

    bytes = read_all(path_of("rt.safetensors"), &n);
    for (int i = 7; bytes && i >= 0; i--)
        hlen = hlen << 8 | (unsigned char)bytes[i];
    ok(bytes && hlen % 8 == 0 && 8 + hlen <= n && bytes[8] == '{' && bytes[8 + hlen - 1] != '\0' &&
           !strncmp(bytes + 8, "{\"__metadata__\":{\"format\":\"np\"", 30),
       "the header is little-endian length, JSON with __metadata__ first, padded to a multiple of 8");
    if (bytes) {
        size_t end = 8 + (size_t)hlen;

        while (end > 8 && bytes[end - 1] == ' ')
            end--;
        ok(bytes[end - 1] == '}', "  the padding is spaces after the closing brace");
    }
    free(bytes);

    {
        tendo_tensor *keep = tendo_tensor_alias(tendo_collection_get(back, "f32.transposed"));
        tendo_tensor *want = tendo_tensor_alias(tendo_collection_get(c, "f32.transposed"));
        tensor_f32 *w = NULL;

        tendo_collection_free(back);
        ok(keep && same_tensor(keep, want) && mappings_of(path_of("rt.safetensors")) > 0,
           "a tensor kept past the collection still reads the mapping");
        /* a write lands in a private copy of the page, never in the file */
        w = tendo_as_f32(keep);
        ok(w && (tensor_data(w)[0] = 99.0f) == 99.0f && tensor_data(w)[0] == 99.0f, "  and can be written");
        tendo_tensor_free(keep);
        ok(mappings_of(path_of("rt.safetensors")) == 0, "  freeing the last view unmaps the file");
        back = tendo_safetensors_load(path_of("rt.safetensors"), tendo_cpu());
        ok(back && same_tensor(tendo_collection_get(back, "f32.transposed"), want),
           "  and the write did not reach the file");
        tendo_tensor_free(want);
    }
    tendo_collection_free(back);
    tendo_collection_free(c);
    tensor_free(base);
}

static void test_unaligned(void)
{
    /* 3 f16 (6 bytes), then an f32 at data offset 6: not 4-byte aligned
     * (the header is padded to 8, so the file offset is 2 mod 4) */
    static const char json[] = "{\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,6]},"
                               "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[6,14]}}";
    unsigned char data[14] = {0x00, 0x3c, 0x00, 0x40, 0x00, 0x42}; /* f16 1, 2, 3 */
    float f[2] = {1.5f, -2.25f};
    tendo_collection *c;
    tendo_tensor *t;

    memcpy(data + 6, f, 8);
    write_st("unaligned.safetensors", json, data, sizeof data);
    c = tendo_safetensors_load(path_of("unaligned.safetensors"), tendo_cpu());
    ok(c && (t = tendo_collection_get(c, "f")) && ((const float *)tendo_tensor_data(t))[0] == 1.5f &&
           ((const float *)tendo_tensor_data(t))[1] == -2.25f && (uintptr_t)tendo_tensor_data(t) % 4 == 0,
       "an f32 tensor at an unaligned offset is copied to aligned memory, values intact");
#ifdef TENDO_HAVE_F16 /* a build may leave f16 out (--enable-dtypes) */
    ok(c && (t = tendo_collection_get(c, "h")) && tendo_f16_to_f32(((const tendo_f16 *)tendo_tensor_data(t))[2]) == 3.0f,
       "  the aligned f16 before it is read in place");
#else
    ok(c && !tendo_collection_get(c, "h") && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "  the f16 before it is refused by a build without f16: %s", msg());
#endif
    tendo_collection_free(c);
}

/* Loads the file and checks it fails with `want` and a message holding
 * `needle` (and the file's name). */
static void bad(const char *name, tendo_status want, const char *needle, const char *what)
{
    tendo_collection *c = tendo_safetensors_load(path_of(name), tendo_cpu());

    ok(!c && status() == want && strstr(msg(), needle) && strstr(msg(), name), "%s: %s", what, msg());
    tendo_collection_free(c);
}

static void test_malformed(void)
{
    /* malformed (or unsupported) files made from a header and the first
     * bytes of d: name, the error, data bytes, header, what the message
     * must say, what the case is */
    static const struct {
        const char *name;
        tendo_status status;
        size_t nbytes;
        const char *header, *needle, *what;
    } corpus[] = {
        {"overlap.safetensors", TENDO_ERR_FORMAT, 12,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         "an overlap", "overlapping offsets"},
        {"gap.safetensors", TENDO_ERR_FORMAT, 12,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
         "a gap", "a gap between offsets"},
        {"late.safetensors", TENDO_ERR_FORMAT, 8,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         "a gap", "data that does not start at 0"},
        {"size.safetensors", TENDO_ERR_FORMAT, 8,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
         "hold 8 bytes, but F32 [3] needs 12", "byte length != numel x size"},
        {"back.safetensors", TENDO_ERR_FORMAT, 8,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}",
         "end before they begin", "offsets that run backwards"},
        {"unknown.safetensors", TENDO_ERR_FORMAT, 8,
         "{\"x\":{\"dtype\":\"Q7\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         "unknown dtype \"Q7\"", "an unknown dtype"},
        {"f4.safetensors", TENDO_ERR_FORMAT, 2,
         "{\"x\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}",
         "do not fill whole bytes", "3 four-bit elements"},
        {"utf8.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         "not valid UTF-8 (byte 3 ", "a non-UTF-8 byte in a name"},
        {"surrogate.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\xed\xa0\x80\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         "not valid UTF-8", "an encoded surrogate"},
        {"dup.safetensors", TENDO_ERR_FORMAT, 8,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         "duplicate", "a duplicate name"},
        {"nojson.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\":{\"dtype\":\"F32\",",
         "not valid JSON", "unterminated JSON"},
        {"trail.safetensors", TENDO_ERR_FORMAT, 0,
         "{} {}",
         "not valid JSON", "JSON followed by more JSON"},
        {"array.safetensors", TENDO_ERR_FORMAT, 0,
         "[1, 2]",
         "does not start with '{'", "a header that is not an object"},
        {"notobj.safetensors", TENDO_ERR_FORMAT, 0,
         "{\"x\":[1,2]}",
         "tensor 'x' is not an object", "a tensor that is not an object"},
        {"noshape.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}",
         "\"shape\"", "a tensor without a shape"},
        {"neg.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}",
         "shape entry 0 is not an integer >= 0", "a negative size"},
        {"float.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}",
         "shape entry 0", "a size written as a float"},
        {"offs3.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}",
         "data_offsets is not [begin, end]", "three data_offsets"},
        {"meta.safetensors", TENDO_ERR_FORMAT, 0,
         "{\"__metadata__\":{\"k\":1}}",
         "value of 'k' is not a string", "a metadata value that is a number"},
        {"meta2.safetensors", TENDO_ERR_FORMAT, 0,
         "{\"__metadata__\":[]}",
         "__metadata__ is not an object", "metadata that is an array"},
        {"nul.safetensors", TENDO_ERR_FORMAT, 4,
         "{\"x\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         "not valid JSON", "a NUL escaped into a name"},
    };
    float d[6] = {1, 2, 3, 4, 5, 6};
    char *valid;
    size_t n, fails = 0, wrong = 0;
    char big[64];
    char *dims;

    /* a valid two-tensor file, then every proper prefix of it */
    write_st("valid.safetensors",
             "{\"__metadata__\":{\"a\":\"b\"},\"x\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
             "\"y\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[16,24]}}",
             d, 24);
    valid = read_all(path_of("valid.safetensors"), &n);
    if (!valid)
        bail("cannot read back valid.safetensors");
    ok(tendo_collection_count(NULL) == -1, "count of NULL is -1");
    {
        tendo_collection *c = tendo_safetensors_load(path_of("valid.safetensors"), tendo_cpu());
        ok(c && tendo_collection_count(c) == 2, "the hand-made file is valid");
        tendo_collection_free(c);
    }
    for (size_t k = 0; k < n; k++) {
        tendo_collection *c;

        write_bytes("trunc.safetensors", valid, k);
        c = tendo_safetensors_load(path_of("trunc.safetensors"), tendo_cpu());
        fails += !c;
        wrong += c || status() != TENDO_ERR_FORMAT;
        tendo_collection_free(c);
    }
    ok(fails == n && wrong == 0, "each of the %zu truncations fails with TENDO_ERR_FORMAT", n);
    /* a trailing byte after the data */
    {
        char *longer = malloc(n + 1);
        memcpy(longer, valid, n);
        longer[n] = 0;
        write_bytes("long.safetensors", longer, n + 1);
        free(longer);
    }
    bad("long.safetensors", TENDO_ERR_FORMAT, "cover 24 bytes of a 25-byte data section", "a byte after the data");
    /* header lengths that lie */
    valid[0] = (char)0xff;
    valid[1] = (char)0xff;
    write_bytes("lie.safetensors", valid, n);
    bad("lie.safetensors", TENDO_ERR_FORMAT, "past the end of the file", "header length past the end");
    memset(valid, 0, 8);
    valid[0] = 1;
    write_bytes("lie1.safetensors", valid, n);
    bad("lie1.safetensors", TENDO_ERR_FORMAT, "below 2", "header length 1");
    memset(valid, 0, 8);
    valid[3] = 0x10; /* 268435456: over the 100 MB limit */
    write_bytes("lie2.safetensors", valid, n);
    bad("lie2.safetensors", TENDO_ERR_FORMAT, "100000000-byte limit", "header length over 100 MB");
    free(valid);

    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        write_st(corpus[i].name, corpus[i].header, d, corpus[i].nbytes);
        bad(corpus[i].name, corpus[i].status, corpus[i].needle, corpus[i].what);
    }
    snprintf(big, sizeof big, "%lld", 1LL << 40);
    {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"x\":{\"dtype\":\"F32\",\"shape\":[%s,%s,%s],\"data_offsets\":[0,4]}}", big, big, big);
        write_st("overflow.safetensors", json, d, 4);
    }
    bad("overflow.safetensors", TENDO_ERR_FORMAT, "more than 2^63-1 elements", "a shape whose size overflows");
    /* 10^6 dims */
    dims = malloc(2 * 1000000 + 128);
    {
        char *p = dims + sprintf(dims, "{\"x\":{\"dtype\":\"F32\",\"shape\":[1");

        for (int i = 1; i < 1000000; i++, p += 2)
            memcpy(p, ",1", 2);
        strcpy(p, "],\"data_offsets\":[0,4]}}");
    }
    write_st("dims.safetensors", dims, d, 4);
    free(dims);
    bad("dims.safetensors", TENDO_ERR_FORMAT, "1000000 dims", "a 10^6-dim shape");
    write_st("nullmeta.safetensors", "{\"__metadata__\":null}", d, 0);
    {
        tendo_collection *c = tendo_safetensors_load(path_of("nullmeta.safetensors"), tendo_cpu());
        ok(c && tendo_collection_metadata_count(c) == 0, "\"__metadata__\": null is no metadata, as in the reference");
        tendo_collection_free(c);
    }
    write_st("empty.safetensors", "{}", d, 0);
    {
        tendo_collection *c = tendo_safetensors_load(path_of("empty.safetensors"), tendo_cpu());
        ok(c && tendo_collection_count(c) == 0 && tendo_collection_metadata_count(c) == 0,
           "a header of just {} is a valid, empty file");
        tendo_collection_free(c);
    }
    bad("missing.safetensors", TENDO_ERR_IO, "No such file", "a missing file");
    {
        tendo_collection *c = tendo_safetensors_load(dir, tendo_cpu());
        ok(!c && status() == TENDO_ERR_IO && strstr(msg(), "not a regular file"), "a directory: %s", msg());
    }
}

/* Files in dir whose name starts with prefix. */
static int files_starting(const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return n;
}

/* A tensor of a dtype this build lacks (U16 here, which tendo never has;
 * F64 and the others where configure left them out): the file loads, the
 * other tensors are there, and asking for the absent one fails by name. */
static void test_missing_dtype(void)
{
    const char *json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"U16\",\"shape\":[2,2],\"data_offsets\":[8,16]},"
                       "\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[16,24]}}";
    unsigned char data[24] = {0};
    float two[2] = {1.5f, -2.0f}, got[2];
    int64_t seven = 7, got7 = 0;
    tendo_collection *c;
    const char *m;

    memcpy(data, two, 8);
    memcpy(data + 16, &seven, 8);
    write_st("u16.safetensors", json, data, sizeof data);
    c = tendo_safetensors_load(path_of("u16.safetensors"), tendo_cpu());
    ok(c && tendo_collection_count(c) == 3 && !strcmp(tendo_collection_name(c, 1), "b"),
       "a file with a dtype this build lacks (U16) loads: 3 names, in order%s%s", c ? "" : ": ", c ? "" : msg());
    ok(c && tensor_copy_to(tendo_as_f32(tendo_collection_get(c, "a")), got, 2) == TENDO_OK && got[0] == 1.5f &&
           got[1] == -2.0f,
       "  the F32 tensor before it is there");
    ok(c && tensor_copy_to(tendo_as_i64(tendo_collection_at(c, 2)), &got7, 1) == TENDO_OK && got7 == 7,
       "  the I64 tensor after it too");
    ok(c && tendo_collection_get(c, "b") == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
           (m = tendo_error_message(tendo_last_error())) && strstr(m, "'b'") && strstr(m, "U16") &&
           strstr(m, "[2,2]"),
       "  collection_get of it: TENDO_ERR_UNSUPPORTED naming the tensor, dtype and shape: %s",
       tendo_error_message(tendo_last_error()));
    ok(c && tendo_collection_at(c, 1) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
           strstr(tendo_error_message(tendo_last_error()), "'b'"),
       "  collection_at likewise: %s", tendo_error_message(tendo_last_error()));
    ok(c && tendo_safetensors_save(path_of("u16-out.safetensors"), c) == TENDO_ERR_UNSUPPORTED &&
           strstr(tendo_error_message(tendo_last_error()), "'b'") && access(path_of("u16-out.safetensors"), F_OK) != 0,
       "  saving the collection is refused by name, no file left: %s", tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
#ifndef TENDO_HAVE_F64
    write_st("f64.safetensors", "{\"x\":{\"dtype\":\"F64\",\"shape\":[3],\"data_offsets\":[0,24]}}", data, 24);
    c = tendo_safetensors_load(path_of("f64.safetensors"), tendo_cpu());
    ok(c && tendo_collection_get(c, "x") == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
           strstr(tendo_error_message(tendo_last_error()), "F64"),
       "F64, valid but not built: loads, and getting it is refused by name: %s",
       tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
#endif
}

static void test_save_errors(void)
{
    tendo_collection *c = tendo_collection_new();
    tensor_f32 *a = tensor_f32_arange(0, 4, 1, tendo_cpu());
    tendo_tensor *e = tensor_erase(a);
    size_t n0, n1;
    char *before, *after;

    ok(tendo_collection_add(c, "a", e) == TENDO_OK, "add 'a'");
    ok(tendo_collection_add(c, "a", e) == TENDO_ERR_INVALID_ARG && strstr(msg(), "already has a tensor named 'a'") &&
           tendo_collection_count(c) == 1,
       "a duplicate name is refused, the collection unchanged: %s", msg());
    ok(tendo_collection_add(c, "", e) == TENDO_ERR_INVALID_ARG && tendo_collection_add(c, NULL, e) == TENDO_ERR_INVALID_ARG &&
           tendo_collection_add(NULL, "b", e) == TENDO_ERR_INVALID_ARG && tendo_collection_add(c, "b", NULL) == TENDO_ERR_INVALID_ARG,
       "empty or NULL names, collections and tensors are refused");
    ok(tendo_collection_get(c, "zz") == NULL && strstr(msg(), "no tensor named 'zz'"), "get of a missing name: %s",
       msg());
    ok(tendo_collection_at(c, 1) == NULL && strstr(msg(), "out of range") && tendo_collection_name(c, -1) == NULL,
       "indexes out of range: %s", msg());
    ok(tendo_collection_add(c, "bad\xff", e) == TENDO_ERR_INVALID_ARG && strstr(msg(), "UTF-8") &&
           tendo_collection_count(c) == 1,
       "a name that is not UTF-8 is refused: %s", msg());
    ok(tendo_collection_add(c, "__metadata__", e) == TENDO_OK &&
           tendo_safetensors_save(path_of("meta-name.safetensors"), c) == TENDO_ERR_INVALID_ARG &&
           strstr(msg(), "__metadata__") && access(path_of("meta-name.safetensors"), F_OK) != 0,
       "a tensor called __metadata__ cannot be saved, and no file is left: %s", msg());
    tendo_collection_free(c);

    c = tendo_collection_new();
    tendo_collection_add(c, "a", e);
    ok(tendo_safetensors_save(path_of("keep.safetensors"), c) == TENDO_OK, "save a file");
    before = read_all(path_of("keep.safetensors"), &n0);
    /* the target is a directory: refused before anything is written */
    mkdir(path_of("target.safetensors"), 0755);
    ok(tendo_safetensors_save(path_of("target.safetensors"), c) == TENDO_ERR_IO && strstr(msg(), "is a directory") &&
           files_starting("target.safetensors.tmp") == 0,
       "a directory as the target: TENDO_ERR_IO, no temporary file: %s", msg());
    { /* a write that fails midway (a file size limit): the temporary file is removed, the old file kept */
        struct rlimit old, small = {64, 64};
        void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
        if (getrlimit(RLIMIT_FSIZE, &old) != 0 || (small.rlim_max = old.rlim_max, setrlimit(RLIMIT_FSIZE, &small)) != 0)
            bail("cannot limit the file size");
        ok(tendo_safetensors_save(path_of("keep.safetensors"), c) == TENDO_ERR_IO && strstr(msg(), "write") &&
               files_starting("keep.safetensors.tmp") == 0,
           "a failed write reports TENDO_ERR_IO and removes the temporary file: %s", msg());
        setrlimit(RLIMIT_FSIZE, &old);
        signal(SIGXFSZ, was);
    }
    ok(tendo_safetensors_save(path_of("nodir/x.safetensors"), c) == TENDO_ERR_IO && strstr(msg(), "nodir"),
       "a missing directory: %s", msg());
    after = read_all(path_of("keep.safetensors"), &n1);
    ok(before && after && n0 == n1 && !memcmp(before, after, n0), "the earlier file is untouched");
    free(before);
    free(after);
    ok(tendo_safetensors_save(NULL, c) == TENDO_ERR_INVALID_ARG && tendo_safetensors_save("x", NULL) == TENDO_ERR_INVALID_ARG &&
           tendo_safetensors_load(NULL, tendo_cpu()) == NULL,
       "NULL paths and collections are refused");
    ok(tendo_safetensors_load(path_of("keep.safetensors"), tendo_cuda(tendo_cuda_device_count())) == NULL &&
           status() == TENDO_ERR_DEVICE,
       "loading to a GPU that does not exist is TENDO_ERR_DEVICE: %s", msg());
    {
        struct stat sb;
        mode_t mask = umask(022);
        umask(mask);
        ok(stat(path_of("keep.safetensors"), &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask),
           "the saved file has mode 0666 less the umask, like fopen's");
    }
    tendo_collection_free(c);
    tensor_free(a);
}

/* t-safetensors-py.sh's half: py.safetensors holds f32 [2,3,4] = arange/2 - 3,
 * f16 [10] = arange, bf16 [7] = arange, scalar f32 [] = 3.5, empty f16
 * [0,5], and metadata {"framework": "test", "note": "ünïcode"}. */
/* A collection of one f32 tensor of n values from seed. */
static tendo_collection *one_tensor(int64_t n, uint64_t seed)
{
    tendo_collection *c = tendo_collection_new();
    tensor_f32 *t = tensor_f32_randn(TENDO_SHAPE(n), seed, tendo_cpu());
    tendo_tensor *e = tensor_erase(t);

    if (!c || !e || tendo_collection_add(c, "w", e) != TENDO_OK)
        bail("making a collection: %s", msg());
    tendo_tensor_free(e);
    return c;
}

/* The copying load, and what a save does to links, modes and leftovers. */
static void test_files(void)
{
    tendo_collection *c = one_tensor(4096, 11), *c2 = one_tensor(4096, 12), *back, *copy;
    const char *real = path_of("real.safetensors"), *link = path_of("link.safetensors");
    char stale[300], live[300], fresh[300];
    struct stat st;
    pid_t child, holder = -1;
    int up[2], down[2]; /* the lock holder says it holds the lock; the parent says it is done */

    /* load_copy: the same tensors, and the file can go away under them */
    ok(tendo_safetensors_save(real, c) == TENDO_OK, "save a file to load twice");
    back = tendo_safetensors_load(real, tendo_cpu());
    copy = tendo_safetensors_load_copy(real, tendo_cpu());
    ok(back && copy && same_tensor(tendo_collection_get(back, "w"), tendo_collection_get(copy, "w")) &&
           mappings_of(real) == 1,
       "load_copy gives the tensors load gives, with no mapping of its own");
    tendo_collection_free(back);
    ok(truncate(real, 8) == 0 && copy && same_tensor(tendo_collection_at(c, 0), tendo_collection_get(copy, "w")),
       "after the file is truncated, the copied tensors still read their values");
    tendo_collection_free(copy);
    copy = tendo_safetensors_load_copy(real, tendo_cpu());
    ok(!copy && status() == TENDO_ERR_FORMAT && !strcmp(tendo_error_op(tendo_last_error()), "safetensors_load_copy"),
       "load_copy of the truncated file: TENDO_ERR_FORMAT for safetensors_load_copy (%s)", msg());

    /* a save through a symbolic link replaces the file it names, keeping its mode */
    ok(tendo_safetensors_save(real, c) == TENDO_OK && chmod(real, 0600) == 0 && symlink("real.safetensors", link) == 0,
       "a 0600 file, and a symbolic link to it");
    ok(tendo_safetensors_save(link, c2) == TENDO_OK, "save through the link");
    back = tendo_safetensors_load(real, tendo_cpu());
    ok(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    ok(back && same_tensor(tendo_collection_at(c2, 0), tendo_collection_get(back, "w")),
       "the file it names holds what was saved");
    if (stat(real, &st) != 0)
        st.st_mode = 0;
    ok((st.st_mode & 07777) == 0600, "and is still mode 0600 (%o)", (unsigned)(st.st_mode & 07777));
    tendo_collection_free(back);
    ok(unlink(real) == 0 && tendo_safetensors_save(link, c) != TENDO_OK && status() == TENDO_ERR_IO &&
           access(real, F_OK) != 0,
       "a save through a dangling link: TENDO_ERR_IO, nothing written (%s)", msg());

    /* leftovers of a killed save: an unlocked, old one is removed; one whose
     * writer holds its lock is kept even when its pid names no process here
     * (a writer in another PID namespace), and so is one just created */
    child = fork();
    if (child == 0)
        _exit(0);
    if (child < 0 || waitpid(child, NULL, 0) != child)
        bail("fork failed");
    snprintf(stale, sizeof stale, "%s.tmp-%ld-7", path_of("x.safetensors"), (long)child);
    snprintf(live, sizeof live, "%s.tmp-%ld-8", path_of("x.safetensors"), (long)child);
    snprintf(fresh, sizeof fresh, "%s.tmp-%ld-9", path_of("x.safetensors"), (long)child);
    write_bytes("x.safetensors.tmp-1-x", "junk", 4); /* not of the pattern: kept */
    {
        FILE *f1 = fopen(stale, "w"), *f2 = fopen(live, "w"), *f3 = fopen(fresh, "w");
        struct timeval old[2];
        if (!f1 || !f2 || !f3)
            bail("cannot write leftovers");
        fclose(f1);
        fclose(f2);
        fclose(f3);
        gettimeofday(&old[0], NULL);
        old[0].tv_sec -= 60;
        old[1] = old[0];
        if (utimes(stale, old) != 0 || utimes(live, old) != 0)
            bail("cannot age the leftovers");
    }
    if (pipe(up) != 0 || pipe(down) != 0 || (holder = fork()) < 0)
        bail("fork failed");
    if (holder == 0) { /* holds live's lock until the parent is done */
        char ch;
        int fd = open(live, O_RDONLY);
        close(up[0]);
        close(down[1]);
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(up[1], "x", 1) != 1)
            _exit(1);
        (void)!read(down[0], &ch, 1);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    {
        char ch;
        if (read(up[0], &ch, 1) != 1) /* EOF when the holder failed: no hang */
            bail("the lock holder did not start");
    }
    ok(tendo_safetensors_save(path_of("x.safetensors"), c) == TENDO_OK, "save beside leftovers of earlier saves");
    ok(access(stale, F_OK) != 0, "an old leftover whose lock is free was removed");
    ok(access(live, F_OK) == 0, "one whose lock another process holds was kept, whatever its pid says");
    ok(access(fresh, F_OK) == 0 && access(path_of("x.safetensors.tmp-1-x"), F_OK) == 0,
       "one just created, and a name not of the pattern, were kept");
    if (write(down[1], "x", 1) != 1 || waitpid(holder, NULL, 0) != holder)
        bail("the lock holder did not finish");
    close(up[0]);
    close(down[1]);
    unlink(fresh);
    unlink(live);
    tendo_collection_free(c);
    tendo_collection_free(c2);
}

static int check_python(const char *d)
{
    char in[512], out[512], resaved[512];
    tendo_collection *c, *mine;
    tendo_tensor *t;
    bool good = true;

    snprintf(in, sizeof in, "%s/py.safetensors", d);
    snprintf(out, sizeof out, "%s/tendo.safetensors", d);
    snprintf(resaved, sizeof resaved, "%s/resaved.safetensors", d);
    c = tendo_safetensors_load(in, tendo_cpu());
    ok(c != NULL, "tendo loads the file the safetensors package wrote%s%s", c ? "" : ": ", c ? "" : msg());
    if (!c)
        return done_testing();
    t = tendo_collection_get(c, "f32");
    for (int i = 0; t && i < 24; i++)
        good &= ((const float *)tendo_tensor_data(t))[i] == (float)i / 2 - 3;
    ok(t && tendo_tensor_dtype(t) == TENDO_F32 && tendo_tensor_ndim(t) == 3 && tendo_tensor_shape(t)[2] == 4 && good,
       "f32 [2,3,4] has the package's values");
    t = tendo_collection_get(c, "f16");
    good = true;
#ifdef TENDO_HAVE_F16 /* a build may leave f16 and bf16 out (--enable-dtypes) */
    for (int i = 0; t && i < 10; i++)
        good &= tendo_f16_to_f32(((const tendo_f16 *)tendo_tensor_data(t))[i]) == (float)i;
    ok(t && tendo_tensor_dtype(t) == TENDO_F16 && good, "f16 [10] likewise");
#else
    ok(!t && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "f16 [10] is refused by a build without f16: %s", msg());
#endif
    t = tendo_collection_get(c, "bf16");
    good = true;
#ifdef TENDO_HAVE_BF16
    for (int i = 0; t && i < 7; i++)
        good &= tendo_bf16_to_f32(((const tendo_bf16 *)tendo_tensor_data(t))[i]) == (float)i;
    ok(t && tendo_tensor_dtype(t) == TENDO_BF16 && good, "bf16 [7] likewise");
#else
    ok(!t && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "bf16 [7] is refused by a build without bf16: %s", msg());
#endif
    t = tendo_collection_get(c, "scalar");
    ok(t && tendo_tensor_ndim(t) == 0 && ((const float *)tendo_tensor_data(t))[0] == 3.5f, "the 0-d tensor");
    t = tendo_collection_get(c, "empty");
#ifdef TENDO_HAVE_F16
    ok(t && tendo_tensor_numel(t) == 0 && tendo_tensor_shape(t)[1] == 5, "the empty [0,5] f16 tensor");
#else
    ok(!t && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "the empty [0,5] f16 tensor is refused by a build without f16: %s", msg());
#endif
    ok(tendo_collection_metadata(c, "note") && !strcmp(tendo_collection_metadata(c, "note"), "\xc3\xbc" "n" "\xc3\xaf" "code"),
       "the metadata");
#if defined(TENDO_HAVE_BF16) && defined(TENDO_HAVE_F16)
    ok(tendo_safetensors_save(resaved, c) == TENDO_OK, "tendo saves the loaded collection again");
#else /* the f16 and bf16 tensors are names without data here: no re-save */
    ok(tendo_safetensors_save(resaved, c) == TENDO_ERR_UNSUPPORTED && access(resaved, F_OK) != 0,
       "a build without f16 or bf16 refuses to save the loaded collection again, and writes nothing: %s", msg());
#endif

    /* a file of tendo's own making: a transposed view and converted dtypes */
    mine = tendo_collection_new();
    {
        tensor_f32 *a = tensor_f32_arange(0, 6, 1, tendo_cpu());
        tensor_f32 *m = tensor_reshape(a, TENDO_SHAPE(2, 3));
        tensor_f32 *tr = tensor_transpose(m, 0, 1);

        tendo_collection_add(mine, "transposed", tensor_erase(tr));
#if defined(TENDO_HAVE_BF16) && defined(TENDO_HAVE_F16)
        tensor_bf16 *b = tensor_to_bf16(m);
        tensor_f16 *h = tensor_to_f16(tr);
        tendo_collection_add(mine, "bf16", tensor_erase(b));
        tendo_collection_add(mine, "f16", tensor_erase(h));
        tensor_free(b), tensor_free(h);
#endif
        tendo_collection_set_metadata(mine, "written_by", "tendo");
        ok(tendo_safetensors_save(out, mine) == TENDO_OK, "tendo writes a file of its own");
        tensor_free(a), tensor_free(m), tensor_free(tr);
    }
    tendo_collection_free(mine);
    tendo_collection_free(c);
    return done_testing();
}

/* t-safetensors resave IN OUT: loads IN and saves it as OUT (for
 * t/interop/t-safetensors-py.sh); exit status 0 when both worked. */
static int resave(const char *in, const char *out)
{
    tendo_collection *c = tendo_safetensors_load(in, tendo_cpu());
    tendo_status st = c ? tendo_safetensors_save(out, c) : TENDO_ERR_IO;

    if (st != TENDO_OK)
        fprintf(stderr, "resave: %s\n", tendo_error_message(tendo_last_error()));
    tendo_collection_free(c);
    return st == TENDO_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "resave"))
        return resave(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "check")) {
        plan_lazy();
        return check_python(argv[2]);
    }
    if (!mkdtemp(dir))
        bail("mkdtemp failed");
    plan_lazy();
    test_roundtrip();
    test_unaligned();
    test_malformed();
    test_save_errors();
    test_missing_dtype();
    test_files();
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            diag("could not remove %s", dir);
    }
    return done_testing();
}
