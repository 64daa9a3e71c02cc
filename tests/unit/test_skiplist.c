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
        CHECK_STR(n->member, n->mlen, want[i]);
    CHECK_EQ(i, 4);
    CHECK_STR(z->tail->member, z->tail->mlen, "b");
    CHECK_STR(z->tail->back->member, z->tail->back->mlen, "ab");
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
        CHECK_STR(x->member, x->mlen, ref[i].m);
        CHECK_EQ(zsl_rank(z, ref[i].s, ref[i].m, strlen(ref[i].m)), i + 1);
    }
    CHECK(zsl_by_rank(z, n + 1) == NULL);
    /* Backward links agree with the forward order. */
    size_t k = n;
    for (struct zsl_node *x = z->tail; x && k > 0; x = x->back) {
        k--; /* CHECK_STR evaluates its arguments more than once */
        CHECK_STR(x->member, x->mlen, ref[k].m);
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
    CHECK_EQ(zsl_first_in_range(z, &r)->score, 3);
    CHECK_EQ(zsl_last_in_range(z, &r)->score, 6);
    r.min_ex = r.max_ex = 1;
    CHECK_EQ(zsl_first_in_range(z, &r)->score, 4);
    CHECK_EQ(zsl_last_in_range(z, &r)->score, 5);
    struct zsl_range none = {6.5, 6.9, 0, 0};
    CHECK(zsl_first_in_range(z, &none) == NULL);
    CHECK(zsl_last_in_range(z, &none) == NULL);
    struct zsl_range below = {-5, -1, 0, 0};
    CHECK(zsl_last_in_range(z, &below) == NULL);
    zsl_free(z);
}
