/* latency_monitor.c - see latency_monitor.h.
 *
 * Owner and lock: the event table below belongs to no thread; every read
 * and write of it holds `lm_lock`.  Writers reach it only when a sample is
 * over the threshold, so the mutex is never on a fast path. */
#include "latency_monitor.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

long long latency_monitor_threshold;

static pthread_mutex_t lm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct latency_series events[LATENCY_MAX_EVENTS];
static int nevents;

void latency_add_sample(const char *event, long long ms)
{
    int64_t now = (int64_t)time(NULL);
    uint32_t v = ms < 0 ? 0 : ms > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    struct latency_series *ts = NULL;

    pthread_mutex_lock(&lm_lock);
    for (int i = 0; i < nevents; i++) {
        if (!strcmp(events[i].name, event)) {
            ts = &events[i];
            break;
        }
    }
    if (!ts) {
        if (nevents == LATENCY_MAX_EVENTS) { /* the names are ours: never reached */
            pthread_mutex_unlock(&lm_lock);
            return;
        }
        ts = &events[nevents++];
        memset(ts, 0, sizeof(*ts));
        strncpy(ts->name, event, sizeof(ts->name) - 1);
    }
    if (v > ts->max)
        ts->max = v;
    /* One sample per second: a second sample in the same second only
     * raises that second's value. */
    int prev = (ts->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    if (ts->samples[prev].time == now) {
        if (v > ts->samples[prev].latency)
            ts->samples[prev].latency = v;
    } else {
        ts->samples[ts->idx].time = now;
        ts->samples[ts->idx].latency = v;
        ts->idx = (ts->idx + 1) % LATENCY_TS_LEN;
    }
    pthread_mutex_unlock(&lm_lock);
}

int latency_snapshot(struct latency_series *out, int max)
{
    int n;
    pthread_mutex_lock(&lm_lock);
    n = nevents < max ? nevents : max;
    if (n > 0)
        memcpy(out, events, sizeof(*out) * (size_t)n);
    pthread_mutex_unlock(&lm_lock);
    return n;
}

int latency_reset(const char *event)
{
    int n = 0;
    pthread_mutex_lock(&lm_lock);
    if (!event) {
        n = nevents;
        nevents = 0;
    } else {
        for (int i = 0; i < nevents; i++) {
            if (!strcmp(events[i].name, event)) {
                memmove(&events[i], &events[i + 1], sizeof(events[0]) * (size_t)(nevents - i - 1));
                nevents--;
                n = 1;
                break;
            }
        }
    }
    pthread_mutex_unlock(&lm_lock);
    return n;
}
