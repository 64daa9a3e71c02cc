/* conn.c - connection commands: PING ECHO QUIT RESET HELLO AUTH CLIENT.
 *
 * CLIENT LIST/KILL reach clients on every worker through
 * worker_broadcast(): each worker formats or flags its own clients, so no
 * thread ever reads another thread's client struct.  A killed client is
 * only flagged CF_CLOSE_ASAP and queued for write; its worker closes it
 * after the current event batch, never in the middle of one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../persist/repl.h"
#include "acl.h"
#include "blocking.h"
#include "commands.h"
#include "memstats.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "pubsub.h"
#include "tracking.h"

void ping_command(struct client *c)
{
    if (c->argc > 2) {
        reply_arity_error(c);
        return;
    }
    if ((c->flags & CF_PUBSUB) && c->out.resp == 2) {
        /* RESP2 subscribed mode: PING answers in the pub/sub shape. */
        reply_array(&c->out, 2);
        reply_bulk(&c->out, "pong", 4);
        if (c->argc == 2)
            reply_bulk(&c->out, c->argv[1], c->argvlen[1]);
        else
            reply_bulk(&c->out, "", 0);
    } else if (c->argc == 2)
        reply_bulk(&c->out, c->argv[1], c->argvlen[1]);
    else
        reply_status(&c->out, "PONG");
}

void echo_command(struct client *c)
{
    reply_bulk(&c->out, c->argv[1], c->argvlen[1]);
}

void quit_command(struct client *c)
{
    reply_ok(&c->out);
    c->flags |= CF_CLOSE_AFTER_REPLY;
}

static void set_authenticated(struct client *c, int yes)
{
    c->authenticated = yes;
    c->parser.authenticated = yes;
}

void auth_command(struct client *c)
{
    const char *user = "default", *pass;
    size_t ulen = 7, plen;
    if (c->argc > 3) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc == 2 && acl_default_nopass()) {
        reply_error(&c->out, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
        return;
    }
    if (c->argc == 3) {
        user = c->argv[1];
        ulen = c->argvlen[1];
    }
    pass = c->argv[c->argc - 1];
    plen = c->argvlen[c->argc - 1];
    if (acl_authenticate(c, user, ulen, pass, plen) < 0) {
        reply_error(&c->out, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    reply_ok(&c->out);
}

static int valid_name(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '!' || s[i] > '~')
            return 0;
    return 1;
}

static void set_name(struct client *c, const char *s, size_t n)
{
    hk_free(c->name);
    c->name = NULL;
    if (n) {
        c->name = hk_malloc(n + 1);
        memcpy(c->name, s, n);
        c->name[n] = 0;
    }
}

void hello_command(struct client *c)
{
    long long ver = 0;
    int next = 1;
    if (c->argc >= 2) {
        if (!str_to_ll(c->argv[1], c->argvlen[1], &ver)) {
            reply_error(&c->out, "ERR Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            reply_error(&c->out, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const char *name = NULL;
    size_t nlen = 0;
    int auth_at = 0; /* the last AUTH's argv index: only it counts, as in Redis */
    for (int j = next; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "auth") && more >= 2) {
            auth_at = j;
            j += 2;
        } else if (arg_is(c, j, "setname") && more >= 1) {
            name = c->argv[j + 1];
            nlen = c->argvlen[j + 1];
            if (!valid_name(name, nlen)) {
                reply_error(&c->out, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            j++;
        } else {
            reply_errorf(&c->out, "ERR Syntax error in HELLO option '%.*s'", (int)c->argvlen[j], c->argv[j]);
            return;
        }
    }
    if (auth_at && acl_authenticate(c, c->argv[auth_at + 1], c->argvlen[auth_at + 1], c->argv[auth_at + 2],
                                    c->argvlen[auth_at + 2]) < 0) {
        reply_error(&c->out, "WRONGPASS invalid username-password pair or user is disabled.");
        return;
    }
    if (!c->authenticated) {
        reply_error(&c->out, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
        return;
    }
    if (name)
        set_name(c, name, nlen);
    if (ver)
        c->out.resp = (int)ver;
    reply_map(&c->out, 7);
    reply_bulk_cstr(&c->out, "server");
    reply_bulk_cstr(&c->out, "redis");
    reply_bulk_cstr(&c->out, "version");
    reply_bulk_cstr(&c->out, REDIS_COMPAT_VERSION);
    reply_bulk_cstr(&c->out, "proto");
    reply_int(&c->out, c->out.resp);
    reply_bulk_cstr(&c->out, "id");
    reply_int(&c->out, (long long)c->id);
    reply_bulk_cstr(&c->out, "mode");
    reply_bulk_cstr(&c->out, "standalone");
    reply_bulk_cstr(&c->out, "role");
    reply_bulk_cstr(&c->out, "master");
    reply_bulk_cstr(&c->out, "modules");
    reply_array(&c->out, 0);
}

void reset_command(struct client *c)
{
    pubsub_client_gone(c);
    multi_client_gone(c);
    tracking_client_reset(c);
    monitor_client_gone(c);
    c->db = 0;
    c->out.resp = 2;
    c->flags &= ~(CF_REPLY_OFF | CF_REPLY_SKIP | CF_REPLY_SKIP_NEXT | CF_NO_EVICT | CF_NO_TOUCH);
    c->out.muted = 0;
    set_name(c, NULL, 0);
    if (c->fd >= 0)
        acl_client_reset(c); /* the default user, authenticated if it is nopass */
    else
        set_authenticated(c, cfg.requirepass == NULL);
    reply_status(&c->out, "RESET");
}

/* ------------------------------------------------------------ CLIENT --- */
static void client_flags_str(const struct client *c, char *out)
{
    char *p = out;
    if (c->flags & CF_MONITOR)
        *p++ = 'O';
    if (c->flags & CF_MASTER)
        *p++ = 'M';
    if (c->flags & (CF_CLOSE_AFTER_REPLY))
        *p++ = 'c';
    if (c->flags & CF_CLOSE_ASAP)
        *p++ = 'A';
    if (c->flags & CF_UNIX)
        *p++ = 'U';
    if (c->flags & CF_NO_EVICT)
        *p++ = 'e';
    if (c->flags & CF_NO_TOUCH)
        *p++ = 'T';
    if (c->flags & (CF_BLOCKED | CF_POSTPONED))
        *p++ = 'b';
    if (c->flags & CF_PUBSUB)
        *p++ = 'P';
    if (multi_in_progress(c))
        *p++ = 'x';
    p = tracking_flags_str(c, p);
    if (p == out)
        *p++ = 'N';
    *p = 0;
}

/* qbuf= as Redis counts it: while a big argument (32 KB or more) arrives,
 * Redis's query buffer holds only that argument's bytes (the command's
 * header lines are consumed), so its tests can wait for qbuf == size. */
static size_t qbuf_len(const struct client *c)
{
    size_t n = c->qlen - c->qpos;
    if (c->parser.in_mbulk && c->parser.bulk_len >= 32 * 1024 && c->parser.pos <= n)
        n -= c->parser.pos;
    return n;
}

static size_t client_line(struct client *c, char *buf, size_t cap, const struct client *self)
{
    char fl[16];
    long long now = time_ms();
    /* Inside EXEC the running command is EXEC (as Redis shows it).  A
     * client logged before it ran anything (a TLS certificate refused by
     * tls-auth-clients-user) shows cmd=NULL. */
    const char *cmd = c == self && c->cmd ? (multi_in_progress(c) ? "exec" : c->cmd->name)
                                          : (c->last_cmd ? c->last_cmd->name : "NULL");
    client_flags_str(c, fl);
    int n = snprintf(buf, cap,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%ld psub=%ld ssub=%ld multi=%d "
                     "qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu oll=0 omem=%zu tot-mem=%zu "
                     "events=r%s cmd=%s user=%s redir=%lld resp=%d lib-name=%s lib-ver=%s io-thread=%d\n",
                     (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "", (now - c->ctime_ms) / 1000,
                     (now - c->last_ms) / 1000, fl, c->db, pubsub_client_channels(c), pubsub_client_patterns(c), pubsub_client_shard(c), multi_client_queued(c), qbuf_len(c), c->qcap - c->qlen, (size_t)0, multi_client_mem(c), c->qcap,
                     c->qbuf_peak, c->out.len - c->sent, c->out.len > 16384 ? c->out.cap : (size_t)0,
                     client_mem_usage(c), (c->flags & CF_WANT_WRITE) ? "w" : "", cmd, acl_client_user(c), tracking_redir(c), c->out.resp,
                     c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "", c->w ? c->w->id : 0);
    return n < 0 ? 0 : (size_t)n; /* >= cap: truncated, call again with n + 1 */
}

/* c's CLIENT LIST line in buf, or in a heap buffer (*heap, to free) when a
 * long name or lib-name does not fit. */
static size_t client_line_any(struct client *c, char *buf, size_t cap, const struct client *self, char **out,
                              char **heap)
{
    size_t n = client_line(c, buf, cap, self);
    *heap = NULL;
    *out = buf;
    if (n >= cap) {
        *heap = hk_malloc(n + 1);
        n = client_line(c, *heap, n + 1, self);
        *out = *heap;
    }
    return n;
}

char *client_info_string(struct client *c)
{
    char buf[1024], *out, *heap;
    size_t n = client_line_any(c, buf, sizeof(buf), c, &out, &heap);
    if (n && out[n - 1] == '\n')
        n--;
    char *s = hk_malloc(n + 1);
    memcpy(s, out, n);
    s[n] = 0;
    hk_free(heap);
    return s;
}

static int type_matches(const struct client *c, int type)
{
    if (type < 0)
        return 1;
    if (type == 2)
        return (c->flags & CF_MASTER) != 0;
    if (type == 3) /* our replicas belong to the replication thread */
        return 0;
    if (c->flags & CF_MASTER)
        return 0;
    return (type == 1) == !!(c->flags & CF_PUBSUB);
}

struct list_req {
    pthread_mutex_t lock;
    char *buf;
    size_t len, cap;
    const struct client *self;
    int type; /* TYPE filter: -1 none, else as parse_client_type */
    unsigned long long *ids;
    int nids;
};

static int cmp_ull(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

static void list_one(struct worker *w, void *arg)
{
    struct list_req *r = arg;
    char line[1024], *heap, *text;
    for (struct client *c = w->clients; c; c = c->next) {
        if (!type_matches(c, r->type))
            continue;
        /* Killed or evicted, closed at the end of its worker's loop turn:
         * already gone, as in Redis (which frees such clients at once). */
        if (c->flags & CF_CLOSE_ASAP)
            continue;
        unsigned long long id = c->id;
        if (r->nids && !bsearch(&id, r->ids, (size_t)r->nids, sizeof(*r->ids), cmp_ull))
            continue; /* ids sorted by client_list: clients x log(ids), not clients x ids */
        size_t n = client_line_any(c, line, sizeof(line), r->self, &text, &heap);
        pthread_mutex_lock(&r->lock);
        if (r->len + n > r->cap) {
            while (r->len + n > r->cap)
                r->cap = r->cap ? r->cap * 2 : 4096;
            r->buf = hk_realloc(r->buf, r->cap);
        }
        memcpy(r->buf + r->len, text, n);
        r->len += n;
        pthread_mutex_unlock(&r->lock);
        hk_free(heap);
    }
}

struct kill_req {
    const struct client *self;
    int skipme;
    unsigned long long id;
    int has_id;
    const char *addr, *laddr;
    size_t addrlen, laddrlen;
    int type; /* -1 any, else as parse_client_type */
    const char *user;
    size_t userlen;
    long long maxage;
    atomic_int killed;
};

static void kill_one(struct worker *w, void *arg)
{
    struct kill_req *r = arg;
    long long now = time_ms();
    for (struct client *c = w->clients; c; c = c->next) {
        if (r->skipme && c == r->self)
            continue;
        if (r->has_id && c->id != r->id)
            continue;
        if (r->addr && !(strlen(c->addr) == r->addrlen && memcmp(c->addr, r->addr, r->addrlen) == 0))
            continue;
        if (r->laddr && !(strlen(c->laddr) == r->laddrlen && memcmp(c->laddr, r->laddr, r->laddrlen) == 0))
            continue;
        if (!type_matches(c, r->type))
            continue;
        if (r->user && !(strlen(acl_client_user(c)) == r->userlen && memcmp(r->user, acl_client_user(c), r->userlen) == 0))
            continue;
        if (r->maxage > 0 && (now - c->ctime_ms) / 1000 < r->maxage)
            continue;
        if (c->flags & CF_CLOSE_ASAP)
            continue;
        client_close_asap(c);
        atomic_fetch_add(&r->killed, 1);
    }
}

struct unblock_req {
    unsigned long long id;
    int err;
    atomic_int done;
};

/* Runs on every worker: the one owning the client unblocks it. */
static void unblock_one(struct worker *w, void *arg)
{
    struct unblock_req *r = arg;
    for (struct client *c = w->clients; c; c = c->next)
        if (c->id == r->id && blocking_unblock(c, r->err))
            atomic_fetch_add(&r->done, 1);
}

static void client_unblock(struct client *c)
{
    struct unblock_req r;
    long long id;
    if (!str_to_ll(c->argv[2], c->argvlen[2], &id)) {
        reply_error(&c->out, ERR_NOT_INT);
        return;
    }
    r.id = (unsigned long long)id;
    r.err = 0;
    if (c->argc == 4) {
        if (arg_is(c, 3, "error"))
            r.err = 1;
        else if (!arg_is(c, 3, "timeout")) {
            reply_error(&c->out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    atomic_init(&r.done, 0);
    worker_broadcast(unblock_one, &r);
    reply_int(&c->out, atomic_load(&r.done) ? 1 : 0);
}

/* CLIENT LIST/KILL TYPE: 0 normal, 1 pubsub (a subscribed client, as
 * Redis classes it), 2 master (a replica's link), 3 replica (ours are not
 * worker clients: CLIENT KILL has the replication thread drop them). */
static int parse_client_type(struct client *c, int i, int *type)
{
    if (arg_is(c, i, "normal"))
        *type = 0;
    else if (arg_is(c, i, "pubsub"))
        *type = 1;
    else if (arg_is(c, i, "master"))
        *type = 2;
    else if (arg_is(c, i, "replica") || arg_is(c, i, "slave"))
        *type = 3;
    else {
        reply_errorf(&c->out, "ERR Unknown client type '%.*s'", (int)c->argvlen[i], c->argv[i]);
        return -1;
    }
    return 0;
}

static void client_kill(struct client *c)
{
    struct kill_req r;
    memset(&r, 0, sizeof(r));
    r.self = c;
    r.type = -1;
    atomic_init(&r.killed, 0);
    if (c->argc == 3) {
        /* Old form: CLIENT KILL addr:port */
        r.addr = c->argv[2];
        r.addrlen = c->argvlen[2];
        worker_broadcast(kill_one, &r);
        if (atomic_load(&r.killed) == 0)
            reply_error(&c->out, "ERR No such client");
        else
            reply_ok(&c->out);
        return;
    }
    r.skipme = 1;
    for (int j = 2; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, j, "id")) {
            long long v;
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &v) || v <= 0) {
                reply_error(&c->out, "ERR client-id should be greater than 0");
                return;
            }
            r.id = (unsigned long long)v;
            r.has_id = 1;
        } else if (arg_is(c, j, "type")) {
            if (parse_client_type(c, j + 1, &r.type) < 0)
                return;
        } else if (arg_is(c, j, "addr")) {
            r.addr = c->argv[j + 1];
            r.addrlen = c->argvlen[j + 1];
        } else if (arg_is(c, j, "laddr")) {
            r.laddr = c->argv[j + 1];
            r.laddrlen = c->argvlen[j + 1];
        } else if (arg_is(c, j, "user")) {
            r.user = c->argv[j + 1];
            r.userlen = c->argvlen[j + 1];
            if (!acl_user_exists(r.user, r.userlen)) {
                reply_errorf(&c->out, "ERR No such user '%.*s'", (int)r.userlen, r.user);
                return;
            }
        } else if (arg_is(c, j, "skipme")) {
            if (arg_is(c, j + 1, "yes"))
                r.skipme = 1;
            else if (arg_is(c, j + 1, "no"))
                r.skipme = 0;
            else {
                reply_error(&c->out, ERR_SYNTAX);
                return;
            }
        } else if (arg_is(c, j, "maxage")) {
            if (arg_ll(c, j + 1, &r.maxage) < 0)
                return;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    worker_broadcast(kill_one, &r);
    /* Killing ourselves: the reply goes out first, then the connection. */
    if (c->flags & CF_CLOSE_ASAP) {
        c->flags = (c->flags & ~CF_CLOSE_ASAP) | CF_CLOSE_AFTER_REPLY;
    }
    /* TYPE replica alone (other filters name worker clients): our
     * replicas are dropped by the replication thread and reconnect. */
    if (r.type == 3 && !r.has_id && !r.addr && !r.laddr && !r.user && !r.maxage)
        atomic_fetch_add(&r.killed, repl_drop_replicas());
    reply_int(&c->out, atomic_load(&r.killed));
}

static void client_list(struct client *c)
{
    struct list_req r;
    memset(&r, 0, sizeof(r));
    pthread_mutex_init(&r.lock, NULL);
    r.self = c;
    r.type = -1;
    if (c->argc > 2) {
        if (c->argc == 4 && arg_is(c, 2, "type")) {
            int type;
            if (parse_client_type(c, 3, &type) < 0)
                return;
            r.type = type;
        } else if (c->argc >= 4 && arg_is(c, 2, "id")) {
            r.nids = c->argc - 3;
            r.ids = hk_malloc(sizeof(*r.ids) * (size_t)r.nids);
            for (int j = 3; j < c->argc; j++) {
                long long v;
                if (!str_to_ll(c->argv[j], c->argvlen[j], &v) || v <= 0) {
                    reply_error(&c->out, "ERR Invalid client ID");
                    hk_free(r.ids);
                    return;
                }
                r.ids[j - 3] = (unsigned long long)v;
            }
            qsort(r.ids, (size_t)r.nids, sizeof(*r.ids), cmp_ull);
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    worker_broadcast(list_one, &r);
    reply_verbatim(&c->out, r.buf ? r.buf : "", r.len, "txt");
    hk_free(r.buf);
    hk_free(r.ids);
    pthread_mutex_destroy(&r.lock);
}

static int on_off(struct client *c, int i, int *v)
{
    if (arg_is(c, i, "on"))
        *v = 1;
    else if (arg_is(c, i, "off"))
        *v = 0;
    else {
        reply_error(&c->out, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

void client_command(struct client *c)
{
    const char *sub = c->cmd->name + 7; /* after "client|" */
    if (!strcmp(sub, "id")) {
        reply_int(&c->out, (long long)c->id);
    } else if (!strcmp(sub, "setname")) {
        if (!valid_name(c->argv[2], c->argvlen[2])) {
            reply_error(&c->out, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        set_name(c, c->argv[2], c->argvlen[2]);
        reply_ok(&c->out);
    } else if (!strcmp(sub, "getname")) {
        if (c->name)
            reply_bulk_cstr(&c->out, c->name);
        else
            reply_null(&c->out);
    } else if (!strcmp(sub, "list")) {
        client_list(c);
    } else if (!strcmp(sub, "info")) {
        char line[1024], *heap, *text;
        size_t n = client_line_any(c, line, sizeof(line), c, &text, &heap);
        reply_verbatim(&c->out, text, n, "txt");
        hk_free(heap);
    } else if (!strcmp(sub, "kill")) {
        client_kill(c);
    } else if (!strcmp(sub, "unblock")) {
        client_unblock(c);
    } else if (!strcmp(sub, "pause")) {
        pause_client_pause(c);
    } else if (!strcmp(sub, "unpause")) {
        pause_client_unpause(c);
    } else if (!strcmp(sub, "setinfo")) {
        char **slot;
        const char *what;
        if (arg_is(c, 2, "lib-name")) {
            slot = &c->lib_name;
            what = "lib-name";
        } else if (arg_is(c, 2, "lib-ver")) {
            slot = &c->lib_ver;
            what = "lib-ver";
        } else {
            reply_errorf(&c->out, "ERR Unrecognized option '%.*s'", (int)c->argvlen[2], c->argv[2]);
            return;
        }
        if (!valid_name(c->argv[3], c->argvlen[3])) {
            reply_errorf(&c->out, "ERR %s cannot contain spaces, newlines or special characters.", what);
            return;
        }
        hk_free(*slot);
        *slot = NULL;
        if (c->argvlen[3]) {
            *slot = hk_malloc(c->argvlen[3] + 1);
            memcpy(*slot, c->argv[3], c->argvlen[3]);
            (*slot)[c->argvlen[3]] = 0;
        }
        reply_ok(&c->out);
    } else if (!strcmp(sub, "no-evict") || !strcmp(sub, "no-touch")) {
        int v;
        unsigned f = sub[3] == 'e' ? CF_NO_EVICT : CF_NO_TOUCH;
        if (on_off(c, 2, &v) < 0)
            return;
        if (v)
            c->flags |= f;
        else
            c->flags &= ~f;
        reply_ok(&c->out);
    } else if (!strcmp(sub, "reply")) {
        if (arg_is(c, 2, "on")) {
            c->flags &= ~(CF_REPLY_OFF | CF_REPLY_SKIP | CF_REPLY_SKIP_NEXT);
            c->out.muted = 0;
            reply_ok(&c->out);
        } else if (arg_is(c, 2, "off")) {
            c->flags |= CF_REPLY_OFF;
        } else if (arg_is(c, 2, "skip")) {
            if (!(c->flags & CF_REPLY_OFF))
                c->flags |= CF_REPLY_SKIP_NEXT;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
        }
    } else if (!strcmp(sub, "help")) {
        static const char *lines[] = {
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are: ID, TYPE, USER, ADDR, LADDR, SKIPME, MAXAGE.",
            "LIST [options ...]",
            "    Return information about client connections. Options: TYPE, ID.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
            "NO-TOUCH (ON|OFF)",
            "    Will not touch LRU/LFU stats when this mode is on.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "SETINFO <option> <value>",
            "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            reply_status(&c->out, lines[i]);
    }
}
