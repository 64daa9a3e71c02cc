/* t_list.h - list command handlers and what they export to the command
 * table and DEBUG.  (Owned by t_list.c; its command table rows are in
 * t_list.tab.)  The list value layer is types/list.h. */
#ifndef HK_T_LIST_H
#define HK_T_LIST_H

#include "cmd.h"

cmd_fn lpush_command, rpush_command, lpushx_command, rpushx_command, lpop_command, rpop_command, llen_command,
    lrange_command, lindex_command, lset_command, linsert_command, lrem_command, ltrim_command, lpos_command,
    lmove_command, rpoplpush_command, lmpop_command, blpop_command, brpop_command, blmove_command,
    brpoplpush_command, blmpop_command;

/* Key positions of LMPOP / BLMPOP (numkeys at argv[1] / argv[2]). */
int lmpop_getkeys(struct client *c, int *idx, int max);
int blmpop_getkeys(struct client *c, int *idx, int max);

/* DEBUG QUICKLIST-PACKED-THRESHOLD <size>: elements of at least <size>
 * bytes go to plain quicklist nodes of their own (0 restores the default). */
void debug_quicklist_packed_threshold(struct client *c);

#endif
