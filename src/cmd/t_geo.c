/* t_geo.c - the GEO commands: GEOADD, GEODIST, GEOHASH, GEOPOS,
 * GEORADIUS[_RO], GEORADIUSBYMEMBER[_RO], GEOSEARCH, GEOSEARCHSTORE.
 *
 * A geo set is an ordinary sorted set whose scores are Redis's 52-bit
 * geohashes (ds/geohash.h), so ZRANGE, DUMP and RDB files see exactly what
 * Redis has.  Redis 7.2's behaviour is the spec, down to:
 *  - GEOADD runs as the ZADD it amounts to (same reply, events and
 *    blocking wake-ups) and is propagated as that ZADD, as Redis does by
 *    rewriting its argv;
 *  - searches scan the 3x3 geohash cells covering the shape, in Redis's
 *    order (centre, N, S, E, W, NE, NW, SE, SW; a cell equal to the last
 *    one scanned is skipped), each in score order, and filter by exact
 *    distance: with no ASC/DESC (and COUNT ANY) that is the reply order;
 *  - sorting is glibc's stable qsort, or with COUNT the partial quicksort
 *    Redis uses, so ties come out in Redis's order too;
 *  - numbers print as Redis 7.2 prints them: distances with 4 decimals,
 *    coordinates as 17-decimal long doubles with trailing zeros cut.
 * A STORE / STOREDIST / GEOSEARCHSTORE destination is replaced (or
 * deleted when nothing matched) and the command is propagated as called.
 *
 * Every handler runs with its keys' slot locks held by the dispatcher;
 * GEORADIUS's store key is among those geo_getkeys_radius* return (the
 * handler checks that its parser agrees before writing). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "commands.h"
#include "../ds/geohash.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"
#include "t_geo.h"
#include "../types/zset.h"

#define ERR_GEO_MEMBER "ERR could not decode requested zset member"
#define ERR_GEO_UNIT "ERR unsupported unit provided. please use M, KM, FT, MI"

/* ====================================================== arguments === */

/* A double as Redis's string2d reads it (t_common.h). */
static inline int parse_double(const char *s, size_t len, double *out)
{
    return arg_parse_double(s, len, out);
}

/* argv[i] as a double; replies msg (or Redis's default) when it is not. */
static int arg_double(struct client *c, int i, double *v, const char *msg)
{
    if (!parse_double(c->argv[i], c->argvlen[i], v)) {
        reply_error(&c->out, msg ? msg : ERR_NOT_FLOAT);
        return -1;
    }
    return 0;
}

/* argv[i], argv[i+1] as a valid longitude, latitude pair. */
static int arg_lonlat(struct client *c, int i, double xy[2])
{
    if (arg_double(c, i, &xy[0], NULL) < 0 || arg_double(c, i + 1, &xy[1], NULL) < 0)
        return -1;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(&c->out, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

/* Metres per unit of argv[i]; -1 (replied) if it is no unit. */
static double arg_unit(struct client *c, int i)
{
    if (arg_is(c, i, "m"))
        return 1;
    if (arg_is(c, i, "km"))
        return 1000;
    if (arg_is(c, i, "ft"))
        return 0.3048;
    if (arg_is(c, i, "mi"))
        return 1609.34;
    reply_error(&c->out, ERR_GEO_UNIT);
    return -1;
}

/* "radius unit" at argv[i]. */
static int arg_radius(struct client *c, int i, struct geo_shape *s)
{
    double r;
    if (arg_double(c, i, &r, "ERR need numeric radius") < 0)
        return -1;
    if (r < 0) {
        reply_error(&c->out, "ERR radius cannot be negative");
        return -1;
    }
    s->radius = r;
    double conv = arg_unit(c, i + 1);
    if (conv < 0)
        return -1;
    s->conversion = conv;
    return 0;
}

/* "width height unit" at argv[i]. */
static int arg_box(struct client *c, int i, struct geo_shape *s)
{
    double w, h;
    if (arg_double(c, i, &w, "ERR need numeric width") < 0 || arg_double(c, i + 1, &h, "ERR need numeric height") < 0)
        return -1;
    if (h < 0 || w < 0) {
        reply_error(&c->out, "ERR height or width cannot be negative");
        return -1;
    }
    s->width = w;
    s->height = h;
    double conv = arg_unit(c, i + 2);
    if (conv < 0)
        return -1;
    s->conversion = conv;
    return 0;
}

/* ======================================================== replies === */

/* A coordinate: a bulk string in RESP2, a double in RESP3, both in Redis
 * 7.2's human long-double text. */
static void reply_coord(struct reply *r, double d)
{
    char b[400];
    int n = geo_fmt_coord(b + 1, sizeof(b) - 3, d);
    if (r->resp == 3) {
        b[0] = ',';
        b[n + 1] = '\r';
        b[n + 2] = '\n';
        reply_raw(r, b, (size_t)n + 3);
    } else {
        reply_bulk(r, b + 1, (size_t)n);
    }
}

/* A distance: always a bulk string, 4 decimals. */
static void reply_dist(struct reply *r, double d)
{
    char b[32];
    int n = geo_fmt_distance(b, d);
    reply_bulk(r, b, (size_t)n);
}

/* The source key: NULL if absent; *bad (replied) if it is no sorted set. */
static struct entry *geo_lookup(struct client *c, int i, int *bad)
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

/* The position of a member: 0 if it is not in the set. */
static int member_pos(struct entry *e, const char *m, size_t mlen, double xy[2])
{
    double score;
    if (!zset_score(e, m, mlen, &score))
        return 0;
    return geo_decode_score(score, xy);
}

/* ========================================================= GEOADD === */

/* GEOADD key [NX|XX] [CH] lon lat member ...: validated here, then run
 * as ZADD key [options] score member ... with that argv in place (Redis
 * replaces the client's argv), so the reply, the "zadd" event, WATCH and
 * blocked BZPOP clients are ZADD's.  What is propagated is that ZADD. */
void geoadd_command(struct client *c)
{
    int xx = 0, nx = 0, first = 2;
    for (; first < c->argc; first++) {
        if (arg_is(c, first, "nx"))
            nx = 1;
        else if (arg_is(c, first, "xx"))
            xx = 1;
        else if (!arg_is(c, first, "ch")) /* CH: ZADD's business */
            break;
    }
    if ((c->argc - first) % 3 || (xx && nx)) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    int n = (c->argc - first) / 3;
    int zargc = first + n * 2;
    /* One block: argv, lengths, then the score texts (<= 20 digits each). */
    size_t bytes = (size_t)zargc * (sizeof(char *) + sizeof(size_t)) + (size_t)n * 24;
    char *blk = hk_malloc(bytes);
    const char **zargv = (const char **)blk;
    size_t *zlens = (size_t *)(blk + (size_t)zargc * sizeof(char *));
    char *digits = blk + (size_t)zargc * (sizeof(char *) + sizeof(size_t));
    zargv[0] = "zadd";
    zlens[0] = 4;
    for (int i = 1; i < first; i++) {
        zargv[i] = c->argv[i];
        zlens[i] = c->argvlen[i];
    }
    for (int i = 0; i < n; i++) {
        double xy[2];
        int a = first + i * 3;
        if (arg_lonlat(c, a, xy) < 0) {
            hk_free(blk);
            return;
        }
        char *d = digits + (size_t)i * 24;
        zargv[first + i * 2] = d;
        zlens[first + i * 2] = (size_t)ll_to_str(d, (long long)geo_score_of(xy[0], xy[1]));
        zargv[first + i * 2 + 1] = c->argv[a + 2];
        zlens[first + i * 2 + 1] = c->argvlen[a + 2];
    }

    int argc = c->argc;
    const char **argv = c->argv;
    size_t *argvlen = c->argvlen;
    unsigned long long dirty = prop_dirty;
    c->argc = zargc;
    c->argv = zargv;
    c->argvlen = zlens;
    zadd_command(c);
    c->argc = argc;
    c->argv = argv;
    c->argvlen = argvlen;
    if (prop_dirty != dirty)
        prop_rewrite(c, zargc, zargv, zlens);
    hk_free(blk);
}

/* ================================================= GEODIST, HASH, POS === */

void geodist_command(struct client *c)
{
    double to_m = 1;
    if (c->argc == 5) {
        to_m = arg_unit(c, 4);
        if (to_m < 0)
            return;
    } else if (c->argc > 5) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    int bad;
    struct entry *e = geo_lookup(c, 1, &bad);
    if (bad)
        return;
    double a[2], b[2];
    if (!e || !member_pos(e, c->argv[2], c->argvlen[2], a) || !member_pos(e, c->argv[3], c->argvlen[3], b)) {
        reply_null(&c->out);
        return;
    }
    reply_dist(&c->out, geo_distance(a[0], a[1], b[0], b[1]) / to_m);
}

void geohash_command(struct client *c)
{
    int bad;
    struct entry *e = geo_lookup(c, 1, &bad);
    if (bad)
        return;
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        char h[11];
        if (!e || !member_pos(e, c->argv[j], c->argvlen[j], xy) || !geo_hash_string(xy, h))
            reply_null(&c->out);
        else
            reply_bulk(&c->out, h, sizeof(h));
    }
}

void geopos_command(struct client *c)
{
    int bad;
    struct entry *e = geo_lookup(c, 1, &bad);
    if (bad)
        return;
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (!e || !member_pos(e, c->argv[j], c->argvlen[j], xy)) {
            reply_null_array(&c->out);
            continue;
        }
        reply_array(&c->out, 2);
        reply_coord(&c->out, xy[0]);
        reply_coord(&c->out, xy[1]);
    }
}

/* ========================================================= search === */

#define GF_COORDS 0x01      /* GEORADIUS: centre from lon lat arguments */
#define GF_MEMBER 0x02      /* GEORADIUSBYMEMBER: centre from a member */
#define GF_NOSTORE 0x04     /* the _RO forms */
#define GF_SEARCH 0x08      /* GEOSEARCH grammar */
#define GF_SEARCHSTORE 0x10 /* GEOSEARCHSTORE: argv[1] is the destination */

enum { SORT_NONE = 0, SORT_ASC, SORT_DESC };

/* The hits so far: points (sorted later) and, by their ref, where each
 * member is in the source set (read at reply / store time: nothing
 * changes the source before then). */
struct hits {
    struct geo_point *p;
    struct zcur *cur;
    size_t n, cap;
};

static void hits_add(struct hits *h, const double xy[2], double dist, double score, const struct zcur *z)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->p = hk_realloc(h->p, h->cap * sizeof(*h->p));
        h->cur = hk_realloc(h->cur, h->cap * sizeof(*h->cur));
    }
    struct geo_point *p = &h->p[h->n];
    p->lon = xy[0];
    p->lat = xy[1];
    p->dist = dist;
    p->score = score;
    p->ref = h->n;
    h->cur[h->n] = *z;
    h->n++;
}

static void hits_free(struct hits *h)
{
    hk_free(h->p);
    hk_free(h->cur);
}

/* The members of cell whose positions lie in the shape, in score order,
 * stopping once the hits reach limit (0: no limit). */
static void scan_cell(struct entry *e, struct geo_bits cell, const struct geo_shape *s, struct hits *h, size_t limit)
{
    uint64_t lo, hi;
    geo_cell_scores(cell, &lo, &hi);
    struct zsl_range r = {(double)lo, (double)hi, 0, 1};
    struct zcur z;
    if (!zc_score_start(&z, e, &r, 0, NULL))
        return;
    for (; zc_ok(&z); zc_next(&z, 0)) {
        double score = zc_score(&z);
        if (!zsl_lte_max(score, &r))
            break;
        double xy[2], dist = 0;
        if (geo_in_shape(s, score, xy, &dist))
            hits_add(h, xy, dist, score, &z);
        if (limit && h->n >= limit)
            break;
    }
}

/* Every cell of the cover, in Redis's order; a cell equal to the last one
 * scanned (huge radii make neighbours coincide) is skipped.  As in Redis,
 * "the last one scanned" is never the centre cell (index 0 reads as
 * "none"). */
static void scan_cover(struct entry *e, struct geo_shape *s, struct hits *h, size_t limit)
{
    struct geo_cover cov;
    struct geo_bits cells[9];
    geo_search_cells(s, &cov);
    geo_cover_list(&cov, cells);
    int last = 0;
    for (int i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0)
            continue;
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step)
            continue;
        if (limit && h->n >= limit)
            break;
        scan_cell(e, cells[i], s, h, limit);
        last = i;
    }
}

/* The STORE / STOREDIST key the command writes: the last one, scanning
 * the options from argv[5] as Redis's georadiusGetKeys does (-1: none). */
static int written_store_key(struct client *c)
{
    int stored = -1;
    for (int i = 5; i < c->argc; i++) {
        if ((arg_is(c, i, "store") || arg_is(c, i, "storedist")) && i + 1 < c->argc) {
            stored = i + 1;
            i++;
        }
    }
    return stored;
}

/* Redis 7.2 finds these keys with its key specs: the source, then the key
 * after the first STORE and after the first STOREDIST from argv[start]
 * on (a keyword that is the last argument names nothing).  When both
 * options, or one twice, are given, the command writes the last one: that
 * key is added (and so locked) if the specs missed it. */
static int getkeys_store(struct client *c, int *idx, int max, int start)
{
    int n = 0, found[2] = {-1, -1};
    if (n < max)
        idx[n++] = 1;
    for (int k = 0; k < 2; k++) {
        for (int i = start; i < c->argc - 1; i++) {
            if (arg_is(c, i, k ? "storedist" : "store")) {
                found[k] = i + 1;
                break;
            }
        }
        if (found[k] >= 0 && n < max)
            idx[n++] = found[k];
    }
    int w = written_store_key(c);
    if (w >= 0 && w != found[0] && w != found[1] && n < max)
        idx[n++] = w;
    return n;
}

int geo_getkeys_radius(struct client *c, int *idx, int max)
{
    return getkeys_store(c, idx, max, 6);
}

int geo_getkeys_radiusbymember(struct client *c, int *idx, int max)
{
    return getkeys_store(c, idx, max, 5);
}

/* Write the first `count` hits to argv[dst] (scores: the geohash, or the
 * distance in the query's unit with STOREDIST), or delete it when there
 * are none.  Replies the count. */
static void store_hits(struct client *c, int dst, struct hits *h, size_t count, int storedist, double conv,
                       const char *event)
{
    if (count == 0) {
        if (db_del(c->db, kslot(c, dst), c->argv[dst], c->argvlen[dst]))
            KEY_MODIFIED(c, dst, NOTIFY_GENERIC, "del");
        reply_int(&c->out, 0);
        return;
    }
    struct zset *zs = zs_new(count);
    size_t maxlen = 0;
    for (size_t i = 0; i < count; i++) {
        const struct geo_point *p = &h->p[i];
        const char *m;
        size_t ml;
        char ib[24];
        zc_member(&h->cur[p->ref], &m, &ml, ib);
        double score = storedist ? p->dist / conv : p->score;
        if (ml > maxlen)
            maxlen = ml;
        /* A member is found once (the cover's cells are distinct); keep
         * the first if that ever failed. */
        if (!zs_find(zs, m, ml))
            zs_add(zs, score, m, ml);
    }
    uint8_t enc;
    void *val = zs_shrink(zs, maxlen, &enc);
    /* The source may be this same key: every hit was read above. */
    db_set(c->db, kslot(c, dst), zset_entry_new(c->argv[dst], c->argvlen[dst], val, enc));
    signal_key_ready(c->db, kslot(c, dst), c->argv[dst], c->argvlen[dst]);
    KEY_MODIFIED(c, dst, NOTIFY_ZSET, event);
    reply_int(&c->out, (long long)count);
}

/* GEORADIUS key lon lat radius unit [options]
 * GEORADIUSBYMEMBER key member radius unit [options]
 * GEOSEARCH key FROMMEMBER m | FROMLONLAT lon lat  BYRADIUS r unit | BYBOX w h unit [options]
 * GEOSEARCHSTORE dst key ... [STOREDIST]
 * Checks come in Redis's order: the key's type, the centre and radius of
 * the GEORADIUS forms, then the options left to right (a FROMMEMBER
 * member is looked up as it is met), then the combinations. */
static void georadius_generic(struct client *c, int src, int flags)
{
    int bad, store = -1, storedist = 0;
    struct entry *e = geo_lookup(c, src, &bad);
    if (bad)
        return;

    struct geo_shape shape;
    memset(&shape, 0, sizeof(shape));
    int base;
    if (flags & GF_COORDS) {
        base = 6;
        shape.type = GEO_SHAPE_CIRCLE;
        if (arg_lonlat(c, 2, shape.xy) < 0 || arg_radius(c, 4, &shape) < 0)
            return;
    } else if (flags & GF_MEMBER) {
        base = 5;
        /* Without the key the arguments are only parsed, to pick the reply. */
        if (e) {
            shape.type = GEO_SHAPE_CIRCLE;
            if (!member_pos(e, c->argv[2], c->argvlen[2], shape.xy)) {
                reply_error(&c->out, ERR_GEO_MEMBER);
                return;
            }
            if (arg_radius(c, 3, &shape) < 0)
                return;
        }
    } else {
        base = 2;
        if (flags & GF_SEARCHSTORE) {
            base = 3;
            store = 1;
        }
    }

    int withdist = 0, withhash = 0, withcoord = 0, any = 0, sort = SORT_NONE;
    int frommember = 0, fromloc = 0, byradius = 0, bybox = 0;
    long long count = 0;
    int search = (flags & GF_SEARCH) != 0;
    int can_store = !(flags & GF_NOSTORE) && !search;
    for (int i = base; i < c->argc; i++) {
        int left = c->argc - i - 1; /* arguments after this one */
        if (arg_is(c, i, "withdist")) {
            withdist = 1;
        } else if (arg_is(c, i, "withhash")) {
            withhash = 1;
        } else if (arg_is(c, i, "withcoord")) {
            withcoord = 1;
        } else if (arg_is(c, i, "any")) {
            any = 1;
        } else if (arg_is(c, i, "asc")) {
            sort = SORT_ASC;
        } else if (arg_is(c, i, "desc")) {
            sort = SORT_DESC;
        } else if (arg_is(c, i, "count") && left >= 1) {
            if (arg_ll(c, i + 1, &count) < 0)
                return;
            if (count <= 0) {
                reply_error(&c->out, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if (arg_is(c, i, "store") && left >= 1 && can_store) {
            store = i + 1;
            storedist = 0;
            i++;
        } else if (arg_is(c, i, "storedist") && left >= 1 && can_store) {
            store = i + 1;
            storedist = 1;
            i++;
        } else if (arg_is(c, i, "storedist") && (flags & GF_SEARCHSTORE)) {
            storedist = 1;
        } else if (arg_is(c, i, "frommember") && left >= 1 && search && !fromloc) {
            if (e && !member_pos(e, c->argv[i + 1], c->argvlen[i + 1], shape.xy)) {
                reply_error(&c->out, ERR_GEO_MEMBER);
                return;
            }
            frommember = 1;
            i++;
        } else if (arg_is(c, i, "fromlonlat") && left >= 2 && search && !frommember) {
            if (arg_lonlat(c, i + 1, shape.xy) < 0)
                return;
            fromloc = 1;
            i += 2;
        } else if (arg_is(c, i, "byradius") && left >= 2 && search && !bybox) {
            if (arg_radius(c, i + 1, &shape) < 0)
                return;
            shape.type = GEO_SHAPE_CIRCLE;
            byradius = 1;
            i += 2;
        } else if (arg_is(c, i, "bybox") && left >= 3 && search && !byradius) {
            if (arg_box(c, i + 1, &shape) < 0)
                return;
            shape.type = GEO_SHAPE_BOX;
            bybox = 1;
            i += 3;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }

    if (store >= 0 && (withdist || withhash || withcoord)) {
        reply_errorf(&c->out, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & GF_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return;
    }
    if (search && !(frommember || fromloc)) {
        reply_errorf(&c->out, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)c->argvlen[0], c->argv[0]);
        return;
    }
    if (search && !(byradius || bybox)) {
        reply_errorf(&c->out, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s",
                     (int)c->argvlen[0], c->argv[0]);
        return;
    }
    if (any && !count) {
        reply_error(&c->out, "ERR the ANY argument requires COUNT argument");
        return;
    }
    if (store >= 0 && !(flags & GF_SEARCHSTORE)) {
        /* The dispatcher locked the keys geo_getkeys_radius names: the
         * store key must be one of them (it always is when parsing got
         * here; this guards the lock, not the grammar). */
        if (written_store_key(c) != store) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    const char *event = search ? "geosearchstore" : "georadiusstore";

    if (!e) {
        if (store >= 0) {
            store_hits(c, store, NULL, 0, 0, 1, event);
        } else {
            reply_array(&c->out, 0);
        }
        return;
    }

    /* COUNT alone means the nearest ones. */
    if (count != 0 && sort == SORT_NONE && !any)
        sort = SORT_ASC;

    struct hits h;
    memset(&h, 0, sizeof(h));
    scan_cover(e, &shape, &h, any ? (size_t)count : 0);

    if (h.n == 0 && store < 0) {
        reply_array(&c->out, 0);
        hits_free(&h);
        return;
    }
    size_t returned = (count == 0 || (unsigned long long)h.n < (unsigned long long)count) ? h.n : (size_t)count;
    if (sort != SORT_NONE)
        geo_sort_points(h.p, h.n, sort == SORT_DESC, returned);

    if (store >= 0) {
        store_hits(c, store, &h, returned, storedist, shape.conversion, event);
        hits_free(&h);
        return;
    }
    int opts = withdist + withhash + withcoord;
    reply_array(&c->out, (long long)returned);
    for (size_t i = 0; i < returned; i++) {
        const struct geo_point *p = &h.p[i];
        if (opts)
            reply_array(&c->out, opts + 1);
        const char *m;
        size_t ml;
        char ib[24];
        zc_member(&h.cur[p->ref], &m, &ml, ib);
        reply_bulk(&c->out, m, ml);
        if (withdist)
            reply_dist(&c->out, p->dist / shape.conversion);
        if (withhash)
            reply_int(&c->out, (long long)p->score);
        if (withcoord) {
            reply_array(&c->out, 2);
            reply_coord(&c->out, p->lon);
            reply_coord(&c->out, p->lat);
        }
    }
    hits_free(&h);
}

void georadius_command(struct client *c)
{
    georadius_generic(c, 1, GF_COORDS);
}

void georadius_ro_command(struct client *c)
{
    georadius_generic(c, 1, GF_COORDS | GF_NOSTORE);
}

void georadiusbymember_command(struct client *c)
{
    georadius_generic(c, 1, GF_MEMBER);
}

void georadiusbymember_ro_command(struct client *c)
{
    georadius_generic(c, 1, GF_MEMBER | GF_NOSTORE);
}

void geosearch_command(struct client *c)
{
    georadius_generic(c, 1, GF_SEARCH);
}

void geosearchstore_command(struct client *c)
{
    georadius_generic(c, 2, GF_SEARCH | GF_SEARCHSTORE);
}
