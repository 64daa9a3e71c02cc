"""DEBUG's test aids that Redis's own suite leans on, and the behaviour they
expose: SET-DISABLE-DENY-SCRIPTS (scripts may call DEBUG PROTOCOL / SLEEP /
...), and DEBUG OBJECT on a key that is logically expired but not yet
deleted.  Runs
against HotKV, and against Debian's redis-server 7.0 with
HOTKV_SERVER=redis (the HotKV-only limits are marked)."""
import time

import pytest
import redis

from helpers import MODE


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


def test_debug_object_shows_a_logically_expired_key(dr):
    dr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    dr.set("k", "v", px=1)
    time.sleep(0.02)
    assert "encoding:" in str(dr.execute_command("DEBUG", "OBJECT", "k"))
    # A read still finds it expired, and deletes it.
    assert dr.exists("k") == 0
    with pytest.raises(redis.ResponseError, match="no such key"):
        dr.execute_command("DEBUG", "OBJECT", "k")
