"""Command metadata pinned against redis-server 7.2.4 (HotKV reports 7.2.4).

COMMAND INFO (arity, flags, key positions, ACL categories, tips and key
specs) of commands with tricky key specs, COMMAND GETKEYSANDFLAGS for the
movable-key commands and a few malformed lines, COMMAND DOCS details
(deprecation, syscmd, argument since / key_spec_index / display_text,
history versions) and the RESP3 aggregate types.  Expectations were read
from a redis-server 7.2.4 built from source; the module also passes against
Debian's redis-server 7.0.15 (HOTKV_SERVER=redis), skipping only what 7.2
changed (V72_ONLY).  Prose (summaries, complexity, key-spec notes, history
and replaced_by texts) is HotKV's own wording and is not compared, only its
presence.  The blocking commands lost noscript in 7.2 (a script may call
BLPOP, which then does not block): pinned here for 7.2 only."""
import pytest

from helpers import Resp, raw


def as_map(reply):
    if isinstance(reply, dict):
        items = reply.items()
    else:
        items = zip(reply[0::2], reply[1::2])
    return {text(k): v for k, v in items}


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def words(v):
    return " ".join(sorted(text(x) for x in v))


@pytest.fixture(scope="module")
def conn(server):
    c = Resp(server.port)
    yield c
    c.close()


# ------------------------------------------------------------ COMMAND INFO --
# name: (arity, flags, first, last, step, ACL categories, tips, key specs);
# a key spec is (flags, begin_search type, its values, find_keys type, its
# values, has notes).  Flags, categories and tips compare as sets.
IDX1 = ("index", (1,), "range", (0, 1, 0))
INFO = {
    "get": (2, "readonly fast", 1, 1, 1, "@read @string @fast", "", [("RO access",) + IDX1 + (False,)]),
    "set": (-3, "write denyoom", 1, 1, 1, "@write @string @slow", "",
            [("RW access update variable_flags",) + IDX1 + (True,)]),
    "getex": (-2, "write fast", 1, 1, 1, "@write @string @fast", "", [("RW access update",) + IDX1 + (True,)]),
    "mset": (-3, "write denyoom", 1, -1, 2, "@write @string @slow",
             "request_policy:multi_shard response_policy:all_succeeded",
             [("OW update", "index", (1,), "range", (-1, 2, 0), False)]),
    "msetnx": (-3, "write denyoom", 1, -1, 2, "@write @string @slow", "",
               [("OW insert", "index", (1,), "range", (-1, 2, 0), False)]),
    "bitop": (-4, "write denyoom", 2, -1, 1, "@write @bitmap @slow", "",
              [("OW update", "index", (2,), "range", (0, 1, 0), False),
               ("RO access", "index", (3,), "range", (-1, 1, 0), False)]),
    "bitfield": (-2, "write denyoom", 1, 1, 1, "@write @bitmap @slow", "",
                 [("RW access update variable_flags",) + IDX1 + (True,)]),
    "rename": (3, "write", 1, 2, 1, "@keyspace @write @slow", "",
               [("RW access delete",) + IDX1 + (False,), ("OW update", "index", (2,), "range", (0, 1, 0), False)]),
    "sinterstore": (-3, "write denyoom", 1, -1, 1, "@write @set @slow", "",
                    [("RW update",) + IDX1 + (False,), ("RO access", "index", (2,), "range", (-1, 1, 0), False)]),
    "sdiffstore": (-3, "write denyoom", 1, -1, 1, "@write @set @slow", "",
                   [("OW update",) + IDX1 + (False,), ("RO access", "index", (2,), "range", (-1, 1, 0), False)]),
    "zunionstore": (-4, "write denyoom movablekeys", 1, 1, 1, "@write @sortedset @slow", "",
                    [("OW update",) + IDX1 + (False,), ("RO access", "index", (2,), "keynum", (0, 1, 1), False)]),
    "zinterstore": (-4, "write denyoom movablekeys", 1, 1, 1, "@write @sortedset @slow", "",
                    [("OW update",) + IDX1 + (False,), ("RO access", "index", (2,), "keynum", (0, 1, 1), False)]),
    "eval": (-3, "noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0, "@slow @scripting", "",
             [("RW access update", "index", (2,), "keynum", (0, 1, 1), True)]),
    "eval_ro": (-3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0, "@slow @scripting",
                "", [("RO access", "index", (2,), "keynum", (0, 1, 1), True)]),
    "evalsha": (-3, "noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0, "@slow @scripting", "",
                [("RW access update", "index", (2,), "keynum", (0, 1, 1), False)]),
    "fcall_ro": (-3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0,
                 "@slow @scripting", "", [("RO access", "index", (2,), "keynum", (0, 1, 1), True)]),
    "xread": (-4, "readonly blocking movablekeys", 0, 0, 0, "@read @stream @slow @blocking", "",
              [("RO access", "keyword", ("STREAMS", 1), "range", (-1, 1, 2), False)]),
    "xreadgroup": (-7, "write blocking movablekeys", 0, 0, 0, "@write @stream @slow @blocking", "",
                   [("RO access", "keyword", ("STREAMS", 4), "range", (-1, 1, 2), False)]),
    "xadd": (-5, "write denyoom fast", 1, 1, 1, "@write @stream @fast", "nondeterministic_output",
             [("RW update",) + IDX1 + (True,)]),
    "xautoclaim": (-6, "write fast", 1, 1, 1, "@write @stream @fast", "nondeterministic_output",
                   [("RW delete",) + IDX1 + (False,)]),
    "sort": (-2, "write denyoom movablekeys", 1, 1, 1, "@write @set @sortedset @list @slow @dangerous", "",
             [("RO access",) + IDX1 + (False,), ("RO access", "unknown", (), "unknown", (), True),
              ("OW update", "unknown", (), "unknown", (), True)]),
    "sort_ro": (-2, "readonly movablekeys", 1, 1, 1, "@read @set @sortedset @list @slow @dangerous", "",
                [("RO access",) + IDX1 + (False,), ("RO access", "unknown", (), "unknown", (), True)]),
    "lmpop": (-4, "write movablekeys", 0, 0, 0, "@write @list @slow", "",
              [("RW access delete", "index", (1,), "keynum", (0, 1, 1), False)]),
    "blmpop": (-5, "write blocking movablekeys", 0, 0, 0, "@write @list @slow @blocking", "",
               [("RW access delete", "index", (2,), "keynum", (0, 1, 1), False)]),
    "bzmpop": (-5, "write blocking movablekeys", 0, 0, 0, "@write @sortedset @slow @blocking", "",
               [("RW access delete", "index", (2,), "keynum", (0, 1, 1), False)]),
    "sintercard": (-3, "readonly movablekeys", 0, 0, 0, "@read @set @slow", "",
                   [("RO access", "index", (1,), "keynum", (0, 1, 1), False)]),
    "zdiff": (-3, "readonly movablekeys", 0, 0, 0, "@read @sortedset @slow", "",
              [("RO access", "index", (1,), "keynum", (0, 1, 1), False)]),
    "georadius": (-6, "write denyoom movablekeys", 1, 1, 1, "@write @geo @slow", "",
                  [("RO access",) + IDX1 + (False,),
                   ("OW update", "keyword", ("STORE", 6), "range", (0, 1, 0), False),
                   ("OW update", "keyword", ("STOREDIST", 6), "range", (0, 1, 0), False)]),
    "pfcount": (-2, "readonly", 1, -1, 1, "@read @hyperloglog @slow", "",
                [("RW access", "index", (1,), "range", (-1, 1, 0), True)]),
    "spublish": (3, "pubsub loading stale fast", 1, 1, 1, "@pubsub @fast", "", [("not_key",) + IDX1 + (False,)]),
    "object|encoding": (3, "readonly", 2, 2, 1, "@keyspace @read @slow", "nondeterministic_output",
                        [("RO", "index", (2,), "range", (0, 1, 0), False)]),
    "command|getkeys": (-3, "loading stale", 0, 0, 0, "@slow @connection", "", []),
    "lastsave": (1, "loading stale fast", 0, 0, 0, "@admin @fast @dangerous", "nondeterministic_output", []),
    "randomkey": (1, "readonly", 0, 0, 0, "@keyspace @read @slow",
                  "request_policy:all_shards response_policy:special nondeterministic_output", []),
    "scan": (-2, "readonly", 0, 0, 0, "@keyspace @read @slow",
             "nondeterministic_output request_policy:special response_policy:special", []),
    "client|setname": (3, "noscript loading stale", 0, 0, 0, "@slow @connection",
                       "request_policy:all_nodes response_policy:all_succeeded", []),
    "module|load": (-3, "admin noscript no_async_loading", 0, 0, 0, "@admin @slow @dangerous", "", []),
    "blpop": (-3, "write blocking", 1, -2, 1, "@write @list @slow @blocking", "",
              [("RW access delete", "index", (1,), "range", (-2, 1, 0), False)]),
    "bzpopmin": (-3, "write blocking fast", 1, -2, 1, "@write @sortedset @fast @blocking", "",
                 [("RW access delete", "index", (1,), "range", (-2, 1, 0), False)]),
}
# What 7.0 reports otherwise (fields: arity, tips).
V72_ONLY = {("msetnx", "tips"), ("command|getkeys", "arity"), ("randomkey", "tips"), ("scan", "tips"),
            ("client|setname", "tips"), ("blpop", "flags"), ("bzpopmin", "flags")}


def spec_tuple(spec):
    s = as_map(spec)
    bs, fk = as_map(s["begin_search"]), as_map(s["find_keys"])
    return (words(s["flags"]), text(bs["type"]), tuple(text(v) for v in as_map(bs["spec"]).values()),
            text(fk["type"]), tuple(as_map(fk["spec"]).values()), "notes" in s)


@pytest.mark.parametrize("name", sorted(INFO))
def test_command_info(conn, version, name):
    (row,) = conn.call("COMMAND", "INFO", name)
    arity, flags, first, last, step, acl, tips, specs = INFO[name]
    got = {"arity": row[1], "flags": words(row[2]), "keys": tuple(row[3:6]), "acl": words(row[6]),
           "tips": words(row[7]), "specs": [spec_tuple(s) for s in row[8]]}
    want = {"arity": arity, "flags": " ".join(sorted(flags.split())), "keys": (first, last, step),
            "acl": " ".join(sorted(acl.split())), "tips": " ".join(sorted(tips.split())),
            "specs": [(" ".join(sorted(s[0].split())),) + tuple(s[1:]) for s in specs]}
    for field in got:
        if version < (7, 2, 0) and (name, field) in V72_ONLY:
            continue
        assert got[field] == want[field], (name, field)


def test_may_replicate_is_not_shown(conn):
    for name in ("pfcount", "publish", "eval", "evalsha", "fcall", "spublish"):
        (row,) = conn.call("COMMAND", "INFO", name)
        assert "may_replicate" not in [text(f) for f in row[2]], name


def test_info_resp3_aggregate_types(server):
    """Key specs and an empty subcommand list are sets (~), not arrays."""
    out = raw(server.port, b"HELLO 3\r\nCOMMAND INFO get\r\n", read_timeout=0.2)
    info = out[out.index(b"*1\r\n*10\r\n$3\r\nget\r\n"):]
    assert b"~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n" in info
    assert info.endswith(b"$5\r\nlimit\r\n:0\r\n~0\r\n")


# -------------------------------------------------- COMMAND GETKEYSANDFLAGS --
KEYS = [
    ("sort k BY w_* GET o_* STORE d", [("k", "RO access"), ("d", "OW update")]),
    ("sort k LIMIT 0 1 STORE d ALPHA", [("k", "RO access"), ("d", "OW update")]),
    ("sort_ro k BY w_* GET #", [("k", "RO access")]),
    ("zunionstore d 2 a b WEIGHTS 1 2", [("d", "OW update"), ("a", "RO access"), ("b", "RO access")]),
    ("zinterstore d 1 a", [("d", "OW update"), ("a", "RO access")]),
    ("zdiffstore d 2 a b", [("d", "OW update"), ("a", "RO access"), ("b", "RO access")]),
    ("zunion 2 a b WITHSCORES", [("a", "RO access"), ("b", "RO access")]),
    ("eval s 2 a b x y", [("a", "RW access update"), ("b", "RW access update")]),
    ("eval s 0 x", []),
    ("evalsha_ro s 1 a", [("a", "RO access")]),
    ("fcall f 1 a x", [("a", "RW access update")]),
    ("fcall_ro f 2 a b", [("a", "RO access"), ("b", "RO access")]),
    ("xread COUNT 1 STREAMS a b 0 0", [("a", "RO access"), ("b", "RO access")]),
    ("xread STREAMS a b c", [("a", "RO access")]),
    ("xreadgroup GROUP g c NOACK STREAMS a b > >", [("a", "RO access"), ("b", "RO access")]),
    ("georadius g 0 0 1 m STORE d", [("g", "RO access"), ("d", "OW update")]),
    ("georadius g 0 0 1 m STOREDIST e STORE d", [("g", "RO access"), ("d", "OW update"), ("e", "OW update")]),
    ("georadiusbymember g m 1 km STOREDIST d", [("g", "RO access"), ("d", "OW update")]),
    ("lmpop 2 a b LEFT COUNT 2", [("a", "RW access delete"), ("b", "RW access delete")]),
    ("blmpop 0.5 2 a b RIGHT", [("a", "RW access delete"), ("b", "RW access delete")]),
    ("zmpop 1 a MIN", [("a", "RW access delete")]),
    ("bzmpop 0 3 a b c MAX COUNT 1", [("a", "RW access delete"), ("b", "RW access delete"), ("c", "RW access delete")]),
    ("sintercard 2 a b LIMIT 1", [("a", "RO access"), ("b", "RO access")]),
    ("zintercard 3 a b c", [("a", "RO access"), ("b", "RO access"), ("c", "RO access")]),
    ("sinterstore d a b", [("d", "RW update"), ("a", "RO access"), ("b", "RO access")]),
    ("sunionstore d a", [("d", "OW update"), ("a", "RO access")]),
    ("set k v", [("k", "OW update")]),
    ("set k v GET", [("k", "RW access update")]),
    ("bitfield k GET u8 0", [("k", "RO access")]),
    ("bitfield k INCRBY u8 0 1", [("k", "RW access update")]),
    ("xadd s * f v", [("s", "RW update")]),
    ("xautoclaim s g c 0 0", [("s", "RW delete")]),
    ("pfcount a b", [("a", "RW access"), ("b", "RW access")]),
    ("pfmerge d a b", [("d", "RW access insert"), ("a", "RO access"), ("b", "RO access")]),
    ("pfmerge d", "ERR Invalid arguments specified for command"),
    ("zunionstore d 3 a b", "ERR Invalid arguments specified for command"),
    ("lmpop 0 a LEFT", "ERR Invalid arguments specified for command"),
    ("spublish c m", "ERR The command has no key arguments"),
    ("object encoding k", [("k", "RO")]),
    ("nosuch k", "ERR Invalid command specified"),
]


@pytest.mark.parametrize("line, expected", KEYS)
def test_getkeysandflags(conn, line, expected):
    reply = conn.call("COMMAND", "GETKEYSANDFLAGS", *line.split())
    if isinstance(expected, str):
        assert reply == ("error", expected)
        return
    assert [(text(k), words(f)) for k, f in reply] == [(k, " ".join(sorted(f.split()))) for k, f in expected]
    keys = conn.call("COMMAND", "GETKEYS", *line.split())
    assert [text(k) for k in keys] == [k for k, _ in expected]


def test_getkeys_command_name_alone(conn, version):
    reply = conn.call("COMMAND", "GETKEYS", "get")
    if version >= (7, 2, 0):  # arity -3 since 7.2
        assert reply == ("error", "ERR Invalid number of arguments specified for command")
        assert conn.call("COMMAND", "GETKEYS", "xinfo") == ("error", "ERR The command has no key arguments")
    else:
        assert reply[0] == "error" and "wrong number of arguments" in reply[1]


# ------------------------------------------------------------ COMMAND DOCS --
def docs(conn, name):
    reply = as_map(conn.call("COMMAND", "DOCS", name))
    return as_map(reply[name])


def arg_named(args, *path):
    """The argument at a path of names (into oneof / block children)."""
    for name in path:
        args = [as_map(a) for a in args]
        (arg,) = [a for a in args if text(a["name"]) == name]
        args = arg.get("arguments", [])
    return arg


@pytest.mark.parametrize("name, since, deprecated", [
    ("getset", "6.2.0", True), ("setnx", "2.6.12", True), ("substr", "2.0.0", True),
    ("zrevrangebyscore", "6.2.0", True), ("georadius_ro", "6.2.0", True), ("hmset", "4.0.0", True),
    ("quit", "7.2.0", True), ("get", None, False), ("zrange", None, False),
])
def test_deprecation(conn, version, name, since, deprecated):
    if name in ("quit", "setnx") and version < (7, 2, 0):
        pytest.skip("deprecated in the 7.2 docs")
    d = docs(conn, name)
    assert [text(f) for f in d.get("doc_flags", [])] == (["deprecated"] if deprecated else [])
    assert text(d.get("deprecated_since")) == since
    assert ("replaced_by" in d) == deprecated


@pytest.mark.parametrize("name", ["debug", "pfdebug", "pfselftest"])
def test_syscmd(conn, name):
    assert [text(f) for f in docs(conn, name)["doc_flags"]] == ["syscmd"]


def test_argument_since_and_key_spec_index(conn):
    d = docs(conn, "set")
    assert text(arg_named(d["arguments"], "get")["since"]) == "6.2.0"
    assert text(arg_named(d["arguments"], "expiration", "keepttl")["since"]) == "6.0.0"
    assert text(arg_named(d["arguments"], "condition")["since"]) == "2.6.12"
    d = docs(conn, "zunionstore")
    assert [as_map(a).get("key_spec_index") for a in d["arguments"]][:3] == [0, None, 1]
    d = docs(conn, "sort")
    assert [as_map(a).get("key_spec_index") for a in d["arguments"]] == [0, 1, None, 1, None, None, 2]
    assert text(docs(conn, "xtrim")["since"]) == "5.0.0"
    assert "flags" not in arg_named(docs(conn, "xtrim")["arguments"], "trim")


def test_history_versions(conn):
    hist = {name: sorted(text(v) for v, _ in docs(conn, name)["history"])
            for name in ("set", "zadd", "restore", "lpop", "client|list")}
    assert hist == {"set": ["2.6.12", "6.0.0", "6.2.0", "7.0.0"], "zadd": ["2.4.0", "3.0.2", "6.2.0"],
                    "restore": ["3.0.0", "5.0.0", "5.0.0"], "lpop": ["6.2.0"],
                    "client|list": ["2.8.12", "5.0.0", "6.0.0", "6.2.0", "7.0.0", "7.0.3"]}
    assert "history" not in docs(conn, "get")


def test_docs_72_arguments(conn, version):
    """display_text, BITOP's oneof, XINFO STREAM's FULL block, GEO units."""
    if version < (7, 2, 0):
        pytest.skip("redis 7.2 COMMAND DOCS")
    d = docs(conn, "sort")
    assert [text(as_map(a).get("display_text")) for a in d["arguments"]] == \
        ["key", "pattern", None, "pattern", None, "sorting", "destination"]
    op = arg_named(docs(conn, "bitop")["arguments"], "operation")
    assert text(op["type"]) == "oneof"
    assert [text(as_map(a)["token"]) for a in op["arguments"]] == ["AND", "OR", "XOR", "NOT"]
    full = arg_named(docs(conn, "xinfo|stream")["arguments"], "full-block")
    assert "token" not in full and [text(as_map(a)["name"]) for a in full["arguments"]] == ["full", "count"]
    unit = arg_named(docs(conn, "geodist")["arguments"], "unit")
    assert [text(as_map(a)["token"]) for a in unit["arguments"]] == ["M", "KM", "FT", "MI"]
    d = docs(conn, "client|kill")
    old = arg_named(d["arguments"], "filter", "old-format")
    assert (text(old["display_text"]), text(old["deprecated_since"])) == ("ip:port", "2.8.12")
    assert text(arg_named(d["arguments"], "filter", "new-format", "addr")["display_text"]) == "ip:port"
    assert text(arg_named(d["arguments"], "filter", "new-format", "laddr")["since"]) == "6.2.0"
