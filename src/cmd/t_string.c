/* t_string.c - string commands.
 *
 * A string value lives inline in its key's entry (db/entry.h), so SET is
 * one allocation and GET one copy into the reply buffer.  Overwriting a
 * string with one that fits the entry's allocation reuses it in place (the
 * common SET-on-existing-key case costs no malloc/free).  Every handler runs
 * with its keys' shard locks held by the dispatcher. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"

#define SET_NX 0x01
#define SET_XX 0x02
#define SET_GET 0x04
#define SET_KEEPTTL 0x08
#define SET_EX 0x10
#define SET_PX 0x20
#define SET_EXAT 0x40
#define SET_PXAT 0x80
#define SET_PERSIST 0x100
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT)

/* Propagation (persist/prop.h): relative TTLs become absolute ones. */
static void prop_set_pxat(struct client *c, int vi, long long when)
{
    prop_prevent();
    prop_op_begin(c->db);
    prop_op_str("SET");
    prop_op_arg(c->argv[1], c->argvlen[1]);
    prop_op_arg(c->argv[vi], c->argvlen[vi]);
    prop_op_str("PXAT");
    prop_op_ll(when);
    prop_op_end();
}

/* GETSET, and SET ... GET without an expire, are fed as SET without the
 * GET, as Redis 7 feeds them (with PXAT the argv goes as it came, with a
 * relative expire as SET ... PXAT).  After an option, "get" can only be
 * that flag: the options that take a value take a number. */
static void prop_set_without_get(struct client *c)
{
    prop_prevent();
    prop_op_begin(c->db);
    prop_op_str("SET");
    for (int i = 1; i < c->argc; i++)
        if (i < 3 || !arg_is(c, i, "get"))
            prop_op_arg(c->argv[i], c->argvlen[i]);
    prop_op_end();
}

/* cmd key [arg]: argv[1] under another command name. */
static void prop_key_cmd(struct client *c, const char *name, const char *arg, long long v, int with_v)
{
    prop_prevent();
    prop_op_begin(c->db);
    prop_op_str(name);
    prop_op_arg(c->argv[1], c->argvlen[1]);
    if (arg)
        prop_op_str(arg);
    if (with_v)
        prop_op_ll(v);
    prop_op_end();
}

/* Convert an expire argument (argv[i]) to absolute ms.  Errors as Redis:
 * not an integer; <= 0 or overflowing -> invalid expire time. */
int parse_expire_arg(struct client *c, int i, long long unit_ms, int absolute, long long *when, const char *cmdname)
{
    long long v;
    if (arg_ll(c, i, &v) < 0)
        return -1;
    if (v <= 0 || (unit_ms == 1000 && v > LLONG_MAX / 1000)) {
        reply_errorf(&c->out, "ERR invalid expire time in '%s' command", cmdname);
        return -1;
    }
    v *= unit_ms;
    if (!absolute) {
        long long now = db_now_ms();
        if (v > LLONG_MAX - now) {
            reply_errorf(&c->out, "ERR invalid expire time in '%s' command", cmdname);
            return -1;
        }
        v += now;
    }
    *when = v;
    return 0;
}

/* Parse SET/GETEX options from argv[from..].  Returns flags or -1 (replied). */
static int parse_set_options(struct client *c, int from, int is_getex, long long *when)
{
    int flags = 0;
    *when = -1;
    for (int j = from; j < c->argc; j++) {
        int has_next = j + 1 < c->argc;
        int ex = arg_is(c, j, "ex") ? SET_EX : arg_is(c, j, "px") ? SET_PX : arg_is(c, j, "exat") ? SET_EXAT
                                                                                  : arg_is(c, j, "pxat") ? SET_PXAT : 0;
        /* Repeating an option is allowed (the last value wins); only
         * conflicting options are a syntax error, as in Redis. */
        if (!is_getex && arg_is(c, j, "nx") && !(flags & SET_XX)) {
            flags |= SET_NX;
        } else if (!is_getex && arg_is(c, j, "xx") && !(flags & SET_NX)) {
            flags |= SET_XX;
        } else if (!is_getex && arg_is(c, j, "get")) {
            flags |= SET_GET;
        } else if (!is_getex && arg_is(c, j, "keepttl") && !(flags & SET_ANY_EXPIRE)) {
            flags |= SET_KEEPTTL;
        } else if (is_getex && arg_is(c, j, "persist") && !(flags & SET_ANY_EXPIRE)) {
            flags |= SET_PERSIST;
        } else if (ex && has_next && !(flags & (SET_KEEPTTL | SET_PERSIST | (SET_ANY_EXPIRE & ~ex)))) {
            flags |= ex;
            j++;
            if (parse_expire_arg(c, j, (ex & (SET_EX | SET_EXAT)) ? 1000 : 1, (ex & (SET_EXAT | SET_PXAT)) != 0, when,
                                 is_getex ? "getex" : "set") < 0)
                return -1;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return -1;
        }
    }
    return flags;
}

/* Store val under argv[ki] with the given expire (-1 none); reuses the old
 * entry in place when it fits. idx/old: the current entry if any. */
static void store_string(struct client *c, int ki, struct entry *old, long idx, const char *val, size_t vlen, long long expire)
{
    unsigned slot = kslot(c, ki);
    const char *key = c->argv[ki];
    size_t klen = c->argvlen[ki];
    if (old && old->type == OBJ_STRING && ((old->flags & E_HAS_EXPIRE) != 0) == (expire >= 0) &&
        entry_vlen_fits(old, vlen)) {
        /* In place when the block fits the new value without wasting
         * half of itself.  (klen is the entry's own key length.)  A value
         * of the length the entry already holds fits with the waste it
         * already has, so the block's size (a cache miss on its slab
         * page's header) is not read. */
        size_t hdr = entry_hdr(old), need = hdr + klen + vlen, u;
        if (vlen == entry_vlen(old) || ((u = hk_usable(old)) >= need && u <= 2 * need + 64)) {
            entry_set_vlen(old, vlen);
            memmove((char *)old + hdr + klen, val, vlen);
            old->enc = string_enc(val, vlen);
            entry_set_lru(old, db_lfu_mode ? lfu_touch(entry_lru(old)) : lru_clock_now);
            if (expire >= 0)
                entry_put_expire(old, expire);
            return;
        }
    }
    struct entry *e = entry_new_string(key, klen, val, vlen, expire);
    if (old)
        db_replace(c->db, slot, idx, e);
    else
        db_add(c->db, slot, e);
}

/* A key or value an entry cannot hold (entry.h: ENTRY_MAX_LEN).  The
 * protocol's proto-max-bulk-len keeps clients' arguments below it; a script
 * can build longer strings.  Replies and returns 1 then. */
static int entry_too_long(struct client *c, int ki, int vi)
{
    if ((unsigned long long)c->argvlen[ki] > (unsigned long long)ENTRY_MAX_LEN ||
        (unsigned long long)c->argvlen[vi] > (unsigned long long)ENTRY_MAX_LEN) {
        reply_error(&c->out, ERR_STRING_SIZE);
        return 1;
    }
    return 0;
}

static void set_generic(struct client *c, int flags, long long when, int ok_reply_int)
{
    if (entry_too_long(c, 1, 2))
        return;
    unsigned slot = kslot(c, 1);
    long idx = -1;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    long long expire = -1;

    if ((flags & SET_GET) && e && e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (((flags & SET_NX) && e) || ((flags & SET_XX) && !e)) {
        if (flags & SET_GET) {
            if (e)
                reply_entry_string(c, e);
            else
                reply_null(&c->out);
        } else if (ok_reply_int) {
            reply_int(&c->out, 0);
        } else {
            reply_null(&c->out);
        }
        return;
    }
    if (flags & SET_GET) {
        if (e)
            reply_entry_string(c, e);
        else
            reply_null(&c->out);
    }
    if (flags & SET_ANY_EXPIRE)
        expire = when;
    else if ((flags & SET_KEEPTTL) && e)
        expire = entry_expire(e);
    if (expire >= 0 && db_already_expired(expire)) {
        /* Already expired: the write happens and the key is gone at once.
         * Redis stores it and expires it at the next access: the same
         * events, in that order. */
        if (!e)
            KEY_EVENT(c, 1, NOTIFY_NEW, "new");
        if (e)
            db_del(c->db, slot, c->argv[1], c->argvlen[1]);
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "set");
        KEY_EVENT(c, 1, NOTIFY_GENERIC, "expire");
        KEY_EVENT(c, 1, NOTIFY_EXPIRED, "expired");
        prop_key_cmd(c, "DEL", NULL, 0, 0);
    } else {
        store_string(c, 1, e, idx, c->argv[2], c->argvlen[2], expire);
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "set");
        if (flags & SET_ANY_EXPIRE) {
            KEY_EVENT(c, 1, NOTIFY_GENERIC, "expire");
            /* Already absolute (PXAT): fed as it came, as Redis. */
            if (!(flags & SET_PXAT))
                prop_set_pxat(c, 2, expire);
        } else if (flags & SET_GET) {
            prop_set_without_get(c);
        }
    }
    if (!(flags & SET_GET)) {
        if (ok_reply_int)
            reply_int(&c->out, 1);
        else
            reply_ok(&c->out);
    }
}

void set_command(struct client *c)
{
    long long when;
    int flags = parse_set_options(c, 3, 0, &when);
    if (flags < 0)
        return;
    set_generic(c, flags, when, 0);
}

void setnx_command(struct client *c)
{
    set_generic(c, SET_NX, -1, 1);
}

static void setex_generic(struct client *c, long long unit, const char *name)
{
    long long when;
    if (parse_expire_arg(c, 2, unit, 0, &when, name) < 0 || entry_too_long(c, 1, 3))
        return;
    /* SETEX key seconds value: the value is argv[3]. */
    unsigned slot = kslot(c, 1);
    long idx = -1;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    store_string(c, 1, e, idx, c->argv[3], c->argvlen[3], when);
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "set");
    KEY_EVENT(c, 1, NOTIFY_GENERIC, "expire");
    prop_set_pxat(c, 3, when);
    reply_ok(&c->out);
}

void setex_command(struct client *c)
{
    setex_generic(c, 1000, "setex");
}

void psetex_command(struct client *c)
{
    setex_generic(c, 1, "psetex");
}

void get_command(struct client *c)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    if (!e)
        reply_null(&c->out);
    else if (e->type != OBJ_STRING)
        reply_error(&c->out, ERR_WRONGTYPE);
    else
        reply_entry_string(c, e);
}

void getex_command(struct client *c)
{
    long long when;
    unsigned slot = kslot(c, 1);
    long idx;
    int flags = parse_set_options(c, 2, 1, &when);
    struct entry *e;
    if (flags < 0)
        return;
    e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], 0, &idx);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    reply_entry_string(c, e);
    if ((flags & SET_ANY_EXPIRE) && db_already_expired(when)) {
        db_del(c->db, slot, c->argv[1], c->argvlen[1]);
        KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "del");
        prop_key_cmd(c, "DEL", NULL, 0, 0);
    } else if (flags & SET_ANY_EXPIRE) {
        db_set_expire(c->db, slot, idx, when);
        KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "expire");
        prop_key_cmd(c, "PEXPIREAT", NULL, when, 1);
    } else if ((flags & SET_PERSIST) && (e->flags & E_HAS_EXPIRE)) {
        db_set_expire(c->db, slot, idx, -1);
        KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "persist");
        prop_key_cmd(c, "PERSIST", NULL, 0, 0);
    }
}

void getdel_command(struct client *c)
{
    unsigned slot = kslot(c, 1);
    struct entry *e = db_get(c->db, slot, c->argv[1], c->argvlen[1], 0);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    reply_entry_string(c, e);
    db_del(c->db, slot, c->argv[1], c->argvlen[1]);
    KEY_MODIFIED(c, 1, NOTIFY_GENERIC, "del");
    prop_key_cmd(c, "DEL", NULL, 0, 0);
}

void getset_command(struct client *c)
{
    set_generic(c, SET_GET, -1, 0);
}

void mset_command(struct client *c)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2)
        if (entry_too_long(c, i, i + 1))
            return;
    for (int i = 1; i < c->argc; i += 2) {
        long idx = -1;
        struct entry *e = db_get_idx(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS, &idx);
        store_string(c, i, e, idx, c->argv[i + 1], c->argvlen[i + 1], -1);
        KEY_MODIFIED(c, i, NOTIFY_STRING, "set");
    }
    reply_ok(&c->out);
}

void msetnx_command(struct client *c)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2)
        if (entry_too_long(c, i, i + 1))
            return;
    for (int i = 1; i < c->argc; i += 2) {
        if (db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS | LK_NOTOUCH)) {
            reply_int(&c->out, 0);
            return;
        }
    }
    for (int i = 1; i < c->argc; i += 2) {
        long idx = -1;
        struct entry *e = db_get_idx(c->db, kslot(c, i), c->argv[i], c->argvlen[i], LK_NOSTATS, &idx);
        store_string(c, i, e, idx, c->argv[i + 1], c->argvlen[i + 1], -1);
        KEY_MODIFIED(c, i, NOTIFY_STRING, "set");
    }
    reply_int(&c->out, 1);
}

void mget_command(struct client *c)
{
    reply_array(&c->out, c->argc - 1);
    for (int i = 1; i < c->argc; i++) {
        struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], 0);
        if (!e || e->type != OBJ_STRING)
            reply_null(&c->out);
        else
            reply_entry_string(c, e);
    }
}

/* Grow the string at argv[1] to newlen bytes (the first oldlen kept),
 * with room to spare for repeated appends.  Returns the entry. */
static struct entry *grow_string(struct client *c, struct entry *e, long idx, size_t newlen)
{
    struct table *t = ks.dbs[c->db]->t[kslot(c, 1)];
    if (!entry_vlen_fits(e, newlen)) {
        e = entry_to_long(e, 0);
        table_set(t, idx, e);
    }
    size_t need = entry_hdr(e) + entry_klen(e) + newlen;
    if (hk_usable(e) < need) {
        size_t alloc = need < 1024 * 1024 ? need * 2 : need + 1024 * 1024;
        e = hk_realloc(e, alloc);
        table_set(t, idx, e);
    }
    return e;
}

void append_command(struct client *c)
{
    unsigned slot = kslot(c, 1);
    long idx;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (!e) {
        if (entry_too_long(c, 1, 2))
            return;
        e = entry_new_string(c->argv[1], c->argvlen[1], c->argv[2], c->argvlen[2], -1);
        db_add(c->db, slot, e);
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "append");
        reply_int(&c->out, (long long)c->argvlen[2]);
        return;
    }
    if (e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if ((long long)entry_vlen(e) + (long long)c->argvlen[2] > cfg.proto_max_bulk_len) {
        reply_error(&c->out, ERR_STRING_SIZE);
        return;
    }
    size_t old = entry_vlen(e);
    e = grow_string(c, e, idx, old + c->argvlen[2]);
    memcpy(entry_val(e) + old, c->argv[2], c->argvlen[2]);
    entry_set_vlen(e, old + c->argvlen[2]); /* grow_string made the header fit */
    e->enc = ENC_RAW;
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "append");
    reply_int(&c->out, (long long)entry_vlen(e));
}

void strlen_command(struct client *c)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    if (!e)
        reply_int(&c->out, 0);
    else if (e->type != OBJ_STRING)
        reply_error(&c->out, ERR_WRONGTYPE);
    else
        reply_int(&c->out, entry_vlen(e));
}

void getrange_command(struct client *c)
{
    long long start, end, len;
    struct entry *e;
    if (arg_ll(c, 2, &start) < 0 || arg_ll(c, 3, &end) < 0)
        return;
    e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    if (!e) {
        reply_bulk(&c->out, "", 0);
        return;
    }
    if (e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    len = entry_vlen(e);
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(&c->out, "", 0);
        return;
    }
    if (start < 0)
        start = len + start;
    if (end < 0)
        end = len + end;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= len)
        end = len - 1;
    if (start > end || len == 0) {
        reply_bulk(&c->out, "", 0);
        return;
    }
    reply_bulk(&c->out, entry_val(e) + start, (size_t)(end - start + 1));
}

void setrange_command(struct client *c)
{
    long long off;
    unsigned slot = kslot(c, 1);
    long idx;
    struct entry *e;
    size_t vlen = c->argvlen[3];
    if (arg_ll(c, 2, &off) < 0)
        return;
    if (off < 0) {
        reply_error(&c->out, "ERR offset is out of range");
        return;
    }
    e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (e && e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return;
    }
    if (vlen == 0) {
        reply_int(&c->out, e ? entry_vlen(e) : 0);
        return;
    }
    /* Compare without adding: off can be near LLONG_MAX. */
    if (off > cfg.proto_max_bulk_len - (long long)vlen) {
        reply_error(&c->out, ERR_STRING_SIZE);
        return;
    }
    if (!e) {
        e = entry_new(OBJ_STRING, c->argv[1], c->argvlen[1], (size_t)off + vlen, -1);
        memset(entry_val(e), 0, (size_t)off);
        memcpy(entry_val(e) + off, c->argv[3], vlen);
        e->enc = ENC_RAW;
        db_add(c->db, slot, e);
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "setrange");
        reply_int(&c->out, entry_vlen(e));
        return;
    }
    size_t old = entry_vlen(e), newlen = (size_t)off + vlen > old ? (size_t)off + vlen : old;
    e = grow_string(c, e, idx, newlen);
    if ((size_t)off > old)
        memset(entry_val(e) + old, 0, (size_t)off - old);
    memcpy(entry_val(e) + off, c->argv[3], vlen);
    entry_set_vlen(e, newlen); /* grow_string made the header fit */
    e->enc = ENC_RAW;
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "setrange");
    reply_int(&c->out, entry_vlen(e));
}

static void incr_generic(struct client *c, long long by)
{
    unsigned slot = kslot(c, 1);
    long idx = -1;
    long long v = 0;
    char buf[24];
    int n;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (e) {
        if (e->type != OBJ_STRING) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        if (!str_to_ll(entry_val(e), entry_vlen(e), &v)) {
            reply_error(&c->out, ERR_NOT_INT);
            return;
        }
    }
    if ((by < 0 && v < 0 && by < LLONG_MIN - v) || (by > 0 && v > 0 && by > LLONG_MAX - v)) {
        reply_error(&c->out, ERR_OVERFLOW);
        return;
    }
    v += by;
    n = ll_to_str(buf, v);
    store_string(c, 1, e, idx, buf, (size_t)n, e ? entry_expire(e) : -1);
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "incrby");
    reply_int(&c->out, v);
}

void incr_command(struct client *c)
{
    incr_generic(c, 1);
}

void decr_command(struct client *c)
{
    incr_generic(c, -1);
}

void incrby_command(struct client *c)
{
    long long by;
    if (arg_ll(c, 2, &by) < 0)
        return;
    incr_generic(c, by);
}

void decrby_command(struct client *c)
{
    long long by;
    if (arg_ll(c, 2, &by) < 0)
        return;
    if (by == LLONG_MIN) {
        reply_error(&c->out, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

void incrbyfloat_command(struct client *c)
{
    unsigned slot = kslot(c, 1);
    long idx = -1;
    long double v = 0, by;
    char buf[5200];
    int n;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (e) {
        if (e->type != OBJ_STRING) {
            reply_error(&c->out, ERR_WRONGTYPE);
            return;
        }
        if (!str_to_ld(entry_val(e), entry_vlen(e), &v)) {
            reply_error(&c->out, ERR_NOT_FLOAT);
            return;
        }
    }
    if (arg_ld(c, 2, &by) < 0)
        return;
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_error(&c->out, "ERR increment would produce NaN or Infinity");
        return;
    }
    n = ld_to_str_human(buf, sizeof(buf), v);
    store_string(c, 1, e, idx, buf, (size_t)n, e ? entry_expire(e) : -1);
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "incrbyfloat");
    /* The float's rendering is the replayed value: SET ... KEEPTTL. */
    prop_prevent();
    prop_op_begin(c->db);
    prop_op_str("SET");
    prop_op_arg(c->argv[1], c->argvlen[1]);
    prop_op_arg(buf, (size_t)n);
    prop_op_str("KEEPTTL");
    prop_op_end();
    reply_bulk(&c->out, buf, (size_t)n);
}

/* LCS: the classic O(n*m) dynamic programme, as Redis does, with the
 * transient table bounded by proto-max-bulk-len. */
void lcs_command(struct client *c)
{
    int getlen = 0, getidx = 0, withmatchlen = 0;
    long long minmatchlen = 0;
    const char *a = "", *b = "";
    size_t alen = 0, blen = 0;

    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "idx"))
            getidx = 1;
        else if (arg_is(c, j, "len"))
            getlen = 1;
        else if (arg_is(c, j, "withmatchlen"))
            withmatchlen = 1;
        else if (arg_is(c, j, "minmatchlen") && more) {
            if (arg_ll(c, j + 1, &minmatchlen) < 0)
                return;
            if (minmatchlen < 0)
                minmatchlen = 0;
            j++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    struct entry *ea = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    struct entry *eb = db_get(c->db, kslot(c, 2), c->argv[2], c->argvlen[2], 0);
    if ((ea && ea->type != OBJ_STRING) || (eb && eb->type != OBJ_STRING)) {
        reply_error(&c->out, "ERR The specified keys must contain string values");
        return;
    }
    if (getidx && getlen) {
        reply_error(&c->out, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (ea) {
        a = entry_val(ea);
        alen = entry_vlen(ea);
    }
    if (eb) {
        b = entry_val(eb);
        blen = entry_vlen(eb);
    }
    /* Two 4 GiB - 1 strings make (2^32)^2 cells: the product must not wrap. */
    unsigned long long cells;
    if (__builtin_mul_overflow((unsigned long long)alen + 1, (unsigned long long)blen + 1, &cells) ||
        cells > (unsigned long long)cfg.proto_max_bulk_len / sizeof(uint32_t) || cells > SIZE_MAX / sizeof(uint32_t)) {
        reply_error(&c->out, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    uint32_t *dp = hk_malloc((size_t)cells * sizeof(uint32_t));
#define LCS(i, j) dp[(size_t)(i) * (blen + 1) + (j)]
    for (size_t i = 0; i <= alen; i++) {
        for (size_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0)
                LCS(i, j) = 0;
            else if (a[i - 1] == b[j - 1])
                LCS(i, j) = LCS(i - 1, j - 1) + 1;
            else
                LCS(i, j) = LCS(i - 1, j) > LCS(i, j - 1) ? LCS(i - 1, j) : LCS(i, j - 1);
        }
    }
    uint32_t idx = LCS(alen, blen);
    if (getlen) {
        reply_int(&c->out, idx);
        hk_free(dp);
        return;
    }
    char *result = getidx ? NULL : hk_malloc(idx + 1);
    size_t mark = 0;
    long long nmatch = 0;
    if (getidx) {
        reply_map(&c->out, 2);
        reply_bulk_cstr(&c->out, "matches");
        mark = reply_defer(&c->out);
    }
    size_t i = alen, j = blen, pos = idx;
    long long a_start = 0, a_end = 0, b_start = 0, b_end = 0;
    int range = 0;
    while (i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            if (result)
                result[--pos] = a[i - 1];
            if (!range) {
                a_start = a_end = (long long)i - 1;
                b_start = b_end = (long long)j - 1;
                range = 1;
            } else if (a_start == (long long)i && b_start == (long long)j) {
                a_start--;
                b_start--;
            } else {
                emit = 1;
            }
            if (a_start == 0 || b_start == 0)
                emit = 1;
            i--;
            j--;
        } else {
            if (LCS(i - 1, j) > LCS(i, j - 1))
                i--;
            else
                j--;
            if (range)
                emit = 1;
        }
        if (emit && getidx && range) {
            long long mlen = a_end - a_start + 1;
            if (mlen >= minmatchlen) {
                reply_array(&c->out, withmatchlen ? 3 : 2);
                reply_array(&c->out, 2);
                reply_int(&c->out, a_start);
                reply_int(&c->out, a_end);
                reply_array(&c->out, 2);
                reply_int(&c->out, b_start);
                reply_int(&c->out, b_end);
                if (withmatchlen)
                    reply_int(&c->out, mlen);
                nmatch++;
            }
            range = 0;
        }
        if (emit && !getidx)
            range = 0;
    }
    hk_free(dp);
#undef LCS
    if (getidx) {
        reply_defer_array(&c->out, mark, nmatch);
        reply_bulk_cstr(&c->out, "len");
        reply_int(&c->out, idx);
    } else {
        reply_bulk(&c->out, result, idx);
        hk_free(result);
    }
}
