/* config.c - see config.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <locale.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../cmd/acl.h"
#include "../cmd/commands.h"
#include "../cmd/evict.h"
#include "../cmd/tracking.h"
#include "../cmd/slowlog.h"
#include "../cmd/errorstats.h"
#include "../cmd/properr.h"
#include "../cmd/notify.h"
#include "../db/object.h"
#include "../net/client_evict.h"
#include "../net/tls.h"
#include "../net/worker.h"
#include "../persist/aof.h"
#include "../persist/repl.h"
#include "../persist/replica.h"
#include "../ds/stream.h"
#include "../script/script.h"
#include "../types/hash.h"
#include "../types/hll.h"
#include "../types/list.h"
#include "../cmd/cmd.h"

struct config cfg;

/* T_OCTAL: an int written and shown in octal (unixsocketperm). */
enum { T_BOOL, T_INT, T_LL, T_MEM, T_STR, T_ENUM, T_SPECIAL, T_OCTAL };
#define IMMUTABLE 1
#define SENSITIVE 2 /* not shown by CONFIG GET? (Redis shows requirepass) */
/* CONFIG SET refuses it unless enable-protected-configs allows the client
 * (Redis 7's PROTECTED_CONFIG: dir and dbfilename, the two a client could
 * use to write a file of its choosing somewhere). */
#define PROTECTED 4
/* Redis's HIDDEN_CONFIG: CONFIG GET shows it only when asked by its exact
 * name, never for a glob pattern (test and debugging knobs). */
#define HIDDEN 8
/* HotKV's own immutable parameters (no Redis counterpart): CONFIG SET to
 * the value they already have is a no-op rather than an error, so tools
 * that set every CONFIG GET * value back (Redis's own test suite) do not
 * trip on a name they cannot know to skip. */
#define SAME_OK 32
/* The tls-* parameters (net/tls.h) take effect once per CONFIG SET, after
 * every value of the call is stored (a certificate and its key change
 * together): TLS_CTX ones rebuild the TLS context, TLS_LISTEN (tls-port)
 * moves the TLS listeners.  A failure puts every value of the call back. */
#define TLS_CTX 0x1000
#define TLS_LISTEN 0x2000

struct param {
    const char *name;
    const char *alias;
    int type;
    void *ptr;
    long long min, max;
    int flags;
    const char *const *enums;
    int (*set)(const struct param *p, int argc, char **argv, char *err, size_t errlen);
    void (*get)(const struct param *p, char *buf, size_t cap);
};

/* Old string values replaced by CONFIG SET stay allocated (a worker may be
 * reading them) and reachable from here, so leak checkers stay quiet. */
static char **retired;
static size_t nretired, capretired;
static void retire(char *old)
{
    if (!old)
        return;
    if (nretired == capretired) {
        capretired = capretired ? capretired * 2 : 16;
        retired = hk_realloc(retired, sizeof(*retired) * capretired);
    }
    retired[nretired++] = old;
}

/* requirepass may hold NUL bytes (Redis's value is binary-safe): the
 * value and its length are one allocation, published atomically (CONFIG
 * GET may run on another worker than CONFIG SET; old ones are retired, not
 * freed); cfg.requirepass points at its bytes.  A caller that knows a
 * value's length (CONFIG SET, a config-file word with a \x00 escape) names
 * that value and its length in binval_* around param_set (thread-local). */
struct binstr {
    size_t len;
    char s[];
};
static struct binstr *requirepass_bin;
static struct binstr *requirepass_now(void)
{
    static struct binstr none = {0};
    struct binstr *b = __atomic_load_n(&requirepass_bin, __ATOMIC_ACQUIRE);
    return b ? b : &none;
}
static __thread const char *binval_ptr;
static __thread size_t binval_len;
static size_t value_len(const char *v)
{
    return v == binval_ptr ? binval_len : strlen(v);
}

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", "nothing", NULL};
static const char *const fsyncs[] = {"no", "everysec", "always", NULL};
static const char *const sanitize_modes[] = {"no", "yes", "clients", NULL};
/* enable-protected-configs, enable-debug-command, enable-module-command
 * (CFG_ALLOW_* in config.h). */
static const char *const allow_modes[] = {"no", "yes", "local", NULL};
/* tls-auth-clients: TLS_AUTH_* (net/tls.h) in this order. */
static const char *const tls_auth_modes[] = {"no", "yes", "optional", NULL};
/* tls-auth-clients-user: TLS_AUTH_USER_* (net/tls.h) in this order. */
static const char *const tls_auth_user_modes[] = {"off", "CN", NULL};
static const char *const policies[] = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
                                       "allkeys-lfu", "allkeys-random", "noeviction", NULL};

static int set_obuf(const struct param *p, int argc, char **argv, char *err, size_t errlen);
int workers_rebind(const char *bind, int port);

/* At start-up only the value is stored; at run time (workers exist) the
 * listeners move to the new port first, and a failure changes nothing. */
static int set_port(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    char *end;
    long v;
    (void)argc;
    v = strtol(argv[0], &end, 10);
    if (!argv[0][0] || *end) {
        snprintf(err, errlen, "argument couldn't be parsed into an integer");
        return -1;
    }
    if (v < p->min || v > p->max) {
        snprintf(err, errlen, "argument must be between %lld and %lld inclusive", p->min, p->max);
        return -1;
    }
    if (nworkers > 0 && v != cfg.port && workers_rebind(cfg.bind, (int)v) < 0) {
        snprintf(err, errlen, "Unable to listen on this port: %s", strerror(errno));
        return -1;
    }
    cfg.port = (int)v;
    return 0;
}

static void get_obuf(const struct param *p, char *buf, size_t cap);
static int set_maxmemory_policy(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static int set_maxmemory_clients(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static void get_maxmemory_clients(const struct param *p, char *buf, size_t cap);
static void get_str(const struct param *p, char *buf, size_t cap);
static int set_port(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static int set_bind(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static int set_notify(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static void get_notify(const struct param *p, char *buf, size_t cap);
static int set_save(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static int set_appendonly(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static void get_bool(const struct param *p, char *buf, size_t cap);
static int set_dir(const struct param *p, int argc, char **argv, char *err, size_t errlen);
static void get_dir(const struct param *p, char *buf, size_t cap);

/* Turn the AOF on or off at run time (CONFIG SET appendonly); 0 or -1 with
 * a message.  Called only once workers run (before, only the value is
 * stored). */
int (*config_appendonly_hook)(int on, char *err, size_t errlen) = aof_set_appendonly;

/* latency-tracking-info-percentiles: space-separated values (cmd/latency.c). */
static int set_latency_pct(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    char buf[4096];
    size_t len = 0;
    (void)p;
    for (int i = 0; i < argc; i++) { /* a config file line gives several words */
        int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof(buf) - len) {
            snprintf(err, errlen, "Invalid latency-tracking-info-percentiles parameters");
            return -1;
        }
        len += (size_t)w;
    }
    buf[len] = 0;
    return latency_percentiles_set(buf, err, errlen);
}
static void get_latency_pct(const struct param *p, char *buf, size_t cap)
{
    (void)p;
    latency_percentiles_get(buf, cap);
}
/* Set by cmd/evict.c: maxmemory changed (a smaller limit evicts now). */

/* Redis 7.2 directives accepted with no effect, unixsocket, shutdown-on-sig*. */
#include "compat.inc"

static struct param params[] = {
    {"port", NULL, T_SPECIAL, &cfg.port, 0, 65535, 0, NULL, set_port, NULL},
    {"bind", NULL, T_SPECIAL, &cfg.bind, 0, 0, 0, NULL, set_bind, get_str},
    {"threads", "server-threads", T_INT, &cfg.threads, 1, 1024, IMMUTABLE | SAME_OK, NULL, NULL, NULL},
    {"io-threads", NULL, T_INT, &cfg.io_threads, 1, 128, IMMUTABLE, NULL, NULL, NULL},
    {"io-uring", NULL, T_BOOL, &cfg.io_uring, 0, 1, IMMUTABLE | SAME_OK, NULL, NULL, NULL},
    {"requirepass", NULL, T_STR, &cfg.requirepass, 0, 0, 0, NULL, NULL, NULL},
    {"maxclients", NULL, T_LL, &cfg.maxclients, 1, UINT_MAX, 0, NULL, NULL, NULL},
    {"timeout", NULL, T_INT, &cfg.timeout, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"protected-mode", NULL, T_BOOL, &cfg.protected_mode, 0, 1, 0, NULL, NULL, NULL},
    {"tcp-backlog", NULL, T_INT, &cfg.tcp_backlog, 0, INT_MAX, IMMUTABLE, NULL, NULL, NULL},
    {"tcp-keepalive", NULL, T_INT, &cfg.tcp_keepalive, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"databases", NULL, T_INT, &cfg.databases, 1, MAX_DBS, IMMUTABLE, NULL, NULL, NULL},
    {"hz", NULL, T_INT, &cfg.hz, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"proto-max-bulk-len", NULL, T_MEM, &cfg.proto_max_bulk_len, 1024 * 1024, ENTRY_MAX_LEN, 0, NULL, NULL, NULL},
    {"client-query-buffer-limit", NULL, T_MEM, &cfg.client_query_buffer_limit, 1024 * 1024, LLONG_MAX, 0, NULL, NULL, NULL},
    {"client-output-buffer-limit", NULL, T_SPECIAL, NULL, 0, 0, 0, NULL, set_obuf, get_obuf},
    {"logfile", NULL, T_STR, &cfg.logfile, 0, 0, IMMUTABLE, NULL, NULL, NULL},
    {"loglevel", NULL, T_ENUM, &cfg.loglevel, 0, 0, 0, loglevels, NULL, NULL},
    {"daemonize", NULL, T_BOOL, &cfg.daemonize, 0, 1, IMMUTABLE, NULL, NULL, NULL},
    {"pidfile", NULL, T_STR, &cfg.pidfile, 0, 0, IMMUTABLE, NULL, NULL, NULL},
    {"dir", NULL, T_SPECIAL, &cfg.dir, 0, 0, PROTECTED, NULL, set_dir, get_dir},
    {"dbfilename", NULL, T_STR, &cfg.dbfilename, 0, 0, PROTECTED, NULL, NULL, NULL},
    {"enable-protected-configs", NULL, T_ENUM, &cfg.enable_protected_configs, 0, 0, IMMUTABLE, allow_modes, NULL, NULL},
    {"enable-debug-command", NULL, T_ENUM, &cfg.enable_debug_command, 0, 0, IMMUTABLE, allow_modes, NULL, NULL},
    {"enable-module-command", NULL, T_ENUM, &cfg.enable_module_command, 0, 0, IMMUTABLE, allow_modes, NULL, NULL},
    {"maxmemory", NULL, T_MEM, &cfg.maxmemory, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"maxmemory-clients", NULL, T_SPECIAL, &cev_maxmemory_clients, 0, 0, 0, NULL, set_maxmemory_clients, get_maxmemory_clients},
    {"maxmemory-samples", NULL, T_INT, &cfg.maxmemory_samples, 1, INT_MAX, 0, NULL, NULL, NULL},
    {"maxmemory-eviction-tenacity", NULL, T_INT, &cfg.maxmemory_eviction_tenacity, 0, 100, 0, NULL, NULL, NULL},
    {"active-expire-effort", NULL, T_INT, &cfg.active_expire_effort, 1, 10, 0, NULL, NULL, NULL},
    {"maxmemory-policy", NULL, T_SPECIAL, &cfg.maxmemory_policy, 0, 0, 0, NULL, set_maxmemory_policy, get_str},
    {"lfu-log-factor", NULL, T_INT, (void *)&db_lfu_log_factor, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"lfu-decay-time", NULL, T_INT, (void *)&db_lfu_decay_time, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"list-max-listpack-size", "list-max-ziplist-size", T_INT, &list_max_listpack_size, INT_MIN, INT_MAX, 0, NULL, NULL, NULL},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", T_INT, &hash_max_listpack_entries, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"hash-max-listpack-value", "hash-max-ziplist-value", T_INT, &hash_max_listpack_value, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"set-max-intset-entries", NULL, T_INT, &set_max_intset_entries, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"set-max-listpack-entries", NULL, T_INT, &set_max_listpack_entries, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"set-max-listpack-value", NULL, T_INT, &set_max_listpack_value, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", T_INT, &zset_max_listpack_entries, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"zset-max-listpack-value", "zset-max-ziplist-value", T_INT, &zset_max_listpack_value, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"list-compress-depth", NULL, T_INT, &list_compress_depth, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"stream-node-max-bytes", NULL, T_MEM, &stream_node_max_bytes, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"stream-node-max-entries", NULL, T_LL, &stream_node_max_entries, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"hll-sparse-max-bytes", NULL, T_MEM, &hll_sparse_max_bytes, 0, LONG_MAX, 0, NULL, NULL, NULL},
    {"save", NULL, T_SPECIAL, &cfg.save, 0, 0, 0, NULL, set_save, get_str},
    /* TLS (net/tls.c).  Strings: "" is unset.  tls-auth-clients applies to
     * the next connections (no rebuild), as in Redis; tls-replication and
     * tls-cluster are stored for replication and the cluster bus. */
    {"tls-port", NULL, T_INT, &tls_cfg.port, 0, 65535, TLS_LISTEN, NULL, NULL, NULL},
    {"tls-cert-file", NULL, T_STR, &tls_cfg.cert_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-key-file", NULL, T_STR, &tls_cfg.key_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-key-file-pass", NULL, T_STR, &tls_cfg.key_file_pass, 0, 0, TLS_CTX | SENSITIVE, NULL, NULL, NULL},
    {"tls-client-cert-file", NULL, T_STR, &tls_cfg.client_cert_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-client-key-file", NULL, T_STR, &tls_cfg.client_key_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-client-key-file-pass", NULL, T_STR, &tls_cfg.client_key_file_pass, 0, 0, TLS_CTX | SENSITIVE, NULL, NULL, NULL},
    {"tls-dh-params-file", NULL, T_STR, &tls_cfg.dh_params_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-ca-cert-file", NULL, T_STR, &tls_cfg.ca_cert_file, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-ca-cert-dir", NULL, T_STR, &tls_cfg.ca_cert_dir, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-protocols", NULL, T_STR, &tls_cfg.protocols, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-ciphers", NULL, T_STR, &tls_cfg.ciphers, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-ciphersuites", NULL, T_STR, &tls_cfg.ciphersuites, 0, 0, TLS_CTX, NULL, NULL, NULL},
    {"tls-auth-clients", NULL, T_ENUM, &tls_cfg.auth_clients, 0, 0, 0, tls_auth_modes, NULL, NULL},
    {"tls-auth-clients-user", NULL, T_ENUM, &tls_cfg.auth_clients_user, 0, 0, 0, tls_auth_user_modes, NULL, NULL},
    {"tls-cluster", NULL, T_BOOL, &tls_cfg.cluster, 0, 1, TLS_CTX, NULL, NULL, NULL},
    {"tls-replication", NULL, T_BOOL, &tls_cfg.replication, 0, 1, TLS_CTX, NULL, NULL, NULL},
    {"tls-prefer-server-ciphers", NULL, T_BOOL, &tls_cfg.prefer_server_ciphers, 0, 1, TLS_CTX, NULL, NULL, NULL},
    {"tls-session-caching", NULL, T_BOOL, &tls_cfg.session_caching, 0, 1, TLS_CTX, NULL, NULL, NULL},
    {"tls-session-cache-size", NULL, T_INT, &tls_cfg.session_cache_size, 0, INT_MAX, TLS_CTX, NULL, NULL, NULL},
    {"tls-session-cache-timeout", NULL, T_INT, &tls_cfg.session_cache_timeout, 0, INT_MAX, TLS_CTX, NULL, NULL, NULL},
#include "compat.tab"
    {"rdbcompression", NULL, T_BOOL, &cfg.rdbcompression, 0, 1, 0, NULL, NULL, NULL},
    {"rdbchecksum", NULL, T_BOOL, &cfg.rdbchecksum, 0, 1, 0, NULL, NULL, NULL},
    {"rdb-version", NULL, T_INT, &cfg.rdb_version, 10, 12, 0, NULL, NULL, NULL},
    {"stop-writes-on-bgsave-error", NULL, T_BOOL, &cfg.stop_writes_on_bgsave_error, 0, 1, 0, NULL, NULL, NULL},
    {"rdb-del-sync-files", NULL, T_BOOL, &cfg.rdb_del_sync_files, 0, 1, 0, NULL, NULL, NULL},
    {"rdb-save-incremental-fsync", NULL, T_BOOL, &cfg.rdb_save_incremental_fsync, 0, 1, 0, NULL, NULL, NULL},
    {"rdb-key-save-delay", NULL, T_LL, &cfg.rdb_key_save_delay, LLONG_MIN, LLONG_MAX, HIDDEN, NULL, NULL, NULL},
    {"key-load-delay", NULL, T_LL, &cfg.key_load_delay, LLONG_MIN, LLONG_MAX, HIDDEN, NULL, NULL, NULL},
    {"sanitize-dump-payload", NULL, T_ENUM, &cfg.sanitize_dump_payload, 0, 0, 0, sanitize_modes, NULL, NULL},
    {"appendonly", NULL, T_SPECIAL, &cfg.appendonly, 0, 1, 0, NULL, set_appendonly, get_bool},
    {"appendfsync", NULL, T_ENUM, &cfg.appendfsync, 0, 0, 0, fsyncs, NULL, NULL},
    {"appendfilename", NULL, T_STR, &cfg.appendfilename, 0, 0, IMMUTABLE, NULL, NULL, NULL},
    {"appenddirname", NULL, T_STR, &cfg.appenddirname, 0, 0, IMMUTABLE, NULL, NULL, NULL},
    {"auto-aof-rewrite-percentage", NULL, T_INT, &cfg.auto_aof_rewrite_percentage, 0, INT_MAX, 0, NULL, NULL, NULL},
    {"auto-aof-rewrite-min-size", NULL, T_MEM, &cfg.auto_aof_rewrite_min_size, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"aof-use-rdb-preamble", NULL, T_BOOL, &cfg.aof_use_rdb_preamble, 0, 1, 0, NULL, NULL, NULL},
    {"aof-load-truncated", NULL, T_BOOL, &cfg.aof_load_truncated, 0, 1, 0, NULL, NULL, NULL},
    {"aof-timestamp-enabled", NULL, T_BOOL, &cfg.aof_timestamp_enabled, 0, 1, 0, NULL, NULL, NULL},
    {"aof-rewrite-incremental-fsync", NULL, T_BOOL, &cfg.aof_rewrite_incremental_fsync, 0, 1, 0, NULL, NULL, NULL},
    {"no-appendfsync-on-rewrite", NULL, T_BOOL, &cfg.no_appendfsync_on_rewrite, 0, 1, 0, NULL, NULL, NULL},
    {"lazyfree-lazy-user-flush", NULL, T_BOOL, &cfg.lazyfree_lazy_user_flush, 0, 1, 0, NULL, NULL, NULL},
    {"lazyfree-lazy-user-del", NULL, T_BOOL, &cfg.lazyfree_lazy_user_del, 0, 1, 0, NULL, NULL, NULL},
    {"lazyfree-lazy-server-del", NULL, T_BOOL, &cfg.lazyfree_lazy_server_del, 0, 1, 0, NULL, NULL, NULL},
    {"lazyfree-lazy-expire", NULL, T_BOOL, &cfg.lazyfree_lazy_expire, 0, 1, 0, NULL, NULL, NULL},
    {"lazyfree-lazy-eviction", NULL, T_BOOL, &cfg.lazyfree_lazy_eviction, 0, 1, 0, NULL, NULL, NULL},
    /* The slow log and the latency monitor (cmd/slowlog.c, cmd/latency.c). */
    {"slowlog-log-slower-than", NULL, T_LL, &cfg.slowlog_log_slower_than, -1, LLONG_MAX, 0, NULL, NULL, NULL},
    {"slowlog-max-len", NULL, T_LL, &cfg.slowlog_max_len, 0, LONG_MAX, 0, NULL, NULL, NULL},
    {"latency-monitor-threshold", NULL, T_LL, &latency_monitor_threshold, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"latency-tracking", NULL, T_BOOL, &cfg.latency_tracking, 0, 1, 0, NULL, NULL, NULL},
    {"latency-tracking-info-percentiles", NULL, T_SPECIAL, NULL, 0, 0, 0, NULL, set_latency_pct, get_latency_pct},
    {"tracking-table-max-keys", NULL, T_LL, &tracking_table_max_keys, 0, LONG_MAX, 0, NULL, NULL, NULL},
    {"busy-reply-threshold", "lua-time-limit", T_LL, &script_busy_reply_threshold, 0, LLONG_MAX, 0, NULL, NULL, NULL},
    {"notify-keyspace-events", NULL, T_SPECIAL, NULL, 0, 0, 0, NULL, set_notify, get_notify},
};
#define NPARAMS ((int)(sizeof(params) / sizeof(params[0])))

static void rewrite_snapshot_defaults(void);
static int config_rewrite_file(const char *path, char *err, size_t errlen);

void config_defaults(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cfg.port = 6379;
    cfg.bind = hk_strdup("127.0.0.1 -::1");
    cfg.threads = n > 0 ? (int)n : 1;
    cfg.io_threads = 1;
    cfg.io_uring = 1;
    cfg.requirepass = NULL;
    cfg.maxclients = 10000;
    cfg.timeout = 0;
    cfg.protected_mode = 1;
    cfg.enable_protected_configs = CFG_ALLOW_NO;
    cfg.enable_debug_command = CFG_ALLOW_NO;
    cfg.enable_module_command = CFG_ALLOW_NO;
    cfg.tcp_backlog = 511;
    cfg.tcp_keepalive = 300;
    cfg.databases = 16;
    cfg.hz = 10;
    cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    cfg.client_query_buffer_limit = 1024LL * 1024 * 1024;
    cfg.obuf[CLIENT_CLASS_NORMAL] = (struct obuf_limit){0, 0, 0};
    cfg.obuf[CLIENT_CLASS_REPLICA] = (struct obuf_limit){256LL << 20, 64LL << 20, 60};
    cfg.obuf[CLIENT_CLASS_PUBSUB] = (struct obuf_limit){32LL << 20, 8LL << 20, 60};
    cfg.logfile = hk_strdup("");
    cfg.loglevel = LL_NOTICE;
    cfg.daemonize = 0;
    cfg.pidfile = hk_strdup("");
    cfg.dir = NULL;
    cfg.dbfilename = hk_strdup("dump.rdb");
    cfg.active_expire = 1;
    cfg.maxmemory_policy = hk_strdup("noeviction");
    cfg.maxmemory_samples = 5;
    cfg.maxmemory_eviction_tenacity = 10;
    cfg.active_expire_effort = 1;
    cfg.save = hk_strdup("3600 1 300 100 60 10000");
    cfg.rdbcompression = 1;
    cfg.rdbchecksum = 1;
    cfg.rdb_version = 11;
    cfg.stop_writes_on_bgsave_error = 1;
    cfg.rdb_save_incremental_fsync = 1;
    cfg.sanitize_dump_payload = 0;
    cfg.appendonly = 0;
    cfg.appendfsync = AOF_FSYNC_EVERYSEC;
    cfg.appendfilename = hk_strdup("appendonly.aof");
    cfg.appenddirname = hk_strdup("appendonlydir");
    cfg.auto_aof_rewrite_percentage = 100;
    cfg.auto_aof_rewrite_min_size = 64LL << 20;
    cfg.aof_use_rdb_preamble = 1;
    cfg.aof_load_truncated = 1;
    cfg.aof_rewrite_incremental_fsync = 1;
    compat_defaults();
    cfg.slowlog_log_slower_than = 10000;
    cfg.slowlog_max_len = 128;
    cfg.latency_tracking = 1;
    rewrite_snapshot_defaults(); /* last: CONFIG REWRITE's notion of "default" */
}

static void param_get(const struct param *p, char *buf, size_t cap);
/* SAME_OK: the new value is the current one (compared as CONFIG GET
 * shows it, case-blind for yes/no). */
static int same_value_ok(const struct param *p, const char *v)
{
    char cur[256];
    if (!(p->flags & SAME_OK))
        return 0;
    param_get(p, cur, sizeof(cur));
    return !strcasecmp(cur, v);
}

static const struct param *find_param(const char *name)
{
    for (int i = 0; i < NPARAMS; i++)
        if (!strcasecmp(params[i].name, name) || (params[i].alias && !strcasecmp(params[i].alias, name)))
            return &params[i];
    return NULL;
}

static void get_str(const struct param *p, char *buf, size_t cap)
{
    const char *s = *(char **)p->ptr;
    snprintf(buf, cap, "%s", s ? s : "");
}

static void param_get(const struct param *p, char *buf, size_t cap)
{
    if (p->get) {
        p->get(p, buf, cap);
        return;
    }
    if (p->ptr == &cfg.port) {
        snprintf(buf, cap, "%d", cfg.port);
        return;
    }
    switch (p->type) {
    /* Atomic loads: param_set stores these atomically from any worker. */
    case T_BOOL:
        snprintf(buf, cap, "%s", __atomic_load_n((int *)p->ptr, __ATOMIC_RELAXED) ? "yes" : "no");
        break;
    case T_INT:
        snprintf(buf, cap, "%d", __atomic_load_n((int *)p->ptr, __ATOMIC_RELAXED));
        break;
    case T_MEM:
    case T_LL:
        snprintf(buf, cap, "%lld", __atomic_load_n((long long *)p->ptr, __ATOMIC_RELAXED));
        break;
    case T_STR:
        get_str(p, buf, cap);
        break;
    case T_ENUM:
        snprintf(buf, cap, "%s", p->enums[*(int *)p->ptr]);
        break;
    case T_OCTAL:
        snprintf(buf, cap, "%o", (unsigned)*(int *)p->ptr);
        break;
    default:
        buf[0] = 0;
    }
}

static int set_obuf(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    /* "class hard soft secs" repeated, all in one string or as words. */
    char joined[1024] = "";
    char *words[64];
    int nw = 0;
    struct obuf_limit tmp[CLIENT_CLASSES];
    (void)p;
    size_t len = 0;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (n >= sizeof(joined) - 1 - len) { /* the words and a space each */
            snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
            return -1;
        }
        memcpy(joined + len, argv[i], n);
        len += n;
        joined[len++] = ' ';
        joined[len] = 0;
    }
    int extra = 0;
    for (char *save = NULL, *t = strtok_r(joined, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (nw < 64)
            words[nw++] = t;
        else
            extra = 1;
    }
    if (nw == 0 || nw % 4 || extra) {
        snprintf(err, errlen, "Wrong number of arguments in buffer limit configuration.");
        return -1;
    }
    memcpy(tmp, cfg.obuf, sizeof(tmp));
    for (int i = 0; i < nw; i += 4) {
        int cls, ok1, ok2;
        if (!strcasecmp(words[i], "normal"))
            cls = CLIENT_CLASS_NORMAL;
        else if (!strcasecmp(words[i], "replica") || !strcasecmp(words[i], "slave"))
            cls = CLIENT_CLASS_REPLICA;
        else if (!strcasecmp(words[i], "pubsub"))
            cls = CLIENT_CLASS_PUBSUB;
        else {
            snprintf(err, errlen, "Invalid client class specified in buffer limit configuration.");
            return -1;
        }
        long long hard = config_mem_parse(words[i + 1], &ok1);
        long long soft = config_mem_parse(words[i + 2], &ok2);
        char *end;
        long long secs = strtoll(words[i + 3], &end, 10);
        if (!ok1 || !ok2 || *end || secs < 0 || hard < 0 || soft < 0) {
            snprintf(err, errlen, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            return -1;
        }
        tmp[cls] = (struct obuf_limit){hard, soft, secs};
    }
    memcpy(cfg.obuf, tmp, sizeof(tmp));
    return 0;
}

/* bind takes one or more addresses (as separate words, or one string). */
static int set_bind(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    char joined[1024] = "";
    (void)p;
    size_t len = 0;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (n + (i > 0) >= sizeof(joined) - len) { /* never cut an address */
            snprintf(err, errlen, "Too many bind addresses specified.");
            return -1;
        }
        if (i)
            joined[len++] = ' ';
        memcpy(joined + len, argv[i], n + 1);
        len += n;
    }
    /* At most 16 addresses (Redis's CONFIG_BINDADDR_MAX; a worker keeps 16
     * listeners of each kind, net/worker.h). */
    int words = 0;
    for (const char *q = joined; *q;) {
        while (*q == ' ')
            q++;
        if (*q)
            words++;
        while (*q && *q != ' ')
            q++;
    }
    if (!words || words > 16) {
        snprintf(err, errlen, "Too many bind addresses specified.");
        return -1;
    }
    if (nworkers > 0 && strcmp(joined, cfg.bind) != 0 && workers_rebind(joined, cfg.port) < 0) {
        snprintf(err, errlen, "Failed to bind to specified addresses.");
        return -1;
    }
    /* The TLS listeners move with the TCP ones (back if they cannot). */
    int tport = __atomic_load_n(&tls_cfg.port, __ATOMIC_RELAXED);
    if (nworkers > 0 && tport && strcmp(joined, cfg.bind) != 0 && workers_rebind_tls(joined, tport, tport) < 0) {
        (void)workers_rebind(cfg.bind, cfg.port);
        snprintf(err, errlen, "Failed to bind to specified addresses.");
        return -1;
    }
    retire(cfg.bind);
    cfg.bind = hk_strdup(joined);
    return 0;
}

static void get_obuf(const struct param *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "normal %lld %lld %lld slave %lld %lld %lld pubsub %lld %lld %lld", cfg.obuf[0].hard, cfg.obuf[0].soft,
             cfg.obuf[0].soft_secs, cfg.obuf[1].hard, cfg.obuf[1].soft, cfg.obuf[1].soft_secs, cfg.obuf[2].hard,
             cfg.obuf[2].soft, cfg.obuf[2].soft_secs);
}

static int set_maxmemory_policy(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    (void)argc;
    for (int i = 0; policies[i]; i++) {
        if (!strcasecmp(argv[0], policies[i])) {
            retire(*(char **)p->ptr);
            *(char **)p->ptr = hk_strdup(policies[i]);
            db_lfu_mode = strstr(policies[i], "lfu") != NULL;
            __atomic_store_n(&mm_policy, i, __ATOMIC_RELAXED); /* same order as cmd/evict.h MM_* */
            return 0;
        }
    }
    snprintf(err, errlen, "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction");
    return -1;
}

/* maxmemory-clients: bytes with units, or "N%" of maxmemory (kept as -N),
 * 0 off (net/client_evict.h); a new value is enforced before the reply. */
static int set_maxmemory_clients(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    long long v;
    (void)p;
    if (argc != 1) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    if (cev_config_parse(argv[0], &v, err, errlen) < 0)
        return -1;
    __atomic_store_n(&cev_maxmemory_clients, v, __ATOMIC_RELAXED);
    cev_config_changed();
    return 0;
}

static void get_maxmemory_clients(const struct param *p, char *buf, size_t cap)
{
    (void)p;
    cev_config_format(buf, cap);
}

/* save: "<seconds> <changes> ..." pairs, as one string or as words; ""
 * means no save points.  At start-up (config file, arguments) every save
 * directive after the first adds its points to the ones before, as in
 * Redis; CONFIG SET replaces them. */
static int save_directives;
static int set_save(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    char out[1024] = "";
    size_t ol = 0;
    long long nums[128];
    int nn = 0;
    (void)p;
    for (int i = 0; i < argc; i++) {
        char tmp[1024];
        snprintf(tmp, sizeof(tmp), "%s", argv[i]);
        for (char *sv = NULL, *t = strtok_r(tmp, " ", &sv); t; t = strtok_r(NULL, " ", &sv)) {
            char *end;
            errno = 0;
            long long v = strtoll(t, &end, 10);
            if (errno || !*t || *end || v < 0 || nn == 128) {
                snprintf(err, errlen, "Invalid save parameters");
                return -1;
            }
            nums[nn++] = v;
        }
    }
    if (nn % 2) {
        snprintf(err, errlen, "Invalid save parameters");
        return -1;
    }
    int append = nworkers == 0 && save_directives++ > 0 && nn > 0 && cfg.save && cfg.save[0];
    if (append)
        ol = (size_t)snprintf(out, sizeof(out), "%s", cfg.save);
    for (int i = 0; i < nn && ol < sizeof(out); i++)
        ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s%lld", ol ? " " : "", nums[i]);
    char *old = cfg.save;
    __atomic_store_n(&cfg.save, hk_strdup(out), __ATOMIC_RELEASE);
    retire(old);
    return 0;
}

static int set_appendonly(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    (void)p;
    int on;
    if (argc != 1 || (strcasecmp(argv[0], "yes") && strcasecmp(argv[0], "no"))) {
        snprintf(err, errlen, "argument must be 'yes' or 'no'");
        return -1;
    }
    on = !strcasecmp(argv[0], "yes");
    if (nworkers > 0 && config_appendonly_hook && on != cfg.appendonly)
        return config_appendonly_hook(on, err, errlen);
    __atomic_store_n(&cfg.appendonly, on, __ATOMIC_RELAXED);
    return 0;
}

/* dir: the working directory, where RDB and AOF files go.  At run time
 * the process changes directory at once (a save already running in a
 * child keeps the old one); CONFIG GET shows the absolute path. */
static int set_dir(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    (void)p;
    if (argc != 1) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    if (nworkers > 0 && chdir(argv[0]) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    char *old = cfg.dir;
    __atomic_store_n(&cfg.dir, hk_strdup(argv[0]), __ATOMIC_RELEASE);
    retire(old);
    return 0;
}

static void get_dir(const struct param *p, char *buf, size_t cap)
{
    (void)p;
    if (nworkers > 0 && getcwd(buf, cap))
        return;
    snprintf(buf, cap, "%s", cfg.dir ? cfg.dir : ".");
}

static void get_bool(const struct param *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", __atomic_load_n((int *)p->ptr, __ATOMIC_RELAXED) ? "yes" : "no");
}

/* notify-keyspace-events: the class letters (cmd/notify.c). */
static int set_notify(const struct param *p, int argc, char **argv, char *err, size_t errlen)
{
    (void)p;
    if (argc != 1) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    return notify_config_set(argv[0], strlen(argv[0]), err, errlen);
}

static void get_notify(const struct param *p, char *buf, size_t cap)
{
    (void)p;
    notify_format_flags(atomic_load(&notify_flags), buf, cap);
}

/* Validate and store one parameter.  apply=0 only validates. */
static int param_set(const struct param *p, int argc, char **argv, int apply, char *err, size_t errlen)
{
    if (p->set) {
        if (!apply) {
            /* Specials validate by setting into a scratch copy is not
             * possible generically; they are all-or-nothing themselves. */
            if (p->set == set_notify && argc == 1 && notify_parse_flags(argv[0], strlen(argv[0])) < 0)
                return set_notify(p, argc, argv, err, errlen); /* fails, changes nothing */
            if (p->set == set_maxmemory_clients) {
                long long v;
                return argc == 1 ? cev_config_parse(argv[0], &v, err, errlen) : set_maxmemory_clients(p, argc, argv, err, errlen);
            }
            if (p->set == set_shutdown_sig) {
                int v;
                return parse_shutdown_sig(argc, argv, &v, err, errlen);
            }
            if (p->set == set_oom_values) {
                int v[3];
                return parse_oom_values(argc, argv, v, err, errlen);
            }
            if (p->set == set_replicaof) {
                long port;
                return parse_replicaof(argc, argv, &port, err, errlen);
            }
        }
        return apply ? p->set(p, argc, argv, err, errlen) : 0;
    }
    if (argc != 1) {
        snprintf(err, errlen, "wrong number of arguments");
        return -1;
    }
    const char *v = argv[0];
    if (check_value(p, v, err, errlen) < 0) /* compat.inc */
        return -1;
    switch (p->type) {
    case T_OCTAL: {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 8);
        if (!*v || *end || errno) {
            snprintf(err, errlen, "argument couldn't be parsed as an octal number");
            return -1;
        }
        if (x < p->min || x > p->max) {
            snprintf(err, errlen, "argument must be between %llo and %llo inclusive", (unsigned long long)p->min,
                     (unsigned long long)p->max);
            return -1;
        }
        if (apply)
            __atomic_store_n((int *)p->ptr, (int)x, __ATOMIC_RELAXED);
        return 0;
    }
    case T_BOOL: {
        int b;
        if (!strcasecmp(v, "yes"))
            b = 1;
        else if (!strcasecmp(v, "no"))
            b = 0;
        else {
            snprintf(err, errlen, "argument must be 'yes' or 'no'");
            return -1;
        }
        if (apply)
            __atomic_store_n((int *)p->ptr, b, __ATOMIC_RELAXED); /* read lock-free by workers */
        return 0;
    }
    case T_INT:
    case T_LL:
    case T_MEM: {
        long long x;
        int ok = 1;
        if (p->type == T_MEM) {
            x = config_mem_parse(v, &ok);
        } else {
            char *end;
            errno = 0;
            x = strtoll(v, &end, 10);
            ok = *v && !*end && !errno;
        }
        if (!ok || (p->type == T_MEM && x < 0)) {
            /* Redis's words: memory values (with k/m/g units) are never
             * negative. */
            snprintf(err, errlen, p->type == T_MEM ? "argument must be a memory value"
                                                   : "argument couldn't be parsed into an integer");
            return -1;
        }
        if (x < p->min || x > p->max) {
            snprintf(err, errlen, "argument must be between %lld and %lld inclusive", p->min, p->max);
            return -1;
        }
        if (p->ptr == &cfg.hz) /* Redis takes 0..INT_MAX and keeps it in 1..500 */
            x = x < 1 ? 1 : x > 500 ? 500 : x;
        if (apply) {
            if (p->type == T_MEM || p->type == T_LL)
                __atomic_store_n((long long *)p->ptr, x, __ATOMIC_RELAXED);
            else
                __atomic_store_n((int *)p->ptr, (int)x, __ATOMIC_RELAXED);
            if (p->ptr == &cfg.maxmemory)
                evict_maxmemory_changed();
        }
        return 0;
    }
    case T_STR:
        /* A file name that is a path would let the file land outside
         * dir ("../x.rdb"); Redis refuses '/' and '\\' alike. */
        if ((p->ptr == &cfg.dbfilename || p->ptr == &cfg.appendfilename || p->ptr == &cfg.appenddirname) &&
            strpbrk(v, "/\\")) {
            snprintf(err, errlen, "%s can't be a path, just a %s", p->name,
                     p->ptr == &cfg.appenddirname ? "dirname" : "filename");
            return -1;
        }
        if (apply) {
            char **sp = p->ptr;
            if (p->ptr == &cfg.requirepass) {
                size_t n = value_len(v);
                struct binstr *b = NULL;
                if (n) {
                    b = hk_malloc(sizeof(*b) + n + 1);
                    b->len = n;
                    memcpy(b->s, v, n);
                    b->s[n] = 0;
                }
                retire((char *)requirepass_bin);
                __atomic_store_n(&requirepass_bin, b, __ATOMIC_RELEASE);
                __atomic_store_n(sp, b ? b->s : NULL, __ATOMIC_RELEASE);
                acl_set_requirepass(b ? b->s : NULL, n); /* the default user's password (cmd/acl.h) */
            } else {
                retire(*sp);
                *sp = hk_strdup(v);
            }
        }
        return 0;
    case T_ENUM:
        for (int i = 0; p->enums[i]; i++) {
            if (!strcasecmp(v, p->enums[i])) {
                if (p->enums == oom_adj_modes && i == 2)
                    i = 1; /* "relative" is "yes" */
                if (apply)
                    __atomic_store_n((int *)p->ptr, i, __ATOMIC_RELAXED); /* tls-auth-clients: read at accept */
                return 0;
            }
        }
        snprintf(err, errlen, "argument(s) must be one of the following: ");
        for (int i = 0; p->enums[i]; i++) {
            strncat(err, p->enums[i], errlen - strlen(err) - 1);
            if (p->enums[i + 1])
                strncat(err, ", ", errlen - strlen(err) - 1);
        }
        return -1;
    }
    return -1;
}

/* param_set of the one value v, n bytes long (binary-safe for requirepass). */
static int param_set_n(const struct param *p, char *v, size_t n, int apply, char *err, size_t errlen)
{
    binval_ptr = v;
    binval_len = n;
    int rc = param_set(p, 1, &v, apply, err, errlen);
    binval_ptr = NULL;
    return rc;
}

/* lens: the words' lengths (a word may hold NUL bytes), or NULL. */
static int config_apply_lens(int argc, char **argv, const size_t *lens, char *err, size_t errlen)
{
    const struct param *p;
    /* rename-command OLD NEW: start-up only (there is no CONFIG SET for
     * it), as in Redis; NEW "" removes the command. */
    if (!strcasecmp(argv[0], "rename-command") && argc == 3)
        return cmd_rename(argv[1], argv[2], err, errlen);
    p = find_param(argv[0]);
    if (!p)
        return other_directive(argc, argv, err, errlen); /* include, ... (compat.inc) */
    if (argc < 2) {
        /* "requirepass" with no value, or "save" style empty */
        char *empty = "";
        return param_set(p, 1, &empty, 1, err, errlen);
    }
    if (lens && argc == 2) {
        if (param_set_n(p, argv[1], lens[1], 0, err, errlen) < 0)
            return -1;
        return param_set_n(p, argv[1], lens[1], 1, err, errlen);
    }
    if (param_set(p, argc - 1, argv + 1, 0, err, errlen) < 0)
        return -1;
    return param_set(p, argc - 1, argv + 1, 1, err, errlen);
}

int config_apply(int argc, char **argv, char *err, size_t errlen)
{
    return config_apply_lens(argc, argv, NULL, err, errlen);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Split a config line into words with redis.conf quoting rules (in double
 * quotes \n \r \t \b \a and \xHH, which may make a NUL byte: lens gets
 * each word's length; in single quotes \' only). */
static int split_line(char *line, char **words, size_t *lens, int max)
{
    int n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            char *w = p, *o = p;
            while (*p && *p != q) {
                if (q == '"' && *p == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
                    *o++ = (char)(hexval(p[2]) * 16 + hexval(p[3]));
                    p += 4;
                } else if (q == '"' && *p == '\\' && p[1]) {
                    p++;
                    *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p == 'b' ? '\b' : *p == 'a' ? '\a' : *p;
                    p++;
                } else if (q == '\'' && *p == '\\' && p[1] == '\'') {
                    *o++ = '\'';
                    p += 2;
                } else {
                    *o++ = *p++;
                }
            }
            if (*p != q)
                return -1;
            p++;
            *o = 0;
            lens[n] = (size_t)(o - w);
            words[n++] = w;
            if (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
                return -1;
        } else {
            char *w = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
                p++;
            lens[n] = (size_t)(p - w);
            words[n++] = w;
        }
        if (*p)
            *p++ = 0;
    }
    return n;
}

static int apply_text(char *text, const char *origin, char *err, size_t errlen)
{
    int lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *words[128];
        size_t lens[128];
        char e[256];
        int n;
        lineno++;
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line || *line == '#')
            continue;
        char copy[1024];
        snprintf(copy, sizeof(copy), "%s", line);
        n = split_line(line, words, lens, 128);
        if (n < 0) {
            snprintf(err, errlen, "*** FATAL CONFIG FILE ERROR ***\nReading the configuration file, at line %d\n>>> '%s'\nUnbalanced quotes in configuration line", lineno, copy);
            return -1;
        }
        if (n == 0)
            continue;
        if (config_apply_lens(n, words, lens, e, sizeof(e)) < 0) {
            snprintf(err, errlen, "*** FATAL CONFIG FILE ERROR (%s) ***\nReading the configuration file, at line %d\n>>> '%s'\n%s", origin, lineno, copy, e);
            return -1;
        }
    }
    return 0;
}

int config_load_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n = 0, cap = 4096;
    int rc;
    if (!f) {
        snprintf(err, errlen, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    /* Read to the end rather than trust a size: a pipe (hotkv-server
     * <(...)) has none.  64 MB is far beyond any real file. */
    buf = hk_malloc(cap);
    for (;;) {
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0 || n > (64u << 20))
            break;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = hk_realloc(buf, cap);
        }
    }
    buf[n] = 0;
    fclose(f);
    if (n > (64u << 20)) {
        hk_free(buf);
        snprintf(err, errlen, "Fatal error, config file '%s' is larger than 64 MB", path);
        return -1;
    }
    rc = apply_text(buf, "file", err, errlen);
    hk_free(buf);
    return rc;
}

int config_from_args(int argc, char **argv, char *err, size_t errlen)
{
    int i = 1;
    if (i < argc && argv[i][0] != '-') {
        char real[4096];
        if (realpath(argv[i], real))
            cfg.config_file = hk_strdup(real);
        else
            cfg.config_file = hk_strdup(argv[i]);
        if (config_load_file(argv[i], err, errlen) < 0)
            return -1;
        i++;
    }
    /* --name v1 v2 --name2 v ... becomes config lines. */
    while (i < argc) {
        char *words[64];
        int n = 0;
        if (strncmp(argv[i], "--", 2) != 0 || !argv[i][2]) {
            snprintf(err, errlen, "Invalid argument '%s': expected --name value", argv[i]);
            return -1;
        }
        words[n++] = argv[i] + 2;
        i++;
        while (i < argc && n < 64 && !(strncmp(argv[i], "--", 2) == 0 && argv[i][2] && !isdigit((unsigned char)argv[i][2])))
            words[n++] = argv[i++];
        char e[256];
        if (config_apply(n, words, e, sizeof(e)) < 0) {
            snprintf(err, errlen, "*** FATAL CONFIG FILE ERROR (command line) ***\n>>> '%s'\n%s", words[0], e);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ CONFIG --- */
void config_command(struct client *c)
{
    const char *sub = c->cmd->name + 7; /* after "config|" */
    if (!strcmp(sub, "get")) {
        size_t mark = reply_defer(&c->out);
        long long n = 0;
        char *seen = hk_calloc((size_t)NPARAMS);
        for (int j = 2; j < c->argc; j++) {
            for (int i = 0; i < NPARAMS; i++) {
                const struct param *p = &params[i];
                int pattern = memchr(c->argv[j], '*', c->argvlen[j]) || memchr(c->argv[j], '?', c->argvlen[j]) ||
                              memchr(c->argv[j], '[', c->argvlen[j]);
                if ((p->flags & HIDDEN) && pattern)
                    continue; /* hidden: its exact name only */
                /* The name and the old alias are two entries, as Redis 7.2
                 * lists them (seen: bit 1 the name, bit 2 the alias). */
                for (int k = 0; k < 2; k++) {
                    const char *shown = k ? p->alias : p->name;
                    if (!shown || (seen[i] & (1 << k)) || !glob_match(c->argv[j], c->argvlen[j], shown, strlen(shown), 1))
                        continue;
                    seen[i] |= (char)(1 << k);
                    char val[1024];
                    reply_bulk_cstr(&c->out, shown);
                    if (p->ptr == &cfg.requirepass) { /* binary-safe, any length */
                        const struct binstr *rp = requirepass_now();
                        reply_bulk(&c->out, rp->s, rp->len);
                    } else {
                        param_get(p, val, sizeof(val));
                        reply_bulk_cstr(&c->out, val);
                    }
                    n++;
                }
            }
        }
        hk_free(seen);
        reply_defer_map(&c->out, mark, n);
    } else if (!strcmp(sub, "set")) {
        char err[512];
        int npairs;
        if ((c->argc - 2) % 2) {
            reply_arity_error(c);
            return;
        }
        npairs = (c->argc - 2) / 2;
        /* Validate everything first: CONFIG SET is all or nothing. */
        char **vals = hk_malloc(sizeof(char *) * (size_t)npairs);
        const struct param **ps = hk_malloc(sizeof(*ps) * (size_t)npairs);
        int ok = 1;
        for (int k = 0; k < npairs; k++) {
            int j = 2 + 2 * k;
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)c->argvlen[j], c->argv[j]);
            vals[k] = hk_malloc(c->argvlen[j + 1] + 1);
            memcpy(vals[k], c->argv[j + 1], c->argvlen[j + 1]);
            vals[k][c->argvlen[j + 1]] = 0;
            ps[k] = find_param(name);
            if (ok && !ps[k]) {
                reply_errorf(&c->out, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", name);
                ok = 0;
            } else if (ok && (ps[k]->flags & IMMUTABLE) && !same_value_ok(ps[k], vals[k])) {
                reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", name);
                ok = 0;
            } else if (ok && (ps[k]->flags & PROTECTED) && !config_allows(cfg.enable_protected_configs, c)) {
                reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected config", name);
                ok = 0;
            } else if (ok) {
                for (int q = 0; q < k; q++) {
                    if (ps[q] == ps[k]) {
                        reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", name);
                        ok = 0;
                        break;
                    }
                }
                if (ok && param_set_n(ps[k], vals[k], c->argvlen[j + 1], 0, err, sizeof(err)) < 0) {
                    reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, err);
                    ok = 0;
                }
            }
        }
        /* Apply, keeping each old value (as CONFIG GET shows it): when an
         * apply fails (a port already in use), every parameter applied
         * before it gets its old value back, as Redis rolls back. */
        char **olds = ok ? hk_calloc(sizeof(char *) * (size_t)npairs) : NULL;
        size_t *oldlens = ok ? hk_calloc(sizeof(size_t) * (size_t)npairs) : NULL;
        int old_tls_port = __atomic_load_n(&tls_cfg.port, __ATOMIC_RELAXED);
        for (int k = 0; ok && k < npairs; k++) {
            if (ps[k]->ptr == &cfg.requirepass) { /* binary: its bytes, not CONFIG GET's text */
                const struct binstr *rp = requirepass_now();
                oldlens[k] = rp->len;
                olds[k] = hk_malloc(rp->len + 1);
                memcpy(olds[k], rp->s, rp->len);
                olds[k][rp->len] = 0;
            } else {
                char cur[1024];
                param_get(ps[k], cur, sizeof(cur));
                olds[k] = hk_strdup(cur);
                oldlens[k] = strlen(cur);
            }
            if (param_set_n(ps[k], vals[k], c->argvlen[2 + 2 * k + 1], 1, err, sizeof(err)) < 0) {
                reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", ps[k]->name, err);
                ok = 0;
                char e2[256];
                for (int q = k - 1; q >= 0; q--)
                    (void)param_set_n(ps[q], olds[q], oldlens[q], 1, e2, sizeof(e2));
            }
        }
        /* TLS: the context and the listeners follow the new tls-* values
         * once, every value of the call being in (net/tls.h tls_apply);
         * if that fails, all the values go back, as Redis restores them
         * when an apply function fails. */
        int tls_ctx_k = -1, tls_port_k = -1;
        for (int k = 0; ok && k < npairs; k++) {
            if ((ps[k]->flags & TLS_CTX) && tls_ctx_k < 0)
                tls_ctx_k = k;
            if ((ps[k]->flags & TLS_LISTEN) && tls_port_k < 0)
                tls_port_k = k;
        }
        if (tls_ctx_k >= 0 || tls_port_k >= 0) {
            int rc = tls_apply(tls_ctx_k >= 0, tls_port_k >= 0, old_tls_port, err, sizeof(err));
            if (rc < 0) {
                const char *name = ps[rc == -1 || tls_port_k < 0 ? tls_ctx_k : tls_port_k]->name;
                log_msg(LL_WARNING, "CONFIG SET: the new %s could not be applied; the previous settings are back", name);
                reply_errorf(&c->out, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, err);
                ok = 0;
                char e2[256];
                for (int q = npairs - 1; q >= 0; q--)
                    (void)param_set_n(ps[q], olds[q], oldlens[q], 1, e2, sizeof(e2));
            }
        }
        for (int k = 0; olds && k < npairs; k++)
            hk_free(olds[k]);
        hk_free(olds);
        hk_free(oldlens);
        for (int k = 0; k < npairs; k++)
            hk_free(vals[k]);
        hk_free(vals);
        hk_free(ps);
        if (ok) {
            log_set_level(cfg.loglevel);
            reply_ok(&c->out);
        }
    } else if (!strcmp(sub, "rewrite")) {
        char err[256];
        if (!cfg.config_file) {
            reply_error(&c->out, "ERR The server is running without a config file");
        } else if (config_rewrite_file(cfg.config_file, err, sizeof(err)) < 0) {
            log_msg(LL_WARNING, "CONFIG REWRITE failed: %s", err);
            reply_errorf(&c->out, "ERR Rewriting config file: %s", err);
        } else {
            log_msg(LL_NOTICE, "CONFIG REWRITE executed with success.");
            reply_ok(&c->out);
        }
    } else if (!strcmp(sub, "resetstat")) {
        stats_reset();
        hash_expired_subkeys_reset();
        lazyfree_reset_stats(); /* lazyfreed_objects, as Redis */
        latency_hist_reset();   /* LATENCY HISTOGRAM, INFO latencystats */
        errorstat_reset();      /* INFO errorstats */
        propagation_errors_reset(); /* the AOF loader's unexpected_error_replies */
        repl_reset_stats();         /* sync_full, sync_partial_*, total_net_repl_* */
        reply_ok(&c->out);
    } else {
        static const char *lines[] = {
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            reply_status(&c->out, lines[i]);
    }
}

/* ----------------------------------------------------- CONFIG REWRITE --- */
/* Redis's rules: the file the server started with is read line by line;
 * comments, blank lines and the directives CONFIG does not own (include,
 * rename-command, user, loadmodule, sentinel) stay as they are; a line
 * naming no known directive is kept as a comment "# ??? <line>".  Every
 * parameter then takes over its old line(s) in order (an alias's line
 * becomes the canonical name's), extra old lines of it are blanked; a
 * parameter not in the file is appended, after one "# Generated by CONFIG
 * REWRITE" line, only when its value is not the default.  Runs of blank
 * lines become one.  The new file replaces the old one atomically (a
 * temporary file in the same directory, fsynced, renamed). */
#define REWRITE_SIGNATURE "# Generated by CONFIG REWRITE"

/* CONFIG GET's text of every parameter right after config_defaults(): a
 * value equal to it is the default (not appended by a rewrite). */
static char **default_text;

static void rewrite_snapshot_defaults(void)
{
    char buf[4096];
    if (!default_text)
        default_text = hk_calloc(sizeof(char *) * (size_t)NPARAMS);
    for (int i = 0; i < NPARAMS; i++) {
        hk_free(default_text[i]);
        param_get(&params[i], buf, sizeof(buf));
        default_text[i] = hk_strdup(buf);
    }
}

struct rw_lines {
    char **l;
    int n, cap;
};

static void rw_add(struct rw_lines *r, char *line)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->l = hk_realloc(r->l, sizeof(char *) * (size_t)r->cap);
    }
    r->l[r->n++] = line;
}

struct sbuf_rw {
    char *p;
    size_t len, cap;
};

static void sb_rw(struct sbuf_rw *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* s as a config-file string: always quoted, escaped as Redis's repr. */
static void rw_quote_n(struct sbuf_rw *b, const char *s, size_t n)
{
    const char *end = s + n;
    sb_rw(b, "\"", 1);
    for (; s < end; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[5];
        switch (ch) {
        case '\\': sb_rw(b, "\\\\", 2); break;
        case '"': sb_rw(b, "\\\"", 2); break;
        case '\n': sb_rw(b, "\\n", 2); break;
        case '\r': sb_rw(b, "\\r", 2); break;
        case '\t': sb_rw(b, "\\t", 2); break;
        case '\a': sb_rw(b, "\\a", 2); break;
        case '\b': sb_rw(b, "\\b", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) {
                sb_rw(b, (const char *)&ch, 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", ch);
                sb_rw(b, esc, 4);
            }
        }
    }
    sb_rw(b, "\"", 1);
}

static void rw_quote(struct sbuf_rw *b, const char *s)
{
    rw_quote_n(b, s, strlen(s));
}

/* The config-file line(s) of parameter p's current value (one per save
 * point and per client class, as Redis writes them). */
static int rw_param_lines(const struct param *p, char ***out)
{
    char val[4096];
    int n = 0;
    char **lines = NULL;
    param_get(p, val, sizeof(val));
    if (p->set == set_replicaof) {
        /* As Redis writes it: "replicaof <host> <port>" unquoted (a
         * quoted "host port" is one argument to other readers), and no
         * line at all on a master (REPLICAOF NO ONE before the rewrite,
         * as Sentinel's promotion does: `replicaof ""` would not load). */
        *out = NULL;
        if (!val[0])
            return 0;
        struct sbuf_rw b = {0};
        sb_rw(&b, p->name, strlen(p->name));
        sb_rw(&b, " ", 1);
        sb_rw(&b, val, strlen(val));
        *out = hk_malloc(sizeof(char *));
        (*out)[0] = b.p;
        return 1;
    }
    int per_pair = !strcmp(p->name, "save"), per_class = !strcmp(p->name, "client-output-buffer-limit");
    if ((per_pair || per_class) && val[0]) {
        /* Split the CONFIG GET text into groups of 2 (save) or 4 words. */
        int group = per_pair ? 2 : 4, w = 0;
        struct sbuf_rw b = {0};
        char *save = NULL;
        for (char *t = strtok_r(val, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            if (w % group == 0) {
                b.len = 0;
                sb_rw(&b, p->name, strlen(p->name));
            }
            sb_rw(&b, " ", 1);
            sb_rw(&b, t, strlen(t));
            if (++w % group == 0) {
                lines = hk_realloc(lines, sizeof(char *) * (size_t)(n + 1));
                lines[n++] = hk_strdup(b.p);
            }
        }
        hk_free(b.p);
    } else {
        struct sbuf_rw b = {0};
        sb_rw(&b, p->name, strlen(p->name));
        sb_rw(&b, " ", 1);
        long long bytes;
        char mem[32];
        if (p->type == T_MEM && str_to_ll(val, strlen(val), &bytes) && bytes > 0) {
            /* Memory in the largest unit that divides it, as Redis writes. */
            if (bytes % (1LL << 30) == 0)
                snprintf(mem, sizeof(mem), "%lldgb", bytes >> 30);
            else if (bytes % (1LL << 20) == 0)
                snprintf(mem, sizeof(mem), "%lldmb", bytes >> 20);
            else if (bytes % 1024 == 0)
                snprintf(mem, sizeof(mem), "%lldkb", bytes >> 10);
            else
                snprintf(mem, sizeof(mem), "%lld", bytes);
            sb_rw(&b, mem, strlen(mem));
        } else if (p->ptr == &cfg.requirepass) {
            const struct binstr *rp = requirepass_now();
            rw_quote_n(&b, rp->s, rp->len);
        } else if (p->type == T_STR || val[0] == 0 || strpbrk(val, " \t\"'\\")) {
            rw_quote(&b, val);
        } else {
            sb_rw(&b, val, strlen(val));
        }
        lines = hk_malloc(sizeof(char *));
        lines[n++] = b.p;
    }
    *out = lines;
    return n;
}

/* Directives the file may hold that are not CONFIG parameters. */
static int rw_other_known(const char *w)
{
    static const char *const known[] = {"include", "rename-command", "user", "loadmodule", "sentinel",
                                        "list-max-ziplist-entries", "list-max-ziplist-value",
                                        "lua-replicate-commands"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcasecmp(w, known[i]))
            return 1;
    return 0;
}

static int rw_param_index(const char *name)
{
    for (int i = 0; i < NPARAMS; i++)
        if (!strcasecmp(params[i].name, name) || (params[i].alias && !strcasecmp(params[i].alias, name)))
            return i;
    return -1;
}

/* Rewrite the file; 0, or -1 with errno (or EINVAL and a message). */
static int config_rewrite_file(const char *path, char *err, size_t errlen)
{
    struct rw_lines r = {0};
    int **where = hk_calloc(sizeof(int *) * (size_t)NPARAMS); /* old line numbers per param, -1 ended */
    int *nwhere = hk_calloc(sizeof(int) * (size_t)NPARAMS);
    int signed_already = 0, rc = -1;
    int *uwhere = NULL, nuwhere = 0; /* old "user" lines (ACL users, cmd/acl.h) */
    FILE *f = fopen(path, "r");
    if (!f && errno != ENOENT) {
        snprintf(err, errlen, "%s", strerror(errno));
        goto out;
    }
    if (f) {
        char *line = NULL;
        size_t lcap = 0;
        ssize_t got;
        while ((got = getline(&line, &lcap, f)) >= 0) {
            /* Trim "\r\n\t " at both ends, as Redis does. */
            char *s = line, *e = line + got;
            while (s < e && strchr("\r\n\t ", *s))
                s++;
            while (e > s && strchr("\r\n\t ", e[-1]))
                e--;
            *e = 0;
            if (*s == '#' || *s == 0) {
                if (!strcmp(s, REWRITE_SIGNATURE))
                    signed_already = 1;
                rw_add(&r, hk_strdup(s));
                continue;
            }
            char word[128];
            size_t wl = strcspn(s, " \t");
            snprintf(word, sizeof(word), "%.*s", (int)(wl < sizeof(word) ? wl : sizeof(word) - 1), s);
            int pi = rw_param_index(word);
            if (pi < 0 && !rw_other_known(word)) {
                struct sbuf_rw b = {0};
                sb_rw(&b, "# ??? ", 6);
                sb_rw(&b, s, strlen(s));
                rw_add(&r, b.p);
                continue;
            }
            if (pi >= 0) {
                where[pi] = hk_realloc(where[pi], sizeof(int) * (size_t)(nwhere[pi] + 1));
                where[pi][nwhere[pi]++] = r.n;
            } else if (!strcasecmp(word, "user")) {
                uwhere = hk_realloc(uwhere, sizeof(int) * (size_t)(nuwhere + 1));
                uwhere[nuwhere++] = r.n;
            }
            rw_add(&r, hk_strdup(s));
        }
        free(line);
        fclose(f);
    }
    /* Every parameter, in table order. */
    for (int i = 0; i < NPARAMS; i++) {
        char **lines;
        int nl = rw_param_lines(&params[i], &lines), used = 0;
        char now[4096];
        param_get(&params[i], now, sizeof(now));
        int force = !default_text || !default_text[i] || strcmp(now, default_text[i]) != 0 ||
                    (params[i].ptr == &cfg.requirepass && requirepass_now()->len); /* "\x00..." reads as "" */
        /* save "" must be written when no save points are left, or the
         * defaults would come back at the next start. */
        if (!strcmp(params[i].name, "save") && nl == 0) {
            lines = hk_realloc(lines, sizeof(char *));
            lines[nl++] = hk_strdup("save \"\"");
        }
        for (int k = 0; k < nl; k++) {
            if (used < nwhere[i]) {
                int at = where[i][used++];
                hk_free(r.l[at]);
                r.l[at] = lines[k];
            } else if (force || nwhere[i] > 0) {
                if (!signed_already) {
                    rw_add(&r, hk_strdup(REWRITE_SIGNATURE));
                    signed_already = 1;
                }
                rw_add(&r, lines[k]);
            } else {
                hk_free(lines[k]);
            }
        }
        hk_free(lines);
        for (; used < nwhere[i]; used++) { /* orphaned old lines */
            hk_free(r.l[where[i][used]]);
            r.l[where[i][used]] = hk_strdup("");
        }
    }
    {
        /* ACL users, as Redis: every user as a "user" line, or none when
         * an aclfile holds them. */
        char **ul = NULL;
        int nu = acl_filename && acl_filename[0] ? 0 : acl_user_lines(&ul), used = 0;
        for (int k = 0; k < nu; k++) {
            if (used < nuwhere) {
                int at = uwhere[used++];
                hk_free(r.l[at]);
                r.l[at] = ul[k];
            } else {
                if (!signed_already) {
                    rw_add(&r, hk_strdup(REWRITE_SIGNATURE));
                    signed_already = 1;
                }
                rw_add(&r, ul[k]);
            }
        }
        hk_free(ul);
        for (; used < nuwhere; used++) {
            hk_free(r.l[uwhere[used]]);
            r.l[uwhere[used]] = hk_strdup("");
        }
        hk_free(uwhere);
        uwhere = NULL;
    }
    {
        /* Write next to the file, then rename over it. */
        char tmp[PATH_MAX];
        if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
            snprintf(err, errlen, "%s", strerror(ENAMETOOLONG));
            goto out;
        }
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            goto out;
        }
        struct sbuf_rw b = {0};
        int was_empty = 0;
        for (int i = 0; i < r.n; i++) {
            if (!r.l[i][0]) {
                if (was_empty)
                    continue;
                was_empty = 1;
            } else {
                was_empty = 0;
            }
            sb_rw(&b, r.l[i], strlen(r.l[i]));
            sb_rw(&b, "\n", 1);
        }
        size_t off = 0;
        int ok = 1;
        while (off < b.len) {
            ssize_t w = write(fd, b.p + off, b.len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                ok = 0;
                break;
            }
            off += (size_t)w;
        }
        if (ok && (fsync(fd) < 0 || fchmod(fd, 0644) < 0 || rename(tmp, path) < 0))
            ok = 0;
        int saved = errno;
        close(fd);
        hk_free(b.p);
        if (!ok) {
            unlink(tmp);
            snprintf(err, errlen, "%s", strerror(saved));
            goto out;
        }
        rc = 0;
    }
out:
    for (int i = 0; i < r.n; i++)
        hk_free(r.l[i]);
    hk_free(r.l);
    for (int i = 0; i < NPARAMS; i++)
        hk_free(where[i]);
    hk_free(where);
    hk_free(nwhere);
    hk_free(uwhere);
    return rc;
}
