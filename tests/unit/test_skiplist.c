/* test_skiplist.c - the sorted-set skiplist: order by score then member,
 * ranks and rank lookups (spans) after random inserts/deletes/updates,
 * checked against a sorted array; range queries with exclusive bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/skiplist.h"
#include "test.h"

struct el {
    double s;
    char m[16];
};

static int elcmp(const void *a, const void *b)
{
    const struct el *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return strcmp(x->m, y->m);
}

TEST(test_skiplist_order_and_ties)
{
    struct zsl *z = zsl_new();
    zsl_insert(z, 2, "b", 1);
    zsl_insert(z, 1, "z", 1);
    zsl_insert(z, 2, "a", 1);
    zsl_insert(z, 2, "ab", 2);
    const char *want[] = {"z", "a", "ab", "b"};
    int i = 0;
    for (struct zsl_node *n = z->head->level[0].fwd; n; n = n->level[0].fwd, i++)
        CHECK_STR(zsl_member(n), n->mlen, want[i]);
    CHECK_EQ(i, 4);
    CHECK_STR(zsl_member(z->tail), z->tail->mlen, "b");
    CHECK_STR(zsl_member(z->tail->back), z->tail->back->mlen, "ab");
    CHECK_EQ(zsl_rank(z, 2, "ab", 2), 3);
    CHECK_EQ(zsl_rank(z, 2, "zz", 2), 0);
    zsl_free(z);
}

TEST(test_skiplist_random_against_sorted_array)
{
    enum { N = 2000 };
    static struct el ref[N];
    size_t n = 0;
    struct zsl *z = zsl_new();
    unsigned s = 99;
    for (int round = 0; round < 30000; round++) {
        s = s * 1103515245 + 12345;
        struct el e;
        snprintf(e.m, sizeof(e.m), "m%u", (s >> 8) % 3000);
        e.s = (double)((s >> 3) % 50);
        size_t at = n;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(ref[i].m, e.m))
                at = i;
        unsigned op = (s >> 20) % 3;
        if (op == 0 && at == n && n < N) {
            zsl_insert(z, e.s, e.m, strlen(e.m));
            ref[n++] = e;
        } else if (op == 1 && at < n) {
            CHECK_EQ(zsl_delete(z, ref[at].s, ref[at].m, strlen(ref[at].m)), 1);
            ref[at] = ref[--n];
        } else if (at < n) {
            struct zsl_node *x = zsl_update_score(z, ref[at].s, ref[at].m, strlen(ref[at].m), e.s);
            CHECK(x != NULL && x->score == e.s);
            ref[at].s = e.s;
        }
    }
    qsort(ref, n, sizeof(ref[0]), elcmp);
    CHECK_EQ(z->length, n);
    for (size_t i = 0; i < n; i += 7) {
        struct zsl_node *x = zsl_by_rank(z, i + 1);
        CHECK(x != NULL);
        CHECK_STR(zsl_member(x), x->mlen, ref[i].m);
        CHECK_EQ(zsl_rank(z, ref[i].s, ref[i].m, strlen(ref[i].m)), i + 1);
    }
    CHECK(zsl_by_rank(z, n + 1) == NULL);
    /* Backward links agree with the forward order. */
    size_t k = n;
    for (struct zsl_node *x = z->tail; x && k > 0; x = x->back) {
        k--; /* CHECK_STR evaluates its arguments more than once */
        CHECK_STR(zsl_member(x), x->mlen, ref[k].m);
    }
    CHECK_EQ(k, 0);
    zsl_free(z);
}

TEST(test_skiplist_ranges)
{
    struct zsl *z = zsl_new();
    char m[8];
    for (int i = 0; i < 10; i++) {
        snprintf(m, sizeof(m), "e%d", i);
        zsl_insert(z, i, m, strlen(m));
    }
    struct zsl_range r = {3, 6, 0, 0};
    CHECK_EQ(zsl_first_in_range(z, &r, NULL)->score, 3);
    CHECK_EQ(zsl_last_in_range(z, &r, NULL)->score, 6);
    r.min_ex = r.max_ex = 1;
    CHECK_EQ(zsl_first_in_range(z, &r, NULL)->score, 4);
    CHECK_EQ(zsl_last_in_range(z, &r, NULL)->score, 5);
    struct zsl_range none = {6.5, 6.9, 0, 0};
    CHECK(zsl_first_in_range(z, &none, NULL) == NULL);
    CHECK(zsl_last_in_range(z, &none, NULL) == NULL);
    struct zsl_range below = {-5, -1, 0, 0};
    CHECK(zsl_last_in_range(z, &below, NULL) == NULL);
    zsl_free(z);
}

TEST(test_skiplist_range_ranks_and_lex)
{
    struct zsl *z = zsl_new();
    const char *names[] = {"alpha", "bar", "cool", "down", "elephant", "foo"};
    for (int i = 0; i < 6; i++)
        zsl_insert(z, 0, names[i], strlen(names[i]));
    unsigned long rk = 0;
    struct zsl_lex lx = {{"bar", 3, ZLEX_STR, 0}, {"down", 4, ZLEX_STR, 1}};
    struct zsl_node *n = zsl_first_in_lex(z, &lx, &rk);
    CHECK(n != NULL);
    CHECK_STR(zsl_member(n), n->mlen, "bar");
    CHECK_EQ(rk, 2);
    n = zsl_last_in_lex(z, &lx, &rk);
    CHECK_STR(zsl_member(n), n->mlen, "cool");
    CHECK_EQ(rk, 3);
    struct zsl_lex all = {{NULL, 0, ZLEX_NEG, 0}, {NULL, 0, ZLEX_POS, 0}};
    CHECK_EQ(zsl_first_in_lex(z, &all, &rk) == z->head->level[0].fwd, 1);
    CHECK_EQ(rk, 1);
    CHECK(zsl_last_in_lex(z, &all, &rk) == z->tail);
    CHECK_EQ(rk, 6);
    struct zsl_lex empty = {{"d", 1, ZLEX_STR, 0}, {"c", 1, ZLEX_STR, 0}};
    CHECK(zsl_lex_empty(&empty));
    CHECK(zsl_first_in_lex(z, &empty, NULL) == NULL);
    struct zsl_lex plus = {{NULL, 0, ZLEX_POS, 0}, {NULL, 0, ZLEX_POS, 0}};
    CHECK(zsl_first_in_lex(z, &plus, NULL) == NULL);
    struct zsl_lex ex = {{"a", 1, ZLEX_STR, 1}, {"alpha", 5, ZLEX_STR, 1}};
    CHECK(zsl_first_in_lex(z, &ex, NULL) == NULL);
    zsl_free(z);

    z = zsl_new();
    for (int i = 0; i < 100; i++) {
        char m[8];
        snprintf(m, sizeof(m), "m%03d", i);
        zsl_insert(z, i / 2, m, strlen(m));
    }
    struct zsl_range r = {10, 20, 1, 0};
    n = zsl_first_in_range(z, &r, &rk);
    CHECK_EQ(n->score, 11);
    CHECK_EQ(rk, 23);
    n = zsl_last_in_range(z, &r, &rk);
    CHECK_EQ(n->score, 20);
    CHECK_EQ(rk, 42);
    struct zsl_range bad = {5, 5, 1, 0};
    CHECK(zsl_range_empty(&bad));
    CHECK(zsl_first_in_range(z, &bad, NULL) == NULL);
    zsl_free(z);
}

static void count_cb(void *arg, struct zsl_node *n)
{
    (void)n;
    (*(int *)arg)++;
}

TEST(test_skiplist_delete_range_and_update_in_place)
{
    struct zsl *z = zsl_new();
    for (int i = 0; i < 50; i++) {
        char m[8];
        snprintf(m, sizeof(m), "m%02d", i);
        zsl_insert(z, i, m, strlen(m));
    }
    int seen = 0;
    CHECK_EQ(zsl_delete_range_by_rank(z, 11, 20, count_cb, &seen), 10);
    CHECK_EQ(seen, 10);
    CHECK_EQ(z->length, 40);
    CHECK_EQ(zsl_by_rank(z, 11)->score, 20);
    CHECK_EQ(zsl_rank(z, 49, "m49", 3), 40);
    CHECK_EQ(zsl_delete_range_by_rank(z, 39, 100, NULL, NULL), 2);
    CHECK_EQ(z->tail->score, 47);
    /* A score change returns the very same node, relinked. */
    struct zsl_node *n = zsl_by_rank(z, 1);
    struct zsl_node *u = zsl_update_score(z, 0, "m00", 3, 1000);
    CHECK(n == u);
    CHECK(z->tail == u);
    CHECK_EQ(zsl_rank(z, 1000, "m00", 3), z->length);
    u = zsl_update_score(z, 1000, "m00", 3, 999);
    CHECK(u == n && z->tail == u && u->score == 999);
    CHECK(zsl_update_score(z, 5, "nope", 4, 1) == NULL);
    size_t before = z->bytes;
    CHECK_EQ(zsl_delete(z, 999, "m00", 3), 1);
    CHECK(z->bytes < before);
    CHECK_EQ(zsl_delete(z, 999, "m00", 3), 0);
    /* Everything gone: the list is consistent and reusable. */
    CHECK_EQ(zsl_delete_range_by_rank(z, 1, z->length, NULL, NULL), 37);
    CHECK(z->tail == NULL && z->length == 0 && z->level == 1);
    zsl_insert(z, 1, "x", 1);
    CHECK_EQ(zsl_rank(z, 1, "x", 1), 1);
    zsl_free(z);
}
