/* shutdown.h - SHUTDOWN, and a shutdown's wait for lagging replicas
 * (Redis 7's shutdown-timeout).
 *
 * A shutdown (SIGTERM, SIGINT or SHUTDOWN without NOW) on a server with
 * replicas attached first pauses writes (a pause of its own, cmd/pause.h)
 * and asks the replicas for an ACK; it goes on once every replica is
 * online and has acknowledged the whole stream, or when shutdown-timeout
 * seconds have passed (0: no wait).  Meanwhile INFO shows
 * shutdown_in_milliseconds, reads are served, writes wait, and each
 * SHUTDOWN client is blocked (INFO blocked_clients); SHUTDOWN ABORT ends
 * the wait: writes resume and the blocked SHUTDOWN clients get "ERR Errors
 * trying to SHUTDOWN. Check logs.".  A SHUTDOWN that goes through gets no
 * reply: its connection closes as the server exits.
 *
 * A SIGTERM or SIGINT that arrives while DEBUG PAUSE-CRON holds the
 * periodic work is held back (Redis acts on a signal from its cron): the
 * shutdown starts once the cron runs again, SHUTDOWN ABORT cancels it, a
 * SHUTDOWN command goes ahead of it, and a further SIGINT exits at once.
 *
 * Threads: the main thread (server.c) begins, polls and ends the wait;
 * any worker may run SHUTDOWN, SHUTDOWN ABORT and INFO.  The state is
 * under sd_mu (shutdown.c); INFO reads an atomic copy of the deadline.
 * Lock order: sd_mu before the pause's and the replication buffer's
 * locks. */
#ifndef HK_CMD_SHUTDOWN_H
#define HK_CMD_SHUTDOWN_H

#include <stdatomic.h>

/* The last SHUTDOWN command's flags (server.h SHUTDOWN_FLAG_*),
 * for the main thread when its SIGTERM comes from the command. */
extern atomic_int shutdown_cmd_flags;

/* Main thread: a signal's shutdown is held back (DEBUG PAUSE-CRON). */
void shutdown_hold(void);
/* Main thread: 1 while the held-back shutdown stands (take: and ends the
 * hold, the caller goes on with it), 0 once SHUTDOWN ABORT cancelled it. */
int shutdown_held(int take);
/* Main thread: a shutdown is asked for with these flags.  1: the wait
 * has begun (writes paused); poll it (the first poll that finds a
 * replica lagging asks the replicas for an ACK).
 * 0: go on now (NOW, shutdown-timeout 0, or no replica attached). */
int shutdown_begin(int flags);
/* Main thread, every few milliseconds while waiting: 1 go on (every
 * replica in sync, or the time is up), 0 wait more, -1 the wait was
 * aborted (SHUTDOWN ABORT): the server runs on. */
int shutdown_poll(void);
/* Main thread, when the shutdown would go on (at once, or after the
 * wait): 1 it may; 0 it must not, and was called off, as Redis's
 * finishShutdown fails: the AOF is still being written for the first time
 * and flags lack SHUTDOWN_FLAG_FORCE.  Then writes resume, the blocked
 * SHUTDOWN clients get "ERR Errors trying to SHUTDOWN. Check logs." and
 * the server runs on. */
int shutdown_may_finish(int flags);
/* Main thread, as the shutdown goes on: Redis's log lines on the
 * replicas ("Lagging replica ...", "N of M replicas are in sync when
 * shutting down."). */
void shutdown_log_replicas(void);
/* INFO server: milliseconds left of the wait, or -1 when none. */
long long shutdown_wait_left_ms(void);

#endif
