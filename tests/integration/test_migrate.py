"""MIGRATE and RESTORE-ASKING (src/cmd/migrate.c).

MIGRATE moves keys to another server: one key or the KEYS form, COPY,
REPLACE, the target's errors passed back (BUSYKEY, NOAUTH, a database out
of range), AUTH and AUTH2, a destination database, the TTL, +NOKEY, a target
that never answers (IOERR after the timeout, the key stays), one that is
down, the connection cache (one connection on the target for several calls
from one client, a connection the target closed is dialled again), the
propagation of the move as DEL (the AOF), credentials hidden from the slow
log, and Redis 7.0's error texts for malformed calls, compared side by side
with a Debian redis-server 7.0.15.  Moves go HotKV -> HotKV, HotKV ->
redis-server and redis-server -> HotKV (the source HotKV runs with
--rdb-version 10, the payload version 7.0 reads).

Runs against hotkv (default) and against redis-server (HOTKV_SERVER=redis),
where every server is a redis-server; the tests of HotKV's stricter reading
of a target's replies (a reply that is not +/-, an endless line) are
HotKV-only (Redis takes anything but '-' as success)."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import MODE, Resp, Server, free_port
from helpers import client_list_entries, wait_until

IS_REDIS = MODE == "redis"
HOST = "127.0.0.1"


# ---------------------------------------------------------------- servers ---
class RedisPeer:
    """A redis-server 7.0 (Debian's), whatever MODE is."""

    def __init__(self, *args):
        if not shutil.which("redis-server"):
            pytest.skip("redis-server not installed")
        self.dir = tempfile.mkdtemp(prefix="hotkv-migrate-peer-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no",
             "--dir", self.dir] + [str(a) for a in args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_until(self._up, timeout=10):
            raise RuntimeError("redis-server did not start")

    def _up(self):
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def client(self, **kw):
        return redis.Redis(host=HOST, port=self.port, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def source(*args):
    """The migrating server: HotKV writes payloads redis-server 7.0 reads."""
    return Server(*args) if IS_REDIS else Server("--rdb-version", "10", *args)


@pytest.fixture(scope="module")
def src():
    s = source()
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def dst():
    s = Server()
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def peer():
    p = RedisPeer()
    yield p
    p.stop()


@pytest.fixture
def c(src):
    cl = src.client()
    cl.flushall()
    yield cl
    cl.close()


@pytest.fixture
def d(dst):
    cl = dst.client()
    cl.flushall()
    yield cl
    cl.close()


@pytest.fixture
def m(src):
    """A raw connection to the source (exact error texts)."""
    cl = Resp(src.port, timeout=20)
    yield cl
    cl.close()


def migrate(conn, port, key, db=0, timeout=5000, *opts):
    return conn.call("MIGRATE", HOST, port, key, db, timeout, *opts)


def fill(cl):
    cl.set("s", "string value")
    cl.hset("h", mapping={"f1": "v1", "f2": "v2"})
    cl.rpush("l", "a", "b", "c")
    cl.sadd("set", "x", "y")
    cl.zadd("z", {"m1": 1.5, "m2": 2})
    cl.set("big", "x" * 300000)


def check_filled(cl, keys=("s", "h", "l", "set", "z", "big")):
    expect = {"s": b"string value", "h": {b"f1": b"v1", b"f2": b"v2"}, "l": [b"a", b"b", b"c"],
              "set": {b"x", b"y"}, "z": [(b"m1", 1.5), (b"m2", 2.0)], "big": b"x" * 300000}
    got = {"s": cl.get("s"), "h": cl.hgetall("h"), "l": cl.lrange("l", 0, -1), "set": cl.smembers("set"),
           "z": cl.zrange("z", 0, -1, withscores=True), "big": cl.get("big")}
    for k in keys:
        assert got[k] == expect[k], k


# ------------------------------------------------------------- the moves ---
def test_single_key(c, d, dst, m):
    fill(c)
    for k in ("s", "h", "l", "set", "z", "big"):
        assert migrate(m, dst.port, k) == "OK"
        assert c.exists(k) == 0
    check_filled(d)


def test_keys_form(c, d, dst, m):
    fill(c)
    assert migrate(m, dst.port, "", 0, 5000, "KEYS", "s", "h", "missing", "l", "set", "z", "big") == "OK"
    assert c.dbsize() == 0
    check_filled(d)


def test_nokey(c, d, dst, m):
    assert migrate(m, dst.port, "nosuch") == "NOKEY"
    assert migrate(m, dst.port, "", 0, 5000, "KEYS", "a", "b") == "NOKEY"
    # No connection is needed to say so: a target that is down does not matter.
    assert migrate(m, free_port(), "nosuch") == "NOKEY"


def test_copy_keeps_the_source(c, d, dst, m):
    c.set("k", "v")
    assert migrate(m, dst.port, "k", 0, 5000, "COPY") == "OK"
    assert c.get("k") == b"v" and d.get("k") == b"v"


def test_busykey_and_replace(c, d, dst, m):
    c.set("k", "new")
    d.set("k", "old")
    assert migrate(m, dst.port, "k") == ("error", "ERR Target instance replied with error: "
                                                  "BUSYKEY Target key name already exists.")
    assert c.get("k") == b"new" and d.get("k") == b"old"
    assert migrate(m, dst.port, "k", 0, 5000, "REPLACE") == "OK"
    assert c.exists("k") == 0 and d.get("k") == b"new"
    # COPY and REPLACE together
    c.set("k", "newer")
    assert migrate(m, dst.port, "k", 0, 5000, "COPY", "REPLACE") == "OK"
    assert c.get("k") == b"newer" and d.get("k") == b"newer"


def test_keys_form_partial_busykey(c, d, dst, m):
    """Each key is deleted only if its own RESTORE succeeded."""
    c.mset({"a": "1", "b": "2", "e": "3"})
    d.set("b", "theirs")
    reply = migrate(m, dst.port, "", 0, 5000, "KEYS", "a", "b", "e")
    assert reply == ("error", "ERR Target instance replied with error: BUSYKEY Target key name already exists.")
    assert c.exists("a") == 0 and c.get("b") == b"2" and c.exists("e") == 0
    assert d.get("a") == b"1" and d.get("b") == b"theirs" and d.get("e") == b"3"


def test_destination_db(c, dst, m):
    t0 = dst.client(db=5)
    t0.flushall()
    c.set("k", "v")
    assert migrate(m, dst.port, "k", 5) == "OK"
    assert t0.get("k") == b"v"
    # The cached connection now sits on db 5: back to 0 selects again.
    c.set("k2", "v2")
    assert migrate(m, dst.port, "k2", 0) == "OK"
    assert dst.client(db=0).get("k2") == b"v2" and t0.exists("k2") == 0
    c.set("k3", "v3")
    assert migrate(m, dst.port, "k3", 5) == "OK"
    assert t0.get("k3") == b"v3"
    # Out of range: the target's SELECT error; the key stays.
    c.set("k4", "v4")
    assert migrate(m, dst.port, "k4", 99) == ("error", "ERR Target instance replied with error: "
                                                       "ERR DB index is out of range")
    assert c.get("k4") == b"v4"
    if IS_REDIS:
        # Redis pipelines SELECT with the RESTOREs: the RESTORE ran in the
        # connection's previous database (5) although SELECT failed.
        assert t0.get("k4") == b"v4"
    else:
        # HotKV sends the RESTOREs only once SELECT answered +OK.
        assert t0.exists("k4") == 0
        assert migrate(m, dst.port, "k4", 5) == "OK"
        assert t0.get("k4") == b"v4"
    t0.close()


def test_ttl_is_kept(c, d, dst, m):
    c.set("k", "v", px=100000)
    c.set("p", "v")
    assert migrate(m, dst.port, "", 0, 5000, "KEYS", "k", "p") == "OK"
    assert 90000 < d.pttl("k") <= 100000
    assert d.pttl("p") == -1


def test_auth_and_auth2(c, m):
    t = Server("--requirepass", "sekrit")
    try:
        tc = t.client(password="sekrit")
        tc.execute_command("ACL", "SETUSER", "mover", "on", ">movepw", "~*", "+@all")
        c.set("k", "v")
        assert migrate(m, t.port, "k") == ("error", "ERR Target instance replied with error: "
                                                    "NOAUTH Authentication required.")
        assert c.get("k") == b"v"
        assert migrate(m, t.port, "k", 0, 5000, "AUTH", "wrong") == (
            "error", "ERR Target instance replied with error: "
                     "WRONGPASS invalid username-password pair or user is disabled.")
        assert c.get("k") == b"v"
        assert migrate(m, t.port, "k", 0, 5000, "AUTH", "sekrit") == "OK"
        assert tc.get("k") == b"v" and c.exists("k") == 0
        c.set("k2", "v2")
        assert migrate(m, t.port, "k2", 0, 5000, "AUTH2", "mover", "wrongpw") == (
            "error", "ERR Target instance replied with error: "
                     "WRONGPASS invalid username-password pair or user is disabled.")
        # Redis pipelines AUTH with the RESTORE: on its cached connection,
        # still authenticated from the call before, the RESTORE ran anyway.
        # HotKV sends the RESTOREs only once AUTH answered +OK.
        assert tc.exists("k2") == (1 if IS_REDIS else 0)
        assert c.get("k2") == b"v2"
        assert migrate(m, t.port, "k2", 0, 5000, "AUTH2", "mover", "movepw", "REPLACE") == "OK"
        assert tc.get("k2") == b"v2" and c.exists("k2") == 0
        # The same credentials again: AUTH is sent with every call (pipelined
        # with the RESTORE on a connection that accepted it before).
        before = tc.info("commandstats").get("cmdstat_auth", {}).get("calls", 0)
        for i in range(3):
            c.set("again%d" % i, i)
            assert migrate(m, t.port, "again%d" % i, 0, 5000, "AUTH2", "mover", "movepw") == "OK"
            assert tc.get("again%d" % i) == str(i).encode() and c.exists("again%d" % i) == 0
        assert tc.info("commandstats")["cmdstat_auth"]["calls"] == before + 3
        # The options may come in any order before KEYS.
        c.mset({"x": "1", "y": "2"})
        assert migrate(m, t.port, "", 0, 5000, "REPLACE", "AUTH", "sekrit", "COPY", "KEYS", "x", "y") == "OK"
        assert tc.mget("x", "y") == [b"1", b"2"] and c.exists("x", "y") == 2
        tc.close()
    finally:
        assert t.stop() == 0


def test_credentials_hidden_from_slowlog(c, src, m):
    c.config_set("slowlog-log-slower-than", 0)
    try:
        c.slowlog_reset()
        m.call("MIGRATE", HOST, 1, "", 0, 100, "AUTH", "pw1", "KEYS", "none")
        m.call("MIGRATE", HOST, 1, "", 0, 100, "AUTH2", "usr", "pw2", "KEYS", "none")
        args = [e["command"] for e in c.slowlog_get(10)]
        text = b" ".join(args)
        assert b"pw1" not in text and b"pw2" not in text and b"usr" not in text, text
        assert b"(redacted)" in text
    finally:
        c.config_set("slowlog-log-slower-than", 10000)


# ------------------------------------------------------ failures and I/O ---
class SilentTarget:
    """Accepts connections and reads, but never answers (or answers the
    bytes given once something arrived)."""

    def __init__(self, answer=None):
        self.answer = answer
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind((HOST, 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.conns = []
        self.stopped = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        self.ls.settimeout(0.1)
        while not self.stopped:
            try:
                s, _ = self.ls.accept()
            except OSError:
                continue
            self.conns.append(s)
            threading.Thread(target=self._serve, args=(s,), daemon=True).start()

    def _serve(self, s):
        s.settimeout(0.1)
        answered = False
        while not self.stopped:
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            if self.answer is not None and not answered:
                answered = True
                try:
                    s.sendall(self.answer)
                except OSError:
                    return

    def close(self):
        self.stopped = True
        self.t.join(2)
        for s in self.conns:
            s.close()
        self.ls.close()


def test_target_that_never_answers(c, m):
    t = SilentTarget()
    try:
        c.set("k", "v")
        t0 = time.time()
        reply = migrate(m, t.port, "k", 0, 500)
        took = time.time() - t0
        assert reply == ("error", "IOERR error or timeout reading to target instance")
        assert 0.4 < took < 3.0, took
        assert c.get("k") == b"v"
        # Again: the failed connection was not kept.
        assert migrate(m, t.port, "", 0, 300, "KEYS", "k") == (
            "error", "IOERR error or timeout reading to target instance")
        assert c.get("k") == b"v"
    finally:
        t.close()


def test_key_is_locked_for_the_whole_call(c, src, m):
    """A write to the key being migrated waits for MIGRATE to end (here: a
    target that never answers, so it ends with IOERR and the write wins)."""
    t = SilentTarget()
    try:
        c.set("k", "old")
        out = {}

        def run():
            out["reply"] = migrate(m, t.port, "k", 0, 800)
            out["done"] = time.time()
        th = threading.Thread(target=run)
        th.start()
        time.sleep(0.2)
        other = src.client()
        assert other.set("k", "new")
        set_done = time.time()
        th.join(5)
        assert out["reply"] == ("error", "IOERR error or timeout reading to target instance")
        assert set_done >= out["done"] - 0.05, (set_done, out["done"])
        assert other.get("k") == b"new"
        other.close()
    finally:
        t.close()


def test_target_that_never_reads(c, m):
    """Accepted by the kernel, never read: the request cannot be sent."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ls.bind((HOST, 0))
    ls.listen(4)
    try:
        c.set("big", os.urandom(8 << 20))  # incompressible
        t0 = time.time()
        # Redis pipelines SELECT with the RESTORE and fails writing; HotKV
        # waits for SELECT's reply first on a new connection.
        assert migrate(m, ls.getsockname()[1], "big", 0, 300) == (
            "error", "IOERR error or timeout %s to target instance" % ("writing" if IS_REDIS else "reading"))
        assert time.time() - t0 < 3.0
        assert c.strlen("big") == 8 << 20
    finally:
        ls.close()


def test_target_down(c, m):
    """Refused: Redis starts a non-blocking connect and learns of the
    failure when it writes, hence "writing"."""
    c.set("k", "v")
    port = free_port()
    assert migrate(m, port, "k", 0, 1000) == ("error", "IOERR error or timeout writing to target instance")
    assert c.get("k") == b"v"
    assert migrate(m, port, "", 0, 1000, "KEYS", "k") == (
        "error", "IOERR error or timeout writing to target instance")
    assert c.get("k") == b"v"


def test_connection_that_cannot_start(c, m):
    """No connection even started (no address, a negative port)."""
    c.set("k", "v")
    assert m.call("MIGRATE", "", 6379, "k", 0, 1000) == ("error", "IOERR error or timeout connecting to the client")
    assert m.call("MIGRATE", HOST, -1, "k", 0, 1000) == ("error", "IOERR error or timeout connecting to the client")
    assert c.get("k") == b"v"


def test_connect_errors_match_redis(c, src, peer):
    down = free_port()
    mine, theirs = Resp(src.port), Resp(peer.port)
    pc = peer.client()
    try:
        for host, port in [("", 1), (HOST, -1), (HOST, down), (HOST, "abc"), (HOST, 0), (HOST, " %d" % down)]:
            c.set("k", "v")
            pc.set("k", "v")
            a = mine.call("MIGRATE", host, port, "k", 0, 500)
            b = theirs.call("MIGRATE", host, port, "k", 0, 500)
            assert a == b, (host, port)
            assert c.get("k") == b"v" and pc.get("k") == b"v"
    finally:
        mine.close()
        theirs.close()
        pc.close()


@pytest.mark.skipif(IS_REDIS, reason="Redis takes any reply but '-' as an acknowledgement")
def test_reply_that_is_not_ok_acknowledges_nothing(c, m):
    t = SilentTarget(answer=b":1\r\n:1\r\n:1\r\n")
    try:
        c.set("k", "v")
        assert migrate(m, t.port, "k", 0, 1000) == ("error", "IOERR error or timeout reading to target instance")
        assert c.get("k") == b"v"
    finally:
        t.close()


@pytest.mark.skipif(IS_REDIS, reason="HotKV bounds a reply line (Redis reads 1 KiB and goes on)")
def test_endless_reply_line(c, m):
    t = SilentTarget(answer=b"-ERR " + b"x" * 200000)
    try:
        c.set("k", "v")
        assert migrate(m, t.port, "k", 0, 1000) == ("error", "IOERR error or timeout reading to target instance")
        assert c.get("k") == b"v"
    finally:
        t.close()
    t = SilentTarget(answer=b"-ERR " + b"y" * 5000 + b"\r\n-ERR second\r\n")
    try:
        reply = migrate(m, t.port, "k", 0, 1000)
        assert reply[0] == "error" and reply[1].startswith("ERR Target instance replied with error: ERR yyy")
        assert len(reply[1]) < 1100
        assert c.get("k") == b"v"
    finally:
        t.close()


# ---------------------------------------------------- the connection cache ---
def restore_conns(cl):
    return [e for e in client_list_entries(cl.execute_command("CLIENT", "LIST"))
            if e.get("cmd") in ("restore", "select", "auth")]


def test_cached_connection_is_reused(c, d, dst, m):
    # One client connection: every call runs on its worker, whose cache
    # holds the connection.
    d.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    for i in range(5):
        c.set("k%d" % i, i)
        assert migrate(m, dst.port, "k%d" % i, i % 2) == "OK"
    conns = restore_conns(d)
    assert len(conns) == 1, conns
    assert d.execute_command("DBSIZE") + dst.client(db=1).dbsize() == 5


def test_connection_closed_by_target_is_dialled_again(c, d, dst, m):
    c.set("a", "1")
    assert migrate(m, dst.port, "a") == "OK"
    # The target drops every other connection, the cached one included.
    d.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    assert wait_until(lambda: not restore_conns(d))
    c.set("b", "2")
    assert migrate(m, dst.port, "b") == "OK"
    assert d.get("b") == b"2" and c.exists("b") == 0


def test_idle_cached_connection_is_closed(c, d, dst, m):
    d.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    c.set("a", "1")
    assert migrate(m, dst.port, "a") == "OK"
    assert len(restore_conns(d)) == 1
    cached = lambda: c.info("stats")["migrate_cached_sockets"]
    assert cached() >= 1  # (earlier tests' connections may still be cached)
    # Closed after 10 s unused (Redis: its cron, every second).
    assert wait_until(lambda: not restore_conns(d), timeout=16, interval=0.25)
    assert wait_until(lambda: cached() == 0, timeout=16, interval=0.25)


# ------------------------------------------------------------ interop ---
def test_hotkv_to_redis(c, peer, m):
    pc = peer.client()
    pc.flushall()
    fill(c)
    c.pexpire("s", 50000)
    assert migrate(m, peer.port, "", 3, 5000, "KEYS", "s", "h", "l", "set", "z", "big") == "OK"
    p3 = peer.client(db=3)
    check_filled(p3)
    assert 40000 < p3.pttl("s") <= 50000
    assert c.dbsize() == 0
    pc.close()
    p3.close()


def test_redis_to_hotkv(d, dst, peer):
    pc = peer.client()
    pc.flushall()
    fill(pc)
    pm = Resp(peer.port)
    try:
        assert pm.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", "s", "h", "l", "set", "z", "big") == "OK"
        assert pm.call("MIGRATE", HOST, dst.port, "gone", 0, 5000) == "NOKEY"
    finally:
        pm.close()
    check_filled(d)
    assert pc.dbsize() == 0
    pc.close()


# ------------------------------------------------------------ propagation ---
def aof_commands(d):
    adir = os.path.join(d, "appendonlydir")
    names = []
    with open(os.path.join(adir, "appendonly.aof.manifest")) as f:
        for line in f:
            parts = line.split()
            kv = dict(zip(parts[::2], parts[1::2]))
            if kv.get("type") == "i":
                names.append(kv["file"])
    data = b"".join(open(os.path.join(adir, n), "rb").read() for n in names)
    out, i = [], 0
    while i < len(data):
        e = data.index(b"\r\n", i)
        argc = int(data[i + 1:e])
        i, args = e + 2, []
        for _ in range(argc):
            e = data.index(b"\r\n", i)
            ln = int(data[i + 1:e])
            args.append(data[e + 2:e + 2 + ln])
            i = e + 2 + ln + 2
        out.append(args)
    return out


def test_propagated_as_del(dst, d):
    s = source("--appendonly", "yes", "--appendfsync", "always")
    try:
        sc = s.client()
        sc.mset({"a": "1", "b": "2", "keep": "3"})
        d.set("b", "busy")
        mc = Resp(s.port)
        assert mc.call("MIGRATE", HOST, dst.port, "a", 0, 5000) == "OK"
        assert mc.call("MIGRATE", HOST, dst.port, "keep", 0, 5000, "COPY") == "OK"
        assert mc.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", "b")[0] == "error"
        sc.set("c", "4")
        assert mc.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", "c", "nope") == "OK"
        mc.close()
        time.sleep(0.2)
        cmds = [[a.upper() if i == 0 else a for i, a in enumerate(cmd)] for cmd in aof_commands(s.dir)]
        cmds = [cmd for cmd in cmds if cmd[0] not in (b"SELECT", b"MULTI", b"EXEC")]
        assert not any(cmd[0] == b"MIGRATE" for cmd in cmds), cmds
        assert cmds[-3:] == [[b"DEL", b"a"], [b"SET", b"c", b"4"], [b"DEL", b"c"]], cmds
        sc.close()
    finally:
        assert s.stop() == 0


def test_replica_sees_the_move(c, src, d, dst, m):
    rep = Server("--replicaof", HOST, src.port)
    try:
        rc = rep.client()

        def synced():
            i = rc.info("replication")
            return i.get("master_link_status") == "up" and i.get("master_sync_in_progress") == 0
        assert wait_until(synced, timeout=20)
        c.mset({"a": "1", "b": "2", "kept": "3"})
        assert wait_until(lambda: rc.dbsize() == 3)
        assert migrate(m, dst.port, "", 0, 5000, "KEYS", "a", "b") == "OK"
        assert migrate(m, dst.port, "kept", 0, 5000, "COPY") == "OK"
        c.set("marker", "1")
        assert wait_until(lambda: rc.get("marker") == b"1")
        assert rc.exists("a", "b") == 0 and rc.get("kept") == b"3"
        rc.close()
    finally:
        assert rep.stop() == 0


def test_inside_multi(c, d, dst, m):
    c.set("k", "v")
    assert m.call("MULTI") == "OK"
    assert m.call("MIGRATE", HOST, dst.port, "k", 0, 5000) == "QUEUED"
    assert m.call("EXISTS", "k") == "QUEUED"
    assert m.call("EXEC") == ["OK", 0]
    assert d.get("k") == b"v"


# -------------------------------------------------- errors, side by side ---
BAD_CALLS = [
    ("h", 1, "k", 0, 1000, "KEYS", "a"),
    ("h", 1, "", 0, 1000, "AUTH"),
    ("h", 1, "", 0, 1000, "AUTH2", "u"),
    ("h", 1, "", 0, 1000, "COPY", "nope"),
    ("h", 1, "", 0, 1000, "REPLACE", "KEYS"),
    ("h", 1, "k", "x", 1000),
    ("h", 1, "k", 0, "soon"),
    ("h", 1, "k", 0, "1.5"),
    ("h", 1, "k", "9999999999999999999999", 1000),
    ("h", 1, "k", 0),
    ("h", 1, "k"),
]


def test_errors_match_redis(c, src, peer):
    mine, theirs = Resp(src.port), Resp(peer.port)
    try:
        for args in BAD_CALLS:
            a, b = mine.call("MIGRATE", *args), theirs.call("MIGRATE", *args)
            assert a == b, args
            assert a[0] == "error" or a == "NOKEY", (args, a)
        # The error texts themselves (Redis 7.0's).
        assert mine.call("MIGRATE", "h", 1, "k", 0, 1000, "KEYS", "a") == (
            "error", "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
        assert mine.call("MIGRATE", "h", 1, "", 0, 1000, "AUTH") == ("error", "ERR syntax error")
        assert mine.call("MIGRATE", "h", 1, "k", 0, "x") == ("error", "ERR value is not an integer or out of range")
        assert mine.call("MIGRATE", "h", 1, "k", 0)[1].startswith("ERR wrong number of arguments")
    finally:
        mine.close()
        theirs.close()


def test_timeout_zero_or_negative_means_one_second(c, m):
    t = SilentTarget()
    try:
        c.set("k", "v")
        t0 = time.time()
        assert migrate(m, t.port, "k", 0, -5) == ("error", "IOERR error or timeout reading to target instance")
        assert 0.8 < time.time() - t0 < 4.0
        assert c.get("k") == b"v"
    finally:
        t.close()


# ------------------------------------------------------- command metadata ---
def test_getkeys(c, src):
    r = Resp(src.port)
    try:
        assert r.call("COMMAND", "GETKEYS", "MIGRATE", "h", 1, "k", 0, 10) == [b"k"]
        assert r.call("COMMAND", "GETKEYS", "MIGRATE", "h", 1, "", 0, 10, "COPY", "AUTH", "keys", "KEYS",
                      "a", "b") == [b"a", b"b"]
        assert r.call("COMMAND", "GETKEYS", "MIGRATE", "h", 1, "", 0, 10, "AUTH2", "keys", "keys", "KEYS",
                      "a") == [b"a"]
        (info,) = r.call("COMMAND", "INFO", "migrate")
        assert info[1] == -6 and set(info[2]) == {"write", "movablekeys"} and info[3:6] == [3, 3, 1]
        assert set(info[6]) == {"@keyspace", "@write", "@slow", "@dangerous"}
        (info,) = r.call("COMMAND", "INFO", "restore-asking")
        assert info[1] == -4 and set(info[2]) == {"write", "denyoom", "asking"} and info[3:6] == [1, 1, 1]
        assert set(info[6]) == {"@keyspace", "@write", "@slow", "@dangerous"}
    finally:
        r.close()


def test_restore_asking_is_restore(c):
    c.set("k", "v", px=100000)
    payload = c.dump("k")
    c.delete("k")
    assert c.execute_command("RESTORE-ASKING", "k", 0, payload) == b"OK"
    assert c.get("k") == b"v" and c.pttl("k") == -1
    with pytest.raises(redis.ResponseError, match="BUSYKEY"):
        c.execute_command("RESTORE-ASKING", "k", 0, payload)
    assert c.execute_command("RESTORE-ASKING", "k", 50000, payload, "REPLACE") == b"OK"
    assert 40000 < c.pttl("k") <= 50000
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        c.execute_command("RESTORE-ASKING", "k", 0, b"garbage", "REPLACE")


def test_metadata_matches_redis(src, peer):
    """COMMAND INFO (flags, key specs, ACL categories, tips) and the keys
    (with flags) found in MIGRATE lines, side by side with redis-server."""
    mine, theirs = Resp(src.port), Resp(peer.port)
    try:
        for name in ("migrate", "restore-asking"):
            assert mine.call("COMMAND", "INFO", name) == theirs.call("COMMAND", "INFO", name), name
        for line in (("h", 1, "", 0, 5, "KEYS", "a", "b"), ("h", 1, "k", 0, 5), ("h", 1, "k", 0, 5, "COPY"),
                     ("h", 1, "", 0, 5, "AUTH", "keys", "KEYS", "a"),
                     ("h", 1, "", 0, 5, "AUTH2", "u", "p", "KEYS", "x"), ("h", 1, "k", 0, 5, "KEYS", "a")):
            for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
                assert mine.call("COMMAND", sub, "MIGRATE", *line) == theirs.call("COMMAND", sub, "MIGRATE", *line), \
                    (sub, line)
    finally:
        mine.close()
        theirs.close()
