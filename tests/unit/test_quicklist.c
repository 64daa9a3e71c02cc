/* test_quicklist.c - the quicklist (list of listpack nodes): the LZ codec
 * round trip and its corrupt-input checks, the node limits of every fill,
 * pushes and pops at both ends, node splits/merges on inserts, plain nodes
 * for large elements, compression windows, and long random sequences of
 * every operation checked against a plain array model (with ql_check's
 * structural audit after each step) over several fills and depths. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "ds/quicklist.h"
#include "test.h"

/* ------------------------------------------------------------ model --- */
struct elem {
    char *s;
    size_t len;
};

struct model {
    struct elem *a;
    size_t n, cap;
};

static void m_insert(struct model *m, size_t i, const char *s, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->a = realloc(m->a, m->cap * sizeof(*m->a));
    }
    memmove(m->a + i + 1, m->a + i, (m->n - i) * sizeof(*m->a));
    m->a[i].s = malloc(len + 1);
    memcpy(m->a[i].s, s, len);
    m->a[i].len = len;
    m->n++;
}

static void m_delete(struct model *m, size_t i, size_t k)
{
    for (size_t j = i; j < i + k; j++)
        free(m->a[j].s);
    memmove(m->a + i, m->a + i + k, (m->n - i - k) * sizeof(*m->a));
    m->n -= k;
}

static void m_free(struct model *m)
{
    m_delete(m, 0, m->n);
    free(m->a);
    memset(m, 0, sizeof(*m));
}

/* Does the element at lp+pos equal s? */
static int elem_is(const unsigned char *lp, size_t pos, const char *s, size_t len)
{
    struct lp_val v;
    char buf[32];
    lp_get(lp, pos, &v);
    if (v.s)
        return v.len == len && memcmp(v.s, s, len) == 0;
    int n = snprintf(buf, sizeof(buf), "%lld", v.ll);
    return (size_t)n == len && memcmp(buf, s, len) == 0;
}

/* Full comparison: forward and backward iteration, plus a few seeks;
 * with audit, also ql_check's structural audit. */
static int same_audit(struct quicklist *ql, const struct model *m, int audit)
{
    struct ql_iter it;
    size_t i = 0;
    int ok = ql->count == m->n;
    const char *err = audit ? ql_check(ql) : NULL;
    if (err) {
        fprintf(stderr, "ql_check: %s\n", err);
        return 0;
    }
    if (ql_iter_start(&it, ql, 0, 1)) {
        do {
            if (i >= m->n || !elem_is(it.lp, it.pos, m->a[i].s, m->a[i].len))
                ok = 0;
            i++;
        } while (ok && ql_iter_next(&it));
    }
    ql_iter_end(&it);
    if (i != m->n)
        ok = 0;
    i = m->n;
    if (ok && ql_iter_start(&it, ql, -1, 0)) {
        do {
            i--;
            if (!elem_is(it.lp, it.pos, m->a[i].s, m->a[i].len))
                ok = 0;
        } while (ok && ql_iter_next(&it));
        if (i != 0)
            ok = 0;
    }
    ql_iter_end(&it);
    for (int k = 0; ok && k < 4 && m->n; k++) {
        size_t j = (size_t)rand() % m->n;
        long long idx = rand() % 2 ? (long long)j : (long long)j - (long long)m->n;
        if (!ql_iter_start(&it, ql, idx, 1) || !elem_is(it.lp, it.pos, m->a[j].s, m->a[j].len))
            ok = 0;
        ql_iter_end(&it);
    }
    return ok;
}

static int same(struct quicklist *ql, const struct model *m)
{
    return same_audit(ql, m, 1);
}

/* A random element: small ints, big ints, short strings, sometimes long
 * ones (up to maxlong bytes). */
static size_t rand_elem(char *buf, size_t maxlong)
{
    int kind = rand() % 10;
    if (kind < 3)
        return (size_t)sprintf(buf, "%d", rand() % 300 - 50);
    if (kind < 4)
        return (size_t)sprintf(buf, "%lld", (long long)rand() * 1000003LL * (rand() % 2 ? 1 : -1));
    if (kind < 9 || maxlong < 100) {
        size_t n = (size_t)(rand() % 40);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)('a' + rand() % 4);
        return n;
    }
    size_t n = 100 + (size_t)rand() % (maxlong - 99);
    char c = (char)('A' + rand() % 26);
    for (size_t i = 0; i < n; i++)
        buf[i] = (i % 7) ? c : (char)('0' + rand() % 10);
    return n;
}

/* ------------------------------------------------------------ codec --- */
TEST(test_quicklist_lz_round_trip)
{
    static unsigned char in[70000], out[80000], back[70000];
    /* sizes 0..300 of varied data, then big ones */
    for (size_t n = 0; n < 70000; n = n < 300 ? n + 1 : n * 3) {
        for (int kind = 0; kind < 3; kind++) {
            for (size_t i = 0; i < n; i++)
                in[i] = kind == 0 ? (unsigned char)rand() : kind == 1 ? (unsigned char)('a' + (i % 13))
                                                                     : (unsigned char)(i / 50);
            size_t c = ql_lz_compress(in, n, out, sizeof(out));
            if (n == 0) {
                CHECK_EQ(c, 0);
                continue;
            }
            CHECK(c > 0);
            CHECK(ql_lz_decompress(out, c, back, n));
            CHECK_MEM(back, n, in, n);
            if (kind == 1 && n > 1000)
                CHECK(c < n / 10);
        }
    }
}

TEST(test_quicklist_lz_limits_and_corruption)
{
    unsigned char in[4096], out[8192], back[4096];
    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (unsigned char)rand();
    /* Random data does not fit in less than its size. */
    CHECK_EQ(ql_lz_compress(in, sizeof(in), out, sizeof(in) - 8), 0);
    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (unsigned char)("element:"[i % 8]);
    size_t c = ql_lz_compress(in, sizeof(in), out, sizeof(out));
    CHECK(c > 0 && c < 200);
    /* Wrong output length, truncated input, garbage: rejected, no overrun. */
    CHECK(!ql_lz_decompress(out, c, back, sizeof(back) - 1));
    CHECK(!ql_lz_decompress(out, c - 1, back, sizeof(back)));
    for (int t = 0; t < 2000; t++) {
        unsigned char junk[64];
        size_t jl = 1 + (size_t)rand() % sizeof(junk);
        for (size_t i = 0; i < jl; i++)
            junk[i] = (unsigned char)rand();
        (void)ql_lz_decompress(junk, jl, back, 1 + (size_t)rand() % sizeof(back));
    }
    CHECK(ql_lz_decompress(out, c, back, sizeof(back)));
    CHECK_MEM(back, sizeof(back), in, sizeof(in));
}

/* ----------------------------------------------------------- limits --- */
TEST(test_quicklist_node_limits)
{
    size_t sz, cnt;
    ql_node_limit(-2, &sz, &cnt);
    CHECK_EQ(sz, 8192);
    CHECK(cnt == SIZE_MAX);
    ql_node_limit(-1, &sz, &cnt);
    CHECK_EQ(sz, 4096);
    ql_node_limit(-5, &sz, &cnt);
    CHECK_EQ(sz, 65536);
    ql_node_limit(-100, &sz, &cnt);
    CHECK_EQ(sz, 65536);
    ql_node_limit(0, &sz, &cnt);
    CHECK_EQ(cnt, 1);
    CHECK(sz == SIZE_MAX);
    ql_node_limit(7, &sz, &cnt);
    CHECK_EQ(cnt, 7);
    CHECK(!ql_exceeds(-2, 8192, 100000));
    CHECK(ql_exceeds(-2, 8193, 1));
    CHECK(ql_exceeds(-6, 65537, 1));
    CHECK(!ql_exceeds(-6, 65536, 1));
    CHECK(!ql_exceeds(3, 100, 3));
    CHECK(ql_exceeds(3, 100, 4));
    CHECK(ql_exceeds(3, 8193, 1)); /* the safety limit of count fills */
    CHECK(ql_exceeds(0, 10, 2));
    CHECK(!ql_exceeds(0, 10, 1));
}

/* ------------------------------------------------------ basic shape --- */
TEST(test_quicklist_push_pop_nodes)
{
    struct quicklist *ql = ql_new(4, 0);
    char b[16];
    for (int i = 0; i < 10; i++) {
        int n = sprintf(b, "v%d", i);
        ql_push(ql, QL_TAIL, b, (size_t)n);
    }
    CHECK_EQ(ql->count, 10);
    CHECK_EQ(ql->len, 3); /* 4 + 4 + 2 */
    CHECK_EQ(ql->head->count, 4);
    CHECK_EQ(ql->tail->count, 2);
    ql_push(ql, QL_HEAD, "h", 1);
    CHECK_EQ(ql->len, 4);
    size_t pos;
    unsigned char *lp = ql_end(ql, QL_HEAD, &pos);
    CHECK(elem_is(lp, pos, "h", 1));
    lp = ql_end(ql, QL_TAIL, &pos);
    CHECK(elem_is(lp, pos, "v9", 2));
    ql_pop(ql, QL_HEAD);
    CHECK_EQ(ql->len, 3);
    for (int i = 0; i < 9; i++)
        ql_pop(ql, QL_TAIL);
    CHECK_EQ(ql->count, 1);
    CHECK_EQ(ql->len, 1);
    CHECK(ql_check(ql) == NULL);
    unsigned char *single = ql_take_single(ql);
    CHECK(single != NULL);
    CHECK_EQ(lp_count(single), 1);
    CHECK(elem_is(single, lp_first(single), "v0", 2));
    lp_free(single);
}

TEST(test_quicklist_byte_fill)
{
    struct quicklist *ql = ql_new(-1, 0);
    char v[100];
    memset(v, 'x', sizeof(v));
    for (int i = 0; i < 200; i++)
        ql_push(ql, QL_TAIL, v, sizeof(v));
    /* Every node within 4 KB. */
    for (struct ql_node *n = ql->head; n; n = n->next)
        CHECK(n->sz <= 4096);
    CHECK(ql->len >= 5);
    CHECK(ql_check(ql) == NULL);
    ql_free(ql);
}

TEST(test_quicklist_large_elements_get_plain_nodes)
{
    struct quicklist *ql = ql_new(-1, 0);
    char *big = malloc(5000);
    memset(big, 'B', 5000);
    ql_push(ql, QL_TAIL, "a", 1);
    ql_push(ql, QL_TAIL, big, 5000);
    ql_push(ql, QL_TAIL, "b", 1);
    CHECK_EQ(ql->len, 3);
    CHECK(ql->head->next->flags & QLN_PLAIN);
    CHECK(!(ql->tail->flags & QLN_PLAIN));
    /* Insert a large element in the middle of a node: split around it. */
    for (int i = 0; i < 5; i++)
        ql_push(ql, QL_HEAD, "x", 1);
    ql_insert_at(ql, 3, big, 5000);
    CHECK(ql_check(ql) == NULL);
    struct ql_iter it;
    CHECK(ql_iter_start(&it, ql, 3, 1));
    CHECK(elem_is(it.lp, it.pos, big, 5000));
    CHECK(it.node->flags & QLN_PLAIN);
    ql_iter_end(&it);
    /* Replace a plain element by a small one and back. */
    CHECK(ql_replace(ql, 3, "small", 5));
    CHECK(ql_iter_start(&it, ql, 3, 1));
    CHECK(elem_is(it.lp, it.pos, "small", 5));
    CHECK(!(it.node->flags & QLN_PLAIN));
    ql_iter_end(&it);
    CHECK(ql_replace(ql, -1, big, 5000));
    CHECK(ql->tail->flags & QLN_PLAIN);
    CHECK(ql_check(ql) == NULL);
    CHECK(ql_take_single(ql) == NULL);
    ql_free(ql);
    free(big);
}

TEST(test_quicklist_packed_threshold)
{
    struct quicklist *ql = ql_new(-2, 0);
    CHECK(!ql_set_packed_threshold(1ULL << 33));
    CHECK(ql_set_packed_threshold(10));
    ql_push(ql, QL_TAIL, "short", 5);
    ql_push(ql, QL_TAIL, "0123456789", 10);
    ql_push(ql, QL_TAIL, "short", 5);
    CHECK(ql_set_packed_threshold(0));
    CHECK_EQ(ql->len, 3);
    CHECK(ql->head->next->flags & QLN_PLAIN);
    ql_free(ql);
}

TEST(test_quicklist_split_and_merge)
{
    /* fill 4: [a b c d] full; inserting in the middle splits it. */
    struct quicklist *ql = ql_new(4, 0);
    const char *v[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        ql_push(ql, QL_TAIL, v[i], 1);
    ql_insert_at(ql, 2, "X", 1);
    CHECK_EQ(ql->count, 5);
    CHECK_EQ(ql->len, 2);
    CHECK(ql_check(ql) == NULL);
    struct ql_iter it;
    const char *want[] = {"a", "b", "X", "c", "d"};
    int i = 0;
    if (ql_iter_start(&it, ql, 0, 1)) {
        do {
            CHECK(elem_is(it.lp, it.pos, want[i], 1));
            i++;
        } while (ql_iter_next(&it));
    }
    ql_iter_end(&it);
    CHECK_EQ(i, 5);
    /* Small neighbours created by splits merge back when they fit. */
    struct quicklist *q2 = ql_new(10, 0);
    for (int k = 0; k < 10; k++)
        ql_push(q2, QL_TAIL, "e", 1);
    for (int k = 0; k < 30; k++)
        ql_insert_at(q2, (size_t)(rand() % (int)(q2->count + 1)), "m", 1);
    CHECK(ql_check(q2) == NULL);
    CHECK_EQ(q2->count, 40);
    CHECK(q2->len <= 8);
    ql_free(q2);
    ql_free(ql);
}

TEST(test_quicklist_compression_window)
{
    struct quicklist *ql = ql_new(-1, 1);
    char b[64];
    for (int i = 0; i < 5000; i++) {
        int n = sprintf(b, "element:%d", i);
        ql_push(ql, QL_TAIL, b, (size_t)n);
    }
    CHECK(ql_check(ql) == NULL);
    CHECK(!(ql->head->flags & QLN_LZ));
    CHECK(!(ql->tail->flags & QLN_LZ));
    size_t compressed = 0;
    for (struct ql_node *n = ql->head->next; n != ql->tail; n = n->next)
        compressed += (n->flags & QLN_LZ) != 0;
    CHECK_EQ(compressed, ql->len - 2);
    /* Compressed much smaller than raw. */
    struct quicklist *raw = ql_new(-1, 0);
    for (int i = 0; i < 5000; i++) {
        int n = sprintf(b, "element:%d", i);
        ql_push(raw, QL_TAIL, b, (size_t)n);
    }
    CHECK(ql_mem(ql) * 2 < ql_mem(raw));
    /* Dup keeps the images; popping everything keeps the window sound. */
    struct quicklist *d = ql_dup(ql);
    CHECK(ql_check(d) == NULL);
    CHECK_EQ(d->count, 5000);
    for (int i = 0; i < 4990; i++) {
        ql_pop(d, i % 2 ? QL_HEAD : QL_TAIL);
        if (i % 97 == 0)
            CHECK(ql_check(d) == NULL);
    }
    CHECK(ql_check(d) == NULL);
    ql_free(d);
    ql_free(raw);
    ql_free(ql);
}

/* ----------------------------------------------------------- random --- */
struct rcfg {
    int fill, depth, steps;
    size_t maxlong;
};

static void random_ops(void *arg)
{
    const struct rcfg *cfg = arg;
    struct quicklist *ql = ql_new(cfg->fill, cfg->depth);
    struct model m = {0};
    char *buf = malloc(cfg->maxlong + 64);
    struct ql_iter it;

    for (int step = 0; step < cfg->steps; step++) {
        int op = rand() % 100;
        size_t len = rand_elem(buf, cfg->maxlong);
        if (op < 25) {
            int where = rand() % 2;
            ql_push(ql, where, buf, len);
            m_insert(&m, where == QL_HEAD ? 0 : m.n, buf, len);
        } else if (op < 38) {
            if (m.n) {
                int where = rand() % 2;
                size_t pos;
                unsigned char *lp = ql_end(ql, where, &pos);
                size_t mi = where == QL_HEAD ? 0 : m.n - 1;
                CHECK(lp && elem_is(lp, pos, m.a[mi].s, m.a[mi].len));
                ql_pop(ql, where);
                m_delete(&m, mi, 1);
            }
        } else if (op < 46) {
            if (m.n) {
                size_t s = (size_t)rand() % m.n, k = 1 + (size_t)rand() % 20;
                ql_del_range(ql, s, k);
                m_delete(&m, s, k > m.n - s ? m.n - s : k);
            }
        } else if (op < 58) {
            if (m.n) {
                size_t i = (size_t)rand() % m.n;
                CHECK(ql_replace(ql, rand() % 2 ? (long long)i : (long long)i - (long long)m.n, buf, len));
                m_delete(&m, i, 1);
                m_insert(&m, i, buf, len);
            } else {
                CHECK(!ql_replace(ql, 0, buf, len));
            }
        } else if (op < 70) {
            size_t i = (size_t)rand() % (m.n + 1);
            ql_insert_at(ql, i, buf, len);
            m_insert(&m, i, buf, len);
        } else if (op < 82) {
            /* LINSERT-like: iterate to a random element, insert next to it. */
            if (m.n) {
                size_t i = (size_t)rand() % m.n;
                int after = rand() % 2, fwd = rand() % 2;
                CHECK(ql_iter_start(&it, ql, fwd ? 0 : -1, fwd));
                for (size_t k = 0; k < (fwd ? i : m.n - 1 - i); k++)
                    ql_iter_next(&it);
                CHECK(elem_is(it.lp, it.pos, m.a[i].s, m.a[i].len));
                ql_iter_insert(&it, after, buf, len);
                ql_iter_end(&it);
                m_insert(&m, after ? i + 1 : i, buf, len);
            }
        } else if (op < 92) {
            /* LREM-like: delete matching elements while iterating. */
            if (m.n) {
                size_t target = (size_t)rand() % m.n;
                char *t = malloc(m.a[target].len + 1);
                size_t tl = m.a[target].len;
                memcpy(t, m.a[target].s, tl);
                int fwd = rand() % 2;
                size_t limit = (size_t)rand() % 3, removed = 0;
                if (ql_iter_start(&it, ql, fwd ? 0 : -1, fwd)) {
                    int more = 1;
                    while (more) {
                        if (elem_is(it.lp, it.pos, t, tl)) {
                            more = ql_iter_del(&it);
                            removed++;
                            if (limit && removed == limit)
                                break;
                        } else {
                            more = ql_iter_next(&it);
                        }
                    }
                }
                ql_iter_end(&it);
                size_t r2 = 0;
                if (fwd) {
                    for (size_t k = 0; k < m.n && (!limit || r2 < limit);) {
                        if (m.a[k].len == tl && memcmp(m.a[k].s, t, tl) == 0) {
                            m_delete(&m, k, 1);
                            r2++;
                        } else {
                            k++;
                        }
                    }
                } else {
                    for (size_t k = m.n; k-- > 0 && (!limit || r2 < limit);) {
                        if (m.a[k].len == tl && memcmp(m.a[k].s, t, tl) == 0) {
                            m_delete(&m, k, 1);
                            r2++;
                        }
                    }
                }
                CHECK_EQ(removed, r2);
                free(t);
            }
        } else if (op < 96) {
            struct quicklist *d = ql_dup(ql);
            CHECK(same(d, &m));
            ql_free(d);
        } else {
            /* Bulk growth now and then so lists get many nodes. */
            for (int k = 0; k < 50; k++) {
                size_t l = rand_elem(buf, 60);
                ql_push(ql, QL_TAIL, buf, l);
                m_insert(&m, m.n, buf, l);
            }
        }
        if (!same_audit(ql, &m, step % 3 == 0 || m.n < 64)) {
            test_fail(__FILE__, __LINE__, "fill %d depth %d: mismatch after step %d (op %d)", cfg->fill,
                      cfg->depth, step, op);
            break;
        }
        if (test_current_failures())
            break;
    }
    ql_free(ql);
    m_free(&m);
    free(buf);
}

TEST(test_quicklist_random_against_model)
{
    static const struct rcfg cfgs[] = {
        {-2, 0, 2000, 9000}, {-1, 0, 2000, 5000}, {1, 0, 1200, 200}, {2, 0, 1500, 9000},
        {5, 0, 2000, 300},   {128, 0, 1500, 9000}, {-2, 1, 2000, 9000}, {3, 1, 2000, 300},
        {4, 2, 2000, 9000},  {-1, 3, 1500, 5000}, {0, 1, 1000, 100},  {-5, 2, 1000, 70000},
    };
    srand(12345);
    for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
        char why[128];
        struct rcfg cfg = cfgs[i];
        cfg.steps = TEST_SCALE(cfg.steps);
        if (test_run_guarded(random_ops, &cfg, 120, 2048, why, sizeof(why)))
            test_fail(__FILE__, __LINE__, "config %zu (fill %d depth %d): %s", i, cfgs[i].fill, cfgs[i].depth,
                      why);
    }
}
