/* fuzz_aof_harness.h - AOF files through the server's AOF loader
 * (persist/aof.c), the path DEBUG LOADAOF takes: the manifest is read from
 * the AOF directory, the keyspace emptied, the listed file loaded (an RDB
 * preamble through rdb_load_in, then the RESP command stream, every
 * command executed by the loader's client; MULTI/EXEC; a truncated tail).
 *
 * Input: the content of the one base file the manifest lists (seeds: real
 * AOF files by tests/fuzz/make_seeds.py: incr files, a base with an RDB
 * preamble and one without).  The directory is a private temporary one
 * (/dev/shm when there is one), created once per process.
 *
 * Inputs that name a command with effects outside the keyspace (DEBUG,
 * SHUTDOWN, CONFIG, SAVE, replication, scripts and functions, CLIENT,
 * WAIT, MONITOR ...) anywhere, in any case, are skipped: the loader would
 * run them as the server does, and what they do is not the loader's
 * parsing.  After a load every key and value is checked as the RDB
 * target checks them, and the keyspace emptied.  Databases: 2 (SELECT 0-1;
 * DEBUG LOADAOF's flush of each costs a walk of every slot). */
#ifndef HK_FUZZ_AOF_HARNESS_H
#define HK_FUZZ_AOF_HARNESS_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/log.h"
#include "cmd/persistence.h"
#include "fuzz_common.h"
#include "fuzz_rdb_harness.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "proto/reply.h"
#include "script/script.h"

static const char *const fuzz_aof_denied[] = {
    "debug", "shutdown", "config", "save", "sync", "replicaof", "slaveof", "failover", "monitor", "eval", "fcall",
    "function", "script", "client", "wait", "migrate", "module", "bgrewriteaof", "quit", "reset", "acl", "latency",
    "cluster", "readonly", "lolwut", NULL,
};

/* Does the input name a denied command (any case, anywhere)? */
static int fuzz_aof_denied_input(const uint8_t *d, size_t n)
{
    char *low = malloc(n ? n : 1);
    int hit = 0;
    FZ_CHECK(low != NULL);
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(d[i] >= 'A' && d[i] <= 'Z' ? d[i] + 32 : d[i]);
    for (int i = 0; fuzz_aof_denied[i] && !hit; i++)
        hit = memmem(low, n, fuzz_aof_denied[i], strlen(fuzz_aof_denied[i])) != NULL;
    free(low);
    return hit;
}

static char fuzz_aof_dir[256];

static void fuzz_aof_write(const char *name, const void *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", fuzz_aof_dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FZ_CHECK(fd >= 0);
    FZ_CHECK(write(fd, p, n) == (ssize_t)n);
    close(fd);
}

static void fuzz_aof_init(void)
{
    if (fuzz_aof_dir[0])
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fuzz_aof_dir, sizeof(fuzz_aof_dir), "%s/hotkv-fuzz-aof-XXXXXX", base);
    FZ_CHECK(mkdtemp(fuzz_aof_dir) != NULL);
    hk_free(cfg.appenddirname); /* config_defaults' copies: nothing else holds them */
    hk_free(cfg.appendfilename);
    cfg.appenddirname = hk_strdup(fuzz_aof_dir);
    cfg.appendfilename = hk_strdup("appendonly.aof");
    cfg.aof_load_truncated = 1;
    cfg.key_load_delay = 0;
    /* SETRANGE / SETBIT / APPEND stop at this (default 512 MB). */
    cfg.proto_max_bulk_len = 1024 * 1024;
    /* DEBUG LOADAOF empties every database first (db_flush: all NSLOTS
     * slots each, most of an input's time with 16); SELECT 0 and 1 stay. */
    ks.ndb = 2;
    static const char man[] = "file appendonly.aof.1.base.aof seq 1 type b\n";
    fuzz_aof_write("appendonly.aof.manifest", man, sizeof(man) - 1);
}

/* Remove the directory at exit (the fuzzer and the unit test child). */
static void fuzz_aof_cleanup(void)
{
    char path[512];
    if (!fuzz_aof_dir[0])
        return;
    snprintf(path, sizeof(path), "%s/appendonly.aof.1.base.aof", fuzz_aof_dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/appendonly.aof.manifest", fuzz_aof_dir);
    unlink(path);
    rmdir(fuzz_aof_dir);
}

static inline void fuzz_aof_one(const uint8_t *data, size_t size)
{
    static int registered;
    fuzz_server_init();
    fuzz_aof_init();
    if (!registered) {
        registered = 1;
        atexit(fuzz_aof_cleanup);
    }
    if (fuzz_aof_denied_input(data, size))
        return;
    fuzz_aof_write("appendonly.aof.1.base.aof", data, size);

    struct client c;
    fuzz_client_init(&c);
    aof_debug_loadaof(&c);
    FZ_CHECK(c.out.len > 0 && (c.out.buf[0] == '+' || c.out.buf[0] == '-'));
    reply_free(&c.out);

    /* Everything that was loaded must be coherent (the RDB target's walk:
     * slots, counts, every value through DUMP and RESTORE). */
    fuzz_rdb_walk_keyspace();
    fuzz_rdb_reset();
}

#endif
