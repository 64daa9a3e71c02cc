"""HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST and
hll-sparse-max-bytes, as Redis 7.2.

Besides every command, option and error, values are compared byte for byte
and estimate for estimate with a reference redis-server (Debian's 7.0.15,
whose HLL code is 7.2's): 1,000 random PFADD/PFMERGE sequences, DUMP
payloads and RDB files exchanged both ways.  Corrupt values get WRONGTYPE
(not an HLL) or INVALIDOBJ (a sparse body that does not decode) and never
crash the server.

Runs against hotkv (default) and against redis-server (HOTKV_SERVER=redis);
tests of what 7.0 lacks skip themselves there.
"""
import os
import random
import shutil
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import MODE, Resp, Server, free_port
from helpers import not_tsan

IS_REDIS = MODE == "redis"
NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
HDR = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"  # sparse, stale cache


class Ref:
    """A reference redis-server started as conftest.Server does in redis mode."""

    def __init__(self, *args):
        if not shutil.which("redis-server"):
            pytest.skip("redis-server not installed")
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="hotkv-hllref-")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--enable-debug-command", "yes"] + [str(a) for a in args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError("reference redis-server did not start")

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def srv():
    # Redis 7.0 reads RDB version 10 payloads, not 7.2's 11.
    s = Server() if IS_REDIS else Server("--rdb-version", "10")
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def ref():
    p = Ref()
    yield p
    p.stop()


@pytest.fixture
def c(srv):
    cl = srv.client()
    cl.flushall()
    cl.config_set("hll-sparse-max-bytes", 3000)
    yield cl
    cl.close()


@pytest.fixture
def rc(ref):
    cl = ref.client()
    cl.flushall()
    cl.config_set("hll-sparse-max-bytes", 3000)
    yield cl
    cl.close()


def err(fn, *a):
    with pytest.raises(redis.ResponseError) as e:
        fn(*a)
    return str(e.value)


def enc(c, key):
    v = c.execute_command("PFDEBUG", "ENCODING", key)
    return v.decode() if isinstance(v, bytes) else v


def elements(prefix, n):
    return ["%s-%d" % (prefix, i) for i in range(n)]


# ------------------------------------------------------------------ PFADD ---
def test_pfadd_creates_and_reports_changes(c):
    assert c.pfadd("h") == 1  # no elements: creates the key
    assert c.exists("h") == 1
    assert c.type("h") == b"string"
    assert c.get("h") == b"HYLL\x01" + b"\x00" * 10 + b"\x80\x7f\xff"  # created: stale cache
    assert c.pfadd("h") == 0
    assert c.pfcount("h") == 0
    assert c.pfadd("h", "a", "b", "c") == 1
    assert c.pfadd("h", "a", "b", "c") == 0
    assert c.pfadd("h", "") == 1  # empty element (regression in Redis)
    assert c.pfcount("h") == 4
    assert c.object("encoding", "h") == b"raw"


def test_pfadd_arity_and_types(c):
    assert "wrong number of arguments" in err(c.execute_command, "PFADD")
    c.rpush("l", "x")
    assert err(c.pfadd, "l", "x") == WRONGTYPE
    c.set("s", "not an hll at all")
    assert err(c.pfadd, "s", "x") == NOT_HLL
    assert c.get("s") == b"not an hll at all"


def test_pfcount_cache(c):
    c.pfadd("h", "a", "b", "c")
    assert c.getrange("h", 15, 15) == b"\x80"  # stale
    assert c.pfcount("h") == 3
    assert c.getrange("h", 8, 15) == b"\x03" + b"\x00" * 7
    c.pfadd("h", "a", "b", "c")  # no register changed: the cache stays
    assert c.getrange("h", 15, 15) == b"\x00"
    c.pfadd("h", "1", "2", "3")
    assert c.getrange("h", 15, 15) == b"\x80"
    assert c.pfcount("h") == 6
    # A valid cache is believed as is (Redis does not recount).
    c.setrange("h", 8, b"\x2a")
    assert c.pfcount("h") == 42


def test_pfcount_missing_and_union(c):
    assert c.pfcount("nokey") == 0
    assert c.pfcount("nokey", "nokey2") == 0
    c.pfadd("a{t}", *elements("x", 100))
    c.pfadd("b{t}", *elements("x", 50) + elements("y", 50))
    before = (c.get("a{t}"), c.get("b{t}"))
    assert c.pfcount("a{t}", "b{t}", "nokey{t}") == 150
    # The union leaves every key alone, cache bits included.
    assert (c.get("a{t}"), c.get("b{t}")) == before
    c.rpush("l{t}", "x")
    assert err(c.pfcount, "a{t}", "l{t}") == WRONGTYPE
    c.set("s{t}", "abc")
    assert err(c.pfcount, "a{t}", "s{t}") == NOT_HLL
    assert "wrong number of arguments" in err(c.execute_command, "PFCOUNT")


# ---------------------------------------------------------------- PFMERGE ---
def test_pfmerge(c):
    c.pfadd("h1{t}", "a", "b", "c")
    c.pfadd("h2{t}", "b", "c", "d")
    c.pfadd("h3{t}", "c", "d", "e")
    assert c.pfmerge("h{t}", "h1{t}", "h2{t}", "h3{t}") is True
    assert c.pfcount("h{t}") == 5
    assert enc(c, "h{t}") == "sparse"
    # Missing sources: an empty destination is created.
    assert c.pfmerge("d{t}", "none1{t}", "none2{t}")
    assert c.exists("d{t}") == 1 and c.pfcount("d{t}") == 0
    assert c.execute_command("PFMERGE", "e{t}") in (b"OK", True)
    assert c.pfcount("e{t}") == 0
    # The destination is a source too.
    c.pfadd("h1{t}", "z")
    assert c.execute_command("PFMERGE", "h1{t}") in (b"OK", True)
    assert c.pfcount("h1{t}") == 4
    assert c.pfmerge("h1{t}", "h3{t}") and c.pfcount("h1{t}") == 6


def test_pfmerge_dense_source_makes_dense(c):
    c.pfadd("s{t}", "a")
    c.pfadd("d{t}", "b")
    c.execute_command("PFDEBUG", "TODENSE", "d{t}")
    c.pfmerge("out{t}", "s{t}", "d{t}")
    assert enc(c, "out{t}") == "dense"
    assert c.pfcount("out{t}") == 2


def test_pfmerge_types(c):
    c.set("foo{t}", "bar")
    assert err(c.pfadd, "foo{t}", "1") == NOT_HLL
    assert err(c.pfcount, "foo{t}") == NOT_HLL
    assert err(c.pfmerge, "bar{t}", "foo{t}") == NOT_HLL
    assert err(c.pfmerge, "foo{t}", "bar{t}") == NOT_HLL
    assert c.exists("bar{t}") == 0
    c.sadd("set{t}", "x")
    assert err(c.pfmerge, "d{t}", "set{t}") == WRONGTYPE
    assert "wrong number of arguments" in err(c.execute_command, "PFMERGE")


# ---------------------------------------------------------------- PFDEBUG ---
def test_pfdebug(c):
    c.pfadd("h", "foo", "bar", "hello")
    assert c.execute_command("PFDEBUG", "DECODE", "h") == b"Z:7348 v:5,1 Z:1867 v:1,1 Z:790 v:1,1 Z:6376"
    assert enc(c, "h") == "sparse"
    regs = c.execute_command("PFDEBUG", "GETREG", "h")
    assert len(regs) == 16384
    assert regs[7348] == 5 and sum(1 for r in regs if r) == 3
    assert enc(c, "h") == "dense"  # GETREG converts
    assert err(c.execute_command, "PFDEBUG", "DECODE", "h") == "HLL encoding is not sparse"
    assert c.execute_command("PFDEBUG", "TODENSE", "h") == 0
    c.pfadd("h2", "x")
    assert c.execute_command("PFDEBUG", "todense", "h2") == 1
    assert c.strlen("h2") == 12304
    assert c.pfcount("h2") == 1
    assert err(c.execute_command, "PFDEBUG", "nosuch", "h") == "Unknown PFDEBUG subcommand 'nosuch'"
    assert err(c.execute_command, "PFDEBUG", "GETREG", "missing") == "The specified key does not exist"
    assert err(c.execute_command, "PFDEBUG", "nosuch", "missing") == "The specified key does not exist"
    assert "wrong number of arguments" in err(c.execute_command, "PFDEBUG", "GETREG")
    assert "wrong number of arguments" in err(c.execute_command, "PFDEBUG", "GETREG", "h", "x")
    c.set("s", "abc")
    assert err(c.execute_command, "PFDEBUG", "ENCODING", "s") == NOT_HLL
    if MODE != "redis":
        # A sparse body that does not decode to 16384 registers is not
        # described (its text would be 8x its length): INVALIDOBJ.
        c.set("big", b"HYLL\x01" + b"\x00" * 11 + b"\x7f" * 1000000)
        assert err(c.execute_command, "PFDEBUG", "DECODE", "big") == CORRUPT


def test_pfselftest(c):
    assert c.execute_command("PFSELFTEST") in (b"OK", True)
    assert "wrong number of arguments" in err(c.execute_command, "PFSELFTEST", "x")


# ------------------------------------------------- hll-sparse-max-bytes ---
def test_config_param(c):
    assert c.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
    c.config_set("hll-sparse-max-bytes", "1kb")
    assert c.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "1024"}
    with pytest.raises(redis.ResponseError):
        c.config_set("hll-sparse-max-bytes", "-1")
    with pytest.raises(redis.ResponseError):
        c.config_set("hll-sparse-max-bytes", "abc")
    assert c.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "1024"}


def test_config_at_startup():
    s = Server("--hll-sparse-max-bytes", "40")
    try:
        cl = s.client()
        assert cl.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "40"}
        cl.pfadd("h", *elements("e", 10))
        assert enc(cl, "h") == "dense"
        cl.close()
    finally:
        assert s.stop() == 0


def test_change_sparse_max(c):
    c.pfadd("h", "a", "b", "c", "d", "e", "d", "g", "h", "i", "j", "k")
    assert enc(c, "h") == "sparse"
    c.config_set("hll-sparse-max-bytes", 30)
    c.pfadd("h", "new_element")
    assert enc(c, "h") == "dense"


@pytest.mark.parametrize("limit", [100, 500, 3000])
def test_promotion_at_limit(c, limit):
    c.config_set("hll-sparse-max-bytes", limit)
    c.pfadd("h")
    n = 0
    while c.strlen("h") <= limit:
        assert enc(c, "h") == "sparse"
        c.pfadd("h", *elements("p%d" % n, 10))
        n += 1
    assert enc(c, "h") == "dense"
    assert c.strlen("h") == 12304


def test_promotion_estimate(c):
    p = c.pipeline(transaction=False)
    for i in range(0, 20000, 1000):
        p.pfadd("h", *range(i, i + 1000))
        p.pfcount("h")
        p.execute_command("PFDEBUG", "ENCODING", "h")
    out = p.execute()
    for k, i in enumerate(range(1000, 20001, 1000)):
        card, e = out[3 * k + 1], out[3 * k + 2]
        assert abs(card - i) < i * 0.05
        if i >= 10000:
            assert e in (b"dense", "dense")


# --------------------------------------------------- strings and corruption ---
def test_string_commands_on_hll(c):
    c.pfadd("h", "a", "b")
    v = c.get("h")
    assert v.startswith(b"HYLL\x01")
    assert c.strlen("h") == len(v)
    c.set("copy", v)
    assert c.pfcount("copy") == 2
    c.append("h", "hello")  # extra bytes after the registers
    assert c.get("h") == v + b"hello"
    assert err(c.pfcount, "h") == CORRUPT


def test_corrupt_header(c):
    c.pfadd("h", "a", "b", "c")
    c.setrange("h", 0, "0123")
    assert err(c.pfcount, "h") == NOT_HLL
    c.delete("h")
    c.pfadd("h", "a", "b", "c")
    c.setrange("h", 4, "x")  # unknown encoding
    assert err(c.pfcount, "h") == NOT_HLL
    c.delete("h")
    c.pfadd("h", "a", "b", "c")
    c.setrange("h", 4, b"\x00")  # "dense" with a sparse length
    assert err(c.pfcount, "h") == NOT_HLL
    assert err(c.pfadd, "h", "x") == NOT_HLL
    c.set("short", "HYLL")
    assert err(c.pfcount, "short") == NOT_HLL
    c.set("d", b"HYLL\x00" + b"\x00" * 12290)  # dense, one byte short
    assert err(c.pfcount, "d") == NOT_HLL
    c.set("d", b"HYLL\x00" + b"\x00" * 12299)  # dense, exact: valid
    assert c.pfcount("d") == 0


@pytest.mark.parametrize("body", [
    b"",                       # no opcodes
    b"\x7f\xfe",               # 16383 registers
    b"\x7f\xff\x00",           # 16385
    b"\x7f\xff\x7f\xff",       # 32768
    b"\x40\x09",               # 10
])
def test_corrupt_sparse(c, body):
    c.set("x{t}", HDR + body)
    assert err(c.pfcount, "x{t}") == CORRUPT
    c.pfadd("ok{t}", "a")
    assert err(c.pfcount, "ok{t}", "x{t}") == CORRUPT
    assert err(c.pfmerge, "dst{t}", "ok{t}", "x{t}") == CORRUPT
    assert c.exists("dst{t}") == 0
    assert err(c.execute_command, "PFDEBUG", "TODENSE", "x{t}") == CORRUPT
    assert err(c.execute_command, "PFDEBUG", "GETREG", "x{t}") == CORRUPT


def test_corrupt_sparse_pfadd(c):
    # Registers past the body's end cannot be updated.
    c.set("x", HDR + b"\x40\x09")  # XZERO:10
    assert err(c.pfadd, "x", *elements("e", 50)) == CORRUPT
    # A register above 32 promotes, which decodes the whole body.
    c.set("y", HDR + b"\x7f\xfe")
    with pytest.raises(redis.ResponseError) as e:
        for i in range(200000):
            c.pfadd("y", "k%d" % i)
    assert str(e.value) == CORRUPT


def test_corrupt_fuzz(c):
    rnd = random.Random(1)
    p = c.pipeline(transaction=False)
    for j in range(300):
        key = "h%d" % j
        p.pfadd(key, *[str(rnd.random()) for _ in range(rnd.choice((5, 50, 500, 3000)))])
        for _ in range(rnd.randint(1, 5)):
            p.setrange(key, rnd.randrange(0, 3000), bytes([rnd.randrange(256)]))
        p.pfcount(key)
        p.pfadd(key, "z1", "z2")
        p.pfcount(key, "h0")
        p.execute_command("PFDEBUG", "DECODE", key)
    for r in p.execute(raise_on_error=False):
        if isinstance(r, Exception):
            msg = str(r)
            assert msg in (CORRUPT, NOT_HLL, "HLL encoding is not sparse"), msg
    assert c.ping()


# ------------------------------------------------ events, WATCH, metadata ---
def test_keyspace_events(srv, c):
    c.config_set("notify-keyspace-events", "KE$")
    try:
        sub = srv.client().pubsub()
        sub.psubscribe("__key*__:*")
        for _ in range(2):
            sub.get_message(timeout=1)
        c.pfadd("a{t}", "x")
        c.pfadd("a{t}", "x")  # no change: no event
        c.pfmerge("b{t}", "a{t}")
        c.pfcount("b{t}")  # cache refresh: no event
        c.set("end", "1")
        got = []
        deadline = time.time() + 5
        while time.time() < deadline:
            m = sub.get_message(timeout=0.5)
            if m and m["type"] == "pmessage":
                got.append((m["channel"].decode(), m["data"].decode()))
                if m["data"] == b"end":
                    break
        assert got == [
            ("__keyspace@0__:a{t}", "pfadd"), ("__keyevent@0__:pfadd", "a{t}"),
            ("__keyspace@0__:b{t}", "pfadd"), ("__keyevent@0__:pfadd", "b{t}"),
            ("__keyspace@0__:end", "set"), ("__keyevent@0__:set", "end"),
        ]
        sub.close()
    finally:
        c.config_set("notify-keyspace-events", "")


def test_watch(srv, c):
    c.pfadd("h", "a")
    other = srv.client()
    p = c.pipeline()
    p.watch("h")
    other.pfadd("h", "a")  # nothing changed: EXEC runs
    p.multi()
    p.get("x")
    assert p.execute() == [None]
    p.watch("h")
    other.pfadd("h", "b")
    p.multi()
    p.get("x")
    with pytest.raises(redis.WatchError):
        p.execute()
    other.close()


def test_command_info(srv, c):
    raw = Resp(srv.port)
    info = raw.call("COMMAND", "INFO", "pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest")

    def flags(i):
        return sorted(x.decode() if isinstance(x, bytes) else x for x in info[i][2])

    def cats(i):
        return sorted(x.decode() if isinstance(x, bytes) else x for x in info[i][6])

    assert [x[1] for x in info] == [-2, -2, -2, 3, 1]
    assert [tuple(x[3:6]) for x in info] == [(1, 1, 1), (1, -1, 1), (1, -1, 1), (2, 2, 1), (0, 0, 0)]
    assert flags(0) == ["denyoom", "fast", "write"]
    assert flags(1) == ["readonly"]  # may_replicate is never shown (redis-server 7.2.4 checked)
    assert flags(2) == ["denyoom", "write"]
    assert flags(3) == ["admin", "denyoom", "write"]
    assert flags(4) == ["admin"]
    assert cats(0) == ["@fast", "@hyperloglog", "@write"]
    assert cats(1) == ["@hyperloglog", "@read", "@slow"]
    assert cats(2) == ["@hyperloglog", "@slow", "@write"]
    assert cats(3) == ["@admin", "@dangerous", "@hyperloglog", "@slow", "@write"]
    assert cats(4) == ["@admin", "@dangerous", "@hyperloglog", "@slow"]
    def spec_flags(ks):
        d = dict(zip(ks[::2], ks[1::2]))  # RESP2: a flat key/value list
        return sorted(d[b"flags"])

    assert [[spec_flags(ks) for ks in x[8]] for x in info] == [
        [["RW", "insert"]], [["RW", "access"]], [["RW", "access", "insert"], ["RO", "access"]], [["RW", "access"]], []]
    assert raw.call("COMMAND", "GETKEYS", "PFMERGE", "d", "s1", "s2") == [b"d", b"s1", b"s2"]
    assert raw.call("COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "k") == [b"k"]
    names = raw.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog")
    raw.s.close()
    assert sorted(names) == [b"pfadd", b"pfcount", b"pfdebug", b"pfmerge", b"pfselftest"]


# ---------------------------------------------- against redis-server ---
def _check_same(c, rc, keys):
    p, q = c.pipeline(transaction=False), rc.pipeline(transaction=False)
    for x in (p, q):
        for k in keys:
            x.get(k)
            x.pfcount(k)
            x.get(k)  # the cache written by PFCOUNT
        x.pfcount(*keys)
    assert p.execute() == q.execute()


@not_tsan
def test_random_sequences_match_redis(c, rc):
    rnd = random.Random(17)
    pool = [str(i) for i in range(30000)]
    for seq in range(1000):
        keys = ["s%d:%d{t}" % (seq, i) for i in range(rnd.randint(1, 3))]
        limit = rnd.choice((3000, 3000, 100, 500))
        c.config_set("hll-sparse-max-bytes", limit)
        rc.config_set("hll-sparse-max-bytes", limit)
        p, q = c.pipeline(transaction=False), rc.pipeline(transaction=False)
        for _ in range(rnd.randint(1, 6)):
            op = rnd.random()
            if op < 0.7:
                n = rnd.choice((0, 1, 3, 10, 40, 200, 1500)) if rnd.random() < 0.97 else 6000
                els = rnd.sample(pool, n)
                k = rnd.choice(keys)
                for x in (p, q):
                    x.pfadd(k, *els)
            elif op < 0.85:
                k = rnd.choice(keys)
                for x in (p, q):
                    x.pfcount(k)
            else:
                dst = rnd.choice(keys + ["m%d{t}" % seq])
                srcs = rnd.sample(keys, rnd.randint(1, len(keys)))
                for x in (p, q):
                    x.pfmerge(dst, *srcs)
        assert p.execute() == q.execute(), "sequence %d" % seq
        if seq % 10 == 0 or seq == 999:
            _check_same(c, rc, keys + ["m%d{t}" % seq])
            c.delete(*keys)
            rc.delete(*keys)


def _fill(cl):
    cl.pfadd("sparse", *elements("s", 200))
    cl.pfadd("dense", *elements("d", 20000))
    cl.pfadd("cached", *elements("c", 50))
    cl.pfcount("cached")


def test_dump_to_redis(c, rc):
    _fill(c)
    for k in ("sparse", "dense", "cached"):
        payload = c.dump(k)
        rc.restore(k, 0, payload, replace=True)
        assert rc.get(k) == c.get(k)
        assert rc.pfcount(k) == c.pfcount(k)
        assert rc.pfadd(k, "more") == c.pfadd(k, "more")
        assert rc.get(k) == c.get(k)
    assert rc.pfcount("sparse", "dense") == c.pfcount("sparse", "dense")


def test_dump_from_redis(c, rc):
    _fill(rc)
    for k in ("sparse", "dense", "cached"):
        c.restore(k, 0, rc.dump(k), replace=True)
        assert c.get(k) == rc.get(k)
        assert c.pfcount(k) == rc.pfcount(k)
        assert c.execute_command("PFDEBUG", "ENCODING", k) == rc.execute_command("PFDEBUG", "ENCODING", k)
    c.pfmerge("u", "sparse", "dense", "cached")
    rc.pfmerge("u", "sparse", "dense", "cached")
    assert c.get("u") == rc.get("u")
    assert c.pfcount("u") == rc.pfcount("u") and abs(c.pfcount("u") - 20250) < 1000


def test_rdb_both_ways(srv, c, rc, ref):
    _fill(c)
    c.save()
    d = tempfile.mkdtemp(prefix="hotkv-hllrdb-")
    try:
        shutil.copy(os.path.join(srv.dir, "dump.rdb"), d)
        # HotKV's file read by redis-server.
        r2 = Ref("--dir", d)
        try:
            cl = r2.client()
            for k in ("sparse", "dense", "cached"):
                assert cl.get(k) == c.get(k)
                assert cl.pfcount(k) == c.pfcount(k)
            cl.close()
        finally:
            r2.stop()
        # redis-server's file read by this server's kind.
        _fill(rc)
        rc.pfadd("extra", "x", "y")
        rc.save()
        shutil.copy(os.path.join(ref.dir, "dump.rdb"), os.path.join(d, "ref.rdb"))
        s2 = Server("--dir", d, "--dbfilename", "ref.rdb")
        try:
            cl = s2.client()
            for k in ("sparse", "dense", "cached", "extra"):
                assert cl.get(k) == rc.get(k)
                assert cl.pfcount(k) == rc.pfcount(k)
            cl.close()
        finally:
            assert s2.stop() == 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------ propagation ---
def _aof_commands(d):
    adir = os.path.join(d, "appendonlydir")
    data = b""
    for name in sorted(os.listdir(adir)):
        if name.endswith(".incr.aof"):
            with open(os.path.join(adir, name), "rb") as f:
                data += f.read()
    out, i = [], 0
    while i < len(data):
        e = data.index(b"\r\n", i)
        argc, i, args = int(data[i + 1:e]), e + 2, []
        for _ in range(argc):
            e = data.index(b"\r\n", i)
            n = int(data[i + 1:e])
            args.append(data[e + 2:e + 2 + n].decode("latin-1"))
            i = e + 2 + n + 2
        if args[0].upper() != "SELECT":
            out.append([args[0].upper()] + args[1:])
    return out


def test_propagation_to_aof():
    s = Server("--appendonly", "yes", "--appendfsync", "always")
    try:
        cl = s.client()
        cl.pfadd("h{t}", "a", "b", "c")
        cl.pfadd("h{t}", "a")              # no change: not fed
        cl.pfcount("h{t}")                 # cache refreshed: fed as called
        cl.pfcount("h{t}")                 # cached: nothing
        cl.pfcount("h{t}", "x{t}")         # union: nothing
        cl.pfmerge("d{t}", "h{t}")
        cl.execute_command("PFDEBUG", "TODENSE", "h{t}")
        cl.execute_command("PFDEBUG", "TODENSE", "h{t}")  # already dense
        cl.execute_command("PFDEBUG", "ENCODING", "h{t}")
        cl.execute_command("PFDEBUG", "GETREG", "d{t}")   # converts d
        cl.execute_command("PFDEBUG", "GETREG", "d{t}")
        cl.close()
        assert _aof_commands(s.dir) == [
            ["PFADD", "h{t}", "a", "b", "c"],
            ["PFCOUNT", "h{t}"],
            ["PFMERGE", "d{t}", "h{t}"],
            ["PFDEBUG", "TODENSE", "h{t}"],
            ["PFDEBUG", "GETREG", "d{t}"],
        ]
    finally:
        assert s.stop() == 0


def test_resp3_replies(srv, c):
    raw = Resp(srv.port)
    try:
        assert isinstance(raw.call("HELLO", "3"), dict)
        assert raw.call("PFADD", "h", "a", "b") == 1
        assert raw.call("PFCOUNT", "h") == 2
        assert raw.call("PFMERGE", "h2", "h") == "OK"
        assert raw.call("PFDEBUG", "ENCODING", "h") == "sparse"
        assert raw.call("PFDEBUG", "DECODE", "h")[:2] == b"Z:"
        assert len(raw.call("PFDEBUG", "GETREG", "h")) == 16384
        assert raw.call("PFCOUNT", "nokey", "h") == 2
    finally:
        raw.s.close()


def test_union_after_a_failed_union_is_exact(c):
    """A union that fails half-way (a wrong-type or corrupt key after good
    ones) must leave nothing behind for the next union (HotKV keeps one
    zeroed union buffer per thread)."""
    c.pfadd("ua", *["a%d" % i for i in range(500)])
    c.pfadd("ub", *["b%d" % i for i in range(300)])
    c.pfmerge("uab", "ua", "ub")
    want = c.pfcount("uab")
    c.set("plain", "not an hll")
    for _ in range(3):
        with pytest.raises(redis.ResponseError):
            c.pfcount("ua", "ub", "plain")
        assert c.pfcount("ua", "ub") == want
        assert c.pfcount("ub", "missing") == c.pfcount("ub")
