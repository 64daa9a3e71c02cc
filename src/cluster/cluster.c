/* cluster.c - see cluster.h.
 *
 * The bus speaks Redis 7.0's cluster protocol byte for byte: a 2256-byte
 * header ("RCmb", lengths, epochs, the sender's slot bitmap ...) followed
 * by the message's data, all integers big-endian.  The layout is written
 * out below as offsets (put/get helpers), never as a packed struct, so
 * the compiler's padding cannot change it.  A message's length is checked
 * against what its type and counts say before anything in it is used.
 *
 * One thread runs the bus: an epoll loop over the listener and the links
 * (an outbound link to every known node, plus the inbound ones the others
 * opened), a cron every 100 ms (reconnects, pings, failure detection, the
 * cluster state), nodes.conf written when something changed.  All of it
 * under cl_mu, which a worker takes for a CLUSTER command or a routing
 * decision off the fast path. */
#include "cluster.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../net/client.h"
#include "../net/tls.h"
#include "../persist/prop.h"
#include "../persist/repl.h"
#include "../persist/replica.h"
#include "../proto/reply.h"
#include "../server.h"

int cluster_on;
_Atomic unsigned char cluster_slot_bits[CLUSTER_SLOTS];
atomic_int cluster_ok;

#define NAMELEN 40
#define IPLEN 46
#define HDR_LEN 2256
#define GOSSIP_LEN 104
#define SLOT_BYTES (CLUSTER_SLOTS / 8)

/* Node flags: Redis's values (they travel in the header and gossip). */
#define NF_MASTER 1
#define NF_SLAVE 2
#define NF_PFAIL 4
#define NF_FAIL 8
#define NF_MYSELF 16
#define NF_HANDSHAKE 32
#define NF_NOADDR 64
#define NF_MEET 128
#define NF_MIGRATE_TO 256
#define NF_NOFAILOVER 512

enum { T_PING, T_PONG, T_MEET, T_FAIL, T_PUBLISH, T_AUTH_REQ, T_AUTH_ACK, T_UPDATE, T_MFSTART, T_MODULE, T_PUBSHARD,
       T_COUNT };
static const char *const type_names[T_COUNT] = {"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack",
                                                "update", "mfstart", "module", "publishshard"};

#define MF0_PAUSED 1
#define MF0_FORCEACK 2
#define MF0_EXT_DATA 4

struct link;

struct freport {
    struct node *by;
    long long time;
};

struct node {
    char name[NAMELEN];
    int flags;
    uint64_t config_epoch;
    unsigned char slots[SLOT_BYTES];
    int numslots;
    struct node *master;
    long long ctime, ping_sent, pong_received, data_received, fail_time, voted_time;
    long long orphaned_time; /* a master with slots left without a working replica since (0: not) */
    long long repl_offset;
    char ip[IPLEN];
    char hostname[256];
    char human[256];          /* cluster-announce-human-nodename (Redis 7.2 extension) */
    char shard_id[NAMELEN];   /* a master's own, a replica's master's (Redis 7.2) */
    int ext72;                /* it sends Redis 7.2's ping extensions: it gets ours */
    int ext_seen;             /* a ping of its was read (until then it gets them too) */
    int port, pport, cport;
    struct link *link, *inbound;
    struct freport *reports;
    int nreports;
};

struct link {
    int fd;
    long long ctime;
    struct node *node; /* outbound: always; inbound: once the sender is known */
    int inbound;
    int connecting;
    unsigned char *rbuf;
    size_t rlen, rcap;
    char *sbuf;
    size_t slen, soff, scap;
    int out_armed;
    void *ssl;         /* tls-cluster: the link's TLS connection (net/tls.h) */
    int hs;            /* its handshake is not done yet */
    int hs_want_write; /* the handshake waits for the socket to be writable */
    struct link *next; /* all links */
};

/* ---------------------------------------------------------- cl_mu --- */
static pthread_mutex_t cl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct node **nodes;
static int nnodes, cap_nodes;
static struct node *myself;
static struct node *slot_owner[CLUSTER_SLOTS];
static struct node *migrating_to[CLUSTER_SLOTS], *importing_from[CLUSTER_SLOTS];
static unsigned char not_claiming[SLOT_BYTES]; /* the owner stopped claiming it (isSlotUnclaimed) */
static uint64_t current_epoch, last_vote_epoch;
static int state_ok; /* cluster_ok's value */
static int csize;    /* masters with slots */
static long long stats_sent[T_COUNT], stats_recv[T_COUNT];
static struct link *links;
static int todo_save, todo_state;
/* An epoch or a vote changed: nodes.conf must be on disk (fsync) before
 * anybody hears of it, as Redis's CLUSTER_TODO_FSYNC_CONFIG; other changes
 * are written without an fsync. */
static int todo_fsync;
static long long among_minority_ms, first_call_ms;
/* A replica's election (Redis's failover_auth_*): when it may ask, the
 * votes so far, whether it asked, the epoch it asked in; mf_force: CLUSTER
 * FAILOVER FORCE (masters vote although the master is not failed). */
static long long fo_time;
static int fo_count, fo_sent, fo_rank, mf_force;
static uint64_t fo_epoch;
static long long mf_end;
/* Manual failover, coordinated: the master pauses writes until mf_end
 * (mf_paused) and says so in its pings; the replica notes the master's
 * offset then (mf_master_off) and starts once it has it all. */
static int mf_paused;
static long long mf_master_off = -1;
void (*cluster_pause_writes)(int on);
void (*cluster_became_replica)(void);
void (*cluster_slots_left_shard)(const unsigned char *bits);
void (*cluster_deliver_publish)(int shard, const char *ch, size_t clen, const char *msg, size_t mlen);
/* CLUSTER FORGET: names not re-added for a minute. */
struct black {
    char name[NAMELEN];
    long long until;
};
static struct black *blacklist;
static int nblack;

static int epfd = -1, efd = -1;
static int fuzzing; /* cluster_fuzz_message: no file, no replication link, no hooks */
static int lfds[16], nlfd;
static pthread_t tid;
static atomic_int stopping;
static atomic_int started;
static int lock_fd = -1; /* nodes.conf's lock */
static char conf_path[4096];

static long long node_timeout(void)
{
    long long t = __atomic_load_n(&cfg.cluster_node_timeout, __ATOMIC_RELAXED);
    return t > 0 ? t : 15000;
}

static int bus_port(void)
{
    return cfg.cluster_port ? cfg.cluster_port : cfg.port + 10000;
}

/* The client port this node announces, and the plaintext one beside it
 * when the bus is TLS (tls-cluster: clients of the cluster are TLS, the
 * plaintext port travels as pport), as Redis. */
static int my_port(void)
{
    if (__atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED) && tls_cfg.port)
        return cfg.cluster_announce_tls_port ? cfg.cluster_announce_tls_port : tls_cfg.port;
    return cfg.cluster_announce_port ? cfg.cluster_announce_port : cfg.port;
}

static int my_pport(void)
{
    if (__atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED) && tls_cfg.port)
        return cfg.cluster_announce_port ? cfg.cluster_announce_port : cfg.port;
    return 0;
}

/* The port a client is told about a node: the plaintext one for a client
 * that is not on TLS while the cluster is (Redis's use_pport). */
static int req_pport; /* under cl_mu: the current request's client is plain */
static int port_for(const struct node *n)
{
    return req_pport && n->pport ? n->pport : n->port;
}

/* The port a replica dials for its master: the TLS one with
 * tls-replication, else the plaintext one. */
static int repl_port(const struct node *n)
{
    return __atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED) && !__atomic_load_n(&tls_cfg.replication, __ATOMIC_RELAXED) &&
                   n->pport
               ? n->pport
               : n->port;
}

static void wake(void)
{
    uint64_t one = 1;
    if (efd >= 0) {
        ssize_t w = write(efd, &one, sizeof(one));
        (void)w;
    }
}

/* ------------------------------------------------------ bits/bytes --- */
static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (56 - 8 * i));
}
static unsigned get16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}
static int bit_get(const unsigned char *bm, int i)
{
    return (bm[i >> 3] >> (i & 7)) & 1;
}
static void bit_set(unsigned char *bm, int i)
{
    bm[i >> 3] |= (unsigned char)(1 << (i & 7));
}
static void bit_clear(unsigned char *bm, int i)
{
    bm[i >> 3] &= (unsigned char)~(1 << (i & 7));
}

static void random_name(char out[NAMELEN])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[NAMELEN];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, r, sizeof(r)) : -1;
    if (fd >= 0)
        close(fd);
    for (int i = 0; i < NAMELEN; i++)
        out[i] = hex[(n == (ssize_t)sizeof(r) ? r[i] : (unsigned char)rand()) & 15];
}

static int valid_name(const char *s, size_t n)
{
    if (n != NAMELEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------- nodes --- */
static struct node *node_new(const char *name, int flags)
{
    struct node *n = hk_calloc(sizeof(*n));
    if (name)
        memcpy(n->name, name, NAMELEN);
    else
        random_name(n->name);
    n->flags = flags;
    n->ctime = time_ms();
    n->repl_offset = 0;
    random_name(n->shard_id);
    return n;
}

static void node_add(struct node *n)
{
    if (nnodes == cap_nodes) {
        cap_nodes = cap_nodes ? cap_nodes * 2 : 16;
        nodes = hk_realloc(nodes, sizeof(*nodes) * (size_t)cap_nodes);
    }
    nodes[nnodes++] = n;
}

static struct node *lookup(const char *name, size_t len)
{
    if (len != NAMELEN)
        return NULL;
    for (int i = 0; i < nnodes; i++)
        if (!memcmp(nodes[i]->name, name, NAMELEN))
            return nodes[i];
    return NULL;
}

static void link_free(struct link *l);

static int reports_count(struct node *n);

static void slot_bits_update(void);
static void send_published(void);
static unsigned long long keys_in_slot(int slot);

static void node_del_slots(struct node *n)
{
    for (int j = 0; j < CLUSTER_SLOTS; j++)
        if (slot_owner[j] == n) {
            slot_owner[j] = NULL;
            bit_clear(n->slots, j);
        }
    n->numslots = 0;
}

/* Remove n from everything and free it (its links close). */
static void node_del(struct node *n)
{
    for (int j = 0; j < CLUSTER_SLOTS; j++) {
        if (importing_from[j] == n)
            importing_from[j] = NULL;
        if (migrating_to[j] == n)
            migrating_to[j] = NULL;
        if (slot_owner[j] == n)
            slot_owner[j] = NULL;
    }
    for (int i = 0; i < nnodes; i++) {
        struct node *o = nodes[i];
        if (o->master == n)
            o->master = NULL;
        for (int k = 0; k < o->nreports; k++)
            if (o->reports[k].by == n) {
                o->reports[k] = o->reports[--o->nreports];
                k--;
            }
    }
    for (int i = 0; i < nnodes; i++)
        if (nodes[i] == n) {
            nodes[i] = nodes[--nnodes];
            break;
        }
    if (n->link)
        link_free(n->link);
    if (n->inbound)
        link_free(n->inbound);
    hk_free(n->reports);
    hk_free(n);
    slot_bits_update();
}

static void add_slot(struct node *n, int j)
{
    if (slot_owner[j] == n)
        return;
    if (slot_owner[j]) {
        bit_clear(slot_owner[j]->slots, j);
        slot_owner[j]->numslots--;
    }
    slot_owner[j] = n;
    bit_set(n->slots, j);
    n->numslots++;
}

static void del_slot(int j)
{
    struct node *n = slot_owner[j];
    if (!n)
        return;
    bit_clear(n->slots, j);
    n->numslots--;
    slot_owner[j] = NULL;
}

static void set_as_master(struct node *n)
{
    if (n->flags & NF_MASTER)
        return;
    if (n->master && n != myself)
        n->flags |= NF_MIGRATE_TO;
    n->master = NULL;
    n->flags &= ~NF_SLAVE;
    n->flags |= NF_MASTER;
    todo_save = todo_state = 1;
}

static struct node *my_master(void)
{
    return (myself->flags & NF_MASTER) ? myself : myself->master;
}

static int num_replicas(struct node *m)
{
    int k = 0;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i]->master == m)
            k++;
    return k;
}

/* The per-slot bits workers read (cluster.h).  A slot that leaves this
 * node's shard (it was its own or its master's) ends the shard-channel
 * subscriptions in it. */
static void slot_bits_range(int from, int to)
{
    struct node *mm = myself ? myself->master : NULL;
    static unsigned char left[SLOT_BYTES];
    int nleft = 0;
    for (int j = from; j <= to; j++) {
        unsigned char old = atomic_load_explicit(&cluster_slot_bits[j], memory_order_relaxed);
        unsigned char b = 0;
        if (myself && slot_owner[j] == myself && (myself->flags & NF_MASTER))
            b |= CSB_MINE;
        if (mm && slot_owner[j] == mm)
            b |= CSB_MASTER_MINE;
        if (migrating_to[j])
            b |= CSB_MIGRATING;
        if (importing_from[j])
            b |= CSB_IMPORTING;
        atomic_store_explicit(&cluster_slot_bits[j], b, memory_order_relaxed);
        if ((old & (CSB_MINE | CSB_MASTER_MINE)) && !(b & (CSB_MINE | CSB_MASTER_MINE))) {
            bit_set(left, j);
            nleft++;
        }
    }
    if (nleft && cluster_slots_left_shard && atomic_load(&started) && !fuzzing)
        cluster_slots_left_shard(left);
    if (nleft)
        memset(left, 0, sizeof(left));
}

static void slot_bits_update(void)
{
    slot_bits_range(0, CLUSTER_SLOTS - 1);
}

/* ------------------------------------------------- failure reports --- */
static int reports_count(struct node *n)
{
    long long maxage = node_timeout() * 2, now = time_ms();
    for (int k = 0; k < n->nreports; k++)
        if (now - n->reports[k].time > maxage) {
            n->reports[k] = n->reports[--n->nreports];
            k--;
        }
    return n->nreports;
}

static int report_add(struct node *n, struct node *by)
{
    for (int k = 0; k < n->nreports; k++)
        if (n->reports[k].by == by) {
            n->reports[k].time = time_ms();
            return 0;
        }
    n->reports = hk_realloc(n->reports, sizeof(*n->reports) * (size_t)(n->nreports + 1));
    n->reports[n->nreports].by = by;
    n->reports[n->nreports].time = time_ms();
    n->nreports++;
    return 1;
}

static void report_del(struct node *n, struct node *by)
{
    for (int k = 0; k < n->nreports; k++)
        if (n->reports[k].by == by) {
            n->reports[k] = n->reports[--n->nreports];
            return;
        }
}

/* ------------------------------------------------------ nodes.conf --- */
static void flags_text(char *out, size_t cap, int f)
{
    static const struct {
        int f;
        const char *s;
    } t[] = {{NF_MYSELF, "myself"}, {NF_MASTER, "master"},       {NF_SLAVE, "slave"},   {NF_PFAIL, "fail?"},
             {NF_FAIL, "fail"},     {NF_HANDSHAKE, "handshake"}, {NF_NOADDR, "noaddr"}, {NF_NOFAILOVER, "nofailover"}};
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (f & t[i].f)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "," : "", t[i].s);
    if (!n)
        snprintf(out, cap, "noflags");
}

struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = hk_realloc(b->p, b->cap);
    }
}

/* Slots in MIGRATING / IMPORTING state (set by nodes_text for node_line). */
static int nmoving = 1;

/* One CLUSTER NODES line (and nodes.conf line) for n. */
static void node_line(struct sbuf *b, struct node *n, int conf)
{
    char fl[128];
    flags_text(fl, sizeof(fl), n->flags);
    sb_add(b, "%.40s %s:%d@%d", n->name, n->ip, conf ? n->port : port_for(n), n->cport);
    if (conf) /* Redis 7.2's nodes.conf: hostname, then aux fields */
        sb_add(b, ",%s,shard-id=%.40s", n->hostname, n->shard_id);
    else if (n->hostname[0])
        sb_add(b, ",%s", n->hostname);
    uint64_t ep = n->config_epoch;
    if ((n->flags & NF_SLAVE) && n->master)
        ep = n->master->config_epoch;
    sb_add(b, " %s %.40s %lld %lld %llu %s", fl, n->master ? n->master->name : "-", n->ping_sent, n->pong_received,
           (unsigned long long)ep, (n->link || (n->flags & NF_MYSELF)) ? "connected" : "disconnected");
    for (int j = 0; j < CLUSTER_SLOTS;) {
        if (!(j & 7) && !n->slots[j >> 3]) { /* 8 slots not its own */
            j += 8;
            continue;
        }
        if (!bit_get(n->slots, j)) {
            j++;
            continue;
        }
        int s = j;
        while (j + 1 < CLUSTER_SLOTS && ((j + 1) & 7) == 0 && j + 8 < CLUSTER_SLOTS && n->slots[(j + 1) >> 3] == 0xff)
            j += 8; /* 8 slots its own */
        while (j + 1 < CLUSTER_SLOTS && bit_get(n->slots, j + 1))
            j++;
        if (s == j)
            sb_add(b, " %d", s);
        else
            sb_add(b, " %d-%d", s, j);
        j++;
    }
    if (n == myself && nmoving)
        for (int j = 0; j < CLUSTER_SLOTS; j++) {
            if (migrating_to[j])
                sb_add(b, " [%d->-%.40s]", j, migrating_to[j]->name);
            else if (importing_from[j])
                sb_add(b, " [%d-<-%.40s]", j, importing_from[j]->name);
        }
    sb_add(b, "\n");
}

static void nodes_text(struct sbuf *b, int conf)
{
    nmoving = 0;
    for (int j = 0; j < CLUSTER_SLOTS && !nmoving; j++)
        nmoving = migrating_to[j] || importing_from[j];
    for (int i = 0; i < nnodes; i++) {
        if (nodes[i]->flags & NF_HANDSHAKE)
            continue;
        node_line(b, nodes[i], conf);
    }
}

/* nodes.conf, atomically (a temp file, rename; fsync'd first when an
 * epoch or a vote changed, todo_fsync).  0 / -1. */
static int save_config(void)
{
    int do_fsync = todo_fsync;
    todo_fsync = 0;
    if (fuzzing)
        return 0;
    struct sbuf b = {0};
    nodes_text(&b, 1);
    sb_add(&b, "vars currentEpoch %llu lastVoteEpoch %llu\n", (unsigned long long)current_epoch,
           (unsigned long long)last_vote_epoch);
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", conf_path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0;
    size_t off = 0;
    while (ok && off < b.len) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w <= 0)
            ok = 0;
        else
            off += (size_t)w;
    }
    if (ok && do_fsync && fsync(fd) < 0)
        ok = 0;
    if (fd >= 0)
        close(fd);
    if (ok && rename(tmp, conf_path) < 0)
        ok = 0;
    if (!ok) {
        log_msg(LL_WARNING, "Could not save the cluster configuration %s: %s", conf_path, strerror(errno));
        unlink(tmp);
    }
    hk_free(b.p);
    return ok ? 0 : -1;
}

/* "ip:port@cport[,hostname]" */
static int parse_addr(const char *s, struct node *n)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    char *comma = strchr(buf, ',');
    if (comma) {
        *comma = 0;
        char *h = comma + 1;
        char *aux = strchr(h, ',');
        if (aux)
            *aux++ = 0;
        snprintf(n->hostname, sizeof(n->hostname), "%s", h);
        /* Redis 7.2's aux fields: shard-id kept, the others ignored. */
        for (char *save = NULL, *t = aux ? strtok_r(aux, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            if (!strncmp(t, "shard-id=", 9) && valid_name(t + 9, strlen(t + 9)))
                memcpy(n->shard_id, t + 9, NAMELEN);
    }
    char *at = strchr(buf, '@');
    char *colon = strrchr(buf, ':');
    if (!colon || (at && at < colon))
        return -1;
    *colon = 0;
    if (at)
        *at = 0;
    if (strlen(buf) >= IPLEN)
        return -1;
    snprintf(n->ip, sizeof(n->ip), "%s", buf);
    n->port = atoi(colon + 1);
    n->cport = at ? atoi(at + 1) : n->port + 10000;
    return 0;
}

static int parse_flags(const char *s)
{
    int f = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "myself"))
            f |= NF_MYSELF;
        else if (!strcmp(t, "master"))
            f |= NF_MASTER;
        else if (!strcmp(t, "slave"))
            f |= NF_SLAVE;
        else if (!strcmp(t, "fail?"))
            f |= NF_PFAIL;
        else if (!strcmp(t, "fail"))
            f |= NF_FAIL;
        else if (!strcmp(t, "handshake"))
            f |= NF_HANDSHAKE;
        else if (!strcmp(t, "noaddr"))
            f |= NF_NOADDR;
        else if (!strcmp(t, "nofailover"))
            f |= NF_NOFAILOVER;
    }
    return f;
}

/* Load nodes.conf: 1 loaded, 0 no file (or empty), -1 broken (err). */
static int load_config(char *err, size_t errlen)
{
    FILE *f = fopen(conf_path, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0, any = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        if (!len)
            continue;
        char *argv[16400 / 2 + 16];
        int argc = 0;
        for (char *save = NULL, *t = strtok_r(line, " ", &save); t && argc < (int)(sizeof(argv) / sizeof(argv[0]));
             t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
        if (argc == 0)
            continue;
        if (!strcmp(argv[0], "vars")) {
            for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcasecmp(argv[i], "currentEpoch"))
                    current_epoch = strtoull(argv[i + 1], NULL, 10);
                else if (!strcasecmp(argv[i], "lastVoteEpoch"))
                    last_vote_epoch = strtoull(argv[i + 1], NULL, 10);
            }
            continue;
        }
        if (argc < 8 || !valid_name(argv[0], strlen(argv[0]))) {
            snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (line %d).", conf_path,
                     lineno);
            goto bad;
        }
        any = 1;
        struct node *n = lookup(argv[0], NAMELEN);
        if (!n) {
            n = node_new(argv[0], 0);
            node_add(n);
        }
        if (parse_addr(argv[1], n) < 0) {
            snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (line %d).", conf_path,
                     lineno);
            goto bad;
        }
        n->flags = parse_flags(argv[2]);
        if (n->flags & NF_MYSELF) {
            if (myself) {
                snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (two myself).",
                         conf_path);
                goto bad;
            }
            myself = n;
        }
        if (n->flags & NF_NOADDR)
            n->ip[0] = 0;
        n->flags &= ~(NF_HANDSHAKE | NF_MEET);
        if (strcmp(argv[3], "-")) {
            struct node *m = lookup(argv[3], strlen(argv[3]));
            if (!m && valid_name(argv[3], strlen(argv[3]))) {
                m = node_new(argv[3], 0);
                node_add(m);
            }
            n->master = m;
        }
        if (atoll(argv[4]))
            n->ping_sent = time_ms();
        if (atoll(argv[5]))
            n->pong_received = time_ms();
        n->config_epoch = strtoull(argv[6], NULL, 10);
        for (int i = 8; i < argc; i++) {
            char *a = argv[i];
            if (a[0] == '[') {
                int slot = atoi(a + 1);
                char *dir = strstr(a, "->-");
                char *dir2 = strstr(a, "-<-");
                char *nm = dir ? dir + 3 : dir2 ? dir2 + 3 : NULL;
                if (!nm || slot < 0 || slot >= CLUSTER_SLOTS)
                    continue;
                size_t nl = strlen(nm);
                if (nl && nm[nl - 1] == ']')
                    nl--;
                struct node *o = lookup(nm, nl);
                if (!o && valid_name(nm, nl)) {
                    o = node_new(nm, 0);
                    node_add(o);
                }
                if (o) {
                    if (dir)
                        migrating_to[slot] = o;
                    else
                        importing_from[slot] = o;
                }
                continue;
            }
            char *dash = strchr(a, '-');
            long s = strtol(a, NULL, 10), e = dash ? strtol(dash + 1, NULL, 10) : s;
            if (s < 0 || e >= CLUSTER_SLOTS || s > e) {
                snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (line %d).",
                         conf_path, lineno);
                goto bad;
            }
            for (long j = s; j <= e; j++)
                add_slot(n, (int)j);
        }
    }
    free(line);
    fclose(f);
    if (!any)
        return 0;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i]->master)
            nodes[i]->master->flags |= NF_MIGRATE_TO;
    if (!myself) {
        snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (no myself).", conf_path);
        return -1;
    }
    return 1;
bad:
    free(line);
    fclose(f);
    return -1;
}

/* ------------------------------------------------------------ links --- */
static void ep_mod(struct link *l)
{
    struct epoll_event ev = {.events = EPOLLIN | (l->out_armed ? EPOLLOUT : 0), .data.ptr = l};
    epoll_ctl(epfd, EPOLL_CTL_MOD, l->fd, &ev);
}

static struct link *link_new(int fd, int inbound)
{
    struct link *l = hk_calloc(sizeof(*l));
    l->fd = fd;
    l->inbound = inbound;
    l->ctime = time_ms();
    l->next = links;
    links = l;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    return l;
}

size_t cluster_links_info(long *conns)
{
    long n = 0;
    size_t mem = 0;
    if (cluster_on) {
        pthread_mutex_lock(&cl_mu);
        for (struct link *l = links; l; l = l->next) {
            n++;
            mem += sizeof(*l) + l->rcap + l->scap;
        }
        pthread_mutex_unlock(&cl_mu);
    }
    *conns = n;
    return mem;
}

static void link_free(struct link *l)
{
    for (struct link **pp = &links; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    if (l->node) {
        if (l->node->link == l)
            l->node->link = NULL;
        if (l->node->inbound == l)
            l->node->inbound = NULL;
    }
    epoll_ctl(epfd, EPOLL_CTL_DEL, l->fd, NULL);
    if (l->ssl)
        tls_conn_free(l->ssl, !l->hs);
    close(l->fd);
    hk_free(l->rbuf);
    hk_free(l->sbuf);
    hk_free(l);
}

/* The socket's I/O, plain or TLS, as send(2)/recv(2) with MSG_DONTWAIT. */
static ssize_t link_io(struct link *l, void *buf, size_t n, int out)
{
    if (!l->ssl)
        return out ? send(l->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(l->fd, buf, n, MSG_DONTWAIT);
    int want = 0;
    errno = 0;
    ssize_t r = out ? tls_conn_write(l->ssl, buf, n, &want) : tls_conn_read(l->ssl, buf, n, &want);
    if (r > 0)
        return r;
    if (r == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (!errno)
        errno = ECONNRESET;
    return out ? -1 : 0;
}

static void link_arm(struct link *l)
{
    int want = l->slen > 0 || l->connecting || l->hs_want_write;
    if (want != l->out_armed) {
        l->out_armed = want;
        ep_mod(l);
    }
}

static void link_flush(struct link *l)
{
    while (l->soff < l->slen && !l->connecting && !l->hs) {
        ssize_t w = link_io(l, l->sbuf + l->soff, l->slen - l->soff, 1);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0) {
            l->slen = l->soff = 0; /* the read side sees the error and frees it */
            shutdown(l->fd, SHUT_RDWR);
            return;
        }
        l->soff += (size_t)w;
    }
    if (l->soff == l->slen)
        l->soff = l->slen = 0;
    link_arm(l);
}

/* tls-cluster: a link starts TLS once its TCP connection is up (the
 * dialling side as the client). */
static void link_tls_start(struct link *l)
{
    if (!__atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED))
        return;
    l->ssl = tls_configure(0) == 0 ? (l->inbound ? tls_conn_new(l->fd) : tls_conn_new_client(l->fd)) : NULL;
    l->hs = 1;
}

/* One step of a link's TLS handshake: 1 done, 0 not yet, -1 the link was
 * freed. */
static int link_handshake(struct link *l)
{
    char err[256];
    int want = 0;
    if (!l->ssl) {
        log_msg(LL_WARNING, "Cluster bus: TLS is not configured (tls-cluster yes needs tls-cert-file and a CA)");
        link_free(l);
        return -1;
    }
    int r = l->inbound ? tls_conn_accept(l->ssl, &want, err, sizeof(err))
                       : tls_conn_connect(l->ssl, &want, err, sizeof(err));
    if (r < 0) {
        log_msg(LL_VERBOSE, "Cluster bus TLS handshake failed: %s", err);
        link_free(l);
        return -1;
    }
    l->hs_want_write = r == 0 && want == TLS_WANT_WRITE;
    if (r == 1) {
        l->hs = 0;
        link_flush(l);
    } else {
        link_arm(l);
    }
    return r;
}

static void link_send(struct link *l, const unsigned char *p, size_t n, int type)
{
    if (!l)
        return;
    long long limit = __atomic_load_n(&cfg.cluster_link_sendbuf_limit, __ATOMIC_RELAXED);
    if (limit > 0 && (long long)(l->slen - l->soff + n) > limit && l->slen > l->soff)
        return; /* over cluster-link-sendbuf-limit: dropped (the link is freed at the next cron) */
    if (l->slen + n > l->scap) {
        l->scap = (l->slen + n) * 2;
        l->sbuf = hk_realloc(l->sbuf, l->scap);
    }
    memcpy(l->sbuf + l->slen, p, n);
    l->slen += n;
    if (type >= 0 && type < T_COUNT)
        stats_sent[type]++;
    link_flush(l);
}

/* ----------------------------------------------------------- build --- */
static uint64_t my_offset(void)
{
    int have = 0;
    long long o = repl_offset(&have);
    return o > 0 ? (uint64_t)o : 0;
}

/* The header every message starts with. */
static void build_hdr(unsigned char *h, int type, uint32_t totlen)
{
    struct node *m = my_master();
    memset(h, 0, HDR_LEN);
    memcpy(h, "RCmb", 4);
    put32(h + 4, totlen);
    put16(h + 8, 1);
    put16(h + 10, (unsigned)my_port());
    put16(h + 12, (unsigned)type);
    put64(h + 16, current_epoch);
    put64(h + 24, m ? m->config_epoch : myself->config_epoch);
    put64(h + 32, my_offset());
    memcpy(h + 40, myself->name, NAMELEN);
    if (m)
        memcpy(h + 80, m->slots, SLOT_BYTES);
    if (myself->master)
        memcpy(h + 2128, myself->master->name, NAMELEN);
    const char *aip = cfg.cluster_announce_ip;
    if (aip && *aip)
        snprintf((char *)h + 2168, IPLEN, "%s", aip);
    put16(h + 2246, (unsigned)my_pport());
    int cport = cfg.cluster_announce_bus_port ? cfg.cluster_announce_bus_port : bus_port();
    put16(h + 2248, (unsigned)cport);
    put16(h + 2250, (unsigned)(myself->flags & 0xffff));
    h[2252] = state_ok ? 0 : 1;
    if (mf_paused)
        h[2253] |= MF0_PAUSED;
}

/* One 104-byte gossip entry about n. */
static void put_gossip(unsigned char *e, const struct node *n)
{
    memcpy(e, n->name, NAMELEN);
    put32(e + 40, (uint32_t)(n->ping_sent / 1000));
    put32(e + 44, (uint32_t)(n->pong_received / 1000));
    snprintf((char *)e + 48, IPLEN, "%s", n->ip);
    put16(e + 94, (unsigned)n->port);
    put16(e + 96, (unsigned)n->cport);
    put16(e + 98, (unsigned)(n->flags & 0xffff));
    put16(e + 100, (unsigned)n->pport);
}

static void send_ping(struct link *l, int type)
{
    if (!l)
        return;
    int fresh = nnodes - 2, wanted = nnodes / 10;
    if (wanted < 3)
        wanted = 3;
    if (wanted > fresh)
        wanted = fresh;
    int pfail = 0;
    for (int i = 0; i < nnodes; i++)
        if ((nodes[i]->flags & NF_PFAIL) && !(nodes[i]->flags & (NF_HANDSHAKE | NF_NOADDR)))
            pfail++;
    int maxg = (wanted > 0 ? wanted : 0) + pfail;
    const char *host = cfg.cluster_announce_hostname;
    const char *human = cfg.cluster_announce_human_nodename;
    size_t hl = host && *host ? strlen(host) : 0;
    size_t nl = human && *human ? strlen(human) : 0;
    /* Redis 7.2's extensions go to the nodes that send them (a 7.0 node
     * logs a warning for each one it does not know). */
    int v72 = l->node && (l->node->ext72 || !l->node->ext_seen);
    int nforgot = 0;
    if (v72) {
        long long now0 = time_ms();
        for (int i = 0; i < nblack; i++)
            nforgot += blacklist[i].until > now0;
    }
    size_t extlen = (hl ? 8 + ((hl + 1 + 7) / 8) * 8 : 0) +
                    (v72 ? (nl ? 8 + ((nl + 1 + 7) / 8) * 8 : 0) + (size_t)nforgot * (8 + NAMELEN + 8) +
                               8 + NAMELEN : 0);
    size_t cap = HDR_LEN + (size_t)maxg * GOSSIP_LEN + extlen;
    unsigned char *buf = hk_calloc(cap);
    unsigned char *g = buf + HDR_LEN;
    int count = 0;
    struct node **added = hk_malloc(sizeof(*added) * (size_t)(maxg + 1));
    long long now = time_ms();
    for (int tries = wanted * 3; tries > 0 && count < wanted && nnodes > 0; tries--) {
        struct node *n = nodes[rand() % nnodes];
        if (n == myself || (n->flags & (NF_PFAIL | NF_HANDSHAKE | NF_NOADDR)) || (!n->link && n->numslots == 0))
            continue;
        int dup = 0;
        for (int k = 0; k < count; k++)
            dup |= added[k] == n;
        if (dup)
            continue;
        added[count] = n;
        put_gossip(g + (size_t)count * GOSSIP_LEN, n);
        count++;
    }
    for (int i = 0; i < nnodes && count < maxg; i++) {
        struct node *n = nodes[i];
        if (!(n->flags & NF_PFAIL) || (n->flags & (NF_HANDSHAKE | NF_NOADDR)))
            continue;
        put_gossip(g + (size_t)count * GOSSIP_LEN, n);
        count++;
    }
    hk_free(added);
    size_t tot = HDR_LEN + (size_t)count * GOSSIP_LEN;
    build_hdr(buf, type, 0);
    unsigned next = 0;
    if (hl) {
        size_t len = 8 + ((hl + 1 + 7) / 8) * 8;
        put32(buf + tot, (uint32_t)len);
        put16(buf + tot + 4, 0); /* hostname */
        memcpy(buf + tot + 8, host, hl);
        tot += len;
        next++;
    }
    if (v72) {
        if (nl) {
            size_t len = 8 + ((nl + 1 + 7) / 8) * 8;
            put32(buf + tot, (uint32_t)len);
            put16(buf + tot + 4, 1); /* human node name */
            memcpy(buf + tot + 8, human, nl);
            tot += len;
            next++;
        }
        for (int i = 0, k = 0; i < nblack && k < nforgot; i++) {
            if (blacklist[i].until <= now)
                continue;
            put32(buf + tot, 8 + NAMELEN + 8);
            put16(buf + tot + 4, 2); /* forgotten node, its remaining ttl */
            memcpy(buf + tot + 8, blacklist[i].name, NAMELEN);
            put64(buf + tot + 8 + NAMELEN, (uint64_t)((blacklist[i].until - now) / 1000));
            tot += 8 + NAMELEN + 8;
            next++;
            k++;
        }
        put32(buf + tot, 8 + NAMELEN);
        put16(buf + tot + 4, 3); /* shard id */
        memcpy(buf + tot + 8, myself->shard_id, NAMELEN);
        tot += 8 + NAMELEN;
        next++;
    }
    if (next) {
        put16(buf + 2214, next);
        buf[2253] |= MF0_EXT_DATA;
    }
    put32(buf + 4, (uint32_t)tot);
    put16(buf + 14, (unsigned)count);
    if (l->node && type == T_PING)
        l->node->ping_sent = now;
    link_send(l, buf, tot, type);
    hk_free(buf);
}

static void broadcast(const unsigned char *m, size_t n, int type)
{
    for (int i = 0; i < nnodes; i++) {
        struct node *x = nodes[i];
        if (x == myself || !x->link || (x->flags & (NF_HANDSHAKE | NF_NOADDR)))
            continue;
        link_send(x->link, m, n, type);
    }
}

static void send_fail(struct node *about)
{
    unsigned char buf[HDR_LEN + NAMELEN];
    build_hdr(buf, T_FAIL, sizeof(buf));
    memcpy(buf + HDR_LEN, about->name, NAMELEN);
    broadcast(buf, sizeof(buf), T_FAIL);
}

static void send_update(struct link *l, struct node *n)
{
    if (!l)
        return;
    size_t tot = HDR_LEN + 8 + NAMELEN + SLOT_BYTES;
    unsigned char *buf = hk_calloc(tot);
    build_hdr(buf, T_UPDATE, (uint32_t)tot);
    put64(buf + HDR_LEN, n->config_epoch);
    memcpy(buf + HDR_LEN + 8, n->name, NAMELEN);
    memcpy(buf + HDR_LEN + 8 + NAMELEN, n->slots, SLOT_BYTES);
    link_send(l, buf, tot, T_UPDATE);
    hk_free(buf);
}

/* ----------------------------------------------------------- state --- */
static void update_state(void)
{
    long long now = time_ms();
    if (!first_call_ms)
        first_call_ms = now;
    /* A master that just started waits a little for the others to find
     * it again before it calls the cluster ok (Redis's 2 s). */
    if ((myself->flags & NF_MASTER) && !state_ok && now - first_call_ms < 2000)
        return;
    int ok = 1;
    if (__atomic_load_n(&cfg.cluster_require_full_coverage, __ATOMIC_RELAXED))
        for (int j = 0; j < CLUSTER_SLOTS; j++)
            if (!slot_owner[j] || (slot_owner[j]->flags & NF_FAIL)) {
                ok = 0;
                break;
            }
    int size = 0, reachable = 0;
    for (int i = 0; i < nnodes; i++) {
        struct node *n = nodes[i];
        if ((n->flags & NF_MASTER) && n->numslots) {
            size++;
            if (!(n->flags & (NF_FAIL | NF_PFAIL)))
                reachable++;
        }
    }
    csize = size;
    if (reachable < size / 2 + 1) {
        ok = 0;
        among_minority_ms = now;
    }
    if (ok != state_ok) {
        long long rejoin = node_timeout();
        if (rejoin > 5000)
            rejoin = 5000;
        if (rejoin < 500)
            rejoin = 500;
        if (ok && (myself->flags & NF_MASTER) && now - among_minority_ms < rejoin)
            return;
        state_ok = ok;
        atomic_store(&cluster_ok, ok);
        log_msg(LL_NOTICE, "Cluster state changed: %s", ok ? "ok" : "fail");
    }
}

static void mark_failing_if_needed(struct node *n)
{
    int quorum = csize / 2 + 1;
    if (!(n->flags & NF_PFAIL) || (n->flags & NF_FAIL))
        return;
    int failures = reports_count(n);
    if (myself->flags & NF_MASTER)
        failures++;
    if (failures < quorum)
        return;
    log_msg(LL_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    n->flags &= ~NF_PFAIL;
    n->flags |= NF_FAIL;
    n->fail_time = time_ms();
    send_fail(n);
    todo_save = todo_state = 1;
}

static void clear_failure_if_needed(struct node *n)
{
    long long now = time_ms();
    if ((n->flags & NF_SLAVE) || n->numslots == 0) {
        log_msg(LL_NOTICE, "Clear FAIL state for node %.40s: %s is reachable again.", n->name,
                (n->flags & NF_SLAVE) ? "replica" : "master without slots");
        n->flags &= ~NF_FAIL;
        todo_save = todo_state = 1;
    }
    if ((n->flags & NF_MASTER) && n->numslots && now - n->fail_time > node_timeout() * 2) {
        log_msg(LL_NOTICE, "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots "
                           "after some time.",
                n->name);
        n->flags &= ~NF_FAIL;
        todo_save = todo_state = 1;
    }
}

/* This node follows m (CLUSTER REPLICATE, or its slots went to m). */
static void set_my_master(struct node *m)
{
    if (myself->flags & NF_MASTER) {
        myself->flags &= ~(NF_MASTER | NF_MIGRATE_TO);
        myself->flags |= NF_SLAVE;
        for (int j = 0; j < CLUSTER_SLOTS; j++) {
            migrating_to[j] = importing_from[j] = NULL;
        }
    }
    int was_master = !(myself->flags & NF_SLAVE) || !myself->master;
    myself->master = m;
    m->flags |= NF_MIGRATE_TO;
    memcpy(myself->shard_id, m->shard_id, NAMELEN);
    if (m->ip[0] && m->port && !fuzzing)
        replica_set_master(m->ip, repl_port(m));
    if (was_master && cluster_became_replica && !fuzzing)
        cluster_became_replica();
    todo_save = todo_state = 1;
    slot_bits_update();
}

/* The keys of a slot this master lost to a newer owner (it was failed
 * over while partitioned, say): deleted, each fed as DEL to the AOF and
 * the replicas, under the slot's lock (delKeysInSlot). */
static void del_keys_in_slot(int slot)
{
    unsigned long long n = 0;
    spin_lock(&ks.locks[slot]);
    for (;;) {
        struct table *t = ks.dbs[0] ? ks.dbs[0]->t[slot] : NULL;
        if (!t || !t->used)
            break;
        uint32_t i = 0;
        while (i < t->cap && !table_full(t, i))
            i++;
        if (i == t->cap)
            break;
        struct entry *e = table_get(t, i);
        size_t kl = entry_klen(e);
        char *key = hk_malloc(kl ? kl : 1);
        memcpy(key, entry_key(e), kl);
        db_del(0, (unsigned)slot, key, kl);
        const char *av[2] = {"DEL", key};
        size_t al[2] = {3, kl};
        prop_feed(0, 2, av, al);
        hk_free(key);
        n++;
    }
    spin_unlock(&ks.locks[slot]);
    if (n)
        log_msg(LL_NOTICE, "Deleted %llu keys from slot %d: it is served by another node now.", n, slot);
}

static void update_slots_with(struct node *sender, uint64_t epoch, const unsigned char *slots)
{
    static unsigned char dirty[SLOT_BYTES];
    int ndirty = 0;
    if (sender == myself)
        return;
    struct node *cur = my_master(), *newmaster = NULL;
    int moved_ours = 0, sender_slots = 0;
    for (int j = 0; j < CLUSTER_SLOTS; j++) {
        if (bit_get(slots, j)) {
            sender_slots++;
            if (slot_owner[j] == sender) {
                bit_clear(not_claiming, j);
                continue;
            }
            if (importing_from[j])
                continue;
            if (!slot_owner[j] || bit_get(not_claiming, j) || slot_owner[j]->config_epoch < epoch) {
                if (slot_owner[j] == myself && (myself->flags & NF_MASTER) && keys_in_slot(j)) {
                    bit_set(dirty, j);
                    ndirty++;
                }
                if (slot_owner[j] == cur && cur) {
                    newmaster = sender;
                    moved_ours++;
                }
                del_slot(j);
                add_slot(sender, j);
                bit_clear(not_claiming, j);
                todo_save = todo_state = 1;
            }
        } else if (slot_owner[j] == sender) {
            bit_set(not_claiming, j);
        }
    }
    if (newmaster && cur && cur->numslots == 0 &&
        (__atomic_load_n(&cfg.cluster_allow_replica_migration, __ATOMIC_RELAXED) || sender_slots == moved_ours)) {
        log_msg(LL_NOTICE, "Configuration change detected. Reconfiguring myself as a replica of %.40s", sender->name);
        set_my_master(sender); /* the full sync replaces the data */
    } else if (ndirty) {
        slot_bits_update(); /* no longer ours: nobody writes there now */
        for (int j = 0; j < CLUSTER_SLOTS; j++)
            if (bit_get(dirty, j))
                del_keys_in_slot(j);
    }
    memset(dirty, 0, sizeof(dirty));
    slot_bits_update();
}

/* --------------------------------------------------------- process --- */
static int ip_of_peer(int fd, char *out, int local)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    if ((local ? getsockname(fd, (struct sockaddr *)&sa, &sl) : getpeername(fd, (struct sockaddr *)&sa, &sl)) < 0)
        return -1;
    if (sa.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, out, IPLEN);
    else if (sa.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&sa;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
            inet_ntop(AF_INET, (char *)&s6->sin6_addr + 12, out, IPLEN);
        else
            inet_ntop(AF_INET6, &s6->sin6_addr, out, IPLEN);
    } else
        return -1;
    return 0;
}

/* The sender's IP: the one it announces, else its socket's peer.  -1 when
 * neither is known: the peer may have closed the link before we read what it
 * sent (a node stopped with SIGSTOP wakes to a backlog of messages on links
 * its peers have since dropped), and getpeername() then fails. */
static int sender_ip(struct link *l, const unsigned char *h, char *out)
{
    if (h[2168]) {
        memcpy(out, h + 2168, IPLEN);
        out[IPLEN - 1] = 0;
        return 0;
    }
    return ip_of_peer(l->fd, out, 0);
}

static int update_address(struct node *n, struct link *l, const unsigned char *h)
{
    char ip[IPLEN];
    int port = (int)get16(h + 10), cport = (int)get16(h + 2248), pport = (int)get16(h + 2246);
    if (l == n->link || n == myself)
        return 0;
    /* An unknown address is no new address: taking "" would point our link
     * at nowhere, and the node would look failing to us for good. */
    if (sender_ip(l, h, ip) < 0)
        return 0;
    if (!strcmp(ip, n->ip) && n->port == port && n->cport == cport && n->pport == pport)
        return 0;
    snprintf(n->ip, sizeof(n->ip), "%s", ip);
    n->port = port;
    n->cport = cport;
    n->pport = pport;
    if (n->link)
        link_free(n->link);
    n->flags &= ~NF_NOADDR;
    log_msg(LL_NOTICE, "Address updated for node %.40s, now %s:%d", n->name, n->ip, n->port);
    if ((myself->flags & NF_SLAVE) && myself->master == n && !fuzzing)
        replica_set_master(n->ip, repl_port(n));
    return 1;
}

static int blacklisted(const char *name)
{
    long long now = time_ms();
    for (int i = 0; i < nblack; i++) {
        if (blacklist[i].until < now) {
            blacklist[i] = blacklist[--nblack];
            i--;
            continue;
        }
        if (!memcmp(blacklist[i].name, name, NAMELEN))
            return 1;
    }
    return 0;
}

static void process_gossip(const unsigned char *h, int count, struct node *sender)
{
    long long now = time_ms();
    for (int i = 0; i < count; i++) {
        const unsigned char *g = h + HDR_LEN + (size_t)i * GOSSIP_LEN;
        int flags = (int)get16(g + 98);
        struct node *n = lookup((const char *)g, NAMELEN);
        char ip[IPLEN];
        memcpy(ip, g + 48, IPLEN);
        ip[IPLEN - 1] = 0;
        if (n) {
            if (sender && (sender->flags & NF_MASTER) && n != myself) {
                if (flags & (NF_FAIL | NF_PFAIL)) {
                    if (report_add(n, sender))
                        log_msg(LL_VERBOSE, "Node %.40s reported node %.40s as not reachable.", sender->name, n->name);
                    mark_failing_if_needed(n);
                } else {
                    report_del(n, sender);
                }
            }
            if (!(flags & (NF_FAIL | NF_PFAIL)) && n->ping_sent == 0 && reports_count(n) == 0) {
                long long pt = (long long)get32(g + 44) * 1000;
                if (pt <= now + 500 && pt > n->pong_received)
                    n->pong_received = pt;
            }
            if ((n->flags & (NF_FAIL | NF_PFAIL)) && !(flags & NF_NOADDR) && !(flags & (NF_FAIL | NF_PFAIL)) &&
                (strcasecmp(n->ip, ip) || n->port != (int)get16(g + 94) || n->cport != (int)get16(g + 96))) {
                if (n->link)
                    link_free(n->link);
                snprintf(n->ip, sizeof(n->ip), "%s", ip);
                n->port = (int)get16(g + 94);
                n->pport = (int)get16(g + 100);
                n->cport = (int)get16(g + 96);
                n->flags &= ~NF_NOADDR;
            }
        } else if (sender && !(flags & NF_NOADDR) && !blacklisted((const char *)g) &&
                   valid_name((const char *)g, NAMELEN)) {
            n = node_new((const char *)g, flags & ~(NF_MYSELF | NF_PFAIL | NF_FAIL | NF_MEET | NF_HANDSHAKE));
            snprintf(n->ip, sizeof(n->ip), "%s", ip);
            n->port = (int)get16(g + 94);
            n->pport = (int)get16(g + 100);
            n->cport = (int)get16(g + 96);
            node_add(n);
            todo_save = 1;
        }
    }
}

/* The ping extensions (Redis 7.0's hostname; 7.2's human node name,
 * forgotten node and shard id).  Lengths were checked (expected_len).
 * h is l's read buffer: a forgotten-node extension that names the sender
 * itself or the node that owns l is ignored, since deleting that node
 * would free the sender or l (and h with it) while they are in use. */
static void process_exts(const unsigned char *h, size_t tot, int count, struct node *sender, const struct link *l)
{
    char host[256] = "", human[256] = "";
    const unsigned char *shard = NULL;
    sender->ext_seen = 1;
    if (h[2253] & MF0_EXT_DATA) {
        size_t at = HDR_LEN + (size_t)count * GOSSIP_LEN;
        unsigned n = get16(h + 2214);
        while (n-- && at + 8 <= tot) {
            uint32_t len = get32(h + at);
            unsigned type = get16(h + at + 4);
            if (len < 8 || at + len > tot)
                break;
            const unsigned char *d = h + at + 8;
            size_t dl = len - 8;
            if (type == 0 || type == 1) { /* hostname, human node name: NUL-terminated */
                char *out = type == 0 ? host : human;
                size_t sl = strnlen((const char *)d, dl);
                if (sl < 256) {
                    memcpy(out, d, sl);
                    out[sl] = 0;
                }
            } else if (type == 2 && dl >= NAMELEN + 8) { /* forgotten node: name, ttl (s) */
                sender->ext72 = 1;
                struct node *f = lookup((const char *)d, NAMELEN);
                if (f && f != myself && f != sender && f->link != l && f->inbound != l &&
                    !((myself->flags & NF_SLAVE) && myself->master == f)) {
                    uint64_t ttl = get64(d + NAMELEN);
                    if (ttl > 3600)
                        ttl = 3600;
                    nblack++;
                    blacklist = hk_realloc(blacklist, sizeof(*blacklist) * (size_t)nblack);
                    memcpy(blacklist[nblack - 1].name, f->name, NAMELEN);
                    blacklist[nblack - 1].until = time_ms() + (long long)ttl * 1000;
                    log_msg(LL_NOTICE, "Node %.40s forgotten (told by %.40s)", f->name, sender->name);
                    node_del(f);
                    todo_save = todo_state = 1;
                }
            } else if (type == 3 && dl >= NAMELEN) { /* shard id */
                sender->ext72 = 1;
                shard = d;
            }
            at += len;
        }
    }
    if (strcmp(sender->hostname, host)) {
        snprintf(sender->hostname, sizeof(sender->hostname), "%s", host);
        todo_save = 1;
    }
    if (strcmp(sender->human, human))
        snprintf(sender->human, sizeof(sender->human), "%s", human);
    if (!shard && sender->master)
        shard = (const unsigned char *)sender->master->shard_id;
    if (shard && memcmp(sender->shard_id, shard, NAMELEN)) {
        memcpy(sender->shard_id, shard, NAMELEN);
        /* A replica's shard is its master's. */
        if ((myself->flags & NF_SLAVE) && myself->master == sender)
            memcpy(myself->shard_id, shard, NAMELEN);
        todo_save = 1;
    }
}

/* A master's vote for a replica asking to replace its failed master
 * (clusterSendFailoverAuthIfNeeded): one vote per epoch, none for a
 * master voted for within 2 node timeouts, none if any slot it claims has
 * an owner with a newer config epoch. */
static void vote_if_needed(struct node *n, const unsigned char *h)
{
    struct node *m = n->master;
    uint64_t req_epoch = get64(h + 16), req_cfg = get64(h + 24);
    int force = h[2253] & MF0_FORCEACK;
    long long now = time_ms();
    if ((myself->flags & NF_SLAVE) || myself->numslots == 0)
        return;
    if (req_epoch < current_epoch || last_vote_epoch == current_epoch)
        return;
    if (!(n->flags & NF_SLAVE) || !m || (!(m->flags & NF_FAIL) && !force))
        return;
    if (now - m->voted_time < node_timeout() * 2)
        return;
    for (int j = 0; j < CLUSTER_SLOTS; j++)
        if (bit_get(h + 80, j) && slot_owner[j] && slot_owner[j]->config_epoch > req_cfg)
            return;
    last_vote_epoch = current_epoch;
    m->voted_time = now;
    todo_save = todo_fsync = 1;
    save_config(); /* the vote is on disk before it is sent */
    unsigned char buf[HDR_LEN];
    build_hdr(buf, T_AUTH_ACK, HDR_LEN);
    link_send(n->link, buf, HDR_LEN, T_AUTH_ACK);
    log_msg(LL_NOTICE, "Failover auth granted to %.40s for epoch %llu", n->name, (unsigned long long)current_epoch);
}

/* Take over the master's slots with a new epoch and tell everybody. */
static void promote_myself(void)
{
    struct node *old = myself->master;
    log_msg(LL_NOTICE, "Failover election won: I'm the new master (configEpoch %llu).",
            (unsigned long long)myself->config_epoch);
    myself->flags &= ~NF_SLAVE;
    myself->flags |= NF_MASTER;
    myself->master = NULL;
    replica_unset_master();
    if (old)
        for (int j = 0; j < CLUSTER_SLOTS; j++)
            if (slot_owner[j] == old)
                add_slot(myself, j);
    slot_bits_update();
    todo_save = todo_state = todo_fsync = 1;
    update_state();
    save_config();
    for (int i = 0; i < nnodes; i++)
        if (nodes[i] != myself && nodes[i]->link && !(nodes[i]->flags & (NF_HANDSHAKE | NF_NOADDR)))
            send_ping(nodes[i]->link, T_PONG);
    mf_end = 0;
    mf_force = 0;
    mf_master_off = -1;
}

/* A replica's rank: how many replicas of the same master have a bigger
 * offset (they go first: 1 s later per rank). */
static int my_rank(void)
{
    long long mine = (long long)my_offset();
    int rank = 0;
    for (int i = 0; i < nnodes; i++) {
        struct node *n = nodes[i];
        if (n != myself && n->master == myself->master && !(n->flags & NF_NOFAILOVER) && n->repl_offset > mine)
            rank++;
    }
    return rank;
}

/* clusterHandleSlaveFailover: a replica of a failed master (or one told
 * CLUSTER FAILOVER FORCE) asks the masters for votes, after a delay that
 * lets the most up-to-date replica go first, and takes over with a
 * majority. */
static void handle_failover(void)
{
    long long now = time_ms(), nt = node_timeout();
    long long auth_timeout = nt * 2 < 2000 ? 2000 : nt * 2, retry = auth_timeout * 2;
    struct node *m = myself->master;
    if (mf_end && now > mf_end) {
        if (!mf_force)
            log_msg(LL_WARNING, "Manual failover timed out.");
        mf_end = 0;
        mf_force = 0;
        mf_master_off = -1;
    }
    int manual = mf_end && (mf_force || (mf_master_off >= 0 && (long long)my_offset() >= mf_master_off));
    if (!(myself->flags & NF_SLAVE) || !m || (!(m->flags & NF_FAIL) && !manual) || m->numslots == 0)
        return;
    if ((myself->flags & NF_NOFAILOVER) && !manual)
        return;
    /* cluster-replica-validity-factor: a replica disconnected from its
     * master for too long has data too old to be elected (unless told to
     * by CLUSTER FAILOVER). */
    long long age = replica_data_age_ms();
    if (age > nt)
        age -= nt;
    int factor = __atomic_load_n(&cfg.cluster_replica_validity_factor, __ATOMIC_RELAXED);
    if (factor && !manual &&
        age > 1000LL * __atomic_load_n(&cfg.repl_ping_replica_period, __ATOMIC_RELAXED) + nt * factor) {
        static long long last_log;
        if (now - last_log > 10000) {
            last_log = now;
            log_msg(LL_NOTICE, "Currently unable to failover: Disconnected from master for longer than allowed. "
                               "Please check the 'cluster-replica-validity-factor' configuration option.");
        }
        return;
    }
    if (now - fo_time > retry) {
        fo_time = now + (manual ? 0 : 500 + rand() % 500);
        fo_count = 0;
        fo_sent = 0;
        fo_rank = manual ? 0 : my_rank();
        fo_time += (long long)fo_rank * 1000;
        log_msg(LL_NOTICE, "Start of election delayed for %lld milliseconds (rank #%d, offset %llu).", fo_time - now,
                fo_rank, (unsigned long long)my_offset());
        return;
    }
    if (!fo_sent && !manual) {
        int r = my_rank();
        if (r > fo_rank) {
            fo_time += (long long)(r - fo_rank) * 1000;
            fo_rank = r;
        }
    }
    if (now < fo_time || now - fo_time > auth_timeout)
        return;
    if (!fo_sent) {
        current_epoch++;
        fo_epoch = current_epoch;
        todo_fsync = 1;
        log_msg(LL_NOTICE, "Starting a failover election for epoch %llu.", (unsigned long long)current_epoch);
        unsigned char buf[HDR_LEN];
        build_hdr(buf, T_AUTH_REQ, HDR_LEN);
        if (manual)
            buf[2253] |= MF0_FORCEACK;
        broadcast(buf, HDR_LEN, T_AUTH_REQ);
        fo_sent = 1;
        todo_save = 1;
        return;
    }
    if (fo_count >= csize / 2 + 1) {
        if (myself->config_epoch < fo_epoch)
            myself->config_epoch = fo_epoch;
        promote_myself();
    }
}

/* The length a message of this type must have (0: any, unknown type);
 * -1: malformed. */
static long long expected_len(const unsigned char *h, size_t tot)
{
    unsigned type = get16(h + 12);
    switch (type) {
    case T_PING:
    case T_PONG:
    case T_MEET: {
        size_t exp = HDR_LEN + (size_t)get16(h + 14) * GOSSIP_LEN;
        if (h[2253] & MF0_EXT_DATA) {
            unsigned n = get16(h + 2214);
            size_t at = exp;
            while (n--) {
                if (at + 8 > tot)
                    return -1;
                uint32_t len = get32(h + at);
                if (len % 8 || len < 8 || tot - at < len)
                    return -1;
                at += len;
            }
            exp = at;
        }
        return (long long)exp;
    }
    case T_FAIL:
        return HDR_LEN + NAMELEN;
    case T_PUBLISH:
    case T_PUBSHARD:
        if (tot < HDR_LEN + 8)
            return -1;
        return (long long)HDR_LEN + 8 + (long long)get32(h + HDR_LEN) + (long long)get32(h + HDR_LEN + 4);
    case T_AUTH_REQ:
    case T_AUTH_ACK:
    case T_MFSTART:
        return HDR_LEN;
    case T_UPDATE:
        return HDR_LEN + 8 + NAMELEN + SLOT_BYTES;
    case T_MODULE:
        if (tot < HDR_LEN + 16)
            return -1;
        return (long long)HDR_LEN + 13 + (long long)get32(h + HDR_LEN + 8);
    default:
        return (long long)tot;
    }
}

/* One whole message in l->rbuf.  0 goes on; -1 the link was freed. */
static int process(struct link *l)
{
    const unsigned char *h = l->rbuf;
    size_t tot = get32(h + 4);
    unsigned type = get16(h + 12);
    long long now = time_ms();
    if (type < T_COUNT)
        stats_recv[type]++;
    if (get16(h + 8) != 1)
        return 0;
    if (tot < HDR_LEN || expected_len(h, tot) != (long long)tot) {
        log_msg(LL_WARNING, "Received invalid %s packet of length %zu", type < T_COUNT ? type_names[type] : "unknown",
                tot);
        return 0;
    }
    int flags = (int)get16(h + 2250);
    int count = (int)get16(h + 14);
    struct node *sender;
    if (l->node && !(l->node->flags & NF_HANDSHAKE)) {
        sender = l->node;
    } else {
        sender = lookup((const char *)h + 40, NAMELEN);
        if (sender && !l->node && l->inbound) {
            if (sender->inbound && sender->inbound != l)
                link_free(sender->inbound);
            sender->inbound = l;
            l->node = sender;
        }
    }
    if (sender)
        sender->data_received = now;
    uint64_t sender_cfg_epoch = 0;
    if (sender && !(sender->flags & NF_HANDSHAKE)) {
        uint64_t ce = get64(h + 16);
        sender_cfg_epoch = get64(h + 24);
        if (ce > current_epoch) {
            current_epoch = ce;
            todo_save = todo_fsync = 1;
        }
        if (sender_cfg_epoch > sender->config_epoch) {
            sender->config_epoch = sender_cfg_epoch;
            todo_save = todo_fsync = 1;
        }
        sender->repl_offset = (long long)get64(h + 32);
        if (mf_end && !mf_force && (myself->flags & NF_SLAVE) && myself->master == sender && (h[2253] & MF0_PAUSED) &&
            mf_master_off < 0) {
            mf_master_off = sender->repl_offset;
            log_msg(LL_NOTICE, "Received replication offset for paused master manual failover: %lld", mf_master_off);
        }
    }
    if (type == T_PING || type == T_MEET) {
        const char *aip = cfg.cluster_announce_ip;
        if ((type == T_MEET || !myself->ip[0]) && !(aip && *aip)) {
            char ip[IPLEN];
            if (ip_of_peer(l->fd, ip, 1) == 0 && strcmp(ip, myself->ip)) {
                snprintf(myself->ip, sizeof(myself->ip), "%s", ip);
                log_msg(LL_WARNING, "IP address for this node updated to %s", myself->ip);
                todo_save = 1;
            }
        }
        char mip[IPLEN];
        if (!sender && type == T_MEET && sender_ip(l, h, mip) == 0) {
            struct node *n = node_new(NULL, NF_HANDSHAKE);
            snprintf(n->ip, sizeof(n->ip), "%s", mip);
            n->port = (int)get16(h + 10);
            n->pport = (int)get16(h + 2246);
            n->cport = (int)get16(h + 2248);
            node_add(n);
            todo_save = 1;
            process_gossip(h, count, NULL);
        }
        send_ping(l, T_PONG);
    }
    if (type == T_PING || type == T_PONG || type == T_MEET) {
        if (!l->inbound) {
            if (l->node->flags & NF_HANDSHAKE) {
                if (sender) {
                    /* We know it already: perhaps a new address. */
                    update_address(sender, l, h);
                    node_del(l->node); /* frees l */
                    todo_save = todo_state = 1;
                    return -1;
                }
                memcpy(l->node->name, h + 40, NAMELEN);
                l->node->flags &= ~NF_HANDSHAKE;
                l->node->flags |= flags & (NF_MASTER | NF_SLAVE);
                log_msg(LL_VERBOSE, "Handshake with node %.40s completed.", l->node->name);
                todo_save = 1;
            } else if (memcmp(l->node->name, h + 40, NAMELEN)) {
                l->node->flags |= NF_NOADDR;
                l->node->ip[0] = 0;
                l->node->port = l->node->pport = l->node->cport = 0;
                link_free(l);
                todo_save = 1;
                return -1;
            }
        }
        if (sender) {
            sender->flags = (sender->flags & ~NF_NOFAILOVER) | (flags & NF_NOFAILOVER);
            if (type == T_PING && !(sender->flags & NF_HANDSHAKE) && update_address(sender, l, h))
                todo_save = todo_state = 1;
        }
        if (!l->inbound && type == T_PONG) {
            l->node->pong_received = now;
            l->node->ping_sent = 0;
            if (l->node->flags & NF_PFAIL) {
                l->node->flags &= ~NF_PFAIL;
                todo_save = todo_state = 1;
            } else if (l->node->flags & NF_FAIL) {
                clear_failure_if_needed(l->node);
            }
        }
        if (sender) {
            static const char zero[NAMELEN];
            if (!memcmp(h + 2128, zero, NAMELEN)) {
                set_as_master(sender);
            } else {
                struct node *m = lookup((const char *)h + 2128, NAMELEN);
                if (sender->flags & NF_MASTER) {
                    node_del_slots(sender);
                    sender->flags &= ~(NF_MASTER | NF_MIGRATE_TO);
                    sender->flags |= NF_SLAVE;
                    todo_save = todo_state = 1;
                    slot_bits_update();
                }
                if (m && sender->master != m) {
                    sender->master = m;
                    m->flags |= NF_MIGRATE_TO; /* it had a replica: orphaned if it loses them all */
                    todo_save = 1;
                }
            }
        }
        struct node *sm = NULL;
        int dirty = 0;
        if (sender) {
            sm = (sender->flags & NF_MASTER) ? sender : sender->master;
            if (sm)
                dirty = memcmp(sm->slots, h + 80, SLOT_BYTES) != 0;
        }
        if (sender && (sender->flags & NF_MASTER) && dirty)
            update_slots_with(sender, sender_cfg_epoch, h + 80);
        if (sender && dirty) {
            for (int j = 0; j < CLUSTER_SLOTS; j++) {
                if (!bit_get(h + 80, j) || slot_owner[j] == sender || !slot_owner[j] || bit_get(not_claiming, j))
                    continue;
                if (slot_owner[j]->config_epoch > sender_cfg_epoch) {
                    log_msg(LL_VERBOSE, "Node %.40s has old slots configuration, sending an UPDATE message about %.40s",
                            sender->name, slot_owner[j]->name);
                    send_update(sender->link, slot_owner[j]);
                    break;
                }
            }
        }
        if (sender && (myself->flags & NF_MASTER) && (sender->flags & NF_MASTER) &&
            sender_cfg_epoch == myself->config_epoch && memcmp(sender->name, myself->name, NAMELEN) < 0) {
            /* Epoch collision: the node with the greater name takes a new
             * epoch. */
            current_epoch++;
            myself->config_epoch = current_epoch;
            todo_save = todo_fsync = 1;
            log_msg(LL_VERBOSE, "WARNING: configEpoch collision with node %.40s. configEpoch set to %llu",
                    sender->name, (unsigned long long)current_epoch);
        }
        if (sender) {
            process_gossip(h, count, sender);
            process_exts(h, tot, count, sender, l);
        }
    } else if (type == T_FAIL) {
        if (sender) {
            struct node *f = lookup((const char *)h + HDR_LEN, NAMELEN);
            if (f && !(f->flags & (NF_FAIL | NF_MYSELF))) {
                log_msg(LL_NOTICE, "FAIL message received from %.40s about %.40s", sender->name, f->name);
                f->flags |= NF_FAIL;
                f->fail_time = now;
                f->flags &= ~NF_PFAIL;
                todo_save = todo_state = 1;
            }
        }
    } else if (type == T_PUBLISH || type == T_PUBSHARD) {
        if (!sender || !cluster_deliver_publish || fuzzing)
            return 0;
        uint32_t cl = get32(h + HDR_LEN), ml = get32(h + HDR_LEN + 4);
        const char *ch = (const char *)h + HDR_LEN + 8;
        cluster_deliver_publish(type == T_PUBSHARD, ch, cl, ch + cl, ml);
    } else if (type == T_UPDATE) {
        if (!sender)
            return 0;
        uint64_t ep = get64(h + HDR_LEN);
        struct node *n = lookup((const char *)h + HDR_LEN + 8, NAMELEN);
        if (!n || n->config_epoch >= ep)
            return 0;
        if (n->flags & NF_SLAVE)
            set_as_master(n);
        n->config_epoch = ep;
        update_slots_with(n, ep, h + HDR_LEN + 8 + NAMELEN);
        todo_save = 1;
    } else if (type == T_MFSTART) {
        if (!sender || sender->master != myself || !(myself->flags & NF_MASTER))
            return 0;
        log_msg(LL_NOTICE, "Manual failover requested by replica %.40s.", sender->name);
        mf_end = now + 5000;
        mf_paused = 1;
        if (cluster_pause_writes && !fuzzing)
            cluster_pause_writes(1);
        send_ping(sender->link, T_PING); /* our offset, with the paused flag, at once */
    } else if (type == T_AUTH_REQ) {
        if (sender)
            vote_if_needed(sender, h);
    } else if (type == T_AUTH_ACK) {
        if (sender && (sender->flags & NF_MASTER) && sender->numslots > 0 && get64(h + 16) >= fo_epoch) {
            fo_count++;
            log_msg(LL_NOTICE, "Failover auth granted to me by %.40s (%d votes)", sender->name, fo_count);
        }
    }
    return 0;
}

/* Read what the socket has; process every whole message. */
static void link_read(struct link *l)
{
    for (;;) {
        size_t want;
        if (l->rlen < 8) {
            want = 8 - l->rlen;
        } else {
            uint32_t tot = get32(l->rbuf + 4);
            if (memcmp(l->rbuf, "RCmb", 4) || tot < 16 || tot > (512u << 20) + HDR_LEN + 64) {
                log_msg(LL_WARNING, "Bad message length or signature received on the Cluster bus.");
                link_free(l);
                return;
            }
            want = tot - l->rlen;
        }
        if (l->rlen + want > l->rcap) {
            /* Grown as the bytes arrive, never to a length only announced. */
            size_t nc = l->rcap ? l->rcap : 4096;
            while (nc < l->rlen + (want < 65536 ? want : 65536))
                nc *= 2;
            if (nc > l->rcap) {
                l->rbuf = hk_realloc(l->rbuf, nc);
                l->rcap = nc;
            }
        }
        size_t room = l->rcap - l->rlen;
        if (want > room)
            want = room;
        ssize_t n = link_io(l, l->rbuf + l->rlen, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            link_free(l);
            return;
        }
        l->rlen += (size_t)n;
        if (l->rlen >= 8 && l->rlen == get32(l->rbuf + 4)) {
            if (l->rlen < HDR_LEN) { /* too short for a header: ignored, as Redis */
                l->rlen = 0;
                continue;
            }
            if (l->node)
                l->node->data_received = time_ms();
            if (process(l) < 0)
                return;
            l->rlen = 0;
            if (l->rcap > 1 << 20) {
                hk_free(l->rbuf);
                l->rbuf = NULL;
                l->rcap = 0;
            }
        }
    }
}

/* ------------------------------------------------- replica migration --- */
static int ok_replicas(struct node *m)
{
    int k = 0;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i]->master == m && (nodes[i]->flags & NF_SLAVE) && !(nodes[i]->flags & (NF_FAIL | NF_PFAIL)))
            k++;
    return k;
}

/* clusterHandleSlaveMigration: a replica of a master with more than
 * cluster-migration-barrier working replicas (and the most replicas of any
 * master) moves to a master left without any for 5 s; of its siblings,
 * only the one with the smallest name goes. */
static void replica_migration(long long now)
{
    int max_reps = 0, orphans = 0;
    for (int i = 0; i < nnodes; i++) {
        struct node *n = nodes[i];
        if (!(n->flags & NF_MASTER) || (n->flags & NF_HANDSHAKE))
            continue;
        int ok = ok_replicas(n);
        if (ok > max_reps)
            max_reps = ok;
        if (ok == 0 && n->numslots > 0 && (n->flags & NF_MIGRATE_TO) && !(n->flags & NF_FAIL)) {
            orphans++;
            if (!n->orphaned_time)
                n->orphaned_time = now;
        } else {
            n->orphaned_time = 0;
        }
    }
    struct node *m = myself->master;
    if (!(myself->flags & NF_SLAVE) || !m || !orphans || max_reps < 2 || !state_ok ||
        !__atomic_load_n(&cfg.cluster_allow_replica_migration, __ATOMIC_RELAXED))
        return;
    int mine = ok_replicas(m);
    if (mine != max_reps || mine <= __atomic_load_n(&cfg.cluster_migration_barrier, __ATOMIC_RELAXED))
        return;
    for (int i = 0; i < nnodes; i++) {
        struct node *s = nodes[i];
        if (s != myself && s->master == m && !(s->flags & (NF_FAIL | NF_PFAIL)) &&
            memcmp(s->name, myself->name, NAMELEN) < 0)
            return; /* a sibling with a smaller name goes */
    }
    for (int i = 0; i < nnodes; i++) {
        struct node *t = nodes[i];
        if ((t->flags & NF_MASTER) && t->orphaned_time && now - t->orphaned_time > 5000 && t != m) {
            log_msg(LL_NOTICE, "Migrating to orphaned master %.40s", t->name);
            set_my_master(t);
            save_config();
            return;
        }
    }
}

/* ------------------------------------------------------------ cron --- */
static void connect_node(struct node *n)
{
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", n->cport);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *res;
    if (getaddrinfo(n->ip, ps, &hints, &res) != 0)
        return;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(res);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc < 0 && errno != EINPROGRESS) {
        close(fd);
        return;
    }
    struct link *l = link_new(fd, 0);
    l->node = n;
    n->link = l;
    l->connecting = rc < 0;
    if (l->connecting) {
        l->out_armed = 1;
        ep_mod(l);
    } else {
        link_tls_start(l);
    }
    long long old = n->ping_sent;
    if (l->hs && link_handshake(l) < 0)
        return;
    send_ping(l, (n->flags & NF_MEET) ? T_MEET : T_PING);
    if (old)
        n->ping_sent = old;
    n->flags &= ~NF_MEET;
}

static void cron(void)
{
    static int iter;
    long long now = time_ms(), nt = node_timeout();
    long long hs_timeout = nt < 1000 ? 1000 : nt;
    iter++;
    for (int i = 0; i < nnodes; i++) {
        struct node *n = nodes[i];
        if (n == myself || (n->flags & NF_NOADDR))
            continue;
        if ((n->flags & NF_HANDSHAKE) && now - n->ctime > hs_timeout) {
            node_del(n);
            i--;
            continue;
        }
        if (!n->link && n->ip[0] && n->cport)
            connect_node(n);
    }
    if (iter % 10 == 0) {
        struct node *min = NULL;
        for (int k = 0; k < 5 && nnodes; k++) {
            struct node *n = nodes[rand() % nnodes];
            if (!n->link || n->ping_sent || (n->flags & (NF_MYSELF | NF_PFAIL | NF_HANDSHAKE)))
                continue;
            if (!min || n->pong_received < min->pong_received)
                min = n;
        }
        if (min)
            send_ping(min->link, T_PING);
    }
    for (int i = 0; i < nnodes; i++) {
        struct node *n = nodes[i];
        if (n->flags & (NF_MYSELF | NF_NOADDR | NF_HANDSHAKE))
            continue;
        if (n->link && now - n->link->ctime > nt && n->ping_sent && now - n->ping_sent > nt / 2 &&
            now - n->data_received > nt / 2) {
            link_free(n->link);
        }
        long long limit = __atomic_load_n(&cfg.cluster_link_sendbuf_limit, __ATOMIC_RELAXED);
        if (n->link && limit > 0 && (long long)(n->link->slen - n->link->soff) > limit)
            link_free(n->link);
        if (n->link && n->ping_sent == 0 && now - n->pong_received > nt / 2) {
            send_ping(n->link, T_PING);
            continue;
        }
        if (n->ping_sent && now - n->ping_sent > nt && !(n->flags & (NF_PFAIL | NF_FAIL))) {
            log_msg(LL_NOTICE, "*** NODE %.40s possibly failing", n->name);
            n->flags |= NF_PFAIL;
            todo_state = 1;
        }
    }
    /* A replica whose master has an address follows it. */
    if ((myself->flags & NF_SLAVE) && myself->master && myself->master->ip[0]) {
        char host[256];
        int port = 0;
        if (!replica_master(host, sizeof(host), &port) || strcmp(host, myself->master->ip) ||
            port != repl_port(myself->master))
            replica_set_master(myself->master->ip, repl_port(myself->master));
    }
    for (int i = 0; i < nnodes; i++)
        if (nodes[i]->flags & NF_PFAIL)
            mark_failing_if_needed(nodes[i]);
    if (myself->flags & NF_SLAVE)
        handle_failover();
    replica_migration(now);
    if (mf_paused && (now > mf_end || !(myself->flags & NF_MASTER))) {
        mf_paused = 0;
        mf_end = 0;
        if (cluster_pause_writes)
            cluster_pause_writes(0);
        log_msg(LL_NOTICE, "Manual failover: client writes resumed.");
    }
    update_state();
}

/* ---------------------------------------------------------- thread --- */
static void accept_bus(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct link *l = link_new(fd, 1);
        link_tls_start(l);
        if (l->hs)
            link_handshake(l);
    }
}

static void *bus_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hotkv-cluster");
    mem_thread_register();
    prop_thread_register();
    struct epoll_event evs[64];
    long long last = 0;
    while (!atomic_load(&stopping)) {
        int n = epoll_wait(epfd, evs, 64, 100);
        pthread_mutex_lock(&cl_mu);
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (!p) {
                uint64_t v;
                ssize_t r = read(efd, &v, sizeof(v));
                (void)r;
                continue;
            }
            if ((uintptr_t)p <= (uintptr_t)nlfd) {
                accept_bus(lfds[(uintptr_t)p - 1]);
                continue;
            }
            struct link *l = p;
            int alive = 0;
            for (struct link *x = links; x; x = x->next)
                alive |= x == l;
            if (!alive)
                continue;
            if (l->connecting && (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
                int err = 0;
                socklen_t el = sizeof(err);
                getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err) {
                    link_free(l);
                    continue;
                }
                l->connecting = 0;
                link_tls_start(l);
            }
            int force_read = 0;
            if (l->hs) {
                int r = link_handshake(l);
                if (r <= 0)
                    continue; /* freed, or not done */
                force_read = 1; /* OpenSSL may hold the peer's first bytes */
            }
            if (evs[i].events & EPOLLOUT)
                link_flush(l);
            if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) || force_read)
                link_read(l);
        }
        send_published();
        long long now = time_ms();
        if (now - last >= 100) {
            last = now;
            cron();
        }
        if (todo_state) {
            todo_state = 0;
            update_state();
        }
        if (todo_save) {
            todo_save = 0;
            save_config();
        }
        pthread_mutex_unlock(&cl_mu);
        mem_publish();
        slab_thread_idle(); /* a thread that is not a worker lends its slab heap back (base/slab.h) */
    }
    prop_thread_unregister();
    mem_thread_unregister();
    return NULL;
}

int cluster_init(char *err, size_t errlen)
{
    cluster_on = cfg.cluster_enabled;
    if (!cluster_on)
        return 0;
    snprintf(conf_path, sizeof(conf_path), "%s", cfg.cluster_config_file ? cfg.cluster_config_file : "nodes.conf");
    /* One server per nodes.conf (Redis's lock on the file). */
    lock_fd = open(conf_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(err, errlen, "Sorry, the cluster configuration file %s is already used by a different Redis Cluster "
                              "node. Please make sure that different nodes use different cluster configuration files.",
                 conf_path);
        return -1;
    }
    pthread_mutex_lock(&cl_mu);
    int rc = load_config(err, errlen);
    if (rc < 0) {
        pthread_mutex_unlock(&cl_mu);
        return -1;
    }
    if (rc == 0) {
        myself = node_new(NULL, NF_MYSELF | NF_MASTER);
        node_add(myself);
        log_msg(LL_NOTICE, "No cluster configuration found, I'm %.40s", myself->name);
        save_config();
    } else {
        log_msg(LL_NOTICE, "Node configuration loaded, I'm %.40s", myself->name);
    }
    myself->port = my_port();
    myself->pport = my_pport();
    myself->cport = cfg.cluster_announce_bus_port ? cfg.cluster_announce_bus_port : bus_port();
    if (cfg.cluster_announce_ip && *cfg.cluster_announce_ip)
        snprintf(myself->ip, sizeof(myself->ip), "%s", cfg.cluster_announce_ip);
    if (cfg.cluster_announce_hostname)
        snprintf(myself->hostname, sizeof(myself->hostname), "%s", cfg.cluster_announce_hostname);
    if (cfg.cluster_replica_no_failover)
        myself->flags |= NF_NOFAILOVER;
    slot_bits_update();
    pthread_mutex_unlock(&cl_mu);
    return 0;
}

int cluster_start(char *err, size_t errlen)
{
    if (!cluster_on)
        return 0;
    epfd = epoll_create1(EPOLL_CLOEXEC);
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev);
    char binds[1024];
    snprintf(binds, sizeof(binds), "%s", cfg.bind && *cfg.bind ? cfg.bind : "* -::*");
    int port = bus_port();
    for (char *save = NULL, *t = strtok_r(binds, " ", &save); t && nlfd < 16; t = strtok_r(NULL, " ", &save)) {
        int optional = t[0] == '-';
        if (optional)
            t++;
        const char *addr = !strcmp(t, "*") ? "0.0.0.0" : !strcmp(t, "::*") ? "::" : t;
        char ps[16];
        snprintf(ps, sizeof(ps), "%d", port);
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_PASSIVE | AI_NUMERICHOST},
                        *res;
        if (getaddrinfo(addr, ps, &hints, &res) != 0) {
            if (optional)
                continue;
            snprintf(err, errlen, "Failed listening on %s:%d (cluster bus): bad address", addr, port);
            return -1;
        }
        int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;
        if (fd >= 0) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (res->ai_family == AF_INET6)
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        }
        if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 511) < 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            freeaddrinfo(res);
            if (optional)
                continue;
            snprintf(err, errlen, "Failed listening on %s:%d (cluster bus): %s", addr, port, strerror(e));
            return -1;
        }
        freeaddrinfo(res);
        lfds[nlfd++] = fd;
        struct epoll_event lev = {.events = EPOLLIN, .data.ptr = (void *)(uintptr_t)nlfd};
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &lev);
    }
    if (!nlfd) {
        snprintf(err, errlen, "Failed listening on the cluster bus port %d", port);
        return -1;
    }
    pthread_mutex_lock(&cl_mu);
    /* A replica follows its master from the start. */
    if ((myself->flags & NF_SLAVE) && myself->master && myself->master->ip[0])
        replica_set_master(myself->master->ip, repl_port(myself->master));
    pthread_mutex_unlock(&cl_mu);
    if (pthread_create(&tid, NULL, bus_main, NULL) != 0) {
        snprintf(err, errlen, "Can't start the cluster bus thread");
        return -1;
    }
    started = 1;
    return 0;
}

void cluster_stop(void)
{
    if (!started)
        return;
    atomic_store(&stopping, 1);
    wake();
    pthread_join(tid, NULL);
    started = 0;
    pthread_mutex_lock(&cl_mu);
    if (todo_save)
        save_config();
    pthread_mutex_unlock(&cl_mu);
}

/* PUBLISH / SPUBLISH from workers: queued under pub_mu (a leaf lock: the
 * publisher may hold slot locks, inside EXEC or a script, and cl_mu is
 * taken before slot locks), sent by the bus thread. */
struct pubq {
    struct pubq *next;
    int shard;
    size_t clen, mlen;
    char data[];
};
static pthread_mutex_t pub_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pubq *pub_head, **pub_tail = &pub_head;

void cluster_propagate_publish(int shard, const char *ch, size_t clen, const char *msg, size_t mlen)
{
    if (!cluster_on || !atomic_load(&started) || clen > UINT32_MAX || mlen > UINT32_MAX)
        return;
    struct pubq *q = hk_malloc(sizeof(*q) + clen + mlen);
    q->next = NULL;
    q->shard = shard;
    q->clen = clen;
    q->mlen = mlen;
    memcpy(q->data, ch, clen);
    memcpy(q->data + clen, msg, mlen);
    pthread_mutex_lock(&pub_mu);
    *pub_tail = q;
    pub_tail = &q->next;
    pthread_mutex_unlock(&pub_mu);
    wake();
}

/* The bus thread, cl_mu held. */
static void send_published(void)
{
    pthread_mutex_lock(&pub_mu);
    struct pubq *list = pub_head;
    pub_head = NULL;
    pub_tail = &pub_head;
    pthread_mutex_unlock(&pub_mu);
    while (list) {
        struct pubq *q = list;
        list = q->next;
        size_t tot = HDR_LEN + 8 + q->clen + q->mlen;
        unsigned char *buf = hk_malloc(tot);
        build_hdr(buf, q->shard ? T_PUBSHARD : T_PUBLISH, (uint32_t)tot);
        put32(buf + HDR_LEN, (uint32_t)q->clen);
        put32(buf + HDR_LEN + 4, (uint32_t)q->mlen);
        memcpy(buf + HDR_LEN + 8, q->data, q->clen + q->mlen);
        if (!q->shard) {
            broadcast(buf, tot, T_PUBLISH);
        } else {
            struct node *m = my_master();
            for (int i = 0; m && i < nnodes; i++) {
                struct node *n = nodes[i];
                if (n != myself && (n == m || n->master == m) && n->link && !(n->flags & (NF_HANDSHAKE | NF_NOADDR)))
                    link_send(n->link, buf, tot, T_PUBSHARD);
            }
        }
        hk_free(buf);
        hk_free(q);
    }
}

/* A new config epoch without the others' agreement (Redis's
 * clusterBumpConfigEpochWithoutConsensus), unless ours is already the
 * greatest epoch known: greater than every node's config epoch and than
 * current_epoch, which every message header raises.  current_epoch counts:
 * a node may have heard of a newer epoch from a third node before it hears
 * from the node that holds it, and not bumping then lets that node's stale
 * claim win back a slot just imported.  1 when bumped.  cl_mu held. */
static int bump_epoch_alone(void)
{
    uint64_t max = current_epoch;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i]->config_epoch > max)
            max = nodes[i]->config_epoch;
    if (myself->config_epoch != 0 && myself->config_epoch == max)
        return 0;
    current_epoch++;
    myself->config_epoch = current_epoch;
    return 1;
}

/* --------------------------------------------------------- routing --- */
static const char *endpoint(struct node *n, char *buf, size_t cap)
{
    int t = __atomic_load_n(&cfg.cluster_preferred_endpoint_type, __ATOMIC_RELAXED);
    if (t == 1)
        snprintf(buf, cap, "%s", n->hostname[0] ? n->hostname : "?");
    else if (t == 2)
        snprintf(buf, cap, "?");
    else
        snprintf(buf, cap, "%s", n->ip);
    return buf;
}

int cluster_route(int slot, unsigned flags, int missing, int existing, int multiple, char *err, size_t cap)
{
    char ep[300];
    pthread_mutex_lock(&cl_mu);
    req_pport = (flags & CR_PLAIN) && __atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED);
    struct node *n = slot_owner[slot];
    int rc = -1;
    if (!n) {
        snprintf(err, cap, "CLUSTERDOWN Hash slot not served");
        goto out;
    }
    if (!state_ok) {
        if (flags & CR_SHARD_PUBSUB) {
            if (!cfg.cluster_allow_pubsubshard_when_down) {
                snprintf(err, cap, "CLUSTERDOWN The cluster is down");
                goto out;
            }
        } else if (!cfg.cluster_allow_reads_when_down) {
            snprintf(err, cap, "CLUSTERDOWN The cluster is down");
            goto out;
        } else if (flags & CR_WRITE) {
            snprintf(err, cap, "CLUSTERDOWN The cluster is down and only accepts read commands");
            goto out;
        }
    }
    int migrating = n == myself && migrating_to[slot];
    int importing = importing_from[slot] != NULL;
    if ((migrating || importing) && (flags & CR_MIGRATE)) {
        rc = 0;
        goto out;
    }
    if (migrating && missing) {
        if (existing) {
            snprintf(err, cap, "TRYAGAIN Multiple keys request during rehashing of slot");
        } else {
            struct node *t = migrating_to[slot];
            snprintf(err, cap, "ASK %d %s:%d", slot, endpoint(t, ep, sizeof(ep)), port_for(t));
        }
        goto out;
    }
    if (importing && (flags & CR_ASKING)) {
        if (multiple && missing) {
            snprintf(err, cap, "TRYAGAIN Multiple keys request during rehashing of slot");
            goto out;
        }
        rc = 0;
        goto out;
    }
    if (((flags & CR_READONLY) || (flags & CR_SHARD_PUBSUB)) && !(flags & CR_WRITE) && (myself->flags & NF_SLAVE) &&
        myself->master == n) {
        rc = 0;
        goto out;
    }
    if (n == myself) {
        rc = 0;
        goto out;
    }
    snprintf(err, cap, "MOVED %d %s:%d", slot, endpoint(n, ep, sizeof(ep)), port_for(n));
out:
    req_pport = 0;
    pthread_mutex_unlock(&cl_mu);
    return rc;
}

size_t cluster_info_section(char *buf, size_t cap)
{
    return (size_t)snprintf(buf, cap, "# Cluster\r\ncluster_enabled:%d\r\n", cluster_on ? 1 : 0);
}

/* ------------------------------------------------- CLUSTER command --- */
static int is(const struct client *c, int i, const char *w)
{
    return i < c->argc && strlen(w) == c->argvlen[i] && !strncasecmp(c->argv[i], w, c->argvlen[i]);
}

static int arg_num(struct client *c, int i, long long *v)
{
    char buf[32];
    if (c->argvlen[i] == 0 || c->argvlen[i] >= sizeof(buf))
        return -1;
    memcpy(buf, c->argv[i], c->argvlen[i]);
    buf[c->argvlen[i]] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end || errno)
        return -1;
    *v = x;
    return 0;
}

/* A slot argument: its number, or -1 with Redis's error replied. */
static int arg_slot(struct client *c, int i)
{
    long long s;
    if (arg_num(c, i, &s) < 0 || s < 0 || s >= CLUSTER_SLOTS) {
        reply_error(&c->out, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)s;
}

static void reply_sbuf(struct client *c, struct sbuf *b)
{
    reply_verbatim(&c->out, b->p ? b->p : "", b->len, "txt");
    hk_free(b->p);
}

static void node_entry(struct client *c, struct node *n)
{
    char ep[300];
    reply_array(&c->out, 4);
    reply_bulk_cstr(&c->out, endpoint(n, ep, sizeof(ep)));
    reply_int(&c->out, port_for(n));
    reply_bulk(&c->out, n->name, NAMELEN);
    int t = __atomic_load_n(&cfg.cluster_preferred_endpoint_type, __ATOMIC_RELAXED);
    int k = (t != 0 && n->ip[0]) + (t != 1 && n->hostname[0]);
    reply_map(&c->out, k);
    if (t != 0 && n->ip[0]) {
        reply_bulk_cstr(&c->out, "ip");
        reply_bulk_cstr(&c->out, n->ip);
    }
    if (t != 1 && n->hostname[0]) {
        reply_bulk_cstr(&c->out, "hostname");
        reply_bulk_cstr(&c->out, n->hostname);
    }
}

static void cmd_slots(struct client *c)
{
    size_t mark = c->out.len;
    long long ranges = 0;
    reply_array(&c->out, 0); /* patched below */
    size_t body = c->out.len;
    for (int j = 0; j < CLUSTER_SLOTS;) {
        struct node *n = slot_owner[j];
        if (!n) {
            j++;
            continue;
        }
        int s = j;
        while (j + 1 < CLUSTER_SLOTS && slot_owner[j + 1] == n)
            j++;
        int reps = 0;
        for (int i = 0; i < nnodes; i++)
            if (nodes[i]->master == n && !(nodes[i]->flags & NF_FAIL))
                reps++;
        reply_array(&c->out, 3 + reps);
        reply_int(&c->out, s);
        reply_int(&c->out, j);
        node_entry(c, n);
        for (int i = 0; i < nnodes; i++)
            if (nodes[i]->master == n && !(nodes[i]->flags & NF_FAIL))
                node_entry(c, nodes[i]);
        ranges++;
        j++;
    }
    /* Rebuild with the right count in front. */
    size_t blen = c->out.len - body;
    char *tmp = hk_malloc(blen ? blen : 1);
    memcpy(tmp, c->out.buf + body, blen);
    c->out.len = mark;
    reply_array(&c->out, ranges);
    reply_raw(&c->out, tmp, blen);
    hk_free(tmp);
}

static void shard_node(struct client *c, struct node *n)
{
    int hn = n->hostname[0] != 0;
    char ep[300];
    /* "port" the plaintext one, "tls-port" the TLS one (when the bus is
     * TLS, the node's port is its TLS port and pport the plaintext one). */
    int tlsc = __atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED);
    int plain = tlsc ? n->pport : n->port, tport = tlsc ? n->port : 0;
    reply_map(&c->out, 6 + hn + (plain != 0) + (tport != 0));
    reply_bulk_cstr(&c->out, "id");
    reply_bulk(&c->out, n->name, NAMELEN);
    if (plain) {
        reply_bulk_cstr(&c->out, "port");
        reply_int(&c->out, plain);
    }
    if (tport) {
        reply_bulk_cstr(&c->out, "tls-port");
        reply_int(&c->out, tport);
    }
    reply_bulk_cstr(&c->out, "ip");
    reply_bulk_cstr(&c->out, n->ip);
    reply_bulk_cstr(&c->out, "endpoint");
    reply_bulk_cstr(&c->out, endpoint(n, ep, sizeof(ep)));
    if (hn) {
        reply_bulk_cstr(&c->out, "hostname");
        reply_bulk_cstr(&c->out, n->hostname);
    }
    reply_bulk_cstr(&c->out, "role");
    reply_bulk_cstr(&c->out, (n->flags & NF_SLAVE) ? "replica" : "master");
    reply_bulk_cstr(&c->out, "replication-offset");
    reply_int(&c->out, n == myself ? (long long)my_offset() : n->repl_offset);
    reply_bulk_cstr(&c->out, "health");
    reply_bulk_cstr(&c->out, (n->flags & NF_FAIL) ? "fail" : "online");
}

/* CLUSTER SHARDS: one entry per shard id (Redis 7.2), so a failed master
 * stays in its shard beside the replica that took over.  A shard's slots
 * are those of its master (the one that owns slots, else the first
 * master, else the first node's master); that node is listed first, then
 * the shard's other nodes in node order. */
static struct node *shard_primary(int first)
{
    struct node *best = NULL;
    for (int i = first; i < nnodes; i++) {
        struct node *n = nodes[i];
        if ((n->flags & NF_HANDSHAKE) || memcmp(n->shard_id, nodes[first]->shard_id, NAMELEN) ||
            !(n->flags & NF_MASTER))
            continue;
        if (!best || (n->numslots > 0 && best->numslots == 0))
            best = n;
    }
    if (!best)
        best = nodes[first]->master ? nodes[first]->master : nodes[first];
    return best;
}

/* The shard of nodes[i] starts at i: no listed node before it has its id. */
static int shard_first(int i)
{
    if (nodes[i]->flags & NF_HANDSHAKE)
        return 0;
    for (int x = 0; x < i; x++)
        if (!(nodes[x]->flags & NF_HANDSHAKE) && !memcmp(nodes[x]->shard_id, nodes[i]->shard_id, NAMELEN))
            return 0;
    return 1;
}

static void cmd_shards(struct client *c)
{
    int k = 0;
    for (int i = 0; i < nnodes; i++)
        k += shard_first(i);
    reply_array(&c->out, k);
    for (int i = 0; i < nnodes; i++) {
        if (!shard_first(i))
            continue;
        struct node *m = shard_primary(i);
        reply_map(&c->out, 2);
        reply_bulk_cstr(&c->out, "slots");
        int ranges = 0;
        for (int j = 0; j < CLUSTER_SLOTS; j++)
            if (bit_get(m->slots, j) && (j == 0 || !bit_get(m->slots, j - 1)))
                ranges++;
        reply_array(&c->out, ranges * 2);
        for (int j = 0; j < CLUSTER_SLOTS; j++) {
            if (!bit_get(m->slots, j) || (j && bit_get(m->slots, j - 1)))
                continue;
            int e = j;
            while (e + 1 < CLUSTER_SLOTS && bit_get(m->slots, e + 1))
                e++;
            reply_int(&c->out, j);
            reply_int(&c->out, e);
        }
        reply_bulk_cstr(&c->out, "nodes");
        /* The primary (its shard id may differ, when it was taken from
         * the first node's master), then the shard's other nodes. */
        int in = !memcmp(m->shard_id, nodes[i]->shard_id, NAMELEN) && !(m->flags & NF_HANDSHAKE);
        int cnt = in ? 0 : 1;
        for (int x = i; x < nnodes; x++)
            cnt += !(nodes[x]->flags & NF_HANDSHAKE) && !memcmp(nodes[x]->shard_id, nodes[i]->shard_id, NAMELEN);
        reply_array(&c->out, cnt);
        shard_node(c, m);
        for (int x = i; x < nnodes; x++)
            if (nodes[x] != m && !(nodes[x]->flags & NF_HANDSHAKE) &&
                !memcmp(nodes[x]->shard_id, nodes[i]->shard_id, NAMELEN))
                shard_node(c, nodes[x]);
    }
}

static void cmd_info(struct client *c)
{
    int assigned = 0, okslots = 0, pfail = 0, fail = 0;
    for (int j = 0; j < CLUSTER_SLOTS; j++) {
        struct node *n = slot_owner[j];
        if (!n)
            continue;
        assigned++;
        if (n->flags & NF_FAIL)
            fail++;
        else if (n->flags & NF_PFAIL)
            pfail++;
        else
            okslots++;
    }
    int known = 0;
    for (int i = 0; i < nnodes; i++)
        known += !(nodes[i]->flags & NF_HANDSHAKE);
    struct node *m = my_master();
    struct sbuf b = {0};
    sb_add(&b,
           "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\n"
           "cluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%llu\r\n"
           "cluster_my_epoch:%llu\r\n",
           state_ok ? "ok" : "fail", assigned, okslots, pfail, fail, known, csize, (unsigned long long)current_epoch,
           (unsigned long long)(m ? m->config_epoch : 0));
    long long tsent = 0, trecv = 0;
    for (int t = 0; t < T_COUNT; t++) {
        if (stats_sent[t])
            sb_add(&b, "cluster_stats_messages_%s_sent:%lld\r\n", type_names[t], stats_sent[t]);
        tsent += stats_sent[t];
    }
    sb_add(&b, "cluster_stats_messages_sent:%lld\r\n", tsent);
    for (int t = 0; t < T_COUNT; t++) {
        if (stats_recv[t])
            sb_add(&b, "cluster_stats_messages_%s_received:%lld\r\n", type_names[t], stats_recv[t]);
        trecv += stats_recv[t];
    }
    sb_add(&b, "cluster_stats_messages_received:%lld\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n", trecv);
    reply_sbuf(c, &b);
}

/* CLUSTER MEET ip port [cport] */
static int start_handshake(const char *ip, int port, int cport)
{
    struct in6_addr a6;
    struct in_addr a4;
    if ((!inet_pton(AF_INET, ip, &a4) && !inet_pton(AF_INET6, ip, &a6)) || port <= 0 || port > 65535 || cport <= 0 ||
        cport > 65535) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < nnodes; i++)
        if ((nodes[i]->flags & NF_HANDSHAKE) && !strcasecmp(nodes[i]->ip, ip) && nodes[i]->port == port &&
            nodes[i]->cport == cport) {
            errno = EAGAIN;
            return -1;
        }
    struct node *n = node_new(NULL, NF_HANDSHAKE | NF_MEET);
    snprintf(n->ip, sizeof(n->ip), "%s", ip);
    n->port = port;
    n->cport = cport;
    node_add(n);
    return 0;
}

static unsigned long long keys_in_slot(int slot)
{
    spin_lock(&ks.locks[slot]);
    struct table *t = ks.dbs[0] ? ks.dbs[0]->t[slot] : NULL;
    unsigned long long n = t ? t->used : 0;
    spin_unlock(&ks.locks[slot]);
    return n;
}

static void cmd_getkeysinslot(struct client *c)
{
    long long cnt, sl;
    if (arg_num(c, 2, &sl) < 0 || arg_num(c, 3, &cnt) < 0) {
        reply_error(&c->out, "ERR value is not an integer or out of range");
        return;
    }
    if (sl < 0 || sl >= CLUSTER_SLOTS || cnt < 0) {
        reply_error(&c->out, "ERR Invalid slot or number of keys");
        return;
    }
    int slot = (int)sl;
    spin_lock(&ks.locks[slot]);
    struct table *t = ks.dbs[0] ? ks.dbs[0]->t[slot] : NULL;
    long long n = t ? (long long)t->used : 0;
    if (n > cnt)
        n = cnt;
    reply_array(&c->out, n);
    long long k = 0;
    for (uint32_t i = 0; t && i < t->cap && k < n; i++) {
        if (!table_full(t, i))
            continue;
        struct entry *e = table_get(t, i);
        reply_bulk(&c->out, entry_key(e), entry_klen(e));
        k++;
    }
    spin_unlock(&ks.locks[slot]);
}

static void cmd_reset(struct client *c, int hard)
{
    if ((myself->flags & NF_MASTER) && db_size(0) != 0) {
        reply_error(&c->out, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    if (myself->flags & NF_SLAVE) {
        myself->master = NULL;
        myself->flags &= ~NF_SLAVE;
        myself->flags |= NF_MASTER;
        replica_unset_master();
        db_lock_all();
        for (int i = 0; i < ks.ndb; i++)
            db_flush(i);
        db_unlock_all();
    }
    for (int j = 0; j < CLUSTER_SLOTS; j++) {
        migrating_to[j] = importing_from[j] = NULL;
        del_slot(j);
    }
    for (int i = 0; i < nnodes;) {
        if (nodes[i] == myself) {
            i++;
            continue;
        }
        node_del(nodes[i]);
    }
    if (hard) {
        current_epoch = last_vote_epoch = 0;
        myself->config_epoch = 0;
        char old[NAMELEN];
        memcpy(old, myself->name, NAMELEN);
        random_name(myself->name);
        log_msg(LL_NOTICE, "Node hard reset, now I'm %.40s", myself->name);
    }
    slot_bits_update();
    todo_save = todo_state = 1;
    save_config();
    reply_ok(&c->out);
}

static void cmd_setslot(struct client *c)
{
    int slot = arg_slot(c, 2);
    if (slot < 0)
        return;
    if (myself->flags & NF_SLAVE) {
        reply_error(&c->out, "ERR Please use SETSLOT only with masters.");
        return;
    }
    int mig = is(c, 3, "migrating");
    if ((mig || is(c, 3, "importing")) && c->argc == 5) {
        if (mig ? slot_owner[slot] != myself : slot_owner[slot] == myself) {
            reply_errorf(&c->out, mig ? "ERR I'm not the owner of hash slot %d" : "ERR I'm already the owner of hash slot %d",
                         slot);
            return;
        }
        struct node *n = lookup(c->argv[4], c->argvlen[4]);
        if (!n) {
            reply_errorf(&c->out, "ERR I don't know about node %.*s", (int)c->argvlen[4], c->argv[4]);
            return;
        }
        if (n->flags & NF_SLAVE) {
            reply_error(&c->out, "ERR Target node is not a master");
            return;
        }
        if (mig)
            migrating_to[slot] = n;
        else
            importing_from[slot] = n;
    } else if (is(c, 3, "stable") && c->argc == 4) {
        migrating_to[slot] = importing_from[slot] = NULL;
    } else if (is(c, 3, "node") && c->argc == 5) {
        struct node *n = lookup(c->argv[4], c->argvlen[4]);
        if (!n) {
            reply_errorf(&c->out, "ERR Unknown node %.*s", (int)c->argvlen[4], c->argv[4]);
            return;
        }
        if (n->flags & NF_SLAVE) {
            reply_error(&c->out, "ERR Target node is not a master");
            return;
        }
        if (slot_owner[slot] == myself && n != myself && keys_in_slot(slot)) {
            reply_errorf(&c->out, "ERR Can't assign hashslot %d to a different node while I still hold keys for this "
                                  "hash slot.",
                         slot);
            return;
        }
        if (keys_in_slot(slot) == 0 && migrating_to[slot])
            migrating_to[slot] = NULL;
        int importing_done = n == myself && importing_from[slot];
        del_slot(slot);
        add_slot(n, slot);
        if (importing_done) {
            importing_from[slot] = NULL;
            /* The slot is ours now: a new epoch, so the others learn it
             * (Redis bumps without agreement here). */
            if (bump_epoch_alone()) {
                todo_fsync = 1;
                log_msg(LL_NOTICE, "configEpoch updated after importing slot to %llu",
                        (unsigned long long)current_epoch);
            }
        }
    } else {
        reply_error(&c->out, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return;
    }
    slot_bits_range(slot, slot);
    todo_save = todo_state = 1;
    /* NODE is saved before the reply; MIGRATING / IMPORTING / STABLE, the
     * transient states of a move (redis-cli sends them for every slot),
     * by the bus thread within 100 ms (one write for a run of them). */
    if (is(c, 3, "node"))
        save_config();
    reply_ok(&c->out);
}

static const char *const cluster_help[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "MYSHARDID",
    "    Return the node's shard id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "HELP",
    "    Print this help.",
    NULL};

static int need_cluster(struct client *c)
{
    if (!cluster_on) {
        reply_error(&c->out, "ERR This instance has cluster support disabled");
        return 0;
    }
    return 1;
}

void cluster_command(struct client *c)
{
    if (!need_cluster(c)) /* HELP too, as Redis */
        return;
    if (is(c, 1, "help")) {
        int n = 0;
        while (cluster_help[n])
            n++;
        reply_array(&c->out, n);
        for (int i = 0; i < n; i++)
            reply_status(&c->out, cluster_help[i]);
        return;
    }
    pthread_mutex_lock(&cl_mu);
    req_pport = !c->tls && __atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED);
    if (is(c, 1, "myid")) {
        reply_bulk(&c->out, myself->name, NAMELEN);
    } else if (is(c, 1, "myshardid")) {
        reply_bulk(&c->out, myself->shard_id, NAMELEN);
    } else if (is(c, 1, "nodes")) {
        struct sbuf b = {0};
        nodes_text(&b, 0);
        reply_sbuf(c, &b);
    } else if (is(c, 1, "info")) {
        cmd_info(c);
    } else if (is(c, 1, "slots")) {
        cmd_slots(c);
    } else if (is(c, 1, "shards")) {
        cmd_shards(c);
    } else if (is(c, 1, "keyslot")) {
        reply_int(&c->out, key_slot(c->argv[2], c->argvlen[2]));
    } else if (is(c, 1, "countkeysinslot")) {
        long long s;
        if (arg_num(c, 2, &s) < 0)
            reply_error(&c->out, "ERR value is not an integer or out of range");
        else if (s < 0 || s >= CLUSTER_SLOTS)
            reply_error(&c->out, "ERR Invalid slot");
        else
            reply_int(&c->out, (long long)keys_in_slot((int)s));
    } else if (is(c, 1, "getkeysinslot")) {
        cmd_getkeysinslot(c);
    } else if (is(c, 1, "addslots") || is(c, 1, "delslots") || is(c, 1, "addslotsrange") ||
               is(c, 1, "delslotsrange")) {
        int add = is(c, 1, "addslots") || is(c, 1, "addslotsrange");
        int range = is(c, 1, "addslotsrange") || is(c, 1, "delslotsrange");
        if (range && (c->argc - 2) % 2) {
            reply_errorf(&c->out, "ERR wrong number of arguments for 'cluster|%s' command",
                         add ? "addslotsrange" : "delslotsrange");
            goto out;
        }
        if (myself->flags & NF_SLAVE) {
            reply_error(&c->out, "ERR Please use this command only with masters.");
            goto out;
        }
        unsigned char *want = hk_calloc(CLUSTER_SLOTS);
        for (int i = 2; i < c->argc; i += range ? 2 : 1) {
            int s = arg_slot(c, i), e = s;
            if (s < 0)
                goto bad;
            if (range) {
                e = arg_slot(c, i + 1);
                if (e < 0)
                    goto bad;
                if (s > e) {
                    reply_errorf(&c->out, "ERR start slot number %d is greater than end slot number %d", s, e);
                    goto bad;
                }
            }
            for (int j = s; j <= e; j++) {
                if (add && slot_owner[j]) {
                    reply_errorf(&c->out, "ERR Slot %d is already busy", j);
                    goto bad;
                }
                if (!add && !slot_owner[j]) {
                    reply_errorf(&c->out, "ERR Slot %d is already unassigned", j);
                    goto bad;
                }
                if (want[j]++ && !range) {
                    reply_errorf(&c->out, "ERR Slot %d specified multiple times", j);
                    goto bad;
                }
            }
        }
        for (int j = 0; j < CLUSTER_SLOTS; j++) {
            if (!want[j])
                continue;
            if (add) {
                importing_from[j] = NULL; /* Redis: adding a slot ends its import */
                add_slot(myself, j);
            } else {
                del_slot(j);
            }
        }
        slot_bits_update();
        todo_save = todo_state = 1;
        save_config();
        reply_ok(&c->out);
    bad:
        hk_free(want);
    } else if (is(c, 1, "flushslots")) {
        if (db_size(0) != 0) {
            reply_error(&c->out, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
            goto out;
        }
        for (int j = 0; j < CLUSTER_SLOTS; j++)
            if (slot_owner[j] == myself)
                del_slot(j);
        slot_bits_update();
        todo_save = todo_state = 1;
        save_config();
        reply_ok(&c->out);
    } else if (is(c, 1, "meet") && (c->argc == 4 || c->argc == 5)) {
        long long port, cport;
        char ip[IPLEN];
        if (arg_num(c, 3, &port) < 0) {
            reply_errorf(&c->out, "ERR Invalid TCP base port specified: %.*s", (int)c->argvlen[3], c->argv[3]);
            goto out;
        }
        if (c->argc == 5) {
            if (arg_num(c, 4, &cport) < 0) {
                reply_errorf(&c->out, "ERR Invalid TCP bus port specified: %.*s", (int)c->argvlen[4], c->argv[4]);
                goto out;
            }
        } else {
            cport = port + 10000;
        }
        size_t il = c->argvlen[2] < IPLEN - 1 ? c->argvlen[2] : IPLEN - 1;
        memcpy(ip, c->argv[2], il);
        ip[il] = 0;
        if (c->argvlen[2] >= IPLEN || start_handshake(ip, (int)port, (int)cport) < 0) {
            if (errno == EAGAIN) {
                reply_ok(&c->out); /* a handshake to it is in progress already */
            } else {
                reply_errorf(&c->out, "ERR Invalid node address specified: %.*s:%.*s", (int)c->argvlen[2],
                             c->argv[2], (int)c->argvlen[3], c->argv[3]);
            }
            goto out;
        }
        wake();
        reply_ok(&c->out);
    } else if (is(c, 1, "forget") && c->argc == 3) {
        struct node *n = lookup(c->argv[2], c->argvlen[2]);
        if (!n && c->argvlen[2] == NAMELEN && blacklisted(c->argv[2])) {
            /* Forgotten a moment ago, through another node's forgotten-node
             * extension (Redis 7.2's): forgetting it is done.  (Redis says
             * Unknown node, which makes redis-cli --cluster del-node fail
             * half way when the gossip outruns it.) */
            reply_ok(&c->out);
        } else if (!n) {
            reply_errorf(&c->out, "ERR Unknown node %.*s", (int)c->argvlen[2], c->argv[2]);
        } else if (n == myself) {
            reply_error(&c->out, "ERR I tried hard but I can't forget myself...");
        } else if ((myself->flags & NF_SLAVE) && myself->master == n) {
            reply_error(&c->out, "ERR Can't forget my master!");
        } else {
            nblack++;
            blacklist = hk_realloc(blacklist, sizeof(*blacklist) * (size_t)nblack);
            memcpy(blacklist[nblack - 1].name, n->name, NAMELEN);
            blacklist[nblack - 1].until = time_ms() + 60000;
            node_del(n);
            todo_save = todo_state = 1;
            save_config();
            reply_ok(&c->out);
        }
    } else if (is(c, 1, "replicate") && c->argc == 3) {
        struct node *n = lookup(c->argv[2], c->argvlen[2]);
        if (!n) {
            reply_errorf(&c->out, "ERR Unknown node %.*s", (int)c->argvlen[2], c->argv[2]);
        } else if (n == myself) {
            reply_error(&c->out, "ERR Can't replicate myself");
        } else if (n->flags & NF_SLAVE) {
            reply_error(&c->out, "ERR I can only replicate a master, not a replica.");
        } else if ((myself->flags & NF_MASTER) && (myself->numslots != 0 || db_size(0) != 0)) {
            reply_error(&c->out, "ERR To set a master the node must be empty and without assigned slots.");
        } else {
            set_my_master(n);
            save_config();
            reply_ok(&c->out);
        }
    } else if ((is(c, 1, "replicas") || is(c, 1, "slaves")) && c->argc == 3) {
        struct node *n = lookup(c->argv[2], c->argvlen[2]);
        if (!n) {
            reply_errorf(&c->out, "ERR Unknown node %.*s", (int)c->argvlen[2], c->argv[2]);
        } else if (n->flags & NF_SLAVE) {
            reply_error(&c->out, "ERR The specified node is not a master");
        } else {
            reply_array(&c->out, num_replicas(n));
            for (int i = 0; i < nnodes; i++)
                if (nodes[i]->master == n) {
                    struct sbuf b = {0};
                    node_line(&b, nodes[i], 0);
                    if (b.len)
                        b.len--; /* no newline */
                    reply_bulk(&c->out, b.p, b.len);
                    hk_free(b.p);
                }
        }
    } else if (is(c, 1, "count-failure-reports") && c->argc == 3) {
        struct node *n = lookup(c->argv[2], c->argvlen[2]);
        if (!n)
            reply_errorf(&c->out, "ERR Unknown node %.*s", (int)c->argvlen[2], c->argv[2]);
        else
            reply_int(&c->out, reports_count(n));
    } else if (is(c, 1, "bumpepoch") && c->argc == 2) {
        if (bump_epoch_alone()) {
            todo_save = todo_fsync = 1;
            save_config();
            char line[64];
            snprintf(line, sizeof(line), "BUMPED %llu", (unsigned long long)myself->config_epoch);
            reply_status(&c->out, line);
        } else {
            char line[64];
            snprintf(line, sizeof(line), "STILL %llu", (unsigned long long)myself->config_epoch);
            reply_status(&c->out, line);
        }
    } else if (is(c, 1, "set-config-epoch") && c->argc == 3) {
        long long e;
        if (arg_num(c, 2, &e) < 0) {
            reply_error(&c->out, "ERR value is not an integer or out of range");
        } else if (e < 0) {
            reply_errorf(&c->out, "ERR Invalid config epoch specified: %lld", e);
        } else if (nnodes > 1) {
            reply_error(&c->out, "ERR The user can assign a config epoch only when the node does not know any other "
                                 "node.");
        } else if (myself->config_epoch != 0) {
            reply_error(&c->out, "ERR Node config epoch is already non-zero");
        } else {
            myself->config_epoch = (uint64_t)e;
            if ((uint64_t)e > current_epoch)
                current_epoch = (uint64_t)e;
            todo_save = todo_state = todo_fsync = 1;
            save_config();
            reply_ok(&c->out);
        }
    } else if (is(c, 1, "failover") && c->argc <= 3) {
        int force = c->argc == 3 && is(c, 2, "force"), takeover = c->argc == 3 && is(c, 2, "takeover");
        if (c->argc == 3 && !force && !takeover) {
            reply_error(&c->out, "ERR syntax error");
        } else if (myself->flags & NF_MASTER) {
            reply_error(&c->out, "ERR You should send CLUSTER FAILOVER to a replica");
        } else if (!myself->master) {
            reply_error(&c->out, "ERR I'm a replica but my master is unknown to me");
        } else if (!force && !takeover && ((myself->master->flags & NF_FAIL) || !myself->master->link)) {
            reply_error(&c->out, "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
        } else if (takeover) {
            /* No election: a new epoch of our own, and the slots. */
            current_epoch++;
            myself->config_epoch = current_epoch;
            todo_fsync = 1;
            log_msg(LL_NOTICE, "Taking over the master (user request).");
            promote_myself();
            reply_ok(&c->out);
        } else {
            /* FORCE: an election at once (masters vote although the
             * master is alive).  The default: MFSTART to the master,
             * which pauses its writes and sends its offset; the election
             * starts once this replica has all of it (handle_failover). */
            mf_end = time_ms() + 5000;
            mf_force = force;
            mf_master_off = -1;
            fo_time = 0;
            if (!force) {
                unsigned char buf[HDR_LEN];
                build_hdr(buf, T_MFSTART, HDR_LEN);
                link_send(myself->master->link, buf, HDR_LEN, T_MFSTART);
            }
            log_msg(LL_NOTICE, "Manual failover user request accepted.");
            reply_ok(&c->out);
        }
    } else if (is(c, 1, "setslot") && c->argc >= 4) {
        cmd_setslot(c);
    } else if (is(c, 1, "saveconfig") && c->argc == 2) {
        if (save_config() == 0)
            reply_ok(&c->out);
        else
            reply_errorf(&c->out, "ERR error saving the cluster node config: %s", strerror(errno));
    } else if (is(c, 1, "reset") && c->argc <= 3) {
        if (c->argc == 3 && !is(c, 2, "hard") && !is(c, 2, "soft"))
            reply_error(&c->out, "ERR syntax error");
        else
            cmd_reset(c, c->argc == 3 && is(c, 2, "hard"));
    } else if (is(c, 1, "links") && c->argc == 2) {
        int k = 0;
        for (struct link *l = links; l; l = l->next)
            k += l->node != NULL;
        reply_array(&c->out, k);
        for (struct link *l = links; l; l = l->next) {
            if (!l->node)
                continue;
            reply_map(&c->out, 6);
            reply_bulk_cstr(&c->out, "direction");
            reply_bulk_cstr(&c->out, l->inbound ? "from" : "to");
            reply_bulk_cstr(&c->out, "node");
            reply_bulk(&c->out, l->node->name, NAMELEN);
            reply_bulk_cstr(&c->out, "create-time");
            reply_int(&c->out, l->ctime);
            reply_bulk_cstr(&c->out, "events");
            reply_bulk_cstr(&c->out, l->slen > l->soff ? "rw" : "r");
            reply_bulk_cstr(&c->out, "send-buffer-allocated");
            reply_int(&c->out, (long long)l->scap);
            reply_bulk_cstr(&c->out, "send-buffer-used");
            reply_int(&c->out, (long long)(l->slen - l->soff));
        }
    } else {
        char up[64];
        size_t n = 0;
        for (; n < c->argvlen[1] && n < sizeof(up) - 1; n++)
            up[n] = (char)toupper((unsigned char)c->argv[1][n]);
        up[n] = 0;
        reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try CLUSTER HELP.",
                     up);
    }
out:
    req_pport = 0;
    pthread_mutex_unlock(&cl_mu);
}

void asking_command(struct client *c)
{
    if (!need_cluster(c))
        return;
    c->flags |= CF_ASKING;
    reply_ok(&c->out);
}

void readonly_command(struct client *c)
{
    if (!need_cluster(c))
        return;
    c->flags |= CF_CLUSTER_READONLY;
    reply_ok(&c->out);
}

void readwrite_command(struct client *c)
{
    if (!need_cluster(c))
        return;
    c->flags &= ~CF_CLUSTER_READONLY;
    reply_ok(&c->out);
}

/* ------------------------------------------------------------ fuzzing --- */
/* One bus message (tests/fuzz/fuzz_bus.c), as if it arrived whole on a
 * link: outbound from a known master A, or inbound (sender unknown until
 * its name is read) when bit 0 of the header's first reserved byte (offset
 * 2216, ignored by the protocol) is set.  The view is rebuilt for each
 * message: myself, A (a master with slots 0-8191), B (A's replica), C (a
 * master in handshake).  The declared total length is set to the input's
 * (framing is link_read's, checked by the length checks in process()). */
void cluster_fuzz_message(const unsigned char *p, size_t n)
{
    static const char na[NAMELEN] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    static const char nb[NAMELEN] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    fuzzing = 1;
    cluster_on = 1;
    pthread_mutex_lock(&cl_mu);
    myself = NULL; /* deleted with the others (never in a real server) */
    while (nnodes)
        node_del(nodes[nnodes - 1]);
    memset(slot_owner, 0, sizeof(slot_owner));
    nblack = 0;
    current_epoch = 5;
    last_vote_epoch = 0;
    myself = node_new(NULL, NF_MYSELF | NF_MASTER);
    myself->config_epoch = 3;
    node_add(myself);
    struct node *a = node_new(na, NF_MASTER), *b = node_new(nb, NF_SLAVE), *hc = node_new(NULL, NF_HANDSHAKE);
    snprintf(a->ip, sizeof(a->ip), "127.0.0.1");
    a->port = 7000;
    a->cport = 17000;
    a->config_epoch = 4;
    b->master = a;
    snprintf(hc->ip, sizeof(hc->ip), "127.0.0.2");
    node_add(a);
    node_add(b);
    node_add(hc);
    for (int j = 0; j < CLUSTER_SLOTS / 2; j++)
        add_slot(a, j);
    for (int j = CLUSTER_SLOTS / 2; j < CLUSTER_SLOTS; j++)
        add_slot(myself, j);
    csize = 2;
    if (n >= 8) {
        int inbound = n > 2216 && (p[2216] & 1);
        struct link *l = link_new(-1, inbound);
        if (!inbound) {
            l->node = a;
            a->link = l;
        }
        l->rbuf = hk_malloc(n);
        l->rcap = l->rlen = n;
        memcpy(l->rbuf, p, n);
        put32(l->rbuf + 4, (uint32_t)n);
        if (n >= HDR_LEN && process(l) < 0)
            l = NULL;
        if (l)
            link_free(l);
    }
    update_state();
    pthread_mutex_unlock(&cl_mu);
}
