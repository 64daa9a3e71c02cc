/* test_intset.c - the intset: ordering, duplicates, width upgrades at the
 * 16/32/64-bit boundaries (both signs), removal, random operations against
 * a sorted reference, and validation of corrupt input. */
#include <stdlib.h>
#include <string.h>

#include "ds/intset.h"
#include "test.h"

TEST(test_intset_add_sorted_and_dedup)
{
    unsigned char *is = is_new();
    int changed;
    int64_t vals[] = {5, -3, 100, 5, 0, -3};
    int expect_changed[] = {1, 1, 1, 0, 1, 0};
    for (int i = 0; i < 6; i++) {
        is = is_add(is, vals[i], &changed);
        CHECK_EQ(changed, expect_changed[i]);
    }
    CHECK_EQ(is_len(is), 4);
    CHECK_EQ(is_get(is, 0), -3);
    CHECK_EQ(is_get(is, 3), 100);
    CHECK_EQ(is_bytes(is), 8 + 4 * 2);
    CHECK(is_find(is, 0));
    CHECK(!is_find(is, 1));
    CHECK(!is_find(is, 1LL << 40));
    is_free(is);
}

TEST(test_intset_upgrades_keep_values)
{
    unsigned char *is = is_new();
    is = is_add(is, 1, NULL);
    is = is_add(is, -2, NULL);
    is = is_add(is, 40000, NULL); /* 32-bit */
    CHECK_EQ(is_bytes(is), 8 + 3 * 4);
    is = is_add(is, -5000000000LL, NULL); /* 64-bit, negative: prepended */
    CHECK_EQ(is_bytes(is), 8 + 4 * 8);
    int64_t want[] = {-5000000000LL, -2, 1, 40000};
    for (int i = 0; i < 4; i++)
        CHECK_EQ(is_get(is, (size_t)i), want[i]);
    CHECK_EQ(is_min(is), -5000000000LL);
    CHECK_EQ(is_max(is), 40000);
    is = is_add(is, INT64_MAX, NULL);
    is = is_add(is, INT64_MIN, NULL);
    CHECK_EQ(is_min(is), INT64_MIN);
    CHECK_EQ(is_max(is), INT64_MAX);
    CHECK(is_validate(is, is_bytes(is)));
    is_free(is);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

TEST(test_intset_random_against_reference)
{
    enum { N = 3000 };
    int64_t ref[N];
    size_t n = 0;
    unsigned char *is = is_new();
    unsigned s = 7;
    for (int round = 0; round < 20000; round++) {
        s = s * 1103515245 + 12345;
        int64_t v = (int64_t)(s % 2000) - 1000;
        if (round > 15000)
            v *= 100000000LL; /* force upgrades late */
        int changed, present = 0;
        for (size_t i = 0; i < n; i++)
            present |= ref[i] == v;
        if ((s >> 16) & 1) {
            is = is_add(is, v, &changed);
            CHECK_EQ(changed, !present);
            if (!present && n < N)
                ref[n++] = v;
        } else {
            is = is_remove(is, v, &changed);
            CHECK_EQ(changed, present);
            for (size_t i = 0; i < n; i++)
                if (ref[i] == v) {
                    ref[i] = ref[--n];
                    break;
                }
        }
    }
    qsort(ref, n, sizeof(ref[0]), cmp64);
    CHECK_EQ(is_len(is), n);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(is_get(is, i), ref[i]);
    is_free(is);
}

TEST(test_intset_validate_rejects_corruption)
{
    unsigned char *is = is_new();
    for (int i = 0; i < 5; i++)
        is = is_add(is, i * 10, NULL);
    size_t n = is_bytes(is);
    unsigned char bad[64];
    CHECK(is_validate(is, n));
    CHECK(!is_validate(is, n - 1));
    memcpy(bad, is, n);
    bad[0] = 3; /* bad width */
    CHECK(!is_validate(bad, n));
    memcpy(bad, is, n);
    bad[8] = 50; /* not ascending */
    CHECK(!is_validate(bad, n));
    is_free(is);
}
