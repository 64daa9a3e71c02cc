/* t_stream.h - stream command handlers (t_stream.c; table rows in
 * t_stream.tab, COMMAND DOCS rows in t_stream.docs). */
#ifndef HK_T_STREAM_H
#define HK_T_STREAM_H

#include "cmd.h"

cmd_fn xadd_command, xtrim_command, xdel_command, xlen_command, xrange_command, xrevrange_command, xread_command,
    xreadgroup_command, xsetid_command, xinfo_command, xgroup_command, xack_command, xpending_command,
    xclaim_command, xautoclaim_command;

/* Key positions of XREAD / XREADGROUP (the keys after STREAMS). */
int xread_getkeys(struct client *c, int *idx, int max);

/* Consumer groups (t_stream.c; persist/rdb_stream.c saves and loads them).
 * A stream's `cgroups` points at a struct cgroups once a group exists. */
#include "../ds/stream.h"

#define ENTRIES_READ_INVALID (-1LL)

struct consumer;
struct nack {
    struct stream_id id;
    long long delivery_time;
    unsigned long long delivery_count;
    struct consumer *consumer;
};

struct pel {
    struct nack **v;
    size_t n, cap;
};

struct consumer {
    long long seen_time;
    struct pel pel;
    size_t nlen;
    char name[];
};

struct cgroup {
    struct stream_id last_id;
    long long entries_read;
    struct pel pel;
    struct consumer **cons;
    size_t ncons, ccap;
    size_t nlen;
    char name[];
};

struct cgroups {
    struct cgroup **v;
    size_t n, cap;
};

/* PEL: index of the first nack with ID >= *id (*found when equal);
 * insert n at index i (keeping the ID order). */
size_t pel_search(const struct pel *p, const struct stream_id *id, int *found);
void pel_insert_at(struct pel *p, size_t i, struct nack *n);
/* A new group / consumer, kept in name order; NULL when the name exists. */
struct cgroup *cg_create(struct stream *s, const char *name, size_t nlen, const struct stream_id *id,
                         long long entries_read);
struct consumer *consumer_create(struct cgroup *g, const char *name, size_t nlen, long long now);
/* Redis's logical read counter of an ID (streamEstimateDistanceFromFirstEverEntry):
 * ENTRIES_READ_INVALID when it cannot tell. */
long long estimate_distance(const struct stream *s, const struct stream_id *id);

#endif
