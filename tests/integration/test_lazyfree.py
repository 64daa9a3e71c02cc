"""Lazy free (issues 4 and 7).

Freeing a huge collection never has to stall a worker: UNLINK always hands
a big value (free effort > 64 allocations) to the lazy-free thread, and
Redis 7.0's lazyfree-* configs decide for the other ways a key goes away:
lazyfree-lazy-user-del (DEL), -server-del (overwrites: SET, RENAME onto an
existing key, SPOP emptying a set...), -expire (lazy and active expiry,
EXPIRE with a time in the past), -eviction, -user-flush (the default of
FLUSHALL/FLUSHDB without ASYNC/SYNC).  All of them default to no.
FLUSHALL/FLUSHDB ASYNC free the whole keyspace on the lazy-free thread and
count each key as one lazily freed object (as Redis counts a database
emptied in the background); FLUSH SYNC frees everything inline.

INFO memory lazyfreed_objects counts the objects freed so far (CONFIG
RESETSTAT zeroes it) and lazyfree_pending_objects the ones queued; the
checks follow Redis's tests/unit/lazyfree.tcl.  Every test here runs
against redis-server 7.0 too (HOTKV_SERVER=redis)."""
import os
import time

import pytest

from helpers import IS_REDIS, Server, needs_commands, requires

BIG = 50000


@pytest.fixture(scope="module")
def server():
    """The module's server, with DEBUG allowed (redis-server refuses it
    unless enable-debug-command is set; HotKV allows it and has no such
    option): DEBUG SET-ACTIVE-EXPIRE 0 isolates lazy expiry."""
    if os.environ.get("HOTKV_PORT"):
        pytest.skip("needs its own server (DEBUG SET-ACTIVE-EXPIRE)")
    s = Server("--enable-debug-command", "yes") if IS_REDIS else Server()
    yield s
    assert s.stop() == 0, "server exited badly, see %s" % s.dir


def info_field(r, section, name):
    info = r.info(section)
    assert name in info, "INFO %s has no %s" % (section, name)
    return int(info[name])


def lazyfreed(r):
    return info_field(r, "memory", "lazyfreed_objects")


def wait_freed(r, before, n=1, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if lazyfreed(r) >= before + n and r.info("memory")["lazyfree_pending_objects"] == 0:
            return
        time.sleep(0.01)
    raise AssertionError("lazy free did not happen: %d -> %d" % (before, lazyfreed(r)))


def fill(r, kind, key, n=BIG):
    needs_commands(r, CMD[kind])
    if kind == "list" and n == BIG:
        n = BIG * 4  # free effort of a list = its nodes (8 KB each)
    p = r.pipeline(transaction=False)
    for i in range(0, n, 1000):
        chunk = ["m%d" % j for j in range(i, min(n, i + 1000))]
        if kind == "list":
            p.rpush(key, *chunk)
        elif kind == "set":
            p.sadd(key, *chunk)
        elif kind == "hash":
            p.hset(key, mapping={m: "v" for m in chunk})
        elif kind == "zset":
            p.zadd(key, {m: j for j, m in enumerate(chunk)})
    p.execute()


KINDS = ["list", "set", "hash", "zset"]
CMD = {"list": "RPUSH", "set": "SADD", "hash": "HSET", "zset": "ZADD"}

LF_CONFIGS = ["lazyfree-lazy-user-del", "lazyfree-lazy-server-del", "lazyfree-lazy-expire",
              "lazyfree-lazy-eviction", "lazyfree-lazy-user-flush"]


@pytest.fixture
def lf(r):
    """r with every lazyfree-* config at its default (no), before and after."""
    for name in LF_CONFIGS:
        r.config_set(name, "no")
    yield r
    for name in LF_CONFIGS:
        r.config_set(name, "no")


@pytest.mark.parametrize("kind", KINDS)
def test_unlink_big_value_is_freed_in_background(r, kind):
    fill(r, kind, "big")
    before = lazyfreed(r)
    t0 = time.time()
    assert r.unlink("big") == 1
    assert time.time() - t0 < 1.0
    assert r.exists("big") == 0
    wait_freed(r, before)


@pytest.mark.parametrize("kind", KINDS)
def test_del_overwrite_and_expiry_of_big_values_are_lazy(lf, kind):
    r = lf
    for name in ("lazyfree-lazy-user-del", "lazyfree-lazy-server-del", "lazyfree-lazy-expire"):
        r.config_set(name, "yes")
    fill(r, kind, "big")
    before = lazyfreed(r)
    assert r.delete("big") == 1
    wait_freed(r, before)
    fill(r, kind, "big")
    before = lazyfreed(r)
    r.set("big", "now a string")
    wait_freed(r, before)
    r.delete("big")
    fill(r, kind, "big")
    before = lazyfreed(r)
    r.pexpire("big", 1)
    time.sleep(0.01)
    assert r.exists("big") == 0
    wait_freed(r, before)


@pytest.mark.parametrize("kind", KINDS)
def test_small_values_are_freed_inline(r, kind):
    fill(r, kind, "small", 10)
    before = lazyfreed(r)
    assert r.unlink("small") == 1
    time.sleep(0.05)
    assert lazyfreed(r) == before


@requires("RPUSH")
def test_lazy_free_keeps_memory_accounting(r):
    base = r.info("memory")["used_memory"]
    fill(r, "list", "big", 200000)
    grown = r.info("memory")["used_memory"]
    assert grown > base + 200000
    before = lazyfreed(r)
    r.unlink("big")
    wait_freed(r, before)
    assert r.info("memory")["used_memory"] < grown - 200000 // 2


# ---------------------------------------------------------------------------
# Issue 7: the lazyfree-* configs decide, per reason, whether a big value is
# freed on the lazy-free thread.  A 100k-member set (a hash table: free
# effort 100k) is lazily freed or not; lazyfreed_objects tells which.

SET_N = 100000


def pending(r):
    return info_field(r, "memory", "lazyfree_pending_objects")


def settle(r, timeout=10.0):
    """Wait for the lazy-free queue to empty; returns lazyfreed_objects.  A
    lazy free is queued (pending > 0) before the command replies, so once
    pending is 0 every free it asked for is counted."""
    deadline = time.time() + timeout
    while pending(r) != 0:
        assert time.time() < deadline, "lazyfree_pending_objects stays %d" % pending(r)
        time.sleep(0.01)
    return lazyfreed(r)


def big_set(r, key, n=SET_N):
    p = r.pipeline(transaction=False)
    for i in range(0, n, 10000):
        p.sadd(key, *range(i, min(n, i + 10000)))
    p.execute()
    assert r.scard(key) == n


def config(r, name, on):
    r.config_set(name, "yes" if on else "no")


def freed_by(r, action):
    """lazyfreed_objects gained while action() runs and its frees finish."""
    before = settle(r)
    action()
    return settle(r) - before


@pytest.mark.parametrize("on", [False, True])
def test_del_follows_lazyfree_lazy_user_del(lf, on):
    r = lf
    config(r, "lazyfree-lazy-user-del", on)
    big_set(r, "big")
    assert freed_by(r, lambda: r.delete("big")) == (1 if on else 0)
    assert r.exists("big") == 0


@pytest.mark.parametrize("on", [False, True])
def test_unlink_is_lazy_whatever_the_configs(lf, on):
    r = lf
    for name in LF_CONFIGS:
        config(r, name, on)
    big_set(r, "big")
    assert freed_by(r, lambda: r.unlink("big")) == 1
    r.sadd("small", 1, 2, 3)
    assert freed_by(r, lambda: r.unlink("small")) == 0


@pytest.mark.parametrize("on", [False, True])
def test_lazy_expiry_follows_lazyfree_lazy_expire(lf, on):
    """The key expires when it is read (the active sweeper is off)."""
    r = lf
    config(r, "lazyfree-lazy-expire", on)
    big_set(r, "big")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        def expire():
            r.pexpire("big", 1)
            time.sleep(0.02)
            assert r.exists("big") == 0
        assert freed_by(r, expire) == (1 if on else 0)
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


@pytest.mark.parametrize("on", [False, True])
def test_active_expiry_follows_lazyfree_lazy_expire(lf, on):
    """Nobody reads the key: the sweeper deletes it."""
    r = lf
    config(r, "lazyfree-lazy-expire", on)
    big_set(r, "big")

    def expire():
        r.pexpire("big", 1)
        deadline = time.time() + 10
        while r.dbsize() != 0:  # DBSIZE counts stored keys: no lookup
            assert time.time() < deadline, "the sweeper left the key"
            time.sleep(0.02)
        assert info_field(r, "stats", "expired_keys") >= 1
    assert freed_by(r, expire) == (1 if on else 0)


@pytest.mark.parametrize("on", [False, True])
def test_expire_in_the_past_follows_lazyfree_lazy_expire(lf, on):
    r = lf
    config(r, "lazyfree-lazy-expire", on)
    config(r, "lazyfree-lazy-user-del", not on)  # not the one that applies
    config(r, "lazyfree-lazy-server-del", not on)
    big_set(r, "big")
    assert freed_by(r, lambda: r.expire("big", -1)) == (1 if on else 0)
    assert r.exists("big") == 0


@pytest.mark.parametrize("on", [False, True])
def test_overwrites_follow_lazyfree_lazy_server_del(lf, on):
    r = lf
    config(r, "lazyfree-lazy-server-del", on)
    config(r, "lazyfree-lazy-user-del", not on)  # not the one that applies
    want = 1 if on else 0
    big_set(r, "big")
    assert freed_by(r, lambda: r.set("big", "a string now")) == want
    assert r.get("big") == "a string now"
    r.delete("big")
    big_set(r, "big")
    r.set("src", "v")
    assert freed_by(r, lambda: r.rename("src", "big")) == want
    assert r.get("big") == "v"
    r.delete("big")
    big_set(r, "big")
    got = freed_by(r, lambda: r.spop("big", SET_N))
    if IS_REDIS:  # redis also frees its temporary copy of the set lazily
        assert (got >= 1) == on
    else:
        assert got == want
    assert r.exists("big") == 0


def test_small_overwrites_and_deletes_are_never_lazy(lf):
    r = lf
    for name in LF_CONFIGS:
        config(r, name, True)
    r.sadd("s", *range(10))

    def churn():
        r.set("s", "x")
        r.sadd("t", 1, 2)
        r.delete("t")
        r.sadd("u", 1)
        r.expire("u", -1)
    assert freed_by(r, churn) == 0


def test_flush_async_frees_every_key_in_the_background(lf):
    """FLUSHALL/FLUSHDB ASYNC: each key is one lazily freed object (big or
    small, every database that is flushed); FLUSHDB only the current one."""
    r = lf
    big_set(r, "big")
    r.mset({"a": 1, "b": 2})
    other = lf.connection_pool.get_connection("select")
    try:
        other.send_command("SELECT", 9)
        assert other.read_response() in (b"OK", "OK")
        other.send_command("MSET", "x", 1, "y", 2, "z", 3)
        other.read_response()
        assert freed_by(r, lambda: r.flushdb(asynchronous=True)) == 3
        assert r.dbsize() == 0
        other.send_command("DBSIZE")
        assert other.read_response() == 3
        r.mset({"a": 1, "b": 2})
        assert freed_by(r, lambda: r.flushall(asynchronous=True)) == 5
        other.send_command("DBSIZE")
        assert other.read_response() == 0
    finally:
        lf.connection_pool.release(other)
    assert r.dbsize() == 0


@pytest.mark.parametrize("user_flush", [False, True])
def test_flush_sync_is_never_lazy(lf, user_flush):
    """SYNC frees inline even with every lazyfree-* config on (the big
    value inside too, not through the lazy-free thread)."""
    r = lf
    for name in LF_CONFIGS:
        config(r, name, True)
    config(r, "lazyfree-lazy-user-flush", user_flush)
    big_set(r, "big")
    r.set("a", 1)
    assert freed_by(r, lambda: r.execute_command("FLUSHALL", "SYNC")) == 0
    big_set(r, "big")
    assert freed_by(r, lambda: r.execute_command("FLUSHDB", "SYNC")) == 0
    assert r.dbsize() == 0


@pytest.mark.parametrize("on", [False, True])
def test_plain_flush_follows_lazyfree_lazy_user_flush(lf, on):
    r = lf
    config(r, "lazyfree-lazy-user-flush", on)
    big_set(r, "big")
    r.set("a", 1)
    assert freed_by(r, lambda: r.execute_command("FLUSHALL")) == (2 if on else 0)
    big_set(r, "big")
    assert freed_by(r, lambda: r.execute_command("FLUSHDB")) == (1 if on else 0)
    assert r.dbsize() == 0


def test_config_resetstat_zeroes_lazyfreed_objects(lf):
    r = lf
    big_set(r, "big")
    r.unlink("big")
    settle(r)
    assert lazyfreed(r) >= 1
    r.config_resetstat()
    assert lazyfreed(r) == 0
    assert pending(r) == 0


# As Redis's unit/lazyfree.tcl: memory comes back after UNLINK and FLUSHDB
# ASYNC of a 100k-member set; a stream's free effort counts its nodes and
# consumer-group metadata.
def test_unlink_and_flushdb_async_reclaim_memory(lf):
    r = lf
    for flush in (lambda: r.unlink("myset"), lambda: r.flushdb(asynchronous=True)):
        settle(r)
        orig = info_field(r, "memory", "used_memory")
        big_set(r, "myset")
        peak = info_field(r, "memory", "used_memory")
        assert peak > orig + 1000000
        flush()
        deadline = time.time() + 5
        while True:
            used = info_field(r, "memory", "used_memory")
            if used < peak and used < orig * 2:
                break
            assert time.time() < deadline, "memory not reclaimed: orig %d peak %d now %d" % (orig, peak, used)
            time.sleep(0.1)


@requires("XADD")
def test_lazy_free_stream_with_metadata(lf):
    r = lf
    settle(r)
    r.config_resetstat()
    old = r.config_get("stream-node-max-entries")["stream-node-max-entries"]
    r.config_set("stream-node-max-entries", 5)
    try:
        p = r.pipeline(transaction=False)
        for j in range(1000):
            p.xadd("stream", {"foo" if j % 10 else "bar": j})
        p.execute()
        r.xgroup_create("stream", "mygroup", "0")
        recs = r.xreadgroup("mygroup", "Alice", {"stream": ">"}, count=2)
        ids = [e[0] for e in recs[0][1]]
        r.xdel("stream", ids[1])
        r.xack("stream", "mygroup", ids[0])
        r.unlink("stream")
        settle(r)
        assert lazyfreed(r) == 1
        # A one-entry stream whose group was destroyed: freed inline.
        r.config_resetstat()
        r.xadd("s", {"a": "b"})
        r.xgroup_create("s", "bla", "$")
        r.xgroup_destroy("s", "bla")
        r.unlink("s")
        settle(r)
        assert lazyfreed(r) == 0
    finally:
        r.config_set("stream-node-max-entries", old)
