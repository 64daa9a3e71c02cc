/* cmd/cmd.h - the command table entry, the dispatcher and what every
 * command handler shares: argument helpers and Redis's common error texts.
 *
 * Handlers (cmd/, script/, config/) include this; it brings the client,
 * the worker and the reply encoder with it. */
#ifndef HK_CMD_H
#define HK_CMD_H

#include <stddef.h>

#include "../net/worker.h"
#include "../server.h"

/* Argument helpers for handlers. */
static inline int arg_is(const struct client *c, int i, const char *lit)
{
    extern int str_eq_nocase(const char *, size_t, const char *);
    return str_eq_nocase(c->argv[i], c->argvlen[i], lit);
}
int arg_ll(struct client *c, int i, long long *v);                 /* replies on error */
int arg_ll_range(struct client *c, int i, long long min, long long max, long long *v, const char *errmsg);
int arg_d(struct client *c, int i, double *v);
int arg_ld(struct client *c, int i, long double *v);
/* The slot of the key at argv[i] (computed by the dispatcher). */
static inline unsigned kslot(const struct client *c, int i)
{
    return c->kslot[i];
}

/* ----------------------------------------------------------- command --- */
typedef void cmd_fn(struct client *c);

/* Flags (COMMAND INFO names these). */
#define CMD_WRITE (1u << 0)
#define CMD_READONLY (1u << 1)
#define CMD_DENYOOM (1u << 2)
#define CMD_ADMIN (1u << 3)
#define CMD_PUBSUB (1u << 4)
#define CMD_NOSCRIPT (1u << 5)
#define CMD_BLOCKING (1u << 6)
#define CMD_LOADING (1u << 7)
#define CMD_STALE (1u << 8)
#define CMD_SKIP_MONITOR (1u << 9)
#define CMD_SKIP_SLOWLOG (1u << 10)
#define CMD_FAST (1u << 11)
#define CMD_NO_AUTH (1u << 12)
#define CMD_MAY_REPLICATE (1u << 13)
#define CMD_NO_MANDATORY_KEYS (1u << 14)
#define CMD_NO_ASYNC_LOADING (1u << 15)
#define CMD_NO_MULTI (1u << 16)
#define CMD_MOVABLE_KEYS (1u << 17)
#define CMD_ALLOW_BUSY (1u << 18)
/* Redis's "asking" (RESTORE-ASKING): served for a key being imported in
 * cluster mode after ASKING; reported only, standalone ignores it. */
#define CMD_ASKING (1u << 19)
/* HotKV-only (not reported): run with every shard lock held. */
#define CMD_ALL_LOCKS (1u << 24)
/* HotKV-only: handler takes its own locks (e.g. SCAN walks slots). */
#define CMD_SELF_LOCKING (1u << 25)
/* Takes the script mutex itself before its slot locks (SAVE, BGSAVE,
 * BGREWRITEAOF, DEBUG: persist_fork and foreground saves freeze the
 * function libraries too); EXEC takes it up front for them (lock order:
 * script mutex, then slots). */
#define CMD_NEEDS_SCRIPT_MUTEX (1u << 26)
/* HotKV-only, with CMD_SELF_LOCKING: self-locking only at top level (VSIM
 * takes its slot lock just for the lookup); inside EXEC or a script its
 * key positions are locked by the context like any keyed command's. */
#define CMD_SELF_KEYED (1u << 27)
/* HotKV-only: may wait in worker_broadcast() (INFO, CLIENT, CONFIG):
 * inside EXEC or a script it runs holding every slot lock (cmd/multi.c). */
#define CMD_MAY_BROADCAST (1u << 28)
/* ACL categories. */
#define ACL_KEYSPACE (1u << 0)
#define ACL_READ (1u << 1)
#define ACL_WRITE (1u << 2)
#define ACL_SET (1u << 3)
#define ACL_SORTEDSET (1u << 4)
#define ACL_LIST (1u << 5)
#define ACL_HASH (1u << 6)
#define ACL_STRING (1u << 7)
#define ACL_BITMAP (1u << 8)
#define ACL_HYPERLOGLOG (1u << 9)
#define ACL_GEO (1u << 10)
#define ACL_STREAM (1u << 11)
#define ACL_PUBSUB (1u << 12)
#define ACL_ADMIN (1u << 13)
#define ACL_FAST (1u << 14)
#define ACL_SLOW (1u << 15)
#define ACL_BLOCKING (1u << 16)
#define ACL_DANGEROUS (1u << 17)
#define ACL_CONNECTION (1u << 18)
#define ACL_TRANSACTION (1u << 19)
#define ACL_SCRIPTING (1u << 20)
#define ACL_VECTORSET (1u << 21)

struct cmd {
    const char *name;        /* lower case; "client|kill" style for subs */
    cmd_fn *fn;
    int arity;               /* Redis convention: -N means >= N */
    unsigned flags;
    int first, last, step;   /* key positions; last < 0 counts from the end */
    unsigned acl;
    const char *group;       /* COMMAND DOCS group */
    const char *since;
    const char *summary;
    const char *complexity;
    struct cmd *subs;        /* NULL-name terminated, for container commands */
    int id;                  /* index for per-worker command stats */
    /* key positions for movable-key commands: fills idx[], returns count */
    int (*getkeys)(struct client *c, int *idx, int max);
};

/* The table (src/commands.c, every family's .tab rows). */
extern struct cmd cmd_table[];
/* A script's declared flags (EVAL shebang, FUNCTION flags) replace its
 * command's for the maxmemory check and MULTI's queue: installed by
 * script_install_hooks() (script/script.h: script_cmd_flags). */
extern unsigned (*cmd_script_flags)(struct client *c, const struct cmd *cmd);
static inline unsigned cmd_flags_of(struct client *c, const struct cmd *cmd)
{
    return cmd_script_flags ? cmd_script_flags(c, cmd) : cmd->flags;
}
/* Whether c's current command is a write (what propagation feeds). */
static inline int cmd_is_write(const struct client *c)
{
    return c->cmd && (c->cmd->flags & CMD_WRITE);
}
const struct cmd *cmd_lookup(const char *name, size_t len);
/* rename-command (start-up only): new "" removes the command; 0 or -1
 * with Redis's message in err. */
int cmd_rename(const char *oldname, const char *newname, char *err, size_t errlen);
const struct cmd *cmd_lookup_sub(const struct cmd *parent, const char *name, size_t len);
int cmd_count(void);
/* Key argv indexes of a command call (static spec or getkeys). */
int cmd_keys(const struct cmd *cmd, struct client *c, int *idx, int max);
/* ACL (cmd/acl.c): the keys of c's command line as Redis's ACL check sees
 * them (key specs, variable flags), each with its access in acc[]: 1 read
 * (the spec says access), 2 write (insert, delete or update).  idx and acc
 * have room for c->argc; returns the count (cmd/admin.c). */
int cmd_keys_access(const struct cmd *cmd, struct client *c, int *idx, unsigned char *acc);
void cmd_keys_access_init(void); /* start-up, after command ids are set */
/* c's CLIENT LIST line without its newline, on the heap (cmd/conn.c). */
char *client_info_string(struct client *c);
void cmd_init(void);
/* Run one parsed command for c (locks, stats, reply). */
void cmd_execute(struct client *c);

/* ------------------------------------------------------------ errors --- */
#define ERR_SYNTAX "ERR syntax error"
#define ERR_NOT_INT "ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "ERR value is not a valid float"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NO_KEY "ERR no such key"
#define ERR_DB_RANGE "ERR DB index is out of range"
#define ERR_NOAUTH "NOAUTH Authentication required."
#define ERR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_STRING_SIZE "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

void reply_arity_error(struct client *c);
/* Whether an enable-* setting (CFG_ALLOW_*, server.h) lets c in. */
int config_allows(int mode, const struct client *c);
void reply_unknown_subcommand(struct client *c);

/* ------------------------------------------------------ COMMAND DOCS --- */
/* Argument grammar (COMMAND DOCS "arguments"): see cmd/admin.c. */
struct cmd_doc {
    const char *name;
    const char *summary;
    const char *complexity;
    const char *args;    /* grammar above; NULL or "" = no arguments */
    const char *kspec;   /* key-spec flags, space separated */
    const char *kspec2;  /* second key spec: RENAME-style dst, or BITOP-style sources */
    const char *tips;    /* space separated */
    /* Keyword key specs after the first, each with kspec2's flags:
     * "KEYWORD:startfrom ..." (GEORADIUS's STORE:6 STOREDIST:6). */
    const char *kspec_kw;
    /* The rest is set by name (.kspecs = ...) where needed.  kspecs: the
     * whole key-spec list when the fields above cannot describe it
     * (keynum, keyword, unknown specs, notes): specs separated by ';',
     * each "FLAGS/BEGIN/FIND[/notes]", BEGIN "iN" (index N), "kWORD,N"
     * (keyword WORD, startfrom N) or "u"; FIND "rLAST,STEP,LIMIT"
     * (range), "nIDX,FIRST,STEP" (keynum) or "u".  It replaces kspec,
     * kspec2 and kspec_kw for COMMAND INFO, DOCS and GETKEYSANDFLAGS. */
    const char *kspecs;
    const char *doc_flags;        /* "deprecated", "syscmd" */
    const char *deprecated_since; /* COMMAND DOCS deprecated_since */
    const char *replaced_by;      /* COMMAND DOCS replaced_by */
    /* COMMAND DOCS history: "VERSION what changed" entries separated by
     * ';' (our own words). */
    const char *history;
};
/* The rows (src/commands.c, every family's .docs rows). */
extern const struct cmd_doc cmd_docs[];
extern const size_t cmd_ndocs;

#endif
