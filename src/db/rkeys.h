/* rkeys.h - a writable replica's own keys with a TTL (Redis's
 * slaveKeysWithExpire).
 *
 * A replica does not expire keys: its master's DEL does (db.h,
 * DB_EXPIRE_PAUSED_REPLICA).  A key that a client wrote with a TTL on a
 * writable replica (replica-read-only no) has no such DEL coming, so the
 * replica remembers it and deletes it itself when the TTL passes, as Redis
 * does: the registry holds each key's name with a bitmap of the databases
 * (0-63, as Redis; keys of higher databases are not tracked) in which it
 * got a TTL.
 *
 * Who writes what:
 *  - db_ttl_set_hook (db.h), installed while the server is a replica,
 *    adds a key (any worker, under the key's slot lock; rk_mu is taken
 *    inside it, never the other way round);
 *  - rkeys_cron (worker 0's cron) samples keys at random, as Redis's
 *    expireSlaveKeys: an expired key is deleted (db_expire_tracked, a
 *    trylock of its slot, never while holding rk_mu), one whose TTL is
 *    gone or whose key is gone is forgotten; it stops after 3 keys with a
 *    TTL still to come, or after about 1 ms;
 *  - rkeys_flush forgets every key (FLUSHALL, a full sync's load, the
 *    replica becoming a master).
 * A per-key counter of additions keeps a key re-added while the cron
 * looked at it from being forgotten on the strength of that look. */
#ifndef HK_DB_RKEYS_H
#define HK_DB_RKEYS_H

/* On (the server became a replica) or off (a master again: forgets all). */
void rkeys_enable(int on);
/* Forget every tracked key. */
void rkeys_flush(void);
/* Keys tracked (INFO slave_expires_tracked_keys). */
long long rkeys_count(void);
/* Expire what is due (worker 0's cron, at hz). */
void rkeys_cron(void);

#endif
