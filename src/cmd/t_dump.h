/* t_dump.h - DUMP and RESTORE (t_dump.c; rows in t_dump.tab / t_dump.docs). */
#ifndef HK_T_DUMP_H
#define HK_T_DUMP_H

#include "cmd.h"

cmd_fn dump_command, restore_command;

struct entry;
struct rdb_out;
/* The DUMP payload of e (value, RDB version, CRC-64) into o, a memory sink
 * this initializes (the caller frees it with rdb_out_free); -1 when the
 * value cannot be serialized (o is then freed).  Shared with MIGRATE
 * (migrate.c).  Slot lock of e's key held. */
int dump_payload(struct entry *e, struct rdb_out *o);
#define ERR_DUMP_FAILED "ERR DUMP failed: the value cannot be serialized"

#endif
