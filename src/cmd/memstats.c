/* memstats.c - see memstats.h. */
#include "../cluster/cluster.h"
#include "memstats.h"

#include "../persist/repl.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../base/mem.h"
#include "../ds/dict.h"
#include "../persist/aof.h"
#include "multi.h"
#include "tracking.h"

/* ------------------------------------------------------------ keyspace --- */
void ks_usage_scan(struct ks_usage *u, int want_index)
{
    int ndb = ks.ndb < MAX_DBS ? ks.ndb : MAX_DBS;
    memset(u, 0, sizeof(*u));
    u->ndb = ndb;
    for (unsigned s = 0; s < NSLOTS; s++) {
        slot_lock_self(s);
        for (int d = 0; d < ndb; d++) {
            const struct table *t = ks.dbs[d]->t[s];
            if (!t)
                continue;
            u->keys[d] += t->used;
            u->expires[d] += t->expires;
            if (want_index)
                u->index[d] += table_bytes(t);
        }
        slot_unlock_self(s);
    }
}

void (*memstats_script_info)(struct script_info *out);

/* ------------------------------------------------------------- clients --- */
/* The cap of `threads` (config.c) bounds worker ids. */
#define MAX_WORKERS 1024
/* One line per worker (each writes its own at every cron tick). */
static struct {
    _Alignas(64) _Atomic size_t v;
} wk_clients_mem[MAX_WORKERS];

static size_t worker_clients_mem(const struct worker *w)
{
    size_t n = 0;
    for (const struct client *c = w->clients; c; c = c->next)
        n += client_mem_usage(c);
    return n;
}

void memstats_worker_cron(struct worker *w)
{
    /* Worker 0 also keeps used_memory_peak current between INFO calls
     * (mem_used() notes the peak). */
    if (w->id == 0)
        (void)mem_used();
    if (w->id >= 0 && w->id < MAX_WORKERS) {
        size_t v = worker_clients_mem(w);
        if (atomic_load_explicit(&wk_clients_mem[w->id].v, memory_order_relaxed) != v)
            atomic_store_explicit(&wk_clients_mem[w->id].v, v, memory_order_relaxed);
    }
}

/* Every worker's published sum, with the calling worker's own clients
 * summed now. */
static size_t clients_mem_total(void)
{
    size_t n = 0;
    struct worker *self = cur_worker;
    for (int i = 0; i < nworkers && i < MAX_WORKERS; i++) {
        if (self && self->id == i)
            n += worker_clients_mem(self);
        else
            n += atomic_load_explicit(&wk_clients_mem[i].v, memory_order_relaxed);
    }
    return n;
}

/* ------------------------------------------------------------- startup --- */
static _Atomic size_t startup_bytes;

void memstats_mark_startup(void)
{
    atomic_store(&startup_bytes, mem_used());
}

/* ------------------------------------------------------------ overhead --- */
static double ratio(size_t a, size_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

void mem_overhead_get(struct mem_overhead *mh, const struct ks_usage *u)
{
    struct ks_usage local;
    size_t total = 0;

    if (!u) {
        ks_usage_scan(&local, 1);
        u = &local;
    }
    memset(mh, 0, sizeof(*mh));
    mh->total_allocated = mem_used(); /* also moves the peak */
    mh->peak_allocated = mem_peak();
    if (mh->peak_allocated < mh->total_allocated)
        mh->peak_allocated = mh->total_allocated;
    mh->startup_allocated = atomic_load(&startup_bytes);
    total += mh->startup_allocated;

    /* The replication buffer (persist/repl.c), split as Redis 7 splits its
     * shared buffer: what lies beyond repl-backlog-size only for replicas
     * that have not read it is theirs (mem_clients_slaves), the rest is the
     * backlog; both are overhead, as are the cluster bus's links. */
    mh->repl_total = repl_buffer_bytes();
    mh->clients_slaves = repl_buffer_not_counted();
    if (mh->clients_slaves > mh->repl_total)
        mh->clients_slaves = mh->repl_total;
    mh->repl_backlog = mh->repl_total - mh->clients_slaves;
    long conns;
    mh->cluster_links = cluster_links_info(&conns);
    total += mh->repl_total + mh->cluster_links;

    mh->clients_normal = clients_mem_total();
    total += mh->clients_normal;

    if (atomic_load_explicit(&aof_active, memory_order_relaxed))
        mh->aof_buffer = aof_buffer_bytes();
    total += mh->aof_buffer;

    if (memstats_script_info)
        memstats_script_info(&mh->si);
    else
        memset(&mh->si, 0, sizeof(mh->si));
    mh->functions_caches = mh->si.functions_mem > 0 ? (size_t)mh->si.functions_mem : 0;
    if (mh->si.scripts_mem > mh->si.functions_mem)
        mh->lua_caches = (size_t)(mh->si.scripts_mem - mh->si.functions_mem);
    total += mh->lua_caches + mh->functions_caches;

    for (int d = 0; d < u->ndb; d++) {
        if (!u->keys[d])
            continue;
        struct mem_db_overhead *o = &mh->db[mh->num_dbs++];
        o->dbid = d;
        /* The index plus every key's entry header (the per-key structure,
         * as Redis counts its dictEntry and robj). */
        o->main = u->index[d] + (size_t)u->keys[d] * sizeof(struct entry);
        /* A TTL is 8 bytes inside its entry: no second table. */
        o->expires = (size_t)u->expires[d] * 8;
        o->slot_to_keys = 0; /* the per-db slot array is startup memory */
        total += o->main + o->expires;
        mh->total_keys += u->keys[d];
    }

    mh->overhead_total = total;
    mh->dataset = mh->total_allocated > total ? mh->total_allocated - total : 0;
    mh->peak_perc = mh->peak_allocated ? (double)mh->total_allocated * 100 / (double)mh->peak_allocated : 0.0;
    size_t net = mh->total_allocated > mh->startup_allocated ? mh->total_allocated - mh->startup_allocated : 1;
    mh->dataset_perc = (double)mh->dataset * 100 / (double)net;
    mh->bytes_per_key = mh->total_keys ? net / mh->total_keys : 0;

    mh->rss = mem_rss();
    mh->total_frag = ratio(mh->rss, mh->total_allocated);
    mh->total_frag_bytes = (long long)mh->rss - (long long)mh->total_allocated;
    mh->allocator_ok = alloc_stats_get(&mh->as) == 0;
    if (mh->allocator_ok) {
        mh->allocator_frag = ratio(mh->as.active, mh->as.allocated);
        mh->allocator_frag_bytes = (long long)mh->as.active - (long long)mh->as.allocated;
        mh->allocator_rss = ratio(mh->as.resident, mh->as.active);
        mh->allocator_rss_bytes = (long long)mh->as.resident - (long long)mh->as.active;
        mh->rss_extra = ratio(mh->rss, mh->as.resident);
        mh->rss_extra_bytes = (long long)mh->rss - (long long)mh->as.resident;
    }
    mh->clients = atomic_load(&connected_clients);
}

/* -------------------------------------------------------------- doctor --- */
struct tbuf {
    char *p;
    size_t len, cap;
};

static void tb_printf(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(struct tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void mb(char *out, size_t cap, long long n)
{
    snprintf(out, cap, "%.2f MB", (double)n / (1024.0 * 1024.0));
}

#define DOCTOR_EMPTY_BYTES (5u << 20)       /* under this there is nothing to judge */
#define DOCTOR_BIG_BYTES (10ll << 20)       /* an overhead ratio matters past 10 MB */
#define DOCTOR_CLIENT_BYTES (200u * 1024)   /* per connection, on average */
#define DOCTOR_MANY_SCRIPTS 1000

char *mem_doctor_report(const struct mem_overhead *mh)
{
    struct tbuf b = {NULL, 0, 0};
    char x[32], y[32];
    int issues = 0;

    if (mh->total_allocated < DOCTOR_EMPTY_BYTES) {
        tb_printf(&b,
                  "Hi Sam, this instance is empty or is using very little memory, so there is nothing for my "
                  "issue detector to look at. Fill it with some data and ask me again.\n");
        return b.p;
    }
    int big_peak = (double)mh->peak_allocated / (double)mh->total_allocated > 1.5;
    int high_frag = mh->total_frag > 1.4 && mh->total_frag_bytes > DOCTOR_BIG_BYTES;
    int high_alloc_frag = mh->allocator_ok && mh->allocator_frag > 1.1 && mh->allocator_frag_bytes > DOCTOR_BIG_BYTES;
    int high_alloc_rss = mh->allocator_ok && mh->allocator_rss > 1.1 && mh->allocator_rss_bytes > DOCTOR_BIG_BYTES;
    int high_proc_rss = mh->allocator_ok && mh->rss_extra > 1.1 && mh->rss_extra_bytes > DOCTOR_BIG_BYTES;
    long long nclients = mh->clients > 0 ? mh->clients : 1;
    int big_clients = mh->clients_normal / (size_t)nclients > DOCTOR_CLIENT_BYTES;
    int many_scripts = mh->si.cached_scripts > DOCTOR_MANY_SCRIPTS;
    issues = big_peak + high_frag + high_alloc_frag + high_alloc_rss + high_proc_rss + big_clients + many_scripts;

    if (!issues) {
        tb_printf(&b, "Hi Sam, I can't find any memory issue in your instance. "
                      "I can only account for what occurs on this base.\n");
        return b.p;
    }
    tb_printf(&b, "Sam, I found %d memory issue%s in this instance:\n\n", issues, issues > 1 ? "s" : "");
    if (big_peak) {
        mb(x, sizeof(x), (long long)mh->peak_allocated);
        mb(y, sizeof(y), (long long)mh->total_allocated);
        tb_printf(&b,
                  " * Peak memory: the peak (%s) is more than 150%% of the memory used now (%s). The allocator "
                  "keeps most pages it got during a peak, so the RSS and the fragmentation ratio stay high "
                  "afterwards; that is harmless, the pages are reused as data grows again. To hand them back "
                  "to the system now, try MEMORY PURGE; otherwise only a restart releases them.\n\n",
                  x, y);
    }
    if (high_frag) {
        mb(x, sizeof(x), mh->total_frag_bytes);
        tb_printf(&b,
                  " * High total RSS: the process RSS is %.2f times the memory allocated (%s more). A past "
                  "peak (see above) is the usual cause; otherwise the workload fragments the allocator's "
                  "pages. Allocator: %s.\n\n",
                  mh->total_frag, x, mem_allocator());
    }
    if (high_alloc_frag) {
        mb(x, sizeof(x), mh->allocator_frag_bytes);
        tb_printf(&b,
                  " * High allocator fragmentation: the allocator's active pages are %.2f times what they "
                  "hold (%s of free space inside used pages). This follows a peak, or a workload that frees "
                  "scattered small values; the space is reused by new writes of similar sizes.\n\n",
                  mh->allocator_frag, x);
    }
    if (high_alloc_rss) {
        mb(x, sizeof(x), mh->allocator_rss_bytes);
        tb_printf(&b,
                  " * High allocator RSS overhead: the allocator's resident pages are %.2f times its active "
                  "pages (%s of dirty pages not yet returned). This usually follows a peak; MEMORY PURGE "
                  "returns them to the system.\n\n",
                  mh->allocator_rss, x);
    }
    if (high_proc_rss) {
        mb(x, sizeof(x), mh->rss_extra_bytes);
        tb_printf(&b,
                  " * High process RSS overhead: the process RSS is %.2f times what the allocator has "
                  "resident (%s outside the allocator: thread stacks, the Lua heaps, libraries).\n\n",
                  mh->rss_extra, x);
    }
    if (big_clients) {
        mb(x, sizeof(x), (long long)mh->clients_normal);
        tb_printf(&b,
                  " * Big client buffers: the %lld connections hold %s of buffers, more than 200 KB each on "
                  "average. Slow pub/sub subscribers, very large replies or long pipelines make output and "
                  "query buffers grow; CLIENT LIST shows which connections (qbuf, omem, tot-mem).\n\n",
                  mh->clients, x);
    }
    if (many_scripts) {
        tb_printf(&b,
                  " * Many scripts: %lld scripts are cached (more than %d). Scripts built per call with "
                  "their values inside (instead of KEYS and ARGV) fill the cache until SCRIPT FLUSH; load "
                  "them once and call them with EVALSHA.\n\n",
                  mh->si.cached_scripts, DOCTOR_MANY_SCRIPTS);
    }
    tb_printf(&b, "That is all I can see, Sam.\n");
    return b.p;
}
