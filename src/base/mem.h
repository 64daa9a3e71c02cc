/* mem.h - allocation wrappers over jemalloc.
 *
 * OOM policy: an allocation failure aborts the process with a log line, as
 * Redis does; callers never check for NULL.  maxmemory (issue 7) keeps the
 * process away from that point.  used_memory comes from jemalloc's own
 * "stats.allocated", the truth about what the allocator holds. */
#ifndef HK_MEM_H
#define HK_MEM_H

#include <stddef.h>

void *hk_malloc(size_t n);
void *hk_calloc(size_t n);
void *hk_realloc(void *p, size_t n);
void hk_free(void *p);
char *hk_strdup(const char *s);
void *hk_memdup(const void *p, size_t n);
size_t hk_usable(void *p);

size_t mem_used(void);     /* bytes allocated by the application */
size_t mem_rss(void);      /* resident set size of the process */
const char *mem_allocator(void);

#endif
