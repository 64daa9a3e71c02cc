/* t_set.c - the set type.
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
 * (intset -> listpack -> hashtable, intset -> hashtable); results of
 * SINTERSTORE/SUNIONSTORE/SDIFFSTORE/SPOP start small and grow by the same
 * rules.  A set that becomes empty is deleted.
 *
 * Every handler runs with its keys' slot locks held by the dispatcher, so
 * it may read and write every key it names.  Replies are written straight
 * from the structures (no copies), integers formatted by the encoder. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/intset.h"
#include "../ds/listpack.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"

/* ---------------------------------------------------------- members --- */
struct smember {
    struct dict_link link; /* first: a dict_link * is a struct smember * */
    uint32_t len;
    char s[];
};

static const char *sm_key(const struct dict_link *it, size_t *len)
{
    const struct smember *m = (const struct smember *)it;
    *len = m->len;
    return m->s;
}

static const struct dict_type set_dict_type = {sm_key};

static struct smember *sm_new(const char *s, size_t len)
{
    struct smember *m = hk_malloc(offsetof(struct smember, s) + len);
    m->len = (uint32_t)len;
    memcpy(m->s, s, len);
    return m;
}

static void sm_free(struct dict_link *it)
{
    hk_free(it);
}

/* ------------------------------------------------------ set objects --- */
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

#define LP_SAFETY_SIZE (1UL << 30) /* as Redis: a listpack never grows past 1 GB */

static inline size_t lim(int v)
{
    return v < 0 ? 0 : (size_t)v;
}

/* A uniform integer in [0, n), from the high bits of the 64x64 product
 * (rand64's low bits are weak: consecutive outputs agree in them). */
static inline uint64_t rand_below(uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rand64() * n) >> 64);
}

static inline size_t intset_max(void)
{
    size_t m = lim(set_max_intset_entries);
    return m > (1UL << 30) ? (1UL << 30) : m;
}

static inline struct sobj sobj_of(struct entry *e)
{
    struct sobj o = {entry_ptr(e), e->enc};
    return o;
}

static size_t s_size(const struct sobj *o)
{
    switch (o->enc) {
    case ENC_INTSET: return is_len(o->p);
    case ENC_LISTPACK: return lp_count(o->p);
    default: return dict_size(o->p);
    }
}

static void s_free_raw(void *p, uint8_t enc)
{
    switch (enc) {
    case ENC_INTSET: is_free(p); break;
    case ENC_LISTPACK: lp_free(p); break;
    default: dict_free(p, sm_free); break;
    }
}

/* Iteration (the set must not change meanwhile). */
struct siter {
    const struct sobj *o;
    size_t i;
    struct dict_iter di;
};

static void si_init(struct siter *it, const struct sobj *o)
{
    it->o = o;
    it->i = o->enc == ENC_LISTPACK ? lp_first(o->p) : 0;
    it->di.bucket = 0;
    it->di.cur = NULL;
}

static int si_next(struct siter *it, struct selem *el)
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
static inline const char *el_str(const struct selem *el, char *buf, size_t *len)
{
    if (el->s) {
        *len = el->len;
        return el->s;
    }
    *len = (size_t)ll_to_str(buf, el->ll);
    return buf;
}

static inline void reply_elem(struct client *c, const struct selem *el)
{
    if (el->s)
        reply_bulk(&c->out, el->s, el->len);
    else
        reply_bulk_ll(&c->out, el->ll);
}

/* Offset of integer v in a listpack set, LP_NONE if absent.  (A listpack
 * stores every canonical integer string as an integer.) */
static size_t lp_find_ll(const unsigned char *lp, long long v)
{
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        struct lp_val x;
        lp_get(lp, p, &x);
        if (!x.s && x.ll == v)
            return p;
    }
    return LP_NONE;
}

static int s_ismember(const struct sobj *o, const char *s, size_t len)
{
    long long v;
    switch (o->enc) {
    case ENC_INTSET: return str_to_ll(s, len, &v) && is_find(o->p, v);
    case ENC_LISTPACK: return lp_find(o->p, lp_first(o->p), s, len, 0) != LP_NONE;
    default: return dict_find(o->p, s, len) != NULL;
    }
}

static int s_ismember_el(const struct sobj *o, const struct selem *el)
{
    if (el->s)
        return s_ismember(o, el->s, el->len);
    if (o->enc == ENC_INTSET)
        return is_find(o->p, el->ll);
    if (o->enc == ENC_LISTPACK)
        return lp_find_ll(o->p, el->ll) != LP_NONE;
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return dict_find(o->p, buf, n) != NULL;
}

/* Convert to ENC_HT (any source) or ENC_LISTPACK (from an intset), the
 * dict pre-sized for cap members. */
static void s_convert(struct sobj *o, uint8_t enc, size_t cap)
{
    struct siter it;
    struct selem el;
    void *np;
    si_init(&it, o);
    if (enc == ENC_HT) {
        struct dict *d = dict_new(&set_dict_type, cap);
        char buf[24];
        while (si_next(&it, &el)) {
            size_t n;
            const char *s = el_str(&el, buf, &n);
            dict_add(d, &sm_new(s, n)->link);
        }
        np = d;
    } else {
        unsigned char *lp = lp_new();
        while (si_next(&it, &el))
            lp = el.s ? lp_append(lp, el.s, el.len) : lp_append_int(lp, el.ll);
        np = lp;
    }
    s_free_raw(o->p, o->enc);
    o->p = np;
    o->enc = enc;
}

/* An empty set that can hold the first member s, sized for hint members
 * (Redis's choice: intset for an integer, listpack, or a pre-sized dict). */
static void s_create(struct sobj *o, const char *s, size_t len, size_t hint)
{
    long long v;
    if (str_to_ll(s, len, &v) && hint <= intset_max()) {
        o->p = is_new();
        o->enc = ENC_INTSET;
    } else if (hint <= lim(set_max_listpack_entries)) {
        o->p = lp_new();
        o->enc = ENC_LISTPACK;
    } else {
        o->p = dict_new(&set_dict_type, hint);
        o->enc = ENC_HT;
    }
}

/* Before adding hint members at once: go to a hashtable now if they cannot
 * fit the compact encoding anyway. */
static void s_maybe_convert(struct sobj *o, size_t hint)
{
    if ((o->enc == ENC_LISTPACK && hint > lim(set_max_listpack_entries)) ||
        (o->enc == ENC_INTSET && hint > intset_max()))
        s_convert(o, ENC_HT, hint);
}

static int s_add_int_intset(struct sobj *o, long long v)
{
    int changed = 0;
    o->p = is_add(o->p, v, &changed);
    if (changed && is_len(o->p) > intset_max())
        s_convert(o, ENC_HT, is_len(o->p));
    return changed;
}

static size_t digits_of(long long v)
{
    char buf[24];
    return (size_t)ll_to_str(buf, v);
}

/* Add a member given as a string; 1 if it was added. */
static int s_add(struct sobj *o, const char *s, size_t len)
{
    long long v;
    if (o->enc == ENC_HT) {
        if (dict_find(o->p, s, len))
            return 0;
        dict_add(o->p, &sm_new(s, len)->link);
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        unsigned char *lp = o->p;
        if (lp_find(lp, lp_first(lp), s, len, 0) != LP_NONE)
            return 0;
        size_t n = lp_count(lp);
        if (n < lim(set_max_listpack_entries) && len <= lim(set_max_listpack_value) &&
            lp_bytes(lp) + len + 16 <= LP_SAFETY_SIZE) {
            o->p = lp_append(lp, s, len);
        } else {
            s_convert(o, ENC_HT, n + 1);
            dict_add(o->p, &sm_new(s, len)->link);
        }
        return 1;
    }
    /* intset */
    if (str_to_ll(s, len, &v))
        return s_add_int_intset(o, v);
    size_t n = is_len(o->p), maxlen = 0;
    if (n) {
        size_t a = digits_of(is_max(o->p)), b = digits_of(is_min(o->p));
        maxlen = a > b ? a : b;
    }
    if (n < lim(set_max_listpack_entries) && len <= lim(set_max_listpack_value) &&
        maxlen <= lim(set_max_listpack_value) && n * 11 + len + 16 <= LP_SAFETY_SIZE) {
        s_convert(o, ENC_LISTPACK, n + 1);
        o->p = lp_append(o->p, s, len);
    } else {
        s_convert(o, ENC_HT, n + 1);
        dict_add(o->p, &sm_new(s, len)->link);
    }
    return 1;
}

static int s_add_el(struct sobj *o, const struct selem *el)
{
    if (el->s)
        return s_add(o, el->s, el->len);
    if (o->enc == ENC_INTSET)
        return s_add_int_intset(o, el->ll);
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return s_add(o, buf, n);
}

static int s_remove(struct sobj *o, const char *s, size_t len)
{
    long long v;
    int changed = 0;
    if (o->enc == ENC_INTSET) {
        if (str_to_ll(s, len, &v))
            o->p = is_remove(o->p, v, &changed);
        return changed;
    }
    if (o->enc == ENC_LISTPACK) {
        size_t pos = lp_find(o->p, lp_first(o->p), s, len, 0);
        if (pos == LP_NONE)
            return 0;
        o->p = lp_delete(o->p, pos, 1, NULL);
        return 1;
    }
    struct dict_link *l = dict_remove(o->p, s, len);
    if (!l)
        return 0;
    sm_free(l);
    return 1;
}

static int s_remove_el(struct sobj *o, const struct selem *el)
{
    if (el->s)
        return s_remove(o, el->s, el->len);
    if (o->enc == ENC_INTSET) {
        int changed = 0;
        o->p = is_remove(o->p, el->ll, &changed);
        return changed;
    }
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return s_remove(o, buf, n);
}

/* A listpack or hashtable set whose members are all integers becomes an
 * intset when small enough (SINTERSTORE's result rule). */
static void s_maybe_to_intset(struct sobj *o)
{
    if (o->enc == ENC_INTSET || s_size(o) > intset_max())
        return;
    unsigned char *is = is_new();
    struct siter it;
    struct selem el;
    si_init(&it, o);
    while (si_next(&it, &el)) {
        long long v = el.ll;
        if (el.s && !str_to_ll(el.s, el.len, &v)) {
            is_free(is);
            return;
        }
        is = is_add(is, v, NULL);
    }
    s_free_raw(o->p, o->enc);
    o->p = is;
    o->enc = ENC_INTSET;
}

/* A random element (the set is not empty). */
static void s_random(const struct sobj *o, struct selem *el)
{
    size_t n;
    if (o->enc == ENC_INTSET) {
        n = is_len(o->p);
        el->s = NULL;
        el->ll = is_get(o->p, (size_t)rand_below(n));
    } else if (o->enc == ENC_LISTPACK) {
        struct lp_val v;
        n = lp_count(o->p);
        lp_get(o->p, lp_seek(o->p, (long long)rand_below(n)), &v);
        el->s = (const char *)v.s;
        el->len = v.len;
        el->ll = v.ll;
    } else {
        const struct smember *m = (const struct smember *)dict_random(o->p);
        el->s = m->s;
        el->len = m->len;
    }
}

/* Selection sampling (Knuth's algorithm S): with `left` items still to see
 * and `need` of them still to choose, take this one? */
static inline int pick(size_t need, size_t left)
{
    return need && (size_t)rand_below(left) < need;
}

/* A small open-addressing set of non-zero 64-bit keys (random sampling of
 * distinct members: dict pointers or intset indexes + 1). */
struct u64set {
    uint64_t *t;
    size_t mask;
};

static void u64set_init(struct u64set *s, size_t n)
{
    size_t cap = 16;
    while (cap < n * 2)
        cap <<= 1;
    s->t = hk_calloc(cap * sizeof(uint64_t));
    s->mask = cap - 1;
}

/* 1 if k was added, 0 if present. */
static int u64set_add(struct u64set *s, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(h >> 20) & s->mask;
    while (s->t[i]) {
        if (s->t[i] == k)
            return 0;
        i = (i + 1) & s->mask;
    }
    s->t[i] = k;
    return 1;
}

/* ------------------------------------------------------------ type ops --- */
static void set_free(void *p, uint8_t enc)
{
    s_free_raw(p, enc);
}

static void *set_dup(const void *p, uint8_t enc)
{
    if (enc == ENC_INTSET)
        return hk_memdup(p, is_bytes(p));
    if (enc == ENC_LISTPACK)
        return hk_memdup(p, lp_bytes(p));
    const struct dict *d = p;
    struct dict *n = dict_new(&set_dict_type, dict_size(d));
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(d, &it)) != NULL) {
        const struct smember *m = (const struct smember *)l;
        dict_add(n, &sm_new(m->s, m->len)->link);
    }
    return n;
}

static size_t set_mem(const void *p, uint8_t enc)
{
    if (enc != ENC_HT)
        return hk_usable((void *)p);
    const struct dict *d = p;
    size_t n = dict_mem(d);
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(d, &it)) != NULL)
        n += hk_usable(l);
    return n;
}

static size_t set_len(const void *p, uint8_t enc)
{
    struct sobj o = {(void *)p, enc};
    return s_size(&o);
}

static size_t set_effort(const void *p, uint8_t enc)
{
    return enc == ENC_HT ? dict_size(p) : 1;
}

const struct type_ops set_type_ops = {set_free, set_dup, set_mem, set_len, set_effort};

void set_visit(struct entry *e, obj_visit_fn fn, void *arg)
{
    struct sobj o = sobj_of(e);
    struct siter it;
    struct selem el;
    char buf[24];
    si_init(&it, &o);
    while (si_next(&it, &el)) {
        size_t n;
        const char *s = el_str(&el, buf, &n);
        if (fn(arg, s, n))
            break;
    }
}

/* ---------------------------------------------------- inline values ---
 * A small intset or listpack set lives inside its entry (E_INLINE,
 * entry.h) instead of behind a pointer: one allocation less per key.  The
 * structure code below works on heap structures, so a command that
 * modifies an inline set first moves it out (sdetach: the entry becomes an
 * ordinary pointer entry in place, its value room always holds the
 * aligned pointer) or, when it builds a new structure anyway, just drops
 * the inline bytes (s_release), and puts the result back at the end
 * (sattach): in place when the entry's allocation fits it, else in a new
 * entry swapped in with db_replace/db_set.  New keys are made inline
 * directly (s_entry_new).  A hashtable set is never inline.
 *
 * A value is kept inline only when that takes no more memory than the
 * pointer form (entry + structure, each rounded to the allocator's size
 * class): one bigger allocation can cost more than two smaller ones.
 * An inline entry's vlen may exceed the structure (whose own header gives
 * its length): a write that reuses the allocation in place claims all of
 * it (hk_usable), so entry_size() is the room the next write may reuse
 * without asking the allocator.  entry_size() never exceeds the
 * allocation (entry_dup, RENAME and TTL changes allocate exactly that). */
#define SET_INLINE_MAX 256

static inline size_t s_raw_bytes(const void *p, uint8_t enc)
{
    return enc == ENC_INTSET ? is_bytes(p) : lp_bytes(p);
}

/* Make e an ordinary pointer entry.  Returns 0 if it was one already, else
 * its size (sattach's `was`: room it may reuse). */
static size_t sdetach(struct entry *e)
{
    if (!(e->flags & E_INLINE))
        return 0;
    return obj_inline_detach(e, s_raw_bytes(entry_val(e), e->enc));
}

/* The set's structure o (read from e) is being replaced: free it unless it
 * is e's inline bytes (then the entry just stops being inline; the caller
 * sets the new pointer with entry_set_ptr right after).  Returns what
 * sdetach would. */
static size_t s_release(struct entry *e, const struct sobj *o)
{
    if (e->flags & E_INLINE) {
        size_t was = entry_size(e);
        e->flags &= (uint8_t)~E_INLINE;
        return was;
    }
    s_free_raw(o->p, o->enc);
    return 0;
}

/* A new entry for key holding structure p (taken over): inline when that
 * pays (p is freed), else the pointer form. */
static struct entry *s_entry_new(const char *key, size_t klen, void *p, uint8_t enc)
{
    if (enc != ENC_HT) {
        size_t n = s_raw_bytes(p, enc);
        if (obj_inline_pays(sizeof(struct entry) + klen, n, SET_INLINE_MAX)) {
            struct entry *e = obj_inline_new(OBJ_SET, enc, key, klen, -1, p, n);
            s_free_raw(p, enc);
            return e;
        }
    }
    return entry_new_obj(OBJ_SET, enc, key, klen, p, -1);
}

/* End of a write to the set at argv[i] (table index idx from its lookup,
 * or -1 when other keys were added or removed since): a small structure
 * goes back inline (obj_inline_attach).  was: sdetach's result when the
 * command started (0: a pointer entry, sized for that).  e may be
 * replaced: not to be used after. */
static void sattach(struct client *c, int i, long idx, struct entry *e, size_t was)
{
    if (e->enc == ENC_HT || (e->flags & E_INLINE))
        return;
    void *p = entry_ptr(e);
    struct entry *ne;
    if (obj_inline_attach(e, s_raw_bytes(p, e->enc), SET_INLINE_MAX, was, &ne))
        s_free_raw(p, e->enc);
    else if (ne && idx >= 0)
        db_replace(c->db, kslot(c, i), idx, ne); /* frees e (and p with it when ne is inline) */
    else if (ne)
        db_set(c->db, kslot(c, i), ne);
}

/* ------------------------------------------------------------- helpers --- */
/* The set at argv[i], NULL if absent; *wrong when it is another type (the
 * caller replies WRONGTYPE). flags: LK_* (LK_NOSTATS for write lookups, as
 * Redis counts hits/misses only for reads). */
static struct entry *lookup_set(struct client *c, int i, int flags, int *wrong)
{
    struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], flags);
    *wrong = e && e->type != OBJ_SET;
    return e;
}

/* lookup_set for a read that replies WRONGTYPE itself: *bad is set then
 * (the caller just returns). */
static struct entry *sget_read(struct client *c, int i, int *bad)
{
    struct entry *e = lookup_set(c, i, 0, bad);
    if (*bad)
        reply_error(&c->out, ERR_WRONGTYPE);
    return e;
}

/* Same for a write, with the table index for sattach. */
static struct entry *lookup_set_w(struct client *c, int i, int *wrong, long *idx)
{
    struct entry *e = db_get_idx(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS, idx);
    *wrong = e && e->type != OBJ_SET;
    return e;
}

static int del_key(struct client *c, int i)
{
    return db_del(c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
}

/* The destination of a *STORE went away: "del" if it existed. */
static void del_dst(struct client *c, int i)
{
    if (del_key(c, i))
        KEY_MODIFIED(c, i, NOTIFY_GENERIC, "del");
}

/* Store set o under argv[i] replacing whatever is there; an empty result
 * deletes the key instead (and frees o).  event: the keyspace event of a
 * store.  Returns the stored size. */
static size_t store_set(struct client *c, int i, struct sobj *o, const char *event)
{
    size_t n = s_size(o);
    if (n == 0) {
        s_free_raw(o->p, o->enc);
        del_dst(c, i);
        return 0;
    }
    db_set(c->db, kslot(c, i), s_entry_new(c->argv[i], c->argvlen[i], o->p, o->enc));
    KEY_MODIFIED(c, i, NOTIFY_SET, event);
    return n;
}

/* ------------------------------------------------------------ commands --- */
void sadd_command(struct client *c)
{
    int wrong;
    size_t was = 0;
    long idx = -1;
    struct entry *e = lookup_set_w(c, 1, &wrong, &idx);
    struct sobj o;
    size_t hint = (size_t)c->argc - 2;
    long long added = 0;

    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (e) {
        was = sdetach(e);
        o = sobj_of(e);
        s_maybe_convert(&o, hint);
    } else {
        s_create(&o, c->argv[2], c->argvlen[2], hint);
    }
    for (int j = 2; j < c->argc; j++)
        added += s_add(&o, c->argv[j], c->argvlen[j]);
    if (e) {
        entry_set_ptr(e, o.p, o.enc);
        sattach(c, 1, idx, e, was);
    } else {
        db_add(c->db, kslot(c, 1), s_entry_new(c->argv[1], c->argvlen[1], o.p, o.enc));
    }
    if (added)
        KEY_MODIFIED(c, 1, NOTIFY_SET, "sadd");
    reply_int(&c->out, added);
}

void srem_command(struct client *c)
{
    int wrong;
    long idx = -1;
    struct entry *e = lookup_set_w(c, 1, &wrong, &idx);
    long long deleted = 0;

    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = sdetach(e);
    struct sobj o = sobj_of(e);
    for (int j = 2; j < c->argc; j++) {
        if (s_remove(&o, c->argv[j], c->argvlen[j])) {
            deleted++;
            if (s_size(&o) == 0)
                break;
        }
    }
    entry_set_ptr(e, o.p, o.enc);
    int gone = s_size(&o) == 0;
    if (gone)
        del_key(c, 1); /* frees o */
    else
        sattach(c, 1, idx, e, was);
    if (deleted) {
        KEY_MODIFIED(c, 1, NOTIFY_SET, "srem");
        if (gone)
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    }
    reply_int(&c->out, deleted);
}

void smove_command(struct client *c)
{
    int wsrc, wdst;
    struct entry *src = lookup_set(c, 1, LK_NOSTATS, &wsrc);
    struct entry *dst = lookup_set(c, 2, LK_NOSTATS, &wdst);
    const char *m = c->argv[3];
    size_t mlen = c->argvlen[3];

    if (!src) {
        reply_int(&c->out, 0);
        return;
    }
    if (wsrc || wdst) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    struct sobj so = sobj_of(src);
    if (src == dst) {
        reply_int(&c->out, s_ismember(&so, m, mlen));
        return;
    }
    if (!s_ismember(&so, m, mlen)) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = sdetach(src);
    so = sobj_of(src);
    s_remove(&so, m, mlen);
    entry_set_ptr(src, so.p, so.enc);
    KEY_EVENT(c, 1, NOTIFY_SET, "srem");
    if (s_size(&so) == 0) {
        del_key(c, 1);
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    } else {
        sattach(c, 1, -1, src, was);
    }
    struct sobj d;
    int added = 1;
    if (dst) {
        was = sdetach(dst);
        d = sobj_of(dst);
        added = s_add(&d, m, mlen);
        entry_set_ptr(dst, d.p, d.enc);
        sattach(c, 2, -1, dst, was);
    } else {
        s_create(&d, m, mlen, 1);
        s_add(&d, m, mlen);
        db_add(c->db, kslot(c, 2), s_entry_new(c->argv[2], c->argvlen[2], d.p, d.enc));
    }
    KEY_SIGNAL(c, 1);
    if (added)
        KEY_MODIFIED(c, 2, NOTIFY_SET, "sadd");
    reply_int(&c->out, 1);
}

void sismember_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_int(&c->out, s_ismember(&o, c->argv[2], c->argvlen[2]));
}

void smismember_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    struct sobj o = {NULL, 0};
    if (e)
        o = sobj_of(e);
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++)
        reply_int(&c->out, e ? s_ismember(&o, c->argv[j], c->argvlen[j]) : 0);
}

void scard_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_int(&c->out, (long long)s_size(&o));
}

/* Every member of o as a RESP3 set (array in RESP2). */
static void reply_whole_set(struct client *c, const struct sobj *o)
{
    struct siter it;
    struct selem el;
    reply_set(&c->out, (long long)s_size(o));
    si_init(&it, o);
    while (si_next(&it, &el))
        reply_elem(c, &el);
}

void smembers_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_set(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_whole_set(c, &o);
}

/* ---------------------------------------------------------------- SPOP --- */
/* Remove `count` (< size) members chosen uniformly at random from the set
 * of entry e and reply them as a set. */
/* SPOP's members are fed as SREM key m1 m2 ... (1024 per command, as
 * Redis; several commands go as one MULTI/EXEC unit). */
struct spop_prop {
    struct client *c;
    int n;
};

static void spop_prop_open(struct spop_prop *p)
{
    prop_op_begin(p->c->db);
    prop_op_str("SREM");
    prop_op_arg(p->c->argv[1], p->c->argvlen[1]);
    p->n = 0;
}

static void spop_prop_begin(struct spop_prop *p, struct client *c)
{
    p->c = c;
    prop_prevent();
    prop_unit_begin();
    spop_prop_open(p);
}

static void spop_prop_add(struct spop_prop *p, const char *s, size_t len)
{
    if (p->n == 1024) {
        prop_op_end();
        spop_prop_open(p);
    }
    prop_op_arg(s, len);
    p->n++;
}

static void spop_prop_add_ll(struct spop_prop *p, long long v)
{
    char buf[24];
    spop_prop_add(p, buf, (size_t)ll_to_str(buf, v));
}

static void spop_prop_end(struct spop_prop *p)
{
    (void)p;
    prop_op_end();
    prop_unit_end();
}

static void spop_some(struct client *c, struct entry *e, long idx, size_t count)
{
    struct sobj o = sobj_of(e);
    size_t size = s_size(&o), remaining = size - count;
    struct spop_prop pp;
    spop_prop_begin(&pp, c);

    reply_set(&c->out, (long long)count);
    if (o.enc == ENC_LISTPACK) {
        /* One pass: the chosen members are replied, the others copied to
         * the new listpack (insertion order kept). */
        unsigned char *lp = o.p, *nl = lp_new();
        size_t left = size, need = count;
        for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), left--) {
            struct lp_val v;
            lp_get(lp, p, &v);
            if (pick(need, left)) {
                need--;
                if (v.s) {
                    reply_bulk(&c->out, (const char *)v.s, v.len);
                    spop_prop_add(&pp, (const char *)v.s, v.len);
                } else {
                    reply_bulk_ll(&c->out, v.ll);
                    spop_prop_add_ll(&pp, v.ll);
                }
            } else {
                nl = v.s ? lp_append(nl, (const char *)v.s, v.len) : lp_append_int(nl, v.ll);
            }
        }
        size_t was = s_release(e, &o);
        entry_set_ptr(e, nl, ENC_LISTPACK);
        sattach(c, 1, idx, e, was);
        spop_prop_end(&pp);
        return;
    }
    if (o.enc == ENC_INTSET) {
        unsigned char *is = o.p, *ni = is_new();
        size_t left = size, need = count;
        for (size_t i = 0; i < size; i++, left--) {
            long long v = is_get(is, i);
            if (pick(need, left)) {
                need--;
                reply_bulk_ll(&c->out, v);
                spop_prop_add_ll(&pp, v);
            } else {
                ni = is_add(ni, v, NULL);
            }
        }
        size_t was = s_release(e, &o);
        entry_set_ptr(e, ni, ENC_INTSET);
        sattach(c, 1, idx, e, was);
        spop_prop_end(&pp);
        return;
    }
    struct dict *d = o.p;
    if (remaining * 5 > count) {
        /* Few to pop: take random members out one by one. */
        while (count--) {
            struct smember *m = (struct smember *)dict_random(d);
            reply_bulk(&c->out, m->s, m->len);
            spop_prop_add(&pp, m->s, m->len);
            dict_remove(d, m->s, m->len);
            sm_free(&m->link);
        }
        spop_prop_end(&pp);
        return;
    }
    /* Most of the set goes: move the few that stay into a new set (small
     * again: listpack or hashtable by the usual rules), reply the rest. */
    struct sobj ns = {lp_new(), ENC_LISTPACK};
    while (remaining--) {
        struct smember *m = (struct smember *)dict_random(d);
        s_add(&ns, m->s, m->len);
        dict_remove(d, m->s, m->len);
        sm_free(&m->link);
    }
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(d, &it)) != NULL) {
        reply_bulk(&c->out, ((struct smember *)l)->s, ((struct smember *)l)->len);
        spop_prop_add(&pp, ((struct smember *)l)->s, ((struct smember *)l)->len);
    }
    entry_set_ptr(e, ns.p, ns.enc);
    obj_free_value(OBJ_SET, ENC_HT, d);
    sattach(c, 1, idx, e, 0);
    spop_prop_end(&pp);
}

void spop_command(struct client *c)
{
    int wrong;
    long idx = -1;
    struct entry *e;

    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        long long count;
        if (!str_to_ll(c->argv[2], c->argvlen[2], &count) || count < 0) {
            reply_error(&c->out, "ERR value is out of range, must be positive");
            return;
        }
        e = lookup_set_w(c, 1, &wrong, &idx);
        if (!e) {
            reply_set(&c->out, 0);
            return;
        }
        if (wrong) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        if (count == 0) {
            reply_set(&c->out, 0);
            return;
        }
        struct sobj o = sobj_of(e);
        size_t size = s_size(&o);
        KEY_EVENT(c, 1, NOTIFY_SET, "spop");
        if ((unsigned long long)count >= size) {
            reply_whole_set(c, &o);
            del_key(c, 1);
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
            /* The whole set went: DEL, as Redis. */
            prop_prevent();
            prop_op_begin(c->db);
            prop_op_str("DEL");
            prop_op_arg(c->argv[1], c->argvlen[1]);
            prop_op_end();
        } else {
            spop_some(c, e, idx, (size_t)count);
        }
        KEY_SIGNAL(c, 1);
        return;
    }
    e = lookup_set_w(c, 1, &wrong, &idx);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    size_t was = sdetach(e);
    struct sobj o = sobj_of(e);
    struct spop_prop pp;
    spop_prop_begin(&pp, c); /* SREM key member */
    if (o.enc == ENC_LISTPACK) {
        struct lp_val v;
        size_t pos = lp_seek(o.p, (long long)rand_below(lp_count(o.p)));
        lp_get(o.p, pos, &v);
        if (v.s) {
            reply_bulk(&c->out, (const char *)v.s, v.len);
            spop_prop_add(&pp, (const char *)v.s, v.len);
        } else {
            reply_bulk_ll(&c->out, v.ll);
            spop_prop_add_ll(&pp, v.ll);
        }
        o.p = lp_delete(o.p, pos, 1, NULL);
    } else if (o.enc == ENC_INTSET) {
        long long v = is_get(o.p, (size_t)rand_below(is_len(o.p)));
        reply_bulk_ll(&c->out, v);
        spop_prop_add_ll(&pp, v);
        o.p = is_remove(o.p, v, NULL);
    } else {
        struct smember *m = (struct smember *)dict_random(o.p);
        reply_bulk(&c->out, m->s, m->len);
        spop_prop_add(&pp, m->s, m->len);
        dict_remove(o.p, m->s, m->len);
        sm_free(&m->link);
    }
    spop_prop_end(&pp);
    entry_set_ptr(e, o.p, o.enc);
    KEY_EVENT(c, 1, NOTIFY_SET, "spop");
    if (s_size(&o) == 0) {
        del_key(c, 1);
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    } else {
        sattach(c, 1, idx, e, was);
    }
    KEY_SIGNAL(c, 1);
}

/* --------------------------------------------------------- SRANDMEMBER --- */
/* A huge negative count (-LLONG_MAX) would build an endless reply: past this
 * much pending output the client is closed instead (as HRANDFIELD does). */
#define SRAND_MAX_REPLY (512ull << 20)

/* count members with repetitions, in random order. */
static void srand_repeat(struct client *c, const struct sobj *o, unsigned long long count)
{
    struct selem el;
    reply_array(&c->out, (long long)count);
    if (o->enc == ENC_LISTPACK && count > 8) {
        /* Index the listpack once: each pick is then O(1). */
        size_t n = lp_count(o->p), k = 0;
        size_t *off = hk_malloc(n * sizeof(size_t));
        for (size_t p = lp_first(o->p); p != LP_NONE; p = lp_next(o->p, p))
            off[k++] = p;
        while (count--) {
            struct lp_val v;
            lp_get(o->p, off[rand_below(n)], &v);
            if (v.s)
                reply_bulk(&c->out, (const char *)v.s, v.len);
            else
                reply_bulk_ll(&c->out, v.ll);
            if ((count & 1023) == 0 && c->out.len > SRAND_MAX_REPLY) {
                c->flags |= CF_CLOSE_ASAP;
                break;
            }
        }
        hk_free(off);
        return;
    }
    while (count--) {
        s_random(o, &el);
        reply_elem(c, &el);
        if ((count & 1023) == 0 && c->out.len > SRAND_MAX_REPLY) {
            c->flags |= CF_CLOSE_ASAP;
            break;
        }
    }
}

/* count (< size) distinct members. */
static void srand_distinct(struct client *c, const struct sobj *o, size_t count)
{
    size_t size = s_size(o);
    reply_array(&c->out, (long long)count);
    if (o->enc == ENC_LISTPACK || count * 3 > size) {
        /* One pass of selection sampling. */
        struct siter it;
        struct selem el;
        size_t left = size, need = count;
        si_init(&it, o);
        while (need && si_next(&it, &el)) {
            if (pick(need, left--)) {
                need--;
                reply_elem(c, &el);
            }
        }
        return;
    }
    /* A big set and few members wanted: random picks, duplicates skipped. */
    struct u64set seen;
    u64set_init(&seen, count);
    while (count) {
        if (o->enc == ENC_INTSET) {
            size_t i = (size_t)rand_below(size);
            if (u64set_add(&seen, (uint64_t)i + 1)) {
                reply_bulk_ll(&c->out, is_get(o->p, i));
                count--;
            }
        } else {
            const struct smember *m = (const struct smember *)dict_random(o->p);
            if (u64set_add(&seen, (uint64_t)(uintptr_t)m)) {
                reply_bulk(&c->out, m->s, m->len);
                count--;
            }
        }
    }
    hk_free(seen.t);
}

void srandmember_command(struct client *c)
{
    int wrong;
    struct entry *e;

    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        long long l;
        unsigned long long count;
        if (arg_ll(c, 2, &l) < 0)
            return;
        if (l == LLONG_MIN) {
            reply_error(&c->out, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            return;
        }
        e = lookup_set(c, 1, 0, &wrong);
        if (!e) {
            reply_array(&c->out, 0);
            return;
        }
        if (wrong) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        count = l < 0 ? (unsigned long long)-l : (unsigned long long)l;
        if (count == 0) {
            reply_array(&c->out, 0);
            return;
        }
        struct sobj o = sobj_of(e);
        if (l < 0 || count == 1) {
            srand_repeat(c, &o, count);
            return;
        }
        size_t size = s_size(&o);
        if (count >= size) {
            struct siter it;
            struct selem el;
            reply_array(&c->out, (long long)size);
            si_init(&it, &o);
            while (si_next(&it, &el))
                reply_elem(c, &el);
            return;
        }
        srand_distinct(c, &o, (size_t)count);
        return;
    }
    e = lookup_set(c, 1, 0, &wrong);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    struct sobj o = sobj_of(e);
    struct selem el;
    s_random(&o, &el);
    reply_elem(c, &el);
}

/* ---------------------------------------------------------- set algebra --- */
struct sref {
    struct sobj o; /* o.p == NULL: the key does not exist (empty set) */
    size_t n;
};

static int sref_cmp_size(const void *a, const void *b)
{
    size_t x = ((const struct sref *)a)->n, y = ((const struct sref *)b)->n;
    return x < y ? -1 : x > y;
}

static int sref_cmp_rsize(const void *a, const void *b)
{
    size_t x = ((const struct sref *)a)->n, y = ((const struct sref *)b)->n;
    return x < y ? 1 : x > y ? -1 : 0;
}

#define SREF_STACK 16

/* Look up nkeys sets at argv[first..]; read lookups (counted in stats).
 * Returns the array (stack or heap: free with sref_free), or NULL after
 * replying WRONGTYPE. *missing counts absent keys. */
static struct sref *load_sets(struct client *c, int first, int nkeys, struct sref *stack, int *missing)
{
    struct sref *s = nkeys <= SREF_STACK ? stack : hk_malloc(sizeof(*s) * (size_t)nkeys);
    *missing = 0;
    for (int j = 0; j < nkeys; j++) {
        int wrong;
        struct entry *e = lookup_set(c, first + j, 0, &wrong);
        if (wrong) {
            if (s != stack)
                hk_free(s);
            reply_error(&c->out, ERR_WRONGTYPE);
            return NULL;
        }
        if (!e) {
            s[j].o.p = NULL;
            s[j].o.enc = 0;
            s[j].n = 0;
            (*missing)++;
        } else {
            s[j].o = sobj_of(e);
            s[j].n = s_size(&s[j].o);
        }
    }
    return s;
}

static void sref_free(struct sref *s, struct sref *stack)
{
    if (s != stack)
        hk_free(s);
}

/* SINTER / SINTERCARD / SINTERSTORE.  dst: argv index of the destination
 * or 0; card: reply the cardinality only, stopping at limit (0 = none). */
static void sinter_generic(struct client *c, int first, int nkeys, int dst, int card, unsigned long long limit)
{
    struct sref stack[SREF_STACK], *s;
    int missing;
    struct siter it;
    struct selem el;

    if (!(s = load_sets(c, first, nkeys, stack, &missing)))
        return;
    if (missing) {
        sref_free(s, stack);
        if (dst) {
            del_dst(c, dst);
            reply_int(&c->out, 0);
        } else if (card) {
            reply_int(&c->out, 0);
        } else {
            reply_set(&c->out, 0);
        }
        return;
    }
    if (nkeys == 1 && !dst && !card) {
        /* SMEMBERS in disguise: the count is known up front. */
        reply_whole_set(c, &s[0].o);
        sref_free(s, stack);
        return;
    }
    qsort(s, (size_t)nkeys, sizeof(*s), sref_cmp_size);

    struct sobj out = {NULL, 0};
    size_t mark = 0;
    unsigned long long n = 0;
    int only_ints = 1;
    if (dst) {
        out.enc = s[0].o.enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK;
        out.p = out.enc == ENC_INTSET ? (void *)is_new() : (void *)lp_new();
    } else if (!card) {
        mark = reply_defer(&c->out);
    }
    si_init(&it, &s[0].o);
    while (si_next(&it, &el)) {
        int j;
        for (j = 1; j < nkeys; j++) {
            if (s[j].o.p == s[0].o.p)
                continue;
            if (!s_ismember_el(&s[j].o, &el))
                break;
        }
        if (j < nkeys)
            continue;
        if (card) {
            if (++n == limit)
                break;
        } else if (!dst) {
            reply_elem(c, &el);
            n++;
        } else {
            long long v;
            if (el.s && only_ints && !(s[0].o.enc == ENC_HT && str_to_ll(el.s, el.len, &v)))
                only_ints = 0;
            s_add_el(&out, &el);
        }
    }
    if (card) {
        reply_int(&c->out, (long long)n);
    } else if (dst) {
        if (only_ints && s_size(&out))
            s_maybe_to_intset(&out);
        reply_int(&c->out, (long long)store_set(c, dst, &out, "sinterstore"));
    } else {
        reply_defer_set(&c->out, mark, (long long)n);
    }
    sref_free(s, stack);
}

void sinter_command(struct client *c)
{
    sinter_generic(c, 1, c->argc - 1, 0, 0, 0);
}

void sinterstore_command(struct client *c)
{
    sinter_generic(c, 2, c->argc - 2, 1, 0, 0);
}

/* SINTERCARD numkeys: 1 <= numkeys <= argc - 2, strictly parsed. */
static int sintercard_numkeys(struct client *c, long long *n)
{
    return str_to_ll(c->argv[1], c->argvlen[1], n) && *n >= 1;
}

int sintercard_getkeys(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 1, 0, 0);
}

void sintercard_command(struct client *c)
{
    long long nkeys, limit = 0;
    if (!sintercard_numkeys(c, &nkeys)) {
        reply_error(&c->out, "ERR numkeys should be greater than 0");
        return;
    }
    if (nkeys > c->argc - 2) {
        reply_error(&c->out, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)nkeys; j < c->argc; j++) {
        if (arg_is(c, j, "limit") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &limit) || limit < 0) {
                reply_error(&c->out, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, 2, (int)nkeys, 0, 1, (unsigned long long)limit);
}

#define OP_UNION 0
#define OP_DIFF 1

static void sunion_diff_generic(struct client *c, int first, int nkeys, int dst, int op)
{
    struct sref stack[SREF_STACK], *s;
    int missing, sameset = 0, algo = 1;
    struct siter it;
    struct selem el;

    if (!(s = load_sets(c, first, nkeys, stack, &missing)))
        return;
    for (int j = 1; j < nkeys; j++)
        if (s[0].o.p && s[j].o.p == s[0].o.p)
            sameset = 1;
    if (op == OP_DIFF && s[0].o.p && !sameset) {
        /* Algorithm 1 (first set against the others) or 2 (add the first,
         * remove the others), whichever does less work, as Redis picks. */
        long long w1 = 0, w2 = 0;
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            w1 += (long long)s[0].n;
            w2 += (long long)s[j].n;
        }
        w1 /= 2;
        algo = w1 <= w2 ? 1 : 2;
        if (algo == 1 && nkeys > 1)
            qsort(s + 1, (size_t)nkeys - 1, sizeof(*s), sref_cmp_rsize);
    }

    struct sobj out = {is_new(), ENC_INTSET};
    if (op == OP_UNION) {
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            si_init(&it, &s[j].o);
            while (si_next(&it, &el))
                s_add_el(&out, &el);
        }
    } else if (s[0].o.p && !sameset && algo == 1) {
        si_init(&it, &s[0].o);
        while (si_next(&it, &el)) {
            int j;
            for (j = 1; j < nkeys; j++) {
                if (!s[j].o.p)
                    continue;
                if (s_ismember_el(&s[j].o, &el))
                    break;
            }
            if (j == nkeys)
                s_add_el(&out, &el);
        }
    } else if (s[0].o.p && !sameset) {
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            si_init(&it, &s[j].o);
            while (si_next(&it, &el)) {
                if (j == 0)
                    s_add_el(&out, &el);
                else
                    s_remove_el(&out, &el);
            }
            if (s_size(&out) == 0)
                break;
        }
    }
    sref_free(s, stack);
    if (dst) {
        reply_int(&c->out, (long long)store_set(c, dst, &out, op == OP_UNION ? "sunionstore" : "sdiffstore"));
    } else {
        reply_whole_set(c, &out);
        obj_free_value(OBJ_SET, out.enc, out.p);
    }
}

void sunion_command(struct client *c)
{
    sunion_diff_generic(c, 1, c->argc - 1, 0, OP_UNION);
}

void sunionstore_command(struct client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, 1, OP_UNION);
}

void sdiff_command(struct client *c)
{
    sunion_diff_generic(c, 1, c->argc - 1, 0, OP_DIFF);
}

void sdiffstore_command(struct client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, 1, OP_DIFF);
}

/* ---------------------------------------------------------------- SSCAN --- */
/* Redis 7.4's cursor rule: a non-negative 64-bit integer, or anything
 * strtoull takes whole (so "+5" and " 5" pass, "-1" does not). */
static int parse_cursor(const char *s, size_t len, unsigned long long *out)
{
    long long v;
    char buf[64], *end;
    if (str_to_ll(s, len, &v)) {
        if (v < 0)
            return 0;
        *out = (unsigned long long)v;
        return 1;
    }
    if (len == 0 || len >= sizeof(buf) || memchr(s, 0, len))
        return 0;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    *out = strtoull(buf, &end, 10);
    return errno != EINVAL && errno != ERANGE && *end == 0;
}

struct scan_acc {
    const struct smember **v;
    size_t n, cap;
    long long sampled;
    const char *pat;
    size_t plen;
};

static void scan_cb(void *arg, const struct dict_link *l)
{
    struct scan_acc *a = arg;
    const struct smember *m = (const struct smember *)l;
    a->sampled++;
    if (a->pat && !glob_match(a->pat, a->plen, m->s, m->len, 0))
        return;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = hk_realloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = m;
}

void sscan_command(struct client *c)
{
    unsigned long long cursor;
    long long count = 10;
    const char *pat = NULL;
    size_t plen = 0;
    int wrong;

    if (!parse_cursor(c->argv[2], c->argvlen[2], &cursor)) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    struct entry *e = lookup_set(c, 1, 0, &wrong);
    if (!e) {
        reply_scan_empty(c);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (scan_opts(c, &count, &pat, &plen, NULL) < 0)
        return;

    struct sobj o = sobj_of(e);
    if (o.enc != ENC_HT) {
        /* Small encodings: everything at once, cursor 0. */
        struct siter it;
        struct selem el;
        char buf[24];
        long long n = 0;
        reply_array(&c->out, 2);
        reply_bulk(&c->out, "0", 1);
        size_t mark = reply_defer(&c->out);
        si_init(&it, &o);
        while (si_next(&it, &el)) {
            size_t len;
            const char *s = el_str(&el, buf, &len);
            if (pat && !glob_match(pat, plen, s, len, 0))
                continue;
            reply_bulk(&c->out, s, len);
            n++;
        }
        reply_defer_array(&c->out, mark, n);
        return;
    }
    struct scan_acc acc = {NULL, 0, 0, 0, pat, plen};
    long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = dict_scan(o.p, cursor, scan_cb, &acc);
    } while (cursor && maxiter-- && acc.sampled < count);
    char cbuf[24];
    reply_array(&c->out, 2);
    reply_bulk(&c->out, cbuf, (size_t)ull_to_str(cbuf, cursor));
    reply_array(&c->out, (long long)acc.n);
    for (size_t i = 0; i < acc.n; i++)
        reply_bulk(&c->out, acc.v[i]->s, acc.v[i]->len);
    hk_free(acc.v);
}

/* ------------------------------------------------- RDB (persist/) --- */
struct entry *set_load_new(const char *key, size_t klen, long long expire, size_t hint)
{
    struct sobj o;
    if (hint <= intset_max()) {
        o.p = is_new();
        o.enc = ENC_INTSET;
    } else {
        o.p = dict_new(&set_dict_type, hint);
        o.enc = ENC_HT;
    }
    return entry_new_obj(OBJ_SET, o.enc, key, klen, o.p, expire);
}

int set_load_add(struct entry *e, const char *s, size_t len)
{
    struct sobj o = sobj_of(e);
    int r = s_add(&o, s, len);
    entry_set_ptr(e, o.p, o.enc);
    return r;
}

struct entry *set_load_finish(struct entry *e)
{
    if (e->enc == ENC_HT || (e->flags & E_INLINE))
        return e;
    void *p = entry_ptr(e);
    size_t n = s_raw_bytes(p, e->enc);
    if (!obj_inline_pays(entry_hdr(e) + e->klen, n, SET_INLINE_MAX))
        return e;
    struct entry *ne = obj_inline_new(OBJ_SET, e->enc, entry_key(e), e->klen, entry_expire(e), p, n);
    ne->lru = e->lru;
    entry_free(e); /* and p with it */
    return ne;
}
