/* t_set.c - the set commands.
 *
 * The value itself (encodings, conversions, element primitives, inline
 * entries) is types/set.c; this file parses arguments, calls it, replies,
 * propagates and notifies.  A set that becomes empty is deleted.
 *
 * Every handler runs with its keys' slot locks held by the dispatcher, so
 * it may read and write every key it names.  Replies are written straight
 * from the structures (no copies), integers formatted by the encoder. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../types/set.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "t_common.h"

static inline void reply_elem(struct client *c, const struct selem *el)
{
    if (el->s)
        reply_bulk(&c->out, el->s, el->len);
    else
        reply_bulk_ll(&c->out, el->ll);
}

/* End of a write to the set at argv[i] (table index idx from its lookup,
 * or -1 when other keys were added or removed since): a small structure
 * goes back inline (set_attach).  was: set_detach's result when the
 * command started (0: a pointer entry, sized for that).  e may be
 * replaced: not to be used after. */
static void sattach(struct client *c, int i, long idx, struct entry *e, size_t was)
{
    struct entry *ne = set_attach(e, was);
    if (ne && idx >= 0)
        db_replace(c->db, kslot(c, i), idx, ne); /* frees e (and its structure with it when ne is inline) */
    else if (ne)
        db_set(c->db, kslot(c, i), ne);
}

/* ------------------------------------------------------------- helpers --- */
/* The set at argv[i], NULL if absent; *wrong when it is another type (the
 * caller replies WRONGTYPE). flags: LK_* (LK_NOSTATS for write lookups, as
 * Redis counts hits/misses only for reads). */
static struct entry *lookup_set(struct client *c, int i, int flags, int *wrong)
{
    struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], flags);
    *wrong = e && e->type != OBJ_SET;
    return e;
}

/* lookup_set for a read that replies WRONGTYPE itself: *bad is set then
 * (the caller just returns). */
static struct entry *sget_read(struct client *c, int i, int *bad)
{
    struct entry *e = lookup_set(c, i, 0, bad);
    if (*bad)
        reply_error(&c->out, ERR_WRONGTYPE);
    return e;
}

/* Same for a write, with the table index for sattach. */
static struct entry *lookup_set_w(struct client *c, int i, int *wrong, long *idx)
{
    struct entry *e = db_get_idx(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS, idx);
    *wrong = e && e->type != OBJ_SET;
    return e;
}

static int del_key(struct client *c, int i)
{
    return db_del(c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
}

/* The destination of a *STORE went away: "del" if it existed. */
static void del_dst(struct client *c, int i)
{
    if (del_key(c, i))
        KEY_MODIFIED(c, i, NOTIFY_GENERIC, "del");
}

/* Store set o under argv[i] replacing whatever is there; an empty result
 * deletes the key instead (and frees o).  event: the keyspace event of a
 * store.  Returns the stored size. */
static size_t store_set(struct client *c, int i, struct sobj *o, const char *event)
{
    size_t n = sobj_size(o);
    if (n == 0) {
        sobj_free(o->p, o->enc);
        del_dst(c, i);
        return 0;
    }
    db_set(c->db, kslot(c, i), set_entry_new(c->argv[i], c->argvlen[i], o->p, o->enc));
    KEY_MODIFIED(c, i, NOTIFY_SET, event);
    return n;
}

/* ------------------------------------------------------------ commands --- */
void sadd_command(struct client *c)
{
    int wrong;
    size_t was = 0;
    long idx = -1;
    struct entry *e = lookup_set_w(c, 1, &wrong, &idx);
    struct sobj o;
    size_t hint = (size_t)c->argc - 2;
    long long added = 0;

    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (e) {
        was = set_detach(e);
        o = sobj_of(e);
        sobj_maybe_convert(&o, hint);
    } else {
        sobj_create(&o, c->argv[2], c->argvlen[2], hint);
    }
    for (int j = 2; j < c->argc; j++)
        added += sobj_add(&o, c->argv[j], c->argvlen[j]);
    if (e) {
        entry_set_ptr(e, o.p, o.enc);
        sattach(c, 1, idx, e, was);
    } else {
        db_add(c->db, kslot(c, 1), set_entry_new(c->argv[1], c->argvlen[1], o.p, o.enc));
    }
    if (added) {
        KEY_MODIFIED(c, 1, NOTIFY_SET, "sadd");
        prop_dirty_add((unsigned long long)added - 1); /* one change per member added, as Redis */
    }
    reply_int(&c->out, added);
}

void srem_command(struct client *c)
{
    int wrong;
    long idx = -1;
    struct entry *e = lookup_set_w(c, 1, &wrong, &idx);
    long long deleted = 0;

    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = set_detach(e);
    struct sobj o = sobj_of(e);
    for (int j = 2; j < c->argc; j++) {
        if (sobj_remove(&o, c->argv[j], c->argvlen[j])) {
            deleted++;
            if (sobj_size(&o) == 0)
                break;
        }
    }
    entry_set_ptr(e, o.p, o.enc);
    int gone = sobj_size(&o) == 0;
    if (gone)
        del_key(c, 1); /* frees o */
    else
        sattach(c, 1, idx, e, was);
    if (deleted) {
        KEY_MODIFIED(c, 1, NOTIFY_SET, "srem");
        prop_dirty_add((unsigned long long)deleted - 1); /* one change per member removed, as Redis */
        if (gone)
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    }
    reply_int(&c->out, deleted);
}

void smove_command(struct client *c)
{
    int wsrc, wdst;
    struct entry *src = lookup_set(c, 1, LK_NOSTATS, &wsrc);
    struct entry *dst = lookup_set(c, 2, LK_NOSTATS, &wdst);
    const char *m = c->argv[3];
    size_t mlen = c->argvlen[3];

    if (!src) {
        reply_int(&c->out, 0);
        return;
    }
    if (wsrc || wdst) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    struct sobj so = sobj_of(src);
    if (src == dst) {
        reply_int(&c->out, sobj_ismember(&so, m, mlen));
        return;
    }
    if (!sobj_ismember(&so, m, mlen)) {
        reply_int(&c->out, 0);
        return;
    }
    size_t was = set_detach(src);
    so = sobj_of(src);
    sobj_remove(&so, m, mlen);
    entry_set_ptr(src, so.p, so.enc);
    KEY_EVENT(c, 1, NOTIFY_SET, "srem");
    if (sobj_size(&so) == 0) {
        del_key(c, 1);
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    } else {
        sattach(c, 1, -1, src, was);
    }
    struct sobj d;
    int added = 1;
    if (dst) {
        was = set_detach(dst);
        d = sobj_of(dst);
        added = sobj_add(&d, m, mlen);
        entry_set_ptr(dst, d.p, d.enc);
        sattach(c, 2, -1, dst, was);
    } else {
        sobj_create(&d, m, mlen, 1);
        sobj_add(&d, m, mlen);
        db_add(c->db, kslot(c, 2), set_entry_new(c->argv[2], c->argvlen[2], d.p, d.enc));
    }
    KEY_SIGNAL(c, 1);
    if (added)
        KEY_MODIFIED(c, 2, NOTIFY_SET, "sadd");
    reply_int(&c->out, 1);
}

void sismember_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_int(&c->out, sobj_ismember(&o, c->argv[2], c->argvlen[2]));
}

void smismember_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    struct sobj o = {NULL, 0};
    if (e)
        o = sobj_of(e);
    reply_array(&c->out, c->argc - 2);
    for (int j = 2; j < c->argc; j++)
        reply_int(&c->out, e ? sobj_ismember(&o, c->argv[j], c->argvlen[j]) : 0);
}

void scard_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_int(&c->out, (long long)sobj_size(&o));
}

/* Every member of o as a RESP3 set (array in RESP2). */
static void reply_whole_set(struct client *c, const struct sobj *o)
{
    struct siter it;
    struct selem el;
    reply_set(&c->out, (long long)sobj_size(o));
    si_init(&it, o);
    while (si_next(&it, &el))
        reply_elem(c, &el);
}

void smembers_command(struct client *c)
{
    int bad;
    struct entry *e = sget_read(c, 1, &bad);
    if (bad)
        return;
    if (!e) {
        reply_set(&c->out, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_whole_set(c, &o);
}

/* ---------------------------------------------------------------- SPOP --- */
/* SPOP's members are fed as SREM key m1 m2 ... (1024 per command, as
 * Redis; several commands go as one MULTI/EXEC unit). */
struct spop_prop {
    struct client *c;
    int n;
};

static void spop_prop_open(struct spop_prop *p)
{
    prop_op_begin(p->c->db);
    prop_op_str("SREM");
    prop_op_arg(p->c->argv[1], p->c->argvlen[1]);
    p->n = 0;
}

static void spop_prop_begin(struct spop_prop *p, struct client *c)
{
    p->c = c;
    prop_prevent();
    prop_unit_begin();
    spop_prop_open(p);
}

static void spop_prop_add(struct spop_prop *p, const char *s, size_t len)
{
    if (p->n == 1024) {
        prop_op_end();
        spop_prop_open(p);
    }
    prop_op_arg(s, len);
    p->n++;
}

static void spop_prop_add_ll(struct spop_prop *p, long long v)
{
    char buf[24];
    spop_prop_add(p, buf, (size_t)ll_to_str(buf, v));
}

static void spop_prop_end(struct spop_prop *p)
{
    (void)p;
    prop_op_end();
    prop_unit_end();
}

/* A popped member: replied, then fed to the SREM. */
static int spop_emit(void *arg, const struct selem *el)
{
    struct spop_prop *p = arg;
    reply_elem(p->c, el);
    if (el->s)
        spop_prop_add(p, el->s, el->len);
    else
        spop_prop_add_ll(p, el->ll);
    return 0;
}

/* Remove `count` (< size) members chosen uniformly at random from the set
 * of entry e and reply them as a set. */
static void spop_some(struct client *c, struct entry *e, long idx, size_t count)
{
    struct spop_prop pp;
    spop_prop_begin(&pp, c);
    reply_set(&c->out, (long long)count);
    size_t was = set_pop_some(e, count, spop_emit, &pp);
    sattach(c, 1, idx, e, was);
    spop_prop_end(&pp);
}

void spop_command(struct client *c)
{
    int wrong;
    long idx = -1;
    struct entry *e;

    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        long long count;
        if (!str_to_ll(c->argv[2], c->argvlen[2], &count) || count < 0) {
            reply_error(&c->out, "ERR value is out of range, must be positive");
            return;
        }
        e = lookup_set_w(c, 1, &wrong, &idx);
        if (!e) {
            reply_set(&c->out, 0);
            return;
        }
        if (wrong) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        if (count == 0) {
            reply_set(&c->out, 0);
            return;
        }
        struct sobj o = sobj_of(e);
        size_t size = sobj_size(&o);
        KEY_EVENT(c, 1, NOTIFY_SET, "spop");
        if ((unsigned long long)count >= size) {
            reply_whole_set(c, &o);
            del_key(c, 1);
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
            /* The whole set went: DEL, or UNLINK with
             * lazyfree-lazy-server-del, as Redis. */
            prop_prevent();
            prop_op_begin(c->db);
            prop_op_str(__atomic_load_n(&cfg.lazyfree_lazy_server_del, __ATOMIC_RELAXED) ? "UNLINK" : "DEL");
            prop_op_arg(c->argv[1], c->argvlen[1]);
            prop_op_end();
        } else {
            spop_some(c, e, idx, (size_t)count);
        }
        KEY_SIGNAL_ND(c, 1);
        prop_dirty_add((unsigned long long)count >= size ? size : (unsigned long long)count); /* per member, as Redis */
        return;
    }
    e = lookup_set_w(c, 1, &wrong, &idx);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    size_t was = set_detach(e);
    struct sobj o = sobj_of(e);
    struct spop_prop pp;
    spop_prop_begin(&pp, c); /* SREM key member */
    sobj_pop_one(&o, spop_emit, &pp);
    spop_prop_end(&pp);
    entry_set_ptr(e, o.p, o.enc);
    KEY_EVENT(c, 1, NOTIFY_SET, "spop");
    if (sobj_size(&o) == 0) {
        del_key(c, 1);
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "del");
    } else {
        sattach(c, 1, idx, e, was);
    }
    KEY_SIGNAL(c, 1);
}


/* --------------------------------------------------------- SRANDMEMBER --- */
/* A huge negative count (-LLONG_MAX) would build an endless reply: past this
 * much pending output the client is closed instead (as HRANDFIELD does). */
#define SRAND_MAX_REPLY (512ull << 20)

struct srand_out {
    struct client *c;
    unsigned long long left; /* still to reply after this one */
};

static int srand_emit_repeat(void *arg, const struct selem *el)
{
    struct srand_out *so = arg;
    reply_elem(so->c, el);
    so->left--;
    if ((so->left & 1023) == 0 && so->c->out.len > SRAND_MAX_REPLY) {
        so->c->flags |= CF_CLOSE_ASAP;
        return 1;
    }
    return 0;
}

static int srand_emit(void *arg, const struct selem *el)
{
    reply_elem(arg, el);
    return 0;
}

/* count members with repetitions, in random order. */
static void srand_repeat(struct client *c, const struct sobj *o, unsigned long long count)
{
    struct srand_out so = {c, count};
    reply_array(&c->out, (long long)count);
    sobj_random_repeat(o, count, srand_emit_repeat, &so);
}

/* count (< size) distinct members. */
static void srand_distinct(struct client *c, const struct sobj *o, size_t count)
{
    reply_array(&c->out, (long long)count);
    sobj_random_distinct(o, count, srand_emit, c);
}

void srandmember_command(struct client *c)
{
    int wrong;
    struct entry *e;

    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3) {
        long long l;
        unsigned long long count;
        if (arg_ll(c, 2, &l) < 0)
            return;
        if (l == LLONG_MIN) {
            reply_error(&c->out, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            return;
        }
        e = lookup_set(c, 1, 0, &wrong);
        if (!e) {
            reply_array(&c->out, 0);
            return;
        }
        if (wrong) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        count = l < 0 ? (unsigned long long)-l : (unsigned long long)l;
        if (count == 0) {
            reply_array(&c->out, 0);
            return;
        }
        struct sobj o = sobj_of(e);
        if (l < 0 || count == 1) {
            srand_repeat(c, &o, count);
            return;
        }
        size_t size = sobj_size(&o);
        if (count >= size) {
            struct siter it;
            struct selem el;
            reply_array(&c->out, (long long)size);
            si_init(&it, &o);
            while (si_next(&it, &el))
                reply_elem(c, &el);
            return;
        }
        srand_distinct(c, &o, (size_t)count);
        return;
    }
    e = lookup_set(c, 1, 0, &wrong);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    struct sobj o = sobj_of(e);
    struct selem el;
    sobj_random(&o, &el);
    reply_elem(c, &el);
}


/* ---------------------------------------------------------- set algebra --- */
struct sref {
    struct sobj o; /* o.p == NULL: the key does not exist (empty set) */
    size_t n;
};

static int sref_cmp_size(const void *a, const void *b)
{
    size_t x = ((const struct sref *)a)->n, y = ((const struct sref *)b)->n;
    return x < y ? -1 : x > y;
}

static int sref_cmp_rsize(const void *a, const void *b)
{
    size_t x = ((const struct sref *)a)->n, y = ((const struct sref *)b)->n;
    return x < y ? 1 : x > y ? -1 : 0;
}

#define SREF_STACK 16

/* Look up nkeys sets at argv[first..]; read lookups (counted in stats).
 * Returns the array (stack or heap: free with sref_free), or NULL after
 * replying WRONGTYPE. *missing counts absent keys. */
static struct sref *load_sets(struct client *c, int first, int nkeys, struct sref *stack, int *missing)
{
    struct sref *s = nkeys <= SREF_STACK ? stack : hk_malloc(sizeof(*s) * (size_t)nkeys);
    *missing = 0;
    for (int j = 0; j < nkeys; j++) {
        int wrong;
        struct entry *e = lookup_set(c, first + j, 0, &wrong);
        if (wrong) {
            if (s != stack)
                hk_free(s);
            reply_error(&c->out, ERR_WRONGTYPE);
            return NULL;
        }
        if (!e) {
            s[j].o.p = NULL;
            s[j].o.enc = 0;
            s[j].n = 0;
            (*missing)++;
        } else {
            s[j].o = sobj_of(e);
            s[j].n = sobj_size(&s[j].o);
        }
    }
    return s;
}

static void sref_free(struct sref *s, struct sref *stack)
{
    if (s != stack)
        hk_free(s);
}

/* SINTER / SINTERCARD / SINTERSTORE.  dst: argv index of the destination
 * or 0; card: reply the cardinality only, stopping at limit (0 = none). */
static void sinter_generic(struct client *c, int first, int nkeys, int dst, int card, unsigned long long limit)
{
    struct sref stack[SREF_STACK], *s;
    int missing;
    struct siter it;
    struct selem el;

    if (!(s = load_sets(c, first, nkeys, stack, &missing)))
        return;
    if (missing) {
        sref_free(s, stack);
        if (dst) {
            del_dst(c, dst);
            reply_int(&c->out, 0);
        } else if (card) {
            reply_int(&c->out, 0);
        } else {
            reply_set(&c->out, 0);
        }
        return;
    }
    if (nkeys == 1 && !dst && !card) {
        /* SMEMBERS in disguise: the count is known up front. */
        reply_whole_set(c, &s[0].o);
        sref_free(s, stack);
        return;
    }
    qsort(s, (size_t)nkeys, sizeof(*s), sref_cmp_size);

    struct sobj out = {NULL, 0};
    size_t mark = 0;
    unsigned long long n = 0;
    int only_ints = 1;
    if (dst) {
        sobj_empty(&out, s[0].o.enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK);
    } else if (!card) {
        mark = reply_defer(&c->out);
    }
    si_init(&it, &s[0].o);
    while (si_next(&it, &el)) {
        int j;
        for (j = 1; j < nkeys; j++) {
            if (s[j].o.p == s[0].o.p)
                continue;
            if (!sobj_ismember_el(&s[j].o, &el))
                break;
        }
        if (j < nkeys)
            continue;
        if (card) {
            if (++n == limit)
                break;
        } else if (!dst) {
            reply_elem(c, &el);
            n++;
        } else {
            long long v;
            if (el.s && only_ints && !(s[0].o.enc == ENC_HT && str_to_ll(el.s, el.len, &v)))
                only_ints = 0;
            sobj_add_el(&out, &el);
        }
    }
    if (card) {
        reply_int(&c->out, (long long)n);
    } else if (dst) {
        if (only_ints && sobj_size(&out))
            sobj_maybe_to_intset(&out);
        reply_int(&c->out, (long long)store_set(c, dst, &out, "sinterstore"));
    } else {
        reply_defer_set(&c->out, mark, (long long)n);
    }
    sref_free(s, stack);
}

void sinter_command(struct client *c)
{
    sinter_generic(c, 1, c->argc - 1, 0, 0, 0);
}

void sinterstore_command(struct client *c)
{
    sinter_generic(c, 2, c->argc - 2, 1, 0, 0);
}

/* SINTERCARD numkeys: 1 <= numkeys <= argc - 2, strictly parsed. */
static int sintercard_numkeys(struct client *c, long long *n)
{
    return str_to_ll(c->argv[1], c->argvlen[1], n) && *n >= 1;
}

int sintercard_getkeys(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 1, 0, 0);
}

void sintercard_command(struct client *c)
{
    long long nkeys, limit = 0;
    if (!sintercard_numkeys(c, &nkeys)) {
        reply_error(&c->out, "ERR numkeys should be greater than 0");
        return;
    }
    if (nkeys > c->argc - 2) {
        reply_error(&c->out, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)nkeys; j < c->argc; j++) {
        if (arg_is(c, j, "limit") && j + 1 < c->argc) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &limit) || limit < 0) {
                reply_error(&c->out, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, 2, (int)nkeys, 0, 1, (unsigned long long)limit);
}

#define OP_UNION 0
#define OP_DIFF 1

static void sunion_diff_generic(struct client *c, int first, int nkeys, int dst, int op)
{
    struct sref stack[SREF_STACK], *s;
    int missing, sameset = 0, algo = 1;
    struct siter it;
    struct selem el;

    if (!(s = load_sets(c, first, nkeys, stack, &missing)))
        return;
    for (int j = 1; j < nkeys; j++)
        if (s[0].o.p && s[j].o.p == s[0].o.p)
            sameset = 1;
    if (op == OP_DIFF && s[0].o.p && !sameset) {
        /* Algorithm 1 (first set against the others) or 2 (add the first,
         * remove the others), whichever does less work, as Redis picks. */
        long long w1 = 0, w2 = 0;
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            w1 += (long long)s[0].n;
            w2 += (long long)s[j].n;
        }
        w1 /= 2;
        algo = w1 <= w2 ? 1 : 2;
        if (algo == 1 && nkeys > 1)
            qsort(s + 1, (size_t)nkeys - 1, sizeof(*s), sref_cmp_rsize);
    }

    struct sobj out;
    sobj_empty(&out, ENC_INTSET);
    if (op == OP_UNION) {
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            si_init(&it, &s[j].o);
            while (si_next(&it, &el))
                sobj_add_el(&out, &el);
        }
    } else if (s[0].o.p && !sameset && algo == 1) {
        si_init(&it, &s[0].o);
        while (si_next(&it, &el)) {
            int j;
            for (j = 1; j < nkeys; j++) {
                if (!s[j].o.p)
                    continue;
                if (sobj_ismember_el(&s[j].o, &el))
                    break;
            }
            if (j == nkeys)
                sobj_add_el(&out, &el);
        }
    } else if (s[0].o.p && !sameset) {
        for (int j = 0; j < nkeys; j++) {
            if (!s[j].o.p)
                continue;
            si_init(&it, &s[j].o);
            while (si_next(&it, &el)) {
                if (j == 0)
                    sobj_add_el(&out, &el);
                else
                    sobj_remove_el(&out, &el);
            }
            if (sobj_size(&out) == 0)
                break;
        }
    }
    sref_free(s, stack);
    if (dst) {
        reply_int(&c->out, (long long)store_set(c, dst, &out, op == OP_UNION ? "sunionstore" : "sdiffstore"));
    } else {
        reply_whole_set(c, &out);
        obj_free_value(OBJ_SET, out.enc, out.p);
    }
}

void sunion_command(struct client *c)
{
    sunion_diff_generic(c, 1, c->argc - 1, 0, OP_UNION);
}

void sunionstore_command(struct client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, 1, OP_UNION);
}

void sdiff_command(struct client *c)
{
    sunion_diff_generic(c, 1, c->argc - 1, 0, OP_DIFF);
}

void sdiffstore_command(struct client *c)
{
    sunion_diff_generic(c, 2, c->argc - 2, 1, OP_DIFF);
}

/* ---------------------------------------------------------------- SSCAN --- */
/* Redis 7.4's cursor rule: a non-negative 64-bit integer, or anything
 * strtoull takes whole (so "+5" and " 5" pass, "-1" does not). */
static int parse_cursor(const char *s, size_t len, unsigned long long *out)
{
    long long v;
    char buf[64], *end;
    if (str_to_ll(s, len, &v)) {
        if (v < 0)
            return 0;
        *out = (unsigned long long)v;
        return 1;
    }
    if (len == 0 || len >= sizeof(buf) || memchr(s, 0, len))
        return 0;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    *out = strtoull(buf, &end, 10);
    return errno != EINVAL && errno != ERANGE && *end == 0;
}

struct scan_hit {
    const char *s;
    size_t len;
};

struct scan_acc {
    struct scan_hit *v;
    size_t n, cap;
    long long sampled;
    const char *pat;
    size_t plen;
};

static void scan_cb(void *arg, const char *s, size_t len)
{
    struct scan_acc *a = arg;
    a->sampled++;
    if (a->pat && !glob_match(a->pat, a->plen, s, len, 0))
        return;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = hk_realloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n].s = s;
    a->v[a->n++].len = len;
}

void sscan_command(struct client *c)
{
    unsigned long long cursor;
    long long count = 10;
    const char *pat = NULL;
    size_t plen = 0;
    int wrong;

    if (!parse_cursor(c->argv[2], c->argvlen[2], &cursor)) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    struct entry *e = lookup_set(c, 1, 0, &wrong);
    if (!e) {
        reply_scan_empty(c);
        return;
    }
    if (wrong) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (scan_opts(c, &count, &pat, &plen, NULL) < 0)
        return;

    struct sobj o = sobj_of(e);
    if (o.enc != ENC_HT) {
        /* Small encodings: everything at once, cursor 0. */
        struct siter it;
        struct selem el;
        char buf[24];
        long long n = 0;
        reply_array(&c->out, 2);
        reply_bulk(&c->out, "0", 1);
        size_t mark = reply_defer(&c->out);
        si_init(&it, &o);
        while (si_next(&it, &el)) {
            size_t len;
            const char *s = selem_str(&el, buf, &len);
            if (pat && !glob_match(pat, plen, s, len, 0))
                continue;
            reply_bulk(&c->out, s, len);
            n++;
        }
        reply_defer_array(&c->out, mark, n);
        return;
    }
    struct scan_acc acc = {NULL, 0, 0, 0, pat, plen};
    long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = sobj_ht_scan(&o, cursor, scan_cb, &acc);
    } while (cursor && maxiter-- && acc.sampled < count);
    char cbuf[24];
    reply_array(&c->out, 2);
    reply_bulk(&c->out, cbuf, (size_t)ull_to_str(cbuf, cursor));
    reply_array(&c->out, (long long)acc.n);
    for (size_t i = 0; i < acc.n; i++)
        reply_bulk(&c->out, acc.v[i].s, acc.v[i].len);
    hk_free(acc.v);
}

