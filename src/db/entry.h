/* entry.h - the one allocation that holds a key.
 *
 * Layout: a 16-byte header, then the expire time (8 bytes, only when the key
 * has a TTL), then the key bytes, then the value: for strings the bytes
 * themselves, for collection types (issue 4 on) a pointer to the structure.
 * One allocation per key keeps the per-key overhead to the header plus the
 * allocator's rounding, and a GET to one cache miss after the index.
 *
 * Entries are owned by the shard table they are in and may be touched only
 * with that shard's lock held (see docs/architecture.md). */
#ifndef HK_ENTRY_H
#define HK_ENTRY_H

#include <stdint.h>
#include <string.h>

enum { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 6, OBJ_VSET = 7 };
/* Encodings, numbered as Redis numbers them; OBJECT ENCODING names them
 * (obj_enc_name in object.h).  Strings: raw/int/embstr.  Collections hold
 * a pointer to one of the structures below as their value. */
enum {
    ENC_RAW = 0,
    ENC_INT = 1,
    ENC_HT = 2,          /* "hashtable": struct dict (ds/dict.h) */
    ENC_INTSET = 6,      /* "intset": ds/intset.h */
    ENC_SKIPLIST = 7,    /* "skiplist": sorted set = dict + skiplist */
    ENC_EMBSTR = 8,
    ENC_QUICKLIST = 9,   /* "quicklist": list of listpack nodes */
    ENC_STREAM = 10,     /* "stream": ds/stream.h + consumer groups (cmd/t_stream.c) */
    ENC_LISTPACK = 11,   /* "listpack": ds/listpack.h */
    ENC_LISTPACK_EX = 12 /* "listpackex": hash listpack with field TTLs */
};

#define E_HAS_EXPIRE 0x01
/* A hash with at least one field TTL (HEXPIRE): the expiry sweeper visits
 * it (db.h: db_set_hfe). */
#define E_HFE 0x02
/* The value bytes are the collection's structure itself (a small listpack
 * its type module keeps inline), not a pointer to it: entry_ptr() points
 * into the entry, and freeing or copying the entry frees or copies it. */
#define E_INLINE 0x04

/* The most bytes a key or a string value can have: klen and vlen are 32-bit,
 * less 64 bytes so that any one argument also fits a one-element listpack
 * (a list's large-element node; its total length is 32-bit as well).
 * proto-max-bulk-len cannot be set above this, so every command that checks
 * a string's growth against that limit (SETRANGE, APPEND, SETBIT, BITFIELD)
 * stays within it; entry_new() refuses anything larger instead of
 * truncating the length. */
#define ENTRY_MAX_LEN (4294967295LL - 64)
_Static_assert(ENTRY_MAX_LEN + 64 <= (long long)UINT32_MAX, "entry lengths are 32-bit");

struct entry {
    uint8_t type;
    uint8_t enc;
    uint8_t flags;
    uint8_t spare;
    uint32_t lru;   /* LRU clock (seconds, 24 bits) of the last access */
    uint32_t klen;
    uint32_t vlen;  /* string length; for other types sizeof(void *) */
};

static inline size_t entry_hdr(const struct entry *e)
{
    return sizeof(struct entry) + ((e->flags & E_HAS_EXPIRE) ? 8 : 0);
}

static inline char *entry_key(struct entry *e)
{
    return (char *)e + entry_hdr(e);
}

static inline char *entry_val(struct entry *e)
{
    return (char *)e + entry_hdr(e) + e->klen;
}

static inline long long entry_expire(const struct entry *e)
{
    long long t;
    if (!(e->flags & E_HAS_EXPIRE))
        return -1;
    memcpy(&t, (const char *)e + sizeof(struct entry), 8);
    return t;
}

static inline size_t entry_size(const struct entry *e)
{
    return entry_hdr(e) + e->klen + e->vlen;
}

/* A collection's pointer sits at the first 8-byte boundary after the key
 * (vlen = padding + 8), so leak checkers and the CPU see an aligned
 * pointer.  Adding or removing the 8-byte TTL keeps the padding. */
static inline size_t entry_ptr_off(const struct entry *e)
{
    return (entry_hdr(e) + e->klen + 7) & ~(size_t)7;
}

static inline void *entry_ptr(struct entry *e)
{
    if (e->flags & E_INLINE)
        return entry_val(e);
    return *(void **)((char *)e + entry_ptr_off(e));
}

#endif
