"""INFO errorstats (errorstat_<CODE>:count=N), total_error_replies and the
commandstats rejected_calls / failed_calls, as Redis 7.2.  Runs against
redis-server too (HOTKV_SERVER=redis)."""
import re
import time

import pytest

from conftest import Resp
from helpers import IS_REDIS


def text(reply):
    if isinstance(reply, tuple) and reply[0] == "verbatim":
        reply = reply[2]
    return reply.decode() if isinstance(reply, bytes) else reply


def errorstats(c):
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^errorstat_(\S+?):count=(\d+)\r$", text(c.call("INFO", "errorstats")), re.M)}


def stat(c, field):
    m = re.search(r"^%s:(\d+)\r$" % field, text(c.call("INFO", "stats")), re.M)
    return int(m.group(1))


def cmdstat(c, name):
    m = re.search(r"^cmdstat_%s:calls=(\d+),usec=\d+,usec_per_call=[\d.]+,rejected_calls=(\d+),failed_calls=(\d+)\r$"
                  % re.escape(name), text(c.call("INFO", "commandstats")), re.M)
    return tuple(int(x) for x in m.groups()) if m else None


@pytest.fixture
def c(server):
    conn = Resp(server.port)
    conn.call("FLUSHALL")
    conn.call("CONFIG", "RESETSTAT")
    yield conn
    conn.s.close()


def test_codes_counted(c):
    assert errorstats(c) == {}
    c.call("SET", "s", "v")
    c.call("LPUSH", "s", "x")                      # WRONGTYPE
    c.call("NOSUCHCOMMAND")                        # ERR (rejected)
    c.call("GET")                                  # ERR arity (rejected)
    c.call("INCR", "s")                            # ERR not an integer (failed)
    c.call("EVALSHA", "0" * 40, "0")               # NOSCRIPT
    assert errorstats(c) == {"WRONGTYPE": 1, "ERR": 3, "NOSCRIPT": 1}
    assert stat(c, "total_error_replies") == 5
    assert cmdstat(c, "lpush") == (1, 0, 1)   # ran, failed
    assert cmdstat(c, "get") == (0, 1, 0)     # never ran
    assert cmdstat(c, "incr") == (1, 0, 1)
    assert cmdstat(c, "set") == (1, 0, 0)


def test_script_codes(c):
    c.call("EVAL", "return redis.error_reply('MY:CODE x')", "0")
    c.call("EVAL", "return redis.error_reply('NOSPACECODE')", "0")  # no space: ERR
    es = errorstats(c)
    assert es == {"MY_CODE": 1, "ERR": 1}  # INFO's separators become '_'
    assert cmdstat(c, "eval")[2] == 2


def test_container_arity_and_unknown_subcommand(c):
    c.call("SLOWLOG")
    c.call("CONFIG", "NOSUCH")
    assert errorstats(c) == {"ERR": 2}
    assert stat(c, "total_error_replies") == 2
    assert cmdstat(c, "slowlog") == (0, 1, 0)


def test_errors_inside_exec(c):
    c.call("SET", "s", "v")
    c.call("MULTI")
    c.call("LPUSH", "s", "x")
    c.call("INCR", "n")
    assert c.call("EXEC")[1] == 1
    assert errorstats(c) == {"WRONGTYPE": 1}
    assert cmdstat(c, "lpush") == (1, 0, 1)
    assert cmdstat(c, "exec") == (1, 0, 0)
    # A queueing error aborts EXEC: both replies count.
    c.call("MULTI")
    c.call("NOSUCH")
    r = c.call("EXEC")
    assert r[0] == "error" and r[1].startswith("EXECABORT")
    es = errorstats(c)
    assert es["ERR"] == 1 and es["EXECABORT"] == 1


def test_resetstat_clears(c):
    c.call("NOSUCH")
    assert errorstats(c) == {"ERR": 1}
    c.call("CONFIG", "RESETSTAT")
    assert errorstats(c) == {}
    assert stat(c, "total_error_replies") == 0


def test_sorted_and_in_default_info(c):
    c.call("SET", "s", "v")
    c.call("LPUSH", "s", "x")
    c.call("NOSUCH")
    info = text(c.call("INFO"))
    assert "# Errorstats\r\nerrorstat_ERR:count=1\r\nerrorstat_WRONGTYPE:count=1\r\n" in info


def is_err(r):
    return isinstance(r, tuple) and r[0] == "error"


def test_script_errors_counted_once(c):
    """An error a script gets from redis.call/pcall (a refused command or the
    command's own error) is counted when it happens; the script passing it
    on as its reply counts a failed EVAL but no second error reply."""
    # A command's error, raised by redis.call.
    r = c.call("EVAL", "return redis.call('select', 99)", "0")
    assert is_err(r) and "DB index is out of range" in r[1]
    assert errorstats(c) == {"ERR": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "select") == (1, 0, 1) and cmdstat(c, "eval") == (1, 0, 1)
    # Caught by pcall and returned: the same single count.
    c.call("CONFIG", "RESETSTAT")
    r = c.call("EVAL", "return redis.pcall('select', 99)", "0")
    assert is_err(r)
    assert errorstats(c) == {"ERR": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "eval") == (1, 0, 1)
    # Caught and not returned: the command's error only, EVAL succeeded.
    c.call("CONFIG", "RESETSTAT")
    assert c.call("EVAL", "local t = redis.pcall('select', 99) return t['err']", "0") == b"ERR DB index is out of range"
    assert errorstats(c) == {"ERR": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "eval") == (1, 0, 0)
    # A command the script may not run (write from EVAL_RO): counted as
    # refused, once.
    c.call("CONFIG", "RESETSTAT")
    r = c.call("EVAL_RO", "return redis.call('set', 'x', 'y')", "1", "x")
    assert is_err(r) and "Write commands are not allowed" in r[1]
    assert errorstats(c) == {"ERR": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "set") == (0, 1, 0) and cmdstat(c, "eval_ro") == (1, 0, 1)
    # Refused for OOM: counted under its own code.
    c.call("CONFIG", "RESETSTAT")
    c.call("CONFIG", "SET", "maxmemory", "1")
    try:
        r = c.call("EVAL", "local t = redis.pcall('set', 'x', 'y') return t['err']", "1", "x")
        assert r.startswith(b"OOM ")
        assert errorstats(c) == {"OOM": 1} and stat(c, "total_error_replies") == 1
        assert cmdstat(c, "set") == (0, 1, 0) and cmdstat(c, "eval") == (1, 0, 0)
    finally:
        c.call("CONFIG", "SET", "maxmemory", "0")
    # An error the script makes itself is counted when it is replied.
    c.call("CONFIG", "RESETSTAT")
    r = c.call("EVAL", "return redis.error_reply('MY custom')", "0")
    assert is_err(r)
    assert errorstats(c) == {"MY": 1} and stat(c, "total_error_replies") == 1


def wait_blocked(c, n):
    for _ in range(200):
        m = re.search(r"^blocked_clients:(\d+)\r$", text(c.call("INFO", "clients")), re.M)
        if int(m.group(1)) == n:
            return
        time.sleep(0.01)
    raise AssertionError("no blocked client")


def test_blocked_call_ending_in_error(server, c):
    """A blocked command unblocked with an error (its group destroyed,
    CLIENT UNBLOCK ERROR) counts one error reply and a failed call."""
    c.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    b = Resp(server.port)
    b.send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(c, 1)
    c.call("XGROUP", "DESTROY", "s", "g")
    r = b.read()
    assert r[0] == "error" and r[1].startswith("NOGROUP")
    assert errorstats(c) == {"NOGROUP": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "xreadgroup") == (1, 0, 1)
    c.call("CONFIG", "RESETSTAT")
    cid = b.call("CLIENT", "ID")
    b.send("BLPOP", "nolist", "0")
    wait_blocked(c, 1)
    assert c.call("CLIENT", "UNBLOCK", str(cid), "ERROR") == 1
    r = b.read()
    assert r[0] == "error" and r[1].startswith("UNBLOCKED")
    assert errorstats(c) == {"UNBLOCKED": 1} and stat(c, "total_error_replies") == 1
    assert cmdstat(c, "blpop") == (1, 0, 1)
    b.s.close()


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour (7.0 counts the call when it blocks)")
def test_blocked_call_counted_once_when_it_ends(server, c):
    """A command that blocks is not a call yet: commandstats (and the
    latency histogram) count it once, when it is served, times out or is
    unblocked; a client that leaves while blocked is never counted
    (Redis 7.2's updateStatsOnUnblock and reprocessed call())."""
    b = Resp(server.port)
    b.send("BLPOP", "l", "0")
    wait_blocked(c, 1)
    assert cmdstat(c, "blpop") is None
    c.call("RPUSH", "l", "x")
    assert b.read() == [b"l", b"x"]
    assert cmdstat(c, "blpop") == (1, 0, 0)
    # Timed out: one more call.
    assert b.call("BLPOP", "l", "0.05") is None
    assert cmdstat(c, "blpop") == (2, 0, 0)
    # CLIENT UNBLOCK (a timeout reply): one more.
    cid = b.call("CLIENT", "ID")
    b.send("BRPOP", "l", "0")
    wait_blocked(c, 1)
    assert cmdstat(c, "brpop") is None
    assert c.call("CLIENT", "UNBLOCK", str(cid)) == 1
    assert b.read() is None
    assert cmdstat(c, "brpop") == (1, 0, 0)
    # Gone while blocked: not counted.
    b.send("BLMOVE", "l", "m", "LEFT", "LEFT", "0")
    wait_blocked(c, 1)
    b.s.close()
    wait_blocked(c, 0)
    assert cmdstat(c, "blmove") is None
    # The histogram has as many samples as calls.
    lat = c.call("LATENCY", "HISTOGRAM", "blpop")
    flat = lat[1] if isinstance(lat, list) else list(lat.values())[0]
    info = dict(zip(flat[0::2], flat[1::2])) if isinstance(flat, list) else flat
    assert info[b"calls"] == 2


def test_made_up_codes_are_capped(c):
    """Scripts can make up error codes: past 128 distinct codes counting stops
    (the counts reset, ERRORSTATS_DISABLED:count=1) until CONFIG RESETSTAT,
    as Redis 7.4+ does (7.0 has no limit: HotKV only)."""
    m = re.search(r"^redis_version:(\d+)\.(\d+)", text(c.call("INFO", "server")), re.M)
    if IS_REDIS and (int(m.group(1)), int(m.group(2))) < (7, 4):
        pytest.skip("Redis < 7.4 does not cap error codes")
    for j in range(128):
        c.call("EVAL", "return redis.error_reply('CODE%d x')" % j, "0")
    es = errorstats(c)
    assert len(es) == 128 and es["CODE5"] == 1
    c.call("EVAL", "return redis.error_reply('ONEMORE x')", "0")
    assert errorstats(c) == {"ERRORSTATS_DISABLED": 1}
    c.call("GET")  # nothing counted now ...
    assert errorstats(c) == {"ERRORSTATS_DISABLED": 1}
    assert stat(c, "total_error_replies") == 130  # ... but the total goes on
    c.call("CONFIG", "RESETSTAT")
    c.call("EVAL", "return redis.error_reply('AGAIN x')", "0")
    c.call("GET")
    assert errorstats(c) == {"AGAIN": 1, "ERR": 1}
    for j in range(127):
        c.call("EVAL", "return redis.error_reply('NEW%d x')" % j, "0")
    assert errorstats(c) == {"ERRORSTATS_DISABLED": 1}  # the limit holds again
