/* snapshot.h - RDB snapshots: SAVE, BGSAVE, save points, the fork that
 * gives a point-in-time copy of the keyspace, and the persistence state
 * INFO reports.
 *
 * Snapshot model: fork.  persist_fork() stops every writer for the length
 * of fork() itself (it holds the script mutex and every slot lock, so no
 * structure is mid-change), then the child owns a frozen copy-on-write
 * image of the whole heap and writes it with no lock at all, while the
 * parent's threads go on serving.  The extra memory is the pages the
 * parent writes while the child runs (reported as copy-on-write bytes);
 * it is bounded by the dataset size.  See docs/architecture.md
 * ("Persistence") for why fork and not a versioned in-process snapshot.
 *
 * Threads: the persistence thread ("hotkv-persist") reaps children, runs
 * save points, scheduled BGSAVEs and aof_cron(); commands (SAVE, BGSAVE,
 * LASTSAVE, DEBUG RELOAD) run on workers: their handlers are in
 * cmd/persistence.c and call persist_save / persist_bgsave /
 * persist_reload, which return a PERSIST_* code the handler turns into the
 * reply.  All shared state here is under one mutex (snap_mu) or atomics;
 * see snapshot.c.
 *
 * Users: cmd/ (the handlers, INFO, the MISCONF gate), the top level
 * (start-up, shutdown).  Nothing here calls above persist/: what it must
 * know of cmd/'s lock context comes through persist_set_lockctx_ops. */
#ifndef HK_SNAPSHOT_H
#define HK_SNAPSHOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

enum { CHILD_NONE = 0, CHILD_RDB = 1, CHILD_AOF = 2, CHILD_REPL = 3 };

/* Fork a child of type `type` (CHILD_RDB/CHILD_AOF).  The caller holds
 * either nothing (the script mutex and every slot lock are taken and
 * released here) or every slot lock and the script mutex (inside EXEC:
 * commands flagged CMD_NEEDS_SCRIPT_MUTEX).  Returns the pid in the parent
 * (recorded as the running child), 0 in the child, -1 with errno (EBUSY
 * another child runs or a script is busy).  In the child: read the
 * keyspace without locks, write files, log_msg, and _exit(). */
pid_t persist_fork(int type);
/* persist_fork, calling at_freeze(arg) in the parent while everything is
 * frozen, just before the fork: no write is part-way through being fed,
 * so the child's keyspace is exactly the writes fed so far (replication
 * takes the stream offset there, persist/repl.c). */
pid_t persist_fork_ex(int type, void (*at_freeze)(void *), void *arg);
/* End of a child: records its copy-on-write bytes for the parent (a
 * page shared across the fork) and _exit()s with code. */
void persist_child_exit(int code) __attribute__((noreturn));
/* The running child's type (CHILD_NONE when none). */
int persist_child_type(void);
/* Kill the running child (and remove its temp file); SHUTDOWN, BGSAVE
 * CANCEL, CONFIG SET appendonly no during a rewrite. */
void persist_kill_child(void);
/* The same, only if the running child is of this type (checked under the
 * lock that guards the child, so no other kind is killed by a race):
 * FLUSHALL stops a BGSAVE (CHILD_RDB) as Redis 7 does. */
void persist_kill_child_of(int type);

/* Start-up: load the AOF (appendonly yes) or the RDB; 0 ok, -1 refuse to
 * start (the reason is logged). */
int persist_load_at_startup(void);
void persist_start(void);   /* the persistence thread */
void persist_stop(void);
/* Final save at shutdown (workers stopped): 0 ok, -1 failed (logged).
 * save: 1 SAVE, 0 NOSAVE, -1 by the save points. */
int persist_shutdown(int save);

/* A replica's full sync: freeze the keyspace, empty every database and
 * the function libraries, load the RDB at path (or, path NULL, the memlen
 * bytes at mem; keys whose TTL passed are kept, as a replica keeps them),
 * thaw.  0, or -1 with err (the keyspace is left empty). */
struct rdb_load_stats;
int persist_replica_load(const char *path, const void *mem, size_t memlen, struct rdb_load_stats *ls, char *err,
                         size_t errlen);

/* repl-diskless-load swapdb: the RDB (memlen bytes at mem) is loaded into
 * a shadow dataset while the old one keeps serving (INFO async_loading:1,
 * persist_async_loading), then, with the keyspace frozen, swapped in with
 * its function libraries, and swapped(arg) runs before the thaw (the
 * replication history changes there).  0, or -1 with err: the old dataset
 * stays. */
extern atomic_int persist_async_loading;
/* Hook (server.c, set before any worker): a full sync replaced every
 * database, keyspace frozen: every WATCH fails and tracking clients get
 * the "all keys" invalidation (cmd/multi.c signal_dataset_replaced). */
extern void (*persist_dataset_replaced)(void);
int persist_replica_load_async(const void *mem, size_t memlen, struct rdb_load_stats *ls, char *err, size_t errlen,
                               void (*swapped)(void *), void *arg);

/* Foreground save with the keyspace frozen by the caller (all locks held,
 * or no workers running): 0 / -1 (logged). */
int persist_save_locked(void);
/* "-MISCONF ..." when writes are refused because the last background save
 * failed (stop-writes-on-bgsave-error); NULL when writes are fine. */
const char *persist_write_error(void);
/* INFO persistence section (the lines after the header). */
void persist_info(char *out, size_t cap);
/* INFO stats fields: total_forks, latest_fork_usec. */
unsigned long long persist_total_forks(void);
long long persist_latest_fork_usec(void);
long long persist_lastsave(void);
/* Copy-on-write bytes of the last child of that type (INFO). */
size_t persist_last_cow_size(int type);

/* What the command-facing calls below (and aof_bgrewrite) return; the
 * handlers (cmd/persistence.c) turn each into Redis's reply. */
enum {
    PERSIST_OK = 0,      /* done, or the child started */
    PERSIST_SCHEDULED,   /* starts when the running child ends */
    PERSIST_IN_PROGRESS, /* a child of that kind runs already */
    PERSIST_OTHER_CHILD, /* another kind of child runs (BGSAVE without SCHEDULE) */
    PERSIST_BUSY,        /* a busy script holds the script mutex */
    PERSIST_ERR,         /* the save or the fork failed (logged) */
    PERSIST_LOAD_ERR,    /* DEBUG RELOAD: the file could not be loaded back (logged) */
};
/* SAVE: freeze the keyspace (unless the caller holds it frozen: EXEC),
 * save, thaw. */
int persist_save(void);
/* BGSAVE [SCHEDULE]: fork the RDB child; with schedule, while another
 * child runs, start it when that one ends. */
int persist_bgsave(int schedule);
/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save (unless nosave), empty the
 * keyspace and the function libraries (unless noflush), load the file back
 * (merge: the file's keys win over existing ones), all frozen. */
int persist_reload(int merge, int noflush, int nosave);

/* The caller's lock context (cmd/multi.c): inside EXEC the keyspace is
 * already frozen (every slot lock and the script mutex held), and a
 * thread holding some slot locks must not fork (it would wait for locks
 * out of order), so it is scheduled instead.  persist/ sits below cmd/
 * and cannot ask it, so cmd registers these at start-up (cmd_init); with
 * none registered (unit tests) no caller is inside a context. */
struct persist_lockctx_ops {
    int (*active)(void);   /* this thread is inside a lock context */
    int (*all_held)(void); /* ... one that holds every slot lock */
};
void persist_set_lockctx_ops(const struct persist_lockctx_ops *ops);
int persist_lockctx_active(void);

/* Provided by the AOF layer (persist/aof.c); weak here so snapshot.c
 * builds without it. */
void aof_cron(void) __attribute__((weak));
void aof_rewrite_done(int ok) __attribute__((weak));
void repl_child_done(int ok) __attribute__((weak)); /* a CHILD_REPL child ended (persist/repl.c) */
int aof_load_at_startup(char *err, size_t errlen) __attribute__((weak));
size_t aof_info_fmt(char *out, size_t cap) __attribute__((weak));
void aof_shutdown(void) __attribute__((weak));
const char *aof_write_error(void) __attribute__((weak));
/* Sum of every thread's change counter (persist/prop.c). */
unsigned long long prop_dirty_total(void) __attribute__((weak));

#endif
