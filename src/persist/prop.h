/* prop.h - command propagation: what each executed write feeds to the AOF
 * (and, later, to replicas), so that replaying the fed commands on an empty
 * server rebuilds the same dataset (persist/prop.c).
 *
 * The rule, Redis 7's: a command is fed as it was called (its own argv) when
 * it is a write (CMD_WRITE) and it changed something (the thread's change
 * counter prop_dirty moved while it ran), unless its handler fed something
 * else instead: prop_rewrite() (the deterministic form: EXPIRE ->
 * PEXPIREAT, SPOP -> SREM, BLPOP -> LPOP, XADD * -> the real ID, ...) or
 * prop_feed() of extra commands with prop_prevent().  Deleting a key
 * because its TTL passed (lazily or by the sweeper) feeds DEL.
 *
 * Execution units.  A lock context (EXEC's queue, a script: cmd/multi.h)
 * is one unit: what its commands feed is kept on the thread and, when the
 * outermost context ends (its locks still held), fed as MULTI ... EXEC when
 * there is more than one command, as is when there is one, nothing when
 * nothing changed.  A handler that feeds several commands for one call
 * (SPOP with a count, XREADGROUP) opens its own unit (prop_unit_begin/end).
 * Outside a unit a command is fed at once.
 *
 * Order.  Everything is fed while the slot locks of the keys involved are
 * held (the dispatcher feeds before it unlocks; a unit is fed before its
 * context releases its locks; a blocked client's command is fed by the
 * thread that serves it, holding the waiter's locks; expired keys are fed
 * under their slot lock), so two commands on one key reach the AOF in the
 * order they ran, whatever threads ran them.  Whole-keyspace commands
 * (FLUSHALL, SWAPDB) hold every lock.
 *
 * Threads: all the state here is thread-local except the registry of
 * change counters (a mutex taken at thread start/stop and by
 * prop_dirty_total()). */
#ifndef HK_PROP_H
#define HK_PROP_H

#include <stdatomic.h>
#include <stddef.h>

struct client;

/* ------------------------------------------------------ change counter --- */
/* Changes made by this thread (Redis's server.dirty, per thread): bumped by
 * signal_modified_key() for a client's write, by FLUSHALL/FLUSHDB (keys
 * removed), SWAPDB, FUNCTION LOAD/DELETE/FLUSH/RESTORE and the stream
 * group commands.  Expiries do not count (as in Redis).  Written only by
 * its thread (a relaxed store: a plain add), read by prop_dirty_total() on
 * any thread. */
/* local-exec: the server and the unit tests are executables, so a thread
 * variable is one %fs-relative access (no GOT load) on the command path. */
#define PROP_TLS __attribute__((tls_model("local-exec")))
extern _Thread_local unsigned long long prop_dirty PROP_TLS;
static inline void prop_dirty_add(unsigned long long n)
{
    __atomic_store_n(&prop_dirty, prop_dirty + n, __ATOMIC_RELAXED);
}
/* A thread whose changes count (workers): register at start, unregister
 * before it exits (its count is kept). */
void prop_thread_register(void);
void prop_thread_unregister(void);
/* The sum over every registered thread (rdb_changes_since_last_save, save
 * points).  Approximate while threads run; monotonic. */
unsigned long long prop_dirty_total(void);

/* ---------------------------------------------------- per-command state --- */
#define PROP_PREVENT 1u /* the command's own argv is not fed (it fed its own form) */
#define PROP_FORCE 2u   /* fed even if nothing changed (FLUSHALL on an empty db) */
extern _Thread_local unsigned prop_cmd_flags PROP_TLS;

static inline void prop_prevent(void)
{
    prop_cmd_flags |= PROP_PREVENT;
}

static inline void prop_force(void)
{
    prop_cmd_flags |= PROP_FORCE;
}

/* Around one command call (dispatcher, cmd_call, a blocked client's
 * re-execution): m = prop_call_begin(); run; prop_call_end(c, m, is_write).
 * c->argv and c->db are the call's; is_write(c) says whether its command
 * is a write (CMD_WRITE: cmd_is_write() in cmd/cmd.h), asked only when
 * something is to be fed, so the common path reads nothing of c.  Nests (EXEC -> EVAL -> redis.call). */
struct prop_mark {
    unsigned long long dirty;
    unsigned flags;
};
static inline struct prop_mark prop_call_begin(void)
{
    struct prop_mark m = {prop_dirty, prop_cmd_flags};
    prop_cmd_flags = 0;
    return m;
}
typedef int prop_write_fn(const struct client *c);
void prop_call_end_slow(struct client *c, unsigned long long dirty_before, prop_write_fn *is_write);
static inline void prop_call_end(struct client *c, struct prop_mark m, prop_write_fn *is_write)
{
    if (__builtin_expect(prop_dirty != m.dirty || prop_cmd_flags != 0, 0))
        prop_call_end_slow(c, m.dirty, is_write);
    prop_cmd_flags = m.flags;
}

/* The dispatcher's (outermost) form: no flags to save, they are 0 between
 * commands (the slow path clears them).  Two thread-local loads and two
 * compares when nothing is fed. */
static inline unsigned long long prop_top_begin(void)
{
    return prop_dirty;
}
static inline void prop_top_end(struct client *c, unsigned long long dirty_before, prop_write_fn *is_write)
{
    if (__builtin_expect(prop_dirty != dirty_before || prop_cmd_flags != 0, 0))
        prop_call_end_slow(c, dirty_before, is_write);
}

/* ------------------------------------------------------------- feeding --- */
/* Whether anything consumes what is fed (the AOF is on or a rewrite is
 * collecting): 1 unless the AOF layer says otherwise with prop_set_on(0).
 * When 0, a write that changed something costs one relaxed load here
 * instead of the call chain down to aof_feed_cmd.  The AOF layer flips it
 * where it flips its own feeding switch (the same ordering argument holds:
 * a command reads it with its slot locks held, and a rewrite forks with
 * every lock). */
extern atomic_int prop_on;
/* prop_on's bits: the AOF feeds (persist/aof.c), replicas follow
 * (persist/repl.c).  Each layer flips only its own. */
#define PROP_ON_AOF 1
#define PROP_ON_REPL 2
static inline void prop_set_on_bit(int bit, int on)
{
    if (on)
        atomic_fetch_or_explicit(&prop_on, bit, memory_order_relaxed);
    else
        atomic_fetch_and_explicit(&prop_on, ~bit, memory_order_relaxed);
}
static inline void prop_set_on(int on)
{
    prop_set_on_bit(PROP_ON_AOF, on);
}

/* Non-zero: this thread feeds nothing (a script's redis.set_repl() without
 * REPL_AOF). */
extern _Thread_local int prop_feed_off;

/* Feed one command (Redis's alsoPropagate): now, or at the end of the
 * thread's open unit.  argv is copied when kept. */
void prop_feed(int db, int argc, const char *const *argv, const size_t *lens);
/* Fed to the replicas only, never the AOF (PUBLISH and SPUBLISH outside
 * cluster mode, so that a replica's subscribers get its master's
 * messages; Redis's PROPAGATE_REPL).  In a unit it keeps its place; a
 * unit's MULTI/EXEC still go to both. */
void prop_feed_repl(int db, int argc, const char *const *argv, const size_t *lens);
/* The command fed instead of c's own argv: prop_prevent() + prop_feed(c->db). */
void prop_rewrite(struct client *c, int argc, const char *const *argv, const size_t *lens);
/* Feed c's argv as it is now, at once (FUNCTION LOAD under the script
 * mutex), and not again at the end of the call. */
void prop_self(struct client *c);

/* Building a command argument by argument (one at a time per thread; no
 * other prop_op_* call may come between begin and end). */
void prop_op_begin(int db);
void prop_op_arg(const char *s, size_t n);
void prop_op_str(const char *s);
void prop_op_ll(long long v);
void prop_op_end(void);                 /* feeds it (prop_feed) */

/* Units (see the header comment).  Nest; the outermost end feeds. */
void prop_unit_begin(void);
void prop_unit_end(void);

/* A key removed because its TTL (or every field's TTL) passed: DEL.  Slot
 * lock held. */
void prop_key_expired(int db, const char *key, size_t klen);

/* Tests: where fed commands go instead of the AOF (NULL: aof_feed_cmd). */
extern void (*prop_sink)(int db, int argc, const char *const *argv, const size_t *lens);

#endif
