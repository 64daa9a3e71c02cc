/* script.h - Lua scripting (EVAL family, SCRIPT) and functions (FUNCTION
 * family, FCALL), as Redis 7 exposes them.  The engine lives in script.c
 * (Lua VMs, sandbox, the redis.* API, Lua <-> RESP conversions, running a
 * script under the lock context) and function.c (libraries, FUNCTION
 * DUMP/RESTORE).  Everything here is guarded by the global script mutex
 * (cmd/multi.h), except SCRIPT KILL / FUNCTION KILL / FUNCTION STATS, which
 * must answer while a busy script holds it. */
#ifndef HK_SCRIPT_H
#define HK_SCRIPT_H

#include "../cmd/cmd.h"
#include "../cmd/memstats.h"

cmd_fn eval_command, evalsha_command, eval_ro_command, evalsha_ro_command, script_command, fcall_command,
    fcall_ro_command, function_command;

/* The flags a script command runs with, as Redis's getCommandFlags: for
 * EVAL/EVALSHA(_RO) and FCALL(_RO) whose script declares flags (a shebang,
 * or register_function flags), WRITE/DENYOOM/STALE come from them (a
 * script without no-writes writes; one without allow-oom or no-writes is
 * DENYOOM) and MAY_REPLICATE goes; anything else, an EVAL without a
 * shebang, an unknown SHA or function: cmd->flags.  EVAL reads the body's
 * shebang; EVALSHA and FCALL look the script up under the script mutex
 * (no slot lock may be held; a busy script: cmd->flags).  Used for the
 * maxmemory check and for what a transaction queues (cmd/multi.c). */
unsigned script_cmd_flags(struct client *c, const struct cmd *cmd);

/* Key positions of EVAL and FCALL variants (numkeys at argv[2]). */
int getkeys_eval(struct client *c, int *idx, int max);

/* busy-reply-threshold (alias lua-time-limit), ms; 0 disables. */
extern long long script_busy_reply_threshold;

/* INFO memory (struct script_info: cmd/memstats.h). */
void script_get_info(struct script_info *out);

/* Start-up (server_wire()): hand cmd/ and persist/ what they call in
 * scripting (script_cmd_flags for the dispatcher and MULTI,
 * script_get_info for INFO memory, the function libraries for RDB/AOF). */
void script_install_hooks(void);
/* function.c: the function libraries' save/load hooks for persist/rdb.h
 * (script_install_hooks calls it). */
void fn_install_rdb_hooks(void);

/* RDB snapshots, function.c (registered as persist/rdb.h's rdb_fn_hooks;
 * the fuzz harnesses call them directly): call cb on the code of every
 * library in load order, stopping at (and returning) a negative result;
 * the caller holds the script mutex or is a fork child. */
int fn_rdb_foreach_lib(int (*cb)(void *arg, const char *code, size_t len), void *arg);
/* Create a library from its code while loading a snapshot (the caller has
 * exclusive access): 0, or -1 with err filled (a name already loaded is
 * an error, as in Redis, unless replace). */
/* Drop every library (DEBUG RELOAD before loading; script mutex held). */
void fn_rdb_flush_libs(void);
int fn_rdb_load_lib(const char *code, size_t len, int replace, char *err, size_t errlen);

#endif
