/* client_evict.c - see client_evict.h (the rule, the design, the slack). */
#include "client_evict.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/log.h"
#include "../base/mem.h"

long long cev_maxmemory_clients;

#define CEV_MIN_LIMIT (128 * 1024) /* Redis: never lock everybody out */
#define CEV_MAX_WORKERS 1024       /* the cap of `threads` (config.c) */

/* Per worker: `top` and `asked` are read by the other workers; `sum` only
 * by the owner.  One cache line each. */
static struct cev_worker {
    _Atomic size_t top;   /* >= the biggest evictable client's figure */
    atomic_int asked;     /* an enforcement job is queued for this worker */
    size_t sum;           /* owner: sum of its clients' cev_mem */
    int futile;           /* owner: the last enforce found nothing evictable anywhere */
    long long warned_ms;  /* owner: last "nothing left to evict" warning */
} __attribute__((aligned(64))) cw[CEV_MAX_WORKERS];

/* Sum of every client's cev_mem, all workers. */
static _Atomic long long cev_total;

size_t cev_limit(void)
{
    long long v = __atomic_load_n(&cev_maxmemory_clients, __ATOMIC_RELAXED);
    size_t lim;
    if (v < 0) {
        long long mm = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
        if (mm <= 0)
            return 0;
        double b = (double)mm * (double)-v / 100.0;
        lim = b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
    } else if (v > 0) {
        lim = (size_t)v;
    } else {
        return 0;
    }
    return lim < CEV_MIN_LIMIT ? CEV_MIN_LIMIT : lim;
}

/* ----------------------------------------------------------- accounting --- */
static inline int evictable(const struct client *c)
{
    return !(c->flags & (CF_NO_EVICT | CF_CLOSE_ASAP));
}

/* What c counts for: nothing once it is being closed (the output-buffer
 * limit or an eviction dropped its output; it goes at the end of the turn). */
static inline size_t figure(const struct client *c)
{
    return (c->flags & CF_CLOSE_ASAP) ? 0 : client_mem_usage(c);
}

static inline struct cev_worker *cw_of(const struct worker *w)
{
    return &cw[w->id];
}

/* Recount c; returns its figure. */
static size_t recount(struct client *c)
{
    size_t m = figure(c);
    if (m != c->cev_mem) {
        long long d = (long long)m - (long long)c->cev_mem;
        c->cev_mem = m;
        cw_of(c->w)->sum += (size_t)d;
        atomic_fetch_add_explicit(&cev_total, d, memory_order_relaxed);
    }
    return m;
}

/* Recount and raise the worker's top if c became its biggest candidate
 * (returns 1 then). */
static int recount_top(struct client *c)
{
    size_t m = recount(c);
    struct cev_worker *me = cw_of(c->w);
    if (evictable(c) && m > atomic_load_explicit(&me->top, memory_order_relaxed)) {
        atomic_store_explicit(&me->top, m, memory_order_relaxed);
        return 1;
    }
    return 0;
}

void cev_client_gone(struct client *c)
{
    cw_of(c->w)->sum -= c->cev_mem;
    atomic_fetch_sub_explicit(&cev_total, (long long)c->cev_mem, memory_order_relaxed);
    c->cev_mem = 0;
}

void cev_client_note(struct client *c)
{
    (void)recount(c);
}

/* ------------------------------------------------------------- evicting --- */
static void evict(struct worker *w, struct client *c)
{
    log_msg(LL_NOTICE, "Evicting client: id=%llu addr=%s laddr=%s name=%s tot-mem=%zu", (unsigned long long)c->id,
            c->addr, c->laddr, c->name ? c->name : "", c->cev_mem);
    /* As CLIENT KILL: drop the pending output, close after this turn. */
    client_close_asap(c);
    (void)recount(c); /* counts 0 from now on */
    STAT_ADD(w->stats.evicted_clients, 1);
}

static void warn_nothing_left(struct worker *w)
{
    long long now = time_ms();
    struct cev_worker *me = cw_of(w);
    if (now - me->warned_ms >= 1000) {
        me->warned_ms = now;
        log_msg(LL_WARNING, "Over client maxmemory after evicting all evictable clients");
    }
}

struct cand {
    size_t m;
    struct client *c;
    unsigned long long id;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return x->m < y->m ? 1 : x->m > y->m ? -1 : 0;
}

/* Recount every client of w, publish its exact top; with out, also return
 * its candidates sorted biggest first (hk_free them). */
static size_t scan(struct worker *w, struct cand **out)
{
    struct cand *v = out && w->nclients > 0 ? hk_malloc(sizeof(*v) * (size_t)w->nclients) : NULL;
    size_t n = 0, top = 0;
    for (struct client *c = w->clients; c; c = c->next) {
        size_t m = recount(c);
        if (!evictable(c))
            continue;
        if (m > top)
            top = m;
        if (v && n < (size_t)w->nclients)
            v[n++] = (struct cand){m, c, c->id};
    }
    atomic_store_explicit(&cw_of(w)->top, top, memory_order_relaxed);
    if (v && n > 1)
        qsort(v, n, sizeof(*v), cand_cmp);
    if (out)
        *out = v;
    return n;
}

static void ask_job(struct worker *w, void *arg);

static void ask(int wid)
{
    if (!atomic_exchange(&cw[wid].asked, 1))
        worker_post(&workers[wid], ask_job, NULL);
}

/* Over the limit: evict this worker's biggest clients while they are the
 * biggest anywhere, else hand over to the worker that holds the biggest. */
static _Thread_local int enforcing;

static void enforce(struct worker *w)
{
    size_t limit = cev_limit();
    if (!limit || enforcing || atomic_load_explicit(&cev_total, memory_order_relaxed) <= (long long)limit)
        return;
    enforcing = 1;
    struct cand *v = NULL;
    size_t n = scan(w, &v), i = 0;
    while (atomic_load_explicit(&cev_total, memory_order_relaxed) > (long long)limit) {
        size_t other = 0;
        int owner = -1;
        for (int k = 0; k < nworkers && k < CEV_MAX_WORKERS; k++) {
            size_t t = atomic_load_explicit(&cw[k].top, memory_order_relaxed);
            if (k != w->id && t > other) {
                other = t;
                owner = k;
            }
        }
        size_t mine = i < n ? v[i].m : 0;
        cw_of(w)->futile = !mine && !other;
        if (mine && mine >= other) {
            evict(w, v[i].c);
            i++;
            continue;
        }
        if (owner >= 0)
            ask(owner);
        else
            warn_nothing_left(w);
        break;
    }
    atomic_store_explicit(&cw_of(w)->top, i < n ? v[i].m : 0, memory_order_relaxed);
    hk_free(v);
    enforcing = 0;
}

static void ask_job(struct worker *w, void *arg)
{
    (void)arg;
    atomic_store(&cw_of(w)->asked, 0);
    if (cev_enabled())
        enforce(w);
}

void cev_client_update(struct client *c)
{
    int raised = recount_top(c);
    size_t limit = cev_limit();
    /* Over the limit with nothing evictable (NO-EVICT clients hold it all):
     * no scan per command until a candidate appears here (raised) or the
     * cron looks again. */
    struct cev_worker *me = cw_of(c->w);
    if (limit && atomic_load_explicit(&cev_total, memory_order_relaxed) > (long long)limit) {
        if (raised || !me->futile)
            enforce(c->w);
    } else if (me->futile) {
        me->futile = 0;
    }
}

void cev_worker_cron(struct worker *w)
{
    if (w->id >= CEV_MAX_WORKERS)
        return;
    (void)scan(w, NULL);
    enforce(w);
}

/* ------------------------------------------- CONFIG SET: exact, at once --- */
struct sync_req {
    pthread_mutex_t lock;
    struct cand *v;
    size_t n, cap;
    unsigned long long *ids; /* picked, sorted */
    size_t nids;
};

static void collect_one(struct worker *w, void *arg)
{
    struct sync_req *r = arg;
    struct cand *v = NULL;
    size_t n = scan(w, &v);
    if (n) {
        pthread_mutex_lock(&r->lock);
        if (r->n + n > r->cap) {
            while (r->n + n > r->cap)
                r->cap = r->cap ? r->cap * 2 : 64;
            r->v = hk_realloc(r->v, sizeof(*r->v) * r->cap);
        }
        for (size_t i = 0; i < n; i++) {
            r->v[r->n] = v[i];
            r->v[r->n++].c = NULL; /* never dereferenced off its worker */
        }
        pthread_mutex_unlock(&r->lock);
    }
    hk_free(v);
}

static int id_cmp(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

static void evict_one(struct worker *w, void *arg)
{
    struct sync_req *r = arg;
    for (struct client *c = w->clients; c; c = c->next)
        if (evictable(c) && bsearch(&c->id, r->ids, r->nids, sizeof(*r->ids), id_cmp))
            evict(w, c);
    (void)scan(w, NULL); /* exact top again */
}

void cev_config_changed(void)
{
    if (nworkers <= 0 || !cev_enabled())
        return;
    struct sync_req r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_init(&r.lock, NULL);
    worker_broadcast(collect_one, &r); /* every client recounted */
    size_t limit = cev_limit();
    long long total = atomic_load(&cev_total);
    if (limit && total > (long long)limit) {
        if (r.n > 1)
            qsort(r.v, r.n, sizeof(*r.v), cand_cmp);
        r.ids = hk_malloc(sizeof(*r.ids) * (r.n ? r.n : 1));
        for (size_t i = 0; i < r.n && total > (long long)limit; i++) {
            r.ids[r.nids++] = r.v[i].id;
            total -= (long long)r.v[i].m;
        }
        if (total > (long long)limit)
            log_msg(LL_WARNING, "Over client maxmemory after evicting all evictable clients");
        if (r.nids) {
            qsort(r.ids, r.nids, sizeof(*r.ids), id_cmp);
            worker_broadcast(evict_one, &r);
        }
        hk_free(r.ids);
    }
    hk_free(r.v);
    pthread_mutex_destroy(&r.lock);
}

/* ------------------------------------------------------------ CONFIG --- */
/* Redis's memtoull: digits and an optional unit (b, k, kb, m, mb, g, gb,
 * any case); no sign.  Unsigned arithmetic as Redis's (a value past 2^63
 * comes out negative and is then judged as a percentage, as there). */
static int mem_parse(const char *s, long long *out)
{
    const char *u = s;
    unsigned long long mul, val = 0;
    if (*s == '-')
        return 0;
    while (*u >= '0' && *u <= '9')
        u++;
    if (!config_mem_unit(u, &mul))
        return 0;
    if (u - s >= 128)
        return 0;
    for (const char *p = s; p < u; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (val > (ULLONG_MAX - d) / 10) {
            val = ULLONG_MAX; /* strtoull saturates */
            break;
        }
        val = val * 10 + d;
    }
    *out = (long long)(val * mul);
    return 1;
}

int cev_config_parse(const char *s, long long *out, char *err, size_t errlen)
{
    long long v;
    size_t n = strlen(s);
    if (!mem_parse(s, &v)) {
        /* "N%", N a plain non-negative integer; stored as -N. */
        if (n > 1 && s[n - 1] == '%' && str_to_ll(s, n - 1, &v) && v >= 0) {
            v = -v;
        } else {
            snprintf(err, errlen, "argument must be a memory or percent value");
            return -1;
        }
    }
    if (v < -100) {
        snprintf(err, errlen, "percentage argument must be less or equal to 100");
        return -1;
    }
    *out = v;
    return 0;
}

void cev_config_format(char *buf, size_t cap)
{
    long long v = __atomic_load_n(&cev_maxmemory_clients, __ATOMIC_RELAXED);
    if (v < 0)
        snprintf(buf, cap, "%lld%%", -v);
    else
        snprintf(buf, cap, "%lld", v);
}
