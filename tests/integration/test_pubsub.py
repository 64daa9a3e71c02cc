"""Pub/sub: SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
SPUBLISH and PUBSUB, in RESP2 and RESP3, the RESP2 subscribed-mode gate,
RESET, CLIENT LIST / INFO fields, delivery across worker threads (the
server runs 4 threads so connections land on different workers), the
pubsub output-buffer limit and a large fan-out."""
import socket
import threading
import time

import pytest

from helpers import MODE, Resp, Server


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


def conn(server, proto=2, timeout=10):
    c = Resp(server.port, timeout=timeout)
    if proto == 3:
        c.call("HELLO", "3")
    return c


def info_field(c, section, name):
    text = c.call("INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":")[1])
    raise AssertionError("no %s in INFO" % name)


def wait_for(fn, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return True
        time.sleep(0.01)
    return fn()


def test_subscribe_resp2_shapes(server):
    s, p = conn(server), conn(server)
    assert s.call("SUBSCRIBE", "a", "b") == [b"subscribe", b"a", 1]
    assert s.read() == [b"subscribe", b"b", 2]
    # Subscribing twice does not count twice.
    assert s.call("SUBSCRIBE", "a") == [b"subscribe", b"a", 2]
    assert p.call("PUBLISH", "a", "hello") == 1
    assert s.read() == [b"message", b"a", b"hello"]
    assert p.call("PUBLISH", "nobody", "x") == 0
    assert s.call("UNSUBSCRIBE", "a") == [b"unsubscribe", b"a", 1]
    # Unsubscribing a channel not held still replies.
    assert s.call("UNSUBSCRIBE", "zz") == [b"unsubscribe", b"zz", 1]
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", b"b", 0]
    # Nothing left: nil channel.
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", None, 0]
    # Back to normal mode.
    assert s.call("SET", "k", "v") == "OK"
    s.close()
    p.close()


def test_unsubscribe_all_counts(server):
    s = conn(server)
    s.send("SUBSCRIBE", "c1", "c2", "c3")
    assert [s.read()[2] for _ in range(3)] == [1, 2, 3]
    assert s.call("PSUBSCRIBE", "p*") == [b"psubscribe", b"p*", 4]
    s.send("UNSUBSCRIBE")
    got = [s.read() for _ in range(3)]
    assert sorted(g[1] for g in got) == [b"c1", b"c2", b"c3"]
    assert [g[2] for g in got] == [3, 2, 1]
    assert all(g[0] == b"unsubscribe" for g in got)
    assert s.call("PUNSUBSCRIBE") == [b"punsubscribe", b"p*", 0]
    assert s.call("PUNSUBSCRIBE") == [b"punsubscribe", None, 0]
    s.close()


def test_patterns(server):
    s, p = conn(server), conn(server)
    assert s.call("PSUBSCRIBE", "news.*", "h?llo") == [b"psubscribe", b"news.*", 1]
    assert s.read() == [b"psubscribe", b"h?llo", 2]
    assert p.call("PUBLISH", "news.tech", "m1") == 1
    assert s.read() == [b"pmessage", b"news.*", b"news.tech", b"m1"]
    assert p.call("PUBLISH", "hallo", "m2") == 1
    assert s.read() == [b"pmessage", b"h?llo", b"hallo", b"m2"]
    assert p.call("PUBLISH", "other", "m3") == 0
    # A channel subscription and a matching pattern: both deliver, both count.
    assert s.call("SUBSCRIBE", "news.x") == [b"subscribe", b"news.x", 3]
    assert p.call("PUBLISH", "news.x", "m4") == 2
    assert s.read() == [b"message", b"news.x", b"m4"]
    assert s.read() == [b"pmessage", b"news.*", b"news.x", b"m4"]
    assert s.call("PUNSUBSCRIBE", "news.*") == [b"punsubscribe", b"news.*", 2]
    assert p.call("PUBLISH", "news.tech", "m5") == 0
    s.close()
    p.close()


def test_resp3_push_and_any_command(server):
    s, p = conn(server, 3), conn(server)
    assert s.call("SUBSCRIBE", "r3") == ("push", [b"subscribe", b"r3", 1])
    # RESP3 clients may run anything while subscribed.
    assert s.call("SET", "r3key", "1") == "OK"
    assert s.call("PING") == "PONG"
    assert p.call("PUBLISH", "r3", "hi") == 1
    assert s.read() == ("push", [b"message", b"r3", b"hi"])
    assert s.call("PSUBSCRIBE", "r*") == ("push", [b"psubscribe", b"r*", 2])
    assert p.call("PUBLISH", "r3", "x") == 2
    assert s.read() == ("push", [b"message", b"r3", b"x"])
    assert s.read() == ("push", [b"pmessage", b"r*", b"r3", b"x"])
    assert s.call("UNSUBSCRIBE") == ("push", [b"unsubscribe", b"r3", 1])
    assert s.call("PUNSUBSCRIBE") == ("push", [b"punsubscribe", b"r*", 0])
    assert s.call("UNSUBSCRIBE") == ("push", [b"unsubscribe", None, 0])
    s.close()
    p.close()


def test_sharded(server):
    s, p = conn(server), conn(server)
    assert s.call("SSUBSCRIBE", "sh1", "sh2") == [b"ssubscribe", b"sh1", 1]
    assert s.read() == [b"ssubscribe", b"sh2", 2]
    # Separate namespace, separate count.
    assert s.call("SUBSCRIBE", "sh1") == [b"subscribe", b"sh1", 1]
    assert p.call("SPUBLISH", "sh1", "a") == 1
    assert s.read() == [b"smessage", b"sh1", b"a"]
    assert p.call("PUBLISH", "sh1", "b") == 1
    assert s.read() == [b"message", b"sh1", b"b"]
    assert p.call("SPUBLISH", "nosuch", "c") == 0
    assert p.call("PUBSUB", "SHARDCHANNELS") == [b"sh1", b"sh2"] or \
        sorted(p.call("PUBSUB", "SHARDCHANNELS")) == [b"sh1", b"sh2"]
    assert p.call("PUBSUB", "SHARDCHANNELS", "*2") == [b"sh2"]
    assert p.call("PUBSUB", "SHARDNUMSUB", "sh1", "x") == [b"sh1", 1, b"x", 0]
    # Shard channels sit at key positions flagged not_key: no keys to GETKEYS.
    assert p.call("COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b") == ("error", "ERR The command has no key arguments")
    assert p.call("COMMAND", "GETKEYS", "SPUBLISH", "ch", "msg") == ("error", "ERR The command has no key arguments")
    info = p.call("COMMAND", "INFO", "SSUBSCRIBE")[0]
    assert info[3:6] == [1, -1, 1]
    assert s.call("SUNSUBSCRIBE", "sh2") == [b"sunsubscribe", b"sh2", 1]
    assert s.call("SUNSUBSCRIBE") == [b"sunsubscribe", b"sh1", 0]
    assert s.call("SUNSUBSCRIBE") == [b"sunsubscribe", None, 0]
    # Still in subscribed mode through the plain channel.
    assert s.call("GET", "x")[0] == "error"
    s.close()
    p.close()


def test_pubsub_introspection(server):
    s1, s2, p = conn(server), conn(server), conn(server)
    s1.call("SUBSCRIBE", "ia")
    s2.send("SUBSCRIBE", "ia", "ib")
    s2.read()
    s2.read()
    s1.call("PSUBSCRIBE", "ip*")
    s2.call("PSUBSCRIBE", "ip*")
    assert sorted(p.call("PUBSUB", "CHANNELS")) == [b"ia", b"ib"]
    assert p.call("PUBSUB", "CHANNELS", "*b") == [b"ib"]
    assert p.call("PUBSUB", "NUMSUB", "ia", "ib", "ic") == [b"ia", 2, b"ib", 1, b"ic", 0]
    assert p.call("PUBSUB", "NUMSUB") == []
    assert p.call("PUBSUB", "NUMPAT") == 1
    assert info_field(p, "stats", "pubsub_channels") == 2
    assert info_field(p, "stats", "pubsub_patterns") == 1
    if MODE != "redis":  # 7.2 field; the reference redis-server here is 7.0
        assert info_field(p, "clients", "pubsub_clients") == 2
    help_ = p.call("PUBSUB", "HELP")
    assert help_[0].startswith("PUBSUB <subcommand>")
    assert p.call("PUBSUB", "FOO")[0] == "error"
    p3 = conn(server, 3)
    assert p3.call("PUBSUB", "NUMSUB", "ia") == [b"ia", 2]
    s1.close()
    s2.close()
    assert wait_for(lambda: p.call("PUBSUB", "NUMSUB", "ia") == [b"ia", 0])
    assert p.call("PUBSUB", "CHANNELS") == []
    assert p.call("PUBSUB", "NUMPAT") == 0
    if MODE != "redis":
        assert info_field(p, "clients", "pubsub_clients") == 0
    p.close()
    p3.close()


def test_subscribed_mode_gate_and_ping(server):
    s = conn(server)
    s.call("SUBSCRIBE", "g")
    assert s.call("GET", "k") == ("error", "ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                                  "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
    assert s.call("CLIENT", "LIST")[1].startswith("ERR Can't execute 'client|list'")
    assert s.call("PING") == [b"pong", b""]
    assert s.call("PING", "hey") == [b"pong", b"hey"]
    assert s.call("PSUBSCRIBE", "x*") == [b"psubscribe", b"x*", 2]
    assert s.call("QUIT") == "OK"
    s.close()


def test_client_list_fields(server):
    s, o = conn(server), conn(server)
    s.call("CLIENT", "SETNAME", "subber")
    s.send("SUBSCRIBE", "l1", "l2")
    s.read()
    s.read()
    s.call("PSUBSCRIBE", "l*")
    s.call("SSUBSCRIBE", "sl")
    line = [ln for ln in o.call("CLIENT", "LIST").decode().split("\n") if "name=subber" in ln][0]
    assert " sub=2 psub=1 ssub=1 " in line
    flags = line.split(" flags=")[1].split(" ")[0]
    assert "P" in flags
    assert info_field(o, "stats", "pubsubshard_channels") == 1
    s.close()
    o.close()


def test_reset_drops_subscriptions(server):
    s, p = conn(server), conn(server)
    s.call("SUBSCRIBE", "rs")
    s.call("PSUBSCRIBE", "rs*")
    s.call("SSUBSCRIBE", "rss")
    assert s.call("RESET") == "RESET"
    assert p.call("PUBLISH", "rs", "x") == 0
    assert p.call("SPUBLISH", "rss", "x") == 0
    assert p.call("PUBSUB", "NUMSUB", "rs") == [b"rs", 0]
    assert s.call("SET", "a", "b") == "OK"
    assert s.call("PING") == "PONG"
    s.close()
    p.close()


def test_client_reply_off_still_pushes(server):
    s, p = conn(server, 3), conn(server)
    s.send("CLIENT", "REPLY", "OFF")
    s.send("PING")
    assert s.call("SSUBSCRIBE", "ro") == ("push", [b"ssubscribe", b"ro", 1])
    assert s.call("SUBSCRIBE", "ro") == ("push", [b"subscribe", b"ro", 1])
    assert p.call("SPUBLISH", "ro", "a") == 1
    assert s.read() == ("push", [b"smessage", b"ro", b"a"])
    assert p.call("PUBLISH", "ro", "b") == 1
    assert s.read() == ("push", [b"message", b"ro", b"b"])
    assert s.call("SUNSUBSCRIBE") == ("push", [b"sunsubscribe", b"ro", 0])
    s.send("CLIENT", "REPLY", "ON")
    assert s.read() == "OK"
    s.close()
    p.close()


def test_pubsub_argument_errors(server):
    p = conn(server)
    assert p.call("PUBSUB", "CHANNELS", "a", "b") == (
        "error", "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")
    assert p.call("PUBSUB", "NUMPAT", "x")[1].startswith("ERR wrong number of arguments for 'pubsub|numpat'")
    assert p.call("SUBSCRIBE")[1] == "ERR wrong number of arguments for 'subscribe' command"
    assert p.call("PUBLISH", "a")[1] == "ERR wrong number of arguments for 'publish' command"
    p.close()


def test_subscriber_not_closed_by_idle_timeout(server):
    cfg = conn(server)
    old = cfg.call("CONFIG", "GET", "timeout")[1]
    s = conn(server)
    s.call("SUBSCRIBE", "idle")
    try:
        assert cfg.call("CONFIG", "SET", "timeout", "1") == "OK"
        time.sleep(2.5)
        p = conn(server)
        assert p.call("PUBLISH", "idle", "still") == 1
        assert s.read() == [b"message", b"idle", b"still"]
    finally:
        p = conn(server)
        p.call("CONFIG", "SET", "timeout", old)
        p.close()
        s.close()
        cfg.close()


def test_client_close_drops_subscriptions(server):
    p = conn(server)
    subs = [conn(server) for _ in range(8)]
    for s in subs:
        s.call("SUBSCRIBE", "gone")
    assert p.call("PUBLISH", "gone", "x") == 8
    for s in subs:
        s.close()
    assert wait_for(lambda: p.call("PUBLISH", "gone", "x") == 0)
    assert p.call("PUBSUB", "CHANNELS", "gone") == []
    p.close()


def test_cross_thread_delivery_order_and_counts(server):
    nsubs, npubs, nmsg = 24, 4, 300
    subs = []
    for i in range(nsubs):
        s = conn(server, 3 if i % 2 else 2)
        r = s.call("SUBSCRIBE", "x-chan")
        assert r in ([b"subscribe", b"x-chan", 1], ("push", [b"subscribe", b"x-chan", 1]))
        if i % 3 == 0:
            r = s.call("PSUBSCRIBE", "x-*")
        subs.append(s)
    receivers = nsubs + len(range(0, nsubs, 3))
    pubs = [conn(server) for _ in range(npubs)]
    errors = []

    def publish(k):
        c = pubs[k]
        for j in range(nmsg):
            c.send("PUBLISH", "x-chan", "%d:%d" % (k, j))
        for j in range(nmsg):
            n = c.read()
            if n != receivers:
                errors.append(("count", k, j, n))

    threads = [threading.Thread(target=publish, args=(k,)) for k in range(npubs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, s in enumerate(subs):
        last = {k: -1 for k in range(npubs)}
        lastp = {k: -1 for k in range(npubs)}
        per = 2 if i % 3 == 0 else 1
        for _ in range(npubs * nmsg * per):
            m = s.read()
            if isinstance(m, tuple):
                m = m[1]
            if m[0] == b"message":
                k, j = map(int, m[2].split(b":"))
                assert j == last[k] + 1
                last[k] = j
            else:
                assert m[0] == b"pmessage" and m[1] == b"x-*"
                k, j = map(int, m[3].split(b":"))
                assert j == lastp[k] + 1
                lastp[k] = j
        assert all(v == nmsg - 1 for v in last.values())
        if per == 2:
            assert all(v == nmsg - 1 for v in lastp.values())
    for c in subs + pubs:
        c.close()


def test_slow_subscriber_disconnected(server):
    cfg = conn(server)
    old = cfg.call("CONFIG", "GET", "client-output-buffer-limit")[1]
    assert cfg.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 0 0") == "OK"
    try:
        s = socket.create_connection(("127.0.0.1", server.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nslow\r\n")
        time.sleep(0.2)
        p = conn(server)
        payload = "x" * 10000
        delivered_zero = False
        for i in range(2000):
            if p.call("PUBLISH", "slow", payload) == 0:
                delivered_zero = True
                break
        assert delivered_zero, "slow subscriber was never disconnected"
        assert p.call("PUBSUB", "NUMSUB", "slow") == [b"slow", 0]
        assert p.call("PING") == "PONG"
        s.close()
        p.close()
    finally:
        cfg.call("CONFIG", "SET", "client-output-buffer-limit", old)
        cfg.close()


def test_fanout_latency(server):
    n = 2000
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$3\r\nfan\r\n")
        socks.append(s)
    for s in socks:
        s.settimeout(10)
        want = b"*3\r\n$9\r\nsubscribe\r\n$3\r\nfan\r\n:1\r\n"
        got = b""
        while len(got) < len(want):
            got += s.recv(len(want) - len(got))
        assert got == want
    p, other = conn(server), conn(server)
    worst = 0.0
    for i in range(20):
        assert p.call("PUBLISH", "fan", "m%d" % i) == n
        t0 = time.time()
        assert other.call("PING") == "PONG"
        worst = max(worst, time.time() - t0)
    assert worst < 0.5
    for s in socks:
        want = b"".join(b"*3\r\n$7\r\nmessage\r\n$3\r\nfan\r\n$%d\r\nm%d\r\n" % (len(b"m%d" % i), i) for i in range(20))
        got = b""
        while len(got) < len(want):
            got += s.recv(65536)
        assert got == want
    for s in socks:
        s.close()
    p.close()
    other.close()


def test_churn_while_publishing(server):
    """Subscribers come and go (UNSUBSCRIBE, RESET, close) on every worker
    while publishers run: nothing crashes and the registry ends empty."""
    stop = threading.Event()
    errors = []

    def publisher():
        c = conn(server)
        try:
            while not stop.is_set():
                c.send("PUBLISH", "churn", "m")
                c.send("SPUBLISH", "schurn", "m")
                if not isinstance(c.read(), int) or not isinstance(c.read(), int):
                    errors.append("bad publish reply")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            c.close()

    def subscriber(k):
        try:
            for i in range(30):
                s = socket.create_connection(("127.0.0.1", server.port))
                s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nchurn\r\n"
                          b"*2\r\n$10\r\nPSUBSCRIBE\r\n$2\r\nc*\r\n"
                          b"*2\r\n$10\r\nSSUBSCRIBE\r\n$6\r\nschurn\r\n")
                s.recv(4096)
                if i % 3 == 0:
                    s.sendall(b"*1\r\n$11\r\nUNSUBSCRIBE\r\n*1\r\n$12\r\nPUNSUBSCRIBE\r\n")
                elif i % 3 == 1:
                    s.sendall(b"*1\r\n$5\r\nRESET\r\n")
                s.close()
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    pubs = [threading.Thread(target=publisher) for _ in range(3)]
    subs = [threading.Thread(target=subscriber, args=(k,)) for k in range(8)]
    for t in pubs + subs:
        t.start()
    for t in subs:
        t.join()
    stop.set()
    for t in pubs:
        t.join()
    assert errors == []
    p = conn(server)
    assert wait_for(lambda: p.call("PUBSUB", "NUMSUB", "churn") == [b"churn", 0]
                    and p.call("PUBSUB", "NUMPAT") == 0
                    and p.call("PUBSUB", "SHARDNUMSUB", "schurn") == [b"schurn", 0])
    assert p.call("PING") == "PONG"
    p.close()
