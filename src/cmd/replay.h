/* replay.h - running an AOF's commands (cmd/replay.c): persist/aof.c reads
 * the files and hands each command to the replayer registered here (struct
 * aof_replayer, persist/aof.h), which looks it up and runs it on a fake
 * client, as a client's command would run, inside a lock context.
 * Users: persistence_init (cmd/persistence.c). */
#ifndef HK_REPLAY_H
#define HK_REPLAY_H

/* Register the replayer with persist/aof.c (start-up, before any load). */
void replay_init(void);

#endif
