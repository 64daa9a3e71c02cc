/* script_int.h - what script.c (the engine, EVAL) and function.c (FUNCTION,
 * FCALL) share.  Not for other modules. */
#ifndef HK_SCRIPT_INT_H
#define HK_SCRIPT_INT_H

#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>

#include "../cmd/cmd.h"

/* Script flags (shebang "#!lua flags=..." and register_function flags). */
/* Field of a Lua error table already counted in the error stats (the
 * name Redis 7 uses, so scripts see the same table). */
#define ERR_COUNTED_FIELD "ignore_error_stats_update"

#define SF_NO_WRITES (1u << 0)
#define SF_ALLOW_OOM (1u << 1)
#define SF_ALLOW_STALE (1u << 2)
#define SF_NO_CLUSTER (1u << 3)
#define SF_ALLOW_CROSS_SLOT (1u << 4)
#define SF_EVAL_COMPAT (1u << 5) /* EVAL body without a shebang */

struct sflag_name {
    unsigned flag;
    const char *name;
};
extern const struct sflag_name script_flag_names[];

/* Create a sandboxed VM.  functions: the FUNCTION VM (no breakpoint/debug
 * helpers, a load-time globals table holding redis.register_function). */
lua_State *sc_vm_new(int functions);
/* Which table the VM's globals proxy reads: 0 the run-time globals, 1 the
 * FUNCTION LOAD environment. */
void sc_vm_use_load_env(lua_State *L, int load);
/* Push the error table Redis's luaPushError builds ({err="CODE msg"}). */
void sc_push_error(lua_State *L, const char *msg);
/* Push the registered error handler (for lua_pcall). */
void sc_push_err_handler(lua_State *L);

/* Run the function on top of L's stack (below it the error handler) for
 * caller; the reply goes to caller->out.  name: the SHA (EVAL) or the
 * function name.  keys/args from caller->argv[3...].  par: the script lock
 * is held shared (a parallel lock context, cmd/multi.h).  Returns
 * SC_RETRY when the run stopped without a reply and must run again alone,
 * SC_UNDECLARED when a parallel run took slots it did not declare. */
/* How a script or function runs.  Its first run is alone (the script lock
 * held exclusively); if that run, or any later one, took a slot it did not
 * declare, it runs alone from then on, else in parallel with others: a
 * parallel run that meets another script's lock on an undeclared slot
 * mid-run can at worst fail that call (cmd/multi.c), so that is left to
 * scripts whose first run kept to their declared keys. */
#define SM_NEW 0
#define SM_PARALLEL 1
#define SM_ALONE 2
#define SC_RETRY 1
#define SC_UNDECLARED 2
int sc_run(struct client *caller, lua_State *L, const char *name, int eval_mode, unsigned sflags, int ro,
           int numkeys, int par);
/* Parse numkeys (argv[2]); replies and returns -1 on error.  fcall: FCALL's
 * error text for a non-integer. */
int sc_numkeys(struct client *c, int fcall, long long *out);
/* SCRIPT KILL / FUNCTION KILL. */
void sc_kill(struct client *c, int eval_mode);
/* FUNCTION STATS's running_script part (map or null). */
void sc_reply_running(struct client *c, int *is_eval);
void sc_busy_error(struct client *c);

/* Redis's scriptPrepareForRun OOM rule: a script with declared flags but
 * neither allow-oom nor no-writes does not start while the top-level
 * command began over maxmemory (one the up-front check could not see,
 * e.g. an EVALSHA queued in MULTI before its script was loaded).  Replies
 * and returns -1 then. */
int sc_prepare_oom(struct client *c, unsigned sflags);
/* function.c: the flags of function name (any case); -1 if there is none
 * or the script mutex is held by a busy script. */
int fn_lookup_flags(const char *name, size_t len, unsigned *flags);

/* Error text helper: reply "ERR ..." or a "-CODE ..." string as Redis's addReplyError. */
void sc_reply_err(struct client *c, const char *msg);

/* sdssplitargs-style word splitting (quotes, escapes); NULL on bad quotes. */
char **sc_splitargs(const char *line, int *argc);
void sc_freeargs(char **v, int n);

/* function.c */
void fn_init(void);
long long fn_vm_memory(void);
long long fn_count(void);
long long fn_lib_count(void);
long long fn_overhead(void);

/* lua_pattern.c / lib_sandbox.c: the sandbox's own library functions. */
/* Run the hook installed on L's thread (count_hook, kill_hook, load_hook)
 * from inside a long C library call: the busy/kill check.  May raise. */
void hk_lua_tick(lua_State *L);
/* The longest string a library function may build (proto-max-bulk-len). */
size_t hk_lua_max_string(void);
/* string.find/match/gmatch/gsub with Lua 5.1 semantics, interruptible. */
int hk_str_find(lua_State *L);
int hk_str_match(lua_State *L);
int hk_str_gmatch(lua_State *L);
int hk_str_gsub(lua_State *L);
/* table.sort with stock Lua 5.1's algorithm, interruptible. */
int hk_table_sort(lua_State *L);
/* Set find/match/gmatch/gsub in the table at idx. */
void hk_lua_pattern_register(lua_State *L, int idx);
/* Replace unpack, string.rep, the pattern functions, table.concat,
 * table.insert and table.sort in L's (real) globals with the safe versions. */
void hk_lua_sandbox_libs(lua_State *L);

/* lib_cjson.c: put the global cjson module's settings (encode_max_depth,
 * keep_buffer, ...) back to their defaults: run after every script so one
 * script's settings do not change how later scripts (of other clients)
 * encode and decode. */
void hk_cjson_reset(lua_State *L);

/* net/worker.c: serve the worker's other clients while a busy script runs. */
void worker_process_events_busy(struct worker *w, struct client *running);

#endif
