/* tracking.h - server-assisted client-side caching (CLIENT TRACKING), as
 * Redis 7.2+ (cmd/tracking.c).
 *
 * Default mode: the keys a tracking client reads (CMD_READONLY commands)
 * are remembered in an invalidation table, key -> client ids, kept per slot
 * and guarded by that slot's lock (rule 1).  A write to a remembered key
 * (signal_modified_key -> tracking_invalidate_key, slot lock held) removes
 * the key from the table and schedules one invalidation per id.  BCAST
 * mode: a global prefix table (its own rwlock, never taken under a slot
 * lock) lists the clients per prefix; every modified key is noted and
 * matched against the prefixes after the command.
 *
 * Delivery never touches another worker's client: the writing thread
 * batches what it found (thread-local) and, once its command is over and
 * its locks are released (tracking_cmd_end), posts one job per worker that
 * owns a recipient (worker_post, FIFO per worker).  The owner looks the id
 * up in its own id -> client map (clients that ever used tracking or are a
 * redirect target), checks the client's tracking mode there and appends the
 * RESP3 push, or forwards the message to the REDIRECT client's worker,
 * which appends a push (RESP3) or a `__redis__:invalidate` pub/sub message
 * (RESP2 subscriber), or sends `tracking-redir-broken` back when that
 * client is gone.  A client freed in between is simply not found.
 * Invalidations caused by a client's own command reach it after that
 * command's reply (after EXEC's, after a script's), as in Redis.
 *
 * Hooks (the few lines other files call):
 *   cmd_execute: tracking_cmd_begin(c) first, tracking_cmd_end(c) last;
 *                tracking_remember_keys(c) after the handler, locks held;
 *   cmd_call (EXEC, scripts): tracking_remember_keys(c) after the handler;
 *   signal_modified_key: tracking_invalidate_key();
 *   signal_flushed_db: tracking_invalidate_all();
 *   client_close: tracking_client_gone(); RESET: tracking_client_reset();
 *   worker cron: tracking_cron(). */
#ifndef HK_TRACKING_H
#define HK_TRACKING_H

#include <stdatomic.h>
#include <stddef.h>

#include "../base/util.h"
#include "cmd.h"

/* The client whose top-level command runs on this thread (NULL between
 * commands), and whether this thread has invalidations to send. */
extern _Thread_local struct client *tracking_cur;
extern _Thread_local int tracking_pending;
/* Set once any client has enabled tracking (the fast-path test). */
extern atomic_int tracking_used;
/* CONFIG tracking-table-max-keys (0 = no limit). */
extern long long tracking_table_max_keys;

void tracking_cmd_begin_slow(void);
void tracking_flush(void);
void tracking_cmd_done_client(struct client *c);
void tracking_remember_keys_slow(struct client *exec);

/* cmd_execute, first thing (no lock held): c is the running client. */
static inline void tracking_cmd_begin(struct client *c)
{
    if (tracking_cur)
        return; /* nested: the outer command's client stays current */
    tracking_cur = c;
    if (HK_UNLIKELY(atomic_load_explicit(&tracking_used, memory_order_relaxed)))
        tracking_cmd_begin_slow();
}

/* cmd_execute, last thing (locks released, blocked clients served): sends
 * what the command invalidated, ends CLIENT CACHING's one-command scope. */
static inline void tracking_cmd_end(struct client *c)
{
    if (tracking_cur != c && tracking_cur)
        return;
    tracking_cur = NULL;
    if (HK_UNLIKELY(tracking_pending))
        tracking_flush();
    if (HK_UNLIKELY(c->flags & CF_TRACKING))
        tracking_cmd_done_client(c);
}

/* After a command ran for exec (a client, EXEC's queued command or a
 * script's redis.call), with its slot locks still held: if it is read-only
 * and the current client tracks (default mode), remember its keys.  The
 * tracking client is the top-level one (tracking_cur), the keys are exec's
 * (Redis 7.2+: a script tracks the keys its commands read). */
static inline void tracking_remember_keys(struct client *exec)
{
    const struct client *t = tracking_cur ? tracking_cur : exec;
    if (HK_UNLIKELY(t->flags & CF_TRACKING) && (exec->cmd->flags & CMD_READONLY))
        tracking_remember_keys_slow(exec);
}

/* A key was modified (signal_modified_key; caller holds its slot lock).
 * c: the modifying client, NULL for expiry/eviction.  db is not used: the
 * invalidation table is global, as in Redis. */
void tracking_invalidate_key(struct client *c, int db, unsigned slot, const char *key, size_t klen);
/* FLUSHDB / FLUSHALL (all locks held): every tracking client gets the null
 * invalidation ("all keys") and the table is emptied. */
void tracking_invalidate_all(struct client *c, int db);

/* Worker cron (no lock held): tracking-table-max-keys, pending sends. */
void tracking_cron(struct worker *w);
/* Client life cycle (owner thread). */
void tracking_client_gone(struct client *c); /* client_close, if c->trk */
void tracking_client_reset(struct client *c); /* RESET */

/* CLIENT LIST / INFO: flags t R B appended at p (returns the new end) and
 * redir= (-1 when not tracking). */
char *tracking_flags_str(const struct client *c, char *p);
long long tracking_redir(const struct client *c);
/* Bytes c's tracking state holds (client_mem_usage). */
size_t tracking_client_mem(const struct client *c);
/* INFO: tracking_clients, tracking_total_keys/items/prefixes. */
long tracking_num_clients(void);
long long tracking_total_keys(void);
long long tracking_total_items(void);
long long tracking_total_prefixes(void);

/* CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO. */
cmd_fn client_tracking_command, client_caching_command, client_getredir_command, client_trackinginfo_command;

#endif
