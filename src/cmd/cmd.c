/* cmd.c - the dispatcher: lookup, gates, locks, stats.
 *
 * The table it dispatches from (cmd_table, src/commands.c) is data: name,
 * handler, arity, flags, key positions and ACL categories, in the shape
 * COMMAND INFO reports.  cmd_execute() applies the
 * gates in Redis's order (unknown command, arity, the enable-debug-command /
 * enable-module-command gate of protected commands, authentication), then
 * takes the shard locks of every key the command names in ascending slot
 * order, runs the handler to completion and releases them: that is what
 * makes MSET, DEL k1 k2, RENAME and COPY atomic against every other thread.
 * Commands flagged CMD_ALL_LOCKS (FLUSHALL, SWAPDB, KEYS, ...) hold every
 * shard lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "acl.h"
#include "blocking.h"
#include "commands.h"
#include "errorstats.h"
#include "evict.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "persistence.h"
#include "slowlog.h"
#include "tracking.h"
#include "t_vset.h"
#include "../persist/aof.h"
#include "../persist/snapshot.h"
#include "../persist/prop.h"
#include "../persist/repl.h"
#include "repl.h"
#include "../persist/replica.h"
#include "../cluster/cluster.h"


unsigned (*cmd_script_flags)(struct client *c, const struct cmd *cmd);

/* ------------------------------------------------------------ lookup --- */
#define LOOKUP_SIZE 1024
static const struct cmd *lookup_tab[LOOKUP_SIZE];
static size_t lookup_len[LOOKUP_SIZE];
static const char *lookup_name[LOOKUP_SIZE]; /* the name it is found by */
static int ncmds;
/* Per cmd_table row, the name clients call it by: its own, another one
 * (rename-command), or NULL when removed.  Changed only at start-up,
 * before any worker runs. */
static const char **cur_name;
static int ntop;

static unsigned name_hash(const char *s, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)(s[i] | 0x20)) * 16777619u;
    return h;
}

/* The last name each thread looked up, as the client sent it, and what it
 * found: a pipeline repeats one command, so most lookups are this compare.
 * lookup_gen moves when the table is rebuilt (rename-command) and voids
 * every thread's entry. */
static atomic_uint lookup_gen;
static _Thread_local struct {
    const struct cmd *c;
    unsigned gen;
    size_t len;
    char raw[16];
} lookup_last;

static void lookup_build(void)
{
    atomic_fetch_add_explicit(&lookup_gen, 1, memory_order_relaxed);
    memset(lookup_tab, 0, sizeof(lookup_tab));
    for (int i = 0; i < ntop; i++) {
        const char *n = cur_name[i];
        if (!n)
            continue;
        unsigned h = name_hash(n, strlen(n)) & (LOOKUP_SIZE - 1);
        while (lookup_tab[h])
            h = (h + 1) & (LOOKUP_SIZE - 1);
        lookup_tab[h] = &cmd_table[i];
        lookup_len[h] = strlen(n);
        lookup_name[h] = n;
    }
}

void cmd_init(void)
{
    int id = 0;
    for (struct cmd *c = cmd_table; c->name; c++) {
        c->id = id++;
        for (struct cmd *s = c->subs; s && s->name; s++)
            s->id = id++;
        ntop++;
    }
    ncmds = id;
    cur_name = hk_malloc(sizeof(*cur_name) * (size_t)ntop);
    for (int i = 0; i < ntop; i++)
        cur_name[i] = cmd_table[i].name;
    lookup_build();
    acl_init(); /* the default user (command ids are set) */
    persistence_init(); /* persist/'s hooks into cmd/: the AOF replayer, the lock context */
}

/* rename-command, with Redis's order and messages: the old name goes
 * first, then the new one is added ("rename-command X X" keeps X). */
int cmd_rename(const char *oldname, const char *newname, char *err, size_t errlen)
{
    const struct cmd *c = cmd_lookup(oldname, strlen(oldname));
    if (!c) {
        snprintf(err, errlen, "No such command in rename-command");
        return -1;
    }
    if (strlen(newname) > 64) {
        snprintf(err, errlen, "Target command name is too long (64 bytes at most)");
        return -1;
    }
    cur_name[c - cmd_table] = NULL;
    lookup_build();
    if (!newname[0])
        return 0;
    if (cmd_lookup(newname, strlen(newname))) {
        snprintf(err, errlen, "Target command name already exists");
        return -1;
    }
    char *low = hk_strdup(newname); /* kept for the process's life */
    for (char *p = low; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p | 0x20);
    cur_name[c - cmd_table] = low;
    lookup_build();
    return 0;
}

int cmd_count(void)
{
    return ncmds;
}

/* Command names are ASCII letters, digits, '-' and '_'.  The hash folds
 * with | 0x20 (as name_hash does for the table); the compared copy lowers
 * only A-Z, since | 0x20 would turn '_' (bitfield_ro) into DEL. */
const struct cmd *cmd_lookup(const char *name, size_t len)
{
    char low[64];
    unsigned h = 2166136261u;
    unsigned gen = atomic_load_explicit(&lookup_gen, memory_order_relaxed);
    if (len == lookup_last.len && lookup_last.gen == gen && memcmp(name, lookup_last.raw, len) == 0)
        return lookup_last.c;
    if (len > sizeof(low))
        return NULL; /* no name is that long (cmd_rename refuses one) */
    for (size_t i = 0; i < len; i++) {
        unsigned char f = (unsigned char)(name[i] | 0x20);
        low[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)f : name[i];
        h = (h ^ f) * 16777619u;
    }
    h &= LOOKUP_SIZE - 1;
    while (lookup_tab[h]) {
        const struct cmd *c = lookup_tab[h];
        if (lookup_len[h] == len && memcmp(lookup_name[h], low, len) == 0) {
            if (len <= sizeof(lookup_last.raw)) {
                lookup_last.c = c;
                lookup_last.gen = gen;
                lookup_last.len = len;
                memcpy(lookup_last.raw, name, len);
            }
            return c;
        }
        h = (h + 1) & (LOOKUP_SIZE - 1);
    }
    return NULL;
}

const struct cmd *cmd_lookup_sub(const struct cmd *parent, const char *name, size_t len)
{
    size_t pl = strlen(parent->name);
    for (const struct cmd *s = parent->subs; s && s->name; s++) {
        if (str_eq_nocase(name, len, s->name + pl + 1))
            return s;
    }
    return NULL;
}

int getkeys_none(struct client *c, int *idx, int max)
{
    (void)c;
    (void)idx;
    (void)max;
    return 0;
}

int cmd_keys(const struct cmd *cmd, struct client *c, int *idx, int max)
{
    int n = 0, last;
    if (cmd->getkeys)
        return cmd->getkeys(c, idx, max);
    if (cmd->first == 0)
        return 0;
    last = cmd->last < 0 ? c->argc + cmd->last : cmd->last;
    for (int i = cmd->first; i <= last && i < c->argc && n < max; i += cmd->step)
        idx[n++] = i;
    return n;
}

/* ---------------------------------------------------------- argument --- */
int arg_ll(struct client *c, int i, long long *v)
{
    if (!str_to_ll(c->argv[i], c->argvlen[i], v)) {
        reply_error(&c->out, ERR_NOT_INT);
        return -1;
    }
    return 0;
}

int arg_ll_range(struct client *c, int i, long long min, long long max, long long *v, const char *errmsg)
{
    if (!str_to_ll(c->argv[i], c->argvlen[i], v) || *v < min || *v > max) {
        reply_error(&c->out, errmsg ? errmsg : ERR_NOT_INT);
        return -1;
    }
    return 0;
}

int arg_d(struct client *c, int i, double *v)
{
    if (!str_to_d(c->argv[i], c->argvlen[i], v)) {
        reply_error(&c->out, ERR_NOT_FLOAT);
        return -1;
    }
    return 0;
}

int arg_ld(struct client *c, int i, long double *v)
{
    if (!str_to_ld(c->argv[i], c->argvlen[i], v)) {
        reply_error(&c->out, ERR_NOT_FLOAT);
        return -1;
    }
    return 0;
}

void reply_arity_error(struct client *c)
{
    reply_errorf(&c->out, "ERR wrong number of arguments for '%s' command", c->cmd->name);
}

void reply_unknown_subcommand(struct client *c)
{
    char up[64];
    size_t n = 0;
    const char *p = c->argv[0];
    for (; n < c->argvlen[0] && n < sizeof(up) - 1; n++)
        up[n] = (char)((p[n] >= 'a' && p[n] <= 'z') ? p[n] - 32 : p[n]);
    up[n] = 0;
    reply_errorf(&c->out, "ERR unknown subcommand '%.*s'. Try %s HELP.", c->argc > 1 ? (int)(c->argvlen[1] > 128 ? 128 : c->argvlen[1]) : 0,
                 c->argc > 1 ? c->argv[1] : "", up);
}

static void unknown_command(struct client *c)
{
    char args[256];
    size_t n = 0;
    args[0] = 0;
    for (int i = 1; i < c->argc && n < 128; i++) {
        int room = 128 - (int)n;
        int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ", (int)(c->argvlen[i] < (size_t)room ? c->argvlen[i] : (size_t)room), c->argv[i]);
        if (w < 0)
            break;
        n += (size_t)w;
        if (n >= sizeof(args))
            n = sizeof(args) - 1;
    }
    reply_errorf(&c->out, "ERR unknown command '%.*s', with args beginning with: %s", (int)(c->argvlen[0] > 128 ? 128 : c->argvlen[0]), c->argv[0], args);
}

/* ---------------------------------------------------------- dispatch --- */
static void reply_busy(struct client *c)
{
    reply_error(&c->out, atomic_load(&script_busy) == 2
                             ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                             : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
}

#define MAX_STACK_KEYS 64

/* Cluster mode (cluster/cluster.h): whether this node serves c's command.
 * Keys in different slots get CROSSSLOT; one slot this node owns, stable,
 * is the fast path (one relaxed load); anything else asks cluster_route,
 * with the keys looked up first when the slot is migrating or importing
 * (ASK for missing keys, TRYAGAIN for a part of them).  Commands without
 * keys run here.  A transaction: each command is checked when queued and
 * its slot remembered (c->cl_tx_slot); EXEC checks that slot again, with
 * the queued commands' keys looked up as one request's.  0
 * serve; -1 the error was replied. */
static int cluster_check(struct client *c, const struct cmd *cmd)
{
    c->cl_recheck = 0;
    if (cmd->fn == multi_command) {
        c->cl_tx_slot = -1;
        return 0;
    }
    int in_multi = c->ms && multi_in_progress(c);
    int is_exec = cmd->fn == exec_command;
    if (is_exec && !in_multi)
        return 0;
    unsigned fl = is_exec ? multi_queued_flags(c) : cmd_flags_of(c, cmd);
    int shard = cmd->fn == spublish_command || cmd->fn == ssubscribe_command || cmd->fn == sunsubscribe_command;
    int slot = -1, multiple = 0, nk = 0;
    int idx[MAX_STACK_KEYS], *kidx = idx;
    if (is_exec) {
        if (c->cl_tx_slot == -2) {
            reply_error(&c->out, CLUSTER_CROSSSLOT_ERR);
            return -1;
        }
        if (c->cl_tx_slot < 0)
            return 0;
        slot = c->cl_tx_slot;
    } else {
        if (c->argc > MAX_STACK_KEYS)
            kidx = hk_malloc(sizeof(int) * (size_t)c->argc);
        nk = cmd_keys(cmd, c, kidx, c->argc);
        for (int i = 0; i < nk; i++) {
            int k = kidx[i];
            int s = (int)key_slot(c->argv[k], c->argvlen[k]);
            if (slot < 0) {
                slot = s;
            } else if (s != slot) {
                if (kidx != idx)
                    hk_free(kidx);
                reply_error(&c->out, CLUSTER_CROSSSLOT_ERR);
                return -1;
            } else if (c->argvlen[k] != c->argvlen[kidx[0]] || memcmp(c->argv[k], c->argv[kidx[0]], c->argvlen[k])) {
                multiple = 1;
            }
        }
        if (slot < 0) {
            if (kidx != idx)
                hk_free(kidx);
            return 0;
        }
    }
    unsigned char b = atomic_load_explicit(&cluster_slot_bits[slot], memory_order_relaxed);
    if (!(b == CSB_MINE && atomic_load_explicit(&cluster_ok, memory_order_relaxed))) {
        unsigned rf = ((fl & CMD_WRITE) ? CR_WRITE : 0) |
                      (((c->flags & CF_ASKING) || (cmd->flags & CMD_ASKING)) ? CR_ASKING : 0) |
                      ((c->flags & CF_CLUSTER_READONLY) ? CR_READONLY : 0) | (shard ? CR_SHARD_PUBSUB : 0) |
                      (!strcmp(cmd->name, "migrate") ? CR_MIGRATE : 0) | (c->tls ? 0 : CR_PLAIN);
        int missing = 0, existing = 0;
        if ((b & (CSB_MIGRATING | CSB_IMPORTING)) && !shard) {
            spin_lock(&ks.locks[slot]);
            if (is_exec)
                multi_queued_keys_here(c, (unsigned)slot, &missing, &existing, &multiple);
            for (int i = 0; i < nk; i++) {
                int k = kidx[i];
                if (db_get(c->db, (unsigned)slot, c->argv[k], c->argvlen[k], LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE))
                    existing++;
                else
                    missing++;
            }
            spin_unlock(&ks.locks[slot]);
        }
        char err[400];
        if (cluster_route(slot, rf, missing, existing, multiple, err, sizeof(err)) < 0) {
            if (kidx != idx)
                hk_free(kidx);
            reply_error(&c->out, err);
            return -1;
        }
        /* Served because every key is still here: MIGRATE (or a DEL) on
         * another thread may move one before this command takes the slot's
         * lock, so cmd_execute looks again under it (cluster_keys_gone;
         * EXEC: exec_command, once its locks are taken). */
        if ((b & CSB_MIGRATING) && (nk > 0 || (is_exec && existing)) && !missing && !shard &&
            (!in_multi || is_exec))
            c->cl_recheck = slot + 1;
    }
    if (kidx != idx)
        hk_free(kidx);
    if (in_multi && !is_exec)
        c->cl_tx_slot = c->cl_tx_slot == -1 || c->cl_tx_slot == slot ? slot : -2;
    return 0;
}

/* Under the slot's lock, before running a command cluster_check let
 * through on a migrating slot because all its keys were here: 1 when one has
 * gone since (moved by MIGRATE, deleted), and the command must be routed
 * again (ASK / TRYAGAIN), as Redis's single thread routes and runs in one
 * step.  Run otherwise, it would create the key here while the target has it
 * too. */
static int cluster_keys_gone(struct client *c, const int *kidx, int nk)
{
    unsigned slot = (unsigned)c->cl_recheck - 1;
    c->cl_recheck = 0;
    for (int i = 0; i < nk; i++)
        if (!db_get(c->db, slot, c->argv[kidx[i]], c->argvlen[kidx[i]], LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE))
            return 1;
    return 0;
}

void cmd_execute(struct client *c)
{
    const struct cmd *cmd = cmd_lookup(c->argv[0], c->argvlen[0]);
    struct worker_stats *ws = &c->w->stats;
    unsigned skip_set = 0;

    if (c->flags & CF_REPLY_SKIP_NEXT) {
        c->flags = (c->flags & ~CF_REPLY_SKIP_NEXT) | CF_REPLY_SKIP;
        skip_set = 1;
    }
    c->out.muted = (c->flags & (CF_REPLY_OFF | CF_REPLY_SKIP)) != 0;
    /* Before CF_EXECUTING: what the tracking-table-max-keys check drops
     * reaches c ahead of this command's reply, as in Redis. */
    tracking_cmd_begin(c);
    c->flags |= CF_EXECUTING;
    size_t rej_mark = c->out.len;
    STAT_ADD(ws->commands, 1);

    if (!cmd) {
        unknown_command(c);
        multi_flag_error(c);
        STAT_ADD(ws->errors, 1);
        errorstat_add("ERR", 3);
        goto done;
    }
    if (cmd->subs) {
        if (c->argc < 2) {
            c->cmd = cmd;
            if (cmd->fn) {
                goto run;
            }
            reply_arity_error(c);
            multi_flag_error(c);
            STAT_ADD(ws->errors, 1); /* counted as Redis does (a rejected call) */
            STAT_ADD(ws->cmd_rejected[cmd->id], 1);
            errorstat_add("ERR", 3);
            goto done;
        }
        const struct cmd *sub = cmd_lookup_sub(cmd, c->argv[1], c->argvlen[1]);
        if (!sub) {
            reply_unknown_subcommand(c);
            multi_flag_error(c);
            STAT_ADD(ws->errors, 1);
            errorstat_add("ERR", 3);
            goto done;
        }
        cmd = sub;
    }
run:
    c->cmd = cmd;
    if ((cmd->arity > 0 && c->argc != cmd->arity) || (cmd->arity < 0 && c->argc < -cmd->arity)) {
        reply_arity_error(c);
        goto rejected;
    }
    /* enable-debug-command (Redis 7's CMD_PROTECTED gate: after arity,
     * before authentication). */
    if (cmd->fn == debug_command && !config_allows(cfg.enable_debug_command, c)) {
        reply_error(&c->out, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                             "can run it from a local connection, otherwise you need to set this option in the "
                             "configuration file, and then restart the server.");
        goto rejected;
    }
    if (cmd->fn == module_command && strcmp(cmd->name, "module|list") && strcmp(cmd->name, "module|help") &&
        !config_allows(cfg.enable_module_command, c)) {
        reply_error(&c->out, "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
                             "you can run it from a local connection, otherwise you need to set this option in the "
                             "configuration file, and then restart the server.");
        goto rejected;
    }
    /* ACL (cmd/acl.h): one byte for a user that may run everything;
     * otherwise bind a new connection to its user and check the rules. */
    if (HK_UNLIKELY(!c->acl_fast) && acl_gate(c, cmd) < 0)
        goto rejected;
    if (!c->authenticated && !(cmd->flags & CMD_NO_AUTH)) {
        reply_error(&c->out, ERR_NOAUTH);
        goto rejected;
    }
    /* Cluster mode: MOVED, ASK, CROSSSLOT, CLUSTERDOWN ... (after ACL and
     * authentication, as Redis's processCommand); never for the master's
     * stream.  A redirected EXEC discards the transaction. */
    if (HK_UNLIKELY(cluster_on) && !(c->flags & CF_MASTER) && cluster_check(c, cmd) < 0) {
        if (cmd->fn == exec_command && c->ms && multi_in_progress(c)) {
            multi_client_gone(c);
            goto rejected_plain;
        }
        goto rejected;
    }
    /* A monitor may not touch the keyspace (Redis: it is a replica). */
    if (HK_UNLIKELY(c->flags & CF_MONITOR) && (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE))) {
        reply_error(&c->out, "ERR Replica can't interact with the keyspace");
        goto rejected;
    }
    /* RESP2 subscribed mode: only the pub/sub context commands. */
    if ((c->flags & CF_PUBSUB) && c->out.resp == 2 && cmd->fn != ping_command && cmd->fn != subscribe_command &&
        cmd->fn != ssubscribe_command && cmd->fn != unsubscribe_command && cmd->fn != sunsubscribe_command &&
        cmd->fn != psubscribe_command && cmd->fn != punsubscribe_command && cmd->fn != quit_command &&
        cmd->fn != reset_command) {
        reply_errorf(&c->out,
                     "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                     cmd->name);
        goto rejected;
    }
    if ((cmd->flags & CMD_NO_MULTI) && c->ms && multi_in_progress(c)) {
        reply_error(&c->out, "ERR Command not allowed inside a transaction");
        goto rejected;
    }
    /* A script past busy-reply-threshold: only ALLOW_BUSY commands. */
    if (atomic_load_explicit(&script_busy, memory_order_relaxed) && !(cmd->flags & CMD_ALLOW_BUSY)) {
        reply_busy(c);
        goto rejected;
    }
    /* A replica (persist/replica.h): its master's RDB loading, the link
     * down with replica-serve-stale-data no, replica-read-only.  One
     * relaxed load on a master; the master's own stream passes. */
    if (HK_UNLIKELY(atomic_load_explicit(&replica_gate, memory_order_relaxed) != 0) && !(c->flags & CF_MASTER)) {
        int g = atomic_load_explicit(&replica_gate, memory_order_relaxed);
        if (((g & RG_LOADING) && !(cmd->flags & CMD_LOADING)) ||
            ((g & RG_ASYNC_LOADING) && (cmd->flags & CMD_NO_ASYNC_LOADING))) {
            reply_error(&c->out, "LOADING Redis is loading the dataset in memory");
            goto rejected;
        }
        /* EXEC: judged by its queued commands (Redis's cmd_flags and
         * cmd_inv_flags), so a replica that went stale or read-only
         * after they were queued aborts the transaction. */
        int exec_q = cmd->fn == exec_command && c->ms && multi_in_progress(c);
        if ((g & RG_LINK_DOWN) && !__atomic_load_n(&cfg.replica_serve_stale_data, __ATOMIC_RELAXED) &&
            (!(cmd_flags_of(c, cmd) & CMD_STALE) || (exec_q && multi_queued_lacks(c, CMD_STALE)))) {
            reply_error(&c->out, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
            goto rejected;
        }
        if ((g & RG_REPLICA) && __atomic_load_n(&cfg.replica_read_only, __ATOMIC_RELAXED) &&
            ((cmd_flags_of(c, cmd) & CMD_WRITE) || (exec_q && (multi_queued_flags(c) & CMD_WRITE)))) {
            reply_error(&c->out, "READONLY You can't write against a read only replica.");
            goto rejected;
        }
    }
    /* The last background save failed (stop-writes-on-bgsave-error). */
    if ((cmd->flags & CMD_WRITE) || cmd->fn == ping_command) {
        const char *misconf = persist_write_error();
        if (!misconf)
            misconf = aof_write_error();
        if (misconf && (c->flags & CF_MASTER)) {
            /* The master's stream is never refused (the replica would
             * diverge): applied anyway with replica-ignore-disk-write-
             * errors, else the link is dropped until the disk works (Redis
             * panics instead). */
            if (cmd->fn != ping_command && !__atomic_load_n(&cfg.replica_ignore_disk_write_errors, __ATOMIC_RELAXED)) {
                log_msg(LL_WARNING, "Replica was unable to write command to disk: disconnecting from the master "
                                    "(replica-ignore-disk-write-errors no)");
                client_close_asap(c); /* not run: its bytes stay out of the history */
                goto done;
            }
            misconf = NULL;
        }
        if (misconf) {
            reply_error(&c->out, misconf);
            goto rejected;
        }
    }
    /* maxmemory (cmd/evict.h): make room first, then refuse what would
     * grow memory if none could be made, as Redis's processCommand: DENYOOM
     * commands, EXEC of a transaction holding one, and anything queued
     * inside MULTI except EXEC/DISCARD/QUIT/RESET. */
    evict_pre_cmd_oom = 0;
    /* Not while a busy script yields (Redis: isInsideYieldingLongCommand). */
    if (__atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) > 0 && !db_loading &&
        !atomic_load_explicit(&script_busy, memory_order_relaxed)) {
        int oom = evict_perform() == EVICT_FAIL;
        /* Invalidations of evicted keys go before this command's reply. */
        if (tracking_pending) {
            c->flags &= ~CF_EXECUTING;
            tracking_flush();
            c->flags |= CF_EXECUTING;
            rej_mark = c->out.len;
        }
        if (oom) {
            int in_multi = c->ms && multi_in_progress(c);
            /* A script's declared flags count (cmd_flags_of). */
            int reject = (cmd_flags_of(c, cmd) & CMD_DENYOOM) != 0;
            if (in_multi && cmd->fn != exec_command && cmd->fn != discard_command && cmd->fn != quit_command &&
                cmd->fn != reset_command)
                reject = 1;
            if (in_multi && cmd->fn == exec_command && multi_queued_denyoom(c))
                reject = 1;
            if (reject) {
                reply_error(&c->out, OOM_ERR);
                goto rejected;
            }
            evict_pre_cmd_oom = 1;
        }
    }
    /* min-replicas-to-write (persist/repl.h): writes, scripts that may
     * write (their declared flags) and EXEC of a transaction with writes
     * need enough good replicas, as Redis's processCommand.  One relaxed
     * load while the setting is 0. */
    if (__builtin_expect(__atomic_load_n(&cfg.min_replicas_to_write, __ATOMIC_RELAXED) > 0, 0) &&
        ((cmd_flags_of(c, cmd) & CMD_WRITE) ||
         (cmd->fn == exec_command && c->ms && multi_in_progress(c) && (multi_queued_flags(c) & CMD_WRITE))) &&
        !repl_enough_good_replicas()) {
        reply_error(&c->out, "NOREPLICAS Not enough good replicas to write.");
        goto rejected;
    }
    /* CLIENT PAUSE (cmd/pause.h): the command waits, unconsumed, until the
     * pause ends; before MULTI queueing, as Redis's processCommand. */
    if (__builtin_expect(atomic_load_explicit(&pause_actions, memory_order_relaxed) != 0, 0) &&
        pause_postpone_if_paused(c, cmd)) {
        if (skip_set) { /* CLIENT REPLY SKIP still applies to it */
            c->flags = (c->flags & ~CF_REPLY_SKIP) | CF_REPLY_SKIP_NEXT;
            skip_set = 0;
        }
        STAT_ADD(ws->commands, (unsigned long long)-1); /* counted when it runs */
        goto done;
    }
    if (c->ms && multi_in_progress(c) && cmd->fn != exec_command && cmd->fn != discard_command &&
        cmd->fn != multi_command && cmd->fn != watch_command && cmd->fn != quit_command && cmd->fn != reset_command) {
        multi_queue_command(c, cmd);
        reply_status(&c->out, "QUEUED");
        goto done;
    }
    monitor_feed_script(c, cmd);
    {
        /* One clock read per command: the previous command's end time is
         * this one's start (process_input refreshes it per read batch). */
        long long t0 = c->w->now_us;
        size_t before = c->out.len;
        db_cmd_time_ms = t0 / 1000;
        db_cmd_time_us = t0;
        db_notouch = (c->flags & CF_NO_TOUCH) && strcmp(cmd->name, "touch") != 0;
        /* Propagation (persist/prop.h): the write is fed to the AOF before
         * its locks are released. */
        unsigned long long pd = prop_top_begin();
        if (cmd->flags & CMD_ALL_LOCKS) {
            if (db_lock_all_ex(1) < 0) {
                reply_busy(c);
            } else {
                cmd->fn(c);
                prop_top_end(c, pd, cmd_is_write);
                monitor_feed(c, cmd);
                db_unlock_all();
            }
        } else if (cmd->flags & CMD_SELF_LOCKING) {
            cmd->fn(c);
            prop_top_end(c, pd, cmd_is_write);
            monitor_feed(c, cmd);
        } else {
            int idx[MAX_STACK_KEYS], *kidx = idx, nk;
            unsigned slots[MAX_STACK_KEYS], *sl = slots;
            int maxk = c->argc;
            if (maxk > MAX_STACK_KEYS) {
                kidx = hk_malloc(sizeof(int) * (size_t)maxk);
                sl = hk_malloc(sizeof(unsigned) * (size_t)maxk);
            }
            nk = cmd_keys(cmd, c, kidx, maxk);
            for (int i = 0; i < nk; i++) {
                unsigned s = db_key_slot(c->argv[kidx[i]], c->argvlen[kidx[i]]);
                c->kslot[kidx[i]] = s;
                sl[i] = s;
            }
        relock:
            if (nk == 1) {
                if (!spin_trylock(&ks.locks[sl[0]]) && db_lock_one_ex(sl[0], 1) < 0) {
                    reply_busy(c);
                } else if (HK_UNLIKELY(c->cl_recheck) && cluster_keys_gone(c, kidx, nk)) {
                    spin_unlock(&ks.locks[sl[0]]);
                    if (cluster_check(c, cmd) == 0)
                        goto relock;
                } else {
                    cmd->fn(c);
                    prop_top_end(c, pd, cmd_is_write);
                    monitor_feed(c, cmd);
                    tracking_remember_keys(c);
                    spin_unlock(&ks.locks[sl[0]]);
                }
            } else if (nk > 1) {
                if (db_lock_slots_ex(sl, nk, 1) < 0) {
                    reply_busy(c);
                } else if (HK_UNLIKELY(c->cl_recheck) && cluster_keys_gone(c, kidx, nk)) {
                    db_unlock_slots(sl, nk);
                    if (cluster_check(c, cmd) == 0)
                        goto relock;
                } else {
                    cmd->fn(c);
                    prop_top_end(c, pd, cmd_is_write);
                    monitor_feed(c, cmd);
                    tracking_remember_keys(c);
                    db_unlock_slots(sl, nk);
                }
            } else {
                cmd->fn(c);
                prop_top_end(c, pd, cmd_is_write);
                monitor_feed(c, cmd);
            }
            if (kidx != idx) {
                hk_free(kidx);
                hk_free(sl);
            }
        }
        /* WAIT / WAITAOF (cmd/repl.h): the offsets this client's writes
         * reached.  Two thread-local loads when nothing was streamed. */
        if (__builtin_expect(repl_tl_woff != 0, 0) ||
            (prop_dirty != pd && atomic_load_explicit(&aof_active, memory_order_relaxed)))
            wait_note_write(c, prop_dirty != pd);
        /* Waiters on keys this command fed are served now, with its
         * locks released, before the client's next command. */
        blocking_serve_ready();
        db_cmd_time_ms = 0;
        db_cmd_time_us = 0;
        long long t1 = clock_now_us();
        c->w->now_us = t1;
        unsigned long long dur = (unsigned long long)(t1 > t0 ? t1 - t0 : 0);
        if (__builtin_expect((c->flags & CF_BLOCKED) != 0, 0)) {
            /* Counted once, when it ends (cmd/blocking.h); the slow log
             * too, but the latency monitor sees this execution now. */
            blocking_note_call(c, dur);
            latency_cmd_event(cmd, dur);
        } else {
            STAT_ADD(ws->cmd_calls[cmd->id], 1);
            STAT_ADD(ws->cmd_usec[cmd->id], dur);
            /* Slow log, latency events, histogram (cmd/slowlog.h). */
            cmd_latency_hooks(c, cmd, dur);
        }
        if (c->out.len > before && c->out.buf[before] == '-') {
            STAT_ADD(ws->cmd_failed[cmd->id], 1);
            if (!(c->flags & CF_ERR_COUNTED)) {
                STAT_ADD(ws->errors, 1);
                errorstat_add_reply(c->out.buf + before, c->out.len - before);
            }
        }
        c->flags &= ~CF_ERR_COUNTED;
        c->last_cmd = cmd;
        /* What the command allocated or freed reaches the shared total now
         * (base/mem.h), not at this thread's next command: other threads'
         * maxmemory checks read it, and this thread may go idle.  Done with
         * no limit set too, so the estimate is right the moment one is
         * (about 8 instructions). */
        mem_publish();
    }
    goto done;
rejected:
    if (cmd->fn == exec_command && multi_in_progress(c)) {
        monitor_feed(c, cmd); /* MULTI was shown: so is its end */
        /* A rejected EXEC aborts the transaction, naming the reason. */
        size_t n = c->out.len > rej_mark ? c->out.len - rej_mark : 0;
        char msg[256];
        if (n >= 3 && c->out.buf[rej_mark] == '-') {
            n -= 3; /* '-' and CRLF */
            if (n > sizeof(msg) - 1)
                n = sizeof(msg) - 1;
            memcpy(msg, c->out.buf + rej_mark + 1, n);
            c->out.len = rej_mark;
            reply_errorf(&c->out, "EXECABORT Transaction discarded because of: %.*s", (int)n, msg);
        }
        multi_client_gone(c);
    }
rejected_plain:
    multi_flag_error(c);
    STAT_ADD(ws->errors, 1);
    STAT_ADD(ws->cmd_rejected[cmd->id], 1);
    if (c->out.len > rej_mark)
        errorstat_add_reply(c->out.buf + rej_mark, c->out.len - rej_mark);
    else
        errorstat_add("ERR", 3);
done:
    /* ASKING covers the next command only (a whole transaction in MULTI). */
    if (HK_UNLIKELY(c->flags & CF_ASKING) && cmd && cmd->fn != asking_command && !(c->ms && multi_in_progress(c)))
        c->flags &= ~CF_ASKING;
    if (skip_set)
        c->flags &= ~CF_REPLY_SKIP;
    c->out.muted = 0;
    c->flags &= ~CF_EXECUTING;
    if (c->pushbuf && c->pushbuf->len) {
        /* Pushes that arrived while the reply was being built. */
        reply_raw(&c->out, c->pushbuf->buf, c->pushbuf->len);
        c->pushbuf->len = 0;
    }
    tracking_cmd_end(c);
}

int config_allows(int mode, const struct client *c)
{
    return mode == CFG_ALLOW_YES || (mode == CFG_ALLOW_LOCAL && client_is_local(c));
}
