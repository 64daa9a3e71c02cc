/* types/stream.h - the STREAM value: a struct stream (ds/stream.h: the
 * entries) whose `cgroups` points at a struct cgroups (below) once a
 * consumer group exists.  Encoding ENC_STREAM ("stream"); the key's entry
 * holds a pointer to the struct stream, never an inline value.
 *
 * Consumer groups: each group has a name, a last delivered ID, an
 * entries_read counter (-1 = unknown), a pending entries list (PEL) and its
 * consumers; each consumer has its own PEL.  A PEL is an array of pointers
 * to struct nack sorted by ID (binary search; XREADGROUP appends at the
 * tail, XACK/XCLAIM move entries); the group's PEL owns the nacks, a
 * consumer's PEL points at the same ones.  Groups and consumers are arrays
 * sorted by name in byte order, so XINFO lists them in Redis's (rax) order.
 *
 * Users: the command handlers (cmd/t_stream.c), the RDB and AOF code
 * (persist/rdb_stream.c, persist/aof.c) and the keyspace through
 * stream_type_ops (registered by types_init(), types.h).  Nothing here replies, propagates or
 * sends keyspace events: the callers do, in their order.  Not thread-safe:
 * the caller holds the key's slot lock. */
#ifndef HK_TYPES_STREAM_H
#define HK_TYPES_STREAM_H

#include <stddef.h>
#include <string.h>

#include "../base/mem.h"
#include "../ds/stream.h"

#define ENTRIES_READ_INVALID (-1LL)

struct consumer;
struct nack {
    struct stream_id id;
    long long delivery_time;
    unsigned long long delivery_count;
    struct consumer *consumer;
};

struct pel {
    struct nack **v;
    size_t n, cap;
};

struct consumer {
    long long seen_time;   /* its last XREADGROUP / XCLAIM / XAUTOCLAIM (ms) */
    long long active_time; /* its last read or claim that got entries; -1: none yet (Redis 7.2) */
    struct pel pel;
    size_t nlen;
    char name[];
};

struct cgroup {
    struct stream_id last_id;
    long long entries_read;
    struct pel pel;
    struct consumer **cons;
    size_t ncons, ccap;
    size_t nlen;
    char name[];
};

struct cgroups {
    struct cgroup **v;
    size_t n, cap;
};

/* ------------------------------------------------------------------ PELs ---
 * Called per delivered / acknowledged entry, hence inline. */

/* Index of the first nack with ID >= *id (*found when equal). */
static inline size_t pel_search(const struct pel *p, const struct stream_id *id, int *found)
{
    size_t lo = 0, hi = p->n;
    *found = 0;
    /* Fast path: past the tail (new deliveries). */
    if (p->n && sid_cmp(&p->v[p->n - 1]->id, id) < 0)
        return p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = sid_cmp(&p->v[mid]->id, id);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline struct nack *pel_find(const struct pel *p, const struct stream_id *id)
{
    int found;
    size_t i = pel_search(p, id, &found);
    return found ? p->v[i] : NULL;
}

/* Insert n at index i (the caller keeps the ID order). */
static inline void pel_insert_at(struct pel *p, size_t i, struct nack *n)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->v = hk_realloc(p->v, sizeof(*p->v) * p->cap);
    }
    memmove(&p->v[i + 1], &p->v[i], sizeof(*p->v) * (p->n - i));
    p->v[i] = n;
    p->n++;
}

/* Insert n in ID order unless its ID is there already. */
static inline void pel_add(struct pel *p, struct nack *n)
{
    int found;
    size_t i = pel_search(p, &n->id, &found);
    if (!found)
        pel_insert_at(p, i, n);
}

/* Remove the entry with ID *id (if any); the nack itself stays. */
void pel_remove(struct pel *p, const struct stream_id *id);

/* ------------------------------------------------- groups and consumers --- */
/* Group / consumer by name: NULL when missing; *pos (when not NULL) gets
 * its index, or where it would go. */
struct cgroup *cg_find(const struct stream *s, const char *name, size_t nlen, size_t *pos);
struct consumer *consumer_find(const struct cgroup *g, const char *name, size_t nlen, size_t *pos);
/* A new group / consumer, kept in name order; NULL when the name exists. */
struct cgroup *cg_create(struct stream *s, const char *name, size_t nlen, const struct stream_id *id,
                         long long entries_read);
struct consumer *consumer_create(struct cgroup *g, const char *name, size_t nlen, long long now);
/* Free group number pos (cg_find's *pos) with its consumers and nacks. */
void cg_destroy(struct stream *s, size_t pos);
/* Remove consumer cn and its pending entries from the group. */
void consumer_delete(struct cgroup *g, struct consumer *cn);

/* ----------------------------------------------------------------- nacks --- */
/* A new nack for *id, delivered once at now, owned by no consumer, put at
 * index gi of g's PEL (pel_search's answer: XCLAIM FORCE). */
struct nack *nack_create(struct cgroup *g, size_t gi, const struct stream_id *id, long long now);
/* Give nk to consumer cn (moving it between consumer PELs). */
static inline void nack_move(struct nack *nk, struct consumer *cn)
{
    if (nk->consumer == cn)
        return;
    if (nk->consumer)
        pel_remove(&nk->consumer->pel, &nk->id);
    nk->consumer = cn;
    pel_add(&cn->pel, nk);
}
/* Remove nk from the group's and its consumer's PELs and free it. */
void nack_drop(struct cgroup *g, struct nack *nk);
/* XACK of one ID: 1 when it was pending (and is dropped now). */
static inline int cg_ack(struct cgroup *g, const struct stream_id *id)
{
    struct nack *nk = pel_find(&g->pel, id);
    if (!nk)
        return 0;
    nack_drop(g, nk);
    return 1;
}

/* ------------------------------------------------------- group counters --- */
/* Redis's logical read counter of an ID (streamEstimateDistanceFromFirstEverEntry):
 * ENTRIES_READ_INVALID when it cannot tell. */
long long estimate_distance(const struct stream *s, const struct stream_id *id);

/* A delivery to group g of the entry with ID *id (ascending): past the
 * group's last ID it moves the last ID and entries_read on. */
static inline void cg_advance(const struct stream *s, struct cgroup *g, const struct stream_id *id)
{
    if (sid_cmp(id, &g->last_id) <= 0)
        return;
    if (g->entries_read != ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, id, NULL))
        g->entries_read++;
    else if (s->entries_added)
        g->entries_read = estimate_distance(s, id);
    g->last_id = *id;
}

/* The PEL side of delivering *id to consumer cn of group g at now (not
 * NOACK): a new nack, or the pending one (XGROUP SETID moved the group
 * back) given to cn; either way delivered once, at now.  Returns it. */
static inline struct nack *cg_deliver(struct cgroup *g, struct consumer *cn, const struct stream_id *id, long long now)
{
    int found;
    size_t gi = pel_search(&g->pel, id, &found);
    struct nack *nk;
    if (!found) {
        nk = hk_malloc(sizeof(*nk));
        nk->id = *id;
        nk->delivery_time = now;
        nk->delivery_count = 1;
        nk->consumer = cn;
        pel_insert_at(&g->pel, gi, nk);
        pel_add(&cn->pel, nk);
    } else {
        nk = g->pel.v[gi];
        nack_move(nk, cn);
        nk->delivery_time = now;
        nk->delivery_count = 1;
    }
    return nk;
}

/* XINFO's lag of group g: 1 and *lag, or 0 when it cannot be told (nil). */
int cg_lag(const struct stream *s, const struct cgroup *g, long long *lag);

/* --------------------------------------------------------------- stream --- */
/* The ID XADD gives its entry: the given one (id_given, seq_given), "<ms>-*"
 * (id_given, !seq_given: the next sequence of ms), or from the clock.
 * Returns -1 when it would not be above the stream's last ID. */
int stream_next_id(const struct stream *s, const struct stream_id *given, int id_given, int seq_given,
                   struct stream_id *out);
/* XDEL of one ID: 1 when the entry was there (max_deleted follows). */
int stream_del_entry(struct stream *s, const struct stream_id *id);
/* ID of the first live entry (0-0 and returns 0 when the stream is empty). */
int stream_first_entry(const struct stream *s, struct stream_id *id);

#endif
