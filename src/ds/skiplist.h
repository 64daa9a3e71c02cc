/* skiplist.h - the ordered index of large sorted sets: elements (score,
 * member) ordered by score, then by member bytes; every forward link
 * carries a span so rank queries (ZRANK, ZRANGE by index) are O(log n).
 *
 * One allocation per element: the node holds the score, the links and the
 * member bytes (after the levels).  It also starts with a struct dict_link
 * so the sorted set's member -> node index (ds/dict.h) chains the nodes
 * themselves, without an allocation of its own.  The skiplist owns the
 * nodes: the index only points at them.
 *
 * Not thread-safe: the owner (an entry under its shard lock) serializes. */
#ifndef HK_SKIPLIST_H
#define HK_SKIPLIST_H

#include <stddef.h>
#include <stdint.h>

#include "dict.h"

#define ZSL_MAXLEVEL 32

struct zsl_node {
    struct dict_link link;          /* member index chain (see above) */
    double score;
    struct zsl_node *back;
    uint32_t mlen;
    uint32_t nlevel;
    struct zsl_level {
        struct zsl_node *fwd;
        unsigned long span;
    } level[];
    /* the member bytes follow level[nlevel - 1] */
};

static inline const char *zsl_member(const struct zsl_node *n)
{
    return (const char *)&n->level[n->nlevel];
}

struct zsl {
    struct zsl_node *head, *tail;
    unsigned long length;
    int level;
    size_t bytes;                   /* requested bytes of all nodes + head */
};

/* A score range; *_ex means exclusive. */
struct zsl_range {
    double min, max;
    int min_ex, max_ex;
};

/* A lexicographic range bound: "-" (ZLEX_NEG), "+" (ZLEX_POS), or a string
 * (ZLEX_STR) inclusive or exclusive (ex). */
enum { ZLEX_STR = 0, ZLEX_NEG = 1, ZLEX_POS = 2 };
struct zsl_lexbound {
    const char *s;
    size_t len;
    int kind;
    int ex;
};
struct zsl_lex {
    struct zsl_lexbound min, max;
};

/* Byte order of two members (a shorter prefix first): <0, 0, >0. */
int zsl_memcmp(const char *a, size_t al, const char *b, size_t bl);
/* Range predicates (also used on the listpack encoding). */
int zsl_range_empty(const struct zsl_range *r);
static inline int zsl_gte_min(double s, const struct zsl_range *r)
{
    return r->min_ex ? s > r->min : s >= r->min;
}
static inline int zsl_lte_max(double s, const struct zsl_range *r)
{
    return r->max_ex ? s < r->max : s <= r->max;
}
int zsl_lex_empty(const struct zsl_lex *r);
int zsl_lex_gte_min(const char *m, size_t len, const struct zsl_lex *r);
int zsl_lex_lte_max(const char *m, size_t len, const struct zsl_lex *r);

/* An embedded skiplist: init / release (frees every node and the head). */
void zsl_init(struct zsl *z);
void zsl_release(struct zsl *z);
/* A heap-allocated one. */
struct zsl *zsl_new(void);
void zsl_free(struct zsl *z);

/* Insert an element that is not present (the caller checks). */
struct zsl_node *zsl_insert(struct zsl *z, double score, const char *m, size_t mlen);
/* Remove and free; 1 if it was there. */
int zsl_delete(struct zsl *z, double score, const char *m, size_t mlen);
/* Change the score of a present element; returns its node, which is the
 * same node (moved in place if the order requires it), NULL if absent. */
struct zsl_node *zsl_update_score(struct zsl *z, double cur, const char *m, size_t mlen, double score);
/* 1-based rank of a present element, 0 if absent. */
unsigned long zsl_rank(const struct zsl *z, double score, const char *m, size_t mlen);
/* Element at a 1-based rank, NULL if out of range. */
struct zsl_node *zsl_by_rank(const struct zsl *z, unsigned long rank);
/* First / last element within a score or lex range, NULL if none; *rank
 * (if not NULL) gets its 1-based rank.  The lex forms first check, as
 * Redis does, that the last member is not below min and the first not
 * above max (this matters only for sets whose scores differ). */
struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zsl_range *r, unsigned long *rank);
struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zsl_range *r, unsigned long *rank);
struct zsl_node *zsl_first_in_lex(const struct zsl *z, const struct zsl_lex *r, unsigned long *rank);
struct zsl_node *zsl_last_in_lex(const struct zsl *z, const struct zsl_lex *r, unsigned long *rank);
/* Remove, from the first element not below the range's minimum, the run
 * of elements not above its maximum (Redis's ZREMRANGEBYSCORE/LEX walk);
 * cb as below.  Returns the number removed. */
unsigned long zsl_delete_range_by_score(struct zsl *z, const struct zsl_range *r,
                                        void (*cb)(void *arg, struct zsl_node *n), void *arg);
unsigned long zsl_delete_range_by_lex(struct zsl *z, const struct zsl_lex *r,
                                      void (*cb)(void *arg, struct zsl_node *n), void *arg);
/* Remove the elements of 1-based ranks start..end (inclusive); cb (if not
 * NULL) sees each node after it is unlinked, before it is freed.  Returns
 * the number removed. */
unsigned long zsl_delete_range_by_rank(struct zsl *z, unsigned long start, unsigned long end,
                                       void (*cb)(void *arg, struct zsl_node *n), void *arg);

#endif
