/* object.h - the collection value layer shared by every data type.
 *
 * A key's entry (entry.h) holds a string inline, or for a collection a
 * pointer to its structure; entry->enc says which structure.  Each value
 * type (types/: list, hash, set, zset, stream, vset) registers a
 * struct type_ops (types_init(), at start-up) so the generic keyspace code
 * can free, copy (COPY), measure (MEMORY USAGE, lazy-free decisions) and
 * count a value without knowing its layout: db/ never includes types/.
 *
 * Encoding thresholds are the Redis configuration parameters of the same
 * names (config.c registers them); they are plain ints read on every write
 * and changed by CONFIG SET (one word store, see config.h).
 *
 * Lazy free: a value whose free costs more than LAZYFREE_THRESHOLD
 * (type_ops.effort) is handed to the lazy-free thread instead of being
 * freed under the shard lock, so DEL/UNLINK/expiry/overwrite of a huge
 * collection costs the worker O(1).  The lazy-free thread owns what it is
 * given; nothing else references it by then (the entry is gone). */
#ifndef HK_OBJECT_H
#define HK_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/slab.h"
#include "entry.h"

struct type_ops {
    /* Free the structure p of encoding enc (never NULL). */
    void (*free)(void *p, uint8_t enc);
    /* Deep copy (COPY); returns the new structure, same encoding. */
    void *(*dup)(const void *p, uint8_t enc);
    /* Bytes allocated for the structure (allocator usable sizes). */
    size_t (*mem)(const void *p, uint8_t enc);
    /* Number of elements (fields, members, list elements). */
    size_t (*len)(const void *p, uint8_t enc);
    /* Cost of freeing it, in allocations (1 for one-allocation encodings);
     * compared with LAZYFREE_THRESHOLD. */
    size_t (*effort)(const void *p, uint8_t enc);
    /* Hashes only (NULL for other types): the expiry sweeper's call for an
     * entry flagged E_HFE (db.c), types/hash.h's hash_expire_fields. */
    long (*expire_fields)(int db, struct entry *e, unsigned slot, long long now, int *empty);
};

/* Register the ops of a collection type (types_init(), once, before any
 * thread or value exists; read-only afterwards). */
void obj_register_type(uint8_t type, const struct type_ops *ops);
/* The ops of a type; NULL for strings, whose value is inline bytes. */
const struct type_ops *obj_ops(uint8_t type);

/* Encoding thresholds (Redis parameter names and defaults). */
extern int list_max_listpack_size;     /* list-max-listpack-size, -2 */
extern int hash_max_listpack_entries;  /* hash-max-listpack-entries, 128 */
extern int hash_max_listpack_value;    /* hash-max-listpack-value, 64 */
extern int set_max_intset_entries;     /* set-max-intset-entries, 512 */
extern int set_max_listpack_entries;   /* set-max-listpack-entries, 128 */
extern int set_max_listpack_value;     /* set-max-listpack-value, 64 */
extern int zset_max_listpack_entries;  /* zset-max-listpack-entries, 128 */
extern int zset_max_listpack_value;    /* zset-max-listpack-value, 64 */

/* A new entry for a collection: value = the pointer p, encoding enc. */
struct entry *entry_new_obj(uint8_t type, uint8_t enc, const char *key, size_t klen, void *p, long long expire);
/* Point an existing collection entry at a new structure (after a
 * conversion or a realloc that moved it).  Does not free the old one. */
static inline void entry_set_ptr(struct entry *e, void *p, uint8_t enc)
{
    size_t off = entry_ptr_off(e);
    *(void **)((char *)e + off) = p;
    entry_set_vlen(e, off + sizeof(void *) - entry_hdr(e) - entry_klen(e)); /* < 16: fits either header */
    e->enc = enc;
}

/* ------------------------------------------------------- inline values ---
 * A small collection may live inside its key's entry (E_INLINE, entry.h)
 * instead of behind a pointer: one allocation less per key.  These are
 * the sizing rules the type modules share; `base` is always an entry's
 * header plus key length (entry_hdr(e) + entry_klen(e), or obj_entry_base()
 * (+ 8 with a TTL) + klen for an entry about to be made).  The value room
 * of an inline entry always keeps space for the aligned pointer form, so
 * a write can turn it back into a pointer entry in place. */

/* hdr + klen of a new collection entry.  Its value (a pointer's room, or
 * an inline structure of at most a type's cap, 256 bytes) always fits the
 * short header's length, so the key length alone decides the header. */
static inline size_t obj_entry_base(size_t klen, long long expire)
{
    return entry_base_for(klen, 0) + (expire >= 0 ? 8 : 0) + klen;
}

/* The size class hk_malloc gives n bytes: the slab's 16-byte steps for
 * SLAB_MIN..SLAB_MAX (base/slab.h) while it is on, else jemalloc's
 * (x86-64 defaults: 8, 16, then 4 classes per power of two, spaced at
 * least 16).  Also used with other allocators (sanitizer builds): there it
 * only rounds requests up. */
static inline size_t obj_size_class(size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (n - SLAB_MIN <= (size_t)(SLAB_MAX - SLAB_MIN) && __atomic_load_n(&slab_state_, __ATOMIC_RELAXED) > 0)
        return slab_round(n);
#endif
    if (n <= 16)
        return n <= 8 ? 8 : 16;
    size_t g = (size_t)1 << (63 - __builtin_clzll((unsigned long long)(n - 1)));
    size_t sp = g / 4 < 16 ? 16 : g / 4;
    return (n + sp - 1) & ~(sp - 1);
}

/* The same for an entry (hk_malloc_packed: the slab's 8-byte steps). */
static inline size_t obj_entry_class(size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (n - SLAB_MIN <= (size_t)(SLAB_MAX - SLAB_MIN) && __atomic_load_n(&slab_state_, __ATOMIC_RELAXED) > 0)
        return slab_round_packed(n);
#endif
    return obj_size_class(n);
}

/* Value room of the pointer form of an entry with hdr + klen = base
 * (padding to the 8-byte boundary, then the pointer; see entry_ptr_off). */
static inline size_t obj_ptr_room(size_t base)
{
    return ((base + 7) & ~(size_t)7) + sizeof(void *) - base;
}

/* Value bytes an entry with hdr + klen = base needs to hold a structure of
 * n bytes inline, keeping room for the aligned pointer form. */
static inline size_t obj_inline_vlen(size_t base, size_t n)
{
    size_t room = obj_ptr_room(base);
    return n > room ? n : room;
}

/* Is n bytes inline (at most max, the type's cap) no bigger than the
 * pointer form, i.e. entry + structure each rounded to its size class? */
static inline int obj_inline_pays(size_t base, size_t n, size_t max)
{
    return n <= max &&
           obj_entry_class(base + obj_inline_vlen(base, n)) <= obj_entry_class(base + obj_ptr_room(base)) + obj_size_class(n);
}

/* A new inline entry (type, encoding enc) holding a copy of the n-byte
 * structure p; the caller still owns p. */
struct entry *obj_inline_new(uint8_t type, uint8_t enc, const char *key, size_t klen, long long expire, const void *p,
                             size_t n);
/* Make the inline entry e (whose structure is n bytes) an ordinary pointer
 * entry in place: the structure moves to the heap.  Returns e's size
 * before (room a later obj_inline_attach may reuse). */
size_t obj_inline_detach(struct entry *e, size_t n);
/* End of a write to the pointer entry e, whose structure (entry_ptr(e)) is
 * n bytes; was: e's size when it was detached (0: it was a pointer entry
 * already, sized for that); max: the type's inline cap.  Returns 1 when
 * the structure was copied into e in place (e is inline now; the caller
 * frees the old structure).  Else returns 0 and sets *ne to NULL (e stays
 * as it is) or to a new entry, inline or a pointer entry that took over
 * the structure from e, which the caller swaps in for e (db_replace or
 * db_set, which free e and, when ne is inline, the structure with it). */
int obj_inline_attach(struct entry *e, size_t n, size_t max, size_t was, struct entry **ne);

/* Cross-type access, each implemented by its type's file.  Visitors get
 * every element as a string (integers formatted in decimal) and return
 * nonzero to stop early. */
typedef int (*obj_visit_fn)(void *arg, const char *s, size_t len);
typedef int (*zset_visit_fn)(void *arg, const char *s, size_t len, double score);
/* (set_visit: types/set.h; zset_visit: types/zset.h) */
/* (list_visit, list_build: types/list.h; hash_get_field: types/hash.h) */

/* OBJECT ENCODING's name for an entry. */
const char *obj_enc_name(const struct entry *e);
/* Element count of a collection (0 for strings). */
size_t obj_len(struct entry *e);

/* Free a collection structure now or on the lazy-free thread.
 *
 * Whether a big value (effort > LAZYFREE_THRESHOLD) goes to the lazy-free
 * thread depends on why it is freed, as Redis 7.0's lazyfree-* configs:
 * the calling thread sets lazyfree_ctx around the free (lazyfree_enter /
 * lazyfree_leave below), and the default, LF_SERVER_DEL, covers every implicit
 * delete (overwrite by SET, RENAME/MOVE/RESTORE REPLACE targets, a
 * collection emptied by SREM/SPOP...).
 *   LF_SERVER_DEL  lazyfree-lazy-server-del
 *   LF_USER_DEL    lazyfree-lazy-user-del   (DEL)
 *   LF_EXPIRE      lazyfree-lazy-expire     (lazy and active expiry, EXPIRE in the past)
 *   LF_EVICT       lazyfree-lazy-eviction   (maxmemory eviction)
 *   LF_ALWAYS      always lazy              (UNLINK)
 *   LF_NEVER       never lazy               (FLUSHALL SYNC, the lazy-free thread itself) */
#define LAZYFREE_THRESHOLD 64
enum { LF_SERVER_DEL = 0, LF_USER_DEL, LF_EXPIRE, LF_EVICT, LF_ALWAYS, LF_NEVER };
extern _Thread_local int lazyfree_ctx; /* why the current free happens */
/* Set the context around a free and put the previous one back after it
 * (a nested free, e.g. an expiry inside a DEL's lookup, keeps its own):
 *     int lf = lazyfree_enter(LF_USER_DEL);
 *     ... db_del() ...
 *     lazyfree_leave(lf); */
static inline int lazyfree_enter(int ctx)
{
    int saved = lazyfree_ctx;
    lazyfree_ctx = ctx;
    return saved;
}
static inline void lazyfree_leave(int saved)
{
    lazyfree_ctx = saved;
}
void obj_free_value(uint8_t type, uint8_t enc, void *p);

/* Lazy-free thread. */
void lazyfree_start(void);
void lazyfree_stop(void);
/* Objects queued and not yet freed / freed so far (INFO). */
unsigned long long lazyfree_pending(void);
unsigned long long lazyfreed_objects(void);
void lazyfree_reset_stats(void); /* CONFIG RESETSTAT: lazyfreed_objects = 0 */
/* Wait until the queue is empty (tests, DEBUG). */
void lazyfree_drain(void);
/* FLUSH ASYNC: hand n detached slot tables (db_detach) holding nkeys keys
 * to the lazy-free thread, which frees them and every value in them.
 * Takes ownership of tabs (hk_malloc'ed).  lazyfree_pending() counts the
 * keys until they are freed, lazyfreed_objects() then adds them, as
 * Redis counts a database freed in the background. */
struct table;
void lazyfree_tables(struct table **tabs, size_t n, unsigned long long nkeys);
/* Empty databases [from, to) by detaching their slot tables and handing
 * them to the lazy-free thread as one job (FLUSHALL ASYNC, a replica's
 * replica-lazy-flush).  Caller holds every slot lock. */
void db_flush_lazy(int from, int to);

#endif
