/* t_sort.c - SORT and SORT_RO.
 *
 * SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
 *      [ALPHA] [STORE destination]
 * sorts a list, set or sorted set by its elements' numeric values (or
 * byte order with ALPHA), or by values looked up through the BY pattern
 * (the first '*' replaced by the element; "key->field" reads a hash
 * field); GET patterns reply looked-up values instead of the elements
 * ("#" is the element).  BY without '*' means "do not sort" (native order
 * for lists and sorted sets).  STORE writes the result as a list.
 *
 * Locking.  The dispatcher holds the slots of the declared keys: the key to
 * sort and the STORE destination (sort_getkeys, Redis's rule).  Keys made
 * from BY/GET patterns are not declared (they depend on the data), so each
 * lookup takes its slot lock around that one lookup, and copies what it
 * needs before unlocking.  Deadlock freedom: every thread takes slot locks
 * in ascending order, and a thread only ever *waits* for a lock greater
 * than every lock it holds.  A pattern slot above all our held slots is
 * therefore taken with a plain spin_lock (released right after); one below
 * is only tried (spin_trylock, a short bounded spin).  If it stays busy,
 * its holder may be waiting for one of our locks, so we must not wait:
 * the attempt is abandoned (nothing has been written yet except reply
 * bytes, which are dropped), every lock we hold is released, and the
 * declared slots plus every slot that conflicted are locked again, all in
 * ascending order, before the command starts over.  Those slots are then
 * ours for the rest of the command, so each retry makes progress; after a
 * few retries the command simply takes every slot lock (db_lock_all), after
 * which it cannot conflict.  The result is still one atomic SORT: the
 * final attempt holds the declared keys from start to end. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../cluster/cluster.h"
#include "acl.h"
#include "blocking.h"
#include "../db/object.h"
#include "commands.h"
#include "multi.h"
#include "notify.h"
#include "../persist/prop.h"
#include "../types/hash.h"
#include "../types/list.h"
#include "../types/set.h"
#include "../types/zset.h"

/* ------------------------------------------------------------- arena --- */
/* Stable storage for copied strings (elements, BY values, GET values). */
struct ablock {
    struct ablock *next;
    size_t size, used;
    char data[];
};

struct arena {
    struct ablock *head;
};

static const char *arena_put(struct arena *a, const char *s, size_t n)
{
    struct ablock *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > 16384 ? n : 16384;
        b = hk_malloc(sizeof(*b) + sz);
        b->size = sz;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    char *p = b->data + b->used;
    if (n)
        memcpy(p, s, n);
    b->used += n;
    return p;
}

static void arena_free(struct arena *a)
{
    while (a->head) {
        struct ablock *n = a->head->next;
        hk_free(a->head);
        a->head = n;
    }
}

/* ----------------------------------------------------------- options --- */
#define SORT_STACK_GETS 16

struct sort_opts {
    int desc, alpha, dontsort;
    int by;            /* argv index of the BY pattern, 0 = none */
    int store;         /* argv index of the STORE key, 0 = none */
    long long lstart, lcount;
    int ngets;
    int *gets;         /* argv indexes of GET patterns */
    int gets_stack[SORT_STACK_GETS];
};

static void opts_free(struct sort_opts *o)
{
    if (o->gets != o->gets_stack)
        hk_free(o->gets);
}

/* The one slot every key a pattern can form hashes to, or -1 (Redis's
 * patternHashSlot): a wildcard or an escape before a non-empty {tag}
 * means any slot; no tag, the whole pattern is the key. */
static int pattern_slot(const char *p, size_t n)
{
    long s = -1; /* index of the first '{' */
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\')
            return -1;
        if (s == -1 && p[i] == '{')
            s = (long)i;
        else if (s >= 0 && p[i] == '}' && i == (size_t)s + 1)
            s = -2; /* "{}": the whole key is hashed */
        else if (s >= 0 && p[i] == '}')
            return crc16(p + s + 1, i - (size_t)s - 1) & 0x3FFF;
    }
    return crc16(p, n) & 0x3FFF;
}

/* Cluster mode: a BY/GET pattern must form keys of the sorted key's slot. */
static int pattern_in_slot(struct client *c, int j)
{
    return !cluster_on || pattern_slot(c->argv[j], c->argvlen[j]) == (int)key_slot(c->argv[1], c->argvlen[1]);
}

/* Parse options from argv[2]; replies and returns -1 on error. */
static int parse_opts(struct client *c, int readonly, struct sort_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->lcount = -1;
    o->gets = o->gets_stack;
    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (arg_is(c, j, "asc")) {
            o->desc = 0;
        } else if (arg_is(c, j, "desc")) {
            o->desc = 1;
        } else if (arg_is(c, j, "alpha")) {
            o->alpha = 1;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (arg_ll(c, j + 1, &o->lstart) < 0 || arg_ll(c, j + 2, &o->lcount) < 0)
                return -1;
            j += 2;
        } else if (!readonly && arg_is(c, j, "store") && left >= 1) {
            o->store = ++j;
        } else if (arg_is(c, j, "by") && left >= 1) {
            o->by = ++j;
            /* A pattern without '*' is constant: nothing to sort by. */
            if (!memchr(c->argv[j], '*', c->argvlen[j])) {
                o->dontsort = 1;
            } else if (!pattern_in_slot(c, j)) {
                reply_error(&c->out, "ERR BY option of SORT denied in Cluster mode when keys formed by the pattern "
                                     "may be in different slots.");
                return -1;
            } else if (!c->acl_fast && !acl_sort_patterns_allowed(c)) {
                /* a pattern reaches any key: only with full read access */
                reply_error(&c->out, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
        } else if (arg_is(c, j, "get") && left >= 1) {
            if (memchr(c->argv[j + 1], '*', c->argvlen[j + 1]) && !pattern_in_slot(c, j + 1)) {
                reply_error(&c->out, "ERR GET option of SORT denied in Cluster mode when keys formed by the pattern "
                                     "may be in different slots.");
                return -1;
            }
            if (!c->acl_fast && !acl_sort_patterns_allowed(c)) {
                reply_error(&c->out, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
            if (o->ngets == SORT_STACK_GETS && o->gets == o->gets_stack) {
                o->gets = hk_malloc(sizeof(int) * (size_t)c->argc);
                memcpy(o->gets, o->gets_stack, sizeof(o->gets_stack));
            }
            o->gets[o->ngets++] = ++j;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

/* Redis's key rule for SORT: argv[1], then the last "STORE x" found while
 * skipping LIMIT's two arguments and GET's/BY's one. */
int sort_getkeys(struct client *c, int *idx, int max)
{
    int n = 0, store = 0;
    if (max < 1 || c->argc < 2)
        return 0;
    idx[n++] = 1;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "limit"))
            i += 2;
        else if (arg_is(c, i, "get") || arg_is(c, i, "by"))
            i += 1;
        else if (arg_is(c, i, "store") && i + 1 < c->argc)
            store = i + 1;
    }
    if (store && n < max)
        idx[n++] = store;
    return n;
}

int sort_ro_getkeys(struct client *c, int *idx, int max)
{
    if (max < 1 || c->argc < 2)
        return 0;
    idx[0] = 1;
    return 1;
}

/* ------------------------------------------------------------- locks --- */
#define SORT_MAX_EXTRA 8

struct sort_locks {
    unsigned held[2];  /* declared slots the dispatcher locked (distinct) */
    int nheld;
    unsigned extra[SORT_MAX_EXTRA]; /* slots we locked for the whole command */
    int nextra;
    int all;           /* we hold every slot lock */
    unsigned max;      /* greatest slot held */
    unsigned conflict; /* the slot that made the attempt fail */
};

static int slot_held(const struct sort_locks *L, unsigned s)
{
    if (L->all)
        return 1;
    for (int i = 0; i < L->nheld; i++)
        if (L->held[i] == s)
            return 1;
    for (int i = 0; i < L->nextra; i++)
        if (L->extra[i] == s)
            return 1;
    return 0;
}


/* Release everything, then lock the declared slots plus the extras plus
 * `add` in ascending order (or every slot once the extras run out). */
static void relock(struct sort_locks *L, unsigned add)
{
    unsigned all[2 + SORT_MAX_EXTRA];
    int n = 0;
    for (int i = L->nextra - 1; i >= 0; i--)
        spin_unlock(&ks.locks[L->extra[i]]);
    for (int i = L->nheld - 1; i >= 0; i--)
        spin_unlock(&ks.locks[L->held[i]]);
    if (L->nextra == SORT_MAX_EXTRA) {
        L->nextra = 0;
        L->all = 1;
        L->max = NSLOTS - 1;
        db_lock_all();
        return;
    }
    L->extra[L->nextra++] = add;
    for (int i = 0; i < L->nheld; i++)
        all[n++] = L->held[i];
    for (int i = 0; i < L->nextra; i++)
        all[n++] = L->extra[i];
    db_lock_slots(all, n); /* sorts; gives way to a lock-yield request */
    L->max = all[n - 1];
}

/* At the end: keep only the declared slots (the dispatcher unlocks them). */
static void release_extras(struct sort_locks *L)
{
    if (L->all) {
        for (int s = NSLOTS - 1; s >= 0; s--) {
            int keep = 0;
            for (int i = 0; i < L->nheld; i++)
                keep |= L->held[i] == (unsigned)s;
            if (!keep)
                spin_unlock(&ks.locks[s]);
        }
        return;
    }
    for (int i = L->nextra - 1; i >= 0; i--)
        spin_unlock(&ks.locks[L->extra[i]]);
}

/* Take the lock of an undeclared slot for one lookup: 1 locked, 0 busy
 * (the attempt must restart: L->conflict is set). */
static int lock_pattern_slot(struct sort_locks *L, unsigned s)
{
    if (s > L->max) {
        /* Safe to wait, unless a script waiting out of order asked us
         * to give way (it may hold s and want one of ours): retry. */
        if (db_lock_or_yield(s) == 0)
            return 1;
        L->conflict = s;
        return 0;
    }
#ifdef HK_SORT_FORCE_CONFLICTS
    /* Test builds: pretend a third of these slots are busy, so the retry
     * path runs (EXTRA_CFLAGS=-DHK_SORT_FORCE_CONFLICTS). */
    if (rand64() % 3 == 0) {
        L->conflict = s;
        return 0;
    }
#endif
    for (int i = 0; i < 200; i++) {
        if (spin_trylock(&ks.locks[s]))
            return 1;
        __builtin_ia32_pause();
    }
    L->conflict = s;
    return 0;
}

/* ---------------------------------------------------------- the sort --- */
struct sitem {
    const char *s;     /* the element */
    size_t len;
    double score;
    const char *cmp;   /* ALPHA + BY: the value sorted by (NULL: none) */
    size_t cmplen;
};

struct sctx {
    struct client *c;
    struct sort_opts *o;
    struct sort_locks *L;
    struct arena ar;
    struct sitem *v;
    size_t n, cap;
    /* element loading window (list/zset native order) */
    long long idx, lo, hi;
    char *kbuf, *vbuf;
    size_t kcap, vcap;
    char ibuf[32];
    int store_mode;
};

static char *grow(char **buf, size_t *cap, size_t need)
{
    if (*cap < need) {
        *cap = need < 64 ? 64 : need;
        *buf = hk_realloc(*buf, *cap);
    }
    return *buf;
}

static void push_item(struct sctx *x, const char *s, size_t len)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 16;
        x->v = hk_realloc(x->v, x->cap * sizeof(*x->v));
    }
    struct sitem *it = &x->v[x->n++];
    it->s = arena_put(&x->ar, s, len);
    it->len = len;
    it->score = 0;
    it->cmp = NULL;
    it->cmplen = 0;
}

/* Visitors: take elements whose index is in [lo, hi]. */
static int take_elem(void *arg, const char *s, size_t len)
{
    struct sctx *x = arg;
    long long i = x->idx++;
    if (i < x->lo)
        return 0;
    push_item(x, s, len);
    return i >= x->hi;
}

static int take_zelem(void *arg, const char *s, size_t len, double score)
{
    (void)score;
    return take_elem(arg, s, len);
}

/* The value a pattern gives for element el: 1 with (*v, *vlen) valid until
 * the next call, 0 when there is none, -1 when the attempt must restart. */
static int pattern_value(struct sctx *x, int pi, const char *el, size_t elen, const char **v, size_t *vlen)
{
    struct client *c = x->c;
    const char *pat = c->argv[pi];
    size_t plen = c->argvlen[pi];
    if (plen == 1 && pat[0] == '#') {
        *v = el;
        *vlen = elen;
        return 1;
    }
    /* Patterns are C strings to Redis: they end at a NUL byte. */
    size_t clen = strnlen(pat, plen);
    const char *star = memchr(pat, '*', clen);
    if (!star)
        return 0;
    const char *field = NULL;
    size_t flen = 0;
    for (const char *f = star + 1; f + 1 < pat + clen; f++) {
        if (f[0] == '-' && f[1] == '>') {
            if (f + 2 < pat + clen) {
                field = f + 2;
                flen = plen - (size_t)(field - pat);
            }
            break;
        }
    }
    size_t pre = (size_t)(star - pat);
    size_t post = plen - pre - 1 - (field ? flen + 2 : 0);
    size_t klen = pre + elen + post;
    char *k = grow(&x->kbuf, &x->kcap, klen);
    memcpy(k, pat, pre);
    memcpy(k + pre, el, elen);
    memcpy(k + pre + elen, star + 1, post);

    unsigned slot = key_slot(k, klen);
    int mine = !slot_held(x->L, slot);
    if (mine && lockctx_active()) {
        /* Inside EXEC or a script: the context takes (and keeps) it. */
        lockctx_ensure(slot);
        mine = 0;
    }
    if (mine && !lock_pattern_slot(x->L, slot))
        return -1;
    int found = 0;
    struct entry *e = db_get(c->db, slot, k, klen, 0);
    if (e && field) {
        if (e->type == OBJ_HASH)
            found = hash_get_field(e, field, flen, v, vlen, x->ibuf);
    } else if (e && e->type == OBJ_STRING) {
        *v = entry_val(e);
        *vlen = entry_vlen(e);
        found = 1;
    }
    if (mine) {
        /* The entry is only ours while the lock is held: copy. */
        if (found) {
            char *b = grow(&x->vbuf, &x->vcap, *vlen + 1);
            memcpy(b, *v, *vlen);
            *v = b;
        }
        spin_unlock(&ks.locks[slot]);
    }
    return found;
}

/* strtod over the whole string, as Redis checks it: trailing garbage,
 * overflow/underflow and NaN are errors ("" is 0). */
static int to_score(const char *s, size_t len, double *out)
{
    char stack[64], *buf = len < sizeof(stack) ? stack : hk_malloc(len + 1), *end;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    *out = strtod(buf, &end);
    int ok = *end == 0 && errno != ERANGE && !isnan(*out);
    if (buf != stack)
        hk_free(buf);
    return ok;
}

/* Binary order (memcmp, then length) and C-string collation order (bytes
 * up to the first NUL: Redis uses strcoll in the C locale). */
static int cmp_binary(const char *a, size_t al, const char *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    if (r)
        return r;
    return al < bl ? -1 : al > bl;
}

static int cmp_coll(const char *a, size_t al, const char *b, size_t bl)
{
    return cmp_binary(a, strnlen(a, al), b, strnlen(b, bl));
}

struct sort_cmp_ctx {
    int alpha, by, store, desc;
};

static int item_cmp(const struct sitem *a, const struct sitem *b, const struct sort_cmp_ctx *k)
{
    int r;
    if (!k->alpha) {
        if (a->score > b->score)
            r = 1;
        else if (a->score < b->score)
            r = -1;
        else
            r = cmp_binary(a->s, a->len, b->s, b->len);
    } else if (k->by) {
        if (!a->cmp || !b->cmp)
            r = a->cmp == b->cmp ? 0 : !a->cmp ? -1 : 1;
        else
            r = k->store ? cmp_binary(a->cmp, a->cmplen, b->cmp, b->cmplen) : cmp_coll(a->cmp, a->cmplen, b->cmp, b->cmplen);
    } else {
        r = k->store ? cmp_binary(a->s, a->len, b->s, b->len) : cmp_coll(a->s, a->len, b->s, b->len);
    }
    return k->desc ? -r : r;
}

/* Stable merge sort of v[0..n) using tmp[0..n). */
static void merge_sort(struct sitem *v, struct sitem *tmp, size_t n, const struct sort_cmp_ctx *k)
{
    if (n < 2)
        return;
    if (n <= 8) {
        for (size_t i = 1; i < n; i++) {
            struct sitem t = v[i];
            size_t j = i;
            while (j > 0 && item_cmp(&v[j - 1], &t, k) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = t;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(v, tmp, h, k);
    merge_sort(v + h, tmp + h, n - h, k);
    if (item_cmp(&v[h - 1], &v[h], k) <= 0)
        return;
    memcpy(tmp, v, n * sizeof(*v));
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        v[o++] = item_cmp(&tmp[j], &tmp[i], k) < 0 ? tmp[j++] : tmp[i++];
    while (i < h)
        v[o++] = tmp[i++];
    while (j < n)
        v[o++] = tmp[j++];
}

static void sctx_reset(struct sctx *x)
{
    arena_free(&x->ar);
    x->n = 0;
}

/* One attempt: 0 done (replied), -1 restart (locks must be redone). */
static int sort_attempt(struct sctx *x)
{
    struct client *c = x->c;
    struct sort_opts *o = x->o;
    int dontsort = o->dontsort, alpha = o->alpha, by = o->by;
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    long long vlen, start, end, count;

    if (e && e->type != OBJ_SET && e->type != OBJ_LIST && e->type != OBJ_ZSET) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return 0;
    }
    /* A set has no native order: "no sort" + STORE (or inside a script,
     * as Redis does) must still give a reproducible result, so it sorts by
     * the elements' bytes. */
    if (dontsort && e && e->type == OBJ_SET && (o->store || (c->flags & CF_SCRIPT))) {
        dontsort = 0;
        alpha = 1;
        by = 0;
    }
    vlen = e ? (long long)obj_len(e) : 0;
    start = o->lstart < 0 ? 0 : o->lstart > vlen ? vlen : o->lstart;
    count = o->lcount < -1 ? -1 : o->lcount > vlen ? vlen : o->lcount;
    end = count < 0 ? vlen - 1 : start + count - 1;
    if (start >= vlen) {
        start = vlen - 1;
        end = vlen - 2;
    }
    if (end >= vlen)
        end = vlen - 1;

    /* Load the elements. */
    x->idx = 0;
    x->lo = 0;
    x->hi = vlen - 1;
    if (e && dontsort && (e->type == OBJ_LIST || e->type == OBJ_ZSET)) {
        /* Native order (reversed for DESC), only the LIMIT range. */
        if (end >= start) {
            if (e->type == OBJ_ZSET) {
                x->lo = start;
                x->hi = end;
                zset_visit(e, o->desc, take_zelem, x);
            } else if (!o->desc) {
                x->lo = start;
                x->hi = end;
                list_visit(e, take_elem, x);
            } else {
                x->lo = vlen - 1 - end;
                x->hi = vlen - 1 - start;
                list_visit(e, take_elem, x);
                for (size_t i = 0, j = x->n ? x->n - 1 : 0; i < j; i++, j--) {
                    struct sitem t = x->v[i];
                    x->v[i] = x->v[j];
                    x->v[j] = t;
                }
            }
            end -= start;
            start = 0;
        }
    } else if (e) {
        if (e->type == OBJ_LIST)
            list_visit(e, take_elem, x);
        else if (e->type == OBJ_SET)
            set_visit(e, take_elem, x);
        else
            zset_visit(e, 0, take_zelem, x);
    }

    int conv_error = 0;
    if (!dontsort && x->n) {
        for (size_t j = 0; j < x->n; j++) {
            struct sitem *it = &x->v[j];
            const char *val = it->s;
            size_t vl = it->len;
            if (by) {
                int r = pattern_value(x, by, it->s, it->len, &val, &vl);
                if (r < 0)
                    return -1;
                if (r == 0)
                    continue;
            }
            if (alpha) {
                if (by) {
                    it->cmp = arena_put(&x->ar, val, vl);
                    it->cmplen = vl;
                }
            } else if (!to_score(val, vl, &it->score)) {
                conv_error = 1;
            }
        }
        struct sort_cmp_ctx k = {alpha, by != 0, o->store != 0, o->desc};
        struct sitem *tmp = hk_malloc(x->n * sizeof(*tmp));
        merge_sort(x->v, tmp, x->n, &k);
        hk_free(tmp);
    }

    long long outlen = (o->ngets ? o->ngets : 1) * (end - start + 1);
    if (conv_error) {
        reply_error(&c->out, "ERR One or more scores can't be converted into double");
        return 0;
    }
    if (!o->store) {
        reply_array(&c->out, outlen);
        for (long long j = start; j <= end; j++) {
            struct sitem *it = &x->v[j];
            if (!o->ngets)
                reply_bulk(&c->out, it->s, it->len);
            for (int g = 0; g < o->ngets; g++) {
                const char *val;
                size_t vl;
                int r = pattern_value(x, o->gets[g], it->s, it->len, &val, &vl);
                if (r < 0)
                    return -1;
                if (r)
                    reply_bulk(&c->out, val, vl);
                else
                    reply_null(&c->out);
            }
        }
        return 0;
    }

    /* STORE: the result becomes a list (missing GET values are ""). */
    const char **ss = NULL;
    size_t *ll = NULL, k = 0;
    if (outlen > 0) {
        ss = hk_malloc(sizeof(*ss) * (size_t)outlen);
        ll = hk_malloc(sizeof(*ll) * (size_t)outlen);
    }
    for (long long j = start; j <= end; j++) {
        struct sitem *it = &x->v[j];
        if (!o->ngets) {
            ss[k] = it->s;
            ll[k++] = it->len;
        }
        for (int g = 0; g < o->ngets; g++) {
            const char *val;
            size_t vl;
            int r = pattern_value(x, o->gets[g], it->s, it->len, &val, &vl);
            if (r < 0) {
                hk_free(ss);
                hk_free(ll);
                return -1;
            }
            if (!r) {
                val = "";
                vl = 0;
            }
            ss[k] = arena_put(&x->ar, val, vl);
            ll[k++] = vl;
        }
    }
    unsigned dslot = key_slot(c->argv[o->store], c->argvlen[o->store]);
    if (outlen > 0) {
        uint8_t enc;
        void *p = list_build(ss, ll, (size_t)outlen, &enc);
        struct entry *ne = entry_new_obj(OBJ_LIST, enc, c->argv[o->store], c->argvlen[o->store], p, -1);
        db_set(c->db, dslot, ne);
        /* A client blocked on the destination (BLPOP...) may be served. */
        signal_key_ready(c->db, dslot, c->argv[o->store], c->argvlen[o->store]);
        signal_modified_key(c, c->db, dslot, c->argv[o->store], c->argvlen[o->store]);
        prop_dirty_add((unsigned long long)outlen - 1); /* one change per element stored, as Redis */
        notify_keyspace_event(NOTIFY_LIST, "sortstore", c->argv[o->store], c->argvlen[o->store], c->db);
    } else if (db_del(c->db, dslot, c->argv[o->store], c->argvlen[o->store])) {
        signal_modified_key(c, c->db, dslot, c->argv[o->store], c->argvlen[o->store]);
        notify_keyspace_event(NOTIFY_GENERIC, "del", c->argv[o->store], c->argvlen[o->store], c->db);
    }
    hk_free(ss);
    hk_free(ll);
    reply_int(&c->out, outlen > 0 ? outlen : 0);
    return 0;
}

static void sort_generic(struct client *c, int readonly)
{
    struct sort_opts o;
    struct sort_locks L;
    int idx[2], nk;

    if (parse_opts(c, readonly, &o) < 0) {
        opts_free(&o);
        return;
    }
    /* The slots the dispatcher holds: those of the declared keys. */
    memset(&L, 0, sizeof(L));
    nk = readonly ? sort_ro_getkeys(c, idx, 2) : sort_getkeys(c, idx, 2);
    for (int i = 0; i < nk; i++) {
        unsigned s = kslot(c, idx[i]);
        if (L.nheld == 0 || L.held[0] != s)
            L.held[L.nheld++] = s;
        if (s > L.max)
            L.max = s;
    }
    /* The STORE key the options name is normally the declared one; if
     * an odd argument list makes them differ, lock it like an extra. */
    if (o.store) {
        unsigned s = key_slot(c->argv[o.store], c->argvlen[o.store]);
        if (!slot_held(&L, s)) {
            if (lockctx_active())
                lockctx_ensure(s);
            else
                relock(&L, s);
        }
    }

    struct sctx x;
    memset(&x, 0, sizeof(x));
    x.c = c;
    x.o = &o;
    x.L = &L;
    size_t mark = c->out.len;
    while (sort_attempt(&x) < 0) {
        /* Drop what this attempt replied, then lock the busy slot too. */
        c->out.len = mark;
        sctx_reset(&x);
        relock(&L, L.conflict);
    }
    release_extras(&L);
    arena_free(&x.ar);
    hk_free(x.v);
    hk_free(x.kbuf);
    hk_free(x.vbuf);
    opts_free(&o);
}

void sort_command(struct client *c)
{
    sort_generic(c, 0);
}

void sort_ro_command(struct client *c)
{
    sort_generic(c, 1);
}
