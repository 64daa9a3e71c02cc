/* fuzz_restore_harness.h - RESTORE payloads (cmd/t_dump.c) through the
 * decoder RESTORE uses: rdb_r_type + rdb_load_value (persist/rdb_types.c,
 * rdb_stream.c, rdb_vset.c) on the whole payload, footer included.
 *
 * Input: a DUMP payload WITHOUT its 10-byte footer (tests/fuzz/make_seeds.py
 * writes real ones in that form).  The harness appends a valid footer (RDB
 * version 11, CRC-64 of everything before), so mutations reach the decoders
 * instead of stopping at the checksum.
 *
 * A value that decodes must be coherent: it is walked (every element of
 * every type; stream entries, groups and PELs; the vector set's graph with
 * hnsw_check and a search), re-encoded as DUMP does, decoded again, and
 * re-encoded once more: the two encodings must be identical (hashtables:
 * the same length; hash fields whose TTL has passed are dropped by RESTORE
 * and left out of the comparison).  Then it is freed.  A refused payload
 * must leave an error message. */
#ifndef HK_FUZZ_RESTORE_HARNESS_H
#define HK_FUZZ_RESTORE_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "types/hash.h"
#include "types/list.h"
#include "types/stream.h"
#include "types/set.h"
#include "types/vset.h"
#include "types/zset.h"
#include "db/object.h"
#include "ds/hnsw.h"
#include "ds/stream.h"
#include "fuzz_common.h"
#include "persist/rdb.h"
#include "base/crc64.h"

#define FUZZ_RESTORE_VERSION 11
/* "Now" for hash field TTLs: fixed, so a run does not depend on the clock
 * (a real payload's TTLs are in 2026+, after it: nothing expires). */
#define FUZZ_RESTORE_NOW 1700000000000LL

/* A digest of a value's elements: in order for ordered types, order-blind
 * for sets and hashes (a hashtable's iteration order is not canonical). */
struct fuzz_walk {
    unsigned long long n;
    uint64_t h, cur;
    int unordered;
    unsigned long long expired; /* hash fields RESTORE drops (TTL <= "now") */
};

static void fuzz_walk_bytes(struct fuzz_walk *w, const char *s, size_t len)
{
    /* Touch every byte (AddressSanitizer sees a lying length). */
    for (size_t i = 0; i < len; i++)
        w->cur = (w->cur ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    w->cur = (w->cur ^ len) * 0x100000001b3ULL;
}

static void fuzz_walk_end(struct fuzz_walk *w)
{
    uint64_t x = w->cur ^ (w->cur >> 29);
    x *= 0xbf58476d1ce4e5b9ULL;
    w->h = w->unordered ? w->h + (x ^ (x >> 32)) : w->h * 31 + x;
    w->cur = 0xcbf29ce484222325ULL;
    w->n++;
}

static int fuzz_walk_elem(void *arg, const char *s, size_t len)
{
    struct fuzz_walk *w = arg;
    fuzz_walk_bytes(w, s, len);
    fuzz_walk_end(w);
    return 0;
}

static int fuzz_walk_zelem(void *arg, const char *s, size_t len, double score)
{
    struct fuzz_walk *w = arg;
    FZ_CHECK(score == score); /* a NaN score is refused by the loader */
    fuzz_walk_bytes(w, s, len);
    fuzz_walk_bytes(w, (const char *)&score, sizeof(score));
    fuzz_walk_end(w);
    return 0;
}

static int fuzz_walk_hfield(void *arg, const char *f, size_t flen, const char *v, size_t vlen, long long ttl)
{
    struct fuzz_walk *w = arg;
    if (ttl > 0 && ttl <= FUZZ_RESTORE_NOW) {
        /* Expired but not reclaimed yet (a TTL set in the past while an
         * AOF loaded): DUMP writes it, RESTORE drops it, as Redis does. */
        uint64_t keep = w->cur;
        fuzz_walk_bytes(w, f, flen);
        fuzz_walk_bytes(w, v, vlen);
        w->cur = keep;
        w->expired++;
        return 0;
    }
    fuzz_walk_bytes(w, f, flen);
    fuzz_walk_bytes(w, v, vlen);
    fuzz_walk_bytes(w, (const char *)&ttl, sizeof(ttl));
    fuzz_walk_end(w);
    return 0;
}

static void fuzz_walk_velem(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    struct fuzz_walk *w = ctx;
    (void)id;
    fuzz_walk_bytes(w, name, nlen);
    if (attr)
        fuzz_walk_bytes(w, attr, alen);
    fuzz_walk_end(w);
}

static void fuzz_check_pel_sorted(const struct pel *p)
{
    for (size_t i = 0; i < p->n; i++) {
        FZ_CHECK(p->v[i] != NULL);
        if (i)
            FZ_CHECK(sid_cmp(&p->v[i - 1]->id, &p->v[i]->id) < 0);
    }
}

static void fuzz_walk_stream(struct entry *e, struct fuzz_walk *w)
{
    struct stream *s = entry_ptr(e);
    struct stream_iter it;
    struct stream_entry se;
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX}, prev = {0, 0};
    uint64_t n = 0;
    stream_iter_start(&it, s, &lo, &hi, 0);
    while (stream_iter_next(&it, &se)) {
        if (n)
            FZ_CHECK(sid_cmp(&prev, &se.id) < 0);
        prev = se.id;
        for (uint64_t i = 0; i < se.nfields; i++) {
            const char *f, *v;
            size_t fl, vl;
            stream_entry_field(&se, &f, &fl, &v, &vl);
            fuzz_walk_bytes(w, f, fl);
            fuzz_walk_bytes(w, v, vl);
        }
        fuzz_walk_bytes(w, (const char *)&se.id, sizeof(se.id));
        fuzz_walk_end(w);
        n++;
    }
    stream_iter_stop(&it);
    FZ_CHECK(n == s->length);
    if (n)
        FZ_CHECK(sid_cmp(&prev, &s->last_id) <= 0);
    /* Backwards too. */
    stream_iter_start(&it, s, &lo, &hi, 1);
    uint64_t r = 0;
    while (stream_iter_next(&it, &se))
        r++;
    stream_iter_stop(&it);
    FZ_CHECK(r == n);
    struct cgroups *gs = s->cgroups;
    if (!gs)
        return;
    for (size_t g = 0; g < gs->n; g++) {
        struct cgroup *cg = gs->v[g];
        size_t owned = 0;
        fuzz_check_pel_sorted(&cg->pel);
        for (size_t c = 0; c < cg->ncons; c++) {
            struct consumer *co = cg->cons[c];
            fuzz_check_pel_sorted(&co->pel);
            for (size_t i = 0; i < co->pel.n; i++) {
                int found = 0;
                size_t at = pel_search(&cg->pel, &co->pel.v[i]->id, &found);
                /* every consumer nack is the group's nack for that ID */
                FZ_CHECK(found && cg->pel.v[at] == co->pel.v[i]);
                FZ_CHECK(co->pel.v[i]->consumer == co);
            }
            owned += co->pel.n;
        }
        FZ_CHECK(owned == cg->pel.n);
        for (size_t i = 0; i < cg->pel.n; i++)
            FZ_CHECK(cg->pel.v[i]->consumer != NULL);
    }
}

static void fuzz_walk_vset(struct entry *e, struct fuzz_walk *w)
{
    struct vset *vs = entry_ptr(e);
    struct hnsw *h = vset_index(vs);
    char err[256];
    FZ_CHECK(hnsw_check(h, err, sizeof(err)) == 0);
    vset_foreach(vs, fuzz_walk_velem, w);
    FZ_CHECK(w->n == vset_card(vs));
    FZ_CHECK(hnsw_count(h) == vset_card(vs));
    uint32_t dim = hnsw_dim(h);
    if (hnsw_count(h) == 0 || dim == 0 || dim > 4096)
        return;
    float *q = hk_malloc(sizeof(float) * dim);
    for (uint32_t i = 0; i < dim; i++)
        q[i] = (float)((i * 7 + 3) % 11) - 5.0f;
    struct hnsw_result res[8];
    uint32_t got = hnsw_search(h, q, 8, 16, NULL, NULL, 0, res);
    FZ_CHECK(got <= 8 && got <= hnsw_count(h));
    for (uint32_t i = 0; i < got; i++) {
        FZ_CHECK(res[i].id < hnsw_max_id(h) && hnsw_exists(h, res[i].id));
        hnsw_get_vector(h, res[i].id, q);
    }
    hk_free(q);
}

/* Walk every element; returns the digest (*count: elements seen, not
 * counting the hash fields RESTORE would drop as expired: *expired). */
static uint64_t fuzz_walk_value(struct entry *e, unsigned long long *count, unsigned long long *expired)
{
    struct fuzz_walk w = {0, 0, 0xcbf29ce484222325ULL, e->type == OBJ_SET || e->type == OBJ_HASH || e->type == OBJ_VSET,
                          0};
    switch (e->type) {
    case OBJ_STRING: fuzz_walk_bytes(&w, entry_val(e), entry_vlen(e)); fuzz_walk_end(&w); break;
    case OBJ_LIST: list_visit(e, fuzz_walk_elem, &w); FZ_CHECK(w.n == obj_len(e)); break;
    case OBJ_SET: set_visit(e, fuzz_walk_elem, &w); FZ_CHECK(w.n == obj_len(e)); break;
    case OBJ_ZSET: zset_visit(e, 0, fuzz_walk_zelem, &w); FZ_CHECK(w.n == obj_len(e)); break;
    case OBJ_HASH: hash_visit_fields(e, fuzz_walk_hfield, &w); break;
    case OBJ_STREAM: fuzz_walk_stream(e, &w); break;
    case OBJ_VSET: fuzz_walk_vset(e, &w); break;
    default: FZ_CHECK(!"a loaded value of an unknown type");
    }
    *count = w.n;
    *expired = w.expired;
    return w.h;
}

/* DUMP's body of e (type byte + payload); *len. */
static unsigned char *fuzz_dump_body(struct entry *e, int compress, size_t *len)
{
    struct rdb_out o;
    rdb_out_init_mem(&o);
    o.compress = compress;
    FZ_CHECK(rdb_save_value(&o, e, FUZZ_RESTORE_VERSION) == 0);
    *len = o.len;
    unsigned char *b = hk_malloc(o.len ? o.len : 1);
    memcpy(b, o.buf, o.len);
    rdb_out_free(&o);
    return b;
}

/* p[0..n) followed by a valid footer, as RESTORE's payload_ok wants it. */
static unsigned char *fuzz_with_footer(const uint8_t *p, size_t n, size_t *len)
{
    unsigned char *b = hk_malloc(n + 10);
    memcpy(b, p, n);
    b[n] = FUZZ_RESTORE_VERSION & 0xff;
    b[n + 1] = (FUZZ_RESTORE_VERSION >> 8) & 0xff;
    uint64_t crc = crc64(0, b, n + 2);
    for (int i = 0; i < 8; i++)
        b[n + 2 + i] = (unsigned char)(crc >> (8 * i));
    *len = n + 10;
    return b;
}

/* RESTORE's decoding steps (restore_command): NULL when refused. */
static struct entry *fuzz_restore_decode(const unsigned char *p, size_t len, int *empty)
{
    struct rdb_in in;
    int t;
    struct entry *e = NULL;
    rdb_in_init_mem(&in, p, len);
    in.version = FUZZ_RESTORE_VERSION;
    in.now_ms = FUZZ_RESTORE_NOW;
    in.deep = 1;
    if (rdb_r_type(&in, &t) == 0 && rdb_is_object_type(t))
        e = rdb_load_value(&in, t, "fuzzkey", 7, -1);
    *empty = !e && in.empty_key == 2 && !in.failed;
    if (!e && !*empty && in.failed)
        FZ_CHECK(in.err[0] != 0);
    if (e) {
        FZ_CHECK(entry_klen(e) == 7 && memcmp(entry_key(e), "fuzzkey", 7) == 0);
        FZ_CHECK(rdb_in_offset(&in) <= len);
    }
    rdb_in_free(&in);
    return e;
}

/* A decoded value must survive DUMP and RESTORE: the same elements, and
 * DUMP again makes the same bytes (hashtables: the same length; their
 * order is not canonical) when the encoding is the same again, except for hash fields whose TTL has passed,
 * which RESTORE drops (and then the bytes differ). */
static void fuzz_restore_check(struct entry *e, int compress)
{
    size_t plen, b1len, b2len;
    int empty;
    unsigned long long n1, n2, x1, x2;
    uint64_t h1 = fuzz_walk_value(e, &n1, &x1);
    int ordered = e->enc != ENC_HT && e->type != OBJ_VSET;
    unsigned char *b1 = fuzz_dump_body(e, compress, &b1len);
    unsigned char *p2 = fuzz_with_footer(b1, b1len, &plen);
    struct entry *e2 = fuzz_restore_decode(p2, plen, &empty);
    hk_free(p2);
    if (!e2) {
        /* Only a hash whose every field had expired comes back empty. */
        FZ_CHECK(empty && n1 == 0 && x1 > 0);
        hk_free(b1);
        return;
    }
    uint64_t h2 = fuzz_walk_value(e2, &n2, &x2);
    FZ_CHECK(n1 == n2 && h1 == h2 && x2 == 0);
    unsigned char *b2 = fuzz_dump_body(e2, compress, &b2len);
    int same_enc = e2->enc == e->enc;
    entry_free(e2);
    /* A hashtable whose big fields had expired when it was read comes back
     * from its own DUMP in the compact encoding: the elements match (above),
     * the bytes cannot. */
    if (x1 == 0 && same_enc) {
        FZ_CHECK(b1len == b2len);
        if (ordered)
            FZ_CHECK(memcmp(b1, b2, b1len) == 0);
    }
    hk_free(b1);
    hk_free(b2);
}

static inline void fuzz_restore_one(const uint8_t *data, size_t size)
{
    size_t plen;
    int empty;
    fuzz_server_init();
    unsigned char *payload = fuzz_with_footer(data, size, &plen);
    struct entry *e = fuzz_restore_decode(payload, plen, &empty);
    hk_free(payload);
    if (!e)
        return;
    fuzz_restore_check(e, (int)(size & 1));
    entry_free(e);
}

#endif
