/* pubsub.c - SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE and their UNSUBSCRIBEs,
 * PUBLISH / SPUBLISH and PUBSUB, across worker threads.
 *
 * Three namespaces (kinds): channels, patterns, shard channels.  State:
 *   - per client (owner thread): c->ps_subs[kind], the names it holds;
 *   - per worker (owner thread, no lock): w->ps_maps[kind], name -> the
 *     worker's own clients subscribed to it;
 *   - global registry (reg[kind], guarded by reg_lock, a rwlock): name ->
 *     per-worker subscriber counts and their total.  A name is in the
 *     registry exactly while some client holds it.
 * Subscribing updates the client, then the worker map, then (write lock)
 * the registry; unsubscribing does the same in that order.
 *
 * PUBLISH takes the read lock once: the channel's per-worker counts plus
 * those of every pattern that matches it (glob_match) give the reply and
 * tell which workers have receivers.  The message is shared (refcounted)
 * by one job per such worker (worker_post, FIFO per worker, so the order of
 * one publisher's messages is kept); the publisher's own worker delivers
 * inline (unless the publisher itself is subscribed, or the worker has
 * internal publishes queued for itself: then through its own queue, which
 * keeps a thread's messages in order; pubsub_publish_internal, used by
 * keyspace notifications, always queues).  Delivery looks the channel and
 * patterns up in the worker's own maps, so a subscriber that left in
 * between is simply not found.  PUBLISH takes no slot lock (SSUBSCRIBE /
 * SPUBLISH are CMD_SELF_LOCKING: their key positions are for COMMAND
 * GETKEYS only); internal publishes run with the writer's slot locks held
 * (the registry lock and job queues are leaves). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../cluster/cluster.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../ds/dict.h"
#include "../persist/prop.h"
#include "commands.h"
#include "pubsub.h"

enum { PS_CHAN = 0, PS_PAT = 1, PS_SHARD = 2, PS_KINDS = 3 };

/* A name held by a client. */
struct cname {
    struct dict_link link;
    int idx;           /* position of this client in the worker's lname subs[] */
    size_t len;
    char name[];
};
/* A worker's local subscribers of one name. */
struct lname {
    struct dict_link link;
    struct client **subs;
    int n, cap;
    size_t len;
    char name[];
};
/* The registry entry of one name. */
struct gname {
    struct dict_link link;
    long total;
    int *cnt; /* per worker */
    size_t len;
    char name[];
};

static const char *cname_key(const struct dict_link *it, size_t *len)
{
    const struct cname *n = (const struct cname *)it;
    *len = n->len;
    return n->name;
}
static const char *lname_key(const struct dict_link *it, size_t *len)
{
    const struct lname *n = (const struct lname *)it;
    *len = n->len;
    return n->name;
}
static const char *gname_key(const struct dict_link *it, size_t *len)
{
    const struct gname *n = (const struct gname *)it;
    *len = n->len;
    return n->name;
}
static const struct dict_type cname_type = {cname_key};
static const struct dict_type lname_type = {lname_key};
static const struct dict_type gname_type = {gname_key};

static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dict *reg[PS_KINDS];
static int reg_nworkers;
static atomic_long pubsub_clients;
/* Channels + patterns in the registry (not shard channels): an internal
 * publish with none skips the registry lock (keyspace notifications
 * enabled with nobody listening). */
static atomic_long reg_listened;

void pubsub_init(int n)
{
    reg_nworkers = n;
    for (int k = 0; k < PS_KINDS; k++)
        reg[k] = dict_new(&gname_type, 0);
}

/* ------------------------------------------------------------ counts --- */
static long csize(const struct client *c, int kind)
{
    return c->ps_subs[kind] ? (long)dict_size(c->ps_subs[kind]) : 0;
}
long pubsub_client_channels(const struct client *c)
{
    return csize(c, PS_CHAN);
}
long pubsub_client_patterns(const struct client *c)
{
    return csize(c, PS_PAT);
}
long pubsub_client_shard(const struct client *c)
{
    return csize(c, PS_SHARD);
}
static long reg_size(int kind)
{
    long n;
    pthread_rwlock_rdlock(&reg_lock);
    n = reg[kind] ? (long)dict_size(reg[kind]) : 0;
    pthread_rwlock_unlock(&reg_lock);
    return n;
}
long pubsub_num_channels(void)
{
    return reg_size(PS_CHAN);
}
long pubsub_num_patterns(void)
{
    return reg_size(PS_PAT);
}
long pubsub_num_shard_channels(void)
{
    return reg_size(PS_SHARD);
}
long pubsub_num_clients(void)
{
    return atomic_load(&pubsub_clients);
}

/* The count a (un)subscribe reply carries: channels + patterns, or shard
 * channels alone, as Redis counts them. */
static long reply_count(const struct client *c, int kind)
{
    return kind == PS_SHARD ? csize(c, PS_SHARD) : csize(c, PS_CHAN) + csize(c, PS_PAT);
}

static void update_mode(struct client *c)
{
    int any = csize(c, PS_CHAN) + csize(c, PS_PAT) + csize(c, PS_SHARD) > 0;
    if (any && !(c->flags & CF_PUBSUB)) {
        c->flags |= CF_PUBSUB;
        atomic_fetch_add(&pubsub_clients, 1);
    } else if (!any && (c->flags & CF_PUBSUB)) {
        c->flags &= ~CF_PUBSUB;
        atomic_fetch_sub(&pubsub_clients, 1);
    }
}

/* ---------------------------------------------------------- registry --- */
static void reg_add(int kind, int wid, const char *name, size_t len, int delta)
{
    pthread_rwlock_wrlock(&reg_lock);
    struct gname *g = (struct gname *)dict_find(reg[kind], name, len);
    if (!g) {
        g = hk_calloc(sizeof(*g) + len + 1);
        g->cnt = hk_calloc(sizeof(int) * (size_t)reg_nworkers);
        g->len = len;
        memcpy(g->name, name, len);
        dict_add(reg[kind], &g->link);
        if (kind != PS_SHARD)
            atomic_fetch_add_explicit(&reg_listened, 1, memory_order_relaxed);
    }
    g->cnt[wid] += delta;
    g->total += delta;
    if (g->total <= 0) {
        dict_remove(reg[kind], name, len);
        if (kind != PS_SHARD)
            atomic_fetch_sub_explicit(&reg_listened, 1, memory_order_relaxed);
        hk_free(g->cnt);
        hk_free(g);
    }
    pthread_rwlock_unlock(&reg_lock);
}

/* ---------------------------------------------------- (un)subscribe --- */
/* Returns 1 if c was not subscribed to name yet. */
static int subscribe_one(struct client *c, int kind, const char *name, size_t len)
{
    struct worker *w = c->w;
    if (!c->ps_subs[kind])
        c->ps_subs[kind] = dict_new(&cname_type, 0);
    if (dict_find(c->ps_subs[kind], name, len))
        return 0;
    struct cname *cn = hk_malloc(sizeof(*cn) + len + 1);
    cn->len = len;
    memcpy(cn->name, name, len);
    cn->name[len] = 0;
    dict_add(c->ps_subs[kind], &cn->link);

    if (!w->ps_maps[kind])
        w->ps_maps[kind] = dict_new(&lname_type, 0);
    struct lname *ln = (struct lname *)dict_find(w->ps_maps[kind], name, len);
    if (!ln) {
        ln = hk_calloc(sizeof(*ln) + len + 1);
        ln->len = len;
        memcpy(ln->name, name, len);
        dict_add(w->ps_maps[kind], &ln->link);
    }
    if (ln->n == ln->cap) {
        ln->cap = ln->cap ? ln->cap * 2 : 4;
        ln->subs = hk_realloc(ln->subs, sizeof(*ln->subs) * (size_t)ln->cap);
    }
    cn->idx = ln->n;
    ln->subs[ln->n++] = c;
    reg_add(kind, w->id, name, len, 1);
    return 1;
}

/* Returns 1 if c was subscribed to name. */
static int unsubscribe_one(struct client *c, int kind, const char *name, size_t len)
{
    struct worker *w = c->w;
    struct dict_link *it = c->ps_subs[kind] ? dict_remove(c->ps_subs[kind], name, len) : NULL;
    if (!it)
        return 0;
    int i = ((struct cname *)it)->idx;
    hk_free(it);
    /* Its last name of this kind: the map goes too (a client that is no
     * longer CF_PUBSUB is not cleaned up by pubsub_client_gone). */
    if (!dict_size(c->ps_subs[kind])) {
        dict_free(c->ps_subs[kind], NULL);
        c->ps_subs[kind] = NULL;
    }
    struct lname *ln = w->ps_maps[kind] ? (struct lname *)dict_find(w->ps_maps[kind], name, len) : NULL;
    if (ln && i >= 0 && i < ln->n && ln->subs[i] == c) {
        /* O(1): the last subscriber takes c's place; its cname learns the
         * new index (10,000 subscribers leaving one channel cost 10,000
         * steps, not 50 million). */
        struct client *m = ln->subs[--ln->n];
        if (i < ln->n) {
            ln->subs[i] = m;
            struct cname *mc = (struct cname *)dict_find(m->ps_subs[kind], name, len);
            if (mc)
                mc->idx = i;
        }
        if (ln->n == 0) {
            dict_remove(w->ps_maps[kind], name, len);
            hk_free(ln->subs);
            hk_free(ln);
        }
    }
    reg_add(kind, w->id, name, len, -1);
    return 1;
}

static const char *const sub_word[PS_KINDS] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const unsub_word[PS_KINDS] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

/* Subscription confirmations are pushed even under CLIENT REPLY OFF. */
static void reply_confirm(struct client *c, const char *word, const char *name, size_t len, long count)
{
    int muted = c->out.muted;
    c->out.muted = 0;
    reply_push(&c->out, 3);
    reply_bulk_cstr(&c->out, word);
    if (name)
        reply_bulk(&c->out, name, len);
    else
        reply_null(&c->out);
    reply_int(&c->out, count);
    c->out.muted = muted;
}

static void do_subscribe(struct client *c, int kind)
{
    if ((c->flags & CF_DENY_BLOCKING)) {
        reply_errorf(&c->out, "ERR %s isn't allowed for a DENY BLOCKING client",
                     kind == PS_CHAN ? "SUBSCRIBE" : kind == PS_PAT ? "PSUBSCRIBE" : "SSUBSCRIBE");
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        subscribe_one(c, kind, c->argv[i], c->argvlen[i]);
        reply_confirm(c, sub_word[kind], c->argv[i], c->argvlen[i], reply_count(c, kind));
    }
    update_mode(c);
}

/* Unsubscribe from everything of one kind; notify: reply per name (and a
 * nil-channel reply when there was none). */
static void unsubscribe_all(struct client *c, int kind, int notify)
{
    size_t n = (size_t)csize(c, kind);
    if (n) {
        struct cname **names = hk_malloc(sizeof(*names) * n);
        struct dict_iter it = {0};
        struct dict_link *l;
        size_t k = 0;
        while ((l = dict_next(c->ps_subs[kind], &it)) && k < n) {
            const struct cname *cn = (const struct cname *)l;
            struct cname *cp = hk_malloc(sizeof(*cp) + cn->len + 1);
            cp->len = cn->len;
            memcpy(cp->name, cn->name, cn->len + 1);
            names[k++] = cp;
        }
        for (size_t i = 0; i < k; i++) {
            unsubscribe_one(c, kind, names[i]->name, names[i]->len);
            if (notify)
                reply_confirm(c, unsub_word[kind], names[i]->name, names[i]->len, reply_count(c, kind));
            hk_free(names[i]);
        }
        hk_free(names);
    } else if (notify) {
        reply_confirm(c, unsub_word[kind], NULL, 0, reply_count(c, kind));
    }
    if (c->ps_subs[kind]) {
        dict_free(c->ps_subs[kind], NULL);
        c->ps_subs[kind] = NULL;
    }
}

static void do_unsubscribe(struct client *c, int kind)
{
    if (c->argc == 1) {
        unsubscribe_all(c, kind, 1);
    } else {
        for (int i = 1; i < c->argc; i++) {
            unsubscribe_one(c, kind, c->argv[i], c->argvlen[i]);
            reply_confirm(c, unsub_word[kind], c->argv[i], c->argvlen[i], reply_count(c, kind));
        }
    }
    update_mode(c);
}

void subscribe_command(struct client *c)
{
    do_subscribe(c, PS_CHAN);
}
void psubscribe_command(struct client *c)
{
    do_subscribe(c, PS_PAT);
}
void ssubscribe_command(struct client *c)
{
    do_subscribe(c, PS_SHARD);
}
void unsubscribe_command(struct client *c)
{
    do_unsubscribe(c, PS_CHAN);
}
void punsubscribe_command(struct client *c)
{
    do_unsubscribe(c, PS_PAT);
}
void sunsubscribe_command(struct client *c)
{
    do_unsubscribe(c, PS_SHARD);
}

void pubsub_client_gone(struct client *c)
{
    for (int k = 0; k < PS_KINDS; k++)
        if (c->ps_subs[k])
            unsubscribe_all(c, k, 0);
    update_mode(c);
}

/* ---------------------------------------------------------- delivery --- */
struct pmsg {
    atomic_int refs;
    int shard;
    size_t clen, mlen;
    char *ch, *msg;
    char data[];
};

static void pmsg_release(struct pmsg *m)
{
    if (atomic_fetch_sub(&m->refs, 1) == 1)
        hk_free(m);
}

static void deliver_to(struct client *c, const char *word, const struct lname *pat, const struct pmsg *m)
{
    if (c->flags & (CF_CLOSE_ASAP | CF_CLOSE_AFTER_REPLY))
        return;
    struct reply *o = client_push_target(c);
    int muted = o->muted;
    o->muted = 0;
    reply_push(o, pat ? 4 : 3);
    reply_bulk_cstr(o, word);
    if (pat)
        reply_bulk(o, pat->name, pat->len);
    reply_bulk(o, m->ch, m->clen);
    reply_bulk(o, m->msg, m->mlen);
    o->muted = muted;
    if (o == &c->out)
        client_push_ready(c);
}

/* Runs on worker w: deliver m to w's own subscribers. */
static void deliver_local(struct worker *w, const struct pmsg *m)
{
    if (m->shard) {
        struct lname *ln = w->ps_maps[PS_SHARD] ? (struct lname *)dict_find(w->ps_maps[PS_SHARD], m->ch, m->clen) : NULL;
        for (int i = 0; ln && i < ln->n; i++)
            deliver_to(ln->subs[i], "smessage", NULL, m);
        return;
    }
    struct lname *ln = w->ps_maps[PS_CHAN] ? (struct lname *)dict_find(w->ps_maps[PS_CHAN], m->ch, m->clen) : NULL;
    for (int i = 0; ln && i < ln->n; i++)
        deliver_to(ln->subs[i], "message", NULL, m);
    if (w->ps_maps[PS_PAT]) {
        struct dict_iter it = {0};
        struct dict_link *l;
        while ((l = dict_next(w->ps_maps[PS_PAT], &it))) {
            const struct lname *p = (const struct lname *)l;
            if (!glob_match(p->name, p->len, m->ch, m->clen, 0))
                continue;
            for (int i = 0; i < p->n; i++)
                deliver_to(p->subs[i], "pmessage", p, m);
        }
    }
}

static void deliver_job(struct worker *w, void *arg)
{
    struct pmsg *m = arg;
    deliver_local(w, m);
    pmsg_release(m);
}

/* Messages a worker queued for its own subscribers (internal publishes
 * always do; see pubsub_publish_internal) and has not delivered yet.
 * While there are some, PUBLISH on that worker queues too instead of
 * delivering inline, so one thread's messages keep their order.  Touched
 * only by the worker's own thread. */
static _Thread_local long self_queued;

static void deliver_self_job(struct worker *w, void *arg)
{
    self_queued--;
    deliver_job(w, arg);
}

/* Publish msg on channel ch (shard: the shard-channel namespace) from the
 * thread running worker self (NULL: not a worker thread).  Returns the
 * receiver count Redis's PUBLISH replies.  self_inline: deliver to self's
 * own subscribers now (PUBLISH); otherwise they get it through self's job
 * queue like every other worker's (pubsub_publish_internal). */
static long publish_msg(struct worker *self, const char *ch, size_t clen, const char *msg, size_t mlen, int shard,
                        int self_inline)
{
    int nw = reg_nworkers, stackcnt[64];
    int *cnt = nw <= 64 ? stackcnt : hk_malloc(sizeof(int) * (size_t)nw);
    long total = 0;

    memset(cnt, 0, sizeof(int) * (size_t)nw);
    pthread_rwlock_rdlock(&reg_lock);
    struct gname *g = (struct gname *)dict_find(reg[shard ? PS_SHARD : PS_CHAN], ch, clen);
    if (g) {
        total += g->total;
        for (int i = 0; i < nw; i++)
            cnt[i] += g->cnt[i];
    }
    if (!shard && dict_size(reg[PS_PAT])) {
        struct dict_iter it = {0};
        struct dict_link *l;
        while ((l = dict_next(reg[PS_PAT], &it))) {
            const struct gname *p = (const struct gname *)l;
            if (!glob_match(p->name, p->len, ch, clen, 0))
                continue;
            total += p->total;
            for (int i = 0; i < nw; i++)
                cnt[i] += p->cnt[i];
        }
    }
    pthread_rwlock_unlock(&reg_lock);

    if (total > 0) {
        struct pmsg *m = hk_malloc(sizeof(*m) + clen + mlen + 2);
        struct worker *here = self_inline && !self_queued ? self : NULL;
        int jobs = 0;
        m->shard = shard;
        m->clen = clen;
        m->mlen = mlen;
        m->ch = m->data;
        m->msg = m->data + clen + 1;
        memcpy(m->ch, ch, clen);
        m->ch[clen] = 0;
        memcpy(m->msg, msg, mlen);
        m->msg[mlen] = 0;
        for (int i = 0; i < nw; i++)
            if (cnt[i] > 0 && &workers[i] != here)
                jobs++;
        atomic_init(&m->refs, jobs + 1);
        for (int i = 0; i < nw; i++) {
            if (cnt[i] <= 0 || &workers[i] == here)
                continue;
            if (&workers[i] == self) {
                self_queued++;
                worker_post(&workers[i], deliver_self_job, m);
            } else {
                worker_post(&workers[i], deliver_job, m);
            }
        }
        if (here && cnt[here->id] > 0)
            deliver_local(here, m);
        pmsg_release(m);
    }
    if (cnt != stackcnt)
        hk_free(cnt);
    return total;
}

static void do_publish(struct client *c, int shard)
{
    /* A publisher that is itself a subscriber (RESP3) gets its message
     * after the command's reply (Redis 7.2+, also inside MULTI / scripts):
     * its worker's subscribers are then served through the job queue. */
    int self_inline = !(c->flags & CF_PUBSUB);
    reply_int(&c->out, publish_msg(c->w, c->argv[1], c->argvlen[1], c->argv[2], c->argvlen[2], shard, self_inline));
    /* Cluster mode: the other nodes' subscribers (the shard's for
     * SPUBLISH) get it over the bus; the reply counts this node's. */
    if (HK_UNLIKELY(cluster_on))
        cluster_propagate_publish(shard, c->argv[1], c->argvlen[1], c->argv[2], c->argvlen[2]);
    else /* to the replicas' subscribers, as Redis (not the AOF) */
        prop_feed_repl(c->db, c->argc, (const char *const *)c->argv, c->argvlen);
}

/* Cluster mode: slots that left this node's shard.  Each worker drops its
 * clients' shard channels in those slots, telling each with sunsubscribe
 * (Redis's removeChannelsInSlot); the client resubscribes where the slot
 * went. */
struct lost_slots {
    atomic_int refs;
    unsigned char bits[16384 / 8];
};

static void drop_shard_job(struct worker *w, void *arg)
{
    struct lost_slots *ls = arg;
    struct dict *d = w->ps_maps[PS_SHARD];
    size_t n = d ? dict_size(d) : 0;
    if (n) {
        /* The names first: unsubscribing changes the map. */
        struct lname **hit = hk_malloc(sizeof(*hit) * n);
        size_t k = 0;
        struct dict_iter it = {0};
        struct dict_link *l;
        while ((l = dict_next(d, &it)) && k < n) {
            struct lname *ln = (struct lname *)l;
            unsigned s = key_slot(ln->name, ln->len);
            if (ls->bits[s >> 3] & (1u << (s & 7)))
                hit[k++] = ln;
        }
        for (size_t i = 0; i < k; i++) {
            size_t len = hit[i]->len;
            char *name = hk_malloc(len + 1);
            memcpy(name, hit[i]->name, len + 1);
            int nsub = hit[i]->n;
            struct client **subs = hk_malloc(sizeof(*subs) * (size_t)(nsub ? nsub : 1));
            memcpy(subs, hit[i]->subs, sizeof(*subs) * (size_t)nsub);
            for (int j = 0; j < nsub; j++) {
                struct client *c = subs[j];
                if (!unsubscribe_one(c, PS_SHARD, name, len))
                    continue;
                struct reply *o = client_push_target(c);
                int muted = o->muted;
                o->muted = 0;
                reply_push(o, 3);
                reply_bulk_cstr(o, "sunsubscribe");
                reply_bulk(o, name, len);
                reply_int(o, reply_count(c, PS_SHARD));
                o->muted = muted;
                update_mode(c);
                if (o == &c->out)
                    client_push_ready(c);
            }
            hk_free(subs);
            hk_free(name);
        }
        hk_free(hit);
    }
    if (atomic_fetch_sub(&ls->refs, 1) == 1)
        hk_free(ls);
}

void pubsub_drop_shard_slots(const unsigned char *bits)
{
    struct lost_slots *ls = hk_malloc(sizeof(*ls));
    memcpy(ls->bits, bits, sizeof(ls->bits));
    atomic_init(&ls->refs, nworkers);
    for (int i = 0; i < nworkers; i++)
        worker_post(&workers[i], drop_shard_job, ls);
}

void pubsub_deliver_from_bus(int shard, const char *ch, size_t clen, const char *msg, size_t mlen)
{
    if (!reg[PS_CHAN] || !atomic_load_explicit(&reg_listened, memory_order_relaxed))
        return;
    publish_msg(NULL, ch, clen, msg, mlen, shard, 0);
}

long pubsub_publish_internal(const char *ch, size_t clen, const char *msg, size_t mlen)
{
    if (!reg[PS_CHAN] || !atomic_load_explicit(&reg_listened, memory_order_relaxed))
        return 0; /* before start-up, or nobody subscribed to anything */
    return publish_msg(cur_worker, ch, clen, msg, mlen, 0, 0);
}

void publish_command(struct client *c)
{
    do_publish(c, 0);
}
void spublish_command(struct client *c)
{
    do_publish(c, 1);
}

/* ------------------------------------------------------------ PUBSUB --- */
static void channels_reply(struct client *c, int kind)
{
    const char *pat = c->argc == 3 ? c->argv[2] : NULL;
    size_t plen = c->argc == 3 ? c->argvlen[2] : 0;
    size_t mark = reply_defer(&c->out);
    long n = 0;
    pthread_rwlock_rdlock(&reg_lock);
    struct dict_iter it = {0};
    struct dict_link *l;
    while ((l = dict_next(reg[kind], &it))) {
        const struct gname *g = (const struct gname *)l;
        if (pat && !glob_match(pat, plen, g->name, g->len, 0))
            continue;
        reply_bulk(&c->out, g->name, g->len);
        n++;
    }
    pthread_rwlock_unlock(&reg_lock);
    reply_defer_array(&c->out, mark, n);
}

static void numsub_reply(struct client *c, int kind)
{
    reply_array(&c->out, (long long)(c->argc - 2) * 2); /* a flat array in RESP3 too, as Redis */
    pthread_rwlock_rdlock(&reg_lock);
    for (int i = 2; i < c->argc; i++) {
        const struct gname *g = (const struct gname *)dict_find(reg[kind], c->argv[i], c->argvlen[i]);
        reply_bulk(&c->out, c->argv[i], c->argvlen[i]);
        reply_int(&c->out, g ? g->total : 0);
    }
    pthread_rwlock_unlock(&reg_lock);
}

void pubsub_command(struct client *c)
{
    static const char *const help[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Print this help.",
    };
    const char *sub = c->cmd->name + 7; /* after "pubsub|" */
    if ((!strcmp(sub, "channels") || !strcmp(sub, "shardchannels")) && c->argc > 3) {
        reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.",
                     (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]), c->argv[1]);
        return;
    }
    if (!strcmp(sub, "help")) {
        reply_array(&c->out, (long long)(sizeof(help) / sizeof(help[0])));
        for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
            reply_status(&c->out, help[i]);
    } else if (!strcmp(sub, "channels")) {
        channels_reply(c, PS_CHAN);
    } else if (!strcmp(sub, "shardchannels")) {
        channels_reply(c, PS_SHARD);
    } else if (!strcmp(sub, "numsub")) {
        numsub_reply(c, PS_CHAN);
    } else if (!strcmp(sub, "shardnumsub")) {
        numsub_reply(c, PS_SHARD);
    } else if (!strcmp(sub, "numpat")) {
        reply_int(&c->out, pubsub_num_patterns());
    }
}

/* ACL (cmd/acl.c): call fn on every name c holds, kind by kind (0
 * channels, 1 patterns, 2 shard channels) until it returns non-zero.
 * Owner thread. */
void pubsub_client_each(struct client *c, int (*fn)(void *arg, int kind, const char *name, size_t len), void *arg)
{
    for (int kind = 0; kind < 3; kind++) {
        if (!c->ps_subs[kind])
            continue;
        struct dict_iter it = {0};
        struct dict_link *l;
        while ((l = dict_next(c->ps_subs[kind], &it))) {
            const struct cname *cn = (const struct cname *)l;
            if (fn(arg, kind, cn->name, cn->len))
                return;
        }
    }
}
