/* notify.c - keyspace notifications; see notify.h. */
#include "notify.h"

#include <stdio.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../persist/prop.h"
#include "multi.h"
#include "pubsub.h"
#include "t_hash.h"

atomic_int notify_flags;

int notify_parse_flags(const char *s, size_t len)
{
    int flags = 0;
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case 'A': flags |= NOTIFY_ALL; break;
        case 'g': flags |= NOTIFY_GENERIC; break;
        case '$': flags |= NOTIFY_STRING; break;
        case 'l': flags |= NOTIFY_LIST; break;
        case 's': flags |= NOTIFY_SET; break;
        case 'h': flags |= NOTIFY_HASH; break;
        case 'z': flags |= NOTIFY_ZSET; break;
        case 'x': flags |= NOTIFY_EXPIRED; break;
        case 'e': flags |= NOTIFY_EVICTED; break;
        case 'K': flags |= NOTIFY_KEYSPACE; break;
        case 'E': flags |= NOTIFY_KEYEVENT; break;
        case 't': flags |= NOTIFY_STREAM; break;
        case 'm': flags |= NOTIFY_KEY_MISS; break;
        case 'd': flags |= NOTIFY_MODULE; break;
        case 'n': flags |= NOTIFY_NEW; break;
        default: return -1;
        }
    }
    return flags;
}

void notify_format_flags(int flags, char *buf, size_t cap)
{
    static const struct {
        int bit;
        char ch;
    } classes[] = {{NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'}, {NOTIFY_LIST, 'l'},   {NOTIFY_SET, 's'},
                   {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},   {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
                   {NOTIFY_STREAM, 't'},  {NOTIFY_MODULE, 'd'}, {NOTIFY_NEW, 'n'}};
    char out[24];
    size_t n = 0;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        out[n++] = 'A'; /* as Redis: 'n' is not shown next to 'A' */
    } else {
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
            if (flags & classes[i].bit)
                out[n++] = classes[i].ch;
    }
    if (flags & NOTIFY_KEYSPACE)
        out[n++] = 'K';
    if (flags & NOTIFY_KEYEVENT)
        out[n++] = 'E';
    if (flags & NOTIFY_KEY_MISS)
        out[n++] = 'm';
    out[n] = 0;
    snprintf(buf, cap, "%s", out);
}

/* ----------------------------------------------------------- hooks --- */
static void key_expired(int db, unsigned slot, const char *key, size_t klen)
{
    notify_keyspace_event(NOTIFY_EXPIRED, "expired", key, klen, db);
    signal_modified_key(NULL, db, slot, key, klen);
    prop_key_expired(db, key, klen); /* DEL to the AOF, under the slot lock */
}

static void hash_fields_expired(int db, unsigned slot, const char *key, size_t klen, int deleted)
{
    notify_keyspace_event(NOTIFY_HASH, "hexpired", key, klen, db);
    if (deleted)
        notify_keyspace_event(NOTIFY_GENERIC, "del", key, klen, db);
    signal_modified_key(NULL, db, slot, key, klen);
    if (deleted)
        prop_key_expired(db, key, klen);
}

static void key_miss(int db, const char *key, size_t klen)
{
    notify_keyspace_event(NOTIFY_KEY_MISS, "keymiss", key, klen, db);
}

static void key_added(int db, const char *key, size_t klen)
{
    notify_keyspace_event(NOTIFY_NEW, "new", key, klen, db);
}

/* The db/ hooks that exist only for one class follow the flags. */
static void set_class_hooks(int flags)
{
    atomic_store(&db_keymiss_hook, (flags & NOTIFY_KEY_MISS) ? key_miss : NULL);
    atomic_store(&db_key_added_hook, (flags & NOTIFY_NEW) ? key_added : NULL);
}

void notify_init(void)
{
    db_key_expired_hook = key_expired;
    db_hash_expired_hook = hash_fields_expired;
    db_hash_field_expired_hook = hash_prop_field_expired;
    set_class_hooks(atomic_load(&notify_flags));
}

int notify_config_set(const char *s, size_t len, char *err, size_t errlen)
{
    int flags = notify_parse_flags(s, len);
    if (flags < 0) {
        snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    }
    atomic_store(&notify_flags, flags);
    set_class_hooks(flags);
    return 0;
}

/* ---------------------------------------------------------- publish --- */
/* "__keyspace@<db>__:" + name, on the stack when short. */
static void publish_on(const char *prefix, int dbid, const char *name, size_t nlen, const char *msg, size_t mlen)
{
    char stackbuf[256], dbbuf[24];
    int dl = ll_to_str(dbbuf, dbid);
    size_t pl = strlen(prefix), clen = pl + (size_t)dl + 3 + nlen;
    char *ch = clen <= sizeof(stackbuf) ? stackbuf : hk_malloc(clen);
    memcpy(ch, prefix, pl);
    memcpy(ch + pl, dbbuf, (size_t)dl);
    memcpy(ch + pl + (size_t)dl, "__:", 3);
    memcpy(ch + pl + (size_t)dl + 3, name, nlen);
    pubsub_publish_internal(ch, clen, msg, mlen);
    if (ch != stackbuf)
        hk_free(ch);
}

void notify_publish_event(int type, const char *event, const char *key, size_t klen, int dbid)
{
    int flags = atomic_load_explicit(&notify_flags, memory_order_relaxed);
    size_t elen = strlen(event);
    if (!(flags & type))
        return;
    if (flags & NOTIFY_KEYSPACE)
        publish_on("__keyspace@", dbid, key, klen, event, elen);
    if (flags & NOTIFY_KEYEVENT)
        publish_on("__keyevent@", dbid, event, elen, key, klen);
}
