/* main.c - hotkv-benchmark: command line, the sequence of steps (connect,
 * preload, warm-up, then every rate of every run), the live progress line
 * and the final report.  The engine (engine.c) does the I/O; report.c
 * prints.  Documentation: docs/benchmarks/hotkv-benchmark.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "stamp.h"

static void usage(FILE *f)
{
    fprintf(f,
"Usage: hotkv-benchmark [options]\n"
"\n"
"Load generator for Redis-compatible servers: closed loop (throughput) or open\n"
"loop (fixed rate, latency from each request's intended send time).\n"
"\n"
"Server:\n"
"  -h HOST                 server host (default 127.0.0.1)\n"
"  -p PORT                 server port (default 6379)\n"
"  -a PASSWORD             AUTH password        --user USER   ACL user for AUTH\n"
"  --db N                  SELECT N on every connection (default 0)\n"
"  --resp 2|3              protocol; 3 sends HELLO 3 (default 2)\n"
"  --cluster               Redis Cluster: -h/-p is a seed node; CLUSTER SLOTS finds the\n"
"                          masters, each client gets a connection to every master,\n"
"                          each request goes to its key's owner (MOVED/ASK followed)\n"
"Load:\n"
"  --threads N             worker threads, one epoll loop each (default 1)\n"
"  --clients N, -c N       connections in TOTAL, spread over the threads (default 50)\n"
"  --pipeline N, -P N      closed loop: requests outstanding per connection (default 1)\n"
"  --requests N, -n N      closed loop: total requests (default 100000 when no --test-time)\n"
"  --test-time SECONDS     length of each step (default 10 in open loop)\n"
"  --rate R                open loop: total requests/s, e.g. 50000 or 50k or 1.5M\n"
"  --sweep R1,R2,...       open loop: one step per rate, each --test-time long\n"
"  --runs N                repeat everything N times (default 1); summary over runs\n"
"  --warmup SECONDS        unmeasured load before the first step (default 0)\n"
"Workload:\n"
"  --workload NAME         one of %s (default get)\n"
"  --command 'TEMPLATE'    any command; __rand_int__ = key index (12 digits), __data__ = value\n"
"  --ratio SET:GET         mix of SET and GET, e.g. 1:10\n"
"  --data-size BYTES, -d   value size for __data__ (default 3)\n"
"  --key-space N, -r N     key indexes 0..N-1 (default 1000000)\n"
"  --key-pattern P         uniform | sequential | zipf (default uniform)\n"
"  --zipf-s S              Zipf exponent (default 0.99)\n"
"  --seed N                random seed (default 1)\n"
"  --preload               SET every key of the key space before measuring\n"
"  --preload-command T     template used by --preload (default 'SET key:__rand_int__ __data__')\n"
"Pub/sub (fixed rate, latency from publish time to delivery):\n"
"  --pubsub --publishers P --subscribers S --channels C --payload B --rate R\n"
"                          defaults 1 / 1 / 1 / 128 bytes / 10000 msgs/s\n"
"Output:\n"
"  --json FILE             write every figure as JSON\n"
"  --quiet, -q             only the result table (no banner, no progress)\n"
"  --no-progress           no live line on stderr (it only shows on a terminal)\n"
"Limits:\n"
"  --max-outstanding N     open loop: requests in flight per connection (default 100000)\n"
"  --drain-timeout S       wait for outstanding replies after a step (default 10)\n"
"  --connect-timeout S     give up connecting after S seconds (default 2)\n"
"  --help                  this text\n",
            bm_named_list());
}

enum {
    O_THREADS = 1000, O_CLIENTS, O_PIPELINE, O_TEST_TIME, O_REQUESTS, O_COMMAND, O_WORKLOAD,
    O_RATIO, O_DATA_SIZE, O_KEY_SPACE, O_KEY_PATTERN, O_PRELOAD, O_RATE, O_SWEEP, O_RUNS,
    O_RESP, O_JSON, O_HELP, O_DB, O_ZIPF_S, O_PUBSUB, O_PUBLISHERS, O_SUBSCRIBERS, O_CHANNELS,
    O_PAYLOAD, O_QUIET, O_WARMUP, O_SEED, O_PRELOAD_CMD, O_USER, O_MAX_OUT, O_DRAIN,
    O_CONNECT_TIMEOUT, O_NO_PROGRESS, O_CLUSTER,
};

static const struct option long_opts[] = {
    {"threads", required_argument, 0, O_THREADS},
    {"clients", required_argument, 0, O_CLIENTS},
    {"pipeline", required_argument, 0, O_PIPELINE},
    {"test-time", required_argument, 0, O_TEST_TIME},
    {"requests", required_argument, 0, O_REQUESTS},
    {"command", required_argument, 0, O_COMMAND},
    {"workload", required_argument, 0, O_WORKLOAD},
    {"ratio", required_argument, 0, O_RATIO},
    {"data-size", required_argument, 0, O_DATA_SIZE},
    {"key-space", required_argument, 0, O_KEY_SPACE},
    {"key-pattern", required_argument, 0, O_KEY_PATTERN},
    {"preload", no_argument, 0, O_PRELOAD},
    {"preload-command", required_argument, 0, O_PRELOAD_CMD},
    {"rate", required_argument, 0, O_RATE},
    {"sweep", required_argument, 0, O_SWEEP},
    {"runs", required_argument, 0, O_RUNS},
    {"resp", required_argument, 0, O_RESP},
    {"json", required_argument, 0, O_JSON},
    {"help", no_argument, 0, O_HELP},
    {"db", required_argument, 0, O_DB},
    {"zipf-s", required_argument, 0, O_ZIPF_S},
    {"pubsub", no_argument, 0, O_PUBSUB},
    {"publishers", required_argument, 0, O_PUBLISHERS},
    {"subscribers", required_argument, 0, O_SUBSCRIBERS},
    {"channels", required_argument, 0, O_CHANNELS},
    {"payload", required_argument, 0, O_PAYLOAD},
    {"quiet", no_argument, 0, O_QUIET},
    {"warmup", required_argument, 0, O_WARMUP},
    {"seed", required_argument, 0, O_SEED},
    {"user", required_argument, 0, O_USER},
    {"max-outstanding", required_argument, 0, O_MAX_OUT},
    {"drain-timeout", required_argument, 0, O_DRAIN},
    {"connect-timeout", required_argument, 0, O_CONNECT_TIMEOUT},
    {"no-progress", no_argument, 0, O_NO_PROGRESS},
    {"cluster", no_argument, 0, O_CLUSTER},
    {0, 0, 0, 0},
};

static void die(const char *fmt, const char *a)
{
    fprintf(stderr, "hotkv-benchmark: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    exit(2);
}

/* Unsigned integer with an optional k/m/g suffix (x1000). */
static uint64_t parse_u64(const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        die("bad number for %s", what);
    if (*end == 'k' || *end == 'K')
        v *= 1e3, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1e6, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1e9, end++;
    if (*end || v < 0 || v > 1.8e19 || v != floor(v))
        die("bad number for %s", what);
    return (uint64_t)v;
}

static int parse_int(const char *s, const char *what, int lo, int hi)
{
    uint64_t v = parse_u64(s, what);
    if (v < (uint64_t)lo || v > (uint64_t)hi) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%%s must be between %d and %d", lo, hi);
        die(msg, what);
    }
    return (int)v;
}

static double parse_double(const char *s, const char *what, int allow_suffix)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        die("bad number for %s", what);
    if (allow_suffix && (*end == 'k' || *end == 'K'))
        v *= 1e3, end++;
    else if (allow_suffix && (*end == 'm' || *end == 'M'))
        v *= 1e6, end++;
    if (*end || !isfinite(v) || v < 0)
        die("bad number for %s", what);
    return v;
}

static int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- live progress ---- */

struct progress {
    struct bm_engine *e;
    const char *label;
    uint64_t start, last_t, last_done;
    struct hist *acc;
    int shown;
};

static void progress_cb(void *arg)
{
    struct progress *p = arg;
    struct bm_engine *e = p->e;
    uint64_t now = bm_now_ns(), done = 0, errs = 0;
    for (int i = 0; i < e->nw; i++) {
        struct bm_worker *w = &e->w[i];
        done += atomic_load_explicit(&w->prog_done, memory_order_relaxed);
        errs += atomic_load_explicit(&w->prog_errors, memory_order_relaxed);
        if (w->live_pub) {
            pthread_mutex_lock(&w->live_mu);
            hist_merge(p->acc, w->live_pub);
            hist_reset(w->live_pub);
            pthread_mutex_unlock(&w->live_mu);
        }
    }
    double dt = (double)(now - p->last_t) / 1e9;
    double rate = dt > 0 ? (double)(done - p->last_done) / dt : 0;
    fprintf(stderr, "\r\033[K%s %.1fs: %.0f/s, p50 %.3f ms, p99 %.3f ms, errors %llu",
            p->label, (double)(now - p->start) / 1e9, rate,
            (double)hist_percentile(p->acc, 50) / 1e6, (double)hist_percentile(p->acc, 99) / 1e6,
            (unsigned long long)errs);
    fflush(stderr);
    hist_reset(p->acc);
    p->last_t = now;
    p->last_done = done;
    p->shown = 1;
}

/* Run a step and merge its histograms into h. */
static int run_step(struct bm_engine *e, struct bm_step *st, const struct bm_config *cfg,
                    const char *label, struct hist *h, struct hist *lag, uint64_t *wall_ns,
                    double *cpu_s)
{
    struct progress p = {0};
    int use_progress = cfg->progress;
    for (int i = 0; i < e->nw; i++) {
        atomic_store(&e->w[i].prog_done, 0);
        atomic_store(&e->w[i].prog_errors, 0);
    }
    if (use_progress) {
        p.e = e;
        p.label = label;
        p.start = p.last_t = bm_now_ns() + 20000000ull;
        p.acc = hist_new();
    }
    double c0 = cpu_seconds();
    int rc = bm_engine_step(e, st, use_progress ? progress_cb : NULL, &p);
    uint64_t end = bm_now_ns();
    *cpu_s = cpu_seconds() - c0;
    *wall_ns = end > st->t0 ? end - st->t0 : 1;
    if (use_progress) {
        if (p.shown)
            fprintf(stderr, "\r\033[K");
        hist_free(p.acc);
    }
    hist_reset(h);
    hist_reset(lag);
    for (int i = 0; i < e->nw; i++) {
        hist_merge(h, e->w[i].hist);
        hist_merge(lag, e->w[i].lag);
    }
    return rc;
}

static char *join_args(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) * 4 + 3;
    char *s = malloc(n), *o = s;
    if (!s)
        abort();
    for (int i = 0; i < argc; i++) {
        int quote = strpbrk(argv[i], " \t'\"$\\*?") != NULL || !argv[i][0];
        if (i)
            *o++ = ' ';
        if (quote)
            *o++ = '\'';
        for (const char *a = argv[i]; *a; a++) {
            if (*a == '\'' && quote) {
                memcpy(o, "'\\''", 4);
                o += 4;
            } else {
                *o++ = *a;
            }
        }
        if (quote)
            *o++ = '\'';
    }
    *o = 0;
    return s;
}

int main(int argc, char **argv)
{
    struct bm_config cfg = {
        .host = "127.0.0.1", .port = 6379, .resp = 2, .threads = 1, .clients = 50,
        .pipeline = 1, .data_size = 3, .key_space = 1000000, .key_pattern = KP_UNIFORM,
        .zipf_s = 0.99, .seed = 1, .runs = 1, .publishers = 1, .subscribers = 1,
        .channels = 1, .payload = 128, .max_outstanding = 100000, .drain_timeout = 10,
        .connect_timeout = 2,
    };
    int no_progress = 0, pipeline_set = 0;
    char err[512];
    int opt;

    signal(SIGPIPE, SIG_IGN);
    while ((opt = getopt_long(argc, argv, "h:p:a:c:n:P:d:r:q", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'h': cfg.host = optarg; break;
        case 'p': cfg.port = parse_int(optarg, "-p", 1, 65535); break;
        case 'a': cfg.password = optarg; break;
        case O_USER: cfg.user = optarg; break;
        case O_DB: cfg.db = parse_int(optarg, "--db", 0, 1000000); break;
        case O_RESP: cfg.resp = parse_int(optarg, "--resp", 2, 3); break;
        case O_THREADS: cfg.threads = parse_int(optarg, "--threads", 1, 1024); break;
        case 'c':
        case O_CLIENTS: cfg.clients = parse_int(optarg, "--clients", 1, 1000000); break;
        case 'P':
        case O_PIPELINE:
            cfg.pipeline = parse_int(optarg, "--pipeline", 1, 1000000);
            pipeline_set = 1;
            break;
        case O_TEST_TIME:
            cfg.test_time = parse_double(optarg, "--test-time", 0);
            if (cfg.test_time <= 0)
                die("%s must be > 0", "--test-time");
            break;
        case 'n':
        case O_REQUESTS:
            cfg.requests = parse_u64(optarg, "--requests");
            if (!cfg.requests)
                die("%s must be > 0", "--requests");
            break;
        case O_COMMAND: cfg.command = optarg; break;
        case O_WORKLOAD: cfg.workload = optarg; break;
        case O_RATIO: {
            unsigned s, g;
            char extra;
            if (sscanf(optarg, "%u:%u%c", &s, &g, &extra) != 2)
                die("bad --ratio '%s' (want SET:GET, e.g. 1:10)", optarg);
            cfg.ratio_set = s;
            cfg.ratio_get = g;
            cfg.have_ratio = 1;
            break;
        }
        case 'd':
        case O_DATA_SIZE:
            cfg.data_size = (size_t)parse_u64(optarg, "--data-size");
            if (cfg.data_size > 512u * 1024 * 1024)
                die("%s is limited to 512 MB", "--data-size");
            break;
        case 'r':
        case O_KEY_SPACE:
            cfg.key_space = parse_u64(optarg, "--key-space");
            if (cfg.key_space < 1 || cfg.key_space > BM_KEY_MAX + 1)
                die("%s must be between 1 and 10^12", "--key-space");
            break;
        case O_KEY_PATTERN:
            if (!strcmp(optarg, "uniform"))
                cfg.key_pattern = KP_UNIFORM;
            else if (!strcmp(optarg, "sequential"))
                cfg.key_pattern = KP_SEQUENTIAL;
            else if (!strcmp(optarg, "zipf"))
                cfg.key_pattern = KP_ZIPF;
            else
                die("bad --key-pattern '%s' (uniform, sequential or zipf)", optarg);
            break;
        case O_ZIPF_S:
            cfg.zipf_s = parse_double(optarg, "--zipf-s", 0);
            if (cfg.zipf_s <= 0 || cfg.zipf_s > 10)
                die("%s must be in (0, 10]", "--zipf-s");
            break;
        case O_SEED: cfg.seed = parse_u64(optarg, "--seed"); break;
        case O_PRELOAD: cfg.preload = 1; break;
        case O_PRELOAD_CMD: cfg.preload_command = optarg; cfg.preload = 1; break;
        case O_RATE:
            cfg.rate = parse_double(optarg, "--rate", 1);
            if (cfg.rate <= 0)
                die("%s must be > 0", "--rate");
            break;
        case O_SWEEP: {
            char *copy = strdup(optarg), *save = NULL;
            cfg.nsweep = 0;
            cfg.sweep = calloc(strlen(optarg) + 1, sizeof(double));
            if (!copy || !cfg.sweep)
                abort();
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                double r = parse_double(tok, "--sweep", 1);
                if (r <= 0)
                    die("%s rates must be > 0", "--sweep");
                cfg.sweep[cfg.nsweep++] = r;
            }
            if (!cfg.nsweep)
                die("%s wants R1,R2,...", "--sweep");
            free(copy);
            break;
        }
        case O_RUNS: cfg.runs = parse_int(optarg, "--runs", 1, 1000); break;
        case O_JSON: cfg.json_path = optarg; break;
        case 'q':
        case O_QUIET: cfg.quiet = 1; break;
        case O_WARMUP: cfg.warmup = parse_double(optarg, "--warmup", 0); break;
        case O_PUBSUB: cfg.pubsub = 1; break;
        case O_PUBLISHERS: cfg.publishers = parse_int(optarg, "--publishers", 1, 1000000); break;
        case O_SUBSCRIBERS:
            cfg.subscribers = parse_int(optarg, "--subscribers", 1, 1000000);
            break;
        case O_CHANNELS: cfg.channels = parse_int(optarg, "--channels", 1, 1000000); break;
        case O_PAYLOAD:
            cfg.payload = (size_t)parse_u64(optarg, "--payload");
            if (cfg.payload < BM_STAMP_LEN || cfg.payload > 512u * 1024 * 1024)
                die("%s must be at least 16 bytes (the send-time stamp)", "--payload");
            break;
        case O_MAX_OUT:
            cfg.max_outstanding = (size_t)parse_u64(optarg, "--max-outstanding");
            if (!cfg.max_outstanding)
                die("%s must be > 0", "--max-outstanding");
            break;
        case O_DRAIN: cfg.drain_timeout = parse_double(optarg, "--drain-timeout", 0); break;
        case O_CONNECT_TIMEOUT:
            cfg.connect_timeout = parse_double(optarg, "--connect-timeout", 0);
            break;
        case O_NO_PROGRESS: no_progress = 1; break;
        case O_CLUSTER: cfg.cluster = 1; break;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc)
        die("unexpected argument '%s' (see --help)", argv[optind]);

    /* ---- validate and derive ---- */
    if (cfg.test_time > 0 && cfg.requests)
        die("%s: give --test-time or --requests, not both", "options");
    if ((cfg.command != NULL) + (cfg.workload != NULL) + cfg.have_ratio > 1)
        die("%s: give one of --command, --workload and --ratio", "options");
    if (cfg.pubsub && (cfg.command || cfg.workload || cfg.have_ratio || cfg.preload))
        die("%s: --pubsub takes no workload or --preload", "options");
    if (cfg.nsweep && cfg.rate > 0)
        die("%s: give --rate or --sweep, not both", "options");
    if (cfg.cluster && cfg.pubsub)
        die("%s: --pubsub is not supported with --cluster", "options");
    if (cfg.cluster && cfg.db != 0)
        die("%s: a cluster has only database 0 (no --db with --cluster)", "options");
    if (cfg.pubsub && !cfg.nsweep && cfg.rate <= 0)
        cfg.rate = 10000;
    int open_loop = cfg.pubsub || cfg.nsweep || cfg.rate > 0;
    if (open_loop && pipeline_set && !cfg.pubsub)
        fprintf(stderr, "hotkv-benchmark: note: --pipeline is not used in open loop "
                        "(requests go out when due)\n");
    if (open_loop && cfg.requests && cfg.nsweep)
        die("%s: --sweep steps are timed: use --test-time", "options");
    if (!open_loop && !cfg.requests && cfg.test_time <= 0)
        cfg.requests = 100000;
    if (open_loop && !cfg.requests && cfg.test_time <= 0)
        cfg.test_time = 10;
    int nconns = cfg.pubsub ? cfg.publishers + cfg.subscribers : cfg.clients;
    if (cfg.threads > nconns)
        cfg.threads = nconns;
    cfg.ncpu = cpus_allowed();
    cfg.progress = !cfg.quiet && !no_progress && isatty(STDERR_FILENO);

    struct bm_workload wl = {0}, preload_wl = {0};
    if (!cfg.pubsub) {
        int rc;
        if (cfg.have_ratio) {
            rc = bm_workload_ratio(&wl, cfg.ratio_set, cfg.ratio_get, cfg.data_size, err,
                                   sizeof(err));
        } else if (cfg.command) {
            rc = bm_workload_single(&wl, "custom", cfg.command, cfg.data_size, err, sizeof(err));
        } else {
            const char *name = cfg.workload ? cfg.workload : "get";
            const char *text = bm_named_workload(name);
            if (!text) {
                snprintf(err, sizeof(err), "unknown --workload '%s' (one of %s)", name,
                         bm_named_list());
                rc = -1;
            } else {
                char lname[32];
                snprintf(lname, sizeof(lname), "%s", name);
                for (char *q = lname; *q; q++)
                    *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
                rc = bm_workload_single(&wl, lname, text, cfg.data_size, err, sizeof(err));
            }
        }
        if (rc < 0)
            die("%s", err);
        if (cfg.preload &&
            bm_workload_single(&preload_wl, "preload",
                               cfg.preload_command ? cfg.preload_command
                                                   : "SET key:__rand_int__ __data__",
                               cfg.data_size, err, sizeof(err)) < 0)
            die("%s", err);
        if (cfg.cluster &&
            (bm_cluster_check_workload(&wl,
                                       cfg.command ? "--command"
                                       : cfg.have_ratio ? "--ratio" : "--workload",
                                       err, sizeof(err)) < 0 ||
             (cfg.preload &&
              bm_cluster_check_workload(&preload_wl, "--preload-command", err, sizeof(err)) < 0)))
            die("%s", err);
    }

    char *cmdline = join_args(argc, argv);
    if (!cfg.quiet)
        bm_print_banner(stdout, &cfg, &wl);
    fflush(stdout);

    struct bm_engine eng;
    if (bm_engine_start(&eng, &cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "hotkv-benchmark: %s\n", err);
        return 1;
    }
    eng.workload = &wl;
    if (cfg.cluster && !cfg.quiet) {
        printf("  cluster: %d masters", eng.cl.ninitial);
        for (int i = 0; i < eng.cl.ninitial; i++)
            printf("%s%s", i ? ", " : " (", eng.cl.nodes[i].name);
        printf("), a connection to each per client");
        if (eng.cl.uncovered)
            printf(", %d slots served by no master", eng.cl.uncovered);
        printf("\n");
    }
    struct hist *h = hist_new(), *lag = hist_new();
    uint64_t wall_ns;
    double cpu_s;
    int status = 0;

    if (cfg.preload) {
        struct bm_step st = {.kind = STEP_PRELOAD, .mode = BM_CLOSED,
                             .requests = cfg.key_space,
                             .pipeline = cfg.pipeline > 32 ? cfg.pipeline : 32,
                             .wl = &preload_wl, .preload = 1};
        struct bm_result r;
        if (run_step(&eng, &st, &cfg, "preload", h, lag, &wall_ns, &cpu_s) < 0) {
            fprintf(stderr, "hotkv-benchmark: %s\n", eng.fatal_msg);
            bm_engine_stop(&eng); /* join the threads before eng's frame goes */
            hist_free(h);
            hist_free(lag);
            return 1;
        }
        bm_result_fill(&r, &eng, &st, h, lag, wall_ns, cpu_s);
        if (!cfg.quiet)
            printf("preload: %llu keys in %.2f s (%.0f/s), %llu errors%s%s\n",
                   (unsigned long long)r.requests, r.duration_s, r.achieved_rps,
                   (unsigned long long)r.errors, r.first_error[0] ? ", first: " : "",
                   r.first_error);
        if (!cfg.quiet && cfg.cluster) {
            printf("preload per node:");
            for (int k = 0; k < r.nnodes; k++)
                printf("%s %s %llu", k ? "," : "", r.nodes[k].name,
                       (unsigned long long)r.nodes[k].requests);
            printf("; %llu MOVED, %llu ASK\n", (unsigned long long)r.moved,
                   (unsigned long long)r.ask);
        }
        if (r.errors && cfg.quiet)
            fprintf(stderr, "hotkv-benchmark: preload: %llu errors, first: %s\n",
                    (unsigned long long)r.errors, r.first_error);
        bm_result_free(&r);
    }

    int nsteps = cfg.nsweep ? cfg.nsweep : 1;
    double single_rate = cfg.rate;
    int mode = cfg.pubsub ? BM_PUBSUB : open_loop ? BM_OPEN : BM_CLOSED;

    if (cfg.warmup > 0) {
        double rate = cfg.nsweep ? cfg.sweep[0] : single_rate;
        struct bm_step st = {.kind = STEP_WARMUP, .mode = mode, .rate = rate,
                             .duration_ns = (uint64_t)(cfg.warmup * 1e9),
                             .pipeline = cfg.pipeline, .wl = &wl};
        if (run_step(&eng, &st, &cfg, "warm-up", h, lag, &wall_ns, &cpu_s) < 0) {
            fprintf(stderr, "hotkv-benchmark: %s\n", eng.fatal_msg);
            bm_engine_stop(&eng);
            hist_free(h);
            hist_free(lag);
            return 1;
        }
    }

    int nres = 0;
    struct bm_result *res = calloc((size_t)(nsteps * cfg.runs), sizeof(*res));
    if (!res)
        abort();
    if (!cfg.quiet)
        printf("\n");
    for (int run = 1; run <= cfg.runs && !status; run++) {
        for (int i = 0; i < nsteps; i++) {
            double rate = cfg.nsweep ? cfg.sweep[i] : single_rate;
            struct bm_step st = {.kind = STEP_MEASURE, .mode = mode, .rate = rate,
                                 .pipeline = cfg.pipeline, .wl = &wl};
            if (mode == BM_CLOSED && cfg.requests) {
                st.requests = cfg.requests;
            } else {
                double secs = cfg.test_time > 0 ? cfg.test_time : (double)cfg.requests / rate;
                st.duration_ns = (uint64_t)(secs * 1e9);
            }
            char label[64];
            if (mode == BM_CLOSED)
                snprintf(label, sizeof(label), "[run %d]", run);
            else
                snprintf(label, sizeof(label), "[run %d, %.0f/s]", run, rate);
            if (run_step(&eng, &st, &cfg, label, h, lag, &wall_ns, &cpu_s) < 0) {
                fprintf(stderr, "hotkv-benchmark: %s\n", eng.fatal_msg);
                status = 1;
                break;
            }
            struct bm_result *r = &res[nres++];
            bm_result_fill(r, &eng, &st, h, lag, wall_ns, cpu_s);
            r->run = run;
            r->step = i + 1;
            if (!cfg.quiet) {
                /* Each step as it completes; the table follows at the end. */
                if (mode == BM_CLOSED)
                    printf("run %d: %.0f requests/s", run, r->achieved_rps);
                else
                    printf("run %d step %d: requested %.0f/s, achieved %.0f/s (%s)", run, i + 1,
                           r->requested_rps, r->achieved_rps, r->held ? "held" : "NS");
                printf(", p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms, errors %llu",
                       r->p50_ms, r->p99_ms, r->p999_ms, r->max_ms,
                       (unsigned long long)r->errors);
                if (cfg.cluster)
                    printf(", MOVED %llu, ASK %llu", (unsigned long long)r->moved,
                           (unsigned long long)r->ask);
                printf("%s\n", r->saturated ? " (generator saturated)" : "");
                fflush(stdout);
            }
        }
    }
    if (nres) {
        if (!cfg.quiet)
            printf("\n");
        bm_print_table(stdout, res, nres, cfg.nsweep > 0);
        if (cfg.cluster)
            bm_print_cluster(stdout, res, nres);
        if (cfg.runs > 1 || cfg.nsweep > 1)
            bm_print_summary(stdout, res, nres, nsteps, cfg.runs);
        bm_print_notes(stdout, res, nres);
        if (cfg.json_path &&
            bm_write_json(cfg.json_path, &cfg, &wl, cmdline, res, nres, nsteps, cfg.runs, err,
                          sizeof(err)) < 0) {
            fprintf(stderr, "hotkv-benchmark: %s\n", err);
            status = 1;
        }
    }
    fflush(stdout);
    bm_engine_stop(&eng);
    hist_free(h);
    hist_free(lag);
    for (int i = 0; i < nres; i++)
        bm_result_free(&res[i]);
    free(res);
    free(cmdline);
    free(cfg.sweep);
    if (!cfg.pubsub) {
        bm_workload_free(&wl);
        if (cfg.preload)
            bm_workload_free(&preload_wl);
    }
    return status;
}
