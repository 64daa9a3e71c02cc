/* persist/replica.h - replication, the replica side (REPLICAOF): a link
 * to a master that speaks Redis 7's protocol (a HotKV or a redis-server).
 * docs/architecture.md, "Replication", has the design.
 *
 * The link thread (hotkv-replica) connects, makes the handshake (PING,
 * AUTH with masterauth / masteruser, REPLCONF listening-port, ip-address,
 * capa eof psync2), asks PSYNC with this server's own history (the
 * master's id and offset once it has synced: persist/repl.h) and, for
 * +FULLRESYNC, receives the RDB (EOF-marked or sized) into a temporary
 * file and loads it with the keyspace frozen.  Then the socket becomes a
 * client of worker 0 flagged CF_MASTER: the master's stream is parsed and
 * run there as a client's commands are, its replies muted, and each
 * command's bytes are added to this server's own history as they came
 * (repl_feed_raw), so offsets stay the master's and chained replicas get
 * the master's stream.  That worker sends REPLCONF ACK every second and on
 * GETACK, and closes the link after repl-timeout of silence; the link
 * thread then reconnects and asks for a partial resync.
 *
 * Locking: lmu (internal, a leaf) guards the link's state; apply_mu is
 * held by the master client's worker around each command of the stream
 * (replica_apply_begin / _end) and by persist/repl.c around a fork for a
 * replica of ours, so a snapshot stands for a whole number of the
 * master's commands.  Lock order: apply_mu, then the script mutex and slot
 * locks. */
#ifndef HK_PERSIST_REPLICA_H
#define HK_PERSIST_REPLICA_H

#include <stdatomic.h>
#include <stddef.h>

struct client;
struct worker;

/* The dispatcher's gate (cmd/cmd.c): 0 on a master, so the check is one
 * relaxed load there. */
#define RG_REPLICA 1   /* a master is set: replica-read-only refuses writes */
#define RG_LINK_DOWN 2 /* ... and the link is not up (replica-serve-stale-data) */
#define RG_LOADING 4   /* the master's RDB is being loaded: -LOADING */
#define RG_ASYNC_LOADING 8 /* ... beside the old dataset (swapdb): only NO_ASYNC_LOADING commands get -LOADING */
extern atomic_int replica_gate;

/* REPLICAOF host port: 0 started, 1 already following that master.
 * REPLICAOF NO ONE: replica_unset_master (no-op on a master).  Any
 * thread; start-up (the replicaof directive) too. */
int replica_set_master(const char *host, int port);
void replica_unset_master(void);
/* FAILOVER's demotion: replica_set_master, and the first PSYNC to it
 * carries FAILOVER (the target promotes itself).  Its outcome: 0 not yet,
 * 1 the target accepted the PSYNC, -1 the attempt failed. */
int replica_set_master_failover(const char *host, int port);
int replica_failover_outcome(void);
/* The master followed: 1 and host/port, or 0 on a master. */
int replica_master(char *host, size_t cap, int *port);

/* The link thread: started after the workers, stopped before them. */
void replica_start(void);
void replica_stop(void);

/* apply_mu, recursive on one thread (the link thread's load and the
 * replication thread's fork go through persist/snapshot.c's freeze, which
 * takes it too). */
void replica_apply_lock(void);
int replica_apply_trylock(void); /* 1 taken */
void replica_apply_unlock(void);
/* The database the master's stream is in (apply_mu held): written in a
 * snapshot as repl-stream-db; a new link starts there (the master does
 * not repeat SELECT after +CONTINUE). */
int replica_stream_db(void);
/* Start-up: the RDB said where the stream was. */
void replica_restore_stream_db(int db);

/* On the master client's worker (cmd/repl.c and cmd/loop.c): before a
 * command of the stream runs: 1 with apply_mu held when c is still the
 * link, else 0 (the link was replaced: drop c).  After it ran:
 * replica_apply_end with the command's bytes (p, n, in c's query buffer;
 * n 0 when it did not run) and whether a transaction is open (its bytes
 * enter the history at EXEC / DISCARD, whole).  apply_mu stays held and
 * the bytes of consecutive commands wait until replica_apply_flush, which
 * the worker calls when it is done with c's query buffer for now (before
 * it moves or reads into it): one lock and one history append for each
 * run of commands. */
int replica_apply_begin(struct client *c);
void replica_apply_end(struct client *c, const char *p, size_t n, int in_tx);
void replica_apply_flush(struct client *c);
/* REPLCONF ACK <offset> to the master now (GETACK; the cron's second). */
void replica_send_ack(struct client *c);
/* The master client closed (client_gone). */
void replica_master_gone(struct client *c);
/* Every worker's cron: ACKs and repl-timeout for the worker holding the link. */
void replica_cron(struct worker *w);

/* INFO replication's lines from role: to replica_announced: on a replica
 * (bytes written). */
size_t replica_info(char *buf, size_t cap);
/* ROLE on a replica: host, port, link state name, offset.  0 on a master. */
int replica_role(char *host, size_t cap, int *port, const char **state, long long *off);
/* The link is up (PSYNC from our own replicas is refused otherwise). */
int replica_link_up(void);
/* How old this replica's data may be (ms): since the master's last bytes
 * while the link is up, since the link went down otherwise; very large
 * when it was never up with this master (cluster failover's data age). */
long long replica_data_age_ms(void);

#endif
