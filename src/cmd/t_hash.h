/* t_hash.h - hash command handlers and what they export to the command
 * table and start-up.  (Owned by t_hash.c; its command table rows are in
 * t_hash.tab.)  The hash value layer is types/hash.h. */
#ifndef HK_T_HASH_H
#define HK_T_HASH_H

#include "cmd.h"

cmd_fn hset_command, hsetnx_command, hget_command, hmset_command, hmget_command, hdel_command, hlen_command,
    hstrlen_command, hexists_command, hkeys_command, hvals_command, hgetall_command, hincrby_command,
    hincrbyfloat_command, hrandfield_command, hscan_command, hexpire_command, hpexpire_command, hexpireat_command,
    hpexpireat_command, httl_command, hpttl_command, hexpiretime_command, hpexpiretime_command, hpersist_command,
    hgetdel_command, hgetex_command, hsetex_command;

/* HDEL <key> <field> to the AOF and replicas for a field dropped because
 * its TTL passed (notify_init installs it as db_hash_field_expired_hook). */
void hash_prop_field_expired(int db, const char *key, size_t klen, const char *f, size_t flen);

#endif
