/* slab.c - see slab.h.
 *
 * Page states.  A page carved from the region belongs either to one heap
 * (page->heap, set when the heap takes it, fixed until the page is given
 * back) or to the global free list (page_mu).  In a heap, a page is its
 * class's current page (heap->cur), on the class's avail list (it has free
 * blocks), or on no list (full, or only remote frees pending).  A page goes
 * back to the free list when no block of it is out: used == 0, nothing on
 * its remote list, no remote free in flight (rfreeing) and not queued on
 * the heap's remote-pages list.
 *
 * Remote free (a block freed by a thread that does not hold the page's
 * heap): rfreeing++, push the block on page->tfree, and, if the page was
 * not queued yet, push the page on heap->rpages; rfreeing--.  The holder's
 * collect() takes the whole rpages list, and for each page first clears
 * `queued` (a later remote free queues it again), then takes tfree.  While
 * a block of the page is out no one can give the page away, and the
 * rfreeing count covers the window in which a freer has pushed its block
 * but not yet queued the page.  Pages are popped only as a whole list
 * (exchange), so the lock-free pushes have no ABA problem. */
#include "slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define CLS0 17 /* SLAB_MIN rounds to 17 * 8 = 136 */
#define NCLS (SLAB_MAX / 8 - CLS0 + 1)
#define PAGE_HDR 128

_Static_assert((SLAB_MIN + 7) / 8 == CLS0, "first class");
_Static_assert(SLAB_MAX % 16 == 0, "the last class is a 16-byte one");
_Static_assert(PAGE_HDR % 16 == 0, "blocks of a 16-byte class are 16-byte aligned");

struct heap;

struct spage {
    /* The holder's line. */
    struct heap *heap;
    void *free;  /* local free list */
    char *bump;  /* first block never handed out */
    char *end;
    struct spage *next, *prev; /* avail list; next also links the global free list */
    uint32_t used;  /* blocks out (including those on tfree) */
    uint32_t bsize;
    uint16_t cls;
    uint8_t in_avail;
    /* Remote frees' line. */
    _Alignas(64) _Atomic(void *) tfree;
    _Atomic(struct spage *) rnext;
    atomic_int queued;
    atomic_int rfreeing;
};
_Static_assert(sizeof(struct spage) <= PAGE_HDR, "page header");

struct heap {
    struct spage *cur[NCLS];
    struct spage *avail[NCLS];
    _Alignas(64) _Atomic(struct spage *) rpages;
    struct heap *pool_next;
};

uintptr_t slab_base_, slab_len_;
int slab_state_; /* 0 not tried yet, 1 on, -1 off */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t heap_key;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER; /* pool, nheaps */
static struct heap *pool;
static size_t nheaps;
static pthread_mutex_t page_mu = PTHREAD_MUTEX_INITIALIZER; /* the fields below */
static size_t carved; /* pages carved from the region */
static struct spage *free_dirty; /* linked through the pages themselves */
static uint32_t *clean; /* page numbers of pages given back to the kernel: a stack kept
                         * out of the pages, so that they stay unbacked */
static size_t nclean, nfree;

static _Thread_local struct heap *my_heap;
static _Thread_local int my_persistent;
static _Thread_local uint64_t my_alloc_bytes, my_free_bytes;

static void lock_all(void)
{
    pthread_mutex_lock(&pool_mu);
    pthread_mutex_lock(&page_mu);
}

static void unlock_all(void)
{
    pthread_mutex_unlock(&page_mu);
    pthread_mutex_unlock(&pool_mu);
}

static void heap_give(struct heap *h);

static void key_dtor(void *v)
{
    if (v && v == my_heap)
        heap_give(v);
}

static int strict_overcommit(void)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    int mode = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%d", &mode) != 1)
        mode = 0;
    fclose(f);
    return mode == 2;
}

static void init(void)
{
    const char *env = getenv("HOTKV_NO_SLAB");
    if ((env && *env && strcmp(env, "0") != 0) || strict_overcommit() || pthread_key_create(&heap_key, key_dtor)) {
        __atomic_store_n(&slab_state_, -1, __ATOMIC_RELEASE);
        return;
    }
    /* Address space only: twice the machine's memory, between 1 GiB and
     * 1 TiB.  Past it, allocations go to jemalloc. */
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    unsigned long long want = pages > 0 && psz > 0 ? 2ULL * (unsigned long long)pages * (unsigned long long)psz : 0;
    if (want < (1ULL << 30))
        want = 1ULL << 30;
    if (want > (1ULL << 40))
        want = 1ULL << 40;
    /* Under an address-space limit (ulimit -v) a quarter of it at most:
     * jemalloc needs the rest. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && want > rl.rlim_cur / 4)
        want = rl.rlim_cur / 4;
    want &= ~(unsigned long long)(SLAB_PAGE - 1);
    void *m = MAP_FAILED;
    while (want >= (256ULL << 20)) {
        m = mmap(NULL, (size_t)want + SLAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
        if (m != MAP_FAILED)
            break;
        want /= 2;
    }
    if (m == MAP_FAILED) {
        __atomic_store_n(&slab_state_, -1, __ATOMIC_RELEASE);
        return;
    }
    void *stk = mmap(NULL, (size_t)(want / SLAB_PAGE) * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stk == MAP_FAILED) {
        munmap(m, (size_t)want + SLAB_PAGE);
        __atomic_store_n(&slab_state_, -1, __ATOMIC_RELEASE);
        return;
    }
    clean = stk;
    uintptr_t base = ((uintptr_t)m + SLAB_PAGE - 1) & ~(uintptr_t)(SLAB_PAGE - 1);
    /* Pages of 4 KiB: a 64 KiB page given back is given back, and a fork
     * child copies what it writes 4 KiB at a time. */
    madvise((void *)base, (size_t)want, MADV_NOHUGEPAGE);
    pthread_atfork(lock_all, unlock_all, unlock_all);
    /* The base before the length (slab_owns reads the length first): a
     * thread that sees the length sees the base. */
    __atomic_store_n(&slab_base_, base, __ATOMIC_RELAXED);
    __atomic_store_n(&slab_len_, (uintptr_t)want, __ATOMIC_RELEASE);
    __atomic_store_n(&slab_state_, 1, __ATOMIC_RELEASE);
}

static struct heap *heap_take(void)
{
    pthread_once(&once, init);
    if (__atomic_load_n(&slab_state_, __ATOMIC_ACQUIRE) < 0)
        return NULL;
    pthread_mutex_lock(&pool_mu);
    struct heap *h = pool;
    if (h)
        pool = h->pool_next;
    pthread_mutex_unlock(&pool_mu);
    if (!h) {
        /* Straight from the system: a heap is never freed (heaps outlive
         * threads), and it is not a block of itself. */
        h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h == MAP_FAILED)
            return NULL;
        pthread_mutex_lock(&pool_mu);
        nheaps++;
        pthread_mutex_unlock(&pool_mu);
    }
    my_heap = h;
    pthread_setspecific(heap_key, h);
    return h;
}

static void avail_add(struct heap *h, struct spage *p)
{
    p->prev = NULL;
    p->next = h->avail[p->cls];
    if (p->next)
        p->next->prev = p;
    h->avail[p->cls] = p;
    p->in_avail = 1;
}

static void avail_del(struct heap *h, struct spage *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        h->avail[p->cls] = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->next = p->prev = NULL;
    p->in_avail = 0;
}

static struct spage *page_new(struct heap *h, unsigned c)
{
    pthread_mutex_lock(&page_mu);
    struct spage *p = free_dirty;
    if (p) {
        free_dirty = p->next;
    } else if (nclean) {
        p = (struct spage *)(slab_base_ + (uintptr_t)clean[--nclean] * SLAB_PAGE);
    } else if ((carved + 1) * (size_t)SLAB_PAGE <= slab_len_) {
        p = (struct spage *)(slab_base_ + carved * (size_t)SLAB_PAGE);
        carved++;
        nfree++; /* counted out below */
    }
    if (p)
        nfree--;
    pthread_mutex_unlock(&page_mu);
    if (!p)
        return NULL;
    uint32_t bs = (uint32_t)(c + CLS0) * 8;
    p->heap = h;
    p->free = NULL;
    p->bump = (char *)p + PAGE_HDR;
    p->end = p->bump + (size_t)((SLAB_PAGE - PAGE_HDR) / bs) * bs;
    p->next = p->prev = NULL;
    p->used = 0;
    p->bsize = bs;
    p->cls = (uint16_t)c;
    p->in_avail = 0;
    atomic_store_explicit(&p->tfree, NULL, memory_order_relaxed);
    atomic_store_explicit(&p->rnext, NULL, memory_order_relaxed);
    atomic_store_explicit(&p->queued, 0, memory_order_relaxed);
    atomic_store_explicit(&p->rfreeing, 0, memory_order_relaxed);
    return p;
}

/* p has no block out as far as its holder knows: give it back if no
 * remote free can still touch it, else keep it where collect finds it. */
static void page_emptied(struct heap *h, struct spage *p)
{
    if (atomic_load(&p->rfreeing) || atomic_load(&p->queued) || atomic_load(&p->tfree)) {
        if (!p->in_avail)
            avail_add(h, p);
        return;
    }
    if (p->in_avail)
        avail_del(h, p);
    p->heap = NULL;
    pthread_mutex_lock(&page_mu);
    p->next = free_dirty;
    free_dirty = p;
    nfree++;
    pthread_mutex_unlock(&page_mu);
}

static void collect(struct heap *h)
{
    struct spage *p = atomic_exchange(&h->rpages, NULL);
    while (p) {
        struct spage *next = atomic_load(&p->rnext);
        atomic_store(&p->queued, 0);
        void *b = atomic_exchange(&p->tfree, NULL);
        if (b) {
            uint32_t n = 1;
            void *t = b;
            while (*(void **)t) {
                t = *(void **)t;
                n++;
            }
            *(void **)t = p->free;
            p->free = b;
            p->used -= n;
        }
        if (p != h->cur[p->cls]) {
            if (p->used == 0)
                page_emptied(h, p);
            else if (!p->in_avail && p->free)
                avail_add(h, p);
        }
        p = next;
    }
}

static inline void *take(struct spage *p)
{
    void *b = p->free;
    if (b) {
        p->free = *(void **)b;
    } else if (p->bump < p->end) {
        b = p->bump;
        p->bump += p->bsize;
    } else {
        return NULL;
    }
    p->used++;
    my_alloc_bytes += p->bsize;
    return b;
}

static void *alloc_slow(struct heap *h, unsigned c)
{
    if (atomic_load_explicit(&h->rpages, memory_order_relaxed))
        collect(h);
    struct spage *p = h->cur[c];
    void *b;
    if (p && (b = take(p)))
        return b;
    /* The current page is full: it leaves every list until a block of it
     * is freed (slab_free or collect puts it on the avail list). */
    p = h->avail[c];
    if (p)
        avail_del(h, p);
    else if (!(p = page_new(h, c)))
        return NULL;
    h->cur[c] = p;
    return take(p);
}

static inline void *alloc_cls(unsigned c)
{
    struct heap *h = my_heap;
    if (__builtin_expect(!h, 0) && !(h = heap_take()))
        return NULL;
    struct spage *p = h->cur[c];
    if (__builtin_expect(p != NULL, 1)) {
        void *b = p->free;
        if (b) {
            p->free = *(void **)b;
            p->used++;
            my_alloc_bytes += p->bsize;
            return b;
        }
        if (p->bump < p->end) {
            b = p->bump;
            p->bump += p->bsize;
            p->used++;
            my_alloc_bytes += p->bsize;
            return b;
        }
    }
    return alloc_slow(h, c);
}

void *slab_alloc(size_t n)
{
    return alloc_cls((unsigned)(((n + 15) & ~(size_t)15) >> 3) - CLS0);
}

void *slab_alloc_packed(size_t n)
{
    return alloc_cls((unsigned)((n + 7) >> 3) - CLS0);
}

static void remote_free(struct spage *p, void *b)
{
    atomic_fetch_add(&p->rfreeing, 1);
    void *old = atomic_load_explicit(&p->tfree, memory_order_relaxed);
    do {
        *(void **)b = old;
    } while (!atomic_compare_exchange_weak_explicit(&p->tfree, &old, b, memory_order_release, memory_order_relaxed));
    if (!atomic_exchange(&p->queued, 1)) {
        struct heap *h = p->heap;
        struct spage *top = atomic_load_explicit(&h->rpages, memory_order_relaxed);
        do {
            atomic_store_explicit(&p->rnext, top, memory_order_relaxed);
        } while (
            !atomic_compare_exchange_weak_explicit(&h->rpages, &top, p, memory_order_release, memory_order_relaxed));
    }
    atomic_fetch_sub(&p->rfreeing, 1);
}

void slab_free(void *b)
{
    struct spage *p = (struct spage *)((uintptr_t)b & ~(uintptr_t)(SLAB_PAGE - 1));
    struct heap *h = my_heap;
    my_free_bytes += p->bsize;
    if (p->heap != h) {
        remote_free(p, b);
        return;
    }
    *(void **)b = p->free;
    p->free = b;
    p->used--;
    if (p == h->cur[p->cls])
        return;
    if (p->used == 0)
        page_emptied(h, p);
    else if (!p->in_avail)
        avail_add(h, p);
}

size_t slab_size(const void *b)
{
    const struct spage *p = (const struct spage *)((uintptr_t)b & ~(uintptr_t)(SLAB_PAGE - 1));
    return p->bsize;
}

static void heap_give(struct heap *h)
{
    collect(h);
    my_heap = NULL;
    pthread_setspecific(heap_key, NULL);
    pthread_mutex_lock(&pool_mu);
    h->pool_next = pool;
    pool = h;
    pthread_mutex_unlock(&pool_mu);
}

void slab_thread_persistent(void)
{
    my_persistent = 1;
}

void slab_thread_idle(void)
{
    struct heap *h = my_heap;
    if (!h)
        return;
    if (!my_persistent)
        heap_give(h);
    else if (atomic_load_explicit(&h->rpages, memory_order_relaxed))
        collect(h);
}

void slab_thread_exit(void)
{
    if (my_heap)
        heap_give(my_heap);
}

void slab_thread_counters(const volatile uint64_t **alloc, const volatile uint64_t **dealloc)
{
    *alloc = &my_alloc_bytes;
    *dealloc = &my_free_bytes;
}

void slab_maintain(void)
{
    if (__atomic_load_n(&slab_state_, __ATOMIC_ACQUIRE) <= 0)
        return;
    /* Held under pool_mu, a pooled heap is ours to collect. */
    pthread_mutex_lock(&pool_mu);
    for (struct heap *h = pool; h; h = h->pool_next)
        collect(h);
    pthread_mutex_unlock(&pool_mu);
    /* Emptied pages back to the kernel, without holding page_mu across
     * the system calls (page_new takes a clean page only after the dirty
     * ones, so these are not missed meanwhile). */
    pthread_mutex_lock(&page_mu);
    struct spage *list = free_dirty;
    free_dirty = NULL;
    size_t n = 0;
    for (struct spage *p = list; p; p = p->next)
        n++;
    nfree -= n;
    pthread_mutex_unlock(&page_mu);
    while (list) {
        struct spage *p = list, *last = p;
        list = p->next;
        /* Adjacent pages in one call. */
        while (list && (uintptr_t)list == (uintptr_t)last + SLAB_PAGE) {
            last = list;
            list = list->next;
        }
        size_t len = (uintptr_t)last + SLAB_PAGE - (uintptr_t)p;
        madvise(p, len, MADV_DONTNEED);
        pthread_mutex_lock(&page_mu);
        for (uintptr_t a = (uintptr_t)p; a <= (uintptr_t)last; a += SLAB_PAGE) {
            clean[nclean++] = (uint32_t)((a - slab_base_) / SLAB_PAGE);
            nfree++;
        }
        pthread_mutex_unlock(&page_mu);
    }
}

void slab_stats(struct slab_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (__atomic_load_n(&slab_state_, __ATOMIC_ACQUIRE) <= 0)
        return;
    pthread_mutex_lock(&pool_mu);
    st->heaps = nheaps;
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_lock(&page_mu);
    st->reserved = slab_len_;
    st->pages = carved;
    st->free_pages = nfree;
    pthread_mutex_unlock(&page_mu);
}
