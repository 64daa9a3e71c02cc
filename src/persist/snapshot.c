/* snapshot.c - see snapshot.h.
 *
 * Shared state (struct snap, below) is guarded by snap_mu; the fields INFO
 * and the write gate read on every call are also kept in atomics so a
 * reader never waits behind a save.  Lock order: script mutex, slot locks,
 * snap_mu (snap_mu is never held while waiting for anything else). */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/latency_monitor.h"
#include "../base/log.h"
#include "../base/malloc_stats.h"
#include "../base/mem.h"
#include "../base/slab.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../net/worker.h"
#include "../server.h"
#include "rdb.h"
#include "repl.h"
#include "replica.h"

static pthread_mutex_t snap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pid_t child;                 /* running child, 0 if none */
    int child_type;
    long long child_start_ms;
    unsigned long long dirty_before; /* dirty counter when the BGSAVE forked */
    int bgsave_scheduled;
    long long last_try_ms;       /* last BGSAVE attempt by the save points */
    int last_bgsave_ok;
    long long last_bgsave_secs;  /* duration of the last BGSAVE, -1 none */
    unsigned long long saves;
    size_t cow_current, cow_peak, last_cow, last_cow_aof;
    long long cow_sampled_ms;
    unsigned long long forks;
    long long fork_usec;
    unsigned long long loaded_keys, loaded_expired;
    unsigned long long child_keys;   /* keys in the dataset when it forked */
} st = {.last_bgsave_ok = 1, .last_bgsave_secs = -1};

static size_t child_cow_bytes(pid_t pid);
/* One page shared with the children (MAP_SHARED survives fork): a child
 * stores its final copy-on-write size there just before it exits, so the
 * figure is exact even when the save ends between two samples. */
static _Atomic size_t *child_cow_final;
static _Atomic long long lastsave_s;          /* LASTSAVE */
static _Atomic unsigned long long dirty_saved; /* dirty counter at the last successful save */
static atomic_int write_err;                  /* last BGSAVE failed (MISCONF gate) */
static atomic_int persist_running;
static pthread_t persist_thread;

static unsigned long long dirty_now(void)
{
    return prop_dirty_total ? prop_dirty_total() : 0;
}

long long persist_lastsave(void)
{
    return atomic_load(&lastsave_s);
}

unsigned long long persist_total_forks(void)
{
    pthread_mutex_lock(&snap_mu);
    unsigned long long n = st.forks;
    pthread_mutex_unlock(&snap_mu);
    return n;
}

long long persist_latest_fork_usec(void)
{
    pthread_mutex_lock(&snap_mu);
    long long n = st.fork_usec;
    pthread_mutex_unlock(&snap_mu);
    return n;
}

int persist_child_type(void)
{
    pthread_mutex_lock(&snap_mu);
    int t = st.child ? st.child_type : CHILD_NONE;
    pthread_mutex_unlock(&snap_mu);
    return t;
}

static void rdb_opts(struct rdb_save_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->version = __atomic_load_n(&cfg.rdb_version, __ATOMIC_RELAXED);
    o->compress = __atomic_load_n(&cfg.rdbcompression, __ATOMIC_RELAXED);
    o->checksum = __atomic_load_n(&cfg.rdbchecksum, __ATOMIC_RELAXED);
    o->key_save_delay_us = __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED);
    o->repl = rdb_repl_mark; /* set by the freeze (mark_repl) */
}

static const char *dbfile(void)
{
    const char *f = __atomic_load_n(&cfg.dbfilename, __ATOMIC_ACQUIRE);
    return f && f[0] ? f : "dump.rdb";
}

/* ---------------------------------------------------- lock context --- */
/* Set once by cmd at start-up (before any worker), read-only afterwards. */
static const struct persist_lockctx_ops *lockctx_ops;

void persist_set_lockctx_ops(const struct persist_lockctx_ops *ops)
{
    lockctx_ops = ops;
}

int persist_lockctx_active(void)
{
    return lockctx_ops && lockctx_ops->active();
}

static int lockctx_all_held(void)
{
    return lockctx_ops && lockctx_ops->all_held();
}

/* ------------------------------------------------------------ fork --- */
/* Freeze the keyspace: 1 we took the script mutex and every slot lock,
 * 0 the caller holds them (EXEC context), -1 a busy script. */
/* The replication history the frozen keyspace stands for (rdb.h
 * rdb_repl_mark): on a replica only with apply_mu held (no command of
 * the master's half applied), else none is written. */
static void mark_repl(int consistent)
{
    memset(&rdb_repl_mark, 0, sizeof(rdb_repl_mark));
    int have = 0;
    long long off = repl_offset(&have);
    if (!have || !consistent)
        return;
    repl_replid(rdb_repl_mark.id);
    rdb_repl_mark.offset = off;
    rdb_repl_mark.stream_db = repl_is_replica() ? replica_stream_db() : 0;
}

/* Set while this thread's freeze holds apply_mu (a replica). */
static _Thread_local int froze_apply;

static int freeze_begin(void)
{
    if (lockctx_all_held()) {
        /* Inside EXEC: apply_mu comes before the slot locks, so only a
         * try (without it the snapshot carries no history). */
        int got = !repl_is_replica() || replica_apply_trylock();
        mark_repl(got);
        if (got && repl_is_replica())
            replica_apply_unlock();
        return 0;
    }
    int apply = repl_is_replica();
    if (apply)
        replica_apply_lock();
    if (script_mutex_lock() < 0) {
        if (apply)
            replica_apply_unlock();
        return -1;
    }
    if (db_lock_all_ex(1) < 0) {
        script_mutex_unlock();
        if (apply)
            replica_apply_unlock();
        return -1;
    }
    froze_apply = apply;
    mark_repl(1);
    return 1;
}

static void freeze_end(int took)
{
    if (took == 1) {
        db_unlock_all();
        script_mutex_unlock();
        if (froze_apply)
            replica_apply_unlock();
        froze_apply = 0;
    }
}

pid_t persist_fork(int type)
{
    return persist_fork_ex(type, NULL, NULL);
}

/* The child closes every listening socket it inherited (client ports, the
 * cluster bus): a child that outlives its parent (kill -9 during a save or
 * a diskless sync) would otherwise keep the ports bound, and a restarted
 * server could not listen.  Found by SO_ACCEPTCONN, so no layer above has
 * to hand them down. */
static void close_listeners(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int dfd = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int fd = atoi(de->d_name);
        if (fd <= 2 || fd == dfd)
            continue;
        int on = 0;
        socklen_t len = sizeof(on);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on)
            close(fd);
    }
    closedir(d);
}

pid_t persist_fork_ex(int type, void (*at_freeze)(void *), void *arg)
{
    pthread_mutex_lock(&snap_mu);
    int busy = st.child != 0;
    pthread_mutex_unlock(&snap_mu);
    if (busy) {
        errno = EBUSY;
        return -1;
    }
    int took = freeze_begin();
    if (took < 0) {
        errno = EBUSY;
        return -1;
    }
    pthread_mutex_lock(&snap_mu);
    if (st.child) { /* another thread forked meanwhile */
        pthread_mutex_unlock(&snap_mu);
        freeze_end(took);
        errno = EBUSY;
        return -1;
    }
    unsigned long long dirty = dirty_now();
    if (at_freeze)
        at_freeze(arg);
    if (child_cow_final)
        atomic_store(child_cow_final, 0);
    /* The keys the child will write, for its progress (every slot lock is
     * held: an exact count). */
    unsigned long long nkeys = 0;
    for (int i = 0; i < ks.ndb; i++)
        nkeys += db_size(i);
    if (rdb_keys_done)
        atomic_store(rdb_keys_done, 0);
    long long t0 = mono_us();
    pid_t pid = fork();
    if (pid == 0) {
        /* Child: one thread, a frozen copy of everything.  The locks it
         * inherited are never touched again.  A snapshot or rewrite child
         * runs at the lowest priority: where it shares a core with a
         * worker, the clients come first and the save takes the idle time
         * (background work; the parent's threads keep their priority).  A
         * full-sync child does not: replicas wait for it (the stream to
         * them starts when it has exited), and at nice 19 on a busy
         * machine even its exit could take seconds of waiting for a CPU
         * (seen in CI: a replica held 15 s after its payload was sent). */
        if (type != CHILD_REPL && setpriority(PRIO_PROCESS, 0, 19) < 0)
            log_msg(LL_VERBOSE, "Could not lower the priority of the snapshot child: %s", strerror(errno));
        close_listeners();
        return 0;
    }
    int saved = errno;
    long long t1 = mono_us();
    if (pid > 0) {
        atomic_store(&db_child_active, 1);
        st.child = pid;
        st.child_type = type;
        st.child_start_ms = time_ms();
        st.dirty_before = dirty;
        st.child_keys = nkeys;
        st.cow_current = st.cow_peak = 0;
        st.cow_sampled_ms = 0;
        st.forks++;
        st.fork_usec = t1 - t0;
        latency_sample("fork", (t1 - t0) / 1000); /* base/latency_monitor.h */
    }
    pthread_mutex_unlock(&snap_mu);
    freeze_end(took);
    errno = saved;
    return pid;
}

void persist_child_exit(int code)
{
    if (child_cow_final)
        atomic_store(child_cow_final, child_cow_bytes(getpid()));
    _exit(code);
}

static void remove_temp(pid_t pid)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)pid);
    unlink(tmp);
}

void persist_kill_child(void)
{
    persist_kill_child_of(-1);
}

void persist_kill_child_of(int only)
{
    pthread_mutex_lock(&snap_mu);
    if (only >= 0 && st.child_type != only) {
        pthread_mutex_unlock(&snap_mu);
        return;
    }
    pid_t pid = st.child;
    int type = st.child_type;
    st.child = 0;
    st.child_type = CHILD_NONE;
    atomic_store(&db_child_active, 0);
    pthread_mutex_unlock(&snap_mu);
    if (!pid)
        return;
    kill(pid, SIGUSR1);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (type == CHILD_RDB) {
        remove_temp(pid);
        log_msg(LL_NOTICE, "Killing running background saving child: %d", (int)pid);
    } else if (type == CHILD_AOF && aof_rewrite_done) {
        log_msg(LL_NOTICE, "Killing running AOF rewrite child: %d", (int)pid);
        aof_rewrite_done(0);
    } else if (type == CHILD_REPL && repl_child_done) {
        log_msg(LL_NOTICE, "Killing running replication sync child: %d", (int)pid);
        repl_child_done(0);
    }
}

/* Private_Dirty of the child = pages copied since the fork (the parent
 * wrote them): the snapshot's extra memory.  open/read and a stack buffer,
 * no stdio: a child calls it on its way out, and a malloc there can block
 * for ever on an allocator lock another thread of the parent held at the
 * fork (the sanitizers' allocators do not release theirs in the child; CI
 * saw a full-sync child hang that way after sending its whole payload). */
static size_t child_cow_bytes(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = 0;
    size_t kb = 0;
    static const char key[] = "Private_Dirty:";
    for (char *p = buf; (p = strstr(p, key)) != NULL; p += sizeof(key) - 1) {
        char *q = p + sizeof(key) - 1;
        while (*q == ' ' || *q == '\t')
            q++;
        size_t v = 0;
        while (*q >= '0' && *q <= '9')
            v = v * 10 + (size_t)(*q++ - '0');
        kb += v;
    }
    return kb * 1024;
}

/* ---------------------------------------------------------- BGSAVE --- */
static int rdb_bgsave(const char *why)
{
    pid_t pid = persist_fork(CHILD_RDB);
    if (pid < 0) {
        log_msg(LL_WARNING, "Can't save in background: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        struct rdb_save_opts o;
        char err[256];
        rdb_opts(&o);
        int rc = rdb_save_file(dbfile(), &o, err, sizeof(err));
        if (rc == 0) {
            log_msg(LL_NOTICE, "DB saved on disk");
            size_t cow = child_cow_bytes(getpid());
            if (cow)
                log_msg(LL_NOTICE, "Fork CoW for RDB: current %zu MB, peak %zu MB, average %zu MB", cow >> 20,
                        cow >> 20, cow >> 20);
        } else {
            log_msg(LL_WARNING, "Write error saving DB on disk: %s", err);
        }
        persist_child_exit(rc == 0 ? 0 : 1);
    }
    log_msg(LL_NOTICE, "Background saving started by pid %d%s%s", (int)pid, why ? " " : "", why ? why : "");
    return 0;
}

static void child_done(pid_t pid, int status)
{
    pthread_mutex_lock(&snap_mu);
    if (pid != st.child) {
        pthread_mutex_unlock(&snap_mu);
        return;
    }
    int type = st.child_type;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (child_cow_final) {
        size_t fin = atomic_exchange(child_cow_final, 0);
        if (fin > st.cow_current)
            st.cow_current = fin;
    }
    int bysignal = WIFSIGNALED(status);
    long long secs = (time_ms() - st.child_start_ms) / 1000;
    unsigned long long dirty_before = st.dirty_before;
    if (type == CHILD_AOF)
        st.last_cow_aof = st.cow_current;
    else
        st.last_cow = st.cow_current;
    st.child = 0;
    st.child_type = CHILD_NONE;
    atomic_store(&db_child_active, 0);
    if (type == CHILD_RDB) {
        /* The MISCONF gate first: whoever reads the status as err in INFO
         * must already see writes refused. */
        atomic_store(&write_err, !ok);
        st.last_bgsave_secs = secs;
        st.last_bgsave_ok = ok;
        if (ok) {
            st.saves++;
            atomic_store(&dirty_saved, dirty_before);
            atomic_store(&lastsave_s, time_ms() / 1000);
        }
    }
    pthread_mutex_unlock(&snap_mu);
    if (type == CHILD_RDB) {
        if (ok)
            log_msg(LL_NOTICE, "Background saving terminated with success");
        else if (bysignal) {
            log_msg(LL_WARNING, "Background saving terminated by signal %d", WTERMSIG(status));
            remove_temp(pid);
            /* Killed on purpose (SIGUSR1) is not an error for the gate. */
            if (WTERMSIG(status) == SIGUSR1)
                atomic_store(&write_err, 0);
        } else {
            log_msg(LL_WARNING, "Background saving error");
            remove_temp(pid);
        }
    } else if (type == CHILD_AOF && aof_rewrite_done) {
        aof_rewrite_done(ok);
    } else if (type == CHILD_REPL && repl_child_done) {
        repl_child_done(ok);
    }
}

/* ----------------------------------------------------- save points --- */
/* Is a save point due?  "secs changes" pairs: at least `changes` writes
 * and at least `secs` seconds since the last successful save. */
static int save_point_due(long long now_ms, unsigned long long changes)
{
    const char *s = __atomic_load_n(&cfg.save, __ATOMIC_ACQUIRE);
    long long since = now_ms / 1000 - atomic_load(&lastsave_s);
    while (s && *s) {
        char *end;
        long long secs = strtoll(s, &end, 10);
        if (end == s)
            break;
        s = end;
        long long ch = strtoll(s, &end, 10);
        if (end == s)
            break;
        s = end;
        if ((long long)changes >= ch && since >= secs && changes > 0)
            return 1;
    }
    return 0;
}

static int save_points_set(void)
{
    const char *s = __atomic_load_n(&cfg.save, __ATOMIC_ACQUIRE);
    return s && s[0];
}

static void *persist_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hotkv-persist");
    mem_thread_register();
    while (atomic_load(&persist_running)) {
        int hz = cfg.hz > 0 ? cfg.hz : 10;
        /* The period in steps of at most 20 ms: with maxmemory set, each
         * step gives freed pages back to the kernel once they pass 1/64 of
         * the limit (at least 2 MB), so RSS follows the limit under churn
         * (base/malloc_stats.h). */
        long long period_ns = 1000000000LL / hz, step_ns = period_ns < 20000000LL ? period_ns : 20000000LL;
        for (long long slept = 0; slept < period_ns; slept += step_ns) {
            struct timespec ts = {0, (long)step_ns};
            nanosleep(&ts, NULL);
            long long mm = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
            if (mm > 0)
                alloc_trim_dirty((size_t)mm / 64 > (2u << 20) ? (size_t)mm / 64 : (2u << 20));
        }
        mem_publish();
        slab_maintain(); /* pooled heaps' remote frees; emptied pages to the kernel (base/slab.h) */
        if (atomic_load_explicit(&cron_paused, memory_order_relaxed))
            continue; /* DEBUG PAUSE-CRON */
        long long now = time_ms();

        pthread_mutex_lock(&snap_mu);
        pid_t child = st.child;
        pthread_mutex_unlock(&snap_mu);
        if (child) {
            int status;
            pid_t r = waitpid(child, &status, WNOHANG);
            if (r == child) {
                child_done(child, status);
            } else {
                size_t cow = child_cow_bytes(child);
                pthread_mutex_lock(&snap_mu);
                if (st.child == child) {
                    st.cow_current = cow;
                    if (cow > st.cow_peak)
                        st.cow_peak = cow;
                    st.cow_sampled_ms = now;
                }
                pthread_mutex_unlock(&snap_mu);
            }
            continue;
        }
        pthread_mutex_lock(&snap_mu);
        int sched = st.bgsave_scheduled;
        int last_ok = st.last_bgsave_ok;
        long long last_try = st.last_try_ms;
        pthread_mutex_unlock(&snap_mu);
        unsigned long long changes = dirty_now() - atomic_load(&dirty_saved);
        /* After a failed BGSAVE, retry the save points only every 5 s. */
        int due = save_points_set() && save_point_due(now, changes) && (last_ok || now - last_try >= 5000);
        if (sched || due) {
            pthread_mutex_lock(&snap_mu);
            st.last_try_ms = now;
            pthread_mutex_unlock(&snap_mu);
            if (rdb_bgsave(sched ? NULL : NULL) == 0) {
                pthread_mutex_lock(&snap_mu);
                st.bgsave_scheduled = 0;
                pthread_mutex_unlock(&snap_mu);
            }
            continue;
        }
        if (aof_cron)
            aof_cron();
    }
    mem_thread_unregister();
    return NULL;
}

void persist_start(void)
{
    atomic_store(&persist_running, 1);
    pthread_create(&persist_thread, NULL, persist_main, NULL);
}

void persist_stop(void)
{
    if (!atomic_exchange(&persist_running, 0))
        return;
    pthread_join(persist_thread, NULL);
}

/* ------------------------------------------------------ foreground --- */
int persist_save_locked(void)
{
    struct rdb_save_opts o;
    char err[256];
    rdb_opts(&o);
    unsigned long long dirty = dirty_now();
    if (rdb_save_file(dbfile(), &o, err, sizeof(err)) < 0) {
        log_msg(LL_WARNING, "Failed saving the DB: %s", err);
        return -1;
    }
    log_msg(LL_NOTICE, "DB saved on disk");
    atomic_store(&dirty_saved, dirty);
    atomic_store(&lastsave_s, time_ms() / 1000);
    atomic_store(&write_err, 0);
    pthread_mutex_lock(&snap_mu);
    st.saves++;
    st.last_bgsave_ok = 1;
    pthread_mutex_unlock(&snap_mu);
    return 0;
}

int persist_save(void)
{
    if (persist_child_type() == CHILD_RDB)
        return PERSIST_IN_PROGRESS;
    int took = freeze_begin();
    if (took < 0)
        return PERSIST_BUSY;
    int rc = persist_save_locked();
    freeze_end(took);
    return rc == 0 ? PERSIST_OK : PERSIST_ERR;
}

int persist_bgsave(int schedule)
{
    int type = persist_child_type();
    if (type == CHILD_RDB)
        return PERSIST_IN_PROGRESS;
    if (type != CHILD_NONE) {
        if (!schedule)
            return PERSIST_OTHER_CHILD;
        pthread_mutex_lock(&snap_mu);
        st.bgsave_scheduled = 1;
        pthread_mutex_unlock(&snap_mu);
        return PERSIST_SCHEDULED;
    }
    if (rdb_bgsave(NULL) < 0) {
        if (errno == EBUSY && persist_child_type() != CHILD_NONE)
            return PERSIST_IN_PROGRESS;
        return errno == EBUSY ? PERSIST_BUSY : PERSIST_ERR;
    }
    return PERSIST_OK;
}

const char *persist_write_error(void)
{
    if (aof_write_error) {
        const char *e = aof_write_error();
        if (e)
            return e;
    }
    if (!atomic_load_explicit(&write_err, memory_order_relaxed))
        return NULL;
    if (!__atomic_load_n(&cfg.stop_writes_on_bgsave_error, __ATOMIC_RELAXED) || !save_points_set())
        return NULL;
    return "MISCONF HotKV is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check "
           "the HotKV logs for details about the RDB error.";
}

/* DEBUG RELOAD: save, empty, load back, with the keyspace frozen. */
int persist_reload(int merge, int noflush, int nosave)
{
    int took = freeze_begin();
    if (took < 0)
        return PERSIST_BUSY;
    if (!nosave && persist_save_locked() < 0) {
        freeze_end(took);
        return PERSIST_ERR;
    }
    if (!noflush) {
        for (int i = 0; i < cfg.databases; i++)
            db_flush(i);
        rdb_fn_flush_libs();
    }
    struct rdb_load_stats ls;
    char err[512];
    memset(&ls, 0, sizeof(ls));
    /* NOFLUSH keeps what is in memory: a key or library of the file that
     * exists already is an error, unless MERGE (the file's wins). */
    int rc = rdb_load_file_flags(dbfile(), merge ? RDB_LOAD_ALLOW_DUP : 0, &ls, err, sizeof(err));
    freeze_end(took);
    if (rc < 0) {
        log_msg(LL_WARNING, "DEBUG RELOAD: %s", rc == -2 ? "no RDB file" : err);
        return PERSIST_LOAD_ERR;
    }
    log_msg(LL_NOTICE, "DB reloaded by DEBUG RELOAD");
    return PERSIST_OK;
}

atomic_int persist_async_loading;
void (*persist_dataset_replaced)(void);

int persist_replica_load_async(const void *mem, size_t memlen, struct rdb_load_stats *ls, char *err, size_t errlen,
                               void (*swapped)(void *), void *arg)
{
    struct db_shadow *sh = db_shadow_new();
    struct rdb_libs *libs = rdb_libs_new();
    struct rdb_in in;
    rdb_in_init_mem(&in, mem, memlen);
    in.shadow = sh;
    in.libs = libs;
    memset(ls, 0, sizeof(*ls));
    atomic_store(&persist_async_loading, 1);
    /* This thread's loads keep keys and fields whose TTL passed, as a
     * replica does (db_loading is thread-local: the workers serving the
     * old dataset meanwhile are not affected). */
    int was = db_loading;
    db_loading = 1;
    int rc = rdb_load_in(&in, ls);
    db_loading = was;
    if (rc < 0)
        snprintf(err, errlen, "%s", in.err);
    rdb_in_free(&in);
    int took = -1;
    /* The swap needs the keyspace frozen; a busy script delays it (up to
     * 10 s, then the sync fails and starts over, the old data intact). */
    for (int i = 0; rc >= 0 && i < 10000 && (took = freeze_begin()) < 0; i++)
        usleep(1000);
    if (rc >= 0 && took < 0) {
        snprintf(err, errlen, "a script stayed busy: the loaded dataset could not be swapped in");
        rc = -1;
    }
    if (rc < 0) {
        db_shadow_free(sh);
        rdb_libs_free(libs);
        atomic_store(&persist_async_loading, 0);
        return -1;
    }
    db_shadow_swap_in(sh);
    if (persist_dataset_replaced)
        persist_dataset_replaced();
    char ferr[256];
    if (rdb_libs_install(libs, ferr, sizeof(ferr)) < 0)
        log_msg(LL_WARNING, "Async loading: a function library of the master's RDB failed to load: %s", ferr);
    if (swapped)
        swapped(arg);
    /* Cleared before the thaw: a command that sees async_loading:1 and
     * runs before the next look at it ran on the old dataset. */
    atomic_store(&persist_async_loading, 0);
    freeze_end(took);
    rdb_libs_free(libs);
    return 0;
}

int persist_replica_load(const char *path, const void *mem, size_t memlen, struct rdb_load_stats *ls, char *err,
                         size_t errlen)
{
    int took = freeze_begin();
    if (took < 0) {
        snprintf(err, errlen, "a script is busy");
        return -1;
    }
    if (__atomic_load_n(&cfg.replica_lazy_flush, __ATOMIC_RELAXED)) {
        /* replica-lazy-flush: the old dataset's tables go to the lazy-free
         * thread (as FLUSHALL ASYNC), the load starts at once. */
        db_flush_lazy(0, cfg.databases);
    } else {
        for (int i = 0; i < cfg.databases; i++)
            db_flush(i);
    }
    rdb_fn_flush_libs();
    memset(ls, 0, sizeof(*ls));
    /* As a replica loads: keys whose TTL passed are kept (the master's
     * DEL follows in the stream). */
    int was = db_loading;
    db_loading = 1;
    int rc;
    if (path) {
        rc = rdb_load_file_flags(path, 0, ls, err, errlen);
    } else {
        struct rdb_in in;
        rdb_in_init_mem(&in, mem, memlen);
        rc = rdb_load_in(&in, ls);
        if (rc < 0)
            snprintf(err, errlen, "%s", in.err);
        rdb_in_free(&in);
    }
    db_loading = was;
    if (rc < 0) { /* a half-loaded dataset is worth nothing */
        for (int i = 0; i < cfg.databases; i++)
            db_flush(i);
        rdb_fn_flush_libs();
    }
    if (persist_dataset_replaced)
        persist_dataset_replaced();
    freeze_end(took);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ INFO --- */
void persist_info(char *out, size_t cap)
{
    pthread_mutex_lock(&snap_mu);
    /* A replication snapshot is an RDB child too, for INFO as in Redis
     * (rdb_bgsave_in_progress, rdb_current_bgsave_time_sec). */
    int rdb_child = st.child && (st.child_type == CHILD_RDB || st.child_type == CHILD_REPL);
    int any_child = st.child != 0;
    long long cur_secs = rdb_child ? (time_ms() - st.child_start_ms) / 1000 : -1;
    size_t cow = any_child ? st.cow_current : 0, last_cow = st.last_cow;
    long long cow_age = any_child && st.cow_sampled_ms ? (time_ms() - st.cow_sampled_ms) / 1000 : 0;
    int ok = st.last_bgsave_ok;
    long long last_secs = st.last_bgsave_secs;
    unsigned long long saves = st.saves, lk = st.loaded_keys, le = st.loaded_expired;
    size_t peak = st.cow_peak;
    /* The running child's progress: the keys it has written of those the
     * dataset held when it forked (Redis's current_save_keys_*). */
    unsigned long long ktotal = any_child ? st.child_keys : 0;
    unsigned long long kdone = any_child && rdb_keys_done ? atomic_load(rdb_keys_done) : 0;
    if (kdone > ktotal)
        kdone = ktotal;
    double kperc = ktotal ? (double)kdone * 100.0 / (double)ktotal : 0.0;
    pthread_mutex_unlock(&snap_mu);
    unsigned long long changes = dirty_now() - atomic_load(&dirty_saved);
    size_t n = (size_t)snprintf(out, cap,
                                "loading:%d\r\n"
                                "async_loading:%d\r\n"
                                "current_cow_peak:%zu\r\n"
                                "current_cow_size:%zu\r\n"
                                "current_cow_size_age:%lld\r\n"
                                "current_fork_perc:%.2f\r\n"
                                "current_save_keys_processed:%llu\r\n"
                                "current_save_keys_total:%llu\r\n"
                                "rdb_changes_since_last_save:%llu\r\n"
                                "rdb_bgsave_in_progress:%d\r\n"
                                "rdb_last_save_time:%lld\r\n"
                                "rdb_last_bgsave_status:%s\r\n"
                                "rdb_last_bgsave_time_sec:%lld\r\n"
                                "rdb_current_bgsave_time_sec:%lld\r\n"
                                "rdb_saves:%llu\r\n"
                                "rdb_last_cow_size:%zu\r\n"
                                "rdb_last_load_keys_expired:%llu\r\n"
                                "rdb_last_load_keys_loaded:%llu\r\n",
                                (atomic_load_explicit(&replica_gate, memory_order_relaxed) & RG_LOADING) != 0,
                                atomic_load(&persist_async_loading), any_child ? peak : 0, cow, cow_age, kperc, kdone, ktotal, changes, rdb_child, atomic_load(&lastsave_s),
                                ok ? "ok" : "err", last_secs, cur_secs, saves, last_cow, le, lk);
    if (n >= cap)
        return;
    if (aof_info_fmt) {
        n += aof_info_fmt(out + n, cap - n);
    } else {
        n += (size_t)snprintf(out + n, cap - n,
                              "aof_enabled:0\r\n"
                              "aof_rewrite_in_progress:0\r\n"
                              "aof_rewrite_scheduled:0\r\n"
                              "aof_last_rewrite_time_sec:-1\r\n"
                              "aof_current_rewrite_time_sec:-1\r\n"
                              "aof_last_bgrewrite_status:ok\r\n"
                              "aof_rewrites:0\r\n"
                              "aof_rewrites_consecutive_failures:0\r\n"
                              "aof_last_write_status:ok\r\n"
                              "aof_last_cow_size:0\r\n"
                              "module_fork_in_progress:0\r\n"
                              "module_fork_last_cow_size:0\r\n");
    }
}

size_t persist_last_cow_size(int type)
{
    pthread_mutex_lock(&snap_mu);
    size_t v = type == CHILD_AOF ? st.last_cow_aof : st.last_cow;
    pthread_mutex_unlock(&snap_mu);
    return v;
}

/* -------------------------------------------------- start / shutdown --- */
/* The keys a start-up load dropped because their TTL had passed, kept
 * (db, length, bytes) until the file's replication history is known.
 * When their DELs would take more than repl-backlog-size, the backlog
 * could not hold them from the file's offset on (Redis's would have
 * trimmed them): none is kept, and no replica may continue; each gets a
 * full sync of the dataset, which lacks them all. */
struct expired_keys {
    char *buf;
    size_t len, cap, dels;
    int full;
};

static void note_expired(void *arg, int db, const char *key, size_t kl)
{
    struct expired_keys *ek = arg;
    long long bsize = __atomic_load_n(&cfg.repl_backlog_size, __ATOMIC_RELAXED);
    char num[24];
    size_t del = 18 + (size_t)snprintf(num, sizeof(num), "%zu", kl) + kl; /* *2 $3 DEL $n key, CRLFs */
    if (ek->full || ek->dels + del > (size_t)bsize) {
        ek->full = 1;
        return;
    }
    size_t need = sizeof(int) + sizeof(size_t) + kl;
    if (ek->len + need > ek->cap) {
        size_t cap = ek->cap ? ek->cap : 4096;
        while (cap < ek->len + need)
            cap *= 2;
        ek->buf = hk_realloc(ek->buf, cap);
        ek->cap = cap;
    }
    memcpy(ek->buf + ek->len, &db, sizeof(int));
    memcpy(ek->buf + ek->len + sizeof(int), &kl, sizeof(size_t));
    memcpy(ek->buf + ek->len + sizeof(int) + sizeof(size_t), key, kl);
    ek->len += need;
    ek->dels += del;
}

/* Stream a DEL (UNLINK with lazyfree-lazy-expire, as Redis) for each. */
static void feed_expired(const struct expired_keys *ek)
{
    int lazy = __atomic_load_n(&cfg.lazyfree_lazy_expire, __ATOMIC_RELAXED);
    for (size_t at = 0; at < ek->len;) {
        int db;
        size_t kl;
        memcpy(&db, ek->buf + at, sizeof(int));
        memcpy(&kl, ek->buf + at + sizeof(int), sizeof(size_t));
        const char *av[2] = {lazy ? "UNLINK" : "DEL", ek->buf + at + sizeof(int) + sizeof(size_t)};
        size_t al[2] = {lazy ? 6u : 3u, kl};
        repl_feed_cmd(db, 2, av, al);
        at += sizeof(int) + sizeof(size_t) + kl;
    }
}

int persist_load_at_startup(void)
{
    /* Before any worker exists (they read it when they fork). */
    void *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pg != MAP_FAILED) {
        child_cow_final = pg;
        /* 64 bytes on: the keys the running child has written (rdb.h). */
        rdb_keys_done = (_Atomic unsigned long long *)((char *)pg + 64);
    }
    char err[512];
    long long t0 = time_ms();
    atomic_store(&lastsave_s, t0 / 1000);
    if (cfg.appendonly && aof_load_at_startup) {
        if (aof_load_at_startup(err, sizeof(err)) < 0) {
            log_msg(LL_WARNING, "Fatal error loading the AOF: %s. Exiting.", err);
            return -1;
        }
        atomic_store(&dirty_saved, dirty_now());
        return 0;
    }
    struct rdb_load_stats ls;
    memset(&ls, 0, sizeof(ls));
    struct expired_keys ek = {0};
    int rc = rdb_load_file_expired(dbfile(), &ls, err, sizeof(err), note_expired, &ek);
    if (rc == -2)
        return 0; /* no file: an empty dataset */
    if (rc < 0) {
        hk_free(ek.buf);
        log_msg(LL_WARNING, "Fatal error loading the DB (%s): %s. Exiting.", dbfile(), err);
        log_msg(LL_WARNING, "Terminating server after rdb file reading failure.");
        return -1;
    }
    pthread_mutex_lock(&snap_mu);
    st.loaded_keys = ls.keys;
    st.loaded_expired = ls.expired;
    pthread_mutex_unlock(&snap_mu);
    log_msg(LL_NOTICE, "DB loaded from disk: %.3f seconds", (double)(time_ms() - t0) / 1000.0);
    /* The history the file stands for, as Redis 7 restores it: a replica
     * asks its master to continue from there, a master lets its replicas
     * continue (its backlog starts empty at that offset). */
    if (ls.repl.id[0]) {
        repl_history_reset(ls.repl.id, ls.repl.offset);
        replica_restore_stream_db(ls.repl.stream_db);
        repl_set_role_replica(repl_is_replica());
        log_msg(LL_NOTICE, "%s replication ID and offset restored from the RDB file: %s:%lld",
                repl_is_replica() ? "Replica" : "Master", ls.repl.id, ls.repl.offset);
        if (!repl_is_replica()) {
            /* Redis 7's master restart: the file's history becomes the
             * second one (replicas continue from it, master_replid2 /
             * second_repl_offset), under a new id of our own, so that a
             * replica that had seen more of the old history than the file
             * holds cannot continue into our new writes at the same
             * offsets.  The keys dropped as expired are then streamed as
             * DELs, for the replicas that still hold them. */
            if (ek.full) {
                repl_history_fresh();
                log_msg(LL_NOTICE, "More keys expired while loading than the backlog holds: replicas resync in full.");
            } else {
                repl_history_shift();
                feed_expired(&ek);
            }
        }
    }
    hk_free(ek.buf);
    atomic_store(&dirty_saved, dirty_now());
    return 0;
}

int persist_shutdown(int save)
{
    persist_kill_child();
    int rc = 0;
    if (save == 1 || (save < 0 && save_points_set())) {
        log_msg(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
        mark_repl(1); /* the workers and the replica link are stopped */
        rc = persist_save_locked();
        if (rc < 0)
            log_msg(LL_WARNING, "Error trying to save the DB, can't exit.");
    }
    if (aof_shutdown)
        aof_shutdown();
    return rc;
}
