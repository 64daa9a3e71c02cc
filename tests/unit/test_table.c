/* test_table.c - unit tests for the shard hash index (src/db/table.c):
 * insert/find/remove at 100k keys, growth and shrink, tombstone reuse,
 * random insert/delete rounds checked against a presence bitmap, and the
 * index's bytes per key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/table.h"
#include "test.h"

/* The load bounds table.h documents: live + tombstones stay at or under
 * 88% of the slots, and a table grows only once live entries pass 70%. */
#define MAX_LOAD_PCT 88
#define GROW_LOAD_PCT 70

static size_t key_of(char *buf, unsigned i)
{
    return (size_t)snprintf(buf, 32, "key:%u", i);
}

static struct entry *new_key(unsigned i)
{
    char k[32], v[32];
    size_t kl = key_of(k, i);
    size_t vl = (size_t)snprintf(v, sizeof(v), "val-%u", i);
    return entry_new_string(k, kl, v, vl, -1);
}

static long find_key(const struct table *t, unsigned i)
{
    char k[32];
    size_t kl = key_of(k, i);
    return table_find(t, k, kl, table_hash(k, kl));
}

static void insert_key(struct table **tp, unsigned i)
{
    struct entry *e = new_key(i);
    long idx = table_insert(tp, e, table_hash(entry_key(e), entry_klen(e)));
    if (idx < 0 || table_get((*tp), idx) != e)
        test_fail(__FILE__, __LINE__, "table_insert(key:%u) returned bad slot %ld", i, idx);
}

/* Remove key i, which must be present; frees its entry. */
static int remove_key(struct table **tp, unsigned i)
{
    long idx = find_key(*tp, i);
    if (idx < 0)
        return 0;
    struct entry *e = table_get((*tp), idx);
    table_remove(tp, idx);
    entry_free(e);
    return 1;
}

/* The entry at slot idx is key i with its value. */
static int slot_is_key(const struct table *t, long idx, unsigned i)
{
    char k[32], v[32];
    size_t kl = key_of(k, i);
    size_t vl = (size_t)snprintf(v, sizeof(v), "val-%u", i);
    if (idx < 0 || (uint32_t)idx >= t->cap || !table_full(t, (uint32_t)idx))
        return 0;
    struct entry *e = table_get(t, idx);
    return entry_klen(e) == kl && memcmp(entry_key(e), k, kl) == 0 && entry_vlen(e) == vl &&
           memcmp(entry_val(e), v, vl) == 0;
}

/* Counters agree with the tag array. */
static int table_consistent(const struct table *t)
{
    uint32_t full = 0, tombs = 0, empty = 0;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (table_full(t, i))
            full++;
        else if (table_tags(t)[i] == TAG_TOMB)
            tombs++;
        else if (table_tags(t)[i] == TAG_EMPTY)
            empty++;
    }
    return full == t->used && tombs == t->tombs && full + tombs + empty == t->cap && empty > 0;
}

static unsigned shuffle_rng = 12345;
static unsigned next_rand(void)
{
    shuffle_rng = shuffle_rng * 1103515245u + 12345u;
    return shuffle_rng >> 8;
}

TEST(test_table_insert_find_remove_100k)
{
    enum { N = 100000 };
    struct table *t = table_new(4);
    unsigned *order = malloc(sizeof(unsigned) * N);
    int bad = 0;

    for (unsigned i = 0; i < N; i++)
        insert_key(&t, i);
    CHECK_EQ(t->used, N);
    CHECK(table_consistent(t));
    for (unsigned i = 0; i < N && bad < 5; i++) {
        if (!slot_is_key(t, find_key(t, i), i)) {
            test_fail(__FILE__, __LINE__, "key:%u not found after insert", i);
            bad++;
        }
    }
    for (unsigned i = N; i < N + 10000; i++)
        if (find_key(t, i) >= 0 && bad++ < 5)
            test_fail(__FILE__, __LINE__, "absent key:%u found", i);
    /* Remove in random order; the rest stays findable. */
    for (unsigned i = 0; i < N; i++)
        order[i] = i;
    for (unsigned i = N - 1; i > 0; i--) {
        unsigned j = next_rand() % (i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (unsigned n = 0; n < N; n++) {
        if (!remove_key(&t, order[n]) && bad++ < 5)
            test_fail(__FILE__, __LINE__, "key:%u vanished before removal", order[n]);
        if (n % 9973 == 0) {
            for (unsigned m = n + 1; m < N; m += 7)
                if (!slot_is_key(t, find_key(t, order[m]), order[m]) && bad++ < 5)
                    test_fail(__FILE__, __LINE__, "key:%u lost after %u removals", order[m], n + 1);
            CHECK(table_consistent(t));
        }
    }
    CHECK_EQ(t->used, 0);
    CHECK(find_key(t, 0) < 0);
    CHECK(table_consistent(t));
    free(order);
    table_free(t, entry_free);
}

TEST(test_table_growth_and_shrink)
{
    struct table *t = table_new(4);
    uint32_t cap_prev = t->cap, grows = 0;
    CHECK(t->cap >= 4);
    for (unsigned i = 0; i < 50000; i++) {
        insert_key(&t, i);
        if (t->cap != cap_prev) {
            /* Grows by less than 2x, and only when full enough. */
            CHECK(t->cap > cap_prev);
            CHECK(cap_prev < 64 || t->cap < cap_prev * 2);
            if ((uint64_t)t->used * 100 <= (uint64_t)cap_prev * GROW_LOAD_PCT)
                test_fail(__FILE__, __LINE__, "grew from %u slots with only %u keys", cap_prev, t->used);
            cap_prev = t->cap;
            grows++;
        }
        if ((uint64_t)(t->used + t->tombs) * 100 > (uint64_t)t->cap * MAX_LOAD_PCT)
            test_fail(__FILE__, __LINE__, "load %u/%u too high", t->used + t->tombs, t->cap);
    }
    CHECK(grows > 10);
    uint32_t big = t->cap;
    for (unsigned i = 0; i < 49990; i++)
        CHECK(remove_key(&t, i));
    CHECK_EQ(t->used, 10);
    CHECK(t->cap < big / 100);
    CHECK(t->cap <= 64);
    for (unsigned i = 49990; i < 50000; i++)
        CHECK(slot_is_key(t, find_key(t, i), i));
    CHECK(table_consistent(t));
    /* And it grows again from there. */
    for (unsigned i = 0; i < 1000; i++)
        insert_key(&t, i);
    for (unsigned i = 0; i < 1000; i++)
        CHECK(slot_is_key(t, find_key(t, i), i));
    CHECK(table_consistent(t));
    table_free(t, entry_free);
}

TEST(test_table_remove_keep_then_shrink)
{
    /* Removing without shrinking keeps every other entry at its index;
     * one table_shrink() then brings the table to about the size removals
     * one by one leave (between 20% and 50% full), in one rehash. */
    struct table *t = table_new(4), *ref = table_new(4);
    for (unsigned i = 0; i < 5000; i++) {
        insert_key(&t, i);
        insert_key(&ref, i);
    }
    uint32_t cap = t->cap;
    long idx_of_last = find_key(t, 4999);
    for (unsigned i = 0; i < 4990; i++) {
        long idx = find_key(t, i);
        CHECK(idx >= 0);
        struct entry *e = table_get(t, idx);
        table_remove_keep(t, idx);
        entry_free(e);
        CHECK(remove_key(&ref, i));
    }
    CHECK_EQ(t->cap, cap);
    CHECK_EQ(t->used, 10);
    CHECK_EQ(find_key(t, 4999), idx_of_last);
    CHECK(table_consistent(t));
    table_shrink(&t);
    CHECK((uint64_t)t->used * 100 >= (uint64_t)t->cap * 20);
    CHECK(t->cap <= ref->cap * 2 && t->cap * 2 >= ref->cap);
    CHECK_EQ(t->tombs, 0);
    CHECK(table_consistent(t));
    for (unsigned i = 4990; i < 5000; i++)
        CHECK(slot_is_key(t, find_key(t, i), i));
    uint32_t shrunk = t->cap;
    table_shrink(&t); /* nothing more to do */
    CHECK_EQ(t->cap, shrunk);
    /* A small table is left alone (as table_remove leaves it). */
    for (unsigned i = 4990; i < 4999; i++)
        CHECK(remove_key(&t, i));
    table_shrink(&t);
    CHECK(t->cap <= 16);
    CHECK(slot_is_key(t, find_key(t, 4999), 4999));
    table_free(t, entry_free);
    table_free(ref, entry_free);
}

TEST(test_table_tombstone_reuse)
{
    /* A key removed from the middle of a probe run leaves a tombstone; the
     * same key inserted again lands back in that slot and consumes it. */
    struct table *t = table_new(1000);
    int found = 0;
    CHECK(t->cap >= 1000);
    uint32_t cap0 = t->cap;
    for (unsigned i = 0; i < 700; i++)
        insert_key(&t, i);
    CHECK_EQ(t->cap, cap0); /* 70% at most: no resize */
    for (unsigned i = 0; i < 700 && !found; i++) {
        long idx = find_key(t, i);
        uint32_t next = (uint32_t)idx + 1 == t->cap ? 0 : (uint32_t)idx + 1;
        if (!table_full(t, next))
            continue;
        uint32_t tombs = t->tombs;
        CHECK(remove_key(&t, i));
        CHECK_EQ(t->tombs, tombs + 1);
        CHECK_EQ(table_tags(t)[idx], TAG_TOMB);
        CHECK(find_key(t, i) < 0);
        insert_key(&t, i);
        CHECK_EQ(t->tombs, tombs);
        CHECK_EQ(find_key(t, i), idx);
        found = 1;
    }
    CHECK(found);
    /* Removing the last slot of a run clears it and the tombstones just
     * before it. */
    for (unsigned i = 0; i < 700; i++) {
        long idx = find_key(t, i);
        uint32_t prev = idx == 0 ? t->cap - 1 : (uint32_t)idx - 1;
        uint32_t next = (uint32_t)idx + 1 == t->cap ? 0 : (uint32_t)idx + 1;
        if (table_tags(t)[next] != TAG_EMPTY || !table_full(t, prev))
            continue;
        /* Make prev a tombstone, then remove idx. */
        struct entry *pe = table_get(t, prev);
        uint32_t tombs = t->tombs;
        table_remove(&t, (long)prev);
        CHECK_EQ(t->tombs, tombs + 1);
        CHECK_EQ(table_tags(t)[prev], TAG_TOMB);
        CHECK(remove_key(&t, i));
        CHECK_EQ(table_tags(t)[idx], TAG_EMPTY);
        CHECK_EQ(table_tags(t)[prev], TAG_EMPTY);
        CHECK_EQ(t->tombs, tombs);
        entry_free(pe);
        break;
    }
    CHECK(table_consistent(t));
    table_free(t, entry_free);
}

TEST(test_table_tombstones_do_not_fill_table)
{
    /* Insert/delete churn at a constant size: tombstones are recycled or
     * dropped by a same-size rehash, so the table neither grows without
     * bound nor runs out of empty slots (probes must terminate). */
    struct table *t = table_new(4);
    for (unsigned i = 0; i < 1000; i++)
        insert_key(&t, i);
    uint32_t cap = t->cap;
    for (unsigned i = 1000; i < 200000; i++) {
        insert_key(&t, i);
        CHECK(remove_key(&t, i - 1000));
        if (t->used + t->tombs >= t->cap) {
            test_fail(__FILE__, __LINE__, "no empty slot left");
            break;
        }
    }
    CHECK_EQ(t->used, 1000);
    CHECK(t->cap <= cap * 2);
    CHECK(table_consistent(t));
    for (unsigned i = 199000; i < 200000; i++)
        CHECK(slot_is_key(t, find_key(t, i), i));
    table_free(t, entry_free);
}

TEST(test_table_random_rounds_match_reference)
{
    enum { KEYS = 20000, OPS = 400000 };
    static unsigned char present[KEYS];
    struct table *t = table_new(4);
    unsigned live = 0;
    int bad = 0;
    memset(present, 0, sizeof(present));
    shuffle_rng = 777;
    for (unsigned op = 0; op < OPS && bad < 5; op++) {
        /* Phases bias toward inserts or deletes so the size swings and the
         * table grows and shrinks repeatedly. */
        unsigned phase = (op / 50000) % 2;
        unsigned k = next_rand() % KEYS;
        int want_insert = (next_rand() % 100) < (phase ? 30u : 70u);
        if (present[k]) {
            if (!slot_is_key(t, find_key(t, k), k)) {
                test_fail(__FILE__, __LINE__, "op %u: key:%u should be present", op, k);
                bad++;
            }
            if (!want_insert) {
                CHECK(remove_key(&t, k));
                present[k] = 0;
                live--;
            }
        } else {
            if (find_key(t, k) >= 0) {
                test_fail(__FILE__, __LINE__, "op %u: key:%u should be absent", op, k);
                bad++;
            }
            if (want_insert) {
                insert_key(&t, k);
                present[k] = 1;
                live++;
            }
        }
        if (op % 25000 == 0 || op == OPS - 1) {
            for (unsigned i = 0; i < KEYS; i++) {
                long idx = find_key(t, i);
                if (present[i] ? !slot_is_key(t, idx, i) : idx >= 0) {
                    if (bad++ < 5)
                        test_fail(__FILE__, __LINE__, "op %u: key:%u presence wrong", op, i);
                }
            }
            CHECK_EQ(t->used, live);
            CHECK(table_consistent(t));
        }
    }
    table_free(t, entry_free);
}

TEST(test_table_bytes_per_key)
{
    /* Between growths the load stays within the documented bounds, so
     * index memory per key (a 6-byte address and a tag byte per slot, plus
     * the header) stays under 12.5 bytes once a table is past its first
     * few growths (7 / 0.70 = 10, plus the allocator's rounding; sanitizer
     * builds keep 8-byte addresses). */
    struct table *t = table_new(4);
    double worst = 0, sum = 0;
    unsigned samples = 0, worst_at = 0;
    CHECK_EQ(table_bytes(NULL), 0);
    for (unsigned i = 0; i < 100000; i++) {
        insert_key(&t, i);
        if (i + 1 >= 1000) {
            double per = (double)table_bytes(t) / (double)t->used;
            sum += per;
            samples++;
            if (per > worst) {
                worst = per;
                worst_at = i + 1;
            }
        }
    }
    if (worst >= TABLE_SLOT / 0.70 + 2.5)
        test_fail(__FILE__, __LINE__, "index bytes per key %.2f at %u keys (cap %u)", worst,
                  worst_at, t->cap);
    if (sum / samples > TABLE_SLOT / 0.79 + 2.0)
        test_fail(__FILE__, __LINE__, "average index bytes per key %.2f", sum / samples);
    CHECK(table_bytes(t) >= (size_t)t->cap * TABLE_SLOT);
    table_free(t, entry_free);
}

/* The small tables of a keyspace spread over 16384 shards (about 6 keys
 * each at 100,000 keys) grow a size class at a time: every table of 3 to
 * 16 keys is above half full, and over those sizes together the index
 * costs under 14 bytes per key (16-byte header included; it was 17 with
 * 8-byte addresses and growth by 4 slots; 18 with a sanitizer build's
 * 8-byte addresses). */
TEST(test_table_small_tables_stay_full)
{
    size_t bytes = 0, keys = 0;
    for (unsigned k = 3; k <= 16; k++) {
        struct table *t = table_new(4);
        for (unsigned i = 0; i < k; i++)
            insert_key(&t, i);
        CHECK_EQ(t->used, k);
        if (2 * t->used <= t->cap)
            test_fail(__FILE__, __LINE__, "%u keys in a table of %u slots", k, t->cap);
        bytes += table_bytes(t);
        keys += k;
        for (unsigned i = 0; i < k; i++)
            CHECK(find_key(t, i) >= 0);
        table_free(t, entry_free);
    }
    if ((double)bytes / (double)keys >= 2.0 * TABLE_SLOT)
        test_fail(__FILE__, __LINE__, "small tables: %.2f index bytes per key", (double)bytes / (double)keys);
}

/* Entries are found through their 6-byte addresses whatever the slot (the
 * last one's 8-byte load reaches into the tags) and slots can be
 * overwritten in place. */
TEST(test_table_six_byte_addresses)
{
    struct table *t = table_new(4);
    for (unsigned i = 0; i < 200; i++)
        insert_key(&t, i);
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!table_full(t, i))
            continue;
        struct entry *e = table_get(t, i);
        CHECK(e != NULL && ((uintptr_t)e & 7) == 0);
        table_set(t, i, e);
        CHECK(table_get(t, i) == e);
    }
    for (unsigned i = 0; i < 200; i++)
        CHECK(find_key(t, i) >= 0);
    table_free(t, entry_free);
}

/* One probe run of same-tag entries that starts 5 slots before the end and
 * wraps (the vector probe's 16-slot steps, its one-slot steps near the
 * end, several tag matches per step, tombstones inside the run): every key
 * is found at its slot, a key that is absent is not, and insertion fills
 * the first free slot after the home. */
TEST(test_table_probe_run_with_same_tags_across_the_wrap)
{
    struct table *t = table_new(48);
    uint32_t cap = t->cap, want = cap - 5;
    /* A hash whose home is `want` (multiply-shift on the low 32 bits) and
     * whose tag is fixed by the top bits. */
    uint64_t lo = (((uint64_t)want << 32) + cap - 1) / cap;
    uint64_t h = 0x2a00000000000000ull | lo;
    CHECK(lo <= 0xffffffffull);
    enum { N = 34 };
    struct entry *es[N];
    long at[N];
    for (unsigned i = 0; i < N; i++) {
        es[i] = new_key(i);
        at[i] = table_insert(&t, es[i], h);
    }
    CHECK_EQ(t->cap, cap); /* 34 of 48+ slots: under 70%, no growth */
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ(at[i], (long)((want + i) % cap));
    for (unsigned i = 0; i < N; i++) {
        char k[32];
        size_t kl = key_of(k, i);
        CHECK_EQ(table_find(t, k, kl, h), at[i]);
    }
    char absent[32];
    size_t al = key_of(absent, 999);
    CHECK_EQ(table_find(t, absent, al, h), -1);
    /* Tombstones inside the run: the keys after them are still found. */
    for (unsigned i = 3; i < N; i += 7) {
        table_remove_keep(t, at[i]);
        entry_free(es[i]);
        es[i] = NULL;
    }
    for (unsigned i = 0; i < N; i++) {
        char k[32];
        size_t kl = key_of(k, i);
        CHECK_EQ(table_find(t, k, kl, h), es[i] ? at[i] : -1);
    }
    CHECK_EQ(table_find(t, absent, al, h), -1);
    /* The next insert reuses the first tombstone of the run. */
    struct entry *x = new_key(1000);
    CHECK_EQ(table_insert(&t, x, h), at[3]);
    CHECK(table_consistent(t));
    table_free(t, entry_free);
}
