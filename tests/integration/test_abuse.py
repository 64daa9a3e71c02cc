"""Issue 15, "safe to expose": no single request or client may crash, hang
or starve the server.  Each test is bounded by count and time (the suite
also runs under ASan and TSan):

- glob patterns built to explode a backtracking matcher (KEYS, SCAN /
  HSCAN / SSCAN / ZSCAN MATCH, PSUBSCRIBE + PUBLISH, PUBSUB CHANNELS,
  CONFIG GET) against long subjects, and very long / deeply nested ones;
- pub/sub with very many patterns: PUBLISH, PUNSUBSCRIBE (all) stay fast,
  the pubsub output-buffer class applies;
- MULTI with a huge queue: counted in CLIENT LIST (multi=, multi-mem=,
  tot-mem=), freed by DISCARD, EXEC'd without starving the other worker,
  seen by maxmemory-clients;
- blocking commands racing CLIENT KILL / CLIENT UNBLOCK / self-disconnect
  while other threads push: no crash, no element popped twice, no
  acknowledged push lost beyond what a kill may drop;
- a low RLIMIT_NOFILE: maxclients fitted at start-up; accept() failing
  with EMFILE neither spins nor kills the server;
- client-output-buffer-limit normal for a pipelining client that never
  reads, across worker threads;
- CLIENT subcommands with edge arguments."""
import os
import random
import resource
import socket
import subprocess
import threading
import time

import pytest

from conftest import BIN, MODE, Resp, Server, free_port
from helpers import client_list_entries

pytestmark = pytest.mark.skipif(MODE != "hotkv", reason="HotKV limits and timings")


@pytest.fixture(scope="module")
def server():
    s = Server(threads=2)
    yield s
    assert s.stop() == 0, "server exited badly, see %s" % s.dir


@pytest.fixture
def c(server):
    r = Resp(server.port, timeout=20)
    r.call("FLUSHALL")
    yield r
    r.close()


def clients(r):
    text = r.call("CLIENT", "LIST")
    if isinstance(text, bytes):
        text = text.decode()
    return client_list_entries(text)


def unblocked(out):
    """CLIENT UNBLOCK <id> ERROR makes the blocking command fail."""
    if isinstance(out, tuple) and out[0] == "error":
        assert out[1].startswith("UNBLOCKED"), out
        return None
    return out


def enc(*args):
    """RESP multibulk, linear in the argument count (for huge commands)."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def timed(fn, *args):
    t = time.time()
    out = fn(*args)
    return out, time.time() - t


# ------------------------------------------------------------------- glob
BAD = "*a" * 30 + "*b"          # exponential for a naive recursive matcher
LONG_A = "a" * 20000


def test_glob_keys_and_scan_pathological(c):
    c.call("SET", LONG_A, "1")
    for i in range(20):
        c.call("SET", "a" * 500 + str(i), "1")
    c.call("HSET", "h", LONG_A, "1", "aaa", "2")
    c.call("SADD", "s", LONG_A, "aaaa")
    c.call("ZADD", "z", "1", LONG_A, "2", "aaaaa")
    budget = 5.0
    t = time.time()
    assert c.call("KEYS", BAD) == []
    assert c.call("SCAN", "0", "MATCH", BAD, "COUNT", "1000")[1] == []
    for cmd, key in (("HSCAN", "h"), ("SSCAN", "s"), ("ZSCAN", "z")):
        assert c.call(cmd, key, "0", "MATCH", BAD, "COUNT", "1000")[1] == []
    assert c.call("CONFIG", "GET", BAD) == []
    assert c.call("KEYS", "*a" * 30 + "*") != []
    assert time.time() - t < budget


def test_glob_long_and_nested_patterns(c):
    c.call("SET", "key", "v")
    c.call("SET", LONG_A, "v")
    for pat in ("[" * 100000, "\\" * 100001, "*" * 200000, "[^" * 50000 + "]" * 50000,
                "?" * 100000, "[a-" * 30000, "*[a]" * 20000 + "b"):
        out, took = timed(c.call, "KEYS", pat)
        assert isinstance(out, list) and took < 3, (pat[:10], took)
        out, took = timed(c.call, "SCAN", "0", "MATCH", pat, "COUNT", "100")
        assert isinstance(out, list) and took < 3
    assert c.call("KEYS", "*" * 200000) != []
    assert c.call("PING") == "PONG"


def test_glob_psubscribe_pathological_publish(server, c):
    subs = []
    for i in range(5):
        s = Resp(server.port, timeout=20)
        s.call("PSUBSCRIBE", BAD + str(i), "*a" * 30 + "*")
        subs.append(s)
    _, took = timed(c.call, "PUBLISH", LONG_A, "m")
    assert took < 3
    assert c.call("PUBLISH", LONG_A, "m") == 5  # only the "...*" patterns match
    out, took = timed(c.call, "PUBSUB", "CHANNELS", BAD)
    assert out == [] and took < 3
    for s in subs:
        s.close()


# ------------------------------------------------------------ pub/sub
def test_many_patterns_publish_and_punsubscribe_all(server, c):
    n = 15000
    s = Resp(server.port, timeout=30)
    pats = [b"p:%d:*" % i for i in range(n)]
    t = time.time()
    s.s.sendall(enc(b"PSUBSCRIBE", *pats))
    for i in range(n):
        assert s.read()[2] == i + 1
    took_sub = time.time() - t
    assert c.call("PUBSUB", "NUMPAT") == n
    t = time.time()
    for i in range(20):
        assert c.call("PUBLISH", "p:%d:x" % (i * 997 % n), "hi") == 1
    assert time.time() - t < 5
    for i in range(20):
        msg = s.read()
        assert msg[0] == b"pmessage" and msg[2] == b"p:%d:x" % (i * 997 % n)
    t = time.time()
    s.send("PUNSUBSCRIBE")
    for i in range(n):
        assert s.read()[0] == b"punsubscribe"
    took_unsub = time.time() - t
    # Linear: leaving all of them costs about what joining did.
    assert took_unsub < max(5.0, 4 * took_sub)
    assert c.call("PUBSUB", "NUMPAT") == 0
    # Again, one name per command, then closing the connection drops the rest.
    for i in range(2000):
        s.send("PSUBSCRIBE", "q:%d:*" % i)
    for i in range(2000):
        s.read()
    s.close()
    deadline = time.time() + 5
    while c.call("PUBSUB", "NUMPAT") != 0:
        assert time.time() < deadline
        time.sleep(0.02)


def test_pubsub_output_buffer_limit_applies(server, c):
    c.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0")
    try:
        s = socket.create_connection(("127.0.0.1", server.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"*2\r\n$10\r\nPSUBSCRIBE\r\n$1\r\n*\r\n")
        time.sleep(0.1)
        payload = "x" * 65536
        deadline = time.time() + 10
        while True:
            n = c.call("PUBLISH", "ch", payload)
            if n == 0:
                break  # the subscriber was disconnected
            assert time.time() < deadline, "pubsub output limit never applied"
        s.close()
        assert c.call("PING") == "PONG"
    finally:
        c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 32mb 8mb 60")


# -------------------------------------------------------------- MULTI
def test_multi_huge_queue_accounted_and_discarded(server, c):
    m = Resp(server.port, timeout=30)
    m.call("CLIENT", "SETNAME", "bigmulti")
    assert m.call("MULTI") == "OK"
    n = 200000
    batch = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n" * 10000
    for _ in range(n // 10000):
        m.s.sendall(batch)
        for _ in range(10000):
            assert m.read() == "QUEUED"
    # A queued command is at least its argv: the queue shows in CLIENT LIST.
    e = [x for x in clients(c) if x.get("name") == "bigmulti"][0]
    assert int(e["multi"]) == n
    assert int(e["multi-mem"]) >= n * 8
    assert int(e["tot-mem"]) >= int(e["multi-mem"])
    assert m.call("DISCARD") == "OK"
    e = [x for x in clients(c) if x.get("name") == "bigmulti"][0]
    assert int(e["multi"]) == -1 and int(e["multi-mem"]) < 65536
    m.close()


def test_multi_huge_exec_does_not_starve_others(server, c):
    m = Resp(server.port, timeout=60)
    assert m.call("MULTI") == "OK"
    n = 100000
    batch = b"*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n" * 10000
    for _ in range(n // 10000):
        m.s.sendall(batch)
        for _ in range(10000):
            assert m.read() == "QUEUED"
    m.send("EXEC")
    # Another client keeps being served while (or after) it runs.
    other = Resp(server.port, timeout=30)
    _, took = timed(other.call, "SET", "elsewhere", "1")
    assert took < 10
    out = m.read()
    assert len(out) == n and out[-1] == n
    assert c.call("GET", "ctr") == str(n).encode()
    m.close()
    other.close()


def test_multi_queue_seen_by_maxmemory_clients(server, c):
    c.call("CONFIG", "SET", "maxmemory-clients", "20mb")
    try:
        m = Resp(server.port, timeout=30)
        m.call("CLIENT", "SETNAME", "hog")
        m.call("MULTI")
        val = b"x" * 100000
        cmd = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n" % (len(val), val)
        gone = False
        for _ in range(1000):  # 100 MB worth, far past the 20 MB limit
            try:
                m.s.sendall(cmd)
                assert m.read() == "QUEUED"
            except (ConnectionError, OSError):
                gone = True
                break
        assert gone, "a 100 MB MULTI queue survived maxmemory-clients 20mb"
        assert not [x for x in clients(c) if x.get("name") == "hog"]
        m.close()
    finally:
        c.call("CONFIG", "SET", "maxmemory-clients", "0")


def test_watch_many_keys_is_linear(server, c):
    """WATCH of n keys was O(n^2) (a duplicate check against every key
    already watched) with the keys' slot locks held: 200k keys stalled
    every client for ~40 s."""
    w = Resp(server.port, timeout=30)
    keys = [b"wk:%d" % i for i in range(100000)]
    w.s.sendall(enc(b"WATCH", *(keys + keys[:1000])))
    other = Resp(server.port, timeout=30)
    _, took = timed(other.call, "SET", "unrelated", "1")
    assert took < 3
    out, took = timed(w.read)
    assert out == "OK" and took < 5
    assert w.call("WATCH", "wk:5", "wk:5") == "OK"  # already watched: no-op
    assert other.call("SET", "wk:99999", "x") == "OK"
    assert w.call("MULTI") == "OK"
    assert w.call("PING") == "QUEUED"
    assert w.call("EXEC") is None  # a watched key changed
    assert w.call("WATCH", *keys[:10]) == "OK"
    assert w.call("MULTI") == "OK" and w.call("PING") == "QUEUED"
    assert w.call("EXEC") == ["PONG"]
    w.close()
    other.close()


@pytest.mark.parametrize("tag", ["", "{t}"])
def test_block_on_many_keys_is_linear(server, c, tag):
    """BLPOP on n keys checked each key against every earlier one, and with
    one slot's keys (hash tags) walked the slot's list per key: O(n^2)
    with the slot locks held (50k keys stalled everyone ~2 s); FLUSHDB
    then scanned the ready queue per key (50k: ~6 s)."""
    b = Resp(server.port, timeout=30)
    keys = [("%sbk:%d" % (tag, i)).encode() for i in range(50000)]
    b.s.sendall(enc(b"BLPOP", *(keys + keys[:100] + [b"0"])))
    other = Resp(server.port, timeout=30)
    deadline = time.time() + 10
    while b"blocked_clients:1" not in other.call("INFO", "clients"):
        assert time.time() < deadline
        time.sleep(0.01)
    _, took = timed(other.call, "PING")
    assert took < 2
    # FLUSHDB signals every blocked key of the db (each queued once).
    _, took = timed(other.call, "FLUSHDB")
    assert took < 2
    # Same key name in another db: not a waiter's key.
    other.call("SELECT", "1")
    assert other.call("LPUSH", keys[50], "no") == 1
    other.call("SELECT", "0")
    _, took = timed(other.call, "LPUSH", keys[50], "v")
    assert took < 3
    assert b.read() == [keys[50], b"v"]
    assert b"blocked_clients:0" in other.call("INFO", "clients")
    c.call("SELECT", "1")
    assert c.call("LLEN", keys[50]) == 1
    c.call("FLUSHDB")
    c.call("SELECT", "0")
    b.close()
    other.close()


# ----------------------------------------------- blocking vs CLIENT KILL
@pytest.mark.parametrize("kills", [True, False])
def test_blocking_vs_client_kill_stress(server, c, kills):
    """With kills: a kill may drop one served reply (as in Redis).  Without
    (CLIENT UNBLOCK and walk-aways on other keys only): nothing is lost."""
    port = server.port
    stop = time.time() + (1.5 if kills else 0.8)
    lock = threading.Lock()
    pushed, popped, errors = set(), [], []
    st = {"kills": 0, "abandons": 0, "ids": {}}

    def pusher(tag):
        r, i = None, 0
        while time.time() < stop:
            try:
                if r is None:
                    r = Resp(port, timeout=10)
                el = "%s:%d" % (tag, i)
                i += 1
                if i % 2:
                    n = r.call("LPUSH", "q", el)
                    assert isinstance(n, int), n
                else:
                    n = r.call("ZADD", "z", str(i), el)
                    assert n == 1, n
                with lock:
                    pushed.add(el.encode())
                time.sleep(0.0005)  # slower than the poppers: they block
            except (ConnectionError, OSError):
                r = None
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
                return

    def popper(tag):
        r, k = None, 0
        while time.time() < stop:
            try:
                if r is None:
                    r = Resp(port, timeout=10)
                    with lock:
                        st["ids"][tag] = r.call("CLIENT", "ID")
                k += 1
                choice = k % 5
                if choice == 0:
                    out = unblocked(r.call("BLPOP", "q", "nothere", "0.2"))
                    if out is not None:
                        with lock:
                            popped.append(out[1])
                elif choice == 1:
                    out = unblocked(r.call("BRPOP", "q", "0.2"))
                    if out is not None:
                        with lock:
                            popped.append(out[1])
                elif choice == 2:
                    out = unblocked(r.call("BLMOVE", "q", "moved", "LEFT", "RIGHT", "0.2"))
                    assert out is None or isinstance(out, bytes), out
                elif choice == 3:
                    out = unblocked(r.call("BZPOPMIN", "z", "0.2"))
                    if out is not None:
                        with lock:
                            popped.append(out[1])
                else:
                    # Walk away while blocked: close with the command pending.
                    r.send("BLPOP", "nothing", "0")
                    time.sleep(0.005)
                    r.close()
                    r = None
                    with lock:
                        st["abandons"] += 1
            except (ConnectionError, OSError):
                r = None
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
                return

    def streamer():
        r = None
        while time.time() < stop:
            try:
                if r is None:
                    r = Resp(port, timeout=10)
                    with lock:
                        st["ids"]["streamer"] = r.call("CLIENT", "ID")
                if random.random() < 0.5:
                    out = unblocked(r.call("XREAD", "BLOCK", "100", "STREAMS", "st", "$"))
                else:
                    out = unblocked(r.call("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "100", "STREAMS", "st", ">"))
                assert out is None or isinstance(out, list), out
                r.call("XADD", "st", "*", "f", "v")
            except (ConnectionError, OSError):
                r = None
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
                return

    def killer():
        r = Resp(port, timeout=10)
        k = 0
        while time.time() < stop:
            k += 1
            with lock:
                ids = list(st["ids"].values())
            if not ids:
                time.sleep(0.001)
                continue
            cid = random.choice(ids)
            try:
                if k % 4 == 0 or not kills:
                    out = r.call("CLIENT", "UNBLOCK", cid, "ERROR" if k % 8 else "TIMEOUT")
                    assert out in (0, 1), out
                    time.sleep(0.001)
                    continue
                if k % 4 == 1:
                    addr = [x["addr"] for x in clients(r) if x["id"] == str(cid)]
                    if not addr:
                        continue
                    out = r.call("CLIENT", "KILL", "ADDR", addr[0], "SKIPME", "yes")
                elif k % 16 == 2:
                    out = r.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
                elif k % 32 == 7:
                    out = r.call("CLIENT", "KILL", "USER", "default", "SKIPME", "yes")
                else:
                    out = r.call("CLIENT", "KILL", "ID", cid)
                assert isinstance(out, int), out
                with lock:
                    st["kills"] += out
                time.sleep(0.002)
            except (ConnectionError, OSError):
                r = Resp(port, timeout=10)
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
                return
        r.close()

    assert c.call("XGROUP", "CREATE", "st", "g", "$", "MKSTREAM") == "OK"
    threads = [threading.Thread(target=pusher, args=("a",)), threading.Thread(target=pusher, args=("b",)),
               threading.Thread(target=streamer), threading.Thread(target=killer)]
    threads += [threading.Thread(target=popper, args=("p%d" % i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    assert not errors, errors[:5]
    r = Resp(port, timeout=10)
    assert r.call("PING") == "PONG"
    remaining = set(r.call("LRANGE", "q", "0", "-1")) | set(r.call("LRANGE", "moved", "0", "-1"))
    remaining |= set(r.call("ZRANGE", "z", "0", "-1"))
    assert len(popped) == len(set(popped)), "an element was popped twice"
    assert not (set(popped) & remaining), "a popped element is still there"
    # Every acknowledged push was popped (reply seen), is still there, or
    # was served to a client killed before it read the reply (a kill or a
    # walk-away drops at most that one reply).
    lost = pushed - set(popped) - remaining
    print("pushed %d popped %d remaining %d lost %d kills %d abandons %d" % (
        len(pushed), len(popped), len(remaining), len(lost), st["kills"], st["abandons"]))
    assert len(lost) <= st["kills"], (len(lost), st)
    assert kills or not lost
    assert len(pushed) > 50
    # Nobody is left blocked or half-closed.
    deadline = time.time() + 5
    while True:
        info = r.call("INFO", "clients").decode()
        if "blocked_clients:0" in info:
            break
        assert time.time() < deadline, info
        time.sleep(0.05)
    r.close()


# ------------------------------------------------------ file descriptors
def _spawn_low_nofile(limit, threads, *args):
    port = free_port()
    d = "/tmp/hotkv-abuse-%d" % port
    os.makedirs(d, exist_ok=True)
    log = open(os.path.join(d, "server.log"), "w")

    def lower():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    p = subprocess.Popen([BIN, "--port", str(port), "--bind", "127.0.0.1", "--threads", str(threads), "--save", "",
                          "--dir", d] + [str(a) for a in args],
                         stdout=log, stderr=subprocess.STDOUT, preexec_fn=lower)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert p.poll() is None and time.time() < deadline, "server did not start"
            time.sleep(0.02)
    return p, port, log, d


def _cpu_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


@pytest.mark.parametrize("emfile", [False, True])
def test_low_fd_limit_maxclients_and_emfile(emfile):
    # One worker for the EMFILE case: with two, the spare descriptor one
    # gives up can go to the other's accept, and the connection then waits
    # (not spinning) until some client closes.
    p, port, log, d = _spawn_low_nofile(64, 1 if emfile else 2)
    try:
        a = Resp(port, timeout=10)
        assert a.call("PING") == "PONG"
        mc = int(a.call("CONFIG", "GET", "maxclients")[1])
        assert 1 <= mc <= 64 - 20, mc  # fitted to the descriptor limit
        if emfile:
            # A limit lowered under the running server: accept() itself
            # now fails (EMFILE) before maxclients is reached.
            assert a.call("CONFIG", "SET", "maxclients", "1000") == "OK"
            resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (36, 36))
        socks = []
        for _ in range(100):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=3))
        time.sleep(0.3)
        ok = refused = 0
        for s in socks:
            s.settimeout(2)
            try:
                s.sendall(b"PING\r\n")
                got = s.recv(100)
            except OSError:
                got = b""
            if got == b"+PONG\r\n":
                ok += 1
            elif got in (b"-ERR max number of clients reached\r\n", b""):
                refused += 1
            else:
                raise AssertionError(got)
        assert ok >= 1 and refused >= 1 and ok + refused == 100
        # Responsive, and not spinning on the pending connections.
        _, took = timed(a.call, "PING")
        assert took < 1
        t0 = _cpu_ticks(p.pid)
        time.sleep(0.5)
        assert _cpu_ticks(p.pid) - t0 < 25  # ticks of 10 ms: under half a core
        for s in socks:
            s.close()
        deadline = time.time() + 5
        while True:  # recovers when connections close
            b = Resp(port, timeout=5)
            try:
                if b.call("PING") == "PONG":
                    break
            except OSError:
                pass
            b.close()
            assert time.time() < deadline
            time.sleep(0.1)
        b.close()
        a.close()
    finally:
        p.terminate()
        rc = p.wait(20)
        log.close()
    assert rc == 0, "server exited %s, see %s" % (rc, d)
    text = open(os.path.join(d, "server.log")).read()
    assert "maxclients reduced" in text
    assert ("Accepting client connection: Too many open files" in text) == emfile


# ------------------------------------------------- output buffer limits
def test_output_buffer_limit_normal_pipeline_never_reads(server, c):
    c.call("SET", "big", "x" * 100000)
    c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0")
    try:
        victims = []
        for _ in range(4):  # spread over both workers
            s = socket.create_connection(("127.0.0.1", server.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(0.5)
            victims.append(s)
        req = b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 1000  # 100 MB of replies each
        for s in victims:
            try:
                s.sendall(req)
            except OSError:
                pass
        deadline = time.time() + 10
        while any(x.get("cmd") == "get" for x in clients(c)):
            assert time.time() < deadline, "a non-reading client outlived its output limit"
            time.sleep(0.05)
        for s in victims:
            s.close()
        assert c.call("PING") == "PONG"
    finally:
        c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")


# ----------------------------------------------------------- CLIENT args
def test_client_edge_arguments(server, c):
    err = lambda x: isinstance(x, tuple) and x[0] == "error"  # noqa: E731
    for args in (("KILL", "ID", "-1"), ("KILL", "ID", "0"), ("KILL", "ID", "99999999999999999999"),
                 ("KILL", "MAXAGE", "-5", "ID", "123456789"), ("KILL", "ID"), ("KILL", "TYPE", "bogus"),
                 ("KILL", "USER", "nobody"), ("KILL", "SKIPME", "maybe"), ("KILL", "ADDR", "x" * 100000),
                 ("NO-EVICT", "maybe"), ("NO-EVICT", "-1"), ("UNBLOCK", "-1"), ("UNBLOCK", "1" * 30),
                 ("UNBLOCK", "1", "sometimes"), ("REPLY", "bogus"), ("TRACKING", "maybe"),
                 ("TRACKING", "on", "REDIRECT", "-1"), ("TRACKING", "on", "PREFIX"),
                 ("LIST", "ID", "-3"), ("LIST", "ID", "abc"), ("LIST", "TYPE", "nope")):
        out = c.call("CLIENT", *args)
        assert err(out) or isinstance(out, int), (args, out)
    assert c.call("CLIENT", "KILL", "MAXAGE", str(2 ** 62), "ID", "123456789") == 0
    # A subscribed client is of TYPE pubsub, not normal (as in Redis).
    sub = Resp(server.port)
    sub.call("SUBSCRIBE", "x")
    sid = str(sub.s.getsockname()[1])
    assert [x for x in client_list_entries(c.call("CLIENT", "LIST", "TYPE", "pubsub")) if x["addr"].endswith(":" + sid)]
    assert not [x for x in client_list_entries(c.call("CLIENT", "LIST", "TYPE", "normal")) if x["addr"].endswith(":" + sid)]
    assert c.call("CLIENT", "LIST", "TYPE", "master") == b""
    assert c.call("CLIENT", "KILL", "TYPE", "master") == 0
    assert c.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
    sub.close()
    bad = "ERR Client names cannot contain spaces, newlines or special characters."
    for name in ("has space", "nl\n", "\x00", "\x7f", "caf\xe9"):
        assert c.call("CLIENT", "SETNAME", name) == ("error", bad)
    huge = "n" * 1000000
    assert c.call("CLIENT", "SETNAME", huge) == "OK"
    assert c.call("CLIENT", "GETNAME") == huge.encode()
    # CLIENT LIST / INFO show a huge name in full, each line ends in \n.
    text = c.call("CLIENT", "LIST")
    line = [x for x in text.split(b"\n") if b"name=nnn" in x][0]
    assert b"name=" + huge.encode() + b" " in line
    info = c.call("CLIENT", "INFO")
    assert info.endswith(b"\n") and huge.encode() in info
    assert c.call("CLIENT", "SETNAME", "") == "OK"
    # Many ids: linear, not ids x clients.
    ids = [str(i) for i in range(1, 200001)]
    c.s.sendall(enc("CLIENT", "LIST", "ID", *ids))
    out, took = timed(c.read)
    assert isinstance(out, bytes) and took < 5
    # CLIENT REPLY OFF then a flood: nothing comes back, no growth, ON again.
    c.send("CLIENT", "REPLY", "OFF")
    for _ in range(1000):
        c.send("GET", "nothing")
    assert c.call("CLIENT", "REPLY", "ON") == "OK"
    assert c.call("PING") == "PONG"
    # Tracking with a redirect to a client that goes away, then many keys.
    t = Resp(server.port)
    tid = t.call("CLIENT", "ID")
    prefixes = []
    for i in range(1000):
        prefixes += ["PREFIX", "p%d:" % i]
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid, "BCAST", *prefixes) == "OK"
    t.close()
    for i in range(200):
        c.call("SET", "p%d:k" % i, "v")
    assert c.call("CLIENT", "TRACKING", "off") == "OK"
    assert c.call("PING") == "PONG"
