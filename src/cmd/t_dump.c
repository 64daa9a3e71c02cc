/* t_dump.c - DUMP and RESTORE, in Redis's serialization so payloads move
 * between HotKV and redis-server either way.
 *
 * A payload is the value as an RDB file holds it (type byte + encoding,
 * persist/rdb_types.c), then the RDB version it was written with (2 bytes,
 * little-endian; ours is rdb-version) and a CRC-64/Jones of everything
 * before the CRC (8 bytes, little-endian).  RESTORE refuses a version
 * newer than the newest we read (12) or a wrong checksum, and anything it
 * cannot decode, with Redis's error texts.
 *
 * Handlers run with the key's slot lock held by the dispatcher. */
#include <limits.h>
#include <string.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "acl.h"
#include "blocking.h"
#include "../persist/prop.h"
#include "../persist/rdb.h"
#include "../base/crc64.h"
#include "commands.h"
#include "notify.h"

#define ERR_PAYLOAD "ERR DUMP payload version or checksum are wrong"
#define ERR_BAD_FORMAT "ERR Bad data format"
#define ERR_BUSYKEY "BUSYKEY Target key name already exists."

int dump_payload(struct entry *e, struct rdb_out *o)
{
    int ver = __atomic_load_n(&cfg.rdb_version, __ATOMIC_RELAXED);
    if (ver < 10 || ver > RDB_VERSION_MAX)
        ver = RDB_VERSION_DEFAULT;
    rdb_out_init_mem(o);
    o->compress = __atomic_load_n(&cfg.rdbcompression, __ATOMIC_RELAXED);
    if (rdb_save_value(o, e, ver) < 0) {
        rdb_out_free(o);
        return -1;
    }
    unsigned char foot[10];
    foot[0] = (unsigned char)(ver & 0xff);
    foot[1] = (unsigned char)((ver >> 8) & 0xff);
    rdb_w_raw(o, foot, 2);
    uint64_t crc = crc64(0, o->buf, o->len);
    for (int i = 0; i < 8; i++)
        foot[i] = (unsigned char)(crc >> (8 * i));
    rdb_w_raw(o, foot, 8);
    return 0;
}

void dump_command(struct client *c)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    if (!e) {
        reply_null(&c->out);
        return;
    }
    struct rdb_out o;
    if (dump_payload(e, &o) < 0) {
        reply_error(&c->out, ERR_DUMP_FAILED);
        return;
    }
    reply_bulk(&c->out, (const char *)o.buf, o.len);
    rdb_out_free(&o);
}

/* Redis's verifyDumpPayload: footer version not newer than ours, CRC. */
static int payload_ok(const unsigned char *p, size_t len, int *ver)
{
    if (len < 10)
        return 0;
    const unsigned char *f = p + len - 10;
    *ver = f[0] | f[1] << 8;
    if (*ver > RDB_VERSION_MAX)
        return 0;
    if (atomic_load_explicit(&debug_skip_checksum, memory_order_relaxed))
        return 1;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++)
        want |= (uint64_t)f[2 + i] << (8 * i);
    return crc64(0, p, len - 8) == want;
}

void restore_command(struct client *c)
{
    long long ttl, idle = -1, freq = -1;
    int replace = 0, absttl = 0;
    unsigned slot = kslot(c, 1);
    const char *key = c->argv[1];
    size_t klen = c->argvlen[1];

    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "replace")) {
            replace = 1;
        } else if (arg_is(c, j, "absttl")) {
            absttl = 1;
        } else if (arg_is(c, j, "idletime") && more >= 1 && freq == -1) {
            if (arg_ll(c, j + 1, &idle) < 0)
                return;
            if (idle < 0) {
                reply_error(&c->out, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            j++;
        } else if (arg_is(c, j, "freq") && more >= 1 && idle == -1) {
            if (arg_ll(c, j + 1, &freq) < 0)
                return;
            if (freq < 0 || freq > 255) {
                reply_error(&c->out, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            j++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    long idx = -1;
    struct entry *old = db_get_idx(c->db, slot, key, klen, LK_NOSTATS, &idx);
    if (old && !replace) {
        reply_error(&c->out, ERR_BUSYKEY);
        return;
    }
    if (arg_ll(c, 2, &ttl) < 0)
        return;
    if (ttl < 0) {
        reply_error(&c->out, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    const unsigned char *p = (const unsigned char *)c->argv[3];
    size_t plen = c->argvlen[3];
    int ver;
    if (!payload_ok(p, plen, &ver)) {
        reply_error(&c->out, ERR_PAYLOAD);
        return;
    }
    long long now = db_now_ms();
    long long at = ttl;
    if (ttl && !absttl)
        at = (long long)((unsigned long long)ttl + (unsigned long long)now);
    int expired = ttl && db_already_expired(at); /* never while replaying an AOF */

    struct rdb_in in;
    int t;
    /* The reader sees the body only (the footer was checked above): a
     * value cut short fails instead of reading footer bytes as its own,
     * and counts are bounded by the body's bytes. */
    rdb_in_init_mem(&in, p, plen - 10);
    in.version = ver;
    in.now_ms = db_loading || db_master_apply ? 1 : now; /* replaying an AOF: no field counts as expired */
    /* sanitize-dump-payload: yes, or clients for a client that is not our
     * master, not an AOF being replayed and not a skip-sanitize-payload
     * user.  The payload is checked in full either way; this decides what
     * INFO's dump_payload_sanitizations counts (rdb.h). */
    int san = __atomic_load_n(&cfg.sanitize_dump_payload, __ATOMIC_RELAXED);
    in.deep = san == 1 || (san == 2 && !db_loading && !db_master_apply && !(c->flags & CF_MASTER) && !acl_skip_sanitize(c));
    struct entry *e = NULL;
    if (rdb_r_type(&in, &t) == 0 && rdb_is_object_type(t))
        e = rdb_load_value(&in, t, key, klen, ttl && !expired ? at : -1);
    if (!e && !(in.empty_key == 2 && !in.failed)) {
        /* Redis logs why at verbose level (rdbReportCorruptRDB in a
         * RESTORE); its tests look for it. */
        if (in.failed)
            log_msg(LL_VERBOSE, "RESTORE of key '%.*s': bad data format in the payload: %s",
                    (int)(klen > 128 ? 128 : klen), key, in.err);
        reply_error(&c->out, ERR_BAD_FORMAT);
        return;
    }
    if (!e || expired) {
        /* Already expired (or a hash whose every field has): the key ends
         * up absent; an existing one replaced is deleted. */
        if (e)
            entry_free(e);
        if (old) {
            db_del(c->db, slot, key, klen);
            signal_modified_key(c, c->db, slot, key, klen);
            notify_keyspace_event(NOTIFY_GENERIC, "del", key, klen, c->db);
            /* DEL, or UNLINK with lazyfree-lazy-server-del (Redis). */
            int lazy = __atomic_load_n(&cfg.lazyfree_lazy_server_del, __ATOMIC_RELAXED);
            const char *argv[2] = {lazy ? "UNLINK" : "DEL", key};
            size_t lens[2] = {lazy ? 6 : 3, klen};
            prop_rewrite(c, 2, argv, lens);
        }
        reply_ok(&c->out);
        return;
    }
    rdb_apply_lru(e, idle, (int)freq);
    if (old) {
        db_replace(c->db, slot, idx, e);
        notify_keyspace_event(NOTIFY_NEW, "new", key, klen, c->db); /* Redis deletes, then adds */
    } else {
        db_add(c->db, slot, e);
    }
    if (e->type == OBJ_LIST || e->type == OBJ_ZSET || e->type == OBJ_STREAM)
        signal_key_ready(c->db, slot, key, klen);
    if (ttl && !absttl) {
        /* Propagated with the absolute time, as Redis does. */
        const char **argv = hk_malloc(sizeof(*argv) * ((size_t)c->argc + 1));
        size_t *lens = hk_malloc(sizeof(*lens) * ((size_t)c->argc + 1));
        char tb[24];
        for (int j = 0; j < c->argc; j++) {
            argv[j] = c->argv[j];
            lens[j] = c->argvlen[j];
        }
        lens[2] = (size_t)ll_to_str(tb, at);
        argv[2] = tb;
        argv[c->argc] = "ABSTTL";
        lens[c->argc] = 6;
        prop_rewrite(c, c->argc + 1, argv, lens);
        hk_free(argv);
        hk_free(lens);
    }
    signal_modified_key(c, c->db, slot, key, klen);
    notify_keyspace_event(NOTIFY_GENERIC, "restore", key, klen, c->db);
    reply_ok(&c->out);
}
