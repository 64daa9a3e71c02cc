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
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "slab.h"

#ifndef HK_NO_JEMALLOC
/* Requests SLAB_MIN..SLAB_MAX go to the slab (base/slab.h) while it is on
 * or not tried yet; one compare for the others. */
#define SLAB_SIZE(n) ((size_t)(n) - SLAB_MIN <= (size_t)(SLAB_MAX - SLAB_MIN))
#define SLAB_TRY(n) (SLAB_SIZE(n) && __atomic_load_n(&slab_state_, __ATOMIC_RELAXED) >= 0)
#endif

#ifndef HK_NO_JEMALLOC
/* jemalloc's options, read at its start-up: background threads return
 * freed pages to the kernel, so a worker's free never pays for the madvise
 * (as Redis's default jemalloc-bg-thread yes).  MALLOC_CONF in the
 * environment still overrides. */
const char *malloc_conf = "background_thread:true";
#endif

static void oom(size_t n)
{
    log_msg(LL_WARNING, "Out Of Memory allocating %zu bytes!", n);
    abort();
}

void *hk_malloc(size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (SLAB_TRY(n)) {
        void *b = slab_alloc(n);
        if (b)
            return b;
    }
#endif
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *hk_malloc_packed(size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (SLAB_TRY(n)) {
        void *b = slab_alloc_packed(n);
        if (b)
            return b;
    }
#endif
    return hk_malloc(n);
}

void *hk_realloc_packed(void *p, size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (p && slab_owns(p) && SLAB_SIZE(n) && slab_round_packed(n) == slab_size(p))
        return p;
    if (p && SLAB_TRY(n)) {
        void *b = slab_alloc_packed(n);
        if (b) {
            size_t old = hk_usable(p);
            memcpy(b, p, old < n ? old : n);
            hk_free(p);
            return b;
        }
    }
#endif
    return hk_realloc(p, n);
}

void *hk_calloc(size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (SLAB_TRY(n)) {
        void *b = slab_alloc(n);
        if (b)
            return memset(b, 0, n);
    }
#endif
    void *p = calloc(1, n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *hk_realloc(void *p, size_t n)
{
#ifndef HK_NO_JEMALLOC
    if (!p)
        return hk_malloc(n);
    if (slab_owns(p)) {
        size_t old = slab_size(p);
        if (SLAB_SIZE(n) && slab_round(n) == old)
            return p;
        void *q = hk_malloc(n);
        memcpy(q, p, old < n ? old : n);
        slab_free(p);
        return q;
    }
    if (SLAB_TRY(n)) { /* into the slab: exact size instead of jemalloc's class */
        void *b = slab_alloc(n);
        if (b) {
            size_t old = malloc_usable_size(p);
            memcpy(b, p, old < n ? old : n);
            free(p);
            return b;
        }
    }
#endif
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

size_t hk_grow_cap(size_t cur, size_t need, size_t min, size_t elsz)
{
    size_t c = cur ? cur : (min ? min : 1);
    if (elsz == 0)
        elsz = 1;
    if (need > SIZE_MAX / elsz)
        oom(SIZE_MAX);
    while (c < need) {
        if (c > SIZE_MAX / 2 / elsz) {
            c = need; /* doubling would overflow: exactly what is needed */
            break;
        }
        c *= 2;
    }
    return c;
}

size_t hk_array_bytes(size_t n, size_t elsz)
{
    if (elsz && n > SIZE_MAX / elsz)
        oom(SIZE_MAX);
    return n * elsz;
}

void hk_free(void *p)
{
#ifndef HK_NO_JEMALLOC
    if (slab_owns(p)) {
        slab_free(p);
        return;
    }
#endif
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
#ifndef HK_NO_JEMALLOC
    if (slab_owns(p))
        return slab_size(p);
#endif
    return malloc_usable_size(p);
}

/* ------------------------------------------------------ accounting --- */
#define MEM_MAX_THREADS 512

#ifndef HK_NO_JEMALLOC
struct mem_thread {
    const volatile uint64_t *alloc, *dealloc;   /* jemalloc's, written by the owner */
    const volatile uint64_t *salloc, *sdealloc; /* the slab's (base/slab.h), the same */
};
/* Registry: slots [0, mt_hi) may be in use; written under mt_mu. */
static struct mem_thread mts[MEM_MAX_THREADS];
static int mt_hi;
static pthread_mutex_t mt_mu = PTHREAD_MUTEX_INITIALIZER;
static long long retired_net; /* net bytes of threads that exited (mt_mu) */
static long long retired_slab; /* of which slab blocks (mt_mu) */
static _Thread_local int my_slot = -1;
static _Thread_local const volatile uint64_t *my_alloc, *my_dealloc, *my_salloc, *my_sdealloc;
static _Thread_local long long my_published;

static inline long long thread_net(const volatile uint64_t *a, const volatile uint64_t *d,
                                   const volatile uint64_t *sa, const volatile uint64_t *sd)
{
    return (long long)(*a - *d) + (long long)(*sa - *sd);
}
#endif
#ifndef HK_NO_JEMALLOC
/* Every thread adds to it (per 64 KB of change): a line of its own, apart
 * from mt_mu and peak, which worker 0 writes at every cron tick. */
static _Alignas(64) _Atomic long long pub_total; /* sum of every thread's published net */
#endif
static _Alignas(64) _Atomic size_t peak;

void mem_thread_register(void)
{
#ifndef HK_NO_JEMALLOC
    uint64_t *a = NULL, *d = NULL;
    size_t sz = sizeof(a);
    if (my_slot >= 0)
        return;
    if (mallctl("thread.allocatedp", &a, &sz, NULL, 0) != 0 || mallctl("thread.deallocatedp", &d, &sz, NULL, 0) != 0)
        return;
    const volatile uint64_t *sa, *sd;
    slab_thread_counters(&sa, &sd);
    pthread_mutex_lock(&mt_mu);
    for (int i = 0; i < MEM_MAX_THREADS; i++) {
        if (!mts[i].alloc) {
            mts[i].alloc = a;
            mts[i].dealloc = d;
            mts[i].salloc = sa;
            mts[i].sdealloc = sd;
            my_slot = i;
            if (i >= mt_hi)
                mt_hi = i + 1;
            break;
        }
    }
    pthread_mutex_unlock(&mt_mu);
    if (my_slot < 0) {
        log_msg(LL_WARNING, "Memory accounting: more than %d threads, this one is not counted", MEM_MAX_THREADS);
        return;
    }
    my_alloc = a;
    my_dealloc = d;
    my_salloc = sa;
    my_sdealloc = sd;
    my_published = thread_net(a, d, sa, sd);
    atomic_fetch_add_explicit(&pub_total, my_published, memory_order_relaxed);
#endif
}

void mem_thread_unregister(void)
{
#ifndef HK_NO_JEMALLOC
    slab_thread_exit(); /* its heap to the pool (base/slab.h) */
    if (my_slot < 0)
        return;
    pthread_mutex_lock(&mt_mu);
    long long net = thread_net(my_alloc, my_dealloc, my_salloc, my_sdealloc);
    retired_net += net;
    retired_slab += (long long)(*my_salloc - *my_sdealloc);
    atomic_fetch_add_explicit(&pub_total, net - my_published, memory_order_relaxed);
    mts[my_slot].alloc = mts[my_slot].dealloc = mts[my_slot].salloc = mts[my_slot].sdealloc = NULL;
    while (mt_hi > 0 && !mts[mt_hi - 1].alloc)
        mt_hi--;
    pthread_mutex_unlock(&mt_mu);
    my_slot = -1;
    my_alloc = my_dealloc = my_salloc = my_sdealloc = NULL;
#endif
}

long long mem_thread_net(void)
{
#ifndef HK_NO_JEMALLOC
    if (my_alloc)
        return thread_net(my_alloc, my_dealloc, my_salloc, my_sdealloc);
#endif
    return 0;
}

void mem_publish(void)
{
#ifndef HK_NO_JEMALLOC
    if (!my_alloc)
        return;
    long long net = thread_net(my_alloc, my_dealloc, my_salloc, my_sdealloc), d = net - my_published;
    if (d >= MEM_PUBLISH_STEP || d <= -MEM_PUBLISH_STEP) {
        atomic_fetch_add_explicit(&pub_total, d, memory_order_relaxed);
        my_published = net;
    }
#endif
}

static void peak_note(size_t v)
{
    size_t p = atomic_load_explicit(&peak, memory_order_relaxed);
    while (v > p && !atomic_compare_exchange_weak(&peak, &p, v))
        ;
}

#ifndef HK_NO_JEMALLOC
/* The registry's sum: every byte counted (all), or the slab's blocks only. */
static size_t registry_sum(int slab_only)
{
    pthread_mutex_lock(&mt_mu);
    long long sum = slab_only ? retired_slab : retired_net;
    for (int i = 0; i < mt_hi; i++)
        if (mts[i].alloc)
            sum += slab_only ? (long long)(*mts[i].salloc - *mts[i].sdealloc)
                             : thread_net(mts[i].alloc, mts[i].dealloc, mts[i].salloc, mts[i].sdealloc);
    pthread_mutex_unlock(&mt_mu);
    return sum > 0 ? (size_t)sum : 0;
}
#endif

size_t mem_used(void)
{
#ifdef HK_NO_JEMALLOC
    size_t v = __sanitizer_get_current_allocated_bytes();
#else
    size_t v = registry_sum(0);
#endif
    peak_note(v);
    return v;
}

size_t mem_used_slab(void)
{
#ifdef HK_NO_JEMALLOC
    return 0;
#else
    return registry_sum(1);
#endif
}

size_t mem_used_fast(void)
{
#ifdef HK_NO_JEMALLOC
    return __sanitizer_get_current_allocated_bytes();
#else
    if (!my_alloc)
        return mem_used();
    long long net = thread_net(my_alloc, my_dealloc, my_salloc, my_sdealloc), d = net - my_published;
    if (d >= MEM_PUBLISH_STEP || d <= -MEM_PUBLISH_STEP) {
        atomic_fetch_add_explicit(&pub_total, d, memory_order_relaxed);
        my_published = net;
        d = 0;
    }
    long long v = atomic_load_explicit(&pub_total, memory_order_relaxed) + d;
    return v > 0 ? (size_t)v : 0;
#endif
}

size_t mem_peak(void)
{
    return atomic_load_explicit(&peak, memory_order_relaxed);
}

void mem_peak_reset(void)
{
    atomic_store_explicit(&peak, 0, memory_order_relaxed);
    peak_note(mem_used());
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
