/* cluster.c - see cluster.h. */
#include "cluster.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"
#include "rparse.h"
#include "stamp.h"

static int resolve_node(struct bm_node *n, const char *host, int port)
{
    struct addrinfo hints = {0}, *res;
    char ps[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0)
        return -1;
    memcpy(&n->addr, res->ai_addr, res->ai_addrlen);
    n->addrlen = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    snprintf(n->host, sizeof(n->host), "%s", host);
    n->port = port;
    if (strchr(host, ':'))
        snprintf(n->name, sizeof(n->name), "[%s]:%d", host, port);
    else
        snprintf(n->name, sizeof(n->name), "%s:%d", host, port);
    return 0;
}

int bm_cluster_node(struct bm_cluster *cl, const char *host, int port)
{
    int n = atomic_load_explicit(&cl->nnodes, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        if (cl->nodes[i].port == port && !strcmp(cl->nodes[i].host, host))
            return i;
    }
    pthread_mutex_lock(&cl->mu);
    n = atomic_load_explicit(&cl->nnodes, memory_order_acquire);
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        if (cl->nodes[i].port == port && !strcmp(cl->nodes[i].host, host))
            found = i;
    }
    if (found < 0 && n < cl->maxn && strlen(host) < sizeof(cl->nodes[n].host) &&
        resolve_node(&cl->nodes[n], host, port) == 0) {
        found = n;
        atomic_store_explicit(&cl->nnodes, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&cl->mu);
    return found;
}

/* ---- a blocking RESP reader over one socket, for discovery ---- */

struct rd {
    const char *p, *end;
};

/* Read a line (type byte included) up to CRLF. */
static int rd_line(struct rd *r, char *type, const char **s, size_t *len)
{
    const char *e = r->p;
    while (e + 1 < r->end && !(e[0] == '\r' && e[1] == '\n'))
        e++;
    if (e + 1 >= r->end || e == r->p)
        return -1;
    *type = r->p[0];
    *s = r->p + 1;
    *len = (size_t)(e - r->p - 1);
    r->p = e + 2;
    return 0;
}

static long long to_ll(const char *s, size_t len)
{
    long long v = 0;
    int neg = len && s[0] == '-';
    for (size_t i = neg; i < len; i++)
        v = v * 10 + (s[i] - '0');
    return neg ? -v : v;
}

/* One value: a string (bulk/simple/verbatim, *s and *len), an integer
 * (*n), or an aggregate (*n elements follow, type '*'). */
static int rd_value(struct rd *r, char *type, const char **s, size_t *len, long long *n)
{
    const char *line;
    size_t ll;
    if (rd_line(r, type, &line, &ll) < 0)
        return -1;
    *s = line;
    *len = ll;
    *n = 0;
    switch (*type) {
    case '$':
    case '=': {
        long long bl = to_ll(line, ll);
        if (bl < 0) {
            *len = 0;
            return 0;
        }
        if (r->end - r->p < bl + 2)
            return -1;
        *s = r->p;
        *len = (size_t)bl;
        r->p += bl + 2;
        return 0;
    }
    case ':':
        *n = to_ll(line, ll);
        return 0;
    case '*':
    case '~':
    case '>':
        *n = to_ll(line, ll);
        *type = '*';
        return 0;
    case '%':
        *n = to_ll(line, ll) * 2;
        *type = '*';
        return 0;
    default:
        return 0; /* + - _ # , ( and friends: the line is the value */
    }
}

static int rd_skip(struct rd *r, int depth)
{
    char t;
    const char *s;
    size_t l;
    long long n;
    if (depth > 16 || rd_value(r, &t, &s, &l, &n) < 0)
        return -1;
    if (t == '*')
        for (long long i = 0; i < n; i++)
            if (rd_skip(r, depth + 1) < 0)
                return -1;
    return 0;
}

static int send_all(int fd, const char *b, size_t n)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Read one whole reply into *buf (realloc'd); returns its length or -1. */
static long read_reply(int fd, char **buf, size_t *cap, size_t *have, uint64_t deadline)
{
    struct bm_rparser rp;
    struct bm_reply out;
    bm_rp_init(&rp);
    for (;;) {
        if (*have) {
            int rc = bm_rp_parse(&rp, *buf, *have, &out);
            if (rc == BM_RP_DONE)
                return (long)out.len;
            if (rc == BM_RP_ERR)
                return -1;
        }
        uint64_t now = bm_now_ns();
        if (now >= deadline)
            return -1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int ms = (int)((deadline - now) / 1000000ull) + 1;
        if (poll(&pf, 1, ms) <= 0)
            continue;
        if (*cap - *have < 65536) {
            *cap = *cap ? *cap * 2 : 131072;
            *buf = xrealloc(*buf, *cap);
        }
        ssize_t k = recv(fd, *buf + *have, *cap - *have, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        *have += (size_t)k;
    }
}

static int discover_from(struct bm_cluster *cl, const struct bm_config *cfg,
                         const struct bm_node *seed, char *err, size_t errcap)
{
    uint64_t deadline = bm_now_ns() + (uint64_t)(cfg->connect_timeout * 1e9) + 1000000000ull;
    int fd = socket(seed->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) { /* Linux bounds a blocking connect() by the send timeout */
        double t = cfg->connect_timeout > 0 ? cfg->connect_timeout : 0.001;
        struct timeval tv = {.tv_sec = (time_t)t,
                             .tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6)};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    if (fd < 0 || connect(fd, (const struct sockaddr *)&seed->addr, seed->addrlen) < 0) {
        snprintf(err, errcap, "--cluster: cannot connect to %s: %s", seed->name,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[1024];
    size_t rl = 0;
    int nreplies = 1;
    if (cfg->password) {
        const char *u = cfg->user ? cfg->user : NULL;
        if (u)
            rl += (size_t)snprintf(req + rl, sizeof(req) - rl,
                                   "*3\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
                                   strlen(u), u, strlen(cfg->password), cfg->password);
        else
            rl += (size_t)snprintf(req + rl, sizeof(req) - rl,
                                   "*2\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n", strlen(cfg->password),
                                   cfg->password);
        nreplies++;
        if (rl >= sizeof(req)) {
            snprintf(err, errcap, "--cluster: password too long");
            close(fd);
            return -1;
        }
    }
    const char *slots = "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n";
    if (rl + strlen(slots) >= sizeof(req)) {
        close(fd);
        return -1;
    }
    memcpy(req + rl, slots, strlen(slots));
    rl += strlen(slots);
    char *buf = NULL;
    size_t cap = 0, have = 0;
    int rc = -1;
    if (send_all(fd, req, rl) < 0) {
        snprintf(err, errcap, "--cluster: cannot send to %s", seed->name);
        goto out;
    }
    for (int i = 0; i < nreplies; i++) {
        long len = read_reply(fd, &buf, &cap, &have, deadline);
        if (len < 0) {
            snprintf(err, errcap, "--cluster: no reply to CLUSTER SLOTS from %s", seed->name);
            goto out;
        }
        if (buf[0] == '-' || buf[0] == '!') {
            size_t ml = (size_t)len > 200 ? 200 : (size_t)len - 2;
            snprintf(err, errcap, "--cluster: %s from %s: %.*s",
                     i + 1 < nreplies ? "AUTH refused" : "CLUSTER SLOTS failed", seed->name,
                     (int)ml, buf + 1);
            goto out;
        }
        if (i + 1 < nreplies) {
            memmove(buf, buf + len, have - (size_t)len);
            have -= (size_t)len;
        }
    }
    struct rd r = {buf, buf + have};
    char t;
    const char *s;
    size_t l;
    long long n, nranges;
    if (rd_value(&r, &t, &s, &l, &nranges) < 0 || t != '*') {
        snprintf(err, errcap, "--cluster: unexpected CLUSTER SLOTS reply from %s", seed->name);
        goto out;
    }
    int bad = 0;
    for (long long i = 0; i < nranges && !bad; i++) {
        long long ne, lo, hi, nf, port = 0;
        char host[256] = "";
        if (rd_value(&r, &t, &s, &l, &ne) < 0 || t != '*' || ne < 3 ||
            rd_value(&r, &t, &s, &l, &lo) < 0 || t != ':' ||
            rd_value(&r, &t, &s, &l, &hi) < 0 || t != ':' ||
            rd_value(&r, &t, &s, &l, &nf) < 0 || t != '*' || nf < 2) {
            bad = 1;
            break;
        }
        if (rd_value(&r, &t, &s, &l, &n) < 0) { /* ip */
            bad = 1;
            break;
        }
        if (t != '_' && l < sizeof(host)) {
            memcpy(host, s, l);
            host[l] = 0;
        }
        if (rd_value(&r, &t, &s, &l, &port) < 0 || t != ':') {
            bad = 1;
            break;
        }
        for (long long k = 2; k < nf; k++) /* id, metadata */
            if (rd_skip(&r, 1) < 0)
                bad = 1;
        for (long long k = 3; k < ne; k++) /* replicas */
            if (rd_skip(&r, 1) < 0)
                bad = 1;
        if (bad || lo < 0 || hi >= BM_NSLOTS || lo > hi || port <= 0 || port > 65535) {
            bad = 1;
            break;
        }
        if (!host[0] || !strcmp(host, "?"))
            snprintf(host, sizeof(host), "%s", seed->host);
        int idx = bm_cluster_node(cl, host, (int)port);
        if (idx < 0) {
            snprintf(err, errcap, "--cluster: cannot resolve node %s:%lld", host, port);
            goto out;
        }
        for (long long sl = lo; sl <= hi; sl++)
            atomic_store(&cl->slot_node[sl], (uint16_t)idx);
    }
    if (bad) {
        snprintf(err, errcap, "--cluster: malformed CLUSTER SLOTS reply from %s", seed->name);
        goto out;
    }
    if (atomic_load(&cl->nnodes) == 0) {
        snprintf(err, errcap, "--cluster: %s serves no slots (CLUSTER SLOTS is empty)",
                 seed->name);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    close(fd);
    return rc;
}

static int node_cmp(const struct bm_node *a, const struct bm_node *b)
{
    int c = strcmp(a->host, b->host);
    return c ? c : (a->port > b->port) - (a->port < b->port);
}

int bm_cluster_discover(struct bm_cluster *cl, const struct bm_config *cfg, char *err,
                        size_t errcap)
{
    struct bm_node seed;
    memset(cl, 0, sizeof(*cl));
    pthread_mutex_init(&cl->mu, NULL);
    for (int i = 0; i < BM_NSLOTS; i++)
        atomic_store(&cl->slot_node[i], BM_SLOT_NONE);
    if (resolve_node(&seed, cfg->host, cfg->port) < 0) {
        snprintf(err, errcap, "--cluster: cannot resolve %s", cfg->host);
        return -1;
    }
    /* Masters are at most 16384 (one per slot); the table is trimmed to
     * what was found plus BM_CLUSTER_SPARE before the workers start. */
    cl->maxn = BM_NSLOTS;
    cl->nodes = xmalloc(sizeof(struct bm_node) * (size_t)cl->maxn);
    if (discover_from(cl, cfg, &seed, err, errcap) < 0)
        return -1;
    int n = atomic_load(&cl->nnodes);
    /* Report the masters in a stable order: by host, then port. */
    int *perm = xmalloc(sizeof(int) * (size_t)n), *rank = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = 1; i < n; i++) { /* insertion sort: masters are few */
        int v = perm[i], j = i;
        while (j > 0 && node_cmp(&cl->nodes[perm[j - 1]], &cl->nodes[v]) > 0) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = v;
    }
    struct bm_node *sorted = xmalloc(sizeof(struct bm_node) * (size_t)(n + BM_CLUSTER_SPARE));
    for (int i = 0; i < n; i++) {
        sorted[i] = cl->nodes[perm[i]];
        rank[perm[i]] = i;
    }
    for (int i = 0; i < BM_NSLOTS; i++) {
        unsigned v = atomic_load(&cl->slot_node[i]);
        if (v != BM_SLOT_NONE)
            atomic_store(&cl->slot_node[i], (uint16_t)rank[v]);
    }
    free(cl->nodes);
    free(perm);
    free(rank);
    cl->nodes = sorted;
    cl->ninitial = n;
    cl->maxn = n + BM_CLUSTER_SPARE;
    cl->uncovered = 0;
    for (int i = 0; i < BM_NSLOTS; i++)
        cl->uncovered += atomic_load(&cl->slot_node[i]) == BM_SLOT_NONE;
    return 0;
}

void bm_cluster_free(struct bm_cluster *cl)
{
    free(cl->nodes);
    cl->nodes = NULL;
    pthread_mutex_destroy(&cl->mu);
}

unsigned bm_template_slot(const struct bm_template *t, uint64_t k)
{
    char key[BM_CLUSTER_MAX_KEY];
    size_t len = t->arg1_len;
    if (t->argc < 2 || len > sizeof(key))
        return 0;
    memcpy(key, t->bytes + t->arg1_off, len);
    for (int i = 0; i < t->nkeys; i++) {
        size_t o = t->key_offs[i];
        if (o >= t->arg1_off && o + BM_KEY_DIGITS <= t->arg1_off + len)
            bm_put_key(key + (o - t->arg1_off), k);
    }
    return bm_key_slot(key, len);
}

/* Commands whose keys are not (only) their first argument: refused when
 * they have more than `maxargc` words (0: always). */
static const struct {
    const char *name;
    int maxargc;
} multi_key[] = {
    {"MGET", 2}, {"MSET", 3}, {"MSETNX", 3}, {"DEL", 2}, {"UNLINK", 2}, {"EXISTS", 2},
    {"TOUCH", 2}, {"WATCH", 2}, {"PFCOUNT", 2}, {"SINTER", 2}, {"SUNION", 2}, {"SDIFF", 2},
    {"PFMERGE", 2}, {"RENAME", 0}, {"RENAMENX", 0}, {"COPY", 0}, {"SMOVE", 0},
    {"SINTERSTORE", 0}, {"SUNIONSTORE", 0}, {"SDIFFSTORE", 0}, {"SINTERCARD", 0},
    {"ZUNIONSTORE", 0}, {"ZINTERSTORE", 0}, {"ZDIFFSTORE", 0}, {"ZUNION", 0}, {"ZINTER", 0},
    {"ZDIFF", 0}, {"ZINTERCARD", 0}, {"ZRANGESTORE", 0}, {"LMOVE", 0}, {"BLMOVE", 0},
    {"RPOPLPUSH", 0}, {"BRPOPLPUSH", 0}, {"BLPOP", 3}, {"BRPOP", 3}, {"BZPOPMIN", 3},
    {"BZPOPMAX", 3}, {"LMPOP", 0}, {"BLMPOP", 0}, {"ZMPOP", 0}, {"BZMPOP", 0},
    {"BITOP", 0}, {"EVAL", 0}, {"EVALSHA", 0}, {"EVAL_RO", 0}, {"EVALSHA_RO", 0},
    {"FCALL", 0}, {"FCALL_RO", 0}, {"MULTI", 0}, {"EXEC", 0}, {"XREAD", 0},
    {"XREADGROUP", 0}, {"GEOSEARCHSTORE", 0}, {"MIGRATE", 0}, {"OBJECT", 0},
    {"SUBSCRIBE", 0}, {"PSUBSCRIBE", 0}, {"SSUBSCRIBE", 0}, {"PUBLISH", 0}, {"SELECT", 0},
    {"SORT", 0}, {"SORT_RO", 0},
};

int bm_cluster_check_workload(const struct bm_workload *wl, const char *what, char *err,
                              size_t errcap)
{
    for (int i = 0; i < wl->nt; i++) {
        const struct bm_template *t = &wl->t[i];
        char cmd[32];
        size_t cl = t->cmd_len < sizeof(cmd) - 1 ? t->cmd_len : sizeof(cmd) - 1;
        memcpy(cmd, t->bytes + t->cmd_off, cl);
        cmd[cl] = 0;
        if (t->argc < 2) {
            snprintf(err, errcap,
                     "--cluster: %s '%s' has no key (requests are routed by their first "
                     "argument, the key)",
                     what, t->text);
            return -1;
        }
        for (size_t k = 0; k < sizeof(multi_key) / sizeof(multi_key[0]); k++) {
            if (!strcasecmp(cmd, multi_key[k].name) &&
                (multi_key[k].maxargc == 0 || t->argc > multi_key[k].maxargc)) {
                snprintf(err, errcap,
                         "--cluster: %s '%s' is not supported: %s takes several keys (or a "
                         "key elsewhere than its first argument); --cluster routes commands "
                         "with exactly one key, the first argument",
                         what, t->text, multi_key[k].name);
                return -1;
            }
        }
        if (t->arg1_len > BM_CLUSTER_MAX_KEY) {
            snprintf(err, errcap, "--cluster: %s '%s': key longer than %d bytes", what,
                     t->text, BM_CLUSTER_MAX_KEY);
            return -1;
        }
    }
    return 0;
}
