/* listpack.h - the compact contiguous encoding of small collections.
 *
 * One allocation holds a sequence of string-or-integer elements, in the
 * byte format Redis calls "listpack" (documented in Redis's listpack spec),
 * written from that description: so small hashes, sets, sorted sets and
 * list nodes can be written to and read from RDB files (issue 6) as they
 * are, without conversion.
 *
 *   <total-bytes u32 LE> <count u16 LE> <entry> ... <0xFF>
 *   entry = <encoding+data> <backlen>
 *
 * Integers are stored in the smallest of 7/13/16/24/32/64-bit forms,
 * strings with a 6/12/32-bit length; backlen (1-5 bytes, read right to
 * left) is the size of <encoding+data>, so the list can be walked both
 * ways.  count saturates at 65535 ("unknown": then it is computed by a
 * walk).  Element positions are byte offsets (size_t) into the listpack,
 * stable until the next modification.
 *
 * Not thread-safe: the owner (an entry under its shard lock) serializes. */
#ifndef HK_LISTPACK_H
#define HK_LISTPACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LP_HDR 6
#define LP_EOF 0xFF
#define LP_NONE ((size_t)-1)

/* An element read back: either a string (s != NULL) or an integer. */
struct lp_val {
    const unsigned char *s;
    size_t len;
    long long ll;
};

unsigned char *lp_new(void);
void lp_free(unsigned char *lp);
size_t lp_bytes(const unsigned char *lp);
size_t lp_count(const unsigned char *lp);

/* Offsets: first/last element, next/previous, LP_NONE at either end. */
size_t lp_first(const unsigned char *lp);
size_t lp_last(const unsigned char *lp);
size_t lp_next(const unsigned char *lp, size_t pos);
size_t lp_prev(const unsigned char *lp, size_t pos);
/* Element at index (negative counts from the end), LP_NONE if out of range. */
size_t lp_seek(const unsigned char *lp, long long index);

void lp_get(const unsigned char *lp, size_t pos, struct lp_val *v);
/* Does the element equal the string s? (integers compare by value when s
 * is a canonical integer). */
int lp_eq(const unsigned char *lp, size_t pos, const char *s, size_t len);

/* Modifications return the (possibly moved) listpack. An element that is
 * the canonical decimal form of a 64-bit integer is stored as an integer. */
unsigned char *lp_append(unsigned char *lp, const char *s, size_t len);
unsigned char *lp_prepend(unsigned char *lp, const char *s, size_t len);
unsigned char *lp_append_int(unsigned char *lp, long long v);
/* Insert before the element at pos (pos == LP_NONE: append). */
unsigned char *lp_insert(unsigned char *lp, size_t pos, const char *s, size_t len);
/* Replace the element at pos. */
unsigned char *lp_replace(unsigned char *lp, size_t pos, const char *s, size_t len);
/* Delete n elements starting at pos; *next (if given) is the offset of the
 * element that followed them (LP_NONE at the end). */
unsigned char *lp_delete(unsigned char *lp, size_t pos, size_t n, size_t *next);

/* Find s starting at pos, looking at every (skip+1)-th element (skip 1 to
 * search only keys of a key/value listpack).  LP_NONE if not found. */
size_t lp_find(const unsigned char *lp, size_t pos, const char *s, size_t len, unsigned skip);

/* Check a listpack read from outside (RDB/RESTORE): header, every entry's
 * encoding and backlen within size bytes, count.  1 if valid. */
int lp_validate(const unsigned char *lp, size_t size);

/* DEBUG LISTPACK: a human-readable dump of every entry (offset, encoded
 * and backlen sizes, integer or string with up to 64 bytes shown, escaped)
 * written to f, prefixed by indent.  Reads only; lp must be valid. */
void lp_repr(const unsigned char *lp, FILE *f, const char *indent);

/* One-pass building (RDB writers: persist/rdb_stream.c): elements are
 * encoded straight into a growing buffer that is reused from one listpack
 * to the next, with the same encodings lp_append / lp_append_int choose.
 * lpb_finish writes the header and terminator and returns the listpack
 * (valid until the next lpb_reset / lpb_free). */
struct lp_builder {
    unsigned char *buf;
    size_t len, cap, count;
};
void lpb_reset(struct lp_builder *b);
void lpb_append(struct lp_builder *b, const char *s, size_t len);
void lpb_append_int(struct lp_builder *b, long long v);
const unsigned char *lpb_finish(struct lp_builder *b, size_t *bytes);
void lpb_free(struct lp_builder *b);

#endif
