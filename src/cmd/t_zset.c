/* t_zset.c - the sorted set commands.
 *
 * The value itself (listpack / skiplist encodings, conversions, member
 * primitives, cursors, inline entries) is types/zset.c; this file parses
 * arguments, calls it, replies, propagates, notifies and wakes blocked
 * clients.
 *
 * Every handler runs with its keys' slot locks held by the dispatcher. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "../types/set.h"
#include "../types/zset.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"
#define ERR_NAN_SCORE "ERR resulting score is not a number (NaN)"
#define ERR_POSITIVE "ERR value is out of range, must be positive"

#define SCORE_BUF ZSET_SCORE_BUF

/* ===================================================== score text === */

/* A score argument as Redis reads it (t_common.h). */
static inline int parse_score(const char *s, size_t len, double *out)
{
    return arg_parse_double(s, len, out);
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


static inline void reply_lp_elem(struct reply *r, const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s)
        reply_bulk(r, (const char *)v.s, v.len);
    else
        reply_bulk_ll(r, v.ll);
}

static inline void zc_reply_member(struct reply *r, const struct zcur *z)
{
    if (z->lp)
        reply_lp_elem(r, z->lp, z->p);
    else
        reply_bulk(r, zsl_member(z->n), z->n->mlen);
}

/* End of a write to e, the zset at argv[i] (table index idx from its
 * lookup, or -1 when other keys were added or removed since), still
 * holding members: a small listpack goes back inline (zset_attach).
 * was: zset_was(e) when the command started.  e may be replaced: not to be
 * used after. */
static void zattach(struct client *c, int i, long idx, struct entry *e, size_t was)
{
    struct entry *ne = zset_attach(e, was);
    if (ne && idx >= 0)
        db_replace(c->db, kslot(c, i), idx, ne); /* frees e (and its listpack with it when ne is inline) */
    else if (ne)
        db_set(c->db, kslot(c, i), ne);
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
    db_add(c->db, kslot(c, 1), zset_entry_finish(e));
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
        was = zset_was(e);
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
    if (added || updated) {
        KEY_MODIFIED(c, 1, NOTIFY_ZSET, incr ? "zincr" : "zadd");
        prop_dirty_add((unsigned long long)(added + updated) - 1); /* per member added or updated, as Redis */
    }
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
    size_t was = zset_was(e);
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
        KEY_SIGNAL_ND(c, 1);
        prop_dirty_add((unsigned long long)deleted); /* per member removed, as Redis */
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
    long long n = e ? zset_count_score(e, &r) : 0;
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
    long long n = e ? zset_count_lex(e, &r) : 0;
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
    db_set(c->db, kslot(c, 1), zset_entry_new(c->argv[1], c->argvlen[1], p, enc));
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
    size_t was = zset_was(e);
    long llen = (long)zset_length(e), deleted = 0;
    if (type == ZR_RANK) {
        if (!index_range(&start, &end, llen)) {
            reply_int(&c->out, 0);
            return;
        }
        deleted = zset_del_rank_range(e, (long)start, (long)end);
    } else if (type == ZR_SCORE) {
        deleted = zset_del_score_range(e, &range);
    } else {
        deleted = zset_del_lex_range(e, &lex);
    }
    int gone = deleted && zset_length(e) == 0;
    if (gone)
        zdel_key(c, 1);
    else if (deleted)
        zattach(c, 1, idx, e, was);
    if (deleted) {
        static const char *const ev[] = {NULL, "zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
        KEY_MODIFIED(c, 1, NOTIFY_ZSET, ev[type]);
        prop_dirty_add((unsigned long long)deleted - 1); /* per member removed, as Redis */
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
    } else {
        size_t was = zset_del_ends(e, where == ZP_MAX, n);
        zattach(c, ki, idx, e, was);
    }
    KEY_SIGNAL_ND(c, ki);
    prop_dirty_add((unsigned long long)n); /* per member popped, as Redis */
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

/* BZPOPMIN/MAX, [B]ZMPOP served: fed as ZPOPMIN/ZPOPMAX key [count popped]
 * (Redis). */
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
        /* Fed with the count popped, as Redis (the set may go away). */
        long long len = (long long)zset_length(e), popped = count > len ? len : count;
        zpop_reply(c, ki, e, idx, where, (long)count, ZP_KEY_NESTED);
        prop_zpop(c, ki, where, popped);
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

struct zpick {
    struct client *c;
    int withscores;
    unsigned long left; /* repeats: still to reply after this one */
};

static void zpick_reply(struct client *c, const struct zcur *z, int withscores)
{
    struct reply *r = &c->out;
    if (withscores && r->resp == 3)
        reply_array(r, 2);
    zc_reply_member(r, z);
    if (withscores)
        reply_score(r, zc_score(z));
}

static int zpick_emit(void *arg, const struct zcur *z)
{
    struct zpick *k = arg;
    zpick_reply(k->c, z, k->withscores);
    return 0;
}

/* A huge negative count: stop past 512 MB of pending output and close the
 * client, as HRANDFIELD does. */
static int zpick_emit_repeat(void *arg, const struct zcur *z)
{
    struct zpick *k = arg;
    struct client *c = k->c;
    zpick_reply(c, z, k->withscores);
    k->left--;
    if ((c->flags & CF_CLOSE_ASAP) || ((k->left & 1023) == 0 && c->out.len > (512ull << 20))) {
        c->flags |= CF_CLOSE_ASAP;
        return 1;
    }
    return 0;
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
    struct zpick k = {c, withscores, count};
    if (!uniq || count == 1) {
        reply_array(&c->out, flat2 ? 2 * (long long)count : (long long)count);
        zset_random_repeat(e, count, zpick_emit_repeat, &k);
        return;
    }
    if (count >= size) {
        /* The whole set, highest first (Redis walks it from the tail). */
        reply_array(&c->out, flat2 ? 2 * (long long)size : (long long)size);
        struct zcur z;
        for (zc_first(&z, e, 1); zc_ok(&z); zc_next(&z, 1))
            zpick_reply(c, &z, withscores);
        return;
    }
    reply_array(&c->out, flat2 ? 2 * (long long)count : (long long)count);
    zset_random_distinct(e, count, zpick_emit, &k);
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
    struct zcur z;
    zc_random(&z, e);
    zc_reply_member(&c->out, &z);
}

/* =========================================================== ZSCAN === */

struct zscan_hit {
    const char *m;
    size_t ml;
    double score;
};

struct zscan_acc {
    struct client *c;
    const char *pat;
    size_t plen;
    size_t n, cap;
    struct zscan_hit *hits;   /* skiplist: matched members */
};

static void zscan_emit(void *arg, const char *m, size_t ml, const char *s, size_t sl)
{
    struct zscan_acc *a = arg;
    if (a->pat && !glob_match(a->pat, a->plen, m, ml, 0))
        return;
    reply_bulk(&a->c->out, m, ml);
    reply_bulk(&a->c->out, s, sl);
    a->n++;
}

static void zscan_cb(void *arg, const char *m, size_t ml, double score)
{
    struct zscan_acc *a = arg;
    if (a->pat && !glob_match(a->pat, a->plen, m, ml, 0))
        return;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->hits = hk_realloc(a->hits, sizeof(*a->hits) * a->cap);
    }
    a->hits[a->n].m = m;
    a->hits[a->n].ml = ml;
    a->hits[a->n++].score = score;
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
        reply_bulk(&c->out, "0", 1);
        size_t mark = reply_defer(&c->out);
        zset_lp_visit_raw(e, zscan_emit, &a);
        reply_defer_array(&c->out, mark, 2 * a.n);
        return;
    }
    /* The cursor comes first in the reply but is known only after the
     * walk: collect the members, then reply. */
    long maxiter = count * 10;
    do {
        cursor = zset_sl_scan(e, cursor, zscan_cb, &a);
    } while (cursor && maxiter-- && (long)a.n < count);
    char cb[24];
    reply_bulk(&c->out, cb, (size_t)ull_to_str(cb, cursor));
    reply_array(&c->out, 2 * (long long)a.n);
    for (size_t k = 0; k < a.n; k++) {
        char sb[SCORE_BUF];
        const struct zscan_hit *h = &a.hits[k];
        reply_bulk(&c->out, h->m, h->ml);
        reply_bulk(&c->out, sb, (size_t)d_to_str(sb, sizeof(sb), h->score));
    }
    hk_free(a.hits);
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

/* Score of m in source s (sets: 1), 0 if absent. */
static int src_find(struct zsrc *s, const char *m, size_t mlen, double *score)
{
    if (!s->e)
        return 0;
    if (s->e->type == OBJ_ZSET)
        return zset_score(s->e, m, mlen, score);
    if (!s->tmp) {
        s->tmp = zs_set_index(s->e, s->len);
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
            uint8_t enc;
            void *p = zs_shrink(zs, a.maxlen, &enc);
            db_set(c->db, kslot(c, dst), zset_entry_new(c->argv[dst], c->argvlen[dst], p, enc));
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
            zs_index_free(src[i].tmp);
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
