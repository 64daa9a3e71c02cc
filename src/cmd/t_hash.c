/* t_hash.c - the hash commands: HSET ... HSCAN and field expiry (HEXPIRE
 * ...).  The value itself (encodings, field TTLs, their expiry) is
 * types/hash.c; here are argument parsing, replies, propagation and events.
 *
 * Expired fields are invisible: commands that access a field delete it when
 * they find it expired (and the key when it was the last field, as Redis
 * 7.4 does); HGETALL/HKEYS/HVALS/HSCAN skip them; HLEN counts them and HDEL
 * deletes them like live ones (both as Redis).  The expiry sweeper (db.c)
 * calls hash_expire_fields() for entries flagged E_HFE; every write keeps
 * that flag in step with "the hash has a field TTL" (hfe_sync).
 *
 * Redis 8's HGETDEL / HGETEX / HSETEX (at the end) reuse the same pieces;
 * each call is one propagation unit, fed as Redis 8 feeds it.
 *
 * Handlers run with the key's slot lock held by the dispatcher. */
#include <errno.h>
#include <limits.h>
#include <math.h>
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
#include "../types/hash.h"
#include "t_common.h"

/* The largest absolute field expiry accepted (ms), as Redis 7.4. */
#define HFE_MAX_MS ((1LL << 46) - 1)
/* HRANDFIELD with a huge negative count: stop (and close) past this much
 * pending output instead of building an endless reply. */
#define HRAND_MAX_REPLY (512ull << 20)

/* ------------------------------------------------ listpack utilities --- */
static inline void reply_lpv(struct reply *r, const struct lp_val *v)
{
    if (v->s)
        reply_bulk(r, (const char *)v->s, v->len);
    else
        reply_bulk_ll(r, v->ll);
}

/* ------------------------------------------------------- command helpers --- */

/* A field dropped because its TTL passed: HDEL <key> <field> on the AOF, as
 * Redis 7.4, so that a replay (where nothing expires) drops it at the same
 * point.  Also db_hash_field_expired_hook (types/hash.c's drops), set by
 * notify_init. */
void hash_prop_field_expired(int db, const char *key, size_t klen, const char *f, size_t flen)
{
    prop_op_begin(db);
    prop_op_str("HDEL");
    prop_op_arg(key, klen);
    prop_op_arg(f, flen);
    prop_op_end();
}

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
    hash_attach_at(c->db, kslot(c, 1), e);
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
    if (!hash_find(e, f, flen, l))
        return 0;
    if (e->enc == ENC_LISTPACK || !hash_ttl_expired(hash_loc_ttl(e, l), db_now_ms()))
        return 1;
    hash_detach(e);
    hash_del_at(e, l);
    hash_expired_subkeys_add(1);
    hash_prop_field_expired(c->db, c->argv[1], c->argvlen[1], f, flen); /* HDEL to the AOF */
    hafter_delete(c, ep);
    hash_attach_at(-1, 0, *ep);
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
        hash_detach(e);
    hash_try_convert(e, c->argvlen, 2, c->argc - 1);
    for (int i = 2; i < c->argc; i += 2)
        created += hash_set(e, c->argv[i], c->argvlen[i], c->argv[i + 1], c->argvlen[i + 1], 0);
    hfe_sync(c, e);
    hattach(c, e);
    KEY_MODIFIED(c, 1, NOTIFY_HASH, "hset");
    prop_dirty_add((unsigned long long)(c->argc - 2) / 2 - 1); /* one change per field given, as Redis */
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
        hash_detach(e);
    hash_try_convert(e, c->argvlen, 2, 3);
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
    hash_loc_val(e, &l, &v);
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
            hash_loc_val(e, &l, &v);
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
        hash_detach(e);
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
            prop_dirty_add((unsigned long long)deleted - 1); /* one change per field deleted, as Redis */
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
        hash_loc_val(e, &l, &v);
        hash_lpv_str(&v, b, &n);
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
            if (ttls && hash_ttl_expired(hf_ttl(h), now))
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
        hash_loc_val(e, &l, &v);
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
        hash_detach(e);
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
        hash_loc_val(e, &l, &v);
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
        hash_detach(e);
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
    long long first = hash_min_field_ttl(*ep), now = db_now_ms();
    if (!first || first > now || db_loading || db_master_apply)
        return 0;
    hash_detach(*ep);
    hash_expire_prop_begin(c->db, c->argv[1], c->argvlen[1]);
    long n = hash_drop_expired(*ep, now, LONG_MAX);
    hash_expire_prop_end();
    hafter_delete(c, ep);
    hash_attach_at(-1, 0, *ep);
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
                reply_hf(c, hash_ht_random(t), withvalues, r3);
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
        struct hfield *h = hash_ht_random(t);
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
        struct hfield *h = hash_ht_random(entry_ptr(e));
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
    if (hash_ttl_expired(hf_ttl(h), st->now))
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
                if (hash_ttl_expired(hash_lp_int(lp, p), now))
                    continue;
            }
            const char *fs = hash_lpv_str(&f, fb, &fl);
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

/* A field TTL argument (argv[i]) as absolute unix ms: seconds or ms, added to
 * basetime (0 for the absolute forms).  Redis 8's parseExpireTime: negative
 * values, and times past HFE_MAX_MS, are refused.  0 or -1 (replied). */
static int parse_hfe_time(struct client *c, int i, int seconds, long long basetime, long long *out)
{
    long long when;
    if (arg_ll(c, i, &when) < 0)
        return -1;
    if (when < 0) {
        reply_error(&c->out, "ERR invalid expire time, must be >= 0");
        return -1;
    }
    if (seconds) {
        if (when > HFE_MAX_MS / 1000) {
            reply_errorf(&c->out, "ERR invalid expire time in '%s' command", c->cmd->name);
            return -1;
        }
        when *= 1000;
    }
    if (when > HFE_MAX_MS - basetime) {
        reply_errorf(&c->out, "ERR invalid expire time in '%s' command", c->cmd->name);
        return -1;
    }
    *out = when + basetime;
    return 0;
}

static void hexpire_generic(struct client *c, long long basetime, int seconds)
{
    int bad, cond = 0, at = 4;
    long long when;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (parse_hfe_time(c, 2, seconds, basetime, &when) < 0)
        return;
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
        hash_detach(e);
    reply_array(&c->out, n);
    for (int i = at + 1; i < c->argc; i++) {
        res[i] = -2;
        if (!e) {
            reply_int(&c->out, -2);
            continue;
        }
        struct hloc fl;
        int existed = hash_find(e, c->argv[i], c->argvlen[i], &fl);
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
        hash_detach(e);
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

/* ------------------------------------------- Redis 8: HGETDEL, HGETEX, HSETEX --- */

/* After HGETDEL / HGETEX / HSETEX: the WATCH / tracking signal.  A change
 * the command made itself counts as a write (the change counter moves and
 * the command, or what it fed instead, goes to the AOF); fields that only
 * expired on the way do not (their HDELs were fed as they went). */
static void hsignal(struct client *c, int changed)
{
    if (changed)
        KEY_SIGNAL(c, 1);
    else
        signal_modified_key(NULL, c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
}

/* One execution unit per call, as Redis 8 propagates these commands: the
 * HDELs of fields that expired on the way, or dropped for a time already
 * past, and the command's own form go to the AOF together (MULTI ... EXEC
 * when more than one).  So the bodies feed their own form (prop_rewrite)
 * whenever they change something themselves. */
static void hx_unit(struct client *c, void (*body)(struct client *))
{
    prop_unit_begin();
    body(c);
    prop_unit_end();
}

/* HGETDEL key FIELDS numfields field...: the values (nil for absent
 * fields), which are removed; the key goes with its last field.  Fed as
 * HDEL key <every field named> (Redis 8 rewrites its argv so). */
static void hgetdel_body(struct client *c)
{
    int bad;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    long long n = parse_fields(c, 3, "ERR Number of fields must be a positive integer");
    if (n < 0)
        return;
    int had = e != NULL;
    long expired = 0, deleted = 0;
    struct hloc l;
    struct lp_val v;
    reply_array(&c->out, n);
    for (int i = 4; i < c->argc; i++) {
        if (e)
            hash_detach(e); /* lazy expiry below may put it back inline */
        if (!e || !hfield_live_ex(c, &e, c->argv[i], c->argvlen[i], &l, &expired)) {
            reply_null(&c->out);
            continue;
        }
        hash_loc_val(e, &l, &v);
        reply_lpv(&c->out, &v);
        hash_del_at(e, &l);
        deleted++;
        if (hash_length(e) == 0) {
            hdelkey(c);
            e = NULL;
        }
    }
    if (e) {
        hfe_sync(c, e);
        hattach(c, e);
    }
    if (!expired && !deleted)
        return;
    hsignal(c, deleted > 0);
    if (expired)
        KEY_EVENT(c, 1, NOTIFY_HASH, "hexpired");
    if (deleted) {
        KEY_EVENT(c, 1, NOTIFY_HASH, "hdel");
        size_t cnt = (size_t)c->argc - 2;
        const char **av = hk_malloc(sizeof(*av) * cnt);
        size_t *al = hk_malloc(sizeof(*al) * cnt);
        av[0] = "HDEL", al[0] = 4;
        av[1] = c->argv[1], al[1] = c->argvlen[1];
        for (int i = 4; i < c->argc; i++)
            av[i - 2] = c->argv[i], al[i - 2] = c->argvlen[i];
        prop_rewrite(c, (int)cnt, av, al);
        hk_free(av);
        hk_free(al);
    }
    if (had && !e)
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
}

#define HX_EX 1
#define HX_PX 2
#define HX_EXAT 4
#define HX_PXAT 8
#define HX_PERSIST 16
#define HX_KEEPTTL 32
#define HX_FXX 64
#define HX_FNX 128
#define HX_TTL (HX_EX | HX_PX | HX_EXAT | HX_PXAT)

/* The option names of HGETEX / HSETEX (lower case), their flags. */
static int hx_option(struct client *c, int i)
{
    static const struct {
        const char *name;
        int flag;
    } opts[] = {{"ex", HX_EX},           {"px", HX_PX},           {"exat", HX_EXAT}, {"pxat", HX_PXAT},
                {"persist", HX_PERSIST}, {"keepttl", HX_KEEPTTL}, {"fxx", HX_FXX},   {"fnx", HX_FNX}};
    for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
        if (arg_is(c, i, opts[k].name))
            return opts[k].flag;
    return 0;
}

/* The time argument of a TTL option as absolute ms (0 or -1, replied). */
static int hx_time(struct client *c, int opt, int i, long long *when)
{
    return parse_hfe_time(c, i, (opt & (HX_EX | HX_EXAT)) != 0, (opt & (HX_EX | HX_PX)) ? db_now_ms() : 0, when);
}

/* HGETEX key [EX s | PX ms | EXAT t | PXAT t | PERSIST] FIELDS n field...:
 * the values, then the live fields named get the TTL (or lose theirs).  Fed
 * as Redis 8: HPEXPIREAT key <abs ms> FIELDS n field... / HPERSIST key
 * FIELDS n field... when a TTL changed; HDEL key field, one per field, when
 * the time was already past (fed as each goes; the command is not). */
static void hgetex_body(struct client *c)
{
    int bad, at = 3;
    long long when = 0;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    int opt = hx_option(c, 2) & (HX_TTL | HX_PERSIST);
    if (opt & HX_TTL) {
        if (hx_time(c, opt, 3, &when) < 0)
            return;
        at += 2;
    } else if (opt) {
        at += 1;
    }
    if (at >= c->argc) {
        reply_arity_error(c);
        return;
    }
    long long n = parse_fields(c, at, "ERR Number of fields must be a positive integer");
    if (n < 0)
        return;
    reply_array(&c->out, n);
    if (!e) {
        for (long long i = 0; i < n; i++)
            reply_null(&c->out);
        return;
    }
    long long now = db_now_ms();
    long expired = 0, updated = 0, deleted = 0;
    struct hloc l;
    struct lp_val v;
    for (int i = at + 1; i < c->argc; i++) {
        const char *f = c->argv[i];
        size_t flen = c->argvlen[i];
        if (e)
            hash_detach(e);
        if (!e || !hfield_live_ex(c, &e, f, flen, &l, &expired)) {
            reply_null(&c->out);
            continue;
        }
        hash_loc_val(e, &l, &v);
        reply_lpv(&c->out, &v);
        if (!opt)
            continue;
        int r = (opt & HX_PERSIST) ? hash_persist_field(e, f, flen, now) : hash_set_field_ttl(e, f, flen, when, 0, now);
        updated += r == 1;
        if (r == 2) {
            deleted++;
            hash_prop_field_expired(c->db, c->argv[1], c->argvlen[1], f, flen); /* HDEL, as Redis */
        }
        if (hash_length(e) == 0) {
            hdelkey(c);
            e = NULL;
        }
    }
    if (e) {
        hfe_sync(c, e);
        hattach(c, e);
    }
    if (!expired && !updated && !deleted)
        return;
    hsignal(c, updated + deleted > 0);
    if (expired)
        KEY_EVENT(c, 1, NOTIFY_HASH, "hexpired");
    if (updated) {
        KEY_EVENT(c, 1, NOTIFY_HASH, (opt & HX_PERSIST) ? "hpersist" : "hexpire");
        /* HGETEX key <opt> [t] FIELDS n f... -> HPERSIST key FIELDS n f... /
         * HPEXPIREAT key <abs ms> FIELDS n f... (argc - 1 either way). */
        size_t cnt = (size_t)c->argc - 1;
        const char **av = hk_malloc(sizeof(*av) * cnt);
        size_t *al = hk_malloc(sizeof(*al) * cnt);
        char tb[32];
        size_t k = 0;
        if (opt & HX_PERSIST) {
            av[k] = "HPERSIST", al[k++] = 8;
            av[k] = c->argv[1], al[k++] = c->argvlen[1];
        } else {
            av[k] = "HPEXPIREAT", al[k++] = 10;
            av[k] = c->argv[1], al[k++] = c->argvlen[1];
            av[k] = tb, al[k++] = (size_t)ll_to_str(tb, when);
        }
        for (int i = at - 1; i < c->argc; i++)
            av[k] = c->argv[i], al[k++] = c->argvlen[i];
        prop_rewrite(c, (int)k, av, al);
        hk_free(av);
        hk_free(al);
    } else if (deleted) {
        KEY_EVENT(c, 1, NOTIFY_HASH, "hdel");
        prop_prevent(); /* its HDELs were fed */
    }
    if (!e)
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
}

/* HSETEX's options up to FIELDS, in Redis 8's order of checks.  Sets
 * *flags, *when (absolute ms) and *when_at (argv index of the time, or
 * -1); returns the index of the first field, or -1 (replied). */
static int hsetex_parse(struct client *c, int *flags, long long *when, int *when_at)
{
    *flags = 0;
    *when_at = -1;
    for (int i = 2; i < c->argc; i++) {
        int opt = hx_option(c, i);
        if (arg_is(c, i, "fields")) {
            long long n;
            if (i >= c->argc - 3) {
                reply_arity_error(c);
                return -1;
            }
            if (arg_ll_range(c, i + 1, 1, INT_MAX, &n, "ERR invalid number of fields") < 0)
                return -1;
            long long left = c->argc - i - 2;
            if (left % 2 != 0 || n != left / 2) {
                reply_arity_error(c);
                return -1;
            }
            return i + 2;
        }
        if (opt & (HX_TTL | HX_KEEPTTL)) {
            if (*flags & (HX_TTL | HX_KEEPTTL)) {
                reply_error(&c->out, "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
                return -1;
            }
            *flags |= opt;
            if (opt == HX_KEEPTTL)
                continue;
            if (i >= c->argc - 1) {
                reply_error(&c->out, "ERR missing expire time");
                return -1;
            }
            i++;
            if (hx_time(c, opt, i, when) < 0)
                return -1;
            *when_at = i;
        } else if (opt & (HX_FXX | HX_FNX)) {
            if (*flags & (HX_FXX | HX_FNX)) {
                reply_error(&c->out, "ERR Only one of FXX or FNX arguments can be specified");
                return -1;
            }
            *flags |= opt;
        } else {
            /* Redis formats the argument with %s: it ends at a NUL byte. */
            const char *a = c->argv[i];
            size_t n = strnlen(a, c->argvlen[i]);
            char *msg = hk_malloc(n + 32);
            memcpy(msg, "ERR unknown argument: ", 22);
            memcpy(msg + 22, a, n);
            msg[22 + n] = '\0';
            reply_error(&c->out, msg);
            hk_free(msg);
            return -1;
        }
    }
    reply_arity_error(c); /* no FIELDS (unreachable with arity -6, as in Redis) */
    return -1;
}

/* HSETEX key [FNX | FXX] [EX s | PX ms | EXAT t | PXAT t | KEEPTTL] FIELDS n
 * field value...: 1 when every field was set, 0 when FNX / FXX refused
 * (then nothing is set).  Without a TTL option or KEEPTTL a field loses its
 * TTL, as with HSET.  Fed as Redis 8: as called, with a relative or
 * seconds time rewritten to PXAT <abs ms>; when the time was already past
 * (the fields are set and dropped) as HDEL key field, one per field. */
static void hsetex_body(struct client *c)
{
    int bad, flags, when_at;
    long long when = 0;
    int first = hsetex_parse(c, &flags, &when, &when_at);
    if (first < 0)
        return;
    struct entry *e = hlookup(c, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (!e && (flags & HX_FXX)) {
        reply_int(&c->out, 0);
        return;
    }
    long expired = 0;
    if (e && (flags & (HX_FXX | HX_FNX))) {
        long long found = 0, want = (c->argc - first) / 2;
        struct hloc l;
        for (int i = first; i < c->argc && e; i += 2) {
            int exists = hfield_live_ex(c, &e, c->argv[i], c->argvlen[i], &l, &expired);
            found += exists;
            if (((flags & HX_FXX) && !exists) || ((flags & HX_FNX) && exists))
                break;
        }
        if (((flags & HX_FNX) && found != 0) || ((flags & HX_FXX) && found != want)) {
            reply_int(&c->out, 0);
            if (expired) {
                hsignal(c, 0);
                KEY_EVENT(c, 1, NOTIFY_HASH, "hexpired");
                if (!e)
                    KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
            }
            prop_prevent(); /* nothing set: only the expired fields' HDELs */
            return;
        }
    }
    if (!e)
        e = hcreate(c); /* absent, or gone with its expired fields */
    else
        hash_detach(e);
    hash_try_convert(e, c->argvlen, first, c->argc - 1);
    long long now = db_now_ms();
    long updated = 0, deleted = 0;
    int keep = (flags & (HX_TTL | HX_KEEPTTL)) != 0;
    for (int i = first; i < c->argc; i += 2) {
        hash_set(e, c->argv[i], c->argvlen[i], c->argv[i + 1], c->argvlen[i + 1], keep);
        if (!(flags & HX_TTL))
            continue;
        int r = hash_set_field_ttl(e, c->argv[i], c->argvlen[i], when, 0, now);
        updated += r == 1;
        if (r == 2) {
            deleted++;
            hash_prop_field_expired(c->db, c->argv[1], c->argvlen[1], c->argv[i], c->argvlen[i]); /* HDEL */
        }
    }
    int gone = hash_length(e) == 0; /* every field set was dropped (a past time) */
    if (gone) {
        hdelkey(c);
    } else {
        hfe_sync(c, e);
        hattach(c, e);
    }
    reply_int(&c->out, 1);
    hsignal(c, 1);
    if (expired)
        KEY_EVENT(c, 1, NOTIFY_HASH, "hexpired");
    KEY_EVENT(c, 1, NOTIFY_HASH, "hset");
    if (deleted || updated)
        KEY_EVENT(c, 1, NOTIFY_HASH, deleted ? "hdel" : "hexpire");
    if (gone)
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    if (deleted) {
        prop_prevent(); /* its HDELs were fed */
    } else if ((flags & HX_TTL) && !(flags & HX_PXAT)) {
        const char **av = hk_malloc(sizeof(*av) * (size_t)c->argc);
        size_t *al = hk_malloc(sizeof(*al) * (size_t)c->argc);
        char tb[32];
        for (int i = 0; i < c->argc; i++)
            av[i] = c->argv[i], al[i] = c->argvlen[i];
        av[when_at - 1] = "PXAT", al[when_at - 1] = 4;
        av[when_at] = tb, al[when_at] = (size_t)ll_to_str(tb, when);
        prop_rewrite(c, c->argc, av, al);
        hk_free(av);
        hk_free(al);
    } else {
        prop_rewrite(c, c->argc, (const char *const *)c->argv, c->argvlen);
    }
}

void hgetdel_command(struct client *c)
{
    hx_unit(c, hgetdel_body);
}

void hgetex_command(struct client *c)
{
    hx_unit(c, hgetex_body);
}

void hsetex_command(struct client *c)
{
    hx_unit(c, hsetex_body);
}
