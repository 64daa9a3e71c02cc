/* test_hash.c - the hash value layer (types/hash.c) without a server:
 * listpack <-> field operations, the listpack -> hashtable conversion at
 * both thresholds, the listpackex TTL order (expired fields are a prefix),
 * HEXPIRE's condition codes, and the hashtable's TTL heap against a model
 * under random updates, value growth (elements that move) and expiry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/listpack.h"
#include "test.h"
#include "types/hash.h"

#define NOW 1700000000000LL

static struct entry *mk(void)
{
    db_cmd_time_ms = NOW;
    return entry_new_obj(OBJ_HASH, ENC_LISTPACK, "k", 1, hash_new(), -1);
}

static int set(struct entry *e, const char *f, const char *v)
{
    return hash_set(e, f, strlen(f), v, strlen(v), 0);
}

/* Value of f through the SORT accessor ("" and 0 if absent). */
static int get(struct entry *e, const char *f, char *out)
{
    const char *v;
    size_t n;
    char ib[32];
    if (!hash_get_field(e, f, strlen(f), &v, &n, ib)) {
        out[0] = 0;
        return 0;
    }
    memcpy(out, v, n);
    out[n] = 0;
    return 1;
}

static long long ttl(struct entry *e, const char *f)
{
    return hash_field_ttl(e, f, strlen(f), NOW);
}

static int expire_at(struct entry *e, const char *f, long long at, int cond)
{
    return hash_set_field_ttl(e, f, strlen(f), at, cond, NOW);
}

/* Field names of a listpack(ex) hash in storage order, space separated. */
static void order(struct entry *e, char *out)
{
    unsigned char *lp = entry_ptr(e);
    int step = e->enc == ENC_LISTPACK_EX ? 3 : 2;
    out[0] = 0;
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        struct lp_val v;
        char b[32];
        lp_get(lp, p, &v);
        if (v.s)
            strncat(out, (const char *)v.s, v.len);
        else {
            ll_to_str(b, v.ll);
            strcat(out, b);
        }
        strcat(out, " ");
        for (int s = 0; s < step; s++)
            p = lp_next(lp, p);
    }
}

TEST(test_hash_listpack_set_get_del)
{
    struct entry *e = mk();
    char v[128];
    CHECK_EQ(set(e, "a", "1"), 1);
    CHECK_EQ(set(e, "b", "hello"), 1);
    CHECK_EQ(set(e, "a", "2"), 0);
    CHECK_EQ(hash_length(e), 2);
    CHECK(get(e, "a", v));
    CHECK_STR(v, strlen(v), "2");
    CHECK(get(e, "b", v));
    CHECK_STR(v, strlen(v), "hello");
    CHECK(!get(e, "c", v));
    CHECK_EQ(e->enc, ENC_LISTPACK);
    CHECK_EQ(hash_del(e, "a", 1), 1);
    CHECK_EQ(hash_del(e, "a", 1), 0);
    CHECK_EQ(hash_length(e), 1);
    CHECK_EQ(obj_len(e), 1);
    CHECK_EQ(ttl(e, "b"), 0);
    CHECK_EQ(ttl(e, "zz"), -2);
    CHECK(!hash_has_ttl(e));
    entry_free(e);
}

TEST(test_hash_converts_on_thresholds)
{
    int oe = hash_max_listpack_entries, ov = hash_max_listpack_value;
    char v[128], f[16];
    hash_max_listpack_entries = 3;
    hash_max_listpack_value = 5;
    struct entry *e = mk();
    for (int i = 0; i < 3; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        set(e, f, "v");
    }
    CHECK_EQ(e->enc, ENC_LISTPACK);
    set(e, "f3", "v");
    CHECK_EQ(e->enc, ENC_HT);
    CHECK_EQ(hash_length(e), 4);
    CHECK(get(e, "f2", v));
    entry_free(e);

    e = mk();
    set(e, "a", "12345");
    CHECK_EQ(e->enc, ENC_LISTPACK);
    set(e, "a", "123456");
    CHECK_EQ(e->enc, ENC_HT);
    CHECK(get(e, "a", v));
    CHECK_STR(v, strlen(v), "123456");
    entry_free(e);

    e = mk();
    set(e, "longfield", "x");
    CHECK_EQ(e->enc, ENC_HT);
    entry_free(e);
    hash_max_listpack_entries = oe;
    hash_max_listpack_value = ov;
}

TEST(test_hash_integer_values_round_trip)
{
    struct entry *e = mk();
    char v[128];
    set(e, "-1", "9223372036854775807");
    set(e, "7", "-9223372036854775808");
    set(e, "x", "007");
    CHECK(get(e, "-1", v));
    CHECK_STR(v, strlen(v), "9223372036854775807");
    CHECK(get(e, "7", v));
    CHECK_STR(v, strlen(v), "-9223372036854775808");
    CHECK(get(e, "x", v));
    CHECK_STR(v, strlen(v), "007");
    hash_convert_ht(e, 0);
    CHECK_EQ(e->enc, ENC_HT);
    CHECK(get(e, "-1", v));
    CHECK_STR(v, strlen(v), "9223372036854775807");
    CHECK(get(e, "7", v));
    CHECK_STR(v, strlen(v), "-9223372036854775808");
    entry_free(e);
}

TEST(test_hash_listpackex_ttl_order)
{
    struct entry *e = mk();
    char o[256];
    set(e, "a", "1");
    set(e, "b", "2");
    set(e, "c", "3");
    set(e, "d", "4");
    /* A missing field still turns the listpack into listpackex. */
    CHECK_EQ(expire_at(e, "zz", NOW + 100, 0), -2);
    CHECK_EQ(e->enc, ENC_LISTPACK_EX);
    order(e, o);
    CHECK_STR(o, strlen(o), "a b c d ");
    CHECK_EQ(expire_at(e, "c", NOW + 100, 0), 1);
    CHECK_EQ(expire_at(e, "a", NOW + 100, 0), 1);
    order(e, o);
    CHECK_STR(o, strlen(o), "a c b d ");
    CHECK_EQ(expire_at(e, "d", NOW + 50, 0), 1);
    order(e, o);
    CHECK_STR(o, strlen(o), "d a c b ");
    /* In place when the order holds. */
    CHECK_EQ(expire_at(e, "d", NOW + 60, 0), 1);
    order(e, o);
    CHECK_STR(o, strlen(o), "d a c b ");
    CHECK_EQ(expire_at(e, "d", NOW + 200, 0), 1);
    order(e, o);
    CHECK_STR(o, strlen(o), "a c d b ");
    /* Persist moves to the end; HSET clears the TTL of its field only. */
    CHECK_EQ(hash_persist_field(e, "a", 1, NOW), 1);
    CHECK_EQ(hash_persist_field(e, "a", 1, NOW), -1);
    order(e, o);
    CHECK_STR(o, strlen(o), "c d b a ");
    set(e, "c", "new");
    order(e, o);
    CHECK_STR(o, strlen(o), "d b a c ");
    CHECK_EQ(ttl(e, "c"), 0);
    CHECK_EQ(ttl(e, "d"), NOW + 200);
    /* keep_ttl (HINCRBY) keeps it. */
    hash_set(e, "d", 1, "5", 1, 1);
    CHECK_EQ(ttl(e, "d"), NOW + 200);
    CHECK(hash_has_ttl(e));
    CHECK_EQ(hash_persist_field(e, "d", 1, NOW), 1);
    CHECK(!hash_has_ttl(e));
    CHECK_EQ(e->enc, ENC_LISTPACK_EX);
    entry_free(e);
}

static void conditions(int ht)
{
    struct entry *e = mk();
    set(e, "f1", "v");
    set(e, "f2", "v");
    set(e, "f3", "v");
    if (ht)
        hash_convert_ht(e, 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 1000, HFE_NX), 1);
    CHECK_EQ(expire_at(e, "f1", NOW + 1000, HFE_NX), 0);
    CHECK_EQ(expire_at(e, "f2", NOW + 1000, HFE_XX), 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 2000, HFE_XX), 1);
    CHECK_EQ(expire_at(e, "f1", NOW + 1500, HFE_GT), 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 2000, HFE_GT), 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 2500, HFE_GT), 1);
    CHECK_EQ(expire_at(e, "f2", NOW + 2500, HFE_GT), 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 2500, HFE_LT), 0);
    CHECK_EQ(expire_at(e, "f1", NOW + 1200, HFE_LT), 1);
    CHECK_EQ(expire_at(e, "f2", NOW + 99999, HFE_LT), 1);
    CHECK_EQ(ttl(e, "f1"), NOW + 1200);
    CHECK_EQ(ttl(e, "f2"), NOW + 99999);
    CHECK_EQ(expire_at(e, "f3", NOW, 0), 2);
    CHECK_EQ(hash_length(e), 2);
    CHECK_EQ(expire_at(e, "nope", NOW + 5, 0), -2);
    /* An expired field reads as absent everywhere. */
    CHECK_EQ(ttl(e, "f1"), NOW + 1200);
    CHECK_EQ(hash_field_ttl(e, "f1", 2, NOW + 1200), -2);
    CHECK_EQ(hash_persist_field(e, "f1", 2, NOW + 1200), -2);
    entry_free(e);
}

TEST(test_hash_expire_conditions_listpackex)
{
    conditions(0);
}

TEST(test_hash_expire_conditions_hashtable)
{
    conditions(1);
}

TEST(test_hash_hset_over_expired_field_counts_as_new)
{
    for (int ht = 0; ht < 2; ht++) {
        struct entry *e = mk();
        set(e, "a", "1");
        set(e, "b", "1");
        if (ht)
            hash_convert_ht(e, 0);
        CHECK_EQ(expire_at(e, "a", NOW + 10, 0), 1);
        db_cmd_time_ms = NOW + 10;
        CHECK_EQ(set(e, "a", "2"), 1);
        CHECK_EQ(ttl(e, "a"), 0);
        CHECK(!hash_has_ttl(e));
        db_cmd_time_ms = NOW;
        entry_free(e);
    }
}

/* Random TTL/value/delete operations on both encodings against a model;
 * then time advances and hash_drop_expired must remove exactly the fields
 * whose TTL passed, in whatever batches. */
#define NF 300
static void ttl_model(int ht)
{
    long long model_ttl[NF];
    int present[NF];
    unsigned seed = 12345 + (unsigned)ht;
    char f[16], v[200], got[256];
    struct entry *e = mk();
    memset(present, 0, sizeof(present));
    if (ht)
        hash_convert_ht(e, 0);
    else
        expire_at(e, "x", NOW + 1, 0); /* listpackex */
    for (int step = 0; step < 6000; step++) {
        int i = (int)(rand_r(&seed) % NF), op = (int)(rand_r(&seed) % 10);
        snprintf(f, sizeof(f), "f%d", i);
        if (op < 3) {
            int vl = (int)(rand_r(&seed) % (ht ? 150 : 20));
            memset(v, 'a' + i % 26, (size_t)vl);
            v[vl] = 0;
            CHECK_EQ(hash_set(e, f, strlen(f), v, (size_t)vl, op == 0), !present[i]);
            if (!present[i] || op != 0)
                model_ttl[i] = 0;
            present[i] = 1;
        } else if (op < 7) {
            long long at = NOW + 1 + (long long)(rand_r(&seed) % 1000);
            CHECK_EQ(expire_at(e, f, at, 0), present[i] ? 1 : -2);
            if (present[i])
                model_ttl[i] = at;
        } else if (op < 8) {
            int r = hash_persist_field(e, f, strlen(f), NOW);
            CHECK_EQ(r, !present[i] ? -2 : model_ttl[i] ? 1 : -1);
            if (present[i])
                model_ttl[i] = 0;
        } else {
            CHECK_EQ(hash_del(e, f, strlen(f)), present[i]);
            present[i] = 0;
        }
    }
    int any = 0;
    for (int i = 0; i < NF; i++)
        any |= present[i] && model_ttl[i];
    CHECK_EQ(hash_has_ttl(e), any);
    for (long long t = NOW; t <= NOW + 1000 + 37; t += 37) {
        long dropped = 0, want = 0;
        for (long r; (r = hash_drop_expired(e, t, 7)) > 0;)
            dropped += r;
        for (int i = 0; i < NF; i++) {
            if (present[i] && model_ttl[i] && model_ttl[i] <= t) {
                present[i] = 0;
                want++;
            }
        }
        CHECK_EQ(dropped, want);
        size_t n = 0;
        for (int i = 0; i < NF; i++) {
            snprintf(f, sizeof(f), "f%d", i);
            n += present[i];
            db_cmd_time_ms = t;
            CHECK_EQ(get(e, f, got), present[i]);
            db_cmd_time_ms = NOW;
            if (present[i])
                CHECK_EQ(hash_field_ttl(e, f, strlen(f), t), model_ttl[i]);
        }
        CHECK_EQ(hash_length(e), n + (!ht && hash_field_ttl(e, "x", 1, NOW) != -2));
    }
    CHECK(!hash_has_ttl(e));
    entry_free(e);
}

TEST(test_hash_ttl_model_listpackex)
{
    int oe = hash_max_listpack_entries, ov = hash_max_listpack_value;
    hash_max_listpack_entries = 100000;
    hash_max_listpack_value = 100000;
    ttl_model(0);
    hash_max_listpack_entries = oe;
    hash_max_listpack_value = ov;
}

TEST(test_hash_ttl_model_hashtable)
{
    ttl_model(1);
}

TEST(test_hash_type_ops_dup_mem_effort)
{
    const struct type_ops *o = obj_ops(OBJ_HASH);
    char f[16], v[128];
    for (int ht = 0; ht < 2; ht++) {
        struct entry *e = mk();
        for (int i = 0; i < 50; i++) {
            snprintf(f, sizeof(f), "f%d", i);
            set(e, f, "value");
        }
        if (ht)
            hash_convert_ht(e, 0);
        expire_at(e, "f3", NOW + 5000, 0);
        struct entry *c = entry_dup(e, "k2", 2, 1);
        CHECK_EQ(c->enc, e->enc);
        CHECK_EQ(hash_length(c), 50);
        CHECK_EQ(ttl(c, "f3"), NOW + 5000);
        set(e, "f1", "changed");
        hash_del(e, "f2", 2);
        CHECK(get(c, "f1", v));
        CHECK_STR(v, strlen(v), "value");
        CHECK(get(c, "f2", v));
        CHECK(o->mem(entry_ptr(c), c->enc) > 50 * 7);
        CHECK_EQ(o->len(entry_ptr(c), c->enc), 50);
        CHECK_EQ(o->effort(entry_ptr(c), c->enc), ht ? 51 : 1);
        CHECK_EQ(hash_drop_expired(c, NOW + 5000, 100), 1);
        CHECK_EQ(hash_length(c), 49);
        CHECK_EQ(ttl(e, "f3"), NOW + 5000);
        entry_free(c);
        entry_free(e);
    }
}

TEST(test_hash_expire_fields_sweeper_entry)
{
    struct entry *e = mk();
    int empty = -1;
    set(e, "a", "1");
    set(e, "b", "2");
    expire_at(e, "a", NOW + 10, 0);
    expire_at(e, "b", NOW + 20, 0);
    CHECK_EQ(hash_expire_fields(0, e, 0, NOW + 5, &empty), 0);
    CHECK_EQ(empty, 0);
    CHECK_EQ(hash_expire_fields(0, e, 0, NOW + 10, &empty), 1);
    CHECK_EQ(empty, 0);
    CHECK_EQ(hash_expire_fields(0, e, 0, NOW + 30, &empty), 1);
    CHECK_EQ(empty, 1);
    entry_free(e);
}
