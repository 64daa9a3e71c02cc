/* t_zset.h - zset command handlers.
 * (Owned by t_zset.c; its command table rows are in t_zset.tab.  The
 * sorted-set value itself, for other modules, is types/zset.h.) */
#ifndef HK_T_ZSET_H
#define HK_T_ZSET_H

#include "cmd.h"

cmd_fn zadd_command, zincrby_command, zrem_command, zcard_command, zcount_command, zlexcount_command,
    zscore_command, zmscore_command, zrank_command, zrevrank_command, zrange_command, zrangestore_command,
    zrevrange_command, zrangebyscore_command, zrevrangebyscore_command, zrangebylex_command,
    zrevrangebylex_command, zremrangebyrank_command, zremrangebyscore_command, zremrangebylex_command,
    zpopmin_command, zpopmax_command, zmpop_command, bzpopmin_command, bzpopmax_command, bzmpop_command,
    zrandmember_command, zunion_command, zunionstore_command, zinter_command, zinterstore_command,
    zintercard_command, zdiff_command, zdiffstore_command, zscan_command;

/* Key positions of the movable-key commands (numkeys forms). */
int zset_getkeys_store(struct client *c, int *idx, int max);   /* Z*STORE dst numkeys key.. */
int zset_getkeys_numkeys(struct client *c, int *idx, int max); /* ZUNION/ZINTER/ZDIFF/ZINTERCARD/ZMPOP */
int zset_getkeys_bzmpop(struct client *c, int *idx, int max);  /* BZMPOP timeout numkeys key.. */

#endif
