/* aof.h - the append-only file, Redis 7 compatible (persist/aof.c).
 *
 * Layout (Redis 7 "multi-part AOF"): the directory `appenddirname` holds a
 * base file (<appendfilename>.<seq>.base.rdb with an RDB preamble, or
 * .base.aof with commands), incremental files (<appendfilename>.<seq>.incr.aof,
 * RESP commands) and the manifest <appendfilename>.manifest that lists them
 * ("file <name> seq <n> type <b|h|i>" lines).  Loading reads the base, then
 * every incr file in order.
 *
 * Feeding: every effective write is handed to aof_feed_cmd() by the
 * propagation layer (persist/prop.c) while the command's slot locks are
 * held, so writes to one key reach the file in execution order.  The bytes
 * go to one in-memory buffer (one mutex); a background thread ("hotkv-aof")
 * writes them as soon as they arrive and, with appendfsync everysec,
 * fdatasyncs once a second.  With appendfsync always a reply must not leave
 * before the bytes of every write fed so far are on disk: the worker loop
 * calls aof_before_reply() before writing replies; the first worker to get
 * there writes and fdatasyncs everything pending (group commit) and the
 * others find their bytes already synced.
 *
 * Rewrite (BGREWRITEAOF, automatic, or CONFIG SET appendonly yes): a new
 * incr file is opened and listed in the manifest first, then the keyspace is
 * forked (persist_fork); at the fork instant (pthread_atfork prepare, every
 * slot lock held) the byte stream is split: what was fed before goes to the
 * old incr file, what is fed after to the new one.  The child writes the new
 * base from its frozen copy; when it succeeds the parent renames it into the
 * directory and writes the manifest: new base + the incr opened at the
 * start; the older files are deleted. */
#ifndef HK_AOF_H
#define HK_AOF_H

#include <stdatomic.h>
#include <stddef.h>

#include "../server.h"

/* A write to propagate: argv as it must be replayed, on database db (-1:
 * no SELECT).  Called with the command's slot locks held.  One relaxed load
 * when the AOF is off.  A "MULTI" ... "EXEC" sequence fed by one thread is
 * appended as one unit at EXEC (nothing from other threads lands inside). */
void aof_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens);

/* Before replies are written (worker loop): the bytes of every write fed
 * so far are written to the file (all policies: a killed process loses no
 * acknowledged write, as with Redis) and, with appendfsync always,
 * fdatasynced (group commit).  Cheap when nothing is pending. */
extern atomic_ullong aof_fed_bytes, aof_written_bytes, aof_synced_bytes;
extern atomic_int aof_active; /* the AOF is on (or waiting for its first rewrite) */
/* DEBUG AOF-FLUSH-SLEEP <microseconds>: each write of fed bytes to the file
 * first sleeps this long (0: not at all).  A test aid, as in Redis. */
extern atomic_int aof_flush_sleep_us;
void aof_write_fed(unsigned long long upto);
void aof_sync_fed(unsigned long long upto);
static inline void aof_before_reply(void)
{
    if (!atomic_load_explicit(&aof_active, memory_order_relaxed))
        return;
    unsigned long long f = atomic_load_explicit(&aof_fed_bytes, memory_order_acquire);
    if (__atomic_load_n(&cfg.appendfsync, __ATOMIC_RELAXED) == AOF_FSYNC_ALWAYS) {
        if (atomic_load_explicit(&aof_synced_bytes, memory_order_acquire) < f)
            aof_sync_fed(f);
    } else if (atomic_load_explicit(&aof_written_bytes, memory_order_acquire) < f) {
        aof_write_fed(f);
    }
}

/* "MISCONF Errors writing to the AOF file: ..." while the last write (or
 * fsync) failed; NULL when writes are fine. */
const char *aof_write_error(void);

/* Called by persist/snapshot.c. */
void aof_cron(void);                             /* persistence thread, no child running */
void aof_rewrite_done(int ok);                   /* the rewrite child exited (or was killed) */
int aof_load_at_startup(char *err, size_t errlen); /* appendonly yes, before workers start */
size_t aof_info_fmt(char *out, size_t cap);
/* Bytes held by the AOF's feed and write buffers (not counted against
 * maxmemory, as Redis leaves its AOF buffer out; cmd/evict.c). */
size_t aof_buffer_bytes(void);      /* INFO persistence AOF fields */
void aof_shutdown(void);                         /* workers stopped: flush, fsync, close */
/* 1 while the AOF was switched on and its first rewrite has not finished:
 * the files do not hold the dataset yet (a shutdown then refuses, unless
 * forced, as Redis's "Writing initial AOF, can't exit."). */
int aof_writing_initial(void);

/* BGREWRITEAOF (the handler is cmd/persistence.c's): start a rewrite, or
 * schedule one while another child runs or the caller is inside a lock
 * context (EXEC).  A PERSIST_* code (snapshot.h): OK (started), SCHEDULED,
 * IN_PROGRESS, ERR. */
int aof_bgrewrite(void);
/* DEBUG LOADAOF, the caller holding the script mutex and every slot lock:
 * write out what is pending, empty the keyspace, load it back from the AOF
 * files.  0, or -1 with err (the caller logs it). */
int aof_debug_load(char *err, size_t errlen);
/* CONFIG SET appendonly yes|no (config/ calls it through its
 * config_appendonly_hook): 0, or -1 with err. */
int aof_set_appendonly(int on, char *err, size_t errlen);

/* Replaying commands.  Loading an AOF runs its commands as a client would.
 * Running a command is cmd/'s business, above persist/: aof.c reads the
 * files (RESP parsing, MULTI/EXEC queueing, a truncated tail, every error
 * message and log line) and hands each command to this interface, which
 * cmd registers at start-up (cmd_init -> cmd/replay.c).  With none
 * registered every command is unknown (a file with commands fails). */
enum {
    AOF_REPLAY_CMD = 0, /* a command to run */
    AOF_REPLAY_MULTI,   /* MULTI: queue what follows until EXEC */
    AOF_REPLAY_EXEC,    /* EXEC: run the queue */
    AOF_REPLAY_UNKNOWN, /* no such command */
    AOF_REPLAY_ARITY,   /* wrong number of arguments (*name: the command's) */
};
struct aof_replayer {
    /* Start a load: a client for the commands (RESP2, no blocking) inside
     * a lock context that holds every slot lock (nested in the caller's
     * when it has one).  Returns the state the other calls take. */
    void *(*begin)(void);
    /* Each file starts in database 0. */
    void (*reset_db)(void *st);
    /* What argv is, looked up as a client's command would be (subcommands,
     * renamed commands): an AOF_REPLAY_* kind; *cmd the handle run() takes
     * (CMD), *name the command's name (ARITY). */
    int (*lookup)(int argc, char **argv, size_t *lens, const void **cmd, const char **name);
    /* Run a command lookup() classified AOF_REPLAY_CMD; the reply is
     * dropped, argv stays the caller's. */
    void (*run)(void *st, const void *cmd, int argc, char **argv, size_t *lens);
    /* End the load: leave the lock context, free the client. */
    void (*end)(void *st);
};
void aof_set_replayer(const struct aof_replayer *r);

/* hotkv-check-aof [--fix] [--yes] <file|manifest> (persist/aof_check.c). */
int aof_check_main(int argc, char **argv);

/* Shared with aof_check.c: the manifest. */
struct aof_mfile {
    char *name;
    long long seq;
    char type; /* 'b' base, 'h' history, 'i' incr */
};
struct aof_manifest {
    struct aof_mfile base; /* name NULL: none */
    struct aof_mfile *hist, *incr;
    int nhist, nincr;
    long long base_seq, incr_seq; /* highest sequence numbers used */
};
/* Parse a manifest file: 0, -1 with err (line number and problem). */
int aof_manifest_load(const char *path, struct aof_manifest *am, char *err, size_t errlen);
void aof_manifest_free(struct aof_manifest *am);

#endif
