/* keys.c - generic keyspace commands (DEL, EXISTS, RENAME, SCAN, EXPIRE...).
 *
 * Handlers run with their keys' shard locks held by the dispatcher, except
 * the whole-keyspace ones: KEYS, DBSIZE, FLUSH*, SWAPDB hold every lock
 * (CMD_ALL_LOCKS), while SCAN and RANDOMKEY walk the slots taking one lock
 * at a time (CMD_SELF_LOCKING) so they never stop the other threads.
 *
 * SCAN's cursor is the next slot to visit: each call returns whole slots,
 * so a key present for the whole iteration is returned exactly once,
 * whatever resizes happen in between. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cluster/cluster.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "../db/object.h"
#include "../db/rkeys.h"
#include "commands.h"
#include "memstats.h"
#include "multi.h"
#include "notify.h"
#include "../persist/prop.h"
#include "../persist/snapshot.h"

static const char *type_name(int t)
{
    switch (t) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    case OBJ_STREAM: return "stream";
    case OBJ_VSET: return "vectorset";
    default: return "none";
    }
}

static void del_generic(struct client *c)
{
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        if (!db_del(c->db, kslot(c, i), c->argv[i], c->argvlen[i]))
            continue;
        KEY_MODIFIED(c, i, NOTIFY_GENERIC, "del");
        n++;
    }
    reply_int(&c->out, n);
}

/* DEL frees big values on the lazy-free thread when lazyfree-lazy-user-del
 * is on, UNLINK always (object.h). */
void del_command(struct client *c)
{
    int lf = lazyfree_enter(LF_USER_DEL);
    del_generic(c);
    lazyfree_leave(lf);
}

void unlink_command(struct client *c)
{
    int lf = lazyfree_enter(LF_ALWAYS);
    del_generic(c);
    lazyfree_leave(lf);
}

void exists_command(struct client *c)
{
    long long n = 0;
    /* Read lookups, as Redis: hits/misses and "keymiss" count. */
    for (int i = 1; i < c->argc; i++)
        n += db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOTOUCH) != NULL;
    reply_int(&c->out, n);
}

void touch_command(struct client *c)
{
    long long n = 0;
    for (int i = 1; i < c->argc; i++)
        n += db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], 0) != NULL;
    reply_int(&c->out, n);
}

void type_command(struct client *c)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], LK_NOTOUCH);
    reply_status(&c->out, e ? type_name(e->type) : "none");
}

static int same_key(struct client *c, int a, int b)
{
    return c->argvlen[a] == c->argvlen[b] && memcmp(c->argv[a], c->argv[b], c->argvlen[a]) == 0;
}

static void rename_generic(struct client *c, int nx)
{
    long idx, didx;
    unsigned s1 = kslot(c, 1), s2 = kslot(c, 2);
    struct entry *e = db_get_idx(c->db, s1, c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH, &idx);
    if (!e) {
        reply_error(&c->out, ERR_NO_KEY);
        return;
    }
    if (same_key(c, 1, 2)) {
        if (nx)
            reply_int(&c->out, 0);
        else
            reply_ok(&c->out);
        return;
    }
    struct entry *d = db_get_idx(c->db, s2, c->argv[2], c->argvlen[2], LK_NOSTATS | LK_NOTOUCH, &didx);
    if (d && nx) {
        reply_int(&c->out, 0);
        return;
    }
    struct entry *n = entry_rekey(e, c->argv[2], c->argvlen[2]);
    if (d) {
        db_replace(c->db, s2, didx, n);
        KEY_EVENT(c, 2, NOTIFY_NEW, "new"); /* Redis deletes, then adds */
    } else {
        db_add(c->db, s2, n);
    }
    signal_key_ready(c->db, s2, c->argv[2], c->argvlen[2]);
    /* The old entry's value now belongs to n (collection pointers are
     * moved, not copied): free only the shell. */
    idx = -1;
    e = db_get_idx(c->db, s1, c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH | LK_NOEXPIRE, &idx);
    hk_free(db_unlink(c->db, s1, idx));
    KEY_SIGNAL(c, 1);
    KEY_SIGNAL_ND(c, 2); /* a rename is one change, as Redis */
    KEY_EVENT(c, 1, NOTIFY_GENERIC, "rename_from");
    KEY_EVENT(c, 2, NOTIFY_GENERIC, "rename_to");
    if (nx)
        reply_int(&c->out, 1);
    else
        reply_ok(&c->out);
}

void rename_command(struct client *c)
{
    rename_generic(c, 0);
}

void renamenx_command(struct client *c)
{
    rename_generic(c, 1);
}

static int parse_db_index(struct client *c, int i, int *out)
{
    long long v;
    if (arg_ll(c, i, &v) < 0)
        return -1;
    if (v < INT_MIN || v > INT_MAX) {
        /* Redis reads the index as an int first. */
        reply_errorf(&c->out, "ERR value is out of range, value must between %d and %d", INT_MIN, INT_MAX);
        return -1;
    }
    if (v < 0 || v >= cfg.databases) {
        reply_error(&c->out, ERR_DB_RANGE);
        return -1;
    }
    *out = (int)v;
    return 0;
}

void copy_command(struct client *c)
{
    int dst = c->db, replace = 0;
    long didx;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(c, j, "replace")) {
            replace = 1;
        } else if (arg_is(c, j, "db") && j + 1 < c->argc) {
            if (parse_db_index(c, ++j, &dst) < 0)
                return;
            if (cluster_on && dst != 0) {
                reply_error(&c->out, "ERR Copying to another database is not allowed in cluster mode");
                return;
            }
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (dst == c->db && same_key(c, 1, 2)) {
        reply_error(&c->out, "ERR source and destination objects are the same");
        return;
    }
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0); /* a read, as Redis */
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct entry *d = db_get_idx(dst, kslot(c, 2), c->argv[2], c->argvlen[2], LK_NOSTATS | LK_NOTOUCH, &didx);
    if (d && !replace) {
        reply_int(&c->out, 0);
        return;
    }
    /* Strings are copied bytewise; collection types (issue 4) deep-copy. */
    struct entry *n = entry_dup(e, c->argv[2], c->argvlen[2], 1);
    if (d) {
        db_replace(dst, kslot(c, 2), didx, n);
        notify_keyspace_event(NOTIFY_NEW, "new", c->argv[2], c->argvlen[2], dst); /* Redis deletes, then adds */
    } else {
        db_add(dst, kslot(c, 2), n);
    }
    signal_key_ready(dst, kslot(c, 2), c->argv[2], c->argvlen[2]);
    signal_modified_key(c, dst, kslot(c, 2), c->argv[2], c->argvlen[2]);
    notify_keyspace_event(NOTIFY_GENERIC, "copy_to", c->argv[2], c->argvlen[2], dst);
    reply_int(&c->out, 1);
}

void move_command(struct client *c)
{
    long long v;
    long idx;
    if (cluster_on) {
        reply_error(&c->out, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    unsigned s = kslot(c, 1);
    int dbi;
    if (parse_db_index(c, 2, &dbi) < 0)
        return;
    v = dbi;
    if (v == c->db) {
        reply_error(&c->out, "ERR source and destination objects are the same");
        return;
    }
    struct entry *e = db_get_idx(c->db, s, c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH, &idx);
    if (!e || db_get((int)v, s, c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH)) {
        reply_int(&c->out, 0);
        return;
    }
    db_unlink(c->db, s, idx);
    db_add((int)v, s, e);
    signal_key_ready((int)v, s, c->argv[1], c->argvlen[1]);
    signal_modified_key(c, c->db, s, c->argv[1], c->argvlen[1]);
    signal_modified_key_nd(c, (int)v, s, c->argv[1], c->argvlen[1]); /* a move is one change, as Redis */
    notify_keyspace_event(NOTIFY_GENERIC, "move_from", c->argv[1], c->argvlen[1], c->db);
    notify_keyspace_event(NOTIFY_GENERIC, "move_to", c->argv[1], c->argvlen[1], (int)v);
    reply_int(&c->out, 1);
}

static int key_live(struct entry *e, long long now)
{
    return !(e->flags & E_HAS_EXPIRE) || entry_expire(e) > now;
}

void keys_command(struct client *c)
{
    size_t mark = reply_defer(&c->out);
    long long n = 0, now = db_now_ms();
    int all = c->argvlen[1] == 1 && c->argv[1][0] == '*';
    struct db *d = ks.dbs[c->db];
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = d->t[s];
        if (!t)
            continue;
        for (uint32_t i = 0; i < t->cap; i++) {
            if (!table_full(t, i))
                continue;
            struct entry *e = table_get(t, i);
            if (!key_live(e, now))
                continue;
            if (all || glob_match(c->argv[1], c->argvlen[1], entry_key(e), entry_klen(e), 0)) {
                reply_bulk(&c->out, entry_key(e), entry_klen(e));
                n++;
            }
        }
    }
    reply_defer_array(&c->out, mark, n);
}

void scan_command(struct client *c)
{
    unsigned long long cursor;
    long long count = 10;
    const char *pat = NULL, *type = NULL;
    size_t plen = 0, tlen = 0;
    char *end;
    char cbuf[32];

    if (c->argvlen[1] == 0 || c->argvlen[1] >= sizeof(cbuf)) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    memcpy(cbuf, c->argv[1], c->argvlen[1]);
    cbuf[c->argvlen[1]] = 0;
    errno = 0;
    cursor = strtoull(cbuf, &end, 10);
    if (*end || cbuf[0] == '-' || errno == ERANGE) {
        reply_error(&c->out, "ERR invalid cursor");
        return;
    }
    for (int j = 2; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, j, "count")) {
            if (arg_ll(c, j + 1, &count) < 0)
                return;
            if (count < 1) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
        } else if (arg_is(c, j, "match")) {
            pat = c->argv[j + 1];
            plen = c->argvlen[j + 1];
            if (plen == 1 && pat[0] == '*')
                pat = NULL;
        } else if (arg_is(c, j, "type")) {
            type = c->argv[j + 1];
            tlen = c->argvlen[j + 1];
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    reply_array(&c->out, 2);
    size_t curmark = c->out.len;
    reply_bulk(&c->out, "00000", 5); /* placeholder, patched below */
    size_t mark = reply_defer(&c->out);
    long long n = 0, now = db_now_ms(); /* the command's clock, as db_get's */
    unsigned s = cursor >= NSLOTS ? NSLOTS : (unsigned)cursor;
    /* Expired keys met on the way are deleted after each slot's walk (a
     * delete may shrink the table under the walk), as Redis's SCAN expires
     * what it visits; not while expiry is paused (a replica, CLIENT
     * PAUSE), where they are only left out. */
    int reap = !atomic_load_explicit(&db_expire_paused, memory_order_relaxed);
    char **dead = NULL;
    size_t *deadlen = NULL, ndead = 0, deadcap = 0;
    while (s < NSLOTS && n < count) {
        slot_lock_self(s);
        struct table *t = ks.dbs[c->db]->t[s];
        for (uint32_t i = 0; t && i < t->cap; i++) {
            if (!table_full(t, i))
                continue;
            struct entry *e = table_get(t, i);
            if (!key_live(e, now)) {
                if (reap) {
                    if (ndead == deadcap) {
                        deadcap = deadcap ? deadcap * 2 : 16;
                        dead = hk_realloc(dead, sizeof(*dead) * deadcap);
                        deadlen = hk_realloc(deadlen, sizeof(*deadlen) * deadcap);
                    }
                    deadlen[ndead] = entry_klen(e);
                    dead[ndead] = hk_malloc(deadlen[ndead] + 1);
                    memcpy(dead[ndead], entry_key(e), deadlen[ndead]);
                    ndead++;
                }
                continue;
            }
            if (pat && !glob_match(pat, plen, entry_key(e), entry_klen(e), 0))
                continue;
            if (type) {
                const char *tn = type_name(e->type);
                if (!(strlen(tn) == tlen && str_eq_nocase(type, tlen, tn)))
                    continue;
            }
            reply_bulk(&c->out, entry_key(e), entry_klen(e));
            n++;
        }
        for (size_t k = 0; k < ndead; k++) {
            db_get(c->db, s, dead[k], deadlen[k], LK_NOSTATS); /* deletes it: DEL fed, events fired */
            hk_free(dead[k]);
        }
        ndead = 0;
        slot_unlock_self(s);
        s++;
    }
    hk_free(dead);
    hk_free(deadlen);
    reply_defer_array(&c->out, mark, n);
    /* Patch the cursor: it is always printed in 5 digits or fewer. */
    char nb[8];
    int l = snprintf(nb, sizeof(nb), "%u", s >= NSLOTS ? 0 : s);
    char hdr[16];
    int hl = snprintf(hdr, sizeof(hdr), "$%d\r\n", l);
    size_t oldlen = 4 + 5 + 2;
    size_t newlen = (size_t)hl + (size_t)l + 2;
    if (!c->out.muted) {
        memmove(c->out.buf + curmark + newlen, c->out.buf + curmark + oldlen, c->out.len - curmark - oldlen);
        memcpy(c->out.buf + curmark, hdr, (size_t)hl);
        memcpy(c->out.buf + curmark + hl, nb, (size_t)l);
        memcpy(c->out.buf + curmark + hl + l, "\r\n", 2);
        c->out.len -= oldlen - newlen;
    }
}

void randomkey_command(struct client *c)
{
    unsigned start = (unsigned)(rand64() % NSLOTS);
    /* While expiry is paused (a replica, CLIENT PAUSE) an expired key
     * cannot be deleted: it is passed over, a slot given up after twice
     * as many picks as it has keys, and when no live key turns up one of
     * the expired ones is answered, as Redis does rather than loop. */
    int paused = atomic_load_explicit(&db_expire_paused, memory_order_relaxed) != 0;
    char *fallback = NULL;
    size_t flen = 0;
    for (unsigned k = 0; k < NSLOTS; k++) {
        unsigned s = (start + k) % NSLOTS;
        slot_lock_self(s);
        struct table *t = ks.dbs[c->db]->t[s];
        uint32_t tries = 0;
        while (t && t->used) {
            uint32_t i = (uint32_t)(rand64() % t->cap);
            while (!table_full(t, i))
                i = i + 1 == t->cap ? 0 : i + 1;
            struct entry *e = table_get(t, i);
            /* The command's clock, as db_get's: a key that expired after the
             * command started is live for both (else this loop never ends). */
            if (key_live(e, db_now_ms())) {
                reply_bulk(&c->out, entry_key(e), entry_klen(e));
                slot_unlock_self(s);
                hk_free(fallback);
                return;
            }
            if (paused) {
                if (!fallback) {
                    flen = entry_klen(e);
                    fallback = hk_malloc(flen + 1);
                    memcpy(fallback, entry_key(e), flen);
                }
                if (++tries > 2 * t->used)
                    break;
                continue;
            }
            /* Expired: delete it, as a lookup would, and try again. */
            db_get(c->db, s, entry_key(e), entry_klen(e), LK_NOSTATS);
            t = ks.dbs[c->db]->t[s];
        }
        slot_unlock_self(s);
    }
    if (fallback)
        reply_bulk(&c->out, fallback, flen);
    else
        reply_null(&c->out);
    hk_free(fallback);
}

void dbsize_command(struct client *c)
{
    reply_int(&c->out, (long long)db_size(c->db));
}

static int flush_mode(struct client *c, int *async)
{
    *async = cfg.lazyfree_lazy_user_flush;
    if (c->argc > 2) {
        reply_error(&c->out, ERR_SYNTAX);
        return -1;
    }
    if (c->argc == 2) {
        if (arg_is(c, 1, "async"))
            *async = 1;
        else if (arg_is(c, 1, "sync"))
            *async = 0;
        else {
            reply_error(&c->out, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

/* FLUSH SYNC frees every key and value here, big values included
 * (db_flush never goes through the lazy-free thread: Redis empties a
 * database inline).
 * FLUSH ASYNC detaches the slot tables and hands them to the lazy-free
 * thread as one job (INFO lazyfree_pending_objects counts their keys). */
static void flush_dbs(int from, int to, int async)
{
    for (int d = from; d < to; d++)
        blocking_signal_db(d); /* served after the flush: XREADGROUP waiters of deleted streams */
    if (!async) {
        for (int d = from; d < to; d++)
            db_flush(d);
        return;
    }
    db_flush_lazy(from, to);
}

/* FLUSHDB/FLUSHALL count the keys they remove as changes and are fed to
 * the AOF even when there was nothing to remove (as Redis). */
static void flush_propagate(int from, int to)
{
    unsigned long long n = 0;
    for (int d = from; d < to; d++)
        n += db_size(d);
    prop_dirty_add(n);
    prop_force();
}

void flushdb_command(struct client *c)
{
    int async;
    if (flush_mode(c, &async) < 0)
        return;
    flush_propagate(c->db, c->db + 1);
    signal_flushed_db(c, c->db);
    flush_dbs(c->db, c->db + 1, async);
    reply_ok(&c->out);
}

void flushall_command(struct client *c)
{
    int async;
    if (flush_mode(c, &async) < 0)
        return;
    flush_propagate(0, cfg.databases);
    signal_flushed_db(c, -1);
    flush_dbs(0, cfg.databases, async);
    rkeys_flush(); /* a writable replica's own keys with a TTL (db/rkeys.h) */
    /* A BGSAVE under way would write the dataset just emptied: stopped,
     * as Redis 7 does (its change count stays: nothing was saved). */
    persist_kill_child_of(CHILD_RDB);
    reply_ok(&c->out);
}

#define EXP_NX 1
#define EXP_XX 2
#define EXP_GT 4
#define EXP_LT 8

static void expire_generic(struct client *c, long long base, long long unit)
{
    long long when;
    int flags = 0;
    long idx;
    unsigned s = kslot(c, 1);
    const char *name = c->cmd->name;

    if (arg_ll(c, 2, &when) < 0)
        return;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(c, j, "nx"))
            flags |= EXP_NX;
        else if (arg_is(c, j, "xx"))
            flags |= EXP_XX;
        else if (arg_is(c, j, "gt"))
            flags |= EXP_GT;
        else if (arg_is(c, j, "lt"))
            flags |= EXP_LT;
        else {
            reply_errorf(&c->out, "ERR Unsupported option %.*s", (int)c->argvlen[j], c->argv[j]);
            return;
        }
    }
    if ((flags & EXP_NX) && (flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(&c->out, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXP_GT) && (flags & EXP_LT)) {
        reply_error(&c->out, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    if (unit == 1000) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            reply_errorf(&c->out, "ERR invalid expire time in '%s' command", name);
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - base) {
        reply_errorf(&c->out, "ERR invalid expire time in '%s' command", name);
        return;
    }
    when += base;
    struct entry *e = db_get_idx(c->db, s, c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH, &idx);
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    long long cur = entry_expire(e);
    if (flags) {
        if ((flags & EXP_NX) && cur >= 0) {
            reply_int(&c->out, 0);
            return;
        }
        if ((flags & EXP_XX) && cur < 0) {
            reply_int(&c->out, 0);
            return;
        }
        if ((flags & EXP_GT) && (cur < 0 || when <= cur)) {
            reply_int(&c->out, 0);
            return;
        }
        if ((flags & EXP_LT) && cur >= 0 && when >= cur) {
            reply_int(&c->out, 0);
            return;
        }
    }
    /* Fed as DEL (a time already past) or PEXPIREAT with the absolute time
     * (the NX/XX/GT/LT condition held: it is not needed to replay). */
    prop_prevent();
    prop_op_begin(c->db);
    if (db_already_expired(when)) {
        int lf = lazyfree_enter(LF_EXPIRE); /* lazyfree-lazy-expire, as Redis */
        db_del(c->db, s, c->argv[1], c->argvlen[1]);
        lazyfree_leave(lf);
        KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "del");
        prop_op_str(__atomic_load_n(&cfg.lazyfree_lazy_expire, __ATOMIC_RELAXED) ? "UNLINK" : "DEL");
        prop_op_arg(c->argv[1], c->argvlen[1]);
    } else {
        db_set_expire(c->db, s, idx, when);
        KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "expire");
        prop_op_str("PEXPIREAT");
        prop_op_arg(c->argv[1], c->argvlen[1]);
        prop_op_ll(when);
    }
    prop_op_end();
    reply_int(&c->out, 1);
}

void expire_command(struct client *c)
{
    expire_generic(c, db_now_ms(), 1000);
}

void pexpire_command(struct client *c)
{
    expire_generic(c, db_now_ms(), 1);
}

void expireat_command(struct client *c)
{
    expire_generic(c, 0, 1000);
}

void pexpireat_command(struct client *c)
{
    expire_generic(c, 0, 1);
}

/* mode: 0 TTL, 1 PTTL, 2 EXPIRETIME, 3 PEXPIRETIME */
static void ttl_generic(struct client *c, int mode)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], LK_NOTOUCH);
    long long exp, ttl;
    if (!e) {
        reply_int(&c->out, -2);
        return;
    }
    exp = entry_expire(e);
    if (exp < 0) {
        reply_int(&c->out, -1);
        return;
    }
    switch (mode) {
    case 0:
        ttl = exp - db_now_ms();
        reply_int(&c->out, ttl < 0 ? 0 : (ttl + 500) / 1000);
        break;
    case 1:
        ttl = exp - db_now_ms();
        reply_int(&c->out, ttl < 0 ? 0 : ttl);
        break;
    case 2:
        reply_int(&c->out, (exp + 500) / 1000);
        break;
    default:
        reply_int(&c->out, exp);
        break;
    }
}

void ttl_command(struct client *c)
{
    ttl_generic(c, 0);
}

void pttl_command(struct client *c)
{
    ttl_generic(c, 1);
}

void expiretime_command(struct client *c)
{
    ttl_generic(c, 2);
}

void pexpiretime_command(struct client *c)
{
    ttl_generic(c, 3);
}

void persist_command(struct client *c)
{
    long idx;
    struct entry *e = db_get_idx(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], LK_NOSTATS | LK_NOTOUCH, &idx);
    if (!e || !(e->flags & E_HAS_EXPIRE)) {
        reply_int(&c->out, 0);
        return;
    }
    db_set_expire(c->db, kslot(c, 1), idx, -1);
    KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "persist");
    reply_int(&c->out, 1);
}

static const char *enc_name(struct entry *e)
{
    return obj_enc_name(e);
}

static int policy_is_lfu(void)
{
    return db_lfu_mode;
}

void object_command(struct client *c)
{
    if (arg_is(c, 1, "help")) {
        static const char *lines[] = {
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            reply_status(&c->out, lines[i]);
        return;
    }
    struct entry *e = db_get(c->db, kslot(c, 2), c->argv[2], c->argvlen[2], LK_NOTOUCH | LK_NOSTATS);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (arg_is(c, 1, "encoding")) {
        reply_bulk_cstr(&c->out, enc_name(e));
    } else if (arg_is(c, 1, "refcount")) {
        long long v;
        /* Redis shares the objects of small integers (0..9999). */
        if (e->type == OBJ_STRING && e->enc == ENC_INT && str_to_ll(entry_val(e), entry_vlen(e), &v) && v >= 0 && v < 10000 &&
            !(cfg.maxmemory && cfg.maxmemory_policy && (strstr(cfg.maxmemory_policy, "lru") || strstr(cfg.maxmemory_policy, "lfu"))))
            reply_int(&c->out, 2147483647);
        else
            reply_int(&c->out, 1);
    } else if (arg_is(c, 1, "idletime")) {
        if (policy_is_lfu()) {
            reply_error(&c->out, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
            return;
        }
        long long idle = ((long long)lru_clock_now - (long long)entry_lru(e)) & 0xffffff;
        reply_int(&c->out, idle);
    } else if (arg_is(c, 1, "freq")) {
        if (!policy_is_lfu()) {
            reply_error(&c->out, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
            return;
        }
        reply_int(&c->out, lfu_decr_and_return(entry_lru(e)));
    }
}

/* MEMORY USAGE's figure: the entry's allocation (header, TTL, key, inline
 * value) plus the value's structures (type_ops.mem: every node, exact, so
 * SAMPLES is checked but not needed), plus this key's share of its slot
 * table (the table's allocation over its keys: ~12 bytes at the usual load,
 * the whole small table for a key alone in its slot). */
static size_t key_usage(int db, unsigned slot, struct entry *e)
{
    const struct table *t = ks.dbs[db]->t[slot];
    size_t n = entry_mem(e);
    if (t && t->used)
        n += (table_bytes(t) + t->used - 1) / t->used;
    return n;
}

static void memory_usage(struct client *c)
{
    /* MEMORY USAGE key [SAMPLES n] (n >= 0; repeated: the last wins). */
    for (int j = 3; j < c->argc; j++) {
        long long v;
        if (arg_is(c, j, "samples") && j + 1 < c->argc) {
            if (arg_ll(c, j + 1, &v) < 0)
                return;
            if (v < 0) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
            j++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    /* As Redis, a key whose TTL has passed but is still stored is measured
     * (no lazy delete, no hit/miss, no LRU touch). */
    struct entry *e = db_get(c->db, kslot(c, 2), c->argv[2], c->argvlen[2], LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    reply_int(&c->out, (long long)key_usage(c->db, kslot(c, 2), e));
}

static void reply_kv_ll(struct client *c, const char *k, long long v)
{
    reply_bulk_cstr(&c->out, k);
    reply_int(&c->out, v);
}

static void reply_kv_d(struct client *c, const char *k, double v)
{
    reply_bulk_cstr(&c->out, k);
    reply_double(&c->out, v);
}

/* MEMORY STATS: Redis 7.0's map, same keys in the same order. */
static void memory_stats(struct client *c)
{
    struct mem_overhead *mh = hk_malloc(sizeof(*mh));
    mem_overhead_get(mh, NULL);
    reply_map(&c->out, 27 + mh->num_dbs);
    reply_kv_ll(c, "peak.allocated", (long long)mh->peak_allocated);
    reply_kv_ll(c, "total.allocated", (long long)mh->total_allocated);
    reply_kv_ll(c, "startup.allocated", (long long)mh->startup_allocated);
    reply_kv_ll(c, "replication.backlog", (long long)mh->repl_backlog);
    reply_kv_ll(c, "clients.slaves", (long long)mh->clients_slaves);
    reply_kv_ll(c, "clients.normal", (long long)mh->clients_normal);
    reply_kv_ll(c, "cluster.links", (long long)mh->cluster_links);
    reply_kv_ll(c, "aof.buffer", (long long)mh->aof_buffer);
    reply_kv_ll(c, "lua.caches", (long long)mh->lua_caches);
    reply_kv_ll(c, "functions.caches", (long long)mh->functions_caches);
    for (int j = 0; j < mh->num_dbs; j++) {
        char name[32];
        snprintf(name, sizeof(name), "db.%d", mh->db[j].dbid);
        reply_bulk_cstr(&c->out, name);
        reply_map(&c->out, 3);
        reply_kv_ll(c, "overhead.hashtable.main", (long long)mh->db[j].main);
        reply_kv_ll(c, "overhead.hashtable.expires", (long long)mh->db[j].expires);
        reply_kv_ll(c, "overhead.hashtable.slot-to-keys", (long long)mh->db[j].slot_to_keys);
    }
    reply_kv_ll(c, "overhead.total", (long long)mh->overhead_total);
    reply_kv_ll(c, "keys.count", (long long)mh->total_keys);
    reply_kv_ll(c, "keys.bytes-per-key", (long long)mh->bytes_per_key);
    reply_kv_ll(c, "dataset.bytes", (long long)mh->dataset);
    reply_kv_d(c, "dataset.percentage", mh->dataset_perc);
    reply_kv_d(c, "peak.percentage", mh->peak_perc);
    reply_kv_ll(c, "allocator.allocated", (long long)mh->as.allocated);
    reply_kv_ll(c, "allocator.active", (long long)mh->as.active);
    reply_kv_ll(c, "allocator.resident", (long long)mh->as.resident);
    reply_kv_d(c, "allocator-fragmentation.ratio", mh->allocator_frag);
    reply_kv_ll(c, "allocator-fragmentation.bytes", mh->allocator_frag_bytes);
    reply_kv_d(c, "allocator-rss.ratio", mh->allocator_rss);
    reply_kv_ll(c, "allocator-rss.bytes", mh->allocator_rss_bytes);
    reply_kv_d(c, "rss-overhead.ratio", mh->rss_extra);
    reply_kv_ll(c, "rss-overhead.bytes", mh->rss_extra_bytes);
    /* The total RSS overhead (fragmentation and everything else). */
    reply_kv_d(c, "fragmentation", mh->total_frag);
    reply_kv_ll(c, "fragmentation.bytes", mh->total_frag_bytes);
    hk_free(mh);
}

void memory_command(struct client *c)
{
    if (arg_is(c, 1, "help")) {
        static const char *lines[] = {
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
            "HELP",
            "    Prints this help.",
        };
        reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            reply_status(&c->out, lines[i]);
    } else if (arg_is(c, 1, "usage")) {
        memory_usage(c);
    } else if (arg_is(c, 1, "stats")) {
        memory_stats(c);
    } else if (arg_is(c, 1, "doctor")) {
        struct mem_overhead *mh = hk_malloc(sizeof(*mh));
        mem_overhead_get(mh, NULL);
        char *text = mem_doctor_report(mh);
        reply_verbatim(&c->out, text, strlen(text), "txt");
        hk_free(text);
        hk_free(mh);
    } else if (arg_is(c, 1, "malloc-stats")) {
        char *text = alloc_stats_text();
#ifdef HK_NO_JEMALLOC
        reply_bulk_cstr(&c->out, text);
#else
        reply_verbatim(&c->out, text, strlen(text), "txt");
#endif
        hk_free(text);
    } else if (arg_is(c, 1, "purge")) {
        if (alloc_purge() == 0)
            reply_ok(&c->out);
        else
            reply_error(&c->out, "ERR Error purging dirty pages");
    } else {
        reply_unknown_subcommand(c);
    }
}

void select_command(struct client *c)
{
    long long v;
    if (!str_to_ll(c->argv[1], c->argvlen[1], &v) || v < INT_MIN || v > INT_MAX) {
        reply_error(&c->out, ERR_NOT_INT);
        return;
    }
    if (cluster_on && v != 0) {
        reply_error(&c->out, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (v < 0 || v >= cfg.databases) {
        reply_error(&c->out, ERR_DB_RANGE);
        return;
    }
    c->db = (int)v;
    reply_ok(&c->out);
}

void swapdb_command(struct client *c)
{
    long long a, b;
    if (cluster_on) {
        reply_error(&c->out, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (!str_to_ll(c->argv[1], c->argvlen[1], &a) || a < INT_MIN || a > INT_MAX) {
        reply_error(&c->out, "ERR invalid first DB index");
        return;
    }
    if (!str_to_ll(c->argv[2], c->argvlen[2], &b) || b < INT_MIN || b > INT_MAX) {
        reply_error(&c->out, "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= cfg.databases || b < 0 || b >= cfg.databases) {
        reply_error(&c->out, ERR_DB_RANGE);
        return;
    }
    prop_dirty_add(1); /* fed as it is (all locks held) */
    if (a != b) {
        /* WATCH looks at both databases as they are before the swap (what
         * each watched key had, what it gets), as Redis does. */
        signal_swapdb((int)a, (int)b);
        db_swap((int)a, (int)b);
        /* Clients blocked in either database now see other values. */
        blocking_signal_db((int)a);
        blocking_signal_db((int)b);
    }
    reply_ok(&c->out);
}
