"""Hash type integration tests: HSET ... HSCAN and field expiry (Redis 7.4).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis) for everything
7.0 has; the field-expiry commands (HEXPIRE ... HPERSIST) and HSCAN NOVALUES
arrived in Redis 7.4, so those tests are gated on the command / version and
encode 7.4's behaviour (read from 7.4.1's tests and sources).  Errors are
compared on the wire through the raw `resp` client.
"""
import time

import pytest

from helpers import IS_REDIS, arity_error, info_field, requires, server_version, wait_until

NOT_INT = ("error", "ERR value is not an integer or out of range")
NOT_FLOAT = ("error", "ERR value is not a valid float")
SYNTAX = ("error", "ERR syntax error")
WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


@pytest.fixture(autouse=True)
def defaults(server):
    """Every test starts (and ends) with Redis's default thresholds and
    active expiry on."""
    c = server.client()

    def reset():
        c.config_set("hash-max-listpack-entries", 128)
        c.config_set("hash-max-listpack-value", 64)
        if not IS_REDIS:  # redis-server refuses DEBUG unless enabled; 7.0 has no field TTLs anyway
            c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    reset()
    yield
    reset()
    # Leave no collection behind: at shutdown LeakSanitizer cannot always see
    # a value pointer stored unaligned inside its key's entry.
    c.flushall()
    c.close()


def enc(resp, key):
    v = resp.call("OBJECT", "ENCODING", key)
    return v.decode() if isinstance(v, bytes) else v


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def set_small_thresholds(resp, entries=4, value=8):
    assert resp.call("CONFIG", "SET", "hash-max-listpack-entries", entries) == "OK"
    assert resp.call("CONFIG", "SET", "hash-max-listpack-value", value) == "OK"


def make_ht(resp):
    """Later hashes are created straight in the hashtable encoding."""
    assert resp.call("CONFIG", "SET", "hash-max-listpack-entries", 0) == "OK"


# ------------------------------------------------------------ HSET family

def test_hset_counts_created_fields(resp):
    assert resp.call("HSET", "h", "a", "1", "b", "2") == 2
    assert resp.call("HSET", "h", "a", "10", "c", "3") == 1
    assert resp.call("HSET", "h", "a", "11") == 0
    assert resp.call("HGET", "h", "a") == b"11"
    assert resp.call("HLEN", "h") == 3
    # The same field twice in one call: created once, last value wins.
    assert resp.call("HSET", "h2", "x", "1", "x", "2") == 1
    assert resp.call("HGET", "h2", "x") == b"2"


def test_hmset_replies_ok(resp):
    assert resp.call("HMSET", "h", "a", "1", "b", "2") == "OK"
    assert resp.call("HMSET", "h", "a", "3") == "OK"
    assert resp.call("HMGET", "h", "a", "b") == [b"3", b"2"]


def test_hset_arity(resp):
    assert resp.call("HSET", "h", "a") == arity_error("hset")
    assert resp.call("HSET", "h", "a", "1", "b") == arity_error("hset")
    assert resp.call("HMSET", "h", "a", "1", "b") == arity_error("hmset")
    assert resp.call("HSETNX", "h", "a") == arity_error("hsetnx")
    assert resp.call("HGET", "h") == arity_error("hget")
    assert resp.call("HMGET", "h") == arity_error("hmget")
    assert resp.call("HDEL", "h") == arity_error("hdel")
    assert resp.call("HLEN", "h", "x") == arity_error("hlen")
    assert resp.call("HINCRBY", "h", "f") == arity_error("hincrby")
    assert resp.call("HRANDFIELD") == arity_error("hrandfield")
    assert resp.call("HSCAN", "h") == arity_error("hscan")
    assert resp.call("EXISTS", "h") == 0


def test_hsetnx(resp):
    assert resp.call("HSETNX", "h", "f", "v1") == 1
    assert resp.call("HSETNX", "h", "f", "v2") == 0
    assert resp.call("HGET", "h", "f") == b"v1"
    make_ht(resp)
    assert resp.call("HSETNX", "big", "f", "v1") == 1
    assert enc(resp, "big") == "hashtable"
    assert resp.call("HSETNX", "big", "f", "v2") == 0
    assert resp.call("HGET", "big", "f") == b"v1"


def test_hget_hmget_missing(resp):
    assert resp.call("HGET", "nokey", "f") is None
    assert resp.call("HMGET", "nokey", "a", "b") == [None, None]
    resp.call("HSET", "h", "a", "1")
    assert resp.call("HGET", "h", "zz") is None
    assert resp.call("HMGET", "h", "zz", "a", "zz") == [None, b"1", None]


def test_hmget_resp3_nulls(resp3):
    resp3.call("HSET", "h", "a", "1")
    assert resp3.call("HMGET", "h", "a", "b") == [b"1", None]
    assert resp3.call("HGET", "h", "b") is None


def test_wrongtype(resp):
    resp.call("SET", "s", "v")
    calls = [
        ("HSET", "s", "a", "1"), ("HMSET", "s", "a", "1"), ("HSETNX", "s", "a", "1"), ("HGET", "s", "a"),
        ("HMGET", "s", "a"), ("HDEL", "s", "a"), ("HLEN", "s"), ("HSTRLEN", "s", "a"), ("HEXISTS", "s", "a"),
        ("HKEYS", "s"), ("HVALS", "s"), ("HGETALL", "s"), ("HINCRBY", "s", "a", "1"),
        ("HINCRBYFLOAT", "s", "a", "1"), ("HRANDFIELD", "s"), ("HRANDFIELD", "s", "2"), ("HSCAN", "s", "0"),
    ]
    for call in calls:
        assert resp.call(*call) == WRONGTYPE, call
    assert resp.call("GET", "s") == b"v"


def test_hash_against_other_commands(resp):
    resp.call("HSET", "h", "a", "1")
    assert resp.call("TYPE", "h") == "hash"
    assert resp.call("GET", "h") == WRONGTYPE


# ------------------------------------------------------------ HDEL / HLEN / HSTRLEN / HEXISTS

@pytest.mark.parametrize("ht", [False, True])
def test_hdel(resp, ht):
    if ht:
        make_ht(resp)
    resp.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert resp.call("HDEL", "h", "a", "zz") == 1
    assert resp.call("HDEL", "h", "a") == 0
    assert resp.call("HDEL", "h", "b", "b") == 1
    assert resp.call("HLEN", "h") == 1
    # The hash is deleted with its last field, even with fields left to name.
    assert resp.call("HDEL", "h", "c", "x", "y") == 1
    assert resp.call("EXISTS", "h") == 0
    assert resp.call("HDEL", "nokey", "a") == 0


def test_hlen_hexists(resp):
    assert resp.call("HLEN", "nokey") == 0
    assert resp.call("HEXISTS", "nokey", "a") == 0
    resp.call("HSET", "h", "a", "1", "b", "2")
    assert resp.call("HLEN", "h") == 2
    assert resp.call("HEXISTS", "h", "a") == 1
    assert resp.call("HEXISTS", "h", "c") == 0


@pytest.mark.parametrize("ht", [False, True])
def test_hstrlen_corner_cases(resp, ht):
    if ht:
        make_ht(resp)
    for v in ["-9223372036854775808", "9223372036854775807", "9223372036854775808", "", "0", "-1", "x", "007",
              "12345678901234567890"]:
        resp.call("HSET", "h", "f", v)
        assert resp.call("HSTRLEN", "h", "f") == len(v), v
        assert resp.call("HGET", "h", "f") == v.encode()
    assert resp.call("HSTRLEN", "h", "nofield") == 0
    assert resp.call("HSTRLEN", "nokey", "f") == 0


def test_integer_like_fields_and_values(resp):
    # Listpack stores canonical integers as integers: replies must not change.
    resp.call("HSET", "h", "1", "100", "-5", "-7", "01", "02", "9223372036854775808", "1.5")
    assert pairs(resp.call("HGETALL", "h")) == {b"1": b"100", b"-5": b"-7", b"01": b"02",
                                                b"9223372036854775808": b"1.5"}
    assert resp.call("HGET", "h", "01") == b"02"
    assert resp.call("HEXISTS", "h", "1") == 1
    assert resp.call("HEXISTS", "h", "+1") == 0


# ------------------------------------------------------------ HKEYS / HVALS / HGETALL

@pytest.mark.parametrize("ht", [False, True])
def test_hgetall_hkeys_hvals(resp, ht):
    if ht:
        make_ht(resp)
    data = {b"f%d" % i: b"v%d" % i for i in range(20)}
    args = []
    for k, v in data.items():
        args += [k, v]
    resp.call("HSET", "h", *args)
    assert enc(resp, "h") == ("hashtable" if ht else "listpack")
    assert pairs(resp.call("HGETALL", "h")) == data
    assert sorted(resp.call("HKEYS", "h")) == sorted(data)
    assert sorted(resp.call("HVALS", "h")) == sorted(data.values())
    # Keys and values come in matching order.
    assert [data[k] for k in resp.call("HKEYS", "h")] == resp.call("HVALS", "h")


def test_hgetall_listpack_keeps_insertion_order(resp):
    resp.call("HSET", "h", "z", "1", "a", "2", "m", "3")
    assert resp.call("HGETALL", "h") == [b"z", b"1", b"a", b"2", b"m", b"3"]
    assert resp.call("HKEYS", "h") == [b"z", b"a", b"m"]


def test_hgetall_missing_key(resp):
    assert resp.call("HGETALL", "nokey") == []
    assert resp.call("HKEYS", "nokey") == []
    assert resp.call("HVALS", "nokey") == []


def test_hgetall_resp3_is_a_map(resp3):
    resp3.call("HSET", "h", "a", "1", "b", "2")
    assert resp3.call("HGETALL", "h") == {b"a": b"1", b"b": b"2"}
    assert resp3.call("HGETALL", "nokey") == {}
    assert sorted(resp3.call("HKEYS", "h")) == [b"a", b"b"]
    assert sorted(resp3.call("HVALS", "h")) == [b"1", b"2"]


def test_hgetall_resp_wire_shapes(server):
    from helpers import RawConn
    c = RawConn(server.port)
    try:
        c.send(b"FLUSHALL\r\n")
        assert c.recv_n(5) == b"+OK\r\n"
        assert c.request(b"HGETALL nokey\r\n", 4) == b"*0\r\n"
        c.send(b"HSET h a 1\r\n")
        assert c.recv_n(4) == b":1\r\n"
        assert c.request(b"HGETALL h\r\n", 18) == b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"
        c.send(b"HELLO 3\r\n")
        time.sleep(0.2)
        c.recv_n(1 << 16, timeout=0.3)
        assert c.request(b"HGETALL h\r\n", 18) == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
        assert c.request(b"HGETALL nokey\r\n", 4) == b"%0\r\n"
        assert c.request(b"HGET h zz\r\n", 3) == b"_\r\n"
    finally:
        c.close()


# ------------------------------------------------------------ HINCRBY / HINCRBYFLOAT

@pytest.mark.parametrize("ht", [False, True])
def test_hincrby(resp, ht):
    if ht:
        make_ht(resp)
    assert resp.call("HINCRBY", "h", "n", "2") == 2
    assert resp.call("HINCRBY", "h", "n", "-5") == -3
    resp.call("HSET", "h", "big", "17179869184")
    assert resp.call("HINCRBY", "h", "big", "17179869184") == 34359738368
    assert resp.call("HGET", "h", "big") == b"34359738368"
    for bad in (" 11", "11 ", "1.5", "abc", ""):
        resp.call("HSET", "h", "s", bad)
        assert resp.call("HINCRBY", "h", "s", "1") == ("error", "ERR hash value is not an integer")
    resp.call("HSET", "h", "m", "-9223372036854775484")
    assert resp.call("HINCRBY", "h", "m", "-1") == -9223372036854775485
    assert resp.call("HINCRBY", "h", "m", "-10000") == ("error", "ERR increment or decrement would overflow")
    resp.call("HSET", "h", "p", str(LLONG_MAX))
    assert resp.call("HINCRBY", "h", "p", "1") == ("error", "ERR increment or decrement would overflow")
    assert resp.call("HGET", "h", "p") == str(LLONG_MAX).encode()


def test_hincrby_bad_increment(resp):
    assert resp.call("HINCRBY", "h", "f", "x") == NOT_INT
    assert resp.call("HINCRBY", "h", "f", "9223372036854775808") == NOT_INT
    assert resp.call("EXISTS", "h") == 0
    # The increment is parsed before the key is looked at.
    resp.call("SET", "s", "v")
    assert resp.call("HINCRBY", "s", "f", "x") == NOT_INT
    assert resp.call("HINCRBYFLOAT", "s", "f", "x") == NOT_FLOAT


@pytest.mark.parametrize("ht", [False, True])
def test_hincrbyfloat(resp, ht):
    if ht:
        make_ht(resp)
    assert resp.call("HINCRBYFLOAT", "h", "f", "1.23") == b"1.23"
    assert resp.call("HINCRBYFLOAT", "h", "f", "0.77") == b"2"
    assert resp.call("HINCRBYFLOAT", "h", "f", "-0.1") == b"1.9"
    assert resp.call("HGET", "h", "f") == b"1.9"
    resp.call("HSET", "h", "i", "17179869184")
    assert resp.call("HINCRBYFLOAT", "h", "i", "17179869184") == b"34359738368"
    assert resp.call("HINCRBYFLOAT", "h", "e", "5.0e3") == b"5000"
    assert resp.call("HINCRBYFLOAT", "h", "z", "-0") == b"0"
    for bad in (" 11", "11 ", "abc", "1\x002", ""):
        resp.call("HSET", "h", "s", bad)
        assert resp.call("HINCRBYFLOAT", "h", "s", "1") == ("error", "ERR hash value is not a float"), bad


def test_hincrbyfloat_errors(resp):
    assert resp.call("HINCRBYFLOAT", "h", "f", "abc") == NOT_FLOAT
    for v in ("+inf", "-inf", "inf"):
        assert resp.call("HINCRBYFLOAT", "h", "f", v) == ("error", "ERR value is NaN or Infinity")
    assert resp.call("EXISTS", "h") == 0
    resp.call("HSET", "h", "f", "1e4932")
    assert resp.call("HINCRBYFLOAT", "h", "f", "1e4932") == \
        ("error", "ERR increment would produce NaN or Infinity")
    assert resp.call("HGET", "h", "f") == b"1e4932"


# ------------------------------------------------------------ encodings

def test_small_hash_is_listpack(resp):
    resp.call("HSET", "h", "a", "1")
    assert enc(resp, "h") == "listpack"
    assert resp.call("MEMORY", "USAGE", "h") > 0


def test_conversion_on_entries(resp):
    set_small_thresholds(resp, entries=4, value=64)
    for i in range(4):
        resp.call("HSET", "h", "f%d" % i, "v")
    assert enc(resp, "h") == "listpack"
    resp.call("HSET", "h", "f4", "v")
    assert enc(resp, "h") == "hashtable"
    assert resp.call("HLEN", "h") == 5
    # One command with more pairs than the limit converts before adding.
    assert resp.call("HSET", "h2", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5") == 5
    assert enc(resp, "h2") == "hashtable"
    # Never back to listpack, even when it shrinks.
    resp.call("HDEL", "h", "f0", "f1", "f2", "f3")
    assert enc(resp, "h") == "hashtable"
    assert resp.call("HGETALL", "h") == [b"f4", b"v"]


def test_conversion_on_value_and_field_length(resp):
    set_small_thresholds(resp, entries=128, value=8)
    resp.call("HSET", "a", "f", "12345678")
    assert enc(resp, "a") == "listpack"
    resp.call("HSET", "a", "f", "123456789")
    assert enc(resp, "a") == "hashtable"
    assert resp.call("HGET", "a", "f") == b"123456789"
    resp.call("HSET", "b", "abcdefghi", "v")
    assert enc(resp, "b") == "hashtable"
    resp.call("HSETNX", "c", "x", "v" * 9)
    assert enc(resp, "c") == "hashtable"
    resp.call("HMSET", "d", "x", "1", "y", "v" * 9)
    assert enc(resp, "d") == "hashtable"
    assert resp.call("HMGET", "d", "x", "y") == [b"1", b"v" * 9]


def test_conversion_by_hincrby_paths(resp):
    set_small_thresholds(resp, entries=128, value=8)
    resp.call("HSET", "small", "tmp", "0")
    resp.call("HSET", "big", "tmp", "0")
    assert resp.call("HINCRBYFLOAT", "small", "tmp", "0.000005") == b"0.000005"
    assert resp.call("HINCRBYFLOAT", "big", "tmp", "0.0000005") == b"0.0000005"
    assert enc(resp, "small") == "listpack"
    assert enc(resp, "big") == "hashtable"
    resp.call("HINCRBYFLOAT", "s2", "abcdefgh", "1")
    resp.call("HINCRBYFLOAT", "b2", "abcdefghi", "1")
    assert enc(resp, "s2") == "listpack"
    assert enc(resp, "b2") == "hashtable"
    resp.call("HINCRBY", "b3", "abcdefghi", "1")
    assert enc(resp, "b3") == "hashtable"
    set_small_thresholds(resp, entries=1, value=64)
    resp.call("HINCRBY", "b4", "x", "1")
    assert enc(resp, "b4") == "listpack"
    resp.call("HINCRBY", "b4", "y", "1")
    assert enc(resp, "b4") == "hashtable"
    assert resp.call("HMGET", "b4", "x", "y") == [b"1", b"1"]


def test_zero_entries_means_hashtable(resp):
    make_ht(resp)
    resp.call("HSET", "h", "a", "1")
    assert enc(resp, "h") == "hashtable"
    resp.call("HINCRBY", "h2", "a", "1")
    assert enc(resp, "h2") == "hashtable"


def test_conversion_keeps_every_field(resp):
    set_small_thresholds(resp, entries=32, value=64)
    want = {}
    for i in range(64):
        f, v = ("k%d" % i).encode(), (str(i * 7) if i % 2 else "val%d" % i).encode()
        want[f] = v
        resp.call("HSET", "h", f, v)
    assert enc(resp, "h") == "hashtable"
    assert pairs(resp.call("HGETALL", "h")) == want
    for f, v in want.items():
        assert resp.call("HGET", "h", f) == v


def test_big_hash_fuzz_against_model(resp):
    import random
    rnd = random.Random(7)
    model = {}
    for i in range(3000):
        f = str(rnd.randint(-300, 300)).encode() if rnd.random() < 0.5 else b"f%d" % rnd.randint(0, 400)
        op = rnd.random()
        if op < 0.6:
            v = rnd.choice([b"x" * rnd.randint(0, 80), str(rnd.randint(-10 ** 12, 10 ** 12)).encode()])
            assert resp.call("HSET", "h", f, v) == (0 if f in model else 1)
            model[f] = v
        elif op < 0.85:
            assert resp.call("HDEL", "h", f) == (1 if f in model else 0)
            model.pop(f, None)
        else:
            assert resp.call("HGET", "h", f) == model.get(f)
    assert resp.call("HLEN", "h") == len(model)
    assert pairs(resp.call("HGETALL", "h")) == model


def test_copy_rename_move_keep_hash(resp):
    resp.call("HSET", "h", "a", "1", "b", "2")
    assert resp.call("COPY", "h", "h2") == 1
    resp.call("HSET", "h", "a", "changed")
    assert resp.call("HGET", "h2", "a") == b"1"
    make_ht(resp)
    resp.call("HSET", "big", "x", "1")
    assert resp.call("COPY", "big", "big2") == 1
    assert enc(resp, "big2") == "hashtable"
    resp.call("HDEL", "big", "x")
    assert resp.call("HGETALL", "big2") == [b"x", b"1"]
    assert resp.call("RENAME", "big2", "big3") == "OK"
    assert resp.call("HGET", "big3", "x") == b"1"
    assert resp.call("MOVE", "big3", "1") == 1
    assert resp.call("EXISTS", "big3") == 0


def test_key_ttl_survives_hash_writes(resp):
    resp.call("HSET", "h", "a", "1")
    assert resp.call("EXPIRE", "h", "100") == 1
    resp.call("HSET", "h", *["f%d" % i for i in range(40)])
    resp.call("HINCRBY", "h", "n", "5")
    resp.call("HDEL", "h", "a", "f0")
    assert 0 < resp.call("TTL", "h") <= 100
    assert resp.call("HLEN", "h") == 20
    assert resp.call("PERSIST", "h") == 1
    resp.call("HSET", "h", "big", "x" * 100)
    assert enc(resp, "h") == "hashtable"
    assert resp.call("TTL", "h") == -1
    assert resp.call("PEXPIRE", "h", "50") == 1
    time.sleep(0.1)
    assert resp.call("EXISTS", "h") == 0


def test_keyspace_hits_and_misses(r):
    r.config_resetstat()
    r.hset("h", "a", "1")          # write lookups do not count
    r.hincrby("h", "n", 1)
    r.hget("h", "a")               # hit
    r.hget("nokey", "a")           # miss
    r.hgetall("h")                 # hit
    r.hlen("nokey")                # miss
    st = r.info("stats")
    assert (st["keyspace_hits"], st["keyspace_misses"]) == (2, 2)


# ------------------------------------------------------------ HRANDFIELD

def test_hrandfield_single(resp):
    assert resp.call("HRANDFIELD", "nokey") is None
    resp.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    seen = set(resp.call("HRANDFIELD", "h") for _ in range(100))
    assert seen == {b"a", b"b", b"c"}


def test_hrandfield_single_hashtable(resp):
    make_ht(resp)
    resp.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    seen = set(resp.call("HRANDFIELD", "h") for _ in range(100))
    assert seen == {b"a", b"b", b"c"}


def test_hrandfield_count_errors(resp):
    resp.call("HSET", "h", "a", "1")
    assert resp.call("HRANDFIELD", "h", "x") == NOT_INT
    assert resp.call("HRANDFIELD", "h", "-9223372036854770000", "withvalues") == ("error", "ERR value is out of range")
    assert resp.call("HRANDFIELD", "h", str(LLONG_MIN), "withvalues")[1].startswith("ERR value is out of range")
    assert resp.call("HRANDFIELD", "h", str(LLONG_MIN)) == \
        ("error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert resp.call("HRANDFIELD", "h", "1", "withscores") == SYNTAX
    assert resp.call("HRANDFIELD", "h", "1", "withvalues", "x") == SYNTAX
    # Count errors come before the key lookup; then missing keys answer empty.
    assert resp.call("HRANDFIELD", "nokey", "x") == NOT_INT
    assert resp.call("HRANDFIELD", "nokey", "5") == []
    assert resp.call("HRANDFIELD", "nokey", "-5", "withvalues") == []


def test_hrandfield_zero_is_empty_array(server):
    from helpers import RawConn
    c = RawConn(server.port)
    try:
        c.send(b"HSET myh a 1\r\n")
        c.recv_n(4)
        assert c.request(b"HRANDFIELD myh 0\r\n", 4) == b"*0\r\n"
        assert c.request(b"HRANDFIELD nokey 100\r\n", 4) == b"*0\r\n"
        assert c.request(b"HRANDFIELD nokey\r\n", 5) == b"$-1\r\n"
    finally:
        c.close()


def _fill(resp, key, n, long_field=False):
    args = []
    for i in range(n):
        f = "f%d" % i
        if long_field and i == n - 1:
            f = "x" * 80
        args += [f, "v%d" % i]
    resp.call("HSET", key, *args)
    return pairs(args)


@pytest.mark.parametrize("kind", ["listpack", "hashtable"])
def test_hrandfield_count_properties(resp, kind):
    data = _fill(resp, "h", 10, long_field=kind == "hashtable")
    data = {k.encode(): v.encode() for k, v in data.items()}
    assert enc(resp, "h") == kind
    # Negative count: exactly |count| picks, repeats allowed.
    res = resp.call("HRANDFIELD", "h", "-25")
    assert len(res) == 25 and set(res) <= set(data)
    assert len(set(res)) < 25
    res = resp.call("HRANDFIELD", "h", "-1001", "withvalues")
    assert len(res) == 2002
    for f, v in zip(res[0::2], res[1::2]):
        assert data[f] == v
    # A large sample is roughly uniform.
    counts = {}
    for f in resp.call("HRANDFIELD", "h", "-5000"):
        counts[f] = counts.get(f, 0) + 1
    assert set(counts) == set(data) and min(counts.values()) > 300
    # Positive count: distinct, capped at the size.
    for n in (10, 20):
        res = resp.call("HRANDFIELD", "h", str(n))
        assert sorted(res) == sorted(data)
        res = resp.call("HRANDFIELD", "h", str(n), "WITHVALUES")
        assert pairs(res) == data
    for n in (8, 2, 1):
        seen = set()
        for _ in range(200):
            res = resp.call("HRANDFIELD", "h", str(n))
            assert len(res) == n and len(set(res)) == n and set(res) <= set(data)
            seen |= set(res)
            res = resp.call("HRANDFIELD", "h", str(n), "withvalues")
            assert len(res) == 2 * n
            assert all(data[f] == v for f, v in zip(res[0::2], res[1::2]))
        assert seen == set(data)


def test_hrandfield_large_hashtable(resp):
    make_ht(resp)
    args = []
    for i in range(1000):
        args += ["f%d" % i, str(i)]
    resp.call("HSET", "h", *args)
    for n in (5, 100, 400, 999, 1000, 5000):
        res = resp.call("HRANDFIELD", "h", str(n), "withvalues")
        fields = res[0::2]
        assert len(fields) == min(n, 1000) and len(set(fields)) == len(fields)
        assert all(int(v) == int(f[1:]) for f, v in zip(fields, res[1::2]))


def test_hrandfield_resp3_pairs(resp3):
    resp3.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    res = resp3.call("HRANDFIELD", "h", "3", "withvalues")
    assert len(res) == 3 and all(isinstance(p, list) and len(p) == 2 for p in res)
    assert {p[0]: p[1] for p in res} == {b"a": b"1", b"b": b"2", b"c": b"3"}
    res = resp3.call("HRANDFIELD", "h", "-5", "withvalues")
    assert len(res) == 5 and all(len(p) == 2 for p in res)
    res = resp3.call("HRANDFIELD", "h", "2")
    assert len(res) == 2 and all(isinstance(x, bytes) for x in res)
    assert resp3.call("HRANDFIELD", "nokey") is None
    assert resp3.call("HRANDFIELD", "nokey", "2", "withvalues") == []


# ------------------------------------------------------------ HSCAN

def test_hscan_listpack_returns_all_at_once(resp):
    resp.call("HSET", "h", "a", "1", "b", "2", "c", "3", "7", "8")
    cur, items = resp.call("HSCAN", "h", "0")
    assert cur == b"0" and pairs(items) == {b"a": b"1", b"b": b"2", b"c": b"3", b"7": b"8"}
    cur, items = resp.call("HSCAN", "h", "123", "COUNT", "1")
    assert cur == b"0" and len(items) == 8
    cur, items = resp.call("HSCAN", "h", "0", "MATCH", "[ab]")
    assert pairs(items) == {b"a": b"1", b"b": b"2"}
    cur, items = resp.call("HSCAN", "h", "0", "MATCH", "7")
    assert items == [b"7", b"8"]


def test_hscan_missing_key_and_errors(r, resp):
    assert resp.call("HSCAN", "nokey", "0") == [b"0", []]
    # Options are not even parsed for a missing key.
    assert resp.call("HSCAN", "nokey", "0", "COUNT", "0") == [b"0", []]
    resp.call("HSET", "h", "a", "1")
    assert resp.call("HSCAN", "h", "x") == ("error", "ERR invalid cursor")
    if not IS_REDIS or server_version(r) >= (7, 4, 0):
        # 7.0 parsed the cursor with strtoul (wrapping "-1"); 7.4 refuses it.
        assert resp.call("HSCAN", "h", "-1") == ("error", "ERR invalid cursor")
    assert resp.call("HSCAN", "h", "0", "COUNT", "0") == SYNTAX
    assert resp.call("HSCAN", "h", "0", "COUNT", "x") == NOT_INT
    assert resp.call("HSCAN", "h", "0", "COUNT") == SYNTAX
    assert resp.call("HSCAN", "h", "0", "MATCH") == SYNTAX
    assert resp.call("HSCAN", "h", "0", "TYPE", "hash") == SYNTAX
    assert resp.call("HSCAN", "h", "0", "BOGUS", "1") == SYNTAX
    assert resp.call("HSCAN", "h", "18446744073709551615")[0] == b"0"


@pytest.mark.parametrize("count", [1, 10, 100])
def test_hscan_hashtable_full_iteration(resp, count):
    args = []
    for i in range(1000):
        args += ["field:%d" % i, "v%d" % i]
    resp.call("HSET", "h", *args)
    assert enc(resp, "h") == "hashtable"
    seen = {}
    cur = b"0"
    calls = 0
    while True:
        cur, items = resp.call("HSCAN", "h", cur, "COUNT", count)
        calls += 1
        for f, v in zip(items[0::2], items[1::2]):
            seen[f] = v
        if cur == b"0":
            break
    assert len(seen) == 1000
    assert all(seen[b"field:%d" % i] == b"v%d" % i for i in range(1000))
    if count == 1:
        assert calls > 100


def test_hscan_hashtable_match(resp):
    args = []
    for i in range(500):
        args += ["k%d" % i, "v"]
    resp.call("HSET", "h", *args)
    found = set()
    cur = b"0"
    while True:
        cur, items = resp.call("HSCAN", "h", cur, "MATCH", "k1?", "COUNT", 50)
        found |= set(items[0::2])
        if cur == b"0":
            break
    assert found == {b"k%d" % i for i in range(10, 20)}


def test_hscan_novalues(r, resp):
    if IS_REDIS and server_version(r) < (7, 4, 0):
        pytest.skip("HSCAN NOVALUES is Redis 7.4")
    resp.call("HSET", "h", "a", "1", "b", "2")
    cur, items = resp.call("HSCAN", "h", "0", "NOVALUES")
    assert cur == b"0" and sorted(items) == [b"a", b"b"]
    make_ht(resp)
    resp.call("HSET", "big", "a", "1", "b", "2")
    cur, items = resp.call("HSCAN", "big", "0", "COUNT", "100", "novalues")
    assert sorted(items) == [b"a", b"b"]


def test_hscan_resp3_shape(resp3):
    resp3.call("HSET", "h", "a", "1")
    assert resp3.call("HSCAN", "h", "0") == [b"0", [b"a", b"1"]]


# ------------------------------------------------------------ COMMAND metadata

def test_command_info_rows(resp):
    rows = {
        "hset": (-4, {"write", "denyoom", "fast"}),
        "hget": (3, {"readonly", "fast"}),
        "hgetall": (2, {"readonly"}),
        "hrandfield": (-2, {"readonly"}),
        "hscan": (-3, {"readonly"}),
        "hincrbyfloat": (4, {"write", "denyoom", "fast"}),
        "hdel": (-3, {"write", "fast"}),
    }
    for name, (ar, flags) in rows.items():
        info = resp.call("COMMAND", "INFO", name)[0]
        assert info[0] == name.encode()
        assert info[1] == ar
        assert set(info[2]) == flags
        assert info[3:6] == [1, 1, 1]


# ------------------------------------------------------------ field expiry (Redis 7.4)

HFE = ("HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT")


def now_ms():
    return int(time.time() * 1000)


def both_kinds(resp, kind):
    if kind == "hashtable":
        make_ht(resp)


KINDS = ["listpackex", "hashtable"]


@requires("HEXPIRE", "HTTL", "HPERSIST")
def test_hfe_missing_key(resp):
    for cmd in HFE:
        assert resp.call(cmd, "nokey", "100", "FIELDS", "2", "a", "b") == [-2, -2]
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
        assert resp.call(cmd, "nokey", "FIELDS", "1", "a") == [-2]
    assert resp.call("EXISTS", "nokey") == 0


@requires("HEXPIRE", "HTTL", "HPERSIST")
def test_hfe_argument_errors(resp):
    resp.call("HSET", "h", "f1", "v1")
    e = lambda msg: ("error", msg)  # noqa: E731
    assert resp.call("HEXPIRE", "h", "-1", "FIELDS", "1", "f1") == e("ERR invalid expire time, must be >= 0")
    assert resp.call("HPEXPIRE", "h", str(LLONG_MIN), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time, must be >= 0")
    assert resp.call("HEXPIRE", "h", str((1 << 48) // 1000), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time in 'hexpire' command")
    assert resp.call("HEXPIREAT", "h", str((1 << 48) // 1000 + int(time.time()) + 100), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time in 'hexpireat' command")
    assert resp.call("HPEXPIRE", "h", str(1 << 48), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time in 'hpexpire' command")
    assert resp.call("HPEXPIREAT", "h", str((1 << 48) + now_ms() + 100), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time in 'hpexpireat' command")
    # The limit is 2^46 ms of absolute time.
    assert resp.call("HPEXPIRE", "h", str((1 << 46) - now_ms() - 10000), "FIELDS", "1", "f1") == [1]
    assert resp.call("HPEXPIRE", "h", str((1 << 46) - now_ms() + 10000), "FIELDS", "1", "f1") == \
        e("ERR invalid expire time in 'hpexpire' command")
    assert resp.call("HEXPIRE", "h", "x", "FIELDS", "1", "f1") == NOT_INT
    assert resp.call("HEXPIRE", "h", "10", "FIELDS", "0", "f1") == \
        e("ERR Parameter `numFields` should be greater than 0")
    assert resp.call("HEXPIRE", "h", "10", "NX", "FIELDS", "x", "f1") == \
        e("ERR Parameter `numFields` should be greater than 0")
    assert resp.call("HPEXPIRE", "h", "1000", "NX", "FIELDS", "4", "f1", "f2", "f3") == \
        e("ERR The `numfields` parameter must match the number of arguments")
    assert resp.call("HPEXPIRE", "h", "1000", "NX", "FIELDS", "2", "f1", "f2", "f3") == \
        e("ERR The `numfields` parameter must match the number of arguments")
    assert resp.call("HEXPIRE", "h", "10", "FIELD", "1", "f1") == \
        e("ERR Mandatory argument FIELDS is missing or not at the right position")
    assert resp.call("HEXPIRE", "h", "10", "XY", "FIELDS", "1", "f1") == \
        e("ERR Mandatory argument FIELDS is missing or not at the right position")
    assert resp.call("HEXPIRE", "h", "10", "FIELDS", "1") == arity_error("hexpire")
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
        assert resp.call(cmd, "h", "FIELDS", "1") == arity_error(cmd.lower())
        assert resp.call(cmd, "h", "FIELDS", "0", "f1") == e("ERR Number of fields must be a positive integer")
        assert resp.call(cmd, "h", "FIELDS", "3", "a", "b") == \
            e("ERR The `numfields` parameter must match the number of arguments")
        assert resp.call(cmd, "h", "FIELDS", "1", "a", "b") == \
            e("ERR The `numfields` parameter must match the number of arguments")
        assert resp.call(cmd, "h", "FIELDX", "1", "a") == \
            e("ERR Mandatory argument FIELDS is missing or not at the right position")
    resp.call("SET", "s", "v")
    for cmd in HFE:
        assert resp.call(cmd, "s", "10", "FIELDS", "1", "a") == WRONGTYPE
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
        assert resp.call(cmd, "s", "FIELDS", "1", "a") == WRONGTYPE


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_conditions(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "field1", "value1", "field2", "value2", "field3", "value3")
    assert resp.call("HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "field1") == [1]
    assert resp.call("HPEXPIRE", "h", "100000", "NX", "FIELDS", "2", "field1", "field2") == [0, 1]
    assert enc(resp, "h") == kind
    # XX: only fields that have a TTL.
    assert resp.call("HPEXPIRE", "h", "100000", "XX", "FIELDS", "2", "field1", "field3") == [1, 0]
    # GT: only a later time; a field without TTL counts as infinite.
    resp.call("DEL", "h")
    resp.call("HSET", "h", "field1", "value1", "field2", "value2", "field3", "v")
    assert resp.call("HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "field1") == [1]
    assert resp.call("HPEXPIRE", "h", "200000", "NX", "FIELDS", "1", "field2") == [1]
    assert resp.call("HPEXPIRE", "h", "150000", "GT", "FIELDS", "3", "field1", "field2", "field3") == [1, 0, 0]
    # LT: only an earlier time; a field without TTL accepts any.
    assert resp.call("HPEXPIRE", "h", "120000", "LT", "FIELDS", "3", "field1", "field2", "field3") == [1, 1, 1]
    t = resp.call("HPTTL", "h", "FIELDS", "3", "field1", "field2", "field3")
    assert all(110000 < x <= 120000 for x in t)
    # Equal times fail both GT and LT.
    at = now_ms() + 500000
    resp.call("HPEXPIREAT", "h", str(at), "FIELDS", "1", "field1")
    assert resp.call("HPEXPIREAT", "h", str(at), "GT", "FIELDS", "1", "field1") == [0]
    assert resp.call("HPEXPIREAT", "h", str(at), "LT", "FIELDS", "1", "field1") == [0]
    assert resp.call("HPEXPIRETIME", "h", "FIELDS", "1", "field1") == [at]
    # Options are case-insensitive.
    assert resp.call("hpexpire", "h", "100000", "xx", "fields", "1", "field1") == [1]


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_time_in_past_deletes(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "f1", "v1", "f2", "v2", "f4", "v4")
    resp.call("HEXPIRE", "h", "1000", "NX", "FIELDS", "1", "f4")
    past = (int(time.time()) - 1) * 1000
    assert resp.call("HPEXPIREAT", "h", str(past), "NX", "FIELDS", "4", "f1", "f2", "f3", "f4") == [2, 2, -2, 0]
    assert resp.call("HEXISTS", "h", "f1") == 0
    assert resp.call("HLEN", "h") == 1
    assert resp.call("HEXPIREAT", "h", "0", "FIELDS", "1", "f4") == [2]
    assert resp.call("EXISTS", "h") == 0
    # The key goes with its last field even mid-command.
    resp.call("HSET", "h2", "a", "1")
    assert resp.call("HEXPIRE", "h2", "0", "FIELDS", "3", "a", "a", "b") == [2, -2, -2]
    assert resp.call("EXISTS", "h2") == 0


@requires("HEXPIRE", "HTTL")
@pytest.mark.parametrize("kind", KINDS)
def test_httl_family(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "field1", "value1", "field2", "value2")
    assert resp.call("HTTL", "h", "FIELDS", "1", "field1") == [-1]
    resp.call("HPEXPIRE", "h", "2000", "NX", "FIELDS", "1", "field1")
    assert resp.call("HTTL", "h", "FIELDS", "3", "field1", "field2", "nofield") in ([2, -1, -2], [1, -1, -2])
    pttl = resp.call("HPTTL", "h", "FIELDS", "1", "field1")[0]
    assert 1000 < pttl <= 2000
    # HTTL rounds up: 1500 ms left is 2 s.
    resp.call("HPEXPIRE", "h", "1500", "FIELDS", "1", "field1")
    assert resp.call("HTTL", "h", "FIELDS", "1", "field1") == [2]
    at = now_ms() + 100000
    resp.call("HPEXPIREAT", "h", str(at), "FIELDS", "1", "field2")
    assert resp.call("HPEXPIRETIME", "h", "FIELDS", "1", "field2") == [at]
    assert resp.call("HEXPIRETIME", "h", "FIELDS", "1", "field2") == [(at + 999) // 1000]
    resp.call("HEXPIREAT", "h", str(int(time.time()) + 100), "FIELDS", "1", "field1")
    assert resp.call("HEXPIRETIME", "h", "FIELDS", "1", "field1") == [int(time.time()) + 100]


@requires("HEXPIRE", "HTTL")
def test_httl_resp3(resp3):
    resp3.call("HSET", "h", "a", "1")
    resp3.call("HEXPIRE", "h", "100", "FIELDS", "1", "a")
    assert resp3.call("HTTL", "h", "FIELDS", "2", "a", "b") == [100, -2]
    assert resp3.call("HPERSIST", "h", "FIELDS", "1", "a") == [1]


@requires("HEXPIRE", "HPERSIST")
@pytest.mark.parametrize("kind", KINDS)
def test_hpersist(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "f1", "v1", "f2", "v2")
    resp.call("HEXPIRE", "h", "1000", "NX", "FIELDS", "1", "f1")
    assert resp.call("HPERSIST", "h", "FIELDS", "2", "f1", "nofield") == [1, -2]
    assert resp.call("HPERSIST", "h", "FIELDS", "1", "f2") == [-1]
    assert resp.call("HPERSIST", "h", "FIELDS", "1", "f1") == [-1]
    assert resp.call("HTTL", "h", "FIELDS", "2", "f1", "f2") == [-1, -1]
    resp.call("HPEXPIRE", "h", "30", "FIELDS", "2", "f1", "f2")
    assert resp.call("HPERSIST", "h", "FIELDS", "2", "f1", "f2") == [1, 1]
    time.sleep(0.06)
    assert resp.call("HGETALL", "h") == [b"f1", b"v1", b"f2", b"v2"] or \
        pairs(resp.call("HGETALL", "h")) == {b"f1": b"v1", b"f2": b"v2"}
    # A listpack hash stays listpackex once it had TTLs.
    assert enc(resp, "h") == kind


@requires("HEXPIRE")
def test_hfe_encodings(resp):
    resp.call("HSET", "h", "a", "1", "b", "2")
    assert enc(resp, "h") == "listpack"
    # HEXPIRE on an existing listpack hash converts it, whatever the outcome.
    assert resp.call("HEXPIRE", "h", "100", "FIELDS", "1", "zz") == [-2]
    assert enc(resp, "h") == "listpackex"
    resp.call("HEXPIRE", "h", "100", "FIELDS", "1", "a")
    assert enc(resp, "h") == "listpackex"
    # listpackex converts to hashtable with its TTLs.
    set_small_thresholds(resp, entries=4, value=64)
    resp.call("HSET", "h", "c", "3", "d", "4", "e", "5")
    assert enc(resp, "h") == "hashtable"
    assert resp.call("HTTL", "h", "FIELDS", "2", "a", "b") == [100, -1]
    # Too long a value converts too, keeping TTLs.
    set_small_thresholds(resp, entries=128, value=8)
    resp.call("HSET", "h2", "a", "1", "b", "2")
    resp.call("HEXPIRE", "h2", "100", "FIELDS", "1", "b")
    resp.call("HSET", "h2", "c", "x" * 20)
    assert enc(resp, "h2") == "hashtable"
    assert resp.call("HTTL", "h2", "FIELDS", "3", "a", "b", "c") == [-1, 100, -1]


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_lazy_expire(resp, kind):
    both_kinds(resp, kind)
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    resp.call("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3")
    resp.call("HPEXPIRE", "h", "1", "NX", "FIELDS", "3", "f1", "f2", "f3")
    time.sleep(0.02)
    assert resp.call("EXISTS", "h") == 1
    # HLEN counts fields not yet removed, as Redis does.
    assert resp.call("HLEN", "h") == 3
    assert resp.call("HEXISTS", "h", "f1") == 0
    assert resp.call("HLEN", "h") == 2
    assert resp.call("HGET", "h", "f2") is None
    assert resp.call("HLEN", "h") == 1
    assert resp.call("HSTRLEN", "h", "f3") == 0
    assert resp.call("HLEN", "h") == 0
    assert resp.call("EXISTS", "h") == 0


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_expired_fields_are_invisible(resp, kind):
    both_kinds(resp, kind)
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    resp.call("HSET", "h", "01", "01", "02", "02", "03", "03", "04", "04", "05", "05", "06", "06")
    resp.call("HPEXPIRE", "h", "1", "FIELDS", "2", "02", "05")
    resp.call("HPEXPIRE", "h", "100000", "FIELDS", "1", "06")
    time.sleep(0.02)
    assert sorted(resp.call("HKEYS", "h")) == [b"01", b"03", b"04", b"06"]
    assert sorted(resp.call("HVALS", "h")) == [b"01", b"03", b"04", b"06"]
    assert pairs(resp.call("HGETALL", "h")) == {b"01": b"01", b"03": b"03", b"04": b"04", b"06": b"06"}
    cur, items = resp.call("HSCAN", "h", "0", "COUNT", "100")
    assert pairs(items) == {b"01": b"01", b"03": b"03", b"04": b"04", b"06": b"06"}
    assert resp.call("HMGET", "h", "01", "02", "06") == [b"01", None, b"06"]
    assert resp.call("HTTL", "h", "FIELDS", "2", "05", "04") == [-2, -1]
    assert resp.call("HPERSIST", "h", "FIELDS", "1", "05") == [-2]
    assert resp.call("HEXPIRE", "h", "100", "FIELDS", "1", "05") == [-2]
    # HDEL removes an expired field like a live one (and counts it).
    resp.call("HPEXPIRE", "h", "1", "FIELDS", "1", "03")
    time.sleep(0.02)
    assert resp.call("HDEL", "h", "03") == 1


@requires("HEXPIRE")
def test_hfe_hgetall_large_mostly_expired(resp):
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(1, 601):
        resp.call("HSET", "h", "f%d" % i, "v%d" % i)
        if i > 3:
            resp.call("HPEXPIRE", "h", "1", "NX", "FIELDS", "1", "f%d" % i)
    time.sleep(0.02)
    assert enc(resp, "h") == "hashtable"
    assert pairs(resp.call("HGETALL", "h")) == {b"f1": b"v1", b"f2": b"v2", b"f3": b"v3"}
    # A scan never returns an expired field.
    cur, seen = b"0", set()
    while True:
        cur, items = resp.call("HSCAN", "h", cur)
        seen |= set(items[0::2])
        if cur == b"0":
            break
    assert seen == {b"f1", b"f2", b"f3"}


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_hrandfield_drops_expired(resp, kind):
    both_kinds(resp, kind)
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    resp.call("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3", "f4", "v4", "f5", "v5")
    resp.call("HPEXPIRE", "h", "1", "FIELDS", "2", "f1", "f2")
    time.sleep(0.02)
    assert sorted(resp.call("HRANDFIELD", "h", "5")) == [b"f3", b"f4", b"f5"]
    assert resp.call("HLEN", "h") == 3
    resp.call("HPEXPIRE", "h", "1", "FIELDS", "3", "f3", "f4", "f5")
    time.sleep(0.02)
    assert resp.call("HRANDFIELD", "h", "5") == []
    assert resp.call("EXISTS", "h") == 0
    resp.call("HSET", "h", "a", "1")
    resp.call("HPEXPIRE", "h", "1", "FIELDS", "1", "a")
    time.sleep(0.02)
    assert resp.call("HRANDFIELD", "h") is None
    assert resp.call("EXISTS", "h") == 0


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_active_expire(resp, kind):
    both_kinds(resp, kind)
    for n in (1, 15, 17, 40):
        for i in range(1, n + 1):
            resp.call("HSET", "same%d" % n, "f%d" % i, "v")
            resp.call("HPEXPIRE", "same%d" % n, "100", "FIELDS", "1", "f%d" % i)
            resp.call("HSET", "mix%d" % n, "f%d" % i, "v", "keep%d" % i, "v")
            resp.call("HPEXPIRE", "mix%d" % n, "100", "FIELDS", "1", "f%d" % i)
    assert wait_until(lambda: resp.call("EXISTS", "same1", "same15", "same17", "same40") == 0, timeout=5)
    # HLEN counts unremoved fields: it drops only when the sweeper removed them.
    for n in (1, 15, 17, 40):
        assert wait_until(lambda: resp.call("HLEN", "mix%d" % n) == n, timeout=5)
        assert resp.call("HEXISTS", "mix%d" % n, "f1") == 0


@requires("HEXPIRE")
def test_hfe_active_expire_big_hash(resp):
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(1024):
        resp.call("HSET", "h", "a%d" % i, "v", "b%d" % i, "v", "c%d" % i, "v", "d%d" % i, "v")
        resp.call("HPEXPIRE", "h", "10", "FIELDS", "4", "a%d" % i, "b%d" % i, "c%d" % i, "d%d" % i)
    assert enc(resp, "h") == "hashtable"
    assert resp.call("HLEN", "h") == 4096
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    assert wait_until(lambda: resp.call("EXISTS", "h") == 0, timeout=5)


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_hset_clears_ttl_of_that_field_only(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "field1", "value1", "field2", "value2", "field3", "value3")
    resp.call("HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "field1")
    resp.call("HPEXPIRE", "h", "50", "NX", "FIELDS", "1", "field2")
    assert resp.call("HSET", "h", "field2", "value4") == 0
    time.sleep(0.1)
    assert resp.call("HGET", "h", "field2") == b"value4"
    assert resp.call("HTTL", "h", "FIELDS", "2", "field2", "field3") == [-1, -1]
    assert resp.call("HTTL", "h", "FIELDS", "1", "field1")[0] > 0
    # Return values of HSET are not affected by TTLs of other fields.
    assert resp.call("HSET", "h", "field3", "x") == 0
    assert resp.call("HSET", "h", "f4", "x", "f5", "y") == 2
    assert resp.call("HTTL", "h", "FIELDS", "1", "field1")[0] > 0


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_hincrby_keeps_ttl_and_resets_expired(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "f1", "10", "f2", "2.5")
    resp.call("HPEXPIRE", "h", "100000", "FIELDS", "2", "f1", "f2")
    assert resp.call("HINCRBY", "h", "f1", "2") == 12
    assert resp.call("HINCRBYFLOAT", "h", "f2", "1") == b"3.5"
    assert all(x > 90000 for x in resp.call("HPTTL", "h", "FIELDS", "2", "f1", "f2"))
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    resp.call("HSET", "g", "f1", "10", "f2", "10", "keep", "1")
    resp.call("HPEXPIRE", "g", "1", "FIELDS", "2", "f1", "f2")
    time.sleep(0.02)
    assert resp.call("HINCRBY", "g", "f1", "1") == 1
    assert resp.call("HINCRBYFLOAT", "g", "f2", "1") == b"1"
    assert resp.call("HTTL", "g", "FIELDS", "2", "f1", "f2") == [-1, -1]
    # An expired field does not block HSETNX.
    resp.call("HPEXPIRE", "g", "1", "FIELDS", "1", "keep")
    time.sleep(0.02)
    assert resp.call("HSETNX", "g", "keep", "new") == 1
    assert resp.call("HGET", "g", "keep") == b"new"
    # The key itself may go and come back within one command.
    resp.call("HSET", "one", "n", "5")
    resp.call("HPEXPIRE", "one", "1", "FIELDS", "1", "n")
    time.sleep(0.02)
    assert resp.call("HINCRBY", "one", "n", "3") == 3
    assert resp.call("HGETALL", "one") == [b"n", b"3"]


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_rename_copy_move_keep_ttls(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h", "f1", "v1", "f2", "v2")
    resp.call("HPEXPIRE", "h", "100000", "FIELDS", "1", "f1")
    assert resp.call("RENAME", "h", "h2") == "OK"
    assert 0 < resp.call("HPTTL", "h2", "FIELDS", "1", "f1")[0] <= 100000
    assert resp.call("COPY", "h2", "h3") == 1
    assert 0 < resp.call("HPTTL", "h3", "FIELDS", "1", "f1")[0] <= 100000
    assert resp.call("HPTTL", "h3", "FIELDS", "1", "f2") == [-1]
    assert enc(resp, "h3") == kind
    assert resp.call("MOVE", "h3", "1") == 1
    resp.call("SELECT", "1")
    assert 0 < resp.call("HPTTL", "h3", "FIELDS", "1", "f1")[0] <= 100000
    resp.call("FLUSHDB")
    resp.call("SELECT", "0")


@requires("HEXPIRE")
@pytest.mark.parametrize("kind", KINDS)
def test_hfe_copies_expire_actively(resp, kind):
    both_kinds(resp, kind)
    resp.call("HSET", "h1", "f1", "v1")
    resp.call("HPEXPIRE", "h1", "100", "FIELDS", "1", "f1")
    assert resp.call("COPY", "h1", "h1copy") == 1
    assert resp.call("RENAME", "h1", "h1ren") == "OK"
    # Neither key is touched again: only the sweeper can remove them.
    assert wait_until(lambda: resp.call("EXISTS", "h1copy", "h1ren") == 0, timeout=5)


@requires("HEXPIRE")
def test_hfe_swapdb_and_flush(resp):
    resp.call("SELECT", "9")
    resp.call("HSET", "h", "f", "v")
    resp.call("HPEXPIRE", "h", "50", "FIELDS", "1", "f")
    resp.call("SWAPDB", "9", "10")
    assert resp.call("EXISTS", "h") == 0
    resp.call("SELECT", "10")
    assert resp.call("HGET", "h", "f") == b"v"
    assert wait_until(lambda: resp.call("EXISTS", "h") == 0, timeout=5)
    resp.call("HSET", "h", "f1", "v1", "f2", "v2")
    resp.call("HPEXPIRE", "h", "10000", "FIELDS", "2", "f1", "f2")
    resp.call("FLUSHALL")
    resp.call("HSET", "h", "f1", "v1")
    resp.call("HPEXPIRE", "h", "10000", "FIELDS", "1", "f1")
    resp.call("FLUSHALL", "ASYNC")
    resp.call("SELECT", "0")


@requires("HEXPIRE")
def test_hfe_large_values_move_in_listpack(resp):
    resp.call("CONFIG", "SET", "hash-max-listpack-value", "4096")
    p1, p2 = "v3" * 1024, "v1" * 1024
    resp.call("HSET", "h", "f1", p1)
    resp.call("HEXPIRE", "h", "2000", "FIELDS", "1", "f1")
    assert resp.call("HGET", "h", "f1") == p1.encode()
    resp.call("DEL", "h")
    resp.call("HSET", "h", "f1", p2, "f2", "v2", "f3", p1, "f4", "v4")
    assert enc(resp, "h") == "listpack"
    resp.call("HEXPIRE", "h", "100000", "FIELDS", "1", "f3")
    assert resp.call("HPERSIST", "h", "FIELDS", "1", "f3") == [1]
    assert resp.call("HPERSIST", "h", "FIELDS", "1", "f3") == [-1]
    resp.call("HPEXPIRE", "h", "10", "FIELDS", "1", "f1")
    time.sleep(0.05)
    assert pairs(resp.call("HGETALL", "h")) == {b"f2": b"v2", b"f3": p1.encode(), b"f4": b"v4"}


@requires("HEXPIRE")
def test_hfe_listpackex_field_order(resp):
    # Fields with a TTL lead in TTL order; a new TTL goes before equal ones.
    resp.call("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
    resp.call("HEXPIRE", "h", "100", "FIELDS", "2", "c", "a")
    assert resp.call("HKEYS", "h") == [b"a", b"c", b"b", b"d"]
    resp.call("HEXPIRE", "h", "50", "FIELDS", "1", "d")
    assert resp.call("HKEYS", "h") == [b"d", b"a", b"c", b"b"]
    resp.call("HPERSIST", "h", "FIELDS", "1", "d")
    assert resp.call("HKEYS", "h") == [b"a", b"c", b"b", b"d"]
    resp.call("HSET", "h", "e", "5", "a", "9")
    assert resp.call("HKEYS", "h") == [b"c", b"b", b"d", b"e", b"a"]
    assert resp.call("HTTL", "h", "FIELDS", "2", "a", "c") == [-1, 100]


@requires("HEXPIRE")
def test_hfe_many_fields_random_model(resp):
    """Random TTL updates against a model, across the listpackex ->
    hashtable conversion."""
    import random
    rnd = random.Random(11)
    resp.call("CONFIG", "SET", "hash-max-listpack-entries", "40")
    model = {}
    base = now_ms() + 1000000
    for step in range(600):
        f = "f%d" % rnd.randint(0, 60)
        op = rnd.random()
        if op < 0.35:
            resp.call("HSET", "h", f, "v")
            model[f] = -1
        elif op < 0.75:
            at = base + rnd.randint(0, 50) * 1000
            r = resp.call("HPEXPIREAT", "h", str(at), "FIELDS", "1", f)
            if f in model:
                assert r == [1]
                model[f] = at
            else:
                assert r == [-2]
        elif op < 0.85:
            r = resp.call("HPERSIST", "h", "FIELDS", "1", f)
            assert r == ([-2] if f not in model else [-1] if model[f] == -1 else [1])
            if f in model:
                model[f] = -1
        else:
            resp.call("HDEL", "h", f)
            model.pop(f, None)
        if step % 50 == 0 and model:
            names = sorted(model)
            got = resp.call("HPEXPIRETIME", "h", "FIELDS", len(names), *names)
            assert got == [model[n] for n in names]
    names = sorted(model)
    assert resp.call("HPEXPIRETIME", "h", "FIELDS", len(names), *names) == [model[n] for n in names]
    assert sorted(resp.call("HKEYS", "h")) == sorted(n.encode() for n in names)
