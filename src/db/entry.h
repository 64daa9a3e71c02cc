/* entry.h - the one allocation that holds a key.
 *
 * Layout: a header, then the expire time (8 bytes, only when the key has a
 * TTL), then the key bytes, then the value: for strings the bytes
 * themselves, for collection types (issue 4 on) a pointer to the structure
 * or the structure itself (E_INLINE).  One allocation per key keeps the
 * per-key overhead to the header plus the allocator's rounding, and a GET
 * to one cache miss after the index.
 *
 * The header is 7 bytes (type, encoding, flags, 24-bit LRU/LFU clock, key
 * length up to ENTRY_SHORT_KLEN, value length up to ENTRY_SHORT_VLEN, all
 * bit fields) when both lengths fit, and 16 bytes otherwise (E_LONG: the
 * same 7 bytes, a pad byte, then both lengths as 32-bit words).  Most keys
 * are short and most values are small, and 9 bytes per key is what a
 * 10-member sorted set or 10-field hash needs to drop a size class.  Read
 * the lengths with entry_klen()/entry_vlen() only; a value that grows in
 * place past the short form goes through entry_vlen_fits() first, and
 * entry_resize() (db.h) moves it to the long form.
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
/* The 16-byte header: 32-bit key and value lengths at offsets 8 and 12. */
#define E_LONG 0x08

/* The most bytes a key or a string value can have: klen and vlen are 32-bit,
 * less 64 bytes so that any one argument also fits a one-element listpack
 * (a list's large-element node; its total length is 32-bit as well).
 * proto-max-bulk-len cannot be set above this, so every command that checks
 * a string's growth against that limit (SETRANGE, APPEND, SETBIT, BITFIELD)
 * stays within it; entry_new() refuses anything larger instead of
 * truncating the length. */
#define ENTRY_MAX_LEN (4294967295LL - 64)
_Static_assert(ENTRY_MAX_LEN + 64 <= (long long)UINT32_MAX, "entry lengths are 32-bit");

struct __attribute__((packed)) entry {
    /* Laid out for the hot paths: the 24-bit LRU/LFU word and the flags
     * byte are read and written with one 32-bit load or store
     * (entry_lru/entry_set_lru), the flags and the key length are a byte
     * each, the value length a 16-bit word. */
    uint8_t lru_[3];      /* LRU clock (seconds, 24 bits) or LFU word of the last access */
    uint8_t flags : 4;
    uint8_t enc : 4;
    uint8_t sklen;        /* short form: key length */
    uint16_t svlen : 13;  /* short form: value length (strings; for other
                           * types the pointer's room or the inline size) */
    uint16_t type : 3;
};
_Static_assert(sizeof(struct entry) == 7, "the short header is 7 bytes");

static inline uint32_t entry_lru(const struct entry *e)
{
    uint32_t w;
    memcpy(&w, e, 4);
    return w & 0xffffff;
}

static inline void entry_set_lru(struct entry *e, uint32_t v)
{
    uint32_t w;
    memcpy(&w, e, 4);
    w = (w & 0xff000000u) | (v & 0xffffff);
    memcpy(e, &w, 4);
}

#define ENTRY_SHORT_HDR 7
#define ENTRY_LONG_HDR 16
#define ENTRY_SHORT_KLEN 255
#define ENTRY_SHORT_VLEN 8191

/* The header an entry with these lengths gets (without the TTL). */
static inline size_t entry_base_for(size_t klen, size_t vlen)
{
    return klen <= ENTRY_SHORT_KLEN && vlen <= ENTRY_SHORT_VLEN ? ENTRY_SHORT_HDR : ENTRY_LONG_HDR;
}

static inline size_t entry_base(const struct entry *e)
{
    return ENTRY_SHORT_HDR + ((e->flags & E_LONG) ? ENTRY_LONG_HDR - ENTRY_SHORT_HDR : 0);
}

static inline size_t entry_hdr(const struct entry *e)
{
    unsigned f = e->flags;
    return ENTRY_SHORT_HDR + ((f & E_LONG) ? ENTRY_LONG_HDR - ENTRY_SHORT_HDR : 0) + ((f & E_HAS_EXPIRE) ? 8 : 0);
}

static inline uint32_t entry_klen(const struct entry *e)
{
    uint32_t n;
    if (__builtin_expect(!(e->flags & E_LONG), 1))
        return (uint32_t)e->sklen;
    memcpy(&n, (const char *)e + 8, 4);
    return n;
}

static inline uint32_t entry_vlen(const struct entry *e)
{
    uint32_t n;
    if (__builtin_expect(!(e->flags & E_LONG), 1))
        return (uint32_t)e->svlen;
    memcpy(&n, (const char *)e + 12, 4);
    return n;
}

/* Can e's header hold a value length of n?  (Always in the long form.) */
static inline int entry_vlen_fits(const struct entry *e, size_t n)
{
    return (e->flags & E_LONG) || n <= ENTRY_SHORT_VLEN;
}

/* Set the value length; the caller has checked entry_vlen_fits(). */
static inline void entry_set_vlen(struct entry *e, size_t n)
{
    if (!(e->flags & E_LONG)) {
        e->svlen = n & ENTRY_SHORT_VLEN;
    } else {
        uint32_t v = (uint32_t)n;
        memcpy((char *)e + 12, &v, 4);
    }
}

/* Fill a new entry's header for these lengths: type, encoding ENC_RAW,
 * E_LONG when needed and E_HAS_EXPIRE when expire >= 0 (the other flags
 * clear).  The LRU field is the caller's. */
static inline void entry_init_hdr(struct entry *e, uint8_t type, size_t klen, size_t vlen, int has_expire)
{
    memset(e, 0, ENTRY_SHORT_HDR); /* LRU 0 until the caller sets it */
    e->type = type & 7;
    e->flags = has_expire ? E_HAS_EXPIRE : 0;
    if (entry_base_for(klen, vlen) == ENTRY_LONG_HDR) {
        uint32_t k = (uint32_t)klen, v = (uint32_t)vlen;
        e->flags |= E_LONG;
        ((char *)e)[7] = 0;
        memcpy((char *)e + 8, &k, 4);
        memcpy((char *)e + 12, &v, 4);
    } else {
        e->sklen = klen & ENTRY_SHORT_KLEN;
        e->svlen = vlen & ENTRY_SHORT_VLEN;
    }
}

static inline char *entry_key(struct entry *e)
{
    return (char *)e + entry_hdr(e);
}

/* Does e's key equal key/klen?  (The index's compare: one look at the
 * header.) */
static inline int entry_key_is(const struct entry *e, const char *key, size_t klen)
{
    unsigned f = e->flags;
    size_t ttl = (f & E_HAS_EXPIRE) ? 8 : 0;
    if (__builtin_expect(!(f & E_LONG), 1))
        return e->sklen == klen && memcmp((const char *)e + ENTRY_SHORT_HDR + ttl, key, klen) == 0;
    uint32_t k;
    memcpy(&k, (const char *)e + 8, 4);
    return k == klen && memcmp((const char *)e + ENTRY_LONG_HDR + ttl, key, klen) == 0;
}

/* An upper bound on a short entry's size, for prefetching (a long entry
 * reads as about its header: its short lengths are zero). */
static inline size_t entry_size_hint(const struct entry *e)
{
    return ENTRY_SHORT_HDR + 8 + (size_t)e->sklen + e->svlen;
}

static inline char *entry_val(struct entry *e)
{
    return (char *)e + entry_hdr(e) + entry_klen(e);
}

/* The value and its length with one look at the header (GET's path). */
static inline char *entry_val_len(struct entry *e, size_t *vlen)
{
    unsigned f = e->flags;
    size_t ttl = (f & E_HAS_EXPIRE) ? 8 : 0;
    if (__builtin_expect(!(f & E_LONG), 1)) {
        *vlen = e->svlen;
        return (char *)e + ENTRY_SHORT_HDR + ttl + e->sklen;
    }
    uint32_t k, v;
    memcpy(&k, (const char *)e + 8, 4);
    memcpy(&v, (const char *)e + 12, 4);
    *vlen = v;
    return (char *)e + ENTRY_LONG_HDR + ttl + k;
}

static inline long long entry_expire(const struct entry *e)
{
    long long t;
    if (!(e->flags & E_HAS_EXPIRE))
        return -1;
    memcpy(&t, (const char *)e + entry_base(e), 8);
    return t;
}

/* Overwrite the TTL of an entry that has one. */
static inline void entry_put_expire(struct entry *e, long long t)
{
    memcpy((char *)e + entry_base(e), &t, 8);
}

static inline size_t entry_size(const struct entry *e)
{
    size_t n;
    const char *v = entry_val_len((struct entry *)e, &n);
    return (size_t)(v - (const char *)e) + n;
}

/* A collection's pointer sits at the first 8-byte boundary after the key
 * (vlen = padding + 8), so leak checkers and the CPU see an aligned
 * pointer (the entry itself is at least 8-byte aligned).  Adding or
 * removing the 8-byte TTL keeps the padding. */
static inline size_t entry_ptr_off(const struct entry *e)
{
    return (entry_hdr(e) + entry_klen(e) + 7) & ~(size_t)7;
}

static inline void *entry_ptr(struct entry *e)
{
    if (e->flags & E_INLINE)
        return entry_val(e);
    return *(void **)((char *)e + entry_ptr_off(e));
}

#endif
