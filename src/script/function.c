/* function.c - Redis 7 functions: FUNCTION LOAD / LIST / DELETE / FLUSH /
 * DUMP / RESTORE / STATS / KILL / HELP and FCALL / FCALL_RO.
 *
 * A library is the code given to FUNCTION LOAD ("#!lua name=<lib>" then
 * Lua); loading runs it once in the functions VM with a restricted globals
 * table in which redis.register_function() is the only way to do anything
 * useful (redis.call is absent, standard libraries too), under a 500 ms
 * timeout.  Each registered callback is kept as a registry reference.
 * Libraries and functions live in a "library context" (libraries in load
 * order plus a name -> function hash); FUNCTION RESTORE builds a fresh
 * context from the payload and then swaps it in (FLUSH) or joins it into
 * the current one (APPEND / REPLACE), reverting on a collision, as Redis.
 *
 * FUNCTION DUMP emits Redis's DUMP payload: per library the RDB opcode
 * FUNCTION2 (245) and the code as an RDB string, then RDB version 10 and
 * CRC-64/Jones, all little-endian, so payloads move between HotKV and a
 * Redis 7.0 server either way (RESTORE also reads LZF-compressed and
 * integer-encoded RDB strings, which Redis writes for long code).
 *
 * Everything here runs with the script lock held, except FUNCTION KILL
 * and FUNCTION STATS (CMD_ALLOW_BUSY: they must answer while a busy
 * function holds it); STATS reads library counts kept in atomics.  The
 * libraries (cur) and the functions VM (fvm) change only with the lock
 * held exclusively; FCALL reads them holding it shared.
 *
 * Parallel FCALL.  A function whose first run kept to its declared keys
 * runs in parallel with other scripts (script.c, SM_* modes) in its
 * thread's own replica of the functions VM (struct fvm_rep): every library
 * loaded again there, its callbacks kept by name in a registry table.  Any
 * change to the libraries bumps fn_gen and closes every replica; a thread
 * builds its replica again on its next parallel FCALL.  A replica that
 * cannot be built (a library that fails a second load) sends its FCALLs
 * to the functions VM, alone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../cmd/commands.h"
#include "../cmd/multi.h"
#include "../persist/prop.h"
#include "../persist/rdb.h"
#include "../base/crc64.h"
#include "script.h"
#include "script_int.h"

#define LOAD_TIMEOUT_MS 500
#define DUMP_RDB_VERSION 10
#define RDB_OPCODE_FUNCTION2 245
#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define ERR_NAME                                                                                                 \
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

struct lib;
struct fn {
    char *name;
    char *desc;
    int ref; /* registry reference of the callback */
    unsigned flags;
    atomic_int mode; /* SM_* (script_int.h) */
    struct lib *lib;
};

struct lib {
    char *name;
    char *code;
    size_t codelen;
    struct fn **fns;
    int nfns, cap;
    struct lib *next; /* context's list, load order */
};

struct libctx {
    struct lib *head, *tail;
    int nlibs;
    struct fn **tab; /* open addressing by name */
    size_t tcap, nfns;
};

static lua_State *fvm;
static struct libctx *cur;
static atomic_llong stat_libs, stat_fns;
/* The library being loaded (register_function adds to it): per thread, as
 * replicas are built in parallel. */
static _Thread_local struct lib *loading;
static _Thread_local long long load_start_ms;
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;

#define REG_FNS "hk_fns" /* a replica's registry table: function name -> callback */
struct fvm_rep {
    lua_State *L;       /* NULL: closed, built again on next use */
    unsigned long long gen;
    int broken;         /* building failed at this gen: FCALLs go alone */
    struct fvm_rep *next;
};
static atomic_ullong fn_gen = 1;
static pthread_mutex_t reps_mu = PTHREAD_MUTEX_INITIALIZER; /* the list; the fields: the script lock */
static struct fvm_rep *reps;
static _Thread_local struct fvm_rep *my_rep;

/* The libraries changed (script lock held exclusively): every replica goes. */
static void fn_changed(void)
{
    atomic_fetch_add(&fn_gen, 1);
    pthread_mutex_lock(&reps_mu);
    for (struct fvm_rep *r = reps; r; r = r->next) {
        if (r->L)
            lua_close(r->L);
        r->L = NULL;
        r->broken = 0;
    }
    pthread_mutex_unlock(&reps_mu);
}

/* ----------------------------------------------------------- context --- */
static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)((*s >= 'A' && *s <= 'Z') ? *s + 32 : *s)) * 1099511628211ull;
    return h;
}

static struct libctx *ctx_new(void)
{
    return hk_calloc(sizeof(struct libctx));
}

static struct fn *ctx_find_fn(struct libctx *x, const char *name, size_t len)
{
    if (!x->tcap)
        return NULL;
    char tmp[256], *n = len < sizeof(tmp) ? tmp : hk_malloc(len + 1);
    memcpy(n, name, len);
    n[len] = 0;
    struct fn *found = NULL;
    if (strlen(n) == len) {
        for (size_t i = name_hash(n) & (x->tcap - 1);; i = (i + 1) & (x->tcap - 1)) {
            struct fn *f = x->tab[i];
            if (!f)
                break;
            if (f != (struct fn *)x && strcasecmp(f->name, n) == 0) {
                found = f;
                break;
            }
        }
    }
    if (n != tmp)
        hk_free(n);
    return found;
}

static void ctx_rehash(struct libctx *x, size_t ncap)
{
    struct fn **old = x->tab;
    size_t ocap = x->tcap;
    x->tab = hk_calloc(sizeof(struct fn *) * ncap);
    x->tcap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        struct fn *f = old[i];
        if (!f || f == (struct fn *)x)
            continue;
        size_t j = name_hash(f->name) & (ncap - 1);
        while (x->tab[j])
            j = (j + 1) & (ncap - 1);
        x->tab[j] = f;
    }
    hk_free(old);
}

static void ctx_add_fn(struct libctx *x, struct fn *f)
{
    if ((x->nfns + 1) * 2 > x->tcap)
        ctx_rehash(x, x->tcap ? x->tcap * 2 : 16);
    size_t j = name_hash(f->name) & (x->tcap - 1);
    while (x->tab[j] && x->tab[j] != (struct fn *)x)
        j = (j + 1) & (x->tcap - 1);
    x->tab[j] = f;
    x->nfns++;
}

static void ctx_del_fn(struct libctx *x, struct fn *f)
{
    for (size_t j = name_hash(f->name) & (x->tcap - 1);; j = (j + 1) & (x->tcap - 1)) {
        if (!x->tab[j])
            return;
        if (x->tab[j] == f) {
            x->tab[j] = (struct fn *)x; /* tombstone */
            x->nfns--;
            return;
        }
    }
}

static struct lib *ctx_find_lib(struct libctx *x, const char *name, size_t len)
{
    for (struct lib *l = x->head; l; l = l->next)
        if (strlen(l->name) == len && memcmp(l->name, name, len) == 0)
            return l;
    return NULL;
}

static void lib_free(struct lib *l)
{
    for (int i = 0; i < l->nfns; i++) {
        struct fn *f = l->fns[i];
        if (fvm)
            luaL_unref(fvm, LUA_REGISTRYINDEX, f->ref);
        hk_free(f->name);
        hk_free(f->desc);
        hk_free(f);
    }
    hk_free(l->fns);
    hk_free(l->name);
    hk_free(l->code);
    hk_free(l);
}

static void ctx_unlink(struct libctx *x, struct lib *l)
{
    struct lib **pp = &x->head, *prev = NULL;
    while (*pp && *pp != l) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = l->next;
    if (x->tail == l)
        x->tail = prev;
    l->next = NULL;
    x->nlibs--;
    for (int i = 0; i < l->nfns; i++)
        ctx_del_fn(x, l->fns[i]);
    fn_changed();
}

static void ctx_link(struct libctx *x, struct lib *l)
{
    l->next = NULL;
    if (x->tail)
        x->tail->next = l;
    else
        x->head = l;
    x->tail = l;
    x->nlibs++;
    for (int i = 0; i < l->nfns; i++)
        ctx_add_fn(x, l->fns[i]);
    fn_changed();
}

static void ctx_free(struct libctx *x)
{
    fn_changed();
    for (struct lib *l = x->head, *n; l; l = n) {
        n = l->next;
        lib_free(l);
    }
    hk_free(x->tab);
    hk_free(x);
}

static void stats_update(void)
{
    atomic_store(&stat_libs, cur->nlibs);
    atomic_store(&stat_fns, (long long)cur->nfns);
}

static void fn_init_once(void)
{
    fvm = sc_vm_new(1);
    cur = ctx_new();
}

void fn_init(void)
{
    pthread_once(&fn_once, fn_init_once);
}

long long fn_vm_memory(void)
{
    fn_init();
    long long m = (long long)lua_gc(fvm, LUA_GCCOUNT, 0) * 1024 + lua_gc(fvm, LUA_GCCOUNTB, 0);
    pthread_mutex_lock(&reps_mu);
    for (struct fvm_rep *r = reps; r; r = r->next)
        if (r->L)
            m += (long long)lua_gc(r->L, LUA_GCCOUNT, 0) * 1024 + lua_gc(r->L, LUA_GCCOUNTB, 0);
    pthread_mutex_unlock(&reps_mu);
    return m;
}

long long fn_count(void)
{
    return atomic_load(&stat_fns);
}

long long fn_lib_count(void)
{
    return atomic_load(&stat_libs);
}

long long fn_overhead(void)
{
    long long m = 0;
    if (!cur)
        return 0;
    for (struct lib *l = cur->head; l; l = l->next) {
        m += (long long)(sizeof(*l) + l->codelen + strlen(l->name) + 32);
        for (int i = 0; i < l->nfns; i++)
            m += (long long)(sizeof(struct fn) + strlen(l->fns[i]->name) + 32);
    }
    return m + (long long)(cur->tcap * sizeof(void *));
}

/* ------------------------------------------------- register_function --- */
static int valid_name(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 1;
}

static int reg_fail(lua_State *L, const char *err, int ref)
{
    if (ref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
    sc_push_error(L, err);
    return lua_error(L);
}

static int read_flags(lua_State *L, unsigned *out)
{
    unsigned f = 0;
    for (int j = 1;; j++) {
        lua_pushnumber(L, j);
        lua_gettable(L, -2);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            return -1;
        }
        const char *s = lua_tostring(L, -1);
        const struct sflag_name *n;
        for (n = script_flag_names; n->name; n++)
            if (!strcasecmp(n->name, s))
                break;
        lua_pop(L, 1);
        if (!n->name)
            return -1;
        f |= n->flag;
    }
    *out = f;
    return 0;
}

int fn_register_function(lua_State *L)
{
    if (!loading)
        return reg_fail(L, "redis.register_function can only be called on FUNCTION LOAD command", LUA_NOREF);
    int argc = lua_gettop(L);
    const char *name = NULL, *desc = NULL;
    size_t nlen = 0;
    int ref = LUA_NOREF;
    unsigned flags = 0;
    if (argc < 1 || argc > 2)
        return reg_fail(L, "wrong number of arguments to redis.register_function", LUA_NOREF);
    if (argc == 2) {
        if (!lua_isstring(L, 1))
            return reg_fail(L, "first argument to redis.register_function must be a string", LUA_NOREF);
        if (!lua_isfunction(L, 2))
            return reg_fail(L, "second argument to redis.register_function must be a function", LUA_NOREF);
        name = lua_tolstring(L, 1, &nlen);
        lua_pushvalue(L, 2);
        ref = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
        if (!lua_istable(L, 1))
            return reg_fail(L,
                            "calling redis.register_function with a single argument is only applicable to Lua table "
                            "(representing named arguments).",
                            LUA_NOREF);
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            if (!lua_isstring(L, -2) || lua_type(L, -2) != LUA_TSTRING)
                return reg_fail(L, "named argument key given to redis.register_function is not a string", ref);
            const char *key = lua_tostring(L, -2);
            if (!strcasecmp(key, "function_name")) {
                if (!lua_isstring(L, -1))
                    return reg_fail(L, "function_name argument given to redis.register_function must be a string",
                                    ref);
                name = lua_tolstring(L, -1, &nlen);
            } else if (!strcasecmp(key, "description")) {
                if (!lua_isstring(L, -1))
                    return reg_fail(L, "description argument given to redis.register_function must be a string", ref);
                desc = lua_tostring(L, -1);
            } else if (!strcasecmp(key, "callback")) {
                if (!lua_isfunction(L, -1))
                    return reg_fail(L, "callback argument given to redis.register_function must be a function", ref);
                if (ref != LUA_NOREF)
                    luaL_unref(L, LUA_REGISTRYINDEX, ref);
                ref = luaL_ref(L, LUA_REGISTRYINDEX);
                continue; /* luaL_ref popped the value */
            } else if (!strcasecmp(key, "flags")) {
                if (!lua_istable(L, -1))
                    return reg_fail(
                        L, "flags argument to redis.register_function must be a table representing function flags",
                        ref);
                if (read_flags(L, &flags) < 0)
                    return reg_fail(L, "unknown flag given", ref);
            } else {
                return reg_fail(L, "unknown argument given to redis.register_function", ref);
            }
            lua_pop(L, 1);
        }
        if (!name)
            return reg_fail(L, "redis.register_function must get a function name argument", ref);
        if (ref == LUA_NOREF)
            return reg_fail(L, "redis.register_function must get a callback argument", ref);
    }
    if (!valid_name(name, nlen))
        return reg_fail(L, ERR_NAME, ref);
    for (int i = 0; i < loading->nfns; i++)
        if (strlen(loading->fns[i]->name) == nlen && memcmp(loading->fns[i]->name, name, nlen) == 0)
            return reg_fail(L, "Function already exists in the library", ref);
    struct fn *f = hk_calloc(sizeof(*f));
    f->name = hk_malloc(nlen + 1);
    memcpy(f->name, name, nlen);
    f->name[nlen] = 0;
    f->desc = desc ? hk_strdup(desc) : NULL;
    f->ref = ref;
    f->flags = flags;
    f->lib = loading;
    if (loading->nfns == loading->cap) {
        loading->cap = loading->cap ? loading->cap * 2 : 4;
        loading->fns = hk_realloc(loading->fns, sizeof(*loading->fns) * (size_t)loading->cap);
    }
    loading->fns[loading->nfns++] = f;
    return 0;
}

static void load_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (time_ms() - load_start_ms > LOAD_TIMEOUT_MS) {
        lua_sethook(L, load_hook, LUA_MASKLINE, 0);
        sc_push_error(L, "FUNCTION LOAD timeout");
        lua_error(L);
    }
}

/* Create a library from code into x.  Returns the library (linked into x)
 * or NULL with err filled. */
static struct lib *lib_create(struct libctx *x, const char *code, size_t len, int replace, char *err, size_t errcap)
{
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errcap, "Missing library metadata");
        return NULL;
    }
    const char *nl = memchr(code, '\n', len);
    if (!nl) {
        snprintf(err, errcap, "Invalid library metadata");
        return NULL;
    }
    size_t sl = (size_t)(nl - code);
    char *line = hk_malloc(sl + 1);
    memcpy(line, code, sl);
    line[sl] = 0;
    int argc;
    char **parts = sc_splitargs(line, &argc);
    hk_free(line);
    char *name = NULL, *engine;
    if (!parts || argc == 0) {
        snprintf(err, errcap, "Invalid library metadata");
        sc_freeargs(parts, argc);
        return NULL;
    }
    engine = parts[0] + 2;
    for (int j = 1; j < argc; j++) {
        char *tok = parts[j];
        if (!strncasecmp(tok, "name=", 5)) {
            if (name) {
                snprintf(err, errcap, "Invalid metadata value, name argument was given multiple times");
                sc_freeargs(parts, argc);
                return NULL;
            }
            name = tok + 5;
            continue;
        }
        snprintf(err, errcap, "Invalid metadata value given: %s", tok);
        sc_freeargs(parts, argc);
        return NULL;
    }
    if (!name) {
        snprintf(err, errcap, "Library name was not given");
        sc_freeargs(parts, argc);
        return NULL;
    }
    if (!valid_name(name, strlen(name))) {
        snprintf(err, errcap, ERR_NAME);
        sc_freeargs(parts, argc);
        return NULL;
    }
    if (strcasecmp(engine, "lua") != 0) {
        snprintf(err, errcap, "Engine '%s' not found", engine);
        sc_freeargs(parts, argc);
        return NULL;
    }
    struct lib *old = ctx_find_lib(x, name, strlen(name));
    if (old && !replace) {
        snprintf(err, errcap, "Library '%s' already exists", name);
        sc_freeargs(parts, argc);
        return NULL;
    }
    if (old)
        ctx_unlink(x, old);
    struct lib *l = hk_calloc(sizeof(*l));
    l->name = hk_strdup(name);
    sc_freeargs(parts, argc);
    l->code = hk_malloc(len + 1);
    memcpy(l->code, code, len);
    l->code[len] = 0;
    l->codelen = len;

    /* Run the body (from the newline: line numbers stay right). */
    lua_State *L = fvm;
    int ok = 0;
    sc_vm_use_load_env(L, 1);
    if (luaL_loadbuffer(L, nl, len - sl, "@user_function")) {
        snprintf(err, errcap, "Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
    } else {
        loading = l;
        load_start_ms = time_ms();
        lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
        if (lua_pcall(L, 0, 0, 0)) {
            const char *m = NULL;
            char *own = NULL;
            if (lua_isstring(L, -1)) {
                const char *s = lua_tostring(L, -1);
                own = hk_malloc(strlen(s) + 5);
                snprintf(own, strlen(s) + 5, "ERR %s", s);
                m = own;
            } else if (lua_istable(L, -1)) {
                lua_getfield(L, -1, "err");
                if (lua_isstring(L, -1))
                    own = hk_strdup(lua_tostring(L, -1));
                lua_pop(L, 1);
                m = own;
            }
            snprintf(err, errcap, "Error registering functions: %s", m ? m : "(null)");
            hk_free(own);
            lua_pop(L, 1);
        } else {
            ok = 1;
        }
        lua_sethook(L, NULL, 0, 0);
        loading = NULL;
    }
    sc_vm_use_load_env(L, 0);
    if (ok && l->nfns == 0) {
        snprintf(err, errcap, "No functions registered");
        ok = 0;
    }
    for (int i = 0; ok && i < l->nfns; i++) {
        if (ctx_find_fn(x, l->fns[i]->name, strlen(l->fns[i]->name))) {
            snprintf(err, errcap, "Function %s already exists", l->fns[i]->name);
            ok = 0;
        }
    }
    if (!ok) {
        lib_free(l);
        if (old)
            ctx_link(x, old);
        return NULL;
    }
    ctx_link(x, l);
    if (old)
        lib_free(old);
    return l;
}

/* ------------------------------------------------------------- FCALL --- */
/* Load every library into a fresh VM, keeping the callbacks by name in its
 * REG_FNS table.  Script lock held (shared is enough: cur does not change
 * meanwhile).  NULL if a library fails to load again. */
static lua_State *rep_build(void)
{
    lua_State *L = sc_vm_new(1);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FNS);
    for (struct lib *l = cur->head; l; l = l->next) {
        const char *nl = memchr(l->code, '\n', l->codelen);
        if (!nl)
            goto fail;
        struct lib scratch;
        memset(&scratch, 0, sizeof(scratch));
        sc_vm_use_load_env(L, 1);
        int ok = 0;
        if (luaL_loadbuffer(L, nl, l->codelen - (size_t)(nl - l->code), "@user_function") == 0) {
            loading = &scratch;
            load_start_ms = time_ms();
            lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
            ok = lua_pcall(L, 0, 0, 0) == 0;
            lua_sethook(L, NULL, 0, 0);
            loading = NULL;
        }
        if (!ok)
            lua_settop(L, 0);
        sc_vm_use_load_env(L, 0);
        lua_getfield(L, LUA_REGISTRYINDEX, REG_FNS);
        for (int i = 0; i < scratch.nfns; i++) {
            struct fn *f = scratch.fns[i];
            lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
            lua_setfield(L, -2, f->name);
            luaL_unref(L, LUA_REGISTRYINDEX, f->ref);
            hk_free(f->name);
            hk_free(f->desc);
            hk_free(f);
        }
        lua_pop(L, 1);
        hk_free(scratch.fns);
        if (!ok || scratch.nfns != l->nfns)
            goto fail;
    }
    return L;
fail:
    lua_close(L);
    return NULL;
}

/* This thread's replica at the current generation, or NULL (go alone). */
static lua_State *rep_get(void)
{
    if (!my_rep) {
        my_rep = hk_calloc(sizeof(*my_rep));
        pthread_mutex_lock(&reps_mu);
        my_rep->next = reps;
        reps = my_rep;
        pthread_mutex_unlock(&reps_mu);
    }
    unsigned long long gen = atomic_load(&fn_gen);
    if (my_rep->gen != gen) {
        if (my_rep->L)
            lua_close(my_rep->L);
        my_rep->L = NULL;
        my_rep->broken = 0;
        my_rep->gen = gen;
    }
    if (!my_rep->L && !my_rep->broken) {
        my_rep->L = rep_build();
        my_rep->broken = my_rep->L == NULL;
    }
    return my_rep->L;
}

static void fcall_generic(struct client *c, int ro)
{
    int alone = 0;
again:
    if ((alone ? script_mutex_lock() : script_shared_lock()) < 0) {
        sc_busy_error(c);
        return;
    }
    int par = !script_lock_exclusive();
    fn_init();
    struct fn *f = ctx_find_fn(cur, c->argv[1], c->argvlen[1]);
    long long numkeys;
    int rc = 0;
    if (!f) {
        reply_error(&c->out, "ERR Function not found");
    } else if (sc_numkeys(c, 1, &numkeys) == 0) {
        if (ro && !(f->flags & SF_NO_WRITES)) {
            reply_error(&c->out, "ERR Can not execute a script with write flag using *_ro command.");
        } else if (sc_prepare_oom(c, f->flags) == 0) {
            int mode = atomic_load_explicit(&f->mode, memory_order_relaxed);
            lua_State *L = par && mode == SM_PARALLEL ? rep_get() : fvm;
            if (par && L == fvm) {
                script_mutex_unlock();
                alone = 1;
                goto again;
            }
            sc_push_err_handler(L);
            if (L == fvm) {
                lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
            } else {
                lua_getfield(L, LUA_REGISTRYINDEX, REG_FNS);
                lua_getfield(L, -1, f->name);
                lua_remove(L, -2);
            }
            rc = sc_run(c, L, f->name, 0, f->flags, ro, (int)numkeys, par);
            lua_pop(L, 1);
            if (rc & SC_UNDECLARED)
                atomic_store_explicit(&f->mode, SM_ALONE, memory_order_relaxed);
            else if (mode == SM_NEW && !lockctx_active())
                atomic_store_explicit(&f->mode, SM_PARALLEL, memory_order_relaxed);
        }
    }
    script_mutex_unlock();
    if (rc & SC_RETRY) {
        alone = 1;
        goto again;
    }
}

int fn_lookup_flags(const char *name, size_t len, unsigned *flags)
{
    if (script_shared_lock() < 0)
        return -1;
    fn_init();
    struct fn *f = ctx_find_fn(cur, name, len);
    if (f)
        *flags = f->flags;
    script_mutex_unlock();
    return f ? 0 : -1;
}

void fcall_command(struct client *c)
{
    fcall_generic(c, 0);
}

void fcall_ro_command(struct client *c)
{
    fcall_generic(c, 1);
}

/* ------------------------------------------------------ DUMP/RESTORE --- */
struct buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_put(struct buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        while (b->len + n > b->cap)
            b->cap = b->cap ? b->cap * 2 : 256;
        b->p = hk_realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void rdb_put_len(struct buf *b, uint64_t n)
{
    unsigned char h[9];
    if (n < 64) {
        h[0] = (unsigned char)n;
        buf_put(b, h, 1);
    } else if (n < 16384) {
        h[0] = (unsigned char)(0x40 | (n >> 8));
        h[1] = (unsigned char)n;
        buf_put(b, h, 2);
    } else if (n <= 0xffffffffull) {
        h[0] = 0x80;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(n >> (24 - 8 * i));
        buf_put(b, h, 5);
    } else {
        h[0] = 0x81;
        for (int i = 0; i < 8; i++)
            h[1 + i] = (unsigned char)(n >> (56 - 8 * i));
        buf_put(b, h, 9);
    }
}

/* Read an RDB length; *enc set for the special encodings (11xxxxxx). */
static int rdb_get_len(const unsigned char **pp, const unsigned char *end, uint64_t *n, int *enc)
{
    const unsigned char *p = *pp;
    *enc = -1;
    if (p >= end)
        return -1;
    int type = p[0] >> 6;
    if (type == 0) {
        *n = p[0] & 0x3f;
        p++;
    } else if (type == 1) {
        if (p + 2 > end)
            return -1;
        *n = (uint64_t)(p[0] & 0x3f) << 8 | p[1];
        p += 2;
    } else if (type == 3) {
        *enc = p[0] & 0x3f;
        *n = 0;
        p++;
    } else if (p[0] == 0x80) {
        if (p + 5 > end)
            return -1;
        *n = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
        p += 5;
    } else if (p[0] == 0x81) {
        if (p + 9 > end)
            return -1;
        *n = 0;
        for (int i = 0; i < 8; i++)
            *n = *n << 8 | p[1 + i];
        p += 9;
    } else {
        return -1;
    }
    *pp = p;
    return 0;
}

/* LZF decompression (the format Redis's RDB uses for compressed strings). */
static int lzf_decode(const unsigned char *in, size_t inlen, unsigned char *out, size_t outlen)
{
    const unsigned char *ip = in, *iend = in + inlen;
    unsigned char *op = out, *oend = out + outlen;
    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) { /* literal run of ctrl+1 bytes */
            size_t n = ctrl + 1;
            if (op + n > oend || ip + n > iend)
                return -1;
            memcpy(op, ip, n);
            op += n;
            ip += n;
        } else { /* back reference */
            size_t n = ctrl >> 5;
            if (n == 7) {
                if (ip >= iend)
                    return -1;
                n += *ip++;
            }
            if (ip >= iend)
                return -1;
            size_t off = ((ctrl & 0x1f) << 8) + *ip++ + 1;
            n += 2;
            if ((size_t)(op - out) < off || op + n > oend)
                return -1;
            const unsigned char *ref = op - off;
            while (n--)
                *op++ = *ref++;
        }
    }
    return op == oend ? 0 : -1;
}

/* Read an RDB string into a new buffer (NUL-terminated). */
static char *rdb_get_string(const unsigned char **pp, const unsigned char *end, size_t *len)
{
    uint64_t n;
    int enc;
    if (rdb_get_len(pp, end, &n, &enc) < 0)
        return NULL;
    const unsigned char *p = *pp;
    if (enc >= 0) {
        long long v;
        char tmp[32];
        if (enc == 0 && p + 1 <= end) {
            v = (int8_t)p[0];
            p += 1;
        } else if (enc == 1 && p + 2 <= end) {
            v = (int16_t)(p[0] | p[1] << 8);
            p += 2;
        } else if (enc == 2 && p + 4 <= end) {
            v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
            p += 4;
        } else if (enc == 3) {
            uint64_t clen, ulen;
            int e2;
            if (rdb_get_len(&p, end, &clen, &e2) < 0 || e2 >= 0 || rdb_get_len(&p, end, &ulen, &e2) < 0 || e2 >= 0)
                return NULL;
            /* Both lengths are untrusted: the compressed bytes must be
             * there, and LZF never expands more than 133x (a 264-byte
             * back reference from 2 bytes), so a bigger claim is refused
             * before the output is allocated. */
            if ((uint64_t)(end - p) < clen || clen == 0 || ulen == 0 || ulen > clen * 133 || ulen > (1ull << 32))
                return NULL;
            char *out = hk_malloc(ulen + 1);
            if (lzf_decode(p, clen, (unsigned char *)out, ulen) < 0) {
                hk_free(out);
                return NULL;
            }
            out[ulen] = 0;
            *len = ulen;
            *pp = p + clen;
            return out;
        } else {
            return NULL;
        }
        int w = snprintf(tmp, sizeof(tmp), "%lld", v);
        char *out = hk_malloc((size_t)w + 1);
        memcpy(out, tmp, (size_t)w + 1);
        *len = (size_t)w;
        *pp = p;
        return out;
    }
    if ((uint64_t)(end - p) < n)
        return NULL;
    char *out = hk_malloc(n + 1);
    memcpy(out, p, n);
    out[n] = 0;
    *len = n;
    *pp = p + n;
    return out;
}

static void function_dump(struct client *c)
{
    struct buf b = {0};
    for (struct lib *l = cur->head; l; l = l->next) {
        unsigned char op = RDB_OPCODE_FUNCTION2;
        buf_put(&b, &op, 1);
        rdb_put_len(&b, l->codelen);
        buf_put(&b, l->code, l->codelen);
    }
    unsigned char ver[2] = {DUMP_RDB_VERSION & 0xff, (DUMP_RDB_VERSION >> 8) & 0xff};
    buf_put(&b, ver, 2);
    uint64_t crc = crc64(0, b.p, b.len);
    unsigned char cb[8];
    for (int i = 0; i < 8; i++)
        cb[i] = (unsigned char)(crc >> (8 * i));
    buf_put(&b, cb, 8);
    reply_bulk(&c->out, (const char *)b.p, b.len);
    hk_free(b.p);
}

static void function_restore(struct client *c)
{
    int policy = 0; /* 0 append, 1 replace, 2 flush */
    if (c->argc > 4) {
        reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.",
                     "restore");
        return;
    }
    if (c->argc == 4) {
        if (arg_is(c, 3, "append"))
            policy = 0;
        else if (arg_is(c, 3, "replace"))
            policy = 1;
        else if (arg_is(c, 3, "flush"))
            policy = 2;
        else {
            reply_error(&c->out, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    const unsigned char *p = (const unsigned char *)c->argv[2];
    size_t len = c->argvlen[2];
    if (len < 10) {
        reply_error(&c->out, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    unsigned ver = (unsigned)p[len - 10] | (unsigned)p[len - 9] << 8;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++)
        want |= (uint64_t)p[len - 8 + i] << (8 * i);
    if (ver > 11 ||
        (want != 0 && !atomic_load_explicit(&debug_skip_checksum, memory_order_relaxed) && crc64(0, p, len - 8) != want)) {
        reply_error(&c->out, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    char err[512];
    err[0] = 0;
    struct libctx *x = ctx_new();
    const unsigned char *q = p, *end = p + len - 10;
    while (q < end) {
        unsigned type = *q++;
        if (type != RDB_OPCODE_FUNCTION2 && type != RDB_OPCODE_FUNCTION_PRE_GA) {
            snprintf(err, sizeof(err), "given type is not a function");
            break;
        }
        if (type == RDB_OPCODE_FUNCTION_PRE_GA) {
            snprintf(err, sizeof(err), "Pre-GA function format not supported");
            break;
        }
        size_t clen;
        char *code = rdb_get_string(&q, end, &clen);
        if (!code) {
            snprintf(err, sizeof(err), "Failed loading library payload");
            break;
        }
        char e2[400];
        if (!lib_create(x, code, clen, 0, e2, sizeof(e2)))
            snprintf(err, sizeof(err), "%s", e2);
        hk_free(code);
        if (err[0])
            break;
    }
    if (!err[0]) {
        if (policy == 2) {
            ctx_free(cur);
            cur = x;
            x = NULL;
        } else {
            /* Join x into cur: unlink replaced libraries, check function
             * collisions, link; revert on error. */
            struct lib *replaced[64], **rep = replaced;
            int nrep = 0, caprep = 64;
            for (struct lib *l = x->head; l && !err[0]; l = l->next) {
                struct lib *old = ctx_find_lib(cur, l->name, strlen(l->name));
                if (!old)
                    continue;
                if (policy == 0) {
                    snprintf(err, sizeof(err), "Library %s already exists", l->name);
                    break;
                }
                ctx_unlink(cur, old);
                if (nrep == caprep) {
                    caprep *= 2;
                    if (rep == replaced) {
                        rep = hk_malloc(sizeof(*rep) * (size_t)caprep);
                        memcpy(rep, replaced, sizeof(replaced));
                    } else {
                        rep = hk_realloc(rep, sizeof(*rep) * (size_t)caprep);
                    }
                }
                rep[nrep++] = old;
            }
            for (struct lib *l = x->head; l && !err[0]; l = l->next)
                for (int i = 0; i < l->nfns && !err[0]; i++)
                    if (ctx_find_fn(cur, l->fns[i]->name, strlen(l->fns[i]->name)))
                        snprintf(err, sizeof(err), "Function %s already exists", l->fns[i]->name);
            if (err[0]) {
                for (int i = 0; i < nrep; i++)
                    ctx_link(cur, rep[i]);
            } else {
                for (struct lib *l = x->head, *n; l; l = n) {
                    n = l->next;
                    ctx_link(cur, l);
                }
                x->head = x->tail = NULL;
                for (int i = 0; i < nrep; i++)
                    lib_free(rep[i]);
            }
            if (rep != replaced)
                hk_free(rep);
        }
    }
    if (x)
        ctx_free(x);
    stats_update();
    if (err[0]) {
        reply_errorf(&c->out, "ERR %s", err);
    } else {
        reply_ok(&c->out);
        prop_dirty_add(1);
        prop_self(c); /* to the AOF now, under the script mutex */
    }
}

/* ------------------------------------------------------- RDB access --- */
int fn_rdb_foreach_lib(int (*cb)(void *arg, const char *code, size_t len), void *arg)
{
    if (!cur)
        return 0;
    for (struct lib *l = cur->head; l; l = l->next) {
        int r = cb(arg, l->code, l->codelen);
        if (r < 0)
            return r;
    }
    return 0;
}

void fn_rdb_flush_libs(void)
{
    fn_init();
    ctx_free(cur);
    cur = ctx_new();
    stats_update();
}

int fn_rdb_load_lib(const char *code, size_t len, int replace, char *err, size_t errlen)
{
    fn_init();
    if (!lib_create(cur, code, len, replace, err, errlen))
        return -1;
    stats_update();
    return 0;
}

/* Snapshots reach the libraries through persist's hooks (persist/rdb.h),
 * installed by script_install_hooks() (server_wire(): before anything is
 * loaded; the unit tests and fuzz targets wire the same way). */
static const struct rdb_fn_hooks fn_rdb_hooks = {fn_rdb_foreach_lib, fn_rdb_load_lib, fn_rdb_flush_libs};

void fn_install_rdb_hooks(void)
{
    rdb_set_fn_hooks(&fn_rdb_hooks);
}

/* ---------------------------------------------------------- FUNCTION --- */
static void function_list(struct client *c)
{
    int with_code = 0;
    const char *pat = NULL;
    size_t plen = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!with_code && arg_is(c, i, "withcode")) {
            with_code = 1;
            continue;
        }
        if (!pat && arg_is(c, i, "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(&c->out, "ERR library name argument was not given");
                return;
            }
            i++;
            pat = c->argv[i];
            plen = c->argvlen[i];
            continue;
        }
        reply_errorf(&c->out, "ERR Unknown argument %.*s", (int)c->argvlen[i], c->argv[i]);
        return;
    }
    size_t mark = reply_defer(&c->out);
    long long n = 0;
    for (struct lib *l = cur->head; l; l = l->next) {
        if (pat && !glob_match(pat, plen, l->name, strlen(l->name), 1))
            continue;
        n++;
        reply_map(&c->out, with_code ? 4 : 3);
        reply_bulk_cstr(&c->out, "library_name");
        reply_bulk_cstr(&c->out, l->name);
        reply_bulk_cstr(&c->out, "engine");
        reply_bulk_cstr(&c->out, "LUA");
        reply_bulk_cstr(&c->out, "functions");
        reply_array(&c->out, l->nfns);
        for (int i = 0; i < l->nfns; i++) {
            struct fn *f = l->fns[i];
            reply_map(&c->out, 3);
            reply_bulk_cstr(&c->out, "name");
            reply_bulk_cstr(&c->out, f->name);
            reply_bulk_cstr(&c->out, "description");
            if (f->desc)
                reply_bulk_cstr(&c->out, f->desc);
            else
                reply_null(&c->out);
            reply_bulk_cstr(&c->out, "flags");
            int nf = 0;
            for (const struct sflag_name *s = script_flag_names; s->name; s++)
                nf += (f->flags & s->flag) != 0;
            reply_set(&c->out, nf);
            for (const struct sflag_name *s = script_flag_names; s->name; s++)
                if (f->flags & s->flag)
                    reply_status(&c->out, s->name);
        }
        if (with_code) {
            reply_bulk_cstr(&c->out, "library_code");
            reply_bulk(&c->out, l->code, l->codelen);
        }
    }
    if (mark != (size_t)-1)
        reply_defer_array(&c->out, mark, n);
}

static void function_stats(struct client *c)
{
    int is_eval;
    size_t before = c->out.len;
    reply_map(&c->out, 2);
    reply_bulk_cstr(&c->out, "running_script");
    sc_reply_running(c, &is_eval);
    if (is_eval) {
        c->out.len = before;
        reply_error(&c->out, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
        return;
    }
    reply_bulk_cstr(&c->out, "engines");
    reply_map(&c->out, 1);
    reply_bulk_cstr(&c->out, "LUA");
    reply_map(&c->out, 2);
    reply_bulk_cstr(&c->out, "libraries_count");
    reply_int(&c->out, atomic_load(&stat_libs));
    reply_bulk_cstr(&c->out, "functions_count");
    reply_int(&c->out, atomic_load(&stat_fns));
}

static void function_help(struct client *c)
{
    static const char *lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Print this help.",
    };
    reply_array(&c->out, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        reply_status(&c->out, lines[i]);
}

void function_command(struct client *c)
{
    const char *sub = c->cmd->name + 9; /* after "function|" */
    if (!strcmp(sub, "help")) {
        function_help(c);
        return;
    }
    if (!strcmp(sub, "kill")) {
        sc_kill(c, 0);
        return;
    }
    if (!strcmp(sub, "stats")) {
        function_stats(c);
        return;
    }
    if (!strcmp(sub, "flush")) {
        if (c->argc > 3) {
            reply_errorf(&c->out, "ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.",
                         "flush");
            return;
        }
        if (c->argc == 3 && !arg_is(c, 2, "async") && !arg_is(c, 2, "sync")) {
            reply_error(&c->out, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            return;
        }
    }
    if (script_mutex_lock() < 0) {
        sc_busy_error(c);
        return;
    }
    fn_init();
    int changed = 0; /* FUNCTION LOAD/DELETE/FLUSH: fed to the AOF below */
    if (!strcmp(sub, "load")) {
        int replace = 0, i = 2;
        for (; i < c->argc - 1; i++) {
            if (arg_is(c, i, "replace")) {
                replace = 1;
                continue;
            }
            reply_errorf(&c->out, "ERR Unknown option given: %.*s", (int)c->argvlen[i], c->argv[i]);
            goto out;
        }
        if (i >= c->argc) {
            reply_error(&c->out, "ERR Function code is missing");
            goto out;
        }
        char err[512];
        struct lib *l = lib_create(cur, c->argv[i], c->argvlen[i], replace, err, sizeof(err));
        if (!l) {
            reply_errorf(&c->out, "ERR %s", err);
        } else {
            reply_bulk_cstr(&c->out, l->name);
            changed = 1;
        }
    } else if (!strcmp(sub, "list")) {
        function_list(c);
    } else if (!strcmp(sub, "delete")) {
        struct lib *l = ctx_find_lib(cur, c->argv[2], c->argvlen[2]);
        if (!l) {
            reply_error(&c->out, "ERR Library not found");
        } else {
            ctx_unlink(cur, l);
            lib_free(l);
            reply_ok(&c->out);
            changed = 1;
        }
    } else if (!strcmp(sub, "flush")) {
        ctx_free(cur);
        cur = ctx_new();
        reply_ok(&c->out);
        changed = 1;
    } else if (!strcmp(sub, "dump")) {
        function_dump(c);
    } else if (!strcmp(sub, "restore")) {
        function_restore(c);
    } else {
        reply_unknown_subcommand(c);
    }
out:
    if (changed) {
        prop_dirty_add(1);
        prop_self(c); /* fed while the script mutex orders function changes */
    }
    stats_update();
    script_mutex_unlock();
}
