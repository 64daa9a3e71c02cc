/* test_rdb_stream.c - persist/rdb_stream.c: streams in Redis's RDB format.
 *
 * Round trips through every stream type we write (15 for version 9, 19 for
 * 10, 21 for 11/12): empty streams, tombstones, same-fields and own-fields
 * entries, integer-looking and binary values of every listpack string size,
 * many nodes, IDs whose deltas wrap, consumer groups with PELs and
 * consumers; the loaded structure must equal the saved one block by block,
 * and saving it again must give the same bytes.  Payloads DUMPed by Redis
 * 7.0.15 (rdbcompression no) load with the values XINFO STREAM FULL showed
 * there and re-save byte for byte.  Corrupt payloads (every truncation,
 * byte flips, hand-made inconsistencies) fail with an offset, never crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "types/stream.h"
#include "types/types.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/listpack.h"
#include "ds/stream.h"
#include "persist/rdb.h"
#include "test.h"

/* DUMP payloads from redis-server 7.0.15 (type byte .. CRC), made by: a
 * stream A of 10 entries (own-fields entries every third one, integers,
 * 2 XDELs, stream-node-max-entries 4 so 3 nodes) with groups g1 (consumers
 * alice, bob, carol; one XACK) and g2 (consumer "123"); an empty stream B
 * made by XGROUP CREATE MKSTREAM then XSETID 77-7 ENTRIESADDED 5
 * MAXDELETEDID 70-0; a stream C with IDs 5-10, 6-0 and the maximal ID, and
 * 100- and 70-byte values. */
static const char golden_A[] =
    "13031000000000000003e900000000000000014088880000002500030101010301856576656e7406856a6f6249640683"
    "62696704000102010001000182653103dfff02f4010000000001000009060103010101010182653203dffe02f4020000"
    "00000100000906010001020102010201856f746865720682783303816e02cbb802080102010301030182653403dffc02"
    "f40400000000010000090601ff1000000000000003ed0000000000000005408989000000250003010101030185657665"
    "6e7406856a6f624964068362696704000102010001000182653503dffb02f40500000000010000090601000101010101"
    "0201856f746865720682783603816e02f1701703080103010201020182653703dff902f4070000000001000009060102"
    "010301030182653803dff802f40800000000010000090601ff1000000000000003f10000000000000009405858000000"
    "1700020100010201856f7468657206816e02000102010001000182783903f12823030501000101010101030185657665"
    "6e74068365313004856a6f62496406dff6028362696704f40a00000000010000090a01ff0843f20a43e90143ef070a02"
    "02673143ee0681ffffffffffffffff0400000000000003e900000000000000012d69442ca20100000100000000000003"
    "ec00000000000000042d69442ca20100000100000000000003ed00000000000000052d69442ca2010000010000000000"
    "0003ee00000000000000062d69442ca2010000010305616c6963652d69442ca20100000200000000000003e900000000"
    "0000000100000000000003ec000000000000000403626f622d69442ca20100000200000000000003ed00000000000000"
    "0500000000000003ee0000000000000006056361726f6c2d69442ca20100000002673243f20a0a0400000000000003ee"
    "00000000000000062d69442ca20100000100000000000003f000000000000000082d69442ca201000001000000000000"
    "03f100000000000000092d69442ca20100000100000000000003f2000000000000000a2d69442ca20100000101c07b2d"
    "69442ca20100000400000000000003ee000000000000000600000000000003f0000000000000000800000000000003f1"
    "000000000000000900000000000003f2000000000000000a0a007a138675299e9baf";
static const char golden_B[] =
    "130000404d070000404600050103677270000081ffffffffffffffff00000a001db76e0af2da04f9";
static const char golden_C[] =
    "1301100000000000000005000000000000000a40eaea0000001800030100010101816602000102010001000181760204"
    "0102010101dff602e0646161616161616161616161616161616161616161616161616161616161616161616161616161"
    "616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161"
    "61616161616161616161616161616604010001dffa02dff5020201816702e04662626262626262626262626262626262"
    "626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262626262"
    "6262626262624881660280010801ff0381ffffffffffffffff81ffffffffffffffff050a000003000a006a1c675f86bb"
    "73c1";

#define T_TIME 1796039010605LL /* delivery / seen times in the payloads */

/* ------------------------------------------------------------ helpers --- */
static unsigned char *unhex(const char *h, size_t *n)
{
    size_t l = strlen(h) / 2;
    unsigned char *p = malloc(l + 1);
    for (size_t i = 0; i < l; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        p[i] = (unsigned char)v;
    }
    *n = l;
    return p;
}

static struct stream_id sid(uint64_t ms, uint64_t seq)
{
    struct stream_id id = {ms, seq};
    return id;
}

/* Append an entry with nf field/value pairs given as C strings. */
static void add(struct stream *s, uint64_t ms, uint64_t seq, size_t nf, const char *const *fv)
{
    size_t len[32];
    struct stream_id id = sid(ms, seq);
    for (size_t i = 0; i < 2 * nf; i++)
        len[i] = strlen(fv[i]);
    stream_append(s, &id, fv, len, nf);
}

static unsigned char *save_stream(struct stream *s, int version, int compress, size_t *n)
{
    struct entry *e = entry_new_obj(OBJ_STREAM, ENC_STREAM, "k", 1, s, -1);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    o.compress = compress;
    CHECK_EQ(rdb_save_stream(&o, e, version), 0);
    unsigned char *p = malloc(o.len + 1);
    memcpy(p, o.buf, o.len);
    *n = o.len;
    rdb_out_free(&o);
    /* The entry does not own s here: detach before freeing it. */
    entry_set_ptr(e, stream_new(), ENC_STREAM);
    entry_free(e);
    return p;
}

/* Load a payload (type byte first); NULL with err filled on failure.  A
 * success must consume every byte. */
static struct stream *load_stream(const unsigned char *p, size_t n, char *err, size_t errlen)
{
    struct rdb_in in;
    int t = -1;
    uint8_t enc = 0;
    struct stream *s = NULL;
    rdb_in_init_mem(&in, p, n);
    if (rdb_r_type(&in, &t) == 0)
        s = rdb_load_stream(&in, t, &enc);
    if (s) {
        CHECK_EQ(enc, ENC_STREAM);
        if (rdb_in_offset(&in) != n) {
            snprintf(err, errlen, "trailing bytes: %llu of %zu read", rdb_in_offset(&in), n);
            stream_type_ops.free(s, ENC_STREAM);
            s = NULL;
        }
    } else {
        CHECK(in.failed);
        snprintf(err, errlen, "%s", in.err);
    }
    rdb_in_free(&in);
    return s;
}

static void sfree(struct stream *s)
{
    stream_type_ops.free(s, ENC_STREAM);
}

static int id_eq(const struct stream_id *a, const struct stream_id *b)
{
    return sid_cmp(a, b) == 0;
}

/* Block by block, entry by entry (tombstones and flags included). */
static void check_same_entries(const struct stream *a, const struct stream *b)
{
    CHECK_EQ(a->length, b->length);
    CHECK_EQ(stream_blocks(a), stream_blocks(b));
    if (stream_blocks(a) != stream_blocks(b))
        return;
    for (size_t i = 0; i < stream_blocks(a); i++) {
        struct stream_node na, nb;
        stream_node_open(a, i, &na);
        stream_node_open(b, i, &nb);
        CHECK(id_eq(&na.base, &nb.base));
        CHECK_EQ(na.count, nb.count);
        CHECK_EQ(na.live, nb.live);
        CHECK_EQ(na.nmaster, nb.nmaster);
        if (na.nmaster != nb.nmaster)
            return;
        for (uint32_t k = 0; k < na.nmaster; k++) {
            const char *fa, *fb;
            size_t la, lb;
            stream_node_master(&na, &fa, &la);
            stream_node_master(&nb, &fb, &lb);
            CHECK_MEM(fa, la, fb, lb);
        }
        struct stream_entry ea, eb;
        unsigned fa_, fb_;
        for (;;) {
            int ra = stream_node_next(&na, &ea, &fa_), rb = stream_node_next(&nb, &eb, &fb_);
            CHECK_EQ(ra, rb);
            if (!ra || !rb)
                break;
            CHECK(id_eq(&ea.id, &eb.id));
            CHECK_EQ(fa_, fb_);
            CHECK_EQ(ea.nfields, eb.nfields);
            if (ea.nfields != eb.nfields)
                return;
            for (uint64_t k = 0; k < ea.nfields; k++) {
                const char *f1, *v1, *f2, *v2;
                size_t fl1, vl1, fl2, vl2;
                stream_entry_field(&ea, &f1, &fl1, &v1, &vl1);
                stream_entry_field(&eb, &f2, &fl2, &v2, &vl2);
                CHECK_MEM(f1, fl1, f2, fl2);
                CHECK_MEM(v1, vl1, v2, vl2);
            }
        }
    }
}

static void check_same_groups(const struct stream *a, const struct stream *b, int with_entries_read)
{
    const struct cgroups *ga = a->cgroups, *gb = b->cgroups;
    size_t n = ga ? ga->n : 0;
    CHECK_EQ(n, gb ? gb->n : 0);
    if (n != (gb ? gb->n : 0))
        return;
    for (size_t i = 0; i < n; i++) {
        const struct cgroup *x = ga->v[i], *y = gb->v[i];
        CHECK_MEM(x->name, x->nlen, y->name, y->nlen);
        CHECK(id_eq(&x->last_id, &y->last_id));
        if (with_entries_read)
            CHECK_EQ(x->entries_read, y->entries_read);
        CHECK_EQ(x->pel.n, y->pel.n);
        CHECK_EQ(x->ncons, y->ncons);
        if (x->pel.n != y->pel.n || x->ncons != y->ncons)
            return;
        for (size_t k = 0; k < x->pel.n; k++) {
            const struct nack *p = x->pel.v[k], *q = y->pel.v[k];
            CHECK(id_eq(&p->id, &q->id));
            CHECK_EQ(p->delivery_time, q->delivery_time);
            CHECK_EQ(p->delivery_count, q->delivery_count);
            CHECK(p->consumer && q->consumer);
            if (p->consumer && q->consumer)
                CHECK_MEM(p->consumer->name, p->consumer->nlen, q->consumer->name, q->consumer->nlen);
        }
        for (size_t k = 0; k < x->ncons; k++) {
            const struct consumer *p = x->cons[k], *q = y->cons[k];
            CHECK_MEM(p->name, p->nlen, q->name, q->nlen);
            CHECK_EQ(p->seen_time, q->seen_time);
            CHECK_EQ(p->pel.n, q->pel.n);
            for (size_t j = 0; j < p->pel.n && j < q->pel.n; j++) {
                CHECK(id_eq(&p->pel.v[j]->id, &q->pel.v[j]->id));
                CHECK(q->pel.v[j]->consumer == q); /* shared with the group's PEL */
            }
        }
    }
}

/* Save at version, load, compare; save the copy again: same bytes. */
static void round_trip(struct stream *s, int version)
{
    char err[300] = "";
    size_t n, n2;
    unsigned char *p = save_stream(s, version, version != 10, &n);
    int want = version >= 11 ? RDB_TYPE_STREAM_LISTPACKS_3
               : version == 10 ? RDB_TYPE_STREAM_LISTPACKS_2
                               : RDB_TYPE_STREAM_LISTPACKS;
    CHECK_EQ(p[0], want);
    struct stream *c = load_stream(p, n, err, sizeof(err));
    if (!c) {
        test_fail(__FILE__, __LINE__, "version %d: load failed: %s", version, err);
        free(p);
        return;
    }
    check_same_entries(s, c);
    CHECK(id_eq(&s->last_id, &c->last_id));
    if (version >= 10) {
        CHECK(id_eq(&s->first_id, &c->first_id));
        CHECK(id_eq(&s->max_deleted, &c->max_deleted));
        CHECK_EQ(s->entries_added, c->entries_added);
    } else {
        /* Type 15 keeps none of these: Redis 7's assumptions. */
        struct stream_id z = {0, 0};
        CHECK(id_eq(&c->max_deleted, &z));
        CHECK_EQ(c->entries_added, c->length);
        if (s->length)
            CHECK(id_eq(&s->first_id, &c->first_id));
    }
    check_same_groups(s, c, version >= 10);
    unsigned char *p2 = save_stream(c, version, version != 10, &n2);
    CHECK_MEM(p, n, p2, n2);
    free(p2);
    free(p);
    sfree(c);
}

static void round_trip_all(struct stream *s)
{
    static const int versions[] = {9, 10, 11, 12};
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        round_trip(s, versions[i]);
}

/* A consumer group with consumers, each given nacks for the IDs listed
 * (ms values; seq 0), delivery times from base_time. */
static struct cgroup *group(struct stream *s, const char *name, struct stream_id last, long long entries_read)
{
    return cg_create(s, name, strlen(name), &last, entries_read);
}

static void deliver(struct cgroup *g, const char *cname, struct stream_id id, long long when, unsigned long long count)
{
    size_t pos;
    int found;
    struct consumer *cn = NULL;
    for (size_t i = 0; i < g->ncons; i++)
        if (g->cons[i]->nlen == strlen(cname) && !memcmp(g->cons[i]->name, cname, g->cons[i]->nlen))
            cn = g->cons[i];
    if (!cn)
        cn = consumer_create(g, cname, strlen(cname), when);
    struct nack *nk = hk_malloc(sizeof(*nk));
    nk->id = id;
    nk->delivery_time = when;
    nk->delivery_count = count;
    nk->consumer = cn;
    pos = pel_search(&g->pel, &id, &found);
    pel_insert_at(&g->pel, pos, nk);
    pos = pel_search(&cn->pel, &id, &found);
    pel_insert_at(&cn->pel, pos, nk);
}

/* ------------------------------------------------------- round trips --- */
TEST(rdb_stream_empty)
{
    struct stream *s = stream_new();
    round_trip_all(s);
    s->last_id = sid(77, 7);
    s->entries_added = 5;
    s->max_deleted = sid(70, 0);
    round_trip_all(s);
    group(s, "grp", sid(0, 0), ENTRIES_READ_INVALID);
    group(s, "12345", sid(77, 7), 5); /* an integer-looking name */
    round_trip_all(s);
    sfree(s);
}

TEST(rdb_stream_fields_and_values)
{
    struct stream *s = stream_new();
    char big[6000], mid[300];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    memset(mid, 'y', sizeof(mid) - 1);
    mid[sizeof(mid) - 1] = 0;
    const char *e1[] = {"event", "click", "n", "12345"};
    const char *e2[] = {"event", "view", "n", "-9223372036854775808"};
    const char *e3[] = {"other", "007", "n", "18446744073709551616", "x", ""}; /* own fields, non-canonical ints */
    const char *e4[] = {"event", mid, "n", big};
    const char *e5[] = {"1", "2"};
    const char *e6[] = {"event", "9223372036854775807", "n", "-1"};
    add(s, 1000, 0, 2, e1);
    add(s, 1000, 1, 2, e2);
    add(s, 1001, 0, 3, e3);
    add(s, 1002, 5, 2, e4);
    add(s, 1003, 0, 1, e5);
    add(s, 1004, 0, 2, e6);
    /* A value with NUL bytes. */
    {
        const char *fv[] = {"event", "a\0b"};
        size_t len[] = {5, 3};
        struct stream_id id = sid(1005, 0);
        stream_append(s, &id, fv, len, 1);
    }
    round_trip_all(s);
    sfree(s);
}

TEST(rdb_stream_deleted_entries)
{
    long long saved = stream_node_max_entries;
    stream_node_max_entries = 10;
    struct stream *s = stream_new();
    const char *fv[] = {"f", "v", "g", "w"};
    for (uint64_t i = 1; i <= 40; i++)
        add(s, i, 0, 2, fv);
    /* Tombstones in several blocks (first entries included), a block
     * emptied entirely (freed), and a trimmed head. */
    for (uint64_t i = 11; i <= 20; i++) {
        struct stream_id id = sid(i, 0);
        stream_delete(s, &id);
    }
    for (uint64_t i = 21; i <= 40; i += 3) {
        struct stream_id id = sid(i, 0);
        stream_delete(s, &id);
    }
    s->max_deleted = sid(40, 0);
    stream_trim(s, 20, NULL, 0, 0);
    CHECK(stream_blocks(s) >= 2);
    round_trip_all(s);
    /* Everything deleted: no blocks, counters kept. */
    for (uint64_t i = 1; i <= 40; i++) {
        struct stream_id id = sid(i, 0);
        stream_delete(s, &id);
    }
    CHECK_EQ(s->length, 0);
    round_trip_all(s);
    sfree(s);
    stream_node_max_entries = saved;
}

TEST(rdb_stream_many_nodes_and_wrapping_ids)
{
    long long saved = stream_node_max_entries;
    stream_node_max_entries = 7;
    struct stream *s = stream_new();
    char v[32];
    const char *same[] = {"a", v, "b", "x"};
    const char *own[] = {"c", v};
    for (uint64_t i = 0; i < 1000; i++) {
        snprintf(v, sizeof(v), "%llu", (unsigned long long)(i * 7919));
        /* seq falls back to 0 when ms moves: seq deltas below the master's
         * wrap around (negative in the listpack). */
        add(s, 100 + i / 3, (i % 3) ? 1000 + i : 0, i % 5 == 4 ? 1 : 2, i % 5 == 4 ? own : same);
    }
    add(s, UINT64_MAX - 1, UINT64_MAX, 2, same);
    add(s, UINT64_MAX, UINT64_MAX, 1, own);
    CHECK(stream_blocks(s) > 100);
    round_trip_all(s);
    sfree(s);
    stream_node_max_entries = saved;
}

TEST(rdb_stream_groups)
{
    struct stream *s = stream_new();
    const char *fv[] = {"f", "v"};
    for (uint64_t i = 1; i <= 50; i++)
        add(s, i, 0, 1, fv);
    struct cgroup *g1 = group(s, "g1", sid(30, 0), 30);
    deliver(g1, "alice", sid(3, 0), 1700000000000LL, 1);
    deliver(g1, "bob", sid(5, 0), 1700000000001LL, 7);
    deliver(g1, "alice", sid(7, 0), 1700000000002LL, 2);
    deliver(g1, "42", sid(30, 0), 1700000000003LL, 1);
    consumer_create(g1, "idle", 4, 1600000000000LL); /* no pending entries */
    struct cgroup *g0 = group(s, "a-group", sid(50, 0), ENTRIES_READ_INVALID);
    deliver(g0, "c", sid(50, 0), -5, 0);
    group(s, "empty", sid(0, 0), 0);
    round_trip_all(s);
    sfree(s);
}

/* ------------------------------------------------ Redis's own payloads --- */
static struct stream *load_golden(const char *hex, unsigned char **raw, size_t *n)
{
    char err[300] = "";
    size_t len;
    unsigned char *p = unhex(hex, &len);
    CHECK_EQ(p[0], RDB_TYPE_STREAM_LISTPACKS_2);
    *n = len - 10; /* the DUMP trailer: RDB version (2) and CRC-64 (8) */
    *raw = p;
    struct stream *s = load_stream(p, *n, err, sizeof(err));
    if (!s)
        test_fail(__FILE__, __LINE__, "golden payload refused: %s", err);
    return s;
}

static const struct cgroup *gfind(const struct stream *s, const char *name)
{
    const struct cgroups *gs = s->cgroups;
    for (size_t i = 0; gs && i < gs->n; i++)
        if (gs->v[i]->nlen == strlen(name) && !memcmp(gs->v[i]->name, name, gs->v[i]->nlen))
            return gs->v[i];
    return NULL;
}

/* Loaded, they show what XINFO STREAM FULL showed in Redis; saved again at
 * version 10 without compression, they are the same bytes. */
static void resave_same(struct stream *s, const unsigned char *raw, size_t n)
{
    size_t m;
    unsigned char *p = save_stream(s, 10, 0, &m);
    CHECK_MEM(p, m, raw, n);
    free(p);
}

TEST(rdb_stream_redis_payload_a)
{
    unsigned char *raw;
    size_t n;
    struct stream *s = load_golden(golden_A, &raw, &n);
    if (!s) {
        free(raw);
        return;
    }
    struct stream_id id;
    CHECK_EQ(s->length, 8);
    CHECK_EQ(stream_blocks(s), 3);
    CHECK(id_eq(&s->last_id, &(struct stream_id){1010, 10}));
    CHECK(id_eq(&s->max_deleted, &(struct stream_id){1007, 7}));
    CHECK(id_eq(&s->first_id, &(struct stream_id){1001, 1}));
    CHECK_EQ(s->entries_added, 10);
    CHECK(stream_last_entry(s, &id) && id_eq(&id, &(struct stream_id){1010, 10}));
    /* Entries as XRANGE shows them. */
    {
        struct stream_iter it;
        struct stream_entry e;
        struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        static const unsigned long long ids[] = {1001, 1003, 1004, 1005, 1006, 1008, 1009, 1010};
        size_t k = 0;
        stream_iter_start(&it, s, &lo, &hi, 0);
        while (stream_iter_next(&it, &e)) {
            const char *f, *v;
            size_t fl, vl;
            char want[64];
            CHECK(k < 8);
            if (k >= 8)
                break;
            CHECK_EQ(e.id.ms, ids[k]);
            CHECK_EQ(e.id.seq, ids[k] - 1000);
            stream_entry_field(&e, &f, &fl, &v, &vl);
            if ((ids[k] - 1000) % 3 == 0) {
                CHECK_EQ(e.nfields, 2);
                CHECK_STR(f, fl, "other");
                snprintf(want, sizeof(want), "x%llu", ids[k] - 1000);
                CHECK_STR(v, vl, want);
                stream_entry_field(&e, &f, &fl, &v, &vl);
                CHECK_STR(f, fl, "n");
                snprintf(want, sizeof(want), "%llu", (ids[k] - 1000) * 1000);
                CHECK_STR(v, vl, want);
            } else {
                CHECK_EQ(e.nfields, 3);
                CHECK_STR(f, fl, "event");
                stream_entry_field(&e, &f, &fl, &v, &vl);
                CHECK_STR(f, fl, "jobId");
                snprintf(want, sizeof(want), "-%llu", ids[k] - 1000);
                CHECK_STR(v, vl, want);
                stream_entry_field(&e, &f, &fl, &v, &vl);
                CHECK_STR(f, fl, "big");
                snprintf(want, sizeof(want), "%llu", (1ull << 40) + ids[k] - 1000);
                CHECK_STR(v, vl, want);
            }
            k++;
        }
        stream_iter_stop(&it);
        CHECK_EQ(k, 8);
    }
    const struct cgroup *g1 = gfind(s, "g1"), *g2 = gfind(s, "g2");
    CHECK(g1 && g2);
    if (g1 && g2) {
        CHECK(id_eq(&g1->last_id, &(struct stream_id){1006, 6}));
        CHECK_EQ(g1->entries_read, ENTRIES_READ_INVALID);
        CHECK_EQ(g1->pel.n, 4);
        CHECK_EQ(g1->ncons, 3);
        static const char *const owners[] = {"alice", "alice", "bob", "bob"};
        static const unsigned long long pids[] = {1001, 1004, 1005, 1006};
        for (size_t k = 0; k < 4 && k < g1->pel.n; k++) {
            CHECK_EQ(g1->pel.v[k]->id.ms, pids[k]);
            CHECK_EQ(g1->pel.v[k]->delivery_time, T_TIME);
            CHECK_EQ(g1->pel.v[k]->delivery_count, 1);
            CHECK_STR(g1->pel.v[k]->consumer->name, g1->pel.v[k]->consumer->nlen, owners[k]);
        }
        if (g1->ncons == 3) {
            CHECK_STR(g1->cons[2]->name, g1->cons[2]->nlen, "carol");
            CHECK_EQ(g1->cons[2]->pel.n, 0);
            CHECK_EQ(g1->cons[0]->pel.n, 2);
            CHECK_EQ(g1->cons[0]->seen_time, T_TIME);
        }
        CHECK(id_eq(&g2->last_id, &(struct stream_id){1010, 10}));
        CHECK_EQ(g2->entries_read, 10);
        CHECK_EQ(g2->pel.n, 4);
        CHECK_EQ(g2->ncons, 1);
        if (g2->ncons == 1) {
            CHECK_STR(g2->cons[0]->name, g2->cons[0]->nlen, "123");
            CHECK_EQ(g2->cons[0]->pel.n, 4);
        }
    }
    resave_same(s, raw, n);
    sfree(s);
    free(raw);
}

TEST(rdb_stream_redis_payload_b_c)
{
    unsigned char *raw;
    size_t n;
    struct stream *s = load_golden(golden_B, &raw, &n);
    if (s) {
        CHECK_EQ(s->length, 0);
        CHECK_EQ(stream_blocks(s), 0);
        CHECK(id_eq(&s->last_id, &(struct stream_id){77, 7}));
        CHECK(id_eq(&s->max_deleted, &(struct stream_id){70, 0}));
        CHECK_EQ(s->entries_added, 5);
        const struct cgroup *g = gfind(s, "grp");
        CHECK(g != NULL);
        if (g) {
            CHECK(id_eq(&g->last_id, &(struct stream_id){0, 0}));
            CHECK_EQ(g->entries_read, ENTRIES_READ_INVALID);
            CHECK_EQ(g->ncons, 0);
        }
        resave_same(s, raw, n);
        sfree(s);
    }
    free(raw);
    s = load_golden(golden_C, &raw, &n);
    if (s) {
        struct stream_entry e;
        const char *f, *v;
        size_t fl, vl;
        CHECK_EQ(s->length, 3);
        CHECK_EQ(stream_blocks(s), 1);
        CHECK(id_eq(&s->first_id, &(struct stream_id){5, 10}));
        CHECK(stream_get(s, &(struct stream_id){6, 0}, &e));
        stream_entry_field(&e, &f, &fl, &v, &vl);
        CHECK_EQ(vl, 100);
        CHECK(stream_get(s, &(struct stream_id){UINT64_MAX, UINT64_MAX}, &e));
        CHECK_EQ(e.nfields, 2);
        stream_entry_field(&e, &f, &fl, &v, &vl);
        CHECK_STR(f, fl, "g");
        CHECK_EQ(vl, 70);
        stream_entry_field(&e, &f, &fl, &v, &vl);
        CHECK_STR(f, fl, "f");
        CHECK_EQ(vl, 0);
        resave_same(s, raw, n);
        sfree(s);
    }
    free(raw);
}

/* ------------------------------------------------------------ corrupt --- */
static void expect_refused(const unsigned char *p, size_t n, const char *what, const char *needle)
{
    char err[300] = "";
    struct stream *s = load_stream(p, n, err, sizeof(err));
    if (s) {
        test_fail(__FILE__, __LINE__, "%s: accepted", what);
        sfree(s);
        return;
    }
    if (!strstr(err, "offset"))
        test_fail(__FILE__, __LINE__, "%s: error without offset: %s", what, err);
    if (needle && !strstr(err, needle))
        test_fail(__FILE__, __LINE__, "%s: error '%s' lacks '%s'", what, err, needle);
}

TEST(rdb_stream_truncated)
{
    static const char *const all[] = {golden_A, golden_B, golden_C};
    for (size_t g = 0; g < 3; g++) {
        size_t len;
        unsigned char *p = unhex(all[g], &len);
        len -= 10;
        for (size_t cut = 0; cut < len; cut++) {
            unsigned char *q = malloc(cut ? cut : 1); /* exact size: ASan sees any over-read */
            memcpy(q, p, cut);
            char what[64];
            snprintf(what, sizeof(what), "payload %zu cut at %zu", g, cut);
            expect_refused(q, cut, what, NULL);
            free(q);
        }
        free(p);
    }
}

/* Byte flips: each must load or fail cleanly; what loads must be
 * self-consistent enough to iterate and save again. */
TEST(rdb_stream_flipped_bytes)
{
    static const char *const all[] = {golden_A, golden_B, golden_C};
    static const unsigned char masks[] = {0x01, 0x02, 0x10, 0x80, 0xff};
    size_t loaded = 0, refused = 0;
    for (size_t g = 0; g < 3; g++) {
        size_t len;
        unsigned char *p = unhex(all[g], &len);
        len -= 10;
        for (size_t i = 1; i < len; i++) {
            for (size_t m = 0; m < sizeof(masks); m++) {
                char err[300];
                unsigned char *q = malloc(len);
                memcpy(q, p, len);
                q[i] ^= masks[m];
                struct stream *s = load_stream(q, len, err, sizeof(err));
                if (s) {
                    struct stream_iter it;
                    struct stream_entry e;
                    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
                    uint64_t n = 0;
                    stream_iter_start(&it, s, &lo, &hi, 0);
                    while (stream_iter_next(&it, &e)) {
                        for (uint64_t k = 0; k < e.nfields; k++) {
                            const char *f, *v;
                            size_t fl, vl;
                            stream_entry_field(&e, &f, &fl, &v, &vl);
                        }
                        n++;
                    }
                    stream_iter_stop(&it);
                    CHECK_EQ(n, s->length);
                    size_t m2;
                    free(save_stream(s, 11, 1, &m2));
                    sfree(s);
                    loaded++;
                } else {
                    refused++;
                }
                free(q);
            }
        }
        free(p);
    }
    CHECK(refused > 0);
    (void)loaded;
}

/* Random damage (1-4 bytes overwritten, or bytes cut out / duplicated) to
 * our own payloads of every type, groups included: load or fail cleanly. */
TEST(rdb_stream_random_damage)
{
    long long saved = stream_node_max_entries;
    stream_node_max_entries = 5;
    struct stream *s = stream_new();
    const char *same[] = {"f", "1", "g", "two"};
    const char *own[] = {"h", "-77"};
    for (uint64_t i = 1; i <= 30; i++)
        add(s, i, i % 2, i % 4 ? 2 : 1, i % 4 ? same : own);
    for (uint64_t i = 3; i <= 30; i += 7) {
        struct stream_id id = sid(i, i % 2);
        stream_delete(s, &id);
    }
    struct cgroup *g = group(s, "grp", sid(20, 0), 18);
    deliver(g, "a", sid(1, 1), 1700000000000LL, 3);
    deliver(g, "b", sid(2, 0), 1700000000001LL, 1);
    deliver(g, "a", sid(4, 0), 1700000000002LL, 2);
    consumer_create(g, "idle", 4, 5);
    group(s, "other", sid(30, 0), ENTRIES_READ_INVALID);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    size_t refused = 0, loaded = 0;
    static const int versions[] = {9, 10, 11};
    for (size_t vi = 0; vi < 3; vi++) {
        size_t n;
        unsigned char *p = save_stream(s, versions[vi], 0, &n);
        for (int round = 0; round < 3000; round++) {
            unsigned char *q = malloc(n + 8);
            size_t m = n;
            memcpy(q, p, n);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t at = 1 + (size_t)(rng % (n - 1));
            int kind = (int)((rng >> 32) % 3);
            if (kind == 0) {
                for (int k = 0; k < 1 + (int)((rng >> 40) % 4) && at + k < n; k++)
                    q[at + k] = (unsigned char)(rng >> (8 * k));
            } else if (kind == 1) {
                size_t cut = 1 + (rng >> 40) % 8;
                if (at + cut > n)
                    cut = n - at;
                memmove(q + at, q + at + cut, n - at - cut);
                m = n - cut;
            } else {
                size_t dup = 1 + (rng >> 40) % 8;
                if (at + dup > n)
                    dup = n - at;
                memmove(q + at + dup, q + at, n - at);
                m = n + dup;
            }
            char err[300];
            struct stream *c = load_stream(q, m, err, sizeof(err));
            if (c) {
                size_t m2;
                free(save_stream(c, 11, 1, &m2));
                sfree(c);
                loaded++;
            } else {
                if (!strstr(err, "offset") && strncmp(err, "trailing bytes", 14))
                    test_fail(__FILE__, __LINE__, "error without offset: %s", err);
                refused++;
            }
            free(q);
        }
        free(p);
    }
    CHECK(refused > 0);
    (void)loaded;
    sfree(s);
    stream_node_max_entries = saved;
}

/* Hand-made payloads (version-10 layout) around one listpack node. */
static unsigned char *one_node(const unsigned char *key, size_t keylen, const unsigned char *lp, size_t lplen,
                               uint64_t length, struct stream_id last, size_t *n)
{
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_STREAM_LISTPACKS_2);
    rdb_w_len(&o, 1);
    rdb_w_blob(&o, key, keylen);
    rdb_w_blob(&o, lp, lplen);
    rdb_w_len(&o, length);
    rdb_w_len(&o, last.ms);
    rdb_w_len(&o, last.seq);
    for (int i = 0; i < 5; i++)
        rdb_w_len(&o, 0);
    rdb_w_len(&o, 0); /* groups */
    unsigned char *p = malloc(o.len);
    memcpy(p, o.buf, o.len);
    *n = o.len;
    rdb_out_free(&o);
    return p;
}

/* A node at master 10-0: count/deleted/nmaster, master "f", then entries
 * given as (flags, msdelta, seqdelta, value, lpcount). */
struct ent {
    long long flags, msd, seqd;
    const char *v;
    long long lpcount;
};

static unsigned char *node_lp(long long count, long long deleted, long long nmaster, const struct ent *e, size_t ne)
{
    unsigned char *lp = lp_new();
    lp = lp_append_int(lp, count);
    lp = lp_append_int(lp, deleted);
    lp = lp_append_int(lp, nmaster);
    lp = lp_append(lp, "f", 1);
    lp = lp_append_int(lp, 0);
    for (size_t i = 0; i < ne; i++) {
        lp = lp_append_int(lp, e[i].flags);
        lp = lp_append_int(lp, e[i].msd);
        lp = lp_append_int(lp, e[i].seqd);
        lp = lp_append(lp, e[i].v, strlen(e[i].v));
        lp = lp_append_int(lp, e[i].lpcount);
    }
    return lp;
}

static void node_case(const char *what, const char *needle, long long count, long long deleted, long long nmaster,
                      const struct ent *e, size_t ne, uint64_t length, struct stream_id last, int ok)
{
    unsigned char key[16] = {0};
    key[7] = 10; /* master 10-0 */
    unsigned char *lp = node_lp(count, deleted, nmaster, e, ne);
    size_t n;
    unsigned char *p = one_node(key, sizeof(key), lp, lp_bytes(lp), length, last, &n);
    if (ok) {
        char err[300] = "";
        struct stream *s = load_stream(p, n, err, sizeof(err));
        if (!s)
            test_fail(__FILE__, __LINE__, "%s: refused: %s", what, err);
        else
            sfree(s);
    } else {
        expect_refused(p, n, what, needle);
    }
    free(p);
    lp_free(lp);
}

TEST(rdb_stream_bad_nodes)
{
    struct stream_id last = {20, 0};
    struct ent good[] = {{2, 0, 0, "a", 4}, {2, 1, 0, "b", 4}};
    node_case("well-formed", NULL, 2, 0, 1, good, 2, 2, last, 1);
    node_case("length mismatch", "inconsistent", 2, 0, 1, good, 2, 3, last, 0);
    node_case("last ID too small", "last ID", 2, 0, 1, good, 2, 2, (struct stream_id){10, 5}, 0);
    struct ent badcount[] = {{2, 0, 0, "a", 5}};
    node_case("lp-count", "lp-count", 1, 0, 1, badcount, 1, 1, last, 0);
    struct ent badflags[] = {{6, 0, 0, "a", 4}};
    node_case("flags", "flags", 1, 0, 1, badflags, 1, 1, last, 0);
    struct ent below[] = {{2, -1, 0, "a", 4}};
    node_case("entry below master", "order", 1, 0, 1, below, 1, 1, last, 0);
    struct ent dup[] = {{2, 0, 0, "a", 4}, {2, 0, 0, "b", 4}};
    node_case("duplicate ID", "order", 2, 0, 1, dup, 2, 2, last, 0);
    node_case("master count", "counts", 3, 0, 1, good, 2, 2, last, 0);
    struct ent del[] = {{3, 0, 0, "a", 4}, {2, 1, 0, "b", 4}};
    node_case("deleted count", "counts", 2, 0, 1, del, 2, 1, last, 0);
    node_case("deleted counted", NULL, 1, 1, 1, del, 2, 1, last, 1);
    node_case("nmaster huge", "master", 2, 0, 1000000, good, 2, 2, last, 0);
    node_case("negative count", "master", -1, 0, 1, good, 2, 2, last, 0);
    /* An all-deleted node loads as nothing. */
    struct ent alldel[] = {{3, 0, 0, "a", 4}};
    node_case("all deleted", NULL, 0, 1, 1, alldel, 1, 0, last, 1);

    /* A node key that is not 16 bytes; a listpack that is not one. */
    unsigned char key[16] = {0};
    unsigned char *lp = node_lp(2, 0, 1, good, 2);
    size_t n;
    unsigned char *p = one_node(key, 15, lp, lp_bytes(lp), 2, last, &n);
    expect_refused(p, n, "short key", "stream ID");
    free(p);
    lp[lp_bytes(lp) - 2] ^= 0x40; /* a backlen */
    p = one_node(key, 16, lp, lp_bytes(lp), 2, last, &n);
    expect_refused(p, n, "bad listpack", "integrity");
    free(p);
    lp_free(lp);

    /* Two nodes out of order. */
    {
        struct rdb_out o;
        unsigned char k1[16] = {0}, k2[16] = {0};
        k1[7] = 10;
        k2[7] = 10; /* same master as the first */
        unsigned char *l1 = node_lp(1, 0, 1, good, 1);
        rdb_out_init_mem(&o);
        rdb_w_type(&o, RDB_TYPE_STREAM_LISTPACKS_2);
        rdb_w_len(&o, 2);
        rdb_w_blob(&o, k1, 16);
        rdb_w_blob(&o, l1, lp_bytes(l1));
        rdb_w_blob(&o, k2, 16);
        rdb_w_blob(&o, l1, lp_bytes(l1));
        rdb_w_len(&o, 2);
        for (int i = 0; i < 8; i++)
            rdb_w_len(&o, 20);
        expect_refused(o.buf, o.len, "nodes out of order", "order");
        rdb_out_free(&o);
        lp_free(l1);
    }
}

/* Groups appended by hand after a valid group-less stream. */
static void group_case(const char *what, const char *needle, void (*write)(struct rdb_out *o))
{
    struct stream *s = stream_new();
    const char *fv[] = {"f", "v"};
    for (uint64_t i = 1; i <= 5; i++)
        add(s, i, 0, 1, fv);
    size_t n;
    unsigned char *p = save_stream(s, 10, 0, &n);
    CHECK_EQ(p[n - 1], 0); /* the group count */
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_raw(&o, p, n - 1);
    write(&o);
    expect_refused(o.buf, o.len, what, needle);
    rdb_out_free(&o);
    free(p);
    sfree(s);
}

static void w_rawid(struct rdb_out *o, uint64_t ms)
{
    unsigned char raw[16] = {0};
    raw[7] = (unsigned char)ms;
    rdb_w_raw(o, raw, 16);
}

static void w_group_head(struct rdb_out *o, const char *name, size_t npel)
{
    rdb_w_str(o, name, strlen(name));
    rdb_w_len(o, 5);
    rdb_w_len(o, 0);
    rdb_w_len(o, 5);
    rdb_w_len(o, npel);
    for (size_t i = 0; i < npel; i++) {
        w_rawid(o, i + 1);
        rdb_w_millis(o, 1000);
        rdb_w_len(o, 1);
    }
}

static void g_dup_group(struct rdb_out *o)
{
    rdb_w_len(o, 2);
    w_group_head(o, "g", 0);
    rdb_w_len(o, 0);
    w_group_head(o, "g", 0);
    rdb_w_len(o, 0);
}

static void g_dup_pel(struct rdb_out *o)
{
    rdb_w_len(o, 1);
    rdb_w_str(o, "g", 1);
    rdb_w_len(o, 5);
    rdb_w_len(o, 0);
    rdb_w_len(o, 5);
    rdb_w_len(o, 2);
    for (int i = 0; i < 2; i++) {
        w_rawid(o, 3);
        rdb_w_millis(o, 1000);
        rdb_w_len(o, 1);
    }
    rdb_w_len(o, 0);
}

static void consumer(struct rdb_out *o, const char *name, const uint64_t *ids, size_t n)
{
    rdb_w_str(o, name, strlen(name));
    rdb_w_millis(o, 1000);
    rdb_w_len(o, n);
    for (size_t i = 0; i < n; i++)
        w_rawid(o, ids[i]);
}

static void g_unknown_pel(struct rdb_out *o)
{
    static const uint64_t ids[] = {1, 4};
    rdb_w_len(o, 1);
    w_group_head(o, "g", 2);
    rdb_w_len(o, 1);
    consumer(o, "c", ids, 2);
}

static void g_owned_twice(struct rdb_out *o)
{
    static const uint64_t ids[] = {1, 2};
    rdb_w_len(o, 1);
    w_group_head(o, "g", 2);
    rdb_w_len(o, 2);
    consumer(o, "c", ids, 2);
    consumer(o, "d", ids + 1, 1);
}

static void g_twice_same(struct rdb_out *o)
{
    static const uint64_t ids[] = {1, 1, 2};
    rdb_w_len(o, 1);
    w_group_head(o, "g", 2);
    rdb_w_len(o, 1);
    consumer(o, "c", ids, 3);
}

static void g_orphan(struct rdb_out *o)
{
    static const uint64_t ids[] = {1};
    rdb_w_len(o, 1);
    w_group_head(o, "g", 2);
    rdb_w_len(o, 1);
    consumer(o, "c", ids, 1);
}

static void g_dup_consumer(struct rdb_out *o)
{
    static const uint64_t ids[] = {1, 2};
    rdb_w_len(o, 1);
    w_group_head(o, "g", 2);
    rdb_w_len(o, 2);
    consumer(o, "c", ids, 1);
    consumer(o, "c", ids + 1, 1);
}

static void g_bad_entries_read(struct rdb_out *o)
{
    rdb_w_len(o, 1);
    rdb_w_str(o, "g", 1);
    rdb_w_len(o, 5);
    rdb_w_len(o, 0);
    rdb_w_len(o, (uint64_t)-7);
    rdb_w_len(o, 0);
    rdb_w_len(o, 0);
}

static void g_cut(struct rdb_out *o)
{
    rdb_w_len(o, 3);
    w_group_head(o, "g", 1);
}

TEST(rdb_stream_bad_groups)
{
    group_case("duplicate group", "Duplicated consumer group", g_dup_group);
    group_case("duplicate PEL entry", "Duplicated global PEL", g_dup_pel);
    group_case("consumer PEL entry not in the group's", "not found", g_unknown_pel);
    group_case("PEL entry of two consumers", "owned twice", g_owned_twice);
    group_case("PEL entry twice in one consumer", "owned twice", g_twice_same);
    group_case("PEL entry of no consumer", "without a consumer", g_orphan);
    group_case("duplicate consumer", "Duplicate stream consumer detected", g_dup_consumer);
    group_case("entries-read", "entries-read", g_bad_entries_read);
    group_case("cut in the groups", NULL, g_cut);
}

/* The one-pass listpack builder encodes as lp_append / lp_append_int do. */
TEST(rdb_stream_lp_builder_matches_lp_append)
{
    static const char *const strs[] = {"", "0", "-0", "127", "128", "-4096", "4095", "-32769", "8388608",
                                       "-2147483649", "9223372036854775807", "-9223372036854775808",
                                       "9223372036854775808", "007", " 1", "abc"};
    static const long long ints[] = {0, 127, 128, -1, -4096, 4095, 4096, 32767, -32768, 8388607, -8388609,
                                     2147483647, -2147483648LL, 1LL << 40, -(1LL << 62)};
    char big[5000];
    memset(big, 'q', sizeof(big));
    struct lp_builder b = {0};
    for (int round = 0; round < 2; round++) {
        unsigned char *lp = lp_new();
        lpb_reset(&b);
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
            lp = lp_append(lp, strs[i], strlen(strs[i]));
            lpb_append(&b, strs[i], strlen(strs[i]));
        }
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
            lp = lp_append_int(lp, ints[i]);
            lpb_append_int(&b, ints[i]);
        }
        static const size_t lens[] = {63, 64, 4095, 4096, 5000};
        for (size_t i = 0; i < 5; i++) {
            lp = lp_append(lp, big, lens[i]);
            lpb_append(&b, big, lens[i]);
        }
        size_t n;
        const unsigned char *p = lpb_finish(&b, &n);
        CHECK_MEM(p, n, lp, lp_bytes(lp));
        CHECK(lp_validate(p, n));
        lp_free(lp);
    }
    /* More than 65535 elements: the count saturates as in lp_append. */
    lpb_reset(&b);
    for (int i = 0; i < 70000; i++)
        lpb_append_int(&b, i % 100);
    size_t n;
    const unsigned char *p = lpb_finish(&b, &n);
    CHECK(lp_validate(p, n));
    CHECK_EQ(lp_count(p), 70000);
    lpb_free(&b);
}
