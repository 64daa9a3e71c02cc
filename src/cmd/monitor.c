/* monitor.c - MONITOR (monitor.h has the rules). */
#include "monitor.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "../base/mem.h"
#include "commands.h"
#include "migrate.h"
#include "multi.h"

/* One per client in monitor mode.  `c` is NULL once the client left
 * (closed or RESET) while a drain job was pending: the job frees it. */
struct monitor {
    struct client *c;
    struct worker *w;
    struct monitor *prev, *next;
    char *buf; /* pending lines, not yet handed to the client */
    size_t len, cap;
    int job_pending;
};

atomic_int monitor_count;
static pthread_mutex_t monitor_mu = PTHREAD_MUTEX_INITIALIZER;
static struct monitor *monitors; /* under monitor_mu */

/* A pending buffer above this is dropped with the monitor's connection:
 * its worker has not drained it (it is stuck), and the output-buffer
 * limit could not see it yet. */
#define MONITOR_PENDING_MAX (256ull << 20)

struct line {
    char *p;
    size_t len, cap;
};

static void line_add(struct line *l, const char *s, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap : 256;
        while (cap < l->len + n)
            cap *= 2;
        l->p = hk_realloc(l->p, cap);
        l->cap = cap;
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

/* One argument, quoted as Redis's sdscatrepr quotes it. */
static void line_repr(struct line *l, const char *s, size_t n)
{
    line_add(l, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[5];
        switch (ch) {
        case '\\': line_add(l, "\\\\", 2); break;
        case '"': line_add(l, "\\\"", 2); break;
        case '\n': line_add(l, "\\n", 2); break;
        case '\r': line_add(l, "\\r", 2); break;
        case '\t': line_add(l, "\\t", 2); break;
        case '\a': line_add(l, "\\a", 2); break;
        case '\b': line_add(l, "\\b", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) {
                line_add(l, (const char *)&ch, 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", ch);
                line_add(l, esc, 4);
            }
        }
    }
    line_add(l, "\"", 1);
}

/* Which arguments hide credentials: AUTH's all, HELLO's two after AUTH. */
static int redacted(const struct client *c, const struct cmd *cmd, int i)
{
    if (cmd->fn == auth_command)
        return i >= 1;
    if (cmd->fn == migrate_command) /* AUTH / AUTH2 credentials */
        return migrate_arg_redacted(c->argc, (const char *const *)c->argv, c->argvlen, i);
    if (cmd->fn == hello_command) {
        /* HELLO [protover [AUTH user pass] [SETNAME name]]: walk the options
         * as HELLO parses them, so a name that reads "auth" is not one. */
        for (int j = 2; j < c->argc;) {
            if (c->argvlen[j] == 4 && !strncasecmp(c->argv[j], "auth", 4) && j + 2 < c->argc) {
                if (i == j + 1 || i == j + 2)
                    return 1;
                j += 3;
            } else if (c->argvlen[j] == 7 && !strncasecmp(c->argv[j], "setname", 7) && j + 1 < c->argc) {
                j += 2;
            } else {
                break;
            }
        }
    }
    return 0;
}

static void drain_job(struct worker *w, void *arg)
{
    (void)w;
    struct monitor *m = arg;
    pthread_mutex_lock(&monitor_mu);
    char *buf = m->buf;
    size_t len = m->len;
    struct client *c = m->c;
    m->buf = NULL;
    m->len = m->cap = 0;
    m->job_pending = 0;
    if (!c) {
        pthread_mutex_unlock(&monitor_mu);
        hk_free(buf);
        hk_free(m);
        return;
    }
    pthread_mutex_unlock(&monitor_mu);
    if (len) {
        reply_raw(client_push_target(c), buf, len);
        client_push_ready(c); /* applies the output-buffer limits */
    }
    hk_free(buf);
}

void monitor_feed_slow(struct client *c, const struct cmd *cmd, int script_start)
{
    /* Not shown: admin and skip_monitor commands (but a script's start),
     * the AOF's replay. */
    if (db_loading || (cmd->flags & CMD_ADMIN) || (!script_start && (cmd->flags & CMD_SKIP_MONITOR)))
        return;
    if (c->fd < 0 && !(c->flags & CF_SCRIPT))
        return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    char head[160];
    int n;
    if (c->flags & CF_SCRIPT) {
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d lua] ", (long)tv.tv_sec, (long)tv.tv_usec, c->db);
    } else if (c->flags & CF_UNIX) {
        /* "unix:<socket path>" (c->addr is "<path>:0") */
        size_t al = strlen(c->addr);
        int pl = (int)(al >= 2 && !strcmp(c->addr + al - 2, ":0") ? al - 2 : al);
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d unix:%.*s] ", (long)tv.tv_sec, (long)tv.tv_usec, c->db, pl,
                     c->addr);
    } else
        n = snprintf(head, sizeof(head), "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec, c->db, c->addr);
    struct line l = {0};
    line_add(&l, head, (size_t)n);
    for (int i = 0; i < c->argc; i++) {
        if (i)
            line_add(&l, " ", 1);
        if (redacted(c, cmd, i))
            line_repr(&l, "(redacted)", 10);
        else
            line_repr(&l, c->argv[i], c->argvlen[i]);
    }
    line_add(&l, "\r\n", 2);
    pthread_mutex_lock(&monitor_mu);
    for (struct monitor *m = monitors; m; m = m->next) {
        if (!m->c || m->len + l.len > MONITOR_PENDING_MAX)
            continue;
        if (m->len + l.len > m->cap) {
            size_t cap = m->cap ? m->cap : 4096;
            while (cap < m->len + l.len)
                cap *= 2;
            m->buf = hk_realloc(m->buf, cap);
            m->cap = cap;
        }
        memcpy(m->buf + m->len, l.p, l.len);
        m->len += l.len;
        if (!m->job_pending) {
            m->job_pending = 1;
            worker_post(m->w, drain_job, m);
        }
    }
    pthread_mutex_unlock(&monitor_mu);
    hk_free(l.p);
}

void monitor_command(struct client *c)
{
    if (c->flags & CF_DENY_BLOCKING) {
        reply_error(&c->out, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->mon)
        return; /* already monitoring: no reply, as Redis */
    struct monitor *m = hk_calloc(sizeof(*m));
    m->c = c;
    m->w = c->w;
    c->mon = m;
    c->flags |= CF_MONITOR;
    pthread_mutex_lock(&monitor_mu);
    m->next = monitors;
    if (monitors)
        monitors->prev = m;
    monitors = m;
    atomic_fetch_add(&monitor_count, 1);
    pthread_mutex_unlock(&monitor_mu);
    reply_ok(&c->out);
}

void monitor_client_gone(struct client *c)
{
    struct monitor *m = c->mon;
    if (!m)
        return;
    c->mon = NULL;
    c->flags &= ~CF_MONITOR;
    pthread_mutex_lock(&monitor_mu);
    if (m->prev)
        m->prev->next = m->next;
    else
        monitors = m->next;
    if (m->next)
        m->next->prev = m->prev;
    atomic_fetch_sub(&monitor_count, 1);
    m->c = NULL;
    int pending = m->job_pending;
    pthread_mutex_unlock(&monitor_mu);
    if (!pending) {
        hk_free(m->buf);
        hk_free(m);
    }
}
