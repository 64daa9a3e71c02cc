/* slowlog.h - SLOWLOG and the slow log (slowlog.c; rows in slowlog.tab /
 * slowlog.docs), and LATENCY's per-command histograms and command events
 * (latency.c; rows in latency.tab / latency.docs). */
#ifndef HK_CMD_SLOWLOG_H
#define HK_CMD_SLOWLOG_H

#include "../base/latency_monitor.h"
#include "cmd.h"

cmd_fn slowlog_command, latency_command;

/* Log argv as one slow-log entry taking dur microseconds (skipped for
 * CMD_SKIP_SLOWLOG commands, and while loading the AOF).  Any thread. */
void slowlog_push(struct client *c, const struct cmd *cmd, unsigned long long dur);
/* The same for a call whose arguments are not c's (a served blocked
 * command: cmd/blocking.c). */
void slowlog_push_args(struct client *c, const struct cmd *cmd, int argc, const char *const *argv, const size_t *lens,
                       unsigned long long dur);

/* The dispatcher's hook after a command ran for dur microseconds: the
 * fast path is a load and one unsigned compare (slowlog-log-slower-than < 0,
 * "disabled", turns into a threshold no duration reaches). */
static inline void slowlog_check(struct client *c, const struct cmd *cmd, unsigned long long dur)
{
    if (dur >= (unsigned long long)__atomic_load_n(&cfg.slowlog_log_slower_than, __ATOMIC_RELAXED))
        slowlog_push(c, cmd, dur);
}

static inline void slowlog_check_args(struct client *c, const struct cmd *cmd, int argc, const char *const *argv,
                                      const size_t *lens, unsigned long long dur)
{
    if (dur >= (unsigned long long)__atomic_load_n(&cfg.slowlog_log_slower_than, __ATOMIC_RELAXED))
        slowlog_push_args(c, cmd, argc, argv, lens, dur);
}

/* Whether argument i of this call is hidden ("(redacted)") in the slow log,
 * as Redis does for passwords: AUTH, HELLO ... AUTH, CONFIG SET of
 * requirepass / masterauth.  MONITOR may use it too. */
int cmd_arg_redacted(const struct cmd *cmd, int argc, const char *const *argv, const size_t *lens, int i);

/* ------------------------------------------------ latency (latency.c) --- */
/* Per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats),
 * one set per worker, summed on demand.  Gated by latency-tracking.
 *
 * A command's histogram has LATENCY_FINE_N counts at least as fine as the
 * buckets of Redis's HdrHistogram (2 significant digits over 1 ns .. 1 s,
 * fed with duration_us * 1000 ns), so INFO latencystats' percentiles are
 * the values Redis prints for the same durations: one count per whole
 * microsecond below LATENCY_EXACT_US, then one per HDR bucket (1/128 of
 * an octave) up to 1 s, where Redis clamps. */
#define LATENCY_HIST_MAX_WORKERS 1024 /* the threads parameter's maximum */
#define LATENCY_EXACT_US 131          /* below: each microsecond its own count */
#define LATENCY_HDR_FIRST 1407        /* latency_hdr_index(131 us) */
#define LATENCY_HDR_LAST 3054         /* latency_hdr_index(1 s) */
#define LATENCY_FINE_N (LATENCY_EXACT_US + LATENCY_HDR_LAST - LATENCY_HDR_FIRST + 1)
/* hist[worker id][command id] -> LATENCY_FINE_N counts: the table and each
 * command's counts are allocated and written by that worker only (on its
 * first record); other threads read with acquire / relaxed loads. */
extern unsigned long long **latency_hist[LATENCY_HIST_MAX_WORKERS];
unsigned long long **latency_hist_alloc(int worker_id);
unsigned long long *latency_hist_alloc_cmd(int worker_id, int cmd_id);
void latency_hist_reset(void); /* CONFIG RESETSTAT */

/* The counts index HdrHistogram (1 ns unit, 2 significant digits) gives
 * ns >= 1: 256 sub-buckets, the upper 128 of each octave after the first. */
static inline size_t latency_hdr_index(unsigned long long ns)
{
    int b = 64 - __builtin_clzll(ns | 255) - 8;
    return ((size_t)(b + 1) << 7) + (size_t)((ns >> b) - 128);
}

/* Index of a duration in a command's counts. */
static inline size_t latency_fine_index(unsigned long long dur_us)
{
    if (dur_us < LATENCY_EXACT_US)
        return (size_t)dur_us;
    unsigned long long ns = dur_us < 1000000 ? dur_us * 1000 : 1000000000ULL;
    return LATENCY_EXACT_US + latency_hdr_index(ns) - LATENCY_HDR_FIRST;
}

/* The per-command cost of latency-tracking: two loads, a compare and an
 * increment for a command under 131 us (most of them). */
static inline void latency_hist_record(const struct client *c, const struct cmd *cmd, unsigned long long dur_us)
{
    int id = c->w->id;
    if ((unsigned)id >= LATENCY_HIST_MAX_WORKERS) /* the AOF replayer (id -1): no statistics */
        return;
    unsigned long long **t = latency_hist[id]; /* this thread's own store */
    if (__builtin_expect(!t, 0))
        t = latency_hist_alloc(id);
    unsigned long long *h = t[cmd->id];
    if (__builtin_expect(!h, 0))
        h = latency_hist_alloc_cmd(id, cmd->id);
    unsigned long long *b = &h[latency_fine_index(dur_us)];
    /* Both halves atomic (a plain mov each on x86-64): CONFIG RESETSTAT
     * stores zeros from another thread. */
    __atomic_store_n(b, __atomic_load_n(b, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* The "command" / "fast-command" events of the latency monitor. */
static inline void latency_cmd_event(const struct cmd *cmd, unsigned long long dur_us)
{
    long long t = __atomic_load_n(&latency_monitor_threshold, __ATOMIC_RELAXED);
    if (t > 0 && (long long)(dur_us / 1000) >= t)
        latency_add_sample((cmd->flags & CMD_FAST) ? "fast-command" : "command", (long long)(dur_us / 1000));
}

/* Everything a finished command feeds here: the slow log, the command
 * events and the histogram. */
static inline void cmd_latency_hooks(struct client *c, const struct cmd *cmd, unsigned long long dur_us)
{
    slowlog_check(c, cmd, dur_us); /* a blocked command: when served (slowlog_push) */
    latency_cmd_event(cmd, dur_us);
    if (__atomic_load_n(&cfg.latency_tracking, __ATOMIC_RELAXED))
        latency_hist_record(c, cmd, dur_us);
}

/* latency-tracking-info-percentiles (config/config.c's row). */
int latency_percentiles_set(const char *spec, char *err, size_t errlen);
void latency_percentiles_get(char *buf, size_t cap);
/* INFO latencystats: appends the section's lines (without the header) with
 * emit(arg, line). */
void latency_info(void (*emit)(void *arg, const char *line), void *arg);

#endif
