"""WAIT, WAITAOF and min-replicas-to-write on a HotKV master (Redis 7.2's
behaviour), with Debian's redis-server 7.0 as a replica and, where a 7.0
replica cannot help (it sends no FACK, it acks on its own schedule), a
scripted replica speaking the protocol on a socket.

Servers listen on loopback ports taken from 23000-23999 (free ones, found
by binding, as helpers.free_port does for any port)."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, free_port, wait_until

pytestmark = [pytest.mark.skipif(IS_REDIS, reason="HotKV as the master"),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server")))


def client(port, timeout=10):
    c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=timeout)
    c.response_callbacks.clear()
    return c


def info(c, section="replication"):
    text = c.execute_command("INFO", section)
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)


def pingable(c):
    try:
        return c.ping() in (True, "PONG")
    except redis.ConnectionError:
        return False


class Proc:
    """A server process on a port of our range, in a temporary directory."""

    def __init__(self, argv_for):
        self.dir = tempfile.mkdtemp(prefix="hotkv-wait-")
        self.port = free_port()
        self.logpath = os.path.join(self.dir, "server.log")
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(argv_for(self.port, self.dir), stdout=self.log, stderr=subprocess.STDOUT)
        self.c = client(self.port)
        assert wait_until(lambda: pingable(self.c), timeout=10), self.logtext()

    def logtext(self):
        try:
            with open(self.logpath) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def hotkv(*extra):
    return Proc(lambda port, d: [BIN, "--port", str(port), "--bind", "127.0.0.1", "--threads", "2", "--dir", d,
                                 "--save", "", "--repl-diskless-sync-delay", "0"] + list(extra))


def redis_replica(mport, *extra):
    return Proc(lambda port, d: ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--dir", d, "--replicaof", "127.0.0.1", str(mport)] + list(extra))


class FakeReplica:
    """A replica played by hand: PSYNC, the diskless RDB read and dropped,
    then the stream collected by a thread; ACKs are sent when asked."""

    def __init__(self, mport):
        self.s = socket.create_connection(("127.0.0.1", mport), timeout=10)
        self.stream = b""
        self.lock = threading.Lock()
        self.closed = False
        for cmd in (["REPLCONF", "listening-port", "1"], ["REPLCONF", "capa", "eof", "capa", "psync2"]):
            self.send(*cmd)
            assert self.readline() == b"+OK"
        self.send("PSYNC", "?", "-1")
        line = self.readline()
        while not line:  # newlines while the snapshot is prepared
            line = self.readline()
        assert line.startswith(b"+FULLRESYNC "), line
        self.offset = int(line.split()[2])
        eof = self.readline()
        assert eof.startswith(b"$EOF:"), eof
        mark, buf = eof[5:], b""
        while not buf.endswith(mark):
            chunk = self.s.recv(65536)
            assert chunk
            buf += chunk
        self.t = threading.Thread(target=self.collect, daemon=True)
        self.t.start()

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def readline(self):
        line = b""
        while not line.endswith(b"\n"):
            ch = self.s.recv(1)
            assert ch, "master closed the link"
            line += ch
        return line.rstrip(b"\r\n")

    def collect(self):
        self.s.settimeout(None)
        while True:
            try:
                chunk = self.s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            with self.lock:
                self.stream += chunk
        self.closed = True

    def received(self):
        with self.lock:
            return self.stream

    def ack(self, off, fack=None):
        if fack is None:
            self.send("REPLCONF", "ACK", off)
        else:
            self.send("REPLCONF", "ACK", off, "FACK", fack)

    def close(self):
        self.s.close()


def timed(fn, *args):
    t0 = time.time()
    res = fn(*args)
    return res, time.time() - t0


@pytest.fixture(scope="module")
def pair():
    """A master with appendonly yes and redis-server 7.0 (appendonly yes)
    as its replica, in sync."""
    m = hotkv("--appendonly", "yes", "--appendfsync", "everysec")
    r = redis_replica(m.port, "--appendonly", "yes")
    try:
        # ROLE lists a replica once its first ACK came (online for WAIT).
        assert wait_until(lambda: info(r.c).get("master_link_status") == "up"
                          and len(m.c.execute_command("ROLE")[2]) == 1, timeout=10), r.logtext()
        yield m, r
    finally:
        r.stop()
        assert m.stop() == 0, m.logtext()


@pytest.fixture
def lone():
    """A master without replicas, appendonly no."""
    m = hotkv()
    yield m
    assert m.stop() == 0, m.logtext()


def test_wait_with_a_replica(pair):
    m, r = pair
    c = client(m.port)
    assert c.execute_command("WAIT", 0, 0) == 1  # no write yet: every online replica counts
    for i in range(50):
        c.execute_command("SET", "k%d" % i, i)
    n, took = timed(c.execute_command, "WAIT", 1, 5000)
    assert n == 1 and took < 2, took
    assert r.c.execute_command("GET", "k49") == "49"
    # More replicas than there are: the timeout, then the count.
    c.execute_command("INCR", "counter")
    n, took = timed(c.execute_command, "WAIT", 2, 400)
    assert n == 1 and 0.35 <= took < 2, took


def test_wait_arguments_and_non_blocking_contexts(pair):
    m, _ = pair
    c = client(m.port)
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        c.execute_command("WAIT", 1, -1)
    with pytest.raises(redis.ResponseError, match="^timeout is not an integer or out of range$"):
        c.execute_command("WAIT", 1, "1.5")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        c.execute_command("WAIT", "x", 0)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'wait'"):
        c.execute_command("WAIT", 1)
    # MULTI and scripts never block: the count as it is.
    c.execute_command("SET", "tx", "1")
    c.execute_command("MULTI")
    c.execute_command("SET", "tx", "2")
    c.execute_command("WAIT", 5, 0)
    t0 = time.time()
    res = c.execute_command("EXEC")
    assert res[0] == "OK" and res[1] in (0, 1) and time.time() - t0 < 1
    t0 = time.time()
    assert c.execute_command("EVAL", "redis.call('set', KEYS[1], 'v'); return redis.call('wait', 5, 0)", 1,
                             "sk") in (0, 1)
    assert time.time() - t0 < 1
    assert c.execute_command("COMMAND", "INFO", "wait")[0][:2] == ["wait", 3]
    assert c.execute_command("COMMAND", "INFO", "waitaof")[0][:2] == ["waitaof", 4]


def test_wait_blocks_while_the_replica_is_stopped(pair):
    m, r = pair
    c = client(m.port)
    c.execute_command("SET", "before", "1")
    assert c.execute_command("WAIT", 1, 5000) == 1
    os.kill(r.proc.pid, signal.SIGSTOP)
    try:
        c.execute_command("SET", "paused", "1")
        out = {}

        def waiter():
            out["n"], out["took"] = timed(c.execute_command, "WAIT", 1, 0)  # 0: for ever

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.6)
        assert t.is_alive() and "n" not in out
        assert info(m.c, "clients")["blocked_clients"] == "1"
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)
    t.join(10)
    assert out["n"] == 1 and 0.5 <= out["took"] < 5, out
    # CLIENT UNBLOCK: the count (a timeout's reply) or the UNBLOCKED error.
    os.kill(r.proc.pid, signal.SIGSTOP)
    try:
        c.execute_command("SET", "paused", "2")
        cid = c.execute_command("CLIENT", "ID")
        t = threading.Thread(target=lambda: out.update(u=c.execute_command("WAIT", 1, 0)))
        t.start()
        assert wait_until(lambda: info(m.c, "clients")["blocked_clients"] == "1", timeout=5)
        assert m.c.execute_command("CLIENT", "UNBLOCK", cid) == 1
        t.join(5)
        assert out["u"] == 0
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)
    assert client(m.port).execute_command("WAIT", 1, 5000) == 1  # a fresh client: woff 0


def test_waitaof(pair):
    m, r = pair
    c = client(m.port)
    with pytest.raises(redis.ResponseError, match="^value is out of range, value must between 0 and 1$"):
        c.execute_command("WAITAOF", 2, 0, 0)
    with pytest.raises(redis.ResponseError, match="^value is out of range, must be positive$"):
        c.execute_command("WAITAOF", 0, -1, 0)
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        c.execute_command("WAITAOF", 1, 0, -5)
    # Nothing written yet (offset 0): the local AOF and every online
    # replica have it all, as Redis counts.
    assert c.execute_command("WAITAOF", 0, 0, 0) == [1, 1]
    c.execute_command("SET", "durable", "1")
    res, took = timed(c.execute_command, "WAITAOF", 1, 0, 0)  # everysec: within about a second
    assert res == [1, 0] and took < 3, (res, took)
    # A 7.0 replica sends no FACK: it never counts, and the wait times out.
    res, took = timed(c.execute_command, "WAITAOF", 0, 1, 300)
    assert res == [1, 0] and 0.25 <= took < 2, (res, took)
    # Inside MULTI: the counts at once.
    c.execute_command("MULTI")
    c.execute_command("WAITAOF", 1, 1, 0)
    assert c.execute_command("EXEC") == [[1, 0]]


def test_waitaof_without_aof_and_wait_without_replicas(lone):
    c = client(lone.port)
    with pytest.raises(redis.ResponseError,
                       match="^WAITAOF cannot be used when numlocal is set but appendonly is disabled.$"):
        c.execute_command("WAITAOF", 1, 0, 0)
    assert c.execute_command("WAITAOF", 0, 0, 0) == [0, 0]
    assert c.execute_command("WAIT", 0, 0) == 0
    c.execute_command("SET", "a", "1")
    n, took = timed(c.execute_command, "WAIT", 1, 200)
    assert n == 0 and 0.15 <= took < 2


def test_min_replicas_and_acks(lone):
    """min-replicas-to-write, GETACK and FACK with a scripted replica."""
    m = lone
    c = client(m.port)
    assert c.execute_command("CONFIG", "GET", "min-replicas-to-write") == ["min-replicas-to-write", "0"]
    assert c.execute_command("CONFIG", "GET", "min-slaves-max-lag") == ["min-slaves-max-lag", "10"]
    assert "min_slaves_good_slaves" not in info(c)
    c.execute_command("SET", "k", "v")
    c.execute_command("CONFIG", "SET", "min-replicas-to-write", "1")
    assert info(c)["min_slaves_good_slaves"] == "0"
    lines = list(info(c))
    assert lines.index("min_slaves_good_slaves") == lines.index("connected_slaves") + 1
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
        c.execute_command("SET", "k", "w")
    assert c.execute_command("GET", "k") == "v"
    with pytest.raises(redis.ResponseError, match="NOREPLICAS Not enough good replicas to write"):
        c.execute_command("EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "k")
    with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
        c.execute_command("EVAL", "#!lua\nreturn redis.call('set', KEYS[1], 'x')", 1, "k")
    assert c.execute_command("EVAL", "return redis.call('get', KEYS[1])", 1, "k") == "v"
    assert c.execute_command("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "k") == "v"
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS"):
        c.execute_command("SET", "k", "y")
    with pytest.raises(redis.ResponseError, match="previous errors"):  # EXECABORT (redis-py drops the code)
        c.execute_command("EXEC")
    assert c.execute_command("GET", "k") == "v"
    assert int(info(c, "errorstats").get("errorstat_NOREPLICAS", "count=0").split("=")[1].split(",")[0]) >= 2

    f = FakeReplica(m.port)
    try:
        # The first ACK after the master saw its snapshot child end puts it
        # online (one that comes before is early): ack until it is.
        assert wait_until(lambda: f.ack(f.offset) or len(c.execute_command("ROLE")[2]) == 1, timeout=5)
        assert wait_until(lambda: info(c).get("min_slaves_good_slaves") == "1", timeout=5), info(c)
        assert c.execute_command("SET", "k", "w") == "OK"
        assert c.execute_command("EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "k") == "OK"
        assert c.execute_command("GET", "k") == "x"

        # WAIT blocks, the master asks for an ACK through the stream.
        c.execute_command("SET", "w", "1")
        woff = int(info(c)["master_repl_offset"])
        out = {}
        t = threading.Thread(target=lambda: out.update(n=c.execute_command("WAIT", 1, 5000)))
        t.start()
        assert wait_until(lambda: b"GETACK" in f.received(), timeout=3), f.received()[-200:]
        assert b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n" in f.received()
        assert t.is_alive()
        f.ack(woff - 1)  # not far enough
        time.sleep(0.2)
        assert t.is_alive()
        f.ack(woff)
        t.join(3)
        assert out["n"] == 1
        # The GETACK itself is in the offset.
        assert int(info(c)["master_repl_offset"]) > woff

        # FACK: what the replica's AOF fsynced (WAITAOF's replica count).
        c.execute_command("SET", "f", "1")
        woff = int(info(c)["master_repl_offset"])
        f.ack(woff)
        assert c.execute_command("WAIT", 1, 1000) == 1
        res, took = timed(c.execute_command, "WAITAOF", 0, 1, 200)
        assert res == [0, 0] and took >= 0.15
        out = {}
        t = threading.Thread(target=lambda: out.update(r=c.execute_command("WAITAOF", 0, 1, 5000)))
        t.start()
        time.sleep(0.2)
        assert t.is_alive()
        f.ack(woff, woff)
        t.join(3)
        assert out["r"] == [0, 1]

        # A replica silent for longer than min-replicas-max-lag is not good.
        c.execute_command("CONFIG", "SET", "min-replicas-max-lag", "1")
        assert wait_until(lambda: info(c).get("min_slaves_good_slaves") == "0", timeout=5), info(c)
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS"):
            c.execute_command("SET", "k", "z")
        f.ack(int(info(c)["master_repl_offset"]))
        assert wait_until(lambda: info(c).get("min_slaves_good_slaves") == "1", timeout=3), info(c)
        assert c.execute_command("SET", "k", "z") == "OK"
        # max-lag 0 or to-write 0: off.
        c.execute_command("CONFIG", "SET", "min-replicas-max-lag", "0")
        assert "min_slaves_good_slaves" not in info(c)
    finally:
        f.close()
    c.execute_command("CONFIG", "SET", "min-replicas-max-lag", "10", "min-replicas-to-write", "0")
    assert c.execute_command("SET", "k", "after") == "OK"


def test_min_replicas_with_redis_replica(pair):
    m, _ = pair
    c = client(m.port)
    c.execute_command("CONFIG", "SET", "min-replicas-to-write", "1")
    try:
        assert wait_until(lambda: info(c).get("min_slaves_good_slaves") == "1", timeout=3), info(c)
        assert c.execute_command("SET", "mr", "1") == "OK"
        assert c.execute_command("WAIT", 1, 5000) == 1
        c.execute_command("CONFIG", "SET", "min-replicas-to-write", "2")
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS"):
            c.execute_command("SET", "mr", "2")
    finally:
        c.execute_command("CONFIG", "SET", "min-replicas-to-write", "0")
