/* admin.c - server administration commands: INFO, COMMAND, TIME, LASTSAVE,
 * DEBUG and SHUTDOWN.
 *
 * Design choices:
 *  - INFO never stops the world.  Counters come from stats_sum() (a racy
 *    but tear-free snapshot of the per-worker counters, as Redis's INFO is a
 *    snapshot too); the keyspace and memory sections are the only parts
 *    that read shared tables, in one pass that takes one slot lock at a
 *    time (lock slot s, read the used/expires counts, and for memory the
 *    table sizes, of slot s in every database, unlock: ks_usage_scan in
 *    memstats.c), so it never holds more than one shard and never blocks a
 *    writer for longer than a few loads.  INFO is registered without
 *    CMD_ALL_LOCKS for that reason.  The memory figures are memstats.h's.
 *  - The text is built in a private growable buffer and sent as one verbatim
 *    string ("txt"), which RESP2 clients see as a bulk string.
 *  - Values HotKV does not have yet (persistence, replication, modules) are
 *    reported with the honest "nothing happening" values Redis itself shows
 *    in that state, so monitoring tools parse them without special cases.
 *  - instantaneous_ops_per_sec and the kbps fields are rates between two
 *    INFO calls (at least 100 ms apart; closer calls repeat the last rate),
 *    not a background sampler: no cron work for a figure few people read.
 *  - COMMAND INFO/DOCS are generated from the command table in cmd.c plus a
 *    static table here with what the dispatcher does not need: a one-line
 *    summary, a complexity note, the argument grammar, the key-spec access
 *    flags and the cluster routing tips.  The argument grammar is a compact
 *    string of our own (see "Argument grammar" below) expanded at reply time
 *    into the nested maps COMMAND DOCS returns.  A command missing from the
 *    static table still gets a correct entry, just without those extras.
 *  - DEBUG and COMMAND GETKEYS take no locks from the dispatcher; DEBUG
 *    POPULATE and DEBUG OBJECT take the slot lock of each key themselves.
 *  - run_id and master_replid are 40 random hex digits made once per process
 *    (getrandom, with a clock-seeded fallback); DEBUG CHANGE-REPL-ID makes a
 *    new replid under a mutex. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "acl.h"
#include "blocking.h"
#include "../db/object.h"
#include "../db/table.h"
#include "../ds/quicklist.h"
#include "../types/digest.h"
#include "commands.h"
#include "errorstats.h"
#include "slowlog.h"
#include "evict.h"
#include "memstats.h"
#include "migrate.h"
#include "multi.h"
#include "pause.h"
#include "persistence.h"
#include "properr.h"
#include "pubsub.h"
#include "shutdown.h"
#include "../cluster/cluster.h"
#include "../persist/aof.h"
#include "../persist/rdb.h"
#include "../persist/repl.h"
#include "../db/rkeys.h"
#include "../persist/snapshot.h"
#include "tracking.h"
#include "../types/hash.h"

/* ------------------------------------------------------- text builder --- */
struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_reserve(struct sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->p = hk_realloc(b->p, cap);
    b->cap = cap;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    sb_reserve(b, 128);
    va_start(ap, fmt);
    n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= b->cap - b->len) {
        sb_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* Byte counts the way Redis's *_human fields print them: "512B", "1.05M". */
static void bytes_human(char *out, size_t cap, unsigned long long n)
{
    static const char units[] = "KMGTP";
    double d = (double)n;
    if (n < 1024) {
        snprintf(out, cap, "%lluB", n);
        return;
    }
    for (int i = 0; i < 5; i++) {
        d /= 1024;
        if (d < 1024 || i == 4) {
            snprintf(out, cap, "%.2f%c", d, units[i]);
            return;
        }
    }
}

/* ------------------------------------------------------- process ids --- */
static char run_id[41];
static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

static void random_hex40(char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[20];
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t)n;
    }
    if (got < sizeof(raw)) {
        /* No kernel entropy: the thread PRNG mixed with the clock is
         * enough for an identifier that only needs to differ per run. */
        for (size_t i = 0; i < sizeof(raw); i++)
            raw[i] = (unsigned char)((rand64() ^ (uint64_t)mono_ns()) >> 24);
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[40] = 0;
}

static void ids_init(void)
{
    random_hex40(run_id);
}

/* ---------------------------------------------------------------- INFO --- */
enum {
    SEC_SERVER = 1 << 0,
    SEC_CLIENTS = 1 << 1,
    SEC_MEMORY = 1 << 2,
    SEC_PERSISTENCE = 1 << 3,
    SEC_STATS = 1 << 4,
    SEC_REPLICATION = 1 << 5,
    SEC_CPU = 1 << 6,
    SEC_MODULES = 1 << 7,
    SEC_COMMANDSTATS = 1 << 8,
    SEC_ERRORSTATS = 1 << 9,
    SEC_CLUSTER = 1 << 10,
    SEC_KEYSPACE = 1 << 11,
    SEC_LATENCYSTATS = 1 << 12,
};
#define SEC_ALL 0x1fffu
#define SEC_DEFAULT (SEC_ALL & ~(unsigned)(SEC_COMMANDSTATS | SEC_LATENCYSTATS))

/* In output order (Redis's order). */
static const struct {
    const char *name;
    unsigned bit;
} info_sections[] = {
    {"server", SEC_SERVER},
    {"clients", SEC_CLIENTS},
    {"memory", SEC_MEMORY},
    {"persistence", SEC_PERSISTENCE},
    {"stats", SEC_STATS},
    {"replication", SEC_REPLICATION},
    {"cpu", SEC_CPU},
    {"modules", SEC_MODULES},
    {"commandstats", SEC_COMMANDSTATS},
    {"errorstats", SEC_ERRORSTATS},
    {"latencystats", SEC_LATENCYSTATS},
    {"cluster", SEC_CLUSTER},
    {"keyspace", SEC_KEYSPACE},
};
#define NSECTIONS (sizeof(info_sections) / sizeof(info_sections[0]))


/* Rates between INFO calls. */
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static long long rate_t_us;
static unsigned long long rate_cmds, rate_in, rate_out, rate_rin, rate_rout;
static long long rate_ops;
static double rate_in_kbps, rate_out_kbps, rate_rin_kbps, rate_rout_kbps;

#define RATE_MIN_INTERVAL_US 100000

/* Replication traffic (persist/repl.h): bytes from our master, bytes to
 * our replicas, and their rates as INFO shows them. */
struct repl_rates {
    unsigned long long in, out;
    double in_kbps, out_kbps;
};

static void rates_update(const struct worker_stats *st, long long *ops, double *in_kbps, double *out_kbps,
                         struct repl_rates *rr)
{
    long long now = mono_us();
    repl_net_bytes(&rr->in, &rr->out);
    pthread_mutex_lock(&rate_lock);
    if (rate_t_us == 0 || now - rate_t_us >= RATE_MIN_INTERVAL_US) {
        if (rate_t_us != 0) {
            double secs = (double)(now - rate_t_us) / 1e6;
            rate_ops = st->commands >= rate_cmds ? (long long)((double)(st->commands - rate_cmds) / secs + 0.5) : 0;
            rate_in_kbps = st->net_in >= rate_in ? (double)(st->net_in - rate_in) / secs / 1024 : 0;
            rate_out_kbps = st->net_out >= rate_out ? (double)(st->net_out - rate_out) / secs / 1024 : 0;
            rate_rin_kbps = rr->in >= rate_rin ? (double)(rr->in - rate_rin) / secs / 1024 : 0;
            rate_rout_kbps = rr->out >= rate_rout ? (double)(rr->out - rate_rout) / secs / 1024 : 0;
        }
        rate_t_us = now;
        rate_cmds = st->commands;
        rate_in = st->net_in;
        rate_out = st->net_out;
        rate_rin = rr->in;
        rate_rout = rr->out;
    }
    *ops = rate_ops;
    *in_kbps = rate_in_kbps;
    *out_kbps = rate_out_kbps;
    rr->in_kbps = rate_rin_kbps;
    rr->out_kbps = rate_rout_kbps;
    pthread_mutex_unlock(&rate_lock);
}

static void info_server(struct sbuf *b)
{
    struct utsname un;
    char exe[4096];
    ssize_t n;
    long long now_us = time_us();
    long long up = (now_us / 1000 - server_start_ms) / 1000;
    int hz = cfg.hz > 0 ? cfg.hz : 10;

    if (uname(&un) != 0)
        memset(&un, 0, sizeof(un));
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    if (up < 0)
        up = 0;
    sb_printf(b, "# Server\r\n");
    sb_printf(b, "redis_version:%s\r\n", REDIS_COMPAT_VERSION);
    sb_printf(b, "hotkv_version:%s\r\n", HOTKV_VERSION);
    sb_printf(b, "redis_git_sha1:00000000\r\n");
    sb_printf(b, "redis_git_dirty:0\r\n");
    sb_printf(b, "redis_build_id:%llx\r\n",
              (unsigned long long)(hash64(HOTKV_VERSION __VERSION__, sizeof(HOTKV_VERSION __VERSION__) - 1, 0) >> 4));
    sb_printf(b, "redis_mode:standalone\r\n");
    sb_printf(b, "os:%s %s %s\r\n", un.sysname, un.release, un.machine);
    sb_printf(b, "arch_bits:%d\r\n", (int)(sizeof(void *) * 8));
    sb_printf(b, "monotonic_clock:POSIX clock_gettime\r\n");
    sb_printf(b, "multiplexing_api:epoll\r\n");
    sb_printf(b, "atomicvar_api:c11-builtin\r\n");
#ifdef __GNUC__
    sb_printf(b, "gcc_version:%d.%d.%d\r\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
    sb_printf(b, "gcc_version:0.0.0\r\n");
#endif
    sb_printf(b, "process_id:%ld\r\n", (long)getpid());
    sb_printf(b, "process_supervised:no\r\n");
    sb_printf(b, "run_id:%s\r\n", run_id);
    sb_printf(b, "tcp_port:%d\r\n", cfg.port);
    sb_printf(b, "server_time_usec:%lld\r\n", now_us);
    sb_printf(b, "uptime_in_seconds:%lld\r\n", up);
    sb_printf(b, "uptime_in_days:%lld\r\n", up / 86400);
    sb_printf(b, "hz:%d\r\n", hz);
    sb_printf(b, "configured_hz:%d\r\n", hz);
    sb_printf(b, "lru_clock:%u\r\n", (unsigned)lru_clock_now);
    sb_printf(b, "executable:%s\r\n", exe);
    sb_printf(b, "config_file:%s\r\n", cfg.config_file ? cfg.config_file : "");
    sb_printf(b, "io_threads_active:0\r\n");
    long long sd_left = shutdown_wait_left_ms(); /* only while a shutdown waits for replicas */
    if (sd_left >= 0)
        sb_printf(b, "shutdown_in_milliseconds:%lld\r\n", sd_left);
    /* HotKV: workers whose loop turns batch socket I/O in io_uring. */
    sb_printf(b, "io_uring_workers:%d\r\n", atomic_load(&io_uring_workers));
    /* Redis 7.2's listener line: one bind= per configured address. */
    sb_printf(b, "listener0:name=tcp");
    for (const char *a = cfg.bind ? cfg.bind : ""; *a;) {
        size_t n;
        while (*a == ' ')
            a++;
        n = strcspn(a, " ");
        if (n)
            sb_printf(b, ",bind=%.*s", (int)n, a);
        a += n;
    }
    sb_printf(b, ",port=%d\r\n", cfg.port);
    sb_printf(b, "server_threads:%d\r\n", nworkers);
}

static void info_clients(struct sbuf *b, struct client *c)
{
    size_t max_in = 0, max_out = 0;
    /* Only this worker's clients may be read from this thread; the figures
     * are the largest buffers among them (Redis samples recent ones). */
    if (c->w) {
        for (const struct client *o = c->w->clients; o; o = o->next) {
            if (o->qcap > max_in)
                max_in = o->qcap;
            if (o->out.cap > max_out)
                max_out = o->out.cap;
        }
    }
    sb_printf(b, "# Clients\r\n");
    sb_printf(b, "connected_clients:%d\r\n", atomic_load(&connected_clients));
    long cl_conns;
    cluster_links_info(&cl_conns);
    sb_printf(b, "cluster_connections:%ld\r\n", cl_conns);
    sb_printf(b, "maxclients:%lld\r\n", cfg.maxclients);
    sb_printf(b, "client_recent_max_input_buffer:%zu\r\n", max_in);
    sb_printf(b, "client_recent_max_output_buffer:%zu\r\n", max_out);
    sb_printf(b, "blocked_clients:%lld\r\n", blocking_clients() + pause_postponed_clients());
    sb_printf(b, "tracking_clients:%ld\r\n", tracking_num_clients());
    sb_printf(b, "clients_in_timeout_table:%lld\r\n", blocking_timeouts());
    sb_printf(b, "total_watched_keys:%ld\r\n", multi_watched_keys());
    sb_printf(b, "total_blocking_keys:%lld\r\n", blocking_keys());
    sb_printf(b, "total_blocking_keys_on_nokey:%lld\r\n", blocking_keys_on_nokey());
    sb_printf(b, "pubsub_clients:%ld\r\n", pubsub_num_clients());
    sb_printf(b, "watching_clients:%ld\r\n", multi_watching_clients());
}

static void info_memory(struct sbuf *b, const struct ks_usage *u)
{
    struct mem_overhead *mh = hk_malloc(sizeof(*mh));
    const struct script_info *sip;
    unsigned long long sysmem;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    char h1[32], h2[32], h3[32], h4[32], h5[32], hl[32], ht[32], hs[32];

    /* One breakdown for every figure below (cmd/memstats.h). */
    mem_overhead_get(mh, u);
    sip = &mh->si;
    sysmem = pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;

    bytes_human(h1, sizeof(h1), mh->total_allocated);
    bytes_human(h2, sizeof(h2), mh->rss);
    bytes_human(h3, sizeof(h3), mh->peak_allocated);
    bytes_human(h4, sizeof(h4), cfg.maxmemory > 0 ? (unsigned long long)cfg.maxmemory : 0);
    bytes_human(h5, sizeof(h5), sysmem);
    bytes_human(hl, sizeof(hl), (unsigned long long)sip->vm_eval);
    bytes_human(ht, sizeof(ht), (unsigned long long)(sip->vm_eval + sip->vm_functions));
    bytes_human(hs, sizeof(hs), (unsigned long long)(mh->lua_caches + mh->functions_caches));
    sb_printf(b, "# Memory\r\n");
    sb_printf(b, "used_memory:%zu\r\n", mh->total_allocated);
    sb_printf(b, "used_memory_human:%s\r\n", h1);
    sb_printf(b, "used_memory_rss:%zu\r\n", mh->rss);
    sb_printf(b, "used_memory_rss_human:%s\r\n", h2);
    sb_printf(b, "used_memory_peak:%zu\r\n", mh->peak_allocated);
    sb_printf(b, "used_memory_peak_human:%s\r\n", h3);
    sb_printf(b, "used_memory_peak_perc:%.2f%%\r\n", mh->peak_perc);
    sb_printf(b, "used_memory_overhead:%zu\r\n", mh->overhead_total);
    sb_printf(b, "used_memory_startup:%zu\r\n", mh->startup_allocated);
    sb_printf(b, "used_memory_dataset:%zu\r\n", mh->dataset);
    sb_printf(b, "used_memory_dataset_perc:%.2f%%\r\n", mh->dataset_perc);
    sb_printf(b, "allocator_allocated:%zu\r\n", mh->as.allocated);
    sb_printf(b, "allocator_active:%zu\r\n", mh->as.active);
    sb_printf(b, "allocator_resident:%zu\r\n", mh->as.resident);
    sb_printf(b, "total_system_memory:%llu\r\n", sysmem);
    sb_printf(b, "total_system_memory_human:%s\r\n", h5);
    /* Scripting (script/script.c): the two Lua VMs and the caches. */
    sb_printf(b, "used_memory_lua:%lld\r\n", sip->vm_eval);
    sb_printf(b, "used_memory_vm_eval:%lld\r\n", sip->vm_eval);
    sb_printf(b, "used_memory_lua_human:%s\r\n", hl);
    sb_printf(b, "used_memory_scripts_eval:%zu\r\n", mh->lua_caches);
    sb_printf(b, "number_of_cached_scripts:%lld\r\n", sip->cached_scripts);
    sb_printf(b, "number_of_functions:%lld\r\n", sip->functions);
    sb_printf(b, "number_of_libraries:%lld\r\n", sip->libraries);
    sb_printf(b, "used_memory_vm_functions:%lld\r\n", sip->vm_functions);
    sb_printf(b, "used_memory_vm_total:%lld\r\n", sip->vm_eval + sip->vm_functions);
    sb_printf(b, "used_memory_vm_total_human:%s\r\n", ht);
    sb_printf(b, "used_memory_functions:%zu\r\n", mh->functions_caches);
    sb_printf(b, "used_memory_scripts:%zu\r\n", mh->lua_caches + mh->functions_caches);
    sb_printf(b, "used_memory_scripts_human:%s\r\n", hs);
    sb_printf(b, "maxmemory:%lld\r\n", cfg.maxmemory);
    sb_printf(b, "maxmemory_human:%s\r\n", h4);
    sb_printf(b, "maxmemory_policy:%s\r\n", cfg.maxmemory_policy ? cfg.maxmemory_policy : "noeviction");
    sb_printf(b, "allocator_frag_ratio:%.2f\r\n", mh->allocator_frag);
    sb_printf(b, "allocator_frag_bytes:%lld\r\n", mh->allocator_frag_bytes);
    sb_printf(b, "allocator_rss_ratio:%.2f\r\n", mh->allocator_rss);
    sb_printf(b, "allocator_rss_bytes:%lld\r\n", mh->allocator_rss_bytes);
    sb_printf(b, "rss_overhead_ratio:%.2f\r\n", mh->rss_extra);
    sb_printf(b, "rss_overhead_bytes:%lld\r\n", mh->rss_extra_bytes);
    sb_printf(b, "mem_fragmentation_ratio:%.2f\r\n", mh->total_frag);
    sb_printf(b, "mem_fragmentation_bytes:%lld\r\n", mh->total_frag_bytes);
    sb_printf(b, "mem_not_counted_for_evict:%zu\r\n", evict_not_counted());
    sb_printf(b, "mem_replication_backlog:%zu\r\n", mh->repl_backlog);
    sb_printf(b, "mem_total_replication_buffers:%zu\r\n", mh->repl_total);
    sb_printf(b, "mem_clients_slaves:%zu\r\n", mh->clients_slaves);
    sb_printf(b, "mem_clients_normal:%zu\r\n", mh->clients_normal);
    sb_printf(b, "mem_cluster_links:%zu\r\n", mh->cluster_links);
    sb_printf(b, "mem_aof_buffer:%zu\r\n", mh->aof_buffer);
    sb_printf(b, "mem_allocator:%s\r\n", mem_allocator());
    sb_printf(b, "active_defrag_running:0\r\n");
    sb_printf(b, "lazyfree_pending_objects:%llu\r\n", lazyfree_pending());
    sb_printf(b, "lazyfreed_objects:%llu\r\n", lazyfreed_objects());
    hk_free(mh);
}

static void info_persistence(struct sbuf *b)
{
    char buf[4096];
    persist_info(buf, sizeof(buf));
    sb_printf(b, "# Persistence\r\n%s", buf);
}

static void info_stats(struct sbuf *b, const struct worker_stats *st)
{
    long long ops;
    double in_kbps, out_kbps;
    struct repl_rates rr;
    rates_update(st, &ops, &in_kbps, &out_kbps, &rr);
    sb_printf(b, "# Stats\r\n");
    sb_printf(b, "total_connections_received:%llu\r\n", st->conns_received);
    sb_printf(b, "total_commands_processed:%llu\r\n", st->commands);
    sb_printf(b, "instantaneous_ops_per_sec:%lld\r\n", ops);
    sb_printf(b, "total_net_input_bytes:%llu\r\n", st->net_in);
    sb_printf(b, "total_net_output_bytes:%llu\r\n", st->net_out);
    sb_printf(b, "total_net_repl_input_bytes:%llu\r\n", rr.in);
    sb_printf(b, "total_net_repl_output_bytes:%llu\r\n", rr.out);
    sb_printf(b, "instantaneous_input_kbps:%.2f\r\n", in_kbps);
    sb_printf(b, "instantaneous_output_kbps:%.2f\r\n", out_kbps);
    sb_printf(b, "instantaneous_input_repl_kbps:%.2f\r\n", rr.in_kbps);
    sb_printf(b, "instantaneous_output_repl_kbps:%.2f\r\n", rr.out_kbps);
    sb_printf(b, "rejected_connections:%llu\r\n", st->rejected_conns);
    long long syncs[3];
    repl_sync_stats(syncs);
    sb_printf(b, "sync_full:%lld\r\n", syncs[0]);
    sb_printf(b, "sync_partial_ok:%lld\r\n", syncs[1]);
    sb_printf(b, "sync_partial_err:%lld\r\n", syncs[2]);
    sb_printf(b, "expired_subkeys:%llu\r\n", hash_expired_subkeys());
    sb_printf(b, "expired_keys:%llu\r\n", st->db.expired);
    sb_printf(b, "expired_stale_perc:%.2f\r\n", (double)st->db.expired_stale_ppm / 1e4);
    sb_printf(b, "expired_time_cap_reached_count:%llu\r\n", st->db.expire_time_cap);
    sb_printf(b, "expire_cycle_cpu_milliseconds:%llu\r\n", st->db.expire_us / 1000);
    sb_printf(b, "evicted_keys:%llu\r\n", st->db.evicted);
    sb_printf(b, "evicted_clients:%llu\r\n", st->evicted_clients);
    sb_printf(b, "total_eviction_exceeded_time:%lld\r\n", evict_exceeded_total_ms());
    sb_printf(b, "current_eviction_exceeded_time:%lld\r\n", evict_exceeded_current_ms());
    sb_printf(b, "keyspace_hits:%llu\r\n", st->db.hits);
    sb_printf(b, "keyspace_misses:%llu\r\n", st->db.misses);
    sb_printf(b, "pubsub_channels:%ld\r\n", pubsub_num_channels());
    sb_printf(b, "pubsub_patterns:%ld\r\n", pubsub_num_patterns());
    sb_printf(b, "pubsubshard_channels:%ld\r\n", pubsub_num_shard_channels());
    sb_printf(b, "latest_fork_usec:%lld\r\n", persist_latest_fork_usec());
    sb_printf(b, "total_forks:%llu\r\n", persist_total_forks());
    sb_printf(b, "migrate_cached_sockets:%ld\r\n", migrate_cached_sockets());
    sb_printf(b, "slave_expires_tracked_keys:%lld\r\n", rkeys_count());
    /* activedefrag yes is refused (config/compat.inc): no defrag ever runs. */
    sb_printf(b, "active_defrag_hits:0\r\nactive_defrag_misses:0\r\n");
    sb_printf(b, "active_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\n");
    sb_printf(b, "total_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\n");
    sb_printf(b, "tracking_total_keys:%lld\r\n", tracking_total_keys());
    sb_printf(b, "tracking_total_items:%lld\r\n", tracking_total_items());
    sb_printf(b, "tracking_total_prefixes:%lld\r\n", tracking_total_prefixes());
    sb_printf(b, "unexpected_error_replies:%llu\r\n", st->unexpected_errors + propagation_errors_loading());
    sb_printf(b, "total_error_replies:%llu\r\n", st->errors);
    sb_printf(b, "dump_payload_sanitizations:%llu\r\n", __atomic_load_n(&rdb_sanitizations, __ATOMIC_RELAXED));
    sb_printf(b, "total_reads_processed:%llu\r\n", st->reads);
    sb_printf(b, "total_writes_processed:%llu\r\n", st->writes);
    /* No I/O threads: the workers do their own I/O. */
    sb_printf(b, "io_threaded_reads_processed:0\r\n");
    sb_printf(b, "io_threaded_writes_processed:0\r\n");
    /* ACL denials (cmd/acl.h), at the end of the section as Redis 7.2. */
    long long acl_d[5];
    acl_denied_counts(acl_d);
    sb_printf(b, "acl_access_denied_auth:%lld\r\n", acl_d[0]);
    sb_printf(b, "acl_access_denied_cmd:%lld\r\n", acl_d[1]);
    sb_printf(b, "acl_access_denied_key:%lld\r\n", acl_d[2]);
    sb_printf(b, "acl_access_denied_channel:%lld\r\n", acl_d[3]);
    sb_printf(b, "acl_access_denied_tls_cert:%lld\r\n", acl_d[4]);
}

static void info_replication(struct sbuf *b)
{
    char buf[8192];
    size_t n = repl_info(buf, sizeof(buf)); /* persist/repl.h: role, replicas, offsets, backlog */
    sb_printf(b, "# Replication\r\n%.*s", (int)n, buf);
}

/* CPU time of the worker threads, which play Redis's main thread (they run
 * the commands): summed from each one's /proc/self/task/<tid>/stat (clock
 * ticks).  0: read, -1: not available. */
static int workers_cpu(double *user, double *sys)
{
    long tck = sysconf(_SC_CLK_TCK);
    unsigned long long ut = 0, st = 0;
    int any = 0;
    if (tck <= 0)
        return -1;
    for (int i = 0; i < nworkers; i++) {
        int tid = atomic_load(&workers[i].ktid);
        char path[64], buf[1024];
        if (tid <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        unsigned long long u, s;
        /* after ")": state, then fields 4..13, then utime (14) and stime (15) */
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &u, &s) != 2)
            continue;
        ut += u;
        st += s;
        any = 1;
    }
    if (!any)
        return -1;
    *user = (double)ut / (double)tck;
    *sys = (double)st / (double)tck;
    return 0;
}

static void info_cpu(struct sbuf *b)
{
    struct rusage self, kids;
    if (getrusage(RUSAGE_SELF, &self) != 0)
        memset(&self, 0, sizeof(self));
    if (getrusage(RUSAGE_CHILDREN, &kids) != 0)
        memset(&kids, 0, sizeof(kids));
    sb_printf(b, "# CPU\r\n");
    sb_printf(b, "used_cpu_sys:%ld.%06ld\r\n", (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec);
    sb_printf(b, "used_cpu_user:%ld.%06ld\r\n", (long)self.ru_utime.tv_sec, (long)self.ru_utime.tv_usec);
    sb_printf(b, "used_cpu_sys_children:%ld.%06ld\r\n", (long)kids.ru_stime.tv_sec, (long)kids.ru_stime.tv_usec);
    sb_printf(b, "used_cpu_user_children:%ld.%06ld\r\n", (long)kids.ru_utime.tv_sec, (long)kids.ru_utime.tv_usec);
    double wu, ws;
    if (workers_cpu(&wu, &ws) == 0) {
        sb_printf(b, "used_cpu_sys_main_thread:%.6f\r\n", ws);
        sb_printf(b, "used_cpu_user_main_thread:%.6f\r\n", wu);
    }
}

static void cmdstat_line(struct sbuf *b, const struct cmd *cmd, const struct worker_stats *st)
{
    int id = cmd->id;
    unsigned long long calls = st->cmd_calls[id], usec = st->cmd_usec[id];
    unsigned long long rej = st->cmd_rejected[id], fail = st->cmd_failed[id];
    if (calls == 0 && rej == 0 && fail == 0)
        return;
    sb_printf(b, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
              cmd->name, calls, usec, calls ? (double)usec / (double)calls : 0.0, rej, fail);
}

static void info_commandstats(struct sbuf *b, const struct worker_stats *st)
{
    sb_printf(b, "# Commandstats\r\n");
    for (const struct cmd *cmd = cmd_table; cmd->name; cmd++) {
        cmdstat_line(b, cmd, st);
        for (const struct cmd *s = cmd->subs; s && s->name; s++)
            cmdstat_line(b, s, st);
    }
}

static void info_emit(void *b, const char *line)
{
    sb_printf(b, "%s", line);
}

static void info_keyspace(struct sbuf *b, const unsigned long long *keys, const unsigned long long *expires, int ndb)
{
    sb_printf(b, "# Keyspace\r\n");
    for (int d = 0; d < ndb; d++) {
        if (keys[d])
            sb_printf(b, "db%d:keys=%llu,expires=%llu,avg_ttl=0\r\n", d, keys[d], expires[d]);
    }
}

void info_command(struct client *c)
{
    unsigned want = 0;
    struct sbuf b = {NULL, 0, 0};
    struct worker_stats st;
    struct ks_usage *ku = NULL;
    int first = 1;

    pthread_once(&ids_once, ids_init);
    if (c->argc == 1)
        want = SEC_DEFAULT;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "default"))
            want |= SEC_DEFAULT;
        else if (arg_is(c, i, "all") || arg_is(c, i, "everything"))
            want |= SEC_ALL;
        else {
            for (size_t k = 0; k < NSECTIONS; k++) {
                if (arg_is(c, i, info_sections[k].name)) {
                    want |= info_sections[k].bit;
                    break;
                }
            }
        }
    }

    memset(&st, 0, sizeof(st));
    if (want & SEC_COMMANDSTATS) {
        size_t n = (size_t)cmd_count();
        st.cmd_calls = hk_calloc(sizeof(unsigned long long) * n);
        st.cmd_usec = hk_calloc(sizeof(unsigned long long) * n);
        st.cmd_rejected = hk_calloc(sizeof(unsigned long long) * n);
        st.cmd_failed = hk_calloc(sizeof(unsigned long long) * n);
    }
    if (want & (SEC_STATS | SEC_COMMANDSTATS))
        stats_sum(&st);
    if (want & (SEC_KEYSPACE | SEC_MEMORY)) {
        /* One pass over the slots for both sections (index bytes only
         * when the memory section needs them). */
        ku = hk_malloc(sizeof(*ku));
        ks_usage_scan(ku, (want & SEC_MEMORY) != 0);
    }

    for (size_t k = 0; k < NSECTIONS; k++) {
        unsigned bit = info_sections[k].bit;
        if (!(want & bit))
            continue;
        if (!first)
            sb_printf(&b, "\r\n");
        first = 0;
        switch (bit) {
        case SEC_SERVER: info_server(&b); break;
        case SEC_CLIENTS: info_clients(&b, c); break;
        case SEC_MEMORY: info_memory(&b, ku); break;
        case SEC_PERSISTENCE: info_persistence(&b); break;
        case SEC_STATS: info_stats(&b, &st); break;
        case SEC_REPLICATION: info_replication(&b); break;
        case SEC_CPU: info_cpu(&b); break;
        case SEC_MODULES: sb_printf(&b, "# Modules\r\n"); break;
        case SEC_COMMANDSTATS: info_commandstats(&b, &st); break;
        case SEC_ERRORSTATS: /* cmd/errorstats.c */
            sb_printf(&b, "# Errorstats\r\n");
            errorstat_info(info_emit, &b);
            break;
        case SEC_LATENCYSTATS: /* cmd/latency.c */
            sb_printf(&b, "# Latencystats\r\n");
            latency_info(info_emit, &b);
            break;
        case SEC_CLUSTER: sb_printf(&b, "# Cluster\r\ncluster_enabled:%d\r\n", cluster_on ? 1 : 0); break;
        case SEC_KEYSPACE: info_keyspace(&b, ku->keys, ku->expires, ku->ndb); break;
        default: break;
        }
    }
    reply_verbatim(&c->out, b.p ? b.p : "", b.len, "txt");
    hk_free(b.p);
    hk_free(ku);
    if (st.cmd_calls) {
        hk_free(st.cmd_calls);
        hk_free(st.cmd_usec);
        hk_free(st.cmd_rejected);
        hk_free(st.cmd_failed);
    }
}

/* ---------------------------------------------------------- COMMAND --- */
/* Argument grammar (COMMAND DOCS "arguments"), our own compact notation:
 *   list  := arg (' ' arg)*
 *   arg   := name ':' type flags* ['=' TOKEN] ['(' list ')']
 *   flags := '?' (optional) | '*' (multiple) | '+' (multiple_token: the
 *            token is repeated before each value, as in GET a GET b)
 *            | '@' VERSION (since) | '!' VERSION (deprecated_since)
 *            | '#' N (key_spec_index N, also on a pattern that names
 *            keys; later keys count on from N + 1)
 *            | '~' TEXT (display_text, the name when absent)
 * type is key, string, integer, double, pattern, unix-time, pure-token,
 * oneof or block.  A pure-token without '=' uses its upper-cased name as
 * the token.  Key arguments get key_spec_index in order of appearance
 * (capped at the last key spec). */
#define NDOCS cmd_ndocs

static const struct cmd_doc *doc_of(const struct cmd *cmd)
{
    for (size_t i = 0; i < NDOCS; i++)
        if (!strcmp(cmd_docs[i].name, cmd->name))
            return &cmd_docs[i];
    return NULL;
}

static const struct {
    unsigned bit;
    const char *name;
} cmd_flag_names[] = {
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},
    /* may_replicate is not shown, as in Redis. */
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
    {CMD_ASKING, "asking"},
};

static const struct {
    unsigned bit;
    const char *name;
} acl_names[] = {
    {ACL_KEYSPACE, "keyspace"},
    {ACL_READ, "read"},
    {ACL_WRITE, "write"},
    {ACL_SET, "set"},
    {ACL_SORTEDSET, "sortedset"},
    {ACL_LIST, "list"},
    {ACL_HASH, "hash"},
    {ACL_STRING, "string"},
    {ACL_BITMAP, "bitmap"},
    {ACL_HYPERLOGLOG, "hyperloglog"},
    {ACL_GEO, "geo"},
    {ACL_STREAM, "stream"},
    {ACL_PUBSUB, "pubsub"},
    {ACL_ADMIN, "admin"},
    {ACL_FAST, "fast"},
    {ACL_SLOW, "slow"},
    {ACL_BLOCKING, "blocking"},
    {ACL_DANGEROUS, "dangerous"},
    {ACL_CONNECTION, "connection"},
    {ACL_TRANSACTION, "transaction"},
    {ACL_SCRIPTING, "scripting"},
    {ACL_VECTORSET, "vectorset"},
};
#define NACL (sizeof(acl_names) / sizeof(acl_names[0]))

static int is_movable(const struct cmd *cmd)
{
    return (cmd->flags & CMD_MOVABLE_KEYS) || (cmd->getkeys && cmd->getkeys != getkeys_none);
}

static int has_keys(const struct cmd *cmd)
{
    return cmd->first > 0 || (cmd->getkeys && cmd->getkeys != getkeys_none);
}

/* Words of a space-separated list (its first n bytes): count, then emit
 * each as status. */
static long long word_count(const char *s, size_t n)
{
    long long k = 0;
    const char *e = s ? s + n : NULL;
    while (s && s < e) {
        while (s < e && *s == ' ')
            s++;
        if (s == e)
            break;
        k++;
        while (s < e && *s != ' ')
            s++;
    }
    return k;
}

static void reply_words_n(struct reply *r, const char *s, size_t n, int as_set, int as_status)
{
    long long k = word_count(s, n);
    const char *e = s ? s + n : NULL;
    if (as_set)
        reply_set(r, k);
    else
        reply_array(r, k);
    while (s && s < e) {
        size_t len = 0;
        while (s < e && *s == ' ')
            s++;
        if (s == e)
            break;
        while (s + len < e && s[len] != ' ')
            len++;
        if (as_status) {
            char w[64];
            size_t wl = len < sizeof(w) ? len : sizeof(w) - 1;
            memcpy(w, s, wl);
            w[wl] = 0;
            reply_status(r, w);
        } else {
            reply_bulk(r, s, len);
        }
        s += len;
    }
}

static void reply_words(struct reply *r, const char *s, int as_set, int as_status)
{
    reply_words_n(r, s, s ? strlen(s) : 0, as_set, as_status);
}

/* The spec-th ';'-separated spec of doc->kspecs, and its length; NULL
 * past the last. */
static const char *kspecs_nth(const struct cmd_doc *doc, int spec, size_t *len)
{
    const char *p = doc->kspecs;
    for (int k = 0; k < spec; k++) {
        p = strchr(p, ';');
        if (!p)
            return NULL;
        p++;
    }
    *len = strcspn(p, ";");
    return p;
}

/* Field f (0 flags, 1 begin, 2 find, 3 notes) of an explicit spec. */
static const char *kspec_field(const char *sp, size_t splen, int f, size_t *len)
{
    const char *e = sp + splen;
    for (int k = 0; k < f; k++) {
        const char *slash = memchr(sp, '/', (size_t)(e - sp));
        if (!slash)
            return NULL;
        sp = slash + 1;
    }
    if (f == 3) { /* notes: the rest, slashes and all */
        *len = (size_t)(e - sp);
        return sp;
    }
    const char *slash = memchr(sp, '/', (size_t)(e - sp));
    *len = (size_t)((slash ? slash : e) - sp);
    return sp;
}

/* The flags of key spec `spec`: a pointer and a length (not terminated
 * when they come from kspecs). */
static const char *key_flags(const struct cmd *cmd, const struct cmd_doc *doc, int spec, size_t *len)
{
    const char *f;
    if (doc && doc->kspecs) {
        size_t splen;
        const char *sp = kspecs_nth(doc, spec, &splen);
        if (sp && (f = kspec_field(sp, splen, 0, len)))
            return f;
    }
    if (doc && spec >= 1 && doc->kspec2)
        f = doc->kspec2;
    else if (doc && doc->kspec)
        f = doc->kspec;
    else
        f = (cmd->flags & CMD_WRITE) ? "RW access update" : "RO access";
    *len = strlen(f);
    return f;
}

static int nkeyspecs(const struct cmd *cmd, const struct cmd_doc *doc)
{
    if (doc && doc->kspecs) {
        int n = 1;
        for (const char *p = doc->kspecs; *p; p++)
            n += *p == ';';
        return n;
    }
    if (cmd->first > 0 && doc && doc->kspec_kw) {
        int n = 1;
        for (const char *p = doc->kspec_kw; *p; p++)
            n += *p == ':';
        return n;
    }
    if (cmd->first > 0)
        return doc && doc->kspec2 ? 2 : 1;
    return is_movable(cmd) ? 1 : 0;
}

/* Up to three comma-separated integers after a one-letter tag. */
static void kspec_ints(const char *s, const char *e, long long v[3])
{
    v[0] = v[1] = v[2] = 0;
    for (int k = 0; k < 3 && s < e; k++) {
        v[k] = strtoll(s, NULL, 10);
        while (s < e && *s != ',')
            s++;
        s++;
    }
}

/* One key spec, from doc->kspecs or derived from first/last/step,
 * kspec2 and kspec_kw. */
struct kspec {
    const char *flags, *notes, *kw; /* flags and keyword not terminated */
    size_t flen, nlen, kwlen;
    char bs;           /* begin_search: 'i' index, 'k' keyword, 'u' unknown */
    long long pos;     /* index, or keyword startfrom */
    char fk;           /* find_keys: 'r' range, 'n' keynum, 'u' unknown */
    long long v[3];    /* range: lastkey keystep limit; keynum: keynumidx firstkey keystep */
};

static void key_spec(const struct cmd *cmd, const struct cmd_doc *doc, int spec, struct kspec *ks)
{
    memset(ks, 0, sizeof(*ks));
    ks->bs = ks->fk = 'u';
    ks->flags = key_flags(cmd, doc, spec, &ks->flen);
    if (doc && doc->kspecs) {
        size_t splen, bl, kl;
        const char *sp = kspecs_nth(doc, spec, &splen), *bs, *fk;
        if (!sp)
            return;
        bs = kspec_field(sp, splen, 1, &bl);
        fk = kspec_field(sp, splen, 2, &kl);
        ks->notes = kspec_field(sp, splen, 3, &ks->nlen);
        if (bs && bl && bs[0] == 'i') {
            ks->bs = 'i';
            ks->pos = strtoll(bs + 1, NULL, 10);
        } else if (bs && bl && bs[0] == 'k') {
            const char *comma = memchr(bs, ',', bl);
            ks->bs = 'k';
            ks->kw = bs + 1;
            ks->kwlen = comma ? (size_t)(comma - bs - 1) : bl - 1;
            ks->pos = comma ? strtoll(comma + 1, NULL, 10) : 0;
        }
        if (fk && kl && (fk[0] == 'r' || fk[0] == 'n')) {
            ks->fk = fk[0];
            kspec_ints(fk + 1, fk + kl, ks->v);
        }
        return;
    }
    if (spec >= 1 && doc && doc->kspec_kw) {
        /* The spec-th "KEYWORD:startfrom" word: the key after KEYWORD. */
        const char *w = doc->kspec_kw;
        for (int k = 1; k < spec && *w; k++) {
            w += strcspn(w, " ");
            w += *w == ' ';
        }
        ks->kwlen = strcspn(w, ":");
        ks->kw = w;
        ks->bs = 'k';
        ks->pos = w[ks->kwlen] == ':' ? atoi(w + ks->kwlen + 1) : 0;
        ks->fk = 'r';
        ks->v[1] = 1;
        return;
    }
    if (cmd->first <= 0)
        return; /* keys found by a per-command function: unknown */
    /* Two specs: the first key alone, then either the last key alone
     * (RENAME src dst) or, with last < 0, every key after the first
     * (BITOP op dest src...). */
    int two = doc && doc->kspec2;
    ks->bs = 'i';
    ks->fk = 'r';
    ks->pos = cmd->first;
    ks->v[0] = cmd->last < 0 ? cmd->last : cmd->last - cmd->first;
    ks->v[1] = two ? 1 : cmd->step;
    if (two && spec == 0) {
        ks->v[0] = 0;
    } else if (two) {
        ks->pos = cmd->last < 0 ? cmd->first + cmd->step : cmd->last;
        ks->v[0] = cmd->last < 0 ? cmd->last : 0;
    }
}

static void reply_keyspec(struct reply *r, const struct cmd *cmd, const struct cmd_doc *doc, int spec)
{
    struct kspec ks;
    int range;
    key_spec(cmd, doc, spec, &ks);
    reply_map(r, ks.notes ? 4 : 3);
    if (ks.notes) {
        reply_bulk_cstr(r, "notes");
        reply_bulk(r, ks.notes, ks.nlen);
    }
    reply_bulk_cstr(r, "flags");
    reply_words_n(r, ks.flags, ks.flen, 1, 1);
    reply_bulk_cstr(r, "begin_search");
    reply_map(r, 2);
    reply_bulk_cstr(r, "type");
    if (ks.bs == 'i') {
        reply_bulk_cstr(r, "index");
        reply_bulk_cstr(r, "spec");
        reply_map(r, 1);
        reply_bulk_cstr(r, "index");
        reply_int(r, ks.pos);
    } else if (ks.bs == 'k') {
        reply_bulk_cstr(r, "keyword");
        reply_bulk_cstr(r, "spec");
        reply_map(r, 2);
        reply_bulk_cstr(r, "keyword");
        reply_bulk(r, ks.kw, ks.kwlen);
        reply_bulk_cstr(r, "startfrom");
        reply_int(r, ks.pos);
    } else {
        reply_bulk_cstr(r, "unknown");
        reply_bulk_cstr(r, "spec");
        reply_map(r, 0);
    }
    reply_bulk_cstr(r, "find_keys");
    reply_map(r, 2);
    reply_bulk_cstr(r, "type");
    if (ks.fk == 'u') {
        reply_bulk_cstr(r, "unknown");
        reply_bulk_cstr(r, "spec");
        reply_map(r, 0);
        return;
    }
    range = ks.fk == 'r';
    reply_bulk_cstr(r, range ? "range" : "keynum");
    reply_bulk_cstr(r, "spec");
    reply_map(r, 3);
    reply_bulk_cstr(r, range ? "lastkey" : "keynumidx");
    reply_int(r, ks.v[0]);
    reply_bulk_cstr(r, range ? "keystep" : "firstkey");
    reply_int(r, ks.v[1]);
    reply_bulk_cstr(r, range ? "limit" : "keystep");
    reply_int(r, ks.v[2]);
}

static int has_word(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (const char *e = s + n; s < e;) {
        size_t l = 0;
        while (s + l < e && s[l] != ' ')
            l++;
        if (l == wl && !memcmp(s, w, wl))
            return 1;
        s += l + (s + l < e);
    }
    return 0;
}

/* COMMAND GETKEYS from the key specs alone, as Redis 7 does first when
 * no spec has variable_flags: the argv positions into idx[] and each
 * key's spec into spec[] (room for argc each), the count, or -1 when a
 * spec cannot tell (unknown, a bad numkeys, out of range, incomplete). */
static int keys_by_specs(const struct cmd *cmd, const struct cmd_doc *doc, int argc, const char **argv,
                         const size_t *len, int *idx, int *spec)
{
    int n = 0, nspecs = nkeyspecs(cmd, doc);
    for (int j = 0; j < nspecs; j++) {
        struct kspec ks;
        long long first = 0, last, step;
        key_spec(cmd, doc, j, &ks);
        if (has_word(ks.flags, ks.flen, "not_key"))
            continue;
        if (ks.bs == 'i') {
            first = ks.pos;
        } else if (ks.bs == 'k') {
            long long start = ks.pos > 0 ? ks.pos : argc + ks.pos, end = ks.pos > 0 ? argc - 1 : 1;
            for (long long i = start; i != end; i = start <= end ? i + 1 : i - 1) {
                if (i >= argc || i < 1)
                    break;
                if (len[i] == ks.kwlen && !strncasecmp(argv[i], ks.kw, ks.kwlen)) {
                    first = i + 1;
                    break;
                }
            }
            if (!first)
                continue; /* keyword absent: no keys from this spec */
        } else {
            return -1;
        }
        if (ks.fk == 'r') {
            step = ks.v[1];
            if (ks.v[0] >= 0)
                last = first + ks.v[0];
            else if (!ks.v[2])
                last = argc + ks.v[0];
            else
                last = first + ((argc - first) / ks.v[2] + ks.v[0]);
        } else if (ks.fk == 'n') {
            long long nk;
            if (ks.v[0] >= argc || first + ks.v[0] >= argc)
                return -1;
            if (!str_to_ll(argv[first + ks.v[0]], len[first + ks.v[0]], &nk) || nk < 0 || nk > argc)
                return -1;
            step = ks.v[2];
            first += ks.v[1];
            last = first + nk - 1;
        } else {
            return -1;
        }
        if (last >= argc || last < first || first >= argc || step <= 0)
            return -1;
        for (long long i = first; i <= last && n < argc; i += step) {
            idx[n] = (int)i;
            spec[n++] = j;
        }
        if (has_word(ks.flags, ks.flen, "incomplete"))
            return -1;
    }
    return n;
}

static void reply_cmd_info(struct reply *r, const struct cmd *cmd)
{
    const struct cmd_doc *doc = doc_of(cmd);
    const char *fl[32];
    long long nfl = 0, nacl = 0, nsubs = 0;
    int movable = is_movable(cmd), nspecs = nkeyspecs(cmd, doc);

    for (size_t i = 0; i < sizeof(cmd_flag_names) / sizeof(cmd_flag_names[0]); i++) {
        if (cmd_flag_names[i].bit == CMD_MOVABLE_KEYS) {
            if (movable)
                fl[nfl++] = cmd_flag_names[i].name;
        } else if (cmd->flags & cmd_flag_names[i].bit) {
            fl[nfl++] = cmd_flag_names[i].name;
        }
    }
    for (size_t i = 0; i < NACL; i++)
        if (cmd->acl & acl_names[i].bit)
            nacl++;
    for (const struct cmd *s = cmd->subs; s && s->name; s++)
        nsubs++;

    reply_array(r, 10);
    reply_bulk_cstr(r, cmd->name);
    reply_int(r, cmd->arity);
    reply_set(r, nfl);
    for (long long i = 0; i < nfl; i++)
        reply_status(r, fl[i]);
    reply_int(r, cmd->first);
    reply_int(r, cmd->last);
    reply_int(r, cmd->step);
    reply_set(r, nacl);
    for (size_t i = 0; i < NACL; i++) {
        if (cmd->acl & acl_names[i].bit) {
            char w[32];
            snprintf(w, sizeof(w), "@%s", acl_names[i].name);
            reply_status(r, w);
        }
    }
    reply_words(r, doc ? doc->tips : NULL, 1, 0);
    /* Key specs are a set in RESP3, and so is an empty subcommand list
     * (a non-empty one is an array), as Redis replies. */
    reply_set(r, nspecs);
    for (int i = 0; i < nspecs; i++)
        reply_keyspec(r, cmd, doc, i);
    if (nsubs)
        reply_array(r, nsubs);
    else
        reply_set(r, 0);
    for (const struct cmd *s = cmd->subs; s && s->name; s++)
        reply_cmd_info(r, s);
}

/* ---- argument grammar -> COMMAND DOCS "arguments" ---- */
static const char *arg_end(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(')
            depth++;
        else if (*s == ')') {
            if (depth == 0)
                break;
            depth--;
        } else if (*s == ' ' && depth == 0)
            break;
    }
    return s;
}

static long long arg_count(const char *s)
{
    long long n = 0;
    while (*s && *s != ')') {
        n++;
        s = arg_end(s);
        if (*s == ' ')
            s++;
    }
    return n;
}

static const char *reply_arg_list(struct reply *r, const char *s, int *keyno, int nspecs);

static const char *reply_arg(struct reply *r, const char *s, int *keyno, int nspecs)
{
    const char *name = s, *type, *tok = NULL, *since = NULL, *depr = NULL, *disp;
    size_t nlen, tlen, toklen = 0, slen = 0, dlen = 0, displen;
    int opt = 0, mult = 0, mtok = 0, is_key, is_pure, is_group, kids, ksi = -1;
    long long fields = 2;

    nlen = strcspn(s, ":");
    s += nlen;
    if (*s == ':')
        s++;
    type = s;
    tlen = strcspn(s, "?*+=( )@!#~");
    s += tlen;
    disp = name;
    displen = nlen;
    while (*s == '?' || *s == '*' || *s == '+' || *s == '@' || *s == '!' || *s == '#' || *s == '~') {
        if (*s == '?')
            opt = 1;
        else if (*s == '*')
            mult = 1;
        else if (*s == '+')
            mtok = 1;
        if (*s == '@' || *s == '!') {
            /* since / deprecated_since: a version */
            const char **v = *s == '@' ? &since : &depr;
            size_t *vl = *s == '@' ? &slen : &dlen;
            *v = ++s;
            *vl = strspn(s, "0123456789.");
            s += *vl;
        } else if (*s == '~') {
            /* display_text other than the name */
            disp = ++s;
            displen = strcspn(s, "?*+=( )@!#~");
            s += displen;
        } else if (*s == '#') {
            /* an explicit key spec index (a pattern naming keys) */
            ksi = atoi(++s);
            s += strspn(s, "0123456789");
        } else {
            s++;
        }
    }
    if (*s == '=') {
        s++;
        tok = s;
        toklen = strcspn(s, "( )");
        s += toklen;
    }
    is_key = tlen == 3 && !memcmp(type, "key", 3);
    is_pure = tlen == 10 && !memcmp(type, "pure-token", 10);
    kids = *s == '(';
    is_group = (tlen == 5 && !memcmp(type, "oneof", 5)) || (tlen == 5 && !memcmp(type, "block", 5));
    if (is_key && ksi < 0)
        ksi = *keyno < nspecs ? *keyno : (nspecs > 0 ? nspecs - 1 : 0);
    if (ksi >= 0)
        *keyno = ksi + 1;
    /* display_text (Redis 7.2): the name, for all but oneof and block */
    fields += !is_group + (ksi >= 0) + (tok || is_pure) + (since != NULL) + (depr != NULL) + (opt || mult || mtok) +
              kids;

    reply_map(r, fields);
    reply_bulk_cstr(r, "name");
    reply_bulk(r, name, nlen);
    reply_bulk_cstr(r, "type");
    reply_bulk(r, type, tlen);
    if (!is_group) {
        reply_bulk_cstr(r, "display_text");
        reply_bulk(r, disp, displen);
    }
    if (ksi >= 0) {
        reply_bulk_cstr(r, "key_spec_index");
        reply_int(r, ksi);
    }
    if (tok) {
        reply_bulk_cstr(r, "token");
        reply_bulk(r, tok, toklen);
    } else if (is_pure) {
        char up[64];
        size_t n = nlen < sizeof(up) ? nlen : sizeof(up);
        for (size_t i = 0; i < n; i++)
            up[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
        reply_bulk_cstr(r, "token");
        reply_bulk(r, up, n);
    }
    if (since) {
        reply_bulk_cstr(r, "since");
        reply_bulk(r, since, slen);
    }
    if (depr) {
        reply_bulk_cstr(r, "deprecated_since");
        reply_bulk(r, depr, dlen);
    }
    if (opt || mult || mtok) {
        reply_bulk_cstr(r, "flags");
        reply_set(r, opt + mult + mtok);
        if (opt)
            reply_status(r, "optional");
        if (mult)
            reply_status(r, "multiple");
        if (mtok)
            reply_status(r, "multiple_token");
    }
    if (kids) {
        reply_bulk_cstr(r, "arguments");
        s = reply_arg_list(r, s + 1, keyno, nspecs);
        if (*s == ')')
            s++;
    }
    return s;
}

static const char *reply_arg_list(struct reply *r, const char *s, int *keyno, int nspecs)
{
    reply_array(r, arg_count(s));
    while (*s && *s != ')') {
        s = reply_arg(r, s, keyno, nspecs);
        if (*s == ' ')
            s++;
    }
    return s;
}

/* The doc map of one command (the value under its name). */
static void reply_cmd_docs(struct reply *r, const struct cmd *cmd)
{
    const struct cmd_doc *doc = doc_of(cmd);
    const char *summary = cmd->summary ? cmd->summary : doc ? doc->summary : NULL;
    const char *complexity = cmd->complexity ? cmd->complexity : doc ? doc->complexity : NULL;
    const char *args = doc && doc->args && doc->args[0] ? doc->args : NULL;
    char helpsum[96];
    long long fields = 0, nsubs = 0;

    if (!summary && doc == NULL) {
        /* "<parent>|help" entries share one generated summary. */
        const char *bar = strchr(cmd->name, '|');
        if (bar && !strcmp(bar + 1, "help")) {
            size_t pl = (size_t)(bar - cmd->name);
            int n = snprintf(helpsum, sizeof(helpsum), "Describe the ");
            for (size_t i = 0; i < pl && (size_t)n + 1 < sizeof(helpsum); i++)
                helpsum[n++] = (char)((cmd->name[i] >= 'a' && cmd->name[i] <= 'z') ? cmd->name[i] - 32 : cmd->name[i]);
            helpsum[n] = 0;
            snprintf(helpsum + n, sizeof(helpsum) - (size_t)n, " subcommands");
            summary = helpsum;
            if (!complexity)
                complexity = "O(1)";
        }
    }
    for (const struct cmd *s = cmd->subs; s && s->name; s++)
        nsubs++;
    fields = (summary != NULL) + (cmd->since != NULL) + (cmd->group != NULL) + (complexity != NULL) + (args != NULL) +
             (nsubs > 0);
    if (doc)
        fields += (doc->doc_flags != NULL) + (doc->deprecated_since != NULL) + (doc->replaced_by != NULL) +
                  (doc->history != NULL);
    reply_map(r, fields);
    if (summary) {
        reply_bulk_cstr(r, "summary");
        reply_bulk_cstr(r, summary);
    }
    if (cmd->since) {
        reply_bulk_cstr(r, "since");
        reply_bulk_cstr(r, cmd->since);
    }
    if (cmd->group) {
        reply_bulk_cstr(r, "group");
        reply_bulk_cstr(r, cmd->group);
    }
    if (complexity) {
        reply_bulk_cstr(r, "complexity");
        reply_bulk_cstr(r, complexity);
    }
    if (doc && doc->doc_flags) {
        reply_bulk_cstr(r, "doc_flags");
        reply_words(r, doc->doc_flags, 1, 1);
    }
    if (doc && doc->deprecated_since) {
        reply_bulk_cstr(r, "deprecated_since");
        reply_bulk_cstr(r, doc->deprecated_since);
    }
    if (doc && doc->replaced_by) {
        reply_bulk_cstr(r, "replaced_by");
        reply_bulk_cstr(r, doc->replaced_by);
    }
    if (doc && doc->history) {
        /* a set of [version, change] pairs */
        const char *h = doc->history;
        long long n = 1;
        for (const char *p = h; *p; p++)
            n += *p == ';';
        reply_bulk_cstr(r, "history");
        reply_set(r, n);
        while (n-- > 0) {
            size_t len = strcspn(h, ";"), vl = strcspn(h, " ");
            if (vl > len)
                vl = len;
            reply_array(r, 2);
            reply_bulk(r, h, vl);
            reply_bulk(r, h + vl + (vl < len), len - vl - (vl < len));
            h += len + (h[len] == ';');
        }
    }
    if (args) {
        int keyno = 0;
        reply_bulk_cstr(r, "arguments");
        reply_arg_list(r, args, &keyno, nkeyspecs(cmd, doc));
    }
    if (nsubs > 0) {
        reply_bulk_cstr(r, "subcommands");
        reply_map(r, nsubs);
        for (const struct cmd *s = cmd->subs; s && s->name; s++) {
            reply_bulk_cstr(r, s->name);
            reply_cmd_docs(r, s);
        }
    }
}

/* "get", "GET", "config|get": a command or subcommand by full name. */
static const struct cmd *lookup_full(const char *name, size_t len)
{
    const char *bar = memchr(name, '|', len);
    const struct cmd *parent;
    if (!bar)
        return cmd_lookup(name, len);
    parent = cmd_lookup(name, (size_t)(bar - name));
    if (!parent || !parent->subs)
        return NULL;
    return cmd_lookup_sub(parent, bar + 1, len - (size_t)(bar - name) - 1);
}

static long long count_top(void)
{
    long long n = 0;
    for (const struct cmd *cmd = cmd_table; cmd->name; cmd++)
        n++;
    return n;
}

static void command_all_info(struct client *c)
{
    reply_array(&c->out, count_top());
    for (const struct cmd *cmd = cmd_table; cmd->name; cmd++)
        reply_cmd_info(&c->out, cmd);
}

static int acl_category(const char *s, size_t len, unsigned *bit)
{
    for (size_t i = 0; i < NACL; i++) {
        if (str_eq_nocase(s, len, acl_names[i].name)) {
            *bit = acl_names[i].bit;
            return 1;
        }
    }
    return 0;
}

/* Reply with cmd's name if it passes the filter (category bit or pattern). */
static int list_one(struct client *c, const struct cmd *cmd, unsigned cat, const char *pat, size_t plen)
{
    if (cat && !(cmd->acl & cat))
        return 0;
    if (pat && !glob_match(pat, plen, cmd->name, strlen(cmd->name), 1))
        return 0;
    reply_bulk_cstr(&c->out, cmd->name);
    return 1;
}

static void command_list(struct client *c)
{
    enum { F_NONE, F_MODULE, F_ACL, F_PATTERN } filter = F_NONE;
    unsigned cat = 0;
    int known_cat = 1;
    const char *pat = NULL;
    size_t plen = 0;
    size_t mark;
    long long n = 0;

    if (c->argc != 2) {
        if (c->argc != 5 || !arg_is(c, 2, "filterby")) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, 3, "module"))
            filter = F_MODULE;
        else if (arg_is(c, 3, "aclcat")) {
            filter = F_ACL;
            known_cat = acl_category(c->argv[4], c->argvlen[4], &cat);
        } else if (arg_is(c, 3, "pattern")) {
            filter = F_PATTERN;
            pat = c->argv[4];
            plen = c->argvlen[4];
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    mark = reply_defer(&c->out);
    if (filter == F_MODULE || !known_cat) {
        /* No modules; an unknown category matches nothing. */
        reply_defer_array(&c->out, mark, 0);
        return;
    }
    for (const struct cmd *cmd = cmd_table; cmd->name; cmd++) {
        n += list_one(c, cmd, filter == F_ACL ? cat : 0, pat, plen);
        for (const struct cmd *s = cmd->subs; s && s->name; s++)
            n += list_one(c, s, filter == F_ACL ? cat : 0, pat, plen);
    }
    reply_defer_array(&c->out, mark, n);
}

/* COMMAND GETKEYS / GETKEYSANDFLAGS: the command line starts at argv[2]. */
/* Commands whose key spec says variable_flags: the flags this call's
 * arguments give its key, as Redis's getkeys procs refine them (SET with
 * or without GET, BITFIELD with only GETs).  NULL: the spec's own. */
static const char *variable_key_flags(const struct cmd *cmd, int key, int argc, const char **argv,
                                      const size_t *len)
{
    /* SORT ... STORE dst: the destination is overwritten (Redis's second,
     * incomplete key spec). */
    if (!strcmp(cmd->name, "sort"))
        return key == 0 ? "RO access" : "OW update";
    if (!strcmp(cmd->name, "set")) {
        for (int i = 3; i < argc; i++)
            if (len[i] == 3 && !strncasecmp(argv[i], "get", 3))
                return "RW access update";
        return "OW update";
    }
    if (!strcmp(cmd->name, "bitfield")) {
        int readonly = 1;
        for (int i = 2; i < argc; i++) {
            int rem = argc - i - 1;
            if (len[i] == 3 && !strncasecmp(argv[i], "get", 3) && rem >= 2) {
                i += 2;
            } else if (((len[i] == 3 && !strncasecmp(argv[i], "set", 3)) ||
                        (len[i] == 6 && !strncasecmp(argv[i], "incrby", 6))) && rem >= 3) {
                readonly = 0;
                break;
            } else if (len[i] == 8 && !strncasecmp(argv[i], "overflow", 8) && rem >= 1) {
                i += 1;
            } else {
                readonly = 0; /* a syntax error: assume it writes */
                break;
            }
        }
        return readonly ? "RO access" : "RW access update";
    }
    /* MIGRATE's keys, found by migrate_getkeys (its KEYS spec is
     * incomplete): each one read and deleted, as Redis's key finder says. */
    if (!strcmp(cmd->name, "migrate"))
        return "RW access delete";
    return NULL;
}

static int key_access_bits(const char *f, size_t n)
{
    int a = 0;
    if (has_word(f, n, "access"))
        a |= 1;
    if (has_word(f, n, "insert") || has_word(f, n, "delete") || has_word(f, n, "update"))
        a |= 2;
    return a;
}

/* Per command id, computed once (cmd_keys_access_init, start-up): its
 * doc row, and for commands whose keys are a plain first/last/step range
 * with constant flags, the access of the first key and of the others. */
static struct key_access_info {
    const struct cmd_doc *doc;
    signed char kind; /* 0 no keys, 1 plain range, 2 the full path */
    unsigned char acc0, acc1;
    unsigned char varflags;
    int nspecs;
} *kainfo;

static void ka_fill(const struct cmd *cmd)
{
    struct key_access_info *ki = &kainfo[cmd->id];
    const struct cmd_doc *doc = doc_of(cmd);
    ki->doc = doc;
    if (!has_keys(cmd) || (doc && doc->kspec && strstr(doc->kspec, "not_key"))) {
        ki->kind = 0;
        return;
    }
    ki->nspecs = nkeyspecs(cmd, doc);
    for (int j = 0; j < ki->nspecs; j++) {
        struct kspec ks;
        key_spec(cmd, doc, j, &ks);
        ki->varflags |= has_word(ks.flags, ks.flen, "variable_flags");
    }
    ki->kind = 2;
    if (!ki->varflags && !is_movable(cmd) && cmd->first > 0 && !(doc && (doc->kspecs || doc->kspec_kw)) &&
        ki->nspecs <= 2) {
        size_t fl;
        const char *f = key_flags(cmd, doc, 0, &fl);
        ki->acc0 = (unsigned char)key_access_bits(f, fl);
        f = key_flags(cmd, doc, ki->nspecs > 1 ? 1 : 0, &fl);
        ki->acc1 = (unsigned char)key_access_bits(f, fl);
        ki->kind = 1;
    }
}

void cmd_keys_access_init(void)
{
    kainfo = hk_calloc(sizeof(*kainfo) * (size_t)cmd_count());
    for (const struct cmd *t = cmd_table; t->name; t++) {
        ka_fill(t);
        for (const struct cmd *s = t->subs; s && s->name; s++)
            ka_fill(s);
    }
}

int cmd_keys_access(const struct cmd *cmd, struct client *c, int *idx, unsigned char *acc)
{
    const struct key_access_info *ki = &kainfo[cmd->id];
    const struct cmd_doc *doc = ki->doc;
    int nspecs = ki->nspecs, nk, varflags = ki->varflags, argc = c->argc;
    if (ki->kind == 0)
        return 0;
    if (ki->kind == 1) {
        nk = cmd_keys(cmd, c, idx, argc);
        for (int i = 0; i < nk; i++)
            acc[i] = i ? ki->acc1 : ki->acc0;
        return nk;
    }
    int spec_st[32], *spec = argc <= 32 ? spec_st : hk_malloc(sizeof(int) * (size_t)argc);
    nk = varflags || !nspecs ? -1 : keys_by_specs(cmd, doc, argc, c->argv, c->argvlen, idx, spec);
    if (nk < 0 && !varflags && !is_movable(cmd))
        nk = 0;
    if (nk < 0) {
        nk = cmd_keys(cmd, c, idx, argc);
        for (int i = 0; i < nk; i++)
            spec[i] = nspecs > 1 && i > 0 ? 1 : 0;
        if (!varflags)
            varflags = -1;
    }
    for (int i = 0; i < nk; i++) {
        const char *vf = varflags ? variable_key_flags(cmd, i, argc, c->argv, c->argvlen) : NULL;
        size_t fl;
        const char *f = vf ? vf : key_flags(cmd, doc, spec[i], &fl);
        acc[i] = (unsigned char)key_access_bits(f, vf ? strlen(vf) : fl);
    }
    if (spec != spec_st)
        hk_free(spec);
    return nk;
}

static void command_getkeys(struct client *c, int with_flags)
{
    const struct cmd *cmd = cmd_lookup(c->argv[2], c->argvlen[2]);
    const struct cmd_doc *doc;
    int nargs = c->argc - 2;
    int *idx, *spec, nk, nspecs, varflags = 0;

    /* Arity -3 (Redis 7.2): the command name alone reaches the checks
     * below, as in Redis. */
    if (cmd && cmd->subs && nargs >= 2)
        cmd = cmd_lookup_sub(cmd, c->argv[3], c->argvlen[3]);
    if (!cmd) {
        reply_error(&c->out, "ERR Invalid command specified");
        return;
    }
    /* Key specs flagged not_key (the shard channels of SSUBSCRIBE,
     * SPUBLISH, ...) are not keys to GETKEYS, as in Redis. */
    if (!has_keys(cmd) || (doc_of(cmd) && doc_of(cmd)->kspec && strstr(doc_of(cmd)->kspec, "not_key"))) {
        reply_error(&c->out, "ERR The command has no key arguments");
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != nargs) || nargs < -cmd->arity) {
        reply_error(&c->out, "ERR Invalid number of arguments specified for command");
        return;
    }

    /* As Redis: the key specs first, unless one has variable_flags (the
     * call's arguments decide the flags); when they cannot tell, the
     * command's own key finder. */
    doc = doc_of(cmd);
    nspecs = nkeyspecs(cmd, doc);
    for (int j = 0; j < nspecs; j++) {
        struct kspec ks;
        key_spec(cmd, doc, j, &ks);
        varflags |= has_word(ks.flags, ks.flen, "variable_flags");
    }
    idx = hk_malloc(sizeof(int) * 2 * (size_t)nargs);
    spec = idx + nargs;
    int *specs_block = idx; /* spec[] lives here even if idx is replaced below */
    nk = varflags || !nspecs ? -1 : keys_by_specs(cmd, doc, nargs, c->argv + 2, c->argvlen + 2, idx, spec);
    if (nk < 0 && !varflags && !is_movable(cmd))
        nk = 0; /* no key finder of its own (PFMERGE d): no keys */
    if (nk < 0) {
        /* Present the embedded command line as the client's own for
         * cmd_keys() (and any getkeys function), then restore. */
        int save_argc = c->argc;
        const char **save_argv = c->argv;
        size_t *save_len = c->argvlen;
        unsigned *save_kslot = c->kslot;
        const struct cmd *save_cmd = c->cmd;
        idx = hk_malloc(sizeof(int) * (size_t)nargs);
        c->argc = nargs;
        c->argv = save_argv + 2;
        c->argvlen = save_len + 2;
        c->kslot = save_kslot ? save_kslot + 2 : NULL;
        c->cmd = cmd;
        nk = cmd_keys(cmd, c, idx, nargs);
        c->argc = save_argc;
        c->argv = save_argv;
        c->argvlen = save_len;
        c->kslot = save_kslot;
        c->cmd = save_cmd;
        /* the destination first, then the sources (ZUNIONSTORE, ...) */
        for (int i = 0; i < nk; i++)
            spec[i] = nspecs > 1 && i > 0 ? 1 : 0;
        if (!varflags)
            varflags = -1; /* SORT's flags by position, below */
    }
    if (nk <= 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS)
            reply_array(&c->out, 0);
        else
            reply_error(&c->out, "ERR Invalid arguments specified for command");
        if (idx != specs_block)
            hk_free(specs_block);
        hk_free(idx);
        return;
    }
    reply_array(&c->out, nk);
    for (int i = 0; i < nk; i++) {
        int a = idx[i] + 2;
        if (with_flags) {
            const char *vf = varflags ? variable_key_flags(cmd, i, c->argc - 2, c->argv + 2, c->argvlen + 2) : NULL;
            size_t fl;
            const char *f = vf ? vf : key_flags(cmd, doc, spec[i], &fl);
            reply_array(&c->out, 2);
            reply_bulk(&c->out, c->argv[a], c->argvlen[a]);
            reply_words_n(&c->out, f, vf ? strlen(vf) : fl, 1, 1);
        } else {
            reply_bulk(&c->out, c->argv[a], c->argvlen[a]);
        }
    }
    if (idx != specs_block)
        hk_free(specs_block);
    hk_free(idx);
}

static void reply_help(struct client *c, const char *const *lines, size_t n)
{
    reply_array(&c->out, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_status(&c->out, lines[i]);
}

void command_command(struct client *c)
{
    if (c->argc == 1) {
        command_all_info(c);
        return;
    }
    if (arg_is(c, 1, "count")) {
        reply_int(&c->out, count_top());
    } else if (arg_is(c, 1, "info")) {
        if (c->argc == 2) {
            command_all_info(c);
            return;
        }
        reply_array(&c->out, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            const struct cmd *cmd = lookup_full(c->argv[i], c->argvlen[i]);
            if (cmd)
                reply_cmd_info(&c->out, cmd);
            else
                reply_null(&c->out);
        }
    } else if (arg_is(c, 1, "docs")) {
        if (c->argc == 2) {
            reply_map(&c->out, count_top());
            for (const struct cmd *cmd = cmd_table; cmd->name; cmd++) {
                reply_bulk_cstr(&c->out, cmd->name);
                reply_cmd_docs(&c->out, cmd);
            }
            return;
        }
        long long found = 0;
        for (int i = 2; i < c->argc; i++)
            if (lookup_full(c->argv[i], c->argvlen[i]))
                found++;
        reply_map(&c->out, found);
        for (int i = 2; i < c->argc; i++) {
            const struct cmd *cmd = lookup_full(c->argv[i], c->argvlen[i]);
            if (cmd) {
                reply_bulk_cstr(&c->out, cmd->name);
                reply_cmd_docs(&c->out, cmd);
            }
        }
    } else if (arg_is(c, 1, "list")) {
        command_list(c);
    } else if (arg_is(c, 1, "getkeys")) {
        command_getkeys(c, 0);
    } else if (arg_is(c, 1, "getkeysandflags")) {
        command_getkeys(c, 1);
    } else if (arg_is(c, 1, "help")) {
        static const char *const lines[] = {
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Describe every command (as INFO with no names).",
            "COUNT",
            "    Number of commands (top level) the server knows.",
            "INFO [<command-name> ...]",
            "    Name, arity, flags, key positions, ACL categories, tips, key specs and",
            "    subcommands of the given commands (all commands when none is given).",
            "DOCS [<command-name> ...]",
            "    Summary, version, group, complexity and arguments of the given commands",
            "    (all commands when none is given).",
            "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
            "    Names of all commands and subcommands, optionally filtered.",
            "GETKEYS <full-command>",
            "    The key names the given command line would access.",
            "GETKEYSANDFLAGS <full-command>",
            "    Like GETKEYS, with the access flags of each key.",
            "HELP",
            "    This text.",
        };
        reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
    } else {
        reply_unknown_subcommand(c);
    }
}

/* ------------------------------------------------------ TIME, LASTSAVE --- */
/* The command's start (Redis 7.2's cached ustime): one instant inside a
 * script or MULTI/EXEC. */
void time_command(struct client *c)
{
    long long us = db_cmd_time_us ? db_cmd_time_us : time_us();
    reply_array(&c->out, 2);
    reply_bulk_ll(&c->out, us / 1000000);
    reply_bulk_ll(&c->out, us % 1000000);
}

void lastsave_command(struct client *c)
{
    reply_int(&c->out, persist_lastsave());
}

/* -------------------------------------------------------------- DEBUG --- */
atomic_int debug_script_deny_off;
atomic_int debug_skip_checksum;

int debug_keyless(const struct client *c)
{
    static const char *const keyless[] = {"protocol", "log", "error", "sleep", "stringmatch-len",
                                          "set-active-expire", "pause-cron"};
    if (c->argc < 2)
        return 0;
    for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++)
        if (arg_is(c, 1, keyless[i]))
            return 1;
    return 0;
}

/* A NUL-terminated copy of an argument, truncated to cap-1 bytes. */
static void arg_cstr(const struct client *c, int i, char *buf, size_t cap)
{
    size_t n = c->argvlen[i] < cap - 1 ? c->argvlen[i] : cap - 1;
    memcpy(buf, c->argv[i], n);
    buf[n] = 0;
}

static int arg_nonneg(struct client *c, int i, long long *v)
{
    if (!str_to_ll(c->argv[i], c->argvlen[i], v) || *v < 0) {
        reply_error(&c->out, "ERR value is out of range, must be positive");
        return -1;
    }
    return 0;
}

/* Sleeps in slices of at most 100 ms so a shutdown is not held up by
 * "DEBUG SLEEP 1e300"; the length is capped at a year, which also keeps
 * the double-to-integer conversion defined. */
static void debug_sleep(struct client *c)
{
    char buf[64];
    double secs;
    arg_cstr(c, 2, buf, sizeof(buf));
    secs = strtod(buf, NULL);   /* lenient, like Redis: junk sleeps 0 */
    if (!(secs > 0) || !isfinite(secs))
        secs = 0;
    if (secs > 365.0 * 86400)
        secs = 365.0 * 86400;
    long long end = mono_us() + (long long)(secs * 1e6);
    for (long long left; (left = end - mono_us()) > 0 && !atomic_load(&server_shutdown);) {
        struct timespec ts;
        if (left > 100000)
            left = 100000;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)left * 1000;
        nanosleep(&ts, NULL);
    }
    reply_ok(&c->out);
}

/* What DEBUG POPULATE may use: up to maxmemory when it is set, else the
 * machine's physical memory, less what the process already holds. */
static unsigned long long populate_budget(void)
{
    unsigned long long limit, used = mem_used();
    long long mm = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
    if (mm > 0) {
        limit = (unsigned long long)mm;
    } else {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        limit = pages > 0 && psz > 0 ? (unsigned long long)pages * (unsigned long long)psz : 1ULL << 40;
    }
    return limit > used ? limit - used : 0;
}

static void debug_populate(struct client *c)
{
    long long count, size = 0;
    const char *prefix = "key";
    size_t plen = 3;
    char kstack[256], *kbuf = kstack;
    char *vbuf = NULL;

    if (arg_nonneg(c, 2, &count) != 0)
        return;
    if (c->argc >= 4) {
        prefix = c->argv[3];
        plen = c->argvlen[3];
    }
    if (c->argc == 5 && arg_nonneg(c, 4, &size) != 0)
        return;
    /* Hostile sizes used to abort the process in the allocator: a value
     * is a string, so it obeys proto-max-bulk-len, and the whole run must
     * fit the memory there is (about 64 bytes of entry and table overhead
     * per key on top of the key and value bytes). */
    if (size > __atomic_load_n(&cfg.proto_max_bulk_len, __ATOMIC_RELAXED)) {
        reply_error(&c->out, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    {
        unsigned long long per = (unsigned long long)plen + 21 + (size > 26 ? (unsigned long long)size : 26) + 64, need;
        unsigned long long budget = populate_budget();
        if (__builtin_mul_overflow((unsigned long long)count, per, &need) || need > budget) {
            reply_errorf(&c->out, "ERR DEBUG POPULATE needs more memory than is available (%llu bytes free)", budget);
            return;
        }
    }
    if (plen + 24 > sizeof(kstack))
        kbuf = hk_malloc(plen + 24);
    memcpy(kbuf, prefix, plen);
    kbuf[plen] = ':';
    if (size > 0)
        vbuf = hk_calloc((size_t)size);

    long long j;
    int stopped = 0;
    for (j = 0; j < count; j++) {
        char num[24], val[32];
        /* Long runs stop for a shutdown, and at maxmemory (the estimate
         * above is only an estimate). */
        if ((j & 4095) == 4095) {
            long long mm = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
            if (atomic_load(&server_shutdown) || (mm > 0 && mem_used_fast() > (size_t)mm)) {
                stopped = 1;
                break;
            }
        }
        int nl = ll_to_str(num, j);
        size_t klen = plen + 1 + (size_t)nl;
        size_t vlen;
        const char *v = val;
        unsigned slot;

        memcpy(kbuf + plen + 1, num, (size_t)nl);
        memcpy(val, "value:", 6);
        memcpy(val + 6, num, (size_t)nl);
        vlen = 6 + (size_t)nl;
        if (size > 0) {
            /* Pad with zero bytes or cut to exactly size bytes. */
            size_t keep = vlen < (size_t)size ? vlen : (size_t)size;
            memset(vbuf, 0, (size_t)size < sizeof(val) ? (size_t)size : sizeof(val));
            memcpy(vbuf, val, keep);
            v = vbuf;
            vlen = (size_t)size;
        }
        slot = key_slot(kbuf, klen);
        slot_lock_self(slot);
        if (!db_get(c->db, slot, kbuf, klen, LK_NOTOUCH | LK_NOSTATS))
            db_add(c->db, slot, entry_new_string(kbuf, klen, v, vlen, -1));
        slot_unlock_self(slot);
    }
    if (kbuf != kstack)
        hk_free(kbuf);
    hk_free(vbuf);
    if (stopped)
        reply_errorf(&c->out, "ERR DEBUG POPULATE stopped after %lld keys (maxmemory reached or shutting down)", j);
    else
        reply_ok(&c->out);
}

static const char *encoding_name(const struct entry *e)
{
    return obj_enc_name(e);
}

/* Bytes an RDB dump would use for a length prefix. */
static size_t rdb_len_bytes(unsigned long long n)
{
    return n < 64 ? 1 : n < 16384 ? 2 : n <= 0xffffffffULL ? 5 : 9;
}

/* Serialized size without compression (Redis also tries LZF on strings over
 * 20 bytes, so its figure can be smaller for repetitive values). */
static size_t serialized_len(struct entry *e)
{
    if (e->type == OBJ_STRING) {
        long long v;
        if (e->enc == ENC_INT && str_to_ll(entry_val(e), entry_vlen(e), &v)) {
            if (v >= -128 && v <= 127)
                return 2;
            if (v >= -32768 && v <= 32767)
                return 3;
            if (v >= -2147483648LL && v <= 2147483647LL)
                return 5;
        }
        return rdb_len_bytes(entry_vlen(e)) + entry_vlen(e);
    }
    return entry_mem(e);
}

/* Like Redis, the key as stored: a logically expired key is still shown. */
static void debug_object(struct client *c)
{
    unsigned slot = key_slot(c->argv[2], c->argvlen[2]);
    struct entry *e;
    char out[256];

    slot_lock_self(slot);
    e = db_get(c->db, slot, c->argv[2], c->argvlen[2], LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE);
    if (e) {
        uint32_t now = lru_clock_now & 0xffffff, lru = entry_lru(e) & 0xffffff;
        unsigned long long idle = now >= lru ? now - lru : (0xffffffu - lru) + now;
        snprintf(out, sizeof(out),
                 "Value at:%p refcount:1 encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu", (void *)e,
                 encoding_name(e), serialized_len(e), (unsigned)lru, idle);
    }
    slot_unlock_self(slot);
    if (!e)
        reply_error(&c->out, ERR_NO_KEY);
    else
        reply_status(&c->out, out);
}

/* DEBUG LISTPACK key / DEBUG QUICKLIST key [full]: the layout of a
 * listpack- or quicklist-encoded value written to stdout (what Redis's
 * suite calls to look at encodings), under the key's slot lock. */
static void debug_layout(struct client *c, int quicklist)
{
    unsigned slot = key_slot(c->argv[2], c->argvlen[2]);
    int full = 0, found = 0, ok = 0;
    if (c->argc == 4) {
        char buf[32];
        arg_cstr(c, 3, buf, sizeof(buf));
        full = atoi(buf) != 0;
    }
    slot_lock_self(slot);
    struct entry *e = db_get(c->db, slot, c->argv[2], c->argvlen[2], LK_NOTOUCH | LK_NOSTATS);
    if (e) {
        found = 1;
        if (quicklist && e->type == OBJ_LIST && e->enc == ENC_QUICKLIST) {
            ok = 1;
            flockfile(stdout);
            ql_repr(entry_ptr(e), full, stdout);
        } else if (!quicklist && e->type != OBJ_STRING &&
                   (e->enc == ENC_LISTPACK || e->enc == ENC_LISTPACK_EX)) {
            ok = 1;
            flockfile(stdout);
            lp_repr(entry_ptr(e), stdout, "");
        }
        if (ok) {
            fflush(stdout);
            funlockfile(stdout);
        }
    }
    slot_unlock_self(slot);
    if (!found)
        reply_error(&c->out, ERR_NO_KEY);
    else if (!ok)
        reply_error(&c->out, quicklist ? "ERR Not a quicklist encoded object." : "ERR Not a listpack encoded object.");
    else
        reply_status(&c->out, quicklist ? "Quicklist structure printed on stdout" : "Listpack structure printed on stdout");
}

/* DEBUG DIGEST: every database's keys, each key + value digested and
 * xored (types/digest.h), taken slot by slot under the slot's lock.  An
 * empty dataset is 40 zeros. */
static void debug_digest(struct client *c)
{
    unsigned char final[DIGEST_LEN] = {0};
    char hex[2 * DIGEST_LEN + 1];
    for (int d = 0; d < ks.ndb; d++) {
        unsigned char dbx[DIGEST_LEN] = {0}, kd[DIGEST_LEN];
        long keys = 0;
        for (unsigned s = 0; s < NSLOTS; s++) {
            if (!ks.dbs[d]->t[s])
                continue;
            slot_lock_self(s);
            const struct table *t = ks.dbs[d]->t[s];
            for (uint32_t i = 0; t && i < t->cap; i++) {
                if (!table_full(t, i))
                    continue;
                digest_key_value(kd, table_get(t, i));
                digest_add_key(dbx, kd);
                keys++;
            }
            slot_unlock_self(s);
        }
        if (keys) {
            digest_db_begin(final, d);
            digest_xor(final, dbx);
        }
    }
    digest_hex(hex, final);
    reply_status(&c->out, hex);
}

/* DEBUG DIGEST-VALUE key ...: the value digests (logically expired keys
 * too), 40 zeros for a missing key. */
static void debug_digest_value(struct client *c)
{
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        unsigned char d[DIGEST_LEN] = {0};
        char hex[2 * DIGEST_LEN + 1];
        unsigned s = key_slot(c->argv[j], c->argvlen[j]);
        slot_lock_self(s);
        struct entry *e = db_get(c->db, s, c->argv[j], c->argvlen[j], LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE);
        if (e)
            digest_value(d, e);
        slot_unlock_self(s);
        digest_hex(hex, d);
        reply_status(&c->out, hex);
    }
}

/* Random patterns and subjects through glob_match: it must return, never
 * crash or read out of bounds (run under ASan to be meaningful). */
static void debug_stringmatch_test(struct client *c)
{
    static const char alphabet[] = "ab*?[]^-\\";
    char pat[64], str[64];
    for (int round = 0; round < 100000; round++) {
        size_t pl = rand64() % sizeof(pat), sl = rand64() % sizeof(str);
        for (size_t i = 0; i < pl; i++) {
            uint64_t r = rand64();
            pat[i] = (r & 1) ? alphabet[(r >> 1) % (sizeof(alphabet) - 1)] : (char)(r >> 8);
        }
        for (size_t i = 0; i < sl; i++) {
            uint64_t r = rand64();
            str[i] = (r & 1) ? alphabet[(r >> 1) % 2] : (char)(r >> 8);
        }
        glob_match(pat, pl, str, sl, (int)(round & 1));
    }
    reply_status(&c->out, "glob_match survived 100000 random pattern/string pairs");
}

static void debug_unknown(struct client *c)
{
    reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                 (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]), c->argv[1]);
}

/* DEBUG PROTOCOL <type>: one reply of each RESP3 type, with the values
 * Redis sends, for client libraries to test their parsers against.  On
 * RESP2 each comes in its RESP2 form (an attribute is left out, a push
 * is refused). */
static void debug_protocol(struct client *c)
{
    struct reply *o = &c->out;
    if (arg_is(c, 2, "string")) {
        reply_bulk_cstr(o, "Hello World");
    } else if (arg_is(c, 2, "integer")) {
        reply_int(o, 12345);
    } else if (arg_is(c, 2, "double")) {
        reply_double(o, 3.141);
    } else if (arg_is(c, 2, "bignum")) {
        static const char big[] = "1234567999999999999999999999999999999";
        if (o->resp == 3) {
            reply_raw(o, "(", 1);
            reply_raw(o, big, sizeof(big) - 1);
            reply_raw(o, "\r\n", 2);
        } else {
            reply_bulk(o, big, sizeof(big) - 1);
        }
    } else if (arg_is(c, 2, "null")) {
        reply_null(o);
    } else if (arg_is(c, 2, "array") || arg_is(c, 2, "set")) {
        if (arg_is(c, 2, "array"))
            reply_array(o, 3);
        else
            reply_set(o, 3);
        for (int j = 0; j < 3; j++)
            reply_int(o, j);
    } else if (arg_is(c, 2, "map")) {
        reply_map(o, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(o, j);
            reply_bool(o, j == 1);
        }
    } else if (arg_is(c, 2, "attrib")) {
        if (o->resp == 3) {
            reply_raw(o, "|1\r\n", 4);
            reply_bulk_cstr(o, "key-popularity");
            reply_array(o, 2);
            reply_bulk_cstr(o, "key:123");
            reply_int(o, 90);
        }
        reply_bulk_cstr(o, "Some real reply following the attribute");
    } else if (arg_is(c, 2, "push")) {
        if (o->resp < 3) {
            reply_error(o, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_push(o, 2);
        reply_bulk_cstr(o, "server-cpu-usage");
        reply_int(o, 42);
        reply_bulk_cstr(o, "Some real reply following the push reply");
    } else if (arg_is(c, 2, "true") || arg_is(c, 2, "false")) {
        reply_bool(o, arg_is(c, 2, "true"));
    } else if (arg_is(c, 2, "verbatim")) {
        reply_verbatim(o, "This is a verbatim\nstring", 25, "txt");
    } else {
        reply_error(o, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

/* DEBUG's "<subcommand> 0|1" switches: the argument as Redis reads it
 * (atoi, so anything not a number is 0). */
static int debug_flag_arg(struct client *c)
{
    char buf[32];
    arg_cstr(c, 2, buf, sizeof(buf));
    return atoi(buf) != 0;
}

void debug_command(struct client *c)
{
    if (arg_is(c, 1, "help") && c->argc == 2) {
        static const char *const lines[] = {
            "DEBUG <subcommand> [<arg> ...]. HotKV supports:",
            "SLEEP <seconds>",
            "    Block this worker thread for <seconds> (fractions allowed).",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create string keys <prefix>:0 .. <prefix>:<count-1> (prefix defaults to 'key')",
            "    holding 'value:<n>'; with <size>, values are zero-padded or cut to <size> bytes.",
            "    Existing keys are left alone.",
            "OBJECT <key>",
            "    Low level details of the value stored at <key>.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Turn the background expiry sweep off (0) or on (1).",
            "SET-DISABLE-DENY-SCRIPTS <0|1>",
            "    Let scripts call (1) the DEBUG subcommands that need no keys or connection:",
            "    PROTOCOL, LOG, ERROR, SLEEP, STRINGMATCH-LEN, SET-ACTIVE-EXPIRE, PAUSE-CRON; 0 denies them again.",
            "AOF-FLUSH-SLEEP <microsec>",
            "    Sleep this long before each write of the AOF's pending bytes (0: no sleep).",
            "REPLICATE <command> [<arg> ...]",
            "    Stream the command to the replicas without running it here (they may diverge).",
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Skip (1) the CRC of RESTORE's payloads (their version is still checked), or check it (0).",
            "PAUSE-CRON <0|1>",
            "    Stop (1) or resume (0) the periodic work: the workers' cron, save points and",
            "    child reaping, and a signal's shutdown (held until resumed or SHUTDOWN ABORT).",
            "DIGEST",
            "    A hex signature of every database's content (40 zeros when empty).",
            "DIGEST-VALUE <key> [<key> ...]",
            "    A hex signature of the value of each key.",
            "CHANGE-REPL-ID",
            "    Give the server a new replication ID.",
            "LISTPACK <key>",
            "    Print the listpack of a listpack-encoded hash, set, sorted set or list on stdout.",
            "QUICKLIST <key> [<0|1>]",
            "    Print the nodes of a quicklist-encoded list on stdout (1: with each node's elements).",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    List elements of at least <size> bytes (k/m/g suffixes) go to plain nodes; 0 restores the default.",
            "STRINGMATCH-LEN <pattern> <string>",
            "    1 if <string> matches the glob <pattern>, else 0.",
            "STRINGMATCH-TEST",
            "    Feed random input to the glob matcher.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "ERROR <message>",
            "    Reply with <message> as an error.",
            "PROTOCOL <type>",
            "    One reply of a RESP3 type (string|integer|double|bignum|null|array|set|map|",
            "    attrib|push|verbatim|true|false), in its RESP2 form on RESP2.",
            "HELP",
            "    This text.",
        };
        reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
    } else if (arg_is(c, 1, "reload")) {
        persist_debug_reload(c);
    } else if (arg_is(c, 1, "loadaof") && c->argc == 2) {
        aof_debug_loadaof(c);
    } else if (arg_is(c, 1, "sleep") && c->argc == 3) {
        debug_sleep(c);
    } else if (arg_is(c, 1, "populate") && c->argc >= 3 && c->argc <= 5) {
        debug_populate(c);
    } else if (arg_is(c, 1, "object") && c->argc == 3) {
        debug_object(c);
    } else if (arg_is(c, 1, "set-active-expire") && c->argc == 3) {
        __atomic_store_n(&cfg.active_expire, debug_flag_arg(c), __ATOMIC_RELAXED);
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "set-disable-deny-scripts") && c->argc == 3) {
        atomic_store(&debug_script_deny_off, debug_flag_arg(c));
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "set-skip-checksum-validation") && c->argc == 3) {
        atomic_store(&debug_skip_checksum, debug_flag_arg(c));
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "pause-cron") && c->argc == 3) {
        atomic_store(&cron_paused, debug_flag_arg(c));
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "aof-flush-sleep") && c->argc == 3) {
        char buf[32];
        arg_cstr(c, 2, buf, sizeof(buf));
        int us = atoi(buf);
        atomic_store(&aof_flush_sleep_us, us > 0 ? us : 0);
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "replicate") && c->argc >= 3) {
        repl_feed_verbatim(c->argc - 2, c->argv + 2, c->argvlen + 2);
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "change-repl-id") && c->argc == 2) {
        repl_replid_change();
        log_msg(LL_NOTICE, "Changed the replication ID on request (DEBUG CHANGE-REPL-ID)");
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "listpack") && c->argc == 3) {
        debug_layout(c, 0);
    } else if (arg_is(c, 1, "quicklist") && (c->argc == 3 || c->argc == 4)) {
        debug_layout(c, 1);
    } else if (arg_is(c, 1, "quicklist-packed-threshold") && c->argc == 3) {
        debug_quicklist_packed_threshold(c);
    } else if (arg_is(c, 1, "digest") && c->argc == 2) {
        debug_digest(c);
    } else if (arg_is(c, 1, "digest-value") && c->argc >= 2) {
        debug_digest_value(c);
    } else if (arg_is(c, 1, "stringmatch-len") && c->argc == 4) {
        reply_int(&c->out, glob_match(c->argv[2], c->argvlen[2], c->argv[3], c->argvlen[3], 0));
    } else if (arg_is(c, 1, "stringmatch-test") && c->argc == 2) {
        debug_stringmatch_test(c);
    } else if (arg_is(c, 1, "log") && c->argc == 3) {
        log_msg(LL_WARNING, "DEBUG LOG: %.*s", (int)(c->argvlen[2] > 4096 ? 4096 : c->argvlen[2]), c->argv[2]);
        reply_ok(&c->out);
    } else if (arg_is(c, 1, "protocol") && c->argc == 3) {
        debug_protocol(c);
    } else if (arg_is(c, 1, "error") && c->argc == 3) {
        char *msg = hk_malloc(c->argvlen[2] + 1);
        memcpy(msg, c->argv[2], c->argvlen[2]);
        msg[c->argvlen[2]] = 0;
        reply_error(&c->out, msg);
        hk_free(msg);
    } else {
        debug_unknown(c);
    }
}

/* ------------------------------------------------------------- MODULE --- */
/* HotKV has no module system.  MODULE exists so that clients and tools
 * probing it get Redis's answers: LIST is empty, LOAD/LOADEX/UNLOAD are
 * gated by enable-module-command (cmd.c) and, when allowed, fail the way
 * Redis fails for a module that cannot be loaded / is not loaded. */
void module_command(struct client *c)
{
    const char *sub = c->cmd->name + 7; /* after "module|" */
    if (!strcmp(sub, "list")) {
        reply_array(&c->out, 0);
    } else if (!strcmp(sub, "load") || !strcmp(sub, "loadex")) {
        log_msg(LL_WARNING, "Module %.*s failed to load: HotKV does not support modules",
                (int)(c->argvlen[2] > 1024 ? 1024 : c->argvlen[2]), c->argv[2]);
        reply_error(&c->out, "ERR Error loading the extension. Please check the server logs.");
    } else if (!strcmp(sub, "unload")) {
        reply_error(&c->out, "ERR Error unloading module: no such module with that name");
    } else {
        static const char *const lines[] = {
            "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "LIST",
            "    Return a list of loaded modules (HotKV has no modules: always empty).",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>: always fails, HotKV has no module support.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Same as LOAD.",
            "UNLOAD <name>",
            "    Unload a module: always fails, no module is loaded.",
            "HELP",
            "    Print this help.",
        };
        reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
    }
}
