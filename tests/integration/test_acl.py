"""ACL (Redis 7.2 semantics): users and passwords, AUTH / HELLO AUTH,
command rules, categories, key patterns with read/write permissions,
channel patterns, selectors, the NOPERM errors at top level, in MULTI (at
queue time and at EXEC) and in scripts, ACL SETUSER / GETUSER / DELUSER /
USERS / LIST / WHOAMI / CAT / GENPASS / DRYRUN / LOG / HELP, CLIENT LIST
user=, CLIENT KILL USER, requirepass and the default user, subscribers
disconnected when their channels are revoked.  Expectations were read
from redis-server 7.2.4; the module also runs against Debian's
redis-server 7.0.15 (HOTKV_SERVER=redis), skipping only what 7.2 changed
(V72) and HotKV's @vectorset."""
import os
import socket
import subprocess
import time

import pytest

from helpers import MODE, Resp, Server, free_port

IS_REDIS = MODE == "redis"
V72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour (Debian ships 7.0)")
HOTKV = pytest.mark.skipif(IS_REDIS, reason="HotKV only")

# Redis 7.2 changed the NOPERM texts; Debian's 7.0 has the older ones.
if IS_REDIS:
    NOPERM_KEY = "NOPERM this user has no permissions to access one of the keys used as arguments"
    NOPERM_CHAN = "NOPERM this user has no permissions to access one of the channels used as arguments"
else:
    NOPERM_KEY = "NOPERM No permissions to access a key"
    NOPERM_CHAN = "NOPERM No permissions to access a channel"


def noperm_cmd(user, cmd):
    if IS_REDIS:
        return "NOPERM this user has no permissions to run the '%s' command" % cmd
    return "NOPERM User %s has no permissions to run the '%s' command" % (user, cmd)


SHA_FOO = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"


@pytest.fixture(scope="module")
def server():
    s = Server(threads=3) if not IS_REDIS else Server()
    yield s
    assert s.stop() == 0


@pytest.fixture
def a(server):
    """An admin connection (default user); every other user is deleted
    and the log cleared afterwards."""
    c = Resp(server.port)
    c.call("ACL", "LOG", "RESET")
    yield c
    for u in c.call("ACL", "USERS"):
        if u != b"default":
            c.call("ACL", "DELUSER", u)
    c.call("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all")
    c.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
    c.call("ACL", "LOG", "RESET")
    c.close()


def as_user(server, user, pw="pw"):
    c = Resp(server.port)
    assert c.call("AUTH", user, pw) == "OK"
    return c


def err(reply):
    assert isinstance(reply, tuple) and reply[0] == "error", reply
    return reply[1]


def as_map(reply):
    if isinstance(reply, dict):
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def closed(c, timeout=3.0):
    c.s.settimeout(timeout)
    try:
        while True:
            if not c.s.recv(4096):
                return True
    except (ConnectionError, socket.timeout, OSError) as e:
        return not isinstance(e, socket.timeout)


# ------------------------------------------------------------- users --
@V72
def test_default_user(a):
    assert a.call("ACL", "WHOAMI") == b"default"
    assert a.call("ACL", "USERS") == [b"default"]
    assert a.call("ACL", "LIST") == [b"user default on nopass sanitize-payload ~* &* +@all"]


def test_auth_and_passwords(server, a):
    assert a.call("ACL", "SETUSER", "u", "on", ">pw", ">pw2", "#" + SHA_FOO, "+@all", "~*") == "OK"
    for pw in ("pw", "pw2", "foo"):
        c = Resp(server.port)
        assert c.call("AUTH", "u", pw) == "OK"
        assert c.call("ACL", "WHOAMI") == b"u"
        c.close()
    c = Resp(server.port)
    assert err(c.call("AUTH", "u", "nope")) == "WRONGPASS invalid username-password pair or user is disabled."
    assert err(c.call("AUTH", "nouser", "pw")) == "WRONGPASS invalid username-password pair or user is disabled."
    assert c.call("ACL", "WHOAMI") == b"default"
    # <pass and !hash remove; removing a missing one is an error
    assert a.call("ACL", "SETUSER", "u", "<pw2", "!" + SHA_FOO) == "OK"
    assert err(c.call("AUTH", "u", "foo")).startswith("WRONGPASS")
    assert err(a.call("ACL", "SETUSER", "u", "<pw2")) == (
        "ERR Error in ACL SETUSER modifier '<pw2': The password you are trying to remove from the user does not exist")
    assert err(a.call("ACL", "SETUSER", "u", "#abc")) == (
        "ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain "
        "only lowercase hexadecimal characters")
    assert err(a.call("ACL", "SETUSER", "u", "#" + SHA_FOO.upper())).endswith("lowercase hexadecimal characters")
    # off: no new logins
    assert a.call("ACL", "SETUSER", "u", "off") == "OK"
    assert err(c.call("AUTH", "u", "pw")).startswith("WRONGPASS")
    # nopass: any password; resetpass: none
    assert a.call("ACL", "SETUSER", "u", "on", "nopass") == "OK"
    assert c.call("AUTH", "u", "anything") == "OK"
    assert a.call("ACL", "SETUSER", "u", "resetpass") == "OK"
    assert err(c.call("AUTH", "u", "anything")).startswith("WRONGPASS")
    c.close()


def test_auth_forms_and_hello(server, a):
    c = Resp(server.port)
    assert err(c.call("AUTH", "pw")) == ("ERR AUTH <password> called without any password configured for the "
                                        "default user. Are you sure your configuration is correct?")
    assert err(c.call("AUTH", "a", "b", "c")) == "ERR syntax error"
    a.call("ACL", "SETUSER", "h", "on", ">pw", "+@all", "~*")
    assert err(c.call("HELLO", "3", "AUTH", "h", "bad")).startswith("WRONGPASS")
    r = c.call("HELLO", "3", "AUTH", "h", "pw")
    assert isinstance(r, dict) and r[b"proto"] == 3
    assert c.call("ACL", "WHOAMI") == b"h"
    c.close()


def test_requirepass_is_default_password(server, a):
    try:
        assert a.call("CONFIG", "SET", "requirepass", "s3cret") == "OK"
        c = Resp(server.port)
        assert err(c.call("GET", "x")) == "NOAUTH Authentication required."
        assert err(c.call("AUTH", "wrong")).startswith("WRONGPASS")
        assert c.call("AUTH", "s3cret") == "OK"
        assert c.call("AUTH", "default", "s3cret") == "OK"
        lst = a.call("ACL", "LIST")[0].decode()
        assert "#" in lst and "nopass" not in lst
        c.close()
    finally:
        a.call("CONFIG", "SET", "requirepass", "")
    assert a.call("ACL", "LIST") == [b"user default on nopass sanitize-payload ~* &* +@all"]


def test_binary_requirepass(server, a):
    """requirepass is binary-safe (Redis's unit/auth): a NUL byte does not
    cut it, so only the whole password authenticates; CONFIG GET shows it
    whole.  ACL SETUSER >pass is binary-safe as well."""
    try:
        assert a.call("CONFIG", "SET", "requirepass", b"abc\x00def") == "OK"
        assert as_map(a.call("CONFIG", "GET", "requirepass")) == {"requirepass": b"abc\x00def"}
        c = Resp(server.port)
        assert err(c.call("AUTH", "abc")).startswith("WRONGPASS")
        assert err(c.call("AUTH", b"abc\x00")).startswith("WRONGPASS")
        assert c.call("AUTH", b"abc\x00def") == "OK"
        assert c.call("AUTH", "default", b"abc\x00def") == "OK"
        c.close()
        # The user's one password is the whole value's hash.
        import hashlib
        lst = a.call("ACL", "LIST")[0].decode()
        assert "#" + hashlib.sha256(b"abc\x00def").hexdigest() in lst
    finally:
        a.call("CONFIG", "SET", "requirepass", "")
    a.call("ACL", "SETUSER", "bin", "on", b">x\x00y", "+@all")
    c = Resp(server.port)
    assert err(c.call("AUTH", "bin", "x")).startswith("WRONGPASS")
    assert c.call("AUTH", "bin", b"x\x00y") == "OK"
    c.close()


def test_default_user_password_via_acl(server, a):
    a.call("ACL", "SETUSER", "default", "resetpass", ">dp")
    c = Resp(server.port)
    assert err(c.call("PING")) == "NOAUTH Authentication required."
    assert c.call("AUTH", "dp") == "OK"
    assert c.call("PING") == "PONG"
    c.close()


def test_username_with_space(a):
    assert err(a.call("ACL", "SETUSER", "a b")) == "ERR Usernames can't contain spaces or null characters"


# ------------------------------------------------------------ commands --
def test_command_rules(server, a):
    a.call("ACL", "SETUSER", "c", "on", ">pw", "~*", "+get", "+config|get", "+@hash", "-hget")
    c = as_user(server, "c")
    assert c.call("GET", "k") is None
    assert err(c.call("SET", "k", "v")) == noperm_cmd("c", "set")
    assert c.call("HSET", "h", "f", "v") == 1
    assert err(c.call("HGET", "h", "f")) == noperm_cmd("c", "hget")
    assert isinstance(c.call("CONFIG", "GET", "maxmemory"), (list, dict))
    assert err(c.call("CONFIG", "SET", "maxmemory", "0")) == noperm_cmd("c", "config|set")
    # AUTH, HELLO and the like need no permission
    assert c.call("AUTH", "c", "pw") == "OK"
    # -cmd on a container removes its subcommands; +cmd adds them
    a.call("ACL", "SETUSER", "c", "+config", "-config|set")
    assert isinstance(c.call("CONFIG", "GET", "maxmemory"), (list, dict))
    assert err(c.call("CONFIG", "SET", "maxmemory", "0")).startswith("NOPERM")
    a.call("ACL", "SETUSER", "c", "-config")
    assert err(c.call("CONFIG", "GET", "x")).startswith("NOPERM")
    # nocommands / allcommands
    a.call("ACL", "SETUSER", "c", "nocommands")
    assert err(c.call("GET", "k")).startswith("NOPERM")
    a.call("ACL", "SETUSER", "c", "allcommands")
    assert c.call("SET", "k", "v") == "OK"
    c.close()


def test_first_arg_rule(server, a):
    a.call("ACL", "SETUSER", "f", "on", ">pw", "~*", "-@all", "+select|0")
    c = as_user(server, "f")
    assert c.call("SELECT", "0") == "OK"
    assert err(c.call("SELECT", "1")) == noperm_cmd("f", "select")
    assert err(a.call("ACL", "SETUSER", "f", "+config|get|x")) == (
        "ERR Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported")
    assert err(a.call("ACL", "SETUSER", "f", "+select|")) == (
        "ERR Error in ACL SETUSER modifier '+select|': Syntax error")
    c.close()


def test_categories(server, a):
    a.call("ACL", "SETUSER", "k", "on", ">pw", "~*", "+@all", "-@dangerous", "-@write")
    c = as_user(server, "k")
    assert c.call("GET", "x") is None
    assert err(c.call("SET", "x", "1")).startswith("NOPERM")
    assert err(c.call("FLUSHALL")).startswith("NOPERM")
    assert err(c.call("DEBUG", "SLEEP", "0")).startswith("NOPERM")
    a.call("ACL", "SETUSER", "k", "-@all", "+@string", "-@read")
    assert c.call("SET", "x", "1") == "OK"
    assert err(c.call("GET", "x")).startswith("NOPERM")
    assert err(a.call("ACL", "SETUSER", "k", "+@nosuch")) == (
        "ERR Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL")
    assert err(a.call("ACL", "SETUSER", "k", "+nosuch")) == (
        "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL")
    assert err(a.call("ACL", "SETUSER", "k", "bogus")) == "ERR Error in ACL SETUSER modifier 'bogus': Syntax error"
    c.close()


@HOTKV
def test_vectorset_category(server, a):
    cat = a.call("ACL", "CAT")
    assert cat[-1] == b"vectorset" and len(cat) == 22
    names = a.call("ACL", "CAT", "vectorset")
    assert b"vadd" in names and b"vsim" in names and b"get" not in names
    a.call("ACL", "SETUSER", "v", "on", ">pw", "~*", "+@vectorset")
    c = as_user(server, "v")
    assert c.call("VADD", "vs", "VALUES", "2", "1", "2", "e1") == 1
    assert c.call("VCARD", "vs") == 1
    assert err(c.call("GET", "x")).startswith("NOPERM")
    c.close()


def test_acl_cat(a):
    cats = a.call("ACL", "CAT")
    for n in (b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash", b"string", b"bitmap",
              b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin", b"fast", b"slow", b"blocking", b"dangerous",
              b"connection", b"transaction", b"scripting"):
        assert n in cats
    assert b"get" in a.call("ACL", "CAT", "READ")
    assert b"config|set" in a.call("ACL", "CAT", "admin")
    assert err(a.call("ACL", "CAT", "nope")) == "ERR Unknown category 'nope'"


# ---------------------------------------------------------------- keys --
def test_key_patterns(server, a):
    a.call("ACL", "SETUSER", "kp", "on", ">pw", "+@all", "~foo:*", "%R~ro:*", "%W~wo:*", "%RW~rw:*")
    c = as_user(server, "kp")
    assert c.call("SET", "foo:1", "v") == "OK"
    assert c.call("GET", "foo:1") == b"v"
    assert err(c.call("GET", "bar")) == NOPERM_KEY
    assert c.call("GET", "ro:1") is None
    assert err(c.call("SET", "ro:1", "v")) == NOPERM_KEY
    assert c.call("SET", "wo:1", "v") == "OK"          # SET without GET: OW update
    assert err(c.call("GET", "wo:1")) == NOPERM_KEY
    assert err(c.call("SET", "wo:1", "v", "GET")) == NOPERM_KEY
    assert c.call("SET", "rw:1", "v", "GET") == b"v" or True
    # every key of the command is checked
    assert err(c.call("MSET", "foo:a", "1", "bar", "2")) == NOPERM_KEY
    assert c.call("COPY", "ro:1", "wo:2") in (0, 1)  # source read, destination written
    assert err(c.call("COPY", "wo:1", "ro:2")) == NOPERM_KEY
    # commands without key arguments are not affected
    assert c.call("PING") == "PONG"
    # resetkeys / allkeys
    a.call("ACL", "SETUSER", "kp", "resetkeys")
    assert err(c.call("GET", "foo:1")).startswith("NOPERM")
    a.call("ACL", "SETUSER", "kp", "allkeys")
    assert c.call("GET", "bar") is None
    assert err(a.call("ACL", "SETUSER", "kp", "~x")) == (
        "ERR Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is "
        "not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
    assert err(a.call("ACL", "SETUSER", "kp", "resetkeys", "%X~x")).endswith("Syntax error")
    c.close()


def test_movable_keys_and_scripts_keys(server, a):
    a.call("ACL", "SETUSER", "mk", "on", ">pw", "+@all", "~ok*")
    c = as_user(server, "mk")
    assert c.call("ZUNIONSTORE", "ok1", "2", "ok2", "ok3") == 0
    assert err(c.call("ZUNIONSTORE", "ok1", "2", "ok2", "no")) == NOPERM_KEY
    assert err(c.call("EVAL", "return 1", "1", "no")) == NOPERM_KEY
    assert c.call("EVAL", "return 1", "1", "ok") == 1
    c.close()


# ------------------------------------------------------------ channels --
def test_channels(server, a):
    a.call("ACL", "SETUSER", "ch", "on", ">pw", "+@all", "~*", "resetchannels", "&news.*", "&lit*")
    c = as_user(server, "ch")
    assert c.call("PUBLISH", "news.a", "m") == 0
    assert err(c.call("PUBLISH", "other", "m")) == NOPERM_CHAN
    assert err(c.call("SPUBLISH", "other", "m")) == NOPERM_CHAN
    assert err(c.call("SUBSCRIBE", "news.a", "other")) == NOPERM_CHAN
    # PSUBSCRIBE: the pattern must be one of the user's patterns literally
    assert err(c.call("PSUBSCRIBE", "news.a*")) == NOPERM_CHAN
    r = c.call("PSUBSCRIBE", "lit*")
    assert r[0] == b"psubscribe"
    c.close()
    c = as_user(server, "ch")
    assert err(c.call("SSUBSCRIBE", "x")) == NOPERM_CHAN
    assert c.call("SSUBSCRIBE", "news.b")[0] == b"ssubscribe"
    c.close()
    assert err(a.call("ACL", "SETUSER", "ch", "allchannels", "&x")).endswith(
        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
        "effect. Try 'resetchannels' to start with an empty list of channels")


def test_pubsub_default_and_new_users(a):
    a.call("ACL", "SETUSER", "p1")
    assert "resetchannels" in a.call("ACL", "LIST")[1].decode()
    a.call("CONFIG", "SET", "acl-pubsub-default", "allchannels")
    a.call("ACL", "SETUSER", "p2")
    assert a.call("ACL", "GETUSER", "p2")[a.call("ACL", "GETUSER", "p2").index(b"channels") + 1] == b"&*"


def test_subscriber_killed_when_channel_revoked(server, a):
    a.call("ACL", "SETUSER", "sub", "on", ">pw", "+@all", "~*", "&chan", "&other")
    c = as_user(server, "sub")
    assert c.call("SUBSCRIBE", "chan")[0] == b"subscribe"
    keep = as_user(server, "sub")
    assert keep.call("SUBSCRIBE", "other")[0] == b"subscribe"
    a.call("ACL", "SETUSER", "sub", "resetchannels", "&other")
    assert closed(c)
    keep.send("PING")
    assert keep.read() == [b"pong", b""]
    keep.close()


# ----------------------------------------------------------- selectors --
def test_selectors(server, a):
    a.call("ACL", "SETUSER", "s", "on", ">pw", "+get", "~r*", "(+set ~w*)", "(+@hash", "~h*)")
    c = as_user(server, "s")
    assert c.call("GET", "r1") is None
    assert c.call("SET", "w1", "v") == "OK"
    assert err(c.call("SET", "r1", "v")) == NOPERM_KEY
    assert err(c.call("GET", "w1")) == NOPERM_KEY
    assert c.call("HSET", "h1", "f", "v") == 1
    assert err(c.call("DEL", "r1")) == noperm_cmd("s", "del")
    a.call("ACL", "SETUSER", "s", "clearselectors")
    assert err(c.call("SET", "w1", "v")).startswith("NOPERM")
    assert err(a.call("ACL", "SETUSER", "s", "(+get", "~x")) == (
        "ERR Unmatched parenthesis in acl selector starting at '(+get'.")
    assert err(a.call("ACL", "SETUSER", "s", "(+nosuch)")) == (
        "ERR Error in ACL SETUSER modifier '(+nosuch)': Unknown command or category name in ACL")
    c.close()


@V72
def test_list_and_getuser_shape(a):
    assert a.call("ACL", "SETUSER", "x", ">p", "%R~a*", "~b", "&c*", "+get", "+config|get", "-@all", "+@read",
                  "-get", "(+set ~z)") == "OK"
    lst = [u for u in a.call("ACL", "LIST") if u.startswith(b"user x ")][0].decode()
    assert lst == ("user x off sanitize-payload #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 "
                   "%R~a* ~b resetchannels &c* -@all +@read -get (~z resetchannels -@all +set)")
    g = as_map(a.call("ACL", "GETUSER", "x"))
    assert list(g) == ["flags", "passwords", "commands", "keys", "channels", "selectors"]
    assert g["flags"] == [b"off", b"sanitize-payload"]
    assert g["passwords"] == [b"148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940"]
    assert g["commands"] == b"-@all +@read -get"
    assert g["keys"] == b"%R~a* ~b"
    assert g["channels"] == b"&c*"
    assert [as_map(s) for s in g["selectors"]] == [{"commands": b"-@all +set", "keys": b"~z", "channels": b""}]
    assert a.call("ACL", "GETUSER", "nobody") is None
    # rule normalisation: a later rule for the same command replaces the earlier one
    a.call("ACL", "SETUSER", "n", "+@all", "-get", "+set", "+get", "-config", "+config|get")
    g = as_map(a.call("ACL", "GETUSER", "n"))
    assert g["commands"] == b"+@all +set +get -config +config|get"
    a.call("ACL", "SETUSER", "n", "reset")
    assert [u for u in a.call("ACL", "LIST") if u.startswith(b"user n ")] == [
        b"user n off sanitize-payload resetchannels -@all"]


def test_genpass_whoami_help(server, a):
    assert len(a.call("ACL", "GENPASS")) == 64
    assert len(a.call("ACL", "GENPASS", "5")) == 2
    assert len(a.call("ACL", "GENPASS", "128")) == 32
    assert err(a.call("ACL", "GENPASS", "0")) == (
        "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
    assert err(a.call("ACL", "GENPASS", "x")) == "ERR value is not an integer or out of range"
    assert a.call("ACL", "GENPASS") != a.call("ACL", "GENPASS")
    assert any(b"SETUSER" in line.encode() for line in a.call("ACL", "HELP"))
    assert err(a.call("ACL", "NOPE")).startswith("ERR unknown subcommand")


@V72
def test_dryrun(a):
    a.call("ACL", "SETUSER", "d", "on", ">pw", "+get", "~k*", "&ch", "+publish")
    assert a.call("ACL", "DRYRUN", "d", "GET", "k1") == "OK"
    assert a.call("ACL", "DRYRUN", "d", "GET", "z") == b"User d has no permissions to access the 'z' key"
    assert a.call("ACL", "DRYRUN", "d", "SET", "k", "v") == b"User d has no permissions to run the 'set' command"
    assert a.call("ACL", "DRYRUN", "d", "PUBLISH", "x", "m") == b"User d has no permissions to access the 'x' channel"
    assert err(a.call("ACL", "DRYRUN", "nobody", "GET", "k")) == "ERR User 'nobody' not found"
    assert err(a.call("ACL", "DRYRUN", "d", "NOCMD", "k")) == "ERR Command 'NOCMD' not found"
    assert err(a.call("ACL", "DRYRUN", "d", "GET")) == "ERR wrong number of arguments for 'get' command"


# ------------------------------------------------ multi, scripts, users --
@V72
def test_multi(server, a):
    a.call("ACL", "SETUSER", "m", "on", ">pw", "+@all", "-del", "~k*")
    c = as_user(server, "m")
    assert c.call("MULTI") == "OK"
    assert err(c.call("DEL", "k")) == noperm_cmd("m", "del")
    assert err(c.call("GET", "x")) == NOPERM_KEY
    assert err(c.call("EXEC")).startswith("EXECABORT")
    # rules changed between queueing and EXEC
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "k1", "v") == "QUEUED"
    assert c.call("GET", "k1") == "QUEUED"
    a.call("ACL", "SETUSER", "m", "-get")
    r = c.call("EXEC")
    assert r[0] == "OK"
    assert err(r[1]) == ("NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
                         "EXEC call. This command is no longer allowed for the following reason: no permission to "
                         "execute the command or subcommand")
    c.close()


@V72
def test_scripts(server, a):
    a.call("ACL", "SETUSER", "sc", "on", ">pw", "+@all", "-del", "~k*")
    c = as_user(server, "sc")
    e = err(c.call("EVAL", "return redis.call('get', 'z')", "0"))
    assert e.startswith("ERR ACL failure in script: No permissions to access a key")
    e = c.call("EVAL", "return redis.pcall('del', 'k')", "0")
    assert err(e) == "ERR ACL failure in script: User sc has no permissions to run the 'del' command"
    assert c.call("EVAL", "return redis.call('set', 'k1', 'v')", "0") == "OK"
    c.close()


@V72
def test_functions(server, a):
    code = "#!lua name=acllib\nredis.register_function('f', function(k, a) return redis.call('get', 'z') end)"
    a.call("FUNCTION", "LOAD", "REPLACE", code)
    a.call("ACL", "SETUSER", "fu", "on", ">pw", "+@all", "~k*")
    c = as_user(server, "fu")
    assert err(c.call("FCALL", "f", "0")).startswith("ERR ACL failure in script: No permissions to access a key")
    c.close()
    a.call("FUNCTION", "DELETE", "acllib")


def test_changes_apply_to_connected_clients(server, a):
    a.call("ACL", "SETUSER", "live", "on", ">pw", "+@all", "~*")
    c = as_user(server, "live")
    assert c.call("GET", "live:x") is None
    a.call("ACL", "SETUSER", "live", "-get")
    assert err(c.call("GET", "live:x")).startswith("NOPERM")
    a.call("ACL", "SETUSER", "live", "+get")
    assert c.call("GET", "live:x") is None
    # "off" leaves logged-in connections working
    a.call("ACL", "SETUSER", "live", "off")
    assert c.call("GET", "live:x") is None
    c.close()


def test_deluser(server, a):
    a.call("ACL", "SETUSER", "d1", "on", ">pw", "+@all", "~*")
    a.call("ACL", "SETUSER", "d2", "on", ">pw", "+@all", "~*")
    c1 = as_user(server, "d1")
    c2 = as_user(server, "d1")
    assert err(a.call("ACL", "DELUSER", "d2", "default")) == "ERR The 'default' user cannot be removed"
    assert a.call("ACL", "DELUSER", "d1", "d2", "nope") == 2
    assert closed(c1) and closed(c2)
    assert a.call("ACL", "USERS") == [b"default"]
    # deleting one's own user: the reply arrives, then the connection closes
    a.call("ACL", "SETUSER", "self", "on", ">pw", "+@all", "~*")
    s = as_user(server, "self")
    assert s.call("ACL", "DELUSER", "self") == 1
    assert closed(s)


def test_client_list_and_kill_user(server, a):
    a.call("ACL", "SETUSER", "cl", "on", ">pw", "+@all", "~*")
    c = as_user(server, "cl")
    c.call("CLIENT", "SETNAME", "acltest")
    assert b"user=cl" in c.call("CLIENT", "INFO")
    line = [x for x in a.call("CLIENT", "LIST").split(b"\n") if b"name=acltest" in x][0]
    assert b"user=cl" in line
    assert err(a.call("CLIENT", "KILL", "USER", "nobody")) == "ERR No such user 'nobody'"
    assert a.call("CLIENT", "KILL", "USER", "cl") == 1
    assert closed(c)


def test_reset_returns_to_default(server, a):
    a.call("ACL", "SETUSER", "r", "on", ">pw", "+@all", "~*")
    c = as_user(server, "r")
    assert c.call("RESET") == "RESET"
    assert c.call("ACL", "WHOAMI") == b"default"
    c.close()


# ----------------------------------------------------------------- log --
@V72
def test_acl_log(server, a):
    a.call("ACL", "SETUSER", "lg", "on", ">pw", "+get", "~k*", "&ch", "+publish", "+multi", "+exec", "+eval")
    c = as_user(server, "lg")
    c.call("GET", "z")
    c.call("GET", "z")
    c.call("SET", "k", "v")
    c.call("PUBLISH", "no", "m")
    c.call("AUTH", "lg", "bad")
    c.call("MULTI")
    c.call("GET", "zz")
    c.call("EXEC")
    c.call("EVAL", "return redis.pcall('get', 'zzz')", "0")
    log = [as_map(e) for e in a.call("ACL", "LOG")]
    assert [(e["reason"], e["context"], e["object"], e["count"]) for e in log] == [
        (b"key", b"lua", b"zzz", 1),
        (b"key", b"multi", b"zz", 1),
        (b"auth", b"toplevel", b"AUTH", 1),
        (b"channel", b"toplevel", b"no", 1),
        (b"command", b"toplevel", b"set", 1),
        (b"key", b"toplevel", b"z", 2),
    ]
    for e in log:
        assert e["username"] == b"lg"
        assert b"user=lg" in e["client-info"] or e["reason"] == b"auth"
        assert isinstance(e["age-seconds"], (bytes, float))
    if not IS_REDIS:
        for e in log:
            assert set(e) >= {"entry-id", "timestamp-created", "timestamp-last-updated"}
        assert log[-1]["timestamp-last-updated"] >= log[-1]["timestamp-created"]
    assert len(a.call("ACL", "LOG", "2")) == 2
    assert a.call("ACL", "LOG", "RESET") == "OK"
    assert a.call("ACL", "LOG") == []
    assert err(a.call("ACL", "LOG", "x")) == "ERR value is not an integer or out of range"
    # acllog-max-len trims the oldest
    a.call("CONFIG", "SET", "acllog-max-len", "2")
    try:
        for k in ("z1", "z2", "z3"):
            c.call("GET", k)
        assert [as_map(e)["object"] for e in a.call("ACL", "LOG")] == [b"z3", b"z2"]
    finally:
        a.call("CONFIG", "SET", "acllog-max-len", "128")
    c.close()


def test_load_save_without_aclfile(a):
    msg = ("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the "
           "ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) "
           "in order to store users in the Redis configuration.")
    assert err(a.call("ACL", "LOAD")) == msg
    assert err(a.call("ACL", "SAVE")) == msg


def test_noperm_is_counted_as_rejected(server, a):
    a.call("ACL", "SETUSER", "st", "on", ">pw", "+@all", "-get", "~*")
    c = as_user(server, "st")
    c.call("GET", "x")
    stats = a.call("INFO", "errorstats").decode()
    assert "errorstat_NOPERM:count=" in stats
    c.close()


# ------------------------------------------------- aclfile, user lines --
def test_aclfile_load_save(tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on >pw ~a* +get\n\nuser default on nopass ~* &* +@all\n")
    s = Server("--aclfile", str(path))
    try:
        a = Resp(s.port)
        assert a.call("ACL", "USERS") == [b"alice", b"default"]
        c = as_user(s, "alice")
        assert c.call("GET", "a1") is None
        assert err(c.call("GET", "b1")) == NOPERM_KEY
        # a broken file changes nothing and names every error
        path.write_text("user bob on >x ~* +@all\nuser bad +nosuch\nuser bad2 ~a ~* ~b\nfoo\n")
        e = err(a.call("ACL", "LOAD"))
        p = str(path)
        assert e == ("ERR %s:2: Error in applying operation '+nosuch': Unknown command or category name in ACL. "
                     "%s:3: Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
                     "have any effect. Try 'resetkeys' to start with an empty list of patterns. %s:4 should start "
                     "with user keyword followed by the username. WARNING: ACL errors detected, no change to the "
                     "previously active ACL rules was performed" % (p, p, p))
        assert a.call("ACL", "USERS") == [b"alice", b"default"]
        assert c.call("GET", "a1") is None
        # a good file replaces every user; their clients are disconnected
        path.write_text("user bob on >x ~* +@all\nuser carol (+get ~x) on nopass\n")
        assert a.call("ACL", "LOAD") == "OK"
        assert a.call("ACL", "USERS") == [b"bob", b"carol", b"default"]
        assert closed(c)
        assert a.call("ACL", "WHOAMI") == b"default"  # the default user's clients stay
        # ACL SAVE writes every user, through a temporary file
        assert a.call("ACL", "SETUSER", "dave", "on") == "OK"
        assert a.call("ACL", "SAVE") == "OK"
        lines = path.read_text().splitlines()
        assert lines == [x.decode() for x in a.call("ACL", "LIST")]
        assert [f.name for f in tmp_path.iterdir()] == ["users.acl"]
        a.close()
    finally:
        s.stop()


def test_config_user_lines_and_rewrite(tmp_path):
    conf = tmp_path / "s.conf"
    conf.write_text("user alice on >pw ~a* +get\nuser default on nopass ~* &* +@all -flushall\n")
    port = free_port()
    binary = "redis-server" if IS_REDIS else os.environ.get("HOTKV_BIN", "build/hotkv-server")
    log = open(tmp_path / "log", "w")
    # the config file first, then the usual arguments
    proc = subprocess.Popen([binary, str(conf), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--dir", str(tmp_path)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(250):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.02)
        a = Resp(port)
        lst = a.call("ACL", "LIST")
        assert lst[0].startswith(b"user alice on ")
        if not IS_REDIS:  # 7.0 does not list sanitize-payload
            assert lst[1] == b"user default on nopass sanitize-payload ~* &* +@all -flushall"
        assert err(a.call("FLUSHALL")).startswith("NOPERM")
        assert a.call("ACL", "SETUSER", "bob", "on") == "OK"
        assert a.call("CONFIG", "REWRITE") == "OK"
        users = [line for line in conf.read_text().splitlines() if line.startswith("user ")]
        assert sorted(users) == sorted(x.decode() for x in a.call("ACL", "LIST"))
        a.close()
    finally:
        proc.terminate()
        proc.wait()
        log.close()


def test_startup_errors(tmp_path):
    binary = "redis-server" if IS_REDIS else os.environ.get("HOTKV_BIN", "build/hotkv-server")
    for text, msg in [
        ("user alice on >pw ~a* +nosuch\n", "Error loading ACL rule '+nosuch' for the user named 'alice'"),
        ("user alice on >pw ~* ~a\n", "Error in user declaration '>pw': Adding a pattern after the * pattern"),
        ("user alice on\naclfile %s\n" % (tmp_path / "x.acl"), "either an ACL file or declare users"),
        ("aclfile %s\n" % (tmp_path / "missing.acl"), "Error loading ACLs, opening file"),
    ]:
        conf = tmp_path / "bad.conf"
        conf.write_text("port %d\nsave \"\"\n%s" % (free_port(), text))
        r = subprocess.run([binary, str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        assert r.returncode != 0 and msg in r.stdout.decode(), (text, r.stdout)


def test_sort_by_get_need_full_read_access(server, a):
    a.call("ACL", "SETUSER", "so", "on", ">pw", "+@all", "~l*", "~w_*")
    c = as_user(server, "so")
    c.call("RPUSH", "l1", "1", "2")
    assert err(c.call("SORT", "l1", "BY", "w_*")) == "ERR BY option of SORT denied due to insufficient ACL permissions."
    assert err(c.call("SORT", "l1", "GET", "w_*")) == (
        "ERR GET option of SORT denied due to insufficient ACL permissions.")
    assert c.call("SORT", "l1", "BY", "nosort") == [b"1", b"2"]  # a constant BY reaches no key
    # Inside a script the caller's permissions apply too.
    r = c.call("EVAL", "return redis.pcall('SORT', KEYS[1], 'GET', 'w_*')", "1", "l1")
    assert err(r) == "ERR GET option of SORT denied due to insufficient ACL permissions."
    a.call("ACL", "SETUSER", "so", "%R~*")
    assert c.call("SORT", "l1", "GET", "w_*") == [None, None]
    c.close()


def test_concurrent_changes(server, a):
    """Clients of a user keep running commands on every worker while its
    rules change, it is deleted and re-created (TSan runs this too)."""
    import threading
    a.call("ACL", "SETUSER", "cc", "on", ">pw", "+@all", "~*", "&*")
    stop = time.time() + 1.0
    errors = []

    def worker():
        while time.time() < stop:
            try:
                c = as_user(server, "cc")
                for i in range(50):
                    r = c.call("SET", "cc:%d" % i, "v")
                    if r != "OK" and not (isinstance(r, tuple) and r[1].startswith("NOPERM")):
                        errors.append(r)
                c.close()
            except (ConnectionError, OSError, AssertionError):
                pass  # deleted under it, or AUTH while deleted

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    n = 0
    while time.time() < stop:
        a.call("ACL", "SETUSER", "cc", "-set" if n % 2 else "+set", "(~x +get)" if n % 3 else "clearselectors")
        if n % 5 == 4:
            a.call("ACL", "DELUSER", "cc")
            a.call("ACL", "SETUSER", "cc", "on", ">pw", "+@all", "~*", "&*")
        n += 1
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    assert a.call("PING") == "PONG"


@V72
def test_info_denial_counters(server, a):
    def counts():
        text = a.call("INFO", "stats").decode()
        return {k: int(v) for k, v in (l.split(":") for l in text.split("\r\n") if l.startswith("acl_access_denied"))}
    before = counts()
    # 7.2's four, and Redis 8.6's tls_cert (tests/integration/test_tls_cert_user.py).
    assert set(before) - {"acl_access_denied_tls_cert"} == {"acl_access_denied_auth", "acl_access_denied_cmd",
                                                            "acl_access_denied_key", "acl_access_denied_channel"}
    a.call("ACL", "SETUSER", "ic", "on", ">pw", "+get", "+publish", "~k*")
    c = as_user(server, "ic")
    c.call("GET", "z")
    c.call("SET", "k", "v")
    c.call("PUBLISH", "ch", "m")
    c.call("AUTH", "ic", "bad")
    after = counts()
    assert {k: after[k] - before[k] for k in after} == dict(
        {"acl_access_denied_auth": 1, "acl_access_denied_cmd": 1, "acl_access_denied_key": 1,
         "acl_access_denied_channel": 1}, **({"acl_access_denied_tls_cert": 0} if "acl_access_denied_tls_cert" in after else {}))
    c.close()


@V72
def test_blocked_command_checked_again_when_served(server, a):
    a.call("CONFIG", "RESETSTAT")
    a.call("ACL", "SETUSER", "bl", "on", ">pw", "+@all", "allkeys")
    c = as_user(server, "bl")
    c.send("BLPOP", "bl:list", "0")
    deadline = time.time() + 5
    while b"cmd=blpop" not in a.call("CLIENT", "LIST") and time.time() < deadline:
        time.sleep(0.01)
    a.call("ACL", "SETUSER", "bl", "resetkeys")
    assert a.call("LPUSH", "bl:list", "foo") == 1
    assert err(c.read()) == NOPERM_KEY
    assert a.call("LLEN", "bl:list") == 1  # nothing was popped
    assert c.call("PING") == "PONG"
    # A rejected call, not a call (Redis 7.2's unit/acl): calls=0, usec=0.
    line = [l for l in a.call("INFO", "commandstats").decode().split("\r\n") if l.startswith("cmdstat_blpop:")]
    assert len(line) == 1 and line[0].startswith("cmdstat_blpop:calls=0,usec=0,"), line
    assert ",rejected_calls=1,failed_calls=0" in line[0]
    c.close()
