/* test_lua_pattern.c - the script engine's own Lua 5.1 pattern matching
 * (src/script/lua_pattern.c) against the stock liblua5.1 functions it
 * replaces: string.find, string.match, string.gmatch and string.gsub.
 *
 * A plain lua_State opened with luaL_openlibs holds both: the stock ones in
 * `string`, ours in the global table `hk`.  Every case calls both under
 * pcall with the same arguments and compares a rendering of the outcome
 * (each returned value with its type, or the error message).  The cases are
 * a hand-written table of patterns and subjects (every pattern item, the
 * corner cases and the error messages) and a randomized differential test
 * with a fixed seed (random small patterns built from pattern tokens,
 * random subjects, init and plain arguments, and gsub replacements of every
 * kind).  Then what stock Lua does not have: the recursion bound ("pattern
 * too complex") and the hook call that lets a catastrophic match be
 * stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "script/script_int.h"
#include "test.h"

static const char cmp_prelude[] =
    "local function render(ok, ...)\n"
    "  local parts = {ok and 'OK' or 'ERR'}\n"
    "  for i = 1, select('#', ...) do\n"
    "    local v = select(i, ...)\n"
    "    parts[#parts + 1] = type(v) .. ':' .. tostring(v)\n"
    "  end\n"
    "  return table.concat(parts, '|')\n"
    "end\n"
    "local function run_gmatch(gm, s, p)\n"
    "  local ok, it = pcall(gm, s, p)\n"
    "  if not ok then return render(false, it) end\n"
    "  local out = {}\n"
    "  for i = 1, 40 do\n"
    "    local r = {pcall(it)}\n"
    "    if not r[1] then out[#out + 1] = render(false, r[2]) break end\n"
    "    if r[2] == nil then break end\n"
    "    out[#out + 1] = render(unpack(r))\n"
    "  end\n"
    "  return table.concat(out, ';')\n"
    "end\n"
    "local repls = {\n"
    "  '<%0>', '%1', '[%2]', 'x%%y', '%', '%a%', 7,\n"
    "  {a = 'A', b = false, ['('] = 1, c = {}, ['1'] = 'one'},\n"
    "  function(a, b) if a == 'c' then return {} end return a and (a .. '/' .. tostring(b)) end,\n"
    "  function() return nil end,\n"
    "  true,\n"
    "}\n"
    "-- Returns equal, stock rendering, ours.\n"
    "function cmp(name, s, p, a3, a4)\n"
    "  local want, got\n"
    "  if name == 'gmatch' then\n"
    "    want, got = run_gmatch(string.gmatch, s, p), run_gmatch(hk.gmatch, s, p)\n"
    "  elseif name == 'gsub' then\n"
    "    local r = repls[a3] \n"
    "    want = render(pcall(string.gsub, s, p, r, a4))\n"
    "    got = render(pcall(hk.gsub, s, p, r, a4))\n"
    "  else\n"
    "    want = render(pcall(string[name], s, p, a3, a4))\n"
    "    got = render(pcall(hk[name], s, p, a3, a4))\n"
    "  end\n"
    "  return want == got, want, got\n"
    "end\n"
    "NREPLS = #repls\n";

static lua_State *cmp_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_newtable(L);
    hk_lua_pattern_register(L, -1);
    lua_setglobal(L, "hk");
    if (luaL_dostring(L, cmp_prelude)) {
        test_fail(__FILE__, __LINE__, "prelude: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return L;
}

static int mismatches;

/* Compare one call; a3/a4 are numbers (0 = nil) except for find's plain
 * flag (a4: 0 nil, 1 true, 2 false). */
static void cmp_call(lua_State *L, const char *fn, const char *s, size_t sl, const char *p, size_t pl, int has3,
                     long a3, int a4kind, long a4)
{
    lua_getglobal(L, "cmp");
    lua_pushstring(L, fn);
    lua_pushlstring(L, s, sl);
    lua_pushlstring(L, p, pl);
    if (has3)
        lua_pushnumber(L, (lua_Number)a3);
    else
        lua_pushnil(L);
    if (a4kind == 0)
        lua_pushnil(L);
    else if (a4kind == 1)
        lua_pushboolean(L, 1);
    else if (a4kind == 2)
        lua_pushboolean(L, 0);
    else
        lua_pushnumber(L, (lua_Number)a4);
    if (lua_pcall(L, 5, 3, 0)) {
        test_fail(__FILE__, __LINE__, "cmp raised: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return;
    }
    if (!lua_toboolean(L, -3)) {
        if (++mismatches <= 20) {
            size_t wl, gl;
            const char *w = lua_tolstring(L, -2, &wl);
            const char *g = lua_tolstring(L, -1, &gl);
            test_fail(__FILE__, __LINE__, "%s(%.*s, %.*s, %ld, %d:%ld):", fn, (int)sl, s, (int)pl, p, a3, a4kind, a4);
            test_fail_mem(__FILE__, __LINE__, "stock vs ours", w, wl, g, gl);
        }
    }
    lua_pop(L, 3);
}

/* Every function on (s, p) with a few init values and replacements. */
static void cmp_all(lua_State *L, const char *s, size_t sl, const char *p, size_t pl)
{
    static const long inits[] = {1, 2, -1, -3, 0, 50, -50};
    cmp_call(L, "find", s, sl, p, pl, 0, 0, 0, 0);
    cmp_call(L, "match", s, sl, p, pl, 0, 0, 0, 0);
    cmp_call(L, "gmatch", s, sl, p, pl, 0, 0, 0, 0);
    for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); i++) {
        cmp_call(L, "find", s, sl, p, pl, 1, inits[i], (int)(i % 3), 0);
        cmp_call(L, "match", s, sl, p, pl, 1, inits[i], 0, 0);
    }
    lua_getglobal(L, "NREPLS");
    int nrepl = (int)lua_tonumber(L, -1);
    lua_pop(L, 1);
    for (int r = 1; r <= nrepl; r++) {
        cmp_call(L, "gsub", s, sl, p, pl, 1, r, 0, 0);
        cmp_call(L, "gsub", s, sl, p, pl, 1, r, 3, r % 3);
    }
}

struct pcase {
    const char *s, *p;
};

static const struct pcase pattern_cases[] = {
    /* plain text, anchors, the find fast path */
    {"hello world", "o w"}, {"hello world", "o"}, {"hello", ""}, {"", ""}, {"", "a"}, {"abc", "^abc$"},
    {"abc", "^b"}, {"abc", "c$"}, {"a$b", "$b"}, {"a^b", "a^b"}, {"a.b", "."}, {"a.b", "%."}, {"x+y", "+"},
    {"aaa", "^a"}, {"a b c", "%s"},
    /* classes and complements */
    {"Hello, World! 123\t\n", "%a+"}, {"Hello, World! 123", "%A+"}, {"abc123def", "%d+"}, {"abc123", "%D+"},
    {"aBcD", "%l+"}, {"aBcD", "%u+"}, {"aBcD", "%L"}, {"a,b;c", "%p"}, {"a,b;c", "%P+"}, {"  x  ", "%s*"},
    {"  x  ", "%S"}, {"a_b9", "%w+"}, {"a_b9", "%W"}, {"0x1F", "%x+"}, {"zz", "%X"}, {"\x01\x02a", "%c+"},
    {"ab", "%C"}, {"a\0b", "%z"}, {"a\0b", "%Z+"}, {"a%b", "%%"}, {"a]b", "%]"}, {"qq", "%q"},
    /* sets */
    {"hello", "[aeiou]+"}, {"hello", "[^aeiou]+"}, {"a-z", "[a-]+"}, {"a-z", "[-a]+"}, {"b", "[a-c]"},
    {"]", "[]]"}, {"]", "[^]]"}, {"a]", "[^]]+"}, {"x%", "[%%]"}, {"a1_", "[%w_]+"}, {"a1_", "[^%w]"},
    {"abc", "[a-]"}, {"-", "[a-]"}, {"a^", "[b^]+"}, {"^", "[^^]"}, {"abc", "[%a-c]+"}, {"z-", "[a-c-z]+"},
    /* quantifiers */
    {"aaab", "a*"}, {"aaab", "a+"}, {"aaab", "a-b"}, {"aaab", "a?a?b"}, {"b", "a?b"}, {"ab", "a-"},
    {"abc", ".-"}, {"<a><b>", "<.->"}, {"<a><b>", "<.*>"}, {"aaa", "a-$"}, {"", "a*"}, {"", "a+"},
    {"abab", "(ab)+"}, {"*a", "*a"}, {"a*", "a%*"}, {"?", "?"}, {"-", "-"},
    /* captures */
    {"key = value", "(%w+)%s*=%s*(%w+)"}, {"hello", "()ll()"}, {"hello", "(h)(e)(l)(l)(o)"},
    {"hello", "((l)(l))"}, {"abc", "()"}, {"abc", "(a)(b)()"}, {"hello", "(l+)"}, {"ab", "(a"}, {"ab", "a)"},
    {"ab", "(a)(b"}, {"ab", "%)"}, {"x", "(((((((((((((((((((((((((((((((((x)))))))))))))))))))))))))))))))))"},
    {"x", "((((((((((((((((((((((((((((((((x))))))))))))))))))))))))))))))))"},
    /* back-references */
    {"abab", "(ab)%1"}, {"xaax", "(a)%1"}, {"say \"hi\" ok", "([\"'])(.-)%1"}, {"aa", "%1"}, {"aa", "(a)%2"},
    {"aa", "(a%1)"}, {"aa", "%0"}, {"aXa", "(a).%1"},
    /* %b and %f */
    {"f(a(b)c) d", "%b()"}, {"[[x]]", "%b[]"}, {"(((", "%b()"}, {"abc", "%b"}, {"abc", "%ba"}, {"xaxx", "%bxx"},
    {"THE (quick) fox", "%f[%a]%a+"}, {"THE (quick) fox", "%f[%A]"}, {"hello", "%f[%l]"}, {"hello", "%f[%z]"},
    {"a", "%fa"}, {"a", "%f"}, {"a", "%f[a"},
    /* malformed */
    {"a", "%"}, {"a", "a%"}, {"a", "["}, {"a", "[a"}, {"a", "[^"}, {"a", "[%"}, {"a", "[]"}, {"a", "[^]"},
    {"a", "(()"}, {"a", ")"}, {"a", "%g"},
    /* NUL in patterns and subjects */
    {"a\0b", "a\0c"}, {"a\0b", "\0"}, {"a\0b", "[\0]"}, {"a\0b", "%z+"},
};

TEST(lua_pattern_cases_match_stock)
{
    lua_State *L = cmp_state();
    mismatches = 0;
    for (size_t i = 0; i < sizeof(pattern_cases) / sizeof(pattern_cases[0]); i++) {
        const struct pcase *c = &pattern_cases[i];
        /* (The cases spelled with an embedded NUL stop at it here; they
         * are run with their full lengths below.) */
        size_t sl = strlen(c->s), pl = strlen(c->p);
        cmp_all(L, c->s, sl, c->p, pl);
    }
    /* The NUL cases with their full lengths. */
    cmp_all(L, "a\0b", 3, "a\0c", 3);
    cmp_all(L, "a\0b", 3, "\0", 1);
    cmp_all(L, "a\0b", 3, "[\0]", 3);
    cmp_all(L, "a\0b", 3, "%z", 2);
    cmp_all(L, "a\0b", 3, "%Z+", 3);
    cmp_all(L, "a\0b\0", 4, "%f[%z]", 6);
    cmp_all(L, "a\0b", 3, "b", 1);
    /* Bigger subjects. */
    {
        char big[600];
        for (int i = 0; i < 599; i++)
            big[i] = "ab (c)[d]%e"[i % 11];
        big[599] = 0;
        cmp_all(L, big, 599, "%b()", 4);
        cmp_all(L, big, 599, "(%b[])(.-)%%", 12);
        cmp_all(L, big, 599, "[%a]+", 6);
        cmp_all(L, big, 599, "(a)(b)", 6);
        cmp_all(L, big, 599, "e$", 2);
    }
    lua_close(L);
}

/* ------------------------------------------------ randomized differential */
static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

static const char *const pat_tokens[] = {
    "a",    "b",     "c",     " ",      ".",      "%a",     "%d",     "%s",    "%w",     "%p",    "%z",   "%A",
    "%S",   "[abc]", "[^a]",  "[a-c]",  "[%a_]",  "[]]",    "[^]a]",  "(",     ")",      "()",    "%1",   "%2",
    "%b()", "%bab",  "%f[%w]", "%f[^a]", "^",     "$",      "*",      "+",     "-",      "?",     "%",    "[",
    "%f",   "%b",    "x",     "%x",     "%%",     "%.",     "%(",     "]",     "(a)",    "(.-)",  "a*",   "b+",
    ".-",   "a?",    "[ab]*", "%d+",    "[^%s]+", "(%w+)",  "%u",     "%l",    "%c",     "\0",    "[%z]", "%3",
};

static const char subj_chars[] = "aabbc  ()[]%-.x0129AZ\n\t_*?$^";

TEST(lua_pattern_random_differential)
{
    lua_State *L = cmp_state();
    mismatches = 0;
    rng_state = 20240515;
    int rounds = TEST_SCALE(6000);
    for (int r = 0; r < rounds; r++) {
        char pat[128], subj[32];
        size_t pl = 0, sl = 0;
        int ntok = 1 + (int)rnd(6);
        for (int t = 0; t < ntok; t++) {
            const char *tok = pat_tokens[rnd(sizeof(pat_tokens) / sizeof(pat_tokens[0]))];
            size_t tl = tok[0] ? strlen(tok) : 1; /* "\0" is one NUL byte */
            memcpy(pat + pl, tok, tl);
            pl += tl;
        }
        /* Stock Lua reads past the subject for a back-reference to a
         * position capture ("()" ... "%1"): leave those out. */
        int has_pos = 0, has_ref = 0;
        for (size_t i = 0; i + 1 < pl; i++) {
            if (pat[i] == '(' && pat[i + 1] == ')')
                has_pos = 1;
            if (pat[i] == '%' && pat[i + 1] >= '0' && pat[i + 1] <= '9')
                has_ref = 1;
        }
        if (has_pos && has_ref)
            continue;
        sl = rnd(10);
        for (size_t i = 0; i < sl; i++)
            subj[i] = rnd(40) == 0 ? '\0' : subj_chars[rnd(sizeof(subj_chars) - 1)];
        static const long inits[] = {1, 3, -2, 0, 20, -20};
        switch (rnd(4)) {
        case 0:
            cmp_call(L, "find", subj, sl, pat, pl, rnd(2), inits[rnd(6)], (int)rnd(3), 0);
            break;
        case 1:
            cmp_call(L, "match", subj, sl, pat, pl, rnd(2), inits[rnd(6)], 0, 0);
            break;
        case 2:
            cmp_call(L, "gmatch", subj, sl, pat, pl, 0, 0, 0, 0);
            break;
        default: {
            lua_getglobal(L, "NREPLS");
            int nrepl = (int)lua_tonumber(L, -1);
            lua_pop(L, 1);
            int kind = rnd(2) ? 3 : 0;
            cmp_call(L, "gsub", subj, sl, pat, pl, 1, 1 + (long)rnd((unsigned)nrepl), kind, (long)rnd(4) - 1);
            break;
        }
        }
    }
    lua_close(L);
}

/* ------------------------------------------------------- beyond stock --- */
static int run_ours(lua_State *L, const char *code, char *err, size_t errcap)
{
    int rc = luaL_dostring(L, code);
    if (rc && err) {
        const char *m = lua_tostring(L, -1);
        snprintf(err, errcap, "%s", m ? m : "?");
    }
    lua_settop(L, 0);
    return rc;
}

TEST(lua_pattern_depth_bound)
{
    lua_State *L = cmp_state();
    char err[256] = "";
    /* 300 nested optional items: stock Lua recurses 300 deep; ours stops. */
    CHECK(run_ours(L, "hk.find(('a'):rep(300), ('a?'):rep(300))", err, sizeof(err)) != 0);
    CHECK(strstr(err, "pattern too complex") != NULL);
    CHECK(run_ours(L, "hk.match('x', ('('):rep(40) .. 'x' .. (')'):rep(40))", err, sizeof(err)) != 0);
    CHECK(strstr(err, "too many captures") != NULL);
    /* 150 levels are fine. */
    CHECK(run_ours(L, "assert(hk.find(('a'):rep(150), ('a?'):rep(150)) == 1)", err, sizeof(err)) == 0);
    lua_close(L);
}

static int hook_calls;

static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++hook_calls >= 3)
        luaL_error(L, "stopped by hook");
}

/* A catastrophic match calls the thread's hook from inside the C call (as
 * the engine's busy/kill check), which can stop it. */
TEST(lua_pattern_calls_hook_while_matching)
{
    static const char *const slow[] = {
        "hk.find(('a'):rep(60), ('a?'):rep(60) .. ('a'):rep(60))",
        "hk.match(('a'):rep(3000), ('.-'):rep(8) .. 'b')",
        "hk.gsub(('a'):rep(3000), ('.-'):rep(8) .. 'b', 'x')",
        "for x in hk.gmatch(('a'):rep(3000), ('.-'):rep(8) .. 'b') do end",
        "hk.find(('('):rep(200000), '%b()')",
    };
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        lua_State *L = cmp_state();
        char err[256] = "";
        hook_calls = 0;
        lua_sethook(L, stop_hook, LUA_MASKCOUNT, 1000000000);
        CHECK(run_ours(L, slow[i], err, sizeof(err)) != 0);
        if (!strstr(err, "stopped by hook"))
            test_fail(__FILE__, __LINE__, "case %zu: %s", i, err);
        CHECK(hook_calls >= 3);
        lua_close(L);
    }
}

/* gsub's result is bounded (proto-max-bulk-len, 512 MB when unset). */
TEST(lua_pattern_gsub_result_bound)
{
    lua_State *L = cmp_state();
    char err[256] = "";
    long long saved = cfg.proto_max_bulk_len;
    cfg.proto_max_bulk_len = 1 << 20;
    CHECK(run_ours(L, "hk.gsub(('x'):rep(1000), 'x', ('y'):rep(2000))", err, sizeof(err)) != 0);
    CHECK(strstr(err, "resulting string too large") != NULL);
    CHECK(run_ours(L, "assert(#hk.gsub(('x'):rep(1000), 'x', ('y'):rep(1000)) == 1000000)", err, sizeof(err)) == 0);
    CHECK(run_ours(L, "hk.gsub(('x'):rep(1000000), '', ('y'):rep(1000))", err, sizeof(err)) != 0);
    CHECK(strstr(err, "resulting string too large") != NULL);
    cfg.proto_max_bulk_len = saved;
    lua_close(L);
}
