"""The Lua sandbox (issue 15, "Safe to expose"): what a hostile script must
not be able to do -- crash the server, change the environment that later
scripts (of any client) run in, or keep a worker busy where SCRIPT KILL,
FUNCTION KILL and SHUTDOWN cannot stop it.

Each test is a regression test for an escape HotKV had: stock liblua5.1's
unpack() crash, getfenv/setfenv, the writable string metatable, pairs()
handing out the real table behind a read-only proxy, catastrophic patterns
in string.find & co. (a C call the count hook cannot interrupt), unbounded
string.rep/table.concat/gsub results, long C loops in table.insert and
collectgarbage settings that outlived their script.  Redis 7 answers all of
these with an error (or is not affected)."""
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, Server

pytestmark = pytest.mark.skipif(IS_REDIS, reason="HotKV sandbox details (error texts of HotKV's own guards)")

RO = "Attempt to modify a readonly table"
KILLED = "Script killed by user with SCRIPT KILL..."
# Exponential backtracking, shallow enough for the matcher's depth bound.
CATASTROPHIC = "return string.find(('a'):rep(60), ('a?'):rep(60) .. ('a'):rep(60))"


@pytest.fixture(scope="module")
def small_bulk():
    """A server with proto-max-bulk-len at its 1 MB minimum: the bound of
    strings the libraries build.  (Started so rather than changed with
    CONFIG SET, which would race with the workers reading the setting.)"""
    s = Server("--proto-max-bulk-len", 1024 * 1024)
    c = s.client(decode_responses=True)
    yield c
    c.close()
    assert s.stop() == 0


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def eval_err(r, script, *keys_args):
    return err(r, "eval", script, 0, *keys_args)


def _bg(fn):
    res = {}

    def run():
        try:
            res["v"] = fn()
        except Exception as e:  # noqa: BLE001 - the error is the result
            res["e"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, res


def _kill_when_busy(c, cmd=("script", "kill"), timeout=5.0):
    """Send SCRIPT/FUNCTION KILL as soon as a script is running."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            return c.execute_command(*cmd)
        except redis.ResponseError as e:
            if not str(e).startswith("NOTBUSY"):
                raise
        time.sleep(0.02)
    raise AssertionError("no script became busy")


# --------------------------------------------------------- finding 2: unpack ---

def test_unpack_huge_range_is_an_error(r):
    msg = eval_err(r, "return unpack({}, -2147483648, 2147483647)")
    assert "too many results to unpack" in msg
    assert "too many results to unpack" in eval_err(r, "return unpack({}, 1, 2147483647)")
    assert "too many results to unpack" in eval_err(r, "return unpack({}, -2147483648, -1)")
    assert r.ping() is True
    assert r.eval("return unpack({1, 2, 3})", 0) == 1
    assert r.eval("return {unpack({1, 2, 3})}", 0) == [1, 2, 3]
    assert r.eval("return {unpack({1, 2, 3}, 2)}", 0) == [2, 3]
    assert r.eval("return {unpack({1, 2, 3}, 2, 3)}", 0) == [2, 3]
    assert r.eval("return select('#', unpack({}, 3, 2))", 0) == 0
    assert r.eval("return select('#', unpack({}, 1, 5))", 0) == 5


# --------------------------------------------- finding 3: getfenv / setfenv ---

def test_getfenv_setfenv_are_absent(server, r):
    for name in ("getfenv", "setfenv"):
        msg = eval_err(r, "return %s" % name)
        assert "Script attempted to access nonexistent global variable '%s'" % name in msg
    assert "nonexistent global variable 'setfenv'" in eval_err(
        r, "setfenv(0, setmetatable({}, {__index = _G}))")
    assert "nonexistent global variable 'setfenv'" in eval_err(
        r, "return coroutine.wrap(function() setfenv(0, {}) end)()")
    # Later scripts from another client run in the normal environment.
    other = server.client(decode_responses=True)
    assert other.eval("return type(redis.call)", 0) == "function"
    assert other.eval("return string.upper('ok')", 0) == "OK"
    other.close()


def test_getfenv_setfenv_absent_in_functions(r):
    code = ("#!lua name=fenvlib\n"
            "redis.register_function('fenv', function() return type(rawget(_G, 'setfenv')) .. type(rawget(_G, 'getfenv')) end)\n"
            "redis.register_function('setenv', function() setfenv(0, {}) end)\n")
    r.function_load(code, replace=True)
    assert r.fcall("fenv", 0) == "nilnil"
    assert "nonexistent global variable 'setfenv'" in err(r, "fcall", "setenv", 0)
    assert r.fcall("fenv", 0) == "nilnil"
    # At load time too.
    assert "nonexistent global variable 'setfenv'" in err(
        r, "function", "load", "replace", "#!lua name=fenv2\nsetfenv(0, {})\n")
    r.function_delete("fenvlib")


# ------------------------------------------- finding 4: the string metatable ---

def test_string_metatable_is_read_only(server, r):
    assert RO in eval_err(r, "getmetatable('').__index.upper = function() return 'PWNED' end")
    assert RO in eval_err(r, "getmetatable('').__index = {upper = function() return 'PWNED' end}")
    assert RO in eval_err(r, "rawset(getmetatable(''), '__index', {})")
    assert RO in eval_err(r, "rawset(getmetatable('').__index, 'upper', tostring)")
    assert RO in eval_err(r, "setmetatable(getmetatable(''), {})")
    assert RO in eval_err(r, "getmetatable('').__newindex = function() end")
    # getmetatable('') still answers, and its __index is the string table.
    assert r.eval("return tostring(getmetatable('').__index == string)", 0) == "true"
    other = server.client(decode_responses=True)
    assert other.eval("return string.upper('a') .. ('b'):upper()", 0) == "AB"
    other.close()


# ------------------------------------- read-only globals and library tables ---

@pytest.mark.parametrize("snippet", [
    "string.upper = function() return 'PWNED' end",
    "table.insert = nil",
    "math.floor = nil",
    "coroutine.wrap = nil",
    "redis.call = function() end",
    "cjson.encode = nil",
    "cmsgpack.pack = nil",
    "struct.pack = nil",
    "bit.band = nil",
    "_G.x = 1",
    "_G._G = {}",
    "rawset(_G, 'string', {})",
    "rawset(string, 'upper', nil)",
    "rawset(redis, 'call', nil)",
    "setmetatable(_G, nil)",
    "setmetatable(string, {})",
    "getmetatable(_G).__index = {}",
    "getmetatable(string).__index = {}",
    "local _, g = pairs(_G); g.string = {}",
    "local _, t = pairs(string); t.upper = nil",
    "local _, t = pairs(redis); t.call = nil",
    "return coroutine.wrap(function() string.upper = nil end)()",
    "local co = coroutine.create(function() rawset(_G, 'x', 1) end) "
    "local ok, e = coroutine.resume(co) error(e)",
])
def test_library_tables_are_read_only(server, r, snippet):
    assert RO in eval_err(r, snippet)
    other = server.client(decode_responses=True)
    assert other.eval("return {string.upper('a'), type(table.insert), type(redis.call), type(_G.string), "
                      "type(cjson.encode), type(math.floor), type(coroutine.wrap), tostring(rawget(_G, 'x'))}",
                      0) == ["A", "function", "function", "table", "function", "function", "function", "nil"]
    other.close()


def test_no_metatables_on_shared_values(r):
    # Numbers, booleans, nil, functions and threads share one metatable per
    # type: only debug.setmetatable could set it, and debug is gone.
    for v in ("1", "true", "nil", "tostring", "coroutine.create(function() end)"):
        assert "bad argument #1 to 'setmetatable' (table expected" in eval_err(
            r, "setmetatable(%s, {__index = function() return 'PWNED' end})" % v)
        assert "bad argument #1 to 'rawset' (table expected" in eval_err(r, "rawset(%s, 'x', 1)" % v)
        assert r.eval("return tostring(getmetatable(%s))" % v, 0) == "nil"


def test_loaded_chunks_share_the_read_only_environment(server, r):
    assert RO in eval_err(r, "loadstring('string = nil')()")
    assert RO in eval_err(r, "loadstring('newglobal = 1')()")
    assert RO in eval_err(r, "local f = load(function() return nil end) rawset(_G, 'f', f)")
    assert r.eval("return tostring(loadstring('return _G')() == _G)", 0) == "true"
    other = server.client(decode_responses=True)
    assert other.eval("return type(string)", 0) == "table"
    other.close()


def test_missing_global_error(r):
    assert "Script attempted to access nonexistent global variable 'no_such_thing'" in eval_err(
        r, "return no_such_thing")


def test_globals_match_redis_allowed_set(r):
    absent = ["getfenv", "setfenv", "loadfile", "dofile", "print", "require", "module", "package", "os",
              "io", "debug", "newproxy"]
    got = r.eval("local out = {} for i, n in ipairs(ARGV) do out[i] = type(rawget(_G, n)) end return out",
                 0, *absent)
    assert got == ["nil"] * len(absent)
    present = ["gcinfo", "collectgarbage", "loadstring", "unpack", "select", "pcall", "xpcall", "error",
               "tostring", "tonumber", "rawget", "rawset", "rawequal", "setmetatable", "getmetatable",
               "next", "pairs", "ipairs", "type", "assert"]
    got = r.eval("local out = {} for i, n in ipairs(ARGV) do out[i] = type(rawget(_G, n)) end return out",
                 0, *present)
    assert got == ["function"] * len(present)


def test_collectgarbage_settings_do_not_outlive_the_script(r):
    assert r.eval("collectgarbage('setpause', 1000) collectgarbage('setstepmul', 1000) "
                  "collectgarbage('stop') return 1", 0) == 1
    # The previous values, as the next script sees them: the defaults again.
    assert r.eval("return {collectgarbage('setpause', 200), collectgarbage('setstepmul', 200)}", 0) == [200, 200]


def test_binary_chunks_refused(r):
    assert r.eval("local f, e = loadstring(string.dump(function() return 1 end)) return {type(f), e}",
                  0) == ["nil", "binary chunks are not allowed"]
    assert r.eval("local s = string.dump(function() return 1 end) local done "
                  "local f, e = load(function() if done then return nil end done = true return s end) "
                  "return {type(f), e}", 0) == ["nil", "binary chunks are not allowed"]
    assert r.eval("return loadstring('return 1 + 1')()", 0) == 2


def test_cjson_settings_and_shared_tables_do_not_leak(server, r):
    assert r.eval("cjson.encode_max_depth(1) cjson.decode_max_depth(1) cjson.encode_number_precision(1) "
                  "return cjson.encode_max_depth()", 0) == 1
    other = server.client(decode_responses=True)
    assert other.eval("return cjson.encode({{1.25}})", 0) == "[[1.25]]"
    assert other.eval("return cjson.decode('[[7]]')[1][1]", 0) == 7
    for snippet in ("cjson.array_mt.x = 1", "cjson.empty_array_mt.__index = {}",
                    "rawset(cjson.array_mt, '__index', {})", "setmetatable(cjson.array_mt, {})",
                    "getmetatable(cjson.array_mt).__newindex = nil"):
        assert RO in eval_err(r, snippet)
    assert other.eval("return cjson.encode(setmetatable({}, cjson.array_mt)) .. "
                      "cjson.encode(setmetatable({}, cjson.empty_array_mt))", 0) == "[][]"
    assert other.eval("local n = 0 for k in pairs(cjson.array_mt) do n = n + 1 end return n", 0) == 0
    other.close()


def test_encoders_bounded(small_bulk, r):
    b = small_bulk
    # A table graph sharing its subtables: 2^30 leaves.
    msg = eval_err(b, "local t = {1, 2, 3} for i = 1, 30 do t = {t, t} end return cjson.encode(t)")
    assert "output larger than proto-max-bulk-len" in msg
    msg = eval_err(b, "local t = {1, 2, 3} for i = 1, 15 do t = {t, t, t, t} end return cmsgpack.pack(t)")
    assert "cmsgpack: output too large" in msg
    assert r.eval("local t = {1, 2} for i = 1, 3 do t = {t, t} end return cjson.encode(t)", 0) == \
        "[[[[1,2],[1,2]],[[1,2],[1,2]]],[[[1,2],[1,2]],[[1,2],[1,2]]]]"


# ------------------------------------------ unsafe stock library functions ---

def test_string_rep_bounded(r):
    assert "resulting string too large" in eval_err(r, "return string.rep('x', 2147483647)")
    assert "resulting string too large" in eval_err(r, "return ('abc'):rep(1e9)")
    assert r.eval("return ('ab'):rep(3)", 0) == "ababab"
    assert r.eval("return ('ab'):rep(0) .. ('ab'):rep(-5) .. (''):rep(1e9)", 0) == ""
    assert r.eval("return #('x'):rep(100000)", 0) == 100000


def test_table_concat_and_gsub_bounded(small_bulk, r):
    b = small_bulk
    msg = eval_err(b, "local t = {} for i = 1, 100 do t[i] = 'x' end return table.concat(t, ('y'):rep(20000))")
    assert "resulting string too large" in msg
    assert "resulting string too large" in eval_err(b, "return ('x'):rep(2000):gsub('', ('y'):rep(1000))")
    assert "resulting string too large" in eval_err(b, "return ('x'):rep(2 * 1024 * 1024)")
    assert b.eval("return #('x'):rep(1024 * 1024)", 0) == 1024 * 1024
    assert r.eval("return table.concat({1, 'a', 2.5}, ',')", 0) == "1,a,2.5"
    assert r.eval("return table.concat({'a', 'b', 'c'}, '-', 2, 3)", 0) == "b-c"
    assert r.eval("return table.concat({}, 'x', 5, 1)", 0) == ""
    assert "invalid value (at index 2) in table for 'concat'" in eval_err(r, "return table.concat({1, {}, 3})")
    assert "invalid value (at index -2147483648) in table for 'concat'" in eval_err(
        r, "return table.concat({}, ',', -2147483648, 2147483647)")


def test_single_huge_allocation_is_an_error(small_bulk):
    # One concatenation of 70 MB with proto-max-bulk-len at 1 MB: past the
    # VM allocator's per-block bound (proto-max-bulk-len + 64 MB).
    b = small_bulk
    expr = " .. ".join(["s"] * 70)
    msg = eval_err(b, "local s = ('x'):rep(1024 * 1024) return #(%s)" % expr)
    assert "not enough memory" in msg
    assert b.eval("local s = ('x'):rep(1024 * 1024) return #(%s)" % " .. ".join(["s"] * 20), 0) == 20 * 1024 * 1024
    # Caught by pcall like any error; the VM stays usable.
    assert b.eval("local s = ('x'):rep(1024 * 1024) local ok, e = pcall(function() return %s end) "
                  "return {tostring(ok), e}" % expr, 0) == ["false", "not enough memory"]
    assert b.eval("return #('x'):rep(1000)", 0) == 1000


def test_misc_stock_edge_cases(r):
    assert "invalid format (width or precision too long)" in eval_err(r, "return string.format('%0999d', 1)")
    assert "invalid format (width or precision too long)" in eval_err(r, "return string.format('%.999f', 1)")
    assert "bad argument #1 to 'select' (index out of range)" in eval_err(r, "return select(-2147483648, 1)")
    assert r.eval("return {string.byte('abc', -2147483648, 2147483647)}", 0) == [97, 98, 99]
    assert "wrong number of arguments to 'insert'" in eval_err(r, "table.insert({}, 1, 2, 3)")
    assert r.eval("local t = {1, 2, 3} table.insert(t, 1, 0) table.insert(t, 9) return t", 0) == [0, 1, 2, 3, 9]
    assert r.eval("local t = {1, 2, 3} table.insert(t, 10, 'x') return {#t >= 3, t[10]}", 0) == [1, "x"]
    assert r.eval("return {table.remove({}) == nil, table.remove({1, 2}, 5) == nil, table.remove({1, 2})}",
                  0) == [1, 1, 2]
    assert r.eval("local t = {1, 2, 3} return {table.remove(t, 1), t[1], t[2], t[3]}", 0) == [1, 2, 3]


def test_pattern_functions_still_work(r):
    assert r.eval("return {string.find('hello world', 'o w')}", 0) == [5, 7]
    assert r.eval("return {string.find('a.b', '.', 1, true)}", 0) == [2, 2]
    assert r.eval("return {string.match('key = val', '(%w+)%s*=%s*(%w+)')}", 0) == ["key", "val"]
    assert r.eval("return (string.gsub('hello world', '(o)', '[%1]'))", 0) == "hell[o] w[o]rld"
    assert r.eval("local t = {} for w in string.gmatch('one two three', '%a+') do t[#t + 1] = w end return t",
                  0) == ["one", "two", "three"]
    assert r.eval("return (('x = 1'):gsub('%w+', {x = 'y'}))", 0) == "y = 1"
    assert r.eval("return (('abc'):gsub('%w', function(c) return c:upper() .. '.' end))", 0) == "A.B.C."
    assert "invalid capture index" in eval_err(r, "return string.find('a', '%1')")
    assert "malformed pattern (ends with '%')" in eval_err(r, "return string.find('a', 'a%')")
    assert "malformed pattern (missing ']')" in eval_err(r, "return string.find('a', '[a')")
    assert "unbalanced pattern" in eval_err(r, "return string.find('a', '%b')")
    assert "missing '[' after '%f' in pattern" in eval_err(r, "return string.find('a', '%fa')")
    assert "invalid pattern capture" in eval_err(r, "return string.match('a', 'a)')")
    assert "unfinished capture" in eval_err(r, "return string.match('a', '(a')")
    assert "invalid replacement value (a table)" in eval_err(r, "return string.gsub('a', 'a', {a = {}})")


# ------------------------------------ finding 9: long matches are killable ---

def test_deep_pattern_is_an_error(r):
    # The finding's pattern: 5000 nested optional items.  Stock Lua recurses
    # once per item (in C); HotKV bounds the depth.
    msg = eval_err(r, "return string.find(('a'):rep(5000), ('a?'):rep(5000) .. ('a'):rep(5000))")
    assert "pattern too complex" in msg
    assert r.ping() is True


@pytest.fixture(scope="module")
def busy_server():
    s = Server("--busy-reply-threshold", 100, threads=2)
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def busy_server1():
    s = Server("--busy-reply-threshold", 100, threads=1)
    yield s
    assert s.stop() == 0


SLOW_SCRIPTS = [
    CATASTROPHIC,
    "return string.match(('a'):rep(5000), ('.-'):rep(10) .. 'b')",
    "return string.gsub(('a'):rep(5000), ('.-'):rep(10) .. 'b', 'x')",
    "for x in string.gmatch(('a'):rep(5000), ('.-'):rep(10) .. 'b') do end",
    "return string.find(('('):rep(300000), '%b()')",
    "local t = {} table.insert(t, -2147483647, 1)",
    "local t = {1, 2, 3, 4, 5, 6, 7, 8} for i = 1, 30 do t = {t, t} end return #cjson.encode(t)",
    "local t = {1, 2, 3, 4, 5, 6, 7, 8} for i = 1, 15 do t = {t, t, t, t} end return #cmsgpack.pack(t)",
    # Not a C call: each fresh coroutine swallows the kill error; the main
    # thread must stop at its next line, not ~10^9 instructions later.
    "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
]


@pytest.mark.parametrize("threads,script", [(2, x) for x in SLOW_SCRIPTS] + [(1, SLOW_SCRIPTS[0]),
                                                                           (1, SLOW_SCRIPTS[-1])])
def test_script_kill_stops_long_call(request, threads, script):
    s = request.getfixturevalue("busy_server" if threads == 2 else "busy_server1")
    runner = s.client(decode_responses=True)
    t, res = _bg(lambda: runner.eval(script, 0))
    c = s.client(decode_responses=True)
    start = time.time()
    # Busy: other commands get BUSY (from the same worker with --threads 1).
    deadline = time.time() + 5
    while True:
        try:
            c.get("x")
        except redis.ResponseError as e:
            assert str(e).startswith("BUSY Redis is busy running a script")
            break
        assert time.time() < deadline, "script never became busy"
        time.sleep(0.02)
    assert c.script_kill() is True
    t.join(5)
    assert not t.is_alive()
    assert KILLED in str(res.get("e"))
    assert time.time() - start < 5
    assert c.ping() is True
    assert c.eval("return string.upper('a')", 0) == "A"
    runner.close()
    c.close()


def test_function_kill_stops_long_match(busy_server):
    s = busy_server
    c = s.client(decode_responses=True)
    c.function_load("#!lua name=slowlib\nredis.register_function{function_name='slowmatch', "
                    "callback=function() return string.find(('a'):rep(60), ('a?'):rep(60) .. ('a'):rep(60)) end, "
                    "flags={'no-writes'}}\n", replace=True)
    runner = s.client(decode_responses=True)
    t, res = _bg(lambda: runner.fcall("slowmatch", 0))
    assert _kill_when_busy(c, ("function", "kill")) in (True, "OK", b"OK")
    t.join(5)
    assert not t.is_alive()
    assert KILLED in str(res.get("e"))
    assert c.ping() is True
    c.function_delete("slowlib")
    runner.close()
    c.close()


def test_function_load_long_match_times_out(r):
    # FUNCTION LOAD's own time limit reaches into the match as well.
    start = time.time()
    msg = err(r, "function", "load", "replace",
              "#!lua name=slowload\nlocal x = ('a'):rep(60):find(('a?'):rep(60) .. ('a'):rep(60))\n")
    assert "FUNCTION LOAD timeout" in msg
    assert time.time() - start < 5


def test_sigterm_stops_server_during_long_match():
    s = Server("--busy-reply-threshold", 100, threads=1)
    try:
        runner = s.client(decode_responses=True)
        t, res = _bg(lambda: runner.eval(CATASTROPHIC, 0))
        c = s.client(decode_responses=True)
        deadline = time.time() + 5
        while True:
            try:
                c.ping()
            except redis.ResponseError as e:
                assert str(e).startswith("BUSY")
                break
            assert time.time() < deadline
            time.sleep(0.02)
        s.proc.terminate()
        assert s.proc.wait(5) == 0
        t.join(5)
        assert not t.is_alive()
    finally:
        s.stop()


def test_shutdown_nosave_during_long_match():
    s = Server("--busy-reply-threshold", 100, threads=1)
    try:
        runner = s.client(decode_responses=True)
        t, res = _bg(lambda: runner.eval(CATASTROPHIC, 0))
        c = s.client(decode_responses=True)
        time.sleep(0.3)
        try:
            c.execute_command("shutdown", "nosave")
        except redis.ConnectionError:
            pass
        s.proc.wait(5)
        t.join(5)
        assert not t.is_alive()
    finally:
        s.stop()
