/* t_hash.h - hash command handlers and the helpers other modules use.
 * (Owned by t_hash.c; its command table rows are in t_hash.tab.) */
#ifndef HK_T_HASH_H
#define HK_T_HASH_H

#include "cmd.h"

cmd_fn hset_command, hsetnx_command, hget_command, hmset_command, hmget_command, hdel_command, hlen_command,
    hstrlen_command, hexists_command, hkeys_command, hvals_command, hgetall_command, hincrby_command,
    hincrbyfloat_command, hrandfield_command, hscan_command, hexpire_command, hpexpire_command, hexpireat_command,
    hpexpireat_command, httl_command, hpttl_command, hexpiretime_command, hpexpiretime_command, hpersist_command;

/* The value layer of a hash entry, without a client (tests/unit/test_hash.c
 * drives these directly).  e is an OBJ_HASH entry; its structure pointer is
 * updated in place when an operation reallocates or converts it.  Field
 * TTLs are absolute unix ms, 0 meaning "none"; a field whose TTL is <= now
 * is expired. */

/* A new, empty hash structure in the compact encoding (ENC_LISTPACK). */
void *hash_new(void);
/* Set field f to v; keep_ttl keeps the TTL of an existing live field
 * (HINCRBY), otherwise it is cleared (HSET).  Converts to "hashtable" past
 * the hash-max-listpack-* thresholds.  Returns 1 when the field was created
 * (absent or expired before). */
int hash_set(struct entry *e, const char *f, size_t flen, const char *v, size_t vlen, int keep_ttl);
/* Remove field f whether or not it expired: 1 if it was there. */
int hash_del(struct entry *e, const char *f, size_t flen);
/* Fields stored, expired ones included (HLEN). */
size_t hash_length(struct entry *e);
/* TTL of field f: 0 none, -2 absent (or expired at now). */
long long hash_field_ttl(struct entry *e, const char *f, size_t flen, long long now);
/* HEXPIRE on one field; cond is 0 or one of the HFE_* below.  Returns
 * -2 no field, 0 condition not met, 1 set, 2 deleted (at <= now).  A plain
 * listpack becomes listpackex first. */
#define HFE_NX 1
#define HFE_XX 2
#define HFE_GT 4
#define HFE_LT 8
int hash_set_field_ttl(struct entry *e, const char *f, size_t flen, long long at, int cond, long long now);
/* HPERSIST on one field: -2 no field (or expired), -1 no TTL, 1 removed. */
int hash_persist_field(struct entry *e, const char *f, size_t flen, long long now);
/* Whether any field has a TTL. */
int hash_has_ttl(struct entry *e);
/* Drop up to max expired fields; returns how many were dropped. */
long hash_drop_expired(struct entry *e, long long now, long max);
/* Fields removed because their TTL passed, all threads together (INFO
 * stats "expired_subkeys"); CONFIG RESETSTAT zeroes it. */
unsigned long long hash_expired_subkeys(void);
void hash_expired_subkeys_reset(void);
/* Convert to the "hashtable" encoding (no-op if it is one already). */
void hash_convert_ht(struct entry *e, size_t size_hint);

/* RDB snapshots and DUMP/RESTORE (persist/rdb_types.c).  Visit every
 * stored field (expired ones too) with its value and TTL (0 = none);
 * integers are formatted; a nonzero return from fn stops the walk and is
 * returned. */
typedef int (*hash_field_fn)(void *arg, const char *f, size_t flen, const char *v, size_t vlen, long long ttl);
int hash_visit_fields(struct entry *e, hash_field_fn fn, void *arg);
/* The earliest field TTL (0: none). */
long long hash_min_field_ttl(struct entry *e);
/* A freshly built hash entry (pointer form, not yet in the keyspace) in the
 * form HSET would leave it: a small listpack moves inline (e is freed and
 * the new entry returned), otherwise e itself. */
struct entry *hash_load_finish(struct entry *e);

#endif
