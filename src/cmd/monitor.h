/* monitor.h - MONITOR: every command executed on any worker, streamed to
 * the clients in monitor mode in Redis's line format:
 *
 *   +<unix s>.<us> [<db> <ip:port>|lua|unix:<path>] "arg" "arg" ...
 *
 * What is shown: each command after it ran (top level, inside EXEC, from
 * a script as "lua"; EVAL/EVALSHA/FCALL when they start, before what
 * their script runs; EXEC after its commands, also when it is refused), with its arguments quoted as Redis quotes them and
 * AUTH's and HELLO AUTH's credentials replaced by "(redacted)"; never
 * commands flagged admin or skip_monitor, nor the AOF's replay.
 *
 * Order.  A command is fed while it still holds its slot locks (or its
 * EXEC/script context's): the line is appended to every monitor's pending
 * buffer under monitor_mu, so two commands on one slot reach every monitor
 * in the order they ran, whatever threads ran them.  Each monitor's own
 * worker moves its pending bytes to the client (a job posted when the
 * buffer goes non-empty), through the pushed-output path that applies the
 * output-buffer limits: a monitor that reads too slowly is cut there.
 *
 * Cost with no monitor: one relaxed load per command (monitor_count).
 *
 * Threads and locks: monitor_mu guards the registry and the pending
 * buffers; it is a leaf lock (taken with slot locks held, never the other
 * way round).  A monitor client's struct is touched only by its worker. */
#ifndef HK_CMD_MONITOR_H
#define HK_CMD_MONITOR_H

#include <stdatomic.h>

#include "cmd.h"

extern atomic_int monitor_count;

void monitor_feed_slow(struct client *c, const struct cmd *cmd, int script_start);
/* After cmd ran for c, its locks still held. */
static inline void monitor_feed(struct client *c, const struct cmd *cmd)
{
    if (__builtin_expect(atomic_load_explicit(&monitor_count, memory_order_relaxed) != 0, 0))
        monitor_feed_slow(c, cmd, 0);
}
/* Before cmd runs: EVAL/EVALSHA/FCALL (skip_monitor) are shown here, so
 * that the commands their script runs follow them, as in Redis. */
static inline void monitor_feed_script(struct client *c, const struct cmd *cmd)
{
    if (__builtin_expect(atomic_load_explicit(&monitor_count, memory_order_relaxed) != 0, 0) &&
        (cmd->flags & CMD_SKIP_MONITOR) && (cmd->acl & ACL_SCRIPTING))
        monitor_feed_slow(c, cmd, 1);
}

/* MONITOR. */
void monitor_command(struct client *c);
/* c leaves monitor mode (closing, RESET). */
void monitor_client_gone(struct client *c);

#endif
