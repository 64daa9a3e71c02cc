"""MONITOR (issue 17): the line format, what is shown (scripts as "lua",
EXEC's commands, AUTH/HELLO redacted, admin commands hidden), the keyspace
ban on a monitor connection, RESET, and the order per slot with writers on
every worker thread.  Runs against redis-server too (HOTKV_SERVER=redis)."""
import re
import time

import pytest

from conftest import MODE, Resp, Server

LINE = re.compile(r'^\d+\.\d{6} \[(\d+) ([^\]]+)\] (.*)$')


def monitor(port):
    m = Resp(port)
    assert m.call("MONITOR") == "OK"
    return m


def next_line(m):
    reply = m.read()
    assert isinstance(reply, str), reply
    got = LINE.match(reply)
    assert got, reply
    return got.group(1), got.group(2), got.group(3)


def lines_until(m, last_args, limit=200):
    out = []
    for _ in range(limit):
        db, who, args = next_line(m)
        out.append((db, who, args))
        if args == last_args:
            return out
    raise AssertionError("never saw %s in %s" % (last_args, out))


def test_format_and_quoting(server, r):
    m = monitor(server.port)
    c = Resp(server.port)
    c.call("SET", "k", b'a "b"\\c\n\x01\xff')
    c.call("SELECT", 3)
    c.call("GET", "k")
    db, who, args = next_line(m)
    assert db == "0" and re.match(r"127\.0\.0\.1:\d+$", who)
    assert args == r'"set" "k" "a \"b\"\\c\n\x01\xff"' or args == r'"SET" "k" "a \"b\"\\c\n\x01\xff"'
    db, who, args = next_line(m)
    assert args.lower() == '"select" "3"'
    db, who, args = next_line(m)
    assert db == "3" and args.lower() == '"get" "k"'
    c.close()
    m.close()


def test_scripts_exec_and_hidden_commands(server, r):
    m = monitor(server.port)
    c = Resp(server.port)
    c.call("EVAL", "return redis.call('set', KEYS[1], 'v')", 1, "sk")
    c.call("CONFIG", "GET", "maxmemory")  # admin: not shown
    c.call("MULTI")
    c.call("INCR", "n")
    c.call("EXEC")
    c.call("PING", "end")
    seen = lines_until(m, '"PING" "end"')
    plain = [(who == "lua", a.lower()) for _, who, a in seen]
    # EVAL is shown when it starts, then what its script runs, as lua.
    i = plain.index((False, '"eval" "return redis.call(\'set\', keys[1], \'v\')" "1" "sk"'))
    assert plain[i + 1] == (True, '"set" "sk" "v"')
    assert not any("config" in a for _, a in plain)
    assert [a for _, a in plain if a in ('"multi"', '"incr" "n"', '"exec"')] == ['"multi"', '"incr" "n"', '"exec"']
    c.close()
    m.close()


def test_auth_and_hello_are_redacted(server, r):
    m = monitor(server.port)
    c = Resp(server.port)
    c.call("AUTH", "user", "secret")
    c.call("HELLO", 2, "AUTH", "default", "secret", "SETNAME", "auth")
    c.call("PING", "end")
    seen = [a for _, _, a in lines_until(m, '"PING" "end"')]
    assert not any("secret" in a for a in seen), seen
    assert '"auth" "(redacted)" "(redacted)"' in [a.lower() for a in seen]
    assert any(a.lower().startswith('"hello" "2" "auth" "(redacted)" "(redacted)" "setname" "auth"') for a in seen), seen
    c.close()
    m.close()


def test_monitor_connection_rules(server, r):
    m = monitor(server.port)
    assert m.call("GET", "x") == ("error", "ERR Replica can't interact with the keyspace")
    assert m.call("RESET") == "RESET"
    assert m.call("GET", "x") is None
    me = m.call("CLIENT", "ID")
    mine = [l for l in r.execute_command("CLIENT", "LIST").splitlines() if l.startswith("id=%d " % me)]
    assert mine and "flags=O" not in mine[0]
    m2 = monitor(server.port)
    assert [l for l in r.execute_command("CLIENT", "LIST").splitlines() if "flags=O" in l]
    c = Resp(server.port)
    assert c.call("MULTI") == "OK"
    assert c.call("MONITOR") == "QUEUED"
    reply = c.call("EXEC")  # refused when EXEC runs it (a transaction cannot block)
    assert reply[0][0] == "error" and "MONITOR isn't allowed for DENY BLOCKING client" in reply[0][1]
    m.close()
    m2.close()
    c.close()


@pytest.mark.skipif(MODE == "redis", reason="HotKV worker threads")
def test_order_per_key_with_writers_on_every_thread():
    s = Server(threads=4)
    try:
        m = monitor(s.port)
        writers = [Resp(s.port) for _ in range(8)]
        n = 200
        for i in range(n):
            for w in writers:
                w.send("INCR", "ctr{x}")
        for w in writers:
            for _ in range(n):
                w.read()
        # Every INCR of the one key appears once; together with the final
        # value they are in execution order (each a +1 step).
        shown = 0
        deadline = time.time() + 10
        while shown < n * len(writers) and time.time() < deadline:
            _, _, args = next_line(m)
            if args.lower() == '"incr" "ctr{x}"':
                shown += 1
        assert shown == n * len(writers)
        r = s.client(decode_responses=True)
        assert r.get("ctr{x}") == str(n * len(writers))
        # A slow monitor does not hold anything up: close it, server fine.
        m.close()
        for w in writers:
            w.close()
        assert r.ping()
        r.close()
    finally:
        assert s.stop() == 0


@pytest.mark.skipif(MODE == "redis", reason="HotKV worker threads")
def test_slow_monitor_is_cut_at_the_output_limit():
    s = Server("--client-output-buffer-limit", "normal 65536 0 0", threads=2)
    try:
        r = s.client(decode_responses=True)
        m = Resp(s.port)
        m.send("MONITOR")  # never read
        time.sleep(0.1)
        # About 40 MB of monitor lines: more than the kernel's socket
        # buffers take, so the rest waits in the output buffer.
        pipe = r.pipeline(transaction=False)
        for i in range(4000):
            pipe.set("key:%d" % (i % 10), "x" * 10000)
        pipe.execute()
        deadline = time.time() + 5
        while time.time() < deadline:
            if not [l for l in r.execute_command("CLIENT", "LIST").splitlines() if "flags=O" in l]:
                break
            time.sleep(0.05)
        assert not [l for l in r.execute_command("CLIENT", "LIST").splitlines() if "flags=O" in l]
        assert r.ping()
        m.close()
        r.close()
    finally:
        assert s.stop() == 0
