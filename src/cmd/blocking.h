/* blocking.h - clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, BLMPOP...).
 *
 * A blocking command whose keys hold nothing calls block_on_keys(): the
 * client is parked (its worker stops running its further commands) and a
 * waiter is queued on every key, FIFO per key, in a per-slot registry that
 * the slot's lock protects.  A write that may feed a waiter calls
 * signal_key_ready() under the same lock; at the end of that command (its
 * locks released) the writing thread serves the ready keys: for each
 * waiter, first blocked first, it takes the locks of the waiter's keys and
 * re-executes the waiter's command on its behalf, into a private reply
 * buffer, then hands the reply to the waiter's worker.  The waiter's state
 * word (WAITING -> SERVED / CANCELLED by CAS) decides races between a
 * serve, a timeout, CLIENT UNBLOCK and a disconnect: exactly one wins.
 *
 * Handlers see one rule: if nothing can be served now, call block_on_keys
 * and return without replying.  When it is a re-execution (a serve) or the
 * client cannot block (MULTI, scripts), block_on_keys does the right thing
 * (leaves the waiter queued / replies the timeout null). */
#ifndef HK_BLOCKING_H
#define HK_BLOCKING_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct worker;

/* What a client that cannot block (MULTI, scripts) gets at once: RESP2 *-1
 * (BLPOP, BZPOPMIN, BLMPOP, BZMPOP) or $-1 (BLMOVE, BRPOPLPUSH); RESP3 null
 * for both.  A timeout after blocking is always *-1, as in Redis. */
enum { BLOCK_NULL_ARRAY = 0, BLOCK_NULL_BULK = 1 };

/* Parse the timeout argument argv[i] (seconds as a double, 0 = forever)
 * into an absolute deadline in ms (0 = forever).  Replies Redis's error
 * and returns -1 on bad input. */
int parse_block_timeout(struct client *c, int i, long long *deadline_ms);

/* Block c on the keys at argv indexes kidx[0..n-1] until one of them holds
 * a value of type `type` (OBJ_LIST or OBJ_ZSET).  deadline_ms: absolute,
 * 0 = forever.  null_kind: BLOCK_NULL_*.
 *
 * Streams (XREAD, type OBJ_STREAM; XREADGROUP, type BLOCK_STREAM_GROUP):
 * a serve does not consume anything, so every stream waiter of a ready key
 * is re-executed in FIFO order (each once per serve), and one that finds
 * nothing new stays queued without stopping the others.  The handler
 * passes argv with its IDs resolved ('$' -> the last ID at block time).
 * XREADGROUP waiters are also re-executed when the key is deleted or holds
 * another type (the handler then replies Redis's UNBLOCKED error): db.c
 * signals a stream key that goes away. */
#define BLOCK_STREAM_GROUP 0x40
void block_on_keys(struct client *c, const int *kidx, int n, int type, long long deadline_ms, int null_kind);

/* Blocked on a condition rather than a key (WAIT, WAITAOF: cmd/repl.c).
 * The waiter lives on its worker only (no key queue, nobody else claims
 * it): check(c, arg, timed_out) runs on that worker, from
 * blocking_check_cb() and at the deadline (timed_out 1, when it must
 * reply); it writes the reply and returns 1 when the wait is over, else 0.
 * ended(c, arg) runs once when the waiter goes, however it ends (reply,
 * timeout, CLIENT UNBLOCK, the client closing).  CLIENT UNBLOCK replies
 * the timeout's reply (check with timed_out 1) or the UNBLOCKED error.  A
 * client that cannot block (MULTI, scripts) is the caller's to answer. */
struct block_cb {
    int (*check)(struct client *c, const long long *arg, int timed_out);
    void (*ended)(struct client *c, const long long *arg);
};
#define BLOCK_CB_ARGS 6
void block_on_cb(struct client *c, const struct block_cb *cb, const long long *arg, long long deadline_ms);
/* On worker wk's thread: ask every condition waiter of wk again. */
void blocking_check_cb(struct worker *wk, void *unused);

/* The dispatcher: c's command just blocked after dur_us of execution.
 * Its call is counted (INFO commandstats, latency histogram) when it ends:
 * served, timed out or unblocked, not now (Redis 7.2). */
void blocking_note_call(struct client *c, unsigned long long dur_us);

/* Whether the running command is a serve's re-execution of a blocked
 * client's command (on the serving thread). */
int blocking_in_reexec(void);

/* The key (db, slot, key) may now feed a waiter: a push, an add, or a new
 * key created or moved in.  Caller holds the slot's lock.  Costs one load
 * when nobody waits in that slot. */
void signal_key_ready(int db, unsigned slot, const char *key, size_t klen);

/* Every key of db with waiters (SWAPDB; caller holds all locks). */
void blocking_signal_db(int db);

/* Dispatcher: serve the keys signalled by the command just run (no lock
 * held by the caller).  Cheap when nothing was signalled. */
void blocking_serve_ready(void);

/* Worker side. */
void blocking_init_workers(int n);
/* Does worker wk have blocked clients? */
int blocking_any(struct worker *wk);
int client_is_blocked(const struct client *c);
/* Timeouts of this worker's blocked clients; returns ms until the next
 * deadline (or -1 if none). */
long long blocking_cron(struct worker *w, long long now_ms);
/* The client is closing: withdraw its waiter. */
void blocking_client_gone(struct client *c);
/* CLIENT UNBLOCK on the owning worker: 1 if c was blocked and is now
 * unblocked (with a timeout reply, or the UNBLOCKED error if err). */
int blocking_unblock(struct client *c, int err);

/* A worker job: every client of wk blocked in a command gets Redis's
 * "-UNBLOCKED ... instance state changed (master -> replica?)" (the
 * server started following a master: REPLICAOF, FAILOVER). */
/* Cluster mode, from the worker's cron: clients blocked on keys of a slot
 * this node no longer serves (moved, or the cluster is down) get MOVED or
 * CLUSTERDOWN, as Redis's clusterRedirectBlockedClientIfNeeded. */
void blocking_cluster_cron(struct worker *wk);
void blocking_unblock_all(struct worker *wk, void *unused);

/* INFO: blocked clients and keys with waiters. */
long long blocking_clients(void);
long long blocking_keys(void);
/* Keys with a waiter that the key's deletion unblocks (XREADGROUP). */
long long blocking_keys_on_nokey(void);
long long blocking_timeouts(void);

#endif
