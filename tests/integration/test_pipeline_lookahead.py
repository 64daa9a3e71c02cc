"""Pipelined commands whose keys were looked up ahead (net/worker.c
prefetch_ahead): the look-ahead computes each key's slot and table hash once
and hands them to the command (db_hint), so a pipelined command must land
exactly where the same command sent alone lands.  Each test writes or reads
through one big pipeline and checks the result with commands sent one at a
time, which compute the slot and hash themselves: a key stored under a
wrong slot or hash would be missing there.  Also the per-thread cache of the
last command name (cmd/cmd.c cmd_lookup) under mixed and unknown names."""
import random
import socket

import pytest

from helpers import IS_REDIS, Resp, Server, encode_command


@pytest.fixture(scope="module")
def srv():
    s = Server(threads=2)
    yield s
    assert s.stop() == 0


def _keys(n, seed):
    """Keys of many lengths and shapes: hash tags, binary bytes, a prefix of
    another key, the same length as the next one."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            k = b"key:%012d" % i
        elif kind == 1:
            k = b"{tag%d}:%d" % (i % 7, i)
        elif kind == 2:
            k = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
        elif kind == 3:
            k = b"k%d" % i
        elif kind == 4:
            k = b"k%d" % i + b"x" * rnd.randrange(0, 300)
        else:
            k = b"{}%d{x}" % i
        out.append(k)
    return list(dict.fromkeys(out))  # distinct, in order


def _pipeline(port, cmds, nreplies):
    """Send every command in one write, read nreplies replies (raw)."""
    c = Resp(port, timeout=10)
    c.s.sendall(b"".join(encode_command(*x) for x in cmds))
    out = [c.read() for _ in range(nreplies)]
    c.s.close()
    return out


def test_pipelined_sets_land_where_single_gets_find_them(srv):
    keys = _keys(3000, 1)
    cmds = [("SET", k, b"v:" + k) for k in keys]
    assert _pipeline(srv.port, cmds, len(cmds)) == ["OK"] * len(cmds)
    c = Resp(srv.port)
    for k in keys:
        assert c.call("GET", k) == b"v:" + k, k
    assert c.call("DBSIZE") == len(keys)
    c.call("FLUSHALL")
    c.close()


def test_pipelined_gets_find_single_sets(srv):
    keys = _keys(3000, 2)
    c = Resp(srv.port)
    for k in keys:
        assert c.call("SET", k, b"w:" + k) == "OK"
    absent = [b"absent:%d" % i for i in range(200)]
    cmds = [("GET", k) for k in keys + absent]
    got = _pipeline(srv.port, cmds, len(cmds))
    assert got == [b"w:" + k for k in keys] + [None] * len(absent)
    c.call("FLUSHALL")
    c.close()


def test_mixed_pipeline(srv):
    """Commands whose second argument is not a key (ECHO, CONFIG GET, EVAL's
    script), several keys (MSET, MGET, DEL), and key commands between them,
    in the same batches of the look-ahead."""
    keys = _keys(600, 3)
    script = "return redis.call('get', KEYS[1])"
    cmds, want = [], []
    for i, k in enumerate(keys):
        cmds.append(("SET", k, b"%d" % i))
        want.append("OK")
        cmds.append(("ECHO", k))
        want.append(k)
        cmds.append(("INCR", k))
        want.append(i + 1)
        cmds.append(("EVAL", script, "1", k))
        want.append(b"%d" % (i + 1))
        cmds.append(("CONFIG", "GET", "maxmemory-policy"))
        want.append([b"maxmemory-policy", b"noeviction"])
        j = (i * 7 + 1) % len(keys)
        if i % 3 == 0 and j != i:
            cmds.append(("MSET", k, b"m%d" % i, keys[j], b"n%d" % j))
            want.append("OK")
            cmds.append(("MGET", keys[j], k))
            want.append([b"n%d" % j, b"m%d" % i])
            cmds.append(("DEL", keys[j]))
            want.append(1)
    got = _pipeline(srv.port, cmds, len(cmds))
    for n, (g, w) in enumerate(zip(got, want)):
        assert g == w, (n, cmds[n], g, w)
    # Replay the same sequence one command at a time against Python's model
    # of the keyspace, then compare every key.
    model = {}
    for i, k in enumerate(keys):
        model[k] = b"%d" % (i + 1)
        j = (i * 7 + 1) % len(keys)
        if i % 3 == 0 and j != i:
            model[k] = b"m%d" % i
            model.pop(keys[j], None)
    c = Resp(srv.port)
    for k in keys:
        assert c.call("GET", k) == model.get(k), k
    assert c.call("DBSIZE") == len(model)
    c.call("FLUSHALL")
    c.close()


def test_pipeline_split_across_reads(srv):
    """A pipeline that arrives in pieces: the look-ahead sees only the
    complete commands of each read, and a command cut in half is finished
    by a later read."""
    keys = _keys(800, 4)
    data = b"".join(encode_command("SET", k, b"s" * (i % 50)) for i, k in enumerate(keys))
    c = Resp(srv.port, timeout=10)
    s = c.s
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rnd = random.Random(5)
    pos = 0
    while pos < len(data):
        step = rnd.randrange(1, 700)
        s.sendall(data[pos:pos + step])
        pos += step
    assert [c.read() for _ in keys] == ["OK"] * len(keys)
    s.close()
    r = Resp(srv.port)
    for i, k in enumerate(keys):
        assert r.call("STRLEN", k) == i % 50, k
    r.call("FLUSHALL")
    r.close()


def test_same_length_overwrite_in_place_and_resize(srv):
    """SET of a value of the length the key already holds is written in
    place; other lengths may move the entry.  Every step is read back."""
    c = Resp(srv.port)
    cmds, want = [], []
    for rnd_len in [10, 10, 300, 300, 5, 5, 5000, 5000, 9000, 9000, 0, 0, 10]:
        for i in range(50):
            v = (b"%d-" % i) * (rnd_len + 1)
            v = v[:rnd_len]
            cmds.append(("SET", b"ow:%d" % i, v))
            want.append("OK")
            cmds.append(("GET", b"ow:%d" % i))
            want.append(v)
    assert _pipeline(srv.port, cmds, len(cmds)) == want
    for i in range(50):
        assert c.call("STRLEN", b"ow:%d" % i) == 10
    # A key with a TTL keeps it across a same-length overwrite with KEEPTTL
    # and loses it with a plain SET.
    assert c.call("SET", "ttl", "abc", "EX", "100") == "OK"
    assert c.call("SET", "ttl", "xyz", "KEEPTTL") == "OK"
    assert 0 < c.call("TTL", "ttl") <= 100
    assert c.call("SET", "ttl", "uvw") == "OK"
    assert c.call("TTL", "ttl") == -1
    assert c.call("GET", "ttl") == b"uvw"
    c.call("FLUSHALL")
    c.close()


@pytest.mark.skipif(IS_REDIS, reason="compares with HotKV's own lookup cache")
def test_command_name_cache_mixed_names(srv):
    """The last name looked up is remembered per thread, as sent: names that
    differ only in case, unknown names and names of other lengths in one
    pipeline each get their own answer."""
    cmds = [("SET", "n", "1"), ("set", "n", "2"), ("GET", "n"), ("get", "n"), ("GEt", "n"),
            ("GETX", "n"), ("GET", "n"), ("GE", "n"), ("get", "n"), ("getset", "n", "3"),
            ("GETSET", "n", "4"), ("get", "n")]
    got = _pipeline(srv.port, cmds, len(cmds))
    assert got[:5] == ["OK", "OK", b"2", b"2", b"2"]
    assert got[5][0] == "error" and "unknown command 'GETX'" in got[5][1]
    assert got[6] == b"2"
    assert got[7][0] == "error" and "unknown command 'GE'" in got[7][1]
    assert got[8:] == [b"2", b"2", b"3", b"4"]
