/* repl.c - replication, the master side; see repl.h and
 * docs/architecture.md, "Replication".
 *
 * Offsets: byte k of the stream (k = 1, 2, ...) has offset k, and
 * master_repl_offset (off) is the offset of the last byte fed.  The buffer
 * is a list of BLK-byte blocks; block b holds offsets b->start + 1 ..
 * b->start + b->used.  A replica's sent is the offset of the last byte it
 * was sent; the blocks it still needs are kept, and so is
 * repl-backlog-size of history for partial resyncs.
 *
 * A replica goes through: R_WAIT_FORK (a full sync is due; the thread
 * forks when no other child runs and repl-diskless-sync-delay has passed),
 * R_CHILD (the fork child writes +FULLRESYNC, then the RDB framed as
 * Redis's diskless transfer: "$EOF:<40 chars>\r\n", the RDB, the same 40
 * chars), R_WAIT_ACK (the child is done: the replica loads; the stream
 * starts at its first REPLCONF ACK, as Redis waits, since a replica reading
 * the payload in blocks would take stream bytes after the mark for
 * payload) and R_ONLINE.
 *
 * Disk-based (repl-diskless-sync no, or a replica without capa eof): the
 * thread answers +FULLRESYNC itself, the child writes the RDB to a file in
 * dir, and R_SEND_FILE sends "$<size>\r\n" and the file from this thread,
 * as the socket takes it; the stream follows at once (the replica reads
 * exactly size bytes). */
#include "repl.h"
#include "replica.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../net/tls.h"
#include "../server.h"
#include "prop.h"
#include "aof.h"
#include "rdb.h"
#include "resp_enc.h"
#include "snapshot.h"

#define BLK (64 * 1024)
/* The RDB a replica gets: version 10, which Redis 7.0 and later read. */
#define REPL_RDB_VERSION 10

struct blk {
    struct blk *next;
    uint64_t start;
    size_t used;
    char data[BLK];
};

enum { R_WAIT_FORK, R_CHILD, R_WAIT_ACK, R_ONLINE, R_SEND_FILE };

struct replica {
    struct replica *next;
    int fd;
    void *ssl; /* a replica connected over TLS: its connection, this thread's (net/tls.h) */
    int state;
    int out_armed; /* EPOLLOUT asked for */
    struct repl_hello h;
    uint64_t sent;      /* offset of the last byte sent */
    long long ack;      /* REPLCONF ACK offset */
    long long ack_ms;   /* when the last ACK came */
    long long since_ms; /* when it came (R_WAIT_FORK: the delay) */
    long long soft_ms;  /* over the soft output limit since (0: not) */
    char in[256];
    size_t inlen;
    int gone; /* to close (the thread frees it) */
    long long fack; /* REPLCONF ACK ... FACK offset: what its AOF fsynced (WAITAOF) */
    unsigned gen; /* the history it follows (hist_gen when it came) */
    int disk;           /* its full sync is disk-based */
    int early_ack;      /* it ACKed (loaded) before we saw the child end */
    long long file_pos; /* R_SEND_FILE: bytes of "$size\r\n" + file sent */
};

/* --------------------------------------------------------- repl_mu --- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct blk *head, *tail;
static uint64_t off;       /* master_repl_offset */
static int backlog_on;     /* the buffer exists (created by the first replica) */
static int last_db = -1;   /* the database the stream is in (-1: SELECT first) */
static char replid[41], replid2[41] = "0000000000000000000000000000000000000000";
static long long second_off = -1;
static struct replica *replicas; /* the thread's; the list is read under mu by INFO / ROLE */
static struct replica *adopted;  /* handed over by workers, not yet taken by the thread */
static int child_running, child_finished, child_ok;
static _Atomic size_t buffer_bytes; /* written under mu; read without it (maxmemory) */
static uint64_t snap_off; /* the offset a running child's RDB stands for */
/* Bumped when the history changes under the replicas' feet (a full sync
 * from our master, a new id, a promotion): a replica of an older one gets
 * nothing more and is dropped, so it reconnects and PSYNCs again. */
static unsigned hist_gen;
static int drop_all; /* CLIENT KILL TYPE replica, REPLICAOF: drop every replica */
static struct blk *graveyard; /* blocks of a restarted buffer, for the thread to free */

atomic_int repl_role_replica;
atomic_ullong repl_net_in, repl_net_out;

void repl_net_bytes(unsigned long long *in, unsigned long long *out)
{
    *in = atomic_load_explicit(&repl_net_in, memory_order_relaxed);
    *out = atomic_load_explicit(&repl_net_out, memory_order_relaxed);
}

static atomic_llong stat_full, stat_partial_ok, stat_partial_err; /* INFO stats sync_* */
/* WAIT / WAITAOF, min-replicas (the section at the end of the file). */
static int wait_acks_moved; /* the thread's: an ACK came since the last wait_tick */
static void wait_tick(long long now);
static int efd = -1, epfd = -1;
static pthread_t tid;
static atomic_int started; /* set once the thread runs (before the workers start) */
static atomic_int stopping;

static void random_id(char out[41])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[20];
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(b, 1, sizeof(b), f) : 0;
    if (f)
        fclose(f);
    for (size_t i = got; i < sizeof(b); i++)
        b[i] = (unsigned char)(rand() ^ (int)(time_ms() >> (i % 8)));
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[40] = 0;
}

void repl_replid(char out[41])
{
    pthread_mutex_lock(&mu);
    if (!replid[0])
        random_id(replid);
    memcpy(out, replid, 41);
    pthread_mutex_unlock(&mu);
}

void repl_replid_change(void)
{
    pthread_mutex_lock(&mu);
    if (replid[0]) {
        memcpy(replid2, replid, 41);
        second_off = (long long)off + 1;
    }
    random_id(replid);
    pthread_mutex_unlock(&mu);
}

/* Set while the replication thread is about to sleep; a feeder's
 * thread, at the end of its loop turn (repl_kick), wakes it once. */
static atomic_int repl_sleeping;
static _Thread_local int tl_fed;

void repl_kick(void)
{
    if (!tl_fed)
        return;
    tl_fed = 0;
    if (atomic_load_explicit(&repl_sleeping, memory_order_relaxed) && atomic_exchange(&repl_sleeping, 0)) {
        uint64_t one = 1;
        ssize_t w = write(efd, &one, sizeof(one));
        (void)w;
    }
}

/* Append n bytes to the buffer (mu held). */
static void append_locked(const char *p, size_t n)
{
    tl_fed = 1;
    while (n) {
        if (!tail || tail->used == BLK) {
            struct blk *b = hk_malloc(sizeof(*b));
            b->next = NULL;
            b->start = off;
            b->used = 0;
            if (tail)
                tail->next = b;
            else
                head = b;
            tail = b;
            atomic_fetch_add_explicit(&buffer_bytes, sizeof(*b), memory_order_relaxed);
        }
        size_t k = BLK - tail->used < n ? BLK - tail->used : n;
        memcpy(tail->data + tail->used, p, k);
        tail->used += k;
        off += k;
        p += k;
        n -= k;
    }
}

static void buffer_restart_locked(uint64_t at);

static void select_locked(int db)
{
    if (db < 0 || db == last_db)
        return;
    char num[24], out[64];
    int nl = snprintf(num, sizeof(num), "%d", db);
    const char *av[2] = {"SELECT", num};
    size_t al[2] = {6, (size_t)nl};
    char *e = put_cmd(out, 2, av, al);
    append_locked(out, (size_t)(e - out));
    last_db = db;
}

/* ------------------------------------------------------------ feeding --- */
/* A thread's MULTI ... EXEC, kept whole: records {int db; size_t len;
 * bytes} appended at EXEC (as persist/aof.c does), so that no other
 * thread's command lands inside the transaction. */
struct tbuf {
    char *p;
    size_t len, cap;
};
static _Thread_local struct tbuf tl_tx;
static _Thread_local int tl_in_tx;

static char *tb_room(struct tbuf *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}

static void tx_add(int db, int argc, const char *const *argv, const size_t *lens)
{
    size_t n = cmd_bytes(argc, lens);
    char *p = tb_room(&tl_tx, sizeof(int) + sizeof(size_t) + n);
    memcpy(p, &db, sizeof(int));
    memcpy(p + sizeof(int), &n, sizeof(size_t));
    put_cmd(p + sizeof(int) + sizeof(size_t), argc, argv, lens);
    tl_tx.len += sizeof(int) + sizeof(size_t) + n;
}

static void tx_commit(void)
{
    pthread_mutex_lock(&mu);
    if (backlog_on) {
        for (size_t pos = 0; pos < tl_tx.len;) {
            int db;
            size_t n;
            memcpy(&db, tl_tx.p + pos, sizeof(int));
            memcpy(&n, tl_tx.p + pos + sizeof(int), sizeof(size_t));
            pos += sizeof(int) + sizeof(size_t);
            select_locked(db);
            append_locked(tl_tx.p + pos, n);
            pos += n;
        }
        repl_tl_woff = off;
    }
    pthread_mutex_unlock(&mu);
    tl_in_tx = 0;
    hk_free(tl_tx.p);
    tl_tx.p = NULL;
    tl_tx.len = tl_tx.cap = 0;
}

static int is_word(const char *s, size_t n, const char *w)
{
    return n == strlen(w) && !strncasecmp(s, w, n);
}

static void feed_one(int db, int argc, const char *const *argv, const size_t *lens);

void repl_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens)
{
    if (argc < 1)
        return;
    if (tl_in_tx) {
        tx_add(db, argc, argv, lens);
        if (argc == 1 && is_word(argv[0], lens[0], "exec"))
            tx_commit();
        return;
    }
    if (argc == 1 && is_word(argv[0], lens[0], "multi")) {
        tl_in_tx = 1;
        tl_tx.len = 0;
        tx_add(db, argc, argv, lens);
        return;
    }
    feed_one(db, argc, argv, lens);
}

void repl_feed_verbatim(int argc, const char *const *argv, const size_t *lens)
{
    if (argc >= 1 && !repl_is_replica())
        feed_one(-1, argc, argv, lens);
}

static void feed_one(int db, int argc, const char *const *argv, const size_t *lens)
{
    size_t n = cmd_bytes(argc, lens);
    if (n <= 1024) {
        /* Encoded straight into the tail block when it has the room (one
         * copy of the arguments, not two); on the stack at a block's end. */
        pthread_mutex_lock(&mu);
        if (backlog_on) {
            select_locked(db);
            if (tail && BLK - tail->used >= n) {
                put_cmd(tail->data + tail->used, argc, argv, lens);
                tail->used += n;
                off += n;
                tl_fed = 1;
            } else {
                char stack[1024];
                put_cmd(stack, argc, argv, lens);
                append_locked(stack, n);
            }
            repl_tl_woff = off;
        }
        pthread_mutex_unlock(&mu);
        return;
    }
    /* A big one is encoded outside the lock, on the heap. */
    char *enc = hk_malloc(n);
    put_cmd(enc, argc, argv, lens);
    pthread_mutex_lock(&mu);
    if (backlog_on) {
        select_locked(db);
        append_locked(enc, n);
        repl_tl_woff = off;
    }
    pthread_mutex_unlock(&mu);
    hk_free(enc);
}

/* ------------------------------------------------------------ adoption --- */
int repl_adopt(int fd, void *ssl, const struct repl_hello *h, const char *id, long long offset, char *err,
               size_t errlen)
{
    if (!atomic_load(&started)) {
        snprintf(err, errlen, "ERR replication is not running");
        return -1;
    }
    struct replica *r = hk_calloc(sizeof(*r));
    r->fd = fd;
    r->ssl = ssl;
    if (ssl)
        tls_conn_set_fd(ssl, fd);
    r->h = *h;
    r->since_ms = time_ms();
    r->ack = 0;
    /* PSYNC's arguments travel in the record: id in in[], offset in sent
     * (the thread decides CONTINUE or FULLRESYNC with the lock held). */
    snprintf(r->in, sizeof(r->in), "%s", id);
    r->sent = (uint64_t)offset; /* read back as a long long: -1 is "PSYNC ? -1" */
    pthread_mutex_lock(&mu);
    r->next = adopted;
    adopted = r;
    pthread_mutex_unlock(&mu);
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof(one));
    (void)w;
    return 0;
}

/* ------------------------------------------------------------- thread --- */
int repl_send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void set_blocking(int fd, int blocking)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
}

/* A replica's socket, plain or TLS, as send(2) and recv(2) with
 * MSG_DONTWAIT: bytes, or -1 with errno (EAGAIN: it would block).  A TLS
 * write that would block is retried with the same bytes (they stay where
 * they are: the buffer's blocks, or the file's chunk read again). */
static ssize_t r_send(struct replica *r, const void *p, size_t n)
{
    if (!r->ssl)
        return send(r->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    int want = 0;
    errno = 0;
    ssize_t w = tls_conn_write(r->ssl, p, n, &want);
    if (w > 0)
        return w;
    errno = w == 0 ? EAGAIN : errno ? errno : ECONNRESET;
    return -1;
}

static ssize_t r_recv(struct replica *r, void *p, size_t n)
{
    if (!r->ssl)
        return recv(r->fd, p, n, MSG_DONTWAIT);
    int want = 0;
    errno = 0;
    ssize_t k = tls_conn_read(r->ssl, p, n, &want);
    if (k > 0)
        return k;
    if (k == 0) {
        errno = EAGAIN;
        return -1;
    }
    return errno ? -1 : 0; /* the peer closed */
}

/* A short line (+CONTINUE, +FULLRESYNC, a keepalive) all at once: the
 * socket has room for it, or waits up to a second. */
static int r_send_all(struct replica *r, const char *p, size_t n)
{
    if (!r->ssl)
        return repl_send_all(r->fd, p, n);
    long long until = time_ms() + 1000;
    while (n) {
        ssize_t w = r_send(r, p, n);
        if (w < 0 && errno == EAGAIN && time_ms() < until) {
            struct pollfd pf = {r->fd, POLLOUT | POLLIN, 0};
            (void)poll(&pf, 1, 100);
            continue;
        }
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void ep_set(struct replica *r, int out)
{
    struct epoll_event ev;
    ev.events = EPOLLIN | (out ? EPOLLOUT : 0);
    ev.data.ptr = r;
    epoll_ctl(epfd, EPOLL_CTL_MOD, r->fd, &ev);
    r->out_armed = out;
}

/* Mark r to close (housekeeping frees it, once no fork child writes to
 * it); it leaves epoll now, so a hung-up socket does not spin the loop. */
static void drop(struct replica *r, const char *why)
{
    if (r->gone)
        return;
    log_msg(LL_NOTICE, "Connection with replica %s:%d lost%s%s.", r->h.ip, r->h.listening_port, why ? ": " : "",
            why ? why : "");
    epoll_ctl(epfd, EPOLL_CTL_DEL, r->fd, NULL);
    /* The connection ends now, for a fork child writing to it too (its
     * writes fail): the replica sees the cut at once. */
    shutdown(r->fd, SHUT_RDWR);
    pthread_mutex_lock(&mu);
    r->gone = 1;
    pthread_mutex_unlock(&mu);
}

/* The new replicas: +CONTINUE from the backlog, or a full sync. */
static void take_adopted(void)
{
    pthread_mutex_lock(&mu);
    struct replica *list = adopted;
    adopted = NULL;
    pthread_mutex_unlock(&mu);
    while (list) {
        struct replica *r = list;
        list = r->next;
        long long want = (long long)r->sent; /* PSYNC's offset */
        int forced = want < 0 || !strcmp(r->in, "?");
        char reply[128];
        int cont = 0;
        unsigned long long behind = 0;
        pthread_mutex_lock(&mu);
        if (!replid[0])
            random_id(replid);
        if (!forced && backlog_on && want >= 1) {
            int same = !strcmp(r->in, replid);
            int prev = !strcmp(r->in, replid2) && want <= second_off;
            /* An empty backlog (just restored from an RDB) holds exactly
             * "nothing since off". */
            uint64_t first = head ? head->start + 1 : off + 1;
            if ((same || prev) && (uint64_t)want >= first && (uint64_t)want <= off + 1) {
                cont = 1;
                r->sent = (uint64_t)want - 1;
                behind = off - r->sent;
                if (r->h.capa_psync2)
                    snprintf(reply, sizeof(reply), "+CONTINUE %s\r\n", replid);
                else
                    snprintf(reply, sizeof(reply), "+CONTINUE\r\n");
            }
        }
        pthread_mutex_unlock(&mu);
        r->in[0] = 0;
        r->inlen = 0;
        int nodelay = !__atomic_load_n(&cfg.repl_disable_tcp_nodelay, __ATOMIC_RELAXED);
        setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
        struct epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.ptr = r;
        epoll_ctl(epfd, EPOLL_CTL_ADD, r->fd, &ev);
        r->ack_ms = time_ms();
        if (cont) {
            r->state = R_ONLINE;
            log_msg(LL_NOTICE, "Partial resynchronization request from %s:%d accepted. Sending %llu bytes of backlog.",
                    r->h.ip, r->h.listening_port, behind);
            atomic_fetch_add(&stat_partial_ok, 1);
        } else {
            r->state = R_WAIT_FORK;
            r->since_ms = time_ms();
            log_msg(LL_NOTICE, "Replica %s:%d asks for synchronization; full resync (%s)", r->h.ip,
                    r->h.listening_port, forced ? "requested" : "no usable backlog");
            atomic_fetch_add(&stat_full, 1);
            if (!forced)
                atomic_fetch_add(&stat_partial_err, 1);
        }
        pthread_mutex_lock(&mu);
        r->gen = hist_gen;
        r->next = replicas;
        replicas = r;
        pthread_mutex_unlock(&mu);
        if (cont && r_send_all(r, reply, strlen(reply)) < 0)
            drop(r, strerror(errno));
    }
}

/* The fork: the replicas waiting get the snapshot of this very moment. */
struct fork_ctx {
    int fds[64];
    int old_sync[64]; /* SYNC: no +FULLRESYNC line */
    int n;
    uint64_t at;
    char id[41];
    int disk;       /* write path instead of the sockets */
    int req;        /* what the RDB leaves out (REPL_REQ_*): one fork serves one kind */
    char path[96];
};
/* The disk-based sync's file while replicas are sent it (the thread's). */
static int sync_fd = -1;
static long long sync_size;
static char sync_path[96], sync_hdr[32];
static size_t sync_hdr_len;

static void at_freeze(void *arg)
{
    struct fork_ctx *f = arg;
    pthread_mutex_lock(&mu);
    if (!backlog_on) {
        /* The first replica: a new history begins here (Redis changes the
         * id and forgets the secondary one when it creates the backlog). */
        backlog_on = 1;
        random_id(replid);
        memcpy(replid2, "0000000000000000000000000000000000000000", 41);
        second_off = -1;
        prop_set_on_bit(PROP_ON_REPL, 1);
    }
    last_db = -1; /* the stream after the snapshot starts with SELECT */
    f->at = off;
    memcpy(f->id, replid, 41);
    f->n = 0;
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->state == R_WAIT_FORK && !r->gone && r->h.req == f->req && f->n < 64) {
            r->gen = hist_gen;
            r->state = R_CHILD;
            r->disk = f->disk;
            f->old_sync[f->n] = r->h.old_sync;
            r->sent = off;
            f->fds[f->n++] = r->fd;
        }
    }
    snap_off = off;
    pthread_mutex_unlock(&mu);
}

static void child_main(struct fork_ctx *f)
{
    struct rdb_save_opts o;
    rdb_save_opts_from_cfg(&o);
    o.version = REPL_RDB_VERSION;
    o.no_data = !!(f->req & REPL_REQ_EXCLUDE_DATA);
    o.no_functions = !!(f->req & REPL_REQ_EXCLUDE_FUNCTIONS);
    if (f->disk) {
        char err[256];
        int rc = rdb_save_file(f->path, &o, err, sizeof(err));
        if (rc < 0)
            log_msg(LL_WARNING, "Failed saving the RDB for replicas: %s", err);
        persist_child_exit(rc < 0 ? 1 : 0);
    }
    /* Every replica of this fork gets its answer now and the one snapshot
     * at once (as Redis's parent fans its child's pipe out to them), not
     * one after the other: the last would wait for all the others'
     * transfers, and the RDB would be made once per replica. */
    int dead[64] = {0};
    char mark[41], head_line[160];
    random_id(mark);
    int live = 0;
    for (int i = 0; i < f->n; i++) {
        int fd = f->fds[i];
        set_blocking(fd, 1);
        /* A replica that stops reading for repl-timeout is given up (the
         * others are not kept waiting for ever). */
        struct timeval tv = {__atomic_load_n(&cfg.repl_timeout, __ATOMIC_RELAXED), 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        int n = f->old_sync[i] ? snprintf(head_line, sizeof(head_line), "$EOF:%s\r\n", mark)
                               : snprintf(head_line, sizeof(head_line), "+FULLRESYNC %s %llu\r\n$EOF:%s\r\n", f->id,
                                          (unsigned long long)f->at, mark);
        if (repl_send_all(fd, head_line, (size_t)n) < 0)
            dead[i] = 1;
        else
            live++;
    }
    int sent = 0;
    if (live) {
        struct rdb_out out;
        rdb_out_init_fd(&out, f->fds[0]);
        out.tee_fds = f->fds;
        out.tee_dead = dead;
        out.tee_n = f->n;
        int rc = rdb_save(&out, &o);
        if (rc == 0)
            rc = rdb_out_flush(&out);
        rdb_out_free(&out);
        for (int i = 0; rc == 0 && i < f->n; i++)
            if (!dead[i] && repl_send_all(f->fds[i], mark, 40) == 0)
                sent++;
    }
    persist_child_exit(sent > 0 || f->n == 0 ? 0 : 1);
}

static void maybe_fork(long long now)
{
    /* Diskless: the first replica waits repl-diskless-sync-delay for
     * others to join, unless repl-diskless-sync-max-replicas are there.
     * Disk-based (the setting, or a replica without capa eof): now. */
    int due = 0, waiting = 0, disk = !__atomic_load_n(&cfg.repl_diskless_sync, __ATOMIC_RELAXED);
    int maxr = __atomic_load_n(&cfg.repl_diskless_sync_max_replicas, __ATOMIC_RELAXED);
    /* One fork serves the replicas that want the same RDB (a filtered
     * one, REPLCONF rdb-filter-only, is not a full one): those of the
     * first in the list's kind; the others wait for the next fork. */
    int req = -1;
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->state != R_WAIT_FORK || r->gone)
            continue;
        if (req < 0)
            req = r->h.req;
        if (r->h.req != req)
            continue;
        waiting++;
        /* A TLS replica's bytes go through its SSL, which only this
         * thread may drive: not written by a fork child. */
        disk |= !r->h.capa_eof || r->ssl;
        if (now - r->since_ms >= 1000LL * __atomic_load_n(&cfg.repl_diskless_sync_delay, __ATOMIC_RELAXED))
            due = 1;
    }
    if (waiting && (disk || (maxr > 0 && waiting >= maxr)))
        due = 1;
    pthread_mutex_lock(&mu);
    int busy = child_running;
    pthread_mutex_unlock(&mu);
    /* A disk-based file still being sent is not overwritten. */
    if (!due || busy || (disk && sync_fd >= 0))
        return;
    static struct fork_ctx f;
    f.disk = disk;
    f.req = req;
    snprintf(f.path, sizeof(f.path), "temp-repl-sync-%d.rdb", (int)getpid());
    pthread_mutex_lock(&mu);
    child_running = 1;
    child_finished = 0;
    pthread_mutex_unlock(&mu);
    /* On a replica the freeze also holds apply_mu (persist/snapshot.c): the
     * snapshot stands for a whole number of the master's commands. */
    pid_t pid = persist_fork_ex(CHILD_REPL, at_freeze, &f);
    if (pid == 0)
        child_main(&f);
    if (pid < 0) {
        /* Another child runs (BGSAVE, AOF rewrite) or a script is busy:
         * the next tick tries again.  at_freeze did not run. */
        pthread_mutex_lock(&mu);
        child_running = 0;
        pthread_mutex_unlock(&mu);
        return;
    }
    log_msg(LL_NOTICE, "Starting BGSAVE for SYNC with target: %s (pid %d, %d replica(s), offset %llu)",
            f.disk ? "disk" : "replicas sockets", (int)pid, f.n, (unsigned long long)f.at);
    if (f.disk) {
        snprintf(sync_path, sizeof(sync_path), "%s", f.path);
        /* The answer now; "\n" keepalives until the file is written. */
        char line[128];
        int n = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", f.id, (unsigned long long)f.at);
        for (struct replica *r = replicas; r; r = r->next)
            if (r->state == R_CHILD && r->disk && !r->gone && !r->h.old_sync && r_send_all(r, line, (size_t)n) < 0)
                drop(r, strerror(errno));
    }
}

void repl_child_done(int ok)
{
    pthread_mutex_lock(&mu);
    child_finished = 1;
    child_ok = ok;
    pthread_mutex_unlock(&mu);
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof(one));
    (void)w;
}

static void child_ended(void)
{
    pthread_mutex_lock(&mu);
    int fin = child_finished, ok = child_ok;
    if (fin) {
        child_finished = 0;
        child_running = 0;
    }
    pthread_mutex_unlock(&mu);
    if (!fin)
        return;
    log_msg(ok ? LL_NOTICE : LL_WARNING, "Background RDB transfer %s", ok ? "terminated with success" : "error");
    int any_disk = 0;
    for (struct replica *r = replicas; r; r = r->next)
        any_disk |= r->state == R_CHILD && r->disk;
    if (any_disk && ok) {
        sync_fd = open(sync_path, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (sync_fd >= 0 && fstat(sync_fd, &sb) == 0) {
            sync_size = (long long)sb.st_size;
            sync_hdr_len = (size_t)snprintf(sync_hdr, sizeof(sync_hdr), "$%lld\r\n", sync_size);
        } else {
            log_msg(LL_WARNING, "Can't open the RDB for replicas %s: %s", sync_path, strerror(errno));
            if (sync_fd >= 0)
                close(sync_fd);
            sync_fd = -1;
        }
    }
    if (any_disk && sync_fd < 0 && sync_path[0]) {
        unlink(sync_path);
        sync_path[0] = 0;
    }
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->state != R_CHILD)
            continue;
        if (r->disk) {
            if (!ok || sync_fd < 0) {
                drop(r, "the full sync failed");
                continue;
            }
            pthread_mutex_lock(&mu);
            r->state = R_SEND_FILE;
            r->file_pos = 0;
            pthread_mutex_unlock(&mu);
            continue;
        }
        set_blocking(r->fd, 0);
        pthread_mutex_lock(&mu);
        /* A replica that loaded fast may have ACKed already; one that came
         * with SYNC never ACKs (the old protocol): streamed at once. */
        int early = (r->early_ack || r->h.old_sync) && ok;
        r->state = early ? R_ONLINE : R_WAIT_ACK;
        r->ack_ms = time_ms();
        pthread_mutex_unlock(&mu);
        if (!ok)
            drop(r, "the full sync failed");
        else if (r->h.rdb_only)
            drop(r, "an RDB-only replica got its RDB");
        else if (early)
            log_msg(LL_NOTICE, "Synchronization with replica %s:%d succeeded", r->h.ip, r->h.listening_port);
        else if (!r->gone)
            log_msg(LL_NOTICE, "Streamed RDB transfer with replica %s:%d succeeded: waiting for its first ACK",
                    r->h.ip, r->h.listening_port);
    }
}

/* REPLCONF ACK <offset> [FACK <offset>] lines from a replica. */
static void read_replica(struct replica *r)
{
    for (;;) {
        /* MSG_DONTWAIT: while a fork child sends the RDB, the socket is
         * in blocking mode (the child's, shared with ours). */
        ssize_t n = r_recv(r, r->in + r->inlen, sizeof(r->in) - 1 - r->inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            drop(r, n == 0 ? "closed by the replica" : strerror(errno));
            return;
        }
        r->inlen += (size_t)n;
        r->in[r->inlen] = 0;
        /* Parse whole multibulk commands; the replica sends only small ones. */
        for (;;) {
            char *argv[6];
            size_t lens[6];
            int argc = 0;
            size_t pos = 0;
            if (r->inlen == 0)
                break;
            if (r->in[0] == '\n' || r->in[0] == '\r') { /* an empty line */
                memmove(r->in, r->in + 1, --r->inlen);
                continue;
            }
            if (r->in[0] != '*') {
                drop(r, "protocol error from the replica");
                return;
            }
            char *nl = memchr(r->in, '\n', r->inlen);
            if (!nl)
                break;
            long cnt = strtol(r->in + 1, NULL, 10);
            if (cnt < 1 || cnt > 6) {
                drop(r, "protocol error from the replica");
                return;
            }
            pos = (size_t)(nl - r->in) + 1;
            int complete = 1;
            for (long i = 0; i < cnt; i++) {
                char *l = memchr(r->in + pos, '\n', r->inlen - pos);
                if (!l || r->in[pos] != '$') {
                    complete = 0;
                    break;
                }
                long len = strtol(r->in + pos + 1, NULL, 10);
                size_t at = (size_t)(l - r->in) + 1;
                if (len < 0 || len > 64) {
                    drop(r, "protocol error from the replica");
                    return;
                }
                if (at + (size_t)len + 2 > r->inlen) {
                    complete = 0;
                    break;
                }
                argv[argc] = r->in + at;
                lens[argc++] = (size_t)len;
                pos = at + (size_t)len + 2;
            }
            if (!complete) {
                if (r->inlen >= sizeof(r->in) - 1) {
                    drop(r, "protocol error from the replica");
                    return;
                }
                break;
            }
            if (argc >= 3 && is_word(argv[0], lens[0], "replconf") && is_word(argv[1], lens[1], "ack")) {
                char num[32];
                size_t k = lens[2] < sizeof(num) - 1 ? lens[2] : sizeof(num) - 1;
                memcpy(num, argv[2], k);
                num[k] = 0;
                long long a = strtoll(num, NULL, 10), fa = -1;
                if (argc >= 5 && is_word(argv[3], lens[3], "fack")) {
                    k = lens[4] < sizeof(num) - 1 ? lens[4] : sizeof(num) - 1;
                    memcpy(num, argv[4], k);
                    num[k] = 0;
                    fa = strtoll(num, NULL, 10);
                }
                wait_acks_moved = 1;
                pthread_mutex_lock(&mu);
                if (a > r->ack)
                    r->ack = a;
                if (fa > r->fack)
                    r->fack = fa;
                r->ack_ms = time_ms();
                if (r->state == R_CHILD && !r->disk)
                    r->early_ack = 1;
                if (r->state == R_WAIT_ACK) {
                    r->state = R_ONLINE;
                    log_msg(LL_NOTICE, "Synchronization with replica %s:%d succeeded", r->h.ip, r->h.listening_port);
                }
                pthread_mutex_unlock(&mu);
            }
            memmove(r->in, r->in + pos, r->inlen - pos);
            r->inlen -= pos;
        }
    }
}

/* Send what an online replica has not had yet, as far as its socket takes. */
/* Straight from the blocks (writev, no copy): the bytes below a block's
 * `used` never change, and blocks are freed only by this thread
 * (housekeeping, and the graveyard of a history reset), so they are read
 * without the lock once `used` was read under it. */
#define WRITE_IOV 16
/* 64 KB: a stream of 50k SETs of 256 bytes a second (16 KB a ms) sent
 * 16 KB rounds now and then, which at 16 KB switched to the 1 ms naps and
 * added up to a ms of replication lag (p90 0.4-1.0 ms against 0.17-0.28
 * at 64 KB); at pipeline-16 rates a round is far above either. */
#define HOT_BATCH (64 * 1024)
#define HOT_SLEEP_US 1000
static size_t write_replica(struct replica *r, char *chunk)
{
    (void)chunk;
    size_t total = 0;
    for (;;) {
        size_t n = 0;
        struct iovec iov[WRITE_IOV];
        int niov = 0;
        pthread_mutex_lock(&mu);
        struct blk *b = r->gen == hist_gen ? head : NULL;
        while (b && b->start + b->used <= r->sent)
            b = b->next;
        if (b && r->sent >= b->start) {
            size_t at = (size_t)(r->sent - b->start);
            for (; b && niov < WRITE_IOV; b = b->next, at = 0) {
                size_t k = b->used - at;
                if (!k)
                    break;
                iov[niov].iov_base = b->data + at;
                iov[niov].iov_len = k;
                niov++;
                n += k;
                if (b->used < BLK)
                    break; /* the tail: nothing after it yet */
            }
        }
        pthread_mutex_unlock(&mu);
        if (!n) {
            if (r->out_armed)
                ep_set(r, 0);
            return total;
        }
        ssize_t w;
        if (r->ssl) {
            /* Record by record from the blocks (a TLS write returns after
             * a record or so) until the socket is full. */
            w = 0;
            for (int i = 0; i < niov && w >= 0; i++) {
                size_t at = 0;
                while (at < iov[i].iov_len) {
                    ssize_t k = r_send(r, (char *)iov[i].iov_base + at, iov[i].iov_len - at);
                    if (k < 0) {
                        if (!w && !at)
                            w = -1;
                        i = niov; /* stop: full (EAGAIN) or failed */
                        break;
                    }
                    at += (size_t)k;
                }
                if (w >= 0)
                    w += (ssize_t)at;
            }
        } else {
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
            w = sendmsg(r->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!r->out_armed)
                ep_set(r, 1);
            return total;
        }
        if (w <= 0) {
            drop(r, strerror(errno));
            return total;
        }
        pthread_mutex_lock(&mu);
        r->sent += (uint64_t)w;
        total += (size_t)w;
        atomic_fetch_add_explicit(&repl_net_out, (unsigned long long)w, memory_order_relaxed);
        pthread_mutex_unlock(&mu);
        if ((size_t)w < n) {
            if (!r->out_armed)
                ep_set(r, 1);
            return total;
        }
    }
}

/* R_SEND_FILE: "$<size>\r\n" and the file, as far as the socket takes;
 * then the replica is online (the stream follows the payload). */
static void write_file(struct replica *r, char *chunk)
{
    long long total = (long long)sync_hdr_len + sync_size;
    while (r->file_pos < total) {
        size_t n;
        if (r->file_pos < (long long)sync_hdr_len) {
            n = sync_hdr_len - (size_t)r->file_pos;
            memcpy(chunk, sync_hdr + r->file_pos, n);
        } else {
            ssize_t k = pread(sync_fd, chunk, BLK, r->file_pos - (long long)sync_hdr_len);
            if (k <= 0) {
                drop(r, "can't read the RDB for replicas");
                return;
            }
            n = (size_t)k;
        }
        ssize_t w = r_send(r, chunk, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!r->out_armed)
                ep_set(r, 1);
            return;
        }
        if (w <= 0) {
            drop(r, strerror(errno));
            return;
        }
        r->file_pos += w;
        atomic_fetch_add_explicit(&repl_net_out, (unsigned long long)w, memory_order_relaxed);
    }
    pthread_mutex_lock(&mu);
    r->state = R_ONLINE;
    r->ack_ms = time_ms();
    pthread_mutex_unlock(&mu);
    if (r->h.rdb_only) {
        drop(r, "an RDB-only replica got its RDB");
        return;
    }
    log_msg(LL_NOTICE, "Synchronization with replica %s:%d succeeded", r->h.ip, r->h.listening_port);
    if (r->out_armed)
        ep_set(r, 0);
}

/* The disk-based sync's file goes once no replica is being sent it. */
static void sync_file_done(void)
{
    if (sync_fd < 0)
        return;
    for (struct replica *r = replicas; r; r = r->next)
        if (r->state == R_SEND_FILE && !r->gone)
            return;
    close(sync_fd);
    sync_fd = -1;
    unlink(sync_path);
    sync_path[0] = 0;
}

/* Output limits (client-output-buffer-limit replica), timeouts; then free
 * what no replica needs and the backlog does not keep. */
static void housekeeping(long long now)
{
    const struct obuf_limit *l = &cfg.obuf[CLIENT_CLASS_REPLICA];
    long long hard = __atomic_load_n(&l->hard, __ATOMIC_RELAXED), soft = __atomic_load_n(&l->soft, __ATOMIC_RELAXED);
    long long soft_s = __atomic_load_n(&l->soft_secs, __ATOMIC_RELAXED);
    long long timeout_ms = 1000LL * __atomic_load_n(&cfg.repl_timeout, __ATOMIC_RELAXED);
    pthread_mutex_lock(&mu);
    uint64_t cur = off;
    unsigned gen = hist_gen;
    int all = drop_all;
    drop_all = 0;
    pthread_mutex_unlock(&mu);
    for (struct replica *r = replicas; r; r = r->next) {
        if (all && !r->gone) {
            drop(r, "killed");
            continue;
        }
        if (!r->gone && r->gen != gen && r->state != R_WAIT_FORK) {
            drop(r, "the replication history changed");
            continue;
        }
        if (r->gone || r->state == R_WAIT_FORK)
            continue;
        long long pending = (long long)(cur - r->sent);
        if (hard && pending >= hard) {
            drop(r, "over the replica output buffer limit");
            continue;
        }
        if (soft && pending >= soft) {
            if (!r->soft_ms)
                r->soft_ms = now;
            else if (now - r->soft_ms >= soft_s * 1000) {
                drop(r, "over the replica output buffer soft limit");
                continue;
            }
        } else {
            r->soft_ms = 0;
        }
        if (r->state == R_ONLINE && !r->h.old_sync && now - r->ack_ms > timeout_ms)
            drop(r, "timeout (no ACK for repl-timeout)");
    }
    /* Close and free the gone ones. */
    pthread_mutex_lock(&mu);
    while (graveyard) {
        struct blk *b = graveyard;
        graveyard = b->next;
        hk_free(b);
    }
    for (struct replica **pp = &replicas; *pp;) {
        struct replica *r = *pp;
        if (r->gone && r->state != R_CHILD) { /* the child may still write to it */
            *pp = r->next;
            if (r->ssl)
                tls_conn_free(r->ssl, 0);
            close(r->fd);
            hk_free(r);
            continue;
        }
        pp = &r->next;
    }
    uint64_t bsize = (uint64_t)__atomic_load_n(&cfg.repl_backlog_size, __ATOMIC_RELAXED);
    uint64_t keep = off > bsize ? off - bsize : 0;
    for (struct replica *r = replicas; r; r = r->next)
        if (!r->gone && r->state != R_WAIT_FORK && r->gen == hist_gen && r->sent < keep)
            keep = r->sent;
    while (head && head->next && head->start + head->used <= keep) {
        struct blk *b = head;
        head = b->next;
        hk_free(b);
        atomic_fetch_sub_explicit(&buffer_bytes, sizeof(*b), memory_order_relaxed);
    }
    /* repl-backlog-ttl: a master without replicas for that long frees its
     * backlog and starts a new history (a replica never frees its own:
     * it may be promoted). */
    static long long alone_since;
    int any = adopted != NULL;
    for (struct replica *r = replicas; r; r = r->next)
        any |= !r->gone;
    long long ttl = __atomic_load_n(&cfg.repl_backlog_ttl, __ATOMIC_RELAXED);
    if (any || !backlog_on || repl_is_replica()) {
        alone_since = 0;
    } else if (!alone_since) {
        alone_since = now;
    } else if (ttl > 0 && now - alone_since >= ttl * 1000) {
        buffer_restart_locked(off);
        backlog_on = 0;
        random_id(replid);
        memcpy(replid2, "0000000000000000000000000000000000000000", 41);
        second_off = -1;
        prop_set_on_bit(PROP_ON_REPL, 0);
        alone_since = 0;
        log_msg(LL_NOTICE, "Replication backlog freed after %lld seconds without connected replicas.", ttl);
    }
    pthread_mutex_unlock(&mu);
}

static void ping_replicas(void)
{
    static const char *const av[1] = {"PING"};
    static const size_t al[1] = {4};
    int any = 0;
    for (struct replica *r = replicas; r; r = r->next)
        any |= !r->gone;
    if (!any)
        return;
    char out[32];
    char *e = put_cmd(out, 1, av, al);
    pthread_mutex_lock(&mu);
    append_locked(out, (size_t)(e - out));
    pthread_mutex_unlock(&mu);
}

/* Replicas waiting for the snapshot get a newline a second (Redis's
 * keepalive before the transfer: not part of the stream). */
static void keepalive_waiting(void)
{
    for (struct replica *r = replicas; r; r = r->next)
        if ((r->state == R_WAIT_FORK || (r->state == R_CHILD && r->disk)) && !r->gone &&
            (r->ssl ? r_send_all(r, "\n", 1) < 0
                    : send(r->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN))
            drop(r, strerror(errno));
}

static void *repl_main(void *arg)
{
    (void)arg;
    char *chunk = hk_malloc(BLK);
    struct epoll_event evs[64];
    long long last_sec = 0, last_ping = time_ms();
    pthread_setname_np(pthread_self(), "hotkv-repl");
    /* It frees the blocks the workers allocated: its counters must be in
     * the process's total (base/mem.h), or used_memory drifts upwards. */
    mem_thread_register();
    while (!atomic_load(&stopping)) {
        mem_publish();
        slab_thread_idle(); /* a thread that is not a worker lends its slab heap back (base/slab.h) */
        take_adopted();
        child_ended();
        long long now = time_ms();
        maybe_fork(now);
        wait_tick(now);
        size_t sent_now = 0;
        for (struct replica *r = replicas; r; r = r->next) {
            if (r->state == R_SEND_FILE && !r->gone && !r->out_armed)
                write_file(r, chunk);
            if (r->state == R_ONLINE && !r->gone && !r->out_armed)
                sent_now += write_replica(r, chunk);
        }
        sync_file_done();
        if (now - last_sec >= 1000) {
            last_sec = now;
            keepalive_waiting();
            if (now - last_ping >= 1000LL * __atomic_load_n(&cfg.repl_ping_replica_period, __ATOMIC_RELAXED)) {
                last_ping = now;
                pthread_mutex_lock(&mu);
                int on = backlog_on;
                pthread_mutex_unlock(&mu);
                /* A replica's stream is its master's, byte for byte (its
                 * replicas get the master's PINGs): a PING of its own would
                 * make its history differ from the master's under the same
                 * id, and a replica of ours continuing from it later would
                 * read the wrong bytes at its offset. */
                if (on && !repl_is_replica())
                    ping_replicas();
            }
        }
        housekeeping(now);
        /* Feeders do not wake this thread per write (a syscall per write
         * would cost the workers more than the stream itself): a worker
         * that fed something wakes it once at the end of its loop turn
         * (repl_kick), and only when it sleeps.  repl_sleeping is raised
         * before the last look at the buffer, so a feed after that look
         * finds it raised.  While a replica is online it also looks every
         * 10 ms (feeds from a thread that does not kick), else every
         * 100 ms.  New replicas and the child's end wake it too. */
        int work = 0, online = 0;
        pthread_mutex_lock(&mu);
        work = adopted != NULL || child_finished;
        for (struct replica *r = replicas; r; r = r->next)
            online |= r->state == R_ONLINE && !r->gone;
        pthread_mutex_unlock(&mu);
        /* Only with an online replica to feed is the thread woken (no
         * wake-ups for a backlog nobody reads, e.g. on a replica).  Under
         * a heavy stream (this round sent HOT_BATCH or more) it is not
         * woken either: it looks again in HOT_SLEEP_US, sending bigger
         * batches with far fewer wake-ups and context switches (on a
         * master pinned to one core they come out of the workers' time);
         * a light stream keeps the wake-up's latency. */
        int hot = sent_now >= HOT_BATCH;
        if (online && !work && !hot) {
            atomic_store(&repl_sleeping, 1);
            pthread_mutex_lock(&mu);
            for (struct replica *r = replicas; r; r = r->next)
                if (r->state == R_ONLINE && !r->gone && !r->out_armed && r->gen == hist_gen && r->sent < off)
                    work = 1;
            pthread_mutex_unlock(&mu);
        }
        int n;
        if (online && !work && hot) {
            struct timespec ts = {0, HOT_SLEEP_US * 1000};
            n = epoll_pwait2(epfd, evs, 64, &ts, NULL);
            if (n < 0 && errno == ENOSYS) /* a kernel before 5.11 */
                n = epoll_wait(epfd, evs, 64, 1);
        } else {
            n = epoll_wait(epfd, evs, 64, work ? 0 : online ? 10 : 100);
        }
        atomic_store(&repl_sleeping, 0);
        for (int i = 0; i < n; i++) {
            if (!evs[i].data.ptr) {
                uint64_t v;
                ssize_t rr = read(efd, &v, sizeof(v));
                (void)rr;
                continue;
            }
            struct replica *r = evs[i].data.ptr;
            if (r->gone)
                continue;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                read_replica(r);
            if (!r->gone && (evs[i].events & EPOLLOUT) && r->state == R_SEND_FILE) {
                ep_set(r, 0);
                write_file(r, chunk);
            }
            if (!r->gone && (evs[i].events & EPOLLOUT) && r->state == R_ONLINE) {
                ep_set(r, 0);
                write_replica(r, chunk);
            }
        }
    }
    hk_free(chunk);
    mem_thread_unregister();
    return NULL;
}

void repl_start(void)
{
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.ptr = NULL;
    epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev);
    pthread_mutex_lock(&mu);
    if (!replid[0])
        random_id(replid);
    pthread_mutex_unlock(&mu);
    if (pthread_create(&tid, NULL, repl_main, NULL) == 0)
        atomic_store(&started, 1);
}

void repl_stop(void)
{
    if (!atomic_load(&started))
        return;
    atomic_store(&stopping, 1);
    uint64_t one = 1;
    ssize_t w = write(efd, &one, sizeof(one));
    (void)w;
    pthread_join(tid, NULL);
    atomic_store(&started, 0);
    pthread_mutex_lock(&mu);
    while (replicas) {
        struct replica *r = replicas;
        replicas = r->next;
        close(r->fd);
        hk_free(r);
    }
    while (adopted) {
        struct replica *r = adopted;
        adopted = r->next;
        close(r->fd);
        hk_free(r);
    }
    pthread_mutex_unlock(&mu);
}

/* --------------------------------------------------------- introspection --- */
static const char *state_name(int s)
{
    switch (s) {
    case R_WAIT_FORK: return "wait_bgsave";
    case R_CHILD: return "send_bulk";
    case R_SEND_FILE: return "send_bulk";
    case R_WAIT_ACK: return "online"; /* as Redis shows a replica loading a diskless sync */
    default: return "online";
    }
}

size_t repl_info(char *buf, size_t cap)
{
    size_t len = 0;
#define OUT(...)                                                                                                       \
    do {                                                                                                               \
        int k_ = snprintf(buf + len, cap > len ? cap - len : 0, __VA_ARGS__);                                          \
        if (k_ > 0)                                                                                                    \
            len += (size_t)k_;                                                                                         \
    } while (0)
    long long now = time_ms();
    /* On a replica: its link's lines first (replica.c takes our mu). */
    if (repl_is_replica())
        len += replica_info(buf, cap);
    else
        OUT("role:master\r\n");
    pthread_mutex_lock(&mu);
    if (!replid[0])
        random_id(replid);
    int n = 0;
    for (struct replica *r = replicas; r; r = r->next)
        n += !r->gone;
    OUT("connected_slaves:%d\r\n", n);
    if (__atomic_load_n(&cfg.min_replicas_to_write, __ATOMIC_RELAXED) &&
        __atomic_load_n(&cfg.min_replicas_max_lag, __ATOMIC_RELAXED))
        OUT("min_slaves_good_slaves:%d\r\n", atomic_load(&repl_good_replicas));
    int i = 0;
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->gone)
            continue;
        OUT("slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i++, r->h.ip, r->h.listening_port,
            state_name(r->state), r->ack, r->state == R_ONLINE ? (now - r->ack_ms) / 1000 : 0);
    }
    /* An empty backlog (just restored, or nothing fed yet) starts right
     * after the offset, as Redis's; none at all shows 0. */
    uint64_t first = head ? head->start + 1 : backlog_on ? off + 1 : 0, hist = head ? off - head->start : 0;
    static const char *const fo_names[] = {"no-failover", "waiting-for-sync", "failover-in-progress"};
    int fo = atomic_load_explicit(&repl_failover_state, memory_order_relaxed);
    OUT("master_failover_state:%s\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n", fo_names[fo >= 0 && fo <= 2 ? fo : 0],
        replid, replid2);
    OUT("master_repl_offset:%llu\r\nsecond_repl_offset:%lld\r\n", (unsigned long long)off, second_off);
    OUT("repl_backlog_active:%d\r\nrepl_backlog_size:%lld\r\n", backlog_on,
        __atomic_load_n(&cfg.repl_backlog_size, __ATOMIC_RELAXED));
    OUT("repl_backlog_first_byte_offset:%llu\r\nrepl_backlog_histlen:%llu\r\n", (unsigned long long)first,
        (unsigned long long)hist);
    pthread_mutex_unlock(&mu);
#undef OUT
    return len < cap ? len : cap;
}

atomic_int repl_failover_state;

int repl_replica_count(void)
{
    int n = 0;
    pthread_mutex_lock(&mu);
    for (struct replica *r = replicas; r; r = r->next)
        n += !r->gone;
    pthread_mutex_unlock(&mu);
    return n;
}

int repl_replicas_synced(int *total, int log_lagging)
{
    /* The lagging ones are logged after repl_mu is let go (rule 16 of
     * docs/architecture.md: no I/O under it); a line each for the first 32. */
    struct {
        char ip[64];
        int port, state;
        long long behind, lag;
    } lag[32];
    int n = 0, in_sync = 0, nlag = 0;
    long long now = time_ms();
    pthread_mutex_lock(&mu);
    /* Handed over, not yet taken by the thread: attached, nothing acked. */
    for (struct replica *r = adopted; r; r = r->next)
        n++;
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->gone)
            continue;
        n++;
        if (r->state == R_ONLINE && r->ack >= (long long)off) {
            in_sync++;
        } else if (log_lagging && nlag < (int)(sizeof(lag) / sizeof(lag[0]))) {
            snprintf(lag[nlag].ip, sizeof(lag[nlag].ip), "%s", r->h.ip);
            lag[nlag].port = r->h.listening_port;
            lag[nlag].state = r->state;
            lag[nlag].behind = (long long)off - r->ack;
            lag[nlag].lag = r->state == R_ONLINE ? (now - r->ack_ms) / 1000 : 0;
            nlag++;
        }
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < nlag; i++)
        log_msg(LL_NOTICE, "Lagging replica %s:%d reported offset %lld behind master, lag=%lld, state=%s.", lag[i].ip,
                lag[i].port, lag[i].behind, lag[i].lag, state_name(lag[i].state));
    *total = n;
    return in_sync;
}

int repl_replica_state(const char *ip, int port, long long *ack)
{
    int st = -1;
    pthread_mutex_lock(&mu);
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->gone || r->h.listening_port != port || strcmp(r->h.ip, ip))
            continue;
        st = r->state == R_ONLINE;
        *ack = r->ack;
        if (st)
            break;
    }
    pthread_mutex_unlock(&mu);
    return st;
}

long long repl_role(struct repl_role_entry *out, int max, int *n)
{
    *n = 0;
    pthread_mutex_lock(&mu);
    for (struct replica *r = replicas; r && *n < max; r = r->next) {
        if (r->gone || r->state != R_ONLINE)
            continue;
        snprintf(out[*n].ip, sizeof(out[*n].ip), "%s", r->h.ip);
        out[*n].port = r->h.listening_port;
        out[*n].ack = r->ack;
        (*n)++;
    }
    long long o = (long long)off;
    pthread_mutex_unlock(&mu);
    return o;
}

void repl_reset_stats(void)
{
    atomic_store(&stat_full, 0);
    atomic_store(&stat_partial_ok, 0);
    atomic_store(&stat_partial_err, 0);
    atomic_store_explicit(&repl_net_in, 0, memory_order_relaxed);
    atomic_store_explicit(&repl_net_out, 0, memory_order_relaxed);
}

void repl_sync_stats(long long out[3])
{
    out[0] = atomic_load(&stat_full);
    out[1] = atomic_load(&stat_partial_ok);
    out[2] = atomic_load(&stat_partial_err);
}

size_t repl_buffer_bytes(void)
{
    return atomic_load_explicit(&buffer_bytes, memory_order_relaxed);
}

size_t repl_buffer_not_counted(void)
{
    size_t b = atomic_load_explicit(&buffer_bytes, memory_order_relaxed);
    long long keep = __atomic_load_n(&cfg.repl_backlog_size, __ATOMIC_RELAXED);
    return keep >= 0 && b > (size_t)keep ? b - (size_t)keep : 0;
}

/* ------------------------------------------------- as a replica's buffer --- */
int repl_is_replica(void)
{
    return atomic_load_explicit(&repl_role_replica, memory_order_relaxed);
}

unsigned repl_hist_gen(void)
{
    pthread_mutex_lock(&mu);
    unsigned g = hist_gen;
    pthread_mutex_unlock(&mu);
    return g;
}

void repl_feed_raw(const char *p, size_t n, unsigned gen)
{
    pthread_mutex_lock(&mu);
    if (gen == hist_gen) {
        if (backlog_on)
            append_locked(p, n);
        else
            off += n;
    }
    pthread_mutex_unlock(&mu);
}

/* Empty the buffer; the next byte fed has offset at + 1 (mu held). */
static void buffer_restart_locked(uint64_t at)
{
    /* Freed by the replication thread (it may be sending from them). */
    if (head) {
        tail->next = graveyard;
        graveyard = head;
        head = NULL;
    }
    tail = NULL;
    atomic_store_explicit(&buffer_bytes, 0, memory_order_relaxed);
    off = at;
    hist_gen++;
}

void repl_history_reset(const char *id, long long offset)
{
    pthread_mutex_lock(&mu);
    buffer_restart_locked(offset > 0 ? (uint64_t)offset : 0);
    snprintf(replid, sizeof(replid), "%s", id);
    memcpy(replid2, "0000000000000000000000000000000000000000", 41);
    second_off = -1;
    backlog_on = 1;
    last_db = -1;
    pthread_mutex_unlock(&mu);
}

void repl_history_new_id(const char *id)
{
    pthread_mutex_lock(&mu);
    if (strcmp(id, replid)) {
        memcpy(replid2, replid, 41);
        second_off = (long long)off + 1;
        snprintf(replid, sizeof(replid), "%s", id);
        hist_gen++;
    }
    pthread_mutex_unlock(&mu);
}

void repl_history_shift(void)
{
    pthread_mutex_lock(&mu);
    memcpy(replid2, replid, 41);
    second_off = (long long)off + 1;
    random_id(replid);
    last_db = -1; /* our own stream starts with SELECT */
    hist_gen++;
    pthread_mutex_unlock(&mu);
}

void repl_history_fresh(void)
{
    pthread_mutex_lock(&mu);
    random_id(replid);
    memcpy(replid2, "0000000000000000000000000000000000000000", 41);
    second_off = -1;
    last_db = -1;
    hist_gen++;
    pthread_mutex_unlock(&mu);
}

void repl_set_role_replica(int replica)
{
    atomic_store(&repl_role_replica, replica);
    pthread_mutex_lock(&mu);
    int on = backlog_on;
    pthread_mutex_unlock(&mu);
    prop_set_on_bit(PROP_ON_REPL, !replica && on);
}

long long repl_offset(int *have_backlog)
{
    pthread_mutex_lock(&mu);
    long long o = (long long)off;
    if (have_backlog)
        *have_backlog = backlog_on;
    pthread_mutex_unlock(&mu);
    return o;
}

int repl_drop_replicas(void)
{
    pthread_mutex_lock(&mu);
    int n = 0;
    for (struct replica *r = replicas; r; r = r->next)
        n += !r->gone;
    /* Only when there is one to drop: a flag left set with none would cut
     * the next replica to attach, long after (REPLICAOF ... then NO ONE). */
    if (n)
        drop_all = 1;
    pthread_mutex_unlock(&mu);
    return n;
}

/* ------------------------------------------------ WAIT, WAITAOF, min-replicas ---
 * The master side of WAIT / WAITAOF (the commands and their blocked
 * clients are cmd/repl.c's) and of min-replicas-to-write.  A command's
 * client learns the offset its writes reached through repl_tl_woff (set
 * by the feeding thread under mu, taken by the dispatcher after the
 * call).  The replication thread, once per loop turn (wait_tick): sends
 * REPLCONF GETACK * into the stream when a WAIT asked for it, counts the
 * good replicas for min-replicas-to-write, and, while clients wait, calls
 * repl_wait_wake when an ACK came, the AOF's fsynced position or
 * appendonly changed, or a new client started waiting. */
_Thread_local unsigned long long repl_tl_woff __attribute__((tls_model("local-exec")));
atomic_int repl_good_replicas;
atomic_int repl_wait_clients;
atomic_uint repl_wait_gen;
void (*repl_wait_wake)(void);
static atomic_int getack_req;

int repl_count_acks(long long woff, int fsynced)
{
    int n = 0;
    pthread_mutex_lock(&mu);
    for (struct replica *r = replicas; r; r = r->next)
        if (!r->gone && r->state == R_ONLINE && (fsynced ? r->fack : r->ack) >= woff)
            n++;
    pthread_mutex_unlock(&mu);
    return n;
}

void repl_request_getack(void)
{
    atomic_store_explicit(&getack_req, 1, memory_order_relaxed);
}

int repl_enough_good_replicas(void)
{
    int need = __atomic_load_n(&cfg.min_replicas_to_write, __ATOMIC_RELAXED);
    if (need <= 0 || __atomic_load_n(&cfg.min_replicas_max_lag, __ATOMIC_RELAXED) <= 0 || repl_is_replica())
        return 1;
    return atomic_load_explicit(&repl_good_replicas, memory_order_relaxed) >= need;
}

static void wait_tick(long long now)
{
    /* Good replicas: online, last ACK at most min-replicas-max-lag seconds
     * ago (Redis counts in whole seconds).  The thread's own fields. */
    long long lag_max = __atomic_load_n(&cfg.min_replicas_max_lag, __ATOMIC_RELAXED);
    int good = 0, online = 0;
    for (struct replica *r = replicas; r; r = r->next) {
        if (r->gone || r->state != R_ONLINE)
            continue;
        online++;
        if ((now - r->ack_ms) / 1000 <= lag_max)
            good++;
    }
    atomic_store_explicit(&repl_good_replicas, good, memory_order_relaxed);
    /* REPLCONF GETACK *: part of the stream (counted in the offset, no
     * SELECT), at most once per turn, as Redis sends it before sleeping. */
    if (atomic_exchange_explicit(&getack_req, 0, memory_order_relaxed) && online && !repl_is_replica()) {
        static const char *const av[3] = {"REPLCONF", "GETACK", "*"};
        static const size_t al[3] = {8, 6, 1};
        char out[64];
        char *e = put_cmd(out, 3, av, al);
        pthread_mutex_lock(&mu);
        if (backlog_on)
            append_locked(out, (size_t)(e - out));
        pthread_mutex_unlock(&mu);
    }
    static unsigned long long aof_seen;
    static int aon_seen;
    static unsigned gen_seen;
    unsigned long long synced = atomic_load_explicit(&aof_synced_bytes, memory_order_acquire);
    int aon = __atomic_load_n(&cfg.appendonly, __ATOMIC_RELAXED) && atomic_load(&aof_active);
    unsigned gen = atomic_load(&repl_wait_gen);
    int moved = wait_acks_moved || synced != aof_seen || aon != aon_seen || gen != gen_seen;
    wait_acks_moved = 0;
    aof_seen = synced;
    aon_seen = aon;
    gen_seen = gen;
    if (moved && atomic_load(&repl_wait_clients) > 0) {
        void (*fn)(void) = __atomic_load_n(&repl_wait_wake, __ATOMIC_ACQUIRE);
        if (fn)
            fn();
    }
}
