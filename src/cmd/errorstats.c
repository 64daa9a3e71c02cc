/* errorstats.c - see errorstats.h.
 *
 * Owner and lock: codes[] and ncodes belong to no thread.  A code's slot is
 * filled once, under es_lock, before ncodes is raised (release), and never
 * reused (CONFIG RESETSTAT zeroes the counts; INFO skips a zero): counting
 * scans the published slots without the lock and adds with a relaxed atomic,
 * so only the first error of a new code takes the mutex.  At most
 * ERRORSTAT_MAX codes are tracked (scripts can make up codes: the table
 * must not grow without bound); later new codes are not listed (Redis 7.2
 * has no bound). */
#include "errorstats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERRORSTAT_MAX 128
#define ERRORSTAT_CODE_MAX 32

struct errorstat {
    char code[ERRORSTAT_CODE_MAX];
    size_t len;
    unsigned long long count;
};

static struct errorstat codes[ERRORSTAT_MAX];
static int ncodes;
static pthread_mutex_t es_lock = PTHREAD_MUTEX_INITIALIZER;

static struct errorstat *find(int n, const char *code, size_t len)
{
    for (int i = 0; i < n; i++)
        if (codes[i].len == len && !memcmp(codes[i].code, code, len))
            return &codes[i];
    return NULL;
}

void errorstat_add(const char *code, size_t len)
{
    struct errorstat *e;
    if (len == 0 || len >= ERRORSTAT_CODE_MAX)
        code = "ERR", len = 3;
    e = find(__atomic_load_n(&ncodes, __ATOMIC_ACQUIRE), code, len);
    if (!e) {
        pthread_mutex_lock(&es_lock);
        e = find(ncodes, code, len);
        if (!e && ncodes < ERRORSTAT_MAX) {
            e = &codes[ncodes];
            memcpy(e->code, code, len);
            e->len = len;
            __atomic_store_n(&ncodes, ncodes + 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&es_lock);
        if (!e)
            return;
    }
    __atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED);
}

void errorstat_add_reply(const char *s, size_t n)
{
    const char *sp = n > 1 ? memchr(s, ' ', n < 32 ? n : 32) : NULL;
    if (n > 1 && s[0] == '-' && sp)
        errorstat_add(s + 1, (size_t)(sp - s - 1));
    else
        errorstat_add("ERR", 3);
}

static int by_code(const void *a, const void *b)
{
    const struct errorstat *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->code, y->code, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

void errorstat_info(void (*emit)(void *arg, const char *line), void *arg)
{
    struct errorstat snap[ERRORSTAT_MAX];
    int n;
    pthread_mutex_lock(&es_lock);
    n = ncodes;
    for (int i = 0; i < n; i++) {
        memcpy(snap[i].code, codes[i].code, codes[i].len);
        snap[i].len = codes[i].len;
        snap[i].count = __atomic_load_n(&codes[i].count, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&es_lock);
    qsort(snap, (size_t)n, sizeof(snap[0]), by_code);
    for (int i = 0; i < n; i++) {
        char line[96];
        char code[ERRORSTAT_CODE_MAX];
        if (!snap[i].count)
            continue; /* reset since */
        /* INFO's own separators inside a code (a script's made-up one)
         * would break the format: Redis turns them into '_'. */
        for (size_t k = 0; k < snap[i].len; k++) {
            char ch = snap[i].code[k];
            code[k] = (ch == ':' || ch == '#' || ch == '\r' || ch == '\n') ? '_' : ch;
        }
        snprintf(line, sizeof(line), "errorstat_%.*s:count=%llu\r\n", (int)snap[i].len, code, snap[i].count);
        emit(arg, line);
    }
}

/* A count racing the reset may survive it: statistics.  The codes stay
 * (at most ERRORSTAT_MAX), their counts start again from zero. */
void errorstat_reset(void)
{
    int n = __atomic_load_n(&ncodes, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        __atomic_store_n(&codes[i].count, 0, __ATOMIC_RELAXED);
}
