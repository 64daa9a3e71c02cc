"""DEBUG's test aids that Redis's own suite leans on, and the behaviour they
expose: SET-DISABLE-DENY-SCRIPTS (scripts may call DEBUG PROTOCOL / SLEEP /
...), TIME frozen for the length of a script or transaction (Redis 7.2),
and DEBUG OBJECT on a key that is logically expired but not yet deleted.  Runs
against HotKV, and against Debian's redis-server 7.0 with
HOTKV_SERVER=redis (the HotKV-only limits are marked)."""
import threading
import time

import pytest
import redis

from helpers import MODE, time_at_once


def need_72(r):
    v = tuple(int(x) for x in r.info("server")["redis_version"].split(".")[:2])
    if v < (7, 2):
        pytest.skip("TIME from the command's cached instant is Redis 7.2 behaviour")


@pytest.fixture
def dr(r):
    yield r
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_disable_deny_scripts_lets_scripts_call_debug(dr):
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        dr.eval("return redis.call('debug', 'protocol', 'true')", 0)
    assert dr.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") in (True, "OK")
    # RESP2 script conversions of DEBUG PROTOCOL's RESP3 types.
    assert dr.eval("return redis.call('debug', 'protocol', 'true')", 0) == 1
    assert dr.eval("return redis.call('debug', 'protocol', 'false')", 0) == 0
    assert dr.eval("return redis.call('debug', 'protocol', 'bignum')", 0) == "1234567999999999999999999999999999999"
    assert dr.eval("redis.setresp(3); return redis.call('debug', 'protocol', 'double')", 0) == "3.141"
    assert dr.eval("return redis.call('debug', 'protocol', 'map')", 0) == [0, 0, 1, 1, 2, 0]
    assert dr.eval("return redis.call('debug', 'sleep', 0)", 0) == "OK"
    dr.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        dr.eval("return redis.call('debug', 'protocol', 'true')", 0)


@pytest.mark.skipif(MODE == "redis", reason="HotKV lifts the deny for DEBUG's safe subcommands only")
def test_disable_deny_scripts_keeps_unsafe_commands_denied(dr):
    dr.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    for call in ("'debug', 'reload'", "'debug', 'populate', '10'", "'subscribe', 'ch'", "'script', 'flush'",
                 "'client', 'list'", "'monitor'", "'shutdown', 'nosave'"):
        with pytest.raises(redis.ResponseError, match="not allowed from script"):
            dr.eval("return redis.call(%s)" % call, 0)
    assert dr.ping() and dr.dbsize() == 0


def test_time_is_frozen_inside_a_script(dr):
    need_72(dr)
    dr.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    a, b = dr.eval("local a = redis.call('time'); redis.call('debug', 'sleep', 0.02); "
                   "local b = redis.call('time'); return {a, b}", 0)
    assert a == b
    # Outside a script, time goes on.
    t1 = dr.time()
    time.sleep(0.01)
    t2 = dr.time()
    assert t2 > t1


def test_time_is_one_instant_inside_a_transaction(dr):
    need_72(dr)
    p = dr.pipeline(transaction=True)
    p.time()
    p.execute_command("DEBUG", "SLEEP", "0.02")
    p.time()
    a, _, b = p.execute()
    assert a == b


def test_a_parallel_script_sleeping_holds_no_other_slot(dr, server):
    """A script's keyless DEBUG (SLEEP) takes no lock: a 0.4 s script on one
    key leaves the other keys to other clients."""
    dr.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")

    # Connections on another worker than the script's (the script's own
    # worker is busy running it).
    def io_thread(c):
        info = c.execute_command("CLIENT", "INFO")
        return dict(kv.split("=", 1) for kv in info.split()).get("io-thread")

    mine, others = io_thread(dr), []
    for _ in range(64):
        o = server.client(decode_responses=True, socket_timeout=5)
        if MODE == "redis" or io_thread(o) != mine:
            others.append(o)
            if len(others) == 3:
                break
        else:
            o.close()
    assert len(others) == 3
    body = "redis.call('set', KEYS[1], 1) for i = 1, 40 do redis.call('debug', 'sleep', 0.01) end return 1"
    dr.eval(body, 1, "sleeper")  # a first run, so the next one may run in parallel
    t = threading.Thread(target=lambda: dr.eval(body, 1, "sleeper"))
    t.start()
    time.sleep(0.1)
    took = time_at_once(others, lambda o, i: o.set("other%d" % i, 1))
    t.join(5)
    for o in others:
        o.close()
    assert len(took) == len(others)
    if MODE != "redis":
        assert max(took) < 0.2, took  # waiting for the script: 0.3 s


def test_debug_object_shows_a_logically_expired_key(dr):
    dr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    dr.set("k", "v", px=1)
    time.sleep(0.02)
    assert "encoding:" in str(dr.execute_command("DEBUG", "OBJECT", "k"))
    # A read still finds it expired, and deletes it.
    assert dr.exists("k") == 0
    with pytest.raises(redis.ResponseError, match="no such key"):
        dr.execute_command("DEBUG", "OBJECT", "k")


def test_aof_flush_sleep_delays_the_write_not_the_order():
    """DEBUG AOF-FLUSH-SLEEP <us>: each write of the AOF's pending bytes
    first sleeps; with appendfsync always the reply still comes after the
    bytes are in the file (Redis's 'AOF fsync always barrier' test)."""
    import os
    from helpers import Server
    s = Server("--appendonly", "yes", "--appendfsync", "always")
    try:
        c = s.client(decode_responses=True)
        d = os.path.join(s.dir, c.config_get("appenddirname")["appenddirname"])

        def incr_size():
            return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".incr.aof"))
        c.set("warm", "1")
        assert c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 200000) in (True, "OK")
        before = incr_size()
        t0 = time.time()
        assert c.incr("n") == 1
        assert time.time() - t0 >= 0.19
        assert incr_size() > before
        c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 0)
        t0 = time.time()
        c.incr("n")
        assert time.time() - t0 < 0.19
    finally:
        s.stop()
