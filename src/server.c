/* server.c - process start-up and shutdown: configuration, daemonizing,
 * pidfile, workers, signals.
 *
 * Signals are blocked in every thread and taken synchronously by the main
 * thread with sigwait(), so no handler ever runs in the middle of a
 * command.  SHUTDOWN raises SIGTERM at the process for the same path. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/mem.h"
#include "base/slab.h"
#include "base/util.h"
#include "cluster/cluster.h"
#include "cmd/acl.h"
#include "cmd/commands.h"
#include "cmd/evict.h"
#include "cmd/loop.h"
#include "cmd/memstats.h"
#include "cmd/multi.h"
#include "cmd/notify.h"
#include "cmd/pause.h"
#include "cmd/pubsub.h"
#include "cmd/repl.h"
#include "cmd/shutdown.h"
#include "config/config.h"
#include "cmd/cmd.h"
#include "net/tls.h"
#include "db/object.h"
#include "ds/vdist.h"
#include "persist/repl.h"
#include "persist/replica.h"
#include "persist/snapshot.h"
#include "script/script.h"
#include "types/types.h"

atomic_int shutdown_save_mode = -1;

long long server_start_ms;


/* The calls from lower layers up, installed before anything runs
 * (docs/architecture.md, "Calls upward go through hooks"). */
void server_wire(void)
{
    types_init();            /* db/ frees, copies and sizes values through type_ops */
    cmd_install_net_hooks(); /* the loop's calls into cmd/ (net/hooks.h) */
    script_install_hooks();  /* cmd/'s and persist/'s calls into scripting */
}

/* Set when the SIGTERM comes from the SHUTDOWN command (its own SAVE /
 * NOSAVE then rule, not shutdown-on-sigterm). */
static atomic_int shutdown_by_command;

void server_request_shutdown(void)
{
    atomic_store(&shutdown_by_command, 1);
    kill(getpid(), SIGTERM);
}

static void daemonize(void)
{
    int fd;
    if (fork() != 0)
        exit(0);
    setsid();
    if ((fd = open("/dev/null", O_RDWR)) != -1) {
        dup2(fd, STDIN_FILENO);
        if (!cfg.logfile || !cfg.logfile[0]) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        if (fd > STDERR_FILENO)
            close(fd);
    }
}

static void write_pidfile(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        log_msg(LL_WARNING, "Failed to write PID file: %s", strerror(errno));
        return;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

/* The start-up banner, in the place of Redis's ASCII logo: printed when
 * the log is standard output on a terminal, or always with
 * always-show-logo (Redis's own test suite starts servers so, and waits for
 * the banner's "PID: n" ahead of "Server initialized"); otherwise Redis's
 * one line, "Running mode=..., port=...". */
static void startup_banner(void)
{
    const char *mode = cfg.cluster_enabled ? "cluster" : "standalone";
    int port = cfg.port ? cfg.port : tls_cfg.port;
    if (!config_always_show_logo() && !((!cfg.logfile || !cfg.logfile[0]) && isatty(STDOUT_FILENO))) {
        log_msg(LL_NOTICE, "Running mode=%s, port=%d.", mode, port);
        return;
    }
    char buf[512];
    snprintf(buf, sizeof(buf),
             "\n"
             "        .-------.    HotKV %s (speaks Redis %s) 64 bit\n"
             "        | H | K |    Running in %s mode\n"
             "        |---+---|    Port: %d\n"
             "        | O | V |    PID: %d\n"
             "        '-------'\n"
             "\n",
             HOTKV_VERSION, REDIS_COMPAT_VERSION, mode, port, (int)getpid());
    log_raw(LL_NOTICE, buf);
}

int server_main(int argc, char **argv)
{
    char err[2048];
    sigset_t set;

    mem_thread_register(); /* the main thread's allocations (base/mem.h) */
    int sig;
    const char *pidfile;

    if (argc == 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("HotKV server v=%s redis_compat=%s malloc=%s bits=64\n", HOTKV_VERSION, REDIS_COMPAT_VERSION, mem_allocator());
        return 0;
    }
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("Usage: hotkv-server [/path/to/hotkv.conf] [--name value ...]\n"
               "Examples:\n"
               "  hotkv-server --port 7000 --threads 4\n"
               "  hotkv-server /etc/hotkv.conf --loglevel verbose --requirepass secret\n");
        return 0;
    }
    config_defaults();
    cmd_init();
    if (config_from_args(argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "\n%s\n", err);
        return 1;
    }
    if (log_open(cfg.logfile) < 0) {
        fprintf(stderr, "Can't open the log file: %s\n", strerror(errno));
        return 1;
    }
    log_set_level(cfg.loglevel);
    if (cfg.dir && chdir(cfg.dir) < 0) {
        fprintf(stderr, "Can't chdir to '%s': %s\n", cfg.dir, strerror(errno));
        return 1;
    }
    /* The config file's user lines, then the aclfile (cmd/acl.h): a
     * relative aclfile is in dir, as in Redis. */
    if (acl_load_at_startup() < 0)
        return 1;
    if (cfg.daemonize)
        daemonize();
    pidfile = cfg.pidfile && cfg.pidfile[0] ? cfg.pidfile : (cfg.daemonize ? "/var/run/hotkv.pid" : NULL);
    if (pidfile)
        write_pidfile(pidfile);

    /* Block the signals we take with sigwait before any thread starts. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    server_start_ms = time_ms();
    log_msg(LL_NOTICE, "oO0OoO0OoO0Oo HotKV is starting oO0OoO0OoO0Oo");
    log_msg(LL_NOTICE, "HotKV version=%s, redis_compat=%s, bits=64, pid=%d, just started", HOTKV_VERSION, REDIS_COMPAT_VERSION, (int)getpid());
    startup_banner();
    db_init(cfg.databases);
    notify_init();
    evict_init();
    vd_init(); /* vector-set kernels for this CPU (ds/vdist.h) */
    lazyfree_start();
    memstats_mark_startup(); /* used_memory_startup: before any data (cmd/memstats.h) */
    /* The dataset comes back before the first client: AOF when appendonly
     * is on (it has every acknowledged write), else the RDB file.  A
     * broken file stops the start-up here, nothing half-loaded. */
    /* Redis's order: "Server initialized", then the loading (whose
     * failure is the log's last line), then "Ready to accept". */
    log_msg(LL_NOTICE, "Server initialized");
    if (persist_load_at_startup() < 0) {
        lazyfree_stop();
        if (pidfile)
            unlink(pidfile);
        return 1;
    }
    /* What this thread allocated so far (tables, the loaded dataset) must
     * reach the shared total that maxmemory checks read (base/mem.h): the
     * main thread calls nothing that would publish it later. */
    mem_publish();
    slab_thread_idle(); /* a thread that is not a worker lends its slab heap back (base/slab.h) */
    /* cluster-enabled: this node's identity and view from nodes.conf. */
    persist_dataset_replaced = signal_dataset_replaced;
    cluster_pause_writes = pause_failover_writes;
    cluster_deliver_publish = pubsub_deliver_from_bus;
    cluster_became_replica = unblock_everywhere;
    cluster_slots_left_shard = pubsub_drop_shard_slots;
    if (cluster_init(err, sizeof(err)) < 0) {
        log_msg(LL_WARNING, "%s", err);
        lazyfree_stop();
        if (pidfile)
            unlink(pidfile);
        return 1;
    }
    repl_start(); /* before the workers: a PSYNC may come at once */
    if (workers_start(cfg.threads) < 0) {
        log_msg(LL_WARNING, "Failed listening on port %d (tcp), aborting.", cfg.port);
        if (pidfile)
            unlink(pidfile);
        return 1;
    }
    persist_start();
    replica_start(); /* after the workers: the link becomes a client of one */
    if (cluster_start(err, sizeof(err)) < 0) {
        log_msg(LL_WARNING, "%s", err);
        if (pidfile)
            unlink(pidfile);
        _exit(1);
    }
    log_msg(LL_NOTICE, "%d worker threads serve clients", cfg.threads);
    log_msg(LL_NOTICE, "Ready to accept connections tcp");

    /* A shutdown may first wait for lagging replicas (cmd/shutdown.h), and
     * a signal's shutdown waits while DEBUG PAUSE-CRON holds the cron
     * (held: the signal): then signals are looked for every 10 ms between
     * polls. */
    int waiting = 0, by_signal = 0, held = 0, wait_fl = 0;
    for (;;) {
        int by_cmd;
        if (waiting || held) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            sig = sigtimedwait(&set, NULL, &ts);
            if (sig < 0 && held) {
                if (!shutdown_held(0)) { /* SHUTDOWN ABORT */
                    held = 0;
                    continue;
                }
                if (atomic_load_explicit(&cron_paused, memory_order_relaxed))
                    continue;
                shutdown_held(1); /* the cron runs again: the signal's turn */
                sig = held;
                held = 0;
                by_cmd = 0;
                goto act;
            }
            if (sig < 0) {
                int r = shutdown_poll();
                if (r > 0) {
                    if (shutdown_may_finish(wait_fl))
                        break;
                    waiting = by_signal = 0; /* called off: runs on */
                    continue;
                }
                if (r < 0) /* SHUTDOWN ABORT */
                    waiting = by_signal = 0;
                continue;
            }
        } else if (sigwait(&set, &sig) != 0) {
            continue;
        }
        by_cmd = atomic_exchange(&shutdown_by_command, 0);
        if (!by_cmd)
            log_msg(LL_WARNING, "Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
        if (held) {
            if (!by_cmd && sig == SIGINT) { /* a second signal: Redis's impatient user */
                log_msg(LL_WARNING, "You insist... exiting now.");
                if (pidfile)
                    unlink(pidfile);
                _exit(1);
            }
            if (!by_cmd)
                continue;
            shutdown_held(1); /* SHUTDOWN goes ahead of the held signal */
            held = 0;
        }
        if (!waiting && !by_cmd && atomic_load_explicit(&cron_paused, memory_order_relaxed)) {
            shutdown_hold();
            held = sig;
            continue;
        }
    act:
        if (waiting) {
            /* Already shutting down: a SHUTDOWN joins it; a SIGINT after
             * a signal's shutdown is an impatient user (Redis). */
            if (!by_cmd && sig == SIGINT && by_signal) {
                log_msg(LL_WARNING, "You insist... exiting now.");
                if (pidfile)
                    unlink(pidfile);
                _exit(1);
            }
            continue;
        }
        /* The SHUTDOWN command's flags, or shutdown-on-sigint /
         * shutdown-on-sigterm's (config/config.h): save / nosave override
         * the save points, now skips the wait for replicas. */
        int fl = by_cmd ? atomic_load(&shutdown_cmd_flags)
                        : __atomic_load_n(sig == SIGINT ? &config_shutdown_on_sigint : &config_shutdown_on_sigterm,
                                          __ATOMIC_RELAXED);
        if (!by_cmd && (fl & (SHUTDOWN_FLAG_SAVE | SHUTDOWN_FLAG_NOSAVE)))
            atomic_store(&shutdown_save_mode, (fl & SHUTDOWN_FLAG_SAVE) ? 1 : 0);
        log_msg(LL_NOTICE, "User requested shutdown...");
        if (shutdown_begin(fl)) {
            waiting = 1;
            by_signal = !by_cmd;
            wait_fl = fl;
            continue;
        }
        if (shutdown_may_finish(fl))
            break;
    }
    atomic_store(&server_shutdown, 1);
    cluster_stop();
    replica_stop();
    workers_wake_all();
    workers_join();
    repl_stop(); /* the replicas are closed */
    /* No client is left: save the final snapshot (SHUTDOWN SAVE, or save
     * points with SIGTERM / plain SHUTDOWN) and close the AOF. */
    persist_stop();
    persist_shutdown(atomic_load(&shutdown_save_mode));
    lazyfree_stop();
    if (pidfile)
        unlink(pidfile);
    log_msg(LL_WARNING, "HotKV is now ready to exit, bye bye...");
    return 0;
}
