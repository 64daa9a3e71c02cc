/* evict.c - see evict.h. */
#include "evict.h"
#include "pause.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../base/latency_monitor.h"
#include "../base/log.h"
#include "../base/malloc_stats.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../persist/repl.h"
#include "../persist/replica.h"
#include "../persist/aof.h"
#include "../persist/prop.h"
#include "cmd.h"
#include "multi.h"
#include "notify.h"

volatile int mm_policy = MM_NOEVICTION;
_Thread_local int evict_pre_cmd_oom;
/* Set while evicting from inside a command (CONFIG SET maxmemory, maybe in
 * EXEC with slot locks held): candidates are locked with trylock only. */
static _Thread_local int trylock_only;
/* Set there too: read the process total exactly (mem_used), not the fast
 * estimate: a shrink is rare, and an estimate off by the other threads'
 * unpublished change (< 64 KB each) would evict a little too much or too
 * little. */
static _Thread_local int exact_used;

/* ------------------------------------------------------------ pool --- */
/* Candidates of this thread, ascending by score: the best (most worth
 * evicting) is last.  Keys up to POOL_KEY_INLINE bytes are copied inline,
 * longer ones to the heap (heap != NULL). */
#define POOL_SIZE 16
#define POOL_KEY_INLINE 48
struct cand {
    unsigned long long score;
    int db;
    unsigned slot;
    uint32_t klen;
    char *heap;
    char buf[POOL_KEY_INLINE];
};
static _Thread_local struct cand pool[POOL_SIZE];
static _Thread_local int pool_n;

static inline const char *cand_key(const struct cand *c)
{
    return c->heap ? c->heap : c->buf;
}

static void cand_clear(struct cand *c)
{
    hk_free(c->heap);
    c->heap = NULL;
}

static void pool_insert(unsigned long long score, int db, unsigned slot, const char *key, uint32_t klen)
{
    int k = 0;
    while (k < pool_n && pool[k].score < score)
        k++;
    if (k == 0 && pool_n == POOL_SIZE)
        return; /* worse than every candidate held */
    if (pool_n < POOL_SIZE) {
        memmove(&pool[k + 1], &pool[k], sizeof(pool[0]) * (size_t)(pool_n - k));
        pool_n++;
    } else {
        /* Full: the worst candidate (first) makes room. */
        cand_clear(&pool[0]);
        memmove(&pool[0], &pool[1], sizeof(pool[0]) * (size_t)(k - 1));
        k--;
    }
    struct cand *c = &pool[k];
    c->score = score;
    c->db = db;
    c->slot = slot;
    c->klen = klen;
    if (klen <= POOL_KEY_INLINE) {
        c->heap = NULL;
        memcpy(c->buf, key, klen);
    } else {
        c->heap = hk_memdup(key, klen);
    }
}

void evict_thread_exit(void)
{
    while (pool_n > 0)
        cand_clear(&pool[--pool_n]);
}

/* -------------------------------------------------------- sampling --- */
static inline int policy_volatile(int p)
{
    return p <= MM_VOLATILE_TTL;
}

/* A random set bit of a 16384-bit slot map (the first set bit at or after
 * a random position); NSLOTS when none is set. */
static unsigned pick_slot(const _Atomic uint64_t *bits)
{
    unsigned r = (unsigned)(rand64() % NSLOTS), w = r >> 6;
    uint64_t m = atomic_load_explicit(&bits[w], memory_order_relaxed) & (~0ULL << (r & 63));
    for (unsigned i = 0; i <= NSLOTS / 64; i++) {
        if (m)
            return (w << 6) | (unsigned)__builtin_ctzll(m);
        w = (w + 1) % (NSLOTS / 64);
        m = atomic_load_explicit(&bits[w], memory_order_relaxed);
    }
    return NSLOTS;
}

/* A random slot holding keys the policy may evict; NSLOTS when none.  For
 * the volatile policies slot_sweep also marks slots whose only TTLs are
 * hash fields' (nothing to evict there): from the slot picked, walk on to
 * one with keys that have a TTL (slot_expires), or with many such hashes
 * every try could land on them and read as "nothing to evict" (OOM). */
static unsigned pick_victim_slot(int vol)
{
    unsigned s = pick_slot(vol ? ks.slot_sweep : ks.slot_keys);
    if (!vol || s == NSLOTS)
        return s;
    for (unsigned k = 0; k < NSLOTS; k++, s = (s + 1) % NSLOTS)
        if (atomic_load_explicit(&ks.slot_expires[s], memory_order_relaxed))
            return s;
    return NSLOTS;
}

static inline unsigned long long score_of(int policy, struct entry *e)
{
    switch (policy) {
    case MM_VOLATILE_LRU:
    case MM_ALLKEYS_LRU:
        /* Idle seconds on the 24-bit LRU clock (wraps every 194 days). */
        return ((unsigned long long)lru_clock_now - entry_lru(e)) & 0xffffff;
    case MM_VOLATILE_LFU:
    case MM_ALLKEYS_LFU:
        return 255 - lfu_decr_and_return(entry_lru(e));
    case MM_VOLATILE_TTL:
        return ULLONG_MAX - (unsigned long long)entry_expire(e);
    default:
        return 0;
    }
}

/* The databases with keys at slot s (lock held) as a mask rotated to start
 * at a random database *d0: bit k stands for database (*d0 + k) % 64, so
 * no database is always tried first. */
static inline uint64_t dbs_from_random(unsigned s, int *d0)
{
    uint64_t m = ks.slot_dbs[s];
    int r = (int)(rand64() & 63);
    *d0 = r;
    return r ? (m >> r) | (m << (64 - r)) : m;
}

/* Add up to want keys of each database's table at slot s (lock held) to
 * the pool, from a random position of each; returns how many were seen.
 * Every database is sampled, as Redis samples each one: stopping at want
 * keys over all of them, a big database 0 would fill every sample and the
 * keys of the others would never be seen. */
static int sample_slot(int policy, unsigned s, int want)
{
    int vol = policy_volatile(policy), got = 0;
    /* Only the databases with a table here (slot_dbs: no load of the 15
     * empty ones' table pointers, each a cache miss). */
    for (uint64_t m = ks.slot_dbs[s]; m; m &= m - 1) {
        int d = __builtin_ctzll(m);
        struct table *t = ks.dbs[d]->t[s];
        if (!t || !t->used || (vol && !t->expires))
            continue;
        int mine = 0;
        uint32_t i = (uint32_t)(rand64() % t->cap);
        for (uint32_t n = 0; n < t->cap && mine < want; n++) {
            if (table_full(t, i)) {
                struct entry *e = table_get(t, i);
                if (!vol || (e->flags & E_HAS_EXPIRE)) {
                    pool_insert(score_of(policy, e), d, s, entry_key(e), entry_klen(e));
                    mine++;
                }
            }
            if (++i == t->cap)
                i = 0;
        }
        got += mine;
    }
    return got;
}

static int pool_fill(int policy)
{
    int want = __atomic_load_n(&cfg.maxmemory_samples, __ATOMIC_RELAXED), got = 0;
    int vol = policy_volatile(policy);
    if (want < 1)
        want = 1;
    for (int tries = 0; got < want && tries < 16; tries++) {
        unsigned s = pick_victim_slot(vol);
        if (s == NSLOTS)
            break;
        /* A busy slot is skipped, but if every try found its slot busy (all
         * keys in a few slots, written by other threads) the last one waits:
         * seeing nothing would read as "nothing to evict" (OOM). */
        if (!spin_trylock(&ks.locks[s]) && (tries < 15 || got > 0 || trylock_only || db_lock_one_ex(s, 1) != 0))
            continue;
        got += sample_slot(policy, s, want - got);
        spin_unlock(&ks.locks[s]);
    }
    return got;
}

/* -------------------------------------------------------- deleting --- */
/* Delete the key at (d, s, idx), slot lock held; returns the bytes this
 * thread's allocator counters show as freed. */
static long long evict_at(int d, unsigned s, long idx)
{
    long long before = mem_thread_net();
    struct entry *e = db_unlink(d, s, idx);
    notify_keyspace_event(NOTIFY_EVICTED, "evicted", entry_key(e), entry_klen(e), d);
    signal_modified_key(NULL, d, s, entry_key(e), entry_klen(e)); /* WATCH, tracking */
    prop_key_expired(d, entry_key(e), entry_klen(e));              /* DEL to the AOF */
    int saved = lazyfree_ctx;
    lazyfree_ctx = LF_EVICT;
    entry_free(e);
    lazyfree_ctx = saved;
    if (db_tstats)
        STAT_ADD(db_tstats->evicted, 1);
    return before - mem_thread_net();
}

/* One key by a pool policy: -1 when no key could be found, -2 when every
 * candidate found was gone by the time it was locked (contention). */
static long long evict_pooled(int policy)
{
    int vol = policy_volatile(policy);
    for (int round = 0; round < 16; round++) {
        int seen = pool_fill(policy);
        while (pool_n > 0) {
            struct cand *c = &pool[--pool_n];
            long idx;
            long long freed = -1;
            if (trylock_only ? spin_trylock(&ks.locks[c->slot]) : db_lock_one_ex(c->slot, 1) == 0) {
                struct entry *e = db_get_idx(c->db, c->slot, cand_key(c), c->klen, LK_NOTOUCH | LK_NOSTATS, &idx);
                if (e && (!vol || (e->flags & E_HAS_EXPIRE)))
                    freed = evict_at(c->db, c->slot, idx);
                spin_unlock(&ks.locks[c->slot]);
            }
            cand_clear(c);
            if (freed >= 0)
                return freed;
        }
        /* A round that saw nothing proves nothing while slots still hold
         * keys: with the keys in a few slots that writers keep locked (a
         * hash tag), every try may find its slot busy, and the one it
         * waited for emptied meanwhile (spurious OOM under allkeys-*). */
        if (!seen && pick_victim_slot(vol) == NSLOTS)
            return -1;
    }
    /* Keys exist but other threads held, evicted or deleted each
     * candidate first: not "nothing to evict". */
    return -2;
}

/* One key by a random policy: -1 when none could be found. */
static long long evict_random(int policy)
{
    int vol = policy_volatile(policy);
    for (int tries = 0; tries < 64; tries++) {
        unsigned s = pick_victim_slot(vol);
        if (s == NSLOTS)
            return -1;
        /* As pool_fill: the last try waits for a busy slot. */
        if (!spin_trylock(&ks.locks[s]) && (tries < 63 || trylock_only || db_lock_one_ex(s, 1) != 0))
            continue;
        int d0;
        for (uint64_t m = dbs_from_random(s, &d0); m; m &= m - 1) {
            int d = (d0 + __builtin_ctzll(m)) & 63;
            struct table *t = ks.dbs[d]->t[s];
            if (!t || !t->used || (vol && !t->expires))
                continue;
            uint32_t i = (uint32_t)(rand64() % t->cap);
            for (uint32_t n = 0; n < t->cap; n++) {
                if (table_full(t, i) && (!vol || (table_get(t, i)->flags & E_HAS_EXPIRE))) {
                    long long freed = evict_at(d, s, (long)i);
                    spin_unlock(&ks.locks[s]);
                    return freed;
                }
                if (++i == t->cap)
                    i = 0;
            }
        }
        spin_unlock(&ks.locks[s]);
    }
    return -1;
}

/* -------------------------------------------------------- perform --- */
static _Atomic long long exceeded_since_us; /* 0: under the limit */
static _Atomic long long exceeded_total_us;

static void exceeded_start(void)
{
    long long zero = 0;
    if (!atomic_load_explicit(&exceeded_since_us, memory_order_relaxed))
        atomic_compare_exchange_strong(&exceeded_since_us, &zero, mono_us());
}

static void exceeded_stop(void)
{
    long long since = atomic_load_explicit(&exceeded_since_us, memory_order_relaxed);
    if (since && atomic_compare_exchange_strong(&exceeded_since_us, &since, 0))
        atomic_fetch_add(&exceeded_total_us, mono_us() - since);
}

long long evict_exceeded_total_ms(void)
{
    long long since = atomic_load(&exceeded_since_us), t = atomic_load(&exceeded_total_us);
    if (since)
        t += mono_us() - since;
    return t / 1000;
}

long long evict_exceeded_current_ms(void)
{
    long long since = atomic_load(&exceeded_since_us);
    return since ? (mono_us() - since) / 1000 : 0;
}

size_t evict_not_counted(void)
{
    /* The replicas' share of the replication buffer, and the AOF's
     * buffer, are not evicted for (Redis's freeMemoryGetNotCountedMemory). */
    size_t n = repl_buffer_not_counted();
    if (__atomic_load_n(&cfg.appendonly, __ATOMIC_RELAXED))
        n += aof_buffer_bytes();
    return n;
}

size_t evict_used_for_limit(void)
{
    size_t used = mem_used(), nc = evict_not_counted();
    return used > nc ? used - nc : 0;
}

/* Redis's tenacity curve: 50 us per step up to 10 (500 us at the default),
 * then 15% more per step; 100 means no limit. */
static long long time_limit_us(void)
{
    int t = __atomic_load_n(&cfg.maxmemory_eviction_tenacity, __ATOMIC_RELAXED);
    if (t <= 10)
        return 50LL * t;
    if (t < 100)
        return (long long)(500.0 * pow(1.15, t - 10.0));
    return LLONG_MAX;
}

static inline size_t used_now(size_t nc)
{
    size_t u = exact_used ? mem_used() : mem_used_fast();
    return u > nc ? u - nc : 0;
}

int evict_perform(void)
{
    long long maxmem = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
    if (maxmem <= 0)
        return EVICT_OK;
    /* A client pause stops eviction too (the dataset must not change). */
    if (atomic_load_explicit(&pause_actions, memory_order_relaxed))
        return EVICT_OK;
    /* A replica leaves eviction to its master (replica-ignore-maxmemory). */
    if ((atomic_load_explicit(&replica_gate, memory_order_relaxed) & RG_REPLICA) &&
        __atomic_load_n(&cfg.replica_ignore_maxmemory, __ATOMIC_RELAXED))
        return EVICT_OK;
    size_t used = exact_used ? mem_used() : mem_used_fast();
    if (used <= (size_t)maxmem) {
        if (atomic_load_explicit(&exceeded_since_us, memory_order_relaxed))
            exceeded_stop();
        return EVICT_OK;
    }
    size_t nc = evict_not_counted();
    used = used > nc ? used - nc : 0;
    if (used <= (size_t)maxmem) {
        exceeded_stop();
        return EVICT_OK;
    }
    exceeded_start();
    int policy = __atomic_load_n(&mm_policy, __ATOMIC_RELAXED);
    if (policy == MM_NOEVICTION)
        return EVICT_FAIL;

    long long to_free = (long long)(used - (size_t)maxmem), freed = 0, limit = time_limit_us();
    long long start = mono_us();
    unsigned long keys = 0;
    while (freed < to_free) {
        long long got = (policy == MM_ALLKEYS_RANDOM || policy == MM_VOLATILE_RANDOM) ? evict_random(policy)
                                                                                        : evict_pooled(policy);
        if (got == -2)
            return EVICT_RUNNING; /* others are evicting the same keys: go ahead */
        if (got < 0)
            break; /* nothing left that this policy may evict */
        freed += got;
        keys++;
        /* What was freed reaches the shared total now: the other workers
         * check against it meanwhile, and would evict it over again. */
        mem_publish();
        if ((keys & 15) == 0) {
            /* Other threads (and the lazyfree thread) free memory too:
             * look at the whole process again. */
            if (used_now(nc) <= (size_t)maxmem) {
                freed = to_free;
                break;
            }
            if (mono_us() - start > limit) {
                latency_sample("eviction-cycle", (mono_us() - start) / 1000);
                return EVICT_RUNNING;
            }
        }
    }
    if (keys)
        latency_sample("eviction-cycle", (mono_us() - start) / 1000); /* base/latency_monitor.h */
    if (freed >= to_free || used_now(nc) <= (size_t)maxmem) {
        exceeded_stop();
        return EVICT_OK;
    }
    /* Values on their way out on the lazyfree thread: give it a moment. */
    if (lazyfree_pending()) {
        usleep((useconds_t)(limit < 1000 ? 1000 : limit > 100000 ? 100000 : limit));
        if (used_now(nc) <= (size_t)maxmem) {
            exceeded_stop();
            return EVICT_OK;
        }
    }
    return EVICT_FAIL;
}

void evict_cron(long long budget_us)
{
    long long start = mono_us();
    /* This worker's change reaches the shared total even when it runs no
     * command (an idle worker that freed or allocated a lot would keep
     * the estimate of every other thread off by that much). */
    mem_publish();
    if (!atomic_load_explicit(&exceeded_since_us, memory_order_relaxed))
        return;
    while (evict_perform() == EVICT_RUNNING && mono_us() - start < budget_us)
        ;
}

/* CONFIG SET maxmemory: a smaller limit evicts now, on the thread that set
 * it (Redis starts its eviction timer). */
static void maxmemory_changed(void)
{
    long long maxmem = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
    static atomic_int tuned = -1;
    int want = maxmem > 0;
    if (atomic_exchange(&tuned, want) != want)
        alloc_tune_for_limit(want);
    if (maxmem <= 0)
        return;
    size_t used = evict_used_for_limit();
    if (used > (size_t)maxmem)
        log_msg(LL_WARNING,
                "WARNING: the new maxmemory value set via CONFIG SET (%lld) is smaller than the current memory usage (%zu). "
                "This will result in key eviction and/or the inability to accept new write commands depending on the "
                "maxmemory-policy.",
                maxmem, used);
    if (nworkers > 0) {
        /* Up to a second here; the cron and later commands finish it. */
        long long start = mono_us();
        trylock_only = exact_used = 1;
        while (evict_perform() == EVICT_RUNNING && mono_us() - start < 1000000)
            ;
        trylock_only = exact_used = 0;
    }
}

/* CONFIG SET maxmemory (config.c); before evict_init() a value from the
 * config file or arguments waits for evict_init(). */
static int evict_ready;
void evict_maxmemory_changed(void)
{
    if (evict_ready)
        maxmemory_changed();
}

void evict_init(void)
{
    evict_ready = 1;
    if (__atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) > 0)
        maxmemory_changed(); /* set in the config file or arguments */
}
