/* t_set.h - set command handlers and the helpers other modules use.
 * (Owned by t_set.c; its command table rows are in t_set.tab.) */
#ifndef HK_T_SET_H
#define HK_T_SET_H

#include "cmd.h"

cmd_fn sadd_command, srem_command, smove_command, sismember_command, smismember_command, scard_command,
    smembers_command, spop_command, srandmember_command, sinter_command, sintercard_command, sinterstore_command,
    sunion_command, sunionstore_command, sdiff_command, sdiffstore_command, sscan_command;

/* SINTERCARD numkeys key [key ...]: the key positions (none when numkeys
 * is invalid: the handler then replies the error without touching keys). */
int sintercard_getkeys(struct client *c, int *idx, int max);

/* RDB snapshots and DUMP/RESTORE (persist/rdb_types.c): a set built member
 * by member.  set_load_new: an empty set entry (not in the keyspace) for
 * about hint members (intset, or a pre-sized hashtable past
 * set-max-intset-entries); set_load_add: add s, converting as SADD does
 * (1 added, 0 already there); set_load_finish: the entry in the form SADD
 * would leave it (a small structure moves inline: e is freed and the new
 * entry returned). */
struct entry *set_load_new(const char *key, size_t klen, long long expire, size_t hint);
int set_load_add(struct entry *e, const char *s, size_t len);
struct entry *set_load_finish(struct entry *e);

#endif
