/* hash.c - the hash value layer (types/hash.h): encodings, field
 * primitives, field TTLs and their expiry.  No client: the commands are in
 * cmd/t_hash.c.
 *
 * Encodings (entry->enc; the entry's value is a pointer to the structure):
 *
 *  - "listpack" (ENC_LISTPACK): field, value, field, value ... in one
 *    listpack (ds/listpack.h), in insertion order.  Used while the hash has
 *    at most hash-max-listpack-entries fields and every field and value is
 *    at most hash-max-listpack-value bytes.
 *  - "listpackex" (ENC_LISTPACK_EX): the same with a third element per
 *    field, its TTL as an integer (absolute unix ms, 0 = none).  Fields with
 *    a TTL come first in ascending TTL order (a field is placed before the
 *    first one whose TTL is >= its own), fields without one follow in
 *    insertion order, so the expired fields are always a prefix.  A listpack
 *    hash becomes listpackex on its first HEXPIRE* and stays so.
 *  - "hashtable" (ENC_HT): struct hht, a ds/dict.h table of struct hfield
 *    elements (one allocation each: link, lengths, optional TTL and heap
 *    slot, field bytes, value bytes) and a binary min-heap of the elements
 *    that have a TTL, so the sweeper finds the expired ones in O(log n).
 *
 * Conversions go one way, listpack(ex) -> hashtable, checked on every path
 * that adds or grows a field.
 *
 * Expired fields are invisible: commands that access a field delete it when
 * they find it expired (and the key when it was the last field, as Redis
 * 7.4 does); HGETALL/HKEYS/HVALS/HSCAN skip them; HLEN counts them and HDEL
 * deletes them like live ones (both as Redis).  The expiry sweeper (db.c)
 * calls hash_expire_fields() for entries flagged E_HFE; every write keeps
 * that flag in step with "the hash has a field TTL" (the handlers' hfe_sync).
 *
 * Callers hold the key's slot lock. */
#include <stdatomic.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/listpack.h"
#include "hash.h"
#include "types.h"

/* A listpack is converted before it would pass this size. */
#define LP_SAFE_BYTES (1u << 30)
/* Fields one sweeper call removes from one hash at most. */
#define HFE_SWEEP_MAX 4096

/* Fields removed because their TTL passed (INFO "expired_subkeys").  Not a
 * hot path: one relaxed atomic add per expiry event. */
static atomic_ullong subkeys_expired;

void hash_expired_subkeys_add(long n)
{
    if (n > 0)
        atomic_fetch_add_explicit(&subkeys_expired, (unsigned long long)n, memory_order_relaxed);
}

unsigned long long hash_expired_subkeys(void)
{
    return atomic_load_explicit(&subkeys_expired, memory_order_relaxed);
}

void hash_expired_subkeys_reset(void)
{
    atomic_store_explicit(&subkeys_expired, 0, memory_order_relaxed);
}

/* ------------------------------------------------- hashtable elements ---
 * (struct hfield, struct hht and their accessors: hash.h) */
static inline uint32_t hf_slot(const struct hfield *h)
{
    uint32_t i;
    memcpy(&i, h->data + 8, 4);
    return i;
}
static inline size_t hf_size(const struct hfield *h)
{
    return sizeof(*h) + (hf_has_ttl(h) ? HF_META : 0) + h->flen + hf_vlen(h);
}

static const char *hf_key(const struct dict_link *it, size_t *len)
{
    const struct hfield *h = (const struct hfield *)it;
    *len = h->flen;
    return (const char *)h->data + (hf_has_ttl(h) ? HF_META : 0);
}

static const struct dict_type hash_dict_type = {hf_key};

static struct hfield *hf_new(const char *f, size_t flen, const char *v, size_t vlen, long long ttl)
{
    size_t meta = ttl ? HF_META : 0;
    struct hfield *h = hk_malloc(sizeof(*h) + meta + flen + vlen);
    h->link.next = NULL;
    h->flen = (uint32_t)flen;
    h->vlen = (uint32_t)vlen | (ttl ? HF_TTL : 0);
    if (ttl) {
        uint32_t z = 0;
        memcpy(h->data, &ttl, 8);
        memcpy(h->data + 8, &z, 4);
    }
    memcpy(h->data + meta, f, flen);
    if (vlen)
        memcpy(h->data + meta + flen, v, vlen);
    return h;
}

static void hf_free_link(struct dict_link *l)
{
    hk_free(l);
}

/* ---- the TTL heap ---- */
static inline void heap_put(struct hht *t, uint32_t i, struct hfield *h)
{
    t->heap[i] = h;
    memcpy(h->data + 8, &i, 4);
}

static void heap_up(struct hht *t, uint32_t i)
{
    struct hfield *h = t->heap[i];
    long long k = hf_ttl(h);
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (hf_ttl(t->heap[p]) <= k)
            break;
        heap_put(t, i, t->heap[p]);
        i = p;
    }
    heap_put(t, i, h);
}

static void heap_down(struct hht *t, uint32_t i)
{
    struct hfield *h = t->heap[i];
    long long k = hf_ttl(h);
    for (;;) {
        uint32_t l = 2 * i + 1, m;
        if (l >= t->nheap)
            break;
        m = l;
        if (l + 1 < t->nheap && hf_ttl(t->heap[l + 1]) < hf_ttl(t->heap[l]))
            m = l + 1;
        if (hf_ttl(t->heap[m]) >= k)
            break;
        heap_put(t, i, t->heap[m]);
        i = m;
    }
    heap_put(t, i, h);
}

static void heap_add(struct hht *t, struct hfield *h)
{
    if (t->nheap == t->heapcap) {
        t->heapcap = t->heapcap ? t->heapcap * 2 : 4;
        t->heap = hk_realloc(t->heap, sizeof(*t->heap) * t->heapcap);
    }
    t->heap[t->nheap] = h;
    heap_up(t, t->nheap++);
}

static void heap_del(struct hht *t, struct hfield *h)
{
    uint32_t i = hf_slot(h);
    struct hfield *last = t->heap[--t->nheap];
    if (i != t->nheap) {
        heap_put(t, i, last);
        heap_up(t, i);
        heap_down(t, hf_slot(last));
    }
    if (t->nheap == 0) {
        hk_free(t->heap);
        t->heap = NULL;
        t->heapcap = 0;
    } else if (t->heapcap > 64 && t->nheap < t->heapcap / 4) {
        t->heapcap /= 2;
        t->heap = hk_realloc(t->heap, sizeof(*t->heap) * t->heapcap);
    }
}

static void heap_fix(struct hht *t, struct hfield *h)
{
    heap_up(t, hf_slot(h));
    heap_down(t, hf_slot(h));
}

/* ---- element operations that may move an element ---- */

/* Give h the value v; drop_ttl clears its TTL.  Returns the element (moved
 * when it had to be reallocated). */
static struct hfield *ht_set_value(struct hht *t, struct hfield *h, const char *v, size_t vlen, int drop_ttl)
{
    int had = hf_has_ttl(h), keep = had && !drop_ttl;
    size_t meta = keep ? HF_META : 0, need = sizeof(*h) + meta + h->flen + vlen;
    if (had == keep) {
        size_t u = hk_usable(h);
        if (need <= u && u <= need + need / 4 + 32) {
            if (vlen)
                memmove(hf_value(h), v, vlen);
            h->vlen = (uint32_t)vlen | (keep ? HF_TTL : 0);
            return h;
        }
    }
    struct hfield *n = hk_malloc(need);
    n->link.next = NULL;
    n->flen = h->flen;
    n->vlen = (uint32_t)vlen | (keep ? HF_TTL : 0);
    if (keep)
        memcpy(n->data, h->data, HF_META);
    memcpy(n->data + meta, hf_field(h), h->flen);
    if (vlen)
        memcpy(n->data + meta + h->flen, v, vlen);
    if (had && !keep)
        heap_del(t, h);
    dict_replace(t->d, &h->link, &n->link);
    if (keep)
        t->heap[hf_slot(n)] = n;
    hk_free(h);
    return n;
}

/* Set (ttl > 0) or clear (ttl == 0) the TTL of h. */
static struct hfield *ht_set_ttl(struct hht *t, struct hfield *h, long long ttl)
{
    if (ttl && hf_has_ttl(h)) {
        memcpy(h->data, &ttl, 8);
        heap_fix(t, h);
        return h;
    }
    if (!ttl && !hf_has_ttl(h))
        return h;
    struct hfield *n = hf_new(hf_field(h), h->flen, hf_value(h), hf_vlen(h), ttl);
    if (!ttl)
        heap_del(t, h);
    dict_replace(t->d, &h->link, &n->link);
    hk_free(h);
    if (ttl)
        heap_add(t, n);
    return n;
}

static void ht_delete(struct hht *t, struct hfield *h)
{
    dict_remove(t->d, hf_field(h), h->flen);
    if (hf_has_ttl(h))
        heap_del(t, h);
    hk_free(h);
}

static struct hht *hht_new(size_t hint)
{
    struct hht *t = hk_malloc(sizeof(*t));
    t->d = dict_new(&hash_dict_type, hint);
    t->heap = NULL;
    t->nheap = t->heapcap = 0;
    return t;
}

static void hht_free(struct hht *t)
{
    dict_free(t->d, hf_free_link);
    hk_free(t->heap);
    hk_free(t);
}

/* ------------------------------------------------ listpack utilities --- */

/* Add the triple (f, v, ttl) to a listpackex at its place in the order.
 * f and v must not point into lp. */
static unsigned char *lpx_add(unsigned char *lp, const struct lp_val *f, const struct lp_val *v, long long ttl)
{
    size_t pos = LP_NONE, fl, vl;
    char fb[32], vb[32], tb[32];
    if (ttl) {
        size_t p = lp_first(lp);
        while (p != LP_NONE) {
            size_t tp = lp_next(lp, lp_next(lp, p));
            long long pt = hash_lp_int(lp, tp);
            if (pt == 0 || pt >= ttl) {
                pos = p;
                break;
            }
            p = lp_next(lp, tp);
        }
    }
    const char *fs = hash_lpv_str(f, fb, &fl), *vs = hash_lpv_str(v, vb, &vl);
    if (pos == LP_NONE) {
        lp = lp_append(lp, fs, fl);
        lp = lp_append(lp, vs, vl);
        return lp_append_int(lp, ttl);
    }
    size_t tl = (size_t)ll_to_str(tb, ttl);
    lp = lp_insert(lp, pos, fs, fl);
    size_t p2 = lp_next(lp, pos);
    lp = lp_insert(lp, p2, vs, vl);
    return lp_insert(lp, lp_next(lp, p2), tb, tl);
}

/* Give the triple whose field is at fpos the TTL ttl (0 = none), moving it
 * to its place in the order when needed. */
static unsigned char *lpx_set_ttl(unsigned char *lp, size_t fpos, long long ttl)
{
    size_t vpos = lp_next(lp, fpos), tpos = lp_next(lp, vpos), next = lp_next(lp, tpos);
    int inplace;
    if (ttl == 0) {
        inplace = next == LP_NONE;
    } else {
        long long pt = fpos == lp_first(lp) ? -1 : hash_lp_int(lp, lp_prev(lp, fpos));
        long long nt = next == LP_NONE ? 0 : hash_lp_int(lp, lp_next(lp, lp_next(lp, next)));
        inplace = (pt == -1 || (pt != 0 && pt < ttl)) && (next == LP_NONE || nt == 0 || nt >= ttl);
    }
    if (inplace) {
        char tb[32];
        int n = ll_to_str(tb, ttl);
        return lp_replace(lp, tpos, tb, (size_t)n);
    }
    struct lp_val f, v;
    char stack[256], *heap = NULL, *buf;
    lp_get(lp, fpos, &f);
    lp_get(lp, vpos, &v);
    size_t need = (f.s ? f.len : 0) + (v.s ? v.len : 0);
    buf = need <= sizeof(stack) ? stack : (heap = hk_malloc(need));
    if (f.s) {
        memcpy(buf, f.s, f.len);
        f.s = (const unsigned char *)buf;
    }
    if (v.s) {
        memcpy(buf + (f.s ? f.len : 0), v.s, v.len);
        v.s = (const unsigned char *)buf + (f.s ? f.len : 0);
    }
    lp = lp_delete(lp, fpos, 3, NULL);
    lp = lpx_add(lp, &f, &v, ttl);
    hk_free(heap);
    return lp;
}

/* ---------------------------------------------------- the value layer --- */
void *hash_new(void)
{
    return lp_new();
}

size_t hash_length(struct entry *e)
{
    void *p = entry_ptr(e);
    switch (e->enc) {
    case ENC_LISTPACK: return lp_count(p) / 2;
    case ENC_LISTPACK_EX: return lp_count(p) / 3;
    default: return dict_size(((struct hht *)p)->d);
    }
}

int hash_find(struct entry *e, const char *f, size_t flen, struct hloc *l)
{
    if (e->enc == ENC_HT) {
        l->h = (struct hfield *)dict_find(((struct hht *)entry_ptr(e))->d, f, flen);
        return l->h != NULL;
    }
    unsigned char *lp = entry_ptr(e);
    size_t p = lp_first(lp);
    if (p == LP_NONE)
        return 0;
    p = lp_find(lp, p, f, flen, e->enc == ENC_LISTPACK ? 1 : 2);
    if (p == LP_NONE)
        return 0;
    l->f = p;
    l->v = lp_next(lp, p);
    l->t = e->enc == ENC_LISTPACK_EX ? lp_next(lp, l->v) : LP_NONE;
    return 1;
}

void hash_del_at(struct entry *e, struct hloc *l)
{
    if (e->enc == ENC_HT) {
        ht_delete(entry_ptr(e), l->h);
        return;
    }
    unsigned char *lp = lp_delete(entry_ptr(e), l->f, e->enc == ENC_LISTPACK ? 2 : 3, NULL);
    entry_set_ptr(e, lp, e->enc);
}

int hash_del(struct entry *e, const char *f, size_t flen)
{
    struct hloc l;
    if (!hash_find(e, f, flen, &l))
        return 0;
    hash_del_at(e, &l);
    return 1;
}

int hash_has_ttl(struct entry *e)
{
    if (e->enc == ENC_HT)
        return ((struct hht *)entry_ptr(e))->nheap > 0;
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        return p != LP_NONE && hash_lp_int(lp, lp_next(lp, lp_next(lp, p))) != 0;
    }
    return 0;
}

void hash_convert_ht(struct entry *e, size_t hint)
{
    if (e->enc == ENC_HT)
        return;
    unsigned char *lp = entry_ptr(e);
    int ex = e->enc == ENC_LISTPACK_EX;
    size_t n = lp_count(lp) / (ex ? 3 : 2);
    struct hht *t = hht_new(hint > n ? hint : n);
    size_t p = lp_first(lp);
    while (p != LP_NONE) {
        struct lp_val f, v;
        char fb[32], vb[32];
        size_t fl, vl, vp = lp_next(lp, p);
        long long ttl = 0;
        lp_get(lp, p, &f);
        lp_get(lp, vp, &v);
        p = lp_next(lp, vp);
        if (ex) {
            ttl = hash_lp_int(lp, p);
            p = lp_next(lp, p);
        }
        const char *fs = hash_lpv_str(&f, fb, &fl), *vs = hash_lpv_str(&v, vb, &vl);
        struct hfield *h = hf_new(fs, fl, vs, vl, ttl);
        dict_add(t->d, &h->link);
        if (ttl)
            heap_add(t, h);
    }
    lp_free(lp);
    entry_set_ptr(e, t, ENC_HT);
}

/* listpack -> listpackex (every field without a TTL). */
static void hash_convert_lpex(struct entry *e)
{
    unsigned char *lp = entry_ptr(e), *nl = lp_new();
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        struct lp_val v;
        char b[32];
        size_t n;
        const char *s;
        for (int k = 0; k < 2; k++) {
            if (k)
                p = lp_next(lp, p);
            lp_get(lp, p, &v);
            s = hash_lpv_str(&v, b, &n);
            nl = lp_append(nl, s, n);
        }
        nl = lp_append_int(nl, 0);
    }
    lp_free(lp);
    entry_set_ptr(e, nl, ENC_LISTPACK_EX);
}

int hash_set(struct entry *e, const char *f, size_t flen, const char *v, size_t vlen, int keep_ttl)
{
    struct hloc l;
    if (e->enc != ENC_HT && (flen > (size_t)hash_max_listpack_value || vlen > (size_t)hash_max_listpack_value))
        hash_convert_ht(e, 0);
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        struct hfield *h = (struct hfield *)dict_find(t->d, f, flen);
        if (h) {
            long long ttl = hf_ttl(h);
            int expired = hash_ttl_expired(ttl, db_now_ms());
            ht_set_value(t, h, v, vlen, !keep_ttl || expired);
            return expired;
        }
        h = hf_new(f, flen, v, vlen, 0);
        dict_add(t->d, &h->link);
        return 1;
    }
    unsigned char *lp = entry_ptr(e);
    int ex = e->enc == ENC_LISTPACK_EX, created = 1;
    if (hash_find(e, f, flen, &l)) {
        long long ttl = ex ? hash_lp_int(lp, l.t) : 0;
        int expired = hash_ttl_expired(ttl, db_now_ms());
        lp = lp_replace(lp, l.v, v, vlen);
        if (ttl && (!keep_ttl || expired))
            lp = lpx_set_ttl(lp, l.f, 0);
        entry_set_ptr(e, lp, e->enc);
        return expired;
    }
    lp = lp_append(lp, f, flen);
    lp = lp_append(lp, v, vlen);
    if (ex)
        lp = lp_append_int(lp, 0);
    entry_set_ptr(e, lp, e->enc);
    if (lp_count(lp) / (ex ? 3 : 2) > (size_t)hash_max_listpack_entries)
        hash_convert_ht(e, 0);
    return created;
}

long long hash_field_ttl(struct entry *e, const char *f, size_t flen, long long now)
{
    struct hloc l;
    if (!hash_find(e, f, flen, &l))
        return -2;
    long long t = hash_loc_ttl(e, &l);
    return hash_ttl_expired(t, now) ? -2 : t;
}

static void hloc_set_ttl(struct entry *e, struct hloc *l, long long ttl)
{
    if (e->enc == ENC_HT) {
        l->h = ht_set_ttl(entry_ptr(e), l->h, ttl);
        return;
    }
    entry_set_ptr(e, lpx_set_ttl(entry_ptr(e), l->f, ttl), e->enc);
}

int hash_set_field_ttl(struct entry *e, const char *f, size_t flen, long long at, int cond, long long now)
{
    struct hloc l;
    if (e->enc == ENC_LISTPACK)
        hash_convert_lpex(e);
    if (!hash_find(e, f, flen, &l))
        return -2;
    long long prev = hash_loc_ttl(e, &l);
    if (hash_ttl_expired(prev, now)) {
        /* Invisible already: drop it now and answer as for a missing field. */
        hash_del_at(e, &l);
        hash_expired_subkeys_add(1);
        return -2;
    }
    if (prev == 0) {
        /* A field without a TTL passes NX and LT, fails XX and GT. */
        if (cond & (HFE_XX | HFE_GT))
            return 0;
    } else if (cond == HFE_NX || (cond == HFE_GT && prev >= at) || (cond == HFE_LT && prev <= at)) {
        return 0;
    }
    if (at <= now && !(db_loading | db_master_apply)) {
        hash_del_at(e, &l);
        hash_expired_subkeys_add(1);
        return 2;
    }
    hloc_set_ttl(e, &l, at);
    return 1;
}

int hash_persist_field(struct entry *e, const char *f, size_t flen, long long now)
{
    struct hloc l;
    if (!hash_find(e, f, flen, &l))
        return -2;
    long long prev = hash_loc_ttl(e, &l);
    if (prev == 0)
        return -1;
    if (hash_ttl_expired(prev, now))
        return -2;
    hloc_set_ttl(e, &l, 0);
    return 1;
}

/* Propagation of fields dropped because their TTL passed: HDEL <key>
 * <field> on the AOF, as Redis 7.4, so that a replay (where nothing
 * expires) drops them at the same point.  This layer cannot feed the AOF
 * itself: each field goes to db_hash_field_expired_hook (set by cmd/ at
 * start-up).  Set around the drops by a command or the sweeper; off (RDB
 * loading) otherwise. */
static _Thread_local struct {
    int on, db;
    const char *key;
    size_t klen;
} hexp;

void hash_expire_prop_begin(int db, const char *key, size_t klen)
{
    hexp.on = 1;
    hexp.db = db;
    hexp.key = key;
    hexp.klen = klen;
}

void hash_expire_prop_end(void)
{
    hexp.on = 0;
}

static void hexp_field(const char *f, size_t flen)
{
    if (!hexp.on || !db_hash_field_expired_hook)
        return;
    db_hash_field_expired_hook(hexp.db, hexp.key, hexp.klen, f, flen);
}

long hash_drop_expired(struct entry *e, long long now, long max)
{
    long n = 0;
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        while (n < max && t->nheap && hf_ttl(t->heap[0]) <= now) {
            if (hexp.on) {
                struct hfield *h = t->heap[0];
                hexp_field(hf_field(h), h->flen);
            }
            ht_delete(t, t->heap[0]);
            n++;
        }
        hash_expired_subkeys_add(n);
        return n;
    }
    if (e->enc != ENC_LISTPACK_EX)
        return 0;
    unsigned char *lp = entry_ptr(e);
    size_t p = lp_first(lp);
    while (p != LP_NONE && n < max) {
        size_t tp = lp_next(lp, lp_next(lp, p));
        if (!hash_ttl_expired(hash_lp_int(lp, tp), now))
            break;
        if (hexp.on) {
            struct lp_val fv;
            char nb[24];
            size_t fl;
            lp_get(lp, p, &fv);
            const char *fs = hash_lpv_str(&fv, nb, &fl);
            hexp_field(fs, fl);
        }
        n++;
        p = lp_next(lp, tp);
    }
    if (n) {
        lp = lp_delete(lp, lp_first(lp), (size_t)n * 3, NULL);
        entry_set_ptr(e, lp, e->enc);
    }
    hash_expired_subkeys_add(n);
    return n;
}

/* listpackex: the expired fields are the prefix. */
size_t hash_count_expired(struct entry *e, long long now, size_t *first)
{
    size_t n = 0;
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        while (p != LP_NONE) {
            size_t tp = lp_next(lp, lp_next(lp, p));
            if (!hash_ttl_expired(hash_lp_int(lp, tp), now))
                break;
            n++;
            p = lp_next(lp, tp);
        }
        *first = p;
    } else if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        for (uint32_t i = 0; i < t->nheap; i++)
            n += hf_ttl(t->heap[i]) <= now;
    } else {
        *first = lp_first(entry_ptr(e));
    }
    return n;
}

long long hash_min_field_ttl(struct entry *e)
{
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        return t->nheap ? hf_ttl(t->heap[0]) : 0;
    }
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        return p == LP_NONE ? 0 : hash_lp_int(lp, lp_next(lp, lp_next(lp, p)));
    }
    return 0;
}

/* ---------------------------------------------------- inline listpacks ---
 * (hash.h: hash_detach, hash_attach_at) */
#ifdef E_INLINE
/* The part of hash_attach_at past its early-outs (a listpack pointer
 * entry). */
void hash_attach_slow(int db, unsigned slot, struct entry *e)
{
    unsigned char *lp = entry_ptr(e);
    size_t n = lp_bytes(lp), base = entry_hdr(e) + entry_klen(e);
    if (n > HASH_INLINE_MAX)
        return;
    /* The inline value keeps room for the (aligned) pointer form. */
    size_t vlen = obj_inline_vlen(base, n), u = hk_usable(e);
    if (base + vlen <= u && (db < 0 || u - (base + vlen) < 16 + (base + vlen) / 8)) {
        memcpy(entry_val(e), lp, n);
        entry_set_vlen(e, vlen); /* <= HASH_INLINE_MAX: fits either header */
        e->flags |= E_INLINE;
        lp_free(lp);
        return;
    }
    if (db < 0)
        return;
    struct entry *ne = obj_inline_new(OBJ_HASH, e->enc, entry_key(e), entry_klen(e), entry_expire(e), lp, n);
    entry_set_lru(ne, entry_lru(e));
    ne->flags |= (uint8_t)(e->flags & E_HFE);
    db_set(db, slot, ne); /* frees e, and lp with it */
}
#endif

/* ------------------------------------------------------------ type_ops --- */
static void hash_free(void *p, uint8_t enc)
{
    if (enc == ENC_HT)
        hht_free(p);
    else
        lp_free(p);
}

static void *hash_dup(const void *p, uint8_t enc)
{
    if (enc != ENC_HT)
        return hk_memdup(p, lp_bytes(p));
    const struct hht *t = p;
    struct hht *n = hht_new(dict_size(t->d));
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(t->d, &it)) != NULL) {
        struct hfield *h = hk_memdup(l, hf_size((struct hfield *)l));
        dict_add(n->d, &h->link);
        if (hf_has_ttl(h))
            heap_add(n, h);
    }
    return n;
}

static size_t hash_mem(const void *p, uint8_t enc)
{
    if (enc != ENC_HT)
        return hk_usable((void *)p);
    const struct hht *t = p;
    size_t n = hk_usable((void *)t) + dict_mem(t->d) + (t->heap ? hk_usable(t->heap) : 0);
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    while ((l = dict_next(t->d, &it)) != NULL)
        n += hk_usable(l);
    return n;
}

static size_t hash_len_op(const void *p, uint8_t enc)
{
    switch (enc) {
    case ENC_LISTPACK: return lp_count(p) / 2;
    case ENC_LISTPACK_EX: return lp_count(p) / 3;
    default: return dict_size(((const struct hht *)p)->d);
    }
}

static size_t hash_effort(const void *p, uint8_t enc)
{
    return enc == ENC_HT ? dict_size(((const struct hht *)p)->d) + 1 : 1;
}

/* (expire_fields: hash_expire_fields below, the sweeper's entry point.) */
const struct type_ops hash_type_ops = {hash_free, hash_dup, hash_mem, hash_len_op, hash_effort, hash_expire_fields};

/* ------------------------------------------------- cross-module entry ---
 * (hash_expire_fields is also hash_type_ops.expire_fields: db.c's sweeper) */
int hash_get_field(struct entry *e, const char *f, size_t flen, const char **v, size_t *vlen, char *ibuf)
{
    struct hloc l;
    struct lp_val val;
    if (e->type != OBJ_HASH || !hash_find(e, f, flen, &l) || hash_ttl_expired(hash_loc_ttl(e, &l), db_now_ms()))
        return 0;
    hash_loc_val(e, &l, &val);
    *v = hash_lpv_str(&val, ibuf, vlen);
    return 1;
}

long hash_expire_fields(int db, struct entry *e, unsigned slot, long long now, int *empty)
{
    long n = 0;
    long long first = hash_min_field_ttl(e);
    if (first && first <= now) {
        hash_detach(e);
        hash_expire_prop_begin(db, entry_key(e), entry_klen(e));
        n = hash_drop_expired(e, now, HFE_SWEEP_MAX);
        hash_expire_prop_end();
    }
    *empty = hash_length(e) == 0;
    if (!*empty) {
        if (!hash_has_ttl(e))
            db_set_hfe(0, slot, e, 0); /* db is not used for the flag */
        hash_attach_at(-1, slot, e);
    }
    return n;
}

/* hashTypeTryConversion's rule (only the lengths decide). */
void hash_try_convert(struct entry *e, const size_t *len, int from, int to)
{
    size_t sum = 0, npairs = (size_t)(to - from + 1) / 2;
    if (e->enc == ENC_HT)
        return;
    if (npairs > (size_t)hash_max_listpack_entries) {
        hash_convert_ht(e, npairs);
        return;
    }
    for (int i = from; i <= to; i++) {
        if (len[i] > (size_t)hash_max_listpack_value) {
            hash_convert_ht(e, 0);
            return;
        }
        sum += len[i];
    }
    if (lp_bytes(entry_ptr(e)) + sum > LP_SAFE_BYTES)
        hash_convert_ht(e, 0);
}

/* ------------------------------------------------- RDB (persist/) --- */
int hash_visit_fields(struct entry *e, hash_field_fn fn, void *arg)
{
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        struct dict_iter it = {0, NULL};
        struct dict_link *l;
        while ((l = dict_next(t->d, &it)) != NULL) {
            struct hfield *h = (struct hfield *)l;
            int r = fn(arg, hf_field(h), h->flen, hf_value(h), hf_vlen(h), hf_ttl(h));
            if (r)
                return r;
        }
        return 0;
    }
    unsigned char *lp = entry_ptr(e);
    int ex = e->enc == ENC_LISTPACK_EX;
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        struct lp_val f, v;
        char fb[32], vb[32];
        size_t fl, vl, vp = lp_next(lp, p);
        long long ttl = 0;
        lp_get(lp, p, &f);
        lp_get(lp, vp, &v);
        p = lp_next(lp, vp);
        if (ex) {
            ttl = hash_lp_int(lp, p);
            p = lp_next(lp, p);
        }
        const char *fs = hash_lpv_str(&f, fb, &fl), *vs = hash_lpv_str(&v, vb, &vl);
        int r = fn(arg, fs, fl, vs, vl, ttl);
        if (r)
            return r;
    }
    return 0;
}

struct entry *hash_load_finish(struct entry *e)
{
#ifdef E_INLINE
    if (e->enc == ENC_HT || (e->flags & E_INLINE))
        return e;
    unsigned char *lp = entry_ptr(e);
    size_t n = lp_bytes(lp);
    if (n > HASH_INLINE_MAX)
        return e;
    struct entry *ne = obj_inline_new(OBJ_HASH, e->enc, entry_key(e), entry_klen(e), entry_expire(e), lp, n);
    entry_set_lru(ne, entry_lru(e));
    ne->flags |= (uint8_t)(e->flags & E_HFE);
    entry_free(e); /* and lp with it */
    return ne;
#else
    return e;
#endif
}
