/* rdb_stream.c - streams in Redis's RDB format (value types 15, 19, 21),
 * written from the format's description: both directions.
 *
 * Payload:
 *   nodes (len), then per node: master ID (string of 16 bytes: ms, seq as
 *   big-endian u64) and a listpack (string);
 *   length, last-id ms, seq (lens);
 *   19/21: first-id ms, seq, max-deleted-id ms, seq, entries-added (lens);
 *   groups (len), per group: name (string), last-id ms, seq (lens),
 *     19/21: entries-read (len; -1 as 2^64-1),
 *     PEL (len), per entry: ID (16 raw bytes, big-endian), delivery time
 *       (millis, 8 bytes LE), delivery count (len);
 *     consumers (len), per consumer: name (string), seen-time (millis),
 *       21: active-time (millis), PEL (len) of raw IDs, each one of the
 *       group's PEL (which names no consumers itself).
 *
 * A node's listpack:
 *   master entry: live count, deleted count, nmaster, nmaster field names, 0
 *   then per entry: flags (1 deleted, 2 same fields as the master entry),
 *     ms - master ms, seq - master seq (64-bit wrapping),
 *     [nfields, field, value, ...] or (same fields) value ...,
 *     lp-count (the elements of the entry before it: 3 + values, + 1 +
 *     fields when the names are inline).
 *
 * Our blocks (ds/stream.h) are the same thing in another byte form: one
 * block per node, tombstones kept, the master fields of the block being
 * the master entry's; so node boundaries survive a trip both ways.
 *
 * Loading trusts nothing: every listpack is validated, every element is
 * checked for its kind and range, IDs must ascend across nodes and stay at
 * or below the last ID, counts must match what the nodes hold, PEL entries
 * must be unique and each owned by exactly one consumer.  A violation
 * fails the source with "<problem> at offset N" (the offset just after the
 * part read). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../types/stream.h"
#include "../types/types.h"
#include "../db/object.h"
#include "../ds/listpack.h"
#include "../ds/stream.h"
#include "rdb.h"

/* ------------------------------------------------------------ helpers --- */
static void id_to_raw(unsigned char *p, const struct stream_id *id)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        p[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
}

static void raw_to_id(const unsigned char *p, struct stream_id *id)
{
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = id->ms << 8 | p[i];
        id->seq = id->seq << 8 | p[8 + i];
    }
}

static int w_id(struct rdb_out *o, const struct stream_id *id)
{
    return rdb_w_len(o, id->ms) | rdb_w_len(o, id->seq);
}

static int w_raw_id(struct rdb_out *o, const struct stream_id *id)
{
    unsigned char raw[16];
    id_to_raw(raw, id);
    return rdb_w_raw(o, raw, sizeof(raw));
}

/* ------------------------------------------------------------- saving --- */
/* Redis's listpack for block i, built in b. */
static const unsigned char *node_listpack(const struct stream *s, size_t i, struct lp_builder *b, size_t *bytes)
{
    struct stream_node n;
    struct stream_entry e;
    unsigned flags;
    const char *f, *v;
    size_t fl, vl;

    lpb_reset(b);
    stream_node_open(s, i, &n);
    lpb_append_int(b, n.live);
    lpb_append_int(b, (long long)(n.count - n.live));
    lpb_append_int(b, n.nmaster);
    for (uint32_t k = 0; k < n.nmaster; k++) {
        stream_node_master(&n, &f, &fl);
        lpb_append(b, f, fl);
    }
    lpb_append_int(b, 0);
    while (stream_node_next(&n, &e, &flags)) {
        int same = (flags & STREAM_ENTRY_SAMEFIELDS) != 0;
        uint64_t nf = e.nfields;
        lpb_append_int(b, flags & (STREAM_ENTRY_SAMEFIELDS | STREAM_ENTRY_DELETED));
        lpb_append_int(b, (long long)(e.id.ms - n.base.ms));
        lpb_append_int(b, (long long)(e.id.seq - n.base.seq));
        if (!same)
            lpb_append_int(b, (long long)nf);
        for (uint64_t k = 0; k < nf; k++) {
            stream_entry_field(&e, &f, &fl, &v, &vl);
            if (!same)
                lpb_append(b, f, fl);
            lpb_append(b, v, vl);
        }
        lpb_append_int(b, (long long)(3 + nf + (same ? 0 : nf + 1)));
    }
    return lpb_finish(b, bytes);
}

static int save_pel(struct rdb_out *o, const struct pel *p, int nacks)
{
    rdb_w_len(o, p->n);
    for (size_t i = 0; i < p->n; i++) {
        const struct nack *nk = p->v[i];
        w_raw_id(o, &nk->id);
        if (nacks) {
            rdb_w_millis(o, nk->delivery_time);
            rdb_w_len(o, nk->delivery_count);
        }
    }
    return o->err ? -1 : 0;
}

int rdb_save_stream(struct rdb_out *o, struct entry *e, int version)
{
    const struct stream *s = entry_ptr(e);
    const struct cgroups *gs = s->cgroups;
    int t = version >= 11 ? RDB_TYPE_STREAM_LISTPACKS_3
            : version == 10 ? RDB_TYPE_STREAM_LISTPACKS_2
                            : RDB_TYPE_STREAM_LISTPACKS;

    if (rdb_w_type(o, (unsigned char)t) || rdb_w_len(o, stream_blocks(s)))
        return -1;
    struct lp_builder b = {0};
    for (size_t i = 0; i < stream_blocks(s) && !o->err; i++) {
        struct stream_node n;
        unsigned char key[16];
        size_t bytes;
        stream_node_open(s, i, &n);
        id_to_raw(key, &n.base);
        const unsigned char *lp = node_listpack(s, i, &b, &bytes);
        if (bytes > UINT32_MAX) {
            o->err = EFBIG; /* a listpack's size is 32 bits */
            break;
        }
        rdb_w_blob(o, key, sizeof(key));
        rdb_w_blob(o, lp, bytes);
    }
    lpb_free(&b);
    if (o->err)
        return -1;
    rdb_w_len(o, s->length);
    w_id(o, &s->last_id);
    if (t >= RDB_TYPE_STREAM_LISTPACKS_2) {
        w_id(o, &s->first_id);
        w_id(o, &s->max_deleted);
        rdb_w_len(o, s->entries_added);
    }
    rdb_w_len(o, gs ? gs->n : 0);
    for (size_t i = 0; gs && i < gs->n && !o->err; i++) {
        const struct cgroup *g = gs->v[i];
        rdb_w_str(o, g->name, g->nlen);
        w_id(o, &g->last_id);
        if (t >= RDB_TYPE_STREAM_LISTPACKS_2)
            rdb_w_len(o, (uint64_t)g->entries_read); /* -1: 2^64-1, as Redis writes it */
        save_pel(o, &g->pel, 1);
        rdb_w_len(o, g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            const struct consumer *cn = g->cons[k];
            rdb_w_str(o, cn->name, cn->nlen);
            rdb_w_millis(o, cn->seen_time);
            if (t >= RDB_TYPE_STREAM_LISTPACKS_3)
                rdb_w_millis(o, cn->active_time); /* -1 as Redis writes it: all ones */
            save_pel(o, &cn->pel, 0);
        }
    }
    return o->err ? -1 : 0;
}

/* ------------------------------------------------------------ loading --- */
static int r_len(struct rdb_in *in, uint64_t *v, const char *what)
{
    int enc = 0;
    if (rdb_r_len(in, v, &enc))
        return -1;
    if (enc) {
        rdb_in_fail(in, "Stream %s: an encoded string where a length belongs", what);
        return -1;
    }
    return 0;
}

/* A count of things taking at least minsz bytes each (rdb_r_count), never
 * an encoded string. */
static int r_count(struct rdb_in *in, uint64_t *v, unsigned minsz, const char *what)
{
    return r_len(in, v, what) || rdb_check_count(in, *v, minsz, what) ? -1 : 0;
}

static int r_id(struct rdb_in *in, struct stream_id *id, const char *what)
{
    return r_len(in, &id->ms, what) || r_len(in, &id->seq, what) ? -1 : 0;
}

static int r_raw_id(struct rdb_in *in, struct stream_id *id)
{
    unsigned char raw[16];
    if (rdb_r_raw(in, raw, sizeof(raw)))
        return -1;
    raw_to_id(raw, id);
    return 0;
}

/* Scratch arrays for one entry's fields and values: element pointers into
 * the listpack, or into num[] for elements stored as integers. */
struct fvbuf {
    const char **fv;
    size_t *len;
    char (*num)[24];
    size_t cap;
};

static void fv_reserve(struct fvbuf *b, size_t n)
{
    if (n <= b->cap)
        return;
    size_t cap = hk_grow_cap(b->cap, n, 16, sizeof(*b->num));
    b->fv = hk_realloc(b->fv, hk_array_bytes(cap, sizeof(*b->fv)));
    b->len = hk_realloc(b->len, hk_array_bytes(cap, sizeof(*b->len)));
    b->num = hk_realloc(b->num, hk_array_bytes(cap, sizeof(*b->num)));
    b->cap = cap;
}

static void fv_free(struct fvbuf *b)
{
    hk_free(b->fv);
    hk_free(b->len);
    hk_free(b->num);
}

/* Walk over a validated listpack. */
struct lpcur {
    const unsigned char *lp;
    size_t pos;
};

/* The next element as an integer (an integer element, or a string that is
 * a canonical integer): 0, or -1 at the end / for any other string. */
static int cur_int(struct lpcur *c, long long *v)
{
    struct lp_val x;
    if (c->pos == LP_NONE)
        return -1;
    lp_get(c->lp, c->pos, &x);
    c->pos = lp_next(c->lp, c->pos);
    if (!x.s) {
        *v = x.ll;
        return 0;
    }
    return str_to_ll((const char *)x.s, x.len, v) ? 0 : -1;
}

/* The next element as bytes (integers formatted into num): 0 / -1 at the end. */
static int cur_str(struct lpcur *c, const char **s, size_t *len, char *num)
{
    struct lp_val x;
    if (c->pos == LP_NONE)
        return -1;
    lp_get(c->lp, c->pos, &x);
    c->pos = lp_next(c->lp, c->pos);
    if (x.s) {
        *s = (const char *)x.s;
        *len = x.len;
    } else {
        *len = (size_t)ll_to_str(num, x.ll);
        *s = num;
    }
    return 0;
}

/* One node: master ID *master, listpack lp (validated).  Appends a block to
 * s; *prev is the highest ID seen so far (*have_prev once there is one);
 * *live counts the live entries.  0, or -1 with in failed. */
static int load_node(struct rdb_in *in, struct stream *s, const unsigned char *lp, const struct stream_id *master,
                     struct stream_id *prev, int *have_prev, uint64_t *live, struct fvbuf *mb, struct fvbuf *eb)
{
    struct lpcur c = {lp, lp_first(lp)};
    long long mcount, mdeleted, nmaster, zero;
    size_t nelem = lp_count(lp);
    const char *why = NULL;

    if (c.pos == LP_NONE) {
        rdb_in_fail(in, "Empty listpack inside stream");
        return -1;
    }
    if (cur_int(&c, &mcount) || cur_int(&c, &mdeleted) || cur_int(&c, &nmaster) || mcount < 0 || mdeleted < 0 ||
        nmaster < 0 || (unsigned long long)nmaster > nelem) {
        rdb_in_fail(in, "Stream listpack: bad master entry");
        return -1;
    }
    fv_reserve(mb, 2 * (size_t)nmaster + 2);
    for (long long k = 0; k < nmaster; k++) {
        if (cur_str(&c, &mb->fv[2 * k], &mb->len[2 * k], mb->num[2 * k])) {
            rdb_in_fail(in, "Stream listpack: master fields cut short");
            return -1;
        }
    }
    if (cur_int(&c, &zero) || zero != 0) {
        rdb_in_fail(in, "Stream listpack: master entry not terminated by 0");
        return -1;
    }
    /* The block keeps its own copy of the names; mb->fv[2k] stay valid
     * (they point into lp or mb->num) for the same-fields entries. */
    {
        const char **names = hk_malloc(sizeof(*names) * ((size_t)nmaster + 1));
        size_t *nlens = hk_malloc(sizeof(*nlens) * ((size_t)nmaster + 1));
        for (long long k = 0; k < nmaster; k++) {
            names[k] = mb->fv[2 * k];
            nlens[k] = mb->len[2 * k];
        }
        /* Our entries take about what the listpack's do (less, but for
         * integers, which the listpack packs tighter). */
        stream_load_node(s, master, names, nlens, (size_t)nmaster, lp_bytes(lp));
        hk_free(names);
        hk_free(nlens);
    }

    uint64_t entries = 0, nlive = 0;
    while (c.pos != LP_NONE) {
        long long flags, msd, seqd, nf, lpcount;
        struct stream_id id;
        if (cur_int(&c, &flags) || (flags & ~(long long)(STREAM_ENTRY_DELETED | STREAM_ENTRY_SAMEFIELDS))) {
            why = "bad entry flags";
            break;
        }
        if (cur_int(&c, &msd) || cur_int(&c, &seqd)) {
            why = "bad entry ID";
            break;
        }
        id.ms = master->ms + (uint64_t)msd;
        id.seq = master->seq + (uint64_t)seqd;
        if (sid_cmp(&id, master) < 0 || (*have_prev && sid_cmp(&id, prev) <= 0)) {
            why = "entry IDs out of order";
            break;
        }
        int same = (flags & STREAM_ENTRY_SAMEFIELDS) != 0;
        struct fvbuf *b = same ? mb : eb;
        if (same) {
            nf = nmaster;
        } else if (cur_int(&c, &nf) || nf < 0 || (unsigned long long)nf > nelem) {
            why = "bad field count";
            break;
        } else {
            fv_reserve(eb, 2 * (size_t)nf + 2);
        }
        long long k;
        for (k = 0; k < 2 * nf; k++) {
            if (same && k % 2 == 0)
                continue; /* the master's name, already in mb */
            if (cur_str(&c, &b->fv[k], &b->len[k], b->num[k]))
                break;
        }
        if (k < 2 * nf) {
            why = "entry cut short";
            break;
        }
        if (cur_int(&c, &lpcount) || lpcount != 3 + nf + (same ? 0 : nf + 1)) {
            why = "bad lp-count";
            break;
        }
        int deleted = (flags & STREAM_ENTRY_DELETED) != 0;
        if (stream_load_entry(s, &id, b->fv, b->len, (size_t)nf, deleted)) {
            why = "node too large";
            break;
        }
        *prev = id;
        *have_prev = 1;
        entries++;
        nlive += !deleted;
    }
    if (!why && (entries != (uint64_t)mcount + (uint64_t)mdeleted || nlive != (uint64_t)mcount))
        why = "master entry counts disagree with the entries";
    if (why) {
        rdb_in_fail(in, "Stream listpack: %s", why);
        return -1;
    }
    stream_load_node_end(s);
    *live += nlive;
    return 0;
}

static void first_live(const struct stream *s, struct stream_id *out)
{
    struct stream_iter it;
    struct stream_entry e;
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    out->ms = out->seq = 0;
    stream_iter_start(&it, s, &lo, &hi, 0);
    if (stream_iter_next(&it, &e))
        *out = e.id;
    stream_iter_stop(&it);
}

/* The consumer groups (after the stream's metadata). */
static int load_groups(struct rdb_in *in, struct stream *s, int t)
{
    uint64_t ngroups;
    if (r_count(in, &ngroups, 5, "group count"))
        return -1;
    while (ngroups--) {
        size_t nlen;
        struct stream_id gid;
        long long entries_read;
        unsigned char *name = rdb_r_str(in, &nlen);
        if (!name)
            return -1;
        if (r_id(in, &gid, "group last ID")) {
            hk_free(name);
            return -1;
        }
        if (t >= RDB_TYPE_STREAM_LISTPACKS_2) {
            uint64_t er;
            if (r_len(in, &er, "group entries-read")) {
                hk_free(name);
                return -1;
            }
            entries_read = (long long)er;
            if (entries_read < ENTRIES_READ_INVALID) {
                hk_free(name);
                rdb_in_fail(in, "Stream group entries-read out of range");
                return -1;
            }
        } else {
            entries_read = estimate_distance(s, &gid);
        }
        struct cgroup *g = cg_create(s, (const char *)name, nlen, &gid, entries_read);
        if (!g) {
            rdb_in_fail(in, "Duplicated consumer group name '%.*s'", (int)(nlen > 64 ? 64 : nlen), name);
            hk_free(name);
            return -1;
        }
        hk_free(name);

        /* The group's PEL: delivery data, owners come with the consumers. */
        uint64_t npel;
        if (r_count(in, &npel, 25, "PEL size"))
            return -1;
        while (npel--) {
            struct stream_id id;
            long long dtime;
            uint64_t dcount;
            int found;
            if (r_raw_id(in, &id) || rdb_r_millis(in, &dtime) || r_len(in, &dcount, "delivery count"))
                return -1;
            size_t pos = pel_search(&g->pel, &id, &found);
            if (found) {
                rdb_in_fail(in, "Duplicated global PEL entry in a stream consumer group");
                return -1;
            }
            if (pos != g->pel.n) {
                /* Writers (Redis's radix tree walk, our sorted array) emit
                 * the PEL ascending; accepting any order would make each
                 * insert a memmove, quadratic in a hostile payload. */
                rdb_in_fail(in, "Stream consumer group PEL entries out of order");
                return -1;
            }
            struct nack *nk = hk_malloc(sizeof(*nk));
            nk->id = id;
            nk->delivery_time = dtime;
            nk->delivery_count = dcount;
            nk->consumer = NULL;
            pel_insert_at(&g->pel, pos, nk);
        }

        uint64_t ncons;
        if (r_count(in, &ncons, 10, "consumer count"))
            return -1;
        while (ncons--) {
            long long seen, active;
            unsigned char *cname = rdb_r_str(in, &nlen);
            if (!cname)
                return -1;
            if (rdb_r_millis(in, &seen) || (t >= RDB_TYPE_STREAM_LISTPACKS_3 && rdb_r_millis(in, &active))) {
                hk_free(cname);
                return -1;
            }
            struct consumer *cn = consumer_create(g, (const char *)cname, nlen, seen);
            if (!cn) {
                rdb_in_fail(in, "Duplicate stream consumer detected: '%.*s'", (int)(nlen > 64 ? 64 : nlen), cname);
                hk_free(cname);
                return -1;
            }
            /* Before Redis 7.2 (type 19 and older) there was one time: the
             * active time is taken to be the seen time, as Redis does. */
            cn->active_time = t >= RDB_TYPE_STREAM_LISTPACKS_3 ? active : seen;
            hk_free(cname);
            uint64_t n;
            if (r_count(in, &n, 16, "consumer PEL size"))
                return -1;
            while (n--) {
                struct stream_id id;
                int found;
                if (r_raw_id(in, &id))
                    return -1;
                size_t gi = pel_search(&g->pel, &id, &found);
                if (!found) {
                    rdb_in_fail(in, "Consumer PEL entry not found in the group's PEL");
                    return -1;
                }
                struct nack *nk = g->pel.v[gi];
                if (nk->consumer) {
                    rdb_in_fail(in, "Stream PEL entry owned twice");
                    return -1;
                }
                size_t ci = pel_search(&cn->pel, &id, &found);
                if (ci != cn->pel.n) {
                    rdb_in_fail(in, "Stream consumer PEL entries out of order");
                    return -1;
                }
                nk->consumer = cn;
                pel_insert_at(&cn->pel, ci, nk);
            }
        }
        for (size_t i = 0; i < g->pel.n; i++) {
            if (!g->pel.v[i]->consumer) {
                rdb_in_fail(in, "Stream group PEL entry without a consumer");
                return -1;
            }
        }
    }
    return 0;
}

void *rdb_load_stream(struct rdb_in *in, int t, uint8_t *enc)
{
    struct stream *s;
    struct fvbuf mb = {0}, eb = {0};
    struct stream_id prev = {0, 0};
    int have_prev = 0;
    uint64_t nodes, live = 0;

    if (t != RDB_TYPE_STREAM_LISTPACKS && t != RDB_TYPE_STREAM_LISTPACKS_2 && t != RDB_TYPE_STREAM_LISTPACKS_3) {
        rdb_in_fail(in, "Not a stream type: %d", t);
        return NULL;
    }
    s = stream_new();
    /* a node: its 16-byte ID as a string (17 bytes), a listpack string
     * (4 bytes at least when LZF-compressed) */
    if (r_count(in, &nodes, 21, "node count"))
        goto fail;
    while (nodes--) {
        size_t klen, lplen;
        struct stream_id master;
        unsigned char *key = rdb_r_str(in, &klen);
        if (!key)
            goto fail;
        if (klen != 16) {
            hk_free(key);
            rdb_in_fail(in, "Stream node key is not a stream ID (%zu bytes)", klen);
            goto fail;
        }
        raw_to_id(key, &master);
        hk_free(key);
        unsigned char *lp = rdb_r_str(in, &lplen);
        if (!lp)
            goto fail;
        rdb_sanitized(in);
        if (!lp_validate(lp, lplen)) {
            hk_free(lp);
            rdb_in_fail(in, "Stream listpack integrity check failed");
            goto fail;
        }
        if (have_prev && sid_cmp(&master, &prev) <= 0) {
            hk_free(lp);
            rdb_in_fail(in, "Stream node IDs out of order");
            goto fail;
        }
        int r = load_node(in, s, lp, &master, &prev, &have_prev, &live, &mb, &eb);
        hk_free(lp);
        if (r)
            goto fail;
    }
    fv_free(&mb);
    fv_free(&eb);
    mb = eb = (struct fvbuf){0};

    uint64_t length;
    if (r_len(in, &length, "length") || r_id(in, &s->last_id, "last ID"))
        goto fail;
    if (length != live) {
        rdb_in_fail(in, "Stream length %llu inconsistent with its nodes (%llu entries)", (unsigned long long)length,
                    (unsigned long long)live);
        goto fail;
    }
    s->length = length;
    if (have_prev && sid_cmp(&prev, &s->last_id) > 0) {
        rdb_in_fail(in, "Stream entry ID above the stream's last ID");
        goto fail;
    }
    if (t >= RDB_TYPE_STREAM_LISTPACKS_2) {
        if (r_id(in, &s->first_id, "first ID") || r_id(in, &s->max_deleted, "max deleted ID") ||
            r_len(in, &s->entries_added, "entries added"))
            goto fail;
    } else {
        /* Redis 6.2 kept none of these: what Redis 7 assumes on upgrade. */
        s->entries_added = s->length;
        s->max_deleted.ms = s->max_deleted.seq = 0;
        first_live(s, &s->first_id);
    }
    if (load_groups(in, s, t))
        goto fail;
    *enc = ENC_STREAM;
    return s;

fail:
    fv_free(&mb);
    fv_free(&eb);
    stream_type_ops.free(s, ENC_STREAM);
    return NULL;
}
