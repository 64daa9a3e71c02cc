/* commands.c - the command table and the COMMAND DOCS table: the one
 * place that lists every command of every layer (cmd/, script/, config/,
 * the persistence commands), so it sits at the top, with server.c.
 *
 * Each family owns its rows in a .tab file (cmd_table) and a .docs file
 * (cmd_docs) next to its handlers; this file only puts them together.
 * cmd/cmd.c dispatches from cmd_table; cmd/admin.c answers COMMAND from
 * both tables. */
#include <stddef.h>

#include "cmd/acl.h"
#include "cmd/commands.h"
#include "cmd/monitor.h"
#include "cmd/multi.h"
#include "cmd/t_vset.h"
#include "cmd/t_geo.h"
#include "cmd/t_hll.h"
#include "cmd/tracking.h"
#include "config/config.h"
#include "cmd/persistence.h"
#include "cmd/repl.h"
#include "cmd/slowlog.h"
#include "cluster/cluster.h"
#include "cmd/migrate.h"
#include "script/script.h"

#define W CMD_WRITE
#define R CMD_READONLY
#define OOM CMD_DENYOOM
#define F CMD_FAST
#define ADM CMD_ADMIN
#define NS CMD_NOSCRIPT
#define LD CMD_LOADING
#define ST CMD_STALE
#define NA CMD_NO_AUTH
#define ALL CMD_ALL_LOCKS
#define SELF CMD_SELF_LOCKING
#define SELFK (CMD_SELF_LOCKING | CMD_SELF_KEYED)
#define MB CMD_MAY_BROADCAST

#define A_KS ACL_KEYSPACE
#define A_R ACL_READ
#define A_W ACL_WRITE
#define A_STR ACL_STRING
#define A_F ACL_FAST
#define A_S ACL_SLOW
#define A_ADM ACL_ADMIN
#define A_DNG ACL_DANGEROUS
#define A_CONN ACL_CONNECTION
#define A_LIST ACL_LIST
#define A_HASH ACL_HASH
#define A_SET ACL_SET
#define A_ZSET ACL_SORTEDSET
#define A_BLK ACL_BLOCKING
#define BLK CMD_BLOCKING
#define MOV CMD_MOVABLE_KEYS

/* name, fn, arity, flags, first, last, step, acl, group, since */
#define C(n, fn, ar, fl, f, l, s, acl, grp, since) {n, fn, ar, fl, f, l, s, acl, grp, since, NULL, NULL, NULL, 0, NULL}
#define CS(n, fn, ar, fl, f, l, s, acl, grp, since, subs) {n, fn, ar, fl, f, l, s, acl, grp, since, NULL, NULL, subs, 0, NULL}
/* Movable keys: gk(c, idx, max) lists the key argv indexes (flag MOV). */
#define CK(n, fn, ar, fl, f, l, s, acl, grp, since, gk) {n, fn, ar, fl, f, l, s, acl, grp, since, NULL, NULL, NULL, 0, gk}
#define END {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, 0, NULL}

static struct cmd client_subs[] = {
    C("client|id", client_command, 2, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "5.0.0"),
    C("client|setname", client_command, 3, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "2.6.9"),
    C("client|getname", client_command, 2, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "2.6.9"),
    C("client|list", client_command, -2, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "2.4.0"),
    C("client|info", client_command, 2, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "6.2.0"),
    C("client|kill", client_command, -3, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "2.4.0"),
    C("client|unblock", client_command, -3, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "5.0.0"),
    C("client|pause", client_command, -3, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "3.0.0"),
    C("client|unpause", client_command, 2, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "6.2.0"),
    C("client|setinfo", client_command, 4, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "7.2.0"),
    C("client|no-evict", client_command, 3, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG | A_CONN, "connection", "7.0.0"),
    C("client|no-touch", client_command, 3, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "7.2.0"),
    C("client|reply", client_command, 3, NS | LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "3.2.0"),
    C("client|tracking", client_tracking_command, -3, NS | LD | ST, 0, 0, 0, A_S | A_CONN, "connection", "6.0.0"),
    C("client|caching", client_caching_command, 3, NS | LD | ST, 0, 0, 0, A_S | A_CONN, "connection", "6.0.0"),
    C("client|getredir", client_getredir_command, 2, NS | LD | ST, 0, 0, 0, A_S | A_CONN, "connection", "6.0.0"),
    C("client|trackinginfo", client_trackinginfo_command, 2, NS | LD | ST, 0, 0, 0, A_S | A_CONN, "connection", "6.2.0"),
    C("client|help", client_command, 2, LD | ST | MB, 0, 0, 0, A_S | A_CONN, "connection", "5.0.0"),
    END,
};

static struct cmd config_subs[] = {
    C("config|get", config_command, -3, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "2.0.0"),
    C("config|set", config_command, -4, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "2.0.0"),
    C("config|resetstat", config_command, 2, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "2.0.0"),
    C("config|rewrite", config_command, 2, ADM | NS | LD | ST | MB, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "2.8.0"),
    C("config|help", config_command, 2, LD | ST | MB, 0, 0, 0, A_S, "server", "5.0.0"),
    END,
};

static struct cmd command_subs[] = {
    C("command|count", command_command, 2, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "2.8.13"),
    C("command|info", command_command, -2, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "2.8.13"),
    C("command|docs", command_command, -2, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "7.0.0"),
    C("command|list", command_command, -2, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "7.0.0"),
    C("command|getkeys", command_command, -3, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "2.8.13"),
    C("command|getkeysandflags", command_command, -3, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "7.0.0"),
    C("command|help", command_command, 2, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "5.0.0"),
    END,
};

static struct cmd object_subs[] = {
    C("object|encoding", object_command, 3, R, 2, 2, 1, A_KS | A_R | A_S, "generic", "2.2.3"),
    C("object|freq", object_command, 3, R, 2, 2, 1, A_KS | A_R | A_S, "generic", "4.0.0"),
    C("object|idletime", object_command, 3, R, 2, 2, 1, A_KS | A_R | A_S, "generic", "2.2.3"),
    C("object|refcount", object_command, 3, R, 2, 2, 1, A_KS | A_R | A_S, "generic", "2.2.3"),
    C("object|help", object_command, 2, LD | ST, 0, 0, 0, A_KS | A_S, "generic", "6.2.0"),
    END,
};

/* MEMORY STATS and DOCTOR walk every slot (SELF) and read the script
 * caches (script mutex before slots inside EXEC): cmd/memstats.h. */
static struct cmd memory_subs[] = {
    C("memory|doctor", memory_command, 2, SELF | CMD_NEEDS_SCRIPT_MUTEX, 0, 0, 0, A_S, "server", "4.0.0"),
    C("memory|help", memory_command, 2, LD | ST, 0, 0, 0, A_S, "server", "4.0.0"),
    C("memory|malloc-stats", memory_command, 2, 0, 0, 0, 0, A_S, "server", "4.0.0"),
    C("memory|purge", memory_command, 2, 0, 0, 0, 0, A_S, "server", "4.0.0"),
    C("memory|stats", memory_command, 2, SELF | CMD_NEEDS_SCRIPT_MUTEX, 0, 0, 0, A_S, "server", "4.0.0"),
    C("memory|usage", memory_command, -3, R, 2, 2, 1, A_R | A_S, "server", "4.0.0"),
    END,
};

#define PS CMD_PUBSUB
#define A_PS ACL_PUBSUB
static struct cmd pubsub_subs[] = {
    C("pubsub|channels", pubsub_command, -2, PS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.8.0"),
    C("pubsub|numpat", pubsub_command, 2, PS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.8.0"),
    C("pubsub|numsub", pubsub_command, -2, PS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.8.0"),
    C("pubsub|shardchannels", pubsub_command, -2, PS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "7.0.0"),
    C("pubsub|shardnumsub", pubsub_command, -2, PS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "7.0.0"),
    C("pubsub|help", pubsub_command, 2, LD | ST, 0, 0, 0, A_S, "pubsub", "6.2.0"),
    END,
};

/* MODULE (cmd/admin.c): HotKV has no modules; LOAD, LOADEX and UNLOAD are
 * Redis 7's protected subcommands (enable-module-command). */
static struct cmd module_subs[] = {
    C("module|list", module_command, 2, ADM | NS, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "4.0.0"),
    C("module|load", module_command, -3, ADM | NS | CMD_NO_ASYNC_LOADING, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "4.0.0"),
    C("module|loadex", module_command, -3, ADM | NS | CMD_NO_ASYNC_LOADING, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "7.0.0"),
    C("module|unload", module_command, 3, ADM | NS | CMD_NO_ASYNC_LOADING, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "4.0.0"),
    C("module|help", module_command, 2, LD | ST, 0, 0, 0, A_S, "server", "5.0.0"),
    END,
};

#define A_SCR ACL_SCRIPTING
static struct cmd function_subs[] = {
    C("function|delete", function_command, 3, W | NS, 0, 0, 0, A_W | A_S | A_SCR, "scripting", "7.0.0"),
    C("function|dump", function_command, 2, NS, 0, 0, 0, A_S | A_SCR, "scripting", "7.0.0"),
    C("function|flush", function_command, -2, W | NS, 0, 0, 0, A_W | A_S | A_SCR, "scripting", "7.0.0"),
    C("function|help", function_command, 2, LD | ST, 0, 0, 0, A_S | A_SCR, "scripting", "7.0.0"),
    C("function|kill", function_command, 2, NS | CMD_ALLOW_BUSY, 0, 0, 0, A_S | A_SCR, "scripting", "7.0.0"),
    C("function|list", function_command, -2, NS, 0, 0, 0, A_S | A_SCR, "scripting", "7.0.0"),
    C("function|load", function_command, -3, W | OOM | NS, 0, 0, 0, A_W | A_S | A_SCR, "scripting", "7.0.0"),
    C("function|restore", function_command, -3, W | OOM | NS, 0, 0, 0, A_W | A_S | A_SCR, "scripting", "7.0.0"),
    C("function|stats", function_command, 2, NS | CMD_ALLOW_BUSY, 0, 0, 0, A_S | A_SCR, "scripting", "7.0.0"),
    END,
};

static struct cmd script_subs[] = {
    C("script|debug", script_command, 3, NS, 0, 0, 0, A_S | A_SCR, "scripting", "3.2.0"),
    C("script|exists", script_command, -3, NS, 0, 0, 0, A_S | A_SCR, "scripting", "2.6.0"),
    C("script|flush", script_command, -2, NS, 0, 0, 0, A_S | A_SCR, "scripting", "2.6.0"),
    C("script|help", script_command, 2, LD | ST, 0, 0, 0, A_S | A_SCR, "scripting", "5.0.0"),
    C("script|kill", script_command, 2, NS | CMD_ALLOW_BUSY, 0, 0, 0, A_S | A_SCR, "scripting", "2.6.0"),
    C("script|load", script_command, 3, NS | ST, 0, 0, 0, A_S | A_SCR, "scripting", "2.6.0"),
    END,
};

struct cmd cmd_table[] = {
    /* strings */
    C("get", get_command, 2, R | F, 1, 1, 1, A_R | A_STR | A_F, "string", "1.0.0"),
    C("set", set_command, -3, W | OOM, 1, 1, 1, A_W | A_STR | A_S, "string", "1.0.0"),
    C("getex", getex_command, -2, W | F, 1, 1, 1, A_W | A_STR | A_F, "string", "6.2.0"),
    C("getdel", getdel_command, 2, W | F, 1, 1, 1, A_W | A_STR | A_F, "string", "6.2.0"),
    C("getset", getset_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("setnx", setnx_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("setex", setex_command, 4, W | OOM, 1, 1, 1, A_W | A_STR | A_S, "string", "2.0.0"),
    C("psetex", psetex_command, 4, W | OOM, 1, 1, 1, A_W | A_STR | A_S, "string", "2.6.0"),
    C("mset", mset_command, -3, W | OOM, 1, -1, 2, A_W | A_STR | A_S, "string", "1.0.1"),
    C("msetnx", msetnx_command, -3, W | OOM, 1, -1, 2, A_W | A_STR | A_S, "string", "1.0.1"),
    C("mget", mget_command, -2, R | F, 1, -1, 1, A_R | A_STR | A_F, "string", "1.0.0"),
    C("append", append_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "2.0.0"),
    C("strlen", strlen_command, 2, R | F, 1, 1, 1, A_R | A_STR | A_F, "string", "2.2.0"),
    C("getrange", getrange_command, 4, R, 1, 1, 1, A_R | A_STR | A_S, "string", "2.4.0"),
    C("substr", getrange_command, 4, R, 1, 1, 1, A_R | A_STR | A_S, "string", "1.0.0"),
    C("setrange", setrange_command, 4, W | OOM, 1, 1, 1, A_W | A_STR | A_S, "string", "2.2.0"),
    C("incr", incr_command, 2, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("decr", decr_command, 2, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("incrby", incrby_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("decrby", decrby_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "1.0.0"),
    C("incrbyfloat", incrbyfloat_command, 3, W | OOM | F, 1, 1, 1, A_W | A_STR | A_F, "string", "2.6.0"),
    C("lcs", lcs_command, -3, R, 1, 2, 1, A_R | A_STR | A_S, "string", "7.0.0"),
    /* bitmaps */
    C("setbit", setbit_command, 4, W | OOM, 1, 1, 1, A_W | ACL_BITMAP | A_S, "bitmap", "2.2.0"),
    C("getbit", getbit_command, 3, R | F, 1, 1, 1, A_R | ACL_BITMAP | A_F, "bitmap", "2.2.0"),
    C("bitcount", bitcount_command, -2, R, 1, 1, 1, A_R | ACL_BITMAP | A_S, "bitmap", "2.6.0"),
    C("bitpos", bitpos_command, -3, R, 1, 1, 1, A_R | ACL_BITMAP | A_S, "bitmap", "2.8.7"),
    C("bitop", bitop_command, -4, W | OOM, 2, -1, 1, A_W | ACL_BITMAP | A_S, "bitmap", "2.6.0"),
    C("bitfield", bitfield_command, -2, W | OOM, 1, 1, 1, A_W | ACL_BITMAP | A_S, "bitmap", "3.2.0"),
    C("bitfield_ro", bitfield_ro_command, -2, R | F, 1, 1, 1, A_R | ACL_BITMAP | A_F, "bitmap", "6.0.0"),
    /* generic keyspace */
    C("del", del_command, -2, W, 1, -1, 1, A_KS | A_W | A_S, "generic", "1.0.0"),
    C("unlink", unlink_command, -2, W | F, 1, -1, 1, A_KS | A_W | A_F, "generic", "4.0.0"),
    C("exists", exists_command, -2, R | F, 1, -1, 1, A_KS | A_R | A_F, "generic", "1.0.0"),
    C("type", type_command, 2, R | F, 1, 1, 1, A_KS | A_R | A_F, "generic", "1.0.0"),
    C("rename", rename_command, 3, W, 1, 2, 1, A_KS | A_W | A_S, "generic", "1.0.0"),
    C("renamenx", renamenx_command, 3, W | F, 1, 2, 1, A_KS | A_W | A_F, "generic", "1.0.0"),
    C("copy", copy_command, -3, W | OOM, 1, 2, 1, A_KS | A_W | A_S, "generic", "6.2.0"),
    C("move", move_command, 3, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "1.0.0"),
    C("keys", keys_command, 2, R | ALL, 0, 0, 0, A_KS | A_R | A_S | A_DNG, "generic", "1.0.0"),
    C("scan", scan_command, -2, R | SELF, 0, 0, 0, A_KS | A_R | A_S, "generic", "2.8.0"),
    C("randomkey", randomkey_command, 1, R | SELF, 0, 0, 0, A_KS | A_R | A_S, "generic", "1.0.0"),
    C("dbsize", dbsize_command, 1, R | F | ALL, 0, 0, 0, A_KS | A_R | A_F, "server", "1.0.0"),
    C("flushdb", flushdb_command, -1, W | ALL, 0, 0, 0, A_KS | A_W | A_S | A_DNG, "server", "1.0.0"),
    C("flushall", flushall_command, -1, W | ALL, 0, 0, 0, A_KS | A_W | A_S | A_DNG, "server", "1.0.0"),
    C("expire", expire_command, -3, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "1.0.0"),
    C("pexpire", pexpire_command, -3, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "2.6.0"),
    C("expireat", expireat_command, -3, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "1.2.0"),
    C("pexpireat", pexpireat_command, -3, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "2.6.0"),
    C("ttl", ttl_command, 2, R | F, 1, 1, 1, A_KS | A_R | A_F, "generic", "1.0.0"),
    C("pttl", pttl_command, 2, R | F, 1, 1, 1, A_KS | A_R | A_F, "generic", "2.6.0"),
    C("expiretime", expiretime_command, 2, R | F, 1, 1, 1, A_KS | A_R | A_F, "generic", "7.0.0"),
    C("pexpiretime", pexpiretime_command, 2, R | F, 1, 1, 1, A_KS | A_R | A_F, "generic", "7.0.0"),
    C("persist", persist_command, 2, W | F, 1, 1, 1, A_KS | A_W | A_F, "generic", "2.2.0"),
    C("touch", touch_command, -2, R | F, 1, -1, 1, A_KS | A_R | A_F, "generic", "3.2.1"),
    CS("object", NULL, -2, 0, 0, 0, 0, A_S, "generic", "2.2.3", object_subs),
    CS("memory", NULL, -2, 0, 0, 0, 0, A_S, "server", "4.0.0", memory_subs),
    C("select", select_command, 2, LD | ST | F, 0, 0, 0, A_CONN | A_F, "connection", "1.0.0"),
    C("swapdb", swapdb_command, 3, W | F | ALL, 0, 0, 0, A_KS | A_W | A_F | A_DNG, "server", "4.0.0"),
    /* collections (rows owned by each type's file) */
#include "cmd/t_list.tab"
#include "cmd/t_hash.tab"
#include "cmd/t_set.tab"
#include "cmd/t_zset.tab"
#include "cmd/t_geo.tab"
#include "cmd/t_stream.tab"
#include "cmd/t_vset.tab"
#include "cmd/t_dump.tab"
#include "cmd/migrate.tab"
#include "cmd/t_sort.tab"
#include "cmd/t_hll.tab"
#include "cmd/multi.tab"
#include "cmd/slowlog.tab"
#include "cluster/cluster.tab"
#include "cmd/acl.tab"
#include "script/script.tab"
    /* connection */
    C("ping", ping_command, -1, F, 0, 0, 0, A_F | A_CONN, "connection", "1.0.0"),
    C("echo", echo_command, 2, F | LD | ST, 0, 0, 0, A_F | A_CONN, "connection", "1.0.0"),
    C("quit", quit_command, -1, NA | LD | ST | F | NS | CMD_ALLOW_BUSY, 0, 0, 0, A_F | A_CONN, "connection", "1.0.0"),
    C("reset", reset_command, 1, NA | LD | ST | F | NS | CMD_ALLOW_BUSY, 0, 0, 0, A_F | A_CONN, "connection", "6.2.0"),
    C("hello", hello_command, -1, NA | LD | ST | F | NS | CMD_ALLOW_BUSY, 0, 0, 0, A_F | A_CONN, "connection", "6.0.0"),
    C("auth", auth_command, -2, NA | LD | ST | F | NS | CMD_ALLOW_BUSY, 0, 0, 0, A_F | A_CONN, "connection", "1.0.0"),
    CS("client", NULL, -2, 0, 0, 0, 0, A_S, "connection", "2.4.0", client_subs),
    /* pub/sub (SELF: the shard commands' key positions are for COMMAND
     * GETKEYS only; no slot lock is taken) */
    C("subscribe", subscribe_command, -2, PS | NS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.0.0"),
    C("unsubscribe", unsubscribe_command, -1, PS | NS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.0.0"),
    C("psubscribe", psubscribe_command, -2, PS | NS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.0.0"),
    C("punsubscribe", punsubscribe_command, -1, PS | NS | LD | ST, 0, 0, 0, A_PS | A_S, "pubsub", "2.0.0"),
    C("ssubscribe", ssubscribe_command, -2, PS | NS | LD | ST | SELF, 1, -1, 1, A_PS | A_S, "pubsub", "7.0.0"),
    C("sunsubscribe", sunsubscribe_command, -1, PS | NS | LD | ST | SELF, 1, -1, 1, A_PS | A_S, "pubsub", "7.0.0"),
    C("publish", publish_command, 3, PS | LD | ST | F | CMD_MAY_REPLICATE, 0, 0, 0, A_PS | A_F, "pubsub", "2.0.0"),
    C("spublish", spublish_command, 3, PS | LD | ST | F | CMD_MAY_REPLICATE | SELF, 1, 1, 1, A_PS | A_F, "pubsub", "7.0.0"),
    CS("pubsub", NULL, -2, 0, 0, 0, 0, A_S, "pubsub", "2.8.0", pubsub_subs),
    /* server */
    C("info", info_command, -1, LD | ST | CMD_NEEDS_SCRIPT_MUTEX | MB, 0, 0, 0, A_S | A_DNG, "server", "1.0.0"),
    CS("config", NULL, -2, 0, 0, 0, 0, A_S, "server", "2.0.0", config_subs),
    CS("module", NULL, -2, 0, 0, 0, 0, A_S, "server", "4.0.0", module_subs),
    CS("command", command_command, -1, LD | ST, 0, 0, 0, A_S | A_CONN, "server", "2.8.13", command_subs),
    CS("function", NULL, -2, 0, 0, 0, 0, A_S, "scripting", "7.0.0", function_subs),
    CS("script", NULL, -2, 0, 0, 0, 0, A_S, "scripting", "2.6.0", script_subs),
    C("time", time_command, 1, LD | ST | F, 0, 0, 0, A_F, "server", "2.6.0"),
    C("save", save_command, 1, ADM | NS | CMD_NO_ASYNC_LOADING | CMD_NO_MULTI | SELF | CMD_NEEDS_SCRIPT_MUTEX, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "1.0.0"),
    C("bgsave", bgsave_command, -1, ADM | NS | CMD_NO_ASYNC_LOADING | SELF | CMD_NEEDS_SCRIPT_MUTEX, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "1.0.0"),
#include "cmd/persistence.tab"
#include "cmd/repl.tab"
    C("monitor", monitor_command, 1, ADM | NS | LD | ST, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "1.0.0"),
    C("lolwut", lolwut_command, -1, R | F, 0, 0, 0, A_R | A_F, "server", "5.0.0"),
    C("lastsave", lastsave_command, 1, LD | ST | F, 0, 0, 0, A_ADM | A_F | A_DNG, "server", "1.0.0"),
    C("debug", debug_command, -2, ADM | NS | LD | ST | CMD_NEEDS_SCRIPT_MUTEX, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "1.0.0"),
    C("shutdown", shutdown_command, -1, ADM | NS | LD | ST | CMD_NO_MULTI | CMD_ALLOW_BUSY, 0, 0, 0, A_ADM | A_S | A_DNG, "server", "1.0.0"),
    END,
};

/* ---------------------------------------------------------- COMMAND DOCS --- */

#define EXPIRY_COND "condition:oneof?(nx:pure-token xx:pure-token gt:pure-token lt:pure-token)"
/* EXPIRE and co. (the hash field commands share EXPIRY_COND, without since) */
#define EXPIRY_COND_7 "condition:oneof?@7.0.0(nx:pure-token xx:pure-token gt:pure-token lt:pure-token)"
#define FLUSH_MODE "flush-type:oneof?(async:pure-token@4.0.0 sync:pure-token@6.2.0)"
#define ONOFF "enabled:oneof(on:pure-token off:pure-token)"
#define TIPS_MULTI_SUM "request_policy:multi_shard response_policy:agg_sum"
#define TIPS_ALL_SUCCEEDED "request_policy:all_shards response_policy:all_succeeded"
#define TIPS_ALL_NODES "request_policy:all_nodes response_policy:all_succeeded"

const struct cmd_doc cmd_docs[] = {
    /* strings */
    {"get", "Return the string stored at a key", "O(1)", "key:key", "RO access", NULL, NULL},
    {"set", "Store a string at a key, optionally with an expiry or a condition", "O(1)",
     "key:key value:string condition:oneof?@2.6.12(nx:pure-token xx:pure-token) get:pure-token?@6.2.0 "
     "expiration:oneof?(seconds:integer@2.6.12=EX milliseconds:integer@2.6.12=PX unix-time-seconds:unix-time@6.2.0=EXAT "
     "unix-time-milliseconds:unix-time@6.2.0=PXAT keepttl:pure-token@6.0.0)",
     "RW access update variable_flags", NULL, NULL,
     .kspecs = "RW access update variable_flags/i1/r0,1,0/The GET option reads the old value: RW and ACCESS",
     .history = "2.6.12 The EX, PX, NX and XX options.;6.0.0 The KEEPTTL option.;"
                 "6.2.0 The GET, EXAT and PXAT options.;7.0.0 NX and GET together."},
    {"getex", "Return a string and optionally change the key's expiry", "O(1)",
     "key:key expiration:oneof?(seconds:integer=EX milliseconds:integer=PX unix-time-seconds:unix-time=EXAT "
     "unix-time-milliseconds:unix-time=PXAT persist:pure-token)",
     "RW access update", NULL, NULL, .kspecs = "RW access update/i1/r0,1,0/RW and UPDATE: it may change the expiry"},
    {"getdel", "Return a string and delete its key", "O(1)", "key:key", "RW access delete", NULL, NULL},
    {"getset", "Store a string and return the one it replaced", "O(1)", "key:key value:string", "RW access update", NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "6.2.0", .replaced_by = "`SET key value GET`"},
    {"setnx", "Store a string only when the key does not exist", "O(1)", "key:key value:string", "OW insert", NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "2.6.12", .replaced_by = "`SET key value NX`"},
    {"setex", "Store a string with a time to live in seconds", "O(1)", "key:key seconds:integer value:string", "OW update", NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "2.6.12", .replaced_by = "`SET key value EX seconds`"},
    {"psetex", "Store a string with a time to live in milliseconds", "O(1)", "key:key milliseconds:integer value:string",
     "OW update", NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "2.6.12", .replaced_by = "`SET key value PX milliseconds`"},
    {"mset", "Store several key/value pairs at once", "O(N) for N pairs", "data:block*(key:key value:string)", "OW update", NULL,
     "request_policy:multi_shard response_policy:all_succeeded"},
    {"msetnx", "Store several key/value pairs only if none of the keys exists", "O(N) for N pairs",
     "data:block*(key:key value:string)", "OW insert", NULL, NULL},
    {"mget", "Return the values of several keys", "O(N) for N keys", "key:key*", "RO access", NULL, "request_policy:multi_shard"},
    {"append", "Add bytes to the end of a string", "O(1) amortized", "key:key value:string", "RW insert", NULL, NULL},
    {"strlen", "Return the length in bytes of a string", "O(1)", "key:key", "RO", NULL, NULL},
    {"getrange", "Return a byte range of a string", "O(N) for N returned bytes", "key:key start:integer end:integer", "RO access",
     NULL, NULL},
    {"substr", "Return a byte range of a string (old name of GETRANGE)", "O(N) for N returned bytes",
     "key:key start:integer end:integer", "RO access", NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "2.0.0", .replaced_by = "`GETRANGE`"},
    {"setrange", "Overwrite part of a string starting at an offset", "O(1) plus the bytes copied",
     "key:key offset:integer value:string", "RW update", NULL, NULL},
    {"incr", "Add one to the integer stored at a key", "O(1)", "key:key", "RW access update", NULL, NULL},
    {"decr", "Subtract one from the integer stored at a key", "O(1)", "key:key", "RW access update", NULL, NULL},
    {"incrby", "Add an integer to the integer stored at a key", "O(1)", "key:key increment:integer", "RW access update", NULL, NULL},
    {"decrby", "Subtract an integer from the integer stored at a key", "O(1)", "key:key decrement:integer", "RW access update",
     NULL, NULL},
    {"incrbyfloat", "Add a floating point number to the number stored at a key", "O(1)", "key:key increment:double",
     "RW access update", NULL, NULL},
    {"lcs", "Find the longest common subsequence of two strings", "O(N*M) for strings of lengths N and M",
     "key1:key key2:key len:pure-token? idx:pure-token? min-match-len:integer?=MINMATCHLEN withmatchlen:pure-token?",
     "RO access", NULL, NULL},
    /* generic keyspace */
    {"del", "Delete keys", "O(N) for N keys, plus the size of each value freed", "key:key*", "RM delete", NULL, TIPS_MULTI_SUM},
    {"unlink", "Delete keys, freeing large values in the background", "O(1) per key", "key:key*", "RM delete", NULL,
     TIPS_MULTI_SUM},
    {"exists", "Count how many of the given keys exist", "O(N) for N keys", "key:key*", "RO", NULL, TIPS_MULTI_SUM,
     .history = "3.0.3 Several keys."},
    {"type", "Return the type of the value at a key", "O(1)", "key:key", "RO", NULL, NULL},
    {"rename", "Rename a key, replacing any key that has the new name", "O(1)", "key:key newkey:key", "RW access delete",
     "OW update", NULL},
    {"renamenx", "Rename a key only if the new name is unused", "O(1)", "key:key newkey:key", "RW access delete", "OW insert",
     NULL,
     .history = "3.2.0 The same source and destination name is no longer an error."},
    {"copy", "Copy the value of a key to another key", "O(N) for a value of N elements",
     "source:key destination:key destination-db:integer?=DB replace:pure-token?", "RO access", "OW update", NULL},
    {"move", "Move a key to another database", "O(1)", "key:key db:integer", "RW access update", NULL, NULL},
    {"keys", "Return every key name matching a glob pattern", "O(N) for N keys in the database", "pattern:pattern", NULL, NULL,
     "request_policy:all_shards nondeterministic_output_order"},
    {"scan", "Iterate incrementally over the key names", "O(1) per call, O(N) for a whole iteration",
     "cursor:integer pattern:pattern?=MATCH count:integer?=COUNT type:string?@6.0.0=TYPE", NULL, NULL,
     "nondeterministic_output request_policy:special response_policy:special",
     .history = "6.0.0 The TYPE filter."},
    {"randomkey", "Return the name of a random key", "O(1)", NULL, NULL, NULL,
     "request_policy:all_shards response_policy:special nondeterministic_output"},
    {"dbsize", "Return the number of keys in the selected database", "O(1)", NULL, NULL, NULL,
     "request_policy:all_shards response_policy:agg_sum"},
    {"flushdb", "Delete every key of the selected database", "O(N) for N keys", FLUSH_MODE, NULL, NULL, TIPS_ALL_SUCCEEDED,
     .history = "4.0.0 The ASYNC mode.;6.2.0 The SYNC mode."},
    {"flushall", "Delete every key of every database", "O(N) for N keys", FLUSH_MODE, NULL, NULL, TIPS_ALL_SUCCEEDED,
     .history = "4.0.0 The ASYNC mode.;6.2.0 The SYNC mode."},
    {"expire", "Give a key a time to live in seconds", "O(1)", "key:key seconds:integer " EXPIRY_COND_7, "RW update", NULL, NULL,
     .history = "7.0.0 The NX, XX, GT and LT conditions."},
    {"pexpire", "Give a key a time to live in milliseconds", "O(1)", "key:key milliseconds:integer " EXPIRY_COND_7, "RW update",
     NULL, NULL,
     .history = "7.0.0 The NX, XX, GT and LT conditions."},
    {"expireat", "Make a key expire at a unix time in seconds", "O(1)", "key:key unix-time-seconds:unix-time " EXPIRY_COND_7,
     "RW update", NULL, NULL,
     .history = "7.0.0 The NX, XX, GT and LT conditions."},
    {"pexpireat", "Make a key expire at a unix time in milliseconds", "O(1)",
     "key:key unix-time-milliseconds:unix-time " EXPIRY_COND_7, "RW update", NULL, NULL,
     .history = "7.0.0 The NX, XX, GT and LT conditions."},
    {"ttl", "Return the remaining time to live of a key in seconds", "O(1)", "key:key", "RO access", NULL,
     "nondeterministic_output",
     .history = "2.8.0 -2 for a missing key."},
    {"pttl", "Return the remaining time to live of a key in milliseconds", "O(1)", "key:key", "RO access", NULL,
     "nondeterministic_output",
     .history = "2.8.0 -2 for a missing key."},
    {"expiretime", "Return the unix time in seconds at which a key expires", "O(1)", "key:key", "RO access", NULL, NULL},
    {"pexpiretime", "Return the unix time in milliseconds at which a key expires", "O(1)", "key:key", "RO access", NULL, NULL},
    {"persist", "Remove the time to live of a key", "O(1)", "key:key", "RW update", NULL, NULL},
    {"touch", "Mark keys as accessed and count how many exist", "O(N) for N keys", "key:key*", "RO", NULL, TIPS_MULTI_SUM},
    {"object", "Container for value introspection subcommands", "Varies by subcommand", NULL, NULL, NULL, NULL},
    {"object|encoding", "Return the internal encoding of a value", "O(1)", "key:key", "RO", NULL, "nondeterministic_output"},
    {"object|freq", "Return the LFU access counter of a key", "O(1)", "key:key", "RO", NULL, "nondeterministic_output"},
    {"object|idletime", "Return the seconds since a key was last accessed", "O(1)", "key:key", "RO", NULL,
     "nondeterministic_output"},
    {"object|refcount", "Return the reference count of a value", "O(1)", "key:key", "RO", NULL, "nondeterministic_output"},
    {"memory", "Container for memory introspection subcommands", "Varies by subcommand", NULL, NULL, NULL, NULL},
    {"memory|usage", "Estimate the bytes a key and its value occupy",
     "O(N) for a value of N elements (all are measured)", "key:key count:integer?=SAMPLES", "RO", NULL, NULL},
    {"memory|stats", "Break down where the server's memory goes", "O(S) for S slot tables (one pass over the slots)",
     NULL, NULL, NULL, "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|doctor", "Report memory problems found in the server's figures",
     "O(S) for S slot tables (one pass over the slots)", NULL, NULL, NULL,
     "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|malloc-stats", "Return the memory allocator's internal statistics",
     "Depends on how much memory is allocated, could be slow", NULL, NULL, NULL,
     "nondeterministic_output request_policy:all_shards response_policy:special"},
    {"memory|purge", "Ask the allocator to return unused pages to the system",
     "Depends on how much memory is allocated, could be slow", NULL, NULL, NULL,
     "request_policy:all_shards response_policy:all_succeeded"},
    {"select", "Switch the connection to another database", "O(1)", "index:integer", NULL, NULL, NULL},
    {"swapdb", "Exchange the contents of two databases", "O(1)", "index1:integer index2:integer", NULL, NULL, NULL},
    /* connection */
    {"ping", "Check that the server is alive", "O(1)", "message:string?", NULL, NULL, TIPS_ALL_SUCCEEDED},
    {"echo", "Return the given string", "O(1)", "message:string", NULL, NULL, NULL},
    {"quit", "Close the connection after the reply", "O(1)", NULL, NULL, NULL, NULL,
     .doc_flags = "deprecated", .deprecated_since = "7.2.0",
     .replaced_by = "closing the connection from the client side"},
    {"reset", "Return the connection to its initial state", "O(1)", NULL, NULL, NULL, NULL},
    {"hello", "Choose the protocol version, optionally authenticating and naming the connection", "O(1)",
     "arguments:block?(protover:integer auth:block?=AUTH(username:string password:string) clientname:string?=SETNAME)",
     NULL, NULL, NULL,
     .history = "6.2.0 protover is optional: without arguments HELLO describes the connection."},
    {"auth", "Authenticate the connection", "O(N) for a password of N bytes", "username:string?@6.0.0 password:string", NULL, NULL,
     NULL,
     .history = "6.0.0 ACL form: a username before the password."},
    {"client", "Container for connection management subcommands", "Varies by subcommand", NULL, NULL, NULL, NULL},
    {"client|id", "Return the ID of this connection", "O(1)", NULL, NULL, NULL, NULL},
    {"client|setname", "Give this connection a name", "O(1)", "connection-name:string", NULL, NULL, TIPS_ALL_NODES},
    {"client|getname", "Return the name of this connection", "O(1)", NULL, NULL, NULL, NULL},
    {"client|list", "Describe the open connections", "O(N) for N connections",
     "client-type:oneof?@5.0.0=TYPE(normal:pure-token master:pure-token replica:pure-token pubsub:pure-token) "
     "client-id:integer?*@6.2.0=ID",
     NULL, NULL, "nondeterministic_output",
     .history = "2.8.12 The id field.;5.0.0 The TYPE filter.;6.0.0 The user field.;"
                 "6.2.0 The argv-mem, tot-mem, laddr and redir fields, and the ID filter.;"
                 "7.0.0 The resp, multi-mem, rbs and rbp fields.;7.0.3 The ssub field."},
    {"client|info", "Describe this connection", "O(1)", NULL, NULL, NULL, "nondeterministic_output"},
    {"client|kill", "Close connections chosen by address or by filters", "O(N) for N connections",
     "filter:oneof(old-format:string!2.8.12~ip:port new-format:oneof*(client-id:integer?@2.8.12=ID "
     "client-type:oneof?@2.8.12=TYPE(normal:pure-token master:pure-token@3.2.0 slave:pure-token "
     "replica:pure-token@5.0.0 pubsub:pure-token) username:string?=USER addr:string?~ip:port=ADDR "
     "laddr:string?@6.2.0~ip:port=LADDR skipme:oneof?=SKIPME(yes:pure-token no:pure-token) "
     "maxage:integer?@7.4.0=MAXAGE))",
     NULL, NULL, NULL,
     .history = "2.8.12 The filter form (name/value pairs).;2.8.12 The ID filter.;3.2.0 master as a TYPE value.;"
                 "5.0.0 replica as a TYPE value (slave still accepted).;6.2.0 The LADDR filter.;"
                 "7.4.0 The MAXAGE filter."},
    {"client|unblock", "Wake a connection blocked in a blocking command, as a timeout or with an error",
     "O(N) for N connections", "client-id:integer unblock-type:oneof?(timeout:pure-token error:pure-token)", NULL, NULL,
     NULL},
    {"client|setinfo", "Record the name or version of the client library", "O(1)",
     "attr:oneof(libname:string=LIB-NAME libver:string=LIB-VER)", NULL, NULL, TIPS_ALL_NODES},
    {"client|no-evict", "Exempt this connection from client eviction", "O(1)", ONOFF, NULL, NULL, NULL},
    {"client|no-touch", "Keep this connection's reads from changing key access times", "O(1)", ONOFF, NULL, NULL, NULL},
    {"client|pause", "Hold back every client's commands, or just the writes, for a while", "O(1)",
     "timeout:integer mode:oneof?@6.2.0(write:pure-token all:pure-token)", NULL, NULL, NULL,
     .history = "6.2.0 The mode argument and the WRITE mode."},
    {"client|unpause", "End a client pause: held-back commands run now", "O(N) Where N is the number of paused clients",
     NULL, NULL, NULL, NULL},
    {"client|reply", "Switch replies to this connection on or off", "O(1)",
     "action:oneof(on:pure-token off:pure-token skip:pure-token)", NULL, NULL, NULL},
    {"client|tracking", "Turn server-assisted client-side caching on or off for this connection",
     "O(1), more with many prefixes",
     "status:oneof(on:pure-token off:pure-token) client-id:integer?=REDIRECT prefix:string?*+=PREFIX bcast:pure-token? "
     "optin:pure-token? optout:pure-token? noloop:pure-token?",
     NULL, NULL, NULL},
    {"client|caching", "Choose whether the next command's keys are tracked (OPTIN / OPTOUT modes)", "O(1)",
     "mode:oneof(yes:pure-token no:pure-token)", NULL, NULL, NULL},
    {"client|getredir", "Return the client ID that receives this connection's invalidations", "O(1)", NULL, NULL, NULL,
     NULL},
    {"client|trackinginfo", "Describe this connection's client-side caching mode", "O(1)", NULL, NULL, NULL, NULL},
    /* server */
    {"info", "Return server information and statistics as text", "O(1)", "section:string?*", NULL, NULL,
     "nondeterministic_output request_policy:all_shards response_policy:special",
     .history = "7.0.0 Several sections in one call."},
    {"config", "Container for configuration subcommands", "Varies by subcommand", NULL, NULL, NULL, NULL},
    {"config|get", "Return the configuration parameters matching glob patterns", "O(N) for N parameters",
     "parameter:string*", NULL, NULL, NULL,
     .history = "7.0.0 Several patterns in one call."},
    {"config|set", "Change configuration parameters at run time", "O(N) for N parameters",
     "data:block*(parameter:string value:string)", NULL, NULL, "request_policy:all_nodes response_policy:all_succeeded",
     .history = "7.0.0 Several parameters in one call."},
    {"config|resetstat", "Zero the statistics that INFO reports", "O(1)", NULL, NULL, NULL, TIPS_ALL_NODES},
    {"config|rewrite", "Write the running configuration back to the file the server started with", "O(1)", NULL, NULL,
     NULL, TIPS_ALL_NODES},
    {"command", "Describe every command the server knows", "O(N) for N commands", NULL, NULL, NULL,
     "nondeterministic_output_order"},
    {"command|count", "Return the number of commands", "O(1)", NULL, NULL, NULL, NULL},
    {"command|info", "Describe the given commands, or all of them", "O(N) for N commands", "command-name:string?*", NULL, NULL,
     "nondeterministic_output_order",
     .history = "7.0.0 Without a command name it describes every command."},
    {"command|docs", "Return documentation for the given commands, or all of them", "O(N) for N commands",
     "command-name:string?*", NULL, NULL, "nondeterministic_output_order"},
    {"command|list", "List command names, optionally filtered", "O(N) for N commands",
     "filterby:oneof?=FILTERBY(module-name:string=MODULE category:string=ACLCAT pattern:pattern=PATTERN)", NULL, NULL,
     "nondeterministic_output_order"},
    {"command|getkeys", "Return the key names a full command line would access", "O(N) for N arguments",
     "command:string arg:string?*", NULL, NULL, NULL},
    {"command|getkeysandflags", "Return the key names of a full command line with their access flags",
     "O(N) for N arguments", "command:string arg:string?*", NULL, NULL, NULL},
    {"time", "Return the server clock", "O(1)", NULL, NULL, NULL, "nondeterministic_output"},
    {"save", "Save the dataset to disk synchronously (blocks every client)", "O(N) for N keys", NULL, NULL, NULL, NULL},
    {"bgsave", "Save the dataset to disk in a forked child", "O(1) to start", "schedule:pure-token?@3.2.2", NULL, NULL, NULL,
     .history = "3.2.2 The SCHEDULE option."},
    {"lastsave", "Return the unix time of the last successful save", "O(1)", NULL, NULL, NULL, "nondeterministic_output"},
    {"monitor", "Stream every command the server runs, as it runs it", "", NULL, NULL, NULL, NULL},
    {"lolwut", "Draw some computer art and tell the version", "", "version:integer?=VERSION", NULL, NULL, NULL},
    {"debug", "Testing and debugging helpers", "Varies by subcommand", NULL, NULL, NULL, NULL,
     .doc_flags = "syscmd"},
    {"module", "Container for module commands (HotKV has no module system)", "Varies by subcommand", NULL, NULL, NULL,
     NULL},
    {"module|list", "Return the loaded modules (always none)", "O(1)", NULL, NULL, NULL, "nondeterministic_output_order"},
    {"module|load", "Load a module (refused unless enable-module-command allows it; loading always fails)", "O(1)",
     "path:string arg:string?*", NULL, NULL, NULL},
    {"module|loadex", "Load a module with configs and arguments (as MODULE LOAD)", "O(1)",
     "path:string configs:block?*+=CONFIG(name:string value:string) args:string?*=ARGS", NULL, NULL, NULL},
    {"module|unload", "Unload a module (always fails: none is loaded)", "O(1)", "name:string", NULL, NULL, NULL},
    {"module|help", "Show helpful text about the different subcommands", "O(1)", NULL, NULL, NULL, NULL},
    {"shutdown", "Stop the server", "O(1) without saving",
     "save-selector:oneof?(nosave:pure-token save:pure-token) now:pure-token?@7.0.0 force:pure-token?@7.0.0 "
     "abort:pure-token?@7.0.0", NULL,
     NULL, NULL,
     .history = "7.0.0 The NOW, FORCE and ABORT modifiers."},
    /* pub/sub */
    {"subscribe", "Listen for messages published to channels", "O(N) for N channels", "channel:string*", NULL, NULL, NULL},
    {"unsubscribe", "Stop listening to channels (all of them without arguments)", "O(N) for N channels",
     "channel:string?*", NULL, NULL, NULL},
    {"psubscribe", "Listen for messages published to channels matching glob patterns", "O(N) for N patterns",
     "pattern:pattern*", NULL, NULL, NULL},
    {"punsubscribe", "Stop listening to patterns (all of them without arguments)", "O(N+M) for N patterns, M in use",
     "pattern:pattern?*", NULL, NULL, NULL},
    {"ssubscribe", "Listen for messages published to shard channels", "O(N) for N shard channels", "shardchannel:string*",
     "not_key", NULL, NULL},
    {"sunsubscribe", "Stop listening to shard channels (all of them without arguments)", "O(N) for N shard channels",
     "shardchannel:string?*", "not_key", NULL, NULL},
    {"publish", "Post a message to a channel", "O(N+M) for N receivers and M patterns", "channel:string message:string",
     NULL, NULL, NULL},
    {"spublish", "Post a message to a shard channel", "O(N) for N receivers", "shardchannel:string message:string", "not_key",
     NULL, NULL},
    {"pubsub", "A container for pub/sub introspection commands", "Depends on subcommand", NULL, NULL, NULL, NULL},
    {"pubsub|channels", "Return the active channels", "O(N) for N active channels", "pattern:pattern?", NULL, NULL, NULL},
    {"pubsub|numpat", "Return the number of distinct patterns subscribed to", "O(1)", NULL, NULL, NULL, NULL},
    {"pubsub|numsub", "Return the subscriber counts of channels", "O(N) for N channels", "channel:string?*", NULL, NULL,
     NULL},
    {"pubsub|shardchannels", "Return the active shard channels", "O(N) for N active shard channels", "pattern:pattern?",
     NULL, NULL, NULL},
    {"pubsub|shardnumsub", "Return the subscriber counts of shard channels", "O(N) for N shard channels",
     "shardchannel:string?*", NULL, NULL, NULL},
    {"pubsub|help", "Show helpful text about the different subcommands", "O(1)", NULL, NULL, NULL, NULL},
    /* collections, bitmaps, transactions and scripting: each file owns its rows */
#include "cmd/t_list.docs"
#include "cmd/t_hash.docs"
#include "cmd/t_set.docs"
#include "cmd/t_zset.docs"
#include "cmd/t_geo.docs"
#include "cmd/t_stream.docs"
#include "cmd/t_vset.docs"
#include "cmd/t_dump.docs"
#include "cmd/migrate.docs"
#include "cmd/t_sort.docs"
#include "cmd/t_hll.docs"
#include "cmd/t_bitops.docs"
#include "cmd/multi.docs"
#include "cmd/slowlog.docs"
#include "cluster/cluster.docs"
#include "cmd/acl.docs"
#include "script/script.docs"
#include "cmd/persistence.docs"
#include "cmd/repl.docs"
};
const size_t cmd_ndocs = sizeof(cmd_docs) / sizeof(cmd_docs[0]);
