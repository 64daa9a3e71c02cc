/* t_hash.c - the hash type: HSET ... HSCAN and field expiry (HEXPIRE ...).
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
 * that flag in step with "the hash has a field TTL" (hfe_sync).
 *
 * Handlers run with the key's slot lock held by the dispatcher. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/listpack.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"

/* The largest absolute field expiry accepted (ms), as Redis 7.4. */
#define HFE_MAX_MS ((1LL << 46) - 1)
/* A listpack is converted before it would pass this size. */
#define LP_SAFE_BYTES (1u << 30)
/* Fields one sweeper call removes from one hash at most. */
#define HFE_SWEEP_MAX 4096
/* HRANDFIELD with a huge negative count: stop (and close) past this much
 * pending output instead of building an endless reply. */
#define HRAND_MAX_REPLY (512ull << 20)

/* Fields removed because their TTL passed (INFO "expired_subkeys").  Not a
 * hot path: one relaxed atomic add per expiry event. */
static atomic_ullong subkeys_expired;

static inline void count_expired(long n)
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

/* ------------------------------------------------- hashtable elements --- */
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
static inline const char *lpv_str(const struct lp_val *v, char *buf, size_t *len)
{
    if (v->s) {
        *len = v->len;
        return (const char *)v->s;
    }
    *len = (size_t)ll_to_str(buf, v->ll);
    return buf;
}

static inline void reply_lpv(struct reply *r, const struct lp_val *v)
{
    if (v->s)
        reply_bulk(r, (const char *)v->s, v->len);
    else
        reply_bulk_ll(r, v->ll);
}

/* The integer at pos (a listpackex TTL element). */
static inline long long lp_int_at(const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    return v.s ? 0 : v.ll;
}

static inline int ttl_expired(long long ttl, long long now)
{
    /* Replaying an AOF, no field counts as expired (db.h: db_loading). */
    return ttl != 0 && ttl <= now && !db_loading;
}

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
            long long pt = lp_int_at(lp, tp);
            if (pt == 0 || pt >= ttl) {
                pos = p;
                break;
            }
            p = lp_next(lp, tp);
        }
    }
    const char *fs = lpv_str(f, fb, &fl), *vs = lpv_str(v, vb, &vl);
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
        long long pt = fpos == lp_first(lp) ? -1 : lp_int_at(lp, lp_prev(lp, fpos));
        long long nt = next == LP_NONE ? 0 : lp_int_at(lp, lp_next(lp, lp_next(lp, next)));
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

/* A located field: listpack offsets (t is LP_NONE in a plain listpack) or
 * a hashtable element. */
struct hloc {
    size_t f, v, t;
    struct hfield *h;
};

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

static int hfind(struct entry *e, const char *f, size_t flen, struct hloc *l)
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

static inline long long hloc_ttl(struct entry *e, const struct hloc *l)
{
    if (e->enc == ENC_HT)
        return hf_ttl(l->h);
    if (e->enc == ENC_LISTPACK_EX)
        return lp_int_at(entry_ptr(e), l->t);
    return 0;
}

static inline void hloc_val(struct entry *e, const struct hloc *l, struct lp_val *v)
{
    if (e->enc == ENC_HT) {
        v->s = (const unsigned char *)hf_value(l->h);
        v->len = hf_vlen(l->h);
        v->ll = 0;
    } else {
        lp_get(entry_ptr(e), l->v, v);
    }
}

static void hdel_at(struct entry *e, struct hloc *l)
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
    if (!hfind(e, f, flen, &l))
        return 0;
    hdel_at(e, &l);
    return 1;
}

int hash_has_ttl(struct entry *e)
{
    if (e->enc == ENC_HT)
        return ((struct hht *)entry_ptr(e))->nheap > 0;
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        return p != LP_NONE && lp_int_at(lp, lp_next(lp, lp_next(lp, p))) != 0;
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
            ttl = lp_int_at(lp, p);
            p = lp_next(lp, p);
        }
        const char *fs = lpv_str(&f, fb, &fl), *vs = lpv_str(&v, vb, &vl);
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
            s = lpv_str(&v, b, &n);
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
            int expired = ttl_expired(ttl, db_now_ms());
            ht_set_value(t, h, v, vlen, !keep_ttl || expired);
            return expired;
        }
        h = hf_new(f, flen, v, vlen, 0);
        dict_add(t->d, &h->link);
        return 1;
    }
    unsigned char *lp = entry_ptr(e);
    int ex = e->enc == ENC_LISTPACK_EX, created = 1;
    if (hfind(e, f, flen, &l)) {
        long long ttl = ex ? lp_int_at(lp, l.t) : 0;
        int expired = ttl_expired(ttl, db_now_ms());
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
    if (!hfind(e, f, flen, &l))
        return -2;
    long long t = hloc_ttl(e, &l);
    return ttl_expired(t, now) ? -2 : t;
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
    if (!hfind(e, f, flen, &l))
        return -2;
    long long prev = hloc_ttl(e, &l);
    if (ttl_expired(prev, now)) {
        /* Invisible already: drop it now and answer as for a missing field. */
        hdel_at(e, &l);
        count_expired(1);
        return -2;
    }
    if (prev == 0) {
        /* A field without a TTL passes NX and LT, fails XX and GT. */
        if (cond & (HFE_XX | HFE_GT))
            return 0;
    } else if (cond == HFE_NX || (cond == HFE_GT && prev >= at) || (cond == HFE_LT && prev <= at)) {
        return 0;
    }
    if (at <= now && !db_loading) {
        hdel_at(e, &l);
        count_expired(1);
        return 2;
    }
    hloc_set_ttl(e, &l, at);
    return 1;
}

int hash_persist_field(struct entry *e, const char *f, size_t flen, long long now)
{
    struct hloc l;
    if (!hfind(e, f, flen, &l))
        return -2;
    long long prev = hloc_ttl(e, &l);
    if (prev == 0)
        return -1;
    if (ttl_expired(prev, now))
        return -2;
    hloc_set_ttl(e, &l, 0);
    return 1;
}

/* Propagation of fields dropped because their TTL passed (persist/prop.h):
 * HDEL <key> <field> on the AOF, as Redis 7.4, so that a replay (where
 * nothing expires) drops them at the same point.  Set around the drops by
 * a command or the sweeper; off (RDB loading) otherwise. */
static _Thread_local struct {
    int on, db;
    const char *key;
    size_t klen;
} hexp;

static void hexp_begin(int db, const char *key, size_t klen)
{
    hexp.on = 1;
    hexp.db = db;
    hexp.key = key;
    hexp.klen = klen;
}

static void hexp_end(void)
{
    hexp.on = 0;
}

static void hexp_field(const char *f, size_t flen)
{
    if (!hexp.on)
        return;
    prop_op_begin(hexp.db);
    prop_op_str("HDEL");
    prop_op_arg(hexp.key, hexp.klen);
    prop_op_arg(f, flen);
    prop_op_end();
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
        count_expired(n);
        return n;
    }
    if (e->enc != ENC_LISTPACK_EX)
        return 0;
    unsigned char *lp = entry_ptr(e);
    size_t p = lp_first(lp);
    while (p != LP_NONE && n < max) {
        size_t tp = lp_next(lp, lp_next(lp, p));
        if (!ttl_expired(lp_int_at(lp, tp), now))
            break;
        if (hexp.on) {
            struct lp_val fv;
            char nb[24];
            size_t fl;
            lp_get(lp, p, &fv);
            const char *fs = lpv_str(&fv, nb, &fl);
            hexp_field(fs, fl);
        }
        n++;
        p = lp_next(lp, tp);
    }
    if (n) {
        lp = lp_delete(lp, lp_first(lp), (size_t)n * 3, NULL);
        entry_set_ptr(e, lp, e->enc);
    }
    count_expired(n);
    return n;
}

/* Fields expired at now (HGETALL's count).  listpackex: the prefix. */
static size_t hash_count_expired(struct entry *e, long long now, size_t *first)
{
    size_t n = 0;
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        while (p != LP_NONE) {
            size_t tp = lp_next(lp, lp_next(lp, p));
            if (!ttl_expired(lp_int_at(lp, tp), now))
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

/* Earliest field TTL (0: none). */
static long long hash_min_ttl(struct entry *e)
{
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        return t->nheap ? hf_ttl(t->heap[0]) : 0;
    }
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        size_t p = lp_first(lp);
        return p == LP_NONE ? 0 : lp_int_at(lp, lp_next(lp, lp_next(lp, p)));
    }
    return 0;
}

/* ---------------------------------------------------- inline listpacks ---
 * With entry-level support (E_INLINE, entry.h) a small listpack hash lives
 * inside its entry instead of behind a pointer: one allocation (and one
 * cache miss) less per small hash.  The value layer above works on pointer
 * entries, so a command that modifies an inline hash first moves the
 * listpack out to the heap (hdetach: the entry becomes an ordinary pointer
 * entry in place; a listpack holding a field is longer than a pointer) and
 * puts it back at the end (hattach_at): in place when the entry's
 * allocation fits, else in a new entry swapped in with db_set.  Paths that
 * only shrink it (lazy and active expiry, db < 0) always stay in place.
 * Without E_INLINE both are no-ops. */
#ifdef E_INLINE
#define HASH_INLINE_MAX 192

static void hdetach(struct entry *e)
{
    if (!(e->flags & E_INLINE))
        return;
    /* hattach_at left room for the pointer */
    obj_inline_detach(e, lp_bytes((const unsigned char *)entry_val(e)));
}

static void hattach_at(int db, unsigned slot, struct entry *e)
{
    if (!e || e->enc == ENC_HT || (e->flags & E_INLINE))
        return;
    unsigned char *lp = entry_ptr(e);
    size_t n = lp_bytes(lp), base = entry_hdr(e) + e->klen;
    if (n > HASH_INLINE_MAX)
        return;
    /* The inline value keeps room for the (aligned) pointer form. */
    size_t vlen = obj_inline_vlen(base, n), u = hk_usable(e);
    if (base + vlen <= u && (db < 0 || u - (base + vlen) < 16 + (base + vlen) / 8)) {
        memcpy(entry_val(e), lp, n);
        e->vlen = (uint32_t)vlen;
        e->flags |= E_INLINE;
        lp_free(lp);
        return;
    }
    if (db < 0)
        return;
    struct entry *ne = obj_inline_new(OBJ_HASH, e->enc, entry_key(e), e->klen, entry_expire(e), lp, n);
    ne->lru = e->lru;
    ne->flags |= (uint8_t)(e->flags & E_HFE);
    db_set(db, slot, ne); /* frees e, and lp with it */
}
#else
static inline void hdetach(struct entry *e)
{
    (void)e;
}

static inline void hattach_at(int db, unsigned slot, struct entry *e)
{
    (void)db, (void)slot, (void)e;
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

const struct type_ops hash_type_ops = {hash_free, hash_dup, hash_mem, hash_len_op, hash_effort};

/* ------------------------------------------------- cross-module entry --- */
int hash_get_field(struct entry *e, const char *f, size_t flen, const char **v, size_t *vlen, char *ibuf)
{
    struct hloc l;
    struct lp_val val;
    if (e->type != OBJ_HASH || !hfind(e, f, flen, &l) || ttl_expired(hloc_ttl(e, &l), db_now_ms()))
        return 0;
    hloc_val(e, &l, &val);
    *v = lpv_str(&val, ibuf, vlen);
    return 1;
}

long hash_expire_fields(int db, struct entry *e, unsigned slot, long long now, int *empty)
{
    long n = 0;
    long long first = hash_min_ttl(e);
    if (first && first <= now) {
        hdetach(e);
        hexp_begin(db, entry_key(e), e->klen);
        n = hash_drop_expired(e, now, HFE_SWEEP_MAX);
        hexp_end();
    }
    *empty = hash_length(e) == 0;
    if (!*empty) {
        if (!hash_has_ttl(e))
            db_set_hfe(0, slot, e, 0); /* db is not used for the flag */
        hattach_at(-1, slot, e);
    }
    return n;
}

/* ------------------------------------------------------- command helpers --- */

/* The hash at argv[1] (NULL if absent).  A key of another type: replies
 * WRONGTYPE, sets *bad and returns NULL. */
static struct entry *hlookup(struct client *c, int flags, int *bad)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], flags);
    *bad = 0;
    if (e && e->type != OBJ_HASH) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *bad = 1;
        return NULL;
    }
    return e;
}

static struct entry *hcreate(struct client *c)
{
    struct entry *e = entry_new_obj(OBJ_HASH, ENC_LISTPACK, c->argv[1], c->argvlen[1], hash_new(), -1);
    db_add(c->db, kslot(c, 1), e);
    return e;
}

/* End of a write command: a small listpack goes back inline (e may be
 * replaced: not to be used after). */
static inline void hattach(struct client *c, struct entry *e)
{
    hattach_at(c->db, kslot(c, 1), e);
}

static void hdelkey(struct client *c)
{
    db_del(c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
}

/* Keep E_HFE equal to "some field has a TTL" after a write. */
static inline void hfe_sync(struct client *c, struct entry *e)
{
    if (e->enc == ENC_LISTPACK)
        return;
    int on = hash_has_ttl(e);
    if (on != ((e->flags & E_HFE) != 0))
        db_set_hfe(c->db, kslot(c, 1), e, on);
}

/* After removing fields: delete the key when empty (*ep = NULL), else sync. */
static void hafter_delete(struct client *c, struct entry **ep)
{
    if (hash_length(*ep) == 0) {
        hdelkey(c);
        *ep = NULL;
    } else {
        hfe_sync(c, *ep);
    }
}

/* Fields of argv[1] removed because their TTL passed (lazily, or all of
 * them for HRANDFIELD): Redis's "hexpired", "del" when the hash went with
 * them, and the WATCH / tracking signal (no client: an expiry). */
static void hexpired_event(struct client *c, int key_deleted)
{
    KEY_EVENT(c, 1, NOTIFY_HASH, "hexpired");
    if (key_deleted)
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    signal_modified_key(NULL, c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
    /* The hash went with its last fields: DEL to the AOF (fields that
     * expire in a hash that stays need nothing: their TTLs were fed as
     * absolute times, so they are expired after a replay too). */
    if (key_deleted)
        prop_key_expired(c->db, c->argv[1], c->argvlen[1]);
}

/* Find field f for a command that accesses it: an expired field is deleted
 * on the way (with the key when it was the last one: *ep becomes NULL),
 * with its events; or, when expired is not NULL, counted there for the
 * caller to announce once (HMGET).  Returns 1 with *l set when the field
 * is live. */
static int hfield_live_ex(struct client *c, struct entry **ep, const char *f, size_t flen, struct hloc *l,
                          long *expired)
{
    struct entry *e = *ep;
    if (!hfind(e, f, flen, l))
        return 0;
    if (e->enc == ENC_LISTPACK || !ttl_expired(hloc_ttl(e, l), db_now_ms()))
        return 1;
    hdetach(e);
    hdel_at(e, l);
    count_expired(1);
    hexp_begin(c->db, c->argv[1], c->argvlen[1]);
    hexp_field(f, flen); /* HDEL to the AOF */
    hexp_end();
    hafter_delete(c, ep);
    hattach_at(-1, 0, *ep);
    if (expired)
        (*expired)++;
    else
        hexpired_event(c, *ep == NULL);
    return 0;
}

static inline int hfield_live(struct client *c, struct entry **ep, const char *f, size_t flen, struct hloc *l)
{
    return hfield_live_ex(c, ep, f, flen, l, NULL);
}

/* hashTypeTryConversion's rule: convert before adding argv[from..to]
 * (field, value pairs) when there are too many pairs or one is too long. */
static void hash_try_convert(struct client *c, struct entry *e, int from, int to)
{
    size_t sum = 0, npairs = (size_t)(to - from + 1) / 2;
    if (e->enc == ENC_HT)
        return;
    if (npairs > (size_t)hash_max_listpack_entries) {
        hash_convert_ht(e, npairs);
        return;
    }
    for (int i = from; i <= to; i++) {
        if (c->argvlen[i] > (size_t)hash_max_listpack_value) {
            hash_convert_ht(e, 0);
            return;
        }
        sum += c->argvlen[i];
    }
    if (lp_bytes(entry_ptr(e)) + sum > LP_SAFE_BYTES)
        hash_convert_ht(e, 0);
}

/* ------------------------------------------------------------ commands --- */
static void hset_generic(struct client *c, int hmset)
{
    int bad, created = 0;
    struct entry *e;
    if (c->argc % 2 == 1) {
        reply_arity_error(c);
        return;
    }
    e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (!e)
        e = hcreate(c);
    else
        hdetach(e);
    hash_try_convert(c, e, 2, c->argc - 1);
    for (int i = 2; i < c->argc; i += 2)
        created += hash_set(e, c->argv[i], c->argvlen[i], c->argv[i + 1], c->argvlen[i + 1], 0);
    hfe_sync(c, e);
    hattach(c, e);
    KEY_MODIFIED(c, 1, NOTIFY_HASH, "hset");
    if (hmset)
        reply_ok(&c->out);
    else
        reply_int(&c->out, created);
}

void hset_command(struct client *c)
{
    hset_generic(c, 0);
}

void hmset_command(struct client *c)
{
    hset_generic(c, 1);
}

void hsetnx_command(struct client *c)
{
    int bad;
    struct hloc l;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (e && hfield_live(c, &e, c->argv[2], c->argvlen[2], &l)) {
        reply_int(&c->out, 0);
        return;
    }
    if (!e)
        e = hcreate(c);
    else
        hdetach(e);
    hash_try_convert(c, e, 2, 3);
    hash_set(e, c->argv[2], c->argvlen[2], c->argv[3], c->argvlen[3], 0);
    hfe_sync(c, e);
    hattach(c, e);
    reply_int(&c->out, 1);
    KEY_MODIFIED(c, 1, NOTIFY_HASH, "hset");
}

void hget_command(struct client *c)
{
    int bad;
    struct hloc l;
    struct lp_val v;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (!e || !hfield_live(c, &e, c->argv[2], c->argvlen[2], &l)) {
        reply_null(&c->out);
        return;
    }
    hloc_val(e, &l, &v);
    reply_lpv(&c->out, &v);
}

void hmget_command(struct client *c)
{
    int bad;
    struct hloc l;
    struct lp_val v;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    long expired = 0;
    reply_array(&c->out, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        if (e && hfield_live_ex(c, &e, c->argv[i], c->argvlen[i], &l, &expired)) {
            hloc_val(e, &l, &v);
            reply_lpv(&c->out, &v);
        } else {
            reply_null(&c->out);
        }
    }
    if (expired)
        hexpired_event(c, e == NULL); /* once, as Redis's HMGET */
}

void hdel_command(struct client *c)
{
    int bad;
    long long deleted = 0;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (e) {
        hdetach(e);
        for (int i = 2; i < c->argc; i++) {
            if (!hash_del(e, c->argv[i], c->argvlen[i]))
                continue;
            deleted++;
            if (hash_length(e) == 0)
                break;
        }
        if (deleted) {
            hafter_delete(c, &e);
            KEY_MODIFIED(c, 1, NOTIFY_HASH, "hdel");
            if (!e)
                KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
        }
        hattach(c, e);
    }
    reply_int(&c->out, deleted);
}

void hlen_command(struct client *c)
{
    int bad;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    reply_int(&c->out, e ? (long long)hash_length(e) : 0);
}

void hstrlen_command(struct client *c)
{
    int bad;
    struct hloc l;
    struct lp_val v;
    char b[32];
    size_t n = 0;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (e && hfield_live(c, &e, c->argv[2], c->argvlen[2], &l)) {
        hloc_val(e, &l, &v);
        lpv_str(&v, b, &n);
    }
    reply_int(&c->out, (long long)n);
}

void hexists_command(struct client *c)
{
    int bad;
    struct hloc l;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    reply_int(&c->out, e && hfield_live(c, &e, c->argv[2], c->argvlen[2], &l));
}

#define GA_KEYS 1
#define GA_VALS 2

static void hgetall_generic(struct client *c, int what)
{
    int bad, both = what == (GA_KEYS | GA_VALS);
    size_t first = LP_NONE, n;
    long long now = db_now_ms();
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (!e) {
        if (both)
            reply_map(&c->out, 0);
        else
            reply_array(&c->out, 0);
        return;
    }
    n = hash_length(e) - hash_count_expired(e, now, &first);
    if (both)
        reply_map(&c->out, (long long)n);
    else
        reply_array(&c->out, (long long)n);
    if (e->enc == ENC_HT) {
        struct hht *t = entry_ptr(e);
        struct dict_iter it = {0, NULL};
        struct dict_link *dl;
        int ttls = t->nheap > 0;
        while ((dl = dict_next(t->d, &it)) != NULL) {
            struct hfield *h = (struct hfield *)dl;
            if (ttls && ttl_expired(hf_ttl(h), now))
                continue;
            if (what & GA_KEYS)
                reply_bulk(&c->out, hf_field(h), h->flen);
            if (what & GA_VALS)
                reply_bulk(&c->out, hf_value(h), hf_vlen(h));
        }
        return;
    }
    unsigned char *lp = entry_ptr(e);
    int ex = e->enc == ENC_LISTPACK_EX;
    for (size_t p = first; p != LP_NONE; p = lp_next(lp, p)) {
        struct lp_val v;
        if (what & GA_KEYS) {
            lp_get(lp, p, &v);
            reply_lpv(&c->out, &v);
        }
        p = lp_next(lp, p);
        if (what & GA_VALS) {
            lp_get(lp, p, &v);
            reply_lpv(&c->out, &v);
        }
        if (ex)
            p = lp_next(lp, p);
    }
}

void hkeys_command(struct client *c)
{
    hgetall_generic(c, GA_KEYS);
}

void hvals_command(struct client *c)
{
    hgetall_generic(c, GA_VALS);
}

void hgetall_command(struct client *c)
{
    hgetall_generic(c, GA_KEYS | GA_VALS);
}

void hincrby_command(struct client *c)
{
    int bad;
    long long incr, value = 0;
    struct hloc l;
    char buf[32];
    if (arg_ll(c, 3, &incr) < 0)
        return;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (e && hfield_live(c, &e, c->argv[2], c->argvlen[2], &l)) {
        struct lp_val v;
        hloc_val(e, &l, &v);
        if (!v.s)
            value = v.ll;
        else if (!str_to_ll((const char *)v.s, v.len, &value)) {
            reply_error(&c->out, "ERR hash value is not an integer");
            return;
        }
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(&c->out, ERR_OVERFLOW);
        return;
    }
    value += incr;
    if (!e)
        e = hcreate(c);
    else
        hdetach(e);
    int n = ll_to_str(buf, value);
    hash_set(e, c->argv[2], c->argvlen[2], buf, (size_t)n, 1);
    hfe_sync(c, e);
    hattach(c, e);
    reply_int(&c->out, value);
    KEY_MODIFIED(c, 1, NOTIFY_HASH, "hincrby");
}

void hincrbyfloat_command(struct client *c)
{
    int bad;
    long double incr, value = 0;
    struct hloc l;
    char buf[5200];
    if (arg_ld(c, 3, &incr) < 0)
        return;
    if (isnan(incr) || isinf(incr)) {
        reply_error(&c->out, "ERR value is NaN or Infinity");
        return;
    }
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (e && hfield_live(c, &e, c->argv[2], c->argvlen[2], &l)) {
        struct lp_val v;
        hloc_val(e, &l, &v);
        if (!v.s)
            value = (long double)v.ll;
        else if (!str_to_ld((const char *)v.s, v.len, &value)) {
            reply_error(&c->out, "ERR hash value is not a float");
            return;
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(&c->out, "ERR increment would produce NaN or Infinity");
        return;
    }
    int n = ld_to_str_human(buf, sizeof(buf), value);
    if (!e)
        e = hcreate(c);
    else
        hdetach(e);
    hash_set(e, c->argv[2], c->argvlen[2], buf, (size_t)n, 1);
    long long fttl = hash_field_ttl(e, c->argv[2], c->argvlen[2], 0); /* 0: none */
    hfe_sync(c, e);
    hattach(c, e);
    reply_bulk(&c->out, buf, (size_t)n);
    KEY_MODIFIED(c, 1, NOTIFY_HASH, "hincrbyfloat");
    /* Fed as HSET key field <the value rendered> (as Redis); HSET drops a
     * field TTL that HINCRBYFLOAT keeps: then HPEXPIREAT too. */
    prop_prevent();
    prop_unit_begin();
    prop_op_begin(c->db);
    prop_op_str("HSET");
    prop_op_arg(c->argv[1], c->argvlen[1]);
    prop_op_arg(c->argv[2], c->argvlen[2]);
    prop_op_arg(buf, (size_t)n);
    prop_op_end();
    if (fttl > 0) {
        prop_op_begin(c->db);
        prop_op_str("HPEXPIREAT");
        prop_op_arg(c->argv[1], c->argvlen[1]);
        prop_op_ll(fttl);
        prop_op_str("FIELDS");
        prop_op_str("1");
        prop_op_arg(c->argv[2], c->argvlen[2]);
        prop_op_end();
    }
    prop_unit_end();
}

/* ---------------------------------------------------------- HRANDFIELD --- */

/* A uniformly random element: a random bucket and a random chain position
 * below HT_RAND_DEPTH, retried until it names an element (exactly uniform
 * over every element within that depth of its bucket's head, which is all
 * of them in practice: chains average one element). */
#define HT_RAND_DEPTH 8
static struct hfield *ht_random(const struct dict *d)
{
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

static inline uint64_t rand_below(uint64_t n)
{
    return rand64() % n;
}

static void reply_hf(struct client *c, struct hfield *h, int withvalues, int r3)
{
    if (withvalues && r3)
        reply_array(&c->out, 2);
    reply_bulk(&c->out, hf_field(h), h->flen);
    if (withvalues)
        reply_bulk(&c->out, hf_value(h), hf_vlen(h));
}

static void reply_lp_pair(struct client *c, const unsigned char *lp, size_t p, int withvalues, int r3)
{
    struct lp_val v;
    if (withvalues && r3)
        reply_array(&c->out, 2);
    lp_get(lp, p, &v);
    reply_lpv(&c->out, &v);
    if (withvalues) {
        lp_get(lp, lp_next(lp, p), &v);
        reply_lpv(&c->out, &v);
    }
}

/* A small open-addressing set of element pointers (CASE "few of many"). */
struct ptrset {
    const void **slots;
    size_t mask;
};

static int ptrset_add(struct ptrset *s, const void *p)
{
    size_t i = (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL) & s->mask;
    while (s->slots[i]) {
        if (s->slots[i] == p)
            return 0;
        i = (i + 1) & s->mask;
    }
    s->slots[i] = p;
    return 1;
}

/* HRANDFIELD drops every expired field first; 1 if the key went with them. */
static int hdrop_all_expired(struct client *c, struct entry **ep)
{
    long long first = hash_min_ttl(*ep), now = db_now_ms();
    if (!first || first > now || db_loading)
        return 0;
    hdetach(*ep);
    hexp_begin(c->db, c->argv[1], c->argvlen[1]);
    long n = hash_drop_expired(*ep, now, LONG_MAX);
    hexp_end();
    hafter_delete(c, ep);
    hattach_at(-1, 0, *ep);
    if (n)
        hexpired_event(c, *ep == NULL);
    return *ep == NULL;
}

static void hrandfield_count(struct client *c, long long l, int withvalues)
{
    int bad, r3 = c->out.resp >= 3;
    unsigned long long count;
    int uniq = l >= 0;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (!e) {
        reply_array(&c->out, 0);
        return;
    }
    count = uniq ? (unsigned long long)l : (unsigned long long)(-l);
    /* Expired fields go first (the whole key if nothing else is left). */
    if (hdrop_all_expired(c, &e)) {
        reply_array(&c->out, 0);
        return;
    }
    size_t size = hash_length(e);
    if (count == 0) {
        reply_array(&c->out, 0);
        return;
    }

    /* Repeats allowed (negative count), or one element: independent picks. */
    if (!uniq || count == 1) {
        reply_array(&c->out, (long long)(withvalues && !r3 ? count * 2 : count));
        if (e->enc == ENC_HT) {
            struct hht *t = entry_ptr(e);
            for (unsigned long long i = 0; i < count; i++) {
                reply_hf(c, ht_random(t->d), withvalues, r3);
                if ((i & 1023) == 1023 && c->out.len > HRAND_MAX_REPLY) {
                    c->flags |= CF_CLOSE_ASAP;
                    break;
                }
            }
            return;
        }
        unsigned char *lp = entry_ptr(e);
        size_t stackpos[256], *pos = size <= 256 ? stackpos : hk_malloc(sizeof(size_t) * size), k = 0;
        int step = e->enc == ENC_LISTPACK_EX ? 3 : 2;
        for (size_t p = lp_first(lp); p != LP_NONE; k++) {
            pos[k] = p;
            for (int s = 0; s < step; s++)
                p = lp_next(lp, p);
        }
        for (unsigned long long i = 0; i < count; i++) {
            reply_lp_pair(c, lp, pos[rand_below(size)], withvalues, r3);
            if ((i & 1023) == 1023 && c->out.len > HRAND_MAX_REPLY) {
                c->flags |= CF_CLOSE_ASAP;
                break;
            }
        }
        if (pos != stackpos)
            hk_free(pos);
        return;
    }

    size_t n = count < size ? (size_t)count : size;
    reply_array(&c->out, (long long)(withvalues && !r3 ? n * 2 : n));

    /* Everything asked for: the whole hash. */
    if (count >= size) {
        if (e->enc == ENC_HT) {
            struct hht *t = entry_ptr(e);
            struct dict_iter it = {0, NULL};
            struct dict_link *dl;
            while ((dl = dict_next(t->d, &it)) != NULL)
                reply_hf(c, (struct hfield *)dl, withvalues, r3);
        } else {
            unsigned char *lp = entry_ptr(e);
            int step = e->enc == ENC_LISTPACK_EX ? 3 : 2;
            for (size_t p = lp_first(lp); p != LP_NONE;) {
                reply_lp_pair(c, lp, p, withvalues, r3);
                for (int s = 0; s < step; s++)
                    p = lp_next(lp, p);
            }
        }
        return;
    }

    /* Listpack: selection sampling, distinct fields in listpack order. */
    if (e->enc != ENC_HT) {
        unsigned char *lp = entry_ptr(e);
        int step = e->enc == ENC_LISTPACK_EX ? 3 : 2;
        size_t need = n, left = size;
        for (size_t p = lp_first(lp); p != LP_NONE && need; left--) {
            if (rand_below(left) < need) {
                reply_lp_pair(c, lp, p, withvalues, r3);
                need--;
            }
            for (int s = 0; s < step; s++)
                p = lp_next(lp, p);
        }
        return;
    }

    struct hht *t = entry_ptr(e);
    if (count * 3 > size) {
        /* Most of the hash: all elements, then drop random ones. */
        struct hfield **all = hk_malloc(sizeof(*all) * size);
        struct dict_iter it = {0, NULL};
        struct dict_link *dl;
        size_t k = 0;
        while ((dl = dict_next(t->d, &it)) != NULL)
            all[k++] = (struct hfield *)dl;
        while (k > n) {
            size_t drop = (size_t)rand_below(k);
            all[drop] = all[--k];
        }
        for (size_t i = 0; i < k; i++)
            reply_hf(c, all[i], withvalues, r3);
        hk_free(all);
        return;
    }
    /* Few of many: random picks, duplicates skipped. */
    struct ptrset set;
    size_t cap = 16;
    while (cap < n * 2)
        cap <<= 1;
    set.slots = hk_calloc(sizeof(*set.slots) * cap);
    set.mask = cap - 1;
    for (size_t added = 0; added < n;) {
        struct hfield *h = ht_random(t->d);
        if (!ptrset_add(&set, h))
            continue;
        added++;
        reply_hf(c, h, withvalues, r3);
    }
    hk_free(set.slots);
}

void hrandfield_command(struct client *c)
{
    int bad;
    if (c->argc >= 3) {
        long long l;
        if (!str_to_ll(c->argv[2], c->argvlen[2], &l)) {
            reply_error(&c->out, ERR_NOT_INT);
            return;
        }
        if (l < -LLONG_MAX) {
            reply_error(&c->out, "ERR value is out of range, value must between -9223372036854775807 and "
                                 "9223372036854775807");
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c, 3, "withvalues"))) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4 && (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2)) {
            reply_error(&c->out, "ERR value is out of range");
            return;
        }
        hrandfield_count(c, l, c->argc == 4);
        return;
    }
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (!e || hdrop_all_expired(c, &e)) {
        reply_null(&c->out);
        return;
    }
    if (e->enc == ENC_HT) {
        struct hfield *h = ht_random(((struct hht *)entry_ptr(e))->d);
        reply_bulk(&c->out, hf_field(h), h->flen);
        return;
    }
    unsigned char *lp = entry_ptr(e);
    struct lp_val v;
    lp_get(lp, lp_seek(lp, (long long)rand_below(hash_length(e)) * (e->enc == ENC_LISTPACK_EX ? 3 : 2)), &v);
    reply_lpv(&c->out, &v);
}

/* --------------------------------------------------------------- HSCAN --- */
struct hscan_state {
    const char *pat;
    size_t plen;
    long long now, sampled;
    struct hfield **items;
    size_t n, cap;
    struct hfield *stack[64];
};

static void hscan_cb(void *arg, const struct dict_link *it)
{
    struct hscan_state *st = arg;
    struct hfield *h = (struct hfield *)it;
    st->sampled++;
    if (st->pat && !glob_match(st->pat, st->plen, hf_field(h), h->flen, 0))
        return;
    if (ttl_expired(hf_ttl(h), st->now))
        return;
    if (st->n == st->cap) {
        size_t ncap = st->cap * 2;
        if (st->items == st->stack) {
            st->items = hk_malloc(sizeof(*st->items) * ncap);
            memcpy(st->items, st->stack, sizeof(st->stack));
        } else {
            st->items = hk_realloc(st->items, sizeof(*st->items) * ncap);
        }
        st->cap = ncap;
    }
    st->items[st->n++] = h;
}

/* Redis's string2ull: a decimal, or what strtoull takes whole. */
static int parse_cursor(const char *s, size_t len, unsigned long long *out)
{
    long long ll;
    char buf[64], *end;
    if (str_to_ll(s, len, &ll)) {
        if (ll < 0)
            return 0;
        *out = (unsigned long long)ll;
        return 1;
    }
    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    *out = strtoull(buf, &end, 10);
    return errno == 0 && *end == 0 && (size_t)(end - buf) == len;
}

void hscan_command(struct client *c)
{
    int bad, novalues = 0;
    unsigned long long cursor;
    long long count = 10;
    const char *pat = NULL;
    size_t plen = 0;
    char cb[32];
    if (!parse_cursor(c->argv[2], c->argvlen[2], &cursor)) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    if (!e) {
        reply_scan_empty(c);
        return;
    }
    if (scan_opts(c, &count, &pat, &plen, &novalues) < 0)
        return;
    long long now = db_now_ms();
    if (e->enc != ENC_HT) {
        /* A listpack is small: all of it at once, cursor 0. */
        unsigned char *lp = entry_ptr(e);
        int ex = e->enc == ENC_LISTPACK_EX;
        long long n = 0;
        reply_array(&c->out, 2);
        reply_bulk(&c->out, "0", 1);
        size_t mark = reply_defer(&c->out);
        for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
            struct lp_val f, v;
            size_t vp = lp_next(lp, p), fl;
            char fb[32];
            lp_get(lp, p, &f);
            p = vp;
            if (ex) {
                p = lp_next(lp, p);
                if (ttl_expired(lp_int_at(lp, p), now))
                    continue;
            }
            const char *fs = lpv_str(&f, fb, &fl);
            if (pat && !glob_match(pat, plen, fs, fl, 0))
                continue;
            reply_bulk(&c->out, fs, fl);
            n++;
            if (!novalues) {
                lp_get(lp, vp, &v);
                reply_lpv(&c->out, &v);
                n++;
            }
        }
        reply_defer_array(&c->out, mark, n);
        return;
    }
    struct hht *t = entry_ptr(e);
    struct hscan_state st;
    long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    st.pat = pat;
    st.plen = plen;
    st.now = now;
    st.sampled = 0;
    st.items = st.stack;
    st.n = 0;
    st.cap = sizeof(st.stack) / sizeof(st.stack[0]);
    do {
        cursor = dict_scan(t->d, cursor, hscan_cb, &st);
    } while (cursor && maxiter-- && st.sampled < count);
    reply_array(&c->out, 2);
    reply_bulk(&c->out, cb, (size_t)ull_to_str(cb, cursor));
    reply_array(&c->out, (long long)(novalues ? st.n : st.n * 2));
    for (size_t i = 0; i < st.n; i++) {
        struct hfield *h = st.items[i];
        reply_bulk(&c->out, hf_field(h), h->flen);
        if (!novalues)
            reply_bulk(&c->out, hf_value(h), hf_vlen(h));
    }
    if (st.items != st.stack)
        hk_free(st.items);
}

/* -------------------------------------------------------- field expiry --- */

/* FIELDS numfields field...: argv[at - 1] must be FIELDS and argv[at] the
 * count, matching the arguments left.  Returns the count or -1 (replied). */
static long long parse_fields(struct client *c, int at, const char *numerr)
{
    long long n;
    if (!arg_is(c, at - 1, "fields")) {
        reply_error(&c->out, "ERR Mandatory argument FIELDS is missing or not at the right position");
        return -1;
    }
    if (!str_to_ll(c->argv[at], c->argvlen[at], &n) || n < 1) {
        reply_error(&c->out, numerr);
        return -1;
    }
    if (n != c->argc - at - 1) {
        reply_error(&c->out, "ERR The `numfields` parameter must match the number of arguments");
        return -1;
    }
    return n;
}

static void hexpire_generic(struct client *c, long long basetime, int seconds)
{
    int bad, cond = 0, at = 4;
    long long when;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (arg_ll(c, 2, &when) < 0)
        return;
    if (when < 0) {
        reply_error(&c->out, "ERR invalid expire time, must be >= 0");
        return;
    }
    if (seconds) {
        if (when > HFE_MAX_MS / 1000) {
            reply_errorf(&c->out, "ERR invalid expire time in '%s' command", c->cmd->name);
            return;
        }
        when *= 1000;
    }
    if (when > HFE_MAX_MS - basetime) {
        reply_errorf(&c->out, "ERR invalid expire time in '%s' command", c->cmd->name);
        return;
    }
    when += basetime;
    if (arg_is(c, 3, "nx"))
        cond = HFE_NX;
    else if (arg_is(c, 3, "xx"))
        cond = HFE_XX;
    else if (arg_is(c, 3, "gt"))
        cond = HFE_GT;
    else if (arg_is(c, 3, "lt"))
        cond = HFE_LT;
    if (cond)
        at++;
    long long n = parse_fields(c, at, "ERR Parameter `numFields` should be greater than 0");
    if (n < 0)
        return;
    long long now = db_now_ms();
    long updated = 0, deleted = 0, dropped = 0;
    int had = e != NULL;
    /* Propagation: argv indexes of the fields given a TTL (r 1) and of
     * those deleted (r 2, a time already past). */
    int stack_r[32], *res = c->argc <= 32 ? stack_r : hk_malloc(sizeof(int) * (size_t)c->argc);
    if (e)
        hdetach(e);
    reply_array(&c->out, n);
    for (int i = at + 1; i < c->argc; i++) {
        res[i] = -2;
        if (!e) {
            reply_int(&c->out, -2);
            continue;
        }
        struct hloc fl;
        int existed = hfind(e, c->argv[i], c->argvlen[i], &fl);
        int r = hash_set_field_ttl(e, c->argv[i], c->argvlen[i], when, cond, now);
        res[i] = r == -2 && existed ? 3 : r; /* 3: dropped, its TTL had passed */
        dropped += res[i] == 3;
        reply_int(&c->out, r);
        updated += r == 1;
        deleted += r == 2;
        if (hash_length(e) == 0) {
            hdelkey(c);
            e = NULL;
        }
    }
    if (e) {
        hfe_sync(c, e);
        hattach(c, e);
    }
    /* Fed as what happened: DEL when the hash went, else HDEL of the fields
     * deleted and HPEXPIREAT <absolute ms> of those updated (Redis 7.4). */
    prop_prevent();
    if (had && !e) {
        prop_op_begin(c->db);
        prop_op_str("DEL");
        prop_op_arg(c->argv[1], c->argvlen[1]);
        prop_op_end();
    } else if (updated + deleted + dropped > 0) {
        prop_unit_begin();
        if (deleted + dropped) {
            prop_op_begin(c->db);
            prop_op_str("HDEL");
            prop_op_arg(c->argv[1], c->argvlen[1]);
            for (int i = at + 1; i < c->argc; i++)
                if (res[i] == 2 || res[i] == 3)
                    prop_op_arg(c->argv[i], c->argvlen[i]);
            prop_op_end();
        }
        if (updated) {
            prop_op_begin(c->db);
            prop_op_str("HPEXPIREAT");
            prop_op_arg(c->argv[1], c->argvlen[1]);
            prop_op_ll(when);
            prop_op_str("FIELDS");
            prop_op_ll(updated);
            for (int i = at + 1; i < c->argc; i++)
                if (res[i] == 1)
                    prop_op_arg(c->argv[i], c->argvlen[i]);
            prop_op_end();
        }
        prop_unit_end();
    }
    if (res != stack_r)
        hk_free(res);
    /* Redis 7.4 (hashTypeSetExDone): "hdel" when a field went (a time in
     * the past), else "hexpire"; "del" when the hash went with them. */
    if (had && updated + deleted > 0) {
        KEY_MODIFIED(c, 1, NOTIFY_HASH, deleted ? "hdel" : "hexpire");
        if (!e)
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    }
}

void hexpire_command(struct client *c)
{
    hexpire_generic(c, db_now_ms(), 1);
}

void hpexpire_command(struct client *c)
{
    hexpire_generic(c, db_now_ms(), 0);
}

void hexpireat_command(struct client *c)
{
    hexpire_generic(c, 0, 1);
}

void hpexpireat_command(struct client *c)
{
    hexpire_generic(c, 0, 0);
}

static void httl_generic(struct client *c, long long basetime, int seconds)
{
    int bad;
    struct entry *e = hlookup(c, 0, &bad);
    if (bad)
        return;
    long long n = parse_fields(c, 3, "ERR Number of fields must be a positive integer");
    if (n < 0)
        return;
    long long now = db_now_ms();
    reply_array(&c->out, n);
    for (int i = 4; i < c->argc; i++) {
        long long t = e ? hash_field_ttl(e, c->argv[i], c->argvlen[i], now) : -2;
        if (t == -2)
            reply_int(&c->out, -2);
        else if (t == 0)
            reply_int(&c->out, -1);
        else if (seconds)
            reply_int(&c->out, (t + 999 - basetime) / 1000);
        else
            reply_int(&c->out, t - basetime);
    }
}

void httl_command(struct client *c)
{
    httl_generic(c, db_now_ms(), 1);
}

void hpttl_command(struct client *c)
{
    httl_generic(c, db_now_ms(), 0);
}

void hexpiretime_command(struct client *c)
{
    httl_generic(c, 0, 1);
}

void hpexpiretime_command(struct client *c)
{
    httl_generic(c, 0, 0);
}

void hpersist_command(struct client *c)
{
    int bad;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    long long n = parse_fields(c, 3, "ERR Number of fields must be a positive integer");
    if (n < 0)
        return;
    long long now = db_now_ms();
    if (e)
        hdetach(e);
    int changed = 0;
    reply_array(&c->out, n);
    for (int i = 4; i < c->argc; i++) {
        int r = e ? hash_persist_field(e, c->argv[i], c->argvlen[i], now) : -2;
        changed |= r == 1;
        reply_int(&c->out, r);
    }
    if (e) {
        hfe_sync(c, e);
        hattach(c, e);
    }
    if (changed)
        KEY_MODIFIED(c, 1, NOTIFY_HASH, "hpersist");
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
            ttl = lp_int_at(lp, p);
            p = lp_next(lp, p);
        }
        const char *fs = lpv_str(&f, fb, &fl), *vs = lpv_str(&v, vb, &vl);
        int r = fn(arg, fs, fl, vs, vl, ttl);
        if (r)
            return r;
    }
    return 0;
}

long long hash_min_field_ttl(struct entry *e)
{
    return hash_min_ttl(e);
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
    struct entry *ne = obj_inline_new(OBJ_HASH, e->enc, entry_key(e), e->klen, entry_expire(e), lp, n);
    ne->lru = e->lru;
    ne->flags |= (uint8_t)(e->flags & E_HFE);
    entry_free(e); /* and lp with it */
    return ne;
#else
    return e;
#endif
}
