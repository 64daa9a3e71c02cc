/* worker.c - worker threads: event loop, accept, read/parse/execute/write.
 *
 * Each worker owns an epoll instance, one SO_REUSEPORT listening socket per
 * bound address (the kernel spreads new connections across workers, no
 * hand-off), an eventfd for cross-thread jobs, and its clients.  A read
 * parses every complete command in the buffer and runs it at once; replies
 * pile up in the client's buffer and go out once per client per loop turn.
 * A turn's reads, and then its replies, go to the kernel in one io_uring
 * submission each (see "io_uring batching" below), or as one read(2) or
 * write(2) per client where io_uring is off.
 *
 * Back-pressure: a client with more than OBUF_PAUSE bytes unwritten stops
 * being read (EPOLLIN off) until the socket drains, so a client that
 * pipelines without reading holds at most that much plus one reply; the
 * configurable client-output-buffer-limit disconnects it as in Redis.
 *
 * Job queue invariant: producers push under w->jlock then write the eventfd;
 * the owner reads the eventfd before taking the list, so a job pushed after
 * the list was taken always leaves the eventfd readable for the next turn. */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "../base/latency_monitor.h"
#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../server.h"
#include "client_evict.h"
#include "hooks.h"
#include "tls.h"
#include "worker.h"

/* ------------------------------------------------------------ hooks --- */
/* Defaults: nothing above net/ (unit tests that drive clients directly);
 * server start-up installs cmd/'s (net_set_hooks). */
static void hook_client_nop(struct client *c)
{
    (void)c;
}
static void hook_worker_nop(struct worker *w)
{
    (void)w;
}
static void hook_init_nop(int n)
{
    (void)n;
}
static long long hook_timeout_none(struct worker *w, long long now_ms)
{
    (void)w;
    (void)now_ms;
    return -1;
}
static size_t hook_client_mem_none(const struct client *c)
{
    (void)c;
    return 0;
}
static int hook_ncommands_none(void)
{
    return 0;
}
static int hook_default_nopass(void)
{
    return cfg.requirepass == NULL;
}
static void hook_reply_barrier_nop(void)
{
}
static void hook_cert_user_nop(struct client *c, const char *name, size_t len)
{
    (void)c;
    (void)name;
    (void)len;
}
struct net_hooks net_hooks = {
    .execute = hook_client_nop,
    .client_gone = hook_client_nop,
    .workers_init = hook_init_nop,
    .thread_start = hook_worker_nop,
    .thread_exit = hook_worker_nop,
    .next_timeout = hook_timeout_none,
    .cron = hook_worker_nop,
    .ncommands = hook_ncommands_none,
    .client_mem = hook_client_mem_none,
    .default_nopass = hook_default_nopass,
    .tls_cert_user = hook_cert_user_nop,
    .master_input_done = hook_client_nop,
};
atomic_int net_reply_barrier_on;
void (*net_reply_barrier)(void) = hook_reply_barrier_nop;

void net_set_hooks(const struct net_hooks *h)
{
    net_hooks = *h; /* every member set (net/hooks.h) */
}

#define ARGV_KEEP 1024 /* argv slots a connection keeps between commands */

#define QBUF_CHUNK (16 * 1024)
/* The query buffer of a client that has none (qcap 0: given back while
 * idle, see qbuf_cron); never written, never freed. */
static char qbuf_none[1];
#define OBUF_PAUSE (1024 * 1024)
#define TAG_LISTEN 1
#define TAG_EVENT 2
#define TAG_UNIX 3 /* the Unix-domain listener (unix_lfd) */
/* Listeners: 8 + i for lfds[i], TAG_TLS_LISTEN + i for tls_lfds[i]. */
#define TAG_TLS_LISTEN 32

/* c->tls_flags of a TLS client (net/tls.h; docs/architecture.md, "TLS"). */
#define TLSF_HANDSHAKE 0x01       /* handshake not finished: no command is read yet */
#define TLSF_HS_WANT_WRITE 0x02   /* ... and it waits for the socket to take output */
#define TLSF_READ_WANT_WRITE 0x04 /* SSL_read needs the socket writable first */
#define TLSF_WRITE_WANT_READ 0x08 /* SSL_write needs the socket readable first */
#define TLSF_DENY 0x10            /* protected mode: refused once the handshake is done */
#define TLSF_FATAL 0x20           /* failed or closed by the peer: no close_notify */
/* Plaintext bytes of a full TLS record, and what one client may read in a
 * loop turn (a big bulk streams at this pace between other clients). */
#define TLS_RECORD_MAX 16384
#define TLS_READ_BUDGET (1024 * 1024)

struct job {
    void (*fn)(struct worker *, void *);
    void *arg;
    atomic_int *remaining;
    struct job *next;
};

struct worker *workers;
int nworkers;
_Thread_local struct worker *cur_worker;
atomic_int server_shutdown;
atomic_int cron_paused;
/* Written per connect/close: lines of their own, away from what every
 * command reads. */
_Alignas(64) atomic_int connected_clients;
_Alignas(64) atomic_ullong next_client_id = 1;
static atomic_int workers_exited;

/* epoll data: small integers tag listeners/eventfd; pointers are clients. */
static inline int is_tag(uint64_t d)
{
    return d < 64;
}

/* A TLS client waits for what OpenSSL asked for: during the handshake
 * only the readiness the handshake wants; a read that needs to write first
 * waits for EPOLLOUT (not EPOLLIN, which unread input would keep firing),
 * a write that needs to read first for EPOLLIN. */
static unsigned tls_events(const struct client *c, unsigned e)
{
    unsigned f = c->tls_flags;
    if (f & TLSF_HANDSHAKE)
        return f & TLSF_HS_WANT_WRITE ? EPOLLOUT : EPOLLIN;
    if (f & TLSF_READ_WANT_WRITE)
        e = (e & ~(unsigned)EPOLLIN) | EPOLLOUT;
    if (f & TLSF_WRITE_WANT_READ)
        e = (e & ~(unsigned)EPOLLOUT) | EPOLLIN;
    return e;
}

/* The epoll events c waits for. */
static unsigned ep_events(const struct client *c)
{
    unsigned e = (c->flags & CF_READ_PAUSED ? 0 : EPOLLIN) | (c->flags & CF_WANT_WRITE ? EPOLLOUT : 0);
    return HK_UNLIKELY(c->tls != NULL) ? tls_events(c, e) : e;
}

static void ep_mod(struct client *c)
{
    struct epoll_event ev;
    ev.events = ep_events(c);
    ev.data.ptr = c;
    epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void addr_to_str(const struct sockaddr_storage *sa, char *out, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const void *)sa;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        port = ntohs(s->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const void *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        port = ntohs(s->sin6_port);
    }
    snprintf(out, cap, "%s:%d", ip, port);
}

/* Protected mode's "local" peer, as Redis 7 decides it: exactly
 * 127.0.0.1 or ::1 (config.h client_is_local is the same rule); another
 * 127.0.0.0/8 source address is refused like any remote one. */
static int is_loopback(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const void *)sa;
        return ntohl(s->sin_addr.s_addr) == INADDR_LOOPBACK;
    }
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const void *)sa;
        static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (memcmp(&s->sin6_addr, lo, 16) == 0)
            return 1;
        /* v4-mapped 127.0.0.1 */
        static const unsigned char v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const unsigned char v4lo[4] = {127, 0, 0, 1};
        return memcmp(&s->sin6_addr, v4m, 12) == 0 && memcmp((const unsigned char *)&s->sin6_addr + 12, v4lo, 4) == 0;
    }
    return 1;
}

static void refuse(int fd, const char *msg)
{
    if (write(fd, msg, strlen(msg)) < 0) {
        /* The connection is being refused anyway. */
    }
    close(fd);
}

static long long fit_fd_limit(int startup);
static _Thread_local int accept_spare_fd = -1; /* see do_accept */
static _Atomic long long fd_room = LLONG_MAX; /* clients the open-files limit leaves room for */

/* Unix-domain socket (worker.h).  One listening socket, in every worker's
 * epoll with EPOLLEXCLUSIVE: a Unix socket cannot be SO_REUSEPORT-split
 * like the TCP ones, and rather than have one worker accept and hand
 * connections out through the job queues (a cross-thread hop and a
 * wake-up per connection), the kernel wakes one waiting worker per
 * connection and that worker accepts it (a worker that loses the race gets
 * EAGAIN).  Made in workers_start, never changed (immutable), closed and
 * unlinked by workers_join. */
char *net_unixsocket;
int net_unixsocketperm;
static int unix_lfd = -1;

static const char protected_denied[] =
    "-DENIED Running in protected mode because protected mode is enabled and no password is set for the default user. "
    "In this mode connections are only accepted from the loopback interface. If you want to connect from external "
    "computers, you may adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to the server from the same host the "
    "server is running, however MAKE SURE the server is not publicly accessible from internet if you do so. Use "
    "CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by "
    "editing the configuration file, and setting the protected mode option to 'no', and then restarting the server. "
    "3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. "
    "4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things "
    "in order for the server to start accepting connections from the outside.\r\n";

static void client_read(struct client *c);
static struct client *client_alloc(struct worker *w, int fd, const struct sockaddr_storage *sa, void *ssl);
static void qbuf_reserve(struct client *c, size_t want);
static void process_input(struct client *c);

/* A connection accepted on a TCP (tls 0) or TLS (tls 1) listener, or the
 * Unix socket.  A TLS client is refused as Redis refuses it: over the
 * limit the socket just closes (no handshake was made, nothing can be
 * said); protected mode answers -DENIED once the handshake is done. */
static void client_new(struct worker *w, int fd, const struct sockaddr_storage *sa, int tls)
{
    struct client *c;
    struct epoll_event ev;

    int nc = atomic_fetch_add(&connected_clients, 1);
    /* Over the room the open-files limit leaves: a CONFIG SET maxclients
     * since start-up may want a higher limit (tried once per refusal). */
    if (nc >= atomic_load_explicit(&fd_room, memory_order_relaxed) && nc < cfg.maxclients)
        atomic_store(&fd_room, fit_fd_limit(0));
    if (nc >= cfg.maxclients || nc >= atomic_load_explicit(&fd_room, memory_order_relaxed)) {
        atomic_fetch_sub(&connected_clients, 1);
        STAT_ADD(w->stats.rejected_conns, 1);
        if (tls)
            close(fd);
        else
            refuse(fd, "-ERR max number of clients reached\r\n");
        return;
    }
    int is_unix = sa->ss_family == AF_UNIX; /* always local, as in Redis */
    int deny = cfg.protected_mode && !is_unix && !is_loopback(sa) && net_hooks.default_nopass();
    if (deny && !tls) {
        atomic_fetch_sub(&connected_clients, 1);
        STAT_ADD(w->stats.rejected_conns, 1);
        refuse(fd, protected_denied);
        return;
    }
    void *ssl = NULL;
    if (tls && !(ssl = tls_conn_new(fd))) {
        atomic_fetch_sub(&connected_clients, 1);
        STAT_ADD(w->stats.rejected_conns, 1);
        log_msg(LL_WARNING, "TLS connection refused: no TLS context");
        close(fd);
        return;
    }
    c = client_alloc(w, fd, sa, ssl);
    if (ssl)
        c->tls_flags = TLSF_HANDSHAKE | (deny ? TLSF_DENY : 0);
    STAT_ADD(w->stats.conns_received, 1);

    ev.events = EPOLLIN;
    ev.data.ptr = c;
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
    /* The ClientHello is usually in already: start the handshake now
     * rather than after another epoll turn.  The client runs on another
     * core meanwhile, so the handshake may even finish within this call,
     * its first request read along (read-ahead) where epoll will never
     * report it: client_read goes on to read and run it, as after any
     * handshake step. */
    if (ssl)
        client_read(c);
}

/* The client struct of a new connection on w, on w's list (not yet in
 * epoll); counted in connected_clients by the caller. */
static struct client *client_alloc(struct worker *w, int fd, const struct sockaddr_storage *sa, void *ssl)
{
    struct client *c;
    struct sockaddr_storage la;
    socklen_t ll = sizeof(la);
    int one = 1;
    int is_unix = sa->ss_family == AF_UNIX;
    if (!is_unix) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (cfg.tcp_keepalive > 0)
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }

    c = hk_calloc(sizeof(*c));
    c->fd = fd;
    c->w = w;
    c->tls = ssl;
    c->id = atomic_fetch_add(&next_client_id, 1);
    c->qcap = QBUF_CHUNK;
    c->qbuf = hk_malloc(c->qcap);
    resp_parser_init(&c->parser);
    c->parser.max_bulk = __atomic_load_n(&cfg.proto_max_bulk_len, __ATOMIC_RELAXED);
    reply_init(&c->out);
    c->authenticated = cfg.requirepass == NULL;
    c->parser.authenticated = c->authenticated;
    c->ctime_ms = c->last_ms = time_ms();
    if (is_unix) {
        /* Redis shows "<socket path>:0" for both ends (cut at 63 bytes
         * here: c->addr's size). */
        c->flags |= CF_UNIX;
        snprintf(c->addr, sizeof(c->addr), "%s:0", net_unixsocket ? net_unixsocket : "");
        memcpy(c->laddr, c->addr, sizeof(c->laddr) < sizeof(c->addr) ? sizeof(c->laddr) : sizeof(c->addr));
        c->laddr[sizeof(c->laddr) - 1] = 0;
    } else {
        addr_to_str(sa, c->addr, sizeof(c->addr));
        if (getsockname(fd, (struct sockaddr *)&la, &ll) == 0)
            addr_to_str(&la, c->laddr, sizeof(c->laddr));
    }
    c->argv_cap = 16;
    c->argv = hk_malloc(sizeof(*c->argv) * 16);
    c->argvlen = hk_malloc(sizeof(*c->argvlen) * 16);
    c->kslot = hk_malloc(sizeof(*c->kslot) * 16);

    c->next = w->clients;
    if (w->clients)
        w->clients->prev = c;
    w->clients = c;
    w->nclients++;
    return c;
}

static int tls_read(struct client *c);

/* net_adopt: the connection becomes a client of worker 0. */
struct adopt_req {
    struct adopt_req *next;
    int fd;
    void *ssl; /* a TLS connection whose handshake is done, or NULL */
    unsigned flags;
    void (*ready)(struct client *, void *);
    void *arg;
    size_t n;
    char init[];
};

/* The job only queues the connection: jobs also run inside a command
 * (worker_broadcast's wait: CLIENT KILL in EXEC, all slot locks held) and
 * inside slot-lock waits, where running the new client's input (its
 * commands take slot locks) or ready() (replica.c's link_ready takes
 * apply_mu) would wait for a lock this very thread holds or waits behind.
 * run_adopted() makes the clients at the top of the loop. */
static void adopt_job(struct worker *w, void *arg)
{
    struct adopt_req *r = arg;
    r->next = NULL;
    if (w->adopt_tail)
        w->adopt_tail->next = r;
    else
        w->adopt_head = r;
    w->adopt_tail = r;
}

static void adopt_now(struct worker *w, struct adopt_req *r)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    memset(&sa, 0, sizeof(sa));
    if (getpeername(r->fd, (struct sockaddr *)&sa, &sl) < 0)
        sa.ss_family = AF_INET;
    int fl = fcntl(r->fd, F_GETFL);
    if (fl >= 0)
        fcntl(r->fd, F_SETFL, fl | O_NONBLOCK);
    atomic_fetch_add(&connected_clients, 1);
    struct client *c = client_alloc(w, r->fd, &sa, r->ssl);
    c->flags |= r->flags;
    if (r->ready)
        r->ready(c, r->arg);
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    if (r->n) { /* bytes its reader had taken already: run them now */
        qbuf_reserve(c, r->n);
        memcpy(c->qbuf + c->qlen, r->init, r->n);
        c->qlen += r->n;
    }
    /* Plaintext OpenSSL decrypted already (epoll will not report it). */
    int more = c->tls && tls_conn_has_pending(c->tls) ? tls_read(c) : 0;
    if (more < 0) { /* closed (c is gone) */
        hk_free(r);
        return;
    }
    if (r->n || more)
        process_input(c);
    else
        client_output_ready(c);
    hk_free(r);
}

static void run_adopted(struct worker *w)
{
    while (w->adopt_head) {
        struct adopt_req *r = w->adopt_head;
        w->adopt_head = r->next;
        if (!w->adopt_head)
            w->adopt_tail = NULL;
        adopt_now(w, r);
    }
}

/* Shutdown: the connections never made clients are closed. */
static void drop_adopted(struct worker *w)
{
    while (w->adopt_head) {
        struct adopt_req *r = w->adopt_head;
        w->adopt_head = r->next;
        if (r->ssl)
            tls_conn_free(r->ssl, 0);
        close(r->fd);
        hk_free(r);
    }
    w->adopt_tail = NULL;
}

void net_adopt(int fd, void *ssl, unsigned flags, const char *init, size_t n, void (*ready)(struct client *, void *),
               void *arg)
{
    struct adopt_req *r = hk_malloc(sizeof(*r) + n);
    r->fd = fd;
    r->ssl = ssl;
    r->flags = flags;
    r->ready = ready;
    r->arg = arg;
    r->n = n;
    if (n)
        memcpy(r->init, init, n);
    worker_post(&workers[0], adopt_job, r);
}

static void pending_unlink(struct client *c)
{
    struct client **pp = &c->w->pending_write;
    while (*pp) {
        if (*pp == c) {
            *pp = c->pw_next;
            break;
        }
        pp = &(*pp)->pw_next;
    }
    c->flags &= ~CF_PENDING_WRITE;
}

static void push_unlink(struct client *c)
{
    struct worker *w = c->w;
    struct client *prev = NULL;
    for (struct client *x = w->push_head; x; prev = x, x = x->push_next) {
        if (x != c)
            continue;
        if (prev)
            prev->push_next = c->push_next;
        else
            w->push_head = c->push_next;
        if (w->push_tail == c)
            w->push_tail = prev;
        break;
    }
    c->flags &= ~CF_PENDING_PUSH;
}

static void resume_unlink(struct client *c)
{
    struct client **pp = &c->w->resume;
    while (*pp) {
        if (*pp == c) {
            *pp = c->resume_next;
            break;
        }
        pp = &(*pp)->resume_next;
    }
    c->flags &= ~CF_RESUME;
}

/* Set while a busy script lets this worker serve its other clients
 * (worker_process_events_busy): closing is deferred to the end of the loop
 * turn, because the outer turn may still hold events for the client. */
static _Thread_local int busy_nesting;

void client_close_asap(struct client *c)
{
    struct worker *w = c->w;
    c->flags |= CF_CLOSE_ASAP;
    c->sent = c->out.len;
    if (!(c->flags & CF_PENDING_WRITE)) {
        c->flags |= CF_PENDING_WRITE;
        c->pw_next = w->pending_write;
        w->pending_write = c;
    }
}

void client_close(struct client *c)
{
    struct worker *w = c->w;
    if (busy_nesting) {
        client_close_asap(c);
        return;
    }
    net_hooks.client_gone(c);
    if (c->cev_mem)
        cev_client_gone(c);
    if (c->flags & CF_RESUME)
        resume_unlink(c);
    if (c->flags & CF_PENDING_WRITE)
        pending_unlink(c);
    if (c->flags & CF_PENDING_PUSH)
        push_unlink(c);
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    if (c->tls) /* a close_notify first, unless the connection failed */
        tls_conn_free(c->tls, !(c->tls_flags & (TLSF_FATAL | TLSF_HANDSHAKE)));
    close(c->fd);
    if (accept_spare_fd < 0 && cur_worker == w) /* lost to a race at EMFILE: take this one */
        accept_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (c->prev)
        c->prev->next = c->next;
    else
        w->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    w->nclients--;
    atomic_fetch_sub(&connected_clients, 1);
    resp_parser_free(&c->parser);
    reply_free(&c->out);
    if (c->pushbuf) {
        reply_free(c->pushbuf);
        hk_free(c->pushbuf);
    }
    if (c->qcap)
        hk_free(c->qbuf);
    hk_free(c->name);
    hk_free(c->lib_name);
    hk_free(c->lib_ver);
    hk_free(c->argv);
    hk_free(c->argvlen);
    hk_free(c->kslot);
    hk_free(c);
}

/* Every client struct is one hk_calloc(sizeof(struct client)): one size
 * class, asked of the allocator once (maxmemory-clients recounts a client
 * after each command). */
static _Atomic size_t client_struct_bytes;

size_t client_mem_usage(const struct client *c)
{
    size_t n = atomic_load_explicit(&client_struct_bytes, memory_order_relaxed);
    if (!n) {
        n = hk_usable((void *)c);
        atomic_store_explicit(&client_struct_bytes, n, memory_order_relaxed);
    }
    n += c->qcap + c->out.cap;
    if (c->pushbuf)
        n += sizeof(*c->pushbuf) + c->pushbuf->cap;
    n += (size_t)c->argv_cap * (sizeof(*c->argv) + sizeof(*c->argvlen) + sizeof(*c->kslot));
    /* What the features above keep for c (MULTI queue, subscriptions,
     * tracking prefixes). */
    return n + net_hooks.client_mem(c);
}

int client_is_local(const struct client *c)
{
    if (c->flags & CF_UNIX)
        return 1;
    const char *colon = strrchr(c->addr, ':'); /* "ip:port" (net/worker.c) */
    size_t n = colon ? (size_t)(colon - c->addr) : 0;
    static const char *const local[] = {"127.0.0.1", "::1", "::ffff:127.0.0.1"};
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
        if (n == strlen(local[i]) && !memcmp(c->addr, local[i], n))
            return 1;
    return 0;
}

/* SSL_write of c's pending output, as write(2) would answer: bytes, or
 * -1 with errno EAGAIN (would block: the want is noted for ep_mod) or
 * EPIPE (failed). */
static ssize_t tls_write_some(struct client *c)
{
    int want = 0;
    ssize_t n = tls_conn_write(c->tls, c->out.buf + c->sent, c->out.len - c->sent, &want);
    if (n > 0) {
        if (HK_UNLIKELY(c->tls_flags & TLSF_WRITE_WANT_READ)) {
            c->tls_flags &= ~TLSF_WRITE_WANT_READ;
            ep_mod(c);
        }
        return n;
    }
    if (n == 0) {
        if (want == TLS_WANT_READ && !(c->tls_flags & TLSF_WRITE_WANT_READ)) {
            c->tls_flags |= TLSF_WRITE_WANT_READ;
            ep_mod(c);
        }
        errno = EAGAIN;
        return -1;
    }
    c->tls_flags |= TLSF_FATAL;
    errno = EPIPE;
    return -1;
}

/* Write what is pending.  Returns -1 if the client was closed. */
static int client_write(struct client *c)
{
    /* AOF on: no reply before the writes fed so far are written to the
     * file (and fsynced with appendfsync always); a no-op when the loop's
     * group commit already covered them (persist/aof.h). */
    net_before_reply();
    while (c->sent < c->out.len) {
        ssize_t n = HK_UNLIKELY(c->tls != NULL) ? tls_write_some(c) : write(c->fd, c->out.buf + c->sent, c->out.len - c->sent);
        STAT_ADD(c->w->stats.writes, 1);
        if (n > 0) {
            c->sent += (size_t)n;
            STAT_ADD(c->w->stats.net_out, (unsigned long long)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        client_close(c);
        return -1;
    }
    if (c->sent == c->out.len) {
        reply_consume(&c->out, c->sent);
        c->sent = 0;
        c->obuf_soft_since = 0;
        if (HK_UNLIKELY(cev_enabled()))
            cev_client_note(c);
        if (c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP)) {
            client_close(c);
            return -1;
        }
        if (c->flags & (CF_WANT_WRITE | CF_READ_PAUSED)) {
            int was_paused = c->flags & CF_READ_PAUSED;
            c->flags &= ~(CF_WANT_WRITE | CF_READ_PAUSED);
            ep_mod(c);
            if (was_paused)
                return 1; /* caller should resume parsing */
        }
        return 0;
    }
    if (!(c->flags & CF_WANT_WRITE)) {
        c->flags |= CF_WANT_WRITE;
        ep_mod(c);
    }
    return 0;
}

/* Redis's client-output-buffer-limit check; returns 1 if c must go. */
static int obuf_over_limit(struct client *c)
{
    const struct obuf_limit *l = &cfg.obuf[c->flags & CF_PUBSUB ? CLIENT_CLASS_PUBSUB : CLIENT_CLASS_NORMAL];
    size_t pending = c->out.len - c->sent;
    if (l->hard && (long long)pending >= l->hard)
        return 1;
    if (l->soft && (long long)pending >= l->soft) {
        long long now = time_ms();
        if (!c->obuf_soft_since)
            c->obuf_soft_since = now;
        else if (now - c->obuf_soft_since >= l->soft_secs * 1000)
            return 1;
    } else {
        c->obuf_soft_since = 0;
    }
    return 0;
}

static void protocol_error(struct client *c, int code)
{
    char msg[128];
    if (code == RESP_E_EXPECTED_DOLLAR)
        snprintf(msg, sizeof(msg), "ERR Protocol error: expected '$', got '%c'", c->parser.bad_char);
    else
        snprintf(msg, sizeof(msg), "ERR Protocol error: %s", resp_strerror(code));
    c->out.muted = 0;
    reply_error(&c->out, msg);
    c->flags |= CF_CLOSE_AFTER_REPLY;
}

static void set_args(struct client *c)
{
    struct resp_parser *p = &c->parser;
    char *base = c->qbuf + c->qpos;
    if (p->argc > c->argv_cap) {
        while (c->argv_cap < p->argc)
            c->argv_cap *= 2;
        c->argv = hk_realloc(c->argv, sizeof(*c->argv) * (size_t)c->argv_cap);
        c->argvlen = hk_realloc(c->argvlen, sizeof(*c->argvlen) * (size_t)c->argv_cap);
        c->kslot = hk_realloc(c->kslot, sizeof(*c->kslot) * (size_t)c->argv_cap);
    }
    for (int i = 0; i < p->argc; i++) {
        c->argv[i] = base + p->argv[i].off;
        c->argvlen[i] = p->argv[i].len;
    }
    c->argc = p->argc;
}

static void qbuf_reserve(struct client *c, size_t want);

/* Pipelined commands: before a batch of them (the one about to run and
 * up to 15 behind it) is executed one by one, their keys (the second
 * argument, where every key-taking command but a few has one) are looked
 * up ahead, in stages for all of them at once (db_prefetch_keys), so that
 * the cache misses of a batch overlap instead of stalling each command in
 * turn.  The batch includes the command about to run: left out, its own
 * chain of misses (lock, table, tags, entry) came first, alone.  A key
 * that is not one (a command with no key there) costs a wasted hash. */
#define PF_BATCH 16
#define PF_MAX_ARGS 64
/* HOTKV_NO_PREFETCH=1 in the environment turns it off (for A/B
 * measurements); read once by workers_start, before any worker runs. */
static int pf_off;

/* A decimal number ended by CRLF at p (before e): its value, and the byte
 * after the CRLF, or NULL. */
static inline __attribute__((always_inline)) const char *peek_num(const char *p, const char *e, long long *v)
{
    long long x = 0;
    const char *d = p, *lim = e - p > 12 ? p + 12 : e;
    unsigned dig;
    while (p < lim && (dig = (unsigned char)*p - '0') <= 9) {
        x = x * 10 + dig;
        p++;
    }
    if (p == d || e - p < 2 || p[0] != '\r' || p[1] != '\n')
        return NULL;
    *v = x;
    return p + 2;
}

/* One complete multibulk command of at most PF_MAX_ARGS arguments at p
 * (before e), without copying anything: its second argument in *key
 * (NULL with one argument) and the byte after it, or NULL when it is
 * incomplete, not multibulk, or longer. */
static const char *peek_cmd(const char *p, const char *e, const char **key, size_t *klen)
{
    long long n, len;
    if (p >= e || *p != '*' || !(p = peek_num(p + 1, e, &n)) || n < 1 || n > PF_MAX_ARGS)
        return NULL;
    *key = NULL;
    for (long long i = 0; i < n; i++) {
        if (p >= e || *p != '$' || !(p = peek_num(p + 1, e, &len)) || len > e - p - 2)
            return NULL;
        if (i == 1) {
            *key = p;
            *klen = (size_t)len;
        }
        p += len + 2;
    }
    return p;
}

/* The keys of the last batch, in query-buffer order, with the slot and
 * hash db_prefetch_keys computed: pf_hint hands each to its command as
 * db_hint.  Valid only within the process_input call that filled it. */
static _Thread_local struct db_pf pf_memo[PF_BATCH];
static _Thread_local int pf_memo_n, pf_memo_i;

/* Prefetch the keys of the complete commands from qbuf offset from on (up
 * to PF_BATCH of them); returns the offset up to which it looked, so the
 * caller comes back only for the commands after those. */
static size_t prefetch_ahead(struct client *c, size_t from)
{
    struct db_pf *k = pf_memo;
    const char *p = c->qbuf + from, *e = c->qbuf + c->qlen, *q = NULL;
    int n = 0, cmds = 0;
    while (cmds < PF_BATCH && (q = peek_cmd(p, e, &k[n].key, &k[n].klen))) {
        cmds++;
        if (k[n].key)
            n++;
        p = q;
    }
    pf_memo_i = 0;
    pf_memo_n = 0;
    if (n > 1) {
        db_prefetch_keys(c->db, k, n);
        pf_memo_n = n;
    }
    return q ? (size_t)(p - c->qbuf) : c->qlen;
}

/* Before a command runs: its key's slot and hash, when the look-ahead
 * computed them (the entry whose address is its second argument's). */
static inline void pf_hint(const struct client *c)
{
    if (pf_memo_i >= pf_memo_n || c->argc < 2)
        return;
    const char *key = c->argv[1];
    while (pf_memo_i < pf_memo_n && pf_memo[pf_memo_i].key < key)
        pf_memo_i++;
    if (pf_memo_i < pf_memo_n && pf_memo[pf_memo_i].key == key && pf_memo[pf_memo_i].klen == c->argvlen[1])
        db_hint = pf_memo[pf_memo_i++];
}

/* Parse and run every complete command in the query buffer. */
static void process_input(struct client *c)
{
    size_t pf_end = 0; /* commands before this offset were prefetched */
    pf_memo_n = 0;
    c->w->now_us = clock_refresh_us();
    c->last_ms = c->w->now_us / 1000;
    while (c->qpos < c->qlen &&
           !(c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP | CF_BLOCKED | CF_POSTPONED | CF_HELD))) {
        if (c->out.len - c->sent > OBUF_PAUSE) {
            if (!(c->flags & CF_READ_PAUSED)) {
                c->flags |= CF_READ_PAUSED;
                ep_mod(c);
            }
            break;
        }
        int rc = resp_parse(&c->parser, c->qbuf + c->qpos, c->qlen - c->qpos);
        if (rc == RESP_INCOMPLETE)
            break;
        if (rc < 0) {
            protocol_error(c, rc);
            c->qpos = c->qlen;
            break;
        }
        if (c->parser.argc > 0) {
            size_t next = c->qpos + c->parser.consumed;
            if (next < c->qlen && c->qpos >= pf_end && !pf_off)
                pf_end = prefetch_ahead(c, c->qpos);
            set_args(c);
            pf_hint(c);
            net_hooks.execute(c);
            db_hint.key = NULL;
            if (HK_UNLIKELY(c->flags & (CF_POSTPONED | CF_HELD))) {
                /* Not run (a pause): it stays in qbuf, parsed again when
                 * the client is resumed (client_unblocked). */
                resp_parser_reset(&c->parser);
                c->parser.authenticated = c->authenticated;
                c->parser.max_bulk = __atomic_load_n(&cfg.proto_max_bulk_len, __ATOMIC_RELAXED);
                break;
            }
            /* maxmemory-clients: recount c after its command (the
             * output-buffer limit first), maybe evict (net/client_evict.h). */
            if (HK_UNLIKELY(cev_enabled())) {
                if (c->out.len > c->sent && !(c->flags & CF_CLOSE_ASAP) && obuf_over_limit(c))
                    client_output_ready(c);
                else
                    cev_client_update(c);
            }
        }
        c->qpos += c->parser.consumed;
        resp_parser_reset(&c->parser);
        c->parser.authenticated = c->authenticated;
        c->parser.max_bulk = __atomic_load_n(&cfg.proto_max_bulk_len, __ATOMIC_RELAXED);
    }
    if (HK_UNLIKELY(c->flags & CF_MASTER))
        net_hooks.master_input_done(c);
    /* Compact: keep only the unparsed tail at the front of the buffer. */
    if (c->qpos > 0) {
        size_t rest = c->qlen - c->qpos;
        if (rest)
            memmove(c->qbuf, c->qbuf + c->qpos, rest);
        c->qlen = rest;
        c->qpos = 0;
    }
    /* A command with many arguments (SADD of 100k members) must not leave
     * megabytes of argv arrays behind for the life of the connection. */
    if (c->argv_cap > ARGV_KEEP && !(c->flags & CF_BLOCKED)) {
        c->argv_cap = 16;
        c->argv = hk_realloc(c->argv, sizeof(*c->argv) * 16);
        c->argvlen = hk_realloc(c->argvlen, sizeof(*c->argvlen) * 16);
        c->kslot = hk_realloc(c->kslot, sizeof(*c->kslot) * 16);
        resp_parser_shrink(&c->parser, 16);
    }
    /* The header of a big argument is in: size the buffer for it now, as
     * Redis does, so the client's memory (CLIENT LIST, maxmemory-clients)
     * shows it from this read on, not from the next. */
    if (c->parser.need > c->qcap && c->parser.bulk_len >= 32 * 1024)
        qbuf_reserve(c, c->parser.need - c->qlen);
    client_output_ready(c);
}

void client_output_ready(struct client *c)
{
    if (c->out.len > c->sent && !(c->flags & CF_PENDING_WRITE)) {
        c->flags |= CF_PENDING_WRITE;
        c->pw_next = c->w->pending_write;
        c->w->pending_write = c;
    } else if ((c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP)) && !(c->flags & CF_PENDING_WRITE)) {
        c->flags |= CF_PENDING_WRITE;
        c->pw_next = c->w->pending_write;
        c->w->pending_write = c;
    }
    if (c->out.len > c->sent && !(c->flags & CF_CLOSE_ASAP) && obuf_over_limit(c)) {
        log_msg(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                (unsigned long long)c->id, c->addr);
        c->flags |= CF_CLOSE_ASAP;
        c->sent = c->out.len; /* drop what is pending */
        if (!(c->flags & CF_PENDING_WRITE)) {
            c->flags |= CF_PENDING_WRITE;
            c->pw_next = c->w->pending_write;
            c->w->pending_write = c;
        }
    }
    if (HK_UNLIKELY(cev_enabled()))
        cev_client_update(c);
}

struct reply *client_push_target(struct client *c)
{
    if (!(c->flags & CF_EXECUTING))
        return &c->out;
    if (!c->pushbuf) {
        c->pushbuf = hk_malloc(sizeof(*c->pushbuf));
        reply_init(c->pushbuf);
    }
    c->pushbuf->resp = c->out.resp;
    return c->pushbuf;
}

void client_push_ready(struct client *c)
{
    if (c->out.len > c->sent && !(c->flags & (CF_PENDING_WRITE | CF_PENDING_PUSH | CF_CLOSE_ASAP))) {
        struct worker *w = c->w;
        c->flags |= CF_PENDING_PUSH;
        c->push_next = NULL;
        if (w->push_tail)
            w->push_tail->push_next = c;
        else
            w->push_head = c;
        w->push_tail = c;
    }
    if (c->out.len > c->sent && !(c->flags & CF_CLOSE_ASAP) && obuf_over_limit(c))
        client_output_ready(c); /* applies the limit: closes after this turn */
    else if (HK_UNLIKELY(cev_enabled()))
        cev_client_update(c);
}

/* Room for want more bytes in the query buffer.  A big argument gets a
 * buffer of its size, not the next power of two (as Redis's querybuf for a
 * big bulk): up to half the bytes saved, and maxmemory-clients counts what
 * the client needs.  Growth stays geometric for a command of several such
 * arguments. */
static void qbuf_reserve(struct client *c, size_t want)
{
    if (c->qcap - c->qlen >= want)
        return;
    if (!c->qcap) {
        /* Given back while idle (qbuf_cron): a fresh one. */
        c->qcap = want > QBUF_CHUNK ? want : QBUF_CHUNK;
        c->qbuf = hk_malloc(c->qcap);
        return;
    }
    size_t nc = c->qcap;
    while (nc - c->qlen < want)
        nc *= 2;
    if (c->parser.need > c->qlen && c->parser.need > 2 * c->qcap)
        nc = c->parser.need;
    c->qbuf = hk_realloc(c->qbuf, nc);
    c->qcap = nc;
}

/* Room for the next read: where it goes and how much fits. */
static size_t read_prep(struct client *c)
{
    size_t want = QBUF_CHUNK;
    if (c->parser.need > c->qlen)
        want = c->parser.need - c->qlen;
    qbuf_reserve(c, want);
    return c->qcap - c->qlen;
}

/* A read into c's query buffer returned n (-errno on error): account for
 * it.  1: there is new input to run; 0: nothing read; -1: c was closed
 * (end of file, an error, or the query buffer limit). */
static int read_done(struct client *c, ssize_t n)
{
    STAT_ADD(c->w->stats.reads, 1);
    if (n <= 0) {
        if (n == -EAGAIN || n == -EINTR)
            return 0;
        client_close(c);
        return -1;
    }
    c->qlen += (size_t)n;
    STAT_ADD(c->w->stats.net_in, (unsigned long long)n);
    if (c->qlen > c->qbuf_peak)
        c->qbuf_peak = c->qlen;
    if (((long long)(c->qlen - c->qpos) > cfg.client_query_buffer_limit ||
         (long long)c->parser.need > cfg.client_query_buffer_limit) &&
        !(c->flags & CF_MASTER)) { /* a master's stream is exempt, as in Redis */
        log_msg(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf initial bytes: \"%.32s\")",
                (unsigned long long)c->id, c->addr, c->qbuf);
        client_close(c);
        return -1;
    }
    return 1;
}

/* One step of c's TLS handshake (it started at accept): 1 done, 0 not yet
 * (c waits for the readiness OpenSSL asked for), -1 failed and c closed.
 * A client protected mode refuses gets its -DENIED now, over TLS. */
static int tls_handshake(struct client *c)
{
    char err[256];
    int want = 0;
    unsigned old = ep_events(c);
    int r = tls_conn_accept(c->tls, &want, err, sizeof(err));
    if (r < 0) {
        log_msg(LL_VERBOSE, "TLS handshake failed: %s (addr=%s laddr=%s)", err, c->addr, c->laddr);
        c->tls_flags |= TLSF_FATAL;
        client_close(c);
        return -1;
    }
    if (r == 0) {
        if (want == TLS_WANT_WRITE)
            c->tls_flags |= TLSF_HS_WANT_WRITE;
        else
            c->tls_flags &= ~TLSF_HS_WANT_WRITE;
    } else {
        c->tls_flags &= ~(TLSF_HANDSHAKE | TLSF_HS_WANT_WRITE);
    }
    if (ep_events(c) != old)
        ep_mod(c);
    if (r == 1 && !(c->tls_flags & TLSF_DENY) &&
        __atomic_load_n(&tls_cfg.auth_clients_user, __ATOMIC_RELAXED) == TLS_AUTH_USER_CN) {
        char cn[256];
        int n = tls_conn_peer_cn(c->tls, cn, sizeof(cn));
        if (n >= 0)
            net_hooks.tls_cert_user(c, cn, (size_t)n);
    }
    if (r == 1 && (c->tls_flags & TLSF_DENY)) {
        STAT_ADD(c->w->stats.rejected_conns, 1);
        reply_raw(&c->out, protected_denied, sizeof(protected_denied) - 1);
        c->flags |= CF_CLOSE_AFTER_REPLY;
        client_output_ready(c);
    }
    return r;
}

/* A TLS client's turn to read: the event it waits for came (epoll) or a
 * busy script serves it.  During the handshake that is the next step of
 * the handshake (and, once done, the request that may have come with it).
 * Reads go through SSL_read into the query buffer, one record per call;
 * the loop goes on while OpenSSL holds bytes it already took from the
 * socket (read-ahead, or a record bigger than the room), since epoll would
 * never report those, and while full records stream in (a big value), up
 * to TLS_READ_BUDGET per turn.  1: new input to run; 0: none; -1: closed. */
static int tls_read(struct client *c)
{
    if (c->tls_flags & TLSF_HANDSHAKE) {
        int r = tls_handshake(c);
        if (r <= 0)
            return r;
        if (c->flags & CF_CLOSE_AFTER_REPLY)
            return 0; /* refused (protected mode) */
    }
    if (HK_UNLIKELY(c->tls_flags & TLSF_READ_WANT_WRITE)) {
        c->tls_flags &= ~TLSF_READ_WANT_WRITE;
        ep_mod(c);
    }
    size_t total = 0;
    int got = 0;
    for (;;) {
        size_t room = read_prep(c);
        int want = 0;
        ssize_t n = tls_conn_read(c->tls, c->qbuf + c->qlen, room, &want);
        if (n > 0) {
            if (read_done(c, n) < 0)
                return -1;
            got = 1;
            total += (size_t)n;
            if (tls_conn_has_pending(c->tls))
                continue;
            if ((size_t)n < TLS_RECORD_MAX || total >= TLS_READ_BUDGET)
                break;
            continue;
        }
        if (n == 0) {
            read_done(c, -EAGAIN);
            if (want == TLS_WANT_WRITE) {
                c->tls_flags |= TLSF_READ_WANT_WRITE;
                ep_mod(c);
            }
            break;
        }
        c->tls_flags |= TLSF_FATAL;
        read_done(c, 0); /* closes */
        return -1;
    }
    return got;
}

/* Whether an epoll event makes a TLS client's read turn (tls_read). */
static int tls_read_event(const struct client *c, unsigned events)
{
    if (c->tls_flags & (TLSF_HANDSHAKE | TLSF_READ_WANT_WRITE))
        return 1;
    return (events & EPOLLIN) && !(c->flags & CF_READ_PAUSED);
}

/* Whether an epoll event makes a client's write turn (client_write). */
static int write_event(const struct client *c, unsigned events)
{
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
        return 1;
    return c->tls && (c->tls_flags & TLSF_WRITE_WANT_READ) && (events & EPOLLIN);
}

static void client_read(struct client *c)
{
    if (c->tls) {
        if (tls_read(c) == 1)
            process_input(c);
        return;
    }
    size_t room = read_prep(c);
    ssize_t n = read(c->fd, c->qbuf + c->qlen, room);
    if (read_done(c, n < 0 ? -errno : n) == 1)
        process_input(c);
}

/* ------------------------------------------------- io_uring batching ---
 * epoll still says which sockets are ready.  With io-uring yes (the
 * default) the reads of one loop turn, and then its replies, reach the
 * kernel as one io_uring_enter each instead of one read(2) or write(2) per
 * client: at pipeline 1 the syscall entry and exit are a large share of a
 * command's cost (docs/architecture.md, "io_uring batching").
 *
 * Every operation is MSG_DONTWAIT, so the kernel runs it inline during
 * the enter (a socket with nothing to give, or no room, completes with
 * -EAGAIN at once; nothing waits), and ring_run() reaps every completion
 * before it returns.  So no operation is ever in flight while a command
 * runs: a query buffer may move and a client may be freed exactly as with
 * plain syscalls.  A kernel or container that refuses io_uring (or
 * io-uring no) leaves the worker on read(2)/write(2). */
#define RING_DEPTH 256          /* = the most events one epoll_wait returns */
#define RING_NOT_RUN (-((ssize_t)1 << 40))

struct ring_op {
    struct client *c;
    ssize_t res;     /* bytes, or -errno; RING_NOT_RUN: do it with a syscall */
    unsigned events; /* epoll's, for a read turn */
    int state;       /* read turn: 0 no read, 1 read, 2 input to run, -1 closed */
};

/* The loop turn in progress (turn_io): its clients whose input was read
 * but not yet run have state 2.  A busy script's nested loop runs them
 * (worker_process_events_busy): their bytes are already out of the
 * socket, so its own epoll_wait would never report them. */
static _Thread_local struct ring_op *turn_ops;
static _Thread_local int turn_n;

static _Thread_local struct io_uring ring;
static _Thread_local int ring_on, ring_made;
/* TLS clients' ring reads: one TLS_SLOT slot per op of a turn, made when
 * the worker first reads a TLS client (1 MB); a request bigger than a
 * slot reads the rest with read(2) (tls_conn_feed, net/tls.h). */
#define TLS_SLOT 4096
static _Thread_local char *tls_slots;
atomic_int io_uring_workers; /* workers whose ring is on (INFO server) */

static void ring_init(struct worker *w)
{
    if (!cfg.io_uring)
        return;
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_SINGLE_ISSUER; /* only this thread submits (6.0+) */
    int r = io_uring_queue_init_params(RING_DEPTH, &ring, &p);
    if (r == -EINVAL) {
        memset(&p, 0, sizeof(p));
        r = io_uring_queue_init_params(RING_DEPTH, &ring, &p);
    }
    if (r < 0) {
        if (w->id == 0)
            log_msg(LL_NOTICE, "io_uring unavailable (%s): workers use read(2) and write(2)", strerror(-r));
        return;
    }
    ring_on = ring_made = 1;
    atomic_fetch_add(&io_uring_workers, 1);
}

static void ring_exit(void)
{
    if (ring_on) {
        atomic_fetch_sub(&io_uring_workers, 1);
        ring_on = 0;
    }
    if (ring_made) {
        io_uring_queue_exit(&ring);
        ring_made = 0;
    }
    hk_free(tls_slots);
    tls_slots = NULL;
}

/* The operations queued for ops[0..n) (user_data: the index) go to the
 * kernel; every result lands in its op's res.  If the ring fails (it
 * should not), the worker drops back to syscalls for good, and the ops
 * not submitted keep RING_NOT_RUN. */
static void ring_run(struct ring_op *ops, int queued)
{
    int submitted = 0;
    while (submitted < queued) {
        int r = io_uring_submit(&ring);
        if (r > 0) {
            submitted += r;
            continue;
        }
        if (r == -EINTR)
            continue;
        log_msg(LL_WARNING, "io_uring submit failed (%s): workers use read(2) and write(2) from now on",
                strerror(r < 0 ? -r : EIO));
        ring_on = 0; /* the unsubmitted entries are never entered; the ring goes at exit */
        atomic_fetch_sub(&io_uring_workers, 1);
        break;
    }
    for (int got = 0; got < submitted;) {
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&ring, &cqe);
        if (e == -EINTR)
            continue;
        if (e < 0) {
            /* Buffers the kernel may still write: no safe way on. */
            log_msg(LL_WARNING, "io_uring wait failed (%s)", strerror(-e));
            abort();
        }
        ops[cqe->user_data].res = cqe->res;
        io_uring_cqe_seen(&ring, cqe);
        got++;
    }
}

/* One loop turn's client events: every read first (one enter), accounted
 * before any command runs; then, in event order, the write a full socket
 * waited for and the new input.  Running client i's commands cannot free
 * client j: other clients are only flagged (CF_CLOSE_ASAP) and closed by
 * flush_pending, and a busy script's nested loop defers closes. */
static void turn_io(struct ring_op *ops, int n)
{
    int queued = 0;
    for (int i = 0; i < n; i++) {
        struct client *c = ops[i].c;
        ops[i].state = 0;
        if (HK_UNLIKELY(c->tls != NULL)) {
            /* TLS: the ciphertext comes in with the turn's other reads,
             * into a slot of tls_slots, and SSL_read (tls_read, below)
             * takes it from there before it reads the socket itself.  A
             * handshake, or a read that waits for the socket to be
             * writable, goes straight to tls_read. */
            if (tls_read_event(c, ops[i].events)) {
                ops[i].state = 1;
                ops[i].res = RING_NOT_RUN;
                if (ring_on && !(c->tls_flags & (TLSF_HANDSHAKE | TLSF_READ_WANT_WRITE)) && !tls_conn_fed(c->tls) &&
                    (tls_slots || (tls_slots = hk_malloc((size_t)RING_DEPTH * TLS_SLOT)))) {
                    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                    io_uring_prep_recv(sqe, c->fd, tls_slots + (size_t)i * TLS_SLOT, TLS_SLOT, MSG_DONTWAIT);
                    sqe->user_data = (uint64_t)i;
                    queued++;
                }
            }
            continue;
        }
        if (!(ops[i].events & EPOLLIN) || (c->flags & CF_READ_PAUSED))
            continue;
        ops[i].state = 1;
        ops[i].res = RING_NOT_RUN;
        size_t room = read_prep(c);
        if (ring_on) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring); /* n <= RING_DEPTH: never NULL */
            io_uring_prep_recv(sqe, c->fd, c->qbuf + c->qlen, room, MSG_DONTWAIT);
            sqe->user_data = (uint64_t)i;
            queued++;
        }
    }
    if (queued)
        ring_run(ops, queued);
    for (int i = 0; i < n; i++) {
        if (ops[i].state != 1)
            continue;
        struct client *c = ops[i].c;
        ssize_t r = ops[i].res;
        if (HK_UNLIKELY(c->tls != NULL)) {
            /* Nothing fed when the recv failed or found nothing: the read
             * (EOF, error or EAGAIN) is then SSL_read's own. */
            if (r != RING_NOT_RUN && r > 0)
                tls_conn_feed(c->tls, tls_slots + (size_t)i * TLS_SLOT, (size_t)r);
            int rc = tls_read(c);
            if (rc >= 0 && r != RING_NOT_RUN)
                tls_conn_keep(c->tls); /* the slot is reused next turn */
            ops[i].state = rc < 0 ? -1 : rc == 1 ? 2 : 0;
            continue;
        }
        if (r == RING_NOT_RUN) {
            r = read(c->fd, c->qbuf + c->qlen, c->qcap - c->qlen);
            if (r < 0)
                r = -errno;
        }
        int rc = read_done(c, r);
        ops[i].state = rc < 0 ? -1 : rc == 1 ? 2 : 0;
    }
    turn_ops = ops;
    turn_n = n;
    for (int i = 0; i < n; i++) {
        struct client *c = ops[i].c;
        int run = ops[i].state == 2;
        if (ops[i].state < 0)
            continue;
        ops[i].state = 0; /* taken (see worker_process_events_busy) */
        if (write_event(c, ops[i].events)) {
            int rc = client_write(c);
            if (rc < 0)
                continue;
            run |= rc == 1;
        }
        if (run)
            process_input(c);
    }
    turn_ops = NULL;
    turn_n = 0;
}

/* Out of file descriptors (EMFILE/ENFILE): a level-triggered listener
 * would report the same pending connection on every epoll_wait, a busy
 * loop.  Each worker keeps one spare descriptor: it gives it up to take
 * the connection, refuses it with Redis's maxclients error and reopens the
 * spare.  Without a spare (another thread took the descriptor meanwhile)
 * the listener leaves epoll until the next cron tick (accept_rearm). */
static _Thread_local unsigned accept_paused; /* bit i: w->lfds[i] off epoll; bit 16 + i: w->tls_lfds[i]; bit 31: unix_lfd */
#define UNIX_PAUSED (1u << 31)
#define TLS_PAUSED_BIT 16

static void unix_listen_arm(struct worker *w)
{
    struct epoll_event ev;
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.u64 = TAG_UNIX;
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, unix_lfd, &ev);
}

static void accept_log_error(int e)
{
    static _Atomic long long last_ms;
    long long now = time_ms(), prev = atomic_load_explicit(&last_ms, memory_order_relaxed);
    if (now - prev >= 1000 && atomic_compare_exchange_strong(&last_ms, &prev, now))
        log_msg(LL_WARNING, "Accepting client connection: %s", strerror(e));
}

static void accept_rearm(struct worker *w)
{
    if ((accept_paused & UNIX_PAUSED) && unix_lfd >= 0)
        unix_listen_arm(w);
    accept_paused &= ~UNIX_PAUSED;
    for (int i = 0; accept_paused && i < w->nlfd; i++) {
        if (!(accept_paused & (1u << i)))
            continue;
        struct epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t)(8 + i);
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfds[i], &ev); /* EEXIST after a rebind: fine */
    }
    for (int i = 0; accept_paused && i < w->ntls_lfd && i < 15; i++) {
        if (!(accept_paused & (1u << (TLS_PAUSED_BIT + i))))
            continue;
        struct epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t)(TAG_TLS_LISTEN + i);
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tls_lfds[i], &ev);
    }
    accept_paused = 0;
}

static void do_accept(struct worker *w, int lfd, int tls)
{
    if (accept_spare_fd < 0)
        accept_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof(sa);
        int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM)
                return; /* EAGAIN (drained), or an aborted connection */
            accept_log_error(e);
            if (accept_spare_fd >= 0) {
                close(accept_spare_fd);
                fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
                e = fd < 0 ? errno : 0;
                if (fd >= 0) {
                    STAT_ADD(w->stats.rejected_conns, 1);
                    if (tls)
                        close(fd); /* no handshake: nothing can be said */
                    else
                        refuse(fd, "-ERR max number of clients reached\r\n");
                }
                accept_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                    continue;
                if (e == EAGAIN || e == EWOULDBLOCK)
                    return;
            }
            if (lfd == unix_lfd) {
                epoll_ctl(w->epfd, EPOLL_CTL_DEL, lfd, NULL);
                accept_paused |= UNIX_PAUSED;
                return;
            }
            for (int j = 0; j < w->nlfd; j++) {
                if (w->lfds[j] == lfd && j < 16) {
                    epoll_ctl(w->epfd, EPOLL_CTL_DEL, lfd, NULL);
                    accept_paused |= 1u << j;
                }
            }
            for (int j = 0; j < w->ntls_lfd; j++) {
                if (w->tls_lfds[j] == lfd && j < 15) {
                    epoll_ctl(w->epfd, EPOLL_CTL_DEL, lfd, NULL);
                    accept_paused |= 1u << (TLS_PAUSED_BIT + j);
                }
            }
            return;
        }
        client_new(w, fd, &sa, tls);
    }
}

/* A listener's epoll tag: accept on it. */
static void accept_tag(struct worker *w, uint64_t d)
{
    if (d == TAG_UNIX)
        do_accept(w, unix_lfd, 0);
    else if (d >= TAG_TLS_LISTEN)
        do_accept(w, w->tls_lfds[d - TAG_TLS_LISTEN], 1);
    else
        do_accept(w, w->lfds[d - 8], 0);
}

/* The job queue is FIFO and run_jobs() pops one job at a time, so a job
 * that waits for a slot lock may run the jobs queued after it (see
 * jobs_pending_hook) without reordering anything: one publisher's messages
 * still reach each worker's subscribers in order. */
static void job_push(struct worker *w, struct job *j)
{
    uint64_t one = 1;
    j->next = NULL;
    pthread_mutex_lock(&w->jlock);
    if (w->jobs_tail)
        w->jobs_tail->next = j;
    else
        __atomic_store_n(&w->jobs, j, __ATOMIC_RELEASE);
    w->jobs_tail = j;
    pthread_mutex_unlock(&w->jlock);
    if (write(w->efd, &one, sizeof(one)) < 0) {
        /* eventfd counter overflow cannot happen with one-increments. */
    }
}

static void run_jobs(struct worker *w)
{
    uint64_t v;
    if (read(w->efd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing was signalled; the list may still hold jobs. */
    }
    for (;;) {
        pthread_mutex_lock(&w->jlock);
        struct job *j = w->jobs;
        if (j) {
            __atomic_store_n(&w->jobs, j->next, __ATOMIC_RELAXED);
            if (!j->next)
                w->jobs_tail = NULL;
        }
        pthread_mutex_unlock(&w->jlock);
        if (!j)
            return;
        j->fn(w, j->arg);
        if (j->remaining)
            atomic_fetch_sub(j->remaining, 1);
        hk_free(j);
    }
}

/* Slot-lock waits run this worker's jobs (db.h db_wait_*): a worker that
 * holds every slot lock may wait in worker_broadcast() for us (CLIENT LIST
 * inside EXEC), so nobody may spin on a slot lock without serving jobs. */
static int jobs_pending_hook(void)
{
    struct worker *w = cur_worker;
    return w && __atomic_load_n(&w->jobs, __ATOMIC_ACQUIRE) != NULL;
}

static void run_jobs_hook(void)
{
    if (cur_worker)
        run_jobs(cur_worker);
}

void worker_broadcast(void (*fn)(struct worker *, void *), void *arg)
{
    atomic_int remaining;
    struct worker *self = cur_worker;
    atomic_init(&remaining, 0);
    for (int i = 0; i < nworkers; i++) {
        struct worker *w = &workers[i];
        if (w == self)
            continue;
        struct job *j = hk_malloc(sizeof(*j));
        j->fn = fn;
        j->arg = arg;
        j->remaining = &remaining;
        atomic_fetch_add(&remaining, 1);
        job_push(w, j);
    }
    if (self)
        fn(self, arg);
    while (atomic_load(&remaining) > 0) {
        /* Serve our own queue while waiting, so two workers broadcasting at
         * once cannot wait on each other. */
        if (self)
            run_jobs(self);
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

void worker_post(struct worker *w, void (*fn)(struct worker *, void *), void *arg)
{
    struct job *j = hk_malloc(sizeof(*j));
    j->fn = fn;
    j->arg = arg;
    j->remaining = NULL;
    job_push(w, j);
}

void client_unblocked(struct client *c)
{
    if (c->flags & CF_RESUME)
        return;
    c->flags |= CF_RESUME;
    c->resume_next = c->w->resume;
    c->w->resume = c;
}

/* Unblocked clients: run what they pipelined behind the blocking command
 * and send the reply. */
static void run_resumed(struct worker *w)
{
    while (w->resume) {
        struct client *c = w->resume;
        w->resume = c->resume_next;
        c->flags &= ~CF_RESUME;
        process_input(c);
    }
}

/* Send the output of clients ops[0..n).c in one enter; whatever a send
 * left (a partial write, a full socket, nothing to send, a client to
 * close) is finished by client_write as with plain syscalls.  Client i's
 * commands (resumed input) may queue client j again (CLIENT KILL): j is
 * then on the pending list with CF_PENDING_WRITE, and client_close
 * unlinks it, as in the plain loops. */
static void ring_send(struct ring_op *ops, int n)
{
    int queued = 0;
    for (int i = 0; i < n; i++) {
        struct client *c = ops[i].c;
        ops[i].state = 0;
        if (c->sent < c->out.len && !c->tls) { /* TLS: SSL_write in client_write */
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            io_uring_prep_send(sqe, c->fd, c->out.buf + c->sent, c->out.len - c->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            sqe->user_data = (uint64_t)i;
            ops[i].state = 1;
            ops[i].res = RING_NOT_RUN;
            queued++;
        }
    }
    if (queued)
        ring_run(ops, queued);
    /* Every send is accounted before any client runs input: a busy
     * script's nested loop may write to a later client of the batch. */
    for (int i = 0; i < n; i++) {
        struct client *c = ops[i].c;
        ssize_t r = ops[i].res;
        if (ops[i].state != 1 || r == RING_NOT_RUN)
            continue;
        STAT_ADD(c->w->stats.writes, 1);
        if (r > 0) {
            c->sent += (size_t)r;
            STAT_ADD(c->w->stats.net_out, (unsigned long long)r);
        } else if (r != -EAGAIN && r != -EINTR) {
            client_close(c);
            ops[i].state = -1;
        }
    }
    for (int i = 0; i < n; i++)
        if (ops[i].state >= 0 && client_write(ops[i].c) == 1)
            process_input(ops[i].c);
}

/* The turn's replies, RING_DEPTH clients per enter. */
static void flush_pending_ring(struct worker *w)
{
    struct ring_op ops[RING_DEPTH];
    while (w->pending_write && ring_on) {
        int n = 0;
        net_before_reply(); /* the replies may not leave before the AOF has their writes */
        while (w->pending_write && n < RING_DEPTH) {
            struct client *c = w->pending_write;
            w->pending_write = c->pw_next;
            c->flags &= ~CF_PENDING_WRITE;
            ops[n++].c = c;
        }
        ring_send(ops, n);
    }
}

static void flush_pending(struct worker *w)
{
    if (ring_on)
        flush_pending_ring(w);
    while (w->pending_write) {
        struct client *c = w->pending_write;
        w->pending_write = c->pw_next;
        c->flags &= ~CF_PENDING_WRITE;
        /* 1: the backlog drained and reading was paused: run the commands
         * still waiting in the query buffer. */
        if (client_write(c) == 1)
            process_input(c);
    }
}

/* A script on this worker has run past busy-reply-threshold (called from
 * its Lua hook, every ~10 ms): serve the worker's other connections without
 * blocking, as Redis's processEventsWhileBlocked, so they get BUSY (or run
 * SCRIPT KILL, FUNCTION KILL/STATS, SHUTDOWN, AUTH, ... which are
 * CMD_ALLOW_BUSY).  The running client is never read, written or freed;
 * clients that close meanwhile are only flagged (see client_close). */
void worker_process_events_busy(struct worker *w, struct client *running)
{
    struct epoll_event evs[64];
    long long saved_time = db_cmd_time_ms, saved_time_us = db_cmd_time_us;
    int saved_notouch = db_notouch;
    busy_nesting++;
    int n = epoll_wait(w->epfd, evs, 64, 0);
    for (int i = 0; i < n; i++) {
        uint64_t d = evs[i].data.u64;
        if (is_tag(d)) {
            if (d == TAG_EVENT)
                run_jobs(w);
            else
                accept_tag(w, d);
            continue;
        }
        struct client *c = evs[i].data.ptr;
        if (c == running || (c->flags & CF_CLOSE_ASAP))
            continue;
        if (write_event(c, evs[i].events)) {
            int rc = client_write(c);
            if (rc < 0 || (c->flags & CF_CLOSE_ASAP))
                continue;
            if (rc == 1)
                process_input(c);
        }
        if (c->flags & CF_CLOSE_ASAP)
            continue;
        if (c->tls ? tls_read_event(c, evs[i].events) : (evs[i].events & EPOLLIN) && !(c->flags & CF_READ_PAUSED))
            client_read(c);
    }
    /* Input the outer turn read for its later clients (turn_io). */
    for (int i = 0; i < turn_n; i++) {
        struct client *c = turn_ops[i].c;
        if (turn_ops[i].state != 2 || c == running || (c->flags & CF_CLOSE_ASAP))
            continue;
        turn_ops[i].state = 0;
        process_input(c);
    }
    /* Write the replies, keeping the running client (and the ones to close)
     * for the outer loop turn. */
    net_before_reply();
    struct client *list = w->pending_write, *keep = NULL;
    w->pending_write = NULL;
    while (list) {
        struct client *c = list;
        list = c->pw_next;
        if (c == running || (c->flags & CF_CLOSE_ASAP)) {
            c->pw_next = keep;
            keep = c;
            continue;
        }
        c->flags &= ~CF_PENDING_WRITE;
        if (client_write(c) == 1 && !(c->flags & CF_CLOSE_ASAP))
            process_input(c);
    }
    while (keep) {
        struct client *c = keep;
        keep = c->pw_next;
        c->pw_next = w->pending_write;
        w->pending_write = c;
    }
    busy_nesting--;
    db_cmd_time_ms = saved_time;
    db_cmd_time_us = saved_time_us;
    db_notouch = saved_notouch;
}

/* Pushed output (pub/sub deliveries) is written FIFO, at most `budget`
 * clients per loop turn after every command reply: a fan-out that queued
 * output for thousands of subscribers is written over several turns, with
 * the other clients' commands served in between (the loop polls without
 * sleeping while pushes are pending). */
#define PUSH_BUDGET 128
static void flush_push(struct worker *w, int budget)
{
    struct ring_op ops[RING_DEPTH];
    while (w->push_head && budget > 0 && ring_on) {
        int n = 0;
        while (w->push_head && budget > 0 && n < RING_DEPTH) {
            struct client *c = w->push_head;
            w->push_head = c->push_next;
            if (!w->push_head)
                w->push_tail = NULL;
            c->flags &= ~CF_PENDING_PUSH;
            budget--;
            if (c->flags & CF_PENDING_WRITE)
                continue; /* written with the command replies */
            ops[n++].c = c;
        }
        net_before_reply();
        ring_send(ops, n);
    }
    while (w->push_head && budget-- > 0) {
        struct client *c = w->push_head;
        w->push_head = c->push_next;
        if (!w->push_head)
            w->push_tail = NULL;
        c->flags &= ~CF_PENDING_PUSH;
        if (c->flags & CF_PENDING_WRITE)
            continue; /* written with the command replies */
        if (client_write(c) == 1)
            process_input(c);
    }
}

/* ------------------------------------------------------ active expiry ---
 * Each worker sweeps its share of the slots (db_active_expire, db.h),
 * adaptive as Redis's active-expire-effort (e = 1..10, default 1):
 * - every cron tick (1000/hz ms) a probe: a short pass that stops after a
 *   batch of 20 + 5e keys with a TTL of which at most 10 - e % had expired,
 *   so a keyspace with few expired keys costs about one slot per tick;
 * - a pass that runs out of time among expired keys marks the worker
 *   behind: it then sweeps in slices of 100 + 25e us between turns of its
 *   event loop, back to back while no client needs it, and at most
 *   75 + 2e % of the time while clients are served (Redis: a 25 + 2e %
 *   slow cycle plus fast cycles, at most half of the time, before
 *   sleeping).  A request waits for one slice at most, never for a whole
 *   slow cycle; the worker is no longer behind once a pass ends on a clean
 *   batch or covers its whole range;
 * - a worker behind whose pass found slots locked by another thread (a
 *   command holding every lock: DBSIZE, INFO keyspace, FLUSHALL...) stays
 *   behind but retries 1 ms later rather than back to back. */
static _Thread_local int exp_behind, exp_retry;
static _Thread_local long long exp_next_us; /* mono_us: earliest next slice while serving */

static int expire_effort(void)
{
    int e = __atomic_load_n(&cfg.active_expire_effort, __ATOMIC_RELAXED);
    return e < 1 ? 1 : e > 10 ? 10 : e;
}

static void expire_slice(struct worker *w)
{
    unsigned per = (NSLOTS + (unsigned)nworkers - 1) / (unsigned)nworkers;
    unsigned from = (unsigned)w->id * per, to = from + per > NSLOTS ? NSLOTS : from + per;
    int e = expire_effort();
    struct expire_pass p = {.budget_us = 100 + 25 * e, .batch = 20 + 5 * (unsigned)e, .stale_pct = 10 - (unsigned)e};
    if (from >= to || !__atomic_load_n(&cfg.active_expire, __ATOMIC_RELAXED)) {
        exp_behind = exp_retry = 0;
        return;
    }
    long long t0 = mono_us();
    db_active_expire(from, to, &w->expire_cursor, &p);
    long long t1 = mono_us();
    struct db_stats *ds = &w->stats.db;
    STAT_ADD(ds->expire_us, (unsigned long long)(t1 - t0));
    latency_sample("expire-cycle", (t1 - t0) / 1000); /* base/latency_monitor.h */
    if (p.timed_out)
        STAT_ADD(ds->expire_time_cap, 1);
    if (p.checked > 0) {
        /* Redis's expired_stale_perc: 5% this pass, 95% the past. */
        double cur = (double)p.expired * 1e6 / (double)p.checked;
        double avg = cur * 0.05 + (double)STAT_GET(ds->expired_stale_ppm) * 0.95;
        STAT_SET(ds->expired_stale_ppm, (unsigned long long)(avg + 0.5));
    }
    exp_retry = !p.timed_out && p.busy && (exp_behind || p.expired);
    exp_behind = p.timed_out || exp_retry;
    exp_next_us = exp_retry ? t1 + 1000 : t0 + (t1 - t0) * 100 / (75 + 2 * e);
}

/* The event loop's turn is over: sweep a slice if the worker is behind,
 * now if the turn had no events (idle), else once the duty cap allows. */
static void expire_turn(struct worker *w, int idle)
{
    if (exp_behind && ((idle && !exp_retry) || mono_us() >= exp_next_us))
        expire_slice(w);
}

/* epoll_wait's timeout while behind: none, or until the retry is due. */
static int expire_timeout(int timeout)
{
    if (!exp_behind)
        return timeout;
    if (!exp_retry)
        return 0;
    long long ms = (exp_next_us - mono_us() + 999) / 1000;
    return ms < timeout ? (int)(ms > 0 ? ms : 0) : timeout;
}

/* Query buffers follow use, as Redis's clientsCron does: an empty buffer
 * of a client idle for over 2 seconds is given back (an idle connection
 * then costs no 16 KB), and an empty one over 32 KB that is more than
 * twice the largest input seen since the last pass is cut to that peak
 * (not under QBUF_CHUNK, the read size).  A client idle for over 2
 * seconds in the middle of a command (the header of a big argument sized
 * the buffer for it, and the rest does not come) keeps only what it sent,
 * when that frees 4 KB or more: the parser holds offsets, not pointers,
 * and the buffer grows again as the bytes arrive.  A postponed, held,
 * blocked or executing client's command points into its buffer: never
 * touched. */
static void qbuf_cron(struct client *c, long long now)
{
    size_t peak = c->qbuf_peak;
    c->qbuf_peak = c->qlen;
    if (!c->qcap || c->blocked || (c->flags & (CF_POSTPONED | CF_HELD | CF_EXECUTING)))
        return;
    if (c->qlen) {
        if (now - c->last_ms > 2000 && c->qpos == 0 && c->qcap - c->qlen >= 4096 && !(c->flags & CF_MASTER)) {
            c->qbuf = hk_realloc(c->qbuf, c->qlen);
            c->qcap = c->qlen;
        }
        return;
    }
    if (now - c->last_ms > 2000) {
        hk_free(c->qbuf);
        c->qbuf = qbuf_none;
        c->qcap = 0;
    } else if (c->qcap > 2 * QBUF_CHUNK && c->qcap / 2 > peak) {
        size_t nc = peak > QBUF_CHUNK ? peak : QBUF_CHUNK;
        hk_free(c->qbuf);
        c->qbuf = hk_malloc(nc);
        c->qcap = nc;
    }
}

static void cron(struct worker *w)
{
    if (atomic_load_explicit(&cron_paused, memory_order_relaxed))
        return;
    long long now = time_ms();
    /* Worker 0 advances the LRU clock for everybody. */
    if (w->id == 0) {
        /* Stored only when they change (every second / minute): the line
         * is read by every worker on every access. */
        uint32_t lru = lru_clock(), lfu = lfu_minutes_clock();
        if (atomic_load_explicit(&lru_clock_now, memory_order_relaxed) != lru)
            atomic_store_explicit(&lru_clock_now, lru, memory_order_relaxed);
        if (atomic_load_explicit(&lfu_minutes_now, memory_order_relaxed) != lfu)
            atomic_store_explicit(&lfu_minutes_now, lfu, memory_order_relaxed);
    }
    /* Idle timeout. */
    int idle_timeout = __atomic_load_n(&cfg.timeout, __ATOMIC_RELAXED); /* CONFIG SET on any thread */
    if (idle_timeout > 0) {
        struct client *c = w->clients, *n;
        for (; c; c = n) {
            n = c->next;
            /* Blocked and subscribed clients wait for others: never idle. */
            if (now - c->last_ms > (long long)idle_timeout * 1000 && c->out.len == c->sent && !c->blocked &&
                !(c->flags & (CF_PUBSUB | CF_MASTER))) {
                log_msg(LL_VERBOSE, "Closing idle client");
                client_close(c);
            }
        }
    }
    /* Soft output-buffer limits need time to pass even without new input;
     * query buffers are resized to what their clients use. */
    for (struct client *c = w->clients, *n; c; c = n) {
        n = c->next;
        if (c->out.len > c->sent && obuf_over_limit(c)) {
            client_close(c);
            continue;
        }
        qbuf_cron(c, now);
    }
    /* Active expiry: the probe (a worker behind sweeps between turns). */
    if (!exp_behind)
        expire_slice(w);
    /* The features' cron (cmd/loop.c: eviction, tracking, the memory
     * figures of this worker's clients). */
    net_hooks.cron(w);
    /* maxmemory-clients: recount every client, evict if over. */
    if (cev_enabled())
        cev_worker_cron(w);
    /* Listeners paused for want of file descriptors (do_accept). */
    if (accept_paused)
        accept_rearm(w);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event evs[RING_DEPTH];
    struct ring_op ops[RING_DEPTH];
    char name[16];

    cur_worker = w;
    atomic_store(&w->ktid, (int)syscall(SYS_gettid));
    db_tstats = &w->stats.db;
    net_hooks.thread_start(w); /* e.g. this worker's change counter (persist/prop.h) */
    mem_thread_register();  /* this worker's allocator counters (base/mem.h) */
    slab_thread_persistent(); /* it keeps its slab heap (base/slab.h) */
    snprintf(name, sizeof(name), "hotkv-w%d", w->id);
    pthread_setname_np(pthread_self(), name);
    w->next_cron_ms = time_ms();
    ring_init(w);

    while (!atomic_load_explicit(&server_shutdown, memory_order_relaxed)) {
        long long now = time_ms();
        int timeout = (int)(w->next_cron_ms - now);
        long long bt = net_hooks.next_timeout(w, now);
        if (bt >= 0 && bt < timeout)
            timeout = (int)bt;
        timeout = expire_timeout(timeout);
        if (w->resume || w->push_head || w->adopt_head)
            timeout = 0;
        if (timeout < 0)
            timeout = 0;
        int n = epoll_wait(w->epfd, evs, RING_DEPTH, timeout), nops = 0;
        for (int i = 0; i < n; i++) {
            uint64_t d = evs[i].data.u64;
            if (is_tag(d)) {
                if (d == TAG_EVENT)
                    run_jobs(w);
                else
                    accept_tag(w, d);
                continue;
            }
            ops[nops].c = evs[i].data.ptr;
            ops[nops].events = evs[i].events;
            nops++;
        }
        turn_io(ops, nops);
        run_adopted(w);
        run_resumed(w);
        net_before_reply(); /* one group commit for this turn's replies */
        flush_pending(w);
        flush_push(w, PUSH_BUDGET);
        expire_turn(w, n == 0);
        /* What this turn freed or allocated outside commands (a closed
         * client's buffers, replies written out) reaches the shared total
         * now: the other workers' maxmemory checks read it, and an idle
         * worker may not run a command for a long time (base/mem.h). */
        mem_publish();
        slab_thread_idle(); /* blocks other threads freed come back (base/slab.h) */
        now = time_ms();
        if (now >= w->next_cron_ms) {
            cron(w);
            w->next_cron_ms = now + 1000 / (cfg.hz > 0 ? cfg.hz : 10);
        }
    }
    /* Flush what we can and close every client. */
    flush_pending(w);
    flush_push(w, INT_MAX);
    while (w->clients)
        client_close(w->clients);
    /* Keep serving jobs until every worker has left its loop: a worker
     * that was inside worker_broadcast() when shutdown began is still
     * waiting for us to run its job. */
    atomic_fetch_add(&workers_exited, 1);
    while (atomic_load(&workers_exited) < nworkers) {
        struct timespec ts = {0, 1000000};
        run_jobs(w);
        nanosleep(&ts, NULL);
    }
    drop_adopted(w);
    ring_exit();
    net_hooks.thread_exit(w);
    mem_thread_unregister();
    return NULL;
}

/* Listening sockets: one per worker per address, SO_REUSEPORT.
 *
 * SO_REUSEPORT would also let a second process of the same user join the
 * group and take a share of the connections, so before the workers' sockets
 * are made, a probe socket binds the address without SO_REUSEPORT (with
 * SO_REUSEADDR, so TIME_WAIT leftovers of an earlier run do not count):
 * that bind fails with EADDRINUSE if anything listens there, a reuseport
 * group included, and the start-up fails as Redis's does.  The probe stays
 * bound until the workers listen.  Residual race: two servers whose probes
 * overlap (both bound, neither listening yet, a window of microseconds)
 * can both pass; see docs/architecture.md "Protection limits". */
static int bind_addr(const char *addr, int port, int reuseport, int dolisten)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int fd, one = 1;
    memset(&ss, 0, sizeof(ss));
    if (strchr(addr, ':')) {
        struct sockaddr_in6 *s6 = (void *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1) {
            errno = EINVAL;
            return -1;
        }
        sl = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (void *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        if (strcmp(addr, "*") == 0)
            s4->sin_addr.s_addr = htonl(INADDR_ANY);
        else if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1) {
            errno = EINVAL;
            return -1;
        }
        sl = sizeof(*s4);
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuseport)
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || (dolisten && listen(fd, cfg.tcp_backlog) < 0)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int listen_one(const char *addr, int port)
{
    return bind_addr(addr, port, 1, 1);
}

static int probe_addr(const char *addr, int port)
{
    return bind_addr(addr, port, 0, 0);
}

/* An optional ("-") address may be missing on this host; any other
 * failure (EADDRINUSE above all) is fatal for it too, as in Redis. */
static int optional_skip(int e)
{
    return e == EADDRNOTAVAIL || e == EAFNOSUPPORT || e == EPROTONOSUPPORT || e == ENOPROTOOPT ||
           e == ESOCKTNOSUPPORT || e == EPFNOSUPPORT || e == EINVAL;
}

/* maxclients needs one descriptor per client plus the server's own (files,
 * epoll, eventfds, io_uring, listeners): the soft RLIMIT_NOFILE is raised
 * as far as allowed (up to maxclients + FD_RESERVED), and the clients it
 * leaves room for (fd_room) cap the connections client_new admits, as
 * Redis lowers maxclients at start-up.  Past that, accept() failing with
 * EMFILE is handled in do_accept. */
#define FD_RESERVED 32
static long long fit_fd_limit(int startup)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)cfg.maxclients + FD_RESERVED;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return LLONG_MAX;
    rlim_t old = rl.rlim_cur;
    if (rl.rlim_cur < want) {
        struct rlimit up = {want, rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? rl.rlim_max : want};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            rl.rlim_cur = want;
        } else {
            int e = errno;
            if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max > rl.rlim_cur) {
                up.rlim_cur = up.rlim_max = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &up) == 0)
                    rl.rlim_cur = rl.rlim_max;
            }
            if (startup)
                log_msg(LL_WARNING, "maxclients %lld needs at least %llu open files; the limit could not be raised to that: %s.",
                        cfg.maxclients, (unsigned long long)want, strerror(e));
        }
        if (startup && rl.rlim_cur > old)
            log_msg(LL_NOTICE, "Open files limit raised from %llu to %llu.", (unsigned long long)old,
                    (unsigned long long)rl.rlim_cur);
    }
    return rl.rlim_cur > FD_RESERVED ? (long long)(rl.rlim_cur - FD_RESERVED) : 1;
}

static void fit_maxclients_to_fd_limit(void)
{
    long long room = fit_fd_limit(1);
    atomic_store(&fd_room, room);
    if (room < cfg.maxclients) {
        log_msg(LL_WARNING,
                "Open files limit leaves room for %lld clients: maxclients reduced from %lld to %lld. Raise 'ulimit -n' "
                "for more clients.",
                room, cfg.maxclients, room);
        cfg.maxclients = room;
    }
}

/* The unixsocket listener (0, or -1 logged).  A socket file left by an
 * earlier run is replaced, as Redis does, but only a socket nobody listens
 * on any more: a live server there, or a file that is not a socket, fails
 * the start-up with EADDRINUSE instead of being removed.  With
 * unixsocketperm the file is created with that mode (umask, before any
 * worker runs), so it is never reachable more widely than asked. */
static int unix_listen_open(void)
{
    const char *path = net_unixsocket;
    struct sockaddr_un sa;
    struct stat st;
    int fd, rc;
    if (!path || !path[0])
        return 0;
    if (strlen(path) > sizeof(sa.sun_path) - 1) {
        log_msg(LL_WARNING, "Failed opening Unix socket: unix socket path too long (%zu), must be under %zu", strlen(path),
                sizeof(sa.sun_path));
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (probe >= 0)
            close(probe);
        if (!alive)
            unlink(path);
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_msg(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        return -1;
    }
    mode_t old = 0;
    if (net_unixsocketperm)
        old = umask(~(mode_t)net_unixsocketperm & 0777);
    rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    if (net_unixsocketperm)
        umask(old);
    if (rc < 0 || listen(fd, cfg.tcp_backlog) < 0) {
        log_msg(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (net_unixsocketperm)
        chmod(path, (mode_t)net_unixsocketperm);
    unix_lfd = fd;
    log_msg(LL_NOTICE, "The server is now ready to accept connections at %s", path);
    return 0;
}

/* The listeners at start-up: port on every bind address, one SO_REUSEPORT
 * socket per worker, the TCP ones (tls 0: w->lfds) or the TLS ones (tls 1:
 * w->tls_lfds, tls-port).  Each address is probed first, so a port that
 * cannot be bound fails before any worker listens; an optional address
 * ("-::1") that the machine lacks is skipped.  port 0: none.  0, or -1
 * logged. */
static int listen_start(int n, int port, int tls)
{
    const char *kind = tls ? "TLS" : "TCP";
    char *addrs = hk_strdup(cfg.bind), *save = NULL, *a;
    for (a = port ? strtok_r(addrs, " ", &save) : NULL; a; a = strtok_r(NULL, " ", &save)) {
        const char *addr = a[0] == '-' ? a + 1 : a;
        int probe = probe_addr(addr, port);
        if (probe < 0) {
            int e = errno;
            log_msg(LL_WARNING, "Warning: Could not create server %s listening socket %s:%d: %s", kind, addr, port,
                    strerror(e));
            if (a[0] == '-' && optional_skip(e))
                continue;
            hk_free(addrs);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            struct worker *w = &workers[i];
            int *lfds = tls ? w->tls_lfds : w->lfds, *nlfd = tls ? &w->ntls_lfd : &w->nlfd;
            int fd = *nlfd < 16 ? listen_one(addr, port) : -1; /* set_bind allows 16 addresses */
            if (fd < 0) {
                int e = *nlfd < 16 ? errno : EMFILE;
                if (a[0] == '-' && optional_skip(e))
                    break;
                log_msg(LL_WARNING, "Warning: Could not create server %s listening socket %s:%d: %s", kind, addr, port,
                        strerror(e));
                close(probe);
                hk_free(addrs);
                return -1;
            }
            struct epoll_event ev;
            ev.events = EPOLLIN;
            ev.data.u64 = (uint64_t)((tls ? TAG_TLS_LISTEN : 8) + *nlfd);
            lfds[(*nlfd)++] = fd;
            epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev);
        }
        close(probe);
    }
    hk_free(addrs);
    return 0;
}

int workers_start(int n)
{
    fit_maxclients_to_fd_limit();
    const char *npf = getenv("HOTKV_NO_PREFETCH");
    pf_off = npf && *npf && strcmp(npf, "0") != 0;
    /* HOTKV_NO_TSC=1: the command clock reads the system clock every time
     * (base/util.h clock_now_us), for A/B measurements. */
    const char *ntsc = getenv("HOTKV_NO_TSC");
    if (!(ntsc && *ntsc && strcmp(ntsc, "0") != 0))
        clock_init();
    nworkers = n;
    /* 64-byte aligned (struct worker's alignment): hk_calloc promises 16. */
    workers = aligned_alloc(_Alignof(struct worker), sizeof(struct worker) * (size_t)n);
    if (!workers) {
        log_msg(LL_WARNING, "out of memory allocating %d workers", n);
        abort();
    }
    memset(workers, 0, sizeof(struct worker) * (size_t)n);
    db_wait_jobs_pending = jobs_pending_hook;
    db_wait_run_jobs = run_jobs_hook;
    net_hooks.workers_init(n);
    for (int i = 0; i < n; i++) {
        struct worker *w = &workers[i];
        struct epoll_event ev;
        int ncmd = net_hooks.ncommands();
        w->id = i;
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        pthread_mutex_init(&w->jlock, NULL);
        w->stats.cmd_calls = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_usec = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_rejected = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_failed = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        ev.events = EPOLLIN;
        ev.data.u64 = TAG_EVENT;
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev);
    }
    /* TLS: the context first (a bad certificate stops the start-up, as in
     * Redis), then the listeners, before the TCP ones: whoever sees the
     * TCP port answer finds the TLS one listening too. */
    if (tls_in_use() && tls_configure(0) < 0) {
        log_msg(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    /* port 0: no TCP listener at all, as in Redis (a Unix socket only). */
    if (listen_start(n, tls_cfg.port, 1) < 0 || listen_start(n, cfg.port, 0) < 0)
        return -1;
    if (unix_listen_open() < 0)
        return -1;
    if (!cfg.port && !tls_cfg.port && unix_lfd < 0) {
        log_msg(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    for (int i = 0; i < n && unix_lfd >= 0; i++)
        unix_listen_arm(&workers[i]);
    for (int i = 0; i < n; i++)
        pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
    return 0;
}

/* CONFIG SET port/bind: open the new listening sockets for every worker first
 * (so a port that cannot be bound changes nothing), then have each worker
 * swap its listeners at a safe point. */
struct rebind_req {
    int (*fds)[16];
    int *nfds;
    int tls; /* the TLS listeners (tls_lfds), not the TCP ones */
};

static void rebind_one(struct worker *w, void *arg)
{
    struct rebind_req *r = arg;
    int id = w->id;
    int *lfds = r->tls ? w->tls_lfds : w->lfds, *nlfd = r->tls ? &w->ntls_lfd : &w->nlfd;
    int tag = r->tls ? TAG_TLS_LISTEN : 8;
    for (int i = 0; i < *nlfd; i++) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, lfds[i], NULL);
        close(lfds[i]);
    }
    *nlfd = 0;
    for (int i = 0; i < r->nfds[id]; i++) {
        struct epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t)(tag + *nlfd);
        lfds[(*nlfd)++] = r->fds[id][i];
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, r->fds[id][i], &ev);
    }
}

static int rebind_listeners(const char *bind, int port, int cur_port, int tls);

int workers_rebind(const char *bind, int port)
{
    return rebind_listeners(bind, port, cfg.port, 0);
}

int workers_rebind_tls(const char *bind, int port, int old_port)
{
    return rebind_listeners(bind, port, old_port, 1);
}

/* bind:port for every worker (port 0: none), TCP or TLS; cur_port is the
 * port these listeners have now. */
static int rebind_listeners(const char *bind, int port, int cur_port, int tls)
{
    struct rebind_req r;
    char *addrs = hk_strdup(bind), *save = NULL, *a;
    int ok = 1;
    r.fds = hk_calloc(sizeof(*r.fds) * (size_t)nworkers);
    r.nfds = hk_calloc(sizeof(int) * (size_t)nworkers);
    r.tls = tls;
    /* port 0 closes the listeners (Redis's CONFIG SET port 0 / tls-port 0). */
    for (a = port ? strtok_r(addrs, " ", &save) : NULL; a && ok; a = strtok_r(NULL, " ", &save)) {
        const char *addr = a[0] == '-' ? a + 1 : a;
        /* A new port is probed as at start-up; on the current port our own
         * listeners would fail the probe (CONFIG SET bind). */
        int probe = port && port != cur_port ? probe_addr(addr, port) : -1;
        if (port && port != cur_port && probe < 0) {
            if (a[0] == '-' && optional_skip(errno))
                continue;
            ok = 0;
            break;
        }
        for (int i = 0; i < nworkers && ok; i++) {
            int fd = listen_one(addr, port);
            if (fd < 0) {
                if (a[0] == '-' && optional_skip(errno))
                    break;
                ok = 0;
                break;
            }
            if (r.nfds[i] == 16) {
                close(fd);
                ok = 0;
                break;
            }
            r.fds[i][r.nfds[i]++] = fd;
        }
        if (probe >= 0)
            close(probe);
    }
    hk_free(addrs);
    if (ok) {
        worker_broadcast(rebind_one, &r);
    } else {
        for (int i = 0; i < nworkers; i++)
            for (int k = 0; k < r.nfds[i]; k++)
                close(r.fds[i][k]);
    }
    hk_free(r.fds);
    hk_free(r.nfds);
    return ok ? 0 : -1;
}

void workers_wake_all(void)
{
    uint64_t one = 1;
    for (int i = 0; i < nworkers; i++)
        if (write(workers[i].efd, &one, sizeof(one)) < 0) {
            /* Best effort: the worker also wakes on its cron timeout. */
        }
}

void workers_join(void)
{
    for (int i = 0; i < nworkers; i++)
        pthread_join(workers[i].tid, NULL);
    if (unix_lfd >= 0) {
        /* Redis removes the socket file at shutdown; no worker accepts
         * any more. */
        log_msg(LL_NOTICE, "Removing the unix socket file.");
        close(unix_lfd);
        unix_lfd = -1;
        if (unlink(net_unixsocket) != 0)
            log_msg(LL_WARNING, "Error removing the unix socket file: %s", strerror(errno));
    }
}

/* Stats are written by their worker (STAT_ADD) and read here with relaxed
 * atomic loads while workers run: an approximate snapshot, as INFO is. */
void stats_sum(struct worker_stats *o)
{
    int ncmd = net_hooks.ncommands();
    unsigned long long *calls = o->cmd_calls, *usec = o->cmd_usec, *rej = o->cmd_rejected, *fail = o->cmd_failed;
    memset(o, 0, sizeof(*o));
    o->cmd_calls = calls;
    o->cmd_usec = usec;
    o->cmd_rejected = rej;
    o->cmd_failed = fail;
    if (calls) {
        memset(calls, 0, sizeof(*calls) * (size_t)ncmd);
        memset(usec, 0, sizeof(*usec) * (size_t)ncmd);
        memset(rej, 0, sizeof(*rej) * (size_t)ncmd);
        memset(fail, 0, sizeof(*fail) * (size_t)ncmd);
    }
    for (int i = 0; i < nworkers; i++) {
        struct worker_stats *s = &workers[i].stats;
        o->commands += STAT_GET(s->commands);
        o->conns_received += STAT_GET(s->conns_received);
        o->rejected_conns += STAT_GET(s->rejected_conns);
        o->net_in += STAT_GET(s->net_in);
        o->net_out += STAT_GET(s->net_out);
        o->reads += STAT_GET(s->reads);
        o->writes += STAT_GET(s->writes);
        o->errors += STAT_GET(s->errors);
        o->unexpected_errors += STAT_GET(s->unexpected_errors);
        o->evicted_clients += STAT_GET(s->evicted_clients);
        o->db.hits += STAT_GET(s->db.hits);
        o->db.misses += STAT_GET(s->db.misses);
        o->db.expired += STAT_GET(s->db.expired);
        o->db.evicted += STAT_GET(s->db.evicted);
        o->db.expire_time_cap += STAT_GET(s->db.expire_time_cap);
        o->db.expire_us += STAT_GET(s->db.expire_us);
        /* Each worker sweeps an equal share of the slots: the mean. */
        o->db.expired_stale_ppm += STAT_GET(s->db.expired_stale_ppm) / (unsigned long long)nworkers;
        if (calls) {
            for (int k = 0; k < ncmd; k++) {
                calls[k] += STAT_GET(s->cmd_calls[k]);
                usec[k] += STAT_GET(s->cmd_usec[k]);
                rej[k] += STAT_GET(s->cmd_rejected[k]);
                fail[k] += STAT_GET(s->cmd_failed[k]);
            }
        }
    }
}

static void reset_one(struct worker *w, void *arg)
{
    int ncmd = net_hooks.ncommands();
    struct worker_stats *st = &w->stats;
    (void)arg;
    STAT_SET(st->commands, 0);
    STAT_SET(st->conns_received, 0);
    STAT_SET(st->rejected_conns, 0);
    STAT_SET(st->net_in, 0);
    STAT_SET(st->net_out, 0);
    STAT_SET(st->reads, 0);
    STAT_SET(st->writes, 0);
    STAT_SET(st->errors, 0);
    STAT_SET(st->unexpected_errors, 0);
    STAT_SET(st->evicted_clients, 0);
    STAT_SET(st->db.hits, 0);
    STAT_SET(st->db.misses, 0);
    STAT_SET(st->db.expired, 0);
    STAT_SET(st->db.evicted, 0);
    STAT_SET(st->db.expired_stale_ppm, 0);
    STAT_SET(st->db.expire_time_cap, 0);
    STAT_SET(st->db.expire_us, 0);
    for (int k = 0; k < ncmd; k++) {
        STAT_SET(st->cmd_calls[k], 0);
        STAT_SET(st->cmd_usec[k], 0);
        STAT_SET(st->cmd_rejected[k], 0);
        STAT_SET(st->cmd_failed[k], 0);
    }
}

void stats_reset(void)
{
    worker_broadcast(reset_one, NULL);
}
