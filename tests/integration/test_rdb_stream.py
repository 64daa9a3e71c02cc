"""Streams through Redis's RDB format, exchanged with Debian's redis-server
7.0.15 (RDB version 10; hotkv runs with --rdb-version 10 for it).

Streams of every shape (own-fields and same-fields entries, integers and
binary values, tombstones from XDEL and exact trims, many nodes, values
larger than a node, IDs at the top of the range, emptied streams, consumer
groups with PELs, claimed entries with delivery counts, consumers without
pending entries, ENTRIESREAD and XSETID counters) are built on one server,
moved to the other by a snapshot file or by DUMP/RESTORE, and compared:
XINFO STREAM (FULL), XINFO GROUPS / CONSUMERS, XRANGE, XREVRANGE and
XPENDING, less what depends on the moment (idle times) or on the radix
tree's inner layout (radix-tree-nodes).  With rdbcompression off both ways,
the two servers' DUMP payloads of a stream that made the trip are the same
bytes.  Also: hotkv's own version-11 files (type 21) round trip, and a
corrupt stream in a file is refused at start-up with its offset."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import BIN, MODE

pytestmark = pytest.mark.skipif(MODE == "redis", reason="starts hotkv-server and redis-server processes")

REDIS = shutil.which("redis-server")
PORTS = range(7220, 7300)


def pick_port():
    for p in PORTS:
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
        finally:
            s.close()
        if pick_port.used.get(p, 0) + 5 < time.time():
            pick_port.used[p] = time.time()
            return p
    raise RuntimeError("no free port in 7220-7299")


pick_port.used = {}


class Proc:
    """hotkv-server or redis-server on a directory (loads its dump.rdb)."""

    def __init__(self, kind, d, *args, expect_fail=False):
        self.kind, self.dir, self.port = kind, d, pick_port()
        self.expect_fail = expect_fail
        if kind == "redis":
            cmd = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", d]
        else:
            cmd = [BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--threads", "2",
                   "--save", "", "--dir", d]
        cmd += [str(a) for a in args]
        self.logpath = os.path.join(d, "%s-%d.log" % (kind, self.port))
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                c = self.client()
                # Started, and done loading (redis answers LOADING meanwhile).
                c.ping()
                c.close()
                return
            except (OSError, redis.exceptions.BusyLoadingError, redis.exceptions.ConnectionError):
                time.sleep(0.02)
        if expect_fail:
            return
        raise RuntimeError("%s did not start: %s\n%s" % (kind, cmd, self.logtext()))

    def logtext(self):
        self.log.flush()
        with open(self.logpath) as f:
            return f.read()

    def client(self):
        # Raw replies (redis-py's stream callbacks choke on XCLAIM JUSTID).
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=20)
        c.response_callbacks.clear()
        return c

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def dirs():
    made = []

    def mk():
        p = tempfile.mkdtemp(prefix="hotkv-rdbstream-")
        made.append(p)
        return p
    yield mk
    for p in made:
        shutil.rmtree(p, ignore_errors=True)


@pytest.fixture
def procs():
    started = []

    def start(kind, d, *args, **kw):
        p = Proc(kind, d, *args, **kw)
        started.append(p)
        return p
    yield start
    bad = []
    for p in started:
        rc = p.stop()
        # A clean SIGTERM shutdown exits 0; a crash or a sanitizer report does not.
        if p.kind == "hotkv" and not p.expect_fail and rc != 0:
            bad.append("hotkv exited with %s:\n%s" % (rc, p.logtext()[-3000:]))
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------ workload ---
BIN_VAL = bytes(range(256))


def build(c):
    """The same streams on either server (explicit IDs; times are the
    server's own)."""
    c.config_set("stream-node-max-entries", 10)
    # mixed: own-fields entries, integers, binary, tombstones, groups.
    for i in range(1, 61):
        if i % 4 == 0:
            fields = {"kind": "other", "n": str(-i), b"bin": BIN_VAL[i:i + 20]}
        elif i % 9 == 0:
            fields = {str(i): str(i * 1000)}
        else:
            fields = {"event": "e%d" % i, "job": str(i), "big": str(2 ** 62 + i), "empty": ""}
        c.xadd("mixed", fields, id="%d-%d" % (1700000000000 + i, i % 3))
    c.xdel("mixed", "1700000000002-2", "1700000000011-2", "1700000000030-0", "1700000000059-2")
    c.xgroup_create("mixed", "g1", id="0")
    c.execute_command("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "7", "STREAMS", "mixed", ">")
    c.execute_command("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "mixed", ">")
    c.execute_command("XGROUP", "CREATECONSUMER", "mixed", "g1", "carol")
    c.execute_command("XCLAIM", "mixed", "g1", "carol", "0", "1700000000003-0", "RETRYCOUNT", "5",
                      "TIME", "1600000000000")
    c.execute_command("XCLAIM", "mixed", "g1", "bob", "0", "1700000000004-1", "FORCE", "JUSTID")
    c.xack("mixed", "g1", "1700000000001-1", "1700000000009-0")
    c.execute_command("XGROUP", "CREATE", "mixed", "g2", "1700000000020-2", "ENTRIESREAD", "18")
    c.execute_command("XREADGROUP", "GROUP", "g2", "123", "STREAMS", "mixed", ">")
    c.execute_command("XGROUP", "CREATE", "mixed", "7", "$")
    # nodes: many nodes of 10 entries, same fields.
    p = c.pipeline(transaction=False)
    for i in range(1, 1501):
        p.xadd("nodes", {"a": str(i), "b": "v%d" % (i * 7)}, id="%d-0" % i)
    p.execute()
    # trimmed: exact trims leave tombstones in the first node.
    for i in range(1, 301):
        c.xadd("trimmed", {"f": "x" * (i % 40)}, id="5-%d" % i)
    c.xtrim("trimmed", maxlen=95, approximate=False)
    c.execute_command("XTRIM", "trimmed", "MINID", "5-230")
    c.xgroup_create("trimmed", "late", id="5-100")
    # empty stream with a group, counters set.
    c.execute_command("XGROUP", "CREATE", "empty", "grp", "$", "MKSTREAM")
    c.execute_command("XSETID", "empty", "77-7", "ENTRIESADDED", "5", "MAXDELETEDID", "70-0")
    # emptied: entries added then all deleted.
    for i in range(1, 6):
        c.xadd("emptied", {"f": "v"}, id="%d-1" % i)
    c.xdel("emptied", *["%d-1" % i for i in range(1, 6)])
    # bigvals: values beyond a node's byte budget; 12- and 32-bit listpack strings.
    c.xadd("bigvals", {"small": "s", "mid": "m" * 70}, id="1-1")
    c.xadd("bigvals", {"small": "s", "mid": "M" * 5000}, id="1-2")
    c.xadd("bigvals", {"huge": os.urandom(50000).hex()}, id="2-0")
    # maxid: IDs at the top of the range (seq deltas wrap).
    c.xadd("maxid", {"f": "1"}, id="5-100")
    c.xadd("maxid", {"f": "2"}, id="6-0")
    c.xadd("maxid", {"f": "3"}, id="18446744073709551615-18446744073709551614")
    c.xadd("maxid", {"g": "4"}, id="18446744073709551615-18446744073709551615")
    c.config_set("stream-node-max-entries", 100)


KEYS = [b"mixed", b"nodes", b"trimmed", b"empty", b"emptied", b"bigvals", b"maxid"]


def drop_pair(lst, name):
    out = list(lst)
    if name in out:
        i = out.index(name)
        del out[i:i + 2]
    return out


def drop_72(x):
    """x less the consumer fields Redis 7.2 added (active-time, inactive),
    at any depth: redis-server 7.0 is on the other side of some tests."""
    if isinstance(x, list):
        out = []
        i = 0
        while i < len(x):
            if x[i] in (b"active-time", b"inactive") and i + 1 < len(x) and isinstance(x[i + 1], int):
                i += 2
                continue
            out.append(drop_72(x[i]))
            i += 1
        return out
    return x


def state(c):
    """Everything observable about the streams, less idle times,
    radix-tree-nodes and the consumer times Redis 7.0 does not have."""
    st = {}
    for k in KEYS:
        s = {"type": c.type(k)}
        s["info"] = drop_pair(c.execute_command("XINFO", "STREAM", k), b"radix-tree-nodes")
        s["full"] = drop_72(drop_pair(c.execute_command("XINFO", "STREAM", k, "FULL", "COUNT", "0"),
                                      b"radix-tree-nodes"))
        s["range"] = c.execute_command("XRANGE", k, "-", "+")
        s["rev"] = c.execute_command("XREVRANGE", k, "+", "-", "COUNT", "3")
        s["len"] = c.xlen(k)
        groups = c.execute_command("XINFO", "GROUPS", k)
        s["groups"] = groups
        for g in groups:
            name = dict(zip(g[::2], g[1::2]))[b"name"]
            cons = c.execute_command("XINFO", "CONSUMERS", k, name)
            s["cons", name] = [drop_72(drop_pair(x, b"idle")) for x in cons]
            s["pending", name] = c.execute_command("XPENDING", k, name)
            s["pendx", name] = [[e[0], e[1], e[3]] for e in c.execute_command("XPENDING", k, name, "-", "+", "1000")]
        st[k] = s
    return st


def assert_same(a, b):
    for k in KEYS:
        for part in a[k]:
            assert a[k][part] == b[k][part], "%s %s differs:\n%r\n%r" % (k, part, a[k][part], b[k][part])


def save_to(c, d):
    assert c.save() == b"OK"
    path = os.path.join(d, "dump.rdb")
    assert os.path.exists(path)
    return path


def move(src_path, dst_dir):
    shutil.copy(src_path, os.path.join(dst_dir, "dump.rdb"))


# --------------------------------------------------------------- files ---
@pytest.mark.skipif(not REDIS, reason="redis-server not installed")
def test_file_hotkv_to_redis(dirs, procs):
    d1, d2 = dirs(), dirs()
    h = procs("hotkv", d1, "--rdb-version", "10")
    hc = h.client()
    build(hc)
    before = state(hc)
    path = save_to(hc, d1)
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0010"
    if shutil.which("redis-check-rdb"):
        chk = subprocess.run(["redis-check-rdb", path], capture_output=True, timeout=60)
        out = chk.stdout.decode("latin-1")  # it prints int-encoded aux values as raw bytes
        assert "RDB looks OK" in out, out + chk.stderr.decode("latin-1")
    move(path, d2)
    r = procs("redis", d2)
    rc = r.client()
    assert rc.dbsize() == len(KEYS)
    assert_same(before, state(rc))
    # And back: redis's file of what it loaded loads in hotkv the same.
    d3 = dirs()
    move(save_to(rc, d2), d3)
    h2 = procs("hotkv", d3)
    assert_same(before, state(h2.client()))


@pytest.mark.skipif(not REDIS, reason="redis-server not installed")
def test_file_redis_to_hotkv(dirs, procs):
    d1, d2 = dirs(), dirs()
    r = procs("redis", d1)
    rc = r.client()
    build(rc)
    before = state(rc)
    move(save_to(rc, d1), d2)
    h = procs("hotkv", d2)
    hc = h.client()
    assert hc.dbsize() == len(KEYS)
    assert_same(before, state(hc))
    # The loaded streams keep working: reads, acks, claims, appends.
    assert hc.xack("mixed", "g1", "1700000000003-0") == 1
    hc.xadd("nodes", {"a": "new"}, id="1501-0")
    assert hc.xlen("nodes") == 1501
    got = hc.execute_command("XREADGROUP", "GROUP", "late", "z", "COUNT", "2", "STREAMS", "trimmed", ">")
    assert len(got[0][1]) == 2
    assert hc.xtrim("nodes", maxlen=1000, approximate=True) >= 500


def test_file_hotkv_v11_self(dirs, procs):
    d1, d2 = dirs(), dirs()
    h = procs("hotkv", d1)
    hc = h.client()
    build(hc)
    before = state(hc)
    path = save_to(hc, d1)
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0011"
    move(path, d2)
    h2 = procs("hotkv", d2)
    assert_same(before, state(h2.client()))


def test_corrupt_stream_refused(dirs, procs):
    d1, d2 = dirs(), dirs()
    h = procs("hotkv", d1, "--rdbchecksum", "no", "--rdbcompression", "no")
    hc = h.client()
    hc.xadd("s", {"field": "v" * 30}, id="1-1")
    hc.xadd("s", {"field": "w" * 30}, id="1-2")
    path = save_to(hc, d1)
    data = bytearray(open(path, "rb").read())
    # The second entry's lp-count: the element after the last value.
    i = data.rindex(b"w" * 30) + 30 + 1
    assert data[i] == 4  # 3 + one value (same fields)
    data[i] = 5
    with open(os.path.join(d2, "dump.rdb"), "wb") as f:
        f.write(bytes(data))
    bad = procs("hotkv", d2, expect_fail=True)
    assert bad.proc.wait(20) != 0
    log = bad.logtext()
    assert "offset" in log and "Stream" in log, log[-2000:]


# --------------------------------------------------------- DUMP/RESTORE ---
def has_dump(c):
    try:
        c.execute_command("DUMP", "nosuchkey")
        return True
    except redis.exceptions.ResponseError:
        return False


@pytest.mark.skipif(not REDIS, reason="redis-server not installed")
def test_dump_restore_both_ways(dirs, procs):
    h = procs("hotkv", dirs(), "--rdb-version", "10", "--rdbcompression", "no")
    hc = h.client()
    if not has_dump(hc):
        pytest.skip("DUMP/RESTORE not in this build yet")
    r = procs("redis", dirs(), "--rdbcompression", "no")
    rc = r.client()

    # redis -> hotkv
    build(rc)
    before = state(rc)
    for k in KEYS:
        hc.restore(k, 0, rc.dump(k))
    assert_same(before, state(hc))
    # Same structure, same listpacks: the same payload bytes.
    for k in KEYS:
        assert hc.dump(k) == rc.dump(k), k

    # hotkv -> redis
    hc.flushall()
    rc.flushall()
    build(hc)
    before = state(hc)
    for k in KEYS:
        rc.restore(k, 0, hc.dump(k))
    assert_same(before, state(rc))
    for k in KEYS:
        assert hc.dump(k) == rc.dump(k), k

    # REPLACE over an existing stream; a corrupt payload is refused.
    p = hc.dump("mixed")
    rc.restore("mixed", 0, p, replace=True)
    with pytest.raises(redis.exceptions.ResponseError):
        hc.restore("mixed", 0, p)
    bad = bytearray(p)
    bad[len(bad) // 2] ^= 0xFF
    with pytest.raises(redis.exceptions.ResponseError):
        hc.restore("corrupt", 0, bytes(bad))
    assert hc.exists("corrupt") == 0
