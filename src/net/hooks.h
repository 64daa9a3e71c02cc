/* net/hooks.h - the one interface through which the event loop (net/)
 * calls the layers above it.
 *
 * net/ reads sockets, parses requests, writes replies and runs each
 * worker's loop and cron; it knows nothing of commands, MULTI, pub/sub,
 * tracking, blocking or the AOF.  Those features hook in here instead:
 * cmd/ fills struct net_hooks once at start-up (cmd_net_hooks() in
 * cmd/loop.c, installed by server.c before the workers start) and
 * persist/aof.c arms the reply barrier while the AOF is on.
 *
 * Threads: net_hooks is written once, before any worker thread exists,
 * and only read afterwards.  The reply barrier (net_reply_barrier_on) is
 * an atomic flag flipped by the AOF layer; the function it guards is set
 * before the flag is first raised. */
#ifndef HK_NET_HOOKS_H
#define HK_NET_HOOKS_H

#include <stdatomic.h>
#include <stddef.h>

struct client;
struct worker;

struct net_hooks {
    /* Run the parsed command in c->argc / c->argv (locks, stats, reply).
     * Required. */
    void (*execute)(struct client *c);
    /* c is closing: drop what the features keep for it (a blocked
     * waiter, subscriptions, the MULTI queue, tracking state).  Runs on
     * c's worker before its socket is closed. */
    void (*client_gone)(struct client *c);
    /* Before any worker starts: n workers will run (per-worker tables of
     * the features). */
    void (*workers_init)(int n);
    /* On a worker's own thread when it starts / after its loop ends. */
    void (*thread_start)(struct worker *w);
    void (*thread_exit)(struct worker *w);
    /* Every loop turn, before epoll_wait: ms until the next deadline the
     * features keep for this worker's clients (blocked-command timeouts),
     * or -1 for none.  They handle what is due now inside the call. */
    long long (*next_timeout)(struct worker *w, long long now_ms);
    /* The worker's cron (every 1/hz s), after net's own work. */
    void (*cron)(struct worker *w);
    /* Bytes the features keep for c beyond its buffers (MULTI queue,
     * subscriptions, tracking): client_mem_usage() adds them. */
    size_t (*client_mem)(const struct client *c);
    /* Number of command-table rows (sizes the per-worker command stats). */
    int (*ncommands)(void);
    /* Whether the default user needs no password (protected mode then
     * refuses non-local connections, as Redis checks the default user's
     * nopass flag rather than requirepass). */
    int (*default_nopass)(void);
    /* tls-auth-clients-user CN: c's TLS handshake ended with a verified
     * client certificate whose subject CN is name (c's worker, before c
     * sends anything): authenticate c as that user if one may be. */
    void (*tls_cert_user)(struct client *c, const char *name, size_t len);
    /* A replica's link to its master (CF_MASTER): the loop has run what it
     * could of c's query buffer and is about to move it or read into it
     * (the stream's bytes applied since are fed to the history here). */
    void (*master_input_done)(struct client *c);
};
extern struct net_hooks net_hooks;
/* Install the hooks (start-up, before workers_start(); every member must
 * be set).  Until then net_hooks holds no-ops: nothing runs a command. */
void net_set_hooks(const struct net_hooks *h);

/* The reply barrier: while net_reply_barrier_on is set, the loop calls
 * net_reply_barrier() before replies leave (the AOF's group commit: no
 * reply before the writes it acknowledges are in the file, and fsynced
 * with appendfsync always).  One load when it is off (acquire: a plain
 * load on x86-64), which also orders the read of the function pointer. */
extern atomic_int net_reply_barrier_on;
extern void (*net_reply_barrier)(void);
static inline void net_before_reply(void)
{
    if (atomic_load_explicit(&net_reply_barrier_on, memory_order_acquire))
        net_reply_barrier();
}

#endif
