/* errorstats.c - see errorstats.h.
 *
 * Owner and lock: codes[] and ncodes belong to no thread.  A code's slot is
 * filled once, under es_lock, before ncodes is raised (release), and never
 * reused: counting scans the published slots without the lock and adds with
 * a relaxed atomic, so only the first error of a new code takes the mutex.
 * CONFIG RESETSTAT zeroes the counts (INFO lists non-zero counts only), so
 * a slot stays for the server's life: ERRORSTAT_SLOTS distinct codes in all
 * (48 KB); a code first seen after that is not listed.
 *
 * The limit users see is Redis 7.4's: scripts can make up codes with
 * redis.error_reply, so when a 129th code gets a count since the last
 * reset (live counts each code's 0 -> 1 step), a warning with the codes is
 * logged, every count is zeroed, ERRORSTATS_DISABLED:count=1 is listed and
 * nothing is counted until CONFIG RESETSTAT. */
#include "errorstats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

#define ERRORSTAT_MAX 128   /* codes with a count at once */
#define ERRORSTAT_SLOTS 1024 /* codes ever */
#define ERRORSTAT_CODE_MAX 32
#define DISABLED_CODE "ERRORSTATS_DISABLED"

struct errorstat {
    char code[ERRORSTAT_CODE_MAX];
    size_t len;
    unsigned long long count;
};

static struct errorstat codes[ERRORSTAT_SLOTS];
static int ncodes;
static int live;           /* codes with a non-zero count */
static int disabled;       /* past the limit: nothing counted until a reset */
static pthread_mutex_t es_lock = PTHREAD_MUTEX_INITIALIZER;

static struct errorstat *find(int n, const char *code, size_t len)
{
    for (int i = 0; i < n; i++)
        if (codes[i].len == len && !memcmp(codes[i].code, code, len))
            return &codes[i];
    return NULL;
}

/* Past the limit (es_lock held): the warning, every count zeroed,
 * counting off. */
static void overflow(void)
{
    char list[ERRORSTAT_MAX * 2 * (ERRORSTAT_CODE_MAX + 2) + 1];
    size_t o = 0;
    for (int i = 0; i < ncodes; i++) {
        if (!__atomic_exchange_n(&codes[i].count, 0, __ATOMIC_RELAXED) || o + ERRORSTAT_CODE_MAX + 2 >= sizeof(list))
            continue;
        if (o) {
            list[o++] = ',';
            list[o++] = ' ';
        }
        for (size_t k = 0; k < codes[i].len; k++) {
            unsigned char ch = (unsigned char)codes[i].code[k];
            list[o++] = ch >= 32 && ch < 127 ? (char)ch : '?';
        }
    }
    list[o] = 0;
    __atomic_store_n(&live, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&disabled, 1, __ATOMIC_RELAXED);
    log_msg(LL_WARNING, "Errorstats stopped counting: over %d distinct error codes, perhaps a script making up codes "
                        "with redis.error_reply; see INFO errorstats, CONFIG RESETSTAT counts again.", ERRORSTAT_MAX);
    log_msg(LL_WARNING, "Error codes seen: %s", list);
}

void errorstat_add(const char *code, size_t len)
{
    struct errorstat *e;
    if (__atomic_load_n(&disabled, __ATOMIC_RELAXED))
        return;
    if (len == 0 || len >= ERRORSTAT_CODE_MAX)
        code = "ERR", len = 3;
    e = find(__atomic_load_n(&ncodes, __ATOMIC_ACQUIRE), code, len);
    if (!e) {
        pthread_mutex_lock(&es_lock);
        e = find(ncodes, code, len);
        if (!e && ncodes < ERRORSTAT_SLOTS) {
            e = &codes[ncodes];
            memcpy(e->code, code, len);
            e->len = len;
            __atomic_store_n(&ncodes, ncodes + 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&es_lock);
        if (!e)
            return;
    }
    if (__atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED) == 0 &&
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED) > ERRORSTAT_MAX) {
        pthread_mutex_lock(&es_lock);
        if (!__atomic_load_n(&disabled, __ATOMIC_RELAXED))
            overflow();
        pthread_mutex_unlock(&es_lock);
    }
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
    static struct errorstat snap[ERRORSTAT_SLOTS + 1]; /* used under es_lock */
    int n = 0;
    pthread_mutex_lock(&es_lock);
    for (int i = 0; i < ncodes; i++) {
        unsigned long long count = __atomic_load_n(&codes[i].count, __ATOMIC_RELAXED);
        if (!count)
            continue; /* reset since */
        memcpy(snap[n].code, codes[i].code, codes[i].len);
        snap[n].len = codes[i].len;
        snap[n++].count = count;
    }
    if (__atomic_load_n(&disabled, __ATOMIC_RELAXED)) {
        memcpy(snap[n].code, DISABLED_CODE, sizeof(DISABLED_CODE) - 1);
        snap[n].len = sizeof(DISABLED_CODE) - 1;
        snap[n++].count = 1;
    }
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
    pthread_mutex_unlock(&es_lock);
}

/* A count racing the reset may survive it: statistics.  The codes stay,
 * their counts start again from zero. */
void errorstat_reset(void)
{
    pthread_mutex_lock(&es_lock);
    for (int i = 0; i < ncodes; i++)
        __atomic_store_n(&codes[i].count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&live, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&disabled, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&es_lock);
}
