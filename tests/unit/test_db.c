/* test_db.c - the keyspace layer without a server: lazy expiry on lookup,
 * TTL set/clear (the entry moves when its header grows), the per-slot
 * expires counters, the active-expiry sweeper's time budget and trylock
 * behaviour, slot locking order, flush and swap. */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "db/db.h"
#include "test.h"

static int db_ready;

static void setup(void)
{
    if (!db_ready) {
        db_init(16);
        db_ready = 1;
    }
    for (int d = 0; d < 16; d++)
        db_flush(d);
}

static struct entry *put(int db, const char *key, const char *val, long long expire)
{
    unsigned s = key_slot(key, strlen(key));
    struct entry *e = entry_new_string(key, strlen(key), val, strlen(val), expire);
    db_set(db, s, e);
    return e;
}

static struct entry *get(int db, const char *key)
{
    return db_get(db, key_slot(key, strlen(key)), key, strlen(key), LK_NOSTATS);
}

/* One sweeper pass with a budget and no stop on a clean batch. */
static long sweep(unsigned *cursor, long long budget_us)
{
    struct expire_pass p = {.budget_us = budget_us};
    return db_active_expire(0, NSLOTS, cursor, &p);
}

TEST(test_db_lazy_expiry_deletes_on_lookup)
{
    setup();
    put(0, "live", "v", time_ms() + 100000);
    put(0, "dead", "v", time_ms() - 1);
    CHECK(get(0, "live") != NULL);
    unsigned s = key_slot("dead", 4);
    CHECK_EQ(ks.dbs[0]->t[s] != NULL, 1);
    CHECK(get(0, "dead") == NULL);
    /* The lookup removed it: the slot's table is gone or no longer has it. */
    CHECK(db_get(0, s, "dead", 4, LK_NOSTATS | LK_NOEXPIRE) == NULL);
    CHECK_EQ(db_size(0), 1);
}

TEST(test_db_set_and_clear_expire_moves_entry)
{
    setup();
    put(0, "k", "value", -1);
    unsigned s = key_slot("k", 1);
    long idx;
    struct entry *e = db_get_idx(0, s, "k", 1, LK_NOSTATS, &idx);
    CHECK(e != NULL);
    CHECK_EQ(entry_expire(e), -1);
    CHECK_EQ(ks.slot_expires[s], 0);
    long long when = time_ms() + 5000;
    e = db_set_expire(0, s, idx, when);
    CHECK_EQ(entry_expire(e), when);
    CHECK_MEM(entry_key(e), entry_klen(e), "k", 1);
    CHECK_MEM(entry_val(e), entry_vlen(e), "value", 5);
    CHECK_EQ(ks.slot_expires[s], 1);
    CHECK_EQ(db_expires(0), 1);
    /* Updating an existing TTL keeps the counters. */
    e = db_set_expire(0, s, idx, when + 1);
    CHECK_EQ(entry_expire(e), when + 1);
    CHECK_EQ(ks.slot_expires[s], 1);
    e = db_set_expire(0, s, idx, -1);
    CHECK_EQ(entry_expire(e), -1);
    CHECK_MEM(entry_val(e), entry_vlen(e), "value", 5);
    CHECK_EQ(ks.slot_expires[s], 0);
    CHECK_EQ(db_expires(0), 0);
}

TEST(test_db_replace_tracks_expire_counters)
{
    setup();
    put(0, "r", "a", time_ms() + 10000);
    unsigned s = key_slot("r", 1);
    CHECK_EQ(ks.slot_expires[s], 1);
    put(0, "r", "b", -1); /* SET without KEEPTTL drops the TTL */
    CHECK_EQ(ks.slot_expires[s], 0);
    CHECK_EQ(db_del(0, s, "r", 1), 1);
    CHECK_EQ(db_del(0, s, "r", 1), 0);
}

TEST(test_db_active_expire_removes_only_expired)
{
    setup();
    char k[32];
    long long past = time_ms() - 10, future = time_ms() + 100000;
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof(k), "e:%d", i);
        put(0, k, "x", past);
        snprintf(k, sizeof(k), "f:%d", i);
        put(1, k, "x", future);
        snprintf(k, sizeof(k), "p:%d", i);
        put(2, k, "x", -1);
    }
    unsigned cursor = 0;
    long removed = 0;
    for (int pass = 0; pass < 100 && removed < 5000; pass++)
        removed += sweep(&cursor, 1000000);
    CHECK_EQ(removed, 5000);
    CHECK_EQ(db_size(0), 0);
    CHECK_EQ(db_size(1), 5000);
    CHECK_EQ(db_size(2), 5000);
    CHECK_EQ(db_expires(1), 5000);
}

TEST(test_db_active_expire_skips_locked_slot)
{
    setup();
    put(0, "locked", "x", time_ms() - 10);
    unsigned s = key_slot("locked", 6), cursor = 0;
    spin_lock(&ks.locks[s]);
    CHECK_EQ(sweep(&cursor, 1000000), 0);
    struct expire_pass p = {.budget_us = 1000000};
    cursor = 0;
    CHECK_EQ(db_active_expire(0, NSLOTS, &cursor, &p), 0);
    CHECK_EQ(p.busy, 1); /* the caller learns that a slot was skipped */
    CHECK_EQ(p.timed_out, 0);
    spin_unlock(&ks.locks[s]);
    cursor = 0;
    CHECK_EQ(sweep(&cursor, 1000000), 1);
}

TEST(test_db_prefetch_keys_skips_busy_slots_and_changes_nothing)
{
    setup();
    put(0, "pf:hit", "v", -1);
    put(0, "{pf:hit}other", "w", -1); /* same slot, different key */
    unsigned busy = key_slot("pf:busy", 7);
    put(0, "pf:busy", "v", -1);
    struct db_pf k[] = {
        {.key = "pf:hit", .klen = 6},
        {.key = "pf:missing-in-empty-slot", .klen = 24},
        {.key = "{pf:hit}missing", .klen = 15},
        {.key = "pf:busy", .klen = 7},
        {.key = "", .klen = 0},
    };
    int n = (int)(sizeof(k) / sizeof(k[0]));
    spin_lock(&ks.locks[busy]); /* held by someone else: skipped, not waited for */
    db_prefetch_keys(0, k, n);
    CHECK_EQ(atomic_load(&ks.locks[busy].v), 1);
    spin_unlock(&ks.locks[busy]);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(k[i].slot, key_slot(k[i].key, k[i].klen));
        CHECK_EQ(k[i].h, table_hash(k[i].key, k[i].klen));
        if (i != 3) /* every other slot's lock was released */
            CHECK_EQ(atomic_load(&ks.locks[k[i].slot].v), 0);
    }
    CHECK_EQ(db_size(0), 3);
    CHECK(get(0, "pf:hit") != NULL);
    CHECK(get(0, "pf:busy") != NULL);
    CHECK(get(0, "{pf:hit}missing") == NULL);
}

TEST(test_db_active_expire_respects_budget)
{
    setup();
    char k[32];
    for (int i = 0; i < 200000; i++) {
        snprintf(k, sizeof(k), "b:%d", i);
        put(0, k, "x", time_ms() - 10);
    }
    unsigned cursor = 0;
    /* A zero budget stops after the first batch of slots: far from all. */
    struct expire_pass p = {.budget_us = 0, .batch = 25, .stale_pct = 9};
    long first = db_active_expire(0, NSLOTS, &cursor, &p);
    CHECK(first > 0);
    CHECK(first < 200000);
    CHECK(cursor > 0);
    CHECK_EQ(p.timed_out, 1); /* all expired: the batches never stop it */
    CHECK_EQ(p.expired, first);
    CHECK_EQ(p.checked, first);
    long total = first;
    /* (the budget is checked after every slot swept: one slot a pass) */
    for (int pass = 0; pass < 100000 && total < 200000; pass++)
        total += sweep(&cursor, 0);
    CHECK_EQ(total, 200000);
    CHECK_EQ(db_size(0), 0);
    /* Tables emptied by the sweep are gone; none left oversized. */
    for (unsigned s = 0; s < NSLOTS; s++)
        CHECK(ks.dbs[0]->t[s] == NULL);
}

TEST(test_db_active_expire_stops_on_a_clean_batch)
{
    /* 2 % of the keys expired: a pass stops after its first batch of 25+
     * keys (Redis's acceptable-stale rule), long before its budget. */
    setup();
    char k[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(k, sizeof(k), "c:%d", i);
        put(0, k, "x", i % 50 == 0 ? time_ms() - 10 : time_ms() + 3600000);
    }
    unsigned cursor = 0;
    struct expire_pass p = {.budget_us = 10000000, .batch = 25, .stale_pct = 9};
    db_active_expire(0, NSLOTS, &cursor, &p);
    CHECK_EQ(p.timed_out, 0);
    CHECK(p.checked >= 25);
    CHECK(p.checked < 1000);
    CHECK(cursor > 0 && cursor < 200);
    /* Without the batch rule the pass covers everything. */
    cursor = 0;
    CHECK_EQ(sweep(&cursor, 10000000), 2000 - p.expired);
    CHECK_EQ(db_size(0), 98000);
    CHECK_EQ(db_expires(0), 98000);
}

TEST(test_db_active_expire_shrinks_tables_once)
{
    /* Most keys of a slot expire: the table is shrunk after the scan (not
     * at each removal) and the survivors stay findable. */
    setup();
    char k[32];
    for (int i = 0; i < 300000; i++) {
        snprintf(k, sizeof(k), "s:%d", i);
        put(0, k, "x", i % 20 == 0 ? time_ms() + 3600000 : time_ms() - 10);
    }
    uint32_t cap_before = 0;
    for (unsigned s = 0; s < NSLOTS; s++)
        if (ks.dbs[0]->t[s] && ks.dbs[0]->t[s]->cap > cap_before)
            cap_before = ks.dbs[0]->t[s]->cap;
    unsigned cursor = 0;
    CHECK_EQ(sweep(&cursor, 10000000), 285000);
    CHECK_EQ(db_size(0), 15000);
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = ks.dbs[0]->t[s];
        if (t)
            CHECK((uint64_t)t->used * 100 >= (uint64_t)t->cap * 20 || t->cap <= 16);
    }
    for (int i = 0; i < 300000; i += 20) {
        snprintf(k, sizeof(k), "s:%d", i);
        CHECK(get(0, k) != NULL);
    }
    CHECK(cap_before > 16);
}

TEST(test_db_lock_slots_sorts_and_dedups)
{
    unsigned slots[] = {900, 3, 900, 16383, 3};
    db_lock_slots(slots, 5);
    CHECK_EQ(slots[0], 3);
    CHECK_EQ(slots[4], 16383);
    CHECK(!spin_trylock(&ks.locks[3]));
    CHECK(!spin_trylock(&ks.locks[900]));
    db_unlock_slots(slots, 5);
    CHECK(spin_trylock(&ks.locks[900]));
    spin_unlock(&ks.locks[900]);
    CHECK(spin_trylock(&ks.locks[3]));
    spin_unlock(&ks.locks[3]);
}

TEST(test_db_swap_and_flush)
{
    setup();
    put(3, "a", "1", -1);
    put(4, "b", "2", time_ms() + 100000);
    db_swap(3, 4);
    CHECK(get(3, "b") != NULL);
    CHECK(get(4, "a") != NULL);
    CHECK(get(3, "a") == NULL);
    db_swap(3, 4);
    db_flush(4);
    CHECK_EQ(db_size(4), 0);
    CHECK_EQ(ks.slot_expires[key_slot("b", 1)], 0);
    CHECK_EQ(db_size(3), 1);
}

/* The per-slot summaries as a slot-by-slot recount would have them. */
static int summaries_consistent(void)
{
    for (unsigned s = 0; s < NSLOTS; s++) {
        uint64_t dbs = 0;
        uint32_t exp = 0;
        for (int d = 0; d < ks.ndb; d++) {
            struct table *t = ks.dbs[d]->t[s];
            if (t) {
                dbs |= 1ULL << d;
                exp += t->expires;
            }
        }
        int keybit = (int)((atomic_load(&ks.slot_keys[s >> 6]) >> (s & 63)) & 1);
        int sweepbit = (int)((atomic_load(&ks.slot_sweep[s >> 6]) >> (s & 63)) & 1);
        uint32_t hfe = atomic_load(&ks.slot_hfe[s]);
        if (ks.slot_dbs[s] != dbs || atomic_load(&ks.slot_expires[s]) != exp || keybit != (dbs != 0) ||
            sweepbit != (exp != 0 || hfe != 0))
            return 0;
    }
    return 1;
}

TEST(test_db_shadow_swap_in)
{
    setup();
    put(0, "old", "1", time_ms() + 100000);
    put(3, "old3", "1", -1);
    struct db_shadow *sh = db_shadow_new();
    const char *keys[] = {"k1", "k2", "k3", "old"};
    for (int i = 0; i < 4; i++) {
        unsigned s = key_slot(keys[i], strlen(keys[i]));
        CHECK_EQ(db_shadow_find(sh, 5, s, keys[i], strlen(keys[i])), -1);
        db_shadow_add(sh, i == 3 ? 0 : 5, s,
                      entry_new_string(keys[i], strlen(keys[i]), "v", 1, i == 1 ? time_ms() + 100000 : -1));
    }
    /* Replace k2 (with a TTL) by one without: the table's count follows. */
    unsigned s2 = key_slot("k2", 2);
    long idx = db_shadow_find(sh, 5, s2, "k2", 2);
    CHECK(idx >= 0);
    db_shadow_replace(sh, 5, s2, idx, entry_new_string("k2", 2, "w", 1, -1));
    /* The keyspace does not see the shadow yet. */
    CHECK(get(5, "k1") == NULL);
    CHECK(get(3, "old3") != NULL);
    db_shadow_swap_in(sh);
    CHECK(get(3, "old3") == NULL);
    CHECK_EQ(db_size(3), 0);
    CHECK_EQ(db_size(5), 3);
    CHECK_EQ(db_size(0), 1);
    CHECK(get(0, "old") != NULL && entry_expire(get(0, "old")) == -1); /* the new one, no TTL */
    struct entry *e = get(5, "k2");
    CHECK(e != NULL && entry_val(e)[0] == 'w');
    CHECK_EQ(ks.slot_expires[s2], 0);
    CHECK(summaries_consistent());
    /* A shadow given up frees its tables; the keyspace is untouched. */
    struct db_shadow *sh2 = db_shadow_new();
    db_shadow_add(sh2, 1, key_slot("x", 1), entry_new_string("x", 1, "v", 1, time_ms() + 1000));
    db_shadow_free(sh2);
    CHECK(get(1, "x") == NULL);
    CHECK_EQ(db_size(5), 3);
    CHECK(summaries_consistent());
}
