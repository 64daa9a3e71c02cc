/* multi.c - MULTI/EXEC/DISCARD/WATCH/UNWATCH and the lock context.
 *
 * Lock context (thread-local, see multi.h).  EXEC computes every slot its
 * queued commands name plus the slots of the client's WATCHed keys, takes
 * them in ascending order (or all of them, when a queued command needs the
 * whole keyspace), checks the WATCH state under those locks and runs the
 * queue: no other thread can observe a partial transaction, and a write on
 * another thread either happened before (and aborts EXEC) or waits until
 * after.  EXEC never needs a lock it did not take up front.  A script may:
 * redis.call() can name any key.  lockctx_ensure() then takes the slot:
 * by trylock; by a plain wait when the slot is above every slot held (the
 * global ascending order keeps that deadlock-free); otherwise it raises
 * db_lock_yield_req and spins: every thread that waits for a lock while
 * holding others gives way to that request (db.c), and scripts that run
 * alone (the script lock held exclusively) are the only such waiter, so no
 * cycle can form.
 *
 * Parallel contexts.  EVAL scripts run in parallel with each other (the
 * script lock held shared) in a parallel context.  Two scripts that each
 * wait mid-run for a slot the other holds would deadlock, and neither can
 * drop what it holds (it may have written under it).  So a parallel
 * context that cannot trylock a slot it does not hold yet, while it holds
 * others:
 *   - has no side effect yet (only read-only commands ran): it stops with
 *     LC_PAR_RETRY; the script engine unwinds the run, releases everything
 *     and runs the script again alone (exclusive);
 *   - has side effects: it may wait for a slot above every slot it holds
 *     (ascending order) while no context holds the out-of-order token; for
 *     any other slot it takes the token (one out-of-order waiter at a time,
 *     which raises db_lock_yield_req as an exclusive script would); while
 *     another context holds the token it gives up with LC_PAR_CONFLICT (the
 *     command is not run; redis.call raises an error).  A context waiting
 *     ascending gives up the same way when the token is taken meanwhile:
 *     the token holder may be waiting for one of its slots.
 * Any slot a parallel context takes beyond the ones it began with is
 * recorded (lockctx_par_undeclared): the engine then runs that script
 * alone from the next call on, so the paths above are taken at most a few
 * times per script.
 *
 * WATCH.  A watched key is a `struct watcher` node in two places: the
 * client's array (owner thread) and the per-slot list watch_heads[slot],
 * which is read and written only with that slot's lock held.  A write on
 * any thread calls signal_modified_key() with the slot lock held; it walks
 * the slot's list and sets the watching client's dirty_cas flag (an atomic:
 * the client's multi_state is owned by its worker but this one field is
 * written by any thread).  Nodes leave the lists only under the slot lock,
 * before the client's state is freed, so a writer never sees a freed node.
 * Redis's rule for keys already logically expired at WATCH time (their
 * deletion is not a change) is kept per node. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "acl.h"
#include "blocking.h"
#include "../db/entry.h"
#include "../ds/dict.h"
#include "../persist/prop.h"
#include "commands.h"
#include "errorstats.h"
#include "multi.h"
#include "monitor.h"
#include "slowlog.h"
#include "t_sort.h"
#include "tracking.h"

/* ------------------------------------------------------ lock context --- */
struct lockctx {
    int depth;
    int all;
    unsigned *held;              /* inline[] or a heap array (freed at the end) */
    int n, cap;
    unsigned inline_held[64];
    unsigned max;
    int script;     /* a script's own context: par_extra is tracked */
    int par;        /* a parallel context (see the header comment) */
    int par_effect; /* a command that is not read-only ran in it */
    int par_extra;  /* it took a slot beyond the ones it began with */
    int par_status; /* LC_PAR_RETRY / LC_PAR_CONFLICT: the last take failed */
    int par_token;  /* it holds the out-of-order token */
    uint64_t bits[NSLOTS / 64];
};
static _Thread_local struct lockctx lc;
static atomic_int par_token;           /* a parallel context waits out of order */
static atomic_uint par_token_want = NSLOTS; /* the slot it waits for */

int lockctx_active(void)
{
    return lc.depth > 0;
}

int lockctx_all_held(void)
{
    return lc.depth > 0 && lc.all;
}

static int lc_has(unsigned s)
{
    return (lc.bits[s >> 6] >> (s & 63)) & 1;
}

static void lc_add(unsigned s)
{
    lc.bits[s >> 6] |= 1ull << (s & 63);
    if (lc.n == lc.cap) {
        if (!lc.held) {
            lc.held = lc.inline_held;
            lc.cap = 64;
        } else {
            unsigned *h = hk_malloc(sizeof(unsigned) * (size_t)lc.cap * 2);
            memcpy(h, lc.held, sizeof(unsigned) * (size_t)lc.n);
            if (lc.held != lc.inline_held)
                hk_free(lc.held);
            lc.held = h;
            lc.cap *= 2;
        }
    }
    lc.held[lc.n++] = s;
    if (s > lc.max || lc.n == 1)
        lc.max = s;
}

/* Take slot s while holding others (see the header comment). */
static void lc_take(unsigned s)
{
    if (spin_trylock(&ks.locks[s]))
        return;
    if (lc.n == 0 && !lc.all) {
        db_lock_one_ex(s, 0); /* holds nothing: serve jobs while waiting */
        return;
    }
    if (s > lc.max) {
        spin_lock(&ks.locks[s]);
        return;
    }
    atomic_fetch_add(&db_lock_yield_req, 1);
    unsigned spins = 0;
    while (!spin_trylock(&ks.locks[s])) {
        if (++spins < 256)
            __builtin_ia32_pause();
        else {
            spins = 0;
            sched_yield();
        }
    }
    atomic_fetch_sub(&db_lock_yield_req, 1);
}

/* A parallel context takes slot s, holding others: 0 taken, else the
 * LC_PAR_* reason it was not (see the header comment). */
static int lc_take_par(unsigned s)
{
    unsigned spins = 0;
    int rc = 0;
    for (;;) {
        if (spin_trylock(&ks.locks[s]))
            break;
        if (!lc.par_effect) {
            rc = LC_PAR_RETRY;
            break;
        }
        if (!lc.par_token) {
            int holder = atomic_load_explicit(&par_token, memory_order_acquire);
            if (holder) {
                /* The out-of-order waiter may be waiting for one of ours. */
                unsigned want = atomic_load_explicit(&par_token_want, memory_order_acquire);
                if (want < NSLOTS && lc_has(want)) {
                    rc = LC_PAR_CONFLICT;
                    break;
                }
            } else if (s < lc.max) {
                int zero = 0;
                if (atomic_compare_exchange_strong(&par_token, &zero, 1)) {
                    atomic_store_explicit(&par_token_want, s, memory_order_release);
                    lc.par_token = 1;
                    atomic_fetch_add(&db_lock_yield_req, 1);
                }
            }
        }
        if (++spins < 256) {
            __builtin_ia32_pause();
        } else {
            spins = 0;
            sched_yield();
        }
    }
    if (lc.par_token) {
        atomic_fetch_sub(&db_lock_yield_req, 1);
        atomic_store_explicit(&par_token_want, NSLOTS, memory_order_release);
        lc.par_token = 0;
        atomic_store_explicit(&par_token, 0, memory_order_release);
    }
    return rc;
}

void lockctx_ensure(unsigned s)
{
    if (lc.all || lc_has(s))
        return;
    if (lc.script)
        lc.par_extra = 1;
    if (lc.par && (lc.n > 0 || lc.all)) {
        int rc = lc_take_par(s);
        if (rc) {
            lc.par_status = rc;
            return;
        }
        lc_add(s);
        return;
    }
    lc_take(s);
    lc_add(s);
}

int lockctx_hold(unsigned s)
{
    lockctx_ensure(s);
    return lc.all || lc_has(s);
}

void lockctx_set_script(int par)
{
    if (lc.depth != 1)
        return; /* inside EXEC: the transaction's context, left as it is */
    lc.script = 1;
    lc.par = par;
    lc.par_effect = lc.par_extra = lc.par_status = 0;
}

int lockctx_par_status(void)
{
    int st = lc.par_status;
    if (st == LC_PAR_CONFLICT)
        lc.par_status = 0; /* the next command may try again */
    return st;
}

int lockctx_script_undeclared(void)
{
    return lc.script && lc.par_extra;
}

void slot_lock_self(unsigned s)
{
    if (lc.depth > 0) {
        lockctx_ensure(s);
        return;
    }
    if (!spin_trylock(&ks.locks[s]))
        db_lock_one_ex(s, 0);
}

void slot_unlock_self(unsigned s)
{
    if (lc.depth == 0)
        spin_unlock(&ks.locks[s]);
}

void lockctx_ensure_all(void)
{
    if (lc.all)
        return;
    if (lc.script)
        lc.par_extra = 1;
    if (lc.par) {
        /* Every slot, holding some: one by one, as undeclared slots. */
        if (lc.n > 0) {
            for (unsigned s = 0; s < NSLOTS; s++) {
                lockctx_ensure(s);
                if (lc.par_status)
                    return; /* what it took stays held until the end */
            }
            lc.all = 1;
            return;
        }
    }
    if (lc.n == 0) {
        db_lock_all(); /* nothing held yet: the ordinary ascending wait */
        lc.all = 1;
        return;
    }
    for (unsigned s = 0; s < NSLOTS; s++) {
        if (lc_has(s))
            continue;
        lc_take(s);
        if (s > lc.max || lc.n == 0)
            lc.max = s;
    }
    lc.all = 1;
}

void lockctx_begin_keys(const unsigned *slots, int n)
{
    prop_unit_begin(); /* what the context's commands feed goes out at its end */
    if (lc.depth++ > 0) {
        for (int i = 0; i < n; i++)
            lockctx_ensure(slots[i]);
        return;
    }
    unsigned tmp[64], *v = n <= 64 ? tmp : hk_malloc(sizeof(unsigned) * (size_t)n);
    memcpy(v, slots, sizeof(unsigned) * (size_t)n);
    db_lock_slots(v, n); /* sorts */
    for (int i = 0; i < n; i++) {
        if (i > 0 && v[i] == v[i - 1])
            continue;
        lc_add(v[i]);
    }
    if (v != tmp)
        hk_free(v);
}

void lockctx_begin_all(void)
{
    prop_unit_begin();
    if (lc.depth++ > 0) {
        lockctx_ensure_all();
        return;
    }
    db_lock_all();
    lc.all = 1;
}

void lockctx_end(void)
{
    prop_unit_end(); /* outermost: fed (MULTI ... EXEC) while the locks are held */
    if (--lc.depth > 0)
        return;
    if (lc.all) {
        db_unlock_all();
        memset(lc.bits, 0, sizeof(lc.bits));
    } else {
        for (int i = lc.n - 1; i >= 0; i--) {
            spin_unlock(&ks.locks[lc.held[i]]);
            lc.bits[lc.held[i] >> 6] = 0;
        }
    }
    lc.all = 0;
    lc.n = 0;
    lc.max = 0;
    lc.script = lc.par = lc.par_effect = lc.par_extra = lc.par_status = 0;
    if (lc.held != lc.inline_held)
        hk_free(lc.held); /* nothing stays allocated between contexts */
    lc.held = NULL;
    lc.cap = 0;
}

/* Commands flagged SELF_LOCKING whose handlers take no slot lock at all. */
static int needs_no_locks(const struct cmd *cmd)
{
    return cmd->fn == spublish_command || cmd->fn == ssubscribe_command || cmd->fn == sunsubscribe_command;
}

/* Does this command need every slot inside a context?  Besides the
 * whole-keyspace commands: INFO and DEBUG lock slots themselves, and admin
 * commands (CLIENT LIST/KILL, CONFIG SET ...) may wait in worker_broadcast(),
 * which is only safe holding every slot lock (then no other thread holds
 * one, and every lock wait serves jobs). */
static int needs_all(const struct cmd *cmd)
{
    if (cmd->flags & (CMD_ALL_LOCKS | CMD_ADMIN | CMD_MAY_BROADCAST))
        return 1;
    if ((cmd->flags & CMD_SELF_LOCKING) && !(cmd->flags & CMD_SELF_KEYED) && !needs_no_locks(cmd) &&
        !(cmd->acl & ACL_SCRIPTING))
        return 1;
    return 0;
}

void cmd_call(struct client *c, const struct cmd *cmd)
{
    struct worker_stats *ws = &c->w->stats;
    long long t0 = time_us();
    size_t before = c->out.len;
    c->cmd = cmd;
    /* In a parallel context SORT takes every slot up front: its BY/GET
     * patterns name keys it locks as it goes, where it cannot stop. */
    /* A script's keyless DEBUG (SLEEP, PROTOCOL, ...; only with the deny
     * lifted) takes no lock, so a parallel script stays parallel. */
    if (lc.script && cmd->fn == debug_command && debug_keyless(c)) {
        /* nothing to lock */
    } else if (needs_all(cmd) || (lc.par && (cmd->fn == sort_command || cmd->fn == sort_ro_command))) {
        lockctx_ensure_all();
    } else if (!(cmd->flags & CMD_SELF_LOCKING) || (cmd->flags & CMD_SELF_KEYED)) {
        int idx[64], *kidx = c->argc > 64 ? hk_malloc(sizeof(int) * (size_t)c->argc) : idx;
        int nk = cmd_keys(cmd, c, kidx, c->argc);
        for (int i = 0; i < nk && !lc.par_status; i++) {
            unsigned s = key_slot(c->argv[kidx[i]], c->argvlen[kidx[i]]);
            c->kslot[kidx[i]] = s;
            lockctx_ensure(s);
        }
        if (kidx != idx)
            hk_free(kidx);
    }
    if (lc.par_status)
        return; /* not run: the engine retries the script alone or raises */
    if (lc.par && !(cmd->flags & CMD_READONLY))
        lc.par_effect = 1;
    struct prop_mark pm = prop_call_begin();
    monitor_feed_script(c, cmd);
    cmd->fn(c);
    prop_call_end(c, pm, cmd_is_write);
    monitor_feed(c, cmd); /* its context's locks still held */
    tracking_remember_keys(c);
    long long t1 = time_us();
    STAT_ADD(ws->cmd_calls[cmd->id], 1);
    STAT_ADD(ws->cmd_usec[cmd->id], (unsigned long long)(t1 > t0 ? t1 - t0 : 0));
    /* Commands run by EXEC and scripts are logged one by one, as Redis's
     * call() does (EXEC itself is CMD_SKIP_SLOWLOG; EVAL is logged whole). */
    cmd_latency_hooks(c, cmd, (unsigned long long)(t1 > t0 ? t1 - t0 : 0));
    if (c->out.len > before && c->out.buf[before] == '-') {
        STAT_ADD(ws->cmd_failed[cmd->id], 1);
        if (!(c->flags & CF_ERR_COUNTED)) {
            STAT_ADD(ws->errors, 1);
            errorstat_add_reply(c->out.buf + before, c->out.len - before);
        }
    }
    c->flags &= ~CF_ERR_COUNTED;
}

/* ------------------------------------------------------------ watch --- */
struct watcher {
    struct dict_link link;       /* the client's ms->wd (owner thread) */
    struct watcher *next, *prev; /* watch_heads[slot] list (slot lock) */
    struct multi_state *ms;
    int db;
    unsigned slot;
    int expired;                 /* logically expired when watched */
    size_t klen;
    char dk[];                   /* db (sizeof(int) bytes), then the key: ms->wd's key */
};

static inline const char *wkey(const struct watcher *x)
{
    return x->dk + sizeof(int);
}

static const char *watcher_dkey(const struct dict_link *it, size_t *len)
{
    const struct watcher *x = (const struct watcher *)it;
    *len = sizeof(int) + x->klen;
    return x->dk;
}
static const struct dict_type watcher_type = {watcher_dkey};

struct qcmd {
    const struct cmd *cmd;
    unsigned flags; /* the flags it was queued with (a script's own: cmd_flags_of) */
    int argc;
    const char **argv;
    size_t *lens;
};

struct multi_state {
    int in_multi;
    int dirty_exec;
    atomic_int dirty_cas;
    struct qcmd *q;
    int nq, capq;
    size_t qbytes;
    struct watcher **w;
    int nw, capw;
    struct dict *wd; /* the same watchers by (db, key): WATCH of n keys is O(n), not O(n^2) */
};

static struct watcher *watch_heads[NSLOTS];
static atomic_long nwatchers;

/* The distinct watched keys of each slot, with how many clients watch
 * each (slot lock), and the totals INFO prints: total_watched_keys (keys
 * with at least one watcher) and watching_clients (clients watching at
 * least one key). */
struct wkey {
    struct dict_link link;
    long n;
    size_t len;
    char dk[]; /* db, then the key, as struct watcher's */
};
static const char *wkey_dkey(const struct dict_link *it, size_t *len)
{
    const struct wkey *k = (const struct wkey *)it;
    *len = k->len;
    return k->dk;
}
static const struct dict_type wkey_type = {wkey_dkey};
static struct dict *wkeys[NSLOTS];
static atomic_long n_watched_keys, n_watching_clients;

/* Slot lock held: one more (d > 0) or one less watcher of dk. */
static void wkey_count(unsigned slot, const char *dk, size_t len, int d)
{
    struct wkey *k = wkeys[slot] ? (struct wkey *)dict_find(wkeys[slot], dk, len) : NULL;
    if (d > 0) {
        if (!k) {
            k = hk_malloc(sizeof(*k) + len);
            k->n = 0;
            k->len = len;
            memcpy(k->dk, dk, len);
            if (!wkeys[slot])
                wkeys[slot] = dict_new(&wkey_type, 0);
            dict_add(wkeys[slot], &k->link);
            atomic_fetch_add(&n_watched_keys, 1);
        }
        k->n++;
    } else if (k && --k->n == 0) {
        hk_free(dict_remove(wkeys[slot], dk, len));
        atomic_fetch_sub(&n_watched_keys, 1);
        if (!dict_size(wkeys[slot])) {
            dict_free(wkeys[slot], NULL);
            wkeys[slot] = NULL;
        }
    }
}

static struct multi_state *ms_get(struct client *c)
{
    if (!c->ms)
        c->ms = hk_calloc(sizeof(struct multi_state));
    return c->ms;
}

static int key_expired_now(int db, unsigned slot, const char *key, size_t klen)
{
    struct entry *e = db_get(db, slot, key, klen, LK_NOEXPIRE | LK_NOSTATS | LK_NOTOUCH);
    if (!e || !(e->flags & E_HAS_EXPIRE))
        return 0;
    return entry_expire(e) <= db_now_ms();
}

static int key_present_raw(int db, unsigned slot, const char *key, size_t klen)
{
    return db_get(db, slot, key, klen, LK_NOEXPIRE | LK_NOSTATS | LK_NOTOUCH) != NULL;
}

/* Slot lock held. */
static void watch_add(struct client *c, int db, unsigned slot, const char *key, size_t klen)
{
    struct multi_state *ms = ms_get(c);
    struct watcher *x = hk_malloc(sizeof(*x) + sizeof(int) + klen);
    memcpy(x->dk, &db, sizeof(int));
    memcpy(x->dk + sizeof(int), key, klen);
    if (!ms->wd)
        ms->wd = dict_new(&watcher_type, 0);
    else if (dict_find(ms->wd, x->dk, sizeof(int) + klen)) {
        hk_free(x);
        return;
    }
    x->ms = ms;
    x->db = db;
    x->slot = slot;
    x->klen = klen;
    x->expired = key_expired_now(db, slot, key, klen);
    dict_add(ms->wd, &x->link);
    x->prev = NULL;
    x->next = watch_heads[slot];
    if (x->next)
        x->next->prev = x;
    watch_heads[slot] = x;
    atomic_fetch_add(&nwatchers, 1);
    wkey_count(slot, x->dk, sizeof(int) + klen, 1);
    if (ms->nw == 0)
        atomic_fetch_add(&n_watching_clients, 1);
    if (ms->nw == ms->capw) {
        ms->capw = ms->capw ? ms->capw * 2 : 4;
        ms->w = hk_realloc(ms->w, sizeof(*ms->w) * (size_t)ms->capw);
    }
    ms->w[ms->nw++] = x;
}

/* Slot lock of x held. */
static void watch_unlink(struct watcher *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        watch_heads[x->slot] = x->next;
    if (x->next)
        x->next->prev = x->prev;
    atomic_fetch_sub(&nwatchers, 1);
    wkey_count(x->slot, x->dk, sizeof(int) + x->klen, -1);
    hk_free(x);
}

/* locked: the caller holds every watched slot (EXEC's context). */
static void unwatch_all(struct client *c, int locked)
{
    struct multi_state *ms = c->ms;
    if (!ms || ms->nw == 0)
        return;
    for (int i = 0; i < ms->nw; i++) {
        struct watcher *x = ms->w[i];
        unsigned s = x->slot;
        if (!locked)
            slot_lock_self(s);
        watch_unlink(x);
        if (!locked)
            slot_unlock_self(s);
    }
    ms->nw = 0;
    atomic_fetch_sub(&n_watching_clients, 1);
    if (ms->wd) {
        dict_free(ms->wd, NULL); /* the watchers were freed above */
        ms->wd = NULL;
    }
    if (ms->capw > 64) {
        hk_free(ms->w);
        ms->w = NULL;
        ms->capw = 0;
    }
}

void signal_modified_key(struct client *c, int db, unsigned slot, const char *key, size_t klen)
{
    if (c)
        prop_dirty_add(1); /* a client's write (c NULL: an expiry, which Redis does not count) */
    signal_modified_key_nd(c, db, slot, key, klen);
}

/* The same without the change count: for a command that counts its changes
 * itself, as Redis does (elements pushed or removed, LMOVE's two keys as
 * one change). */
void signal_modified_key_nd(struct client *c, int db, unsigned slot, const char *key, size_t klen)
{
    tracking_invalidate_key(c, db, slot, key, klen);
    if (atomic_load_explicit(&nwatchers, memory_order_relaxed) == 0)
        return;
    for (struct watcher *x = watch_heads[slot]; x; x = x->next) {
        if (x->db != db || x->klen != klen || memcmp(wkey(x), key, klen) != 0)
            continue;
        if (x->expired) {
            /* Watched while already expired: its deletion is no change. */
            if (!key_present_raw(db, slot, key, klen))
                x->expired = 0;
            continue;
        }
        atomic_store_explicit(&x->ms->dirty_cas, 1, memory_order_relaxed);
    }
}

/* All locks held.  replaced_with < 0: FLUSH (the db is emptied). */
static void touch_all_in_db(int emptied, int replaced_with)
{
    if (atomic_load_explicit(&nwatchers, memory_order_relaxed) == 0)
        return;
    for (unsigned s = 0; s < NSLOTS; s++) {
        for (struct watcher *x = watch_heads[s]; x; x = x->next) {
            if (x->db != emptied)
                continue;
            int in_emptied = key_present_raw(emptied, s, wkey(x), x->klen);
            int in_repl = replaced_with >= 0 && key_present_raw(replaced_with, s, wkey(x), x->klen);
            if (!in_emptied && !in_repl)
                continue;
            if (x->expired) {
                if (!in_repl) {
                    x->expired = 0;
                    continue;
                }
                if (key_expired_now(replaced_with, s, wkey(x), x->klen))
                    continue;
            } else if (!in_emptied && key_expired_now(replaced_with, s, wkey(x), x->klen)) {
                x->expired = 1;
                continue;
            }
            atomic_store_explicit(&x->ms->dirty_cas, 1, memory_order_relaxed);
        }
    }
}

void signal_flushed_db(struct client *c, int db)
{
    tracking_invalidate_all(c, db);
    if (db >= 0) {
        touch_all_in_db(db, -1);
        return;
    }
    for (int i = 0; i < cfg.databases; i++)
        touch_all_in_db(i, -1);
}

void signal_dataset_replaced(void)
{
    tracking_invalidate_all(NULL, -1);
    if (atomic_load_explicit(&nwatchers, memory_order_relaxed) == 0)
        return;
    for (unsigned s = 0; s < NSLOTS; s++)
        for (struct watcher *x = watch_heads[s]; x; x = x->next)
            atomic_store_explicit(&x->ms->dirty_cas, 1, memory_order_relaxed);
}

void signal_swapdb(int a, int b)
{
    touch_all_in_db(a, b);
    touch_all_in_db(b, a);
}

/* ------------------------------------------------------------ queue --- */
static void discard_queue(struct multi_state *ms)
{
    for (int i = 0; i < ms->nq; i++)
        hk_free(ms->q[i].argv);
    hk_free(ms->q);
    ms->q = NULL;
    ms->nq = ms->capq = 0;
    ms->qbytes = 0;
}

static void discard_transaction(struct client *c, int locked)
{
    struct multi_state *ms = c->ms;
    if (!ms)
        return;
    discard_queue(ms);
    ms->in_multi = 0;
    ms->dirty_exec = 0;
    atomic_store(&ms->dirty_cas, 0);
    unwatch_all(c, locked);
}

void multi_client_gone(struct client *c)
{
    if (!c->ms)
        return;
    discard_transaction(c, 0);
    hk_free(c->ms->w);
    hk_free(c->ms);
    c->ms = NULL;
}

int multi_in_progress(const struct client *c)
{
    return c->ms && c->ms->in_multi;
}

void multi_flag_error(struct client *c)
{
    if (c->ms && c->ms->in_multi)
        c->ms->dirty_exec = 1;
}

unsigned multi_queued_flags(const struct client *c)
{
    const struct multi_state *ms = c->ms;
    unsigned f = 0;
    for (int i = 0; ms && i < ms->nq; i++)
        f |= ms->q[i].flags;
    return f;
}

void multi_queued_keys_here(struct client *c, unsigned slot, int *missing, int *existing, int *multiple)
{
    const struct multi_state *ms = c->ms;
    int sargc = c->argc;
    const char **sargv = c->argv;
    size_t *slens = c->argvlen;
    const char *first = NULL;
    size_t flen = 0;
    int idx[64];
    for (int i = 0; ms && i < ms->nq; i++) {
        const struct qcmd *q = &ms->q[i];
        c->argc = q->argc;
        c->argv = q->argv;
        c->argvlen = q->lens;
        int *kidx = q->argc > 64 ? hk_malloc(sizeof(int) * (size_t)q->argc) : idx;
        int nk = cmd_keys(q->cmd, c, kidx, q->argc);
        for (int k = 0; k < nk; k++) {
            const char *key = q->argv[kidx[k]];
            size_t klen = q->lens[kidx[k]];
            if (!first) {
                first = key;
                flen = klen;
            } else if (klen != flen || memcmp(key, first, klen)) {
                *multiple = 1;
            }
            if (db_get(c->db, slot, key, klen, LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE))
                (*existing)++;
            else
                (*missing)++;
        }
        if (kidx != idx)
            hk_free(kidx);
    }
    c->argc = sargc;
    c->argv = sargv;
    c->argvlen = slens;
}

int multi_queued_lacks(const struct client *c, unsigned flag)
{
    const struct multi_state *ms = c->ms;
    for (int i = 0; ms && i < ms->nq; i++)
        if (!(ms->q[i].flags & flag))
            return 1;
    return 0;
}

int multi_queued_denyoom(const struct client *c)
{
    const struct multi_state *ms = c->ms;
    for (int i = 0; ms && i < ms->nq; i++)
        if (ms->q[i].flags & CMD_DENYOOM)
            return 1;
    return 0;
}

int multi_queue_command(struct client *c, const struct cmd *cmd)
{
    struct multi_state *ms = c->ms;
    if (ms->dirty_exec || atomic_load_explicit(&ms->dirty_cas, memory_order_relaxed))
        return 0; /* EXEC will fail anyway: keep nothing */
    size_t bytes = 0;
    for (int i = 0; i < c->argc; i++)
        bytes += c->argvlen[i] + 1;
    size_t hdr = (sizeof(char *) + sizeof(size_t)) * (size_t)c->argc;
    char *blk = hk_malloc(hdr + bytes);
    struct qcmd q;
    q.cmd = cmd;
    /* As Redis's queueMultiCommand: EXEC's maxmemory check sees what each
     * command was when it was queued, scripts with their declared flags. */
    q.flags = (cmd->acl & ACL_SCRIPTING) ? cmd_flags_of(c, cmd) : cmd->flags;
    q.argc = c->argc;
    q.argv = (const char **)(void *)blk;
    q.lens = (size_t *)(void *)(blk + sizeof(char *) * (size_t)c->argc);
    char *p = blk + hdr;
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i], c->argvlen[i]);
        p[c->argvlen[i]] = 0;
        q.argv[i] = p;
        q.lens[i] = c->argvlen[i];
        p += c->argvlen[i] + 1;
    }
    if (ms->nq == ms->capq) {
        ms->capq = ms->capq ? ms->capq * 2 : 4;
        ms->q = hk_realloc(ms->q, sizeof(*ms->q) * (size_t)ms->capq);
    }
    ms->q[ms->nq++] = q;
    ms->qbytes += hdr + bytes;
    return 0;
}

size_t multi_client_mem(const struct client *c)
{
    if (!c->ms)
        return 0;
    return c->ms->qbytes + sizeof(struct qcmd) * (size_t)c->ms->capq +
           (size_t)c->ms->nw * (sizeof(struct watcher) + sizeof(void *)) + (c->ms->wd ? dict_mem(c->ms->wd) : 0);
}

int multi_client_queued(const struct client *c)
{
    return c->ms && c->ms->in_multi ? c->ms->nq : -1;
}

long multi_client_watched(const struct client *c)
{
    return c->ms ? c->ms->nw : 0;
}

long multi_watching_clients(void)
{
    return atomic_load(&n_watching_clients);
}

long multi_watched_keys(void)
{
    return atomic_load(&n_watched_keys);
}

/* --------------------------------------------------------- commands --- */
void multi_command(struct client *c)
{
    struct multi_state *ms = ms_get(c);
    if (ms->in_multi) {
        reply_error(&c->out, "ERR MULTI calls can not be nested");
        return;
    }
    ms->in_multi = 1;
    reply_ok(&c->out);
}

void discard_command(struct client *c)
{
    if (!multi_in_progress(c)) {
        reply_error(&c->out, "ERR DISCARD without MULTI");
        return;
    }
    discard_transaction(c, 0);
    reply_ok(&c->out);
}

void watch_command(struct client *c)
{
    if (multi_in_progress(c)) {
        reply_error(&c->out, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    struct multi_state *ms = ms_get(c);
    if (atomic_load(&ms->dirty_cas)) {
        reply_ok(&c->out);
        return;
    }
    /* The dispatcher holds the slot lock of every key argument. */
    for (int i = 1; i < c->argc; i++)
        watch_add(c, c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
    reply_ok(&c->out);
}

void unwatch_command(struct client *c)
{
    if (c->ms) {
        unwatch_all(c, 0);
        atomic_store(&c->ms->dirty_cas, 0);
    }
    reply_ok(&c->out);
}

static int cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

void exec_command(struct client *c)
{
    struct multi_state *ms = c->ms;
    if (!ms || !ms->in_multi) {
        reply_error(&c->out, "ERR EXEC without MULTI");
        return;
    }
    if (ms->dirty_exec) {
        reply_error(&c->out, "EXECABORT Transaction discarded because of previous errors.");
        discard_transaction(c, 0);
        return;
    }
    /* Which locks: every key of every queued command and every watched
     * key (so the WATCH check and the run are one atomic step). */
    int all = 0, scripting = 0, maxargc = c->argc;
    size_t nslots = (size_t)ms->nw;
    for (int i = 0; i < ms->nq; i++) {
        nslots += (size_t)ms->q[i].argc;
        if (ms->q[i].argc > maxargc)
            maxargc = ms->q[i].argc;
        if (needs_all(ms->q[i].cmd))
            all = 1;
        if (ms->q[i].cmd->flags & CMD_NEEDS_SCRIPT_MUTEX)
            scripting = 1;
        if (ms->q[i].cmd->acl & ACL_SCRIPTING) {
            scripting = 1;
            if (ms->q[i].cmd->flags & CMD_SELF_LOCKING)
                all = 1; /* a script may touch any key */
        }
    }
    if (scripting && script_mutex_lock() < 0) {
        reply_error(&c->out, atomic_load(&script_busy) == 2
                                 ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                                 : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
        discard_transaction(c, 0);
        return;
    }
    const char **orig_argv = c->argv;
    size_t *orig_lens = c->argvlen;
    unsigned *orig_kslot = c->kslot;
    int orig_argc = c->argc;
    const struct cmd *orig_cmd = c->cmd;
    unsigned *kslot = hk_malloc(sizeof(unsigned) * (size_t)(maxargc > 0 ? maxargc : 1));
    unsigned *slots = NULL;
    int ns = 0;
    if (!all) {
        slots = hk_malloc(sizeof(unsigned) * (nslots ? nslots : 1));
        for (int i = 0; i < ms->nw; i++)
            slots[ns++] = ms->w[i]->slot;
        int idx[64];
        for (int i = 0; i < ms->nq; i++) {
            struct qcmd *q = &ms->q[i];
            c->argc = q->argc;
            c->argv = q->argv;
            c->argvlen = q->lens;
            int *kidx = q->argc > 64 ? hk_malloc(sizeof(int) * (size_t)q->argc) : idx;
            int nk = cmd_keys(q->cmd, c, kidx, q->argc);
            for (int k = 0; k < nk; k++)
                slots[ns++] = key_slot(q->argv[kidx[k]], q->lens[kidx[k]]);
            if (kidx != idx)
                hk_free(kidx);
        }
        qsort(slots, (size_t)ns, sizeof(unsigned), cmp_u);
        lockctx_begin_keys(slots, ns);
    } else {
        lockctx_begin_all();
    }
    /* Cluster mode, a migrating slot whose queued keys were all here when
     * cmd_execute routed the EXEC: one moved since (MIGRATE on another
     * thread) would be recreated here by a queued write.  The routing
     * cannot be asked again with slot locks held (cl_mu comes first), so
     * the transaction is refused as a half-moved request is. */
    int moved = 0;
    if (HK_UNLIKELY(c->cl_recheck)) {
        unsigned cs = (unsigned)c->cl_recheck - 1;
        int missing = 0, existing = 0, multiple = 0;
        c->cl_recheck = 0;
        multi_queued_keys_here(c, cs, &missing, &existing, &multiple);
        moved = missing > 0;
    }
    /* WATCH: a touched key, or one that expired since it was watched. */
    int dirty = atomic_load(&ms->dirty_cas);
    for (int i = 0; !dirty && i < ms->nw; i++) {
        struct watcher *x = ms->w[i];
        if (!x->expired && key_expired_now(x->db, x->slot, wkey(x), x->klen))
            dirty = 1;
    }
    if (moved || dirty) {
        c->argc = orig_argc;
        c->argv = orig_argv;
        c->argvlen = orig_lens;
        discard_transaction(c, 1);
        lockctx_end();
        if (scripting)
            script_mutex_unlock();
        /* The routing comes first, as Redis redirects before EXEC runs. */
        if (moved)
            reply_error(&c->out, "TRYAGAIN Multiple keys request during rehashing of slot");
        else
            reply_null_array(&c->out);
        hk_free(kslot);
        hk_free(slots);
        return;
    }
    unwatch_all(c, 1);
    unsigned old_flags = c->flags;
    c->flags |= CF_DENY_BLOCKING;
    c->kslot = kslot;
    reply_array(&c->out, ms->nq);
    for (int i = 0; i < ms->nq; i++) {
        struct qcmd *q = &ms->q[i];
        c->argc = q->argc;
        c->argv = q->argv;
        c->argvlen = q->lens;
        /* ACLs are checked again at EXEC (they may have changed). */
        if (!c->acl_fast && acl_check_exec(c, q->cmd) < 0)
            continue;
        cmd_call(c, q->cmd);
    }
    lockctx_end();
    if (scripting)
        script_mutex_unlock();
    if (!(old_flags & CF_DENY_BLOCKING))
        c->flags &= ~CF_DENY_BLOCKING;
    c->argc = orig_argc;
    c->argv = orig_argv;
    c->argvlen = orig_lens;
    c->kslot = orig_kslot;
    c->cmd = orig_cmd;
    discard_transaction(c, 0);
    hk_free(kslot);
    hk_free(slots);
}
