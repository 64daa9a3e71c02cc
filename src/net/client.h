/* net/client.h - the client (one connection) and what its worker does
 * with it.
 *
 * A client struct is read and written only by the worker that accepted it
 * (net/worker.c); other threads reach it through that worker's job queue.
 * Features above net/ (MULTI, pub/sub, tracking, blocking) keep their
 * per-client state behind the opaque pointers below and free it from the
 * client-gone hook (net/hooks.h). */
#ifndef HK_NET_CLIENT_H
#define HK_NET_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/reply.h"
#include "../proto/resp.h"

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
#define CF_MONITOR 0x100000      /* in MONITOR mode (cmd/monitor.h; state in c->mon) */
#define CF_POSTPONED 0x80000     /* its command waits unrun and unconsumed in qbuf (CLIENT PAUSE: cmd/pause.h) */
#define CF_ERR_COUNTED 0x200000
#define CF_MASTER 0x400000       /* this replica's link to its master: runs the stream, replies muted (persist/replica.h) */
#define CF_ASKING 0x1000000          /* ASKING: the next command may use an importing slot (cluster/cluster.h) */
#define CF_CLUSTER_READONLY 0x2000000 /* READONLY: reads of its master's slots served on this replica */
#define CF_HELD 0x800000         /* like CF_POSTPONED, but on no pause list: the master's stream waits for a busy script */  /* the error reply just written was counted already (a script passing on redis.call's error) */

struct worker;
struct cmd;
struct waiter;
struct dict;
struct acl_user;
struct repl_hello;

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
    int cl_tx_slot; /* cluster mode: the slot of the transaction queued so far (-1 none, -2 several) */
    int cl_recheck; /* cluster mode: 1 + the migrating slot whose keys cluster_check found here (0 none) */
    int authenticated;
    unsigned flags;
    char *name, *lib_name, *lib_ver;
    struct repl_hello *repl_hello; /* REPLCONF's settings before PSYNC (cmd/repl.c) */
    long long woff, aof_woff;      /* the replication / AOF offset its last write reached (WAIT, WAITAOF: cmd/repl.c) */
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

    struct waiter *blocked;             /* cmd/blocking.c, NULL if not blocked */
    struct client *resume_next;         /* worker's resume list */
    struct dict *ps_subs[3];            /* cmd/pubsub.c: channels, patterns, shard channels held */
    struct multi_state *ms;             /* cmd/multi.c: MULTI queue and WATCHed keys (NULL: never used) */
    struct tracking_client *trk;        /* cmd/tracking.c: tracking mode, redirect, prefixes (NULL: never used) */
    struct client *push_next;           /* worker's push list */
    struct reply *pushbuf;              /* pushes that arrived mid-command (client_push_target) */
    size_t cev_mem;                     /* net/client_evict.c: bytes this client was last counted at */
    struct client *pp_prev, *pp_next;   /* cmd/pause.c: its worker's postponed clients */
    struct monitor *mon;                /* cmd/monitor.c: MONITOR state (NULL: not a monitor) */
    struct acl_user *acl_user;          /* cmd/acl.c: its ACL user (a reference; NULL until its first command) */
    unsigned char acl_fast;             /* cmd/acl.c: its user may run everything: no ACL check */
    /* TLS (net/tls.h): the connection's SSL, NULL for plain TCP and Unix
     * clients (a TLS client is one with c->tls set); tls_flags: its
     * handshake and which readiness a read or write waits for (TLSF_* in
     * net/worker.c). */
    void *tls;
    unsigned tls_flags;
};

extern atomic_int connected_clients;
extern atomic_ullong next_client_id;

void client_close(struct client *c);
/* Drop c's pending output and close it at the end of this loop turn (CLIENT
 * KILL, client eviction, ACL changes); c's own worker only. */
void client_close_asap(struct client *c);
/* A blocked client was unblocked (its reply appended): the worker resumes
 * its pipelined input in its loop. Owner thread only. */
void client_unblocked(struct client *c);
void client_free_args(struct client *c);
/* Bytes c holds: the struct, its buffers and argv, and what the features
 * keep for it (net/hooks.h client_mem).  INFO, CLIENT LIST, MEMORY STATS,
 * maxmemory-clients. */
size_t client_mem_usage(const struct client *c);
/* Redis's notion of a local client: its peer address is exactly
 * 127.0.0.1 or ::1 (an IPv4-mapped ::ffff:127.0.0.1 too); other
 * 127.0.0.0/8 addresses are not local.  HotKV has no unix socket. */
int client_is_local(const struct client *c);
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

#endif
