/* report.c - the figures of a step and how hotkv-benchmark prints them: the
 * human table, the per-rate summary across runs, warnings, and --json.
 *
 * Definitions (also in docs/benchmarks/hotkv-benchmark.md):
 * - achieved_rps: replies received inside the measured window / window
 *   length (closed loop with --requests: all replies / time to the last);
 *   pub/sub: messages delivered inside the window / window length.
 * - held: open loop and pub/sub only, achieved >= 97% of requested.
 * - generator_cpu_pct: the process's user+system CPU time over the step
 *   (window and drain) / (wall time * cores) * 100, cores = min(worker
 *   threads, CPUs the process may run on): 100 means every generator thread
 *   was busy all the time.  A step is flagged when this or the busiest
 *   thread exceeds 85%. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static double ns_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

/* --cluster: per node, all workers merged; nodes that never answered
 * (spares) are left out. */
static void fill_cluster(struct bm_result *r, const struct bm_engine *e, const struct bm_step *st)
{
    int nn = atomic_load((_Atomic int *)&e->cl.nnodes);
    if (nn > e->maxn)
        nn = e->maxn;
    struct hist *h = hist_new();
    r->nodes = calloc((size_t)nn, sizeof(*r->nodes));
    if (!r->nodes)
        abort();
    for (int i = 0; i < e->nw; i++) {
        r->moved += e->w[i].res.moved;
        r->ask += e->w[i].res.ask;
        r->tryagain += e->w[i].res.tryagain;
        r->clusterdown += e->w[i].res.clusterdown;
    }
    for (int n = 0; n < nn; n++) {
        struct bm_node_result *nr = &r->nodes[r->nnodes];
        uint64_t completed = 0, in_window = 0;
        hist_reset(h);
        memset(nr, 0, sizeof(*nr));
        for (int i = 0; i < e->nw; i++) {
            const struct bm_nstat *ns = &e->w[i].ns[n];
            hist_merge(h, ns->hist);
            completed += ns->completed;
            in_window += ns->in_window;
            nr->error_replies += ns->errors;
            nr->lost += ns->lost;
            nr->moved += ns->moved;
            nr->ask += ns->ask;
        }
        if (n >= e->cl.ninitial && !completed && !nr->lost && !nr->moved && !nr->ask)
            continue;
        snprintf(nr->name, sizeof(nr->name), "%s", e->cl.nodes[n].name);
        nr->requests = completed;
        nr->errors = nr->error_replies + nr->lost;
        nr->achieved_rps = (double)(st->requests ? completed : in_window) / r->duration_s;
        nr->p50_ms = ns_ms(hist_percentile(h, 50));
        nr->p90_ms = ns_ms(hist_percentile(h, 90));
        nr->p99_ms = ns_ms(hist_percentile(h, 99));
        nr->p999_ms = ns_ms(hist_percentile(h, 99.9));
        nr->max_ms = ns_ms(h->total ? h->max : 0);
        nr->mean_ms = hist_mean(h) / 1e6;
        r->nnodes++;
    }
    hist_free(h);
}

void bm_result_fill(struct bm_result *r, const struct bm_engine *e, const struct bm_step *st,
                    const struct hist *h, const struct hist *lag, uint64_t wall_ns,
                    double cpu_s)
{
    const struct bm_config *cfg = e->cfg;
    uint64_t completed = 0, last = st->t0, thread_cpu_max = 0;
    memset(r, 0, sizeof(*r));
    r->mode = st->mode;
    for (int i = 0; i < e->nw; i++) {
        const struct bm_wres *w = &e->w[i].res;
        completed += w->completed;
        r->in_window += w->in_window;
        r->error_replies += w->errors;
        r->lost += w->lost;
        r->disconnects += w->disconnects;
        r->sent += w->sent;
        r->published += w->published;
        if (w->last_reply > last)
            last = w->last_reply;
        if (w->cpu_ns > thread_cpu_max)
            thread_cpu_max = w->cpu_ns;
        if (!r->first_error[0] && w->first_error[0])
            snprintf(r->first_error, sizeof(r->first_error), "%s", w->first_error);
        if (!r->first_disconnect[0] && w->first_disconnect[0])
            snprintf(r->first_disconnect, sizeof(r->first_disconnect), "%s",
                     w->first_disconnect);
    }
    r->errors = r->error_replies + r->lost;
    r->requests = completed;
    uint64_t window = st->requests ? (last > st->t0 ? last - st->t0 : 1) : st->duration_ns;
    if (window == 0)
        window = 1;
    r->duration_s = (double)window / 1e9;
    r->wall_s = (double)wall_ns / 1e9;
    r->achieved_rps = (double)(st->requests ? completed : r->in_window) / r->duration_s;
    if (st->mode == BM_CLOSED) {
        r->requested_rps = 0;
        r->held = -1;
    } else {
        double fanout = 1.0;
        if (st->mode == BM_PUBSUB && cfg->channels < cfg->subscribers)
            fanout = (double)cfg->subscribers / (double)cfg->channels;
        r->requested_rps = st->rate * fanout;
        r->held = r->achieved_rps >= 0.97 * r->requested_rps;
    }
    r->p50_ms = ns_ms(hist_percentile(h, 50));
    r->p90_ms = ns_ms(hist_percentile(h, 90));
    r->p99_ms = ns_ms(hist_percentile(h, 99));
    r->p999_ms = ns_ms(hist_percentile(h, 99.9));
    r->p9999_ms = ns_ms(hist_percentile(h, 99.99));
    r->max_ms = ns_ms(h->total ? h->max : 0);
    r->min_ms = ns_ms(h->total ? h->min : 0);
    r->mean_ms = hist_mean(h) / 1e6;
    r->send_lag_p99_ms = ns_ms(hist_percentile(lag, 99));
    r->send_lag_max_ms = ns_ms(lag->total ? lag->max : 0);
    r->cores = e->nw < cfg->ncpu ? e->nw : cfg->ncpu;
    if (r->cores < 1)
        r->cores = 1;
    if (wall_ns > 0) {
        r->cpu_pct = cpu_s / (r->wall_s * r->cores) * 100.0;
        r->thread_cpu_max_pct = (double)thread_cpu_max / (double)wall_ns * 100.0;
    }
    /* Under half a second, set-up costs dominate: too short to judge. */
    r->saturated = r->wall_s >= 0.5 && (r->cpu_pct > BM_SATURATED_PCT ||
                                        r->thread_cpu_max_pct > BM_SATURATED_PCT);
    if (e->cluster)
        fill_cluster(r, e, st);
}

void bm_result_free(struct bm_result *r)
{
    free(r->nodes);
    r->nodes = NULL;
    r->nnodes = 0;
}

static const char *pattern_name(int p)
{
    return p == KP_SEQUENTIAL ? "sequential" : p == KP_ZIPF ? "zipf" : "uniform";
}

void bm_print_banner(FILE *f, const struct bm_config *cfg, const struct bm_workload *wl)
{
    fprintf(f, "hotkv-benchmark: %s:%d RESP%d", cfg->host, cfg->port, cfg->resp);
    if (cfg->pubsub) {
        fprintf(f, ", pub/sub: %d publishers, %d subscribers, %d channels, %zu-byte payload, ",
                cfg->publishers, cfg->subscribers, cfg->channels, cfg->payload);
        fprintf(f, "%d threads\n", cfg->threads);
        return;
    }
    fprintf(f, ", workload %s", wl->name);
    for (int i = 0; i < wl->nt; i++)
        fprintf(f, "%s%s", i ? " / " : " (", wl->t[i].text);
    fprintf(f, ")\n  %d clients (total) on %d threads, ", cfg->clients, cfg->threads);
    if (cfg->rate > 0 || cfg->nsweep)
        fprintf(f, "open loop, ");
    else
        fprintf(f, "closed loop, pipeline %d, ", cfg->pipeline);
    fprintf(f, "%zu-byte values, %llu keys %s", cfg->data_size,
            (unsigned long long)cfg->key_space, pattern_name(cfg->key_pattern));
    if (cfg->key_pattern == KP_ZIPF)
        fprintf(f, " (s=%g)", cfg->zipf_s);
    fputc('\n', f);
}

static void fmt_rate(char *buf, size_t cap, double v)
{
    if (v <= 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.0f", v);
}

static const char *held_str(int held)
{
    return held < 0 ? "-" : held ? "yes" : "NS";
}

void bm_print_table(FILE *f, const struct bm_result *res, int n, int sweep)
{
    (void)sweep;
    fprintf(f, "%-3s %-4s %11s %11s %4s %10s %7s %9s %9s %9s %9s %9s %9s %5s\n", "run", "step",
            "requested/s", "achieved/s", "held", "requests", "errors", "p50 ms", "p90 ms",
            "p99 ms", "p99.9 ms", "p99.99 ms", "max ms", "cpu%");
    for (int i = 0; i < n; i++) {
        const struct bm_result *r = &res[i];
        char req[32], ach[32];
        fmt_rate(req, sizeof(req), r->requested_rps);
        fmt_rate(ach, sizeof(ach), r->achieved_rps);
        fprintf(f, "%-3d %-4d %11s %11s %4s %10llu %7llu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %4.0f%s\n",
                r->run, r->step, req, ach, held_str(r->held), (unsigned long long)r->requests,
                (unsigned long long)r->errors, r->p50_ms, r->p90_ms, r->p99_ms, r->p999_ms,
                r->p9999_ms, r->max_ms, r->cpu_pct, r->saturated ? "!" : "");
    }
}

void bm_print_cluster(FILE *f, const struct bm_result *res, int n)
{
    fprintf(f, "\nper cluster node (MOVED, ASK: redirects that node answered, each request "
               "then sent again to the node named)\n");
    fprintf(f, "%-3s %-4s %-24s %11s %10s %7s %9s %9s %9s %7s %7s\n", "run", "step", "node",
            "achieved/s", "requests", "errors", "p50 ms", "p99 ms", "max ms", "MOVED", "ASK");
    for (int i = 0; i < n; i++) {
        const struct bm_result *r = &res[i];
        char ach[32];
        for (int k = 0; k < r->nnodes; k++) {
            const struct bm_node_result *nr = &r->nodes[k];
            fmt_rate(ach, sizeof(ach), nr->achieved_rps);
            fprintf(f, "%-3d %-4d %-24s %11s %10llu %7llu %9.3f %9.3f %9.3f %7llu %7llu\n",
                    r->run, r->step, nr->name, ach, (unsigned long long)nr->requests,
                    (unsigned long long)nr->errors, nr->p50_ms, nr->p99_ms, nr->max_ms,
                    (unsigned long long)nr->moved, (unsigned long long)nr->ask);
        }
        fmt_rate(ach, sizeof(ach), r->achieved_rps);
        fprintf(f, "%-3d %-4d %-24s %11s %10llu %7llu %9.3f %9.3f %9.3f %7llu %7llu\n", r->run,
                r->step, "total", ach, (unsigned long long)r->requests,
                (unsigned long long)r->errors, r->p50_ms, r->p99_ms, r->max_ms,
                (unsigned long long)r->moved, (unsigned long long)r->ask);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Per step index across runs: mean and median achieved, mean latencies,
 * held only if every run held. */
struct summary {
    double requested, achieved_mean, achieved_median, p50, p90, p99, p999, max;
    int held, saturated;
    uint64_t errors;
    int runs;
};

static void summarize(const struct bm_result *res, int n, int step, struct summary *s)
{
    double ach[1024];
    int k = 0;
    memset(s, 0, sizeof(*s));
    s->held = 1;
    for (int i = 0; i < n; i++) {
        const struct bm_result *r = &res[i];
        if (r->step != step)
            continue;
        s->requested = r->requested_rps;
        if (k < 1024)
            ach[k] = r->achieved_rps;
        k++;
        s->achieved_mean += r->achieved_rps;
        s->p50 += r->p50_ms;
        s->p90 += r->p90_ms;
        s->p99 += r->p99_ms;
        s->p999 += r->p999_ms;
        s->max += r->max_ms;
        s->errors += r->errors;
        if (r->held < 0)
            s->held = -1;
        else if (!r->held && s->held >= 0)
            s->held = 0;
        s->saturated |= r->saturated;
    }
    s->runs = k;
    if (!k)
        return;
    s->achieved_mean /= k;
    s->p50 /= k;
    s->p90 /= k;
    s->p99 /= k;
    s->p999 /= k;
    s->max /= k;
    int m = k < 1024 ? k : 1024;
    qsort(ach, (size_t)m, sizeof(double), cmp_double);
    s->achieved_median = m % 2 ? ach[m / 2] : (ach[m / 2 - 1] + ach[m / 2]) / 2;
}

void bm_print_summary(FILE *f, const struct bm_result *res, int n, int nsteps, int runs)
{
    fprintf(f, "\nsummary over %d run(s) (latency: mean of the runs; NS = achieved < 97%% of "
               "requested in some run, latency not shown)\n",
            runs);
    fprintf(f, "%-4s %11s %11s %11s %4s %9s %9s %9s %9s %7s\n", "step", "requested/s",
            "achieved/s", "median/s", "held", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms",
            "errors");
    for (int st = 1; st <= nsteps; st++) {
        struct summary s;
        char req[32], ach[32], med[32];
        summarize(res, n, st, &s);
        fmt_rate(req, sizeof(req), s.requested);
        fmt_rate(ach, sizeof(ach), s.achieved_mean);
        fmt_rate(med, sizeof(med), s.achieved_median);
        if (s.held == 0)
            fprintf(f, "%-4d %11s %11s %11s %4s %9s %9s %9s %9s %7llu\n", st, req, ach, med, "NS",
                    "-", "-", "-", "-", (unsigned long long)s.errors);
        else
            fprintf(f, "%-4d %11s %11s %11s %4s %9.3f %9.3f %9.3f %9.3f %7llu%s\n", st, req, ach,
                    med, held_str(s.held), s.p50, s.p90, s.p99, s.p999,
                    (unsigned long long)s.errors, s.saturated ? "  (generator saturated)" : "");
    }
}

void bm_print_notes(FILE *f, const struct bm_result *res, int n)
{
    for (int i = 0; i < n; i++) {
        const struct bm_result *r = &res[i];
        if (r->errors)
            fprintf(f,
                    "run %d step %d: %llu errors (%llu error replies, %llu requests lost)%s%s\n",
                    r->run, r->step, (unsigned long long)r->errors,
                    (unsigned long long)r->error_replies, (unsigned long long)r->lost,
                    r->first_error[0] ? ", first: " : "", r->first_error);
        if (r->disconnects)
            fprintf(f, "run %d step %d: %llu disconnects, first: %s\n", r->run, r->step,
                    (unsigned long long)r->disconnects, r->first_disconnect);
        if (r->mode != BM_CLOSED && r->send_lag_p99_ms > 1.0)
            fprintf(f,
                    "run %d step %d: the generator fell behind its schedule (send lag p99 %.3f "
                    "ms, max %.3f ms); latencies include that delay\n",
                    r->run, r->step, r->send_lag_p99_ms, r->send_lag_max_ms);
        if (r->saturated)
            fprintf(f,
                    "run %d step %d: the generator used %.0f%% of its %d core(s) (busiest thread "
                    "%.0f%%): these figures measure the generator, not the server\n",
                    r->run, r->step, r->cpu_pct, r->cores, r->thread_cpu_max_pct);
    }
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 32 || c >= 127)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else
        fprintf(f, "%.6f", v);
}

static void json_held(FILE *f, int held)
{
    fputs(held < 0 ? "null" : held ? "true" : "false", f);
}

static void json_cluster(FILE *f, const struct bm_result *r)
{
    fprintf(f,
            ",\n     \"cluster\": {\"moved\": %llu, \"ask\": %llu, \"tryagain\": %llu, "
            "\"clusterdown\": %llu, \"nodes\": [",
            (unsigned long long)r->moved, (unsigned long long)r->ask,
            (unsigned long long)r->tryagain, (unsigned long long)r->clusterdown);
    for (int k = 0; k < r->nnodes; k++) {
        const struct bm_node_result *nr = &r->nodes[k];
        fputs(k ? ",\n       {\"node\": " : "\n       {\"node\": ", f);
        json_str(f, nr->name);
        fputs(", \"achieved_rps\": ", f);
        json_num(f, nr->achieved_rps);
        fprintf(f,
                ", \"requests\": %llu, \"errors\": %llu, \"error_replies\": %llu, "
                "\"lost\": %llu, \"moved\": %llu, \"ask\": %llu",
                (unsigned long long)nr->requests, (unsigned long long)nr->errors,
                (unsigned long long)nr->error_replies, (unsigned long long)nr->lost,
                (unsigned long long)nr->moved, (unsigned long long)nr->ask);
        const struct {
            const char *k;
            double v;
        } lat[] = {{"mean_ms", nr->mean_ms}, {"p50_ms", nr->p50_ms}, {"p90_ms", nr->p90_ms},
                   {"p99_ms", nr->p99_ms},   {"p999_ms", nr->p999_ms}, {"max_ms", nr->max_ms}};
        for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
            fprintf(f, ", \"%s\": ", lat[i].k);
            json_num(f, lat[i].v);
        }
        fputs("}", f);
    }
    fputs("]}", f);
}

static void json_result(FILE *f, const struct bm_result *r)
{
    fprintf(f, "    {\"run\": %d, \"step\": %d, \"mode\": \"%s\", ", r->run, r->step,
            r->mode == BM_CLOSED ? "closed" : r->mode == BM_OPEN ? "open" : "pubsub");
    fputs("\"requested_rps\": ", f);
    if (r->mode == BM_CLOSED)
        fputs("null", f);
    else
        json_num(f, r->requested_rps);
    fputs(", \"achieved_rps\": ", f);
    json_num(f, r->achieved_rps);
    fputs(", \"held\": ", f);
    json_held(f, r->held);
    fprintf(f,
            ",\n     \"requests\": %llu, \"requests_in_window\": %llu, \"sent\": %llu, "
            "\"errors\": %llu, \"error_replies\": %llu, \"lost\": %llu, \"disconnects\": %llu",
            (unsigned long long)r->requests, (unsigned long long)r->in_window,
            (unsigned long long)r->sent, (unsigned long long)r->errors,
            (unsigned long long)r->error_replies, (unsigned long long)r->lost,
            (unsigned long long)r->disconnects);
    if (r->mode == BM_PUBSUB)
        fprintf(f, ", \"published\": %llu", (unsigned long long)r->published);
    fputs(",\n     \"duration_s\": ", f);
    json_num(f, r->duration_s);
    fputs(", \"wall_s\": ", f);
    json_num(f, r->wall_s);
    const struct {
        const char *k;
        double v;
    } lat[] = {{"min_ms", r->min_ms},   {"mean_ms", r->mean_ms},   {"p50_ms", r->p50_ms},
               {"p90_ms", r->p90_ms},   {"p99_ms", r->p99_ms},     {"p999_ms", r->p999_ms},
               {"p9999_ms", r->p9999_ms}, {"max_ms", r->max_ms}};
    fputs(",\n     ", f);
    for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", lat[i].k);
        json_num(f, lat[i].v);
    }
    if (r->mode != BM_CLOSED) {
        fputs(",\n     \"send_lag_p99_ms\": ", f);
        json_num(f, r->send_lag_p99_ms);
        fputs(", \"send_lag_max_ms\": ", f);
        json_num(f, r->send_lag_max_ms);
    }
    fputs(",\n     \"generator_cpu_pct\": ", f);
    json_num(f, r->cpu_pct);
    fputs(", \"generator_thread_cpu_max_pct\": ", f);
    json_num(f, r->thread_cpu_max_pct);
    fprintf(f, ", \"generator_cores\": %d, \"generator_saturated\": %s", r->cores,
            r->saturated ? "true" : "false");
    fputs(",\n     \"first_error\": ", f);
    if (r->first_error[0])
        json_str(f, r->first_error);
    else
        fputs("null", f);
    fputs(", \"first_disconnect\": ", f);
    if (r->first_disconnect[0])
        json_str(f, r->first_disconnect);
    else
        fputs("null", f);
    if (r->nodes)
        json_cluster(f, r);
    fputs("}", f);
}

int bm_write_json(const char *path, const struct bm_config *cfg, const struct bm_workload *wl,
                  const char *cmdline, const struct bm_result *res, int n, int nsteps, int runs,
                  char *err, size_t errcap)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errcap, "cannot write %s", path);
        return -1;
    }
    const char *mode = cfg->pubsub ? "pubsub" : (cfg->rate > 0 || cfg->nsweep) ? "open" : "closed";
    fputs("{\n  \"tool\": \"hotkv-benchmark\",\n  \"command_line\": ", f);
    json_str(f, cmdline);
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"config\": {\"host\": ", mode);
    json_str(f, cfg->host);
    fprintf(f, ", \"port\": %d, \"resp\": %d, \"db\": %d, \"threads\": %d, ", cfg->port,
            cfg->resp, cfg->db, cfg->threads);
    if (cfg->pubsub) {
        fprintf(f,
                "\"publishers\": %d, \"subscribers\": %d, \"channels\": %d, \"payload\": %zu, ",
                cfg->publishers, cfg->subscribers, cfg->channels, cfg->payload);
    } else {
        fprintf(f, "\"clients\": %d, \"pipeline\": %d, \"workload\": ", cfg->clients,
                cfg->pipeline);
        json_str(f, wl->name);
        fputs(", \"commands\": [", f);
        for (int i = 0; i < wl->nt; i++) {
            if (i)
                fputs(", ", f);
            json_str(f, wl->t[i].text);
        }
        fprintf(f, "], \"data_size\": %zu, \"key_space\": %llu, \"key_pattern\": \"%s\", ",
                cfg->data_size, (unsigned long long)cfg->key_space,
                pattern_name(cfg->key_pattern));
        fputs("\"zipf_s\": ", f);
        json_num(f, cfg->zipf_s);
        fprintf(f, ", \"preload\": %s, ", cfg->preload ? "true" : "false");
    }
    fputs("\"test_time_s\": ", f);
    if (cfg->test_time > 0)
        json_num(f, cfg->test_time);
    else
        fputs("null", f);
    fprintf(f, ", \"requests\": ");
    if (cfg->requests)
        fprintf(f, "%llu", (unsigned long long)cfg->requests);
    else
        fputs("null", f);
    fputs(", \"rates\": [", f);
    if (cfg->nsweep) {
        for (int i = 0; i < cfg->nsweep; i++) {
            if (i)
                fputs(", ", f);
            json_num(f, cfg->sweep[i]);
        }
    } else if (cfg->rate > 0) {
        json_num(f, cfg->rate);
    }
    fprintf(f, "], \"runs\": %d, \"warmup_s\": ", runs);
    json_num(f, cfg->warmup);
    fprintf(f, ", \"cpus\": %d", cfg->ncpu);
    if (cfg->cluster)
        fputs(", \"cluster\": true", f);
    fputs("},\n  \"steps\": [\n", f);
    for (int i = 0; i < n; i++) {
        json_result(f, &res[i]);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"summary\": [\n", f);
    for (int st = 1; st <= nsteps; st++) {
        struct summary s;
        summarize(res, n, st, &s);
        fprintf(f, "    {\"step\": %d, \"runs\": %d, \"requested_rps\": ", st, s.runs);
        if (s.held < 0)
            fputs("null", f);
        else
            json_num(f, s.requested);
        fputs(", \"achieved_rps\": ", f);
        json_num(f, s.achieved_mean);
        fputs(", \"achieved_rps_median\": ", f);
        json_num(f, s.achieved_median);
        fputs(", \"held\": ", f);
        json_held(f, s.held);
        fputs(", \"p50_ms\": ", f);
        json_num(f, s.p50);
        fputs(", \"p90_ms\": ", f);
        json_num(f, s.p90);
        fputs(", \"p99_ms\": ", f);
        json_num(f, s.p99);
        fputs(", \"p999_ms\": ", f);
        json_num(f, s.p999);
        fputs(", \"max_ms\": ", f);
        json_num(f, s.max);
        fprintf(f, ", \"errors\": %llu, \"generator_saturated\": %s}%s\n",
                (unsigned long long)s.errors, s.saturated ? "true" : "false",
                st < nsteps ? "," : "");
    }
    fputs("  ]\n}\n", f);
    if (fclose(f) != 0) {
        snprintf(err, errcap, "error writing %s", path);
        return -1;
    }
    return 0;
}
