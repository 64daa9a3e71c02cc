"""SORT / SORT_RO integration tests (Redis 7.4 semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Errors are
checked on the wire through the raw `resp` client.  The sorted keys are
lists, sets and sorted sets; BY/GET patterns read strings and hash fields
from keys that live in other slots than the sorted key (HotKV locks them one
at a time; see t_sort.c), which the concurrency test at the end exercises.
"""
import random
import threading
import time

import pytest

from helpers import arity_error as arity, info_field, needs_commands, requires, server_version

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
BAD_DOUBLE = ("error", "ERR One or more scores can't be converted into double")


@pytest.fixture(scope="module", autouse=True)
def flush_at_end(server):
    """Leave no collection behind: the server is stopped (and, in sanitizer
    builds, checked for leaks) when the module ends."""
    yield
    c = server.client()
    c.flushall()
    c.close()


def test_arity(resp):
    assert resp.call("SORT") == arity("sort")
    assert resp.call("SORT_RO") == arity("sort_ro")


# ------------------------------------------------------------------ basics

@requires("RPUSH")
def test_sort_list_numeric(r):
    r.rpush("l", 3, 1, 2, 10, -5, "1.5", "1e1", " 4")
    assert r.sort("l") == ["-5", "1", "1.5", "2", "3", " 4", "10", "1e1"]
    assert r.sort("l", desc=True) == ["1e1", "10", " 4", "3", "2", "1.5", "1", "-5"]
    assert r.lrange("l", 0, -1) == ["3", "1", "2", "10", "-5", "1.5", "1e1", " 4"]


@requires("RPUSH")
def test_sort_equal_scores_sub_sort_by_bytes(r):
    r.rpush("l", "1.0", "1", "01", "1e0", "0.5")
    assert r.sort("l") == ["0.5", "01", "1", "1.0", "1e0"]
    assert r.sort("l", desc=True) == ["1e0", "1.0", "1", "01", "0.5"]


def test_sort_set_numeric_and_alpha(r):
    r.sadd("s", 3, 1, 2, 10)
    assert r.sort("s") == ["1", "2", "3", "10"]
    assert r.sort("s", alpha=True) == ["1", "10", "2", "3"]
    assert r.sort("s", alpha=True, desc=True) == ["3", "2", "10", "1"]
    r.sadd("t", "banana", "apple", "cherry", "Apple", "")
    assert r.sort("t", alpha=True) == ["", "Apple", "apple", "banana", "cherry"]


@requires("ZADD")
def test_sort_zset_sorts_members_not_scores(r):
    r.zadd("z", {"a": 1, "b": 5, "c": 2, "d": 10, "e": 3})
    assert r.sort("z", alpha=True, desc=True) == ["e", "d", "c", "b", "a"]
    r.zadd("n", {"30": 1, "10": 2, "20": 3})
    assert r.sort("n") == ["10", "20", "30"]


def test_sort_missing_key(resp):
    assert resp.call("SORT", "nokey") == []
    assert resp.call("SORT", "nokey", "BY", "w_*", "GET", "#", "LIMIT", "0", "10") == []
    assert resp.call("SORT_RO", "nokey") == []
    assert resp.call("SORT", "nokey", "STORE", "dst") == 0
    assert resp.call("EXISTS", "dst") == 0


def test_sort_wrongtype(resp):
    resp.call("SET", "str", "x")
    assert resp.call("SORT", "str") == WRONGTYPE
    assert resp.call("SORT_RO", "str") == WRONGTYPE
    assert resp.call("SORT", "str", "STORE", "d") == WRONGTYPE
    # Syntax errors come first.
    assert resp.call("SORT", "str", "FOO") == SYNTAX


def test_sort_numeric_conversion_errors(resp):
    resp.call("SADD", "s", "1", "2", "x")
    assert resp.call("SORT", "s") == BAD_DOUBLE
    assert resp.call("SORT", "s", "STORE", "d") == BAD_DOUBLE
    assert resp.call("EXISTS", "d") == 0
    for bad in ("nan", "1x", "1e400", "1e-400", "- 1"):
        resp.call("DEL", "t")
        resp.call("SADD", "t", "1", bad)
        assert resp.call("SORT", "t") == BAD_DOUBLE, bad
    for good in ("inf", "-inf", " 5", "0x10", "1e10", "-0"):
        resp.call("DEL", "t")
        resp.call("SADD", "t", "1", good)
        assert len(resp.call("SORT", "t")) == 2, good
    resp.call("DEL", "t")
    resp.call("SADD", "t", "1", "2")
    resp.call("MSET", "w_1", "10", "w_2", "abc")
    assert resp.call("SORT", "t", "BY", "w_*") == BAD_DOUBLE
    # ALPHA never converts.
    assert resp.call("SORT", "t", "BY", "w_*", "ALPHA") == [b"1", b"2"]


def test_sort_options_errors(resp):
    resp.call("SADD", "s", "1", "2")
    assert resp.call("SORT", "s", "LIMIT", "1") == SYNTAX
    assert resp.call("SORT", "s", "LIMIT", "a", "1") == NOT_INT
    assert resp.call("SORT", "s", "LIMIT", "1", "b") == NOT_INT
    assert resp.call("SORT", "s", "BY") == SYNTAX
    assert resp.call("SORT", "s", "GET") == SYNTAX
    assert resp.call("SORT", "s", "STORE") == SYNTAX
    assert resp.call("SORT", "s", "FOO") == SYNTAX
    assert resp.call("SORT_RO", "s", "STORE", "d") == SYNTAX
    assert resp.call("EXISTS", "d") == 0
    # Options are case-insensitive and may repeat; the last one wins.
    assert resp.call("SORT", "s", "desc", "AsC") == [b"1", b"2"]
    assert resp.call("SORT", "s", "LIMIT", "0", "1", "limit", "1", "1") == [b"2"]


# ------------------------------------------------------------------- LIMIT

@requires("RPUSH")
def test_sort_limit(r):
    r.rpush("l", *range(10))
    assert r.sort("l", start=2, num=3) == ["2", "3", "4"]
    assert r.sort("l", start=8, num=10) == ["8", "9"]
    assert r.sort("l", start=10, num=5) == []
    assert r.sort("l", start=-5, num=2) == ["0", "1"]
    assert r.sort("l", start=0, num=0) == []
    assert r.sort("l", start=3, num=-1) == ["3", "4", "5", "6", "7", "8", "9"]
    assert r.sort("l", start=3, num=-10) == ["3", "4", "5", "6", "7", "8", "9"]
    assert r.sort("l", start=2, num=3, desc=True) == ["7", "6", "5"]
    assert r.execute_command("SORT_RO", "l", "BY", "a", "LIMIT", "2", "9223372036854775807") == [str(i) for i in range(2, 10)]
    assert r.execute_command("SORT", "l", "LIMIT", "9223372036854775807", "9223372036854775807") == []
    assert r.execute_command("SORT", "l", "LIMIT", "-9223372036854775808", "2") == ["0", "1"]


# ---------------------------------------------------------------- BY / GET

def seed_weights(r, n=20, seed=1):
    rnd = random.Random(seed)
    weights = rnd.sample(range(1000), n)
    for i, w in enumerate(weights):
        r.set("weight_%d" % i, w)
        r.hset("wobj_%d" % i, "weight", w)
    return [i for i, _ in sorted(enumerate(weights), key=lambda t: t[1])], weights


@pytest.mark.parametrize("kind", ["list", "intset", "hashtable", "zset"])
def test_sort_by_key_and_hash_field(r, kind):
    order, weights = seed_weights(r, 200 if kind == "hashtable" else 20)
    n = len(weights)
    if kind == "list":
        needs_commands(r, "RPUSH")
        r.rpush("tosort", *range(n))
    elif kind == "zset":
        needs_commands(r, "ZADD")
        r.zadd("tosort", {str(i): n - i for i in range(n)})
    elif kind == "hashtable":
        r.sadd("tosort", *range(n))
        r.sadd("tosort", "x")
        r.srem("tosort", "x")
    else:
        r.sadd("tosort", *range(n))
    want = [str(i) for i in order]
    assert r.sort("tosort", by="weight_*") == want
    assert r.sort("tosort", by="wobj_*->weight") == want
    assert r.sort("tosort", by="weight_*", start=5, num=5) == want[5:10]
    assert r.sort("tosort", by="weight_*", desc=True) == want[::-1]
    assert r.sort("tosort", by="weight_*", start=2, num=3, desc=True) == want[::-1][2:5]
    got = r.sort("tosort", by="weight_*", get=["#", "weight_*", "wobj_*->weight"])
    assert got[0::3] == want
    assert got[1::3] == [str(weights[int(i)]) for i in want]
    assert got[2::3] == [str(weights[int(i)]) for i in want]
    assert r.sort("tosort", by="weight_*", store="res") == n
    assert r.lrange("res", 0, -1) == want


def test_sort_by_missing_keys_counts_as_zero(r):
    r.sadd("s", "a", "b", "c")
    r.set("w_b", "-1")
    assert r.sort("s", by="w_*") == ["b", "a", "c"]
    r.set("w_c", "1")
    assert r.sort("s", by="w_*") == ["b", "a", "c"]
    # A BY key of the wrong type counts as missing.
    r.sadd("w_a", "x")
    assert r.sort("s", by="w_*") == ["b", "a", "c"]
    # ALPHA + BY: missing values first.
    r.delete("w_a")
    r.set("w_c", "aaa")
    r.set("w_b", "bbb")
    assert r.sort("s", by="w_*", alpha=True) == ["a", "c", "b"]
    assert r.sort("s", by="w_*", alpha=True, desc=True) == ["b", "c", "a"]


def test_sort_by_equal_weights_sub_sorts_by_element(r):
    members = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "l", "m", "aa", "aaa", "azz"]
    r.sadd("s", *members)
    assert r.sort("s", by="score:*") == sorted(members)
    for m in members:
        r.set("score:" + m, 100)
    assert r.sort("s", by="score:*") == sorted(members)
    assert r.sort("s", by="score:*", desc=True) == sorted(members, reverse=True)


def test_sort_get_patterns(resp):
    resp.call("SADD", "s", "1", "2", "3")
    resp.call("MSET", "o_1", "one", "o_2", "two")
    resp.call("HSET", "h_1", "f", "x1")
    resp.call("HSET", "h_3", "f", "x3", "g", "7")
    assert resp.call("SORT", "s", "GET", "o_*") == [b"one", b"two", None]
    assert resp.call("SORT", "s", "GET", "#", "GET", "o_*", "GET", "h_*->f") == [
        b"1", b"one", b"x1", b"2", b"two", None, b"3", None, b"x3"]
    assert resp.call("SORT", "s", "GET", "h_*->g") == [None, None, b"7"]
    assert resp.call("SORT", "s", "GET", "h_*->nofield") == [None, None, None]
    # A constant pattern gets nothing.
    assert resp.call("SORT", "s", "GET", "o_1") == [None, None, None]
    # A pattern key of another type gets nothing.
    assert resp.call("SORT", "s", "GET", "h_*") == [None, None, None]
    assert resp.call("SORT", "s", "GET", "o_*->f") == [None, None, None]
    # "->" with nothing after it is part of the key name.
    resp.call("SET", "x:2->", "100")
    assert resp.call("SORT", "s", "GET", "x:*->") == [None, b"100", None]
    # Only the first '*' is replaced.
    resp.call("SET", "k1*", "star")
    assert resp.call("SORT", "s", "GET", "k**") == [b"star", None, None]
    # GET with LIMIT: only the returned elements are looked up.
    assert resp.call("SORT", "s", "LIMIT", "1", "1", "GET", "#", "GET", "o_*") == [b"2", b"two"]
    assert resp.call("SORT_RO", "s", "GET", "o_*", "DESC") == [None, b"two", b"one"]


def test_sort_hash_field_with_integer_value(resp):
    resp.call("SADD", "s", "1", "2")
    resp.call("HSET", "h_1", "n", "42")
    resp.call("HSET", "h_2", "n", "-7")
    assert resp.call("SORT", "s", "BY", "h_*->n") == [b"2", b"1"]
    assert resp.call("SORT", "s", "BY", "h_*->n", "GET", "h_*->n") == [b"-7", b"42"]


# --------------------------------------------------------------- nosort

@requires("LPUSH")
def test_sort_nosort_keeps_list_order(r):
    r.lpush("l", 2, 1, 4, 3, 5)
    assert r.sort("l", by="nosort") == ["5", "3", "4", "1", "2"]
    assert r.sort("l", by="nosort", desc=True) == ["2", "1", "4", "3", "5"]
    assert r.sort("l", by="nosort", start=1, num=3) == ["3", "4", "1"]
    assert r.sort("l", by="nosort", start=1, num=3, desc=True) == ["1", "4", "3"]
    assert r.sort("l", by="nosort", start=4, num=3, desc=True) == ["5"]
    assert r.sort("l", by="nosort", start=10, num=3) == []
    assert r.sort("l", by="nosort", store="d") == 5
    assert r.lrange("d", 0, -1) == ["5", "3", "4", "1", "2"]
    assert r.sort("l", by="nosort", start=0, num=3, store="d") == 3
    assert r.lrange("d", 0, -1) == ["5", "3", "4"]
    assert r.sort("l", by="nosort", get=["#", "nokey_*"]) == ["5", None, "3", None, "4", None, "1", None, "2", None]


@requires("ZADD")
def test_sort_nosort_keeps_zset_order(r):
    r.zadd("z", {"a": 1, "b": 5, "c": 2, "d": 10, "e": 3})
    assert r.sort("z", by="nosort") == ["a", "c", "e", "b", "d"]
    assert r.sort("z", by="nosort", desc=True) == ["d", "b", "e", "c", "a"]
    assert r.sort("z", by="nosort", start=0, num=1) == ["a"]
    assert r.sort("z", by="nosort", start=0, num=1, desc=True) == ["d"]
    assert r.sort("z", by="nosort", start=0, num=2, desc=True) == ["d", "b"]
    assert r.sort("z", by="nosort", start=1, num=2) == ["c", "e"]
    assert r.sort("z", by="nosort", start=5, num=10) == []
    assert r.sort("z", by="nosort", start=-10, num=100) == ["a", "c", "e", "b", "d"]


def test_sort_nosort_set_with_store_sorts_alpha(r):
    members = ["a", "b", "c", "d", "e", "f", "z", "aa", "aaa", "azz", "10", "9"]
    r.sadd("s", *members)
    assert r.sort("s", by="_", store="d", alpha=True) == len(members)
    assert r.lrange("d", 0, -1) == sorted(members)
    assert r.sort("s", by="nosort", store="d") == len(members)
    assert r.lrange("d", 0, -1) == sorted(members)
    assert r.sort("s", by="nosort", store="d", desc=True) == len(members)
    assert r.lrange("d", 0, -1) == sorted(members, reverse=True)
    # Without STORE: the set's own order, but every member once.
    assert sorted(r.sort("s", by="nosort")) == sorted(members)
    assert len(r.sort("s", by="nosort", start=0, num=5)) == 5


def test_sort_by_constant_never_converts(r):
    r.sadd("s", "x", "y")
    assert sorted(r.sort("s", by="nosort")) == ["x", "y"]
    r.set("nosort", "abc")
    assert sorted(r.sort("s", by="nosort")) == ["x", "y"]


# ------------------------------------------------------------------ STORE

@requires("RPUSH", "LRANGE")
def test_sort_store(r):
    r.sadd("s", 3, 1, 2)
    r.set("dst", "overwritten")
    r.expire("dst", 100)
    assert r.sort("s", store="dst") == 3
    assert r.type("dst") == "list"
    assert r.lrange("dst", 0, -1) == ["1", "2", "3"]
    assert r.ttl("dst") == -1
    # The destination may be the source.
    r.rpush("l", 3, 1, 2)
    assert r.sort("l", store="l", desc=True) == 3
    assert r.lrange("l", 0, -1) == ["3", "2", "1"]
    # GET values are stored, missing ones as empty strings.
    r.set("o_1", "one")
    assert r.sort("s", get=["#", "o_*"], store="dst") == 6
    assert r.lrange("dst", 0, -1) == ["1", "one", "2", "", "3", ""]


@requires("LPUSH")
def test_sort_store_empty_result_deletes(r):
    r.lpush("foo", "bar")
    assert r.sort("foo", alpha=True, start=10, num=10, store="zap") == 0
    assert r.exists("zap") == 0
    r.lpush("dst", "x")
    assert r.sort("emptylist", store="dst") == 0
    assert r.exists("dst") == 0
    r.lpush("dst", "x")
    assert r.sort("foo", alpha=True, start=0, num=0, store="dst") == 0
    assert r.exists("dst") == 0


@requires("RPUSH", "LRANGE")
def test_sort_store_alpha_is_binary_order(r):
    r.sadd("s", "b", "a\x00z", "a", "A")
    assert r.sort("s", alpha=True, store="d") == 4
    assert r.lrange("d", 0, -1) == ["A", "a", "a\x00z", "b"]


@requires("RPUSH", "LRANGE", "OBJECT")
def test_sort_store_encoding_follows_list_thresholds(r):
    r.sadd("s", *range(10))
    r.sort("s", store="d")
    # 7.0 had no listpack-encoded lists.
    assert r.object("encoding", "d") == ("listpack" if server_version(r) >= (7, 2, 0) else "quicklist")
    # Over 8 KB (list-max-listpack-size -2): a quicklist.
    r.sadd("big", *["member-%020d" % i for i in range(1000)])
    r.sort("big", store="d", alpha=True)
    assert r.object("encoding", "d") == "quicklist"
    assert r.llen("d") == 1000
    assert r.lrange("d", 0, 1) == ["member-%020d" % i for i in range(2)]


def test_sort_big_set(r):
    n = 5000
    vals = random.Random(3).sample(range(100000), n)
    r.sadd("s", *vals)
    assert r.sort("s") == [str(v) for v in sorted(vals)]
    assert r.sort("s", start=100, num=10, desc=True) == [str(v) for v in sorted(vals, reverse=True)[100:110]]
    assert r.sort("s", alpha=True) == sorted(str(v) for v in vals)


# ----------------------------------------------------------- keys, stats

def test_sort_getkeys(resp):
    assert resp.call("COMMAND", "GETKEYS", "SORT", "abc", "STORE", "def") == [b"abc", b"def"]
    assert resp.call("COMMAND", "GETKEYS", "SORT", "abc", "STORE", "invalid", "STORE", "stillbad", "STORE",
                     "def") == [b"abc", b"def"]
    assert resp.call("COMMAND", "GETKEYS", "SORT", "abc", "LIMIT", "0", "1", "BY", "store", "GET",
                     "store") == [b"abc"]
    assert resp.call("COMMAND", "GETKEYS", "SORT_RO", "abc") == [b"abc"]
    assert resp.call("COMMAND", "GETKEYS", "SORT", "abc") == [b"abc"]
    info = resp.call("COMMAND", "INFO", "SORT")[0]
    assert info[1] == -2 and "movablekeys" in info[2] and "write" in info[2] and info[3:6] == [1, 1, 1]
    info = resp.call("COMMAND", "INFO", "SORT_RO")[0]
    assert info[1] == -2 and "readonly" in info[2]


@requires("RPUSH", "LRANGE")
def test_sort_store_key_named_like_an_option(r):
    """STORE's argument is a key even when it reads like an option name."""
    r.sadd("s", "b", "a")
    assert r.execute_command("SORT", "s", "ALPHA", "STORE", "get", "STORE", "d2") == 2
    assert r.lrange("d2", 0, -1) == ["a", "b"]
    assert r.exists("get") == 0
    assert r.execute_command("SORT", "s", "ALPHA", "STORE", "limit") == 2
    assert r.lrange("limit", 0, -1) == ["a", "b"]


def test_sort_lookups_count_as_reads(r):
    r.sadd("s", "1", "2")
    r.set("w_1", 5)
    r.config_resetstat()
    r.sort("s", by="w_*")  # s hit, w_1 hit, w_2 miss
    assert int(info_field(r, "stats", "keyspace_hits")) == 2
    assert int(info_field(r, "stats", "keyspace_misses")) == 1


# ------------------------------------------------------------ concurrency

def test_sort_patterns_concurrent_with_multikey_writers(server):
    """SORT BY/GET reading keys in many slots while other clients run
    multi-key commands over the same keys (MSET/DEL/RENAME take several
    slot locks in order): no deadlock, and every reply is well formed."""
    c = server.client(decode_responses=True)
    c.flushall()
    n = 200
    c.sadd("tosort", *range(n))
    for i in range(n):
        c.set("w_%d" % i, i)
        c.hset("h_%d" % i, "f", i)
    stop = threading.Event()
    errors = []
    done = {"sort": 0, "write": 0}

    def sorter(store):
        cc = server.client(decode_responses=True)
        try:
            while not stop.is_set():
                if store:
                    got = cc.sort("tosort", by="w_*", get=["#", "h_*->f"], store="out%d" % store)
                    assert got == 2 * n
                else:
                    got = cc.sort("tosort", by="h_*->f", get=["w_*"], desc=True)
                    assert len(got) == n
                done["sort"] += 1
        except Exception as ex:  # pragma: no cover
            errors.append(repr(ex))
        finally:
            cc.close()

    def writer(seed):
        cc = server.client(decode_responses=True)
        rnd = random.Random(seed)
        try:
            while not stop.is_set():
                ks = rnd.sample(range(n), 8)
                cc.mset({"w_%d" % k: rnd.randint(0, 1000) for k in ks})
                cc.delete(*["h_%d" % k for k in ks[:4]])
                for k in ks[:4]:
                    cc.hset("h_%d" % k, "f", rnd.randint(0, 1000))
                cc.sunionstore("tmp%d" % seed, "tosort", "tosort")
                done["write"] += 1
        except Exception as ex:  # pragma: no cover
            errors.append(repr(ex))
        finally:
            cc.close()

    ts = [threading.Thread(target=sorter, args=(0,)), threading.Thread(target=sorter, args=(1,)),
          threading.Thread(target=sorter, args=(2,)), threading.Thread(target=writer, args=(1,)),
          threading.Thread(target=writer, args=(2,))]
    for t in ts:
        t.start()
    time.sleep(3)
    stop.set()
    for t in ts:
        t.join(30)
        assert not t.is_alive(), "a client is stuck: deadlock?"
    assert not errors, errors[:3]
    assert done["sort"] > 10 and done["write"] > 10
    assert c.ping() is True
    c.close()


@requires("BLPOP", "LPUSH")
def test_sort_store_serves_blocked_client(server, r):
    """BLPOP on the destination is served when SORT ... STORE creates it."""
    from helpers import Resp
    b = Resp(server.port, timeout=10)
    b.send("BLPOP", "foo{t}", "5")
    time.sleep(0.2)
    r.lpush("notfoo{t}", "hello", "hola", "aguacate", "konichiwa", "zanzibar")
    assert r.sort("notfoo{t}", alpha=True, store="foo{t}") == 5
    assert b.read() == [b"foo{t}", b"aguacate"]
    assert r.lrange("foo{t}", 0, -1) == ["hello", "hola", "konichiwa", "zanzibar"]
    b.close()
