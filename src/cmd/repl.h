/* repl.h - the replication commands' handlers (cmd/repl.c): REPLCONF,
 * PSYNC and ROLE, the commands side of persist/repl.c (the master). */
#ifndef HK_CMD_REPL_H
#define HK_CMD_REPL_H

#include "cmd.h"

cmd_fn replconf_command, psync_command, role_command;
/* c is closing: drop its REPLCONF settings. */
void repl_client_gone(struct client *c);

#endif
