/* malloc_stats.h - what the allocator itself reports (jemalloc's mallctl):
 * the figures behind INFO memory's allocator_* fields and MEMORY STATS,
 * MEMORY MALLOC-STATS's text and MEMORY PURGE.
 *
 *  allocated  bytes handed to the application (usable sizes)
 *  active     bytes of the pages holding them (allocated + the free space
 *             inside those pages: external fragmentation)
 *  resident   bytes of the allocator's pages that are in RAM (active +
 *             dirty pages not yet returned + metadata)
 *  mapped     bytes of active extents mapped
 *  retained   bytes mapped in the past and kept as virtual memory only
 *
 * jemalloc refreshes these only when its "epoch" advances, so every read
 * bumps the epoch first: a few tens of microseconds, taken by INFO and
 * MEMORY STATS, never by the command path.
 *
 * Sanitizer builds (HK_NO_JEMALLOC) run on the sanitizer's allocator,
 * which has none of this: alloc_stats_get() returns -1 (zeros),
 * alloc_stats_text() says so, alloc_purge() does nothing and succeeds, as
 * Redis behaves on libc malloc. */
#ifndef HK_MALLOC_STATS_H
#define HK_MALLOC_STATS_H

#include <stddef.h>

struct alloc_stats {
    size_t allocated, active, resident, mapped, retained;
};

/* 0 and *st filled; -1 (all zero) when the allocator has no statistics. */
int alloc_stats_get(struct alloc_stats *st);
/* malloc_stats_print's report as a NUL-terminated heap string (hk_free it);
 * "Stats not supported for the current allocator" without jemalloc. */
char *alloc_stats_text(void);
/* Flush this thread's cache and return every arena's unused dirty pages
 * to the kernel: 0 ok, -1 the allocator refused. */
int alloc_purge(void);
/* With maxmemory set, pages the allocator keeps after frees (dirty, not yet
 * given back: jemalloc returns them over dirty_decay_ms, 10 s) would let
 * RSS run far past the limit under churn.  If resident - active exceeds
 * limit, purge every arena now: 1 purged, 0 nothing to do.  The persistence
 * thread calls it every cron tick (persist/snapshot.c), off the serving
 * path. */
int alloc_trim_dirty(size_t limit);
/* maxmemory set (on) or cleared: under a limit, freed pages go back to the
 * kernel after 200 ms instead of jemalloc's 10 s, decayed by jemalloc's
 * background threads (cmd/evict.c calls it when maxmemory changes). */
void alloc_tune_for_limit(int on);

#endif
