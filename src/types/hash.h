/* hash.h - the hash value layer: its encodings (listpack, listpackex,
 * hashtable), field primitives, field TTLs and their expiry, iteration,
 * type_ops and the builders RDB/AOF loading uses.  No client here: the
 * command handlers (cmd/t_hash.c), persist/ (RDB, AOF rewrite), SORT's
 * BY/GET (cmd/t_sort.c) and the unit tests use it.  Encodings and their
 * invariants are described at the top of types/hash.c.
 *
 * e is always an OBJ_HASH entry; its structure pointer is updated in place
 * when an operation reallocates or converts it.  Field TTLs are absolute
 * unix ms, 0 meaning "none"; a field whose TTL is <= now is expired (never
 * while an AOF is replayed, db_loading). */
#ifndef HK_TYPES_HASH_H
#define HK_TYPES_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/listpack.h"

/* ------------------------------------------------- hashtable elements ---
 * ENC_HT: struct hht, a dict of struct hfield elements (one allocation
 * each: link, lengths, optional TTL and heap slot, field bytes, value
 * bytes) and a binary min-heap of the elements that have a TTL.  Exposed so
 * that handlers can walk it for replies (HGETALL, HSCAN, HRANDFIELD)
 * without a call per element; only this layer modifies it. */
struct hfield {
    struct dict_link link;
    uint32_t flen;
    uint32_t vlen;            /* value length | HF_TTL */
    unsigned char data[];     /* [ttl i64, heap slot u32] if HF_TTL; field; value */
};
#define HF_TTL 0x80000000u
#define HF_META 12

struct hht {
    struct dict *d;
    struct hfield **heap;     /* min-heap by TTL of the elements with HF_TTL */
    uint32_t nheap, heapcap;
};

static inline int hf_has_ttl(const struct hfield *h)
{
    return (h->vlen & HF_TTL) != 0;
}
static inline uint32_t hf_vlen(const struct hfield *h)
{
    return h->vlen & ~HF_TTL;
}
static inline char *hf_field(struct hfield *h)
{
    return (char *)h->data + (hf_has_ttl(h) ? HF_META : 0);
}
static inline char *hf_value(struct hfield *h)
{
    return hf_field(h) + h->flen;
}
static inline long long hf_ttl(const struct hfield *h)
{
    long long t;
    if (!hf_has_ttl(h))
        return 0;
    memcpy(&t, h->data, 8);
    return t;
}

/* A uniformly random element (HRANDFIELD): a random bucket and a random
 * chain position below HT_RAND_DEPTH, retried until it names an element
 * (exactly uniform over every element within that depth of its bucket's
 * head, which is all of them in practice: chains average one element). */
#define HT_RAND_DEPTH 8
static inline struct hfield *hash_ht_random(const struct hht *t)
{
    const struct dict *d = t->d;
    for (;;) {
        uint64_t r = rand64();
        struct dict_link *it = d->b[r & d->mask];
        unsigned k = (unsigned)((r >> 40) % HT_RAND_DEPTH);
        while (it && k--)
            it = it->next;
        if (it)
            return (struct hfield *)it;
    }
}

/* ------------------------------------------------ listpack utilities --- */

/* A listpack element as a string (integers formatted into buf, >= 32). */
static inline const char *hash_lpv_str(const struct lp_val *v, char *buf, size_t *len)
{
    if (v->s) {
        *len = v->len;
        return (const char *)v->s;
    }
    *len = (size_t)ll_to_str(buf, v->ll);
    return buf;
}

/* The integer at pos (a listpackex TTL element). */
static inline long long hash_lp_int(const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    return v.s ? 0 : v.ll;
}

static inline int hash_ttl_expired(long long ttl, long long now)
{
    /* Replaying an AOF, no field counts as expired (db.h: db_loading). */
    return ttl != 0 && ttl <= now && !db_loading;
}

/* ------------------------------------------------------ located fields --- */

/* A located field: listpack offsets (t is LP_NONE in a plain listpack) or
 * a hashtable element. */
struct hloc {
    size_t f, v, t;
    struct hfield *h;
};

/* Find field f (expired or not): 1 with *l set, 0 if absent. */
int hash_find(struct entry *e, const char *f, size_t flen, struct hloc *l);

static inline long long hash_loc_ttl(struct entry *e, const struct hloc *l)
{
    if (e->enc == ENC_HT)
        return hf_ttl(l->h);
    if (e->enc == ENC_LISTPACK_EX)
        return hash_lp_int(entry_ptr(e), l->t);
    return 0;
}

/* The value of a located field (a hashtable value as a string). */
static inline void hash_loc_val(struct entry *e, const struct hloc *l, struct lp_val *v)
{
    if (e->enc == ENC_HT) {
        v->s = (const unsigned char *)hf_value(l->h);
        v->len = hf_vlen(l->h);
        v->ll = 0;
    } else {
        lp_get(entry_ptr(e), l->v, v);
    }
}

/* Delete a located field (l is invalid after). */
void hash_del_at(struct entry *e, struct hloc *l);

/* ---------------------------------------------------- the value layer --- */

/* A new, empty hash structure in the compact encoding (ENC_LISTPACK). */
void *hash_new(void);
/* Set field f to v; keep_ttl keeps the TTL of an existing live field
 * (HINCRBY), otherwise it is cleared (HSET).  Converts to "hashtable" past
 * the hash-max-listpack-* thresholds.  Returns 1 when the field was created
 * (absent or expired before). */
int hash_set(struct entry *e, const char *f, size_t flen, const char *v, size_t vlen, int keep_ttl);
/* Remove field f whether or not it expired: 1 if it was there. */
int hash_del(struct entry *e, const char *f, size_t flen);
/* Fields stored, expired ones included (HLEN). */
size_t hash_length(struct entry *e);
/* TTL of field f: 0 none, -2 absent (or expired at now). */
long long hash_field_ttl(struct entry *e, const char *f, size_t flen, long long now);
/* HEXPIRE on one field; cond is 0 or one of the HFE_* below.  Returns
 * -2 no field, 0 condition not met, 1 set, 2 deleted (at <= now).  A plain
 * listpack becomes listpackex first. */
#define HFE_NX 1
#define HFE_XX 2
#define HFE_GT 4
#define HFE_LT 8
int hash_set_field_ttl(struct entry *e, const char *f, size_t flen, long long at, int cond, long long now);
/* HPERSIST on one field: -2 no field (or expired), -1 no TTL, 1 removed. */
int hash_persist_field(struct entry *e, const char *f, size_t flen, long long now);
/* Whether any field has a TTL. */
int hash_has_ttl(struct entry *e);
/* Convert to the "hashtable" encoding (no-op if it is one already). */
void hash_convert_ht(struct entry *e, size_t size_hint);
/* hashTypeTryConversion's rule: convert before adding the field, value
 * pairs whose lengths are len[from..to] when there are too many pairs or
 * one is too long. */
void hash_try_convert(struct entry *e, const size_t *len, int from, int to);

/* ---------------------------------------------------------- field TTLs --- */

/* Drop up to max expired fields; returns how many were dropped.  Between
 * hash_expire_prop_begin/end each dropped field is announced through
 * db_hash_field_expired_hook (HDEL to the AOF). */
long hash_drop_expired(struct entry *e, long long now, long max);
void hash_expire_prop_begin(int db, const char *key, size_t klen);
void hash_expire_prop_end(void);
/* Fields expired at now (HGETALL's count); for a listpack(ex), *first gets
 * the position of the first live field (the expired ones are a prefix). */
size_t hash_count_expired(struct entry *e, long long now, size_t *first);
/* The earliest field TTL (0: none). */
long long hash_min_field_ttl(struct entry *e);
/* Fields removed because their TTL passed, all threads together (INFO
 * stats "expired_subkeys"); CONFIG RESETSTAT zeroes it.  _add counts n
 * more (n <= 0: nothing). */
unsigned long long hash_expired_subkeys(void);
void hash_expired_subkeys_reset(void);
void hash_expired_subkeys_add(long n);
/* Drop the fields of hash e whose TTL is <= now (the expiry sweeper, slot
 * lock held, for entries flagged E_HFE: hash_type_ops.expire_fields);
 * returns the number dropped and sets *empty when no field is left (the
 * caller then deletes the key).  Clears E_HFE via db_set_hfe when no TTL
 * is left.  db: for the AOF's HDELs. */
long hash_expire_fields(int db, struct entry *e, unsigned slot, long long now, int *empty);

/* ---------------------------------------------------- inline listpacks ---
 * With entry-level support (E_INLINE, entry.h) a small listpack hash lives
 * inside its entry instead of behind a pointer: one allocation (and one
 * cache miss) less per small hash.  The value layer above works on pointer
 * entries, so a command that modifies an inline hash first moves the
 * listpack out to the heap (hash_detach: the entry becomes an ordinary
 * pointer entry in place; a listpack holding a field is longer than a
 * pointer) and puts it back at the end (hash_attach_at): in place when the
 * entry's allocation fits, else in a new entry swapped in with db_set (e
 * is not to be used after).  Paths that only shrink it (lazy and active
 * expiry, db < 0) always stay in place.  Without E_INLINE both are no-ops. */
#ifdef E_INLINE
#define HASH_INLINE_MAX 192
_Static_assert(HASH_INLINE_MAX <= ENTRY_SHORT_VLEN, "obj_entry_base: inline values fit the short header");
static inline void hash_detach(struct entry *e)
{
    if (!(e->flags & E_INLINE))
        return;
    /* hash_attach_at left room for the pointer */
    obj_inline_detach(e, lp_bytes((const unsigned char *)entry_val(e)));
}
void hash_attach_slow(int db, unsigned slot, struct entry *e);
static inline void hash_attach_at(int db, unsigned slot, struct entry *e)
{
    if (!e || e->enc == ENC_HT || (e->flags & E_INLINE))
        return;
    hash_attach_slow(db, slot, e);
}
#else
static inline void hash_detach(struct entry *e)
{
    (void)e;
}

static inline void hash_attach_at(int db, unsigned slot, struct entry *e)
{
    (void)db, (void)slot, (void)e;
}
#endif

/* ------------------------------------------- cross-module and persist/ --- */

/* Field f of hash e (expired fields are absent): 1 and the value in (*v,
 * *vlen), integers formatted into ibuf (>= 32 bytes); 0 if none (or e is
 * not a hash).  SORT BY/GET. */
int hash_get_field(struct entry *e, const char *f, size_t flen, const char **v, size_t *vlen, char *ibuf);

/* RDB snapshots, AOF rewrite and DUMP/RESTORE.  Visit every stored field
 * (expired ones too) with its value and TTL (0 = none); integers are
 * formatted; a nonzero return from fn stops the walk and is returned. */
typedef int (*hash_field_fn)(void *arg, const char *f, size_t flen, const char *v, size_t vlen, long long ttl);
int hash_visit_fields(struct entry *e, hash_field_fn fn, void *arg);
/* A freshly built hash entry (pointer form, not yet in the keyspace) in the
 * form HSET would leave it: a small listpack moves inline (e is freed and
 * the new entry returned), otherwise e itself. */
struct entry *hash_load_finish(struct entry *e);

#endif
