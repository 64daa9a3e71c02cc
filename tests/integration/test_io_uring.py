"""Socket I/O with and without io_uring (io-uring yes|no, HotKV's own
option).  With yes, a worker submits one loop turn's reads, and then its
replies, in one io_uring_enter each (net/worker.c, "io_uring batching");
with no, or where the kernel refuses io_uring, it uses read(2)/write(2).
Each test runs against both: pipelines, partial writes of big replies to a
slow reader, big requests arriving in pieces, many clients at once,
clients closed or killed mid-turn, limits, pub/sub and blocking pops."""
import os
import socket
import threading
import time

import pytest

from helpers import (IS_REDIS, RawConn, Resp, Server, encode_command,
                     parse_info, read_until_close, wait_until)

pytestmark = pytest.mark.skipif(IS_REDIS, reason="io-uring is HotKV's own option")


@pytest.fixture(scope="module", params=["yes", "no"])
def srv(request):
    s = Server("--io-uring", request.param, threads=2)
    s.mode = request.param
    yield s
    assert s.stop() == 0


def info(port, section="server"):
    c = Resp(port)
    try:
        return parse_info(c.call("INFO", section))[None]
    finally:
        c.close()


def log_text(s):
    with open(os.path.join(s.dir, "server.log")) as f:
        return f.read()


def test_backend_reported(srv):
    c = Resp(srv.port)
    assert c.call("CONFIG", "GET", "io-uring") == [b"io-uring", srv.mode.encode()]
    # Immutable: another value is refused; the value it has is a no-op
    # (HotKV's own parameters, config.c SAME_OK).
    other = "yes" if srv.mode == "no" else "no"
    assert c.call("CONFIG", "SET", "io-uring", other)[0] == "error"
    assert c.call("CONFIG", "SET", "io-uring", srv.mode) == "OK"
    c.close()
    def workers():
        return int(info(srv.port)["io_uring_workers"])
    if srv.mode == "no":
        assert workers() == 0
    elif "io_uring unavailable" in log_text(srv):
        # A kernel or container that refuses io_uring: the fallback runs.
        assert workers() == 0
    else:
        # Each worker sets its ring up as its thread starts (the other
        # may still be starting when this client is served).
        assert wait_until(lambda: workers() == 2), workers()


def test_long_pipeline_one_write(srv):
    n = 20000
    payload = b"".join(encode_command("SET", "p:%d" % i, "v%d" % i) for i in range(n))
    payload += b"".join(encode_command("GET", "p:%d" % i) for i in range(n))
    want = b"+OK\r\n" * n + b"".join(b"$%d\r\nv%d\r\n" % (len(b"v%d" % i), i) for i in range(n))
    c = RawConn(srv.port, timeout=20)
    c.send(payload)
    assert c.recv_n(len(want), timeout=20) == want
    c.close()


def test_big_replies_to_a_slow_reader(srv):
    """Replies far bigger than the socket buffer: the send is partial, the
    rest waits for EPOLLOUT, and every byte arrives in order."""
    big = os.urandom(3 * 1024 * 1024)
    r = srv.client()
    r.set("big", big)
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    s.sendall(encode_command("GET", "big") * 3 + encode_command("PING"))
    head = b"$%d\r\n" % len(big)
    want = (head + big + b"\r\n") * 3 + b"+PONG\r\n"
    got = bytearray()
    s.settimeout(20)
    while len(got) < len(want):
        chunk = s.recv(65536)
        assert chunk, "closed after %d of %d bytes" % (len(got), len(want))
        got += chunk
        if len(got) < 512 * 1024:
            time.sleep(0.002)  # slow at first: the server's socket fills
    assert bytes(got) == want
    s.close()
    # Other clients were served meanwhile and still are.
    assert r.ping()


def test_big_request_in_pieces(srv):
    value = os.urandom(2 * 1024 * 1024 + 17)
    req = encode_command("SET", "piece", value)
    c = RawConn(srv.port, timeout=10)
    step = 200 * 1024
    for off in range(0, len(req), step):
        c.send(req[off:off + step])
        time.sleep(0.005)
    assert c.recv_n(5) == b"+OK\r\n"
    c.close()
    assert srv.client().get("piece") == value


def test_many_clients_at_once(srv):
    r = srv.client()
    r.delete("ctr")
    clients, rounds = 50, 100
    errs = []

    def work():
        c = Resp(srv.port, timeout=20)
        try:
            for _ in range(rounds):
                reply = c.call("INCR", "ctr")
                if not isinstance(reply, int):
                    errs.append(reply)
        finally:
            c.close()

    ts = [threading.Thread(target=work) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs, errs[:3]
    assert int(r.get("ctr")) == clients * rounds


def test_clients_vanish_mid_pipeline(srv):
    """Clients that send a pipeline and reset the connection without
    reading: the server drops them and serves the others."""
    before = int(info(srv.port, "clients")["connected_clients"])
    payload = b"".join(encode_command("SET", "gone:%d" % i, "x" * 100) for i in range(2000))
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(payload)
        s.close()  # linger 0: RST
    r = Resp(srv.port)
    assert r.call("PING") == "PONG"
    r.close()
    # info() is a connection of its own, counted in before too.  At most
    # before: clients of earlier tests may still be closing when before
    # was read (so the count can end below it), but none of these 20 may
    # stay.
    assert wait_until(lambda: int(info(srv.port, "clients")["connected_clients"]) <= before)


def test_client_killed_by_another(srv):
    a, b = Resp(srv.port), Resp(srv.port)
    bid = b.call("CLIENT", "ID")
    # b pipelines behind a blocking pop so it has input and a pending turn.
    b.s.sendall(encode_command("BLPOP", "nolist", "0") + encode_command("PING"))
    time.sleep(0.1)
    assert a.call("CLIENT", "KILL", "ID", str(bid)) == 1
    assert read_until_close(b.s) == (b"", True)
    assert a.call("PING") == "PONG"
    a.close()


def test_protocol_error_closes(srv):
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"*1\r\n$4\r\nPING\r\n*x\r\n")
    data, closed = read_until_close(s)
    assert closed
    assert data.startswith(b"+PONG\r\n-ERR Protocol error"), data


def test_query_buffer_limit(srv):
    c = Resp(srv.port)
    assert c.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
    try:
        s = socket.create_connection(("127.0.0.1", srv.port))
        # A 5 MB argument arriving in pieces: closed once the buffer passes
        # 1 MB, with no reply.
        s.settimeout(10)
        try:
            s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5000000\r\n")
            for _ in range(40):
                s.sendall(b"x" * 64 * 1024)
        except OSError:
            pass
        assert read_until_close(s, timeout=10) == (b"", True)
    finally:
        assert c.call("CONFIG", "SET", "client-query-buffer-limit", "1gb") == "OK"
        c.close()


def test_pubsub_and_blocking_across_clients(srv):
    sub = Resp(srv.port)
    sub.call("SUBSCRIBE", "ch")
    waiter = Resp(srv.port)
    waiter.s.sendall(encode_command("BLPOP", "q", "5"))
    time.sleep(0.1)
    pub = Resp(srv.port)
    for i in range(50):
        assert pub.call("PUBLISH", "ch", "m%d" % i) == 1
    assert pub.call("RPUSH", "q", "job") == 1
    for i in range(50):
        assert sub.read() == [b"message", b"ch", b"m%d" % i]
    assert waiter.read() == [b"q", b"job"]
    for c in (sub, waiter, pub):
        c.close()


def test_busy_script_serves_input_read_in_the_same_turn(srv):
    """A turn reads every ready client before it runs any: a client whose
    command was read in the same turn as a long script's EVAL must still
    get BUSY while the script runs (its bytes are no longer in the socket,
    so only the turn's own list can find them)."""
    s = Server("--io-uring", srv.mode, "--busy-reply-threshold", "100", threads=1)
    try:
        d, a, c = Resp(s.port), Resp(s.port), Resp(s.port)
        # d holds the only worker for 300 ms; meanwhile a's EVAL and then
        # c's PING arrive, and the next turn reads both.
        d.send("DEBUG", "SLEEP", "0.3")
        time.sleep(0.05)
        a.send("EVAL", "local i = 0 while true do i = i + 1 end", "0")
        time.sleep(0.05)
        c.send("PING")
        t0 = time.time()
        assert d.read() == "OK"
        reply = c.read()
        assert reply[0] == "error" and reply[1].startswith("BUSY"), reply
        assert time.time() - t0 < 3
        assert c.call("SCRIPT", "KILL") == "OK"
        reply = a.read()
        assert reply[0] == "error" and "Script killed" in reply[1], reply
        assert c.call("PING") == "PONG"
        for x in (d, a, c):
            x.close()
    finally:
        assert s.stop() == 0


def test_reads_and_writes_processed(srv):
    """INFO stats total_reads_processed / total_writes_processed count the
    socket reads and writes, through the ring or not."""
    c = Resp(srv.port)
    st = info(srv.port, "stats")
    r0, w0 = int(st["total_reads_processed"]), int(st["total_writes_processed"])
    for _ in range(30):
        assert c.call("PING") == "PONG"
    st = info(srv.port, "stats")
    assert int(st["total_reads_processed"]) - r0 >= 30
    assert int(st["total_writes_processed"]) - w0 >= 30
    assert st["io_threaded_reads_processed"] == "0"
    c.close()


def test_ring_stays_on_when_a_turn_mixes_reads_and_waiting_writes(srv):
    """A loop turn whose events are not all ring operations (a client that
    only waits for EPOLLOUT next to clients with input) submits just the
    ones it queued.  It used to wait for one submission per event, so the
    second io_uring_submit found nothing, was taken for a failure, and the
    worker fell back to read(2)/write(2) for good."""
    big = os.urandom(3 * 1024 * 1024)
    r = srv.client()
    r.set("mix:big", big)
    done = threading.Event()
    errors = []

    def slow_reader():
        try:
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            s.settimeout(10)
            s.sendall(encode_command("GET", "mix:big") * 2)
            want, got = 2 * (len(big) + len(b"$%d\r\n\r\n" % len(big))), 0
            while got < want:
                chunk = s.recv(65536)
                assert chunk
                got += len(chunk)
                if got < 1024 * 1024:
                    time.sleep(0.002)  # slow at first: the server waits for EPOLLOUT
            s.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def pinger():
        try:
            c = Resp(srv.port)
            while not done.is_set():
                assert c.call("PING") == "PONG"
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    readers = [threading.Thread(target=slow_reader) for _ in range(2)]
    pingers = [threading.Thread(target=pinger) for _ in range(4)]
    for t in readers + pingers:
        t.start()
    for t in readers:
        t.join()
    done.set()
    for t in pingers:
        t.join()
    assert not errors, errors
    assert "submit failed" not in log_text(srv)
    if srv.mode == "yes" and "io_uring unavailable" not in log_text(srv):
        assert int(info(srv.port)["io_uring_workers"]) == 2
