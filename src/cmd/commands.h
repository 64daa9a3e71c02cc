/* commands.h - handler prototypes, one block per source file. */
#ifndef HK_COMMANDS_H
#define HK_COMMANDS_H

#include "cmd.h"

/* t_string.c */
cmd_fn set_command, get_command, getex_command, getdel_command, getset_command, setnx_command, setex_command,
    psetex_command, mset_command, msetnx_command, mget_command, append_command, strlen_command, getrange_command,
    setrange_command, incr_command, decr_command, incrby_command, decrby_command, incrbyfloat_command, lcs_command;

/* t_bitops.c */
cmd_fn setbit_command, getbit_command, bitcount_command, bitpos_command, bitop_command, bitfield_command,
    bitfield_ro_command;

/* keys.c */
cmd_fn del_command, unlink_command, exists_command, type_command, rename_command, renamenx_command, copy_command,
    move_command, keys_command, scan_command, randomkey_command, dbsize_command, flushdb_command, flushall_command,
    expire_command, pexpire_command, expireat_command, pexpireat_command, ttl_command, pttl_command,
    expiretime_command, pexpiretime_command, persist_command, touch_command, object_command, memory_command,
    select_command, swapdb_command;

/* conn.c */
cmd_fn acl_command;
cmd_fn ping_command, echo_command, quit_command, reset_command, hello_command, auth_command, client_command;

/* admin.c */
cmd_fn info_command, time_command, lastsave_command, debug_command, shutdown_command, command_command,
    module_command;
/* DEBUG SET-DISABLE-DENY-SCRIPTS 1: scripts may call the DEBUG subcommands
 * that are safe under a script (script/script.c, deny_lifted). */
extern atomic_int debug_script_deny_off;
/* DEBUG SET-SKIP-CHECKSUM-VALIDATION: RESTORE (and FUNCTION RESTORE) skip
 * the payload's CRC, keeping the version check (Redis's test aid for
 * corrupt payloads); any worker writes it, RESTORE reads it. */
extern atomic_int debug_skip_checksum;
/* 1: c is a DEBUG subcommand that needs no key, no lock and no connection
 * (PROTOCOL, LOG, ERROR, SLEEP, STRINGMATCH-LEN, SET-ACTIVE-EXPIRE,
 * PAUSE-CRON): the ones a script may call with the deny lifted, and that
 * take no slot locks there. */
int debug_keyless(const struct client *c);

/* lolwut.c */
cmd_fn lolwut_command;

/* pubsub.c */
cmd_fn subscribe_command, unsubscribe_command, psubscribe_command, punsubscribe_command, ssubscribe_command,
    sunsubscribe_command, publish_command, spublish_command, pubsub_command;

/* Collection types and SORT: each file's own header. */
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_sort.h"
#include "t_zset.h"
#include "t_stream.h"
#include "t_dump.h"

/* Helpers shared between files. */
int getkeys_none(struct client *c, int *idx, int max);
/* Parse EX/PX/EXAT/PXAT argument at argv[i+1] into an absolute ms time;
 * replies and returns -1 on error. unit_ms: 1000 for EX/EXAT. */
int parse_expire_arg(struct client *c, int i, long long unit_ms, int absolute, long long *when, const char *cmdname);
/* Reply with a string entry's value as a bulk string. */
static inline void reply_entry_string(struct client *c, struct entry *e)
{
    size_t n;
    const char *v = entry_val_len(e, &n);
    reply_bulk(&c->out, v, n);
}

#endif
