"""Redis 8's hash commands HGETDEL, HGETEX and HSETEX (cmd/t_hash.c).

Reference: Redis 8 (its t_hash.c hgetdelCommand / hgetexCommand /
hsetexCommand and src/commands/h{getdel,getex,setex}.json); every reply,
error text, keyspace event and AOF record asserted here was compared by
hand with a redis-server built from that source.  Debian's redis-server 7.0
has none of these commands, so the module skips itself under
HOTKV_SERVER=redis.

Covered: every option (FNX FXX EX PX EXAT PXAT KEEPTTL PERSIST), every
error, reply shapes in RESP2 and RESP3, both encodings (listpack and
hashtable), the field TTLs left behind (HTTL / HPTTL / HPEXPIRETIME),
fields already expired (lazily dropped and announced), the key removed
with its last field, keyspace events, COMMAND INFO / DOCS, what each call
feeds to the AOF, and a restart from the AOF that reloads the same state.
"""
import time

import pytest

from helpers import IS_REDIS, arity_error

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Debian's redis-server 7.0 has no HGETEX/HSETEX/HGETDEL")

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
NOT_INT = ("error", "ERR value is not an integer or out of range")
FIELDS_MISSING = ("error", "ERR Mandatory argument FIELDS is missing or not at the right position")
NUMFIELDS_POS = ("error", "ERR Number of fields must be a positive integer")
NUMFIELDS_MATCH = ("error", "ERR The `numfields` parameter must match the number of arguments")
NEGATIVE_TIME = ("error", "ERR invalid expire time, must be >= 0")
# HFE_MAX_MS: the largest field expiry Redis accepts (2^46 - 1 ms).
HFE_MAX_MS = (1 << 46) - 1


def bad_time(cmd):
    return ("error", "ERR invalid expire time in '%s' command" % cmd)


@pytest.fixture(params=["listpack", "hashtable"])
def h(request, resp):
    """resp, with new hashes in the given encoding, and active expiry off
    so that expired fields stay until a command finds them."""
    resp.call("CONFIG", "SET", "hash-max-listpack-entries", 128 if request.param == "listpack" else 0)
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    yield resp
    resp.call("CONFIG", "SET", "hash-max-listpack-entries", 128)
    resp.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    resp.call("FLUSHALL")


def expire_soon(c, key, *fields):
    """Give fields a 1 ms TTL and let it pass (active expiry is off)."""
    assert c.call("HPEXPIRE", key, 1, "FIELDS", len(fields), *fields) == [1] * len(fields)
    time.sleep(0.01)


def now_ms(c):
    s, us = c.call("TIME")
    return int(s) * 1000 + int(us) // 1000


# ------------------------------------------------------------------ HGETDEL

def test_hgetdel_returns_and_deletes(h):
    h.call("HSET", "h", "a", "1", "b", "2", "c", "3", "n", "12345")
    assert h.call("HGETDEL", "h", "FIELDS", 3, "a", "zz", "n") == [b"1", None, b"12345"]
    assert h.call("HGETALL", "h") in ([b"b", b"2", b"c", b"3"], [b"c", b"3", b"b", b"2"])
    # The same field twice: its value once, then nil.
    assert h.call("HGETDEL", "h", "fields", 2, "b", "b") == [b"2", None]
    # The last field takes the key with it.
    assert h.call("HGETDEL", "h", "FIELDS", 2, "c", "zz") == [b"3", None]
    assert h.call("EXISTS", "h") == 0
    assert h.call("HGETDEL", "nokey", "FIELDS", 2, "a", "b") == [None, None]


def test_hgetdel_expired_fields_are_nil(h):
    h.call("HSET", "h", "a", "1", "b", "2")
    expire_soon(h, "h", "a")
    assert h.call("HGETDEL", "h", "FIELDS", 2, "a", "b") == [None, b"2"]
    assert h.call("EXISTS", "h") == 0
    h.call("HSET", "h", "a", "1", "b", "2")
    expire_soon(h, "h", "a", "b")
    assert h.call("HGETDEL", "h", "FIELDS", 2, "a", "b") == [None, None]
    assert h.call("EXISTS", "h") == 0


def test_hgetdel_errors(h):
    h.call("HSET", "h", "a", "1")
    assert h.call("HGETDEL", "h", "FIELDS", 1) == arity_error("hgetdel")
    assert h.call("HGETDEL", "h", "FIELD", 1, "a") == FIELDS_MISSING
    assert h.call("HGETDEL", "h", "FIELDS", 0, "a") == NUMFIELDS_POS
    assert h.call("HGETDEL", "h", "FIELDS", -1, "a") == NUMFIELDS_POS
    assert h.call("HGETDEL", "h", "FIELDS", "x", "a") == NUMFIELDS_POS
    assert h.call("HGETDEL", "h", "FIELDS", 2, "a") == NUMFIELDS_MATCH
    assert h.call("HGETDEL", "h", "FIELDS", 1, "a", "b") == NUMFIELDS_MATCH
    assert h.call("HGET", "h", "a") == b"1"
    h.call("SET", "s", "v")
    # The type is checked before the arguments, as in Redis.
    assert h.call("HGETDEL", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert h.call("HGETDEL", "s", "nope", 1, "a") == WRONGTYPE


def test_hgetdel_resp3(resp3):
    resp3.call("HSET", "h", "a", "1")
    assert resp3.call("HGETDEL", "h", "FIELDS", 2, "zz", "a") == [None, b"1"]
    resp3.send("HGETDEL", "h", "FIELDS", 1, "a")
    assert resp3._line() == b"*1" and resp3._line() == b"_"


# ------------------------------------------------------------------- HGETEX

def test_hgetex_plain_is_hmget(h):
    h.call("HSET", "h", "a", "1", "b", "2")
    h.call("HEXPIRE", "h", 100, "FIELDS", 1, "a")
    assert h.call("HGETEX", "h", "FIELDS", 3, "a", "zz", "b") == [b"1", None, b"2"]
    assert h.call("HTTL", "h", "FIELDS", 2, "a", "b")[1] == -1
    assert 98 <= h.call("HTTL", "h", "FIELDS", 1, "a")[0] <= 100
    assert h.call("HGETEX", "nokey", "FIELDS", 2, "a", "b") == [None, None]
    assert h.call("HGETEX", "nokey", "EX", 10, "FIELDS", 1, "a") == [None]


def test_hgetex_sets_ttls(h):
    h.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert h.call("HGETEX", "h", "EX", 100, "FIELDS", 2, "a", "zz") == [b"1", None]
    assert 98 <= h.call("HTTL", "h", "FIELDS", 1, "a")[0] <= 100
    assert h.call("HTTL", "h", "FIELDS", 2, "b", "zz") == [-1, -2]
    assert h.call("HGETEX", "h", "px", 50000, "FIELDS", 1, "b") == [b"2"]
    assert 48000 <= h.call("HPTTL", "h", "FIELDS", 1, "b")[0] <= 50000
    t = int(time.time()) + 1000
    assert h.call("HGETEX", "h", "EXAT", t, "FIELDS", 1, "c") == [b"3"]
    assert h.call("HEXPIRETIME", "h", "FIELDS", 1, "c") == [t]
    assert h.call("HGETEX", "h", "PXAT", t * 1000 + 5, "FIELDS", 2, "c", "a") == [b"3", b"1"]
    assert h.call("HPEXPIRETIME", "h", "FIELDS", 2, "c", "a") == [t * 1000 + 5] * 2
    # PERSIST removes them; a field without a TTL stays as it is.
    assert h.call("HGETEX", "h", "PERSIST", "FIELDS", 3, "a", "b", "zz") == [b"1", b"2", None]
    assert h.call("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]
    assert h.call("HGETEX", "h", "PERSIST", "FIELDS", 1, "a") == [b"1"]


def test_hgetex_time_in_past_deletes(h):
    h.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert h.call("HGETEX", "h", "PX", 0, "FIELDS", 2, "a", "zz") == [b"1", None]
    assert h.call("HEXISTS", "h", "a") == 0
    assert h.call("HGETEX", "h", "EXAT", 1, "FIELDS", 1, "b") == [b"2"]
    assert h.call("HGETEX", "h", "PXAT", 1, "FIELDS", 1, "c") == [b"3"]
    assert h.call("EXISTS", "h") == 0


def test_hgetex_expired_fields_are_nil(h):
    h.call("HSET", "h", "a", "1", "b", "2")
    expire_soon(h, "h", "a")
    assert h.call("HGETEX", "h", "EX", 100, "FIELDS", 2, "a", "b") == [None, b"2"]
    assert h.call("HLEN", "h") == 1
    expire_soon(h, "h", "b")
    assert h.call("HGETEX", "h", "PERSIST", "FIELDS", 1, "b") == [None]
    assert h.call("EXISTS", "h") == 0


def test_hgetex_errors(h):
    h.call("HSET", "h", "a", "1")
    assert h.call("HGETEX", "h", "FIELDS", 1) == arity_error("hgetex")
    assert h.call("HGETEX", "h", "EX", 10, "FIELDS") == arity_error("hgetex")
    assert h.call("HGETEX", "h", "PERSIST", "FIELDS") == arity_error("hgetex")
    assert h.call("HGETEX", "h", "FOO", "FIELDS", 1, "a") == FIELDS_MISSING
    assert h.call("HGETEX", "h", "EX", 1, "EX", 1, "FIELDS", 1, "a") == FIELDS_MISSING
    assert h.call("HGETEX", "h", "KEEPTTL", "FIELDS", 1, "a") == FIELDS_MISSING
    assert h.call("HGETEX", "h", "FIELDS", 0, "a") == NUMFIELDS_POS
    assert h.call("HGETEX", "h", "FIELDS", "x", "a") == NUMFIELDS_POS
    assert h.call("HGETEX", "h", "FIELDS", 2, "a") == NUMFIELDS_MATCH
    assert h.call("HGETEX", "h", "PERSIST", "FIELDS", 1, "a", "b") == NUMFIELDS_MATCH
    assert h.call("HGETEX", "h", "EX", "x", "FIELDS", 1, "a") == NOT_INT
    assert h.call("HGETEX", "h", "EX", -5, "FIELDS", 1, "a") == NEGATIVE_TIME
    assert h.call("HGETEX", "h", "PXAT", -1, "FIELDS", 1, "a") == NEGATIVE_TIME
    assert h.call("HGETEX", "h", "EX", HFE_MAX_MS // 1000 + 1, "FIELDS", 1, "a") == bad_time("hgetex")
    assert h.call("HGETEX", "h", "PXAT", HFE_MAX_MS + 1, "FIELDS", 1, "a") == bad_time("hgetex")
    assert h.call("HGETEX", "h", "PX", HFE_MAX_MS, "FIELDS", 1, "a") == bad_time("hgetex")
    assert h.call("HGETEX", "h", "EXAT", HFE_MAX_MS // 1000, "FIELDS", 1, "a") == [b"1"]
    assert h.call("HPEXPIRETIME", "h", "FIELDS", 1, "a") == [HFE_MAX_MS // 1000 * 1000]
    # Time errors come before the FIELDS checks, even on a missing key.
    assert h.call("HGETEX", "nokey", "EX", -1, "nope") == NEGATIVE_TIME
    h.call("SET", "s", "v")
    assert h.call("HGETEX", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert h.call("HGETEX", "s", "EX", -1, "FIELDS", 1, "a") == WRONGTYPE


def test_hgetex_resp3(resp3):
    resp3.call("HSET", "h", "a", "1")
    assert resp3.call("HGETEX", "h", "EX", 100, "FIELDS", 2, "a", "zz") == [b"1", None]
    resp3.send("HGETEX", "h", "FIELDS", 1, "zz")
    assert resp3._line() == b"*1" and resp3._line() == b"_"


# ------------------------------------------------------------------- HSETEX

def test_hsetex_sets_and_clears_ttls(h):
    assert h.call("HSETEX", "h", "FIELDS", 2, "a", "1", "b", "2") == 1
    assert h.call("HGETALL", "h") in ([b"a", b"1", b"b", b"2"], [b"b", b"2", b"a", b"1"])
    assert h.call("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, -1]
    assert h.call("HSETEX", "h", "EX", 100, "FIELDS", 2, "a", "10", "c", "3") == 1
    assert h.call("HMGET", "h", "a", "c") == [b"10", b"3"]
    assert all(98 <= t <= 100 for t in h.call("HTTL", "h", "FIELDS", 2, "a", "c"))
    # KEEPTTL keeps it; no option drops it, as HSET does.
    assert h.call("HSETEX", "h", "KEEPTTL", "FIELDS", 2, "a", "11", "d", "4") == 1
    assert 98 <= h.call("HTTL", "h", "FIELDS", 1, "a")[0] <= 100
    assert h.call("HTTL", "h", "FIELDS", 1, "d") == [-1]
    assert h.call("HSETEX", "h", "FIELDS", 1, "a", "12") == 1
    assert h.call("HTTL", "h", "FIELDS", 1, "a") == [-1]
    assert h.call("HSETEX", "h", "PX", 50000, "FIELDS", 1, "a", "13") == 1
    assert 48000 <= h.call("HPTTL", "h", "FIELDS", 1, "a")[0] <= 50000
    t = int(time.time()) + 1000
    assert h.call("HSETEX", "h", "exat", t, "FIELDS", 1, "b", "20") == 1
    assert h.call("HEXPIRETIME", "h", "FIELDS", 1, "b") == [t]
    assert h.call("HSETEX", "h", "PXAT", t * 1000 + 7, "FIELDS", 1, "b", "21") == 1
    assert h.call("HPEXPIRETIME", "h", "FIELDS", 1, "b") == [t * 1000 + 7]
    assert h.call("HGET", "h", "b") == b"21"
    # The same field twice: the last value wins.
    assert h.call("HSETEX", "n", "FIELDS", 2, "x", "1", "x", "2") == 1
    assert h.call("HGET", "n", "x") == b"2"


def test_hsetex_fnx_fxx(h):
    # FXX on a missing key: 0 and no key.
    assert h.call("HSETEX", "h", "FXX", "FIELDS", 1, "a", "1") == 0
    assert h.call("EXISTS", "h") == 0
    assert h.call("HSETEX", "h", "FNX", "FIELDS", 2, "a", "1", "b", "2") == 1
    # FNX: all or nothing.
    assert h.call("HSETEX", "h", "FNX", "FIELDS", 2, "c", "3", "a", "9") == 0
    assert h.call("HEXISTS", "h", "c") == 0
    assert h.call("HSETEX", "h", "FNX", "EX", 100, "FIELDS", 1, "c", "3") == 1
    assert 98 <= h.call("HTTL", "h", "FIELDS", 1, "c")[0] <= 100
    # FXX: every field must exist.
    assert h.call("HSETEX", "h", "FXX", "FIELDS", 2, "a", "5", "zz", "6") == 0
    assert h.call("HMGET", "h", "a", "zz") == [b"1", None]
    assert h.call("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 2, "a", "5", "c", "6") == 1
    assert h.call("HMGET", "h", "a", "c") == [b"5", b"6"]
    assert 98 <= h.call("HTTL", "h", "FIELDS", 1, "c")[0] <= 100
    # Options in either order.
    assert h.call("HSETEX", "h", "KEEPTTL", "fxx", "FIELDS", 1, "a", "7") == 1
    assert h.call("HSETEX", "h", "EX", 10, "FNX", "FIELDS", 1, "a", "8") == 0


def test_hsetex_expired_fields_count_as_absent(h):
    h.call("HSET", "h", "a", "1", "b", "2")
    expire_soon(h, "h", "a")
    assert h.call("HSETEX", "h", "FNX", "FIELDS", 1, "a", "9") == 1
    assert h.call("HGET", "h", "a") == b"9"
    assert h.call("HTTL", "h", "FIELDS", 1, "a") == [-1]
    expire_soon(h, "h", "a", "b")
    # FXX fails at the first field (dropped on the way); the check stops
    # there, as Redis's, so b is still stored (expired) until looked at.
    assert h.call("HSETEX", "h", "FXX", "FIELDS", 2, "a", "1", "b", "2") == 0
    assert h.call("HLEN", "h") == 1
    assert h.call("HSETEX", "h", "FXX", "FIELDS", 1, "b", "2") == 0
    assert h.call("EXISTS", "h") == 0
    h.call("HSET", "h", "a", "1")
    expire_soon(h, "h", "a")
    assert h.call("HSETEX", "h", "FNX", "EX", 100, "FIELDS", 1, "a", "2") == 1
    assert h.call("HGET", "h", "a") == b"2"


def test_hsetex_keepttl_on_expired_field_starts_fresh(h):
    """An expired field is absent: KEEPTTL has no TTL to keep and the new
    value stays, as HINCRBY treats it.  (Redis 8 keeps the past TTL here,
    so the value just written is invisible at once; HotKV does not copy
    that.)"""
    h.call("HSET", "h", "a", "1", "b", "2")
    expire_soon(h, "h", "a")
    assert h.call("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "a", "5") == 1
    assert h.call("HGET", "h", "a") == b"5"
    assert h.call("HTTL", "h", "FIELDS", 1, "a") == [-1]


def test_hsetex_time_in_past_deletes(h):
    h.call("HSET", "h", "a", "1", "keep", "k")
    assert h.call("HSETEX", "h", "PXAT", 1, "FIELDS", 2, "a", "2", "b", "3") == 1
    assert h.call("HGETALL", "h") == [b"keep", b"k"]
    assert h.call("HSETEX", "h", "EX", 0, "FIELDS", 1, "keep", "x") == 1
    assert h.call("EXISTS", "h") == 0
    assert h.call("HSETEX", "n", "EXAT", 1, "FIELDS", 1, "a", "1") == 1
    assert h.call("EXISTS", "n") == 0


def test_hsetex_errors(h):
    h.call("HSET", "h", "a", "1")
    ar = arity_error("hsetex")
    cases = [
        (("FIELDS", 1, "a"), ar),
        (("FIELDS", 2, "a", "1"), ar),
        (("FIELDS", 1, "a", "1", "b"), ar),
        (("FIELDS", 1, "a", "1", "b", "2"), ar),
        (("EX", 10, "FIELDS", 1), ar),
        (("FIELDS", 1, "a", "1", "FIELDS"), ar),
        (("FIELDS", "x", "a", "1"), ("error", "ERR invalid number of fields")),
        (("FIELDS", 0, "a", "1"), ("error", "ERR invalid number of fields")),
        (("FIELDS", 2147483648, "a", "1"), ("error", "ERR invalid number of fields")),
        (("FNX", "FXX", "FIELDS", 1, "a", "1"), ("error", "ERR Only one of FXX or FNX arguments can be specified")),
        (("FXX", "FXX", "FIELDS", 1, "a", "1"), ("error", "ERR Only one of FXX or FNX arguments can be specified")),
        (("EX", 10, "PX", 10, "FIELDS", 1, "a", "1"),
         ("error", "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")),
        (("KEEPTTL", "EX", 10, "FIELDS", 1, "a", "1"),
         ("error", "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")),
        (("KEEPTTL", "KEEPTTL", "FIELDS", 1, "a", "1"),
         ("error", "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")),
        (("EX", -1, "FIELDS", 1, "a", "1"), NEGATIVE_TIME),
        (("EX", "abc", "FIELDS", 1, "a", "1"), NOT_INT),
        (("EX", HFE_MAX_MS // 1000 + 1, "FIELDS", 1, "a", "1"), bad_time("hsetex")),
        (("PXAT", HFE_MAX_MS + 1, "FIELDS", 1, "a", "1"), bad_time("hsetex")),
        (("PX", HFE_MAX_MS, "FIELDS", 1, "a", "1"), bad_time("hsetex")),
        (("FOO", "FIELDS", 1, "a", "1"), ("error", "ERR unknown argument: FOO")),
        (("PERSIST", "FIELDS", 1, "a", "1"), ("error", "ERR unknown argument: PERSIST")),
        (("a", "b", "c", "EX"), ("error", "ERR unknown argument: a")),
        (("FNX", "x", "y", "EX"), ("error", "ERR unknown argument: x")),
        (("FNX", "EX"), ar),
    ]
    for args, want in cases:
        assert h.call("HSETEX", "h", *args) == want, args
    # Errors come before the lookup: an option error on a string key too.
    h.call("SET", "s", "v")
    assert h.call("HSETEX", "s", "FNX", "FXX", "FIELDS", 1, "a", "1")[1].startswith("ERR Only one of FXX")
    assert h.call("HSETEX", "s", "FIELDS", 1, "a", "1") == WRONGTYPE
    assert h.call("HGETALL", "h") == [b"a", b"1"]
    # The argument is echoed up to a NUL byte, CR/LF as spaces.
    assert h.call("HSETEX", "h", b"x\r\ny\x00z", "FIELDS", 1, "a", "1") == ("error", "ERR unknown argument: x  y")


def test_hsetex_resp3(resp3):
    assert resp3.call("HSETEX", "h", "EX", 100, "FIELDS", 1, "a", "1") == 1
    assert resp3.call("HSETEX", "h", "FNX", "FIELDS", 1, "a", "1") == 0


def test_hsetex_converts_encoding(resp):
    resp.call("CONFIG", "SET", "hash-max-listpack-value", 8)
    try:
        resp.call("HSETEX", "h", "EX", 100, "FIELDS", 1, "a", "1")
        assert resp.call("OBJECT", "ENCODING", "h") == b"listpackex"
        resp.call("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "b", "x" * 20)
        assert resp.call("OBJECT", "ENCODING", "h") == b"hashtable"
        assert resp.call("HGET", "h", "b") == b"x" * 20
        assert 98 <= resp.call("HTTL", "h", "FIELDS", 1, "a")[0] <= 100
    finally:
        resp.call("CONFIG", "SET", "hash-max-listpack-value", 64)


def test_big_values_and_many_fields(h):
    n = 300
    args = []
    for i in range(n):
        args += ["f%d" % i, "v%d" % i * 3]
    assert h.call("HSETEX", "h", "PX", 100000, "FIELDS", n, *args) == 1
    names = ["f%d" % i for i in range(n)]
    got = h.call("HGETEX", "h", "PERSIST", "FIELDS", n, *names)
    assert got == [("v%d" % i * 3).encode() for i in range(n)]
    assert set(h.call("HTTL", "h", "FIELDS", n, *names)) == {-1}
    assert h.call("HGETDEL", "h", "FIELDS", n, *names) == got
    assert h.call("EXISTS", "h") == 0


# ------------------------------------------------------- keyspace events

def events_of(server, calls):
    """Keyevent notifications (event, key) for each call in turn."""
    r = server.client(decode_responses=True)
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    out = []
    try:
        for call in calls:
            if call[0] == "sleep":
                time.sleep(call[1])
                continue
            r.execute_command(*call)
            r.execute_command("PING")  # events of call precede the PING's reply
            got = []
            while True:
                m = p.get_message(timeout=0.05)
                if m is None:
                    break
                if m["type"] == "pmessage":
                    got.append(m["channel"].split(":", 1)[1])
            out.append(got)
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")
        r.close()
    return out


def test_keyspace_events(server, h):
    calls = [
        ("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"),
        ("HGETDEL", "h", "FIELDS", 3, "a", "zz", "b"),
        ("HGETDEL", "h", "FIELDS", 1, "zz"),
        ("HGETEX", "h", "EX", 100, "FIELDS", 2, "c", "zz"),
        ("HGETEX", "h", "PERSIST", "FIELDS", 2, "c", "zz"),
        ("HGETEX", "h", "PERSIST", "FIELDS", 1, "c"),
        ("HGETEX", "h", "FIELDS", 1, "c"),
        ("HGETEX", "h", "PXAT", 1, "FIELDS", 2, "c", "zz"),
        ("HSETEX", "h", "EX", 100, "FIELDS", 2, "x", "1", "y", "2"),
        ("HSETEX", "h", "FNX", "FIELDS", 1, "x", "3"),
        ("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 1, "x", "3"),
        ("HSETEX", "h", "PX", 1000, "FIELDS", 1, "x", "3"),
        ("HSETEX", "h", "EXAT", 1, "FIELDS", 2, "x", "3", "q", "4"),
        ("HGETDEL", "h", "FIELDS", 2, "d", "y"),
        ("HSETEX", "n", "PXAT", 1, "FIELDS", 1, "a", "1"),
        ("HSETEX", "n", "FXX", "FIELDS", 1, "a", "1"),
        # fields found expired: "hexpired" first
        ("HSET", "e", "a", "1", "b", "2"),
        ("HPEXPIRE", "e", 1, "FIELDS", 1, "a"), ("sleep", 0.01),
        ("HGETEX", "e", "EX", 100, "FIELDS", 2, "a", "b"),
        ("HPEXPIRE", "e", 1, "FIELDS", 1, "b"), ("sleep", 0.01),
        ("HGETEX", "e", "FIELDS", 1, "b"),
        ("HSET", "e", "a", "1", "b", "2"),
        ("HPEXPIRE", "e", 1, "FIELDS", 1, "a"), ("sleep", 0.01),
        ("HGETDEL", "e", "FIELDS", 2, "a", "b"),
        ("HSET", "e", "a", "1"),
        ("HPEXPIRE", "e", 1, "FIELDS", 1, "a"), ("sleep", 0.01),
        ("HSETEX", "e", "FNX", "FIELDS", 1, "a", "2"),
        ("HPEXPIRE", "e", 1, "FIELDS", 1, "a"), ("sleep", 0.01),
        ("HSETEX", "e", "FXX", "FIELDS", 1, "a", "2"),
    ]
    got = events_of(server, calls)
    assert got == [
        ["hset"], ["hdel"], [], ["hexpire"], ["hpersist"], [], [], ["hdel"],
        ["hset", "hexpire"], [], ["hset"], ["hset", "hexpire"], ["hset", "hdel"], ["hdel", "del"],
        ["hset", "hdel", "del"], [],
        ["hset"], ["hexpire"], ["hexpired", "hexpire"], ["hexpire"], ["hexpired", "del"],
        ["hset"], ["hexpire"], ["hexpired", "hdel", "del"],
        ["hset"], ["hexpire"], ["hexpired", "hset"],
        ["hexpire"], ["hexpired", "del"],
    ]


# ------------------------------------------------------- COMMAND metadata

def test_command_info_and_docs(resp):
    info = resp.call("COMMAND", "INFO", "hgetdel", "hgetex", "hsetex")
    want = [
        (b"hgetdel", -5, ["write", "fast"], ["RW", "access", "delete"]),
        (b"hgetex", -5, ["write", "fast"], ["RW", "access", "update"]),
        (b"hsetex", -6, ["write", "denyoom", "fast"], ["RW", "update"]),
    ]
    for row, (name, arity, flags, ks) in zip(info, want):
        assert row[:7] == [name, arity, flags, 1, 1, 1, ["@write", "@hash", "@fast"]]
        spec = dict(zip(row[8][0][0::2], row[8][0][1::2]))
        assert spec[b"flags"] == ks
    docs = resp.call("COMMAND", "DOCS", "hsetex")
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"since"] == b"8.0.0" and d[b"group"] == b"hash"
    names = [dict(zip(a[0::2], a[1::2]))[b"name"] for a in d[b"arguments"]]
    assert names == [b"key", b"condition", b"expiration", b"fields"]
    fields = dict(zip(d[b"arguments"][3][0::2], d[b"arguments"][3][1::2]))
    assert fields[b"token"] == b"FIELDS"
    data = dict(zip(fields[b"arguments"][1][0::2], fields[b"arguments"][1][1::2]))
    assert data[b"type"] == b"block" and data[b"flags"] == ["multiple"]
    assert resp.call("COMMAND", "GETKEYS", "HSETEX", "k", "FIELDS", 1, "a", "1") == [b"k"]


# ------------------------------------------------------------ propagation

@pytest.fixture(scope="module")
def aof_srv():
    import shutil
    import tempfile
    from test_propagation import Srv
    d = tempfile.mkdtemp(prefix="hotkv-hashex-")
    s = Srv(d, "--enable-debug-command", "yes").start()
    yield s
    assert s.stop() == 0
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def fed(aof_srv):
    """(client, new()): new() gives the commands the AOF received since the
    last call, SELECT left out."""
    from test_propagation import Tail
    c = aof_srv.client()
    c.flushall()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    t = Tail(aof_srv)
    yield c, t.new
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    c.close()


def near(v, want, slack=3000):
    return abs(int(v) - want) <= slack


def test_propagation_hgetdel(fed):
    c, new = fed
    c.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    new()
    # Fed as HDEL of every field named, as Redis 8 rewrites it.
    c.execute_command("HGETDEL", "h", "FIELDS", 3, "a", "zz", "b")
    assert new() == [["HDEL", "h", "a", "zz", "b"]]
    c.execute_command("HGETDEL", "h", "FIELDS", 1, "zz")  # nothing removed
    assert new() == []
    c.execute_command("HGETDEL", "h", "FIELDS", 1, "c")  # the key goes with it
    assert new() == [["HDEL", "h", "c"]]
    # A field found expired: its HDEL first, in one MULTI with the command.
    c.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "a")
    time.sleep(0.01)
    new()
    c.execute_command("HGETDEL", "h", "FIELDS", 2, "a", "b")
    assert new() == [["MULTI"], ["HDEL", "h", "a"], ["HDEL", "h", "a", "b"], ["EXEC"]]
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "c")
    time.sleep(0.01)
    new()
    c.execute_command("HGETDEL", "h", "FIELDS", 1, "c")
    assert new() == [["HDEL", "h", "c"]]
    assert c.exists("h") == 0


def test_propagation_hgetex(fed):
    c, new = fed
    c.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    new()
    c.execute_command("HGETEX", "h", "FIELDS", 2, "a", "b")
    assert new() == []
    t = int(c.time()[0]) * 1000
    c.execute_command("HGETEX", "h", "EX", 100, "FIELDS", 2, "a", "zz")
    got = new()
    assert len(got) == 1 and got[0][:2] == ["HPEXPIREAT", "h"] and near(got[0][2], t + 100000)
    assert got[0][3:] == ["FIELDS", "2", "a", "zz"]
    c.execute_command("HGETEX", "h", "PXAT", 5000000000000, "FIELDS", 1, "b")
    assert new() == [["HPEXPIREAT", "h", "5000000000000", "FIELDS", "1", "b"]]
    c.execute_command("HGETEX", "h", "persist", "FIELDS", 2, "b", "c")
    assert new() == [["HPERSIST", "h", "FIELDS", "2", "b", "c"]]
    c.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 1, "c")  # no TTL to remove
    assert new() == []
    # A time in the past: one HDEL per field, the command itself not.
    c.execute_command("HGETEX", "h", "PXAT", 1, "FIELDS", 1, "b")
    assert new() == [["HDEL", "h", "b"]]
    c.execute_command("HGETEX", "h", "EXAT", 1, "FIELDS", 3, "a", "zz", "c")
    assert new() == [["MULTI"], ["HDEL", "h", "a"], ["HDEL", "h", "c"], ["EXEC"]]
    assert c.exists("h") == 0
    # Expired on the way.
    c.hset("h", mapping={"a": "1", "b": "2"})
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "a")
    time.sleep(0.01)
    new()
    c.execute_command("HGETEX", "h", "PXAT", 5000000000000, "FIELDS", 2, "a", "b")
    assert new() == [["MULTI"], ["HDEL", "h", "a"], ["HPEXPIREAT", "h", "5000000000000", "FIELDS", "2", "a", "b"],
                     ["EXEC"]]


def test_propagation_hsetex(fed):
    c, new = fed
    c.execute_command("HSETEX", "h", "FIELDS", 2, "a", "1", "b", "2")
    assert new() == [["HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2"]]
    t = int(c.time()[0]) * 1000
    c.execute_command("HSETEX", "h", "FNX", "EX", 100, "FIELDS", 1, "x", "1")
    got = new()
    assert len(got) == 1 and got[0][:3] == ["HSETEX", "h", "FNX"] and got[0][3] == "PXAT"
    assert near(got[0][4], t + 100000) and got[0][5:] == ["FIELDS", "1", "x", "1"]
    c.execute_command("HSETEX", "h", "PX", 100000, "FIELDS", 1, "y", "1")
    got = new()
    assert got[0][2] == "PXAT" and near(got[0][3], t + 100000)
    c.execute_command("HSETEX", "h", "EXAT", 5000000000, "FIELDS", 1, "y", "2")
    assert new() == [["HSETEX", "h", "PXAT", "5000000000000", "FIELDS", "1", "y", "2"]]
    c.execute_command("HSETEX", "h", "PXAT", 5000000000001, "FIELDS", 1, "y", "3")
    assert new() == [["HSETEX", "h", "PXAT", "5000000000001", "FIELDS", "1", "y", "3"]]
    c.execute_command("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 1, "y", "4")
    assert new() == [["HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "1", "y", "4"]]
    # Refused by FNX / FXX: nothing.
    c.execute_command("HSETEX", "h", "FNX", "FIELDS", 1, "y", "5")
    c.execute_command("HSETEX", "h", "FXX", "FIELDS", 1, "zz", "5")
    c.execute_command("HSETEX", "nokey", "FXX", "FIELDS", 1, "zz", "5")
    assert new() == []
    # A time in the past: one HDEL per field, the command itself not.
    c.execute_command("HSETEX", "h", "EXAT", 1, "FIELDS", 2, "x", "3", "q", "4")
    assert new() == [["MULTI"], ["HDEL", "h", "x"], ["HDEL", "h", "q"], ["EXEC"]]
    c.execute_command("HSETEX", "n", "PXAT", 1, "FIELDS", 1, "a", "1")
    assert new() == [["HDEL", "n", "a"]]
    # An expired field found by FNX: its HDEL, then the command.
    c.hset("e", "a", "1")
    c.execute_command("HPEXPIRE", "e", 1, "FIELDS", 1, "a")
    time.sleep(0.01)
    new()
    c.execute_command("HSETEX", "e", "FNX", "FIELDS", 1, "a", "2")
    assert new() == [["MULTI"], ["HDEL", "e", "a"], ["HSETEX", "e", "FNX", "FIELDS", "1", "a", "2"], ["EXEC"]]
    c.execute_command("HPEXPIRE", "e", 1, "FIELDS", 1, "a")
    time.sleep(0.01)
    new()
    c.execute_command("HSETEX", "e", "FXX", "FIELDS", 1, "a", "2")  # refused
    assert new() == [["HDEL", "e", "a"]]


def test_propagation_inside_multi(fed):
    c, new = fed
    c.hset("h", mapping={"a": "1", "b": "2"})
    new()
    p = c.pipeline(transaction=True)
    p.execute_command("HGETDEL", "h", "FIELDS", 1, "a")
    p.execute_command("HSETEX", "h", "EXAT", 1, "FIELDS", 1, "b", "3")
    p.execute_command("HSETEX", "h", "PXAT", 5000000000000, "FIELDS", 1, "c", "3")
    p.execute()
    assert new() == [["MULTI"], ["HDEL", "h", "a"], ["HDEL", "h", "b"],
                     ["HSETEX", "h", "PXAT", "5000000000000", "FIELDS", "1", "c", "3"], ["EXEC"]]


def state(c):
    out = {}
    for k in sorted(c.keys("*")):
        fields = sorted(c.hkeys(k))
        out[k] = {f: (c.hget(k, f), c.execute_command("HPEXPIRETIME", k, "FIELDS", 1, f)[0]) for f in fields}
    return out


def test_restart_from_aof_reloads_the_same_state(aof_srv, fed):
    c, new = fed
    c.hset("h", mapping={"a": "1", "b": "2", "c": "3", "d": "4"})
    c.execute_command("HSETEX", "h", "EX", 1000, "FIELDS", 2, "x", "1", "y", "2")
    c.execute_command("HSETEX", "h", "FNX", "PX", 500000, "FIELDS", 1, "z", "1")
    c.execute_command("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 2, "x", "9", "a", "8")
    c.execute_command("HSETEX", "h", "EXAT", 1, "FIELDS", 1, "b", "0")
    c.execute_command("HGETEX", "h", "PXAT", 6000000000000, "FIELDS", 2, "c", "zz")
    c.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 1, "y")
    c.execute_command("HGETEX", "h", "PX", 0, "FIELDS", 1, "d")
    c.execute_command("HGETDEL", "h", "FIELDS", 2, "z", "nope")
    c.execute_command("HSETEX", "big", "EX", 1000, "FIELDS", 3, "f1", "v" * 100, "f2", "2", "f3", "3")
    c.execute_command("HGETDEL", "big", "FIELDS", 1, "f2")
    c.execute_command("HSETEX", "gone", "FIELDS", 1, "a", "1")
    c.execute_command("HGETDEL", "gone", "FIELDS", 1, "a")
    # A field that expires while the server is down.
    c.execute_command("HSETEX", "h", "PX", 300, "FIELDS", 1, "short", "s")
    before = state(c)
    assert "gone" not in before and set(before["h"]) == {"a", "c", "short", "x", "y"}
    assert before["h"]["c"] == ("3", 6000000000000) and before["h"]["y"] == ("2", -1)
    aof_srv.kill9()
    time.sleep(0.4)
    aof_srv.start()
    c2 = aof_srv.client()
    try:
        after = state(c2)
        del before["h"]["short"]
        assert after == before
    finally:
        c2.close()
