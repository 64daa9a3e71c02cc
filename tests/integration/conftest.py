"""Shared fixtures for HotKV integration tests.

Every test talks to a real server over TCP.  By default a fresh hotkv-server
is spawned per test module on a free port (binary from $HOTKV_BIN, default
build/hotkv-server).  Set HOTKV_SERVER=redis to run the same tests against
Debian's redis-server instead (used to check that the tests encode Redis's
behaviour), or HOTKV_PORT=N to use an already-running server.
"""
import os
import random
import socket
import subprocess
import time
import tempfile

import pytest
import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server")))
MODE = os.environ.get("HOTKV_SERVER", "hotkv")


# Ports for the servers the tests start.  They come from below the kernel's
# ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default):
# a port the kernel handed out for bind(("", 0)) and that was closed again is
# as likely as any other to become the local end of the next outgoing
# connection (a client's, a replica's, a cluster bus link's) before the server
# binds it, and the server then fails with "address in use".  Two pools, so
# that the two pytest processes of scripts/test.sh (test_cluster.py beside
# the rest) never pick the same port; a cluster node's bus port (+10000)
# falls in 20000-29999, clear of both pools and of the ephemeral range.
PORT_POOL_MAIN = (10000, 16000)
PORT_POOL_CLUSTER = (16000, 20000)
_ports_given = set()


def port_free(port, reuse=True):
    """Whether a server could bind the loopback port now; reuse=False also
    refuses a port that only connections in TIME_WAIT hold."""
    s = socket.socket()
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port(bus=False, pool=PORT_POOL_MAIN):
    """A loopback port nothing holds now and this process has not handed out
    before; with bus=True its cluster bus port (port + 10000) is free too."""
    lo, hi = pool
    for _ in range(2):
        ports = [p for p in range(lo, hi) if p not in _ports_given]
        random.shuffle(ports)
        for p in ports:
            if port_free(p, False) and (not bus or port_free(p + 10000, False)):
                _ports_given.add(p)
                return p
        # Every port of the pool was handed out once: those servers are
        # long gone, so start again.
        _ports_given.difference_update(range(lo, hi))
    raise RuntimeError("no free port in %d-%d" % (lo, hi - 1))


# DEBUG and CONFIG SET dir/dbfilename are off by default (Redis 7's
# enable-debug-command / enable-protected-configs); the suite uses them, as
# Redis's own test suite does.  test_hardening.py starts servers without.
HARDENING_OFF = ["--enable-debug-command", "yes", "--enable-protected-configs", "yes"]


class Server:
    """A spawned server process; extra args are redis-style --name value."""

    def __init__(self, *args, threads=2):
        self.dir = tempfile.mkdtemp(prefix="hotkv-test-")
        # The port free_port() found may be taken by another test process
        # (the cluster tests run beside the others) before the server binds
        # it: then start again on another.
        for attempt in range(4):
            self.port = free_port()
            if self._start(args, threads, last=attempt == 3):
                return

    def _start(self, args, threads, last):
        if MODE == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--dir", self.dir]
            cmd += HARDENING_OFF
        else:
            # No save points unless a test asks (as for redis-server above):
            # a snapshot at every shutdown would only slow the suite down.
            cmd = [BIN, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--threads", str(threads), "--dir", self.dir, "--save", ""]
            cmd += HARDENING_OFF
        cmd += [str(a) for a in args]
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)
                continue
            if self._is_ours():
                return True
            # Another process's server holds the port (ours failed to bind
            # it, or is about to): never hand that one to the test.
            if not last:
                self.proc.kill()
                self.proc.wait()
                self.log.close()
                return False
            break
        if not last and self.proc.poll() is not None:
            self.log.close()
            with open(os.path.join(self.dir, "server.log"), errors="replace") as f:
                if "Address already in use" in f.read():
                    return False
        raise RuntimeError("server did not start: %s (log in %s)" % (cmd, self.dir))

    def _is_ours(self):
        """The server answering on the port is the process started here
        (INFO's process_id), or cannot say (a password is needed)."""
        try:
            c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10)
            try:
                return int(c.info("server")["process_id"]) == self.proc.pid
            finally:
                c.close()
        except (redis.RedisError, OSError):
            # NOAUTH, NOPERM, INFO renamed away, "max number of clients
            # reached" (the probe above holds the one slot of maxclients
            # 1): it cannot say; our process being alive will do.
            return self.proc.poll() is None

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

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


class External:
    def __init__(self, port):
        self.port = port
        self.dir = None
        self.proc = None

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        return 0


@pytest.fixture(scope="module")
def server():
    if os.environ.get("HOTKV_PORT"):
        yield External(int(os.environ["HOTKV_PORT"]))
        return
    s = Server()
    yield s
    rc = s.stop()
    # A clean SIGTERM shutdown exits 0; anything else (crash, sanitizer) fails.
    assert rc == 0, "server exited with %s, see %s" % (rc, s.dir)


@pytest.fixture
def r(server):
    c = server.client(decode_responses=True)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rb(server):
    c = server.client()
    c.flushall()
    yield c
    c.close()


class Resp:
    """Minimal raw RESP2/RESP3 client (Debian's redis-py 4.3 has no RESP3).
    call() returns parsed replies: str for simple strings, bytes for bulk,
    int, float (RESP3 double), bool, None, list, dict, set, and
    ('error', msg) / ('push', [...]) / ('verbatim', fmt, text) tuples."""

    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            if not isinstance(a, bytes):
                a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return ("error", rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            if t == b"~":
                return set(x if not isinstance(x, list) else tuple(x) for x in items)
            if t == b">":
                return ("push", items)
            return items
        if t == b"%":
            n = int(rest)
            d = {}
            for _ in range(n):
                k = self.read()
                d[k] = self.read()
            return d
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        if t == b"(":
            return int(rest)
        if t == b"=":
            data = self._exact(int(rest))
            return ("verbatim", data[:3].decode(), data[4:])
        raise ValueError("bad reply type %r" % line)

    def close(self):
        self.s.close()


@pytest.fixture(scope="module")
def version(server):
    """The server's redis_version as a tuple of ints, e.g. (7, 2, 4)."""
    c = server.client()
    try:
        v = c.info("server")["redis_version"]
        return tuple(int(x) for x in v.split(".")[:3])
    finally:
        c.close()


@pytest.fixture
def resp(server):
    c = Resp(server.port)
    c.call("FLUSHALL")
    yield c
    c.close()


@pytest.fixture
def resp3(server):
    c = Resp(server.port)
    assert isinstance(c.call("HELLO", "3"), dict)
    c.call("FLUSHALL")
    yield c
    c.close()


def raw(port, data, read_timeout=1.0, expect_close=False):
    """Send raw bytes and return everything the server answers until it is
    quiet for read_timeout seconds or closes the connection."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    s.close()
    return out
