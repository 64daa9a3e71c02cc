"""List command integration tests (Redis 7.4 semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Where 7.0
differs from 7.2+/7.4 (the "listpack" encoding of small lists and its
conversions, LPOS RANK range checking) the test checks the 7.4 behaviour on
servers that report 7.2 or later and is skipped on 7.0.  Errors and null
shapes are checked on the wire through the raw `resp`/`resp3` clients.
"""
import random
import socket
import threading
import time

import pytest

from helpers import IS_REDIS, Resp, arity_error as arity, has_config, info_field, requires, server_version

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
NOT_POSITIVE = ("error", "ERR value is out of range, must be positive")
NO_KEY = ("error", "ERR no such key")
OUT_OF_RANGE = ("error", "ERR index out of range")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808

DEFAULTS = {"list-max-listpack-size": "-2"}


def is72(r):
    return server_version(r) >= (7, 2, 0)


def need72(r):
    if not is72(r):
        pytest.skip("listpack-encoded lists and their conversions arrived in Redis 7.2")


def enc(r, key):
    return r.object("encoding", key)


@pytest.fixture(autouse=True)
def reset_config(server):
    yield
    c = server.client(decode_responses=True)
    for k, v in DEFAULTS.items():
        c.config_set(k, v)
    if has_config(server, "list-compress-depth"):
        c.config_set("list-compress-depth", "0")
    c.close()


# ------------------------------------------------------------ arity/types

@pytest.mark.parametrize("cmd,args", [
    ("LPUSH", ["k"]), ("RPUSH", ["k"]), ("LPUSHX", ["k"]), ("RPUSHX", ["k"]), ("LPOP", []), ("RPOP", []),
    ("LLEN", []), ("LLEN", ["a", "b"]), ("LRANGE", ["k", "0"]), ("LINDEX", ["k"]), ("LSET", ["k", "0"]),
    ("LINSERT", ["k", "before", "p"]), ("LREM", ["k", "0"]), ("LTRIM", ["k", "0"]), ("LPOS", ["k"]),
    ("LMOVE", ["a", "b", "left"]), ("RPOPLPUSH", ["a"]), ("LMPOP", ["1", "k"]), ("BLPOP", ["k"]),
    ("BRPOP", ["k"]), ("BLMOVE", ["a", "b", "left", "left"]), ("BRPOPLPUSH", ["a", "b"]),
    ("BLMPOP", ["0", "1", "k"]),
])
def test_arity(resp, cmd, args):
    assert resp.call(cmd, *args) == arity(cmd.lower())


def test_pop_too_many_arguments_is_arity_error(resp):
    assert resp.call("LPOP", "k", "1", "1") == arity("lpop")
    assert resp.call("RPOP", "k", "2", "2") == arity("rpop")


@pytest.mark.parametrize("cmd,args", [
    ("LPUSH", ["x"]), ("RPUSH", ["x"]), ("LPUSHX", ["x"]), ("RPUSHX", ["x"]), ("LPOP", []), ("RPOP", []),
    ("LPOP", ["2"]), ("LLEN", []), ("LRANGE", ["0", "-1"]), ("LINDEX", ["0"]), ("LSET", ["0", "x"]),
    ("LINSERT", ["before", "a", "b"]), ("LREM", ["0", "a"]), ("LTRIM", ["0", "1"]), ("LPOS", ["a"]),
    ("RPOPLPUSH", ["dst"]), ("LMOVE", ["dst", "left", "right"]), ("BLPOP", ["0"]), ("BRPOP", ["0"]),
    ("BRPOPLPUSH", ["dst", "0"]), ("BLMOVE", ["dst", "left", "left", "0"]),
])
def test_wrongtype(resp, cmd, args):
    resp.call("SET", "s", "string")
    assert resp.call(cmd, "s", *args) == WRONGTYPE
    assert resp.call("GET", "s") == b"string"


def test_wrongtype_multikey(resp):
    resp.call("SET", "s{t}", "v")
    assert resp.call("LMPOP", "2", "s{t}", "l{t}", "LEFT") == WRONGTYPE
    assert resp.call("BLMPOP", "0", "2", "s{t}", "l{t}", "LEFT") == WRONGTYPE
    # A wrong type after an empty key is still an error; after a
    # non-empty one it is never looked at.
    resp.call("RPUSH", "l{t}", "a")
    assert resp.call("BLPOP", "missing{t}", "s{t}", "0") == WRONGTYPE
    assert resp.call("BLPOP", "l{t}", "s{t}", "0") == [b"l{t}", b"a"]
    # LMOVE into a non-list leaves the source untouched.
    resp.call("RPUSH", "src{t}", "x")
    assert resp.call("LMOVE", "src{t}", "s{t}", "LEFT", "LEFT") == WRONGTYPE
    assert resp.call("RPOPLPUSH", "src{t}", "s{t}") == WRONGTYPE
    assert resp.call("LRANGE", "src{t}", "0", "-1") == [b"x"]


def test_type_and_keyspace(r):
    r.rpush("l", "a")
    assert r.type("l") == "list"
    assert r.exists("l") == 1


# ------------------------------------------------------------------ pushes

def test_push_order_and_lengths(r):
    assert r.lpush("l", "a", "b", "c") == 3
    assert r.rpush("l", "x", "y") == 5
    assert r.lrange("l", 0, -1) == ["c", "b", "a", "x", "y"]
    assert r.execute_command("LPUSHX", "l", "h1", "h2") == 7
    assert r.rpushx("l", "t") == 8
    assert r.lrange("l", 0, -1) == ["h2", "h1", "c", "b", "a", "x", "y", "t"]


def test_pushx_on_missing_key(r):
    assert r.lpushx("nokey", "a") == 0
    assert r.execute_command("RPUSHX", "nokey", "a", "b") == 0
    assert r.exists("nokey") == 0


def test_integer_and_binary_elements(rb):
    vals = [b"0", b"-1", b"127", b"128", b"4095", b"-4096", b"32768", b"8388608", b"2147483648",
            str(LLONG_MAX).encode(), str(LLONG_MIN).encode(), b"9223372036854775808", b"012", b"+1",
            b"-0", b"1.5", b"", b"\x00\xff\r\n", b"a" * 70, b"b" * 5000]
    rb.rpush("l", *vals)
    assert rb.lrange("l", 0, -1) == vals
    for i, v in enumerate(vals):
        assert rb.lindex("l", i) == v
    assert rb.lpos("l", b"128") == 3
    assert rb.lpos("l", b"012") == 12
    assert rb.lpos("l", b"12") is None


# -------------------------------------------------------------------- pops

def test_pop_single(resp):
    resp.call("RPUSH", "l", "a", "b", "c")
    assert resp.call("LPOP", "l") == b"a"
    assert resp.call("RPOP", "l") == b"c"
    assert resp.call("LPOP", "l") == b"b"
    assert resp.call("EXISTS", "l") == 0
    assert resp.call("LPOP", "l") is None
    assert resp.call("RPOP", "l") is None


def test_pop_count_replies_resp2(resp):
    resp.call("RPUSH", "l", "a", "b", "c", "d", "e")
    assert resp.call("LPOP", "l", "2") == [b"a", b"b"]
    assert resp.call("RPOP", "l", "2") == [b"e", b"d"]
    assert resp.call("LPOP", "l", "0") == []
    assert resp.call("RPOP", "l", "100") == [b"c"]
    assert resp.call("EXISTS", "l") == 0
    # Missing key with a count: null array, even with count 0.
    resp.send("LPOP", "l", "2")
    assert resp._line() == b"*-1"
    resp.send("RPOP", "l", "0")
    assert resp._line() == b"*-1"
    resp.send("LPOP", "l")
    assert resp._line() == b"$-1"


def test_pop_count_replies_resp3(resp3):
    resp3.call("RPUSH", "l", "a", "b")
    resp3.send("LPOP", "l", "0")
    assert resp3._line() == b"*0"
    assert resp3.call("LPOP", "l", "5") == [b"a", b"b"]
    for args in (("LPOP", "l", "3"), ("RPOP", "l", "0"), ("LPOP", "l")):
        resp3.send(*args)
        assert resp3._line() == b"_"


def test_pop_count_errors(resp):
    resp.call("RPUSH", "l", "a")
    assert resp.call("LPOP", "l", "-1") == NOT_POSITIVE
    assert resp.call("RPOP", "l", "-123") == NOT_POSITIVE
    assert resp.call("LPOP", "l", "abc") == NOT_POSITIVE
    assert resp.call("LPOP", "nokey", "-1") == NOT_POSITIVE  # parsed before the lookup
    resp.call("SET", "s", "v")
    assert resp.call("LPOP", "s", "x") == NOT_POSITIVE
    assert resp.call("LPOP", "s", "0") == WRONGTYPE


# ------------------------------------------------------------------- reads

def test_llen_lindex(resp):
    assert resp.call("LLEN", "l") == 0
    resp.call("RPUSH", "l", "a", "b", "c")
    assert resp.call("LLEN", "l") == 3
    assert resp.call("LINDEX", "l", "0") == b"a"
    assert resp.call("LINDEX", "l", "-1") == b"c"
    assert resp.call("LINDEX", "l", "-3") == b"a"
    assert resp.call("LINDEX", "l", "3") is None
    assert resp.call("LINDEX", "l", "-4") is None
    assert resp.call("LINDEX", "l", str(LLONG_MAX)) is None
    assert resp.call("LINDEX", "l", "x") == NOT_INT
    # The key is looked up first: a missing key answers nil to a bad index.
    assert resp.call("LINDEX", "nokey", "x") is None


def test_lrange(r, resp):
    r.rpush("l", *range(10))
    assert r.lrange("l", 0, -1) == [str(i) for i in range(10)]
    assert r.lrange("l", 2, 4) == ["2", "3", "4"]
    assert r.lrange("l", -3, -1) == ["7", "8", "9"]
    assert r.lrange("l", -100, 1) == ["0", "1"]
    assert r.lrange("l", 8, 100) == ["8", "9"]
    assert r.lrange("l", 5, 4) == []
    assert r.lrange("l", 10, 20) == []
    assert r.lrange("l", -1, -2) == []
    assert r.lrange("l", LLONG_MIN, LLONG_MAX) == [str(i) for i in range(10)]
    assert r.lrange("nokey", 0, -1) == []
    assert resp.call("LRANGE", "l", "a", "1") == NOT_INT
    assert resp.call("LRANGE", "l", "0", "1.5") == NOT_INT
    assert resp.call("LRANGE", "nokey", "a", "1") == NOT_INT  # parsed before the lookup


# ------------------------------------------------------------------ writes

def test_lset(r, resp):
    assert resp.call("LSET", "nokey", "0", "x") == NO_KEY
    assert resp.call("LSET", "nokey", "bad", "x") == NO_KEY
    r.rpush("l", "a", "b", "c")
    assert r.lset("l", 0, "A")
    assert r.lset("l", -1, "C")
    assert r.lrange("l", 0, -1) == ["A", "b", "C"]
    assert resp.call("LSET", "l", "3", "x") == OUT_OF_RANGE
    assert resp.call("LSET", "l", "-4", "x") == OUT_OF_RANGE
    assert resp.call("LSET", "l", "x", "y") == NOT_INT


def test_linsert(r, resp):
    r.rpush("l", "a", "b", "c", "1")
    assert r.linsert("l", "before", "b", "x") == 5
    assert r.linsert("l", "AFTER", "c", "y") == 6
    assert r.linsert("l", "after", "1", "z") == 7  # integer pivot
    assert r.lrange("l", 0, -1) == ["a", "x", "b", "c", "y", "1", "z"]
    assert r.linsert("l", "before", "nope", "q") == -1
    assert r.linsert("nokey", "before", "a", "q") == 0
    assert r.exists("nokey") == 0
    assert resp.call("LINSERT", "l", "middle", "a", "q") == SYNTAX
    assert resp.call("LINSERT", "nokey", "middle", "a", "q") == SYNTAX


def test_lrem(r, resp):
    r.rpush("l", "a", "b", "a", "c", "a", "1", "01", "a")
    assert r.lrem("l", 2, "a") == 2
    assert r.lrange("l", 0, -1) == ["b", "c", "a", "1", "01", "a"]
    assert r.lrem("l", -1, "a") == 1
    assert r.lrange("l", 0, -1) == ["b", "c", "a", "1", "01"]
    assert r.lrem("l", 0, "1") == 1
    assert r.lrem("l", 0, "zz") == 0
    assert r.lrange("l", 0, -1) == ["b", "c", "a", "01"]
    assert r.lrem("l", LLONG_MIN, "a") == 1
    for v in ("b", "c", "01"):
        r.lrem("l", 0, v)
    assert r.exists("l") == 0
    assert r.lrem("nokey", 0, "a") == 0
    assert resp.call("LREM", "l", "x", "a") == NOT_INT


def test_ltrim(r, resp):
    r.rpush("l", *range(10))
    assert r.ltrim("l", 2, -3)
    assert r.lrange("l", 0, -1) == [str(i) for i in range(2, 8)]
    assert r.ltrim("l", -2, 100)
    assert r.lrange("l", 0, -1) == ["6", "7"]
    assert r.ltrim("l", 1, 0)
    assert r.exists("l") == 0
    assert r.ltrim("nokey", 0, 1)
    r.rpush("l", "a")
    assert r.ltrim("l", 5, 10)
    assert r.exists("l") == 0
    assert resp.call("LTRIM", "l", "a", "1") == NOT_INT


# -------------------------------------------------------------------- LPOS

def test_lpos(r):
    r.rpush("l", "a", "b", "c", "1", "2", "3", "c", "c")
    assert r.lpos("l", "a") == 0
    assert r.lpos("l", "c") == 2
    assert r.lpos("l", "3") == 5
    assert r.lpos("l", "x") is None
    assert r.lpos("l", "c", rank=2) == 6
    assert r.lpos("l", "c", rank=-1) == 7
    assert r.lpos("l", "c", rank=-3) == 2
    assert r.lpos("l", "c", rank=4) is None
    assert r.lpos("l", "c", count=0) == [2, 6, 7]
    assert r.lpos("l", "c", count=2) == [2, 6]
    assert r.lpos("l", "c", count=2, rank=2) == [6, 7]
    assert r.lpos("l", "c", count=0, rank=-1) == [7, 6, 2]
    assert r.lpos("l", "c", count=5, rank=-2) == [6, 2]
    assert r.lpos("l", "x", count=3) == []
    assert r.lpos("l", "c", maxlen=2) is None
    assert r.lpos("l", "c", maxlen=3) == 2
    assert r.lpos("l", "c", count=0, maxlen=7) == [2, 6]
    assert r.lpos("l", "c", rank=-1, maxlen=1) == 7
    assert r.lpos("l", "a", rank=-1, maxlen=7) is None
    assert r.lpos("nokey", "a") is None
    assert r.lpos("nokey", "a", count=1) == []


def test_lpos_errors(resp):
    resp.call("RPUSH", "l", "a")
    assert resp.call("LPOS", "l", "a", "RANK", "0") == (
        "error", "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list")
    assert resp.call("LPOS", "l", "a", "RANK", "x") == NOT_INT
    assert resp.call("LPOS", "l", "a", "COUNT", "-1") == ("error", "ERR COUNT can't be negative")
    assert resp.call("LPOS", "l", "a", "COUNT", "x") == ("error", "ERR COUNT can't be negative")
    assert resp.call("LPOS", "l", "a", "MAXLEN", "-1") == ("error", "ERR MAXLEN can't be negative")
    assert resp.call("LPOS", "l", "a", "RANK") == SYNTAX
    assert resp.call("LPOS", "l", "a", "FOO", "1") == SYNTAX
    assert resp.call("LPOS", "nokey", "a", "RANK", "0")[0] == "error"  # options parsed first


def test_lpos_rank_min_is_out_of_range(r, resp):
    need72(r)
    resp.call("RPUSH", "l", "a")
    assert resp.call("LPOS", "l", "a", "RANK", str(LLONG_MIN)) == (
        "error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")


def test_lpos_resp3(resp3):
    resp3.call("RPUSH", "l", "a", "b", "a")
    assert resp3.call("LPOS", "l", "a", "COUNT", "0") == [0, 2]
    resp3.send("LPOS", "l", "zz")
    assert resp3._line() == b"_"
    resp3.send("LPOS", "nokey", "zz", "COUNT", "1")
    assert resp3._line() == b"*0"


# ------------------------------------------------------------ LMOVE family

@pytest.mark.parametrize("wf,wt,popped,src,dst", [
    ("LEFT", "LEFT", "a", ["b", "c"], ["a", "x", "y"]),
    ("LEFT", "RIGHT", "a", ["b", "c"], ["x", "y", "a"]),
    ("RIGHT", "LEFT", "c", ["a", "b"], ["c", "x", "y"]),
    ("RIGHT", "RIGHT", "c", ["a", "b"], ["x", "y", "c"]),
])
def test_lmove_directions(r, wf, wt, popped, src, dst):
    r.rpush("src{t}", "a", "b", "c")
    r.rpush("dst{t}", "x", "y")
    assert r.lmove("src{t}", "dst{t}", wf, wt) == popped
    assert r.lrange("src{t}", 0, -1) == src
    assert r.lrange("dst{t}", 0, -1) == dst


def test_lmove_edge_cases(r, resp):
    assert r.lmove("nosrc{t}", "dst{t}", "LEFT", "RIGHT") is None
    assert r.exists("dst{t}") == 0
    r.rpush("src{t}", "only")
    assert r.lmove("src{t}", "new{t}", "left", "right") == "only"
    assert r.exists("src{t}") == 0
    assert r.lrange("new{t}", 0, -1) == ["only"]
    # Same key: rotation, never deleted even with one element.
    r.rpush("rot", "1", "2", "3")
    assert r.lmove("rot", "rot", "LEFT", "RIGHT") == "1"
    assert r.lrange("rot", 0, -1) == ["2", "3", "1"]
    r.delete("rot")
    r.rpush("rot", "z")
    assert r.rpoplpush("rot", "rot") == "z"
    assert r.lrange("rot", 0, -1) == ["z"]
    assert resp.call("LMOVE", "rot", "x", "up", "left") == SYNTAX
    assert resp.call("LMOVE", "rot", "x", "left", "down") == SYNTAX


def test_rpoplpush(r):
    r.rpush("a{t}", "1", "2", "3")
    assert r.rpoplpush("a{t}", "b{t}") == "3"
    assert r.rpoplpush("a{t}", "b{t}") == "2"
    assert r.lrange("b{t}", 0, -1) == ["2", "3"]
    assert r.rpoplpush("none{t}", "b{t}") is None


# -------------------------------------------------------------------- LMPOP

def test_lmpop(resp):
    resp.call("RPUSH", "b{t}", "1", "2", "3")
    assert resp.call("LMPOP", "2", "a{t}", "b{t}", "LEFT") == [b"b{t}", [b"1"]]
    assert resp.call("LMPOP", "2", "a{t}", "b{t}", "RIGHT", "COUNT", "10") == [b"b{t}", [b"3", b"2"]]
    assert resp.call("EXISTS", "b{t}") == 0
    resp.send("LMPOP", "2", "a{t}", "b{t}", "LEFT")
    assert resp._line() == b"*-1"
    resp.call("RPUSH", "a{t}", "x", "y")
    resp.call("RPUSH", "b{t}", "z")
    assert resp.call("LMPOP", "2", "a{t}", "b{t}", "left", "count", "1") == [b"a{t}", [b"x"]]


def test_lmpop_errors(resp):
    for nk in ("0", "-1", "a"):
        assert resp.call("LMPOP", nk, "k", "LEFT") == ("error", "ERR numkeys should be greater than 0")
    for args in (["1", "k", "bad"], ["1", "k", "LEFT", "extra"], ["1", "k", "RIGHT", "LEFT"], ["1", "k", "COUNT"],
                 ["1", "k", "LEFT", "COUNT", "1", "COUNT", "2"], ["2", "k", "k2", "bad"], ["5", "k", "LEFT"],
                 ["1", "k", "LEFT", "COUNT"]):
        assert resp.call("LMPOP", *args) == SYNTAX, args
    for c in ("0", "a", "-1"):
        assert resp.call("LMPOP", "1", "k", "LEFT", "COUNT", c) == ("error", "ERR count should be greater than 0")
    if not IS_REDIS:  # 7.0.15 overflows computing the position of LEFT|RIGHT
        assert resp.call("LMPOP", str(LLONG_MAX), "k", "LEFT") == SYNTAX


def test_lmpop_resp3(resp3):
    resp3.call("RPUSH", "k", "a", "b")
    assert resp3.call("LMPOP", "1", "k", "RIGHT", "COUNT", "2") == [b"k", [b"b", b"a"]]
    resp3.send("LMPOP", "1", "k", "RIGHT")
    assert resp3._line() == b"_"


def test_command_info_and_getkeys(resp):
    info = resp.call("COMMAND", "INFO", "lmpop")[0]
    assert info[1] == -4
    assert "movablekeys" in info[2] and "write" in info[2]
    assert info[3:6] == [0, 0, 0]
    info = resp.call("COMMAND", "INFO", "blpop")[0]
    assert info[1:2] + info[3:6] == [-3, 1, -2, 1]
    # 7.0 has noscript on BLPOP; 7.2 dropped it (scripts may call it).
    assert set(info[2]) == ({"write", "noscript", "blocking"} if IS_REDIS else {"write", "blocking"})
    assert {"@write", "@list", "@slow", "@blocking"} <= set(info[6])
    info = resp.call("COMMAND", "INFO", "lpush")[0]
    assert {"write", "denyoom", "fast"} <= set(info[2])
    assert resp.call("COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT") == [b"a", b"b"]
    assert resp.call("COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "3") == [b"a", b"b"]
    assert resp.call("COMMAND", "GETKEYS", "BLPOP", "a", "b", "c", "0") == [b"a", b"b", b"c"]
    assert resp.call("COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "LEFT") == [b"a", b"b"]


def test_lmpop_many_keys_across_slots(r):
    keys = ["k%d" % i for i in range(100)]
    r.rpush(keys[77], "v")
    assert r.execute_command("LMPOP", len(keys), *keys, "LEFT") == [keys[77], ["v"]]


# ------------------------------------------------------------------ blocking
# Only the paths that answer at once: the served waiters are covered by
# test_blocking.py.

def test_blocking_pops_with_data(resp):
    resp.call("RPUSH", "a{t}", "1", "2")
    resp.call("RPUSH", "b{t}", "x")
    assert resp.call("BLPOP", "none{t}", "a{t}", "b{t}", "0") == [b"a{t}", b"1"]
    assert resp.call("BRPOP", "b{t}", "a{t}", "0.5") == [b"b{t}", b"x"]
    assert resp.call("EXISTS", "b{t}") == 0
    assert resp.call("BRPOPLPUSH", "a{t}", "c{t}", "0") == b"2"
    assert resp.call("EXISTS", "a{t}") == 0
    assert resp.call("BLMOVE", "c{t}", "d{t}", "LEFT", "RIGHT", "0") == b"2"
    resp.call("RPUSH", "e{t}", "1", "2", "3")
    assert resp.call("BLMPOP", "0", "2", "z{t}", "e{t}", "RIGHT", "COUNT", "2") == [b"e{t}", [b"3", b"2"]]
    assert resp.call("BLMPOP", "0", "1", "e{t}", "LEFT") == [b"e{t}", [b"1"]]
    assert resp.call("EXISTS", "e{t}") == 0


def test_blocking_timeouts_reply_nulls(resp, resp3):
    t0 = time.time()
    resp.send("BLPOP", "none", "0.05")
    assert resp._line() == b"*-1"
    resp.send("BRPOP", "none", "0.05")
    assert resp._line() == b"*-1"
    resp.send("BLMPOP", "0.05", "1", "none", "LEFT")
    assert resp._line() == b"*-1"
    # A timeout is a null array for every blocking list command, BRPOPLPUSH
    # and BLMOVE included (only their can't-block path, in MULTI, is $-1).
    resp.send("BRPOPLPUSH", "none", "dst", "0.05")
    assert resp._line() == b"*-1"
    resp.send("BLMOVE", "none", "dst", "LEFT", "LEFT", "0.05")
    assert resp._line() == b"*-1"
    for args in (("BLPOP", "none", "0.05"), ("BRPOPLPUSH", "none", "dst", "0.05"),
                 ("BLMPOP", "0.05", "1", "none", "RIGHT")):
        resp3.send(*args)
        assert resp3._line() == b"_"
    assert time.time() - t0 < 5
    assert resp.call("EXISTS", "dst") == 0


def test_blocking_argument_errors(resp):
    for args in (("BLPOP", "k", "x"), ("BRPOP", "k", "1x"), ("BRPOPLPUSH", "a", "b", "nan"),
                 ("BLMOVE", "a", "b", "LEFT", "LEFT", "x"), ("BLMPOP", "x", "1", "k", "LEFT")):
        assert resp.call(*args) == ("error", "ERR timeout is not a float or out of range"), args
    for args in (("BLPOP", "k", "-1"), ("BLMOVE", "a", "b", "LEFT", "LEFT", "-0.5"),
                 ("BLMPOP", "-1", "1", "k", "LEFT")):
        assert resp.call(*args) == ("error", "ERR timeout is negative"), args
    assert resp.call("BLMOVE", "a", "b", "UP", "LEFT", "x") == SYNTAX  # where before timeout
    assert resp.call("BLMPOP", "x", "0", "k", "LEFT") == ("error", "ERR numkeys should be greater than 0")
    assert resp.call("BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0") == (
        "error", "ERR count should be greater than 0")


@pytest.mark.parametrize("cmd,args,want", [
    ("BLPOP", ["q", "5"], [b"q", b"hello"]),
    ("BRPOPLPUSH", ["q", "dst", "5"], b"hello"),
    ("BLMOVE", ["q", "dst", "LEFT", "RIGHT", "5"], b"hello"),
    ("BLMPOP", ["5", "2", "other", "q", "LEFT", "COUNT", "3"], [b"q", [b"hello"]]),
])
def test_waiter_is_served_by_push(server, r, cmd, args, want):
    """A waiter gets the element pushed later (needs the blocking layer)."""
    waiter = Resp(server.port, timeout=0.5)
    waiter.send(cmd, *args)
    try:
        reply = waiter.read()
        waiter.close()
        pytest.skip("blocking layer not available yet (%s answered %r at once)" % (cmd, reply))
    except socket.timeout:
        pass
    waiter.s.settimeout(5)
    r.rpush("q", "hello")
    assert waiter.read() == want
    assert r.exists("q") == 0
    waiter.close()


# ---------------------------------------------------------------- encodings

def test_small_list_is_listpack(r):
    need72(r)
    r.rpush("l", "a", "b", "1")
    assert enc(r, "l") == "listpack"
    r.lpush("n", 1)
    assert enc(r, "n") == "listpack"


def test_conversion_by_bytes_and_back(r):
    need72(r)
    r.rpush("l", "a" * 4000, "b" * 4000)
    assert enc(r, "l") == "listpack"
    r.rpush("l", "c" * 300)  # 8000+ bytes plus the new ones > 8 KB
    assert enc(r, "l") == "quicklist"
    # Back to listpack only below half the limit (one node, <= 4 KB).
    r.rpop("l")
    assert enc(r, "l") == "quicklist"
    r.rpop("l")
    assert enc(r, "l") == "listpack"
    assert r.lrange("l", 0, -1) == ["a" * 4000]


def test_conversion_by_count(r):
    need72(r)
    r.config_set("list-max-listpack-size", 4)
    r.rpush("l", "a", "b", "c", "d")
    assert enc(r, "l") == "listpack"
    r.rpush("l", "e")
    assert enc(r, "l") == "quicklist"
    r.rpush("m", *"abcdefg")
    assert enc(r, "m") == "quicklist"
    # Shrinks: [a b c d][e f g] -> RPOP 5 -> [a b]: one node, count <= 2.
    r.rpop("m", 5)
    assert enc(r, "m") == "listpack"
    assert r.lrange("m", 0, -1) == ["a", "b"]


@pytest.mark.parametrize("op", ["rpop", "lrem", "ltrim", "lset", "lmpop", "blpop"])
def test_quicklist_to_listpack_on_every_shrinking_path(r, op):
    need72(r)
    r.config_set("list-max-listpack-size", 3)
    r.rpush("l{t}", "a", "b", "c", "d")
    assert enc(r, "l{t}") == "quicklist"
    if op == "rpop":
        r.rpop("l{t}", 3)
    elif op == "lrem":
        r.delete("l{t}")
        r.rpush("l{t}", "a", "a", "a", "d")
        r.lrem("l{t}", 3, "a")
    elif op == "ltrim":
        r.ltrim("l{t}", 1, 1)
    elif op == "lmpop":
        r.execute_command("LMPOP", 1, "l{t}", "RIGHT", "COUNT", 3)
    elif op == "blpop":
        for _ in range(3):
            r.blpop(["l{t}"], 0)
    else:
        r.config_set("list-max-listpack-size", -1)
        r.delete("l{t}")
        r.rpush("l{t}", "x" * 5000, "a", "b")
        r.rpop("l{t}", 2)
        assert enc(r, "l{t}") == "quicklist"  # a plain node never converts
        r.lset("l{t}", -1, "c")
    assert enc(r, "l{t}") == "listpack"


def test_conversion_on_every_growing_path(r):
    need72(r)
    r.config_set("list-max-listpack-size", -1)  # 4 KB
    big = "x" * 5000
    for name, fn in [("rpush", lambda: r.rpush("l{t}", big)),
                     ("linsert", lambda: r.linsert("l{t}", "after", "b", big)),
                     ("linsert-nopivot", lambda: r.linsert("l{t}", "after", "zzz", big)),
                     ("lset", lambda: r.lset("l{t}", 0, big)),
                     ("lmove", lambda: r.lmove("src{t}", "l{t}", "RIGHT", "RIGHT"))]:
        r.delete("l{t}", "src{t}")
        r.rpush("l{t}", "a", "b", "c")
        r.rpush("src{t}", "a", big)
        assert enc(r, "l{t}") == "listpack"
        fn()
        assert enc(r, "l{t}") == "quicklist", name


def test_invalid_fill_values(r):
    need72(r)
    r.config_set("list-max-listpack-size", 0)  # treated as 1
    r.rpush("l", "a")
    assert enc(r, "l") == "listpack"
    r.rpush("l", "b")
    assert enc(r, "l") == "quicklist"
    r.config_set("list-max-listpack-size", -6)  # treated as -5 (64 KB)
    r.delete("l")
    r.rpush("l", "x" * 60000)
    assert enc(r, "l") == "listpack"
    r.rpush("l", "x" * 5536)
    assert enc(r, "l") == "quicklist"


def test_object_encoding_quicklist_when_big(r):
    r.rpush("l", *["element:%d" % i for i in range(2000)])
    assert enc(r, "l") == "quicklist"
    assert r.llen("l") == 2000
    assert r.lindex("l", 1234) == "element:1234"
    assert r.memory_usage("l") > 2000 * 10


# ----------------------------------------------------- quicklist vs a model

def model_op(r, model, rnd, key, big):
    op = rnd.randrange(12)
    v = rnd.choice(["a", "bb", str(rnd.randrange(-300, 300)), "x" * rnd.randrange(1, 200), big,
                    str(rnd.randrange(1 << 40))])
    n = len(model)
    if op == 0:
        r.lpush(key, v)
        model.insert(0, v)
    elif op == 1:
        r.rpush(key, v, v + "2")
        model.extend([v, v + "2"])
    elif op == 2 and n:
        assert r.lpop(key) == model.pop(0)
    elif op == 3 and n:
        k = rnd.randrange(1, 6)
        got = r.rpop(key, k)
        want = model[-k:][::-1]
        del model[-k:]
        assert got == want
    elif op == 4 and n:
        i = rnd.randrange(-n, n)
        assert r.lset(key, i, v)
        model[i] = v
    elif op == 5 and n:
        pivot = rnd.choice(model)
        after = rnd.random() < 0.5
        assert r.linsert(key, "after" if after else "before", pivot, v) == n + 1
        j = model.index(pivot)
        model.insert(j + 1 if after else j, v)
    elif op == 6 and n:
        target = rnd.choice(model)
        cnt = rnd.choice([0, 1, 2, -1, -2])
        removed = r.lrem(key, cnt, target)
        idx = [i for i, x in enumerate(model) if x == target]
        if cnt > 0:
            idx = idx[:cnt]
        elif cnt < 0:
            idx = idx[cnt:]
        for i in reversed(idx):
            del model[i]
        assert removed == len(idx)
    elif op == 7 and n:
        s, e = rnd.randrange(-n, n), rnd.randrange(-n, n)
        r.ltrim(key, s, e)
        s2 = s + n if s < 0 else s
        e2 = e + n if e < 0 else e
        model[:] = model[s2:e2 + 1] if s2 <= e2 else []
    elif op == 8 and n:
        i = rnd.randrange(-n, n)
        assert r.lindex(key, i) == model[i]
    elif op == 9 and n:
        s = rnd.randrange(0, n)
        assert r.lrange(key, s, s + 30) == model[s:s + 31]
    elif op == 10 and n:
        target = rnd.choice(model)
        assert r.lpos(key, target, rank=-1) == max(i for i, x in enumerate(model) if x == target)
    elif op == 11:
        vals = [str(rnd.randrange(1000)) for _ in range(40)]
        r.rpush(key, *vals)
        model.extend(vals)
    assert r.llen(key) == len(model)


@pytest.mark.parametrize("fill,depth", [(-2, 0), (4, 0), (-1, 0), (1, 0), (3, 1), (-1, 2)])
def test_random_operations_against_model(server, r, fill, depth):
    if depth and not has_config(server, "list-compress-depth"):
        pytest.skip("server has no list-compress-depth yet")
    r.config_set("list-max-listpack-size", fill)
    if depth:
        r.config_set("list-compress-depth", depth)
    rnd = random.Random(1000 + fill * 10 + depth)
    big = "B" * 9000
    model = []
    for step in range(700):
        model_op(r, model, rnd, "l", big)
        if step % 50 == 0:
            assert r.lrange("l", 0, -1) == model
        if not model:
            assert r.exists("l") == 0
    assert r.lrange("l", 0, -1) == model


# ----------------------------------------------------------- keyspace glue

def test_copy_is_deep(r):
    r.rpush("a{t}", *range(3000))
    assert r.copy("a{t}", "b{t}")
    r.rpush("a{t}", "more")
    r.lset("b{t}", 0, "changed")
    assert r.llen("a{t}") == 3001
    assert r.llen("b{t}") == 3000
    assert r.lindex("a{t}", 0) == "0"
    assert r.lindex("b{t}", 0) == "changed"
    assert enc(r, "b{t}") == enc(r, "a{t}")


def test_expired_list_is_gone(r):
    r.rpush("l", "a")
    r.pexpire("l", 1)
    time.sleep(0.02)
    assert r.llen("l") == 0
    assert r.rpushx("l", "b") == 0
    assert r.lpop("l") is None


def test_read_commands_count_keyspace_hits(r):
    r.rpush("l", "a")
    r.config_resetstat()
    r.llen("l")
    r.lrange("l", 0, -1)
    r.lindex("l", 0)
    r.lpos("l", "a")
    r.llen("missing")
    r.lrange("missing", 0, -1)
    # Writes do not count.
    r.rpush("l", "b")
    r.lpop("missing")
    r.lpop("l")
    assert info_field(r, "stats", "keyspace_hits") == "4"
    assert info_field(r, "stats", "keyspace_misses") == "2"


def test_delete_huge_list(r):
    for i in range(0, 200000, 10000):
        r.rpush("big", *range(i, i + 10000))
    assert r.llen("big") == 200000
    assert r.delete("big") == 1
    assert r.exists("big") == 0


def test_concurrent_pushes_and_pops_lose_nothing(server, r):
    """Writers on several connections against poppers: every element is
    popped exactly once."""
    n_writers, per = 4, 500
    popped = []
    lock = threading.Lock()
    done = threading.Event()

    def writer(w):
        c = server.client(decode_responses=True)
        for i in range(0, per, 50):
            c.rpush("q", *["%d:%d" % (w, j) for j in range(i, i + 50)])
        c.close()

    def popper():
        c = server.client(decode_responses=True)
        while True:
            finished = done.is_set()
            got = c.lpop("q", 7)
            if got:
                with lock:
                    popped.extend(got)
            elif finished:
                break
            else:
                time.sleep(0.002)
        c.close()

    ts = [threading.Thread(target=writer, args=(w,)) for w in range(n_writers)]
    ps = [threading.Thread(target=popper) for _ in range(3)]
    for t in ts + ps:
        t.start()
    for t in ts:
        t.join()
    done.set()
    for t in ps:
        t.join()
    assert sorted(popped) == sorted("%d:%d" % (w, j) for w in range(n_writers) for j in range(per))
    assert r.exists("q") == 0


def test_config_compress_depth_roundtrip(server, r):
    if not has_config(server, "list-compress-depth"):
        pytest.skip("server has no list-compress-depth yet")
    r.config_set("list-compress-depth", 1)
    assert r.config_get("list-compress-depth") == {"list-compress-depth": "1"}
    r.rpush("l", *["element:%d" % i for i in range(20000)])
    assert r.lindex("l", 10000) == "element:10000"
    assert r.lrange("l", 9998, 10001) == ["element:%d" % i for i in range(9998, 10002)]
    r.linsert("l", "before", "element:10000", "X")
    assert r.lindex("l", 10000) == "X"
    assert r.lrem("l", 0, "X") == 1
    assert r.llen("l") == 20000


def test_debug_quicklist_packed_threshold(r, resp):
    """DEBUG QUICKLIST-PACKED-THRESHOLD puts elements of at least that size
    in plain nodes of their own; values and order must not change."""
    reply = resp.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b")
    if isinstance(reply, tuple):
        pytest.skip("DEBUG QUICKLIST-PACKED-THRESHOLD not available: %s" % reply[1])
    try:
        assert resp.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb") == (
            "error", "ERR argument must be a memory value bigger than 1 and smaller than 4gb")
        assert resp.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc")[0] == "error"
        r.config_set("list-max-listpack-size", 2)
        model = []
        for i in range(30):
            r.rpush("l", "v%d" % i)
            model.append("v%d" % i)
        assert enc(r, "l") == "quicklist"
        r.linsert("l", "before", "v10", "ins")
        model.insert(10, "ins")
        r.lset("l", 3, "set")
        model[3] = "set"
        r.lrem("l", 0, "v20")
        model.remove("v20")
        assert r.lpop("l") == model.pop(0)
        assert r.rpop("l", 2) == [model.pop(), model.pop()]
        assert r.lrange("l", 0, -1) == model
        assert r.lmove("l", "l", "LEFT", "RIGHT") == model[0]
        model.append(model.pop(0))
        assert r.lrange("l", 0, -1) == model
    finally:
        assert resp.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == "OK"


def test_debug_listpack_and_quicklist(server, r, resp):
    """DEBUG LISTPACK / DEBUG QUICKLIST print a value's layout on stdout with
    Redis's status replies and errors for a missing key or another
    encoding.  (Redis prints its own layout; only HotKV's text is read.)"""
    r.config_set("list-max-listpack-size", 128)
    r.hset("h", mapping={"f1": "v1", "f2": "12345"})
    r.rpush("small", "a", "b", "c")
    r.set("s", "str")
    assert resp.call("DEBUG", "LISTPACK", "h") == "Listpack structure printed on stdout"
    assert resp.call("DEBUG", "LISTPACK", "missing") == ("error", "ERR no such key")
    assert resp.call("DEBUG", "LISTPACK", "s") == ("error", "ERR Not a listpack encoded object.")
    assert resp.call("DEBUG", "QUICKLIST", "h") == ("error", "ERR Not a quicklist encoded object.")
    r.config_set("list-max-listpack-size", 4)
    r.rpush("big", *["e%d" % i for i in range(10)])
    assert enc(r, "big") == "quicklist"
    assert resp.call("DEBUG", "QUICKLIST", "big", "1") == "Quicklist structure printed on stdout"
    assert resp.call("DEBUG", "QUICKLIST", "missing") == ("error", "ERR no such key")
    assert resp.call("DEBUG", "LISTPACK", "big") == ("error", "ERR Not a listpack encoded object.")
    if IS_REDIS or not hasattr(server, "dir"):
        return
    deadline = time.time() + 5
    while time.time() < deadline:
        with open("%s/server.log" % server.dir) as f:
            out = f.read()
        if "quicklist" in out and "e9" in out:
            break
        time.sleep(0.05)
    assert 'str(2) "f1"' in out and "int 12345" in out
    assert "10 elements in 3 nodes" in out and 'str(2) "e9"' in out
