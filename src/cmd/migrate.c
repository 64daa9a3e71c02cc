/* migrate.c - MIGRATE (and RESTORE-ASKING, whose handler is RESTORE's,
 * t_dump.c): move keys to another server, Redis 7.2's command.
 *
 *   MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
 *           [AUTH password] [AUTH2 username password] [KEYS key ...]
 *
 * The source serializes each key it holds as DUMP does (dump_payload) and
 * sends the target AUTH when asked, SELECT when the connection is not
 * already on destination-db, and one RESTORE per key (with the key's
 * remaining TTL and REPLACE when given), pipelined, then reads the replies
 * in order.  A key is deleted here only once the target answered +OK to
 * its RESTORE (never with COPY), so a failure at any point leaves every
 * key not acknowledged where it was: nothing is lost, at worst a key
 * exists on both sides.  The deletions are propagated (AOF, replicas) as
 * one DEL of the acknowledged keys, not as MIGRATE.
 *
 * One difference with Redis, which always pipelines AUTH and SELECT with
 * the RESTOREs: when the connection has not accepted that AUTH or that
 * SELECT before (a new connection, another database or other credentials)
 * they make a round trip of their own first, and the RESTOREs are sent
 * only if they answered +OK; otherwise a RESTORE could run with the
 * connection's previous user or in its previous database after a failed
 * AUTH or SELECT.  The replies to the client are Redis's, except that a
 * target that stops answering during that round trip is a "reading" error
 * where Redis, still writing a large request, may say "writing".
 *
 * Locking.  The keys (argv[3], or the KEYS list: migrate_getkeys) are
 * declared in the command table, so the dispatcher (or EXEC's and a
 * script's lock context) holds their slot locks for the whole call,
 * network round trip included: no other client sees or changes them
 * between the DUMP and the DEL, as Redis makes the command atomic by
 * blocking its only thread.  Other slots, and every other worker, keep
 * running; this worker's other clients wait, as in Redis.
 *
 * Timeouts.  The connect, each 64 KiB of the request and each reply line
 * must complete within `timeout` ms (<= 0 means 1000): a target that stops
 * answering costs the worker `timeout` once, then the call fails with
 * IOERR and the keys stay; a slow one at most `timeout` per 64 KiB sent and
 * per reply line (Redis's bounds are the same for the request, per byte
 * for the replies).  As in Redis, a connection that cannot even be started
 * (the host does not resolve, a bad port) is "IOERR error or timeout
 * connecting to the client", one refused or timed out "IOERR error or
 * timeout writing to target instance" (Redis learns of it when it writes).
 *
 * Replies are untrusted: read line by line through a small buffer, at most
 * MIG_LINE_MAX bytes a line (the first 1023 kept for an error text); only
 * "+..." acknowledges, "-..." is the target's error (passed back, CR/LF
 * blanked, as "ERR Target instance replied with error: ..."), anything
 * else, or bytes beyond the replies expected, is a protocol error that
 * closes the connection and acknowledges nothing more.  Host names are
 * resolved with getaddrinfo() (numeric addresses never wait; a name waits
 * as long as the resolver does, as in Redis).
 *
 * The connection cache.  Like Redis's migrate_cached_sockets: connections
 * keyed by "host:port" as written in the command, at most MIG_CACHE_MAX,
 * closed after MIG_CACHE_TTL_MS unused, each remembering the database its
 * last successful MIGRATE selected (and the AUTH it accepted).  Here the
 * cache is per worker thread (thread-local, no lock): a client's MIGRATEs
 * all run on the worker that accepted it, so a steady migration reuses one
 * connection; each worker holds its own (at most MIG_CACHE_MAX each).  The worker's cron closes the
 * idle ones (cmd/loop.c), its exit all of them.  A cached connection is
 * checked before use (a peek: closed by the peer or holding unsolicited
 * bytes -> dropped and dialled again), and, as Redis does, a call on a
 * cached connection that fails writing, or reading the first reply, for a
 * reason other than a timeout is retried once on a fresh connection. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../cluster/cluster.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../persist/prop.h"
#include "../persist/rdb.h"
#include "commands.h"
#include "migrate.h"
#include "notify.h"

#define MIG_CACHE_MAX 64          /* cached connections per worker */
#define MIG_CACHE_TTL_MS 10000    /* closed after this long unused */
#define MIG_LINE_KEEP 1024        /* bytes of a reply line kept (error text) */
#define MIG_LINE_MAX (64 * 1024)  /* a longer reply line is a protocol error */
#define MIG_TIMEOUT_MAX 2147483647LL

struct mig_sock {
    char *name; /* "host:port" as written in the command */
    size_t nlen, hlen; /* hlen: the host's part ("a:1" "2" is not "a" "1:2") */
    int fd;
    long long last_db; /* -1: unknown, SELECT first */
    long long last_use_ms;
    /* The AUTH request last accepted on it (NULL: none): the same AUTH is
     * pipelined with the RESTOREs, any other gets its own round trip. */
    unsigned char *auth;
    size_t authlen;
};

static _Thread_local struct mig_sock *mig_cache[MIG_CACHE_MAX];
static _Thread_local int mig_ncache;
/* The sum of every worker's mig_ncache, for INFO's migrate_cached_sockets
 * (each worker adds and subtracts its own; relaxed, read only by INFO). */
static long mig_total;

static long long mono_ms(void)
{
    return mono_us() / 1000;
}

/* ------------------------------------------------------------ getkeys --- */
int migrate_getkeys(struct client *c, int *idx, int max)
{
    int first = 3, num = 1;
    if (c->argc < 4)
        return 0;
    /* The KEYS form, found by walking the options as the handler parses
     * them (AUTH takes one argument, AUTH2 two). */
    for (int i = 6; i < c->argc; i++) {
        if (arg_is(c, i, "keys")) {
            if (c->argvlen[3] > 0) {
                num = 0; /* a syntax error: the handler says so */
            } else {
                first = i + 1;
                num = c->argc - first;
            }
            break;
        }
        if (arg_is(c, i, "auth"))
            i += 1;
        else if (arg_is(c, i, "auth2"))
            i += 2;
    }
    int n = 0;
    for (int i = 0; i < num && n < max && first + i < c->argc; i++)
        idx[n++] = first + i;
    return n;
}

int migrate_arg_redacted(int argc, const char *const *argv, const size_t *lens, int i)
{
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;
        if (str_eq_nocase(argv[j], lens[j], "auth") && more >= 1) {
            if (i == j + 1)
                return 1;
            j += 1;
        } else if (str_eq_nocase(argv[j], lens[j], "auth2") && more >= 2) {
            if (i == j + 1 || i == j + 2)
                return 1;
            j += 2;
        } else if (str_eq_nocase(argv[j], lens[j], "keys")) {
            break;
        }
    }
    return 0;
}

/* -------------------------------------------------------------- cache --- */
static void sock_free(struct mig_sock *s)
{
    if (s->fd >= 0)
        close(s->fd);
    hk_free(s->name);
    hk_free(s->auth);
    hk_free(s);
}

static int cache_find(const char *name, size_t nlen, size_t hlen)
{
    for (int i = 0; i < mig_ncache; i++)
        if (mig_cache[i]->nlen == nlen && mig_cache[i]->hlen == hlen && !memcmp(mig_cache[i]->name, name, nlen))
            return i;
    return -1;
}

static void cache_drop_at(int i)
{
    sock_free(mig_cache[i]);
    __atomic_sub_fetch(&mig_total, 1, __ATOMIC_RELAXED);
    mig_cache[i] = mig_cache[--mig_ncache];
    mig_cache[mig_ncache] = NULL;
}

/* Close a cached connection (after an I/O error: the next call dials
 * again and selects its database again). */
static void cache_close(struct mig_sock *s)
{
    for (int i = 0; i < mig_ncache; i++)
        if (mig_cache[i] == s) {
            cache_drop_at(i);
            return;
        }
}

void migrate_cron(void)
{
    if (!mig_ncache)
        return;
    long long now = mono_ms();
    for (int i = mig_ncache - 1; i >= 0; i--)
        if (now - mig_cache[i]->last_use_ms > MIG_CACHE_TTL_MS)
            cache_drop_at(i);
}

long migrate_cached_sockets(void)
{
    return __atomic_load_n(&mig_total, __ATOMIC_RELAXED);
}

void migrate_thread_exit(void)
{
    while (mig_ncache)
        cache_drop_at(mig_ncache - 1);
}

/* A cached connection still usable: open, with nothing unread on it. */
static int sock_healthy(int fd)
{
    char b;
    ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Wait until fd is ready for ev or the deadline (monotonic ms) passes:
 * 0 ready (or in error: the next I/O call says which), -1 with errno
 * (ETIMEDOUT at the deadline). */
static int wait_fd(int fd, short ev, long long deadline)
{
    for (;;) {
        long long left = deadline - mono_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = ev};
        int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r > 0)
            return 0;
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (errno != EINTR)
            return -1;
    }
}

/* The port as Redis reads it (atoi: leading blanks, a sign, digits). */
static int parse_port(const char *s, size_t len)
{
    size_t i = 0;
    long long v = 0;
    int neg = 0;
    while (i < len && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')))
        i++;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        if (v < LONG_MAX / 10)
            v = v * 10 + (s[i] - '0');
        else
            v = LONG_MAX;
    return (int)(long)(neg ? -v : v);
}

/* A non-blocking TCP connection to host:port within timeout ms: the fd;
 * -1 when no connection could even be started (the name does not resolve,
 * a bad port: Redis's "connecting" error); -2 when one was started and
 * failed or timed out (refused, unreachable: Redis finds out when it
 * writes, and says "writing").  Every address getaddrinfo gives is tried,
 * sharing the deadline. */
static int dial(const char *host, size_t hlen, int port, long long timeout)
{
    if (hlen == 0 || memchr(host, 0, hlen))
        return -1;
    long long deadline = mono_ms() + timeout;
    char *h = hk_malloc(hlen + 1), ps[16];
    memcpy(h, host, hlen);
    h[hlen] = 0;
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(h, ps, &hints, &res);
    hk_free(h);
    if (rc != 0)
        return -1;
    int fd = -1, started = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        int ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        if (!ok && errno == EINPROGRESS) {
            started = 1;
            if (wait_fd(fd, POLLOUT, deadline) == 0) {
                int err = 0;
                socklen_t el = sizeof(err);
                ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
            }
        }
        if (ok)
            break;
        close(fd);
        fd = -1;
        if (mono_ms() >= deadline)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return started ? -2 : -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* The cached connection to host:port, or a new one (cached); NULL after
 * replying the connect error.  *fresh: 1 when just dialled. */
static struct mig_sock *get_sock(struct client *c, long long timeout, int *fresh)
{
    size_t hl = c->argvlen[1], pl = c->argvlen[2], nlen = hl + 1 + pl;
    char *name = hk_malloc(nlen + 1);
    memcpy(name, c->argv[1], hl);
    name[hl] = ':';
    memcpy(name + hl + 1, c->argv[2], pl);
    name[nlen] = 0;
    int i = cache_find(name, nlen, hl);
    if (i >= 0 && !sock_healthy(mig_cache[i]->fd))
        cache_drop_at(i), i = -1;
    if (i >= 0) {
        hk_free(name);
        mig_cache[i]->last_use_ms = mono_ms();
        *fresh = 0;
        return mig_cache[i];
    }
    if (mig_ncache == MIG_CACHE_MAX) {
        /* Full: drop the least recently used (Redis drops one at random). */
        int lru = 0;
        for (int j = 1; j < mig_ncache; j++)
            if (mig_cache[j]->last_use_ms < mig_cache[lru]->last_use_ms)
                lru = j;
        cache_drop_at(lru);
    }
    int fd = dial(c->argv[1], hl, parse_port(c->argv[2], pl), timeout);
    if (fd < 0) {
        hk_free(name);
        reply_error(&c->out, fd == -1 ? "IOERR error or timeout connecting to the client"
                                      : "IOERR error or timeout writing to target instance");
        return NULL;
    }
    struct mig_sock *s = hk_malloc(sizeof(*s));
    s->name = name;
    s->nlen = nlen;
    s->hlen = hl;
    s->fd = fd;
    s->last_db = -1;
    s->last_use_ms = mono_ms();
    s->auth = NULL;
    s->authlen = 0;
    mig_cache[mig_ncache++] = s;
    __atomic_add_fetch(&mig_total, 1, __ATOMIC_RELAXED);
    *fresh = 1;
    return s;
}

/* ---------------------------------------------------------------- I/O --- */
/* All of buf, as Redis writes it: in 64 KiB chunks, each sent within
 * timeout ms (so a dead target costs timeout, and a slow one at most
 * timeout per chunk); -1 with errno. */
#define MIG_CHUNK (64 * 1024)
static int write_all(int fd, const unsigned char *buf, size_t len, long long timeout)
{
    size_t pos = 0;
    long long deadline = mono_ms() + timeout;
    while (pos < len) {
        size_t want = len - pos < MIG_CHUNK - pos % MIG_CHUNK ? len - pos : MIG_CHUNK - pos % MIG_CHUNK;
        ssize_t n = send(fd, buf + pos, want, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            if ((pos + (size_t)n) / MIG_CHUNK != pos / MIG_CHUNK)
                deadline = mono_ms() + timeout; /* the next chunk */
            pos += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, POLLOUT, deadline) < 0)
                return -1;
            continue;
        }
        if (n == 0)
            errno = EPIPE;
        return -1;
    }
    return 0;
}

struct mig_reader {
    int fd;
    size_t pos, len;
    char buf[4096];
};

/* One reply line (CRLF or LF ended) within timeout ms: its first
 * MIG_LINE_KEEP - 1 bytes into out, NUL-terminated, CR/LF stripped.  0, or
 * -1 with errno (ETIMEDOUT, ECONNRESET at end of stream, EPROTO for a line
 * longer than MIG_LINE_MAX). */
static int read_line(struct mig_reader *r, char *out, long long timeout)
{
    long long deadline = mono_ms() + timeout;
    size_t kept = 0, total = 0;
    for (;;) {
        while (r->pos < r->len) {
            char ch = r->buf[r->pos++];
            if (ch == '\n') {
                if (kept && out[kept - 1] == '\r' && kept == total)
                    kept--;
                out[kept] = 0;
                return 0;
            }
            if (++total > MIG_LINE_MAX) {
                errno = EPROTO;
                return -1;
            }
            if (kept < MIG_LINE_KEEP - 1)
                out[kept++] = ch;
        }
        ssize_t n = recv(r->fd, r->buf, sizeof(r->buf), MSG_DONTWAIT);
        if (n > 0) {
            r->pos = 0;
            r->len = (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (wait_fd(r->fd, POLLIN, deadline) < 0)
            return -1;
    }
}

/* --------------------------------------------------------- the request --- */
struct mig_buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_add(struct mig_buf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_count(struct mig_buf *b, long long n)
{
    char t[32];
    int l = snprintf(t, sizeof(t), "*%lld\r\n", n);
    buf_add(b, t, (size_t)l);
}

static void buf_bulk(struct mig_buf *b, const void *s, size_t n)
{
    char t[32];
    int l = snprintf(t, sizeof(t), "$%zu\r\n", n);
    buf_add(b, t, (size_t)l);
    buf_add(b, s, n);
    buf_add(b, "\r\n", 2);
}

static void buf_bulk_ll(struct mig_buf *b, long long v)
{
    char t[24];
    int l = ll_to_str(t, v);
    buf_bulk(b, t, (size_t)l);
}

/* The target's error line, as Redis passes it back: no CR or LF in it. */
static void reply_target_error(struct client *c, char *line)
{
    for (char *p = line; *p; p++)
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    reply_errorf(&c->out, "ERR Target instance replied with error: %s", line + 1);
}

void migrate_command(struct client *c)
{
    int copy = 0, replace = 0;
    int user_i = -1, pass_i = -1;
    long long timeout, dbid;

    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "copy")) {
            copy = 1;
        } else if (arg_is(c, j, "replace")) {
            replace = 1;
        } else if (arg_is(c, j, "auth")) {
            if (!more) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
            pass_i = ++j;
            user_i = -1;
        } else if (arg_is(c, j, "auth2")) {
            if (more < 2) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
            user_i = ++j;
            pass_i = ++j;
        } else if (arg_is(c, j, "keys")) {
            if (c->argvlen[3] != 0) {
                reply_error(&c->out, "ERR When using MIGRATE KEYS option, the key argument must be set to the "
                                     "empty string");
                return;
            }
            break; /* the rest are keys */
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (arg_ll(c, 5, &timeout) < 0 || arg_ll(c, 4, &dbid) < 0)
        return;
    if (timeout <= 0)
        timeout = 1000;
    if (timeout > MIG_TIMEOUT_MAX)
        timeout = MIG_TIMEOUT_MAX;

    /* The keys that exist, of those the table declares (argv[3], or what
     * follows KEYS: the slots the dispatcher locked); none: +NOKEY (not an
     * error, as in Redis: a key may just have expired). */
    int *ki = hk_malloc(sizeof(int) * (size_t)c->argc);
    int num_keys = migrate_getkeys(c, ki, c->argc), nk = 0;
    for (int j = 0; j < num_keys; j++) {
        int a = ki[j];
        if (db_get(c->db, kslot(c, a), c->argv[a], c->argvlen[a], 0))
            ki[nk++] = a;
    }
    if (!nk) {
        hk_free(ki);
        reply_status(&c->out, "NOKEY");
        return;
    }

    /* The request: the same bytes for a retry (the keys are locked). */
    struct mig_buf req = {0};
    if (pass_i >= 0) {
        buf_count(&req, user_i >= 0 ? 3 : 2);
        buf_bulk(&req, "AUTH", 4);
        if (user_i >= 0)
            buf_bulk(&req, c->argv[user_i], c->argvlen[user_i]);
        buf_bulk(&req, c->argv[pass_i], c->argvlen[pass_i]);
    }
    size_t select_at = req.len;
    buf_count(&req, 2);
    buf_bulk(&req, "SELECT", 6);
    buf_bulk_ll(&req, dbid);
    size_t select_end = req.len;
    long long now = db_now_ms();
    int n = 0;
    for (int j = 0; j < nk; j++) {
        int a = ki[j];
        struct entry *e = db_get(c->db, kslot(c, a), c->argv[a], c->argvlen[a], LK_NOTOUCH | LK_NOSTATS);
        if (!e)
            continue;
        long long ttl = 0, at = entry_expire(e);
        if (at != -1) {
            ttl = at - now;
            if (ttl < 0)
                continue;
            if (ttl < 1)
                ttl = 1;
        }
        struct rdb_out o;
        if (dump_payload(e, &o) < 0) {
            hk_free(req.p);
            hk_free(ki);
            reply_error(&c->out, ERR_DUMP_FAILED);
            return;
        }
        /* Standalone: RESTORE; a cluster node sends RESTORE-ASKING, so
         * that a target importing the slot accepts it. */
        buf_count(&req, replace ? 5 : 4);
        if (cluster_on)
            buf_bulk(&req, "RESTORE-ASKING", 14);
        else
            buf_bulk(&req, "RESTORE", 7);
        buf_bulk(&req, c->argv[a], c->argvlen[a]);
        buf_bulk_ll(&req, ttl);
        buf_bulk(&req, o.buf, o.len);
        rdb_out_free(&o);
        if (replace)
            buf_bulk(&req, "REPLACE", 7);
        ki[n++] = a;
    }
    nk = n;
    if (!nk) {
        hk_free(req.p);
        hk_free(ki);
        reply_status(&c->out, "NOKEY");
        return;
    }

    const char **dargv = copy ? NULL : hk_malloc(sizeof(*dargv) * (size_t)(nk + 1));
    size_t *dlens = copy ? NULL : hk_malloc(sizeof(*dlens) * (size_t)(nk + 1));
    int ndel = 0, may_retry = 1;
    char *l_auth = hk_malloc(3 * MIG_LINE_KEEP), *l_sel = l_auth + MIG_LINE_KEEP, *l_key = l_sel + MIG_LINE_KEEP;
    struct mig_reader *rd = hk_malloc(sizeof(*rd));

    for (;;) {
        int fresh;
        struct mig_sock *cs = get_sock(c, timeout, &fresh);
        if (!cs)
            break; /* replied */
        if (fresh)
            may_retry = 0; /* only a cached connection gets a second chance */
        int select = cs->last_db != dbid, fd = cs->fd, auth = pass_i >= 0;
        int err = 0, write_error = 0, error_from_target = 0, socket_error = 0, j = 0;
        rd->fd = fd;
        /* AUTH and SELECT go first, on their own, when the connection has
         * not accepted them before (a new one, another database, other
         * credentials): a RESTORE must not run after a failed AUTH or
         * SELECT (it would run with the connection's previous user or in
         * its previous database, as it can in Redis, which always
         * pipelines them).  Otherwise everything is one pipelined write. */
        int known_auth = auth && cs->auth && cs->authlen == select_at && !memcmp(cs->auth, req.p, select_at);
        if (select || (auth && !known_auth)) {
            rd->pos = rd->len = 0;
            if (write_all(fd, req.p, select ? select_end : select_at, timeout) < 0) {
                err = write_error = 1;
            } else if ((auth && read_line(rd, l_auth, timeout) < 0) || (select && read_line(rd, l_sel, timeout) < 0)) {
                err = 1;
            } else {
                char *bad = auth && l_auth[0] != '+' ? l_auth : select && l_sel[0] != '+' ? l_sel : NULL;
                if (bad && bad[0] == '-') {
                    cs->last_db = -1; /* SELECT again next time */
                    error_from_target = 1;
                    reply_target_error(c, bad);
                } else if (bad || rd->pos < rd->len) {
                    errno = EPROTO; /* not a Redis reply, or more than one */
                    err = 1;
                } else {
                    cs->last_db = dbid;
                    if (auth) {
                        hk_free(cs->auth);
                        cs->auth = hk_malloc(select_at);
                        memcpy(cs->auth, req.p, select_at);
                        cs->authlen = select_at;
                    }
                }
            }
            auth = 0; /* answered */
        }
        if (!err && !error_from_target) {
            rd->pos = rd->len = 0;
            if ((auth && write_all(fd, req.p, select_at, timeout) < 0) ||
                write_all(fd, req.p + select_end, req.len - select_end, timeout) < 0)
                err = write_error = 1;
            else if (auth && read_line(rd, l_auth, timeout) < 0)
                err = 1;
            else if (auth && l_auth[0] != '+' && l_auth[0] != '-')
                err = 1, errno = EPROTO;
        }
        if (!err && !error_from_target) {
            for (j = 0; j < nk; j++) {
                if (read_line(rd, l_key, timeout) < 0) {
                    socket_error = 1;
                    break;
                }
                if (l_key[0] != '+' && l_key[0] != '-') {
                    /* Neither +OK nor an error: not a Redis reply to
                     * RESTORE.  Nothing counts as acknowledged from here. */
                    errno = EPROTO;
                    socket_error = 1;
                    break;
                }
                /* A pipelined AUTH that failed: no RESTORE counts. */
                char *bad = auth && l_auth[0] == '-' ? l_auth : l_key[0] == '-' ? l_key : NULL;
                if (bad) {
                    if (!error_from_target) {
                        cs->last_db = -1;
                        hk_free(cs->auth);
                        cs->auth = NULL;
                        error_from_target = 1;
                        reply_target_error(c, bad);
                    }
                } else if (!copy) {
                    int a = ki[j];
                    unsigned slot = kslot(c, a);
                    if (db_del(c->db, slot, c->argv[a], c->argvlen[a])) {
                        signal_modified_key(c, c->db, slot, c->argv[a], c->argvlen[a]);
                        notify_keyspace_event(NOTIFY_GENERIC, "del", c->argv[a], c->argvlen[a], c->db);
                    }
                    dargv[1 + ndel] = c->argv[a];
                    dlens[1 + ndel] = c->argvlen[a];
                    ndel++;
                }
            }
            /* Bytes past the replies: the connection is out of step. */
            if (!socket_error && rd->pos < rd->len)
                socket_error = 1, errno = EPROTO;
        }
        int saved = errno;
        if (err || socket_error) {
            cache_close(cs);
            if (error_from_target)
                break; /* its error was the reply */
            if (j == 0 && may_retry && saved != ETIMEDOUT) {
                /* Nothing acknowledged (j == 0: no RESTORE reply read, so
                 * nothing deleted): once more, on a new connection. */
                may_retry = 0;
                continue;
            }
            reply_errorf(&c->out, "IOERR error or timeout %s to target instance", write_error ? "writing" : "reading");
            break;
        }
        if (!error_from_target) {
            cs->last_db = dbid;
            reply_ok(&c->out);
        }
        break;
    }
    if (ndel) {
        /* Replicas and the AOF delete what the target acknowledged. */
        dargv[0] = "DEL";
        dlens[0] = 3;
        prop_rewrite(c, ndel + 1, dargv, dlens);
    }
    hk_free(rd);
    hk_free(l_auth);
    hk_free(dargv);
    hk_free(dlens);
    hk_free(req.p);
    hk_free(ki);
}
