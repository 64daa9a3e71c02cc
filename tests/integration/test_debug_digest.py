"""DEBUG DIGEST and DEBUG DIGEST-VALUE (issue 17): the same data gives the
same digest whatever its encoding, order of insertion or server, equal to
redis-server's for the types both have (sorted-set scores chosen exactly
representable, where Redis 7.0's %.17g and 7.2's shortest form agree)."""
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import MODE
from helpers import free_port

ZERO = "0" * 40


def fill(c, order=1):
    c.flushall()
    items = list(range(200))[::order]
    c.set("s", "hello")
    c.set("n", 12345)
    c.set("ttl", "v", ex=1000)
    for i in items:
        c.rpush("biglist", "e%d" % i) if order == 1 else None
    if order != 1:
        c.rpush("biglist", *["e%d" % i for i in range(200)])
    c.rpush("list", "a", "b", 3)
    c.sadd("set", *[str(i) for i in items])
    c.sadd("smallset", "x", "y", "z")
    c.hset("hash", mapping={"f%d" % i: "v%d" % i for i in items})
    c.hset("smallhash", mapping={"a": 1, "b": "two"})
    c.zadd("zset", {"m%d" % i: i * 1.5 for i in items})
    c.zadd("smallz", {"a": 1, "b": -3.25, "c": 2})
    c.xadd("stream", {"f": "v", "g": "w"}, id="1-1")
    c.xadd("stream", {"f": "v2"}, id="2-5")
    c.execute_command("SELECT", 5)
    c.set("in-db-5", "x")
    c.execute_command("SELECT", 0)


def digest(c):
    return c.execute_command("DEBUG", "DIGEST")


def test_empty_is_zeros(r):
    r.flushall()
    assert digest(r) == ZERO
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "missing") == [ZERO]
    assert r.execute_command("DEBUG", "DIGEST-VALUE") == []


def test_order_and_encoding_do_not_matter(r):
    c = redis.Redis(port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
    fill(c, 1)
    d1 = digest(c)
    v1 = c.execute_command("DEBUG", "DIGEST-VALUE", "set", "hash", "zset", "biglist")
    fill(c, -1)
    assert digest(c) == d1
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "set", "hash", "zset", "biglist") == v1
    # A change anywhere changes it; an expire is part of it.
    c.set("s", "hellO")
    assert digest(c) != d1
    c.set("s", "hello")
    c.persist("ttl")
    assert digest(c) != d1
    c.close()


def test_list_order_matters(r):
    r.flushall()
    r.rpush("l", "a", "b")
    d = digest(r)
    r.delete("l")
    r.rpush("l", "b", "a")
    assert digest(r) != d


def _redis_server():
    port = free_port()
    d = tempfile.mkdtemp(prefix="digest-redis-")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", d, "--enable-debug-command", "yes"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        try:
            redis.Redis(port=port).ping()
            return p, port
        except redis.ConnectionError:
            time.sleep(0.01)
    p.kill()
    raise RuntimeError("redis-server did not start")


@pytest.mark.skipif(MODE == "redis" or not shutil.which("redis-server"), reason="needs both servers")
def test_equal_to_redis_server(r):
    proc, port = _redis_server()
    try:
        theirs = redis.Redis(port=port, decode_responses=True)
        ours = redis.Redis(port=r.connection_pool.connection_kwargs["port"], decode_responses=True)
        fill(theirs)
        fill(ours)
        keys = ["s", "n", "ttl", "biglist", "list", "set", "smallset", "hash", "smallhash", "zset", "smallz",
                "stream"]
        assert ours.execute_command("DEBUG", "DIGEST-VALUE", *keys) == \
            theirs.execute_command("DEBUG", "DIGEST-VALUE", *keys)
        assert digest(ours) == digest(theirs)
        theirs.close()
        ours.close()
    finally:
        proc.terminate()
        proc.wait(10)
