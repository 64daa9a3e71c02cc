/* t_stream.c - the stream commands: XADD ... XINFO and consumer groups.
 *
 * The value (a struct stream with its consumer groups, PELs and counters)
 * is types/stream.h's; this file parses arguments, calls it, replies,
 * propagates and sends keyspace events.
 *
 * Blocking: XREAD/XREADGROUP with BLOCK park the client through
 * cmd/blocking.c with its argv rewritten ('$' and '+' resolved to IDs at
 * block time, COUNT 1000 when none was given, as Redis caps a blocked
 * read); XADD (and XGROUP DESTROY, key deletion in db.c) signal the key and
 * the writer's thread re-executes the waiter's command.
 *
 * Handlers run with their keys' slot locks held by the dispatcher. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "blocking.h"
#include "../db/object.h"
#include "../types/stream.h"
#include "commands.h"
#include "multi.h"
#include "notify.h"
#include "../persist/prop.h"

#define ERR_INVALID_ID "ERR Invalid stream ID specified as stream command argument"
#define XREAD_BLOCKED_DEFAULT_COUNT 1000
#define STREAM_MAX_ELE_BYTES (1ull << 30)

/* ------------------------------------------------------------ helpers --- */
/* now - then in ms without signed overflow (UB): delivery and seen times
 * come from RESTORE payloads and XCLAIM IDLE, so they can be anything.  The
 * difference wraps in two's complement, which is what Redis's plain
 * subtraction yields on its platforms, so the replies (an idle time of 0, an
 * entry not idle enough) stay the same as Redis's for such values. */
static long long ms_since(long long now, long long then)
{
    unsigned long long d = (unsigned long long)now - (unsigned long long)then;
    return d > (unsigned long long)LLONG_MAX ? -(long long)(~d) - 1 : (long long)d;
}

/* A script's client (no connection) rather than MULTI or a serve. */
static int from_script(const struct client *c)
{
    return (c->flags & CF_DENY_BLOCKING) && c->fd < 0 && !blocking_in_reexec();
}

static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    char buf[32];
    char *end;
    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, s, len);
    buf[len] = 0;
    const char *p = buf;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        p++;
    if (*p == '-')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end)
        return 0;
    *out = v;
    return 1;
}

/* Redis's ID grammar: "-" (0-0) and "+" (max) unless strict, "<ms>" (seq =
 * missing_seq), "<ms>-<seq>", and with seq_given != NULL "<ms>-*" (sets
 * *seq_given to 0).  Returns 0, or -1 after replying the error (when
 * reply). */
static int parse_id_str(struct client *c, const char *s, size_t len, struct stream_id *id, uint64_t missing_seq,
                        int strict, int *seq_given, int reply)
{
    if (len > 127)
        goto invalid;
    if (seq_given)
        *seq_given = 1;
    if (len == 1 && (s[0] == '-' || s[0] == '+')) {
        if (strict)
            goto invalid;
        id->ms = id->seq = s[0] == '-' ? 0 : UINT64_MAX;
        return 0;
    }
    const char *dash = memchr(s, '-', len);
    uint64_t ms, seq;
    if (!parse_u64(s, dash ? (size_t)(dash - s) : len, &ms))
        goto invalid;
    if (dash) {
        size_t sl = len - (size_t)(dash - s) - 1;
        if (seq_given && sl == 1 && dash[1] == '*') {
            seq = 0;
            *seq_given = 0;
        } else if (!parse_u64(dash + 1, sl, &seq)) {
            goto invalid;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
invalid:
    if (reply)
        reply_error(&c->out, ERR_INVALID_ID);
    return -1;
}

static int parse_id(struct client *c, int i, struct stream_id *id, uint64_t missing_seq, int strict, int *seq_given)
{
    return parse_id_str(c, c->argv[i], c->argvlen[i], id, missing_seq, strict, seq_given, 1);
}

/* A range bound: "(" prefix = exclusive (then strict). */
static int parse_interval_id(struct client *c, int i, struct stream_id *id, int *exclude, uint64_t missing_seq)
{
    const char *p = c->argv[i];
    size_t len = c->argvlen[i];
    *exclude = len > 1 && p[0] == '(';
    if (*exclude)
        return parse_id_str(c, p + 1, len - 1, id, missing_seq, 1, NULL, 1);
    return parse_id_str(c, p, len, id, missing_seq, 0, NULL, 1);
}

static void reply_sid(struct reply *r, const struct stream_id *id)
{
    char buf[48];
    int n = sid_format(buf, id);
    reply_bulk(r, buf, (size_t)n);
}

static void reply_entry(struct reply *r, const struct stream_entry *e)
{
    struct stream_entry cur = *e;
    reply_array(r, 2);
    reply_sid(r, &e->id);
    reply_array(r, (long long)e->nfields * 2);
    for (uint64_t i = 0; i < e->nfields; i++) {
        const char *f, *v;
        size_t fl, vl;
        stream_entry_field(&cur, &f, &fl, &v, &vl);
        reply_bulk(r, f, fl);
        reply_bulk(r, v, vl);
    }
}

static struct entry *slookup(struct client *c, int i, int flags, int *bad)
{
    struct entry *e = db_get(c->db, kslot(c, i), c->argv[i], c->argvlen[i], flags);
    *bad = 0;
    if (e && e->type != OBJ_STREAM) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *bad = 1;
        return NULL;
    }
    return e;
}

static inline struct stream *sptr(struct entry *e)
{
    return entry_ptr(e);
}

static void notify_stream(struct client *c, int i, const char *event)
{
    notify_keyspace_event(NOTIFY_STREAM, event, c->argv[i], c->argvlen[i], c->db);
}

static void modified(struct client *c, int i)
{
    signal_modified_key(c, c->db, kslot(c, i), c->argv[i], c->argvlen[i]);
}

static void reply_nogroup_key(struct client *c, int key, int group, const char *suffix)
{
    reply_errorf(&c->out, "NOGROUP No such key '%.*s' or consumer group '%.*s'%s", (int)c->argvlen[key], c->argv[key],
                 (int)c->argvlen[group], c->argv[group], suffix);
}

static void reply_syntax_sub(struct client *c)
{
    char up[32];
    size_t n = 0;
    for (; n < c->argvlen[0] && n < sizeof(up) - 1; n++) {
        char ch = c->argv[0][n];
        up[n] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
    }
    up[n] = 0;
    int sl = c->argc > 1 ? (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]) : 0;
    reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.", sl,
                 c->argc > 1 ? c->argv[1] : "", up);
}

static void reply_help_lines(struct client *c, const char *const *lines, size_t n)
{
    reply_array(&c->out, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_status(&c->out, lines[i]);
}

static void reply_lag(struct client *c, const struct stream *s, const struct cgroup *g)
{
    long long lag;
    if (cg_lag(s, g, &lag))
        reply_int(&c->out, lag);
    else
        reply_null(&c->out);
}

/* ------------------------------------------------------ propagation --- */
/* What the group commands feed to the AOF (persist/prop.h), as Redis 7:
 * a delivery or a claim is fed as an idempotent XCLAIM that sets the NACK
 * exactly (owner, delivery time, count), a group whose last ID moved as
 * XGROUP SETID with ENTRIESREAD, a consumer created on the way as XGROUP
 * CREATECONSUMER, a NACK dropped because its entry is gone as XACK. */
static void prop_sid(const struct stream_id *id)
{
    char b[48];
    prop_op_arg(b, (size_t)sid_format(b, id));
}

/* XCLAIM <key> <group> <consumer> 0 <id> TIME <ms> RETRYCOUNT <n> FORCE
 * JUSTID LASTID <group last id> */
static void prop_xclaim(struct client *c, int ki, const struct cgroup *g, const struct nack *nk)
{
    prop_op_begin(c->db);
    prop_op_str("XCLAIM");
    prop_op_arg(c->argv[ki], c->argvlen[ki]);
    prop_op_arg(g->name, g->nlen);
    prop_op_arg(nk->consumer->name, nk->consumer->nlen);
    prop_op_str("0");
    prop_sid(&nk->id);
    prop_op_str("TIME");
    prop_op_ll(nk->delivery_time);
    prop_op_str("RETRYCOUNT");
    prop_op_ll((long long)nk->delivery_count);
    prop_op_str("FORCE");
    prop_op_str("JUSTID");
    prop_op_str("LASTID");
    prop_sid(&g->last_id);
    prop_op_end();
}

/* XGROUP SETID <key> <group> <last id> ENTRIESREAD <n> */
static void prop_group_setid(struct client *c, int ki, const struct cgroup *g)
{
    prop_op_begin(c->db);
    prop_op_str("XGROUP");
    prop_op_str("SETID");
    prop_op_arg(c->argv[ki], c->argvlen[ki]);
    prop_op_arg(g->name, g->nlen);
    prop_sid(&g->last_id);
    prop_op_str("ENTRIESREAD");
    prop_op_ll(g->entries_read);
    prop_op_end();
}

/* XGROUP CREATE/SETID: a change; '$' is fed as the ID it meant. */
static void prop_xgroup_id(struct client *c, const struct stream_id *id)
{
    prop_dirty_add(1);
    if (!(c->argvlen[4] == 1 && c->argv[4][0] == '$'))
        return; /* fed as it is */
    prop_prevent();
    prop_op_begin(c->db);
    for (int i = 0; i < c->argc; i++) {
        if (i == 4)
            prop_sid(id);
        else
            prop_op_arg(c->argv[i], c->argvlen[i]);
    }
    prop_op_end();
}

/* XACK <key> <group> <id> */
static void prop_xack(struct client *c, int ki, const struct cgroup *g, const struct stream_id *id)
{
    prop_op_begin(c->db);
    prop_op_str("XACK");
    prop_op_arg(c->argv[ki], c->argvlen[ki]);
    prop_op_arg(g->name, g->nlen);
    prop_sid(id);
    prop_op_end();
}

/* A consumer of group g for a command (created, with its keyspace event,
 * when missing); its seen time is refreshed. */
static struct consumer *consumer_get(struct client *c, struct cgroup *g, const char *name, size_t nlen, int key)
{
    long long now = db_now_ms();
    struct consumer *cn = consumer_find(g, name, nlen, NULL);
    if (cn) {
        cn->seen_time = now;
        return cn;
    }
    cn = consumer_create(g, name, nlen, now);
    notify_stream(c, key, "xgroup-createconsumer");
    prop_dirty_add(1);
    prop_op_begin(c->db);
    prop_op_str("XGROUP");
    prop_op_str("CREATECONSUMER");
    prop_op_arg(c->argv[key], c->argvlen[key]);
    prop_op_arg(g->name, g->nlen);
    prop_op_arg(name, nlen);
    prop_op_end();
    return cn;
}

/* ------------------------------------------------------ range replies --- */
#define RWR_NOACK 1
#define RWR_HISTORY 2
/* Group reads: flags >> RWR_KEY_SHIFT is the key's argv index (propagation). */
#define RWR_KEY_SHIFT 8

/* Entries of s from start to end (inclusive; end NULL: to the last), at
 * most count (0 = all), in a nested array; with a group, deliveries update
 * the group (last ID, entries_read) and the PELs (streamReplyWithRange). */
static size_t reply_range(struct client *c, struct stream *s, const struct stream_id *start,
                          const struct stream_id *end, size_t count, int rev, struct cgroup *g, struct consumer *cn,
                          int flags)
{
    struct stream_id max = {UINT64_MAX, UINT64_MAX};
    size_t n = 0;
    if (!end)
        end = &max;
    int ki = flags >> RWR_KEY_SHIFT;
    if (g && (flags & RWR_HISTORY)) {
        /* The consumer's own PEL from start on. */
        size_t mark = reply_defer(&c->out);
        int found;
        size_t i = pel_search(&cn->pel, start, &found);
        long long now = db_now_ms();
        for (; i < cn->pel.n && (!count || n < count); i++) {
            struct nack *nk = cn->pel.v[i];
            struct stream_entry e;
            if (sid_cmp(&nk->id, end) > 0)
                break;
            if (stream_get(s, &nk->id, &e)) {
                reply_entry(&c->out, &e);
                nk->delivery_time = now;
                nk->delivery_count++;
                prop_xclaim(c, ki, g, nk);
            } else {
                reply_array(&c->out, 2);
                reply_sid(&c->out, &nk->id);
                reply_null_array(&c->out);
            }
            n++;
        }
        reply_defer_array(&c->out, mark, (long long)n);
        return n;
    }
    size_t mark = reply_defer(&c->out);
    struct stream_iter it;
    struct stream_entry e;
    long long now = g ? db_now_ms() : 0;
    struct stream_id last_before = g ? g->last_id : max;
    stream_iter_start(&it, s, start, end, rev);
    while (stream_iter_next(&it, &e)) {
        if (g)
            cg_advance(s, g, &e.id);
        reply_entry(&c->out, &e);
        if (g && !(flags & RWR_NOACK)) {
            prop_xclaim(c, ki, g, cg_deliver(g, cn, &e.id, now));
            cn->active_time = now;
        }
        n++;
        if (count && n == count)
            break;
    }
    stream_iter_stop(&it);
    if (g && sid_cmp(&g->last_id, &last_before) != 0) {
        /* The group moved on: its last ID and entries_read, exactly. */
        prop_group_setid(c, ki, g);
        prop_dirty_add(1);
    }
    reply_defer_array(&c->out, mark, (long long)n);
    return n;
}

/* One entry by ID as a two-element array; 0 when it is not there. */
static int reply_one(struct client *c, const struct stream *s, const struct stream_id *id)
{
    struct stream_entry e;
    if (!stream_get(s, id, &e))
        return 0;
    reply_entry(&c->out, &e);
    return 1;
}

/* ----------------------------------------------------------- XADD/XTRIM --- */
struct trim_args {
    struct stream_id id;    /* XADD: the ID given */
    int id_given, seq_given, no_mkstream;
    int strategy;           /* 0 none, 1 MAXLEN, 2 MINID */
    int approx;
    long long limit, maxlen;
    struct stream_id minid;
};

/* Options of XADD (xadd) / XTRIM from argv[2] on; returns the index of
 * XADD's ID argument (or past the options), -1 after replying an error. */
static int parse_add_trim(struct client *c, struct trim_args *a, int xadd)
{
    int i = 2, limit_given = 0;
    memset(a, 0, sizeof(*a));
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        if (xadd && c->argvlen[i] == 1 && c->argv[i][0] == '*')
            break;
        if (arg_is(c, i, "maxlen") && more) {
            if (a->strategy) {
                reply_error(&c->out, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->approx = 0;
            if (more >= 2 && c->argvlen[i + 1] == 1 && c->argv[i + 1][0] == '~') {
                a->approx = 1;
                i++;
            } else if (more >= 2 && c->argvlen[i + 1] == 1 && c->argv[i + 1][0] == '=') {
                i++;
            }
            if (arg_ll(c, i + 1, &a->maxlen) < 0)
                return -1;
            if (a->maxlen < 0) {
                reply_error(&c->out, "ERR The MAXLEN argument must be >= 0.");
                return -1;
            }
            i++;
            a->strategy = 1;
        } else if (arg_is(c, i, "minid") && more) {
            if (a->strategy) {
                reply_error(&c->out, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->approx = 0;
            if (more >= 2 && c->argvlen[i + 1] == 1 && c->argv[i + 1][0] == '~') {
                a->approx = 1;
                i++;
            } else if (more >= 2 && c->argvlen[i + 1] == 1 && c->argv[i + 1][0] == '=') {
                i++;
            }
            if (parse_id(c, i + 1, &a->minid, 0, 1, NULL) < 0)
                return -1;
            i++;
            a->strategy = 2;
        } else if (arg_is(c, i, "limit") && more) {
            if (arg_ll(c, i + 1, &a->limit) < 0)
                return -1;
            if (a->limit < 0) {
                reply_error(&c->out, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(c, i, "nomkstream")) {
            a->no_mkstream = 1;
        } else if (xadd) {
            if (parse_id(c, i, &a->id, 0, 1, &a->seq_given) < 0)
                return -1;
            a->id_given = 1;
            break;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return -1;
        }
    }
    if (a->limit && !a->strategy) {
        reply_error(&c->out, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && !a->strategy) {
        reply_error(&c->out, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (db_loading || db_master_apply) {
        /* A master's stream or an AOF: the trim was rewritten to its exact
         * form ("=" and the length reached), LIMIT possibly left in place
         * (Redis does): obeyed without a node limit, as Redis does. */
        a->limit = 0;
    } else if (limit_given) {
        if (!a->approx) {
            reply_error(&c->out, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->approx) {
        a->limit = 100 * stream_node_max_entries;
        if (a->limit <= 0)
            a->limit = 10000;
        if (a->limit > 1000000)
            a->limit = 1000000;
    } else {
        a->limit = 0;
    }
    return i;
}

/* XADD with '*' or a partial ID, XADD/XTRIM trimming with '~': fed with
 * the ID generated and an exact trim to what the approximate one left
 * (MAXLEN = <length after>, MINID = <first ID after>; LIMIT dropped), so a
 * replay does exactly what was done (Redis 7).  idpos: XADD's ID argument
 * (0 for XTRIM).  Otherwise the command is fed as it is. */
static void prop_xadd_xtrim(struct client *c, const struct trim_args *a, const struct stream *s, int idpos,
                            const struct stream_id *id)
{
    int rw_id = idpos > 0 && !(a->id_given && a->seq_given);
    int rw_trim = a->strategy && a->approx;
    if (!rw_id && !rw_trim)
        return;
    char thr[48];
    size_t thrlen = 0;
    if (rw_trim) {
        if (a->strategy == 1) {
            thrlen = (size_t)ll_to_str(thr, (long long)s->length);
        } else {
            struct stream_id first;
            stream_first_entry(s, &first);
            thrlen = (size_t)sid_format(thr, &first);
        }
    }
    int opt_end = idpos > 0 ? idpos : c->argc;
    prop_prevent();
    prop_op_begin(c->db);
    for (int i = 0; i < c->argc; i++) {
        if (rw_trim && i >= 2 && i < opt_end) {
            if (arg_is(c, i, "maxlen") || arg_is(c, i, "minid")) {
                prop_op_arg(c->argv[i], c->argvlen[i]);
                if (i + 1 < opt_end && c->argvlen[i + 1] == 1 && (c->argv[i + 1][0] == '~' || c->argv[i + 1][0] == '='))
                    i++;
                prop_op_str("=");
                prop_op_arg(thr, thrlen);
                i++; /* the threshold given */
                continue;
            }
            if (arg_is(c, i, "limit")) {
                i++;
                continue;
            }
        }
        if (i == idpos && rw_id) {
            prop_sid(id);
            continue;
        }
        prop_op_arg(c->argv[i], c->argvlen[i]);
    }
    prop_op_end();
}

static long long do_trim(struct stream *s, const struct trim_args *a)
{
    if (a->strategy == 1)
        return stream_trim(s, a->maxlen, NULL, a->approx, a->limit);
    if (a->strategy == 2)
        return stream_trim(s, -1, &a->minid, a->approx, a->limit);
    return 0;
}

void xadd_command(struct client *c)
{
    struct trim_args a;
    int idpos = parse_add_trim(c, &a, 1);
    if (idpos < 0)
        return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2 == 1) {
        reply_arity_error(c);
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(&c->out, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    int bad;
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    struct stream *s;
    if (!e) {
        if (a.no_mkstream) {
            reply_null(&c->out);
            return;
        }
        s = stream_new();
        e = entry_new_obj(OBJ_STREAM, ENC_STREAM, c->argv[1], c->argvlen[1], s, -1);
        db_add(c->db, kslot(c, 1), e);
    } else {
        s = sptr(e);
    }
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(&c->out, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    struct stream_id id;
    if (stream_next_id(s, &a.id, a.id_given, a.seq_given, &id) < 0) {
        reply_error(&c->out, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return;
    }
    unsigned long long tot = 0;
    for (int i = fpos; i < c->argc; i++)
        tot += c->argvlen[i];
    if (tot > STREAM_MAX_ELE_BYTES) {
        reply_error(&c->out, "ERR Elements are too large to be stored");
        return;
    }
    stream_append(s, &id, c->argv + fpos, c->argvlen + fpos, (size_t)(c->argc - fpos) / 2);
    reply_sid(&c->out, &id);
    modified(c, 1);
    notify_stream(c, 1, "xadd");
    if (a.strategy && do_trim(s, &a))
        notify_stream(c, 1, "xtrim");
    prop_xadd_xtrim(c, &a, s, idpos, &id);
    signal_key_ready(c->db, kslot(c, 1), c->argv[1], c->argvlen[1]);
}

void xtrim_command(struct client *c)
{
    struct trim_args a;
    int bad;
    if (parse_add_trim(c, &a, 0) < 0)
        return;
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    long long deleted = do_trim(sptr(e), &a);
    if (deleted) {
        notify_stream(c, 1, "xtrim");
        modified(c, 1);
        prop_dirty_add((unsigned long long)deleted - 1); /* one change per entry, as Redis */
        prop_xadd_xtrim(c, &a, sptr(e), 0, NULL);
    }
    reply_int(&c->out, deleted);
}

/* ------------------------------------------------- XDEL XLEN XRANGE ... --- */
void xdel_command(struct client *c)
{
    int bad;
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    struct stream *s = sptr(e);
    int nids = c->argc - 2;
    struct stream_id stack[16], *ids = nids <= 16 ? stack : hk_malloc(sizeof(*ids) * (size_t)nids);
    for (int j = 0; j < nids; j++) {
        if (parse_id(c, 2 + j, &ids[j], 0, 1, NULL) < 0)
            goto out;
    }
    long long deleted = 0;
    for (int j = 0; j < nids; j++) {
        if (stream_del_entry(s, &ids[j]))
            deleted++;
    }
    if (deleted) {
        modified(c, 1);
        prop_dirty_add((unsigned long long)deleted - 1); /* one change per entry, as Redis */
        notify_stream(c, 1, "xdel");
    }
    reply_int(&c->out, deleted);
out:
    if (ids != stack)
        hk_free(ids);
}

void xlen_command(struct client *c)
{
    int bad;
    struct entry *e = slookup(c, 1, 0, &bad);
    if (bad)
        return;
    reply_int(&c->out, e ? (long long)sptr(e)->length : 0);
}

static void xrange_generic(struct client *c, int rev)
{
    struct stream_id start, end;
    int startex, endex, bad;
    long long count = -1;
    int si = rev ? 3 : 2, ei = rev ? 2 : 3;
    if (parse_interval_id(c, si, &start, &startex, 0) < 0)
        return;
    if (startex && sid_incr(&start) < 0) {
        reply_error(&c->out, "ERR invalid start ID for the interval");
        return;
    }
    if (parse_interval_id(c, ei, &end, &endex, UINT64_MAX) < 0)
        return;
    if (endex && sid_decr(&end) < 0) {
        reply_error(&c->out, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(c, j, "count") && c->argc - j - 1 >= 1) {
            if (arg_ll(c, j + 1, &count) < 0)
                return;
            if (count < 0)
                count = 0;
            j++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    struct entry *e = slookup(c, 1, 0, &bad);
    if (bad)
        return;
    if (!e) {
        reply_array(&c->out, 0);
        return;
    }
    if (count == 0) {
        reply_null_array(&c->out);
        return;
    }
    reply_range(c, sptr(e), &start, &end, count < 0 ? 0 : (size_t)count, rev, NULL, NULL, 0);
}

void xrange_command(struct client *c)
{
    xrange_generic(c, 0);
}

void xrevrange_command(struct client *c)
{
    xrange_generic(c, 1);
}

/* -------------------------------------------------------- XREAD(GROUP) --- */
/* Key positions of XREAD / XREADGROUP: the first half of the arguments
 * after STREAMS (none when the command is malformed: the handler replies). */
int xread_getkeys(struct client *c, int *idx, int max)
{
    int i, spos = -1, n = 0;
    for (i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "block") || arg_is(c, i, "count"))
            i++;
        else if (arg_is(c, i, "group"))
            i += 2;
        else if (arg_is(c, i, "noack"))
            continue;
        else if (arg_is(c, i, "streams")) {
            spos = i;
            break;
        } else
            break;
    }
    if (spos < 0)
        return 0;
    int num = c->argc - spos - 1;
    if (num == 0 || num % 2)
        return 0;
    num /= 2;
    for (i = spos + 1; i <= spos + num && n < max; i++)
        idx[n++] = i;
    return n;
}

/* Park an XREAD/XREADGROUP: argv with each ID replaced by ids[] (so '$'
 * keeps meaning "newer than at block time") and COUNT forced when absent. */
static void xread_block(struct client *c, int streams_arg, int nstreams, const struct stream_id *ids, int group,
                        long long count, long long deadline)
{
    int extra = count ? 0 : 2;
    int argc = c->argc + extra;
    const char **argv = hk_malloc(sizeof(*argv) * (size_t)argc);
    size_t *argvlen = hk_malloc(sizeof(*argvlen) * (size_t)argc);
    unsigned *kslots = hk_calloc(sizeof(*kslots) * (size_t)argc);
    char *idbuf = hk_malloc((size_t)nstreams * 48);
    int *kidx = hk_malloc(sizeof(int) * (size_t)nstreams);
    argv[0] = c->argv[0];
    argvlen[0] = c->argvlen[0];
    if (extra) {
        argv[1] = "COUNT";
        argvlen[1] = 5;
        argv[2] = "1000";
        argvlen[2] = 4;
    }
    for (int i = 1; i < c->argc; i++) {
        argv[i + extra] = c->argv[i];
        argvlen[i + extra] = c->argvlen[i];
        kslots[i + extra] = c->kslot[i];
    }
    for (int k = 0; k < nstreams; k++) {
        int ai = streams_arg + nstreams + k + extra;
        kidx[k] = streams_arg + k + extra;
        if (group && ids[k].ms == UINT64_MAX && ids[k].seq == UINT64_MAX)
            continue; /* ">" stays ">" */
        char *b = idbuf + (size_t)k * 48;
        argv[ai] = b;
        argvlen[ai] = (size_t)sid_format(b, &ids[k]);
    }
    const char **oargv = c->argv;
    size_t *oargvlen = c->argvlen;
    unsigned *okslot = c->kslot;
    int oargc = c->argc;
    c->argv = argv;
    c->argvlen = argvlen;
    c->kslot = kslots;
    c->argc = argc;
    block_on_keys(c, kidx, nstreams, group ? BLOCK_STREAM_GROUP : OBJ_STREAM, deadline, BLOCK_NULL_ARRAY);
    c->argv = oargv;
    c->argvlen = oargvlen;
    c->kslot = okslot;
    c->argc = oargc;
    hk_free(argv);
    hk_free(argvlen);
    hk_free(kslots);
    hk_free(idbuf);
    hk_free(kidx);
}

static void xread_generic(struct client *c, int xreadgroup)
{
    long long timeout = -1, count = 0;
    int streams_arg = 0, nstreams = 0, noack = 0;
    int group_i = 0, consumer_i = 0; /* argv indexes of the GROUP names */
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(c, i, "block") && more) {
            if (from_script(c)) {
                reply_errorf(&c->out, "ERR %.*s command is not allowed with BLOCK option from scripts",
                             (int)c->argvlen[0], c->argv[0]);
                return;
            }
            i++;
            long long t;
            if (!str_to_ll(c->argv[i], c->argvlen[i], &t)) {
                reply_error(&c->out, "ERR timeout is not an integer or out of range");
                return;
            }
            if (t < 0) {
                reply_error(&c->out, "ERR timeout is negative");
                return;
            }
            if (t > 0) {
                long long now = db_now_ms();
                if (t > LLONG_MAX - now) {
                    reply_error(&c->out, "ERR timeout is out of range");
                    return;
                }
                t += now;
            }
            timeout = t;
        } else if (arg_is(c, i, "count") && more) {
            i++;
            if (arg_ll(c, i, &count) < 0)
                return;
            if (count < 0)
                count = 0;
        } else if (arg_is(c, i, "streams") && more) {
            streams_arg = i + 1;
            nstreams = c->argc - streams_arg;
            if (nstreams % 2) {
                reply_errorf(&c->out, "ERR Unbalanced '%s' list of streams: for each stream key an ID or '%c' must be "
                                      "specified.", xreadgroup ? "xreadgroup" : "xread", xreadgroup ? '>' : '$');
                return;
            }
            nstreams /= 2;
            break;
        } else if (arg_is(c, i, "group") && more >= 2) {
            if (!xreadgroup) {
                reply_error(&c->out, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            group_i = i + 1;
            consumer_i = i + 2;
            i += 2;
        } else if (arg_is(c, i, "noack")) {
            if (!xreadgroup) {
                reply_error(&c->out, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            noack = 1;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if (!streams_arg) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (xreadgroup && !group_i) {
        reply_error(&c->out, "ERR Missing GROUP option for XREADGROUP");
        return;
    }

    if (xreadgroup) {
        /* Fed as XCLAIM / XGROUP SETID / CREATECONSUMER, one unit. */
        prop_prevent();
        prop_unit_begin();
    }
    struct stream_id stack_ids[8], *ids = nstreams <= 8 ? stack_ids : hk_malloc(sizeof(*ids) * (size_t)nstreams);
    struct cgroup *stack_g[8], **groups = NULL;
    if (group_i)
        groups = nstreams <= 8 ? stack_g : hk_malloc(sizeof(*groups) * (size_t)nstreams);

    for (int k = 0; k < nstreams; k++) {
        int ki = streams_arg + k, ii = streams_arg + nstreams + k, bad;
        struct entry *e = db_get(c->db, kslot(c, ki), c->argv[ki], c->argvlen[ki], 0);
        bad = e && e->type != OBJ_STREAM;
        /* A blocked XREADGROUP whose key was deleted, overwritten or lost
         * its group runs again like a new call and fails as one would
         * (NOGROUP, WRONGTYPE), as in Redis 7.2. */
        if (bad) {
            reply_error(&c->out, ERR_WRONGTYPE);
            goto out;
        }
        if (group_i) {
            struct cgroup *g = NULL;
            if (!e || !(g = cg_find(sptr(e), c->argv[group_i], c->argvlen[group_i], NULL))) {
                reply_errorf(&c->out,
                             "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                             (int)c->argvlen[ki], c->argv[ki], (int)c->argvlen[group_i], c->argv[group_i]);
                goto out;
            }
            groups[k] = g;
        }
        const char *a = c->argv[ii];
        size_t al = c->argvlen[ii];
        if (al == 1 && a[0] == '$') {
            if (xreadgroup) {
                reply_error(&c->out, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                                     "history of this consumer by specifying a proper ID, or use the > ID to get new "
                                     "messages. The $ ID would just return an empty result set.");
                goto out;
            }
            if (e)
                ids[k] = sptr(e)->last_id;
            else
                ids[k].ms = ids[k].seq = 0;
            continue;
        }
        if (al == 1 && a[0] == '+') {
            if (xreadgroup) {
                reply_error(&c->out, "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the "
                                     "history of this consumer by specifying a proper ID, or use the > ID to get new "
                                     "messages. The + ID would just return an empty result set.");
                goto out;
            }
            if (e) {
                ids[k] = sptr(e)->last_id;
                if (sid_decr(&ids[k]) < 0) {
                    reply_error(&c->out, "ERR the stream last element ID is 0-0");
                    goto out;
                }
            } else {
                ids[k].ms = ids[k].seq = 0;
            }
            continue;
        }
        if (al == 1 && a[0] == '>') {
            if (!xreadgroup) {
                reply_error(&c->out, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                     "<group> <consumer> option.");
                goto out;
            }
            ids[k].ms = ids[k].seq = UINT64_MAX;
            continue;
        }
        if (parse_id(c, ii, &ids[k], 0, 1, NULL) < 0)
            goto out;
    }

    /* Serve now what can be served. */
    size_t mark = 0, nserved = 0;
    for (int k = 0; k < nstreams; k++) {
        int ki = streams_arg + k;
        struct entry *e = db_get(c->db, kslot(c, ki), c->argv[ki], c->argvlen[ki], LK_NOSTATS | LK_NOTOUCH);
        if (!e)
            continue;
        struct stream *s = sptr(e);
        struct stream_id gt = ids[k];
        int serve = 0, history = 0;
        struct consumer *cn = NULL;
        if (groups) {
            /* The consumer exists (and was seen) whether or not there is
             * anything to read, as in Redis 7.2. */
            cn = consumer_get(c, groups[k], c->argv[consumer_i], c->argvlen[consumer_i], ki);
            if (gt.ms != UINT64_MAX || gt.seq != UINT64_MAX) {
                serve = history = 1;
            } else if (s->length) {
                struct stream_id maxid;
                stream_last_entry(s, &maxid);
                if (sid_cmp(&maxid, &groups[k]->last_id) > 0) {
                    serve = 1;
                    gt = groups[k]->last_id;
                }
            }
        } else if (s->length) {
            struct stream_id maxid;
            stream_last_entry(s, &maxid);
            if (sid_cmp(&maxid, &gt) > 0)
                serve = 1;
        }
        if (!serve)
            continue;
        if (nserved++ == 0)
            mark = reply_defer(&c->out);
        struct stream_id start = gt;
        sid_incr(&start);
        if (c->out.resp == 2)
            reply_array(&c->out, 2);
        reply_bulk(&c->out, c->argv[ki], c->argvlen[ki]);
        reply_range(c, s, &start, NULL, (size_t)count, 0, groups ? groups[k] : NULL, cn,
                    (noack ? RWR_NOACK : 0) | (history ? RWR_HISTORY : 0) | (ki << RWR_KEY_SHIFT));
    }
    if (nserved) {
        if (c->out.resp == 2)
            reply_defer_array(&c->out, mark, (long long)nserved);
        else
            reply_defer_map(&c->out, mark, (long long)nserved);
        goto out;
    }
    if (timeout != -1) {
        xread_block(c, streams_arg, nstreams, ids, group_i != 0, count, timeout);
        goto out;
    }
    reply_null_array(&c->out);
out:
    if (xreadgroup)
        prop_unit_end();
    if (ids != stack_ids)
        hk_free(ids);
    if (groups && groups != stack_g)
        hk_free(groups);
}

void xread_command(struct client *c)
{
    xread_generic(c, 0);
}

void xreadgroup_command(struct client *c)
{
    xread_generic(c, 1);
}

/* --------------------------------------------------------------- XSETID --- */
void xsetid_command(struct client *c)
{
    struct stream_id id, maxdel = {0, 0};
    long long added = -1;
    int bad;
    if (parse_id(c, 2, &id, 0, 1, NULL) < 0)
        return;
    for (int i = 3; i < c->argc;) {
        int more = c->argc - 1 - i;
        if (arg_is(c, i, "entriesadded") && more) {
            if (arg_ll(c, i + 1, &added) < 0)
                return;
            if (added < 0) {
                reply_error(&c->out, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (arg_is(c, i, "maxdeletedid") && more) {
            if (parse_id(c, i + 1, &maxdel, 0, 1, NULL) < 0)
                return;
            if (sid_cmp(&id, &maxdel) < 0) {
                reply_error(&c->out, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    if (!e) {
        reply_error(&c->out, ERR_NO_KEY);
        return;
    }
    struct stream *s = sptr(e);
    if (sid_cmp(&id, &s->max_deleted) < 0) { /* 7.2 */
        reply_error(&c->out, "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
        return;
    }
    if (s->length > 0) {
        struct stream_id maxid;
        stream_last_entry(s, &maxid);
        if (sid_cmp(&id, &maxid) < 0) {
            reply_error(&c->out, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            reply_error(&c->out, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->last_id = id;
    if (added != -1)
        s->entries_added = (uint64_t)added;
    if (maxdel.ms || maxdel.seq)
        s->max_deleted = maxdel;
    prop_dirty_add(1); /* a change (fed as it is), though WATCH is not touched */
    reply_ok(&c->out);
    notify_stream(c, 1, "xsetid"); /* Redis signals no modification here (WATCH stays clean) */
}

/* ---------------------------------------------------------------- XINFO --- */
static void xinfo_stream(struct client *c, struct stream *s)
{
    int full = 0;
    long long count = 10;
    int optc = c->argc - 3;
    if (optc) {
        if ((optc != 1 && optc != 3) || !arg_is(c, 3, "full")) {
            reply_syntax_sub(c);
            return;
        }
        full = 1;
        if (optc == 3) {
            if (!arg_is(c, 4, "count")) {
                reply_syntax_sub(c);
                return;
            }
            if (arg_ll(c, 5, &count) < 0)
                return;
            if (count < 0)
                count = 10;
        }
    }
    reply_map(&c->out, full ? 9 : 10);
    reply_bulk_cstr(&c->out, "length");
    reply_int(&c->out, (long long)s->length);
    reply_bulk_cstr(&c->out, "radix-tree-keys");
    reply_int(&c->out, (long long)stream_blocks(s));
    reply_bulk_cstr(&c->out, "radix-tree-nodes");
    reply_int(&c->out, (long long)stream_blocks(s) + 1);
    reply_bulk_cstr(&c->out, "last-generated-id");
    reply_sid(&c->out, &s->last_id);
    reply_bulk_cstr(&c->out, "max-deleted-entry-id");
    reply_sid(&c->out, &s->max_deleted);
    reply_bulk_cstr(&c->out, "entries-added");
    reply_int(&c->out, (long long)s->entries_added);
    reply_bulk_cstr(&c->out, "recorded-first-entry-id");
    reply_sid(&c->out, &s->first_id);
    struct cgroups *gs = s->cgroups;
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX}, id;
    if (!full) {
        reply_bulk_cstr(&c->out, "groups");
        reply_int(&c->out, gs ? (long long)gs->n : 0);
        reply_bulk_cstr(&c->out, "first-entry");
        if (!s->length || !reply_one(c, s, &s->first_id))
            reply_null(&c->out);
        reply_bulk_cstr(&c->out, "last-entry");
        if (!stream_last_entry(s, &id) || !reply_one(c, s, &id))
            reply_null(&c->out);
        return;
    }
    reply_bulk_cstr(&c->out, "entries");
    reply_range(c, s, &lo, &hi, (size_t)count, 0, NULL, NULL, 0);
    reply_bulk_cstr(&c->out, "groups");
    reply_array(&c->out, gs ? (long long)gs->n : 0);
    for (size_t i = 0; gs && i < gs->n; i++) {
        struct cgroup *g = gs->v[i];
        reply_map(&c->out, 7);
        reply_bulk_cstr(&c->out, "name");
        reply_bulk(&c->out, g->name, g->nlen);
        reply_bulk_cstr(&c->out, "last-delivered-id");
        reply_sid(&c->out, &g->last_id);
        reply_bulk_cstr(&c->out, "entries-read");
        if (g->entries_read != ENTRIES_READ_INVALID)
            reply_int(&c->out, g->entries_read);
        else
            reply_null(&c->out);
        reply_bulk_cstr(&c->out, "lag");
        reply_lag(c, s, g);
        reply_bulk_cstr(&c->out, "pel-count");
        reply_int(&c->out, (long long)g->pel.n);
        reply_bulk_cstr(&c->out, "pending");
        size_t np = g->pel.n;
        if (count && (size_t)count < np)
            np = (size_t)count;
        reply_array(&c->out, (long long)np);
        for (size_t k = 0; k < np; k++) {
            struct nack *nk = g->pel.v[k];
            reply_array(&c->out, 4);
            reply_sid(&c->out, &nk->id);
            if (nk->consumer)
                reply_bulk(&c->out, nk->consumer->name, nk->consumer->nlen);
            else
                reply_null(&c->out);
            reply_int(&c->out, nk->delivery_time);
            reply_int(&c->out, (long long)nk->delivery_count);
        }
        reply_bulk_cstr(&c->out, "consumers");
        reply_array(&c->out, (long long)g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            struct consumer *cn = g->cons[k];
            reply_map(&c->out, 5);
            reply_bulk_cstr(&c->out, "name");
            reply_bulk(&c->out, cn->name, cn->nlen);
            reply_bulk_cstr(&c->out, "seen-time");
            reply_int(&c->out, cn->seen_time);
            reply_bulk_cstr(&c->out, "active-time");
            reply_int(&c->out, cn->active_time);
            reply_bulk_cstr(&c->out, "pel-count");
            reply_int(&c->out, (long long)cn->pel.n);
            reply_bulk_cstr(&c->out, "pending");
            size_t cp = cn->pel.n;
            if (count && (size_t)count < cp)
                cp = (size_t)count;
            reply_array(&c->out, (long long)cp);
            for (size_t q = 0; q < cp; q++) {
                struct nack *nk = cn->pel.v[q];
                reply_array(&c->out, 3);
                reply_sid(&c->out, &nk->id);
                reply_int(&c->out, nk->delivery_time);
                reply_int(&c->out, (long long)nk->delivery_count);
            }
        }
    }
}

void xinfo_command(struct client *c)
{
    int bad;
    if (arg_is(c, 1, "help")) {
        static const char *const lines[] = {
            "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CONSUMERS <key> <groupname>",
            "    List the consumers of consumer group <groupname> of stream <key>.",
            "GROUPS <key>",
            "    List the consumer groups of stream <key>.",
            "STREAM <key> [FULL [COUNT <count>]",
            "    Describe stream <key>; FULL adds its entries, groups and pending lists.",
            "HELP",
            "    Print this help.",
        };
        reply_help_lines(c, lines, sizeof(lines) / sizeof(lines[0]));
        return;
    }
    struct entry *e = slookup(c, 2, 0, &bad);
    if (bad)
        return;
    if (!e) {
        reply_error(&c->out, ERR_NO_KEY);
        return;
    }
    struct stream *s = sptr(e);
    if (arg_is(c, 1, "consumers")) {
        struct cgroup *g = cg_find(s, c->argv[3], c->argvlen[3], NULL);
        if (!g) {
            reply_errorf(&c->out, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)c->argvlen[3],
                         c->argv[3], (int)c->argvlen[2], c->argv[2]);
            return;
        }
        long long now = db_now_ms();
        reply_array(&c->out, (long long)g->ncons);
        for (size_t k = 0; k < g->ncons; k++) {
            struct consumer *cn = g->cons[k];
            long long idle = ms_since(now, cn->seen_time);
            reply_map(&c->out, 4);
            reply_bulk_cstr(&c->out, "name");
            reply_bulk(&c->out, cn->name, cn->nlen);
            reply_bulk_cstr(&c->out, "pending");
            reply_int(&c->out, (long long)cn->pel.n);
            reply_bulk_cstr(&c->out, "idle");
            reply_int(&c->out, idle < 0 ? 0 : idle);
            reply_bulk_cstr(&c->out, "inactive"); /* since its last read or claim that got entries */
            reply_int(&c->out, cn->active_time == -1 ? -1 : ms_since(now, cn->active_time));
        }
    } else if (arg_is(c, 1, "groups")) {
        struct cgroups *gs = s->cgroups;
        reply_array(&c->out, gs ? (long long)gs->n : 0);
        for (size_t i = 0; gs && i < gs->n; i++) {
            struct cgroup *g = gs->v[i];
            reply_map(&c->out, 6);
            reply_bulk_cstr(&c->out, "name");
            reply_bulk(&c->out, g->name, g->nlen);
            reply_bulk_cstr(&c->out, "consumers");
            reply_int(&c->out, (long long)g->ncons);
            reply_bulk_cstr(&c->out, "pending");
            reply_int(&c->out, (long long)g->pel.n);
            reply_bulk_cstr(&c->out, "last-delivered-id");
            reply_sid(&c->out, &g->last_id);
            reply_bulk_cstr(&c->out, "entries-read");
            if (g->entries_read != ENTRIES_READ_INVALID)
                reply_int(&c->out, g->entries_read);
            else
                reply_null(&c->out);
            reply_bulk_cstr(&c->out, "lag");
            reply_lag(c, s, g);
        }
    } else {
        xinfo_stream(c, s);
    }
}

/* --------------------------------------------------------------- XGROUP --- */
void xgroup_command(struct client *c)
{
    int bad, mkstream = 0;
    long long entries_read = ENTRIES_READ_INVALID;
    if (arg_is(c, 1, "help")) {
        static const char *const lines[] = {
            "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CREATE <key> <groupname> <id|$> [option]",
            "    Create consumer group <groupname> of stream <key>, starting after <id>. Options:",
            "    * MKSTREAM",
            "      Create an empty stream when <key> does not exist.",
            "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter.",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Add a consumer to the group.",
            "DELCONSUMER <key> <groupname> <consumer>",
            "    Remove a consumer and its pending entries.",
            "DESTROY <key> <groupname>",
            "    Remove the group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Move the group's last delivered ID (and entries_read counter).",
            "HELP",
            "    Print this help.",
        };
        reply_help_lines(c, lines, sizeof(lines) / sizeof(lines[0]));
        return;
    }
    int create = arg_is(c, 1, "create"), setid = arg_is(c, 1, "setid");
    for (int i = 5; i < c->argc;) {
        if (create && arg_is(c, i, "mkstream")) {
            mkstream = 1;
            i++;
        } else if ((create || setid) && arg_is(c, i, "entriesread") && i + 1 < c->argc) {
            if (arg_ll(c, i + 1, &entries_read) < 0)
                return;
            if (entries_read < 0 && entries_read != ENTRIES_READ_INVALID) {
                reply_error(&c->out, "ERR value for ENTRIESREAD must be positive or -1");
                return;
            }
            i += 2;
        } else {
            reply_syntax_sub(c);
            return;
        }
    }
    struct entry *e = slookup(c, 2, LK_NOSTATS, &bad);
    if (bad)
        return;
    struct stream *s = e ? sptr(e) : NULL;
    const char *gname = c->argv[3];
    size_t glen = c->argvlen[3];
    size_t gpos = 0;
    struct cgroup *g = NULL;
    if (!mkstream) {
        if (!s) {
            reply_error(&c->out, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
                                 "want to use the MKSTREAM option to create an empty stream automatically.");
            return;
        }
        g = cg_find(s, gname, glen, &gpos);
        if (!g && !create && !arg_is(c, 1, "destroy")) {
            reply_errorf(&c->out, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)glen, gname,
                         (int)c->argvlen[2], c->argv[2]);
            return;
        }
    }
    if (create && c->argc <= 8) {
        struct stream_id id;
        if (c->argvlen[4] == 1 && c->argv[4][0] == '$') {
            if (s)
                id = s->last_id;
            else
                id.ms = id.seq = 0;
        } else if (parse_id(c, 4, &id, 0, 1, NULL) < 0) {
            return;
        }
        if (!s) {
            s = stream_new();
            e = entry_new_obj(OBJ_STREAM, ENC_STREAM, c->argv[2], c->argvlen[2], s, -1);
            db_add(c->db, kslot(c, 2), e);
            modified(c, 2);
        }
        if (cg_create(s, gname, glen, &id, entries_read)) {
            reply_ok(&c->out);
            notify_stream(c, 2, "xgroup-create");
            prop_xgroup_id(c, &id);
        } else {
            reply_error(&c->out, "BUSYGROUP Consumer Group name already exists");
        }
    } else if (setid && (c->argc == 5 || c->argc == 7)) {
        struct stream_id id;
        if (c->argvlen[4] == 1 && c->argv[4][0] == '$')
            id = s->last_id;
        else if (parse_id(c, 4, &id, 0, 0, NULL) < 0)
            return;
        g->last_id = id;
        g->entries_read = entries_read;
        reply_ok(&c->out);
        notify_stream(c, 2, "xgroup-setid");
        prop_xgroup_id(c, &id);
    } else if (arg_is(c, 1, "destroy") && c->argc == 4) {
        if (g) {
            cg_destroy(s, gpos);
            reply_int(&c->out, 1);
            notify_stream(c, 2, "xgroup-destroy");
            prop_dirty_add(1);
            /* Blocked XREADGROUP readers of the group get NOGROUP. */
            signal_key_ready(c->db, kslot(c, 2), c->argv[2], c->argvlen[2]);
        } else {
            reply_int(&c->out, 0);
        }
    } else if (arg_is(c, 1, "createconsumer") && c->argc == 5) {
        struct consumer *cn = consumer_create(g, c->argv[4], c->argvlen[4], db_now_ms());
        if (cn) {
            notify_stream(c, 2, "xgroup-createconsumer");
            prop_dirty_add(1);
        }
        reply_int(&c->out, cn ? 1 : 0);
    } else if (arg_is(c, 1, "delconsumer") && c->argc == 5) {
        long long pending = 0;
        struct consumer *cn = consumer_find(g, c->argv[4], c->argvlen[4], NULL);
        if (cn) {
            pending = (long long)cn->pel.n;
            consumer_delete(g, cn);
            notify_stream(c, 2, "xgroup-delconsumer");
            prop_dirty_add(1);
        }
        reply_int(&c->out, pending);
    } else {
        reply_syntax_sub(c);
    }
}

/* ----------------------------------------------------------------- XACK --- */
void xack_command(struct client *c)
{
    int bad;
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    struct cgroup *g = e ? cg_find(sptr(e), c->argv[2], c->argvlen[2], NULL) : NULL;
    if (!g) {
        reply_int(&c->out, 0);
        return;
    }
    int nids = c->argc - 3;
    struct stream_id stack[16], *ids = nids <= 16 ? stack : hk_malloc(sizeof(*ids) * (size_t)nids);
    for (int j = 0; j < nids; j++)
        if (parse_id(c, 3 + j, &ids[j], 0, 1, NULL) < 0)
            goto out;
    long long acked = 0;
    for (int j = 0; j < nids; j++)
        acked += cg_ack(g, &ids[j]);
    prop_dirty_add((unsigned long long)acked); /* fed as it is when it acked something */
    reply_int(&c->out, acked);
out:
    if (ids != stack)
        hk_free(ids);
}

/* ------------------------------------------------------------- XPENDING --- */
void xpending_command(struct client *c)
{
    int justinfo = c->argc == 3, bad;
    struct stream_id start = {0, 0}, end = {UINT64_MAX, UINT64_MAX};
    long long count = 0, minidle = 0;
    int consumer_i = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int si = 3, sx, ex;
        if (arg_is(c, 3, "idle")) {
            if (arg_ll(c, 4, &minidle) < 0)
                return;
            if (c->argc < 8) {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
            si += 2;
        }
        if (arg_ll(c, si + 2, &count) < 0)
            return;
        if (count < 0)
            count = 0;
        if (parse_interval_id(c, si, &start, &sx, 0) < 0)
            return;
        if (sx && sid_incr(&start) < 0) {
            reply_error(&c->out, "ERR invalid start ID for the interval");
            return;
        }
        if (parse_interval_id(c, si + 1, &end, &ex, UINT64_MAX) < 0)
            return;
        if (ex && sid_decr(&end) < 0) {
            reply_error(&c->out, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc)
            consumer_i = si + 3;
    }
    struct entry *e = slookup(c, 1, 0, &bad);
    if (bad)
        return;
    struct cgroup *g = e ? cg_find(sptr(e), c->argv[2], c->argvlen[2], NULL) : NULL;
    if (!g) {
        reply_nogroup_key(c, 1, 2, "");
        return;
    }
    if (justinfo) {
        reply_array(&c->out, 4);
        reply_int(&c->out, (long long)g->pel.n);
        if (!g->pel.n) {
            reply_null(&c->out);
            reply_null(&c->out);
            reply_null_array(&c->out);
            return;
        }
        reply_sid(&c->out, &g->pel.v[0]->id);
        reply_sid(&c->out, &g->pel.v[g->pel.n - 1]->id);
        size_t mark = reply_defer(&c->out);
        long long n = 0;
        for (size_t k = 0; k < g->ncons; k++) {
            struct consumer *cn = g->cons[k];
            if (!cn->pel.n)
                continue;
            reply_array(&c->out, 2);
            reply_bulk(&c->out, cn->name, cn->nlen);
            reply_bulk_ll(&c->out, (long long)cn->pel.n);
            n++;
        }
        reply_defer_array(&c->out, mark, n);
        return;
    }
    struct pel *p = &g->pel;
    if (consumer_i) {
        struct consumer *cn = consumer_find(g, c->argv[consumer_i], c->argvlen[consumer_i], NULL);
        if (!cn) {
            reply_array(&c->out, 0);
            return;
        }
        p = &cn->pel;
    }
    long long now = db_now_ms(), n = 0;
    int found;
    size_t mark = reply_defer(&c->out);
    for (size_t i = pel_search(p, &start, &found); count && i < p->n; i++) {
        struct nack *nk = p->v[i];
        if (sid_cmp(&nk->id, &end) > 0)
            break;
        if (minidle && ms_since(now, nk->delivery_time) < minidle)
            continue;
        n++;
        count--;
        reply_array(&c->out, 4);
        reply_sid(&c->out, &nk->id);
        reply_bulk(&c->out, nk->consumer->name, nk->consumer->nlen);
        long long el = ms_since(now, nk->delivery_time);
        reply_int(&c->out, el < 0 ? 0 : el);
        reply_int(&c->out, (long long)nk->delivery_count);
    }
    reply_defer_array(&c->out, mark, n);
}

/* --------------------------------------------------------------- XCLAIM --- */
void xclaim_command(struct client *c)
{
    int bad;
    long long minidle, retrycount = -1, deliverytime = -1;
    int force = 0, justid = 0;
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    struct cgroup *g = e ? cg_find(sptr(e), c->argv[2], c->argvlen[2], NULL) : NULL;
    if (!g) {
        reply_nogroup_key(c, 1, 2, "");
        return;
    }
    struct stream *s = sptr(e);
    if (!str_to_ll(c->argv[4], c->argvlen[4], &minidle)) {
        reply_error(&c->out, "ERR Invalid min-idle-time argument for XCLAIM");
        return;
    }
    if (minidle < 0)
        minidle = 0;
    int nmax = c->argc - 5, j;
    struct stream_id stack[16], *ids = nmax <= 16 ? stack : hk_malloc(sizeof(*ids) * (size_t)nmax);
    for (j = 5; j < c->argc; j++)
        if (parse_id_str(c, c->argv[j], c->argvlen[j], &ids[j - 5], 0, 1, NULL, 0) < 0)
            break;
    int last_id_arg = j - 1;
    long long now = db_now_ms();
    struct stream_id last_id = {0, 0};
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "force")) {
            force = 1;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else if (arg_is(c, j, "idle") && more) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &deliverytime)) {
                reply_error(&c->out, "ERR Invalid IDLE option argument for XCLAIM");
                goto out;
            }
            deliverytime = ms_since(now, deliverytime);
        } else if (arg_is(c, j, "time") && more) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &deliverytime)) {
                reply_error(&c->out, "ERR Invalid TIME option argument for XCLAIM");
                goto out;
            }
        } else if (arg_is(c, j, "retrycount") && more) {
            j++;
            if (!str_to_ll(c->argv[j], c->argvlen[j], &retrycount)) {
                reply_error(&c->out, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
                goto out;
            }
        } else if (arg_is(c, j, "lastid") && more) {
            j++;
            if (parse_id(c, j, &last_id, 0, 1, NULL) < 0)
                goto out;
        } else {
            reply_errorf(&c->out, "ERR Unrecognized XCLAIM option '%.*s'", (int)c->argvlen[j], c->argv[j]);
            goto out;
        }
    }
    /* Fed as one XCLAIM per NACK it set (the idempotent form), XACK per
     * NACK dropped, XGROUP SETID when LASTID moved the group: one unit. */
    prop_prevent();
    prop_unit_begin();
    int moved = sid_cmp(&last_id, &g->last_id) > 0;
    if (moved)
        g->last_id = last_id;
    if (deliverytime != -1) {
        if (deliverytime < 0 || deliverytime > now)
            deliverytime = now;
    } else {
        deliverytime = now;
    }
    struct consumer *cn = NULL;
    size_t mark = reply_defer(&c->out);
    long long n = 0;
    for (int k = 5; k <= last_id_arg; k++) {
        struct stream_id id = ids[k - 5];
        int found;
        size_t gi = pel_search(&g->pel, &id, &found);
        struct nack *nk = found ? g->pel.v[gi] : NULL;
        struct stream_entry se;
        if (!stream_get(s, &id, &se)) {
            if (nk) {
                prop_xack(c, 1, g, &id);
                prop_dirty_add(1);
                nack_drop(g, nk);
            }
            continue;
        }
        if (force && !nk)
            nk = nack_create(g, gi, &id, now);
        if (!nk)
            continue;
        if (nk->consumer && minidle && ms_since(now, nk->delivery_time) < minidle)
            continue;
        if (!cn)
            cn = consumer_get(c, g, c->argv[3], c->argvlen[3], 1);
        nack_move(nk, cn);
        cn->active_time = now;
        nk->delivery_time = deliverytime;
        if (retrycount >= 0)
            nk->delivery_count = (unsigned long long)retrycount;
        else if (!justid)
            nk->delivery_count++;
        prop_xclaim(c, 1, g, nk);
        prop_dirty_add(1);
        if (justid)
            reply_sid(&c->out, &id);
        else
            reply_entry(&c->out, &se);
        n++;
    }
    reply_defer_array(&c->out, mark, n);
    if (moved) {
        prop_group_setid(c, 1, g);
        prop_dirty_add(1);
    }
    prop_unit_end();
out:
    if (ids != stack)
        hk_free(ids);
}

void xautoclaim_command(struct client *c)
{
    int bad, startex, justid = 0;
    long long minidle, count = 100;
    struct stream_id start;
    if (!str_to_ll(c->argv[4], c->argvlen[4], &minidle)) {
        reply_error(&c->out, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
        return;
    }
    if (minidle < 0)
        minidle = 0;
    if (parse_interval_id(c, 5, &start, &startex, 0) < 0)
        return;
    if (startex && sid_incr(&start) < 0) {
        reply_error(&c->out, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "count") && more) {
            long long maxc = LONG_MAX / 16;
            if (arg_ll_range(c, j + 1, 1, maxc, &count, "ERR COUNT must be > 0") < 0)
                return;
            j++;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    struct entry *e = slookup(c, 1, LK_NOSTATS, &bad);
    if (bad)
        return;
    struct cgroup *g = e ? cg_find(sptr(e), c->argv[2], c->argvlen[2], NULL) : NULL;
    if (!g) {
        reply_nogroup_key(c, 1, 2, "");
        return;
    }
    struct stream *s = sptr(e);
    long long attempts = count * 10, now = db_now_ms();
    struct consumer *cn = NULL;
    /* Fed as XCLAIM per NACK claimed, XACK per NACK dropped (one unit). */
    prop_prevent();
    prop_unit_begin();
    struct stream_id *deleted = hk_malloc(sizeof(*deleted) * (size_t)(count < 1024 ? count : 1024));
    size_t ndel = 0, delcap = (size_t)(count < 1024 ? count : 1024);
    /* The next cursor (reply[0]) is known only at the end: the claimed
     * entries are built in a side buffer and appended after it. */
    struct reply body;
    reply_init(&body);
    body.resp = c->out.resp;
    long long n = 0;
    int found;
    size_t i = pel_search(&g->pel, &start, &found);
    while (attempts-- > 0 && count && i < g->pel.n) {
        struct nack *nk = g->pel.v[i];
        struct stream_entry se;
        if (!stream_get(s, &nk->id, &se)) {
            if (ndel == delcap) {
                delcap *= 2;
                deleted = hk_realloc(deleted, sizeof(*deleted) * delcap);
            }
            deleted[ndel++] = nk->id;
            prop_xack(c, 1, g, &nk->id);
            prop_dirty_add(1);
            nack_drop(g, nk); /* i now indexes the next one */
            count--;
            continue;
        }
        i++;
        if (minidle && ms_since(now, nk->delivery_time) < minidle)
            continue;
        if (!cn)
            cn = consumer_get(c, g, c->argv[3], c->argvlen[3], 1);
        nack_move(nk, cn);
        cn->active_time = now;
        nk->delivery_time = now;
        if (!justid)
            nk->delivery_count++;
        prop_xclaim(c, 1, g, nk);
        prop_dirty_add(1);
        if (justid)
            reply_sid(&body, &nk->id);
        else
            reply_entry(&body, &se);
        n++;
        count--;
    }
    prop_unit_end();
    struct stream_id next = {0, 0};
    reply_array(&c->out, 3);
    if (i < g->pel.n)
        next = g->pel.v[i]->id;
    reply_sid(&c->out, &next);
    reply_array(&c->out, n);
    reply_raw(&c->out, body.buf, body.len);
    reply_free(&body);
    reply_array(&c->out, (long long)ndel);
    for (size_t k = 0; k < ndel; k++)
        reply_sid(&c->out, &deleted[k]);
    hk_free(deleted);
}
