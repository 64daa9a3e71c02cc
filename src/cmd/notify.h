/* notify.h - keyspace notifications (cmd/notify.c), as Redis 7.x.
 *
 * `notify-keyspace-events` selects classes of events (K E g $ l s h z x e t
 * m n d A).  Every write command calls notify_keyspace_event() where Redis
 * calls notifyKeyspaceEvent(): with the classes selected and K (or E) on,
 * it publishes "__keyspace@<db>__:<key>" with the event name as message
 * (or "__keyevent@<db>__:<event>" with the key) through the pub/sub
 * delivery of cmd/pubsub.c (pubsub_publish_internal).
 *
 * Threads: callable on any worker, with slot locks held (it takes only the
 * pub/sub registry's read lock and worker job-queue mutexes, both leaves).
 * Every subscriber, on the caller's own worker too, gets the message through
 * its worker's FIFO job queue, so one key's events reach a subscriber in the
 * order its writers made them (the slot lock orders the writers, and each
 * posts before releasing it), and a client that subscribes and writes on one
 * connection (RESP3) sees the push after the command's reply, as in Redis
 * 7.2+.
 *
 * Cost when notifications are off: notify_keyspace_event() is inline and is
 * one relaxed load and a test. */
#ifndef HK_NOTIFY_H
#define HK_NOTIFY_H

#include <stdatomic.h>
#include <stddef.h>

#include "multi.h" /* signal_modified_key, for KEY_MODIFIED */

/* Redis's class bits (its server.h NOTIFY_*), same values. */
#define NOTIFY_KEYSPACE (1 << 0)  /* K */
#define NOTIFY_KEYEVENT (1 << 1)  /* E */
#define NOTIFY_GENERIC (1 << 2)   /* g */
#define NOTIFY_STRING (1 << 3)    /* $ */
#define NOTIFY_LIST (1 << 4)      /* l */
#define NOTIFY_SET (1 << 5)       /* s */
#define NOTIFY_HASH (1 << 6)      /* h */
#define NOTIFY_ZSET (1 << 7)      /* z */
#define NOTIFY_EXPIRED (1 << 8)   /* x */
#define NOTIFY_EVICTED (1 << 9)   /* e */
#define NOTIFY_STREAM (1 << 10)   /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not part of A) */
#define NOTIFY_MODULE (1 << 13)   /* d */
#define NOTIFY_NEW (1 << 14)      /* n (not part of A) */
#define NOTIFY_ALL                                                                                              \
    (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET | NOTIFY_EXPIRED |   \
     NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* The configured classes (CONFIG SET notify-keyspace-events). */
extern atomic_int notify_flags;

void notify_publish_event(int type, const char *event, const char *key, size_t klen, int dbid);

/* Publish event (a class NOTIFY_xxx) on key of database dbid. */
static inline void notify_keyspace_event(int type, const char *event, const char *key, size_t klen, int dbid)
{
    if (atomic_load_explicit(&notify_flags, memory_order_relaxed) & type)
        notify_publish_event(type, event, key, klen, dbid);
}

/* Whether any of the classes in type is on (skip preparing an event). */
static inline int notify_enabled(int type)
{
    return (atomic_load_explicit(&notify_flags, memory_order_relaxed) & type) != 0;
}

/* The pair Redis writes at a change of a command's key argument argv[ki]:
 * signalModifiedKey() (WATCH, tracking) and the event.  c's slot for
 * argv[ki] is held. */
#define KEY_SIGNAL(c, ki) signal_modified_key((c), (c)->db, kslot((c), (ki)), (c)->argv[(ki)], (c)->argvlen[(ki)])
/* KEY_SIGNAL without the change count (the caller adds its own). */
#define KEY_SIGNAL_ND(c, ki) signal_modified_key_nd((c), (c)->db, kslot((c), (ki)), (c)->argv[(ki)], (c)->argvlen[(ki)])
#define KEY_MODIFIED(c, ki, type, event)                                                                      \
    do {                                                                                                      \
        KEY_SIGNAL((c), (ki));                                                                                \
        notify_keyspace_event((type), (event), (c)->argv[(ki)], (c)->argvlen[(ki)], (c)->db);                \
    } while (0)
/* The event alone, for argv[ki] of c. */
#define KEY_EVENT(c, ki, type, event) notify_keyspace_event((type), (event), (c)->argv[(ki)], (c)->argvlen[(ki)], (c)->db)

/* "KEA" -> flags; -1 on a character that is no class. */
int notify_parse_flags(const char *s, size_t len);
/* flags -> Redis's canonical string (CONFIG GET): "A" or g$lshzxetdn, then
 * K E m.  buf needs 16 bytes. */
void notify_format_flags(int flags, char *buf, size_t cap);
/* CONFIG SET / config file: 0, or -1 with Redis's message in err. */
int notify_config_set(const char *s, size_t len, char *err, size_t errlen);

/* Install the db/ hooks (expired keys, expired hash fields, key misses).
 * Call once before the workers start. */
void notify_init(void);

#endif
