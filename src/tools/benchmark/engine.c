/* engine.c - connections, worker threads and the timing loops of
 * hotkv-benchmark (see bench.h for who owns what).
 *
 * Every worker runs one epoll loop over its connections.  Sockets are
 * non-blocking with TCP_NODELAY; connecting, the handshake (AUTH, SELECT,
 * HELLO 3, SUBSCRIBE) and reconnecting after a drop all happen inside the
 * loop, so one slow connection never blocks the others.
 *
 * Closed loop: every connection keeps `pipeline` requests outstanding; after
 * each read it tops itself up with one write.  Latency = reply time - write
 * time.
 *
 * Open loop: connection sid (0..N-1) sends request k at the intended time
 * t0 + (sid + k*N) / rate, whatever the replies, so the union of all
 * connections is one request every 1/rate seconds.  A worker's connections
 * are kept sorted by sid, so the next one due is always at the cursor and
 * finding it costs O(1).  A timerfd armed at the next intended time (with
 * 1 us timer slack) wakes the loop.  Latency = reply time - intended send
 * time: a server (or a generator) that falls behind shows up in full.
 *
 * --cluster (cluster.h): a client is a group of connections, one per master;
 * the group's first connection carries the schedule, every request goes to
 * the connection of its key's owner (queued behind the handshake if that
 * one is still connecting), and each outstanding request remembers its
 * template and key index (bm_req) so that a -MOVED or -ASK reply can send it
 * again elsewhere with its original send time. */
#include "bench.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "stamp.h"

#define TFD_TAG UINT64_MAX
#define READ_CHUNK (64 * 1024)
#define RECONNECT_NS 100000000ull  /* retry a dropped connection after 100 ms */
#define LIVE_NS 200000000ull       /* publish the live histogram every 200 ms */
#define MAX_EVENTS 256


static void set_fatal(struct bm_engine *e, const char *fmt, const char *a, const char *b)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&e->fatal, &expected, 2)) {
        snprintf(e->fatal_msg, sizeof(e->fatal_msg), fmt, a, b);
        atomic_store(&e->fatal, 1);
    }
}

static int is_fatal(struct bm_engine *e)
{
    return atomic_load_explicit(&e->fatal, memory_order_relaxed) != 0;
}

/* ---- RESP command encoding (handshake, PUBLISH, SUBSCRIBE) ---- */

static void buf_put(char **buf, size_t *len, size_t *cap, const void *src, size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *len + n)
            c *= 2;
        *buf = xrealloc(*buf, c);
        *cap = c;
    }
    memcpy(*buf + *len, src, n);
    *len += n;
}

/* Append a command of argc NUL-terminated words. */
static void encode_cmd(char **buf, size_t *len, size_t *cap, int argc, const char **argv)
{
    char hdr[32];
    int n = snprintf(hdr, sizeof(hdr), "*%d\r\n", argc);
    buf_put(buf, len, cap, hdr, (size_t)n);
    for (int i = 0; i < argc; i++) {
        size_t al = strlen(argv[i]);
        n = snprintf(hdr, sizeof(hdr), "$%zu\r\n", al);
        buf_put(buf, len, cap, hdr, (size_t)n);
        buf_put(buf, len, cap, argv[i], al);
        buf_put(buf, len, cap, "\r\n", 2);
    }
}

static void channel_name(char *dst, size_t cap, int c)
{
    snprintf(dst, cap, "channel:%06d", c);
}

/* ---- outstanding-request ring ---- */

/* rq: --cluster only (a parallel ring of what each request was), else NULL. */
static void ts_push_rq(struct bm_conn *c, uint64_t t, const struct bm_req *rq)
{
    if (c->ts_count == c->ts_cap) {
        size_t ncap = c->ts_cap ? c->ts_cap * 2 : 64;
        uint64_t *n = xmalloc(sizeof(uint64_t) * ncap);
        for (size_t i = 0; i < c->ts_count; i++)
            n[i] = c->ts[(c->ts_head + i) & (c->ts_cap - 1)];
        if (rq) {
            struct bm_req *nr = xmalloc(sizeof(struct bm_req) * ncap);
            for (size_t i = 0; i < c->ts_count; i++)
                nr[i] = c->rq[(c->ts_head + i) & (c->ts_cap - 1)];
            free(c->rq);
            c->rq = nr;
        }
        free(c->ts);
        c->ts = n;
        c->ts_cap = ncap;
        c->ts_head = 0;
    }
    size_t at = (c->ts_head + c->ts_count) & (c->ts_cap - 1);
    c->ts[at] = t;
    if (rq)
        c->rq[at] = *rq;
    c->ts_count++;
}

static void ts_push(struct bm_conn *c, uint64_t t)
{
    ts_push_rq(c, t, NULL);
}

static uint64_t ts_pop(struct bm_conn *c, struct bm_req *rq)
{
    uint64_t t = c->ts[c->ts_head];
    if (rq)
        *rq = c->rq[c->ts_head];
    c->ts_head = (c->ts_head + 1) & (c->ts_cap - 1);
    c->ts_count--;
    return t;
}

/* ---- connections ---- */

static void wbuf_reserve(struct bm_conn *c, size_t n)
{
    if (c->wlen + n <= c->wcap)
        return;
    if (c->wpos > 0) { /* compact first */
        memmove(c->wbuf, c->wbuf + c->wpos, c->wlen - c->wpos);
        c->wlen -= c->wpos;
        c->wpos = 0;
        if (c->wlen + n <= c->wcap)
            return;
    }
    size_t cap = c->wcap ? c->wcap : 16384;
    while (cap < c->wlen + n)
        cap *= 2;
    c->wbuf = xrealloc(c->wbuf, cap);
    c->wcap = cap;
}

static void copy_msg(char *dst, size_t cap, const char *prefix, const char *s, size_t n)
{
    if (dst[0])
        return;
    size_t pl = strlen(prefix);
    if (pl >= cap)
        pl = cap - 1;
    memcpy(dst, prefix, pl);
    size_t room = cap - 1 - pl;
    if (n > room)
        n = room;
    for (size_t i = 0; i < n; i++)
        dst[pl + i] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    dst[pl + n] = 0;
}

static void epoll_set(struct bm_worker *w, struct bm_conn *c, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0u)};
    ev.data.u64 = (uint64_t)(c - w->conns);
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = out;
}

/* Drop a connection: what it had outstanding is lost (and counted); it is
 * retried after RECONNECT_NS. */
static void conn_drop(struct bm_worker *w, struct bm_conn *c, const char *why, int count)
{
    struct bm_engine *e = w->eng;
    if (c->fd >= 0) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    if (count) {
        w->res.disconnects++;
        copy_msg(w->res.first_disconnect, sizeof(w->res.first_disconnect), "", why,
                 strlen(why));
    }
    if (c->role == ROLE_PUBLISHER && c->ts_count)
        atomic_fetch_sub(&e->ps_outstanding, (int64_t)c->ts_count);
    size_t lost = c->ts_count;
    if (e->cluster) {
        for (size_t i = 0; i < c->ts_count; i++)
            lost -= (c->rq[(c->ts_head + i) & (c->ts_cap - 1)].flags & BM_RQ_ASKING) != 0;
        w->conns[c->grp].gout -= lost;
        w->ns[c->node].lost += lost;
    }
    w->res.lost += lost;
    atomic_fetch_add_explicit(&w->prog_errors, lost, memory_order_relaxed);
    c->ts_count = c->ts_head = 0;
    c->wlen = c->wpos = 0;
    c->rlen = c->rpos = 0;
    bm_rp_init(&c->rp);
    if (c->state != CS_DEAD)
        w->ndead++;
    c->state = CS_DEAD;
    c->want_out = 0;
    c->reconnect_at = bm_now_ns() + RECONNECT_NS;
}

static int conn_flush(struct bm_worker *w, struct bm_conn *c)
{
    while (c->wpos < c->wlen) {
        ssize_t n = send(c->fd, c->wbuf + c->wpos, c->wlen - c->wpos, MSG_NOSIGNAL);
        if (n > 0) {
            c->wpos += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->want_out)
                epoll_set(w, c, 1);
            return 0;
        } else {
            conn_drop(w, c, n < 0 ? strerror(errno) : "send failed", 1);
            return -1;
        }
    }
    c->wpos = c->wlen = 0;
    if (c->want_out)
        epoll_set(w, c, 0);
    return 0;
}

static void conn_open(struct bm_worker *w, struct bm_conn *c)
{
    struct bm_engine *e = w->eng;
    const struct sockaddr_storage *addr = &e->addr;
    socklen_t addrlen = e->addrlen;
    if (e->cluster) {
        addr = &e->cl.nodes[c->node].addr;
        addrlen = e->cl.nodes[c->node].addrlen;
    }
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        char why[200];
        snprintf(why, sizeof(why), "socket: %s", strerror(errno));
        copy_msg(w->res.first_disconnect, sizeof(w->res.first_disconnect), "", why,
                 strlen(why));
        conn_drop(w, c, why, 0);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    if (c->state == CS_DEAD)
        w->ndead--;
    c->state = CS_CONNECTING;
    c->want_out = 1;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT};
    ev.data.u64 = (uint64_t)(c - w->conns);
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        conn_drop(w, c, strerror(errno), 0);
        return;
    }
    if (connect(fd, (const struct sockaddr *)addr, addrlen) < 0 && errno != EINPROGRESS) {
        char why[200];
        snprintf(why, sizeof(why), "connect: %s", strerror(errno));
        copy_msg(w->res.first_disconnect, sizeof(w->res.first_disconnect), "", why,
                 strlen(why));
        conn_drop(w, c, why, 0);
    }
}

static void conn_ready(struct bm_worker *w, struct bm_conn *c);

/* The socket connected (or failed to): send the handshake. */
static void conn_connected(struct bm_worker *w, struct bm_conn *c)
{
    struct bm_engine *e = w->eng;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        char why[200];
        snprintf(why, sizeof(why), "connect: %s", strerror(err));
        copy_msg(w->res.first_disconnect, sizeof(w->res.first_disconnect), "", why,
                 strlen(why));
        conn_drop(w, c, why, 0);
        return;
    }
    c->state = CS_HANDSHAKE;
    c->hs_left = e->hs_replies;
    wbuf_reserve(c, e->hs_len + c->sub_len);
    if (e->hs_len && c->wlen > c->wpos) {
        /* --cluster: requests queued while connecting go after it */
        memmove(c->wbuf + c->wpos + e->hs_len, c->wbuf + c->wpos, c->wlen - c->wpos);
        memcpy(c->wbuf + c->wpos, e->hs, e->hs_len);
        c->wlen += e->hs_len;
    } else if (e->hs_len) {
        memcpy(c->wbuf + c->wlen, e->hs, e->hs_len);
        c->wlen += e->hs_len;
    }
    if (c->sub_len) {
        memcpy(c->wbuf + c->wlen, c->sub_cmd, c->sub_len);
        c->wlen += c->sub_len;
        c->hs_left += c->sub_n;
    }
    if (c->hs_left == 0)
        conn_ready(w, c);
    if (conn_flush(w, c) < 0)
        return;
    if (!c->want_out)
        epoll_set(w, c, 0);
}

/* ---- building requests ---- */

static double sched_ns_per_slot(const struct bm_worker *w)
{
    return 1e9 / w->st.rate;
}

static uint64_t sched_time(const struct bm_worker *w, const struct bm_conn *c)
{
    double slot = (double)c->sid + (double)c->k * (double)w->eng->nsched_total;
    return w->st.t0 + (uint64_t)(slot * sched_ns_per_slot(w));
}

/* ---- --cluster: routing ---- */

/* The connection of group g (its first conn) to node n, opened on first
 * use. */
static struct bm_conn *cl_member(struct bm_worker *w, struct bm_conn *g, int n)
{
    struct bm_conn *c = g + n;
    if (c->state == CS_UNUSED) {
        c->state = CS_DEAD;
        c->reconnect_at = 0;
        w->ndead++;
    }
    return c;
}

/* Send what c holds, unless it is not connected yet (then its handshake
 * goes first, when it is). */
static void cl_kick(struct bm_worker *w, struct bm_conn *c)
{
    if ((c->state == CS_HANDSHAKE || c->state == CS_READY) && c->wlen > c->wpos)
        conn_flush(w, c);
}

static void cl_flush_group(struct bm_worker *w, struct bm_conn *g)
{
    int n = atomic_load_explicit(&w->eng->cl.nnodes, memory_order_acquire);
    if (n > w->eng->maxn)
        n = w->eng->maxn;
    for (int i = 0; i < n; i++)
        cl_kick(w, g + i);
}

/* Queue request rq (template rq->tmpl, key index rq->key) on c. */
static void cl_put(struct bm_worker *w, struct bm_conn *c, uint64_t stamp,
                   const struct bm_req *rq)
{
    const struct bm_template *t = &w->st.wl->t[rq->tmpl];
    wbuf_reserve(c, t->len);
    char *dst = c->wbuf + c->wlen;
    memcpy(dst, t->bytes, t->len);
    for (int i = 0; i < t->nkeys; i++)
        bm_put_key(dst + t->key_offs[i], rq->key);
    c->wlen += t->len;
    ts_push_rq(c, stamp, rq);
    w->conns[c->grp].gout++;
}

/* A new request of client g: one key index for all of its __rand_int__,
 * to the owner of the key's slot. */
static void cl_add_request(struct bm_worker *w, struct bm_conn *g, uint64_t stamp, uint64_t key)
{
    struct bm_engine *e = w->eng;
    const struct bm_workload *wl = w->st.wl;
    struct bm_req rq = {0};
    rq.tmpl = (uint32_t)wl->cycle[g->cycle_pos];
    if (++g->cycle_pos == wl->ncycle)
        g->cycle_pos = 0;
    rq.key = w->st.preload ? key : bm_keygen_next(&w->kg);
    int node = bm_cluster_owner(&e->cl, bm_template_slot(&wl->t[rq.tmpl], rq.key));
    if (node >= e->maxn)
        node = 0;
    cl_put(w, cl_member(w, g, node), stamp, &rq);
    w->res.sent++;
}

/* A -MOVED or -ASK reply on c to request rq (sent at `sent`): send it again
 * where the reply says.  Returns 0, or -1 when it cannot be (then the reply
 * counts as an error). */
static int cl_redirect(struct bm_worker *w, struct bm_conn *c, const struct bm_req *rq,
                       uint64_t sent, const char *msg, size_t len)
{
    struct bm_engine *e = w->eng;
    unsigned slot;
    int port;
    char host[256];
    int kind = bm_parse_redirect(msg, len, &slot, host, sizeof(host), &port);
    if (kind == BM_REDIR_NONE || rq->redirects >= BM_MAX_REDIRECTS)
        return -1;
    int node = bm_cluster_node(&e->cl, host[0] ? host : e->cl.nodes[c->node].host, port);
    if (node < 0 || node >= e->maxn)
        return -1;
    struct bm_conn *g = &w->conns[c->grp];
    struct bm_conn *tc = cl_member(w, g, node);
    struct bm_req again = *rq;
    again.redirects++;
    if (kind == BM_REDIR_MOVED) {
        atomic_store_explicit(&e->cl.slot_node[slot], (uint16_t)node, memory_order_relaxed);
        w->res.moved++;
        w->ns[c->node].moved++;
    } else {
        static const char asking[] = "*1\r\n$6\r\nASKING\r\n";
        struct bm_req a = {0};
        a.flags = BM_RQ_ASKING;
        wbuf_reserve(tc, sizeof(asking) - 1);
        memcpy(tc->wbuf + tc->wlen, asking, sizeof(asking) - 1);
        tc->wlen += sizeof(asking) - 1;
        ts_push_rq(tc, sent, &a);
        w->res.ask++;
        w->ns[c->node].ask++;
    }
    cl_put(w, tc, sent, &again);
    cl_kick(w, tc);
    return 0;
}

static void add_request(struct bm_worker *w, struct bm_conn *c, uint64_t stamp, uint64_t key)
{
    if (w->eng->cluster) {
        cl_add_request(w, c, stamp, key);
        return;
    }
    const struct bm_workload *wl = w->st.wl;
    const struct bm_template *t = &wl->t[wl->cycle[c->cycle_pos]];
    if (++c->cycle_pos == wl->ncycle)
        c->cycle_pos = 0;
    wbuf_reserve(c, t->len);
    char *dst = c->wbuf + c->wlen;
    memcpy(dst, t->bytes, t->len);
    for (int i = 0; i < t->nkeys; i++)
        bm_put_key(dst + t->key_offs[i], w->st.preload ? key : bm_keygen_next(&w->kg));
    c->wlen += t->len;
    ts_push(c, stamp);
    w->res.sent++;
}

static void add_publish(struct bm_worker *w, struct bm_conn *c, uint64_t stamp)
{
    const struct bm_config *cfg = w->eng->cfg;
    char ch[32], hdr[96];
    uint64_t g = (uint64_t)c->sid + c->k * (uint64_t)w->eng->nsched_total;
    channel_name(ch, sizeof(ch), (int)(g % (uint64_t)cfg->channels));
    int n = snprintf(hdr, sizeof(hdr), "*3\r\n$7\r\nPUBLISH\r\n$%zu\r\n%s\r\n$%zu\r\n",
                     strlen(ch), ch, cfg->payload);
    wbuf_reserve(c, (size_t)n + cfg->payload + 2);
    memcpy(c->wbuf + c->wlen, hdr, (size_t)n);
    c->wlen += (size_t)n;
    bm_stamp_write(c->wbuf + c->wlen, cfg->payload, stamp);
    c->wlen += cfg->payload;
    memcpy(c->wbuf + c->wlen, "\r\n", 2);
    c->wlen += 2;
    ts_push(c, stamp);
    atomic_fetch_add(&w->eng->ps_outstanding, 1);
    w->res.sent++;
    w->res.published++;
}

/* Closed loop: top the connection up to `pipeline` outstanding requests. */
static void closed_fill(struct bm_worker *w, struct bm_conn *c, uint64_t now)
{
    struct bm_engine *e = w->eng;
    if (e->cluster)
        c = &w->conns[c->grp]; /* the client's schedule lives in its group's first conn */
    if (c->state != CS_READY || !w->sending || c->role != ROLE_CLIENT)
        return;
    size_t out = e->cluster ? c->gout : c->ts_count;
    if ((size_t)w->st.pipeline <= out)
        return;
    uint64_t want = (uint64_t)w->st.pipeline - out, base = 0;
    if (w->st.requests) {
        base = atomic_fetch_add_explicit(&e->issued, want, memory_order_relaxed);
        if (base >= w->st.requests)
            return;
        if (want > w->st.requests - base)
            want = w->st.requests - base;
    }
    for (uint64_t i = 0; i < want; i++)
        add_request(w, c, now, base + i);
    if (e->cluster)
        cl_flush_group(w, c);
    else
        conn_flush(w, c);
}

/* Requests outstanding on a client: its connection's, or its group's. */
static size_t outstanding(const struct bm_worker *w, const struct bm_conn *c)
{
    return w->eng->cluster ? c->gout : c->ts_count;
}

/* Open loop: send everything due on connection c up to `upto` (exclusive
 * of the window end). */
static void open_send_conn(struct bm_worker *w, struct bm_conn *c, uint64_t now)
{
    const struct bm_config *cfg = w->eng->cfg;
    int any = 0;
    if (c->state != CS_READY)
        return;
    for (;;) {
        uint64_t t = sched_time(w, c);
        if (t > now || t >= w->st.t_end || outstanding(w, c) >= cfg->max_outstanding)
            break;
        hist_record(w->lag, now - t);
        if (c->role == ROLE_PUBLISHER)
            add_publish(w, c, t);
        else
            add_request(w, c, t, 0);
        c->k++;
        any = 1;
    }
    if (any && w->eng->cluster)
        cl_flush_group(w, c);
    else if (any)
        conn_flush(w, c);
}

static void open_send_due(struct bm_worker *w, uint64_t now)
{
    for (int i = 0; i < w->nsched; i++) {
        struct bm_conn *c = &w->conns[w->sched[w->cursor]];
        if (c->state == CS_READY && outstanding(w, c) < w->eng->cfg->max_outstanding) {
            uint64_t t = sched_time(w, c);
            if (t > now || t >= w->st.t_end)
                break; /* the others are due later still */
            open_send_conn(w, c, now);
        }
        if (++w->cursor == w->nsched)
            w->cursor = 0;
    }
}

/* The next intended send time on this worker, or UINT64_MAX. */
static uint64_t open_next_due(struct bm_worker *w)
{
    for (int i = 0; i < w->nsched; i++) {
        int idx = w->cursor + i;
        if (idx >= w->nsched)
            idx -= w->nsched;
        struct bm_conn *c = &w->conns[w->sched[idx]];
        if (c->state == CS_READY && outstanding(w, c) < w->eng->cfg->max_outstanding) {
            uint64_t t = sched_time(w, c);
            return t < w->st.t_end ? t : UINT64_MAX;
        }
    }
    return UINT64_MAX;
}

static void conn_ready(struct bm_worker *w, struct bm_conn *c)
{
    c->state = CS_READY;
    c->ever_ready = 1;
    if (w->sending && w->st.mode == BM_CLOSED)
        closed_fill(w, c, bm_now_ns());
}

/* ---- replies ---- */

static void on_reply(struct bm_worker *w, struct bm_conn *c, const struct bm_reply *r,
                     const char *base, uint64_t now)
{
    struct bm_engine *e = w->eng;
    if (c->hs_left > 0) {
        c->hs_left--;
        if (r->is_error) {
            char msg[200] = "";
            copy_msg(msg, sizeof(msg), "", base + r->msg.off, r->msg.len);
            set_fatal(e, "handshake (AUTH/SELECT/HELLO/SUBSCRIBE) refused by the server: %s%s",
                      msg, "");
            return;
        }
        if (c->hs_left == 0)
            conn_ready(w, c);
        return;
    }
    if (c->role == ROLE_SUBSCRIBER) {
        if ((r->type == '*' || r->type == '>') && r->nelem >= 3 && r->elem[0].len == 7 &&
            !memcmp(base + r->elem[0].off, "message", 7)) {
            uint64_t sent;
            if (bm_stamp_read(base + r->elem[2].off, r->elem[2].len, &sent) < 0) {
                w->res.errors++;
                copy_msg(w->res.first_error, sizeof(w->res.first_error),
                         "message without a stamp: ", base + r->elem[2].off, r->elem[2].len);
                return;
            }
            if (sent < w->st.t0 || w->st.mode != BM_PUBSUB)
                return; /* a straggler from an earlier step */
            uint64_t lat = now > sent ? now - sent : 0;
            hist_record(w->hist, lat);
            if (w->live)
                hist_record(w->live, lat);
            w->res.delivered++;
            w->res.completed++;
            if (now <= w->st.t_end)
                w->res.in_window++;
            w->res.last_reply = now;
            atomic_fetch_add_explicit(&e->ps_delivered, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&w->prog_done, 1, memory_order_relaxed);
        }
        return;
    }
    if (r->type == '>')
        return; /* RESP3 out-of-band push (tracking, ...): not a reply */
    if (c->ts_count == 0) {
        w->res.errors++;
        copy_msg(w->res.first_error, sizeof(w->res.first_error), "unexpected reply: ",
                 base, r->len < 60 ? r->len : 60);
        return;
    }
    struct bm_req rq;
    uint64_t sent = ts_pop(c, e->cluster ? &rq : NULL);
    struct bm_nstat *ns = NULL;
    if (e->cluster) {
        if (rq.flags & BM_RQ_ASKING)
            return; /* the reply to ASKING: its request's follows */
        w->conns[c->grp].gout--;
        if (r->is_error && cl_redirect(w, c, &rq, sent, base + r->msg.off, r->msg.len) == 0)
            return;
        ns = &w->ns[c->node];
        if (r->is_error && r->msg.len >= 8 && !memcmp(base + r->msg.off, "TRYAGAIN", 8))
            w->res.tryagain++;
        if (r->is_error && r->msg.len >= 11 && !memcmp(base + r->msg.off, "CLUSTERDOWN", 11))
            w->res.clusterdown++;
    }
    if (c->role == ROLE_PUBLISHER) {
        atomic_fetch_sub(&e->ps_outstanding, 1);
        if (r->is_error) {
            w->res.errors++;
            atomic_fetch_add_explicit(&w->prog_errors, 1, memory_order_relaxed);
            copy_msg(w->res.first_error, sizeof(w->res.first_error), "", base + r->msg.off,
                     r->msg.len);
        } else if (r->type == ':' && r->integer > 0) {
            atomic_fetch_add(&e->ps_expected, (uint64_t)r->integer);
        }
        return;
    }
    uint64_t lat = now > sent ? now - sent : 0;
    hist_record(w->hist, lat);
    if (w->live)
        hist_record(w->live, lat);
    w->res.completed++;
    if (w->st.requests || now <= w->st.t_end)
        w->res.in_window++;
    w->res.last_reply = now;
    atomic_fetch_add_explicit(&w->prog_done, 1, memory_order_relaxed);
    if (ns) {
        hist_record(ns->hist, lat);
        ns->completed++;
        if (w->st.requests || now <= w->st.t_end)
            ns->in_window++;
        ns->errors += r->is_error != 0;
    }
    if (r->is_error) {
        w->res.errors++;
        atomic_fetch_add_explicit(&w->prog_errors, 1, memory_order_relaxed);
        copy_msg(w->res.first_error, sizeof(w->res.first_error), "", base + r->msg.off,
                 r->msg.len);
    }
}

static void conn_read(struct bm_worker *w, struct bm_conn *c)
{
    for (;;) {
        if (c->rcap - c->rlen < READ_CHUNK) {
            if (c->rpos > 0) {
                memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
                c->rlen -= c->rpos;
                c->rpos = 0;
            }
            if (c->rcap - c->rlen < READ_CHUNK) {
                size_t cap = c->rcap ? c->rcap : READ_CHUNK * 2;
                while (cap - c->rlen < READ_CHUNK)
                    cap *= 2;
                c->rbuf = xrealloc(c->rbuf, cap);
                c->rcap = cap;
            }
        }
        size_t space = c->rcap - c->rlen;
        ssize_t n = read(c->fd, c->rbuf + c->rlen, space);
        if (n == 0) {
            conn_drop(w, c, "server closed the connection", 1);
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            conn_drop(w, c, strerror(errno), 1);
            return;
        }
        c->rlen += (size_t)n;
        uint64_t now = bm_now_ns();
        while (c->rpos < c->rlen) {
            struct bm_reply r;
            int rc = bm_rp_parse(&c->rp, c->rbuf + c->rpos, c->rlen - c->rpos, &r);
            if (rc == BM_RP_INCOMPLETE)
                break;
            if (rc == BM_RP_ERR) {
                conn_drop(w, c, "protocol error in a reply", 1);
                return;
            }
            on_reply(w, c, &r, c->rbuf + c->rpos, now);
            c->rpos += r.len;
            if (is_fatal(w->eng) || c->fd < 0)
                return;
        }
        if (c->rpos == c->rlen)
            c->rpos = c->rlen = 0;
        if ((size_t)n < space)
            break;
    }
    if (c->state == CS_READY && w->st.mode == BM_CLOSED)
        closed_fill(w, c, bm_now_ns());
}

/* ---- the loop ---- */

static void arm_timer(struct bm_worker *w, uint64_t at)
{
    if (at == w->tfd_armed)
        return;
    struct itimerspec its = {0};
    if (at != UINT64_MAX) {
        if (at == 0)
            at = 1;
        its.it_value.tv_sec = (time_t)(at / 1000000000ull);
        its.it_value.tv_nsec = (long)(at % 1000000000ull);
    }
    timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    w->tfd_armed = at;
}

/* Wait for events until `wake` (absolute, UINT64_MAX: no deadline) or at
 * most cap_ms (-1: no cap).  The deadline is a timerfd armed at `wake`
 * (re-armed only when it changes): measured cheaper than epoll_pwait2's
 * per-call nanosecond timeout, since most wake-ups are replies. */
static int wait_events(struct bm_worker *w, struct epoll_event *evs, uint64_t now, uint64_t wake,
                       int cap_ms)
{
    if (wake <= now)
        return epoll_wait(w->epfd, evs, MAX_EVENTS, 0);
    arm_timer(w, wake);
    return epoll_wait(w->epfd, evs, MAX_EVENTS, cap_ms);
}

static void publish_live(struct bm_worker *w, uint64_t now)
{
    if (!w->live || now < w->live_at)
        return;
    pthread_mutex_lock(&w->live_mu);
    hist_merge(w->live_pub, w->live);
    pthread_mutex_unlock(&w->live_mu);
    hist_reset(w->live);
    w->live_at = now + LIVE_NS;
}

static void handle_events(struct bm_worker *w, struct epoll_event *evs, int n)
{
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u64 == TFD_TAG) {
            /* No read(): re-arming (forced by tfd_armed = 0) or disarming
             * resets the expiration count, which saves a system call. */
            w->tfd_armed = 0;
            continue;
        }
        struct bm_conn *c = &w->conns[evs[i].data.u64];
        if (c->fd < 0)
            continue;
        if (c->state == CS_CONNECTING) {
            conn_connected(w, c);
            continue;
        }
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            conn_read(w, c);
        if (c->fd >= 0 && (evs[i].events & EPOLLOUT))
            conn_flush(w, c);
        if (is_fatal(w->eng))
            return;
    }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
                          .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void run_step(struct bm_worker *w)
{
    struct bm_engine *e = w->eng;
    const struct bm_config *cfg = e->cfg;
    struct bm_step *st = &w->st;
    struct epoll_event evs[MAX_EVENTS];
    uint64_t drain_deadline = UINT64_MAX;
    uint64_t connect_deadline = st->t0 + (uint64_t)(cfg->connect_timeout * 1e9);

    memset(&w->res, 0, sizeof(w->res));
    if (w->ns) {
        for (int i = 0; i < e->maxn; i++) {
            struct hist *h = w->ns[i].hist;
            memset(&w->ns[i], 0, sizeof(w->ns[i]));
            hist_reset(h);
            w->ns[i].hist = h;
        }
    }
    hist_reset(w->hist);
    hist_reset(w->lag);
    if (w->live) {
        hist_reset(w->live);
        w->live_at = 0;
    }
    w->cursor = 0;
    for (int i = 0; i < w->nconns; i++)
        w->conns[i].k = 0;
    sleep_until(st->t0);
    uint64_t cpu0 = thread_cpu_ns();
    w->sending = st->kind != STEP_CONNECT;
    if (w->sending && st->mode == BM_CLOSED) {
        uint64_t now = bm_now_ns();
        for (int i = 0; i < w->nconns; i++)
            closed_fill(w, &w->conns[i], now);
    }

    for (;;) {
        if (is_fatal(e))
            break;
        uint64_t now = bm_now_ns();
        if (st->kind == STEP_CONNECT) {
            int ready = 0;
            for (int i = 0; i < w->nconns; i++)
                ready += w->conns[i].state == CS_READY || w->conns[i].state == CS_UNUSED;
            if (ready == w->nconns)
                break;
            if (now >= connect_deadline) {
                char where[300];
                snprintf(where, sizeof(where), "%s:%d", cfg->host, cfg->port);
                set_fatal(e, "could not connect to %s: %s", where,
                          w->res.first_disconnect[0] ? w->res.first_disconnect
                                                     : "handshake timed out");
                break;
            }
        } else if (w->sending) {
            int stop = 0;
            if (st->requests)
                stop = atomic_load_explicit(&e->issued, memory_order_relaxed) >= st->requests;
            else
                stop = now >= st->t_end;
            if (stop) {
                w->sending = 0;
                if (st->mode != BM_CLOSED) {
                    /* Everything scheduled inside the window goes out. */
                    for (int i = 0; i < w->nsched; i++)
                        open_send_conn(w, &w->conns[w->sched[i]], st->t_end - 1);
                }
                drain_deadline = now + (uint64_t)(cfg->drain_timeout * 1e9);
            } else if (st->mode != BM_CLOSED) {
                open_send_due(w, now);
            }
        }
        if (!w->sending && st->kind != STEP_CONNECT) {
            int pending = 0;
            for (int i = 0; i < w->nconns && !pending; i++)
                pending = w->conns[i].ts_count > 0;
            if (!pending && st->mode == BM_PUBSUB)
                pending = atomic_load(&e->ps_outstanding) > 0 ||
                          atomic_load(&e->ps_delivered) < atomic_load(&e->ps_expected);
            if (!pending)
                break;
            if (now >= drain_deadline) {
                for (int i = 0; i < w->nconns; i++) {
                    struct bm_conn *c = &w->conns[i];
                    if (c->ts_count > 0 && c->fd >= 0) {
                        copy_msg(w->res.first_error, sizeof(w->res.first_error), "",
                                 "no reply within --drain-timeout", 31);
                        conn_drop(w, c, "no reply within --drain-timeout", 1);
                    }
                }
                if (st->mode == BM_PUBSUB) {
                    uint64_t exp = atomic_load(&e->ps_expected),
                             got = atomic_load(&e->ps_delivered);
                    if (exp > got && w->id == 0) {
                        w->res.lost += exp - got;
                        copy_msg(w->res.first_error, sizeof(w->res.first_error), "",
                                 "messages not delivered within --drain-timeout", 45);
                    }
                }
                break;
            }
        }
        /* Reconnect dropped connections. */
        uint64_t wake = UINT64_MAX;
        for (int i = 0; i < w->nconns && w->ndead > 0; i++) {
            struct bm_conn *c = &w->conns[i];
            if (c->state == CS_DEAD) {
                if (c->reconnect_at <= now)
                    conn_open(w, c);
                if (c->state == CS_DEAD && c->reconnect_at < wake)
                    wake = c->reconnect_at;
            }
        }
        publish_live(w, now);
        if (w->live && w->live_at < wake)
            wake = w->live_at;
        if (w->sending && st->mode != BM_CLOSED) {
            uint64_t due = open_next_due(w);
            if (due < wake)
                wake = due;
        }
        if (w->sending && !st->requests && st->t_end < wake)
            wake = st->t_end;
        if (!w->sending && drain_deadline < wake)
            wake = drain_deadline;
        if (st->kind == STEP_CONNECT && connect_deadline < wake)
            wake = connect_deadline;
        int cap_ms = -1;
        if (!w->sending && st->mode == BM_PUBSUB)
            cap_ms = 5; /* waits on other threads' deliveries */
        if (st->kind == STEP_CONNECT || st->requests)
            cap_ms = 20; /* other threads may take the last of the quota */
        int n = wait_events(w, evs, now, wake, cap_ms);
        if (n > 0)
            handle_events(w, evs, n);
    }
    arm_timer(w, UINT64_MAX);
    publish_live(w, UINT64_MAX);
    w->res.cpu_ns = thread_cpu_ns() - cpu0;
    w->sending = 0;
}

static void *worker_main(void *arg)
{
    struct bm_worker *w = arg;
    struct bm_engine *e = w->eng;
    int seen = 0;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    for (;;) {
        pthread_mutex_lock(&e->mu);
        while (e->gen == seen && !e->quit)
            pthread_cond_wait(&e->cv_go, &e->mu);
        if (e->quit) {
            pthread_mutex_unlock(&e->mu);
            break;
        }
        seen = e->gen;
        w->st = e->step;
        pthread_mutex_unlock(&e->mu);
        run_step(w);
        pthread_mutex_lock(&e->mu);
        e->ndone++;
        pthread_cond_broadcast(&e->cv_done);
        pthread_mutex_unlock(&e->mu);
    }
    return NULL;
}

/* ---- set-up ---- */

static int resolve(struct bm_engine *e, const struct bm_config *cfg, char *err, size_t errcap)
{
    struct addrinfo hints = {0}, *res;
    char port[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", cfg->port);
    int rc = getaddrinfo(cfg->host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errcap, "cannot resolve %s: %s", cfg->host, gai_strerror(rc));
        return -1;
    }
    memcpy(&e->addr, res->ai_addr, res->ai_addrlen);
    e->addrlen = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static void build_handshake(struct bm_engine *e, const struct bm_config *cfg)
{
    size_t cap = 0;
    char dbs[16];
    e->hs = NULL;
    e->hs_len = 0;
    e->hs_replies = 0;
    if (cfg->password) {
        const char *a[3] = {"AUTH", cfg->user ? cfg->user : cfg->password, cfg->password};
        encode_cmd(&e->hs, &e->hs_len, &cap, cfg->user ? 3 : 2, a);
        e->hs_replies++;
    }
    if (cfg->resp == 3) {
        const char *a[2] = {"HELLO", "3"};
        encode_cmd(&e->hs, &e->hs_len, &cap, 2, a);
        e->hs_replies++;
    }
    if (cfg->db != 0) {
        snprintf(dbs, sizeof(dbs), "%d", cfg->db);
        const char *a[2] = {"SELECT", dbs};
        encode_cmd(&e->hs, &e->hs_len, &cap, 2, a);
        e->hs_replies++;
    }
}

/* Subscriber j listens on every channel c with c % S == j, and, when there
 * are fewer channels than subscribers, on channel j % C: every channel has
 * at least one subscriber and every subscriber at least one channel. */
static void build_subscribe(struct bm_conn *c, const struct bm_config *cfg, int j)
{
    int S = cfg->subscribers, C = cfg->channels, n = 0;
    char **names = xmalloc(sizeof(char *) * (size_t)(C + 2));
    const char **argv = xmalloc(sizeof(char *) * (size_t)(C + 2));
    argv[0] = "SUBSCRIBE";
    for (int ch = 0; ch < C; ch++) {
        if (ch % S == j || (C < S && ch == j % C)) {
            names[n] = xmalloc(32);
            channel_name(names[n], 32, ch);
            argv[n + 1] = names[n];
            n++;
        }
    }
    size_t cap = 0;
    c->sub_cmd = NULL;
    c->sub_len = 0;
    encode_cmd(&c->sub_cmd, &c->sub_len, &cap, n + 1, argv);
    c->sub_n = n;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(argv);
}

int bm_engine_start(struct bm_engine *e, const struct bm_config *cfg, char *err, size_t errcap)
{
    struct rlimit rl;
    memset(e, 0, sizeof(*e));
    /* Many connections need many descriptors: take the hard limit. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    e->cfg = cfg;
    if (resolve(e, cfg, err, errcap) < 0)
        return -1;
    if (cfg->cluster) {
        if (bm_cluster_discover(&e->cl, cfg, err, errcap) < 0) {
            bm_cluster_free(&e->cl);
            return -1;
        }
        e->cluster = 1;
        e->maxn = e->cl.maxn;
    }
    build_handshake(e, cfg);
    e->nconns = cfg->pubsub ? cfg->publishers + cfg->subscribers : cfg->clients;
    e->nsched_total = cfg->pubsub ? cfg->publishers : cfg->clients;
    e->nw = cfg->threads < e->nconns ? cfg->threads : e->nconns;
    e->w = xmalloc(sizeof(struct bm_worker) * (size_t)e->nw);
    memset(e->w, 0, sizeof(struct bm_worker) * (size_t)e->nw);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv_go, NULL);
    pthread_cond_init(&e->cv_done, NULL);

    for (int t = 0; t < e->nw; t++) {
        struct bm_worker *w = &e->w[t];
        w->id = t;
        w->eng = e;
        int nclients = e->nconns / e->nw + (t < e->nconns % e->nw);
        int per = e->cluster ? e->maxn : 1; /* connections per client */
        w->nconns = nclients * per;
        w->conns = xmalloc(sizeof(struct bm_conn) * (size_t)w->nconns);
        memset(w->conns, 0, sizeof(struct bm_conn) * (size_t)w->nconns);
        w->sched = xmalloc(sizeof(int) * (size_t)w->nconns);
        if (e->cluster) {
            w->ns = xmalloc(sizeof(struct bm_nstat) * (size_t)e->maxn);
            memset(w->ns, 0, sizeof(struct bm_nstat) * (size_t)e->maxn);
            for (int n = 0; n < e->maxn; n++)
                w->ns[n].hist = hist_new();
        }
        w->hist = hist_new();
        w->lag = hist_new();
        if (cfg->progress) {
            w->live = hist_new();
            w->live_pub = hist_new();
        }
        pthread_mutex_init(&w->live_mu, NULL);
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->epfd < 0 || w->tfd < 0) {
            snprintf(err, errcap, "epoll/timerfd: %s", strerror(errno));
            return -1;
        }
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.u64 = TFD_TAG;
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev);
        w->tfd_armed = UINT64_MAX;
        if (bm_keygen_init(&w->kg, cfg->key_pattern, cfg->key_space, cfg->zipf_s,
                           cfg->seed + 0x1000193ull * (uint64_t)(t + 1), &e->seq) < 0) {
            snprintf(err, errcap, "bad key pattern parameters");
            return -1;
        }
        /* Connection g goes to worker g % nw, so each worker's list is
         * sorted by g (and by schedule slot). */
        for (int i = 0; i < w->nconns; i++) {
            struct bm_conn *c = &w->conns[i];
            int g = t + (i / per) * e->nw;
            c->fd = -1;
            c->id = g;
            c->state = CS_DEAD;
            bm_rp_init(&c->rp);
            if (e->cluster) {
                /* client g: conns [grp, grp + maxn), one per node; the
                 * nodes found by discovery are connected now, the others
                 * when a redirect first names them */
                c->node = i % per;
                c->grp = i - c->node;
                if (c->node >= e->cl.ninitial)
                    c->state = CS_UNUSED;
                if (c->node) {
                    c->role = ROLE_CLIENT;
                    c->sid = -1;
                    if (c->state == CS_DEAD)
                        w->ndead++;
                    continue;
                }
            }
            w->ndead++;
            if (cfg->pubsub && g >= cfg->publishers) {
                c->role = ROLE_SUBSCRIBER;
                c->sid = -1;
                build_subscribe(c, cfg, g - cfg->publishers);
            } else {
                c->role = cfg->pubsub ? ROLE_PUBLISHER : ROLE_CLIENT;
                c->sid = g;
                w->sched[w->nsched++] = i;
            }
        }
    }
    for (int t = 0; t < e->nw; t++) {
        if (pthread_create(&e->w[t].th, NULL, worker_main, &e->w[t]) != 0) {
            snprintf(err, errcap, "pthread_create failed");
            return -1;
        }
    }
    /* Connect everyone. */
    for (int t = 0; t < e->nw; t++) {
        for (int i = 0; i < e->w[t].nconns; i++)
            e->w[t].conns[i].reconnect_at = 0;
    }
    struct bm_step st = {.kind = STEP_CONNECT, .mode = BM_CLOSED};
    if (bm_engine_step(e, &st, NULL, NULL) < 0) {
        snprintf(err, errcap, "%s", e->fatal_msg);
        /* The threads wait on e's mutex and condition variables, which
         * live in the caller's frame: join them before it returns (they
         * used to be left waiting on a stack that exit() reused). */
        bm_engine_stop(e);
        return -1;
    }
    return 0;
}

int bm_engine_step(struct bm_engine *e, struct bm_step *st, void (*progress)(void *), void *ctx)
{
    atomic_store(&e->issued, 0);
    atomic_store(&e->ps_expected, 0);
    atomic_store(&e->ps_delivered, 0);
    atomic_store(&e->ps_outstanding, 0);
    pthread_mutex_lock(&e->mu);
    /* Give every thread time to wake before the common start. */
    st->t0 = bm_now_ns() + (st->kind == STEP_CONNECT ? 0 : 20000000ull);
    st->t_end = (st->requests || st->kind == STEP_CONNECT) ? UINT64_MAX
                                                           : st->t0 + st->duration_ns;
    e->step = *st;
    e->ndone = 0;
    e->gen++;
    pthread_cond_broadcast(&e->cv_go);
    while (e->ndone < e->nw) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&e->cv_done, &e->mu, &ts);
        if (rc == ETIMEDOUT && progress && e->ndone < e->nw) {
            pthread_mutex_unlock(&e->mu);
            progress(ctx);
            pthread_mutex_lock(&e->mu);
        }
    }
    pthread_mutex_unlock(&e->mu);
    return is_fatal(e) ? -1 : 0;
}

void bm_engine_stop(struct bm_engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->quit = 1;
    pthread_cond_broadcast(&e->cv_go);
    pthread_mutex_unlock(&e->mu);
    for (int t = 0; t < e->nw; t++)
        pthread_join(e->w[t].th, NULL);
    for (int t = 0; t < e->nw; t++) {
        struct bm_worker *w = &e->w[t];
        for (int i = 0; i < w->nconns; i++) {
            struct bm_conn *c = &w->conns[i];
            if (c->fd >= 0)
                close(c->fd);
            free(c->wbuf);
            free(c->rbuf);
            free(c->ts);
            free(c->rq);
            free(c->sub_cmd);
        }
        free(w->conns);
        free(w->sched);
        if (w->ns) {
            for (int n = 0; n < e->maxn; n++)
                hist_free(w->ns[n].hist);
            free(w->ns);
        }
        hist_free(w->hist);
        hist_free(w->lag);
        if (w->live) {
            hist_free(w->live);
            hist_free(w->live_pub);
        }
        pthread_mutex_destroy(&w->live_mu);
        close(w->epfd);
        close(w->tfd);
    }
    free(e->w);
    free(e->hs);
    if (e->cluster)
        bm_cluster_free(&e->cl);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv_go);
    pthread_cond_destroy(&e->cv_done);
}
