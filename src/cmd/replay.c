/* replay.c - see replay.h.  The loading client: no connection (fd -1),
 * authenticated, RESP2, never blocks (CF_DENY_BLOCKING), with a worker of
 * its own (id -1) so cmd_call's per-command stats have somewhere to go.
 * Replies are dropped after each command.  MULTI/EXEC never reach the
 * client: lookup() reports them and aof.c queues and runs the transaction
 * itself (a truncated one is reverted there). */
#include "replay.h"
#include "properr.h"

#include <string.h>

#include "../base/mem.h"
#include "../persist/aof.h"
#include "cmd.h"
#include "multi.h"

struct replay {
    struct client fc;
    struct worker fw;
};

/* Every slot lock for the whole load (a context nested in the caller's
 * when DEBUG LOADAOF holds one): cmd_call runs inside it. */
static void *replay_begin(void)
{
    struct replay *R = hk_malloc(sizeof(*R));
    memset(R, 0, sizeof(*R));
    int ncmd = cmd_count();
    R->fw.id = -1;
    R->fw.stats.cmd_calls = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
    R->fw.stats.cmd_usec = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
    R->fw.stats.cmd_rejected = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
    R->fw.stats.cmd_failed = hk_calloc(sizeof(unsigned long long) * (size_t)ncmd);
    R->fc.fd = -1;
    R->fc.w = &R->fw;
    R->fc.authenticated = 1;
    R->fc.flags = CF_DENY_BLOCKING;
    reply_init(&R->fc.out);
    R->fc.out.resp = 2;
    R->fc.argv_cap = 16;
    R->fc.kslot = hk_malloc(sizeof(unsigned) * 16);
    lockctx_begin_all();
    return R;
}

static void replay_reset_db(void *st)
{
    struct replay *R = st;
    R->fc.db = 0;
}

static int replay_lookup(int argc, char **argv, size_t *lens, const void **handle, const char **name)
{
    const struct cmd *cmd = cmd_lookup(argv[0], lens[0]);
    if (cmd && cmd->subs) {
        if (argc < 2)
            cmd = cmd->fn ? cmd : NULL;
        else
            cmd = cmd_lookup_sub(cmd, argv[1], lens[1]);
    }
    if (!cmd)
        return AOF_REPLAY_UNKNOWN;
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity)) {
        *name = cmd->name;
        return AOF_REPLAY_ARITY;
    }
    *handle = cmd;
    if (cmd->fn == multi_command)
        return AOF_REPLAY_MULTI;
    if (cmd->fn == exec_command)
        return AOF_REPLAY_EXEC;
    return AOF_REPLAY_CMD;
}

static void replay_run(void *st, const void *handle, int argc, char **argv, size_t *lens)
{
    struct replay *R = st;
    struct client *c = &R->fc;
    if (argc > c->argv_cap) {
        c->argv_cap = argc;
        c->kslot = hk_realloc(c->kslot, sizeof(unsigned) * (size_t)argc);
    }
    c->argc = argc;
    c->argv = (const char **)argv;
    c->argvlen = lens;
    c->out.len = 0;
    cmd_call(c, handle);
    if (HK_UNLIKELY(c->out.len >= 3 && c->out.buf[0] == '-'))
        propagation_error(c, 1, c->out.buf + 1, c->out.len - 3, ((const struct cmd *)handle)->name);
    c->out.len = 0;
    c->argv = NULL;
    c->argvlen = NULL;
    c->argc = 0;
}

static void replay_end(void *st)
{
    struct replay *R = st;
    lockctx_end();
    hk_free(R->fw.stats.cmd_calls);
    hk_free(R->fw.stats.cmd_usec);
    hk_free(R->fw.stats.cmd_rejected);
    hk_free(R->fw.stats.cmd_failed);
    hk_free(R->fc.kslot);
    reply_free(&R->fc.out);
    if (R->fc.ms)
        multi_client_gone(&R->fc);
    hk_free(R);
}

static const struct aof_replayer replayer = {
    .begin = replay_begin,
    .reset_db = replay_reset_db,
    .lookup = replay_lookup,
    .run = replay_run,
    .end = replay_end,
};

void replay_init(void)
{
    aof_set_replayer(&replayer);
}
