"""Client-side caching: CLIENT TRACKING (default mode, BCAST with prefixes,
OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT), CLIENT GETREDIR and
TRACKINGINFO, the RESP3 `invalidate` push and the RESP2 redirect through
`__redis__:invalidate`, tracking-redir-broken, FLUSHALL/FLUSHDB null
invalidations, expired keys, tracking-table-max-keys, MULTI/EXEC and
blocked-client ordering, the CLIENT LIST / INFO fields, and delivery across
worker threads (the server runs 4 threads; several connections spread over
them).  HOTKV_SERVER=redis runs the same tests against redis-server; the
ones marked for 7.2+ behaviour are skipped on older servers."""
import random
import threading
import time

import pytest

from helpers import MODE, Resp, Server, parse_info, client_list_entries

INV = b"__redis__:invalidate"


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


def conn(server, proto=2, timeout=5):
    c = Resp(server.port, timeout=timeout)
    if proto == 3:
        assert isinstance(c.call("HELLO", "3"), dict)
    return c


@pytest.fixture
def clean(server):
    c = conn(server)
    c.call("FLUSHALL")
    c.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    yield c
    c.close()


def version(server):
    c = conn(server)
    text = c.call("INFO", "server")
    c.close()
    v = parse_info(text)[None]["redis_version"]
    return tuple(int(x) for x in v.split(".")[:3])


def need_72(server):
    if version(server) < (7, 2, 0):
        pytest.skip("Redis 7.2+ behaviour")


def info(c):
    return parse_info(c.call("INFO", "all"))[None]


def push(c):
    """The next message must be an invalidation push: its value."""
    m = c.read()
    assert isinstance(m, tuple) and m[0] == "push", m
    assert m[1][0] == b"invalidate", m
    return m[1][1]


def message(c):
    """The next message on a RESP2 __redis__:invalidate subscriber."""
    m = c.read()
    assert isinstance(m, list) and m[0] == b"message" and m[1] == INV, m
    return m[2]


def quiet(c, wait=0.2):
    """Nothing pending for c: after a pause, PING's reply is the next one."""
    time.sleep(wait)
    r = c.call("PING")
    assert r in ("PONG", [b"pong", b""]), r


def redirect_target(server):
    """A RESP2 connection subscribed to __redis__:invalidate, and its id."""
    r = conn(server)
    rid = r.call("CLIENT", "ID")
    assert r.call("SUBSCRIBE", "__redis__:invalidate") == [b"subscribe", INV, 1]
    return r, rid


def text(x):
    """CLIENT LIST / INFO: bulk (RESP2) or verbatim (RESP3) text."""
    return x[2] if isinstance(x, tuple) else x


def wait_until(pred, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


# ------------------------------------------------------------ commands ---
def test_tracking_errors(server, clean):
    c = conn(server, 3)
    err = lambda *a: c.call(*a)[1]
    assert err("CLIENT", "TRACKING", "on", "PREFIX", "a") == "ERR PREFIX option requires BCAST mode to be enabled"
    assert err("CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == "ERR OPTIN and OPTOUT are not compatible with BCAST"
    assert err("CLIENT", "TRACKING", "on", "BCAST", "OPTOUT") == "ERR OPTIN and OPTOUT are not compatible with BCAST"
    assert err("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == "ERR You can't specify both OPTIN mode and OPTOUT mode"
    assert err("CLIENT", "TRACKING", "maybe") == "ERR syntax error"
    assert err("CLIENT", "TRACKING", "on", "foo") == "ERR syntax error"
    assert err("CLIENT", "TRACKING", "on", "REDIRECT") == "ERR syntax error"
    assert err("CLIENT", "TRACKING", "on", "REDIRECT", "x") == "ERR value is not an integer or out of range"
    assert err("CLIENT", "TRACKING", "on", "REDIRECT", "987654321") == \
        "ERR The client ID you want redirect to does not exist"
    assert err("CLIENT", "TRACKING", "off", "REDIRECT", "0") == \
        "ERR The client ID you want redirect to does not exist"
    me = c.call("CLIENT", "ID")
    assert err("CLIENT", "TRACKING", "on", "REDIRECT", me, "REDIRECT", me) == \
        "ERR A client can only redirect to a single other client"
    assert err("CLIENT", "TRACKING") == "ERR wrong number of arguments for 'client|tracking' command"
    # Mode switches need tracking off first.
    assert c.call("CLIENT", "TRACKING", "on") == "OK"
    assert err("CLIENT", "TRACKING", "on", "BCAST") == \
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, " \
        "and then re-enabling it with a different mode."
    assert c.call("CLIENT", "TRACKING", "off") == "OK"
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN") == "OK"
    assert err("CLIENT", "TRACKING", "on", "OPTOUT") == \
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, " \
        "and then re-enabling it with a different mode."
    # OPTIN again (or no option) is fine.
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN") == "OK"
    assert c.call("CLIENT", "TRACKING", "off") == "OK"
    assert c.call("CLIENT", "TRACKING", "off") == "OK"
    c.close()


def test_caching_errors(server, clean):
    c = conn(server)
    assert c.call("CLIENT", "CACHING", "yes")[1] == \
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("CLIENT", "CACHING", "yes")[1] == \
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
    assert c.call("CLIENT", "CACHING", "no")[1] == \
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
    assert c.call("CLIENT", "CACHING", "maybe")[1] == "ERR syntax error"
    assert c.call("CLIENT", "CACHING")[1] == "ERR wrong number of arguments for 'client|caching' command"
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    assert c.call("CLIENT", "CACHING", "YES") == "OK"
    assert c.call("CLIENT", "CACHING", "no")[1] == \
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
    c.close()


def test_getredir_and_trackinginfo_resp2(server, clean):
    c = conn(server)
    t, tid = redirect_target(server)
    assert c.call("CLIENT", "GETREDIR") == -1
    assert c.call("CLIENT", "TRACKINGINFO") == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("CLIENT", "GETREDIR") == 0
    assert c.call("CLIENT", "TRACKINGINFO") == [b"flags", [b"on"], b"redirect", 0, b"prefixes", []]
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid, "NOLOOP")
    assert c.call("CLIENT", "GETREDIR") == tid
    assert c.call("CLIENT", "TRACKINGINFO") == [b"flags", [b"on", b"noloop"], b"redirect", tid, b"prefixes", []]
    c.call("CLIENT", "TRACKING", "off")
    assert c.call("CLIENT", "GETREDIR") == -1
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    c.call("CLIENT", "CACHING", "yes")
    assert c.call("CLIENT", "TRACKINGINFO")[1] == [b"on", b"optin", b"caching-yes"]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    assert c.call("CLIENT", "TRACKINGINFO")[1] == [b"on", b"optout"]
    c.call("CLIENT", "CACHING", "no")
    assert c.call("CLIENT", "TRACKINGINFO")[1] == [b"on", b"optout", b"caching-no"]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar")
    assert c.call("CLIENT", "TRACKINGINFO") == [b"flags", [b"on", b"bcast"], b"redirect", 0,
                                                 b"prefixes", [b"bar", b"foo"]]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    assert c.call("CLIENT", "TRACKINGINFO")[5] == [b""]
    c.close()
    t.close()


def test_trackinginfo_resp3(server, clean):
    c = conn(server, 3)
    assert c.call("CLIENT", "TRACKINGINFO") == {b"flags": {b"off"}, b"redirect": -1, b"prefixes": []}
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:")
    assert c.call("CLIENT", "TRACKINGINFO") == {b"flags": {b"on", b"bcast"}, b"redirect": 0, b"prefixes": [b"p:"]}
    c.close()


def test_client_list_flags_and_info(server, clean):
    c, b = conn(server), conn(server)
    t, tid = redirect_target(server)
    base = info(clean)
    cid, bid = c.call("CLIENT", "ID"), b.call("CLIENT", "ID")
    line = client_list_entries(text(c.call("CLIENT", "INFO")))[0]
    assert line["redir"] == "-1" and "t" not in line["flags"]
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    b.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "zz:")
    entries = {int(e["id"]): e for e in client_list_entries(text(clean.call("CLIENT", "LIST")))}
    assert entries[cid]["flags"] == "t" and entries[cid]["redir"] == str(tid)
    assert entries[bid]["flags"] == "tB" and entries[bid]["redir"] == "0"
    c.call("SET", "k1", "v")
    c.call("GET", "k1")
    c.call("MGET", "k2", "k3")
    i = info(clean)
    assert int(i["tracking_clients"]) == int(base["tracking_clients"]) + 2
    assert int(i["tracking_total_keys"]) == 3
    assert int(i["tracking_total_items"]) == 3
    assert int(i["tracking_total_prefixes"]) == 1
    c.call("CLIENT", "TRACKING", "off")
    b.close()
    assert wait_until(lambda: int(info(clean)["tracking_clients"]) == int(base["tracking_clients"]))
    assert int(info(clean)["tracking_total_prefixes"]) == 0
    c.close()
    t.close()


# ------------------------------------------------------- default mode ---
def test_resp3_invalidation_from_other_client(server, clean):
    c, w = conn(server, 3), conn(server)
    assert c.call("CLIENT", "TRACKING", "on") == "OK"
    w.call("SET", "key1", "1")
    assert c.call("GET", "key1") == b"1"
    w.call("SET", "key1", "2")
    assert push(c) == [b"key1"]
    # The key left the table: a second write sends nothing.
    w.call("SET", "key1", "3")
    quiet(c)
    # Read again, then every kind of modification invalidates.
    for cmd in (("APPEND", "key1", "x"), ("DEL", "key1"), ("LPUSH", "key1", "a"), ("EXPIRE", "key1", "100"),
                ("RENAME", "key1", "other"), ("SET", "key1", "v")):
        c.call("EXISTS", "key1")
        w.call(*cmd)
        assert push(c) == [b"key1"], cmd
    c.close()
    w.close()


def test_only_read_keys_are_tracked(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "a{t}", "1")
    c.call("SET", "b{t}", "1")
    c.call("GET", "a{t}")
    w.call("INCR", "b{t}")   # never read by c
    w.call("INCR", "a{t}")
    assert push(c) == [b"a{t}"]
    quiet(c)
    # Writes do not track: c's own SET of a new key then a write elsewhere.
    c.call("SET", "c{t}", "1")
    w.call("SET", "c{t}", "2")
    quiet(c)
    c.close()
    w.close()


def test_own_write_invalidation_after_reply(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("HSET", "myhash", "f", "1")
    assert c.call("HGET", "myhash", "f") == b"1"
    assert c.call("HDEL", "myhash", "f") == 1
    assert push(c) == [b"myhash"]
    # INCR reads and writes: Redis tracks nothing for a write command, so
    # an INCR of an untracked key sends nothing.
    c.call("SET", "n", "1")
    assert c.call("INCR", "n") == 2
    quiet(c)
    c.call("GET", "n")
    assert c.call("INCR", "n") == 3
    assert push(c) == [b"n"]
    c.close()


def test_pipelined_own_invalidation_order(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "k", "1")
    c.call("GET", "k")
    c.send("INCR", "k")
    c.send("PING")
    assert c.read() == 2
    assert push(c) == [b"k"]
    assert c.read() == "PONG"
    c.close()


def test_multi_exec_invalidation_after_exec_reply(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("MSET", "a{t}", "1", "b{t}", "2")
    c.call("GET", "a{t}")
    assert c.call("MULTI") == "OK"
    assert c.call("INCR", "a{t}") == "QUEUED"
    assert c.call("GET", "b{t}") == "QUEUED"
    assert c.call("EXEC") == [2, b"2"]
    assert push(c) == [b"a{t}"]
    # GET inside EXEC tracked b{t}.
    w = conn(server)
    w.call("SET", "b{t}", "3")
    assert push(c) == [b"b{t}"]
    w.close()
    c.close()


def test_multiple_keys_reply_not_interleaved(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "x{t}", "1")
    c.call("SET", "y{t}", "2", "PX", "100")
    c.call("MGET", "x{t}", "y{t}")
    time.sleep(0.15)
    # The lookup expires y{t} (lazily or not): the invalidation never lands
    # inside the MGET reply.
    r = c.call("MGET", "x{t}", "y{t}")
    if isinstance(r, tuple):  # active expiry was first
        assert r == ("push", [b"invalidate", [b"y{t}"]])
        r = c.read()
    else:
        assert push(c) == [b"y{t}"]
    assert r == [b"1", None]
    c.close()


def test_resp2_redirect_pubsub(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server), conn(server)
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid) == "OK"
    c.call("SET", "a{t}", "1")
    c.call("SET", "b{t}", "1")
    c.call("GET", "a{t}")
    c.call("INCR", "b{t}")
    c.call("INCR", "a{t}")
    assert message(t) == [b"a{t}"]
    c.call("MGET", "a{t}", "b{t}", "c{t}")
    w.call("MSET", "a{t}", "2", "b{t}", "2", "c{t}", "2")
    got = sorted(message(t)[0] for _ in range(3))
    assert got == [b"a{t}", b"b{t}", b"c{t}"]
    # RESP2 tracking client without redirection gets nothing.
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "a{t}")
    w.call("SET", "a{t}", "3")
    quiet(c)
    c.close()
    w.close()
    t.close()


def test_redirect_to_resp3_client(server, clean):
    t = conn(server, 3)
    tid = t.call("CLIENT", "ID")
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    w.call("INCR", "key1")
    assert push(t) == [b"key1"]
    # Also when it is subscribed: still a push, not a message.
    assert t.call("SUBSCRIBE", INV) == ("push", [b"subscribe", INV, 1])
    c.call("GET", "key1")
    w.call("INCR", "key1")
    assert push(t) == [b"key1"]
    for x in (c, w, t):
        x.close()


def test_switch_to_resp3_after_tracking(server, clean):
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    c.call("HELLO", "3")
    w.call("SET", "key1", "2")
    assert push(c) == [b"key1"]
    c.close()
    w.close()


def test_redirect_broken(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    assert t.call("QUIT") == "OK"
    t.close()
    time.sleep(0.1)
    w.call("SET", "key1", "2")
    m = c.read()
    assert m == ("push", [b"tracking-redir-broken", tid])
    info3 = c.call("CLIENT", "TRACKINGINFO")
    assert info3 == {b"flags": {b"on", b"broken_redirect"}, b"redirect": tid, b"prefixes": []}
    line = client_list_entries(text(c.call("CLIENT", "INFO")))[0]
    assert line["flags"] == "tR" and line["redir"] == str(tid)
    # Re-enabling clears the broken state.
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("CLIENT", "TRACKINGINFO")[b"flags"] == {b"on"}
    c.close()
    w.close()


def test_redirect_broken_resp2_no_message(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    c.call("GET", "k")
    t.call("QUIT")
    t.close()
    time.sleep(0.1)
    w.call("SET", "k", "2")
    quiet(c)
    assert wait_until(lambda: c.call("CLIENT", "TRACKINGINFO")[1] == [b"on", b"broken_redirect"])
    c.close()
    w.close()


def test_several_clients_redirect_to_one(server, clean):
    t, tid = redirect_target(server)
    a, b, w = conn(server), conn(server, 3), conn(server)
    a.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    b.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    w.call("MSET", "key1{t}", "1", "key2{t}", "1")
    a.call("GET", "key1{t}")
    b.call("GET", "key2{t}")
    w.call("INCR", "key1{t}")
    assert message(t) == [b"key1{t}"]
    w.call("INCR", "key2{t}")
    assert message(t) == [b"key2{t}"]
    for x in (a, b, w, t):
        x.close()


def test_noloop_default_mode(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid, "NOLOOP")
    c.call("MGET", "otherkey1{t}", "loopkey{t}", "otherkey2{t}")
    w.call("SET", "otherkey1{t}", "1")
    c.call("SET", "loopkey{t}", "1")
    w.call("SET", "otherkey2{t}", "1")
    assert message(t) == [b"otherkey1{t}"]
    assert message(t) == [b"otherkey2{t}"]
    quiet(t)
    for x in (c, w, t):
        x.close()


def test_noloop_resp3_self(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "NOLOOP")
    c.call("GET", "k")
    c.call("SET", "k", "1")
    quiet(c)
    c.call("GET", "k")
    w.call("SET", "k", "2")
    assert push(c) == [b"k"]
    c.close()
    w.close()


def test_optin(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    w.call("SET", "key1", "1")
    c.call("GET", "key1")   # not cached: no CACHING yes
    w.call("SET", "key1", "2")
    quiet(c)
    assert c.call("CLIENT", "CACHING", "yes") == "OK"
    c.call("GET", "key1")
    c.call("GET", "key2")   # CACHING yes covered only the previous command
    w.call("MSET", "key1", "3", "key2", "3")
    assert push(c) == [b"key1"]
    quiet(c)
    # CLIENT commands do not use it up; a MULTI ... EXEC uses it whole.
    c.call("CLIENT", "CACHING", "yes")
    c.call("CLIENT", "ID")
    c.call("MULTI")
    c.call("GET", "key1")
    c.call("GET", "key2")
    c.call("EXEC")
    c.call("GET", "key3")
    w.call("SET", "key1", "4")
    w.call("SET", "key2", "4")
    w.call("SET", "key3", "4")
    assert push(c) == [b"key1"]
    assert push(c) == [b"key2"]
    quiet(c)
    c.close()
    w.close()


def test_optout(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    w.call("SET", "key1", "2")
    assert push(c) == [b"key1"]
    assert c.call("CLIENT", "CACHING", "no") == "OK"
    c.call("GET", "key1")  # not tracked
    c.call("GET", "key2")  # tracked again
    w.call("MSET", "key1", "3", "key2", "3")
    assert push(c) == [b"key2"]
    quiet(c)
    c.close()
    w.close()


def test_switch_to_bcast_drops_old_keys(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    w.call("INCR", "key1")
    # Only the BCAST message, not the pre-BCAST one.
    assert push(c) == [b"key1"]
    quiet(c)
    c.close()
    w.close()


def test_tracking_off_on_keeps_old_keys(server, clean):
    """Redis removes ids lazily: re-enabling tracking with the same
    connection still gets invalidations for keys read before."""
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "k")
    c.call("CLIENT", "TRACKING", "off")
    w.call("SET", "k", "1")
    quiet(c)
    c.call("GET", "k2")
    c.call("CLIENT", "TRACKING", "on")
    w.call("SET", "k2", "1")
    quiet(c)  # read while off: not tracked
    c.call("CLIENT", "TRACKING", "off")
    c.close()
    w.close()


# ---------------------------------------------------------------- BCAST ---
def test_bcast_empty_prefix(server, clean):
    t, tid = redirect_target(server)
    c = conn(server)
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", tid) == "OK"
    c.call("MSET", "a{t}", "1", "b{t}", "2", "c{t}", "3")
    assert sorted(message(t)) == [b"a{t}", b"b{t}", b"c{t}"]
    c.close()
    t.close()


def test_bcast_prefixes(server, clean):
    t, tid = redirect_target(server)
    c = conn(server)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", tid, "PREFIX", "a:", "PREFIX", "b:")
    c.call("MULTI")
    for k in ("a:1{t}", "a:2{t}", "b:1{t}", "b:2{t}", "c:1{t}"):
        c.call("INCR", k)
    c.call("EXEC")
    keys = message(t) + message(t)
    assert sorted(keys) == [b"a:1{t}", b"a:2{t}", b"b:1{t}", b"b:2{t}"]
    # Adding a prefix keeps the others.
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", tid, "PREFIX", "c:") == "OK"
    c.call("INCR", "c:1234")
    assert message(t) == [b"c:1234"]
    c.call("INCR", "zz")
    quiet(t)
    c.close()
    t.close()


def test_bcast_prefix_collisions(server, clean):
    c = conn(server)
    e = c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO")[1]
    assert e == "ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. " \
                "Prefixes for a single client must not overlap."
    e = c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO", "PREFIX", "FOOBAR")[1]
    assert e.startswith("ERR Prefix 'FOO' overlaps with another provided prefix 'FOOBAR'")
    assert c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR") == "OK"
    e = c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FO")[1]
    assert e == "ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. " \
                "Prefixes for a single client must not overlap."
    e = c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "BARB")[1]
    assert e.startswith("ERR Prefix 'BARB' overlaps with an existing prefix 'BAR'")
    e = c.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO")[1]
    assert e.startswith("ERR Prefix 'FOO' overlaps with an existing prefix 'FOO'")
    assert c.call("CLIENT", "TRACKING", "OFF") == "OK"
    c.close()


def test_bcast_noloop(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", tid, "NOLOOP")
    w.call("SET", "otherkey1", "1")
    c.call("SET", "loopkey", "1")
    w.call("SET", "otherkey2", "1")
    assert message(t) == [b"otherkey1"]
    assert message(t) == [b"otherkey2"]
    quiet(t)
    # Mixed in one command: only the keys others modified... a command is
    # one client's, so MSET by c sends nothing at all.
    c.call("MSET", "x1", "1", "x2", "2")
    quiet(t)
    for x in (c, w, t):
        x.close()


def test_bcast_resp3_self_and_others(server, clean):
    c, d, w = conn(server, 3), conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:")
    d.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "order:")
    w.call("MSET", "user:1", "a", "order:1", "b", "misc", "c")
    assert push(c) == [b"user:1"]
    got = sorted([push(d), push(d)])
    assert got == [[b"order:1"], [b"user:1"]]
    quiet(c)
    quiet(d)
    for x in (c, d, w):
        x.close()


def test_bcast_expired_key(server, clean):
    t, tid = redirect_target(server)
    c = conn(server)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", tid, "NOLOOP")
    c.call("SET", "mykey", "myval", "PX", "1")
    c.call("SET", "mykeyotherkey", "myval")  # NOLOOP: not sent
    # Active expiry finds mykey (modified by nobody): sent.
    t.s.settimeout(5)
    assert message(t) == [b"mykey"]
    c.close()
    t.close()


# ------------------------------------------------------ flush / expiry ---
def test_flushall_null_invalidation(server, clean):
    t, tid = redirect_target(server)
    c, c3, w = conn(server), conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    c3.call("CLIENT", "TRACKING", "on")
    w.call("SET", "key1", "1")
    c.call("GET", "key1")
    assert int(info(w)["tracking_total_keys"]) == 1
    w.call("FLUSHALL")
    assert message(t) is None
    assert push(c3) is None
    assert int(info(w)["tracking_total_keys"]) == 0
    # FLUSHDB too, and ASYNC.
    c.call("GET", "key1")
    w.call("FLUSHDB", "ASYNC")
    assert message(t) is None
    assert push(c3) is None
    assert int(info(w)["tracking_total_keys"]) == 0
    for x in (c, c3, w, t):
        x.close()


def test_flushdb_in_multi_after_reply(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "a{t}", "1")
    c.call("GET", "a{t}")
    c.call("MULTI")
    c.call("FLUSHDB")
    assert c.call("EXEC") == ["OK"]
    assert push(c) is None
    c.close()


def test_expired_key_default_mode(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    w.call("SET", "e", "1", "PX", "50")
    c.call("GET", "e")
    # Active expiry (or any lookup) deletes it: invalidated.
    assert push(c) == [b"e"]
    c.close()
    w.close()


def test_lazy_expiry_by_other_client(server, clean):
    c, w = conn(server, 3), conn(server)
    w.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.call("CLIENT", "TRACKING", "on")
        w.call("SET", "e", "1", "PX", "30")
        c.call("GET", "e")
        time.sleep(0.1)
        assert w.call("GET", "e") is None
        assert push(c) == [b"e"]
    finally:
        w.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    c.close()
    w.close()


# ----------------------------------------------- tracking-table-max-keys ---
def test_table_max_keys_eviction_exact(server, clean):
    t, tid = redirect_target(server)
    c, w = conn(server), conn(server)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
    n = 250
    for i in range(n):
        w.call("SET", "key%d" % i, i)
        c.call("GET", "key%d" % i)
    assert int(info(w)["tracking_total_keys"]) == n
    try:
        assert w.call("CONFIG", "SET", "tracking-table-max-keys", "1") == "OK"
        assert w.call("CONFIG", "GET", "tracking-table-max-keys") == [b"tracking-table-max-keys", b"1"]
        got = set()
        for _ in range(n - 1):
            got.add(message(t)[0])
        assert len(got) == n - 1
        assert t.call("PING") == [b"pong", b""]
        assert int(info(w)["tracking_total_keys"]) == 1
    finally:
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    for x in (c, w, t):
        x.close()


def test_table_max_keys_lowered_applies_before_the_next_command(server, clean):
    """A lower tracking-table-max-keys takes effect before the next command
    runs, cron or no cron: a tracking client in MULTI hears of the dropped
    key before its next command's QUEUED (Redis's regression test for
    #11715, with DEBUG PAUSE-CRON keeping the cron out of it)."""
    c, w = conn(server, 3), conn(server)
    w.call("CONFIG", "SET", "tracking-table-max-keys", "2")
    w.call("DEBUG", "PAUSE-CRON", "1")
    try:
        assert c.call("CLIENT", "TRACKING", "on") == "OK"
        assert c.call("MGET", "1{t}", "2{t}") == [None, None]
        assert c.call("MULTI") == "OK"
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1")
        c.send("PING")
        c.send("EXEC")
        m = c.read()
        assert isinstance(m, tuple) and m[0] == "push" and m[1][0] == b"invalidate", m
        assert m[1][1][0] in (b"1{t}", b"2{t}")
        assert c.read() == "QUEUED"
        assert c.read() == ["PONG"]
    finally:
        w.call("DEBUG", "PAUSE-CRON", "0")
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    c.close()
    w.close()


# ------------------------------------------------------ client life cycle ---
def test_reset_disables_tracking(server, clean):
    c, w = conn(server, 3), conn(server)
    base = int(info(w)["tracking_clients"])
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "r:")
    assert int(info(w)["tracking_clients"]) == base + 1
    assert c.call("RESET") == "RESET"
    assert int(info(w)["tracking_clients"]) == base
    assert int(info(w)["tracking_total_prefixes"]) == 0
    assert c.call("CLIENT", "TRACKINGINFO") == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    w.call("SET", "r:1", "x")
    quiet(c)
    c.close()
    w.close()


def test_client_reply_off_still_gets_pushes(server, clean):
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    w.call("SET", "foo", "bar")
    c.call("GET", "foo")
    c.send("CLIENT", "REPLY", "OFF")
    time.sleep(0.05)
    w.call("SET", "foo", "bar2")
    assert push(c) == [b"foo"]
    assert c.call("CLIENT", "REPLY", "ON") == "OK"
    assert c.call("PING") == "PONG"
    c.close()
    w.close()


def test_blmove_unblocked_gets_notification_after_reply(server, clean):
    c, w = conn(server, 3), conn(server)
    w.call("RPUSH", "list2{t}", "a")
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("LRANGE", "list2{t}", "0", "-1") == [b"a"]
    c.send("BLMOVE", "list1{t}", "list2{t}", "LEFT", "LEFT", "0")
    assert wait_until(lambda: int(info(w)["blocked_clients"]) == 1)
    w.call("RPUSH", "list1{t}", "foo")
    assert c.read() == b"foo"
    assert push(c) == [b"list2{t}"]
    c.close()
    w.close()


def test_tracking_client_closes_while_writes_continue(server, clean):
    """Trackers disconnect while writers invalidate their keys: the
    invalidations find nobody and the server carries on."""
    stop = threading.Event()
    errors = []

    def writer():
        try:
            w = conn(server)
            i = 0
            while not stop.is_set():
                w.call("SET", "churn:%d" % (i % 50), i)
                i += 1
            w.close()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ths = [threading.Thread(target=writer) for _ in range(3)]
    for th in ths:
        th.start()
    t, tid = redirect_target(server)
    for round_ in range(30):
        c = conn(server, 3 if round_ % 2 else 2)
        if round_ % 3 == 0:
            c.call("CLIENT", "TRACKING", "on", "REDIRECT", tid)
        elif round_ % 3 == 1:
            c.call("CLIENT", "TRACKING", "on")
        else:
            c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "churn:")
        c.call("MGET", *["churn:%d" % k for k in range(50)])
        c.close()
    # The redirect target leaves too while invalidations are in flight.
    t.close()
    time.sleep(0.2)
    stop.set()
    for th in ths:
        th.join()
    assert not errors
    x = conn(server)
    assert x.call("PING") == "PONG"
    x.close()


# --------------------------------------------------------- cross-thread ---
def test_cross_thread_many_trackers_and_writers():
    """8 RESP3 trackers and 8 writers over 4 workers: every tracker gets an
    invalidation for each key it read that some writer then modified, and
    nothing else."""
    s = Server(threads=4) if MODE != "redis" else Server()
    try:
        trackers = [conn(s, 3, timeout=10) for _ in range(8)]
        writers = [conn(s, timeout=10) for _ in range(8)]
        for i, c in enumerate(trackers):
            c.call("CLIENT", "TRACKING", "on")
            keys = ["k:%d:%d" % (i, j) for j in range(20)] + ["shared:%d" % j for j in range(5)]
            c.call("MGET", *keys)
        # Writers modify each tracker's keys and the shared ones (twice:
        # the second write finds nothing to invalidate).
        for rnd in range(2):
            for i, w in enumerate(writers):
                for j in range(20):
                    w.call("SET", "k:%d:%d" % (i, j), rnd)
            for j in range(5):
                writers[j].call("INCR", "shared:%d" % j)
        for i, c in enumerate(trackers):
            want = {("k:%d:%d" % (i, j)).encode() for j in range(20)} | {("shared:%d" % j).encode() for j in range(5)}
            got = set()
            for _ in range(len(want)):
                v = push(c)
                assert len(v) == 1
                got.add(v[0])
            assert got == want
            quiet(c, 0.05)
        for x in trackers + writers:
            x.close()
    finally:
        assert s.stop() == 0


def test_cross_thread_redirect_chain():
    """Tracking clients redirect to targets on (very likely) other workers:
    each target gets exactly the invalidations of its trackers' keys.
    (Two trackers' messages reach a shared target through different
    workers, so their relative order is not fixed.)"""
    s = Server(threads=4) if MODE != "redis" else Server()
    try:
        targets = [conn(s, timeout=10) for _ in range(4)]
        tids = []
        for t in targets:
            tids.append(t.call("CLIENT", "ID"))
            t.call("SUBSCRIBE", "__redis__:invalidate")
        trackers = [conn(s, timeout=10) for _ in range(8)]
        for i, c in enumerate(trackers):
            c.call("CLIENT", "TRACKING", "on", "REDIRECT", tids[i % 4])
        w = conn(s)
        for rnd in range(5):
            for i, c in enumerate(trackers):
                c.call("GET", "r:%d" % i)
            for i in range(8):
                w.call("SET", "r:%d" % i, rnd)
            for ti, t in enumerate(targets):
                mine = [i for i in range(8) if i % 4 == ti]
                got = sorted(message(t)[0] for _ in mine)
                assert got == sorted(("r:%d" % i).encode() for i in mine)
                quiet(t, 0.02)
        for x in targets + trackers + [w]:
            x.close()
    finally:
        assert s.stop() == 0


def test_cross_thread_bcast_concurrent_writers():
    s = Server(threads=4) if MODE != "redis" else Server()
    try:
        subs = [conn(s, 3, timeout=10) for _ in range(6)]
        for c in subs:
            c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b:")
        nw, per = 4, 50

        def write(i):
            w = conn(s)
            for j in range(per):
                w.call("SET", "b:%d:%d" % (i, j), j)
                w.call("SET", "other:%d" % j, j)
            w.close()

        ths = [threading.Thread(target=write, args=(i,)) for i in range(nw)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        want = {("b:%d:%d" % (i, j)).encode() for i in range(nw) for j in range(per)}
        for c in subs:
            got = []
            while len(got) < len(want):
                got.extend(push(c))
            assert sorted(got) == sorted(want)
            quiet(c, 0.05)
        for c in subs:
            c.close()
    finally:
        assert s.stop() == 0


# ------------------------------------------------------------- scripts ---
def test_script_read_tracks_read_keys(server, clean):
    need_72(server)
    c, w = conn(server, 3), conn(server)
    c.call("CLIENT", "TRACKING", "on")
    w.call("MSET", "key1{t}", "1", "key2{t}", "1", "key3{t}", "1")
    # A script that reads nothing tracks nothing.
    c.call("EVAL", "redis.call('set', 'key3{t}', 'bar')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key1{t}", "2", "key2{t}", "2", "key3{t}", "2")
    quiet(c)
    # Redis 7.2+: the keys the script's commands read, not the declared ones.
    c.call("EVAL", "redis.call('get', 'key2{t}')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key1{t}", "3", "key2{t}", "3", "key3{t}", "3")
    assert push(c) == [b"key2{t}"]
    quiet(c)
    c.call("EVAL_RO", "redis.call('ping')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key1{t}", "4", "key2{t}", "4")
    quiet(c)
    c.call("EVAL_RO", "redis.call('get', 'key1{t}')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key1{t}", "5", "key2{t}", "5")
    assert push(c) == [b"key1{t}"]
    quiet(c)
    c.close()
    w.close()


def test_script_write_noloop(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on", "NOLOOP")
    c.call("SET", "key1", "1")
    assert c.call("GET", "key1") == b"1"
    c.call("EVAL", "return redis.call('set', 'key1', '2')", "1", "key1")
    assert c.call("GET", "key1") == b"2"
    c.close()


def test_script_write_invalidates_after_reply(server, clean):
    c = conn(server, 3)
    c.call("CLIENT", "TRACKING", "on")
    c.call("SET", "key1", "1")
    c.call("GET", "key1")
    assert c.call("EVAL", "return redis.call('incr', KEYS[1])", "1", "key1") == 2
    assert push(c) == [b"key1"]
    c.close()


def _cache_coherence(bcast):
    """Trackers keep a client-side cache (GET replies, dropped on
    invalidation, emptied on a null one) while writers on other
    connections modify the keys; once everything is quiet every cached
    value must equal the server's: no invalidation was lost, on any
    thread."""
    s = Server(threads=4) if MODE != "redis" else Server()
    nkeys, ntrack, nwrite, secs = 100, 6, 6, 1.5
    keys = ["cc:%d" % i for i in range(nkeys)]
    stop = threading.Event()
    errors = []

    def writer(seed):
        try:
            rnd = random.Random(seed)
            w = conn(s, timeout=10)
            n = 0
            while not stop.is_set():
                k = rnd.choice(keys)
                op = rnd.random()
                if op < 0.7:
                    w.call("SET", k, "%d:%d" % (seed, n))
                elif op < 0.85:
                    w.call("DEL", k)
                elif op < 0.95:
                    w.call("MSET", k, "m%d" % n, rnd.choice(keys), "m%d" % n)
                else:
                    w.call("SET", k, "x", "PX", rnd.randint(1, 30))
                n += 1
            w.close()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    def tracker(seed, out):
        try:
            rnd = random.Random(1000 + seed)
            c = conn(s, 3, timeout=10)
            if bcast:
                c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "cc:")
            else:
                c.call("CLIENT", "TRACKING", "on")
            cache = {}

            def handle(m):
                if isinstance(m, tuple) and m[0] == "push":
                    assert m[1][0] == b"invalidate", m
                    if m[1][1] is None:
                        cache.clear()
                    else:
                        for k in m[1][1]:
                            cache.pop(k.decode(), None)
                    return True
                return False

            def call(*a):
                c.send(*a)
                while True:
                    m = c.read()
                    if not handle(m):
                        return m

            while not stop.is_set():
                k = rnd.choice(keys)
                if k in cache:
                    continue
                cache[k] = call("GET", k)
            # Quiet: let in-flight invalidations arrive, then drain them.
            time.sleep(0.5)
            assert call("PING") == "PONG"
            out.append((c, cache, call))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    try:
        outs = []
        ths = [threading.Thread(target=writer, args=(i,)) for i in range(nwrite)]
        ths += [threading.Thread(target=tracker, args=(i, outs)) for i in range(ntrack)]
        for th in ths:
            th.start()
        time.sleep(secs)
        stop.set()
        for th in ths:
            th.join()
        assert not errors, errors
        assert len(outs) == ntrack
        check = conn(s)
        # The truth first (its lookups expire what is due, invalidating it),
        # then drain what that sent.
        truth = dict(zip(keys, check.call("MGET", *keys)))
        time.sleep(0.2)
        for c, cache, call in outs:
            assert call("PING") == "PONG"
            stale = {k: (v, truth[k]) for k, v in cache.items() if truth[k] != v}
            assert not stale, stale
            c.close()
        check.close()
    finally:
        stop.set()
        assert s.stop() == 0


def test_cross_thread_cache_coherence_default():
    _cache_coherence(bcast=False)


def test_cross_thread_cache_coherence_bcast():
    _cache_coherence(bcast=True)
