/* pause.h - CLIENT PAUSE / CLIENT UNPAUSE, with Redis 7's rules.
 *
 * A pause has an end time (unix ms) and a mode.  WRITE postpones every
 * command that may write or replicate (CMD_WRITE or CMD_MAY_REPLICATE, a
 * script's own declared flags, an EXEC whose queue holds one); ALL
 * postpones every command.  Both also stop expiry (lazy deletes from reads
 * and the active sweep: an expired key reads as missing but stays) and
 * eviction, so the dataset does not change while paused.  Several pauses
 * merge as Redis merges them: the latest end and the most restrictive mode
 * win; CLIENT UNPAUSE ends it at once.
 *
 * A postponed command is not run and not consumed: the dispatcher flags
 * the client CF_POSTPONED, net/ leaves the command in the query buffer and
 * reads nothing more from it, and the client joins its worker's list of
 * postponed clients (arrival order).  When the pause ends (CLIENT UNPAUSE,
 * a new CLIENT PAUSE that is less restrictive, or the end time as seen by
 * each worker's loop), every worker re-runs its postponed clients' input in
 * the order they arrived; a command still paused is postponed again.  The
 * order across workers is that of concurrent commands: none.
 *
 * Threads: the pause state (pause_actions, the end time) is atomic; it is
 * changed under pause_mu.  Each worker's postponed list is touched only by
 * its own thread. */
#ifndef HK_CMD_PAUSE_H
#define HK_CMD_PAUSE_H

#include <stdatomic.h>

#include "cmd.h"

#define PAUSE_CLIENT_WRITE 1u
#define PAUSE_CLIENT_ALL 2u /* more restrictive than WRITE */

/* 0 when nothing is paused: the dispatcher's whole cost. */
extern atomic_uint pause_actions;

/* Dispatcher (pause_actions != 0): 1 if c's command must wait; then the
 * client has been postponed (CF_POSTPONED, on its worker's list). */
int pause_postpone_if_paused(struct client *c, const struct cmd *cmd);

/* CLIENT PAUSE <timeout> [WRITE|ALL] and CLIENT UNPAUSE (cmd/conn.c). */
void pause_client_pause(struct client *c);
void pause_client_unpause(struct client *c);

/* FAILOVER (cmd/repl.c): writes wait from on until off, whatever CLIENT
 * PAUSE / UNPAUSE do meanwhile (Redis's separate pause purposes). */
void pause_failover_writes(int on);
/* A shutdown waiting for lagging replicas (cmd/shutdown.c): the same, as
 * a purpose of its own. */
void pause_shutdown_writes(int on);

/* The client is closing: off its worker's postponed list. */
void pause_client_gone(struct client *c);
/* Loop hook: ms until this worker must look at the pause again (its end
 * time, when it holds postponed clients), or -1; resumes them when the
 * pause is over. */
long long pause_next_timeout(struct worker *w, long long now_ms);
/* Per-worker lists (before the workers start). */
void pause_init_workers(int n);
/* INFO blocked_clients counts postponed clients, as Redis does. */
long long pause_postponed_clients(void);

#endif
