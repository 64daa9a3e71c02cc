"""Keyspace notifications (notify-keyspace-events), as Redis 7.x.

Every class (K E g $ l s h z x e t m n d A), CONFIG GET/SET and its
canonical output, a representative command of every type with the exact
sequence of events Redis emits (read from Redis's sources: t_string.c,
bitops.c, db.c, expire.c, t_list.c, t_hash.c, t_set.c, t_zset.c, sort.c),
expired events (lazy and active), and delivery across worker threads (the
module's server runs 4 threads, so the subscriber and the writers land on
different workers).

Sequences are read exactly: the subscriber also listens to a "sentinel"
channel that the writer publishes on after its commands, on the same
connection, so every event those commands produced comes before it and
nothing else may.  Reference: Debian's redis-server 7.0.15
(HOTKV_SERVER=redis); tests of 7.2+ / 7.4 behaviour are skipped there.
"""
import subprocess
import threading
import time

import pytest

from helpers import IS_REDIS, MODE, Resp, Server, _conftest, free_port, needs_commands, server_version, wait_until


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


@pytest.fixture(autouse=True)
def events_off(server):
    """Each test sets the classes it wants; none are left on."""
    yield
    c = Resp(server.port)
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    if not IS_REDIS:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    c.call("FLUSHALL")
    c.close()


def needs_version(r, v, what):
    if IS_REDIS and server_version(r) < v:
        pytest.skip("%s is Redis %s behaviour" % (what, ".".join(map(str, v))))


class Sub:
    """A RESP2 connection psubscribed to every keyspace channel, plus the
    sentinel channel."""

    def __init__(self, port, pattern="__key*__:*"):
        self.c = Resp(port)
        assert self.c.call("PSUBSCRIBE", pattern)[0] == b"psubscribe"
        assert self.c.call("SUBSCRIBE", "sentinel")[0] == b"subscribe"

    def read_msg(self):
        m = self.c.read()
        if m[0] == b"pmessage":
            return m[2].decode(), m[3].decode()
        assert m[0] == b"message", m
        return m[1].decode(), m[2].decode()

    def collect(self, tag="end"):
        """Messages before the sentinel message `tag`."""
        out = []
        while True:
            ch, data = self.read_msg()
            if ch == "sentinel" and data == tag:
                return out
            out.append((ch, data))

    def until_sentinel(self, writer, tag="end"):
        """Messages before the sentinel that `writer` (the connection the
        commands ran on) publishes now."""
        writer.execute_command("PUBLISH", "sentinel", tag)
        return self.collect(tag)

    def close(self):
        self.c.close()


@pytest.fixture
def sub(server):
    s = Sub(server.port)
    yield s
    s.close()


def setflags(r, flags):
    assert r.config_set("notify-keyspace-events", flags)


def K(key, *events, db=0):
    """Keyspace messages: key's channel, one per event."""
    return [("__keyspace@%d__:%s" % (db, key), ev) for ev in events]


def E(event, *keys, db=0):
    return [("__keyevent@%d__:%s" % (db, event), k) for k in keys]


def ks(msgs):
    """(key, event) pairs of the keyspace messages only."""
    out = []
    for ch, data in msgs:
        if ch.startswith("__keyspace@"):
            out.append((ch.split("__:", 1)[1], data))
    return out


# --------------------------------------------------------------- config ---
@pytest.mark.parametrize("given,shown", [
    ("KEA", "AKE"), ("gKE", "gKE"), ("$lshzxeKE", "$lshzxeKE"), ("KA", "AK"),
    ("EA", "AE"), ("AKEm", "AKEm"), ("Em", "Em"), ("xgK", "gxK"), ("nK", "nK"),
    ("tdK", "tdK"), ("", ""), ("KK", "K"), ("g$lshzxetdKE", "AKE"),
    # As Redis: 'n' is not shown next to 'A'.
    ("An", "A"),
])
def test_config_canonical_output(r, given, shown):
    setflags(r, given)
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}


def test_config_bad_class(resp):
    resp.call("CONFIG", "SET", "notify-keyspace-events", "KE")
    err = resp.call("CONFIG", "SET", "notify-keyspace-events", "KEQ")
    assert err == ("error", "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
                            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    # Nothing changed.
    assert resp.call("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"KE"]
    assert resp.call("CONFIG", "GET", "notify-keyspace-*")[1] == b"KE"


def test_config_set_is_all_or_nothing(resp):
    resp.call("CONFIG", "SET", "hz", "10")
    err = resp.call("CONFIG", "SET", "hz", "20", "notify-keyspace-events", "KEQ")
    assert err[0] == "error" and "Invalid event class character" in err[1]
    assert resp.call("CONFIG", "GET", "hz") == [b"hz", b"10"]
    assert resp.call("CONFIG", "SET", "hz", "10", "notify-keyspace-events", "Elg") == "OK"
    assert resp.call("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"glE"]


def test_config_at_startup():
    s = Server("--notify-keyspace-events", "KEA")
    try:
        c = s.client(decode_responses=True)
        assert c.config_get("notify-keyspace-events")["notify-keyspace-events"] == "AKE"
        p = Sub(s.port)
        c.set("k", "v")
        assert p.until_sentinel(c) == K("k", "set") + E("set", "k")
        p.close()
        c.close()
    finally:
        assert s.stop() == 0


def test_config_file_bad_class_refuses_to_start(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("notify-keyspace-events KEQ\n")
    binary = "redis-server" if IS_REDIS else _conftest.BIN
    p = subprocess.run([binary, str(conf), "--port", str(free_port()), "--bind", "127.0.0.1"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert "Invalid event class character. Use 'Ag$lshzxeKEtmdn'." in (p.stdout + p.stderr)


# ------------------------------------------------------- basic delivery ---
def test_keyspace_and_keyevent(r, sub):
    setflags(r, "KEA")
    r.set("foo", "bar")
    assert sub.until_sentinel(r) == K("foo", "set") + E("set", "foo")
    setflags(r, "KA")
    r.set("foo", "bar")
    assert sub.until_sentinel(r) == K("foo", "set")
    setflags(r, "EA")
    r.set("foo", "bar")
    assert sub.until_sentinel(r) == E("set", "foo")
    # Classes without K or E publish nothing; K or E without the class too.
    for flags in ("A", "KE", "KEl", ""):
        setflags(r, flags)
        r.set("foo", "bar")
        assert sub.until_sentinel(r) == []


def test_exact_channel_subscription_and_db(server, r):
    setflags(r, "KEA")
    c = Resp(server.port)
    assert c.call("SUBSCRIBE", "__keyevent@3__:set", "__keyspace@3__:k3")[0] == b"subscribe"
    c.read()
    w = server.client(decode_responses=True, db=3)
    w.set("k3", "v")
    w.set("other", "v")
    w.delete("k3")
    assert c.read() == [b"message", b"__keyspace@3__:k3", b"set"]
    assert c.read() == [b"message", b"__keyevent@3__:set", b"k3"]
    assert c.read() == [b"message", b"__keyevent@3__:set", b"other"]
    assert c.read() == [b"message", b"__keyspace@3__:k3", b"del"]
    w.close()
    c.close()


def test_binary_key(rb, server):
    rb.config_set("notify-keyspace-events", "KEA")
    c = Resp(server.port)
    c.call("PSUBSCRIBE", "*")
    key = b"bin\x00\xffkey"
    rb.set(key, b"x")
    assert c.read() == [b"pmessage", b"*", b"__keyspace@0__:" + key, b"set"]
    assert c.read() == [b"pmessage", b"*", b"__keyevent@0__:set", key]
    c.close()


def test_reply_off_subscriber_still_receives(server, r):
    setflags(r, "KA")
    c = Resp(server.port)
    c.send("CLIENT", "REPLY", "OFF")
    assert c.call("PSUBSCRIBE", "__keyspace@0__:*")[0] == b"psubscribe"
    r.set("foo", "bar")
    assert c.read() == [b"pmessage", b"__keyspace@0__:*", b"__keyspace@0__:foo", b"set"]
    c.close()


# ------------------------------------------------------------- generic ---
def test_generic_events(r, sub):
    setflags(r, "KEg")
    r.set("foo", "bar")
    r.expire("foo", 100)
    r.persist("foo")
    r.persist("foo")               # no TTL: nothing
    r.pexpire("foo", 100000)
    r.delete("foo", "missing")
    assert sub.until_sentinel(r) == (K("foo", "expire") + E("expire", "foo") + K("foo", "persist") +
                                     E("persist", "foo") + K("foo", "expire") + E("expire", "foo") +
                                     K("foo", "del") + E("del", "foo"))


def test_generic_rename_move_copy(r, sub):
    setflags(r, "Kg")
    r.set("a", "1")
    r.rename("a", "b")
    r.set("c", "2")
    r.renamenx("b", "c")           # c exists: nothing
    r.move("b", 1)
    r.execute_command("COPY", "c", "d")
    r.execute_command("COPY", "c", "d")   # d exists: nothing
    r.execute_command("COPY", "c", "x", "DB", "2")
    r.unlink("c", "d")
    assert ks(sub.until_sentinel(r)) == [
        ("a", "rename_from"), ("b", "rename_to"), ("b", "move_from"), ("b", "move_to"), ("d", "copy_to"),
        ("x", "copy_to"), ("c", "del"), ("d", "del")]
    # move_to / copy_to are events of the destination database.
    setflags(r, "Eg")
    r.set("m", "1")
    r.move("m", 5)
    r.set("c2", "1")
    r.execute_command("COPY", "c2", "n", "DB", "5")
    r.rename("c2", "c2")           # same key: nothing
    assert sub.until_sentinel(r) == E("move_from", "m") + E("move_to", "m", db=5) + E("copy_to", "n", db=5)


def test_expire_in_the_past_deletes(r, sub):
    setflags(r, "KA")
    r.set("k", "v")
    r.expire("k", -1)
    r.set("k2", "v")
    r.pexpireat("k2", 1)
    assert ks(sub.until_sentinel(r)) == [("k", "set"), ("k", "del"), ("k2", "set"), ("k2", "del")]


def test_new_key_events(r, sub):
    setflags(r, "En")
    r.set("foo", "bar")
    r.set("foo", "baz")            # exists: no "new"
    r.lpush("list", "a")
    r.lpush("list", "b")
    r.hset("h", "f", "v")
    r.sadd("s", "m")
    r.zadd("z", {"m": 1})
    r.append("ap", "x")
    r.incr("n")
    assert sub.until_sentinel(r) == E("new", "foo", "list", "h", "s", "z", "ap", "n")


def test_new_key_on_rename_and_copy_over_existing(r, sub):
    # Redis deletes the destination, then adds it: a "new" event each time.
    r.set("src", "1")
    r.set("dst", "2")
    setflags(r, "Kgn")
    r.rename("src", "dst")
    r.execute_command("COPY", "dst", "other", "REPLACE")
    r.set("other2", "x")
    r.execute_command("COPY", "dst", "other2", "REPLACE")
    assert ks(sub.until_sentinel(r)) == [
        ("dst", "new"), ("src", "rename_from"), ("dst", "rename_to"),
        ("other", "new"), ("other", "copy_to"),
        ("other2", "new"), ("other2", "new"), ("other2", "copy_to")]


# -------------------------------------------------------------- strings ---
def test_string_events(r, sub):
    setflags(r, "KA")
    r.set("s", "1", ex=100)        # set, then expire
    r.setex("s2", 100, "v")
    r.psetex("s3", 100000, "v")
    r.setnx("s", "x")              # exists: nothing
    r.setnx("s4", "x")
    r.getset("s4", "y")
    r.mset({"m1": "a", "m2": "b"})
    r.msetnx({"m1": "a", "m3": "c"})   # m1 exists: nothing
    r.msetnx({"m4": "a", "m5": "c"})
    r.append("s4", "z")
    r.setrange("s4", 5, "w")
    r.setrange("s4", 0, "")        # empty value: nothing
    r.incr("n")
    r.decr("n")
    r.incrby("n", 5)
    r.decrby("n", 2)
    r.incrbyfloat("n", 1.5)
    r.getdel("s4")
    r.getdel("s4")                 # gone: nothing
    r.getex("s", ex=50)
    r.getex("s", persist=True)
    r.getex("s", persist=True)     # no TTL: nothing
    r.getex("s")                   # no option: nothing
    assert ks(sub.until_sentinel(r)) == [
        ("s", "set"), ("s", "expire"), ("s2", "set"), ("s2", "expire"), ("s3", "set"), ("s3", "expire"),
        ("s4", "set"), ("s4", "set"), ("m1", "set"), ("m2", "set"), ("m4", "set"), ("m5", "set"),
        ("s4", "append"), ("s4", "setrange"), ("n", "incrby"), ("n", "incrby"), ("n", "incrby"),
        ("n", "incrby"), ("n", "incrbyfloat"), ("s4", "del"), ("s", "expire"), ("s", "persist")]


def test_set_options(r, sub):
    setflags(r, "KA")
    r.set("k", "v", nx=True)
    r.set("k", "v", nx=True)       # not set: nothing
    r.set("k", "w", xx=True, keepttl=True)
    r.set("nope", "w", xx=True)    # not set: nothing
    r.set("k", "x", get=True)
    r.set("k", "y", px=100000)
    r.getex("k", pxat=1)           # in the past: deleted
    assert ks(sub.until_sentinel(r)) == [
        ("k", "set"), ("k", "set"), ("k", "set"), ("k", "set"), ("k", "expire"), ("k", "del")]


def test_bit_events(r, sub):
    setflags(r, "KA")
    r.setbit("b", 7, 1)
    r.setbit("b", 7, 0)
    r.execute_command("BITFIELD", "bf", "SET", "u8", 0, 200, "GET", "u8", 0)
    r.execute_command("BITFIELD", "bf", "GET", "u8", 0)      # read only: nothing
    r.execute_command("BITFIELD", "bf", "INCRBY", "u8", 0, 1)
    r.set("x", "abc")
    r.bitop("AND", "dest", "x", "b")
    r.bitop("OR", "dest", "missing1", "missing2")            # empty: dest deleted
    r.bitop("OR", "dest", "missing1", "missing2")            # nothing to delete
    assert ks(sub.until_sentinel(r)) == [
        ("b", "setbit"), ("b", "setbit"), ("bf", "setbit"), ("bf", "setbit"), ("x", "set"),
        ("dest", "set"), ("dest", "del")]


def test_setbit_without_change_is_silent(r, sub):
    needs_version(r, (7, 2, 0), "no setbit event for an unchanged bit")
    setflags(r, "KA")
    r.setbit("b", 3, 1)
    r.setbit("b", 3, 1)            # unchanged
    r.setbit("b", 100, 0)          # grows the string: an event
    r.execute_command("BITFIELD", "b", "SET", "u4", 0, 1)    # bits 0..3 are 0001 already
    assert ks(sub.until_sentinel(r)) == [("b", "setbit"), ("b", "setbit")]


# ---------------------------------------------------------------- lists ---
def test_list_events(r, sub):
    setflags(r, "KEl")
    r.delete("mylist")
    r.lpush("mylist", "a")
    r.rpush("mylist", "a")
    r.rpop("mylist")
    assert sub.until_sentinel(r) == (K("mylist", "lpush") + E("lpush", "mylist") + K("mylist", "rpush") +
                                     E("rpush", "mylist") + K("mylist", "rpop") + E("rpop", "mylist"))


def test_list_commands(r, sub):
    setflags(r, "KA")
    r.rpush("l", "a", "b", "c", "d")
    r.lpushx("l", "z")
    r.rpushx("nolist", "z")            # missing: nothing
    r.linsert("l", "BEFORE", "b", "x")
    r.linsert("l", "BEFORE", "nope", "x")  # no pivot: nothing
    r.lset("l", 0, "y")
    r.lrem("l", 0, "nope")             # nothing removed: nothing
    r.lrem("l", 1, "x")
    r.ltrim("l", 0, 10)                # nothing removed: still an event
    r.lpop("l", 2)
    r.rpop("l")
    r.execute_command("LMPOP", 2, "nolist", "l", "LEFT", "COUNT", 10)   # empties it
    assert ks(sub.until_sentinel(r)) == [
        ("l", "rpush"), ("l", "lpush"), ("l", "linsert"), ("l", "lset"), ("l", "lrem"), ("l", "ltrim"),
        ("l", "lpop"), ("l", "rpop"), ("l", "lpop"), ("l", "del")]


def test_ltrim_to_empty(r, sub):
    setflags(r, "KA")
    r.rpush("l", "a", "b")
    r.ltrim("l", 5, 10)
    assert ks(sub.until_sentinel(r)) == [("l", "rpush"), ("l", "ltrim"), ("l", "del")]


def test_lmove_order(r, sub):
    # The push to the destination comes first, then the pop from the source.
    setflags(r, "KA")
    r.rpush("src", "a", "b")
    r.lmove("src", "dst", "LEFT", "RIGHT")
    r.rpoplpush("src", "dst")          # empties src
    r.lmove("dst", "dst", "LEFT", "RIGHT")   # rotation
    assert ks(sub.until_sentinel(r)) == [
        ("src", "rpush"), ("dst", "rpush"), ("src", "lpop"), ("dst", "lpush"), ("src", "rpop"),
        ("src", "del"), ("dst", "rpush"), ("dst", "lpop")]


def test_blocking_pop_served_later(server, r, sub):
    setflags(r, "KA")
    b = Resp(server.port)
    b.send("BLPOP", "bl", 5)
    assert wait_until(lambda: r.info("clients")["blocked_clients"] == 1)
    r.rpush("bl", "x")
    assert b.read() == [b"bl", b"x"]
    # The served pop's events are published by whichever thread served it;
    # a second write on the writer connection orders the sentinel after.
    assert wait_until(lambda: r.exists("bl") == 0)
    assert ks(sub.until_sentinel(r)) == [("bl", "rpush"), ("bl", "lpop"), ("bl", "del")]
    b.close()


def test_blmove_served_later(server, r, sub):
    setflags(r, "KA")
    b = Resp(server.port)
    b.send("BLMOVE", "from", "to", "RIGHT", "LEFT", 5)
    assert wait_until(lambda: r.info("clients")["blocked_clients"] == 1)
    r.rpush("from", "x")
    assert b.read() == b"x"
    assert wait_until(lambda: r.exists("to") == 1)
    assert ks(sub.until_sentinel(r)) == [("from", "rpush"), ("to", "lpush"), ("from", "rpop"), ("from", "del")]
    b.close()


def test_blocking_pop_immediate(r, sub):
    setflags(r, "KA")
    r.rpush("q", "1", "2")
    r.blpop(["empty", "q"], 1)
    r.execute_command("BLMPOP", 1, 1, "q", "RIGHT")
    assert ks(sub.until_sentinel(r)) == [("q", "rpush"), ("q", "lpop"), ("q", "rpop"), ("q", "del")]


# ----------------------------------------------------------------- sets ---
def test_set_events(r, sub):
    setflags(r, "Ks")
    r.delete("myset")
    r.sadd("myset", "a", "b", "c", "d")
    r.srem("myset", "x")
    r.sadd("myset", "x", "y", "z")
    r.srem("myset", "x")
    r.sadd("myset", "y")           # nothing added: nothing
    assert ks(sub.until_sentinel(r)) == [("myset", "sadd"), ("myset", "sadd"), ("myset", "srem")]


def test_set_commands(r, sub):
    setflags(r, "KA")
    r.sadd("s", "a", "b", "c")
    r.spop("s")
    r.spop("s", 5)                 # takes the rest: deleted
    r.sadd("s1", "a", "b")
    r.smove("s1", "s2", "a")
    r.smove("s1", "s2", "b")       # empties s1
    r.smove("s2", "s3", "nope")    # not a member: nothing
    r.sadd("s3", "a")
    r.smove("s3", "s2", "a")       # already in s2: srem + del, no sadd
    r.srem("s2", "a", "b")         # empties s2
    assert ks(sub.until_sentinel(r)) == [
        ("s", "sadd"), ("s", "spop"), ("s", "spop"), ("s", "del"), ("s1", "sadd"),
        ("s1", "srem"), ("s2", "sadd"), ("s1", "srem"), ("s1", "del"), ("s2", "sadd"),
        ("s3", "sadd"), ("s3", "srem"), ("s3", "del"), ("s2", "srem"), ("s2", "del")]


def test_set_store_commands(r, sub):
    setflags(r, "KA")
    r.sadd("a", "1", "2", "3")
    r.sadd("b", "2", "3", "4")
    r.sinterstore("i", "a", "b")
    r.sunionstore("u", "a", "b")
    r.sdiffstore("d", "a", "b")
    r.sinterstore("i", "a", "missing")     # empty: i deleted
    r.sdiffstore("d", "a", "a")            # empty: d deleted
    r.sunionstore("u2", "missing")         # empty, nothing to delete
    assert ks(sub.until_sentinel(r)) == [
        ("a", "sadd"), ("b", "sadd"), ("i", "sinterstore"), ("u", "sunionstore"), ("d", "sdiffstore"),
        ("i", "del"), ("d", "del")]


# --------------------------------------------------------------- hashes ---
def test_hash_events(r, sub):
    setflags(r, "Kh")
    r.hset("myhash", mapping={"yes": 1, "no": 0})
    r.hincrby("myhash", "yes", 10)
    assert ks(sub.until_sentinel(r)) == [("myhash", "hset"), ("myhash", "hincrby")]


def test_hash_commands(r, sub):
    setflags(r, "KA")
    r.hset("h", "a", 1)
    r.execute_command("HMSET", "h", "b", 2)
    r.hsetnx("h", "a", 5)          # exists: nothing
    r.hsetnx("h", "c", 5)
    r.hincrbyfloat("h", "c", 1.5)
    r.hdel("h", "nope")            # nothing deleted: nothing
    r.hdel("h", "a", "b")
    r.hdel("h", "c")               # last field: the key goes too
    assert ks(sub.until_sentinel(r)) == [
        ("h", "hset"), ("h", "hset"), ("h", "hset"), ("h", "hincrbyfloat"), ("h", "hdel"),
        ("h", "hdel"), ("h", "del")]


def test_hash_field_expiry_commands(r, sub):
    needs_version(r, (7, 4, 0), "hash field expiry")
    setflags(r, "KA")
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 2, "a", "b")
    r.execute_command("HEXPIRE", "h", 100, "NX", "FIELDS", 1, "a")    # condition not met: nothing
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "c")              # no TTL: nothing
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 1, "a")          # in the past: deleted
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 2, "b", "c")     # the rest: key deleted
    assert ks(sub.until_sentinel(r)) == [
        ("h", "hset"), ("h", "hexpire"), ("h", "hpersist"), ("h", "hdel"), ("h", "hdel"), ("h", "del")]


def test_hash_field_expired_lazy(r, sub):
    needs_version(r, (7, 4, 0), "hash field expiry")
    if not IS_REDIS:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    setflags(r, "KA")
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 2, "a", "b")
    time.sleep(0.1)
    assert r.hget("h", "a") is None          # lazily removed: hexpired
    assert r.hmget("h", "b", "c") == [None, "3"]  # HMGET: one hexpired for all
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "c")
    time.sleep(0.1)
    assert r.hexists("h", "c") is False      # the last field: hexpired, del
    assert ks(sub.until_sentinel(r)) == [
        ("h", "hset"), ("h", "hexpire"), ("h", "hexpired"), ("h", "hexpired"), ("h", "hexpire"),
        ("h", "hexpired"), ("h", "del")]


def test_hash_field_expired_active(r, sub):
    needs_version(r, (7, 4, 0), "hash field expiry")
    setflags(r, "Kh")
    r.hset("h", mapping={"a": 1, "b": 2})
    r.hset("h2", mapping={"a": 1})
    r.execute_command("HPEXPIRE", "h", 50, "FIELDS", 1, "a")
    r.execute_command("HPEXPIRE", "h2", 50, "FIELDS", 1, "a")
    got = []
    while len(got) < 6:
        got.append(sub.read_msg())
    assert sorted(got[:4]) == sorted(K("h", "hset") + K("h2", "hset") + K("h", "hexpire") + K("h2", "hexpire"))
    assert sorted(got[4:]) == sorted(K("h", "hexpired") + K("h2", "hexpired"))
    # h2 emptied: the key went (with a "del" of class g, off here).
    assert wait_until(lambda: r.exists("h2") == 0)
    assert r.hgetall("h") == {"b": "2"}


# ---------------------------------------------------------- sorted sets ---
def test_zset_events(r, sub):
    setflags(r, "Kz")
    r.delete("myzset")
    r.zadd("myzset", {"a": 1, "b": 2})
    r.zrem("myzset", "x")
    r.zadd("myzset", {"x": 3, "y": 4, "z": 5})
    r.zrem("myzset", "x")
    assert ks(sub.until_sentinel(r)) == [("myzset", "zadd"), ("myzset", "zadd"), ("myzset", "zrem")]


def test_zset_commands(r, sub):
    setflags(r, "KA")
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6})
    r.zadd("z", {"a": 1})              # no change: nothing
    r.zadd("z", {"a": 10}, ch=True)    # updated: zadd
    r.zadd("z", {"q": 1}, xx=True)     # not there: nothing
    r.zincrby("z", 2, "b")
    r.zremrangebyrank("z", 0, 0)
    r.zremrangebyscore("z", 100, 200)  # nothing removed: nothing
    r.zremrangebyscore("z", 5, 5)
    r.zadd("lex", {"a": 0, "b": 0, "c": 0})
    r.zremrangebylex("lex", "[a", "[b")
    r.zpopmin("z")
    r.zpopmax("z", 2)
    r.execute_command("ZMPOP", 1, "z", "MIN", "COUNT", 10)   # empties z
    r.zrem("lex", "c")                                       # empties lex
    assert ks(sub.until_sentinel(r)) == [
        ("z", "zadd"), ("z", "zadd"), ("z", "zincr"), ("z", "zremrangebyrank"), ("z", "zremrangebyscore"),
        ("lex", "zadd"), ("lex", "zremrangebylex"), ("z", "zpopmin"), ("z", "zpopmax"), ("z", "zpopmin"),
        ("z", "del"), ("lex", "zrem"), ("lex", "del")]


def test_zset_store_commands(r, sub):
    setflags(r, "KA")
    r.zadd("a", {"x": 1, "y": 2})
    r.zadd("b", {"y": 3, "z": 4})
    r.zunionstore("u", ["a", "b"])
    r.zinterstore("i", ["a", "b"])
    r.execute_command("ZDIFFSTORE", "d", 2, "a", "b")
    r.execute_command("ZRANGESTORE", "r", "a", 0, -1)
    r.zinterstore("i", ["a", "missing"])         # empty: deleted
    r.execute_command("ZRANGESTORE", "r", "a", 5, 10)   # empty: deleted
    r.execute_command("ZDIFFSTORE", "d2", 1, "missing")  # empty, nothing to delete
    assert ks(sub.until_sentinel(r)) == [
        ("a", "zadd"), ("b", "zadd"), ("u", "zunionstore"), ("i", "zinterstore"), ("d", "zdiffstore"),
        ("r", "zrangestore"), ("i", "del"), ("r", "del")]


def test_bzpop_served_later(server, r, sub):
    setflags(r, "KA")
    b = Resp(server.port)
    b.send("BZPOPMIN", "bz", 5)
    assert wait_until(lambda: r.info("clients")["blocked_clients"] == 1)
    r.zadd("bz", {"m": 1})
    assert b.read() == [b"bz", b"m", b"1"]
    assert wait_until(lambda: r.exists("bz") == 0)
    assert ks(sub.until_sentinel(r)) == [("bz", "zadd"), ("bz", "zpopmin"), ("bz", "del")]
    b.close()


# -------------------------------------------------------------- streams ---
def test_stream_events(server, r, sub):
    needs_commands(server, "XADD", "XGROUP", "XREADGROUP", "XCLAIM", "XAUTOCLAIM")
    setflags(r, "Kt")
    r.execute_command("XGROUP", "CREATE", "mystream", "mygroup", "$", "MKSTREAM")
    r.execute_command("XGROUP", "CREATECONSUMER", "mystream", "mygroup", "Bob")
    sid = r.execute_command("XADD", "mystream", "1", "field1", "A")
    r.execute_command("XREADGROUP", "GROUP", "mygroup", "Alice", "STREAMS", "mystream", ">")
    r.execute_command("XCLAIM", "mystream", "mygroup", "Mike", "0", sid, "FORCE")
    r.execute_command("XGROUP", "DELCONSUMER", "mystream", "mygroup", "Lee")    # no such consumer
    r.execute_command("XAUTOCLAIM", "mystream", "mygroup", "Bob", "0", sid)      # Bob exists
    r.execute_command("XGROUP", "DELCONSUMER", "mystream", "mygroup", "Bob")
    r.execute_command("XADD", "mystream", "2", "f", "v")
    r.execute_command("XDEL", "mystream", "9-9")                                  # nothing deleted
    r.execute_command("XDEL", "mystream", "2")
    r.execute_command("XTRIM", "mystream", "MAXLEN", "0")
    r.execute_command("XSETID", "mystream", "5")
    r.execute_command("XGROUP", "SETID", "mystream", "mygroup", "0")
    r.execute_command("XGROUP", "DESTROY", "mystream", "mygroup")
    assert ks(sub.until_sentinel(r)) == [
        ("mystream", "xgroup-create"), ("mystream", "xgroup-createconsumer"), ("mystream", "xadd"),
        ("mystream", "xgroup-createconsumer"), ("mystream", "xgroup-createconsumer"),
        ("mystream", "xgroup-delconsumer"), ("mystream", "xadd"), ("mystream", "xdel"), ("mystream", "xtrim"),
        ("mystream", "xsetid"), ("mystream", "xgroup-setid"), ("mystream", "xgroup-destroy")]


# ----------------------------------------------------------------- sort ---
def test_sort_store(r, sub):
    setflags(r, "KA")
    r.rpush("src", 3, 1, 2)
    r.sort("src", store="dst")
    r.sort("missing", store="dst")    # empty: dst deleted
    r.sort("missing", store="dst")    # nothing to delete
    assert ks(sub.until_sentinel(r)) == [("src", "rpush"), ("dst", "sortstore"), ("dst", "del")]


# -------------------------------------------------------------- expired ---
def test_expired_active(r, sub):
    setflags(r, "Ex")
    r.psetex("foo", 100, 1)
    assert sub.read_msg() == ("__keyevent@0__:expired", "foo")


def test_expired_lazy(r, sub):
    # HotKV: the sweeper is stopped, so the lookups expire the keys.
    # redis-server (no DEBUG): its sweeper may get there first; the events
    # are the same.
    if not IS_REDIS:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    setflags(r, "KEx")
    r.psetex("foo", 30, 1)
    time.sleep(0.1)
    assert r.get("foo") is None
    assert r.get("foo") is None        # already gone: no second event
    assert sub.until_sentinel(r) == K("foo", "expired") + E("expired", "foo")
    r.set("bar", "x", px=30)
    time.sleep(0.1)
    assert r.exists("bar") == 0
    assert sub.until_sentinel(r) == K("bar", "expired") + E("expired", "bar")


def test_expired_on_write_lookup(r, sub):
    if not IS_REDIS:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    setflags(r, "KA")
    r.set("k", "old", px=30)
    time.sleep(0.1)
    r.set("k", "new")                  # the stale key expires first
    r.lpush("l", "x")
    r.pexpire("l", 30)
    time.sleep(0.1)
    r.rpush("l", "y")                  # expired list: a new one
    assert ks(sub.until_sentinel(r)) == [
        ("k", "set"), ("k", "expire"), ("k", "expired"), ("k", "set"), ("l", "lpush"), ("l", "expire"),
        ("l", "expired"), ("l", "rpush")]


def test_expired_not_sent_when_class_off(r, sub):
    setflags(r, "KEg")
    r.psetex("foo", 20, 1)
    time.sleep(0.15)
    assert r.exists("foo") == 0
    assert sub.until_sentinel(r) == K("foo", "expire") + E("expire", "foo")


# -------------------------------------------------------------- keymiss ---
def test_keymiss(r, sub):
    setflags(r, "KEm")
    r.get("nokey")
    r.set("k", "v")
    r.get("k")
    r.hget("nohash", "f")
    assert sub.until_sentinel(r) == (K("nokey", "keymiss") + E("keymiss", "nokey") +
                                     K("nohash", "keymiss") + E("keymiss", "nohash"))
    # Not part of A.
    setflags(r, "KA")
    r.get("nokey")
    assert sub.until_sentinel(r) == []


def test_keymiss_read_lookups(r, sub):
    """Every read lookup that misses, the keyspace commands included; not
    writes, not OBJECT."""
    setflags(r, "Em")
    r.exists("m1")
    r.type("m2")
    r.ttl("m3")
    r.touch("m4")
    r.object("encoding", "m5")
    r.pttl("m6")
    r.execute_command("COPY", "m7", "x")
    r.sinter("m8", "m9")
    r.execute_command("LCS", "m10", "m11")
    r.lpop("m12")
    r.sadd("m13", "a")
    try:
        r.rename("m14", "x")
    except Exception:
        pass
    r.mget("m15", "m16")
    assert sub.until_sentinel(r) == E("keymiss", "m1", "m2", "m3", "m4", "m6", "m7", "m8", "m9", "m10", "m11",
                                      "m15", "m16")


# ------------------------------------------------------ threads, RESP3 ---
def test_cross_thread_order_per_key(server, r, sub):
    """Writers on many connections (so on several worker threads) take
    turns on one key; the subscriber sees the events in the order the
    writes were made, whichever thread made them."""
    setflags(r, "KA")
    writers = [server.client(decode_responses=True) for _ in range(8)]
    expect = []
    for i in range(200):
        w = writers[i % len(writers)]
        if i % 3 == 0:
            w.set("shared", i)
            expect.append(("shared", "set"))
        elif i % 3 == 1:
            w.append("shared", "x")
            expect.append(("shared", "append"))
        else:
            w.delete("shared")
            expect.append(("shared", "del"))
    got = []
    while len(got) < len(expect):
        got.append(sub.read_msg())
    assert ks(got) == expect
    assert sub.until_sentinel(r) == []
    for w in writers:
        w.close()


def test_cross_thread_concurrent_writers(server, r, sub):
    """Concurrent writers on their own keys: every event arrives, each
    writer's in its order."""
    setflags(r, "KA")
    nw, n = 8, 300
    errors = []

    def work(k):
        try:
            c = server.client(decode_responses=True)
            for i in range(n):
                c.incr("ctr%d" % k)
            c.close()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(nw)]
    for t in ts:
        t.start()
    got = []
    while len(got) < nw * n:
        got.append(sub.read_msg())
    for t in ts:
        t.join()
    assert not errors
    per = {}
    for key, ev in ks(got):
        assert ev == "incrby"
        per[key] = per.get(key, 0) + 1
    assert per == {"ctr%d" % k: n for k in range(nw)}
    assert sub.until_sentinel(r) == []


def test_many_subscribers_across_threads(server, r):
    setflags(r, "KA")
    subs = [Sub(server.port, "__keyspace@0__:*") for _ in range(12)]
    r.set("fan", "out")
    r.delete("fan")
    r.execute_command("PUBLISH", "sentinel", "end")
    for s in subs:
        assert s.collect("end") == K("fan", "set", "del")
    for s in subs:
        s.close()


def test_resp3_subscriber_writing_gets_push_after_reply(server, r):
    needs_version(r, (7, 2, 0), "pushes to the executing client after its reply")
    setflags(r, "KA")
    c = Resp(server.port)
    c.call("HELLO", "3")
    assert c.call("PSUBSCRIBE", "__keyspace@0__:*") == ("push", [b"psubscribe", b"__keyspace@0__:*", 1])
    assert c.call("SET", "self", "1") == "OK"
    assert c.read() == ("push", [b"pmessage", b"__keyspace@0__:*", b"__keyspace@0__:self", b"set"])
    # A multi-bulk reply is not split by the push either.
    assert c.call("RPUSH", "selfl", "a", "b") == 2
    assert c.read() == ("push", [b"pmessage", b"__keyspace@0__:*", b"__keyspace@0__:selfl", b"rpush"])
    assert c.call("LPOP", "selfl", 2) == [b"a", b"b"]
    assert c.read() == ("push", [b"pmessage", b"__keyspace@0__:*", b"__keyspace@0__:selfl", b"lpop"])
    assert c.read() == ("push", [b"pmessage", b"__keyspace@0__:*", b"__keyspace@0__:selfl", b"del"])
    c.close()


def test_multi_exec_events_in_order(r, sub):
    setflags(r, "KA")
    p = r.pipeline(transaction=True)
    p.set("t1", "a")
    p.lpush("t2", "x")
    p.delete("t1")
    p.execute()
    assert ks(sub.until_sentinel(r)) == [("t1", "set"), ("t2", "lpush"), ("t1", "del")]


def test_flush_and_swapdb_emit_nothing(r, sub):
    setflags(r, "KA")
    r.set("a", 1)
    r.flushdb()
    r.set("b", 1)
    r.swapdb(0, 1)
    r.flushall()
    assert ks(sub.until_sentinel(r)) == [("a", "set"), ("b", "set")]
