/* tracking.c - server-assisted client-side caching across worker threads.
 * See tracking.h for the model; the state and who may touch it:
 *
 *   ttab[slot]      key -> ids of the clients that may cache it (default
 *                   mode).  Slot lock.  An id is packed with the worker
 *                   that owns the client (wid << 48 | id).  Entries of
 *                   clients that left or turned tracking off stay until the
 *                   key is modified or evicted, as in Redis (lazy cleanup).
 *   tk_slotbits     one bit per slot whose table is not empty (atomic
 *                   words; set/cleared under the slot lock) for the random
 *                   eviction of tracking-table-max-keys.
 *   bc_dict         prefix -> packed ids of the BCAST clients (bc_lock, a
 *                   rwlock: written by CLIENT TRACKING, read after a
 *                   command; never held with a slot lock or while posting).
 *   maps[wid]       id -> client of that worker's clients that have a
 *                   c->trk (tracking clients and redirect targets); owner
 *                   thread only.  Jobs find their recipient here.
 *   c->trk          the client's mode: owner thread only.
 *   thread-local    the invalidations found by the running command
 *                   (tl_items: key invalidations and flush markers,
 *                   tl_bc: keys modified while BCAST prefixes exist), jobs
 *                   that arrived while a command was running (tl_defer),
 *                   and the per-worker outgoing buffers (tl_out).
 *
 * Messages between workers are byte strings of items:
 *   'K' id klen key        invalidate key for tracking client id
 *   'N'                    FLUSHALL/FLUSHDB: null to every tracking client
 *   'B' n ids.. m (mod klen key)..  BCAST keys for clients ids (mod: the
 *                          modifying client, for NOLOOP)
 *   'F' redir src srcwid vlen value   deliver value to redirect client redir
 *   'X' src redir          redir is gone: tell src (tracking-redir-broken) */
#include "tracking.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../ds/dict.h"
#include "commands.h"
#include "multi.h"

#define TK_BCAST 0x01
#define TK_OPTIN 0x02
#define TK_OPTOUT 0x04
#define TK_NOLOOP 0x08
#define TK_CACHING 0x10
#define TK_BROKEN 0x20

#define ID_MASK ((1ull << 48) - 1)
#define PACK(id, wid) (((uint64_t)(wid) << 48) | ((uint64_t)(id) & ID_MASK))
#define P_ID(v) ((v) & ID_MASK)
#define P_WID(v) ((int)((v) >> 48))

struct tprefix {
    size_t len;
    char *p;
};

struct tracking_client {
    unsigned flags;
    uint64_t redir;          /* REDIRECT client id, 0 = none */
    int redir_wid;           /* its worker */
    int nprefix, capprefix;  /* BCAST prefixes, sorted as Redis's rax */
    struct tprefix *prefixes;
};

_Thread_local struct client *tracking_cur;
_Thread_local int tracking_pending;
atomic_int tracking_used;
long long tracking_table_max_keys = 1000000;

static atomic_long tk_nclients;

/* Keys and items in the table: one pair of counters per worker (the last
 * for any other thread), each moved by its own thread whoever added the
 * entry, summed on read, so tracked reads on many threads share no
 * counter. */
#define MAX_COUNTERS 1025
static struct tkcount {
    atomic_llong keys, items;
} __attribute__((aligned(64))) counts[MAX_COUNTERS];

static struct tkcount *my_count(void)
{
    return &counts[cur_worker && cur_worker->id < MAX_COUNTERS - 1 ? cur_worker->id : MAX_COUNTERS - 1];
}

static long long count_sum(int items)
{
    long long n = 0;
    int lim = nworkers < MAX_COUNTERS - 1 ? nworkers : MAX_COUNTERS - 1;
    for (int i = 0; i < lim; i++)
        n += atomic_load_explicit(items ? &counts[i].items : &counts[i].keys, memory_order_relaxed);
    n += atomic_load_explicit(items ? &counts[MAX_COUNTERS - 1].items : &counts[MAX_COUNTERS - 1].keys,
                              memory_order_relaxed);
    return n;
}

/* ------------------------------------------------------------ buffers --- */
struct tbuf {
    char *p;
    size_t len, cap;
};

static void tb_put(struct tbuf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->len + n)
            nc *= 2;
        b->p = hk_realloc(b->p, nc);
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
static void tb_u8(struct tbuf *b, char v)
{
    tb_put(b, &v, 1);
}
static void tb_u64(struct tbuf *b, uint64_t v)
{
    tb_put(b, &v, 8);
}
static void tb_u32(struct tbuf *b, uint32_t v)
{
    tb_put(b, &v, 4);
}
static void tb_str(struct tbuf *b, const char *s, size_t n)
{
    tb_u32(b, (uint32_t)n);
    tb_put(b, s, n);
}
/* "$<n>\r\n<s>\r\n" */
static void tb_bulk(struct tbuf *b, const char *s, size_t n)
{
    char h[32];
    int l = snprintf(h, sizeof(h), "$%zu\r\n", n);
    tb_put(b, h, (size_t)l);
    tb_put(b, s, n);
    tb_put(b, "\r\n", 2);
}
static void tb_arrhdr(struct tbuf *b, long n)
{
    char h[32];
    int l = snprintf(h, sizeof(h), "*%ld\r\n", n);
    tb_put(b, h, (size_t)l);
}

/* Reading an item stream. */
struct rd {
    const char *p, *end;
};
static uint64_t rd_u64(struct rd *r)
{
    uint64_t v;
    memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}
static uint32_t rd_u32(struct rd *r)
{
    uint32_t v;
    memcpy(&v, r->p, 4);
    r->p += 4;
    return v;
}
static const char *rd_str(struct rd *r, size_t *n)
{
    *n = rd_u32(r);
    const char *s = r->p;
    r->p += *n;
    return s;
}

/* --------------------------------------------- per-worker id -> client --- */
struct tkmap {
    uint64_t *ids;          /* 0 = empty */
    struct client **cl;
    uint32_t cap, n;
};
static struct tkmap *maps;
static int nmaps;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;

static void maps_init(void)
{
    nmaps = nworkers > 0 ? nworkers : 1;
    maps = hk_calloc(sizeof(*maps) * (size_t)nmaps);
}

static struct tkmap *map_of(int wid)
{
    pthread_once(&maps_once, maps_init);
    return &maps[wid];
}

static uint32_t idhash(uint64_t id)
{
    return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32);
}

static struct client *map_get(struct tkmap *m, uint64_t id)
{
    if (!m->cap)
        return NULL;
    for (uint32_t i = idhash(id) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->ids[i] == id)
            return m->cl[i];
        if (!m->ids[i])
            return NULL;
    }
}

static void map_insert(struct tkmap *m, uint64_t id, struct client *c)
{
    uint32_t i = idhash(id) & (m->cap - 1);
    while (m->ids[i] && m->ids[i] != id)
        i = (i + 1) & (m->cap - 1);
    if (!m->ids[i])
        m->n++;
    m->ids[i] = id;
    m->cl[i] = c;
}

static void map_put(struct tkmap *m, uint64_t id, struct client *c)
{
    if ((m->n + 1) * 2 > m->cap) {
        uint64_t *oids = m->ids;
        struct client **ocl = m->cl;
        uint32_t ocap = m->cap;
        m->cap = ocap ? ocap * 2 : 16;
        m->ids = hk_calloc(sizeof(*m->ids) * m->cap);
        m->cl = hk_calloc(sizeof(*m->cl) * m->cap);
        m->n = 0;
        for (uint32_t i = 0; i < ocap; i++)
            if (oids[i])
                map_insert(m, oids[i], ocl[i]);
        hk_free(oids);
        hk_free(ocl);
    }
    map_insert(m, id, c);
}

/* Linear probing with backward-shift deletion (no tombstones). */
static void map_del(struct tkmap *m, uint64_t id)
{
    if (!m->cap)
        return;
    uint32_t mask = m->cap - 1, i = idhash(id) & mask;
    while (m->ids[i] != id) {
        if (!m->ids[i])
            return;
        i = (i + 1) & mask;
    }
    m->n--;
    for (uint32_t j = i;;) {
        j = (j + 1) & mask;
        if (!m->ids[j])
            break;
        uint32_t k = idhash(m->ids[j]) & mask;
        /* Entry j stays if its home k lies cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        m->ids[i] = m->ids[j];
        m->cl[i] = m->cl[j];
        i = j;
    }
    m->ids[i] = 0;
    m->cl[i] = NULL;
}

/* c's tracking state, created (and c registered in its worker's map) on
 * first use.  Owner thread only. */
static struct tracking_client *trk_get(struct client *c)
{
    if (!c->trk) {
        c->trk = hk_calloc(sizeof(*c->trk));
        map_put(map_of(c->w->id), c->id, c);
    }
    return c->trk;
}

/* ------------------------------------------------- invalidation table --- */
struct tkey {
    struct dict_link link;
    uint32_t n, cap;  /* cap <= LINEAR_MAX: ids[0..n) ; else open addressing */
    uint64_t *ids;    /* packed (wid, id); 0 = empty slot */
    uint32_t klen;
    char key[];
};
#define LINEAR_MAX 16

static const char *tkey_key(const struct dict_link *it, size_t *len)
{
    const struct tkey *k = (const struct tkey *)it;
    *len = k->klen;
    return k->key;
}
static const struct dict_type tkey_type = {tkey_key};

static struct dict *ttab[NSLOTS];
static _Atomic uint64_t tk_slotbits[NSLOTS / 64];

static void slotbit(unsigned s, int on)
{
    if (on)
        atomic_fetch_or_explicit(&tk_slotbits[s >> 6], 1ull << (s & 63), memory_order_relaxed);
    else
        atomic_fetch_and_explicit(&tk_slotbits[s >> 6], ~(1ull << (s & 63)), memory_order_relaxed);
}

static void ids_hash_insert(struct tkey *k, uint64_t v)
{
    uint32_t mask = k->cap - 1;
    for (uint32_t i = idhash(v) & mask;; i = (i + 1) & mask) {
        if (!k->ids[i]) {
            k->ids[i] = v;
            k->n++;
            return;
        }
    }
}

static void ids_rehash(struct tkey *k, uint32_t ncap)
{
    uint64_t *old = k->ids;
    uint32_t ocap = k->cap, on = k->n, lim = ocap <= LINEAR_MAX ? on : ocap;
    k->ids = hk_calloc(sizeof(uint64_t) * ncap);
    k->cap = ncap;
    k->n = 0;
    for (uint32_t i = 0; i < lim; i++)
        if (old[i])
            ids_hash_insert(k, old[i]);
    hk_free(old);
}

/* Returns 1 if v was not in k yet. */
static int ids_add(struct tkey *k, uint64_t v)
{
    if (k->cap <= LINEAR_MAX) {
        for (uint32_t i = 0; i < k->n; i++)
            if (k->ids[i] == v)
                return 0;
        if (k->n < k->cap) {
            k->ids[k->n++] = v;
            return 1;
        }
        if (k->cap < LINEAR_MAX) {
            k->cap = k->cap ? k->cap * 2 : 2;
            k->ids = hk_realloc(k->ids, sizeof(uint64_t) * k->cap);
            k->ids[k->n++] = v;
            return 1;
        }
        ids_rehash(k, 64);
    }
    uint32_t mask = k->cap - 1;
    for (uint32_t i = idhash(v) & mask;; i = (i + 1) & mask) {
        if (k->ids[i] == v)
            return 0;
        if (!k->ids[i])
            break;
    }
    if ((k->n + 1) * 2 > k->cap)
        ids_rehash(k, k->cap * 2);
    ids_hash_insert(k, v);
    return 1;
}

static void tkey_free(struct dict_link *it)
{
    struct tkey *k = (struct tkey *)it;
    hk_free(k->ids);
    hk_free(k);
}

/* ------------------------------------------------------ BCAST prefixes --- */
struct bpfx {
    struct dict_link link;
    uint64_t *ids; /* packed */
    int n, cap;
    size_t len;
    char p[];
};
static const char *bpfx_key(const struct dict_link *it, size_t *len)
{
    const struct bpfx *b = (const struct bpfx *)it;
    *len = b->len;
    return b->p;
}
static const struct dict_type bpfx_type = {bpfx_key};
static pthread_rwlock_t bc_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dict *bc_dict;  /* bc_lock */
static atomic_int bc_nprefix; /* dict size, read without the lock */

/* bc_lock held for writing. */
static void bc_add(const char *p, size_t len, uint64_t v)
{
    if (!bc_dict)
        bc_dict = dict_new(&bpfx_type, 0);
    struct bpfx *b = (struct bpfx *)dict_find(bc_dict, p, len);
    if (!b) {
        b = hk_calloc(sizeof(*b) + len + 1);
        b->len = len;
        memcpy(b->p, p, len);
        dict_add(bc_dict, &b->link);
        atomic_fetch_add(&bc_nprefix, 1);
    }
    for (int i = 0; i < b->n; i++)
        if (b->ids[i] == v)
            return;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->ids = hk_realloc(b->ids, sizeof(uint64_t) * (size_t)b->cap);
    }
    b->ids[b->n++] = v;
}

/* bc_lock held for writing. */
static void bc_del(const char *p, size_t len, uint64_t v)
{
    struct bpfx *b = bc_dict ? (struct bpfx *)dict_find(bc_dict, p, len) : NULL;
    if (!b)
        return;
    for (int i = 0; i < b->n; i++) {
        if (b->ids[i] == v) {
            b->ids[i] = b->ids[--b->n];
            break;
        }
    }
    if (b->n == 0) {
        dict_remove(bc_dict, p, len);
        hk_free(b->ids);
        hk_free(b);
        atomic_fetch_sub(&bc_nprefix, 1);
    }
}

/* Redis's rax order: bytewise, a prefix before its extensions. */
static int keycmp(const char *a, size_t al, const char *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    if (r)
        return r;
    return al < bl ? -1 : al > bl;
}

/* ------------------------------------------------- thread-local batch --- */
struct bckey {
    struct dict_link link;
    uint64_t mod; /* modifying client id (0: none, e.g. expiry) */
    size_t klen;
    char key[];
};
static const char *bckey_key(const struct dict_link *it, size_t *len)
{
    const struct bckey *k = (const struct bckey *)it;
    *len = k->klen;
    return k->key;
}
static const struct dict_type bckey_type = {bckey_key};
static void bckey_free(struct dict_link *it)
{
    hk_free(it);
}

static _Thread_local struct tbuf tl_items; /* 'K' (packed target) and 'N' */
static _Thread_local struct dict *tl_bc;   /* BCAST keys of this command */
static _Thread_local struct tbuf tl_defer; /* jobs received during a command */
static _Thread_local struct tbuf *tl_out;  /* per destination worker */
static _Thread_local int tl_nout;
/* The workers' outboxes stay reachable from here (LeakSanitizer does not
 * scan the thread-locals of threads that have exited). */
static struct tbuf **outboxes;
static pthread_once_t outboxes_once = PTHREAD_ONCE_INIT;

static void outboxes_init(void)
{
    outboxes = hk_calloc(sizeof(*outboxes) * (size_t)(nworkers > 0 ? nworkers : 1));
}

static struct tbuf *outbox(void)
{
    if (!tl_out) {
        tl_nout = nworkers > 0 ? nworkers : 1;
        tl_out = hk_calloc(sizeof(*tl_out) * (size_t)tl_nout);
        if (cur_worker) {
            pthread_once(&outboxes_once, outboxes_init);
            outboxes[cur_worker->id] = tl_out;
        }
    }
    return tl_out;
}

static void tk_job(struct worker *w, void *arg);

struct tjob {
    size_t len;
    char *p;
};

static void post_outbox(void)
{
    struct tbuf *out = outbox();
    for (int i = 0; i < tl_nout; i++) {
        if (!out[i].len)
            continue;
        struct tjob *j = hk_malloc(sizeof(*j));
        j->len = out[i].len;
        j->p = out[i].p;
        out[i].p = NULL;
        out[i].len = out[i].cap = 0;
        worker_post(&workers[i], tk_job, j);
    }
}

static void note_pending(void)
{
    tracking_pending = 1;
    /* Not on a worker (no flush point will come): send now.  No caller
     * does this today; posting takes only leaf locks. */
    if (!cur_worker)
        tracking_flush();
}

/* ------------------------------------------------------------ sending --- */
/* Append to a client outside its command: pushes go out even under CLIENT
 * REPLY OFF, as Redis's CLIENT_PUSHING. */
static int can_send(const struct client *x)
{
    return !(x->flags & (CF_CLOSE_ASAP | CF_CLOSE_AFTER_REPLY));
}

static void push_invalidate(struct client *x, const char *val, size_t vlen)
{
    if (!can_send(x))
        return;
    struct reply *o = client_push_target(x); /* never inside x's own reply */
    int muted = o->muted;
    o->muted = 0;
    reply_push(o, 2);
    reply_bulk(o, "invalidate", 10);
    reply_raw(o, val, vlen);
    o->muted = muted;
    if (o == &x->out)
        client_output_ready(x);
}

/* The redirect client r receives src's invalidation: a RESP3 push, or a
 * pub/sub message on __redis__:invalidate when it is a RESP2 subscriber. */
static void to_redirect(struct client *r, const char *val, size_t vlen)
{
    if (r->out.resp == 3) {
        push_invalidate(r, val, vlen);
    } else if ((r->flags & CF_PUBSUB) && can_send(r)) {
        static const char hdr[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
        struct reply *o = client_push_target(r);
        int muted = o->muted;
        o->muted = 0;
        reply_raw(o, hdr, sizeof(hdr) - 1);
        reply_raw(o, val, vlen);
        o->muted = muted;
        if (o == &r->out)
            client_output_ready(r);
    }
}

static void redir_broken(struct client *a)
{
    struct tracking_client *tk = a->trk;
    tk->flags |= TK_BROKEN;
    if (a->out.resp == 3 && can_send(a)) {
        struct reply *o = client_push_target(a);
        int muted = o->muted;
        o->muted = 0;
        reply_push(o, 2);
        reply_bulk(o, "tracking-redir-broken", 21);
        reply_int(o, (long long)tk->redir);
        o->muted = muted;
        if (o == &a->out)
            client_output_ready(a);
    }
}

/* Redis's sendTrackingMessage, on a's worker: val is the RESP value (the
 * array of keys, or a null). */
static void send_tracking(int me, struct client *a, const char *val, size_t vlen)
{
    struct tracking_client *tk = a->trk;
    if (!tk->redir) {
        if (a->out.resp == 3)
            push_invalidate(a, val, vlen);
        /* RESP2 without redirection: nothing can be sent. */
        return;
    }
    if (tk->redir_wid == me) {
        struct client *r = map_get(map_of(me), tk->redir);
        if (!r)
            redir_broken(a);
        else
            to_redirect(r, val, vlen);
        return;
    }
    struct tbuf *o = &outbox()[tk->redir_wid];
    tb_u8(o, 'F');
    tb_u64(o, tk->redir);
    tb_u64(o, a->id);
    tb_u32(o, (uint32_t)me);
    tb_str(o, val, vlen);
}

static int tracks_default(const struct client *a)
{
    return a && (a->flags & CF_TRACKING) && a->trk && !(a->trk->flags & TK_BCAST);
}

/* Handle an item stream on worker me (owner thread, between commands). */
static void process_items(int me, const char *p, size_t len)
{
    struct tkmap *m = map_of(me);
    struct rd r = {p, p + len};
    struct tbuf val = {0};
    while (r.p < r.end) {
        char t = *r.p++;
        if (t == 'K') {
            uint64_t id = rd_u64(&r);
            size_t klen;
            const char *key = rd_str(&r, &klen);
            struct client *a = map_get(m, id);
            if (!tracks_default(a))
                continue;
            val.len = 0;
            tb_arrhdr(&val, 1);
            tb_bulk(&val, key, klen);
            send_tracking(me, a, val.p, val.len);
        } else if (t == 'N') {
            for (uint32_t i = 0; i < m->cap; i++) {
                struct client *a = m->ids[i] ? m->cl[i] : NULL;
                if (!a || !(a->flags & CF_TRACKING))
                    continue;
                /* The null in the tracking client's own protocol, as
                 * Redis (even when it goes to a redirect client). */
                if (a->out.resp == 3)
                    send_tracking(me, a, "_\r\n", 3);
                else
                    send_tracking(me, a, "$-1\r\n", 5);
            }
        } else if (t == 'B') {
            uint32_t nids = rd_u32(&r);
            const char *ids = r.p;
            r.p += 8 * (size_t)nids;
            uint32_t nkeys = rd_u32(&r);
            const char *keys = r.p;
            for (uint32_t k = 0; k < nkeys; k++) {
                size_t kl;
                r.p += 8;
                rd_str(&r, &kl);
            }
            const char *kend = r.p;
            int full_built = 0;
            struct tbuf own = {0};
            for (uint32_t i = 0; i < nids; i++) {
                uint64_t id;
                memcpy(&id, ids + 8 * (size_t)i, 8);
                struct client *a = map_get(m, id);
                if (!a || !(a->flags & CF_TRACKING) || !a->trk || !(a->trk->flags & TK_BCAST))
                    continue;
                if (a->trk->flags & TK_NOLOOP) {
                    /* Leave out the keys this client modified itself. */
                    struct rd kr = {keys, kend};
                    long cnt = 0;
                    for (uint32_t k = 0; k < nkeys; k++) {
                        size_t kl;
                        uint64_t mod = rd_u64(&kr);
                        rd_str(&kr, &kl);
                        cnt += mod != a->id;
                    }
                    if (!cnt)
                        continue;
                    own.len = 0;
                    tb_arrhdr(&own, cnt);
                    kr.p = keys;
                    for (uint32_t k = 0; k < nkeys; k++) {
                        size_t kl;
                        uint64_t mod = rd_u64(&kr);
                        const char *kp = rd_str(&kr, &kl);
                        if (mod != a->id)
                            tb_bulk(&own, kp, kl);
                    }
                    send_tracking(me, a, own.p, own.len);
                    continue;
                }
                if (!full_built) {
                    struct rd kr = {keys, kend};
                    val.len = 0;
                    tb_arrhdr(&val, (long)nkeys);
                    for (uint32_t k = 0; k < nkeys; k++) {
                        size_t kl;
                        rd_u64(&kr);
                        const char *kp = rd_str(&kr, &kl);
                        tb_bulk(&val, kp, kl);
                    }
                    full_built = 1;
                }
                send_tracking(me, a, val.p, val.len);
            }
            hk_free(own.p);
        } else if (t == 'F') {
            uint64_t redir = rd_u64(&r), src = rd_u64(&r);
            int srcwid = (int)rd_u32(&r);
            size_t vlen;
            const char *v = rd_str(&r, &vlen);
            struct client *x = map_get(m, redir);
            if (x) {
                to_redirect(x, v, vlen);
            } else {
                struct tbuf *o = &outbox()[srcwid];
                tb_u8(o, 'X');
                tb_u64(o, src);
                tb_u64(o, redir);
            }
        } else if (t == 'X') {
            uint64_t src = rd_u64(&r), redir = rd_u64(&r);
            struct client *a = map_get(m, src);
            if (a && (a->flags & CF_TRACKING) && a->trk && a->trk->redir == redir)
                redir_broken(a);
        } else {
            break; /* cannot happen */
        }
    }
    hk_free(val.p);
}

static void tk_job(struct worker *w, void *arg)
{
    struct tjob *j = arg;
    if (tracking_cur) {
        /* A command is running on this thread (a job queue served while
         * it waits, e.g. in worker_broadcast): its client may be in the
         * middle of a reply.  Deliver when the command is over. */
        tb_put(&tl_defer, j->p, j->len);
        tracking_pending = 1;
    } else {
        process_items(w->id, j->p, j->len);
        post_outbox();
    }
    hk_free(j->p);
    hk_free(j);
}

static int bckey_cmp(const void *a, const void *b)
{
    const struct bckey *x = *(struct bckey *const *)a, *y = *(struct bckey *const *)b;
    return keycmp(x->key, x->klen, y->key, y->klen);
}

/* Recipients on this worker are served at once (local) unless one of
 * them is blocked: a client served by this very command (BLMOVE) must get
 * its reply, which is on this worker's job queue, first. */
static int local_ok(int me, const uint64_t *ids, int n, int packed)
{
    struct tkmap *m = map_of(me);
    for (int i = 0; i < n; i++) {
        if (packed && P_WID(ids[i]) != me)
            continue;
        struct client *a = map_get(m, packed ? P_ID(ids[i]) : ids[i]);
        if (a && (a->flags & CF_BLOCKED))
            return 0;
    }
    return 1;
}

/* The BCAST keys of the command: one 'B' item per (prefix, worker) with
 * the prefix's matching keys, in key order. */
static void route_bcast(int me, struct tbuf *local)
{
    size_t n = dict_size(tl_bc);
    struct bckey **v = hk_malloc(sizeof(*v) * n), **mk = hk_malloc(sizeof(*mk) * n);
    struct dict_iter it = {0};
    struct dict_link *l;
    size_t k = 0;
    while ((l = dict_next(tl_bc, &it)) && k < n)
        v[k++] = (struct bckey *)l;
    qsort(v, k, sizeof(*v), bckey_cmp);
    struct tbuf *out = outbox();
    pthread_rwlock_rdlock(&bc_lock);
    if (bc_dict) {
        struct dict_iter pi = {0};
        while ((l = dict_next(bc_dict, &pi))) {
            const struct bpfx *b = (const struct bpfx *)l;
            size_t nm = 0;
            for (size_t i = 0; i < k; i++)
                if (v[i]->klen >= b->len && memcmp(v[i]->key, b->p, b->len) == 0)
                    mk[nm++] = v[i];
            if (!nm)
                continue;
            for (int w = 0; w < tl_nout; w++) {
                uint32_t cnt = 0;
                for (int i = 0; i < b->n; i++)
                    cnt += P_WID(b->ids[i]) == w;
                if (!cnt)
                    continue;
                struct tbuf *o = w == me && local_ok(me, b->ids, b->n, 1) ? local : &out[w];
                tb_u8(o, 'B');
                tb_u32(o, cnt);
                for (int i = 0; i < b->n; i++)
                    if (P_WID(b->ids[i]) == w)
                        tb_u64(o, P_ID(b->ids[i]));
                tb_u32(o, (uint32_t)nm);
                for (size_t i = 0; i < nm; i++) {
                    tb_u64(o, mk[i]->mod);
                    tb_str(o, mk[i]->key, mk[i]->klen);
                }
            }
        }
    }
    pthread_rwlock_unlock(&bc_lock);
    hk_free(v);
    hk_free(mk);
    dict_free(tl_bc, bckey_free);
    tl_bc = NULL;
}

/* Send what this thread found (no slot lock held): at the end of a
 * command (the running client's reply is complete, so its own
 * invalidations follow it), before one (tracking-table-max-keys), or
 * from the cron. */
void tracking_flush(void)
{
    int me = cur_worker ? cur_worker->id : -1;
    struct tbuf *out = outbox();
    struct tbuf local = {0};
    tracking_pending = 0;

    if (tl_items.len) {
        struct tbuf items = tl_items;
        tl_items.p = NULL;
        tl_items.len = tl_items.cap = 0;
        struct rd r = {items.p, items.p + items.len};
        while (r.p < r.end) {
            char t = *r.p++;
            if (t == 'K') {
                uint64_t v = rd_u64(&r);
                size_t klen;
                const char *key = rd_str(&r, &klen);
                int wid = P_WID(v);
                uint64_t id = P_ID(v);
                /* This worker's recipients (the running client's own right
                 * after its reply) now; the others' workers through their
                 * job queues. */
                struct tbuf *dst = wid == me && local_ok(me, &id, 1, 0) ? &local : &out[wid];
                tb_u8(dst, 'K');
                tb_u64(dst, id);
                tb_str(dst, key, klen);
            } else if (t == 'N') {
                for (int w = 0; w < tl_nout; w++)
                    tb_u8(w == me ? &local : &out[w], 'N');
            }
        }
        hk_free(items.p);
    }
    if (tl_bc && dict_size(tl_bc))
        route_bcast(me, &local);
    if (local.len) {
        process_items(me, local.p, local.len);
        hk_free(local.p);
    }
    if (tl_defer.len && me >= 0) {
        struct tbuf d = tl_defer;
        tl_defer.p = NULL;
        tl_defer.len = tl_defer.cap = 0;
        process_items(me, d.p, d.len);
        hk_free(d.p);
    }
    post_outbox();
}

/* ---------------------------------------------------- remember / evict --- */
static int is_ro_script(const struct cmd *cmd)
{
    /* Redis skips EVAL_RO / EVALSHA_RO / FCALL_RO themselves: the keys of
     * the commands they run are tracked instead. */
    return !strcmp(cmd->name, "eval_ro") || !strcmp(cmd->name, "evalsha_ro") || !strcmp(cmd->name, "fcall_ro");
}

void tracking_remember_keys_slow(struct client *exec)
{
    struct client *t = tracking_cur ? tracking_cur : exec;
    struct tracking_client *tk = t->trk;
    const struct cmd *cmd = exec->cmd;
    if (!tk || (tk->flags & TK_BCAST))
        return;
    unsigned optin = tk->flags & TK_OPTIN, optout = tk->flags & TK_OPTOUT, caching = tk->flags & TK_CACHING;
    if ((optin && !caching) || (optout && caching))
        return;
    if ((cmd->flags & CMD_PUBSUB) || is_ro_script(cmd))
        return;
    int idx[64], *kidx = exec->argc > 64 ? hk_malloc(sizeof(int) * (size_t)exec->argc) : idx;
    int nk = cmd_keys(cmd, exec, kidx, exec->argc);
    uint64_t v = PACK(t->id, t->w->id);
    for (int i = 0; i < nk; i++) {
        const char *key = exec->argv[kidx[i]];
        size_t klen = exec->argvlen[kidx[i]];
        unsigned s = key_slot(key, klen);
        struct dict *d = ttab[s];
        if (!d)
            d = ttab[s] = dict_new(&tkey_type, 0);
        struct tkey *k = (struct tkey *)dict_find(d, key, klen);
        if (!k) {
            k = hk_calloc(sizeof(*k) + klen);
            k->klen = (uint32_t)klen;
            memcpy(k->key, key, klen);
            dict_add(d, &k->link);
            if (dict_size(d) == 1)
                slotbit(s, 1);
            atomic_fetch_add_explicit(&my_count()->keys, 1, memory_order_relaxed);
        }
        if (ids_add(k, v))
            atomic_fetch_add_explicit(&my_count()->items, 1, memory_order_relaxed);
    }
    if (kidx != idx)
        hk_free(kidx);
}

/* k was unlinked from its slot's table: schedule its invalidations. */
static void invalidate_entry(struct tkey *k)
{
    struct client *cur = tracking_cur;
    uint32_t lim = k->cap <= LINEAR_MAX ? k->n : k->cap;
    long n = 0;
    for (uint32_t i = 0; i < lim; i++) {
        uint64_t v = k->ids[i];
        if (!v)
            continue;
        n++;
        if (cur && cur->id == P_ID(v)) {
            /* The running client (its flags are ours to read). */
            if (!(cur->flags & CF_TRACKING) || !cur->trk || (cur->trk->flags & (TK_BCAST | TK_NOLOOP)))
                continue;
        }
        tb_u8(&tl_items, 'K');
        tb_u64(&tl_items, v);
        tb_str(&tl_items, k->key, k->klen);
    }
    struct tkcount *cnt = my_count();
    atomic_fetch_sub_explicit(&cnt->items, n, memory_order_relaxed);
    atomic_fetch_sub_explicit(&cnt->keys, 1, memory_order_relaxed);
    tkey_free(&k->link);
    if (tl_items.len)
        note_pending();
}

static void bcast_note(struct client *c, const char *key, size_t klen)
{
    if (!tl_bc)
        tl_bc = dict_new(&bckey_type, 0);
    struct bckey *b = (struct bckey *)dict_find(tl_bc, key, klen);
    if (!b) {
        b = hk_malloc(sizeof(*b) + klen);
        b->klen = klen;
        memcpy(b->key, key, klen);
        dict_add(tl_bc, &b->link);
    }
    b->mod = c ? c->id : 0;
    note_pending();
}

void tracking_invalidate_key(struct client *c, int db, unsigned slot, const char *key, size_t klen)
{
    (void)db;
    if (!atomic_load_explicit(&tracking_used, memory_order_relaxed))
        return;
    if (atomic_load_explicit(&bc_nprefix, memory_order_relaxed) > 0)
        bcast_note(c, key, klen);
    struct dict *d = ttab[slot];
    if (!d || !dict_size(d))
        return;
    struct tkey *k = (struct tkey *)dict_remove(d, key, klen);
    if (!k)
        return;
    if (!dict_size(d))
        slotbit(slot, 0);
    invalidate_entry(k);
}

void tracking_invalidate_all(struct client *c, int db)
{
    (void)c;
    (void)db;
    if (!atomic_load_explicit(&tracking_used, memory_order_relaxed))
        return;
    if (atomic_load(&tk_nclients) > 0) {
        tb_u8(&tl_items, 'N');
        note_pending();
    }
    /* Redis empties the whole table, FLUSHDB included (it is not per db). */
    for (unsigned s = 0; s < NSLOTS; s++) {
        if (ttab[s]) {
            dict_free(ttab[s], tkey_free);
            ttab[s] = NULL;
        }
    }
    for (unsigned i = 0; i < NSLOTS / 64; i++)
        atomic_store_explicit(&tk_slotbits[i], 0, memory_order_relaxed);
    /* Every change of the counters happens under some slot lock: with all
     * of them held, nobody moves them now. */
    for (int i = 0; i < MAX_COUNTERS; i++) {
        atomic_store_explicit(&counts[i].keys, 0, memory_order_relaxed);
        atomic_store_explicit(&counts[i].items, 0, memory_order_relaxed);
    }
}

/* A random slot with tracked keys, or -1. */
static int random_slot(void)
{
    unsigned start = (unsigned)(rand64() % NSLOTS);
    unsigned w0 = start >> 6;
    for (unsigned k = 0; k <= NSLOTS / 64; k++) {
        unsigned wi = (w0 + k) % (NSLOTS / 64);
        uint64_t bits = atomic_load_explicit(&tk_slotbits[wi], memory_order_relaxed);
        if (k == 0)
            bits &= ~0ull << (start & 63);
        if (bits)
            return (int)(wi * 64 + (unsigned)__builtin_ctzll(bits));
    }
    return -1;
}

/* tracking-table-max-keys: over the limit, invalidate random keys as if
 * they were modified, with an effort that grows while the table stays over
 * (Redis's trackingLimitUsedSlots).  One thread at a time; no lock held. */
static pthread_mutex_t limit_mu = PTHREAD_MUTEX_INITIALIZER;
static int limit_timeouts;

static void limit_used_slots(void)
{
    long long max = tracking_table_max_keys;
    if (!max || atomic_load(&tk_nclients) == 0)
        return;
    if (pthread_mutex_trylock(&limit_mu) != 0)
        return;
    if (count_sum(0) <= max) {
        limit_timeouts = 0;
        pthread_mutex_unlock(&limit_mu);
        return;
    }
    int effort = 100 * (limit_timeouts + 1);
    int done = 0;
    while (effort-- > 0) {
        int s = random_slot();
        if (s < 0)
            break;
        /* Never wait (a busy script may hold the slot for long): a busy
         * slot costs one unit of effort. */
        if (!spin_trylock(&ks.locks[s]))
            continue;
        struct dict *d = ttab[s];
        struct tkey *k = d && dict_size(d) ? (struct tkey *)dict_random(d) : NULL;
        if (k) {
            dict_remove(d, k->key, k->klen);
            if (!dict_size(d))
                slotbit((unsigned)s, 0);
            invalidate_entry(k);
        }
        spin_unlock(&ks.locks[s]);
        if (count_sum(0) <= max) {
            done = 1;
            break;
        }
    }
    limit_timeouts = done ? 0 : limit_timeouts + 1;
    pthread_mutex_unlock(&limit_mu);
}

void tracking_cmd_begin_slow(void)
{
    /* Redis checks the limit before every command; summing the counters
     * costs a load per worker, so every 16th command of a thread checks
     * (and the cron, ten times a second), and the first command of each
     * thread after CONFIG SET changed the limit (as Redis, that command's
     * client hears of the keys dropped before its reply). */
    static _Thread_local unsigned tick;
    static _Thread_local long long seen_max = -1;
    long long max = __atomic_load_n(&tracking_table_max_keys, __ATOMIC_RELAXED);
    int due = (++tick & 15) == 0 || max != seen_max;
    seen_max = max;
    if (max && due && count_sum(0) > max) {
        limit_used_slots();
        /* Before the command's reply, as Redis evicts in processCommand. */
        if (tracking_pending)
            tracking_flush();
    }
}

void tracking_cron(struct worker *w)
{
    if (!atomic_load_explicit(&tracking_used, memory_order_relaxed))
        return;
    if (w->id == 0)
        limit_used_slots();
    if (tracking_pending)
        tracking_flush();
}

/* End of c's command: CLIENT CACHING applies to the next command only (or
 * to the next MULTI ... EXEC), as Redis's resetClient. */
void tracking_cmd_done_client(struct client *c)
{
    struct tracking_client *tk = c->trk;
    if (!tk || !(tk->flags & TK_CACHING))
        return;
    if (multi_in_progress(c))
        return;
    if (c->cmd && !strncmp(c->cmd->name, "client", 6))
        return;
    tk->flags &= ~TK_CACHING;
}

/* ------------------------------------------------------ enable/disable --- */
static void disable_tracking(struct client *c)
{
    struct tracking_client *tk = c->trk;
    if (!tk)
        return;
    if (tk->flags & TK_BCAST) {
        uint64_t v = PACK(c->id, c->w->id);
        pthread_rwlock_wrlock(&bc_lock);
        for (int i = 0; i < tk->nprefix; i++)
            bc_del(tk->prefixes[i].p, tk->prefixes[i].len, v);
        pthread_rwlock_unlock(&bc_lock);
    }
    for (int i = 0; i < tk->nprefix; i++)
        hk_free(tk->prefixes[i].p);
    hk_free(tk->prefixes);
    tk->prefixes = NULL;
    tk->nprefix = tk->capprefix = 0;
    if (c->flags & CF_TRACKING) {
        atomic_fetch_sub(&tk_nclients, 1);
        c->flags &= ~CF_TRACKING;
        tk->flags &= ~(TK_BROKEN | TK_BCAST | TK_OPTIN | TK_OPTOUT | TK_CACHING | TK_NOLOOP);
    }
}

/* Add prefix to c's sorted set; 0 if it was there.  Owner thread. */
static int client_prefix_add(struct tracking_client *tk, const char *p, size_t len)
{
    int lo = 0, hi = tk->nprefix;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int r = keycmp(tk->prefixes[mid].p, tk->prefixes[mid].len, p, len);
        if (r == 0)
            return 0;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (tk->nprefix == tk->capprefix) {
        tk->capprefix = tk->capprefix ? tk->capprefix * 2 : 4;
        tk->prefixes = hk_realloc(tk->prefixes, sizeof(*tk->prefixes) * (size_t)tk->capprefix);
    }
    memmove(&tk->prefixes[lo + 1], &tk->prefixes[lo], sizeof(*tk->prefixes) * (size_t)(tk->nprefix - lo));
    tk->prefixes[lo].p = hk_malloc(len ? len : 1);
    memcpy(tk->prefixes[lo].p, p, len);
    tk->prefixes[lo].len = len;
    tk->nprefix++;
    return 1;
}

static void enable_tracking(struct client *c, uint64_t redir, int redir_wid, unsigned options, int nprefix,
                            const int *pidx)
{
    struct tracking_client *tk = trk_get(c);
    if (!(c->flags & CF_TRACKING))
        atomic_fetch_add(&tk_nclients, 1);
    atomic_store(&tracking_used, 1);
    c->flags |= CF_TRACKING;
    tk->flags &= ~(TK_BROKEN | TK_BCAST | TK_OPTIN | TK_OPTOUT | TK_NOLOOP);
    tk->redir = redir;
    tk->redir_wid = redir_wid;
    if (options & TK_BCAST) {
        uint64_t v = PACK(c->id, c->w->id);
        tk->flags |= TK_BCAST;
        pthread_rwlock_wrlock(&bc_lock);
        if (nprefix == 0) {
            if (client_prefix_add(tk, "", 0))
                bc_add("", 0, v);
        }
        for (int i = 0; i < nprefix; i++) {
            const char *p = c->argv[pidx[i]];
            size_t len = c->argvlen[pidx[i]];
            if (client_prefix_add(tk, p, len))
                bc_add(p, len, v);
        }
        pthread_rwlock_unlock(&bc_lock);
    }
    tk->flags |= options & (TK_OPTIN | TK_OPTOUT | TK_NOLOOP);
}

/* Find which worker owns client id (registering it in that worker's map so
 * invalidations can find it there); -1 if there is no such client. */
struct find_req {
    uint64_t id;
    atomic_int wid;
};

static void find_one(struct worker *w, void *arg)
{
    struct find_req *r = arg;
    for (struct client *c = w->clients; c; c = c->next) {
        if (c->id == r->id) {
            trk_get(c);
            atomic_store(&r->wid, w->id);
            return;
        }
    }
}

static int find_client_worker(struct client *self, uint64_t id)
{
    if (id == self->id) {
        trk_get(self);
        return self->w->id;
    }
    if (map_get(map_of(self->w->id), id))
        return self->w->id;
    struct find_req r;
    r.id = id;
    atomic_init(&r.wid, -1);
    worker_broadcast(find_one, &r);
    return atomic_load(&r.wid);
}

static int prefix_overlap(const char *a, size_t al, const char *b, size_t bl)
{
    return memcmp(a, b, al < bl ? al : bl) == 0;
}

/* Redis's checkPrefixCollisionsOrReply: 0 (and an error reply) on overlap. */
static int check_prefixes(struct client *c, const int *pidx, int n)
{
    struct tracking_client *tk = c->trk;
    for (int i = 0; i < n; i++) {
        const char *p = c->argv[pidx[i]];
        size_t pl = c->argvlen[pidx[i]];
        for (int e = 0; tk && e < tk->nprefix; e++) {
            if (prefix_overlap(tk->prefixes[e].p, tk->prefixes[e].len, p, pl)) {
                reply_errorf(&c->out,
                             "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes for a single client must not overlap.",
                             (int)pl, p, (int)tk->prefixes[e].len, tk->prefixes[e].p);
                return 0;
            }
        }
        for (int j = i + 1; j < n; j++) {
            const char *q = c->argv[pidx[j]];
            size_t ql = c->argvlen[pidx[j]];
            if (prefix_overlap(p, pl, q, ql)) {
                reply_errorf(&c->out,
                             "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. Prefixes for a single client must not overlap.",
                             (int)pl, p, (int)ql, q);
                return 0;
            }
        }
    }
    return 1;
}

/* CLIENT TRACKING (ON|OFF) [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
 * [OPTOUT] [NOLOOP] */
void client_tracking_command(struct client *c)
{
    long long redir = 0;
    int redir_wid = -1;
    unsigned options = 0;
    int stackp[16], *pidx = c->argc > 16 ? hk_malloc(sizeof(int) * (size_t)c->argc) : stackp, np = 0;

    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "redirect") && more) {
            j++;
            if (redir != 0) {
                reply_error(&c->out, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!str_to_ll(c->argv[j], c->argvlen[j], &redir)) {
                reply_error(&c->out, ERR_NOT_INT);
                goto out;
            }
            /* Must exist now (it may leave later: tracking-redir-broken). */
            redir_wid = redir > 0 ? find_client_worker(c, (uint64_t)redir) : -1;
            if (redir_wid < 0) {
                reply_error(&c->out, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (arg_is(c, j, "bcast")) {
            options |= TK_BCAST;
        } else if (arg_is(c, j, "optin")) {
            options |= TK_OPTIN;
        } else if (arg_is(c, j, "optout")) {
            options |= TK_OPTOUT;
        } else if (arg_is(c, j, "noloop")) {
            options |= TK_NOLOOP;
        } else if (arg_is(c, j, "prefix") && more) {
            j++;
            pidx[np++] = j;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            goto out;
        }
    }

    if (arg_is(c, 2, "on")) {
        if (!(options & TK_BCAST) && np) {
            reply_error(&c->out, "ERR PREFIX option requires BCAST mode to be enabled");
            goto out;
        }
        if (c->flags & CF_TRACKING) {
            int oldb = (c->trk->flags & TK_BCAST) != 0, newb = (options & TK_BCAST) != 0;
            if (oldb != newb) {
                reply_error(&c->out, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
                                     "and then re-enabling it with a different mode.");
                goto out;
            }
        }
        if ((options & TK_BCAST) && (options & (TK_OPTIN | TK_OPTOUT))) {
            reply_error(&c->out, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto out;
        }
        if ((options & TK_OPTIN) && (options & TK_OPTOUT)) {
            reply_error(&c->out, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto out;
        }
        if ((c->flags & CF_TRACKING) && (((options & TK_OPTIN) && (c->trk->flags & TK_OPTOUT)) ||
                                         ((options & TK_OPTOUT) && (c->trk->flags & TK_OPTIN)))) {
            reply_error(&c->out, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
                                 "and then re-enabling it with a different mode.");
            goto out;
        }
        if ((options & TK_BCAST) && !check_prefixes(c, pidx, np))
            goto out;
        enable_tracking(c, (uint64_t)redir, redir_wid, options, np, pidx);
    } else if (arg_is(c, 2, "off")) {
        disable_tracking(c);
    } else {
        reply_error(&c->out, ERR_SYNTAX);
        goto out;
    }
    reply_ok(&c->out);
out:
    if (pidx != stackp)
        hk_free(pidx);
}

/* CLIENT CACHING YES|NO */
void client_caching_command(struct client *c)
{
    if (!(c->flags & CF_TRACKING)) {
        reply_error(&c->out, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
        return;
    }
    struct tracking_client *tk = c->trk;
    if (arg_is(c, 2, "yes")) {
        if (!(tk->flags & TK_OPTIN)) {
            reply_error(&c->out, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (arg_is(c, 2, "no")) {
        if (!(tk->flags & TK_OPTOUT)) {
            reply_error(&c->out, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    tk->flags |= TK_CACHING;
    reply_ok(&c->out);
}

void client_getredir_command(struct client *c)
{
    reply_int(&c->out, tracking_redir(c));
}

void client_trackinginfo_command(struct client *c)
{
    const struct tracking_client *tk = c->trk;
    unsigned f = (c->flags & CF_TRACKING) && tk ? tk->flags : 0;
    const char *flags[8];
    int n = 0;
    flags[n++] = (c->flags & CF_TRACKING) ? "on" : "off";
    if (f & TK_BCAST)
        flags[n++] = "bcast";
    if (f & TK_OPTIN) {
        flags[n++] = "optin";
        if (f & TK_CACHING)
            flags[n++] = "caching-yes";
    }
    if (f & TK_OPTOUT) {
        flags[n++] = "optout";
        if (f & TK_CACHING)
            flags[n++] = "caching-no";
    }
    if (f & TK_NOLOOP)
        flags[n++] = "noloop";
    if (f & TK_BROKEN)
        flags[n++] = "broken_redirect";
    reply_map(&c->out, 3);
    reply_bulk_cstr(&c->out, "flags");
    reply_set(&c->out, n);
    for (int i = 0; i < n; i++)
        reply_bulk_cstr(&c->out, flags[i]);
    reply_bulk_cstr(&c->out, "redirect");
    reply_int(&c->out, tracking_redir(c));
    reply_bulk_cstr(&c->out, "prefixes");
    int np = tk ? tk->nprefix : 0;
    reply_array(&c->out, np);
    for (int i = 0; i < np; i++)
        reply_bulk(&c->out, tk->prefixes[i].p, tk->prefixes[i].len);
}

/* ------------------------------------------------------- life cycle --- */
void tracking_client_gone(struct client *c)
{
    if (!c->trk)
        return;
    disable_tracking(c);
    map_del(map_of(c->w->id), c->id);
    hk_free(c->trk);
    c->trk = NULL;
}

void tracking_client_reset(struct client *c)
{
    if (c->trk)
        disable_tracking(c);
}

/* ------------------------------------------------------ introspection --- */
char *tracking_flags_str(const struct client *c, char *p)
{
    if (c->flags & CF_TRACKING)
        *p++ = 't';
    if (c->trk && (c->trk->flags & TK_BROKEN))
        *p++ = 'R';
    if (c->trk && (c->trk->flags & TK_BCAST))
        *p++ = 'B';
    return p;
}

long long tracking_redir(const struct client *c)
{
    return (c->flags & CF_TRACKING) && c->trk ? (long long)c->trk->redir : -1;
}

/* Bytes c's tracking state holds (client_mem_usage, maxmemory-clients):
 * O(1), so the prefix strings are estimated at one 16-byte allocation
 * each (an underestimate for long prefixes, as Redis's rax estimate). */
size_t tracking_client_mem(const struct client *c)
{
    const struct tracking_client *tk = c->trk;
    if (!tk)
        return 0;
    return sizeof(*tk) + (size_t)tk->capprefix * sizeof(*tk->prefixes) + (size_t)tk->nprefix * 16;
}

long tracking_num_clients(void)
{
    return atomic_load(&tk_nclients);
}

long long tracking_total_keys(void)
{
    return count_sum(0);
}

long long tracking_total_items(void)
{
    return count_sum(1);
}

long long tracking_total_prefixes(void)
{
    return atomic_load(&bc_nprefix);
}
