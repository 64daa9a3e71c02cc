/* persistence.h - the persistence commands' handlers (cmd/persistence.c):
 * SAVE, BGSAVE, BGREWRITEAOF, and the DEBUG RELOAD / DEBUG LOADAOF
 * subcommands, which cmd/admin.c's DEBUG hands over.  The work is done by
 * persist/ (snapshot.h, aof.h); these parse the arguments, take the locks
 * a command holds and turn persist's result codes into Redis's replies.
 *
 * Also the start-up registration of what persist/ needs from cmd/ (it sits
 * below cmd/ and cannot call up): the AOF replayer (cmd/replay.h) and the
 * lock-context queries.  Users: the command table (src/commands.c),
 * admin.c's DEBUG, cmd_init. */
#ifndef HK_PERSISTENCE_H
#define HK_PERSISTENCE_H

#include "cmd.h"

cmd_fn save_command, bgsave_command, bgrewriteaof_command;
/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] (argv[1] is RELOAD). */
void persist_debug_reload(struct client *c);
/* DEBUG LOADAOF. */
void aof_debug_loadaof(struct client *c);

/* Register persist/'s hooks into cmd/ (cmd_init, before any load). */
void persistence_init(void);

#endif
