/* test_lua_sandbox.c - the script engine's replacements for unsafe stock
 * Lua 5.1 library functions (src/script/lib_sandbox.c): unpack,
 * string.rep, table.concat, table.insert and table.sort.
 *
 * A plain lua_State opened with luaL_openlibs keeps the stock functions in
 * `stock` and gets ours installed in place (hk_lua_sandbox_libs).  Ordinary
 * calls must give the same results as stock Lua, including the order a
 * non-stable sort leaves equal elements in and its "invalid order function"
 * errors (a randomized differential test with a fixed seed); hostile
 * arguments must give an error instead of a crash or a runaway allocation,
 * and the long loops must call the thread's hook (the busy/kill check). */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "script/script_int.h"
#include "test.h"

static lua_State *sb_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dostring(L, "stock = {unpack = unpack, rep = string.rep, concat = table.concat, "
                         "insert = table.insert, sort = table.sort}")) {
        test_fail(__FILE__, __LINE__, "setup: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    hk_lua_sandbox_libs(L);
    return L;
}

/* Run code; it returns a string (or raises): "E:<message>" for an error. */
static void run(lua_State *L, const char *code, char *out, size_t cap)
{
    if (luaL_dostring(L, code)) {
        snprintf(out, cap, "E:%s", lua_tostring(L, -1));
    } else {
        const char *s = lua_tostring(L, -1);
        snprintf(out, cap, "%s", s ? s : "(nil)");
    }
    lua_settop(L, 0);
}

#define CHECK_RUN(L, code, want)                                                        \
    do {                                                                                \
        char got_[512];                                                                 \
        run(L, code, got_, sizeof(got_));                                               \
        if (strcmp(got_, want) != 0)                                                    \
            test_fail(__FILE__, __LINE__, "%s: got [%s], want [%s]", code, got_, want); \
    } while (0)

TEST(lua_sandbox_ordinary_calls_match_stock)
{
    lua_State *L = sb_state();
    static const char *const same[] = {
        "return table.concat({unpack({1, 2, 3})}, ',')",
        "return table.concat({unpack({1, 2, 3}, 2)}, ',')",
        "return table.concat({unpack({1, 2, 3}, -1, 2)}, ',', 3, 4)",
        "return select('#', unpack({}, 5, 1))",
        "return select('#', unpack({}, 1, 100))",
        "return ('ab'):rep(5) .. '|' .. ('x'):rep(0) .. ('y'):rep(-3) .. (''):rep(10)",
        "return table.concat({1, 2.5, 'x'}, ', ')",
        "return table.concat({'a', 'b', 'c', 'd'}, '', 2, 3)",
        "return table.concat({'a'}, ',', 3, 2) .. '|'",
        "local t = {1, 2, 3} table.insert(t, 'x') table.insert(t, 1, 'y') return table.concat(t, ',')",
        "local t = {1, 2, 3} table.insert(t, 3, 'z') return table.concat(t, ',')",
        "local t = {1, 2} table.insert(t, 5, 'x') return tostring(t[5]) .. #t",
        "local t = {1, 2} table.insert(t, 0, 'x') return tostring(t[0]) .. tostring(t[1]) .. #t",
        "local t = {1, 2} table.insert(t, -2, 'x') return tostring(t[-2]) .. tostring(t[1]) .. #t",
        "local ok, e = pcall(table.insert, {}, 1, 2, 3) return e",
        "local ok, e = pcall(table.insert, {}) return e",
        "local ok, e = pcall(table.sort, {3, {}, 1}) return e",
        "local ok, e = pcall(table.sort, {3, 2, 1}, 5) return e",
        "local ok, e = pcall(table.sort, {1, 'x'}) return e",
    };
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        char want[512], got[512], code[1024];
        /* The same snippet with the stock functions swapped in. */
        snprintf(code, sizeof(code),
                 "local u, r, c, i, s = unpack, string.rep, table.concat, table.insert, table.sort "
                 "unpack, string.rep, table.concat, table.insert, table.sort = "
                 "stock.unpack, stock.rep, stock.concat, stock.insert, stock.sort "
                 "local ok, v = pcall(function() %s end) "
                 "unpack, string.rep, table.concat, table.insert, table.sort = u, r, c, i, s "
                 "if not ok then error(v, 0) end return v",
                 same[i]);
        run(L, code, want, sizeof(want));
        run(L, same[i], got, sizeof(got));
        if (strcmp(want, got) != 0)
            test_fail(__FILE__, __LINE__, "%s: stock [%s], ours [%s]", same[i], want, got);
    }
    lua_close(L);
}

TEST(lua_sandbox_hostile_arguments)
{
    lua_State *L = sb_state();
    CHECK_RUN(L, "return unpack({}, -2147483648, 2147483647)", "E:[string \"return unpack({}, -2147483648, 2147483647)\"]:1: too many results to unpack");
    CHECK_RUN(L, "local ok, e = pcall(unpack, {}, 1, 2147483647) return e", "too many results to unpack");
    CHECK_RUN(L, "local ok, e = pcall(unpack, {}, -2147483648, 0) return e", "too many results to unpack");
    CHECK_RUN(L, "local ok, e = pcall(unpack, {}, 1, 1e6) return e", "too many results to unpack");
    CHECK_RUN(L, "local ok, e = pcall(string.rep, 'x', 2147483647) return e", "resulting string too large");
    CHECK_RUN(L, "local ok, e = pcall(string.rep, ('x'):rep(1000), 1e9) return e", "resulting string too large");
    /* Lua 5.1.5's (and Redis's) text; Debian's liblua5.1 words it
     * differently. */
    CHECK_RUN(L, "local ok, e = pcall(table.concat, {1, {}, 3}) return e",
              "invalid value (at index 2) in table for 'concat'");
    CHECK_RUN(L, "local ok, e = pcall(table.concat, {}, ',', -2147483648, 2147483647) return e",
              "invalid value (at index -2147483648) in table for 'concat'");
    long long saved = cfg.proto_max_bulk_len;
    cfg.proto_max_bulk_len = 1 << 20;
    CHECK_RUN(L, "local t = {} for i = 1, 100 do t[i] = ('x'):rep(1000) end "
                 "local ok, e = pcall(table.concat, t, ('y'):rep(10000)) return e",
              "resulting string too large");
    CHECK_RUN(L, "return #('x'):rep(1024 * 1024)", "1048576");
    CHECK_RUN(L, "local ok, e = pcall(string.rep, 'x', 1024 * 1024 + 1) return e", "resulting string too large");
    cfg.proto_max_bulk_len = saved;
    lua_close(L);
}

static int sb_hook_calls;

static void sb_stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++sb_hook_calls >= 3)
        luaL_error(L, "stopped by hook");
}

/* The long C loops call the hook (the engine's busy/kill check). */
TEST(lua_sandbox_long_loops_call_hook)
{
    static const char *const slow[] = {
        "local t = {} table.insert(t, -2147483647, 1)",
        "local t = {} for i = 1, 200000 do t[i] = (i * 7919) % 100003 end table.sort(t)",
        "local t = {} for i = 1, 200000 do t[i] = 'x' end table.concat(t, 'y')",
    };
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        lua_State *L = sb_state();
        char out[256];
        /* The hook fires only at the stop: the Lua loops above run less
         * than 10^9 instructions. */
        sb_hook_calls = 0;
        lua_sethook(L, sb_stop_hook, LUA_MASKCOUNT, 1000000000);
        run(L, slow[i], out, sizeof(out));
        if (!strstr(out, "stopped by hook"))
            test_fail(__FILE__, __LINE__, "case %zu: %s", i, out);
        lua_close(L);
    }
}

/* table.sort: random arrays (many equal keys), random comparators, both
 * implementations; the resulting order or the error must be the same. */
static const char sort_diff[] =
    "local seed = ...\n"
    "local function lcg() seed = (seed * 16807) % 2147483647 return seed end\n"
    "local function run(sort, arr, kind, cseed)\n"
    "  local t = {} for i, v in ipairs(arr) do t[i] = v end\n"
    "  local cmp\n"
    "  if kind == 1 then cmp = function(a, b) return a.k < b.k end\n"
    "  elseif kind == 2 then cmp = function(a, b) return a.k > b.k end\n"
    "  elseif kind == 3 then local s = cseed cmp = function(a, b) s = (s * 16807) % 2147483647 return s % 3 == 0 end\n"
    "  elseif kind == 4 then cmp = function(a, b) return a.k <= b.k end\n"
    "  elseif kind == 5 then cmp = function(a, b) return true end end\n"
    "  local ok, e = pcall(sort, t, cmp)\n"
    "  local out = {ok and 'OK' or ('ERR ' .. tostring(e))}\n"
    "  for i = 1, #arr do out[#out + 1] = tostring(t[i] and t[i].id) end\n"
    "  return table.concat(out, ' ')\n"
    "end\n"
    "for round = 1, ROUNDS do\n"
    "  local n = lcg() % 40\n"
    "  local arr = {}\n"
    "  for i = 1, n do arr[i] = {k = lcg() % 6, id = i} end\n"
    "  local kind = 1 + lcg() % 5\n"
    "  local cseed = lcg()\n"
    "  local a, b = run(stock.sort, arr, kind, cseed), run(table.sort, arr, kind, cseed)\n"
    "  if a ~= b then return 'round ' .. round .. ' kind ' .. kind .. ':\\n' .. a .. '\\n' .. b end\n"
    "end\n"
    "local nums = {} for i = 1, 500 do nums[i] = lcg() % 50 end\n"
    "local x, y = {unpack(nums)}, {unpack(nums)}\n"
    "stock.sort(x) table.sort(y)\n"
    "if table.concat(x, ',') ~= table.concat(y, ',') then return 'plain numbers differ' end\n"
    "return 'same'\n";

TEST(lua_sandbox_sort_matches_stock)
{
    lua_State *L = sb_state();
    lua_pushnumber(L, TEST_SCALE(3000));
    lua_setglobal(L, "ROUNDS");
    if (luaL_loadstring(L, sort_diff)) {
        test_fail(__FILE__, __LINE__, "load: %s", lua_tostring(L, -1));
    } else {
        lua_pushnumber(L, 12345);
        if (lua_pcall(L, 1, 1, 0))
            test_fail(__FILE__, __LINE__, "run: %s", lua_tostring(L, -1));
        else if (strcmp(lua_tostring(L, -1), "same") != 0)
            test_fail(__FILE__, __LINE__, "%s", lua_tostring(L, -1));
    }
    lua_close(L);
}
