/* repl.c - REPLCONF, PSYNC and ROLE: a replica's handshake with this
 * server as its master (the replication itself is persist/repl.c).
 *
 * A replica connects as a client, may AUTH, says REPLCONF listening-port /
 * ip-address / capa, then PSYNC replid offset.  PSYNC hands a duplicate of
 * the socket to the replication thread (repl_adopt) and closes this client
 * without a word: from then on only the replication thread talks to the
 * replica (docs/architecture.md, "Replication"). */
#include "repl.h"

#include <limits.h>
#include <stdatomic.h>

#include "../base/util.h"
#include "../net/worker.h"
#include "../persist/aof.h"
#include "../server.h"
#include "blocking.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../net/client.h"
#include "../net/tls.h"
#include "../db/db.h"
#include "../persist/repl.h"
#include "../persist/replica.h"
#include "../cluster/cluster.h"
#include "multi.h"
#include "pause.h"
#include "properr.h"
#include "../proto/reply.h"

static int word(const struct client *c, int i, const char *w)
{
    return c->argvlen[i] == strlen(w) && !strncasecmp(c->argv[i], w, c->argvlen[i]);
}

static struct repl_hello *hello(struct client *c)
{
    if (!c->repl_hello)
        c->repl_hello = hk_calloc(sizeof(struct repl_hello));
    return c->repl_hello;
}

void repl_client_gone(struct client *c)
{
    hk_free(c->repl_hello);
    c->repl_hello = NULL;
}

/* REPLCONF <option> <value> [<option> <value> ...] */
void replconf_command(struct client *c)
{
    if ((c->argc % 2) == 0) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        if (word(c, i, "listening-port")) {
            long long port;
            if (arg_ll(c, i + 1, &port) < 0)
                return;
            hello(c)->listening_port = (int)port;
        } else if (word(c, i, "ip-address")) {
            size_t n = c->argvlen[i + 1];
            if (n >= sizeof(((struct repl_hello *)0)->ip)) {
                reply_error(&c->out, "ERR REPLCONF ip-address provided by replica instance is too long");
                return;
            }
            memcpy(hello(c)->ip, c->argv[i + 1], n);
            hello(c)->ip[n] = 0;
        } else if (word(c, i, "capa")) {
            if (c->argvlen[i + 1] == 3 && !strncasecmp(c->argv[i + 1], "eof", 3))
                hello(c)->capa_eof = 1;
            else if (c->argvlen[i + 1] == 6 && !strncasecmp(c->argv[i + 1], "psync2", 6))
                hello(c)->capa_psync2 = 1;
            /* other capabilities: ignored, as Redis does */
        } else if (word(c, i, "getack")) {
            /* Our master asks where we are: REPLCONF ACK <offset> (the
             * offset before this command's own bytes, as Redis answers).
             * From anyone else: nothing, and no reply, as in Redis. */
            if (c->flags & CF_MASTER)
                replica_send_ack(c);
            return;
        } else if (word(c, i, "ack") || word(c, i, "fack")) {
            /* From a client that is not a replica of ours (ACKs of adopted
             * replicas go to the replication thread): nothing to do, and
             * no reply, as in Redis. */
            return;
        } else if (word(c, i, "rdb-only")) {
            /* redis-cli --rdb: the full sync's RDB, then the connection
             * ends (no stream). */
            long long v;
            if (arg_ll(c, i + 1, &v) < 0)
                return;
            if (v != 0 && v != 1) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
            hello(c)->rdb_only = (int)v;
        } else if (word(c, i, "rdb-filter-only")) {
            /* What the full sync's RDB includes: nothing but the aux
             * fields by default, and the functions if "functions" is in
             * the (space-separated) list: redis-cli --functions-rdb. */
            int req = REPL_REQ_EXCLUDE_DATA | REPL_REQ_EXCLUDE_FUNCTIONS;
            const char *p = c->argv[i + 1], *end = p + c->argvlen[i + 1];
            while (p < end) {
                while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                    p++;
                const char *w = p;
                while (p < end && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                    p++;
                if (p == w)
                    break;
                if (p - w == 9 && !strncasecmp(w, "functions", 9)) {
                    req &= ~REPL_REQ_EXCLUDE_FUNCTIONS;
                } else {
                    reply_errorf(&c->out, "ERR Unsupported rdb-filter-only option: %.*s", (int)(p - w), w);
                    return;
                }
            }
            hello(c)->req = req;
        } else {
            reply_errorf(&c->out, "ERR Unrecognized REPLCONF option: %.*s", (int)c->argvlen[i], c->argv[i]);
            return;
        }
    }
    reply_ok(&c->out);
}

/* SYNC: the pre-PSYNC full sync (redis-cli --rdb and --replica use it):
 * the payload with no +FULLRESYNC line, then the stream. */
void sync_command(struct client *c)
{
    hello(c)->old_sync = 1;
    psync_command(c);
}

/* PSYNC replicationid offset (and SYNC, through sync_command) */
void psync_command(struct client *c)
{
    long long offset;
    char idbuf[64];
    if (c->out.len > c->sent) {
        reply_error(&c->out, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    if (c->repl_hello && c->repl_hello->req && !c->repl_hello->capa_eof) {
        reply_error(&c->out, "ERR Filtered replica requires EOF capability");
        return;
    }
    /* PSYNC <replid> <offset> FAILOVER: our master (FAILOVER) becomes our
     * replica; we promote ourselves first, then answer as a master (its
     * history is our secondary one now: +CONTINUE). */
    if (c->argc > 3 && word(c, 3, "failover")) {
        char myid[41];
        log_msg(LL_NOTICE, "Failover request received for replid %.*s.", (int)(c->argvlen[1] > 40 ? 40 : c->argvlen[1]),
                c->argv[1]);
        if (!repl_is_replica()) {
            reply_error(&c->out, "ERR PSYNC FAILOVER can't be sent to a master.");
            return;
        }
        repl_replid(myid);
        if (c->argvlen[1] != 40 || memcmp(c->argv[1], myid, 40)) {
            reply_error(&c->out, "ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        replica_unset_master();
        log_msg(LL_NOTICE, "MASTER MODE enabled (failover request from 'id=%llu addr=%s')", (unsigned long long)c->id,
                c->addr);
    }
    /* A replica serves its own replicas only while it follows its master. */
    if (repl_is_replica() && !replica_link_up()) {
        reply_error(&c->out, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (c->argc < 3) { /* SYNC */
        strcpy(idbuf, "?");
        offset = -1;
    } else {
        if (c->argvlen[1] >= sizeof(idbuf)) {
            reply_error(&c->out, "ERR invalid replication id");
            return;
        }
        memcpy(idbuf, c->argv[1], c->argvlen[1]);
        idbuf[c->argvlen[1]] = 0;
        /* A bad offset is a full resync, as Redis reads it. */
        char *end;
        char num[32];
        size_t n = c->argvlen[2] < sizeof(num) - 1 ? c->argvlen[2] : sizeof(num) - 1;
        memcpy(num, c->argv[2], n);
        num[n] = 0;
        offset = strtoll(num, &end, 10);
        if (end == num || *end)
            offset = -1;
    }
    struct repl_hello h = {0};
    if (c->repl_hello)
        h = *c->repl_hello;
    if (!h.ip[0]) { /* the peer's address, without the port */
        const char *colon = strrchr(c->addr, ':');
        size_t al = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
        if (al >= sizeof(h.ip))
            al = sizeof(h.ip) - 1;
        memcpy(h.ip, c->addr, al);
        h.ip[al] = 0;
    }
    int fd = dup(c->fd);
    if (fd < 0) {
        reply_errorf(&c->out, "ERR could not take the connection: %s", strerror(errno));
        return;
    }
    char err[128];
    /* A TLS connection goes with its SSL: bytes OpenSSL holds for it move
     * into the connection's own memory first (net/tls.h). */
    if (c->tls)
        tls_conn_keep(c->tls);
    if (repl_adopt(fd, c->tls, &h, idbuf, offset, err, sizeof(err)) < 0) {
        close(fd);
        reply_error(&c->out, err);
        return;
    }
    c->tls = NULL; /* the replication thread's now: this client closes without it */
    /* The connection now belongs to the replication thread: this client
     * goes quietly (its descriptor closes, the socket stays open). */
    c->out.muted = 1;
    client_close_asap(c);
}

/* ROLE */
void role_command(struct client *c)
{
    char host[256];
    int port;
    const char *st;
    long long roff;
    if (replica_role(host, sizeof(host), &port, &st, &roff)) {
        reply_array(&c->out, 5);
        reply_bulk_cstr(&c->out, "slave");
        reply_bulk_cstr(&c->out, host);
        reply_int(&c->out, port);
        reply_bulk_cstr(&c->out, st);
        reply_int(&c->out, roff);
        return;
    }
    struct repl_role_entry e[64];
    int n;
    long long off = repl_role(e, 64, &n);
    reply_array(&c->out, 3);
    reply_bulk_cstr(&c->out, "master");
    reply_int(&c->out, off);
    reply_array(&c->out, n);
    for (int i = 0; i < n; i++) {
        reply_array(&c->out, 3);
        reply_bulk_cstr(&c->out, e[i].ip);
        reply_bulk_ll(&c->out, e[i].port);
        reply_bulk_ll(&c->out, e[i].ack);
    }
}

/* ------------------------------------------------------ WAIT, WAITAOF ---
 * A client's woff / aof_woff: the replication offset (persist/repl.h's
 * repl_tl_woff) and the AOF position (aof_fed_bytes) its last write
 * reached, recorded after each call by the dispatcher (wait_note_write).
 * WAIT counts the online replicas whose ACK reached woff; WAITAOF whether
 * the AOF's fsynced position reached aof_woff and the replicas whose FACK
 * reached woff.  Not enough yet: the client blocks as a condition waiter
 * (cmd/blocking.h, on its own worker), the replication thread sends
 * REPLCONF GETACK * and, while clients wait, posts blocking_check_cb to
 * the workers that have some when an ACK comes or the AOF syncs
 * (wait_wake).  In MULTI and scripts (no blocking) the counts come at
 * once. */
#define WAIT_MAX_WORKERS 1024 /* the threads setting's maximum */
static atomic_int wait_on_worker[WAIT_MAX_WORKERS]; /* written by the owner, read by the replication thread */

void wait_note_write(struct client *c, int dirtied)
{
    unsigned long long w = repl_tl_woff;
    if (w) {
        if ((long long)w > c->woff)
            c->woff = (long long)w;
        repl_tl_woff = 0;
    }
    if (dirtied && atomic_load_explicit(&aof_active, memory_order_relaxed))
        c->aof_woff = (long long)atomic_load_explicit(&aof_fed_bytes, memory_order_acquire);
}

/* The replication thread: wake the workers with waiting clients. */
static void wait_wake(void)
{
    for (int i = 0; i < nworkers && i < WAIT_MAX_WORKERS; i++)
        if (atomic_load_explicit(&wait_on_worker[i], memory_order_relaxed) > 0)
            worker_post(&workers[i], blocking_check_cb, NULL);
}

/* The waiter's arguments. */
enum { WA_WOFF, WA_NUMREPLICAS, WA_AOF, WA_NUMLOCAL, WA_AOF_WOFF };

static int aof_local_acked(long long aof_woff)
{
    if (!__atomic_load_n(&cfg.appendonly, __ATOMIC_RELAXED) || !atomic_load(&aof_active))
        return 0;
    return (long long)atomic_load_explicit(&aof_synced_bytes, memory_order_acquire) >= aof_woff;
}

static int wait_check(struct client *c, const long long *a, int timed_out)
{
    if (!a[WA_AOF]) {
        int n = repl_count_acks(a[WA_WOFF], 0);
        if (n < a[WA_NUMREPLICAS] && !timed_out)
            return 0;
        reply_int(&c->out, n);
        return 1;
    }
    if (a[WA_NUMLOCAL] && !__atomic_load_n(&cfg.appendonly, __ATOMIC_RELAXED)) {
        /* appendonly turned off while it waited (as Redis). */
        reply_error(&c->out, "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return 1;
    }
    int local = aof_local_acked(a[WA_AOF_WOFF]);
    int n = repl_count_acks(a[WA_WOFF], 1);
    if ((local < a[WA_NUMLOCAL] || n < a[WA_NUMREPLICAS]) && !timed_out)
        return 0;
    reply_array(&c->out, 2);
    reply_int(&c->out, local);
    reply_int(&c->out, n);
    return 1;
}

static void wait_ended(struct client *c, const long long *a)
{
    (void)a;
    atomic_fetch_sub(&wait_on_worker[c->w->id], 1);
    atomic_fetch_sub(&repl_wait_clients, 1);
}

static const struct block_cb wait_cb = {wait_check, wait_ended};

/* Answer now if the condition holds or c cannot block, else block c. */
static void wait_or_block(struct client *c, const long long *a, long long deadline)
{
    if (wait_check(c, a, 0))
        return;
    if ((c->flags & CF_DENY_BLOCKING) || !c->w || c->w->id >= WAIT_MAX_WORKERS) {
        wait_check(c, a, 1);
        return;
    }
    if (!__atomic_load_n(&repl_wait_wake, __ATOMIC_ACQUIRE))
        __atomic_store_n(&repl_wait_wake, wait_wake, __ATOMIC_RELEASE);
    block_on_cb(c, &wait_cb, a, deadline);
    if (!c->blocked)
        return;
    atomic_fetch_add(&wait_on_worker[c->w->id], 1);
    atomic_fetch_add(&repl_wait_clients, 1);
    atomic_fetch_add(&repl_wait_gen, 1); /* the replication thread checks once more */
    repl_request_getack();
}

/* A timeout in milliseconds (0: none) as an absolute deadline (Redis's
 * getTimeoutFromObjectOrReply with UNIT_MILLISECONDS). */
static int wait_timeout(struct client *c, int i, long long *deadline)
{
    long long t;
    if (!str_to_ll(c->argv[i], c->argvlen[i], &t)) {
        reply_error(&c->out, "ERR timeout is not an integer or out of range");
        return -1;
    }
    if (t < 0) {
        reply_error(&c->out, "ERR timeout is negative");
        return -1;
    }
    if (t > 0) {
        long long now = time_ms();
        if (t > LLONG_MAX - now) {
            reply_error(&c->out, "ERR timeout is out of range");
            return -1;
        }
        t += now;
    }
    *deadline = t;
    return 0;
}

/* WAIT numreplicas timeout */
void wait_command(struct client *c)
{
    if (repl_is_replica()) {
        reply_error(&c->out, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
                             "if a replica is configured to be writable (which is not the default) writes to "
                             "replicas are just local and are not propagated.");
        return;
    }
    long long num, deadline;
    if (arg_ll(c, 1, &num) < 0 || wait_timeout(c, 2, &deadline) < 0)
        return;
    long long a[BLOCK_CB_ARGS] = {0};
    a[WA_WOFF] = c->woff;
    a[WA_NUMREPLICAS] = num;
    wait_or_block(c, a, deadline);
}

/* WAITAOF numlocal numreplicas timeout */
void waitaof_command(struct client *c)
{
    long long numlocal, num, deadline;
    if (arg_ll(c, 1, &numlocal) < 0)
        return;
    if (numlocal < 0 || numlocal > 1) {
        reply_error(&c->out, "ERR value is out of range, value must between 0 and 1");
        return;
    }
    if (arg_ll(c, 2, &num) < 0)
        return;
    if (num < 0) {
        reply_error(&c->out, "ERR value is out of range, must be positive");
        return;
    }
    if (wait_timeout(c, 3, &deadline) < 0)
        return;
    if (repl_is_replica()) {
        reply_error(&c->out, "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
                             "replicas are just local and are not propagated.");
        return;
    }
    if (numlocal && !__atomic_load_n(&cfg.appendonly, __ATOMIC_RELAXED)) {
        reply_error(&c->out, "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return;
    }
    long long a[BLOCK_CB_ARGS] = {0};
    a[WA_WOFF] = c->woff;
    a[WA_NUMREPLICAS] = num;
    a[WA_AOF] = 1;
    a[WA_NUMLOCAL] = numlocal;
    a[WA_AOF_WOFF] = c->aof_woff;
    wait_or_block(c, a, deadline);
}

/* ------------------------------------------------------------ FAILOVER ---
 * Redis 6.2's coordinated failover.  FAILOVER pauses writes (a pause of
 * its own: pause_failover_writes) and waits (waiting-for-sync) until the
 * target, or any replica, has acknowledged every byte of the stream; then
 * this server becomes a replica of it (failover-in-progress) and its
 * first PSYNC carries FAILOVER, on which the target promotes itself.  The
 * PSYNC's answer ends it (writes resume, now refused as a replica's), a
 * failed attempt or TIMEOUT without FORCE aborts it (a server that had
 * demoted itself becomes a master again).  Worker 0's cron drives it;
 * the state is under fo_mu, INFO reads repl_failover_state. */
static pthread_mutex_t fo_mu = PTHREAD_MUTEX_INITIALIZER;
static char fo_host[256];
static int fo_port, fo_force, fo_has_target;
static long long fo_end_ms; /* 0: no timeout */

/* fo_mu held. */
static void fo_clear(void)
{
    fo_host[0] = 0;
    fo_port = fo_force = fo_has_target = 0;
    fo_end_ms = 0;
    atomic_store(&repl_failover_state, FO_NONE);
    pause_failover_writes(0);
}

/* fo_mu held. */
static void fo_abort(const char *why)
{
    int st = atomic_load(&repl_failover_state);
    if (st == FO_NONE)
        return;
    if (fo_has_target)
        log_msg(LL_NOTICE, "FAILOVER to %s:%d aborted: %s", fo_host, fo_port, why);
    else
        log_msg(LL_NOTICE, "FAILOVER to any replica aborted: %s", why);
    if (st == FO_IN_PROGRESS)
        replica_unset_master();
    fo_clear();
}

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] */
void failover_command(struct client *c)
{
    if (cluster_on) {
        reply_error(&c->out, "ERR FAILOVER not allowed in cluster mode.");
        return;
    }
    if (c->argc == 2 && word(c, 1, "abort")) {
        pthread_mutex_lock(&fo_mu);
        if (atomic_load(&repl_failover_state) == FO_NONE) {
            pthread_mutex_unlock(&fo_mu);
            reply_error(&c->out, "ERR No failover in progress.");
            return;
        }
        fo_abort("Failover manually aborted");
        pthread_mutex_unlock(&fo_mu);
        reply_ok(&c->out);
        return;
    }
    long long timeout = 0, port = 0;
    int force = 0, host_i = 0;
    for (int j = 1; j < c->argc; j++) {
        if (word(c, j, "timeout") && j + 1 < c->argc && timeout == 0) {
            if (arg_ll(c, j + 1, &timeout) < 0)
                return;
            if (timeout <= 0) {
                reply_error(&c->out, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            j++;
        } else if (word(c, j, "to") && j + 2 < c->argc && !host_i) {
            if (arg_ll(c, j + 2, &port) < 0)
                return;
            host_i = j + 1;
            j += 2;
        } else if (word(c, j, "force") && !force) {
            force = 1;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    pthread_mutex_lock(&fo_mu);
    const char *err = NULL;
    long long ack = 0;
    char host[256] = "";
    if (host_i) {
        size_t hl = c->argvlen[host_i] < sizeof(host) - 1 ? c->argvlen[host_i] : sizeof(host) - 1;
        memcpy(host, c->argv[host_i], hl);
        host[hl] = 0;
    }
    if (atomic_load(&repl_failover_state) != FO_NONE)
        err = "ERR FAILOVER already in progress.";
    else if (repl_is_replica())
        err = "ERR FAILOVER is not valid when server is a replica.";
    else if (repl_replica_count() == 0)
        err = "ERR FAILOVER requires connected replicas.";
    else if (force && (!timeout || !host_i))
        err = "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
    else if (host_i) {
        int st = repl_replica_state(host, (int)port, &ack);
        if (st < 0)
            err = "ERR FAILOVER target HOST and PORT is not a replica.";
        else if (st == 0)
            err = "ERR FAILOVER target replica is not online.";
    }
    if (err) {
        pthread_mutex_unlock(&fo_mu);
        reply_error(&c->out, err);
        return;
    }
    if (host_i) {
        snprintf(fo_host, sizeof(fo_host), "%s", host);
        fo_port = (int)port;
        fo_has_target = 1;
        log_msg(LL_NOTICE, "FAILOVER requested to %s:%lld.", host, port);
    } else {
        log_msg(LL_NOTICE, "FAILOVER requested to any replica.");
    }
    fo_end_ms = timeout ? time_ms() + timeout : 0;
    fo_force = force;
    atomic_store(&repl_failover_state, FO_WAIT_SYNC);
    pause_failover_writes(1);
    pthread_mutex_unlock(&fo_mu);
    reply_ok(&c->out);
}

/* A new master is followed: the clients blocked in a command are told,
 * as Redis does (asynchronous: REPLICAOF may run inside EXEC with slot
 * locks held, where no worker may be waited for). */
void unblock_everywhere(void)
{
    for (int i = 0; i < nworkers; i++)
        worker_post(&workers[i], blocking_unblock_all, NULL);
}

/* fo_mu held: demote to a replica of the target. */
static void fo_go(const char *why)
{
    atomic_store(&repl_failover_state, FO_IN_PROGRESS);
    log_msg(LL_NOTICE, "%s", why);
    replica_set_master_failover(fo_host, fo_port);
    unblock_everywhere();
}

void repl_failover_cron(void)
{
    if (atomic_load_explicit(&repl_failover_state, memory_order_relaxed) == FO_NONE)
        return;
    pthread_mutex_lock(&fo_mu);
    int st = atomic_load(&repl_failover_state);
    long long now = time_ms();
    char why[400];
    if (st == FO_WAIT_SYNC) {
        if (fo_end_ms && now >= fo_end_ms) {
            if (fo_force) {
                snprintf(why, sizeof(why), "FAILOVER to %s:%d time out exceeded, failing over.", fo_host, fo_port);
                fo_go(why);
            } else {
                fo_abort("Replica never caught up before timeout");
            }
        } else {
            long long off = repl_offset(NULL), ack = 0;
            int synced = 0;
            if (fo_has_target) {
                synced = repl_replica_state(fo_host, fo_port, &ack) == 1 && ack >= off;
            } else {
                struct repl_role_entry e[64];
                int n = 0;
                repl_role(e, 64, &n);
                for (int i = 0; i < n && !synced; i++) {
                    if (e[i].ack >= off) {
                        snprintf(fo_host, sizeof(fo_host), "%s", e[i].ip);
                        fo_port = e[i].port;
                        fo_has_target = synced = 1;
                    }
                }
            }
            if (synced) {
                snprintf(why, sizeof(why), "Failover target %s:%d is synced, failing over.", fo_host, fo_port);
                fo_go(why);
            }
        }
    } else if (st == FO_IN_PROGRESS) {
        int o = replica_failover_outcome();
        if (o > 0) {
            log_msg(LL_NOTICE, "Failover to %s:%d completed.", fo_host, fo_port);
            fo_clear();
        } else if (o < 0) {
            fo_abort("Failover target rejected psync request");
        }
    }
    pthread_mutex_unlock(&fo_mu);
}

/* REPLICAOF host port | NO ONE, and SLAVEOF. */
void replicaof_command(struct client *c)
{
    if (cluster_on) {
        reply_error(&c->out, "ERR REPLICAOF not allowed in cluster mode.");
        return;
    }
    if (atomic_load(&repl_failover_state) != FO_NONE) {
        reply_error(&c->out, "ERR REPLICAOF not allowed while failing over.");
        return;
    }
    if (word(c, 1, "no") && word(c, 2, "one")) {
        char host[256];
        int port;
        if (replica_master(host, sizeof(host), &port)) {
            replica_unset_master();
            log_msg(LL_NOTICE, "MASTER MODE enabled (user request from 'id=%llu addr=%s')", (unsigned long long)c->id,
                    c->addr);
        }
        reply_ok(&c->out);
        return;
    }
    long long port;
    if (arg_ll(c, 2, &port) < 0)
        return;
    if (port < 0 || port > 65535) {
        reply_error(&c->out, "ERR Invalid master port");
        return;
    }
    char host[256];
    size_t hl = c->argvlen[1] < sizeof(host) - 1 ? c->argvlen[1] : sizeof(host) - 1;
    memcpy(host, c->argv[1], hl);
    host[hl] = 0;
    if (replica_set_master(host, (int)port) == 1) {
        log_msg(LL_NOTICE, "REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        reply_status(&c->out, "OK Already connected to specified master");
        return;
    }
    log_msg(LL_NOTICE, "REPLICAOF %s:%d enabled (user request from 'id=%llu addr=%s')", host, (int)port,
            (unsigned long long)c->id, c->addr);
    unblock_everywhere();
    reply_ok(&c->out);
}

void repl_master_execute(struct client *c)
{
    /* A script past busy-reply-threshold: the stream waits, unconsumed
     * (it would get BUSY and be lost); replica_cron resumes it. */
    if (atomic_load_explicit(&script_busy, memory_order_relaxed)) {
        c->flags |= CF_HELD;
        return;
    }
    if (!replica_apply_begin(c)) {
        /* Not (or no longer) the link: REPLICAOF replaced it. */
        c->out.muted = 1;
        client_close_asap(c);
        return;
    }
    db_master_apply = 1;
    unsigned errs = c->out.muted_errors;
    const struct cmd *last = c->last_cmd;
    c->last_cmd = NULL;
    cmd_execute(c);
    db_master_apply = 0;
    /* The link is muted: a failing command shows in the dropped-error
     * count (propagation-error-behavior, cmd/properr.h). */
    if (HK_UNLIKELY(c->out.muted_errors != errs))
        propagation_error(c, 0, reply_muted_error, strlen(reply_muted_error), c->last_cmd ? c->last_cmd->name : NULL);
    if (!c->last_cmd)
        c->last_cmd = last;
    /* The bytes of a command that ran (a paused one runs later; one that
     * closed the link, a disk error, never does). */
    size_t n = c->flags & (CF_POSTPONED | CF_CLOSE_ASAP) ? 0 : c->parser.consumed;
    replica_apply_end(c, c->qbuf + c->qpos, n, c->ms && multi_in_progress(c));
}
