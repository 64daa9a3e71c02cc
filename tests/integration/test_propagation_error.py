"""propagation-error-behavior (Redis 7): a command that fails in a replica's
master stream, or in the AOF being loaded, is data divergence.  HotKV logs
it ("== CRITICAL == ..."), counts it in INFO stats unexpected_error_replies,
and with panic / panic-on-replicas aborts.

The master here is a fake one written in the test (a socket that answers
the handshake, sends an empty RDB and then the commands the test chooses),
so the stream can hold a command that fails, as Redis's own test does with
DEBUG REPLICATE.  Every scenario starts its own server and is bounded."""
import os
import socket
import threading

import pytest
import redis

from helpers import IS_REDIS, Server, wait_until, write_aof_dir

pytestmark = pytest.mark.skipif(IS_REDIS, reason="HotKV as the replica / AOF loader")

EMPTY_RDB = b"REDIS0009\xff" + b"\x00" * 8  # checksum 0: not checked, as Redis allows


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class FakeMaster:
    """Accepts one replica, answers its handshake with +FULLRESYNC and an
    empty RDB, then streams what send() is given."""

    def __init__(self):
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(1)
        self.port = self.ls.getsockname()[1]
        self.conn = None
        self.synced = threading.Event()
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self):
        self.ls.settimeout(20)
        c, _ = self.ls.accept()
        c.settimeout(20)
        buf = b""
        while True:
            chunk = c.recv(4096)
            if not chunk:
                return
            buf += chunk
            while b"\r\n" in buf:
                # One command of the handshake (RESP arrays of bulk strings).
                try:
                    n = int(buf[1:buf.index(b"\r\n")])
                    parts, rest = [], buf[buf.index(b"\r\n") + 2:]
                    for _ in range(n):
                        ln = int(rest[1:rest.index(b"\r\n")])
                        start = rest.index(b"\r\n") + 2
                        if len(rest) < start + ln + 2:
                            raise ValueError
                        parts.append(rest[start:start + ln])
                        rest = rest[start + ln + 2:]
                except ValueError:
                    break
                buf = rest
                cmd = parts[0].upper()
                if cmd == b"PING":
                    c.sendall(b"+PONG\r\n")
                elif cmd in (b"REPLCONF", b"AUTH"):
                    c.sendall(b"+OK\r\n")
                elif cmd in (b"PSYNC", b"SYNC"):
                    c.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n")
                    c.sendall(b"$%d\r\n" % len(EMPTY_RDB) + EMPTY_RDB)
                    self.conn = c
                    self.synced.set()
                    return

    def send(self, data):
        self.conn.sendall(data)

    def close(self):
        for s in (self.conn, self.ls):
            try:
                if s:
                    s.close()
            except OSError:
                pass


def logtext(srv):
    with open(os.path.join(srv.dir, "server.log"), errors="replace") as f:
        return f.read()


@pytest.fixture
def fake_master():
    m = FakeMaster()
    yield m
    m.close()


def start_replica(m, behavior, *extra):
    r = Server("--replicaof", "127.0.0.1", str(m.port), "--propagation-error-behavior", behavior, *extra)
    assert m.synced.wait(20), logtext(r)
    c = redis.Redis(host="127.0.0.1", port=r.port, decode_responses=True, socket_timeout=10)
    assert wait_until(lambda: c.info("replication").get("master_link_status") == "up", timeout=10), logtext(r)
    return r, c


def test_ignore_logs_and_counts(fake_master):
    r, c = start_replica(fake_master, "ignore")
    try:
        fake_master.send(resp("SET", "a", "1") + resp("fake-command-1", "x") + resp("LPUSH", "a", "y") +
                         resp("SET", "b", "2"))
        assert wait_until(lambda: c.get("b") == "2", timeout=10), logtext(r)
        text = logtext(r)
        assert text.count("== CRITICAL ==") == 2, text[-3000:]
        assert ("This replica is sending an error to its master: 'ERR unknown command 'fake-command-1', "
                "with args beginning with: 'x' ' after processing the command '<unknown>'") in text
        assert ("This replica is sending an error to its master: 'WRONGTYPE Operation against a key holding "
                "the wrong kind of value' after processing the command 'lpush'") in text
        assert c.info("stats")["unexpected_error_replies"] == 2
        assert c.get("a") == "1"
        assert r.proc.poll() is None
    finally:
        r.stop()


@pytest.mark.parametrize("behavior", ["panic", "panic-on-replicas"])
def test_panic_on_a_read_only_replica(fake_master, behavior):
    r, c = start_replica(fake_master, behavior)
    try:
        fake_master.send(resp("SET", "a", "1") + resp("LPUSH", "a", "y"))
        assert r.proc.wait(15) != 0
        text = logtext(r)
        assert "This replica panicked sending an error to its master after processing the command 'lpush'" in text
    finally:
        r.stop()


def test_writable_replica_never_panics(fake_master):
    r, c = start_replica(fake_master, "panic", "--replica-read-only", "no")
    try:
        fake_master.send(resp("SET", "a", "1") + resp("LPUSH", "a", "y") + resp("SET", "b", "2"))
        assert wait_until(lambda: c.get("b") == "2", timeout=10), logtext(r)
        assert "== CRITICAL ==" in logtext(r)
        assert r.proc.poll() is None
    finally:
        r.stop()


@pytest.mark.parametrize("behavior", ["ignore", "panic-on-replicas", "panic"])
def test_aof_loading(tmp_path, behavior):
    d = str(tmp_path)
    write_aof_dir(d, resp("SET", "a", "1") + resp("LPUSH", "a", "y") + resp("SET", "b", "2"))
    args = ["--appendonly", "yes", "--dir", d, "--propagation-error-behavior", behavior]
    if behavior == "panic":
        import subprocess
        from conftest import BIN
        p = subprocess.run([BIN, "--port", "0", "--bind", "127.0.0.1", "--save", ""] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        out = p.stdout.decode(errors="replace")
        assert p.returncode != 0
        assert ("This server is sending an error to its AOF-loading-client: 'WRONGTYPE Operation against a key "
                "holding the wrong kind of value' after processing the command 'lpush'") in out, out[-3000:]
        assert "This server panicked sending an error to its AOF-loading-client" in out
        return
    s = Server(*args)
    try:
        c = redis.Redis(host="127.0.0.1", port=s.port, decode_responses=True, socket_timeout=10)
        assert c.get("b") == "2"
        assert "== CRITICAL == This server is sending an error to its AOF-loading-client" in logtext(s)
        assert c.info("stats")["unexpected_error_replies"] == 1
    finally:
        s.stop()
