/* shutdown.c - SHUTDOWN and the wait for lagging replicas (shutdown.h has
 * the rules). */
#include "shutdown.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/util.h"
#include "../server.h"
#include "../persist/aof.h"
#include "../persist/repl.h"
#include "blocking.h"
#include "commands.h"
#include "pause.h"

atomic_int shutdown_cmd_flags;

/* SD_REQUESTED: a signal's shutdown held back by DEBUG PAUSE-CRON (Redis's
 * shutdown_asap before its cron acts on it). */
enum { SD_IDLE, SD_REQUESTED, SD_WAITING, SD_FINAL };
static pthread_mutex_t sd_mu = PTHREAD_MUTEX_INITIALIZER;
static int sd_state;              /* under sd_mu */
static long long sd_end_ms;       /* under sd_mu: when the wait gives up */
static int sd_logged_wait;        /* under sd_mu: "Waiting for replicas" said */
static atomic_llong sd_end_pub;   /* sd_end_ms while not idle, else 0 (INFO) */
static atomic_uint sd_aborts;     /* waits aborted so far */

/* A blocked SHUTDOWN (arg[0]: sd_aborts when it blocked): an abort since
 * answers it.  timed_out: it could not block, or CLIENT UNBLOCK ...
 * TIMEOUT; it then ends as a SHUTDOWN that goes through, without a reply
 * and with its connection closed. */
static int sd_check(struct client *c, const long long *arg, int timed_out)
{
    if (atomic_load(&sd_aborts) != (unsigned)arg[0]) {
        reply_error(&c->out, "ERR Errors trying to SHUTDOWN. Check logs.");
        return 1;
    }
    if (timed_out) {
        c->flags |= CF_CLOSE_ASAP;
        return 1;
    }
    return 0;
}

static const struct block_cb sd_cb = {sd_check, NULL};

static void sd_block(struct client *c, unsigned aborts)
{
    long long a[BLOCK_CB_ARGS] = {(long long)aborts};
    block_on_cb(c, &sd_cb, a, 0);
}

static int sd_in_progress(void)
{
    pthread_mutex_lock(&sd_mu);
    int st = sd_state;
    pthread_mutex_unlock(&sd_mu);
    return st == SD_WAITING || st == SD_FINAL;
}

/* The shutdown is off (sd_mu held): writes resume, and the blocked
 * SHUTDOWN clients, on whichever worker, are woken to get their error. */
static void sd_call_off_locked(void)
{
    sd_state = SD_IDLE;
    sd_end_ms = 0;
    atomic_store(&sd_end_pub, 0);
    atomic_fetch_add(&sd_aborts, 1);
    atomic_store(&shutdown_save_mode, -1);
    pause_shutdown_writes(0);
}

static void sd_wake_blocked(void)
{
    for (int i = 0; i < nworkers; i++)
        worker_post(&workers[i], blocking_check_cb, NULL);
}

int shutdown_may_finish(int flags)
{
    shutdown_log_replicas(); /* first, as Redis's finishShutdown */
    if (!aof_writing_initial())
        return 1;
    if (flags & SHUTDOWN_FLAG_FORCE) {
        log_msg(LL_WARNING, "Writing initial AOF. Exit anyway.");
        return 1;
    }
    log_msg(LL_WARNING, "Writing initial AOF, can't exit.");
    log_msg(LL_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
    pthread_mutex_lock(&sd_mu);
    sd_call_off_locked();
    pthread_mutex_unlock(&sd_mu);
    sd_wake_blocked();
    return 0;
}

/* SHUTDOWN ABORT: 0 when a wait (or a held-back signal's shutdown) was
 * ended, -1 when none was going on. */
static int sd_abort(void)
{
    pthread_mutex_lock(&sd_mu);
    if (sd_state == SD_REQUESTED) {
        sd_state = SD_IDLE;
        pthread_mutex_unlock(&sd_mu);
        log_msg(LL_NOTICE, "Shutdown manually aborted.");
        return 0;
    }
    if (sd_state != SD_WAITING) {
        pthread_mutex_unlock(&sd_mu);
        return -1;
    }
    sd_call_off_locked();
    pthread_mutex_unlock(&sd_mu);
    log_msg(LL_NOTICE, "Shutdown manually aborted.");
    sd_wake_blocked();
    return 0;
}

void shutdown_hold(void)
{
    pthread_mutex_lock(&sd_mu);
    if (sd_state == SD_IDLE)
        sd_state = SD_REQUESTED;
    pthread_mutex_unlock(&sd_mu);
}

int shutdown_held(int take)
{
    pthread_mutex_lock(&sd_mu);
    int held = sd_state == SD_REQUESTED;
    if (held && take)
        sd_state = SD_IDLE;
    pthread_mutex_unlock(&sd_mu);
    return held;
}

int shutdown_begin(int flags)
{
    int timeout = __atomic_load_n(&cfg.shutdown_timeout, __ATOMIC_RELAXED);
    if ((flags & SHUTDOWN_FLAG_NOW) || timeout <= 0 || repl_replica_count() == 0)
        return 0;
    /* Writes stop first: what the replicas acknowledge is then all there
     * is (a write that was running as the pause came in is in the stream
     * by the first poll). */
    pthread_mutex_lock(&sd_mu);
    sd_state = SD_WAITING;
    sd_end_ms = time_ms() + timeout * 1000LL;
    sd_logged_wait = 0;
    atomic_store(&sd_end_pub, sd_end_ms);
    pause_shutdown_writes(1);
    pthread_mutex_unlock(&sd_mu);
    return 1;
}

int shutdown_poll(void)
{
    int r = 0;
    pthread_mutex_lock(&sd_mu);
    if (sd_state != SD_WAITING) {
        r = -1;
    } else {
        int total, in_sync = repl_replicas_synced(&total, 0);
        if (in_sync == total || time_ms() >= sd_end_ms) {
            sd_state = SD_FINAL; /* no abort from here: the shutdown goes on */
            r = 1;
        } else if (!sd_logged_wait) {
            /* Lagging: ask them for an ACK now (not before this first
             * look: a GETACK is part of the stream, and replicas in sync
             * would then be one ACK behind it). */
            sd_logged_wait = 1;
            repl_request_getack();
            log_msg(LL_NOTICE, "Waiting for replicas before shutting down.");
        }
    }
    pthread_mutex_unlock(&sd_mu);
    return r;
}

void shutdown_log_replicas(void)
{
    int total, in_sync = repl_replicas_synced(&total, 1);
    if (total > 0)
        log_msg(LL_NOTICE, "%d of %d replicas are in sync when shutting down.", in_sync, total);
}

long long shutdown_wait_left_ms(void)
{
    long long end = atomic_load(&sd_end_pub);
    if (!end)
        return -1;
    long long left = end - time_ms();
    return left > 0 ? left : 0;
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] */
void shutdown_command(struct client *c)
{
    int nosave = 0, save = 0, now = 0, force = 0, abort_req = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "nosave"))
            nosave = 1;
        else if (arg_is(c, i, "save"))
            save = 1;
        else if (arg_is(c, i, "now"))
            now = 1;
        else if (arg_is(c, i, "force"))
            force = 1;
        else if (arg_is(c, i, "abort"))
            abort_req = 1;
        else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    if ((abort_req && (nosave || save || now || force)) || (nosave && save)) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (abort_req) {
        if (sd_abort() == 0)
            reply_ok(&c->out);
        else
            reply_error(&c->out, "ERR No shutdown in progress.");
        return;
    }
    if (!now && (c->flags & CF_DENY_BLOCKING)) {
        reply_error(&c->out, "ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client");
        return;
    }
    unsigned aborts = atomic_load(&sd_aborts);
    if (sd_in_progress()) {
        /* It joins the shutdown under way, whose flags stay (Redis). */
        sd_block(c, aborts);
        return;
    }
    if (!nosave && (save || (cfg.save && cfg.save[0]))) {
        /* The final save runs after the workers stop (server.c); check
         * now that it can write its temp file, so a doomed save fails
         * this command instead of the shutdown (as Redis refuses). */
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-shutdown-%d.rdb", (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 && !force) {
            log_msg(LL_WARNING, "Error trying to save the DB, can't exit: %s", strerror(errno));
            reply_error(&c->out, "ERR Errors trying to SHUTDOWN. Check logs.");
            return;
        }
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
    }
    atomic_store(&shutdown_save_mode, nosave ? 0 : save ? 1 : -1);
    atomic_store(&shutdown_cmd_flags, (nosave ? SHUTDOWN_FLAG_NOSAVE : 0) | (save ? SHUTDOWN_FLAG_SAVE : 0) |
                                          (now ? SHUTDOWN_FLAG_NOW : 0) | (force ? SHUTDOWN_FLAG_FORCE : 0));
    log_msg(LL_NOTICE, "Shutdown requested by client id=%llu addr=%s%s%s", (unsigned long long)c->id, c->addr,
            now ? " (NOW)" : "", force ? " (FORCE)" : "");
    /* Like Redis: the client waits without a reply; its connection closes
     * as the server exits (or it gets the error if the wait is aborted). */
    sd_block(c, aborts);
    server_request_shutdown();
}
