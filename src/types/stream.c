/* types/stream.c - the STREAM value (types/stream.h): consumer groups,
 * consumers, PELs, the group counters, and stream_type_ops (free, COPY,
 * MEMORY USAGE, length, lazy-free effort of a stream with its groups).
 * The entries themselves are ds/stream.c's. */
#include "stream.h"
#include "types.h"

#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../db/db.h"
#include "../db/object.h"

/* ------------------------------------------------------------------ PELs --- */
void pel_remove(struct pel *p, const struct stream_id *id)
{
    int found;
    size_t i = pel_search(p, id, &found);
    if (!found)
        return;
    memmove(&p->v[i], &p->v[i + 1], sizeof(*p->v) * (p->n - i - 1));
    p->n--;
    if (p->n == 0) {
        hk_free(p->v);
        p->v = NULL;
        p->cap = 0;
    } else if (p->cap > 32 && p->n < p->cap / 4) {
        p->cap /= 2;
        p->v = hk_realloc(p->v, sizeof(*p->v) * p->cap);
    }
}

/* ------------------------------------------------- groups and consumers --- */
static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t m = al < bl ? al : bl;
    int c = memcmp(a, b, m);
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

struct cgroup *cg_find(const struct stream *s, const char *name, size_t nlen, size_t *pos)
{
    const struct cgroups *gs = s->cgroups;
    size_t lo = 0, hi = gs ? gs->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(gs->v[mid]->name, gs->v[mid]->nlen, name, nlen);
        if (c == 0) {
            if (pos)
                *pos = mid;
            return gs->v[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (pos)
        *pos = lo;
    return NULL;
}

struct consumer *consumer_find(const struct cgroup *g, const char *name, size_t nlen, size_t *pos)
{
    size_t lo = 0, hi = g->ncons;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(g->cons[mid]->name, g->cons[mid]->nlen, name, nlen);
        if (c == 0) {
            if (pos)
                *pos = mid;
            return g->cons[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (pos)
        *pos = lo;
    return NULL;
}

struct cgroup *cg_create(struct stream *s, const char *name, size_t nlen, const struct stream_id *id,
                         long long entries_read)
{
    size_t pos;
    if (cg_find(s, name, nlen, &pos))
        return NULL;
    if (!s->cgroups)
        s->cgroups = hk_calloc(sizeof(struct cgroups));
    struct cgroups *gs = s->cgroups;
    struct cgroup *g = hk_calloc(sizeof(*g) + nlen);
    memcpy(g->name, name, nlen);
    g->nlen = nlen;
    g->last_id = *id;
    g->entries_read = entries_read;
    if (gs->n == gs->cap) {
        gs->cap = gs->cap ? gs->cap * 2 : 4;
        gs->v = hk_realloc(gs->v, sizeof(*gs->v) * gs->cap);
    }
    memmove(&gs->v[pos + 1], &gs->v[pos], sizeof(*gs->v) * (gs->n - pos));
    gs->v[pos] = g;
    gs->n++;
    return g;
}

static void consumer_free(struct consumer *cn)
{
    hk_free(cn->pel.v);
    hk_free(cn);
}

static void cg_free(struct cgroup *g)
{
    for (size_t i = 0; i < g->pel.n; i++)
        hk_free(g->pel.v[i]);
    hk_free(g->pel.v);
    for (size_t i = 0; i < g->ncons; i++)
        consumer_free(g->cons[i]);
    hk_free(g->cons);
    hk_free(g);
}

void cg_destroy(struct stream *s, size_t pos)
{
    struct cgroups *gs = s->cgroups;
    cg_free(gs->v[pos]);
    memmove(&gs->v[pos], &gs->v[pos + 1], sizeof(*gs->v) * (gs->n - pos - 1));
    gs->n--;
}

struct consumer *consumer_create(struct cgroup *g, const char *name, size_t nlen, long long now)
{
    size_t pos;
    if (consumer_find(g, name, nlen, &pos))
        return NULL;
    struct consumer *cn = hk_calloc(sizeof(*cn) + nlen);
    memcpy(cn->name, name, nlen);
    cn->nlen = nlen;
    cn->seen_time = now;
    cn->active_time = -1;
    if (g->ncons == g->ccap) {
        g->ccap = g->ccap ? g->ccap * 2 : 4;
        g->cons = hk_realloc(g->cons, sizeof(*g->cons) * g->ccap);
    }
    memmove(&g->cons[pos + 1], &g->cons[pos], sizeof(*g->cons) * (g->ncons - pos));
    g->cons[pos] = cn;
    g->ncons++;
    return cn;
}

void consumer_delete(struct cgroup *g, struct consumer *cn)
{
    size_t pos;
    for (size_t i = 0; i < cn->pel.n; i++) {
        struct nack *n = cn->pel.v[i];
        pel_remove(&g->pel, &n->id);
        hk_free(n);
    }
    consumer_find(g, cn->name, cn->nlen, &pos);
    memmove(&g->cons[pos], &g->cons[pos + 1], sizeof(*g->cons) * (g->ncons - pos - 1));
    g->ncons--;
    consumer_free(cn);
}

static void cgroups_free(struct cgroups *gs)
{
    if (!gs)
        return;
    for (size_t i = 0; i < gs->n; i++)
        cg_free(gs->v[i]);
    hk_free(gs->v);
    hk_free(gs);
}

static struct cgroups *cgroups_dup(const struct cgroups *gs)
{
    if (!gs)
        return NULL;
    struct cgroups *n = hk_calloc(sizeof(*n));
    n->cap = n->n = gs->n;
    n->v = hk_malloc(sizeof(*n->v) * (gs->n ? gs->n : 1));
    for (size_t i = 0; i < gs->n; i++) {
        const struct cgroup *g = gs->v[i];
        struct cgroup *c = hk_calloc(sizeof(*c) + g->nlen);
        memcpy(c->name, g->name, g->nlen);
        c->nlen = g->nlen;
        c->last_id = g->last_id;
        c->entries_read = g->entries_read;
        c->ncons = c->ccap = g->ncons;
        c->cons = hk_malloc(sizeof(*c->cons) * (g->ncons ? g->ncons : 1));
        for (size_t k = 0; k < g->ncons; k++) {
            const struct consumer *oc = g->cons[k];
            struct consumer *cn = hk_calloc(sizeof(*cn) + oc->nlen);
            memcpy(cn->name, oc->name, oc->nlen);
            cn->nlen = oc->nlen;
            cn->seen_time = oc->seen_time;
            cn->active_time = oc->active_time;
            c->cons[k] = cn;
        }
        c->pel.n = c->pel.cap = g->pel.n;
        c->pel.v = g->pel.n ? hk_malloc(sizeof(*c->pel.v) * g->pel.n) : NULL;
        for (size_t k = 0; k < g->pel.n; k++) {
            const struct nack *on = g->pel.v[k];
            struct nack *nn = hk_malloc(sizeof(*nn));
            *nn = *on;
            size_t pos = 0;
            if (on->consumer && consumer_find(c, on->consumer->name, on->consumer->nlen, &pos)) {
                nn->consumer = c->cons[pos];
                pel_insert_at(&nn->consumer->pel, nn->consumer->pel.n, nn); /* ascending already */
            } else {
                nn->consumer = NULL;
            }
            c->pel.v[k] = nn;
        }
        n->v[i] = c;
    }
    return n;
}

static size_t cgroups_mem(const struct cgroups *gs)
{
    size_t m = 0;
    if (!gs)
        return 0;
    m += hk_usable((void *)gs) + (gs->v ? hk_usable(gs->v) : 0);
    for (size_t i = 0; i < gs->n; i++) {
        const struct cgroup *g = gs->v[i];
        m += hk_usable((void *)g) + (g->cons ? hk_usable(g->cons) : 0) + (g->pel.v ? hk_usable(g->pel.v) : 0);
        m += g->pel.n * hk_usable(g->pel.n ? g->pel.v[0] : NULL);
        for (size_t k = 0; k < g->ncons; k++)
            m += hk_usable(g->cons[k]) + (g->cons[k]->pel.v ? hk_usable(g->cons[k]->pel.v) : 0);
    }
    return m;
}

static size_t cgroups_effort(const struct cgroups *gs)
{
    size_t n = 0;
    if (!gs)
        return 0;
    for (size_t i = 0; i < gs->n; i++)
        n += 1 + gs->v[i]->pel.n + gs->v[i]->ncons;
    return n;
}

/* ----------------------------------------------------------------- nacks --- */
struct nack *nack_create(struct cgroup *g, size_t gi, const struct stream_id *id, long long now)
{
    struct nack *nk = hk_malloc(sizeof(*nk));
    nk->id = *id;
    nk->delivery_time = now;
    nk->delivery_count = 1;
    nk->consumer = NULL;
    pel_insert_at(&g->pel, gi, nk);
    return nk;
}

void nack_drop(struct cgroup *g, struct nack *nk)
{
    struct stream_id id = nk->id;
    pel_remove(&g->pel, &id);
    if (nk->consumer)
        pel_remove(&nk->consumer->pel, &id);
    hk_free(nk);
}

/* ------------------------------------------------------- group counters --- */
/* Redis's logical read counter of an ID (streamEstimateDistanceFromFirstEverEntry). */
long long estimate_distance(const struct stream *s, const struct stream_id *id)
{
    if (!s->entries_added)
        return 0;
    if (!s->length && sid_cmp(id, &s->last_id) < 1)
        return (long long)s->entries_added;
    int cmp_last = sid_cmp(id, &s->last_id);
    if (cmp_last == 0)
        return (long long)s->entries_added;
    if (cmp_last > 0)
        return ENTRIES_READ_INVALID;
    int cmp_id_first = sid_cmp(id, &s->first_id);
    int cmp_xdel_first = sid_cmp(&s->max_deleted, &s->first_id);
    if ((s->max_deleted.ms == 0 && s->max_deleted.seq == 0) || cmp_xdel_first < 0) {
        if (cmp_id_first < 0)
            return (long long)(s->entries_added - s->length);
        if (cmp_id_first == 0)
            return (long long)(s->entries_added - s->length + 1);
    }
    return ENTRIES_READ_INVALID;
}

int cg_lag(const struct stream *s, const struct cgroup *g, long long *lag)
{
    if (!s->entries_added) {
        *lag = 0;
        return 1;
    }
    if (g->entries_read != ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, &g->last_id, NULL)) {
        *lag = (long long)s->entries_added - g->entries_read;
        return 1;
    }
    long long er = estimate_distance(s, &g->last_id);
    if (er == ENTRIES_READ_INVALID)
        return 0;
    *lag = (long long)s->entries_added - er;
    return 1;
}

/* --------------------------------------------------------------- stream --- */
int stream_next_id(const struct stream *s, const struct stream_id *given, int id_given, int seq_given,
                   struct stream_id *out)
{
    struct stream_id id;
    int edom = 0;
    if (id_given) {
        if (seq_given) {
            id = *given;
        } else if (s->last_id.ms == given->ms) {
            if (s->last_id.seq == UINT64_MAX)
                edom = 1;
            id = s->last_id;
            id.seq++;
        } else {
            id = *given;
        }
    } else {
        uint64_t now = (uint64_t)db_now_ms();
        if (now > s->last_id.ms) {
            id.ms = now;
            id.seq = 0;
        } else {
            id = s->last_id;
            sid_incr(&id);
        }
    }
    if (edom || sid_cmp(&id, &s->last_id) <= 0)
        return -1;
    *out = id;
    return 0;
}

int stream_del_entry(struct stream *s, const struct stream_id *id)
{
    if (!stream_delete(s, id))
        return 0;
    if (sid_cmp(id, &s->max_deleted) > 0)
        s->max_deleted = *id;
    return 1;
}

int stream_first_entry(const struct stream *s, struct stream_id *id)
{
    struct stream_id zero = {0, 0}, max = {UINT64_MAX, UINT64_MAX};
    struct stream_iter it;
    struct stream_entry e;
    int found = 0;
    id->ms = id->seq = 0;
    stream_iter_start(&it, s, &zero, &max, 0);
    if (stream_iter_next(&it, &e)) {
        *id = e.id;
        found = 1;
    }
    stream_iter_stop(&it);
    return found;
}

/* ------------------------------------------------------------ type_ops --- */
static void stream_ops_free(void *p, uint8_t enc)
{
    struct stream *s = p;
    (void)enc;
    cgroups_free(s->cgroups);
    stream_free(s);
}

static void *stream_ops_dup(const void *p, uint8_t enc)
{
    const struct stream *s = p;
    (void)enc;
    struct stream *n = stream_dup(s);
    n->cgroups = cgroups_dup(s->cgroups);
    return n;
}

static size_t stream_ops_mem(const void *p, uint8_t enc)
{
    const struct stream *s = p;
    (void)enc;
    return stream_mem(s) + cgroups_mem(s->cgroups);
}

static size_t stream_ops_len(const void *p, uint8_t enc)
{
    (void)enc;
    return (size_t)((const struct stream *)p)->length;
}

static size_t stream_ops_effort(const void *p, uint8_t enc)
{
    const struct stream *s = p;
    (void)enc;
    return 1 + stream_blocks(s) + cgroups_effort(s->cgroups);
}

const struct type_ops stream_type_ops = {stream_ops_free, stream_ops_dup, stream_ops_mem, stream_ops_len,
                                         stream_ops_effort};
