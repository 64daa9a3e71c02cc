/* intset.h - a sorted set of integers in one allocation, for small sets
 * of integers (issue 4), in the byte layout Redis calls "intset" so RDB
 * files (issue 6) carry it as it is:
 *
 *   <encoding u32 LE: 2, 4 or 8> <length u32 LE> <values, ascending, LE>
 *
 * The element width is the smallest that holds every member; adding a
 * wider value upgrades the whole set.  Lookups are binary searches.
 * Not thread-safe: the owner (an entry under its shard lock) serializes. */
#ifndef HK_INTSET_H
#define HK_INTSET_H

#include <stddef.h>
#include <stdint.h>

unsigned char *is_new(void);
void is_free(unsigned char *is);
size_t is_len(const unsigned char *is);
size_t is_bytes(const unsigned char *is);
/* Value at index i (0 <= i < len). */
int64_t is_get(const unsigned char *is, size_t i);
int is_find(const unsigned char *is, int64_t v);
/* Add/remove; *changed (if given) is 1 when the set changed. Return the
 * (possibly moved) intset. */
unsigned char *is_add(unsigned char *is, int64_t v, int *changed);
unsigned char *is_remove(unsigned char *is, int64_t v, int *changed);
int64_t is_min(const unsigned char *is);
int64_t is_max(const unsigned char *is);
/* Check an intset read from outside: sizes, encoding, strictly ascending. */
int is_validate(const unsigned char *is, size_t size);

#endif
