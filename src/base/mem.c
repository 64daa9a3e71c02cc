/* mem.c - see mem.h. */
#include "mem.h"

#ifdef HK_NO_JEMALLOC
/* Sanitizer builds use the sanitizer's own malloc, which keeps its own
 * count of allocated bytes. */
#include <malloc.h>
size_t __sanitizer_get_current_allocated_bytes(void); /* ASan/TSan runtime */
#else
#include <jemalloc/jemalloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static void oom(size_t n)
{
    log_msg(LL_WARNING, "Out Of Memory allocating %zu bytes!", n);
    abort();
}

void *hk_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *hk_calloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *hk_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

void hk_free(void *p)
{
    free(p);
}

char *hk_strdup(const char *s)
{
    return hk_memdup(s, strlen(s) + 1);
}

void *hk_memdup(const void *p, size_t n)
{
    void *q = hk_malloc(n);
    memcpy(q, p, n);
    return q;
}

size_t hk_usable(void *p)
{
    return malloc_usable_size(p);
}

size_t mem_used(void)
{
#ifdef HK_NO_JEMALLOC
    return __sanitizer_get_current_allocated_bytes();
#else
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch), allocated = 0;
    /* Refresh jemalloc's cached statistics, then read them. */
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    sz = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &sz, NULL, 0) != 0)
        return 0;
    return allocated;
#endif
}

size_t mem_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0, rss = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &pages, &rss) != 2)
        rss = 0;
    fclose(f);
    return rss * (size_t)sysconf(_SC_PAGESIZE);
}

const char *mem_allocator(void)
{
#ifdef HK_NO_JEMALLOC
    return "libc";
#else
    return "jemalloc-5.3.0";
#endif
}
