"""SLOWLOG GET / LEN / RESET / HELP, slowlog-log-slower-than and
slowlog-max-len, as Redis 7.2 (Redis's unit/slowlog.tcl cases and more):
entry shape, argument truncation, redaction, EXEC / scripts / blocked
commands, and one server-wide log under writers on every worker thread.
Runs against redis-server too (HOTKV_SERVER=redis): 7.0 has all of it."""
import threading
import time

import pytest

from conftest import MODE, Resp, Server

IS_REDIS = MODE == "redis"


def err(reply):
    assert isinstance(reply, tuple) and reply[0] == "error", reply
    return reply[1]


@pytest.fixture
def c(server):
    conn = Resp(server.port)
    conn.call("SLOWLOG", "RESET")
    yield conn
    # Back to the defaults for the next test.
    conn.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    conn.call("CONFIG", "SET", "slowlog-max-len", "128")
    conn.s.close()


def args_of(entries):
    """Arguments as text, the command name lower-cased (clients send it in
    any case; the log keeps it as sent)."""
    return [[a.decode().lower() if i == 0 else a.decode() for i, a in enumerate(e[3])] for e in entries]


def logged(c, skip=("slowlog",)):
    """Every entry, newest first, without the SLOWLOG calls themselves
    (they are logged as well when the threshold is 0)."""
    return [e for e in c.call("SLOWLOG", "GET", "-1") if e[3][0].decode().lower() not in skip]


def test_defaults_and_config(server):
    # A fresh server: Redis's defaults.
    s = Server()
    try:
        c = Resp(s.port)
        assert c.call("CONFIG", "GET", "slowlog-log-slower-than") == [b"slowlog-log-slower-than", b"10000"]
        assert c.call("CONFIG", "GET", "slowlog-max-len") == [b"slowlog-max-len", b"128"]
        assert c.call("SLOWLOG", "LEN") == 0
        assert c.call("SLOWLOG", "GET") == []
        assert c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
        assert c.call("CONFIG", "SET", "slowlog-max-len", "0") == "OK"
        assert "argument must be between -1 and 9223372036854775807 inclusive" in \
            err(c.call("CONFIG", "SET", "slowlog-log-slower-than", "-2"))
        assert "slowlog-log-slower-than" in err(c.call("CONFIG", "SET", "slowlog-log-slower-than", "abc"))
        assert "slowlog-max-len" in err(c.call("CONFIG", "SET", "slowlog-max-len", "-1"))
        assert c.call("CONFIG", "GET", "slowlog-log-slower-than") == [b"slowlog-log-slower-than", b"-1"]
    finally:
        s.stop()
    # From the command line (as a config file line).
    s = Server("--slowlog-log-slower-than", "0", "--slowlog-max-len", "3")
    try:
        c = Resp(s.port)
        for i in range(5):
            c.call("SET", "k%d" % i, "v")
        assert args_of(c.call("SLOWLOG", "GET")) == [["set", "k4", "v"], ["set", "k3", "v"], ["set", "k2", "v"]]
        assert c.call("SLOWLOG", "LEN") == 3
    finally:
        s.stop()


def test_only_slower_than_threshold(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "100000")
    c.call("PING")
    assert c.call("SLOWLOG", "LEN") == 0
    c.call("DEBUG", "sleep", "0.2")
    assert c.call("SLOWLOG", "LEN") == 1
    e = c.call("SLOWLOG", "GET")[0]
    assert e[2] >= 100000
    assert args_of([e]) == [["debug", "sleep", "0.2"]]
    assert e[3][0] == b"DEBUG"  # as the client sent it


def test_max_len_and_get_count(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("CONFIG", "SET", "slowlog-max-len", "10")
    for _ in range(100):
        c.call("PING")
    assert c.call("SLOWLOG", "LEN") == 10
    assert len(c.call("SLOWLOG", "GET", "5")) == 5
    assert len(c.call("SLOWLOG", "GET", "-1")) == 10
    assert len(c.call("SLOWLOG", "GET", "20")) == 10
    assert len(c.call("SLOWLOG", "GET")) == 10  # default count 10
    assert c.call("SLOWLOG", "GET", "0") == []
    # Lowering the maximum trims at the next entry.
    c.call("CONFIG", "SET", "slowlog-max-len", "2")
    c.call("PING")
    assert c.call("SLOWLOG", "LEN") == 2
    c.call("CONFIG", "SET", "slowlog-max-len", "0")
    c.call("PING")
    assert c.call("SLOWLOG", "LEN") == 0


def test_entry_shape(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("CLIENT", "SETNAME", "foobar")
    c.call("SLOWLOG", "RESET")
    before = int(time.time())
    c.call("SET", "key", "value")
    after = int(time.time())
    entries = c.call("SLOWLOG", "GET")
    e = [x for x in entries if x[3][0] == b"SET"][0]
    assert len(e) == 6
    eid, ts, dur, argv, addr, name = e
    # time(NULL), as Redis stamps entries, reads the kernel's coarse clock,
    # a few ms behind the client's time.time(): across a second boundary
    # the entry can carry the second before `before`.
    assert isinstance(eid, int) and before - 1 <= ts <= after and dur >= 0
    assert argv == [b"SET", b"key", b"value"]
    local = c.s.getsockname()
    assert addr == ("%s:%d" % (local[0], local[1])).encode()
    assert name == b"foobar"
    # Ids grow by one per entry, newest first.
    c.call("PING")
    c.call("PING")
    ids = [x[0] for x in c.call("SLOWLOG", "GET", "3")]
    assert ids == [ids[0], ids[0] - 1, ids[0] - 2]
    assert len(c.call("SLOWLOG", "GET", "3")) == 3
    # An unnamed client: "".
    c.call("CLIENT", "SETNAME", "")
    c.call("PING")
    assert logged(c)[0][5] == b""


def test_reset(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("PING")
    assert c.call("SLOWLOG", "RESET") == "OK"
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    assert c.call("SLOWLOG", "LEN") == 1  # the CONFIG SET itself
    c.call("SLOWLOG", "RESET")
    assert c.call("SLOWLOG", "LEN") == 0


def test_disabled(c):
    c.call("CONFIG", "SET", "slowlog-max-len", "1")
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "1")
    c.call("SLOWLOG", "RESET")
    c.call("DEBUG", "SLEEP", "0.05")
    assert c.call("SLOWLOG", "LEN") == 1
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    c.call("SLOWLOG", "RESET")
    c.call("DEBUG", "SLEEP", "0.05")
    assert c.call("SLOWLOG", "LEN") == 0


def test_too_many_arguments_trimmed(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("SADD", "set", *[str(i) for i in range(3, 34)])
    e = logged(c)[0]
    assert args_of([e])[0] == ["sadd", "set"] + [str(i) for i in range(3, 32)] + ["... (2 more arguments)"]
    # Exactly 32 arguments: kept whole.
    c.call("SADD", "set", *[str(i) for i in range(30)])
    e = logged(c)[0]
    assert len(e[3]) == 32 and e[3][-1] == b"29"


def test_too_long_arguments_trimmed(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("SADD", "set", "foo", "A" * 129)
    e = logged(c)[0]
    assert args_of([e])[0] == ["sadd", "set", "foo", "A" * 128 + "... (1 more bytes)"]
    c.call("SET", "k", "B" * 128)
    assert logged(c)[0][3][2] == b"B" * 128
    c.call("SET", "k", b"\x00" * 5000)
    assert logged(c)[0][3][2] == b"\x00" * 128 + b"... (4872 more bytes)"


def test_exec_not_logged_inner_commands_are(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("MULTI")
    c.call("SET", "k", "v")
    c.call("INCR", "n")
    c.call("EXEC")
    got = args_of(logged(c))
    assert got[:3] == [["incr", "n"], ["set", "k", "v"], ["multi"]]
    assert ["exec"] not in got


def test_exec_slow_inner_command(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "100000")
    c.call("SLOWLOG", "RESET")
    c.call("MULTI")
    c.call("DEBUG", "sleep", "0.2")
    c.call("EXEC")
    assert c.call("SLOWLOG", "LEN") == 1
    assert args_of(c.call("SLOWLOG", "GET")) == [["debug", "sleep", "0.2"]]


def test_script_and_its_commands(c):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("EVAL", "redis.call('set', KEYS[1], 'x') return 1", "1", "k")
    entries = logged(c)[:2]
    assert args_of(entries) == [["eval", "redis.call('set', KEYS[1], 'x') return 1", "1", "k"], ["set", "k", "x"]]
    # The script's own client has no address (7.0 said "?:0") and no name.
    assert entries[1][4] == (b"?:0" if IS_REDIS else b"")
    assert entries[1][5] == b""


def test_sensitive_arguments_redacted(c, server):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("AUTH", "secret")
    c.call("AUTH", "user", "secret")
    c.call("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n1")
    c.call("CONFIG", "set", "requirepass", "pw")
    c.call("AUTH", "pw")
    c.call("CONFIG", "set", "requirepass", "", "slowlog-max-len", "128")
    got = args_of(logged(c))
    assert got[:6] == [
        ["config", "set", "requirepass", "(redacted)", "slowlog-max-len", "128"],
        ["auth", "(redacted)"],
        ["config", "set", "requirepass", "(redacted)"],
        ["hello", "2", "AUTH", "(redacted)", "(redacted)", "SETNAME", "n1"],
        ["auth", "(redacted)", "(redacted)"],
        ["auth", "(redacted)"],
    ]


def test_acl_setuser_arguments_redacted(c, server):
    # Every argument after SETUSER: the password would otherwise be in the
    # slow log for anyone allowed SLOWLOG GET to read.
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("ACL", "SETUSER", "slowlog-user", "on", ">secretpw", "+get")
    c.call("ACL", "DELUSER", "slowlog-user")
    got = args_of(logged(c))
    assert ["acl", "SETUSER", "(redacted)", "(redacted)", "(redacted)", "(redacted)"] in got, got
    assert not any("secretpw" in a for cmd in got for a in cmd), got


def test_blocked_command_logged_when_served(c, server):
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("DEL", "mylist")
    c.call("SLOWLOG", "RESET")
    rd = Resp(server.port)
    rd.send("BLPOP", "mylist", "0")
    deadline = time.time() + 5
    while time.time() < deadline:
        info = c.call("INFO", "clients")
        text = info[2] if isinstance(info, tuple) else info
        if b"blocked_clients:1" in (text if isinstance(text, bytes) else text.encode()):
            break
        time.sleep(0.01)
    assert ["blpop", "mylist", "0"] not in args_of(c.call("SLOWLOG", "GET", "-1"))
    c.call("LPUSH", "mylist", "1")
    assert rd.read() == [b"mylist", b"1"]
    deadline = time.time() + 5
    while ["blpop", "mylist", "0"] not in args_of(c.call("SLOWLOG", "GET", "-1")) and time.time() < deadline:
        time.sleep(0.01)
    assert args_of(c.call("SLOWLOG", "GET", "-1")).count(["blpop", "mylist", "0"]) == 1
    # A timeout ends the call too: logged then (Redis 7.2's
    # replyToBlockedClientTimedOut -> updateStatsOnUnblock, src/blocked.c:234;
    # 7.0 logged nothing).
    c.call("SLOWLOG", "RESET")
    assert rd.call("BLPOP", "nolist", "0.05") is None
    assert args_of(logged(c)) == ([] if IS_REDIS else [["blpop", "nolist", "0.05"]])
    rd.s.close()


def test_errors_and_help(c):
    assert err(c.call("SLOWLOG", "GET", "-2")) == "ERR count should be greater than or equal to -1"
    assert err(c.call("SLOWLOG", "GET", "-222")) == "ERR count should be greater than or equal to -1"
    assert err(c.call("SLOWLOG", "GET", "abc")) == "ERR count should be greater than or equal to -1"
    assert err(c.call("SLOWLOG", "GET", "1", "2")) == \
        "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP."
    assert err(c.call("SLOWLOG", "LEN", "x")) == "ERR wrong number of arguments for 'slowlog|len' command"
    assert err(c.call("SLOWLOG", "RESET", "x")) == "ERR wrong number of arguments for 'slowlog|reset' command"
    assert err(c.call("SLOWLOG", "HELP", "x")) == "ERR wrong number of arguments for 'slowlog|help' command"
    assert err(c.call("SLOWLOG", "foo")) == "ERR unknown subcommand 'foo'. Try SLOWLOG HELP."
    assert err(c.call("SLOWLOG")) == "ERR wrong number of arguments for 'slowlog' command"
    help_ = c.call("SLOWLOG", "HELP")
    assert help_[0].startswith("SLOWLOG <subcommand>")
    text = " ".join(help_)
    for word in ("GET", "LEN", "RESET", "HELP"):
        assert word in text
    # Lower case works too.
    assert c.call("slowlog", "len") >= 0


def test_resp3_shape(c):
    assert isinstance(c.call("HELLO", "3"), dict)
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("SET", "a", "b")
    e = logged(c)[0]
    assert isinstance(e, list) and e[3] == [b"SET", b"a", b"b"]
    assert c.call("SLOWLOG", "LEN") >= 1


def test_command_info_and_docs(c):
    info = c.call("COMMAND", "INFO", "slowlog")[0]
    assert info[0] == b"slowlog" and info[1] == -2
    subs = {s[0]: s for s in info[9]}
    assert set(subs) == {b"slowlog|get", b"slowlog|len", b"slowlog|reset", b"slowlog|help"}
    assert subs[b"slowlog|get"][1] == -2 and subs[b"slowlog|len"][1] == 2
    assert set(subs[b"slowlog|get"][2]) == {"admin", "loading", "stale"}
    assert set(subs[b"slowlog|help"][2]) == {"loading", "stale"}


def test_concurrent_writers_every_thread():
    """One log for the whole server: 8 connections on 4 worker threads all
    logging at once lose no entry and never reuse an id."""
    s = Server("--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000", threads=4)
    try:
        c = Resp(s.port)
        c.call("SLOWLOG", "RESET")
        n_conn, n_cmd = 8, 400
        errors = []

        def writer(k):
            try:
                w = Resp(s.port)
                w.call("CLIENT", "SETNAME", "w%d" % k)
                for i in range(n_cmd):
                    w.send("SET", "k%d:%d" % (k, i), "v")
                for i in range(n_cmd):
                    assert w.read() == "OK"
                w.s.close()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ts = [threading.Thread(target=writer, args=(k,)) for k in range(n_conn)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        entries = c.call("SLOWLOG", "GET", "-1")
        sets = [e for e in entries if e[3][0] == b"SET"]
        assert len(sets) == n_conn * n_cmd
        ids = [e[0] for e in entries]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
        # Each writer's own entries are in its order, with its name.
        for k in range(n_conn):
            mine = [e for e in sets if e[5] == b"w%d" % k]
            assert [e[3][1] for e in reversed(mine)] == [b"k%d:%d" % (k, i) for i in range(n_cmd)]
        # And the maximum holds under the same load.
        c.call("CONFIG", "SET", "slowlog-max-len", "50")
        ts = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        assert c.call("SLOWLOG", "LEN") == 50
        assert len(c.call("SLOWLOG", "GET", "-1")) == 50
    finally:
        assert s.stop() == 0
