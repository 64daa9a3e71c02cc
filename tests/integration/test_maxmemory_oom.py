"""What happens over maxmemory, as Redis 7.0 does it: under noeviction a
DENYOOM command (SET, LPUSH, INCR, FUNCTION LOAD ...) gets the OOM error
while reads and writes that cannot grow memory (DEL, LPOP, EXPIRE) go on;
inside MULTI nothing is queued (the transaction is then aborted) but EXEC
and DISCARD still answer, and EXEC itself is refused when a queued command
is DENYOOM; scripts: EVAL without a shebang may not make a DENYOOM call
before it has written, a script with declared flags runs only with
allow-oom or no-writes (its flags count for EXEC too, as they were when
queued), FCALL likewise with the function's flags; and an evicted key
fires the "evicted" keyspace event and invalidates client-side caches
(before the reply of the command whose eviction freed it).

The server is put over its limit deterministically as Redis's own tests do:
write some data, then CONFIG SET maxmemory 1.  HOTKV_SERVER=redis runs the
same tests against redis-server."""
import hashlib
import time

import pytest

from helpers import Resp, Server, parse_info

OOM = "OOM command not allowed when used memory > 'maxmemory'."
OOM_SCRIPT = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    assert s.stop() == 0


@pytest.fixture
def c(server):
    """A RESP2 connection on a clean server (noeviction, no limit); the
    limit is lifted again after the test whatever happened."""
    x = Resp(server.port)
    admin = Resp(server.port)
    admin.call("CONFIG", "SET", "maxmemory", "0")
    admin.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    admin.call("CONFIG", "SET", "notify-keyspace-events", "")
    admin.call("FLUSHALL")
    admin.call("SCRIPT", "FLUSH")
    admin.call("FUNCTION", "FLUSH")
    yield x
    admin.call("CONFIG", "SET", "maxmemory", "0")
    admin.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    admin.call("CONFIG", "SET", "notify-keyspace-events", "")
    admin.close()
    x.close()


def other(server):
    return Resp(server.port)


def go_oom(server):
    """Another client sets the limit (as the Redis tests do with a second
    connection while the first is inside MULTI)."""
    o = other(server)
    assert o.call("CONFIG", "SET", "maxmemory", "1") == "OK"
    o.close()


def err(reply):
    assert isinstance(reply, tuple) and reply[0] == "error", reply
    return reply[1]


def is_oom(reply):
    return err(reply) == OOM


# ------------------------------------------------------------ commands --
def test_denyoom_writes_refused_reads_and_deletes_go_on(server, c):
    c.call("SET", "x", "value")
    c.call("RPUSH", "l", "a", "b")
    c.call("SET", "t", "1")
    go_oom(server)
    assert is_oom(c.call("SET", "y", "1"))
    assert is_oom(c.call("LPUSH", "l", "c"))
    assert is_oom(c.call("INCR", "n"))
    assert is_oom(c.call("APPEND", "x", "more"))
    assert is_oom(c.call("SADD", "s", "m"))
    # Reads, and writes that are not DENYOOM.
    assert c.call("GET", "x") == b"value"
    assert c.call("EXISTS", "x", "y") == 1
    assert c.call("LRANGE", "l", "0", "-1") == [b"a", b"b"]
    assert c.call("PING") == "PONG"
    assert c.call("LPOP", "l") == b"a"
    assert c.call("EXPIRE", "t", "100") == 1
    assert c.call("DEL", "x") == 1
    assert c.call("GET", "x") is None
    # The rejected commands changed nothing.
    assert c.call("EXISTS", "y", "n", "s") == 0
    assert c.call("CONFIG", "SET", "maxmemory", "0") == "OK"
    assert c.call("SET", "y", "1") == "OK"


def test_rejected_calls_counted(server, c):
    c.call("SET", "x", "1")
    c.call("CONFIG", "RESETSTAT")
    go_oom(server)
    assert is_oom(c.call("SET", "x", "2"))
    stats = parse_info(c.call("INFO", "commandstats"))[None]
    assert "rejected_calls=1" in str(stats["cmdstat_set"])
    assert "calls=0" in str(stats["cmdstat_set"])


def test_function_load_refused(server, c):
    c.call("SET", "x", "1")
    go_oom(server)
    code = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"
    assert is_oom(c.call("FUNCTION", "LOAD", code))
    # SCRIPT LOAD / FUNCTION DELETE / FLUSH are not DENYOOM.
    assert c.call("SCRIPT", "LOAD", "return 1") == hashlib.sha1(b"return 1").hexdigest().encode()
    assert c.call("FUNCTION", "FLUSH") == "OK"


# --------------------------------------------------------- MULTI/EXEC --
def test_multi_queueing_refused_and_discard_works(server, c):
    go_oom(server)
    assert c.call("MULTI") == "OK"
    # Anything queued is refused, reads included.
    assert is_oom(c.call("SET", "x", "1"))
    assert is_oom(c.call("GET", "x"))
    assert is_oom(c.call("PING"))
    assert c.call("DISCARD") == "OK"
    assert c.call("PING") == "PONG"


def test_multi_refused_queueing_aborts_exec(server, c):
    # Redis's "EXEC fails if there are errors while queueing commands #2".
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "foo1", "bar1") == "QUEUED"
    go_oom(server)
    assert is_oom(c.call("LPUSH", "mylist", "v"))
    other(server).call("CONFIG", "SET", "maxmemory", "0")
    assert c.call("SET", "foo2", "bar2") == "QUEUED"
    assert err(c.call("EXEC")).startswith("EXECABORT")
    assert c.call("EXISTS", "foo1", "foo2") == 0


def test_exec_of_reads_runs_over_the_limit(server, c):
    c.call("SET", "x", "value")
    assert c.call("MULTI") == "OK"
    assert c.call("GET", "x") == "QUEUED"
    assert c.call("PING") == "QUEUED"
    assert c.call("DEL", "gone") == "QUEUED"
    go_oom(server)
    assert c.call("EXEC") == [b"value", "PONG", 0]


def test_exec_with_a_denyoom_command_refused(server, c):
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "x", "1") == "QUEUED"
    assert c.call("GET", "x") == "QUEUED"
    go_oom(server)
    e = err(c.call("EXEC"))
    assert e == "EXECABORT Transaction discarded because of: " + OOM
    # The transaction is gone.
    assert err(c.call("EXEC")) == "ERR EXEC without MULTI"
    assert c.call("EXISTS", "x") == 0


def test_watch_unwatch_outside_multi(server, c):
    c.call("SET", "x", "1")
    go_oom(server)
    assert c.call("WATCH", "x") == "OK"
    assert c.call("UNWATCH") == "OK"
    assert c.call("MULTI") == "OK"
    assert c.call("EXEC") == []


# ------------------------------------------------------------ scripts --
def test_eval_without_shebang(server, c):
    c.call("SET", "x", "123")
    go_oom(server)
    # A DENYOOM call before any write fails ...
    e = err(c.call("EVAL", "redis.call('set','x',1) return 1", "1", "x"))
    assert e.startswith(OOM + " script: ")
    assert c.call("GET", "x") == b"123"
    # ... reads go on ...
    assert c.call("EVAL", "return redis.call('get','x')", "1", "x") == b"123"
    assert c.call("EVAL_RO", "return redis.call('get','x')", "1", "x") == b"123"
    # ... redis.pcall gets the error as a table, without the '-' ...
    assert c.call("EVAL", "return redis.pcall('set','x','y')['err']", "1", "x") == OOM.encode()
    assert is_oom(c.call("EVAL", "return redis.pcall('set','x','y')", "1", "x"))
    # ... and once the script has written (DEL: not DENYOOM) it may go on:
    # a script is never stopped half way through its writes.
    assert c.call("EVAL", "redis.call('del','nokey') return redis.call('set','x','2')", "1", "x") == "OK"
    assert c.call("GET", "x") == b"2"


def test_eval_shebang_flags(server, c):
    c.call("SET", "x", "123")
    go_oom(server)
    # Declared flags without allow-oom/no-writes: refused before it runs.
    assert is_oom(c.call("EVAL", "#!lua flags=\nreturn 1", "0"))
    assert is_oom(c.call("EVAL", "#!lua\nreturn 1", "0"))
    # ... EVAL_RO of a script that may write: the same OOM error first.
    assert is_oom(c.call("EVAL_RO", "#!lua\nreturn 1", "0"))
    # allow-oom writes despite the limit.
    assert c.call("EVAL", "#!lua flags=allow-oom\nredis.call('set','x',1) return 1", "1", "x") == 1
    assert c.call("GET", "x") == b"1"
    # no-writes implies allow-oom.
    assert c.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x") == b"1"
    assert c.call("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x") == b"1"
    # A bad shebang is reported as such.
    assert "Unexpected flag in script shebang" in err(c.call("EVAL", "#!lua flags=bad\nreturn 1", "0"))


def test_evalsha_uses_the_cached_flags(server, c):
    plain = "#!lua\nreturn 1"
    ro = "#!lua flags=no-writes\nreturn 2"
    sha_plain = c.call("SCRIPT", "LOAD", plain).decode()
    sha_ro = c.call("SCRIPT", "LOAD", ro).decode()
    go_oom(server)
    assert is_oom(c.call("EVALSHA", sha_plain, "0"))
    assert is_oom(c.call("EVALSHA", sha_plain.upper(), "0"))
    assert c.call("EVALSHA", sha_ro, "0") == 2
    assert c.call("EVALSHA_RO", sha_ro, "0") == 2
    assert err(c.call("EVALSHA", "0" * 40, "0")).startswith("NOSCRIPT")


def test_scripts_in_multi(server, c):
    # Declared flags count for EXEC.
    assert c.call("MULTI") == "OK"
    assert c.call("EVAL", "#!lua\nreturn 1", "0") == "QUEUED"
    go_oom(server)
    assert err(c.call("EXEC")) == "EXECABORT Transaction discarded because of: " + OOM
    other(server).call("CONFIG", "SET", "maxmemory", "0")

    assert c.call("MULTI") == "OK"
    assert c.call("EVAL", "#!lua flags=no-writes\nreturn 1", "0") == "QUEUED"
    assert c.call("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set','x','1')", "1", "x") == "QUEUED"
    go_oom(server)
    assert c.call("EXEC") == [1, "OK"]
    other(server).call("CONFIG", "SET", "maxmemory", "0")

    # Without a shebang EXEC runs, the script's first DENYOOM call fails.
    assert c.call("MULTI") == "OK"
    assert c.call("EVAL", "return redis.call('set','x','2')", "1", "x") == "QUEUED"
    assert c.call("GET", "x") == "QUEUED"
    go_oom(server)
    res = c.call("EXEC")
    assert err(res[0]).startswith(OOM + " script: ")
    assert res[1] == b"1"


def test_evalsha_queued_before_its_script_was_loaded(server, c):
    # The flags are those seen when EVALSHA was queued (the script was not
    # known yet): EXEC runs, and the script itself refuses to start.
    body = "#!lua\nreturn 1"
    sha = hashlib.sha1(body.encode()).hexdigest()
    assert c.call("MULTI") == "OK"
    assert c.call("SCRIPT", "LOAD", body) == "QUEUED"
    assert c.call("EVALSHA", sha, "0") == "QUEUED"
    go_oom(server)
    res = c.call("EXEC")
    assert res[0] == sha.encode()
    assert err(res[1]) == OOM_SCRIPT
    other(server).call("CONFIG", "SET", "maxmemory", "0")
    # Loaded before MULTI: EXEC itself is refused.
    assert c.call("MULTI") == "OK"
    assert c.call("EVALSHA", sha, "0") == "QUEUED"
    go_oom(server)
    assert err(c.call("EXEC")) == "EXECABORT Transaction discarded because of: " + OOM


LIB = """#!lua name=oomlib
redis.register_function('fw', function(keys) return redis.call('set', keys[1], 'w') end)
redis.register_function{function_name='fro', callback=function(keys) return redis.call('get', keys[1]) end,
                        flags={'no-writes'}}
redis.register_function{function_name='foom', callback=function(keys) return redis.call('set', keys[1], 'o') end,
                        flags={'allow-oom'}}
"""


def test_fcall_function_flags(server, c):
    assert c.call("FUNCTION", "LOAD", LIB) == b"oomlib"
    c.call("SET", "x", "v")
    go_oom(server)
    # No flags: a writing, DENYOOM function.
    assert is_oom(c.call("FCALL", "fw", "1", "x"))
    assert is_oom(c.call("FCALL_RO", "fw", "1", "x"))
    # no-writes: FCALL and FCALL_RO.
    assert c.call("FCALL", "fro", "1", "x") == b"v"
    assert c.call("FCALL_RO", "fro", "1", "x") == b"v"
    # allow-oom writes.
    assert c.call("FCALL", "foom", "1", "x") == "OK"
    assert c.call("GET", "x") == b"o"
    assert err(c.call("FCALL", "nosuch", "0")) == "ERR Function not found"


def test_fcall_in_multi(server, c):
    assert c.call("FUNCTION", "LOAD", LIB) == b"oomlib"
    c.call("SET", "x", "v")
    assert c.call("MULTI") == "OK"
    assert c.call("FCALL", "fw", "1", "x") == "QUEUED"
    go_oom(server)
    assert err(c.call("EXEC")) == "EXECABORT Transaction discarded because of: " + OOM
    other(server).call("CONFIG", "SET", "maxmemory", "0")
    assert c.call("MULTI") == "OK"
    assert c.call("FCALL", "fro", "1", "x") == "QUEUED"
    assert c.call("FCALL", "foom", "1", "x") == "QUEUED"
    go_oom(server)
    assert c.call("EXEC") == [b"v", "OK"]


# ----------------------------------------------------------- eviction --
def read_until(conn, pred, timeout=5.0):
    deadline = time.time() + timeout
    conn.s.settimeout(timeout)
    while time.time() < deadline:
        m = conn.read()
        if pred(m):
            return m
    raise AssertionError("no matching message")


def test_evicted_keyspace_events(server, c):
    c.call("CONFIG", "SET", "notify-keyspace-events", "KEe")
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    sub = other(server)
    assert sub.call("PSUBSCRIBE", "__key*__:*") == [b"psubscribe", b"__key*__:*", 1]
    c.call("SET", "foo", "bar")
    assert c.call("CONFIG", "SET", "maxmemory", "1") == "OK"
    got = set()
    deadline = time.time() + 5
    while len(got) < 2 and time.time() < deadline:
        m = sub.read()
        assert m[0] == b"pmessage"
        got.add((m[2], m[3]))
    assert got == {(b"__keyspace@0__:foo", b"evicted"), (b"__keyevent@0__:evicted", b"foo")}
    c.call("CONFIG", "SET", "maxmemory", "0")
    assert c.call("EXISTS", "foo") == 0
    sub.close()


def test_evicted_key_tracking_invalidation(server, c):
    t = Resp(server.port)
    assert isinstance(t.call("HELLO", "3"), dict)
    assert t.call("CLIENT", "TRACKING", "on") == "OK"
    c.call("SET", "k", "v")
    assert t.call("GET", "k") == b"v"
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    assert c.call("CONFIG", "SET", "maxmemory", "1") == "OK"
    m = read_until(t, lambda m: isinstance(m, tuple) and m[0] == "push")
    assert m == ("push", [b"invalidate", [b"k"]])
    t.close()


def test_eviction_invalidation_before_the_reply(server, c):
    # Redis's "Tracking invalidation message of eviction keys should be
    # before response": the command that finds the process over its limit
    # evicts first, and the tracking client hears of it before its reply.
    t = Resp(server.port)
    assert isinstance(t.call("HELLO", "3"), dict)
    assert t.call("CLIENT", "TRACKING", "on") == "OK"
    info = parse_info(c.call("INFO", "memory"))[None]
    used = int(info["used_memory"]) - int(info.get("mem_not_counted_for_evict", 0))
    c.call("CONFIG", "SET", "maxmemory", str(used + 1024 * 1024))
    c.call("CONFIG", "SET", "maxmemory-policy", "volatile-random")
    assert t.call("SETEX", "volatile-key", "10000", "x") == "OK"
    assert t.call("GET", "volatile-key") == b"x"
    # 4 MB: over the limit once written (not refused: it started under).
    assert t.call("SETBIT", "big-key", str(4 * 8 * 1024 * 1024), "0") == 0
    t.send("GETBIT", "big-key", "0")
    assert t.read() == ("push", [b"invalidate", [b"volatile-key"]])
    assert t.read() == 0
    assert t.call("EXISTS", "volatile-key", "big-key") == 1
    t.close()
