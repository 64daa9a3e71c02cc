/* skiplist.h - the ordered index of large sorted sets (groundwork for
 * issue 4): elements (score, member) ordered by score, then by member
 * bytes; every forward link carries a span so rank queries (ZRANK,
 * ZRANGE by index) are O(log n), as the issue requires.  Members are
 * copied into their node (one allocation per element).  A member->score
 * hash index sits beside it in the sorted-set type, not here.
 *
 * Not thread-safe: the owner (an entry under its shard lock) serializes. */
#ifndef HK_SKIPLIST_H
#define HK_SKIPLIST_H

#include <stddef.h>

#define ZSL_MAXLEVEL 32

struct zsl_node {
    double score;
    struct zsl_node *back;
    size_t mlen;
    char *member;                   /* points into this allocation */
    int nlevel;
    struct zsl_level {
        struct zsl_node *fwd;
        unsigned long span;
    } level[];
};

struct zsl {
    struct zsl_node *head, *tail;
    unsigned long length;
    int level;
};

/* A score range; *_ex means exclusive. */
struct zsl_range {
    double min, max;
    int min_ex, max_ex;
};

struct zsl *zsl_new(void);
void zsl_free(struct zsl *z);
/* Insert an element that is not present (the caller checks). */
struct zsl_node *zsl_insert(struct zsl *z, double score, const char *m, size_t mlen);
/* Remove; 1 if it was there. */
int zsl_delete(struct zsl *z, double score, const char *m, size_t mlen);
/* Change the score of a present element; returns its node. */
struct zsl_node *zsl_update_score(struct zsl *z, double cur, const char *m, size_t mlen, double score);
/* 1-based rank of a present element, 0 if absent. */
unsigned long zsl_rank(const struct zsl *z, double score, const char *m, size_t mlen);
/* Element at a 1-based rank, NULL if out of range. */
struct zsl_node *zsl_by_rank(const struct zsl *z, unsigned long rank);
/* First / last element within a score range, NULL if none. */
struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zsl_range *r);
struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zsl_range *r);

#endif
