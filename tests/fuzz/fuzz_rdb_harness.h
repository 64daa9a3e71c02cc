/* fuzz_rdb_harness.h - whole RDB files through the loader the server uses
 * at start-up, DEBUG RELOAD and for an AOF's RDB preamble: rdb_load_in
 * (persist/rdb.c) on a memory source, into an empty keyspace.
 *
 * Input: the file's bytes (seeds: dump.rdb files SAVE wrote, made by
 * tests/fuzz/make_seeds.py).  When the input ends with the EOF opcode and a
 * checksum, the checksum is zeroed ("not computed", which the loader
 * accepts) so that mutated files get past it.
 *
 * What loads must be coherent: every key is in the slot its name hashes
 * to, each database's count matches, and every value passes the RESTORE
 * target's check (walked; DUMP, RESTORE, DUMP again gives the same).
 * Every input starts from an empty keyspace and no function library. */
#ifndef HK_FUZZ_RDB_HARNESS_H
#define HK_FUZZ_RDB_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "db/table.h"
#include "fuzz_common.h"
#include "fuzz_restore_harness.h"
#include "persist/rdb.h"
#include "script/script.h"

static int fuzz_rdb_count_lib(void *arg, const char *code, size_t len)
{
    (void)code;
    (void)len;
    ++*(int *)arg;
    return 0;
}

/* Empty keyspace, no function library.  The library context is replaced
 * only when it holds something: an input that allocates more than it frees
 * makes libFuzzer run a leak scan, slow with the keyspace's tables. */
static void fuzz_rdb_reset(void)
{
    int libs = 0;
    fuzz_flush_all();
    fn_rdb_foreach_lib(fuzz_rdb_count_lib, &libs);
    if (libs)
        fn_rdb_flush_libs();
}

/* Every value of every database: walked, and through DUMP and RESTORE
 * (fuzz_restore_check, the RESTORE target's coherence check).  Returns
 * the number of keys. */
static unsigned long long fuzz_rdb_walk_keyspace(void)
{
    unsigned long long keys = 0, per_db[MAX_DBS] = {0};
    uint64_t used = 0;
    for (unsigned w = 0; w < NSLOTS / 64; w++) {
        uint64_t bits = atomic_load_explicit(&ks.slot_keys[w], memory_order_relaxed);
        while (bits) {
            unsigned s = w * 64 + (unsigned)__builtin_ctzll(bits);
            uint64_t dbs = ks.slot_dbs[s];
            bits &= bits - 1;
            FZ_CHECK(dbs != 0);
            used |= dbs;
            while (dbs) {
                int d = __builtin_ctzll(dbs);
                struct table *t = ks.dbs[d]->t[s];
                dbs &= dbs - 1;
                FZ_CHECK(t != NULL);
                for (uint32_t i = 0; i < t->cap; i++) {
                    if (!table_full(t, i))
                        continue;
                    struct entry *e = table_get(t, i);
                    FZ_CHECK(key_slot(entry_key(e), entry_klen(e)) == s);
                    fuzz_restore_check(e, (int)(i & 1));
                    per_db[d]++;
                }
            }
        }
    }
    for (int d = 0; d < ks.ndb; d++) {
        if ((used >> d) & 1)
            FZ_CHECK(per_db[d] == db_size(d));
        keys += per_db[d];
    }
    return keys;
}

static inline void fuzz_rdb_one(const uint8_t *data, size_t size)
{
    struct rdb_in in;
    struct rdb_load_stats st;
    fuzz_server_init();
    cfg.rdbchecksum = 1;
    fuzz_rdb_reset();
    unsigned char *copy = hk_malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (size >= 18 && copy[size - 9] == RDB_OPCODE_EOF)
        memset(copy + size - 8, 0, 8);
    memset(&st, 0, sizeof(st));
    rdb_in_init_mem(&in, copy, size);
    int rc = rdb_load_in(&in, &st);
    FZ_CHECK(rc == 0 || (rc == -1 && in.failed && in.err[0]));
    rdb_in_free(&in);
    hk_free(copy);
    /* What was loaded before an error stays (the server refuses to start
     * then): walk it either way. */
    unsigned long long keys = fuzz_rdb_walk_keyspace();
    if (rc == 0)
        FZ_CHECK(keys <= st.keys);
    fuzz_rdb_reset();
}

#endif
