"""Resource limits: maxclients, idle timeout, query buffer limit,
proto-max-bulk-len, output buffer limit for normal clients, protected mode.
Expectations are Redis 7.x behaviour."""
import time

import pytest

from helpers import (RawConn, Resp, Server, encode_command, parse_info,
                     read_until_close, send_expect_close, wait_until)


def info_fields(c, section):
    return parse_info(c.call("INFO", section))[None]


def connected(port):
    """A client admitted by the server.  Retried on the maxclients error
    for a moment: the connection Server() opened to see that the server was
    up may still sit unaccepted in another worker's listen backlog (seen
    under TSan); accepting it counts it, its close then uncounts it."""
    deadline = time.time() + 5
    while True:
        c = Resp(port)
        reply = c.call("PING")
        if reply == "PONG":
            return c
        c.close()
        assert reply == ("error", "ERR max number of clients reached") and time.time() < deadline, reply
        time.sleep(0.05)


def first_client(server):
    """The first client of a fresh server, once the server has also dropped
    the connection Server() used to probe that it was up (it counts
    against maxclients until then)."""
    deadline = time.time() + 5
    while True:
        c = Resp(server.port)
        reply = c.call("PING")
        if reply == "PONG":
            break
        c.close()
        assert time.time() < deadline, reply
        time.sleep(0.05)
    # The probe may still wait in another worker's accept queue (seen
    # under TSan): accepted after the test's own clients, it would be
    # refused and counted then.  Every connection the server has taken in
    # shows in one of these two counters; the probe and c make two.
    def probe_gone():
        st = info_fields(c, "stats")
        taken = int(st["total_connections_received"]) + int(st["rejected_connections"])
        return taken >= 2 and info_fields(c, "clients")["connected_clients"] == "1"
    assert wait_until(probe_gone)
    return c


@pytest.fixture
def fresh_server():
    s = Server()
    yield s
    assert s.stop() == 0


# ---------------------------------------------------------------- maxclients

def test_maxclients_rejects_extra_connection():
    s = Server("--maxclients", "2")
    try:
        a = first_client(s)
        b = connected(s.port)
        rejected = int(info_fields(a, "stats")["rejected_connections"])
        out, closed = send_expect_close(s.port, b"PING\r\n")
        assert out == b"-ERR max number of clients reached\r\n"
        assert closed
        # The admitted clients keep working.
        assert a.call("PING") == "PONG"
        assert b.call("PING") == "PONG"
        assert int(info_fields(a, "stats")["rejected_connections"]) == rejected + 1
        assert info_fields(a, "clients")["maxclients"] == "2"
        a.close()
        b.close()
    finally:
        assert s.stop() == 0


def test_maxclients_rejection_sent_without_request():
    s = Server("--maxclients", "1")
    try:
        a = first_client(s)
        out, closed = send_expect_close(s.port, b"")
        assert out == b"-ERR max number of clients reached\r\n"
        assert closed
        a.close()
    finally:
        assert s.stop() == 0


def test_maxclients_slot_freed_after_disconnect():
    s = Server("--maxclients", "1")
    try:
        a = first_client(s)
        a.close()
        # Once the server has noticed the close, a new client fits.
        def fits():
            out, _ = send_expect_close(s.port, b"PING\r\nQUIT\r\n", timeout=1)
            return out == b"+PONG\r\n+OK\r\n"
        assert wait_until(fits, timeout=5, interval=0.05)
    finally:
        assert s.stop() == 0


def test_config_set_maxclients_applies_to_new_connections(fresh_server):
    a = first_client(fresh_server)
    b = connected(fresh_server.port)
    assert a.call("CONFIG", "SET", "maxclients", "2") == "OK"
    out, closed = send_expect_close(fresh_server.port, b"PING\r\n")
    assert out == b"-ERR max number of clients reached\r\n"
    assert closed
    assert a.call("CONFIG", "SET", "maxclients", "10000") == "OK"
    c = connected(fresh_server.port)
    for x in (a, b, c):
        x.close()


# ------------------------------------------------------------------- timeout

def test_idle_client_closed_after_timeout():
    s = Server("--timeout", "1")
    try:
        idle = connected(s.port)
        busy = connected(s.port)
        start = time.time()
        # Keep "busy" active while "idle" says nothing.
        closed_at = None
        while time.time() - start < 4.5:
            assert busy.call("PING") == "PONG"
            data, closed = read_until_close(idle.s, 0.25)
            assert data == b""
            if closed:
                closed_at = time.time() - start
                break
        assert closed_at is not None, "idle client was not closed"
        assert closed_at >= 0.9
        assert busy.call("PING") == "PONG"
        busy.close()
    finally:
        assert s.stop() == 0


def test_timeout_zero_never_closes(fresh_server):
    c = connected(fresh_server.port)
    assert read_until_close(c.s, 1.5) == (b"", False)
    assert c.call("PING") == "PONG"
    c.close()


def test_config_set_timeout_applies(fresh_server):
    admin = connected(fresh_server.port)
    assert admin.call("CONFIG", "SET", "timeout", "1") == "OK"
    idle = connected(fresh_server.port)
    start = time.time()
    while time.time() - start < 4.5:
        assert admin.call("PING") == "PONG"
        _, closed = read_until_close(idle.s, 0.25)
        if closed:
            break
    else:
        pytest.fail("idle client was not closed after CONFIG SET timeout 1")
    assert admin.call("CONFIG", "SET", "timeout", "0") == "OK"
    admin.close()


# ------------------------------------------------- client-query-buffer-limit

def test_query_buffer_limit_closes_huge_partial_command(fresh_server):
    admin = connected(fresh_server.port)
    assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
    c = RawConn(fresh_server.port)
    try:
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000000\r\n")
        for _ in range(40):          # 2.5 MB of a 10 MB value, never finished
            c.send(b"x" * 65536)
    except (BrokenPipeError, ConnectionResetError):
        pass
    data, closed = read_until_close(c.s, 5)
    assert closed
    assert data == b""
    # The server is fine and the partial command was not executed.
    assert admin.call("PING") == "PONG"
    assert admin.call("EXISTS", "k") == 0
    admin.close()


def test_query_buffer_limit_minimum(fresh_server):
    c = connected(fresh_server.port)
    assert c.call("CONFIG", "SET", "client-query-buffer-limit", "1000") == (
        "error", "ERR CONFIG SET failed (possibly related to argument "
                 "'client-query-buffer-limit') - argument must be between 1048576 and "
                 "9223372036854775807 inclusive")
    c.close()


def test_query_buffer_under_limit_is_fine(fresh_server):
    admin = connected(fresh_server.port)
    assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
    c = Resp(fresh_server.port)
    assert c.call("SET", "k", b"v" * 500000) == "OK"
    assert c.call("STRLEN", "k") == 500000
    c.close()
    admin.close()


# -------------------------------------------------------- proto-max-bulk-len

def test_proto_max_bulk_len_rejects_larger_bulk(fresh_server):
    admin = connected(fresh_server.port)
    assert admin.call("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
    assert admin.call("CONFIG", "GET", "proto-max-bulk-len") == [b"proto-max-bulk-len", b"1048576"]
    out, closed = send_expect_close(fresh_server.port,
                                    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
    assert out == b"-ERR Protocol error: invalid bulk length\r\n"
    assert closed
    assert admin.call("PING") == "PONG"
    admin.close()


def test_proto_max_bulk_len_allows_bulk_at_limit(fresh_server):
    admin = connected(fresh_server.port)
    assert admin.call("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
    c = RawConn(fresh_server.port)
    assert c.request(encode_command("SET", "k", b"z" * 1048576), 5) == b"+OK\r\n"
    c.close()
    assert admin.call("STRLEN", "k") == 1048576
    admin.close()


def test_proto_max_bulk_len_minimum(fresh_server):
    c = connected(fresh_server.port)
    assert c.call("CONFIG", "SET", "proto-max-bulk-len", "1000") == (
        "error", "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') "
                 "- argument must be between 1048576 and 4294967231 inclusive")  # entry.h: ENTRY_MAX_LEN
    c.close()


# ------------------------------------------------ client-output-buffer-limit

def test_output_buffer_limit_config_roundtrip(fresh_server):
    c = connected(fresh_server.port)
    assert c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 1mb 0") == "OK"
    (name, value) = c.call("CONFIG", "GET", "client-output-buffer-limit")
    assert name == b"client-output-buffer-limit"
    assert value.startswith(b"normal 1048576 1048576 0 ")
    c.close()


def test_output_buffer_limit_bad_value(fresh_server):
    c = connected(fresh_server.port)
    assert c.call("CONFIG", "SET", "client-output-buffer-limit", "foo") == (
        "error", "ERR CONFIG SET failed (possibly related to argument "
                 "'client-output-buffer-limit') - Wrong number of arguments in buffer "
                 "limit configuration.")
    c.close()


def test_output_buffer_limit_disconnects_slow_reader(fresh_server):
    admin = first_client(fresh_server)
    assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 1mb 0") == "OK"
    value = b"v" * 100000
    assert admin.call("SET", "big", value) == "OK"
    base_mem = int(info_fields(admin, "memory")["used_memory"])
    base_clients = int(info_fields(admin, "clients")["connected_clients"])

    n = 1000                        # 100 MB of replies if it were all kept
    reader = RawConn(fresh_server.port)
    reader.send(encode_command("GET", "big") * n)
    time.sleep(0.5)                 # do not read: let the output pile up
    peak_mem = int(info_fields(admin, "memory")["used_memory"])
    data, closed = read_until_close(reader.s, 10)
    assert closed, "slow reader was not disconnected"
    assert len(data) < n * (len(value) + 12)
    reader.close()

    # Server stays healthy, forgets the client, and did not buffer it all.
    assert admin.call("PING") == "PONG"
    assert admin.call("STRLEN", "big") == len(value)
    assert wait_until(lambda: int(info_fields(admin, "clients")["connected_clients"])
                      == base_clients)
    assert peak_mem < base_mem + 20 * 1024 * 1024
    assert int(info_fields(admin, "memory")["used_memory"]) < base_mem + 5 * 1024 * 1024
    admin.close()


def test_output_buffer_unlimited_by_default_for_normal_clients(fresh_server):
    c = Resp(fresh_server.port, timeout=20)
    value = b"w" * 100000
    assert c.call("SET", "big", value) == "OK"
    for _ in range(50):
        c.send("GET", "big")
    time.sleep(0.3)
    for _ in range(50):
        assert c.read() == value
    c.close()


# ------------------------------------------------------------ protected mode

def test_protected_mode_allows_loopback():
    s = Server("--protected-mode", "yes")
    try:
        c = Resp(s.port)
        assert c.call("PING") == "PONG"
        assert c.call("CONFIG", "GET", "protected-mode") == [b"protected-mode", b"yes"]
        assert c.call("SET", "k", "v") == "OK"
        c.close()
    finally:
        assert s.stop() == 0


def client_qbuf(ctl, name):
    """qbuf + qbuf-free of the client called name: its query buffer size."""
    for line in ctl.call("CLIENT", "LIST").decode().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if f.get("name") == name:
            return int(f["qbuf"]) + int(f["qbuf-free"])
    raise AssertionError("no client " + name)


def test_query_buffer_follows_use(server):
    """As Redis: a connection holds a read-sized query buffer (16-32 KB),
    gives it back after 2 s idle, and a buffer grown for a big argument is
    cut back once the following commands are small."""
    ctl = Resp(server.port)
    c = Resp(server.port)
    assert c.call("CLIENT", "SETNAME", "qb") == "OK"
    assert 16384 <= client_qbuf(ctl, "qb") < 32768
    assert wait_until(lambda: client_qbuf(ctl, "qb") == 0, timeout=6)
    # Still serves: a buffer comes back with the next command.
    assert c.call("SET", "x", "A" * 400000) == "OK"
    grown = client_qbuf(ctl, "qb")
    assert grown > 32768
    def shrunk():
        assert c.call("SET", "x", "A" * 100) == "OK"
        return 0 < client_qbuf(ctl, "qb") < grown
    assert wait_until(shrunk, timeout=3)
    assert c.call("GET", "x") == b"A" * 100
    c.close()
    ctl.close()


def test_query_buffer_of_a_stalled_big_argument_is_trimmed(server):
    """As Redis 7.2: the header of a 1 MB argument sizes the buffer for it;
    when the rest does not come for over 2 s, the buffer keeps only what
    was sent, and the command still completes when the bytes arrive."""
    ctl = Resp(server.port)
    c = Resp(server.port)
    assert c.call("CLIENT", "SETNAME", "fat") == "OK"
    c.s.sendall(b"*3\r\n$3\r\nset\r\n$3\r\nfat\r\n$1000000\r\n" + b"B" * 1000)
    assert wait_until(lambda: client_qbuf(ctl, "fat") >= 1000000, timeout=2)
    assert wait_until(lambda: client_qbuf(ctl, "fat") < 10000, timeout=6)
    c.s.sendall(b"B" * 999000 + b"\r\n")
    assert c.read() == "OK"
    assert ctl.call("STRLEN", "fat") == 1000000
    c.close()
    ctl.close()
