/* inproc_scaling.c - in-process GET/SET scaling benchmark: the user-space
 * command path (cmd_execute) on 1 and 2 worker threads, without sockets.
 *
 * What it measures.  The server's objects (everything but src/main.c) are
 * linked in and set up the way server_main() and the worker threads set
 * themselves up (below, "Set-up"); then, for T = 1 and T = 2, T threads
 * each act as worker i: their own struct worker (id i, per-command stats
 * arrays, cur_worker and db_tstats pointing at it, the thread_start hook
 * that registers the propagation counter, the allocator counters), one
 * client bound to it (fd -1, authenticated, default ACL user), and for SECS
 * seconds they run, through cmd_execute(), alternately
 *
 *     SET k v      (16-byte value)        GET k
 *
 * over NKEYS keys per thread (default 100,000), key k taken round-robin.
 * Thread i only uses keys whose hash slot is in the i-th 1/T of the slots
 * (SPLIT=interleaved: slot % T == i), so the
 * threads never touch the same slot lock or slot table: whatever stops
 * T = 2 from doing twice the work of T = 1 is shared state on the command
 * path (atomics, counters, cache lines written by both threads), memory
 * bandwidth or the CPUs themselves, not key contention.  The keys are
 * preloaded (SET by the owning thread, untimed) before the clock starts.
 * After each command the reply buffer is consumed the way client_write()
 * in src/net/worker.c does after a complete write (reply_consume of
 * everything, sent = 0).  Every reply is checked: an error reply ('-') or a
 * reply of an unexpected shape (SET: +OK, GET: the 16-byte bulk) makes the
 * program exit 1.
 *
 * Output: ops/s (commands per second, SET and GET each count one) summed
 * over the threads for T = 1 and T = 2, per-thread rates, and the ratio
 * T2/T1 (2.0 would be perfect scaling).  Thread i is pinned to the i-th
 * CPU the process may run on (CPU i on an unrestricted machine) when the
 * process may run on at least T CPUs; otherwise it runs unpinned.
 *
 * What it does not measure (the worker's work around cmd_execute): socket
 * reads and writes (epoll / io_uring, write(2)), RESP parsing of the query
 * buffer (argv is set directly here), the per-read-batch clock read and
 * parser reset in process_input(), client_output_ready() and the pending
 * write list, the worker's job queue and cron (except that thread 0
 * advances the LRU/LFU clocks every 100 ms as worker 0's cron does).  The
 * client has fd -1, which cmd/acl.c treats as an internal client: it is
 * marked acl_fast without being bound to the default user - the same fast
 * path a real connection of the (all-permitted, nopass) default user takes
 * after its first command.
 *
 * Building and running: bench/inproc_scaling.sh links this file with the
 * objects in build/obj/ (build them first with `make`) into
 * build/inproc-scaling and runs it.  Usage:
 *
 *     bench/inproc_scaling.sh [SECS]            (or SECS=5 bench/...)
 *     build/inproc-scaling [SECS] [NKEYS]       (env SECS / NKEYS too)
 *
 * Argument beats environment beats default (SECS 3, NKEYS 100000).
 * MAXT (default 2, at most 64): the thread counts run are 1, 2, 4, ... up
 * to MAXT (powers of two only), for a many-core machine.
 * ROUNDS (default 3): rounds of one phase per thread count, each on an
 * emptied keyspace; for each T the ratio printed at the end is the median
 * of the rounds' ratios T/1.
 * MODE: mix (SET k then GET k, default), set (SET only) or get (GET only). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/mem.h"
#include "base/util.h"
#include "cmd/acl.h"
#include "cmd/cmd.h"
#include "cmd/evict.h"
#include "cmd/notify.h"
#include "config/config.h"
#include "db/db.h"
#include "db/object.h"
#include "net/client.h"
#include "net/hooks.h"
#include "net/worker.h"
#include "proto/reply.h"
#include "proto/resp.h"
#include "server.h"

#define MAXT_LIMIT 64  /* the most threads MAXT may ask for */
#define VLEN 16         /* value length */
#define KEYMAX 32       /* room for one key name */
#define STOP_CHECK 64   /* SET/GET pairs between looks at the stop flag */
#define CRON_CHECK 1024 /* pairs between looks at the clock (thread 0) */

struct bthread {
    int id, nthreads, cpu; /* cpu: -1 unpinned */
    struct worker *w;
    char *keys;            /* nkeys names, KEYMAX bytes apart */
    size_t *klens;
    size_t nkeys;
    unsigned long long ops; /* out: commands in the timed window */
    double secs;            /* out: this thread's timed window */
    int failed;             /* out: an error / unexpected reply seen */
    char failmsg[160];
};

static pthread_barrier_t start_barrier;
static atomic_int stop_flag;
/* MODE: mix (SET k then GET k, the default), set (SET only), get (GET only). */
static int op_mode;
/* SPLIT: ranges (thread i owns the i-th 1/T of the slots, the default) or
 * interleaved (slot % T == i: neighbouring slots on different threads, the
 * case src/base/lock.h's comment is about). */
static int split_ranges;

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long env_or_arg(int argc, char **argv, int pos, const char *env, long def)
{
    const char *s = argc > pos ? argv[pos] : getenv(env);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0) {
        fprintf(stderr, "inproc-scaling: bad %s '%s' (a positive integer)\n", env, s);
        exit(2);
    }
    return v;
}

/* ------------------------------------------------------------- set-up --- */
/* What server_main() does before the workers start, less what concerns
 * files, sockets and other threads' services (persistence, replication,
 * cluster bus): defaults, the command table and ACL default user, the
 * keyspace, the db/ hooks, eviction and lazy free.  main() of the server
 * calls server_wire() first. */
static void global_setup(void)
{
    server_wire();         /* type_ops, net hooks (cmd/loop.c), script hooks */
    mem_thread_register(); /* the main thread's allocations (base/mem.h) */
    config_defaults();
    cmd_init();            /* ids, lookup table, acl_init (default user), persistence hooks */
    log_set_level(cfg.loglevel);
    if (acl_load_at_startup() < 0) {
        fprintf(stderr, "inproc-scaling: acl_load_at_startup failed\n");
        exit(1);
    }
    server_start_ms = time_ms();
    db_init(cfg.databases); /* slot locks, databases, LRU/LFU clocks */
    notify_init();
    evict_init();
    lazyfree_start();
    mem_publish();
}

/* workers_start() without the sockets, eventfds and threads: the worker
 * array, the features' per-worker tables and the per-command stats. */
static struct worker *workers_setup(int n)
{
    /* struct worker is 64-byte aligned (net/worker.h), as workers_start()
     * allocates it. */
    struct worker *ws = aligned_alloc(_Alignof(struct worker), sizeof(struct worker) * (size_t)n);
    if (!ws)
        abort();
    memset(ws, 0, sizeof(struct worker) * (size_t)n);
    int ncmd = net_hooks.ncommands();
    workers = ws;
    nworkers = n;
    net_hooks.workers_init(n);
    for (int i = 0; i < n; i++) {
        struct worker *w = &ws[i];
        w->id = i;
        w->epfd = w->efd = -1; /* no loop: nothing may post jobs to it */
        pthread_mutex_init(&w->jlock, NULL);
        w->stats.cmd_calls = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_usec = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_rejected = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
        w->stats.cmd_failed = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
    }
    return ws;
}

/* client_alloc() in net/worker.c for a client without a socket. */
static struct client *fake_client(struct worker *w)
{
    struct client *c = hk_calloc(sizeof(*c));
    c->fd = -1;
    c->w = w;
    c->id = atomic_fetch_add(&next_client_id, 1);
    resp_parser_init(&c->parser);
    c->parser.max_bulk = cfg.proto_max_bulk_len;
    reply_init(&c->out);
    c->authenticated = cfg.requirepass == NULL;
    c->parser.authenticated = c->authenticated;
    c->ctime_ms = c->last_ms = time_ms();
    snprintf(c->addr, sizeof(c->addr), "127.0.0.1:0");
    snprintf(c->laddr, sizeof(c->laddr), "127.0.0.1:0");
    c->argv_cap = 16;
    c->argv = hk_malloc(sizeof(*c->argv) * 16);
    c->argvlen = hk_malloc(sizeof(*c->argvlen) * 16);
    c->kslot = hk_malloc(sizeof(*c->kslot) * 16);
    c->next = w->clients;
    if (w->clients)
        w->clients->prev = c;
    w->clients = c;
    w->nclients++;
    atomic_fetch_add(&connected_clients, 1);
    return c;
}

/* client_close() less the socket and the worker's lists. */
static void fake_client_free(struct client *c)
{
    net_hooks.client_gone(c);
    c->w->clients = NULL;
    c->w->nclients = 0;
    atomic_fetch_sub(&connected_clients, 1);
    resp_parser_free(&c->parser);
    reply_free(&c->out);
    if (c->pushbuf) {
        reply_free(c->pushbuf);
        hk_free(c->pushbuf);
    }
    hk_free(c->argv);
    hk_free(c->argvlen);
    hk_free(c->kslot);
    hk_free(c);
}

/* --------------------------------------------------------- the worker --- */
static const char set_name[] = "SET", get_name[] = "GET";

/* Run argv through cmd_execute; 0 if the reply has the expected shape
 * (SET: +OK; GET: a bulk of VLEN bytes), then drop it as client_write does
 * once everything was written. */
static inline int run_cmd(struct bthread *t, struct client *c, int is_set, const char *key, size_t klen,
                          const char *val)
{
    c->argv[0] = is_set ? set_name : get_name;
    c->argvlen[0] = 3;
    c->argv[1] = key;
    c->argvlen[1] = klen;
    c->argc = 2;
    if (is_set) {
        c->argv[2] = val;
        c->argvlen[2] = VLEN;
        c->argc = 3;
    }
    cmd_execute(c);
    int ok = is_set ? (c->out.len == 5 && c->out.buf[0] == '+') /* +OK\r\n */
                    : (c->out.len == 1 + 2 + 2 + VLEN + 2 && c->out.buf[0] == '$');
    if (HK_UNLIKELY(!ok) && !t->failed) {
        t->failed = 1;
        snprintf(t->failmsg, sizeof(t->failmsg), "%s %.*s -> %.*s", is_set ? "SET" : "GET", (int)klen, key,
                 (int)(c->out.len > 100 ? 100 : c->out.len), c->out.buf);
        for (char *p = t->failmsg; *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
    }
    reply_consume(&c->out, c->out.len);
    c->sent = 0;
    return ok ? 0 : -1;
}

static void pin(struct bthread *t)
{
    if (t->cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpu, &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc != 0) {
        fprintf(stderr, "inproc-scaling: pinning thread %d to CPU %d: %s (unpinned)\n", t->id, t->cpu, strerror(rc));
        t->cpu = -1;
    }
}

static void *bthread_main(void *arg)
{
    struct bthread *t = arg;
    struct worker *w = t->w;
    char name[16];

    pin(t);
    /* worker_main()'s start. */
    cur_worker = w;
    db_tstats = &w->stats.db;
    net_hooks.thread_start(w); /* prop_thread_register (persist/prop.h) */
    mem_thread_register();
    snprintf(name, sizeof(name), "hotkv-w%d", w->id);
    pthread_setname_np(pthread_self(), name);
    w->next_cron_ms = time_ms();

    struct client *c = fake_client(w);
    char val[VLEN];
    for (int i = 0; i < VLEN; i++)
        val[i] = (char)('a' + (t->id * 7 + i) % 26);

    /* Preload (untimed), as process_input: the clock read per batch. */
    w->now_us = time_us();
    c->last_ms = w->now_us / 1000;
    for (size_t k = 0; k < t->nkeys; k++)
        run_cmd(t, c, 1, t->keys + k * KEYMAX, t->klens[k], val);
    for (size_t k = 0; k < t->nkeys && !t->failed; k++)
        run_cmd(t, c, 0, t->keys + k * KEYMAX, t->klens[k], val);

    pthread_barrier_wait(&start_barrier);

    unsigned long long pairs = 0;
    size_t k = 0;
    double t0 = now_sec();
    long long next_cron = time_ms() + 100;
    w->now_us = time_us();
    for (;;) {
        for (int j = 0; j < STOP_CHECK; j++) {
            const char *key = t->keys + k * KEYMAX;
            size_t klen = t->klens[k];
            run_cmd(t, c, op_mode != 2, key, klen, val);
            run_cmd(t, c, op_mode == 1, key, klen, val);
            if (++k == t->nkeys)
                k = 0;
        }
        pairs += STOP_CHECK;
        if (atomic_load_explicit(&stop_flag, memory_order_relaxed))
            break;
        /* Worker 0's cron advances the LRU / LFU clocks (every 1/hz s). */
        if (t->id == 0 && pairs % CRON_CHECK == 0) {
            long long now = time_ms();
            if (now >= next_cron) {
                uint32_t lru = lru_clock(), lfu = lfu_minutes_clock();
                if (atomic_load_explicit(&lru_clock_now, memory_order_relaxed) != lru)
                    atomic_store_explicit(&lru_clock_now, lru, memory_order_relaxed);
                if (atomic_load_explicit(&lfu_minutes_now, memory_order_relaxed) != lfu)
                    atomic_store_explicit(&lfu_minutes_now, lfu, memory_order_relaxed);
                next_cron = now + 1000 / (cfg.hz > 0 ? cfg.hz : 10);
            }
        }
    }
    t->secs = now_sec() - t0;
    t->ops = pairs * 2;

    fake_client_free(c);
    net_hooks.thread_exit(w); /* prop_thread_unregister, ... */
    mem_thread_unregister();
    return NULL;
}

/* ---------------------------------------------------------------- keys --- */
/* nkeys names per thread for T threads: thread i gets the candidates
 * "key:<n>" (n = 0, 1, ...) whose slot falls to it (see SPLIT), so T = 1
 * uses the first nkeys candidates and the sets for T = 2 overlap them. */
static void make_keys(struct bthread *th, int T, size_t nkeys)
{
    size_t filled = 0;
    for (int i = 0; i < T; i++) {
        th[i].keys = malloc(nkeys * KEYMAX);
        th[i].klens = malloc(nkeys * sizeof(size_t));
        th[i].nkeys = 0;
        if (!th[i].keys || !th[i].klens) {
            fprintf(stderr, "inproc-scaling: out of memory\n");
            exit(1);
        }
    }
    for (unsigned long n = 0; filled < (size_t)T; n++) {
        char buf[KEYMAX];
        int len = snprintf(buf, sizeof(buf), "key:%lu", n);
        unsigned slot = key_slot(buf, (size_t)len);
        struct bthread *t = &th[split_ranges ? slot / (NSLOTS / (unsigned)T) : slot % (unsigned)T];
        if (t->nkeys == nkeys)
            continue;
        memcpy(t->keys + t->nkeys * KEYMAX, buf, (size_t)len + 1);
        t->klens[t->nkeys++] = (size_t)len;
        if (t->nkeys == nkeys)
            filled++;
    }
}

/* The CPUs this process may run on, in order; returns how many. */
static int allowed_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    for (int i = 0; i < CPU_SETSIZE && n < max; i++)
        if (CPU_ISSET(i, &set))
            cpus[n++] = i;
    return n;
}

static double run_phase(struct worker *ws, int T, size_t nkeys, long secs, int *failed)
{
    struct bthread th[MAXT_LIMIT];
    pthread_t tids[MAXT_LIMIT];
    int cpus[MAXT_LIMIT];
    int ncpu = allowed_cpus(cpus, MAXT_LIMIT);

    memset(th, 0, sizeof(th));
    make_keys(th, T, nkeys);
    atomic_store(&stop_flag, 0);
    pthread_barrier_init(&start_barrier, NULL, (unsigned)T + 1);
    for (int i = 0; i < T; i++) {
        th[i].id = i;
        th[i].nthreads = T;
        th[i].w = &ws[i];
        th[i].cpu = ncpu >= T ? cpus[i] : -1;
        if (pthread_create(&tids[i], NULL, bthread_main, &th[i]) != 0) {
            fprintf(stderr, "inproc-scaling: pthread_create failed\n");
            exit(1);
        }
    }
    pthread_barrier_wait(&start_barrier); /* every thread preloaded */
    struct timespec ts = {.tv_sec = secs, .tv_nsec = 0};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    atomic_store(&stop_flag, 1);
    double total = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(tids[i], NULL);
        double rate = th[i].secs > 0 ? (double)th[i].ops / th[i].secs : 0;
        total += rate;
        printf("  T=%d thread %d (cpu %s%d): %llu ops in %.3f s = %.0f ops/s\n", T, i, th[i].cpu < 0 ? "unpinned " : "",
               th[i].cpu < 0 ? 0 : th[i].cpu, th[i].ops, th[i].secs, rate);
        if (th[i].failed) {
            fprintf(stderr, "inproc-scaling: T=%d thread %d: unexpected reply: %s\n", T, i, th[i].failmsg);
            *failed = 1;
        }
        free(th[i].keys);
        free(th[i].klens);
    }
    pthread_barrier_destroy(&start_barrier);
    printf("T=%d: %.0f ops/s\n", T, total);
    fflush(stdout);
    return total;
}

int main(int argc, char **argv)
{
    const char *mode = getenv("MODE");
    if (mode && !strcmp(mode, "set"))
        op_mode = 1;
    else if (mode && !strcmp(mode, "get"))
        op_mode = 2;
    else if (mode && strcmp(mode, "mix")) {
        fprintf(stderr, "inproc-scaling: MODE is mix, set or get\n");
        return 2;
    }
    const char *split = getenv("SPLIT");
    split_ranges = !split || strcmp(split, "interleaved") != 0;
    long secs = env_or_arg(argc, argv, 1, "SECS", 3);
    long nkeys = env_or_arg(argc, argv, 2, "NKEYS", 100000);
    int failed = 0;
    int maxt = (int)env_or_arg(0, argv, 0, "MAXT", 2);
    if (maxt < 2 || maxt > MAXT_LIMIT) {
        fprintf(stderr, "inproc-scaling: MAXT is 2 .. %d\n", MAXT_LIMIT);
        return 2;
    }
    /* thread counts: powers of two up to MAXT (a power of two divides the
     * slot count, so SPLIT=ranges gives every thread as many slots) */
    int tcount[8], nt = 0;
    for (int T = 1; T <= maxt; T *= 2)
        tcount[nt++] = T;
    double rate[MAXT_LIMIT + 1];

    global_setup();
    struct worker *ws = workers_setup(tcount[nt - 1]);
    printf("inproc-scaling: SET/GET alternating through cmd_execute, %ld s per run, %ld keys per thread, "
           "%d-byte values, %ld CPUs online\n",
           secs, nkeys, VLEN, sysconf(_SC_NPROCESSORS_ONLN));
    /* ROUNDS (default 3): each runs T = 1, 2, 4, ... in turn, each phase on
     * an empty keyspace (so all preload the same number of keys per
     * thread); the ratio reported for each T is the median of the rounds'
     * ratios T/1 (the machine is shared: one CPU's speed can change between
     * phases). */
    long rounds = env_or_arg(0, argv, 3, "ROUNDS", 3);
    if (rounds < 1 || rounds > 99)
        rounds = 3;
    static double ratios[8][100];
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < nt; k++) {
            int T = tcount[k];
            db_flush(0);
            rate[T] = run_phase(ws, T, (size_t)nkeys, secs, &failed);
        }
        for (int k = 1; k < nt; k++) {
            int T = tcount[k];
            ratios[k][r] = rate[1] > 0 ? rate[T] / rate[1] : 0.0;
            printf("round %ld: ratio T=%d/T=1 %.3f\n", r + 1, T, ratios[k][r]);
        }
    }
    for (int k = 1; k < nt; k++) {
        double *rt = ratios[k];
        for (long i = 1; i < rounds; i++)
            for (long j = i; j > 0 && rt[j - 1] > rt[j]; j--) {
                double x = rt[j];
                rt[j] = rt[j - 1];
                rt[j - 1] = x;
            }
        printf("ratio T=%d/T=1: %.3f (median of %ld rounds)\n", tcount[k], rt[rounds / 2], rounds);
    }
    unsigned long long errs = 0;
    for (int i = 0; i < tcount[nt - 1]; i++)
        errs += ws[i].stats.errors;
    if (errs) {
        fprintf(stderr, "inproc-scaling: %llu error replies counted by cmd_execute\n", errs);
        failed = 1;
    }
    lazyfree_stop();
    return failed ? 1 : 0;
}
