/* slab.h - exact-size blocks for the allocations jemalloc rounds most.
 *
 * jemalloc's size classes are 32 bytes apart from 128 to 256 bytes, 64 apart
 * up to 512 and 128 apart up to 1024: a key of 16 bytes with a 256-byte
 * value (a 288-byte entry) takes 320 bytes.  Requests of SLAB_MIN to
 * SLAB_MAX bytes come here instead (mem.c routes them) and get a block
 * rounded up to 16 bytes only, 16-byte aligned as malloc's are.  Key
 * entries (db/entry.h), which need only 8-byte alignment, ask for blocks
 * rounded up to 8 bytes (slab_alloc_packed): classes are 8 bytes apart,
 * and the ones that are not multiples of 16 serve only such requests.
 *
 * Layout.  One region of address space is reserved at the first use
 * (MAP_NORESERVE: nothing is committed until touched) and cut into 64 KiB
 * pages; a page holds blocks of one size class.  Whether a pointer is ours
 * is one subtraction and compare (slab_owns), so hk_free pays nothing for
 * the blocks that are jemalloc's.
 *
 * Threads.  Each thread that allocates holds a heap: for every class, the
 * page it allocates from and a list of its other pages with free blocks.
 * Only the holder touches a heap's lists and its pages' local free lists,
 * so the common allocation and free are plain loads and stores.  A block
 * freed by another thread goes onto its page's atomic list (one CAS) and
 * the page onto its heap's atomic list of pages to collect; the holder
 * collects them on its next slow path or its next slab_thread_idle().
 *
 * Heaps are not tied to thread lifetimes: a thread that is not a worker
 * gives its heap back to a pool at every slab_thread_idle() (mem_publish)
 * and at exit, and the next thread that allocates takes one from the pool.
 * slab_maintain() (the persist thread, every cron period) collects the
 * pooled heaps' remote frees and gives the pages that emptied back to the
 * kernel (MADV_DONTNEED), off the workers' path.
 *
 * Accounting.  Each thread counts the block bytes it allocated and freed
 * (slab_thread_counters); base/mem.c adds them to jemalloc's per-thread
 * counts, so used_memory counts the blocks, not the pages.
 *
 * Not used in sanitizer builds (the sanitizers' allocator keeps finding
 * use-after-free and leaks there); the unit tests drive it directly in
 * every build. */
#ifndef HK_SLAB_H
#define HK_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SLAB_MIN 129
#define SLAB_MAX 1024
#define SLAB_PAGE (64 * 1024)

extern uintptr_t slab_base_, slab_len_;
extern int slab_state_; /* 0 not tried yet, 1 on, -1 off (read relaxed) */

/* A block of at least n bytes (SLAB_MIN <= n <= SLAB_MAX), 16-byte
 * aligned; NULL when the slab is unavailable (no region could be reserved,
 * the region is used up, or the kernel is in strict overcommit mode): the
 * caller then uses the general allocator. */
void *slab_alloc(size_t n);
/* The same rounded up to 8 bytes and 8-byte aligned only. */
void *slab_alloc_packed(size_t n);
void slab_free(void *p);
/* The block's usable size. */
size_t slab_size(const void *p);
/* The class size a request of n bytes gets. */
static inline size_t slab_round(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static inline size_t slab_round_packed(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static inline int slab_owns(const void *p)
{
    uintptr_t len = __atomic_load_n(&slab_len_, __ATOMIC_ACQUIRE); /* 0 until the region exists */
    return (uintptr_t)p - __atomic_load_n(&slab_base_, __ATOMIC_RELAXED) < len;
}

/* Workers keep their heap for their whole life (slab_thread_idle only
 * collects); every other thread lends its heap back to the pool. */
void slab_thread_persistent(void);
void slab_thread_idle(void);
void slab_thread_exit(void);
/* This thread's block bytes allocated and freed so far (written by it
 * only). */
void slab_thread_counters(const volatile uint64_t **alloc, const volatile uint64_t **dealloc);
/* The persist thread's period: pooled heaps' remote frees, and emptied
 * pages back to the kernel. */
void slab_maintain(void);

struct slab_stats {
    size_t reserved;  /* bytes of address space reserved */
    size_t pages;     /* pages carved out of the region so far */
    size_t free_pages; /* of those, pages holding no block */
    size_t heaps;     /* heaps created */
};
void slab_stats(struct slab_stats *st);

#endif
