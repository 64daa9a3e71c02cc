/* net/worker.h - the worker threads: each owns an epoll loop, its
 * listening sockets (SO_REUSEPORT), its job queue and every client it
 * accepted, and runs commands to completion on its own thread.  Requests
 * across workers (CLIENT LIST/KILL, CONFIG SET side effects) go through the
 * owner's job queue (worker_post / worker_broadcast). */
#ifndef HK_NET_WORKER_H
#define HK_NET_WORKER_H

#include <pthread.h>
#include <stdatomic.h>

#include "../db/db.h"
#include "client.h"

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
struct adopt_req;
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
    /* net_adopt's connections, taken from the job queue, made clients at
     * the top of the loop (never inside a command or a lock wait, where
     * jobs also run): FIFO. */
    struct adopt_req *adopt_head, *adopt_tail;
    /* Written by other threads (worker_post, worker_broadcast): a cache
     * line of its own, apart from the fields this worker writes per
     * command.  (struct worker is 64-byte aligned: workers[] never shares a
     * line between two workers.) */
    _Alignas(64) pthread_mutex_t jlock;
    struct job *jobs, *jobs_tail;     /* MPSC FIFO: pushed and popped under jlock */
    _Alignas(64) struct worker_stats stats;
    unsigned expire_cursor;
    long long next_cron_ms;
    long long now_us;                 /* clock read at the end of the last command */
    struct dict *ps_maps[3];          /* cmd/pubsub.c: name -> this worker's subscribers */
    int tls_lfds[16];                 /* TLS listeners (tls-port), SO_REUSEPORT like lfds */
    int ntls_lfd;
    _Atomic int ktid;                 /* the thread's kernel id (INFO cpu reads its /proc stat); 0 before it runs */
};

extern struct worker *workers;
extern int nworkers;
extern _Thread_local struct worker *cur_worker;
extern atomic_int io_uring_workers;   /* workers batching I/O in io_uring (net/worker.c) */

/* Run fn(worker, arg) on every worker (inline on the caller's) and wait
 * for all of them.  Never call with a shard lock held. */
void worker_broadcast(void (*fn)(struct worker *, void *), void *arg);
/* Queue a job for worker w without waiting (fn runs on w's thread). */
void worker_post(struct worker *w, void (*fn)(struct worker *, void *), void *arg);

/* Make the connected socket fd a client of a worker (a replica's link to
 * its master: persist/replica.c), with flags added (CF_*); ssl: its TLS
 * connection, handshake done (net/tls.h), or NULL; ready(c, arg)
 * runs on that worker's thread once the client exists, before any of its
 * input is read; init (n bytes) is input read from fd already, run first.
 * The caller no longer uses fd. */
void net_adopt(int fd, void *ssl, unsigned flags, const char *init, size_t n, void (*ready)(struct client *, void *),
               void *arg);

/* Start-up and shutdown (server.c): start n workers (-1 on failure, with
 * the reason logged), wake every loop, wait for them to exit. */
int workers_start(int n);
void workers_wake_all(void);
void workers_join(void);

/* unixsocket / unixsocketperm (config rows in config/compat.tab; immutable,
 * set before workers_start): the Unix-domain socket every worker accepts
 * on (NULL or "": none) and its mode (0: as the umask leaves it).
 * workers_join() removes the socket file, as Redis does at shutdown. */
extern char *net_unixsocket;
extern int net_unixsocketperm;

/* Stats summed over workers (approximate while they run). */
void stats_sum(struct worker_stats *out);
void stats_reset(void);

#endif
