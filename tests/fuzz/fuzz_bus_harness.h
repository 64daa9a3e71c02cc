/* fuzz_bus_harness.h - one cluster bus message (cluster/cluster.c):
 * Redis 7.0's binary header, gossip sections, ping extensions, FAIL,
 * UPDATE, PUBLISH, failover votes, through the length checks and the
 * processing that trusts them (cluster_fuzz_message), against a small
 * fixed view of the cluster rebuilt for each input.
 *
 * Seeds: messages of each type built by tests/fuzz/make_seeds.py. */
#ifndef HK_FUZZ_BUS_HARNESS_H
#define HK_FUZZ_BUS_HARNESS_H

#include <stdint.h>

#include "cluster/cluster.h"
#include "fuzz_common.h"

static inline void fuzz_bus_one(const uint8_t *data, size_t size)
{
    fuzz_server_init();
    cluster_fuzz_message(data, size);
}

#endif
