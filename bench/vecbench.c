/* vecbench.c - the vector-set benchmark of issue #8: dataset generation with
 * exact ground truth, and a RESP client that loads a vector set into a
 * server (VADD) and measures recall@k and queries/s of VSIM.
 *
 * Built by bench/issue8.sh (or by hand) with the distance kernels of the
 * server (src/ds/vdist.c, for the brute-force truth):
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -pthread -Isrc -o build/vecbench \
 *      bench/vecbench.c src/ds/vdist.c -lm
 *
 * Subcommands (each prints one or more lines "VECBENCH <what> key=value ..."
 * that bench/issue8.sh parses, after human-readable lines):
 *
 *   gen -o FILE [-n 100000] [-d 128] [-q 1000] [-k 10] [--clusters 100]
 *       [--sigma 1.0] [--seed 8] [--latent 0] [--threads nproc]
 *     Clustered Gaussian data: C centres with N(0,1) components; each point
 *     (data and queries alike, from one splitmix64 stream: the data first,
 *     then the held-out queries) picks a centre uniformly and adds
 *     N(0, sigma^2) noise to every component.  With --latent L the
 *     centres and points are drawn so in an L-dimensional space and mapped
 *     into the full one by a fixed random linear map, plus N(0, (sigma/10)^2)
 *     noise per full component: low intrinsic dimension, as real
 *     embeddings have (L is kept in the header at byte 40).  Truth: the exact top-k of
 *     every query by cosine similarity (brute force over all points, the
 *     vectors normalised, dot products with vd_dot_f32, ties to the lower
 *     id).  File layout (little-endian): a 64-byte header
 *     ("HKVECS01", u32 n, dim, nq, k, clusters, f32 sigma, u64 seed, zero
 *     padding), then n*dim f32 data (not normalised), nq*dim f32 queries,
 *     nq*k u32 truth ids (best first), nq*k f32 truth similarities.
 *
 *   load -p PORT -f FILE -K KEY [--quant NOQUANT|Q8|BIN] [-P 32] [-N n]
 *        [--server-pid PID]
 *     VADD KEY FP32 <blob> <id> <quant> for the first N points (all by
 *     default), P commands in flight on one connection; element names are
 *     the decimal point ids.  Reports VADD/s, used_memory (INFO memory)
 *     before and after, (after - before) / N per element, and with
 *     --server-pid the server's CPU time per VADD.
 *
 *   query -p PORT -f FILE -K KEY [--ef 40,80,150,300,500] [--clients 1,8]
 *         [--count 10] [-T 5] [--extra "FILTER-EF 100 ..."] [--server-pid PID]
 *     For each EF and each client count: C threads, each with its own
 *     connection and one request in flight, send
 *     VSIM KEY FP32 <blob> COUNT k EF ef, taking query indexes from a
 *     shared counter (query i mod nq) until every query ran once and T
 *     seconds passed.  recall@k = mean over the first pass of
 *     |reply ids & truth top-k| / k; queries/s = replies / elapsed; latency
 *     p50 / p99 (send to complete reply); with --server-pid, the server's
 *     CPU time (all threads, /proc/PID/stat, 10 ms ticks) per query, a
 *     figure that stays meaningful on a machine shared with other work.
 *
 *   stall -p PORT -f FILE -K KEY [--ef 5000] [--count 1000] [-R 5]
 *     How long a worker stalls other clients during a very large VSIM: a
 *     PING client (one PING in flight) runs for the whole test; first alone
 *     for the same time as the loaded phase (baseline), then while another
 *     connection sends R big VSIMs back to back.  Reports the big VSIM's
 *     mean and max time and the PING max / p99 latency in both phases.  Run
 *     it against a server with one worker thread so that both connections
 *     share the worker. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ds/vdist.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#include <stdarg.h>
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vecbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

/* ----------------------------------------------------------- dataset */

#define MAGIC "HKVECS01"

struct dataset {
    uint32_t n, dim, nq, k, clusters;
    float sigma;
    uint64_t seed;
    uint32_t latent; /* 0: clusters in the full space; else its dimension */
    float *data;     /* n * dim */
    float *queries;  /* nq * dim */
    uint32_t *truth; /* nq * k */
    float *tscore;   /* nq * k */
};

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static double unif(uint64_t *s)
{
    return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* Box-Muller, both outputs used. */
static double gauss(uint64_t *s, int *have, double *spare)
{
    if (*have) {
        *have = 0;
        return *spare;
    }
    double u = unif(s), v = unif(s);
    double r = sqrt(-2.0 * log(u)), t = 2.0 * M_PI * v;
    *spare = r * sin(t);
    *have = 1;
    return r * cos(t);
}

static void normalise(float *v, uint32_t dim)
{
    double s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    if (s > 0) {
        float inv = (float)(1.0 / sqrt(s));
        for (uint32_t i = 0; i < dim; i++)
            v[i] *= inv;
    }
}

struct truth_job {
    struct dataset *ds;
    const float *ndata, *nq;
    uint32_t q0, q1;
};

static void *truth_worker(void *arg)
{
    struct truth_job *j = arg;
    struct dataset *ds = j->ds;
    uint32_t k = ds->k;
    float *best = xmalloc(sizeof(float) * k);
    uint32_t *bid = xmalloc(sizeof(uint32_t) * k);
    for (uint32_t q = j->q0; q < j->q1; q++) {
        const float *qv = j->nq + (size_t)q * ds->dim;
        uint32_t have = 0;
        for (uint32_t i = 0; i < ds->n; i++) {
            float s = vd_dot_f32(qv, j->ndata + (size_t)i * ds->dim, ds->dim);
            if (have == k && s <= best[k - 1])
                continue; /* equal: the lower id (seen first) wins */
            uint32_t pos = have < k ? have++ : k - 1;
            while (pos > 0 && best[pos - 1] < s) {
                best[pos] = best[pos - 1];
                bid[pos] = bid[pos - 1];
                pos--;
            }
            best[pos] = s;
            bid[pos] = i;
        }
        for (uint32_t r = 0; r < k; r++) {
            ds->truth[(size_t)q * k + r] = r < have ? bid[r] : UINT32_MAX;
            ds->tscore[(size_t)q * k + r] = r < have ? best[r] : -2.0f;
        }
    }
    free(best);
    free(bid);
    return NULL;
}

/* How hard the data is: the mean similarity of the 1st and of the k-th
 * true neighbour over the queries. */
static void truth_means(const struct dataset *ds, double *s1, double *sk)
{
    *s1 = *sk = 0;
    for (uint32_t q = 0; q < ds->nq; q++) {
        *s1 += ds->tscore[(size_t)q * ds->k];
        *sk += ds->tscore[(size_t)q * ds->k + ds->k - 1];
    }
    if (ds->nq) {
        *s1 /= ds->nq;
        *sk /= ds->nq;
    }
}

static void cmd_gen(int argc, char **argv)
{
    struct dataset ds = {.n = 100000, .dim = 128, .nq = 1000, .k = 10, .clusters = 100, .sigma = 1.0f, .seed = 8};
    const char *out = NULL;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    static const struct option lo[] = {{"clusters", 1, 0, 'C'}, {"sigma", 1, 0, 's'}, {"seed", 1, 0, 'S'},
                                       {"threads", 1, 0, 't'}, {"latent", 1, 0, 'L'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:n:d:q:k:t:", lo, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'n': ds.n = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'd': ds.dim = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'q': ds.nq = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'k': ds.k = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'C': ds.clusters = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 's': ds.sigma = strtof(optarg, NULL); break;
        case 'S': ds.seed = strtoull(optarg, NULL, 10); break;
        case 't': threads = atoi(optarg); break;
        case 'L': ds.latent = (uint32_t)strtoul(optarg, NULL, 10); break;
        default: exit(2);
        }
    }
    if (!out || !ds.n || !ds.dim || !ds.nq || !ds.k || !ds.clusters || ds.k > ds.n)
        die("gen: need -o FILE and positive -n -d -q -k --clusters (k <= n)");
    if (threads < 1)
        threads = 1;
    double t0 = now_s();
    uint64_t st = ds.seed;
    int have = 0;
    double spare = 0;
    if (ds.latent > ds.dim)
        die("gen: --latent must be at most -d");
    /* the space the clusters live in: the full one, or a latent one that a
     * fixed random linear map A (dim x latent, N(0, 1/latent)) embeds, plus
     * a little isotropic noise (sigma/10 per component) in the full space:
     * data of low intrinsic dimension, like real embeddings */
    uint32_t sd = ds.latent ? ds.latent : ds.dim;
    float *cent = xmalloc(sizeof(float) * ds.clusters * sd);
    for (size_t i = 0; i < (size_t)ds.clusters * sd; i++)
        cent[i] = (float)gauss(&st, &have, &spare);
    float *amap = NULL;
    if (ds.latent) {
        amap = xmalloc(sizeof(float) * (size_t)ds.dim * ds.latent);
        float sc = (float)(1.0 / sqrt((double)ds.latent));
        for (size_t i = 0; i < (size_t)ds.dim * ds.latent; i++)
            amap[i] = sc * (float)gauss(&st, &have, &spare);
    }
    size_t tot = (size_t)ds.n + ds.nq;
    float *all = xmalloc(sizeof(float) * tot * ds.dim);
    float *z = xmalloc(sizeof(float) * sd);
    for (size_t p = 0; p < tot; p++) {
        uint32_t cl = (uint32_t)(splitmix64(&st) % ds.clusters);
        for (uint32_t d = 0; d < sd; d++)
            z[d] = cent[(size_t)cl * sd + d] + ds.sigma * (float)gauss(&st, &have, &spare);
        float *o = all + p * ds.dim;
        if (!ds.latent) {
            memcpy(o, z, sizeof(float) * ds.dim);
            continue;
        }
        for (uint32_t d = 0; d < ds.dim; d++) {
            const float *a = amap + (size_t)d * ds.latent;
            float acc = 0;
            for (uint32_t l = 0; l < ds.latent; l++)
                acc += a[l] * z[l];
            o[d] = acc + 0.1f * ds.sigma * (float)gauss(&st, &have, &spare);
        }
    }
    free(z);
    free(amap);
    free(cent);
    ds.data = all;
    ds.queries = all + (size_t)ds.n * ds.dim;
    float *norm = xmalloc(sizeof(float) * tot * ds.dim);
    memcpy(norm, all, sizeof(float) * tot * ds.dim);
    for (size_t p = 0; p < tot; p++)
        normalise(norm + p * ds.dim, ds.dim);
    ds.truth = xmalloc(sizeof(uint32_t) * ds.nq * ds.k);
    ds.tscore = xmalloc(sizeof(float) * ds.nq * ds.k);
    double t1 = now_s();
    vd_init();
    pthread_t *th = xmalloc(sizeof(pthread_t) * (size_t)threads);
    struct truth_job *jobs = xmalloc(sizeof(*jobs) * (size_t)threads);
    for (int i = 0; i < threads; i++) {
        jobs[i] = (struct truth_job){&ds, norm, norm + (size_t)ds.n * ds.dim, (uint32_t)((uint64_t)ds.nq * i / threads),
                                     (uint32_t)((uint64_t)ds.nq * (i + 1) / threads)};
        if (pthread_create(&th[i], NULL, truth_worker, &jobs[i]))
            die("pthread_create failed");
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double t2 = now_s();
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        die("cannot write %s: %s", tmp, strerror(errno));
    unsigned char hdr[64] = {0};
    memcpy(hdr, MAGIC, 8);
    uint32_t h32[5] = {ds.n, ds.dim, ds.nq, ds.k, ds.clusters};
    memcpy(hdr + 8, h32, sizeof(h32));
    memcpy(hdr + 28, &ds.sigma, 4);
    memcpy(hdr + 32, &ds.seed, 8);
    memcpy(hdr + 40, &ds.latent, 4);
    int ok = fwrite(hdr, 64, 1, f) == 1 && fwrite(all, sizeof(float) * ds.dim, tot, f) == tot &&
             fwrite(ds.truth, sizeof(uint32_t) * ds.k, ds.nq, f) == ds.nq &&
             fwrite(ds.tscore, sizeof(float) * ds.k, ds.nq, f) == ds.nq;
    if (fclose(f) != 0 || !ok)
        die("writing %s failed", tmp);
    if (rename(tmp, out) != 0)
        die("rename to %s failed: %s", out, strerror(errno));
    double s1, sk;
    truth_means(&ds, &s1, &sk);
    printf("VECBENCH gen file=%s n=%u dim=%u nq=%u k=%u clusters=%u sigma=%g seed=%llu latent=%u gen_s=%.2f "
           "truth_s=%.2f threads=%d kernels=%s mean_top1_sim=%.4f mean_topk_sim=%.4f\n",
           out, ds.n, ds.dim, ds.nq, ds.k, ds.clusters, ds.sigma, (unsigned long long)ds.seed, ds.latent, t1 - t0,
           t2 - t1,
           threads, vd_level_name(), s1, sk);
    free(all);
    free(norm);
    free(ds.truth);
    free(ds.tscore);
    free(th);
    free(jobs);
}

static void ds_load(const char *path, struct dataset *ds)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    unsigned char hdr[64];
    if (fread(hdr, 64, 1, f) != 1 || memcmp(hdr, MAGIC, 8) != 0)
        die("%s: not a vecbench dataset", path);
    uint32_t h32[5];
    memcpy(h32, hdr + 8, sizeof(h32));
    ds->n = h32[0];
    ds->dim = h32[1];
    ds->nq = h32[2];
    ds->k = h32[3];
    ds->clusters = h32[4];
    memcpy(&ds->sigma, hdr + 28, 4);
    memcpy(&ds->seed, hdr + 32, 8);
    memcpy(&ds->latent, hdr + 40, 4);
    size_t tot = (size_t)ds->n + ds->nq;
    ds->data = xmalloc(sizeof(float) * tot * ds->dim);
    ds->queries = ds->data + (size_t)ds->n * ds->dim;
    ds->truth = xmalloc(sizeof(uint32_t) * ds->nq * ds->k);
    ds->tscore = xmalloc(sizeof(float) * ds->nq * ds->k);
    if (fread(ds->data, sizeof(float) * ds->dim, tot, f) != tot ||
        fread(ds->truth, sizeof(uint32_t) * ds->k, ds->nq, f) != ds->nq ||
        fread(ds->tscore, sizeof(float) * ds->k, ds->nq, f) != ds->nq)
        die("%s: truncated", path);
    fclose(f);
}

/* ------------------------------------------------------- RESP client */

struct conn {
    int fd;
    char *rb;
    size_t rcap, rlen, rpos;
    char *wb;
    size_t wcap, wlen;
};

struct reply {
    char type; /* + - : $ * ('_' for nil) */
    long long ival;
    char *str;
    size_t len;
    size_t nel;
    struct reply *el;
};

static const char *g_host = "127.0.0.1";
static int g_port = 6379;

static void conn_open(struct conn *c)
{
    memset(c, 0, sizeof(*c));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", g_port);
    int rc = getaddrinfo(g_host, ps, &hints, &res);
    if (rc != 0)
        die("getaddrinfo %s: %s", g_host, gai_strerror(rc));
    c->fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            c->fd = fd;
            break;
        }
        close(fd);
    }
    freeaddrinfo(res);
    if (c->fd < 0)
        die("cannot connect to %s:%d", g_host, g_port);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->rcap = 1 << 16;
    c->rb = xmalloc(c->rcap);
    c->wcap = 1 << 16;
    c->wb = xmalloc(c->wcap);
}

static void conn_close(struct conn *c)
{
    close(c->fd);
    free(c->rb);
    free(c->wb);
}

static void wput(struct conn *c, const void *p, size_t n)
{
    if (c->wlen + n > c->wcap) {
        while (c->wlen + n > c->wcap)
            c->wcap *= 2;
        c->wb = xrealloc(c->wb, c->wcap);
    }
    memcpy(c->wb + c->wlen, p, n);
    c->wlen += n;
}

static void wfmt(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wfmt(struct conn *c, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    wput(c, tmp, (size_t)n);
}

/* Append one command: argv with lengths. */
static void cmd_append(struct conn *c, int argc, const char **argv, const size_t *lens)
{
    wfmt(c, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        wfmt(c, "$%zu\r\n", l);
        wput(c, argv[i], l);
        wput(c, "\r\n", 2);
    }
}

static void conn_flush(struct conn *c)
{
    size_t off = 0;
    while (off < c->wlen) {
        ssize_t w = write(c->fd, c->wb + off, c->wlen - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die("write: %s", strerror(errno));
        }
        off += (size_t)w;
    }
    c->wlen = 0;
}

/* Make at least n unread bytes available. */
static void rneed(struct conn *c, size_t n)
{
    while (c->rlen - c->rpos < n) {
        if (c->rpos > 0) {
            memmove(c->rb, c->rb + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        if (c->rcap - c->rlen < n || c->rcap - c->rlen < 4096) {
            while (c->rcap - c->rlen < n || c->rcap - c->rlen < 4096)
                c->rcap *= 2;
            c->rb = xrealloc(c->rb, c->rcap);
        }
        ssize_t r = read(c->fd, c->rb + c->rlen, c->rcap - c->rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("connection closed by the server (%s)", r < 0 ? strerror(errno) : "EOF");
        c->rlen += (size_t)r;
    }
}

/* A line without CRLF; valid until the next read. */
static char *rline(struct conn *c, size_t *len)
{
    size_t scan = c->rpos;
    for (;;) {
        char *p = memchr(c->rb + scan, '\n', c->rlen - scan);
        if (p) {
            char *s = c->rb + c->rpos;
            size_t l = (size_t)(p - s);
            if (l > 0 && s[l - 1] == '\r')
                l--;
            s[l] = 0;
            c->rpos = (size_t)(p - c->rb) + 1;
            *len = l;
            return s;
        }
        size_t have = c->rlen - c->rpos;
        scan = have;
        rneed(c, have + 1);
        scan += c->rpos;
    }
}

static void reply_read(struct conn *c, struct reply *r)
{
    size_t len;
    char *l = rline(c, &len);
    memset(r, 0, sizeof(*r));
    r->type = l[0];
    switch (l[0]) {
    case '+':
    case '-':
        r->str = xmalloc(len);
        memcpy(r->str, l + 1, len - 1);
        r->str[len - 1] = 0;
        r->len = len - 1;
        break;
    case ':':
        r->ival = strtoll(l + 1, NULL, 10);
        break;
    case '$': {
        long long n = strtoll(l + 1, NULL, 10);
        if (n < 0) {
            r->type = '_';
            break;
        }
        rneed(c, (size_t)n + 2);
        r->str = xmalloc((size_t)n + 1);
        memcpy(r->str, c->rb + c->rpos, (size_t)n);
        r->str[n] = 0;
        r->len = (size_t)n;
        c->rpos += (size_t)n + 2;
        break;
    }
    case '*': {
        long long n = strtoll(l + 1, NULL, 10);
        if (n < 0) {
            r->type = '_';
            break;
        }
        r->nel = (size_t)n;
        r->el = xmalloc(sizeof(struct reply) * (size_t)(n ? n : 1));
        for (long long i = 0; i < n; i++)
            reply_read(c, &r->el[i]);
        break;
    }
    default:
        die("unexpected reply type '%c' (only RESP2 is spoken here)", l[0]);
    }
}

static void reply_free(struct reply *r)
{
    free(r->str);
    for (size_t i = 0; i < r->nel; i++)
        reply_free(&r->el[i]);
    free(r->el);
}

static long long info_field(struct conn *c, const char *section, const char *field)
{
    const char *argv[2] = {"INFO", section};
    cmd_append(c, 2, argv, NULL);
    conn_flush(c);
    struct reply r;
    reply_read(c, &r);
    if (r.type != '$')
        die("INFO %s: unexpected reply %s", section, r.type == '-' ? r.str : "");
    size_t fl = strlen(field);
    long long v = -1;
    for (char *p = r.str; p && *p;) {
        if (strncmp(p, field, fl) == 0 && p[fl] == ':') {
            v = strtoll(p + fl + 1, NULL, 10);
            break;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    reply_free(&r);
    return v;
}

/* CPU seconds (user + system, all threads) used so far by process pid,
 * from /proc/PID/stat; -1 if unknown. */
static double proc_cpu_s(int pid)
{
    if (pid <= 0)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ------------------------------------------------------------- load */

static const char *g_file, *g_key = "vs";

static void cmd_load(int argc, char **argv)
{
    const char *quant = "Q8";
    int pipeline = 32;
    long long limit = -1;
    int spid = 0;
    static const struct option lo[] = {{"quant", 1, 0, 'Q'}, {"server-pid", 1, 0, 'S'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h:p:f:K:P:N:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': g_host = optarg; break;
        case 'p': g_port = atoi(optarg); break;
        case 'f': g_file = optarg; break;
        case 'K': g_key = optarg; break;
        case 'P': pipeline = atoi(optarg); break;
        case 'N': limit = atoll(optarg); break;
        case 'Q': quant = optarg; break;
        case 'S': spid = atoi(optarg); break;
        default: exit(2);
        }
    }
    if (!g_file)
        die("load: need -f FILE");
    if (pipeline < 1)
        pipeline = 1;
    struct dataset ds;
    ds_load(g_file, &ds);
    uint32_t n = limit >= 0 && limit < ds.n ? (uint32_t)limit : ds.n;
    struct conn cn;
    conn_open(&cn);
    long long m0 = info_field(&cn, "memory", "used_memory");
    double cpu0 = proc_cpu_s(spid);
    double t0 = now_s();
    uint64_t errors = 0, added = 0;
    char name[16];
    for (uint32_t i = 0; i < n;) {
        uint32_t b = 0;
        for (; b < (uint32_t)pipeline && i + b < n; b++) {
            snprintf(name, sizeof(name), "%u", i + b);
            const char *av[6] = {"VADD", g_key, "FP32", (const char *)(ds.data + (size_t)(i + b) * ds.dim), name,
                                 quant};
            size_t lens[6] = {4, strlen(g_key), 4, (size_t)ds.dim * 4, strlen(name), strlen(quant)};
            cmd_append(&cn, 6, av, lens);
        }
        conn_flush(&cn);
        for (uint32_t j = 0; j < b; j++) {
            struct reply r;
            reply_read(&cn, &r);
            if (r.type == '-') {
                if (errors++ < 5)
                    fprintf(stderr, "vecbench: VADD %u: -%s\n", i + j, r.str);
            } else if (r.type == ':' && r.ival == 1) {
                added++;
            }
            reply_free(&r);
        }
        i += b;
    }
    double t1 = now_s();
    double cpu1 = proc_cpu_s(spid);
    long long m1 = info_field(&cn, "memory", "used_memory");
    const char *av[2] = {"VCARD", g_key};
    cmd_append(&cn, 2, av, NULL);
    conn_flush(&cn);
    struct reply r;
    reply_read(&cn, &r);
    long long card = r.type == ':' ? r.ival : -1;
    reply_free(&r);
    conn_close(&cn);
    double per = n ? (double)(m1 - m0) / n : 0;
    size_t raw = (size_t)ds.dim * (strcmp(quant, "NOQUANT") == 0 ? 4 : strcmp(quant, "BIN") == 0 ? 0 : 1);
    if (strcmp(quant, "BIN") == 0)
        raw = (ds.dim + 7) / 8;
    printf("VECBENCH load key=%s quant=%s n=%u dim=%u pipeline=%d added=%llu errors=%llu vcard=%lld secs=%.3f "
           "vadd_per_s=%.1f used_memory_before=%lld used_memory_after=%lld bytes_per_elem=%.1f "
           "raw_vector_bytes=%zu overhead_per_elem=%.1f server_cpu_us_per_vadd=%.1f\n",
           g_key, quant, n, ds.dim, pipeline, (unsigned long long)added, (unsigned long long)errors, card, t1 - t0,
           n / (t1 - t0), m0, m1, per, raw, per - (double)raw,
           cpu0 >= 0 && cpu1 >= 0 && n ? (cpu1 - cpu0) / n * 1e6 : -1.0);
    if (errors)
        exit(1);
}

/* ------------------------------------------------------------ query */

struct qshared {
    struct dataset *ds;
    int ef, count;
    double tmin, start;
    const char *extra; /* extra VSIM arguments, space separated */
    _Atomic uint64_t next;
    double *recall;    /* per query, first pass */
    _Atomic uint64_t errors;
    _Atomic int stop;
};

struct qthread {
    struct qshared *sh;
    pthread_t th;
    double *lat; /* seconds */
    size_t nlat, caplat;
    double end;
};

static int split_words(const char *s, char *buf, size_t cap, const char **out, int max)
{
    int n = 0;
    if (!s)
        return 0;
    snprintf(buf, cap, "%s", s);
    for (char *p = strtok(buf, " "); p && n < max; p = strtok(NULL, " "))
        out[n++] = p;
    return n;
}

static void *query_worker(void *arg)
{
    struct qthread *t = arg;
    struct qshared *sh = t->sh;
    struct dataset *ds = sh->ds;
    struct conn cn;
    conn_open(&cn);
    char efs[16], cnt[16], xbuf[512];
    const char *xw[32];
    int nx = split_words(sh->extra, xbuf, sizeof(xbuf), xw, 32);
    snprintf(efs, sizeof(efs), "%d", sh->ef);
    snprintf(cnt, sizeof(cnt), "%d", sh->count);
    for (;;) {
        uint64_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= ds->nq && (now_s() - sh->start >= sh->tmin || atomic_load(&sh->stop)))
            break;
        uint32_t q = (uint32_t)(i % ds->nq);
        const char *av[40] = {"VSIM", g_key, "FP32", (const char *)(ds->queries + (size_t)q * ds->dim),
                              "COUNT", cnt, "EF", efs};
        size_t lens[40] = {4, strlen(g_key), 4, (size_t)ds->dim * 4, 5, strlen(cnt), 2, strlen(efs)};
        int ac = 8;
        for (int x = 0; x < nx; x++) {
            av[ac] = xw[x];
            lens[ac++] = strlen(xw[x]);
        }
        double t0 = now_s();
        cmd_append(&cn, ac, av, lens);
        conn_flush(&cn);
        struct reply r;
        reply_read(&cn, &r);
        double t1 = now_s();
        if (t->nlat == t->caplat) {
            t->caplat = t->caplat ? t->caplat * 2 : 4096;
            t->lat = xrealloc(t->lat, sizeof(double) * t->caplat);
        }
        t->lat[t->nlat++] = t1 - t0;
        if (r.type != '*') {
            if (atomic_fetch_add(&sh->errors, 1) < 3)
                fprintf(stderr, "vecbench: VSIM query %u: %s%s\n", q, r.type == '-' ? "-" : "type ",
                        r.type == '-' ? r.str : (char[]){r.type, 0});
            atomic_store(&sh->stop, 1);
        } else if (i < ds->nq) {
            uint32_t k = ds->k < (uint32_t)sh->count ? ds->k : (uint32_t)sh->count, hit = 0;
            const uint32_t *tr = ds->truth + (size_t)q * ds->k;
            for (size_t e = 0; e < r.nel; e++) {
                if (r.el[e].type != '$')
                    continue;
                char *endp;
                unsigned long id = strtoul(r.el[e].str, &endp, 10);
                if (*endp)
                    continue;
                for (uint32_t x = 0; x < k; x++)
                    if (tr[x] == id) {
                        hit++;
                        break;
                    }
            }
            sh->recall[q] = (double)hit / k;
        }
        reply_free(&r);
    }
    t->end = now_s();
    conn_close(&cn);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *sorted, size_t n, double p)
{
    if (!n)
        return 0;
    size_t r = (size_t)ceil(p / 100.0 * (double)n);
    if (r < 1)
        r = 1;
    return sorted[r - 1];
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *p = strtok(buf, ","); p && n < max; p = strtok(NULL, ","))
        out[n++] = atoi(p);
    return n;
}

static void cmd_query(int argc, char **argv)
{
    int efs[32], clients[32], nef, ncl, count = 10;
    double tmin = 5;
    const char *extra = NULL;
    int spid = 0;
    nef = parse_list("40,80,150,300,500", efs, 32);
    ncl = parse_list("1,8", clients, 32);
    static const struct option lo[] = {{"ef", 1, 0, 'e'}, {"clients", 1, 0, 'c'}, {"count", 1, 0, 'n'},
                                       {"extra", 1, 0, 'x'}, {"server-pid", 1, 0, 'S'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h:p:f:K:T:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': g_host = optarg; break;
        case 'p': g_port = atoi(optarg); break;
        case 'f': g_file = optarg; break;
        case 'K': g_key = optarg; break;
        case 'T': tmin = atof(optarg); break;
        case 'e': nef = parse_list(optarg, efs, 32); break;
        case 'c': ncl = parse_list(optarg, clients, 32); break;
        case 'n': count = atoi(optarg); break;
        case 'x': extra = optarg; break;
        case 'S': spid = atoi(optarg); break;
        default: exit(2);
        }
    }
    if (!g_file)
        die("query: need -f FILE");
    struct dataset ds;
    ds_load(g_file, &ds);
    int failed = 0;
    for (int e = 0; e < nef; e++) {
        for (int ci = 0; ci < ncl; ci++) {
            int nc = clients[ci] < 1 ? 1 : clients[ci];
            struct qshared sh = {.ds = &ds, .ef = efs[e], .count = count, .tmin = tmin, .extra = extra};
            sh.recall = calloc(ds.nq, sizeof(double));
            struct qthread *ts = calloc((size_t)nc, sizeof(*ts));
            if (!sh.recall || !ts)
                die("out of memory");
            double cpu0 = proc_cpu_s(spid);
            sh.start = now_s();
            for (int i = 0; i < nc; i++) {
                ts[i].sh = &sh;
                if (pthread_create(&ts[i].th, NULL, query_worker, &ts[i]))
                    die("pthread_create failed");
            }
            double end = sh.start;
            size_t nlat = 0;
            for (int i = 0; i < nc; i++) {
                pthread_join(ts[i].th, NULL);
                if (ts[i].end > end)
                    end = ts[i].end;
                nlat += ts[i].nlat;
            }
            double cpu1 = proc_cpu_s(spid);
            double cpu_us = cpu0 >= 0 && cpu1 >= 0 && nlat ? (cpu1 - cpu0) / nlat * 1e6 : -1;
            double *lat = xmalloc(sizeof(double) * (nlat ? nlat : 1));
            size_t o = 0;
            for (int i = 0; i < nc; i++) {
                memcpy(lat + o, ts[i].lat, sizeof(double) * ts[i].nlat);
                o += ts[i].nlat;
                free(ts[i].lat);
            }
            qsort(lat, nlat, sizeof(double), cmp_double);
            double rsum = 0;
            for (uint32_t q = 0; q < ds.nq; q++)
                rsum += sh.recall[q];
            uint64_t errs = atomic_load(&sh.errors);
            printf("VECBENCH query key=%s ef=%d count=%d clients=%d queries=%zu secs=%.3f qps=%.1f "
                   "recall=%.4f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f server_cpu_us_per_query=%.1f errors=%llu\n",
                   g_key, efs[e], count, nc, nlat, end - sh.start, nlat / (end - sh.start), rsum / ds.nq,
                   pct(lat, nlat, 50) * 1e3, pct(lat, nlat, 99) * 1e3, nlat ? lat[nlat - 1] * 1e3 : 0, cpu_us,
                   (unsigned long long)errs);
            fflush(stdout);
            if (errs)
                failed = 1;
            free(lat);
            free(ts);
            free(sh.recall);
        }
    }
    if (failed)
        exit(1);
}

/* ------------------------------------------------------------ stall */

struct pinger {
    _Atomic int phase; /* 0 run, 1 stop */
    double *lat;
    size_t n, cap;
};

static void *ping_worker(void *arg)
{
    struct pinger *p = arg;
    struct conn cn;
    conn_open(&cn);
    const char *av[1] = {"PING"};
    while (!atomic_load(&p->phase)) {
        double t0 = now_s();
        cmd_append(&cn, 1, av, NULL);
        conn_flush(&cn);
        struct reply r;
        reply_read(&cn, &r);
        double t1 = now_s();
        if (r.type != '+')
            die("PING: unexpected reply");
        reply_free(&r);
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 65536;
            p->lat = xrealloc(p->lat, sizeof(double) * p->cap);
        }
        p->lat[p->n++] = t1 - t0;
    }
    conn_close(&cn);
    return NULL;
}

static void ping_stats(struct pinger *p, double *p99, double *mx)
{
    qsort(p->lat, p->n, sizeof(double), cmp_double);
    *p99 = pct(p->lat, p->n, 99) * 1e3;
    *mx = p->n ? p->lat[p->n - 1] * 1e3 : 0;
}

static void cmd_stall(int argc, char **argv)
{
    int ef = 5000, count = 1000, reps = 5;
    static const struct option lo[] = {{"ef", 1, 0, 'e'}, {"count", 1, 0, 'n'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h:p:f:K:R:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': g_host = optarg; break;
        case 'p': g_port = atoi(optarg); break;
        case 'f': g_file = optarg; break;
        case 'K': g_key = optarg; break;
        case 'R': reps = atoi(optarg); break;
        case 'e': ef = atoi(optarg); break;
        case 'n': count = atoi(optarg); break;
        default: exit(2);
        }
    }
    if (!g_file)
        die("stall: need -f FILE");
    if (reps < 1)
        reps = 1;
    struct dataset ds;
    ds_load(g_file, &ds);
    struct conn cn;
    conn_open(&cn);
    char efs[16], cnt[16];
    snprintf(efs, sizeof(efs), "%d", ef);
    snprintf(cnt, sizeof(cnt), "%d", count);
    double *big = xmalloc(sizeof(double) * (size_t)reps);
    size_t nres = 0;
    /* the loaded phase first, then the baseline for as long as it took */
    struct pinger loaded = {0};
    pthread_t th;
    if (pthread_create(&th, NULL, ping_worker, &loaded))
        die("pthread_create failed");
    usleep(200000);
    size_t before = loaded.n;
    double t0 = now_s();
    for (int i = 0; i < reps; i++) {
        uint32_t q = (uint32_t)i % ds.nq;
        const char *av[8] = {"VSIM", g_key, "FP32", (const char *)(ds.queries + (size_t)q * ds.dim),
                             "COUNT", cnt, "EF", efs};
        size_t lens[8] = {4, strlen(g_key), 4, (size_t)ds.dim * 4, 5, strlen(cnt), 2, strlen(efs)};
        double a = now_s();
        cmd_append(&cn, 8, av, lens);
        conn_flush(&cn);
        struct reply r;
        reply_read(&cn, &r);
        big[i] = now_s() - a;
        if (r.type != '*')
            die("big VSIM: %s", r.type == '-' ? r.str : "unexpected reply");
        nres = r.nel;
        reply_free(&r);
    }
    double t1 = now_s();
    atomic_store(&loaded.phase, 1);
    pthread_join(th, NULL);
    /* only the PINGs sent while the big queries ran (drop the warm-up) */
    memmove(loaded.lat, loaded.lat + before, sizeof(double) * (loaded.n - before));
    loaded.n -= before;
    struct pinger base = {0};
    if (pthread_create(&th, NULL, ping_worker, &base))
        die("pthread_create failed");
    usleep((useconds_t)((t1 - t0) * 1e6));
    atomic_store(&base.phase, 1);
    pthread_join(th, NULL);
    double bsum = 0, bmax = 0;
    for (int i = 0; i < reps; i++) {
        bsum += big[i];
        if (big[i] > bmax)
            bmax = big[i];
    }
    double lp99, lmax, bp99, bmx;
    size_t ln = loaded.n, bn = base.n;
    ping_stats(&loaded, &lp99, &lmax);
    ping_stats(&base, &bp99, &bmx);
    printf("VECBENCH stall key=%s ef=%d count=%d reps=%d results=%zu big_mean_ms=%.2f big_max_ms=%.2f "
           "pings_during=%zu ping_p99_ms=%.3f ping_max_ms=%.3f pings_baseline=%zu baseline_p99_ms=%.3f "
           "baseline_max_ms=%.3f\n",
           g_key, ef, count, reps, nres, bsum / reps * 1e3, bmax * 1e3, ln, lp99, lmax, bn, bp99, bmx);
    free(loaded.lat);
    free(base.lat);
    free(big);
    conn_close(&cn);
}

/* -------------------------------------------------------------- info */

static void cmd_info(int argc, char **argv)
{
    if (argc < 2)
        die("info FILE");
    struct dataset ds;
    ds_load(argv[1], &ds);
    double s1, sk;
    truth_means(&ds, &s1, &sk);
    printf("VECBENCH info n=%u dim=%u nq=%u k=%u clusters=%u sigma=%g seed=%llu latent=%u mean_top1_sim=%.4f "
           "mean_topk_sim=%.4f\n",
           ds.n, ds.dim, ds.nq, ds.k, ds.clusters, ds.sigma, (unsigned long long)ds.seed, ds.latent,
           s1, sk);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: vecbench gen|load|query|stall|info [options] (see bench/vecbench.c)\n");
        return 2;
    }
    const char *sub = argv[1];
    argc--;
    argv++;
    if (strcmp(sub, "gen") == 0)
        cmd_gen(argc, argv);
    else if (strcmp(sub, "load") == 0)
        cmd_load(argc, argv);
    else if (strcmp(sub, "query") == 0)
        cmd_query(argc, argv);
    else if (strcmp(sub, "stall") == 0)
        cmd_stall(argc, argv);
    else if (strcmp(sub, "info") == 0)
        cmd_info(argc, argv);
    else
        die("unknown subcommand %s", sub);
    return 0;
}
