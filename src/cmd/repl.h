/* repl.h - the replication commands' handlers (cmd/repl.c): REPLCONF,
 * PSYNC and ROLE, the commands side of persist/repl.c (the master). */
#ifndef HK_CMD_REPL_H
#define HK_CMD_REPL_H

#include "cmd.h"

cmd_fn replconf_command, psync_command, sync_command, role_command, replicaof_command, failover_command;
/* FAILOVER's progress: worker 0's cron (every 1/hz s). */
void repl_failover_cron(void);
/* A command of the master's stream on a replica (c is flagged CF_MASTER):
 * run muted, its bytes added to the replication history. */
void repl_master_execute(struct client *c);
/* WAIT, WAITAOF (the master side: persist/repl.h). */
cmd_fn wait_command, waitaof_command;
/* After a call: record in c the replication offset (repl_tl_woff, then
 * cleared) and, when dirtied and the AOF is on, the AOF position its
 * writes reached.  The dispatcher calls it only when repl_tl_woff is set
 * or the call changed something with the AOF on. */
void wait_note_write(struct client *c, int dirtied);
/* c is closing: drop its REPLCONF settings. */
void repl_client_gone(struct client *c);

/* The clients blocked in a command, on every worker, get -UNBLOCKED
 * (a new master is followed: REPLICAOF, FAILOVER, cluster mode). */
void unblock_everywhere(void);

#endif
