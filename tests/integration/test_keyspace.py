"""Keyspace command integration tests (Redis 7.x semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Commands that
change the selected DB (SELECT, SWAPDB checks) use the single-connection raw
`resp` client so that redis-py's connection pool never sees a changed DB.
Errors are compared on the wire, prefix included.
"""
import os
import time

import pytest

from helpers import arity_error as arity, make_nonstring

from conftest import MODE, Resp, Server

SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
OUT_OF_RANGE = ("error", "ERR DB index is out of range")
NO_SUCH_KEY = ("error", "ERR no such key")




# ------------------------------------------------------------- DEL / UNLINK

@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_counts_removed_keys(resp, cmd):
    resp.call("MSET", "a", "1", "b", "2", "c", "3")
    assert resp.call(cmd, "a", "b", "missing") == 2
    assert resp.call("EXISTS", "a", "b", "c") == 1
    assert resp.call(cmd, "a") == 0


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_duplicate_keys_counted_once(resp, cmd):
    resp.call("SET", "a", "1")
    assert resp.call(cmd, "a", "a", "a") == 1


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_removes_ttl(r, cmd):
    r.set("a", "1", ex=100)
    r.execute_command(cmd, "a")
    r.set("a", "2")
    assert r.ttl("a") == -1


def test_unlink_large_value(rb):
    rb.set(b"big", b"x" * (2 * 1024 * 1024))
    assert rb.unlink(b"big") == 1
    assert rb.exists(b"big") == 0


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK", "EXISTS", "TOUCH"])
def test_multikey_arity(resp, cmd):
    assert resp.call(cmd) == arity(cmd.lower())


# ------------------------------------------------------------------ EXISTS

def test_exists(resp):
    assert resp.call("EXISTS", "a") == 0
    resp.call("SET", "a", "1")
    assert resp.call("EXISTS", "a") == 1


def test_exists_counts_duplicates(resp):
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("EXISTS", "a", "a", "a", "b", "missing") == 4


def test_exists_empty_string_value(resp):
    resp.call("SET", "a", "")
    assert resp.call("EXISTS", "a") == 1


# -------------------------------------------------------------------- TYPE

def test_type_string_and_none(resp):
    resp.call("SET", "a", "1")
    assert resp.call("TYPE", "a") == "string"
    assert resp.call("TYPE", "missing") == "none"


def test_type_is_simple_string_on_wire(server):
    from conftest import raw
    c = server.client()
    c.set("typed", "v")
    c.close()
    assert raw(server.port, b"TYPE typed\r\nTYPE hotkv-nope\r\n", read_timeout=0.3) == \
        b"+string\r\n+none\r\n"


def test_type_list(resp):
    make_nonstring(resp, "l")
    assert resp.call("TYPE", "l") == "list"


def test_type_arity(resp):
    assert resp.call("TYPE") == arity("type")
    assert resp.call("TYPE", "a", "b") == arity("type")


# --------------------------------------------------------- RENAME / RENAMENX

def test_rename(resp):
    resp.call("SET", "a", "1")
    assert resp.call("RENAME", "a", "b") == "OK"
    assert resp.call("EXISTS", "a") == 0
    assert resp.call("GET", "b") == b"1"


def test_rename_overwrites_destination(r):
    r.set("a", "1")
    r.set("b", "2", ex=100)
    assert r.rename("a", "b") is True
    assert r.get("b") == "1"
    assert r.ttl("b") == -1  # destination's TTL is discarded


def test_rename_keeps_source_ttl(r):
    r.set("a", "1", ex=100)
    r.rename("a", "b")
    assert r.ttl("b") == 100


def test_rename_missing_key(resp):
    assert resp.call("RENAME", "missing", "b") == NO_SUCH_KEY
    assert resp.call("RENAME", "missing", "missing") == NO_SUCH_KEY


def test_rename_same_key(resp):
    resp.call("SET", "a", "1", "EX", "100")
    assert resp.call("RENAME", "a", "a") == "OK"
    assert resp.call("GET", "a") == b"1"
    assert resp.call("TTL", "a") == 100


def test_rename_overwrites_other_type(resp):
    make_nonstring(resp, "l")
    resp.call("SET", "a", "1")
    assert resp.call("RENAME", "a", "l") == "OK"
    assert resp.call("TYPE", "l") == "string"


def test_renamenx(resp):
    resp.call("SET", "a", "1")
    assert resp.call("RENAMENX", "a", "b") == 1
    assert resp.call("EXISTS", "a") == 0
    assert resp.call("GET", "b") == b"1"


def test_renamenx_destination_exists(resp):
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("RENAMENX", "a", "b") == 0
    assert resp.call("MGET", "a", "b") == [b"1", b"2"]


def test_renamenx_same_key(resp):
    resp.call("SET", "a", "1")
    assert resp.call("RENAMENX", "a", "a") == 0
    assert resp.call("GET", "a") == b"1"


def test_renamenx_missing_key(resp):
    assert resp.call("RENAMENX", "missing", "b") == NO_SUCH_KEY
    assert resp.call("RENAMENX", "missing", "missing") == NO_SUCH_KEY


def test_rename_arity(resp):
    assert resp.call("RENAME", "a") == arity("rename")
    assert resp.call("RENAMENX", "a", "b", "c") == arity("renamenx")


def test_rename_binary_keys(rb):
    rb.set(b"a\x00\r\n", b"v")
    assert rb.rename(b"a\x00\r\n", b"b\x00") is True
    assert rb.get(b"b\x00") == b"v"


# -------------------------------------------------------------------- COPY

def test_copy(resp):
    resp.call("SET", "a", "1")
    assert resp.call("COPY", "a", "b") == 1
    assert resp.call("MGET", "a", "b") == [b"1", b"1"]


def test_copy_is_independent(resp):
    resp.call("SET", "a", "1")
    resp.call("COPY", "a", "b")
    resp.call("APPEND", "b", "2")
    assert resp.call("MGET", "a", "b") == [b"1", b"12"]


def test_copy_destination_exists(resp):
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("COPY", "a", "b") == 0
    assert resp.call("GET", "b") == b"2"


def test_copy_replace(resp):
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("COPY", "a", "b", "REPLACE") == 1
    assert resp.call("GET", "b") == b"1"


def test_copy_missing_source(resp):
    assert resp.call("COPY", "missing", "b") == 0
    assert resp.call("EXISTS", "b") == 0


def test_copy_same_key(resp):
    resp.call("SET", "a", "1")
    err = ("error", "ERR source and destination objects are the same")
    assert resp.call("COPY", "a", "a") == err
    assert resp.call("COPY", "a", "a", "REPLACE") == err


def test_copy_keeps_ttl(r):
    r.set("a", "1", ex=100)
    r.copy("a", "b")
    assert r.ttl("b") == 100


def test_copy_replace_drops_destination_ttl(r):
    r.set("a", "1")
    r.set("b", "2", ex=100)
    assert r.copy("a", "b", replace=True) is True
    assert r.ttl("b") == -1


def test_copy_to_other_db(resp):
    resp.call("SET", "a", "1")
    assert resp.call("COPY", "a", "a", "DB", "1") == 1
    assert resp.call("COPY", "a", "a", "DB", "1") == 0
    assert resp.call("COPY", "a", "b", "DB", "1") == 1
    assert resp.call("SELECT", "1") == "OK"
    assert resp.call("MGET", "a", "b") == [b"1", b"1"]
    resp.call("SET", "a", "other")
    assert resp.call("SELECT", "0") == "OK"
    assert resp.call("COPY", "a", "a", "DB", "1", "REPLACE") == 1
    resp.call("SELECT", "1")
    assert resp.call("GET", "a") == b"1"
    resp.call("SELECT", "0")


def test_copy_errors(resp):
    resp.call("SET", "a", "1")
    assert resp.call("COPY", "a", "b", "DB", "16") == OUT_OF_RANGE
    assert resp.call("COPY", "a", "b", "DB", "-1") == OUT_OF_RANGE
    assert resp.call("COPY", "a", "b", "DB", "abc") == NOT_INT
    assert resp.call("COPY", "a", "b", "DB") == SYNTAX
    assert resp.call("COPY", "a", "b", "FOO") == SYNTAX
    assert resp.call("COPY", "a") == arity("copy")
    assert resp.call("EXISTS", "b") == 0


# -------------------------------------------------------------------- MOVE

def test_move(resp):
    resp.call("SET", "a", "1")
    assert resp.call("MOVE", "a", "1") == 1
    assert resp.call("EXISTS", "a") == 0
    resp.call("SELECT", "1")
    assert resp.call("GET", "a") == b"1"
    resp.call("SELECT", "0")


def test_move_keeps_ttl(resp):
    resp.call("SET", "a", "1", "EX", "100")
    assert resp.call("MOVE", "a", "2") == 1
    resp.call("SELECT", "2")
    assert resp.call("TTL", "a") == 100
    resp.call("SELECT", "0")


def test_move_destination_exists(resp):
    resp.call("SELECT", "1")
    resp.call("SET", "a", "db1")
    resp.call("SELECT", "0")
    resp.call("SET", "a", "db0")
    assert resp.call("MOVE", "a", "1") == 0
    assert resp.call("GET", "a") == b"db0"
    resp.call("SELECT", "1")
    assert resp.call("GET", "a") == b"db1"
    resp.call("SELECT", "0")


def test_move_missing_key(resp):
    assert resp.call("MOVE", "missing", "1") == 0


def test_move_errors(resp):
    resp.call("SET", "a", "1")
    assert resp.call("MOVE", "a", "0") == (
        "error", "ERR source and destination objects are the same")
    assert resp.call("MOVE", "a", "16") == OUT_OF_RANGE
    assert resp.call("MOVE", "a", "-1") == OUT_OF_RANGE
    assert resp.call("MOVE", "a", "abc") == NOT_INT
    assert resp.call("MOVE", "a") == arity("move")


# ------------------------------------------------------------------ SELECT

def test_select_isolates_databases(resp):
    resp.call("SET", "k", "db0")
    assert resp.call("SELECT", "15") == "OK"
    assert resp.call("GET", "k") is None
    resp.call("SET", "k", "db15")
    assert resp.call("DBSIZE") == 1
    assert resp.call("SELECT", "0") == "OK"
    assert resp.call("GET", "k") == b"db0"


def test_select_errors(resp):
    assert resp.call("SELECT", "16") == OUT_OF_RANGE
    assert resp.call("SELECT", "-1") == OUT_OF_RANGE
    assert resp.call("SELECT", "abc") == NOT_INT
    assert resp.call("SELECT") == arity("select")
    assert resp.call("SELECT", "1", "2") == arity("select")


def test_select_is_per_connection(server, resp):
    other = Resp(server.port)
    try:
        resp.call("SELECT", "3")
        resp.call("SET", "k", "db3")
        assert other.call("GET", "k") is None
        other.call("SELECT", "3")
        assert other.call("GET", "k") == b"db3"
    finally:
        other.close()
        resp.call("SELECT", "0")


# ------------------------------------------------------------------ SWAPDB

def test_swapdb(resp):
    resp.call("SET", "k", "db0")
    resp.call("SELECT", "1")
    resp.call("MSET", "k", "db1", "only1", "x")
    resp.call("SELECT", "0")
    assert resp.call("SWAPDB", "0", "1") == "OK"
    assert resp.call("GET", "k") == b"db1"
    assert resp.call("DBSIZE") == 2
    resp.call("SELECT", "1")
    assert resp.call("GET", "k") == b"db0"
    assert resp.call("DBSIZE") == 1
    resp.call("SELECT", "0")


def test_swapdb_keeps_ttls(resp):
    resp.call("SET", "k", "v", "EX", "100")
    assert resp.call("SWAPDB", "0", "5") == "OK"
    resp.call("SELECT", "5")
    assert resp.call("TTL", "k") == 100
    resp.call("SELECT", "0")


def test_swapdb_same_db(resp):
    resp.call("SET", "k", "v")
    assert resp.call("SWAPDB", "0", "0") == "OK"
    assert resp.call("GET", "k") == b"v"


def test_swapdb_visible_to_other_connections(server, resp):
    other = Resp(server.port)
    try:
        other.call("SELECT", "1")
        resp.call("SET", "k", "from-db0")
        assert resp.call("SWAPDB", "0", "1") == "OK"
        assert other.call("GET", "k") == b"from-db0"
    finally:
        other.close()


def test_swapdb_errors(resp):
    assert resp.call("SWAPDB", "0", "16") == OUT_OF_RANGE
    assert resp.call("SWAPDB", "-1", "0") == OUT_OF_RANGE
    assert resp.call("SWAPDB", "abc", "0") == ("error", "ERR invalid first DB index")
    assert resp.call("SWAPDB", "0", "abc") == ("error", "ERR invalid second DB index")
    assert resp.call("SWAPDB", "0") == arity("swapdb")


# -------------------------------------------------------------------- KEYS

GLOB_KEYS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo",
             "h[a]llo", "h\\llo", "hbllo", "h-llo", "h]llo", "h^llo", "HELLO"]


@pytest.fixture
def globkeys(r):
    r.mset({k: "1" for k in GLOB_KEYS})
    return r


@pytest.mark.parametrize("pattern,expected", [
    ("*", GLOB_KEYS),
    ("hello", ["hello"]),
    ("h?llo", ["hello", "hallo", "hxllo", "h*llo", "h?llo", "h\\llo", "hbllo",
               "h-llo", "h]llo", "h^llo"]),
    ("h*llo", [k for k in GLOB_KEYS if k != "HELLO"]),
    ("h[ae]llo", ["hello", "hallo"]),
    ("h[^e]llo", ["hallo", "hxllo", "h*llo", "h?llo", "h\\llo", "hbllo", "h-llo",
                  "h]llo", "h^llo"]),
    ("h[a-b]llo", ["hallo", "hbllo"]),
    ("h[b-a]llo", ["hallo", "hbllo"]),          # reversed ranges work
    ("h[!e]llo", ["hello"]),                    # '!' is not negation
    ("h\\*llo", ["h*llo"]),
    ("h\\?llo", ["h?llo"]),
    ("h\\[a\\]llo", ["h[a]llo"]),
    ("h[\\]]llo", ["h]llo"]),
    ("h\\\\llo", ["h\\llo"]),
    ("H*", ["HELLO"]),                          # case sensitive
    ("nomatch*", []),
    ("he*o", ["hello", "heeeello"]),
    ("*ll*", [k for k in GLOB_KEYS if "ll" in k]),
])
def test_keys_glob(globkeys, pattern, expected):
    assert sorted(globkeys.keys(pattern)) == sorted(expected)


def test_keys_empty_db(resp):
    assert resp.call("KEYS", "*") == []


def test_keys_skips_expired(r):
    r.set("a", "1")
    r.set("b", "1", px=1)
    time.sleep(0.01)
    assert r.keys("*") == ["a"]


def test_keys_arity(resp):
    assert resp.call("KEYS") == arity("keys")


def test_keys_binary(rb):
    rb.mset({b"k\x00a": b"1", b"k\x00b": b"2", b"kz": b"3"})
    assert sorted(rb.keys(b"k\x00*")) == [b"k\x00a", b"k\x00b"]


# -------------------------------------------------------------------- SCAN

def _scan_all(resp, *args):
    cursor = b"0"
    seen = []
    calls = 0
    while True:
        reply = resp.call("SCAN", cursor, *args)
        assert isinstance(reply, list) and len(reply) == 2
        cursor, keys = reply
        assert isinstance(cursor, bytes) and cursor.isdigit()
        seen.extend(keys)
        calls += 1
        assert calls < 100000
        if cursor == b"0":
            return seen, calls


def test_scan_full_iteration(resp, r):
    pipe = r.pipeline(transaction=False)
    for i in range(1000):
        pipe.set("key:%d" % i, i)
    pipe.execute()
    seen, calls = _scan_all(resp, "COUNT", "10")
    assert set(seen) == {b"key:%d" % i for i in range(1000)}


def test_scan_default_count(resp, r):
    r.mset({"k%d" % i: i for i in range(200)})
    seen, _ = _scan_all(resp)
    assert set(seen) == {b"k%d" % i for i in range(200)}


def test_scan_empty_db(resp):
    assert resp.call("SCAN", "0") == [b"0", []]


def test_scan_match(resp, r):
    r.mset({"user:%d" % i: i for i in range(100)})
    r.mset({"other:%d" % i: i for i in range(100)})
    seen, _ = _scan_all(resp, "MATCH", "user:1*", "COUNT", "20")
    assert set(seen) == {b"user:1"} | {b"user:1%d" % i for i in range(10)}


def test_scan_type(resp, r):
    r.mset({"s%d" % i: i for i in range(50)})
    seen, _ = _scan_all(resp, "TYPE", "string")
    assert set(seen) == {b"s%d" % i for i in range(50)}
    seen, _ = _scan_all(resp, "TYPE", "hash")
    assert seen == []


def test_scan_type_filters_lists(resp, r):
    r.mset({"s%d" % i: i for i in range(20)})
    make_nonstring(resp, "l")
    seen, _ = _scan_all(resp, "TYPE", "list")
    assert seen == [b"l"]
    seen, _ = _scan_all(resp, "TYPE", "STRING")  # type name is case-insensitive
    assert set(seen) == {b"s%d" % i for i in range(20)}


def test_scan_unknown_type_returns_nothing(resp, r):
    # Redis 7.x returns an empty result for an unknown TYPE (8.0 errors).
    r.set("a", "1")
    seen, _ = _scan_all(resp, "TYPE", "nosuchtype")
    assert seen == []


def test_scan_match_and_type_and_count(resp, r):
    r.mset({"a%d" % i: i for i in range(30)})
    r.mset({"b%d" % i: i for i in range(30)})
    seen, _ = _scan_all(resp, "MATCH", "a*", "COUNT", "5", "TYPE", "string")
    assert set(seen) == {b"a%d" % i for i in range(30)}


def test_scan_errors(resp):
    assert resp.call("SCAN", "abc") == ("error", "ERR invalid cursor")
    assert resp.call("SCAN", "18446744073709551616") == ("error", "ERR invalid cursor")
    assert resp.call("SCAN", "0", "COUNT", "0") == SYNTAX
    assert resp.call("SCAN", "0", "COUNT", "-1") == SYNTAX
    assert resp.call("SCAN", "0", "COUNT", "abc") == NOT_INT
    assert resp.call("SCAN", "0", "MATCH") == SYNTAX
    assert resp.call("SCAN", "0", "TYPE") == SYNTAX
    assert resp.call("SCAN", "0", "FOO", "bar") == SYNTAX
    assert resp.call("SCAN") == arity("scan")


def test_scan_resp3_shape(resp3):
    resp3.call("SET", "a", "1")
    assert resp3.call("SCAN", "0") == [b"0", [b"a"]]


def test_scan_deletes_the_expired_keys_it_visits(resp):
    # As Redis: SCAN leaves expired keys out and deletes them, each DEL
    # fed on its own (keyspace event "expired"); with a TYPE filter too.
    assert resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    try:
        for i in range(50):
            resp.call("SET", "live%d" % i, "v")
        resp.call("SET", "gone", "v", "PX", "1")
        resp.call("HSET", "gonehash", "f", "v")
        resp.call("PEXPIRE", "gonehash", "1")
        time.sleep(0.01)
        assert resp.call("DBSIZE") == 52
        seen, cur = [], b"0"
        while True:
            cur, keys = resp.call("SCAN", cur, "COUNT", "7", "TYPE", "string")
            seen += keys
            if cur == b"0":
                break
        assert sorted(seen) == sorted(b"live%d" % i for i in range(50))
        assert resp.call("DBSIZE") == 50
        assert int(dict(l.split(":", 1) for l in resp.call("INFO", "stats").decode().split("\r\n")
                        if ":" in l)["expired_keys"]) >= 2
    finally:
        resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


# -------------------------------------------------------------- RANDOMKEY

def test_randomkey_empty(resp):
    assert resp.call("RANDOMKEY") is None


def test_randomkey_single(resp):
    resp.call("SET", "only", "1")
    assert resp.call("RANDOMKEY") == b"only"


def test_randomkey_returns_existing_keys(r):
    keys = {"k%d" % i for i in range(10)}
    r.mset({k: 1 for k in keys})
    got = {r.randomkey() for _ in range(100)}
    assert got <= keys
    assert len(got) > 1


def test_randomkey_arity(resp):
    assert resp.call("RANDOMKEY", "x") == arity("randomkey")


# ---------------------------------------------------- DBSIZE / FLUSH*

def test_dbsize(resp):
    assert resp.call("DBSIZE") == 0
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("DBSIZE") == 2
    resp.call("DEL", "a")
    assert resp.call("DBSIZE") == 1
    assert resp.call("DBSIZE", "x") == arity("dbsize")


@pytest.mark.parametrize("mode", [None, "SYNC", "ASYNC", "async"])
def test_flushdb_only_current_db(resp, mode):
    resp.call("SET", "a", "1")
    resp.call("SELECT", "1")
    resp.call("SET", "b", "1")
    args = ["FLUSHDB"] + ([mode] if mode else [])
    assert resp.call(*args) == "OK"
    assert resp.call("DBSIZE") == 0
    resp.call("SELECT", "0")
    assert resp.call("DBSIZE") == 1


@pytest.mark.parametrize("mode", [None, "SYNC", "ASYNC"])
def test_flushall_all_dbs(resp, mode):
    resp.call("SET", "a", "1")
    resp.call("SELECT", "9")
    resp.call("SET", "b", "1")
    args = ["FLUSHALL"] + ([mode] if mode else [])
    assert resp.call(*args) == "OK"
    assert resp.call("DBSIZE") == 0
    resp.call("SELECT", "0")
    assert resp.call("DBSIZE") == 0
    assert resp.call("GET", "a") is None


def test_flush_errors(resp):
    assert resp.call("FLUSHDB", "FOO") == SYNTAX
    assert resp.call("FLUSHALL", "FOO") == SYNTAX
    assert resp.call("FLUSHALL", "SYNC", "ASYNC") == SYNTAX
    assert resp.call("FLUSHDB", "ASYNC", "SYNC") == SYNTAX


def test_flushall_async_large(r):
    pipe = r.pipeline(transaction=False)
    for i in range(5000):
        pipe.set("k%d" % i, "x" * 100)
    pipe.execute()
    assert r.flushall(asynchronous=True) is True
    assert r.dbsize() == 0
    r.set("after", "1")
    assert r.get("after") == "1"


# ------------------------------------------------------------------- TOUCH

def test_touch(resp):
    resp.call("MSET", "a", "1", "b", "2")
    assert resp.call("TOUCH", "a", "b", "missing") == 2
    assert resp.call("TOUCH", "a", "a") == 2  # duplicates counted
    assert resp.call("TOUCH", "missing") == 0


def test_touch_resets_idletime(r):
    # Non-integer values: Redis shares small integer objects between keys.
    r.set("a", "value-a")
    r.set("b", "value-b")
    time.sleep(1.5)
    assert r.object("idletime", "a") >= 1
    assert r.touch("a") == 1
    assert r.object("idletime", "a") == 0
    assert r.object("idletime", "b") >= 1  # OBJECT IDLETIME does not touch
    r.get("b")
    assert r.object("idletime", "b") == 0


# ------------------------------------------------------------------ OBJECT

@pytest.mark.parametrize("value,encoding", [
    ("123", "int"),
    ("-123", "int"),
    ("0", "int"),
    ("9223372036854775807", "int"),
    ("-9223372036854775808", "int"),
    ("9223372036854775808", "embstr"),   # out of long long range
    ("0123", "embstr"),                  # not canonical
    ("-0", "embstr"),
    ("+1", "embstr"),
    (" 1", "embstr"),
    ("1.5", "embstr"),
    ("", "embstr"),
    ("hello", "embstr"),
    ("x" * 44, "embstr"),                # embstr limit is 44 bytes
    ("x" * 45, "raw"),
    ("x" * 1000, "raw"),
])
def test_object_encoding_strings(r, value, encoding):
    r.set("k", value)
    assert r.object("encoding", "k") == encoding


def test_object_encoding_after_modification(r):
    r.set("k", "123")
    r.append("k", "4")
    assert r.object("encoding", "k") == "raw"   # APPEND always yields raw
    assert r.incr("k") == 1235
    assert r.object("encoding", "k") == "int"   # INCR yields int
    r.set("k", "hello")
    r.setrange("k", 0, "j")
    assert r.object("encoding", "k") == "raw"
    r.set("k", "1")
    r.incrbyfloat("k", "1.5")
    assert r.object("encoding", "k") == "embstr"


def test_object_encoding_wire(resp):
    resp.call("SET", "k", "1")
    assert resp.call("OBJECT", "ENCODING", "k") == b"int"
    assert resp.call("OBJECT", "ENCODING", "missing") is None


def test_object_refcount(resp):
    resp.call("SET", "k", "hello world")
    assert resp.call("OBJECT", "REFCOUNT", "k") == 1
    assert resp.call("OBJECT", "REFCOUNT", "missing") is None


def test_object_idletime(resp):
    resp.call("SET", "k", "v")
    assert resp.call("OBJECT", "IDLETIME", "k") == 0
    assert resp.call("OBJECT", "IDLETIME", "missing") is None


def test_object_freq_requires_lfu(resp):
    resp.call("SET", "k", "v")
    assert resp.call("OBJECT", "FREQ", "k") == (
        "error",
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
        "Please note that when switching between policies at runtime LRU and LFU "
        "data will take some time to adjust.")
    # the key lookup happens first: a missing key is a nil reply
    assert resp.call("OBJECT", "FREQ", "missing") is None


def test_object_errors(resp):
    resp.call("SET", "k", "v")
    assert resp.call("OBJECT") == arity("object")
    assert resp.call("OBJECT", "ENCODING") == arity("object|encoding")
    assert resp.call("OBJECT", "ENCODING", "k", "x") == arity("object|encoding")
    assert resp.call("OBJECT", "FOO", "k") == (
        "error", "ERR unknown subcommand 'FOO'. Try OBJECT HELP.")


@pytest.fixture(scope="module")
def lfu_server():
    if os.environ.get("HOTKV_PORT"):
        pytest.skip("needs a spawned server")
    try:
        s = Server("--maxmemory-policy", "allkeys-lfu")
    except RuntimeError:
        if MODE == "redis":
            raise
        pytest.skip("server does not start with --maxmemory-policy allkeys-lfu")
    yield s
    assert s.stop() == 0


def test_object_freq_with_lfu_policy(lfu_server):
    c = Resp(lfu_server.port)
    try:
        c.call("SET", "k", "v")
        # a new key starts at LFU_INIT_VAL (5); OBJECT FREQ itself does not touch
        assert c.call("OBJECT", "FREQ", "k") == 5
        assert c.call("OBJECT", "FREQ", "k") == 5
        for _ in range(200):
            c.call("GET", "k")
        freq = c.call("OBJECT", "FREQ", "k")
        assert isinstance(freq, int) and 5 < freq <= 255
        assert c.call("OBJECT", "FREQ", "missing") is None
        # IDLETIME is the one that errors under an LFU policy
        assert c.call("OBJECT", "IDLETIME", "k") == (
            "error",
            "ERR An LFU maxmemory policy is selected, idle time not tracked. "
            "Please note that when switching between policies at runtime LRU and LFU "
            "data will take some time to adjust.")
    finally:
        c.close()


# ------------------------------------------------------------ MEMORY USAGE

def test_memory_usage(r):
    r.set("k", "x" * 1000)
    usage = r.memory_usage("k")
    assert isinstance(usage, int) and usage > 1000
    r.set("small", "v")
    small = r.memory_usage("small")
    assert isinstance(small, int) and small > 1
    assert small < usage


def test_memory_usage_missing(resp):
    assert resp.call("MEMORY", "USAGE", "missing") is None


def test_memory_usage_samples(resp):
    resp.call("SET", "k", "hello")
    assert isinstance(resp.call("MEMORY", "USAGE", "k", "SAMPLES", "0"), int)
    assert resp.call("MEMORY", "USAGE", "k", "SAMPLES") == SYNTAX
    assert resp.call("MEMORY", "USAGE", "k", "FOO") == SYNTAX
    assert resp.call("MEMORY", "USAGE") == arity("memory|usage")
