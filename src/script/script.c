/* script.c - the Lua engine behind EVAL and FCALL, and the EVAL family and
 * SCRIPT commands.
 *
 * VMs.  Two Lua 5.1 states, as in Redis: one for EVAL scripts (the script
 * cache maps SHA1 -> compiled chunk, kept in the registry as f_<sha>), one
 * for function libraries (function.c).  Both are reached only with the
 * global script mutex held (cmd/multi.h), so one script runs at a time
 * across the server while the other threads keep serving.
 *
 * Sandbox.  Debian's Lua has no read-only tables (Redis patches its own
 * Lua), so protection is built from proxies: the state's globals table is
 * an empty proxy whose __index reads the real globals (raising "Script
 * attempted to access nonexistent global variable" for a missing name) and
 * whose __newindex raises "Attempt to modify a readonly table"; the library
 * tables (redis, string, math, table, coroutine, cjson, cmsgpack, struct,
 * bit) are replaced by such proxies too, and tables inside them
 * (cjson.array_mt) sealed.  setmetatable/rawset refuse a protected table;
 * rawget/next/pairs read through a proxy (pairs never hands out the table
 * behind it); getmetatable of a proxy returns a protected empty table.
 * The string metatable's __index is the string proxy and getmetatable('')
 * a protected view of it.  os, io, package, debug, print, dofile,
 * loadfile, getfenv, setfenv, newproxy are absent; load/loadstring refuse
 * precompiled chunks.  unpack, string.rep/find/match/gmatch/gsub and
 * table.concat/insert/sort are our own (lib_sandbox.c, lua_pattern.c:
 * bounded results, no stock crashes, and they run the hook below from
 * inside long C loops); the allocator refuses any single block past
 * proto-max-bulk-len + 64 MB.  GC settings and the cjson settings are
 * reset after every run, so no script changes the environment of the
 * next.  math.random is Redis's deterministic lrand48 sequence (never
 * reseeded except by math.randomseed).
 *
 * Running.  The handler takes the script mutex, then the declared keys'
 * slot locks as a lock context (lockctx_begin_keys); each redis.call builds
 * the command in a per-run fake client (caller's db, RESP2 unless
 * redis.setresp(3), CF_DENY_BLOCKING), applies the script gates (unknown
 * command / arity, NOSCRIPT, writes from read-only scripts) and runs it with
 * cmd_call(), which takes any undeclared key's slot on the fly.  The
 * fake client's RESP reply is parsed into Lua values.  Keys that a script
 * does not declare therefore still work; the cost is that such a slot is
 * acquired while others are held (lockctx_ensure's yield protocol).
 *
 * Busy scripts.  A Lua count hook checks the elapsed time: past
 * busy-reply-threshold it sets script_busy (other commands then get BUSY in
 * cmd_execute), and from then on, every ~10 ms, lets the script's worker
 * serve its other connections (worker_process_events_busy) so SCRIPT KILL,
 * FUNCTION KILL/STATS and SHUTDOWN NOSAVE get through; a kill request or a
 * shutdown makes the hook raise an error the script cannot catch (every
 * line then raises again, in the main thread as well as in the coroutine
 * that was running).  The hook only fires between VM instructions: the
 * library functions that can run long in C call it themselves
 * (hk_lua_tick). */
#include "../cluster/cluster.h"
#include "script.h"

#include <lualib.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../cmd/acl.h"
#include "../cmd/commands.h"
#include "../cmd/errorstats.h"
#include "../cmd/evict.h"
#include "../cmd/multi.h"
#include "../db/entry.h"
#include "../persist/replica.h"
#include "../persist/prop.h"
#include "../persist/repl.h"
#include "libs.h"
#include "script_int.h"
#include "../base/sha1.h"

/* The Lua libraries are written by another engineer: link whichever exist. */
#pragma weak hk_luaopen_cjson
#pragma weak hk_luaopen_cmsgpack
#pragma weak hk_luaopen_struct
#pragma weak hk_luaopen_bit

long long script_busy_reply_threshold = 5000;

const struct sflag_name script_flag_names[] = {
    {SF_NO_WRITES, "no-writes"},   {SF_ALLOW_OOM, "allow-oom"},
    {SF_ALLOW_STALE, "allow-stale"}, {SF_NO_CLUSTER, "no-cluster"},
    {SF_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"}, {0, NULL},
};

#define ERR_BUSY_EVAL "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define ERR_BUSY_FUNC "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
#define ERR_NOSCRIPT "NOSCRIPT No matching script. Please use EVAL."

/* Registry keys. */
#define REG_RO "hk_ro"             /* weak table: protected proxy -> real table */
#define REG_REAL_G "hk_real_g"     /* the real globals */
#define REG_LOAD_G "hk_load_g"     /* FUNCTION LOAD globals */
#define REG_GTARGET "hk_gtarget"   /* holder {t} read by the globals proxy */
#define REG_ERRH "hk_errh"         /* error handler */
#define REG_MTPROXY "hk_mtproxy"   /* what getmetatable() of a proxy returns */

/* ------------------------------------------------------------- lrand48 --- */
/* The classic 48-bit linear congruential generator (x = a*x + c mod 2^48,
 * 31-bit outputs), which Redis ships as redisLrand48 so scripts see the
 * same sequence on every platform. */
static _Thread_local uint64_t rand48_x = 0x1234ABCD330Eull; /* per thread, as its VM */

static int32_t lrand48_next(void)
{
    rand48_x = (rand48_x * 0x5DEECE66Dull + 0xB) & 0xFFFFFFFFFFFFull;
    return (int32_t)(rand48_x >> 17);
}

static void lrand48_seed(int32_t seed)
{
    rand48_x = ((uint64_t)(uint32_t)seed << 16 | 0x330E) & 0xFFFFFFFFFFFFull;
}

/* --------------------------------------------------------- run context --- */
struct run_ctx {
    struct client *caller;
    struct client fc;          /* the fake client redis.call runs in */
    const char *name;
    int eval_mode;
    int ro;
    int dirty;                 /* a write command ran */
    int par;                   /* parallel: the script lock is held shared */
    int published;             /* the run SCRIPT KILL / FUNCTION STATS see */
    int retry;                 /* stopped to run again alone (LC_PAR_RETRY) */
    int allow_oom;             /* declared allow-oom: DENYOOM calls run even over maxmemory */
    int pre_oom;               /* the top-level command started over maxmemory (evict.h) */
    int no_aof;                /* redis.set_repl() without REPL_AOF: writes not fed to the AOF */
    int timedout;
    long long start_ms;
    long long last_events_ms;
    unsigned long long id;
    lua_State *L;
    int cl_slot;  /* cluster mode: the slot the script's keys hash to (-1: none yet) */
    int cl_cross; /* allow-cross-slot-keys */
};

static _Thread_local struct run_ctx *cur_run; /* this thread's running script */
/* The published run: the one SCRIPT KILL, FUNCTION KILL and FUNCTION STATS
 * act on.  A script that runs alone publishes itself when it starts; of
 * the scripts running in parallel, the first to pass busy-reply-threshold
 * does (the others wait their turn, checking at every hook tick). */
static _Atomic unsigned long long run_seq; /* id of the published run, 0 = none */
static atomic_int run_kind;                /* 0 none, 1 eval, 2 function */
static atomic_int run_dirty;
static _Atomic unsigned long long kill_req; /* run id SCRIPT/FUNCTION KILL asked to stop */
static _Atomic long long run_start_ms;
static _Atomic unsigned long long run_ids;
/* FUNCTION STATS needs the running function's name and command while the
 * script lock is held by the script: a copy under its own lock. */
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
static char *stats_name;
static int stats_argc;
static char **stats_argv;
static size_t *stats_argvlen;

/* ------------------------------------------------------- small helpers --- */
void sc_reply_err(struct client *c, const char *msg)
{
    if (msg[0] == '-')
        reply_error(&c->out, msg + 1);
    else
        reply_errorf(&c->out, "ERR %s", msg);
}

void sc_busy_error(struct client *c)
{
    reply_error(&c->out, atomic_load(&script_busy) == 2 ? ERR_BUSY_FUNC : ERR_BUSY_EVAL);
}

/* luaPushError semantics: "-CODE msg" keeps CODE, anything else gets ERR;
 * trailing CR/LF trimmed. */
void sc_push_error(lua_State *L, const char *msg)
{
    luaL_Buffer b;
    const char *m = msg;
    size_t n;
    lua_newtable(L);
    lua_pushstring(L, "err");
    luaL_buffinit(L, &b);
    if (m[0] == '-') {
        const char *sp = strchr(m, ' ');
        if (!sp) {
            luaL_addstring(&b, "ERR ");
            m++;
        } else {
            luaL_addlstring(&b, m + 1, (size_t)(sp - m - 1));
            luaL_addchar(&b, ' ');
            m = sp + 1;
        }
    } else {
        luaL_addstring(&b, "ERR ");
    }
    n = strlen(m);
    while (n > 0 && (m[n - 1] == '\r' || m[n - 1] == '\n'))
        n--;
    while (n > 0 && (m[0] == '\r' || m[0] == '\n')) {
        m++;
        n--;
    }
    luaL_addlstring(&b, m, n);
    luaL_pushresult(&b);
    lua_settable(L, -3);
}

static int raise_error(lua_State *L, const char *msg)
{
    sc_push_error(L, msg);
    return lua_error(L);
}

/* ------------------------------------------------ RESP -> Lua (replies) --- */
static const char *crlf(const char *p, const char *end)
{
    const char *q = memchr(p, '\r', (size_t)(end - p));
    return q ? q : end;
}

static long long line_ll(const char *p, const char *e)
{
    long long v = 0;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    for (; p < e; p++)
        v = v * 10 + (*p - '0');
    return neg ? -v : v;
}

/* Push the RESP value at *pp as Lua (L may be NULL: skip it). */
static void resp_to_lua(lua_State *L, const char **pp, const char *end)
{
    const char *p = *pp;
    char t = *p++;
    const char *e = crlf(p, end);
    const char *next = e + 2;
    if (L && !lua_checkstack(L, 5)) {
        log_msg(LL_WARNING, "lua stack limit reached when parsing redis.call reply");
        abort();
    }
    switch (t) {
    case '+':
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "ok");
            lua_pushlstring(L, p, (size_t)(e - p));
            lua_settable(L, -3);
        }
        break;
    case '-':
        if (L) {
            lua_pushlstring(L, "-", 1);
            lua_pushlstring(L, p, (size_t)(e - p));
            lua_concat(L, 2);
            char *m = hk_strdup(lua_tostring(L, -1));
            lua_pop(L, 1);
            sc_push_error(L, m);
            hk_free(m);
        }
        break;
    case ':':
        if (L)
            lua_pushnumber(L, (lua_Number)line_ll(p, e));
        break;
    case '$': {
        long long n = line_ll(p, e);
        if (n < 0) {
            if (L)
                lua_pushboolean(L, 0);
        } else {
            if (L)
                lua_pushlstring(L, next, (size_t)n);
            next += n + 2;
        }
        break;
    }
    case '=': {
        long long n = line_ll(p, e);
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "verbatim_string");
            lua_newtable(L);
            lua_pushstring(L, "string");
            lua_pushlstring(L, next + 4, (size_t)(n - 4));
            lua_settable(L, -3);
            lua_pushstring(L, "format");
            lua_pushlstring(L, next, 3);
            lua_settable(L, -3);
            lua_settable(L, -3);
        }
        next += n + 2;
        break;
    }
    case '*':
    case '>': {
        long long n = line_ll(p, e);
        if (n < 0) {
            if (L)
                lua_pushboolean(L, 0);
            break;
        }
        if (L)
            lua_newtable(L);
        for (long long i = 0; i < n; i++) {
            if (L)
                lua_pushnumber(L, (lua_Number)(i + 1));
            resp_to_lua(L, &next, end);
            if (L)
                lua_settable(L, -3);
        }
        break;
    }
    case '%': {
        long long n = line_ll(p, e);
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "map");
            lua_newtable(L);
        }
        for (long long i = 0; i < n; i++) {
            resp_to_lua(L, &next, end);
            resp_to_lua(L, &next, end);
            if (L)
                lua_settable(L, -3);
        }
        if (L)
            lua_settable(L, -3);
        break;
    }
    case '~': {
        long long n = line_ll(p, e);
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "set");
            lua_newtable(L);
        }
        for (long long i = 0; i < n; i++) {
            resp_to_lua(L, &next, end);
            if (L) {
                lua_pushboolean(L, 1);
                lua_settable(L, -3);
            }
        }
        if (L)
            lua_settable(L, -3);
        break;
    }
    case '|': { /* attributes: skipped, then the value itself */
        long long n = line_ll(p, e);
        for (long long i = 0; i < 2 * n; i++)
            resp_to_lua(NULL, &next, end);
        resp_to_lua(L, &next, end);
        break;
    }
    case '_':
        if (L)
            lua_pushnil(L);
        break;
    case '#':
        if (L)
            lua_pushboolean(L, *p == 't');
        break;
    case ',': {
        char buf[128];
        size_t n = (size_t)(e - p) < sizeof(buf) - 1 ? (size_t)(e - p) : sizeof(buf) - 1;
        memcpy(buf, p, n);
        buf[n] = 0;
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "double");
            lua_pushnumber(L, strtod(buf, NULL));
            lua_settable(L, -3);
        }
        break;
    }
    case '(':
        if (L) {
            lua_newtable(L);
            lua_pushstring(L, "big_number");
            lua_pushlstring(L, p, (size_t)(e - p));
            lua_settable(L, -3);
        }
        break;
    default:
        if (L)
            lua_pushnil(L);
        break;
    }
    *pp = next;
}

/* ------------------------------------------------ Lua -> RESP (replies) --- */
static void put_clean(struct reply *r, char type, const char *s, size_t n)
{
    /* A status/big number line: CR and LF become spaces. */
    char *tmp = hk_malloc(n + 3);
    tmp[0] = type;
    for (size_t i = 0; i < n; i++)
        tmp[i + 1] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    tmp[n + 1] = '\r';
    tmp[n + 2] = '\n';
    reply_raw(r, tmp, n + 3);
    hk_free(tmp);
}

static int field_type(lua_State *L, const char *f)
{
    lua_pushstring(L, f);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

/* Error information from an error object (table or string) on top. */
struct errinfo {
    char *msg, *source, *line;
    int counted; /* ERR_COUNTED_FIELD set: in the error stats already */
};

static void errinfo_get(lua_State *L, struct errinfo *ei)
{
    memset(ei, 0, sizeof(*ei));
    if (lua_isstring(L, -1)) {
        const char *s = lua_tostring(L, -1);
        ei->msg = hk_malloc(strlen(s) + 5);
        snprintf(ei->msg, strlen(s) + 5, "ERR %s", s);
        return;
    }
    if (!lua_istable(L, -1))
        return;
    field_type(L, "err");
    if (lua_isstring(L, -1))
        ei->msg = hk_strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    field_type(L, "source");
    if (lua_isstring(L, -1))
        ei->source = hk_strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    field_type(L, "line");
    if (lua_isstring(L, -1))
        ei->line = hk_strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    field_type(L, ERR_COUNTED_FIELD);
    ei->counted = lua_toboolean(L, -1);
    lua_pop(L, 1);
}

/* Mark the error table on top as counted in the error stats (INFO
 * errorstats, total_error_replies) when it was made: redis.call's error
 * reply or a command refused in the script.  A script that passes it on
 * as its own reply is not counted again (Redis 7 does the same). */
static void mark_counted(lua_State *L)
{
    lua_pushstring(L, ERR_COUNTED_FIELD);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
}

static void errinfo_free(struct errinfo *ei)
{
    hk_free(ei->msg);
    hk_free(ei->source);
    hk_free(ei->line);
}

/* Convert and pop the value on top of L into r.  script_resp: the
 * protocol the script chose (booleans follow it, as in Redis). */
static void lua_to_reply(lua_State *L, struct reply *r, int script_resp)
{
    int t = lua_type(L, -1);
    if (!lua_checkstack(L, 4)) {
        reply_error(r, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        reply_bulk(r, s, n);
        break;
    }
    case LUA_TBOOLEAN:
        if (script_resp == 2) {
            if (lua_toboolean(L, -1))
                reply_int(r, 1);
            else
                reply_null(r);
        } else {
            reply_bool(r, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        reply_int(r, (long long)lua_tonumber(L, -1));
        break;
    case LUA_TTABLE: {
        if (field_type(L, "err") == LUA_TSTRING) {
            lua_pop(L, 1);
            struct errinfo ei;
            errinfo_get(L, &ei);
            reply_error(r, ei.msg ? ei.msg : "");
            errinfo_free(&ei);
            lua_pop(L, 1);
            return;
        }
        lua_pop(L, 1);
        if (field_type(L, "ok") == LUA_TSTRING) {
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            put_clean(r, '+', s, strlen(s) < n ? strlen(s) : n);
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        if (field_type(L, "double") == LUA_TNUMBER) {
            reply_double(r, lua_tonumber(L, -1));
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        if (field_type(L, "big_number") == LUA_TSTRING) {
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            if (r->resp == 3) {
                put_clean(r, '(', s, n);
            } else {
                char *tmp = hk_malloc(n + 1);
                for (size_t i = 0; i < n; i++)
                    tmp[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
                reply_bulk(r, tmp, n);
                hk_free(tmp);
            }
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        if (field_type(L, "verbatim_string") == LUA_TTABLE) {
            /* stack: table, vt */
            if (field_type(L, "format") == LUA_TSTRING) {
                /* stack: table, vt, format */
                const char *fmt = lua_tostring(L, -1);
                lua_pushstring(L, "string");
                lua_rawget(L, -3);
                if (lua_type(L, -1) == LUA_TSTRING) {
                    size_t n;
                    const char *s = lua_tolstring(L, -1, &n);
                    char f3[4] = {' ', ' ', ' ', 0};
                    for (int i = 0; i < 3 && fmt[i]; i++)
                        f3[i] = fmt[i];
                    reply_verbatim(r, s, n, f3);
                    lua_pop(L, 4);
                    return;
                }
                lua_pop(L, 1);
            }
            lua_pop(L, 1); /* format */
        }
        lua_pop(L, 1); /* vt */
        if (field_type(L, "map") == LUA_TTABLE) {
            long long n = 0;
            size_t mark = reply_defer(r);
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pushvalue(L, -2);
                lua_to_reply(L, r, script_resp); /* key */
                lua_to_reply(L, r, script_resp); /* value */
                n++;
            }
            if (mark != (size_t)-1)
                reply_defer_map(r, mark, n);
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        if (field_type(L, "set") == LUA_TTABLE) {
            long long n = 0;
            size_t mark = reply_defer(r);
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pop(L, 1);
                lua_pushvalue(L, -1);
                lua_to_reply(L, r, script_resp);
                n++;
            }
            if (mark != (size_t)-1)
                reply_defer_set(r, mark, n);
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        /* Array: up to the first nil. */
        {
            size_t mark = reply_defer(r);
            long long n = 0;
            for (int j = 1;; j++) {
                lua_pushnumber(L, j);
                lua_rawget(L, -2);
                if (lua_isnil(L, -1)) {
                    lua_pop(L, 1);
                    break;
                }
                lua_to_reply(L, r, script_resp);
                n++;
            }
            if (mark != (size_t)-1)
                reply_defer_array(r, mark, n);
        }
        break;
    }
    default:
        reply_null(r);
    }
    lua_pop(L, 1);
}

/* ------------------------------------------------------- redis.* API --- */
static struct run_ctx *need_run(lua_State *L, const char *what)
{
    if (!cur_run) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%s can only be called inside a script invocation", what);
        raise_error(L, msg);
    }
    return cur_run;
}

static void fc_ensure_args(struct client *fc, int argc)
{
    if (argc > fc->argv_cap) {
        int cap = fc->argv_cap ? fc->argv_cap : 16;
        while (cap < argc)
            cap *= 2;
        fc->argv = hk_realloc(fc->argv, sizeof(*fc->argv) * (size_t)cap);
        fc->argvlen = hk_realloc(fc->argvlen, sizeof(*fc->argvlen) * (size_t)cap);
        fc->kslot = hk_realloc(fc->kslot, sizeof(*fc->kslot) * (size_t)cap);
        fc->argv_cap = cap;
    }
}

/* Turn the call's arguments into strings in place (numbers as %.17g).
 * Returns the argc, or -1 with an error table pushed. */
static int args_to_strings(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc == 0) {
        sc_push_error(L, "Please specify at least one argument for this redis lib call");
        return -1;
    }
    for (int j = 1; j <= argc; j++) {
        int t = lua_type(L, j);
        if (t == LUA_TNUMBER) {
            char buf[64];
            snprintf(buf, sizeof(buf), "%.17g", (double)lua_tonumber(L, j));
            lua_pushstring(L, buf);
            lua_replace(L, j);
        } else if (t != LUA_TSTRING) {
            lua_settop(L, 0);
            sc_push_error(L, "Lua redis lib command arguments must be strings or integers");
            return -1;
        }
    }
    return argc;
}

static const struct cmd *script_lookup(struct client *fc, const char **err)
{
    const struct cmd *cmd = cmd_lookup(fc->argv[0], fc->argvlen[0]);
    if (cmd && cmd->subs && fc->argc >= 2) {
        const struct cmd *sub = cmd_lookup_sub(cmd, fc->argv[1], fc->argvlen[1]);
        cmd = sub;
    }
    if (!cmd) {
        *err = "Unknown Redis command called from script";
        return NULL;
    }
    if ((cmd->arity > 0 && cmd->arity != fc->argc) || (fc->argc < -cmd->arity) || (cmd->subs && !cmd->fn)) {
        *err = "Wrong number of args calling Redis command from script";
        return NULL;
    }
    return cmd;
}

/* Cluster mode (Redis's scriptVerifyClusterState): a script's command
 * must touch keys this node serves, all in one slot, and, unless the
 * script declared allow-cross-slot-keys, the slot of the script's other
 * keys.  NULL, or the error. */
static const char *cluster_script_err(struct run_ctx *r, struct client *fc, const struct cmd *cmd)
{
    int idx[64], *kidx = fc->argc > 64 ? hk_malloc(sizeof(int) * (size_t)fc->argc) : idx;
    int nk = cmd_keys(cmd, fc, kidx, fc->argc), slot = -1, cross = 0;
    for (int i = 0; i < nk; i++) {
        int s = (int)key_slot(fc->argv[kidx[i]], fc->argvlen[kidx[i]]);
        if (slot < 0)
            slot = s;
        else if (s != slot)
            cross = 1;
    }
    if (slot < 0) {
        if (kidx != idx)
            hk_free(kidx);
        return NULL;
    }
    int write = (cmd->flags & CMD_WRITE) != 0;
    if (!atomic_load_explicit(&cluster_ok, memory_order_relaxed)) {
        if (!__atomic_load_n(&cfg.cluster_allow_reads_when_down, __ATOMIC_RELAXED))
            return "Script attempted to execute a command while the cluster is down";
        if (write)
            return "Script attempted to execute a write command while the cluster is down and readonly";
    }
    unsigned char b = atomic_load_explicit(&cluster_slot_bits[slot], memory_order_relaxed);
    int asking = r->caller && (r->caller->flags & CF_ASKING);
    int ro = r->caller && (r->caller->flags & CF_CLUSTER_READONLY);
    int local = !cross && ((b & CSB_MINE) || ((b & CSB_IMPORTING) && asking) || ((b & CSB_MASTER_MINE) && ro && !write));
    /* A migrating slot is local only for keys still here (Redis's
     * getNodeByQuery answers ASK or TRYAGAIN otherwise): looked up under
     * the slot's lock, which the call keeps, so the answer holds for it. */
    if (local && (b & CSB_MIGRATING) && (b & CSB_MINE) && lockctx_hold((unsigned)slot)) {
        for (int i = 0; i < nk && local; i++)
            if (!db_get(fc->db, (unsigned)slot, fc->argv[kidx[i]], fc->argvlen[kidx[i]],
                        LK_NOTOUCH | LK_NOSTATS | LK_NOEXPIRE))
                local = 0;
    }
    if (kidx != idx)
        hk_free(kidx);
    if (!local)
        return "Script attempted to access a non local key in a cluster node";
    if (!r->cl_cross) {
        if (r->cl_slot < 0)
            r->cl_slot = slot;
        else if (r->cl_slot != slot)
            return "Script attempted to access keys that do not hash to the same slot";
    }
    return NULL;
}

/* After LC_PAR_RETRY: every line raises again, so pcall cannot swallow it. */
static void retry_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    raise_error(L, "Script stopped to run alone");
}

static _Thread_local int inuse; /* redis_generic_call is running */

/* A call refused before or instead of running (err: "ERR ..." or "-CODE
 * ..."): counted as a rejected call and an error, raised (redis.call) or
 * returned as an error table (redis.pcall). */
static int call_refused(lua_State *L, const struct cmd *cmd, const char *err, int raise)
{
    struct worker_stats *ws = &cur_worker->stats;
    if (cmd)
        STAT_ADD(ws->cmd_rejected[cmd->id], 1);
    STAT_ADD(ws->errors, 1);
    errorstat_add_reply(err, strlen(err));
    lua_settop(L, 0);
    sc_push_error(L, err);
    mark_counted(L);
    inuse--;
    return raise ? lua_error(L) : 1;
}

/* DEBUG SET-DISABLE-DENY-SCRIPTS 1 (Redis's test aid, which lifts the deny
 * for every script-denied command): here only for DEBUG's subcommands that
 * need neither keys nor a connection.  The rest stay denied, because under
 * a script's fake client they would act on it as a connection (SUBSCRIBE,
 * MONITOR, CLIENT, HELLO, AUTH, RESET), replace the running script (SCRIPT
 * FLUSH, FUNCTION), block (SHUTDOWN), wait on other workers while the
 * script holds slot locks (CLIENT LIST), or reload the dataset under them
 * (DEBUG RELOAD / LOADAOF, SAVE). */
static int deny_lifted(const struct client *fc, const struct cmd *cmd)
{
    return atomic_load_explicit(&debug_script_deny_off, memory_order_relaxed) && cmd->fn == debug_command &&
           debug_keyless(fc);
}

static int redis_generic_call(lua_State *L, int raise)
{
    struct run_ctx *r = need_run(L, "redis.call/pcall");
    struct client *fc = &r->fc;
    int argc = args_to_strings(L);
    if (argc < 0)
        return raise ? lua_error(L) : 1;
    if (inuse) {
        log_msg(LL_WARNING, "luaRedisGenericCommand() recursive call detected. Are you doing funny stuff with Lua debug hooks?");
        sc_push_error(L, "luaRedisGenericCommand() recursive call detected. Are you doing funny stuff with Lua debug hooks?");
        return 1;
    }
    inuse++;
    fc_ensure_args(fc, argc);
    int too_long = 0; /* a script-built argument an entry cannot hold */
    for (int j = 0; j < argc; j++) {
        size_t n;
        fc->argv[j] = lua_tolstring(L, j + 1, &n);
        fc->argvlen[j] = n;
        too_long |= n > (size_t)ENTRY_MAX_LEN;
    }
    fc->argc = argc;
    const char *err = NULL;
    const struct cmd *cmd = script_lookup(fc, &err);
    if (cmd && !err && too_long)
        err = "string exceeds maximum allowed size (proto-max-bulk-len)";
    if (cmd && (cmd->flags & CMD_NOSCRIPT) && !deny_lifted(fc, cmd))
        err = "This Redis command is not allowed from script";
    if (cmd && !err && r->ro && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)))
        err = "Write commands are not allowed from read-only scripts.";
    /* A read-only replica: a script's writes fail, its reads run. */
    if (cmd && !err && (cmd->flags & CMD_WRITE) &&
        (atomic_load_explicit(&replica_gate, memory_order_relaxed) & RG_REPLICA) &&
        __atomic_load_n(&cfg.replica_read_only, __ATOMIC_RELAXED) && !(r->caller && (r->caller->flags & CF_MASTER)))
        err = "-READONLY You can't write against a read only replica.";
    /* ACLs: the caller's user (cmd/acl.h), logged with context lua. */
    if (cmd && !err && r->caller && !r->caller->acl_fast)
        err = acl_check_script(r->caller, fc, cmd);
    if (cmd && !err && HK_UNLIKELY(cluster_on) && r->caller && !(r->caller->flags & CF_MASTER))
        err = cluster_script_err(r, fc, cmd);
    /* min-replicas-to-write: a write refused while too few good replicas,
     * unless the script already wrote (Redis's
     * scriptVerifyWriteCommandAllow). */
    if (cmd && !err && !r->dirty && (cmd->flags & CMD_WRITE) &&
        __atomic_load_n(&cfg.min_replicas_to_write, __ATOMIC_RELAXED) > 0 && !repl_enough_good_replicas())
        err = "-NOREPLICAS Not enough good replicas to write.";
    /* Over maxmemory when the script's command started: a DENYOOM call is
     * refused until the script has written (a script is never stopped
     * half way through its writes), unless it declared allow-oom. */
    if (cmd && !err && !r->allow_oom && r->pre_oom && !r->dirty && (cmd->flags & CMD_DENYOOM) &&
        __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) > 0)
        err = "-" OOM_ERR;
    if (err)
        return call_refused(L, cmd, err, raise);
    fc->out.len = 0;
    fc->out.muted = 0;
    fc->cmd = cmd;
    prop_feed_off += r->no_aof;
    /* Checks made inside the command (SORT BY/GET patterns) are the
     * caller's: its user is lent for the call (the caller's reference
     * keeps it alive; nothing takes or drops one on fc). */
    if (r->caller) {
        fc->acl_user = r->caller->acl_user;
        fc->acl_fast = r->caller->acl_fast;
    }
    cmd_call(fc, cmd);
    fc->acl_user = NULL;
    fc->acl_fast = 0;
    prop_feed_off -= r->no_aof;
    fc->flags &= CF_DENY_BLOCKING;
    if (r->par) {
        int ps = lockctx_par_status();
        if (ps == LC_PAR_RETRY) {
            /* Nothing with a side effect ran: unwind (pcall cannot stop
             * it) and let eval_generic run the script again alone. */
            inuse--;
            r->retry = 1;
            lua_sethook(L, retry_hook, LUA_MASKLINE, 0);
            if (r->L && r->L != L)
                lua_sethook(r->L, retry_hook, LUA_MASKLINE, 0);
            return raise_error(L, "Script stopped to run alone");
        }
        if (ps == LC_PAR_CONFLICT)
            return call_refused(L, cmd,
                                "ERR Script attempted to access a non local key that another script running in "
                                "parallel holds; declare every key the script uses in KEYS",
                                raise);
    }
    if (cmd->flags & CMD_WRITE) {
        r->dirty = 1;
        if (r->published)
            atomic_store(&run_dirty, 1);
    }
    /* The arguments are no longer needed: make room for the reply. */
    lua_settop(L, 0);
    const char *p = fc->out.buf, *end = fc->out.buf + fc->out.len;
    int is_err = fc->out.len > 0 && p[0] == '-';
    if (fc->out.len == 0) {
        lua_pushboolean(L, 0);
    } else {
        resp_to_lua(L, &p, end);
        if (is_err && lua_istable(L, -1))
            mark_counted(L); /* cmd_call counted it */
    }
    fc->out.len = 0;
    if (fc->out.cap > 64 * 1024) {
        reply_free(&fc->out);
        int resp = fc->out.resp;
        reply_init(&fc->out);
        fc->out.resp = resp;
    }
    inuse--;
    if (raise && is_err)
        return lua_error(L);
    return 1;
}

static int l_redis_call(lua_State *L)
{
    return redis_generic_call(L, 1);
}

static int l_redis_pcall(lua_State *L)
{
    return redis_generic_call(L, 0);
}

/* pcall() that turns Redis error tables into their message, as Redis 7. */
static int l_pcall(lua_State *L)
{
    int argc = lua_gettop(L);
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

static int l_sha1hex(lua_State *L)
{
    char hex[41];
    size_t n;
    if (lua_gettop(L) != 1)
        return raise_error(L, "wrong number of arguments");
    const char *s = lua_tolstring(L, 1, &n);
    sha1_hex(hex, s ? s : "", s ? n : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int l_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        sc_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    const char *e = lua_tostring(L, -1);
    if (e[0] == '-') {
        sc_push_error(L, e);
    } else {
        lua_pushstring(L, "-");
        lua_pushvalue(L, -2);
        lua_concat(L, 2);
        char *m = hk_strdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        sc_push_error(L, m);
        hk_free(m);
    }
    return 1;
}

static int l_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        sc_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushstring(L, "ok");
    lua_pushvalue(L, -3);
    lua_settable(L, -3);
    return 1;
}

static int l_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2)
        return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1))
        return raise_error(L, "First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < LL_DEBUG || level > LL_WARNING)
        return raise_error(L, "Invalid debug level.");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int first = 1;
    for (int j = 2; j <= argc; j++) {
        size_t n;
        const char *s = lua_tolstring(L, j, &n);
        if (!s)
            continue;
        if (!first)
            luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, n);
        first = 0;
    }
    luaL_pushresult(&b);
    log_msg(level, "%s", lua_tostring(L, -1));
    return 0;
}

static int l_setresp(lua_State *L)
{
    struct run_ctx *r = need_run(L, "redis.setresp");
    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.setresp() requires one argument.");
    int resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3)
        return raise_error(L, "RESP version must be 2 or 3.");
    r->fc.out.resp = resp;
    return 0;
}

static int l_set_repl(lua_State *L)
{
    need_run(L, "redis.set_repl");
    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.set_repl() requires two arguments.");
    int flags = (int)lua_tonumber(L, -1);
    if (flags & ~3)
        return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    /* No replication yet: REPL_AOF decides whether the script's next
     * writes are fed to the AOF (persist/prop.h). */
    cur_run->no_aof = !(flags & 1);
    return 0;
}

static int l_replicate_commands(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static int l_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0); /* no debugging session */
    return 1;
}

static int l_debug(lua_State *L)
{
    (void)L;
    return 0;
}

static int l_acl_check_cmd(lua_State *L)
{
    struct run_ctx *r = need_run(L, "redis.acl_check_cmd");
    int argc = args_to_strings(L);
    if (argc < 0)
        return lua_error(L);
    fc_ensure_args(&r->fc, argc);
    for (int j = 0; j < argc; j++) {
        size_t n;
        r->fc.argv[j] = lua_tolstring(L, j + 1, &n);
        r->fc.argvlen[j] = n;
    }
    r->fc.argc = argc;
    if (argc == 0)
        return raise_error(L, "Please specify at least one argument for this redis lib call");
    const struct cmd *cmd = cmd_lookup(r->fc.argv[0], r->fc.argvlen[0]);
    if (cmd && cmd->subs && argc >= 2)
        cmd = cmd_lookup_sub(cmd, r->fc.argv[1], r->fc.argvlen[1]);
    if (!cmd)
        return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    /* The script's caller's user, as Redis checks it (nothing logged).  A
     * line of the wrong arity is checked for the command alone: its keys
     * cannot be located. */
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity)
        r->fc.argc = 1;
    lua_pushboolean(L, acl_allows(r->caller, &r->fc, cmd));
    return 1;
}

static int l_math_random(lua_State *L)
{
    need_run(L, "math.random");
    lua_Number r = (lua_Number)(lrand48_next() % 2147483647) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1);
        int u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int l_math_randomseed(lua_State *L)
{
    need_run(L, "math.randomseed");
    lrand48_seed(luaL_checkint(L, 1));
    return 0;
}

/* ----------------------------------------------------------- sandbox --- */
static int ro_error(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

/* The real table behind protected proxy at idx, pushed; or the value itself. */
static void push_real(lua_State *L, int idx)
{
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
    }
}

static int is_protected(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return 0;
    push_real(L, idx);
    int ro = !lua_rawequal(L, -1, idx);
    lua_pop(L, 1);
    return ro;
}

/* __index of a strict proxy (the globals): upvalue 1 is a holder {t}. */
static int strict_index(lua_State *L)
{
    lua_rawgeti(L, lua_upvalueindex(1), 1);
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1))
        return 1;
    if (!lua_isstring(L, 2))
        return luaL_error(L, "Script attempted to access nonexistent global variable");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

/* Push a protected proxy of the table at idx.  strict: missing names
 * raise the nonexistent-global error (idx is then a holder table {t}). */
static void make_proxy(lua_State *L, int idx, int strict)
{
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    lua_newtable(L); /* proxy */
    lua_newtable(L); /* metatable */
    if (strict) {
        lua_pushvalue(L, idx);
        lua_pushcclosure(L, strict_index, 1);
    } else {
        lua_pushvalue(L, idx);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ro_error);
    lua_setfield(L, -2, "__newindex");
    lua_getfield(L, LUA_REGISTRYINDEX, REG_MTPROXY);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 0);
    }
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    /* register proxy -> real (for strict proxies: the holder's table) */
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, -2);
    if (strict)
        lua_rawgeti(L, idx, 1);
    else
        lua_pushvalue(L, idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* The empty table at idx becomes read-only in place (it may be used as a
 * metatable, so it cannot be swapped for a proxy): a metatable whose
 * __newindex raises, and an entry in the proxy registry (to an empty table)
 * so that rawset/setmetatable refuse it. */
static void seal_empty(lua_State *L, int idx)
{
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    lua_newtable(L);
    lua_pushcfunction(L, ro_error);
    lua_setfield(L, -2, "__newindex");
    lua_getfield(L, LUA_REGISTRYINDEX, REG_MTPROXY);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_pushvalue(L, idx);
    lua_newtable(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Table-valued members of the library table at idx: empty ones sealed,
 * others replaced by proxies. */
static void protect_members(lua_State *L, int idx)
{
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_istable(L, -1)) {
            lua_pushnil(L);
            int empty = !lua_next(L, -2);
            if (!empty)
                lua_pop(L, 2);
            if (empty) {
                seal_empty(L, -1);
            } else {
                make_proxy(L, -1, 0);
                lua_pushvalue(L, -3);
                lua_insert(L, -2);
                lua_rawset(L, idx); /* existing key: fine during next */
            }
        }
        lua_pop(L, 1);
    }
}

static int l_setmetatable(lua_State *L)
{
    if (is_protected(L, 1)) {
        lua_pushstring(L, "Attempt to modify a readonly table");
        return lua_error(L);
    }
    /* Lua 5.1's setmetatable, here rather than delegated, so that its
     * errors name 'setmetatable' and the script's line. */
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argcheck(L, lua_type(L, 2) == LUA_TNIL || lua_istable(L, 2), 2, "nil or table expected");
    if (luaL_getmetafield(L, 1, "__metatable"))
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

static int l_rawset(lua_State *L)
{
    if (is_protected(L, 1)) {
        lua_pushstring(L, "Attempt to modify a readonly table");
        return lua_error(L);
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int l_rawget(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    push_real(L, 1);
    lua_replace(L, 1);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int l_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    push_real(L, 1);
    lua_replace(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1))
        return 2;
    lua_pushnil(L);
    return 1;
}

/* pairs(t): our next, t itself (never the real table behind a proxy: a
 * script holding that could write to it), nil. */
static int l_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1)); /* our next */
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* load/loadstring without precompiled chunks (Redis's Lua cannot load
 * bytecode: the call returns nil). */
/* The parser reads the text in pieces, the busy/kill check between them:
 * compiling a huge string is a long C call.  (A kill raised here turns the
 * load into a failure; the kill hook then stops the script at its next
 * line.) */
struct load_reader {
    const char *p;
    size_t left;
};

static const char *load_piece(lua_State *L, void *ud, size_t *size)
{
    struct load_reader *r = ud;
    if (r->left == 0)
        return NULL;
    hk_lua_tick(L);
    size_t n = r->left < 65536 ? r->left : 65536;
    const char *p = r->p;
    r->p += n;
    r->left -= n;
    *size = n;
    return p;
}

/* Compile source text: the chunk, or nil + message (as load does). */
static int load_text(lua_State *L, const char *s, size_t n, const char *name)
{
    if (n > 0 && s[0] == '\033') {
        lua_pushnil(L);
        lua_pushstring(L, "binary chunks are not allowed");
        return 2;
    }
    struct load_reader rd = {s, n};
    if (lua_load(L, load_piece, &rd, name) == 0)
        return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

static int l_loadstring(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    return load_text(L, s, n, luaL_optstring(L, 2, s));
}

static int l_load(lua_State *L)
{
    luaL_Buffer b;
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1))
            return luaL_error(L, "reader function must return a string");
        size_t n;
        lua_tolstring(L, -1, &n);
        if (n == 0) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    return load_text(L, s, n, name);
}

/* The pcall error handler: an error table with the script position. */
static int err_handler(lua_State *L)
{
    lua_Debug ar;
    int have = 0;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar)) {
        have = 1;
        if (strcmp(ar.what, "C") == 0)
            have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    }
    if (!lua_istable(L, 1)) {
        const char *s;
        char tmp[64];
        if (lua_isstring(L, 1))
            s = lua_tostring(L, 1);
        else if (lua_isnil(L, 1))
            s = "nil";
        else if (lua_isboolean(L, 1))
            s = lua_toboolean(L, 1) ? "true" : "false";
        else {
            snprintf(tmp, sizeof(tmp), "%s: %p", luaL_typename(L, 1), lua_topointer(L, 1));
            s = tmp;
        }
        lua_newtable(L);
        lua_pushstring(L, "err");
        lua_pushstring(L, "ERR ");
        lua_pushstring(L, s);
        lua_concat(L, 2);
        lua_rawset(L, -3);
        lua_replace(L, 1);
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushnumber(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    lua_settop(L, 1);
    return 1;
}

void sc_push_err_handler(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_ERRH);
}

static void set_fn(lua_State *L, const char *name, lua_CFunction f)
{
    lua_pushcfunction(L, f);
    lua_setfield(L, -2, name);
}

static void set_num(lua_State *L, const char *name, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void register_log_version(lua_State *L)
{
    set_fn(L, "log", l_log);
    set_num(L, "LOG_DEBUG", LL_DEBUG);
    set_num(L, "LOG_VERBOSE", LL_VERBOSE);
    set_num(L, "LOG_NOTICE", LL_NOTICE);
    set_num(L, "LOG_WARNING", LL_WARNING);
    lua_pushstring(L, REDIS_COMPAT_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    {
        int a = 0, b = 0, c = 0;
        sscanf(REDIS_COMPAT_VERSION, "%d.%d.%d", &a, &b, &c);
        set_num(L, "REDIS_VERSION_NUM", (double)((a << 16) | (b << 8) | c));
    }
}

int fn_register_function(lua_State *L); /* function.c */

static void open_lib(lua_State *L, lua_CFunction f, const char *name)
{
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

/* The VMs' allocator: realloc, except that no single block may grow past
 * proto-max-bulk-len + 64 MB.  Lua turns the refusal into a "not enough
 * memory" error, where stock Lua would ask the system for any size (one
 * concatenation s..s..s of big strings, a string.format with many big
 * arguments) and the process could be killed for it. */
#define SC_ALLOC_SLACK (64u << 20)

static void *sc_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (nsize > osize && nsize > hk_lua_max_string() + SC_ALLOC_SLACK)
        return NULL;
    return realloc(ptr, nsize);
}

static int sc_panic(lua_State *L)
{
    log_msg(LL_WARNING, "unprotected error in the Lua VM: %s",
            lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
    abort();
}

lua_State *sc_vm_new(int functions)
{
    lua_State *L = lua_newstate(sc_alloc, NULL);
    if (!L) {
        log_msg(LL_WARNING, "cannot create a Lua VM");
        abort();
    }
    lua_atpanic(L, sc_panic);
    open_lib(L, luaopen_base, "");
    open_lib(L, luaopen_table, LUA_TABLIBNAME);
    open_lib(L, luaopen_string, LUA_STRLIBNAME);
    open_lib(L, luaopen_math, LUA_MATHLIBNAME);
    if (hk_luaopen_cjson)
        open_lib(L, hk_luaopen_cjson, "cjson");
    if (hk_luaopen_struct)
        open_lib(L, hk_luaopen_struct, "struct");
    if (hk_luaopen_cmsgpack)
        open_lib(L, hk_luaopen_cmsgpack, "cmsgpack");
    if (hk_luaopen_bit)
        open_lib(L, hk_luaopen_bit, "bit");
    lua_settop(L, 0);
    hk_lua_sandbox_libs(L); /* our unpack, string.rep/find/..., table.concat/insert/sort */

    /* The real globals: drop what scripts must not reach. */
    static const char *const removed[] = {"dofile", "loadfile", "print",   "require", "module", "package", "os",
                                          "io",     "debug",    "newproxy", "getfenv", "setfenv", NULL};
    for (int i = 0; removed[i]; i++) {
        lua_pushnil(L);
        lua_setfield(L, LUA_GLOBALSINDEX, removed[i]);
    }
    lua_pushcfunction(L, l_pcall);
    lua_setfield(L, LUA_GLOBALSINDEX, "pcall");
    lua_pushcfunction(L, l_loadstring);
    lua_setfield(L, LUA_GLOBALSINDEX, "loadstring");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, LUA_GLOBALSINDEX, "load");
    lua_pushcfunction(L, l_rawset);
    lua_setfield(L, LUA_GLOBALSINDEX, "rawset");
    lua_pushcfunction(L, l_rawget);
    lua_setfield(L, LUA_GLOBALSINDEX, "rawget");
    lua_pushcfunction(L, l_setmetatable);
    lua_setfield(L, LUA_GLOBALSINDEX, "setmetatable");
    lua_pushcfunction(L, l_next);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_GLOBALSINDEX, "next");
    lua_pushcclosure(L, l_pairs, 1);
    lua_setfield(L, LUA_GLOBALSINDEX, "pairs");

    /* math.random / randomseed: Redis's deterministic generator. */
    lua_getfield(L, LUA_GLOBALSINDEX, "math");
    set_fn(L, "random", l_math_random);
    set_fn(L, "randomseed", l_math_randomseed);
    lua_pop(L, 1);

    /* The redis table. */
    lua_newtable(L);
    set_fn(L, "call", l_redis_call);
    set_fn(L, "pcall", l_redis_pcall);
    register_log_version(L);
    set_fn(L, "setresp", l_setresp);
    set_fn(L, "sha1hex", l_sha1hex);
    set_fn(L, "error_reply", l_error_reply);
    set_fn(L, "status_reply", l_status_reply);
    set_fn(L, "set_repl", l_set_repl);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    set_fn(L, "acl_check_cmd", l_acl_check_cmd);
    if (!functions) {
        set_fn(L, "breakpoint", l_breakpoint);
        set_fn(L, "debug", l_debug);
        set_fn(L, "replicate_commands", l_replicate_commands);
    }
    lua_setfield(L, LUA_GLOBALSINDEX, "redis");

    /* Protection bookkeeping. */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushstring(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_RO);
    lua_newtable(L); /* what getmetatable(proxy) gives: itself protected */
    make_proxy(L, -1, 0);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_MTPROXY);
    lua_pop(L, 1);
    lua_pushcfunction(L, err_handler);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_ERRH);

    /* Library tables become proxies, and tables inside them (cjson.array_mt,
     * cjson.empty_array_mt) read-only too. */
    static const char *const libs[] = {"redis", "string", "math", "table", "coroutine", "cjson",
                                       "cmsgpack", "struct", "bit", NULL};
    for (int i = 0; libs[i]; i++) {
        lua_getfield(L, LUA_GLOBALSINDEX, libs[i]);
        if (lua_istable(L, -1))
            protect_members(L, -1);
        if (lua_istable(L, -1)) {
            make_proxy(L, -1, 0);
            lua_setfield(L, LUA_GLOBALSINDEX, libs[i]);
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_REAL_G);

    /* The string metatable (shared by every string): its __index becomes
     * the string proxy, and getmetatable('') answers a protected view
     * {__index = string proxy} instead of the metatable itself. */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_getfield(L, LUA_GLOBALSINDEX, "string");
        lua_setfield(L, -2, "__index");
        lua_newtable(L);
        lua_getfield(L, LUA_GLOBALSINDEX, "string");
        lua_setfield(L, -2, "__index");
        make_proxy(L, -1, 0);
        lua_setfield(L, -3, "__metatable");
        lua_pop(L, 2);
    }
    lua_pop(L, 1);

    /* FUNCTION LOAD environment: only redis.register_function/log/version. */
    if (functions) {
        lua_newtable(L); /* load globals */
        lua_newtable(L); /* its redis table */
        lua_pushcfunction(L, fn_register_function);
        lua_setfield(L, -2, "register_function");
        register_log_version(L);
        lua_newtable(L); /* holder for a strict proxy */
        lua_pushvalue(L, -2);
        lua_rawseti(L, -2, 1);
        make_proxy(L, -1, 1);
        lua_setfield(L, -4, "redis");
        lua_pop(L, 2);
        lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_G);
    }

    /* The globals proxy replaces the globals. */
    lua_newtable(L); /* holder {real globals} */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_GTARGET);
    make_proxy(L, -1, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_GLOBALSINDEX, "_G");
    lua_replace(L, LUA_GLOBALSINDEX);
    lua_pop(L, 1);
    return L;
}

void sc_vm_use_load_env(lua_State *L, int load)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GTARGET);
    lua_getfield(L, LUA_REGISTRYINDEX, load ? REG_LOAD_G : REG_REAL_G);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 1);
}

/* --------------------------------------------------------- running --- */
static void kill_hook(lua_State *L, lua_Debug *ar);

/* Stop the run: from now on every line raises, in L (maybe a coroutine)
 * and in the script's main thread, so neither pcall nor a coroutine that
 * swallows the error (and a loop creating fresh ones) can keep it going. */
static void kill_run(lua_State *L, struct run_ctx *r)
{
    log_msg(LL_WARNING, "Lua script killed by user with SCRIPT KILL.");
    lua_sethook(L, kill_hook, LUA_MASKLINE, 0);
    if (r->L && r->L != L)
        lua_sethook(r->L, kill_hook, LUA_MASKLINE, 0);
    raise_error(L, "Script killed by user with SCRIPT KILL...");
}

static int publish(struct run_ctx *r);

static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    struct run_ctx *r = cur_run;
    if (!r)
        return;
    if (atomic_load(&kill_req) == r->id || atomic_load(&server_shutdown)) {
        kill_run(L, r);
        return;
    }
    long long now = time_ms();
    if (!r->timedout) {
        long long th = __atomic_load_n(&script_busy_reply_threshold, __ATOMIC_RELAXED);
        if (th <= 0 || now - r->start_ms < th)
            return;
        log_msg(LL_WARNING,
                "Slow script detected: still in execution after %lld milliseconds. You can try killing the script "
                "using the %s command. Script name is: %s.",
                now - r->start_ms, r->eval_mode ? "SCRIPT KILL" : "FUNCTION KILL", r->name);
        r->timedout = 1;
        r->last_events_ms = 0;
    }
    /* A parallel run waits its turn to be the busy one (another busy run
     * is published): only that one serves its worker's other clients. */
    if (!r->published && !publish(r))
        return;
    if (!atomic_load(&script_busy))
        atomic_store(&script_busy, r->eval_mode ? 1 : 2);
    if (now - r->last_events_ms >= 10) {
        r->last_events_ms = now;
        if (cur_worker)
            worker_process_events_busy(cur_worker, r->caller);
        if (atomic_load(&kill_req) == r->id || atomic_load(&server_shutdown))
            kill_run(L, r);
    }
}

/* After a kill: every line raises again, so pcall cannot swallow it. */
static void kill_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    raise_error(L, "Script killed by user with SCRIPT KILL...");
}

static void push_array(lua_State *L, struct client *c, int from, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, c->argv[from + i], c->argvlen[from + i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* Make r the published run, if none is: 1 done.  Its fields are set under
 * stats_mu, so FUNCTION STATS and SCRIPT KILL see one run's. */
static int publish(struct run_ctx *r)
{
    pthread_mutex_lock(&stats_mu);
    if (atomic_load(&run_seq)) {
        pthread_mutex_unlock(&stats_mu);
        return 0;
    }
    atomic_store(&run_dirty, r->dirty);
    atomic_store(&run_start_ms, r->start_ms);
    atomic_store(&run_kind, r->eval_mode ? 1 : 2);
    stats_name = hk_strdup(r->name);
    stats_argc = r->caller->argc;
    stats_argv = hk_malloc(sizeof(char *) * (size_t)stats_argc);
    stats_argvlen = hk_malloc(sizeof(size_t) * (size_t)stats_argc);
    for (int i = 0; i < stats_argc; i++) {
        stats_argvlen[i] = r->caller->argvlen[i];
        stats_argv[i] = hk_malloc(stats_argvlen[i] + 1);
        memcpy(stats_argv[i], r->caller->argv[i], stats_argvlen[i]);
    }
    atomic_store(&run_seq, r->id);
    r->published = 1;
    pthread_mutex_unlock(&stats_mu);
    return 1;
}

static void unpublish(struct run_ctx *r)
{
    pthread_mutex_lock(&stats_mu);
    atomic_store(&run_seq, 0);
    atomic_store(&run_kind, 0);
    atomic_store(&run_dirty, 0);
    r->published = 0;
    for (int i = 0; i < stats_argc; i++)
        hk_free(stats_argv[i]);
    hk_free(stats_argv);
    hk_free(stats_argvlen);
    hk_free(stats_name);
    stats_argv = NULL;
    stats_argvlen = NULL;
    stats_name = NULL;
    stats_argc = 0;
    pthread_mutex_unlock(&stats_mu);
}

int sc_run(struct client *caller, lua_State *L, const char *name, int eval_mode, unsigned sflags, int ro,
           int numkeys, int par)
{
    struct run_ctx r;
    int rc = 0;
    memset(&r, 0, sizeof(r));
    r.par = par;
    r.caller = caller;
    r.name = name;
    r.eval_mode = eval_mode;
    r.ro = ro || (!(sflags & SF_EVAL_COMPAT) && (sflags & SF_NO_WRITES));
    r.allow_oom = !(sflags & SF_EVAL_COMPAT) && (sflags & SF_ALLOW_OOM);
    /* Kept from the command's start: commands served while a busy script
     * runs on this thread (worker_process_events_busy) set their own. */
    r.pre_oom = evict_pre_cmd_oom;
    r.start_ms = time_ms();
    r.id = atomic_fetch_add(&run_ids, 1) + 1;
    r.L = L;
    r.cl_slot = numkeys > 0 && caller->argc > 3 ? (int)key_slot(caller->argv[3], caller->argvlen[3]) : -1;
    r.cl_cross = !(sflags & SF_EVAL_COMPAT) && (sflags & SF_ALLOW_CROSS_SLOT);
    struct client *fc = &r.fc;
    fc->fd = -1;
    fc->w = cur_worker ? cur_worker : caller->w;
    fc->db = caller->db;
    fc->authenticated = 1;
    fc->flags = CF_DENY_BLOCKING | CF_SCRIPT;
    fc->id = 0;
    reply_init(&fc->out);
    fc->out.resp = 2;
    fc_ensure_args(fc, 16);

    /* Declared keys: their slots are locked for the whole run. */
    unsigned stack_slots[64], *slots = numkeys <= 64 ? stack_slots : hk_malloc(sizeof(unsigned) * (size_t)numkeys);
    for (int i = 0; i < numkeys; i++)
        slots[i] = key_slot(caller->argv[3 + i], caller->argvlen[3 + i]);
    lockctx_begin_keys(slots, numkeys);
    lockctx_set_script(par);

    struct run_ctx *outer = cur_run;
    cur_run = &r;
    if (!par)
        publish(&r); /* alone: nothing else is published */

    int base = lua_gettop(L) - 1; /* keep the error handler: the caller pops it */
    int err;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 100000);
    push_array(L, caller, 3, numkeys);
    push_array(L, caller, 3 + numkeys, caller->argc - 3 - numkeys);
    if (eval_mode) {
        lua_getfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
        lua_insert(L, -3);
        lua_setfield(L, -3, "ARGV");
        lua_setfield(L, -2, "KEYS");
        lua_pop(L, 1);
        err = lua_pcall(L, 0, 1, -2);
    } else {
        err = lua_pcall(L, 2, 1, -4);
    }
    {
        static _Thread_local long gc_count;
        if (++gc_count == 50) {
            lua_gc(L, LUA_GCSTEP, 50);
            gc_count = 0;
        }
    }
    /* collectgarbage("stop"/"setpause"/"setstepmul") must not outlive the
     * script that called it. */
    lua_gc(L, LUA_GCRESTART, 0);
    lua_gc(L, LUA_GCSETPAUSE, 200);
    lua_gc(L, LUA_GCSETSTEPMUL, 200);
    /* Nor the global cjson module's settings. */
    if (hk_luaopen_cjson)
        hk_cjson_reset(L);
    if (err && r.retry) {
        lua_pop(L, 1); /* no reply: the script runs again alone */
        rc |= SC_RETRY;
    } else if (err) {
        if (!lua_istable(L, -1)) {
            const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
            reply_errorf(&caller->out, "ERR Error running script %s, %.100s ", name, msg);
        } else {
            struct errinfo ei;
            errinfo_get(L, &ei);
            if (ei.counted)
                caller->flags |= CF_ERR_COUNTED;
            if (ei.line && ei.source)
                reply_errorf(&caller->out, "%s script: %s, on %s:%s.", ei.msg ? ei.msg : "ERR unknown error", name,
                             ei.source, ei.line);
            else
                reply_error(&caller->out, ei.msg ? ei.msg : "ERR unknown error");
            errinfo_free(&ei);
        }
        lua_pop(L, 1);
    } else {
        if (lua_istable(L, -1)) {
            field_type(L, ERR_COUNTED_FIELD); /* raw: no metamethods */
            if (lua_toboolean(L, -1))
                caller->flags |= CF_ERR_COUNTED; /* returned redis.pcall's error */
            lua_pop(L, 1);
        }
        lua_to_reply(L, &caller->out, fc->out.resp);
    }
    lua_sethook(L, NULL, 0, 0);
    lua_settop(L, base);
    if (eval_mode) {
        /* KEYS/ARGV stay as globals until the next run, as in Redis. */
    }

    if (r.published) {
        unpublish(&r);
        if (r.timedout)
            atomic_store(&script_busy, 0);
    }
    cur_run = outer;
    if (lockctx_script_undeclared())
        rc |= SC_UNDECLARED;
    lockctx_end();
    if (slots != stack_slots)
        hk_free(slots);
    reply_free(&fc->out);
    hk_free(fc->argv);
    hk_free(fc->argvlen);
    hk_free(fc->kslot);
    return rc;
}

void sc_kill(struct client *c, int eval_mode)
{
    int kind = atomic_load(&run_kind);
    unsigned long long id = atomic_load(&run_seq);
    if (!kind || !id) {
        reply_error(&c->out, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (atomic_load(&run_dirty)) {
        reply_error(&c->out, "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
                             "can either wait the script termination or kill the server in a hard way using the "
                             "SHUTDOWN NOSAVE command.");
        return;
    }
    if (eval_mode && kind == 2) {
        reply_error(&c->out, ERR_BUSY_FUNC);
        return;
    }
    if (!eval_mode && kind == 1) {
        reply_error(&c->out, ERR_BUSY_EVAL);
        return;
    }
    atomic_store(&kill_req, id);
    reply_ok(&c->out);
}

void sc_reply_running(struct client *c, int *is_eval)
{
    *is_eval = atomic_load(&run_kind) == 1;
    if (*is_eval)
        return;
    pthread_mutex_lock(&stats_mu);
    if (!stats_name || atomic_load(&run_kind) != 2) {
        pthread_mutex_unlock(&stats_mu);
        reply_null(&c->out);
        return;
    }
    reply_map(&c->out, 3);
    reply_bulk_cstr(&c->out, "name");
    reply_bulk_cstr(&c->out, stats_name);
    reply_bulk_cstr(&c->out, "command");
    reply_array(&c->out, stats_argc);
    for (int i = 0; i < stats_argc; i++)
        reply_bulk(&c->out, stats_argv[i], stats_argvlen[i]);
    reply_bulk_cstr(&c->out, "duration_ms");
    reply_int(&c->out, time_ms() - atomic_load(&run_start_ms));
    pthread_mutex_unlock(&stats_mu);
}

int sc_numkeys(struct client *c, int fcall, long long *out)
{
    long long n;
    if (!str_to_ll(c->argv[2], c->argvlen[2], &n)) {
        reply_error(&c->out, fcall ? "ERR Bad number of keys provided" : ERR_NOT_INT);
        return -1;
    }
    if (n > c->argc - 3) {
        reply_error(&c->out, "ERR Number of keys can't be greater than number of args");
        return -1;
    }
    if (n < 0) {
        reply_error(&c->out, "ERR Number of keys can't be negative");
        return -1;
    }
    *out = n;
    return 0;
}

int getkeys_eval(struct client *c, int *idx, int max)
{
    long long n;
    int k = 0;
    if (c->argc < 3 || !str_to_ll(c->argv[2], c->argvlen[2], &n) || n < 1 || n > c->argc - 3)
        return 0;
    for (long long i = 0; i < n && k < max; i++)
        idx[k++] = 3 + (int)i;
    return k;
}

/* ------------------------------------------------------ script cache --- */
/* The cache is shared by every thread: cache_mu guards the table (a
 * script is found or added under it; EVALSHA's dispatch reads flags under
 * it); entries are freed only by SCRIPT FLUSH, which holds the script lock
 * exclusively, so a thread holding the lock in either mode keeps the
 * entries it found.  Each thread that runs scripts has its own Lua VM
 * (struct evm) and compiles a script into it on first use. */
struct script {
    char sha[41];
    unsigned flags;
    atomic_int mode;  /* SM_NEW, SM_PARALLEL or SM_ALONE */
    char *body;
    size_t len;
    size_t code_off; /* after the shebang line */
    struct script *next;
};

struct evm {
    lua_State *L; /* NULL after SCRIPT FLUSH: made again on next use */
    struct evm *next;
};

static pthread_rwlock_t cache_mu = PTHREAD_RWLOCK_INITIALIZER; /* readers never sleep on readers */
static struct script **cache;
static size_t cache_cap, cache_n;
static long long cache_mem;
static pthread_mutex_t evms_mu = PTHREAD_MUTEX_INITIALIZER; /* the list; L fields: the script lock */
static struct evm *evms;
static _Thread_local struct evm *my_evm;

static size_t sha_hash(const char *sha)
{
    size_t h = 0;
    for (int i = 0; i < 16; i++)
        h = h * 31 + (unsigned char)sha[i];
    return h;
}

static struct script *cache_find(const char *sha)
{
    if (!cache_cap)
        return NULL;
    for (struct script *s = cache[sha_hash(sha) & (cache_cap - 1)]; s; s = s->next)
        if (memcmp(s->sha, sha, 40) == 0)
            return s;
    return NULL;
}

static void cache_add(struct script *s)
{
    if (cache_n + 1 > cache_cap) {
        size_t ncap = cache_cap ? cache_cap * 2 : 64;
        struct script **nt = hk_calloc(sizeof(*nt) * ncap);
        for (size_t i = 0; i < cache_cap; i++) {
            for (struct script *x = cache[i], *nx; x; x = nx) {
                nx = x->next;
                size_t b = sha_hash(x->sha) & (ncap - 1);
                x->next = nt[b];
                nt[b] = x;
            }
        }
        hk_free(cache);
        cache = nt;
        cache_cap = ncap;
    }
    size_t b = sha_hash(s->sha) & (cache_cap - 1);
    s->next = cache[b];
    cache[b] = s;
    cache_n++;
    cache_mem += (long long)(sizeof(*s) + s->len + 64);
}

static void cache_flush(void)
{
    for (size_t i = 0; i < cache_cap; i++) {
        for (struct script *x = cache[i], *nx; x; x = nx) {
            nx = x->next;
            hk_free(x->body);
            hk_free(x);
        }
    }
    hk_free(cache);
    cache = NULL;
    cache_cap = cache_n = 0;
    cache_mem = 0;
}

/* This thread's EVAL VM (script lock held, either mode). */
static lua_State *eval_vm_get(void)
{
    if (!my_evm) {
        my_evm = hk_calloc(sizeof(*my_evm));
        pthread_mutex_lock(&evms_mu);
        my_evm->next = evms;
        evms = my_evm;
        pthread_mutex_unlock(&evms_mu);
    }
    if (!my_evm->L)
        my_evm->L = sc_vm_new(0);
    return my_evm->L;
}

/* SCRIPT FLUSH: every thread's VM goes (script lock held exclusively). */
static void eval_vms_close(void)
{
    pthread_mutex_lock(&evms_mu);
    for (struct evm *v = evms; v; v = v->next) {
        if (v->L)
            lua_close(v->L);
        v->L = NULL;
    }
    pthread_mutex_unlock(&evms_mu);
}

static long long eval_vms_memory(void)
{
    long long sum = 0;
    pthread_mutex_lock(&evms_mu);
    for (struct evm *v = evms; v; v = v->next)
        if (v->L)
            sum += (long long)lua_gc(v->L, LUA_GCCOUNT, 0) * 1024 + lua_gc(v->L, LUA_GCCOUNTB, 0);
    pthread_mutex_unlock(&evms_mu);
    return sum;
}

static struct script *cache_find_locked(const char *sha)
{
    pthread_rwlock_rdlock(&cache_mu);
    struct script *s = cache_find(sha);
    pthread_rwlock_unlock(&cache_mu);
    return s;
}

/* Push s's compiled chunk in L, compiling it there on first use. */
static void push_chunk(lua_State *L, const struct script *s)
{
    char fname[43];
    snprintf(fname, sizeof(fname), "f_%s", s->sha);
    lua_getfield(L, LUA_REGISTRYINDEX, fname);
    if (!lua_isnil(L, -1))
        return;
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, s->body + s->code_off, s->len - s->code_off, "@user_script")) {
        /* It compiled when it entered the cache: only memory can fail. */
        log_msg(LL_WARNING, "compiling cached script %s failed: %s", s->sha, lua_tostring(L, -1));
        lua_pop(L, 1);
        lua_pushnil(L);
        return;
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, fname);
}

/* Split a shebang line into words as Redis's sdssplitargs does: blanks
 * separate words, "double quotes" (with \n \t \xHH ... escapes) and
 * 'single quotes' group them; a closing quote must end the word.  Returns
 * a NULL-terminated array (sc_freeargs), or NULL on unbalanced quotes. */
char **sc_splitargs(const char *line, int *argc)
{
    const char *p = line;
    char **v = NULL;
    int n = 0, cap = 0;
    *argc = 0;
    for (;;) {
        while (*p && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f'))
            p++;
        if (!*p)
            break;
        size_t blen = 0, bcap = 16;
        char *cur = hk_malloc(bcap);
        int inq = 0, insq = 0, done = 0;
#define PUTC(ch)                                                                                                     \
    do {                                                                                                             \
        if (blen + 2 > bcap) {                                                                                       \
            bcap *= 2;                                                                                               \
            cur = hk_realloc(cur, bcap);                                                                             \
        }                                                                                                            \
        cur[blen++] = (char)(ch);                                                                                    \
    } while (0)
        while (!done) {
            if (inq) {
                if (p[0] == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3])) {
                    char hx[3] = {p[2], p[3], 0};
                    PUTC(strtol(hx, NULL, 16));
                    p += 3;
                } else if (p[0] == '\\' && p[1]) {
                    char c2 = p[1];
                    PUTC(c2 == 'n' ? '\n' : c2 == 'r' ? '\r' : c2 == 't' ? '\t' : c2 == 'b' ? '\b' : c2 == 'a' ? '\a' : c2);
                    p++;
                } else if (*p == '"') {
                    if (p[1] && !isspace((unsigned char)p[1]))
                        goto fail;
                    done = 1;
                } else if (!*p) {
                    goto fail;
                } else {
                    PUTC(*p);
                }
            } else if (insq) {
                if (p[0] == '\\' && p[1] == '\'') {
                    PUTC('\'');
                    p++;
                } else if (*p == '\'') {
                    if (p[1] && !isspace((unsigned char)p[1]))
                        goto fail;
                    done = 1;
                } else if (!*p) {
                    goto fail;
                } else {
                    PUTC(*p);
                }
            } else {
                switch (*p) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = 1;
                    break;
                case '"':
                    inq = 1;
                    break;
                case '\'':
                    insq = 1;
                    break;
                default:
                    PUTC(*p);
                    break;
                }
            }
            if (*p)
                p++;
        }
#undef PUTC
        cur[blen] = 0;
        if (n + 2 > cap) {
            cap = cap ? cap * 2 : 8;
            v = hk_realloc(v, sizeof(char *) * (size_t)cap);
        }
        v[n++] = cur;
        v[n] = NULL;
        continue;
    fail:
        hk_free(cur);
        sc_freeargs(v, n);
        return NULL;
    }
    if (!v) {
        v = hk_malloc(sizeof(char *));
        v[0] = NULL;
    }
    *argc = n;
    return v;
}

void sc_freeargs(char **v, int n)
{
    if (!v)
        return;
    for (int i = 0; i < n; i++)
        hk_free(v[i]);
    hk_free(v);
}

/* Parse a "#!lua flags=a,b" first line.  Returns 0, or -1 with *err set
 * (static text or formatted into errbuf). */
static int parse_shebang(const char *body, size_t len, unsigned *flags, size_t *shebang_len, char *errbuf,
                         size_t errcap)
{
    *flags = SF_EVAL_COMPAT;
    *shebang_len = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!')
        return 0;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        snprintf(errbuf, errcap, "Invalid script shebang");
        return -1;
    }
    size_t sl = (size_t)(nl - body);
    char *line = hk_malloc(sl + 1);
    memcpy(line, body, sl);
    line[sl] = 0;
    int argc;
    char **parts = sc_splitargs(line, &argc);
    hk_free(line);
    if (!parts || argc == 0) {
        sc_freeargs(parts, argc);
        snprintf(errbuf, errcap, "Invalid engine in script shebang");
        return -1;
    }
    if (strcmp(parts[0], "#!lua") != 0) {
        snprintf(errbuf, errcap, "Unexpected engine in script shebang: %s", parts[0]);
        sc_freeargs(parts, argc);
        return -1;
    }
    unsigned f = 0;
    for (int j = 1; j < argc; j++) {
        char *tok = parts[j];
        if (strncmp(tok, "flags=", 6) != 0) {
            snprintf(errbuf, errcap, "Unknown lua shebang option: %s", tok);
            sc_freeargs(parts, argc);
            return -1;
        }
        char *fs = tok + 6, *fe;
        for (;;) {
            fe = strchr(fs, ',');
            size_t fl = fe ? (size_t)(fe - fs) : strlen(fs);
            if (fl > 0 || fe) {
                const struct sflag_name *n;
                for (n = script_flag_names; n->name; n++)
                    if (strlen(n->name) == fl && memcmp(n->name, fs, fl) == 0)
                        break;
                if (!n->name) {
                    snprintf(errbuf, errcap, "Unexpected flag in script shebang: %.*s", (int)fl, fs);
                    sc_freeargs(parts, argc);
                    return -1;
                }
                f |= n->flag;
            }
            if (!fe)
                break;
            fs = fe + 1;
        }
    }
    sc_freeargs(parts, argc);
    *flags = f;
    *shebang_len = sl;
    return 0;
}

/* Redis's scriptFlagsToCmdFlags: a script with declared flags replaces
 * the command's WRITE/DENYOOM/STALE with its own. */
static unsigned flags_to_cmd_flags(unsigned cmd_flags, unsigned sflags)
{
    cmd_flags &= ~(CMD_STALE | CMD_DENYOOM | CMD_WRITE | CMD_MAY_REPLICATE);
    if (!(sflags & (SF_ALLOW_OOM | SF_NO_WRITES))) /* no-writes implies allow-oom */
        cmd_flags |= CMD_DENYOOM;
    if (!(sflags & SF_NO_WRITES))
        cmd_flags |= CMD_WRITE;
    if (sflags & SF_ALLOW_STALE)
        cmd_flags |= CMD_STALE;
    return cmd_flags;
}

unsigned script_cmd_flags(struct client *c, const struct cmd *cmd)
{
    unsigned sflags;
    if (!(cmd->acl & ACL_SCRIPTING) || c->argc < 2)
        return cmd->flags;
    if (cmd->fn == eval_command || cmd->fn == eval_ro_command) {
        /* The flags are a function of the body: parse its shebang (what
         * the cache would hold for it); a bad one keeps cmd's flags. */
        size_t sl;
        char err[256];
        if (parse_shebang(c->argv[1], c->argvlen[1], &sflags, &sl, err, sizeof(err)) < 0)
            return cmd->flags;
    } else if (cmd->fn == evalsha_command || cmd->fn == evalsha_ro_command) {
        if (c->argvlen[1] != 40)
            return cmd->flags;
        char sha[41];
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1][i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[40] = 0;
        pthread_rwlock_rdlock(&cache_mu);
        struct script *s = cache_find(sha);
        int found = s != NULL;
        sflags = found ? s->flags : 0;
        pthread_rwlock_unlock(&cache_mu);
        if (!found)
            return cmd->flags;
    } else if (cmd->fn == fcall_command || cmd->fn == fcall_ro_command) {
        if (fn_lookup_flags(c->argv[1], c->argvlen[1], &sflags) < 0)
            return cmd->flags;
    } else {
        return cmd->flags;
    }
    if (sflags & SF_EVAL_COMPAT)
        return cmd->flags;
    return flags_to_cmd_flags(cmd->flags, sflags);
}

int sc_prepare_oom(struct client *c, unsigned sflags)
{
    if (cluster_on && !(sflags & SF_EVAL_COMPAT) && (sflags & SF_NO_CLUSTER)) {
        reply_error(&c->out, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return -1;
    }
    if (!(sflags & SF_EVAL_COMPAT) && !(sflags & (SF_ALLOW_OOM | SF_NO_WRITES)) && evict_pre_cmd_oom &&
        __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED) > 0) {
        reply_error(&c->out, "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
        return -1;
    }
    return 0;
}

/* Compile body into the cache (no-op if present).  Replies on error.
 * Script lock held (either mode). */
static struct script *script_create(struct client *c, const char *body, size_t len)
{
    char sha[41], fname[43], err[256];
    sha1_hex(sha, body, len);
    struct script *s = cache_find_locked(sha);
    if (s)
        return s;
    lua_State *eval_vm = eval_vm_get();
    unsigned flags;
    size_t sl;
    if (parse_shebang(body, len, &flags, &sl, err, sizeof(err)) < 0) {
        reply_errorf(&c->out, "ERR %s", err);
        return NULL;
    }
    if (luaL_loadbuffer(eval_vm, body + sl, len - sl, "@user_script")) {
        reply_errorf(&c->out, "ERR Error compiling script (new function): %s", lua_tostring(eval_vm, -1));
        lua_pop(eval_vm, 1);
        return NULL;
    }
    snprintf(fname, sizeof(fname), "f_%s", sha);
    lua_setfield(eval_vm, LUA_REGISTRYINDEX, fname);
    s = hk_calloc(sizeof(*s));
    memcpy(s->sha, sha, 41);
    s->flags = flags;
    s->body = hk_malloc(len + 1);
    memcpy(s->body, body, len);
    s->body[len] = 0;
    s->len = len;
    s->code_off = sl;
    pthread_rwlock_wrlock(&cache_mu);
    struct script *had = cache_find(sha); /* another thread added it meanwhile */
    if (!had)
        cache_add(s);
    pthread_rwlock_unlock(&cache_mu);
    if (had) {
        hk_free(s->body);
        hk_free(s);
        s = had;
    }
    return s;
}

/* ------------------------------------------------------------ EVAL* --- */
static void eval_generic(struct client *c, int evalsha, int ro)
{
    long long numkeys;
    char sha[41];
    if (sc_numkeys(c, 0, &numkeys) < 0)
        return;
    if (evalsha) {
        if (c->argvlen[1] != 40) {
            reply_error(&c->out, ERR_NOSCRIPT);
            return;
        }
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1][i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[40] = 0;
    }
    /* In parallel with other scripts (the script lock shared) unless this
     * one is known to touch keys it does not declare, or stopped to run
     * alone; inside EXEC the lock is already held exclusively. */
    int alone = 0;
again:
    if ((alone ? script_mutex_lock() : script_shared_lock()) < 0) {
        sc_busy_error(c);
        return;
    }
    int par = !script_lock_exclusive();
    lua_State *L = eval_vm_get();
    struct script *s;
    if (evalsha) {
        s = cache_find_locked(sha);
        if (!s) {
            reply_error(&c->out, ERR_NOSCRIPT);
            script_mutex_unlock();
            return;
        }
    } else {
        s = script_create(c, c->argv[1], c->argvlen[1]);
        if (!s) {
            script_mutex_unlock();
            return;
        }
    }
    int mode = atomic_load_explicit(&s->mode, memory_order_relaxed);
    if (par && mode != SM_PARALLEL) {
        script_mutex_unlock();
        alone = 1;
        goto again;
    }
    if (!(s->flags & SF_EVAL_COMPAT) && !(s->flags & SF_NO_WRITES) && ro) {
        reply_error(&c->out, "ERR Can not execute a script with write flag using *_ro command.");
        script_mutex_unlock();
        return;
    }
    if (sc_prepare_oom(c, s->flags) < 0) {
        script_mutex_unlock();
        return;
    }
    char name[41];
    memcpy(name, s->sha, 41);
    sc_push_err_handler(L);
    push_chunk(L, s);
    int rc;
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        reply_error(&c->out, "ERR Error compiling script: out of memory");
        rc = 0;
    } else {
        rc = sc_run(c, L, name, 1, s->flags, ro, (int)numkeys, par);
    }
    lua_pop(L, 1); /* error handler */
    if (rc & SC_UNDECLARED)
        atomic_store_explicit(&s->mode, SM_ALONE, memory_order_relaxed);
    else if (mode == SM_NEW && !lockctx_active())
        atomic_store_explicit(&s->mode, SM_PARALLEL, memory_order_relaxed);
    script_mutex_unlock();
    if (rc & SC_RETRY) {
        alone = 1;
        goto again;
    }
}

void eval_command(struct client *c)
{
    eval_generic(c, 0, 0);
}

void eval_ro_command(struct client *c)
{
    eval_generic(c, 0, 1);
}

void evalsha_command(struct client *c)
{
    eval_generic(c, 1, 0);
}

void evalsha_ro_command(struct client *c)
{
    eval_generic(c, 1, 1);
}

/* ------------------------------------------------------------ SCRIPT --- */
void script_command(struct client *c)
{
    const char *sub = c->cmd->name + 7; /* after "script|" */
    if (!strcmp(sub, "help")) {
        static const char *lines[] = {
            "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
            "HELP",
            "    Print this help.",
        };
        reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            reply_status(&c->out, lines[i]);
        return;
    }
    if (!strcmp(sub, "kill")) {
        sc_kill(c, 1);
        return;
    }
    if (!strcmp(sub, "debug")) {
        if (arg_is(c, 2, "no") || arg_is(c, 2, "yes") || arg_is(c, 2, "sync"))
            reply_error(&c->out, "ERR SCRIPT DEBUG is not supported by this server");
        else
            reply_error(&c->out, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
        return;
    }
    if (!strcmp(sub, "flush")) {
        if (c->argc > 3 || (c->argc == 3 && !arg_is(c, 2, "sync") && !arg_is(c, 2, "async"))) {
            reply_error(&c->out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
    }
    if (script_mutex_lock() < 0) {
        sc_busy_error(c);
        return;
    }
    if (!strcmp(sub, "flush")) {
        pthread_rwlock_wrlock(&cache_mu);
        cache_flush();
        pthread_rwlock_unlock(&cache_mu);
        eval_vms_close();
        reply_ok(&c->out);
    } else if (!strcmp(sub, "exists")) {
        reply_array(&c->out, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            int found = 0;
            if (c->argvlen[i] == 40) {
                /* Exact match, as Redis (the cache keys are lower case). */
                found = cache_find_locked(c->argv[i]) != NULL;
            }
            reply_int(&c->out, found);
        }
    } else if (!strcmp(sub, "load")) {
        struct script *s = script_create(c, c->argv[2], c->argvlen[2]);
        if (s)
            reply_bulk(&c->out, s->sha, 40);
    } else {
        reply_unknown_subcommand(c);
    }
    script_mutex_unlock();
}

/* -------------------------------------------------------------- INFO --- */
void script_get_info(struct script_info *out)
{
    memset(out, 0, sizeof(*out));
    if (script_mutex_lock() < 0) {
        /* A busy script holds the engine: report what can be read safely. */
        pthread_rwlock_rdlock(&cache_mu);
        out->cached_scripts = (long long)cache_n;
        out->scripts_mem = cache_mem;
        pthread_rwlock_unlock(&cache_mu);
        return;
    }
    eval_vm_get(); /* at least one VM, as Redis always has */
    out->vm_eval = eval_vms_memory();
    out->vm_functions = fn_vm_memory();
    out->cached_scripts = (long long)cache_n;
    out->functions_mem = fn_overhead();
    out->scripts_mem = cache_mem + (long long)(cache_cap * sizeof(void *)) + out->functions_mem;
    out->functions = fn_count();
    out->libraries = fn_lib_count();
    script_mutex_unlock();
}

void script_install_hooks(void)
{
    cmd_script_flags = script_cmd_flags;
    memstats_script_info = script_get_info;
    fn_install_rdb_hooks();
}
