"""Streams (issue 5): XADD XTRIM XLEN XRANGE XREVRANGE XDEL XREAD XSETID
XINFO and consumer groups (XGROUP XREADGROUP XACK XPENDING XCLAIM
XAUTOCLAIM), the generic key commands on streams, keyspace events, and
XREAD/XREADGROUP BLOCK served by writers on other worker threads.

Runs against redis-server 7.0.15 too (HOTKV_SERVER=redis); the few checks
of 7.2+/7.4 behaviour are skipped there.  The server has 4 worker threads,
so connections land on different workers."""
import re
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import MODE, Resp, Server
from helpers import free_port, has_config, requires, server_version

IS_REDIS = MODE == "redis"


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if not IS_REDIS else Server()
    yield s
    assert s.stop() == 0


def conn(server, proto=2, timeout=10):
    c = Resp(server.port, timeout=timeout)
    if proto == 3:
        c.call("HELLO", "3")
    return c


@pytest.fixture
def r(server):
    c = conn(server)
    c.call("FLUSHALL")
    yield c
    c.close()


@pytest.fixture
def r3(server):
    c = conn(server, 3)
    c.call("FLUSHALL")
    yield c
    c.close()


def version(server):
    c = conn(server)
    try:
        info = c.call("INFO", "server")
        text = info.decode() if isinstance(info, bytes) else info[2].decode()
        return tuple(int(x) for x in re.search(r"redis_version:(\d+)\.(\d+)\.(\d+)", text).groups())
    finally:
        c.close()


def blocked_clients(r):
    info = r.call("INFO", "clients")
    info = info.decode() if isinstance(info, bytes) else info[2].decode()
    return int(re.search(r"blocked_clients:(\d+)", info).group(1))


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked_clients(r) == n:
            return
        time.sleep(0.005)
    raise AssertionError("expected %d blocked clients, INFO says %d" % (n, blocked_clients(r)))


def raw_line(c, timeout=5.0):
    """The next reply line's raw bytes (to tell *-1 from _ and $-1)."""
    c.s.settimeout(timeout)
    while b"\r\n" not in c.buf:
        chunk = c.s.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        c.buf += chunk
    line, c.buf = c.buf.split(b"\r\n", 1)
    return line


def err(reply):
    assert isinstance(reply, tuple) and reply[0] == "error", reply
    return reply[1]


def entry(id_, *fv):
    return [id_.encode() if isinstance(id_, str) else id_, [x.encode() if isinstance(x, str) else x for x in fv]]


# ------------------------------------------------------------------ XADD ---
@requires("XADD")
def test_xadd_ids_and_xlen(r):
    assert r.call("XADD", "s", "1-1", "a", "1") == b"1-1"
    assert r.call("XADD", "s", "1-*", "b", "2") == b"1-2"
    assert r.call("XADD", "s", "5", "c", "3") == b"5-0"
    auto = r.call("XADD", "s", "*", "d", "4").decode()
    ms, seq = map(int, auto.split("-"))
    assert ms > 5 and seq == 0
    assert r.call("XLEN", "s") == 4
    assert r.call("XLEN", "nokey") == 0
    assert r.call("TYPE", "s") == "stream"
    assert r.call("OBJECT", "ENCODING", "s") == b"stream"


@requires("XADD")
def test_xadd_id_errors(server, r):
    assert "greater than 0-0" in err(r.call("XADD", "s", "0-0", "a", "1"))
    assert r.call("EXISTS", "s") == 0  # no empty stream left behind
    r.call("XADD", "s", "10-5", "a", "1")
    assert "equal or smaller" in err(r.call("XADD", "s", "10-5", "a", "1"))
    assert "equal or smaller" in err(r.call("XADD", "s", "9-9", "a", "1"))
    assert err(r.call("XADD", "s", "abc", "a", "1")) == "ERR Invalid stream ID specified as stream command argument"
    assert "Invalid stream ID" in err(r.call("XADD", "s", "1-x", "a", "1"))
    assert "Invalid stream ID" in err(r.call("XADD", "s", "-", "a", "1"))
    assert "wrong number of arguments" in err(r.call("XADD", "s", "*", "a"))
    assert "wrong number of arguments" in err(r.call("XADD", "s", "*", "a", "1", "b"))
    r.call("XADD", "m", "18446744073709551615-18446744073709551615", "a", "1")
    assert "exhausted the last possible ID" in err(r.call("XADD", "m", "*", "a", "1"))
    r.call("XADD", "n", "7-18446744073709551615", "a", "1")
    # 7.0 answered "Elements are too large" here (errno left unset); 7.2 fixed it
    want = "equal or smaller" if version(server) >= (7, 2, 0) else "too large"
    assert want in err(r.call("XADD", "n", "7-*", "a", "1"))
    r.call("SET", "str", "x")
    assert err(r.call("XADD", "str", "*", "a", "1")).startswith("WRONGTYPE")


@requires("XADD")
def test_xadd_nomkstream(r):
    assert r.call("XADD", "s", "NOMKSTREAM", "*", "a", "1") is None
    assert r.call("EXISTS", "s") == 0
    r.call("XADD", "s", "1-1", "a", "1")
    assert r.call("XADD", "s", "NOMKSTREAM", "2-1", "a", "1") == b"2-1"


@requires("XADD")
def test_xadd_maxlen_minid_and_xtrim(r):
    for i in range(1, 11):
        r.call("XADD", "s", "MAXLEN", "5", "%d-0" % i, "f", str(i))
    assert r.call("XLEN", "s") == 5
    assert r.call("XRANGE", "s", "-", "+", "COUNT", "1")[0][0] == b"6-0"
    r.call("XADD", "s", "MINID", "=", "9", "11-0", "f", "11")
    assert [e[0] for e in r.call("XRANGE", "s", "-", "+")] == [b"9-0", b"10-0", b"11-0"]
    assert r.call("XTRIM", "s", "MAXLEN", "1") == 2
    assert r.call("XTRIM", "s", "MINID", "0") == 0
    assert r.call("XTRIM", "nokey", "MAXLEN", "1") == 0
    assert "XTRIM must be called with a trimming strategy" in err(r.call("XTRIM", "s", "LIMIT", "0"))
    assert "MAXLEN and MINID" in err(r.call("XTRIM", "s", "MAXLEN", "1", "MINID", "1"))
    assert "without the special ~" in err(r.call("XTRIM", "s", "MAXLEN", "1", "LIMIT", "1"))
    assert "must be >= 0" in err(r.call("XTRIM", "s", "MAXLEN", "-1"))
    assert err(r.call("XTRIM", "s", "FOO", "1")) == "ERR syntax error"
    assert "without specifying a trimming strategy" in err(r.call("XADD", "s", "LIMIT", "10", "*", "a", "1"))


@requires("XADD")
def test_approximate_trim_removes_whole_nodes(r):
    r.call("CONFIG", "SET", "stream-node-max-entries", "10")
    try:
        for i in range(1, 96):
            r.call("XADD", "s", "%d-0" % i, "f", "v")
        # ~ 55 removes whole nodes of 10 only: 40 entries, leaving 55
        assert r.call("XTRIM", "s", "MAXLEN", "~", "55") == 40
        assert r.call("XLEN", "s") == 55
        # LIMIT caps the work at whole nodes
        assert r.call("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "15") == 10
        assert r.call("XTRIM", "s", "MINID", "~", "70") == 10
        assert r.call("XRANGE", "s", "-", "+", "COUNT", "1")[0][0] == b"61-0"
        assert r.call("XTRIM", "s", "MINID", "70") == 9
    finally:
        r.call("CONFIG", "SET", "stream-node-max-entries", "100")


# ------------------------------------------------------ XRANGE / XDEL ---
def fill(r, key, n):
    for i in range(1, n + 1):
        r.call("XADD", key, "%d-%d" % (i // 3 + 1, i % 3), "i", str(i))


@requires("XADD", "XRANGE")
def test_xrange_xrevrange(r):
    fill(r, "s", 9)
    ids = [e[0] for e in r.call("XRANGE", "s", "-", "+")]
    assert ids == [b"1-1", b"1-2", b"2-0", b"2-1", b"2-2", b"3-0", b"3-1", b"3-2", b"4-0"]
    assert r.call("XRANGE", "s", "2", "2") == [entry("2-0", "i", "3"), entry("2-1", "i", "4"), entry("2-2", "i", "5")]
    assert [e[0] for e in r.call("XREVRANGE", "s", "+", "-", "COUNT", "2")] == [b"4-0", b"3-2"]
    assert [e[0] for e in r.call("XRANGE", "s", "(2-0", "(3-0")] == [b"2-1", b"2-2"]
    assert [e[0] for e in r.call("XREVRANGE", "s", "(3-0", "(2-0")] == [b"2-2", b"2-1"]
    assert r.call("XRANGE", "s", "5", "+") == []
    assert r.call("XRANGE", "nokey", "-", "+") == []
    assert r.call("XRANGE", "s", "-", "+", "COUNT", "-3") is None
    assert raw_cmd(r, "XRANGE", "s", "-", "+", "COUNT", "0") == b"*-1"
    assert "invalid start ID" in err(r.call("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"))
    assert "invalid end ID" in err(r.call("XRANGE", "s", "-", "(0-0"))
    assert "Invalid stream ID" in err(r.call("XRANGE", "s", "(-", "+"))
    assert err(r.call("XRANGE", "s", "-", "+", "COUNT")) == "ERR syntax error"


def raw_cmd(c, *args):
    c.send(*args)
    return raw_line(c)


@requires("XADD", "XDEL", "XINFO")
def test_xdel_and_tombstones(r):
    fill(r, "s", 6)
    assert r.call("XDEL", "s", "1-1", "2-1", "9-9") == 2
    assert r.call("XDEL", "s", "1-1") == 0
    assert r.call("XDEL", "nokey", "1-1") == 0
    assert "Invalid stream ID" in err(r.call("XDEL", "s", "zz"))
    assert r.call("XLEN", "s") == 4
    info = dict(zip(*[iter(r.call("XINFO", "STREAM", "s"))] * 2))
    assert info[b"max-deleted-entry-id"] == b"2-1"
    assert info[b"recorded-first-entry-id"] == b"1-2"
    assert info[b"entries-added"] == 6
    assert info[b"first-entry"][0] == b"1-2"
    assert info[b"last-entry"] == entry("3-0", "i", "6")
    # deleting every entry keeps an empty stream
    r.call("XDEL", "s", "1-2", "2-0", "2-2", "3-0")
    assert r.call("XLEN", "s") == 0
    assert r.call("EXISTS", "s") == 1
    info = dict(zip(*[iter(r.call("XINFO", "STREAM", "s"))] * 2))
    assert info[b"first-entry"] is None and info[b"last-entry"] is None
    assert info[b"recorded-first-entry-id"] == b"0-0"


@requires("XADD", "XINFO")
def test_xinfo_stream_full_and_help(r):
    fill(r, "s", 3)
    r.call("XGROUP", "CREATE", "s", "g", "0")
    r.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")
    full = dict(zip(*[iter(r.call("XINFO", "STREAM", "s", "FULL", "COUNT", "2"))] * 2))
    assert full[b"length"] == 3
    assert [e[0] for e in full[b"entries"]] == [b"1-1", b"1-2"]
    g = dict(zip(*[iter(full[b"groups"][0])] * 2))
    assert g[b"name"] == b"g" and g[b"pel-count"] == 2 and g[b"entries-read"] == 2 and g[b"lag"] == 1
    cons = dict(zip(*[iter(g[b"consumers"][0])] * 2))
    assert cons[b"name"] == b"alice" and cons[b"pel-count"] == 2
    assert isinstance(r.call("XINFO", "HELP"), list)
    assert "wrong number of arguments" in err(r.call("XINFO", "HELP", "x"))
    assert "unknown subcommand" in err(r.call("XINFO", "STREAM", "s", "FOO"))
    assert err(r.call("XINFO", "STREAM", "nokey")) == "ERR no such key"


@requires("XADD", "XSETID")
def test_xsetid(r):
    r.call("XADD", "s", "5-5", "a", "1")
    assert "smaller than the target stream top item" in err(r.call("XSETID", "s", "5-4"))
    assert r.call("XSETID", "s", "5-5") == "OK"
    assert r.call("XSETID", "s", "10-0", "ENTRIESADDED", "100", "MAXDELETEDID", "7-0") == "OK"
    info = dict(zip(*[iter(r.call("XINFO", "STREAM", "s"))] * 2))
    assert info[b"last-generated-id"] == b"10-0"
    assert info[b"entries-added"] == 100
    assert info[b"max-deleted-entry-id"] == b"7-0"
    assert "equal or smaller" in err(r.call("XADD", "s", "9-0", "a", "1"))
    assert "smaller than the provided max_deleted_entry_id" in err(r.call("XSETID", "s", "10-0", "MAXDELETEDID", "11-0"))
    assert "smaller than the target stream length" in err(r.call("XSETID", "s", "10-0", "ENTRIESADDED", "0"))
    assert "entries_added must be positive" in err(r.call("XSETID", "s", "10-0", "ENTRIESADDED", "-1"))
    assert err(r.call("XSETID", "nokey", "1-1")) == "ERR no such key"


# ----------------------------------------------------------- key commands ---
@requires("XADD", "COPY")
def test_generic_key_commands(r):
    fill(r, "s{t}", 50)
    r.call("XGROUP", "CREATE", "s{t}", "g", "0")
    r.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s{t}", ">")
    assert r.call("COPY", "s{t}", "c{t}") == 1
    assert r.call("XRANGE", "c{t}", "-", "+") == r.call("XRANGE", "s{t}", "-", "+")
    assert r.call("XPENDING", "c{t}", "g")[0] == 3
    # the copy is deep: acking in one leaves the other alone
    r.call("XACK", "c{t}", "g", "1-1")
    assert r.call("XPENDING", "s{t}", "g")[0] == 3
    assert r.call("RENAME", "c{t}", "d{t}") == "OK"
    assert r.call("XLEN", "d{t}") == 50
    assert r.call("MOVE", "d{t}", "1") == 1
    assert r.call("MEMORY", "USAGE", "s{t}") > 200
    found, cur = [], b"0"
    while True:
        cur, keys = r.call("SCAN", cur, "TYPE", "stream", "COUNT", "1000")
        found += keys
        if cur == b"0":
            break
    assert found == [b"s{t}"]
    assert r.call("DEL", "s{t}") == 1
    r.call("SELECT", "1")
    assert r.call("XLEN", "d{t}") == 50
    assert r.call("UNLINK", "d{t}") == 1


@requires("XADD")
def test_big_stream_freed_lazily(r):
    # As Redis 7.0: UNLINK (or DEL with lazyfree-lazy-user-del yes) frees a
    # big value on the lazyfree thread; plain DEL frees it inline.
    for i in range(0, 60000, 1000):
        for j in range(i, i + 1000):
            r.send("XADD", "big", "*", "f", "v%d" % j)
        for j in range(1000):
            r.read()
    def lazyfreed():
        info = r.call("INFO", "memory").decode()
        return int(re.search(r"lazyfreed_objects:(\d+)", info).group(1))
    before = lazyfreed()
    assert r.call("UNLINK", "big") == 1
    deadline = time.time() + 10
    while lazyfreed() < before + 1 and time.time() < deadline:
        time.sleep(0.01)
    assert lazyfreed() >= before + 1


# -------------------------------------------------------------- XREAD ---
@requires("XADD", "XREAD")
def test_xread_sync(r, r3):
    fill(r, "a{t}", 3)
    r.call("XADD", "b{t}", "1-0", "x", "y")
    assert r.call("XREAD", "STREAMS", "a{t}", "b{t}", "1-2", "0") == [
        [b"a{t}", [entry("2-0", "i", "3")]], [b"b{t}", [entry("1-0", "x", "y")]]]
    assert r.call("XREAD", "COUNT", "1", "STREAMS", "a{t}", "0") == [[b"a{t}", [entry("1-1", "i", "1")]]]
    assert r.call("XREAD", "STREAMS", "a{t}", "$") is None
    assert r.call("XREAD", "STREAMS", "nokey", "0") is None
    # RESP3: a map of key -> entries, null when nothing
    fill(r3, "a{t}", 3)
    assert r3.call("XREAD", "STREAMS", "a{t}", "1-2") == {b"a{t}": [entry("2-0", "i", "3")]}
    assert raw_cmd(r3, "XREAD", "STREAMS", "a{t}", "$") == b"_"
    assert raw_cmd(r, "XREAD", "STREAMS", "a{t}", "$") == b"*-1"


@requires("XREAD")
def test_xread_errors(r):
    assert "Unbalanced" in err(r.call("XREAD", "STREAMS", "a", "b", "c"))
    assert err(r.call("XREAD", "COUNT", "1", "a")) == "ERR syntax error"
    assert "GROUP option is only supported by XREADGROUP" in err(r.call("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"))
    assert "> ID can be specified only" in err(r.call("XREAD", "STREAMS", "s", ">"))
    assert "Invalid stream ID" in err(r.call("XREAD", "STREAMS", "s", "x"))
    assert "timeout is negative" in err(r.call("XREAD", "BLOCK", "-1", "STREAMS", "s", "$"))
    assert "not an integer" in err(r.call("XREAD", "BLOCK", "1.5", "STREAMS", "s", "$"))
    r.call("SET", "str", "x")
    assert err(r.call("XREAD", "STREAMS", "str", "0")).startswith("WRONGTYPE")


@requires("XREAD")
def test_xread_plus_id(server, r):
    if IS_REDIS and version(server) < (7, 4, 0):
        pytest.skip("XREAD '+' arrived in Redis 7.4 (HotKV has it)")
    fill(r, "s", 3)
    assert r.call("XREAD", "STREAMS", "s", "+") == [[b"s", [entry("2-0", "i", "3")]]]
    assert r.call("XREAD", "STREAMS", "nokey", "+") is None


# ----------------------------------------------------- XREAD BLOCK ---
@requires("XREAD")
def test_xread_block_served_from_other_thread(server, r):
    waiters = [conn(server) for _ in range(3)]
    r.call("XADD", "s", "1-0", "old", "1")
    for w in waiters:
        w.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 3)
    assert r.call("XADD", "s", "2-0", "new", "1") == b"2-0"
    for w in waiters:  # every reader gets it ('$' was resolved when it blocked)
        assert w.read() == [[b"s", [entry("2-0", "new", "1")]]]
        w.close()
    assert blocked_clients(r) == 0


@requires("XREAD")
def test_xread_block_explicit_id_and_other_keys(server, r):
    w = conn(server)
    r.call("XADD", "b{t}", "5-0", "x", "1")
    # waits on a{t} (new) and b{t} past 5-0
    w.send("XREAD", "BLOCK", "0", "STREAMS", "a{t}", "b{t}", "0", "5-0")
    wait_blocked(r, 1)
    r.call("XADD", "b{t}", "6-0", "x", "2")
    assert w.read() == [[b"b{t}", [entry("6-0", "x", "2")]]]
    # a reader whose ID is ahead of the new entry keeps waiting
    w.send("XREAD", "BLOCK", "0", "STREAMS", "b{t}", "100-0")
    wait_blocked(r, 1)
    r.call("XADD", "b{t}", "7-0", "x", "3")
    time.sleep(0.1)
    assert blocked_clients(r) == 1
    r.call("XADD", "b{t}", "101-0", "x", "4")
    assert w.read() == [[b"b{t}", [entry("101-0", "x", "4")]]]
    w.close()


@requires("XREAD")
def test_xread_block_timeout_and_deny_blocking(server, r):
    w2, w3 = conn(server), conn(server, 3)
    t0 = time.time()
    w2.send("XREAD", "BLOCK", "100", "STREAMS", "s", "$")
    assert raw_line(w2) == b"*-1"
    assert time.time() - t0 >= 0.09
    w3.send("XREAD", "BLOCK", "100", "STREAMS", "s", "$")
    assert raw_line(w3) == b"_"
    # MULTI: no blocking, the timeout reply at once
    assert w2.call("MULTI") == "OK"
    assert w2.call("XREAD", "BLOCK", "0", "STREAMS", "s", "$") == "QUEUED"
    assert w2.call("EXEC") == [None]
    # a key that never becomes a stream does not serve the reader
    w2.send("XREAD", "BLOCK", "200", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.call("LPUSH", "s", "x")
    assert raw_line(w2) == b"*-1"
    w2.close()
    w3.close()


@requires("XREAD", "EVAL")
def test_xread_block_from_script_is_an_error(r):
    e = r.call("EVAL", "return redis.pcall('XREAD','BLOCK','0','STREAMS','s','$')", "0")
    text = e[1] if isinstance(e, tuple) else str(e)
    assert "not allowed with BLOCK option from scripts" in text


@requires("XREAD")
def test_xread_block_count_and_deleted_key(server, r):
    w = conn(server)
    w.send("XREAD", "BLOCK", "0", "COUNT", "2", "STREAMS", "s", "0")
    wait_blocked(r, 1)
    # a deleted and re-created key still serves an XREAD waiter
    r.call("XADD", "s", "1-0", "a", "1")
    assert w.read() == [[b"s", [entry("1-0", "a", "1")]]]
    w.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.call("DEL", "s")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.call("XADD", "s", "1-0", "b", "2")  # not newer than the '$' resolved at block time
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.call("XADD", "s", "2-0", "c", "3")
    assert w.read() == [[b"s", [entry("2-0", "c", "3")]]]
    w.close()


@requires("XREAD")
def test_many_writers_many_blocked_readers(server, r):
    """Writers on several connections XADD to one stream while readers
    follow it with XREAD BLOCK: every reader sees every entry once, in ID
    order."""
    nwriters, per_writer, nreaders = 4, 300, 3
    total = nwriters * per_writer
    results = [[] for _ in range(nreaders)]
    errors = []

    def reader(k):
        c = conn(server, timeout=20)
        last = "0-0"
        try:
            while len(results[k]) < total:
                rep = c.call("XREAD", "BLOCK", "5000", "COUNT", "50", "STREAMS", "s", last)
                if rep is None:
                    errors.append("reader %d timed out at %d" % (k, len(results[k])))
                    return
                for id_, fields in rep[0][1]:
                    results[k].append((id_, fields[1]))
                    last = id_.decode()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        finally:
            c.close()

    def writer(k):
        c = conn(server, timeout=20)
        try:
            for i in range(per_writer):
                c.call("XADD", "s", "*", "v", "%d:%d" % (k, i))
        finally:
            c.close()

    rt = [threading.Thread(target=reader, args=(k,)) for k in range(nreaders)]
    for t in rt:
        t.start()
    wt = [threading.Thread(target=writer, args=(k,)) for k in range(nwriters)]
    for t in wt:
        t.start()
    for t in wt + rt:
        t.join(30)
    assert not errors, errors
    ids = [e[0] for e in r.call("XRANGE", "s", "-", "+")]
    assert len(ids) == total
    for k in range(nreaders):
        assert [e[0] for e in results[k]] == ids
    # each writer's entries appear in the order it wrote them
    seen = {}
    for _, v in results[0]:
        w, i = map(int, v.split(b":"))
        assert seen.get(w, -1) == i - 1
        seen[w] = i


# ------------------------------------------------------ consumer groups ---
@requires("XGROUP")
def test_xgroup_create_setid_destroy(r):
    assert "requires the key to exist" in err(r.call("XGROUP", "CREATE", "s", "g", "$"))
    assert r.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "OK"
    assert r.call("TYPE", "s") == "stream"
    assert err(r.call("XGROUP", "CREATE", "s", "g", "$")).startswith("BUSYGROUP")
    assert r.call("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "0") == "OK"
    assert "ENTRIESREAD must be positive" in err(r.call("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "-5"))
    assert r.call("XGROUP", "SETID", "s", "g", "0") == "OK"
    assert err(r.call("XGROUP", "SETID", "s", "nog", "0")).startswith("NOGROUP")
    assert r.call("XGROUP", "CREATECONSUMER", "s", "g", "c1") == 1
    assert r.call("XGROUP", "CREATECONSUMER", "s", "g", "c1") == 0
    groups = r.call("XINFO", "GROUPS", "s")
    assert [dict(zip(*[iter(g)] * 2))[b"name"] for g in groups] == [b"g", b"g2"]
    assert r.call("XGROUP", "DELCONSUMER", "s", "g", "c1") == 0
    assert r.call("XGROUP", "DESTROY", "s", "g") == 1
    assert r.call("XGROUP", "DESTROY", "s", "g") == 0
    assert "unknown subcommand" in err(r.call("XGROUP", "FOO", "s", "g"))
    assert isinstance(r.call("XGROUP", "HELP"), list)


@requires("XREADGROUP")
def test_xreadgroup_pel_ack_history_noack(r):
    fill(r, "s", 4)
    r.call("XGROUP", "CREATE", "s", "g", "0")
    got = r.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]] == [b"1-1", b"1-2"]
    got = r.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]] == [b"2-0", b"2-1"]
    assert r.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") is None
    # history: the consumer's own pending entries
    hist = r.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert [e[0] for e in hist[0][1]] == [b"1-1", b"1-2"]
    assert r.call("XACK", "s", "g", "1-1", "9-9") == 1
    assert r.call("XACK", "s", "nog", "1-1") == 0
    assert "Invalid stream ID" in err(r.call("XACK", "s", "g", "x"))
    summary = r.call("XPENDING", "s", "g")
    assert summary == [3, b"1-2", b"2-1", [[b"alice", b"1"], [b"bob", b"2"]]]
    # a deleted entry shows up in the history as an ID with a null body
    r.call("XDEL", "s", "1-2")
    hist = r.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert hist == [[b"s", [[b"1-2", None]]]]
    # NOACK: delivered but not pending
    r.call("XADD", "s", "9-0", "x", "1")
    r.call("XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "s", ">")
    assert r.call("XPENDING", "s", "g")[0] == 3
    assert "$ ID is meaningless" in err(r.call("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "$"))
    assert err(r.call("XREADGROUP", "GROUP", "nog", "a", "STREAMS", "s", ">")).startswith("NOGROUP")
    assert "Missing GROUP option" in err(r.call("XREADGROUP", "COUNT", "1", "STREAMS", "s", ">", "x", "y"))
    info = {dict(zip(*[iter(x)] * 2))[b"name"]: dict(zip(*[iter(x)] * 2)) for x in r.call("XINFO", "CONSUMERS", "s", "g")}
    assert sorted(info) == [b"alice", b"bob", b"carol"]
    assert info[b"bob"][b"pending"] == 2 and info[b"carol"][b"pending"] == 0


@requires("XPENDING", "XCLAIM", "XAUTOCLAIM")
def test_xpending_xclaim_xautoclaim(r):
    fill(r, "s", 5)
    r.call("XGROUP", "CREATE", "s", "g", "0")
    r.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    ext = r.call("XPENDING", "s", "g", "-", "+", "10")
    assert [e[0] for e in ext] == [b"1-1", b"1-2", b"2-0", b"2-1", b"2-2"]
    assert all(e[1] == b"alice" and e[3] == 1 for e in ext)
    assert r.call("XPENDING", "s", "g", "(1-1", "2-1", "10", "alice")[0][0] == b"1-2"
    assert r.call("XPENDING", "s", "g", "-", "+", "10", "nobody") == []
    time.sleep(0.06)
    assert len(r.call("XPENDING", "s", "g", "IDLE", "50", "-", "+", "10")) == 5
    assert r.call("XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10") == []
    assert err(r.call("XPENDING", "s", "nog")).startswith("NOGROUP")
    # XCLAIM: moves ownership, increments the delivery count
    claimed = r.call("XCLAIM", "s", "g", "bob", "10", "1-1", "1-2")
    assert [e[0] for e in claimed] == [b"1-1", b"1-2"]
    assert r.call("XCLAIM", "s", "g", "bob", "100000", "2-0") == []
    assert r.call("XCLAIM", "s", "g", "bob", "0", "2-0", "JUSTID") == [b"2-0"]
    ext = {e[0]: e for e in r.call("XPENDING", "s", "g", "-", "+", "10")}
    assert ext[b"1-1"][1] == b"bob" and ext[b"1-1"][3] == 2
    assert ext[b"2-0"][1] == b"bob" and ext[b"2-0"][3] == 1
    assert r.call("XCLAIM", "s", "g", "bob", "0", "2-1", "RETRYCOUNT", "7", "JUSTID") == [b"2-1"]
    assert {e[0]: e for e in r.call("XPENDING", "s", "g", "-", "+", "10")}[b"2-1"][3] == 7
    assert "Unrecognized XCLAIM option" in err(r.call("XCLAIM", "s", "g", "bob", "0", "2-1", "BOGUS"))
    # FORCE creates a pending entry for an entry never delivered
    r.call("XADD", "s", "9-0", "x", "1")
    assert r.call("XCLAIM", "s", "g", "bob", "0", "9-0", "FORCE", "JUSTID") == [b"9-0"]
    # XAUTOCLAIM iterates the PEL; deleted entries are reported and dropped
    r.call("XDEL", "s", "1-2")
    rep = r.call("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "2")
    assert rep[0] == b"2-0" and [e[0] for e in rep[1]] == [b"1-1"] and rep[2] == [b"1-2"]
    rep = r.call("XAUTOCLAIM", "s", "g", "carol", "0", rep[0], "JUSTID")
    assert rep == [b"0-0", [b"2-0", b"2-1", b"2-2", b"9-0"], []]
    assert "COUNT must be > 0" in err(r.call("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"))
    assert r.call("XPENDING", "s", "g")[3] == [[b"carol", b"5"]]


@requires("XREADGROUP")
def test_xreadgroup_block_served_across_threads(server, r):
    r.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w1, w2 = conn(server), conn(server)
    w1.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)  # w1 first in the queue (they run on different threads)
    w2.send("XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    r.call("XADD", "s", "1-0", "x", "1")
    # the first blocked consumer gets the entry, the second keeps waiting
    assert w1.read() == [[b"s", [entry("1-0", "x", "1")]]]
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.call("XADD", "s", "2-0", "x", "2")
    assert w2.read() == [[b"s", [entry("2-0", "x", "2")]]]
    assert r.call("XPENDING", "s", "g")[3] == [[b"a", b"1"], [b"b", b"1"]]
    # key deleted: XREADGROUP waiters run again and fail as a new call
    # would (Redis 7.2; 7.0 answered "UNBLOCKED the stream key no longer
    # exists")
    w1.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.call("DEL", "s")
    assert err(w1.read()) == "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"
    # group destroyed: NOGROUP
    r.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w2.send("XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.call("XGROUP", "DESTROY", "s", "g")
    assert err(w2.read()).startswith("NOGROUP")
    # timeout
    r.call("XGROUP", "CREATE", "s", "g", "$")
    w2.send("XREADGROUP", "GROUP", "g", "b", "BLOCK", "50", "STREAMS", "s", ">")
    assert raw_line(w2) == b"*-1"
    w1.close()
    w2.close()


@requires("XREADGROUP")
def test_blocked_xreadgroup_type_change_and_nokey_count(server, r):
    # Redis 7.2: a blocked XREADGROUP runs again when its key changes and
    # fails as a new call would; INFO counts the keys such waiters block on.
    def nokey():
        text = r.call("INFO", "clients").decode()
        return int(re.search(r"total_blocking_keys_on_nokey:(\d+)", text).group(1))
    r.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    w1, w2 = conn(server), conn(server)
    w2.send("BLPOP", "s2", "0")
    wait_blocked(r, 1)
    assert nokey() == 0  # BLPOP and XREAD waiters do not count
    w1.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    assert nokey() == 1
    r.call("SET", "s", "x")
    assert err(w1.read()).startswith("WRONGTYPE")
    assert nokey() == 0
    r.call("LPUSH", "s2", "v")
    assert w2.read() == [b"s2", b"v"]
    w1.close()
    w2.close()


@requires("XREADGROUP")
def test_consumer_seen_and_active_time(r):
    # Redis 7.2: seen-time moves with every read or claim attempt,
    # active-time only when one got entries (-1 before the first).
    def consumer():
        c = r.call("XINFO", "CONSUMERS", "s", "g")[0]
        return dict(zip(c[::2], c[1::2]))

    def full():
        f = r.call("XINFO", "STREAM", "s", "FULL")
        f = dict(zip(f[::2], f[1::2]))
        g = dict(zip(f[b"groups"][0][::2], f[b"groups"][0][1::2]))
        c = g[b"consumers"][0]
        return dict(zip(c[::2], c[1::2]))
    r.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert r.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">") is None
    time.sleep(0.1)
    c = consumer()
    assert c[b"name"] == b"alice" and c[b"idle"] >= 100 and c[b"inactive"] == -1
    assert full()[b"active-time"] == -1
    r.call("XADD", "s", "1-0", "f", "v")
    r.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")
    c = consumer()
    assert c[b"idle"] < 80 and 0 <= c[b"inactive"] < 80
    time.sleep(0.1)
    r.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")  # nothing new
    c = consumer()
    assert c[b"idle"] < 80 and c[b"inactive"] >= 100
    # XCLAIM of an entry makes the claimer active.
    r.call("XCLAIM", "s", "g", "bob", "0", "1-0")
    bob = [dict(zip(x[::2], x[1::2])) for x in r.call("XINFO", "CONSUMERS", "s", "g")][1]
    assert bob[b"name"] == b"bob" and 0 <= bob[b"inactive"] < 80
    # DUMP / RESTORE (RDB 11) keeps both times.
    before = full()
    r.call("RESTORE", "s2", "0", r.call("DUMP", "s"))
    f = r.call("XINFO", "STREAM", "s2", "FULL")
    f = dict(zip(f[::2], f[1::2]))
    g = dict(zip(f[b"groups"][0][::2], f[b"groups"][0][1::2]))
    after = dict(zip(g[b"consumers"][0][::2], g[b"consumers"][0][1::2]))
    assert (after[b"seen-time"], after[b"active-time"]) == (before[b"seen-time"], before[b"active-time"])


@pytest.mark.skipif(MODE == "redis" or not shutil.which("redis-server"), reason="needs redis-server 7.0")
def test_consumer_active_time_from_a_redis_70_payload(r):
    # Before RDB 11 a consumer had one time: it becomes both (as Redis 7.2).
    port = free_port()
    d = tempfile.mkdtemp(prefix="hotkv-stream-ref-")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ref = None
        deadline = time.time() + 10
        while ref is None:
            try:
                ref = Resp(port)
            except OSError:
                assert time.time() < deadline, "redis-server did not start"
                time.sleep(0.05)
        ref.call("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
        ref.call("XADD", "x", "1-1", "f", "v")
        ref.call("XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "x", ">")
        payload = ref.call("DUMP", "x")
        ref.close()
    finally:
        p.terminate()
        p.wait(10)
        shutil.rmtree(d, ignore_errors=True)
    assert r.call("RESTORE", "x", "0", payload) == "OK"
    f = r.call("XINFO", "STREAM", "x", "FULL")
    f = dict(zip(f[::2], f[1::2]))
    g = dict(zip(f[b"groups"][0][::2], f[b"groups"][0][1::2]))
    c = dict(zip(g[b"consumers"][0][::2], g[b"consumers"][0][1::2]))
    assert c[b"name"] == b"Alice" and c[b"seen-time"] == c[b"active-time"] > 0


@requires("XREADGROUP")
def test_xreadgroup_lag_and_entries_read(r):
    fill(r, "s", 5)
    r.call("XGROUP", "CREATE", "s", "g", "0")
    g = dict(zip(*[iter(r.call("XINFO", "GROUPS", "s")[0])] * 2))
    assert g[b"entries-read"] is None and g[b"lag"] == 5
    r.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    g = dict(zip(*[iter(r.call("XINFO", "GROUPS", "s")[0])] * 2))
    assert g[b"entries-read"] == 2 and g[b"lag"] == 3 and g[b"last-delivered-id"] == b"1-2"
    r.call("XDEL", "s", "2-2")
    g = dict(zip(*[iter(r.call("XINFO", "GROUPS", "s")[0])] * 2))
    assert g[b"lag"] is None


# ---------------------------------------------------- keyspace events ---
@requires("XADD")
def test_keyspace_events(server, r):
    if not has_config(server, "notify-keyspace-events"):
        pytest.skip("no keyspace notifications in this server yet")
    r.call("CONFIG", "SET", "notify-keyspace-events", "Et")
    sub = conn(server)
    try:
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")
        r.call("XADD", "s", "MAXLEN", "1", "1-0", "a", "1")
        r.call("XADD", "s", "MAXLEN", "1", "2-0", "a", "1")
        r.call("XADD", "s", "3-0", "a", "1")
        r.call("XTRIM", "s", "MAXLEN", "1")
        r.call("XTRIM", "s", "MAXLEN", "1")  # nothing to trim: no event
        r.call("XDEL", "s", "3-0")
        r.call("XSETID", "s", "5-0")
        r.call("XGROUP", "CREATE", "s", "g", "$")
        r.call("XGROUP", "CREATECONSUMER", "s", "g", "c")
        r.call("XGROUP", "SETID", "s", "g", "0")
        r.call("XGROUP", "DELCONSUMER", "s", "g", "c")
        r.call("XGROUP", "DESTROY", "s", "g")
        want = ["xadd", "xadd", "xtrim", "xadd", "xtrim", "xdel", "xsetid", "xgroup-create", "xgroup-createconsumer",
                "xgroup-setid", "xgroup-delconsumer", "xgroup-destroy"]
        got = []
        while len(got) < len(want):
            msg = sub.read()
            assert msg[0] == b"pmessage" and msg[3] == b"s"
            got.append(msg[2].decode().split(":", 1)[1])
        assert got == want
    finally:
        r.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()


@requires("XADD", "WATCH")
def test_stream_writes_touch_watch(server, r):
    other = conn(server)
    try:
        for cmd in (("XADD", "s", "*", "a", "1"), ("XDEL", "s", "1-0"), ("XTRIM", "s", "MAXLEN", "0")):
            r.call("XADD", "s", "1-0", "a", "1") if cmd[0] != "XADD" else None
            assert r.call("WATCH", "s") == "OK"
            other.call(*cmd)
            r.call("MULTI")
            r.call("PING")
            assert r.call("EXEC") is None, cmd
            r.call("DEL", "s")
    finally:
        other.close()
