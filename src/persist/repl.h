/* persist/repl.h - replication, the master side (PSYNC-compatible with
 * Redis 7 replicas).  docs/architecture.md, "Replication", has the design.
 *
 * The stream: every write fed by persist/prop.c (in the order the workers
 * executed them, with SELECT where the database changes and MULTI/EXEC
 * kept whole) is appended to the replication buffer, whose bytes are
 * numbered by master_repl_offset.  A replica's socket is handed over by the
 * worker that ran its PSYNC (repl_adopt) and from then on belongs to the
 * replication thread (hotkv-repl), which makes the full sync (a fork child
 * writes an RDB straight to the socket), streams the buffer, reads ACKs and
 * keeps the backlog; workers never write to a replica.
 *
 * Locking: repl_mu (a leaf, internal) guards the buffer, the offsets, the
 * replication ids and the replica list; no I/O happens under it.  The only
 * other lock taken here is the snapshot freeze (persist_fork_ex), by the
 * replication thread holding nothing. */
#ifndef HK_PERSIST_REPL_H
#define HK_PERSIST_REPL_H

#include <stdatomic.h>
#include <stddef.h>

/* prop.c's sink: one command of the stream (db -1: no SELECT needed). */
void repl_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens);
/* DEBUG REPLICATE's: argv streamed to the replicas as one command, with no
 * SELECT and outside the MULTI ... EXEC grouping of repl_feed_cmd (Redis's
 * replicationFeedSlaves with dictid -1); nothing while this server is a
 * replica, as for its own writes. */
void repl_feed_verbatim(int argc, const char *const *argv, const size_t *lens);

/* ------------------------------------------------- as a replica's buffer ---
 * A replica keeps its master's history: the same replication id and
 * offsets, and a backlog holding the master's stream bytes exactly as they
 * came (persist/replica.c feeds them), so that its own replicas (chained
 * replication) and, after a failover, the other replicas of its old master
 * continue with a partial resync.  While this server is a replica its own
 * writes are not streamed (PROP_ON_REPL is off), as in Redis. */
/* 1 while this server replicates from a master (REPLICAOF host port). */
extern atomic_int repl_role_replica;
int repl_is_replica(void);
/* Bytes of the master's stream the replica applied (their offsets follow
 * the history's), if the history is still gen (repl_hist_gen() when the
 * command began: one that raced with REPLICAOF is dropped). */
unsigned repl_hist_gen(void);
void repl_feed_raw(const char *p, size_t n, unsigned gen);
/* After a full sync from a master: the history is the master's (id,
 * offset), the backlog restarts empty at offset, and this server's own
 * replicas are dropped (they must resync). */
void repl_history_reset(const char *id, long long offset);
/* The master continued us under a new id (+CONTINUE <id>): the old id
 * becomes the secondary one, valid up to the current offset; our replicas
 * reconnect to learn it. */
void repl_history_new_id(const char *id);
/* REPLICAOF NO ONE: a new id for the history from here on, the old one
 * kept as secondary (so the replicas of the old master continue from us);
 * our replicas reconnect; writes are streamed again.  replica (0/1) sets
 * the role flag and the streaming of own writes. */
void repl_set_role_replica(int replica);
void repl_history_shift(void);
/* A new id with no second one, at the same offset: no replica can
 * continue (a master's restart whose expired-key DELs were too many to
 * keep). */
void repl_history_fresh(void);
/* The offset of the last byte of the history (master_repl_offset) and
 * whether a backlog exists (a PSYNC can name our history). */
long long repl_offset(int *have_backlog);
/* Replication traffic for INFO stats: bytes received from our master
 * (handshake, full sync payload, stream) and sent to our replicas by this
 * process (the stream, disk-based payloads; a diskless payload is written
 * by the fork child and not counted). */
extern atomic_ullong repl_net_in, repl_net_out;
void repl_net_bytes(unsigned long long *in, unsigned long long *out);
/* Write all n bytes to a blocking socket (no SIGPIPE): 0, or -1 with
 * errno (the link thread's handshake, the fork child's transfer). */
int repl_send_all(int fd, const void *buf, size_t n);
/* Drop every replica of ours (they reconnect and PSYNC): how many. */
int repl_drop_replicas(void);

/* End of a worker's loop turn: if this thread fed the stream, wake the
 * replication thread when it sleeps (one write to its eventfd per turn
 * at most; a thread-local test otherwise). */
void repl_kick(void);

/* The replication thread: started with the workers, stopped at shutdown
 * (replicas are closed). */
void repl_start(void);
void repl_stop(void);

/* What a replica said with REPLCONF before its PSYNC. */
struct repl_hello {
    int listening_port;   /* REPLCONF listening-port (0: none) */
    char ip[64];          /* REPLCONF ip-address, else the peer's address */
    int capa_eof, capa_psync2;
    int rdb_only;         /* REPLCONF rdb-only 1: the RDB, then the connection ends (redis-cli --rdb) */
    int old_sync;         /* SYNC, not PSYNC: no +FULLRESYNC line before the payload */
    int req;              /* REPLCONF rdb-filter-only: REPL_REQ_* (what the RDB leaves out) */
};
#define REPL_REQ_EXCLUDE_DATA 1
#define REPL_REQ_EXCLUDE_FUNCTIONS 2
/* PSYNC replid offset: take fd (a descriptor of the replica's connection
 * the caller no longer uses) and answer it from the replication thread:
 * +CONTINUE when the history from offset is still in the backlog, else
 * +FULLRESYNC and a full sync.  ssl: the connection's TLS state (the
 * caller's worker hands it over: it neither uses nor frees it after a 0),
 * or NULL; a TLS replica's full sync is disk-based, since a fork child
 * cannot write through the parent's SSL.  0, or -1 with a Redis error
 * reply in err (the caller keeps fd and ssl). */
int repl_adopt(int fd, void *ssl, const struct repl_hello *h, const char *replid, long long offset, char *err,
               size_t errlen);

/* The replication id (40 hex digits + NUL) and a new one (DEBUG
 * CHANGE-REPL-ID; the old one becomes the secondary id). */
void repl_replid(char out[41]);
void repl_replid_change(void);
/* The body of INFO replication after "# Replication\r\n" into buf:
 * bytes written (truncated at cap). */
size_t repl_info(char *buf, size_t cap);

/* ROLE: the offset and the online replicas (at most max). */
struct repl_role_entry {
    char ip[64];
    int port;
    long long ack;
};
long long repl_role(struct repl_role_entry *out, int max, int *n);

/* FAILOVER's state for INFO's master_failover_state (cmd/repl.c drives
 * it): 0 no-failover, 1 waiting-for-sync, 2 failover-in-progress. */
extern atomic_int repl_failover_state;
enum { FO_NONE, FO_WAIT_SYNC, FO_IN_PROGRESS };
/* Replicas attached (any state). */
int repl_replica_count(void);
/* SHUTDOWN's wait (cmd/shutdown.c): how many of the *total attached
 * replicas are online and have acknowledged every byte of the stream;
 * with log_lagging, a NOTICE line for each other one, as Redis logs it
 * when it shuts down ("Lagging replica ip:port reported offset N behind
 * master, lag=S, state=NAME."). */
int repl_replicas_synced(int *total, int log_lagging);
/* The replica that announced ip:port: -1 none, 0 not online yet, 1
 * online (its last ACK in *ack). */
int repl_replica_state(const char *ip, int port, long long *ack);

/* INFO stats sync_full, sync_partial_ok, sync_partial_err. */
void repl_sync_stats(long long out[3]);
/* CONFIG RESETSTAT: those counts and the stream's byte counts to 0. */
void repl_reset_stats(void);
/* Bytes the replication buffer holds (INFO memory mem_replication_backlog). */
size_t repl_buffer_bytes(void);
/* What of it is only there for replicas that have not read it yet (beyond
 * repl-backlog-size): not counted against maxmemory, as in Redis 7.  A
 * relaxed load, for the dispatcher. */
size_t repl_buffer_not_counted(void);

/* ------------------------------------------------ WAIT, WAITAOF, min-replicas ---
 * (the commands: cmd/repl.c.)  repl_tl_woff: the offset the calling
 * thread's last streamed write reached (0: none since it was taken); the
 * dispatcher moves it into the client (c->woff) after each call. */
extern _Thread_local unsigned long long repl_tl_woff __attribute__((tls_model("local-exec")));
/* Online replicas whose REPLCONF ACK (fsynced: its FACK) reached woff. */
int repl_count_acks(long long woff, int fsynced);
/* Have the replication thread send REPLCONF GETACK * on its next turn. */
void repl_request_getack(void);
/* Clients blocked in WAIT / WAITAOF (cmd/repl.c keeps the count; each new
 * one bumps repl_wait_gen), and what the replication thread calls while
 * there are some and an ACK came, the AOF's fsynced position moved or a
 * client started waiting: it runs on the replication thread and must only
 * post jobs (set once, read with an acquire load). */
extern atomic_int repl_wait_clients;
extern atomic_uint repl_wait_gen;
extern void (*repl_wait_wake)(void);
/* min-replicas-to-write: online replicas whose last ACK is at most
 * min-replicas-max-lag seconds old (refreshed by the replication thread
 * every loop turn), and whether writes may go on: 1 when the setting is
 * off (either value 0) or this server is a replica. */
extern atomic_int repl_good_replicas;
int repl_enough_good_replicas(void);

#endif
