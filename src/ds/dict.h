/* dict.h - the hash table of large hashes, sets and sorted sets.
 *
 * Intrusive chaining: each element is the caller's allocation, which
 * starts with a struct dict_link; the table holds only the bucket array
 * (power of two), so an element costs one pointer of bucket plus its link.
 * The element's key bytes are found through the type's key() callback,
 * so a set member, a hash field with its value, or a sorted-set skiplist
 * node can all be indexed without another allocation.
 *
 * Growth doubles the bucket array when used > buckets; removals shrink it
 * when used < buckets / 8.  A resize rehashes in one go: sets of millions
 * take a few milliseconds once, amortized over as many inserts.
 *
 * dict_scan implements SCAN's guarantee (Redis's reverse-binary cursor):
 * every element present for the whole iteration is returned at least
 * once, whatever resizes happen between calls.
 *
 * Not thread-safe: the owner (an entry under its shard lock) serializes. */
#ifndef HK_DICT_H
#define HK_DICT_H

#include <stddef.h>
#include <stdint.h>

struct dict_link {
    struct dict_link *next;
};

struct dict_type {
    /* The key bytes of an element. */
    const char *(*key)(const struct dict_link *it, size_t *len);
};

struct dict {
    struct dict_link **b;
    uint64_t mask;       /* buckets - 1 */
    size_t used;
    const struct dict_type *type;
    size_t maxchain;     /* >= the longest chain (exact after a resize) */
};

/* Presizing never makes more buckets than this (64M: a 512 MiB table);
 * bigger tables grow by doubling as elements are added. */
#define DICT_MAX_PRESIZE ((uint64_t)1 << 26)
/* The bucket count a table presized for n elements gets: a power of two
 * >= n, at least 4, capped at DICT_MAX_PRESIZE (never wraps). */
uint64_t dict_buckets_for(size_t n);

/* size_hint: expected elements (0 = default; capped, see above). */
struct dict *dict_new(const struct dict_type *t, size_t size_hint);
/* Frees the table; free_it (if given) is called on every element. */
void dict_free(struct dict *d, void (*free_it)(struct dict_link *));
uint64_t dict_hash(const char *key, size_t len);
struct dict_link *dict_find(const struct dict *d, const char *key, size_t len);
/* Add an element whose key is absent (the caller checked). */
void dict_add(struct dict *d, struct dict_link *it);
/* Unlink and return the element with that key (the caller frees it), or
 * NULL.  May shrink the table. */
struct dict_link *dict_remove(struct dict *d, const char *key, size_t len);
/* Replace element old (present) by new (same key): for reallocated items. */
void dict_replace(struct dict *d, struct dict_link *old, struct dict_link *nw);
static inline size_t dict_size(const struct dict *d)
{
    return d->used;
}
/* Bytes of the table itself (not the elements). */
size_t dict_mem(const struct dict *d);
/* A random element (NULL when empty), exactly uniform (rejection sampling
 * over bucket x depth < maxchain; expected draws buckets*maxchain/used). */
struct dict_link *dict_random(const struct dict *d);

/* Iteration without modification: start with it = {0}. */
struct dict_iter {
    uint64_t bucket;
    struct dict_link *cur;
};
struct dict_link *dict_next(const struct dict *d, struct dict_iter *it);

/* One SCAN step: calls fn on every element of the buckets visited, returns
 * the next cursor (0 when done). Visits at least one bucket. */
uint64_t dict_scan(const struct dict *d, uint64_t cursor, void (*fn)(void *arg, const struct dict_link *it), void *arg);

/* Pre-size the table for n elements (no shrinking). */
void dict_expand(struct dict *d, size_t n);

#endif
