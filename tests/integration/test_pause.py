"""CLIENT PAUSE / CLIENT UNPAUSE (issue 17), with Redis 7's rules: WRITE
postpones what may write or replicate (scripts by their declared flags, an
EXEC by its queue), ALL postpones everything, both stop expiry and
eviction; the longer end and the stricter mode win; postponed commands run
in arrival order once the pause ends.  Runs against redis-server too
(HOTKV_SERVER=redis)."""
import time

import pytest

from conftest import MODE, Resp, Server


def blocked(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked(r) >= n:
            return
        time.sleep(0.01)
    raise AssertionError("blocked_clients never reached %d (now %d)" % (n, blocked(r)))


def no_reply_within(c, seconds=0.15):
    """True when nothing arrives on the raw client for a while."""
    c.s.settimeout(seconds)
    try:
        data = c.s.recv(1, 0x2)  # MSG_PEEK
        return not data
    except (TimeoutError, OSError):
        return True
    finally:
        c.s.settimeout(5.0)


@pytest.fixture
def unpause(r):
    yield
    r.execute_command("CLIENT", "UNPAUSE")


def test_errors(r, unpause):
    with pytest.raises(Exception, match="CLIENT PAUSE mode must be WRITE or ALL"):
        r.execute_command("CLIENT", "PAUSE", 100, "READ")
    with pytest.raises(Exception, match="timeout is not an integer or out of range"):
        r.execute_command("CLIENT", "PAUSE", "abc")
    with pytest.raises(Exception, match="timeout is negative"):
        r.execute_command("CLIENT", "PAUSE", -1)
    with pytest.raises(Exception, match="wrong number of arguments|unknown subcommand"):
        r.execute_command("CLIENT", "PAUSE", 100, "WRITE", "x")
    with pytest.raises(Exception, match="wrong number of arguments"):
        r.execute_command("CLIENT", "UNPAUSE", "x")
    assert r.execute_command("CLIENT", "UNPAUSE") in (b"OK", "OK", True)


def test_reads_not_paused_by_write(server, r, unpause):
    r.set("foo", "bar")
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    assert c.call("GET", "foo") == b"bar"
    assert c.call("PING") == "PONG"
    assert blocked(r) == 0
    c.close()


def test_write_waits_until_unpause(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    c.send("SET", "foo", "bar")
    wait_blocked(r, 1)
    assert r.get("foo") is None
    assert no_reply_within(c)
    # CLIENT LIST shows it blocked (flag b).
    mine = [l for l in r.execute_command("CLIENT", "LIST").splitlines() if "cmd=" in l and " flags=b" in l]
    assert mine, r.execute_command("CLIENT", "LIST")
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"
    assert r.get("foo") == "bar"
    assert blocked(r) == 0
    c.close()


def test_pipelined_commands_keep_their_order(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    # The GET behind the paused SET waits too: replies stay in order.
    c.send("SET", "k", "1")
    c.send("GET", "k")
    c.send("INCR", "k")
    wait_blocked(r, 1)
    assert no_reply_within(c)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"
    assert c.read() == b"1"
    assert c.read() == 2
    c.close()


def test_pause_all_postpones_reads_until_the_end(server, r, unpause):
    r.set("foo", "bar")
    c = Resp(server.port)
    t0 = time.time()
    r.execute_command("CLIENT", "PAUSE", 300, "ALL")
    # A shorter WRITE pause does not shorten or weaken the ALL one.
    r.execute_command("CLIENT", "PAUSE", 20, "WRITE")
    time.sleep(0.05)
    assert c.call("GET", "foo") == b"bar"
    assert time.time() - t0 >= 0.28
    c.close()


def test_shorter_new_pause_keeps_the_old_end(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 60000, "WRITE")
    r.execute_command("CLIENT", "PAUSE", 10, "WRITE")
    time.sleep(0.1)
    c = Resp(server.port)
    c.send("SET", "foo", "bar")
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"
    c.close()


def test_pause_expires_by_itself(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 200, "WRITE")
    c = Resp(server.port)
    t0 = time.time()
    assert c.call("SET", "foo", "bar") == "OK"
    assert time.time() - t0 >= 0.15
    c.close()


def test_may_replicate_commands_are_paused(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    c.send("PUBLISH", "ch", "msg")
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == 0
    c.close()


def test_multi_exec(server, r, unpause):
    # Read-only transactions run; a transaction with a write waits at EXEC.
    ro = Resp(server.port)
    wr = Resp(server.port)
    assert wr.call("MULTI") == "OK"
    assert wr.call("SET", "foo", "bar") == "QUEUED"
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    assert ro.call("MULTI") == "OK"
    assert ro.call("GET", "foo") == "QUEUED"
    assert ro.call("EXEC") == [None]
    assert blocked(r) == 0
    wr.send("EXEC")
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert wr.read() == ["OK"]
    ro.close()
    wr.close()


def test_scripts_by_their_flags(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    ro = Resp(server.port)
    assert ro.call("EVAL", "#!lua flags=no-writes\nreturn 2", 0) == 2
    assert ro.call("EVAL_RO", "return 3", 0) == 3
    assert blocked(r) == 0
    a = Resp(server.port)
    b = Resp(server.port)
    a.send("EVAL", "return 1", 0)
    b.send("EVAL", "#!lua\nreturn 13", 0)
    wait_blocked(r, 2)
    r.execute_command("CLIENT", "UNPAUSE")
    assert a.read() == 1
    assert b.read() == 13
    for c in (ro, a, b):
        c.close()


def test_arity_errors_answer_at_once(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    reply = c.call("SET", "foo")
    assert reply[0] == "error" and "wrong number of arguments for 'set' command" in reply[1]
    c.close()


def test_pause_starts_at_the_end_of_a_transaction(server, r, unpause):
    c = Resp(server.port)
    assert c.call("MULTI") == "OK"
    c.call("SET", "foo1{t}", "bar")
    c.call("CLIENT", "PAUSE", 60000, "WRITE")
    c.call("SET", "foo2{t}", "bar")
    assert c.call("EXEC") == ["OK", "OK", "OK"]
    d = Resp(server.port)
    d.send("SET", "foo3{t}", "bar")
    wait_blocked(r, 1)
    assert r.get("foo1{t}") == "bar"
    assert r.get("foo2{t}") == "bar"
    assert r.get("foo3{t}") is None
    r.execute_command("CLIENT", "UNPAUSE")
    assert d.read() == "OK"
    c.close()
    d.close()


def test_expiry_stops_during_a_pause(server, r, unpause):
    before = int(r.info("stats")["expired_keys"])
    p = r.pipeline(transaction=True)
    p.set("foo{t}", "bar", px=10)
    p.set("bar{t}", "foo", px=10)
    p.execute_command("CLIENT", "PAUSE", 50000, "WRITE")
    p.execute()
    time.sleep(0.3)  # the active cycle would have removed them by now
    assert r.get("foo{t}") is None and r.get("bar{t}") is None
    assert int(r.info("stats")["expired_keys"]) == before
    r.execute_command("CLIENT", "UNPAUSE")
    r.get("foo{t}")
    r.get("bar{t}")
    deadline = time.time() + 3
    while int(r.info("stats")["expired_keys"]) < before + 2 and time.time() < deadline:
        time.sleep(0.02)
    assert int(r.info("stats")["expired_keys"]) == before + 2


def test_closing_a_postponed_client(server, r, unpause):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    c = Resp(server.port)
    c.send("SET", "gone", "1")
    wait_blocked(r, 1)
    c.close()
    deadline = time.time() + 3
    while blocked(r) and time.time() < deadline:
        time.sleep(0.01)
    assert blocked(r) == 0
    r.execute_command("CLIENT", "UNPAUSE")
    assert r.ping()
    assert r.get("gone") is None


@pytest.mark.skipif(MODE == "redis", reason="HotKV worker threads")
def test_writers_on_every_thread():
    s = Server(threads=4)
    try:
        r = s.client(decode_responses=True)
        r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
        writers = [Resp(s.port) for _ in range(8)]
        for i, w in enumerate(writers):
            w.send("INCR", "counter")
            w.send("SET", "w%d" % i, i)
        wait_blocked(r, 8)
        assert r.get("counter") is None
        assert all(no_reply_within(w, 0.05) for w in writers)
        r.execute_command("CLIENT", "UNPAUSE")
        seen = sorted(w.read() for w in writers)
        assert seen == list(range(1, 9))
        assert all(w.read() == "OK" for w in writers)
        assert r.get("counter") == "8"
        assert blocked(r) == 0
        for w in writers:
            w.close()
        r.close()
    finally:
        assert s.stop() == 0
