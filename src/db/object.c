/* object.c - see object.h. */
#include "object.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../server.h"
#include "db.h"

int list_max_listpack_size = -2;
int hash_max_listpack_entries = 128;
int hash_max_listpack_value = 64;
int set_max_intset_entries = 512;
int set_max_listpack_entries = 128;
int set_max_listpack_value = 64;
int zset_max_listpack_entries = 128;
int zset_max_listpack_value = 64;

/* Indexed by OBJ_* (entry.h: 0..7). */
static const struct type_ops *type_ops_tab[8];

void obj_register_type(uint8_t type, const struct type_ops *ops)
{
    if (type < sizeof(type_ops_tab) / sizeof(type_ops_tab[0]))
        type_ops_tab[type] = ops;
}

const struct type_ops *obj_ops(uint8_t type)
{
    return type < sizeof(type_ops_tab) / sizeof(type_ops_tab[0]) ? type_ops_tab[type] : NULL;
}

struct entry *entry_new_obj(uint8_t type, uint8_t enc, const char *key, size_t klen, void *p, long long expire)
{
    size_t base = obj_entry_base(klen, expire);
    struct entry *e = entry_new(type, key, klen, obj_ptr_room(base), expire);
    entry_set_ptr(e, p, enc);
    return e;
}

struct entry *obj_inline_new(uint8_t type, uint8_t enc, const char *key, size_t klen, long long expire, const void *p,
                             size_t n)
{
    size_t base = obj_entry_base(klen, expire);
    struct entry *e = entry_new(type, key, klen, obj_inline_vlen(base, n), expire);
    e->enc = enc;
    e->flags |= E_INLINE;
    memcpy(entry_val(e), p, n);
    return e;
}

size_t obj_inline_detach(struct entry *e, size_t n)
{
    size_t was = entry_size(e);
    void *p = hk_memdup(entry_val(e), n);
    e->flags &= (uint8_t)~E_INLINE;
    entry_set_ptr(e, p, e->enc); /* the inline value kept room for it */
    return was;
}

int obj_inline_attach(struct entry *e, size_t n, size_t max, size_t was, struct entry **nep)
{
    void *p = entry_ptr(e);
    size_t base = entry_hdr(e) + entry_klen(e);
    struct entry *ne;
    *nep = NULL;
    if (n <= max) {
        /* In place when it fits without wasting much of the room (the
         * allocator is asked only when the known room is too small and
         * not a whole size class already). */
        size_t need = base + obj_inline_vlen(base, n), room = was;
        if (was && need > was && obj_entry_class(was) > was)
            room = hk_usable(e);
        if (need <= room && room - need < 16 + need / 8 && entry_vlen_fits(e, room - base)) {
            memcpy(entry_val(e), p, n);
            entry_set_vlen(e, room - base);
            e->flags |= E_INLINE;
            return 1;
        }
        if (obj_inline_pays(base, n, max)) {
            ne = obj_inline_new(e->type, e->enc, entry_key(e), entry_klen(e), entry_expire(e), p, n);
            goto out;
        }
    }
    if (was <= obj_entry_class(base + obj_ptr_room(base)))
        return 0;
    /* Stays a pointer, in an entry still sized for the inline value it
     * held: a fresh one takes over p (e lets go of it). */
    ne = entry_new_obj(e->type, e->enc, entry_key(e), entry_klen(e), p, entry_expire(e));
    entry_set_ptr(e, NULL, e->enc);
out:
    entry_set_lru(ne, entry_lru(e));
    *nep = ne;
    return 0;
}

const char *obj_enc_name(const struct entry *e)
{
    switch (e->enc) {
    case ENC_RAW: return "raw";
    case ENC_INT: return "int";
    case ENC_HT: return "hashtable";
    case ENC_INTSET: return "intset";
    case ENC_SKIPLIST: return "skiplist";
    case ENC_EMBSTR: return "embstr";
    case ENC_QUICKLIST: return "quicklist";
    case ENC_LISTPACK: return "listpack";
    case ENC_LISTPACK_EX: return "listpackex";
    case ENC_STREAM: return "stream";
    default: return "unknown";
    }
}

size_t obj_len(struct entry *e)
{
    const struct type_ops *o = obj_ops(e->type);
    return o && o->len ? o->len(entry_ptr(e), e->enc) : 0;
}

/* ------------------------------------------------------------ lazy free ---
 * One thread, one mutex-protected FIFO of jobs: a value (type, enc,
 * pointer) or, for FLUSHALL/FLUSHDB ASYNC, an array of detached slot
 * tables.  Workers push under the mutex and signal; the thread pops and
 * frees with no lock held.  The queue is the only shared state: owner =
 * the lazy-free thread once a job is pushed. */
enum { LF_JOB_VALUE, LF_JOB_TABLES };
struct lf_item {
    struct lf_item *next;
    void *p;                  /* the value, or the struct table *[n] */
    size_t n;                 /* LF_JOB_TABLES: tables in p */
    unsigned long long nkeys; /* LF_JOB_TABLES: keys they hold */
    uint8_t type, enc, kind;
};

static pthread_mutex_t lf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lf_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t lf_idle = PTHREAD_COND_INITIALIZER;
static struct lf_item *lf_head, *lf_tail;
static int lf_stop, lf_busy;
static atomic_int lf_running; /* read by any thread freeing a value */
static pthread_t lf_tid;
static atomic_ullong lf_pending, lf_done;

static void free_now(uint8_t type, uint8_t enc, void *p)
{
    const struct type_ops *o = obj_ops(type);
    if (o && o->free)
        o->free(p, enc);
}

_Thread_local int lazyfree_ctx;

/* A FLUSH ASYNC job: free every table and the keys in it.  The pending
 * count goes down table by table (INFO shows the progress); Redis counts
 * a database freed in the background as its number of keys. */
static void free_tables(struct lf_item *it)
{
    struct table **tabs = it->p;
    unsigned long long left = it->nkeys;
    for (size_t i = 0; i < it->n; i++) {
        unsigned long long k = tabs[i]->used < left ? tabs[i]->used : left;
        table_free(tabs[i], entry_free);
        left -= k;
        atomic_fetch_sub(&lf_pending, k);
        atomic_fetch_add(&lf_done, k);
        mem_publish();
    }
    atomic_fetch_sub(&lf_pending, left);
    atomic_fetch_add(&lf_done, left);
    hk_free(tabs);
}

static void *lf_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hotkv-lazyfree");
    mem_thread_register();
    lazyfree_ctx = LF_NEVER; /* what it frees, it frees now (values of flushed keys) */
    pthread_mutex_lock(&lf_lock);
    for (;;) {
        while (!lf_head && !lf_stop)
            pthread_cond_wait(&lf_cond, &lf_lock);
        if (!lf_head && lf_stop)
            break;
        struct lf_item *it = lf_head;
        lf_head = it->next;
        if (!lf_head)
            lf_tail = NULL;
        lf_busy = 1;
        pthread_mutex_unlock(&lf_lock);
        if (it->kind == LF_JOB_TABLES) {
            free_tables(it);
        } else {
            free_now(it->type, it->enc, it->p);
            atomic_fetch_sub(&lf_pending, 1);
            atomic_fetch_add(&lf_done, 1);
        }
        hk_free(it);
        mem_publish(); /* what it freed reaches the shared total (base/mem.h) */
        slab_thread_idle(); /* its slab heap back to the pool (base/slab.h) */
        pthread_mutex_lock(&lf_lock);
        lf_busy = 0;
        if (!lf_head)
            pthread_cond_broadcast(&lf_idle);
    }
    pthread_mutex_unlock(&lf_lock);
    mem_thread_unregister();
    return NULL;
}

void lazyfree_start(void)
{
    if (lf_running)
        return;
    lf_stop = 0;
    if (pthread_create(&lf_tid, NULL, lf_main, NULL) != 0) {
        log_msg(LL_WARNING, "Cannot start the lazy-free thread: freeing inline");
        return;
    }
    lf_running = 1;
}

void lazyfree_stop(void)
{
    if (!lf_running)
        return;
    pthread_mutex_lock(&lf_lock);
    lf_stop = 1;
    pthread_cond_signal(&lf_cond);
    pthread_mutex_unlock(&lf_lock);
    pthread_join(lf_tid, NULL);
    lf_running = 0;
}

void lazyfree_drain(void)
{
    if (!lf_running)
        return;
    pthread_mutex_lock(&lf_lock);
    while (lf_head || lf_busy)
        pthread_cond_wait(&lf_idle, &lf_lock);
    pthread_mutex_unlock(&lf_lock);
}

unsigned long long lazyfree_pending(void)
{
    return atomic_load(&lf_pending);
}

unsigned long long lazyfreed_objects(void)
{
    return atomic_load(&lf_done);
}

void lazyfree_reset_stats(void)
{
    atomic_store(&lf_done, 0);
}

static void lf_push(struct lf_item *it)
{
    it->next = NULL;
    pthread_mutex_lock(&lf_lock);
    if (lf_tail)
        lf_tail->next = it;
    else
        lf_head = it;
    lf_tail = it;
    pthread_cond_signal(&lf_cond);
    pthread_mutex_unlock(&lf_lock);
}

void lazyfree_tables(struct table **tabs, size_t n, unsigned long long nkeys)
{
    struct lf_item *it = hk_calloc(sizeof(*it));
    it->kind = LF_JOB_TABLES;
    it->p = tabs;
    it->n = n;
    it->nkeys = nkeys;
    atomic_fetch_add(&lf_pending, nkeys);
    if (!lf_running) { /* no thread: free here, counted the same way */
        int lf = lazyfree_enter(LF_NEVER);
        free_tables(it);
        lazyfree_leave(lf);
        hk_free(it);
        return;
    }
    lf_push(it);
}

void db_flush_lazy(int from, int to)
{
    size_t n = 0, cap = 64;
    unsigned long long nkeys = 0;
    struct table **tabs = hk_malloc(sizeof(*tabs) * cap);
    for (int d = from; d < to; d++) {
        for (unsigned s = 0; s < NSLOTS; s++) {
            struct table *t = db_detach(d, s);
            if (!t)
                continue;
            if (n == cap) {
                cap *= 2;
                tabs = hk_realloc(tabs, sizeof(*tabs) * cap);
            }
            tabs[n++] = t;
            nkeys += t->used;
        }
    }
    if (n)
        lazyfree_tables(tabs, n, nkeys);
    else
        hk_free(tabs);
}

/* The lazyfree-lazy-* config that applies to the current free. */
static int lazy_wanted(void)
{
    switch (lazyfree_ctx) {
    case LF_ALWAYS: return 1;
    case LF_NEVER: return 0;
    case LF_USER_DEL: return __atomic_load_n(&cfg.lazyfree_lazy_user_del, __ATOMIC_RELAXED);
    case LF_EXPIRE: return __atomic_load_n(&cfg.lazyfree_lazy_expire, __ATOMIC_RELAXED);
    case LF_EVICT: return __atomic_load_n(&cfg.lazyfree_lazy_eviction, __ATOMIC_RELAXED);
    default: return __atomic_load_n(&cfg.lazyfree_lazy_server_del, __ATOMIC_RELAXED);
    }
}

void obj_free_value(uint8_t type, uint8_t enc, void *p)
{
    const struct type_ops *o = obj_ops(type);
    if (!p || !o || !o->free)
        return;
    if (lf_running && lazy_wanted() && o->effort && o->effort(p, enc) > LAZYFREE_THRESHOLD) {
        struct lf_item *it = hk_calloc(sizeof(*it));
        it->kind = LF_JOB_VALUE;
        it->p = p;
        it->type = type;
        it->enc = enc;
        atomic_fetch_add(&lf_pending, 1);
        lf_push(it);
        return;
    }
    free_now(type, enc, p);
}
