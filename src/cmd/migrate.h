/* migrate.h - MIGRATE and RESTORE-ASKING (migrate.c; rows in migrate.tab /
 * migrate.docs), and the per-worker cache of connections to MIGRATE
 * targets. */
#ifndef HK_CMD_MIGRATE_H
#define HK_CMD_MIGRATE_H

#include "cmd.h"

cmd_fn migrate_command;

/* MIGRATE's keys: argv[3], or every argument after KEYS when argv[3] is
 * empty (the table's getkeys, so the dispatcher locks them). */
int migrate_getkeys(struct client *c, int *idx, int max);

/* Whether argv[i] of a MIGRATE call is a credential (the AUTH password,
 * AUTH2's user name and password): hidden from the slow log and MONITOR. */
int migrate_arg_redacted(int argc, const char *const *argv, const size_t *lens, int i);

/* The calling worker's cached target connections: those idle for more than
 * 10 s are closed (cron, every 1/hz s); all of them when the worker exits. */
void migrate_cron(void);
void migrate_thread_exit(void);

/* Connections cached by all workers together (INFO migrate_cached_sockets). */
long migrate_cached_sockets(void);

#endif
