/* fuzz_common.h - what the server-side fuzz harnesses share (restore, rdb,
 * aof, manifest, vexpr, config): the invariant check and the one-time
 * set-up of the parts of the server the loaders need.  Each harness is a
 * header of static functions included both by its libFuzzer target
 * (tests/fuzz/fuzz_<name>.c) and by the corpus replay unit test
 * (tests/unit/test_fuzz_corpus.c), so every committed input is a test. */
#ifndef HK_FUZZ_COMMON_H
#define HK_FUZZ_COMMON_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "base/mem.h"
#include "cmd/commands.h"
#include "config/config.h"
#include "db/db.h"
#include "db/object.h"
#include "db/table.h"
#include "ds/vdist.h"
#include "cmd/cmd.h"

#define FZ_CHECK(cond)                                                                                                  \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz: invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);                     \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)


/* Configuration defaults, the command table and 16 empty databases, as
 * server_main sets them up before loading; once per process (the unit
 * tests replay each input in a fresh child). */
static inline void fuzz_server_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    server_wire();
    mem_thread_register();
    log_set_level(LL_NOTHING); /* the loaders' notices, once per input */
    config_defaults();
    cfg.threads = 1;
    cmd_init();
    if (!ks.dbs[0])
        db_init(16);
    vd_init();
}

/* A fake, authenticated RESP2 client with no connection, for harnesses
 * that call a command handler directly; free its reply with
 * reply_free(&c->out) as the harness does. */
static inline void fuzz_client_init(struct client *c)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->authenticated = 1;
    reply_init(&c->out);
    c->out.resp = 2;
}

/* The databases holding a table in some slot (bit d: database d), from
 * the keyspace's slot bitmaps: db_size and db_flush walk all NSLOTS slots
 * of a database, instrumented, most of an input's time otherwise. */
static inline uint64_t fuzz_used_dbs(void)
{
    uint64_t m = 0;
    for (unsigned w = 0; w < NSLOTS / 64; w++) {
        uint64_t bits = atomic_load_explicit(&ks.slot_keys[w], memory_order_relaxed);
        while (bits) {
            unsigned s = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            m |= ks.slot_dbs[s];
        }
    }
    return m;
}

static inline int fuzz_db_used(int d)
{
    return (int)((fuzz_used_dbs() >> d) & 1);
}

/* Empty every database (between inputs of the whole-keyspace loaders):
 * what db_flush does, for the slots that hold tables only. */
static inline void fuzz_flush_all(void)
{
    int lf = lazyfree_enter(LF_NEVER);
    for (unsigned w = 0; w < NSLOTS / 64; w++) {
        uint64_t bits = atomic_load_explicit(&ks.slot_keys[w], memory_order_relaxed);
        while (bits) {
            unsigned s = w * 64 + (unsigned)__builtin_ctzll(bits);
            uint64_t dbs = ks.slot_dbs[s];
            bits &= bits - 1;
            while (dbs) {
                int d = __builtin_ctzll(dbs);
                dbs &= dbs - 1;
                struct table *t = db_detach(d, s);
                if (t)
                    table_free(t, entry_free);
            }
        }
    }
    lazyfree_leave(lf);
}

/* A memfd holding data; its path in *path.  Reused between inputs. */
static inline int fuzz_memfd_path(const char *tag, const uint8_t *data, size_t size, char *path, size_t cap)
{
    static int fd = -1;
    if (fd < 0) {
        fd = memfd_create(tag, 0);
        FZ_CHECK(fd >= 0);
    }
    FZ_CHECK(ftruncate(fd, 0) == 0);
    FZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
