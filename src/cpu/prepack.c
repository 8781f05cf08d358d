/* src/cpu/prepack.c - the panels tensor_<dt>_prepack keeps with a storage
 * (see prepack.h): a short list per storage, one mutex for all of them,
 * taken only for storages that keep some. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "config.h"
#include "core/pool.h"
#include "cpu/prepack.h"

struct tendo__prepacked {
    tendo__prepacked *next; /* the storage's next entry */
    atomic_int refs;
    tendo__pack_key key;
    uint64_t version;
    tendo__pool_block *blk;
};

static pthread_mutex_t lists = PTHREAD_MUTEX_INITIALIZER;

static bool same_key(const tendo__pack_key *x, const tendo__pack_key *y)
{
    return x->kind == y->kind && x->offset == y->offset && x->k == y->k && x->n == y->n && x->rs == y->rs &&
           x->cs == y->cs;
}

tendo__prepacked *tendo__prepacked_new(const char *op, const tendo__pack_key *key, uint64_t version)
{
    tendo__pool *pool = tendo__pool_of(tendo_cpu());
    tendo__prepacked *e = tendo__malloc(sizeof *e);

    if (!e) {
        tendo__fail(TENDO_ERR_OOM, op, "out of memory for a packed weight's header");
        return NULL;
    }
    if (!pool || !(e->blk = tendo__pool_alloc(pool, op, tendo__pgemm_b_bytes(key->kind, key->k, key->n), 0))) {
        if (!pool)
            tendo__fail(TENDO_ERR_OOM, op, "out of memory for the CPU's memory pool");
        free(e);
        return NULL;
    }
    e->next = NULL;
    atomic_init(&e->refs, 1);
    e->key = *key;
    e->version = version;
    return e;
}

void *tendo__prepacked_panels(const tendo__prepacked *e) { return tendo__pool_block_ptr(e->blk); }

tendo__pack_state tendo__prepacked_find(tendo__storage *s, const tendo__pack_key *key, tendo__prepacked **held)
{
    tendo__pack_state st = TENDO__PACK_ABSENT;

    *held = NULL;
    /* most storages keep nothing: no lock for them (a product racing a
     * prepack of its B may miss the new panels, and packs its own) */
    if (!atomic_load_explicit(&s->prepacked, memory_order_relaxed))
        return st;
    pthread_mutex_lock(&lists);
    for (tendo__prepacked *e = atomic_load_explicit(&s->prepacked, memory_order_relaxed); e; e = e->next)
        if (same_key(&e->key, key)) {
            st = TENDO__PACK_STALE;
            if (e->version == atomic_load_explicit(&s->version, memory_order_relaxed)) {
                atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
                *held = e;
                st = TENDO__PACK_FRESH;
            }
            break;
        }
    pthread_mutex_unlock(&lists);
    return st;
}

void tendo__prepacked_keep(tendo__storage *s, tendo__prepacked *e)
{
    tendo__prepacked *old = NULL, *head, **at;

    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    pthread_mutex_lock(&lists);
    head = atomic_load_explicit(&s->prepacked, memory_order_relaxed);
    for (at = &head; *at; at = &(*at)->next)
        if (same_key(&(*at)->key, &e->key)) {
            old = *at;
            *at = old->next;
            break;
        }
    e->next = head;
    atomic_store_explicit(&s->prepacked, e, memory_order_relaxed);
    pthread_mutex_unlock(&lists);
    tendo__prepacked_drop(old);
}

void tendo__prepacked_drop(tendo__prepacked *e)
{
    /* acq_rel: the last owner frees panels the others read */
    if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    tendo__pool_free(tendo__pool_of(tendo_cpu()), e->blk);
    free(e);
}

void tendo__prepacked_free_all(tendo__storage *s)
{
    /* s's last reference is gone: no product can find its entries now */
    tendo__prepacked *e = atomic_load_explicit(&s->prepacked, memory_order_relaxed), *next;

    atomic_store_explicit(&s->prepacked, NULL, memory_order_relaxed);
    for (; e; e = next) {
        next = e->next;
        tendo__prepacked_drop(e);
    }
}
