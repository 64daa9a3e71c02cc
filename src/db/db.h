/* db.h - the keyspace: 16 databases over 16,384 shards.
 *
 * Ownership and locking (the rule every command relies on):
 *  - Shard s (a Redis Cluster hash slot) has one spinlock, ks.locks[s],
 *    which guards the tables of slot s in *every* database, so MOVE and
 *    COPY between databases need one lock, and SWAPDB (which swaps the
 *    per-database table arrays) takes them all.
 *  - A thread may touch a table or an entry only while holding its slot's
 *    lock.  Several locks are always taken in ascending slot order
 *    (db_lock_slots), which makes multi-key commands deadlock-free; "all
 *    locks" (db_lock_all) is the same order over every slot.
 *  - ks.dbs[i] may be read only with at least one slot lock held (SWAPDB
 *    writes it with all held).
 *
 * Every function below that takes a slot expects its lock to be held by the
 * caller; none of them takes a lock itself except the db_lock_* family and
 * the cron sweeper (which uses trylock so it never waits behind a client). */
#ifndef HK_DB_H
#define HK_DB_H

#include <stddef.h>
#include <stdint.h>

#include "../base/lock.h"
#include "entry.h"
#include "table.h"

#define NSLOTS 16384
#define MAX_DBS 64

struct db {
    struct table *t[NSLOTS];  /* NULL until the first key of that slot */
};

struct keyspace {
    struct spinlock *locks; /* NSLOTS of them (db_init) */
    struct db *dbs[MAX_DBS];
    int ndb;
    /* Keys with a TTL in slot s over all databases.  Written under the
     * slot's lock; read without it (relaxed) by the expiry sweeper, which
     * only needs to know which slots are worth a trylock. */
    _Atomic uint32_t slot_expires[NSLOTS];
    /* Hashes with field TTLs (E_HFE) in slot s, same rules. */
    _Atomic uint32_t slot_hfe[NSLOTS];
    /* Bit s: slot_expires[s] or slot_hfe[s] is non-zero (the sweeper skips
     * 64 empty slots per load).  Updated on 0 <-> non-zero transitions. */
    _Atomic uint64_t slot_sweep[NSLOTS / 64];
    /* Bit d of slot_dbs[s]: database d has a table (at least one key) at
     * slot s (MAX_DBS is 64); bit s of slot_keys is set while slot_dbs[s]
     * is non-zero.  slot_dbs follows rule 1 (the slot's lock); slot_keys
     * is updated on 0 <-> non-zero transitions and read relaxed by the
     * evictor (cmd/evict.c) to find slots worth sampling. */
    uint64_t slot_dbs[NSLOTS];
    _Atomic uint64_t slot_keys[NSLOTS / 64];
};

extern struct keyspace ks;

/* A shadow dataset: every database's tables, built by one thread off the
 * keyspace (a replica's async load, repl-diskless-load swapdb) while the
 * keyspace keeps serving, then swapped in whole.  Only its builder touches
 * it.  db_shadow_swap_in needs the keyspace frozen (every slot lock): the
 * shadow's tables become the databases', the slot summaries (slot_dbs,
 * slot_keys, slot_expires, slot_hfe, slot_sweep) are rebuilt in one pass
 * over the slots, and the old tables go to the lazy-free thread.
 * db_shadow_free gives up a shadow (its tables to the lazy-free thread). */
struct db_shadow;
struct db_shadow *db_shadow_new(void);
long db_shadow_find(struct db_shadow *s, int db, unsigned slot, const char *key, size_t klen);
void db_shadow_add(struct db_shadow *s, int db, unsigned slot, struct entry *e);
void db_shadow_replace(struct db_shadow *s, int db, unsigned slot, long idx, struct entry *e);
void db_shadow_free(struct db_shadow *s);
void db_shadow_swap_in(struct db_shadow *s);

/* Per-thread counters the keyspace updates (the worker points this at its
 * own stats; summed for INFO, never shared on the hot path). */
/* Statistics counters have one writer (their worker) and are read by INFO
 * on any thread: the owner adds with a relaxed atomic store (a plain
 * load+add+store on x86-64, no lock prefix), readers use STAT_GET. */
#define STAT_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)
#define STAT_GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)
#define STAT_SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

struct db_stats {
    unsigned long long hits, misses, expired;
    /* Active expiry (net/worker.c expire_slice), as Redis's INFO stats:
     * the share of sampled keys found expired, a running average
     * (5% weight per pass) in millionths; passes stopped by their time
     * budget; time spent sweeping, us. */
    unsigned long long expired_stale_ppm, expire_time_cap, expire_us;
    unsigned long long evicted; /* keys removed by maxmemory (cmd/evict.c) */
};
extern _Thread_local struct db_stats *db_tstats;

/* LRU clock in seconds, 24 bits, as Redis keeps it; updated by the cron. */
extern _Atomic uint32_t lru_clock_now;
uint32_t lru_clock(void);
/* LFU decay clock: minutes mod 65536, cached like lru_clock_now. */
extern _Atomic uint32_t lfu_minutes_now;
uint32_t lfu_minutes_clock(void);

/* LFU mode (maxmemory-policy *-lfu): the entry's 24-bit lru field holds
 * 16 bits of "last decrement time" in minutes and an 8-bit logarithmic
 * access counter, as Redis does.  Set by CONFIG; read on every access. */
extern volatile int db_lfu_mode;
extern volatile int db_lfu_log_factor, db_lfu_decay_time;
#define LFU_INIT_VAL 5
uint32_t lfu_init(void);
unsigned lfu_decr_and_return(uint32_t lru);
uint32_t lfu_touch(uint32_t lru);

void db_init(int ndb);

/* Locking. slots[] need not be sorted or unique; it is sorted in place.
 *
 * A thread that must wait for a slot lock while holding others (every
 * multi-slot acquisition below) gives way to a lock-yield request: a
 * script that needs an undeclared slot below ones it holds (cmd/multi.c,
 * lockctx_ensure) raises db_lock_yield_req; waiters then drop what they
 * took, wait for the request to clear and start over, so the script's
 * out-of-order wait cannot close a cycle.  (Scripts run one at a time, so
 * there is at most one such waiter.)  The _ex forms also give up (return -1,
 * nothing held) when db_script_busy is set, so commands blocked behind a
 * busy script's locks get BUSY instead of waiting. */
extern atomic_int db_lock_yield_req;
/* Set by net/worker.c: lock waits that hold nothing (or drop what they
 * hold) run the waiting worker's jobs, since a thread holding every slot
 * lock may be waiting in worker_broadcast() for this worker. */
extern int (*db_wait_jobs_pending)(void);
extern void (*db_wait_run_jobs)(void);
/* Busy script: 0 none, 1 a script (EVAL), 2 a function (FCALL) has run past
 * busy-reply-threshold.  cmd_execute replies BUSY to commands without
 * CMD_ALLOW_BUSY while it is set.  Written by the script engine. */
extern atomic_int script_busy;
/* Set during a client pause (cmd/pause.h): the active sweep does nothing,
 * and a read finds an expired key missing without deleting it (lookups
 * that do not count hits/misses, the writes' lookups, still delete: a
 * write that was already running when the pause began). */
extern atomic_int db_expire_paused;
/* Its bits: a client pause (cmd/pause.c), a replica (persist/replica.c:
 * keys expire only when the master's DEL comes; reads hide them). */
#define DB_EXPIRE_PAUSED_PAUSE 1
#define DB_EXPIRE_PAUSED_REPLICA 2
/* The script lock, a reader-writer lock.  script_mutex_lock() takes it
 * exclusively: EXEC of commands that need it, persist/'s fork and DEBUG
 * RELOAD / LOADAOF freezes, SCRIPT/FUNCTION administration, and scripts
 * that run alone (FCALL, and EVAL scripts known to touch keys they do not
 * declare).  script_shared_lock() takes it shared: EVAL/EVALSHA scripts
 * that run in parallel with each other on their declared keys' slots
 * (cmd/multi.c, parallel lock contexts).  Lock order: script lock, then
 * slot locks.  Reentrant on one thread (EXEC holding it runs EVAL; a nested
 * take keeps the outer mode).  Both return -1 without taking it when a busy
 * script is running (the caller replies BUSY); writers are preferred, so a
 * stream of parallel scripts cannot starve a fork.  It lives here, below
 * all its users (cmd/, script/, persist/). */
int script_mutex_lock(void);
int script_shared_lock(void);
void script_mutex_unlock(void);
/* This thread holds the script lock exclusively (0: shared or not at all). */
int script_lock_exclusive(void);
void db_lock_slots(unsigned *slots, int n);
int db_lock_slots_ex(unsigned *slots, int n, int busy_abort);
/* One slot, nothing else held: 0 locked, -1 busy script (not locked). */
int db_lock_one_ex(unsigned s, int busy_abort);
/* Wait for slot s while holding lower ones only if no yield is requested:
 * 0 locked, -1 a yield was requested (not locked; the caller must release
 * what it holds and retry). */
int db_lock_or_yield(unsigned s);
void db_unlock_slots(const unsigned *slots, int n);
void db_lock_all(void);
int db_lock_all_ex(int busy_abort);
void db_unlock_all(void);

/* Lookup flags. */
#define LK_NOTOUCH 0x01   /* do not update the LRU clock */
#define LK_NOSTATS 0x02   /* do not count a hit or miss */
#define LK_NOEXPIRE 0x04  /* return expired keys too (no lazy delete) */

/* Find a key; deletes it first if its TTL has passed. */
struct entry *db_get(int db, unsigned slot, const char *key, size_t klen, int flags);
/* Same, also giving the slot index in the table (for replace/remove). */
struct entry *db_get_idx(int db, unsigned slot, const char *key, size_t klen, int flags, long *idx);
/* Warm the caches for the lookups of n keys that are about to run (the
 * commands already in a client's query buffer): the slot locks, the
 * tables' headers, the home slots' tag and pointer lines, the entries'
 * first lines, then the rest of each entry up to 512 bytes; one stage for
 * all keys before the next, so the cache misses
 * of a pipelined batch overlap instead of stalling each command in turn.
 * Every load from a table is made under its slot's lock, taken with a
 * trylock once for all four stages of up to 16 keys (a busy slot is
 * skipped); nothing is changed.  Fills in each
 * key's slot and hash. */
struct db_pf {
    const char *key;
    size_t klen;
    unsigned slot;
    uint64_t h;
};
void db_prefetch_keys(int db, struct db_pf *k, int n);
/* The running command's look-ahead result (net/worker.c sets it before a
 * command whose key was prefetched, and clears it after): the slot and
 * table hash db_prefetch_keys computed for the key at this address, so the
 * command's own slot (cmd_execute) and lookup (db_get_idx) do not compute
 * them again.  Matched by the argument's address and length, which stay
 * the same from the look-ahead to the command because both read the same
 * query buffer within one process_input call.  Thread-local. */
extern _Thread_local struct db_pf db_hint;
static inline unsigned db_key_slot(const char *key, size_t klen)
{
    return key == db_hint.key && klen == db_hint.klen ? db_hint.slot : key_slot(key, klen);
}
static inline uint64_t db_key_hash(const char *key, size_t klen)
{
    return key == db_hint.key && klen == db_hint.klen ? db_hint.h : table_hash(key, klen);
}
/* Insert an entry for a key that is absent (the caller checked). */
void db_add(int db, unsigned slot, struct entry *e);
/* Replace the entry at table index idx with e (frees the old one). */
void db_replace(int db, unsigned slot, long idx, struct entry *e);
/* Put e in place of whatever the key holds (frees the old entry). */
void db_set(int db, unsigned slot, struct entry *e);
/* Delete; returns 1 if the key existed (expired keys count as absent). */
int db_del(int db, unsigned slot, const char *key, size_t klen);
/* Remove without freeing (for MOVE/RENAME). */
struct entry *db_unlink(int db, unsigned slot, long idx);

/* Set or clear (when_ms < 0) the TTL; returns the (possibly moved) entry. */
struct entry *db_set_expire(int db, unsigned slot, long idx, long long when_ms);

/* Mark (on) or unmark the entry at idx as a hash with field TTLs, so the
 * sweeper calls the hash type's type_ops.expire_fields (types/hash.c) on it. */
void db_set_hfe(int db, unsigned slot, struct entry *e, int on);

/* Entries. */
struct entry *entry_new_string(const char *key, size_t klen, const char *val, size_t vlen, long long expire);
uint8_t string_enc(const char *v, size_t n);
struct entry *entry_new(uint8_t type, const char *key, size_t klen, size_t vlen, long long expire);
/* e with the 16-byte header (entry.h): a value that grows in place past
 * ENTRY_SHORT_VLEN needs it.  Reallocates to the same bytes plus 9 plus
 * extra (room the caller is about to fill); returns the entry, which may
 * have moved: the caller puts it back into its table slot.  A no-op when
 * e is long already (extra is then ignored). */
struct entry *entry_to_long(struct entry *e, size_t extra);
void entry_free(struct entry *e);
/* Copy of an entry with a new key (RENAME/COPY keep type, value, TTL). */
struct entry *entry_dup(struct entry *e, const char *key, size_t klen, int keep_ttl);
/* RENAME: a new entry with the key changed that takes over e's value
 * (collection pointers move): the caller frees only e's shell (hk_free). */
struct entry *entry_rekey(struct entry *e, const char *key, size_t klen);
/* Allocation size of an entry including the value structure. */
size_t entry_mem(struct entry *e);

/* Whole-keyspace helpers: caller holds all locks (db_lock_all). */
unsigned long long db_size(int db);
unsigned long long db_expires(int db);
void db_flush(int db);
/* Take slot s's table of db out of the keyspace (FLUSH ASYNC frees it
 * elsewhere), keeping the per-slot counters right. */
struct table *db_detach(int db, unsigned s);
void db_swap(int a, int b);

/* Expiry sweeper: one pass over the slots [from, to) from *cursor, taking
 * each slot's lock with trylock (a busy slot waits for the next pass:
 * counted in busy) and
 * deleting the expired keys of each slot it visits.  The pass stops at the
 * first of: budget_us spent (timed_out); a batch of at least `batch` keys
 * with a TTL in which at most stale_pct % had expired (the keyspace is
 * clean enough, as Redis's active-expire sampling stops; batch 0: never);
 * the whole range visited.  Out: keys with a TTL looked at, keys removed
 * (also returned), and timed_out (1: stopped by the budget among expired
 * keys, there is likely more to do). */
struct expire_pass {
    long long budget_us;          /* in */
    unsigned batch, stale_pct;    /* in */
    long checked, expired;        /* out */
    int timed_out;                /* out */
    unsigned busy;                /* out: slots with TTLs skipped, locked */
};
long db_active_expire(unsigned from, unsigned to, unsigned *cursor, struct expire_pass *p);

/* Hooks into the layers above (cmd/notify.c installs them at start-up; NULL
 * means nothing to do).  All run with the key's slot lock held.
 *  - db_key_expired_hook: a key was deleted because its TTL passed (lazily
 *    by a lookup or by the sweeper); key points at the removed entry's bytes,
 *    valid for the call only.  (Keyspace event "expired", WATCH.)
 *  - db_hash_expired_hook: the sweeper dropped expired fields of a hash;
 *    deleted: the hash became empty and is about to be removed.
 *  - db_hash_field_expired_hook: types/hash.c dropped a field because its
 *    TTL passed (sweeper, HRANDFIELD), one call per field before it goes:
 *    feeds HDEL key field to the AOF and replicas (cmd/t_hash.c).
 *  - db_stream_gone_hook: a stream key was deleted or overwritten: its
 *    XREADGROUP waiters must be re-run to answer their errors
 *    (cmd/blocking.c: signal_key_ready).
 *  - db_keymiss_hook: a lookup that counts hits/misses found nothing
 *    (keyspace event "keymiss"); set only while that class is enabled.
 *  - db_key_added_hook: db_add() is adding a key (keyspace event "new",
 *    which Redis fires in dbAdd); set only while that class is enabled. */
extern void (*db_key_expired_hook)(int db, unsigned slot, const char *key, size_t klen);
extern void (*db_hash_expired_hook)(int db, unsigned slot, const char *key, size_t klen, int deleted);
extern void (*db_hash_field_expired_hook)(int db, const char *key, size_t klen, const char *field, size_t flen);
extern void (*db_stream_gone_hook)(int db, unsigned slot, const char *key, size_t klen);
extern void (*_Atomic db_keymiss_hook)(int db, const char *key, size_t klen);
extern void (*_Atomic db_key_added_hook)(int db, const char *key, size_t klen);
/*  - db_ttl_set_hook: a key got a TTL (db_add or db_replace of an entry
 *    with one, db_set_expire with one), not by a master's stream nor an
 *    AOF replay; set only while this server is a replica (db/rkeys.h:
 *    a writable replica expires its own keys). */
extern void (*_Atomic db_ttl_set_hook)(int db, const char *key, size_t klen);

/* A writable replica's own key (db/rkeys.c): takes the key's slot lock
 * with a trylock (-1: busy, nothing done).  If the key has a TTL that is
 * past now_ms it is deleted as an expired key (hooks, stats): 2; a TTL
 * still to come: 1; no key or no TTL: 0.  During a client pause nothing
 * expires: 1. */
int db_expire_tracked(int db, const char *key, size_t klen, long long now_ms);

/* now in ms, cached per command (so a MULTI/EXEC sees one instant). */
long long db_now_ms(void);
extern _Thread_local long long db_cmd_time_ms;
/* The same instant in us (0 outside a command): TIME's answer, so that a
 * script or a transaction sees one time throughout, as Redis 7.2's cached
 * ustime. */
extern _Thread_local long long db_cmd_time_us;
/* A fork child (snapshot, AOF rewrite) is running: lookups leave the
 * LRU/LFU field alone so reads do not copy shared pages (persist/snapshot.c
 * sets it). */
extern atomic_int db_child_active;
/* CLIENT NO-TOUCH of the client being served: lookups keep the LRU/LFU. */
extern _Thread_local int db_notouch;
/* This thread is replaying an AOF (persist/aof.c sets it around the load):
 * as Redis while loading, nothing counts as expired (lookups do not delete
 * keys whose TTL passed, commands store TTLs already in the past instead of
 * deleting), so replayed writes rebuild what the original ones built; the
 * key's DEL follows in the stream if it expired before the stop.  Nothing
 * is propagated meanwhile (persist/prop.c). */
extern _Thread_local int db_loading;
/* Redis's checkAlreadyExpired: when (absolute ms) is past for the running
 * command, never while loading. */
int db_already_expired(long long when);
/* This thread runs a command of a replica's master (persist/replica.h):
 * as while loading, nothing counts as expired (the master's DEL decides),
 * but what it writes is propagated (to the replica's AOF). */
extern _Thread_local int db_master_apply;

#endif
