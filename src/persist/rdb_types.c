/* rdb_types.c - value encodings of the RDB format (strings, lists, sets,
 * sorted sets, hashes; streams are in rdb_stream.c): what rdb_save_value
 * writes for each of our encodings, and rdb_load_value for every type
 * Redis 2.x .. 8 writes (the old ziplist / zipmap / linked-list forms too).
 *
 * Written per RDB version, as the matching Redis writes them:
 *   string        0 (integers as 8/16/32-bit, long ones LZF when rdbcompression)
 *   list          18 QUICKLIST_2: node count, then per node its container
 *                 (2 packed listpack, 1 plain element) and the bytes
 *   set           11 intset; 2 plain (hashtable); 20 listpack (v11+; v10,
 *                 which Redis 7.0 reads, has no set listpack: plain 2)
 *   sorted set    17 listpack; 5 ZSET_2 (member, binary double), highest first
 *   hash          16 listpack; 4 plain; with field TTLs (Redis 7.4 = v12)
 *                 25 listpackex (min TTL, listpack of field/value/TTL) and
 *                 24 (min TTL, count, per field TTL - min + 1 or 0, field,
 *                 value).  A hash with field TTLs is written as 24/25 for
 *                 v10/v11 too: nothing is lost, but only Redis 7.4+ reads
 *                 such a key (older ones refuse the file / payload).
 *   vector set    7 MODULE_2, module type "hotkv-vec" (rdb_vset.c)
 *
 * Loading builds our structures through the type modules' own value layers
 * (types/hash.c, set.c, zset.c, list.c), so every encoding threshold
 * (hash-max-listpack-entries ...) and the inline small-value form apply as
 * if the value had been written by commands.  Listpacks and intsets taken
 * as they are from the input are validated first (structure, duplicates,
 * sorted-set order and scores, TTL order), so a corrupt file or RESTORE
 * payload is refused and never crashes. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../types/hash.h"
#include "../types/list.h"
#include "../types/set.h"
#include "../types/zset.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../ds/intset.h"
#include "../ds/listpack.h"
#include "../ds/quicklist.h"
#include "../ds/skiplist.h"
#include "rdb.h"

/* Redis's largest field expiry (EB_EXPIRE_TIME_MAX). */
#define HFE_TIME_MAX ((1LL << 48) - 1)

/* =============================================================== save === */

struct wctx {
    struct rdb_out *o;
    long long min;
};

static int w_elem(void *arg, const char *s, size_t len)
{
    return rdb_w_str(arg, s, len) < 0;
}

static int w_zelem(void *arg, const char *s, size_t len, double score)
{
    struct rdb_out *o = arg;
    return rdb_w_str(o, s, len) < 0 || rdb_w_double_bin(o, score) < 0;
}

static int w_hfield(void *arg, const char *f, size_t fl, const char *v, size_t vl, long long ttl)
{
    struct wctx *w = arg;
    (void)ttl;
    return rdb_w_str(w->o, f, fl) < 0 || rdb_w_str(w->o, v, vl) < 0;
}

static int w_hfield_ttl(void *arg, const char *f, size_t fl, const char *v, size_t vl, long long ttl)
{
    struct wctx *w = arg;
    uint64_t rel = ttl ? (uint64_t)(ttl - w->min) + 1 : 0;
    return rdb_w_len(w->o, rel) < 0 || rdb_w_str(w->o, f, fl) < 0 || rdb_w_str(w->o, v, vl) < 0;
}

static int save_list(struct rdb_out *o, struct entry *e)
{
    if (rdb_w_type(o, RDB_TYPE_LIST_QUICKLIST_2) < 0)
        return -1;
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        if (rdb_w_len(o, 1) < 0 || rdb_w_len(o, RDB_QL_PACKED) < 0)
            return -1;
        return rdb_w_blob(o, lp, lp_bytes(lp));
    }
    struct quicklist *ql = entry_ptr(e);
    if (rdb_w_len(o, ql->len) < 0)
        return -1;
    unsigned char *tmp = NULL;
    size_t tcap = 0;
    int r = 0;
    for (struct ql_node *n = ql->head; n && r == 0; n = n->next) {
        unsigned char *lp = n->lp;
        if (n->flags & QLN_LZ) {
            if (tcap < n->sz) {
                hk_free(tmp);
                tcap = n->sz;
                tmp = hk_malloc(tcap);
            }
            uint32_t clen;
            memcpy(&clen, n->lp, 4);
            if (!ql_lz_decompress(n->lp + 4, clen, tmp, n->sz)) {
                o->err = o->err ? o->err : 5; /* EIO: a corrupt node in memory */
                r = -1;
                break;
            }
            lp = tmp;
        }
        if (n->flags & QLN_PLAIN) {
            struct lp_val v;
            char b[24];
            lp_get(lp, lp_first(lp), &v);
            const char *s = (const char *)v.s;
            size_t len = v.len;
            if (!s) {
                len = (size_t)ll_to_str(b, v.ll);
                s = b;
            }
            r = rdb_w_len(o, RDB_QL_PLAIN) < 0 || rdb_w_blob(o, s, len) < 0 ? -1 : 0;
        } else {
            r = rdb_w_len(o, RDB_QL_PACKED) < 0 || rdb_w_blob(o, lp, n->sz) < 0 ? -1 : 0;
        }
    }
    hk_free(tmp);
    return r;
}

static int save_set(struct rdb_out *o, struct entry *e, int version)
{
    void *p = entry_ptr(e);
    if (e->enc == ENC_INTSET)
        return rdb_w_type(o, RDB_TYPE_SET_INTSET) < 0 ? -1 : rdb_w_blob(o, p, is_bytes(p));
    if (e->enc == ENC_LISTPACK && version >= 11)
        return rdb_w_type(o, RDB_TYPE_SET_LISTPACK) < 0 ? -1 : rdb_w_blob(o, p, lp_bytes(p));
    if (rdb_w_type(o, RDB_TYPE_SET) < 0 || rdb_w_len(o, obj_len(e)) < 0)
        return -1;
    set_visit(e, w_elem, o);
    return o->err ? -1 : 0;
}

static int save_zset(struct rdb_out *o, struct entry *e)
{
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        return rdb_w_type(o, RDB_TYPE_ZSET_LISTPACK) < 0 ? -1 : rdb_w_blob(o, lp, lp_bytes(lp));
    }
    if (rdb_w_type(o, RDB_TYPE_ZSET_2) < 0 || rdb_w_len(o, zset_length(e)) < 0)
        return -1;
    /* Highest first, as Redis: loading then inserts at the head. */
    zset_visit(e, 1, w_zelem, o);
    return o->err ? -1 : 0;
}

static int save_hash(struct rdb_out *o, struct entry *e)
{
    struct wctx w = {o, 0};
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        return rdb_w_type(o, RDB_TYPE_HASH_LISTPACK) < 0 ? -1 : rdb_w_blob(o, lp, lp_bytes(lp));
    }
    if (e->enc == ENC_LISTPACK_EX) {
        unsigned char *lp = entry_ptr(e);
        if (rdb_w_type(o, RDB_TYPE_HASH_LISTPACK_EX) < 0 || rdb_w_millis(o, hash_min_field_ttl(e)) < 0)
            return -1;
        return rdb_w_blob(o, lp, lp_bytes(lp));
    }
    w.min = hash_min_field_ttl(e);
    if (w.min == 0) {
        if (rdb_w_type(o, RDB_TYPE_HASH) < 0 || rdb_w_len(o, hash_length(e)) < 0)
            return -1;
        hash_visit_fields(e, w_hfield, &w);
    } else {
        if (rdb_w_type(o, RDB_TYPE_HASH_METADATA) < 0 || rdb_w_millis(o, w.min) < 0 ||
            rdb_w_len(o, hash_length(e)) < 0)
            return -1;
        hash_visit_fields(e, w_hfield_ttl, &w);
    }
    return o->err ? -1 : 0;
}

int rdb_save_value(struct rdb_out *o, struct entry *e, int version)
{
    switch (e->type) {
    case OBJ_STRING:
        if (rdb_w_type(o, RDB_TYPE_STRING) < 0)
            return -1;
        return rdb_w_str(o, entry_val(e), entry_vlen(e));
    case OBJ_LIST: return save_list(o, e);
    case OBJ_SET: return save_set(o, e, version);
    case OBJ_ZSET: return save_zset(o, e);
    case OBJ_HASH: return save_hash(o, e);
    case OBJ_STREAM: return rdb_save_stream(o, e, version);
    case OBJ_VSET: return rdb_save_vset(o, e);
    default:
        o->err = o->err ? o->err : 22; /* EINVAL: a type RDB cannot hold */
        return -1;
    }
}

/* =============================================================== load === */

/* An element handed over by the ziplist/zipmap/listpack walkers. */
struct elem {
    const char *s;
    size_t len;
    char ib[24];
};

static inline void elem_from_lp(struct elem *x, const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s) {
        x->s = (const char *)v.s;
        x->len = v.len;
    } else {
        x->len = (size_t)ll_to_str(x->ib, v.ll);
        x->s = x->ib;
    }
}

/* ---- duplicate detection over the elements of a small blob ---- */
struct dupset {
    struct dslot {
        uint64_t h;
        const char *s;
        size_t len;
    } *t;
    char (*ib)[24];
    size_t mask, nib;
};

static void dup_init(struct dupset *d, size_t n)
{
    size_t cap = hk_grow_cap(16, n > SIZE_MAX / 2 ? SIZE_MAX : n * 2, 16, sizeof(*d->t));
    d->t = hk_calloc(hk_array_bytes(cap, sizeof(*d->t)));
    d->ib = hk_malloc(hk_array_bytes(n ? n : 1, sizeof(*d->ib)));
    d->mask = cap - 1;
    d->nib = 0;
}

static void dup_free(struct dupset *d)
{
    hk_free(d->t);
    hk_free(d->ib);
}

/* Add x (integers are copied into the set's own buffers): 0, or 1 when it
 * was there already. */
static int dup_add(struct dupset *d, const struct elem *x)
{
    uint64_t h = hash64(x->s, x->len, 0x9e3779b97f4a7c15ULL);
    size_t i = h & d->mask;
    while (d->t[i].s) {
        if (d->t[i].h == h && d->t[i].len == x->len && memcmp(d->t[i].s, x->s, x->len) == 0)
            return 1;
        i = (i + 1) & d->mask;
    }
    const char *s = x->s;
    if (s == x->ib) {
        memcpy(d->ib[d->nib], x->ib, x->len);
        s = d->ib[d->nib++];
    }
    d->t[i].h = h;
    d->t[i].s = s;
    d->t[i].len = x->len;
    return 0;
}

/* Whether the listpack's elements at 0, step, 2*step ... repeat. */
static int lp_dups(const unsigned char *lp, unsigned step)
{
    size_t n = lp_count(lp) / step, k = 0;
    struct dupset d;
    int dup = 0;
    dup_init(&d, n);
    for (size_t p = lp_first(lp); p != LP_NONE && !dup; k++) {
        if (k % step == 0) {
            struct elem x;
            elem_from_lp(&x, lp, p);
            dup = dup_add(&d, &x);
        }
        p = lp_next(lp, p);
    }
    dup_free(&d);
    return dup;
}

/* Longest element (as a string) of a listpack, at positions k with
 * k % step < upto. */
static size_t lp_maxlen(const unsigned char *lp, unsigned step, unsigned upto)
{
    size_t m = 0, k = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), k++) {
        if (k % step >= upto)
            continue;
        struct elem x;
        elem_from_lp(&x, lp, p);
        if (x.len > m)
            m = x.len;
    }
    return m;
}

/* ---- ziplist (RDB types 10, 12, 13, 14) ---- */
typedef int (*elem_fn)(void *arg, const struct elem *x);

static inline uint32_t rd_u32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walk a ziplist of n bytes, checking every entry; fn gets each element.
 * Returns the element count, or -1 if malformed (or fn failed). */
static long ziplist_walk(const unsigned char *zl, size_t n, elem_fn fn, void *arg)
{
    if (n < 11 || rd_u32le(zl) != n || zl[n - 1] != 0xFF)
        return -1;
    size_t zltail = rd_u32le(zl + 4), declared = (size_t)zl[8] | (size_t)zl[9] << 8;
    size_t p = 10, prevsz = 0, last = 0;
    long count = 0;
    while (p < n - 1) {
        size_t start = p, prevlen;
        if (zl[p] < 254) {
            prevlen = zl[p];
            p += 1;
        } else if (zl[p] == 254) {
            if (p + 5 > n - 1)
                return -1;
            prevlen = rd_u32le(zl + p + 1);
            p += 5;
        } else {
            return -1;
        }
        if (prevlen != prevsz)
            return -1;
        if (p >= n - 1)
            return -1;
        unsigned char b = zl[p];
        struct elem x;
        size_t dlen = 0;
        long long v = 0;
        int isint = 1;
        switch (b >> 6) {
        case 0:
            dlen = b & 0x3f;
            p += 1;
            isint = 0;
            break;
        case 1:
            if (p + 2 > n - 1)
                return -1;
            dlen = (size_t)(b & 0x3f) << 8 | zl[p + 1];
            p += 2;
            isint = 0;
            break;
        case 2:
            if (b != 0x80 || p + 5 > n - 1)
                return -1;
            dlen = (size_t)zl[p + 1] << 24 | (size_t)zl[p + 2] << 16 | (size_t)zl[p + 3] << 8 | zl[p + 4];
            p += 5;
            isint = 0;
            break;
        default:
            p += 1;
            if (b == 0xC0)
                dlen = 2;
            else if (b == 0xD0)
                dlen = 4;
            else if (b == 0xE0)
                dlen = 8;
            else if (b == 0xF0)
                dlen = 3;
            else if (b == 0xFE)
                dlen = 1;
            else if (b >= 0xF1 && b <= 0xFD)
                dlen = 0, v = (b & 0x0F) - 1;
            else
                return -1;
        }
        if (dlen > n - 1 - p)
            return -1;
        const unsigned char *d = zl + p;
        if (!isint) {
            x.s = (const char *)d;
            x.len = dlen;
        } else {
            switch (dlen) {
            case 1: v = (int8_t)d[0]; break;
            case 2: v = (int16_t)(uint16_t)(d[0] | d[1] << 8); break;
            case 3: v = (int32_t)(((uint32_t)d[0] << 8 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 24)) >> 8; break;
            case 4: v = (int32_t)rd_u32le(d); break;
            case 8: v = (long long)((uint64_t)rd_u32le(d) | (uint64_t)rd_u32le(d + 4) << 32); break;
            default: break;
            }
            x.len = (size_t)ll_to_str(x.ib, v);
            x.s = x.ib;
        }
        p += dlen;
        prevsz = p - start;
        last = start;
        count++;
        if (fn && fn(arg, &x) < 0)
            return -1;
    }
    if (p != n - 1 || (declared != 65535 && (size_t)count != declared) || (count && last != zltail) ||
        (!count && zltail != 10))
        return -1;
    return count;
}

/* ---- zipmap (RDB type 9) ---- */
static int zipmap_len(const unsigned char *zm, size_t n, size_t *p, size_t *len)
{
    if (*p >= n)
        return -1;
    if (zm[*p] < 254) {
        *len = zm[*p];
        *p += 1;
        return 0;
    }
    if (zm[*p] == 254 && *p + 5 <= n) {
        *len = rd_u32le(zm + *p + 1);
        *p += 5;
        return 0;
    }
    return -1;
}

/* Walk a zipmap (field, value, field, value ...); -1 if malformed. */
static long zipmap_walk(const unsigned char *zm, size_t n, elem_fn fn, void *arg)
{
    size_t p = 1;
    long count = 0;
    if (n < 2)
        return -1;
    for (;;) {
        size_t kl, vl;
        if (p >= n)
            return -1;
        if (zm[p] == 0xFF)
            return p == n - 1 ? count : -1;
        if (zipmap_len(zm, n, &p, &kl) < 0 || kl > n - p)
            return -1;
        struct elem k = {(const char *)zm + p, kl, {0}};
        p += kl;
        if (zipmap_len(zm, n, &p, &vl) < 0 || p >= n)
            return -1;
        size_t fr = zm[p++];
        if (vl > n - p || fr > n - p - vl)
            return -1;
        struct elem v = {(const char *)zm + p, vl, {0}};
        p += vl + fr;
        if (fn && (fn(arg, &k) < 0 || fn(arg, &v) < 0))
            return -1;
        count++;
    }
}

/* ---- lists ---- */
static int push_elem(void *arg, const struct elem *x)
{
    ql_push(arg, QL_TAIL, x->s, x->len);
    return 0;
}

/* The finished list: a listpack when it fits one node, else the quicklist. */
static struct entry *list_entry(struct rdb_in *in, struct quicklist *ql, const char *key, size_t klen,
                                long long expire)
{
    size_t szl, cntl;
    if (ql->count == 0) {
        ql_free(ql);
        in->empty_key = 1;
        return NULL;
    }
    ql_node_limit(list_max_listpack_size, &szl, &cntl);
    if (ql->len == 1 && !(ql->head->flags & QLN_PLAIN) && ql->head->sz <= szl && ql->count <= cntl) {
        unsigned char *lp = ql_take_single(ql);
        return entry_new_obj(OBJ_LIST, ENC_LISTPACK, key, klen, lp, expire);
    }
    return entry_new_obj(OBJ_LIST, ENC_QUICKLIST, key, klen, ql, expire);
}

static struct entry *load_list(struct rdb_in *in, int t, const char *key, size_t klen, long long expire)
{
    uint64_t n;
    struct quicklist *ql = ql_new(list_max_listpack_size, list_compress_depth);
    if (t == RDB_TYPE_LIST_ZIPLIST) {
        size_t bl;
        unsigned char *zl = rdb_r_str(in, &bl);
        if (!zl)
            goto fail;
        rdb_sanitized(in);
        long c = ziplist_walk(zl, bl, push_elem, ql);
        hk_free(zl);
        if (c < 0) {
            rdb_in_fail(in, "List ziplist integrity check failed");
            goto fail;
        }
        return list_entry(in, ql, key, klen, expire);
    }
    /* An element is at least a 1-byte string; a node a container length
     * (quicklist 2) and a non-empty blob. */
    if (rdb_r_count(in, &n, t == RDB_TYPE_LIST ? 1 : t == RDB_TYPE_LIST_QUICKLIST ? 2 : 3, "List element") < 0)
        goto fail;
    for (uint64_t i = 0; i < n; i++) {
        size_t bl;
        if (t == RDB_TYPE_LIST) {
            unsigned char *s = rdb_r_str(in, &bl);
            if (!s)
                goto fail;
            ql_push(ql, QL_TAIL, (char *)s, bl);
            hk_free(s);
            continue;
        }
        uint64_t container = RDB_QL_PACKED;
        if (t == RDB_TYPE_LIST_QUICKLIST_2) {
            if (rdb_r_len(in, &container, NULL) < 0)
                goto fail;
            if (container != RDB_QL_PACKED && container != RDB_QL_PLAIN) {
                rdb_in_fail(in, "Quicklist integrity check failed (node container %llu)",
                            (unsigned long long)container);
                goto fail;
            }
        }
        unsigned char *data = rdb_r_str(in, &bl);
        if (!data)
            goto fail;
        if (bl == 0) {
            hk_free(data);
            rdb_in_fail(in, "Quicklist node is empty");
            goto fail;
        }
        if (container == RDB_QL_PLAIN) {
            ql_push(ql, QL_TAIL, (char *)data, bl);
            hk_free(data);
            continue;
        }
        if (t == RDB_TYPE_LIST_QUICKLIST) {
            rdb_sanitized(in);
            long c = ziplist_walk(data, bl, push_elem, ql);
            hk_free(data);
            if (c < 0) {
                rdb_in_fail(in, "Ziplist integrity check failed");
                goto fail;
            }
            continue;
        }
        rdb_sanitized(in);
        if (!lp_validate(data, bl)) {
            hk_free(data);
            rdb_in_fail(in, "Listpack integrity check failed");
            goto fail;
        }
        size_t cnt = lp_count(data);
        if (cnt == 0) { /* skipped, as Redis does */
            hk_free(data);
            continue;
        }
        if (cnt > 65535 || ql_exceeds(ql->fill, bl, cnt) ||
            (ql->tail && !(ql->tail->flags & QLN_PLAIN) && !ql_exceeds(ql->fill, ql->tail->sz + bl, ql->tail->count + cnt))) {
            /* Too big for one of our nodes, or small enough to share the
             * tail node: element by element. */
            for (size_t p = lp_first(data); p != LP_NONE; p = lp_next(data, p)) {
                struct elem x;
                elem_from_lp(&x, data, p);
                ql_push(ql, QL_TAIL, x.s, x.len);
            }
            hk_free(data);
        } else {
            ql_append_lp(ql, hk_realloc(data, bl));
        }
    }
    return list_entry(in, ql, key, klen, expire);
fail:
    ql_free(ql);
    return NULL;
}

/* ---- sets ---- */
struct setb {
    struct entry *e;
};

static int set_add_elem(void *arg, const struct elem *x)
{
    struct setb *b = arg;
    return set_load_add(b->e, x->s, x->len) ? 0 : -1;
}

static size_t intset_limit(void)
{
    size_t m = set_max_intset_entries < 0 ? 0 : (size_t)set_max_intset_entries;
    return m > (1UL << 30) ? (1UL << 30) : m;
}

static struct entry *load_set(struct rdb_in *in, int t, const char *key, size_t klen, long long expire)
{
    struct entry *e = NULL;
    if (t == RDB_TYPE_SET) {
        uint64_t n;
        if (rdb_r_count(in, &n, 1, "Set member") < 0)
            return NULL;
        if (n == 0) {
            in->empty_key = 1;
            return NULL;
        }
        e = set_load_new(key, klen, expire, rdb_presize(in, n));
        for (uint64_t i = 0; i < n; i++) {
            size_t l;
            unsigned char *s = rdb_r_str(in, &l);
            if (!s) {
                entry_free(e);
                return NULL;
            }
            int added = set_load_add(e, (char *)s, l);
            hk_free(s);
            if (!added) {
                entry_free(e);
                rdb_in_fail(in, "Duplicate set members detected");
                return NULL;
            }
        }
        return set_load_finish(e);
    }
    size_t bl;
    unsigned char *blob = rdb_r_str(in, &bl);
    if (!blob)
        return NULL;
    if (t == RDB_TYPE_SET_INTSET) {
        rdb_sanitized(in);
        if (!is_validate(blob, bl)) {
            hk_free(blob);
            rdb_in_fail(in, "Intset integrity check failed");
            return NULL;
        }
        size_t n = is_len(blob);
        if (n == 0) {
            hk_free(blob);
            in->empty_key = 1;
            return NULL;
        }
        if (n <= intset_limit())
            return set_load_finish(entry_new_obj(OBJ_SET, ENC_INTSET, key, klen, hk_realloc(blob, bl), expire));
        e = set_load_new(key, klen, expire, n);
        for (size_t i = 0; i < n; i++) {
            char b[24];
            int l = ll_to_str(b, is_get(blob, i));
            set_load_add(e, b, (size_t)l);
        }
        hk_free(blob);
        return set_load_finish(e);
    }
    /* RDB_TYPE_SET_LISTPACK */
    rdb_sanitized(in);
    if (!lp_validate(blob, bl)) {
        hk_free(blob);
        rdb_in_fail(in, "Set listpack integrity check failed");
        return NULL;
    }
    size_t n = lp_count(blob);
    if (n == 0) {
        hk_free(blob);
        in->empty_key = 1;
        return NULL;
    }
    if (n <= (size_t)(set_max_listpack_entries < 0 ? 0 : set_max_listpack_entries) &&
        lp_maxlen(blob, 1, 1) <= (size_t)(set_max_listpack_value < 0 ? 0 : set_max_listpack_value)) {
        if (lp_dups(blob, 1)) {
            hk_free(blob);
            rdb_in_fail(in, "Duplicate set members detected");
            return NULL;
        }
        return set_load_finish(entry_new_obj(OBJ_SET, ENC_LISTPACK, key, klen, hk_realloc(blob, bl), expire));
    }
    e = set_load_new(key, klen, expire, n);
    struct setb b = {e};
    for (size_t p = lp_first(blob); p != LP_NONE; p = lp_next(blob, p)) {
        struct elem x;
        elem_from_lp(&x, blob, p);
        if (set_add_elem(&b, &x) < 0) {
            hk_free(blob);
            entry_free(e);
            rdb_in_fail(in, "Duplicate set members detected");
            return NULL;
        }
    }
    hk_free(blob);
    return set_load_finish(e);
}

/* ---- sorted sets ---- */

/* A score element of a listpack: 1 and *d if it is a number (not NaN). */
static int lp_score_ok(const unsigned char *lp, size_t pos, double *d)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (!v.s) {
        *d = (double)v.ll;
        return 1;
    }
    return v.len > 0 && str_to_d((const char *)v.s, v.len, d) && !isnan(*d);
}

static int zadd_one(struct entry *e, double score, const char *m, size_t mlen)
{
    int out = 0;
    double ns;
    if (!zset_add(e, score, m, mlen, ZA_NX, &out, &ns))
        return 0;
    return (out & ZO_ADDED) != 0;
}

struct zpair {
    char *m;
    size_t len;
    double score;
};

static struct entry *zset_from_pairs(struct rdb_in *in, struct zpair *v, size_t n, const char *key, size_t klen,
                                     long long expire)
{
    size_t maxlen = 0;
    uint8_t enc;
    for (size_t i = 0; i < n; i++)
        if (v[i].len > maxlen)
            maxlen = v[i].len;
    void *p = zset_new_value(n, maxlen, &enc);
    struct entry *e = entry_new_obj(OBJ_ZSET, enc, key, klen, p, expire);
    for (size_t i = 0; i < n; i++) {
        if (!zadd_one(e, v[i].score, v[i].m, v[i].len)) {
            entry_free(e);
            rdb_in_fail(in, "Duplicate zset fields detected");
            return NULL;
        }
    }
    return zset_load_finish(e);
}

static int zpair_elem(void *arg, const struct elem *x)
{
    /* ziplist walker: member, score, member, score ... into a vector */
    struct {
        struct zpair *v;
        size_t n, cap;
        int half;
    } *z = arg;
    if (!z->half) {
        if (z->n == z->cap) {
            z->cap = hk_grow_cap(z->cap, z->n + 1, 16, sizeof(*z->v));
            z->v = hk_realloc(z->v, hk_array_bytes(z->cap, sizeof(*z->v)));
        }
        z->v[z->n].m = hk_memdup(x->s, x->len ? x->len : 1);
        z->v[z->n].len = x->len;
        z->half = 1;
        return 0;
    }
    double d;
    z->half = 0;
    if (!str_to_d(x->s, x->len, &d) || isnan(d)) {
        hk_free(z->v[z->n].m);
        return -1;
    }
    z->v[z->n++].score = d;
    return 0;
}

static void zpairs_free(struct zpair *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hk_free(v[i].m);
    hk_free(v);
}

static struct entry *load_zset(struct rdb_in *in, int t, const char *key, size_t klen, long long expire)
{
    if (t == RDB_TYPE_ZSET || t == RDB_TYPE_ZSET_2) {
        uint64_t n;
        /* member (a string: 1 byte at least) and score (8 bytes binary,
         * or at least its 1-byte length in the old text form) */
        if (rdb_r_count(in, &n, t == RDB_TYPE_ZSET_2 ? 9 : 2, "Sorted set member") < 0)
            return NULL;
        if (n == 0) {
            in->empty_key = 1;
            return NULL;
        }
        int small = n <= (uint64_t)(zset_max_listpack_entries < 0 ? 0 : zset_max_listpack_entries);
        struct zpair *v = small ? hk_malloc(n * sizeof(*v)) : NULL;
        struct entry *e = NULL;
        size_t got = 0;
        if (!small) {
            uint8_t enc;
            void *p = zset_new_value(rdb_presize(in, n), SIZE_MAX, &enc);
            e = entry_new_obj(OBJ_ZSET, enc, key, klen, p, expire);
        }
        for (uint64_t i = 0; i < n; i++) {
            size_t l;
            double d;
            unsigned char *m = rdb_r_str(in, &l);
            if (!m)
                goto zfail;
            if ((t == RDB_TYPE_ZSET_2 ? rdb_r_double_bin(in, &d) : rdb_r_double_str(in, &d)) < 0) {
                hk_free(m);
                goto zfail;
            }
            if (isnan(d)) {
                hk_free(m);
                rdb_in_fail(in, "Zset with NAN score detected");
                goto zfail;
            }
            if (small) {
                v[got].m = (char *)m;
                v[got].len = l;
                v[got++].score = d;
                continue;
            }
            int ok = zadd_one(e, d, (char *)m, l);
            hk_free(m);
            if (!ok) {
                rdb_in_fail(in, "Duplicate zset fields detected");
                goto zfail;
            }
        }
        if (!small)
            return zset_load_finish(e);
        e = zset_from_pairs(in, v, got, key, klen, expire);
        zpairs_free(v, got);
        return e;
    zfail:
        if (e)
            entry_free(e);
        if (v)
            zpairs_free(v, got);
        return NULL;
    }
    size_t bl;
    unsigned char *blob = rdb_r_str(in, &bl);
    if (!blob)
        return NULL;
    if (t == RDB_TYPE_ZSET_ZIPLIST) {
        struct {
            struct zpair *v;
            size_t n, cap;
            int half;
        } z = {NULL, 0, 0, 0};
        rdb_sanitized(in);
        long c = ziplist_walk(blob, bl, zpair_elem, &z);
        hk_free(blob);
        if (c < 0 || z.half) {
            if (z.half) /* a member whose score never came */
                hk_free(z.v[z.n].m);
            zpairs_free(z.v, z.n);
            rdb_in_fail(in, "Zset ziplist integrity check failed");
            return NULL;
        }
        if (z.n == 0) {
            hk_free(z.v);
            in->empty_key = 1;
            return NULL;
        }
        struct entry *e = zset_from_pairs(in, z.v, z.n, key, klen, expire);
        zpairs_free(z.v, z.n);
        return e;
    }
    /* RDB_TYPE_ZSET_LISTPACK */
    rdb_sanitized(in);
    if (!lp_validate(blob, bl) || lp_count(blob) % 2) {
        hk_free(blob);
        rdb_in_fail(in, "Zset listpack integrity check failed");
        return NULL;
    }
    size_t n = lp_count(blob) / 2;
    if (n == 0) {
        hk_free(blob);
        in->empty_key = 1;
        return NULL;
    }
    /* Scores must be numbers; note whether the order is ours. */
    int sorted = 1;
    double prev = 0;
    struct elem pm = {NULL, 0, {0}};
    char pmbuf[24];
    for (size_t p = lp_first(blob); p != LP_NONE;) {
        size_t sp = lp_next(blob, p);
        double d;
        if (!lp_score_ok(blob, sp, &d)) {
            hk_free(blob);
            rdb_in_fail(in, "Zset listpack integrity check failed (invalid score)");
            return NULL;
        }
        struct elem m;
        elem_from_lp(&m, blob, p);
        if (pm.s && (d < prev || (d == prev && zsl_memcmp(pm.s, pm.len, m.s, m.len) >= 0)))
            sorted = 0;
        prev = d;
        if (m.s == m.ib) {
            memcpy(pmbuf, m.ib, m.len);
            pm.s = pmbuf;
        } else {
            pm.s = m.s;
        }
        pm.len = m.len;
        p = lp_next(blob, sp);
    }
    if (sorted && n <= (size_t)(zset_max_listpack_entries < 0 ? 0 : zset_max_listpack_entries) &&
        lp_maxlen(blob, 2, 1) <= (size_t)(zset_max_listpack_value < 0 ? 0 : zset_max_listpack_value)) {
        if (lp_dups(blob, 2)) {
            hk_free(blob);
            rdb_in_fail(in, "Duplicate zset fields detected");
            return NULL;
        }
        return zset_load_finish(entry_new_obj(OBJ_ZSET, ENC_LISTPACK, key, klen, hk_realloc(blob, bl), expire));
    }
    /* Too big for a listpack here, or not in order: member by member. */
    struct zpair *v = hk_malloc(n * sizeof(*v));
    size_t k = 0;
    for (size_t p = lp_first(blob); p != LP_NONE;) {
        size_t sp = lp_next(blob, p);
        struct elem m;
        elem_from_lp(&m, blob, p);
        v[k].m = hk_memdup(m.s, m.len ? m.len : 1);
        v[k].len = m.len;
        lp_score_ok(blob, sp, &v[k].score);
        k++;
        p = lp_next(blob, sp);
    }
    hk_free(blob);
    struct entry *e = zset_from_pairs(in, v, k, key, klen, expire);
    zpairs_free(v, k);
    return e;
}

/* ---- hashes ---- */
struct hashb {
    struct entry *e;
    struct elem f; /* pending field (walkers give field, value, ...) */
    char fbuf[24];
    int half;
    long long now;
};

static int hash_add_elem(void *arg, const struct elem *x)
{
    struct hashb *b = arg;
    if (!b->half) {
        b->f = *x;
        if (x->s == x->ib) {
            memcpy(b->fbuf, x->ib, x->len);
            b->f.s = b->fbuf;
        }
        b->half = 1;
        return 0;
    }
    b->half = 0;
    return hash_set(b->e, b->f.s, b->f.len, x->s, x->len, 0) ? 0 : -1;
}

static long long load_now(struct rdb_in *in)
{
    if (db_loading)
        return 1; /* an AOF base: no field is dropped as expired (db.h) */
    return in->now_ms ? in->now_ms : time_ms();
}

/* The end of a hash load: E_HFE when a field has a TTL, the inline form,
 * or "empty" when nothing is left. */
static struct entry *hash_done(struct rdb_in *in, struct entry *e)
{
    if (hash_length(e) == 0) {
        entry_free(e);
        in->empty_key = 2; /* every field had expired */
        return NULL;
    }
    if (hash_has_ttl(e))
        e->flags |= E_HFE;
    return hash_load_finish(e);
}

/* n: the field count (decides the encoding); hint: what the table may be
 * presized for (rdb_presize for a count read from the input). */
static struct entry *hash_new_entry(const char *key, size_t klen, long long expire, uint64_t n, size_t hint)
{
    struct entry *e = entry_new_obj(OBJ_HASH, ENC_LISTPACK, key, klen, hash_new(), expire);
    if (n > (uint64_t)(hash_max_listpack_entries < 0 ? 0 : hash_max_listpack_entries))
        hash_convert_ht(e, hint);
    return e;
}

/* Validate a listpackex (field, value, TTL triples): TTLs integers within
 * range, the ones set ascending and before the unset (0) ones.  *sorted
 * tells whether that order holds; returns 0 if a TTL is invalid. */
static int lpex_check(const unsigned char *lp, int *sorted)
{
    long long prev = 0;
    int seen_zero = 0;
    *sorted = 1;
    size_t k = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), k++) {
        if (k % 3 != 2)
            continue;
        struct lp_val v;
        lp_get(lp, p, &v);
        if (v.s || v.ll < 0 || v.ll > HFE_TIME_MAX)
            return 0;
        if (v.ll == 0) {
            seen_zero = 1;
        } else {
            if (seen_zero || v.ll < prev)
                *sorted = 0;
            prev = v.ll;
        }
    }
    return 1;
}

static struct entry *load_hash(struct rdb_in *in, int t, const char *key, size_t klen, long long expire)
{
    long long now = load_now(in);
    if (t == RDB_TYPE_HASH || t == RDB_TYPE_HASH_METADATA || t == RDB_TYPE_HASH_METADATA_PRE_GA) {
        long long min = 0;
        uint64_t n;
        if (t == RDB_TYPE_HASH_METADATA && rdb_r_millis(in, &min) < 0)
            return NULL;
        /* field and value: 1 byte each at least, + the TTL's length */
        if (rdb_r_count(in, &n, t == RDB_TYPE_HASH ? 2 : 3, "Hash field") < 0)
            return NULL;
        if (n == 0) {
            in->empty_key = 1;
            return NULL;
        }
        struct entry *e = hash_new_entry(key, klen, expire, n, rdb_presize(in, n));
        for (uint64_t i = 0; i < n; i++) {
            long long at = 0;
            if (t != RDB_TYPE_HASH) {
                uint64_t ttl;
                if (rdb_r_len(in, &ttl, NULL) < 0)
                    goto hfail;
                at = t == RDB_TYPE_HASH_METADATA ? (ttl ? (long long)(ttl + (uint64_t)min - 1) : 0) : (long long)ttl;
                if (at < 0 || at > HFE_TIME_MAX) {
                    rdb_in_fail(in, "invalid expireAt time: %llu", (unsigned long long)at);
                    goto hfail;
                }
            }
            size_t fl, vl;
            unsigned char *f = rdb_r_str(in, &fl), *v = f ? rdb_r_str(in, &vl) : NULL;
            if (!v) {
                hk_free(f);
                goto hfail;
            }
            if (at && at <= now) { /* expired already: dropped, as a master does */
                hk_free(f);
                hk_free(v);
                continue;
            }
            int created = hash_set(e, (char *)f, fl, (char *)v, vl, 0);
            if (created && at)
                hash_set_field_ttl(e, (char *)f, fl, at, 0, now);
            hk_free(f);
            hk_free(v);
            if (!created) {
                rdb_in_fail(in, "Duplicate hash fields detected");
                goto hfail;
            }
        }
        return hash_done(in, e);
    hfail:
        entry_free(e);
        return NULL;
    }
    if (t == RDB_TYPE_HASH_LISTPACK_EX) {
        long long min;
        if (rdb_r_millis(in, &min) < 0)
            return NULL;
    }
    size_t bl;
    unsigned char *blob = rdb_r_str(in, &bl);
    if (!blob)
        return NULL;
    if (t == RDB_TYPE_HASH_ZIPMAP || t == RDB_TYPE_HASH_ZIPLIST) {
        rdb_sanitized(in);
        long c = t == RDB_TYPE_HASH_ZIPMAP ? zipmap_walk(blob, bl, NULL, NULL) : ziplist_walk(blob, bl, NULL, NULL);
        if (c < 0 || (t == RDB_TYPE_HASH_ZIPLIST && c % 2)) {
            hk_free(blob);
            rdb_in_fail(in, "Hash %s integrity check failed", t == RDB_TYPE_HASH_ZIPMAP ? "Zipmap" : "Ziplist");
            return NULL;
        }
        long pairs = t == RDB_TYPE_HASH_ZIPMAP ? c : c / 2;
        if (pairs == 0) {
            hk_free(blob);
            in->empty_key = 1;
            return NULL;
        }
        struct hashb b = {hash_new_entry(key, klen, expire, (uint64_t)pairs, (size_t)pairs), {NULL, 0, {0}}, {0}, 0, now};
        c = t == RDB_TYPE_HASH_ZIPMAP ? zipmap_walk(blob, bl, hash_add_elem, &b)
                                      : ziplist_walk(blob, bl, hash_add_elem, &b);
        hk_free(blob);
        if (c < 0) {
            entry_free(b.e);
            rdb_in_fail(in, "Hash %s with dup elements", t == RDB_TYPE_HASH_ZIPMAP ? "zipmap" : "ziplist");
            return NULL;
        }
        return hash_done(in, b.e);
    }
    /* Listpacks: 16 (field, value) and 23/25 (field, value, TTL). */
    unsigned step = t == RDB_TYPE_HASH_LISTPACK ? 2 : 3;
    int sorted = 1;
    rdb_sanitized(in);
    if (!lp_validate(blob, bl) || lp_count(blob) % step || (step == 3 && !lpex_check(blob, &sorted))) {
        hk_free(blob);
        rdb_in_fail(in, "Hash listpack integrity check failed");
        return NULL;
    }
    size_t n = lp_count(blob) / step;
    if (n == 0) {
        hk_free(blob);
        in->empty_key = 1;
        return NULL;
    }
    if (lp_dups(blob, step)) {
        hk_free(blob);
        rdb_in_fail(in, "Hash listpack with dup elements");
        return NULL;
    }
    struct entry *e;
    if (sorted) {
        e = entry_new_obj(OBJ_HASH, step == 2 ? ENC_LISTPACK : ENC_LISTPACK_EX, key, klen, hk_realloc(blob, bl),
                          expire);
        if (step == 3)
            hash_drop_expired(e, now, LONG_MAX);
        if (n > (size_t)(hash_max_listpack_entries < 0 ? 0 : hash_max_listpack_entries) ||
            lp_maxlen(entry_ptr(e), step, 2) > (size_t)(hash_max_listpack_value < 0 ? 0 : hash_max_listpack_value))
            hash_convert_ht(e, n);
        return hash_done(in, e);
    }
    /* TTLs out of order: field by field. */
    e = hash_new_entry(key, klen, expire, n, n);
    for (size_t p = lp_first(blob); p != LP_NONE;) {
        size_t vp = lp_next(blob, p), tp = lp_next(blob, vp);
        struct elem f, v;
        struct lp_val tv;
        elem_from_lp(&f, blob, p);
        elem_from_lp(&v, blob, vp);
        lp_get(blob, tp, &tv);
        p = lp_next(blob, tp);
        if (tv.ll && tv.ll <= now)
            continue;
        hash_set(e, f.s, f.len, v.s, v.len, 0);
        if (tv.ll)
            hash_set_field_ttl(e, f.s, f.len, tv.ll, 0, now);
    }
    hk_free(blob);
    return hash_done(in, e);
}

/* ---- strings ---- */
static struct entry *load_string(struct rdb_in *in, const char *key, size_t klen, long long expire)
{
    uint64_t len;
    int enc;
    if (rdb_r_len(in, &len, &enc) < 0)
        return NULL;
    if (!enc) {
        /* Straight into the entry. */
        if (len > UINT32_MAX || !rdb_in_room(in, len)) {
            rdb_in_fail(in, "Unexpected end of file (the file is truncated)");
            return NULL;
        }
        struct entry *e = entry_new(OBJ_STRING, key, klen, len, expire);
        if (rdb_r_raw(in, entry_val(e), len) < 0) {
            hk_free(e);
            return NULL;
        }
        e->enc = string_enc(entry_val(e), len);
        return e;
    }
    if (len == RDB_ENC_LZF) {
        /* Decompressed straight into the entry. */
        uint64_t clen, ulen;
        if (rdb_r_lzf_head(in, &clen, &ulen) < 0)
            return NULL;
        if (ulen > UINT32_MAX) {
            rdb_in_fail(in, "String too long");
            return NULL;
        }
        struct entry *e = entry_new(OBJ_STRING, key, klen, ulen, expire);
        if (rdb_r_lzf_body(in, clen, entry_val(e), ulen) < 0) {
            hk_free(e);
            return NULL;
        }
        e->enc = string_enc(entry_val(e), ulen);
        return e;
    }
    size_t n;
    unsigned char *s = rdb_r_str_rest(in, len, enc, &n);
    if (!s)
        return NULL;
    if (n > UINT32_MAX) {
        hk_free(s);
        rdb_in_fail(in, "String too long");
        return NULL;
    }
    struct entry *e = entry_new_string(key, klen, (char *)s, n, expire);
    hk_free(s);
    return e;
}

struct entry *rdb_load_value(struct rdb_in *in, int t, const char *key, size_t klen, long long expire)
{
    in->empty_key = 0;
    if (in->failed)
        return NULL;
    switch (t) {
    case RDB_TYPE_STRING: return load_string(in, key, klen, expire);
    case RDB_TYPE_LIST:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2: return load_list(in, t, key, klen, expire);
    case RDB_TYPE_SET:
    case RDB_TYPE_SET_INTSET:
    case RDB_TYPE_SET_LISTPACK: return load_set(in, t, key, klen, expire);
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_ZSET_LISTPACK: return load_zset(in, t, key, klen, expire);
    case RDB_TYPE_HASH:
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_HASH_METADATA_PRE_GA:
    case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case RDB_TYPE_HASH_METADATA:
    case RDB_TYPE_HASH_LISTPACK_EX: return load_hash(in, t, key, klen, expire);
    case RDB_TYPE_STREAM_LISTPACKS:
    case RDB_TYPE_STREAM_LISTPACKS_2:
    case RDB_TYPE_STREAM_LISTPACKS_3: {
        uint8_t enc = ENC_STREAM;
        void *p = rdb_load_stream(in, t, &enc);
        if (!p) {
            if (!in->failed)
                rdb_in_fail(in, "Stream loading failed");
            return NULL;
        }
        return entry_new_obj(OBJ_STREAM, enc, key, klen, p, expire);
    }
    case RDB_TYPE_MODULE_2: return rdb_load_module(in, key, klen, expire);
    case RDB_TYPE_MODULE_PRE_GA: rdb_in_fail(in, "Pre-release module format not supported"); return NULL;
    default: rdb_in_fail(in, "Unknown RDB value type %d", t); return NULL;
    }
}

int rdb_skip_value(struct rdb_in *in, int t, unsigned long long *elems)
{
    struct entry *e = rdb_load_value(in, t, "", 0, -1);
    *elems = 0;
    if (!e)
        return in->failed ? -1 : 0;
    *elems = e->type == OBJ_STRING ? 1 : obj_len(e);
    entry_free(e);
    return 0;
}

const char *rdb_type_name(int t)
{
    static const char *names[] = {
        [RDB_TYPE_STRING] = "string",
        [RDB_TYPE_LIST] = "list-linkedlist",
        [RDB_TYPE_SET] = "set-hashtable",
        [RDB_TYPE_ZSET] = "zset-v1",
        [RDB_TYPE_HASH] = "hash-hashtable",
        [RDB_TYPE_ZSET_2] = "zset-v2",
        [RDB_TYPE_MODULE_PRE_GA] = "module-pre-release",
        [RDB_TYPE_MODULE_2] = "module-value",
        [RDB_TYPE_HASH_ZIPMAP] = "hash-zipmap",
        [RDB_TYPE_LIST_ZIPLIST] = "list-ziplist",
        [RDB_TYPE_SET_INTSET] = "set-intset",
        [RDB_TYPE_ZSET_ZIPLIST] = "zset-ziplist",
        [RDB_TYPE_HASH_ZIPLIST] = "hash-ziplist",
        [RDB_TYPE_LIST_QUICKLIST] = "quicklist",
        [RDB_TYPE_STREAM_LISTPACKS] = "stream",
        [RDB_TYPE_HASH_LISTPACK] = "hash-listpack",
        [RDB_TYPE_ZSET_LISTPACK] = "zset-listpack",
        [RDB_TYPE_LIST_QUICKLIST_2] = "quicklist-v2",
        [RDB_TYPE_STREAM_LISTPACKS_2] = "stream-v2",
        [RDB_TYPE_SET_LISTPACK] = "set-listpack",
        [RDB_TYPE_STREAM_LISTPACKS_3] = "stream-v3",
        [RDB_TYPE_HASH_METADATA_PRE_GA] = "hash-hashtable-md-pre-release",
        [RDB_TYPE_HASH_LISTPACK_EX_PRE_GA] = "hash-listpack-md-pre-release",
        [RDB_TYPE_HASH_METADATA] = "hash-hashtable-md",
        [RDB_TYPE_HASH_LISTPACK_EX] = "hash-listpack-md",
    };
    if (t < 0 || t > RDB_TYPE_MAX || !names[t])
        return "unknown";
    return names[t];
}
