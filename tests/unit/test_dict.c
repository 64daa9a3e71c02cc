/* test_dict.c - unit tests for the chained hash table (src/ds/dict.c):
 * add/find/remove against a presence model under random operations,
 * growth and shrink of the bucket array, iteration, dict_random coverage,
 * dict_replace, and the SCAN guarantee (every element present for the
 * whole iteration is returned at least once, nothing is returned that was
 * never there) when the table grows or shrinks between dict_scan calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "ds/dict.h"
#include "test.h"

struct item {
    struct dict_link link;
    unsigned id;
    size_t len;
    char key[24];
};

static const char *item_key(const struct dict_link *it, size_t *len)
{
    const struct item *x = (const struct item *)it;
    *len = x->len;
    return x->key;
}

static const struct dict_type item_type = {item_key};

static struct item *item_new(unsigned id)
{
    struct item *x = hk_malloc(sizeof(*x));
    x->id = id;
    x->len = (size_t)snprintf(x->key, sizeof(x->key), "member:%u", id);
    return x;
}

static void item_free(struct dict_link *l)
{
    hk_free(l);
}

static size_t key_of(char *buf, unsigned id)
{
    return (size_t)snprintf(buf, 24, "member:%u", id);
}

static struct item *find_id(const struct dict *d, unsigned id)
{
    char k[24];
    size_t n = key_of(k, id);
    return (struct item *)dict_find(d, k, n);
}

static int remove_id(struct dict *d, unsigned id)
{
    char k[24];
    size_t n = key_of(k, id);
    struct dict_link *l = dict_remove(d, k, n);
    if (!l)
        return 0;
    if (((struct item *)l)->id != id)
        test_fail(__FILE__, __LINE__, "dict_remove(%u) returned item %u", id, ((struct item *)l)->id);
    item_free(l);
    return 1;
}

static size_t buckets(const struct dict *d)
{
    return (size_t)d->mask + 1;
}

/* Elements counted by walking every chain. */
static size_t chain_total(const struct dict *d)
{
    size_t n = 0;
    for (size_t b = 0; b < buckets(d); b++)
        for (struct dict_link *l = d->b[b]; l; l = l->next)
            n++;
    return n;
}

TEST(test_dict_add_find_remove)
{
    struct dict *d = dict_new(&item_type, 0);
    CHECK_EQ(dict_size(d), 0);
    CHECK(dict_random(d) == NULL);
    for (unsigned i = 0; i < 1000; i++)
        dict_add(d, &item_new(i)->link);
    CHECK_EQ(dict_size(d), 1000);
    CHECK_EQ(chain_total(d), 1000);
    for (unsigned i = 0; i < 1000; i++) {
        struct item *x = find_id(d, i);
        CHECK(x != NULL && x->id == i);
    }
    CHECK(find_id(d, 1000) == NULL);
    CHECK(dict_find(d, "member:1", 7) == NULL); /* prefix of a key */
    CHECK(dict_find(d, "", 0) == NULL);
    for (unsigned i = 0; i < 1000; i += 2)
        CHECK(remove_id(d, i));
    CHECK(!remove_id(d, 0));
    CHECK_EQ(dict_size(d), 500);
    for (unsigned i = 0; i < 1000; i++)
        CHECK((find_id(d, i) != NULL) == (i % 2 == 1));
    dict_free(d, item_free);
}

TEST(test_dict_growth_and_shrink)
{
    struct dict *d = dict_new(&item_type, 0);
    size_t b0 = buckets(d);
    CHECK(b0 >= 1 && (b0 & (b0 - 1)) == 0);
    enum { N = 100000 };
    for (unsigned i = 0; i < N; i++) {
        dict_add(d, &item_new(i)->link);
        /* Load factor stays at or under 1 after every add. */
        if (dict_size(d) > buckets(d)) {
            test_fail(__FILE__, __LINE__, "%zu elements in %zu buckets", dict_size(d), buckets(d));
            break;
        }
    }
    CHECK(buckets(d) >= N && buckets(d) <= 2 * (size_t)N);
    CHECK(dict_mem(d) >= buckets(d) * sizeof(void *));
    size_t big = buckets(d);
    for (unsigned i = 0; i < N - 10; i++)
        CHECK(remove_id(d, i));
    CHECK_EQ(dict_size(d), 10);
    CHECK(buckets(d) < big / 100);
    /* Shrinking keeps the table at most 8x sparser than its contents. */
    CHECK(buckets(d) <= 8 * 10 * 2);
    CHECK_EQ(chain_total(d), 10);
    for (unsigned i = N - 10; i < N; i++)
        CHECK(find_id(d, i) != NULL);
    for (unsigned i = N - 10; i < N; i++)
        CHECK(remove_id(d, i));
    CHECK_EQ(dict_size(d), 0);
    CHECK(buckets(d) <= 8);
    dict_free(d, item_free);

    /* dict_expand pre-sizes and never shrinks. */
    d = dict_new(&item_type, 1000);
    CHECK(buckets(d) >= 1000);
    size_t b = buckets(d);
    dict_expand(d, 10);
    CHECK_EQ(buckets(d), b);
    dict_expand(d, 5000);
    CHECK(buckets(d) >= 5000);
    dict_free(d, NULL);
}

TEST(test_dict_random_ops_against_model)
{
    enum { IDS = 3000, OPS = 200000 };
    unsigned char *present = hk_calloc(IDS);
    struct dict *d = dict_new(&item_type, 0);
    size_t n = 0;
    srand(12345);
    for (unsigned op = 0; op < OPS; op++) {
        unsigned id = (unsigned)rand() % IDS;
        int r = rand() % 10;
        if (r < 5) {
            if (!present[id]) {
                dict_add(d, &item_new(id)->link);
                present[id] = 1;
                n++;
            }
        } else if (r < 9) {
            int got = remove_id(d, id);
            if (got != present[id])
                test_fail(__FILE__, __LINE__, "remove(%u) = %d, model says %d", id, got, present[id]);
            if (got) {
                present[id] = 0;
                n--;
            }
        } else {
            struct item *x = find_id(d, id);
            if ((x != NULL) != present[id])
                test_fail(__FILE__, __LINE__, "find(%u) disagrees with the model", id);
        }
        if (dict_size(d) != n) {
            test_fail(__FILE__, __LINE__, "size %zu, model %zu", dict_size(d), n);
            break;
        }
        if (op % 20000 == 0 && chain_total(d) != n)
            test_fail(__FILE__, __LINE__, "chains hold %zu, model %zu", chain_total(d), n);
        if (test_current_failures() > 5)
            break;
    }
    /* Full iteration returns exactly the model's elements, once each. */
    unsigned char *seen = hk_calloc(IDS);
    struct dict_iter it = {0, NULL};
    struct dict_link *l;
    size_t count = 0;
    while ((l = dict_next(d, &it)) != NULL) {
        unsigned id = ((struct item *)l)->id;
        CHECK(present[id]);
        CHECK(!seen[id]);
        seen[id] = 1;
        count++;
    }
    CHECK_EQ(count, n);
    hk_free(seen);
    hk_free(present);
    dict_free(d, item_free);
}

TEST(test_dict_random_reaches_every_element)
{
    struct dict *d = dict_new(&item_type, 0);
    enum { N = 50 };
    unsigned hits[N] = {0};
    for (unsigned i = 0; i < N; i++)
        dict_add(d, &item_new(i)->link);
    for (int k = 0; k < 20000; k++) {
        struct item *x = (struct item *)dict_random(d);
        CHECK(x != NULL);
        if (x)
            hits[x->id]++;
    }
    for (unsigned i = 0; i < N; i++) {
        /* 400 expected each: a generous band still catches a dead element
         * or a bucket never chosen. */
        if (hits[i] < 100 || hits[i] > 1200)
            test_fail(__FILE__, __LINE__, "element %u drawn %u times of 20000", i, hits[i]);
    }
    dict_free(d, item_free);
}

TEST(test_dict_replace_keeps_chain)
{
    struct dict *d = dict_new(&item_type, 0);
    for (unsigned i = 0; i < 100; i++)
        dict_add(d, &item_new(i)->link);
    struct item *old = find_id(d, 42);
    struct item *nw = hk_malloc(sizeof(*nw));
    memcpy(nw, old, sizeof(*nw));
    nw->id = 4242;
    dict_replace(d, &old->link, &nw->link);
    hk_free(old);
    struct item *x = find_id(d, 42);
    CHECK(x == nw);
    CHECK_EQ(dict_size(d), 100);
    CHECK_EQ(chain_total(d), 100);
    for (unsigned i = 0; i < 100; i++)
        CHECK(find_id(d, i) != NULL);
    dict_free(d, item_free);
}

/* ---- SCAN ---- */
struct scan_seen {
    unsigned *count;
    unsigned ids;
    int bad;
};

static void scan_cb(void *arg, const struct dict_link *l)
{
    struct scan_seen *s = arg;
    unsigned id = ((const struct item *)l)->id;
    if (id >= s->ids)
        s->bad = 1;
    else
        s->count[id]++;
}

/* Scan d to the end; between calls, mutate(step) may add/remove elements
 * (which resizes the table). */
static void scan_with(struct dict *d, struct scan_seen *s, void (*mutate)(struct dict *, unsigned), unsigned *calls)
{
    uint64_t cur = 0;
    unsigned step = 0;
    do {
        cur = dict_scan(d, cur, scan_cb, s);
        if (mutate)
            mutate(d, step);
        step++;
    } while (cur != 0 && step < 10000000);
    *calls = step;
}

TEST(test_dict_scan_plain_visits_each_once)
{
    enum { N = 5000 };
    unsigned *cnt = hk_calloc(N * sizeof(unsigned));
    struct scan_seen s = {cnt, N, 0};
    struct dict *d = dict_new(&item_type, 0);
    unsigned calls;
    for (unsigned i = 0; i < N; i++)
        dict_add(d, &item_new(i)->link);
    scan_with(d, &s, NULL, &calls);
    CHECK(!s.bad);
    for (unsigned i = 0; i < N; i++)
        if (cnt[i] != 1) {
            test_fail(__FILE__, __LINE__, "element %u returned %u times", i, cnt[i]);
            break;
        }
    /* One call per bucket. */
    CHECK_EQ(calls, buckets(d));
    /* An empty table: one call per bucket, nothing returned. */
    struct dict *e = dict_new(&item_type, 0);
    memset(cnt, 0, N * sizeof(unsigned));
    scan_with(e, &s, NULL, &calls);
    CHECK_EQ(calls, buckets(e));
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ(cnt[i], 0);
    dict_free(e, NULL);
    hk_free(cnt);
    dict_free(d, item_free);
}

/* Elements 0..STABLE-1 stay for the whole scan; ids from STABLE up come
 * and go to force growth and shrink at chosen moments. */
enum { STABLE = 2000, EXTRA = 60000 };

static void grow_mid_scan(struct dict *d, unsigned step)
{
    /* After a few calls, quadruple the table (two doublings at least). */
    if (step == 5)
        for (unsigned i = STABLE; i < STABLE + 3 * STABLE; i++)
            dict_add(d, &item_new(i)->link);
    if (step == 200)
        for (unsigned i = STABLE + 3 * STABLE; i < STABLE + 20 * STABLE && i < STABLE + EXTRA; i++)
            dict_add(d, &item_new(i)->link);
}

static void shrink_mid_scan(struct dict *d, unsigned step)
{
    /* Starts big (extras present), drops them in two waves. */
    if (step == 7)
        for (unsigned i = STABLE + EXTRA / 2; i < STABLE + EXTRA; i++)
            remove_id(d, i);
    if (step == 300)
        for (unsigned i = STABLE; i < STABLE + EXTRA / 2; i++)
            remove_id(d, i);
}

static void churn_mid_scan(struct dict *d, unsigned step)
{
    /* Alternate growth and shrink every few calls. */
    if (step % 8 == 3)
        for (unsigned i = STABLE; i < STABLE + 8000; i++)
            dict_add(d, &item_new(i)->link);
    if (step % 8 == 7)
        for (unsigned i = STABLE; i < STABLE + 8000; i++)
            remove_id(d, i);
}

static void check_scan_guarantee(void (*mutate)(struct dict *, unsigned), unsigned preload)
{
    unsigned *cnt = hk_calloc((STABLE + EXTRA) * sizeof(unsigned));
    struct scan_seen s = {cnt, STABLE + EXTRA, 0};
    struct dict *d = dict_new(&item_type, 0);
    unsigned calls;
    for (unsigned i = 0; i < STABLE + preload; i++)
        dict_add(d, &item_new(i)->link);
    scan_with(d, &s, mutate, &calls);
    CHECK(!s.bad);
    unsigned missed = 0;
    for (unsigned i = 0; i < STABLE; i++)
        if (cnt[i] == 0)
            missed++;
    if (missed)
        test_fail(__FILE__, __LINE__, "%u of %u stable elements never returned (%u calls)", missed, STABLE, calls);
    dict_free(d, item_free);
    hk_free(cnt);
}

TEST(test_dict_scan_guarantee_across_growth)
{
    check_scan_guarantee(grow_mid_scan, 0);
}

TEST(test_dict_scan_guarantee_across_shrink)
{
    check_scan_guarantee(shrink_mid_scan, EXTRA);
}

TEST(test_dict_scan_guarantee_across_churn)
{
    check_scan_guarantee(churn_mid_scan, 0);
}

TEST(test_dict_scan_random_resizes)
{
    /* Many rounds: random table sizes at random moments. */
    srand(777);
    for (int round = 0; round < TEST_SCALE(30); round++) {
        enum { S = 300, X = 5000 };
        unsigned *cnt = hk_calloc((S + X) * sizeof(unsigned));
        unsigned char *in = hk_calloc(X);
        struct scan_seen s = {cnt, S + X, 0};
        struct dict *d = dict_new(&item_type, 0);
        for (unsigned i = 0; i < S; i++)
            dict_add(d, &item_new(i)->link);
        uint64_t cur = 0;
        unsigned steps = 0;
        do {
            cur = dict_scan(d, cur, scan_cb, &s);
            if (rand() % 3 == 0) {
                /* Flip a random batch of the extras in or out. */
                unsigned from = (unsigned)rand() % X, n = (unsigned)rand() % 2000;
                int add = rand() % 2;
                for (unsigned i = from; i < from + n && i < X; i++) {
                    if (add && !in[i]) {
                        dict_add(d, &item_new(S + i)->link);
                        in[i] = 1;
                    } else if (!add && in[i]) {
                        remove_id(d, S + i);
                        in[i] = 0;
                    }
                }
            }
        } while (cur != 0 && ++steps < 1000000);
        CHECK(!s.bad);
        for (unsigned i = 0; i < S; i++)
            if (!cnt[i]) {
                test_fail(__FILE__, __LINE__, "round %d: stable element %u missed", round, i);
                break;
            }
        dict_free(d, item_free);
        hk_free(cnt);
        hk_free(in);
        if (test_current_failures())
            break;
    }
}

/* Chi-square statistic of draws over n equally likely elements. */
static double chi_square(const unsigned *hits, unsigned n, unsigned draws)
{
    double e = (double)draws / n, x = 0;
    for (unsigned i = 0; i < n; i++)
        x += ((double)hits[i] - e) * ((double)hits[i] - e) / e;
    return x;
}

TEST(test_dict_random_is_uniform)
{
    /* Small table (chains of 2 and 3 are common at 10 elements in 16
     * buckets): must be uniform, as SRANDMEMBER's histogram test asks. */
    for (unsigned n = 2; n <= 40; n += 19) {
        struct dict *d = dict_new(&item_type, 0);
        unsigned *hits = hk_calloc(n * sizeof(unsigned));
        for (unsigned i = 0; i < n; i++)
            dict_add(d, &item_new(i)->link);
        unsigned draws = 1000 * n;
        for (unsigned k = 0; k < draws; k++)
            hits[((struct item *)dict_random(d))->id]++;
        double x = chi_square(hits, n, draws);
        /* df = n-1 <= 39: 80 is beyond the 0.9999 quantile. */
        if (x > 80)
            test_fail(__FILE__, __LINE__, "n=%u: chi-square %.1f", n, x);
        hk_free(hits);
        dict_free(d, item_free);
    }
    /* Big table: within a few standard deviations of df. */
    enum { N = 2000 };
    struct dict *d = dict_new(&item_type, 0);
    unsigned *hits = hk_calloc(N * sizeof(unsigned));
    for (unsigned i = 0; i < N; i++)
        dict_add(d, &item_new(i)->link);
    unsigned draws = 200 * N;
    for (unsigned k = 0; k < draws; k++)
        hits[((struct item *)dict_random(d))->id]++;
    double x = chi_square(hits, N, draws);
    /* df = 1999, sd ~ 63: 2400 is > 6 sd. */
    if (x > 2400)
        test_fail(__FILE__, __LINE__, "n=%u: chi-square %.1f", N, x);
    printf("    chi-square %.1f for %u elements\n", x, N);
    hk_free(hits);
    dict_free(d, item_free);
}

/* Presizing from a hint: powers of two, a floor of 4, and a cap that holds
 * for any hint (counts read from files reach this function: 2^63 and more
 * used to wrap the doubling to 0 and spin forever). */
TEST(test_dict_buckets_for_bounds)
{
    CHECK_EQ(dict_buckets_for(0), 4);
    CHECK_EQ(dict_buckets_for(1), 4);
    CHECK_EQ(dict_buckets_for(4), 4);
    CHECK_EQ(dict_buckets_for(5), 8);
    CHECK_EQ(dict_buckets_for(1000), 1024);
    CHECK_EQ(dict_buckets_for(1024), 1024);
    CHECK_EQ(dict_buckets_for(1025), 2048);
    CHECK_EQ(dict_buckets_for((size_t)DICT_MAX_PRESIZE - 1), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for((size_t)DICT_MAX_PRESIZE), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for((size_t)DICT_MAX_PRESIZE + 1), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for((size_t)1 << 40), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for((size_t)1 << 62), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for((size_t)1 << 63), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for(((size_t)1 << 63) + 1), DICT_MAX_PRESIZE);
    CHECK_EQ(dict_buckets_for(SIZE_MAX), DICT_MAX_PRESIZE);
    for (unsigned k = 2; k < 26; k++) {
        uint64_t b = dict_buckets_for(((size_t)1 << k) + 1);
        CHECK_EQ(b, (uint64_t)1 << (k + 1));
    }
}

/* A table created with an absurd hint gets the capped size (allocated,
 * not touched) and works. */
TEST(test_dict_huge_hint_is_capped)
{
    struct dict *d = dict_new(&item_type, ((size_t)1 << 63) + 1);
    CHECK_EQ(d->mask + 1, DICT_MAX_PRESIZE);
    for (unsigned i = 0; i < 100; i++)
        dict_add(d, &item_new(i)->link);
    for (unsigned i = 0; i < 100; i++)
        CHECK(find_id(d, i) != NULL);
    CHECK(remove_id(d, 7)); /* shrinks to a small table */
    CHECK(d->mask + 1 < DICT_MAX_PRESIZE);
    CHECK(find_id(d, 99) != NULL);
    dict_free(d, item_free);
}
