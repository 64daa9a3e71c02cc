"""RDB files exchanged with Debian's redis-server 7.0.15, both ways, compared
key by key (types, values, TTLs, databases, functions); LRU/LFU opcodes;
RDB 11/12 files; truncated and corrupt files refused at start-up with the
offset in the log; and hotkv-check-rdb on good and broken files.

HotKV only (it starts hotkv-server and redis-server processes); redis-server
instances use ports in 7100-7199.
"""
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import BIN, MODE, Server
from test_dump import BUILDERS, Peer, value_of

pytestmark = pytest.mark.skipif(MODE == "redis", reason="starts hotkv-server and redis-server processes")

LIB = "#!lua name=rdblib\nredis.register_function('rdbf', function(keys, args) return 'hi' end)"


def run(argv):
    """Run a tool; stdout decoded leniently (redis-check-rdb prints raw bytes)."""
    p = subprocess.run(argv, capture_output=True)
    p.stdout = p.stdout.decode("utf-8", "replace")
    return p


def check_rdb_bin(tmp):
    b = os.path.join(os.path.dirname(BIN), "hotkv-check-rdb")
    if os.path.exists(b):
        return b
    link = os.path.join(tmp, "hotkv-check-rdb")
    if not os.path.exists(link):
        os.symlink(os.path.abspath(BIN), link)
    return link


@pytest.fixture
def d():
    p = tempfile.mkdtemp(prefix="hotkv-rdbfiles-")
    yield p
    shutil.rmtree(p, ignore_errors=True)


def populate(x, ttls=True):
    """Every builder in db 0, a few keys in db 5, TTLs on some."""
    for name, (build, _) in BUILDERS.items():
        build(x, name)
    if ttls:
        x.pexpire("str-embstr", 500000)
        x.pexpire("list-big", 400000)
        x.pexpire("zset-skiplist", 300000)
        x.pexpire("hash-listpack", 200000)
        x.set("already-expired", "x", px=1)
    x5 = redis.Redis(port=x.connection_pool.connection_kwargs["port"], db=5)
    x5.set("in-db5", "v5")
    x5.sadd("set-db5", "a", "b")
    x5.expire("set-db5", 10000)
    x5.close()


def snapshot_keyspace(port, dbs=(0, 5)):
    out = {}
    for db in dbs:
        x = redis.Redis(port=port, db=db)
        for k in x.keys("*"):
            t, v = value_of(x, k)
            out[(db, k)] = (t, v, x.pttl(k))
        x.close()
    return out


def assert_same(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        ta, va, pa = a[k]
        tb, vb, pb = b[k]
        assert (ta, va) == (tb, vb), k
        if pa < 0 or pb < 0:
            assert pa == pb, k
        else:
            assert abs(pa - pb) < 5000, (k, pa, pb)


def test_redis_70_file_loads_here(d):
    peer = Peer("--dbfilename", "r70.rdb")
    try:
        pc = peer.client()
        populate(pc)
        pc.function_load(LIB)
        time.sleep(0.01)
        assert pc.save() is True
        want = snapshot_keyspace(peer.port)
        shutil.copy(os.path.join(peer.dir, "r70.rdb"), os.path.join(d, "r70.rdb"))
    finally:
        peer.stop()
    s = Server("--dir", d, "--dbfilename", "r70.rdb")
    try:
        got = snapshot_keyspace(s.port)
        assert ("already-expired" not in [k[1] for k in got])
        assert_same(want, got)
        c = s.client()
        assert c.fcall("rdbf", 0) == b"hi"
        # what we made of Redis 7.0's encodings follows our thresholds
        assert c.object("encoding", "hash-hashtable") == b"hashtable"
        assert c.object("encoding", "set-listpack") == b"listpack"
        assert c.object("encoding", "list-small") == b"listpack"
        log = open(os.path.join(s.dir, "server.log")).read()
        assert "Loading RDB produced by version 7.0.15" in log
        assert "Done loading RDB, keys loaded: %d" % len(want) in log
    finally:
        assert s.stop() == 0


def test_our_version_10_file_loads_in_redis_70(d):
    s = Server("--dir", d, "--dbfilename", "hk.rdb", "--rdb-version", "10")
    try:
        c = s.client()
        populate(c)
        c.function_load(LIB)
        time.sleep(0.01)
        assert c.save() is True
        want = snapshot_keyspace(s.port)
    finally:
        assert s.stop() == 0
    path = os.path.join(d, "hk.rdb")
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0010"
    r = run(["redis-check-rdb", path])
    assert "RDB looks OK" in r.stdout, r.stdout
    peer = Peer("--dbfilename", "hk.rdb", files=[path])
    try:
        got = snapshot_keyspace(peer.port)
        assert_same(want, got)
        assert peer.client().fcall("rdbf", 0) == b"hi"
    finally:
        peer.stop()


@pytest.mark.parametrize("version", [11, 12])
def test_newer_versions_round_trip_here(d, version):
    s = Server("--dir", d, "--rdb-version", str(version))
    try:
        c = s.client()
        populate(c)
        c.hset("hfe", mapping={"a": 1, "b": 2})
        c.execute_command("HPEXPIRE", "hfe", 300000, "FIELDS", 1, "a")
        assert c.save() is True
        want = snapshot_keyspace(s.port)
        httl = c.execute_command("HPTTL", "hfe", "FIELDS", 2, "a", "b")
    finally:
        assert s.stop() == 0
    with open(os.path.join(d, "dump.rdb"), "rb") as f:
        assert f.read(9) == b"REDIS%04d" % version
    s = Server("--dir", d)
    try:
        assert_same(want, snapshot_keyspace(s.port))
        got = s.client().execute_command("HPTTL", "hfe", "FIELDS", 2, "a", "b")
        assert abs(got[0] - httl[0]) < 5000 and got[1] == -1
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("policy,opcode", [("allkeys-lru", 248), ("allkeys-lfu", 249)])
def test_lru_lfu_opcodes_both_ways(d, policy, opcode):
    peer = Peer("--dbfilename", "p.rdb", "--maxmemory-policy", policy)
    try:
        pc = peer.client()
        pc.set("k", "v")
        if policy == "allkeys-lfu":
            for _ in range(200):
                pc.get("k")
            freq = pc.object("freq", "k")
        pc.save()
        shutil.copy(os.path.join(peer.dir, "p.rdb"), os.path.join(d, "p.rdb"))
    finally:
        peer.stop()
    assert bytes([opcode]) in open(os.path.join(d, "p.rdb"), "rb").read()
    s = Server("--dir", d, "--dbfilename", "p.rdb", "--maxmemory-policy", policy, "--rdb-version", "10")
    try:
        c = s.client()
        assert c.get("k") == b"v"
        if policy == "allkeys-lfu":
            assert abs(c.object("freq", "k") - freq) <= 1
        c.set("idle", "x")
        c.save()
        raw = open(os.path.join(d, "p.rdb"), "rb").read()
        assert bytes([opcode]) in raw
    finally:
        assert s.stop() == 0
    r = run(["redis-check-rdb", os.path.join(d, "p.rdb")])
    assert "RDB looks OK" in r.stdout, r.stdout


def _make_file(d, name="dump.rdb"):
    s = Server("--dir", d, "--dbfilename", name, "--rdb-version", "10")
    try:
        c = s.client()
        populate(c, ttls=False)
        c.save()
    finally:
        assert s.stop() == 0
    return os.path.join(d, name)


def _start_fails(d, name):
    port_log = os.path.join(d, "start.log")
    with open(port_log, "w") as lf:
        p = subprocess.Popen([BIN, "--port", "0", "--dir", d, "--dbfilename", name, "--save", ""],
                             stdout=lf, stderr=subprocess.STDOUT)
        try:
            rc = p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise AssertionError("server started on a broken file")
    return rc, open(port_log).read()


def test_truncated_and_flipped_files_are_refused(d):
    path = _make_file(d)
    data = open(path, "rb").read()
    with open(os.path.join(d, "trunc.rdb"), "wb") as f:
        f.write(data[: len(data) // 2])
    rc, log = _start_fails(d, "trunc.rdb")
    assert rc != 0
    assert "offset" in log and "truncated" in log, log
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x40
    with open(os.path.join(d, "flip.rdb"), "wb") as f:
        f.write(bytes(flipped))
    rc, log = _start_fails(d, "flip.rdb")
    assert rc != 0
    assert "offset" in log, log


def test_check_rdb_tool(d):
    path = _make_file(d)
    tool = check_rdb_bin(d)
    r = run([tool, path])
    assert r.returncode == 0, r.stdout
    assert "RDB looks OK" in r.stdout
    assert "RDB version 10" in r.stdout
    assert "AUX FIELD redis-ver" in r.stdout
    assert "Checksum OK" in r.stdout
    assert "[info] db 0: %d keys" % len(BUILDERS) in r.stdout
    assert "[info] db 5: 2 keys (string 1, set 1)" in r.stdout
    data = open(path, "rb").read()
    with open(os.path.join(d, "t.rdb"), "wb") as f:
        f.write(data[:-100])
    r = run([tool, os.path.join(d, "t.rdb")])
    assert r.returncode == 1
    assert "RDB ERROR DETECTED" in r.stdout and "offset" in r.stdout
    flipped = bytearray(data)
    flipped[-20] ^= 0x01
    with open(os.path.join(d, "f.rdb"), "wb") as f:
        f.write(bytes(flipped))
    r = run([tool, os.path.join(d, "f.rdb")])
    assert r.returncode == 1
    assert "RDB ERROR DETECTED" in r.stdout
    r = run([tool, os.path.join(d, "missing.rdb")])
    assert r.returncode == 1
    # a file written by Redis 7.0
    peer = Peer("--dbfilename", "r.rdb")
    try:
        pc = peer.client()
        populate(pc)
        pc.save()
        r = run([tool, os.path.join(peer.dir, "r.rdb")])
        assert r.returncode == 0, r.stdout
        assert "AUX FIELD redis-ver = '7.0.15'" in r.stdout
    finally:
        peer.stop()
