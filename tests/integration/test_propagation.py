"""Command propagation (persist/prop.c): what each write feeds to the AOF.

The server runs with appendonly yes and appendfsync always, so a reply
leaves only once its write is in the incr file: each test runs commands and
reads back (RESP-parsed) what the AOF received since.  Checked: the
deterministic rewrites of Redis 7 (relative TTLs -> PEXPIREAT / SET PXAT,
SPOP -> SREM, blocking pops served now or later -> their plain form, XADD *
-> the real ID, approximate trims -> exact ones, XREADGROUP -> XCLAIM +
XGROUP SETID, INCRBYFLOAT -> SET KEEPTTL, ...), scripts and transactions as
MULTI/EXEC around their effective writes, nothing for no-op writes, DEL for
expired keys, the change counter (rdb_changes_since_last_save).

Then a differential test: a random workload of every type, TTLs, scripts,
MULTI, and blocking pops served across clients, run by several threads;
the server is killed (-9) and restarted from its AOF, and every key (type,
value, absolute expire time, hash field TTLs, stream groups and PELs) and
the function libraries must be what they were.

Ports 7400-7499, one directory per test."""
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import MODE, not_tsan, port_free

pytestmark = pytest.mark.skipif(MODE == "redis", reason="reads hotkv's AOF layout and timing")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server"))

_next_port = [7400]


def take_port():
    while _next_port[0] < 7500:
        p = _next_port[0]
        _next_port[0] += 1
        if port_free(p):
            return p
    raise RuntimeError("no free port in 7400-7499")


class Srv:
    """hotkv-server with the AOF on (fsync always) on a fixed port and dir."""

    def __init__(self, d, *args, threads=3):
        self.port = take_port()
        self.dir = d
        self.args = [str(a) for a in args]
        self.threads = threads
        self.proc = None
        self.n = 0

    def start(self, timeout=30):
        self.n += 1
        self.log = open(os.path.join(self.dir, "server-%d.log" % self.n), "w")
        cmd = [BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--threads", str(self.threads),
               "--dir", self.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
               "--enable-debug-command", "yes"] + self.args
        deadline = time.time() + 10
        while not port_free(self.port) and time.time() < deadline:
            time.sleep(0.05)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.logtext())
            try:
                c = self.client()
                c.ping()
                c.close()
                return self
            except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
                time.sleep(0.02)
        raise RuntimeError("server did not start: " + self.logtext())

    def logtext(self):
        with open(os.path.join(self.dir, "server-%d.log" % self.n)) as f:
            return f.read()

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 30)
        kw.setdefault("encoding_errors", "surrogateescape")
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


# ------------------------------------------------------------ AOF reading --
def parse_resp_commands(data):
    """RESP multibulk commands in data -> list of [str ...] (latin-1)."""
    out, i, n = [], 0, len(data)
    while i < n:
        if data[i:i + 1] != b"*":
            raise ValueError("bad AOF at %d: %r" % (i, data[i:i + 20]))
        e = data.index(b"\r\n", i)
        argc = int(data[i + 1:e])
        i = e + 2
        args = []
        for _ in range(argc):
            assert data[i:i + 1] == b"$", data[i:i + 20]
            e = data.index(b"\r\n", i)
            ln = int(data[i + 1:e])
            i = e + 2
            args.append(data[i:i + ln].decode("latin-1"))
            i += ln + 2
        out.append(args)
    return out


def aof_commands(d):
    """Every command of the incr files listed in the manifest, in order."""
    adir = os.path.join(d, "appendonlydir")
    names = []
    with open(os.path.join(adir, "appendonly.aof.manifest")) as f:
        for line in f:
            parts = line.split()
            kv = dict(zip(parts[::2], parts[1::2]))
            if kv.get("type") == "i":
                names.append(kv["file"])
    cmds = []
    for name in names:
        with open(os.path.join(adir, name), "rb") as f:
            cmds += parse_resp_commands(f.read())
    return cmds


class Tail:
    """What the AOF received since the last call."""

    def __init__(self, srv):
        self.srv = srv
        self.seen = len(aof_commands(srv.dir))

    def new(self, selects=False):
        cmds = aof_commands(self.srv.dir)
        fresh = cmds[self.seen:]
        self.seen = len(cmds)
        if not selects:
            fresh = [c for c in fresh if c[0].upper() != "SELECT"]
        return [[c[0].upper()] + c[1:] for c in fresh]


@pytest.fixture(scope="module")
def srv():
    d = tempfile.mkdtemp(prefix="hotkv-prop-")
    s = Srv(d).start()
    yield s
    rc = s.stop()
    assert rc == 0, "server exited with %s (log in %s)" % (rc, d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def r(srv):
    c = srv.client()
    c.flushall()
    c.execute_command("SELECT", 0)
    yield c
    c.close()


@pytest.fixture
def tail(srv, r):
    return Tail(srv)


def now_ms(r):
    s, us = r.time()
    return s * 1000 + us // 1000


def near(v, want, slack=3000):
    return abs(int(v) - want) <= slack


# ----------------------------------------------------------------- strings --
def test_set_relative_ttls_become_pxat(r, tail):
    t = now_ms(r)
    r.execute_command("SET", "k1", "v", "EX", 100)
    r.execute_command("SET", "k2", "v", "PX", 5000, "NX")
    r.execute_command("SET", "k3", "v", "EXAT", t // 1000 + 50, "GET")
    r.execute_command("SETEX", "k4", 100, "v4")
    r.execute_command("PSETEX", "k5", 100000, "v5")
    r.execute_command("SET", "k6", "v", "PXAT", t + 7000)
    got = tail.new()
    assert [c[:4] for c in got] == [["SET", k, v, "PXAT"] for k, v in
                                    [("k1", "v"), ("k2", "v"), ("k3", "v"), ("k4", "v4"), ("k5", "v5"), ("k6", "v")]]
    assert all(len(c) == 5 for c in got)
    assert near(got[0][4], t + 100000) and near(got[1][4], t + 5000)
    assert int(got[2][4]) == (t // 1000 + 50) * 1000
    assert near(got[3][4], t + 100000) and near(got[4][4], t + 100000)
    assert int(got[5][4]) == t + 7000
    # The stored expire time is exactly the one fed.
    assert r.execute_command("PEXPIRETIME", "k1") == int(got[0][4])
    # KEEPTTL, NX failing, plain SET: as they are / nothing.
    r.execute_command("SET", "k1", "w", "KEEPTTL")
    r.execute_command("SET", "k1", "x", "NX")
    r.set("plain", "1")
    assert tail.new() == [["SET", "k1", "w", "KEEPTTL"], ["SET", "plain", "1"]]


def test_getset_and_set_get_are_fed_as_set(r, tail):
    # Redis 7: GETSET as SET, SET ... GET without an expire as SET without GET.
    r.set("g", "a")
    tail.new()
    r.execute_command("GETSET", "g", "b")
    r.execute_command("SET", "g", "c", "GET")
    r.execute_command("SET", "g", "d", "get", "XX")
    r.execute_command("SET", "g", "e", "KEEPTTL", "GET")
    assert tail.new() == [["SET", "g", "b"], ["SET", "g", "c"], ["SET", "g", "d", "XX"], ["SET", "g", "e", "KEEPTTL"]]


def test_set_pxat_is_fed_as_it_came(r, tail):
    # Already absolute: not rewritten (Redis keeps the client's argv).
    t = now_ms(r)
    r.execute_command("SET", "k7", "v", "pxat", t + 8000, "GET")
    assert tail.new() == [["SET", "k7", "v", "pxat", str(t + 8000), "GET"]]


def test_whole_key_deletions_follow_lazyfree(r, tail):
    """SPOP of a whole set and RESTORE of an expired value over a key feed
    DEL, or UNLINK with lazyfree-lazy-server-del; EXPIRE in the past feeds
    DEL, or UNLINK with lazyfree-lazy-expire (Redis)."""
    r.set("src", "v")
    dump = r.dump("src")
    tail.new()
    try:
        for lazy, word in (("no", "DEL"), ("yes", "UNLINK")):
            r.config_set("lazyfree-lazy-server-del", lazy)
            r.config_set("lazyfree-lazy-expire", lazy)
            r.sadd("s", "a", "b")
            r.execute_command("SPOP", "s", 5)
            r.set("rk", "old")
            r.execute_command("RESTORE", "rk", 1, dump, "REPLACE", "ABSTTL")
            r.set("ek", "v")
            r.execute_command("EXPIRE", "ek", -1)
            assert tail.new() == [["SADD", "s", "a", "b"], [word, "s"], ["SET", "rk", "old"], [word, "rk"],
                                  ["SET", "ek", "v"], [word, "ek"]]
    finally:
        r.config_set("lazyfree-lazy-server-del", "no")
        r.config_set("lazyfree-lazy-expire", "no")


def test_set_with_time_in_past_is_del(r, tail):
    r.set("old", "1")
    r.execute_command("SET", "old", "2", "PXAT", 1000)
    assert r.exists("old") == 0
    assert tail.new() == [["SET", "old", "1"], ["DEL", "old"]]


def test_expire_family_becomes_pexpireat_or_del(r, tail):
    r.mset({"a": 1, "b": 2, "c": 3, "d": 4})
    tail.new()
    t = now_ms(r)
    r.expire("a", 100)
    r.pexpire("b", 100000)
    r.expireat("c", t // 1000 + 200)
    r.execute_command("PEXPIREAT", "d", t + 300000, "NX")
    r.execute_command("EXPIRE", "d", 10, "NX")  # NX fails: nothing
    got = tail.new()
    assert [c[:2] for c in got] == [["PEXPIREAT", k] for k in "abcd"]
    assert near(got[0][2], t + 100000) and near(got[1][2], t + 100000)
    assert int(got[2][2]) == (t // 1000 + 200) * 1000 and int(got[3][2]) == t + 300000
    r.expire("a", -5)
    r.persist("b")
    r.persist("b")  # no TTL any more: nothing
    r.expire("missing", 10)
    assert tail.new() == [["DEL", "a"], ["PERSIST", "b"]]


def test_getex_getdel_incrbyfloat(r, tail):
    r.set("g", "v")
    tail.new()
    t = now_ms(r)
    r.execute_command("GETEX", "g", "EX", 100)
    r.execute_command("GETEX", "g")  # no option: no change
    r.execute_command("GETEX", "g", "PERSIST")
    r.execute_command("GETEX", "g", "PXAT", 1)
    got = tail.new()
    assert got[0][:2] == ["PEXPIREAT", "g"] and near(got[0][2], t + 100000)
    assert got[1:] == [["PERSIST", "g"], ["DEL", "g"]]
    r.set("g2", "v")
    r.getdel("g2")
    r.getdel("g2")
    r.set("f", "10.5", ex=1000)
    r.incrbyfloat("f", "0.1")
    r.incrbyfloat("nf", "3")
    assert tail.new() == [["SET", "g2", "v"], ["DEL", "g2"], ["SET", "f", "10.5", "PXAT", tail_last_arg(r, "f")],
                          ["SET", "f", "10.6", "KEEPTTL"], ["SET", "nf", "3", "KEEPTTL"]]


def tail_last_arg(r, key):
    return str(r.execute_command("PEXPIRETIME", key))


def test_noop_writes_feed_nothing(r, tail):
    r.delete("nope")
    r.srem("nope", "x")
    r.hdel("nope", "f")
    r.lpop("nope")
    r.zrem("nope", "m")
    r.set("s", "v")
    r.execute_command("SET", "s", "w", "NX")
    r.execute_command("SETNX", "s", "x")
    r.sadd("set", "a")
    r.sadd("set", "a")
    r.get("s")
    r.execute_command("BITFIELD", "s", "GET", "u8", 0)
    assert tail.new() == [["SET", "s", "v"], ["SADD", "set", "a"]]


def test_select_follows_the_db(r, tail):
    r.execute_command("SELECT", 3)
    r.set("x", 1)
    r.execute_command("SELECT", 0)
    r.set("y", 1)
    assert tail.new(selects=True) == [["SELECT", "3"], ["SET", "x", "1"], ["SELECT", "0"], ["SET", "y", "1"]]


def test_keyspace_commands_as_they_are(r, tail):
    r.set("a", "1")
    r.rename("a", "b")
    r.copy("b", "c")
    r.execute_command("COPY", "b", "c", "DB", 2)
    r.move("c", 1)
    r.execute_command("SWAPDB", 1, 2)
    r.execute_command("FLUSHDB")
    r.execute_command("FLUSHALL")
    r.execute_command("FLUSHALL")  # already empty: still fed (Redis)
    assert tail.new() == [["SET", "a", "1"], ["RENAME", "a", "b"], ["COPY", "b", "c"], ["COPY", "b", "c", "DB", "2"],
                          ["MOVE", "c", "1"], ["SWAPDB", "1", "2"], ["FLUSHDB"], ["FLUSHALL"], ["FLUSHALL"]]


# ------------------------------------------------------------ collections --
def test_spop_becomes_srem(r, tail):
    r.sadd("s", *range(20))
    tail.new()
    one = r.spop("s")
    assert tail.new() == [["SREM", "s", one]]
    some = r.spop("s", 5)
    got = tail.new()
    assert len(got) == 1 and got[0][:2] == ["SREM", "s"] and sorted(got[0][2:]) == sorted(some)
    r.spop("s", 100)  # the rest: DEL
    assert tail.new() == [["DEL", "s"]]
    r.sadd("big", *["m%d" % i for i in range(3000)])
    tail.new()
    popped = r.spop("big", 2500)
    got = tail.new()
    # 1024 members per SREM, the commands in one MULTI/EXEC.
    assert got[0] == ["MULTI"] and got[-1] == ["EXEC"]
    members = [m for c in got[1:-1] for m in c[2:]]
    assert all(c[:2] == ["SREM", "big"] and len(c) <= 2 + 1024 for c in got[1:-1])
    assert sorted(members) == sorted(popped)
    r.sadd("str", "a", "b")
    tail.new()
    m = r.spop("str")
    assert tail.new() == [["SREM", "str", m]]


def test_hash_rewrites(r, tail):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    tail.new()
    r.hincrbyfloat("h", "a", "1.5")
    assert tail.new() == [["HSET", "h", "a", "2.5"]]
    t = now_ms(r)
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 2, "a", "zz")
    got = tail.new()
    assert got[0][:2] == ["HPEXPIREAT", "h"] and near(got[0][2], t + 100000) and got[0][3:] == ["FIELDS", "1", "a"]
    # HINCRBYFLOAT keeps the field TTL: HSET then HPEXPIREAT.
    r.hincrbyfloat("h", "a", "1")
    got = tail.new()
    assert got[0] == ["MULTI"] and got[1] == ["HSET", "h", "a", "3.5"] and got[2][:2] == ["HPEXPIREAT", "h"]
    assert got[2][3:] == ["FIELDS", "1", "a"] and got[3] == ["EXEC"]
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 1, "b")  # in the past: HDEL
    assert tail.new() == [["HDEL", "h", "b"]]
    r.execute_command("HPEXPIRE", "h", 1000, "GT", "FIELDS", 1, "c")  # GT fails on no TTL
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    assert tail.new() == [["HPERSIST", "h", "FIELDS", "1", "a"]]
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 2, "a", "c")  # the hash goes: DEL
    assert r.exists("h") == 0
    assert tail.new() == [["DEL", "h"]]


def test_blocking_pops_served_now(r, tail):
    r.rpush("l", "a", "b", "c", "d")
    r.zadd("z", {"m1": 1, "m2": 2, "m3": 3})
    tail.new()
    r.blpop(["nol", "l"], 1)
    r.brpop(["l"], 1)
    r.execute_command("BLMPOP", 1, 1, "l", "LEFT", "COUNT", 5)
    r.rpush("l", "x", "y")
    r.execute_command("LMPOP", 1, "l", "RIGHT")
    r.execute_command("BLMOVE", "l", "l2", "left", "Right", 1)
    r.execute_command("BRPOPLPUSH", "l2", "l3", 1)
    r.bzpopmin("z", 1)
    r.execute_command("BZMPOP", 1, 1, "z", "MAX", "COUNT", 2)
    # [B]LMPOP / [B]ZMPOP are fed with the count popped (2 of the 5 asked);
    # BLMOVE as LMOVE with the client's direction words, BRPOPLPUSH as
    # RPOPLPUSH (Redis's rewriteClientCommandVector).
    assert tail.new() == [["LPOP", "l"], ["RPOP", "l"], ["LPOP", "l", "2"], ["RPUSH", "l", "x", "y"],
                          ["RPOP", "l", "1"], ["LMOVE", "l", "l2", "left", "Right"],
                          ["RPOPLPUSH", "l2", "l3"], ["ZPOPMIN", "z"], ["ZPOPMAX", "z", "2"]]


def test_blocking_pops_served_later_by_the_writer(srv, r, tail):
    def blocked(cmd, out):
        c = srv.client()
        out.append(c.execute_command(*cmd))
        c.close()

    cases = [
        (("BLPOP", "q1", 5), ("RPUSH", "q1", "a"), [["RPUSH", "q1", "a"], ["LPOP", "q1"]]),
        (("BLMOVE", "q2", "d2", "right", "LEFT", 5), ("LPUSH", "q2", "b"),
         [["LPUSH", "q2", "b"], ["LMOVE", "q2", "d2", "right", "LEFT"]]),
        (("BRPOPLPUSH", "q6", "d6", 5), ("LPUSH", "q6", "b"), [["LPUSH", "q6", "b"], ["RPOPLPUSH", "q6", "d6"]]),
        (("BLMPOP", 5, 1, "q3", "RIGHT", "COUNT", 3), ("RPUSH", "q3", "1", "2"),
         [["RPUSH", "q3", "1", "2"], ["RPOP", "q3", "2"]]),
        (("BZPOPMAX", "q4", 5), ("ZADD", "q4", 1, "m"), [["ZADD", "q4", "1", "m"], ["ZPOPMAX", "q4"]]),
        (("BZMPOP", 5, 1, "q5", "MIN"), ("ZADD", "q5", 1, "m"), [["ZADD", "q5", "1", "m"], ["ZPOPMIN", "q5", "1"]]),
    ]
    for bcmd, wcmd, want in cases:
        out = []
        th = threading.Thread(target=blocked, args=(bcmd, out))
        th.start()
        deadline = time.time() + 5
        while int(r.info("clients")["blocked_clients"]) < 1 and time.time() < deadline:
            time.sleep(0.01)
        r.execute_command(*wcmd)
        th.join(10)
        assert out and out[0] is not None
        assert tail.new() == want, bcmd


def test_streams(r, tail):
    id1 = r.xadd("s", {"f": "v"})
    id2 = r.execute_command("XADD", "s", "5-*", "f", "v") if False else r.xadd("s", {"g": "w"})
    assert tail.new() == [["XADD", "s", id1, "f", "v"], ["XADD", "s", id2, "g", "w"]]
    r.execute_command("XADD", "s", "99999999999999-1", "h", "x")  # explicit: as it is
    assert tail.new() == [["XADD", "s", "99999999999999-1", "h", "x"]]
    # Approximate trims: exact ones to what was left.
    for i in range(300):
        r.execute_command("XADD", "t", "%d-1" % (i + 1), "f", i)
    tail.new()
    nid = r.execute_command("XADD", "t", "MAXLEN", "~", 100, "LIMIT", 1000, "*", "f", "last")
    ln = r.xlen("t")
    assert tail.new() == [["XADD", "t", "MAXLEN", "=", str(ln), nid, "f", "last"]]
    r.execute_command("XTRIM", "t", "MAXLEN", "~", 10)
    ln2 = r.xlen("t")
    got = tail.new()
    if ln2 < ln:
        assert got == [["XTRIM", "t", "MAXLEN", "=", str(ln2)]]
    else:
        assert got == []
    r.execute_command("XTRIM", "t", "MINID", "=", "280-1")
    assert tail.new() == [["XTRIM", "t", "MINID", "=", "280-1"]]
    first = r.xrange("t", count=1)[0][0]
    assert first == "280-1"


def test_stream_groups(r, tail):
    for i in range(1, 6):
        r.execute_command("XADD", "s", "%d-0" % i, "f", i)
    tail.new()
    r.execute_command("XGROUP", "CREATE", "s", "g", "$")
    r.execute_command("XGROUP", "CREATE", "s", "g2", "0")
    assert tail.new() == [["XGROUP", "CREATE", "s", "g", "5-0"], ["XGROUP", "CREATE", "s", "g2", "0"]]
    r.execute_command("XREADGROUP", "GROUP", "g2", "alice", "COUNT", 2, "STREAMS", "s", ">")
    got = tail.new()
    assert got[0] == ["MULTI"] and got[-1] == ["EXEC"]
    assert got[1] == ["XGROUP", "CREATECONSUMER", "s", "g2", "alice"]
    for c, id_ in zip(got[2:4], ["1-0", "2-0"]):
        assert c[:6] == ["XCLAIM", "s", "g2", "alice", "0", id_]
        assert c[6] == "TIME" and c[8:] == ["RETRYCOUNT", "1", "FORCE", "JUSTID", "LASTID", id_]
    assert got[4] == ["XGROUP", "SETID", "s", "g2", "2-0", "ENTRIESREAD", "2"]
    # NOACK: only the group's position moves.
    r.execute_command("XREADGROUP", "GROUP", "g2", "alice", "NOACK", "COUNT", 1, "STREAMS", "s", ">")
    assert tail.new() == [["XGROUP", "SETID", "s", "g2", "3-0", "ENTRIESREAD", "3"]]
    # Nothing new: only the consumer, which Redis 7.2 creates too (it feeds
    # that only with NOACK, leaving its replicas without the consumer).
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert tail.new() == [["XGROUP", "CREATECONSUMER", "s", "g", "alice"]]
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert tail.new() == []
    # History re-delivery: XCLAIM with the new count.
    r.execute_command("XREADGROUP", "GROUP", "g2", "alice", "STREAMS", "s", "0")
    got = tail.new()
    assert [c[5] for c in got[1:-1]] == ["1-0", "2-0"] and all(c[9] == "2" for c in got[1:-1])
    r.execute_command("XCLAIM", "s", "g2", "bob", 0, "1-0")
    got = tail.new()
    assert got[0] == ["MULTI"] and got[1] == ["XGROUP", "CREATECONSUMER", "s", "g2", "bob"]
    assert got[2][:6] == ["XCLAIM", "s", "g2", "bob", "0", "1-0"] and got[2][9] == "3"
    r.execute_command("XAUTOCLAIM", "s", "g2", "carol", 0, "0-0", "COUNT", 1)
    got = tail.new()
    assert got[1] == ["XGROUP", "CREATECONSUMER", "s", "g2", "carol"] and got[2][:6] == ["XCLAIM", "s", "g2", "carol",
                                                                                          "0", "1-0"]
    r.xdel("s", "2-0")
    tail.new()
    r.execute_command("XAUTOCLAIM", "s", "g2", "carol", 0, "0-0")  # 2-0 is gone: its NACK dropped
    got = tail.new()
    assert ["XACK", "s", "g2", "2-0"] in got
    r.xack("s", "g2", "1-0")
    r.xack("s", "g2", "1-0")  # nothing left to ack
    r.execute_command("XSETID", "s", "100-0")
    r.execute_command("XGROUP", "SETID", "s", "g", "$")
    r.execute_command("XGROUP", "DELCONSUMER", "s", "g2", "bob")
    r.execute_command("XGROUP", "DESTROY", "s", "g")
    assert tail.new() == [["XACK", "s", "g2", "1-0"], ["XSETID", "s", "100-0"],
                          ["XGROUP", "SETID", "s", "g", "100-0"], ["XGROUP", "DELCONSUMER", "s", "g2", "bob"],
                          ["XGROUP", "DESTROY", "s", "g"]]


def test_xreadgroup_served_later(srv, r, tail):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    tail.new()
    out = []

    def blocked():
        c = srv.client()
        out.append(c.execute_command("XREADGROUP", "GROUP", "g", "w", "BLOCK", 5000, "STREAMS", "s", ">"))
        c.close()

    th = threading.Thread(target=blocked)
    th.start()
    deadline = time.time() + 5
    while int(r.info("clients")["blocked_clients"]) < 1 and time.time() < deadline:
        time.sleep(0.01)
    r.execute_command("XADD", "s", "7-0", "f", "v")
    th.join(10)
    assert out and out[0]
    got = tail.new()
    # The consumer was made when it blocked (Redis 7.2), then the entry came.
    assert got[0] == ["XGROUP", "CREATECONSUMER", "s", "g", "w"]
    got = got[1:]
    assert got[0] == ["XADD", "s", "7-0", "f", "v"]
    assert got[1] == ["MULTI"] and got[-1] == ["EXEC"]
    assert ["XGROUP", "SETID", "s", "g", "7-0", "ENTRIESREAD", "1"] in got
    assert any(c[:6] == ["XCLAIM", "s", "g", "w", "0", "7-0"] for c in got)


# ------------------------------------------------- scripts, transactions --
def test_scripts_are_fed_as_their_effects(r, tail):
    r.sadd("s", "a", "b", "c")
    tail.new()
    r.eval("return redis.call('GET', KEYS[1])", 1, "x")
    assert tail.new() == []
    r.eval("redis.call('SET', KEYS[1], ARGV[1])", 1, "x", "1")
    assert tail.new() == [["SET", "x", "1"]]
    m = r.eval("redis.call('INCR', KEYS[1]); return redis.call('SPOP', KEYS[2])", 2, "x", "s")
    got = tail.new()
    assert got == [["MULTI"], ["INCR", "x"], ["SREM", "s", m], ["EXEC"]]
    # SELECT inside a script, an expire, a failing script after a write.
    r.eval("redis.call('SELECT', 2); redis.call('SET', 'y', 1); redis.call('EXPIRE', 'y', 100)", 0)
    got = tail.new(selects=True)
    assert got[0] == ["MULTI"] and got[1:3] == [["SELECT", "2"], ["SET", "y", "1"]]
    assert got[3][:2] == ["PEXPIREAT", "y"] and got[4] == ["EXEC"]
    with pytest.raises(redis.exceptions.ResponseError):
        r.eval("redis.call('SET', 'z', 1); redis.call('INCR', 'z', 'extra')", 0)
    assert tail.new() == [["SET", "z", "1"]]
    # redis.set_repl(): writes after REPL_NONE are not fed, REPL_ALL again.
    r.eval("redis.call('SET', 'r1', 1); redis.set_repl(redis.REPL_NONE); redis.call('SET', 'r2', 2); "
           "redis.set_repl(redis.REPL_ALL); redis.call('SET', 'r3', 3)", 0)
    assert tail.new() == [["MULTI"], ["SET", "r1", "1"], ["SET", "r3", "3"], ["EXEC"]]
    # Functions: FUNCTION LOAD is fed, FCALL as its effects.
    code = "#!lua name=plib\nredis.register_function('setit', function(k, a) return redis.call('SET', k[1], a[1]) end)"
    r.execute_command("FUNCTION", "LOAD", code)
    r.execute_command("FCALL", "setit", 1, "fk", "fv")
    r.execute_command("FUNCTION", "DELETE", "plib")
    assert tail.new() == [["FUNCTION", "LOAD", code], ["SET", "fk", "fv"], ["FUNCTION", "DELETE", "plib"]]


def test_transactions(r, tail):
    p = r.pipeline(transaction=True)
    p.get("a")
    p.exists("b")
    p.execute()
    assert tail.new() == []
    p = r.pipeline(transaction=True)
    p.set("a", 1)
    p.get("a")
    p.execute()
    assert tail.new() == [["SET", "a", "1"]]
    r.sadd("s", "m")
    tail.new()
    p = r.pipeline(transaction=True)
    p.set("a", 2)
    p.expire("a", 100)
    p.execute_command("SELECT", 1)
    p.spop("s")
    p.delete("nothing")
    p.execute_command("SELECT", 0)
    p.execute()
    got = tail.new(selects=True)
    assert got[0] == ["MULTI"] and got[-1] == ["EXEC"]
    assert got[1] == ["SET", "a", "2"] and got[2][:2] == ["PEXPIREAT", "a"]
    assert got[3:-1] == []  # SPOP in db 1 (no set there) and DEL nothing: no change
    # WATCH failing: nothing.
    r.execute_command("WATCH", "w")
    r.set("w", 1)
    tail.new()
    c = r.pipeline(transaction=True)
    c.set("w", 2)
    c.execute_command("UNWATCH")
    r.execute_command("MULTI")
    r.execute_command("SET", "w", 3)
    assert r.execute_command("EXEC") is None
    assert tail.new() == []


# --------------------------------------------------------------- expiry --
def test_scan_feeds_the_keys_it_expires_as_plain_dels(r, tail):
    # As Redis 7.2 (unit/expire): not wrapped in MULTI/EXEC.
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        r.set("foo1", "bar", px=1)
        r.set("foo2", "bar", px=1)
        time.sleep(0.01)
        tail.new()
        r.execute_command("SCAN", "0", "COUNT", "16384")
        got = tail.new()
        assert sorted(got) == [["DEL", "foo1"], ["DEL", "foo2"]]
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_expired_keys_are_fed_as_del(r, tail):
    r.set("lazy", "1", px=50)
    r.set("active", "1", px=50)
    r.hset("hf", "f", "1")
    r.execute_command("HPEXPIRE", "hf", 50, "FIELDS", 1, "f")
    tail.new()
    time.sleep(0.2)
    assert r.get("lazy") is None  # lazy expiry on access
    deadline = time.time() + 5
    got = []
    while time.time() < deadline:
        got += tail.new()
        if ["DEL", "active"] in got and ["DEL", "hf"] in got:
            break
        time.sleep(0.05)
    assert ["DEL", "lazy"] in got and ["DEL", "active"] in got and ["DEL", "hf"] in got
    assert ["HDEL", "hf", "f"] in got  # the field, then the hash that went with it
    # Only the deletions (the GET is not fed).
    assert all(c[0] in ("DEL", "HDEL") for c in got)
    # A field that expires in a hash that stays: HDEL (lazily, or by the sweeper).
    r.hset("h2", mapping={"a": "1", "b": "2", "c": "3"})
    r.execute_command("HPEXPIRE", "h2", 30, "FIELDS", 2, "a", "b")
    tail.new()
    time.sleep(0.1)
    assert r.hget("h2", "a") is None
    deadline = time.time() + 5
    got = []
    while time.time() < deadline and not (["HDEL", "h2", "b"] in got and ["HDEL", "h2", "a"] in got):
        got += tail.new()
        time.sleep(0.05)
    assert sorted(got) == [["HDEL", "h2", "a"], ["HDEL", "h2", "b"]]


def test_changes_counter(r):
    def changes():
        return int(r.info("persistence")["rdb_changes_since_last_save"])

    c0 = changes()
    r.set("a", 1)
    r.mset({"b": 1, "c": 2})
    assert changes() - c0 == 3
    c0 = changes()
    r.get("a")
    r.delete("none")
    assert changes() == c0
    for cmd in (("XADD", "s", "1-0", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"), ("XSETID", "s", "5-0"),
                ("XGROUP", "CREATECONSUMER", "s", "g", "c"), ("SWAPDB", 0, 1), ("SWAPDB", 0, 1),
                ("FUNCTION", "FLUSH")):
        c0 = changes()
        r.execute_command(*cmd)
        assert changes() > c0, cmd


# ------------------------------------------------- replay after the TTLs --
def test_replay_after_ttls_passed():
    """Writes on keys/fields whose TTL passes while the server is down: the
    replay must not apply them to a key that already counts as expired (it
    replays with expiry off, as Redis, so the TTL is there at the end)."""
    d = tempfile.mkdtemp(prefix="hotkv-prop-ttl-")
    s = Srv(d).start()
    try:
        c = s.client()
        c.set("n", 5, px=400)
        c.incr("n")                     # keeps the TTL
        c.rpush("l", "a")
        c.pexpire("l", 400)
        c.rpush("l", "b")
        c.hset("h", mapping={"f": "5", "g": "1"})
        c.execute_command("HPEXPIRE", "h", 400, "FIELDS", 1, "f")
        c.hincrby("h", "f", 1)          # keeps the field TTL
        c.sadd("s", "x")
        c.pexpire("s", 400)
        c.execute_command("HPEXPIRE", "h", 300, "FIELDS", 1, "g")
        c.execute_command("HSETNX", "h", "g", "2")  # g is live: no change
        c.set("keep", "1", ex=1000)
        c.incr("keep")
        c.close()
        s.kill9()
        time.sleep(0.6)
        s.start()
        c = s.client()
        assert c.exists("n", "l", "s") == 0
        assert c.hgetall("h") == {}
        assert c.get("keep") == "2" and c.ttl("keep") > 900
        c.close()
        assert s.stop() == 0
    finally:
        if s.proc.poll() is None:
            s.stop()
    shutil.rmtree(d, ignore_errors=True)


def test_replay_of_expired_field_then_rewritten():
    d = tempfile.mkdtemp(prefix="hotkv-prop-hf-")
    s = Srv(d).start()
    try:
        c = s.client()
        c.hset("h", mapping={"f": "old", "k": "1"})
        c.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "f")
        time.sleep(0.1)
        c.execute_command("HSETNX", "h", "f", "new")  # f expired: set again, no TTL
        c.close()
        s.kill9()
        s.start()
        c = s.client()
        assert c.hgetall("h") == {"f": "new", "k": "1"}
        assert c.execute_command("HTTL", "h", "FIELDS", 1, "f") == [-1]
        c.close()
        assert s.stop() == 0
    finally:
        if s.proc.poll() is None:
            s.stop()
    shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------- differential --
DBS = 3
N = 8  # keys per type


def ttl_args(rnd):
    x = rnd.random()
    if x < 0.15:
        return ["EX", rnd.randint(1000, 5000)]
    if x < 0.2:
        return ["PX", rnd.randint(1, 80)]  # gone before the snapshot
    return []


def random_command(rnd):
    """One random command; keys are mostly of their type's family (str:,
    list:, hash:, set:, zset:, st:) so that the type's commands do work;
    RENAME/COPY/MOVE/SWAPDB mix them now and then."""
    i = rnd.randint(0, N - 1)
    m = "m%d" % rnd.randint(0, 12)
    v = rnd.choice(["v", "1", "2.5", "-7", "x" * rnd.randint(0, 70), "%d" % rnd.randint(0, 10 ** 6)])
    fam = rnd.choice(["str", "list", "hash", "set", "zset", "st", "st", "gen", "script"])
    k, k2 = "%s:%d" % (fam, i), "%s:%d" % (fam, rnd.randint(0, N - 1))
    if fam == "str":
        return rnd.choice([
            lambda: ["SET", k, v] + ttl_args(rnd), lambda: ["SETEX", k, rnd.randint(1000, 9000), v],
            lambda: ["INCR", k], lambda: ["INCRBYFLOAT", k, "%.3f" % (rnd.random() * 10)],
            lambda: ["APPEND", k, v], lambda: ["SETRANGE", k, rnd.randint(0, 20), v], lambda: ["GETDEL", k],
            lambda: ["GETEX", k, "EX", rnd.randint(1000, 9000)], lambda: ["GETEX", k, "PERSIST"],
            lambda: ["GETEX", k, "PX", rnd.randint(1, 50)], lambda: ["SETBIT", k, rnd.randint(0, 100), 1],
            lambda: ["MSET", k, v, k2, v], lambda: ["GETSET", k, v]])()
    if fam == "list":
        return rnd.choice([
            lambda: ["LPUSH", k, v, m], lambda: ["RPUSH", k, m], lambda: ["RPUSH", k, m, v, "x"],
            lambda: ["LPOP", k], lambda: ["RPOP", k, 2], lambda: ["LMOVE", k, k2, "LEFT", "RIGHT"],
            lambda: ["LTRIM", k, 0, rnd.randint(2, 8)], lambda: ["LINSERT", k, "BEFORE", m, v],
            lambda: ["LREM", k, 0, m], lambda: ["LMPOP", 2, k, k2, "LEFT", "COUNT", 2],
            lambda: ["RPOPLPUSH", k, k2], lambda: ["LSET", k, 0, v]])()
    if fam == "hash":
        return rnd.choice([
            lambda: ["HSET", k, m, v, "f%d" % rnd.randint(0, 5), v], lambda: ["HINCRBY", k, m, 3],
            lambda: ["HINCRBYFLOAT", k, m, "1.25"], lambda: ["HDEL", k, m], lambda: ["HSETNX", k, m, v],
            lambda: ["HEXPIRE", k, rnd.randint(1000, 9000), "FIELDS", 2, m, "f1"],
            lambda: ["HPEXPIRE", k, rnd.randint(1, 60), "FIELDS", 1, m],
            lambda: ["HEXPIRE", k, rnd.randint(1000, 9000), rnd.choice(["NX", "XX", "GT", "LT"]), "FIELDS", 1, m],
            lambda: ["HPERSIST", k, "FIELDS", 1, m], lambda: ["HPEXPIREAT", k, 5, "FIELDS", 1, m],
            lambda: ["HGET", k, m], lambda: ["HRANDFIELD", k, 2]])()
    if fam == "set":
        return rnd.choice([
            lambda: ["SADD", k, m, "%d" % rnd.randint(0, 50), v], lambda: ["SREM", k, m], lambda: ["SPOP", k],
            lambda: ["SPOP", k, rnd.randint(1, 4)], lambda: ["SMOVE", k, k2, m], lambda: ["SINTERSTORE", k, k2, k],
            lambda: ["SUNIONSTORE", k, k2, k], lambda: ["SDIFFSTORE", k2, k, k2]])()
    if fam == "zset":
        return rnd.choice([
            lambda: ["ZADD", k, rnd.randint(-5, 5), m], lambda: ["ZADD", k, "INCR", "0.25", m],
            lambda: ["ZINCRBY", k, "0.5", m], lambda: ["ZPOPMIN", k], lambda: ["ZPOPMAX", k, 2],
            lambda: ["ZUNIONSTORE", k, 2, k, k2], lambda: ["ZREM", k, m], lambda: ["ZMPOP", 1, k, "MIN"],
            lambda: ["ZREMRANGEBYSCORE", k, 0, 1], lambda: ["ZRANGESTORE", k2, k, 0, 2]])()
    if fam == "st":
        g = "g%d" % rnd.randint(0, 1)
        return rnd.choice([
            lambda: ["XADD", k, "*", "f", v], lambda: ["XADD", k, "*", "f", v, "g", m],
            lambda: ["XADD", k, "MAXLEN", "~", rnd.randint(0, 5), "*", "f", v],
            lambda: ["XADD", k, "MINID", "~", "0-1", "*", "g", v], lambda: ["XTRIM", k, "MAXLEN", rnd.randint(3, 9)],
            lambda: ["XGROUP", "CREATE", k, g, rnd.choice(["$", "0"]), "MKSTREAM"],
            lambda: ["XREADGROUP", "GROUP", g, "c%d" % rnd.randint(0, 2), "COUNT", 2, "STREAMS", k, ">"],
            lambda: ["XREADGROUP", "GROUP", g, "c%d" % rnd.randint(0, 2), "COUNT", 2, "STREAMS", k, ">"],
            lambda: ["XREADGROUP", "GROUP", g, "c%d" % rnd.randint(0, 2), "STREAMS", k, "0"],
            lambda: ["XREADGROUP", "GROUP", "g0", "c0", "NOACK", "COUNT", 1, "STREAMS", k, ">"],
            lambda: ["XAUTOCLAIM", k, g, "c%d" % rnd.randint(0, 2), 0, "0-0", "COUNT", 2],
            lambda: ["XAUTOCLAIM", k, g, "c1", 0, "0-0", "COUNT", 1, "JUSTID"],
            lambda: ["XACK", k, g, xid_of(rnd)], lambda: ["XDEL", k, xid_of(rnd)],
            lambda: ["XGROUP", "SETID", k, g, "0"], lambda: ["XGROUP", "DELCONSUMER", k, g, "c2"],
            lambda: ["XGROUP", "CREATECONSUMER", k, g, "c%d" % rnd.randint(3, 4)]])()
    if fam == "script":
        kk = "set:%d" % i
        return rnd.choice([
            lambda: ["EVAL", "redis.call('INCR', KEYS[1]); return redis.call('SPOP', KEYS[2])", 2, "str:%d" % i, kk],
            lambda: ["EVAL", "redis.call('SET', KEYS[1], ARGV[1], 'PX', 100000); "
                             "redis.call('LPUSH', KEYS[2], ARGV[1])", 2, "str:%d" % i, "list:%d" % i, v],
            lambda: ["EVAL", "redis.call('XREADGROUP', 'GROUP', 'g0', 'lua', 'COUNT', 1, 'STREAMS', KEYS[1], '>')",
                     1, "st:%d" % i],
            lambda: ["FCALL", "pushit", 1, "list:%d" % i, v],
            lambda: ["EVAL", "return redis.call('GET', KEYS[1])", 1, "str:%d" % i]])()
    kk = "%s:%d" % (rnd.choice(["str", "list", "hash", "set", "zset", "st"]), i)
    kk2 = "%s:%d" % (rnd.choice(["str", "list", "hash", "set", "zset", "st"]), rnd.randint(0, N - 1))
    return rnd.choice([
        lambda: ["EXPIRE", kk, rnd.randint(1000, 9000)], lambda: ["PEXPIRE", kk, rnd.randint(1, 60)],
        lambda: ["EXPIREAT", kk, rnd.randint(1, 100)], lambda: ["PERSIST", kk], lambda: ["DEL", kk],
        lambda: ["RENAME", kk, kk2], lambda: ["COPY", kk, kk2, "REPLACE"], lambda: ["MOVE", kk, rnd.randint(0, DBS - 1)],
        lambda: ["COPY", kk, kk, "DB", rnd.randint(0, DBS - 1)], lambda: ["SCAN", 0], lambda: ["RANDOMKEY"]])()


def xid_of(rnd):
    return "%d-%d" % (rnd.randint(1, 3) * 0 + int(time.time() * 1000) - rnd.randint(0, 2000), 0)


def blocking_command(rnd):
    i, j = rnd.randint(0, N - 1), rnd.randint(0, N - 1)
    return rnd.choice([
        ["BLPOP", "list:%d" % i, 0.05], ["BRPOP", "list:%d" % i, "list:%d" % j, 0.05],
        ["BLMOVE", "list:%d" % i, "list:%d" % j, "LEFT", "LEFT", 0.05],
        ["BRPOPLPUSH", "list:%d" % i, "list:%d" % j, 0.05],
        ["BLMPOP", 0.05, 2, "list:%d" % i, "list:%d" % j, "RIGHT", "COUNT", 2],
        ["BZPOPMIN", "zset:%d" % i, 0.05], ["BZMPOP", 0.05, 1, "zset:%d" % i, "MAX", "COUNT", 2],
        ["XREADGROUP", "GROUP", "g0", "c2", "BLOCK", 50, "STREAMS", "st:%d" % i, ">"]])


def worker(port, seed, n, stop_err, flusher=False):
    rnd = random.Random(seed)
    c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=30,
                    encoding_errors="surrogateescape")
    c.response_callbacks.clear()  # raw replies (ZADD INCR's float, ...)
    try:
        for it in range(n):
            x = rnd.random()
            try:
                if x < 0.02:
                    c.execute_command("SELECT", rnd.randint(0, DBS - 1))
                elif x < 0.07:
                    p = c.pipeline(transaction=True)
                    for _ in range(rnd.randint(1, 4)):
                        p.execute_command(*random_command(rnd))
                    p.execute(raise_on_error=False)
                elif x < 0.12:
                    # Short blocking pops: served by other clients' pushes
                    # (on their threads), or they time out.
                    c.execute_command(*blocking_command(rnd))
                elif x < 0.122:
                    c.execute_command("SWAPDB", 0, rnd.randint(1, DBS - 1))
                elif flusher and it == n // 3:
                    c.execute_command("FLUSHDB")
                else:
                    c.execute_command(*random_command(rnd))
            except redis.exceptions.ResponseError:
                pass  # WRONGTYPE and friends
    except Exception as e:  # noqa: BLE001 - reported by the test
        stop_err.append(repr(e))
    finally:
        c.close()


def stream_state(c, k):
    entries = c.xrange(k)
    info = c.execute_command("XINFO", "STREAM", k, "FULL")
    d = dict(zip(info[::2], info[1::2]))
    groups = []
    for g in d["groups"]:
        gd = dict(zip(g[::2], g[1::2]))
        cons = []
        for cn in gd["consumers"]:
            cd = dict(zip(cn[::2], cn[1::2]))
            cons.append((cd["name"], cd["pel-count"], [tuple(p) for p in cd["pending"]]))
        groups.append((gd["name"], gd["last-delivered-id"], gd["entries-read"], gd["pel-count"],
                       [tuple(p) for p in gd["pending"]], sorted(cons)))
    return (entries, d["length"], d["last-generated-id"], d["max-deleted-entry-id"], d["entries-added"],
            d["recorded-first-entry-id"], sorted(groups))


def dataset(c, field_ttls=True):
    """Every key of every database: type, value, PEXPIRETIME (and the hash
    fields' TTLs unless field_ttls is False: Redis 7.0 has no HPEXPIRETIME)."""
    out = {}
    for db in range(DBS):
        c.execute_command("SELECT", db)
        for k in sorted(c.scan_iter(count=1000)):
            t = c.type(k)
            if t == "none":
                continue
            if t == "string":
                v = c.get(k)
            elif t == "list":
                v = c.lrange(k, 0, -1)
            elif t == "set":
                v = sorted(c.smembers(k))
            elif t == "zset":
                v = c.zrange(k, 0, -1, withscores=True)
            elif t == "hash":
                items = sorted(c.hgetall(k).items())
                fields = [f for f, _ in items]
                ttl = c.execute_command("HPEXPIRETIME", k, "FIELDS", len(fields), *fields) if fields and field_ttls else []
                v = (items, ttl)
            elif t == "stream":
                v = stream_state(c, k)
            else:
                v = "?"
            out[(db, k)] = (t, v, c.execute_command("PEXPIRETIME", k))
    c.execute_command("SELECT", 0)
    return out


def functions(c):
    return sorted((dict(zip(l[::2], l[1::2]))["library_name"], dict(zip(l[::2], l[1::2]))["library_code"])
                  for l in c.execute_command("FUNCTION", "LIST", "WITHCODE"))


SEEDS = [int(x) for x in os.environ.get("PROP_SEEDS", "1,2").split(",")]


@not_tsan
@pytest.mark.parametrize("seed", SEEDS)
def test_differential_restart_from_aof(seed):
    d = tempfile.mkdtemp(prefix="hotkv-prop-diff-")
    s = Srv(d, threads=4).start()
    try:
        c = s.client()
        c.execute_command("FUNCTION", "LOAD", "#!lua name=difflib\nredis.register_function('pushit', "
                          "function(k, a) redis.call('RPUSH', k[1], a[1]); return redis.call('LLEN', k[1]) end)")
        errs = []
        threads = [threading.Thread(target=worker, args=(s.port, seed * 100 + i, 2500, errs, i == 0))
                   for i in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(300)
        assert not errs, errs
        time.sleep(0.3)  # the short TTLs (< 100 ms) are past: their keys and fields are gone
        before, fns = dataset(c), functions(c)
        c.close()
        assert len(before) > 20
        s.kill9()  # appendfsync always: everything acknowledged is in the AOF
        s.start()
        c = s.client()
        after, fns2 = dataset(c), functions(c)
        c.close()
        missing = set(before) - set(after)
        extra = set(after) - set(before)
        diff = [k for k in before if k in after and before[k] != after[k]]
        assert not missing and not extra and not diff, (
            "missing %s extra %s differ %s" % (sorted(missing)[:5], sorted(extra)[:5],
                                               [(k, before[k], after[k]) for k in diff[:3]]))
        assert fns == fns2
        rc = s.stop()
        assert rc == 0, "server exited with %s (log in %s)" % (rc, d)
    finally:
        if s.proc.poll() is None:
            s.stop()
    shutil.rmtree(d, ignore_errors=True)
