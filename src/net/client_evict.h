/* client_evict.h - client eviction (maxmemory-clients), Redis 7.0's rule
 * on HotKV's worker threads.
 *
 * The rule.  When the memory held by all connections (client_mem_usage():
 * query buffer, output buffers, argv arrays, the struct, MULTI queue and
 * WATCHed keys, pub/sub names, tracking prefixes; the tot-mem of CLIENT
 * LIST) exceeds the limit, the biggest clients are disconnected, one at a
 * time, until the total is back at or under it.  (Redis's loop runs while
 * total >= limit; its own tests expect a total equal to the limit to be
 * kept, which Redis passes only because its figure for a NO-EVICT client
 * is refreshed by its cron alone.  HotKV's figures are exact, so it stops
 * at total <= limit.)  Clients with CLIENT NO-EVICT on are counted but
 * never evicted.  The limit: maxmemory-clients bytes, or N% of maxmemory
 * (no limit while maxmemory is 0), never under 128 KB; 0 turns it off.
 * INFO stats evicted_clients counts the evictions (per worker, summed).
 *
 * Accounting.  A client belongs to its worker (only that thread may read
 * it), so each worker keeps the figures of its own clients: c->cev_mem is
 * what the client was last counted at, the worker's sum is the sum of
 * those, and a process-wide atomic total receives every change (one
 * fetch_add when a client's figure changes, which is rare: buffers keep
 * their capacity between commands).  While the feature is on a client is
 * recounted after each command it runs, after each read (a big argument's
 * buffer is sized as soon as its header is parsed, as Redis does), after
 * pushed output (pub/sub messages, invalidations), when its output drains,
 * and in its worker's cron (every 1000/hz ms, which also catches a change
 * that passed none of those points).  The output-buffer limit is applied
 * before the recount: a client it closes (CF_CLOSE_ASAP) counts 0, so that
 * limit takes precedence, as in Redis.
 *
 * Who evicts.  Each worker publishes `top`, an upper bound of its biggest
 * evictable client (exact after each of its scans, raised at once when a
 * client grows, lowered only by the next scan).  A worker that finds the
 * total over the limit (at a recount point, or in its cron) scans its own
 * clients, biggest first, and evicts while its biggest is at least every
 * other worker's top; when another worker's top is bigger it posts that
 * worker one job (never more than one queued) which does the same there.
 * A stale top costs one hop: the asked worker rescans, lowers its top and
 * passes the request on.  An evicted client is flagged CF_CLOSE_ASAP with
 * its pending output dropped and leaves the total at once; its worker
 * closes it at the end of the loop turn (never in the middle of one), as
 * CLIENT KILL does, and CLIENT LIST no longer shows it.
 *
 * Slack (for docs/architecture.md): the total lags what other workers have
 * not processed yet: a client that grew on another worker is counted when
 * that worker recounts it (after its command or read, or at its cron for a
 * change that passed no recount point), and one that disconnected counts
 * until its worker has read the EOF, so an evictable client can be evicted
 * for memory that is being freed on another thread at that moment.  A
 * change of maxmemory (with a percentage limit) applies at the next
 * recount point or cron.  The order across workers is biggest first up to
 * a stale top (one hop), and two workers enforcing at the same moment may
 * each evict one client where one would have been enough.  CONFIG SET
 * maxmemory-clients instead enforces exactly before it replies: every
 * worker recounts its clients and sends its candidates, the caller picks
 * the biggest (globally sorted) until the total is at or under the limit,
 * and every worker flags its own.
 *
 * Cost when off: one relaxed load and a branch (cev_enabled()) at each
 * recount point; nothing else runs.  When on, about 140 instructions per
 * command (a recount is O(1): no walk over subscriptions or prefixes). */
#ifndef HK_CLIENT_EVICT_H
#define HK_CLIENT_EVICT_H

#include <stddef.h>

#include "../base/util.h"
#include "worker.h"
#include "../server.h"

/* CONFIG maxmemory-clients: bytes (> 0), -N for N% of maxmemory, 0 off.
 * Written by CONFIG SET (relaxed atomic store), read by every worker. */
extern long long cev_maxmemory_clients;

static inline int cev_enabled(void)
{
    return __atomic_load_n(&cev_maxmemory_clients, __ATOMIC_RELAXED) != 0;
}

/* The limit in bytes now (0: no limit), Redis's getClientEvictionLimit. */
size_t cev_limit(void);

/* Recount c (its worker's thread; cev_enabled()) and, if the total is
 * over the limit, evict (this worker's clients, or ask another worker).
 * c itself may be flagged CF_CLOSE_ASAP: the caller must stop running its
 * commands (the flag does it in process_input). */
void cev_client_update(struct client *c);
/* Recount c only (its output shrank). */
void cev_client_note(struct client *c);
/* client_close: take c's figure out of the sums (c->cev_mem != 0). */
void cev_client_gone(struct client *c);
/* Worker cron (cev_enabled()): recount every client, publish, enforce. */
void cev_worker_cron(struct worker *w);

/* CONFIG SET maxmemory-clients.  Parse with Redis's rules (a memory value
 * with units, or "N%" with 0 <= N <= 100); 0 ok, -1 with err. */
int cev_config_parse(const char *s, long long *out, char *err, size_t errlen);
/* CONFIG GET: the value as set ("N%" for a percentage). */
void cev_config_format(char *buf, size_t cap);
/* The value changed at run time (workers exist, no slot lock held by a
 * caller that cannot serve jobs): enforce it now, exactly, on every worker,
 * before returning. */
void cev_config_changed(void);

#endif
