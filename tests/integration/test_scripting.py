"""Lua scripting: EVAL / EVALSHA / EVAL_RO / EVALSHA_RO, SCRIPT *, the redis.*
API, the Lua <-> RESP2/RESP3 conversions, the sandbox, script flags, busy
scripts with SCRIPT KILL, and atomicity against writers on other threads.

Every expectation is Redis 7's behaviour: the module passes against
Debian's redis-server 7.0.15 (HOTKV_SERVER=redis) except the tests marked
needs_72 (HotKV reports itself as 7.2.4)."""
import math
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, Resp, Server, time_at_once

needs_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2+ behaviour (reference server is 7.0)")


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def sha1(text):
    import hashlib
    return hashlib.sha1(text.encode()).hexdigest()


# ------------------------------------------------------------ conversions ---

def test_lua_to_resp2_basic_types(r):
    assert r.eval("return 'hello'", 0) == "hello"
    assert r.eval("return 100.5", 0) == 100          # numbers truncate to integers
    assert r.eval("return -3.99", 0) == -3
    assert r.eval("return true", 0) == 1
    assert r.eval("return false", 0) is None
    assert r.eval("return nil", 0) is None
    assert r.eval("return {1,2,3,'ciao',{1,2}}", 0) == [1, 2, 3, "ciao", [1, 2]]
    assert r.eval("return {1,2,nil,4}", 0) == [1, 2]  # arrays stop at the first nil
    assert r.eval("return {ok='fine'}", 0) == "fine"
    assert r.eval("return redis.status_reply('STATUS')", 0) == "STATUS"
    assert r.eval("return {false, true}", 0) == [None, 1]


def test_lua_error_table_replies(r):
    assert err(r, "eval", "return {err='My Error'}", 0) == "My Error"
    assert err(r, "eval", "return redis.error_reply('My Error')", 0) == "My Error"
    assert err(r, "eval", "return redis.error_reply('-XY zz')", 0) == "XY zz"
    # Redis error codes survive inside a returned table
    out = r.eval("return {1, redis.pcall('nosuchcommand')}", 0)
    assert out[0] == 1 and isinstance(out[1], redis.ResponseError)


def test_redis_to_lua_conversions(r):
    r.set("s", "v")
    r.rpush("l", "a", "b")
    assert r.eval("return redis.call('get', 's')", 0) == "v"
    assert r.eval("return type(redis.call('get', 'nokey'))", 0) == "boolean"   # nil bulk -> false
    assert r.eval("return redis.call('lrange', 'l', 0, -1)", 0) == ["a", "b"]
    assert r.eval("return redis.call('incr', 'n')", 0) == 1
    assert r.eval("return type(redis.call('incr', 'n'))", 0) == "number"
    assert r.eval("return redis.call('ping')['ok']", 0) == "PONG"           # status -> {ok=}
    assert r.eval("return redis.pcall('incr', 's')['err']", 0) == "ERR value is not an integer or out of range"
    # numbers are sent as %.17g
    assert r.eval("return redis.call('echo', 0.1)", 0) == "0.10000000000000001"
    assert r.eval("return redis.call('echo', 12.5)", 0) == "12.5"
    assert r.eval("return redis.call('echo', 100000000000000000)", 0) == "1e+17"


def test_resp3_from_commands_with_setresp(r):
    r.hset("h", "f", "v")
    r.zadd("z", {"m": 1.5})
    # RESP3 map / set / double / null as Lua tables
    assert r.eval("redis.setresp(3); return redis.call('hgetall', 'h')['map']['f']", 0) == "v"
    r.sadd("set", "x")
    assert r.eval("redis.setresp(3); return redis.call('smembers', 'set')['set']['x']", 0) == 1
    assert r.eval("redis.setresp(3); return tostring(redis.call('zscore', 'z', 'm')['double'])", 0) == "1.5"
    assert r.eval("redis.setresp(3); return redis.call('get', 'nokey') == nil", 0) == 1
    # In RESP2 (the default) the same replies are flat
    assert r.eval("return redis.call('hgetall', 'h')", 0) == ["f", "v"]
    assert "RESP version must be 2 or 3." in err(r, "eval", "redis.setresp(4)", 0)


def test_lua_to_resp3_reply_types(server):
    c = Resp(server.port)
    c.call("HELLO", "3")
    assert c.call("EVAL", "redis.setresp(3); return {map={a=1}}", 0) == {b"a": 1}
    assert c.call("EVAL", "redis.setresp(3); return {set={a=true}}", 0) == {b"a"}
    assert c.call("EVAL", "redis.setresp(3); return {double=3.5}", 0) == 3.5
    assert c.call("EVAL", "redis.setresp(3); return {big_number='123456789012345678901'}", 0) == \
        123456789012345678901
    assert c.call("EVAL", "redis.setresp(3); return {verbatim_string={format='txt', string='hi'}}", 0) == \
        ("verbatim", "txt", b"hi")
    assert c.call("EVAL", "redis.setresp(3); return true", 0) is True
    assert c.call("EVAL", "redis.setresp(3); return false", 0) is False
    # booleans follow the script's protocol: RESP2 script, RESP3 client
    assert c.call("EVAL", "return true", 0) == 1
    assert c.call("EVAL", "return false", 0) is None
    c.close()
    c = Resp(server.port)   # RESP2 client: maps flatten, doubles become bulk
    assert c.call("EVAL", "redis.setresp(3); return {map={a=1}}", 0) == [b"a", 1]
    assert c.call("EVAL", "redis.setresp(3); return {double=3.5}", 0) == b"3.5"
    assert c.call("EVAL", "redis.setresp(3); return true", 0) == 1
    c.close()


def test_status_and_error_text_newlines_mapped(r):
    assert r.eval("return {ok='a\\r\\nb'}", 0) == "a  b"
    assert err(r, "eval", "return {err='a\\r\\nb'}", 0) == "a  b"


# ----------------------------------------------------------------- errors ---

def test_runtime_error_format(r):
    sha = sha1("return a")
    assert err(r, "eval", "return a", 0) == (
        "user_script:1: Script attempted to access nonexistent global variable 'a' "
        "script: %s, on @user_script:1." % sha)
    sha = sha1("error('boom')")
    assert err(r, "eval", "error('boom')", 0) == "user_script:1: boom script: %s, on @user_script:1." % sha
    sha = sha1("error({err='CUSTOM boom'})")
    e = r.execute_command
    with pytest.raises(redis.ResponseError) as ex:
        e("eval", "error({err='CUSTOM boom'})", 0)
    assert str(ex.value) == "CUSTOM boom script: %s, on @user_script:1." % sha


def test_redis_call_errors_raise_with_position(r):
    s = "\nreturn redis.call('nosuch')"
    assert err(r, "eval", s, 0) == "Unknown Redis command called from script script: %s, on @user_script:2." % sha1(s)
    s = "return redis.call('get')"
    assert err(r, "eval", s, 0) == ("Wrong number of args calling Redis command from script script: %s, "
                                    "on @user_script:1." % sha1(s))
    r.set("str", "x")
    s = "return redis.call('incr', 'str')"
    assert err(r, "eval", s, 0) == "value is not an integer or out of range script: %s, on @user_script:1." % sha1(s)
    s = "return redis.call('lpush', 'str', 'x')"
    with pytest.raises(redis.ResponseError) as ex:
        r.eval(s, 0)
    assert str(ex.value).startswith("WRONGTYPE Operation against a key holding the wrong kind of value script:")
    assert "Please specify at least one argument for this redis lib call" in err(r, "eval", "redis.call()", 0)
    assert "Lua redis lib command arguments must be strings or integers" in err(r, "eval", "redis.call('get', {})", 0)


def test_pcall_catches_redis_errors(r):
    assert r.eval("return redis.pcall('nosuch')['err']", 0) == "ERR Unknown Redis command called from script"
    # Lua's pcall returns the message of a Redis error table
    assert r.eval("local ok, e = pcall(function() redis.call('nosuch') end); return {tostring(ok), e}", 0) == \
        ["false", "ERR Unknown Redis command called from script"]
    assert r.eval("local ok, e = pcall(error, 'x'); return e", 0) == "x"


def test_compile_error(r):
    e = err(r, "eval", "return (", 0)
    assert e.startswith("Error compiling script (new function): user_script:1:")


def test_numkeys_errors(r):
    assert err(r, "eval", "return 1", "x") == "value is not an integer or out of range"
    assert err(r, "eval", "return 1", 3, "a") == "Number of keys can't be greater than number of args"
    assert err(r, "eval", "return 1", -1) == "Number of keys can't be negative"
    assert err(r, "eval", "return 1") == "wrong number of arguments for 'eval' command"


def test_keys_and_argv(r):
    assert r.eval("return {KEYS[1], KEYS[2], ARGV[1], #KEYS, #ARGV}", 2, "k1", "k2", "a1") == ["k1", "k2", "a1", 2, 1]
    assert r.eval("return #KEYS", 0) == 0


# ---------------------------------------------------------------- sandbox ---

@pytest.mark.parametrize("script", [
    "a = 10",
    "redis = function() return 1 end",
    "_G = {}",
    "redis.call = function() return 1 end",
    "string.len = nil",
    "local g = getmetatable(_G); g.__index = {}",
    "setmetatable(_G, {})",
    "rawset(_G, 'x', 1)",
])
def test_globals_and_libraries_are_readonly(r, script):
    assert "Attempt to modify a readonly table" in err(r, "eval", script, 0)


@pytest.mark.parametrize("name", ["os", "io", "print", "loadfile", "dofile", "debug", "require", "package"])
def test_unsafe_globals_absent(r, name):
    assert ("Script attempted to access nonexistent global variable '%s'" % name) in \
        err(r, "eval", "return type(%s)" % name, 0)


def test_available_libraries(r):
    out = r.eval("return {type(string.len), type(math.floor), type(table.insert), type(cjson), type(bit), "
                 "type(struct), type(cmsgpack), type(coroutine.create), type(loadstring), type(redis.sha1hex)}", 0)
    assert out == ["function", "function", "function", "table", "table", "table", "table", "function",
                   "function", "function"]


def test_binary_chunks_refused(r):
    assert "attempt to call a nil value" in err(r, "eval", "return loadstring(string.dump(function() return 1 end))()", 0)
    assert r.eval("return loadstring('return 7')()", 0) == 7


def test_globals_iteration_sees_through_protection(r):
    assert r.eval("return rawget(_G, 'redis') ~= nil", 0) == 1
    assert r.eval("return next(redis) ~= nil", 0) == 1
    assert r.eval("local n = 0 for k, v in pairs(_G) do n = n + 1 end return n > 10", 0) == 1


def test_math_random_is_redis_lrand48(server):
    """math.random follows Redis's deterministic lrand48 sequence: computed
    here from the generator's definition, against a fresh server."""
    s = Server(threads=2)
    try:
        c = s.client(decode_responses=True)
        got = c.eval("return {math.random(1000), math.random(1000), math.random(1000), tostring(math.random())}", 0)
        x = 0x1234ABCD330E
        vals = []
        for _ in range(4):
            x = (x * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
            vals.append(((x >> 17) % 2147483647) / 2147483647)
        assert got[:3] == [math.floor(v * 1000) + 1 for v in vals[:3]]
        assert got[3] == "%.14g" % vals[3]
        c.eval("math.randomseed(42)", 0)
        a = c.eval("return tostring(math.random())", 0)
        c.eval("math.randomseed(42)", 0)
        assert c.eval("return tostring(math.random())", 0) == a
        c.close()
    finally:
        s.stop()


def test_redis_api_helpers(r):
    assert r.eval("return redis.sha1hex('')", 0) == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert r.eval("return redis.sha1hex('Pizza & Mandolino')", 0) == "74822d82031af7493c20eefa13bd07ec4fada82f"
    assert r.eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}", 0) \
        == [0, 1, 2, 2, 3]
    assert r.eval("redis.set_repl(redis.REPL_ALL) return 1", 0) == 1
    assert "Invalid replication flags" in err(r, "eval", "redis.set_repl(99)", 0)
    assert r.eval("return redis.replicate_commands()", 0) == 1
    assert r.eval("return redis.breakpoint()", 0) is None
    assert r.eval("redis.debug('x') return 1", 0) == 1
    assert r.eval("redis.log(redis.LOG_NOTICE, 'hello from a script') return 1", 0) == 1
    assert "redis.log() requires two arguments or more." in err(r, "eval", "redis.log()", 0)
    assert "First argument must be a number (log level)." in err(r, "eval", "redis.log('x', 'y')", 0)
    assert "Invalid debug level." in err(r, "eval", "redis.log(99, 'y')", 0)
    assert r.eval("return redis.acl_check_cmd('get', 'x')", 0) == 1
    assert "Invalid command passed to redis.acl_check_cmd()" in err(r, "eval", "redis.acl_check_cmd('nosuch')", 0)
    assert "wrong number or type of arguments" in err(r, "eval", "return redis.error_reply(1)", 0)


def test_acl_check_cmd_answers_for_the_callers_user(r):
    # The script's caller's user decides, commands and keys both; nothing
    # goes to the ACL log.
    name = "acl_check_cmd_user"
    r.acl_setuser(name, enabled=True, passwords=["+pw"], commands=["+@scripting", "+set"], keys=["x*"])
    try:
        u = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                        port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
        u.auth("pw", name)
        r.acl_log_reset()
        assert u.eval("return redis.acl_check_cmd('set', 'xx', 1)", 1, "xx") == 1
        assert u.eval("return redis.acl_check_cmd('hset', 'xx', 'f', 1)", 1, "xx") is None
        assert u.eval("return redis.acl_check_cmd('set', 'yy', 1)", 0) is None
        assert u.eval("return redis.acl_check_cmd('config', 'get', 'x')", 0) is None
        assert "Invalid command passed to redis.acl_check_cmd()" in err(u, "eval", "redis.acl_check_cmd('nosuch')", 0)
        assert r.acl_log() == []
        # The default user (all permissions) gets true everywhere.
        assert r.eval("return redis.acl_check_cmd('hset', 'yy', 'f', 1)", 0) == 1
        u.close()
    finally:
        r.acl_deluser(name)


@needs_72
def test_redis_version_is_reported_version(r):
    info = r.info("server")
    assert r.eval("return redis.REDIS_VERSION", 0) == info["redis_version"] == "7.2.4"
    assert r.eval("return redis.REDIS_VERSION_NUM", 0) == 0x070204


# ------------------------------------------------------------ script gates ---

@pytest.mark.parametrize("cmd", ["eval','return 1','0", "multi", "subscribe','x", "client','id",
                                 "script','load','return 1", "function','list",
                                 "config','get','maxmemory"])
def test_noscript_commands_refused(r, cmd):
    assert "This Redis command is not allowed from script" in err(r, "eval", "return redis.call('%s')" % cmd, 0)


def test_container_subcommands_from_script(r):
    r.set("k", "v")
    assert r.eval("return redis.call('object', 'encoding', 'k')", 0) == "embstr"
    assert "Unknown Redis command called from script" in err(r, "eval", "redis.call('object', 'nosuch', 'x')", 0)
    assert "Wrong number of args calling Redis command from script" in err(r, "eval", "redis.call('client')", 0)


def test_eval_ro_refuses_writes(r):
    r.set("k", "v")
    assert r.execute_command("eval_ro", "return redis.call('get', KEYS[1])", 1, "k") == "v"
    assert "Write commands are not allowed from read-only scripts." in \
        err(r, "eval_ro", "return redis.call('set', 'k', 'x')", 0)
    sha = r.script_load("return redis.call('del', 'k')")
    assert "Write commands are not allowed from read-only scripts." in err(r, "evalsha_ro", sha, 0)
    assert r.get("k") == "v"


def test_shebang_flags(r):
    r.set("k", "v")
    s = "#!lua flags=no-writes\nreturn redis.call('get', 'k')"
    assert r.eval(s, 0) == "v"
    assert r.execute_command("eval_ro", s, 0) == "v"
    assert "Write commands are not allowed from read-only scripts." in \
        err(r, "eval", "#!lua flags=no-writes\nreturn redis.call('set', 'k', 'x')", 0)
    assert err(r, "eval_ro", "#!lua\nreturn 1", 0) == "Can not execute a script with write flag using *_ro command."
    assert r.eval("#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", 0) == 1
    assert r.eval("#!lua\nreturn 2", 0) == 2
    assert err(r, "eval", "#!lua flags=bad\nreturn 1", 0) == "Unexpected flag in script shebang: bad"
    assert err(r, "eval", "#!foo\nreturn 1", 0) == "Unexpected engine in script shebang: #!foo"
    assert err(r, "eval", "#!lua name=x\nreturn 1", 0) == "Unknown lua shebang option: name=x"
    assert err(r, "eval", "#!lua", 0) == "Invalid script shebang"
    # the shebang keeps line numbers: the error is on line 2
    assert "@user_script:2." in err(r, "eval", "#!lua\nreturn a", 0)


def test_select_inside_script_does_not_leak(r):
    r.execute_command("select", 0)
    assert r.eval("redis.call('select', 5); return redis.call('set', 'selkey', '1')", 0) == "OK"
    assert r.get("selkey") is None
    r.execute_command("select", 5)
    assert r.get("selkey") == "1"
    # the script starts in the caller's db
    assert r.eval("return redis.call('get', 'selkey')", 0) == "1"
    r.delete("selkey")
    r.execute_command("select", 0)


def test_blocking_commands_do_not_block(r):
    r.delete("nolist")
    # BLMPOP/BZMPOP are not NOSCRIPT: inside a script they return at once
    assert r.eval("return redis.call('blmpop', 0, 1, 'nolist', 'left')", 0) is None
    r.rpush("nolist", "a")
    assert r.eval("return redis.call('blmpop', 0, 1, 'nolist', 'left')", 0) == ["nolist", ["a"]]


@needs_72
@pytest.mark.parametrize("call,keys", [
    ("'blpop', KEYS[1], 0", ["l"]), ("'brpop', KEYS[1], 0", ["l"]),
    ("'brpoplpush', KEYS[1], KEYS[2], 0", ["l{t}", "m{t}"]),
    ("'blmove', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 0", ["l{t}", "m{t}"]),
    ("'bzpopmin', KEYS[1], 0", ["z"]), ("'bzpopmax', KEYS[1], 0", ["z"])])
def test_blocking_commands_in_scripts_return_at_once(r, call, keys):
    """Redis 7.2 lets scripts call BLPOP and the rest (7.0 refused them):
    they never block, answering nil on empty input, and serve as usual."""
    script = "return redis.call(%s)" % call
    assert r.eval(script, len(keys), *keys) is None
    if keys[0].startswith("z"):
        r.zadd(keys[0], {"m": 1})
        assert r.eval(script, len(keys), *keys) == [keys[0], "m", "1"]
    else:
        r.rpush(keys[0], "a")
        got = r.eval(script, len(keys), *keys)
        assert got == "a" or got == [keys[0], "a"]


def test_undeclared_keys_work(r):
    r.set("a", "1")
    assert r.eval("redis.call('set', 'b', redis.call('get', 'a') .. 'x'); return redis.call('get', 'b')", 0) == "1x"
    assert r.eval("return redis.call('mget', 'a', 'b', 'zz')", 0) == ["1", "1x", None]
    assert sorted(r.eval("return redis.call('keys', '*')", 0)) == ["a", "b"]
    assert r.eval("return redis.call('dbsize')", 0) == 2


def test_eval_inside_multi(r):
    p = r.pipeline(transaction=True)
    p.set("k", "1")
    p.eval("return redis.call('incr', KEYS[1])", 1, "k")
    p.get("k")
    assert p.execute() == [True, 2, "2"]


# ----------------------------------------------------------- script cache ---

def test_script_cache(r):
    r.script_flush()
    body = "return 'loaded'"
    sha = r.script_load(body)
    assert sha == sha1(body)
    assert r.evalsha(sha, 0) == "loaded"
    assert r.evalsha(sha.upper(), 0) == "loaded"
    assert r.script_exists(sha, "f" * 40) == [True, False]
    assert r.script_flush() is True
    assert r.script_exists(sha) == [False]
    assert err(r, "evalsha", sha, 0) == "No matching script. Please use EVAL."
    assert err(r, "evalsha", "abc", 0) == "No matching script. Please use EVAL."
    # EVAL caches the body too
    r.eval(body, 0)
    assert r.script_exists(sha) == [True]
    assert r.execute_command("script", "flush", "async")
    assert r.execute_command("script", "flush", "sync")
    assert err(r, "script", "flush", "foo") == "SCRIPT FLUSH only support SYNC|ASYNC option"
    assert "Error compiling script" in err(r, "script", "load", "return (")


def test_script_help_and_kill_notbusy(r):
    help_lines = r.execute_command("script", "help")
    assert any("LOAD <script>" in line for line in help_lines)
    assert err(r, "script", "kill") == "NOTBUSY No scripts in execution right now."
    assert err(r, "function", "kill") == "NOTBUSY No scripts in execution right now."


def test_info_memory_fields(r):
    r.script_flush()
    r.eval("return 1", 0)
    info = r.info("memory")
    for f in ("used_memory_lua", "used_memory_vm_eval", "used_memory_scripts_eval", "used_memory_vm_functions",
              "used_memory_vm_total", "used_memory_scripts", "number_of_functions", "number_of_libraries"):
        assert f in info, f
    assert info["number_of_cached_scripts"] == 1
    assert info["used_memory_lua"] > 0


def test_script_scripts_survive_many_calls(r):
    sha = r.script_load("return redis.call('incr', KEYS[1])")
    for _ in range(200):
        r.evalsha(sha, 1, "cnt")
    assert r.get("cnt") == "200"


# ------------------------------------------------------------ busy scripts ---

def _bg(fn):
    res = {}

    def run():
        try:
            res["r"] = fn()
        except Exception as e:  # noqa: BLE001
            res["e"] = e
    t = threading.Thread(target=run)
    t.start()
    return t, res


def _wait_busy(c, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            c.ping()
        except redis.ResponseError as e:
            if str(e).startswith("BUSY"):
                return str(e)
            raise
        time.sleep(0.02)
    raise AssertionError("script never became busy")


@pytest.fixture
def busy_server():
    s = Server("--busy-reply-threshold" if not IS_REDIS else "--lua-time-limit", 100, threads=2)
    # Long scripts wait with DEBUG SLEEP: TIME does not move inside a script.
    s.client().execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    yield s
    s.stop()


def test_busy_script_and_script_kill(busy_server):
    s = busy_server
    runner = s.client(decode_responses=True)
    t, res = _bg(lambda: runner.eval("local i = 0 while true do i = i + 1 end", 0))
    c = s.client(decode_responses=True)
    msg = _wait_busy(c)
    assert msg == "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    # a different thread's connection is refused too
    others = [s.client(decode_responses=True) for _ in range(4)]
    for o in others:
        with pytest.raises(redis.ResponseError) as e:
            o.get("x")
        assert str(e.value).startswith("BUSY")
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("function", "kill")
    assert str(e.value).startswith("BUSY")
    assert c.script_kill() is True
    t.join(5)
    assert "Script killed by user with SCRIPT KILL..." in str(res["e"])
    assert c.ping() is True
    for o in others + [c, runner]:
        o.close()


def test_busy_script_pcall_cannot_catch_kill(busy_server):
    s = busy_server
    runner = s.client(decode_responses=True)
    t, res = _bg(lambda: runner.eval(
        "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end", 0))
    c = s.client(decode_responses=True)
    _wait_busy(c)
    assert c.script_kill() is True
    t.join(5)
    assert not t.is_alive()
    assert "killed by user" in str(res["e"])
    runner.close()
    c.close()


def test_busy_script_after_write_is_unkillable(busy_server):
    s = busy_server
    runner = s.client(decode_responses=True)
    t, res = _bg(lambda: runner.eval(
        "redis.call('set', 'x', 'y') for i = 1, 150 do redis.call('debug', 'sleep', 0.01) "
        "local x = 0 for j = 1, 100000 do x = x + j end end "  # instructions: the busy check's hook
        "return 'done'", 0))
    c = s.client(decode_responses=True)
    _wait_busy(c)
    with pytest.raises(redis.ResponseError) as e:
        c.script_kill()
    assert str(e.value).startswith("UNKILLABLE Sorry the script already executed write commands")
    t.join(10)
    assert res.get("r") == "done"
    assert c.get("x") == "y"
    runner.close()
    c.close()


def test_busy_same_thread_clients_are_served(busy_server):
    """A client on the busy script's own worker gets BUSY (and can kill it):
    the worker serves its other connections while the script runs."""
    s = busy_server
    conns = [s.client(decode_responses=True) for _ in range(6)]
    for c in conns:
        c.ping()
    runner = conns[0]
    t, res = _bg(lambda: runner.eval("local i = 0 while true do i = i + 1 end", 0))
    time.sleep(0.3)
    answers = []
    for c in conns[1:]:
        try:
            c.ping()
            answers.append("PONG")
        except redis.ResponseError as e:
            answers.append(str(e)[:4])
    assert answers == ["BUSY"] * 5   # every connection answered, none hung
    assert conns[1].script_kill() is True
    t.join(5)
    assert "killed" in str(res["e"])
    for c in conns:
        c.close()


def test_busy_script_time_limit_config(r):
    old = r.config_get("lua-time-limit")["lua-time-limit"]
    assert r.config_get("busy-reply-threshold")["busy-reply-threshold"] == old
    r.config_set("lua-time-limit", 1234)
    assert r.config_get("busy-reply-threshold")["busy-reply-threshold"] == "1234"
    r.config_set("busy-reply-threshold", old)


# --------------------------------------------------------------- atomicity ---

@pytest.fixture(scope="module")
def threaded():
    s = Server(threads=4)
    s.client().execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    yield s
    s.stop()


def test_script_read_modify_write_is_atomic_against_incr(threaded):
    s = threaded
    setup = s.client(decode_responses=True)
    setup.delete("counter")
    script = "local v = tonumber(redis.call('get', KEYS[1]) or '0'); redis.call('set', KEYS[1], v + 1); return v + 1"
    sha = setup.script_load(script)
    N_SCRIPT, N_INCR, W = 300, 300, 4

    def script_worker():
        c = s.client()
        for _ in range(N_SCRIPT):
            c.evalsha(sha, 1, "counter")
        c.close()

    def incr_worker():
        c = s.client()
        for _ in range(N_INCR):
            c.incr("counter")
        c.close()

    ts = [threading.Thread(target=script_worker) for _ in range(W)] + \
         [threading.Thread(target=incr_worker) for _ in range(W)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert int(setup.get("counter")) == W * (N_SCRIPT + N_INCR)
    setup.close()


def test_script_with_undeclared_keys_is_atomic(threaded):
    """A script that names no keys still runs atomically against writers on
    other threads (it takes the slots it touches on the fly)."""
    s = threaded
    setup = s.client(decode_responses=True)
    setup.delete("u1", "u2")
    sha = setup.script_load(
        "local a = tonumber(redis.call('get', 'u1') or '0'); local b = tonumber(redis.call('get', 'u2') or '0'); "
        "redis.call('set', 'u1', a + 1); redis.call('set', 'u2', b + 1); return a - b")
    bad = []

    def script_worker():
        c = s.client()
        for _ in range(300):
            if c.evalsha(sha, 0) != 0:
                bad.append(1)
        c.close()

    def multi_worker():
        c = s.client()
        for _ in range(300):
            p = c.pipeline(transaction=True)
            p.incr("u1")
            p.incr("u2")
            p.execute()
        c.close()

    ts = [threading.Thread(target=script_worker) for _ in range(3)] + \
         [threading.Thread(target=multi_worker) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad
    assert setup.get("u1") == setup.get("u2") == str(1800)
    setup.close()


def test_declared_key_scripts_do_not_stop_other_keys(threaded):
    s = threaded
    c = s.client(decode_responses=True)
    runner = s.client(decode_responses=True)
    # a 300 ms script on one key; other keys keep being served meanwhile
    t, res = _bg(lambda: runner.eval(
        "for i = 1, 30 do redis.call('debug', 'sleep', 0.01) end return 1", 1, "slowkey"))
    # Connections land on workers by SO_REUSEPORT hashing: one may share the
    # script's worker (and wait for it, as every client does in Redis), so
    # time several connections at once: those on other workers must not
    # wait for the script.
    others = [s.client(decode_responses=True) for _ in range(8)]
    for o in others:
        o.ping()
    time.sleep(0.05)
    def probe(o, i):
        o.set("otherkey%d" % i, "v")
        assert o.get("otherkey%d" % i) == "v"

    took = time_at_once(others, probe)
    t.join(5)
    assert res.get("r") == 1
    assert len(took) == len(others)
    if not IS_REDIS:
        assert min(took) < 0.15
    for o in others:
        o.close()
    c.close()
    runner.close()
