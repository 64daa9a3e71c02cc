"""String command integration tests (Redis 7.x semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Error replies
are checked on the wire through the raw `resp` client so that the exact text,
including the "ERR"/"WRONGTYPE" prefix, is asserted (redis-py strips "ERR ").
"""
import time

import pytest

from helpers import arity_error as arity, make_nonstring

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
NOT_FLOAT = ("error", "ERR value is not a valid float")
OVERFLOW = ("error", "ERR increment or decrement would overflow")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808



def invalid_expire(cmd):
    return ("error", "ERR invalid expire time in '%s' command" % cmd)



# --------------------------------------------------------------------- SET

def test_set_get_basic(r):
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.get("missing") is None


def test_set_reply_on_wire(resp):
    assert resp.call("SET", "k", "v") == "OK"
    assert resp.call("GET", "k") == b"v"
    assert resp.call("GET", "missing") is None


def test_set_overwrites_value(r):
    r.set("k", "v1")
    r.set("k", "v2")
    assert r.get("k") == "v2"


def test_set_empty_value(r):
    assert r.set("k", "") is True
    assert r.get("k") == ""
    assert r.exists("k") == 1
    assert r.strlen("k") == 0


def test_set_ex(r):
    r.set("k", "v", ex=100)
    assert r.ttl("k") == 100
    assert 99000 < r.pttl("k") <= 100000


def test_set_px(r):
    r.set("k", "v", px=100000)
    assert 99000 < r.pttl("k") <= 100000


def test_set_exat(r):
    at = int(time.time()) + 100
    r.set("k", "v", exat=at)
    assert r.expiretime("k") == at
    assert 98 <= r.ttl("k") <= 100


def test_set_pxat(r):
    at = int(time.time() * 1000) + 100000
    r.set("k", "v", pxat=at)
    assert r.pexpiretime("k") == at


def test_set_exat_in_past_deletes_key(resp):
    resp.call("SET", "k", "old")
    assert resp.call("SET", "k", "v", "EXAT", "1") == "OK"
    assert resp.call("EXISTS", "k") == 0


def test_set_pxat_in_past_with_get_returns_old_value(resp):
    resp.call("SET", "k", "old")
    assert resp.call("SET", "k", "v", "PXAT", "1", "GET") == b"old"
    assert resp.call("EXISTS", "k") == 0


@pytest.mark.parametrize("opt,val", [
    ("EX", "0"), ("EX", "-1"), ("PX", "0"), ("PX", "-5"),
    ("EXAT", "0"), ("PXAT", "0"), ("EXAT", "-1"),
    ("EX", str(LLONG_MAX)), ("PX", str(LLONG_MAX)), ("EXAT", str(LLONG_MAX)),
    ("EX", "9223372036854775"),  # overflows when converted to ms
])
def test_set_invalid_expire_time(resp, opt, val):
    assert resp.call("SET", "k", "v", opt, val) == invalid_expire("set")
    assert resp.call("EXISTS", "k") == 0


@pytest.mark.parametrize("val", ["abc", "1.5", "", "10a", "99999999999999999999"])
def test_set_expire_not_integer(resp, val):
    assert resp.call("SET", "k", "v", "EX", val) == NOT_INT
    assert resp.call("EXISTS", "k") == 0


@pytest.mark.parametrize("args", [
    ["NX", "XX"], ["XX", "NX"], ["NX", "XX", "GET"], ["NX", "GET", "XX"],
    ["EX", "10", "PX", "100"], ["PX", "100", "PXAT", "100"],
    ["EX", "10", "EXAT", "99999999999"], ["EXAT", "99999999999", "PXAT", "100"],
    ["KEEPTTL", "EX", "1"], ["EX", "10", "KEEPTTL"], ["PX", "10", "KEEPTTL"],
    ["EX"], ["PX"], ["EXAT"], ["PXAT"], ["FOO"], ["PERSIST"], ["EX", "10", "FOO"],
])
def test_set_option_syntax_errors(resp, args):
    assert resp.call("SET", "k", "v", *args) == SYNTAX
    assert resp.call("EXISTS", "k") == 0


def test_set_options_case_insensitive(r):
    assert r.execute_command("SET", "k", "v", "ex", "100", "nx") is True
    assert r.ttl("k") == 100
    assert r.execute_command("SET", "k", "w", "xX", "kEePtTl") is True
    assert r.get("k") == "w"
    assert r.ttl("k") == 100


def test_set_repeated_same_option_allowed(resp):
    # Repeating the same flag is accepted; the last EX wins.
    assert resp.call("SET", "k", "v", "EX", "10", "EX", "20") == "OK"
    assert resp.call("TTL", "k") == 20
    assert resp.call("SET", "k", "v", "KEEPTTL", "KEEPTTL") == "OK"
    assert resp.call("TTL", "k") == 20
    assert resp.call("SET", "k", "v", "XX", "XX") == "OK"
    assert resp.call("TTL", "k") == -1
    assert resp.call("SET", "k2", "v", "NX", "NX") == "OK"


def test_set_nx(resp):
    assert resp.call("SET", "k", "v1", "NX") == "OK"
    assert resp.call("SET", "k", "v2", "NX") is None
    assert resp.call("GET", "k") == b"v1"


def test_set_xx(resp):
    assert resp.call("SET", "k", "v1", "XX") is None
    assert resp.call("EXISTS", "k") == 0
    resp.call("SET", "k", "v1")
    assert resp.call("SET", "k", "v2", "XX") == "OK"
    assert resp.call("GET", "k") == b"v2"


def test_set_nx_with_expire(r):
    assert r.set("k", "v", nx=True, px=50000) is True
    assert 49000 < r.pttl("k") <= 50000
    assert r.set("k", "w", nx=True, ex=5) is None
    assert r.get("k") == "v"
    assert r.pttl("k") > 10000


def test_set_xx_with_expire(r):
    assert r.set("k", "v", xx=True, ex=10) is None
    r.set("k", "v")
    assert r.set("k", "w", xx=True, ex=10) is True
    assert r.ttl("k") == 10


def test_set_clears_existing_ttl(r):
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1


def test_set_keepttl(r):
    r.set("k", "v", ex=100)
    assert r.set("k", "w", keepttl=True) is True
    assert r.get("k") == "w"
    assert r.ttl("k") == 100


def test_set_keepttl_xx(resp):
    resp.call("SET", "k", "v", "EX", "100")
    assert resp.call("SET", "k", "w", "KEEPTTL", "XX") == "OK"
    assert resp.call("TTL", "k") == 100


def test_set_keepttl_on_new_key_has_no_ttl(r):
    assert r.set("k", "v", keepttl=True) is True
    assert r.ttl("k") == -1


def test_set_get_returns_old_value(resp):
    assert resp.call("SET", "k", "v1", "GET") is None
    assert resp.call("GET", "k") == b"v1"
    assert resp.call("SET", "k", "v2", "GET") == b"v1"
    assert resp.call("GET", "k") == b"v2"


def test_set_get_nx(resp):
    # SET ... NX GET is allowed since Redis 7.0.
    assert resp.call("SET", "k", "v1", "NX", "GET") is None
    assert resp.call("GET", "k") == b"v1"
    assert resp.call("SET", "k", "v2", "GET", "NX") == b"v1"
    assert resp.call("GET", "k") == b"v1"


def test_set_get_xx(resp):
    assert resp.call("SET", "k", "v1", "XX", "GET") is None
    assert resp.call("EXISTS", "k") == 0
    resp.call("SET", "k", "v1")
    assert resp.call("SET", "k", "v2", "XX", "GET") == b"v1"
    assert resp.call("GET", "k") == b"v2"


def test_set_get_with_ex(resp):
    resp.call("SET", "k", "v1")
    assert resp.call("SET", "k", "v2", "GET", "EX", "50") == b"v1"
    assert resp.call("TTL", "k") == 50


def test_set_get_keepttl(resp):
    resp.call("SET", "k", "v1", "PX", "100000")
    assert resp.call("SET", "k", "v2", "KEEPTTL", "GET") == b"v1"
    assert resp.call("PTTL", "k") > 90000


def test_set_on_nonstring_overwrites(resp):
    make_nonstring(resp, "l")
    assert resp.call("SET", "l", "v") == "OK"
    assert resp.call("GET", "l") == b"v"
    assert resp.call("TYPE", "l") == "string"


def test_set_get_on_nonstring_is_wrongtype_and_does_not_set(resp):
    make_nonstring(resp, "l")
    assert resp.call("SET", "l", "v", "GET") == WRONGTYPE
    assert resp.call("TYPE", "l") == "list"


def test_set_arity(resp):
    assert resp.call("SET") == arity("set")
    assert resp.call("SET", "k") == arity("set")


# ------------------------------------------------------- GET / arity errors

@pytest.mark.parametrize("args", [
    ["GET"], ["GET", "a", "b"], ["GETDEL"], ["GETSET", "k"], ["SETNX", "k"],
    ["SETEX", "k", "10"], ["SETEX", "k", "10", "v", "x"], ["PSETEX", "k", "1000"],
    ["MGET"], ["MSET"], ["MSET", "a"], ["MSET", "a", "1", "b"], ["MSETNX", "a", "1", "b"],
    ["APPEND", "a"], ["STRLEN"], ["GETRANGE", "k", "0"], ["SUBSTR", "k", "0"],
    ["SETRANGE", "k", "1"], ["INCR"], ["INCR", "a", "b"], ["DECR"], ["INCRBY", "a"],
    ["DECRBY", "a"], ["INCRBYFLOAT", "a"], ["GETEX"], ["LCS"], ["LCS", "a"],
])
def test_wrong_arity(resp, args):
    assert resp.call(*args) == arity(args[0].lower())


def test_arity_error_uses_lowercase_name(resp):
    assert resp.call("gEt") == arity("get")


def test_get_on_nonstring_wrongtype(resp):
    make_nonstring(resp, "l")
    assert resp.call("GET", "l") == WRONGTYPE


def test_string_commands_on_nonstring_wrongtype(resp):
    make_nonstring(resp, "l")
    for args in (["APPEND", "l", "x"], ["STRLEN", "l"], ["GETRANGE", "l", "0", "1"],
                 ["SETRANGE", "l", "0", "x"], ["INCR", "l"], ["DECRBY", "l", "2"],
                 ["INCRBYFLOAT", "l", "1"], ["GETDEL", "l"], ["GETSET", "l", "x"],
                 ["GETEX", "l"], ["GETEX", "l", "PERSIST"]):
        assert resp.call(*args) == WRONGTYPE, args
    assert resp.call("MGET", "l") == [None]  # MGET never errors on type
    assert resp.call("TYPE", "l") == "list"


def test_lcs_on_nonstring(resp):
    make_nonstring(resp, "l")
    resp.call("SET", "k", "v")
    assert resp.call("LCS", "l", "k") == (
        "error", "ERR The specified keys must contain string values")


# ------------------------------------------------------------------ GETEX

def test_getex_no_options_is_get(r):
    r.set("k", "v", ex=100)
    assert r.getex("k") == "v"
    assert r.ttl("k") == 100


def test_getex_missing_key(resp):
    assert resp.call("GETEX", "missing") is None
    assert resp.call("GETEX", "missing", "EX", "10") is None
    assert resp.call("EXISTS", "missing") == 0


def test_getex_ex(r):
    r.set("k", "v")
    assert r.getex("k", ex=100) == "v"
    assert r.ttl("k") == 100


def test_getex_px(r):
    r.set("k", "v")
    assert r.getex("k", px=100000) == "v"
    assert 99000 < r.pttl("k") <= 100000


def test_getex_exat(r):
    r.set("k", "v")
    at = int(time.time()) + 200
    assert r.getex("k", exat=at) == "v"
    assert r.expiretime("k") == at


def test_getex_pxat(r):
    r.set("k", "v")
    at = int(time.time() * 1000) + 200000
    assert r.getex("k", pxat=at) == "v"
    assert r.pexpiretime("k") == at


def test_getex_persist(r):
    r.set("k", "v", ex=100)
    assert r.getex("k", persist=True) == "v"
    assert r.ttl("k") == -1


def test_getex_exat_in_past_deletes_key(resp):
    resp.call("SET", "k", "v")
    assert resp.call("GETEX", "k", "EXAT", "1") == b"v"
    assert resp.call("EXISTS", "k") == 0


@pytest.mark.parametrize("opt,val", [
    ("EX", "0"), ("EX", "-1"), ("PX", "0"), ("EXAT", "0"), ("PXAT", "-1"),
    ("EX", str(LLONG_MAX)), ("PX", str(LLONG_MAX)),
])
def test_getex_invalid_expire_time(resp, opt, val):
    resp.call("SET", "k", "v")
    assert resp.call("GETEX", "k", opt, val) == invalid_expire("getex")
    assert resp.call("TTL", "k") == -1


@pytest.mark.parametrize("args", [
    ["PERSIST", "EX", "1"], ["EX", "1", "PERSIST"], ["EX", "1", "PX", "1"],
    ["EXAT", "99999999999", "PXAT", "1"], ["FOO"], ["EX"], ["KEEPTTL"], ["NX"],
])
def test_getex_syntax_errors(resp, args):
    resp.call("SET", "k", "v")
    assert resp.call("GETEX", "k", *args) == SYNTAX


def test_getex_not_integer(resp):
    resp.call("SET", "k", "v")
    assert resp.call("GETEX", "k", "EX", "abc") == NOT_INT


# ------------------------------------------------------- GETDEL / GETSET

def test_getdel(resp):
    resp.call("SET", "k", "v")
    assert resp.call("GETDEL", "k") == b"v"
    assert resp.call("EXISTS", "k") == 0
    assert resp.call("GETDEL", "k") is None


def test_getset(resp):
    assert resp.call("GETSET", "k", "v1") is None
    assert resp.call("GET", "k") == b"v1"
    assert resp.call("GETSET", "k", "v2") == b"v1"
    assert resp.call("GET", "k") == b"v2"


def test_getset_clears_ttl(r):
    r.set("k", "v", ex=100)
    assert r.getset("k", "w") == "v"
    assert r.ttl("k") == -1


# -------------------------------------------------- SETNX / SETEX / PSETEX

def test_setnx(resp):
    assert resp.call("SETNX", "k", "1") == 1
    assert resp.call("SETNX", "k", "2") == 0
    assert resp.call("GET", "k") == b"1"


def test_setnx_does_not_touch_ttl(r):
    r.set("k", "v", ex=100)
    assert r.setnx("k", "w") is False
    assert r.ttl("k") == 100


def test_setex(resp):
    assert resp.call("SETEX", "k", "100", "v") == "OK"
    assert resp.call("GET", "k") == b"v"
    assert resp.call("TTL", "k") == 100


def test_setex_overwrites_and_replaces_ttl(resp):
    resp.call("SET", "k", "old", "EX", "1000")
    assert resp.call("SETEX", "k", "10", "new") == "OK"
    assert resp.call("GET", "k") == b"new"
    assert resp.call("TTL", "k") == 10


def test_psetex(resp):
    assert resp.call("PSETEX", "k", "100000", "v") == "OK"
    assert resp.call("GET", "k") == b"v"
    assert 99000 < resp.call("PTTL", "k") <= 100000


@pytest.mark.parametrize("cmd,val", [
    ("SETEX", "0"), ("SETEX", "-1"), ("PSETEX", "0"), ("PSETEX", "-100"),
    ("SETEX", "100000000000000000"), ("SETEX", str(LLONG_MAX)), ("PSETEX", str(LLONG_MAX)),
])
def test_setex_invalid_expire_time(resp, cmd, val):
    assert resp.call(cmd, "k", val, "v") == invalid_expire(cmd.lower())
    assert resp.call("EXISTS", "k") == 0


def test_setex_not_integer(resp):
    assert resp.call("SETEX", "k", "abc", "v") == NOT_INT
    assert resp.call("PSETEX", "k", "1.5", "v") == NOT_INT


# -------------------------------------------------------- MSET / MGET

def test_mset_mget(resp):
    assert resp.call("MSET", "a", "1", "b", "2", "c", "3") == "OK"
    assert resp.call("MGET", "a", "b", "missing", "c") == [b"1", b"2", None, b"3"]


def test_mset_duplicate_key_last_wins(r):
    r.execute_command("MSET", "a", "1", "a", "2")
    assert r.get("a") == "2"


def test_mset_clears_ttl(r):
    r.set("a", "v", ex=100)
    r.mset({"a": "w"})
    assert r.ttl("a") == -1


def test_mget_single_missing(resp):
    assert resp.call("MGET", "nope") == [None]


def test_msetnx_all_new(resp):
    assert resp.call("MSETNX", "a", "1", "b", "2") == 1
    assert resp.call("MGET", "a", "b") == [b"1", b"2"]


def test_msetnx_any_existing_sets_nothing(resp):
    resp.call("SET", "b", "old")
    assert resp.call("MSETNX", "a", "1", "b", "2", "c", "3") == 0
    assert resp.call("MGET", "a", "b", "c") == [None, b"old", None]


def test_msetnx_duplicate_key_in_args(resp):
    assert resp.call("MSETNX", "a", "1", "a", "2") == 1
    assert resp.call("GET", "a") == b"2"


# ---------------------------------------------------- APPEND / STRLEN

def test_append(resp):
    assert resp.call("APPEND", "k", "foo") == 3
    assert resp.call("APPEND", "k", "bar") == 6
    assert resp.call("GET", "k") == b"foobar"


def test_append_empty(resp):
    assert resp.call("APPEND", "k", "") == 0
    assert resp.call("EXISTS", "k") == 1
    assert resp.call("GET", "k") == b""


def test_append_to_integer_value(r):
    r.set("k", "1")
    assert r.append("k", "2") == 2
    assert r.get("k") == "12"
    assert r.incr("k") == 13


def test_append_keeps_ttl(r):
    r.set("k", "v", ex=100)
    r.append("k", "w")
    assert r.ttl("k") == 100


def test_strlen(r):
    assert r.strlen("missing") == 0
    r.set("k", "hello")
    assert r.strlen("k") == 5
    r.set("n", "12345")  # int encoded internally
    assert r.strlen("n") == 5
    r.set("neg", -123)
    assert r.strlen("neg") == 4


# ------------------------------------------------------ GETRANGE / SUBSTR

@pytest.mark.parametrize("start,end,expected", [
    (0, 3, "Hell"),
    (-3, -1, "rld"),
    (0, -1, "Hello World"),
    (10, 100, "d"),
    (5, 3, ""),
    (-1, -100, ""),
    (100, 200, ""),
    (-1, -1, "d"),
    (0, 0, "H"),
    (-100, 2, "Hel"),
    (6, 10, "World"),
])
def test_getrange(r, start, end, expected):
    r.set("s", "Hello World")
    assert r.getrange("s", start, end) == expected


def test_getrange_both_negative_out_of_range_7_0(r):
    # Redis 7.0.15 clamps start to 0 first, so this returns the first byte.
    # (Later Redis versions, 8.0+, return "" here.)  Follow the reference.
    r.set("s", "Hello World")
    assert r.getrange("s", -100, -50) == "H"


def test_getrange_missing_key(resp):
    assert resp.call("GETRANGE", "missing", "0", "-1") == b""


def test_getrange_integer_value(r):
    r.set("n", 1234)
    assert r.getrange("n", 1, 2) == "23"


def test_getrange_not_integer(resp):
    resp.call("SET", "s", "abc")
    assert resp.call("GETRANGE", "s", "a", "b") == NOT_INT


def test_substr(resp):
    resp.call("SET", "s", "Hello World")
    assert resp.call("SUBSTR", "s", "0", "4") == b"Hello"
    assert resp.call("SUBSTR", "s", "-5", "-1") == b"World"


# ---------------------------------------------------------------- SETRANGE

def test_setrange_overwrite(resp):
    resp.call("SET", "s", "Hello World")
    assert resp.call("SETRANGE", "s", "6", "Redis") == 11
    assert resp.call("GET", "s") == b"Hello Redis"


def test_setrange_extends(resp):
    resp.call("SET", "s", "Hello")
    assert resp.call("SETRANGE", "s", "3", "p me!") == 8
    assert resp.call("GET", "s") == b"Help me!"


def test_setrange_missing_key_zero_pads(resp):
    assert resp.call("SETRANGE", "k", "5", "x") == 6
    assert resp.call("GET", "k") == b"\x00\x00\x00\x00\x00x"


def test_setrange_padding_existing(resp):
    resp.call("SET", "k", "ab")
    assert resp.call("SETRANGE", "k", "4", "c") == 5
    assert resp.call("GET", "k") == b"ab\x00\x00c"


def test_setrange_empty_value_on_missing_key_creates_nothing(resp):
    assert resp.call("SETRANGE", "k", "0", "") == 0
    assert resp.call("SETRANGE", "k", "10", "") == 0
    assert resp.call("EXISTS", "k") == 0


def test_setrange_empty_value_on_existing_key(resp):
    resp.call("SET", "k", "abc")
    assert resp.call("SETRANGE", "k", "10", "") == 3
    assert resp.call("GET", "k") == b"abc"


def test_setrange_on_integer_value(r):
    r.set("n", 1234)
    assert r.setrange("n", 1, "x") == 4
    assert r.get("n") == "1x34"


def test_setrange_negative_offset(resp):
    resp.call("SET", "k", "abc")
    assert resp.call("SETRANGE", "k", "-1", "x") == ("error", "ERR offset is out of range")


def test_setrange_not_integer(resp):
    assert resp.call("SETRANGE", "k", "abc", "x") == NOT_INT


def test_setrange_exceeds_512mb(resp):
    # offset + len(value) must be <= 512MB (proto-max-bulk-len default).
    err = ("error", "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    assert resp.call("SETRANGE", "k", str(512 * 1024 * 1024), "x") == err
    assert resp.call("SETRANGE", "k", str(512 * 1024 * 1024 - 1), "xy") == err
    resp.call("SET", "k", "abc")
    assert resp.call("SETRANGE", "k", str(512 * 1024 * 1024), "x") == err
    assert resp.call("GET", "k") == b"abc"


def test_setrange_keeps_ttl(r):
    r.set("k", "hello", ex=100)
    r.setrange("k", 0, "J")
    assert r.get("k") == "Jello"
    assert r.ttl("k") == 100


# ------------------------------------------------------ INCR / DECR family

def test_incr_decr_basic(resp):
    assert resp.call("INCR", "n") == 1
    assert resp.call("INCR", "n") == 2
    assert resp.call("DECR", "n") == 1
    assert resp.call("DECR", "n") == 0
    assert resp.call("DECR", "n") == -1
    assert resp.call("GET", "n") == b"-1"


def test_decr_missing_key(resp):
    assert resp.call("DECR", "n") == -1


def test_incrby_decrby(resp):
    assert resp.call("INCRBY", "n", "10") == 10
    assert resp.call("INCRBY", "n", "-3") == 7
    assert resp.call("DECRBY", "n", "10") == -3
    assert resp.call("DECRBY", "n", "-5") == 2
    assert resp.call("GET", "n") == b"2"


def test_incr_keeps_ttl(r):
    r.set("n", "5", ex=100)
    assert r.incr("n") == 6
    assert r.ttl("n") == 100


def test_incr_on_value_set_as_string(r):
    r.set("n", "41")
    assert r.incr("n") == 42


def test_incr_large_values(resp):
    resp.call("SET", "n", "17179869184")
    assert resp.call("INCR", "n") == 17179869185
    assert resp.call("INCRBY", "n", "17179869184") == 34359738369
    resp.call("SET", "n", str(LLONG_MAX - 1))
    assert resp.call("INCR", "n") == LLONG_MAX
    resp.call("SET", "n", str(LLONG_MIN + 1))
    assert resp.call("DECR", "n") == LLONG_MIN


def test_incr_overflow(resp):
    resp.call("SET", "n", str(LLONG_MAX))
    assert resp.call("INCR", "n") == OVERFLOW
    assert resp.call("INCRBY", "n", "1") == OVERFLOW
    assert resp.call("GET", "n") == str(LLONG_MAX).encode()
    resp.call("SET", "n", "5")
    assert resp.call("INCRBY", "n", str(LLONG_MAX)) == OVERFLOW
    assert resp.call("INCRBY", "n", str(LLONG_MIN)) == -9223372036854775803


def test_decr_underflow(resp):
    resp.call("SET", "n", str(LLONG_MIN))
    assert resp.call("DECR", "n") == OVERFLOW
    assert resp.call("DECRBY", "n", "1") == OVERFLOW
    assert resp.call("INCRBY", "n", "-1") == OVERFLOW
    assert resp.call("GET", "n") == str(LLONG_MIN).encode()


def test_decrby_llong_min(resp):
    # DECRBY cannot negate LLONG_MIN: distinct error message.
    resp.call("SET", "n", "0")
    assert resp.call("DECRBY", "n", str(LLONG_MIN)) == ("error", "ERR decrement would overflow")
    assert resp.call("DECRBY", "n", str(LLONG_MAX)) == -LLONG_MAX


@pytest.mark.parametrize("value", [
    "abc", "1.5", " 1", "1 ", "01", "+1", "-0", "", "0x10", "1e3",
    "9223372036854775808", "-9223372036854775809", "123456789012345678901234",
])
def test_incr_on_non_integer_value(resp, value):
    resp.call("SET", "n", value)
    assert resp.call("INCR", "n") == NOT_INT
    assert resp.call("GET", "n") == value.encode()


@pytest.mark.parametrize("incr", ["abc", "1.0", "", "9223372036854775808", " 1"])
def test_incrby_non_integer_increment(resp, incr):
    assert resp.call("INCRBY", "n", incr) == NOT_INT
    assert resp.call("DECRBY", "n", incr) == NOT_INT
    assert resp.call("EXISTS", "n") == 0


def test_incr_result_is_int_encoded(r):
    r.incr("n")
    assert r.object("encoding", "n") == "int"


# ------------------------------------------------------------ INCRBYFLOAT

def test_incrbyfloat_missing_key(resp):
    assert resp.call("INCRBYFLOAT", "f", "1.5") == b"1.5"
    assert resp.call("GET", "f") == b"1.5"


@pytest.mark.parametrize("start,incr,expected", [
    ("10.50", "0.1", b"10.6"),
    ("10.6", "-5.6", b"5"),
    ("5", "5.0e3", b"5005"),
    ("0.1", "0.2", b"0.3"),
    ("3", "0", b"3"),
    ("5.0e3", "0", b"5000"),
    ("1", "1e-20", b"1"),
    ("0", "3.0", b"3"),
    ("0", "1.5e-7", b"0.00000015"),
    ("0", "1e20", b"100000000000000000000"),
    ("0", "-0", b"0"),
    ("10", "-20.25", b"-10.25"),
    ("0", "0.1234567890123456789", b"0.12345678901234568"),
])
def test_incrbyfloat_formatting(resp, start, incr, expected):
    # Redis computes in long double and prints with %.17Lf, trailing zeros
    # trimmed: never exponent notation, never "-0".
    resp.call("SET", "f", start)
    assert resp.call("INCRBYFLOAT", "f", incr) == expected
    assert resp.call("GET", "f") == expected


def test_incrbyfloat_on_integer(resp):
    resp.call("SET", "f", "17179869184")
    assert resp.call("INCRBYFLOAT", "f", "1.5") == b"17179869185.5"


def test_incrbyfloat_then_incr_fails_when_fractional(resp):
    resp.call("INCRBYFLOAT", "f", "1.5")
    assert resp.call("INCR", "f") == NOT_INT
    resp.call("INCRBYFLOAT", "f", "0.5")
    assert resp.call("INCR", "f") == 3


@pytest.mark.parametrize("incr", ["inf", "-inf", "+inf", "Infinity", "INF"])
def test_incrbyfloat_infinity_error(resp, incr):
    resp.call("SET", "f", "1")
    assert resp.call("INCRBYFLOAT", "f", incr) == (
        "error", "ERR increment would produce NaN or Infinity")
    assert resp.call("GET", "f") == b"1"


@pytest.mark.parametrize("incr", ["nan", "NaN", "abc", "", " 1", "1 ", "1.5x"])
def test_incrbyfloat_invalid_increment(resp, incr):
    resp.call("SET", "f", "1")
    assert resp.call("INCRBYFLOAT", "f", incr) == NOT_FLOAT
    assert resp.call("GET", "f") == b"1"


@pytest.mark.parametrize("value", ["abc", " 1", "1.5x", ""])
def test_incrbyfloat_on_non_float_value(resp, value):
    resp.call("SET", "f", value)
    assert resp.call("INCRBYFLOAT", "f", "1") == NOT_FLOAT


def test_incrbyfloat_resp3_is_bulk_string(resp3):
    # INCRBYFLOAT replies with a bulk string even under RESP3 (not a double).
    assert resp3.call("INCRBYFLOAT", "f", "1.5") == b"1.5"
    assert resp3.call("INCRBYFLOAT", "f", "1.5") == b"3"


def test_incrbyfloat_keeps_ttl(r):
    r.set("f", "1", ex=100)
    r.incrbyfloat("f", 0.5)
    assert r.ttl("f") == 100


# --------------------------------------------------------------------- LCS

def _lcs_keys(resp):
    resp.call("MSET", "key1", "ohmytext", "key2", "mynewtext")


def test_lcs_string(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2") == b"mytext"


def test_lcs_len(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "LEN") == 6


def test_lcs_idx(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]


def test_lcs_idx_withmatchlen(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]


def test_lcs_idx_minmatchlen(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4") == [
        b"matches", [[[4, 7], [5, 8]]], b"len", 6]
    assert resp.call("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]


def test_lcs_minmatchlen_negative_is_zero(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "MINMATCHLEN", "-1", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]


def test_lcs_withmatchlen_or_minmatchlen_without_idx_ignored(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "WITHMATCHLEN") == b"mytext"
    assert resp.call("LCS", "key1", "key2", "MINMATCHLEN", "4") == b"mytext"
    assert resp.call("LCS", "key1", "key2", "LEN", "WITHMATCHLEN") == 6


def test_lcs_idx_resp3_is_map(resp3):
    _lcs_keys(resp3)
    assert resp3.call("LCS", "key1", "key2", "IDX", "WITHMATCHLEN") == {
        b"matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len": 6}


def test_lcs_missing_keys_are_empty(resp):
    resp.call("SET", "key1", "abc")
    assert resp.call("LCS", "key1", "missing") == b""
    assert resp.call("LCS", "missing", "missing2", "LEN") == 0
    assert resp.call("LCS", "missing", "missing2", "IDX") == [b"matches", [], b"len", 0]


def test_lcs_len_and_idx_error(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "LEN", "IDX") == (
        "error", "ERR If you want both the length and indexes, please just use IDX.")


def test_lcs_syntax_errors(resp):
    _lcs_keys(resp)
    assert resp.call("LCS", "key1", "key2", "FOO") == SYNTAX
    assert resp.call("LCS", "key1", "key2", "MINMATCHLEN") == SYNTAX
    assert resp.call("LCS", "key1", "key2", "MINMATCHLEN", "abc") == NOT_INT


def test_lcs_identical_strings(resp):
    resp.call("MSET", "a", "hello", "b", "hello")
    assert resp.call("LCS", "a", "b") == b"hello"
    assert resp.call("LCS", "a", "b", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[0, 4], [0, 4], 5]], b"len", 5]


def test_lcs_no_common(resp):
    resp.call("MSET", "a", "abc", "b", "xyz")
    assert resp.call("LCS", "a", "b") == b""
    assert resp.call("LCS", "a", "b", "IDX") == [b"matches", [], b"len", 0]


# ------------------------------------------------------ binary / large values

BINARY = b"a\x00b\r\nc\xff\x00\r\n$3\r\n*1\r\n"


def test_binary_safe_value(rb):
    rb.set(b"k", BINARY)
    assert rb.get(b"k") == BINARY
    assert rb.strlen(b"k") == len(BINARY)


def test_binary_safe_key(rb):
    key = b"key\x00with\r\nbinary\xff"
    rb.set(key, b"v")
    assert rb.get(key) == b"v"
    assert rb.get(b"key") is None
    assert rb.exists(key) == 1


def test_binary_append_getrange_setrange(rb):
    rb.set(b"k", b"\x00\r\n")
    assert rb.append(b"k", b"\x00\xff") == 5
    assert rb.getrange(b"k", 1, 3) == b"\r\n\x00"
    assert rb.setrange(b"k", 6, b"\r\n") == 8
    assert rb.get(b"k") == b"\x00\r\n\x00\xff\x00\r\n"


def test_binary_mset_mget(rb):
    rb.mset({b"a\x00": b"1\r\n", b"a\x00b": b"\x00"})
    assert rb.mget(b"a\x00", b"a\x00b", b"a") == [b"1\r\n", b"\x00", None]


def test_large_value_10mb(rb):
    data = bytes(range(256)) * (10 * 1024 * 1024 // 256)
    assert rb.set(b"big", data) is True
    assert rb.strlen(b"big") == len(data)
    assert rb.get(b"big") == data
    assert rb.getrange(b"big", 5 * 1024 * 1024, 5 * 1024 * 1024 + 3) == data[5 * 1024 * 1024:][:4]
    assert rb.append(b"big", b"END") == len(data) + 3
    assert rb.getrange(b"big", -3, -1) == b"END"


def test_large_value_over_raw_socket(resp):
    data = b"x" * (4 * 1024 * 1024 + 7)
    assert resp.call("SET", "big", data) == "OK"
    assert resp.call("GET", "big") == data


# ------------------------------------------------------------- RESP3 shapes

def test_resp3_string_reply_shapes(resp3):
    assert resp3.call("SET", "k", "v") == "OK"
    assert resp3.call("SET", "k", "v", "NX") is None
    assert resp3.call("GET", "k") == b"v"
    assert resp3.call("GET", "missing") is None
    assert resp3.call("MGET", "k", "missing") == [b"v", None]
    assert resp3.call("INCR", "n") == 1
    assert resp3.call("STRLEN", "k") == 1
    assert resp3.call("SETNX", "k", "x") == 0
    assert resp3.call("SET", "k", "w", "GET") == b"v"
    assert resp3.call("GETDEL", "missing") is None
    assert resp3.call("LCS", "k", "k", "LEN") == 1


def test_resp3_null_is_underscore(resp3):
    resp3.send("GET", "missing")
    assert resp3._line() == b"_"
    resp3.send("MGET", "missing")
    assert resp3._line() == b"*1"
    assert resp3._line() == b"_"


def test_resp2_null_bulk(server):
    from conftest import raw
    c = server.client()
    c.delete("hotkv-missing-key")
    c.close()
    assert raw(server.port, b"GET hotkv-missing-key\r\n", read_timeout=0.3) == b"$-1\r\n"
    assert raw(server.port, b"MGET hotkv-missing-key\r\n", read_timeout=0.3) == b"*1\r\n$-1\r\n"
