/* multi.h - transactions, WATCH, and the lock context that EXEC and scripts
 * run in (cmd/multi.c).
 *
 * Lock context: a group of commands that must be atomic against every other
 * thread (EXEC's queue, a Lua script) runs with its slot locks held from the
 * first command to the last.  The context is thread-local and nests (an
 * EVAL inside EXEC joins the outer one).  Keys a command names that the
 * context does not hold yet are acquired on the fly without deadlock (see
 * lockctx_ensure in multi.c); a command that needs the whole keyspace
 * (KEYS, FLUSHALL, SCAN, ...) makes the context take every lock. */
#ifndef HK_MULTI_H
#define HK_MULTI_H

#include <stdatomic.h>

#include "cmd.h"

/* A write changed key (any type, including deletion/expiry/overwrite).
 * Caller holds the key's slot lock.  Marks WATCHing clients dirty and
 * invalidates CLIENT TRACKING caches.  c may be NULL (expiry, eviction). */
void signal_modified_key(struct client *c, int db, unsigned slot, const char *key, size_t klen);
void signal_modified_key_nd(struct client *c, int db, unsigned slot, const char *key, size_t klen);
/* FLUSHDB (db) / FLUSHALL (db = -1): caller holds all locks and calls this
 * BEFORE the data is removed. */
void signal_flushed_db(struct client *c, int db);
/* A replica's full sync replaced every database (all locks held, any
 * thread): every WATCH fails (whether its key was in the old dataset, the
 * new one or neither: the conservative reading of Redis's rule) and
 * tracking clients get the "all keys" invalidation. */
void signal_dataset_replaced(void);
/* SWAPDB a b: all locks held, called BEFORE the swap (as Redis). */
void signal_swapdb(int a, int b);

/* Lock context. */
void lockctx_begin_keys(const unsigned *slots, int n);
void lockctx_begin_all(void);
/* Releases what the outermost begin took.  (Blocked clients fed meanwhile
 * are served by cmd_execute after the command, locks released.) */
void lockctx_end(void);
int lockctx_active(void);
/* Every slot lock is held by this thread (inside a context that took them
 * all, or a CMD_ALL_LOCKS command).  SCAN, RANDOMKEY, SORT BY/GET read it so
 * they do not lock slots they already hold. */
int lockctx_all_held(void);
/* For handlers that lock slots themselves (SCAN, RANDOMKEY, INFO keyspace,
 * DEBUG): inside a lock context the context takes the slot (and keeps it);
 * outside, a plain wait that serves this worker's jobs. */
void slot_lock_self(unsigned s);
void slot_unlock_self(unsigned s);
/* Make sure this thread holds slot s's lock (inside a context). */
void lockctx_ensure(unsigned s);
/* lockctx_ensure, then 1 when the slot is held (0: a parallel script's
 * conflict left it untaken, and lockctx_par_status will say so). */
int lockctx_hold(unsigned s);
void lockctx_ensure_all(void);
/* Script contexts (multi.c's header comment): lockctx_set_script() right
 * after the outermost lockctx_begin_keys of a script; par: the script lock
 * is held shared (a parallel context).  After a cmd_call,
 * lockctx_par_status() says whether the command could not run:
 * LC_PAR_RETRY (nothing with a side effect ran yet: unwind and run the
 * script again alone) or LC_PAR_CONFLICT (it would have waited for a
 * context that may be waiting for it: the command fails; cleared by the
 * read).  lockctx_script_undeclared() says whether the script took a slot
 * beyond the ones it began with.  (Inside EXEC none of this applies.) */
#define LC_PAR_RETRY 1
#define LC_PAR_CONFLICT 2
void lockctx_set_script(int par);
int lockctx_par_status(void);
int lockctx_script_undeclared(void);

/* Run c->argv as command cmd inside the active context: computes the key
 * slots (c->kslot), takes any slot not yet held, runs the handler, counts
 * the call in the command stats.  No auth / pub-sub / NOSCRIPT gates: the
 * caller applies the ones it needs.  The reply goes to c->out. */
void cmd_call(struct client *c, const struct cmd *cmd);

/* Per-client transaction state (NULL when the client never used MULTI/WATCH). */
struct multi_state;
void multi_client_gone(struct client *c); /* RESET / close: discard + unwatch */
int multi_in_progress(const struct client *c);
/* A command was rejected (unknown, arity, ...): EXEC will abort. */
void multi_flag_error(struct client *c);
/* The client is inside MULTI: cmd_execute queues commands. */
int multi_queue_command(struct client *c, const struct cmd *cmd);
/* The union of the flags of the queued commands (CLIENT PAUSE WRITE). */
unsigned multi_queued_flags(const struct client *c);
/* Cluster mode, EXEC on a migrating or importing slot: how many keys of
 * the queued commands are here and how many are not, and whether they are
 * more than one key (Redis's getNodeByQuery over a transaction).  The
 * slot's lock is held by the caller. */
void multi_queued_keys_here(struct client *c, unsigned slot, int *missing, int *existing, int *multiple);
/* 1: some queued command lacks flag (EXEC on a stale replica is refused
 * when one lacks CMD_STALE, as Redis's cmd_inv_flags). */
int multi_queued_lacks(const struct client *c, unsigned flag);
/* The queued transaction holds a DENYOOM command, a script's declared
 * flags counted as they were when it was queued (EXEC is refused when
 * over maxmemory, as Redis does). */
int multi_queued_denyoom(const struct client *c);
/* CLIENT LIST multi= (-1 outside MULTI), watch=, memory; INFO watching. */
int multi_client_queued(const struct client *c);
long multi_client_watched(const struct client *c);
size_t multi_client_mem(const struct client *c);
/* INFO clients: clients watching at least one key, distinct keys watched. */
long multi_watching_clients(void);
long multi_watched_keys(void);

/* Command handlers. */
cmd_fn multi_command, exec_command, discard_command, watch_command, unwatch_command;

#endif
