/* replica.c - replication, the replica side; see replica.h.
 *
 * Link states (Redis's names, as ROLE shows them): connect (a master is
 * set, the thread will dial), connecting (dialled), handshake (PING ..
 * PSYNC), sync (receiving / loading the RDB), connected (the stream runs
 * on a worker).  The link thread sleeps on a condition variable while the
 * link is connected or no master is set; it dials again a second after a
 * failure or a lost link.  Every change of master bumps gen, and a step of
 * the thread whose gen is stale gives up. */
#include "replica.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/rkeys.h"
#include "../net/client.h"
#include "../net/tls.h"
#include "../net/worker.h"
#include "../proto/reply.h"
#include "../server.h"
#include "aof.h"
#include "rdb.h"
#include "repl.h"
#include "resp_enc.h"
#include "snapshot.h"

enum { RS_NONE, RS_CONNECT, RS_CONNECTING, RS_HANDSHAKE, RS_SYNC, RS_CONNECTED };

atomic_int replica_gate;

/* ------------------------------------------------------------ lmu --- */
static pthread_mutex_t lmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lcv = PTHREAD_COND_INITIALIZER;
static char m_host[256];
static int m_port;
static int state = RS_NONE;
static unsigned gen;
static struct client *mc; /* the link's client (its worker's; here for REPLICAOF to find it) */
static struct worker *mw;
static uint64_t mc_id;
static long long down_since_ms; /* 0: never up */
static int ever_up;             /* the link to this master was up once (reset by a new master) */
static long long sync_total = -1, sync_read, sync_last_io_ms;
static int stopping;
static pthread_t tid;
static int thread_on;
static atomic_llong last_io_ms; /* the master's last bytes (the stream's worker writes it) */
/* FAILOVER: the link of generation fo_gen asks PSYNC ... FAILOVER (the
 * target promotes itself); fo_outcome then 1 accepted, -1 failed. */
static unsigned fo_gen;
static int fo_pending, fo_outcome;
static int link_fd = -1;        /* the socket the link thread is using (replica_stop shuts it down) */

/* --------------------------------------------------------- apply_mu --- */
static pthread_mutex_t apply_mu = PTHREAD_MUTEX_INITIALIZER;
/* The link allowed to apply: set by link_ready, cleared by REPLICAOF and
 * the link's end.  Atomic, not under apply_mu: REPLICAOF may run inside
 * EXEC holding slot locks, and apply_mu comes before those. */
static _Atomic(struct client *) apply_client;
/* The history the command being applied goes to (repl_hist_gen at
 * replica_apply_begin): a command that raced with REPLICAOF is not fed
 * into the next history. */
static unsigned apply_gen;
/* A transaction of the master's being applied: its bytes.  Worker 0's
 * (the link always lives there). */
static char *txb;
static size_t txlen, txcap;
/* FACK (WAITAOF on our master): with the AOF on, (offset reached, AOF
 * bytes fed then) after each applied command that fed the AOF, oldest
 * first; an ACK reports the furthest offset whose bytes are fsynced.
 * Worker 0's. */
#define FACK_RING 1024
static struct {
    long long off;
    unsigned long long aofb;
} fring[FACK_RING];
static int fhead, fcount;
static long long fack;

static _Thread_local int apply_depth;
static int stream_db; /* apply_mu */

void replica_apply_lock(void)
{
    if (apply_depth++ == 0)
        pthread_mutex_lock(&apply_mu);
}

int replica_apply_trylock(void)
{
    if (apply_depth) {
        apply_depth++;
        return 1;
    }
    if (pthread_mutex_trylock(&apply_mu) != 0)
        return 0;
    apply_depth = 1;
    return 1;
}

void replica_apply_unlock(void)
{
    if (--apply_depth == 0)
        pthread_mutex_unlock(&apply_mu);
}

int replica_stream_db(void)
{
    return stream_db;
}

void replica_restore_stream_db(int db)
{
    replica_apply_lock();
    stream_db = db;
    replica_apply_unlock();
}

static const char *state_name(int s)
{
    switch (s) {
    case RS_CONNECT: return "connect";
    case RS_CONNECTING: return "connecting";
    case RS_HANDSHAKE: return "handshake";
    case RS_SYNC: return "sync";
    case RS_CONNECTED: return "connected";
    default: return "none";
    }
}

/* The link is down (replica-serve-stale-data decides what clients get). */
static void gate_set(int bits, int on)
{
    if (on)
        atomic_fetch_or(&replica_gate, bits);
    else
        atomic_fetch_and(&replica_gate, ~bits);
}

/* Close the link's client on its worker (REPLICAOF elsewhere, NO ONE). */
static void close_job(struct worker *w, void *arg)
{
    (void)w;
    uint64_t id = (uint64_t)(uintptr_t)arg;
    pthread_mutex_lock(&lmu);
    struct client *c = mc && mc_id == id ? mc : NULL;
    pthread_mutex_unlock(&lmu);
    if (c)
        client_close_asap(c);
}

/* lmu held: forget the link's client (it closes on its worker). */
static void drop_link_locked(void)
{
    if (link_fd >= 0)
        shutdown(link_fd, SHUT_RDWR); /* a handshake or transfer in progress ends */
    if (mc && mw)
        worker_post(mw, close_job, (void *)(uintptr_t)mc_id);
}

int replica_set_master_failover(const char *host, int port)
{
    int rc = replica_set_master(host, port);
    pthread_mutex_lock(&lmu);
    fo_gen = gen;
    fo_pending = 1;
    fo_outcome = 0;
    pthread_mutex_unlock(&lmu);
    return rc;
}

int replica_failover_outcome(void)
{
    pthread_mutex_lock(&lmu);
    int o = fo_outcome;
    pthread_mutex_unlock(&lmu);
    return o;
}

/* The attempt of generation g ended (1 PSYNC accepted, -1 failed): a
 * FAILOVER waiting on it learns how. */
static void fo_done(unsigned g, int outcome)
{
    pthread_mutex_lock(&lmu);
    if (fo_pending && fo_gen == g) {
        fo_pending = 0;
        fo_outcome = outcome;
    }
    pthread_mutex_unlock(&lmu);
}

static int same_master_locked(const char *host, int port)
{
    return state != RS_NONE && !strcmp(host, m_host) && port == m_port;
}

int replica_set_master(const char *host, int port)
{
    pthread_mutex_lock(&lmu);
    int same = same_master_locked(host, port), was_master = state == RS_NONE;
    pthread_mutex_unlock(&lmu);
    if (same)
        return 1;
    /* The role first, then the link thread may start: it can finish the
     * handshake and hand the stream to a worker before this thread runs
     * again (a loaded host, the woken thread preempting this one).  A
     * stream applied while the role still said master was also
     * propagated as a master's own writes, counted twice in our history:
     * the offset ran ahead of the master's for good. */
    gate_set(RG_REPLICA | RG_LINK_DOWN, 1);
    atomic_fetch_or(&db_expire_paused, DB_EXPIRE_PAUSED_REPLICA);
    rkeys_enable(1); /* keys clients give a TTL here expire here (db/rkeys.h) */
    repl_set_role_replica(1);
    /* Our replicas resync with us (they learn the new history). */
    repl_drop_replicas();
    pthread_mutex_lock(&lmu);
    if (same_master_locked(host, port)) { /* a concurrent REPLICAOF won */
        pthread_mutex_unlock(&lmu);
        return 1;
    }
    drop_link_locked();
    atomic_store(&apply_client, NULL);
    snprintf(m_host, sizeof(m_host), "%s", host);
    m_port = port;
    state = RS_CONNECT;
    gen++;
    ever_up = 0;
    pthread_cond_broadcast(&lcv);
    pthread_mutex_unlock(&lmu);
    log_msg(LL_NOTICE, "%s to %s:%d", was_master ? "Connecting" : "Changing master", host, port);
    return 0;
}

void replica_unset_master(void)
{
    pthread_mutex_lock(&lmu);
    if (state == RS_NONE) {
        pthread_mutex_unlock(&lmu);
        return;
    }
    drop_link_locked();
    atomic_store(&apply_client, NULL);
    state = RS_NONE;
    m_host[0] = 0;
    m_port = 0;
    gen++;
    down_since_ms = 0;
    pthread_cond_broadcast(&lcv);
    pthread_mutex_unlock(&lmu);
    /* A new history from here, the master's kept as the secondary one:
     * the other replicas of our old master continue from us. */
    repl_history_shift();
    repl_set_role_replica(0);
    rkeys_enable(0);
    atomic_fetch_and(&db_expire_paused, ~DB_EXPIRE_PAUSED_REPLICA);
    gate_set(RG_REPLICA | RG_LINK_DOWN | RG_LOADING, 0);
    log_msg(LL_NOTICE, "MASTER MODE enabled");
}

int replica_master(char *host, size_t cap, int *port)
{
    pthread_mutex_lock(&lmu);
    int on = state != RS_NONE;
    if (on) {
        snprintf(host, cap, "%s", m_host);
        *port = m_port;
    }
    pthread_mutex_unlock(&lmu);
    return on;
}

int replica_link_up(void)
{
    pthread_mutex_lock(&lmu);
    int up = state == RS_CONNECTED;
    pthread_mutex_unlock(&lmu);
    return up;
}

/* ------------------------------------------------------ the link thread --- */
struct rd {
    int fd;
    void *ssl; /* tls-replication: the link's TLS connection (net/tls.h) */
    char buf[16 * 1024];
    size_t pos, len;
};

/* Still the link we are making (the master did not change)? */
static int current(unsigned g)
{
    pthread_mutex_lock(&lmu);
    int ok = g == gen && !stopping;
    pthread_mutex_unlock(&lmu);
    return ok;
}

static void set_state(unsigned g, int s)
{
    pthread_mutex_lock(&lmu);
    if (g == gen)
        state = s;
    pthread_mutex_unlock(&lmu);
}

static int fill(struct rd *r)
{
    if (r->pos == r->len)
        r->pos = r->len = 0;
    for (;;) {
        ssize_t n;
        if (r->ssl) {
            /* A blocking socket: "would block" is SO_RCVTIMEO's timeout. */
            int want = 0;
            errno = 0;
            n = tls_conn_read(r->ssl, r->buf + r->len, sizeof(r->buf) - r->len, &want);
            if (n == 0)
                errno = EAGAIN;
            else if (n < 0 && !errno)
                errno = ECONNRESET;
            if (n <= 0)
                return -1;
        } else {
            n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, 0);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        atomic_fetch_add_explicit(&repl_net_in, (unsigned long long)n, memory_order_relaxed);
        r->len += (size_t)n;
        return 0;
    }
}

/* One line without its CRLF into out (cut at cap - 1): 0, or -1 (closed,
 * timed out: SO_RCVTIMEO is repl-timeout). */
static int read_line(struct rd *r, char *out, size_t cap)
{
    size_t k = 0;
    for (;;) {
        if (r->pos == r->len && fill(r) < 0)
            return -1;
        char ch = r->buf[r->pos++];
        if (ch == '\n')
            break;
        if (k + 1 < cap)
            out[k++] = ch;
    }
    if (k && out[k - 1] == '\r')
        k--;
    out[k] = 0;
    return 0;
}

/* All of buf to the master (the socket blocks, up to SO_SNDTIMEO). */
static int send_all(struct rd *r, const char *buf, size_t n)
{
    if (!r->ssl)
        return repl_send_all(r->fd, buf, n);
    while (n) {
        int want = 0;
        errno = 0;
        ssize_t w = tls_conn_write(r->ssl, buf, n, &want);
        if (w <= 0) {
            if (!errno)
                errno = w == 0 ? EAGAIN : ECONNRESET;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_cmd(struct rd *r, int argc, const char *const *argv)
{
    size_t lens[8];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    size_t n = cmd_bytes(argc, lens);
    char *b = hk_malloc(n);
    put_cmd(b, argc, argv, lens);
    int rc = send_all(r, b, n);
    hk_free(b);
    return rc;
}

/* A command and its one-line reply (empty lines, the master's keepalive,
 * are skipped). */
static int ask(struct rd *r, int argc, const char *const *argv, char *reply, size_t cap)
{
    if (send_cmd(r, argc, argv) < 0)
        return -1;
    do {
        if (read_line(r, reply, cap) < 0)
            return -1;
    } while (!reply[0]);
    return 0;
}

static int dial(const char *host, int port, int timeout_ms)
{
    struct addrinfo hints, *res = NULL;
    char ps[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0 || !res) {
        errno = EHOSTUNREACH;
        return -1;
    }
    /* bind-source-addr: the link leaves from that address. */
    struct addrinfo *src = NULL;
    const char *from = cfg.bind_source_addr;
    if (from && *from) {
        struct addrinfo sh;
        memset(&sh, 0, sizeof(sh));
        sh.ai_family = AF_UNSPEC;
        sh.ai_socktype = SOCK_STREAM;
        sh.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
        if (getaddrinfo(from, NULL, &sh, &src) != 0 || !src) {
            freeaddrinfo(res);
            errno = EADDRNOTAVAIL;
            return -1;
        }
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        struct addrinfo *s = src;
        while (s && s->ai_family != a->ai_family)
            s = s->ai_next;
        if (src && !s)
            continue; /* no source address of this family */
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        if (s && bind(fd, s->ai_addr, s->ai_addrlen) < 0) {
            int e = errno;
            close(fd);
            errno = e;
            fd = -1;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd p = {fd, POLLOUT, 0};
            int err = 0;
            socklen_t el = sizeof(err);
            if (poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && !err)
                break;
            errno = err ? err : ETIMEDOUT;
        }
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    freeaddrinfo(res);
    if (src)
        freeaddrinfo(src);
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* Where a full sync's payload goes: a file (repl-diskless-load disabled)
 * or memory (on-empty-db with an empty dataset, swapdb). */
struct sink {
    int fd;           /* -1: memory */
    char *mem;
    size_t len, cap;
};

static int sink_put(struct sink *k, const char *p, size_t n)
{
    if (k->fd >= 0)
        return write(k->fd, p, n) == (ssize_t)n ? 0 : -1;
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap : 1 << 20;
        while (cap < k->len + n)
            cap *= 2;
        k->mem = hk_realloc(k->mem, cap);
        k->cap = cap;
    }
    memcpy(k->mem + k->len, p, n);
    k->len += n;
    return 0;
}

/* The RDB of a full sync into the sink: "$EOF:<mark>" (diskless: until
 * the 40 mark bytes come again) or "$<size>".  0 / -1 (logged). */
static int receive_rdb(struct rd *r, unsigned g, struct sink *k)
{
    char line[256];
    do {
        if (read_line(r, line, sizeof(line)) < 0) {
            log_msg(LL_WARNING, "I/O error reading bulk count from MASTER: %s", strerror(errno));
            return -1;
        }
    } while (!line[0]);
    if (line[0] == '-') {
        log_msg(LL_WARNING, "MASTER aborted replication with an error: %s", line + 1);
        return -1;
    }
    if (line[0] != '$') {
        log_msg(LL_WARNING, "Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", line);
        return -1;
    }
    char mark[41] = {0};
    long long size = -1;
    if (!strncmp(line + 1, "EOF:", 4)) {
        if (strlen(line + 5) != 40) {
            log_msg(LL_WARNING, "Bad EOF mark from MASTER: %s", line);
            return -1;
        }
        memcpy(mark, line + 5, 40);
    } else {
        char *end;
        errno = 0;
        size = strtoll(line + 1, &end, 10);
        if (*end || errno || size < 0) {
            log_msg(LL_WARNING, "Bad bulk length from MASTER: %s", line);
            return -1;
        }
    }
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: receiving %s from master to %s",
            size < 0 ? "streamed RDB" : "RDB", k->fd >= 0 ? "disk" : "memory");
    pthread_mutex_lock(&lmu);
    sync_total = size;
    sync_read = 0;
    sync_last_io_ms = time_ms();
    pthread_mutex_unlock(&lmu);
    char last[40];
    size_t nlast = 0; /* the last (up to) 40 bytes received */
    long long got = 0;
    int rc = -1;
    for (;;) {
        if (size >= 0 && got == size) {
            rc = 0;
            break;
        }
        if (r->pos == r->len && fill(r) < 0) {
            log_msg(LL_WARNING, "I/O error trying to sync with MASTER: %s", strerror(errno));
            break;
        }
        size_t n = r->len - r->pos;
        if (size >= 0 && (long long)n > size - got)
            n = (size_t)(size - got);
        const char *p = r->buf + r->pos;
        if (sink_put(k, p, n) < 0) {
            log_msg(LL_WARNING, "Write error writing to the temp file needed for synchronization: %s", strerror(errno));
            break;
        }
        r->pos += n;
        got += (long long)n;
        if (size < 0) {
            if (n >= 40) {
                memcpy(last, p + n - 40, 40);
                nlast = 40;
            } else {
                size_t keep = nlast + n > 40 ? 40 - n : nlast;
                memmove(last, last + nlast - keep, keep);
                memcpy(last + keep, p, n);
                nlast = keep + n;
            }
        }
        pthread_mutex_lock(&lmu);
        sync_read = got;
        sync_last_io_ms = time_ms();
        pthread_mutex_unlock(&lmu);
        if (!current(g))
            break;
        if (size < 0 && nlast == 40 && !memcmp(last, mark, 40)) {
            if (k->fd < 0) {
                k->len -= 40;
                rc = 0;
            } else if (ftruncate(k->fd, got - 40) == 0) {
                rc = 0;
            }
            break;
        }
    }
    return rc;
}

/* On worker 0: the link's client exists.  It becomes the link if the
 * master it was made for is still the one followed; the master waits for
 * our first ACK before it streams. */
static void link_ready(struct client *c, void *arg)
{
    unsigned g = (unsigned)(uintptr_t)arg;
    pthread_mutex_lock(&lmu);
    int ok = g == gen && state == RS_CONNECTED && !mc;
    if (ok) {
        mc = c;
        mw = c->w;
        mc_id = c->id;
        atomic_store(&apply_client, c);
        txlen = 0;
        fhead = fcount = 0;
    }
    pthread_mutex_unlock(&lmu);
    c->authenticated = 1;
    c->parser.authenticated = 1;
    c->acl_fast = 1;
    replica_apply_lock();
    c->db = stream_db;
    replica_apply_unlock();
    if (!ok) {
        client_close_asap(c);
        return;
    }
    atomic_store_explicit(&last_io_ms, c->last_ms, memory_order_relaxed);
    gate_set(RG_LINK_DOWN, 0);
    replica_send_ack(c);
}

/* No key in any database (on-empty-db).  Approximate while writes run,
 * which only a writable replica has. */
static int dataset_empty(void)
{
    for (int i = 0; i < ks.ndb; i++)
        if (db_size(i))
            return 0;
    return 1;
}

/* One attempt: 0 the link was handed to a worker, -1 failed (retry). */
/* The async load's swap (keyspace frozen, apply_mu held): the master's
 * history and stream database, as the plain load sets them. */
struct swap_ctx {
    const char *id;
    long long moff;
    const struct rdb_load_stats *ls;
};

static void async_swapped(void *arg)
{
    const struct swap_ctx *x = arg;
    repl_history_reset(x->id, x->moff);
    stream_db = x->ls->repl.id[0] ? x->ls->repl.stream_db : 0;
}

static int sync_with_master(unsigned g, const char *host, int port)
{
    set_state(g, RS_CONNECTING);
    int tmo = __atomic_load_n(&cfg.repl_timeout, __ATOMIC_RELAXED);
    int fd = dial(host, port, tmo * 1000);
    if (fd < 0) {
        log_msg(LL_WARNING, "Error condition on socket for SYNC: %s", strerror(errno));
        fo_done(g, -1);
        return -1;
    }
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync started");
    struct timeval tv = {tmo, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct rd *r = hk_calloc(sizeof(*r));
    r->fd = fd;
    pthread_mutex_lock(&lmu);
    link_fd = fd;
    pthread_mutex_unlock(&lmu);
    char line[512];
    char path[64] = "";
    set_state(g, RS_HANDSHAKE);
    if (__atomic_load_n(&tls_cfg.replication, __ATOMIC_RELAXED)) {
        /* tls-replication: the whole link is TLS, its handshake first
         * (blocking, bounded by the socket timeouts). */
        char err[256];
        int want = 0, hs;
        r->ssl = tls_configure(0) == 0 ? tls_conn_new_client(fd) : NULL;
        if (!r->ssl) {
            log_msg(LL_WARNING, "Can't create a TLS connection to MASTER: TLS is not configured");
            goto fail;
        }
        /* The socket blocks: "not yet" is SO_RCVTIMEO's timeout. */
        hs = tls_conn_connect(r->ssl, &want, err, sizeof(err));
        if (hs != 1) {
            log_msg(LL_WARNING, "TLS handshake with MASTER failed: %s", hs < 0 ? err : "timed out");
            goto fail;
        }
    }
    {
        const char *av[] = {"PING"};
        if (ask(r, 1, av, line, sizeof(line)) < 0) {
            log_msg(LL_WARNING, "Error reply to PING from master: '%s'", strerror(errno));
            goto fail;
        }
        /* Redis accepts an authentication error here: AUTH comes next. */
        if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
            strncmp(line, "-ERR operation not permitted", 28)) {
            log_msg(LL_WARNING, "Error reply to PING from master: '%s'", line);
            goto fail;
        }
        log_msg(LL_NOTICE, "Master replied to PING, replication can continue...");
    }
    if (!current(g))
        goto fail;
    {
        const char *pass = cfg.masterauth, *user = cfg.masteruser;
        if (pass && *pass) {
            const char *av[3] = {"AUTH", user && *user ? user : pass, pass};
            if (ask(r, user && *user ? 3 : 2, av, line, sizeof(line)) < 0 || line[0] == '-') {
                log_msg(LL_WARNING, "Unable to AUTH to MASTER: %s", line[0] == '-' ? line : strerror(errno));
                goto fail;
            }
        }
    }
    {
        char ps[16];
        int lp = cfg.replica_announce_port ? cfg.replica_announce_port : cfg.port;
        snprintf(ps, sizeof(ps), "%d", lp);
        const char *av[] = {"REPLCONF", "listening-port", ps};
        if (ask(r, 3, av, line, sizeof(line)) < 0)
            goto io_fail;
        if (line[0] == '-')
            log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF listening-port: %s", line);
        const char *ip = cfg.replica_announce_ip;
        if (ip && *ip) {
            const char *av2[] = {"REPLCONF", "ip-address", ip};
            if (ask(r, 3, av2, line, sizeof(line)) < 0)
                goto io_fail;
            if (line[0] == '-')
                log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF ip-address: %s", line);
        }
        const char *av3[] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
        if (ask(r, 5, av3, line, sizeof(line)) < 0)
            goto io_fail;
        if (line[0] == '-')
            log_msg(LL_NOTICE, "(Non critical) Master does not understand REPLCONF capa: %s", line);
    }
    if (!current(g))
        goto fail;
    /* PSYNC with our own history: the master's, once we synced; a
     * promoted replica's old one, which the new master keeps as its
     * secondary id. */
    char myid[41], offs[32];
    int have = 0;
    long long myoff = repl_offset(&have);
    repl_replid(myid);
    snprintf(offs, sizeof(offs), "%lld", have ? myoff + 1 : -1LL);
    {
        pthread_mutex_lock(&lmu);
        int fo = fo_pending && fo_gen == g;
        pthread_mutex_unlock(&lmu);
        /* FAILOVER: the target (our replica until now) promotes itself
         * when it sees its own id with the FAILOVER argument. */
        const char *av[] = {"PSYNC", have ? myid : "?", offs, "FAILOVER"};
        if (have)
            log_msg(LL_NOTICE, "Trying a partial resynchronization (request %s:%s%s).", myid, offs,
                    fo ? ", failover" : "");
        else
            log_msg(LL_NOTICE, "Partial resynchronization not possible (no cached master)");
        if (ask(r, fo ? 4 : 3, av, line, sizeof(line)) < 0)
            goto io_fail;
    }
    if (line[0] == '+')
        fo_done(g, 1);
    if (!strncmp(line, "+CONTINUE", 9)) {
        const char *nid = line + 9;
        while (*nid == ' ')
            nid++;
        if (strlen(nid) == 40 && strcmp(nid, myid)) {
            log_msg(LL_NOTICE, "Master replication ID changed to %s", nid);
            repl_history_new_id(nid);
            /* Our replicas learn the new id by reconnecting (they continue
             * from the old one, now our second), as Redis's do. */
            repl_drop_replicas();
        }
        log_msg(LL_NOTICE, "Successful partial resynchronization with master.");
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    } else if (!strncmp(line, "+FULLRESYNC", 11)) {
        char id[41] = {0};
        long long moff = 0;
        if (sscanf(line + 11, " %40s %lld", id, &moff) != 2 || strlen(id) != 40) {
            log_msg(LL_WARNING, "Bad +FULLRESYNC reply from master: %s", line);
            goto fail;
        }
        log_msg(LL_NOTICE, "Full resync from master: %s:%lld", id, moff);
        set_state(g, RS_SYNC);
        /* repl-diskless-load: disabled goes through a file; on-empty-db
         * (when nothing is loaded) and swapdb keep the payload in memory
         * (the old data is served until it is complete). */
        int mode = __atomic_load_n(&cfg.repl_diskless_load, __ATOMIC_RELAXED);
        struct sink k = {.fd = -1};
        if (mode == 0 || (mode == 1 && !dataset_empty())) {
            snprintf(path, sizeof(path), "temp-%lld.%d.rdb", (long long)time_ms(), (int)getpid());
            k.fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
            if (k.fd < 0) {
                log_msg(LL_WARNING, "Opening the temp file needed for MASTER <-> REPLICA synchronization: %s",
                        strerror(errno));
                path[0] = 0;
                goto fail;
            }
        }
        int rrc = receive_rdb(r, g, &k);
        if (k.fd >= 0)
            close(k.fd);
        if (rrc < 0 || !current(g)) {
            hk_free(k.mem);
            goto fail;
        }
        struct rdb_load_stats ls;
        char err[512];
        int lrc;
        if (mode == 2 && k.fd < 0) {
            /* swapdb: loaded beside the old dataset, which keeps serving
             * reads (INFO async_loading:1), then swapped in; a failed load
             * leaves the old dataset. */
            log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory (async: the old dataset serves "
                               "meanwhile)");
            struct swap_ctx x = {id, moff, &ls};
            gate_set(RG_ASYNC_LOADING, 1);
            lrc = persist_replica_load_async(k.mem, k.len, &ls, err, sizeof(err), async_swapped, &x);
            gate_set(RG_ASYNC_LOADING, 0);
            hk_free(k.mem);
        } else {
            log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
            log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
            gate_set(RG_LOADING, 1);
            /* Nothing may be applied meanwhile (an old link's last commands). */
            replica_apply_lock();
            lrc = persist_replica_load(k.fd >= 0 ? path : NULL, k.mem, k.len, &ls, err, sizeof(err));
            hk_free(k.mem);
            if (lrc == 0) {
                repl_history_reset(id, moff);
                /* The master's stream goes on in the database its RDB names
                 * (a master starts with SELECT anyway; a replica serving us
                 * streams its master's bytes as they are). */
                stream_db = ls.repl.id[0] ? ls.repl.stream_db : 0;
            }
            replica_apply_unlock();
            gate_set(RG_LOADING, 0);
        }
        if (lrc == 0)
            rkeys_flush(); /* the master's dataset now: none of ours to expire */
        if (path[0])
            unlink(path);
        path[0] = 0;
        if (lrc < 0) {
            log_msg(LL_WARNING, "Failed trying to load the MASTER synchronization DB from disk: %s", err);
            goto fail;
        }
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Finished with success (%llu keys)", ls.keys);
    } else if (!strncmp(line, "-NOMASTERLINK", 13) || !strncmp(line, "-LOADING", 8)) {
        log_msg(LL_NOTICE, "Master is currently unable to PSYNC but should be in the future: %s", line);
        goto fail;
    } else {
        log_msg(LL_WARNING, "Unexpected reply to PSYNC from master: %s", line);
        goto fail;
    }
    /* The stream runs on worker 0 from here (link_ready); bytes read
     * past the reply (a partial resync's backlog) go with it. */
    pthread_mutex_lock(&lmu);
    int ok = g == gen && !stopping;
    link_fd = -1;
    if (ok) {
        state = RS_CONNECTED;
        mc = NULL;
        down_since_ms = 0;
        ever_up = 1;
    }
    pthread_mutex_unlock(&lmu);
    if (!ok)
        goto fail;
    /* (Those bytes are counted again as the stream applies them.) */
    atomic_fetch_sub_explicit(&repl_net_in, (unsigned long long)(r->len - r->pos), memory_order_relaxed);
    net_adopt(fd, r->ssl, CF_MASTER | CF_REPLY_OFF | CF_NO_EVICT | CF_DENY_BLOCKING, r->buf + r->pos, r->len - r->pos,
              link_ready, (void *)(uintptr_t)g);
    hk_free(r);
    return 0;
io_fail:
    log_msg(LL_WARNING, "Error in the replication handshake with MASTER: %s", strerror(errno));
fail:
    fo_done(g, -1);
    if (path[0])
        unlink(path);
    pthread_mutex_lock(&lmu);
    link_fd = -1;
    pthread_mutex_unlock(&lmu);
    if (r->ssl)
        tls_conn_free(r->ssl, 0);
    close(fd);
    hk_free(r);
    return -1;
}

static void *link_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hotkv-replica");
    /* A full sync's load allocates the whole dataset here (base/mem.h). */
    mem_thread_register();
    pthread_mutex_lock(&lmu);
    while (!stopping) {
        if (state != RS_CONNECT) {
            pthread_cond_wait(&lcv, &lmu);
            continue;
        }
        unsigned g = gen;
        char host[256];
        int port = m_port;
        snprintf(host, sizeof(host), "%s", m_host);
        pthread_mutex_unlock(&lmu);
        int rc = sync_with_master(g, host, port);
        mem_publish();
        slab_thread_idle(); /* a thread that is not a worker lends its slab heap back (base/slab.h) */
        pthread_mutex_lock(&lmu);
        if (g != gen)
            continue;
        if (rc == 0)
            continue; /* handed over (connected): sleep until it ends */
        state = RS_CONNECT;
        if (!down_since_ms)
            down_since_ms = time_ms();
        /* A second before the next attempt (REPLICAOF wakes us). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&lcv, &lmu, &ts);
    }
    pthread_mutex_unlock(&lmu);
    mem_thread_unregister();
    return NULL;
}

void replica_start(void)
{
    pthread_mutex_lock(&lmu);
    stopping = 0;
    pthread_mutex_unlock(&lmu);
    if (pthread_create(&tid, NULL, link_main, NULL) == 0)
        thread_on = 1;
}

void replica_stop(void)
{
    if (!thread_on)
        return;
    pthread_mutex_lock(&lmu);
    stopping = 1;
    gen++;
    if (link_fd >= 0)
        shutdown(link_fd, SHUT_RDWR); /* a blocked handshake or transfer ends now */
    pthread_cond_broadcast(&lcv);
    pthread_mutex_unlock(&lmu);
    pthread_join(tid, NULL);
    thread_on = 0;
}

/* ------------------------------------------------- on the link's worker --- */
/* A run of the stream's commands that one process_input call applies is
 * one batch: apply_mu is taken at its first command and given back by
 * replica_apply_flush when the call ends, and the bytes of consecutive
 * commands (adjacent in the link's query buffer) enter the history in one
 * repl_feed_raw.  A lock pair and a history append per batch instead of
 * per command (they were about 400 of a pipelined SET's 3000
 * instructions; docs/benchmarks/replcg-2026-12-03b.md).  Whatever reads
 * the offset on this worker mid-batch (GETACK's ACK) first feeds what is
 * pending (feed_pending).  Worker 0's, like the link. */
static int batch_open;
static const char *pend_p; /* the pending bytes: in the link's qbuf, valid until the batch ends */
static size_t pend_n;
static unsigned long long batch_in; /* stream bytes applied this batch (repl_net_in) */

/* The FACK ring: the offset now reached and the AOF bytes fed up to it. */
static void fack_note(void)
{
    unsigned long long fed = atomic_load_explicit(&aof_fed_bytes, memory_order_relaxed);
    long long off = repl_offset(NULL);
    int last = (fhead + fcount - 1) % FACK_RING;
    if (fcount && fring[last].aofb == fed) {
        fring[last].off = off; /* nothing more fed to the AOF: same bytes cover it */
    } else if (fcount == FACK_RING) {
        fring[last].off = off; /* full: merge into the newest (a later FACK, never a wrong one) */
        fring[last].aofb = fed;
    } else {
        int at = (fhead + fcount++) % FACK_RING;
        fring[at].off = off;
        fring[at].aofb = fed;
    }
}

/* Feed the pending bytes into the history (apply_mu held). */
static void feed_pending(void)
{
    if (!pend_n)
        return;
    repl_feed_raw(pend_p, pend_n, apply_gen);
    pend_n = 0;
    if (atomic_load_explicit(&aof_active, memory_order_relaxed))
        fack_note();
}

int replica_apply_begin(struct client *c)
{
    if (atomic_load(&apply_client) != c) {
        replica_apply_flush(c); /* what ran before REPLICAOF replaced c counts */
        return 0;
    }
    if (!batch_open) {
        replica_apply_lock();
        apply_gen = repl_hist_gen();
        batch_open = 1;
    }
    return 1;
}

static void tx_keep(const char *p, size_t n)
{
    if (txlen + n > txcap) {
        size_t cap = txcap ? txcap : 4096;
        while (cap < txlen + n)
            cap *= 2;
        txb = hk_realloc(txb, cap);
        txcap = cap;
    }
    memcpy(txb + txlen, p, n);
    txlen += n;
}

void replica_apply_end(struct client *c, const char *p, size_t n, int in_tx)
{
    batch_in += n; /* the stream's bytes as they are applied (what the link's worker read) */
    if (n) {
        if (in_tx) {
            feed_pending();
            tx_keep(p, n);
        } else {
            if (txlen) {
                feed_pending();
                repl_feed_raw(txb, txlen, apply_gen);
                txlen = 0;
                if (txcap > (1 << 20)) {
                    hk_free(txb);
                    txb = NULL;
                    txcap = 0;
                }
                if (atomic_load_explicit(&aof_active, memory_order_relaxed))
                    fack_note();
            }
            if (pend_n && pend_p + pend_n == p) {
                pend_n += n;
            } else {
                feed_pending();
                pend_p = p;
                pend_n = n;
            }
        }
    }
    if (!in_tx)
        stream_db = c->db;
}

void replica_apply_flush(struct client *c)
{
    if (!batch_open)
        return;
    feed_pending();
    atomic_fetch_add_explicit(&repl_net_in, batch_in, memory_order_relaxed);
    batch_in = 0;
    atomic_store_explicit(&last_io_ms, c->last_ms, memory_order_relaxed);
    batch_open = 0;
    replica_apply_unlock();
}

void replica_send_ack(struct client *c)
{
    char num[32], fnum[32], out[160];
    if (batch_open)
        feed_pending(); /* GETACK in a batch: the commands before it count */
    long long off = repl_offset(NULL);
    int nl = snprintf(num, sizeof(num), "%lld", off);
    const char *av[5] = {"REPLCONF", "ACK", num, "FACK", fnum};
    size_t al[5] = {8, 3, (size_t)nl, 4, 0};
    int argc = 3;
    if (atomic_load_explicit(&aof_active, memory_order_relaxed)) {
        /* appendfsync always: this turn's group commit would fsync what
         * was applied only after this ACK left, and WAITAOF on our master
         * would wait for the next second's ACK; fsync it now. */
        unsigned long long fed = atomic_load_explicit(&aof_fed_bytes, memory_order_acquire);
        if (__atomic_load_n(&cfg.appendfsync, __ATOMIC_RELAXED) == AOF_FSYNC_ALWAYS &&
            atomic_load_explicit(&aof_synced_bytes, memory_order_acquire) < fed)
            aof_sync_fed(fed);
        /* FACK: how far the AOF has fsynced what we applied. */
        unsigned long long synced = atomic_load_explicit(&aof_synced_bytes, memory_order_acquire);
        while (fcount && fring[fhead].aofb <= synced) {
            fack = fring[fhead].off;
            fhead = (fhead + 1) % FACK_RING;
            fcount--;
        }
        if (!fcount)
            fack = off;
        al[4] = (size_t)snprintf(fnum, sizeof(fnum), "%lld", fack);
        argc = 5;
    } else {
        fhead = fcount = 0;
        fack = off;
    }
    char *e = put_cmd(out, argc, av, al);
    int m = c->out.muted;
    c->out.muted = 0;
    reply_raw(&c->out, out, (size_t)(e - out));
    c->out.muted = m;
    if (!(c->flags & CF_EXECUTING))
        client_output_ready(c);
}

void replica_master_gone(struct client *c)
{
    replica_apply_flush(c);
    struct client *cur = c;
    atomic_compare_exchange_strong(&apply_client, &cur, NULL);
    txlen = 0; /* a transaction cut short never happened */
    pthread_mutex_lock(&lmu);
    int was = mc == c;
    if (was) {
        mc = NULL;
        mw = NULL;
        if (state == RS_CONNECTED) {
            state = RS_CONNECT;
            down_since_ms = time_ms();
            pthread_cond_broadcast(&lcv);
        }
    }
    int replica = state != RS_NONE;
    pthread_mutex_unlock(&lmu);
    if (was && replica) {
        gate_set(RG_LINK_DOWN, 1);
        log_msg(LL_NOTICE, "Connection with master lost.");
    }
}

void replica_cron(struct worker *w)
{
    pthread_mutex_lock(&lmu);
    struct client *c = mw == w ? mc : NULL;
    pthread_mutex_unlock(&lmu);
    if (!c)
        return;
    if ((c->flags & CF_HELD) && !atomic_load(&script_busy)) {
        c->flags &= ~CF_HELD; /* the busy script ended: the stream goes on */
        client_unblocked(c);
    }
    long long now = time_ms();
    static _Thread_local long long last_ack;
    if (now - last_ack >= 1000) {
        last_ack = now;
        replica_send_ack(c);
    }
    long long tmo = 1000LL * __atomic_load_n(&cfg.repl_timeout, __ATOMIC_RELAXED);
    if (now - c->last_ms > tmo) {
        log_msg(LL_WARNING, "MASTER timeout: no data nor PING received...");
        client_close_asap(c);
    }
}

/* ------------------------------------------------------ introspection --- */
size_t replica_info(char *buf, size_t cap)
{
    size_t len = 0;
#define OUT(...)                                                                                                       \
    do {                                                                                                               \
        int k_ = snprintf(buf + len, cap > len ? cap - len : 0, __VA_ARGS__);                                          \
        if (k_ > 0)                                                                                                    \
            len += (size_t)k_;                                                                                         \
    } while (0)
    long long off = repl_offset(NULL);
    long long now = time_ms();
    pthread_mutex_lock(&lmu);
    int up = state == RS_CONNECTED && mc;
    int syncing = state == RS_SYNC;
    OUT("role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\n", m_host, m_port);
    OUT("master_link_status:%s\r\n", up ? "up" : "down");
    OUT("master_last_io_seconds_ago:%lld\r\n",
        up ? (now - atomic_load_explicit(&last_io_ms, memory_order_relaxed)) / 1000 : -1LL);
    OUT("master_sync_in_progress:%d\r\n", syncing);
    OUT("slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n", off, off);
    if (syncing) {
        long long left = sync_total >= 0 ? sync_total - sync_read : -1;
        double perc = sync_total > 0 ? (double)sync_read * 100.0 / (double)sync_total : 0.0;
        OUT("master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n",
            sync_total, sync_read, left);
        OUT("master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%lld\r\n", perc,
            (now - sync_last_io_ms) / 1000);
    }
    if (!up)
        OUT("master_link_down_since_seconds:%lld\r\n", down_since_ms ? (now - down_since_ms) / 1000 : -1LL);
    pthread_mutex_unlock(&lmu);
    OUT("slave_priority:%d\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n", cfg.replica_priority,
        cfg.replica_read_only, cfg.replica_announced);
#undef OUT
    return len < cap ? len : cap;
}

int replica_role(char *host, size_t cap, int *port, const char **st, long long *off)
{
    long long o = repl_offset(NULL);
    if (!replica_master(host, cap, port))
        return 0;
    pthread_mutex_lock(&lmu);
    *st = state_name(state == RS_CONNECTED && !mc ? RS_SYNC : state);
    *off = state == RS_CONNECTED ? o : -1;
    pthread_mutex_unlock(&lmu);
    return 1;
}

long long replica_data_age_ms(void)
{
    pthread_mutex_lock(&lmu);
    int up = state == RS_CONNECTED, was = ever_up;
    long long since = down_since_ms;
    pthread_mutex_unlock(&lmu);
    long long now = time_ms();
    if (up)
        return now - atomic_load_explicit(&last_io_ms, memory_order_relaxed);
    if (!was || !since)
        return LLONG_MAX / 4;
    return now - since;
}
