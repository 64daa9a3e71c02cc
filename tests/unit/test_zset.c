/* test_zset.c - the sorted-set value layer (types/zset.c) without a
 * server: listpack storage order and score text, the listpack -> skiplist
 * conversion at both thresholds, ZADD flag semantics, ranks and the
 * visitor in both encodings checked against a model under random updates,
 * and the type ops (dup, len, effort, mem, free). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/listpack.h"
#include "test.h"
#include "types/zset.h"

static struct entry *mk(size_t hint, size_t maxlen)
{
    uint8_t enc;
    void *p = zset_new_value(hint, maxlen, &enc);
    return entry_new_obj(OBJ_ZSET, enc, "k", 1, p, -1);
}

static int add(struct entry *e, double s, const char *m, int flags)
{
    int out;
    double ns;
    if (!zset_add(e, s, m, strlen(m), flags, &out, &ns))
        return -1;
    return out;
}

struct collect {
    char buf[4096];
    size_t n;
};

static int collect_fn(void *arg, const char *s, size_t len, double score)
{
    struct collect *c = arg;
    c->n += (size_t)snprintf(c->buf + c->n, sizeof(c->buf) - c->n, "%s%.*s:%g", c->n ? " " : "", (int)len, s, score);
    return 0;
}

static const char *dump(struct entry *e, int reverse)
{
    static struct collect c;
    c.n = 0;
    c.buf[0] = 0;
    zset_visit(e, reverse, collect_fn, &c);
    return c.buf;
}

TEST(test_zset_listpack_order_and_text)
{
    struct entry *e = mk(1, 1);
    CHECK_EQ(e->enc, ENC_LISTPACK);
    CHECK_EQ(add(e, 2, "b", 0), ZO_ADDED);
    CHECK_EQ(add(e, 1, "z", 0), ZO_ADDED);
    CHECK_EQ(add(e, 2, "a", 0), ZO_ADDED);
    CHECK_EQ(add(e, 0.1, "10", 0), ZO_ADDED);
    CHECK_EQ(add(e, INFINITY, "top", 0), ZO_ADDED);
    CHECK(strcmp(dump(e, 0), "10:0.1 z:1 a:2 b:2 top:inf") == 0);
    CHECK(strcmp(dump(e, 1), "top:inf b:2 a:2 z:1 10:0.1") == 0);
    /* Scores are stored as the shortest text that reads back exactly,
     * integers as listpack integers; the member "10" is an integer too. */
    unsigned char *lp = entry_ptr(e);
    struct lp_val v;
    size_t p = lp_first(lp);
    lp_get(lp, p, &v);
    CHECK(v.s == NULL && v.ll == 10);
    lp_get(lp, lp_next(lp, p), &v);
    CHECK(v.s != NULL && v.len == 3 && memcmp(v.s, "0.1", 3) == 0);
    lp_get(lp, lp_next(lp, lp_next(lp, lp_next(lp, p))), &v);
    CHECK(v.s == NULL && v.ll == 1);
    double s;
    CHECK(zset_score(e, "10", 2, &s) && s == 0.1);
    CHECK(!zset_score(e, "1", 1, &s));
    CHECK_EQ(zset_rank(e, "a", 1, 0, &s), 2);
    CHECK_EQ(zset_rank(e, "a", 1, 1, &s), 2);
    CHECK_EQ(zset_rank(e, "top", 3, 1, &s), 0);
    CHECK_EQ(zset_rank(e, "nope", 4, 0, &s), -1);
    /* An update moves the member. */
    CHECK_EQ(add(e, 3, "z", 0), ZO_UPDATED);
    CHECK(strcmp(dump(e, 0), "10:0.1 a:2 b:2 z:3 top:inf") == 0);
    CHECK_EQ(add(e, 3, "z", 0), 0);
    CHECK_EQ(zset_del(e, "a", 1), 1);
    CHECK_EQ(zset_del(e, "a", 1), 0);
    CHECK_EQ(zset_length(e), 4);
    entry_free(e);
}

TEST(test_zset_flags)
{
    struct entry *e = mk(1, 1);
    int out;
    double ns = 0;
    CHECK_EQ(add(e, 5, "a", ZA_XX), ZO_NOP);
    CHECK_EQ(zset_length(e), 0);
    CHECK_EQ(add(e, 5, "a", ZA_NX), ZO_ADDED);
    CHECK_EQ(add(e, 6, "a", ZA_NX), ZO_NOP);
    CHECK_EQ(add(e, 4, "a", ZA_GT), ZO_NOP);
    CHECK_EQ(add(e, 7, "a", ZA_GT), ZO_UPDATED);
    CHECK_EQ(add(e, 8, "a", ZA_LT), ZO_NOP);
    CHECK(zset_add(e, 2, "a", 1, ZA_INCR, &out, &ns) && out == ZO_UPDATED && ns == 9);
    CHECK(zset_add(e, -1, "a", 1, ZA_INCR | ZA_GT, &out, &ns) && out == ZO_NOP);
    CHECK_EQ(add(e, INFINITY, "i", 0), ZO_ADDED);
    CHECK(!zset_add(e, -INFINITY, "i", 1, ZA_INCR, &out, &ns));
    CHECK(!zset_add(e, NAN, "new", 3, 0, &out, &ns));
    CHECK_EQ(zset_length(e), 2);
    entry_free(e);
}

TEST(test_zset_conversions)
{
    int saved_e = zset_max_listpack_entries, saved_v = zset_max_listpack_value;
    zset_max_listpack_entries = 3;
    zset_max_listpack_value = 4;
    struct entry *e = mk(3, 4);
    CHECK_EQ(e->enc, ENC_LISTPACK);
    add(e, 1, "a", 0);
    add(e, 2, "bbbb", 0);
    add(e, 3, "c", 0);
    CHECK_EQ(e->enc, ENC_LISTPACK);
    add(e, 4, "d", 0);
    CHECK_EQ(e->enc, ENC_SKIPLIST);
    CHECK(strcmp(dump(e, 0), "a:1 bbbb:2 c:3 d:4") == 0);
    entry_free(e);

    e = mk(1, 1);
    add(e, 1, "a", 0);
    add(e, 2, "12345", 0);
    CHECK_EQ(e->enc, ENC_SKIPLIST);
    CHECK(strcmp(dump(e, 1), "12345:2 a:1") == 0);
    entry_free(e);

    e = mk(4, 1);
    CHECK_EQ(e->enc, ENC_SKIPLIST);
    entry_free(e);
    e = mk(1, 5);
    CHECK_EQ(e->enc, ENC_SKIPLIST);
    entry_free(e);
    zset_max_listpack_entries = 0;
    e = mk(1, 1);
    CHECK_EQ(e->enc, ENC_SKIPLIST);
    entry_free(e);
    zset_max_listpack_entries = saved_e;
    zset_max_listpack_value = saved_v;
}

struct ref {
    char m[12];
    double s;
};

static int refcmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return strcmp(x->m, y->m);
}

TEST(test_zset_random_against_model)
{
    int saved = zset_max_listpack_entries;
    for (int round = 0; round < 2; round++) {
        zset_max_listpack_entries = round == 0 ? 1000 : 0;
        struct entry *e = mk(1, 1);
        static struct ref ref[200];
        size_t n = 0;
        unsigned seed = 1234 + (unsigned)round;
        for (int op = 0; op < 5000; op++) {
            seed = seed * 1103515245 + 12345;
            char m[12];
            snprintf(m, sizeof(m), "m%u", (seed >> 8) % 150);
            double s = (double)((int)((seed >> 4) % 21) - 10) / ((seed & 1) ? 1 : 4);
            size_t at = n;
            for (size_t i = 0; i < n; i++)
                if (!strcmp(ref[i].m, m))
                    at = i;
            if ((seed >> 20) % 3 == 0) {
                CHECK_EQ(zset_del(e, m, strlen(m)), at < n);
                if (at < n)
                    ref[at] = ref[--n];
            } else {
                int out = add(e, s, m, 0);
                if (at == n) {
                    CHECK_EQ(out, ZO_ADDED);
                    strcpy(ref[n].m, m);
                    ref[n++].s = s;
                } else {
                    CHECK_EQ(out, ref[at].s == s ? 0 : ZO_UPDATED);
                    ref[at].s = s;
                }
            }
        }
        CHECK_EQ(e->enc, round == 0 ? ENC_LISTPACK : ENC_SKIPLIST);
        qsort(ref, n, sizeof(ref[0]), refcmp);
        CHECK_EQ(zset_length(e), n);
        for (size_t i = 0; i < n; i++) {
            double s;
            CHECK_EQ(zset_rank(e, ref[i].m, strlen(ref[i].m), 0, &s), (long)i);
            CHECK(s == ref[i].s);
            CHECK_EQ(zset_rank(e, ref[i].m, strlen(ref[i].m), 1, &s), (long)(n - 1 - i));
        }
        /* Deep copy: same content, independent. */
        const struct type_ops *o = obj_ops(OBJ_ZSET);
        struct entry *d = entry_new_obj(OBJ_ZSET, e->enc, "d", 1, o->dup(entry_ptr(e), e->enc), -1);
        char a[4096];
        snprintf(a, sizeof(a), "%s", dump(e, 0));
        CHECK(strcmp(a, dump(d, 0)) == 0);
        CHECK_EQ(o->len(entry_ptr(d), d->enc), n);
        CHECK_EQ(o->effort(entry_ptr(d), d->enc), round == 0 ? 1 : n);
        /* at least a few bytes per member whatever the allocator rounds */
        CHECK(o->mem(entry_ptr(d), d->enc) > n * 4);
        if (n)
            zset_del(d, ref[0].m, strlen(ref[0].m));
        CHECK(strcmp(a, dump(e, 0)) == 0);
        entry_free(d);
        entry_free(e);
    }
    zset_max_listpack_entries = saved;
}
