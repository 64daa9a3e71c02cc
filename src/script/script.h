/* script.h - Lua scripting (EVAL family, SCRIPT) and functions (FUNCTION
 * family, FCALL), as Redis 7 exposes them.  The engine lives in script.c
 * (Lua VMs, sandbox, the redis.* API, Lua <-> RESP conversions, running a
 * script under the lock context) and function.c (libraries, FUNCTION
 * DUMP/RESTORE).  Everything here is guarded by the global script mutex
 * (cmd/multi.h), except SCRIPT KILL / FUNCTION KILL / FUNCTION STATS, which
 * must answer while a busy script holds it. */
#ifndef HK_SCRIPT_H
#define HK_SCRIPT_H

#include "../server.h"

cmd_fn eval_command, evalsha_command, eval_ro_command, evalsha_ro_command, script_command, fcall_command,
    fcall_ro_command, function_command;

/* Key positions of EVAL and FCALL variants (numkeys at argv[2]). */
int getkeys_eval(struct client *c, int *idx, int max);

/* busy-reply-threshold (alias lua-time-limit), ms; 0 disables. */
extern long long script_busy_reply_threshold;

/* INFO memory. */
struct script_info {
    long long vm_eval, vm_functions;   /* Lua heap bytes per VM */
    long long scripts_mem;             /* script cache + function libraries bookkeeping */
    long long cached_scripts;
    long long functions, libraries;
};
void script_get_info(struct script_info *out);

#endif
