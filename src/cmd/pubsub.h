/* pubsub.h - Redis pub/sub across worker threads (cmd/pubsub.c).
 *
 * Each worker keeps its own subscriber maps (channel -> its local
 * clients, shard channel -> clients, pattern -> clients), touched only by
 * that worker.  A global registry maps every channel / shard channel /
 * pattern to per-worker subscriber counts under one rwlock.  PUBLISH reads
 * the registry, delivers to its own worker's subscribers inline and posts
 * one job per other worker that has receivers.  See docs/architecture.md. */
#ifndef HK_PUBSUB_H
#define HK_PUBSUB_H

#include "cmd.h"

void pubsub_init(int nworkers);
/* Drop every subscription of c without replies (RESET, client close).
 * Owner thread only. */
void pubsub_client_gone(struct client *c);
/* Publish msg on channel ch from inside the server (keyspace events):
 * any thread, slot locks may be held.  Every receiver, including those of
 * the calling worker, gets it through its worker's job queue (FIFO), so
 * the messages one thread publishes arrive in order, after the reply of the
 * command being run.  Returns the number of receivers. */
long pubsub_publish_internal(const char *ch, size_t clen, const char *msg, size_t mlen);
/* A PUBLISH / SPUBLISH that came over the cluster bus (cluster/cluster.h):
 * this node's subscribers only. */
void pubsub_deliver_from_bus(int shard, const char *ch, size_t clen, const char *msg, size_t mlen);
/* Cluster mode: the shard-channel subscriptions in the slots set in bits
 * (16384 bits) end, each subscriber told with sunsubscribe. */
void pubsub_drop_shard_slots(const unsigned char *bits);
/* CLIENT LIST fields (owner thread). */
long pubsub_client_channels(const struct client *c);
/* Every name c holds (ACL re-checks): fn returns non-zero to stop. */
void pubsub_client_each(struct client *c, int (*fn)(void *arg, int kind, const char *name, size_t len), void *arg);
long pubsub_client_patterns(const struct client *c);
long pubsub_client_shard(const struct client *c);
/* INFO fields. */
long pubsub_num_channels(void);
long pubsub_num_patterns(void);
long pubsub_num_shard_channels(void);
long pubsub_num_clients(void);

#endif
