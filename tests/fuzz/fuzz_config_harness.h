/* fuzz_config_harness.h - config-file text through config_load_file
 * (config/config.c), the parser main() uses for hotkv-server <file>: line
 * splitting, quoting, every parameter's value parser.  It returns an error
 * for a bad file, never exits.
 *
 * Input: the file's text (seeds: CONFIG GET * of a real server written back
 * as a file, by tests/fuzz/make_seeds.py), written to a memfd and loaded
 * through /proc/self/fd/N.  After a successful load every parameter is read
 * back the way CONFIG GET * renders it.  The configuration is restored
 * after every input (the string values the input set are freed; the ones
 * they replaced stay in config.c's retire list by design). */
#ifndef HK_FUZZ_CONFIG_HARNESS_H
#define HK_FUZZ_CONFIG_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "proto/reply.h"

static void fuzz_config_get_all(void)
{
    const struct cmd *config = cmd_lookup("config", 6);
    FZ_CHECK(config != NULL);
    const struct cmd *get = cmd_lookup_sub(config, "get", 3);
    FZ_CHECK(get != NULL);
    const char *argv[3] = {"CONFIG", "GET", "*"};
    size_t lens[3] = {6, 3, 1};
    struct client c;
    fuzz_client_init(&c);
    c.argc = 3;
    c.argv = argv;
    c.argvlen = lens;
    c.cmd = get;
    config_command(&c);
    FZ_CHECK(c.out.len > 0 && c.out.buf[0] == '*');
    reply_free(&c.out);
}

/* The configuration as fuzz_server_init left it; restored after every
 * input so that inputs do not depend on each other and memory is balanced
 * (otherwise libFuzzer runs a leak scan after most inputs). */
static struct config fuzz_config_saved;

/* The string values an input set (config_defaults' ones are in the saved
 * copy; the values they replaced sit in config.c's retire list, never
 * freed): freed, and the saved configuration back. */
static void fuzz_config_restore(void)
{
    char **now[] = {&cfg.bind, &cfg.logfile, &cfg.pidfile, &cfg.dir, &cfg.dbfilename,
                    &cfg.config_file, &cfg.maxmemory_policy, &cfg.save, &cfg.appendfilename, &cfg.appenddirname,
                    &cfg.masterauth, &cfg.masteruser, &cfg.replica_announce_ip, &cfg.bind_source_addr,
                    &cfg.cluster_config_file, &cfg.cluster_announce_ip, &cfg.cluster_announce_hostname,
                    &cfg.cluster_announce_human_nodename};
    char *const was[] = {fuzz_config_saved.bind, fuzz_config_saved.logfile,
                         fuzz_config_saved.pidfile, fuzz_config_saved.dir, fuzz_config_saved.dbfilename,
                         fuzz_config_saved.config_file, fuzz_config_saved.maxmemory_policy, fuzz_config_saved.save,
                         fuzz_config_saved.appendfilename, fuzz_config_saved.appenddirname,
                         fuzz_config_saved.masterauth, fuzz_config_saved.masteruser,
                         fuzz_config_saved.replica_announce_ip, fuzz_config_saved.bind_source_addr,
                         fuzz_config_saved.cluster_config_file, fuzz_config_saved.cluster_announce_ip,
                         fuzz_config_saved.cluster_announce_hostname, fuzz_config_saved.cluster_announce_human_nodename};
    for (size_t i = 0; i < sizeof(was) / sizeof(was[0]); i++)
        if (*now[i] != was[i])
            hk_free(*now[i]);
    /* requirepass is config.c's: its bytes live inside a block with their
     * length (binary-safe), published with it and retired, never freed,
     * when replaced; so it is neither freed here nor put back (cfg must
     * keep pointing into config.c's current block). */
    char *rp = cfg.requirepass;
    memcpy(&cfg, &fuzz_config_saved, sizeof(cfg));
    cfg.requirepass = rp;
}

static inline void fuzz_config_one(const uint8_t *data, size_t size)
{
    static int saved;
    char path[64], err[2048];
    fuzz_server_init();
    if (!saved) {
        saved = 1;
        memcpy(&fuzz_config_saved, &cfg, sizeof(cfg));
    }
    fuzz_memfd_path("hotkv-fuzz-config", data, size, path, sizeof(path));
    err[0] = 0;
    int rc = config_load_file(path, err, sizeof(err));
    FZ_CHECK(rc == 0 || rc == -1);
    if (rc < 0)
        FZ_CHECK(err[0] != 0);
    else
        fuzz_config_get_all();
    fuzz_config_restore();
}

#endif
