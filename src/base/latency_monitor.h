/* base/latency_monitor.h - the latency monitor's event recorder (LATENCY
 * LATEST / HISTORY / GRAPH / RESET / DOCTOR read it: cmd/latency.c).
 *
 * An event is a name ("command", "fast-command", "expire-cycle", "fork",
 * "aof-write", ...) with a ring of LATENCY_TS_LEN samples, one per second
 * (the largest of that second), and the largest ever seen.  Any thread
 * records: latency_sample() costs one relaxed load and a compare while the
 * monitor is off (latency-monitor-threshold 0) or the time is under the
 * threshold; only a sample that counts takes the recorder's mutex. */
#ifndef HK_BASE_LATENCY_MONITOR_H
#define HK_BASE_LATENCY_MONITOR_H

#include <stdint.h>

#define LATENCY_TS_LEN 160
#define LATENCY_EVENT_NAME_MAX 64
#define LATENCY_MAX_EVENTS 64

/* latency-monitor-threshold in ms, 0 = off (CONFIG SET writes it). */
extern long long latency_monitor_threshold;

struct latency_sample {
    int64_t time;     /* unix seconds, 0 = empty slot */
    uint32_t latency; /* ms */
};

struct latency_series {
    char name[LATENCY_EVENT_NAME_MAX];
    int idx;          /* next slot to write */
    uint32_t max;     /* all-time high, ms */
    struct latency_sample samples[LATENCY_TS_LEN];
};

/* Record unconditionally (the caller checked the threshold). */
void latency_add_sample(const char *event, long long ms);

static inline void latency_sample(const char *event, long long ms)
{
    long long t = __atomic_load_n(&latency_monitor_threshold, __ATOMIC_RELAXED);
    if (t > 0 && ms >= t)
        latency_add_sample(event, ms);
}

/* A copy of every event, in the order they first occurred: fills out (up
 * to max) and returns how many. */
int latency_snapshot(struct latency_series *out, int max);
/* Drop one event (1 if it existed) or, with NULL, all (how many). */
int latency_reset(const char *event);

#endif
