/* persistence.c - see persistence.h.  Replies are Redis's, byte for byte;
 * the PERSIST_* codes come from persist/snapshot.h. */
#include "persistence.h"

#include <strings.h>

#include "../base/log.h"
#include "../db/db.h"
#include "../persist/aof.h"
#include "../persist/snapshot.h"
#include "multi.h"
#include "replay.h"

#define ERR_BUSY_SCRIPT "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."

void save_command(struct client *c)
{
    int rc = persist_save();
    if (rc == PERSIST_OK)
        reply_ok(&c->out);
    else if (rc == PERSIST_IN_PROGRESS)
        reply_error(&c->out, "ERR Background save already in progress");
    else if (rc == PERSIST_BUSY)
        reply_error(&c->out, ERR_BUSY_SCRIPT);
    else
        reply_error(&c->out, "ERR");
}

void bgsave_command(struct client *c)
{
    int schedule = 0;
    if (c->argc > 1) {
        if (c->argc == 2 && c->argvlen[1] == 8 && !strncasecmp(c->argv[1], "schedule", 8)) {
            schedule = 1;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return;
        }
    }
    switch (persist_bgsave(schedule)) {
    case PERSIST_OK:
        reply_status(&c->out, "Background saving started");
        break;
    case PERSIST_SCHEDULED:
        reply_status(&c->out, "Background saving scheduled");
        break;
    case PERSIST_IN_PROGRESS:
        reply_error(&c->out, "ERR Background save already in progress");
        break;
    case PERSIST_OTHER_CHILD:
        reply_error(&c->out, "ERR Another child process is active (AOF?): can't BGSAVE right now. "
                             "Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
        break;
    case PERSIST_BUSY:
        reply_error(&c->out, ERR_BUSY_SCRIPT);
        break;
    default:
        reply_error(&c->out, "ERR Background save failed to start");
        break;
    }
}

void bgrewriteaof_command(struct client *c)
{
    switch (aof_bgrewrite()) {
    case PERSIST_OK:
        reply_status(&c->out, "Background append only file rewriting started");
        break;
    case PERSIST_SCHEDULED:
        reply_status(&c->out, "Background append only file rewriting scheduled");
        break;
    case PERSIST_IN_PROGRESS:
        reply_error(&c->out, "ERR Background append only file rewriting already in progress");
        break;
    default:
        reply_error(&c->out, "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.");
        break;
    }
}

void persist_debug_reload(struct client *c)
{
    int merge = 0, noflush = 0, nosave = 0;
    for (int i = 2; i < c->argc; i++) {
        if (c->argvlen[i] == 5 && !strncasecmp(c->argv[i], "merge", 5))
            merge = 1;
        else if (c->argvlen[i] == 7 && !strncasecmp(c->argv[i], "noflush", 7))
            noflush = 1;
        else if (c->argvlen[i] == 6 && !strncasecmp(c->argv[i], "nosave", 6))
            nosave = 1;
        else {
            reply_error(&c->out, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    int rc = persist_reload(merge, noflush, nosave);
    if (rc == PERSIST_OK)
        reply_ok(&c->out);
    else if (rc == PERSIST_BUSY)
        reply_error(&c->out, ERR_BUSY_SCRIPT);
    else if (rc == PERSIST_LOAD_ERR)
        reply_error(&c->out, "ERR Error trying to load the RDB dump, check server logs.");
    else
        reply_error(&c->out, "ERR Error trying to save the DB");
}

/* The keyspace is frozen for the whole load (the script mutex, then every
 * slot lock, in that order); the AOF's own locks are taken inside. */
void aof_debug_loadaof(struct client *c)
{
    char e[1536];
    if (script_mutex_lock() < 0) {
        reply_error(&c->out, ERR_BUSY_SCRIPT);
        return;
    }
    lockctx_begin_all();
    int rc = aof_debug_load(e, sizeof(e));
    lockctx_end();
    script_mutex_unlock();
    if (rc < 0) {
        log_msg(LL_WARNING, "DEBUG LOADAOF: %s", e);
        reply_error(&c->out, "ERR Error loading the AOF, check server logs.");
        return;
    }
    log_msg(LL_NOTICE, "Append Only File loaded by DEBUG LOADAOF");
    reply_ok(&c->out);
}

/* ------------------------------------------------------ registration --- */
static const struct persist_lockctx_ops lockctx_ops = {lockctx_active, lockctx_all_held};

void persistence_init(void)
{
    persist_set_lockctx_ops(&lockctx_ops);
    replay_init();
}
