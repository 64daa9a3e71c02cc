/* slowlog.c - SLOWLOG GET / LEN / RESET / HELP and the server-wide slow log.
 *
 * Owner and lock: the log (a list, newest first) and the entry id counter
 * belong to no thread; `sl_lock` guards both.  The dispatcher reaches
 * slowlog_push() only for a command at least slowlog-log-slower-than long
 * (slowlog.h: one compare otherwise); an entry is built outside the lock,
 * linked and the list trimmed to slowlog-max-len under it, and what the
 * trim dropped is freed after it is released. */
#include "slowlog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "commands.h"
#include "migrate.h"

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_STRING 128

struct sl_entry {
    struct sl_entry *next, *prev;
    long long id, time;
    unsigned long long duration;
    int argc;
    char **argv;
    size_t *lens;
    char *peer, *cname;
};

static pthread_mutex_t sl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sl_entry *sl_head, *sl_tail;
static long long sl_len, sl_next_id;

/* ------------------------------------------------------- redaction --- */
int cmd_arg_redacted(const struct cmd *cmd, int argc, const char *const *argv, const size_t *lens, int i)
{
    if (i <= 0 || i >= argc)
        return 0;
    if (cmd->fn == auth_command) /* AUTH [user] pass: refused (not redacted) with more */
        return argc <= 3;
    if (cmd->fn == hello_command) {
        /* HELLO [protover [AUTH user pass] [SETNAME name]]: Redis's scan. */
        for (int j = 2; j < argc; j++) {
            int more = argc - 1 - j;
            if (str_eq_nocase(argv[j], lens[j], "auth") && more >= 2) {
                if (i == j + 1 || i == j + 2)
                    return 1;
                j += 2;
            } else if (str_eq_nocase(argv[j], lens[j], "setname") && more) {
                j++;
            } else {
                break;
            }
        }
        return 0;
    }
    if (strcmp(cmd->name, "config|set") == 0) {
        /* CONFIG SET name value ...: the values of sensitive parameters. */
        if (i < 3 || (i - 3) % 2)
            return 0;
        return str_eq_nocase(argv[i - 1], lens[i - 1], "requirepass") ||
               str_eq_nocase(argv[i - 1], lens[i - 1], "masterauth") ||
               str_eq_nocase(argv[i - 1], lens[i - 1], "tls-key-file-pass") ||
               str_eq_nocase(argv[i - 1], lens[i - 1], "tls-client-key-file-pass");
    }
    /* ACL SETUSER name rules...: every argument after SETUSER (passwords
     * and their hashes among them), as Redis. */
    if (strcmp(cmd->name, "acl|setuser") == 0)
        return i >= 2;
    if (cmd->fn == migrate_command) /* AUTH / AUTH2 credentials */
        return migrate_arg_redacted(argc, argv, lens, i);
    return 0;
}

/* ----------------------------------------------------------- entries --- */
static char *dup_n(const char *s, size_t n)
{
    char *p = hk_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static void sl_entry_free(struct sl_entry *e)
{
    for (int i = 0; i < e->argc; i++)
        hk_free(e->argv[i]);
    hk_free(e->argv);
    hk_free(e->lens);
    hk_free(e->peer);
    hk_free(e->cname);
    hk_free(e);
}

static void free_list(struct sl_entry *e)
{
    while (e) {
        struct sl_entry *n = e->next;
        sl_entry_free(e);
        e = n;
    }
}

void slowlog_push(struct client *c, const struct cmd *cmd, unsigned long long dur)
{
    slowlog_push_args(c, cmd, c->argc, c->argv, c->argvlen, dur);
}

void slowlog_push_args(struct client *c, const struct cmd *cmd, int argc, const char *const *argv, const size_t *lens,
                       unsigned long long dur)
{
    int slargc = argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : argc;
    struct sl_entry *e, *drop = NULL;
    long long max;

    /* AOF loading (the replayer's worker has id -1) feeds no statistics. */
    if ((cmd->flags & CMD_SKIP_SLOWLOG) || (c->w && c->w->id < 0))
        return;
    /* Blocked: logged once served (cmd/blocking.c's deliver). */
    if (argv == c->argv && (c->flags & CF_BLOCKED))
        return;
    e = hk_calloc(sizeof(*e));
    e->argc = slargc;
    e->argv = hk_malloc(sizeof(char *) * (size_t)(slargc ? slargc : 1));
    e->lens = hk_malloc(sizeof(size_t) * (size_t)(slargc ? slargc : 1));
    for (int j = 0; j < slargc; j++) {
        char tmp[64];
        if (slargc != argc && j == slargc - 1) {
            /* The last slot says how many were left out. */
            int n = snprintf(tmp, sizeof(tmp), "... (%d more arguments)", argc - slargc + 1);
            e->argv[j] = dup_n(tmp, (size_t)n);
            e->lens[j] = (size_t)n;
        } else if (cmd_arg_redacted(cmd, argc, argv, lens, j)) {
            e->argv[j] = dup_n("(redacted)", 10);
            e->lens[j] = 10;
        } else if (lens[j] > SLOWLOG_MAX_STRING) {
            int n = snprintf(tmp, sizeof(tmp), "... (%zu more bytes)", lens[j] - SLOWLOG_MAX_STRING);
            char *p = hk_malloc(SLOWLOG_MAX_STRING + (size_t)n + 1);
            memcpy(p, argv[j], SLOWLOG_MAX_STRING);
            memcpy(p + SLOWLOG_MAX_STRING, tmp, (size_t)n + 1);
            e->argv[j] = p;
            e->lens[j] = SLOWLOG_MAX_STRING + (size_t)n;
        } else {
            e->argv[j] = dup_n(argv[j], lens[j]);
            e->lens[j] = lens[j];
        }
    }
    e->time = (long long)time(NULL);
    e->duration = dur;
    e->peer = hk_strdup(c->addr);
    e->cname = hk_strdup(c->name ? c->name : "");

    max = __atomic_load_n(&cfg.slowlog_max_len, __ATOMIC_RELAXED);
    pthread_mutex_lock(&sl_lock);
    e->id = sl_next_id++;
    e->next = sl_head;
    if (sl_head)
        sl_head->prev = e;
    sl_head = e;
    if (!sl_tail)
        sl_tail = e;
    sl_len++;
    /* Trim from the oldest end; unlinked here, freed after the unlock. */
    while (sl_len > max && sl_tail) {
        struct sl_entry *t = sl_tail;
        sl_tail = t->prev;
        if (sl_tail)
            sl_tail->next = NULL;
        else
            sl_head = NULL;
        t->prev = NULL;
        t->next = drop;
        drop = t;
        sl_len--;
    }
    pthread_mutex_unlock(&sl_lock);
    free_list(drop);
}

/* ----------------------------------------------------------- SLOWLOG --- */
void slowlog_command(struct client *c)
{
    if (arg_is(c, 1, "help")) {
        static const char *const help[] = {
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return the <count> newest entries of the slow log (default 10, -1 for all).",
            "    Each entry: id, unix time, duration in microseconds, arguments, client",
            "    address and port, client name.",
            "LEN",
            "    Return the number of entries in the slow log.",
            "RESET",
            "    Empty the slow log.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(help) / sizeof(help[0])));
        for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
            reply_status(&c->out, help[i]);
        return;
    }
    if (arg_is(c, 1, "reset")) {
        struct sl_entry *old;
        pthread_mutex_lock(&sl_lock);
        old = sl_head;
        sl_head = sl_tail = NULL;
        sl_len = 0;
        pthread_mutex_unlock(&sl_lock);
        free_list(old);
        reply_ok(&c->out);
        return;
    }
    if (arg_is(c, 1, "len")) {
        long long n;
        pthread_mutex_lock(&sl_lock);
        n = sl_len;
        pthread_mutex_unlock(&sl_lock);
        reply_int(&c->out, n);
        return;
    }
    /* GET [count] (the table routes only get here; arity -2). */
    if (c->argc > 3) {
        reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.",
                     (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]), c->argv[1]);
        return;
    }
    long long count = 10;
    if (c->argc == 3 && (!str_to_ll(c->argv[2], c->argvlen[2], &count) || count < -1)) {
        reply_error(&c->out, "ERR count should be greater than or equal to -1");
        return;
    }
    pthread_mutex_lock(&sl_lock);
    if (count == -1 || count > sl_len)
        count = sl_len;
    reply_array(&c->out, count);
    for (struct sl_entry *e = sl_head; e && count > 0; e = e->next, count--) {
        reply_array(&c->out, 6);
        reply_int(&c->out, e->id);
        reply_int(&c->out, e->time);
        reply_int(&c->out, (long long)e->duration);
        reply_array(&c->out, e->argc);
        for (int j = 0; j < e->argc; j++)
            reply_bulk(&c->out, e->argv[j], e->lens[j]);
        reply_bulk_cstr(&c->out, e->peer);
        reply_bulk_cstr(&c->out, e->cname);
    }
    pthread_mutex_unlock(&sl_lock);
}
