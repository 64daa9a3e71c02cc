/* types/zset.h - the sorted-set value: its two encodings, conversions,
 * member primitives, rank/score/lex cursors, builders and the inline-entry
 * rules.
 *
 * Two encodings, as Redis has them (OBJECT ENCODING names):
 *  - "listpack" (ENC_LISTPACK): one listpack of member, score, member,
 *    score ... sorted by score, then member bytes.  Scores are stored as
 *    text (integers within 2^52 as listpack integers; other values in the
 *    shortest %g form that reads back as the same double).  Used while the
 *    set has at most zset-max-listpack-entries members of at most
 *    zset-max-listpack-value bytes each.
 *  - "skiplist" (ENC_SKIPLIST): struct zset = a skiplist (ds/skiplist.h,
 *    ranks in O(log n)) plus a member -> node index (ds/dict.h) whose
 *    elements are the skiplist nodes themselves, so a member costs one
 *    allocation.
 * A set converts to the skiplist past either threshold (never back, except
 * that *STORE results pick the encoding by their final size).
 *
 * Users: the zset command handlers (cmd/t_zset.c), SORT, the AOF
 * rewrite and RDB (zset_visit, zset_add, zset_load_finish), the unit
 * tests.  Nothing here knows a client: callers reply, propagate and
 * notify.  The caller holds the key's slot lock for every function taking
 * an entry; e is a sorted-set entry (OBJ_ZSET). */
#ifndef HK_TYPES_ZSET_H
#define HK_TYPES_ZSET_H

#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/listpack.h"
#include "../ds/skiplist.h"

struct zset {
    struct zsl zsl;
    struct dict *d;
};

/* ---------------------------------------------------------- score text --- */
/* Listpack scores this long or longer come only from outside (RDB); also
 * the buffer size zset_score_fmt wants. */
#define ZSET_SCORE_BUF 64

/* strtod over a buffer that is not NUL-terminated (listpack text). */
double zset_bytes_to_double(const char *s, size_t len);
/* The text a score is stored as in a listpack (buf >= ZSET_SCORE_BUF).  As
 * in Redis, an integral value within +-LLONG_MAX/2 is stored as an integer
 * (so -0 becomes 0); other values as the shortest %g text that reads back
 * as the same double. */
int zset_score_fmt(char *buf, double d);

/* ------------------------------------------------------ listpack layer --- */
/* Element at pos as bytes; integers are formatted into buf (>= 24). */
static inline void zlp_str(const unsigned char *lp, size_t pos, const char **s, size_t *len, char *buf)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s) {
        *s = (const char *)v.s;
        *len = v.len;
    } else {
        *len = (size_t)ll_to_str(buf, v.ll);
        *s = buf;
    }
}

/* The score stored at pos. */
static inline double zlp_score(const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (!v.s)
        return (double)v.ll;
    return zset_bytes_to_double((const char *)v.s, v.len);
}

/* Members in a listpack sorted set. */
static inline size_t zl_len(const unsigned char *lp)
{
    return lp_count(lp) / 2;
}

/* ------------------------------------------------------ skiplist layer --- */
struct zset *zs_new(size_t hint);
void zs_free(struct zset *zs);
static inline struct zsl_node *zs_find(const struct zset *zs, const char *m, size_t mlen)
{
    return (struct zsl_node *)dict_find(zs->d, m, mlen);
}
/* Add (m, score), m absent. */
void zs_add(struct zset *zs, double score, const char *m, size_t mlen);
/* Remove m: 1 if it was there. */
int zs_del(struct zset *zs, const char *m, size_t mlen);
/* Remove ranks start..end (1-based); returns how many. */
unsigned long zs_del_ranks(struct zset *zs, unsigned long start, unsigned long end);
/* The finished result zs of ZUNIONSTORE & co. in the encoding it is
 * stored with: a listpack (zs freed) when it has at most
 * zset-max-listpack-entries members, none longer than maxlen allows, else
 * zs itself.  *enc gets the encoding. */
void *zs_shrink(struct zset *zs, size_t maxlen, uint8_t *enc);
/* A member index (a dict of members, each scored 1) of the set entry s
 * (OBJ_SET), sized for hint: lookups for ZINTER/ZDIFF with set inputs
 * (dict_find).  Free with zs_index_free. */
struct dict *zs_set_index(struct entry *s, size_t hint);
void zs_index_free(struct dict *d);

/* --------------------------------------------------------- entry level --- */
/* A new, empty structure for about hint members of at most maxlen bytes
 * (Redis's zsetTypeCreate rule); *enc gets its encoding (listpack below
 * both thresholds). */
void *zset_new_value(size_t hint, size_t maxlen, uint8_t *enc);
size_t zset_length(struct entry *e);
/* Convert a listpack set to the skiplist encoding, sized for hint. */
void zset_to_skiplist(struct entry *e, size_t hint);
/* 1 and *score if m is a member. */
int zset_score(struct entry *e, const char *m, size_t mlen, double *score);
/* Remove m: 1 if it was there (the caller deletes an emptied key). */
int zset_del(struct entry *e, const char *m, size_t mlen);
/* 0-based rank of m (from the highest when reverse) and its score; -1 if
 * absent. */
long zset_rank(struct entry *e, const char *m, size_t mlen, int reverse, double *score);
/* ZADD of one member with ZA_* flags (Redis's zsetAdd): 0 if the resulting
 * score would be NaN (nothing changed), else 1 with *out = ZO_* and
 * *newscore.  Converts the encoding when a threshold is passed. */
#define ZA_NX 0x01
#define ZA_XX 0x02
#define ZA_GT 0x04
#define ZA_LT 0x08
#define ZA_INCR 0x10
#define ZO_NOP 0x01
#define ZO_ADDED 0x02
#define ZO_UPDATED 0x04
int zset_add(struct entry *e, double score, const char *m, size_t mlen, int flags, int *out, double *newscore);

/* Counts of ZCOUNT / ZLEXCOUNT. */
long long zset_count_score(struct entry *e, const struct zsl_range *r);
long long zset_count_lex(struct entry *e, const struct zsl_lex *r);
/* ZREMRANGEBY*: remove 0-based ranks start..end (valid, start <= end),
 * or, as Redis, from the first element in the score / lex range the run
 * of elements that stay in it.  Return how many went (the caller deletes
 * an emptied key, else calls zset_attach). */
long zset_del_rank_range(struct entry *e, long start, long end);
long zset_del_score_range(struct entry *e, const struct zsl_range *r);
long zset_del_lex_range(struct entry *e, const struct zsl_lex *r);
/* ZPOP*: remove the n (< length) lowest members, or the highest when
 * from_max.  Returns zset_attach's `was` (noted before the write). */
size_t zset_del_ends(struct entry *e, int from_max, long n);

/* ------------------------------------------------------------- cursors ---
 * A position in either encoding, walked forward or backward. */
struct zcur {
    const unsigned char *lp;   /* listpack, or NULL for the skiplist */
    size_t p;                  /* listpack member position */
    struct zsl_node *n;        /* skiplist node */
};

static inline int zc_ok(const struct zcur *z)
{
    return z->lp ? z->p != LP_NONE : z->n != NULL;
}

static inline void zc_next(struct zcur *z, int reverse)
{
    if (z->lp) {
        if (reverse) {
            size_t sp = lp_prev(z->lp, z->p);
            z->p = sp == LP_NONE ? LP_NONE : lp_prev(z->lp, sp);
        } else {
            z->p = lp_next(z->lp, lp_next(z->lp, z->p));
        }
    } else {
        z->n = reverse ? z->n->back : z->n->level[0].fwd;
    }
}

static inline double zc_score(const struct zcur *z)
{
    return z->lp ? zlp_score(z->lp, lp_next(z->lp, z->p)) : z->n->score;
}

/* The member; listpack integers are formatted into ib (>= 24 bytes). */
static inline void zc_member(const struct zcur *z, const char **m, size_t *len, char *ib)
{
    if (z->lp) {
        zlp_str(z->lp, z->p, m, len, ib);
    } else {
        *m = zsl_member(z->n);
        *len = z->n->mlen;
    }
}

/* Cursor at 0-based rank (counted from the top when reverse). */
void zc_at_rank(struct zcur *z, struct entry *e, long rank, int reverse);
/* Cursor at the lowest (highest when reverse) member. */
void zc_first(struct zcur *z, struct entry *e, int reverse);
/* Cursor at a random member of the non-empty set (ZRANDMEMBER). */
void zc_random(struct zcur *z, struct entry *e);
/* Cursor at the first (or last, reverse) element in range; *rank gets its
 * rank from the start (skiplist only; rank may be NULL). 0 if none. */
int zc_score_start(struct zcur *z, struct entry *e, const struct zsl_range *r, int reverse, unsigned long *rank);
int zc_lex_start(struct zcur *z, struct entry *e, const struct zsl_lex *r, int reverse, unsigned long *rank);
/* Skip `offset` elements (a negative offset skips everything, as in
 * Redis); skiplists jump by rank (from zc_*_start). */
void zc_skip(struct zcur *z, struct entry *e, long offset, int reverse, unsigned long rank);

/* Does the cursor's element still belong to the range? */
static inline int zc_in_score(const struct zcur *z, const struct zsl_range *r, int reverse)
{
    double s = zc_score(z);
    return reverse ? zsl_gte_min(s, r) : zsl_lte_max(s, r);
}

static inline int zc_in_lex(const struct zcur *z, const struct zsl_lex *r, int reverse)
{
    const char *m;
    size_t ml;
    char ib[24];
    zc_member(z, &m, &ml, ib);
    return reverse ? zsl_lex_gte_min(m, ml, r) : zsl_lex_lte_max(m, ml, r);
}

/* ZRANDMEMBER's picks, each passed to fn as a cursor.  Repeat: count
 * members with repetitions until fn returns nonzero.  Distinct: count
 * (< length) distinct members (fn's return value ignored); a listpack or
 * a big share of the set is a partial shuffle, else random picks. */
typedef int (*zcur_fn)(void *arg, const struct zcur *z);
void zset_random_repeat(struct entry *e, unsigned long count, zcur_fn fn, void *arg);
void zset_random_distinct(struct entry *e, unsigned long count, zcur_fn fn, void *arg);

/* ZSCAN.  A listpack set: every member with its score as stored (text or
 * a formatted integer).  A skiplist set: one dict_scan step from cursor,
 * fn called for each member visited; returns the next cursor. */
void zset_lp_visit_raw(struct entry *e, void (*fn)(void *arg, const char *m, size_t ml, const char *s, size_t sl),
                       void *arg);
unsigned long zset_sl_scan(struct entry *e, unsigned long cursor,
                           void (*fn)(void *arg, const char *m, size_t ml, double score), void *arg);

/* Every member with its score in rank order (reverse: highest first); fn
 * returns nonzero to stop early. */
void zset_visit(struct entry *e, int reverse, zset_visit_fn fn, void *arg);

/* ------------------------------------------------------------ builders ---
 * ZRANGESTORE: elements copied as they are found, the set made at the end. */
struct zbel {
    size_t off, len;
    double score;
};

struct zbuild {
    char *arena;
    size_t alen, acap;
    struct zbel *el;
    size_t n, cap;
    size_t maxlen;
};

void zb_add(struct zbuild *b, const char *m, size_t mlen, double score);
void zb_free(struct zbuild *b);
/* The sorted set of the builder's elements (given in ascending order, or
 * descending when reversed). */
void *zb_finish(struct zbuild *b, int reversed, uint8_t *enc);

/* -------------------------------------------------------- inline values ---
 * A small listpack sorted set lives inside its entry (E_INLINE, entry.h)
 * instead of behind a pointer: one allocation less per key.  Reads go
 * through entry_ptr() as before.  The listpack code reallocates, so a
 * write first moves an inline listpack out (zset_detach: the entry becomes
 * an ordinary pointer entry in place; its value room always holds the
 * aligned pointer), and the command puts it back at the end
 * (zset_attach): in place when the entry's allocation fits, else in a new
 * entry the caller swaps in with db_replace/db_set.  New keys are made
 * inline directly (zset_entry_new).
 *
 * A value is kept inline only when that takes no more memory than the
 * pointer form (entry + listpack, each rounded to the allocator's size
 * class).  An inline entry's vlen may exceed the listpack (whose header
 * gives its length): a write that reuses the allocation in place claims
 * all of it (hk_usable), so entry_size() is the room the next write may
 * reuse without asking the allocator.  entry_size() never exceeds the
 * allocation (entry_dup, RENAME and TTL changes allocate exactly that). */

/* What a write command notes about e before changing it (zset_attach's
 * `was`): its size if inline (room it may reuse), else 0. */
static inline size_t zset_was(struct entry *e)
{
    return (e->flags & E_INLINE) ? entry_size(e) : 0;
}
void zset_detach(struct entry *e);
/* A new entry (no TTL) for key holding structure p (taken over): inline
 * when that pays (p is freed), else the pointer form. */
struct entry *zset_entry_new(const char *key, size_t klen, void *p, uint8_t enc);
/* End of a write to e, still holding members: a small listpack goes back
 * inline.  was: zset_was(e) when the command started.  Returns NULL when e
 * stays (possibly inline now), else a new entry the caller swaps in for e
 * with db_replace or db_set (which free e, and the listpack with it when
 * the new entry is inline). */
struct entry *zset_attach(struct entry *e, size_t was);
/* The new, non-empty zset entry e (pointer form, not in the keyspace yet,
 * no TTL) as ZADD adds it: inline when small (e is freed and the new entry
 * returned), else e. */
struct entry *zset_entry_finish(struct entry *e);

/* RDB snapshots and DUMP/RESTORE (persist/rdb_types.c): a freshly built
 * sorted-set entry (pointer form, not yet in the keyspace) in the form
 * ZADD would leave it: a small listpack moves inline (e is freed and the
 * new entry returned), otherwise e itself. */
struct entry *zset_load_finish(struct entry *e);

#endif
