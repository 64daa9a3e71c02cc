/* cachebench.c - the cache workload of issue #7: GET a Zipf-distributed key,
 * and on a miss SET it, over one epoll loop in one thread.
 *
 * Built by bench/issue7.sh (or by hand) together with the parts of
 * hotkv-benchmark it reuses (Zipf sampler and RNG, latency histogram, RESP
 * reply parser, clock):
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/tools/benchmark -o build/cachebench \
 *      bench/cachebench.c src/tools/benchmark/{keydist,hist,rparse,stamp}.c -lm
 *
 * Workload.  Key ranks 1..N are drawn from Zipf(s) (rank 1 the most
 * frequent; default s = 0.99, N = 10,000,000); rank r names the key
 * PREFIX + 16 hex digits of mix(r), mix a fixed bijective 64-bit mixer, so
 * every run and every server sees the same key names and the hot keys are
 * spread over hash slots and buckets.  Each of C connections (default 50)
 * keeps P requests in flight (pipeline, default 1): every reply is replaced
 * by one new request on the same connection - after a GET that returned nil
 * that request is SET of the same key (value of V bytes, default 100, whose
 * content is a function of the key), otherwise a GET of a fresh draw.
 * Connection i draws from its own xoshiro256** stream seeded from
 * (seed, i), so the sequence of keys each connection asks for is fixed.
 *
 * Phases.  Warm-up (--warmup-gets G GET replies if given, else --warmup S
 * seconds), optionally at a deeper pipeline (--warmup-pipeline D: the cache
 * fills in a fraction of the time; misses still SET), then a measured
 * window of --time T seconds at pipeline P, in which the replies to
 * requests sent inside the window are counted, then sending stops and what
 * is in flight is drained.  Reported:
 * GETs, hits, misses, hit ratio (3 decimals), SETs, errors, GET/s, total
 * commands/s, GET latency p50/p99/p99.9/max (reply time - send time; a
 * request's send time is when the batch holding it was handed to the
 * kernel), the generator's CPU use over the window and, with
 * --server-pid, the server's (all threads, from /proc/PID/stat) as percent
 * of a core and microseconds per command.  A final line
 * starting "CACHEBENCH " repeats it as key=value pairs; --json FILE writes
 * the same as a JSON object.
 *
 * --load N: instead of the workload, SET ranks 0..N-1 (the first N key
 * names, same key and value shape), pipelined, and exit: used to measure
 * how much memory a server needs per key of this workload.
 *
 * Hits are checked: a hit must be V bytes starting with the key's 16 hex
 * digits (bad_values counts the others). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hist.h"
#include "keydist.h"
#include "rparse.h"
#include "stamp.h"

#define HEX_LEN 16
#define MAX_PREFIX 64
#define READ_CHUNK (64 * 1024)
#define MAX_EVENTS 256

enum { R_GET = 0, R_SET = 1 };

struct req {
    uint64_t rank; /* 0-based */
    uint64_t t;    /* send time */
    int kind;
};

struct conn {
    int fd;
    int id;
    int want_out;
    char *wbuf;
    size_t wlen, wpos, wcap;
    char *rbuf;
    size_t rlen, rpos, rcap;
    struct bm_rparser rp;
    struct req *q; /* ring of outstanding requests, capacity qcap (power of 2) */
    size_t qhead, qcount, qcap;
    size_t wstamp; /* requests at the queue's tail not yet stamped with a send time */
    struct bm_rng rng;
    uint64_t load_next; /* --load: next rank this connection writes */
};

struct opts {
    const char *host;
    int port;
    int conns;
    int pipeline;
    uint64_t keys;
    double zipf_s;
    size_t vsize;
    uint64_t seed;
    double warmup_s;
    uint64_t warmup_gets;
    double warmup_max_s;
    int warmup_pipeline;        /* 0: same as pipeline */
    int server_pid;             /* 0: unknown */
    double time_s;
    const char *prefix;
    const char *json;
    uint64_t load;
    int quiet;
    double progress_s;
};

struct counters {
    uint64_t gets, hits, misses, sets, errors, bad_values;
};

static struct opts o = {
    .host = "127.0.0.1",
    .port = 6379,
    .conns = 50,
    .pipeline = 1,
    .keys = 10000000,
    .zipf_s = 0.99,
    .vsize = 100,
    .seed = 7,
    .warmup_s = 10,
    .warmup_max_s = 3600,
    .time_s = 10,
    .prefix = "key:",
    .progress_s = 5,
};

static struct bm_zipf zipf;
static size_t prefix_len, key_len;
static char *value_tmpl; /* vsize bytes; the first min(16, vsize) are patched per key */
static char first_error[160];
static char first_bad[160];

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "cachebench: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("%s", "out of memory");
    return p;
}

/* Fixed bijective mixer (splitmix64's finalizer on rank + a constant): rank
 * -> 64 bits, distinct ranks give distinct names. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static void put_hex(char *dst, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = HEX_LEN - 1; i >= 0; i--) {
        dst[i] = hex[v & 15];
        v >>= 4;
    }
}

/* ---- output buffer ---- */

static void wreserve(struct conn *c, size_t n)
{
    if (c->wlen + n <= c->wcap)
        return;
    if (c->wpos > 0) {
        memmove(c->wbuf, c->wbuf + c->wpos, c->wlen - c->wpos);
        c->wlen -= c->wpos;
        c->wpos = 0;
        if (c->wlen + n <= c->wcap)
            return;
    }
    size_t cap = c->wcap ? c->wcap : 16384;
    while (cap < c->wlen + n)
        cap *= 2;
    char *nb = realloc(c->wbuf, cap);
    if (!nb)
        die("%s", "out of memory");
    c->wbuf = nb;
    c->wcap = cap;
}

static size_t put_str(char *d, const char *s, size_t n)
{
    memcpy(d, s, n);
    return n;
}

/* Request heads, built once: "*2 GET $keylen", "*3 SET $keylen", "$vsize". */
static char get_hdr[64], set_hdr[64], val_hdr[32];
static size_t get_hdr_len, set_hdr_len, val_hdr_len;

static void build_headers(void)
{
    get_hdr_len = (size_t)snprintf(get_hdr, sizeof(get_hdr), "*2\r\n$3\r\nGET\r\n$%zu\r\n", key_len);
    set_hdr_len = (size_t)snprintf(set_hdr, sizeof(set_hdr), "*3\r\n$3\r\nSET\r\n$%zu\r\n", key_len);
    val_hdr_len = (size_t)snprintf(val_hdr, sizeof(val_hdr), "$%zu\r\n", o.vsize);
}

/* Append key (prefix + hex) at d; returns bytes written. */
static size_t put_key(char *d, uint64_t rank)
{
    memcpy(d, o.prefix, prefix_len);
    put_hex(d + prefix_len, mix64(rank));
    return key_len;
}

static void enqueue(struct conn *c, int kind, uint64_t rank)
{
    if (c->qcount == c->qcap)
        die("%s", "internal: request ring overflow");
    struct req *r = &c->q[(c->qhead + c->qcount) & (c->qcap - 1)];
    r->rank = rank;
    r->kind = kind;
    r->t = 0;
    c->qcount++;
    c->wstamp++;

    size_t need = 64 + key_len + (kind == R_SET ? o.vsize + 32 : 0);
    wreserve(c, need);
    char *d = c->wbuf + c->wlen, *s = d;
    if (kind == R_GET)
        d += put_str(d, get_hdr, get_hdr_len);
    else
        d += put_str(d, set_hdr, set_hdr_len);
    char *kp = d;
    d += put_key(d, rank);
    d += put_str(d, "\r\n", 2);
    if (kind == R_SET) {
        d += put_str(d, val_hdr, val_hdr_len);
        memcpy(d, value_tmpl, o.vsize);
        memcpy(d, kp + prefix_len, o.vsize < HEX_LEN ? o.vsize : HEX_LEN);
        d += o.vsize;
        d += put_str(d, "\r\n", 2);
    }
    c->wlen += (size_t)(d - s);
}

/* The last wstamp queued requests are handed to the kernel now. */
static void stamp_pending(struct conn *c, uint64_t now)
{
    for (size_t i = c->qcount - c->wstamp; i < c->qcount; i++)
        c->q[(c->qhead + i) & (c->qcap - 1)].t = now;
    c->wstamp = 0;
}

static void epoll_mod(int ep, struct conn *c, int out)
{
    if (c->want_out == out)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0u)};
    ev.data.u32 = (uint32_t)c->id;
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        die("epoll_ctl: %s", strerror(errno));
    c->want_out = out;
}

/* Write what is buffered; returns 0, or -1 if the connection failed. */
static int flush(int ep, struct conn *c, uint64_t now)
{
    if (c->wstamp)
        stamp_pending(c, now);
    while (c->wpos < c->wlen) {
        ssize_t n = send(c->fd, c->wbuf + c->wpos, c->wlen - c->wpos, MSG_NOSIGNAL);
        if (n > 0) {
            c->wpos += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            epoll_mod(ep, c, 1);
            return 0;
        } else {
            return -1;
        }
    }
    c->wlen = c->wpos = 0;
    epoll_mod(ep, c, 0);
    return 0;
}

static int connect_one(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char port[16];
    snprintf(port, sizeof(port), "%d", o.port);
    int rc = getaddrinfo(o.host, port, &hints, &res);
    if (rc != 0)
        die("getaddrinfo: %s", gai_strerror(rc));
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        die("cannot connect: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        die("fcntl: %s", strerror(errno));
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds (user + system, all threads) of --server-pid; -1 if unknown. */
static double server_cpu(void)
{
    if (o.server_pid <= 0)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", o.server_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold blanks */
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    /* after ")": state(3) ... utime is field 14, stime 15 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cachebench [options]\n"
            "  -h, --host HOST        server host (127.0.0.1)\n"
            "  -p, --port PORT        server port (6379)\n"
            "  -c, --clients C        connections (50)\n"
            "  -P, --pipeline P       requests in flight per connection (1)\n"
            "  -n, --keys N           distinct keys, Zipf ranks 1..N (10000000)\n"
            "  -s, --zipf S           Zipf exponent (0.99)\n"
            "  -d, --data-size V      SET value size in bytes (100)\n"
            "      --seed X           RNG seed (7)\n"
            "  -w, --warmup S         warm-up seconds (10), unless --warmup-gets\n"
            "      --warmup-gets G    warm up for G GET replies instead\n"
            "      --warmup-max S     give up warming after S seconds (3600)\n"
            "      --warmup-pipeline D  requests in flight per connection during the\n"
            "                         warm-up (default: --pipeline); the window uses -P\n"
            "      --server-pid PID   report the server's CPU time over the window\n"
            "                         (/proc/PID/stat, all its threads)\n"
            "  -t, --time T           measured seconds (10)\n"
            "      --prefix STR       key prefix (\"key:\")\n"
            "      --json FILE        write the result as JSON\n"
            "      --load N           SET the first N key names (pipelined) and exit\n"
            "      --progress S       progress line on stderr every S seconds (5; 0 = off)\n"
            "  -q, --quiet            no progress lines\n"
            "      --help\n");
}

static double parse_num(const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        die("bad number for %s", what);
    /* k/m/g suffixes (decimal), handy for key counts */
    if (*end == 'k' || *end == 'K')
        v *= 1e3, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1e6, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1e9, end++;
    if (*end)
        die("bad number for %s", what);
    return v;
}

/* ---- the run ---- */

enum { PH_WARM = 0, PH_MEASURE, PH_DRAIN, PH_LOAD };

static struct conn *conns;
static int ep = -1;
static int phase;
static int depth;               /* requests kept in flight per connection now */
static uint64_t t_meas;         /* start of the window */
static struct hist *hist;
static struct counters cur;     /* this phase (warm-up or window) */
static struct counters prog;    /* since the last progress line */
static uint64_t load_issued, load_done;

static void count_error(const char *buf, const struct bm_reply *rep)
{
    cur.errors++;
    if (!first_error[0]) {
        size_t n = rep->msg.len < sizeof(first_error) - 1 ? rep->msg.len : sizeof(first_error) - 1;
        for (size_t i = 0; i < n; i++) {
            char ch = buf[rep->msg.off + i];
            first_error[i] = ch >= 32 && ch < 127 ? ch : '?';
        }
        first_error[n] = 0;
    }
}

/* One reply arrived on c at time now (buf: the reply's first byte). */
static void on_reply(struct conn *c, const char *buf, const struct bm_reply *rep, uint64_t now)
{
    struct req r = c->q[c->qhead];
    c->qhead = (c->qhead + 1) & (c->qcap - 1);
    c->qcount--;

    if (phase == PH_LOAD) {
        load_done++;
        if (rep->is_error)
            count_error(buf, rep);
        if (load_issued < o.load) {
            enqueue(c, R_SET, load_issued++);
        }
        return;
    }
    /* The window counts only requests sent inside it (not warm-up ones
     * still in flight at the switch, which may have been pipelined deeper). */
    int counting = phase == PH_WARM || (phase == PH_MEASURE && r.t >= t_meas);
    int next_set = 0;
    if (r.kind == R_GET) {
        if (counting) {
            cur.gets++;
            prog.gets++;
            if (phase == PH_MEASURE)
                hist_record(hist, now > r.t ? now - r.t : 0);
        }
        if (rep->is_error) {
            if (counting)
                count_error(buf, rep);
        } else if ((rep->type == '$' && rep->len >= 3 && buf[1] == '-') || rep->type == '_') {
            next_set = 1;
            if (counting) {
                cur.misses++;
                prog.misses++;
            }
        } else {
            if (counting) {
                cur.hits++;
                prog.hits++;
                char hx[HEX_LEN];
                put_hex(hx, mix64(r.rank));
                size_t cmp = o.vsize < HEX_LEN ? o.vsize : HEX_LEN;
                if (rep->type != '$' || rep->msg.len != o.vsize ||
                    memcmp(buf + rep->msg.off, hx, cmp) != 0) {
                    cur.bad_values++;
                    if (!first_bad[0])
                        snprintf(first_bad, sizeof(first_bad),
                                 "rank %llu: reply type '%c', %zu bytes",
                                 (unsigned long long)r.rank, rep->type, rep->msg.len);
                }
            }
        }
    } else {
        if (counting) {
            cur.sets++;
            prog.sets++;
            if (rep->is_error)
                count_error(buf, rep);
        }
    }
    if (phase == PH_DRAIN)
        return;
    if (next_set)
        enqueue(c, R_SET, r.rank); /* the miss's SET, whatever the depth */
    else if (c->qcount < (size_t)depth)
        enqueue(c, R_GET, bm_zipf_draw(&zipf, &c->rng) - 1);
}

static void conn_fail(struct conn *c, const char *why)
{
    fprintf(stderr, "cachebench: connection %d: %s\n", c->id, why);
    exit(1);
}

static void on_readable(struct conn *c)
{
    for (;;) {
        if (c->rcap - c->rlen < READ_CHUNK) {
            if (c->rpos > 0) {
                memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
                c->rlen -= c->rpos;
                c->rpos = 0;
            }
            if (c->rcap - c->rlen < READ_CHUNK) {
                size_t cap = c->rcap ? c->rcap * 2 : 2 * READ_CHUNK;
                char *nb = realloc(c->rbuf, cap);
                if (!nb)
                    die("%s", "out of memory");
                c->rbuf = nb;
                c->rcap = cap;
            }
        }
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
        if (n > 0) {
            c->rlen += (size_t)n;
            if ((size_t)n < c->rcap - c->rlen + (size_t)n)
                break; /* short read: the socket is empty */
            continue;
        }
        if (n == 0)
            conn_fail(c, "server closed the connection");
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        conn_fail(c, strerror(errno));
    }
    uint64_t now = bm_now_ns();
    struct bm_reply rep;
    for (;;) {
        if (c->rpos == c->rlen)
            break;
        int rc = bm_rp_parse(&c->rp, c->rbuf + c->rpos, c->rlen - c->rpos, &rep);
        if (rc == BM_RP_INCOMPLETE)
            break;
        if (rc == BM_RP_ERR)
            conn_fail(c, "protocol error in a reply");
        if (c->qcount == 0)
            conn_fail(c, "reply with no request outstanding");
        on_reply(c, c->rbuf + c->rpos, &rep, now);
        c->rpos += rep.len;
    }
    if (c->rpos == c->rlen)
        c->rpos = c->rlen = 0;
}

static void setup(void)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1: %s", strerror(errno));
    conns = calloc((size_t)o.conns, sizeof(*conns));
    if (!conns)
        die("%s", "out of memory");
    size_t qcap = 1, need = (size_t)(o.pipeline > o.warmup_pipeline ? o.pipeline : o.warmup_pipeline);
    while (qcap < need)
        qcap *= 2;
    for (int i = 0; i < o.conns; i++) {
        struct conn *c = &conns[i];
        c->id = i;
        c->fd = connect_one();
        set_nonblock(c->fd);
        c->qcap = qcap;
        c->q = xalloc(sizeof(struct req) * qcap);
        bm_rp_init(&c->rp);
        /* stream i of the seed: the connection's key sequence is fixed */
        bm_rng_seed(&c->rng, mix64(o.seed * 1000003ULL + (uint64_t)i));
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
            die("epoll_ctl: %s", strerror(errno));
    }
}

static uint64_t outstanding(void)
{
    uint64_t n = 0;
    for (int i = 0; i < o.conns; i++)
        n += conns[i].qcount;
    return n;
}

/* One pass of the event loop: wait up to timeout_ms, handle what is ready. */
static void loop_once(int timeout_ms)
{
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait(ep, evs, MAX_EVENTS, timeout_ms);
    if (n < 0) {
        if (errno == EINTR)
            return;
        die("epoll_wait: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        struct conn *c = &conns[evs[i].data.u32];
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            on_readable(c);
        if (c->wlen > c->wpos || c->wstamp) {
            if (flush(ep, c, bm_now_ns()) < 0)
                conn_fail(c, strerror(errno));
        }
    }
}

static double ratio3(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static int run_load(void)
{
    phase = PH_LOAD;
    uint64_t t0 = bm_now_ns();
    for (int i = 0; i < o.conns && load_issued < o.load; i++)
        for (int k = 0; k < o.pipeline && load_issued < o.load; k++)
            enqueue(&conns[i], R_SET, load_issued++);
    for (int i = 0; i < o.conns; i++)
        if (flush(ep, &conns[i], bm_now_ns()) < 0)
            conn_fail(&conns[i], strerror(errno));
    while (load_done < o.load)
        loop_once(100);
    double s = (double)(bm_now_ns() - t0) / 1e9;
    printf("loaded %llu keys (%zu-byte names, %zu-byte values) in %.2f s, %.0f SET/s, %llu errors%s%s\n",
           (unsigned long long)o.load, key_len, o.vsize, s, (double)o.load / s,
           (unsigned long long)cur.errors, first_error[0] ? ", first: " : "", first_error);
    printf("CACHEBENCH mode=load keys=%llu seconds=%.3f errors=%llu\n", (unsigned long long)o.load, s,
           (unsigned long long)cur.errors);
    return cur.errors ? 1 : 0;
}

static void progress_line(const char *what, double elapsed, double dt)
{
    fprintf(stderr, "[cachebench] %s %6.1f s: %8.0f GET/s  %8.0f ops/s  hit ratio %.3f\n", what,
            elapsed, (double)prog.gets / dt, (double)(prog.gets + prog.sets) / dt,
            ratio3(prog.hits, prog.gets));
    memset(&prog, 0, sizeof(prog));
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"host", required_argument, 0, 'h'},       {"port", required_argument, 0, 'p'},
        {"clients", required_argument, 0, 'c'},    {"pipeline", required_argument, 0, 'P'},
        {"keys", required_argument, 0, 'n'},       {"zipf", required_argument, 0, 's'},
        {"data-size", required_argument, 0, 'd'},  {"seed", required_argument, 0, 1},
        {"warmup", required_argument, 0, 'w'},     {"warmup-gets", required_argument, 0, 2},
        {"warmup-max", required_argument, 0, 3},   {"time", required_argument, 0, 't'},
        {"prefix", required_argument, 0, 4},       {"json", required_argument, 0, 5},
        {"load", required_argument, 0, 6},         {"progress", required_argument, 0, 7},
        {"quiet", no_argument, 0, 'q'},            {"help", no_argument, 0, 8},
        {"warmup-pipeline", required_argument, 0, 9}, {"server-pid", required_argument, 0, 10},
        {0, 0, 0, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "h:p:c:P:n:s:d:w:t:q", lo, NULL)) != -1) {
        switch (ch) {
        case 'h': o.host = optarg; break;
        case 'p': o.port = (int)parse_num(optarg, "--port"); break;
        case 'c': o.conns = (int)parse_num(optarg, "--clients"); break;
        case 'P': o.pipeline = (int)parse_num(optarg, "--pipeline"); break;
        case 'n': o.keys = (uint64_t)parse_num(optarg, "--keys"); break;
        case 's': o.zipf_s = parse_num(optarg, "--zipf"); break;
        case 'd': o.vsize = (size_t)parse_num(optarg, "--data-size"); break;
        case 1: o.seed = (uint64_t)parse_num(optarg, "--seed"); break;
        case 'w': o.warmup_s = parse_num(optarg, "--warmup"); break;
        case 2: o.warmup_gets = (uint64_t)parse_num(optarg, "--warmup-gets"); break;
        case 3: o.warmup_max_s = parse_num(optarg, "--warmup-max"); break;
        case 't': o.time_s = parse_num(optarg, "--time"); break;
        case 4: o.prefix = optarg; break;
        case 5: o.json = optarg; break;
        case 6: o.load = (uint64_t)parse_num(optarg, "--load"); break;
        case 7: o.progress_s = parse_num(optarg, "--progress"); break;
        case 'q': o.quiet = 1; break;
        case 8: usage(stdout); return 0;
        case 9: o.warmup_pipeline = (int)parse_num(optarg, "--warmup-pipeline"); break;
        case 10: o.server_pid = (int)parse_num(optarg, "--server-pid"); break;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc)
        die("unexpected argument: %s", argv[optind]);
    if (o.conns < 1 || o.conns > 100000)
        die("%s", "--clients must be 1..100000");
    if (o.pipeline < 1 || o.pipeline > 100000)
        die("%s", "--pipeline must be 1..100000");
    if (o.warmup_pipeline == 0)
        o.warmup_pipeline = o.pipeline;
    if (o.warmup_pipeline < 1 || o.warmup_pipeline > 100000)
        die("%s", "--warmup-pipeline must be 1..100000");
    if (o.keys < 1)
        die("%s", "--keys must be at least 1");
    if (!(o.time_s > 0))
        die("%s", "--time must be > 0");
    if (o.vsize > 512 * 1024 * 1024)
        die("%s", "--data-size too large");
    prefix_len = strlen(o.prefix);
    if (prefix_len > MAX_PREFIX)
        die("%s", "--prefix longer than 64 bytes");
    key_len = prefix_len + HEX_LEN;
    build_headers();
    if (bm_zipf_init(&zipf, o.keys, o.zipf_s) < 0)
        die("%s", "bad --zipf / --keys");
    value_tmpl = xalloc(o.vsize);
    for (size_t i = 0; i < o.vsize; i++)
        value_tmpl[i] = (char)('a' + i % 26);
    if (o.quiet)
        o.progress_s = 0;

    setup();
    if (o.load)
        return run_load();

    hist = hist_new();
    phase = PH_WARM;
    depth = o.warmup_pipeline;
    uint64_t t_start = bm_now_ns();
    for (int i = 0; i < o.conns; i++) {
        for (int k = 0; k < depth; k++)
            enqueue(&conns[i], R_GET, bm_zipf_draw(&zipf, &conns[i].rng) - 1);
        if (flush(ep, &conns[i], bm_now_ns()) < 0)
            conn_fail(&conns[i], strerror(errno));
    }
    uint64_t prog_ns = (uint64_t)(o.progress_s * 1e9);
    uint64_t t_prog = t_start, t_meas_end = 0;
    uint64_t warm_max = (uint64_t)(o.warmup_max_s * 1e9), warm_ns = (uint64_t)(o.warmup_s * 1e9);
    uint64_t dur_ns = (uint64_t)(o.time_s * 1e9);
    struct counters warm = {0};
    double warm_s = 0, cpu0 = 0, cpu1 = 0, srv0 = 0, srv1 = 0;
    int warm_timed_out = 0;
    for (;;) {
        loop_once(10);
        uint64_t now = bm_now_ns();
        if (phase == PH_WARM) {
            int done = o.warmup_gets ? cur.gets >= o.warmup_gets : now - t_start >= warm_ns;
            if (!done && now - t_start >= warm_max) {
                done = 1;
                warm_timed_out = 1;
            }
            if (done) {
                warm = cur;
                warm_s = (double)(now - t_start) / 1e9;
                if (o.progress_s > 0)
                    fprintf(stderr, "[cachebench] warm-up done: %llu GETs in %.1f s, hit ratio %.3f\n",
                            (unsigned long long)warm.gets, warm_s, ratio3(warm.hits, warm.gets));
                memset(&cur, 0, sizeof(cur));
                memset(&prog, 0, sizeof(prog));
                phase = PH_MEASURE;
                depth = o.pipeline;
                t_meas = t_prog = now;
                t_meas_end = now + dur_ns;
                cpu0 = cpu_seconds();
                srv0 = server_cpu();
            }
        } else if (phase == PH_MEASURE && now >= t_meas_end) {
            cpu1 = cpu_seconds();
            srv1 = server_cpu();
            phase = PH_DRAIN;
            break;
        }
        if (prog_ns && now - t_prog >= prog_ns) {
            progress_line(phase == PH_WARM ? "warm-up" : "measure",
                          (double)(now - (phase == PH_WARM ? t_start : t_meas)) / 1e9,
                          (double)(now - t_prog) / 1e9);
            t_prog = now;
        }
    }
    /* Drain: nothing new is sent; replies are read but not counted. */
    uint64_t t_drain = bm_now_ns();
    while (outstanding() > 0 && bm_now_ns() - t_drain < 5000000000ull)
        loop_once(10);

    struct counters m = cur;
    double win = (double)dur_ns / 1e9;
    double hr = ratio3(m.hits, m.gets);
    double get_rps = (double)m.gets / win, ops_rps = (double)(m.gets + m.sets) / win;
    double p50 = hist_percentile(hist, 50) / 1e6, p99 = hist_percentile(hist, 99) / 1e6;
    double p999 = hist_percentile(hist, 99.9) / 1e6, pmax = hist_percentile(hist, 100) / 1e6;
    double cpu_pct = 100.0 * (cpu1 - cpu0) / win;
    /* server CPU over the window: percent of one core, and microseconds per
     * command (less sensitive than ops/s to other load on the machine) */
    double srv_pct = -1, srv_us_op = -1;
    if (srv0 >= 0 && srv1 >= 0) {
        srv_pct = 100.0 * (srv1 - srv0) / win;
        srv_us_op = m.gets + m.sets ? (srv1 - srv0) * 1e6 / (double)(m.gets + m.sets) : -1;
    }

    printf("cachebench: %s:%d, %d connections, pipeline %d, %llu keys, zipf %.2f, %zu-byte values, seed %llu\n",
           o.host, o.port, o.conns, o.pipeline, (unsigned long long)o.keys, o.zipf_s, o.vsize,
           (unsigned long long)o.seed);
    printf("warm-up:  %llu GETs in %.1f s (hit ratio %.3f)%s\n", (unsigned long long)warm.gets,
           warm_s, ratio3(warm.hits, warm.gets), warm_timed_out ? " - stopped by --warmup-max" : "");
    printf("window:   %.1f s (pipeline %d; warm-up pipeline %d)\n", win, o.pipeline,
           o.warmup_pipeline);
    printf("GETs:     %llu (hits %llu, misses %llu)\n", (unsigned long long)m.gets,
           (unsigned long long)m.hits, (unsigned long long)m.misses);
    printf("SETs:     %llu\n", (unsigned long long)m.sets);
    printf("hit ratio %.3f\n", hr);
    printf("GET/s     %.0f\n", get_rps);
    printf("ops/s     %.0f (GET + SET)\n", ops_rps);
    printf("GET latency ms: p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", p50, p99, p999, pmax);
    printf("generator CPU: %.0f%% of one core%s\n", cpu_pct,
           cpu_pct > 85 ? " (SATURATED: the generator may be the bottleneck)" : "");
    if (srv_pct >= 0)
        printf("server CPU: %.0f%% of one core, %.2f us per command\n", srv_pct, srv_us_op);
    if (m.errors)
        printf("errors:   %llu, first: %s\n", (unsigned long long)m.errors, first_error);
    if (m.bad_values)
        printf("bad values: %llu, first: %s\n", (unsigned long long)m.bad_values, first_bad);
    printf("CACHEBENCH gets=%llu hits=%llu misses=%llu sets=%llu errors=%llu bad_values=%llu "
           "hit_ratio=%.3f get_rps=%.0f ops_rps=%.0f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f "
           "max_ms=%.3f window_s=%.3f warmup_gets=%llu warmup_s=%.1f warmup_hit_ratio=%.3f "
           "client_cpu_pct=%.1f server_cpu_pct=%.1f server_us_per_op=%.3f\n",
           (unsigned long long)m.gets, (unsigned long long)m.hits, (unsigned long long)m.misses,
           (unsigned long long)m.sets, (unsigned long long)m.errors,
           (unsigned long long)m.bad_values, hr, get_rps, ops_rps, p50, p99, p999, pmax, win,
           (unsigned long long)warm.gets, warm_s, ratio3(warm.hits, warm.gets), cpu_pct, srv_pct,
           srv_us_op);
    if (o.json) {
        FILE *f = fopen(o.json, "w");
        if (!f)
            die("cannot write %s", o.json);
        fprintf(f,
                "{\"host\": \"%s\", \"port\": %d, \"clients\": %d, \"pipeline\": %d, \"keys\": %llu, "
                "\"zipf_s\": %.4f, \"value_size\": %zu, \"seed\": %llu, \"window_s\": %.3f, "
                "\"warmup_gets\": %llu, \"warmup_s\": %.3f, \"warmup_hit_ratio\": %.6f, "
                "\"gets\": %llu, \"hits\": %llu, \"misses\": %llu, \"sets\": %llu, "
                "\"errors\": %llu, \"bad_values\": %llu, \"hit_ratio\": %.6f, \"get_rps\": %.1f, "
                "\"ops_rps\": %.1f, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"p999_ms\": %.4f, "
                "\"max_ms\": %.4f, \"client_cpu_pct\": %.1f, \"server_cpu_pct\": %.1f, "
                "\"server_us_per_op\": %.4f, \"warmup_pipeline\": %d}\n",
                o.host, o.port, o.conns, o.pipeline, (unsigned long long)o.keys, o.zipf_s, o.vsize,
                (unsigned long long)o.seed, win, (unsigned long long)warm.gets, warm_s,
                ratio3(warm.hits, warm.gets), (unsigned long long)m.gets,
                (unsigned long long)m.hits, (unsigned long long)m.misses,
                (unsigned long long)m.sets, (unsigned long long)m.errors,
                (unsigned long long)m.bad_values, hr, get_rps, ops_rps, p50, p99, p999, pmax,
                cpu_pct, srv_pct, srv_us_op, o.warmup_pipeline);
        fclose(f);
    }
    return m.errors || m.bad_values ? 1 : 0;
}
