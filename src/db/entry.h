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
/* String encodings as OBJECT ENCODING names them. */
enum { ENC_RAW = 0, ENC_INT = 1, ENC_EMBSTR = 8 };

#define E_HAS_EXPIRE 0x01

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

static inline void *entry_ptr(struct entry *e)
{
    void *p;
    memcpy(&p, entry_val(e), sizeof(p));
    return p;
}

#endif
