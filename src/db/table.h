/* table.h - the per-shard hash index: open addressing, linear probing, one
 * tag byte per slot.
 *
 * A probe reads the tag array (64 slots per cache line) and compares a key
 * only when the 7-bit tag matches, so a miss rarely touches an entry.  Slots
 * are mapped with a multiply-shift on the hash (no power-of-two capacity),
 * which lets the table grow by 1.25x instead of 2x: load stays between 0.70
 * and 0.88.  A slot is 7 bytes: the entry's address in 6 bytes (user-space
 * addresses are below 2^47 on x86-64 and 2^48 on arm64; table_set checks)
 * and its tag; about 9 bytes of index per key in large tables.  A shard
 * holds 1/16384 of the keyspace, so a resize moves a few hundred entries
 * even at 10 M keys: there is never a global rehash and never a long
 * pause.  At 100,000 keys a shard's table holds about 6: small tables
 * grow one allocator size class at a time (see table_insert), which keeps
 * them near the 0.88 load as well.
 *
 * Not thread-safe: the caller holds the shard's lock. */
#ifndef HK_TABLE_H
#define HK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

struct table {
    uint32_t cap;
    uint32_t used;     /* live entries */
    uint32_t tombs;    /* deleted slots not yet reused */
    uint32_t expires;  /* live entries with a TTL */
    unsigned char slots_[]; /* cap 6-byte addresses (table_get/table_set), then cap tag bytes (table_tags) */
};

/* Sanitizer builds (no jemalloc) keep whole, aligned pointers: LeakSanitizer
 * finds live blocks by scanning memory for their addresses, and a 6-byte
 * address hides every entry still in a table at exit. */
#ifdef HK_NO_JEMALLOC
#define TABLE_PTR 8
#else
#define TABLE_PTR 6
#endif
#define TABLE_SLOT (TABLE_PTR + 1)

#define TAG_EMPTY 0
#define TAG_TOMB 1

extern uint64_t table_seed;

static inline uint64_t table_hash(const char *key, size_t len);

struct table *table_new(uint32_t cap);
void table_free(struct table *t, void (*free_entry)(struct entry *));
/* Find a key; returns its slot index or -1. */
long table_find(const struct table *t, const char *key, size_t klen, uint64_t h);
/* Insert an entry whose key is known to be absent; may resize *tp.
 * Returns the slot index. */
long table_insert(struct table **tp, struct entry *e, uint64_t h);
/* Remove the entry at slot i (does not free it); may shrink *tp. */
void table_remove(struct table **tp, long i);
/* The same without the shrink, so the other entries keep their slot
 * indexes (the expiry sweep removes many in one scan), then one
 * table_shrink(): a single rehash to ~40% load if under 20%. */
void table_remove_keep(struct table *t, long i);
void table_shrink(struct table **tp);
/* Warming the caches for a lookup of hash h that comes soon (the keys of
 * pipelined commands, db_prefetch_keys): the tag and pointer lines of
 * h's home slot; then, once those are in, the first line of the first
 * entry with h's tag within 8 probes of home; then (whole), once that is
 * in, the rest of that entry up to 512 bytes (a GET copies the value
 * out).  Loads only, the caller holding the shard's lock as for a
 * lookup. */
void table_prefetch_home(const struct table *t, uint64_t h);
void table_prefetch_entry(const struct table *t, uint64_t h, int whole);
/* Bytes of index memory. */
size_t table_bytes(const struct table *t);

/* Tags: 0 empty, 1 tombstone, 0x80|7 hash bits: full.  They follow the
 * pointer array in the same allocation (no pointers in the header: a
 * 16-byte header matters when 100k keys spread over 16k slot tables). */
static inline uint8_t *table_tags(const struct table *t)
{
    return (uint8_t *)(t->slots_ + (size_t)t->cap * TABLE_PTR);
}

/* The entry in slot i (full slots only).  One 8-byte load: past the last
 * 6-byte address it reads two tag bytes (cap >= 4), masked off. */
static inline struct entry *table_get(const struct table *t, uint32_t i)
{
    uint64_t v;
    memcpy(&v, t->slots_ + (size_t)i * TABLE_PTR, 8);
#if TABLE_PTR == 6
    v &= 0xffffffffffffULL;
#endif
    return (struct entry *)(uintptr_t)v;
}

void table_bad_address(const void *e) __attribute__((noreturn, cold));

static inline void table_set(struct table *t, uint32_t i, struct entry *e)
{
    uint64_t v = (uint64_t)(uintptr_t)e;
    if (TABLE_PTR == 6 && __builtin_expect(v >> 48, 0))
        table_bad_address(e);
    memcpy(t->slots_ + (size_t)i * TABLE_PTR, &v, TABLE_PTR); /* little-endian: the low bytes */
}

static inline int table_full(const struct table *t, uint32_t i)
{
    return table_tags(t)[i] & 0x80;
}

#include "../base/util.h"
static inline uint64_t table_hash(const char *key, size_t len)
{
    return hash64(key, len, table_seed);
}

#endif
