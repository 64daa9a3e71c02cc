/* loop.c - what the command layer does at the event loop's hook points
 * (net/hooks.h): one place that lists every feature with per-client or
 * per-worker state, so net/ includes none of them. */
#include "../cluster/cluster.h"
#include "acl.h"
#include "loop.h"
#include "repl.h"

#include "../db/rkeys.h"
#include "../ds/dict.h"
#include "../net/hooks.h"
#include "../persist/prop.h"
#include "../persist/repl.h"
#include "../persist/replica.h"
#include "blocking.h"
#include "cmd.h"
#include "evict.h"
#include "memstats.h"
#include "migrate.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "pubsub.h"
#include "tracking.h"

static void loop_client_gone(struct client *c)
{
    if (c->blocked)
        blocking_client_gone(c);
    if (c->flags & CF_PUBSUB)
        pubsub_client_gone(c);
    if (c->ms)
        multi_client_gone(c);
    if (c->trk)
        tracking_client_gone(c);
    if (c->flags & CF_POSTPONED)
        pause_client_gone(c);
    if (c->mon)
        monitor_client_gone(c);
    acl_client_gone(c);
    repl_client_gone(c);
    if (c->flags & CF_MASTER)
        replica_master_gone(c);
}

/* A replica's link to its master runs the stream through cmd/repl.c. */
static void loop_execute(struct client *c)
{
    if (__builtin_expect((c->flags & CF_MASTER) != 0, 0))
        repl_master_execute(c);
    else
        cmd_execute(c);
}

static void loop_workers_init(int n)
{
    blocking_init_workers(n);
    pubsub_init(n);
    pause_init_workers(n);
}

static void loop_thread_start(struct worker *w)
{
    (void)w;
    prop_thread_register(); /* this worker's change counter (persist/prop.h) */
}

static void loop_thread_exit(struct worker *w)
{
    (void)w;
    prop_thread_unregister();
    evict_thread_exit();
    migrate_thread_exit(); /* this worker's cached MIGRATE connections */
}

static long long loop_next_timeout(struct worker *w, long long now_ms)
{
    /* What this turn fed to the replication stream leaves now. */
    repl_kick();
    /* Timeouts of this worker's blocked clients, and the end of a client
     * pause when it holds postponed clients. */
    long long t = blocking_any(w) ? blocking_cron(w, now_ms) : -1;
    if (atomic_load_explicit(&pause_actions, memory_order_relaxed) || pause_postponed_clients()) {
        long long p = pause_next_timeout(w, now_ms);
        if (p >= 0 && (t < 0 || p < t))
            t = p;
    }
    return t;
}

static void loop_cron(struct worker *w)
{
    if (HK_UNLIKELY(cluster_on) && blocking_any(w))
        blocking_cluster_cron(w);
    /* Still over maxmemory with no command to do the work (EVICT_RUNNING,
     * or a CONFIG SET shrink): evict here, a tenth of the period at most. */
    if (__atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) > 0)
        evict_cron(100000 / (cfg.hz > 0 ? cfg.hz : 10));
    /* Client-side caching: invalidations of keys expired by the loop's
     * active expiry, and the tracking-table-max-keys limit. */
    tracking_cron(w);
    /* This worker's client buffers, for INFO memory / MEMORY STATS. */
    memstats_worker_cron(w);
    /* MIGRATE's cached target connections idle for 10 s (thread-local). */
    migrate_cron();
    /* FAILOVER's progress (worker 0). */
    if (w->id == 0)
        repl_failover_cron();
    /* A replica's ACKs and repl-timeout, on the worker holding the link. */
    if (atomic_load_explicit(&replica_gate, memory_order_relaxed))
        replica_cron(w);
    /* A writable replica's own keys whose TTL passed (worker 0). */
    if (w->id == 0)
        rkeys_cron();
}

static size_t loop_client_mem(const struct client *c)
{
    size_t n = 0;
    if (c->ms)
        n += multi_client_mem(c);
    /* Pub/sub names: the table plus each name's entry (at least one
     * 32-byte allocation), O(1). */
    for (int i = 0; i < 3; i++)
        if (c->ps_subs[i])
            n += dict_mem(c->ps_subs[i]) + dict_size(c->ps_subs[i]) * 32;
    if (c->trk)
        n += tracking_client_mem(c);
    return n;
}

void cmd_install_net_hooks(void)
{
    static const struct net_hooks h = {
        .execute = loop_execute,
        .master_input_done = replica_apply_flush,
        .client_gone = loop_client_gone,
        .workers_init = loop_workers_init,
        .thread_start = loop_thread_start,
        .thread_exit = loop_thread_exit,
        .next_timeout = loop_next_timeout,
        .cron = loop_cron,
        .client_mem = loop_client_mem,
        .ncommands = cmd_count,
        .default_nopass = acl_default_nopass,
        .tls_cert_user = acl_authenticate_cert,
    };
    net_set_hooks(&h);
}
