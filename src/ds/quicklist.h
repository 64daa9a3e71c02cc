/* quicklist.h - the big list encoding: a doubly linked list of listpacks.
 *
 * Each node holds one listpack (ds/listpack.h, Redis's byte format) of up
 * to `fill` elements or bytes, so a push or pop at either end touches one
 * small contiguous block and a walk reads nodes of a few KB.  The node
 * limits follow Redis 7.2's list-max-listpack-size rule:
 *   fill < 0  : a node holds at most 4/8/16/32/64 KB (-1..-5; below -5 = -5)
 *   fill >= 0 : a node holds at most `fill` elements (0 = 1) and 8 KB
 * An element too large for a node ("large": over the node's byte limit, or
 * over ql_packed_threshold when DEBUG set one) lives alone in a PLAIN node
 * that nothing is ever added to or merged with.
 *
 * Compression (list-compress-depth): with depth d > 0 every node farther
 * than d nodes from both ends is kept LZ-compressed (our own LZ77 format,
 * ql_lz_*); the ends are never compressed, so pushes and pops stay O(1)
 * and cheap.  Readers decompress a node into the iterator's private
 * buffer; writers decompress it in place and recompress it afterwards.
 *
 * Node layout (32 bytes) and the list header (32 bytes) are kept small;
 * listpacks are allocated at their exact size (splits and merges build new
 * exact-size listpacks).
 *
 * Not thread-safe: the owner (a key's entry under its shard lock) serializes. */
#ifndef HK_QUICKLIST_H
#define HK_QUICKLIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "listpack.h"

#define QL_HEAD 0
#define QL_TAIL 1

/* Node flags. */
#define QLN_LZ 0x01    /* lp is a compressed image (u32 size + LZ data) */
#define QLN_PLAIN 0x02 /* one large element; never shared or merged */
#define QLN_RAWOK 0x04 /* compression was tried and did not pay off */

struct ql_node {
    struct ql_node *prev, *next;
    unsigned char *lp; /* listpack, or its compressed image (QLN_LZ) */
    uint32_t sz;       /* bytes of the uncompressed listpack */
    uint16_t count;    /* elements in this node */
    uint8_t flags;
    uint8_t spare;
};

struct quicklist {
    struct ql_node *head, *tail;
    size_t count;   /* elements */
    uint32_t len;   /* nodes */
    int16_t fill;   /* list-max-listpack-size when created (clamped) */
    uint16_t depth; /* list-compress-depth when created (clamped) */
};

/* Node limits of a fill value: *sz (SIZE_MAX = none) and *count. */
void ql_node_limit(int fill, size_t *sz, size_t *count);
/* Would a listpack of sz bytes and count elements exceed one node? */
int ql_exceeds(int fill, size_t sz, size_t count);
/* DEBUG QUICKLIST-PACKED-THRESHOLD: elements of at least sz bytes go to
 * plain nodes (0 restores the default rule).  0 if sz is out of range. */
int ql_set_packed_threshold(unsigned long long sz);

struct quicklist *ql_new(int fill, int depth);
void ql_free(struct quicklist *ql);
struct quicklist *ql_dup(const struct quicklist *ql);
/* Bytes allocated (allocator usable sizes). */
size_t ql_mem(const struct quicklist *ql);
/* Take lp (non-empty) as a new tail node. */
void ql_append_lp(struct quicklist *ql, unsigned char *lp);
/* If ql is a single packed node: free the quicklist and return that
 * node's listpack (uncompressed); otherwise NULL and nothing changes. */
unsigned char *ql_take_single(struct quicklist *ql);

void ql_push(struct quicklist *ql, int where, const char *s, size_t len);
/* The listpack of the head/tail node (never compressed) and the offset of
 * the first/last element; NULL when empty. */
unsigned char *ql_end(struct quicklist *ql, int where, size_t *pos);
/* Delete the first/last element. */
void ql_pop(struct quicklist *ql, int where);
/* Delete n elements from index start (0 <= start < count; n is clipped). */
void ql_del_range(struct quicklist *ql, size_t start, size_t n);
/* Replace the element at index (negative counts from the end); 0 when out
 * of range. */
int ql_replace(struct quicklist *ql, long long index, const char *s, size_t len);
/* Insert before the element at index (0 <= index <= count; count appends). */
void ql_insert_at(struct quicklist *ql, size_t index, const char *s, size_t len);

/* Iterator.  lp + pos is the current element (read it with lp_get/lp_eq);
 * pos == LP_NONE once past the end.  Any change to the list other than
 * through ql_iter_del invalidates it (ql_iter_insert ends it). */
struct ql_iter {
    struct quicklist *ql;
    struct ql_node *node;
    unsigned char *lp; /* readable listpack of node */
    size_t pos;
    int fwd;   /* 1: towards the tail */
    int dirty; /* node changed: recompress it when leaving */
    unsigned char *buf;
    size_t bufcap;
};

/* Start at index (negative from the end), moving towards the tail (fwd)
 * or the head.  Returns 1 if positioned on an element. */
int ql_iter_start(struct ql_iter *it, struct quicklist *ql, long long index, int fwd);
int ql_iter_next(struct ql_iter *it);
/* Delete the current element and move to the following one (in the
 * iterator's direction); returns 1 if there is one. */
int ql_iter_del(struct ql_iter *it);
/* Insert s before (after = 0) or after the current element; ends the
 * iteration (only ql_iter_end may follow). */
void ql_iter_insert(struct ql_iter *it, int after, const char *s, size_t len);
void ql_iter_end(struct ql_iter *it);

/* Integrity check for tests: counts, sizes, links, compression window.
 * Returns NULL if sound, else a description of the first problem. */
const char *ql_check(const struct quicklist *ql);

/* DEBUG QUICKLIST: the list header and each node (address, elements,
 * bytes, compressed/plain); with full, each node's listpack (lp_repr,
 * compressed nodes decoded into a scratch copy).  Writes to f. */
void ql_repr(const struct quicklist *ql, int full, FILE *f);

/* The LZ77 codec of compressed nodes.  compress: bytes written to out, or
 * 0 if the result would not fit in cap.  decompress: 1 if in decodes to
 * exactly outlen bytes. */
size_t ql_lz_compress(const unsigned char *in, size_t n, unsigned char *out, size_t cap);
int ql_lz_decompress(const unsigned char *in, size_t n, unsigned char *out, size_t outlen);

#endif
