/* cluster.h - hotkv-benchmark's --cluster mode: the node table and slot map
 * shared by the worker threads, discovery of the map with CLUSTER SLOTS on
 * the seed node, and the checks that refuse what cannot be routed.
 *
 * Threads: the main thread discovers the map before the workers start.
 * Afterwards any worker may, on a -MOVED reply, point a slot at another
 * node (a relaxed atomic store into slot_node) and append a node it did not
 * know (under mu; the entry is complete before nnodes is raised with
 * release order, readers load nnodes with acquire).  Nodes are never
 * removed, so an index stays valid for the whole run. */
#ifndef HK_BM_CLUSTER_H
#define HK_BM_CLUSTER_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "slot.h"
#include "workload.h"

#define BM_CLUSTER_SPARE 16       /* room for nodes met after discovery */
#define BM_SLOT_NONE 0xffffu      /* slot served by no known node */
#define BM_CLUSTER_MAX_KEY 512    /* longest key argument routed */

struct bm_config;

struct bm_node {
    char host[256];
    int port;
    char name[300];              /* "host:port" for the report */
    struct sockaddr_storage addr;
    socklen_t addrlen;
};

struct bm_cluster {
    struct bm_node *nodes;       /* maxn entries */
    int maxn;
    _Atomic int nnodes;
    int ninitial;                /* masters found by discovery */
    int uncovered;               /* slots no master served at discovery */
    pthread_mutex_t mu;
    _Atomic uint16_t slot_node[BM_NSLOTS];
};

/* Connect to host:port (blocking, timeout_s), AUTH if a password is set,
 * run CLUSTER SLOTS and fill cl (nodes = the masters, in order of their
 * first slot).  Returns 0, or -1 with the reason in err. */
int bm_cluster_discover(struct bm_cluster *cl, const struct bm_config *cfg, char *err,
                        size_t errcap);
void bm_cluster_free(struct bm_cluster *cl);

/* Index of node host:port, added (resolved) if new; -1 if the table is
 * full or the name does not resolve. */
int bm_cluster_node(struct bm_cluster *cl, const char *host, int port);

static inline int bm_cluster_owner(struct bm_cluster *cl, unsigned slot)
{
    unsigned n = atomic_load_explicit(&cl->slot_node[slot], memory_order_relaxed);
    return n == BM_SLOT_NONE ? 0 : (int)n;
}

/* The slot of template t's key (its first argument) with key index k in
 * every __rand_int__ (--cluster draws one index per request). */
unsigned bm_template_slot(const struct bm_template *t, uint64_t k);

/* 0 if every template of wl can be routed (one key, the first argument);
 * else -1 with the reason in err.  what names the option ("--command"). */
int bm_cluster_check_workload(const struct bm_workload *wl, const char *what, char *err,
                              size_t errcap);

#endif
