/* types/set.h - the set value: its three encodings, the conversions
 * between them, element primitives, iteration and the inline-entry rules.
 *
 * A set value is one of three structures, chosen as Redis 7.2+ chooses
 * (entry->enc):
 *   ENC_INTSET    every member is an integer and there are at most
 *                 set-max-intset-entries of them (ds/intset.h);
 *   ENC_LISTPACK  a small set (<= set-max-listpack-entries members, each
 *                 <= set-max-listpack-value bytes), members in insertion
 *                 order (ds/listpack.h);
 *   ENC_HT        anything bigger: a struct dict (ds/dict.h) whose elements
 *                 are struct smember (link + length + bytes, one allocation).
 * Conversions only go towards the bigger encodings while a set lives
 * (intset -> listpack -> hashtable, intset -> hashtable); results of set
 * algebra and SPOP start small and grow by the same rules.
 *
 * Users: the set command handlers (cmd/t_set.c), SORT and ZUNION & co.
 * (set_visit), the AOF rewrite and RDB (set_visit, set_load_*).  Nothing
 * here knows a client: callers reply, propagate and notify.  The caller
 * holds the key's slot lock for every function taking an entry. */
#ifndef HK_TYPES_SET_H
#define HK_TYPES_SET_H

#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/intset.h"
#include "../ds/listpack.h"

/* A hashtable set's element. */
struct smember {
    struct dict_link link; /* first: a dict_link * is a struct smember * */
    uint32_t len;
    char s[];
};

/* A set structure and its encoding, detached from any entry (results of
 * set algebra are built in one before they are stored or replied). */
struct sobj {
    void *p;
    uint8_t enc;
};

/* One element read from a set: a string (s != NULL) or an integer. */
struct selem {
    const char *s;
    size_t len;
    long long ll;
};

/* Callback over elements: nonzero stops (where a function says so). */
typedef int (*selem_fn)(void *arg, const struct selem *el);

/* A uniform integer in [0, n), from the high bits of the 64x64 product
 * (rand64's low bits are weak: consecutive outputs agree in them). */
static inline uint64_t set_rand_below(uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rand64() * n) >> 64);
}

static inline struct sobj sobj_of(struct entry *e)
{
    struct sobj o = {entry_ptr(e), e->enc};
    return o;
}

static inline size_t sobj_size(const struct sobj *o)
{
    switch (o->enc) {
    case ENC_INTSET: return is_len(o->p);
    case ENC_LISTPACK: return lp_count(o->p);
    default: return dict_size(o->p);
    }
}

/* Free structure p of encoding enc now (not through the lazy-free path). */
void sobj_free(void *p, uint8_t enc);

/* ------------------------------------------------------------ iteration ---
 * The set must not change meanwhile. */
struct siter {
    const struct sobj *o;
    size_t i;
    struct dict_iter di;
};

static inline void si_init(struct siter *it, const struct sobj *o)
{
    it->o = o;
    it->i = o->enc == ENC_LISTPACK ? lp_first(o->p) : 0;
    it->di.bucket = 0;
    it->di.cur = NULL;
}

static inline int si_next(struct siter *it, struct selem *el)
{
    const struct sobj *o = it->o;
    if (o->enc == ENC_INTSET) {
        if (it->i >= is_len(o->p))
            return 0;
        el->s = NULL;
        el->ll = is_get(o->p, it->i++);
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        struct lp_val v;
        if (it->i == LP_NONE)
            return 0;
        lp_get(o->p, it->i, &v);
        el->s = (const char *)v.s;
        el->len = v.len;
        el->ll = v.ll;
        it->i = lp_next(o->p, it->i);
        return 1;
    }
    struct dict_link *l = dict_next(o->p, &it->di);
    if (!l)
        return 0;
    el->s = ((const struct smember *)l)->s;
    el->len = ((const struct smember *)l)->len;
    return 1;
}

/* The element as a string: integers are formatted into buf (>= 24 bytes). */
static inline const char *selem_str(const struct selem *el, char *buf, size_t *len)
{
    if (el->s) {
        *len = el->len;
        return el->s;
    }
    *len = (size_t)ll_to_str(buf, el->ll);
    return buf;
}

/* ----------------------------------------------------------- membership --- */
/* Offset of integer v in a listpack set, LP_NONE if absent. */
size_t set_lp_find_ll(const unsigned char *lp, long long v);

static inline int sobj_ismember(const struct sobj *o, const char *s, size_t len)
{
    long long v;
    switch (o->enc) {
    case ENC_INTSET: return str_to_ll(s, len, &v) && is_find(o->p, v);
    case ENC_LISTPACK: return lp_find(o->p, lp_first(o->p), s, len, 0) != LP_NONE;
    default: return dict_find(o->p, s, len) != NULL;
    }
}

static inline int sobj_ismember_el(const struct sobj *o, const struct selem *el)
{
    if (el->s)
        return sobj_ismember(o, el->s, el->len);
    if (o->enc == ENC_INTSET)
        return is_find(o->p, el->ll);
    if (o->enc == ENC_LISTPACK)
        return set_lp_find_ll(o->p, el->ll) != LP_NONE;
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return dict_find(o->p, buf, n) != NULL;
}

/* --------------------------------------------------------------- writes --- */
/* An empty set that can hold the first member s, sized for hint members
 * (Redis's choice: intset for an integer, listpack, or a pre-sized dict). */
void sobj_create(struct sobj *o, const char *s, size_t len, size_t hint);
/* An empty structure of encoding enc (ENC_INTSET or ENC_LISTPACK). */
void sobj_empty(struct sobj *o, uint8_t enc);
/* Before adding hint members at once: go to a hashtable now if they cannot
 * fit the compact encoding anyway. */
void sobj_maybe_convert(struct sobj *o, size_t hint);
/* Add a member (converting as SADD does): 1 if it was added. */
int sobj_add(struct sobj *o, const char *s, size_t len);
int sobj_add_el(struct sobj *o, const struct selem *el);
/* Remove a member: 1 if it was there. */
int sobj_remove(struct sobj *o, const char *s, size_t len);
int sobj_remove_el(struct sobj *o, const struct selem *el);
/* A listpack or hashtable set whose members are all integers becomes an
 * intset when small enough (SINTERSTORE's result rule). */
void sobj_maybe_to_intset(struct sobj *o);

/* --------------------------------------------------------------- random --- */
/* A random element (the set is not empty). */
void sobj_random(const struct sobj *o, struct selem *el);
/* count random elements with repetitions (SRANDMEMBER -n), each passed to
 * fn until it returns nonzero. */
void sobj_random_repeat(const struct sobj *o, unsigned long long count, selem_fn fn, void *arg);
/* count (< size) distinct random elements, each passed to fn (whose
 * return value is ignored). */
void sobj_random_distinct(const struct sobj *o, size_t count, selem_fn fn, void *arg);
/* Remove one random member of the non-empty set o, passing it to fn
 * first (before it is gone). */
void sobj_pop_one(struct sobj *o, selem_fn fn, void *arg);
/* Remove count (< size) members of the set of entry e chosen uniformly at
 * random, passing each to fn (before it is gone).  The entry may end up
 * pointing at a new structure; returns what set_attach wants as `was`
 * (the caller then calls set_attach). */
size_t set_pop_some(struct entry *e, size_t count, selem_fn fn, void *arg);

/* SSCAN over a hashtable set: one dict_scan step from cursor, fn called
 * for each member visited; returns the next cursor. */
unsigned long long sobj_ht_scan(const struct sobj *o, unsigned long long cursor,
                                void (*fn)(void *arg, const char *s, size_t len), void *arg);

/* -------------------------------------------------------- inline values ---
 * A small intset or listpack set lives inside its entry (E_INLINE,
 * entry.h) instead of behind a pointer: one allocation less per key.  The
 * structure code works on heap structures, so a command that modifies an
 * inline set first moves it out (set_detach: the entry becomes an ordinary
 * pointer entry in place, its value room always holds the aligned
 * pointer) or, when it builds a new structure anyway, just drops the
 * inline bytes (set_release), and puts the result back at the end
 * (set_attach): in place when the entry's allocation fits it, else in a
 * new entry the caller swaps in with db_replace/db_set.  New keys are made
 * inline directly (set_entry_new).  A hashtable set is never inline.
 *
 * A value is kept inline only when that takes no more memory than the
 * pointer form (entry + structure, each rounded to the allocator's size
 * class): one bigger allocation can cost more than two smaller ones.
 * An inline entry's vlen may exceed the structure (whose own header gives
 * its length): a write that reuses the allocation in place claims all of
 * it (hk_usable), so entry_size() is the room the next write may reuse
 * without asking the allocator.  entry_size() never exceeds the
 * allocation (entry_dup, RENAME and TTL changes allocate exactly that). */

/* Make e an ordinary pointer entry.  Returns 0 if it was one already, else
 * its size (set_attach's `was`: room it may reuse). */
size_t set_detach(struct entry *e);
/* The set's structure o (read from e) is being replaced: free it unless it
 * is e's inline bytes (then the entry just stops being inline; the caller
 * sets the new pointer with entry_set_ptr right after).  Returns what
 * set_detach would. */
size_t set_release(struct entry *e, const struct sobj *o);
/* A new entry (no TTL) for key holding structure p (taken over): inline
 * when that pays (p is freed), else the pointer form. */
struct entry *set_entry_new(const char *key, size_t klen, void *p, uint8_t enc);
/* End of a write to e: a small structure goes back inline.  was:
 * set_detach's result when the command started (0: a pointer entry, sized
 * for that).  Returns NULL when e stays (possibly inline now), else a new
 * entry the caller swaps in for e with db_replace or db_set (which free e,
 * and its structure with it when the new entry is inline). */
struct entry *set_attach(struct entry *e, size_t was);

/* ------------------------------------------------------------ elsewhere --- */
/* Every member as a string (integers formatted in decimal); fn returns
 * nonzero to stop early. */
void set_visit(struct entry *e, obj_visit_fn fn, void *arg);

/* RDB snapshots and DUMP/RESTORE (persist/rdb_types.c): a set built member
 * by member.  set_load_new: an empty set entry (not in the keyspace) for
 * about hint members (intset, or a pre-sized hashtable past
 * set-max-intset-entries); set_load_add: add s, converting as SADD does
 * (1 added, 0 already there); set_load_finish: the entry in the form SADD
 * would leave it (a small structure moves inline: e is freed and the new
 * entry returned). */
struct entry *set_load_new(const char *key, size_t klen, long long expire, size_t hint);
int set_load_add(struct entry *e, const char *s, size_t len);
struct entry *set_load_finish(struct entry *e);

#endif
