"""Redis 7 functions: FUNCTION LOAD / LIST / DELETE / FLUSH / DUMP / RESTORE /
STATS / KILL / HELP, FCALL / FCALL_RO, redis.register_function (positional
and named forms, flags), the load-time sandbox, and DUMP payloads that move
between HotKV and redis-server 7.0 both ways."""
import os
import subprocess
import threading
import tempfile
import time

import pytest
import redis

from helpers import IS_REDIS, Server, free_port

LIB = "#!lua name=%s\n%s"


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


@pytest.fixture
def f(r):
    r.function_flush()
    yield r
    r.function_flush()


def load(r, name, body, replace=False):
    return r.function_load(LIB % (name, body), replace=replace)


def test_load_and_fcall(f):
    assert load(f, "lib1", "redis.register_function('set1', function(keys, args) "
                           "return redis.call('set', keys[1], args[1]) end)") == "lib1"
    assert f.fcall("set1", 1, "k", "v") == "OK"
    assert f.get("k") == "v"
    # KEYS/ARGV are the callback's arguments, not globals
    load(f, "lib2", "redis.register_function('kv', function(KEYS, ARGV) return {KEYS[1], ARGV[1], #KEYS} end)")
    assert f.fcall("kv", 1, "a", "b") == ["a", "b", 1]
    load(f, "lib3", "redis.register_function('g', function() return KEYS end)")
    assert "nonexistent global variable 'KEYS'" in err(f, "fcall", "g", 0)


def test_fcall_errors(f):
    load(f, "lib", "redis.register_function('fn', function() return 1 end)")
    assert err(f, "fcall", "nosuch", 0) == "Function not found"
    assert err(f, "fcall", "fn", "x") == "Bad number of keys provided"
    assert err(f, "fcall", "fn", 2, "a") == "Number of keys can't be greater than number of args"
    assert err(f, "fcall", "fn", -1) == "Number of keys can't be negative"
    load(f, "t", "redis.register_function('t', function() return a end)")
    assert err(f, "fcall", "t", 0) == ("user_function:2: Script attempted to access nonexistent global variable 'a' "
                                       "script: t, on @user_function:2.")


def test_fcall_ro_and_flags(f):
    f.set("k", "v")
    load(f, "lib", "redis.register_function{function_name='ro', callback=function(keys) "
                   "return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}\n"
                   "redis.register_function('rw', function(keys) return redis.call('set', keys[1], 'x') end)\n"
                   "redis.register_function{function_name='bad', callback=function() "
                   "return redis.call('set', 'k', 'y') end, flags={'no-writes'}}")
    assert f.fcall_ro("ro", 1, "k") == "v"
    assert f.fcall("ro", 1, "k") == "v"
    assert err(f, "fcall_ro", "rw", 1, "k") == "Can not execute a script with write flag using *_ro command."
    assert "Write commands are not allowed from read-only scripts." in err(f, "fcall", "bad", 0)
    assert f.get("k") == "v"


def test_list(f):
    load(f, "liba", "redis.register_function{function_name='fa', callback=function() return 1 end, "
                    "flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}, "
                    "description='A'}")
    load(f, "libb", "redis.register_function('fb', function() return 1 end)")
    libs = f.execute_command("function", "list")
    byname = {}
    for lib in libs:
        d = dict(zip(lib[::2], lib[1::2]))
        byname[d["library_name"]] = d
    assert set(byname) == {"liba", "libb"}
    assert byname["liba"]["engine"] == "LUA"
    fa = dict(zip(byname["liba"]["functions"][0][::2], byname["liba"]["functions"][0][1::2]))
    assert fa["name"] == "fa" and fa["description"] == "A"
    assert sorted(fa["flags"]) == sorted(["no-writes", "allow-oom", "allow-stale", "no-cluster",
                                         "allow-cross-slot-keys"])
    fb = dict(zip(byname["libb"]["functions"][0][::2], byname["libb"]["functions"][0][1::2]))
    assert fb["description"] is None and fb["flags"] == []
    only = f.execute_command("function", "list", "libraryname", "LIBA", "withcode")
    assert len(only) == 1
    d = dict(zip(only[0][::2], only[0][1::2]))
    assert d["library_name"] == "liba" and d["library_code"].startswith("#!lua name=liba\n")
    assert f.execute_command("function", "list", "libraryname", "lib*") and \
        len(f.execute_command("function", "list", "libraryname", "lib*")) == 2
    assert err(f, "function", "list", "libraryname") == "library name argument was not given"
    assert err(f, "function", "list", "bad") == "Unknown argument bad"


def test_load_replace_delete_flush(f):
    load(f, "lib", "redis.register_function('f1', function() return 1 end)")
    assert err(f, "function", "load", LIB % ("lib", "redis.register_function('f1', function() return 2 end)")) == \
        "Library 'lib' already exists"
    load(f, "lib", "redis.register_function('f2', function() return 2 end)", replace=True)
    assert err(f, "fcall", "f1", 0) == "Function not found"
    assert f.fcall("f2", 0) == 2
    # a function name may not collide with another library's
    assert err(f, "function", "load", LIB % ("other", "redis.register_function('f2', function() end)")) == \
        "Function f2 already exists"
    assert f.execute_command("function", "delete", "lib") == "OK"
    assert err(f, "function", "delete", "lib") == "Library not found"
    load(f, "x", "redis.register_function('x', function() return 1 end)")
    assert f.execute_command("function", "flush", "sync") == "OK"
    assert f.execute_command("function", "list") == []
    assert err(f, "function", "flush", "bad") == "FUNCTION FLUSH only supports SYNC|ASYNC option"
    assert f.execute_command("function", "flush", "async") == "OK"


@pytest.mark.parametrize("code,msg", [
    ("return 1", "Missing library metadata"),
    ("#!lua", "Invalid library metadata"),
    ("#!lua name=x foo=bar\nreturn 1", "Invalid metadata value given: foo=bar"),
    ("#!lua name=x name=y\nreturn 1", "Invalid metadata value, name argument was given multiple times"),
    ("#!lua\nreturn 1", "Library name was not given"),
    ("#!lua name=x-y\nreturn 1", "Library names can only contain letters, numbers, or underscores(_) and must be "
                                 "at least one character long"),
    ("#!foo name=x\nreturn 1", "Engine 'foo' not found"),
    ("#!lua name=x\nreturn 1", "No functions registered"),
    ("#!lua name=x\nreturn (", None),
])
def test_load_metadata_errors(f, code, msg):
    e = err(f, "function", "load", code)
    if msg is None:
        assert e.startswith("Error compiling function: user_function:2:")
    else:
        assert e == msg


@pytest.mark.parametrize("body,msg", [
    ("redis.register_function('f-1', function() end)", "Library names can only contain letters"),
    ("redis.register_function('fx', 'notfn')", "second argument to redis.register_function must be a function"),
    ("redis.register_function(1)", "calling redis.register_function with a single argument is only applicable"),
    ("redis.register_function()", "wrong number of arguments to redis.register_function"),
    ("redis.register_function{function_name='fx'}", "redis.register_function must get a callback argument"),
    ("redis.register_function{callback=function() end}", "redis.register_function must get a function name"),
    ("redis.register_function{function_name='fx', callback=function() end, flags={'bad'}}", "unknown flag given"),
    ("redis.register_function{function_name='fx', callback=function() end, other=1}",
     "unknown argument given to redis.register_function"),
    ("redis.register_function('fx', function() end)\nredis.register_function('fx', function() end)",
     "Function already exists in the library"),
    ("redis.call('ping')", "attempted to access nonexistent global variable 'call'"),
    ("local a = string.len('x')", "attempted to access nonexistent global variable 'string'"),
    ("foo = 1", "Attempt to modify a readonly table"),
])
def test_register_function_errors(f, body, msg):
    e = err(f, "function", "load", LIB % ("x", body))
    assert e.startswith("Error registering functions: ")
    assert msg in e


def test_load_time_api(f):
    load(f, "x", "redis.log(redis.LOG_NOTICE, 'loading')\n"
                 "local v = redis.REDIS_VERSION_NUM\n"
                 "redis.register_function('fx', function() return v > 0 end)")
    assert f.fcall("fx", 0) == 1


def test_load_timeout(f):
    assert "FUNCTION LOAD timeout" in err(f, "function", "load", LIB % ("x", "local a = 1 while true do a = a + 1 end"))
    assert f.ping()


def test_function_vm_has_no_debug_helpers(f):
    load(f, "t", "redis.register_function('t', function() return type(redis.breakpoint) end)")
    assert f.fcall("t", 0) == "nil"


def test_load_arguments(f):
    assert err(f, "function", "load", "bad", "x") == "Unknown option given: bad"
    assert err(f, "function", "load") == "wrong number of arguments for 'function|load' command"


def test_dump_restore_policies(f):
    load(f, "la", "redis.register_function('fa', function() return 'a' end)")
    load(f, "lb", "redis.register_function('fb', function() return 'b' end)")
    payload = f.function_dump()
    f.function_flush()
    assert f.execute_command("function", "restore", payload) == "OK"
    assert f.fcall("fa", 0) == "a" and f.fcall("fb", 0) == "b"
    assert err(f, "function", "restore", payload) == "Library la already exists" or \
        err(f, "function", "restore", payload) == "Library lb already exists"
    assert f.execute_command("function", "restore", payload, "REPLACE") == "OK"
    f.function_flush()
    load(f, "other", "redis.register_function('fa', function() return 'other' end)")
    assert err(f, "function", "restore", payload) == "Function fa already exists"
    assert f.fcall("fa", 0) == "other"        # unchanged after the failed restore
    assert f.execute_command("function", "restore", payload, "FLUSH") == "OK"
    assert f.fcall("fa", 0) == "a"
    assert err(f, "function", "restore", payload, "bad") == \
        "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
    assert err(f, "function", "restore", payload[:-1] + bytes([payload[-1] ^ 1])) == \
        "DUMP payload version or checksum are wrong"
    assert err(f, "function", "restore", "short") == "DUMP payload version or checksum are wrong"


def test_dump_payload_format(server):
    """RDB opcode 245, the code as an RDB string, RDB version 10, CRC-64."""
    c = server.client()
    c.function_flush()
    code = b"#!lua name=z\nredis.register_function('z', function() return 1 end)"
    c.function_load(code)
    d = c.function_dump()
    assert d[0] == 245
    assert d[-10:-8] == bytes([10, 0])
    if not IS_REDIS:
        # HotKV writes the code uncompressed: opcode, 14-bit length, bytes
        assert len(code) < 16384 and d[1] == 0x40 | (len(code) >> 8) and d[2] == len(code) & 0xff
        assert d[3:3 + len(code)] == code
    c.function_flush()
    c.close()


@pytest.mark.skipif(not IS_REDIS and not os.path.exists("/usr/bin/redis-server"), reason="redis-server missing")
def test_dump_restore_with_real_redis(server):
    """Payloads move between this server and a real redis-server both ways
    (Redis compresses long code with LZF)."""
    ref = Server("--save", "", threads=1) if IS_REDIS else None
    port = None
    proc = None
    if ref is None:
        # The free port found here can be taken by another process before
        # redis-server binds it (it then exits): try again on a new one.
        for attempt in range(5):
            port = free_port()
            proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                     "--appendonly", "no", "--dir", tempfile.mkdtemp(prefix="redis-ref-")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 10
            while proc.poll() is None:
                try:
                    redis.Redis(host="127.0.0.1", port=port).ping()
                    break
                except redis.ConnectionError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.05)
            if proc.poll() is None:
                break
        real = redis.Redis(host="127.0.0.1", port=port)
    else:
        real = ref.client()
    try:
        ours = server.client()
        ours.function_flush()
        real.function_flush()
        long_code = "#!lua name=big\n" + "-- a comment long enough to make redis compress it\n" * 20 + \
            "redis.register_function('big', function(keys, args) return args[1] end)"
        real.function_load(long_code)
        real.function_load("#!lua name=small\nredis.register_function('s', function() return 5 end)")
        assert ours.execute_command("function", "restore", real.function_dump()) == b"OK"
        assert ours.fcall("big", 0, "hi") == b"hi" and ours.fcall("s", 0) == 5
        real.function_flush()
        assert real.execute_command("function", "restore", ours.function_dump()) == b"OK"
        assert real.fcall("big", 0, "back") == b"back"
        ours.function_flush()
        ours.close()
    finally:
        real.close()
        if proc:
            proc.terminate()
            proc.wait(10)
        if ref:
            ref.stop()


def test_stats_idle(f):
    load(f, "x", "redis.register_function('a', function() end)\nredis.register_function('b', function() end)")
    st = f.execute_command("function", "stats")
    d = dict(zip(st[::2], st[1::2]))
    assert d["running_script"] is None
    eng = dict(zip(d["engines"][::2], d["engines"][1::2]))
    assert dict(zip(eng["LUA"][::2], eng["LUA"][1::2])) == {"libraries_count": 1, "functions_count": 2}


def test_help(f):
    lines = f.execute_command("function", "help")
    assert any("RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]" in x for x in lines)


def test_info_counts(f):
    load(f, "x", "redis.register_function('a', function() end)\nredis.register_function('b', function() end)")
    info = f.info("memory")
    assert info["number_of_functions"] == 2 and info["number_of_libraries"] == 1
    assert info["used_memory_vm_functions"] > 0


@pytest.fixture
def busy_server():
    s = Server("--busy-reply-threshold" if not IS_REDIS else "--lua-time-limit", 100, threads=2)
    yield s
    s.stop()


def test_function_kill_and_stats_while_busy(busy_server):
    s = busy_server
    c = s.client(decode_responses=True)
    c.function_load(LIB % ("busy", "redis.register_function('busy', function() local a = 1 "
                                   "while true do a = a + 1 end end)"))
    runner = s.client(decode_responses=True)
    res = {}

    def run():
        try:
            res["r"] = runner.fcall("busy", 0)
        except Exception as e:  # noqa: BLE001
            res["e"] = e
    t = threading.Thread(target=run)
    t.start()
    deadline = time.time() + 5
    while True:
        try:
            c.ping()
        except redis.ResponseError as e:
            assert str(e) == "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
            break
        assert time.time() < deadline
        time.sleep(0.02)
    st = c.execute_command("function", "stats")
    d = dict(zip(st[::2], st[1::2]))
    rs = dict(zip(d["running_script"][::2], d["running_script"][1::2]))
    assert rs["name"] == "busy" and [x.lower() for x in rs["command"]] == ["fcall", "busy", "0"] and rs["duration_ms"] >= 0
    with pytest.raises(redis.ResponseError) as e:
        c.script_kill()
    assert str(e.value).startswith("BUSY")
    assert c.execute_command("function", "kill") == "OK"
    t.join(5)
    assert "killed by user" in str(res["e"])
    assert c.ping()
    c.close()
    runner.close()


def test_function_stats_during_eval_is_busy(busy_server):
    s = busy_server
    c = s.client(decode_responses=True)
    runner = s.client(decode_responses=True)
    t = threading.Thread(target=lambda: pytest.raises(redis.ResponseError, runner.eval,
                                                       "while true do end", 0))
    t.start()
    deadline = time.time() + 5
    while True:
        try:
            c.ping()
        except redis.ResponseError:
            break
        assert time.time() < deadline
        time.sleep(0.02)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("function", "stats")
    assert str(e.value) == "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    c.script_kill()
    t.join(5)
    c.close()
    runner.close()
