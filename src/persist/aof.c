/* aof.c - the append-only file: feeding, writing and fsync policies, the
 * multi-part layout and its manifest, BGREWRITEAOF / automatic rewrite,
 * CONFIG SET appendonly, and loading at start-up.  See aof.h.
 *
 * Threads and locks (lock order, outer first):
 *   rw_mu   rewrite control and the manifest: state (off / on / waiting for
 *           the first rewrite), the running rewrite child, scheduling.  Never
 *           held while waiting for slot locks or the fork (persist_fork is
 *           called without it), so INFO or CONFIG SET inside EXEC (every slot
 *           lock held) may take it.
 *   io_mu   the file being appended to and the bytes being written: held by
 *           whoever writes (the "hotkv-aof" thread, or a worker doing a group
 *           commit for appendfsync always).  Holders only write and fsync.
 *   aof_mu  the feed buffer: taken by aof_feed_cmd (under slot locks) for a
 *           memcpy, by io_mu holders to take the buffer, and by the fork's
 *           prepare handler (which holds it across fork(), so the child never
 *           inherits it locked by another thread).
 * Byte positions: every byte fed has a position in one stream (aof_fed_bytes
 * counts them); io_written / aof_synced_bytes are positions in the same
 * stream, whatever file the bytes went to.  A rewrite switches files at the
 * position fed when the fork happened (split_at). */
#include "aof.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../base/latency_monitor.h"
#include "../base/log.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../types/hash.h"
#include "../types/list.h"
#include "../types/set.h"
#include "../types/stream.h"
#include "../types/vset.h"
#include "../types/zset.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../net/hooks.h"
#include "../net/worker.h"
#include "../server.h"
#include "../base/crc64.h"
#include "rdb.h"
#include "prop.h"
#include "resp_enc.h"
#include "snapshot.h"

enum { AOF_OFF = 0, AOF_ON = 1, AOF_WAIT_REWRITE = 2 };

#define ITEMS_PER_CMD 64              /* Redis's AOF_REWRITE_ITEMS_PER_CMD */
#define AUTOSYNC_BYTES (4u << 20)     /* aof-rewrite-incremental-fsync step */
#define MANIFEST_MAX_LINE 1024

/* ------------------------------------------------------------ buffers --- */
struct bbuf {
    char *p;
    size_t len, cap;
};

static void bb_reserve(struct bbuf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc - b->len < extra)
        nc *= 2;
    b->p = hk_realloc(b->p, nc);
    b->cap = nc;
}

static void bb_add(struct bbuf *b, const void *p, size_t n)
{
    bb_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void bb_free(struct bbuf *b)
{
    hk_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static void bb_cmd(struct bbuf *b, int argc, const char *const *argv, const size_t *lens)
{
    size_t n = cmd_bytes(argc, lens);
    bb_reserve(b, n);
    put_cmd(b->p + b->len, argc, argv, lens);
    b->len += n;
}

/* ------------------------------------------------------------- state --- */
atomic_ullong aof_fed_bytes, aof_written_bytes, aof_synced_bytes;
atomic_int aof_active;

/* The loop's reply barrier (net/hooks.h) follows aof_active: while the AOF
 * is on, no reply leaves before the writes it acknowledges are written
 * (and fsynced with appendfsync always): aof_before_reply(). */
static void aof_reply_barrier(void)
{
    aof_before_reply();
}

static void aof_set_active(int on)
{
    /* Set before the flag is first raised (the loop reads the flag with
     * acquire, then the pointer); never changes afterwards. */
    if (net_reply_barrier != aof_reply_barrier)
        net_reply_barrier = aof_reply_barrier;
    atomic_store(&aof_active, on);
    atomic_store(&net_reply_barrier_on, on);
}

static pthread_mutex_t rw_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rw_cv = PTHREAD_COND_INITIALIZER; /* rw_starting went back to 0 */
static pthread_mutex_t io_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t aof_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t aof_cv;

/* Feed side (aof_mu). */
static struct bbuf fbuf;
static atomic_int feeding;          /* aof_feed_cmd appends (read relaxed outside aof_mu) */
static int last_db = -1;            /* database of the last command fed (SELECT) */
static long long last_ts;           /* aof-timestamp-enabled: last #TS annotation */
static int writer_waiting;
static int pending_fd = -1;         /* new incr file of the rewrite being started */
static int rw_arm;                  /* the next fork by the rewrite starter splits */
static int split_armed;             /* a split waits for the io side */
static unsigned long long split_at;
static int split_fd = -1;
static _Thread_local int tl_rw_forking;

/* IO side (io_mu). */
static int io_fd = -1;
static struct bbuf wbuf;
static size_t wpos;
static unsigned long long io_written; /* stream position handled (written or dropped) */
static int io_split;
static unsigned long long io_split_at;
static int io_split_fd = -1;
static _Atomic long long io_last_fsync_ms;
static long long io_last_err_log;

/* Rewrite control and manifest (rw_mu). */
static atomic_int aof_state;
static struct aof_manifest man;
static int man_loaded;
static pid_t rw_pid;
static int rw_starting;
static int rw_preamble;             /* the running child writes an RDB base */
static int rw_killing;              /* CONFIG SET appendonly no killed the child */
static long long rw_start_ms;
static char tmp_incr_name[512];     /* WAIT_REWRITE: the temp incr being filled */

/* Statistics (atomics: INFO reads them without locks). */
static atomic_int rw_in_progress, rw_scheduled;
static _Atomic long long rw_start_s = -1, rw_last_secs = -1;
static atomic_int rw_last_ok = 1;
static atomic_llong rw_count, rw_fail_streak;
static atomic_int write_err;        /* last write or fsync failed */
static atomic_int write_errno;
static atomic_int fsync_running;
static atomic_ullong delayed_fsync;
static atomic_llong cur_size, base_size, incr_size;
static atomic_int thread_running;
static pthread_t aof_thread;
static atomic_int fsync_err;       /* the last fsync failed */

static int fsync_policy(void)
{
    return __atomic_load_n(&cfg.appendfsync, __ATOMIC_RELAXED);
}

static const char *aof_dir(void)
{
    return cfg.appenddirname;
}

static void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", aof_dir(), name);
}

/* ------------------------------------------------------------ feeding --- */
static void emit_prefix_locked(int db)
{
    if (__atomic_load_n(&cfg.aof_timestamp_enabled, __ATOMIC_RELAXED)) {
        long long now = time_ms() / 1000;
        if (now > last_ts) {
            char ts[48];
            int n = snprintf(ts, sizeof(ts), "#TS:%lld\r\n", now);
            last_ts = now;
            bb_add(&fbuf, ts, (size_t)n);
        }
    }
    if (db >= 0 && db != last_db) {
        char num[24];
        int n = ll_to_str(num, db);
        const char *av[2] = {"SELECT", num};
        size_t al[2] = {6, (size_t)n};
        bb_cmd(&fbuf, 2, av, al);
        last_db = db;
    }
}

#define AOF_WAKE_BYTES (1u << 20)
static void fed_publish_locked(size_t before)
{
    if (fbuf.len > before) {
        atomic_fetch_add_explicit(&aof_fed_bytes, fbuf.len - before, memory_order_release);
        /* Workers write what they fed before their replies leave
         * (aof_before_reply), so the writer thread is only woken early
         * when a lot is pending: a wake-up per command cost a context
         * switch per write (half the throughput on a shared core). */
        if (writer_waiting && fbuf.len >= AOF_WAKE_BYTES)
            pthread_cond_signal(&aof_cv);
    }
}

/* A transaction fed by one thread (MULTI ... EXEC) is collected here and
 * appended at EXEC in one piece: records of {int db; size_t len; bytes}. */
static _Thread_local struct bbuf tl_tx;
static _Thread_local int tl_in_tx;

struct txrec {
    int db;
    size_t len;
};

static void tx_add(int db, int argc, const char *const *argv, const size_t *lens)
{
    struct txrec h = {db, cmd_bytes(argc, lens)};
    bb_reserve(&tl_tx, sizeof(h) + h.len);
    memcpy(tl_tx.p + tl_tx.len, &h, sizeof(h));
    put_cmd(tl_tx.p + tl_tx.len + sizeof(h), argc, argv, lens);
    tl_tx.len += sizeof(h) + h.len;
}

static void tx_commit(void)
{
    pthread_mutex_lock(&aof_mu);
    if (atomic_load_explicit(&feeding, memory_order_relaxed)) {
        size_t before = fbuf.len;
        for (size_t off = 0; off < tl_tx.len;) {
            struct txrec h;
            memcpy(&h, tl_tx.p + off, sizeof(h));
            off += sizeof(h);
            emit_prefix_locked(h.db);
            bb_add(&fbuf, tl_tx.p + off, h.len);
            off += h.len;
        }
        fed_publish_locked(before);
    }
    pthread_mutex_unlock(&aof_mu);
    tl_in_tx = 0;
    bb_free(&tl_tx); /* nothing stays allocated on the thread between transactions */
}

static int is_word(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    return n == wl && strncasecmp(s, w, n) == 0;
}

void aof_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens)
{
    if (argc < 1)
        return;
    if (__builtin_expect(tl_in_tx, 0)) { /* (checked first: EXEC ends it even if the AOF went off) */
        tx_add(db, argc, argv, lens);
        if (argc == 1 && is_word(argv[0], lens[0], "exec"))
            tx_commit();
        return;
    }
    if (!atomic_load_explicit(&feeding, memory_order_relaxed))
        return;
    if (argc == 1 && is_word(argv[0], lens[0], "multi")) {
        tl_in_tx = 1;
        tl_tx.len = 0;
        tx_add(db, argc, argv, lens);
        return;
    }
    pthread_mutex_lock(&aof_mu);
    if (atomic_load_explicit(&feeding, memory_order_relaxed)) {
        size_t before = fbuf.len;
        emit_prefix_locked(db);
        bb_cmd(&fbuf, argc, argv, lens);
        fed_publish_locked(before);
    }
    pthread_mutex_unlock(&aof_mu);
}

/* ------------------------------------------------------------ writing --- */
static void set_write_error(int err)
{
    atomic_store(&write_errno, err);
    atomic_store(&write_err, 1);
}

static void publish_synced(unsigned long long v);

static int child_active(void)
{
    return atomic_load(&rw_in_progress) || persist_child_type() != CHILD_NONE;
}

/* Close the file we were appending to (made durable first) and go on with
 * the rewrite's new incr file.  io_mu held. */
static void io_switch(void)
{
    if (io_fd >= 0) {
        if (fdatasync(io_fd) < 0)
            log_msg(LL_WARNING, "Fail to fsync the AOF file before switching: %s", strerror(errno));
        close(io_fd);
    }
    io_fd = io_split_fd;
    io_split_fd = -1;
    io_split = 0;
    atomic_store(&incr_size, 0);
}

/* Write everything fed so far to the file (no fsync).  io_mu held.  0, or
 * -1 when a write failed (the bytes stay pending and are retried). */
atomic_int aof_flush_sleep_us;

static int io_write(void)
{
    pthread_mutex_lock(&aof_mu);
    if (fbuf.len) {
        if (wpos == wbuf.len) {
            struct bbuf t = wbuf;
            wbuf = fbuf;
            fbuf = t;
            fbuf.len = 0;
            wpos = 0;
        } else {
            bb_add(&wbuf, fbuf.p, fbuf.len);
            fbuf.len = 0;
        }
    }
    if (split_armed) {
        io_split = 1;
        io_split_at = split_at;
        io_split_fd = split_fd;
        split_armed = 0;
        split_fd = -1;
    }
    pthread_mutex_unlock(&aof_mu);

    /* DEBUG AOF-FLUSH-SLEEP: Redis's test aid, a pause before bytes are
     * written (its fsync-always barrier test looks at the file size). */
    int nap = atomic_load_explicit(&aof_flush_sleep_us, memory_order_relaxed);
    if (nap > 0 && wbuf.len > wpos)
        usleep((useconds_t)nap);
    int rc = 0;
    for (;;) {
        if (io_split && io_written == io_split_at)
            io_switch();
        size_t n = wbuf.len - wpos;
        if (n == 0)
            break;
        if (io_split && io_split_at - io_written < n)
            n = (size_t)(io_split_at - io_written);
        if (io_fd < 0) { /* nowhere to write (waiting for the first rewrite): drop */
            wpos += n;
            io_written += n;
            continue;
        }
        /* The clock is read only while the latency monitor is on. */
        int lm = __atomic_load_n(&latency_monitor_threshold, __ATOMIC_RELAXED) > 0;
        long long wt0 = lm ? time_ms() : 0;
        ssize_t w = write(io_fd, wbuf.p + wpos, n);
        if (lm)
            latency_sample("aof-write", time_ms() - wt0); /* base/latency_monitor.h */
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            long long now = time_ms();
            if (now - io_last_err_log > 30000) {
                io_last_err_log = now;
                log_msg(LL_WARNING, "Error writing to the AOF file: %s", strerror(e));
            }
            set_write_error(e);
            rc = -1;
            break;
        }
        wpos += (size_t)w;
        io_written += (unsigned long long)w;
        atomic_fetch_add(&incr_size, w);
        atomic_fetch_add(&cur_size, w);
    }
    if (wpos == wbuf.len) {
        wbuf.len = wpos = 0;
        if (wbuf.cap > (4u << 20))
            bb_free(&wbuf);
    }
    atomic_store_explicit(&aof_written_bytes, io_written, memory_order_release);
    if (rc == 0 && atomic_load(&write_err) && !atomic_load(&fsync_err)) {
        log_msg(LL_NOTICE, "AOF write error looks solved, HotKV can write again.");
        atomic_store(&write_err, 0);
    }
    if (io_fd < 0)
        publish_synced(io_written);
    return rc;
}

static void publish_synced(unsigned long long v)
{
    unsigned long long cur = atomic_load(&aof_synced_bytes);
    while (cur < v && !atomic_compare_exchange_weak(&aof_synced_bytes, &cur, v))
        ;
}

/* Forget the pending bytes (the AOF stops, or the temp incr of a failed
 * first rewrite is dropped): every position moves to what was fed.  io_mu
 * held. */
static void io_drop_all(void)
{
    wbuf.len = wpos = 0;
    io_written = atomic_load(&aof_fed_bytes);
    atomic_store(&aof_written_bytes, io_written);
    publish_synced(io_written);
}

/* fdatasync what has been written so far, without holding io_mu (workers
 * go on writing meanwhile): the fd is dup()ed so a switch to a new incr
 * file cannot close it under us.  0 / -1. */
static int io_fsync(void)
{
    pthread_mutex_lock(&io_mu);
    unsigned long long w = io_written;
    if (io_fd < 0 || w <= atomic_load(&aof_synced_bytes)) {
        if (io_fd < 0)
            publish_synced(w);
        pthread_mutex_unlock(&io_mu);
        return 0;
    }
    if (__atomic_load_n(&cfg.no_appendfsync_on_rewrite, __ATOMIC_RELAXED) && child_active()) {
        /* no-appendfsync-on-rewrite: as if synced (Redis skips it too). */
        publish_synced(w);
        pthread_mutex_unlock(&io_mu);
        return 0;
    }
    int fd = dup(io_fd);
    pthread_mutex_unlock(&io_mu);
    if (fd < 0)
        return -1;
    atomic_fetch_add(&fsync_running, 1);
    long long t0 = time_ms();
    int r = fdatasync(fd);
    int e = errno;
    atomic_fetch_sub(&fsync_running, 1);
    close(fd);
    io_last_fsync_ms = t0;
    /* appendfsync always makes the writer's client wait for it (everysec
     * syncs in the background, as Redis's, which records no event then). */
    if (fsync_policy() == AOF_FSYNC_ALWAYS)
        latency_sample("aof-fsync-always", time_ms() - t0);
    if (r < 0) {
        log_msg(LL_WARNING, "Can't persist AOF for fsync error: %s", strerror(e));
        atomic_store(&fsync_err, 1);
        set_write_error(e);
        if (fsync_policy() == AOF_FSYNC_ALWAYS) {
            /* After a failed fsync the kernel may have dropped the dirty
             * pages: nothing can be promised any more (as Redis). */
            log_msg(LL_WARNING, "Can't recover from an AOF fsync error when the AOF fsync policy is 'always'. Exiting...");
            _exit(1);
        }
        return -1;
    }
    if (atomic_exchange(&fsync_err, 0))
        atomic_store(&write_err, 0);
    if (time_ms() - t0 > 2000)
        atomic_fetch_add(&delayed_fsync, 1);
    publish_synced(w);
    return 0;
}

/* Every policy: the bytes of the writes fed so far reach the kernel before
 * a reply leaves (a killed process loses nothing acknowledged, as Redis,
 * which writes its AOF buffer before replying). */
void aof_write_fed(unsigned long long upto)
{
    pthread_mutex_lock(&io_mu);
    if (atomic_load(&aof_written_bytes) < upto)
        io_write(); /* a write error: the reply goes anyway (MISCONF for new writes) */
    pthread_mutex_unlock(&io_mu);
}

/* appendfsync always: written and fdatasynced (group commit: one fsync
 * covers every worker's bytes written before it). */
void aof_sync_fed(unsigned long long upto)
{
    for (;;) {
        if (atomic_load(&aof_written_bytes) < upto) {
            pthread_mutex_lock(&io_mu);
            int rc = atomic_load(&aof_written_bytes) < upto ? io_write() : 0;
            pthread_mutex_unlock(&io_mu);
            if (rc < 0) {
                /* A write error: the reply waits until the bytes are on
                 * disk (new writes get MISCONF meanwhile). */
                if (atomic_load(&server_shutdown)) {
                    log_msg(LL_WARNING, "Shutting down with AOF bytes that could not be written");
                    return;
                }
                struct timespec ts = {0, 100 * 1000000L};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        if (atomic_load(&aof_synced_bytes) >= upto)
            return;
        io_fsync();
        if (atomic_load(&aof_synced_bytes) >= upto)
            return;
    }
}

static void *aof_thread_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hotkv-aof");
    mem_thread_register();
    int failed = 0;
    while (atomic_load(&thread_running)) {
        pthread_mutex_lock(&aof_mu);
        /* Wake every 10 ms (or early for a big backlog or a split): write
         * what no worker has written yet (fed outside a reply: expiries
         * from the cron), and fsync once a second with everysec. */
        if ((fbuf.len < AOF_WAKE_BYTES && !split_armed) || failed) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += (failed ? 100 : 10) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            writer_waiting = 1;
            pthread_cond_timedwait(&aof_cv, &aof_mu, &ts);
            writer_waiting = 0;
        }
        pthread_mutex_unlock(&aof_mu);
        pthread_mutex_lock(&io_mu);
        failed = io_write() < 0;
        pthread_mutex_unlock(&io_mu);
        mem_publish();
        slab_thread_idle(); /* a thread that is not a worker lends its slab heap back (base/slab.h) */
        int policy = fsync_policy();
        if (atomic_load(&aof_synced_bytes) < atomic_load(&aof_written_bytes) &&
            (policy == AOF_FSYNC_ALWAYS || (policy == AOF_FSYNC_EVERYSEC && time_ms() - io_last_fsync_ms >= 1000)))
            io_fsync();
    }
    mem_thread_unregister();
    return NULL;
}

static void thread_start(void)
{
    if (atomic_exchange(&thread_running, 1))
        return;
    pthread_create(&aof_thread, NULL, aof_thread_main, NULL);
}

static void thread_stop(void)
{
    if (!atomic_exchange(&thread_running, 0))
        return;
    pthread_mutex_lock(&aof_mu);
    pthread_cond_signal(&aof_cv);
    pthread_mutex_unlock(&aof_mu);
    pthread_join(aof_thread, NULL);
}

const char *aof_write_error(void)
{
    static _Thread_local char msg[160];
    if (!atomic_load_explicit(&write_err, memory_order_relaxed) || atomic_load(&aof_state) == AOF_OFF)
        return NULL;
    snprintf(msg, sizeof(msg), "MISCONF Errors writing to the AOF file: %s", strerror(atomic_load(&write_errno)));
    return msg;
}

/* ----------------------------------------------------------- manifest --- */
static void mfile_free(struct aof_mfile *f)
{
    hk_free(f->name);
    f->name = NULL;
}

void aof_manifest_free(struct aof_manifest *am)
{
    mfile_free(&am->base);
    for (int i = 0; i < am->nhist; i++)
        mfile_free(&am->hist[i]);
    for (int i = 0; i < am->nincr; i++)
        mfile_free(&am->incr[i]);
    hk_free(am->hist);
    hk_free(am->incr);
    memset(am, 0, sizeof(*am));
}

static void mlist_add(struct aof_mfile **v, int *n, const char *name, long long seq, char type)
{
    *v = hk_realloc(*v, sizeof(**v) * (size_t)(*n + 1));
    (*v)[*n].name = hk_strdup(name);
    (*v)[*n].seq = seq;
    (*v)[*n].type = type;
    (*n)++;
}

static void manifest_copy(struct aof_manifest *dst, const struct aof_manifest *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->base_seq = src->base_seq;
    dst->incr_seq = src->incr_seq;
    if (src->base.name) {
        dst->base = src->base;
        dst->base.name = hk_strdup(src->base.name);
    }
    for (int i = 0; i < src->nhist; i++)
        mlist_add(&dst->hist, &dst->nhist, src->hist[i].name, src->hist[i].seq, 'h');
    for (int i = 0; i < src->nincr; i++)
        mlist_add(&dst->incr, &dst->nincr, src->incr[i].name, src->incr[i].seq, 'i');
}

/* Split a manifest line into words: bare words, "double quoted" (with \n,
 * \r, \t, \b, \a, \\, \", \xHH) and 'single quoted' (with \').  Returns
 * the count, or -1 on unbalanced quotes.  Words are hk_malloc'd. */
static int split_words(const char *p, char **out, int max)
{
    int n = 0;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            return n;
        struct bbuf w = {0};
        int dq = 0, sq = 0, done = 0;
        while (!done) {
            if (dq) {
                if (*p == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3])) {
                    char hex[3] = {p[2], p[3], 0};
                    char c = (char)strtol(hex, NULL, 16);
                    bb_add(&w, &c, 1);
                    p += 4;
                } else if (*p == '\\' && p[1]) {
                    char c;
                    p++;
                    switch (*p) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = *p; break;
                    }
                    bb_add(&w, &c, 1);
                    p++;
                } else if (*p == '"') {
                    if (p[1] && !isspace((unsigned char)p[1]))
                        goto bad;
                    done = 1;
                    p++;
                } else if (!*p) {
                    goto bad;
                } else {
                    bb_add(&w, p, 1);
                    p++;
                }
            } else if (sq) {
                if (*p == '\\' && p[1] == '\'') {
                    bb_add(&w, "'", 1);
                    p += 2;
                } else if (*p == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1]))
                        goto bad;
                    done = 1;
                    p++;
                } else if (!*p) {
                    goto bad;
                } else {
                    bb_add(&w, p, 1);
                    p++;
                }
            } else {
                if (!*p || isspace((unsigned char)*p)) {
                    done = 1;
                } else if (*p == '"') {
                    dq = 1;
                    p++;
                } else if (*p == '\'') {
                    sq = 1;
                    p++;
                } else {
                    bb_add(&w, p, 1);
                    p++;
                }
            }
        }
        bb_add(&w, "", 1);
        if (n == max) {
            bb_free(&w);
            continue;
        }
        out[n++] = w.p;
        continue;
    bad:
        bb_free(&w);
        for (int i = 0; i < n; i++)
            hk_free(out[i]);
        return -1;
    }
}

int aof_manifest_load(const char *path, struct aof_manifest *am, char *err, size_t errlen)
{
    memset(am, 0, sizeof(*am));
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "can't open the AOF manifest file %s for reading: %s", path, strerror(errno));
        return -1;
    }
    char buf[MANIFEST_MAX_LINE + 2];
    int lineno = 0;
    long long maxseq = 0;
    const char *problem = NULL;
    for (;;) {
        if (!fgets(buf, sizeof(buf) - 1, f)) {
            if (ferror(f))
                problem = "Read AOF manifest failed";
            else if (lineno == 0)
                problem = "Found an empty AOF manifest";
            break;
        }
        lineno++;
        if (buf[0] == '#')
            continue;
        if (!strchr(buf, '\n')) {
            problem = "The AOF manifest file contains too long line";
            break;
        }
        char *s = buf, *e = buf + strlen(buf);
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = 0;
        if (s == e) {
            problem = "Invalid AOF manifest file format";
            break;
        }
        char *w[16];
        int n = split_words(s, w, 16);
        if (n < 6 || (n % 2)) {
            for (int i = 0; i < n; i++)
                hk_free(w[i]);
            problem = "Invalid AOF manifest file format";
            break;
        }
        char *name = NULL;
        long long seq = 0;
        char type = 0;
        for (int i = 0; i < n; i += 2) {
            if (!strcasecmp(w[i], "file")) {
                hk_free(name);
                name = hk_strdup(w[i + 1]);
            } else if (!strcasecmp(w[i], "seq")) {
                seq = atoll(w[i + 1]);
            } else if (!strcasecmp(w[i], "type")) {
                type = w[i + 1][0];
            }
        }
        for (int i = 0; i < n; i++)
            hk_free(w[i]);
        if (!name || !name[0] || !seq || !type) { /* an empty name, as Redis */
            hk_free(name);
            problem = "Invalid AOF manifest file format";
            break;
        }
        if (strchr(name, '/')) {
            hk_free(name);
            problem = "File can't be a path, just a filename";
            break;
        }
        if (type == 'b') {
            if (am->base.name) {
                hk_free(name);
                problem = "Found duplicate base file information";
                break;
            }
            am->base.name = name;
            am->base.seq = seq;
            am->base.type = 'b';
            am->base_seq = seq;
            name = NULL;
        } else if (type == 'h') {
            mlist_add(&am->hist, &am->nhist, name, seq, 'h');
        } else if (type == 'i') {
            if (seq <= maxseq) {
                hk_free(name);
                problem = "Found a non-monotonic sequence number";
                break;
            }
            mlist_add(&am->incr, &am->nincr, name, seq, 'i');
            am->incr_seq = maxseq = seq;
        } else {
            hk_free(name);
            problem = "Unknown AOF file type";
            break;
        }
        hk_free(name);
    }
    fclose(f);
    if (problem) {
        snprintf(err, errlen, "%s (manifest %s, line %d)", problem, path, lineno);
        aof_manifest_free(am);
        return -1;
    }
    return 0;
}

static int needs_repr(const char *s)
{
    for (; *s; s++)
        if (*s == '\\' || *s == '"' || *s == '\'' || !isprint((unsigned char)*s) || isspace((unsigned char)*s))
            return 1;
    return 0;
}

static void fmt_name(struct bbuf *b, const char *s)
{
    if (!needs_repr(s)) {
        bb_add(b, s, strlen(s));
        return;
    }
    bb_add(b, "\"", 1);
    for (; *s; s++) {
        char tmp[8];
        switch (*s) {
        case '\\': bb_add(b, "\\\\", 2); break;
        case '"': bb_add(b, "\\\"", 2); break;
        case '\n': bb_add(b, "\\n", 2); break;
        case '\r': bb_add(b, "\\r", 2); break;
        case '\t': bb_add(b, "\\t", 2); break;
        case '\a': bb_add(b, "\\a", 2); break;
        case '\b': bb_add(b, "\\b", 2); break;
        default:
            if (isprint((unsigned char)*s)) {
                bb_add(b, s, 1);
            } else {
                int n = snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned char)*s);
                bb_add(b, tmp, (size_t)n);
            }
        }
    }
    bb_add(b, "\"", 1);
}

static void fmt_file(struct bbuf *b, const struct aof_mfile *f)
{
    char tail[64];
    bb_add(b, "file ", 5);
    fmt_name(b, f->name);
    int n = snprintf(tail, sizeof(tail), " seq %lld type %c\n", f->seq, f->type);
    bb_add(b, tail, (size_t)n);
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

/* Write the manifest: a temp file, fsynced, renamed over the old one, and
 * the directory fsynced.  0 / -1 (logged). */
static int manifest_persist(const struct aof_manifest *am)
{
    struct bbuf b = {0};
    char path[1024], tmp[1024], name[600];
    if (am->base.name)
        fmt_file(&b, &am->base);
    for (int i = 0; i < am->nhist; i++)
        fmt_file(&b, &am->hist[i]);
    for (int i = 0; i < am->nincr; i++)
        fmt_file(&b, &am->incr[i]);
    snprintf(name, sizeof(name), "%s.manifest", cfg.appendfilename);
    path_in_dir(path, sizeof(path), name);
    snprintf(name, sizeof(name), "temp-%s.manifest", cfg.appendfilename);
    path_in_dir(tmp, sizeof(tmp), name);
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Can't open the AOF manifest file %s: %s", tmp, strerror(errno));
        goto done;
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_msg(LL_WARNING, "Error trying to write the temporary AOF manifest file %s: %s", tmp, strerror(errno));
            goto done;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        log_msg(LL_WARNING, "Fail to fsync the temp AOF file %s: %s.", tmp, strerror(errno));
        goto done;
    }
    if (rename(tmp, path) < 0) {
        log_msg(LL_WARNING, "Error trying to rename the temporary AOF manifest file %s into %s: %s", tmp, path,
                strerror(errno));
        goto done;
    }
    if (fsync_dir(aof_dir()) < 0) {
        log_msg(LL_WARNING, "Fail to fsync AOF directory %s: %s.", aof_dir(), strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    bb_free(&b);
    return rc;
}

static int dir_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_create(void)
{
    if (mkdir(aof_dir(), 0755) < 0 && errno != EEXIST)
        return -1;
    return dir_exists(aof_dir()) ? 0 : -1;
}

static long long file_size_in_dir(const char *name, int *missing)
{
    char p[1024];
    struct stat st;
    path_in_dir(p, sizeof(p), name);
    if (stat(p, &st) < 0) {
        if (missing)
            *missing = 1;
        return 0;
    }
    return (long long)st.st_size;
}

/* The manifest on disk (if any) into `man`: 0, -1 with err. */
static int manifest_load_disk(char *err, size_t errlen)
{
    char name[600], path[1024];
    aof_manifest_free(&man);
    man_loaded = 1;
    if (!dir_exists(aof_dir()))
        return 0;
    snprintf(name, sizeof(name), "%s.manifest", cfg.appendfilename);
    path_in_dir(path, sizeof(path), name);
    if (!file_exists(path))
        return 0;
    return aof_manifest_load(path, &man, err, errlen);
}

static void new_incr_name(struct aof_manifest *am, char *out, size_t cap)
{
    am->incr_seq++;
    snprintf(out, cap, "%s.%lld.incr.aof", cfg.appendfilename, am->incr_seq);
    mlist_add(&am->incr, &am->nincr, out, am->incr_seq, 'i');
}

static void history_delete(void)
{
    if (man.nhist == 0)
        return;
    for (int i = 0; i < man.nhist; i++) {
        char p[1024];
        log_msg(LL_NOTICE, "Removing the history file %s in the background", man.hist[i].name);
        path_in_dir(p, sizeof(p), man.hist[i].name);
        unlink(p);
        mfile_free(&man.hist[i]);
    }
    man.nhist = 0;
    manifest_persist(&man);
}

/* ---------------------------------------------------- base file writer --- */
struct bw {
    int fd;
    char buf[65536];
    size_t len;
    unsigned long long total, synced;
    int err;
    int autosync;
};

static void bw_flush(struct bw *w)
{
    size_t off = 0;
    while (off < w->len && !w->err) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->err = n < 0 ? errno : ENOSPC;
            break;
        }
        off += (size_t)n;
    }
    w->total += w->len;
    w->len = 0;
    if (w->autosync && !w->err && w->total - w->synced >= AUTOSYNC_BYTES) {
        fdatasync(w->fd);
        w->synced = w->total;
    }
}

static void bw_raw(struct bw *w, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        size_t room = sizeof(w->buf) - w->len;
        if (room == 0) {
            bw_flush(w);
            room = sizeof(w->buf);
        }
        size_t k = n < room ? n : room;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

static void bw_count(struct bw *w, char c, unsigned long long v)
{
    char tmp[32];
    char *e = put_count(tmp, c, v);
    bw_raw(w, tmp, (size_t)(e - tmp));
}

static void bw_bulk(struct bw *w, const char *s, size_t n)
{
    bw_count(w, '$', n);
    bw_raw(w, s, n);
    bw_raw(w, "\r\n", 2);
}

static void bw_bulk_cstr(struct bw *w, const char *s)
{
    bw_bulk(w, s, strlen(s));
}

static void bw_bulk_ll(struct bw *w, long long v)
{
    char tmp[32];
    int n = ll_to_str(tmp, v);
    bw_bulk(w, tmp, (size_t)n);
}

static void bw_bulk_ull(struct bw *w, unsigned long long v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%llu", v);
    bw_bulk(w, tmp, (size_t)n);
}

static void bw_bulk_id(struct bw *w, const struct stream_id *id)
{
    char tmp[48];
    int n = sid_format(tmp, id);
    bw_bulk(w, tmp, (size_t)n);
}

/* Variadic commands in batches of ITEMS_PER_CMD elements, as Redis writes
 * them: the header is written when a batch starts. */
struct batch {
    struct bw *w;
    const char *cmd;
    const char *key;
    size_t klen;
    size_t left;    /* elements still to write */
    size_t inbatch; /* written in the current batch */
    int per;        /* bulk strings per element */
};

static void batch_elem_start(struct batch *b)
{
    if (b->inbatch == 0) {
        size_t n = b->left > ITEMS_PER_CMD ? ITEMS_PER_CMD : b->left;
        bw_count(b->w, '*', 2 + n * (size_t)b->per);
        bw_bulk_cstr(b->w, b->cmd);
        bw_bulk(b->w, b->key, b->klen);
    }
}

static void batch_elem_end(struct batch *b)
{
    if (b->left)
        b->left--;
    if (++b->inbatch == ITEMS_PER_CMD)
        b->inbatch = 0;
}

static int visit_push(void *arg, const char *s, size_t len)
{
    struct batch *b = arg;
    if (b->left == 0)
        return 1;
    batch_elem_start(b);
    bw_bulk(b->w, s, len);
    batch_elem_end(b);
    return 0;
}

static int visit_zadd(void *arg, const char *s, size_t len, double score)
{
    struct batch *b = arg;
    char num[64];
    if (b->left == 0)
        return 1;
    batch_elem_start(b);
    int n = d_to_str(num, sizeof(num), score);
    bw_bulk(b->w, num, (size_t)n);
    bw_bulk(b->w, s, len);
    batch_elem_end(b);
    return 0;
}

struct hvisit {
    struct batch b;
    int hfe;
    long long now;
};

static int visit_hash(void *arg, const char *f, size_t flen, const char *v, size_t vlen, long long ttl)
{
    struct hvisit *h = arg;
    struct bw *w = h->b.w;
    if (!h->hfe) {
        if (h->b.left == 0)
            return 1;
        batch_elem_start(&h->b);
        bw_bulk(w, f, flen);
        bw_bulk(w, v, vlen);
        batch_elem_end(&h->b);
        return 0;
    }
    if (ttl > 0 && ttl <= h->now)
        return 0; /* expired field */
    bw_count(w, '*', 4);
    bw_bulk_cstr(w, "HSET");
    bw_bulk(w, h->b.key, h->b.klen);
    bw_bulk(w, f, flen);
    bw_bulk(w, v, vlen);
    if (ttl > 0) {
        bw_count(w, '*', 6);
        bw_bulk_cstr(w, "HPEXPIREAT");
        bw_bulk(w, h->b.key, h->b.klen);
        bw_bulk_ll(w, ttl);
        bw_bulk_cstr(w, "FIELDS");
        bw_bulk_cstr(w, "1");
        bw_bulk(w, f, flen);
    }
    return 0;
}

static void rewrite_stream(struct bw *w, const char *key, size_t klen, struct entry *e)
{
    struct stream *s = entry_ptr(e);
    if (s->length) {
        struct stream_iter it;
        struct stream_entry se;
        struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        stream_iter_start(&it, s, &lo, &hi, 0);
        while (stream_iter_next(&it, &se)) {
            bw_count(w, '*', 3 + se.nfields * 2);
            bw_bulk_cstr(w, "XADD");
            bw_bulk(w, key, klen);
            bw_bulk_id(w, &se.id);
            for (uint64_t i = 0; i < se.nfields; i++) {
                const char *f, *v;
                size_t fl, vl;
                stream_entry_field(&se, &f, &fl, &v, &vl);
                bw_bulk(w, f, fl);
                bw_bulk(w, v, vl);
            }
        }
        stream_iter_stop(&it);
    } else {
        /* An empty stream: XADD MAXLEN 0 creates the key and trims it. */
        struct stream_id one = {0, 1};
        bw_count(w, '*', 7);
        bw_bulk_cstr(w, "XADD");
        bw_bulk(w, key, klen);
        bw_bulk_cstr(w, "MAXLEN");
        bw_bulk_cstr(w, "0");
        bw_bulk_id(w, &one);
        bw_bulk_cstr(w, "x");
        bw_bulk_cstr(w, "y");
    }
    bw_count(w, '*', 7);
    bw_bulk_cstr(w, "XSETID");
    bw_bulk(w, key, klen);
    bw_bulk_id(w, &s->last_id);
    bw_bulk_cstr(w, "ENTRIESADDED");
    bw_bulk_ull(w, s->entries_added);
    bw_bulk_cstr(w, "MAXDELETEDID");
    bw_bulk_id(w, &s->max_deleted);
    struct cgroups *cgs = s->cgroups;
    for (size_t gi = 0; cgs && gi < cgs->n; gi++) {
        struct cgroup *g = cgs->v[gi];
        bw_count(w, '*', 7);
        bw_bulk_cstr(w, "XGROUP");
        bw_bulk_cstr(w, "CREATE");
        bw_bulk(w, key, klen);
        bw_bulk(w, g->name, g->nlen);
        bw_bulk_id(w, &g->last_id);
        bw_bulk_cstr(w, "ENTRIESREAD");
        bw_bulk_ll(w, g->entries_read);
        for (size_t ci = 0; ci < g->ncons; ci++) {
            struct consumer *cn = g->cons[ci];
            if (cn->pel.n == 0) {
                bw_count(w, '*', 5);
                bw_bulk_cstr(w, "XGROUP");
                bw_bulk_cstr(w, "CREATECONSUMER");
                bw_bulk(w, key, klen);
                bw_bulk(w, g->name, g->nlen);
                bw_bulk(w, cn->name, cn->nlen);
                continue;
            }
            for (size_t pi = 0; pi < cn->pel.n; pi++) {
                struct nack *nk = cn->pel.v[pi];
                bw_count(w, '*', 12);
                bw_bulk_cstr(w, "XCLAIM");
                bw_bulk(w, key, klen);
                bw_bulk(w, g->name, g->nlen);
                bw_bulk(w, cn->name, cn->nlen);
                bw_bulk_cstr(w, "0");
                bw_bulk_id(w, &nk->id);
                bw_bulk_cstr(w, "TIME");
                bw_bulk_ll(w, nk->delivery_time);
                bw_bulk_cstr(w, "RETRYCOUNT");
                bw_bulk_ull(w, nk->delivery_count);
                bw_bulk_cstr(w, "JUSTID");
                bw_bulk_cstr(w, "FORCE");
            }
        }
    }
}

/* Vector sets: per element a VADD that rebuilds it: the stored vector
 * (dequantized for Q8/BIN) times its norm as an FP32 blob, the set's
 * quantization and M, SETATTR with its attributes.  Replaying adds the
 * same elements with the same stored vectors (VEMB equal to float
 * rounding), but builds its own graph: VLINKS may differ.  (With the RDB
 * preamble, the default, the base keeps the graph as it is.)
 *
 * A REDUCE set cannot be written so: VADD REDUCE takes vectors in the
 * original space, and only their projections are kept, which the
 * projection does not let us invert.  Such a set is written as RESTORE of
 * its DUMP payload (the RDB value, module type hotkv-vec), which restores
 * it exactly, graph included; only HotKV replays that form. */
struct vvisit {
    struct bw *w;
    const char *key;
    size_t klen;
    struct hnsw *h;
    float *v;
    unsigned char *blob;
    const char *quant;
    char m[24];
};

/* A Q8 vector (codes q, range) as a unit vector that VADD quantizes back
 * to the same codes and range: the components coded +-127 at +-range, the
 * others their dequantized values scaled so that the norm is 1 (the
 * original vector's was; the scale is within the quantization error of 1,
 * so no code moves).  Plain dequantization would have a norm off 1 by the
 * quantization error, and the replayed set a range (and so scores) off by
 * as much.  Falls back to plain dequantization when no such scale fits. */
static void q8_unit_vector(const int8_t *q, float range, uint32_t dim, float *out)
{
    double fixed = 0, rest = 0, s = 1;
    int qmax = 0; /* largest code not at the range */
    for (uint32_t i = 0; i < dim; i++) {
        double v = (double)q[i] * range / 127.0;
        if (q[i] == 127 || q[i] == -127) {
            fixed += v * v;
        } else {
            rest += v * v;
            if (abs(q[i]) > qmax)
                qmax = abs(q[i]);
        }
    }
    if (range > 0 && fixed < 1 && rest > 0) {
        /* No code may move by half a step: clamp the scale (then the norm
         * is only closer to 1). */
        double lim = 0.45 / qmax;
        s = sqrt((1 - fixed) / rest);
        if (s > 1 + lim)
            s = 1 + lim;
        if (s < 1 - lim)
            s = 1 - lim;
    }
    for (uint32_t i = 0; i < dim; i++) {
        double v = (double)q[i] * range / 127.0;
        out[i] = (float)(q[i] == 127 || q[i] == -127 ? v : v * s);
    }
}

static void visit_vadd(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    struct vvisit *x = ctx;
    struct bw *w = x->w;
    uint32_t dim = hnsw_dim(x->h);
    float l2 = hnsw_get_vector(x->h, id, x->v);
    if (hnsw_quant(x->h) == HNSW_Q8) {
        size_t n;
        float range;
        const int8_t *q = hnsw_raw(x->h, id, &n, &range);
        if (q && n == dim)
            q8_unit_vector(q, range, dim, x->v);
    }
    for (uint32_t i = 0; i < dim; i++) {
        float f = x->v[i] * l2;
        uint32_t u;
        memcpy(&u, &f, 4);
        x->blob[4 * i] = (unsigned char)u;
        x->blob[4 * i + 1] = (unsigned char)(u >> 8);
        x->blob[4 * i + 2] = (unsigned char)(u >> 16);
        x->blob[4 * i + 3] = (unsigned char)(u >> 24);
    }
    int attrs = attr && alen;
    bw_count(w, '*', attrs ? 10 : 8);
    bw_bulk_cstr(w, "VADD");
    bw_bulk(w, x->key, x->klen);
    bw_bulk_cstr(w, "FP32");
    bw_bulk(w, (const char *)x->blob, (size_t)dim * 4);
    bw_bulk(w, name, nlen);
    bw_bulk_cstr(w, x->quant);
    bw_bulk_cstr(w, "M");
    bw_bulk_cstr(w, x->m);
    if (attrs) {
        bw_bulk_cstr(w, "SETATTR");
        bw_bulk(w, attr, alen);
    }
}

static int rewrite_vset(struct bw *w, const char *key, size_t klen, struct entry *e)
{
    struct vset *vs = entry_ptr(e);
    const float *proj;
    if (vset_reduce_from(vs, &proj)) {
        struct rdb_out o;
        int ver = __atomic_load_n(&cfg.rdb_version, __ATOMIC_RELAXED);
        if (ver < 10 || ver > RDB_VERSION_MAX)
            ver = RDB_VERSION_DEFAULT;
        rdb_out_init_mem(&o);
        o.compress = __atomic_load_n(&cfg.rdbcompression, __ATOMIC_RELAXED);
        if (rdb_save_value(&o, e, ver) < 0) {
            rdb_out_free(&o);
            log_msg(LL_WARNING, "AOF rewrite: a vector set could not be serialized");
            return -1;
        }
        unsigned char foot[8] = {(unsigned char)(ver & 0xff), (unsigned char)(ver >> 8)};
        rdb_w_raw(&o, foot, 2);
        uint64_t crc = crc64(0, o.buf, o.len);
        for (int i = 0; i < 8; i++)
            foot[i] = (unsigned char)(crc >> (8 * i));
        rdb_w_raw(&o, foot, 8);
        bw_count(w, '*', 4);
        bw_bulk_cstr(w, "RESTORE");
        bw_bulk(w, key, klen);
        bw_bulk_cstr(w, "0");
        bw_bulk(w, (const char *)o.buf, o.len);
        rdb_out_free(&o);
        return 0;
    }
    struct hnsw *h = vset_index(vs);
    struct vvisit x = {w, key, klen, h, hk_malloc((size_t)hnsw_dim(h) * sizeof(float)),
                       hk_malloc((size_t)hnsw_dim(h) * 4), NULL, {0}};
    int q = hnsw_quant(h);
    x.quant = q == HNSW_F32 ? "NOQUANT" : q == HNSW_BIN ? "BIN" : "Q8";
    snprintf(x.m, sizeof(x.m), "%u", hnsw_m(h));
    vset_foreach(vs, visit_vadd, &x);
    hk_free(x.v);
    hk_free(x.blob);
    return 0;
}

static int rewrite_key(struct bw *w, struct entry *e, long long now)
{
    long long exp = entry_expire(e);
    if (exp >= 0 && exp <= now)
        return 0; /* expired: nothing to rebuild */
    const char *key = entry_key(e);
    size_t klen = entry_klen(e);
    struct batch b = {w, NULL, key, klen, 0, 0, 1};
    switch (e->type) {
    case OBJ_STRING:
        bw_count(w, '*', 3);
        bw_bulk_cstr(w, "SET");
        bw_bulk(w, key, klen);
        bw_bulk(w, entry_val(e), entry_vlen(e));
        break;
    case OBJ_LIST:
        b.cmd = "RPUSH";
        b.left = obj_len(e);
        list_visit(e, visit_push, &b);
        break;
    case OBJ_SET:
        b.cmd = "SADD";
        b.left = obj_len(e);
        set_visit(e, visit_push, &b);
        break;
    case OBJ_ZSET:
        b.cmd = "ZADD";
        b.per = 2;
        b.left = obj_len(e);
        zset_visit(e, 0, visit_zadd, &b);
        break;
    case OBJ_HASH: {
        struct hvisit h = {{w, "HSET", key, klen, obj_len(e), 0, 2}, hash_min_field_ttl(e) != 0, now};
        hash_visit_fields(e, visit_hash, &h);
        break;
    }
    case OBJ_STREAM:
        rewrite_stream(w, key, klen, e);
        break;
    case OBJ_VSET:
        if (rewrite_vset(w, key, klen, e) < 0)
            return -1;
        break;
    default:
        log_msg(LL_WARNING, "AOF rewrite: unknown type %d", e->type);
        return -1;
    }
    if (exp >= 0) {
        bw_count(w, '*', 3);
        bw_bulk_cstr(w, "PEXPIREAT");
        bw_bulk(w, key, klen);
        bw_bulk_ll(w, exp);
    }
    return 0;
}

static int visit_lib(void *arg, const char *code, size_t len)
{
    struct bw *w = arg;
    bw_count(w, '*', 3);
    bw_bulk_cstr(w, "FUNCTION");
    bw_bulk_cstr(w, "LOAD");
    bw_bulk(w, code, len);
    return 0;
}

/* The whole dataset as commands.  The keyspace must be frozen (a fork
 * child, or no worker running). */
static int rewrite_commands(struct bw *w)
{
    long long now = time_ms();
    long long delay = __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED);
    if (__atomic_load_n(&cfg.aof_timestamp_enabled, __ATOMIC_RELAXED)) {
        char ts[48];
        int n = snprintf(ts, sizeof(ts), "#TS:%lld\r\n", now / 1000);
        bw_raw(w, ts, (size_t)n);
    }
    rdb_fn_foreach_lib(visit_lib, w);
    for (int d = 0; d < ks.ndb && !w->err; d++) {
        int selected = 0;
        for (unsigned s = 0; s < NSLOTS && !w->err; s++) {
            struct table *t = ks.dbs[d]->t[s];
            if (!t || !t->used)
                continue;
            for (uint32_t i = 0; i < t->cap; i++) {
                if (!table_full(t, i))
                    continue;
                struct entry *e = table_get(t, i);
                if (!selected) {
                    bw_count(w, '*', 2);
                    bw_bulk_cstr(w, "SELECT");
                    bw_bulk_ll(w, d);
                    selected = 1;
                }
                if (rewrite_key(w, e, now) < 0)
                    return -1;
                if (rdb_keys_done) /* the child's progress, for the parent's INFO (rdb.h) */
                    atomic_fetch_add_explicit(rdb_keys_done, 1, memory_order_relaxed);
                if (delay > 0) {
                    struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
                    nanosleep(&ts, NULL);
                }
            }
        }
    }
    bw_flush(w);
    return w->err ? -1 : 0;
}

/* The temp file a process writing a base goes through (by its pid). */
static void base_tmp_name(char *out, size_t cap, pid_t pid)
{
    snprintf(out, cap, "%s/temp-rewriteaof-%d.aof", aof_dir(), (int)pid);
}

/* Write a base file at path (through a temp file in the same directory):
 * an RDB with the aof-base aux field, or commands.  0 / -1 (logged). */
static int write_base_file(const char *path, int preamble)
{
    char tmp[1100];
    base_tmp_name(tmp, sizeof(tmp), getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Can not open the temp file for the AOF base: %s", strerror(errno));
        return -1;
    }
    int rc;
    int incremental = __atomic_load_n(&cfg.aof_rewrite_incremental_fsync, __ATOMIC_RELAXED);
    if (preamble) {
        struct rdb_out o;
        struct rdb_save_opts opt;
        rdb_save_opts_from_cfg(&opt);
        opt.aof_preamble = 1;
        rdb_out_init_fd(&o, fd);
        o.compress = opt.compress;
        if (incremental)
            o.fsync_every = AUTOSYNC_BYTES;
        rc = rdb_save(&o, &opt);
        if (rc == 0)
            rc = rdb_out_flush(&o);
        if (rc < 0)
            errno = o.err ? o.err : EIO;
        rdb_out_free(&o);
    } else {
        struct bw *w = hk_calloc(sizeof(*w));
        w->fd = fd;
        w->autosync = incremental;
        rc = rewrite_commands(w);
        if (rc < 0)
            errno = w->err ? w->err : EIO;
        hk_free(w);
    }
    if (rc == 0 && fsync(fd) < 0)
        rc = -1;
    if (rc < 0) {
        log_msg(LL_WARNING, "Write error writing append only file on disk: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        log_msg(LL_WARNING, "Error moving temp append only file on the final destination: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ rewrite --- */
static void rw_tmp_name(char *out, size_t cap, pid_t pid)
{
    snprintf(out, cap, "%s/temp-rewriteaof-bg-%d.aof", aof_dir(), (int)pid);
}

/* pthread_atfork: the rewrite starter's fork splits the stream at the
 * position fed so far (every slot lock is held: nothing is mid-feed). */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&aof_mu);
    if (tl_rw_forking && rw_arm) {
        rw_arm = 0;
        split_armed = 1;
        split_at = atomic_load(&aof_fed_bytes);
        split_fd = pending_fd;
        pending_fd = -1;
        last_db = -1; /* the new file starts with a SELECT */
        last_ts = 0;
        if (atomic_load(&aof_state) == AOF_WAIT_REWRITE) {
            atomic_store(&feeding, 1);
            prop_set_on(1);
        }
        if (writer_waiting)
            pthread_cond_signal(&aof_cv);
    }
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&aof_mu);
}

static void atfork_child(void)
{
    pthread_mutex_unlock(&aof_mu);
}

static void child_main(void)
{
    char tmp[1100];
    rw_tmp_name(tmp, sizeof(tmp), getpid());
    int preamble = rw_preamble;
    /* write_base_file names its own temp file; the parent looks for this one. */
    if (write_base_file(tmp, preamble) == 0) {
        log_msg(LL_NOTICE, "Successfully created the temporary AOF base file %s", tmp);
        persist_child_exit(0);
    }
    persist_child_exit(1);
}

enum { RW_STARTED = 0, RW_SCHEDULED = 1, RW_IN_PROGRESS = 2, RW_ERROR = -1 };

/* Start a background rewrite.  Returns RW_*. */
static int rewrite_start(void)
{
    char name[600], path[1100];
    pthread_mutex_lock(&rw_mu);
    int state = atomic_load(&aof_state);
    if (rw_pid || rw_starting) {
        pthread_mutex_unlock(&rw_mu);
        return RW_IN_PROGRESS;
    }
    if (persist_child_type() != CHILD_NONE) {
        atomic_store(&rw_scheduled, 1);
        pthread_mutex_unlock(&rw_mu);
        return RW_SCHEDULED;
    }
    if (dir_create() < 0) {
        log_msg(LL_WARNING, "Can't open or create append-only dir %s: %s", aof_dir(), strerror(errno));
        atomic_store(&rw_last_ok, 0);
        pthread_mutex_unlock(&rw_mu);
        return RW_ERROR;
    }
    if (!man_loaded) {
        char err[256];
        if (manifest_load_disk(err, sizeof(err)) < 0) {
            log_msg(LL_WARNING, "%s", err);
            atomic_store(&rw_last_ok, 0);
            pthread_mutex_unlock(&rw_mu);
            return RW_ERROR;
        }
    }
    int fd = -1;
    struct aof_manifest nm;
    if (state == AOF_ON) {
        /* The new incr file is listed before anything is written to it. */
        manifest_copy(&nm, &man);
        new_incr_name(&nm, name, sizeof(name));
        path_in_dir(path, sizeof(path), name);
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || manifest_persist(&nm) < 0) {
            log_msg(LL_WARNING, "Can't open the append-only file %s: %s", name, strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(path);
            }
            aof_manifest_free(&nm);
            atomic_store(&rw_last_ok, 0);
            pthread_mutex_unlock(&rw_mu);
            return RW_ERROR;
        }
        aof_manifest_free(&man);
        man = nm;
        log_msg(LL_NOTICE, "Creating AOF incr file %s on background rewrite", name);
    } else if (state == AOF_WAIT_REWRITE) {
        snprintf(tmp_incr_name, sizeof(tmp_incr_name), "temp-%s.incr", cfg.appendfilename);
        path_in_dir(path, sizeof(path), tmp_incr_name);
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            log_msg(LL_WARNING, "Can't open the append-only file %s: %s", tmp_incr_name, strerror(errno));
            atomic_store(&rw_last_ok, 0);
            pthread_mutex_unlock(&rw_mu);
            return RW_ERROR;
        }
        log_msg(LL_NOTICE, "Creating AOF incr file %s on background rewrite", tmp_incr_name);
    }
    /* AOF off: only a new base (the manifest lists no incr file after it). */
    if (state != AOF_OFF) {
        pthread_mutex_lock(&aof_mu);
        pending_fd = fd;
        rw_arm = 1;
        pthread_mutex_unlock(&aof_mu);
    }
    rw_starting = 1;
    atomic_store(&rw_in_progress, 1);
    rw_preamble = __atomic_load_n(&cfg.aof_use_rdb_preamble, __ATOMIC_RELAXED);
    atomic_fetch_add(&rw_count, 1);
    pthread_mutex_unlock(&rw_mu);

    tl_rw_forking = 1;
    pid_t pid = persist_fork(CHILD_AOF);
    tl_rw_forking = 0;
    if (pid == 0)
        child_main(); /* never returns */
    int saved = errno;

    pthread_mutex_lock(&rw_mu);
    rw_starting = 0;
    pthread_cond_broadcast(&rw_cv); /* a fast child may already be reaped */
    pthread_mutex_lock(&aof_mu);
    int not_forked = rw_arm; /* the prepare handler did not run */
    rw_arm = 0;
    if (not_forked)
        pending_fd = -1;
    pthread_mutex_unlock(&aof_mu);
    if (pid < 0) {
        if (state == AOF_OFF) {
            /* nothing was opened */
        } else if (state == AOF_ON) {
            /* The new incr file is in the manifest: go on with it anyway. */
            if (not_forked) {
                pthread_mutex_lock(&aof_mu);
                split_armed = 1;
                split_at = atomic_load(&aof_fed_bytes);
                split_fd = fd;
                last_db = -1;
                pthread_mutex_unlock(&aof_mu);
            }
        } else {
            /* Waiting for the first rewrite: drop the temp incr file. */
            pthread_mutex_lock(&io_mu);
            pthread_mutex_lock(&aof_mu);
            atomic_store(&feeding, 0);
            prop_set_on(0);
            fbuf.len = 0;
            int sfd = split_armed ? split_fd : -1;
            split_armed = 0;
            split_fd = -1;
            pthread_mutex_unlock(&aof_mu);
            if (sfd >= 0)
                close(sfd);
            if (not_forked)
                close(fd);
            if (io_split) {
                if (io_split_fd >= 0)
                    close(io_split_fd);
                io_split = 0;
                io_split_fd = -1;
            }
            if (io_fd >= 0) /* the temp incr, if the split was taken */
                close(io_fd);
            io_fd = -1;
            io_drop_all();
            pthread_mutex_unlock(&io_mu);
            path_in_dir(path, sizeof(path), tmp_incr_name);
            unlink(path);
        }
        if (saved == EBUSY && persist_child_type() != CHILD_NONE) {
            atomic_store(&rw_in_progress, 0);
            atomic_store(&rw_scheduled, 1);
            pthread_mutex_unlock(&rw_mu);
            return RW_SCHEDULED;
        }
        atomic_fetch_sub(&rw_count, 1);
        atomic_store(&rw_in_progress, 0);
        atomic_store(&rw_last_ok, 0);
        log_msg(LL_WARNING, "Can't rewrite append only file in background: fork: %s", strerror(saved));
        pthread_mutex_unlock(&rw_mu);
        errno = saved;
        return RW_ERROR;
    }
    rw_pid = pid;
    rw_start_ms = time_ms();
    atomic_store(&rw_start_s, rw_start_ms / 1000);
    atomic_store(&rw_in_progress, 1);
    atomic_store(&rw_scheduled, 0);
    log_msg(LL_NOTICE, "Background append only file rewriting started by pid %d", (int)pid);
    pthread_mutex_unlock(&rw_mu);
    return RW_STARTED;
}

/* The feed stops and the current file is closed (AOF off).  rw_mu held. */
static void stop_appending(void)
{
    pthread_mutex_lock(&io_mu);
    pthread_mutex_lock(&aof_mu);
    atomic_store(&feeding, 0);
    prop_set_on(0);
    int sfd = split_armed ? split_fd : -1;
    int pfd = pending_fd;
    split_armed = 0;
    split_fd = -1;
    pending_fd = -1;
    rw_arm = 0;
    pthread_mutex_unlock(&aof_mu);
    if (sfd >= 0)
        close(sfd);
    if (pfd >= 0)
        close(pfd);
    io_write();
    if (io_split) {
        if (io_split_fd >= 0)
            close(io_split_fd);
        io_split = 0;
        io_split_fd = -1;
    }
    if (io_fd >= 0) {
        if (fdatasync(io_fd) < 0)
            log_msg(LL_WARNING, "Fail to fsync the AOF file: %s", strerror(errno));
        close(io_fd);
        io_fd = -1;
    }
    io_drop_all(); /* whatever could not be written is given up */
    pthread_mutex_unlock(&io_mu);
    pthread_mutex_lock(&aof_mu);
    last_db = -1;
    pthread_mutex_unlock(&aof_mu);
    aof_set_active(0);
}

void aof_rewrite_done(int ok)
{
    char tmp[1100], name[600], path[1100];
    pthread_mutex_lock(&rw_mu);
    /* The child can exit before rewrite_start has recorded its pid. */
    while (rw_starting)
        pthread_cond_wait(&rw_cv, &rw_mu);
    pid_t pid = rw_pid;
    if (!pid) {
        pthread_mutex_unlock(&rw_mu);
        return;
    }
    rw_pid = 0;
    rw_tmp_name(tmp, sizeof(tmp), pid);
    int state = atomic_load(&aof_state);
    int killed = rw_killing;
    rw_killing = 0;
    if (ok && !killed) {
        log_msg(LL_NOTICE, "Background AOF rewrite terminated with success");
        struct aof_manifest nm;
        manifest_copy(&nm, &man);
        if (nm.base.name) {
            nm.base.type = 'h';
            mlist_add(&nm.hist, &nm.nhist, nm.base.name, nm.base.seq, 'h');
            mfile_free(&nm.base);
        }
        nm.base_seq++;
        snprintf(name, sizeof(name), "%s.%lld.base.%s", cfg.appendfilename, nm.base_seq, rw_preamble ? "rdb" : "aof");
        nm.base.name = hk_strdup(name);
        nm.base.seq = nm.base_seq;
        nm.base.type = 'b';
        path_in_dir(path, sizeof(path), name);
        if (rename(tmp, path) < 0) {
            log_msg(LL_WARNING, "Error trying to rename the temporary AOF base file %s into %s: %s", tmp, name,
                    strerror(errno));
            aof_manifest_free(&nm);
            goto failed;
        }
        log_msg(LL_NOTICE, "Successfully renamed the temporary AOF base file %s into %s", tmp, name);
        char incr_path[1100] = "";
        if (state == AOF_WAIT_REWRITE) {
            char iname[600], tpath[1100];
            new_incr_name(&nm, iname, sizeof(iname));
            path_in_dir(incr_path, sizeof(incr_path), iname);
            path_in_dir(tpath, sizeof(tpath), tmp_incr_name);
            if (rename(tpath, incr_path) < 0) {
                log_msg(LL_WARNING, "Error trying to rename the temporary AOF incr file %s into %s: %s", tpath,
                        incr_path, strerror(errno));
                unlink(path);
                aof_manifest_free(&nm);
                goto failed;
            }
            log_msg(LL_NOTICE, "Successfully renamed the temporary AOF incr file %s into %s", tmp_incr_name, iname);
        }
        /* Every incr file but the one being appended to is now history
         * (all of them when the AOF is off). */
        int keep = state == AOF_OFF ? 0 : 1;
        for (int i = 0; i + keep < nm.nincr; i++) {
            mlist_add(&nm.hist, &nm.nhist, nm.incr[i].name, nm.incr[i].seq, 'h');
            mfile_free(&nm.incr[i]);
        }
        if (keep && nm.nincr > 1)
            nm.incr[0] = nm.incr[nm.nincr - 1];
        nm.nincr = nm.nincr < keep ? nm.nincr : keep;
        if (manifest_persist(&nm) < 0) {
            unlink(path);
            if (incr_path[0]) {
                /* Put the temp incr back: the next try renames it again. */
                char tpath[1100];
                path_in_dir(tpath, sizeof(tpath), tmp_incr_name);
                rename(incr_path, tpath);
            }
            aof_manifest_free(&nm);
            goto failed;
        }
        aof_manifest_free(&man);
        man = nm;
        long long bs = file_size_in_dir(man.base.name, NULL);
        atomic_store(&cur_size, bs + atomic_load(&incr_size));
        atomic_store(&base_size, atomic_load(&cur_size));
        history_delete();
        atomic_store(&rw_last_ok, 1);
        atomic_store(&rw_fail_streak, 0);
        if (state == AOF_WAIT_REWRITE) {
            atomic_store(&aof_state, AOF_ON);
            tmp_incr_name[0] = 0;
        }
        log_msg(LL_NOTICE, "Background AOF rewrite finished successfully");
        goto out;
    }
    if (killed)
        log_msg(LL_NOTICE, "Background AOF rewrite stopped (AOF turned off)");
    else
        log_msg(LL_WARNING, "Background AOF rewrite terminated with error");
failed:
    unlink(tmp);
    {
        /* The child writes its base through a temp file of its own
         * (write_base_file): a child killed mid-write leaves it. */
        char inner[1100];
        base_tmp_name(inner, sizeof(inner), pid);
        unlink(inner);
    }
    if (!killed) {
        atomic_store(&rw_last_ok, 0);
        atomic_fetch_add(&rw_fail_streak, 1);
    }
    if (state == AOF_WAIT_REWRITE) {
        /* Start over: a new temp incr file at the next fork. */
        pthread_mutex_lock(&io_mu);
        pthread_mutex_lock(&aof_mu);
        atomic_store(&feeding, 0);
        prop_set_on(0);
        fbuf.len = 0;
        pthread_mutex_unlock(&aof_mu);
        io_write();
        if (io_fd >= 0)
            close(io_fd);
        io_fd = -1;
        io_drop_all();
        pthread_mutex_unlock(&io_mu);
        path_in_dir(path, sizeof(path), tmp_incr_name);
        log_msg(LL_NOTICE, "Removing the temp incr aof file %s", tmp_incr_name);
        unlink(path);
        atomic_store(&rw_scheduled, 1);
    }
out:
    atomic_store(&rw_last_secs, (time_ms() - rw_start_ms) / 1000);
    atomic_store(&rw_start_s, -1);
    atomic_store(&rw_in_progress, 0); /* last: INFO shows the rewrite until its files are in place */
    pthread_mutex_unlock(&rw_mu);
}

/* AOF rewrite limiting after repeated failures (as Redis: 1, 2, 4 ... 60
 * minutes once three in a row failed).  rw_mu held. */
static int rewrite_limited(long long now_s)
{
    static int delay_min;
    static long long next_s;
    if (atomic_load(&rw_fail_streak) < 3) {
        delay_min = 0;
        next_s = 0;
        return 0;
    }
    if (next_s) {
        if (now_s < next_s)
            return 1;
        next_s = 0;
        return 0;
    }
    delay_min = delay_min ? delay_min * 2 : 1;
    if (delay_min > 60)
        delay_min = 60;
    next_s = now_s + delay_min * 60;
    log_msg(LL_WARNING, "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes",
            delay_min);
    return 1;
}

void aof_cron(void)
{
    int state = atomic_load(&aof_state);
    if (atomic_load(&rw_in_progress))
        return;
    if (atomic_load(&rw_scheduled)) {
        if (persist_child_type() == CHILD_NONE)
            rewrite_start();
        return;
    }
    if (state != AOF_ON)
        return;
    int perc = __atomic_load_n(&cfg.auto_aof_rewrite_percentage, __ATOMIC_RELAXED);
    long long minsz = __atomic_load_n(&cfg.auto_aof_rewrite_min_size, __ATOMIC_RELAXED);
    long long cur = atomic_load(&cur_size);
    if (perc <= 0 || cur <= minsz)
        return;
    long long base = atomic_load(&base_size);
    if (base <= 0)
        base = 1;
    long long growth = (cur * 100 / base) - 100;
    if (growth < perc)
        return;
    pthread_mutex_lock(&rw_mu);
    int limited = rewrite_limited(time_ms() / 1000);
    pthread_mutex_unlock(&rw_mu);
    if (limited)
        return;
    log_msg(LL_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth", growth);
    rewrite_start();
}

int aof_bgrewrite(void)
{
    if (atomic_load(&rw_in_progress) || persist_child_type() == CHILD_AOF)
        return PERSIST_IN_PROGRESS;
    if (persist_child_type() != CHILD_NONE || persist_lockctx_active()) {
        atomic_store(&rw_scheduled, 1);
        atomic_store(&rw_fail_streak, 0);
        return PERSIST_SCHEDULED;
    }
    int r = rewrite_start(); /* with the AOF off too: a new base, as Redis */
    if (r == RW_STARTED)
        return PERSIST_OK;
    if (r == RW_SCHEDULED)
        return PERSIST_SCHEDULED;
    if (r == RW_IN_PROGRESS)
        return PERSIST_IN_PROGRESS;
    return PERSIST_ERR;
}

/* ------------------------------------------------- CONFIG SET appendonly --- */
int aof_set_appendonly(int on, char *err, size_t errlen)
{
    if (on) {
        pthread_mutex_lock(&rw_mu);
        if (atomic_load(&aof_state) != AOF_OFF) {
            pthread_mutex_unlock(&rw_mu);
            return 0;
        }
        if (!man_loaded) {
            char e[256];
            if (manifest_load_disk(e, sizeof(e)) < 0) {
                snprintf(err, errlen, "%s", e);
                pthread_mutex_unlock(&rw_mu);
                return -1;
            }
        }
        atomic_store(&aof_state, AOF_WAIT_REWRITE);
        __atomic_store_n(&cfg.appendonly, 1, __ATOMIC_RELAXED);
        aof_set_active(1);
        thread_start();
        pthread_mutex_unlock(&rw_mu);
        /* A rewrite started while the AOF was off does not carry the writes
         * made meanwhile: kill it, start again. */
        pthread_mutex_lock(&rw_mu);
        int running = rw_pid != 0;
        if (running)
            rw_killing = 1;
        pthread_mutex_unlock(&rw_mu);
        if (running)
            persist_kill_child();
        int r = (persist_child_type() != CHILD_NONE || persist_lockctx_active()) ? RW_SCHEDULED : rewrite_start();
        if (r == RW_SCHEDULED || r == RW_IN_PROGRESS) {
            atomic_store(&rw_scheduled, 1);
            log_msg(LL_NOTICE, "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
        } else if (r != RW_STARTED) {
            pthread_mutex_lock(&rw_mu);
            atomic_store(&aof_state, AOF_OFF);
            __atomic_store_n(&cfg.appendonly, 0, __ATOMIC_RELAXED);
            aof_set_active(0);
            pthread_mutex_unlock(&rw_mu);
            log_msg(LL_WARNING, "HotKV needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
            snprintf(err, errlen, "Failed to enable the AOF (see the server log)");
            return -1;
        }
        atomic_store(&write_err, 0);
        return 0;
    }
    /* Off: the running rewrite is useless now. */
    pthread_mutex_lock(&rw_mu);
    int running = rw_pid != 0;
    if (running)
        rw_killing = 1;
    pthread_mutex_unlock(&rw_mu);
    if (running)
        persist_kill_child();
    pthread_mutex_lock(&rw_mu);
    if (atomic_load(&aof_state) != AOF_OFF) {
        stop_appending();
        if (tmp_incr_name[0]) {
            char path[1100];
            path_in_dir(path, sizeof(path), tmp_incr_name);
            unlink(path);
            tmp_incr_name[0] = 0;
        }
        atomic_store(&aof_state, AOF_OFF);
        atomic_store(&rw_scheduled, 0);
        atomic_store(&write_err, 0);
    }
    __atomic_store_n(&cfg.appendonly, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rw_mu);
    return 0;
}

__attribute__((constructor)) static void aof_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&aof_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* --------------------------------------------------------------- INFO --- */
size_t aof_buffer_bytes(void)
{
    size_t n;
    pthread_mutex_lock(&aof_mu);
    n = fbuf.cap;
    pthread_mutex_unlock(&aof_mu);
    pthread_mutex_lock(&io_mu);
    n += wbuf.cap;
    pthread_mutex_unlock(&io_mu);
    return n;
}

size_t aof_info_fmt(char *out, size_t cap)
{
    int state = atomic_load(&aof_state);
    long long start = atomic_load(&rw_start_s);
    long long cur_secs = atomic_load(&rw_in_progress) && start >= 0 ? time_ms() / 1000 - start : -1;
    int n = snprintf(out, cap,
                     "aof_enabled:%d\r\n"
                     "aof_rewrite_in_progress:%d\r\n"
                     "aof_rewrite_scheduled:%d\r\n"
                     "aof_last_rewrite_time_sec:%lld\r\n"
                     "aof_current_rewrite_time_sec:%lld\r\n"
                     "aof_last_bgrewrite_status:%s\r\n"
                     "aof_rewrites:%lld\r\n"
                     "aof_rewrites_consecutive_failures:%lld\r\n"
                     "aof_last_write_status:%s\r\n"
                     "aof_last_cow_size:%zu\r\n"
                     "module_fork_in_progress:0\r\n"
                     "module_fork_last_cow_size:0\r\n",
                     state != AOF_OFF, atomic_load(&rw_in_progress), atomic_load(&rw_scheduled),
                     atomic_load(&rw_last_secs), cur_secs, atomic_load(&rw_last_ok) ? "ok" : "err",
                     atomic_load(&rw_count), atomic_load(&rw_fail_streak), atomic_load(&write_err) ? "err" : "ok",
                     persist_last_cow_size(CHILD_AOF));
    if (n < 0 || (size_t)n >= cap)
        return n < 0 ? 0 : cap - 1;
    size_t len = (size_t)n;
    if (state != AOF_OFF) {
        pthread_mutex_lock(&aof_mu);
        size_t buffered = fbuf.len;
        pthread_mutex_unlock(&aof_mu);
        n = snprintf(out + len, cap - len,
                     "aof_current_size:%lld\r\n"
                     "aof_base_size:%lld\r\n"
                     "aof_pending_rewrite:%d\r\n"
                     "aof_buffer_length:%zu\r\n"
                     "aof_pending_bio_fsync:%d\r\n"
                     "aof_delayed_fsync:%llu\r\n",
                     atomic_load(&cur_size), atomic_load(&base_size), atomic_load(&rw_scheduled), buffered,
                     atomic_load(&fsync_running), atomic_load(&delayed_fsync));
        if (n > 0)
            len += (size_t)n < cap - len ? (size_t)n : cap - len - 1;
    }
    return len;
}

/* ----------------------------------------------------------- shutdown --- */
int aof_writing_initial(void)
{
    return atomic_load(&aof_state) == AOF_WAIT_REWRITE;
}

void aof_shutdown(void)
{
    pthread_mutex_lock(&rw_mu);
    if (atomic_load(&aof_state) != AOF_OFF) {
        log_msg(LL_NOTICE, "Calling fsync() on the AOF file.");
        stop_appending();
        if (tmp_incr_name[0]) {
            char path[1100];
            path_in_dir(path, sizeof(path), tmp_incr_name);
            unlink(path);
            tmp_incr_name[0] = 0;
        }
        atomic_store(&aof_state, AOF_OFF);
    }
    pthread_mutex_unlock(&rw_mu);
    thread_stop();
}

/* ------------------------------------------------------------ loading --- */
enum { LOAD_OK = 0, LOAD_EMPTY, LOAD_TRUNCATED, LOAD_NOT_EXIST, LOAD_OPEN_ERR, LOAD_FAILED };

struct rd {
    int fd;
    char *buf;
    size_t pos, len, cap;
    unsigned long long off; /* file offset of buf[0] */
};

static int rd_fill(struct rd *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->off += r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        r->cap *= 2;
        r->buf = hk_realloc(r->buf, r->cap);
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        r->len += (size_t)n;
        return (int)(n > 0);
    }
}

static unsigned long long rd_offset(const struct rd *r)
{
    return r->off + r->pos;
}

/* A line up to "\n" (max bytes): 1 ok (*line, *n without CRLF), 0 EOF
 * before any byte, -2 EOF inside the line, -1 read error, -3 too long. */
static int rd_line(struct rd *r, const char **line, size_t *n, size_t max)
{
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (nl) {
            size_t l = (size_t)(nl - (r->buf + r->pos));
            *line = r->buf + r->pos;
            *n = l > 0 && nl[-1] == '\r' ? l - 1 : l;
            r->pos += l + 1;
            return 1;
        }
        if (r->len - r->pos > max)
            return -3;
        size_t had = r->len - r->pos;
        int f = rd_fill(r);
        if (f < 0)
            return -1;
        if (f == 0)
            return had ? -2 : 0;
    }
}

/* n bytes into dst: 1 ok, -2 EOF before them, -1 read error. */
static int rd_exact(struct rd *r, char *dst, size_t n)
{
    while (n) {
        if (r->pos == r->len) {
            r->pos = r->len = 0; /* direct reads for big payloads */
            if (n >= r->cap) {
                ssize_t k = read(r->fd, dst, n);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k < 0)
                    return -1;
                if (k == 0)
                    return -2;
                r->off += (unsigned long long)k;
                dst += k;
                n -= (size_t)k;
                continue;
            }
            int f = rd_fill(r);
            if (f < 0)
                return -1;
            if (f == 0)
                return -2;
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(dst, r->buf + r->pos, k);
        r->pos += k;
        dst += k;
        n -= k;
    }
    return 1;
}

/* The commands run through the replayer cmd registered (aof.h); none:
 * every command is unknown. */
static const struct aof_replayer *replayer;

void aof_set_replayer(const struct aof_replayer *r)
{
    replayer = r;
}

struct qcmd {
    const void *cmd; /* the replayer's handle */
    int argc;
    char **argv;
    size_t *lens;
};

struct loader {
    void *rs; /* the replayer's client (NULL without a replayer) */
    int in_multi;
    struct qcmd *q;
    int nq, capq;
    unsigned long long commands;
    long long delay_us;
};

/* The replayer's begin() takes every slot lock (a lock context, nested in
 * the caller's when DEBUG LOADAOF holds one already). */
static void loader_init(struct loader *L)
{
    memset(L, 0, sizeof(*L));
    if (replayer)
        L->rs = replayer->begin();
    L->delay_us = __atomic_load_n(&cfg.key_load_delay, __ATOMIC_RELAXED);
}

static void queue_clear(struct loader *L)
{
    for (int i = 0; i < L->nq; i++) {
        for (int k = 0; k < L->q[i].argc; k++)
            hk_free(L->q[i].argv[k]);
        hk_free(L->q[i].argv);
        hk_free(L->q[i].lens);
    }
    L->nq = 0;
    L->in_multi = 0;
}

static void loader_free(struct loader *L)
{
    queue_clear(L);
    hk_free(L->q);
    if (replayer)
        replayer->end(L->rs);
}

static int load_lookup(int argc, char **argv, size_t *lens, const void **cmd, const char **name)
{
    *cmd = NULL;
    *name = NULL;
    return replayer ? replayer->lookup(argc, argv, lens, cmd, name) : AOF_REPLAY_UNKNOWN;
}

static void run_one(struct loader *L, const void *cmd, int argc, char **argv, size_t *lens)
{
    replayer->run(L->rs, cmd, argc, argv, lens);
    L->commands++;
    if (L->delay_us > 0) {
        struct timespec ts = {L->delay_us / 1000000, (L->delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

/* One command read from a file: run it, or queue it inside MULTI.
 * 0, or -1 with err (unknown command, wrong arity). */
static int load_exec(struct loader *L, int argc, char **argv, size_t *lens, const char *fname, char *err, size_t errlen,
                     int *took)
{
    const void *cmd;
    const char *name;
    int kind = load_lookup(argc, argv, lens, &cmd, &name);
    *took = 0;
    if (kind == AOF_REPLAY_UNKNOWN) {
        snprintf(err, errlen, "Unknown command '%.*s' reading the append only file %s", (int)(lens[0] > 64 ? 64 : lens[0]),
                 argv[0], fname);
        return -1;
    }
    if (kind == AOF_REPLAY_ARITY) {
        snprintf(err, errlen, "Wrong number of arguments for '%s' reading the append only file %s", name, fname);
        return -1;
    }
    if (kind == AOF_REPLAY_MULTI) {
        if (!L->in_multi) {
            L->in_multi = 1;
            L->nq = 0;
        }
        return 0;
    }
    if (kind == AOF_REPLAY_EXEC) {
        if (!L->in_multi)
            return 0;
        for (int i = 0; i < L->nq; i++) {
            struct qcmd *q = &L->q[i];
            run_one(L, q->cmd, q->argc, q->argv, q->lens);
        }
        queue_clear(L);
        return 0;
    }
    if (L->in_multi) {
        if (L->nq == L->capq) {
            L->capq = L->capq ? L->capq * 2 : 8;
            L->q = hk_realloc(L->q, sizeof(*L->q) * (size_t)L->capq);
        }
        struct qcmd *q = &L->q[L->nq++];
        q->cmd = cmd;
        q->argc = argc;
        q->argv = argv;
        q->lens = lens;
        *took = 1; /* the queue owns argv now */
        return 0;
    }
    run_one(L, cmd, argc, argv, lens);
    return 0;
}

static void free_args(int argc, char **argv, size_t *lens)
{
    for (int i = 0; i < argc; i++)
        hk_free(argv[i]);
    hk_free(argv);
    hk_free(lens);
}

/* Load one file of the AOF.  last: the last file listed (a truncated tail
 * may be cut there with aof-load-truncated yes). */
static int load_file(struct loader *L, const char *fname, int last, char *err, size_t errlen)
{
    char path[1100];
    path_in_dir(path, sizeof(path), fname);
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT) {
            snprintf(err, errlen, "The append log file %s doesn't exist: %s", fname, strerror(e));
            return LOAD_NOT_EXIST;
        }
        snprintf(err, errlen, "can't open the append log file %s for reading: %s", fname, strerror(e));
        return LOAD_OPEN_ERR;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        close(fd);
        return LOAD_EMPTY;
    }
    unsigned long long fsize = (unsigned long long)st.st_size;
    int ret = LOAD_OK;
    if (replayer)
        replayer->reset_db(L->rs); /* every file starts in database 0 */
    char sig[5];
    ssize_t sn = pread(fd, sig, 5, 0);
    if (sn == 5 && memcmp(sig, "REDIS", 5) == 0) {
        log_msg(LL_NOTICE, "Reading RDB base file on AOF loading...");
        struct rdb_in in;
        struct rdb_load_stats ls;
        memset(&ls, 0, sizeof(ls));
        rdb_in_init_fd(&in, fd);
        int rc = rdb_load_in(&in, &ls);
        if (rc < 0) {
            snprintf(err, errlen, "Error reading the RDB base file %s, AOF loading aborted: %s", fname, in.err);
            rdb_in_free(&in);
            close(fd);
            return LOAD_FAILED;
        }
        rdb_in_free(&in); /* leaves fd just after the RDB */
    }
    struct rd r = {fd, hk_malloc(65536), 0, 0, 65536, 0};
    off_t start = lseek(fd, 0, SEEK_CUR);
    r.off = start > 0 ? (unsigned long long)start : 0;
    unsigned long long valid_up_to = r.off, valid_before_multi = r.off;
    int in_multi_before = 0;
    for (;;) {
        const char *line;
        size_t ln;
        int rc = rd_line(&r, &line, &ln, 1024);
        if (rc == 0)
            break;
        if (rc == -1)
            goto readerr;
        if (rc == -2)
            goto uxeof;
        if (rc == -3)
            goto fmterr;
        if (ln > 0 && line[0] == '#') {
            valid_up_to = rd_offset(&r);
            continue; /* annotation (#TS:...) */
        }
        if (ln < 2 || line[0] != '*')
            goto fmterr;
        long long argc;
        if (!str_to_ll(line + 1, ln - 1, &argc) || argc < 1 || argc > INT_MAX)
            goto fmterr;
        /* Sized as the arguments arrive: a corrupt count allocates nothing. */
        size_t acap = argc < 64 ? (size_t)argc : 64;
        char **argv = hk_malloc(sizeof(char *) * acap);
        size_t *lens = hk_malloc(sizeof(size_t) * acap);
        int got = 0;
        for (long long i = 0; i < argc; i++) {
            if ((size_t)i == acap) {
                acap = acap * 2 < (size_t)argc ? acap * 2 : (size_t)argc;
                argv = hk_realloc(argv, sizeof(char *) * acap);
                lens = hk_realloc(lens, sizeof(size_t) * acap);
            }
            rc = rd_line(&r, &line, &ln, 1024);
            if (rc <= 0 || rc == -3) {
                free_args(got, argv, lens);
                if (rc == 0 || rc == -2)
                    goto uxeof;
                if (rc == -1)
                    goto readerr;
                goto fmterr;
            }
            long long len;
            if (ln < 2 || line[0] != '$' || !str_to_ll(line + 1, ln - 1, &len) || len < 0) {
                free_args(got, argv, lens);
                goto fmterr;
            }
            if (rd_offset(&r) + (unsigned long long)len + 2 > fsize) {
                free_args(got, argv, lens);
                goto uxeof; /* the payload runs past the end of the file */
            }
            argv[i] = hk_malloc((size_t)len + 1);
            got++;
            char crlf[2];
            rc = rd_exact(&r, argv[i], (size_t)len);
            if (rc == 1)
                rc = rd_exact(&r, crlf, 2);
            if (rc != 1) {
                free_args(got, argv, lens);
                if (rc == -2)
                    goto uxeof;
                goto readerr;
            }
            if (crlf[0] != '\r' || crlf[1] != '\n') {
                free_args(got, argv, lens);
                goto fmterr;
            }
            argv[i][len] = 0;
            lens[i] = (size_t)len;
        }
        in_multi_before = L->in_multi;
        int took;
        if (load_exec(L, (int)argc, argv, lens, fname, err, errlen, &took) < 0) {
            free_args((int)argc, argv, lens);
            ret = LOAD_FAILED;
            goto cleanup;
        }
        if (!took)
            free_args((int)argc, argv, lens);
        if (!in_multi_before && L->in_multi)
            valid_before_multi = valid_up_to;
        valid_up_to = rd_offset(&r);
    }
    if (L->in_multi) {
        log_msg(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", fname);
        queue_clear(L);
        valid_up_to = valid_before_multi;
        goto uxeof;
    }
    goto cleanup;
readerr:
    snprintf(err, errlen, "Unrecoverable error reading the append only file %s: %s", fname, strerror(errno));
    ret = LOAD_FAILED;
    goto cleanup;
uxeof:
    queue_clear(L);
    if (__atomic_load_n(&cfg.aof_load_truncated, __ATOMIC_RELAXED) && last) {
        log_msg(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", fname);
        log_msg(LL_WARNING, "!!! Truncating the AOF %s at offset %llu !!!", fname, valid_up_to);
        if (ftruncate(fd, (off_t)valid_up_to) < 0) {
            log_msg(LL_WARNING, "Error truncating the AOF file %s: %s", fname, strerror(errno));
        } else {
            log_msg(LL_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", fname);
            ret = LOAD_TRUNCATED;
            goto cleanup;
        }
    }
    snprintf(err, errlen,
             "Unexpected end of file reading the append only file %s (last valid command ends at offset %llu). You can: "
             "1) Make a backup of your AOF file, then use ./hotkv-check-aof --fix <filename.manifest>. "
             "2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.",
             fname, valid_up_to);
    ret = LOAD_FAILED;
    goto cleanup;
fmterr:
    snprintf(err, errlen,
             "Bad file format reading the append only file %s at offset %llu: make a backup of your AOF file, then use "
             "./hotkv-check-aof --fix <filename.manifest>",
             fname, valid_up_to);
    ret = LOAD_FAILED;
cleanup:
    queue_clear(L);
    hk_free(r.buf);
    close(fd);
    return ret;
}

/* Redis < 7: a single appendonly.aof in `dir`.  Move it into the AOF
 * directory as the base of a new manifest (as Redis upgrades it).  rw_mu. */
static int upgrade_old_aof(char *err, size_t errlen)
{
    const char *old = cfg.appendfilename;
    if (dir_create() < 0) {
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", aof_dir(), strerror(errno));
        return -1;
    }
    aof_manifest_free(&man);
    man.base.name = hk_strdup(old);
    man.base.seq = 1;
    man.base.type = 'b';
    man.base_seq = 1;
    if (manifest_persist(&man) < 0) {
        snprintf(err, errlen, "can't write the AOF manifest while upgrading %s", old);
        return -1;
    }
    char dst[1100];
    path_in_dir(dst, sizeof(dst), old);
    if (rename(old, dst) < 0) {
        snprintf(err, errlen, "Error trying to move the old AOF file %s into dir %s: %s", old, aof_dir(), strerror(errno));
        return -1;
    }
    log_msg(LL_NOTICE, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", old, aof_dir());
    return 0;
}

/* After loading: make sure there is a base and an incr file to append to,
 * open it, start the writer.  rw_mu held. */
static int open_at_startup(char *err, size_t errlen)
{
    char name[600], path[1100];
    if (dir_create() < 0) {
        snprintf(err, errlen, "Can't open or create append-only dir %s: %s", aof_dir(), strerror(errno));
        return -1;
    }
    if (!man.base.name && man.nincr == 0) {
        int pre = __atomic_load_n(&cfg.aof_use_rdb_preamble, __ATOMIC_RELAXED);
        man.base_seq++;
        snprintf(name, sizeof(name), "%s.%lld.base.%s", cfg.appendfilename, man.base_seq, pre ? "rdb" : "aof");
        path_in_dir(path, sizeof(path), name);
        if (write_base_file(path, pre) < 0) {
            snprintf(err, errlen, "can't create the AOF base file %s", name);
            return -1;
        }
        man.base.name = hk_strdup(name);
        man.base.seq = man.base_seq;
        man.base.type = 'b';
        log_msg(LL_NOTICE, "Creating AOF base file %s on server start", name);
    }
    int created = man.nincr == 0;
    if (created)
        new_incr_name(&man, name, sizeof(name));
    else
        snprintf(name, sizeof(name), "%s", man.incr[man.nincr - 1].name);
    path_in_dir(path, sizeof(path), name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Can't open the append-only file %s: %s", name, strerror(errno));
        return -1;
    }
    if (manifest_persist(&man) < 0) {
        close(fd);
        snprintf(err, errlen, "can't write the AOF manifest");
        return -1;
    }
    struct stat st;
    long long isz = fstat(fd, &st) == 0 ? (long long)st.st_size : 0;
    log_msg(LL_NOTICE, "%s AOF incr file %s on server start", created ? "Creating" : "Opening", name);
    pthread_mutex_lock(&io_mu);
    io_fd = fd;
    io_last_fsync_ms = time_ms();
    atomic_store(&incr_size, isz);
    pthread_mutex_unlock(&io_mu);
    long long total = 0;
    if (man.base.name)
        total += file_size_in_dir(man.base.name, NULL);
    for (int i = 0; i < man.nincr; i++)
        total += file_size_in_dir(man.incr[i].name, NULL);
    atomic_store(&cur_size, total);
    if (atomic_load(&base_size) == 0)
        atomic_store(&base_size, man.base.name ? file_size_in_dir(man.base.name, NULL) : 0);
    pthread_mutex_lock(&aof_mu);
    last_db = -1;
    atomic_store(&feeding, 1);
    prop_set_on(1);
    pthread_mutex_unlock(&aof_mu);
    atomic_store(&aof_state, AOF_ON);
    aof_set_active(1);
    thread_start();
    return 0;
}

int aof_load_at_startup(char *err, size_t errlen)
{
    char e[1536];
    err[0] = 0;
    pthread_mutex_lock(&rw_mu);
    if (manifest_load_disk(e, sizeof(e)) < 0) {
        snprintf(err, errlen, "%s", e);
        pthread_mutex_unlock(&rw_mu);
        return -1;
    }
    /* An appendonly.aof from Redis < 7 in `dir`. */
    if (file_exists(cfg.appendfilename)) {
        char inside[1100];
        path_in_dir(inside, sizeof(inside), cfg.appendfilename);
        if (!dir_exists(aof_dir()) || (!man.base.name && man.nincr == 0) ||
            (man.base.name && man.nincr == 0 && !strcmp(man.base.name, cfg.appendfilename) && !file_exists(inside))) {
            if (upgrade_old_aof(e, sizeof(e)) < 0) {
                snprintf(err, errlen, "%s", e);
                pthread_mutex_unlock(&rw_mu);
                return -1;
            }
        }
    }
    if (man.base.name || man.nincr) {
        int total = (man.base.name ? 1 : 0) + man.nincr, num = 0;
        long long total_size = 0;
        const char *gone = NULL;
        for (int i = -1; i < man.nincr; i++) {
            const char *name = i < 0 ? man.base.name : man.incr[i].name;
            int missing = 0;
            if (!name)
                continue;
            total_size += file_size_in_dir(name, &missing);
            if (missing && !gone)
                gone = name;
        }
        if (gone) {
            /* The file's name and the errno text, as Redis reports it. */
            snprintf(err, errlen, "the AOF file %s listed in the manifest is missing in %s: %s", gone, aof_dir(),
                     strerror(ENOENT));
            pthread_mutex_unlock(&rw_mu);
            return -1;
        }
        if (total_size > 0) {
            long long t0 = time_ms();
            struct loader *L = hk_malloc(sizeof(*L));
            loader_init(L);
            db_loading = 1;
            int rc = LOAD_OK;
            if (man.base.name) {
                long long t1 = time_ms();
                rc = load_file(L, man.base.name, ++num == total, e, sizeof(e));
                if (rc == LOAD_OK || (rc == LOAD_TRUNCATED && num == total))
                    log_msg(LL_NOTICE, "DB loaded from base file %s: %.3f seconds", man.base.name,
                            (double)(time_ms() - t1) / 1000);
                if (rc == LOAD_TRUNCATED && num != total) {
                    snprintf(e, sizeof(e), "Fatal error: the truncated file is not the last file");
                    rc = LOAD_FAILED;
                }
                atomic_store(&base_size, file_size_in_dir(man.base.name, NULL));
            }
            for (int i = 0; i < man.nincr && (rc == LOAD_OK || rc == LOAD_EMPTY || rc == LOAD_TRUNCATED); i++) {
                long long t1 = time_ms();
                rc = load_file(L, man.incr[i].name, ++num == total, e, sizeof(e));
                if (rc == LOAD_OK || (rc == LOAD_TRUNCATED && num == total))
                    log_msg(LL_NOTICE, "DB loaded from incr file %s: %.3f seconds", man.incr[i].name,
                            (double)(time_ms() - t1) / 1000);
                if (rc == LOAD_TRUNCATED && num != total) {
                    snprintf(e, sizeof(e), "Fatal error: the truncated file is not the last file");
                    rc = LOAD_FAILED;
                }
            }
            db_loading = 0;
            loader_free(L);
            hk_free(L);
            if (rc == LOAD_FAILED || rc == LOAD_OPEN_ERR || rc == LOAD_NOT_EXIST) {
                snprintf(err, errlen, "%s", e);
                pthread_mutex_unlock(&rw_mu);
                return -1;
            }
            log_msg(LL_NOTICE, "DB loaded from append only file: %.3f seconds", (double)(time_ms() - t0) / 1000);
        }
    }
    int rc = open_at_startup(e, sizeof(e));
    if (rc < 0)
        snprintf(err, errlen, "%s", e);
    pthread_mutex_unlock(&rw_mu);
    return rc;
}

/* DEBUG LOADAOF (cmd/persistence.c holds the script mutex and every slot
 * lock): write out what is pending, empty the keyspace and load it back
 * from the AOF files. */
int aof_debug_load(char *err, size_t errlen)
{
    if (atomic_load(&aof_state) == AOF_ON) {
        pthread_mutex_lock(&io_mu);
        io_write();
        pthread_mutex_unlock(&io_mu);
    }
    for (int i = 0; i < ks.ndb; i++)
        db_flush(i);
    pthread_mutex_lock(&rw_mu);
    int rc = manifest_load_disk(err, errlen);
    if (rc == 0 && (man.base.name || man.nincr)) {
        struct loader *L = hk_malloc(sizeof(*L));
        loader_init(L);
        int saved_loading = db_loading;
        db_loading = 1;
        /* The function libraries come back from the AOF too. */
        char *fa[3] = {"FUNCTION", "FLUSH", "SYNC"};
        size_t fl[3] = {8, 5, 4};
        const void *fcmd;
        const char *fcmd_name;
        if (load_lookup(3, fa, fl, &fcmd, &fcmd_name) == AOF_REPLAY_CMD)
            run_one(L, fcmd, 3, fa, fl);
        int total = (man.base.name ? 1 : 0) + man.nincr, num = 0, r = LOAD_OK;
        if (man.base.name)
            r = load_file(L, man.base.name, ++num == total, err, errlen);
        for (int i = 0; i < man.nincr && (r == LOAD_OK || r == LOAD_EMPTY || r == LOAD_TRUNCATED); i++)
            r = load_file(L, man.incr[i].name, ++num == total, err, errlen);
        db_loading = saved_loading;
        loader_free(L);
        hk_free(L);
        if (r != LOAD_OK && r != LOAD_EMPTY && r != LOAD_TRUNCATED)
            rc = -1;
    }
    pthread_mutex_unlock(&rw_mu);
    return rc;
}
