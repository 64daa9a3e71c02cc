/* t_zset.c - the sorted set type.
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
 * Every handler runs with its keys' slot locks held by the dispatcher. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/listpack.h"
#include "../ds/skiplist.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"
#define ERR_NAN_SCORE "ERR resulting score is not a number (NaN)"
#define ERR_POSITIVE "ERR value is out of range, must be positive"

/* Listpack scores this long or longer come only from outside (RDB). */
#define SCORE_BUF 64
/* A listpack may not grow past this (Redis's lpSafeToAdd bound). */
#define LP_SAFETY_SIZE (1u << 30)

struct zset {
    struct zsl zsl;
    struct dict *d;
};

/* ===================================================== score text === */

/* Parse a score argument as Redis does (getDoubleFromObject): the whole
 * buffer, no leading space, no overflow, no NaN. */
static int parse_score(const char *s, size_t len, double *out)
{
    char buf[256], *heap = NULL, *p = buf, *end;
    if (len == 0 || isspace((unsigned char)s[0]))
        return 0;
    if (len >= sizeof(buf))
        p = heap = hk_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    errno = 0;
    double v = strtod(p, &end);
    int ok = (size_t)(end - p) == len && !isnan(v) &&
             !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO));
    if (heap)
        hk_free(heap);
    if (ok)
        *out = v;
    return ok;
}

/* strtod over a buffer that is not NUL-terminated (listpack text). */
static double bytes_to_double(const char *s, size_t len)
{
    char buf[SCORE_BUF];
    if (len < sizeof(buf)) {
        memcpy(buf, s, len);
        buf[len] = 0;
        return strtod(buf, NULL);
    }
    char *p = hk_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    double v = strtod(p, NULL);
    hk_free(p);
    return v;
}

/* The text a score is stored as in a listpack (buf >= SCORE_BUF).  As in
 * Redis, an integral value within +-LLONG_MAX/2 is stored as an integer
 * (so -0 becomes 0); other values as the shortest %g text that reads back
 * as the same double. */
static int score_fmt(char *buf, double d)
{
    if (isinf(d)) {
        memcpy(buf, d > 0 ? "inf" : "-inf", d > 0 ? 3 : 4);
        return d > 0 ? 3 : 4;
    }
    if (d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2) && d == (double)(long long)d)
        return ll_to_str(buf, (long long)d);
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, SCORE_BUF, "%.*g", prec, d);
        if (prec == 17 || strtod(buf, NULL) == d)
            break;
    }
    return n;
}

/* Reply a score: a double (RESP3) or its %.17g text (RESP2); integral
 * values skip the printf. */
static void reply_score(struct reply *r, double d)
{
    if (d == (double)(long long)d && fabs(d) < 1e15 && !(d == 0 && signbit(d))) {
        if (r->resp == 3) {
            char b[32];
            b[0] = ',';
            int n = ll_to_str(b + 1, (long long)d);
            b[n + 1] = '\r';
            b[n + 2] = '\n';
            reply_raw(r, b, (size_t)n + 3);
        } else {
            reply_bulk_ll(r, (long long)d);
        }
        return;
    }
    reply_double(r, d);
}

/* ================================================== listpack layer === */

/* Element at pos as bytes; integers are formatted into buf (>= 24). */
static inline void lp_str(const unsigned char *lp, size_t pos, const char **s, size_t *len, char *buf)
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

static inline double lp_score(const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (!v.s)
        return (double)v.ll;
    return bytes_to_double((const char *)v.s, v.len);
}

static inline void reply_lp_elem(struct reply *r, const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s)
        reply_bulk(r, (const char *)v.s, v.len);
    else
        reply_bulk_ll(r, v.ll);
}

static inline size_t zl_len(const unsigned char *lp)
{
    return lp_count(lp) / 2;
}

/* Member pos of m (LP_NONE if absent); *spos gets its score's pos. */
static size_t zl_find(const unsigned char *lp, const char *m, size_t mlen, size_t *spos)
{
    size_t p = lp_find(lp, lp_first(lp), m, mlen, 1);
    if (p != LP_NONE)
        *spos = lp_next(lp, p);
    return p;
}

/* Is (score, m) after the element at member pos p? */
static int zl_after(const unsigned char *lp, size_t p, double score, const char *m, size_t mlen)
{
    double s = lp_score(lp, lp_next(lp, p));
    if (s != score)
        return score > s;
    const char *em;
    size_t el;
    char ib[24];
    lp_str(lp, p, &em, &el, ib);
    return zsl_memcmp(m, mlen, em, el) > 0;
}

/* Insert (m, score), m absent, at its place. */
static unsigned char *zl_insert(unsigned char *lp, const char *m, size_t mlen, double score)
{
    char sb[SCORE_BUF];
    size_t sl = (size_t)score_fmt(sb, score);
    size_t last = lp_last(lp), p = LP_NONE;
    /* Appending (ascending inserts) is the common case: check the tail. */
    if (last != LP_NONE && !zl_after(lp, lp_prev(lp, last), score, m, mlen)) {
        for (p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p)))
            if (!zl_after(lp, p, score, m, mlen))
                break;
    }
    if (p == LP_NONE) {
        lp = lp_append(lp, m, mlen);
        return lp_append(lp, sb, sl);
    }
    lp = lp_insert(lp, p, sb, sl);
    return lp_insert(lp, p, m, mlen);
}

static int zl_range_first(const unsigned char *lp, const struct zsl_range *r, size_t *out)
{
    if (zsl_range_empty(r))
        return 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p))) {
        double s = lp_score(lp, lp_next(lp, p));
        if (zsl_gte_min(s, r)) {
            if (!zsl_lte_max(s, r))
                return 0;
            *out = p;
            return 1;
        }
    }
    return 0;
}

static int zl_range_last(const unsigned char *lp, const struct zsl_range *r, size_t *out)
{
    if (zsl_range_empty(r))
        return 0;
    size_t sp = lp_last(lp);
    while (sp != LP_NONE) {
        size_t p = lp_prev(lp, sp);
        double s = lp_score(lp, sp);
        if (zsl_lte_max(s, r)) {
            if (!zsl_gte_min(s, r))
                return 0;
            *out = p;
            return 1;
        }
        sp = lp_prev(lp, p);
    }
    return 0;
}

/* Redis's zzlIsInLexRange: the last member is not below min and the first
 * not above max. */
static int zl_lex_overlaps(const unsigned char *lp, const struct zsl_lex *r)
{
    const char *m;
    size_t ml, p;
    char ib[24];
    if (zsl_lex_empty(r) || (p = lp_first(lp)) == LP_NONE)
        return 0;
    lp_str(lp, p, &m, &ml, ib);
    if (!zsl_lex_lte_max(m, ml, r))
        return 0;
    lp_str(lp, lp_prev(lp, lp_last(lp)), &m, &ml, ib);
    return zsl_lex_gte_min(m, ml, r);
}

static int zl_lex_first(const unsigned char *lp, const struct zsl_lex *r, size_t *out)
{
    if (!zl_lex_overlaps(lp, r))
        return 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p))) {
        const char *m;
        size_t ml;
        char ib[24];
        lp_str(lp, p, &m, &ml, ib);
        if (zsl_lex_gte_min(m, ml, r)) {
            if (!zsl_lex_lte_max(m, ml, r))
                return 0;
            *out = p;
            return 1;
        }
    }
    return 0;
}

static int zl_lex_last(const unsigned char *lp, const struct zsl_lex *r, size_t *out)
{
    if (!zl_lex_overlaps(lp, r))
        return 0;
    size_t sp = lp_last(lp);
    while (sp != LP_NONE) {
        size_t p = lp_prev(lp, sp);
        const char *m;
        size_t ml;
        char ib[24];
        lp_str(lp, p, &m, &ml, ib);
        if (zsl_lex_lte_max(m, ml, r)) {
            if (!zsl_lex_gte_min(m, ml, r))
                return 0;
            *out = p;
            return 1;
        }
        sp = lp_prev(lp, p);
    }
    return 0;
}

/* ================================================== skiplist layer === */

static const char *znode_key(const struct dict_link *it, size_t *len)
{
    const struct zsl_node *n = (const struct zsl_node *)it;
    *len = n->mlen;
    return zsl_member(n);
}

static const struct dict_type zset_dict_type = {znode_key};

static struct zset *zs_new(size_t hint)
{
    struct zset *zs = hk_malloc(sizeof(*zs));
    zsl_init(&zs->zsl);
    zs->d = dict_new(&zset_dict_type, hint);
    return zs;
}

static void zs_free(struct zset *zs)
{
    dict_free(zs->d, NULL);
    zsl_release(&zs->zsl);
    hk_free(zs);
}

static inline struct zsl_node *zs_find(const struct zset *zs, const char *m, size_t mlen)
{
    return (struct zsl_node *)dict_find(zs->d, m, mlen);
}

static void zs_add(struct zset *zs, double score, const char *m, size_t mlen)
{
    struct zsl_node *n = zsl_insert(&zs->zsl, score, m, mlen);
    dict_add(zs->d, &n->link);
}

static int zs_del(struct zset *zs, const char *m, size_t mlen)
{
    struct zsl_node *n = (struct zsl_node *)dict_remove(zs->d, m, mlen);
    if (!n)
        return 0;
    zsl_delete(&zs->zsl, n->score, zsl_member(n), n->mlen);
    return 1;
}

static void zs_unindex(void *arg, struct zsl_node *n)
{
    dict_remove(((struct zset *)arg)->d, zsl_member(n), n->mlen);
}

/* Remove ranks start..end (1-based). */
static unsigned long zs_del_ranks(struct zset *zs, unsigned long start, unsigned long end)
{
    return zsl_delete_range_by_rank(&zs->zsl, start, end, zs_unindex, zs);
}

/* ======================================================= type ops === */

static void zset_ops_free(void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK)
        lp_free(p);
    else
        zs_free(p);
}

static void *zset_ops_dup(const void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK)
        return hk_memdup(p, lp_bytes(p));
    const struct zset *src = p;
    struct zset *zs = zs_new(src->zsl.length);
    for (const struct zsl_node *n = src->zsl.head->level[0].fwd; n; n = n->level[0].fwd)
        zs_add(zs, n->score, zsl_member(n), n->mlen);
    return zs;
}

static size_t zset_ops_mem(const void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK)
        return hk_usable((void *)p);
    const struct zset *zs = p;
    return hk_usable((void *)zs) + dict_mem(zs->d) + zs->zsl.bytes;
}

static size_t zset_ops_len(const void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK)
        return zl_len(p);
    return ((const struct zset *)p)->zsl.length;
}

static size_t zset_ops_effort(const void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK)
        return 1;
    return ((const struct zset *)p)->zsl.length;
}

const struct type_ops zset_type_ops = {zset_ops_free, zset_ops_dup, zset_ops_mem, zset_ops_len, zset_ops_effort};

/* ================================================ inline values ===
 * A small listpack sorted set lives inside its entry (E_INLINE, entry.h)
 * instead of behind a pointer: one allocation less per key.  Reads go
 * through entry_ptr() as before.  The listpack code reallocates, so a
 * write first moves an inline listpack out (zdetach: the entry becomes an
 * ordinary pointer entry in place; its value room always holds the aligned
 * pointer), and the command puts it back at the end (zattach): in place
 * when the entry's allocation fits, else in a new entry swapped in with
 * db_replace/db_set.  New keys are made inline directly (z_entry_new).
 *
 * A value is kept inline only when that takes no more memory than the
 * pointer form (entry + listpack, each rounded to the allocator's size
 * class).  An inline entry's vlen may exceed the listpack (whose header
 * gives its length): a write that reuses the allocation in place claims
 * all of it (hk_usable), so entry_size() is the room the next write may
 * reuse without asking the allocator.  entry_size() never exceeds the
 * allocation (entry_dup, RENAME and TTL changes allocate exactly that). */
#define ZSET_INLINE_MAX 256

/* What a write command notes about e before changing it (zattach's
 * `was`): its size if inline (room it may reuse), else 0. */
static inline size_t zwas(struct entry *e)
{
    return (e->flags & E_INLINE) ? entry_size(e) : 0;
}

static void zdetach(struct entry *e)
{
    if (e->flags & E_INLINE)
        obj_inline_detach(e, lp_bytes((const unsigned char *)entry_val(e)));
}

/* A new entry for key holding structure p (taken over): inline when that
 * pays (p is freed), else the pointer form. */
static struct entry *z_entry_new(const char *key, size_t klen, void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK) {
        size_t n = lp_bytes(p);
        if (obj_inline_pays(sizeof(struct entry) + klen, n, ZSET_INLINE_MAX)) {
            struct entry *e = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, key, klen, -1, p, n);
            lp_free(p);
            return e;
        }
    }
    return entry_new_obj(OBJ_ZSET, enc, key, klen, p, -1);
}

/* End of a write to e, the zset at argv[i] (table index idx from its
 * lookup, or -1 when other keys were added or removed since), still
 * holding members: a small listpack goes back inline (obj_inline_attach).
 * was: zwas(e) when the command started.  e may be replaced: not to be
 * used after. */
static void zattach(struct client *c, int i, long idx, struct entry *e, size_t was)
{
    if (e->enc != ENC_LISTPACK || (e->flags & E_INLINE))
        return;
    unsigned char *lp = entry_ptr(e);
    struct entry *ne;
    if (obj_inline_attach(e, lp_bytes(lp), ZSET_INLINE_MAX, was, &ne))
        lp_free(lp);
    else if (ne && idx >= 0)
        db_replace(c->db, kslot(c, i), idx, ne); /* frees e (and lp with it when ne is inline) */
    else if (ne)
        db_set(c->db, kslot(c, i), ne);
}

/* ================================================== entry helpers === */

size_t zset_length(struct entry *e)
{
    return e->enc == ENC_LISTPACK ? zl_len(entry_ptr(e)) : ((struct zset *)entry_ptr(e))->zsl.length;
}

/* Convert a listpack set to the skiplist encoding. */
static void zset_to_skiplist(struct entry *e, size_t hint)
{
    unsigned char *lp = entry_ptr(e);
    size_t n = zl_len(lp);
    struct zset *zs = zs_new(hint > n ? hint : n);
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        const char *m;
        size_t ml;
        char ib[24];
        size_t sp = lp_next(lp, p);
        lp_str(lp, p, &m, &ml, ib);
        zs_add(zs, lp_score(lp, sp), m, ml);
        p = lp_next(lp, sp);
    }
    if (e->flags & E_INLINE)
        e->flags &= (uint8_t)~E_INLINE;
    else
        lp_free(lp);
    entry_set_ptr(e, zs, ENC_SKIPLIST);
}

/* A new, empty sorted set structure for about `hint` members of at most
 * maxlen bytes (Redis's zsetTypeCreate rule). */
void *zset_new_value(size_t hint, size_t maxlen, uint8_t *enc)
{
    if (hint <= (size_t)zset_max_listpack_entries && maxlen <= (size_t)zset_max_listpack_value) {
        *enc = ENC_LISTPACK;
        return lp_new();
    }
    *enc = ENC_SKIPLIST;
    return zs_new(hint);
}

int zset_score(struct entry *e, const char *m, size_t mlen, double *score)
{
    if (e->enc == ENC_LISTPACK) {
        size_t sp;
        const unsigned char *lp = entry_ptr(e);
        if (zl_find(lp, m, mlen, &sp) == LP_NONE)
            return 0;
        *score = lp_score(lp, sp);
        return 1;
    }
    struct zsl_node *n = zs_find(entry_ptr(e), m, mlen);
    if (!n)
        return 0;
    *score = n->score;
    return 1;
}

int zset_del(struct entry *e, const char *m, size_t mlen)
{
    if (e->enc == ENC_LISTPACK) {
        size_t sp;
        unsigned char *lp = entry_ptr(e);
        size_t p = zl_find(lp, m, mlen, &sp);
        if (p == LP_NONE)
            return 0;
        zdetach(e);
        lp = lp_delete(entry_ptr(e), p, 2, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
        return 1;
    }
    return zs_del(entry_ptr(e), m, mlen);
}

/* Add or update one member (Redis's zsetAdd): returns 0 if the resulting
 * score is NaN (nothing changed), else 1 with *out = ZO_* and *newscore. */
int zset_add(struct entry *e, double score, const char *m, size_t mlen, int flags, int *out, double *newscore)
{
    *out = 0;
    if (isnan(score))
        return 0;
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        size_t sp, p = zl_find(lp, m, mlen, &sp);
        if (p != LP_NONE) {
            if (flags & ZA_NX) {
                *out = ZO_NOP;
                return 1;
            }
            double cur = lp_score(lp, sp);
            if (flags & ZA_INCR) {
                score += cur;
                if (isnan(score))
                    return 0;
            }
            if (((flags & ZA_LT) && score >= cur) || ((flags & ZA_GT) && score <= cur)) {
                *out = ZO_NOP;
                return 1;
            }
            *newscore = score;
            if (score != cur) {
                zdetach(e);
                lp = lp_delete(entry_ptr(e), p, 2, NULL);
                lp = zl_insert(lp, m, mlen, score);
                entry_set_ptr(e, lp, ENC_LISTPACK);
                *out = ZO_UPDATED;
            }
            return 1;
        }
        if (flags & ZA_XX) {
            *out = ZO_NOP;
            return 1;
        }
        size_t n = zl_len(lp);
        if (n + 1 > (size_t)zset_max_listpack_entries || mlen > (size_t)zset_max_listpack_value ||
            lp_bytes(lp) + mlen + SCORE_BUF > LP_SAFETY_SIZE) {
            zset_to_skiplist(e, n + 1);
        } else {
            zdetach(e);
            lp = zl_insert(entry_ptr(e), m, mlen, score);
            entry_set_ptr(e, lp, ENC_LISTPACK);
            *newscore = score;
            *out = ZO_ADDED;
            return 1;
        }
    }
    struct zset *zs = entry_ptr(e);
    struct zsl_node *node = zs_find(zs, m, mlen);
    if (node) {
        if (flags & ZA_NX) {
            *out = ZO_NOP;
            return 1;
        }
        double cur = node->score;
        if (flags & ZA_INCR) {
            score += cur;
            if (isnan(score))
                return 0;
        }
        if (((flags & ZA_LT) && score >= cur) || ((flags & ZA_GT) && score <= cur)) {
            *out = ZO_NOP;
            return 1;
        }
        *newscore = score;
        if (score != cur) {
            zsl_update_score(&zs->zsl, cur, m, mlen, score);
            *out = ZO_UPDATED;
        }
        return 1;
    }
    if (flags & ZA_XX) {
        *out = ZO_NOP;
        return 1;
    }
    zs_add(zs, score, m, mlen);
    *newscore = score;
    *out = ZO_ADDED;
    return 1;
}

/* 0-based rank of m (from the top when reverse), -1 if absent. */
long zset_rank(struct entry *e, const char *m, size_t mlen, int reverse, double *score)
{
    size_t n = zset_length(e);
    if (e->enc == ENC_LISTPACK) {
        const unsigned char *lp = entry_ptr(e);
        long rank = 0;
        for (size_t p = lp_first(lp); p != LP_NONE; rank++) {
            size_t sp = lp_next(lp, p);
            if (lp_eq(lp, p, m, mlen)) {
                *score = lp_score(lp, sp);
                return reverse ? (long)n - 1 - rank : rank;
            }
            p = lp_next(lp, sp);
        }
        return -1;
    }
    struct zset *zs = entry_ptr(e);
    struct zsl_node *node = zs_find(zs, m, mlen);
    if (!node)
        return -1;
    unsigned long r = zsl_rank(&zs->zsl, node->score, m, mlen);
    *score = node->score;
    return reverse ? (long)(n - r) : (long)r - 1;
}

/* ======================================================== cursors ===
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
    return z->lp ? lp_score(z->lp, lp_next(z->lp, z->p)) : z->n->score;
}

static inline void zc_member(const struct zcur *z, const char **m, size_t *len, char *ib)
{
    if (z->lp) {
        lp_str(z->lp, z->p, m, len, ib);
    } else {
        *m = zsl_member(z->n);
        *len = z->n->mlen;
    }
}

static inline void zc_reply_member(struct reply *r, const struct zcur *z)
{
    if (z->lp)
        reply_lp_elem(r, z->lp, z->p);
    else
        reply_bulk(r, zsl_member(z->n), z->n->mlen);
}

/* Cursor at 0-based rank (counted from the top when reverse). */
static void zc_at_rank(struct zcur *z, struct entry *e, long rank, int reverse)
{
    if (e->enc == ENC_LISTPACK) {
        z->lp = entry_ptr(e);
        z->n = NULL;
        z->p = lp_seek(z->lp, reverse ? -2 - 2 * (long long)rank : 2 * (long long)rank);
    } else {
        struct zset *zs = entry_ptr(e);
        z->lp = NULL;
        z->n = zsl_by_rank(&zs->zsl, reverse ? zs->zsl.length - (unsigned long)rank : (unsigned long)rank + 1);
    }
}

static void zc_first(struct zcur *z, struct entry *e, int reverse)
{
    if (e->enc == ENC_LISTPACK) {
        z->lp = entry_ptr(e);
        z->n = NULL;
        if (reverse) {
            size_t sp = lp_last(z->lp);
            z->p = sp == LP_NONE ? LP_NONE : lp_prev(z->lp, sp);
        } else {
            z->p = lp_first(z->lp);
        }
    } else {
        struct zset *zs = entry_ptr(e);
        z->lp = NULL;
        z->n = reverse ? zs->zsl.tail : zs->zsl.head->level[0].fwd;
    }
}

void zset_visit(struct entry *e, int reverse, zset_visit_fn fn, void *arg)
{
    struct zcur z;
    char ib[24];
    for (zc_first(&z, e, reverse); zc_ok(&z); zc_next(&z, reverse)) {
        const char *m;
        size_t ml;
        zc_member(&z, &m, &ml, ib);
        if (fn(arg, m, ml, zc_score(&z)))
            break;
    }
}

/* ======================================================= lookups === */

static struct entry *zget_read(struct client *c, int i, int *bad)
{
    struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], 0);
    *bad = 0;
    if (e && e->type != OBJ_ZSET) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *bad = 1;
        return NULL;
    }
    return e;
}

/* A write lookup; *idx gets the table index (for zattach). */
static struct entry *zget_write(struct client *c, int i, int *bad, long *idx)
{
    struct entry *e = db_get_idx(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS, idx);
    *bad = 0;
    if (e && e->type != OBJ_ZSET) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *bad = 1;
        return NULL;
    }
    return e;
}

static int zdel_key(struct client *c, int i)
{
    return db_del(c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
}

/* The destination of a *STORE went away: "del" if it existed. */
static void zdel_dst(struct client *c, int i)
{
    if (zdel_key(c, i))
        KEY_MODIFIED(c, i, NOTIFY_GENERIC, "del");
}

static void zsignal(struct client *c, int i)
{
    signal_key_ready(c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
}

/* Parse a long argument as Redis's getLongFromObjectOrReply. */
static int arg_long(struct client *c, int i, long *v)
{
    long long ll;
    if (!str_to_ll(c->argv[i], c->argvlen[i], &ll) || ll < LONG_MIN || ll > LONG_MAX) {
        reply_error(&c->out, ERR_NOT_INT);
        return -1;
    }
    *v = (long)ll;
    return 0;
}

/* ========================================================== ranges === */

/* One score bound: "(x" exclusive, else inclusive; strtod over the
 * whole argument (as Redis, which accepts what strtod accepts). */
static int parse_score_bound(const char *s, size_t len, double *v, int *ex)
{
    char buf[256], *heap = NULL, *p = buf, *end;
    *ex = 0;
    if (len && s[0] == '(') {
        *ex = 1;
        s++;
        len--;
    }
    if (len >= sizeof(buf))
        p = heap = hk_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    *v = strtod(p, &end);
    int ok = *end == 0 && !isnan(*v);
    if (heap)
        hk_free(heap);
    return ok;
}

static int parse_range(struct client *c, int imin, int imax, struct zsl_range *r)
{
    if (!parse_score_bound(c->argv[imin], c->argvlen[imin], &r->min, &r->min_ex) ||
        !parse_score_bound(c->argv[imax], c->argvlen[imax], &r->max, &r->max_ex)) {
        reply_error(&c->out, ERR_MINMAX_FLOAT);
        return -1;
    }
    return 0;
}

static int parse_lex_bound(const char *s, size_t len, struct zsl_lexbound *b)
{
    if (len == 0)
        return 0;
    switch (s[0]) {
    case '+':
    case '-':
        if (len != 1)
            return 0;
        b->kind = s[0] == '+' ? ZLEX_POS : ZLEX_NEG;
        b->ex = 1;
        b->s = NULL;
        b->len = 0;
        return 1;
    case '(':
    case '[':
        b->kind = ZLEX_STR;
        b->ex = s[0] == '(';
        b->s = s + 1;
        b->len = len - 1;
        return 1;
    default:
        return 0;
    }
}

static int parse_lex(struct client *c, int imin, int imax, struct zsl_lex *r)
{
    if (!parse_lex_bound(c->argv[imin], c->argvlen[imin], &r->min) ||
        !parse_lex_bound(c->argv[imax], c->argvlen[imax], &r->max)) {
        reply_error(&c->out, ERR_MINMAX_LEX);
        return -1;
    }
    return 0;
}

/* Cursor at the first (or last, reverse) element in range; *rank gets its
 * 0-based rank from the start (skiplist only). 0 if none. */
static int zc_score_start(struct zcur *z, struct entry *e, const struct zsl_range *r, int reverse, unsigned long *rank)
{
    if (e->enc == ENC_LISTPACK) {
        z->lp = entry_ptr(e);
        z->n = NULL;
        return reverse ? zl_range_last(z->lp, r, &z->p) : zl_range_first(z->lp, r, &z->p);
    }
    struct zset *zs = entry_ptr(e);
    z->lp = NULL;
    z->n = reverse ? zsl_last_in_range(&zs->zsl, r, rank) : zsl_first_in_range(&zs->zsl, r, rank);
    return z->n != NULL;
}

static int zc_lex_start(struct zcur *z, struct entry *e, const struct zsl_lex *r, int reverse, unsigned long *rank)
{
    if (e->enc == ENC_LISTPACK) {
        z->lp = entry_ptr(e);
        z->n = NULL;
        return reverse ? zl_lex_last(z->lp, r, &z->p) : zl_lex_first(z->lp, r, &z->p);
    }
    struct zset *zs = entry_ptr(e);
    z->lp = NULL;
    z->n = reverse ? zsl_last_in_lex(&zs->zsl, r, rank) : zsl_first_in_lex(&zs->zsl, r, rank);
    return z->n != NULL;
}

/* Skip `offset` elements (a negative offset skips everything, as in
 * Redis); skiplists jump by rank. */
static void zc_skip(struct zcur *z, struct entry *e, long offset, int reverse, unsigned long rank)
{
    if (offset == 0)
        return;
    if (offset < 0) {
        z->p = LP_NONE;
        z->n = NULL;
        return;
    }
    if (z->lp) {
        while (offset-- && z->p != LP_NONE)
            zc_next(z, reverse);
        return;
    }
    struct zset *zs = entry_ptr(e);
    if (reverse)
        z->n = rank > (unsigned long)offset ? zsl_by_rank(&zs->zsl, rank - (unsigned long)offset) : NULL;
    else
        z->n = zsl_by_rank(&zs->zsl, rank + (unsigned long)offset);
}

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

/* ========================================================= output ===
 * Range results go to the client (member [score]) or, for ZRANGESTORE,
 * into a builder that copies them and makes the destination at the end. */
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

static void zb_add(struct zbuild *b, const char *m, size_t mlen, double score)
{
    if (b->alen + mlen > b->acap) {
        b->acap = (b->alen + mlen) * 2 + 64;
        b->arena = hk_realloc(b->arena, b->acap);
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->el = hk_realloc(b->el, b->cap * sizeof(*b->el));
    }
    memcpy(b->arena + b->alen, m, mlen);
    b->el[b->n].off = b->alen;
    b->el[b->n].len = mlen;
    b->el[b->n].score = score;
    b->n++;
    b->alen += mlen;
    if (mlen > b->maxlen)
        b->maxlen = mlen;
}

static void zb_free(struct zbuild *b)
{
    hk_free(b->arena);
    hk_free(b->el);
}

/* The sorted set of the builder's elements (given in ascending order, or
 * descending when reversed). */
static void *zb_finish(struct zbuild *b, int reversed, uint8_t *enc)
{
    void *p = zset_new_value(b->n, b->maxlen, enc);
    for (size_t k = 0; k < b->n; k++) {
        const struct zbel *x = &b->el[reversed ? b->n - 1 - k : k];
        if (*enc == ENC_LISTPACK) {
            char sb[SCORE_BUF];
            p = lp_append(p, b->arena + x->off, x->len);
            p = lp_append(p, sb, (size_t)score_fmt(sb, x->score));
        } else {
            zs_add(p, x->score, b->arena + x->off, x->len);
        }
    }
    return p;
}

struct zout {
    struct client *c;
    int withscores;   /* reply scores too */
    int pairs;        /* RESP3 WITHSCORES: each element is a [member, score] array */
    size_t mark;      /* deferred length */
    long n;
    struct zbuild *b; /* ZRANGESTORE */
};

static void zo_init(struct zout *o, struct client *c, int withscores, struct zbuild *b)
{
    o->c = c;
    o->withscores = withscores;
    o->pairs = withscores && c->out.resp == 3;
    o->n = 0;
    o->b = b;
    o->mark = 0;
}

/* len < 0: unknown (deferred). */
static void zo_begin(struct zout *o, long len)
{
    if (o->b)
        return;
    if (len >= 0)
        reply_array(&o->c->out, o->withscores && !o->pairs ? 2 * len : len);
    else
        o->mark = reply_defer(&o->c->out);
}

static void zo_emit(struct zout *o, const struct zcur *z)
{
    o->n++;
    if (o->b) {
        const char *m;
        size_t ml;
        char ib[24];
        zc_member(z, &m, &ml, ib);
        zb_add(o->b, m, ml, zc_score(z));
        return;
    }
    struct reply *r = &o->c->out;
    if (o->pairs)
        reply_array(r, 2);
    zc_reply_member(r, z);
    if (o->withscores)
        reply_score(r, zc_score(z));
}

static void zo_end_deferred(struct zout *o)
{
    if (!o->b)
        reply_defer_array(&o->c->out, o->mark, o->withscores && !o->pairs ? 2 * o->n : o->n);
}

/* ======================================================== ZADD etc === */

/* Add the new zset entry e (pointer form, not in the keyspace yet) as
 * argv[1]: inline when small, dropped if it got no member. */
static void zadd_new_key(struct client *c, struct entry *e)
{
    if (zset_length(e) == 0) {
        entry_free(e);
        return;
    }
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        size_t n = lp_bytes(lp);
        if (obj_inline_pays(entry_hdr(e) + e->klen, n, ZSET_INLINE_MAX)) {
            struct entry *ne = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, c->argv[1], c->argvlen[1], -1, lp, n);
            lp_free(lp);
            hk_free(e); /* the shell: its listpack is copied and freed */
            e = ne;
        }
    }
    db_add(c->db, kslot(c, 1), e);
}

static void zadd_generic(struct client *c, int flags)
{
    int si = 2, ch = 0;
    for (; si < c->argc; si++) {
        if (arg_is(c, si, "nx"))
            flags |= ZA_NX;
        else if (arg_is(c, si, "xx"))
            flags |= ZA_XX;
        else if (arg_is(c, si, "ch"))
            ch = 1;
        else if (arg_is(c, si, "incr"))
            flags |= ZA_INCR;
        else if (arg_is(c, si, "gt"))
            flags |= ZA_GT;
        else if (arg_is(c, si, "lt"))
            flags |= ZA_LT;
        else
            break;
    }
    int incr = (flags & ZA_INCR) != 0;
    int nel = c->argc - si;
    if (nel == 0 || nel % 2) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    nel /= 2;
    if ((flags & ZA_NX) && (flags & ZA_XX)) {
        reply_error(&c->out, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZA_GT) && (flags & ZA_NX)) || ((flags & ZA_LT) && (flags & ZA_NX)) ||
        ((flags & ZA_GT) && (flags & ZA_LT))) {
        reply_error(&c->out, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && nel > 1) {
        reply_error(&c->out, "ERR INCR option supports a single increment-element pair");
        return;
    }
    double sbuf[16], *scores = nel <= 16 ? sbuf : hk_malloc(sizeof(double) * (size_t)nel);
    size_t maxlen = 0;
    for (int j = 0; j < nel; j++) {
        if (!parse_score(c->argv[si + 2 * j], c->argvlen[si + 2 * j], &scores[j])) {
            reply_error(&c->out, ERR_NOT_FLOAT);
            goto out;
        }
        if (c->argvlen[si + 2 * j + 1] > maxlen)
            maxlen = c->argvlen[si + 2 * j + 1];
    }
    int bad, added = 0, updated = 0, processed = 0, created = 0;
    size_t was = 0;
    double score = 0;
    long idx = -1;
    struct entry *e = zget_write(c, 1, &bad, &idx);
    if (bad)
        goto out;
    if (e)
        was = zwas(e);
    if (!e) {
        if (flags & ZA_XX) {
            if (incr)
                reply_null(&c->out);
            else
                reply_int(&c->out, 0);
            goto out;
        }
        uint8_t enc;
        void *p = zset_new_value((size_t)nel, maxlen, &enc);
        /* Filled first, added to the keyspace at the end (inline if small). */
        e = entry_new_obj(OBJ_ZSET, enc, c->argv[1], c->argvlen[1], p, -1);
        created = 1;
    } else if (e->enc == ENC_LISTPACK &&
               ((size_t)nel > (size_t)zset_max_listpack_entries || maxlen > (size_t)zset_max_listpack_value)) {
        zset_to_skiplist(e, (size_t)nel);
    }
    for (int j = 0; j < nel; j++) {
        int out;
        double ns = 0;
        if (!zset_add(e, scores[j], c->argv[si + 2 * j + 1], c->argvlen[si + 2 * j + 1], flags, &out, &ns)) {
            reply_error(&c->out, ERR_NAN_SCORE);
            goto signal;
        }
        if (out & ZO_ADDED)
            added++;
        if (out & ZO_UPDATED)
            updated++;
        if (!(out & ZO_NOP)) {
            processed++;
            score = ns;
        }
    }
    if (incr) {
        if (processed)
            reply_score(&c->out, score);
        else
            reply_null(&c->out);
    } else {
        reply_int(&c->out, ch ? added + updated : added);
    }
signal:
    if (created)
        zadd_new_key(c, e);
    else
        zattach(c, 1, idx, e, was);
    if (added)
        zsignal(c, 1);
    if (added || updated)
        KEY_MODIFIED(c, 1, NOTIFY_ZSET, incr ? "zincr" : "zadd");
out:
    if (scores != sbuf)
        hk_free(scores);
}

void zadd_command(struct client *c)
{
    zadd_generic(c, 0);
}

void zincrby_command(struct client *c)
{
    zadd_generic(c, ZA_INCR);
}

void zrem_command(struct client *c)
{
    int bad, deleted = 0;
    long idx = -1;
    struct entry *e = zget_write(c, 1, &bad, &idx);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = zwas(e);
    for (int j = 2; j < c->argc; j++) {
        deleted += zset_del(e, c->argv[j], c->argvlen[j]);
        if (zset_length(e) == 0) {
            zdel_key(c, 1);
            e = NULL;
            break;
        }
    }
    if (e)
        zattach(c, 1, idx, e, was);
    if (deleted) {
        KEY_EVENT(c, 1, NOTIFY_ZSET, "zrem");
        if (!e)
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
        KEY_SIGNAL(c, 1);
    }
    reply_int(&c->out, deleted);
}

void zcard_command(struct client *c)
{
    int bad;
    struct entry *e = zget_read(c, 1, &bad);
    if (!bad)
        reply_int(&c->out, e ? (long long)zset_length(e) : 0);
}

void zscore_command(struct client *c)
{
    int bad;
    double s;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    if (e && zset_score(e, c->argv[2], c->argvlen[2], &s))
        reply_score(&c->out, s);
    else
        reply_null(&c->out);
}

void zmscore_command(struct client *c)
{
    int bad;
    double s;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (e && zset_score(e, c->argv[j], c->argvlen[j], &s))
            reply_score(&c->out, s);
        else
            reply_null(&c->out);
    }
}

static void zrank_generic(struct client *c, int reverse)
{
    int withscore = 0, bad;
    if (c->argc > 4) {
        reply_arity_error(c);
        return;
    }
    if (c->argc == 4) {
        if (!arg_is(c, 3, "withscore")) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        withscore = 1;
    }
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    double s = 0;
    long rank = e ? zset_rank(e, c->argv[2], c->argvlen[2], reverse, &s) : -1;
    if (rank < 0) {
        if (withscore)
            reply_null_array(&c->out);
        else
            reply_null(&c->out);
        return;
    }
    if (withscore)
        reply_array(&c->out, 2);
    reply_int(&c->out, rank);
    if (withscore)
        reply_score(&c->out, s);
}

void zrank_command(struct client *c)
{
    zrank_generic(c, 0);
}

void zrevrank_command(struct client *c)
{
    zrank_generic(c, 1);
}

void zcount_command(struct client *c)
{
    struct zsl_range r;
    int bad;
    if (parse_range(c, 2, 3, &r) < 0)
        return;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    long long n = 0;
    if (e && e->enc == ENC_LISTPACK) {
        struct zcur z;
        for (int ok = zc_score_start(&z, e, &r, 0, NULL); ok && zc_ok(&z) && zc_in_score(&z, &r, 0); zc_next(&z, 0))
            n++;
    } else if (e) {
        struct zset *zs = entry_ptr(e);
        unsigned long first, last;
        if (zsl_first_in_range(&zs->zsl, &r, &first)) {
            n = (long long)zs->zsl.length - (long long)first + 1;
            if (zsl_last_in_range(&zs->zsl, &r, &last))
                n -= (long long)zs->zsl.length - (long long)last;
        }
    }
    reply_int(&c->out, n);
}

void zlexcount_command(struct client *c)
{
    struct zsl_lex r;
    int bad;
    if (parse_lex(c, 2, 3, &r) < 0)
        return;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    long long n = 0;
    if (e && e->enc == ENC_LISTPACK) {
        struct zcur z;
        for (int ok = zc_lex_start(&z, e, &r, 0, NULL); ok && zc_ok(&z) && zc_in_lex(&z, &r, 0); zc_next(&z, 0))
            n++;
    } else if (e) {
        struct zset *zs = entry_ptr(e);
        unsigned long first, last;
        /* As Redis counts it (ranks of the first and last in range). */
        if (zsl_first_in_lex(&zs->zsl, &r, &first)) {
            n = (long long)zs->zsl.length - (long long)first + 1;
            if (zsl_last_in_lex(&zs->zsl, &r, &last))
                n -= (long long)zs->zsl.length - (long long)last;
        }
    }
    reply_int(&c->out, n);
}

/* ======================================================== ZRANGE === */

enum { ZR_AUTO = 0, ZR_RANK, ZR_SCORE, ZR_LEX };
enum { ZD_AUTO = 0, ZD_FWD, ZD_REV };

/* Store the builder's result at argv[1] (ZRANGESTORE): replies the count. */
static void zstore_build(struct client *c, struct zbuild *b, int reversed)
{
    if (b->n == 0) {
        zdel_dst(c, 1);
        reply_int(&c->out, 0);
        return;
    }
    uint8_t enc;
    void *p = zb_finish(b, reversed, &enc);
    db_set(c->db, kslot(c, 1), z_entry_new(c->argv[1], c->argvlen[1], p, enc));
    zsignal(c, 1);
    KEY_MODIFIED(c, 1, NOTIFY_ZSET, "zrangestore");
    reply_int(&c->out, (long long)b->n);
}

/* ZRANGE and friends: argv[ks] is the source key, then min max options. */
static void zrange_generic(struct client *c, int ks, int store, int type, int dir)
{
    int imin = ks + 1, imax = ks + 2, withscores = 0, bad;
    long offset = 0, limit = -1;
    long long start = 0, end = 0;
    struct zsl_range range;
    struct zsl_lex lex;

    for (int j = ks + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (!store && arg_is(c, j, "withscores")) {
            withscores = 1;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (arg_long(c, j + 1, &offset) < 0 || arg_long(c, j + 2, &limit) < 0)
                return;
            j += 2;
        } else if (dir == ZD_AUTO && arg_is(c, j, "rev")) {
            dir = ZD_REV;
        } else if (type == ZR_AUTO && arg_is(c, j, "bylex")) {
            type = ZR_LEX;
        } else if (type == ZR_AUTO && arg_is(c, j, "byscore")) {
            type = ZR_SCORE;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (dir == ZD_AUTO)
        dir = ZD_FWD;
    if (type == ZR_AUTO)
        type = ZR_RANK;
    if (limit != -1 && type == ZR_RANK) {
        reply_error(&c->out, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == ZR_LEX) {
        reply_error(&c->out, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    int reverse = dir == ZD_REV;
    if (reverse && type != ZR_RANK) {
        int t = imin;
        imin = imax;
        imax = t;
    }
    if (type == ZR_RANK) {
        if (arg_ll(c, imin, &start) < 0 || arg_ll(c, imax, &end) < 0) /* long's range on LP64 */
            return;
    } else if (type == ZR_SCORE) {
        if (parse_range(c, imin, imax, &range) < 0)
            return;
    } else if (parse_lex(c, imin, imax, &lex) < 0) {
        return;
    }

    struct zbuild b;
    memset(&b, 0, sizeof(b));
    struct zout o;
    zo_init(&o, c, withscores, store ? &b : NULL);

    struct entry *e = zget_read(c, ks, &bad);
    if (bad)
        return;
    if (!e) {
        if (store)
            zstore_build(c, &b, 0);
        else
            reply_array(&c->out, 0);
        return;
    }
    struct zcur z;
    if (type == ZR_RANK) {
        if (!index_range(&start, &end, (long long)zset_length(e))) {
            zo_begin(&o, 0);
        } else {
            long n = end - start + 1;
            zo_begin(&o, n);
            zc_at_rank(&z, e, start, reverse);
            for (; n > 0 && zc_ok(&z); n--, zc_next(&z, reverse))
                zo_emit(&o, &z);
        }
    } else {
        unsigned long rank = 0;
        zo_begin(&o, -1);
        if (!(offset > 0 && offset >= (long)zset_length(e))) {
            int ok = type == ZR_SCORE ? zc_score_start(&z, e, &range, reverse, &rank)
                                      : zc_lex_start(&z, e, &lex, reverse, &rank);
            if (ok) {
                zc_skip(&z, e, offset, reverse, rank);
                /* A negative LIMIT count means no limit (as in Redis); it is
                 * never decremented, so LONG_MIN cannot wrap. */
                while (zc_ok(&z) && (limit < 0 || limit-- > 0)) {
                    if (type == ZR_SCORE ? !zc_in_score(&z, &range, reverse) : !zc_in_lex(&z, &lex, reverse))
                        break;
                    zo_emit(&o, &z);
                    zc_next(&z, reverse);
                }
            }
        }
        zo_end_deferred(&o);
    }
    if (store) {
        zstore_build(c, &b, reverse);
        zb_free(&b);
    }
}

void zrange_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_AUTO, ZD_AUTO);
}

void zrangestore_command(struct client *c)
{
    zrange_generic(c, 2, 1, ZR_AUTO, ZD_AUTO);
}

void zrevrange_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_RANK, ZD_REV);
}

void zrangebyscore_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_SCORE, ZD_FWD);
}

void zrevrangebyscore_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_SCORE, ZD_REV);
}

void zrangebylex_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_LEX, ZD_FWD);
}

void zrevrangebylex_command(struct client *c)
{
    zrange_generic(c, 1, 0, ZR_LEX, ZD_REV);
}

/* ================================================== ZREMRANGEBY* === */

static void zremrange_generic(struct client *c, int type)
{
    long long start = 0, end = 0;
    struct zsl_range range;
    struct zsl_lex lex;
    int bad;
    if (type == ZR_RANK) {
        if (arg_ll(c, 2, &start) < 0 || arg_ll(c, 3, &end) < 0) /* long's range on LP64 */
            return;
    } else if (type == ZR_SCORE) {
        if (parse_range(c, 2, 3, &range) < 0)
            return;
    } else if (parse_lex(c, 2, 3, &lex) < 0) {
        return;
    }
    long idx = -1;
    struct entry *e = zget_write(c, 1, &bad, &idx);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = zwas(e);
    long llen = (long)zset_length(e), deleted = 0;
    if (type == ZR_RANK) {
        if (!index_range(&start, &end, llen)) {
            reply_int(&c->out, 0);
            return;
        }
        deleted = end - start + 1;
        if (e->enc == ENC_LISTPACK) {
            zdetach(e);
            unsigned char *lp = entry_ptr(e);
            lp = lp_delete(lp, lp_seek(lp, 2 * (long long)start), 2 * (size_t)deleted, NULL);
            entry_set_ptr(e, lp, ENC_LISTPACK);
        } else {
            zs_del_ranks(entry_ptr(e), (unsigned long)start + 1, (unsigned long)end + 1);
        }
    } else {
        /* As Redis: from the first element in range, the run of elements
         * that stay below the maximum. */
        struct zcur z;
        if (e->enc == ENC_SKIPLIST) {
            struct zset *zs = entry_ptr(e);
            deleted = (long)(type == ZR_SCORE ? zsl_delete_range_by_score(&zs->zsl, &range, zs_unindex, zs)
                                              : zsl_delete_range_by_lex(&zs->zsl, &lex, zs_unindex, zs));
            goto done;
        }
        int ok = type == ZR_SCORE ? zc_score_start(&z, e, &range, 0, NULL) : zc_lex_start(&z, e, &lex, 0, NULL);
        struct zcur w = z;
        for (; ok && zc_ok(&w); zc_next(&w, 0), deleted++)
            if (type == ZR_SCORE ? !zc_in_score(&w, &range, 0) : !zc_in_lex(&w, &lex, 0))
                break;
        if (deleted) {
            zdetach(e); /* same bytes: z.p stays valid */
            unsigned char *lp = lp_delete(entry_ptr(e), z.p, 2 * (size_t)deleted, NULL);
            entry_set_ptr(e, lp, ENC_LISTPACK);
        }
    }
done:;
    int gone = deleted && zset_length(e) == 0;
    if (gone)
        zdel_key(c, 1);
    else if (deleted)
        zattach(c, 1, idx, e, was);
    if (deleted) {
        static const char *const ev[] = {NULL, "zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
        KEY_MODIFIED(c, 1, NOTIFY_ZSET, ev[type]);
        if (gone)
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    }
    reply_int(&c->out, deleted);
}

void zremrangebyrank_command(struct client *c)
{
    zremrange_generic(c, ZR_RANK);
}

void zremrangebyscore_command(struct client *c)
{
    zremrange_generic(c, ZR_SCORE);
}

void zremrangebylex_command(struct client *c)
{
    zremrange_generic(c, ZR_LEX);
}

/* ============================================================ POP === */

enum { ZP_MIN = 0, ZP_MAX = 1 };
/* Reply shapes. */
enum {
    ZP_FLAT = 0,     /* ZPOPMIN/MAX: [m, s, m, s ...] */
    ZP_NESTED,       /* ZPOPMIN/MAX count in RESP3: [[m, s] ...] */
    ZP_KEY_FLAT,     /* BZPOPMIN/MAX: [key, m, s] */
    ZP_KEY_NESTED    /* ZMPOP/BZMPOP: [key, [[m, s] ...]] */
};

/* Pop up to count elements of the non-empty set at argv[ki] and reply. */
static void zpop_reply(struct client *c, int ki, struct entry *e, long idx, int where, long count, int shape)
{
    long llen = (long)zset_length(e);
    long n = count > llen ? llen : count;
    struct reply *r = &c->out;
    switch (shape) {
    case ZP_FLAT: reply_array(r, 2 * n); break;
    case ZP_NESTED: reply_array(r, n); break;
    case ZP_KEY_FLAT:
        reply_array(r, 2 * n + 1);
        reply_bulk(r, c->argv[ki], c->argvlen[ki]);
        break;
    default:
        reply_array(r, 2);
        reply_bulk(r, c->argv[ki], c->argvlen[ki]);
        reply_array(r, n);
        break;
    }
    int nested = shape == ZP_NESTED || shape == ZP_KEY_NESTED;
    struct zcur z;
    zc_first(&z, e, where == ZP_MAX);
    for (long k = 0; k < n; k++, zc_next(&z, where == ZP_MAX)) {
        if (nested)
            reply_array(r, 2);
        zc_reply_member(r, &z);
        reply_score(r, zc_score(&z));
    }
    KEY_EVENT(c, ki, NOTIFY_ZSET, where == ZP_MAX ? "zpopmax" : "zpopmin");
    if (n == llen) {
        zdel_key(c, ki); /* frees the whole value */
        KEY_EVENT(c, ki, NOTIFY_GENERIC, "del");
    } else if (e->enc == ENC_LISTPACK) {
        size_t was = zwas(e);
        zdetach(e);
        unsigned char *lp = entry_ptr(e);
        size_t p = where == ZP_MAX ? lp_seek(lp, -2 * (long long)n) : lp_first(lp);
        lp = lp_delete(lp, p, 2 * (size_t)n, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
        zattach(c, ki, idx, e, was);
    } else if (where == ZP_MAX) {
        zs_del_ranks(entry_ptr(e), (unsigned long)(llen - n + 1), (unsigned long)llen);
    } else {
        zs_del_ranks(entry_ptr(e), 1, (unsigned long)n);
    }
    KEY_SIGNAL(c, ki);
}

static void zpop_minmax(struct client *c, int where)
{
    long count = -1;
    int bad;
    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        long long v;
        if (!str_to_ll(c->argv[2], c->argvlen[2], &v) || v < 0) {
            reply_error(&c->out, ERR_POSITIVE);
            return;
        }
        count = (long)v;
    }
    long idx = -1;
    struct entry *e = zget_write(c, 1, &bad, &idx);
    if (bad)
        return;
    if (!e || count == 0) {
        reply_array(&c->out, 0);
        return;
    }
    zpop_reply(c, 1, e, idx, where, count == -1 ? 1 : count, c->out.resp == 3 && count != -1 ? ZP_NESTED : ZP_FLAT);
}

void zpopmin_command(struct client *c)
{
    zpop_minmax(c, ZP_MIN);
}

void zpopmax_command(struct client *c)
{
    zpop_minmax(c, ZP_MAX);
}

/* The first non-empty zset among keys kidx[0..n-1]: its argv index, 0 if
 * none, -1 on WRONGTYPE (replied).  *idx: its table index (it is the last
 * key looked up, so nothing moved it since). */
static int zpop_pick(struct client *c, int first, int n, struct entry **out, long *idx)
{
    for (int k = 0; k < n; k++) {
        int bad;
        struct entry *e = zget_write(c, first + k, &bad, idx);
        if (bad)
            return -1;
        if (e && zset_length(e)) {
            *out = e;
            return first + k;
        }
    }
    return 0;
}

/* BZPOPMIN/MAX, [B]ZMPOP served: fed as ZPOPMIN/ZPOPMAX key [count] (Redis). */
static void prop_zpop(struct client *c, int ki, int where, long long count)
{
    prop_prevent();
    prop_op_begin(c->db);
    prop_op_str(where == ZP_MAX ? "ZPOPMAX" : "ZPOPMIN");
    prop_op_arg(c->argv[ki], c->argvlen[ki]);
    if (count >= 0)
        prop_op_ll(count);
    prop_op_end();
}

static void bzpop_generic(struct client *c, int where)
{
    long long deadline;
    struct entry *e = NULL;
    if (parse_block_timeout(c, c->argc - 1, &deadline) < 0)
        return;
    int nk = c->argc - 2;
    long idx = -1;
    int ki = zpop_pick(c, 1, nk, &e, &idx);
    if (ki < 0)
        return;
    if (ki > 0) {
        zpop_reply(c, ki, e, idx, where, 1, ZP_KEY_FLAT);
        prop_zpop(c, ki, where, -1);
        return;
    }
    int kbuf[32], *kidx = nk <= 32 ? kbuf : hk_malloc(sizeof(int) * (size_t)nk);
    for (int k = 0; k < nk; k++)
        kidx[k] = 1 + k;
    block_on_keys(c, kidx, nk, OBJ_ZSET, deadline, BLOCK_NULL_ARRAY);
    if (kidx != kbuf)
        hk_free(kidx);
}

void bzpopmin_command(struct client *c)
{
    bzpop_generic(c, ZP_MIN);
}

void bzpopmax_command(struct client *c)
{
    bzpop_generic(c, ZP_MAX);
}

/* ZMPOP numkeys key.. MIN|MAX [COUNT n]; BZMPOP timeout numkeys ... */
static void zmpop_generic(struct client *c, int ni, int block)
{
    long long numkeys, count = -1, v;
    int where;
    if (!str_to_ll(c->argv[ni], c->argvlen[ni], &numkeys) || numkeys < 1 || numkeys > LONG_MAX) {
        reply_error(&c->out, "ERR numkeys should be greater than 0");
        return;
    }
    long long wi = ni + numkeys + 1;
    if (wi >= c->argc) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (arg_is(c, (int)wi, "min")) {
        where = ZP_MIN;
    } else if (arg_is(c, (int)wi, "max")) {
        where = ZP_MAX;
    } else {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    for (int j = (int)wi + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c, j, "count") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &v) || v < 1) {
                reply_error(&c->out, "ERR count should be greater than 0");
                return;
            }
            count = v;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1)
        count = 1;
    long long deadline = 0;
    if (block && parse_block_timeout(c, 1, &deadline) < 0)
        return;
    struct entry *e = NULL;
    long idx = -1;
    int ki = zpop_pick(c, ni + 1, (int)numkeys, &e, &idx);
    if (ki < 0)
        return;
    if (ki > 0) {
        zpop_reply(c, ki, e, idx, where, (long)count, ZP_KEY_NESTED);
        prop_zpop(c, ki, where, count);
        return;
    }
    if (!block) {
        reply_null_array(&c->out);
        return;
    }
    int kbuf[32], *kidx = numkeys <= 32 ? kbuf : hk_malloc(sizeof(int) * (size_t)numkeys);
    for (int k = 0; k < (int)numkeys; k++)
        kidx[k] = ni + 1 + k;
    block_on_keys(c, kidx, (int)numkeys, OBJ_ZSET, deadline, BLOCK_NULL_ARRAY);
    if (kidx != kbuf)
        hk_free(kidx);
}

void zmpop_command(struct client *c)
{
    zmpop_generic(c, 1, 0);
}

void bzmpop_command(struct client *c)
{
    zmpop_generic(c, 2, 1);
}

/* ==================================================== ZRANDMEMBER === */

static void zpick_reply(struct client *c, const unsigned char *lp, size_t p, struct zsl_node *n, int withscores)
{
    struct reply *r = &c->out;
    if (withscores && r->resp == 3)
        reply_array(r, 2);
    if (lp) {
        reply_lp_elem(r, lp, p);
        if (withscores)
            reply_score(r, lp_score(lp, lp_next(lp, p)));
    } else {
        reply_bulk(r, zsl_member(n), n->mlen);
        if (withscores)
            reply_score(r, n->score);
    }
}

static size_t *lp_member_positions(const unsigned char *lp, size_t n)
{
    size_t *pos = hk_malloc(sizeof(size_t) * (n ? n : 1)), k = 0;
    for (size_t p = lp_first(lp); p != LP_NONE && k < n; p = lp_next(lp, lp_next(lp, p)))
        pos[k++] = p;
    return pos;
}

static void zrandmember_count(struct client *c, long l, int withscores)
{
    int bad;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_array(&c->out, 0);
        return;
    }
    size_t size = zset_length(e);
    unsigned long count = l >= 0 ? (unsigned long)l : (unsigned long)-l;
    int uniq = l >= 0;
    int flat2 = withscores && c->out.resp == 2;
    if (count == 0) {
        reply_array(&c->out, 0);
        return;
    }
    unsigned char *lp = e->enc == ENC_LISTPACK ? entry_ptr(e) : NULL;
    struct zset *zs = lp ? NULL : entry_ptr(e);
    if (!uniq || count == 1) {
        reply_array(&c->out, flat2 ? 2 * (long long)count : (long long)count);
        size_t *pos = lp ? lp_member_positions(lp, size) : NULL;
        while (count--) {
            if (lp)
                zpick_reply(c, lp, pos[rand64() % size], NULL, withscores);
            else
                zpick_reply(c, NULL, 0, (struct zsl_node *)dict_random(zs->d), withscores);
            /* A huge negative count: stop past 512 MB of pending output
             * and close the client, as HRANDFIELD does. */
            if ((c->flags & CF_CLOSE_ASAP) || ((count & 1023) == 0 && c->out.len > (512ull << 20))) {
                c->flags |= CF_CLOSE_ASAP;
                break;
            }
        }
        hk_free(pos);
        return;
    }
    if (count >= size) {
        /* The whole set, highest first (Redis walks it from the tail). */
        reply_array(&c->out, flat2 ? 2 * (long long)size : (long long)size);
        struct zcur z;
        for (zc_first(&z, e, 1); zc_ok(&z); zc_next(&z, 1))
            zpick_reply(c, z.lp, z.p, z.n, withscores);
        return;
    }
    reply_array(&c->out, flat2 ? 2 * (long long)count : (long long)count);
    if (lp || count * 3 > size) {
        /* A partial Fisher-Yates shuffle over every element. */
        size_t *pos = NULL;
        struct zsl_node **nodes = NULL;
        if (lp) {
            pos = lp_member_positions(lp, size);
        } else {
            nodes = hk_malloc(sizeof(*nodes) * size);
            size_t k = 0;
            for (struct zsl_node *n = zs->zsl.head->level[0].fwd; n; n = n->level[0].fwd)
                nodes[k++] = n;
        }
        for (size_t k = 0; k < count; k++) {
            size_t j = k + (size_t)(rand64() % (size - k));
            if (lp) {
                size_t t = pos[k];
                pos[k] = pos[j];
                pos[j] = t;
                zpick_reply(c, lp, pos[k], NULL, withscores);
            } else {
                struct zsl_node *t = nodes[k];
                nodes[k] = nodes[j];
                nodes[j] = t;
                zpick_reply(c, NULL, 0, nodes[k], withscores);
            }
        }
        hk_free(pos);
        hk_free(nodes);
        return;
    }
    /* Few of many: random picks, duplicates dropped with a small open
     * addressing set of node pointers. */
    size_t cap = 16;
    while (cap < count * 2)
        cap <<= 1;
    struct zsl_node **seen = hk_calloc(sizeof(*seen) * cap);
    unsigned long added = 0;
    while (added < count) {
        struct zsl_node *n = (struct zsl_node *)dict_random(zs->d);
        size_t h = (size_t)(((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
        while (seen[h] && seen[h] != n)
            h = (h + 1) & (cap - 1);
        if (seen[h])
            continue;
        seen[h] = n;
        added++;
        zpick_reply(c, NULL, 0, n, withscores);
    }
    hk_free(seen);
}

void zrandmember_command(struct client *c)
{
    if (c->argc >= 3) {
        long long l;
        int withscores = 0;
        if (!str_to_ll(c->argv[2], c->argvlen[2], &l)) {
            reply_error(&c->out, ERR_NOT_INT);
            return;
        }
        if (l < -LONG_MAX) {
            reply_errorf(&c->out, "ERR value is out of range, value must between %ld and %ld", -LONG_MAX, LONG_MAX);
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c, 3, "withscores"))) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withscores = 1;
            if (l < -LONG_MAX / 2 || l > LONG_MAX / 2) {
                reply_error(&c->out, "ERR value is out of range");
                return;
            }
        }
        zrandmember_count(c, (long)l, withscores);
        return;
    }
    int bad;
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        reply_lp_elem(&c->out, lp, lp_seek(lp, 2 * (long long)(rand64() % zl_len(lp))));
    } else {
        struct zsl_node *n = (struct zsl_node *)dict_random(((struct zset *)entry_ptr(e))->d);
        reply_bulk(&c->out, zsl_member(n), n->mlen);
    }
}

/* =========================================================== ZSCAN === */

struct zscan_acc {
    struct client *c;
    const char *pat;
    size_t plen;
    size_t n, cap;
    const struct zsl_node **nodes;   /* skiplist: matched nodes */
};

static void zscan_emit(struct zscan_acc *a, const char *m, size_t ml, const char *s, size_t sl)
{
    if (a->pat && !glob_match(a->pat, a->plen, m, ml, 0))
        return;
    reply_bulk(&a->c->out, m, ml);
    reply_bulk(&a->c->out, s, sl);
    a->n++;
}

static void zscan_cb(void *arg, const struct dict_link *it)
{
    struct zscan_acc *a = arg;
    const struct zsl_node *n = (const struct zsl_node *)it;
    if (a->pat && !glob_match(a->pat, a->plen, zsl_member(n), n->mlen, 0))
        return;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->nodes = hk_realloc(a->nodes, sizeof(*a->nodes) * a->cap);
    }
    a->nodes[a->n++] = n;
}

void zscan_command(struct client *c)
{
    char cbuf[32], *end;
    unsigned long cursor;
    int bad;
    if (c->argvlen[2] >= sizeof(cbuf)) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    memcpy(cbuf, c->argv[2], c->argvlen[2]);
    cbuf[c->argvlen[2]] = 0;
    errno = 0;
    cursor = strtoul(cbuf, &end, 10);
    if (isspace((unsigned char)cbuf[0]) || *end || errno == ERANGE || memchr(c->argv[2], 0, c->argvlen[2])) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    struct entry *e = zget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_scan_empty(c);
        return;
    }
    long long count_ll = 10;
    struct zscan_acc a = {c, NULL, 0, 0, 0, NULL};
    if (scan_opts(c, &count_ll, &a.pat, &a.plen, NULL) < 0)
        return;
    long count = (long)count_ll; /* arg_ll's range is long's on LP64 */
    reply_array(&c->out, 2);
    if (e->enc == ENC_LISTPACK) {
        /* A compact encoding is returned whole, cursor 0 (as Redis). */
        unsigned char *lp = entry_ptr(e);
        reply_bulk(&c->out, "0", 1);
        size_t mark = reply_defer(&c->out);
        for (size_t p = lp_first(lp); p != LP_NONE;) {
            const char *m, *s;
            size_t ml, sl;
            char ib[24], sb[24];
            size_t sp = lp_next(lp, p);
            lp_str(lp, p, &m, &ml, ib);
            lp_str(lp, sp, &s, &sl, sb);
            zscan_emit(&a, m, ml, s, sl);
            p = lp_next(lp, sp);
        }
        reply_defer_array(&c->out, mark, 2 * a.n);
        return;
    }
    /* The cursor comes first in the reply but is known only after the
     * walk: collect the nodes, then reply. */
    struct zset *zs = entry_ptr(e);
    long maxiter = count * 10;
    do {
        cursor = (unsigned long)dict_scan(zs->d, cursor, zscan_cb, &a);
    } while (cursor && maxiter-- && (long)a.n < count);
    char cb[24];
    reply_bulk(&c->out, cb, (size_t)ull_to_str(cb, cursor));
    reply_array(&c->out, 2 * (long long)a.n);
    for (size_t k = 0; k < a.n; k++) {
        char sb[SCORE_BUF];
        const struct zsl_node *n = a.nodes[k];
        reply_bulk(&c->out, zsl_member(n), n->mlen);
        reply_bulk(&c->out, sb, (size_t)d_to_str(sb, sizeof(sb), n->score));
    }
    hk_free(a.nodes);
}

/* ====================================== ZUNION / ZINTER / ZDIFF ===
 * Inputs may be sorted sets or sets (members scored 1).  The result is
 * built as a skiplist zset (the union aggregates into it in place); a
 * stored result small enough is then rewritten as a listpack. */

enum { OP_UNION = 0, OP_INTER, OP_DIFF };
enum { AGG_SUM = 0, AGG_MIN, AGG_MAX };

struct zsrc {
    struct entry *e;      /* zset or set entry, NULL if missing */
    size_t len;
    double weight;
    struct dict *tmp;     /* a set's members (nodes scored 1) for lookups */
};

struct zacc {
    struct zset *zs;      /* the result, built as a skiplist */
    size_t maxlen;
    int agg;
    double weight;
    /* intersection / difference lookups */
    struct zsrc *src;
    int nsrc;
    long long card;       /* ZINTERCARD */
    long long limit;
    int card_only;
};

static inline double agg_apply(int agg, double target, double v)
{
    switch (agg) {
    case AGG_SUM: {
        double s = target + v;
        return isnan(s) ? 0 : s;
    }
    case AGG_MIN: return v < target ? v : target;
    default: return v > target ? v : target;
    }
}


static int union_visit(void *arg, const char *m, size_t mlen, double score)
{
    struct zacc *a = arg;
    double s = a->weight * score;
    if (isnan(s))
        s = 0;
    struct zsl_node *n = zs_find(a->zs, m, mlen);
    if (n) {
        double ns = agg_apply(a->agg, n->score, s);
        if (ns != n->score)
            zsl_update_score(&a->zs->zsl, n->score, m, mlen, ns);
        return 0;
    }
    zs_add(a->zs, s, m, mlen);
    if (mlen > a->maxlen)
        a->maxlen = mlen;
    return 0;
}

static int union_set_visit(void *arg, const char *m, size_t mlen)
{
    return union_visit(arg, m, mlen, 1.0);
}

static void tmp_free_node(struct dict_link *it)
{
    hk_free(it);
}

static int tmp_set_visit(void *arg, const char *m, size_t mlen)
{
    struct dict *d = arg;
    if (dict_find(d, m, mlen))
        return 0;
    struct zsl_node *n = hk_malloc(sizeof(*n) + mlen);
    n->link.next = NULL;
    n->score = 1.0;
    n->back = NULL;
    n->mlen = (uint32_t)mlen;
    n->nlevel = 0;
    memcpy((char *)&n->level[0], m, mlen);
    dict_add(d, &n->link);
    return 0;
}

/* Score of m in source s (sets: 1), 0 if absent. */
static int src_find(struct zsrc *s, const char *m, size_t mlen, double *score)
{
    if (!s->e)
        return 0;
    if (s->e->type == OBJ_ZSET)
        return zset_score(s->e, m, mlen, score);
    if (!s->tmp) {
        s->tmp = dict_new(&zset_dict_type, s->len);
        set_visit(s->e, tmp_set_visit, s->tmp);
    }
    if (!dict_find(s->tmp, m, mlen))
        return 0;
    *score = 1.0;
    return 1;
}

static int inter_visit(void *arg, const char *m, size_t mlen, double score)
{
    struct zacc *a = arg;
    double s = a->src[0].weight * score, v;
    if (isnan(s))
        s = 0;
    for (int j = 1; j < a->nsrc; j++) {
        if (a->src[j].e == a->src[0].e) {
            v = score;
        } else if (!src_find(&a->src[j], m, mlen, &v)) {
            return 0;
        }
        s = agg_apply(a->agg, s, v * a->src[j].weight);
    }
    if (a->card_only) {
        a->card++;
        return a->limit && a->card >= a->limit;
    }
    zs_add(a->zs, s, m, mlen);
    if (mlen > a->maxlen)
        a->maxlen = mlen;
    return 0;
}

static int inter_set_visit(void *arg, const char *m, size_t mlen)
{
    return inter_visit(arg, m, mlen, 1.0);
}

static int diff_visit(void *arg, const char *m, size_t mlen, double score)
{
    struct zacc *a = arg;
    double v;
    for (int j = 1; j < a->nsrc; j++)
        if (src_find(&a->src[j], m, mlen, &v))
            return 0;
    zs_add(a->zs, score, m, mlen);
    if (mlen > a->maxlen)
        a->maxlen = mlen;
    return 0;
}

static int diff_set_visit(void *arg, const char *m, size_t mlen)
{
    return diff_visit(arg, m, mlen, 1.0);
}

static void src_visit(struct zsrc *s, zset_visit_fn zfn, obj_visit_fn sfn, struct zacc *a)
{
    if (!s->e)
        return;
    if (s->e->type == OBJ_ZSET)
        zset_visit(s->e, 0, zfn, a);
    else
        set_visit(s->e, sfn, a);
}

static int cmp_src_len(const void *x, const void *y)
{
    const struct zsrc *a = x, *b = y;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* Parse numkeys at argv[ni]: replies and returns -1 on error. */
static int parse_numkeys(struct client *c, int ni, long *n)
{
    if (arg_long(c, ni, n) < 0)
        return -1;
    if (*n < 1) {
        reply_errorf(&c->out, "ERR at least 1 input key is needed for '%s' command", c->cmd->name);
        return -1;
    }
    if (*n > c->argc - ni - 1) {
        reply_error(&c->out, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

/* ZUNION/ZINTER/ZDIFF[STORE], ZINTERCARD.  dst: argv index of the
 * destination (0 = reply); ni: argv index of numkeys. */
static void zsetop_generic(struct client *c, int dst, int ni, int op, int card_only)
{
    long setnum;
    int agg = AGG_SUM, withscores = 0;
    long long limit = 0;
    if (parse_numkeys(c, ni, &setnum) < 0)
        return;
    struct zsrc sbuf[8], *src = setnum <= 8 ? sbuf : hk_malloc(sizeof(*src) * (size_t)setnum);
    memset(src, 0, sizeof(*src) * (size_t)setnum);
    int j = ni + 1;
    for (long i = 0; i < setnum; i++, j++) {
        struct entry *e = db_get(c->db, kslot(c, j), c->argv[j], c->argvlen[j], 0);
        if (e && e->type != OBJ_ZSET && e->type != OBJ_SET) {
            reply_error(&c->out, ERR_WRONGTYPE);
            goto out_src;
        }
        src[i].e = e;
        src[i].len = e ? obj_len(e) : 0;
        src[i].weight = 1.0;
    }
    while (j < c->argc) {
        int remaining = c->argc - j;
        if (op != OP_DIFF && !card_only && remaining >= setnum + 1 && arg_is(c, j, "weights")) {
            j++;
            for (long i = 0; i < setnum; i++, j++) {
                if (!parse_score(c->argv[j], c->argvlen[j], &src[i].weight)) {
                    reply_error(&c->out, "ERR weight value is not a float");
                    goto out_src;
                }
            }
        } else if (op != OP_DIFF && !card_only && remaining >= 2 && arg_is(c, j, "aggregate")) {
            j++;
            if (arg_is(c, j, "sum")) {
                agg = AGG_SUM;
            } else if (arg_is(c, j, "min")) {
                agg = AGG_MIN;
            } else if (arg_is(c, j, "max")) {
                agg = AGG_MAX;
            } else {
                reply_error(&c->out, ERR_SYNTAX);
                goto out_src;
            }
            j++;
        } else if (remaining >= 1 && !dst && !card_only && arg_is(c, j, "withscores")) {
            j++;
            withscores = 1;
        } else if (card_only && remaining >= 2 && arg_is(c, j, "limit")) {
            j++;
            long long v;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &v) || v < 0) {
                reply_error(&c->out, "ERR LIMIT can't be negative");
                goto out_src;
            }
            limit = v;
            j++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            goto out_src;
        }
    }
    if (op != OP_DIFF)
        qsort(src, (size_t)setnum, sizeof(*src), cmp_src_len);

    struct zacc a;
    memset(&a, 0, sizeof(a));
    a.agg = agg;
    a.src = src;
    a.nsrc = (int)setnum;
    a.card_only = card_only;
    a.limit = limit;
    a.zs = card_only ? NULL : zs_new(0);
    if (op == OP_INTER) {
        if (src[0].len > 0)
            src_visit(&src[0], inter_visit, inter_set_visit, &a);
    } else if (op == OP_UNION) {
        for (long i = 0; i < setnum; i++) {
            if (!src[i].len)
                continue;
            a.weight = src[i].weight;
            src_visit(&src[i], union_visit, union_set_visit, &a);
        }
    } else if (src[0].len > 0) {
        src_visit(&src[0], diff_visit, diff_set_visit, &a);
    }

    if (card_only) {
        reply_int(&c->out, a.card);
    } else if (dst) {
        struct zset *zs = a.zs;
        a.zs = NULL;
        size_t n = zs->zsl.length;
        if (n == 0) {
            zs_free(zs);
            zdel_dst(c, dst);
            reply_int(&c->out, 0);
        } else {
            void *p = zs;
            uint8_t enc = ENC_SKIPLIST;
            if (n <= (size_t)zset_max_listpack_entries && a.maxlen <= (size_t)zset_max_listpack_value) {
                unsigned char *lp = lp_new();
                char sb[SCORE_BUF];
                for (struct zsl_node *x = zs->zsl.head->level[0].fwd; x; x = x->level[0].fwd) {
                    lp = lp_append(lp, zsl_member(x), x->mlen);
                    lp = lp_append(lp, sb, (size_t)score_fmt(sb, x->score));
                }
                zs_free(zs);
                p = lp;
                enc = ENC_LISTPACK;
            }
            db_set(c->db, kslot(c, dst), z_entry_new(c->argv[dst], c->argvlen[dst], p, enc));
            zsignal(c, dst);
            KEY_MODIFIED(c, dst, NOTIFY_ZSET,
                         op == OP_UNION ? "zunionstore" : op == OP_INTER ? "zinterstore" : "zdiffstore");
            reply_int(&c->out, (long long)n);
        }
    } else {
        struct zset *zs = a.zs;
        size_t n = zs->zsl.length;
        int pairs = withscores && c->out.resp == 3;
        reply_array(&c->out, withscores && !pairs ? 2 * (long long)n : (long long)n);
        for (struct zsl_node *x = zs->zsl.head->level[0].fwd; x; x = x->level[0].fwd) {
            if (pairs)
                reply_array(&c->out, 2);
            reply_bulk(&c->out, zsl_member(x), x->mlen);
            if (withscores)
                reply_score(&c->out, x->score);
        }
    }
    if (a.zs)
        zs_free(a.zs);
out_src:
    for (long i = 0; i < setnum; i++)
        if (src[i].tmp)
            dict_free(src[i].tmp, tmp_free_node);
    if (src != sbuf)
        hk_free(src);
}

void zunion_command(struct client *c)
{
    zsetop_generic(c, 0, 1, OP_UNION, 0);
}

void zinter_command(struct client *c)
{
    zsetop_generic(c, 0, 1, OP_INTER, 0);
}

void zdiff_command(struct client *c)
{
    zsetop_generic(c, 0, 1, OP_DIFF, 0);
}

void zintercard_command(struct client *c)
{
    zsetop_generic(c, 0, 1, OP_INTER, 1);
}

void zunionstore_command(struct client *c)
{
    zsetop_generic(c, 1, 2, OP_UNION, 0);
}

void zinterstore_command(struct client *c)
{
    zsetop_generic(c, 1, 2, OP_INTER, 0);
}

void zdiffstore_command(struct client *c)
{
    zsetop_generic(c, 1, 2, OP_DIFF, 0);
}

/* ======================================================= key specs === */

/* numkeys at argv[ni], keys after it; plus argv[dst] when dst > 0
 * (getkeys_numkeys, t_common.h). */

int zset_getkeys_store(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 2, 1, 0);
}

int zset_getkeys_numkeys(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 1, 0, 0);
}

int zset_getkeys_bzmpop(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 2, 0, 0);
}

/* ================================================ RDB (persist/) === */
struct entry *zset_load_finish(struct entry *e)
{
    if (e->enc != ENC_LISTPACK || (e->flags & E_INLINE))
        return e;
    unsigned char *lp = entry_ptr(e);
    size_t n = lp_bytes(lp);
    if (!obj_inline_pays(entry_hdr(e) + e->klen, n, ZSET_INLINE_MAX))
        return e;
    struct entry *ne = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, entry_key(e), e->klen, entry_expire(e), lp, n);
    ne->lru = e->lru;
    entry_free(e); /* and lp with it */
    return ne;
}
