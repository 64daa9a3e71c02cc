/* set.c - the set value (types/set.h): encodings, conversions, element
 * primitives, random picks, type ops, inline entries, RDB builders. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "set.h"
#include "types.h"

/* ---------------------------------------------------------- members --- */
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
#define LP_SAFETY_SIZE (1UL << 30) /* as Redis: a listpack never grows past 1 GB */

static inline size_t lim(int v)
{
    return v < 0 ? 0 : (size_t)v;
}

static inline size_t intset_max(void)
{
    size_t m = lim(set_max_intset_entries);
    return m > (1UL << 30) ? (1UL << 30) : m;
}

void sobj_free(void *p, uint8_t enc)
{
    switch (enc) {
    case ENC_INTSET: is_free(p); break;
    case ENC_LISTPACK: lp_free(p); break;
    default: dict_free(p, sm_free); break;
    }
}

/* (A listpack stores every canonical integer string as an integer.) */
size_t set_lp_find_ll(const unsigned char *lp, long long v)
{
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        struct lp_val x;
        lp_get(lp, p, &x);
        if (!x.s && x.ll == v)
            return p;
    }
    return LP_NONE;
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
            const char *s = selem_str(&el, buf, &n);
            dict_add(d, &sm_new(s, n)->link);
        }
        np = d;
    } else {
        unsigned char *lp = lp_new();
        while (si_next(&it, &el))
            lp = el.s ? lp_append(lp, el.s, el.len) : lp_append_int(lp, el.ll);
        np = lp;
    }
    sobj_free(o->p, o->enc);
    o->p = np;
    o->enc = enc;
}

void sobj_create(struct sobj *o, const char *s, size_t len, size_t hint)
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

void sobj_empty(struct sobj *o, uint8_t enc)
{
    o->enc = enc;
    o->p = enc == ENC_INTSET ? (void *)is_new() : (void *)lp_new();
}

void sobj_maybe_convert(struct sobj *o, size_t hint)
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

int sobj_add(struct sobj *o, const char *s, size_t len)
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

int sobj_add_el(struct sobj *o, const struct selem *el)
{
    if (el->s)
        return sobj_add(o, el->s, el->len);
    if (o->enc == ENC_INTSET)
        return s_add_int_intset(o, el->ll);
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return sobj_add(o, buf, n);
}

int sobj_remove(struct sobj *o, const char *s, size_t len)
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

int sobj_remove_el(struct sobj *o, const struct selem *el)
{
    if (el->s)
        return sobj_remove(o, el->s, el->len);
    if (o->enc == ENC_INTSET) {
        int changed = 0;
        o->p = is_remove(o->p, el->ll, &changed);
        return changed;
    }
    char buf[24];
    size_t n = (size_t)ll_to_str(buf, el->ll);
    return sobj_remove(o, buf, n);
}

void sobj_maybe_to_intset(struct sobj *o)
{
    if (o->enc == ENC_INTSET || sobj_size(o) > intset_max())
        return;
    unsigned char *is = is_new();
    struct siter it;
    struct selem el;
    si_init(&it, o);
    while (si_next(&it, &el)) {
        long long v = el.s ? 0 : el.ll; /* (el.ll is unset for a hashtable's strings) */
        if (el.s && !str_to_ll(el.s, el.len, &v)) {
            is_free(is);
            return;
        }
        is = is_add(is, v, NULL);
    }
    sobj_free(o->p, o->enc);
    o->p = is;
    o->enc = ENC_INTSET;
}

/* --------------------------------------------------------------- random --- */
void sobj_random(const struct sobj *o, struct selem *el)
{
    size_t n;
    if (o->enc == ENC_INTSET) {
        n = is_len(o->p);
        el->s = NULL;
        el->ll = is_get(o->p, (size_t)set_rand_below(n));
    } else if (o->enc == ENC_LISTPACK) {
        struct lp_val v;
        n = lp_count(o->p);
        lp_get(o->p, lp_seek(o->p, (long long)set_rand_below(n)), &v);
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
    return need && (size_t)set_rand_below(left) < need;
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

static inline void el_of_lp(struct selem *el, const struct lp_val *v)
{
    el->s = (const char *)v->s;
    el->len = v->len;
    el->ll = v->ll;
}

void sobj_random_repeat(const struct sobj *o, unsigned long long count, selem_fn fn, void *arg)
{
    struct selem el;
    if (o->enc == ENC_LISTPACK && count > 8) {
        /* Index the listpack once: each pick is then O(1). */
        size_t n = lp_count(o->p), k = 0;
        size_t *off = hk_malloc(n * sizeof(size_t));
        for (size_t p = lp_first(o->p); p != LP_NONE; p = lp_next(o->p, p))
            off[k++] = p;
        while (count--) {
            struct lp_val v;
            lp_get(o->p, off[set_rand_below(n)], &v);
            el_of_lp(&el, &v);
            if (fn(arg, &el))
                break;
        }
        hk_free(off);
        return;
    }
    while (count--) {
        sobj_random(o, &el);
        if (fn(arg, &el))
            break;
    }
}

void sobj_random_distinct(const struct sobj *o, size_t count, selem_fn fn, void *arg)
{
    size_t size = sobj_size(o);
    struct selem el;
    if (o->enc == ENC_LISTPACK || count * 3 > size) {
        /* One pass of selection sampling. */
        struct siter it;
        size_t left = size, need = count;
        si_init(&it, o);
        while (need && si_next(&it, &el)) {
            if (pick(need, left--)) {
                need--;
                fn(arg, &el);
            }
        }
        return;
    }
    /* A big set and few members wanted: random picks, duplicates skipped. */
    struct u64set seen;
    u64set_init(&seen, count);
    while (count) {
        if (o->enc == ENC_INTSET) {
            size_t i = (size_t)set_rand_below(size);
            if (u64set_add(&seen, (uint64_t)i + 1)) {
                el.s = NULL;
                el.ll = is_get(o->p, i);
                fn(arg, &el);
                count--;
            }
        } else {
            const struct smember *m = (const struct smember *)dict_random(o->p);
            if (u64set_add(&seen, (uint64_t)(uintptr_t)m)) {
                el.s = m->s;
                el.len = m->len;
                fn(arg, &el);
                count--;
            }
        }
    }
    hk_free(seen.t);
}

void sobj_pop_one(struct sobj *o, selem_fn fn, void *arg)
{
    struct selem el;
    if (o->enc == ENC_LISTPACK) {
        struct lp_val v;
        size_t pos = lp_seek(o->p, (long long)set_rand_below(lp_count(o->p)));
        lp_get(o->p, pos, &v);
        el_of_lp(&el, &v);
        fn(arg, &el);
        o->p = lp_delete(o->p, pos, 1, NULL);
    } else if (o->enc == ENC_INTSET) {
        long long v = is_get(o->p, (size_t)set_rand_below(is_len(o->p)));
        el.s = NULL;
        el.ll = v;
        fn(arg, &el);
        o->p = is_remove(o->p, v, NULL);
    } else {
        struct smember *m = (struct smember *)dict_random(o->p);
        el.s = m->s;
        el.len = m->len;
        fn(arg, &el);
        dict_remove(o->p, m->s, m->len);
        sm_free(&m->link);
    }
}

size_t set_pop_some(struct entry *e, size_t count, selem_fn fn, void *arg)
{
    struct sobj o = sobj_of(e);
    size_t size = sobj_size(&o), remaining = size - count;
    struct selem el;

    if (o.enc == ENC_LISTPACK) {
        /* One pass: the chosen members are passed on, the others copied to
         * the new listpack (insertion order kept). */
        unsigned char *lp = o.p, *nl = lp_new();
        size_t left = size, need = count;
        for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), left--) {
            struct lp_val v;
            lp_get(lp, p, &v);
            if (pick(need, left)) {
                need--;
                el_of_lp(&el, &v);
                fn(arg, &el);
            } else {
                nl = v.s ? lp_append(nl, (const char *)v.s, v.len) : lp_append_int(nl, v.ll);
            }
        }
        size_t was = set_release(e, &o);
        entry_set_ptr(e, nl, ENC_LISTPACK);
        return was;
    }
    if (o.enc == ENC_INTSET) {
        unsigned char *is = o.p, *ni = is_new();
        size_t left = size, need = count;
        for (size_t i = 0; i < size; i++, left--) {
            long long v = is_get(is, i);
            if (pick(need, left)) {
                need--;
                el.s = NULL;
                el.ll = v;
                fn(arg, &el);
            } else {
                ni = is_add(ni, v, NULL);
            }
        }
        size_t was = set_release(e, &o);
        entry_set_ptr(e, ni, ENC_INTSET);
        return was;
    }
    struct dict *d = o.p;
    if (remaining * 5 > count) {
        /* Few to pop: take random members out one by one. */
        while (count--) {
            struct smember *m = (struct smember *)dict_random(d);
            el.s = m->s;
            el.len = m->len;
            fn(arg, &el);
            dict_remove(d, m->s, m->len);
            sm_free(&m->link);
        }
        return 0;
    }
    /* Most of the set goes: move the few that stay into a new set (small
     * again: listpack or hashtable by the usual rules), pass on the rest. */
    struct sobj ns = {lp_new(), ENC_LISTPACK};
    while (remaining--) {
        struct smember *m = (struct smember *)dict_random(d);
        sobj_add(&ns, m->s, m->len);
        dict_remove(d, m->s, m->len);
        sm_free(&m->link);
    }
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(d, &it)) != NULL) {
        el.s = ((struct smember *)l)->s;
        el.len = ((struct smember *)l)->len;
        fn(arg, &el);
    }
    entry_set_ptr(e, ns.p, ns.enc);
    obj_free_value(OBJ_SET, ENC_HT, d);
    return 0;
}

struct ht_scan {
    void (*fn)(void *arg, const char *s, size_t len);
    void *arg;
};

static void ht_scan_cb(void *arg, const struct dict_link *l)
{
    struct ht_scan *h = arg;
    const struct smember *m = (const struct smember *)l;
    h->fn(h->arg, m->s, m->len);
}

unsigned long long sobj_ht_scan(const struct sobj *o, unsigned long long cursor,
                                void (*fn)(void *arg, const char *s, size_t len), void *arg)
{
    struct ht_scan h = {fn, arg};
    return dict_scan(o->p, cursor, ht_scan_cb, &h);
}

/* ------------------------------------------------------------ type ops --- */
static void set_free(void *p, uint8_t enc)
{
    sobj_free(p, enc);
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
    return sobj_size(&o);
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
        const char *s = selem_str(&el, buf, &n);
        if (fn(arg, s, n))
            break;
    }
}

/* ---------------------------------------------------- inline values --- */
#define SET_INLINE_MAX 256
_Static_assert(SET_INLINE_MAX <= ENTRY_SHORT_VLEN, "obj_entry_base: inline values fit the short header");

static inline size_t s_raw_bytes(const void *p, uint8_t enc)
{
    return enc == ENC_INTSET ? is_bytes(p) : lp_bytes(p);
}

size_t set_detach(struct entry *e)
{
    if (!(e->flags & E_INLINE))
        return 0;
    return obj_inline_detach(e, s_raw_bytes(entry_val(e), e->enc));
}

size_t set_release(struct entry *e, const struct sobj *o)
{
    if (e->flags & E_INLINE) {
        size_t was = entry_size(e);
        e->flags &= (uint8_t)~E_INLINE;
        return was;
    }
    sobj_free(o->p, o->enc);
    return 0;
}

struct entry *set_entry_new(const char *key, size_t klen, void *p, uint8_t enc)
{
    if (enc != ENC_HT) {
        size_t n = s_raw_bytes(p, enc);
        if (obj_inline_pays(obj_entry_base(klen, -1), n, SET_INLINE_MAX)) {
            struct entry *e = obj_inline_new(OBJ_SET, enc, key, klen, -1, p, n);
            sobj_free(p, enc);
            return e;
        }
    }
    return entry_new_obj(OBJ_SET, enc, key, klen, p, -1);
}

struct entry *set_attach(struct entry *e, size_t was)
{
    if (e->enc == ENC_HT || (e->flags & E_INLINE))
        return NULL;
    void *p = entry_ptr(e);
    struct entry *ne;
    if (obj_inline_attach(e, s_raw_bytes(p, e->enc), SET_INLINE_MAX, was, &ne)) {
        sobj_free(p, e->enc);
        return NULL;
    }
    return ne;
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
    int r = sobj_add(&o, s, len);
    entry_set_ptr(e, o.p, o.enc);
    return r;
}

struct entry *set_load_finish(struct entry *e)
{
    if (e->enc == ENC_HT || (e->flags & E_INLINE))
        return e;
    void *p = entry_ptr(e);
    size_t n = s_raw_bytes(p, e->enc);
    if (!obj_inline_pays(entry_hdr(e) + entry_klen(e), n, SET_INLINE_MAX))
        return e;
    struct entry *ne = obj_inline_new(OBJ_SET, e->enc, entry_key(e), entry_klen(e), entry_expire(e), p, n);
    entry_set_lru(ne, entry_lru(e));
    entry_free(e); /* and p with it */
    return ne;
}
