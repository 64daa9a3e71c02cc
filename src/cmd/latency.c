/* latency.c - LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HISTOGRAM
 * / HELP, the per-command latency histograms behind LATENCY HISTOGRAM and
 * INFO latencystats, and latency-tracking-info-percentiles.
 *
 * Events are recorded by base/latency_monitor.c (any layer may feed it).
 *
 * Histograms (slowlog.h): per worker, per command, LATENCY_FINE_N counts
 * as fine as Redis's HdrHistogram buckets, allocated by the worker on its
 * first record of the command and written only by it (relaxed atomic
 * stores, as worker stats); readers sum every worker's.  INFO latencystats
 * walks them as hdr_value_at_percentile does (the count at p% rounded, at
 * least 1; the highest value of the bucket reached, the lowest for p0), so
 * its figures are Redis's for the same durations.  LATENCY HISTOGRAM folds
 * them into the 21 steps Redis 7 reports: step k counts durations below
 * 1032 * 2^k ns (its log iterator stops at 1024 * 2^k ns, and a value
 * within that level's equivalence range, 1/128 of it, counts with it; the
 * fine buckets never straddle such a step); each step is named by the
 * range's largest value in whole microseconds, (1032 * 2^k - 1) / 1000: 1,
 * 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, ...  Durations are
 * measured in whole microseconds (Redis's unit too). */
#include "slowlog.h"

#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/mem.h"
#include "../base/util.h"

#define HIST_BUCKETS 21 /* LATENCY HISTOGRAM's steps */
#define HIST_MAX_WORKERS LATENCY_HIST_MAX_WORKERS
#define FINE_N LATENCY_FINE_N

unsigned long long **latency_hist[HIST_MAX_WORKERS];
#define hist latency_hist

/* LATENCY HISTOGRAM's step of a duration: us * 1000 < 1032 * 2^k. */
static int step_of(unsigned long long us)
{
    unsigned long long q = us * 1000 / 1032; /* in [2^(k-1), 2^k) for step k */
    if (!q)
        return 0;
    int k = 64 - __builtin_clzll(q);
    return k < HIST_BUCKETS ? k : HIST_BUCKETS - 1;
}

/* The nanoseconds fine count i stands for: Redis's lowest and highest
 * equivalent values of its HDR bucket. */
static void fine_range(size_t i, unsigned long long *lo, unsigned long long *hi)
{
    int b;
    if (i < LATENCY_EXACT_US) {
        unsigned long long v = i ? i * 1000 : 1; /* Redis records at least 1 ns */
        b = 64 - __builtin_clzll(v | 255) - 8;
        *lo = (v >> b) << b;
    } else {
        size_t h = i - LATENCY_EXACT_US + LATENCY_HDR_FIRST;
        b = (int)(h >> 7) - 1;
        *lo = (unsigned long long)((h & 127) + 128) << b;
    }
    *hi = *lo + (1ULL << b) - 1;
}

/* The step of each fine count (set once, before any reader). */
static unsigned char fine_step[FINE_N];
static pthread_once_t fine_once = PTHREAD_ONCE_INIT;

static void fine_init(void)
{
    for (size_t i = 0; i < FINE_N; i++) {
        unsigned long long lo, hi;
        fine_range(i, &lo, &hi);
        fine_step[i] = (unsigned char)step_of(i < LATENCY_EXACT_US ? i : (lo + 999) / 1000);
    }
}

/* A worker's first record (called by that worker). */
unsigned long long **latency_hist_alloc(int id)
{
    unsigned long long **t = hk_calloc(sizeof(*t) * (size_t)cmd_count());
    __atomic_store_n(&hist[id], t, __ATOMIC_RELEASE);
    return t;
}

/* A worker's first record of a command (called by that worker). */
unsigned long long *latency_hist_alloc_cmd(int id, int cmd_id)
{
    unsigned long long *h = hk_calloc(sizeof(*h) * FINE_N);
    __atomic_store_n(&hist[id][cmd_id], h, __ATOMIC_RELEASE);
    return h;
}

/* Sets racing a worker's increment may lose that one count: as INFO's
 * figures, the histograms are statistics, not accounts. */
void latency_hist_reset(void)
{
    int n = cmd_count();
    for (int i = 0; i < HIST_MAX_WORKERS; i++) {
        unsigned long long **t = __atomic_load_n(&hist[i], __ATOMIC_ACQUIRE);
        for (int c = 0; t && c < n; c++) {
            unsigned long long *h = __atomic_load_n(&t[c], __ATOMIC_ACQUIRE);
            for (size_t k = 0; h && k < FINE_N; k++)
                STAT_SET(h[k], 0);
        }
    }
}

/* One command's fine counts summed over the workers into fine[FINE_N];
 * returns the total. */
static unsigned long long fine_sum(const struct cmd *cmd, unsigned long long *fine)
{
    unsigned long long total = 0;
    int any = 0;
    for (int i = 0; i < HIST_MAX_WORKERS; i++) {
        unsigned long long **t = __atomic_load_n(&hist[i], __ATOMIC_ACQUIRE);
        unsigned long long *h = t ? __atomic_load_n(&t[cmd->id], __ATOMIC_ACQUIRE) : NULL;
        if (!h)
            continue;
        if (!any)
            memset(fine, 0, sizeof(*fine) * FINE_N);
        any = 1;
        for (size_t k = 0; k < FINE_N; k++) {
            unsigned long long v = STAT_GET(h[k]);
            fine[k] += v;
            total += v;
        }
    }
    return total;
}

/* Summed over the workers, folded into LATENCY HISTOGRAM's steps. */
static unsigned long long hist_sum(const struct cmd *cmd, unsigned long long *out)
{
    static _Thread_local unsigned long long fine[FINE_N];
    unsigned long long total = fine_sum(cmd, fine);
    memset(out, 0, sizeof(*out) * HIST_BUCKETS);
    if (!total)
        return 0;
    pthread_once(&fine_once, fine_init);
    for (size_t k = 0; k < FINE_N; k++)
        out[fine_step[k]] += fine[k];
    return total;
}

static long long bucket_usec(int k)
{
    return (long long)(((1032ULL << k) - 1) / 1000);
}

static void reply_cdf(struct client *c, const struct cmd *cmd, const unsigned long long *b, unsigned long long total)
{
    unsigned long long cum = 0;
    int n = 0;
    reply_bulk_cstr(&c->out, cmd->name);
    reply_map(&c->out, 2);
    reply_bulk_cstr(&c->out, "calls");
    reply_int(&c->out, (long long)total);
    reply_bulk_cstr(&c->out, "histogram_usec");
    for (int k = 0; k < HIST_BUCKETS; k++)
        n += b[k] != 0;
    reply_map(&c->out, n);
    for (int k = 0; k < HIST_BUCKETS; k++) {
        if (!b[k])
            continue;
        cum += b[k];
        reply_int(&c->out, bucket_usec(k));
        reply_int(&c->out, (long long)cum);
    }
}

/* LATENCY HISTOGRAM [command ...]: a named container brings its
 * subcommands; unknown names are skipped. */
static void histogram_reply(struct client *c)
{
    unsigned long long b[HIST_BUCKETS];
    size_t mark = reply_defer(&c->out);
    long long n = 0;
    int all = c->argc == 2;
    for (int i = all ? 0 : 2; all ? cmd_table[i].name != NULL : i < c->argc; i++) {
        const struct cmd *cmd;
        if (all) {
            cmd = &cmd_table[i];
        } else {
            const char *bar = memchr(c->argv[i], '|', c->argvlen[i]);
            size_t pl = bar ? (size_t)(bar - c->argv[i]) : c->argvlen[i];
            cmd = cmd_lookup(c->argv[i], pl);
            if (cmd && bar)
                cmd = cmd->subs ? cmd_lookup_sub(cmd, bar + 1, c->argvlen[i] - pl - 1) : NULL;
            if (!cmd)
                continue;
        }
        unsigned long long t;
        if (cmd->fn && (t = hist_sum(cmd, b)) > 0) {
            reply_cdf(c, cmd, b, t);
            n++;
        }
        for (const struct cmd *s = cmd->subs; s && s->name; s++) {
            if ((t = hist_sum(s, b)) > 0) {
                reply_cdf(c, s, b, t);
                n++;
            }
        }
    }
    reply_defer_map(&c->out, mark, n);
}

/* ------------------------------------------------------- percentiles --- */
static pthread_mutex_t pct_lock = PTHREAD_MUTEX_INITIALIZER;
static double *pct;
static int npct = -1; /* -1: the default, 50 99 99.9 */

/* "%f" without the trailing zeros (and dot): 50, 99.9. */
static void fmt_pct(char *buf, size_t cap, double v)
{
    int n = snprintf(buf, cap, "%f", v);
    if (n <= 0 || (size_t)n >= cap || !strchr(buf, '.'))
        return;
    while (n > 0 && buf[n - 1] == '0')
        buf[--n] = 0;
    if (n > 0 && buf[n - 1] == '.')
        buf[--n] = 0;
}

static void pct_default(void)
{
    if (npct < 0) {
        pct = hk_malloc(sizeof(double) * 3);
        pct[0] = 50;
        pct[1] = 99;
        pct[2] = 99.9;
        npct = 3;
    }
}

int latency_percentiles_set(const char *spec, char *err, size_t errlen)
{
    size_t len = strlen(spec);
    double *v = hk_malloc(sizeof(double) * (len / 2 + 1)); /* at most one value per two bytes */
    int n = 0;
    const char *p = spec;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t w = strcspn(p, " ");
        double d;
        if (!str_to_d(p, w, &d)) {
            snprintf(err, errlen, "Invalid latency-tracking-info-percentiles parameters");
            hk_free(v);
            return -1;
        }
        if (d < 0.0 || d > 100.0) {
            snprintf(err, errlen, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
            hk_free(v);
            return -1;
        }
        v[n++] = d;
        p += w;
    }
    pthread_mutex_lock(&pct_lock);
    hk_free(pct);
    pct = v;
    npct = n;
    pthread_mutex_unlock(&pct_lock);
    return 0;
}

void latency_percentiles_get(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    pthread_mutex_lock(&pct_lock);
    pct_default();
    for (int i = 0; i < npct && len + 1 < cap; i++) {
        char f[64];
        fmt_pct(f, sizeof(f), pct[i]);
        int w = snprintf(buf + len, cap - len, "%s%s", i ? " " : "", f);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
    pthread_mutex_unlock(&pct_lock);
}

/* The value at percentile p in microseconds, as Redis's
 * hdr_value_at_percentile: the first count where the running total reaches
 * p% of the calls (rounded, at least 1); that bucket's highest value (its
 * lowest for p0). */
static double value_at(const unsigned long long *fine, unsigned long long total, double p)
{
    long long want = (long long)((p < 100.0 ? p : 100.0) / 100 * (double)total + 0.5);
    unsigned long long cum = 0;
    if (want < 1)
        want = 1;
    for (size_t k = 0; k < FINE_N; k++) {
        cum += fine[k];
        if (cum >= (unsigned long long)want) {
            unsigned long long lo, hi;
            fine_range(k, &lo, &hi);
            return (double)(p == 0.0 ? lo : hi) / 1000.0;
        }
    }
    return 0;
}

static void info_line(const struct cmd *cmd, void (*emit)(void *, const char *), void *arg)
{
    static _Thread_local unsigned long long fine[FINE_N];
    unsigned long long total = fine_sum(cmd, fine);
    char line[4096];
    size_t len;
    if (!total)
        return;
    len = (size_t)snprintf(line, sizeof(line), "latency_percentiles_usec_%s:", cmd->name);
    for (int i = 0; i < npct && len < sizeof(line); i++) {
        char f[64];
        fmt_pct(f, sizeof(f), pct[i]);
        len += (size_t)snprintf(line + len, sizeof(line) - len, "%sp%s=%.3f", i ? "," : "", f, value_at(fine, total, pct[i]));
    }
    if (len < sizeof(line))
        snprintf(line + len, sizeof(line) - len, "\r\n");
    else
        memcpy(line + sizeof(line) - 3, "\r\n", 3); /* a huge percentile list is cut */
    emit(arg, line);
}

void latency_info(void (*emit)(void *arg, const char *line), void *arg)
{
    if (!__atomic_load_n(&cfg.latency_tracking, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&pct_lock);
    pct_default();
    for (const struct cmd *cmd = cmd_table; cmd->name; cmd++) {
        if (cmd->fn)
            info_line(cmd, emit, arg);
        for (const struct cmd *s = cmd->subs; s && s->name; s++)
            info_line(s, emit, arg);
    }
    pthread_mutex_unlock(&pct_lock);
}

/* ---------------------------------------------------------- LATENCY --- */
struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_addf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_addf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
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

static struct latency_series *find_event(struct latency_series *ev, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(ev[i].name) == len && !memcmp(ev[i].name, name, len))
            return &ev[i];
    return NULL;
}

/* An 80-column bar chart, oldest sample on the left, 4 rows high, with each
 * column's age under it (s, m, h, d), read top to bottom. */
static void graph(struct sbuf *b, const struct latency_series *ts)
{
    enum { COLS = 80, ROWS = 4 };
    uint32_t v[LATENCY_TS_LEN], lo = 0, hi = 0;
    char age[LATENCY_TS_LEN][24];
    int n = 0;
    long long now = (long long)time(NULL);
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        const struct latency_sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
        if (!s->time)
            continue;
        long long el = now - s->time;
        if (el < 60)
            snprintf(age[n], sizeof(age[n]), "%llds", el);
        else if (el < 3600)
            snprintf(age[n], sizeof(age[n]), "%lldm", el / 60);
        else if (el < 86400)
            snprintf(age[n], sizeof(age[n]), "%lldh", el / 3600);
        else
            snprintf(age[n], sizeof(age[n]), "%lldd", el / 86400);
        v[n] = s->latency;
        if (!n || v[n] > hi)
            hi = v[n];
        if (!n || v[n] < lo)
            lo = v[n];
        n++;
    }
    if (n > COLS) { /* only the newest fit */
        memmove(v, v + (n - COLS), sizeof(v[0]) * COLS);
        memmove(age, age + (n - COLS), sizeof(age[0]) * COLS);
        n = COLS;
    }
    sb_addf(b, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", ts->name, (unsigned long)hi, (unsigned long)lo,
            (unsigned long)ts->max);
    for (int j = 0; j < COLS; j++)
        sb_addf(b, "-");
    sb_addf(b, "\n");
    for (int r = ROWS; r >= 1; r--) {
        for (int j = 0; j < n; j++) {
            /* Height 1..ROWS, scaled between the low and the high. */
            int h = hi == lo ? ROWS : 1 + (int)((double)(v[j] - lo) * (ROWS - 1) / (double)(hi - lo) + 0.5);
            sb_addf(b, "%c", h >= r ? '#' : ' ');
        }
        sb_addf(b, "\n");
    }
    for (int row = 0; row < 3; row++) {
        for (int j = 0; j < n; j++)
            sb_addf(b, "%c", (size_t)row < strlen(age[j]) ? age[j][row] : ' ');
        sb_addf(b, "\n");
    }
}

static const char *advice_for(const char *event)
{
    if (!strcmp(event, "command") || !strcmp(event, "fast-command"))
        return "Slow commands: look at SLOWLOG GET for which ones. Commands that walk whole collections "
               "(KEYS, SMEMBERS, HGETALL, LRANGE 0 -1, SORT, big DEL) cost time in proportion to their size; "
               "SCAN-style iteration and smaller values keep each call short.";
    if (!strcmp(event, "expire-cycle"))
        return "Active expiry spent long stretches deleting keys: many keys expiring in the same second, or "
               "big collections expiring (lazyfree-lazy-expire yes frees them in the background).";
    if (!strcmp(event, "eviction-cycle") || !strcmp(event, "eviction-del"))
        return "Eviction worked hard to get under maxmemory: raise maxmemory, write less, or let "
               "lazyfree-lazy-eviction free big values in the background.";
    if (!strcmp(event, "fork"))
        return "fork() for a snapshot or AOF rewrite was slow: it copies the page tables, so it grows with "
               "the process's memory. Huge pages off, a smaller data set or fewer saves help.";
    if (!strncmp(event, "aof-", 4))
        return "Writing or syncing the append-only file stalled: the disk is slow or busy (often with a "
               "snapshot or rewrite at the same time). appendfsync everysec, or no-appendfsync-on-rewrite yes, "
               "trade a little durability for steadier latency.";
    return "No specific advice for this event.";
}

static void doctor(struct sbuf *b, struct latency_series *ev, int n)
{
    long long thr = __atomic_load_n(&latency_monitor_threshold, __ATOMIC_RELAXED);
    if (n == 0) {
        if (thr == 0)
            sb_addf(b, "The latency monitor is switched off (latency-monitor-threshold is 0), so there is nothing "
                       "to analyse. Turn it on with CONFIG SET latency-monitor-threshold <milliseconds>, for "
                       "example 100, and ask again after the server has seen some traffic.\n");
        else
            sb_addf(b, "Nothing has taken %lld ms or more since the monitor was started or last reset: no latency "
                       "trouble to report.\n", thr);
        return;
    }
    sb_addf(b, "Latency report (events that took at least %lld ms):\n\n", thr);
    for (int i = 0; i < n; i++) {
        const struct latency_series *ts = &ev[i];
        unsigned long long sum = 0;
        int cnt = 0;
        for (int j = 0; j < LATENCY_TS_LEN; j++) {
            if (ts->samples[j].time) {
                sum += ts->samples[j].latency;
                cnt++;
            }
        }
        sb_addf(b, "%d. %s: %d second(s) with a slow event, %llu ms on average, worst ever %lu ms.\n", i + 1,
                ts->name, cnt, cnt ? sum / (unsigned long long)cnt : 0, (unsigned long)ts->max);
        sb_addf(b, "   What to look at: %s\n\n", advice_for(ts->name));
    }
    sb_addf(b, "LATENCY HISTORY <event> lists the samples; LATENCY RESET clears them.\n");
}

void latency_command(struct client *c)
{
    if (arg_is(c, 1, "help")) {
        static const char *const help[] = {
            "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(help) / sizeof(help[0])));
        for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
            reply_status(&c->out, help[i]);
        return;
    }
    if (arg_is(c, 1, "histogram")) {
        histogram_reply(c);
        return;
    }
    if (arg_is(c, 1, "reset")) {
        int n = 0;
        if (c->argc == 2) {
            n = latency_reset(NULL);
        } else {
            for (int i = 2; i < c->argc; i++) {
                char name[LATENCY_EVENT_NAME_MAX];
                if (c->argvlen[i] >= sizeof(name))
                    continue; /* no event has so long a name */
                memcpy(name, c->argv[i], c->argvlen[i]);
                name[c->argvlen[i]] = 0;
                n += latency_reset(name);
            }
        }
        reply_int(&c->out, n);
        return;
    }
    struct latency_series *ev = hk_malloc(sizeof(*ev) * LATENCY_MAX_EVENTS);
    int n = latency_snapshot(ev, LATENCY_MAX_EVENTS);
    if (arg_is(c, 1, "latest")) {
        reply_array(&c->out, n);
        for (int i = 0; i < n; i++) {
            const struct latency_sample *s = &ev[i].samples[(ev[i].idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
            reply_array(&c->out, 4);
            reply_bulk_cstr(&c->out, ev[i].name);
            reply_int(&c->out, s->time);
            reply_int(&c->out, s->latency);
            reply_int(&c->out, ev[i].max);
        }
    } else if (arg_is(c, 1, "history")) {
        struct latency_series *ts = find_event(ev, n, c->argv[2], c->argvlen[2]);
        int cnt = 0;
        for (int j = 0; ts && j < LATENCY_TS_LEN; j++)
            cnt += ts->samples[j].time != 0;
        reply_array(&c->out, cnt);
        for (int j = 0; ts && j < LATENCY_TS_LEN; j++) {
            const struct latency_sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
            if (!s->time)
                continue;
            reply_array(&c->out, 2);
            reply_int(&c->out, s->time);
            reply_int(&c->out, s->latency);
        }
    } else if (arg_is(c, 1, "graph")) {
        struct latency_series *ts = find_event(ev, n, c->argv[2], c->argvlen[2]);
        if (!ts) {
            reply_errorf(&c->out, "ERR No samples available for event '%.*s'", (int)(c->argvlen[2] > 128 ? 128 : c->argvlen[2]),
                         c->argv[2]);
        } else {
            struct sbuf b = {NULL, 0, 0};
            graph(&b, ts);
            reply_verbatim(&c->out, b.p, b.len, "txt");
            hk_free(b.p);
        }
    } else { /* doctor (the table routes nothing else here) */
        struct sbuf b = {NULL, 0, 0};
        doctor(&b, ev, n);
        reply_verbatim(&c->out, b.p, b.len, "txt");
        hk_free(b.p);
    }
    hk_free(ev);
}
