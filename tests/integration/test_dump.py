"""DUMP and RESTORE: every type and encoding round trips, every option and
error of RESTORE (Redis 7.0's texts), keyspace events, WATCH and client
tracking, and payloads exchanged with Debian's redis-server 7.0.15 in both
directions (HotKV runs with --rdb-version 10 there, the version 7.0 reads).

Runs against hotkv (default) and against redis-server (HOTKV_SERVER=redis),
where the peer exchange is Redis with itself.  The peer redis-server uses a
port in 7100-7199.
"""
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import MODE, Resp, Server
from helpers import crc64

IS_REDIS = MODE == "redis"



def seal(body, version=10):
    """A payload: body + version (LE16) + CRC-64 (LE64)."""
    p = body + struct.pack("<H", version)
    return p + struct.pack("<Q", crc64(p))


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_str(s):
    if isinstance(s, str):
        s = s.encode()
    return rdb_len(len(s)) + s


# ---------------------------------------------------------------- fixtures ---
def _free_port_in_range(lo=7100, hi=7199):
    for p in range(lo, hi + 1):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
        finally:
            s.close()
        return p
    pytest.skip("no free port in %d-%d" % (lo, hi))


class Peer:
    """A redis-server 7.0 to exchange payloads and files with."""

    def __init__(self, *args, files=()):
        """files: paths copied into the server's directory before it starts."""
        if not shutil.which("redis-server"):
            pytest.skip("redis-server not installed")
        self.dir = tempfile.mkdtemp(prefix="hotkv-peer-")
        for f in files:
            shutil.copy(f, self.dir)
        self.port = _free_port_in_range()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir] + [str(a) for a in args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("peer redis-server did not start")

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def srv():
    s = Server() if IS_REDIS else Server("--rdb-version", "10")
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def peer():
    p = Peer()
    yield p
    p.stop()


@pytest.fixture
def c(srv):
    cl = srv.client()
    cl.flushall()
    cl.config_set("maxmemory-policy", "noeviction")
    yield cl
    cl.close()


@pytest.fixture
def pc(peer):
    cl = peer.client()
    cl.flushall()
    yield cl
    cl.close()


# ------------------------------------------------------- values per encoding ---
def _long(n, ch="x"):
    return (ch * n).encode()


BUILDERS = {
    # name: (function creating key k on client x, expected type)
    "str-int": (lambda x, k: x.set(k, 12345), "string"),
    "str-negint": (lambda x, k: x.set(k, -9223372036854775808), "string"),
    "str-embstr": (lambda x, k: x.set(k, "hello"), "string"),
    "str-empty": (lambda x, k: x.set(k, ""), "string"),
    "str-binary": (lambda x, k: x.set(k, bytes(range(256))), "string"),
    "str-raw-compressible": (lambda x, k: x.set(k, b"abc" * 1000), "string"),
    "str-raw-random": (lambda x, k: x.set(k, os.urandom(5000)), "string"),
    "str-63": (lambda x, k: x.set(k, _long(63)), "string"),
    "str-64": (lambda x, k: x.set(k, _long(64, "y")), "string"),
    "str-16384": (lambda x, k: x.set(k, os.urandom(16384)), "string"),
    "str-int-like-long": (lambda x, k: x.set(k, "123456789012345678901234"), "string"),
    "str-leading-zero": (lambda x, k: x.set(k, "0123"), "string"),
    "list-small": (lambda x, k: x.rpush(k, "a", "b", 1, 2, -3, 2**40), "list"),
    "list-big": (lambda x, k: x.rpush(k, *["elem-%d" % i for i in range(5000)]), "list"),
    "list-large-elems": (lambda x, k: x.rpush(k, _long(10000), "small", _long(70000, "z")), "list"),
    "set-intset": (lambda x, k: x.sadd(k, 1, 2, 3, -100000, 2**62), "set"),
    "set-intset-big": (lambda x, k: x.sadd(k, *range(0, 1500, 3)), "set"),
    "set-listpack": (lambda x, k: x.sadd(k, "a", "b", "c", 1), "set"),
    "set-hashtable": (lambda x, k: x.sadd(k, *["m%d" % i for i in range(1000)]), "set"),
    "set-hashtable-long": (lambda x, k: x.sadd(k, _long(100), "b"), "set"),
    "zset-listpack": (lambda x, k: x.zadd(k, {"a": 1, "b": 2.5, "c": -0.125, "d": 1e300}), "zset"),
    "zset-inf": (lambda x, k: x.zadd(k, {"lo": float("-inf"), "hi": float("inf"), "mid": 0}), "zset"),
    "zset-skiplist": (lambda x, k: x.zadd(k, {"m%d" % i: i / 7 for i in range(1000)}), "zset"),
    "zset-skiplist-long": (lambda x, k: x.zadd(k, {_long(100): 1, "b": 2}), "zset"),
    "hash-listpack": (lambda x, k: x.hset(k, mapping={"f": "v", "n": 12, "e": ""}), "hash"),
    "hash-hashtable": (lambda x, k: x.hset(k, mapping={"f%d" % i: "v%d" % i for i in range(1000)}), "hash"),
    "hash-hashtable-long": (lambda x, k: x.hset(k, mapping={"f": _long(100), "g": "1"}), "hash"),
}


def value_of(x, k):
    t = x.type(k).decode()
    if t == "string":
        v = x.get(k)
    elif t == "list":
        v = x.lrange(k, 0, -1)
    elif t == "set":
        v = sorted(x.smembers(k))
    elif t == "zset":
        v = x.zrange(k, 0, -1, withscores=True)
    elif t == "hash":
        v = sorted(x.hgetall(k).items())
    elif t == "stream":
        v = x.xrange(k)
    else:
        v = None
    return t, v


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_dump_restore_round_trip(c, kind):
    build, typ = BUILDERS[kind]
    build(c, "src")
    payload = c.dump("src")
    assert isinstance(payload, bytes) and len(payload) > 10
    assert c.restore("dst", 0, payload) == b"OK"
    assert value_of(c, "dst") == value_of(c, "src")
    assert value_of(c, "dst")[0] == typ
    assert c.object("encoding", "dst") == c.object("encoding", "src")
    assert c.ttl("dst") == -1
    # the payload of the restored key restores to the same value again
    assert c.restore("dst2", 0, c.dump("dst")) == b"OK"
    assert value_of(c, "dst2") == value_of(c, "src")


def test_dump_missing_key_is_nil(c):
    assert c.dump("nope") is None


def test_dump_footer_version_and_crc(c, srv):
    c.set("k", "v")
    p = c.dump("k")
    assert p[:-10] == b"\x00\x01v"
    ver = struct.unpack("<H", p[-10:-8])[0]
    assert ver == (10 if not IS_REDIS else ver)
    assert struct.unpack("<Q", p[-8:])[0] == crc64(p[:-8])


@pytest.mark.skipif(IS_REDIS, reason="rdb-version is a HotKV parameter")
def test_dump_version_follows_rdb_version(c):
    c.sadd("s", "a", "b")
    try:
        c.config_set("rdb-version", 11)
        p = c.dump("s")
        assert struct.unpack("<H", p[-10:-8])[0] == 11
        assert p[0] == 20  # set listpack exists from RDB 11 (Redis 7.2)
        c.config_set("rdb-version", 10)
        p = c.dump("s")
        assert struct.unpack("<H", p[-10:-8])[0] == 10
        assert p[0] == 2  # Redis 7.0 has no set listpack: a plain set
    finally:
        c.config_set("rdb-version", 10)


# ----------------------------------------------------------------- options ---
def test_restore_ttl_relative_and_absttl(c):
    c.set("a", "1")
    p = c.dump("a")
    assert c.restore("r1", 5000, p) == b"OK"
    assert 4000 < c.pttl("r1") <= 5000
    at = int(time.time() * 1000) + 100000
    assert c.restore("r2", at, p, absttl=True) == b"OK"
    assert 90000 < c.pttl("r2") <= 100000
    assert c.execute_command("PEXPIRETIME", "r2") == at


def test_restore_ttl_in_the_past(c):
    c.set("a", "1")
    p = c.dump("a")
    # an absolute time already passed: OK, nothing created
    assert c.restore("gone", 1, p, absttl=True) == b"OK"
    assert c.exists("gone") == 0
    # with REPLACE the existing key is deleted
    c.set("old", "x")
    assert c.restore("old", 1, p, absttl=True, replace=True) == b"OK"
    assert c.exists("old") == 0


def test_restore_busykey_and_replace(c):
    c.set("a", "1")
    c.rpush("b", "x")
    p = c.dump("a")
    with pytest.raises(redis.ResponseError) as e:
        c.restore("b", 0, p)
    assert str(e.value) == "BUSYKEY Target key name already exists."
    assert c.type("b") == b"list"
    assert c.restore("b", 0, p, replace=True) == b"OK"
    assert c.get("b") == b"1"
    # REPLACE drops the old TTL, a new one applies
    c.set("t", "x", ex=100)
    assert c.restore("t", 0, p, replace=True) == b"OK"
    assert c.ttl("t") == -1


def test_restore_idletime_and_freq(c):
    c.set("a", "1")
    p = c.dump("a")
    assert c.restore("i", 0, p, idletime=1000) == b"OK"
    assert 1000 <= c.object("idletime", "i") <= 1002
    c.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        assert c.restore("f", 0, p, frequency=100) == b"OK"
        assert c.object("freq", "f") == 100
    finally:
        c.config_set("maxmemory-policy", "noeviction")


def _err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def test_restore_errors(c):
    c.set("a", "1")
    p = c.dump("a")
    assert _err(c, "RESTORE", "k", -1, p) == "Invalid TTL value, must be >= 0"
    assert _err(c, "RESTORE", "k", "abc", p) == "value is not an integer or out of range"
    assert _err(c, "RESTORE", "k", 0, p[:-1] + bytes([p[-1] ^ 1])) == "DUMP payload version or checksum are wrong"
    assert _err(c, "RESTORE", "k", 0, b"short") == "DUMP payload version or checksum are wrong"
    assert _err(c, "RESTORE", "k", 0, seal(b"\x00\x01v", 13)) == "DUMP payload version or checksum are wrong"
    # a sound footer over a broken body
    assert _err(c, "RESTORE", "k", 0, seal(b"\x00\x20v")) == "Bad data format"
    assert _err(c, "RESTORE", "k", 0, seal(b"\x63\x01v")) == "Bad data format"
    assert _err(c, "RESTORE", "k", 0, seal(b"")) == "Bad data format"
    assert _err(c, "RESTORE", "k", 0, seal(b"\x02\x00")) == "Bad data format"  # empty set
    assert _err(c, "RESTORE", "k", 0, seal(b"\x02\x02\x01a\x01a")) == "Bad data format"  # duplicate
    assert _err(c, "RESTORE", "k", 0, p, "BOGUS") == "syntax error"
    assert _err(c, "RESTORE", "k", 0, p, "IDLETIME", -1) == "Invalid IDLETIME value, must be >= 0"
    assert _err(c, "RESTORE", "k", 0, p, "IDLETIME", "x") == "value is not an integer or out of range"
    assert _err(c, "RESTORE", "k", 0, p, "FREQ", 256) == "Invalid FREQ value, must be >= 0 and <= 255"
    assert _err(c, "RESTORE", "k", 0, p, "FREQ", -1) == "Invalid FREQ value, must be >= 0 and <= 255"
    assert _err(c, "RESTORE", "k", 0, p, "IDLETIME", 1, "FREQ", 1) == "syntax error"
    assert _err(c, "RESTORE", "k", 0, p, "IDLETIME") == "syntax error"
    assert _err(c, "RESTORE", "k", 0) == "wrong number of arguments for 'restore' command"
    assert _err(c, "DUMP") == "wrong number of arguments for 'dump' command"
    # BUSYKEY comes before the TTL and payload checks, as in Redis
    assert _err(c, "RESTORE", "a", -1, b"junk") == "BUSYKEY Target key name already exists."
    assert c.exists("k") == 0


def test_restore_payload_without_crc_check_is_refused_when_wrong(c):
    c.set("a", "x" * 100)
    p = bytearray(c.dump("a"))
    p[3] ^= 0xFF
    with pytest.raises(redis.ResponseError):
        c.restore("b", 0, bytes(p))


def test_restore_keyspace_event_and_watch(srv, c):
    c.config_set("notify-keyspace-events", "KEA")
    try:
        ps = srv.client().pubsub()
        ps.psubscribe("__keyevent@0__:*")
        ps.get_message(timeout=1)
        c.set("a", "1")
        p = c.dump("a")
        c.restore("b", 0, p)
        events = []
        deadline = time.time() + 2
        while time.time() < deadline and b"restore" not in [e[0] for e in events]:
            m = ps.get_message(timeout=0.2)
            if m and m["type"] == "pmessage":
                events.append((m["channel"].split(b":")[-1], m["data"]))
        assert (b"restore", b"b") in events
        ps.close()
    finally:
        c.config_set("notify-keyspace-events", "")
    # WATCH sees a RESTORE ... REPLACE
    w = srv.client()
    pipe = w.pipeline()
    pipe.watch("b")
    c.restore("b", 0, p, replace=True)
    pipe.multi()
    pipe.set("b", "mine")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    assert c.get("b") == b"1"


def test_restore_invalidates_tracking(srv, c):
    c.set("a", "1")
    p = c.dump("a")
    sub = Resp(srv.port)
    sub_id = sub.call("CLIENT", "ID")
    sub.call("SUBSCRIBE", "__redis__:invalidate")
    tracker = srv.client(single_connection_client=True)
    tracker.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", sub_id)
    tracker.get("target")
    c.restore("target", 0, p)
    msg = sub.read()
    assert msg == [b"message", b"__redis__:invalidate", [b"target"]]
    sub.close()
    tracker.close()


def test_restore_wakes_blocked_pop(srv, c):
    c.rpush("l", "x")
    p = c.dump("l")
    c.delete("l")
    b = srv.client()
    import threading
    out = {}

    def pop():
        out["v"] = b.blpop("l", timeout=5)

    t = threading.Thread(target=pop)
    t.start()
    time.sleep(0.3)
    c.restore("l", 0, p)
    t.join(6)
    assert out.get("v") == (b"l", b"x")


# ------------------------------------------------ hash field TTLs (RDB 12) ---
@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 has no hash field expiry")
@pytest.mark.parametrize("n", [4, 300])
def test_hash_field_ttls_round_trip(c, n):
    c.hset("h", mapping={"f%d" % i: "v%d" % i for i in range(n)})
    c.execute_command("HPEXPIRE", "h", 100000, "FIELDS", 2, "f1", "f2")
    c.execute_command("HPEXPIRE", "h", 200000, "FIELDS", 1, "f0")
    p = c.dump("h")
    assert p[0] == (25 if n == 4 else 24)  # listpackex / hashtable with TTLs, whatever the version
    assert c.restore("h2", 0, p) == b"OK"
    assert c.hgetall("h2") == c.hgetall("h")
    assert c.object("encoding", "h2") == c.object("encoding", "h")
    ttls = c.execute_command("HPTTL", "h2", "FIELDS", 4, "f0", "f1", "f2", "f%d" % (n - 1))
    assert 190000 < ttls[0] <= 200000 and 90000 < ttls[1] <= 100000 and 90000 < ttls[2] <= 100000
    assert ttls[3] == -1


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 has no hash field expiry")
def test_hash_metadata_payload_as_redis_74_writes_it(c):
    """Type 24 by hand: min TTL, count, then per field TTL-min+1 (0: none), field, value."""
    now = int(time.time() * 1000)
    mn = now + 50000
    body = b"\x18" + struct.pack("<Q", mn) + rdb_len(3)
    body += rdb_len(1) + rdb_str("a") + rdb_str("1")            # TTL = min
    body += rdb_len(10001) + rdb_str("b") + rdb_str("2")        # min + 10000
    body += rdb_len(0) + rdb_str("c") + rdb_str("3")            # none
    assert c.restore("h", 0, seal(body, 12)) == b"OK"
    assert c.hgetall("h") == {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert c.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c") == [mn, mn + 10000, -1]
    # every field already expired: OK, nothing created
    past = now - 10000
    body = b"\x18" + struct.pack("<Q", past) + rdb_len(1) + rdb_len(1) + rdb_str("a") + rdb_str("1")
    assert c.restore("gone", 0, seal(body, 12)) == b"OK"
    assert c.exists("gone") == 0


# ------------------------------------------------ exchange with Redis 7.0 ---
@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_payload_from_redis_70_restores_here(c, pc, kind):
    build, typ = BUILDERS[kind]
    build(pc, "k")
    p = pc.dump("k")
    assert struct.unpack("<H", p[-10:-8])[0] == 10
    assert c.restore("k", 0, p) == b"OK"
    assert value_of(c, "k") == value_of(pc, "k")


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_payload_from_here_restores_in_redis_70(c, pc, kind):
    build, typ = BUILDERS[kind]
    build(c, "k")
    p = c.dump("k")
    assert pc.restore("k", 0, p) == b"OK"
    assert value_of(pc, "k") == value_of(c, "k")
    # and back again
    assert c.restore("k2", 0, pc.dump("k")) == b"OK"
    assert value_of(c, "k2") == value_of(c, "k")


def test_exchange_keeps_ttl_and_options(c, pc):
    pc.set("s", "v")
    p = pc.dump("s")
    at = int(time.time() * 1000) + 60000
    assert c.restore("s", at, p, absttl=True, idletime=50) == b"OK"
    assert c.execute_command("PEXPIRETIME", "s") == at
    q = c.dump("s")
    assert pc.restore("s2", at, q, absttl=True) == b"OK"
    assert pc.execute_command("PEXPIRETIME", "s2") == at


@pytest.mark.skipif(IS_REDIS, reason="rdb-version is a HotKV parameter")
def test_redis_70_refuses_version_11_payloads(c, pc):
    c.sadd("s", "a", "b")
    try:
        c.config_set("rdb-version", 11)
        p = c.dump("s")
    finally:
        c.config_set("rdb-version", 10)
    with pytest.raises(redis.ResponseError) as e:
        pc.restore("s", 0, p)
    assert "version or checksum" in str(e.value)
    # but we read it, of course
    assert c.restore("s2", 0, p) == b"OK"
    assert c.smembers("s2") == {b"a", b"b"}


# ------------------------------------------------------- corrupt payloads ---
@pytest.mark.skipif(IS_REDIS, reason="redis-server without sanitize-dump-payload may crash on these")
def test_corrupt_payloads_with_valid_crc_never_crash(c):
    import random
    rnd = random.Random(1234)
    kinds = ["list-small", "list-big", "set-intset", "set-listpack", "set-hashtable", "zset-listpack",
             "zset-skiplist", "hash-listpack", "hash-hashtable", "str-raw-compressible"]
    loaded = refused = 0
    for kind in kinds:
        BUILDERS[kind][0](c, "src")
        p = c.dump("src")
        c.delete("src")
        body, ver = p[:-10], struct.unpack("<H", p[-10:-8])[0]
        for i in range(60):
            b = bytearray(body)
            for _ in range(rnd.randint(1, 4)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            if i % 7 == 0:
                b = b[: rnd.randrange(len(b))]
            try:
                c.restore("x", 0, seal(bytes(b), ver), replace=True)
                loaded += 1
                value_of(c, "x")  # every element readable
            except redis.ResponseError as e:
                assert str(e) == "Bad data format"
                refused += 1
    assert c.ping()
    assert refused > 0


# ------------------------------------------- dump_payload_sanitizations ---
def test_dump_payload_sanitizations_follow_the_config(c):
    # INFO's counter counts deep checks asked for by sanitize-dump-payload:
    # none with "no", each RESTORE of a small list with "yes", and with
    # "clients" none for a user with skip-sanitize-payload.
    def count():
        return c.info("stats")["dump_payload_sanitizations"]
    c.rpush("l", "a", "b", "c")
    p = c.dump("l")
    before = c.config_get("sanitize-dump-payload")["sanitize-dump-payload"]
    user = "skip_sanitize_user"
    try:
        c.config_set("sanitize-dump-payload", "no")
        n0 = count()
        c.restore("l2", 0, p, replace=True)
        assert count() == n0
        c.config_set("sanitize-dump-payload", "yes")
        c.restore("l2", 0, p, replace=True)
        assert count() == n0 + 1
        c.config_set("sanitize-dump-payload", "clients")
        c.restore("l2", 0, p, replace=True)
        assert count() == n0 + 2
        c.acl_setuser(user, enabled=True, passwords=["+pw"], commands=["+@all"], keys=["*"])
        c.execute_command("ACL", "SETUSER", user, "skip-sanitize-payload")
        kw = c.connection_pool.connection_kwargs
        u = redis.Redis(host=kw["host"], port=kw["port"])
        u.auth("pw", user)
        assert u.restore("l3", 0, p) == b"OK"
        assert count() == n0 + 2
        u.close()
        assert c.lrange("l3", 0, -1) == [b"a", b"b", b"c"]
    finally:
        c.config_set("sanitize-dump-payload", before)
        c.acl_deluser(user)


def test_skip_checksum_validation_and_the_logged_reason(srv, c):
    """DEBUG SET-SKIP-CHECKSUM-VALIDATION 1: a payload with a wrong CRC is
    read (its version still checked); a payload that fails its checks is
    refused with "Bad data format" and the reason is logged, as Redis's
    rdbReportCorruptRDB does (its corrupt-dump tests read the log)."""
    c.set("a", "1")
    p = c.dump("a")
    bad_crc = p[:-1] + bytes([p[-1] ^ 1])
    assert _err(c, "RESTORE", "b", 0, bad_crc) == "DUMP payload version or checksum are wrong"
    try:
        assert c.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 1) in (True, "OK", b"OK")
        assert c.execute_command("RESTORE", "b", 0, bad_crc) in (True, "OK", b"OK")
        assert c.get("b") == b"1"
        # The version is still checked.
        assert _err(c, "RESTORE", "c", 0, p[:-10] + struct.pack("<H", 99) + p[-8:]) == \
            "DUMP payload version or checksum are wrong"
    finally:
        c.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 0)
    assert _err(c, "RESTORE", "d", 0, bad_crc) == "DUMP payload version or checksum are wrong"
    # A hash listpack (type 16) whose blob is not a listpack.
    body = bytes([16]) + rdb_str(b"\x00" * 12)
    c.config_set("sanitize-dump-payload", "yes")
    c.config_set("loglevel", "verbose")
    try:
        assert _err(c, "RESTORE", "e", 0, seal(body)) == "Bad data format"
    finally:
        c.config_set("loglevel", "notice")
        c.config_set("sanitize-dump-payload", "no")
    if srv.dir:
        with open(os.path.join(srv.dir, "server.log"), errors="replace") as f:
            assert "integrity check failed" in f.read()
