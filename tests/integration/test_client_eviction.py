"""Client eviction (maxmemory-clients), as Redis 7.0 does it: when the memory
held by all connections (query buffer, output buffer, MULTI queue, WATCHed
keys, subscriptions, ...) reaches the limit, the biggest clients are
disconnected until the total is below it; CLIENT NO-EVICT ON exempts a
client (it still counts); the limit is bytes or a percentage of maxmemory
(no limit while maxmemory is 0), never under 128 KB; INFO evicted_clients
counts the evictions.

HotKV runs with 4 worker threads here, so the clients of a test sit on
different workers.  HOTKV_SERVER=redis runs the same tests against
redis-server.

Every test uses raw connections: a control connection with NO-EVICT on
(so the eviction rule never picks it) and clients made big on purpose with
an unfinished bulk argument (the query buffer holds it), unread replies or
unread pub/sub messages."""
import socket
import time

import pytest

from helpers import Resp, Server, parse_info, wait_until, client_list_entries, encode_command

KB = 1024
MB = 1024 * 1024


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4)
    yield s
    assert s.stop() == 0


@pytest.fixture
def ctl(server):
    """The control connection: named, never evicted.  The limit is lifted
    again after the test, and every other connection is dropped."""
    c = Resp(server.port)
    c.call("CONFIG", "SET", "maxmemory-clients", "0")
    c.call("CONFIG", "SET", "maxmemory", "0")
    c.call("CLIENT", "SETNAME", "control")
    assert c.call("CLIENT", "NO-EVICT", "ON") == "OK"
    c.call("FLUSHALL")
    c.call("CONFIG", "RESETSTAT")
    yield c
    c.call("CONFIG", "SET", "maxmemory-clients", "0")
    c.call("CONFIG", "SET", "maxmemory", "0")
    c.call("CLIENT", "KILL", "SKIPME", "yes")
    c.close()


def cfg_get(ctl, pattern):
    return [x.decode() for x in ctl.call("CONFIG", "GET", pattern)]


def clients(ctl):
    """name -> CLIENT LIST fields (named connections only)."""
    out = {}
    for e in client_list_entries(ctl.call("CLIENT", "LIST")):
        if e.get("name"):
            out[e["name"]] = e
    return out


def exists(ctl, name):
    return name in clients(ctl)


def evicted_clients(ctl):
    return int(parse_info(ctl.call("INFO", "stats"))[None]["evicted_clients"])


def named(server, name):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    s.sendall(encode_command("CLIENT", "SETNAME", name))
    assert s.recv(100) == b"+OK\r\n"
    return s


def fill_qbuf(s, n):
    """Send a command whose one bulk argument is n bytes, without its final
    CRLF: the server holds it in the query buffer.  Returns False if the
    server closed the connection meanwhile."""
    try:
        s.sendall(b"*1\r\n$%d\r\n" % n + b"v" * n)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def closed(s, timeout=3.0):
    """True once the server has closed s (whatever it sent before)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        s.settimeout(max(0.01, deadline - time.time()))
        try:
            if not s.recv(65536):
                return True
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def tot_mem(ctl, name):
    return int(clients(ctl)[name]["tot-mem"])


# --------------------------------------------------------------- config ---
def test_config_default_and_forms(ctl):
    assert cfg_get(ctl, "maxmemory-clients") == ["maxmemory-clients", "0"]
    for value, shown in [("1mb", "1048576"), ("1M", "1000000"), ("2kb", "2048"), ("1gb", "1073741824"),
                         ("12345", "12345"), ("10%", "10%"), ("100%", "100%"), ("0%", "0"), ("0", "0"),
                         ("1", "1"), ("5B", "5")]:
        assert ctl.call("CONFIG", "SET", "maxmemory-clients", value) == "OK", value
        assert cfg_get(ctl, "maxmemory-clients") == ["maxmemory-clients", shown], value
    assert "maxmemory-clients" in cfg_get(ctl, "maxmemory*")[::2]


def test_config_errors(ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "7%")
    bad_value = "argument must be a memory or percent value"
    for value, msg in [("abc", bad_value), ("-1", bad_value), ("-1%", bad_value), ("1.5", bad_value),
                       ("1.5%", bad_value), ("%", bad_value), ("5%%", bad_value), ("+5%", bad_value),
                       ("05%", bad_value), ("1kb%", bad_value), ("5 %", bad_value), ("10x", bad_value),
                       ("101%", "percentage argument must be less or equal to 100"),
                       ("1000%", "percentage argument must be less or equal to 100")]:
        r = ctl.call("CONFIG", "SET", "maxmemory-clients", value)
        assert r == ("error", "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - " + msg), value
    # Nothing changed, and CONFIG SET stays all-or-nothing with it.
    assert cfg_get(ctl, "maxmemory-clients") == ["maxmemory-clients", "7%"]
    r = ctl.call("CONFIG", "SET", "maxmemory-clients", "1mb", "maxmemory-samples", "0")
    assert r[0] == "error"
    r = ctl.call("CONFIG", "SET", "maxmemory-samples", "7", "maxmemory-clients", "bad")
    assert r[0] == "error"
    assert cfg_get(ctl, "maxmemory-clients") == ["maxmemory-clients", "7%"]
    assert cfg_get(ctl, "maxmemory-samples") == ["maxmemory-samples", "5"]


# ------------------------------------------------------------- eviction ---
def test_query_buffer_over_limit_is_evicted(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "3mb")
    s = named(server, "big")
    fill_qbuf(s, 4 * MB)
    assert closed(s)
    assert wait_until(lambda: not exists(ctl, "big"))
    assert evicted_clients(ctl) == 1
    assert ctl.call("PING") == "PONG"


def test_query_buffer_under_limit_stays(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "3mb")
    s = named(server, "half")
    fill_qbuf(s, 1 * MB)
    assert wait_until(lambda: int(clients(ctl)["half"]["qbuf"]) >= 1 * MB)
    m = tot_mem(ctl, "half")
    assert 1 * MB <= m < 3 * MB
    assert not closed(s, 0.3)
    assert evicted_clients(ctl) == 0
    s.close()


def test_large_argv_is_evicted(server, ctl):
    """A complete command bigger than the limit (Redis: large argv)."""
    ctl.call("CONFIG", "SET", "maxmemory-clients", "3mb")
    s = named(server, "argv")
    try:
        s.sendall(encode_command("MSET", "k", "v", "k2", "x" * (4 * MB)))
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert closed(s)
    assert evicted_clients(ctl) == 1


def test_multi_queue_is_evicted(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "3mb")
    c = Resp(server.port)
    c.call("CLIENT", "SETNAME", "multi")
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "k", "v" * (700 * KB)) == "QUEUED"
    assert c.call("SET", "k", "v" * (700 * KB)) == "QUEUED"
    assert exists(ctl, "multi")
    with pytest.raises((ConnectionError, OSError)):
        for _ in range(5):
            assert c.call("SET", "k", "v" * (700 * KB)) == "QUEUED"
    assert not exists(ctl, "multi")
    assert evicted_clients(ctl) == 1
    c.close()


def test_watched_keys_are_evicted(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "200000")
    c = Resp(server.port)
    c.call("CLIENT", "SETNAME", "watcher")
    with pytest.raises((ConnectionError, OSError)):
        for i in range(0, 200000, 100):
            assert c.call("WATCH", *["key:%d" % j for j in range(i, i + 100)]) == "OK"
    assert not exists(ctl, "watcher")
    assert evicted_clients(ctl) == 1
    c.close()


def test_unread_replies_are_evicted(server, ctl):
    """A client that pipelines big GETs and never reads its replies."""
    ctl.call("SET", "k", "v" * (300 * KB))
    ctl.call("CONFIG", "SET", "maxmemory-clients", "2mb")
    s = named(server, "reader")
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    gone = False
    for _ in range(200):
        try:
            s.sendall(encode_command("GET", "k") * 5)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            gone = True
            break
        cl = clients(ctl)
        if "reader" not in cl:
            gone = True
            break
        assert int(cl["reader"]["tot-mem"]) < 2 * MB + 400 * KB
    assert gone
    assert wait_until(lambda: not exists(ctl, "reader"))
    assert evicted_clients(ctl) == 1
    s.close()


def test_slow_subscriber_is_evicted(server, ctl):
    """A subscriber that stops reading; the publisher is left alone."""
    ctl.call("CONFIG", "SET", "maxmemory-clients", "2mb")
    sub = Resp(server.port)
    sub.call("CLIENT", "SETNAME", "sub")
    sub.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    assert sub.call("SUBSCRIBE", "news")[0] == b"subscribe"
    pub = Resp(server.port)
    pub.call("CLIENT", "SETNAME", "pub")
    msg = "m" * (100 * KB)
    receivers = None
    for _ in range(400):
        receivers = pub.call("PUBLISH", "news", msg)
        if receivers == 0:
            break
    assert receivers == 0
    assert not exists(ctl, "sub")
    assert exists(ctl, "pub")
    assert evicted_clients(ctl) == 1
    pub.close()
    sub.close()


def test_percentage_of_maxmemory(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory", "100mb")
    ctl.call("CONFIG", "SET", "maxmemory-clients", "4%")  # 4 MB (4194304 bytes)
    s = named(server, "small")
    fill_qbuf(s, 1 * MB)
    assert wait_until(lambda: exists(ctl, "small") and int(clients(ctl)["small"]["qbuf"]) >= 1 * MB)
    assert not closed(s, 0.3)
    b = named(server, "big")
    fill_qbuf(b, 5 * MB)
    assert closed(b)
    assert not exists(ctl, "big")
    assert exists(ctl, "small")
    assert evicted_clients(ctl) == 1
    s.close()


def test_percentage_without_maxmemory_is_no_limit(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "1%")
    s = named(server, "big")
    fill_qbuf(s, 3 * MB)
    assert wait_until(lambda: int(clients(ctl)["big"]["qbuf"]) >= 3 * MB)
    assert not closed(s, 0.3)
    assert evicted_clients(ctl) == 0
    # A maxmemory now gives the percentage a meaning: the next check evicts.
    ctl.call("CONFIG", "SET", "maxmemory", "100mb")
    ctl.call("PING")
    assert closed(s)
    assert evicted_clients(ctl) == 1


def test_tiny_limit_is_raised_to_128kb(server, ctl):
    """maxmemory-clients 1 means 128 KB: a few idle clients survive it."""
    ctl.call("CONFIG", "SET", "maxmemory-clients", "1")
    c = Resp(server.port)
    c.call("CLIENT", "SETNAME", "idle")
    assert c.call("PING") == "PONG"
    assert exists(ctl, "idle")
    c.close()


def test_no_evict_exempts(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "2mb")
    s = named(server, "exempt")
    s.sendall(encode_command("CLIENT", "NO-EVICT", "ON"))
    assert s.recv(100) == b"+OK\r\n"
    fill_qbuf(s, 3 * MB)
    assert wait_until(lambda: int(clients(ctl)["exempt"]["qbuf"]) >= 3 * MB)
    assert tot_mem(ctl, "exempt") > 2 * MB
    assert "e" in clients(ctl)["exempt"]["flags"]
    assert not closed(s, 0.3)
    # It still counts: an ordinary client is now over the total, and goes.
    o = Resp(server.port)
    o.send("PING")
    assert closed(o.s)
    assert exists(ctl, "exempt")
    assert evicted_clients(ctl) == 1
    s.close()
    o.close()


def test_no_evict_off_makes_it_a_candidate(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "300000")
    c = Resp(server.port)
    c.call("CLIENT", "SETNAME", "flip")
    assert c.call("CLIENT", "NO-EVICT", "ON") == "OK"
    for i in range(0, 8000, 1000):
        assert c.call("WATCH", *["key:%d" % j for j in range(i, i + 1000)]) == "OK"
    assert tot_mem(ctl, "flip") > 300000
    assert exists(ctl, "flip")
    c.send("CLIENT", "NO-EVICT", "OFF")
    assert closed(c.s)
    assert not exists(ctl, "flip")
    assert evicted_clients(ctl) == 1
    c.close()


def test_config_set_lower_limit_evicts_biggest_first(server, ctl):
    """Clients of different sizes (each twice the one before, as Redis's
    own test needs for its size buckets), on different workers: lowering
    the limit evicts exactly the biggest ones before CONFIG SET replies."""
    sizes = [48 * KB, 100 * KB, 200 * KB, 400 * KB, 900 * KB, 1900 * KB]
    socks = []
    for i, n in enumerate(sizes):
        for k in range(2):
            s = named(server, "c%d-%d" % (i, k))
            fill_qbuf(s, n)
            socks.append(s)
    for i, n in enumerate(sizes):
        for k in range(2):
            assert wait_until(lambda: int(clients(ctl)["c%d-%d" % (i, k)]["qbuf"]) >= n)
    cl = clients(ctl)
    mem = {name: int(e["tot-mem"]) for name, e in cl.items()}
    total = sum(mem.values())
    # Keep everything but the two biggest sizes.
    gone = {"c4-0", "c4-1", "c5-0", "c5-1"}
    kept_total = total - sum(mem[n] for n in gone)
    limit = kept_total + mem["c4-0"] // 2
    assert ctl.call("CONFIG", "SET", "maxmemory-clients", str(limit)) == "OK"
    left = set(clients(ctl))
    assert not (left & gone)
    assert left == set(cl) - gone
    assert evicted_clients(ctl) == 4
    for s in socks:
        s.close()


def test_evict_only_until_below_limit(server, ctl):
    socks = []
    for i in range(10):
        s = named(server, "c%d" % i)
        fill_qbuf(s, 400 * KB)
        socks.append(s)
    for i in range(10):
        assert wait_until(lambda: int(clients(ctl)["c%d" % i]["qbuf"]) >= 400 * KB)
    cl = clients(ctl)
    per = max(int(cl["c%d" % i]["tot-mem"]) for i in range(10))
    # Room for half of them plus the control connection (and some slack:
    # eviction goes on while the total is >= the limit).
    limit = per * 5 + int(cl["control"]["tot-mem"]) + per // 2
    assert ctl.call("CONFIG", "SET", "maxmemory-clients", str(limit)) == "OK"
    left = [n for n in clients(ctl) if n != "control"]
    assert len(left) == 5
    assert evicted_clients(ctl) == 5
    total = sum(int(e["tot-mem"]) for e in clients(ctl).values())
    assert total <= limit
    for s in socks:
        s.close()


def test_growing_client_on_another_worker_evicts_the_biggest(server, ctl):
    """The client that crosses the limit is not the biggest: the biggest goes
    (HotKV: whichever worker holds it), the newcomer stays."""
    ctl.call("CONFIG", "SET", "maxmemory-clients", "4mb")
    big = named(server, "biggest")
    fill_qbuf(big, 1900 * KB)
    assert wait_until(lambda: int(clients(ctl)["biggest"]["qbuf"]) >= 1900 * KB)
    socks = []
    i = 0
    while exists(ctl, "biggest"):
        assert i < 12
        s = named(server, "n%d" % i)
        fill_qbuf(s, 400 * KB)
        socks.append(s)
        assert wait_until(lambda: not exists(ctl, "biggest") or
                          int(clients(ctl).get("n%d" % i, {"qbuf": "0"})["qbuf"]) >= 400 * KB)
        i += 1
    assert closed(big)
    names = set(clients(ctl))
    assert {"n%d" % k for k in range(i)} <= names
    assert evicted_clients(ctl) == 1
    for s in socks:
        s.close()


def test_disabled_then_enabled_evicts_at_once(server, ctl):
    s = named(server, "grown")
    fill_qbuf(s, 3 * MB)
    assert wait_until(lambda: int(clients(ctl)["grown"]["qbuf"]) >= 3 * MB)
    assert not closed(s, 0.2)
    assert ctl.call("CONFIG", "SET", "maxmemory-clients", "2mb") == "OK"
    assert not exists(ctl, "grown")
    assert closed(s)
    assert evicted_clients(ctl) == 1


def test_evicted_clients_resets(server, ctl):
    ctl.call("CONFIG", "SET", "maxmemory-clients", "2mb")
    s = named(server, "x")
    fill_qbuf(s, 3 * MB)
    assert closed(s)
    assert evicted_clients(ctl) == 1
    ctl.call("CONFIG", "RESETSTAT")
    assert evicted_clients(ctl) == 0
