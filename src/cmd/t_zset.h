/* t_zset.h - zset command handlers and the helpers other modules use.
 * (Owned by t_zset.c; its command table rows are in t_zset.tab.) */
#ifndef HK_T_ZSET_H
#define HK_T_ZSET_H

#include "cmd.h"

cmd_fn zadd_command, zincrby_command, zrem_command, zcard_command, zcount_command, zlexcount_command,
    zscore_command, zmscore_command, zrank_command, zrevrank_command, zrange_command, zrangestore_command,
    zrevrange_command, zrangebyscore_command, zrevrangebyscore_command, zrangebylex_command,
    zrevrangebylex_command, zremrangebyrank_command, zremrangebyscore_command, zremrangebylex_command,
    zpopmin_command, zpopmax_command, zmpop_command, bzpopmin_command, bzpopmax_command, bzmpop_command,
    zrandmember_command, zunion_command, zunionstore_command, zinter_command, zinterstore_command,
    zintercard_command, zdiff_command, zdiffstore_command, zscan_command;

/* The value layer, for other modules (GEO, SORT) and the unit tests.
 * e is a sorted-set entry (OBJ_ZSET); the caller holds its slot lock.
 * A new, empty structure for about hint members of at most maxlen bytes;
 * *enc gets its encoding (listpack below both thresholds). */
void *zset_new_value(size_t hint, size_t maxlen, uint8_t *enc);
size_t zset_length(struct entry *e);
/* 1 and *score if m is a member. */
int zset_score(struct entry *e, const char *m, size_t mlen, double *score);
/* Remove m: 1 if it was there (the caller deletes an emptied key). */
int zset_del(struct entry *e, const char *m, size_t mlen);
/* 0-based rank of m (from the highest when reverse) and its score; -1 if
 * absent. */
long zset_rank(struct entry *e, const char *m, size_t mlen, int reverse, double *score);
/* ZADD of one member with ZA_* flags: 0 if the resulting score would be
 * NaN (nothing changed), else 1 with *out = ZO_* and *newscore.  Converts
 * the encoding when a threshold is passed. */
#define ZA_NX 0x01
#define ZA_XX 0x02
#define ZA_GT 0x04
#define ZA_LT 0x08
#define ZA_INCR 0x10
#define ZO_NOP 0x01
#define ZO_ADDED 0x02
#define ZO_UPDATED 0x04
int zset_add(struct entry *e, double score, const char *m, size_t mlen, int flags, int *out, double *newscore);

/* RDB snapshots and DUMP/RESTORE (persist/rdb_types.c): a freshly built
 * sorted-set entry (pointer form, not yet in the keyspace) in the form
 * ZADD would leave it: a small listpack moves inline (e is freed and the
 * new entry returned), otherwise e itself. */
struct entry *zset_load_finish(struct entry *e);

/* Key positions of the movable-key commands (numkeys forms). */
int zset_getkeys_store(struct client *c, int *idx, int max);   /* Z*STORE dst numkeys key.. */
int zset_getkeys_numkeys(struct client *c, int *idx, int max); /* ZUNION/ZINTER/ZDIFF/ZINTERCARD/ZMPOP */
int zset_getkeys_bzmpop(struct client *c, int *idx, int max);  /* BZMPOP timeout numkeys key.. */

#endif
