/* memstats.h - where the memory goes: the breakdown behind INFO memory,
 * MEMORY STATS and MEMORY DOCTOR (Redis's getMemoryOverheadData shape).
 *
 * Sources, all real figures:
 *  - total / peak: mem_used() and mem_peak() (base/mem.h, jemalloc's
 *    per-thread counters); startup: mem_used() when the server had built
 *    its empty keyspace, before loading any data (memstats_mark_startup).
 *  - keyspace overhead per database: the slot tables' allocations
 *    (table_bytes) plus the 16-byte entry header of every key, and 8 bytes
 *    per key with a TTL (the expire time lives in the entry).  Read one slot
 *    lock at a time, as INFO keyspace does: a pass over 16,384 slots that
 *    never holds more than one shard (about a millisecond at 10 M keys).
 *  - client buffers: query buffer, reply buffer(s), argument arrays, the
 *    client struct, MULTI queue, pub/sub names and tracking prefixes of
 *    every connection (the figure maxmemory-clients also uses).  A
 *    worker's clients may be read only by that worker, so each worker
 *    publishes its sum from its cron (every 1000/hz ms); the caller's own
 *    worker is summed live.  Redis's figure is likewise updated
 *    incrementally, not walked at read time.
 *  - AOF buffers (persist/aof.h aof_buffer_bytes, while the AOF is on),
 *    scripting caches (script_get_info), allocator statistics
 *    (base/malloc_stats.h) and the process RSS.
 * Replication, replica clients and cluster links do not exist: 0. */
#ifndef HK_MEMSTATS_H
#define HK_MEMSTATS_H

#include <stddef.h>

#include "../base/malloc_stats.h"
#include "cmd.h"

/* Per-database key counts and index bytes, one slot lock at a time. */
/* What scripting holds (script/: script_get_info), for INFO memory. */
struct script_info {
    long long vm_eval, vm_functions;   /* Lua heap bytes per VM */
    long long scripts_mem;             /* script cache + function libraries bookkeeping */
    long long functions_mem;           /* the function libraries' part of scripts_mem */
    long long cached_scripts;
    long long functions, libraries;
};
/* Installed by script_install_hooks(); NULL: all zero. */
extern void (*memstats_script_info)(struct script_info *out);

struct ks_usage {
    int ndb;
    unsigned long long keys[MAX_DBS], expires[MAX_DBS];
    size_t index[MAX_DBS]; /* slot tables' allocations (only with want_index) */
};
void ks_usage_scan(struct ks_usage *u, int want_index);

struct mem_db_overhead {
    int dbid;
    size_t main, expires, slot_to_keys;
};

struct mem_overhead {
    size_t total_allocated, startup_allocated, peak_allocated;
    size_t repl_backlog, clients_slaves, clients_normal, cluster_links, aof_buffer;
    size_t repl_total; /* the whole replication buffer: repl_backlog + clients_slaves */
    size_t lua_caches, functions_caches;
    int num_dbs;
    struct mem_db_overhead db[MAX_DBS]; /* non-empty databases only */
    size_t overhead_total, dataset, bytes_per_key;
    unsigned long long total_keys;
    double dataset_perc, peak_perc;
    /* Allocator and process (allocator_ok 0: no allocator statistics,
     * every allocator figure below is 0). */
    int allocator_ok;
    struct alloc_stats as;
    size_t rss;
    double allocator_frag, allocator_rss, rss_extra, total_frag;
    long long allocator_frag_bytes, allocator_rss_bytes, rss_extra_bytes, total_frag_bytes;
    long long clients;      /* connected */
    struct script_info si;  /* memstats_script_info() */
};

/* Fill *mh.  u: a scan made with want_index (NULL: scan here).  Takes slot
 * locks one at a time (when u is NULL) and the script mutex briefly: call
 * with no slot lock held, or with all of them (inside EXEC). */
void mem_overhead_get(struct mem_overhead *mh, const struct ks_usage *u);
/* MEMORY DOCTOR's text (heap string, hk_free it). */
char *mem_doctor_report(const struct mem_overhead *mh);

/* Bytes a connection holds (its worker's thread only). */
/* Worker cron: publish the sum over w's clients. */
void memstats_worker_cron(struct worker *w);
/* server.c, once the empty keyspace exists and before any data is loaded. */
void memstats_mark_startup(void);

#endif
