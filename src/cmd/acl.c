/* acl.c - Redis 7.2 ACLs: users, rules (commands, categories, key and
 * channel patterns, selectors), AUTH, the permission check, ACL *.
 *
 * Data.  A user (struct acl_user) is a name, a reference count and a
 * pointer to its current version (struct uver: flags, password hashes and
 * selectors, the first being the root selector).  A version is never
 * modified once published: ACL SETUSER builds a new version from a copy of
 * the old one, applies every rule to the copy (nothing changes when one is
 * refused) and swaps the pointer.
 *
 * Ownership and locking rule.  One rwlock (acl_lock) guards the registry
 * (the sorted user array) and every user's version pointer:
 *   - writers (ACL SETUSER / DELUSER, CONFIG SET requirepass, start-up)
 *     take it exclusively, swap a version pointer and free the old
 *     version at once: no reader can hold it, since
 *   - readers (permission checks, AUTH, GETUSER, LIST, DRYRUN) read a
 *     version only while holding the lock shared, and never keep a
 *     pointer to a version after releasing it.  The lock is held only for
 *     the check itself, never across a command's execution, a slot-lock
 *     wait or worker_broadcast(), so it cannot take part in a deadlock.
 * A client (owner thread only) holds a counted reference to its user
 * (c->acl_user, NULL until its first command binds it to "default");
 * the registry holds one too.  DELUSER removes the user from the registry
 * and drops that reference; the last holder frees the user.  References
 * are taken only from the registry under the lock, so a count never
 * rises from zero.
 *
 * The hot path.  c->acl_fast is 1 when the client's user's root selector
 * allows every command, key and channel: cmd_execute then tests that one
 * byte and nothing else.  It is recomputed on the client's own thread: at
 * AUTH / HELLO / RESET, and by a worker_broadcast() job after every change
 * of a user (SETUSER, DELUSER, requirepass), so a client of a changed user
 * sees the new rules from its next command on.  The same job disconnects
 * a subscriber whose channels are no longer allowed, as Redis does.
 *
 * The ACL log is a list under its own mutex (acl_log_mu), newest first. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/sha256.h"
#include "../base/util.h"
#include "acl.h"
#include "commands.h"
#include "multi.h"
#include "pubsub.h"

int acl_pubsub_default = 1;
long long acl_log_max_len = 128;

/* Selector flags. */
#define SEL_ALLKEYS 1u
#define SEL_ALLCMDS 2u
#define SEL_ALLCH 4u
/* User flags, in ACL LIST order. */
#define U_ON 1u
#define U_OFF 2u
#define U_NOPASS 4u
#define U_SKIPSAN 8u
#define U_SAN 16u
/* Key pattern permissions. */
#define P_R 1
#define P_W 2
/* Denial reasons (Redis's order: the higher wins between selectors). */
#define D_OK 0
#define D_CMD 1
#define D_KEY 2
#define D_AUTH 3
#define D_CHAN 4
#define D_TLS_CERT 5 /* tls-auth-clients-user: the certificate names no usable user */

static const char *const cat_names[] = {"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
                                        "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
                                        "blocking", "dangerous", "connection", "transaction", "scripting",
                                        "vectorset", NULL};

struct pat {
    int flags;
    size_t len;
    char *s;
};

struct plist {
    int n, cap;
    struct pat *v;
};

struct sel {
    unsigned flags;
    uint64_t *bits;  /* one bit per command id, then the "future commands" bit */
    struct plist keys, chans;
    char *rules;     /* the command rules as applied, normalised as Redis does */
    char ***firstargs; /* per command id: allowed first arguments (+select|0), or NULL */
};

struct uver {
    unsigned flags;
    int npw;
    char (*pw)[65];
    int nsel;
    struct sel *sel; /* sel[0]: the root selector */
};

struct acl_user {
    char *name;
    size_t nlen;
    struct uver *v;
    atomic_int refs;
};

static pthread_rwlock_t acl_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct acl_user **users;
static int nusers, capusers;
static struct acl_user *default_user;
static int nbits, nwords;

/* ---------------------------------------------------------- helpers --- */
static char *dupn(const char *s, size_t n)
{
    char *p = hk_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static int has_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)s[i]) || s[i] == 0)
            return 1;
    return 0;
}

struct sbuf {
    char *b;
    size_t len, cap;
};

static void sb_add(struct sbuf *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2 + 32;
        s->b = hk_realloc(s->b, s->cap);
    }
    memcpy(s->b + s->len, p, n);
    s->len += n;
    s->b[s->len] = 0;
}

static void sb_cat(struct sbuf *s, const char *p)
{
    sb_add(s, p, strlen(p));
}

static void sb_init(struct sbuf *s)
{
    s->b = NULL;
    s->len = s->cap = 0;
    sb_add(s, "", 0);
}

static void plist_free(struct plist *l)
{
    for (int i = 0; i < l->n; i++)
        hk_free(l->v[i].s);
    hk_free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static void plist_copy(struct plist *d, const struct plist *s)
{
    d->n = d->cap = s->n;
    d->v = s->n ? hk_malloc(sizeof(*d->v) * (size_t)s->n) : NULL;
    for (int i = 0; i < s->n; i++) {
        d->v[i] = s->v[i];
        d->v[i].s = dupn(s->v[i].s, s->v[i].len);
    }
}

/* Add a pattern, or OR its flags into an equal one. */
static void plist_add(struct plist *l, const char *s, size_t n, int flags)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].len == n && !memcmp(l->v[i].s, s, n)) {
            l->v[i].flags |= flags;
            return;
        }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = hk_realloc(l->v, sizeof(*l->v) * (size_t)l->cap);
    }
    l->v[l->n].flags = flags;
    l->v[l->n].len = n;
    l->v[l->n].s = dupn(s, n);
    l->n++;
}

/* -------------------------------------------------------- selectors --- */
static void firstargs_reset_id(struct sel *s, int id)
{
    if (!s->firstargs || !s->firstargs[id])
        return;
    for (char **p = s->firstargs[id]; *p; p++)
        hk_free(*p);
    hk_free(s->firstargs[id]);
    s->firstargs[id] = NULL;
}

static void firstargs_reset(struct sel *s)
{
    if (!s->firstargs)
        return;
    for (int i = 0; i < nbits; i++)
        firstargs_reset_id(s, i);
    hk_free(s->firstargs);
    s->firstargs = NULL;
}

static void sel_init(struct sel *s, unsigned flags)
{
    memset(s, 0, sizeof(*s));
    s->flags = flags | (__atomic_load_n(&acl_pubsub_default, __ATOMIC_RELAXED) ? 0 : SEL_ALLCH);
    s->bits = hk_calloc(sizeof(uint64_t) * (size_t)nwords);
    s->rules = dupn("", 0);
}

static void sel_free(struct sel *s)
{
    hk_free(s->bits);
    plist_free(&s->keys);
    plist_free(&s->chans);
    hk_free(s->rules);
    firstargs_reset(s);
}

static void sel_copy(struct sel *d, const struct sel *s)
{
    d->flags = s->flags;
    d->bits = hk_malloc(sizeof(uint64_t) * (size_t)nwords);
    memcpy(d->bits, s->bits, sizeof(uint64_t) * (size_t)nwords);
    plist_copy(&d->keys, &s->keys);
    plist_copy(&d->chans, &s->chans);
    d->rules = dupn(s->rules, strlen(s->rules));
    d->firstargs = NULL;
    if (s->firstargs) {
        d->firstargs = hk_calloc(sizeof(char **) * (size_t)nbits);
        for (int i = 0; i < nbits; i++) {
            if (!s->firstargs[i])
                continue;
            int n = 0;
            while (s->firstargs[i][n])
                n++;
            d->firstargs[i] = hk_malloc(sizeof(char *) * (size_t)(n + 1));
            for (int k = 0; k < n; k++)
                d->firstargs[i][k] = dupn(s->firstargs[i][k], strlen(s->firstargs[i][k]));
            d->firstargs[i][n] = NULL;
        }
    }
}

static inline int bit_get(const struct sel *s, int id)
{
    return (s->bits[id >> 6] >> (id & 63)) & 1;
}

static void bit_set(struct sel *s, int id, int v)
{
    if (v) {
        s->bits[id >> 6] |= 1ull << (id & 63);
    } else {
        s->bits[id >> 6] &= ~(1ull << (id & 63));
        s->flags &= ~SEL_ALLCMDS;
    }
}

static void change_perm(struct sel *s, const struct cmd *cmd, int allow)
{
    bit_set(s, cmd->id, allow);
    firstargs_reset_id(s, cmd->id);
    for (const struct cmd *sub = cmd->subs; sub && sub->name; sub++)
        bit_set(s, sub->id, allow);
}

static void set_category(struct sel *s, unsigned flag, int allow)
{
    for (const struct cmd *c = cmd_table; c->name; c++) {
        if (c->acl & flag)
            change_perm(s, c, allow);
        for (const struct cmd *sub = c->subs; sub && sub->name; sub++)
            if (sub->acl & flag)
                change_perm(s, sub, allow);
    }
}

/* A command by its full name ("get", "config|get"), whatever
 * rename-command did, case-insensitively. */
static const struct cmd *cmd_by_fullname(const char *name, size_t n)
{
    for (const struct cmd *c = cmd_table; c->name; c++) {
        if (str_eq_nocase(name, n, c->name))
            return c;
        for (const struct cmd *sub = c->subs; sub && sub->name; sub++)
            if (str_eq_nocase(name, n, sub->name))
                return sub;
    }
    return NULL;
}

static unsigned category_flag(const char *name, size_t n)
{
    for (int i = 0; cat_names[i]; i++)
        if (str_eq_nocase(name, n, cat_names[i]))
            return 1u << i;
    return 0;
}

/* Drop earlier rules naming the same command (or one of its
 * subcommands), then append this one, as Redis keeps them. */
static void rules_update(struct sel *s, const char *rule, size_t rlen, int allow)
{
    char *low = dupn(rule, rlen);
    for (size_t i = 0; i < rlen; i++)
        low[i] = (char)tolower((unsigned char)low[i]);
    struct sbuf out;
    sb_init(&out);
    const char *p = s->rules;
    while (*p) {
        const char *e = strchr(p, ' ');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        /* p[0] is '+' or '-' */
        size_t nl = l - 1;
        int drop = (nl == rlen && !memcmp(p + 1, low, rlen)) ||
                   (nl > rlen && !memcmp(p + 1, low, rlen) && p[1 + rlen] == '|');
        if (!drop) {
            if (out.len)
                sb_add(&out, " ", 1);
            sb_add(&out, p, l);
        }
        p += l;
        while (*p == ' ')
            p++;
    }
    if (out.len)
        sb_add(&out, " ", 1);
    sb_add(&out, allow ? "+" : "-", 1);
    sb_add(&out, low, rlen);
    hk_free(low);
    hk_free(s->rules);
    s->rules = out.b;
}

static void firstarg_add(struct sel *s, int id, const char *sub)
{
    if (!s->firstargs)
        s->firstargs = hk_calloc(sizeof(char **) * (size_t)nbits);
    int n = 0;
    if (s->firstargs[id])
        for (; s->firstargs[id][n]; n++)
            if (!strcasecmp(s->firstargs[id][n], sub))
                return;
    s->firstargs[id] = hk_realloc(s->firstargs[id], sizeof(char *) * (size_t)(n + 2));
    s->firstargs[id][n] = dupn(sub, strlen(sub));
    s->firstargs[id][n + 1] = NULL;
}

/* One selector rule; 0, or an errno value naming the error. */
static int sel_apply(struct sel *s, const char *op, size_t oplen)
{
    char buf[512];
    if (str_eq_nocase(op, oplen, "allkeys") || (oplen == 2 && !memcmp(op, "~*", 2))) {
        s->flags |= SEL_ALLKEYS;
        plist_free(&s->keys);
    } else if (str_eq_nocase(op, oplen, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        plist_free(&s->keys);
    } else if (str_eq_nocase(op, oplen, "allchannels") || (oplen == 2 && !memcmp(op, "&*", 2))) {
        s->flags |= SEL_ALLCH;
        plist_free(&s->chans);
    } else if (str_eq_nocase(op, oplen, "resetchannels")) {
        s->flags &= ~SEL_ALLCH;
        plist_free(&s->chans);
    } else if (str_eq_nocase(op, oplen, "allcommands") || str_eq_nocase(op, oplen, "+@all")) {
        memset(s->bits, 0xff, sizeof(uint64_t) * (size_t)nwords);
        s->flags |= SEL_ALLCMDS;
        s->rules[0] = 0;
        firstargs_reset(s);
    } else if (str_eq_nocase(op, oplen, "nocommands") || str_eq_nocase(op, oplen, "-@all")) {
        memset(s->bits, 0, sizeof(uint64_t) * (size_t)nwords);
        s->flags &= ~SEL_ALLCMDS;
        s->rules[0] = 0;
        firstargs_reset(s);
    } else if (oplen && (op[0] == '~' || op[0] == '%')) {
        if (s->flags & SEL_ALLKEYS)
            return EEXIST;
        int flags = 0;
        size_t off = 1;
        if (op[0] == '%') {
            for (; off < oplen; off++) {
                int u = toupper((unsigned char)op[off]);
                if (u == 'R' && !(flags & P_R)) {
                    flags |= P_R;
                } else if (u == 'W' && !(flags & P_W)) {
                    flags |= P_W;
                } else if (op[off] == '~') {
                    off++;
                    break;
                } else {
                    return EINVAL;
                }
            }
        } else {
            flags = P_R | P_W;
        }
        if (has_space(op + off, oplen - off))
            return EINVAL;
        plist_add(&s->keys, op + off, oplen - off, flags);
        s->flags &= ~SEL_ALLKEYS;
    } else if (oplen && op[0] == '&') {
        if (s->flags & SEL_ALLCH)
            return EISDIR;
        if (has_space(op + 1, oplen - 1))
            return EINVAL;
        plist_add(&s->chans, op + 1, oplen - 1, 0);
        s->flags &= ~SEL_ALLCH;
    } else if (oplen >= 1 && (op[0] == '+' || op[0] == '-') && (oplen < 2 || op[1] != '@')) {
        int allow = op[0] == '+';
        const char *bar = oplen > 1 ? memrchr(op + 1, '|', oplen - 1) : NULL;
        if (!allow || !bar) {
            const struct cmd *cmd = cmd_by_fullname(op + 1, oplen - 1);
            if (!cmd)
                return ENOENT;
            change_perm(s, cmd, allow);
            rules_update(s, cmd->name, strlen(cmd->name), allow);
            return 0;
        }
        const struct cmd *cmd = cmd_by_fullname(op + 1, (size_t)(bar - op - 1));
        if (!cmd)
            return ENOENT;
        if (strchr(cmd->name, '|'))
            return ECHILD;
        size_t sublen = oplen - (size_t)(bar - op) - 1;
        if (sublen == 0)
            return EINVAL;
        if (cmd->subs) {
            const struct cmd *sub = cmd_by_fullname(op + 1, oplen - 1);
            if (!sub)
                return ENOENT;
            change_perm(s, sub, 1);
        } else {
            if (sublen >= sizeof(buf))
                return EINVAL;
            memcpy(buf, bar + 1, sublen);
            buf[sublen] = 0;
            firstarg_add(s, cmd->id, buf);
        }
        rules_update(s, op + 1, oplen - 1, 1);
    } else if (oplen >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        unsigned flag = category_flag(op + 2, oplen - 2);
        if (!flag)
            return ENOENT;
        rules_update(s, op + 1, oplen - 1, op[0] == '+');
        set_category(s, flag, op[0] == '+');
    } else {
        return EINVAL;
    }
    return 0;
}

/* ------------------------------------------------------------ users --- */
static struct uver *uver_new(void)
{
    struct uver *v = hk_calloc(sizeof(*v));
    v->flags = U_OFF | U_SAN;
    v->nsel = 1;
    v->sel = hk_malloc(sizeof(struct sel));
    sel_init(&v->sel[0], 0);
    return v;
}

static void uver_free(struct uver *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->nsel; i++)
        sel_free(&v->sel[i]);
    hk_free(v->sel);
    hk_free(v->pw);
    hk_free(v);
}

static struct uver *uver_copy(const struct uver *s)
{
    struct uver *v = hk_calloc(sizeof(*v));
    v->flags = s->flags;
    v->npw = s->npw;
    if (s->npw) {
        v->pw = hk_malloc(sizeof(*v->pw) * (size_t)s->npw);
        memcpy(v->pw, s->pw, sizeof(*v->pw) * (size_t)s->npw);
    }
    v->nsel = s->nsel;
    v->sel = hk_malloc(sizeof(struct sel) * (size_t)s->nsel);
    for (int i = 0; i < s->nsel; i++)
        sel_copy(&v->sel[i], &s->sel[i]);
    return v;
}

static int valid_hash(const char *h, size_t n)
{
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
            return 0;
    return 1;
}

static int pw_find(const struct uver *v, const char *h)
{
    for (int i = 0; i < v->npw; i++)
        if (!memcmp(v->pw[i], h, 64))
            return i;
    return -1;
}

static int user_apply(struct uver *v, const char *op, size_t oplen)
{
    char h[65];
    if (oplen == 0)
        return 0;
    if (str_eq_nocase(op, oplen, "on")) {
        v->flags = (v->flags | U_ON) & ~U_OFF;
    } else if (str_eq_nocase(op, oplen, "off")) {
        v->flags = (v->flags | U_OFF) & ~U_ON;
    } else if (str_eq_nocase(op, oplen, "skip-sanitize-payload")) {
        v->flags = (v->flags | U_SKIPSAN) & ~U_SAN;
    } else if (str_eq_nocase(op, oplen, "sanitize-payload")) {
        v->flags = (v->flags | U_SAN) & ~U_SKIPSAN;
    } else if (str_eq_nocase(op, oplen, "nopass")) {
        v->flags |= U_NOPASS;
        v->npw = 0;
    } else if (str_eq_nocase(op, oplen, "resetpass")) {
        v->flags &= ~U_NOPASS;
        v->npw = 0;
    } else if (op[0] == '>' || op[0] == '#') {
        if (op[0] == '>') {
            sha256_hex(op + 1, oplen - 1, h);
        } else {
            if (!valid_hash(op + 1, oplen - 1))
                return EBADMSG;
            memcpy(h, op + 1, 64);
            h[64] = 0;
        }
        if (pw_find(v, h) < 0) {
            v->pw = hk_realloc(v->pw, sizeof(*v->pw) * (size_t)(v->npw + 1));
            memcpy(v->pw[v->npw++], h, 65);
        }
        v->flags &= ~U_NOPASS;
    } else if (op[0] == '<' || op[0] == '!') {
        if (op[0] == '<') {
            sha256_hex(op + 1, oplen - 1, h);
        } else {
            if (!valid_hash(op + 1, oplen - 1))
                return EBADMSG;
            memcpy(h, op + 1, 64);
            h[64] = 0;
        }
        int i = pw_find(v, h);
        if (i < 0)
            return ENODEV;
        memmove(v->pw[i], v->pw[i + 1], sizeof(*v->pw) * (size_t)(v->npw - i - 1));
        v->npw--;
    } else if (op[0] == '(' && op[oplen - 1] == ')') {
        struct sel s;
        sel_init(&s, 0);
        const char *p = op + 1, *e = op + oplen - 1;
        while (p < e) {
            while (p < e && isspace((unsigned char)*p))
                p++;
            const char *q = p;
            while (q < e && !isspace((unsigned char)*q))
                q++;
            if (q > p) {
                int r = sel_apply(&s, p, (size_t)(q - p));
                if (r) {
                    sel_free(&s);
                    return r;
                }
            }
            p = q;
        }
        v->sel = hk_realloc(v->sel, sizeof(struct sel) * (size_t)(v->nsel + 1));
        v->sel[v->nsel++] = s;
    } else if (str_eq_nocase(op, oplen, "clearselectors")) {
        for (int i = 1; i < v->nsel; i++)
            sel_free(&v->sel[i]);
        v->nsel = 1;
    } else if (str_eq_nocase(op, oplen, "reset")) {
        user_apply(v, "resetpass", 9);
        user_apply(v, "resetkeys", 9);
        user_apply(v, "resetchannels", 13);
        if (!__atomic_load_n(&acl_pubsub_default, __ATOMIC_RELAXED))
            user_apply(v, "allchannels", 11);
        user_apply(v, "off", 3);
        user_apply(v, "sanitize-payload", 16);
        user_apply(v, "clearselectors", 14);
        user_apply(v, "-@all", 5);
    } else {
        return sel_apply(&v->sel[0], op, oplen);
    }
    return 0;
}

static const char *apply_error(int e)
{
    switch (e) {
    case ENOENT:
        return "Unknown command or category name in ACL";
    case EINVAL:
        return "Syntax error";
    case EEXIST:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case EISDIR:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
               "effect. Try 'resetchannels' to start with an empty list of channels";
    case ENODEV:
        return "The password you are trying to remove from the user does not exist";
    case EBADMSG:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case EALREADY:
        return "Duplicate user found. A user can only be defined once in config files";
    case ECHILD:
        return "Allowing first-arg of a subcommand is not supported";
    default:
        return "Wrong format";
    }
}

/* Registry (acl_lock held). */
static int user_pos(const char *name, size_t n, int *found)
{
    int lo = 0, hi = nusers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const struct acl_user *u = users[mid];
        size_t m = u->nlen < n ? u->nlen : n;
        int c = memcmp(u->name, name, m);
        if (c == 0)
            c = u->nlen < n ? -1 : u->nlen > n ? 1 : 0;
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static struct acl_user *user_find(const char *name, size_t n)
{
    int f, i = user_pos(name, n, &f);
    return f ? users[i] : NULL;
}

static struct acl_user *user_insert(const char *name, size_t n, struct uver *v)
{
    int f, i = user_pos(name, n, &f);
    struct acl_user *u = hk_calloc(sizeof(*u));
    u->name = dupn(name, n);
    u->nlen = n;
    u->v = v;
    atomic_init(&u->refs, 1);
    if (nusers == capusers) {
        capusers = capusers ? capusers * 2 : 8;
        users = hk_realloc(users, sizeof(*users) * (size_t)capusers);
    }
    memmove(users + i + 1, users + i, sizeof(*users) * (size_t)(nusers - i));
    users[i] = u;
    nusers++;
    return u;
}

static void user_unref(struct acl_user *u)
{
    if (u && atomic_fetch_sub(&u->refs, 1) == 1) {
        uver_free(u->v);
        hk_free(u->name);
        hk_free(u);
    }
}

static int sel_fast(const struct sel *s)
{
    return (s->flags & (SEL_ALLCMDS | SEL_ALLKEYS | SEL_ALLCH)) == (SEL_ALLCMDS | SEL_ALLKEYS | SEL_ALLCH);
}

void acl_init(void)
{
    nbits = cmd_count() + 1;
    nwords = (nbits + 63) / 64;
    cmd_keys_access_init();
    struct uver *v = uver_new();
    user_apply(v, "+@all", 5);
    user_apply(v, "~*", 2);
    user_apply(v, "&*", 2);
    user_apply(v, "on", 2);
    user_apply(v, "nopass", 6);
    default_user = user_insert("default", 7, v);
}

static void refresh_all_clients(struct acl_user *u);

void acl_set_requirepass(const char *pw, size_t len)
{
    pthread_rwlock_wrlock(&acl_lock);
    struct uver *v = uver_copy(default_user->v);
    user_apply(v, "resetpass", 9);
    if (pw && len) {
        char h[65];
        sha256_hex(pw, len, h);
        v->pw = hk_realloc(v->pw, sizeof(*v->pw));
        memcpy(v->pw[0], h, 65);
        v->npw = 1;
    } else {
        user_apply(v, "nopass", 6);
    }
    uver_free(default_user->v);
    default_user->v = v;
    pthread_rwlock_unlock(&acl_lock);
}

/* ---------------------------------------------------------- clients --- */
const char *acl_client_user(const struct client *c)
{
    return c->acl_user ? c->acl_user->name : "default";
}

int acl_skip_sanitize(const struct client *c)
{
    pthread_rwlock_rdlock(&acl_lock);
    const struct acl_user *u = c->acl_user ? c->acl_user : default_user;
    int r = (u->v->flags & U_SKIPSAN) != 0;
    pthread_rwlock_unlock(&acl_lock);
    return r;
}

int acl_user_exists(const char *name, size_t len)
{
    pthread_rwlock_rdlock(&acl_lock);
    int r = user_find(name, len) != NULL;
    pthread_rwlock_unlock(&acl_lock);
    return r;
}

int acl_default_nopass(void)
{
    pthread_rwlock_rdlock(&acl_lock);
    int r = (default_user->v->flags & U_NOPASS) != 0;
    pthread_rwlock_unlock(&acl_lock);
    return r;
}

/* Bind c to u (a reference the caller took), acl_lock held. */
static void bind_user(struct client *c, struct acl_user *u, struct acl_user **old)
{
    *old = c->acl_user;
    c->acl_user = u;
    c->acl_fast = (unsigned char)sel_fast(&u->v->sel[0]);
}

static void bind_default(struct client *c)
{
    struct acl_user *old;
    pthread_rwlock_rdlock(&acl_lock);
    atomic_fetch_add(&default_user->refs, 1);
    bind_user(c, default_user, &old);
    int yes = (default_user->v->flags & U_NOPASS) && !(default_user->v->flags & U_OFF);
    pthread_rwlock_unlock(&acl_lock);
    c->authenticated = yes;
    c->parser.authenticated = yes;
    user_unref(old);
}

void acl_client_reset(struct client *c)
{
    if (c->fd < 0)
        return;
    bind_default(c);
}

void acl_client_gone(struct client *c)
{
    struct acl_user *u = c->acl_user;
    c->acl_user = NULL;
    c->acl_fast = 0;
    user_unref(u);
}

/* ---------------------------------------------------------- ACL LOG --- */
struct log_entry {
    struct log_entry *next;
    long long count;
    int reason, ctx;
    char *object, *username, *cinfo;
    long long ctime, created, id;
};
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static struct log_entry *log_head;
static long long log_len, log_next_id;

static atomic_llong denied[6]; /* by reason (D_*) */

void acl_denied_counts(long long out[5])
{
    out[0] = atomic_load_explicit(&denied[D_AUTH], memory_order_relaxed);
    out[1] = atomic_load_explicit(&denied[D_CMD], memory_order_relaxed);
    out[2] = atomic_load_explicit(&denied[D_KEY], memory_order_relaxed);
    out[3] = atomic_load_explicit(&denied[D_CHAN], memory_order_relaxed);
    out[4] = atomic_load_explicit(&denied[D_TLS_CERT], memory_order_relaxed);
}

static void log_free(struct log_entry *e)
{
    hk_free(e->object);
    hk_free(e->username);
    hk_free(e->cinfo);
    hk_free(e);
}

static void acl_log_add(struct client *c, int reason, int ctx, const char *obj, size_t olen, const char *user,
                        size_t ulen)
{
    atomic_fetch_add_explicit(&denied[reason], 1, memory_order_relaxed);
    struct log_entry *n = hk_calloc(sizeof(*n));
    n->count = 1;
    n->reason = reason;
    n->ctx = ctx;
    n->object = dupn(obj, olen);
    n->username = dupn(user, ulen);
    n->cinfo = c ? client_info_string(c) : dupn("", 0);
    n->ctime = n->created = time_ms();
    pthread_mutex_lock(&log_mu);
    struct log_entry **pp = &log_head;
    for (int scan = 0; *pp && scan < 10; scan++, pp = &(*pp)->next) {
        struct log_entry *e = *pp;
        long long d = e->ctime - n->ctime;
        if (d < 0)
            d = -d;
        if (e->reason == reason && e->ctx == ctx && d <= 60000 && !strcmp(e->object, n->object) &&
            !strcmp(e->username, n->username)) {
            *pp = e->next;
            e->next = log_head;
            log_head = e;
            hk_free(e->cinfo);
            e->cinfo = n->cinfo;
            n->cinfo = NULL;
            e->ctime = n->ctime;
            e->count++;
            pthread_mutex_unlock(&log_mu);
            log_free(n);
            return;
        }
    }
    n->id = log_next_id++;
    n->next = log_head;
    log_head = n;
    log_len++;
    long long max = __atomic_load_n(&acl_log_max_len, __ATOMIC_RELAXED);
    struct log_entry *drop = NULL;
    if (log_len > max) {
        struct log_entry **q = &log_head;
        for (long long k = 0; *q && k < max; k++)
            q = &(*q)->next;
        drop = *q;
        *q = NULL;
        for (struct log_entry *e = drop; e; e = e->next)
            log_len--;
    }
    pthread_mutex_unlock(&log_mu);
    while (drop) {
        struct log_entry *nx = drop->next;
        log_free(drop);
        drop = nx;
    }
}

/* ------------------------------------------------------------ check --- */
/* What one command line touches, computed once for all selectors. */
struct cmdline {
    struct client *c; /* argv is the command line */
    const struct cmd *cmd;
    int keys_done, nk;
    int *idx;
    unsigned char *acc;
    int idx_st[16];
    unsigned char acc_st[16];
};

static void cl_keys(struct cmdline *cl)
{
    if (cl->keys_done)
        return;
    cl->keys_done = 1;
    int n = cl->c->argc;
    if (n > 16) {
        cl->idx = hk_malloc(sizeof(int) * (size_t)n);
        cl->acc = hk_malloc((size_t)n);
    } else {
        cl->idx = cl->idx_st;
        cl->acc = cl->acc_st;
    }
    cl->nk = cmd_keys_access(cl->cmd, cl->c, cl->idx, cl->acc);
}

static void cl_done(struct cmdline *cl)
{
    if (cl->keys_done && cl->idx != cl->idx_st) {
        hk_free(cl->idx);
        hk_free(cl->acc);
    }
}

static int key_ok(const struct sel *s, const char *k, size_t kl, int need)
{
    for (int i = 0; i < s->keys.n; i++) {
        const struct pat *p = &s->keys.v[i];
        if ((p->flags & need) != need)
            continue;
        if (glob_match(p->s, p->len, k, kl, 0))
            return 1;
    }
    return 0;
}

static int chan_ok(const struct sel *s, const char *ch, size_t cl, int is_pattern)
{
    if (s->flags & SEL_ALLCH)
        return 1;
    for (int i = 0; i < s->chans.n; i++) {
        const struct pat *p = &s->chans.v[i];
        if (is_pattern ? (p->len == cl && !memcmp(p->s, ch, cl)) : glob_match(p->s, p->len, ch, cl, 0))
            return 1;
    }
    return 0;
}

/* Channel arguments: first index, last (inclusive), whether patterns. */
static int cmd_channels(const struct cmd *cmd, int argc, int *first, int *last, int *pattern)
{
    *pattern = 0;
    if (cmd->fn == publish_command || cmd->fn == spublish_command) {
        *first = *last = 1;
        return 1;
    }
    if (cmd->fn == subscribe_command || cmd->fn == ssubscribe_command || cmd->fn == psubscribe_command) {
        *first = 1;
        *last = argc - 1;
        *pattern = cmd->fn == psubscribe_command;
        return 1;
    }
    return 0;
}

static int sel_check(const struct sel *s, struct cmdline *cl, int *pos)
{
    const struct cmd *cmd = cl->cmd;
    struct client *c = cl->c;
    if (!(s->flags & SEL_ALLCMDS) && !(cmd->flags & CMD_NO_AUTH) && !bit_get(s, cmd->id)) {
        int ok = 0;
        if (c->argc >= 2 && s->firstargs && s->firstargs[cmd->id]) {
            int ai = strchr(cmd->name, '|') ? 2 : 1;
            if (ai < c->argc)
                for (char **p = s->firstargs[cmd->id]; *p && !ok; p++)
                    ok = str_eq_nocase(c->argv[ai], c->argvlen[ai], *p);
        }
        if (!ok)
            return D_CMD;
    }
    if (!(s->flags & SEL_ALLKEYS)) {
        cl_keys(cl);
        for (int j = 0; j < cl->nk; j++) {
            int i = cl->idx[j];
            if (!key_ok(s, c->argv[i], c->argvlen[i], cl->acc[j])) {
                *pos = i;
                return D_KEY;
            }
        }
    }
    int first, last, pattern;
    if (!(s->flags & SEL_ALLCH) && cmd_channels(cmd, c->argc, &first, &last, &pattern)) {
        for (int i = first; i <= last && i < c->argc; i++)
            if (!chan_ok(s, c->argv[i], c->argvlen[i], pattern)) {
                *pos = i;
                return D_CHAN;
            }
    }
    return D_OK;
}

/* acl_lock held shared. */
static int user_check(const struct uver *v, struct cmdline *cl, int *pos)
{
    int relevant = D_CMD, last = 0;
    for (int i = 0; i < v->nsel; i++) {
        int p = 0, r = sel_check(&v->sel[i], cl, &p);
        if (r == D_OK)
            return D_OK;
        if (r > relevant || (r == relevant && p > last)) {
            relevant = r;
            last = p;
        }
    }
    *pos = last;
    return relevant;
}

static void noperm_text(char *buf, size_t cap, int r, const char *user, const struct cmd *cmd, const char *obj,
                        size_t olen, int verbose)
{
    if (r == D_CMD)
        snprintf(buf, cap, "User %s has no permissions to run the '%s' command", user, cmd->name);
    else if (r == D_KEY)
        verbose ? snprintf(buf, cap, "User %s has no permissions to access the '%.*s' key", user, (int)olen, obj)
                : snprintf(buf, cap, "No permissions to access a key");
    else
        verbose ? snprintf(buf, cap, "User %s has no permissions to access the '%.*s' channel", user, (int)olen, obj)
                : snprintf(buf, cap, "No permissions to access a channel");
}

/* user_check of line (its argv, for cmd) as user u, under the read lock;
 * *pos gets the denied argument. */
static int check_line(struct acl_user *u, struct client *line, const struct cmd *cmd, int *pos)
{
    struct cmdline cl;
    memset(&cl, 0, sizeof(cl));
    cl.c = line;
    cl.cmd = cmd;
    *pos = 0;
    pthread_rwlock_rdlock(&acl_lock);
    int r = user_check(u->v, &cl, pos);
    pthread_rwlock_unlock(&acl_lock);
    cl_done(&cl);
    return r;
}

/* Check c's current line (c->argv) for c's user.  On denial, log it and
 * fill msg (non-verbose). */
static int client_check(struct client *c, struct client *line, const struct cmd *cmd, int ctx, char *msg,
                        size_t cap)
{
    int pos, r;
    struct acl_user *u = c->acl_user;
    if (!u)
        return 0;
    r = check_line(u, line, cmd, &pos);
    if (r == D_OK)
        return 0;
    noperm_text(msg, cap, r, u->name, cmd, line->argv[pos], line->argvlen[pos], 0);
    if (r == D_CMD)
        acl_log_add(c, r, ctx, cmd->name, strlen(cmd->name), u->name, u->nlen);
    else
        acl_log_add(c, r, ctx, line->argv[pos], line->argvlen[pos], u->name, u->nlen);
    return r;
}

int acl_gate(struct client *c, const struct cmd *cmd)
{
    if (c->fd < 0) { /* internal clients (AOF replay, scripts) are never checked */
        c->acl_fast = 1;
        return 0;
    }
    if (!c->acl_user)
        bind_default(c);
    if (c->acl_fast || !c->authenticated)
        return 0;
    char msg[600];
    int ctx = c->ms && multi_in_progress(c) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL;
    if (!client_check(c, c, cmd, ctx, msg, sizeof(msg)))
        return 0;
    reply_errorf(&c->out, "NOPERM %s", msg);
    return -1;
}

int acl_check_exec(struct client *c, const struct cmd *cmd)
{
    char msg[600];
    int r = client_check(c, c, cmd, ACL_CTX_MULTI, msg, sizeof(msg));
    if (!r)
        return 0;
    const char *reason = r == D_CMD   ? "no permission to execute the command or subcommand"
                         : r == D_KEY ? "no permission to touch the specified keys"
                                      : "no permission to access one of the channels used as arguments";
    reply_errorf(&c->out,
                 "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
                 "This command is no longer allowed for the following reason: %s",
                 reason);
    return -1;
}

const char *acl_check_script(struct client *caller, struct client *fc, const struct cmd *cmd)
{
    static _Thread_local char err[700];
    char msg[600];
    if (!caller || caller->acl_fast || !caller->acl_user)
        return NULL;
    fc->cmd = cmd; /* as the key finders expect (redis_generic_call sets it next anyway) */
    if (!client_check(caller, fc, cmd, ACL_CTX_LUA, msg, sizeof(msg)))
        return NULL;
    snprintf(err, sizeof(err), "ACL failure in script: %s", msg);
    return err;
}

int acl_allows(struct client *caller, struct client *fc, const struct cmd *cmd)
{
    if (!caller || caller->acl_fast || !caller->acl_user)
        return 1;
    int pos;
    fc->cmd = cmd;
    return check_line(caller->acl_user, fc, cmd, &pos) == D_OK;
}

int acl_sort_patterns_allowed(struct client *c)
{
    struct acl_user *u = c->acl_user;
    if (c->acl_fast || !u)
        return 1;
    struct cmdline cl;
    memset(&cl, 0, sizeof(cl));
    cl.c = c;
    cl.cmd = c->cmd;
    int ok = 0;
    pthread_rwlock_rdlock(&acl_lock);
    for (int i = 0; i < u->v->nsel && !ok; i++) {
        const struct sel *s = &u->v->sel[i];
        int pos = 0;
        if (sel_check(s, &cl, &pos) != D_OK)
            continue;
        ok = (s->flags & SEL_ALLKEYS) != 0;
        for (int k = 0; k < s->keys.n && !ok; k++)
            ok = (s->keys.v[k].flags & P_R) && s->keys.v[k].len == 1 && s->keys.v[k].s[0] == '*';
    }
    pthread_rwlock_unlock(&acl_lock);
    cl_done(&cl);
    return ok;
}

struct acl_user *acl_user_ref(struct client *c)
{
    struct acl_user *u = c->acl_user;
    if (u)
        atomic_fetch_add(&u->refs, 1); /* c holds one: it cannot reach zero meanwhile */
    return u;
}

void acl_user_unref(struct acl_user *u)
{
    user_unref(u);
}

int acl_check_served(struct acl_user *u, struct client *fake, const struct cmd *cmd)
{
    int pos;
    int r = check_line(u, fake, cmd, &pos);
    if (r == D_OK)
        return 0;
    char msg[600];
    noperm_text(msg, sizeof(msg), r, u->name, cmd, fake->argv[pos], fake->argvlen[pos], 0);
    if (r == D_CMD)
        acl_log_add(NULL, r, ACL_CTX_TOPLEVEL, cmd->name, strlen(cmd->name), u->name, u->nlen);
    else
        acl_log_add(NULL, r, ACL_CTX_TOPLEVEL, fake->argv[pos], fake->argvlen[pos], u->name, u->nlen);
    reply_errorf(&fake->out, "NOPERM %s", msg);
    return -1;
}

/* ------------------------------------------------------------- AUTH --- */
static int ct_eq(const char *a, const char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* c becomes the user named name if it is on and, when h (the SHA-256 hex
 * of a password) is given, nopass or holding that password: 1; else 0 and
 * nothing changes. */
static int login(struct client *c, const char *name, size_t len, const char *h)
{
    struct acl_user *old = NULL;
    int ok = 0;
    pthread_rwlock_rdlock(&acl_lock);
    struct acl_user *u = user_find(name, len);
    if (u && !(u->v->flags & U_OFF)) {
        ok = !h || (u->v->flags & U_NOPASS);
        for (int i = 0; i < u->v->npw && !ok; i++)
            ok = ct_eq(u->v->pw[i], h, 64);
    }
    if (ok) {
        atomic_fetch_add(&u->refs, 1);
        bind_user(c, u, &old);
    }
    pthread_rwlock_unlock(&acl_lock);
    if (ok) {
        user_unref(old);
        c->authenticated = 1;
        c->parser.authenticated = 1;
    }
    return ok;
}

int acl_authenticate(struct client *c, const char *user, size_t ulen, const char *pass, size_t plen)
{
    char h[65];
    sha256_hex(pass, plen, h);
    if (login(c, user, ulen, h))
        return 0;
    acl_log_add(c, D_AUTH, c->ms && multi_in_progress(c) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, c->argv[0],
                c->argvlen[0], user, ulen);
    return -1;
}

/* tls-auth-clients-user CN (Redis 8.6): a TLS client whose verified
 * certificate's CN names an enabled user is that user from the handshake
 * on, with no password.  Any other name leaves it the default user (so a
 * password may still be asked for) and is a "tls-cert" denial: counted in
 * INFO acl_access_denied_tls_cert and written to the ACL LOG with the CN
 * as username. */
void acl_authenticate_cert(struct client *c, const char *name, size_t len)
{
    if (!login(c, name, len, NULL))
        acl_log_add(c, D_TLS_CERT, ACL_CTX_TOPLEVEL, "tls-cert", 8, name, len);
}

/* ------------------------------------------------- refresh and kill --- */
struct refresh_req {
    struct acl_user **u; /* NULL: every client */
    int nu;
    int kill;            /* 1: close the clients of these users (DELUSER) */
    const struct client *self;
};

struct sub_check {
    const struct uver *v;
    int bad;
};

static int sub_allowed(void *arg, int kind, const char *name, size_t len)
{
    struct sub_check *sc = arg;
    for (int i = 0; i < sc->v->nsel; i++)
        if (chan_ok(&sc->v->sel[i], name, len, kind == 1))
            return 0;
    sc->bad = 1;
    return 1; /* stop */
}

static void close_client(struct client *c, const struct client *self)
{
    if (c == self) {
        c->flags |= CF_CLOSE_AFTER_REPLY;
        return;
    }
    if (!(c->flags & CF_CLOSE_ASAP))
        client_close_asap(c);
}

static void refresh_job(struct worker *w, void *arg)
{
    struct refresh_req *r = arg;
    for (struct client *c = w->clients; c; c = c->next) {
        if (!c->acl_user)
            continue;
        int hit = r->u == NULL;
        for (int i = 0; i < r->nu && !hit; i++)
            hit = c->acl_user == r->u[i];
        if (!hit)
            continue;
        if (r->kill) {
            bind_default(c);
            c->authenticated = 0;
            c->parser.authenticated = 0;
            close_client(c, r->self);
            continue;
        }
        struct sub_check sc = {NULL, 0};
        pthread_rwlock_rdlock(&acl_lock);
        c->acl_fast = (unsigned char)sel_fast(&c->acl_user->v->sel[0]);
        if ((c->flags & CF_PUBSUB) && !c->acl_fast) {
            sc.v = c->acl_user->v;
            pubsub_client_each(c, sub_allowed, &sc);
        }
        pthread_rwlock_unlock(&acl_lock);
        if (sc.bad)
            close_client(c, NULL);
    }
}

static void refresh_all_clients(struct acl_user *u)
{
    struct refresh_req r = {NULL, 0, 0, NULL};
    struct acl_user *one[1] = {u};
    if (u) {
        r.u = one;
        r.nu = 1;
    }
    worker_broadcast(refresh_job, &r);
}

/* ------------------------------------------------------ ACL command --- */
static void describe_cmds(struct sbuf *b, const struct sel *s)
{
    sb_cat(b, bit_get(s, nbits - 1) ? "+@all" : "-@all");
    if (s->rules[0]) {
        sb_cat(b, " ");
        sb_cat(b, s->rules);
    }
}

static void describe_pat(struct sbuf *b, const struct pat *p)
{
    sb_cat(b, p->flags == (P_R | P_W) ? "~" : p->flags == P_R ? "%R~" : "%W~");
    sb_add(b, p->s, p->len);
}

static void describe_sel(struct sbuf *b, const struct sel *s)
{
    if (s->flags & SEL_ALLKEYS) {
        sb_cat(b, "~* ");
    } else {
        for (int i = 0; i < s->keys.n; i++) {
            describe_pat(b, &s->keys.v[i]);
            sb_cat(b, " ");
        }
    }
    if (s->flags & SEL_ALLCH) {
        sb_cat(b, "&* ");
    } else {
        sb_cat(b, "resetchannels ");
        for (int i = 0; i < s->chans.n; i++) {
            sb_cat(b, "&");
            sb_add(b, s->chans.v[i].s, s->chans.v[i].len);
            sb_cat(b, " ");
        }
    }
    describe_cmds(b, s);
}

static void describe_user(struct sbuf *b, const struct acl_user *u)
{
    static const char *const fl[] = {"on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"};
    static const unsigned fv[] = {U_ON, U_OFF, U_NOPASS, U_SKIPSAN, U_SAN};
    const struct uver *v = u->v;
    sb_cat(b, "user ");
    sb_add(b, u->name, u->nlen);
    sb_cat(b, " ");
    for (int i = 0; i < 5; i++)
        if (v->flags & fv[i]) {
            sb_cat(b, fl[i]);
            sb_cat(b, " ");
        }
    for (int i = 0; i < v->npw; i++) {
        sb_cat(b, "#");
        sb_add(b, v->pw[i], 64);
        sb_cat(b, " ");
    }
    describe_sel(b, &v->sel[0]);
    for (int i = 1; i < v->nsel; i++) {
        sb_cat(b, " (");
        describe_sel(b, &v->sel[i]);
        sb_cat(b, ")");
    }
}

static int reply_sel(struct reply *r, const struct sel *s)
{
    struct sbuf b;
    sb_init(&b);
    reply_bulk_cstr(r, "commands");
    describe_cmds(&b, s);
    reply_bulk(r, b.b, b.len);
    b.len = 0;
    reply_bulk_cstr(r, "keys");
    if (s->flags & SEL_ALLKEYS) {
        sb_cat(&b, "~*");
    } else {
        for (int i = 0; i < s->keys.n; i++) {
            if (i)
                sb_cat(&b, " ");
            describe_pat(&b, &s->keys.v[i]);
        }
    }
    reply_bulk(r, b.b, b.len);
    b.len = 0;
    reply_bulk_cstr(r, "channels");
    if (s->flags & SEL_ALLCH) {
        sb_cat(&b, "&*");
    } else {
        for (int i = 0; i < s->chans.n; i++) {
            if (i)
                sb_cat(&b, " ");
            sb_cat(&b, "&");
            sb_add(&b, s->chans.v[i].s, s->chans.v[i].len);
        }
    }
    reply_bulk(r, b.b, b.len);
    hk_free(b.b);
    return 3;
}

/* Merge "(a" "b)" arguments into one selector op; NULL with *bad set to
 * the opening argument's index when one is not closed. */
static char **merge_args(int argc, const char **argv, const size_t *lens, int *n, size_t **outlens, int *bad)
{
    char **out = hk_malloc(sizeof(char *) * (size_t)(argc ? argc : 1));
    size_t *ol = hk_malloc(sizeof(size_t) * (size_t)(argc ? argc : 1));
    struct sbuf cur;
    int open = -1;
    *n = 0;
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j];
        size_t l = lens[j];
        if (open == -1 && l && op[0] == '(' && op[l - 1] != ')') {
            sb_init(&cur);
            sb_add(&cur, op, l);
            open = j;
            continue;
        }
        if (open != -1) {
            sb_add(&cur, " ", 1);
            sb_add(&cur, op, l);
            if (l && op[l - 1] == ')') {
                open = -1;
                ol[*n] = cur.len;
                out[(*n)++] = cur.b;
            }
            continue;
        }
        ol[*n] = l;
        out[(*n)++] = dupn(op, l);
    }
    if (open != -1) {
        hk_free(cur.b);
        for (int i = 0; i < *n; i++)
            hk_free(out[i]);
        hk_free(out);
        hk_free(ol);
        *bad = open;
        return NULL;
    }
    *outlens = ol;
    return out;
}

/* Apply ops to a copy of u's version (or a new user's); the new version,
 * or NULL with the error written into err. */
static struct uver *build_version(const struct uver *base, int argc, const char **argv, const size_t *lens, char *err,
                                  size_t errlen)
{
    int n, bad = 0;
    size_t *ol = NULL;
    char **ops = merge_args(argc, argv, lens, &n, &ol, &bad);
    if (!ops) {
        snprintf(err, errlen, "Unmatched parenthesis in acl selector starting at '%.*s'.", (int)lens[bad], argv[bad]);
        return NULL;
    }
    struct uver *v = base ? uver_copy(base) : uver_new();
    for (int i = 0; i < n && v; i++) {
        int e = user_apply(v, ops[i], ol[i]);
        if (e) {
            snprintf(err, errlen, "Error in ACL SETUSER modifier '%s': %s", ops[i], apply_error(e));
            uver_free(v);
            v = NULL;
        }
    }
    for (int i = 0; i < n; i++)
        hk_free(ops[i]);
    hk_free(ops);
    hk_free(ol);
    return v;
}

static void acl_setuser(struct client *c)
{
    const char *name = c->argv[2];
    size_t nlen = c->argvlen[2];
    char err[1024];
    if (has_space(name, nlen)) {
        reply_error(&c->out, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    pthread_rwlock_wrlock(&acl_lock);
    struct acl_user *u = user_find(name, nlen);
    struct uver *v = build_version(u ? u->v : NULL, c->argc - 3, c->argv + 3, c->argvlen + 3, err, sizeof(err));
    if (!v) {
        pthread_rwlock_unlock(&acl_lock);
        reply_errorf(&c->out, "ERR %s", err);
        return;
    }
    if (u) {
        uver_free(u->v);
        u->v = v;
        atomic_fetch_add(&u->refs, 1);
    } else {
        user_insert(name, nlen, v);
    }
    pthread_rwlock_unlock(&acl_lock);
    if (u) {
        refresh_all_clients(u);
        user_unref(u);
    }
    reply_ok(&c->out);
}

static void acl_deluser(struct client *c)
{
    for (int j = 2; j < c->argc; j++)
        if (c->argvlen[j] == 7 && !memcmp(c->argv[j], "default", 7)) {
            reply_error(&c->out, "ERR The 'default' user cannot be removed");
            return;
        }
    struct acl_user **gone = hk_malloc(sizeof(*gone) * (size_t)c->argc);
    int ng = 0;
    pthread_rwlock_wrlock(&acl_lock);
    for (int j = 2; j < c->argc; j++) {
        int f, i = user_pos(c->argv[j], c->argvlen[j], &f);
        if (!f)
            continue;
        gone[ng++] = users[i];
        memmove(users + i, users + i + 1, sizeof(*users) * (size_t)(nusers - i - 1));
        nusers--;
    }
    pthread_rwlock_unlock(&acl_lock);
    if (ng) {
        struct refresh_req r = {gone, ng, 1, c};
        worker_broadcast(refresh_job, &r);
    }
    for (int i = 0; i < ng; i++)
        user_unref(gone[i]);
    hk_free(gone);
    reply_int(&c->out, ng);
}

static void acl_getuser(struct client *c)
{
    static const char *const fl[] = {"on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"};
    static const unsigned fv[] = {U_ON, U_OFF, U_NOPASS, U_SKIPSAN, U_SAN};
    pthread_rwlock_rdlock(&acl_lock);
    struct acl_user *u = user_find(c->argv[2], c->argvlen[2]);
    if (!u) {
        pthread_rwlock_unlock(&acl_lock);
        reply_null(&c->out);
        return;
    }
    const struct uver *v = u->v;
    reply_map(&c->out, 6);
    reply_bulk_cstr(&c->out, "flags");
    int nf = 0;
    for (int i = 0; i < 5; i++)
        nf += (v->flags & fv[i]) != 0;
    reply_set(&c->out, nf);
    for (int i = 0; i < 5; i++)
        if (v->flags & fv[i])
            reply_bulk_cstr(&c->out, fl[i]);
    reply_bulk_cstr(&c->out, "passwords");
    reply_array(&c->out, v->npw);
    for (int i = 0; i < v->npw; i++)
        reply_bulk(&c->out, v->pw[i], 64);
    reply_sel(&c->out, &v->sel[0]);
    reply_bulk_cstr(&c->out, "selectors");
    reply_array(&c->out, v->nsel - 1);
    for (int i = 1; i < v->nsel; i++) {
        reply_map(&c->out, 3);
        reply_sel(&c->out, &v->sel[i]);
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void acl_list(struct client *c, int names)
{
    pthread_rwlock_rdlock(&acl_lock);
    reply_array(&c->out, nusers);
    for (int i = 0; i < nusers; i++) {
        if (names) {
            reply_bulk(&c->out, users[i]->name, users[i]->nlen);
        } else {
            struct sbuf b;
            sb_init(&b);
            describe_user(&b, users[i]);
            reply_bulk(&c->out, b.b, b.len);
            hk_free(b.b);
        }
    }
    pthread_rwlock_unlock(&acl_lock);
}

static void acl_cat(struct client *c)
{
    if (c->argc == 2) {
        int n = 0;
        while (cat_names[n])
            n++;
        reply_array(&c->out, n);
        for (int i = 0; i < n; i++)
            reply_bulk_cstr(&c->out, cat_names[i]);
        return;
    }
    unsigned flag = category_flag(c->argv[2], c->argvlen[2]);
    if (!flag) {
        reply_errorf(&c->out, "ERR Unknown category '%.*s'", (int)(c->argvlen[2] > 128 ? 128 : c->argvlen[2]), c->argv[2]);
        return;
    }
    size_t mark = reply_defer(&c->out);
    long long n = 0;
    for (const struct cmd *t = cmd_table; t->name; t++) {
        if (t->acl & flag) {
            reply_bulk_cstr(&c->out, t->name);
            n++;
        }
        for (const struct cmd *s = t->subs; s && s->name; s++)
            if (s->acl & flag) {
                reply_bulk_cstr(&c->out, s->name);
                n++;
            }
    }
    reply_defer_array(&c->out, mark, n);
}

static void acl_genpass(struct client *c)
{
    long long bits = 256;
    if (c->argc == 3 && arg_ll(c, 2, &bits) < 0)
        return;
    if (bits <= 0 || bits > 4096) {
        reply_error(&c->out, "ERR ACL GENPASS argument must be the number of bits for the output password, a "
                             "positive number up to 4096");
        return;
    }
    static const char hx[] = "0123456789abcdef";
    char pass[1024];
    long long chars = (bits + 3) / 4;
    unsigned char rnd[512];
    FILE *f = fopen("/dev/urandom", "r");
    size_t got = f ? fread(rnd, 1, (size_t)(chars + 1) / 2, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = got; i < (size_t)(chars + 1) / 2; i++)
        rnd[i] = (unsigned char)rand64();
    for (long long i = 0; i < chars; i++)
        pass[i] = hx[(rnd[i / 2] >> ((i & 1) * 4)) & 15];
    reply_bulk(&c->out, pass, (size_t)chars);
}

static void acl_log_cmd(struct client *c)
{
    long long count = 10;
    if (c->argc == 3) {
        if (arg_is(c, 2, "reset")) {
            pthread_mutex_lock(&log_mu);
            struct log_entry *e = log_head;
            log_head = NULL;
            log_len = 0;
            pthread_mutex_unlock(&log_mu);
            while (e) {
                struct log_entry *n = e->next;
                log_free(e);
                e = n;
            }
            reply_ok(&c->out);
            return;
        }
        if (arg_ll(c, 2, &count) < 0)
            return;
        if (count < 0)
            count = 0;
    }
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel", "tls-cert"};
    static const char *const ctxs[] = {"toplevel", "lua", "multi"};
    long long now = time_ms();
    pthread_mutex_lock(&log_mu);
    if (count > log_len)
        count = log_len;
    reply_array(&c->out, count);
    struct log_entry *e = log_head;
    for (long long k = 0; k < count && e; k++, e = e->next) {
        reply_map(&c->out, 10);
        reply_bulk_cstr(&c->out, "count");
        reply_int(&c->out, e->count);
        reply_bulk_cstr(&c->out, "reason");
        reply_bulk_cstr(&c->out, reasons[e->reason]);
        reply_bulk_cstr(&c->out, "context");
        reply_bulk_cstr(&c->out, ctxs[e->ctx]);
        reply_bulk_cstr(&c->out, "object");
        reply_bulk_cstr(&c->out, e->object);
        reply_bulk_cstr(&c->out, "username");
        reply_bulk_cstr(&c->out, e->username);
        reply_bulk_cstr(&c->out, "age-seconds");
        reply_double(&c->out, (double)(now - e->ctime) / 1000);
        reply_bulk_cstr(&c->out, "client-info");
        reply_bulk_cstr(&c->out, e->cinfo);
        reply_bulk_cstr(&c->out, "entry-id");
        reply_int(&c->out, e->id);
        reply_bulk_cstr(&c->out, "timestamp-created");
        reply_int(&c->out, e->created);
        reply_bulk_cstr(&c->out, "timestamp-last-updated");
        reply_int(&c->out, e->ctime);
    }
    pthread_mutex_unlock(&log_mu);
}

static void acl_dryrun(struct client *c)
{
    pthread_rwlock_rdlock(&acl_lock);
    struct acl_user *u = user_find(c->argv[2], c->argvlen[2]);
    if (u)
        atomic_fetch_add(&u->refs, 1);
    pthread_rwlock_unlock(&acl_lock);
    if (!u) {
        reply_errorf(&c->out, "ERR User '%.*s' not found", (int)c->argvlen[2], c->argv[2]);
        return;
    }
    const struct cmd *cmd = cmd_lookup(c->argv[3], c->argvlen[3]);
    if (cmd && cmd->subs && c->argc > 4)
        cmd = cmd_lookup_sub(cmd, c->argv[4], c->argvlen[4]);
    if (!cmd) {
        reply_errorf(&c->out, "ERR Command '%.*s' not found", (int)c->argvlen[3], c->argv[3]);
        user_unref(u);
        return;
    }
    int n = c->argc - 3;
    if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) {
        reply_errorf(&c->out, "ERR wrong number of arguments for '%s' command", cmd->name);
        user_unref(u);
        return;
    }
    /* Present the command line as c's own for the key finders. */
    int sargc = c->argc;
    const char **sargv = c->argv;
    size_t *slen = c->argvlen;
    unsigned *skslot = c->kslot;
    c->argc = n;
    c->argv = sargv + 3;
    c->argvlen = slen + 3;
    c->kslot = skslot ? skslot + 3 : NULL;
    const struct cmd *scmd = c->cmd;
    c->cmd = cmd;
    int pos;
    int r = check_line(u, c, cmd, &pos);
    char msg[700];
    if (r != D_OK)
        noperm_text(msg, sizeof(msg), r, u->name, cmd, c->argv[pos], c->argvlen[pos], 1);
    c->argc = sargc;
    c->argv = sargv;
    c->argvlen = slen;
    c->kslot = skslot;
    c->cmd = scmd;
    user_unref(u);
    if (r == D_OK)
        reply_ok(&c->out);
    else
        reply_bulk_cstr(&c->out, msg);
}

static void acl_load_save(struct client *c, int load);

static void syntax_error(struct client *c)
{
    reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                 (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]), c->argv[1]);
}

void acl_command(struct client *c)
{
    const char *sub = c->cmd->name + 4;
    if (!strcmp(sub, "setuser")) {
        acl_setuser(c);
    } else if (!strcmp(sub, "deluser")) {
        acl_deluser(c);
    } else if (!strcmp(sub, "getuser")) {
        acl_getuser(c);
    } else if (!strcmp(sub, "list")) {
        acl_list(c, 0);
    } else if (!strcmp(sub, "users")) {
        acl_list(c, 1);
    } else if (!strcmp(sub, "whoami")) {
        const char *n = acl_client_user(c);
        reply_bulk(&c->out, n, strlen(n));
    } else if (!strcmp(sub, "cat")) {
        if (c->argc > 3) {
            syntax_error(c);
            return;
        }
        acl_cat(c);
    } else if (!strcmp(sub, "genpass")) {
        if (c->argc > 3) {
            syntax_error(c);
            return;
        }
        acl_genpass(c);
    } else if (!strcmp(sub, "log")) {
        if (c->argc > 3) {
            syntax_error(c);
            return;
        }
        acl_log_cmd(c);
    } else if (!strcmp(sub, "dryrun")) {
        acl_dryrun(c);
    } else if (!strcmp(sub, "load") || !strcmp(sub, "save")) {
        acl_load_save(c, sub[0] == 'l');
    } else if (!strcmp(sub, "help")) {
        static const char *const help[] = {
            "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
            "HELP",
            "    Print this help.",
        };
        size_t n = sizeof(help) / sizeof(help[0]);
        reply_array(&c->out, (long long)n);
        for (size_t i = 0; i < n; i++)
            reply_status(&c->out, help[i]);
    } else {
        reply_unknown_subcommand(c);
    }
}

/* ------------------------------------------- aclfile and user lines --- */
char *acl_filename;
static char ***pending; /* config-file "user" lines: name, then the merged ops, NULL-terminated */
static int npending;

static void free_strv(char **v)
{
    for (char **p = v; p && *p; p++)
        hk_free(*p);
    hk_free(v);
}

int acl_config_user(int argc, char **argv, char *err, size_t errlen)
{
    size_t nl = strlen(argv[1]);
    for (int i = 0; i < npending; i++)
        if (!strcmp(pending[i][0], argv[1])) {
            snprintf(err, errlen, "Error in user declaration '%s': %s", argv[1], apply_error(EALREADY));
            return -1;
        }
    size_t *lens = hk_malloc(sizeof(size_t) * (size_t)(argc + 1));
    for (int i = 2; i < argc; i++)
        lens[i] = strlen(argv[i]);
    int n, bad = 0;
    size_t *ol = NULL;
    char **ops = merge_args(argc - 2, (const char **)argv + 2, lens + 2, &n, &ol, &bad);
    hk_free(lens);
    if (!ops) {
        snprintf(err, errlen, "Error in user declaration '%s': %s", argv[bad], apply_error(0));
        return -1;
    }
    /* Validate on a scratch user (an unknown command is reported when the
     * users are loaded, as Redis does). */
    struct uver *v = uver_new();
    for (int i = 0; i < n; i++) {
        int e = user_apply(v, ops[i], ol[i]);
        if (e && e != ENOENT) {
            /* Redis names argv[i] (the i-th word of the line, not the
             * failing rule): kept for identical messages. */
            snprintf(err, errlen, "Error in user declaration '%s': %s", i < argc ? argv[i] : ops[i], apply_error(e));
            uver_free(v);
            for (int k = 0; k < n; k++)
                hk_free(ops[k]);
            hk_free(ops);
            hk_free(ol);
            return -1;
        }
    }
    uver_free(v);
    char **entry = hk_malloc(sizeof(char *) * (size_t)(n + 2));
    entry[0] = dupn(argv[1], nl);
    for (int i = 0; i < n; i++)
        entry[i + 1] = ops[i];
    entry[n + 1] = NULL;
    hk_free(ops);
    hk_free(ol);
    pending = hk_realloc(pending, sizeof(*pending) * (size_t)(npending + 1));
    pending[npending++] = entry;
    return 0;
}

/* A fresh default user as Redis creates it. */
static struct uver *default_version(void)
{
    struct uver *v = uver_new();
    user_apply(v, "+@all", 5);
    user_apply(v, "~*", 2);
    user_apply(v, "&*", 2);
    user_apply(v, "on", 2);
    user_apply(v, "nopass", 6);
    return v;
}

/* Parse the ACL file into a new registry (users[], n); NULL on success,
 * else the error text (heap) and nothing built. */
static char *load_file(const char *path, struct acl_user ***out, int *nout)
{
    struct sbuf errs;
    sb_init(&errs);
    FILE *f = fopen(path, "r");
    if (!f) {
        char m[1024];
        snprintf(m, sizeof(m), "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        sb_cat(&errs, m);
        return errs.b;
    }
    struct acl_user **nu = NULL;
    int nn = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int linenum = 0;
    char m[2048];
    while ((got = getline(&line, &cap, f)) >= 0) {
        linenum++;
        char *s = line, *e = line + got;
        while (s < e && strchr(" \t\r\n", *s))
            s++;
        while (e > s && strchr(" \t\r\n", e[-1]))
            e--;
        *e = 0;
        if (!*s)
            continue;
        /* Split on single spaces, as Redis does. */
        int argc = 0, acap = 8;
        const char **argv = hk_malloc(sizeof(char *) * (size_t)acap);
        size_t *lens = hk_malloc(sizeof(size_t) * (size_t)acap);
        for (char *p = s;;) {
            char *sp = strchr(p, ' ');
            size_t l = sp ? (size_t)(sp - p) : strlen(p);
            if (argc == acap) {
                acap *= 2;
                argv = hk_realloc(argv, sizeof(char *) * (size_t)acap);
                lens = hk_realloc(lens, sizeof(size_t) * (size_t)acap);
            }
            if (l) {
                argv[argc] = p;
                lens[argc++] = l;
            }
            if (!sp)
                break;
            *sp = 0;
            p = sp + 1;
        }
        if (argc == 0) {
            hk_free(argv);
            hk_free(lens);
            continue;
        }
        if (strcmp(argv[0], "user") || argc < 2) {
            snprintf(m, sizeof(m), "%s:%d should start with user keyword followed by the username. ", path, linenum);
            sb_cat(&errs, m);
        } else {
            int dup = 0;
            for (int i = 0; i < nn; i++)
                dup |= nu[i]->nlen == lens[1] && !memcmp(nu[i]->name, argv[1], lens[1]);
            if (dup) {
                snprintf(m, sizeof(m), "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum);
                sb_cat(&errs, m);
            } else {
                int n, bad = 0, syntax = 0;
                size_t *ol = NULL;
                struct uver *v = uver_new();
                char **ops = merge_args(argc - 2, argv + 2, lens + 2, &n, &ol, &bad);
                if (!ops) {
                    snprintf(m, sizeof(m), "%s:%d: Unmatched parenthesis in selector definition.", path, linenum);
                    sb_cat(&errs, m);
                    n = 0;
                }
                for (int j = 0; j < n; j++) {
                    int er = user_apply(v, ops[j], ol[j]);
                    if (er == ENOENT) {
                        snprintf(m, sizeof(m), "%s:%d: Error in applying operation '%s': %s. ", path, linenum, ops[j],
                                 apply_error(er));
                        sb_cat(&errs, m);
                    } else if (er && !syntax) {
                        snprintf(m, sizeof(m), "%s:%d: %s. ", path, linenum, apply_error(er));
                        sb_cat(&errs, m);
                        syntax = 1;
                    }
                }
                for (int j = 0; j < n; j++)
                    hk_free(ops[j]);
                hk_free(ops);
                hk_free(ol);
                struct acl_user *u = hk_calloc(sizeof(*u));
                u->name = dupn(argv[1], lens[1]);
                u->nlen = lens[1];
                u->v = v;
                atomic_init(&u->refs, 1);
                nu = hk_realloc(nu, sizeof(*nu) * (size_t)(nn + 1));
                nu[nn++] = u;
            }
        }
        hk_free(argv);
        hk_free(lens);
    }
    free(line);
    fclose(f);
    if (errs.len) {
        for (int i = 0; i < nn; i++)
            user_unref(nu[i]);
        hk_free(nu);
        sb_cat(&errs, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        return errs.b;
    }
    hk_free(errs.b);
    *out = nu;
    *nout = nn;
    return NULL;
}

static int cmp_user(const void *a, const void *b)
{
    const struct acl_user *x = *(struct acl_user *const *)a, *y = *(struct acl_user *const *)b;
    size_t m = x->nlen < y->nlen ? x->nlen : y->nlen;
    int c = memcmp(x->name, y->name, m);
    return c ? c : (x->nlen > y->nlen) - (x->nlen < y->nlen);
}

/* Replace every user with those of the file (all or nothing).  Returns
 * NULL, or the error text (heap).  With kill set, the clients of every
 * replaced user except the default one are closed (self after its reply). */
static char *load_and_swap(const char *path, int kill, const struct client *self)
{
    struct acl_user **nu = NULL;
    int nn = 0;
    char *errs = load_file(path, &nu, &nn);
    if (errs)
        return errs;
    struct uver *dv = NULL;
    int keep = 0;
    for (int i = 0; i < nn; i++) {
        if (nu[i]->nlen == 7 && !memcmp(nu[i]->name, "default", 7)) {
            dv = nu[i]->v;
            nu[i]->v = NULL;
            user_unref(nu[i]);
        } else {
            nu[keep++] = nu[i];
        }
    }
    nn = keep;
    if (!dv)
        dv = default_version();
    pthread_rwlock_wrlock(&acl_lock);
    struct acl_user **old = users;
    int nold = nusers;
    users = hk_malloc(sizeof(*users) * (size_t)(nn + 1));
    memcpy(users, nu, sizeof(*users) * (size_t)nn);
    users[nn] = default_user;
    nusers = capusers = nn + 1;
    qsort(users, (size_t)nusers, sizeof(*users), cmp_user);
    uver_free(default_user->v);
    default_user->v = dv;
    pthread_rwlock_unlock(&acl_lock);
    hk_free(nu);
    /* old[] minus the default user: retired now */
    int ng = 0;
    for (int i = 0; i < nold; i++)
        if (old[i] != default_user)
            old[ng++] = old[i];
    if (kill) {
        if (ng) {
            struct refresh_req r = {old, ng, 1, self};
            worker_broadcast(refresh_job, &r);
        }
        refresh_all_clients(default_user);
    }
    for (int i = 0; i < ng; i++)
        user_unref(old[i]);
    hk_free(old);
    return NULL;
}

int acl_load_at_startup(void)
{
    int has_file = acl_filename && acl_filename[0];
    if (has_file && npending) {
        log_msg(LL_WARNING, "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
                            "path is invalid. This setup is very likely to lead to configuration errors and security "
                            "holes, please define either an ACL file or declare users directly in your redis.conf, "
                            "but not both.");
        return -1;
    }
    for (int i = 0; i < npending; i++) {
        char **e = pending[i];
        pthread_rwlock_wrlock(&acl_lock);
        struct acl_user *u = user_find(e[0], strlen(e[0]));
        struct uver *v = u ? uver_copy(u->v) : uver_new();
        if (u)
            user_apply(v, "reset", 5);
        int bad = 0;
        for (int j = 1; e[j] && !bad; j++) {
            int er = user_apply(v, e[j], strlen(e[j]));
            if (er) {
                log_msg(LL_WARNING, "Error loading ACL rule '%s' for the user named '%s': %s", e[j], e[0],
                        apply_error(er));
                bad = 1;
            }
        }
        if (bad) {
            pthread_rwlock_unlock(&acl_lock);
            uver_free(v);
            log_msg(LL_WARNING, "Critical error while loading ACLs. Exiting.");
            return -1;
        }
        if (u) {
            uver_free(u->v);
            u->v = v;
        } else {
            user_insert(e[0], strlen(e[0]), v);
        }
        if (v->flags & U_OFF)
            log_msg(LL_NOTICE, "The user '%s' is disabled (there is no 'on' modifier in the user description). "
                               "Make sure this is not a configuration error.", e[0]);
        pthread_rwlock_unlock(&acl_lock);
        free_strv(e);
    }
    hk_free(pending);
    pending = NULL;
    npending = 0;
    if (has_file) {
        char *errs = load_and_swap(acl_filename, 0, NULL);
        if (errs) {
            log_msg(LL_WARNING, "Aborting Redis startup because of ACL errors: %s", errs);
            hk_free(errs);
            return -1;
        }
    }
    return 0;
}

/* Every user as a "user ..." line (CONFIG REWRITE, ACL SAVE). */
int acl_user_lines(char ***out)
{
    pthread_rwlock_rdlock(&acl_lock);
    char **l = hk_malloc(sizeof(char *) * (size_t)(nusers ? nusers : 1));
    int n = nusers;
    for (int i = 0; i < nusers; i++) {
        struct sbuf b;
        sb_init(&b);
        describe_user(&b, users[i]);
        l[i] = b.b;
    }
    pthread_rwlock_unlock(&acl_lock);
    *out = l;
    return n;
}

static int save_file(const char *path)
{
    char **l;
    int n = acl_user_lines(&l);
    struct sbuf b;
    sb_init(&b);
    for (int i = 0; i < n; i++) {
        sb_cat(&b, l[i]);
        sb_cat(&b, "\n");
        hk_free(l[i]);
    }
    hk_free(l);
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d-%lld", path, (int)getpid(), time_ms());
    int rc = -1, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(fd, b.b + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_msg(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
            goto out;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        log_msg(LL_WARNING, "Syncing ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    close(fd);
    fd = -1;
    if (rename(tmp, path) < 0) {
        log_msg(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    {
        /* the directory entry too */
        char dir[4200];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = 0;
        else
            snprintf(dir, sizeof(dir), ".");
        int dfd = open(dir, O_RDONLY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        unlink(tmp);
    hk_free(b.b);
    return rc;
}

static void acl_load_save(struct client *c, int load)
{
    const char *path = acl_filename;
    if (!path || !path[0]) {
        reply_error(&c->out, "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
                             "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
                             "Redis configuration file set) in order to store users in the Redis configuration.");
        return;
    }
    if (!load) {
        if (save_file(path) == 0)
            reply_ok(&c->out);
        else
            reply_error(&c->out, "ERR There was an error trying to save the ACLs. Please check the server logs for "
                                 "more information");
        return;
    }
    char *errs = load_and_swap(path, 1, c);
    if (!errs) {
        reply_ok(&c->out);
        return;
    }
    reply_errorf(&c->out, "ERR %s", errs);
    hk_free(errs);
}
