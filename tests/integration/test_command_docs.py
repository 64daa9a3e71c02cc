"""COMMAND DOCS coverage and argument structure.

Every command and subcommand that COMMAND LIST names must have a summary,
a since and a group in COMMAND DOCS.  For a sample of commands the argument
tree (names, types, tokens, optional / multiple / multiple_token flags) must
be the one Debian's redis-server 7.0.15 reports, since clients such as
redis-cli build their hints from it.  Redis 7.2 renamed some arguments
(CLIENT UNBLOCK's timeout_error, SCRIPT FLUSH's async, the BITFIELD blocks);
HotKV reports 7.2.4 and uses the 7.2 names (EXPECTED_ARGS_72), a 7.0 server
the 7.0 ones.  test_command_meta.py pins more of the 7.2 metadata."""
import pytest

from helpers import Resp


def as_map(reply):
    """A RESP2 flat [k1, v1, k2, v2, ...] list (or a RESP3 map) as a dict
    with str keys."""
    if isinstance(reply, dict):
        items = reply.items()
    else:
        assert isinstance(reply, list) and len(reply) % 2 == 0, reply
        items = zip(reply[0::2], reply[1::2])
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in items}


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def flatten_docs(reply):
    """{full name: doc map} for every command and subcommand in a COMMAND
    DOCS reply."""
    out = {}
    for name, doc in as_map(reply).items():
        doc = as_map(doc)
        out[name] = doc
        if "subcommands" in doc:
            out.update(flatten_docs(doc["subcommands"]))
    return out


def arg_tree(args):
    """Argument list as comparable tuples: (name, type, token, flags, kids)."""
    tree = []
    for a in args:
        a = as_map(a)
        flags = tuple(sorted(text(f) for f in a.get("flags", [])))
        token = text(a["token"]) if "token" in a else None
        kids = arg_tree(a["arguments"]) if "arguments" in a else None
        tree.append((text(a["name"]), text(a["type"]), token, flags, kids))
    return tree


def docs_of(resp, name):
    reply = as_map(resp.call("COMMAND", "DOCS", name))
    assert list(reply) == [name], reply
    return as_map(reply[name])


OPT = ("optional",)
MULT = ("multiple",)
OPT_MULT = ("multiple", "optional")

# redis-server 7.0.15's COMMAND DOCS argument trees.
EXPECTED_ARGS = {
    "eval": [
        ("script", "string", None, (), None),
        ("numkeys", "integer", None, (), None),
        ("key", "key", None, OPT_MULT, None),
        ("arg", "string", None, OPT_MULT, None),
    ],
    "multi": None,
    "bitfield": [
        ("key", "key", None, (), None),
        ("operation", "oneof", None, OPT_MULT, [
            ("encoding_offset", "block", "GET", (), [
                ("encoding", "string", None, (), None),
                ("offset", "integer", None, (), None),
            ]),
            ("write", "block", None, (), [
                ("wrap_sat_fail", "oneof", "OVERFLOW", OPT, [
                    ("wrap", "pure-token", "WRAP", (), None),
                    ("sat", "pure-token", "SAT", (), None),
                    ("fail", "pure-token", "FAIL", (), None),
                ]),
                ("write_operation", "oneof", None, (), [
                    ("encoding_offset_value", "block", "SET", (), [
                        ("encoding", "string", None, (), None),
                        ("offset", "integer", None, (), None),
                        ("value", "integer", None, (), None),
                    ]),
                    ("encoding_offset_increment", "block", "INCRBY", (), [
                        ("encoding", "string", None, (), None),
                        ("offset", "integer", None, (), None),
                        ("increment", "integer", None, (), None),
                    ]),
                ]),
            ]),
        ]),
    ],
    "bitfield_ro": [
        ("key", "key", None, (), None),
        ("encoding_offset", "block", "GET", ("multiple", "multiple_token", "optional"), [
            ("encoding", "string", None, (), None),
            ("offset", "integer", None, (), None),
        ]),
    ],
    "function|load": [
        ("replace", "pure-token", "REPLACE", OPT, None),
        ("function-code", "string", None, (), None),
    ],
    "script|flush": [
        ("async", "oneof", None, OPT, [
            ("async", "pure-token", "ASYNC", (), None),
            ("sync", "pure-token", "SYNC", (), None),
        ]),
    ],
    "client|unblock": [
        ("client-id", "integer", None, (), None),
        ("timeout_error", "oneof", None, OPT, [
            ("timeout", "pure-token", "TIMEOUT", (), None),
            ("error", "pure-token", "ERROR", (), None),
        ]),
    ],
}


# The same commands as Redis 7.2 names their arguments.
EXPECTED_ARGS_72 = {
    "bitfield": [
        ("key", "key", None, (), None),
        ("operation", "oneof", None, OPT_MULT, [
            ("get-block", "block", "GET", (), [
                ("encoding", "string", None, (), None),
                ("offset", "integer", None, (), None),
            ]),
            ("write", "block", None, (), [
                ("overflow-block", "oneof", "OVERFLOW", OPT, [
                    ("wrap", "pure-token", "WRAP", (), None),
                    ("sat", "pure-token", "SAT", (), None),
                    ("fail", "pure-token", "FAIL", (), None),
                ]),
                ("write-operation", "oneof", None, (), [
                    ("set-block", "block", "SET", (), [
                        ("encoding", "string", None, (), None),
                        ("offset", "integer", None, (), None),
                        ("value", "integer", None, (), None),
                    ]),
                    ("incrby-block", "block", "INCRBY", (), [
                        ("encoding", "string", None, (), None),
                        ("offset", "integer", None, (), None),
                        ("increment", "integer", None, (), None),
                    ]),
                ]),
            ]),
        ]),
    ],
    "bitfield_ro": [
        ("key", "key", None, (), None),
        ("get-block", "block", "GET", ("multiple", "multiple_token", "optional"), [
            ("encoding", "string", None, (), None),
            ("offset", "integer", None, (), None),
        ]),
    ],
    "script|flush": [
        ("flush-type", "oneof", None, OPT, [
            ("async", "pure-token", "ASYNC", (), None),
            ("sync", "pure-token", "SYNC", (), None),
        ]),
    ],
    "client|unblock": [
        ("client-id", "integer", None, (), None),
        ("unblock-type", "oneof", None, OPT, [
            ("timeout", "pure-token", "TIMEOUT", (), None),
            ("error", "pure-token", "ERROR", (), None),
        ]),
    ],
}


def expected_args(name, version):
    if version >= (7, 2, 0) and name in EXPECTED_ARGS_72:
        return EXPECTED_ARGS_72[name]
    return EXPECTED_ARGS[name]


def test_every_listed_command_has_summary_since_group(resp):
    names = [text(n) for n in resp.call("COMMAND", "LIST")]
    assert "get" in names and "client|unblock" in names
    docs = flatten_docs(resp.call("COMMAND", "DOCS"))
    missing = {}
    for name in names:
        doc = docs.get(name)
        if doc is None:
            missing[name] = "no COMMAND DOCS entry"
            continue
        lacking = [f for f in ("summary", "since", "group") if not doc.get(f)]
        if lacking:
            missing[name] = lacking
    assert missing == {}


@pytest.mark.parametrize("name", ["bitcount", "bitfield", "bitfield_ro", "bitop", "bitpos", "getbit", "setbit",
                                  "multi", "exec", "discard", "watch", "unwatch",
                                  "eval", "eval_ro", "evalsha", "evalsha_ro", "fcall", "fcall_ro",
                                  "function", "function|load", "script", "script|flush", "client|unblock"])
def test_docs_by_full_name(resp, name):
    doc = docs_of(resp, name)
    assert doc.get("summary") and doc.get("since") and doc.get("group") and doc.get("complexity"), doc


@pytest.mark.parametrize("name", sorted(EXPECTED_ARGS))
def test_argument_tree_matches_redis_70(resp, version, name):
    doc = docs_of(resp, name)
    if EXPECTED_ARGS[name] is None:
        assert "arguments" not in doc
    else:
        assert arg_tree(doc["arguments"]) == expected_args(name, version)


def test_group_and_since_of_sample(resp):
    expect = {"eval": ("scripting", "2.6.0"), "multi": ("transactions", "1.2.0"),
              "bitfield": ("bitmap", "3.2.0"), "function|load": ("scripting", "7.0.0"),
              "script|flush": ("scripting", "2.6.0"), "client|unblock": ("connection", "5.0.0")}
    for name, (group, since) in expect.items():
        doc = docs_of(resp, name)
        assert (text(doc["group"]), text(doc["since"])) == (group, since), name


def test_key_arguments_point_at_their_key_spec(resp):
    """BITOP's destination and sources have separate key specs (OW / RO)."""
    doc = docs_of(resp, "bitop")
    idx = {text(a["name"]): a.get("key_spec_index")
           for a in (as_map(x) for x in doc["arguments"])}
    assert idx == {"operation": None, "destkey": 0, "key": 1}
    (info,) = resp.call("COMMAND", "INFO", "bitop")
    specs = [as_map(s) for s in info[8]]
    assert [sorted(text(f) for f in s["flags"]) for s in specs] == [["OW", "update"], ["RO", "access"]]
    keys = resp.call("COMMAND", "GETKEYSANDFLAGS", "bitop", "and", "d", "a", "b")
    assert [(k, sorted(text(f) for f in fl)) for k, fl in keys] == [
        (b"d", ["OW", "update"]), (b"a", ["RO", "access"]), (b"b", ["RO", "access"])]


def test_docs_resp3(server, version):
    c = Resp(server.port)
    try:
        assert isinstance(c.call("HELLO", "3"), dict)
        reply = c.call("COMMAND", "DOCS", "script")
        assert isinstance(reply, dict)
        subs = reply[b"script"][b"subcommands"]
        assert isinstance(subs, dict) and b"script|flush" in subs
        assert arg_tree(subs[b"script|flush"][b"arguments"]) == expected_args("script|flush", version)
    finally:
        c.close()
