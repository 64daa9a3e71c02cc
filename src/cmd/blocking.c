/* blocking.c - see blocking.h.
 *
 * Ownership and the waiter's life (the rules the code below relies on):
 *  - struct waiter is created by the blocked client's worker (the owner)
 *    inside the blocking command, with the locks of all the command's keys
 *    held, and linked into one queue per key it waits on.  Per-key queues
 *    (struct bkey, one per (db, key) with waiters) hang off blocked[slot]
 *    and are read and written only with that slot's lock held.
 *  - w->state is one atomic word: a state and the W_GONE bit.
 *      WAITING -> SERVING    a serving thread claims it (CAS from exactly
 *                            WAITING, so never once W_GONE is set; it
 *                            holds a lock of one of its keys);
 *      SERVING -> WAITING    the claimer found nothing to pop after all
 *                            (fetch_sub: W_GONE kept);
 *      SERVING -> SERVED     the claimer re-executed the command, unlinked
 *                            the waiter from every queue (it holds all the
 *                            waiter's slot locks then) and posts the reply
 *                            to the owner, whose job frees the waiter
 *                            (fetch_add: W_GONE kept);
 *      WAITING -> CANCELLED  the owner (timeout, CLIENT UNBLOCK) by CAS:
 *                            if it wins it unlinks (under the locks) and
 *                            frees.
 *    When its client closes, the owner sets W_GONE with one fetch_or and
 *    forgets the waiter: if the state it replaced was WAITING nobody can
 *    claim it any more and the owner unlinks and frees it; if SERVING, the
 *    claimer frees it when it reverts (its RMW reads the owner's, so the
 *    owner's last touch happens before the free) or the delivery job, on
 *    the owner's thread, frees it when it was served.
 *    So at any moment exactly one party may free a waiter, and a serve
 *    never races with a timeout: an element is popped only by a thread that
 *    holds the SERVING claim, and the reply then always reaches the owner.
 *  - Everything else in the waiter (argv copies, keys, reply buffer) is
 *    immutable after creation or touched only by the thread holding the
 *    claim.  The owner-side list of blocked clients (bnext/bprev) belongs to
 *    the owner worker alone. */
#include "../cluster/cluster.h"
#include "blocking.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../ds/dict.h"
#include "../persist/aof.h"
#include "../persist/prop.h"
#include "../persist/repl.h"
#include "acl.h"
#include "cmd.h"
#include "errorstats.h"
#include "slowlog.h"
#include "../db/db.h"

enum { W_WAITING = 0, W_SERVING, W_SERVED, W_CANCELLED };
#define W_GONE 0x10 /* the owner's client closed (see the top) */

struct bkey;

struct wnode {                 /* a waiter's place in one key's queue */
    struct wnode *next, *prev;
    struct waiter *w;
    struct bkey *bk;
};

struct bkey {                  /* waiters of one (db, key), FIFO */
    struct dict_link link;     /* bdict[slot], by db + key */
    struct bkey *next, *prev;  /* blocked[slot] */
    struct wnode *head, *tail;
    uint64_t rstamp;           /* in the ready queue of the batch with this stamp */
    int nnokey;                /* waiters that a deleted key unblocks (XREADGROUP) */
    int db;
    size_t klen;
    char dk[];                 /* db (sizeof(int) bytes), then the key */
};
#define BKEY_KEY(b) ((b)->dk + sizeof(int))

static const char *bkey_dkey(const struct dict_link *it, size_t *len)
{
    const struct bkey *b = (const struct bkey *)it;
    *len = sizeof(int) + b->klen;
    return b->dk;
}
static const struct dict_type bkey_type = {bkey_dkey};

struct waiter {
    _Atomic int state; /* W_* | W_GONE */
    _Atomic unsigned long tried; /* stream waiters: last serve pass that re-executed it */
    struct client *c;          /* owner only */
    struct worker *owner;
    struct waiter *bnext, *bprev; /* owner's blocked list */
    const struct cmd *cmd;
    int db, type, null_kind, resp;
    long long deadline;        /* ms, 0 = forever */
    int argc;
    char **argv;
    size_t *argvlen;
    unsigned *kslot;           /* per argv index (keys only) */
    int nlock;                 /* slots to lock for a re-execution (sorted) */
    unsigned *lock;
    int nwait;                 /* queues it is in */
    struct wnode *nodes;
    struct reply out;          /* the reply of a serve */
    unsigned long long dur_us; /* the serving re-executions' time (serving thread) */
    unsigned long long first_us; /* the call's time before it blocked (owner only) */
    struct acl_user *acl_user; /* a reference: ACLs are checked again when it is served (cmd/acl.h) */
    int rejected;              /* served with a NOPERM error instead */
    const struct block_cb *cb; /* a condition waiter (block_on_cb), else NULL */
    long long cbarg[BLOCK_CB_ARGS];
    long long woff, aof_woff;  /* what a serve's writes reached (WAIT / WAITAOF: c->woff) */
};

static struct bkey *blocked[NSLOTS];       /* slot lock */
/* The same bkeys by db + key (slot lock): a client blocked on 100k keys of
 * one slot (hash tags) costs 100k lookups, not 100k list walks. */
static struct dict *bdict[NSLOTS];
static atomic_llong n_blocked_clients, n_blocking_keys, n_timeouts;
static atomic_llong n_nokey_keys; /* bkeys with nnokey > 0 (INFO total_blocking_keys_on_nokey) */
static atomic_ulong serve_passes;          /* stream serve pass numbers */

/* Per-thread: keys signalled by the running command, and the re-execution
 * in progress. */
struct ready {
    int db;
    unsigned slot;
    size_t klen;
    char *key;
};
static _Thread_local struct ready *ready;
static _Thread_local int nready, capready;
/* ready[rhead..nready) are pending.  A key is queued once per batch (the
 * bkey carries the batch's stamp, unique across threads), so FLUSHDB
 * signalling 100k blocked keys is O(n), not a scan of the queue per key. */
static _Thread_local int rhead;
static _Thread_local uint64_t rstamp_cur;
static atomic_ullong rstamp_next = 1;
static _Thread_local int reexec_active, reexec_blocked;

/* Owner-side list of blocked clients, per worker.  Indexed by worker id. */
static struct waiter **owner_list;
static int owner_list_n;

static struct waiter **list_head(struct worker *w)
{
    if (!owner_list) {
        /* Workers are created before any client connects; the array is
         * sized once by the first blocking call of any worker and never
         * moved afterwards (see blocking_init_workers). */
        return NULL;
    }
    return &owner_list[w->id];
}

void blocking_init_workers(int n)
{
    db_stream_gone_hook = signal_key_ready; /* db.c: stream deleted / overwritten */
    owner_list = hk_calloc(sizeof(*owner_list) * (size_t)n);
    owner_list_n = n;
}

/* ------------------------------------------------------------ timeout --- */
int parse_block_timeout(struct client *c, int i, long long *deadline_ms)
{
    long double ld;
    if (!str_to_ld(c->argv[i], c->argvlen[i], &ld) || isnan(ld) || isinf(ld)) {
        reply_error(&c->out, "ERR timeout is not a float or out of range");
        return -1;
    }
    long double ms = ceill(ld * 1000.0L);
    if (ms < 0) {
        reply_error(&c->out, "ERR timeout is negative");
        return -1;
    }
    long long now = db_now_ms();
    if (ms > (long double)(LLONG_MAX - now)) {
        reply_error(&c->out, "ERR timeout is out of range");
        return -1;
    }
    *deadline_ms = ms > 0 ? now + (long long)ms : 0;
    return 0;
}

/* ------------------------------------------------------------- queues --- */
static struct bkey *bkey_find(int db, unsigned slot, const char *key, size_t klen)
{
    if (!bdict[slot])
        return NULL;
    char stackbuf[256], *dk = sizeof(int) + klen <= sizeof(stackbuf) ? stackbuf : hk_malloc(sizeof(int) + klen);
    memcpy(dk, &db, sizeof(int));
    memcpy(dk + sizeof(int), key, klen);
    struct bkey *b = (struct bkey *)dict_find(bdict[slot], dk, sizeof(int) + klen);
    if (dk != stackbuf)
        hk_free(dk);
    return b;
}

/* Unlink every node of w (all its slots locked by the caller). */
static void unlink_waiter(struct waiter *w)
{
    for (int i = 0; i < w->nwait; i++) {
        struct wnode *n = &w->nodes[i];
        struct bkey *b = n->bk;
        if (!b)
            continue;
        if (n->prev)
            n->prev->next = n->next;
        else
            b->head = n->next;
        if (n->next)
            n->next->prev = n->prev;
        else
            b->tail = n->prev;
        n->bk = NULL;
        if (w->type == BLOCK_STREAM_GROUP && --b->nnokey == 0)
            atomic_fetch_sub(&n_nokey_keys, 1);
        if (!b->head) {
            unsigned s = key_slot(BKEY_KEY(b), b->klen);
            if (b->prev)
                b->prev->next = b->next;
            else
                blocked[s] = b->next;
            if (b->next)
                b->next->prev = b->prev;
            dict_remove(bdict[s], b->dk, sizeof(int) + b->klen);
            if (!dict_size(bdict[s])) {
                dict_free(bdict[s], NULL);
                bdict[s] = NULL;
            }
            hk_free(b);
            atomic_fetch_sub(&n_blocking_keys, 1);
        }
    }
}

static void lock_waiter(struct waiter *w)
{
    /* db_lock_slots sorts its array in place (a write, even when sorted):
     * give it a copy, other threads may be reading w->lock meanwhile. */
    unsigned stack[16], *sl = w->nlock <= 16 ? stack : hk_malloc(sizeof(unsigned) * (size_t)w->nlock);
    memcpy(sl, w->lock, sizeof(unsigned) * (size_t)w->nlock);
    db_lock_slots(sl, w->nlock); /* ascending, gives way to a lock-yield request */
    if (sl != stack)
        hk_free(sl);
}

static void unlock_waiter(struct waiter *w)
{
    for (int i = w->nlock - 1; i >= 0; i--)
        spin_unlock(&ks.locks[w->lock[i]]);
}

static void free_waiter(struct waiter *w)
{
    for (int i = 0; i < w->argc; i++)
        hk_free(w->argv[i]);
    hk_free(w->argv);
    hk_free(w->argvlen);
    hk_free(w->kslot);
    hk_free(w->lock);
    hk_free(w->nodes);
    reply_free(&w->out);
    acl_user_unref(w->acl_user);
    hk_free(w);
}

/* -------------------------------------------------------------- block --- */
static int cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* Key arguments of c by their position i in kidx[]: by bytes, then i. */
struct keyref_ctx {
    const struct client *c;
    const int *kidx;
};

static int same_key(const struct keyref_ctx *kc, int i, int j)
{
    size_t li = kc->c->argvlen[kc->kidx[i]], lj = kc->c->argvlen[kc->kidx[j]];
    return li == lj && memcmp(kc->c->argv[kc->kidx[i]], kc->c->argv[kc->kidx[j]], li) == 0;
}

static int cmp_keyref(const void *a, const void *b, void *arg)
{
    const struct keyref_ctx *kc = arg;
    int i = *(const int *)a, j = *(const int *)b;
    size_t li = kc->c->argvlen[kc->kidx[i]], lj = kc->c->argvlen[kc->kidx[j]];
    int r = memcmp(kc->c->argv[kc->kidx[i]], kc->c->argv[kc->kidx[j]], li < lj ? li : lj);
    if (r == 0)
        r = li < lj ? -1 : li > lj;
    return r ? r : (i > j) - (i < j);
}

static void owner_link(struct waiter *w)
{
    struct waiter **h = list_head(w->owner);
    w->bprev = NULL;
    w->bnext = *h;
    if (*h)
        (*h)->bprev = w;
    *h = w;
}

static void owner_unlink(struct waiter *w)
{
    if (w->deadline)
        atomic_fetch_sub(&n_timeouts, 1);
    if (w->cb && w->cb->ended)
        w->cb->ended(w->c, w->cbarg);
    struct waiter **h = list_head(w->owner);
    if (w->bprev)
        w->bprev->bnext = w->bnext;
    else
        *h = w->bnext;
    if (w->bnext)
        w->bnext->bprev = w->bprev;
    w->bnext = w->bprev = NULL;
}

void block_on_keys(struct client *c, const int *kidx, int n, int type, long long deadline_ms, int null_kind)
{
    if (reexec_active) {
        /* A serve found nothing after all: stay queued. */
        reexec_blocked = 1;
        return;
    }
    if ((c->flags & CF_DENY_BLOCKING) || !c->w || !owner_list) {
        if (null_kind == BLOCK_NULL_BULK)
            reply_null(&c->out);
        else
            reply_null_array(&c->out);
        return;
    }
    struct waiter *w = hk_calloc(sizeof(*w));
    atomic_init(&w->state, W_WAITING);
    w->c = c;
    w->owner = c->w;
    w->acl_user = acl_user_ref(c);
    w->cmd = c->cmd;
    w->db = c->db;
    w->type = type;
    w->null_kind = null_kind;
    w->resp = c->out.resp;
    w->deadline = deadline_ms;
    w->argc = c->argc;
    w->argv = hk_malloc(sizeof(char *) * (size_t)c->argc);
    w->argvlen = hk_malloc(sizeof(size_t) * (size_t)c->argc);
    w->kslot = hk_calloc(sizeof(unsigned) * (size_t)c->argc);
    for (int i = 0; i < c->argc; i++) {
        w->argv[i] = hk_malloc(c->argvlen[i] + 1);
        memcpy(w->argv[i], c->argv[i], c->argvlen[i]);
        w->argv[i][c->argvlen[i]] = 0;
        w->argvlen[i] = c->argvlen[i];
    }
    /* Lock set for a re-execution: every key of the command (as the
     * dispatcher locked them now), sorted and unique. */
    int *ki = hk_malloc(sizeof(int) * (size_t)c->argc);
    int nk = cmd_keys(c->cmd, c, ki, c->argc);
    w->lock = hk_malloc(sizeof(unsigned) * (size_t)(nk > 0 ? nk : 1));
    for (int i = 0; i < nk; i++) {
        w->kslot[ki[i]] = c->kslot[ki[i]];
        w->lock[i] = c->kslot[ki[i]];
    }
    hk_free(ki);
    qsort(w->lock, (size_t)nk, sizeof(unsigned), cmp_u);
    w->nlock = 0;
    for (int i = 0; i < nk; i++)
        if (w->nlock == 0 || w->lock[w->nlock - 1] != w->lock[i])
            w->lock[w->nlock++] = w->lock[i];
    reply_init(&w->out);
    w->out.resp = w->resp;
    /* One queue per distinct key (BLPOP k k waits once on k): the keys
     * sorted, so 100k of them cost n log n, not n^2 comparisons. */
    char *dup = hk_calloc((size_t)(n > 0 ? n : 1));
    if (n > 1) {
        struct keyref_ctx kc = {c, kidx};
        int *ord = hk_malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            ord[i] = i;
        qsort_r(ord, (size_t)n, sizeof(int), cmp_keyref, &kc);
        /* Ties are in argv order: every key after the first of its run
         * repeats an earlier argument. */
        for (int j = 1; j < n; j++)
            if (same_key(&kc, ord[j - 1], ord[j]))
                dup[ord[j]] = 1;
        hk_free(ord);
    }
    w->nodes = hk_calloc(sizeof(struct wnode) * (size_t)n);
    for (int i = 0; i < n; i++) {
        const char *k = c->argv[kidx[i]];
        size_t kl = c->argvlen[kidx[i]];
        unsigned s = c->kslot[kidx[i]];
        if (dup[i])
            continue;
        struct bkey *b = bkey_find(c->db, s, k, kl);
        if (!b) {
            b = hk_malloc(sizeof(*b) + sizeof(int) + kl);
            b->db = c->db;
            b->klen = kl;
            memcpy(b->dk, &c->db, sizeof(int));
            memcpy(b->dk + sizeof(int), k, kl);
            b->head = b->tail = NULL;
            b->prev = NULL;
            b->rstamp = 0;
            b->nnokey = 0;
            b->next = blocked[s];
            if (b->next)
                b->next->prev = b;
            blocked[s] = b;
            if (!bdict[s])
                bdict[s] = dict_new(&bkey_type, 0);
            dict_add(bdict[s], &b->link);
            atomic_fetch_add(&n_blocking_keys, 1);
        }
        if (w->type == BLOCK_STREAM_GROUP && b->nnokey++ == 0)
            atomic_fetch_add(&n_nokey_keys, 1);
        struct wnode *nd = &w->nodes[w->nwait++];
        nd->w = w;
        nd->bk = b;
        nd->next = NULL;
        nd->prev = b->tail;
        if (b->tail)
            b->tail->next = nd;
        else
            b->head = nd;
        b->tail = nd;
    }
    hk_free(dup);
    c->blocked = w;
    c->flags |= CF_BLOCKED;
    owner_link(w);
    atomic_fetch_add(&n_blocked_clients, 1);
    if (w->deadline)
        atomic_fetch_add(&n_timeouts, 1);
}

int blocking_in_reexec(void)
{
    return reexec_active;
}

int client_is_blocked(const struct client *c)
{
    return c->blocked != NULL;
}

/* ------------------------------------------------------------- signal --- */
void signal_key_ready(int db, unsigned slot, const char *key, size_t klen)
{
    struct bkey *b = blocked[slot] ? bkey_find(db, slot, key, klen) : NULL;
    if (!b)
        return;
    if (rhead == nready)
        rstamp_cur = atomic_fetch_add(&rstamp_next, 1);
    if (b->rstamp == rstamp_cur)
        return; /* already pending */
    b->rstamp = rstamp_cur;
    if (nready == capready) {
        capready = capready ? capready * 2 : 8;
        ready = hk_realloc(ready, sizeof(*ready) * (size_t)capready);
    }
    ready[nready].db = db;
    ready[nready].slot = slot;
    ready[nready].klen = klen;
    ready[nready].key = hk_malloc(klen ? klen : 1);
    memcpy(ready[nready].key, key, klen);
    nready++;
}

void blocking_signal_db(int db)
{
    for (unsigned s = 0; s < NSLOTS; s++)
        for (struct bkey *b = blocked[s]; b; b = b->next)
            if (b->db == db)
                signal_key_ready(db, s, BKEY_KEY(b), b->klen);
}

/* -------------------------------------------------------------- serve --- */
static void deliver(struct worker *wk, void *arg);

/* Re-execute w's command with all its locks held and w claimed (SERVING).
 * Returns 1 if it was served (reply in w->out). */
static int reexec(struct waiter *w)
{
    struct client fake;
    memset(&fake, 0, sizeof(fake));
    fake.w = cur_worker;
    fake.db = w->db;
    fake.authenticated = 1;
    fake.argc = w->argc;
    fake.argv = (const char **)w->argv;
    fake.argvlen = w->argvlen;
    fake.kslot = w->kslot;
    fake.cmd = w->cmd;
    fake.flags = CF_DENY_BLOCKING;
    fake.out = w->out;
    fake.id = 0;
    /* The user's rules may have changed while it waited (Redis 7.2 checks
     * them again): a denial is its reply, nothing is popped. */
    if (w->acl_user && acl_check_served(w->acl_user, &fake, w->cmd) < 0) {
        w->out = fake.out;
        w->rejected = 1;
        return 1;
    }
    reexec_active = 1;
    reexec_blocked = 0;
    /* What it changed is fed to the AOF by this thread, the waiter's locks
     * held (its handler rewrites BLPOP as LPOP, BLMOVE as LMOVE ...). */
    struct prop_mark pm = prop_call_begin();
    long long t0 = time_us();
    /* Its own instant, as Redis gives each served command: the command
     * that woke it may have started long before (EXEC with DEBUG SLEEP),
     * and a key that expired since must count as expired. */
    long long saved_time = db_cmd_time_ms, saved_time_us = db_cmd_time_us;
    db_cmd_time_ms = t0 / 1000;
    db_cmd_time_us = t0;
    w->cmd->fn(&fake);
    db_cmd_time_ms = saved_time;
    db_cmd_time_us = saved_time_us;
    long long t1 = time_us();
    w->dur_us += (unsigned long long)(t1 > t0 ? t1 - t0 : 0); /* one that blocks again adds up too */
    int dirtied = prop_dirty != pm.dirty;
    prop_call_end(&fake, pm, cmd_is_write);
    reexec_active = 0;
    /* Its writes count for the waiter's client (WAIT); the serving
     * command's client keeps them too (an offset a bit ahead only makes
     * its WAIT wait for more). */
    if (repl_tl_woff)
        w->woff = (long long)repl_tl_woff;
    if (dirtied && atomic_load_explicit(&aof_active, memory_order_relaxed))
        w->aof_woff = (long long)atomic_load_explicit(&aof_fed_bytes, memory_order_acquire);
    w->out = fake.out;
    if (reexec_blocked) {
        w->out.len = 0;
        return 0;
    }
    return 1;
}

static inline int is_stream_waiter(const struct waiter *w)
{
    return w->type == OBJ_STREAM || w->type == BLOCK_STREAM_GROUP;
}

/* May the value e (NULL: no key) serve w?  XREADGROUP waiters are tried
 * whatever the key holds: a deleted or retyped key unblocks them. */
static inline int waiter_wants(const struct waiter *w, const struct entry *e)
{
    if (w->type == BLOCK_STREAM_GROUP)
        return 1;
    return e && w->type == e->type;
}

/* Serve waiters of one ready key until its value runs out or nobody
 * waits.  Stream waiters consume nothing: each is tried once per pass. */
static void serve_key(int db, unsigned slot, const char *key, size_t klen)
{
    unsigned long pass = atomic_fetch_add(&serve_passes, 1) + 1;
    for (;;) {
        struct waiter *w = NULL;
        if (!spin_trylock(&ks.locks[slot]))
            db_lock_one_ex(slot, 0); /* serves jobs while waiting */
        struct bkey *b = blocked[slot] ? bkey_find(db, slot, key, klen) : NULL;
        if (b) {
            b->rstamp = 0; /* served now: a new signal queues it again */
            /* A look without effects (Redis's LOOKUP_NOEFFECTS): a key
             * whose TTL passed counts as absent but is not deleted here;
             * the next command that touches it deletes it (and feeds the
             * DEL), as in Redis. */
            struct entry *e = db_get(db, slot, key, klen, LK_NOSTATS | LK_NOTOUCH | LK_NOEXPIRE);
            if (e && (e->flags & E_HAS_EXPIRE) && entry_expire(e) <= time_ms())
                e = NULL;
            for (struct wnode *n = b->head; n; n = n->next) {
                if (!waiter_wants(n->w, e))
                    continue;
                if (is_stream_waiter(n->w) && atomic_load_explicit(&n->w->tried, memory_order_relaxed) == pass)
                    continue;
                int exp = W_WAITING;
                if (atomic_compare_exchange_strong(&n->w->state, &exp, W_SERVING)) {
                    w = n->w;
                    atomic_store_explicit(&w->tried, pass, memory_order_relaxed);
                    break;
                }
            }
        }
        if (!w) {
            spin_unlock(&ks.locks[slot]);
            return;
        }
        /* Re-take the locks as the full set of the waiter's keys, in order
         * (a single-slot waiter keeps the one it has). */
        int single = w->nlock == 1 && w->lock[0] == slot;
        if (!single) {
            spin_unlock(&ks.locks[slot]);
            lock_waiter(w);
        }
        int served = 0, streamw = is_stream_waiter(w); /* w may be freed once unclaimed and unlocked */
        if (!(atomic_load(&w->state) & W_GONE))
            served = reexec(w);
        if (served) {
            unlink_waiter(w);
            atomic_fetch_add(&w->state, W_SERVED - W_SERVING);
        } else if (atomic_fetch_sub(&w->state, W_SERVING - W_WAITING) & W_GONE) {
            /* The owner left while we held the claim: ours to free. */
            unlink_waiter(w);
            if (single)
                spin_unlock(&ks.locks[slot]);
            else
                unlock_waiter(w);
            free_waiter(w);
            continue; /* the next waiter may be served */
        }
        if (single)
            spin_unlock(&ks.locks[slot]);
        else
            unlock_waiter(w);
        if (!served) {
            if (streamw)
                continue; /* nothing newer for this one: the next may want it */
            return;
        }
        worker_post(w->owner, deliver, w);
    }
}

void blocking_serve_ready(void)
{
    if (!nready)
        return;
    /* Serving may signal more keys (BLMOVE pushes to its destination):
     * loop until nothing is left. */
    while (rhead < nready) {
        struct ready r = ready[rhead++];
        serve_key(r.db, r.slot, r.key, r.klen);
        hk_free(r.key);
    }
    nready = rhead = 0;
    /* Rarely used: give the array back rather than keep it per thread. */
    hk_free(ready);
    ready = NULL;
    capready = 0;
}

/* ------------------------------------------------------------- owner --- */
/* A blocked call that ends in an error reply (CLIENT UNBLOCK ... ERROR, a
 * group destroyed under XREADGROUP) counts as a failed call of its command
 * and an error reply, as Redis's updateStatsOnUnblock does.  Owner side. */
static void count_unblock_error(struct client *c, const struct cmd *cmd, const char *reply, size_t len)
{
    if (!len || reply[0] != '-')
        return;
    struct worker_stats *ws = &c->w->stats;
    STAT_ADD(ws->errors, 1);
    STAT_ADD(ws->cmd_failed[cmd->id], 1);
    errorstat_add_reply(reply, len);
}

/* The blocked call ends (served, timed out or unblocked): it is counted in
 * commandstats and its latency histogram now, once, with its execution
 * time (before it blocked and when served), as Redis's updateStatsOnUnblock
 * and reprocessed call() do.  Owner side. */
static void count_call(struct client *c, const struct cmd *cmd, unsigned long long us)
{
    struct worker_stats *ws = &c->w->stats;
    STAT_ADD(ws->cmd_calls[cmd->id], 1);
    STAT_ADD(ws->cmd_usec[cmd->id], us);
    if (__atomic_load_n(&cfg.latency_tracking, __ATOMIC_RELAXED))
        latency_hist_record(c, cmd, us);
}

void blocking_note_call(struct client *c, unsigned long long dur_us)
{
    if (c->blocked)
        c->blocked->first_us += dur_us;
}

static void unblock_client(struct client *c)
{
    struct waiter *w = c->blocked;
    owner_unlink(w);
    c->blocked = NULL;
    c->flags &= ~CF_BLOCKED;
    atomic_fetch_sub(&n_blocked_clients, 1);
}

static void deliver(struct worker *wk, void *arg)
{
    struct waiter *w = arg;
    (void)wk;
    if (atomic_load(&w->state) & W_GONE) {
        free_waiter(w);
        return;
    }
    struct client *c = w->c;
    reply_raw(&c->out, w->out.buf, w->out.len);
    if (w->woff > c->woff)
        c->woff = w->woff;
    if (w->aof_woff > c->aof_woff)
        c->aof_woff = w->aof_woff;
    unsigned long long us = w->first_us + w->dur_us;
    if (w->rejected) { /* a rejected call, as Redis counts it (not a call) */
        STAT_ADD(c->w->stats.errors, 1);
        STAT_ADD(c->w->stats.cmd_rejected[w->cmd->id], 1);
        errorstat_add_reply(w->out.buf, w->out.len);
    } else {
        count_call(c, w->cmd, us);
        count_unblock_error(c, w->cmd, w->out.buf, w->out.len);
    }
    unblock_client(c);
    /* Redis logs a blocking command once it is served, not when it blocks. */
    if (!w->rejected)
        slowlog_check_args(c, w->cmd, w->argc, (const char *const *)w->argv, w->argvlen, us);
    free_waiter(w);
    client_unblocked(c);
}

/* Cancel (owner side): 1 if we won and the client got reply `how`. */
/* cancel()'s how == 4: this error (cluster mode: the slot moved). */
static _Thread_local const char *cancel_msg;

static int cancel(struct client *c, int how)
{
    struct waiter *w = c->blocked;
    int exp = W_WAITING;
    if (!atomic_compare_exchange_strong(&w->state, &exp, W_CANCELLED))
        return 0; /* being served: the reply is on its way */
    lock_waiter(w);
    unlink_waiter(w);
    unlock_waiter(w);
    if (how == 0 && w->cb) {
        w->cb->check(c, w->cbarg, 1);
    } else if (how == 2) {
        /* a condition waiter whose check replied (blocking_check_cb) */
    } else if (how == 0) {
        /* Redis replies a null array to every list/zset timeout, BLMOVE's
         * included (null_kind applies to clients that cannot block). */
        reply_null_array(&c->out);
    } else {
        size_t at = c->out.len;
        reply_error(&c->out, how == 4   ? cancel_msg
                             : how == 3 ? "UNBLOCKED force unblock from blocking operation, instance state changed "
                                          "(master -> replica?)"
                                        : "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        if (c->out.len > at)
            count_unblock_error(c, w->cmd, c->out.buf + at, c->out.len - at);
    }
    count_call(c, w->cmd, w->first_us);
    unblock_client(c);
    /* Timed out or unblocked: the call ends here, and is logged (Redis's
     * updateStatsOnUnblock); it spent no time executing since it blocked. */
    slowlog_check_args(c, w->cmd, w->argc, (const char *const *)w->argv, w->argvlen, w->first_us);
    free_waiter(w);
    return 1;
}

long long blocking_cron(struct worker *wk, long long now)
{
    struct waiter **h = list_head(wk);
    long long next = -1;
    if (!h)
        return -1;
    struct waiter *w = *h, *nx;
    /* cancel() does not run any command (client_unblocked only queues the
     * client to resume in the worker loop), so the list stays walkable. */
    for (; w; w = nx) {
        nx = w->bnext;
        if (!w->deadline)
            continue;
        if (w->deadline <= now) {
            struct client *c = w->c;
            if (cancel(c, 0)) {
                client_unblocked(c);
                continue;
            }
            next = 1; /* being served right now: look again soon */
            continue;
        }
        if (next < 0 || w->deadline - now < next)
            next = w->deadline - now;
    }
    return next;
}

void blocking_cluster_cron(struct worker *wk)
{
    struct waiter **h = list_head(wk);
    if (!h)
        return;
    for (struct waiter *w = *h, *nx; w; w = nx) { /* cancel() runs no command */
        nx = w->bnext;
        if (w->cb || w->nlock <= 0)
            continue;
        unsigned s = w->lock[0];
        if (atomic_load_explicit(&cluster_slot_bits[s], memory_order_relaxed) == CSB_MINE &&
            atomic_load_explicit(&cluster_ok, memory_order_relaxed))
            continue;
        struct client *c = w->c;
        char err[400];
        unsigned rf = ((w->cmd->flags & CMD_WRITE) ? CR_WRITE : 0) |
                      ((c->flags & CF_CLUSTER_READONLY) ? CR_READONLY : 0) | (c->tls ? 0 : CR_PLAIN);
        if (cluster_route((int)s, rf, 0, 0, 0, err, sizeof(err)) < 0) {
            cancel_msg = err;
            if (cancel(c, 4))
                client_unblocked(c);
            cancel_msg = NULL;
        }
    }
}

void blocking_unblock_all(struct worker *wk, void *unused)
{
    (void)unused;
    struct waiter **h = list_head(wk);
    if (!h)
        return;
    /* cancel() only queues the client to resume: the list stays walkable. */
    for (struct waiter *w = *h, *nx; w; w = nx) {
        nx = w->bnext;
        struct client *c = w->c; /* cancel() frees w */
        if (cancel(c, 3))
            client_unblocked(c);
    }
}

int blocking_any(struct worker *wk)
{
    struct waiter **h = list_head(wk);
    return h && *h;
}

void blocking_client_gone(struct client *c)
{
    struct waiter *w = c->blocked;
    if (!w)
        return;
    owner_unlink(w);
    c->blocked = NULL;
    c->flags &= ~CF_BLOCKED;
    atomic_fetch_sub(&n_blocked_clients, 1);
    if (atomic_fetch_or(&w->state, W_GONE) == W_WAITING) {
        lock_waiter(w);
        unlink_waiter(w);
        unlock_waiter(w);
        free_waiter(w);
    }
    /* else: a claimer or the delivery job frees it (it sees W_GONE). */
}

int blocking_unblock(struct client *c, int err)
{
    if (!c->blocked)
        return 0;
    if (!cancel(c, err ? 1 : 0))
        return 0;
    client_unblocked(c);
    return 1;
}

long long blocking_clients(void)
{
    return atomic_load(&n_blocked_clients);
}

long long blocking_timeouts(void)
{
    return atomic_load(&n_timeouts);
}

long long blocking_keys(void)
{
    return atomic_load(&n_blocking_keys);
}

long long blocking_keys_on_nokey(void)
{
    return atomic_load(&n_nokey_keys);
}

/* ---------------------------------------------------- condition waiters --- */
#define BLOCK_CB_TYPE 0x80 /* w->type of a condition waiter: never in a key queue */

void block_on_cb(struct client *c, const struct block_cb *cb, const long long *arg, long long deadline_ms)
{
    /* A waiter on no key: no queue, no lock set; only its owner touches
     * it, so the state word only goes WAITING -> CANCELLED (cancel()). */
    if ((c->flags & CF_DENY_BLOCKING) || !c->w || !owner_list || reexec_active) {
        cb->check(c, arg, 1); /* cannot block: the answer now */
        return;
    }
    block_on_keys(c, NULL, 0, BLOCK_CB_TYPE, deadline_ms, BLOCK_NULL_ARRAY);
    struct waiter *w = c->blocked;
    w->cb = cb;
    memcpy(w->cbarg, arg, sizeof(w->cbarg));
}

void blocking_check_cb(struct worker *wk, void *unused)
{
    (void)unused;
    struct waiter **h = list_head(wk);
    if (!h)
        return;
    struct waiter *w = *h, *nx;
    for (; w; w = nx) { /* as in blocking_cron: cancel() runs no command */
        nx = w->bnext;
        if (!w->cb)
            continue;
        struct client *c = w->c;
        size_t at = c->out.len;
        if (!w->cb->check(c, w->cbarg, 0))
            continue;
        if (c->out.len > at)
            count_unblock_error(c, w->cmd, c->out.buf + at, c->out.len - at);
        if (cancel(c, 2))
            client_unblocked(c);
    }
}
