/* t_set.h - set command handlers.
 * (Owned by t_set.c; its command table rows are in t_set.tab.  The set
 * value itself, for other modules, is types/set.h.) */
#ifndef HK_T_SET_H
#define HK_T_SET_H

#include "cmd.h"

cmd_fn sadd_command, srem_command, smove_command, sismember_command, smismember_command, scard_command,
    smembers_command, spop_command, srandmember_command, sinter_command, sintercard_command, sinterstore_command,
    sunion_command, sunionstore_command, sdiff_command, sdiffstore_command, sscan_command;

/* SINTERCARD numkeys key [key ...]: the key positions (none when numkeys
 * is invalid: the handler then replies the error without touching keys). */
int sintercard_getkeys(struct client *c, int *idx, int max);

#endif
