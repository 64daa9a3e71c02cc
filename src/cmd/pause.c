/* pause.c - CLIENT PAUSE / UNPAUSE (pause.h has the rules). */
#include "pause.h"

#include <limits.h>
#include <pthread.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "multi.h"

atomic_uint pause_actions;
static _Atomic long long pause_end_ms; /* unix ms; meaningful while pause_actions != 0 */
static pthread_mutex_t pause_mu = PTHREAD_MUTEX_INITIALIZER;
/* Three sources, merged into pause_actions / pause_end_ms (under
 * pause_mu): CLIENT PAUSE (a mode and an end), and a FAILOVER or a
 * shutdown waiting for its replicas (writes, until it ends: no end time;
 * one bit each in purpose_writes). */
static unsigned client_mode;
static long long client_end;
enum { FOR_FAILOVER = 1u, FOR_SHUTDOWN = 2u };
static unsigned purpose_writes;
static atomic_llong npostponed;

/* Per worker (index w->id): its postponed clients, oldest first, linked
 * through c->pp_prev / c->pp_next.  Owner thread only. */
struct pp_list {
    struct client *head, *tail;
};
static struct pp_list *pp;
static int npp;

void pause_init_workers(int n)
{
    pp = hk_calloc(sizeof(*pp) * (size_t)(n > 0 ? n : 1));
    npp = n;
}

long long pause_postponed_clients(void)
{
    return atomic_load_explicit(&npostponed, memory_order_relaxed);
}

static struct pp_list *list_of(const struct worker *w)
{
    return w && w->id >= 0 && w->id < npp ? &pp[w->id] : NULL;
}

static void pp_unlink(struct pp_list *l, struct client *c)
{
    if (c->pp_prev)
        c->pp_prev->pp_next = c->pp_next;
    else
        l->head = c->pp_next;
    if (c->pp_next)
        c->pp_next->pp_prev = c->pp_prev;
    else
        l->tail = c->pp_prev;
    c->pp_prev = c->pp_next = NULL;
    c->flags &= ~CF_POSTPONED;
    atomic_fetch_sub_explicit(&npostponed, 1, memory_order_relaxed);
}

/* Run this worker's postponed clients again, oldest first: the worker's
 * resume list is a stack, so push them newest first. */
static void resume_own(struct worker *w)
{
    struct pp_list *l = list_of(w);
    if (!l)
        return;
    struct client *c = l->tail;
    while (c) {
        struct client *prev = c->pp_prev;
        pp_unlink(l, c);
        client_unblocked(c);
        c = prev;
    }
}

static void resume_job(struct worker *w, void *arg)
{
    (void)arg;
    resume_own(w);
}

/* Every worker looks at its postponed clients again (they are postponed
 * anew if still paused).  Asynchronous: no worker waits for another. */
static void resume_everywhere(void)
{
    for (int i = 0; i < nworkers; i++)
        worker_post(&workers[i], resume_job, NULL);
}

/* Under pause_mu: publish a new state. */
static void set_state(unsigned actions, long long end)
{
    unsigned before = atomic_load(&pause_actions);
    atomic_store(&pause_end_ms, end);
    atomic_store(&pause_actions, actions);
    /* Expiry and eviction stop with any client pause (Redis 7's
     * PAUSE_ACTION_EXPIRE / _EVICT come with both modes). */
    if (actions)
        atomic_fetch_or(&db_expire_paused, DB_EXPIRE_PAUSED_PAUSE);
    else
        atomic_fetch_and(&db_expire_paused, ~DB_EXPIRE_PAUSED_PAUSE);
    /* Less restrictive than before: let the postponed try again. */
    if (actions < before)
        resume_everywhere();
}

/* Under pause_mu: the merged state of the sources. */
static void publish(void)
{
    unsigned a = client_mode | (purpose_writes ? PAUSE_CLIENT_WRITE : 0);
    long long end = client_mode ? client_end : purpose_writes ? LLONG_MAX : 0;
    set_state(a, end);
}

/* The end time passed: the client pause is over (a failover's stays). */
static void expire_if_over(long long now)
{
    if (!atomic_load_explicit(&pause_actions, memory_order_relaxed) ||
        now < atomic_load_explicit(&pause_end_ms, memory_order_relaxed))
        return;
    pthread_mutex_lock(&pause_mu);
    if (client_mode && now >= client_end) {
        client_mode = 0;
        client_end = 0;
        publish();
    }
    pthread_mutex_unlock(&pause_mu);
}

static void purpose(unsigned bit, int on)
{
    pthread_mutex_lock(&pause_mu);
    if (on)
        purpose_writes |= bit;
    else
        purpose_writes &= ~bit;
    publish();
    pthread_mutex_unlock(&pause_mu);
}

void pause_failover_writes(int on)
{
    purpose(FOR_FAILOVER, on);
}

void pause_shutdown_writes(int on)
{
    purpose(FOR_SHUTDOWN, on);
}

static int paused_for(struct client *c, const struct cmd *cmd, unsigned a)
{
    if (a & PAUSE_CLIENT_ALL)
        return 1;
    if (!(a & PAUSE_CLIENT_WRITE))
        return 0;
    /* Whatever may write or feed replicas: a script's declared flags
     * count (an EVAL with no-writes runs), and an EXEC by its queue. */
    if (cmd_flags_of(c, cmd) & (CMD_WRITE | CMD_MAY_REPLICATE))
        return 1;
    if (cmd->fn == exec_command && c->ms && multi_in_progress(c) &&
        (multi_queued_flags(c) & (CMD_WRITE | CMD_MAY_REPLICATE)))
        return 1;
    return 0;
}

int pause_postpone_if_paused(struct client *c, const struct cmd *cmd)
{
    expire_if_over(time_ms());
    unsigned a = atomic_load_explicit(&pause_actions, memory_order_relaxed);
    if (!a || c->fd < 0 || !paused_for(c, cmd, a))
        return 0;
    struct pp_list *l = list_of(c->w);
    if (!l || cur_worker != c->w)
        return 0; /* not a worker's own client (a fake one): nothing to resume it */
    c->flags |= CF_POSTPONED;
    c->pp_next = NULL;
    c->pp_prev = l->tail;
    if (l->tail)
        l->tail->pp_next = c;
    else
        l->head = c;
    l->tail = c;
    atomic_fetch_add_explicit(&npostponed, 1, memory_order_relaxed);
    return 1;
}

void pause_client_gone(struct client *c)
{
    struct pp_list *l = list_of(c->w);
    if (l && (c->flags & CF_POSTPONED))
        pp_unlink(l, c);
}

long long pause_next_timeout(struct worker *w, long long now_ms)
{
    struct pp_list *l = list_of(w);
    if (!l || !l->head)
        return -1;
    expire_if_over(now_ms);
    if (!atomic_load_explicit(&pause_actions, memory_order_relaxed)) {
        resume_own(w); /* over (the job posted by set_state may follow: harmless) */
        return -1;
    }
    long long left = atomic_load_explicit(&pause_end_ms, memory_order_relaxed) - now_ms;
    return left < 0 ? 0 : left;
}

void pause_client_pause(struct client *c)
{
    /* CLIENT PAUSE <timeout> [WRITE|ALL] */
    unsigned mode = PAUSE_CLIENT_ALL;
    if (c->argc == 4) {
        if (arg_is(c, 3, "write"))
            mode = PAUSE_CLIENT_WRITE;
        else if (!arg_is(c, 3, "all")) {
            reply_error(&c->out, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if (c->argc != 3) {
        reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                     (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]), c->argv[1]);
        return;
    }
    long long t;
    if (!str_to_ll(c->argv[2], c->argvlen[2], &t)) {
        reply_error(&c->out, "ERR timeout is not an integer or out of range");
        return;
    }
    if (t < 0) {
        reply_error(&c->out, "ERR timeout is negative");
        return;
    }
    long long now = db_now_ms();
    if (t > 0) {
        if (t > LLONG_MAX - now) {
            reply_error(&c->out, "ERR timeout is out of range");
            return;
        }
        t += now;
    }
    pthread_mutex_lock(&pause_mu);
    unsigned cur = client_mode;
    /* WRITE keeps an ALL in force; the later end wins. */
    if (cur & PAUSE_CLIENT_ALL)
        mode = PAUSE_CLIENT_ALL;
    long long end = client_end;
    if (!cur || end < t)
        end = t;
    client_mode = mode;
    client_end = end;
    publish();
    pthread_mutex_unlock(&pause_mu);
    expire_if_over(now); /* a timeout of 0 (or one already past) ends it now */
    reply_ok(&c->out);
}

void pause_client_unpause(struct client *c)
{
    pthread_mutex_lock(&pause_mu);
    client_mode = 0;
    client_end = 0;
    publish();
    pthread_mutex_unlock(&pause_mu);
    reply_ok(&c->out);
}
