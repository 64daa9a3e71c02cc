/* t_list.c - the list commands (LPUSH ... BLMPOP).  The value itself, its
 * encodings and conversions, is types/list.c.
 *
 * Replies are written straight from the listpack bytes (no temporary copy
 * of an element except when LMOVE must carry it to another list), and
 * every command that adds elements signals the key to blocked clients.
 * A list that becomes empty is deleted.  Handlers run with their keys'
 * shard locks held by the dispatcher. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "../db/object.h"
#include "../ds/listpack.h"
#include "../ds/quicklist.h"
#include "commands.h"
#include "notify.h"
#include "../persist/prop.h"
#include "../types/list.h"
#include "t_common.h"

#define LHEAD QL_HEAD
#define LTAIL QL_TAIL

#define ERR_POSITIVE "ERR value is out of range, must be positive"
#define ERR_RANK_ZERO                                                                                             \
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start " \
    "from the end of the list"

/* ------------------------------------------------------------ helpers --- */

static inline void reply_elem(struct reply *r, const unsigned char *lp, size_t pos)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s)
        reply_bulk(r, (const char *)v.s, v.len);
    else
        reply_bulk_ll(r, v.ll);
}

/* The list at argv[i] for a command (flags: LK_NOSTATS for writes).
 * Replies WRONGTYPE and sets *err when the key holds another type. */
static struct entry *lookup_list(struct client *c, int i, int flags, int *err)
{
    struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], flags);
    *err = 0;
    if (e && e->type != OBJ_LIST) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *err = 1;
        return NULL;
    }
    return e;
}

/* A new empty list (listpack) stored at argv[i]. */
static struct entry *create_list(struct client *c, int i)
{
    struct entry *e = entry_new_obj(OBJ_LIST, ENC_LISTPACK, c->argv[i], c->argvlen[i], lp_new(), -1);
    db_add(c->db, kslot(c, i), e);
    return e;
}

/* After removing elements from the list at argv[i]: delete the key if the
 * list is empty, else maybe go back to a listpack.  1 if deleted. */
static int after_removal(struct client *c, int i, struct entry *e)
{
    if (list_length(e) == 0) {
        db_del(c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
        return 1;
    }
    list_shrink_check(e);
    return 0;
}

/* Redis's order after n elements left the list at argv[i] (pops, LREM,
 * LTRIM): the event, the key deleted when empty ("del"), then the WATCH /
 * tracking signal.  Counts n changes, as Redis (LTRIM of nothing: none).
 * 1 if the key was deleted. */
static int removed_event(struct client *c, int i, struct entry *e, const char *event, size_t n)
{
    int del;
    KEY_EVENT(c, i, NOTIFY_LIST, event);
    del = after_removal(c, i, e);
    if (del)
        KEY_EVENT(c, i, NOTIFY_GENERIC, "del");
    KEY_SIGNAL_ND(c, i);
    prop_dirty_add(n);
    return del;
}

static inline const char *pop_event(int where)
{
    return where == LHEAD ? "lpop" : "rpop";
}

static inline const char *push_event(int where)
{
    return where == LHEAD ? "lpush" : "rpush";
}

/* Reply n elements starting at index `from`, forwards or backwards. */
static void reply_elems(struct client *c, struct entry *e, long long from, size_t n, int fwd)
{
    struct reply *r = &c->out;
    reply_array(r, (long long)n);
    if (e->enc == ENC_LISTPACK) {
        const unsigned char *lp = entry_ptr(e);
        size_t pos = lp_seek(lp, from);
        if (fwd) {
            for (; n-- > 0; pos = lp_next(lp, pos))
                reply_elem(r, lp, pos);
        } else {
            for (; n-- > 0; pos = lp_prev(lp, pos))
                reply_elem(r, lp, pos);
        }
        return;
    }
    struct ql_iter it;
    if (ql_iter_start(&it, entry_ptr(e), from, fwd)) {
        do {
            reply_elem(r, it.lp, it.pos);
        } while (--n > 0 && ql_iter_next(&it));
    }
    ql_iter_end(&it);
}

/* Reply the range [start, end] (Redis's index rules), forwards or reversed. */
static void reply_range(struct client *c, struct entry *e, long long start, long long end, int reverse)
{
    if (!index_range(&start, &end, (long long)list_length(e))) {
        reply_array(&c->out, 0);
        return;
    }
    reply_elems(c, e, reverse ? end : start, (size_t)(end - start + 1), !reverse);
}

/* Pop one element from an end, replying it as a bulk. */
static void pop_one_reply(struct client *c, struct entry *e, int where)
{
    size_t pos;
    const unsigned char *lp = list_end(e, where, &pos);
    reply_elem(&c->out, lp, pos);
    list_pop_end(e, where, pos);
}

/* Pop up to count elements from an end, replying them as an array in
 * pop order.  Returns how many it popped. */
static size_t pop_many_reply(struct client *c, struct entry *e, int where, long long count)
{
    size_t len = list_length(e), n = (unsigned long long)count > len ? len : (size_t)count;
    reply_elems(c, e, where == LHEAD ? 0 : -1, n, where == LHEAD);
    list_del_range(e, where == LHEAD ? 0 : len - n, n);
    return n;
}

static int parse_where(struct client *c, int i, int *where)
{
    if (arg_is(c, i, "left"))
        *where = LHEAD;
    else if (arg_is(c, i, "right"))
        *where = LTAIL;
    else {
        reply_error(&c->out, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- pushes --- */

static void push_generic(struct client *c, int where, int xx)
{
    int err;
    size_t bytes = 0;
    struct entry *e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        if (xx) {
            reply_int(&c->out, 0);
            return;
        }
        e = create_list(c, 1);
    }
    for (int j = 2; j < c->argc; j++)
        bytes += c->argvlen[j];
    list_grow_check(e, bytes, (size_t)c->argc - 2);
    reply_int(&c->out, (long long)list_push_many(e, where, c->argv + 2, c->argvlen + 2, c->argc - 2));
    KEY_MODIFIED(c, 1, NOTIFY_LIST, push_event(where));
    prop_dirty_add((unsigned long long)c->argc - 3); /* one change per element, as Redis */
    signal_key_ready(c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
}

void lpush_command(struct client *c)
{
    push_generic(c, LHEAD, 0);
}

void rpush_command(struct client *c)
{
    push_generic(c, LTAIL, 0);
}

void lpushx_command(struct client *c)
{
    push_generic(c, LHEAD, 1);
}

void rpushx_command(struct client *c)
{
    push_generic(c, LTAIL, 1);
}

/* --------------------------------------------------------------- pops --- */

static void pop_generic(struct client *c, int where)
{
    long long count = -1;
    int err;
    struct entry *e;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (c->argc == 3 && arg_ll_range(c, 2, 0, LLONG_MAX, &count, ERR_POSITIVE) < 0)
        return;
    e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        if (count >= 0)
            reply_null_array(&c->out);
        else
            reply_null(&c->out);
        return;
    }
    if (count == 0) {
        reply_array(&c->out, 0);
        return;
    }
    size_t n = 1;
    if (count < 0)
        pop_one_reply(c, e, where);
    else
        n = pop_many_reply(c, e, where, count);
    removed_event(c, 1, e, pop_event(where), n);
}

void lpop_command(struct client *c)
{
    pop_generic(c, LHEAD);
}

void rpop_command(struct client *c)
{
    pop_generic(c, LTAIL);
}

/* -------------------------------------------------------------- reads --- */

void llen_command(struct client *c)
{
    int err;
    struct entry *e = lookup_list(c, 1, 0, &err);
    if (err)
        return;
    reply_int(&c->out, e ? (long long)list_length(e) : 0);
}

void lrange_command(struct client *c)
{
    long long start, end;
    int err;
    struct entry *e;
    if (arg_ll(c, 2, &start) < 0 || arg_ll(c, 3, &end) < 0)
        return;
    e = lookup_list(c, 1, 0, &err);
    if (err)
        return;
    if (!e) {
        reply_array(&c->out, 0);
        return;
    }
    reply_range(c, e, start, end, 0);
}

void lindex_command(struct client *c)
{
    long long index;
    int err;
    struct list_iter it;
    struct entry *e = lookup_list(c, 1, 0, &err);
    if (err)
        return;
    if (!e) {
        reply_null(&c->out);
        return;
    }
    if (arg_ll(c, 2, &index) < 0)
        return;
    if (list_iter_start(&it, e, index, 1))
        reply_elem(&c->out, it.lp, it.pos);
    else
        reply_null(&c->out);
    list_iter_end(&it);
}

void lpos_command(struct client *c)
{
    long long rank = 1, count = -1, maxlen = 0, index = 0, matches = 0, found = -1, nreplied = 0, llen;
    int fwd, err, ok;
    size_t mark = 0;
    struct list_needle nd;
    struct list_iter it;
    struct entry *e;

    for (int j = 3; j < c->argc; j++) {
        int more = j + 1 < c->argc;
        if (arg_is(c, j, "rank") && more) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &rank)) {
                reply_error(&c->out, ERR_NOT_INT);
                return;
            }
            if (rank == LLONG_MIN) {
                reply_errorf(&c->out, "ERR value is out of range, value must between %lld and %lld", -LLONG_MAX,
                             LLONG_MAX);
                return;
            }
            if (rank == 0) {
                reply_error(&c->out, ERR_RANK_ZERO);
                return;
            }
        } else if (arg_is(c, j, "count") && more) {
            j++;
            if (arg_ll_range(c, j, 0, LLONG_MAX, &count, "ERR COUNT can't be negative") < 0)
                return;
        } else if (arg_is(c, j, "maxlen") && more) {
            j++;
            if (arg_ll_range(c, j, 0, LLONG_MAX, &maxlen, "ERR MAXLEN can't be negative") < 0)
                return;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    fwd = rank > 0;
    if (rank < 0)
        rank = -rank;
    e = lookup_list(c, 1, 0, &err);
    if (err)
        return;
    if (!e) {
        if (count != -1)
            reply_array(&c->out, 0);
        else
            reply_null(&c->out);
        return;
    }
    list_needle_init(&nd, c->argv[2], c->argvlen[2]);
    llen = (long long)list_length(e);
    if (count != -1)
        mark = reply_defer(&c->out);
    ok = list_iter_start(&it, e, fwd ? 0 : -1, fwd);
    while (ok && (maxlen == 0 || index < maxlen)) {
        if (list_elem_eq(it.lp, it.pos, &nd) && ++matches >= rank) {
            long long at = fwd ? index : llen - index - 1;
            if (count == -1) {
                found = at;
                break;
            }
            reply_int(&c->out, at);
            nreplied++;
            if (count && nreplied >= count)
                break;
        }
        index++;
        ok = list_iter_next(&it);
    }
    list_iter_end(&it);
    if (count != -1)
        reply_defer_array(&c->out, mark, nreplied);
    else if (found >= 0)
        reply_int(&c->out, found);
    else
        reply_null(&c->out);
}

/* ------------------------------------------------------------- writes --- */

void lset_command(struct client *c)
{
    long long index;
    int err, done;
    struct entry *e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        reply_error(&c->out, ERR_NO_KEY);
        return;
    }
    if (arg_ll(c, 2, &index) < 0)
        return;
    list_grow_check(e, c->argvlen[3], 1);
    done = list_replace(e, index, c->argv[3], c->argvlen[3]);
    if (!done) {
        reply_error(&c->out, "ERR index out of range");
        return;
    }
    reply_ok(&c->out);
    list_shrink_check(e);
    KEY_MODIFIED(c, 1, NOTIFY_LIST, "lset");
}

void linsert_command(struct client *c)
{
    int after, err, found;
    struct list_needle nd;
    struct entry *e;
    if (arg_is(c, 2, "after"))
        after = 1;
    else if (arg_is(c, 2, "before"))
        after = 0;
    else {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    /* Redis converts first, whether or not the pivot is found. */
    list_grow_check(e, c->argvlen[4], 1);
    list_needle_init(&nd, c->argv[3], c->argvlen[3]);
    found = list_insert(e, &nd, after, c->argv[4], c->argvlen[4]);
    if (!found) {
        reply_int(&c->out, -1);
        return;
    }
    KEY_MODIFIED(c, 1, NOTIFY_LIST, "linsert");
    reply_int(&c->out, (long long)list_length(e));
    signal_key_ready(c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
}

void lrem_command(struct client *c)
{
    long long toremove, removed = 0;
    int err, ok;
    struct list_needle nd;
    struct list_iter it;
    struct entry *e;
    if (arg_ll(c, 2, &toremove) < 0)
        return;
    e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    list_needle_init(&nd, c->argv[3], c->argvlen[3]);
    if (toremove < 0) {
        /* -LLONG_MIN overflows: any count that large means "all". */
        toremove = toremove == LLONG_MIN ? 0 : -toremove;
        ok = list_iter_start(&it, e, -1, 0);
    } else {
        ok = list_iter_start(&it, e, 0, 1);
    }
    while (ok) {
        if (list_elem_eq(it.lp, it.pos, &nd)) {
            ok = list_iter_del(&it, e);
            if (++removed == toremove)
                break;
        } else {
            ok = list_iter_next(&it);
        }
    }
    list_iter_end(&it);
    if (removed)
        removed_event(c, 1, e, "lrem", (size_t)removed);
    reply_int(&c->out, removed);
}

void ltrim_command(struct client *c)
{
    long long start, end, len, ltrim, rtrim;
    int err;
    struct entry *e;
    if (arg_ll(c, 2, &start) < 0 || arg_ll(c, 3, &end) < 0)
        return;
    e = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!e) {
        reply_ok(&c->out);
        return;
    }
    len = (long long)list_length(e);
    if (!index_range(&start, &end, len)) {
        ltrim = len;
        rtrim = 0;
    } else {
        ltrim = start;
        rtrim = len - end - 1;
    }
    list_del_range(e, 0, (size_t)ltrim);
    if (rtrim)
        list_del_range(e, (size_t)(len - ltrim - rtrim), (size_t)rtrim);
    removed_event(c, 1, e, "ltrim", (size_t)(ltrim + rtrim));
    reply_ok(&c->out);
}

/* --------------------------------------------------------------- moves --- */

/* Pop from argv[1] at `from`, push to argv[2] at `to`, reply the element. */
static void lmove_generic(struct client *c, int from, int to)
{
    int err;
    char sbuf[128], *heap = NULL;
    const char *val;
    size_t vlen, pos, bytes;
    const unsigned char *lp;
    struct lp_val v;
    struct entry *src, *dst;

    src = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!src) {
        reply_null(&c->out);
        return;
    }
    dst = lookup_list(c, 2, LK_NOSTATS, &err);
    if (err)
        return;

    /* Take the element out of src (a copy: src's bytes change below). */
    lp = list_end(src, from, &pos);
    lp_get(lp, pos, &v);
    if (v.s) {
        vlen = v.len;
        if (vlen <= sizeof(sbuf)) {
            memcpy(sbuf, v.s, vlen);
            val = sbuf;
        } else {
            heap = hk_memdup(v.s, vlen);
            val = heap;
        }
        bytes = vlen;
    } else {
        vlen = (size_t)ll_to_str(sbuf, v.ll);
        val = sbuf;
        /* Redis counts an integer popped from a quicklist as 0 bytes when
         * deciding the destination's conversion. */
        bytes = src->enc == ENC_QUICKLIST ? 0 : vlen;
    }
    list_pop_end(src, from, pos);

    if (!dst)
        dst = create_list(c, 2);
    list_grow_check(dst, bytes, 1);
    list_push(dst, to, val, vlen);
    /* the destination's signal counts no change: the move is one, as Redis */
    KEY_SIGNAL_ND(c, 2);
    KEY_EVENT(c, 2, NOTIFY_LIST, push_event(to));
    reply_bulk(&c->out, val, vlen);
    hk_free(heap);
    signal_key_ready(c->db, kslot(c, 2), c->argv[2], c->argvlen[2]);
    removed_event(c, 1, src, pop_event(from), 1);
    if (c->cmd->flags & CMD_BLOCKING) {
        /* BLMOVE / BRPOPLPUSH served (now or for a blocked client): LMOVE
         * with the client's own direction words, or RPOPLPUSH, as Redis
         * rewrites them (its timeout dropped). */
        prop_prevent();
        prop_op_begin(c->db);
        if (c->cmd->fn == brpoplpush_command) {
            prop_op_str("RPOPLPUSH");
            prop_op_arg(c->argv[1], c->argvlen[1]);
            prop_op_arg(c->argv[2], c->argvlen[2]);
        } else {
            prop_op_str("LMOVE");
            for (int i = 1; i <= 4; i++)
                prop_op_arg(c->argv[i], c->argvlen[i]);
        }
        prop_op_end();
    }
}

void lmove_command(struct client *c)
{
    int from, to;
    if (parse_where(c, 3, &from) < 0 || parse_where(c, 4, &to) < 0)
        return;
    lmove_generic(c, from, to);
}

void rpoplpush_command(struct client *c)
{
    lmove_generic(c, LTAIL, LHEAD);
}

/* ----------------------------------------------- multi-key and blocking --- */

/* Pop from the first non-empty list among the n keys at argv[first..]:
 * count < 0: [key, element]; else [key, [elements...]].  Returns 1 if
 * served, 0 if every list is empty or missing, -1 on WRONGTYPE (replied). */
static int serve_pop(struct client *c, int first, int n, int where, long long count)
{
    for (int i = first; i < first + n; i++) {
        int err;
        struct entry *e = lookup_list(c, i, LK_NOSTATS, &err);
        if (err)
            return -1;
        if (!e || list_length(e) == 0)
            continue;
        reply_array(&c->out, 2);
        reply_bulk(&c->out, c->argv[i], c->argvlen[i]);
        size_t popped = 1;
        if (count < 0)
            pop_one_reply(c, e, where);
        else
            popped = pop_many_reply(c, e, where, count);
        removed_event(c, i, e, pop_event(where), popped);
        /* Fed as the plain pop of the key served (BLPOP -> LPOP key,
         * [B]LMPOP -> LPOP key <count popped>), as Redis. */
        prop_prevent();
        prop_op_begin(c->db);
        prop_op_str(where == LHEAD ? "LPOP" : "RPOP");
        prop_op_arg(c->argv[i], c->argvlen[i]);
        if (count >= 0)
            prop_op_ll((long long)popped);
        prop_op_end();
        return 1;
    }
    return 0;
}

/* Block on the n keys at argv[first..]. */
static void block_keys(struct client *c, int first, int n, long long deadline, int null_kind)
{
    int stack[64] = {0}, *kidx = n <= 64 ? stack : hk_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        kidx[i] = first + i;
    block_on_keys(c, kidx, n, OBJ_LIST, deadline, null_kind);
    if (kidx != stack)
        hk_free(kidx);
}

static void bpop_generic(struct client *c, int where)
{
    long long deadline;
    int n = c->argc - 2;
    if (parse_block_timeout(c, c->argc - 1, &deadline) < 0)
        return;
    if (serve_pop(c, 1, n, where, -1) != 0)
        return;
    block_keys(c, 1, n, deadline, BLOCK_NULL_ARRAY);
}

void blpop_command(struct client *c)
{
    bpop_generic(c, LHEAD);
}

void brpop_command(struct client *c)
{
    bpop_generic(c, LTAIL);
}

static void blmove_generic(struct client *c, int from, int to, int timeout_idx)
{
    long long deadline;
    int err;
    struct entry *src;
    if (parse_block_timeout(c, timeout_idx, &deadline) < 0)
        return;
    src = lookup_list(c, 1, LK_NOSTATS, &err);
    if (err)
        return;
    if (!src) {
        block_keys(c, 1, 1, deadline, BLOCK_NULL_BULK);
        return;
    }
    lmove_generic(c, from, to);
}

void blmove_command(struct client *c)
{
    int from, to;
    if (parse_where(c, 3, &from) < 0 || parse_where(c, 4, &to) < 0)
        return;
    blmove_generic(c, from, to, 5);
}

void brpoplpush_command(struct client *c)
{
    blmove_generic(c, LTAIL, LHEAD, 3);
}

/* numkeys at argv[ni], keys after it, then LEFT|RIGHT [COUNT n]: keys
 * when 1 <= numkeys and the where argument exists. */
int lmpop_getkeys(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 1, 0, 1);
}

int blmpop_getkeys(struct client *c, int *idx, int max)
{
    return getkeys_numkeys(c, idx, max, 2, 0, 1);
}

static void mpop_generic(struct client *c, int ni, int blocking)
{
    long long numkeys, count = -1, deadline = 0;
    int where, wi;
    if (arg_ll_range(c, ni, 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0") < 0)
        return;
    if (numkeys > c->argc - ni - 2) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    wi = ni + (int)numkeys + 1;
    if (parse_where(c, wi, &where) < 0)
        return;
    for (int j = wi + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c, j, "count") && j + 1 < c->argc) {
            j++;
            if (arg_ll_range(c, j, 1, LLONG_MAX, &count, "ERR count should be greater than 0") < 0)
                return;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1)
        count = 1;
    if (blocking && parse_block_timeout(c, 1, &deadline) < 0)
        return;
    if (serve_pop(c, ni + 1, (int)numkeys, where, count) != 0)
        return;
    if (blocking)
        block_keys(c, ni + 1, (int)numkeys, deadline, BLOCK_NULL_ARRAY);
    else
        reply_null_array(&c->out);
}

void lmpop_command(struct client *c)
{
    mpop_generic(c, 1, 0);
}

void blmpop_command(struct client *c)
{
    mpop_generic(c, 2, 1);
}

/* --------------------------------------------------- cross-type access --- */

/* ------------------------------------------------------------- DEBUG --- */

void debug_quicklist_packed_threshold(struct client *c)
{
    char buf[64];
    int ok = 0;
    long long sz = -1;
    if (c->argvlen[2] < sizeof(buf)) {
        memcpy(buf, c->argv[2], c->argvlen[2]);
        buf[c->argvlen[2]] = 0;
        sz = config_mem_parse(buf, &ok);
    }
    if (!ok || sz < 0 || !ql_set_packed_threshold((unsigned long long)sz)) {
        reply_error(&c->out, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(&c->out);
}
