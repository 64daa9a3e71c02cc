/* mem.h - allocation wrappers over jemalloc and, for requests of 129 to
 * 1024 bytes, the slab (base/slab.h: 16-byte size classes instead of
 * jemalloc's 32/64/128-byte steps; off in sanitizer builds and with
 * HOTKV_NO_SLAB=1 in the environment).
 *
 * OOM policy: an allocation failure aborts the process with a log line, as
 * Redis does; callers never check for NULL.  maxmemory (issue 7) keeps the
 * process away from that point.  used_memory is what jemalloc counts per
 * thread plus the slab's blocks (see Accounting below). */
#ifndef HK_MEM_H
#define HK_MEM_H

#include <stddef.h>

void *hk_malloc(size_t n);
void *hk_calloc(size_t n);
void *hk_realloc(void *p, size_t n);
/* For blocks that need only 8-byte alignment (key entries, db/entry.h):
 * sizes the slab serves are rounded up to 8 bytes instead of 16
 * (base/slab.h).  Free them with hk_free; hk_realloc of such a block
 * returns an ordinary one. */
void *hk_malloc_packed(size_t n);
void *hk_realloc_packed(void *p, size_t n);
void hk_free(void *p);
char *hk_strdup(const char *s);
void *hk_memdup(const void *p, size_t n);
size_t hk_usable(void *p);
/* Growth of arrays and buffers: the capacity (in elements of elsz bytes)
 * to grow cur to so that it holds need: cur doubled as often as it takes,
 * starting from min when cur is 0; never less than need.  A size whose
 * bytes would not fit a size_t is an allocation failure (abort with a log
 * line, the OOM policy above) instead of a wrapped, too small capacity. */
size_t hk_grow_cap(size_t cur, size_t need, size_t min, size_t elsz);
/* n elements of elsz bytes, checked for overflow (abort as above). */
size_t hk_array_bytes(size_t n, size_t elsz);

/* Accounting.  jemalloc keeps, per thread, the bytes that thread has
 * allocated and freed (thread.allocatedp / thread.deallocatedp, usable
 * sizes), and the slab does the same for its blocks; the two are added.  Every thread HotKV starts registers them here at its start and
 * folds its final figures into a retired total before it exits, so the sum
 * over threads is what the allocator holds for the process at any moment,
 * wherever a block was allocated or freed.
 *
 * mem_used() sums every registered thread (exact; takes the registry
 * mutex: INFO, eviction decisions after freeing).  mem_used_fast() is the
 * per-command estimate: a global total to which each thread adds its own
 * change once it reaches MEM_PUBLISH_STEP, plus the caller's unpublished
 * change.  It is off by less than MEM_PUBLISH_STEP per other thread (the
 * slack documented in docs/architecture.md) and costs two loads of the
 * caller's own counters and one of the shared total.
 *
 * Sanitizer builds (no jemalloc) use the sanitizer allocator's global
 * count for both. */
#define MEM_PUBLISH_STEP (64 * 1024)
void mem_thread_register(void);
void mem_thread_unregister(void);
/* Push this thread's change to the shared total if it reached the step
 * (background threads call it after freeing or allocating in bulk). */
void mem_publish(void);
size_t mem_used(void);     /* bytes allocated by the process (exact) */
size_t mem_used_slab(void); /* of which slab blocks (base/slab.h) */
size_t mem_used_fast(void);
/* Net bytes this thread has allocated minus freed since it started
 * (eviction measures what one delete gave back with it); 0 if unknown. */
long long mem_thread_net(void);
/* The highest mem_used() seen (updated by mem_used()). */
size_t mem_peak(void);
void mem_peak_reset(void);
size_t mem_rss(void);      /* resident set size of the process */
const char *mem_allocator(void);

#endif
