/* cluster.h - Redis Cluster mode (cluster-enabled yes): this node's view
 * of the cluster, the cluster bus (Redis 7.0's binary gossip protocol on
 * port + 10000), nodes.conf, and the routing answers (MOVED, ASK, ...) the
 * dispatcher gives.  docs/architecture.md, "Cluster", has the design.
 *
 * Ownership: every node record, link and the slot map belong to the
 * cluster thread ("hotkv-cluster") and are guarded by one mutex (cl_mu in
 * cluster.c); a worker takes it for a CLUSTER command and for a routing
 * decision that is not the common case.  The common case reads only the
 * per-slot bits below (relaxed atomics, rewritten under cl_mu whenever the
 * slot map changes): "this node serves the slot and it is stable". */
#ifndef HK_CLUSTER_H
#define HK_CLUSTER_H

#include <stdatomic.h>
#include <stddef.h>

#define CLUSTER_SLOTS 16384

/* cluster-enabled, fixed at start-up. */
extern int cluster_on;

/* cluster_slot_bits[s]: */
#define CSB_MINE 1        /* this node, a master, owns s */
#define CSB_MASTER_MINE 2 /* this node's master owns s (READONLY reads) */
#define CSB_MIGRATING 4   /* SETSLOT s MIGRATING (on the owner) */
#define CSB_IMPORTING 8   /* SETSLOT s IMPORTING (on the target) */
extern _Atomic unsigned char cluster_slot_bits[CLUSTER_SLOTS];
/* cluster_state:ok (1) or fail (0). */
extern atomic_int cluster_ok;

/* Start-up, before the workers: this node's id and the cluster from
 * cluster-config-file (created when missing); 0, or -1 with err (the
 * start-up stops, as Redis does on a broken nodes.conf or a held lock). */
int cluster_init(char *err, size_t errlen);
/* After the workers: the bus listener and thread.  0 / -1 (err). */
int cluster_start(char *err, size_t errlen);
void cluster_stop(void);

/* The routing decision for a command whose keys all hash to slot
 * (cmd/cmd.c): missing / existing count the keys looked up when the slot
 * is migrating or importing, multiple says there are different keys.
 * 0: serve it here; -1: err holds the error reply (MOVED, ASK, TRYAGAIN,
 * CLUSTERDOWN ...) without the leading '-'. */
#define CR_WRITE 1
#define CR_ASKING 2   /* ASKING was sent, or the command is RESTORE-ASKING */
#define CR_READONLY 4 /* the client sent READONLY */
#define CR_SHARD_PUBSUB 8
#define CR_MIGRATE 16 /* MIGRATE itself: served while the slot moves */
#define CR_PLAIN 32   /* the client is not on TLS (told plaintext ports when the bus is TLS) */
int cluster_route(int slot, unsigned flags, int missing, int existing, int multiple, char *err, size_t cap);
/* The error for keys in different slots. */
#define CLUSTER_CROSSSLOT_ERR "CROSSSLOT Keys in request don't hash to the same slot"

/* Set by the command layer: pause / resume client writes (a master
 * during a coordinated CLUSTER FAILOVER). */
extern void (*cluster_pause_writes)(int on);

/* Set by the command layer: tell the blocked clients this node follows
 * a master now (-UNBLOCKED, as Redis). */
extern void (*cluster_became_replica)(void);

/* Set by the command layer: the slots in bits (16384 bits) left this
 * node's shard; their shard-channel subscribers are dropped. */
extern void (*cluster_slots_left_shard)(const unsigned char *bits);

/* PUBLISH (shard 0: every node) and SPUBLISH (shard 1: the other nodes
 * of this node's shard) in cluster mode: the message over the bus.  What
 * arrives is handed to cluster_deliver_publish (set by the command layer:
 * local subscribers only). */
void cluster_propagate_publish(int shard, const char *ch, size_t clen, const char *msg, size_t mlen);
extern void (*cluster_deliver_publish)(int shard, const char *ch, size_t clen, const char *msg, size_t mlen);

/* INFO cluster. */
size_t cluster_info_section(char *buf, size_t cap);
/* The bus's open links (*conns: INFO clients cluster_connections) and the
 * bytes they hold (INFO memory mem_cluster_links); 0 without cluster. */
size_t cluster_links_info(long *conns);

/* CLUSTER, ASKING, READONLY, READWRITE (cluster.tab). */
struct client;
void cluster_command(struct client *c);
void asking_command(struct client *c);
void readonly_command(struct client *c);
void readwrite_command(struct client *c);

/* Fuzzing only (tests/fuzz/fuzz_bus.c): one cluster bus message through
 * the length checks and processing, against a small fixed view. */
void cluster_fuzz_message(const unsigned char *p, size_t n);

#endif
