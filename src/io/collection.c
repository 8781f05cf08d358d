/* src/io/collection.c - named tensors plus string metadata, in insertion order.
 *
 * Names are looked up through a jansson object (a hash table) mapping each
 * name to its index, so a model with thousands of tensors loads and is
 * queried in linear time.  Metadata is small: a pair of arrays.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/collection.h"

struct tendo_collection {
    int64_t count, cap;
    char **names;
    tendo__tensor **tensors;
    char **missing; /* per tensor: NULL, or why it is absent (a dtype this build lacks) */
    json_t *index; /* name -> integer index */
    int64_t meta_count, meta_cap;
    char **keys, **values;
};

static tendo_tensor *erase(tendo__tensor *t) { return (tendo_tensor *)(void *)t; }

static bool check_collection(const char *op, const tendo_collection *c)
{
    if (c)
        return true;
    tendo__fail(TENDO_ERR_INVALID_ARG, op, "collection argument is NULL");
    return false;
}

static bool check_string(const char *op, const char *what, const char *s)
{
    if (!s) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is NULL", what);
        return false;
    }
    if (!*s) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "%s is empty", what);
        return false;
    }
    return true;
}

/* Grows the pair of arrays *a, *b (element size sa, sb) to hold n + 1. */
static bool grow(int64_t n, int64_t *cap, void **a, size_t sa, void **b, size_t sb)
{
    int64_t want = *cap ? *cap * 2 : 8;
    void *na, *nb;

    if (n < *cap)
        return true;
    na = tendo__realloc(*a, (size_t)want * sa);
    if (!na)
        return false;
    *a = na;
    nb = tendo__realloc(*b, (size_t)want * sb);
    if (!nb)
        return false;
    *b = nb;
    *cap = want;
    return true;
}

/* Index of the first byte of s[0..n) that is not valid UTF-8, or n. */
size_t tendo__utf8_prefix(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        uint32_t cp;

        if (len == 0 || i + len > n)
            return i;
        cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        /* overlong forms, surrogates and code points past U+10FFFF */
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return i;
        i += len;
    }
    return n;
}

static pthread_once_t json_once = PTHREAD_ONCE_INIT;

/* Whether one of this thread's jansson allocations failed since the last
 * tendo__json_oom() (jansson's parser reports some of those as syntax
 * errors, and a failed one can make a later step quietly skip work). */
static _Thread_local bool json_failed;

static void *json_malloc(size_t n)
{
    void *p = tendo__malloc(n);

    if (!p)
        json_failed = true;
    return p;
}

bool tendo__json_oom(void)
{
    bool failed = json_failed;

    json_failed = false;
    return failed;
}

static void json_alloc_funcs(void) { json_set_alloc_funcs(json_malloc, free); }

void tendo__json_setup(void) { pthread_once(&json_once, json_alloc_funcs); }

tendo_collection *tendo__collection_new(const char *op)
{
    tendo_collection *c;

    tendo__json_setup();
    c = tendo__calloc(1, sizeof *c);

    if (c && !(c->index = json_object())) {
        free(c);
        c = NULL;
    }
    if (!c)
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a collection");
    return c;
}

tendo_collection *tendo_collection_new(void) { return tendo__collection_new("collection_new"); }

void tendo_collection_free(tendo_collection *c)
{
    if (!c)
        return;
    for (int64_t i = 0; i < c->count; i++) {
        free(c->names[i]);
        free(c->missing[i]);
        tendo__tensor_free(c->tensors[i]);
    }
    for (int64_t i = 0; i < c->meta_count; i++) {
        free(c->keys[i]);
        free(c->values[i]);
    }
    free(c->names);
    free(c->missing);
    free(c->tensors);
    free(c->keys);
    free(c->values);
    json_decref(c->index);
    free(c);
}

/* c->missing grown to c->cap entries (before grow() doubles c->cap). */
static bool grow_missing(tendo_collection *c)
{
    int64_t want = c->cap ? c->cap * 2 : 8;
    char **m;

    if (c->count < c->cap)
        return true;
    m = tendo__realloc(c->missing, (size_t)want * sizeof *m);
    if (!m)
        return false;
    c->missing = m;
    return true;
}

/* Appends t (or, t NULL, an absent tensor described by missing, which is
 * taken too) under name. */
static tendo_status take(tendo_collection *c, const char *op, const char *name, tendo__tensor *t, char *missing)
{
    char *copy = NULL;
    json_t *at = NULL;

    if (!check_collection(op, c) || !check_string(op, "name", name)) {
        tendo__tensor_free(t);
        free(missing);
        return TENDO_ERR_INVALID_ARG;
    }
    if (tendo__utf8_prefix((const unsigned char *)name, strlen(name)) < strlen(name)) {
        tendo__tensor_free(t);
        free(missing);
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "name '%s' is not valid UTF-8", name);
    }
    if (json_object_get(c->index, name)) {
        tendo__tensor_free(t);
        free(missing);
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "the collection already has a tensor named '%s'", name);
    }
    if (!grow_missing(c) ||
        !grow(c->count, &c->cap, (void **)&c->names, sizeof *c->names, (void **)&c->tensors,
              sizeof *c->tensors) ||
        !(copy = tendo__strdup(name)) || !(at = json_integer(c->count))) {
        free(copy);
        tendo__tensor_free(t);
        free(missing);
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory adding '%s'", name);
    }
    /* name is valid UTF-8: only running out of memory fails here */
    if (json_object_set_new(c->index, name, at) != 0) { /* at is freed on failure too */
        free(copy);
        tendo__tensor_free(t);
        free(missing);
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory adding '%s'", name);
    }
    c->names[c->count] = copy;
    c->tensors[c->count] = t;
    c->missing[c->count] = missing;
    c->count++;
    return TENDO_OK;
}

tendo_status tendo__collection_take(tendo_collection *c, const char *op, const char *name, tendo__tensor *t)
{
    return take(c, op, name, t, NULL);
}

tendo_status tendo__collection_take_missing(tendo_collection *c, const char *op, const char *name,
                                            const char *dtype, int ndim, const int64_t *shape)
{
    char *why = NULL;
    int n = snprintf(NULL, 0, "tensor '%s' has dtype %s (shape %s), which this build of tendo lacks", name,
                     dtype, tendo__shape_str(ndim, shape).s);

    if (n < 0 || !(why = tendo__malloc((size_t)n + 1)))
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory adding '%s'", name);
    snprintf(why, (size_t)n + 1, "tensor '%s' has dtype %s (shape %s), which this build of tendo lacks", name, dtype,
             tendo__shape_str(ndim, shape).s);
    return take(c, op, name, NULL, why);
}

tendo_status tendo_collection_add(tendo_collection *c, const char *name, const tendo_tensor *t)
{
    static const char op[] = "collection_add";
    const tendo__tensor *src = (const tendo__tensor *)(const void *)t;
    tendo__tensor *alias;

    if (!check_collection(op, c) || !check_string(op, "name", name) || !tendo__check_tensor(op, "t", src))
        return TENDO_ERR_INVALID_ARG;
    if (json_object_get(c->index, name))
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "the collection already has a tensor named '%s'", name);
    /* a new handle on t's storage, its failure reported as this op's */
    alias = tendo__tensor_alias(op, src);
    if (!alias)
        return tendo_error_status(tendo_last_error());
    return tendo__collection_take(c, op, name, alias);
}

int64_t tendo_collection_count(const tendo_collection *c)
{
    return check_collection("collection_count", c) ? c->count : -1;
}

/* i checked against [0, n) for op; false with TENDO_ERR_INVALID_ARG. */
static bool check_index(const char *op, const tendo_collection *c, int64_t i, int64_t n)
{
    if (!check_collection(op, c))
        return false;
    if (i >= 0 && i < n)
        return true;
    tendo__fail(TENDO_ERR_INVALID_ARG, op, "index %lld is out of range [0, %lld)", (long long)i, (long long)n);
    return false;
}

const char *tendo_collection_name(const tendo_collection *c, int64_t i)
{
    return check_index("collection_name", c, i, c ? c->count : 0) ? c->names[i] : NULL;
}

tendo_tensor *tendo_collection_at(const tendo_collection *c, int64_t i)
{
    if (!check_index("collection_at", c, i, c ? c->count : 0))
        return NULL;
    if (c->missing[i]) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, "collection_at", "%s", c->missing[i]);
        return NULL;
    }
    return erase(c->tensors[i]);
}

tendo_tensor *tendo_collection_get(const tendo_collection *c, const char *name)
{
    static const char op[] = "collection_get";
    json_t *at;

    if (!check_collection(op, c) || !check_string(op, "name", name))
        return NULL;
    at = json_object_get(c->index, name);
    if (!at) {
        tendo__fail(TENDO_ERR_INVALID_ARG, op, "no tensor named '%s'", name);
        return NULL;
    }
    if (c->missing[json_integer_value(at)]) {
        tendo__fail(TENDO_ERR_UNSUPPORTED, op, "%s", c->missing[json_integer_value(at)]);
        return NULL;
    }
    return erase(c->tensors[json_integer_value(at)]);
}

tendo_status tendo__collection_set_metadata(tendo_collection *c, const char *op, const char *key,
                                            const char *value)
{
    char *k = NULL, *v;

    if (!check_collection(op, c) || !check_string(op, "key", key))
        return TENDO_ERR_INVALID_ARG;
    if (!value)
        return tendo__fail(TENDO_ERR_INVALID_ARG, op, "value of '%s' is NULL", key);
    v = tendo__strdup(value);
    if (!v)
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    for (int64_t i = 0; i < c->meta_count; i++)
        if (!strcmp(c->keys[i], key)) {
            free(c->values[i]);
            c->values[i] = v;
            return TENDO_OK;
        }
    if (!grow(c->meta_count, &c->meta_cap, (void **)&c->keys, sizeof *c->keys, (void **)&c->values,
              sizeof *c->values) ||
        !(k = tendo__strdup(key))) {
        free(v);
        return tendo__fail(TENDO_ERR_OOM, op, "out of memory");
    }
    c->keys[c->meta_count] = k;
    c->values[c->meta_count] = v;
    c->meta_count++;
    return TENDO_OK;
}

tendo_status tendo_collection_set_metadata(tendo_collection *c, const char *key, const char *value)
{
    return tendo__collection_set_metadata(c, "collection_set_metadata", key, value);
}

int64_t tendo_collection_metadata_count(const tendo_collection *c)
{
    return check_collection("collection_metadata_count", c) ? c->meta_count : -1;
}

const char *tendo_collection_metadata_key(const tendo_collection *c, int64_t i)
{
    return check_index("collection_metadata_key", c, i, c ? c->meta_count : 0) ? c->keys[i] : NULL;
}

const char *tendo_collection_metadata(const tendo_collection *c, const char *key)
{
    if (!check_collection("collection_metadata", c) || !key)
        return NULL;
    for (int64_t i = 0; i < c->meta_count; i++)
        if (!strcmp(c->keys[i], key))
            return c->values[i];
    return NULL;
}
