"""Sorted set integration tests (Redis 7.x semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis); behaviour
added in Redis 7.2/7.4 (ZRANK WITHSCORE, ZADD picking the encoding from
every member, ZSCAN NOVALUES) is marked and skipped against the 7.0 server.
Replies are checked on the wire through the raw `resp`/`resp3` clients:
bytes for bulk strings, floats for RESP3 doubles, ("error", msg) tuples.
"""
import threading
import time

import pytest

from helpers import IS_REDIS, Resp, arity_error as arity, make_nonstring, requires

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
NOT_FLOAT = ("error", "ERR value is not a valid float")
MINMAX_FLOAT = ("error", "ERR min or max is not a float")
MINMAX_LEX = ("error", "ERR min or max not valid string range item")
NAN_SCORE = ("error", "ERR resulting score is not a number (NaN)")
POSITIVE = ("error", "ERR value is out of range, must be positive")

# Redis 7.0.15 lacks these 7.2+ features; HotKV follows 7.4.
needs_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2+ behaviour (reference server is 7.0)")


def b(*items):
    return [x if isinstance(x, bytes) else str(x).encode() for x in items]


def first_line(c, *args):
    """Send a command and return the first line of its reply (to tell $-1
    from *-1); only for replies that are one line."""
    c.send(*args)
    return c._line()


def enc(c, key):
    return c.call("OBJECT", "ENCODING", key)


@pytest.fixture
def small(resp):
    """Thresholds lowered so that conversions are cheap to reach."""
    old = [resp.call("CONFIG", "GET", "zset-max-listpack-entries")[1],
           resp.call("CONFIG", "GET", "zset-max-listpack-value")[1]]
    assert resp.call("CONFIG", "SET", "zset-max-listpack-entries", "4") == "OK"
    assert resp.call("CONFIG", "SET", "zset-max-listpack-value", "8") == "OK"
    yield resp
    resp.call("CONFIG", "SET", "zset-max-listpack-entries", old[0])
    resp.call("CONFIG", "SET", "zset-max-listpack-value", old[1])


BOTH = ["listpack", "skiplist"]


def make(c, key, pairs, encoding):
    """Create key from (score, member) pairs in the wanted encoding."""
    c.call("DEL", key)
    if encoding == "skiplist":
        got = c.call("CONFIG", "GET", "zset-max-listpack-entries")
        old = got[b"zset-max-listpack-entries"] if isinstance(got, dict) else got[1]
        c.call("CONFIG", "SET", "zset-max-listpack-entries", "0")
    args = []
    for s, m in pairs:
        args += [s, m]
    if args:
        c.call("ZADD", key, *args)
    if encoding == "skiplist":
        c.call("CONFIG", "SET", "zset-max-listpack-entries", old)
    if args:
        assert enc(c, key) == encoding.encode()


# ------------------------------------------------------------------ ZADD

@requires("ZADD")
def test_zadd_basic_and_reply(resp):
    assert resp.call("ZADD", "z", 1, "a", 2, "b") == 2
    assert resp.call("ZADD", "z", 3, "a", 4, "c") == 1
    assert resp.call("ZRANGE", "z", 0, -1, "WITHSCORES") == b("b", 2, "a", 3, "c", 4)
    assert resp.call("TYPE", "z") == "zset"
    assert enc(resp, "z") == b"listpack"


@requires("ZADD")
@pytest.mark.parametrize("encoding", BOTH)
def test_zadd_order_score_then_member(resp, encoding):
    make(resp, "z", [(1, "b"), (1, "a"), (0, "zz"), (1, "ab"), ("-inf", "min"), ("inf", "max"), (1, "10"), (1, "9")],
         encoding)
    assert resp.call("ZRANGE", "z", 0, -1) == b("min", "zz", "10", "9", "a", "ab", "b", "max")
    assert resp.call("ZSCORE", "z", "max") == b"inf"
    assert resp.call("ZSCORE", "z", "min") == b"-inf"


@requires("ZADD")
@pytest.mark.parametrize("encoding", BOTH)
def test_zadd_options(resp, encoding):
    make(resp, "z", [(10, "x")], encoding)
    assert resp.call("ZADD", "z", "NX", 20, "x", 5, "y") == 1
    assert resp.call("ZSCORE", "z", "x") == b"10"
    assert resp.call("ZADD", "z", "XX", 20, "x", 5, "new") == 0
    assert resp.call("ZSCORE", "z", "x") == b"20"
    assert resp.call("ZSCORE", "z", "new") is None
    assert resp.call("ZADD", "z", "XX", "CH", 21, "x", 5, "y") == 1
    assert resp.call("ZADD", "z", "CH", 21, "x", 6, "y", 1, "w") == 2
    # GT / LT update only in one direction, and still add new members.
    assert resp.call("ZADD", "z", "GT", "CH", 1, "x", 7, "y", 0, "v") == 2
    assert resp.call("ZMSCORE", "z", "x", "y", "v") == b(21, 7, 0)
    assert resp.call("ZADD", "z", "LT", "CH", 30, "x", 3, "y") == 1
    assert resp.call("ZMSCORE", "z", "x", "y") == b(21, 3)
    assert resp.call("ZADD", "z", "XX", "GT", 100, "x", 100, "nope") == 0
    assert resp.call("ZSCORE", "z", "x") == b"100"
    assert resp.call("ZSCORE", "z", "nope") is None


@requires("ZADD")
def test_zadd_incr(resp):
    assert resp.call("ZADD", "z", "INCR", 5, "a") == b"5"
    assert resp.call("ZADD", "z", "INCR", 2.5, "a") == b"7.5"
    assert resp.call("ZADD", "z", "NX", "INCR", 1, "a") is None
    assert resp.call("ZADD", "z", "XX", "INCR", 1, "b") is None
    assert resp.call("ZADD", "z", "GT", "INCR", -1, "a") is None
    assert resp.call("ZADD", "z", "LT", "INCR", -1, "a") == b"6.5"
    assert resp.call("ZADD", "z", "INCR", 0, "a") == b"6.5"
    assert resp.call("ZADD", "missing", "XX", "INCR", 1, "a") is None
    assert resp.call("EXISTS", "missing") == 0
    assert resp.call("ZADD", "missing", "XX", 1, "a") == 0
    assert resp.call("EXISTS", "missing") == 0


@requires("ZADD")
def test_zadd_errors(resp):
    assert resp.call("ZADD", "z", "XX", "NX", 1, "a") == ("error", "ERR XX and NX options at the same time are not compatible")
    gtlt = ("error", "ERR GT, LT, and/or NX options at the same time are not compatible")
    assert resp.call("ZADD", "z", "GT", "NX", 1, "a") == gtlt
    assert resp.call("ZADD", "z", "LT", "NX", 1, "a") == gtlt
    assert resp.call("ZADD", "z", "GT", "LT", 1, "a") == gtlt
    assert resp.call("ZADD", "z", "INCR", 1, "a", 2, "b") == \
        ("error", "ERR INCR option supports a single increment-element pair")
    assert resp.call("ZADD", "z", 1, "a", 2) == SYNTAX
    assert resp.call("ZADD", "z", "NX", 1) == SYNTAX
    assert resp.call("ZADD", "z", "nan", "a") == NOT_FLOAT
    assert resp.call("ZADD", "z", "", "a") == NOT_FLOAT
    assert resp.call("ZADD", "z", "1e400", "a") == NOT_FLOAT
    assert resp.call("ZADD", "z", " 1", "a") == NOT_FLOAT
    assert resp.call("ZADD", "z", 1, "a", "x", "b") == NOT_FLOAT
    assert resp.call("EXISTS", "z") == 0          # all or nothing
    assert resp.call("ZADD", "z") == arity("zadd")
    assert resp.call("ZADD", "z", 1) == arity("zadd")
    # inf + -inf
    assert resp.call("ZADD", "z", "inf", "a") == 1
    assert resp.call("ZADD", "z", "INCR", "-inf", "a") == NAN_SCORE
    assert resp.call("ZSCORE", "z", "a") == b"inf"
    make_nonstring(resp, "l")
    assert resp.call("ZADD", "l", 1, "a") == WRONGTYPE
    resp.call("SET", "s", "x")
    assert resp.call("ZADD", "s", 1, "a") == WRONGTYPE


@requires("ZADD")
def test_zadd_scores_accept_strtod_forms(resp):
    assert resp.call("ZADD", "z", "1e3", "a", "-.5", "b", "0x10", "c", "+inf", "d") == 4
    assert resp.call("ZRANGE", "z", 0, -1, "WITHSCORES") == b("b", -0.5, "c", 16, "a", 1000, "d", "inf")


@requires("ZADD")
def test_score_formatting_resp2_17_digits(resp):
    resp.call("ZADD", "z", "0.1", "a", "1.5", "b", "3.0", "d", "1e20", "e", "123456789012345678", "f")
    # RESP2 scores are %.17g text (Redis 7.0's formatting).
    assert resp.call("ZSCORE", "z", "a") == b"0.10000000000000001"
    assert resp.call("ZSCORE", "z", "b") == b"1.5"
    assert resp.call("ZSCORE", "z", "d") == b"3"
    assert resp.call("ZSCORE", "z", "e") == b"1e+20"
    assert resp.call("ZSCORE", "z", "f") == b"1.2345678901234568e+17"


@requires("ZADD")
def test_score_resp3_doubles(resp3):
    resp3.call("ZADD", "z", "1.5", "a", "2", "b", "inf", "c")
    assert resp3.call("ZSCORE", "z", "a") == 1.5
    assert resp3.call("ZSCORE", "z", "c") == float("inf")
    assert first_line(resp3, "ZSCORE", "z", "b") == b",2"
    assert first_line(resp3, "ZSCORE", "z", "nope") == b"_"
    assert resp3.call("ZMSCORE", "z", "a", "nope") == [1.5, None]
    assert resp3.call("ZINCRBY", "z", 1, "a") == 2.5
    assert resp3.call("ZADD", "z", "INCR", 1, "b") == 3.0


# ------------------------------------------------------------- encodings

@requires("ZADD")
def test_conversion_by_entries(small):
    c = small
    c.call("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    assert enc(c, "z") == b"listpack"
    c.call("ZADD", "z", 5, "e")
    assert enc(c, "z") == b"skiplist"
    assert c.call("ZRANGE", "z", 0, -1) == b("a", "b", "c", "d", "e")
    # Removing members never converts back.
    c.call("ZREM", "z", "a", "b", "c")
    assert enc(c, "z") == b"skiplist"


@requires("ZADD")
def test_conversion_by_value_length(small):
    c = small
    c.call("ZADD", "z", 1, "a")
    c.call("ZADD", "z", 2, "12345678")
    assert enc(c, "z") == b"listpack"
    c.call("ZADD", "z", 3, "123456789")
    assert enc(c, "z") == b"skiplist"
    assert c.call("ZRANGE", "z", 0, -1) == b("a", "12345678", "123456789")


@requires("ZADD")
def test_zadd_many_pairs_at_once_creates_skiplist(small):
    c = small
    assert c.call("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e") == 5
    assert enc(c, "z") == b"skiplist"
    c.call("ZADD", "y", 1, "a", 2, "b", 3, "c", 4, "d")
    assert enc(c, "y") == b"listpack"
    assert c.call("ZADD", "y", 1, "a") == 0
    assert enc(c, "y") == b"listpack"


@requires("ZADD")
def test_zadd_long_member_in_later_pair_creates_skiplist(small):
    # 7.0 looks at the first member only; 7.2+ at the longest.
    c = small
    c.call("ZADD", "z", 1, "a", 2, "this-is-long")
    assert enc(c, "z") == b"skiplist"


@requires("ZADD")
def test_zero_entries_threshold_means_skiplist(resp):
    resp.call("CONFIG", "SET", "zset-max-listpack-entries", "0")
    try:
        resp.call("ZADD", "z", 1, "a")
        assert enc(resp, "z") == b"skiplist"
    finally:
        resp.call("CONFIG", "SET", "zset-max-listpack-entries", "128")


@requires("ZADD")
@pytest.mark.parametrize("mode", ["single", "multiple", "single_multiple"])
def test_zadd_fills_listpack_to_the_limit(resp, mode):
    resp.call("CONFIG", "SET", "zset-max-listpack-entries", "64")
    try:
        if mode == "single":
            for i in range(64):
                resp.call("ZADD", "z", i, i)
        else:
            if mode == "single_multiple":
                resp.call("ZADD", "z", 1, 1)
            args = []
            for i in range(64):
                args += [i, i]
            resp.call("ZADD", "z", *args)
        assert enc(resp, "z") == b"listpack"
        assert resp.call("ZCARD", "z") == 64
        assert resp.call("ZADD", "z", 1, "b") == 1
        assert enc(resp, "z") == b"skiplist"
    finally:
        resp.call("CONFIG", "SET", "zset-max-listpack-entries", "128")


@requires("ZADD")
def test_big_zset_copy_del_memory(resp):
    args = []
    for i in range(1000):
        args += [i, "m%d" % i]
    resp.call("ZADD", "z", *args)
    assert enc(resp, "z") == b"skiplist"
    assert resp.call("COPY", "z", "z2") == 1
    resp.call("ZREM", "z", "m0")
    assert resp.call("ZCARD", "z2") == 1000
    assert resp.call("ZSCORE", "z2", "m0") == b"0"
    assert enc(resp, "z2") == b"skiplist"
    assert resp.call("MEMORY", "USAGE", "z2") > 30000
    resp.call("ZADD", "small", 1, "a")
    assert 0 < resp.call("MEMORY", "USAGE", "small") < 200
    assert resp.call("DEL", "z", "z2") == 2
    assert resp.call("EXISTS", "z") == 0


# --------------------------------------------------------------- ZINCRBY

@requires("ZINCRBY")
@pytest.mark.parametrize("encoding", BOTH)
def test_zincrby(resp, encoding):
    make(resp, "z", [(1, "a"), (5, "b")], encoding)
    assert resp.call("ZINCRBY", "z", 10, "a") == b"11"
    assert resp.call("ZRANGE", "z", 0, -1) == b("b", "a")
    assert resp.call("ZINCRBY", "z", -1.5, "new") == b"-1.5"
    assert resp.call("ZINCRBY", "z", "v", "a") == NOT_FLOAT
    assert resp.call("ZINCRBY", "z", "nan", "a") == NOT_FLOAT
    resp.call("ZADD", "z", "inf", "i")
    assert resp.call("ZINCRBY", "z", "-inf", "i") == NAN_SCORE
    assert resp.call("ZINCRBY", "z", 1, "a", "extra") == arity("zincrby")
    assert resp.call("ZINCRBY", "fresh", 3, "x") == b"3"
    assert resp.call("ZINCRBY", "z", "nx", "a") == SYNTAX


# ------------------------------------------------- ZREM, ZCARD, ZSCORE

@requires("ZREM")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrem_deletes_empty_key(resp, encoding):
    make(resp, "z", [(1, "a"), (2, "b"), (3, "c")], encoding)
    assert resp.call("ZREM", "z", "a", "x", "a") == 1
    assert resp.call("ZCARD", "z") == 2
    assert resp.call("ZREM", "z", "b", "c", "d") == 2
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZREM", "z", "a") == 0
    assert resp.call("ZCARD", "z") == 0
    assert resp.call("ZREM", "z") == arity("zrem")
    make_nonstring(resp, "l")
    assert resp.call("ZREM", "l", "a") == WRONGTYPE
    assert resp.call("ZCARD", "l") == WRONGTYPE
    assert resp.call("ZSCORE", "l", "a") == WRONGTYPE
    assert resp.call("ZMSCORE", "l", "a") == WRONGTYPE


@requires("ZMSCORE")
def test_zscore_zmscore(resp):
    resp.call("ZADD", "z", 1, "a", 2.5, "b")
    assert resp.call("ZSCORE", "z", "b") == b"2.5"
    assert resp.call("ZSCORE", "z", "x") is None
    assert resp.call("ZSCORE", "nokey", "x") is None
    assert resp.call("ZMSCORE", "z", "a", "x", "b") == [b"1", None, b"2.5"]
    assert resp.call("ZMSCORE", "nokey", "a", "b") == [None, None]
    assert resp.call("ZMSCORE", "z") == arity("zmscore")


# --------------------------------------------------------- ZRANK family

@requires("ZRANK")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrank(resp, encoding):
    make(resp, "z", [(10, "x"), (20, "y"), (30, "z")], encoding)
    assert [resp.call("ZRANK", "z", m) for m in "xyz"] == [0, 1, 2]
    assert [resp.call("ZREVRANK", "z", m) for m in "xyz"] == [2, 1, 0]
    assert first_line(resp, "ZRANK", "z", "foo") == b"$-1"
    assert first_line(resp, "ZREVRANK", "nokey", "foo") == b"$-1"


@needs_72
@requires("ZRANK")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrank_withscore(resp, encoding):
    make(resp, "z", [(10, "x"), (20.5, "y"), (30, "z")], encoding)
    assert resp.call("ZRANK", "z", "y", "WITHSCORE") == [1, b"20.5"]
    assert resp.call("ZREVRANK", "z", "x", "withscore") == [2, b"10"]
    assert first_line(resp, "ZRANK", "z", "foo", "WITHSCORE") == b"*-1"
    assert first_line(resp, "ZRANK", "nokey", "foo", "WITHSCORE") == b"*-1"
    assert resp.call("ZRANK", "z", "x", "bad") == SYNTAX
    assert resp.call("ZRANK", "z", "x", "WITHSCORE", "more") == arity("zrank")


@needs_72
@requires("ZRANK")
def test_zrank_withscore_resp3(resp3):
    resp3.call("ZADD", "z", 1.5, "a")
    assert resp3.call("ZRANK", "z", "a", "WITHSCORE") == [0, 1.5]
    assert first_line(resp3, "ZRANK", "z", "b", "WITHSCORE") == b"_"


# ---------------------------------------------------------------- ZRANGE

@requires("ZRANGE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrange_by_rank(resp, encoding):
    make(resp, "z", [(1, "a"), (2, "b"), (3, "c"), (4, "d")], encoding)
    assert resp.call("ZRANGE", "z", 0, -1) == b("a", "b", "c", "d")
    assert resp.call("ZRANGE", "z", 1, 2) == b("b", "c")
    assert resp.call("ZRANGE", "z", -2, -1) == b("c", "d")
    assert resp.call("ZRANGE", "z", -10, 1) == b("a", "b")
    assert resp.call("ZRANGE", "z", 2, 100) == b("c", "d")
    assert resp.call("ZRANGE", "z", 3, 1) == []
    assert resp.call("ZRANGE", "z", 5, 10) == []
    assert resp.call("ZRANGE", "z", 0, -5) == []
    assert resp.call("ZRANGE", "z", 0, 1, "REV") == b("d", "c")
    assert resp.call("ZREVRANGE", "z", 0, -1, "WITHSCORES") == b("d", 4, "c", 3, "b", 2, "a", 1)
    assert resp.call("ZREVRANGE", "z", 1, 2) == b("c", "b")
    assert resp.call("ZRANGE", "z", 0, 1, "WITHSCORES") == b("a", 1, "b", 2)
    assert resp.call("ZRANGE", "nokey", 0, -1) == []
    assert resp.call("ZRANGE", "z", "a", 1) == NOT_INT


@requires("ZRANGE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrange_byscore(resp, encoding):
    make(resp, "z", [("-inf", "a"), (1, "b"), (2, "c"), (3, "d"), (4, "e"), (5, "f"), ("inf", "g")], encoding)
    assert resp.call("ZRANGE", "z", 2, 4, "BYSCORE") == b("c", "d", "e")
    assert resp.call("ZRANGE", "z", "(2", "(4", "BYSCORE") == b("d")
    assert resp.call("ZRANGE", "z", "-inf", "inf", "BYSCORE") == b("a", "b", "c", "d", "e", "f", "g")
    assert resp.call("ZRANGE", "z", "(-inf", "(inf", "BYSCORE") == b("b", "c", "d", "e", "f")
    assert resp.call("ZRANGE", "z", 4, 2, "BYSCORE", "REV") == b("e", "d", "c")
    assert resp.call("ZRANGEBYSCORE", "z", 2, 4, "WITHSCORES") == b("c", 2, "d", 3, "e", 4)
    assert resp.call("ZREVRANGEBYSCORE", "z", 4, 2, "WITHSCORES") == b("e", 4, "d", 3, "c", 2)
    assert resp.call("ZREVRANGEBYSCORE", "z", "(4", "(2") == b("d")
    assert resp.call("ZRANGEBYSCORE", "z", 4, 2) == []
    assert resp.call("ZRANGEBYSCORE", "z", "(2", 2) == []
    assert resp.call("ZRANGEBYSCORE", "z", 2.5, 2.9) == []
    # LIMIT offset count
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 0, 2) == b("b", "c")
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 2, 3) == b("d", "e", "f")
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 2, -1) == b("d", "e", "f")
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 0, 0) == []
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", 10, 2) == []
    assert resp.call("ZRANGEBYSCORE", "z", 0, 10, "LIMIT", -1, 2) == []
    assert resp.call("ZREVRANGEBYSCORE", "z", 10, 0, "LIMIT", 1, 2) == b("e", "d")
    assert resp.call("ZRANGE", "z", 10, 0, "BYSCORE", "REV", "LIMIT", 4, 10, "WITHSCORES") == b("b", 1)
    assert resp.call("ZRANGEBYSCORE", "nokey", 0, 1) == []


@requires("ZRANGE")
def test_zrangebyscore_long_limits(resp):
    args = []
    for i in range(30):
        args += [i, "i%d" % i]
    for encoding in BOTH:
        make(resp, "z", [(i, "i%d" % i) for i in range(30)], encoding)
        assert resp.call("ZRANGEBYSCORE", "z", 0, 20, "LIMIT", 12, 3) == b("i12", "i13", "i14")
        assert resp.call("ZRANGEBYSCORE", "z", 10, 30, "LIMIT", 19, 2) == b("i29")
        assert resp.call("ZREVRANGEBYSCORE", "z", 30, 10, "LIMIT", 12, 3) == b("i17", "i16", "i15")
        assert resp.call("ZREVRANGEBYSCORE", "z", 20, 0, "LIMIT", 18, 5) == b("i2", "i1", "i0")
        assert resp.call("ZREVRANGEBYSCORE", "z", 20, 0, "LIMIT", 20, 5) == b("i0")
        assert resp.call("ZREVRANGEBYSCORE", "z", 20, 0, "LIMIT", 21, 5) == []


LEX = ["alpha", "bar", "cool", "down", "elephant", "foo", "great", "hill", "omega"]


@requires("ZRANGEBYLEX")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrange_bylex(resp, encoding):
    make(resp, "z", [(0, m) for m in LEX], encoding)
    assert resp.call("ZRANGEBYLEX", "z", "-", "[cool") == b("alpha", "bar", "cool")
    assert resp.call("ZRANGEBYLEX", "z", "[bar", "(down") == b("bar", "cool")
    assert resp.call("ZRANGEBYLEX", "z", "(great", "+") == b("hill", "omega")
    assert resp.call("ZRANGEBYLEX", "z", "-", "+", "LIMIT", 2, 3) == b("cool", "down", "elephant")
    assert resp.call("ZREVRANGEBYLEX", "z", "[elez", "[bar") == b("elephant", "down", "cool", "bar")
    assert resp.call("ZREVRANGEBYLEX", "z", "+", "[d", "LIMIT", 2, 3) == b("great", "foo", "elephant")
    assert resp.call("ZRANGE", "z", "[c", "(f", "BYLEX") == b("cool", "down", "elephant")
    assert resp.call("ZRANGE", "z", "(f", "[c", "BYLEX", "REV") == b("elephant", "down", "cool")
    assert resp.call("ZRANGEBYLEX", "z", "+", "-") == []
    assert resp.call("ZRANGEBYLEX", "z", "[foo", "(foo") == []
    assert resp.call("ZRANGEBYLEX", "z", "[foo", "[foo") == b("foo")
    assert resp.call("ZLEXCOUNT", "z", "-", "+") == 9
    assert resp.call("ZLEXCOUNT", "z", "(bar", "[foo") == 4
    assert resp.call("ZLEXCOUNT", "z", "[z", "+") == 0
    assert resp.call("ZLEXCOUNT", "nokey", "-", "+") == 0
    for bad in (["foo", "bar"], ["[foo", "bar"], ["foo", "[bar"], ["+x", "[bar"], ["-x", "[bar"], ["", "+"]):
        assert resp.call("ZRANGEBYLEX", "z", *bad) == MINMAX_LEX
        assert resp.call("ZLEXCOUNT", "z", *bad) == MINMAX_LEX


@requires("ZRANGE")
def test_zrange_option_errors(resp):
    resp.call("ZADD", "z", 1, "a", 2, "b")
    assert resp.call("ZRANGE", "z", 0, -1, "LIMIT", 1, 2) == \
        ("error", "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    assert resp.call("ZRANGE", "z", 0, -1, "LIMIT", 0, -1) == b("a", "b")   # no LIMIT as far as Redis cares
    assert resp.call("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES") == \
        ("error", "ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    assert resp.call("ZREVRANGE", "z", 0, -1, "BYSCORE") == SYNTAX
    assert resp.call("ZREVRANGE", "z", 0, -1, "REV") == SYNTAX
    assert resp.call("ZRANGEBYSCORE", "z", 0, -1, "REV") == SYNTAX
    assert resp.call("ZRANGE", "z", 0, -1, "BYSCORE", "BYLEX") == SYNTAX
    assert resp.call("ZRANGE", "z", 0, -1, "LIMIT", 1) == SYNTAX
    assert resp.call("ZRANGE", "z", 0, -1, "BYSCORE", "LIMIT", "x", 1) == NOT_INT
    assert resp.call("ZRANGE", "z", 0, -1, "FOO") == SYNTAX
    for bad in (["str", 1], [1, "str"], [1, "NaN"], ["((1", 2]):
        assert resp.call("ZRANGEBYSCORE", "z", *bad) == MINMAX_FLOAT
        assert resp.call("ZCOUNT", "z", *bad) == MINMAX_FLOAT
    assert resp.call("ZRANGE", "z", 0) == arity("zrange")
    make_nonstring(resp, "l")
    assert resp.call("ZRANGE", "l", 0, -1) == WRONGTYPE
    assert resp.call("ZRANGE", "z", 0, -1, "withscores", "rev") == b("b", 2, "a", 1)


@requires("ZRANGE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrange_resp3_pairs(resp3, encoding):
    make(resp3, "z", [(1, "a"), (2.5, "b")], encoding)
    assert resp3.call("ZRANGE", "z", 0, -1, "WITHSCORES") == [[b"a", 1.0], [b"b", 2.5]]
    assert resp3.call("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES") == [[b"a", 1.0], [b"b", 2.5]]
    assert resp3.call("ZREVRANGE", "z", 0, 0, "WITHSCORES") == [[b"b", 2.5]]
    assert resp3.call("ZRANGE", "z", 0, -1) == [b"a", b"b"]
    assert resp3.call("ZRANGE", "nokey", 0, -1, "WITHSCORES") == []


@requires("ZCOUNT")
@pytest.mark.parametrize("encoding", BOTH)
def test_zcount(resp, encoding):
    make(resp, "z", [(1, "a"), (2, "b"), (3, "c"), (4, "d")], encoding)
    assert resp.call("ZCOUNT", "z", 2, 3) == 2
    assert resp.call("ZCOUNT", "z", "(1", "(4") == 2
    assert resp.call("ZCOUNT", "z", "-inf", "+inf") == 4
    assert resp.call("ZCOUNT", "z", 5, 10) == 0
    assert resp.call("ZCOUNT", "z", 3, 2) == 0
    assert resp.call("ZCOUNT", "nokey", 0, 1) == 0


# ----------------------------------------------------------- ZRANGESTORE

@requires("ZRANGESTORE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrangestore(resp, encoding):
    make(resp, "{t}src", [(1, "a"), (2, "b"), (3, "c"), (4, "d")], encoding)
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0, -1) == 4
    assert resp.call("ZRANGE", "{t}dst", 0, -1, "WITHSCORES") == b("a", 1, "b", 2, "c", 3, "d", 4)
    assert enc(resp, "{t}dst") == b"listpack"
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0, 1, "REV") == 2
    assert resp.call("ZRANGE", "{t}dst", 0, -1) == b("c", "d")
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", "(1", 3, "BYSCORE") == 2
    assert resp.call("ZRANGE", "{t}dst", 0, -1) == b("b", "c")
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 5, 0, "BYSCORE", "REV", "LIMIT", 1, 2) == 2
    assert resp.call("ZRANGE", "{t}dst", 0, -1) == b("b", "c")
    make(resp, "{t}lex", [(0, "a"), (0, "b"), (0, "c")], encoding)
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}lex", "[b", "[c", "BYLEX") == 2
    assert enc(resp, "{t}dst") == b"listpack"
    # Empty result: the destination is deleted.
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 10, 20) == 0
    assert resp.call("EXISTS", "{t}dst") == 0
    resp.call("SET", "{t}dst", "x")
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}nokey", 0, -1) == 0
    assert resp.call("EXISTS", "{t}dst") == 0
    # Source as destination.
    assert resp.call("ZRANGESTORE", "{t}src", "{t}src", 1, 2) == 2
    assert resp.call("ZRANGE", "{t}src", 0, -1) == b("b", "c")
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0, -1, "WITHSCORES") == SYNTAX
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0, -1, "LIMIT", 1, 2) == \
        ("error", "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    resp.call("SET", "{t}str", "x")
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}str", 0, -1) == WRONGTYPE
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0) == arity("zrangestore")


@requires("ZRANGESTORE")
def test_zrangestore_picks_encoding_by_size(small):
    c = small
    c.call("ZADD", "{t}src", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e", 6, "f")
    assert enc(c, "{t}src") == b"skiplist"
    assert c.call("ZRANGESTORE", "{t}dst", "{t}src", 0, 3) == 4
    assert enc(c, "{t}dst") == b"listpack"
    assert c.call("ZRANGESTORE", "{t}dst", "{t}src", 0, -1) == 6
    assert enc(c, "{t}dst") == b"skiplist"
    c.call("ZADD", "{t}long", 1, "a", 2, "123456789")
    assert c.call("ZRANGESTORE", "{t}dst", "{t}long", 0, -1) == 2
    assert enc(c, "{t}dst") == b"skiplist"


@requires("ZRANGESTORE")
def test_zrangestore_drops_ttl_of_destination(resp):
    resp.call("ZADD", "{t}src", 1, "a")
    resp.call("ZADD", "{t}dst", 5, "x")
    resp.call("EXPIRE", "{t}dst", 100)
    assert resp.call("ZRANGESTORE", "{t}dst", "{t}src", 0, -1) == 1
    assert resp.call("TTL", "{t}dst") == -1


# ---------------------------------------------------------- ZREMRANGEBY*

@requires("ZREMRANGEBYRANK")
@pytest.mark.parametrize("encoding", BOTH)
def test_zremrangebyrank(resp, encoding):
    pairs = [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    make(resp, "z", pairs, encoding)
    assert resp.call("ZREMRANGEBYRANK", "z", 1, 2) == 2
    assert resp.call("ZRANGE", "z", 0, -1) == b("a", "d", "e")
    assert resp.call("ZREMRANGEBYRANK", "z", -1, -1) == 1
    assert resp.call("ZREMRANGEBYRANK", "z", 5, 10) == 0
    assert resp.call("ZREMRANGEBYRANK", "z", 1, 0) == 0
    assert resp.call("ZREMRANGEBYRANK", "z", -100, 100) == 2
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZREMRANGEBYRANK", "z", 0, -1) == 0
    assert resp.call("ZREMRANGEBYRANK", "z", "x", 1) == NOT_INT


@requires("ZREMRANGEBYSCORE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zremrangebyscore(resp, encoding):
    pairs = [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    make(resp, "z", pairs, encoding)
    assert resp.call("ZREMRANGEBYSCORE", "z", 2, 4) == 3
    assert resp.call("ZRANGE", "z", 0, -1) == b("a", "e")
    make(resp, "z", pairs, encoding)
    assert resp.call("ZREMRANGEBYSCORE", "z", "(1", "(5") == 3
    assert resp.call("ZREMRANGEBYSCORE", "z", "-inf", 0) == 0
    assert resp.call("ZREMRANGEBYSCORE", "z", 3, 2) == 0
    assert resp.call("ZREMRANGEBYSCORE", "z", "-inf", "+inf") == 2
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZREMRANGEBYSCORE", "z", "x", 1) == MINMAX_FLOAT


@requires("ZREMRANGEBYLEX")
@pytest.mark.parametrize("encoding", BOTH)
def test_zremrangebylex(resp, encoding):
    make(resp, "z", [(0, m) for m in LEX], encoding)
    assert resp.call("ZREMRANGEBYLEX", "z", "-", "[cool") == 3
    assert resp.call("ZRANGE", "z", 0, -1) == b(*LEX[3:])
    make(resp, "z", [(0, m) for m in LEX], encoding)
    assert resp.call("ZREMRANGEBYLEX", "z", "(bar", "(down") == 1
    assert resp.call("ZREMRANGEBYLEX", "z", "(az", "(b") == 0
    assert resp.call("ZREMRANGEBYLEX", "z", "-", "+") == 8
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZREMRANGEBYLEX", "z", "a", "+") == MINMAX_LEX


# ------------------------------------------------------------------- POP

@requires("ZPOPMIN")
@pytest.mark.parametrize("encoding", BOTH)
def test_zpopmin_zpopmax(resp, encoding):
    make(resp, "z", [(1, "a"), (2, "b"), (3, "c"), (4, "d")], encoding)
    assert resp.call("ZPOPMIN", "z") == b("a", 1)
    assert resp.call("ZPOPMAX", "z") == b("d", 4)
    assert resp.call("ZPOPMIN", "z", 0) == []
    assert resp.call("ZPOPMAX", "z", 1) == b("c", 3)
    assert resp.call("ZPOPMIN", "z", 10) == b("b", 2)
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZPOPMIN", "z") == []
    assert resp.call("ZPOPMIN", "z", 3) == []
    assert resp.call("ZPOPMIN", "z", -1) == POSITIVE
    assert resp.call("ZPOPMAX", "z", "x") == POSITIVE
    assert resp.call("ZPOPMAX", "z", 1, 2) == SYNTAX
    make(resp, "z", [(1, "a"), (2, "b"), (3, "c"), (4, "d")], encoding)
    assert resp.call("ZPOPMAX", "z", 3) == b("d", 4, "c", 3, "b", 2)
    assert resp.call("ZRANGE", "z", 0, -1) == b("a")
    make_nonstring(resp, "l")
    assert resp.call("ZPOPMIN", "l") == WRONGTYPE
    assert resp.call("ZPOPMAX", "l", 0) == WRONGTYPE


@requires("ZPOPMIN")
def test_zpop_resp3_shapes(resp3):
    resp3.call("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert resp3.call("ZPOPMIN", "z") == [b"a", 1.0]
    assert resp3.call("ZPOPMAX", "z", 1) == [[b"c", 3.0]]
    assert resp3.call("ZPOPMIN", "z", 5) == [[b"b", 2.0]]
    assert resp3.call("ZPOPMIN", "z") == []


@requires("ZMPOP")
@pytest.mark.parametrize("encoding", BOTH)
def test_zmpop(resp, encoding):
    make(resp, "{t}b", [(1, "a"), (2, "b"), (3, "c")], encoding)
    assert resp.call("ZMPOP", 2, "{t}a", "{t}b", "MIN") == [b"{t}b", [[b"a", b"1"]]]
    assert resp.call("ZMPOP", 2, "{t}a", "{t}b", "MAX", "COUNT", 10) == [b"{t}b", [[b"c", b"3"], [b"b", b"2"]]]
    assert resp.call("EXISTS", "{t}b") == 0
    assert first_line(resp, "ZMPOP", 2, "{t}a", "{t}b", "MIN") == b"*-1"


@requires("ZMPOP")
def test_zmpop_errors(resp):
    assert resp.call("ZMPOP", 1) == arity("zmpop")
    assert resp.call("ZMPOP", 1, "z") == arity("zmpop")
    for n in (0, "a", -1):
        assert resp.call("ZMPOP", n, "z", "MIN") == ("error", "ERR numkeys should be greater than 0")
    assert resp.call("ZMPOP", 1, "z", "bad") == SYNTAX
    assert resp.call("ZMPOP", 1, "z", "MIN", "x") == SYNTAX
    assert resp.call("ZMPOP", 1, "z", "MAX", "MIN") == SYNTAX
    assert resp.call("ZMPOP", 1, "z", "COUNT") == SYNTAX
    assert resp.call("ZMPOP", 1, "z", "MAX", "COUNT", 1, "COUNT", 2) == SYNTAX
    assert resp.call("ZMPOP", 5, "z", "MIN") == SYNTAX
    for n in (0, "a", -1):
        assert resp.call("ZMPOP", 1, "z", "MIN", "COUNT", n) == ("error", "ERR count should be greater than 0")
    resp.call("SET", "{t}s", "x")
    assert resp.call("ZMPOP", 2, "{t}none", "{t}s", "MIN") == WRONGTYPE


@requires("ZMPOP")
def test_zmpop_resp3(resp3):
    resp3.call("ZADD", "z", 1, "a", 2, "b")
    assert resp3.call("ZMPOP", 1, "z", "MAX", "COUNT", 2) == [b"z", [[b"b", 2.0], [b"a", 1.0]]]
    assert first_line(resp3, "ZMPOP", 1, "z", "MIN") == b"_"


# --------------------------------------------------------------- blocking

@requires("BZPOPMIN")
def test_bzpop_immediate(resp):
    resp.call("ZADD", "{t}z", 1, "a", 2, "b")
    assert resp.call("BZPOPMIN", "{t}x", "{t}z", 0) == b("{t}z", "a", 1)
    assert resp.call("BZPOPMAX", "{t}z", 0) == b("{t}z", "b", 2)
    assert resp.call("EXISTS", "{t}z") == 0
    assert resp.call("BZPOPMIN", "{t}z") == arity("bzpopmin")
    assert resp.call("BZPOPMIN", "{t}z", "x") == ("error", "ERR timeout is not a float or out of range")
    assert resp.call("BZPOPMIN", "{t}z", -1) == ("error", "ERR timeout is negative")
    resp.call("SET", "{t}s", "x")
    assert resp.call("BZPOPMIN", "{t}s", 0) == WRONGTYPE
    assert resp.call("BZPOPMIN", "{t}none", "{t}s", 0) == WRONGTYPE


@requires("BZPOPMIN")
def test_bzpop_timeout_null_array(server, resp):
    c = Resp(server.port)
    try:
        t0 = time.time()
        assert first_line(c, "BZPOPMIN", "nokey", "0.1") == b"*-1"
        assert time.time() - t0 >= 0.09
        assert first_line(c, "BZMPOP", "0.1", 1, "nokey", "MIN") == b"*-1"
    finally:
        c.close()


def _blocked_call(port, *args, resp3=False):
    out = {}
    c = Resp(port, timeout=10)
    if resp3:
        c.call("HELLO", "3")

    def run():
        out["reply"] = c.call(*args)
    t = threading.Thread(target=run)
    t.start()
    return c, t, out


def _wait_blocked(resp, n=1):
    deadline = time.time() + 5
    while time.time() < deadline:
        info = resp.call("INFO", "clients")
        text = info if isinstance(info, (bytes, str)) else info[2] if isinstance(info, tuple) else b""
        if isinstance(text, str):
            text = text.encode()
        for line in text.split(b"\r\n"):
            if line.startswith(b"blocked_clients:") and int(line.split(b":")[1]) >= n:
                return
        time.sleep(0.01)
    raise AssertionError("client did not block")


@requires("BZPOPMIN")
def test_bzpopmin_served_by_zadd(server, resp):
    c, t, out = _blocked_call(server.port, "BZPOPMIN", "{t}a", "{t}b", 5)
    try:
        _wait_blocked(resp)
        assert resp.call("ZADD", "{t}b", -1, "foo", 1, "bar") == 2
        t.join(5)
        assert out["reply"] == b("{t}b", "foo", -1)
        assert resp.call("ZRANGE", "{t}b", 0, -1) == b("bar")
    finally:
        c.close()


@requires("BZMPOP")
def test_bzmpop_served_by_zunionstore(server, resp):
    resp.call("ZADD", "{t}src", 1, "a", 2, "b", 3, "c")
    c, t, out = _blocked_call(server.port, "BZMPOP", 5, 1, "{t}dst", "MAX", "COUNT", 2)
    try:
        _wait_blocked(resp)
        assert resp.call("ZUNIONSTORE", "{t}dst", 1, "{t}src") == 3
        t.join(5)
        assert out["reply"] == [b"{t}dst", [[b"c", b"3"], [b"b", b"2"]]]
        assert resp.call("ZRANGE", "{t}dst", 0, -1) == b("a")
    finally:
        c.close()


@requires("BZPOPMAX")
def test_bzpopmax_resp3_served(server, resp):
    c, t, out = _blocked_call(server.port, "BZPOPMAX", "{t}z", 5, resp3=True)
    try:
        _wait_blocked(resp)
        resp.call("ZADD", "{t}z", 1.5, "x", 2.5, "y")
        t.join(5)
        assert out["reply"] == [b"{t}z", b"y", 2.5]
    finally:
        c.close()


@requires("BZMPOP")
def test_bzmpop_errors(resp):
    assert resp.call("BZMPOP", 0, 1) == arity("bzmpop")
    assert resp.call("BZMPOP", 0, 0, "z", "MIN") == ("error", "ERR numkeys should be greater than 0")
    assert resp.call("BZMPOP", 0, 1, "z", "bad") == SYNTAX
    assert resp.call("BZMPOP", 0, 1, "z", "MIN", "COUNT", 0) == ("error", "ERR count should be greater than 0")
    assert resp.call("BZMPOP", -1, 1, "z", "MIN") == ("error", "ERR timeout is negative")
    resp.call("SET", "s", "x")
    assert resp.call("BZMPOP", 0, 1, "s", "MIN") == WRONGTYPE


# ------------------------------------------------------------ ZRANDMEMBER

@requires("ZRANDMEMBER")
@pytest.mark.parametrize("encoding", BOTH)
def test_zrandmember(resp, encoding):
    members = ["m%d" % i for i in range(20)]
    make(resp, "z", [(i, m) for i, m in enumerate(members)], encoding)
    assert resp.call("ZRANDMEMBER", "z").decode() in members
    assert resp.call("ZRANDMEMBER", "nokey") is None
    assert resp.call("ZRANDMEMBER", "nokey", 5) == []
    assert resp.call("ZRANDMEMBER", "z", 0) == []
    for count in (1, 5, 7, 15, 19, 20, 25):
        got = [x.decode() for x in resp.call("ZRANDMEMBER", "z", count)]
        assert len(got) == min(count, 20)
        assert len(set(got)) == len(got)
        assert set(got) <= set(members)
    got = resp.call("ZRANDMEMBER", "z", -50)
    assert len(got) == 50 and set(x.decode() for x in got) <= set(members)
    ws = resp.call("ZRANDMEMBER", "z", 6, "WITHSCORES")
    assert len(ws) == 12
    for m, s in zip(ws[::2], ws[1::2]):
        assert members.index(m.decode()) == int(s)
    ws = resp.call("ZRANDMEMBER", "z", -3, "WITHSCORES")
    assert len(ws) == 6
    # The whole set comes back highest first (Redis iterates from the tail).
    assert resp.call("ZRANDMEMBER", "z", 30, "WITHSCORES")[:4] == b("m19", 19, "m18", 18)


@requires("ZRANDMEMBER")
def test_zrandmember_errors_and_resp3(resp, resp3):
    resp.call("ZADD", "z", 1, "a")
    assert resp.call("ZRANDMEMBER", "z", "x") == NOT_INT
    assert resp.call("ZRANDMEMBER", "z", 1, "bad") == SYNTAX
    assert resp.call("ZRANDMEMBER", "z", 1, "WITHSCORES", "x") == SYNTAX
    assert resp.call("ZRANDMEMBER", "z", -9223372036854770000, "WITHSCORES") == ("error", "ERR value is out of range")
    between = ("error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert resp.call("ZRANDMEMBER", "z", -9223372036854775808, "WITHSCORES") == between
    assert resp.call("ZRANDMEMBER", "z", -9223372036854775808) == between
    resp3.call("ZADD", "z", 1, "a")
    assert resp3.call("ZRANDMEMBER", "z", 1, "WITHSCORES") == [[b"a", 1.0]]
    assert resp3.call("ZRANDMEMBER", "z", -2, "WITHSCORES") == [[b"a", 1.0], [b"a", 1.0]]
    assert first_line(resp3, "ZRANDMEMBER", "nokey") == b"_"


# ------------------------------------------------- union / inter / diff

def _setup_sources(c, encoding):
    make(c, "{t}a", [(1, "a"), (2, "b"), (3, "c")], encoding)
    make(c, "{t}b", [(1, "b"), (2, "c"), (3, "d")], encoding)


@requires("ZUNIONSTORE")
@pytest.mark.parametrize("encoding", BOTH)
def test_zunion_zinter_zdiff(resp, encoding):
    _setup_sources(resp, encoding)
    assert resp.call("ZUNION", 2, "{t}a", "{t}b", "WITHSCORES") == b("a", 1, "b", 3, "d", 3, "c", 5)
    assert resp.call("ZUNIONSTORE", "{t}d", 2, "{t}a", "{t}b") == 4
    assert resp.call("ZRANGE", "{t}d", 0, -1, "WITHSCORES") == b("a", 1, "b", 3, "d", 3, "c", 5)
    assert resp.call("ZINTER", 2, "{t}a", "{t}b", "WITHSCORES") == b("b", 3, "c", 5)
    assert resp.call("ZINTERSTORE", "{t}d", 2, "{t}a", "{t}b") == 2
    assert resp.call("ZRANGE", "{t}d", 0, -1, "WITHSCORES") == b("b", 3, "c", 5)
    assert resp.call("ZDIFF", 2, "{t}a", "{t}b", "WITHSCORES") == b("a", 1)
    assert resp.call("ZDIFFSTORE", "{t}d", 2, "{t}b", "{t}a") == 1
    assert resp.call("ZRANGE", "{t}d", 0, -1, "WITHSCORES") == b("d", 3)
    assert resp.call("ZINTERCARD", 2, "{t}a", "{t}b") == 2
    assert resp.call("ZINTERCARD", 2, "{t}a", "{t}b", "LIMIT", 1) == 1
    assert resp.call("ZINTERCARD", 2, "{t}a", "{t}b", "LIMIT", 0) == 2
    # WEIGHTS / AGGREGATE
    assert resp.call("ZUNION", 2, "{t}a", "{t}b", "WEIGHTS", 2, 3, "WITHSCORES") == b("a", 2, "b", 7, "d", 9, "c", 12)
    assert resp.call("ZUNION", 2, "{t}a", "{t}b", "AGGREGATE", "MIN", "WITHSCORES") == b("a", 1, "b", 1, "c", 2, "d", 3)
    assert resp.call("ZINTER", 2, "{t}a", "{t}b", "aggregate", "max", "withscores") == b("b", 2, "c", 3)
    assert resp.call("ZUNION", 2, "{t}a", "{t}b") == b("a", "b", "d", "c")
    # Missing inputs are empty sets.
    assert resp.call("ZUNION", 2, "{t}a", "{t}none") == b("a", "b", "c")
    assert resp.call("ZINTER", 2, "{t}a", "{t}none") == []
    assert resp.call("ZDIFF", 2, "{t}none", "{t}a") == []
    assert resp.call("ZDIFF", 3, "{t}a", "{t}none", "{t}a") == []
    # The destination may be an input.
    assert resp.call("ZUNIONSTORE", "{t}a", 2, "{t}a", "{t}b") == 4
    assert resp.call("ZRANGE", "{t}a", 0, -1) == b("a", "b", "d", "c")


@requires("ZUNIONSTORE")
def test_zsetops_empty_result_deletes_destination(resp):
    resp.call("ZADD", "{t}a", 1, "a")
    resp.call("ZADD", "{t}b", 1, "b")
    resp.call("SET", "{t}d", "x")
    assert resp.call("ZINTERSTORE", "{t}d", 2, "{t}a", "{t}b") == 0
    assert resp.call("EXISTS", "{t}d") == 0
    resp.call("SET", "{t}d", "x")
    assert resp.call("ZDIFFSTORE", "{t}d", 1, "{t}none") == 0
    assert resp.call("EXISTS", "{t}d") == 0
    resp.call("ZADD", "{t}d", 1, "x")
    resp.call("EXPIRE", "{t}d", 100)
    assert resp.call("ZUNIONSTORE", "{t}d", 2, "{t}a", "{t}b") == 2
    assert resp.call("TTL", "{t}d") == -1


@requires("ZUNIONSTORE", "SADD")
@pytest.mark.parametrize("encoding", BOTH)
def test_zsetops_accept_sets(resp, encoding):
    resp.call("SADD", "{t}s", "a", "b", "x")
    make(resp, "{t}z", [(1, "a"), (2, "b"), (3, "c")], encoding)
    assert resp.call("ZUNION", 2, "{t}s", "{t}z", "WITHSCORES") == b("x", 1, "a", 2, "b", 3, "c", 3)
    assert resp.call("ZINTER", 2, "{t}z", "{t}s", "WEIGHTS", 1, 10, "WITHSCORES") == b("a", 11, "b", 12)
    assert resp.call("ZDIFF", 2, "{t}s", "{t}z", "WITHSCORES") == b("x", 1)
    assert resp.call("ZDIFF", 2, "{t}z", "{t}s") == b("c")
    assert resp.call("ZINTERCARD", 2, "{t}s", "{t}z") == 2
    resp.call("SADD", "{t}i", 1, 2, 3)
    assert resp.call("ZINTERSTORE", "{t}d", 2, "{t}i", "{t}i") == 3
    assert resp.call("ZRANGE", "{t}d", 0, -1, "WITHSCORES") == b(1, 2, 2, 2, 3, 2)


@requires("ZUNIONSTORE")
def test_zsetops_nan_becomes_zero(resp):
    resp.call("ZADD", "{t}z", "-inf", "neginf")
    assert resp.call("ZUNIONSTORE", "{t}out", 1, "{t}z", "WEIGHTS", 0) == 1
    assert resp.call("ZRANGE", "{t}out", 0, -1, "WITHSCORES") == b("neginf", 0)
    resp.call("ZADD", "{t}y", "inf", "neginf")
    assert resp.call("ZUNION", 2, "{t}z", "{t}y", "WITHSCORES") == b("neginf", 0)
    assert resp.call("ZINTER", 2, "{t}z", "{t}y", "WITHSCORES") == b("neginf", 0)
    assert resp.call("ZUNION", 2, "{t}z", "{t}y", "AGGREGATE", "MAX", "WITHSCORES") == b("neginf", "inf")


@requires("ZUNIONSTORE")
def test_zsetops_store_encoding(small):
    c = small
    c.call("ZADD", "{t}a", 1, "a", 2, "b", 3, "c")
    c.call("ZADD", "{t}b", 4, "d", 5, "e", 6, "f")
    assert c.call("ZUNIONSTORE", "{t}d", 1, "{t}a") == 3
    assert enc(c, "{t}d") == b"listpack"
    assert c.call("ZUNIONSTORE", "{t}d", 2, "{t}a", "{t}b") == 6
    assert enc(c, "{t}d") == b"skiplist"
    c.call("ZADD", "{t}long", 1, "123456789")
    assert enc(c, "{t}long") == b"skiplist"
    assert c.call("ZINTERSTORE", "{t}d", 1, "{t}long") == 1
    assert enc(c, "{t}d") == b"skiplist"
    c.call("ZADD", "{t}big", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
    assert enc(c, "{t}big") == b"skiplist"
    assert c.call("ZINTERSTORE", "{t}d", 2, "{t}big", "{t}a") == 3
    assert enc(c, "{t}d") == b"listpack"
    assert c.call("ZRANGE", "{t}d", 0, -1, "WITHSCORES") == b("a", 2, "b", 4, "c", 6)


@requires("ZUNIONSTORE")
def test_zsetops_errors(resp):
    resp.call("ZADD", "{t}a", 1, "a")
    for cmd in ("ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"):
        assert resp.call(cmd, 0, "{t}a") == ("error", "ERR at least 1 input key is needed for '%s' command" % cmd.lower())
        assert resp.call(cmd, 3, "{t}a") == SYNTAX
        assert resp.call(cmd, "x", "{t}a") == NOT_INT
    for cmd in ("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"):
        assert resp.call(cmd, "{t}d", 0, "{t}a") == \
            ("error", "ERR at least 1 input key is needed for '%s' command" % cmd.lower())
        assert resp.call(cmd, "{t}d", 2, "{t}a", "{t}a", "WITHSCORES") == SYNTAX
    assert resp.call("ZUNION", 2, "{t}a", "{t}a", "WEIGHTS", 1) == SYNTAX
    assert resp.call("ZUNION", 2, "{t}a", "{t}a", "WEIGHTS", 1, "x") == ("error", "ERR weight value is not a float")
    assert resp.call("ZUNION", 1, "{t}a", "AGGREGATE", "AVG") == SYNTAX
    assert resp.call("ZUNION", 1, "{t}a", "AGGREGATE") == SYNTAX
    assert resp.call("ZDIFF", 1, "{t}a", "WEIGHTS", 1) == SYNTAX
    assert resp.call("ZINTERCARD", 1, "{t}a", "WITHSCORES") == SYNTAX
    assert resp.call("ZINTERCARD", 1, "{t}a", "LIMIT", -1) == ("error", "ERR LIMIT can't be negative")
    assert resp.call("ZINTERCARD", 1, "{t}a", "LIMIT", "x") == ("error", "ERR LIMIT can't be negative")
    make_nonstring(resp, "{t}l")
    assert resp.call("ZUNION", 2, "{t}a", "{t}l") == WRONGTYPE
    assert resp.call("ZUNIONSTORE", "{t}d", 2, "{t}a", "{t}l") == WRONGTYPE
    assert resp.call("ZUNIONSTORE", "{t}d", 1) == arity("zunionstore")


@requires("ZUNIONSTORE")
def test_movable_keys_are_reported(resp):
    assert resp.call("COMMAND", "GETKEYS", "ZUNIONSTORE", "dst", 2, "a", "b", "WEIGHTS", 1, 2) == b("dst", "a", "b")
    assert resp.call("COMMAND", "GETKEYS", "ZINTER", 2, "a", "b") == b("a", "b")
    assert resp.call("COMMAND", "GETKEYS", "ZMPOP", 2, "a", "b", "MIN") == b("a", "b")
    assert resp.call("COMMAND", "GETKEYS", "BZMPOP", 0, 2, "a", "b", "MIN") == b("a", "b")
    assert resp.call("COMMAND", "GETKEYS", "ZRANGESTORE", "dst", "src", 0, -1) == b("dst", "src")
    assert resp.call("COMMAND", "GETKEYS", "BZPOPMIN", "a", "b", 0) == b("a", "b")


# ------------------------------------------------------------------ ZSCAN

@requires("ZSCAN")
def test_zscan_listpack_whole(resp):
    resp.call("ZADD", "z", 1, "a", 2.5, "b", 3, "c")
    assert resp.call("ZSCAN", "z", 0) == [b"0", b("a", 1, "b", 2.5, "c", 3)]
    assert resp.call("ZSCAN", "z", 0, "MATCH", "[ab]") == [b"0", b("a", 1, "b", 2.5)]
    assert resp.call("ZSCAN", "nokey", 0) == [b"0", []]
    assert resp.call("ZSCAN", "nokey", 0, "COUNT", 0) == [b"0", []]


@requires("ZSCAN")
def test_zscan_skiplist_full_iteration(resp):
    args = []
    for i in range(500):
        args += [i, "m%d" % i]
    resp.call("ZADD", "z", *args)
    assert enc(resp, "z") == b"skiplist"
    seen = {}
    cursor = b"0"
    calls = 0
    while True:
        cursor, items = resp.call("ZSCAN", "z", cursor, "COUNT", 50)
        calls += 1
        for m, s in zip(items[::2], items[1::2]):
            seen[m.decode()] = int(s)
        if cursor == b"0":
            break
    assert calls > 3
    assert seen == {"m%d" % i: i for i in range(500)}
    cursor, items = resp.call("ZSCAN", "z", 0, "MATCH", "m1?", "COUNT", 1000)
    assert cursor == b"0"
    assert sorted(items[::2]) == sorted(b(*["m1%d" % i for i in range(10)]))


@requires("ZSCAN")
def test_zscan_errors(resp):
    resp.call("ZADD", "z", 1, "a")
    assert resp.call("ZSCAN", "z", "x") == ("error", "ERR invalid cursor")
    assert resp.call("ZSCAN", "z", 0, "COUNT", 0) == SYNTAX
    assert resp.call("ZSCAN", "z", 0, "COUNT", "x") == NOT_INT
    assert resp.call("ZSCAN", "z", 0, "MATCH") == SYNTAX
    assert resp.call("ZSCAN", "z", 0, "TYPE", "zset") == SYNTAX
    assert resp.call("ZSCAN", "z") == arity("zscan")
    make_nonstring(resp, "l")
    assert resp.call("ZSCAN", "l", 0) == WRONGTYPE


@needs_72
@requires("ZSCAN")
def test_zscan_novalues_is_hscan_only(resp):
    resp.call("ZADD", "z", 1, "a")
    assert resp.call("ZSCAN", "z", 0, "NOVALUES") == ("error", "ERR NOVALUES option can only be used in HSCAN")


# ---------------------------------------------------------- consistency

@requires("ZADD")
def test_random_ops_match_model(resp):
    """Random adds/removes/increments in both encodings agree with a model."""
    import random
    rnd = random.Random(7)
    for encoding in BOTH:
        if encoding == "skiplist":
            resp.call("CONFIG", "SET", "zset-max-listpack-entries", "0")
        resp.call("DEL", "z")
        model = {}
        try:
            for _ in range(600):
                m = "m%d" % rnd.randrange(60)
                op = rnd.randrange(4)
                if op == 0:
                    s = rnd.choice([rnd.randrange(-5, 5), rnd.random() * 10 - 5])
                    resp.call("ZADD", "z", repr(float(s)), m)
                    model[m] = float(s)
                elif op == 1:
                    assert resp.call("ZREM", "z", m) == (1 if m in model else 0)
                    model.pop(m, None)
                elif op == 2:
                    d = rnd.randrange(-3, 4)
                    got = float(resp.call("ZINCRBY", "z", d, m))
                    model[m] = model.get(m, 0.0) + d
                    assert got == model[m]
                else:
                    want = sorted(model.items(), key=lambda kv: (kv[1], kv[0].encode()))
                    if want:
                        r = rnd.randrange(len(want))
                        assert resp.call("ZRANK", "z", want[r][0]) == r
                        assert resp.call("ZREVRANK", "z", want[r][0]) == len(want) - 1 - r
            want = sorted(model.items(), key=lambda kv: (kv[1], kv[0].encode()))
            got = resp.call("ZRANGE", "z", 0, -1, "WITHSCORES")
            assert [x.decode() for x in got[::2]] == [k for k, _ in want]
            assert [float(x) for x in got[1::2]] == [v for _, v in want]
            if model:
                assert enc(resp, "z") == encoding.encode()
        finally:
            resp.call("CONFIG", "SET", "zset-max-listpack-entries", "128")


# ------------------------------------------- small zsets kept in the key
# HotKV stores a small listpack inside the key's own allocation and moves
# it out and back on writes; these check every transition keeps members,
# scores, the TTL and the encoding Redis reports.

def zall(c, key):
    got = c.call("ZRANGE", key, 0, -1, "WITHSCORES")
    return [(got[i].decode(), float(got[i + 1])) for i in range(0, len(got), 2)]


def zsorted(model):
    return sorted(model.items(), key=lambda kv: (kv[1], kv[0].encode()))


def test_inline_zset_grows_to_skiplist(resp):
    model = {}
    for i in range(140):           # past zset-max-listpack-entries (128)
        m = "member-%d-%s" % (i, "x" * (i % 40))
        assert resp.call("ZADD", "z", i % 17, m) == 1
        model[m] = float(i % 17)
        if i % 11 == 0:
            assert zall(resp, "z") == zsorted(model)
    assert zall(resp, "z") == zsorted(model)
    assert enc(resp, "z") == b"skiplist"
    for m in list(model)[:135]:
        assert resp.call("ZREM", "z", m) == 1
        del model[m]
    assert zall(resp, "z") == zsorted(model)
    assert enc(resp, "z") == b"skiplist"
    resp.call("ZADD", "v", 1, "a", 2, "b")
    resp.call("ZADD", "v", 3, "c" * 65)   # longer than zset-max-listpack-value
    assert enc(resp, "v") == b"skiplist"
    assert resp.call("ZCARD", "v") == 3


def test_inline_zset_big_members_grow_and_shrink(resp):
    model = {}
    for i in range(12):
        m = ("%02d" % i) * 30      # 60 bytes: listpack, too big to stay in the key
        resp.call("ZADD", "z", 12 - i, m)
        model[m] = float(12 - i)
        assert zall(resp, "z") == zsorted(model)
    assert enc(resp, "z") == b"listpack"
    for m in sorted(model):
        assert resp.call("ZREM", "z", m) == 1
        del model[m]
        assert zall(resp, "z") == zsorted(model)
    assert resp.call("EXISTS", "z") == 0


def test_inline_zset_updates(resp):
    resp.call("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert resp.call("ZADD", "z", "NX", 10, "a") == 0
    assert resp.call("ZADD", "z", "XX", "CH", 10, "a") == 1
    assert resp.call("ZADD", "z", "GT", "CH", 5, "a") == 0
    assert resp.call("ZADD", "z", "LT", "CH", 0, "b") == 1
    assert float(resp.call("ZINCRBY", "z", 2.5, "c")) == 5.5
    assert resp.call("ZADD", "z", 3, "c") == 0
    assert zall(resp, "z") == [("b", 0.0), ("c", 3.0), ("a", 10.0)]
    assert resp.call("ZADD", "z", "INCR", "+inf", "b") == b"inf"
    assert resp.call("ZADD", "z", "INCR", "-inf", "b") == NAN_SCORE
    assert zall(resp, "z") == [("c", 3.0), ("a", 10.0), ("b", float("inf"))]
    assert resp.call("ZADD", "new", "XX", 1, "a") == 0
    assert resp.call("EXISTS", "new") == 0
    assert resp.call("ZADD", "new", "GT", 1, "a") == 1
    assert zall(resp, "new") == [("a", 1.0)]


def test_inline_zset_keeps_ttl_through_writes(resp):
    resp.call("ZADD", "z", 1, "a", 2, "b")
    resp.call("PEXPIRE", "z", 100000)
    for i in range(40):
        resp.call("ZADD", "z", i, "m%d" % i)
        assert 0 < resp.call("PTTL", "z") <= 100000
    for i in range(38):
        resp.call("ZREM", "z", "m%d" % i)
    resp.call("ZPOPMAX", "z")
    assert 0 < resp.call("PTTL", "z") <= 100000
    assert resp.call("ZCARD", "z") == 3
    resp.call("PERSIST", "z")
    resp.call("ZADD", "z", 9, "q")
    assert resp.call("TTL", "z") == -1
    resp.call("PEXPIRE", "z", 5)
    time.sleep(0.03)
    assert resp.call("EXISTS", "z") == 0
    assert resp.call("ZADD", "z", 1, "fresh") == 1
    assert zall(resp, "z") == [("fresh", 1.0)]


def test_inline_zset_copy_rename_move(resp):
    resp.call("ZADD", "z", 1, "a", 2, "b", 3, "c")
    resp.call("EXPIRE", "z", 1000)
    assert resp.call("COPY", "z", "z2") == 1
    resp.call("ZADD", "z2", 4, "d")
    resp.call("ZREM", "z", "a")
    assert zall(resp, "z") == [("b", 2.0), ("c", 3.0)]
    assert zall(resp, "z2") == [("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0)]
    assert resp.call("RENAME", "z", "z3") == "OK"
    assert 0 < resp.call("TTL", "z3") <= 1000
    resp.call("ZINCRBY", "z3", 10, "b")
    assert zall(resp, "z3") == [("c", 3.0), ("b", 12.0)]
    assert resp.call("MOVE", "z2", 1) == 1
    resp.call("SELECT", 1)
    try:
        resp.call("ZADD", "z2", 5, "e")
        assert resp.call("ZCARD", "z2") == 5
        resp.call("FLUSHDB")
    finally:
        resp.call("SELECT", 0)
    assert resp.call("COPY", "z3", "s", "REPLACE") == 1
    assert zall(resp, "s") == [("c", 3.0), ("b", 12.0)]
    assert resp.call("TTL", "s") > 0


def test_inline_zset_pops_empty_the_key(resp):
    resp.call("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    assert resp.call("ZPOPMIN", "z") == b("a", 1)
    assert resp.call("ZPOPMAX", "z") == b("d", 4)
    assert resp.call("ZPOPMIN", "z", 5) == b("b", 2, "c", 3)
    assert resp.call("EXISTS", "z") == 0
    resp.call("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert resp.call("ZMPOP", 1, "z", "MAX", "COUNT", 2) == [b"z", [b("c", 3), b("b", 2)]]
    assert resp.call("BZPOPMIN", "z", 0) == b("z", "a", 1)
    assert resp.call("EXISTS", "z") == 0
    resp.call("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert resp.call("ZPOPMAX", "z", 3) == b("c", 3, "b", 2, "a", 1)
    assert resp.call("EXISTS", "z") == 0


def test_inline_zset_served_to_blocked_client(server, resp):
    waiter = Resp(server.port)
    try:
        waiter.send("BZPOPMIN", "z", 5)
        time.sleep(0.1)
        resp.call("ZADD", "z", 2, "b", 1, "a")
        assert waiter.read() == b("z", "a", 1)
        assert zall(resp, "z") == [("b", 2.0)]
    finally:
        waiter.close()


def test_inline_zset_remrange(resp):
    pairs = []
    for i in range(10):
        pairs += [i, "m%d" % i]
    resp.call("ZADD", "z", *pairs)
    assert resp.call("ZREMRANGEBYRANK", "z", 0, 1) == 2
    assert resp.call("ZREMRANGEBYSCORE", "z", 8, "+inf") == 2
    assert [m for m, _ in zall(resp, "z")] == ["m%d" % i for i in range(2, 8)]
    assert resp.call("ZREMRANGEBYSCORE", "z", 100, 200) == 0
    assert resp.call("ZREMRANGEBYRANK", "z", 0, -1) == 6
    assert resp.call("EXISTS", "z") == 0
    resp.call("ZADD", "l", 0, "a", 0, "b", 0, "c")
    assert resp.call("ZREMRANGEBYLEX", "l", "[a", "[b") == 2
    assert resp.call("ZREMRANGEBYLEX", "l", "-", "+") == 1
    assert resp.call("EXISTS", "l") == 0


def test_inline_zset_store_destinations(resp):
    resp.call("ZADD", "a", 1, "x", 2, "y")
    resp.call("ZADD", "b", 10, "y", 20, "z")
    assert resp.call("ZUNIONSTORE", "a", 2, "a", "b") == 3
    assert zall(resp, "a") == [("x", 1.0), ("y", 12.0), ("z", 20.0)]
    assert resp.call("ZINTERSTORE", "b", 2, "a", "b", "AGGREGATE", "MAX") == 2
    assert zall(resp, "b") == [("y", 12.0), ("z", 20.0)]
    assert resp.call("ZDIFFSTORE", "a", 2, "a", "b") == 1
    assert zall(resp, "a") == [("x", 1.0)]
    assert resp.call("ZRANGESTORE", "b", "b", 0, 0) == 1
    assert zall(resp, "b") == [("y", 12.0)]
    assert resp.call("ZRANGESTORE", "b", "b", 5, 6) == 0
    assert resp.call("EXISTS", "b") == 0
    resp.call("SADD", "s", "p", "q")
    assert resp.call("ZUNIONSTORE", "a", 2, "a", "s", "WEIGHTS", 1, 2) == 3
    assert zall(resp, "a") == [("x", 1.0), ("p", 2.0), ("q", 2.0)]
    big = []
    for i in range(200):
        big += [i, "m%d" % i]
    resp.call("ZADD", "big", *big)
    assert resp.call("ZUNIONSTORE", "a", 1, "big") == 200
    assert enc(resp, "a") == b"skiplist"
    assert resp.call("ZRANGESTORE", "a", "big", 0, 2) == 3
    assert enc(resp, "a") == b"listpack"
    assert zall(resp, "a") == [("m0", 0.0), ("m1", 1.0), ("m2", 2.0)]


def test_memory_usage_of_small_zsets(resp):
    args = []
    for i in range(10):
        args += [i + 1, "z%07d" % i]
    resp.call("ZADD", "z", *args)
    big = []
    for i in range(300):
        big += [i, "m%d" % i]
    resp.call("ZADD", "big", *big)
    small = resp.call("MEMORY", "USAGE", "z")
    assert 0 < small < 1000
    assert small < resp.call("MEMORY", "USAGE", "big")


def test_inline_zsets_random_ops_match_model(resp):
    import random
    rnd = random.Random(13)
    keys = ["k%d" % i for i in range(3)]
    model = {}

    def get(k):
        return dict(model.get(k, {}))

    def put(k, v):
        if v:
            model[k] = v
        else:
            model.pop(k, None)

    def member():
        if rnd.randrange(5) == 0:
            return "L" * rnd.randrange(20, 64) + str(rnd.randrange(4))
        return "m%d" % rnd.randrange(40)

    for step in range(2000):
        k, k2 = rnd.choice(keys), rnd.choice(keys)
        op = rnd.randrange(10)
        cur = get(k)
        if op <= 3:
            m, s = member(), float(rnd.randrange(-20, 20))
            assert resp.call("ZADD", k, s, m) == (0 if m in cur else 1)
            cur[m] = s
            put(k, cur)
        elif op == 4:
            ms = {member()} | set(rnd.sample(sorted(cur), min(2, len(cur))))
            assert resp.call("ZREM", k, *ms) == len(ms & set(cur))
            put(k, {m: v for m, v in cur.items() if m not in ms})
        elif op == 5:
            n = rnd.randrange(1, 4)
            got = resp.call("ZPOPMIN" if rnd.randrange(2) else "ZPOPMAX", k, n)
            for i in range(0, len(got), 2):
                m = got[i].decode()
                assert cur.pop(m) == float(got[i + 1])
            put(k, cur)
        elif op == 6:
            m, d = member(), rnd.randrange(-3, 4)
            assert float(resp.call("ZINCRBY", k, d, m)) == cur.get(m, 0.0) + d
            cur[m] = cur.get(m, 0.0) + d
            put(k, cur)
        elif op == 7:
            want = dict(cur)
            for m, v in get(k2).items():
                want[m] = want.get(m, 0.0) + v
            assert resp.call("ZUNIONSTORE", k, 2, k, k2) == len(want)
            put(k, want)
        elif op == 8:
            lo = rnd.randrange(-20, 20)
            want = {m: v for m, v in cur.items() if not lo <= v <= lo + 5}
            assert resp.call("ZREMRANGEBYSCORE", k, lo, lo + 5) == len(cur) - len(want)
            put(k, want)
        elif op == 9 and cur and k != k2:
            if rnd.randrange(2):
                assert resp.call("COPY", k, k2, "REPLACE") == 1
            else:
                assert resp.call("RENAME", k, k2) == "OK"
                put(k, {})
            put(k2, cur)
        if step % 20 == 0:
            for kk in keys:
                assert zall(resp, kk) == zsorted(get(kk)), (step, kk)
    for kk in keys:
        assert zall(resp, kk) == zsorted(get(kk))
