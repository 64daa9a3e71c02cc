/* server.h - what is truly process-wide: the configuration values (cfg),
 * the version strings and the server's lifecycle flags.
 *
 * Any layer from db/ up may include it; it includes nothing of ours.  The
 * client and the worker are in net/client.h and net/worker.h, the command
 * table entry in cmd/cmd.h.  docs/architecture.md has the map. */
#ifndef HK_SERVER_H
#define HK_SERVER_H

#include <stdatomic.h>

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
    int enable_protected_configs; /* CFG_ALLOW_* (below), immutable */
    int enable_debug_command;
    int enable_module_command;
    int tcp_backlog;
    int tcp_keepalive;
    int databases;
    int hz;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    struct obuf_limit obuf[CLIENT_CLASSES];
    /* Replication, master side (persist/repl.c): repl-backlog-size,
     * repl-ping-replica-period (s), repl-timeout (s),
     * repl-diskless-sync-delay (s). */
    long long repl_backlog_size;
    int repl_ping_replica_period, repl_timeout, repl_diskless_sync_delay;
    /* min-replicas-to-write / min-replicas-max-lag (s): writes are refused
     * with NOREPLICAS while fewer replicas than the first acked within the
     * second (persist/repl.c counts them; 0 in either: off). */
    int min_replicas_to_write, min_replicas_max_lag;
    /* shutdown-timeout (s): how long a shutdown waits for lagging
     * replicas, writes paused (cmd/shutdown.c; 0: it does not wait). */
    int shutdown_timeout;
    /* propagation-error-behavior: what a replica does when a command of
     * its master's stream fails, and the AOF loader when a command of the
     * file does (cmd/properr.c): PROP_ERR_*. */
    int propagation_error_behavior;
    /* Replication, replica side (persist/replica.c): masterauth,
     * masteruser, replica-read-only, replica-serve-stale-data,
     * replica-ignore-maxmemory, replica-priority, replica-announce-ip /
     * -port, replica-announced, repl-diskless-load (0 disabled, 1
     * on-empty-db, 2 swapdb), replica-lazy-flush; bind-source-addr (the
     * address the link to the master is dialled from; NULL or "": any). */
    char *masterauth, *masteruser, *replica_announce_ip, *bind_source_addr;
    /* repl-diskless-sync, repl-diskless-sync-max-replicas,
     * repl-disable-tcp-nodelay, repl-backlog-ttl (s) (persist/repl.c). */
    int repl_diskless_sync, repl_diskless_sync_max_replicas, repl_disable_tcp_nodelay;
    long long repl_backlog_ttl;
    int replica_read_only, replica_serve_stale_data, replica_ignore_maxmemory, replica_priority;
    int replica_announce_port, replica_announced, repl_diskless_load, replica_lazy_flush;
    int replica_ignore_disk_write_errors;
    /* Cluster mode (cluster/cluster.c; docs/config.md, "Cluster"):
     * cluster-enabled (read once at start-up), cluster-config-file,
     * cluster-port (0: port + 10000), cluster-node-timeout (ms),
     * cluster-announce-*, cluster-require-full-coverage,
     * cluster-allow-reads-when-down, cluster-allow-pubsubshard-when-down,
     * cluster-replica-no-failover, cluster-replica-validity-factor,
     * cluster-migration-barrier, cluster-allow-replica-migration,
     * cluster-preferred-endpoint-type (0 ip, 1 hostname, 2 unknown-endpoint),
     * cluster-link-sendbuf-limit (bytes, 0: none). */
    int cluster_enabled, cluster_port, cluster_require_full_coverage, cluster_allow_reads_when_down;
    int cluster_allow_pubsubshard_when_down, cluster_replica_no_failover, cluster_replica_validity_factor;
    int cluster_migration_barrier, cluster_allow_replica_migration, cluster_preferred_endpoint_type;
    int cluster_announce_port, cluster_announce_bus_port, cluster_announce_tls_port;
    char *cluster_config_file, *cluster_announce_ip, *cluster_announce_hostname, *cluster_announce_human_nodename;
    long long cluster_node_timeout, cluster_ping_interval, cluster_link_sendbuf_limit;
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
    long long slowlog_max_len;
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
/* enable-protected-configs / enable-debug-command / enable-module-command
 * values, as Redis 7: "local" allows loopback clients only
 * (config_allows() in cmd/cmd.h). */
enum { CFG_ALLOW_NO = 0, CFG_ALLOW_YES = 1, CFG_ALLOW_LOCAL = 2 };
enum { AOF_FSYNC_NO = 0, AOF_FSYNC_EVERYSEC = 1, AOF_FSYNC_ALWAYS = 2 };
enum { PROP_ERR_IGNORE = 0, PROP_ERR_PANIC = 1, PROP_ERR_PANIC_ON_REPLICAS = 2 };
extern struct config cfg;

/* --------------------------------------------------------- lifecycle --- */
extern atomic_int server_shutdown;    /* set by SIGTERM/SHUTDOWN */
/* DEBUG PAUSE-CRON 1 (Redis's pause_cron, a test aid): the periodic work
 * is skipped while set: every worker's cron (net/worker.c), the
 * persistence thread's save points, child reaping and AOF rewrites
 * (persist/snapshot.c), and a signal's shutdown, which waits (server.c). */
extern atomic_int cron_paused;
/* SHUTDOWN SAVE (1) / NOSAVE (0) / by the save points (-1, SIGTERM). */
extern atomic_int shutdown_save_mode;
/* A shutdown's options: the SHUTDOWN command's (cmd/shutdown.c) and
 * shutdown-on-sigint / shutdown-on-sigterm's (config/). */
enum { SHUTDOWN_FLAG_SAVE = 1, SHUTDOWN_FLAG_NOSAVE = 2, SHUTDOWN_FLAG_NOW = 4, SHUTDOWN_FLAG_FORCE = 8 };
extern long long server_start_ms;

/* Install every hook between layers (server.c); main() calls it first,
 * and so do the unit tests and fuzz targets.  Idempotent. */
void server_wire(void);
int server_main(int argc, char **argv);
void server_request_shutdown(void);

#endif
