"""The append-only file (persist/aof.c): appendonly yes, every fsync policy,
restart -> the same data, BGREWRITEAOF with and without the RDB preamble,
automatic rewrite, CONFIG SET appendonly at run time, truncated tails
(aof-load-truncated yes/no), hotkv-check-aof, an AOF written by Debian's
redis-server 7.0 loading into hotkv (and ours into it), the upgrade of a
Redis < 7 single-file AOF, and the kill -9 crash test with appendfsync
always and concurrent writers.

Each test runs its own servers on fixed ports of the 7300-7399 range, in a
fresh directory, restarting them on the same directory.  HOTKV_SERVER=redis
runs the tests that do not need hotkv-only tools against redis-server."""
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import MODE, port_free, release_only, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server"))
CHECK_AOF = os.path.join(os.path.dirname(BIN), "hotkv-check-aof")
IS_REDIS = MODE == "redis"
hotkv_only = pytest.mark.skipif(IS_REDIS, reason="hotkv-only")


class Srv:
    """A server on a fixed port and directory that can be killed and started
    again on the same files."""

    def __init__(self, port, d, *args, threads=2, redis_server=False):
        self.port = port
        self.dir = d
        self.args = [str(a) for a in args]
        self.threads = threads
        self.redis = redis_server or IS_REDIS
        self.proc = None
        self.nstart = 0

    def cmdline(self, extra=()):
        if self.redis:
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--dir", self.dir, "--enable-debug-command", "yes"]
        else:
            cmd = [BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--threads", str(self.threads),
                   "--save", "", "--dir", self.dir, "--enable-debug-command", "yes"]
        return cmd + self.args + [str(a) for a in extra]

    def logpath(self):
        return os.path.join(self.dir, "server-%d.log" % self.nstart)

    def spawn(self, extra=()):
        self.nstart += 1
        deadline = time.time() + 10
        while not port_free(self.port) and time.time() < deadline:
            time.sleep(0.05)
        self.log = open(self.logpath(), "w")
        self.proc = subprocess.Popen(self.cmdline(extra), stdout=self.log, stderr=subprocess.STDOUT)

    def start(self, extra=(), timeout=20):
        self.spawn(extra)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited (%s): %s" % (self.proc.returncode, self.logtext()))
            try:
                c = self.client()
                c.ping()
                c.close()
                return self
            except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
                time.sleep(0.02)
        raise RuntimeError("server did not start: " + self.logtext())

    def start_fail(self, extra=(), timeout=20):
        """Start expecting the server to refuse to start; returns the log."""
        self.spawn(extra)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise AssertionError("the server started: " + self.logtext())
        assert rc != 0
        self.log.close()
        return self.logtext()

    def logtext(self):
        try:
            with open(self.logpath()) as f:
                return f.read()
        except OSError:
            return ""

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 20)
        kw.setdefault("encoding_errors", "surrogateescape")
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc:
            self.log.close()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        return self.proc.returncode if self.proc else 0


@pytest.fixture
def tmpdir_aof():
    d = tempfile.mkdtemp(prefix="hotkv-aof-")
    yield d
    if not os.environ.get("KEEP_AOF_TMP"):
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def servers():
    started = []
    yield started
    for s in started:
        s.kill9()


def mk(servers, port, d, *args, **kw):
    s = Srv(port, d, *args, **kw)
    servers.append(s)
    return s


def aofdir(d):
    return os.path.join(d, "appendonlydir")


def manifest(d, name="appendonly.aof"):
    with open(os.path.join(aofdir(d), name + ".manifest")) as f:
        return [l.split() for l in f.read().splitlines() if l.strip()]


def info(c, field):
    return c.info("persistence")[field]


def wait_rewrite(c, timeout=20, srv=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        p = c.info("persistence")
        if not p["aof_rewrite_in_progress"] and not p.get("aof_rewrite_scheduled", 0):
            return p
        time.sleep(0.05)
    raise AssertionError("rewrite did not finish: %s %s" % (p, srv.logtext() if srv else ""))


# ----------------------------------------------------------- dataset ---
def snapshot(c, ttl_slack=True, hfe=not IS_REDIS):
    """Every key of every database: type, value, TTL (rounded to 10 s)."""
    out = {}
    nodb = int(c.config_get("databases")["databases"])
    for db in range(nodb):
        c.execute_command("SELECT", db)
        for k in c.scan_iter(count=1000):
            t = c.type(k)
            if t == "string":
                v = c.get(k)
            elif t == "list":
                v = c.lrange(k, 0, -1)
            elif t == "set":
                v = sorted(c.smembers(k))
            elif t == "zset":
                v = c.zrange(k, 0, -1, withscores=True)
            elif t == "hash":
                v = sorted(c.hgetall(k).items())
                if hfe:
                    fields = [f for f, _ in v]
                    ttls = c.execute_command("HPTTL", k, "FIELDS", len(fields), *fields) if fields else []
                    v = (v, [-1 if x < 0 else x // 10000 for x in ttls])
            elif t == "stream":
                entries = c.xrange(k)
                groups = []
                for g in c.xinfo_groups(k):
                    pend = c.xpending_range(k, g["name"], "-", "+", 10000)
                    cons = sorted((x["name"], x["pending"]) for x in c.xinfo_consumers(k, g["name"]))
                    # (Redis 7.0 itself loses a group's entries-read across an AOF restart.)
                    groups.append((g["name"], g["last-delivered-id"], None if IS_REDIS else g.get("entries-read"),
                                   g["pending"],
                                   cons, [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pend]))
                sinfo = c.xinfo_stream(k)
                v = (entries, sorted(groups), sinfo["last-generated-id"], sinfo.get("entries-added"),
                     sinfo.get("max-deleted-entry-id"), sinfo["length"])
            else:
                v = "?"
            pttl = c.pttl(k)
            out[(db, k)] = (t, v, -1 if pttl < 0 else pttl // 10000)
    c.execute_command("SELECT", 0)
    return out


def functions(c):
    out = []
    for l in c.execute_command("FUNCTION", "LIST", "WITHCODE"):
        d = dict(zip(l[::2], l[1::2]))
        out.append((d["library_name"], d["library_code"]))
    return sorted(out)


def fill(c, rnd=None, hfe=not IS_REDIS, big=True):
    """Keys of every type and encoding, TTLs, several databases, a library."""
    rnd = rnd or random.Random(1)
    p = c.pipeline(transaction=False)
    p.set("s:int", 12345)
    p.set("s:emb", "hello")
    p.set("s:raw", "x" * 200)
    p.set("s:bin", bytes(range(256)))
    p.set("s:ttl", "v", px=500000)
    p.incr("s:ctr")
    p.append("s:app", "abc")
    p.setrange("s:app", 10, "zz")
    p.rpush("l:small", *["a", "b", 1, 2])
    if big:
        p.rpush("l:big", *["elem-%d" % i for i in range(2000)])
    p.lpush("l:small", "head")
    p.sadd("set:int", *range(10))
    p.sadd("set:lp", "a", "b", "c")
    if big:
        p.sadd("set:ht", *["m%d" % i for i in range(1000)])
        p.sadd("set:bigint", *range(1000))
    p.zadd("z:small", {"a": 1, "b": 2.5, "c": -3, "inf": float("inf")})
    if big:
        p.zadd("z:big", {"m%d" % i: i / 7.0 for i in range(500)})
    p.hset("h:small", mapping={"f1": "v1", "f2": 2})
    if big:
        p.hset("h:big", mapping={"f%d" % i: "v" * (i % 80) for i in range(600)})
    p.expire("l:small", 900)
    p.execute()
    if hfe:
        c.hset("h:ttl", mapping={"a": 1, "b": 2, "c": 3})
        c.execute_command("HEXPIRE", "h:ttl", 1000, "FIELDS", 1, "a")
        c.execute_command("HPEXPIRE", "h:ttl", 2000000, "FIELDS", 1, "b")
    c.xadd("st", {"a": 1, "b": 2}, id="1-1")
    c.xadd("st", {"a": 3, "b": 4}, id="1-2")
    c.xadd("st", {"x": "y"}, id="5-0")
    c.xadd("st", {"x": "z"}, id="6-0")
    c.xdel("st", "5-0")
    c.xgroup_create("st", "g1", id="0")
    c.xgroup_create("st", "g2", id="$")
    c.xreadgroup("g1", "alice", {"st": ">"}, count=2)
    c.xreadgroup("g1", "bob", {"st": ">"}, count=1)
    c.xgroup_createconsumer("st", "g2", "idle")
    c.xadd("st:empty", {"a": 1}, id="3-3")
    c.xdel("st:empty", "3-3")
    c.execute_command("SELECT", 5)
    c.set("db5:key", "five")
    c.rpush("db5:list", 1, 2, 3)
    c.execute_command("SELECT", 0)
    c.execute_command("FUNCTION", "LOAD", "REPLACE",
                      "#!lua name=aoflib\nredis.register_function('aoff', function(k, a) return 7 end)")
    # A few random writes on top.
    for i in range(200):
        k = "r:%d" % rnd.randrange(50)
        op = rnd.randrange(4)
        if op == 0:
            c.set(k, rnd.randrange(1000))
        elif op == 1:
            c.delete(k)
        elif op == 2:
            c.incrby("rc:%d" % rnd.randrange(10), rnd.randrange(100))
        else:
            c.rpush("rl:%d" % rnd.randrange(5), rnd.randrange(1000))


# ------------------------------------------------------------- tests ---
@pytest.mark.parametrize("policy", ["always", "everysec", "no"])
def test_restart_every_type_every_policy(servers, tmpdir_aof, policy):
    port = 7300 + ["always", "everysec", "no"].index(policy)
    s = mk(servers, port, tmpdir_aof, "--appendonly", "yes", "--appendfsync", policy).start()
    c = s.client()
    fill(c)
    before, fns = snapshot(c), functions(c)
    # No shutdown: only what the AOF holds comes back.  Every policy writes
    # the AOF bytes before the reply (fsync aside), so a killed process
    # loses nothing acknowledged.
    s.kill9()
    s.start()
    c = s.client()
    assert snapshot(c) == before
    assert functions(c) == fns
    # And once more through a clean shutdown.
    c.set("after", "restart")
    before = snapshot(c)
    assert s.stop() == 0
    s.start()
    assert snapshot(s.client()) == before


def test_manifest_layout(servers, tmpdir_aof):
    s = mk(servers, 7303, tmpdir_aof, "--appendonly", "yes").start()
    c = s.client()
    c.set("a", 1)
    m = manifest(tmpdir_aof)
    assert m == [["file", "appendonly.aof.1.base.rdb", "seq", "1", "type", "b"],
                 ["file", "appendonly.aof.1.incr.aof", "seq", "1", "type", "i"]]
    p = c.info("persistence")
    assert p["aof_enabled"] == 1 and p["aof_last_write_status"] == "ok"
    assert p["aof_current_size"] > 0 and "aof_base_size" in p and "aof_buffer_length" in p
    # The incr file holds what was written, as RESP, after a SELECT.
    time.sleep(0.2)
    with open(os.path.join(aofdir(tmpdir_aof), "appendonly.aof.1.incr.aof"), "rb") as f:
        data = f.read()
    assert data.lower().startswith(b"*2\r\n$6\r\nselect\r\n$1\r\n0\r\n*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n")


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_bgrewriteaof_then_restart(servers, tmpdir_aof, preamble):
    port = 7305 + (preamble == "no")
    s = mk(servers, port, tmpdir_aof, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble).start()
    c = s.client()
    fill(c)
    assert c.bgrewriteaof() in (True, "Background append only file rewriting started")
    wait_rewrite(c, srv=s)
    p = c.info("persistence")
    assert p["aof_last_bgrewrite_status"] == "ok" and p["aof_rewrites"] >= 1
    m = manifest(tmpdir_aof)
    ext = "rdb" if preamble == "yes" else "aof"
    assert m[0] == ["file", "appendonly.aof.2.base." + ext, "seq", "2", "type", "b"]
    assert m[1:] == [["file", "appendonly.aof.2.incr.aof", "seq", "2", "type", "i"]]
    # History is gone from the directory.
    names = sorted(n for n in os.listdir(aofdir(tmpdir_aof)) if not n.startswith("temp"))
    assert names == sorted(["appendonly.aof.2.base." + ext, "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"])
    # Writes after the rewrite land in the new incr file.
    c.set("after:rewrite", "yes")
    c.rpush("l:small", "tail")
    before, fns = snapshot(c), functions(c)
    s.kill9()
    s.start()
    c = s.client()
    assert snapshot(c) == before
    assert functions(c) == fns


def test_rewrite_while_writing(servers, tmpdir_aof):
    """Writes from several clients during a rewrite: every acknowledged one
    is in the new base or the new incr file, none twice (INCR counts)."""
    s = mk(servers, 7307, tmpdir_aof, "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
           "--rdb-key-save-delay", "20", threads=4).start()
    c = s.client()
    c.execute_command("DEBUG", "POPULATE", 3000, "pop")
    stop = threading.Event()
    counts = [0] * 4

    def writer(i):
        cc = s.client()
        while not stop.is_set():
            cc.incr("ctr:%d" % i)
            cc.rpush("lst:%d" % i, counts[i])
            counts[i] += 1

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    time.sleep(0.2)
    c.bgrewriteaof()
    time.sleep(0.2)
    assert c.info("persistence")["aof_rewrite_in_progress"] == 1
    wait_rewrite(c, 60)
    time.sleep(0.2)
    stop.set()
    for t in ts:
        t.join()
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    before = snapshot(c)
    s.kill9()
    s.start()
    c = s.client()
    for i in range(4):
        assert int(c.get("ctr:%d" % i)) == counts[i]
        assert c.lrange("lst:%d" % i, 0, -1) == [str(x) for x in range(counts[i])]
    assert snapshot(c) == before


def test_bgrewriteaof_scheduled_during_bgsave(servers, tmpdir_aof):
    s = mk(servers, 7308, tmpdir_aof, "--appendonly", "yes", "--rdb-key-save-delay", "2000").start()
    c = s.client()
    c.execute_command("DEBUG", "POPULATE", 500)
    assert c.bgsave()
    assert c.bgrewriteaof() in (True, "Background append only file rewriting scheduled")
    assert c.info("persistence")["aof_rewrite_scheduled"] == 1
    c.config_set("rdb-key-save-delay", 0)
    wait_rewrite(c, 60)
    assert c.info("persistence")["aof_rewrites"] >= 1


def test_auto_rewrite(servers, tmpdir_aof):
    s = mk(servers, 7309, tmpdir_aof, "--appendonly", "yes", "--auto-aof-rewrite-percentage", "0",
           "--auto-aof-rewrite-min-size", "65536").start()
    c = s.client()
    p = c.pipeline(transaction=False)
    for i in range(3000):
        p.set("k%d" % (i % 100), "v" * 50)
    p.execute()
    time.sleep(0.3)
    assert c.info("persistence")["aof_rewrites"] == 0
    c.config_set("auto-aof-rewrite-percentage", 100)
    deadline = time.time() + 20
    while time.time() < deadline and c.info("persistence")["aof_rewrites"] < 1:
        time.sleep(0.1)
    assert c.info("persistence")["aof_rewrites"] >= 1
    wait_rewrite(c, srv=s)
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok", s.logtext()
    assert "Starting automatic rewriting of AOF" in s.logtext()
    m = manifest(tmpdir_aof)
    assert m[0][1].startswith("appendonly.aof.2.base")
    # The rewrite shrank it: 100 keys instead of 3000 SETs.
    assert c.info("persistence")["aof_current_size"] < 3000 * 70
    before = snapshot(c)
    s.kill9()
    s.start()
    assert snapshot(s.client()) == before


def test_config_set_appendonly(servers, tmpdir_aof):
    s = mk(servers, 7310, tmpdir_aof, "--appendonly", "no").start()
    c = s.client()
    fill(c, big=False)
    assert c.info("persistence")["aof_enabled"] == 0
    assert not os.path.exists(os.path.join(aofdir(tmpdir_aof), "appendonly.aof.manifest"))
    c.config_set("appendonly", "yes")
    assert c.config_get("appendonly")["appendonly"] == "yes"
    wait_rewrite(c, srv=s)
    p = c.info("persistence")
    assert p["aof_enabled"] == 1 and p["aof_last_bgrewrite_status"] == "ok"
    m = manifest(tmpdir_aof)
    assert m[0][1] == "appendonly.aof.1.base.rdb" and m[1][1] == "appendonly.aof.1.incr.aof"
    c.set("after:on", 1)
    before, fns = snapshot(c), functions(c)
    s.kill9()
    s.args = ["--appendonly", "yes"]
    s.start()
    c = s.client()
    assert snapshot(c) == before
    assert functions(c) == fns
    # Off: nothing more is appended.
    incr = os.path.join(aofdir(tmpdir_aof), manifest(tmpdir_aof)[-1][1])
    c.config_set("appendonly", "no")
    size = os.path.getsize(incr)
    c.set("after:off", 1)
    time.sleep(0.2)
    assert os.path.getsize(incr) == size
    assert c.info("persistence")["aof_enabled"] == 0
    # On again: a new base from the current data, the old files removed.
    c.config_set("appendonly", "yes")
    wait_rewrite(c, srv=s)
    m = manifest(tmpdir_aof)
    assert m[0][1] == "appendonly.aof.2.base.rdb" and m[1][1] == "appendonly.aof.2.incr.aof"
    before = snapshot(c)
    s.kill9()
    s.start()
    assert snapshot(s.client()) == before


def _truncated_setup(servers, port, d, *extra):
    s = mk(servers, port, d, "--appendonly", "yes", "--appendfsync", "always", *extra).start()
    c = s.client()
    for i in range(10):
        c.set("k%d" % i, i)
    s.kill9()
    incr = os.path.join(aofdir(d), "appendonly.aof.1.incr.aof")
    good = os.path.getsize(incr)
    with open(incr, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$2\r\nkx\r\n$10\r\nabc")  # cut mid-payload
    return s, incr, good


def test_truncated_tail_loaded(servers, tmpdir_aof):
    s, incr, good = _truncated_setup(servers, 7311, tmpdir_aof)
    s.start()  # aof-load-truncated yes is the default
    c = s.client()
    assert [c.get("k%d" % i) for i in range(10)] == [str(i) for i in range(10)]
    assert c.exists("kx") == 0
    assert os.path.getsize(incr) == good
    log = s.logtext()
    assert "Truncating the AOF" in log and str(good) in log
    c.set("later", 1)  # appended after the cut: loads next time
    s.kill9()
    s.start()
    assert s.client().get("later") == "1"


def test_truncated_tail_refused(servers, tmpdir_aof):
    s, incr, good = _truncated_setup(servers, 7312, tmpdir_aof)
    log = s.start_fail(["--aof-load-truncated", "no"])
    assert "Unexpected end of file" in log or "end of file" in log
    if not IS_REDIS:
        assert "offset %d" % good in log
    assert os.path.getsize(incr) > good  # untouched


def test_unfinished_multi_dropped(servers, tmpdir_aof):
    s = mk(servers, 7313, tmpdir_aof, "--appendonly", "yes", "--appendfsync", "always").start()
    c = s.client()
    c.set("a", 1)
    s.kill9()
    incr = os.path.join(aofdir(tmpdir_aof), "appendonly.aof.1.incr.aof")
    good = os.path.getsize(incr)
    with open(incr, "ab") as f:
        f.write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
    s.start()
    c = s.client()
    assert c.get("a") == "1" and c.exists("b") == 0
    assert os.path.getsize(incr) == good


def test_corrupt_middle_refused(servers, tmpdir_aof):
    s = mk(servers, 7314, tmpdir_aof, "--appendonly", "yes", "--appendfsync", "always").start()
    c = s.client()
    c.set("a", 1)
    c.set("b", 2)
    s.kill9()
    incr = os.path.join(aofdir(tmpdir_aof), "appendonly.aof.1.incr.aof")
    with open(incr, "r+b") as f:
        data = f.read()
        i = data.lower().index(b"*3\r\n$3\r\nset\r\n$1\r\nb")
        f.seek(i)
        f.write(b"?")
    log = s.start_fail()
    assert "Bad file format" in log


@hotkv_only
def test_check_aof_tool(servers, tmpdir_aof):
    # RDB version 10: redis-check-aof 7.0 reads the base too.
    s, incr, good = _truncated_setup(servers, 7315, tmpdir_aof, "--rdb-version", "10")
    man = os.path.join(aofdir(tmpdir_aof), "appendonly.aof.manifest")
    r = subprocess.run([CHECK_AOF, man], capture_output=True, text=True)
    assert r.returncode == 1
    assert "valid up to offset %d" % good in r.stdout and "--fix" in r.stdout
    # redis-check-aof's summary line too, and its name reaches the same check.
    assert "AOF analyzed: filename=" in r.stdout and ", ok_up_to=%d," % good in r.stdout, r.stdout
    alias = os.path.join(tmpdir_aof, "redis-check-aof")
    os.symlink(os.path.realpath(CHECK_AOF), alias)
    r2 = subprocess.run([alias, man], capture_output=True, text=True)
    assert (r2.returncode, r2.stdout) == (r.returncode, r.stdout)
    r = subprocess.run([CHECK_AOF, "--fix", man], input="n\n", capture_output=True, text=True)
    assert r.returncode == 1 and os.path.getsize(incr) > good  # answered no
    r = subprocess.run([CHECK_AOF, "--fix", man], input="y\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    assert "Successfully truncated AOF" in r.stdout
    assert os.path.getsize(incr) == good
    r = subprocess.run([CHECK_AOF, man], capture_output=True, text=True)
    assert r.returncode == 0 and "valid" in r.stdout
    # Redis's own checker agrees.
    r = subprocess.run(["redis-check-aof", man], capture_output=True, text=True, errors="replace")
    assert r.returncode == 0, r.stdout
    # A single old-style file, fixed non-interactively; an RDB base is checked too.
    single = os.path.join(tmpdir_aof, "single.aof")
    with open(single, "wb") as f:
        f.write(b"*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n*1\r\n$5\r\nMULTI\r\n*2\r\n$3\r\nDEL\r\n$1\r\ny\r\n")
    r = subprocess.run([CHECK_AOF, "--fix", "--yes", single], capture_output=True, text=True)
    assert r.returncode == 0 and os.path.getsize(single) == len(b"*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n")
    s.start()
    s.client().bgrewriteaof()
    wait_rewrite(s.client())
    r = subprocess.run([CHECK_AOF, man], capture_output=True, text=True)
    assert r.returncode == 0 and "RDB part" in r.stdout, r.stdout


@hotkv_only
def test_redis70_aof_loads_into_hotkv(servers, tmpdir_aof):
    """A multi-part AOF written by Debian's redis-server 7.0 (RDB base + incr
    commands, then more incr after a rewrite) loads into hotkv."""
    rs = mk(servers, 7320, tmpdir_aof, "--appendonly", "yes", "--appendfsync", "always", redis_server=True).start()
    c = rs.client()
    fill(c, hfe=False)
    c.bgrewriteaof()
    wait_rewrite(c, srv=rs)
    # Commands propagated by Redis itself after the rewrite.
    c.incrbyfloat("f", 1.5)
    c.setex("sx", 1000, "v")
    c.spop("set:int")
    c.lmove("l:small", "l:moved", "LEFT", "RIGHT")
    c.xclaim("st", "g1", "carol", 0, ["1-1"])
    c.xadd("st", {"n": 1}, maxlen=3, approximate=False)
    c.eval("redis.call('set', 'lua1', 'x'); redis.call('incr', 's:ctr'); return 1", 0)
    p = c.pipeline(transaction=True)
    p.set("tx1", 1)
    p.rpush("tx2", "a", "b")
    p.execute()
    c.expire("s:emb", 3000)
    c.execute_command("SELECT", 7)
    c.set("db7", "x")
    c.execute_command("SELECT", 0)
    before, fns = snapshot(c, hfe=False), functions(c)
    assert rs.stop() == 0
    shutil.rmtree(os.path.join(tmpdir_aof, "dump.rdb"), ignore_errors=True)
    s = mk(servers, 7321, tmpdir_aof, "--appendonly", "yes").start()
    c = s.client()
    assert snapshot(c, hfe=False) == before
    assert functions(c) == fns
    # Appending goes on in Redis's incr file.
    c.set("hotkv:after", 1)
    s.kill9()
    s.start()
    assert s.client().get("hotkv:after") == "1"


@hotkv_only
def test_hotkv_aof_loads_into_redis70(servers, tmpdir_aof):
    """The reverse: hotkv's AOF (RDB base version 10, as Redis 7.0 reads,
    and our incr commands) loads into redis-server 7.0."""
    s = mk(servers, 7322, tmpdir_aof, "--appendonly", "yes", "--rdb-version", "10").start()
    c = s.client()
    fill(c, hfe=False)
    c.bgrewriteaof()
    wait_rewrite(c, srv=s)
    c.set("after:rewrite", 1)
    c.lpop("l:big")
    c.zincrby("z:small", 2, "a")
    before, fns = snapshot(c, hfe=False), functions(c)
    assert s.stop() == 0
    os.unlink(os.path.join(tmpdir_aof, "dump.rdb")) if os.path.exists(os.path.join(tmpdir_aof, "dump.rdb")) else None
    rs = mk(servers, 7323, tmpdir_aof, "--appendonly", "yes", redis_server=True).start()
    c = rs.client()
    assert snapshot(c, hfe=False) == before
    assert functions(c) == fns


@hotkv_only
def test_old_single_file_aof_upgraded(servers, tmpdir_aof):
    """Redis < 7: dir/appendonly.aof with commands; hotkv moves it into the
    AOF directory as the base of a new manifest and loads it."""
    cmds = [["SELECT", "0"], ["SET", "old", "style"], ["RPUSH", "ol", "a", "b"],
            ["SELECT", "2"], ["SET", "in2", "x"], ["MULTI"], ["INCR", "n"], ["INCR", "n"], ["EXEC"]]
    with open(os.path.join(tmpdir_aof, "appendonly.aof"), "wb") as f:
        for cmd in cmds:
            f.write(b"*%d\r\n" % len(cmd))
            for a in cmd:
                f.write(b"$%d\r\n%s\r\n" % (len(a), a.encode()))
    s = mk(servers, 7324, tmpdir_aof, "--appendonly", "yes").start()
    c = s.client()
    assert c.get("old") == "style" and c.lrange("ol", 0, -1) == ["a", "b"]
    c.execute_command("SELECT", 2)
    assert c.get("in2") == "x" and c.get("n") == "2"
    assert not os.path.exists(os.path.join(tmpdir_aof, "appendonly.aof"))
    m = manifest(tmpdir_aof)
    assert m[0] == ["file", "appendonly.aof", "seq", "1", "type", "b"]
    assert "migrated an old-style AOF" in s.logtext()
    c.execute_command("SELECT", 0)
    c.set("new", 1)
    s.kill9()
    s.start()
    c = s.client()
    assert c.get("old") == "style" and c.get("new") == "1"


@hotkv_only
def test_old_preamble_aof_upgraded(servers, tmpdir_aof):
    """Redis 4-6 with aof-use-rdb-preamble: one appendonly.aof holding an
    RDB followed by commands."""
    d1 = os.path.join(tmpdir_aof, "one")
    os.mkdir(d1)
    s = mk(servers, 7326, d1, "--appendonly", "yes").start()
    c = s.client()
    fill(c, big=False)
    c.bgrewriteaof()
    wait_rewrite(c, srv=s)
    before = snapshot(c)
    assert s.stop() == 0
    with open(os.path.join(aofdir(d1), manifest(d1)[0][1]), "rb") as f:
        rdb = f.read()
    assert rdb.startswith(b"REDIS")
    d2 = os.path.join(tmpdir_aof, "two")
    os.mkdir(d2)
    with open(os.path.join(d2, "appendonly.aof"), "wb") as f:
        f.write(rdb + b"*3\r\n$3\r\nSET\r\n$4\r\ntail\r\n$1\r\n1\r\n")
    s2 = mk(servers, 7327, d2, "--appendonly", "yes").start()
    c = s2.client()
    assert c.get("tail") == "1"
    c.delete("tail")
    assert snapshot(c) == before


@hotkv_only
def test_transactions_and_scripts_replay(servers, tmpdir_aof):
    s = mk(servers, 7325, tmpdir_aof, "--appendonly", "yes", "--appendfsync", "always").start()
    c = s.client()
    p = c.pipeline(transaction=True)
    p.incr("t")
    p.rpush("tl", 1, 2)
    p.execute_command("SELECT", 3)
    p.set("t3", "x")
    p.execute()
    c.eval("redis.call('incr', 't'); redis.call('sadd', 'ts', 'a', 'b'); return 1", 0)
    c.spop("ts")
    before = snapshot(c)
    s.kill9()
    s.start()
    assert snapshot(s.client()) == before


def test_debug_loadaof(servers, tmpdir_aof):
    s = mk(servers, 7316, tmpdir_aof, "--appendonly", "yes").start()
    c = s.client()
    fill(c, big=False)
    before = snapshot(c)
    assert c.execute_command("DEBUG", "LOADAOF") in ("OK", True)
    assert snapshot(c) == before
    c.bgrewriteaof()
    wait_rewrite(c, srv=s)
    c.set("x", 1)
    before = snapshot(c)
    assert c.execute_command("DEBUG", "LOADAOF") in ("OK", True)
    assert snapshot(c) == before


@hotkv_only
def test_odd_file_name_quoted_in_manifest(servers, tmpdir_aof):
    s = mk(servers, 7318, tmpdir_aof, "--appendonly", "yes", "--appendfilename", "my aof.aof",
           "--appenddirname", "aof dir", "--rdb-version", "10").start()
    c = s.client()
    c.set("a", 1)
    c.bgrewriteaof()
    wait_rewrite(c, srv=s)
    c.set("b", 2)
    d = os.path.join(tmpdir_aof, "aof dir")
    with open(os.path.join(d, "my aof.aof.manifest")) as f:
        text = f.read()
    assert text == ('file "my aof.aof.2.base.rdb" seq 2 type b\n'
                    'file "my aof.aof.2.incr.aof" seq 2 type i\n')
    s.kill9()
    r = subprocess.run(["redis-check-aof", os.path.join(d, "my aof.aof.manifest")], capture_output=True,
                       text=True, errors="replace")
    assert r.returncode == 0, r.stdout
    s.start()
    c = s.client()
    assert c.get("a") == "1" and c.get("b") == "2"


@hotkv_only
def test_timestamp_annotations(servers, tmpdir_aof):
    s = mk(servers, 7317, tmpdir_aof, "--appendonly", "yes", "--aof-timestamp-enabled", "yes",
           "--aof-use-rdb-preamble", "no").start()
    c = s.client()
    c.set("a", 1)
    t1 = int(time.time())
    time.sleep(1.1)
    c.set("b", 2)
    time.sleep(1.1)
    c.set("c", 3)
    incr = os.path.join(aofdir(tmpdir_aof), "appendonly.aof.1.incr.aof")
    with open(incr, "rb") as f:
        data = f.read()
    assert data.startswith(b"#TS:") and data.count(b"#TS:") == 3
    s.kill9()
    s.start()
    c = s.client()
    assert [c.get(k) for k in "abc"] == ["1", "2", "3"]
    s.kill9()
    # Cut the history after the first second: only "a" stays.
    man = os.path.join(aofdir(tmpdir_aof), "appendonly.aof.manifest")
    r = subprocess.run([CHECK_AOF, "--truncate-to-timestamp", str(t1), man], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    s.start()
    c = s.client()
    assert c.get("a") == "1" and c.exists("b", "c") == 0


# ------------------------------------------------------- crash test ---
class Writer(threading.Thread):
    """Writes its own keys over several connections; records what was
    acknowledged (acked_*) and what was attempted (sent_*)."""

    def __init__(self, port, wid, round_no, nconn=3):
        super().__init__(daemon=True)
        self.port, self.wid, self.r = port, wid, round_no
        self.nconn = nconn
        self.acked_incr = 0
        self.sent_incr = 0
        self.acked_sets = {}
        self.sent_sets = set()
        self.acked_push = 0
        self.sent_push = 0
        self.error = None

    def key(self, what):
        return "r%d:w%d:%s" % (self.r, self.wid, what)

    def run(self):
        conns = [redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, decode_responses=True)
                 for _ in range(self.nconn)]
        rnd = random.Random(self.wid * 1000 + self.r)
        n = 0
        try:
            while True:
                c = conns[n % self.nconn]
                op = rnd.randrange(3)
                if op == 0:
                    self.sent_incr += 1
                    v = c.incr(self.key("ctr"))
                    assert v == self.acked_incr + 1, (v, self.acked_incr)
                    self.acked_incr = v
                elif op == 1:
                    k = self.key("k%d" % n)
                    self.sent_sets.add(k)
                    c.set(k, "v%d" % n)
                    self.acked_sets[k] = "v%d" % n
                else:
                    self.sent_push += 1
                    ln = c.rpush(self.key("list"), self.acked_push)
                    assert ln == self.acked_push + 1
                    self.acked_push = ln
                n += 1
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError, OSError):
            pass
        except AssertionError as e:
            self.error = e

    def verify(self, c):
        ctr = int(c.get(self.key("ctr")) or 0)
        assert self.acked_incr <= ctr <= self.sent_incr, (self.wid, self.acked_incr, ctr, self.sent_incr)
        for k, v in self.acked_sets.items():
            assert c.get(k) == v, (k, v)
        lst = c.lrange(self.key("list"), 0, -1)
        assert self.acked_push <= len(lst) <= self.sent_push
        assert lst == [str(i) for i in range(len(lst))]
        # Nothing that was never sent.
        extra = [k for k in c.scan_iter(self.key("k*"), count=1000) if k not in self.sent_sets]
        assert not extra, extra[:5]


@hotkv_only
@release_only  # kill -9 durability: a sanitizer build's slowness changes nothing it checks
def test_crash_always_acknowledged_writes_survive(servers, tmpdir_aof):
    """appendfsync always, 8 writer threads x 3 connections, server with 4
    threads; kill -9 at random moments, restart, every acknowledged write
    is there and nothing that was never sent.  Earlier rounds' data must
    survive the later crashes too."""
    t_end = time.time() + 50
    s = mk(servers, 7330, tmpdir_aof, "--appendonly", "yes", "--appendfsync", "always", threads=4).start()
    rnd = random.Random(42)
    done = []
    rounds = 0
    total_acked = 0
    while rounds < 5 and time.time() < t_end - 8:
        ws = [Writer(s.port, i, rounds) for i in range(8)]
        for w in ws:
            w.start()
        time.sleep(rnd.uniform(0.3, 1.5))
        if rounds == 2:
            # A crash during a rewrite as well.
            s.client().bgrewriteaof()
            time.sleep(rnd.uniform(0.0, 0.3))
        s.kill9()
        for w in ws:
            w.join(15)
            assert w.error is None, w.error
        s.start()
        c = s.client()
        for w in done + ws:
            w.verify(c)
        total_acked += sum(w.acked_incr + len(w.acked_sets) + w.acked_push for w in ws)
        done += ws
        rounds += 1
    print("crash test: %d rounds, %d acknowledged writes checked" % (rounds, total_acked))
    assert rounds >= 3
    assert total_acked > 1000, total_acked


@hotkv_only
def test_failed_first_rewrite_removes_its_temp_incr_file(servers, tmpdir_aof):
    """appendonly switched on at run time: writes go to a temp incr file
    until the first rewrite ends.  A rewrite that dies removes it (logged
    as Redis logs it), creates no manifest or base, and the rewrite is
    started again; once one succeeds the temp file becomes incr 1."""
    s = mk(servers, 7331, tmpdir_aof, "--appendonly", "no").start()
    c = s.client()
    c.execute_command("DEBUG", "POPULATE", 50)
    c.config_set("rdb-key-save-delay", 10000000)
    c.config_set("appendonly", "yes")
    assert c.info("persistence")["aof_rewrite_in_progress"] == 1

    def child():
        kids = []
        for t in os.listdir("/proc/%d/task" % s.proc.pid):
            with open("/proc/%d/task/%s/children" % (s.proc.pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
        return kids[0] if kids else None
    assert wait_until(lambda: child() is not None, timeout=5)
    os.kill(child(), signal.SIGKILL)

    def logged():
        with open(s.logpath(), errors="replace") as f:
            return f.read().count("Removing the temp incr aof file")
    assert wait_until(lambda: logged() == 1, timeout=10)
    assert not os.path.exists(os.path.join(aofdir(tmpdir_aof), "appendonly.aof.manifest"))
    assert not [f for f in os.listdir(aofdir(tmpdir_aof)) if ".base." in f]
    c.config_set("rdb-key-save-delay", 0)
    assert wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 1
                      or os.path.exists(os.path.join(aofdir(tmpdir_aof), "appendonly.aof.manifest")), timeout=10)
    wait_rewrite(c, 30)
    assert sorted(os.listdir(aofdir(tmpdir_aof))) == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof",
                                                      "appendonly.aof.manifest"]


@hotkv_only
def test_missing_file_in_the_manifest_is_named(tmpdir_aof):
    """A manifest that lists a file the directory lacks stops the start-up,
    naming the file and the errno text (Redis's aof-multi-part reads both)."""
    d = aofdir(tmpdir_aof)
    os.makedirs(d)
    with open(os.path.join(d, "appendonly.aof.1.base.aof"), "wb") as f:
        f.write(b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n")
    with open(os.path.join(d, "appendonly.aof.manifest"), "w") as f:
        f.write("file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    log = os.path.join(tmpdir_aof, "start.log")
    p = subprocess.run([BIN, "--port", "0", "--dir", tmpdir_aof, "--appendonly", "yes", "--logfile", log],
                       timeout=20)
    assert p.returncode != 0
    with open(log) as f:
        text = f.read()
    assert re.search(r"appendonly\.aof\.1\.incr\.aof .*No such file or directory", text), text
