"""Blocking commands across threads (issue 4): BLPOP/BRPOP/BLMOVE/
BRPOPLPUSH/BLMPOP/BZPOPMIN/BZPOPMAX/BZMPOP served by writes from other
connections (other worker threads), first blocked first served, timeouts,
CLIENT UNBLOCK, keys deleted or changing type, waiters that disconnect,
and a many-thread stress test that checks no element is lost or duplicated.

The server runs with 4 worker threads so that connections land on
different workers (SO_REUSEPORT spreads them)."""
import socket
import threading
import time

import pytest

from conftest import MODE, Resp, Server
from helpers import requires


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


def conn(server, proto=2):
    c = Resp(server.port, timeout=10)
    if proto == 3:
        c.call("HELLO", "3")
    return c


def blocked_clients(r):
    info = r.call("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    raise AssertionError("no blocked_clients in INFO")


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked_clients(r) == n:
            return
        time.sleep(0.005)
    raise AssertionError("expected %d blocked clients, INFO says %d" % (n, blocked_clients(r)))


def raw_reply(c, timeout=5.0):
    """The next complete reply's raw bytes (for *-1 vs $-1 vs _)."""
    c.s.settimeout(timeout)
    while b"\r\n" not in c.buf:
        c.buf += c.s.recv(65536)
    line, rest = c.buf.split(b"\r\n", 1)
    c.buf = rest
    return line


@pytest.fixture
def r(server):
    c = conn(server)
    c.call("FLUSHALL")
    yield c
    c.close()


@requires("BLPOP", "LPUSH")
def test_blpop_served_by_push_from_other_connection(server, r):
    waiter = conn(server)
    waiter.send("BLPOP", "bl", "0")
    wait_blocked(r, 1)
    assert r.call("RPUSH", "bl", "a", "b") == 2
    assert waiter.read() == [b"bl", b"a"]
    # Served before the pusher's next command: only b is left.
    assert r.call("LRANGE", "bl", "0", "-1") == [b"b"]
    assert blocked_clients(r) == 0


@requires("BLPOP", "LPUSH")
def test_first_blocked_first_served(server, r):
    ws = []
    for i in range(4):
        w = conn(server)
        w.send("BLPOP", "fifo", "0")
        wait_blocked(r, i + 1)
        ws.append(w)
    for i in range(4):
        r.call("RPUSH", "fifo", "e%d" % i)
    for i, w in enumerate(ws):
        assert w.read() == [b"fifo", b"e%d" % i]
    assert r.call("EXISTS", "fifo") == 0


@requires("BLPOP", "LPUSH")
def test_one_push_of_many_serves_waiters_in_order(server, r):
    ws = []
    for i in range(3):
        w = conn(server)
        w.send("BRPOP", "many", "0")
        wait_blocked(r, i + 1)
        ws.append(w)
    # One RPUSH of 3: each waiter pops from the right in blocking order.
    r.call("RPUSH", "many", "x", "y", "z")
    assert [w.read()[1] for w in ws] == [b"z", b"y", b"x"]


@requires("BLPOP", "LPUSH")
def test_multiple_keys_serves_the_one_pushed(server, r):
    w = conn(server)
    w.send("BLPOP", "k1", "k2", "k3", "0")
    wait_blocked(r, 1)
    r.call("LPUSH", "k3", "v3")
    assert w.read() == [b"k3", b"v3"]


@requires("BLPOP")
def test_timeout_double_and_null_replies(server, r):
    w = conn(server)
    t0 = time.time()
    w.send("BLPOP", "nokey", "0.2")
    assert raw_reply(w) == b"*-1"
    dt = time.time() - t0
    assert 0.15 <= dt < 2.0
    # Redis answers every list/zset timeout with a null array, BLMOVE too.
    w.send("BRPOPLPUSH", "nokey", "dst", "0.05")
    assert raw_reply(w) == b"*-1"
    w.send("BLMOVE", "nokey", "dst", "LEFT", "RIGHT", "0.05")
    assert raw_reply(w) == b"*-1"
    w3 = conn(server, 3)
    w3.send("BLPOP", "nokey", "0.05")
    assert raw_reply(w3) == b"_"
    assert blocked_clients(r) == 0


@requires("BLPOP")
def test_timeout_errors(r):
    assert r.call("BLPOP", "k", "abc") == ("error", "ERR timeout is not a float or out of range")
    assert r.call("BLPOP", "k", "-1") == ("error", "ERR timeout is negative")
    assert r.call("BLPOP", "k", "inf")[0] == "error"


@requires("BLPOP", "LPUSH")
def test_zero_timeout_blocks_forever(server, r):
    w = conn(server)
    w.send("BLPOP", "forever", "0")
    wait_blocked(r, 1)
    time.sleep(0.5)
    assert blocked_clients(r) == 1
    r.call("LPUSH", "forever", "late")
    assert w.read() == [b"forever", b"late"]


@requires("BLPOP")
def test_client_unblock(server, r):
    w = conn(server)
    wid = w.call("CLIENT", "ID")
    w.send("BLPOP", "ub", "0")
    wait_blocked(r, 1)
    assert b"flags=b" in r.call("CLIENT", "LIST", "ID", wid)
    assert r.call("CLIENT", "UNBLOCK", wid) == 1
    assert raw_reply(w) == b"*-1"
    w.send("BLPOP", "ub", "0")
    wait_blocked(r, 1)
    assert r.call("CLIENT", "UNBLOCK", wid, "ERROR") == 1
    assert w.read() == ("error", "UNBLOCKED client unblocked via CLIENT UNBLOCK")
    assert r.call("CLIENT", "UNBLOCK", wid) == 0
    assert r.call("CLIENT", "UNBLOCK", wid, "bogus") == ("error", "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    assert w.call("PING") == "PONG"


@requires("BLPOP", "LPUSH")
def test_pipelined_commands_wait_for_the_blocked_one(server, r):
    w = conn(server)
    w.s.sendall(b"*3\r\n$5\r\nBLPOP\r\n$2\r\npp\r\n$1\r\n0\r\n*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n")
    wait_blocked(r, 1)
    r.call("RPUSH", "pp", "v")
    assert w.read() == [b"pp", b"v"]
    assert w.read() == "PONG"
    assert w.read() == b"hi"


@requires("BLPOP", "LPUSH")
def test_key_deleted_or_wrong_type_keeps_waiting(server, r):
    w = conn(server)
    w.send("BLPOP", "wt", "0")
    wait_blocked(r, 1)
    r.call("SET", "wt", "string")
    r.call("DEL", "wt")
    r.call("SET", "wt", "again")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.call("DEL", "wt")
    r.call("RPUSH", "wt", "ok")
    assert w.read() == [b"wt", b"ok"]


@requires("BLPOP", "LPUSH")
def test_waiter_is_not_served_a_key_that_expired_inside_exec(server, r):
    # The waiter runs at its own instant, not at the start of the EXEC that
    # woke it: a list that expired meanwhile is deleted, nothing is served.
    w = conn(server)
    w.send("BLPOP", "exp", "0")
    wait_blocked(r, 1)
    r.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        assert r.call("MULTI") == "OK"
        for cmd in (("RPUSH", "exp", "hello"), ("PEXPIRE", "exp", "100"), ("DEBUG", "SLEEP", "0.2")):
            assert r.call(*cmd) == "QUEUED"
        assert r.call("EXEC") == [1, 1, "OK"]
        time.sleep(0.05)
        assert blocked_clients(r) == 1
        # The wake-up only looked (Redis 7.2's LOOKUP_NOEFFECTS; Debian's
        # redis-server 7.0 still deleted it there): the expired list is
        # still there until a command touches it.
        if MODE != "redis":
            assert r.call("DBSIZE") == 1
        assert r.call("EXISTS", "exp") == 0
        assert r.call("DBSIZE") == 0
        r.call("RPUSH", "exp", "fresh")
        assert w.read() == [b"exp", b"fresh"]
    finally:
        r.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    w.close()


@requires("BLPOP", "LPUSH")
def test_waiter_that_disconnects_loses_nothing(server, r):
    w = conn(server)
    w.send("BLPOP", "dc", "0")
    wait_blocked(r, 1)
    w.close()
    wait_blocked(r, 0)
    r.call("RPUSH", "dc", "kept")
    assert r.call("LRANGE", "dc", "0", "-1") == [b"kept"]


@requires("BLPOP", "LPUSH", "RENAME")
def test_key_renamed_or_moved_into_place_serves(server, r):
    w = conn(server)
    w.send("BLPOP", "target", "0")
    wait_blocked(r, 1)
    r.call("RPUSH", "src", "moved")
    r.call("RENAME", "src", "target")
    assert w.read() == [b"target", b"moved"]
    w.send("BLPOP", "target2", "0")
    wait_blocked(r, 1)
    r.call("SELECT", "1")
    r.call("RPUSH", "target2", "fromdb1")
    r.call("MOVE", "target2", "0")
    r.call("SELECT", "0")
    assert w.read() == [b"target2", b"fromdb1"]


@requires("BLMOVE", "BLPOP")
def test_blmove_chain_feeds_next_waiter(server, r):
    a = conn(server)
    b = conn(server)
    a.send("BLMOVE", "src", "mid", "LEFT", "RIGHT", "0")
    wait_blocked(r, 1)
    b.send("BLPOP", "mid", "0")
    wait_blocked(r, 2)
    r.call("RPUSH", "src", "token")
    assert a.read() == b"token"
    assert b.read() == [b"mid", b"token"]
    assert r.call("EXISTS", "src", "mid") == 0


@requires("BLMPOP")
def test_blmpop_served_with_count(server, r):
    w = conn(server)
    w.send("BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2")
    wait_blocked(r, 1)
    r.call("RPUSH", "m2", "a", "b", "c")
    assert w.read() == [b"m2", [b"c", b"b"]]


@requires("BZPOPMIN", "ZADD")
def test_bzpopmin_and_bzpopmax_served_by_zadd(server, r):
    w = conn(server)
    w.send("BZPOPMIN", "z", "0")
    wait_blocked(r, 1)
    r.call("ZADD", "z", "2", "b", "1", "a")
    assert w.read() == [b"z", b"a", b"1"]
    w.send("BZPOPMAX", "z", "0")
    assert w.read() == [b"z", b"b", b"2"]
    w3 = conn(server, 3)
    w3.send("BZPOPMIN", "z3", "0")
    wait_blocked(r, 1)
    r.call("ZADD", "z3", "1.5", "m")
    assert w3.read() == [b"z3", b"m", 1.5]


@requires("BZMPOP", "ZADD")
def test_bzmpop_served(server, r):
    w = conn(server)
    w.send("BZMPOP", "0", "1", "zz", "MAX", "COUNT", "5")
    wait_blocked(r, 1)
    r.call("ZADD", "zz", "1", "a", "2", "b")
    assert w.read() == [b"zz", [[b"b", b"2"], [b"a", b"1"]]]


@requires("BLPOP", "BZPOPMIN", "LPUSH")
def test_list_waiter_not_served_by_zset_and_vice_versa(server, r):
    lw = conn(server)
    lw.send("BLPOP", "mixed", "0")
    wait_blocked(r, 1)
    r.call("ZADD", "mixed", "1", "m")
    time.sleep(0.05)
    assert blocked_clients(r) == 1
    r.call("DEL", "mixed")
    r.call("LPUSH", "mixed", "l")
    assert lw.read() == [b"mixed", b"l"]


@requires("BLPOP", "LPUSH")
def test_info_counts_blocked_clients_and_keys(server, r):
    ws = []
    for i in range(3):
        w = conn(server)
        w.send("BLPOP", "ik%d" % (i % 2), "ikshared", "5")
        wait_blocked(r, i + 1)
        ws.append(w)
    info = r.call("INFO", "clients").decode()
    has_keys = "total_blocking_keys:" in info  # Redis 7.2+
    if has_keys:
        assert "total_blocking_keys:3" in info
    assert "clients_in_timeout_table:3" in info
    for i, w in enumerate(ws):
        r.call("RPUSH", "ikshared", "v")
        assert w.read() == [b"ikshared", b"v"]
    info = r.call("INFO", "clients").decode()
    assert "clients_in_timeout_table:0" in info
    if has_keys:
        assert "total_blocking_keys:0" in info


@requires("BLPOP", "LPUSH")
def test_many_threads_no_element_lost_or_duplicated(server, r):
    """Poppers block on 4 keys on every worker while pushers push unique
    elements from other connections: every element is popped exactly once
    (or is still in a list at the end)."""
    keys = ["st0", "st1", "st2", "st3"]
    npush, per = 6, 400
    got = []
    got_lock = threading.Lock()
    stop = threading.Event()
    errors = []

    def popper(i):
        c = conn(server)
        try:
            while not stop.is_set():
                cmd = "BLPOP" if i % 2 else "BRPOP"
                rep = c.call(cmd, *(keys[i % 4:] + keys[:i % 4]), "0.05")
                if rep is None:
                    continue
                if not isinstance(rep, list):
                    errors.append(rep)
                    return
                with got_lock:
                    got.append(rep[1])
        finally:
            c.close()

    def pusher(i):
        c = conn(server)
        try:
            for j in range(per):
                k = keys[(i + j) % 4]
                vals = ["p%d-%d" % (i, j)]
                rep = c.call("RPUSH" if j % 2 else "LPUSH", k, *vals)
                if not isinstance(rep, int):
                    errors.append(rep)
        finally:
            c.close()

    poppers = [threading.Thread(target=popper, args=(i,)) for i in range(8)]
    pushers = [threading.Thread(target=pusher, args=(i,)) for i in range(npush)]
    for t in poppers:
        t.start()
    for t in pushers:
        t.start()
    for t in pushers:
        t.join(60)
    time.sleep(0.3)
    stop.set()
    for t in poppers:
        t.join(60)
    assert not errors
    left = []
    for k in keys:
        left += r.call("LRANGE", k, "0", "-1")
    everything = got + left
    expected = {b"p%d-%d" % (i, j) for i in range(npush) for j in range(per)}
    assert len(everything) == len(expected), "lost or duplicated elements"
    assert set(everything) == expected
    assert len(got) > 0
    wait_blocked(r, 0)
