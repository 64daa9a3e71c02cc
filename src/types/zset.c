/* zset.c - the sorted-set value (types/zset.h): listpack and skiplist
 * encodings, conversions, member primitives, cursors, builders, type ops,
 * inline entries and the RDB finisher. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "set.h"
#include "types.h"
#include "zset.h"

#define SCORE_BUF ZSET_SCORE_BUF
/* A listpack may not grow past this (Redis's lpSafeToAdd bound). */
#define LP_SAFETY_SIZE (1u << 30)

/* ===================================================== score text === */
/* strtod over a buffer that is not NUL-terminated (listpack text). */
double zset_bytes_to_double(const char *s, size_t len)
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

int zset_score_fmt(char *buf, double d)
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

/* ================================================== listpack layer === */

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
    double s = zlp_score(lp, lp_next(lp, p));
    if (s != score)
        return score > s;
    const char *em;
    size_t el;
    char ib[24];
    zlp_str(lp, p, &em, &el, ib);
    return zsl_memcmp(m, mlen, em, el) > 0;
}

/* Insert (m, score), m absent, at its place. */
static unsigned char *zl_insert(unsigned char *lp, const char *m, size_t mlen, double score)
{
    char sb[SCORE_BUF];
    size_t sl = (size_t)zset_score_fmt(sb, score);
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
        double s = zlp_score(lp, lp_next(lp, p));
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
        double s = zlp_score(lp, sp);
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
    zlp_str(lp, p, &m, &ml, ib);
    if (!zsl_lex_lte_max(m, ml, r))
        return 0;
    zlp_str(lp, lp_prev(lp, lp_last(lp)), &m, &ml, ib);
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
        zlp_str(lp, p, &m, &ml, ib);
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
        zlp_str(lp, p, &m, &ml, ib);
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

struct zset *zs_new(size_t hint)
{
    struct zset *zs = hk_malloc(sizeof(*zs));
    zsl_init(&zs->zsl);
    zs->d = dict_new(&zset_dict_type, hint);
    return zs;
}

void zs_free(struct zset *zs)
{
    dict_free(zs->d, NULL);
    zsl_release(&zs->zsl);
    hk_free(zs);
}

void zs_add(struct zset *zs, double score, const char *m, size_t mlen)
{
    struct zsl_node *n = zsl_insert(&zs->zsl, score, m, mlen);
    dict_add(zs->d, &n->link);
}

int zs_del(struct zset *zs, const char *m, size_t mlen)
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
unsigned long zs_del_ranks(struct zset *zs, unsigned long start, unsigned long end)
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
 * (The rules: types/zset.h.) */
#define ZSET_INLINE_MAX 256
_Static_assert(ZSET_INLINE_MAX <= ENTRY_SHORT_VLEN, "obj_entry_base: inline values fit the short header");

void zset_detach(struct entry *e)
{
    if (e->flags & E_INLINE)
        obj_inline_detach(e, lp_bytes((const unsigned char *)entry_val(e)));
}

struct entry *zset_entry_new(const char *key, size_t klen, void *p, uint8_t enc)
{
    if (enc == ENC_LISTPACK) {
        size_t n = lp_bytes(p);
        if (obj_inline_pays(obj_entry_base(klen, -1), n, ZSET_INLINE_MAX)) {
            struct entry *e = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, key, klen, -1, p, n);
            lp_free(p);
            return e;
        }
    }
    return entry_new_obj(OBJ_ZSET, enc, key, klen, p, -1);
}

struct entry *zset_attach(struct entry *e, size_t was)
{
    if (e->enc != ENC_LISTPACK || (e->flags & E_INLINE))
        return NULL;
    unsigned char *lp = entry_ptr(e);
    struct entry *ne;
    if (obj_inline_attach(e, lp_bytes(lp), ZSET_INLINE_MAX, was, &ne)) {
        lp_free(lp);
        return NULL;
    }
    return ne;
}

struct entry *zset_entry_finish(struct entry *e)
{
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        size_t n = lp_bytes(lp);
        if (obj_inline_pays(entry_hdr(e) + entry_klen(e), n, ZSET_INLINE_MAX)) {
            struct entry *ne = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, entry_key(e), entry_klen(e), -1, lp, n);
            lp_free(lp);
            hk_free(e); /* the shell: its listpack is copied and freed */
            e = ne;
        }
    }
    return e;
}

/* ================================================== entry helpers === */

size_t zset_length(struct entry *e)
{
    return e->enc == ENC_LISTPACK ? zl_len(entry_ptr(e)) : ((struct zset *)entry_ptr(e))->zsl.length;
}

/* Convert a listpack set to the skiplist encoding. */
void zset_to_skiplist(struct entry *e, size_t hint)
{
    unsigned char *lp = entry_ptr(e);
    size_t n = zl_len(lp);
    struct zset *zs = zs_new(hint > n ? hint : n);
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        const char *m;
        size_t ml;
        char ib[24];
        size_t sp = lp_next(lp, p);
        zlp_str(lp, p, &m, &ml, ib);
        zs_add(zs, zlp_score(lp, sp), m, ml);
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
        *score = zlp_score(lp, sp);
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
        zset_detach(e);
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
            double cur = zlp_score(lp, sp);
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
                zset_detach(e);
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
            zset_detach(e);
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
                *score = zlp_score(lp, sp);
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
/* ======================================================== cursors === */

/* Cursor at 0-based rank (counted from the top when reverse). */
void zc_at_rank(struct zcur *z, struct entry *e, long rank, int reverse)
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

void zc_first(struct zcur *z, struct entry *e, int reverse)
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

/* Cursor at the first (or last, reverse) element in range; *rank gets its
 * 0-based rank from the start (skiplist only). 0 if none. */
int zc_score_start(struct zcur *z, struct entry *e, const struct zsl_range *r, int reverse, unsigned long *rank)
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

int zc_lex_start(struct zcur *z, struct entry *e, const struct zsl_lex *r, int reverse, unsigned long *rank)
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
void zc_skip(struct zcur *z, struct entry *e, long offset, int reverse, unsigned long rank)
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

/* ======================================================= builders === */


void zb_add(struct zbuild *b, const char *m, size_t mlen, double score)
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

void zb_free(struct zbuild *b)
{
    hk_free(b->arena);
    hk_free(b->el);
}

/* The sorted set of the builder's elements (given in ascending order, or
 * descending when reversed). */
void *zb_finish(struct zbuild *b, int reversed, uint8_t *enc)
{
    void *p = zset_new_value(b->n, b->maxlen, enc);
    for (size_t k = 0; k < b->n; k++) {
        const struct zbel *x = &b->el[reversed ? b->n - 1 - k : k];
        if (*enc == ENC_LISTPACK) {
            char sb[SCORE_BUF];
            p = lp_append(p, b->arena + x->off, x->len);
            p = lp_append(p, sb, (size_t)zset_score_fmt(sb, x->score));
        } else {
            zs_add(p, x->score, b->arena + x->off, x->len);
        }
    }
    return p;
}

/* ================================================ RDB (persist/) === */
struct entry *zset_load_finish(struct entry *e)
{
    if (e->enc != ENC_LISTPACK || (e->flags & E_INLINE))
        return e;
    unsigned char *lp = entry_ptr(e);
    size_t n = lp_bytes(lp);
    if (!obj_inline_pays(entry_hdr(e) + entry_klen(e), n, ZSET_INLINE_MAX))
        return e;
    struct entry *ne = obj_inline_new(OBJ_ZSET, ENC_LISTPACK, entry_key(e), entry_klen(e), entry_expire(e), lp, n);
    entry_set_lru(ne, entry_lru(e));
    entry_free(e); /* and lp with it */
    return ne;
}

/* ============================================= command primitives === */

long long zset_count_score(struct entry *e, const struct zsl_range *r)
{
    long long n = 0;
    if (e->enc == ENC_LISTPACK) {
        struct zcur z;
        for (int ok = zc_score_start(&z, e, r, 0, NULL); ok && zc_ok(&z) && zc_in_score(&z, r, 0); zc_next(&z, 0))
            n++;
    } else {
        struct zset *zs = entry_ptr(e);
        unsigned long first, last;
        if (zsl_first_in_range(&zs->zsl, r, &first)) {
            n = (long long)zs->zsl.length - (long long)first + 1;
            if (zsl_last_in_range(&zs->zsl, r, &last))
                n -= (long long)zs->zsl.length - (long long)last;
        }
    }
    return n;
}

long long zset_count_lex(struct entry *e, const struct zsl_lex *r)
{
    long long n = 0;
    if (e->enc == ENC_LISTPACK) {
        struct zcur z;
        for (int ok = zc_lex_start(&z, e, r, 0, NULL); ok && zc_ok(&z) && zc_in_lex(&z, r, 0); zc_next(&z, 0))
            n++;
    } else {
        struct zset *zs = entry_ptr(e);
        unsigned long first, last;
        /* As Redis counts it (ranks of the first and last in range). */
        if (zsl_first_in_lex(&zs->zsl, r, &first)) {
            n = (long long)zs->zsl.length - (long long)first + 1;
            if (zsl_last_in_lex(&zs->zsl, r, &last))
                n -= (long long)zs->zsl.length - (long long)last;
        }
    }
    return n;
}

long zset_del_rank_range(struct entry *e, long start, long end)
{
    long deleted = end - start + 1;
    if (e->enc == ENC_LISTPACK) {
        zset_detach(e);
        unsigned char *lp = entry_ptr(e);
        lp = lp_delete(lp, lp_seek(lp, 2 * (long long)start), 2 * (size_t)deleted, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
    } else {
        zs_del_ranks(entry_ptr(e), (unsigned long)start + 1, (unsigned long)end + 1);
    }
    return deleted;
}

/* ZREMRANGEBYSCORE / BYLEX (lex == NULL: by score r). */
static long del_range(struct entry *e, const struct zsl_range *r, const struct zsl_lex *lex)
{
    /* As Redis: from the first element in range, the run of elements that
     * stay below the maximum. */
    long deleted = 0;
    if (e->enc == ENC_SKIPLIST) {
        struct zset *zs = entry_ptr(e);
        return (long)(!lex ? zsl_delete_range_by_score(&zs->zsl, r, zs_unindex, zs)
                           : zsl_delete_range_by_lex(&zs->zsl, lex, zs_unindex, zs));
    }
    struct zcur z;
    int ok = !lex ? zc_score_start(&z, e, r, 0, NULL) : zc_lex_start(&z, e, lex, 0, NULL);
    struct zcur w = z;
    for (; ok && zc_ok(&w); zc_next(&w, 0), deleted++)
        if (!lex ? !zc_in_score(&w, r, 0) : !zc_in_lex(&w, lex, 0))
            break;
    if (deleted) {
        zset_detach(e); /* same bytes: z.p stays valid */
        unsigned char *lp = lp_delete(entry_ptr(e), z.p, 2 * (size_t)deleted, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
    }
    return deleted;
}

long zset_del_score_range(struct entry *e, const struct zsl_range *r)
{
    return del_range(e, r, NULL);
}

long zset_del_lex_range(struct entry *e, const struct zsl_lex *r)
{
    return del_range(e, NULL, r);
}

size_t zset_del_ends(struct entry *e, int from_max, long n)
{
    if (e->enc == ENC_LISTPACK) {
        size_t was = zset_was(e);
        zset_detach(e);
        unsigned char *lp = entry_ptr(e);
        size_t p = from_max ? lp_seek(lp, -2 * (long long)n) : lp_first(lp);
        lp = lp_delete(lp, p, 2 * (size_t)n, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
        return was;
    }
    long llen = (long)zset_length(e);
    if (from_max)
        zs_del_ranks(entry_ptr(e), (unsigned long)(llen - n + 1), (unsigned long)llen);
    else
        zs_del_ranks(entry_ptr(e), 1, (unsigned long)n);
    return 0;
}

/* ========================================================= random === */

void zc_random(struct zcur *z, struct entry *e)
{
    if (e->enc == ENC_LISTPACK) {
        z->lp = entry_ptr(e);
        z->n = NULL;
        z->p = lp_seek(z->lp, 2 * (long long)(rand64() % zl_len(z->lp)));
    } else {
        z->lp = NULL;
        z->n = (struct zsl_node *)dict_random(((struct zset *)entry_ptr(e))->d);
    }
}

static size_t *lp_member_positions(const unsigned char *lp, size_t n)
{
    size_t *pos = hk_malloc(sizeof(size_t) * (n ? n : 1)), k = 0;
    for (size_t p = lp_first(lp); p != LP_NONE && k < n; p = lp_next(lp, lp_next(lp, p)))
        pos[k++] = p;
    return pos;
}

void zset_random_repeat(struct entry *e, unsigned long count, zcur_fn fn, void *arg)
{
    size_t size = zset_length(e);
    struct zcur z = {NULL, 0, NULL};
    unsigned char *lp = e->enc == ENC_LISTPACK ? entry_ptr(e) : NULL;
    struct zset *zs = lp ? NULL : entry_ptr(e);
    size_t *pos = lp ? lp_member_positions(lp, size) : NULL;
    z.lp = lp;
    while (count--) {
        if (lp)
            z.p = pos[rand64() % size];
        else
            z.n = (struct zsl_node *)dict_random(zs->d);
        if (fn(arg, &z))
            break;
    }
    hk_free(pos);
}

void zset_random_distinct(struct entry *e, unsigned long count, zcur_fn fn, void *arg)
{
    size_t size = zset_length(e);
    struct zcur z = {NULL, 0, NULL};
    unsigned char *lp = e->enc == ENC_LISTPACK ? entry_ptr(e) : NULL;
    struct zset *zs = lp ? NULL : entry_ptr(e);
    z.lp = lp;
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
                z.p = pos[k];
            } else {
                struct zsl_node *t = nodes[k];
                nodes[k] = nodes[j];
                nodes[j] = t;
                z.n = nodes[k];
            }
            fn(arg, &z);
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
        z.n = n;
        fn(arg, &z);
    }
    hk_free(seen);
}

/* =========================================================== scans === */

void zset_lp_visit_raw(struct entry *e, void (*fn)(void *arg, const char *m, size_t ml, const char *s, size_t sl),
                       void *arg)
{
    unsigned char *lp = entry_ptr(e);
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        const char *m, *s;
        size_t ml, sl;
        char ib[24], sb[24];
        size_t sp = lp_next(lp, p);
        zlp_str(lp, p, &m, &ml, ib);
        zlp_str(lp, sp, &s, &sl, sb);
        fn(arg, m, ml, s, sl);
        p = lp_next(lp, sp);
    }
}

struct sl_scan {
    void (*fn)(void *arg, const char *m, size_t ml, double score);
    void *arg;
};

static void sl_scan_cb(void *arg, const struct dict_link *it)
{
    struct sl_scan *s = arg;
    const struct zsl_node *n = (const struct zsl_node *)it;
    s->fn(s->arg, zsl_member(n), n->mlen, n->score);
}

unsigned long zset_sl_scan(struct entry *e, unsigned long cursor,
                           void (*fn)(void *arg, const char *m, size_t ml, double score), void *arg)
{
    struct sl_scan s = {fn, arg};
    return (unsigned long)dict_scan(((struct zset *)entry_ptr(e))->d, cursor, sl_scan_cb, &s);
}

/* ================================== ZUNION / ZINTER / ZDIFF support === */

void *zs_shrink(struct zset *zs, size_t maxlen, uint8_t *enc)
{
    size_t n = zs->zsl.length;
    if (n <= (size_t)zset_max_listpack_entries && maxlen <= (size_t)zset_max_listpack_value) {
        unsigned char *lp = lp_new();
        char sb[SCORE_BUF];
        for (struct zsl_node *x = zs->zsl.head->level[0].fwd; x; x = x->level[0].fwd) {
            lp = lp_append(lp, zsl_member(x), x->mlen);
            lp = lp_append(lp, sb, (size_t)zset_score_fmt(sb, x->score));
        }
        zs_free(zs);
        *enc = ENC_LISTPACK;
        return lp;
    }
    *enc = ENC_SKIPLIST;
    return zs;
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

struct dict *zs_set_index(struct entry *s, size_t hint)
{
    struct dict *d = dict_new(&zset_dict_type, hint);
    set_visit(s, tmp_set_visit, d);
    return d;
}

void zs_index_free(struct dict *d)
{
    dict_free(d, tmp_free_node);
}
