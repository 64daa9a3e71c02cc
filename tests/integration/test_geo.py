"""The GEO commands (src/cmd/t_geo.c, src/ds/geohash.c): GEOADD, GEODIST,
GEOHASH, GEOPOS, GEORADIUS[_RO], GEORADIUSBYMEMBER[_RO], GEOSEARCH and
GEOSEARCHSTORE, as Redis 7.2 has them.

Checked: every option and every error text, in Redis's order of checks;
the stored scores (a geo set is a sorted set with 52-bit geohash scores);
RESP2 and RESP3 reply shapes and number texts; STORE / STOREDIST and
GEOSEARCHSTORE (replacing, deleting an emptied destination, the source as
its own destination); keyspace events; propagation (GEOADD is fed as the
ZADD it amounts to, stores as called); COMMAND INFO / GETKEYS.

Then a differential test: 10,000 random points (spread, clustered, and
groups sharing one position so that ties in distance occur) are loaded
into HotKV and into Debian's redis-server, and a few hundred random
queries of every form are sent to both; the raw reply bytes must be
identical (order included, COUNT ANY and unsorted replies too)."""
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from helpers import Resp, Server, free_port


# ------------------------------------------------------------ raw replies --
class RawConn:
    """Pipelines commands and returns each reply's raw RESP bytes."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.buf = b""
        self.pos = 0

    def _fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def _skip(self):
        """Advance self.pos past one reply."""
        while True:
            e = self.buf.find(b"\r\n", self.pos)
            if e >= 0:
                break
            self._fill()
        t = self.buf[self.pos:self.pos + 1]
        head = self.buf[self.pos + 1:e]
        self.pos = e + 2
        if t in (b"$", b"=", b"!"):
            n = int(head)
            if n >= 0:
                while len(self.buf) < self.pos + n + 2:
                    self._fill()
                self.pos += n + 2
        elif t in (b"*", b"~", b">", b"%", b"|"):
            n = int(head) * (2 if t in (b"%", b"|") else 1)
            for _ in range(max(n, 0)):
                self._skip()

    def pipeline(self, cmds):
        self.buf, self.pos = self.buf[self.pos:], 0
        out = []
        for c in cmds:
            out.append(b"*%d\r\n" % len(c))
            for a in c:
                if not isinstance(a, bytes):
                    a = str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        replies = []
        for _ in cmds:
            begin = self.pos
            self._skip()
            replies.append(self.buf[begin:self.pos])
        return replies

    def call(self, *args):
        return self.pipeline([args])[0]

    def close(self):
        self.s.close()


# ------------------------------------------------------------------ basics --
@pytest.fixture
def r(server):
    """A client that returns GEO replies as they come (redis-py's GEO
    callbacks expect its own geo* methods' options)."""
    c = server.client(decode_responses=True)
    for name in list(c.response_callbacks):
        if name.upper().startswith("GEO"):
            del c.response_callbacks[name]
    c.flushall()
    yield c
    c.close()


def errtext(e):
    """The error as the server sent it (redis-py drops a leading "ERR ")."""
    s = str(e.value)
    return s if s.startswith("WRONGTYPE") else "ERR " + s


PALERMO = (13.361389, 38.115556)
CATANIA = (15.087269, 37.502669)


def sicily(r):
    return r.geoadd("Sicily", [PALERMO[0], PALERMO[1], "Palermo", CATANIA[0], CATANIA[1], "Catania"])


def test_geoadd_scores_and_zrange(r):
    assert sicily(r) == 2
    # The scores are Redis's 52-bit geohashes, so ZRANGE shows them.
    assert r.zrange("Sicily", 0, -1, withscores=True) == [("Palermo", 3479099956230698.0),
                                                           ("Catania", 3479447370796909.0)]
    assert r.type("Sicily") == "zset"
    # Edges of the valid area encode too (the north-east corner one past
    # the last cell on each axis, as in Redis).
    assert r.execute_command("GEOADD", "e", "-180", "-85.05112878", "sw", "180", "85.05112878", "ne") == 2
    assert r.zrange("e", 0, -1, withscores=True) == [("sw", 0.0), ("ne", 13510798882111488.0)]
    assert r.geopos("e", "sw", "ne") == [["-179.99999731779098511", "-85.05112751263942528"],
                                         ["180", "85.0511287799999991"]]


def test_geoadd_options(r):
    sicily(r)
    # Moving a member: not added, but changed (CH).
    assert r.execute_command("GEOADD", "Sicily", "13.4", "38.1", "Palermo") == 0
    assert r.execute_command("GEOADD", "Sicily", "CH", "13.5", "38.1", "Palermo") == 1
    assert r.execute_command("GEOADD", "Sicily", "CH", "13.5", "38.1", "Palermo") == 0
    assert r.execute_command("GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "new") == 1
    assert [round(float(x), 1) for x in r.geopos("Sicily", "Palermo")[0]] == [13.5, 38.1]
    assert r.execute_command("GEOADD", "Sicily", "XX", "3", "3", "Palermo", "4", "4", "other") == 0
    assert r.geopos("Sicily", "other") == [None]
    assert [round(float(x), 1) for x in r.geopos("Sicily", "Palermo")[0]] == [3.0, 3.0]
    assert r.execute_command("GEOADD", "Sicily", "XX", "CH", "5", "5", "Palermo") == 1
    assert r.execute_command("GEOADD", "Sicily", "CH", "NX", "6", "6", "Palermo", "7", "7", "n2") == 1
    assert r.execute_command("GEOADD", "nokey", "XX", "1", "1", "a") == 0
    assert r.exists("nokey") == 0


@pytest.mark.parametrize("args,err", [
    (["k", "xx", "nx", "1", "1", "a"], "ERR syntax error"),
    (["k", "gt", "1", "1", "a"], "ERR syntax error"),
    (["k", "1", "1", "a", "2"], "ERR syntax error"),
    (["k", "ch", "ch", "ch"], "ERR syntax error"),
    (["k", "abc", "1", "a"], "ERR value is not a valid float"),
    (["k", "1", " 1", "a"], "ERR value is not a valid float"),
    (["k", "nan", "1", "a"], "ERR value is not a valid float"),
    (["k", "180.1", "1", "a"], "ERR invalid longitude,latitude pair 180.100000,1.000000"),
    (["k", "1", "85.06", "a"], "ERR invalid longitude,latitude pair 1.000000,85.060000"),
    (["k", "-inf", "1", "a"], "ERR invalid longitude,latitude pair -inf,1.000000"),
    (["k", "1", "1", "ok", "1", "-90", "bad"], "ERR invalid longitude,latitude pair 1.000000,-90.000000"),
])
def test_geoadd_errors(r, args, err):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("GEOADD", *args)
    assert errtext(e) == err
    assert r.exists("k") == 0  # nothing added, not even the valid ones


def test_wrong_type_comes_first(r):
    r.set("s", "x")
    for cmd in (["GEOADD", "s", "1", "1", "a"], ["GEOADD", "s", "999", "1", "a"],
                ["GEOPOS", "s", "a"], ["GEOHASH", "s", "a"], ["GEODIST", "s", "a", "b"],
                ["GEORADIUS", "s", "1", "1", "1", "km"], ["GEORADIUS", "s", "999", "1", "1", "km"],
                ["GEORADIUSBYMEMBER", "s", "a", "1", "km"], ["GEORADIUS_RO", "s", "1", "1", "1", "km"],
                ["GEOSEARCH", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
                ["GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"]):
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*cmd)
        if cmd[0] == "GEOADD" and cmd[2] == "999":
            assert "invalid longitude" in str(e.value)  # coordinates are checked before the type
        else:
            assert str(e.value).startswith("WRONGTYPE"), cmd


def test_geopos_geohash_geodist(r):
    sicily(r)
    pos = r.execute_command("GEOPOS", "Sicily", "Palermo", "nope", "Catania")
    assert pos[1] is None
    assert pos[0] == ["13.36138933897018433", "38.11555639549629859"]
    assert r.execute_command("GEOPOS", "Sicily") == []
    assert r.execute_command("GEOPOS", "nokey", "a", "b") == [None, None]
    assert r.execute_command("GEOHASH", "Sicily", "Palermo", "Catania", "x") == ["sqc8b49rny0", "sqdtr74hyu0", None]
    assert r.execute_command("GEOHASH", "nokey", "a") == [None]
    assert r.execute_command("GEOHASH", "Sicily") == []
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania") == "166274.1516"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "km") == "166.2742"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "MI") == "103.3182"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "ft") == "545518.8700"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Palermo") == "0.0000"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "x") is None
    assert r.execute_command("GEODIST", "nokey", "a", "b") is None
    with pytest.raises(redis.ResponseError, match="^unsupported unit provided. please use M, KM, FT, MI$"):
        r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "yd")
    with pytest.raises(redis.ResponseError, match="^unsupported unit"):
        r.execute_command("GEODIST", "nokey", "a", "b", "yd")  # the unit before the key
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "km", "x")
    # A member whose score no GEOADD made still decodes somewhere.
    r.zadd("z", {"neg": -1, "big": 1e300, "frac": 12345.75})
    out = r.execute_command("GEOPOS", "z", "neg", "big", "frac")
    assert all(len(p) == 2 for p in out)


def test_resp3_shapes(server):
    c = Resp(server.port)
    c.call("HELLO", "3")
    c.call("FLUSHALL")
    c.call("GEOADD", "Sicily", *PALERMO, "Palermo", *CATANIA, "Catania")
    assert c.call("GEOPOS", "Sicily", "Palermo", "x") == [[13.361389338970184, 38.1155563954963], None]
    assert c.call("GEODIST", "Sicily", "Palermo", "Catania", "km") == b"166.2742"  # a bulk string
    assert c.call("GEODIST", "Sicily", "Palermo", "x") is None
    assert c.call("GEOHASH", "Sicily", "x") == [None]
    got = c.call("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC",
                 "WITHCOORD", "WITHDIST", "WITHHASH")
    assert got == [[b"Catania", b"56.4413", 3479447370796909, [15.087267458438873, 37.50266842333162]],
                   [b"Palermo", b"190.4424", 3479099956230698, [13.361389338970184, 38.1155563954963]]]
    c.close()
    # The exact RESP3 text of a coordinate.
    rc = RawConn(server.port)
    rc.call("HELLO", "3")
    assert rc.call("GEOPOS", "Sicily", "Palermo") == b"*1\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"
    assert rc.call("GEOPOS", "Sicily", "x") == b"*1\r\n_\r\n"
    rc.close()


def test_searches_basic(r):
    sicily(r)
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "ASC") == ["Catania", "Palermo"]
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC") == ["Palermo", "Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "100", "km") == ["Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "KM", "COUNT", "1") == ["Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "DESC") == ["Palermo"]
    assert r.execute_command("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC") == \
        [["Catania", "56.4413"], ["Palermo", "190.4424"]]
    assert r.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "ASC", "WITHDIST") == \
        [["Palermo", "0.0000"], ["Catania", "166.2742"]]
    assert r.execute_command("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "100", "km") == ["Palermo"]
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km",
                             "ASC", "WITHHASH") == [["Palermo", 3479099956230698], ["Catania", 3479447370796909]]
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m") == []
    assert r.execute_command("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "m") == []
    assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "abc", "zz") == []  # only options are parsed
    assert r.execute_command("GEORADIUS", "nokey", "1", "1", "1", "km") == []
    # COUNT ANY stops at the first hits found (here: the first cell's).
    assert len(r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY")) == 1
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
                             "COUNT", "2", "ANY", "DESC") == ["Palermo", "Catania"]


SEARCH_ERRORS = [
    (["GEORADIUS", "Sicily", "15", "37", "-1", "km"], "ERR radius cannot be negative"),
    (["GEORADIUS", "Sicily", "15", "37", "x", "km"], "ERR need numeric radius"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "yd"], "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (["GEORADIUS", "Sicily", "x", "37", "1", "km"], "ERR value is not a valid float"),
    (["GEORADIUS", "Sicily", "15", "90", "1", "km"], "ERR invalid longitude,latitude pair 15.000000,90.000000"),
    (["GEORADIUS", "nokey", "15", "90", "1", "km"], "ERR invalid longitude,latitude pair 15.000000,90.000000"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT"], "ERR syntax error"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "x"], "ERR value is not an integer or out of range"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "0"], "ERR COUNT must be > 0"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "-3"], "ERR COUNT must be > 0"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY"], "ERR the ANY argument requires COUNT argument"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE"], "ERR syntax error"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "bogus"], "ERR syntax error"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "FROMMEMBER", "Palermo"], "ERR syntax error"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "d", "WITHDIST"],
     "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (["GEORADIUS", "Sicily", "15", "37", "1", "km", "WITHCOORD", "STOREDIST", "d"],
     "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (["GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "d"], "ERR syntax error"),
    (["GEORADIUSBYMEMBER", "Sicily", "nope", "1", "km"], "ERR could not decode requested zset member"),
    (["GEORADIUSBYMEMBER", "Sicily", "nope", "x", "zz"], "ERR could not decode requested zset member"),
    (["GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "zz"],
     "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (["GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "1", "km", "STOREDIST", "d"], "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
    (["geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "WITHDIST", "ASC", "DESC"],
     "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
     "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"],
     "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"],
     "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
     "ERR could not decode requested zset member"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "bogus", "1", "km"],
     "ERR could not decode requested zset member"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "x", "1", "km"], "ERR need numeric width"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "x", "km"], "ERR need numeric height"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "-1", "km"],
     "ERR height or width cannot be negative"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "1", "yd"],
     "ERR unsupported unit provided. please use M, KM, FT, MI"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "1", "1"], "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STORE", "d"], "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STOREDIST"], "ERR syntax error"),
    (["GEOSEARCH", "Sicily", "FROMLONLAT", "1", "100", "BYRADIUS", "1", "km"],
     "ERR invalid longitude,latitude pair 1.000000,100.000000"),
    (["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "ANY"],
     "ERR the ANY argument requires COUNT argument"),
    (["GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "WITHDIST"],
     "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
    (["GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STORE", "x"],
     "ERR syntax error"),
    (["GEOSEARCHSTORE", "d", "Sicily", "BYRADIUS", "1", "km", "STOREDIST", "ASC"],
     "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCHSTORE"),
    (["GEOSEARCH", "Sicily"], "ERR wrong number of arguments for 'geosearch' command"),
    (["GEORADIUS", "Sicily", "1", "1", "1"], "ERR wrong number of arguments for 'georadius' command"),
    (["GEOADD", "Sicily", "1", "1"], "ERR wrong number of arguments for 'geoadd' command"),
    (["GEODIST", "Sicily", "a"], "ERR wrong number of arguments for 'geodist' command"),
]


@pytest.mark.parametrize("cmd,err", SEARCH_ERRORS)
def test_search_errors(r, cmd, err):
    sicily(r)
    r.set("d", "untouched")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*cmd)
    assert errtext(e) == err
    assert r.get("d") == "untouched"


def test_store_and_storedist(r):
    sicily(r)
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst") == 2
    assert r.zrange("dst", 0, -1, withscores=True) == r.zrange("Sicily", 0, -1, withscores=True)
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst") == 2
    assert r.zrange("dst", 0, -1, withscores=True) == [("Catania", pytest.approx(56.4413, abs=1e-4)),
                                                       ("Palermo", pytest.approx(190.4424, abs=1e-4))]
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "STORE", "dst") == 1
    assert r.zrange("dst", 0, -1) == ["Catania"]
    # The last of STORE / STOREDIST wins.
    assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "a", "STOREDIST", "b") == 2
    assert r.exists("a") == 0 and r.zscore("b", "Catania") == pytest.approx(56.4413, abs=1e-4)
    assert r.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", "10", "km", "STOREDIST", "pd") == 1
    assert r.zrange("pd", 0, -1, withscores=True) == [("Palermo", 0.0)]
    # A destination of another type (with a TTL) is replaced.
    r.set("other", "x", ex=100)
    assert r.execute_command("GEOSEARCHSTORE", "other", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200",
                             "km", "DESC", "COUNT", "1") == 1
    assert r.type("other") == "zset" and r.ttl("other") == -1
    assert r.zrange("other", 0, -1, withscores=True) == [("Palermo", 3479099956230698.0)]
    assert r.execute_command("GEOSEARCHSTORE", "other", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400",
                             "km", "STOREDIST") == 2
    assert r.zscore("other", "Palermo") == pytest.approx(190.4424, abs=1e-4)
    # Nothing found, or no source: the destination goes away.
    assert r.execute_command("GEORADIUS", "Sicily", "0", "0", "1", "km", "STORE", "dst") == 0
    assert r.exists("dst") == 0
    assert r.execute_command("GEOSEARCHSTORE", "other", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km") == 0
    assert r.exists("other") == 0
    assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "1", "km", "STORE", "dst") == 0
    # The source as its own destination.
    assert r.execute_command("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "100",
                             "km") == 1
    assert r.zrange("Sicily", 0, -1, withscores=True) == [("Catania", 3479447370796909.0)]
    # Integer members survive the trip.
    r.geoadd("ints", [1, 1, 7, 1.001, 1, 123456789])
    assert r.execute_command("GEOSEARCHSTORE", "ints2", "ints", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km",
                             "ASC") == 2
    assert r.zrange("ints2", 0, -1) == r.zrange("ints", 0, -1)


def test_store_big_result_is_skiplist(r):
    pts = []
    for i in range(300):
        pts += [10 + (i % 20) * 0.001, 10 + (i // 20) * 0.001, "m%d" % i]
    r.geoadd("big", pts)
    assert r.object("encoding", "big") == "skiplist"
    assert r.execute_command("GEOSEARCHSTORE", "d", "big", "FROMLONLAT", "10", "10", "BYRADIUS", "100", "km") == 300
    assert r.object("encoding", "d") == "skiplist"
    assert r.execute_command("GEOSEARCHSTORE", "d", "big", "FROMLONLAT", "10", "10", "BYRADIUS", "100", "km",
                             "COUNT", "10") == 10
    assert r.object("encoding", "d") == "listpack"


def test_keyspace_events(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    p.get_message(timeout=1)
    sicily(r)
    r.execute_command("GEOADD", "Sicily", "NX", "1", "1", "Palermo")  # no change: no event
    r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d1")
    r.execute_command("GEOSEARCHSTORE", "d2", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km")
    r.execute_command("GEOSEARCHSTORE", "d2", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")
    got = []
    deadline = time.time() + 2
    while len(got) < 4 and time.time() < deadline:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            got.append((m["channel"].split(":", 1)[1], m["data"]))
    assert got == [("zadd", "Sicily"), ("georadiusstore", "d1"), ("geosearchstore", "d2"), ("del", "d2")]
    p.close()
    r.config_set("notify-keyspace-events", "")


def test_propagation_as_zadd():
    s = Server("--appendonly", "yes", "--appendfsync", "always", "--appenddirname", "aofdir")
    try:
        c = s.client(decode_responses=True)
        c.response_callbacks.clear()
        c.execute_command("GEOADD", "g", "CH", *PALERMO, "Palermo", *CATANIA, "Catania")
        c.execute_command("GEOADD", "g", "nx", *PALERMO, "Palermo")   # changes nothing: not fed
        c.execute_command("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d")
        c.execute_command("GEORADIUS", "g", "15", "37", "200", "km")  # a read: not fed
        c.execute_command("GEOSEARCHSTORE", "d2", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STOREDIST")
        time.sleep(0.2)
        adir = os.path.join(s.dir, "aofdir")
        data = b""
        for name in sorted(os.listdir(adir)):
            if ".incr." in name:
                with open(os.path.join(adir, name), "rb") as f:
                    data += f.read()
        cmds = []
        i = 0
        while i < len(data):
            e = data.index(b"\r\n", i)
            n = int(data[i + 1:e])
            i = e + 2
            args = []
            for _ in range(n):
                e = data.index(b"\r\n", i)
                ln = int(data[i + 1:e])
                args.append(data[e + 2:e + 2 + ln].decode())
                i = e + 2 + ln + 2
            cmds.append(args)
        cmds = [x for x in cmds if x[0].upper() != "SELECT"]
        assert cmds == [
            ["zadd", "g", "CH", "3479099956230698", "Palermo", "3479447370796909", "Catania"],
            ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"],
            ["GEOSEARCHSTORE", "d2", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "STOREDIST"],
        ]
    finally:
        s.stop()


def test_command_info_and_getkeys(r, server):
    c = Resp(server.port)
    info = c.call("COMMAND", "INFO", "georadius", "geosearchstore", "geoadd", "geopos", "georadius_ro")
    c.close()
    def flags(i):
        return set(x.decode() if isinstance(x, bytes) else x for x in i[2])
    def acl(i):
        return set(x.decode() if isinstance(x, bytes) else x for x in i[6])
    assert info[0][1] == -6 and flags(info[0]) == {"write", "denyoom", "movablekeys"}
    assert info[0][3:6] == [1, 1, 1]
    assert acl(info[0]) == {"@write", "@geo", "@slow"}
    assert info[1][1] == -8 and flags(info[1]) == {"write", "denyoom"} and info[1][3:6] == [1, 2, 1]
    assert info[2][1] == -5 and flags(info[2]) == {"write", "denyoom"}
    assert info[3][1] == -2 and flags(info[3]) == {"readonly"} and acl(info[3]) == {"@read", "@geo", "@slow"}
    assert info[4][1] == -6 and flags(info[4]) == {"readonly"}
    c = Resp(server.port)
    gk = c.call
    # As Redis 7.2's key specs find them: the key after the first STORE, then
    # after the first STOREDIST.
    assert gk("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km", "STORE", "a", "STOREDIST", "b") == \
        [b"k", b"a", b"b"]
    assert gk("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km", "STOREDIST", "b", "STORE", "a") == \
        [b"k", b"a", b"b"]
    assert gk("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km", "COUNT", "3", "STOREDIST", "b") == \
        [b"k", b"b"]
    assert gk("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km") == [b"k"]
    assert gk("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE", "x") == [b"k", b"x"]
    assert gk("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km") == \
        [b"d", b"s"]
    # Key specs as Redis 7.2's: GEORADIUS's source, then the STORE and
    # STOREDIST keywords (from argument 6; 5 for GEORADIUSBYMEMBER).
    for name, start in (("georadius", 6), ("georadiusbymember", 5)):
        specs = c.call("COMMAND", "INFO", name)[0][8]
        assert specs == [
            [b"flags", ["RO", "access"], b"begin_search", [b"type", b"index", b"spec", [b"index", 1]],
             b"find_keys", [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]],
            [b"flags", ["OW", "update"], b"begin_search",
             [b"type", b"keyword", b"spec", [b"keyword", b"STORE", b"startfrom", start]],
             b"find_keys", [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]],
            [b"flags", ["OW", "update"], b"begin_search",
             [b"type", b"keyword", b"spec", [b"keyword", b"STOREDIST", b"startfrom", start]],
             b"find_keys", [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]]
    assert c.call("COMMAND", "GETKEYSANDFLAGS", "GEORADIUS", "k", "1", "1", "1", "km", "STORE", "a") == \
        [[b"k", ["RO", "access"]], [b"a", ["OW", "update"]]]
    # COMMAND DOCS: the store keys point at their key specs.
    docs = c.call("COMMAND", "DOCS", "georadius")[1]
    args = dict(zip(docs[::2], docs[1::2]))[b"arguments"]
    def key_specs(args):
        out = []
        for a in args:
            d = dict(zip(a[::2], a[1::2]))
            if b"key_spec_index" in d:
                out.append(d[b"key_spec_index"])
            out += key_specs(d.get(b"arguments", []))
        return out
    assert key_specs(args) == [0, 1, 2]
    # GEOSEARCHSTORE's key specs: the destination written, the source read.
    specs = c.call("COMMAND", "INFO", "geosearchstore")[0][8]
    assert [(sp[1], sp[3][3][1]) for sp in specs] == [(["OW", "update"], 1), (["RO", "access"], 2)]
    c.close()


def test_store_to_other_slot_in_multi(r):
    # The store key is locked like any key, also inside MULTI and scripts.
    sicily(r)
    p = r.pipeline(transaction=True)
    for i in range(20):
        p.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst%d" % i)
    assert p.execute() == [2] * 20
    assert r.eval("return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'STOREDIST', KEYS[2])",
                  2, "Sicily", "sd") == 2
    assert r.zcard("sd") == 2


# ----------------------------------------------------- against redis-server --
@pytest.fixture(scope="module")
def reference():
    """Debian's redis-server on a free port (in HOTKV_SERVER=redis mode the
    comparison is redis against redis, which must hold too)."""
    exe = shutil.which("redis-server")
    if not exe:
        pytest.skip("redis-server not installed")
    port = free_port()
    d = tempfile.mkdtemp(prefix="hotkv-georef-")
    log = open(os.path.join(d, "log"), "w")
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", d], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.02)
    yield port
    proc.terminate()
    proc.wait(10)
    log.close()
    shutil.rmtree(d, ignore_errors=True)


UNITS = ["m", "km", "ft", "mi", "KM"]


def random_points(rng, n):
    pts = []
    centres = [(rng.uniform(-179, 179), rng.uniform(-80, 80)) for _ in range(12)]
    centres += [(179.9, 10.0), (-179.95, -5.0), (0.0, 84.9), (12.0, -84.99), (0.0, 0.0)]
    i = 0
    while len(pts) < n:
        kind = rng.random()
        if kind < 0.45:
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85.05112878, 85.05112878)
        elif kind < 0.93:
            cx, cy = rng.choice(centres)
            spread = rng.choice([0.001, 0.05, 1.0, 5.0])
            lon = min(180.0, max(-180.0, cx + rng.gauss(0, spread)))
            lat = min(85.05, max(-85.05, cy + rng.gauss(0, spread)))
        else:
            # A group sharing one position: ties in distance.
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85, 85)
            for _ in range(rng.randint(2, 12)):
                pts.append((lon, lat, "dup%d" % i))
                i += 1
            continue
        name = str(i) if rng.random() < 0.3 else "p%d" % i  # integer-looking members too
        pts.append(("%.6f" % lon, "%.6f" % lat, name))
        i += 1
    return pts[:n]


def random_query(rng, key, members):
    kind = rng.random()
    radius = 10 ** rng.uniform(0, 7.3)  # 1 m .. 20,000 km
    unit = rng.choice(UNITS)
    conv = {"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.34}[unit.lower()]
    rtext = "%.3f" % (radius / conv)
    lon, lat = "%.5f" % rng.uniform(-180, 180), "%.5f" % rng.uniform(-85.05, 85.05)
    if rng.random() < 0.4:
        m = rng.choice(members)
        lon, lat = m[0], m[1]
    opts = []
    for o in ("WITHDIST", "WITHCOORD", "WITHHASH"):
        if rng.random() < 0.35:
            opts.append(o)
    order = rng.random()
    if order < 0.3:
        opts.append("ASC")
    elif order < 0.5:
        opts.append("DESC")
    if rng.random() < 0.4:
        opts += ["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50, 200]))]
        if rng.random() < 0.4:
            opts.append("ANY")
    rng.shuffle(opts)
    # keep COUNT n [ANY] together
    if "COUNT" in opts:
        n = [o for o in opts if o.isdigit()]
        opts = [o for o in opts if o not in ("COUNT", "ANY") and not o.isdigit()] + ["COUNT", n[0]] + \
            (["ANY"] if "ANY" in opts else [])
    if kind < 0.2:
        return ["GEORADIUS", key, lon, lat, rtext, unit] + opts
    if kind < 0.3:
        return ["GEORADIUS_RO", key, lon, lat, rtext, unit] + opts
    if kind < 0.45:
        m = rng.choice(members)[2]
        return [rng.choice(["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"]), key, m, rtext, unit] + opts
    frm = ["FROMLONLAT", lon, lat] if rng.random() < 0.6 else ["FROMMEMBER", rng.choice(members)[2]]
    if rng.random() < 0.5:
        by = ["BYRADIUS", rtext, unit]
    else:
        by = ["BYBOX", "%.3f" % (radius * rng.uniform(0.2, 3) / conv), "%.3f" % (radius * rng.uniform(0.2, 3) / conv),
              unit]
    return ["GEOSEARCH", key] + frm + by + opts


def store_query(rng, key, members, dst):
    q = random_query(rng, key, members)
    q = [x for x in q if x not in ("WITHDIST", "WITHCOORD", "WITHHASH")]
    if q[0] == "GEOSEARCH":
        q = ["GEOSEARCHSTORE", dst] + q[1:] + (["STOREDIST"] if rng.random() < 0.5 else [])
    else:
        q[0] = q[0].replace("_RO", "")
        q += [rng.choice(["STORE", "STOREDIST"]), dst]
    return q


def test_against_redis_server(server, reference):
    rng = random.Random(20261201)
    a, b = RawConn(server.port), RawConn(reference)
    for c in (a, b):
        c.call("FLUSHALL")
    pts = random_points(rng, 10000)
    small = random_points(rng, 90)  # a listpack geo set
    loads = []
    for i in range(0, len(pts), 500):
        cmd = ["GEOADD", "big"]
        for p in pts[i:i + 500]:
            cmd += list(p)
        loads.append(cmd)
    cmd = ["GEOADD", "small"]
    for p in small:
        cmd += list(p)
    loads.append(cmd)
    assert a.pipeline(loads) == b.pipeline(loads)
    assert a.call("OBJECT", "ENCODING", "small") == b"$8\r\nlistpack\r\n"
    assert a.call("ZCARD", "big") == b.call("ZCARD", "big")

    queries = []
    for i in range(400):
        key, mem = ("big", pts) if rng.random() < 0.8 else ("small", small)
        queries.append(random_query(rng, key, mem))
    for i in range(60):
        key, mem = ("big", pts) if rng.random() < 0.8 else ("small", small)
        queries.append(store_query(rng, key, mem, "dst"))
        queries.append(["ZRANGE", "dst", "0", "-1", "WITHSCORES"])
    names = [p[2] for p in pts]
    for i in range(100):
        ms = rng.sample(names, 3) + ["missing"]
        queries.append(["GEOPOS", "big"] + ms)
        queries.append(["GEOHASH", "big"] + ms)
        queries.append(["GEODIST", "big", ms[0], ms[1], rng.choice(UNITS)])
    queries.append(["ZRANGE", "big", "0", "-1", "WITHSCORES"])
    queries.append(["ZRANGE", "small", "0", "-1", "WITHSCORES"])
    ra, rb_ = a.pipeline(queries), b.pipeline(queries)
    bad = [(q, x[:300], y[:300]) for q, x, y in zip(queries, ra, rb_) if x != y]
    assert not bad, "%d of %d replies differ, first: %r" % (len(bad), len(queries), bad[0])
    # Many queries should have found something.
    assert sum(1 for q, x in zip(queries, ra) if q[0].startswith("GEO") and len(x) > 8) > 150

    # RESP3 for a sample.
    for c in (a, b):
        c.call("HELLO", "3")
    sample = queries[:120]
    ra, rb_ = a.pipeline(sample), b.pipeline(sample)
    bad = [(q, x[:300], y[:300]) for q, x, y in zip(sample, ra, rb_) if x != y]
    assert not bad, "RESP3: %d replies differ, first: %r" % (len(bad), bad[0])
    a.close()
    b.close()


def test_edge_queries_against_redis(server, reference):
    """Huge and zero radii, poles, the antimeridian, boxes wider than the
    world, ties under COUNT (partial sort)."""
    a, b = RawConn(server.port), RawConn(reference)
    for c in (a, b):
        c.call("FLUSHALL")
    load = ["GEOADD", "w"]
    rng = random.Random(7)
    for i in range(400):
        load += ["%.4f" % rng.uniform(-180, 180), "%.4f" % rng.uniform(-85, 85), "m%d" % i]
    for i in range(60):  # one position, many names
        load += ["10", "10", "same%d" % i]
    for i in range(30):
        load += ["179.9999", "0", "e%d" % i, "-179.9999", "0", "w%d" % i]
    qs = [load]
    for cnt in (1, 5, 7, 8, 30, 41, 59, 60, 61, 100):
        for order in ("ASC", "DESC"):
            qs.append(["GEORADIUS", "w", "10", "10", "100", "km", "COUNT", str(cnt), order, "WITHDIST"])
            qs.append(["GEORADIUS", "w", "10", "10", "5000", "km", "COUNT", str(cnt), order])
            qs.append(["GEOSEARCH", "w", "FROMLONLAT", "10", "10", "BYBOX", "9000", "3000", "km", "COUNT", str(cnt),
                       order])
        qs.append(["GEORADIUS", "w", "10", "10", "100", "km", "COUNT", str(cnt), "ANY"])
    for rad in ("0", "0.0001", "1", "1000", "20000", "40000", "1e9", "inf"):
        qs.append(["GEORADIUS", "w", "10", "10", rad, "km"])
        qs.append(["GEORADIUS", "w", "180", "0", rad, "km", "WITHCOORD"])
        qs.append(["GEORADIUS", "w", "0", "85.05112878", rad, "km", "ASC"])
        qs.append(["GEORADIUS", "w", "-180", "-85.05112878", rad, "km", "DESC", "WITHDIST"])
        qs.append(["GEOSEARCH", "w", "FROMLONLAT", "179", "0", "BYBOX", rad, rad, "km"])
        qs.append(["GEOSEARCH", "w", "FROMMEMBER", "same1", "BYBOX", rad, "1", "km", "ASC"])
    qs.append(["GEOADD", "z", "CH", "1", "1", "a", "-1", "-1", "b"])
    qs.append(["ZADD", "z", "-5", "neg", "1e300", "huge", "1e17", "e17", "4503599627370496", "b52"])
    qs.append(["GEOPOS", "z", "neg", "huge", "e17", "b52", "a"])
    qs.append(["GEOHASH", "z", "neg", "huge", "e17", "b52", "a"])
    qs.append(["GEODIST", "z", "neg", "huge", "km"])
    qs.append(["GEORADIUS", "z", "0", "0", "20000", "km", "WITHCOORD", "WITHHASH"])
    ra, rb_ = a.pipeline(qs), b.pipeline(qs)
    bad = [(q[:8], x[:300], y[:300]) for q, x, y in zip(qs, ra, rb_) if x != y]
    assert not bad, "%d replies differ, first: %r" % (len(bad), bad[0])
    a.close()
    b.close()
