/* evict.h - maxmemory: when a write may go ahead, and which keys make room.
 *
 * The check runs before every top-level command while maxmemory is set
 * (cmd_execute), on the worker that runs the command: a thread that finds
 * the process over its limit evicts keys itself until it is back under, so
 * eviction runs on every thread at once and needs no global lock.
 *
 * Candidates come from sampling, as Redis does: each round draws
 * maxmemory-samples keys from random non-empty slots (taking each slot's
 * lock with trylock, so a busy slot is skipped, never waited for), scores
 * them by the policy (idle time, 255 - LFU counter, or time to expire) and
 * keeps the best 16 in a per-thread pool; the best candidate still present
 * is deleted under its slot lock.  The random policies delete a sampled key
 * directly.  A deletion fires the "evicted" keyspace event, invalidates
 * WATCH and client-side caches, feeds DEL to the AOF and counts in
 * evicted_keys; its value is freed on the lazyfree thread when
 * lazyfree-lazy-eviction is on and it is big.
 *
 * How much was freed is measured with the evicting thread's own allocator
 * counters (base/mem.h), and the whole process's figure is re-read every 16
 * keys; maxmemory-eviction-tenacity bounds the time one call may spend. */
#ifndef HK_EVICT_H
#define HK_EVICT_H

#include <stddef.h>

enum { EVICT_OK = 0, EVICT_RUNNING = 1, EVICT_FAIL = 2 };
/* The order of Redis's maxmemory-policy names (config.c policies[]). */
enum {
    MM_VOLATILE_LRU,
    MM_VOLATILE_LFU,
    MM_VOLATILE_RANDOM,
    MM_VOLATILE_TTL,
    MM_ALLKEYS_LRU,
    MM_ALLKEYS_LFU,
    MM_ALLKEYS_RANDOM,
    MM_NOEVICTION
};
extern volatile int mm_policy; /* set by CONFIG maxmemory-policy */

#define OOM_ERR "OOM command not allowed when used memory > 'maxmemory'."

/* The top-level command being run started while the process was over
 * maxmemory and eviction could not bring it under (Redis's
 * pre_command_oom_state): scripts refuse their first DENYOOM call. */
extern _Thread_local int evict_pre_cmd_oom;

void evict_init(void);
/* maxmemory changed (CONFIG SET): apply it now (no-op before evict_init). */
void evict_maxmemory_changed(void);
/* Evict until under maxmemory.  The caller holds no slot lock.
 * EVICT_OK: under the limit (or no limit); EVICT_RUNNING: still over but
 * the time budget ran out (the next command or the cron goes on);
 * EVICT_FAIL: over and nothing (more) can be evicted. */
int evict_perform(void);
/* Bytes of the process that do not count against maxmemory (the AOF's
 * buffers, as Redis leaves out its AOF buffer). */
size_t evict_not_counted(void);
/* Used memory as maxmemory sees it: used - not counted. */
size_t evict_used_for_limit(void);
/* INFO stats total_eviction_exceeded_time / current_eviction_exceeded_time
 * (ms the process has spent over maxmemory, all time and this stretch). */
long long evict_exceeded_total_ms(void);
long long evict_exceeded_current_ms(void);
/* Worker cron: go on evicting after EVICT_RUNNING when no command comes. */
void evict_cron(long long budget_us);
/* A worker is exiting: drop its candidate pool. */
void evict_thread_exit(void);

#endif
