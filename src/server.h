/* server.h - the process-wide objects: configuration values, the client
 * (connection) object, workers and the command table entry.
 *
 * Threads: main() parses the configuration and starts N workers; each
 * worker owns its epoll loop, its listening socket (SO_REUSEPORT) and every
 * client accepted on it, and runs commands to completion on its own thread.
 * A client struct is read and written only by its worker.  Cross-worker
 * requests (CLIENT LIST/KILL, CONFIG SET side effects) go through each
 * worker's job queue (see net/worker.c).  docs/architecture.md has the map. */
#ifndef HK_SERVER_H
#define HK_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "proto/reply.h"
#include "proto/resp.h"

#define HOTKV_VERSION "0.1.0"
#define REDIS_COMPAT_VERSION "7.2.4"

/* ------------------------------------------------------------ config --- */
struct obuf_limit {
    long long hard, soft, soft_secs;
};
enum { CLIENT_CLASS_NORMAL = 0, CLIENT_CLASS_REPLICA, CLIENT_CLASS_PUBSUB, CLIENT_CLASSES };

struct config {
    int port;
    char *bind;            /* space-separated addresses */
    int threads;
    char *requirepass;     /* NULL = no password */
    long long maxclients;
    int timeout;           /* idle seconds, 0 = never */
    int protected_mode;
    int enable_protected_configs; /* CFG_ALLOW_* (config/config.h), immutable */
    int enable_debug_command;
    int enable_module_command;
    int tcp_backlog;
    int tcp_keepalive;
    int databases;
    int hz;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    struct obuf_limit obuf[CLIENT_CLASSES];
    char *logfile;
    int loglevel;
    int daemonize;
    char *pidfile;
    char *dir;
    char *dbfilename;
    char *config_file;     /* absolute path, NULL if none */
    int active_expire;     /* DEBUG SET-ACTIVE-EXPIRE */
    long long maxmemory;
    char *maxmemory_policy;
    int maxmemory_samples;
    int maxmemory_eviction_tenacity;
    int active_expire_effort;
    int lfu_log_factor;
    int lfu_decay_time;
    long long slowlog_log_slower_than;
    int slowlog_max_len;
    int latency_tracking;
    int lazyfree_lazy_user_flush;
    int lazyfree_lazy_user_del;
    int lazyfree_lazy_server_del;
    int lazyfree_lazy_expire;
    int lazyfree_lazy_eviction;
    int io_threads;        /* accepted for compatibility: HotKV's workers do I/O */
    int io_uring;          /* HotKV: batch each loop turn's reads and writes in io_uring (net/worker.c) */
    char *save;            /* save points, normalized "secs changes ..." ("" = none) */
    /* Persistence (src/persist/): RDB */
    int rdbcompression;
    int rdbchecksum;
    int rdb_version;       /* version written: 10, 11 (default) or 12 */
    int stop_writes_on_bgsave_error;
    int rdb_del_sync_files;
    int rdb_save_incremental_fsync;
    long long rdb_key_save_delay; /* test knob: microseconds slept per key saved */
    long long key_load_delay;     /* test knob: microseconds slept per key loaded */
    int sanitize_dump_payload;    /* 0 no, 1 yes, 2 clients */
    /* AOF */
    int appendonly;
    int appendfsync;       /* AOF_FSYNC_NO / EVERYSEC / ALWAYS */
    char *appendfilename;
    char *appenddirname;
    int auto_aof_rewrite_percentage;
    long long auto_aof_rewrite_min_size;
    int aof_use_rdb_preamble;
    int aof_load_truncated;
    int aof_timestamp_enabled;
    int aof_rewrite_incremental_fsync;
    int no_appendfsync_on_rewrite;
};
enum { AOF_FSYNC_NO = 0, AOF_FSYNC_EVERYSEC = 1, AOF_FSYNC_ALWAYS = 2 };
extern struct config cfg;

/* ------------------------------------------------------------ client --- */
#define CF_CLOSE_AFTER_REPLY 0x0001
#define CF_CLOSE_ASAP 0x0002
#define CF_REPLY_OFF 0x0004
#define CF_REPLY_SKIP_NEXT 0x0008
#define CF_REPLY_SKIP 0x0010
#define CF_NO_EVICT 0x0020
#define CF_NO_TOUCH 0x0040
#define CF_WANT_WRITE 0x0080   /* EPOLLOUT armed */
#define CF_READ_PAUSED 0x0100  /* EPOLLIN off: too much output pending */
#define CF_PENDING_WRITE 0x0200
#define CF_UNIX 0x0400
#define CF_BLOCKED 0x0800        /* waiting in a blocking command (c->blocked) */
#define CF_DENY_BLOCKING 0x1000  /* blocking commands reply the timeout now (MULTI, scripts) */
#define CF_RESUME 0x2000         /* on the worker's resume list */
#define CF_PUBSUB 0x4000         /* holds a (p/s)subscription (flag P, obuf class pubsub) */
#define CF_TRACKING 0x8000       /* CLIENT TRACKING on (cmd/tracking.c; mode in c->trk) */
#define CF_PENDING_PUSH 0x10000  /* on the worker's push list (net/worker.c) */
#define CF_SCRIPT 0x20000        /* a script's client (redis.call): SORT orders set output */
#define CF_EXECUTING 0x40000     /* inside cmd_execute: pushes go to c->pushbuf until the reply is done */

struct worker;
struct cmd;
struct waiter;
struct dict;

struct client {
    int fd;
    uint64_t id;
    struct worker *w;
    struct client *prev, *next;        /* worker's client list */
    struct client *pw_next;            /* worker's pending-write list */

    char *qbuf;
    size_t qlen, qcap, qpos;
    struct resp_parser parser;
    size_t qbuf_peak;

    struct reply out;
    size_t sent;                        /* bytes of out already written */
    long long obuf_soft_since;          /* ms when the soft limit was crossed */

    int db;
    int authenticated;
    unsigned flags;
    char *name, *lib_name, *lib_ver;
    long long ctime_ms, last_ms;
    const struct cmd *last_cmd;
    char addr[64], laddr[64];

    /* The command being executed. */
    int argc;
    const char **argv;
    size_t *argvlen;
    unsigned *kslot;                    /* slot per argv index (keys only) */
    int argv_cap;
    const struct cmd *cmd;

    struct waiter *blocked;             /* db/blocking.c, NULL if not blocked */
    struct client *resume_next;         /* worker's resume list */
    struct dict *ps_subs[3];            /* cmd/pubsub.c: channels, patterns, shard channels held */
    struct multi_state *ms;             /* cmd/multi.c: MULTI queue and WATCHed keys (NULL: never used) */
    struct tracking_client *trk;        /* cmd/tracking.c: tracking mode, redirect, prefixes (NULL: never used) */
    struct client *push_next;           /* worker's push list */
    struct reply *pushbuf;              /* pushes that arrived mid-command (client_push_target) */
    size_t cev_mem;                     /* net/client_evict.c: bytes this client was last counted at */
};

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

extern struct cmd cmd_table[];
const struct cmd *cmd_lookup(const char *name, size_t len);
/* rename-command (start-up only): new "" removes the command; 0 or -1
 * with Redis's message in err. */
int cmd_rename(const char *oldname, const char *newname, char *err, size_t errlen);
const struct cmd *cmd_lookup_sub(const struct cmd *parent, const char *name, size_t len);
int cmd_count(void);
/* Key argv indexes of a command call (static spec or getkeys). */
int cmd_keys(const struct cmd *cmd, struct client *c, int *idx, int max);
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
void reply_unknown_subcommand(struct client *c);

/* ------------------------------------------------------------ worker --- */
struct worker_stats {
    unsigned long long commands, conns_received, rejected_conns;
    unsigned long long net_in, net_out;
    unsigned long long reads, writes; /* socket reads / writes attempted (ring or syscall) */
    unsigned long long errors, unexpected_errors;
    unsigned long long evicted_clients; /* maxmemory-clients (net/client_evict.c) */
    struct db_stats db;
    unsigned long long *cmd_calls, *cmd_usec, *cmd_rejected, *cmd_failed;
};

struct job;
struct worker {
    int id;
    pthread_t tid;
    int epfd, efd;
    int lfds[16];
    int nlfd;
    struct client *clients;           /* list head */
    int nclients;
    struct client *pending_write;     /* replies to flush this loop turn */
    struct client *push_head, *push_tail; /* pushed output (pub/sub), written FIFO with a per-turn budget */
    struct client *resume;            /* unblocked clients whose input to run */
    pthread_mutex_t jlock;
    struct job *jobs, *jobs_tail;     /* MPSC FIFO: pushed and popped under jlock */
    struct worker_stats stats;
    unsigned expire_cursor;
    long long next_cron_ms;
    long long now_us;                 /* clock read at the end of the last command */
    struct dict *ps_maps[3];          /* cmd/pubsub.c: name -> this worker's subscribers */
};

extern struct worker *workers;
extern int nworkers;
extern _Thread_local struct worker *cur_worker;
extern atomic_int server_shutdown;    /* set by SIGTERM/SHUTDOWN */
/* SHUTDOWN SAVE (1) / NOSAVE (0) / by the save points (-1, SIGTERM). */
extern atomic_int shutdown_save_mode;
extern atomic_int connected_clients;
extern atomic_int io_uring_workers;   /* workers batching I/O in io_uring (net/worker.c) */
extern atomic_ullong next_client_id;
extern long long server_start_ms;

/* Run fn(worker, arg) on every worker (inline on the caller's) and wait
 * for all of them.  Never call with a shard lock held. */
void worker_broadcast(void (*fn)(struct worker *, void *), void *arg);
void client_close(struct client *c);
/* Queue a job for worker w without waiting (fn runs on w's thread). */
void worker_post(struct worker *w, void (*fn)(struct worker *, void *), void *arg);
/* A blocked client was unblocked (its reply appended): the worker resumes
 * its pipelined input in its loop. Owner thread only. */
void client_unblocked(struct client *c);
void client_free_args(struct client *c);
/* Output was appended to c outside its own command (pub/sub delivery):
 * queue it for writing and apply the output-buffer limit (a client over
 * it is closed once the loop turn ends).  Owner thread only. */
void client_output_ready(struct client *c);
/* Same for pushed output that is not a command's reply (pub/sub messages,
 * invalidations): written FIFO, a bounded number of clients per loop turn,
 * so a big fan-out never stalls the worker's other clients. */
void client_push_ready(struct client *c);
/* Where a push message (pub/sub, invalidation) for c is appended: c->out,
 * or, while c's own command is running (its worker ran jobs mid-command,
 * e.g. waiting for a slot lock), a side buffer that cmd_execute appends
 * after the command's reply, so a push never lands inside a reply. */
struct reply *client_push_target(struct client *c);

/* Stats summed over workers (approximate while they run). */
void stats_sum(struct worker_stats *out);
void stats_reset(void);

int server_main(int argc, char **argv);
void server_request_shutdown(void);

#endif
