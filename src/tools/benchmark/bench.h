/* bench.h - the shared types of hotkv-benchmark: configuration, steps,
 * connections, worker threads and the engine that drives them.
 *
 * Threads: main parses options, then for every step fills engine->step and
 * wakes the workers; each worker runs an epoll loop over its own
 * connections until the step is over and drained, then reports.  Workers
 * share only the engine's atomics (request quota, sequential keys, pub/sub
 * delivery counts, the fatal flag) and, when the progress display is on,
 * their "live" histogram behind a mutex.  All times are CLOCK_MONOTONIC ns. */
#ifndef HK_BM_BENCH_H
#define HK_BM_BENCH_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "cluster.h"
#include "hist.h"
#include "keydist.h"
#include "rparse.h"
#include "workload.h"

enum { BM_CLOSED = 0, BM_OPEN, BM_PUBSUB };
enum { STEP_CONNECT = 0, STEP_PRELOAD, STEP_WARMUP, STEP_MEASURE };

struct bm_config {
    const char *host;
    int port;
    const char *user;
    const char *password;
    int db;
    int resp;
    int threads;
    int clients;                /* total connections (not per thread) */
    int pipeline;
    double test_time;           /* seconds, 0 = unset */
    uint64_t requests;          /* 0 = unset */
    const char *command;
    const char *workload;
    unsigned ratio_set, ratio_get;
    int have_ratio;
    size_t data_size;
    uint64_t key_space;
    int key_pattern;
    double zipf_s;
    uint64_t seed;
    int preload;
    const char *preload_command;
    double rate;                /* 0 = closed loop */
    double *sweep;
    int nsweep;
    int runs;
    const char *json_path;
    int quiet;
    double warmup;
    int pubsub;
    int publishers, subscribers, channels;
    size_t payload;
    size_t max_outstanding;     /* per connection, open loop */
    double drain_timeout;       /* seconds */
    double connect_timeout;     /* seconds */
    int progress;               /* live line on stderr */
    int ncpu;                   /* CPUs this process may run on */
    int cluster;                /* --cluster: route by slot to the masters */
};

struct bm_step {
    int kind;                   /* STEP_* */
    int mode;                   /* BM_CLOSED, BM_OPEN, BM_PUBSUB */
    double rate;                /* open / pubsub: total per second */
    uint64_t requests;          /* closed: total requests, 0 = time bound */
    uint64_t t0;                /* start of the step */
    uint64_t duration_ns;       /* time bound: length of the window (set by the caller) */
    uint64_t t_end;             /* t0 + duration_ns, or UINT64_MAX (set by the engine) */
    int pipeline;
    const struct bm_workload *wl;
    int preload;                /* key index = request number */
};

/* What one worker saw during one step. */
struct bm_wres {
    uint64_t completed;         /* replies to this step's requests (errors included) */
    uint64_t in_window;         /* ... received before the window closed */
    uint64_t errors;            /* error replies */
    uint64_t lost;              /* requests never answered (disconnect, drain timeout) */
    uint64_t disconnects;
    uint64_t sent;
    uint64_t published;         /* pub/sub: PUBLISH sent */
    uint64_t delivered;         /* pub/sub: messages received by subscribers */
    uint64_t last_reply;        /* time of the last reply */
    uint64_t cpu_ns;            /* this thread's CPU time over the step */
    uint64_t moved, ask;        /* --cluster: redirects followed */
    uint64_t tryagain, clusterdown; /* --cluster: such error replies (in errors) */
    char first_error[160];
    char first_disconnect[160];
};

/* --cluster: what one worker saw at one node during one step. */
struct bm_nstat {
    struct hist *hist;
    uint64_t completed, in_window, errors, lost, moved, ask;
};

/* --cluster: what an outstanding request was, to send it again after a
 * redirect (the template and its key index), or an ASKING. */
#define BM_RQ_ASKING 1u
#define BM_MAX_REDIRECTS 5
struct bm_req {
    uint64_t key;
    uint32_t tmpl;
    uint16_t flags;
    uint16_t redirects;
};

/* CS_UNUSED: --cluster, a node this logical client has not needed yet. */
enum { CS_DEAD = 0, CS_CONNECTING, CS_HANDSHAKE, CS_READY, CS_UNUSED };
enum { ROLE_CLIENT = 0, ROLE_PUBLISHER, ROLE_SUBSCRIBER };

struct bm_conn {
    int fd;
    int state;
    int role;
    int id;                     /* global connection number */
    int sid;                    /* schedule slot (clients, publishers) */
    int want_out;               /* EPOLLOUT registered */
    char *wbuf;
    size_t wlen, wpos, wcap;
    char *rbuf;
    size_t rlen, rpos, rcap;
    struct bm_rparser rp;
    uint64_t *ts;               /* send (intended) times of outstanding requests */
    size_t ts_cap, ts_head, ts_count;
    int hs_left;                /* handshake replies still expected */
    char *sub_cmd;              /* subscriber: its SUBSCRIBE command */
    size_t sub_len;
    int sub_n;
    uint64_t k;                 /* open loop: next slot */
    int cycle_pos;
    uint64_t reconnect_at;
    int ever_ready;
    /* --cluster: a logical client is a group of maxn connections, one per
     * node, at conns[grp .. grp+maxn-1]; the first (node 0) carries the
     * client's schedule (sid, k, cycle_pos) and gout, the requests of the
     * whole group outstanding.  rq runs parallel to ts. */
    int node;
    int grp;
    size_t gout;
    struct bm_req *rq;
};

struct bm_engine;

struct bm_worker {
    int id;
    struct bm_engine *eng;
    pthread_t th;
    int epfd, tfd;
    uint64_t tfd_armed;
    struct bm_conn *conns;
    int nconns;
    int ndead;                  /* connections in CS_DEAD */
    int *sched;                 /* conns that send on a schedule, by sid */
    int nsched;
    int cursor;
    struct bm_keygen kg;
    struct hist *hist;          /* this step */
    struct hist *lag;           /* open loop: actual - intended send time */
    struct hist *live;          /* progress: since the last publication */
    struct hist *live_pub;      /* published for the main thread, under live_mu */
    pthread_mutex_t live_mu;
    uint64_t live_at;
    _Atomic uint64_t prog_done, prog_errors;
    struct bm_wres res;
    struct bm_nstat *ns;        /* --cluster: per node (maxn) */
    struct bm_step st;
    int sending;
};

struct bm_engine {
    const struct bm_config *cfg;
    struct bm_worker *w;
    int nw;
    int nconns;
    int nsched_total;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char *hs;                   /* handshake bytes sent on every connection */
    size_t hs_len;
    int hs_replies;
    pthread_mutex_t mu;
    pthread_cond_t cv_go, cv_done;
    int gen, ndone, quit;
    struct bm_step step;
    _Atomic uint64_t issued;    /* closed loop: requests claimed this step */
    _Atomic uint64_t seq;       /* sequential key pattern */
    _Atomic uint64_t ps_expected, ps_delivered;
    _Atomic int64_t ps_outstanding;
    _Atomic int fatal;
    char fatal_msg[512];
    struct bm_workload *workload; /* for the connect step's idle conns */
    int cluster;                /* --cluster */
    int maxn;                   /* --cluster: connections per logical client */
    struct bm_cluster cl;
};

/* --cluster: one node's figures of a step (report.c). */
struct bm_node_result {
    char name[300];
    double achieved_rps;
    uint64_t requests, errors, error_replies, lost, moved, ask;
    double p50_ms, p90_ms, p99_ms, p999_ms, max_ms, mean_ms;
};

/* One measured step, all workers merged (report.c). */
struct bm_result {
    int run;                    /* 1-based */
    int step;                   /* 1-based index within the run */
    int mode;
    double requested_rps;       /* 0 in closed loop */
    double achieved_rps;
    int held;                   /* 1, 0, or -1 (closed loop: not applicable) */
    uint64_t requests;          /* replies (pub/sub: deliveries) measured */
    uint64_t in_window;
    uint64_t errors;            /* error replies + lost requests */
    uint64_t error_replies;
    uint64_t lost;
    uint64_t disconnects;
    uint64_t sent;
    uint64_t published;
    double duration_s;          /* measured window */
    double wall_s;              /* window + drain */
    double p50_ms, p90_ms, p99_ms, p999_ms, p9999_ms, max_ms, min_ms, mean_ms;
    double send_lag_p99_ms;     /* open loop: how late the generator sent */
    double send_lag_max_ms;
    double cpu_pct;             /* process CPU / (wall * cores) */
    double thread_cpu_max_pct;  /* busiest worker thread */
    int cores;
    int saturated;              /* generator above 85% */
    char first_error[160];
    char first_disconnect[160];
    /* --cluster only (nnodes = 0 otherwise) */
    int nnodes;
    struct bm_node_result *nodes; /* malloc'd; bm_result_free() */
    uint64_t moved, ask, tryagain, clusterdown;
};

#define BM_SATURATED_PCT 85.0

void bm_result_fill(struct bm_result *r, const struct bm_engine *e, const struct bm_step *st,
                    const struct hist *h, const struct hist *lag, uint64_t wall_ns,
                    double cpu_s);
void bm_result_free(struct bm_result *r);
void bm_print_cluster(FILE *f, const struct bm_result *res, int n);
void bm_print_banner(FILE *f, const struct bm_config *cfg, const struct bm_workload *wl);
void bm_print_table(FILE *f, const struct bm_result *res, int n, int sweep);
void bm_print_summary(FILE *f, const struct bm_result *res, int n, int nsteps, int runs);
void bm_print_notes(FILE *f, const struct bm_result *res, int n);
int bm_write_json(const char *path, const struct bm_config *cfg, const struct bm_workload *wl,
                  const char *cmdline, const struct bm_result *res, int n, int nsteps,
                  int runs, char *err, size_t errcap);

/* Set up connections and threads and connect everyone (a STEP_CONNECT).
 * Returns 0, or -1 with the reason in err. */
int bm_engine_start(struct bm_engine *e, const struct bm_config *cfg, char *err, size_t errcap);
/* Run one step; progress(ctx) is called about every 250 ms while it runs.
 * Returns 0, or -1 if a fatal error stopped it (e->fatal_msg). */
int bm_engine_step(struct bm_engine *e, struct bm_step *st, void (*progress)(void *), void *ctx);
void bm_engine_stop(struct bm_engine *e);

#endif
