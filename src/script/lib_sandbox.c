/* lib_sandbox.c - HotKV's replacements for the stock Lua 5.1 library
 * functions that are unsafe with hostile arguments (the system liblua5.1
 * carries none of the fixes Redis applies to its bundled copy).
 *
 *   unpack(t [, i [, j]])   the count is computed in 64 bits and the stack
 *                           grown with lua_checkstack: "too many results to
 *                           unpack" instead of a crash for huge ranges.
 *   string.rep(s, n)        results over proto-max-bulk-len raise "resulting
 *                           string too large" (stock Lua allocates until
 *                           the process dies); long copies check the kill
 *                           state.
 *   table.concat(t, sep, i, j)  the same bound; checks the kill state.
 *   table.insert(t, [pos,] v)   stock semantics, but the shifting loop (up
 *                           to 2^32 steps for a far-off position) checks the
 *                           kill state.
 *   table.sort(t [, comp])  the same quicksort as stock Lua 5.1 (pivot
 *                           choice, partitioning, hence the same order of
 *                           equal elements and the same "invalid order
 *                           function for sorting" errors), checking the
 *                           kill state: sorting a big table without a
 *                           comparator is one long C call.
 *
 * "Checks the kill state" means hk_lua_tick (lua_pattern.c): the hook the
 * engine installed on the running thread runs from inside the C call, so a
 * busy script stuck there is still reported busy, its worker keeps serving
 * its other connections, and SCRIPT KILL / FUNCTION KILL / SHUTDOWN stop
 * it. */
#include <limits.h>
#include <string.h>

#include "script_int.h"

#define TICK_EVERY 4096

static int l_unpack(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int first = luaL_optint(L, 2, 1);
    int last = luaL_opt(L, luaL_checkint, 3, (int)lua_objlen(L, 1));
    if (first > last)
        return 0;
    long long n = (long long)last - (long long)first + 1;
    if (n >= INT_MAX || !lua_checkstack(L, (int)n))
        return luaL_error(L, "too many results to unpack");
    for (long long i = first; i <= last; i++)
        lua_rawgeti(L, 1, (int)i);
    return (int)n;
}

static int l_string_rep(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int n = luaL_checkint(L, 2);
    if (n <= 0 || len == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    size_t max = hk_lua_max_string();
    if (len > max / (size_t)n)
        return luaL_error(L, "resulting string too large");
    size_t total = len * (size_t)n;
    char *buf = lua_newuserdata(L, total);
    /* Doubling copies: log2(n) memcpy calls, a tick between them. */
    memcpy(buf, s, len);
    size_t done = len;
    while (done < total) {
        size_t chunk = done < total - done ? done : total - done;
        memcpy(buf + done, buf, chunk);
        done += chunk;
        hk_lua_tick(L);
    }
    lua_pushlstring(L, buf, total);
    return 1;
}

static int l_table_concat(lua_State *L)
{
    size_t seplen;
    const char *sep = luaL_optlstring(L, 2, "", &seplen);
    luaL_checktype(L, 1, LUA_TTABLE);
    int first = luaL_optint(L, 3, 1);
    int last = luaL_opt(L, luaL_checkint, 4, (int)lua_objlen(L, 1));
    size_t max = hk_lua_max_string(), total = 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (long long i = first; i <= last; i++) {
        if ((i - first) % TICK_EVERY == TICK_EVERY - 1)
            hk_lua_tick(L);
        lua_rawgeti(L, 1, (int)i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (at index %d) in table for 'concat'", (int)i);
        size_t n;
        lua_tolstring(L, -1, &n);
        if (i < last)
            n += seplen;
        if (n > max - total)
            return luaL_error(L, "resulting string too large");
        total += n;
        luaL_addvalue(&b);
        if (i < last)
            luaL_addlstring(&b, sep, seplen);
    }
    luaL_pushresult(&b);
    return 1;
}

static int l_table_insert(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    long long end = (long long)lua_objlen(L, 1) + 1; /* first empty slot */
    long long pos;
    switch (lua_gettop(L)) {
    case 2:
        pos = end;
        break;
    case 3:
        pos = luaL_checkint(L, 2);
        if (pos > end)
            end = pos;
        for (long long i = end; i > pos; i--) {
            if ((end - i) % TICK_EVERY == TICK_EVERY - 1)
                hk_lua_tick(L);
            lua_rawgeti(L, 1, (int)(i - 1));
            lua_rawseti(L, 1, (int)i);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_rawseti(L, 1, (int)pos);
    return 0;
}

/* table.sort */
struct sort_ctx {
    unsigned steps;
};

/* Is the value at absolute index a less than the one at b?  (The
 * comparator is argument 2, nil for '<'.) */
static int sort_less(lua_State *L, struct sort_ctx *x, int a, int b)
{
    if (++x->steps >= TICK_EVERY) {
        x->steps = 0;
        hk_lua_tick(L);
    }
    if (lua_isnil(L, 2))
        return lua_lessthan(L, a, b);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_call(L, 2, 1);
    int r = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return r;
}

/* Store the top two values: the topmost into t[i], the one below into t[j]. */
static void sort_store2(lua_State *L, int i, int j)
{
    lua_rawseti(L, 1, i);
    lua_rawseti(L, 1, j);
}

static void sort_range(lua_State *L, struct sort_ctx *x, int lo, int up)
{
    int base = lua_gettop(L);
    const int A = base + 1, B = base + 2, C = base + 3;
    while (lo < up) {
        /* Order t[lo], t[mid], t[up] among themselves. */
        lua_rawgeti(L, 1, lo);
        lua_rawgeti(L, 1, up);
        if (sort_less(L, x, B, A))
            sort_store2(L, lo, up);
        else
            lua_settop(L, base);
        if (up - lo == 1)
            break;
        int mid = lo + (up - lo) / 2;
        lua_rawgeti(L, 1, mid);
        lua_rawgeti(L, 1, lo);
        if (sort_less(L, x, A, B)) {
            sort_store2(L, mid, lo);
        } else {
            lua_settop(L, A);
            lua_rawgeti(L, 1, up);
            if (sort_less(L, x, B, A))
                sort_store2(L, mid, up);
            else
                lua_settop(L, base);
        }
        if (up - lo == 2)
            break;
        /* The median is the pivot P (kept at A); it moves to t[up - 1]. */
        lua_rawgeti(L, 1, mid);
        lua_pushvalue(L, A);
        lua_rawgeti(L, 1, up - 1);
        sort_store2(L, mid, up - 1);
        int i = lo, j = up - 1;
        for (;;) {
            /* Scan up while t[i] < P, down while P < t[j]. */
            for (;;) {
                lua_rawgeti(L, 1, ++i);
                if (!sort_less(L, x, B, A))
                    break;
                if (i > up)
                    luaL_error(L, "invalid order function for sorting");
                lua_settop(L, A);
            }
            for (;;) {
                lua_rawgeti(L, 1, --j);
                if (!sort_less(L, x, A, C))
                    break;
                if (j < lo)
                    luaL_error(L, "invalid order function for sorting");
                lua_settop(L, B);
            }
            if (j < i) {
                lua_settop(L, base);
                break;
            }
            sort_store2(L, i, j); /* swap t[i] and t[j] */
        }
        lua_rawgeti(L, 1, up - 1);
        lua_rawgeti(L, 1, i);
        sort_store2(L, up - 1, i); /* the pivot to its place, t[i] */
        /* Recurse into the smaller side, loop on the larger one. */
        int from, to;
        if (i - lo < up - i) {
            from = lo;
            to = i - 1;
            lo = i + 1;
        } else {
            from = i + 1;
            to = up;
            up = i - 1;
        }
        sort_range(L, x, from, to);
    }
    lua_settop(L, base);
}

int hk_table_sort(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = (int)lua_objlen(L, 1);
    luaL_checkstack(L, 40, ""); /* recursion depth is below log2(n) */
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    struct sort_ctx x = {0};
    sort_range(L, &x, 1, n);
    return 0;
}

void hk_lua_sandbox_libs(lua_State *L)
{
    lua_pushcfunction(L, l_unpack);
    lua_setfield(L, LUA_GLOBALSINDEX, "unpack");

    lua_getfield(L, LUA_GLOBALSINDEX, "string");
    lua_pushcfunction(L, l_string_rep);
    lua_setfield(L, -2, "rep");
    hk_lua_pattern_register(L, -1);
    lua_pop(L, 1);

    lua_getfield(L, LUA_GLOBALSINDEX, "table");
    lua_pushcfunction(L, l_table_concat);
    lua_setfield(L, -2, "concat");
    lua_pushcfunction(L, l_table_insert);
    lua_setfield(L, -2, "insert");
    lua_pushcfunction(L, hk_table_sort);
    lua_setfield(L, -2, "sort");
    lua_pop(L, 1);
}
