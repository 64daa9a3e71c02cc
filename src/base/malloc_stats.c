/* malloc_stats.c - see malloc_stats.h. */
#include "malloc_stats.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include "mem.h"

#ifndef HK_NO_JEMALLOC
#include <jemalloc/jemalloc.h>

static size_t ctl_size(const char *name, int *ok)
{
    size_t v = 0, sz = sizeof(v);
    if (mallctl(name, &v, &sz, NULL, 0) != 0) {
        *ok = 0;
        return 0;
    }
    return v;
}

int alloc_stats_get(struct alloc_stats *st)
{
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    int ok = 1;
    memset(st, 0, sizeof(*st));
    /* The stats.* values are a snapshot taken when the epoch advances. */
    if (mallctl("epoch", &epoch, &sz, &epoch, sz) != 0)
        return -1;
    st->allocated = ctl_size("stats.allocated", &ok);
    st->active = ctl_size("stats.active", &ok);
    st->resident = ctl_size("stats.resident", &ok);
    st->mapped = ctl_size("stats.mapped", &ok);
    st->retained = ctl_size("stats.retained", &ok);
    if (!ok) {
        memset(st, 0, sizeof(*st));
        return -1;
    }
    return 0;
}

/* malloc_stats_print hands its report over in pieces. */
struct text_buf {
    char *p;
    size_t len, cap;
};

static void text_append(void *arg, const char *s)
{
    struct text_buf *b = arg;
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

char *alloc_stats_text(void)
{
    struct text_buf b = {NULL, 0, 0};
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    malloc_stats_print(text_append, &b, NULL);
    if (!b.p)
        return hk_strdup("");
    return b.p;
}

int alloc_purge(void)
{
    char name[64];
    /* This thread's cached blocks first, so their pages can be purged. */
    mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
    return mallctl(name, NULL, NULL, NULL, 0) == 0 ? 0 : -1;
}

void alloc_tune_for_limit(int on)
{
    /* dirty_decay_ms: jemalloc's default 10 s, 200 ms under a limit;
     * background threads do the decaying off the serving threads. */
    ssize_t decay = on ? 200 : 10000, muzzy = 0;
    bool bg = on != 0;
    unsigned narenas = 0;
    size_t sz = sizeof(narenas);
    char name[64];
    mallctl("background_thread", NULL, NULL, &bg, sizeof(bg));
    mallctl("arenas.dirty_decay_ms", NULL, NULL, &decay, sizeof(decay));
    mallctl("arenas.muzzy_decay_ms", NULL, NULL, &muzzy, sizeof(muzzy));
    if (mallctl("arenas.narenas", &narenas, &sz, NULL, 0) != 0)
        return;
    for (unsigned i = 0; i < narenas; i++) {
        snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
        mallctl(name, NULL, NULL, &decay, sizeof(decay)); /* fails for uninitialised arenas: fine */
        snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
        mallctl(name, NULL, NULL, &muzzy, sizeof(muzzy));
    }
}

int alloc_trim_dirty(size_t limit)
{
    struct alloc_stats st;
    char name[64];
    if (alloc_stats_get(&st) < 0 || st.resident <= st.active || st.resident - st.active <= limit)
        return 0;
    snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
    return mallctl(name, NULL, NULL, NULL, 0) == 0;
}

#else /* HK_NO_JEMALLOC */

int alloc_trim_dirty(size_t limit)
{
    (void)limit;
    return 0;
}

void alloc_tune_for_limit(int on)
{
    (void)on;
}

int alloc_stats_get(struct alloc_stats *st)
{
    memset(st, 0, sizeof(*st));
    return -1;
}

char *alloc_stats_text(void)
{
    return hk_strdup("Stats not supported for the current allocator");
}

int alloc_purge(void)
{
    return 0;
}

#endif
