/* t_geo.h - the GEO command handlers (t_geo.c; rows in t_geo.tab, COMMAND
 * DOCS in t_geo.docs).  A geo set is a sorted set (types/zset.h) whose
 * scores are 52-bit geohashes (ds/geohash.h). */
#ifndef HK_T_GEO_H
#define HK_T_GEO_H

#include "cmd.h"

cmd_fn geoadd_command, geodist_command, geohash_command, geopos_command, georadius_command, georadius_ro_command,
    georadiusbymember_command, georadiusbymember_ro_command, geosearch_command, geosearchstore_command;

/* Key positions of GEORADIUS / GEORADIUSBYMEMBER: the source, the keys
 * Redis 7.2's STORE / STOREDIST key specs find, and the store key the
 * command actually writes. */
int geo_getkeys_radius(struct client *c, int *idx, int max);
int geo_getkeys_radiusbymember(struct client *c, int *idx, int max);

#endif
