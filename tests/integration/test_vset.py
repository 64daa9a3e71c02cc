"""Vector sets (issue 8): VADD VREM VSIM VCARD VDIM VEMB VINFO VLINKS
VSETATTR VGETATTR VRANDMEMBER VISMEMBER VRANGE with Redis 8.4's replies
(RESP2 and RESP3) and error strings, recall against the exact answer
(VSIM TRUTH), recall under VADD/VREM churn, concurrent searches while the
set changes, FILTER, and the generic key commands (DEL EXPIRE RENAME COPY
MULTI/EXEC EVAL WATCH TYPE OBJECT MEMORY) on vector sets.

Debian's redis-server (7.0) has no vector sets: the module is skipped with
HOTKV_SERVER=redis."""
import math
import random
import shutil
import struct
import threading
import time

import pytest

from conftest import MODE, Resp, Server
from helpers import IS_SANITIZER

pytestmark = pytest.mark.skipif(MODE == "redis", reason="Redis 7.0 has no vector sets")

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
# Sizes: smaller under ASan/TSan (same checks, fewer vectors).
N_RECALL = 600 if IS_SANITIZER else 2000
N_QUERIES = 20 if IS_SANITIZER else 60


@pytest.fixture(scope="module")
def server():
    s = Server(threads=2)
    yield s
    assert s.stop() == 0


def conn(server, proto=2, timeout=20):
    c = Resp(server.port, timeout=timeout)
    if proto == 3:
        assert isinstance(c.call("HELLO", "3"), dict)
    return c


@pytest.fixture
def r(server):
    c = conn(server)
    c.call("FLUSHALL")
    yield c
    c.close()


@pytest.fixture
def r3(server):
    c = conn(server, 3)
    c.call("FLUSHALL")
    yield c
    c.close()


def err(reply):
    assert isinstance(reply, tuple) and reply[0] == "error", reply
    return reply[1]


def fp32(vec):
    return struct.pack("%df" % len(vec), *vec)


def pipeline(c, cmds):
    """Send every command at once, then read every reply."""
    out = bytearray()
    for args in cmds:
        out += b"*%d\r\n" % len(args)
        for a in args:
            if not isinstance(a, bytes):
                a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
    c.s.sendall(bytes(out))
    return [c.read() for _ in cmds]


def rand_vec(rng, dim):
    return [rng.gauss(0, 1) for _ in range(dim)]


def normalize(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else v


def add_many(c, key, vecs, names=None, opts=()):
    names = names or ["e%d" % i for i in range(len(vecs))]
    replies = pipeline(c, [["VADD", key, "FP32", fp32(v), n] + list(opts) for v, n in zip(vecs, names)])
    for rep in replies:
        assert rep in (0, 1, True, False), rep
    return names


def recall(c, key, queries, count=10, extra=()):
    """Mean overlap of VSIM with VSIM TRUTH over the queries."""
    cmds = []
    for q in queries:
        cmds.append(["VSIM", key, "FP32", fp32(q), "COUNT", count] + list(extra))
        cmds.append(["VSIM", key, "FP32", fp32(q), "COUNT", count, "TRUTH"])
    rep = pipeline(c, cmds)
    hits = total = 0
    for i in range(0, len(rep), 2):
        got, truth = rep[i], rep[i + 1]
        assert isinstance(got, list) and isinstance(truth, list), (got, truth)
        hits += len(set(got) & set(truth))
        total += len(truth)
    return hits / total


def vinfo(c, key):
    rep = c.call("VINFO", key)
    if isinstance(rep, dict):
        return {k: v for k, v in rep.items()}
    return dict(zip(rep[::2], rep[1::2]))


# --------------------------------------------------------------- VADD ---
def test_vadd_vcard_vdim_vismember_resp2(r):
    assert r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "a") == 1
    assert r.call("VADD", "v", "FP32", fp32([0, 1, 0]), "b") == 1
    assert r.call("VADD", "v", "VALUES", 3, 0, 1, 0, "b") == 0  # update
    assert r.call("VCARD", "v") == 2
    assert r.call("VDIM", "v") == 3
    assert r.call("VISMEMBER", "v", "a") == 1
    assert r.call("VISMEMBER", "v", "zz") == 0
    assert r.call("TYPE", "v") == "vectorset"
    assert r.call("OBJECT", "ENCODING", "v") == b"raw"


def test_vadd_booleans_resp3(r3):
    assert r3.call("VADD", "v", "VALUES", 2, 1, 0, "a") is True
    assert r3.call("VADD", "v", "VALUES", 2, 1, 1, "a") is False
    assert r3.call("VISMEMBER", "v", "a") is True
    assert r3.call("VISMEMBER", "v", "b") is False
    assert r3.call("VISMEMBER", "nokey", "b") is False
    assert r3.call("VSETATTR", "v", "a", '{"x":1}') is True
    assert r3.call("VSETATTR", "v", "zz", '{"x":1}') is False
    assert r3.call("VREM", "v", "zz") is False
    assert r3.call("VREM", "v", "a") is True
    assert r3.call("EXISTS", "v") == 0


@pytest.mark.parametrize("args", [
    ["FP32", b"\x00\x00\x80", "a"],                 # not a multiple of 4
    ["FP32", b"", "a"],
    ["VALUES", "x", 1, "a"],
    ["VALUES", 0, "a", "b"],
    ["VALUES", 2, 1, "x", "a"],
    ["VALUES", 65537, 1, "a"],
    ["VALUES", 5, 1, 2, "a"],                       # fewer values than announced
    ["FOO", 1, 2, "a"],
    ["REDUCE", 0, "VALUES", 2, 1, 0, "a"],
    ["REDUCE", "x", "VALUES", 2, 1, 0, "a"],
    ["REDUCE", 3, "VALUES", 2, 1, 0, "a"],          # reduce above the dimension
    ["VALUES", 2, "nan", 1, "a"],
    ["VALUES", 2, "inf", 1, "a"],
])
def test_vadd_invalid_vector(r, args):
    assert err(r.call("VADD", "v", *args)) == "ERR invalid vector specification"
    assert r.call("EXISTS", "v") == 0


def test_vadd_option_errors(r):
    assert err(r.call("VADD", "v", "VALUES", 2, 1, 0)) == "ERR wrong number of arguments for 'vadd' command"
    assert err(r.call("VADD", "v", "VALUES")) == "ERR wrong number of arguments for 'vadd' command"
    for ef in (0, -1, 1000001, "x"):
        assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "EF", ef)) == "ERR invalid EF"
    for m in (3, 4097, "x"):
        assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "M", m)) == "ERR invalid M"
    assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "FOO")) == "ERR invalid option after element"
    # An option missing its value is an unknown option (Redis's parser).
    assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "EF")) == "ERR invalid option after element"
    assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "SETATTR")) == "ERR invalid option after element"
    assert r.call("EXISTS", "v") == 0
    # Every accepted option at once (CAS is accepted and inserts at once).
    assert r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "CAS", "NOQUANT", "EF", 500, "SETATTR", '{"a":1}',
                  "M", 8) == 1
    info = vinfo(r, "v")
    assert info["quant-type"] == "f32" and info["hnsw-m"] == 8
    assert r.call("VGETATTR", "v", "a") == b'{"a":1}'


def test_vadd_mismatch_errors(r):
    assert r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "a", "NOQUANT", "M", 8) == 1
    assert err(r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "b", "M", 8)) == \
        "ERR asked quantization mismatch with existing vector set"
    assert err(r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "b", "BIN", "M", 8)) == \
        "ERR asked quantization mismatch with existing vector set"
    assert err(r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "b", "NOQUANT")) == \
        "ERR asked M value mismatch with existing vector set"
    assert err(r.call("VADD", "v", "VALUES", 2, 1, 0, "b", "NOQUANT", "M", 8)) == \
        "ERR Vector dimension mismatch - got 2 but set has 3"
    assert err(r.call("VADD", "v", "REDUCE", 2, "VALUES", 3, 1, 0, 0, "b", "NOQUANT", "M", 8)) == \
        "ERR cannot add projection to existing set without projection"
    assert r.call("VADD", "v", "VALUES", 3, 0, 1, 0, "b", "NOQUANT", "M", 8) == 1
    assert r.call("VCARD", "v") == 2
    # Default quantisation is Q8; Q8 repeats it.
    assert r.call("VADD", "q", "VALUES", 2, 1, 0, "a") == 1
    assert r.call("VADD", "q", "VALUES", 2, 0, 1, "b", "Q8") == 1
    assert err(r.call("VADD", "q", "VALUES", 2, 0, 1, "c", "NOQUANT")) == \
        "ERR asked quantization mismatch with existing vector set"


def test_vadd_wrongtype(r):
    r.call("SET", "s", "x")
    assert err(r.call("VADD", "s", "VALUES", 2, 1, 0, "a")) == WRONGTYPE
    # The vector is checked before the key (Redis's order).
    assert err(r.call("VADD", "s", "VALUES", 2, 1, "a")) == "ERR invalid vector specification"


def test_update_replaces_vector_keeps_attributes(r):
    r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "a", "NOQUANT", "SETATTR", '{"k":1}')
    r.call("VADD", "v", "VALUES", 3, 0, 0, 1, "b", "NOQUANT")
    assert r.call("VADD", "v", "VALUES", 3, 0, 2, 0, "a", "NOQUANT") == 0
    assert [float(x) for x in r.call("VEMB", "v", "a")] == pytest.approx([0, 2, 0], abs=1e-6)
    assert r.call("VGETATTR", "v", "a") == b'{"k":1}'
    assert r.call("VSIM", "v", "VALUES", 3, 0, 1, 0, "COUNT", 1) == [b"a"]
    # SETATTR on an update replaces the attributes; an empty one removes them.
    r.call("VADD", "v", "VALUES", 3, 0, 2, 0, "a", "NOQUANT", "SETATTR", '{"k":2}')
    assert r.call("VGETATTR", "v", "a") == b'{"k":2}'
    r.call("VADD", "v", "VALUES", 3, 0, 2, 0, "a", "NOQUANT", "SETATTR", "")
    assert r.call("VGETATTR", "v", "a") is None
    assert vinfo(r, "v")["attributes-count"] == 0
    assert r.call("VCARD", "v") == 2


# --------------------------------------------------------------- VREM ---
def test_vrem_deletes_key_when_empty(r):
    assert r.call("VREM", "nokey", "a") == 0
    r.call("VADD", "v", "VALUES", 2, 1, 0, "a")
    r.call("VADD", "v", "VALUES", 2, 0, 1, "b")
    assert r.call("VREM", "v", "zz") == 0
    assert r.call("VREM", "v", "a") == 1
    assert r.call("VREM", "v", "a") == 0
    assert r.call("VCARD", "v") == 1
    assert r.call("VREM", "v", "b") == 1
    assert r.call("EXISTS", "v") == 0
    assert err(r.call("VREM", "v")) == "ERR wrong number of arguments for 'vrem' command"
    r.call("SET", "s", "x")
    assert err(r.call("VREM", "s", "a")) == WRONGTYPE


# -------------------------------------------------------- missing keys ---
def test_missing_key_replies(r, r3):
    for c in (r, r3):
        assert c.call("VSIM", "nokey", "VALUES", 2, 1, 0) == []
        # Redis answers the empty set before looking at the arguments.
        assert c.call("VSIM", "nokey", "FOO", "bar") == []
        assert err(c.call("VDIM", "nokey")) == "ERR key does not exist"
        assert c.call("VCARD", "nokey") == 0
        assert c.call("VEMB", "nokey", "a") is None
        assert c.call("VLINKS", "nokey", "a") is None
        assert c.call("VINFO", "nokey") is None
        assert c.call("VGETATTR", "nokey", "a") is None
        assert c.call("VRANDMEMBER", "nokey") is None
        assert c.call("VRANDMEMBER", "nokey", 3) == []
        assert c.call("VRANGE", "nokey", "-", "+") == []
        assert c.call("VSETATTR", "nokey", "a", "{}") in (0, False)
    # RESP2 null shapes: $-1 for an element, *-1 for VINFO.
    c = r
    c.send("VINFO", "nokey")
    assert c._line() == b"*-1"
    c.send("VEMB", "nokey", "a")
    assert c._line() == b"$-1"


def test_wrongtype_both_ways(r):
    r.call("SET", "s", "x")
    cmds = [
        ["VSIM", "s", "VALUES", 2, 1, 0], ["VCARD", "s"], ["VDIM", "s"], ["VEMB", "s", "a"],
        ["VLINKS", "s", "a"], ["VINFO", "s"], ["VSETATTR", "s", "a", "{}"], ["VGETATTR", "s", "a"],
        ["VRANDMEMBER", "s"], ["VRANDMEMBER", "s", 2], ["VISMEMBER", "s", "a"], ["VRANGE", "s", "-", "+"],
        ["VREM", "s", "a"], ["VADD", "s", "VALUES", 1, 1, "a"],
    ]
    for cmd in cmds:
        assert err(r.call(*cmd)) == WRONGTYPE, cmd
    r.call("VADD", "v", "VALUES", 2, 1, 0, "a")
    for cmd in (["GET", "v"], ["LPUSH", "v", "x"], ["SADD", "v", "x"], ["HGET", "v", "f"], ["ZCARD", "v"],
                ["XLEN", "v"], ["APPEND", "v", "x"]):
        assert err(r.call(*cmd)) == WRONGTYPE, cmd


# --------------------------------------------------------------- VSIM ---
@pytest.fixture
def small(r):
    """Six 3-d vectors, some with attributes."""
    r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "x", "SETATTR", '{"n":1}')
    r.call("VADD", "v", "VALUES", 3, 0.9, 0.1, 0, "x2", "SETATTR", '{"n":2}')
    r.call("VADD", "v", "VALUES", 3, 0, 1, 0, "y")
    r.call("VADD", "v", "VALUES", 3, 0, 0, 1, "z", "SETATTR", '{"n":3}')
    r.call("VADD", "v", "VALUES", 3, -1, 0, 0, "mx")
    r.call("VADD", "v", "VALUES", 3, 0.5, 0.5, 0, "xy", "SETATTR", "not json")
    return r


def test_vsim_order_scores_resp2(small):
    r = small
    res = r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "WITHSCORES")
    names, scores = res[::2], [float(s) for s in res[1::2]]
    assert names[0] == b"x" and names[1] == b"x2" and names[-1] == b"mx"
    assert len(names) == 6
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(1.0, abs=0.01)
    assert scores[-1] == pytest.approx(0.0, abs=0.01)
    assert dict(zip(names, scores))[b"y"] == pytest.approx(0.5, abs=0.01)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 2) == [b"x", b"x2"]
    assert r.call("VSIM", "v", "FP32", fp32([0, 0, 1]), "COUNT", 1) == [b"z"]
    assert r.call("VSIM", "v", "ELE", "y", "COUNT", 1) == [b"y"]
    # EPSILON: only similarity >= 1 - eps.
    got = r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "EPSILON", 0.2)
    assert set(got) == {b"x", b"x2", b"xy"}
    # EF, TRUTH, NOTHREAD are accepted.
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 3, "EF", 1, "NOTHREAD") == [b"x", b"x2", b"xy"]
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 3, "TRUTH") == [b"x", b"x2", b"xy"]
    # A COUNT above the set size returns the whole set.
    assert len(r.call("VSIM", "v", "ELE", "x", "COUNT", 1000)) == 6


def test_vsim_withattribs_shapes(small, server):
    r = small
    res = r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 3, "WITHATTRIBS")
    assert res == [b"x", b'{"n":1}', b"x2", b'{"n":2}', b"xy", b"not json"]
    res = r.call("VSIM", "v", "ELE", "y", "COUNT", 1, "WITHSCORES", "WITHATTRIBS")
    assert res[0] == b"y" and float(res[1]) == pytest.approx(1.0, abs=0.01) and res[2] is None
    res = r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 2, "WITHATTRIBS", "WITHSCORES")
    assert len(res) == 6 and res[0] == b"x" and res[2] == b'{"n":1}' and res[3] == b"x2"
    r3 = conn(server, 3)
    try:
        m = r3.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 2, "WITHSCORES")
        assert isinstance(m, dict) and list(m) == [b"x", b"x2"]
        assert m[b"x"] == pytest.approx(1.0, abs=0.01) and isinstance(m[b"x"], float)
        m = r3.call("VSIM", "v", "VALUES", 3, 0, 1, 0, "COUNT", 2, "WITHATTRIBS")
        assert m == {b"y": None, b"xy": b"not json"}
        m = r3.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 1, "WITHSCORES", "WITHATTRIBS")
        assert list(m) == [b"x"] and m[b"x"][1] == b'{"n":1}' and m[b"x"][0] == pytest.approx(1.0, abs=0.01)
        # Without WITH* options RESP3 is a plain array.
        assert r3.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "COUNT", 1) == [b"x"]
    finally:
        r3.close()


def test_vsim_errors(small):
    r = small
    bad = [
        (["COUNT", 0], "ERR invalid COUNT"), (["COUNT", -1], "ERR invalid COUNT"), (["COUNT", "x"], "ERR invalid COUNT"),
        (["EPSILON", 0], "ERR invalid EPSILON"), (["EPSILON", -1], "ERR invalid EPSILON"),
        (["EPSILON", "x"], "ERR invalid EPSILON"),
        (["EF", 0], "ERR invalid EF"), (["EF", 1000001], "ERR invalid EF"), (["EF", "x"], "ERR invalid EF"),
        (["FILTER-EF", 0], "ERR invalid FILTER-EF"), (["FILTER-EF", "x"], "ERR invalid FILTER-EF"),
        (["FOO"], "ERR syntax error in VSIM command"), (["COUNT"], "ERR syntax error in VSIM command"),
        (["FILTER"], "ERR syntax error in VSIM command"),
    ]
    for extra, msg in bad:
        assert err(r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, *extra)) == msg, extra
    assert err(r.call("VSIM", "v", "ELE", "nope")) == "ERR element not found in set"
    assert err(r.call("VSIM", "v", "VALUES", 2, 1, 0)) == "ERR Vector dimension mismatch - got 2 but set has 3"
    assert err(r.call("VSIM", "v", "FP32", fp32([1, 0, 0, 0]))) == \
        "ERR Vector dimension mismatch - got 4 but set has 3"
    for args in (["FOO", "x"], ["VALUES", 3, 1, 0], ["FP32", b"abc"], ["VALUES", "x", 1], ["REDUCE", 2, "VALUES"]):
        assert err(r.call("VSIM", "v", *args)) == "ERR invalid vector specification", args
    assert err(r.call("VSIM", "v", "VALUES")) == "ERR wrong number of arguments for 'vsim' command"
    msg = err(r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n >"))
    assert msg.startswith("ERR syntax error in FILTER expression near: "), msg


def test_vsim_filter(small):
    r = small
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n >= 2") == [b"x2", b"z"]
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n == 1 or .n == 3", "WITHATTRIBS") == \
        [b"x", b'{"n":1}', b"z", b'{"n":3}']
    # No attributes or invalid JSON: never a match, never an error.
    # An expression that reads no attribute matches every element that has
    # attributes, even invalid JSON (Redis reads the JSON only for selectors).
    assert set(r.call("VSIM", "v", "VALUES", 3, 0, 1, 0, "FILTER", "1")) == {b"x", b"x2", b"z", b"xy"}
    assert r.call("VSIM", "v", "VALUES", 3, 0, 1, 0, "FILTER", ".n") == [b"z", b"x2", b"x"] or \
        set(r.call("VSIM", "v", "VALUES", 3, 0, 1, 0, "FILTER", ".n")) == {b"x", b"x2", b"z"}
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n > 100") == []
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n >= 1", "COUNT", 1, "TRUTH") == [b"x"]
    # The last FILTER wins.
    assert r.call("VSIM", "v", "VALUES", 3, 1, 0, 0, "FILTER", ".n == 1", "FILTER", ".n == 3") == [b"z"]


def test_filter_end_to_end(r):
    rng = random.Random(7)
    genres = ["action", "drama", "comedy"]
    cmds, attrs = [], {}
    for i in range(400):
        a = {"year": 1950 + i % 70, "genre": genres[i % 3], "rating": (i * 7) % 10}
        attrs["m%d" % i] = a
        js = '{"year": %d, "genre": "%s", "rating": %d}' % (a["year"], a["genre"], a["rating"])
        cmds.append(["VADD", "movies", "FP32", fp32(rand_vec(rng, 16)), "m%d" % i, "SETATTR", js])
    pipeline(r, cmds)
    q = fp32(rand_vec(rng, 16))
    res = r.call("VSIM", "movies", "FP32", q, "COUNT", 20, "FILTER", '.year > 1990 and .genre == "action"',
                 "WITHATTRIBS")
    names = res[::2]
    assert 0 < len(names) <= 20
    for n in names:
        a = attrs[n.decode()]
        assert a["year"] > 1990 and a["genre"] == "action"
    want = r.call("VSIM", "movies", "FP32", q, "COUNT", 20, "FILTER", '.year > 1990 and .genre == "action"',
                  "TRUTH")
    assert len(set(names) & set(want)) >= 15
    for expr, pred in [
        ('.rating * 2 > 15', lambda a: a["rating"] * 2 > 15),
        ('.genre in ["drama", "comedy"] and not (.year < 2000)', lambda a: a["genre"] != "action" and a["year"] >= 2000),
        ('(.year - 2000) ** 2 < 25', lambda a: (a["year"] - 2000) ** 2 < 25),
    ]:
        got = r.call("VSIM", "movies", "FP32", q, "COUNT", 400, "FILTER", expr, "TRUTH")
        assert set(x.decode() for x in got) == {k for k, a in attrs.items() if pred(a)}, expr
    # FILTER-EF bounds the nodes visited: a tiny effort finds fewer.
    few = r.call("VSIM", "movies", "FP32", q, "COUNT", 50, "FILTER", ".rating == 3", "FILTER-EF", 10)
    many = r.call("VSIM", "movies", "FP32", q, "COUNT", 50, "FILTER", ".rating == 3", "FILTER-EF", 100000)
    assert len(few) <= len(many) and len(many) >= 35
    for n in few + many:
        assert attrs[n.decode()]["rating"] == 3


# ----------------------------------------------------- VEMB / VINFO ---
def test_vemb_denormalised_and_raw(r, r3):
    r.call("VADD", "f", "VALUES", 3, 3, 0, 4, "a", "NOQUANT")
    assert [float(x) for x in r.call("VEMB", "f", "a")] == pytest.approx([3, 0, 4], abs=1e-5)
    raw = r.call("VEMB", "f", "a", "RAW")
    assert raw[0] == "f32" and len(raw) == 3
    assert struct.unpack("3f", raw[1]) == pytest.approx((0.6, 0, 0.8), abs=1e-6)
    assert float(raw[2]) == pytest.approx(5.0, abs=1e-5)
    r.call("VADD", "q", "VALUES", 4, 1, -2, 0.5, 4, "a")
    assert [float(x) for x in r.call("VEMB", "q", "a")] == pytest.approx([1, -2, 0.5, 4], abs=0.05)
    raw = r.call("VEMB", "q", "a", "raw")
    assert raw[0] == "int8" and len(raw) == 4 and len(raw[1]) == 4
    q8 = struct.unpack("4b", raw[1])
    assert max(abs(x) for x in q8) == 127
    l2 = math.sqrt(1 + 4 + 0.25 + 16)
    assert float(raw[2]) == pytest.approx(l2, abs=1e-4)
    assert float(raw[3]) == pytest.approx(4 / l2, abs=1e-4)  # range = max |component| of the unit vector
    r.call("VADD", "b", "VALUES", 3, 0.5, -2, 3, "a", "BIN")
    assert [float(x) for x in r.call("VEMB", "b", "a")] == [1.0, -1.0, 1.0]
    raw = r.call("VEMB", "b", "a", "RAW")
    assert raw[0] == "bin" and len(raw) == 3
    assert err(r.call("VEMB", "f", "a", "FOO")) == "ERR invalid option"
    assert r.call("VEMB", "f", "zz") is None
    emb3 = r3.call("VEMB", "f", "a")
    assert all(isinstance(x, float) for x in emb3) and emb3 == pytest.approx([3, 0, 4], abs=1e-5)


def test_vinfo_fields(r, r3):
    r.call("VADD", "v", "VALUES", 3, 1, 0, 0, "a", "M", 8, "NOQUANT", "SETATTR", '{"a":1}')
    r.call("VADD", "v", "VALUES", 3, 0, 1, 0, "b", "M", 8, "NOQUANT")
    rep = r.call("VINFO", "v")
    assert rep[::2] == ["quant-type", "hnsw-m", "vector-dim", "projection-input-dim", "size", "max-level",
                        "attributes-count", "vset-uid", "hnsw-max-node-uid"]
    info = dict(zip(rep[::2], rep[1::2]))
    assert info["quant-type"] == "f32" and info["hnsw-m"] == 8 and info["vector-dim"] == 3
    assert info["projection-input-dim"] == 0 and info["size"] == 2 and info["attributes-count"] == 1
    assert info["max-level"] >= 0 and isinstance(info["vset-uid"], int) and info["hnsw-max-node-uid"] >= 2
    m = r3.call("VINFO", "v")
    assert isinstance(m, dict) and m["size"] == 2
    r.call("VADD", "w", "VALUES", 2, 1, 0, "a", "BIN")
    assert vinfo(r, "w")["quant-type"] == "bin"
    r.call("VADD", "u", "VALUES", 2, 1, 0, "a")
    assert vinfo(r, "u")["quant-type"] == "int8" and vinfo(r, "u")["hnsw-m"] == 16
    assert vinfo(r, "u")["vset-uid"] != vinfo(r, "w")["vset-uid"]


def test_vlinks(r, r3):
    rng = random.Random(3)
    add_many(r, "v", [rand_vec(rng, 8) for _ in range(50)])
    names = {b"e%d" % i for i in range(50)}
    levels = r.call("VLINKS", "v", "e0")
    assert isinstance(levels, list) and len(levels) >= 1
    for lvl in levels:
        assert set(lvl) <= names and b"e0" not in lvl
    assert 0 < len(levels[-1]) <= 32  # level 0 last, at most 2*M links
    ws = r.call("VLINKS", "v", "e0", "WITHSCORES")
    assert len(ws) == len(levels)
    assert ws[-1][::2] == levels[-1]
    assert all(0.0 <= float(s) <= 1.0 for s in ws[-1][1::2])
    # Links are bidirectional: every level-0 neighbour links back.
    for n in levels[-1]:
        assert b"e0" in r.call("VLINKS", "v", n)[-1]
    m = r3.call("VLINKS", "v", "e0", "WITHSCORES")
    assert isinstance(m[-1], dict) and list(m[-1]) == levels[-1]
    assert err(r.call("VLINKS", "v", "e0", "FOO")) == "ERR wrong number of arguments for 'vlinks' command"
    assert err(r.call("VLINKS", "v", "e0", "WITHSCORES", "x")) == \
        "ERR wrong number of arguments for 'vlinks' command"
    assert r.call("VLINKS", "v", "zz") is None


def test_vsetattr_vgetattr(r):
    r.call("VADD", "v", "VALUES", 2, 1, 0, "a")
    assert r.call("VGETATTR", "v", "a") is None
    assert r.call("VSETATTR", "v", "a", '{"x": 1}') == 1
    assert r.call("VGETATTR", "v", "a") == b'{"x": 1}'
    assert vinfo(r, "v")["attributes-count"] == 1
    assert r.call("VSETATTR", "v", "a", '{"x": 2}') == 1
    assert vinfo(r, "v")["attributes-count"] == 1
    assert r.call("VSETATTR", "v", "a", "") == 1
    assert r.call("VGETATTR", "v", "a") is None
    assert vinfo(r, "v")["attributes-count"] == 0
    assert r.call("VSETATTR", "v", "zz", "{}") == 0
    assert r.call("VGETATTR", "v", "zz") is None
    blob = b'{"bin": "\x00\xff"}'
    assert r.call("VSETATTR", "v", "a", blob) == 1
    assert r.call("VGETATTR", "v", "a") == blob
    assert err(r.call("VSETATTR", "v", "a")) == "ERR wrong number of arguments for 'vsetattr' command"


# -------------------------------------------------------- VRANDMEMBER ---
def test_vrandmember(r, r3):
    names = [("m%02d" % i).encode() for i in range(30)]
    pipeline(r, [["VADD", "v", "VALUES", 2, i, 1, n] for i, n in enumerate(names)])
    one = r.call("VRANDMEMBER", "v")
    assert one in names
    for cnt in (1, 3, 6, 20, 30):  # few (rejection) and many (walk)
        got = r.call("VRANDMEMBER", "v", cnt)
        assert len(got) == cnt and len(set(got)) == cnt and set(got) <= set(names), cnt
    assert sorted(r.call("VRANDMEMBER", "v", 100)) == names
    got = r.call("VRANDMEMBER", "v", -100)
    assert len(got) == 100 and set(got) <= set(names)
    assert r.call("VRANDMEMBER", "v", 0) == []
    assert err(r.call("VRANDMEMBER", "v", "x")) == "ERR COUNT value is not an integer"
    assert err(r.call("VRANDMEMBER", "v", 1, 2)) == "ERR wrong number of arguments for 'vrandmember' command"
    seen = set(r.call("VRANDMEMBER", "v", -3000))
    assert len(seen) == 30  # uniform enough to hit every element
    assert r3.call("VRANDMEMBER", "v") in names
    # count 0 answers before the key is looked at.
    r.call("SET", "s", "x")
    assert r.call("VRANDMEMBER", "s", 0) == []


def test_vrandmember_most_negative_count(r):
    """The most negative 64-bit count has no magnitude: it is an error on a
    missing key, a set and a key of another type alike (checked before the
    lookup), and the server keeps serving."""
    lowest = str(-(2**63))
    msg = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    assert err(r.call("VRANDMEMBER", "nokey", lowest)) == msg
    pipeline(r, [["VADD", "v", "VALUES", 2, i, 1, "e%d" % i] for i in range(5)])
    assert err(r.call("VRANDMEMBER", "v", lowest)) == msg
    r.call("SET", "s", "x")
    assert err(r.call("VRANDMEMBER", "s", lowest)) == msg
    # one above it is a valid (if huge) request; small negatives still work
    assert len(r.call("VRANDMEMBER", "v", -7)) == 7
    assert r.call("PING") == "PONG"


# ------------------------------------------------------------- VRANGE ---
def test_vrange(r):
    fruits = ["apple", "apricot", "banana", "cherry", "date", "elderberry", "fig", "grape", "honeydew", "kiwi",
              "lemon", "mango", "nectarine", "orange", "papaya", "quince", "raspberry", "strawberry",
              "tangerine", "watermelon"]
    rng = random.Random(5)
    order = fruits[:]
    rng.shuffle(order)
    pipeline(r, [["VADD", "v", "VALUES", 2, rng.random(), rng.random(), f] for f in order])
    dec = lambda rep: [x.decode() for x in rep]
    assert dec(r.call("VRANGE", "v", "[apple", "[grape", 5)) == fruits[:5]
    assert dec(r.call("VRANGE", "v", "(apple", "[cherry", 10)) == ["apricot", "banana", "cherry"]
    assert dec(r.call("VRANGE", "v", "[banana", "(cherry")) == ["banana"]
    assert dec(r.call("VRANGE", "v", "-", "[banana", 10)) == ["apple", "apricot", "banana"]
    assert dec(r.call("VRANGE", "v", "[raspberry", "+")) == fruits[16:]
    assert dec(r.call("VRANGE", "v", "-", "+")) == fruits
    assert dec(r.call("VRANGE", "v", "-", "+", -1)) == fruits
    assert r.call("VRANGE", "v", "-", "+", 0) == []
    assert r.call("VRANGE", "v", "[zebra", "+") == []
    assert dec(r.call("VRANGE", "v", "[app", "(apr")) == ["apple"]
    assert dec(r.call("VRANGE", "v", "[cherry", "[cherry")) == ["cherry"]
    assert r.call("VRANGE", "v", "(cherry", "(cherry") == []
    assert r.call("VRANGE", "v", "[grape", "[apple") == []
    # Iterating with an exclusive start visits each element once.
    seen, cur = [], "-"
    while True:
        batch = dec(r.call("VRANGE", "v", cur, "+", 3))
        seen += batch
        if len(batch) < 3:
            break
        cur = "(" + batch[-1]
    assert seen == fruits
    for args, msg in [(["x", "+"], "ERR invalid start range format"), (["[", "+"], "ERR invalid start range format"),
                      (["", "+"], "ERR invalid start range format"), (["-", "y"], "ERR invalid end range format"),
                      (["-", "("], "ERR invalid end range format"),
                      (["+", "+"], "ERR '-' can only be used as first argument, '+' only as second"),
                      (["-", "-"], "ERR '-' can only be used as first argument, '+' only as second"),
                      (["-", "+", "x"], "ERR invalid COUNT value")]:
        assert err(r.call("VRANGE", "v", *args)) == msg, args
    assert err(r.call("VRANGE", "v", "-")) == "ERR wrong number of arguments for 'vrange' command"
    assert err(r.call("VRANGE", "v", "-", "+", 1, 2)) == "ERR wrong number of arguments for 'vrange' command"


def test_vrange_many_binary_names_and_deletes(r):
    rng = random.Random(11)
    names = list({bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) for _ in range(1500)})
    pipeline(r, [["VADD", "v", "VALUES", 2, rng.random(), rng.random(), n, "EF", 20] for n in names])
    assert r.call("VRANGE", "v", "-", "+") == sorted(names)
    gone = set(rng.sample(names, len(names) // 2))
    pipeline(r, [["VREM", "v", n] for n in gone])
    left = sorted(set(names) - gone)
    assert r.call("VRANGE", "v", "-", "+") == left
    mid = left[len(left) // 2]
    assert r.call("VRANGE", "v", b"[" + mid, "+", 5) == left[len(left) // 2:len(left) // 2 + 5]
    assert r.call("VRANGE", "v", b"(" + mid, "+", 5) == left[len(left) // 2 + 1:len(left) // 2 + 6]
    assert r.call("VCARD", "v") == len(left)


# ------------------------------------------------------------- REDUCE ---
def test_reduce(r):
    rng = random.Random(9)
    vecs = [rand_vec(rng, 100) for _ in range(60)]
    assert r.call("VADD", "p", "REDUCE", 50, "FP32", fp32(vecs[0]), "e0") == 1
    assert r.call("VDIM", "p") == 50
    info = vinfo(r, "p")
    assert info["vector-dim"] == 50 and info["projection-input-dim"] == 100
    assert pipeline(r, [["VADD", "p", "REDUCE", 50, "FP32", fp32(v), "e%d" % i]
                        for i, v in enumerate(vecs) if i]) == [1] * 59
    assert err(r.call("VADD", "p", "REDUCE", 50, "FP32", fp32(vecs[0][:80]), "x")) == \
        "ERR Input dimension mismatch for projection - got 80 but projection expects 100"
    # A later VADD must repeat REDUCE.
    assert err(r.call("VADD", "p", "FP32", fp32(vecs[0]), "x")) == \
        "ERR Vector dimension mismatch - got 100 but set has 50"
    assert err(r.call("VADD", "p", "REDUCE", 40, "FP32", fp32(vecs[0]), "x")) == \
        "ERR Vector dimension mismatch - got 100 but set has 50"
    assert len(r.call("VEMB", "p", "e0")) == 50
    # Queries use full-size vectors (projected), or reduced ones as they are.
    assert r.call("VSIM", "p", "FP32", fp32(vecs[7]), "COUNT", 1) == [b"e7"]
    assert r.call("VSIM", "p", "ELE", "e7", "COUNT", 1) == [b"e7"]
    assert err(r.call("VSIM", "p", "FP32", fp32(vecs[7][:80]))) == \
        "ERR Input dimension mismatch for projection - got 80 but projection expects 100"
    # Deterministic projection: the same VADDs give the same stored vectors.
    r.call("VADD", "p2", "REDUCE", 50, "FP32", fp32(vecs[3]), "e3")
    assert r.call("VEMB", "p2", "e3") == r.call("VEMB", "p", "e3")


# ------------------------------------------------------------- recall ---
def _recall_set(r, key, quant, dim=24, seed=1):
    rng = random.Random(seed)
    vecs = [rand_vec(rng, dim) for _ in range(N_RECALL)]
    add_many(r, key, vecs, opts=[quant])
    assert r.call("VCARD", key) == N_RECALL
    return rng


@pytest.mark.parametrize("quant,floor", [("NOQUANT", 0.97), ("Q8", 0.95), ("BIN", 0.6)])
def test_recall_against_truth(r, quant, floor):
    rng = _recall_set(r, "v", quant)
    queries = [rand_vec(rng, 24) for _ in range(N_QUERIES)]
    rec = recall(r, "v", queries)
    assert rec >= floor, rec
    if quant != "BIN":
        assert recall(r, "v", queries, extra=["EF", 400]) >= max(rec - 0.01, floor)


def test_truth_is_exact(r):
    rng = random.Random(21)
    vecs = [normalize(rand_vec(rng, 8)) for _ in range(300)]
    add_many(r, "v", vecs, opts=["NOQUANT"])
    q = normalize(rand_vec(rng, 8))
    want = sorted(range(300), key=lambda i: -sum(a * b for a, b in zip(q, vecs[i])))[:10]
    res = r.call("VSIM", "v", "FP32", fp32(q), "COUNT", 10, "TRUTH", "WITHSCORES")
    assert res[::2] == [b"e%d" % i for i in want]
    for i, s in zip(want, res[1::2]):
        cos = sum(a * b for a, b in zip(q, vecs[i]))
        assert float(s) == pytest.approx((1 + cos) / 2, abs=1e-5)


def test_churn_keeps_recall(r):
    rng = _recall_set(r, "v", "Q8", seed=4)
    names = ["e%d" % i for i in range(N_RECALL)]
    for rnd in range(3):
        gone = rng.sample(names, len(names) // 3)
        assert all(x == 1 for x in pipeline(r, [["VREM", "v", n] for n in gone]))
        gs = set(gone)
        names = [n for n in names if n not in gs]
        new = ["r%d_%d" % (rnd, i) for i in range(len(gone))]
        add_many(r, "v", [rand_vec(rng, 24) for _ in new], names=new)
        names += new
        assert r.call("VCARD", "v") == N_RECALL
    queries = [rand_vec(rng, 24) for _ in range(N_QUERIES)]
    assert recall(r, "v", queries) >= 0.85
    assert sorted(r.call("VRANGE", "v", "-", "+")) == sorted(n.encode() for n in names)
    # Every element is still reachable from its own vector.
    sample = rng.sample(names, 20)
    rep = pipeline(r, [["VSIM", "v", "ELE", n, "COUNT", 3] for n in sample])
    assert sum(1 for n, got in zip(sample, rep) if n.encode() in got) >= 19


def test_zero_and_duplicate_vectors(r):
    assert r.call("VADD", "v", "VALUES", 3, 0, 0, 0, "zero") == 1
    assert r.call("VADD", "v", "VALUES", 3, 1, 2, 3, "a") == 1
    assert r.call("VADD", "v", "VALUES", 3, 1, 2, 3, "a2") == 1
    assert r.call("VADD", "v", "VALUES", 3, 2, 4, 6, "a3") == 1
    assert set(r.call("VSIM", "v", "VALUES", 3, 1, 2, 3, "COUNT", 3)) == {b"a", b"a2", b"a3"}
    assert len(r.call("VSIM", "v", "VALUES", 3, 0, 0, 0)) == 4
    assert [float(x) for x in r.call("VEMB", "v", "zero")] == [0.0, 0.0, 0.0]


# ------------------------------------------------------- concurrency ---
def test_concurrent_vsim_while_writing(r, server):
    rng = random.Random(13)
    dim = 16
    base = 300 if IS_SANITIZER else 1500
    add_many(r, "v", [rand_vec(rng, dim) for _ in range(base)])
    stop = time.time() + (1.5 if IS_SANITIZER else 2.5)
    errors, counts = [], []

    def reader(seed):
        c = conn(server, 3 if seed % 2 else 2)
        lr = random.Random(seed)
        n = 0
        try:
            while time.time() < stop:
                q = fp32(rand_vec(lr, dim))
                rep = pipeline(c, [["VSIM", "v", "FP32", q, "COUNT", 10, "WITHSCORES"],
                                   ["VSIM", "v", "FP32", q, "COUNT", 5, "FILTER", ".a > 0"],
                                   ["VCARD", "v"]])
                if not isinstance(rep[0], (list, dict)) or not isinstance(rep[1], list) or \
                        not isinstance(rep[2], int):
                    errors.append(rep)
                    return
                if len(rep[0]) not in (10, 20) or len(rep[1]) > 5:
                    errors.append(("size", rep))
                    return
                n += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))
        finally:
            c.close()
        counts.append(n)

    def writer(seed):
        c = conn(server)
        lr = random.Random(seed)
        i = 0
        try:
            while time.time() < stop:
                cmds = []
                for _ in range(20):
                    i += 1
                    cmds.append(["VADD", "v", "FP32", fp32(rand_vec(lr, dim)), "w%d_%d" % (seed, i),
                                 "SETATTR", '{"a": %d}' % (i % 3 - 1)])
                    cmds.append(["VREM", "v", "e%d" % lr.randrange(base)])
                    cmds.append(["VSETATTR", "v", "w%d_%d" % (seed, i), '{"a": 1}'])
                for rep in pipeline(c, cmds):
                    if isinstance(rep, tuple):
                        errors.append(rep)
                        return
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    threads += [threading.Thread(target=writer, args=(100 + s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    assert len(counts) == 4 and min(counts) > 0, counts
    # The set is consistent afterwards: VCARD, VRANGE and searches agree.
    card = r.call("VCARD", "v")
    allnames = r.call("VRANGE", "v", "-", "+")
    assert len(allnames) == card == len(set(allnames))
    assert len(r.call("VSIM", "v", "VALUES", dim, *([1] * dim), "COUNT", card, "EF", card)) == card


def test_vsim_on_deleted_key_race(r, server):
    """DEL / VADD-recreate on one connection while others search the key:
    searches hold a reference, never a freed set."""
    rng = random.Random(17)
    dim = 8
    vecs = [rand_vec(rng, dim) for _ in range(200)]
    stop = time.time() + (1.0 if IS_SANITIZER else 1.5)
    errors = []

    def searcher():
        c = conn(server)
        try:
            while time.time() < stop:
                rep = c.call("VSIM", "v", "FP32", fp32(vecs[0]), "COUNT", 5)
                if not isinstance(rep, list):
                    errors.append(rep)
                    return
        finally:
            c.close()

    ts = [threading.Thread(target=searcher) for _ in range(3)]
    for t in ts:
        t.start()
    c = conn(server)
    try:
        while time.time() < stop:
            add_many(c, "v", vecs[:50])
            c.call("DEL", "v")
    finally:
        c.close()
    for t in ts:
        t.join(30)
    assert not errors, errors[:3]


# ----------------------------------------------------- generic keys ---
def test_del_expire_rename_copy(r):
    r.call("VADD", "v", "VALUES", 2, 1, 0, "a", "SETATTR", '{"x":1}')
    r.call("VADD", "v", "VALUES", 2, 0, 1, "b")
    assert r.call("RENAME", "v", "w") == "OK"
    assert r.call("EXISTS", "v") == 0
    assert r.call("VSIM", "w", "VALUES", 2, 1, 0, "COUNT", 1) == [b"a"]
    assert r.call("COPY", "w", "c") == 1
    assert r.call("VREM", "c", "a") == 1
    assert r.call("VADD", "c", "VALUES", 2, 1, 1, "n") == 1
    assert r.call("VCARD", "w") == 2 and r.call("VCARD", "c") == 2
    assert r.call("VISMEMBER", "w", "a") == 1 and r.call("VISMEMBER", "w", "n") == 0
    assert r.call("VGETATTR", "w", "a") == b'{"x":1}'
    assert r.call("VRANGE", "c", "-", "+") == [b"b", b"n"]
    assert vinfo(r, "c")["vset-uid"] != vinfo(r, "w")["vset-uid"]
    assert r.call("COPY", "w", "c2", "DB", 1) == 1
    r.call("SELECT", 1)
    assert r.call("VCARD", "c2") == 2
    r.call("SELECT", 0)
    assert r.call("DEL", "w") == 1
    assert r.call("VCARD", "c") == 2
    assert r.call("PEXPIRE", "c", 50) == 1
    assert r.call("TTL", "c") in (0, 1)
    time.sleep(0.15)
    assert r.call("VSIM", "c", "VALUES", 2, 1, 0) == []
    assert r.call("EXISTS", "c") == 0
    r.call("VADD", "u", "VALUES", 2, 1, 0, "a")
    assert r.call("UNLINK", "u") == 1
    assert r.call("EXISTS", "u") == 0
    r.call("VADD", "s1", "VALUES", 2, 1, 0, "a")
    found, cur = [], b"0"
    while True:
        cur, keys = r.call("SCAN", cur, "TYPE", "vectorset", "COUNT", 1000)
        found += keys
        if cur == b"0":
            break
    assert found == [b"s1"]


def test_big_set_lazy_free(r):
    r.call("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
    try:
        rng = random.Random(2)
        add_many(r, "big", [rand_vec(rng, 4) for _ in range(300)], opts=["EF", 10])
        assert r.call("DEL", "big") == 1
        assert r.call("EXISTS", "big") == 0
    finally:
        r.call("CONFIG", "SET", "lazyfree-lazy-user-del", "no")


def test_multi_exec_and_watch(r, server):
    assert r.call("MULTI") == "OK"
    assert r.call("VADD", "v", "VALUES", 2, 1, 0, "a") == "QUEUED"
    assert r.call("VADD", "v", "VALUES", 2, 0, 1, "b") == "QUEUED"
    assert r.call("VSIM", "v", "VALUES", 2, 1, 0, "COUNT", 1) == "QUEUED"
    assert r.call("VCARD", "v") == "QUEUED"
    assert r.call("VREM", "v", "b") == "QUEUED"
    assert r.call("EXEC") == [1, 1, [b"a"], 2, 1]
    assert r.call("WATCH", "v") == "OK"
    other = conn(server)
    try:
        assert other.call("VADD", "v", "VALUES", 2, 1, 1, "c") == 1
    finally:
        other.close()
    r.call("MULTI")
    r.call("VCARD", "v")
    assert r.call("EXEC") is None
    # An update (reply 0) is a change too.
    assert r.call("WATCH", "v") == "OK"
    other = conn(server)
    try:
        assert other.call("VADD", "v", "VALUES", 2, 0, 1, "c") == 0
    finally:
        other.close()
    r.call("MULTI")
    r.call("VCARD", "v")
    assert r.call("EXEC") is None
    # A failed VREM is not.
    assert r.call("WATCH", "v") == "OK"
    other = conn(server)
    try:
        assert other.call("VREM", "v", "zz") == 0
    finally:
        other.close()
    r.call("MULTI")
    r.call("VCARD", "v")
    assert r.call("EXEC") == [2]


def test_eval_scripts(r, server):
    script = """
        redis.call('VADD', KEYS[1], 'VALUES', 2, 1, 0, 'a', 'SETATTR', '{"x": 5}')
        redis.call('VADD', KEYS[1], 'VALUES', 2, 0, 1, 'b')
        local sim = redis.call('VSIM', KEYS[1], 'VALUES', 2, 1, 0, 'COUNT', 1, 'WITHSCORES')
        local card = redis.call('VCARD', KEYS[1])
        local f = redis.call('VSIM', KEYS[1], 'VALUES', 2, 0, 1, 'FILTER', '.x == 5')
        return {sim[1], card, f[1], redis.call('VGETATTR', KEYS[1], 'a')}
    """
    assert r.call("EVAL", script, 1, "v") == [b"a", 2, b"a", b'{"x": 5}']
    assert r.call("EVAL", "return redis.call('VREM', KEYS[1], 'a')", 1, "v") == 1
    assert r.call("VCARD", "v") == 1
    # Scripts touching an undeclared vector set key.
    assert r.call("EVAL", "return redis.call('VSIM', 'v', 'VALUES', 2, 0, 1)", 0) == [b"b"]
    e = r.call("EVAL", "return redis.pcall('VADD', 'v', 'VALUES', 3, 0, 1, 0, 'x')", 0)
    assert err(e) == "ERR Vector dimension mismatch - got 3 but set has 2"
    # VSIM inside EXEC inside ... and a script in a transaction.
    r.call("MULTI")
    r.call("EVAL", "return redis.call('VSIM', KEYS[1], 'ELE', 'b')", 1, "v")
    r.call("VSIM", "v", "ELE", "b")
    assert r.call("EXEC") == [[b"b"], [b"b"]]


def test_client_tracking_of_vsim(server, r):
    """VSIM is a read of its key for CLIENT TRACKING (it locks its slot
    itself): a write to the set afterwards invalidates the reader."""
    r.call("VADD", "v", "VALUES", 2, 1, 0, "a")
    t = conn(server, 3)
    try:
        assert t.call("CLIENT", "TRACKING", "on") == "OK"
        assert t.call("VSIM", "v", "VALUES", 2, 1, 0) == [b"a"]
        r.call("VADD", "v", "VALUES", 2, 0, 1, "b")
        push = t.call("PING")
        if push == "PONG":
            push = t.read()
        assert push == ("push", [b"invalidate", [b"v"]])
    finally:
        t.close()


def test_memory_usage_and_budget(r):
    rng = random.Random(8)
    dim, n = 128, (300 if IS_SANITIZER else 1500)
    add_many(r, "v", [rand_vec(rng, dim) for _ in range(n)], names=["%08d" % i for i in range(n)])
    used = r.call("MEMORY", "USAGE", "v")
    assert isinstance(used, int) and used > n * dim  # at least the int8 vectors
    per = used / n
    # Issue budget: raw float vector + 250 bytes (Q8) per element (incl. index).
    assert per <= dim * 4 + 250, per
    # Removing frees the element records (index slots are kept for reuse),
    # adding as many again reuses them: churn does not grow the set.
    pipeline(r, [["VREM", "v", "%08d" % i] for i in range(0, n, 5)])
    after = r.call("MEMORY", "USAGE", "v")
    assert after < used
    add_many(r, "v", [rand_vec(rng, dim) for _ in range(0, n, 5)], names=["n%07d" % i for i in range(0, n, 5)])
    assert r.call("MEMORY", "USAGE", "v") <= used * 1.02


def test_command_info_and_docs(r):
    info = r.call("COMMAND", "INFO", "vadd", "vsim", "vcard", "vrange")
    by = {x[0]: x for x in info}
    assert by[b"vadd"][1] == -5 and by[b"vsim"][1] == -4 and by[b"vcard"][1] == 2 and by[b"vrange"][1] == -4
    assert "write" in by[b"vadd"][2] and "denyoom" in by[b"vadd"][2]
    assert "readonly" in by[b"vsim"][2] and "fast" in by[b"vcard"][2]
    assert by[b"vsim"][3:6] == [1, 1, 1]
    assert r.call("COMMAND", "GETKEYS", "VSIM", "k", "ELE", "x") == [b"k"]
    docs = r.call("COMMAND", "DOCS", "vsim")
    d = dict(zip(docs[1][::2], docs[1][1::2]))
    assert d[b"group"] == b"module" and d[b"since"] == b"8.0.0"
    assert any(dict(zip(a[::2], a[1::2])).get(b"token") == b"FILTER-EF" for a in d[b"arguments"])
    for name in (b"vadd", b"vrem", b"vcard", b"vdim", b"vemb", b"vlinks", b"vinfo", b"vsetattr", b"vgetattr",
                 b"vrandmember", b"vismember", b"vrange"):
        docs = r.call("COMMAND", "DOCS", name)
        assert docs and docs[0] == name


def test_aof_replays_vector_commands():
    """Writes are propagated as the commands themselves: an AOF restart
    rebuilds the set (elements, vectors, attributes, removals, updates)."""
    s = Server("--appendonly", "yes", threads=2)
    try:
        c = conn(s)
        rng = random.Random(31)
        vecs = [rand_vec(rng, 6) for _ in range(40)]
        add_many(c, "v", vecs, opts=["NOQUANT"])
        c.call("VADD", "v", "VALUES", 6, 1, 2, 3, 4, 5, 6, "e1", "NOQUANT", "SETATTR", '{"u":1}')
        c.call("VSETATTR", "v", "e2", '{"y":2}')
        c.call("VREM", "v", "e3")
        c.call("VADD", "p", "REDUCE", 3, "VALUES", 6, 1, 0, 0, 0, 0, 1, "x")
        c.call("SET", "s", "x")
        want = {
            "card": c.call("VCARD", "v"), "e1": c.call("VEMB", "v", "e1"), "a1": c.call("VGETATTR", "v", "e1"),
            "a2": c.call("VGETATTR", "v", "e2"), "range": c.call("VRANGE", "v", "-", "+"),
            "p": c.call("VEMB", "p", "x"), "info": vinfo(c, "p")["projection-input-dim"],
        }
        c.close()
        assert s.stop() == 0
        s2 = Server("--appendonly", "yes", "--dir", s.dir, threads=2)
        try:
            c = conn(s2)
            got = {
                "card": c.call("VCARD", "v"), "e1": c.call("VEMB", "v", "e1"), "a1": c.call("VGETATTR", "v", "e1"),
                "a2": c.call("VGETATTR", "v", "e2"), "range": c.call("VRANGE", "v", "-", "+"),
                "p": c.call("VEMB", "p", "x"), "info": vinfo(c, "p")["projection-input-dim"],
            }
            assert got == want
            assert c.call("VISMEMBER", "v", "e3") == 0
            c.close()
        finally:
            assert s2.stop() == 0
            shutil.rmtree(s2.dir, ignore_errors=True)
    finally:
        if s.proc.poll() is None:
            s.stop()
