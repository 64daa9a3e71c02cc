"""Set command integration tests (Redis 7.4 semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Where 7.0
differs from 7.2+/7.4 (the "listpack" set encoding and its thresholds, the
SSCAN cursor and NOVALUES rules) the test checks the 7.4 behaviour on
servers that report 7.2 or later and the 7.0 one otherwise, or is skipped
on 7.0.  Errors are checked on the wire through the raw `resp` client.
"""
import threading

import pytest

from helpers import IS_REDIS, arity_error as arity, info_field, server_version

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
NOT_POSITIVE = ("error", "ERR value is out of range, must be positive")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808

DEFAULTS = {"set-max-intset-entries": "512", "set-max-listpack-entries": "128", "set-max-listpack-value": "64"}


def is72(r):
    return server_version(r) >= (7, 2, 0)


def need72(r):
    if not is72(r):
        pytest.skip("listpack-encoded sets and their thresholds arrived in Redis 7.2")


def enc(r, key):
    return r.object("encoding", key)


def small_enc(r):
    """The encoding of a small set of strings: listpack since 7.2."""
    return "listpack" if is72(r) else "hashtable"


@pytest.fixture(autouse=True)
def reset_thresholds(server):
    yield
    c = server.client(decode_responses=True)
    for k, v in DEFAULTS.items():
        try:
            c.config_set(k, v)
        except Exception:
            pass  # 7.0 has no set-max-listpack-*
    c.close()


@pytest.fixture(scope="module", autouse=True)
def flush_at_end(server):
    """Leave no collection behind: the server is stopped (and, in sanitizer
    builds, checked for leaks) when the module ends."""
    yield
    c = server.client()
    c.flushall()
    c.close()


# ------------------------------------------------------------ arity/types

@pytest.mark.parametrize("cmd,args", [
    ("SADD", ["k"]), ("SREM", ["k"]), ("SMOVE", ["a", "b"]), ("SISMEMBER", ["k"]),
    ("SMISMEMBER", ["k"]), ("SCARD", []), ("SMEMBERS", []), ("SPOP", []), ("SRANDMEMBER", []),
    ("SINTER", []), ("SINTERCARD", ["1"]), ("SINTERSTORE", ["d"]), ("SUNION", []), ("SUNIONSTORE", ["d"]),
    ("SDIFF", []), ("SDIFFSTORE", ["d"]), ("SSCAN", ["k"]),
])
def test_arity(resp, cmd, args):
    assert resp.call(cmd, *args) == arity(cmd.lower())


def test_arity_too_many(resp):
    assert resp.call("SCARD", "a", "b") == arity("scard")
    assert resp.call("SISMEMBER", "a", "b", "c") == arity("sismember")
    assert resp.call("SMOVE", "a", "b", "c", "d") == arity("smove")
    assert resp.call("SMEMBERS", "a", "b") == arity("smembers")


def test_wrongtype_everywhere(resp):
    resp.call("SET", "str", "x")
    resp.call("SADD", "s", "a")
    for args in (["SADD", "str", "a"], ["SREM", "str", "a"], ["SISMEMBER", "str", "a"],
                 ["SMISMEMBER", "str", "a"], ["SCARD", "str"], ["SMEMBERS", "str"], ["SPOP", "str"],
                 ["SPOP", "str", "0"], ["SPOP", "str", "2"], ["SRANDMEMBER", "str"], ["SRANDMEMBER", "str", "0"],
                 ["SRANDMEMBER", "str", "-3"], ["SINTER", "s", "str"], ["SINTER", "str"],
                 ["SINTERCARD", "2", "s", "str"], ["SINTERSTORE", "d", "s", "str"], ["SUNION", "s", "str"],
                 ["SUNIONSTORE", "d", "s", "str"], ["SDIFF", "s", "str"], ["SDIFF", "str", "s"],
                 ["SDIFFSTORE", "d", "s", "str"], ["SSCAN", "str", "0"], ["SMOVE", "str", "s", "a"],
                 ["SMOVE", "s", "str", "a"]):
        assert resp.call(*args) == WRONGTYPE, args
    assert resp.call("TYPE", "s") == "set"
    assert resp.call("GET", "str") == b"x"
    assert resp.call("EXISTS", "d") == 0


def test_wrongtype_wins_over_missing_key(resp):
    """Every key is looked up before a missing one short-cuts the reply."""
    resp.call("SET", "str", "x")
    assert resp.call("SINTER", "nokey", "str") == WRONGTYPE
    assert resp.call("SINTERCARD", "2", "nokey", "str") == WRONGTYPE
    assert resp.call("SINTERSTORE", "d", "nokey", "str") == WRONGTYPE
    assert resp.call("SUNION", "nokey", "str") == WRONGTYPE
    assert resp.call("SDIFF", "nokey", "str") == WRONGTYPE
    assert resp.call("SDIFFSTORE", "d", "nokey", "str") == WRONGTYPE


# ------------------------------------------------------------- SADD etc.

def test_sadd_scard_sismember_smembers(resp):
    assert resp.call("SADD", "s", "a", "b", "a", "c") == 3
    assert resp.call("SADD", "s", "a", "d") == 1
    assert resp.call("SADD", "s", "a") == 0
    assert resp.call("SCARD", "s") == 4
    assert resp.call("SCARD", "nokey") == 0
    assert resp.call("SISMEMBER", "s", "a") == 1
    assert resp.call("SISMEMBER", "s", "z") == 0
    assert resp.call("SISMEMBER", "nokey", "a") == 0
    assert sorted(resp.call("SMEMBERS", "s")) == [b"a", b"b", b"c", b"d"]
    assert resp.call("SMEMBERS", "nokey") == []
    assert resp.call("SMISMEMBER", "s", "a", "z", "d") == [1, 0, 1]
    assert resp.call("SMISMEMBER", "nokey", "a", "b") == [0, 0]


def test_smembers_resp3_is_a_set(resp3):
    resp3.call("SADD", "s", "x", "y", "1")
    assert resp3.call("SMEMBERS", "s") == {b"x", b"y", b"1"}
    assert resp3.call("SMEMBERS", "nokey") == set()
    resp3.call("SADD", "i", "1", "2")
    assert resp3.call("SMEMBERS", "i") == {b"1", b"2"}
    assert resp3.call("SINTER", "s", "i") == {b"1"}
    assert resp3.call("SUNION", "s", "i") == {b"x", b"y", b"1", b"2"}
    assert resp3.call("SDIFF", "s", "i") == {b"x", b"y"}
    assert resp3.call("SINTER", "s", "nokey") == set()
    assert resp3.call("SISMEMBER", "s", "x") == 1
    assert resp3.call("SMISMEMBER", "s", "x", "q") == [1, 0]


def test_binary_and_empty_members(rb):
    assert rb.sadd("s", b"", b"a\x00b", b"\xff\xfe") == 3
    assert rb.sismember("s", b"") == 1
    assert rb.sismember("s", b"a\x00b") == 1
    assert rb.sismember("s", b"a") == 0
    assert rb.smembers("s") == {b"", b"a\x00b", b"\xff\xfe"}
    assert rb.srem("s", b"a\x00b") == 1
    assert rb.smembers("s") == {b"", b"\xff\xfe"}


def test_integer_like_members_keep_their_text(r):
    """Only canonical integers are integers: "01", "+1", " 1", "1.0" stay
    strings, and 1 and "01" are different members."""
    assert r.sadd("s", "1", "01", "+1", " 1", "1.0", "-0", "0") == 7
    assert r.scard("s") == 7
    assert r.smembers("s") == {"1", "01", "+1", " 1", "1.0", "-0", "0"}
    assert r.sismember("s", "01") == 1
    assert r.srem("s", "1") == 1
    assert r.sismember("s", "01") == 1
    assert r.sismember("s", "1") == 0


def test_int64_edges(r):
    assert r.sadd("s", str(LLONG_MAX), str(LLONG_MIN), "0", "-1") == 4
    assert enc(r, "s") == "intset"
    assert r.sismember("s", str(LLONG_MAX)) == 1
    assert r.sismember("s", str(LLONG_MIN)) == 1
    assert r.smembers("s") == {str(LLONG_MAX), str(LLONG_MIN), "0", "-1"}
    # Beyond 64 bits: a string.
    assert r.sadd("s", "9223372036854775808") == 1
    assert enc(r, "s") == small_enc(r)
    assert r.sismember("s", "9223372036854775808") == 1
    assert r.sismember("s", str(LLONG_MAX)) == 1
    assert r.smembers("s") == {str(LLONG_MAX), str(LLONG_MIN), "0", "-1", "9223372036854775808"}


def test_sadd_keeps_ttl(r):
    r.sadd("s", "a")
    r.expire("s", 100)
    r.sadd("s", "b")
    r.srem("s", "a")
    assert 0 < r.ttl("s") <= 100


# -------------------------------------------------------------- encodings

def test_encoding_intset_then_listpack(r):
    r.sadd("s", 1, 2, 3)
    assert enc(r, "s") == "intset"
    r.sadd("s", "a")
    assert enc(r, "s") == small_enc(r)
    assert r.smembers("s") == {"1", "2", "3", "a"}
    # Removing the string never converts back.
    r.srem("s", "a")
    assert enc(r, "s") == small_enc(r)


def test_encoding_large_intset_to_hashtable_on_string(r):
    r.sadd("s", *range(130))
    assert enc(r, "s") == "intset"
    r.sadd("s", "a")
    assert enc(r, "s") == "hashtable"
    assert r.scard("s") == 131
    assert r.sismember("s", "129") == 1


def test_encoding_intset_overflow_to_hashtable(r):
    r.config_set("set-max-intset-entries", 10)
    r.sadd("s", *range(10))
    assert enc(r, "s") == "intset"
    r.sadd("s", 10)
    assert enc(r, "s") == "hashtable"
    assert r.scard("s") == 11
    # One call with more members than the intset limit: a listpack at once
    # (7.2+; 7.0 had no listpack sets and made a hashtable).
    r.sadd("t", *range(11))
    assert enc(r, "t") == small_enc(r)
    # Within the limit on creation stays intset.
    r.sadd("u", *range(10))
    assert enc(r, "u") == "intset"


def test_encoding_listpack_thresholds(r):
    need72(r)
    r.config_set("set-max-listpack-entries", 4)
    r.config_set("set-max-listpack-value", 8)
    r.sadd("s", "a", "b", "c", "d")
    assert enc(r, "s") == "listpack"
    r.sadd("s", "e")
    assert enc(r, "s") == "hashtable"
    assert r.smembers("s") == {"a", "b", "c", "d", "e"}
    # A long member.
    r.sadd("v", "a")
    assert enc(r, "v") == "listpack"
    r.sadd("v", "x" * 8)
    assert enc(r, "v") == "listpack"
    r.sadd("v", "x" * 9)
    assert enc(r, "v") == "hashtable"
    # Created with more members than the listpack limit: hashtable.
    r.sadd("w", "a", "b", "c", "d", "e")
    assert enc(r, "w") == "hashtable"
    # An existing listpack given more arguments than the limit converts
    # even if they are all duplicates (Redis's size-hint rule).
    r.sadd("x", "a")
    r.sadd("x", "a", "a", "a", "a", "a")
    assert enc(r, "x") == "hashtable"
    assert r.scard("x") == 1
    # A long first member.
    r.sadd("y", "y" * 9)
    assert enc(r, "y") == "hashtable"


def test_encoding_intset_to_listpack_respects_value_limit(r):
    need72(r)
    r.config_set("set-max-listpack-value", 3)
    r.sadd("s", 1, 2)
    r.sadd("s", "abc")
    assert enc(r, "s") == "listpack"
    # An intset whose integers are longer than the value limit goes to a
    # hashtable when a string arrives.
    r.sadd("t", 12345)
    assert enc(r, "t") == "intset"
    r.sadd("t", "a")
    assert enc(r, "t") == "hashtable"


def test_encoding_intset_limit_vs_listpack_limit(r):
    need72(r)
    r.config_set("set-max-listpack-entries", 3)
    r.sadd("s", 1, 2, 3)
    assert enc(r, "s") == "intset"
    r.sadd("s", "a")  # 3 integers already: no room in a listpack
    assert enc(r, "s") == "hashtable"
    r.sadd("t", 1, 2)
    r.sadd("t", "a")
    assert enc(r, "t") == "listpack"


def test_listpack_integers_and_strings(r):
    r.sadd("s", "a", 1, -5, 100000, "b", str(LLONG_MIN))
    assert enc(r, "s") == small_enc(r)
    for m in ("a", "1", "-5", "100000", "b", str(LLONG_MIN)):
        assert r.sismember("s", m) == 1
    assert r.sismember("s", "01") == 0
    assert r.sadd("s", "1", "100000") == 0
    assert r.srem("s", "-5", "nothere") == 1
    assert r.smembers("s") == {"a", "1", "100000", "b", str(LLONG_MIN)}


def test_big_hashtable_set(r):
    members = ["m%d" % i for i in range(5000)]
    for i in range(0, 5000, 500):
        r.sadd("s", *members[i:i + 500])
    assert enc(r, "s") == "hashtable"
    assert r.scard("s") == 5000
    assert r.smembers("s") == set(members)
    assert r.srem("s", *members[:4990]) == 4990
    assert r.smembers("s") == set(members[4990:])
    assert enc(r, "s") == "hashtable"
    assert r.delete("s") == 1


def test_copy_is_deep(r):
    r.sadd("i", 1, 2, 3)
    r.sadd("l", "a", "b")
    r.sadd("h", *["m%d" % i for i in range(200)])
    for k in ("i", "l", "h"):
        assert r.copy(k, k + "2") is True
        assert enc(r, k + "2") == enc(r, k)
        assert r.smembers(k + "2") == r.smembers(k)
        r.sadd(k + "2", "new")
        r.srem(k + "2", next(iter(r.smembers(k))))
        assert "new" not in r.smembers(k)
        assert r.scard(k) != r.scard(k + "2") or r.smembers(k) != r.smembers(k + "2")


def test_memory_usage_and_type(r):
    r.sadd("s", "a")
    small = r.memory_usage("s")
    r.sadd("h", *["member-%d" % i for i in range(1000)])
    big = r.memory_usage("h")
    assert isinstance(small, int) and small > 0
    assert big > small * 10
    assert r.type("h") == "set"


# -------------------------------------------------------------------- SREM

def test_srem(resp):
    resp.call("SADD", "s", "a", "b", "c", "1", "2")
    assert resp.call("SREM", "s", "a", "x", "1") == 2
    assert resp.call("SREM", "s", "a") == 0
    assert resp.call("SREM", "nokey", "a") == 0
    assert sorted(resp.call("SMEMBERS", "s")) == [b"2", b"b", b"c"]


def test_srem_deletes_empty_set(r):
    for members in (["1", "2"], ["a", "b"], ["m%d" % i for i in range(200)]):
        r.sadd("s", *members)
        assert r.srem("s", *(members + ["extra"])) == len(members)
        assert r.exists("s") == 0
    r.sadd("s", 1, 2, 3)
    # Stops counting once the set is gone, like Redis.
    assert r.srem("s", 1, 2, 3, 1) == 3
    assert r.exists("s") == 0


# ------------------------------------------------------------------- SMOVE

def test_smove_basics(r):
    r.sadd("src", "a", "b", 1)
    r.sadd("dst", "x")
    assert r.smove("src", "dst", "a") is True
    assert r.smembers("src") == {"b", "1"}
    assert r.smembers("dst") == {"x", "a"}
    assert r.smove("src", "dst", "zzz") is False
    assert r.smove("src", "dst", 1) is True
    assert r.smembers("dst") == {"x", "a", "1"}
    # Member already in the destination: removed from the source, reply 1.
    r.sadd("src", "x")
    assert r.smove("src", "dst", "x") is True
    assert r.smembers("src") == {"b"}
    assert r.smembers("dst") == {"x", "a", "1"}


def test_smove_creates_and_deletes(r):
    r.sadd("src", 5)
    assert r.smove("src", "new", 5) is True
    assert r.exists("src") == 0
    assert r.smembers("new") == {"5"}
    assert enc(r, "new") == "intset"
    r.sadd("src2", "str")
    assert r.smove("src2", "new2", "str") is True
    assert enc(r, "new2") == small_enc(r)


def test_smove_missing_and_types(resp):
    resp.call("SET", "str", "x")
    # Missing source: 0, whatever the destination holds.
    assert resp.call("SMOVE", "nokey", "str", "a") == 0
    assert resp.call("SMOVE", "nokey", "dst", "a") == 0
    assert resp.call("EXISTS", "dst") == 0
    resp.call("SADD", "s", "a")
    assert resp.call("SMOVE", "s", "str", "a") == WRONGTYPE
    assert resp.call("SMOVE", "str", "s", "a") == WRONGTYPE
    assert resp.call("SMEMBERS", "s") == [b"a"]


def test_smove_same_key(r):
    r.sadd("s", "a", "b")
    assert r.smove("s", "s", "a") is True
    assert r.smove("s", "s", "z") is False
    assert r.smembers("s") == {"a", "b"}
    r.sadd("one", "only")
    assert r.smove("one", "one", "only") is True
    assert r.smembers("one") == {"only"}


def test_smove_converts_destination(r):
    r.sadd("src", "a")
    r.sadd("dst", 1, 2)
    r.smove("src", "dst", "a")
    assert enc(r, "dst") == small_enc(r)
    r.sadd("src", "b" * 100)
    r.smove("src", "dst", "b" * 100)
    assert enc(r, "dst") == "hashtable"


def test_smove_is_atomic_across_threads(server):
    """Members shuttled between two sets by concurrent clients (the server
    runs 2 worker threads): none is lost or duplicated."""
    c = server.client(decode_responses=True)
    c.flushall()
    c.sadd("{a}x", *range(100))
    stop = threading.Event()
    errors = []

    def mover(src, dst):
        cc = server.client(decode_responses=True)
        try:
            i = 0
            while not stop.is_set() and i < 3000:
                cc.smove(src, dst, i % 100)
                i += 1
        except Exception as ex:  # pragma: no cover
            errors.append(ex)
        finally:
            cc.close()

    ts = [threading.Thread(target=mover, args=("{a}x", "y")), threading.Thread(target=mover, args=("y", "{a}x"))]
    for t in ts:
        t.start()
    for _ in range(200):
        both = c.sunion("{a}x", "y")
        assert len(both) == 100
    stop.set()
    for t in ts:
        t.join()
    assert not errors
    assert c.scard("{a}x") + c.scard("y") == 100
    assert c.sunion("{a}x", "y") == {str(i) for i in range(100)}
    c.close()


# -------------------------------------------------------------------- SPOP

@pytest.mark.parametrize("members", [
    [str(i) for i in range(20)],
    ["m%d" % i for i in range(20)],
    ["m%d" % i for i in range(300)],
])
def test_spop_single(r, members):
    r.sadd("s", *members)
    got = set()
    for _ in range(len(members)):
        m = r.spop("s")
        assert m in members and m not in got
        got.add(m)
    assert got == set(members)
    assert r.exists("s") == 0
    assert r.spop("s") is None


@pytest.mark.parametrize("n", [20, 300])
@pytest.mark.parametrize("kind", ["int", "str"])
@pytest.mark.parametrize("count", [1, 3, 10, 17, 19])
def test_spop_count_paths(r, n, kind, count):
    """Small counts (random removal) and counts close to the size (the
    survivors are picked instead): popped + left == original, no repeats."""
    members = [str(i) if kind == "int" else "m%d" % i for i in range(n)]
    if n == 300:
        count = count * 15
    r.sadd("s", *members)
    before = enc(r, "s")
    popped = r.spop("s", count)
    assert len(popped) == count
    assert len(set(popped)) == count
    left = r.smembers("s")
    assert len(left) == n - count
    assert set(popped) | left == set(members)
    assert not (set(popped) & left)
    if kind == "int":
        assert enc(r, "s") == "intset"
    elif n == 20:
        assert enc(r, "s") == before


def test_spop_count_whole_set_deletes(r):
    for members in (["1", "2", "3"], ["a", "b"], ["m%d" % i for i in range(200)]):
        r.sadd("s", *members)
        assert set(r.spop("s", len(members))) == set(members)
        assert r.exists("s") == 0
        r.sadd("s", *members)
        assert set(r.spop("s", len(members) + 100)) == set(members)
        assert r.exists("s") == 0


def test_spop_count_edge_replies(resp):
    resp.call("SADD", "s", "a", "b")
    assert resp.call("SPOP", "s", "0") == []
    assert resp.call("SCARD", "s") == 2
    assert resp.call("SPOP", "nokey", "5") == []
    assert resp.call("SPOP", "nokey") is None
    assert resp.call("SPOP", "s", "-1") == NOT_POSITIVE
    assert resp.call("SPOP", "s", "abc") == NOT_POSITIVE
    assert resp.call("SPOP", "nokey", "-1") == NOT_POSITIVE
    assert resp.call("SPOP", "s", "1", "2") == SYNTAX
    assert resp.call("SCARD", "s") == 2


def test_spop_resp3(resp3):
    resp3.call("SADD", "s", "a", "b", "c")
    got = resp3.call("SPOP", "s", "2")
    assert isinstance(got, set) and len(got) == 2
    assert resp3.call("SPOP", "s", "0") == set()
    assert resp3.call("SPOP", "nokey", "3") == set()
    assert resp3.call("SPOP", "nokey") is None
    last = resp3.call("SPOP", "s", "10")
    assert isinstance(last, set) and len(last) == 1
    assert resp3.call("EXISTS", "s") == 0


def test_spop_hashtable_mostly_popped_shrinks(r):
    need72(r)
    r.sadd("s", *["m%d" % i for i in range(200)])
    assert enc(r, "s") == "hashtable"
    popped = r.spop("s", 195)
    assert len(set(popped)) == 195
    assert r.scard("s") == 5
    # The survivors were moved into a new, small set.
    assert enc(r, "s") == "listpack"


def test_spop_distribution_is_uniform(r):
    counts = {str(i): 0 for i in range(10)}
    for _ in range(300):
        r.delete("s")
        r.sadd("s", *range(10))
        for m in r.spop("s", 3):
            counts[m] += 1
    # 90 expected per member.
    assert all(40 < v < 150 for v in counts.values()), counts


# ------------------------------------------------------------- SRANDMEMBER

@pytest.mark.parametrize("members", [
    [str(i) for i in range(50)],
    ["m%d" % i for i in range(50)],
    ["m%d" % i for i in range(500)],
    [str(i) for i in range(400)],
])
def test_srandmember_counts(r, members):
    r.sadd("s", *members)
    ms = set(members)
    n = len(members)
    assert r.srandmember("s") in ms
    for count in (1, 2, 5, n // 3 - 1, n // 3 + 1, n - 1):
        got = r.srandmember("s", count)
        assert len(got) == count and len(set(got)) == count and set(got) <= ms
    assert sorted(r.srandmember("s", n)) == sorted(members)
    assert sorted(r.srandmember("s", n + 10)) == sorted(members)
    got = r.srandmember("s", -(n * 2))
    assert len(got) == n * 2 and set(got) <= ms
    got = r.srandmember("s", -1)
    assert len(got) == 1 and got[0] in ms
    assert r.scard("s") == n  # nothing removed


def test_srandmember_negative_count_repeats(r):
    r.sadd("s", "a", "b", "c")
    got = r.srandmember("s", -100)
    assert len(got) == 100
    assert set(got) == {"a", "b", "c"}
    r.sadd("one", "x")
    assert r.srandmember("one", -5) == ["x"] * 5


def test_srandmember_edge_replies(resp):
    resp.call("SADD", "s", "a", "b")
    assert resp.call("SRANDMEMBER", "s", "0") == []
    assert resp.call("SRANDMEMBER", "nokey", "5") == []
    assert resp.call("SRANDMEMBER", "nokey", "-5") == []
    assert resp.call("SRANDMEMBER", "nokey") is None
    assert resp.call("SRANDMEMBER", "s", "abc") == NOT_INT
    assert resp.call("SRANDMEMBER", "s", str(LLONG_MIN)) == (
        "error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert resp.call("SRANDMEMBER", "s", "1", "2") == SYNTAX


def test_srandmember_resp3_is_array(resp3):
    resp3.call("SADD", "s", "a", "b", "c")
    assert isinstance(resp3.call("SRANDMEMBER", "s", "2"), list)
    assert isinstance(resp3.call("SRANDMEMBER", "s", "-5"), list)
    assert resp3.call("SRANDMEMBER", "nokey", "3") == []
    assert resp3.call("SRANDMEMBER", "nokey") is None


@pytest.mark.parametrize("kind", ["intset", "small", "hashtable"])
def test_srandmember_distribution(r, kind):
    if kind == "intset":
        members = [str(i) for i in range(20)]
    elif kind == "small":
        members = ["m%d" % i for i in range(20)]
    else:
        members = ["m%d" % i for i in range(300)]
    r.sadd("s", *members)
    counts = {}
    for _ in range(200):
        for m in r.srandmember("s", 5 if kind != "hashtable" else 30):
            counts[m] = counts.get(m, 0) + 1
        for m in r.srandmember("s", -10):
            counts[m] = counts.get(m, 0) + 1
    assert set(counts) <= set(members)
    if kind != "hashtable":
        # 100 expected per member.
        assert set(counts) == set(members)
        assert all(30 < v < 220 for v in counts.values()), counts


# ---------------------------------------------------------- set algebra

def seed(r):
    r.sadd("i1", *range(0, 20))          # intset
    r.sadd("i2", *range(10, 30))         # intset
    r.sadd("l1", "a", "b", "c", 1, 2)    # small
    r.sadd("l2", "b", "c", "d", 2, 3)    # small
    r.sadd("h1", *(["x%d" % i for i in range(200)] + ["a", "b", "1"]))  # hashtable
    r.sadd("h2", *(["x%d" % i for i in range(100, 300)] + ["b", "c", "1"]))


def test_sinter(r):
    seed(r)
    assert r.sinter("i1", "i2") == {str(i) for i in range(10, 20)}
    assert r.sinter("l1", "l2") == {"b", "c", "2"}
    assert r.sinter("h1", "h2") == {"x%d" % i for i in range(100, 200)} | {"b", "1"}
    assert r.sinter("l1", "h1") == {"a", "b", "1"}
    assert r.sinter("i1", "l1") == {"1", "2"}
    assert r.sinter("i1", "l1", "h1") == {"1"}
    assert r.sinter("l1", "l1") == {"a", "b", "c", "1", "2"}
    assert r.sinter("l1") == {"a", "b", "c", "1", "2"}
    assert r.sinter("l1", "nokey") == set()
    assert r.sinter("nokey") == set()


def test_sunion_sdiff(r):
    seed(r)
    assert r.sunion("i1", "i2") == {str(i) for i in range(30)}
    assert r.sunion("l1", "l2", "nokey") == {"a", "b", "c", "d", "1", "2", "3"}
    assert r.sunion("nokey") == set()
    assert r.sdiff("i1", "i2") == {str(i) for i in range(10)}
    assert r.sdiff("l1", "l2") == {"a", "1"}
    assert r.sdiff("l1", "l2", "i1") == {"a"}
    assert r.sdiff("h1", "h2") == {"x%d" % i for i in range(100)} | {"a"}
    assert r.sdiff("h2", "l1", "h1") == {"x%d" % i for i in range(200, 300)}
    assert r.sdiff("l1", "nokey") == {"a", "b", "c", "1", "2"}
    assert r.sdiff("nokey", "l1") == set()
    assert r.sdiff("l1", "l1") == set()
    assert r.sdiff("l1", "l2", "l1") == set()
    # Both algorithms: a big first set against a small one and vice versa.
    assert r.sdiff("h1", "l1") == {"x%d" % i for i in range(200)}
    assert r.sdiff("l1", "h1", "h2", "i2") == {"2"}


def test_sdiff_fuzz_against_python(r):
    import random
    rnd = random.Random(5)
    for _ in range(30):
        sets = []
        for k in range(4):
            kind = rnd.choice(["int", "str", "mix"])
            n = rnd.choice([0, 3, 20, 150])
            if kind == "int":
                ms = {str(rnd.randint(0, 60)) for _ in range(n)}
            elif kind == "str":
                ms = {"s%d" % rnd.randint(0, 60) for _ in range(n)}
            else:
                ms = {rnd.choice(["s%d", "%d"]) % rnd.randint(0, 60) for _ in range(n)}
            r.delete("k%d" % k)
            if ms:
                r.sadd("k%d" % k, *ms)
            sets.append(ms)
        keys = ["k0", "k1", "k2", "k3"]
        assert r.sdiff(*keys) == sets[0] - sets[1] - sets[2] - sets[3]
        assert r.sunion(*keys) == sets[0] | sets[1] | sets[2] | sets[3]
        assert r.sinter("k0", "k1") == sets[0] & sets[1]
        assert r.sdiffstore("d", *keys) == len(sets[0] - sets[1] - sets[2] - sets[3])
        assert r.smembers("d") == sets[0] - sets[1] - sets[2] - sets[3]
        assert r.sintercard(2, ["k0", "k1"]) == len(sets[0] & sets[1])


def test_store_variants(r):
    seed(r)
    assert r.sinterstore("d", "l1", "l2") == 3
    assert r.smembers("d") == {"b", "c", "2"}
    assert r.sunionstore("d", "i1", "i2") == 30
    assert r.smembers("d") == {str(i) for i in range(30)}
    assert r.sdiffstore("d", "l1", "l2") == 2
    assert r.smembers("d") == {"a", "1"}
    # The destination may be a source.
    assert r.sunionstore("l1", "l1", "l2") == 7
    assert r.smembers("l1") == {"a", "b", "c", "d", "1", "2", "3"}
    assert r.sinterstore("l1", "l1", "i1") == 3
    assert r.smembers("l1") == {"1", "2", "3"}


def test_store_overwrites_any_type_and_ttl(r):
    seed(r)
    r.set("d", "string")
    r.expire("d", 100)
    assert r.sunionstore("d", "l1") == 5
    assert r.type("d") == "set"
    assert r.ttl("d") == -1
    r.set("d", "string")
    assert r.sinterstore("d", "l1", "l2") == 3
    assert r.type("d") == "set"
    r.set("d", "string")
    assert r.sdiffstore("d", "l1", "l2") == 2
    assert r.type("d") == "set"


def test_store_empty_result_deletes_destination(r):
    seed(r)
    for cmd in (lambda: r.sinterstore("d", "l1", "nokey"), lambda: r.sinterstore("d", "i2", "h2"),
                lambda: r.sunionstore("d", "nokey", "nokey2"), lambda: r.sdiffstore("d", "l1", "l1"),
                lambda: r.sdiffstore("d", "nokey", "l1"), lambda: r.sdiffstore("d", "i1", "i1", "l2")):
        r.set("d", "x")
        assert cmd() == 0
        assert r.exists("d") == 0
        assert cmd() == 0  # no destination: still 0, nothing created
        assert r.exists("d") == 0


def test_store_result_encodings(r):
    seed(r)
    r.sinterstore("d", "i1", "i2")
    assert enc(r, "d") == "intset"
    r.sunionstore("d", "i1", "i2")
    assert enc(r, "d") == "intset"
    r.sdiffstore("d", "i1", "i2")
    assert enc(r, "d") == "intset"
    r.sunionstore("d", "l1", "l2")
    assert enc(r, "d") == small_enc(r)
    # 102 and 101 members: small enough for a listpack.
    assert r.sinterstore("d", "h1", "h2") == 102
    assert enc(r, "d") == small_enc(r)
    assert r.sdiffstore("d", "h1", "h2") == 101
    assert enc(r, "d") == small_enc(r)
    assert r.sunionstore("d", "h1") == 203
    assert enc(r, "d") == "hashtable"
    assert r.sinterstore("d", "h1", "h1") == 203
    assert enc(r, "d") == "hashtable"
    # Results become compact again when small.
    r.sinterstore("d", "h1", "l1")
    assert r.smembers("d") == {"a", "b", "1"}
    assert enc(r, "d") == small_enc(r)
    r.sdiffstore("d", "h1", "h2")
    r.sunionstore("d2", "l2", "i1")
    assert enc(r, "d2") == small_enc(r)


def test_store_integer_results_from_hashtables(r):
    """An intersection that holds only integers is stored as an intset even
    when the sources are hashtables (7.2+; 7.0 used an intset too)."""
    r.sadd("h1", *(list(range(300)) + ["a"]))
    r.sadd("h2", *(list(range(100, 400)) + ["a"]))
    assert enc(r, "h1") == "hashtable"
    assert r.sinterstore("d", "h1", "h2") == 201
    r.srem("d", "a")
    assert r.sinterstore("d", "h1", "h2", "i") == 0
    r.sadd("i", *range(150, 160))
    assert r.sinterstore("d", "h1", "h2", "i") == 10
    assert enc(r, "d") == "intset"
    r.sadd("g1", *range(600))
    r.sadd("g2", *range(600))
    assert enc(r, "g1") == "hashtable"
    assert r.sinterstore("d", "g1", "g2") == 600
    assert enc(r, "d") == "hashtable"
    assert r.sunionstore("d", "g1") == 600
    assert enc(r, "d") == "hashtable"


def test_store_encodings_with_low_thresholds(r):
    need72(r)
    r.config_set("set-max-listpack-entries", 3)
    r.config_set("set-max-intset-entries", 4)
    r.sadd("a", "p", "q")
    r.sadd("b", "r", "s")
    assert r.sunionstore("d", "a", "b") == 4
    assert enc(r, "d") == "hashtable"
    r.sadd("n1", 1, 2, 3)
    r.sadd("n2", 4, 5)
    assert r.sunionstore("d", "n1", "n2") == 5
    assert enc(r, "d") == "hashtable"
    r.sadd("n3", 4)
    assert r.sunionstore("d", "n1", "n3") == 4
    assert enc(r, "d") == "intset"
    assert r.sinterstore("d", "a", "a") == 2
    assert enc(r, "d") == "listpack"


def test_sintercard(resp):
    resp.call("SADD", "a", "1", "2", "3", "x", "y")
    resp.call("SADD", "b", "2", "3", "x", "z")
    assert resp.call("SINTERCARD", "2", "a", "b") == 3
    assert resp.call("SINTERCARD", "1", "a") == 5
    assert resp.call("SINTERCARD", "2", "a", "b", "LIMIT", "0") == 3
    assert resp.call("SINTERCARD", "2", "a", "b", "limit", "2") == 2
    assert resp.call("SINTERCARD", "2", "a", "b", "LIMIT", "10") == 3
    assert resp.call("SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "5") == 3
    assert resp.call("SINTERCARD", "2", "a", "nokey") == 0
    assert resp.call("SINTERCARD", "1", "nokey") == 0
    assert resp.call("SINTERCARD", "2", "a", "a") == 5


def test_sintercard_errors(resp):
    resp.call("SADD", "a", "1")
    numkeys = ("error", "ERR numkeys should be greater than 0")
    assert resp.call("SINTERCARD", "0", "a") == numkeys
    assert resp.call("SINTERCARD", "-1", "a") == numkeys
    assert resp.call("SINTERCARD", "abc", "a") == numkeys
    assert resp.call("SINTERCARD", "3", "a", "b") == (
        "error", "ERR Number of keys can't be greater than number of args")
    assert resp.call("SINTERCARD", "1", "a", "LIMIT", "-1") == ("error", "ERR LIMIT can't be negative")
    assert resp.call("SINTERCARD", "1", "a", "LIMIT", "x") == ("error", "ERR LIMIT can't be negative")
    assert resp.call("SINTERCARD", "1", "a", "LIMIT") == SYNTAX
    assert resp.call("SINTERCARD", "1", "a", "b") == SYNTAX
    assert resp.call("SINTERCARD", "1", "a", "FOO", "1") == SYNTAX


def test_sintercard_movable_keys(resp):
    assert resp.call("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1") == [b"a", b"b"]
    assert resp.call("COMMAND", "GETKEYS", "SINTERSTORE", "d", "a", "b") == [b"d", b"a", b"b"]
    assert resp.call("COMMAND", "GETKEYS", "SMOVE", "a", "b", "m") == [b"a", b"b"]
    info = resp.call("COMMAND", "INFO", "SINTERCARD")[0]
    assert info[0] == b"sintercard" and info[1] == -3
    assert "movablekeys" in info[2] and "readonly" in info[2]
    for name, arity_, first, last, step in (("sadd", -3, 1, 1, 1), ("smove", 4, 1, 2, 1),
                                            ("sinterstore", -3, 1, -1, 1), ("sscan", -3, 1, 1, 1),
                                            ("spop", -2, 1, 1, 1), ("sunion", -2, 1, -1, 1)):
        info = resp.call("COMMAND", "INFO", name)[0]
        assert info[1] == arity_ and info[3:6] == [first, last, step], name


def test_multi_slot_algebra_is_consistent(r):
    """Keys in different slots (the dispatcher locks all of them)."""
    for i in range(10):
        r.sadd("key%d" % i, *range(i, i + 20))
    assert r.sinter(*["key%d" % i for i in range(10)]) == {str(i) for i in range(9, 20)}
    assert r.sunionstore("out", *["key%d" % i for i in range(10)]) == 29
    assert r.sintercard(10, ["key%d" % i for i in range(10)]) == 11


def test_many_keys(r):
    keys = ["k%d" % i for i in range(40)]
    for i, k in enumerate(keys):
        r.sadd(k, "common", "own%d" % i)
    assert r.sinter(*keys) == {"common"}
    assert len(r.sunion(*keys)) == 41
    assert r.sdiff(*keys) == {"own0"}
    assert r.sintercard(40, keys) == 1


# ------------------------------------------------------------------- SSCAN

def test_sscan_small_encodings_return_everything(r, resp):
    need72(r)
    resp.call("SADD", "i", *range(50))
    cur, items = resp.call("SSCAN", "i", "0")
    assert cur == b"0" and sorted(int(x) for x in items) == list(range(50))
    resp.call("SADD", "l", "a", "b", "c", "1")
    cur, items = resp.call("SSCAN", "l", "0", "COUNT", "1")
    assert cur == b"0" and sorted(items) == [b"1", b"a", b"b", b"c"]
    cur, items = resp.call("SSCAN", "l", "0", "MATCH", "[ab]")
    assert cur == b"0" and sorted(items) == [b"a", b"b"]
    cur, items = resp.call("SSCAN", "i", "0", "MATCH", "1*")
    assert cur == b"0" and sorted(int(x) for x in items) == [1] + list(range(10, 20))
    assert resp.call("SSCAN", "nokey", "0") == [b"0", []]


def test_sscan_hashtable_full_iteration(r):
    members = {"m%d" % i for i in range(1000)}
    r.sadd("h", *members)
    assert enc(r, "h") == "hashtable"
    seen = []
    cur = 0
    calls = 0
    while True:
        cur, items = r.sscan("h", cur, count=37)
        seen.extend(items)
        calls += 1
        if cur == 0:
            break
    assert set(seen) == members
    assert calls > 5
    # MATCH filters but iteration still covers everything.
    got = set()
    cur = 0
    while True:
        cur, items = r.sscan("h", cur, match="m1*", count=100)
        got.update(items)
        if cur == 0:
            break
    assert got == {m for m in members if m.startswith("m1")}


def test_sscan_survives_resize(r):
    r.sadd("h", *["m%d" % i for i in range(500)])
    seen = set()
    cur, items = r.sscan("h", 0, count=20)
    seen.update(items)
    r.sadd("h", *["n%d" % i for i in range(3000)])   # grows the table
    while cur != 0:
        cur, items = r.sscan("h", cur, count=50)
        seen.update(items)
    assert {"m%d" % i for i in range(500)} <= seen
    seen = set()
    cur, items = r.sscan("h", 0, count=20)
    seen.update(items)
    r.srem("h", *["n%d" % i for i in range(3000)])   # shrinks it
    while cur != 0:
        cur, items = r.sscan("h", cur, count=50)
        seen.update(items)
    assert {"m%d" % i for i in range(500)} <= seen


def test_sscan_errors(resp):
    resp.call("SADD", "s", "a", "b")
    assert resp.call("SSCAN", "s", "abc") == ("error", "ERR invalid cursor")
    assert resp.call("SSCAN", "s", "0", "COUNT", "0") == SYNTAX
    assert resp.call("SSCAN", "s", "0", "COUNT", "-1") == SYNTAX
    assert resp.call("SSCAN", "s", "0", "COUNT", "x") == NOT_INT
    assert resp.call("SSCAN", "s", "0", "COUNT") == SYNTAX
    assert resp.call("SSCAN", "s", "0", "MATCH") == SYNTAX
    assert resp.call("SSCAN", "s", "0", "TYPE", "string") == SYNTAX
    assert resp.call("SSCAN", "s", "0", "FOO", "1") == SYNTAX
    # Options are parsed after the key lookup: a missing key never errs.
    assert resp.call("SSCAN", "nokey", "0", "COUNT", "0") == [b"0", []]
    assert resp.call("SSCAN", "nokey", "abc") == ("error", "ERR invalid cursor")
    assert resp.call("SSCAN", "s", "18446744073709551615")[0] == b"0"
    assert resp.call("SSCAN", "s", "18446744073709551616") == ("error", "ERR invalid cursor")


def test_sscan_7_4_cursor_and_novalues(r, resp):
    if IS_REDIS and server_version(r) < (7, 4, 0):
        pytest.skip("7.4 cursor/NOVALUES rules")
    resp.call("SADD", "s", "a")
    assert resp.call("SSCAN", "s", "-1") == ("error", "ERR invalid cursor")
    assert resp.call("SSCAN", "s", "0", "NOVALUES") == ("error", "ERR NOVALUES option can only be used in HSCAN")


def test_sscan_7_0_novalues_is_syntax_error(r, resp):
    if not IS_REDIS or server_version(r) >= (7, 4, 0):
        pytest.skip("7.0 rule")
    resp.call("SADD", "s", "a")
    assert resp.call("SSCAN", "s", "0", "NOVALUES") == SYNTAX


def test_sscan_integer_members_in_hashtable(r):
    r.sadd("h", *range(1000))
    r.sadd("h", "x")
    seen = set()
    cur = 0
    while True:
        cur, items = r.sscan("h", cur, match="99*")
        seen.update(items)
        if cur == 0:
            break
    assert seen == {"99"} | {str(i) for i in range(990, 1000)}


# ------------------------------------------------------------ stats, misc

def test_keyspace_stats_reads_only(r):
    r.config_resetstat()
    r.sadd("s", "a")          # write lookup: not counted
    r.srem("s", "zz")
    r.spop("nokey")
    r.sismember("s", "a")     # hit
    r.scard("nokey")          # miss
    r.smembers("s")           # hit
    r.sinter("s", "nokey")    # hit + miss
    assert int(info_field(r, "stats", "keyspace_hits")) == 3
    assert int(info_field(r, "stats", "keyspace_misses")) == 2


def test_expired_set_is_absent(r):
    r.sadd("s", "a", "b")
    r.pexpire("s", 1)
    import time
    time.sleep(0.02)
    assert r.scard("s") == 0
    assert r.sadd("s", "c") == 1
    assert r.smembers("s") == {"c"}
    assert r.ttl("s") == -1


def test_flushall_and_del_big_sets(r):
    for k in range(5):
        r.sadd("big%d" % k, *["m%d" % i for i in range(2000)])
    assert r.delete("big0", "big1") == 2
    assert r.unlink("big2") == 1
    r.flushall()
    assert r.dbsize() == 0


# ------------------------------------------- small sets kept in the key
# HotKV stores a small intset/listpack inside the key's own allocation and
# moves it out and back on writes; these check every transition keeps the
# contents, the TTL and the encoding Redis reports.

def test_inline_int_set_grows_to_hashtable_and_shrinks(r):
    model = set()
    for i in range(600):           # past set-max-intset-entries (512)
        assert r.sadd("s", i * 1000003) == 1
        model.add(str(i * 1000003))
        if i % 37 == 0 or i in (510, 511, 512, 513):
            assert r.scard("s") == len(model)
            assert r.sismember("s", str(i * 1000003))
    assert r.smembers("s") == model
    assert enc(r, "s") == "hashtable"
    for i in range(595):
        assert r.srem("s", i * 1000003) == 1
        model.discard(str(i * 1000003))
    assert r.smembers("s") == model
    assert enc(r, "s") == "hashtable"  # never converted back
    # A fresh small one, widened from 16- to 64-bit members one at a time.
    for v in (1, -2, 70000, -80000, 2 ** 40, -(2 ** 62), 3):
        r.sadd("w", v)
    assert r.smembers("w") == {"1", "-2", "70000", "-80000", str(2 ** 40), str(-(2 ** 62)), "3"}
    assert enc(r, "w") == "intset"


def test_inline_string_set_grows_past_listpack_and_shrinks(r):
    model = set()
    for i in range(200):           # past set-max-listpack-entries (128)
        m = "member-%d-%s" % (i, "x" * (i % 50))
        assert r.sadd("s", m) == 1
        model.add(m)
        if i % 9 == 0:
            assert r.scard("s") == len(model)
            assert r.sismember("s", m)
    assert r.smembers("s") == model
    assert enc(r, "s") == "hashtable"
    # Big members: a small listpack that no longer fits the key, then does.
    model = set()
    for i in range(12):
        m = ("%02d" % i) * 30      # 60 bytes: listpack, but a big one
        r.sadd("b", m)
        model.add(m)
        assert r.smembers("b") == model
    assert enc(r, "b") == small_enc(r)
    for m in sorted(model):
        r.srem("b", m)
        model.discard(m)
        assert r.smembers("b") == model
    assert r.exists("b") == 0


def test_inline_intset_converts_on_string_member(r):
    r.sadd("s", *range(10))
    assert enc(r, "s") == "intset"
    r.sadd("s", "abc")
    assert enc(r, "s") == small_enc(r)
    assert r.smembers("s") == {str(i) for i in range(10)} | {"abc"}
    r.sadd("s", "y" * 100)         # longer than set-max-listpack-value
    assert enc(r, "s") == "hashtable"
    assert r.scard("s") == 12


@pytest.mark.parametrize("members", [[1, 2, 3, 4], ["a", "bb", "ccc", "12"]])
def test_inline_set_keeps_ttl_through_writes(r, members):
    r.sadd("s", *members)
    r.pexpire("s", 100000)
    for i in range(40):            # grows: the key is moved to bigger allocations
        r.sadd("s", "%s%d" % ("" if isinstance(members[0], int) else "m", 1000 + i))
        assert 0 < r.pttl("s") <= 100000
    for i in range(38):
        r.srem("s", "%s%d" % ("" if isinstance(members[0], int) else "m", 1000 + i))
    assert 0 < r.pttl("s") <= 100000
    assert r.scard("s") == len(members) + 2
    r.persist("s")
    r.sadd("s", "z")
    assert r.ttl("s") == -1
    r.pexpire("s", 5)
    import time
    time.sleep(0.03)
    assert r.exists("s") == 0
    assert r.sadd("s", "fresh") == 1
    assert r.smembers("s") == {"fresh"}


def test_inline_set_copy_rename_move(r):
    r.sadd("i", 1, 2, 3)
    r.sadd("l", "a", "b", "c")
    r.expire("l", 1000)
    assert r.copy("i", "i2") == 1
    assert r.copy("l", "l2") == 1
    r.sadd("i2", 4)
    r.srem("l2", "a")
    assert r.smembers("i") == {"1", "2", "3"}
    assert r.smembers("i2") == {"1", "2", "3", "4"}
    assert r.smembers("l") == {"a", "b", "c"}
    assert r.smembers("l2") == {"b", "c"}
    assert enc(r, "i2") == "intset"
    r.rename("l", "l3")
    assert r.exists("l") == 0
    assert 0 < r.ttl("l3") <= 1000
    r.sadd("l3", "d")
    assert r.smembers("l3") == {"a", "b", "c", "d"}
    assert r.move("i2", 1) is True
    r.select(1)
    try:
        r.sadd("i2", 5)
        assert r.smembers("i2") == {"1", "2", "3", "4", "5"}
        assert r.copy("i2", "i", destination_db=0) is False   # exists there
        r.flushdb()
    finally:
        r.select(0)
    assert r.exists("i2") == 0
    assert r.copy("i", "l3", replace=True) == 1                # over an inline key
    assert r.smembers("l3") == {"1", "2", "3"}
    assert r.ttl("l3") == -1


@pytest.mark.parametrize("members", [list(range(8)), ["m%d" % i for i in range(8)]])
def test_spop_empties_inline_set(r, members):
    r.sadd("s", *members)
    got = set()
    while r.exists("s"):
        got.add(r.spop("s"))
    assert got == {str(m) for m in members}
    r.sadd("s", *members)
    assert set(r.spop("s", 3)) | set(r.smembers("s")) == {str(m) for m in members}
    assert r.scard("s") == 5
    assert len(r.spop("s", 5)) == 5
    assert r.exists("s") == 0
    r.sadd("s", *members)
    assert len(r.spop("s", 100)) == 8
    assert r.exists("s") == 0


def test_spop_count_turns_hashtable_back_small(r):
    r.sadd("s", *["m%d" % i for i in range(300)])
    r.expire("s", 1000)
    left = set(r.smembers("s")) - set(r.spop("s", 295))
    assert r.smembers("s") == left and len(left) == 5
    assert enc(r, "s") == small_enc(r)
    assert 0 < r.ttl("s") <= 1000
    r.sadd("s", "extra")
    assert r.smembers("s") == left | {"extra"}


def test_smove_between_inline_sets(r):
    r.sadd("a", 1, 2)
    r.sadd("b", "x")
    assert r.smove("a", "b", 1) is True
    assert r.smove("a", "b", 9) is False
    assert r.smove("a", "c", 2) is True          # a emptied, c created
    assert r.exists("a") == 0
    assert r.smembers("b") == {"1", "x"}
    assert r.smembers("c") == {"2"}
    assert enc(r, "c") == "intset"
    assert r.smove("b", "c", "x") is True
    assert r.smembers("c") == {"2", "x"}
    assert r.smembers("b") == {"1"}


def test_store_into_inline_sources(r):
    r.sadd("a", 1, 2, 3, 4)
    r.sadd("b", 3, 4, 5)
    r.sadd("c", "x", "3")
    assert r.sunionstore("a", "a", "b") == 5
    assert r.smembers("a") == {"1", "2", "3", "4", "5"}
    assert enc(r, "a") == "intset"
    assert r.sinterstore("b", "a", "b", "c") == 1
    assert r.smembers("b") == {"3"}
    assert r.sdiffstore("c", "c", "a") == 1
    assert r.smembers("c") == {"x"}
    assert r.sdiffstore("c", "c", "c") == 0
    assert r.exists("c") == 0
    assert r.sunionstore("big", *["a"] * 3, "b") == 5
    r.sadd("h", *["m%d" % i for i in range(300)])
    assert r.sinterstore("a", "h", "h") == 300     # inline destination replaced by a big set
    assert enc(r, "a") == "hashtable"
    assert r.sdiffstore("a", "a", "h") == 0
    assert r.exists("a") == 0


def test_memory_usage_of_small_sets(r):
    r.sadd("i", *range(10))
    r.sadd("l", *["m%07d" % i for i in range(10)])
    r.sadd("bigi", *range(400))
    small_i, small_l = r.memory_usage("i"), r.memory_usage("l")
    assert 0 < small_i < r.memory_usage("bigi")
    assert 0 < small_l < 1000
    r.sadd("i", 10)
    assert r.memory_usage("i") >= small_i - 16


def test_inline_sets_random_ops_match_model(r):
    import random
    rnd = random.Random(11)
    keys = ["k%d" % i for i in range(4)]
    model = {}

    def member():
        kind = rnd.randrange(4)
        if kind == 0:
            return str(rnd.randrange(-50, 50))
        if kind == 1:
            return str(rnd.randrange(-2 ** 40, 2 ** 40))
        if kind == 2:
            return "s%d" % rnd.randrange(30)
        return "L" * rnd.randrange(20, 70) + str(rnd.randrange(5))

    def get(k):
        return set(model.get(k, set()))

    def put(k, v):
        if v:
            model[k] = v
        else:
            model.pop(k, None)

    for step in range(2500):
        k, k2 = rnd.choice(keys), rnd.choice(keys)
        op = rnd.randrange(12)
        cur = get(k)
        if op <= 3:
            ms = {member() for _ in range(rnd.randrange(1, 4))}
            assert r.sadd(k, *ms) == len(ms - cur)
            put(k, cur | ms)
        elif op <= 5:
            ms = {member() for _ in range(rnd.randrange(1, 3))} | set(rnd.sample(sorted(cur), min(2, len(cur))))
            assert r.srem(k, *ms) == len(ms & cur)
            put(k, cur - ms)
        elif op == 6:
            got = set(r.spop(k, rnd.randrange(1, 4)))
            assert got <= cur
            put(k, cur - got)
        elif op == 7 and cur:
            m = rnd.choice(sorted(cur))
            assert r.smove(k, k2, m) is True
            put(k, cur - {m})
            put(k2, get(k2) | {m})
        elif op == 8:
            assert r.sunionstore(k, k, k2) == len(cur | get(k2))
            put(k, cur | get(k2))
        elif op == 9:
            assert r.sinterstore(k2, k, k2) == len(cur & get(k2))
            put(k2, cur & get(k2))
        elif op == 10 and cur and k != k2:
            assert r.copy(k, k2, replace=True) == 1
            put(k2, cur)
        elif op == 11 and cur and k != k2:
            assert r.rename(k, k2)
            put(k2, cur)
            put(k, set())
        if step % 25 == 0:
            for kk in keys:
                assert r.smembers(kk) == get(kk), (step, kk)
    for kk in keys:
        assert r.smembers(kk) == model.get(kk, set())
