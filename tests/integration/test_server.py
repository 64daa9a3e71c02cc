"""Connection and server commands: PING/ECHO/QUIT/RESET, SELECT, AUTH,
CLIENT *, COMMAND *, INFO, CONFIG, TIME, LASTSAVE, DEBUG, SHUTDOWN and
SIGTERM.  Expectations are Redis 7.x behaviour."""
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from helpers import (IS_REDIS, Resp, Server, client_list_entries, free_port, info_sections,
                     needs_config, parse_info, read_until_close, requires_config,
                     wait_until)


def info_text(c, *sections):
    reply = c.call("INFO", *sections)
    if isinstance(reply, tuple) and reply[0] == "verbatim":
        return reply[2].decode()
    assert isinstance(reply, bytes), reply
    return reply.decode()


def info_fields(c, section):
    return parse_info(info_text(c, section))[None]


def config_get(c, *params):
    reply = c.call("CONFIG", "GET", *params)
    if isinstance(reply, dict):
        return {k.decode(): v.decode() for k, v in reply.items()}
    return {reply[i].decode(): reply[i + 1].decode() for i in range(0, len(reply), 2)}


def connected(port):
    """A Resp connection the server has certainly registered (answered PING)."""
    c = Resp(port)
    assert c.call("PING") == "PONG"
    return c


def first_client(server):
    """First client of a fresh server, returned once the server has also
    accepted and dropped the probe connection Server() made, so client
    counts are exact.  (connected_clients == 1 alone is not enough: with
    several workers the probe may still wait in another worker's accept
    queue, to be accepted - and counted - later.)"""
    c = connected(server.port)

    def settled():
        clients = info_fields(c, "clients")["connected_clients"]
        accepted = int(info_fields(c, "stats")["total_connections_received"])
        return clients == "1" and accepted >= 2
    assert wait_until(settled)
    return c


def closed_by_server(c, timeout=3.0):
    return read_until_close(c.s, timeout) == (b"", True)


def my_info(c):
    return client_list_entries(c.call("CLIENT", "INFO"))[0]


def requires_72(c):
    """CLIENT SETINFO / NO-TOUCH exist from Redis 7.2; skip on an older
    redis-server (HotKV must implement them)."""
    if IS_REDIS:
        ver = tuple(int(x) for x in re.findall(
            r"\d+", parse_info(info_text(c, "server"))[None]["redis_version"])[:3])
        if ver < (7, 2, 0):
            pytest.skip("redis-server %s predates CLIENT SETINFO/NO-TOUCH (7.2)" % (ver,))


@pytest.fixture(scope="module")
def auth_server():
    s = Server("--requirepass", "pw")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def debug_server(server):
    """Redis 7 refuses DEBUG unless enable-debug-command is set; HotKV
    allows DEBUG by default, so only redis-server gets the option."""
    if IS_REDIS:
        s = Server("--enable-debug-command", "yes")
        yield s
        s.stop()
    else:
        yield server


@pytest.fixture
def dbg(debug_server):
    c = Resp(debug_server.port)
    assert c.call("FLUSHALL") == "OK"
    yield c
    c.close()


@pytest.fixture
def fresh_server():
    """A private server for tests that kill clients broadly or stop it."""
    s = Server()
    yield s
    s.stop()


# ------------------------------------------------------- PING / ECHO / QUIT

def test_ping_replies_pong(resp):
    assert resp.call("PING") == "PONG"


def test_ping_with_message_replies_bulk(resp):
    assert resp.call("PING", "hello world") == b"hello world"


def test_ping_arity(resp):
    assert resp.call("PING", "a", "b") == \
        ("error", "ERR wrong number of arguments for 'ping' command")


def test_echo_is_binary_safe(resp):
    assert resp.call("ECHO", b"a\x00b\r\nc") == b"a\x00b\r\nc"


def test_echo_arity(resp):
    assert resp.call("ECHO") == ("error", "ERR wrong number of arguments for 'echo' command")
    assert resp.call("ECHO", "a", "b") == \
        ("error", "ERR wrong number of arguments for 'echo' command")


def test_quit_replies_ok_and_closes(server):
    c = connected(server.port)
    assert c.call("QUIT") == "OK"
    assert closed_by_server(c)


def test_quit_allowed_before_auth(auth_server):
    c = Resp(auth_server.port)
    assert c.call("QUIT") == "OK"
    assert closed_by_server(c)


def test_reset_restores_connection_defaults(server, r):
    c = connected(server.port)
    assert c.call("SELECT", "2") == "OK"
    assert c.call("SET", "in2", "x") == "OK"
    assert isinstance(c.call("HELLO", "3", "SETNAME", "nm"), dict)
    assert c.call("RESET") == "RESET"
    assert c.call("CLIENT", "GETNAME") is None
    assert c.call("GET", "in2") is None          # back in db 0
    assert c.call("CONFIG", "GET", "nosuchparam") == []   # back to RESP2
    assert my_info(c)["db"] == "0"
    c.close()


def test_reset_deauthenticates(auth_server):
    c = Resp(auth_server.port)
    assert c.call("AUTH", "pw") == "OK"
    assert c.call("PING") == "PONG"
    assert c.call("RESET") == "RESET"
    assert c.call("GET", "x") == ("error", "NOAUTH Authentication required.")
    c.close()


# -------------------------------------------------------------------- SELECT

def test_select_switches_database(resp):
    assert resp.call("SET", "k", "db0") == "OK"
    assert resp.call("SELECT", "15") == "OK"
    assert resp.call("GET", "k") is None
    assert resp.call("SET", "k", "db15") == "OK"
    assert resp.call("SELECT", "0") == "OK"
    assert resp.call("GET", "k") == b"db0"
    assert resp.call("SELECT", "15") == "OK"
    assert resp.call("GET", "k") == b"db15"


def test_select_is_per_connection(server, r):
    a = connected(server.port)
    b = connected(server.port)
    assert a.call("SELECT", "3") == "OK"
    assert a.call("SET", "k", "3") == "OK"
    assert b.call("GET", "k") is None
    a.close()
    b.close()


@pytest.mark.parametrize("index", ["16", "-1", "1000"])
def test_select_out_of_range(resp, index):
    assert resp.call("SELECT", index) == ("error", "ERR DB index is out of range")


def test_select_not_integer(resp):
    assert resp.call("SELECT", "abc") == ("error", "ERR value is not an integer or out of range")


# ------------------------------------------------------ AUTH / requirepass

def test_noauth_error_before_auth(auth_server):
    c = Resp(auth_server.port)
    assert c.call("GET", "x") == ("error", "NOAUTH Authentication required.")
    assert c.call("PING") == ("error", "NOAUTH Authentication required.")
    assert c.call("CLIENT", "ID") == ("error", "NOAUTH Authentication required.")
    c.close()


def test_auth_wrong_password_is_wrongpass(auth_server):
    c = Resp(auth_server.port)
    wrongpass = ("error", "WRONGPASS invalid username-password pair or user is disabled.")
    assert c.call("AUTH", "bad") == wrongpass
    assert c.call("AUTH", "default", "bad") == wrongpass
    assert c.call("AUTH", "nosuchuser", "pw") == wrongpass
    assert c.call("GET", "x") == ("error", "NOAUTH Authentication required.")
    c.close()


def test_auth_with_password(auth_server):
    c = Resp(auth_server.port)
    assert c.call("AUTH", "pw") == "OK"
    assert c.call("SET", "x", "1") == "OK"
    assert c.call("GET", "x") == b"1"
    c.close()


def test_auth_with_default_user_and_password(auth_server):
    c = Resp(auth_server.port)
    assert c.call("AUTH", "default", "pw") == "OK"
    assert c.call("PING") == "PONG"
    c.close()


def test_auth_syntax_error_with_three_args(auth_server):
    c = Resp(auth_server.port)
    assert c.call("AUTH", "a", "b", "c") == ("error", "ERR syntax error")
    c.close()


def test_auth_without_configured_password(resp):
    assert resp.call("AUTH", "x") == (
        "error", "ERR AUTH <password> called without any password configured for the "
                 "default user. Are you sure your configuration is correct?")


def test_config_set_requirepass_applies_to_new_connections(server, r):
    c = connected(server.port)
    try:
        assert c.call("CONFIG", "SET", "requirepass", "sekrit") == "OK"
        assert config_get(c, "requirepass") == {"requirepass": "sekrit"}
        n = Resp(server.port)
        assert n.call("GET", "x") == ("error", "NOAUTH Authentication required.")
        assert n.call("AUTH", "sekrit") == "OK"
        assert n.call("GET", "x") is None
        n.close()
    finally:
        assert c.call("CONFIG", "SET", "requirepass", "") == "OK"
        c.close()
    n = Resp(server.port)
    assert n.call("PING") == "PONG"
    n.close()


# -------------------------------------------------------------------- CLIENT

def test_client_id_is_integer_unique_and_increasing(server):
    a = connected(server.port)
    b = connected(server.port)
    ida = a.call("CLIENT", "ID")
    idb = b.call("CLIENT", "ID")
    assert isinstance(ida, int) and isinstance(idb, int)
    assert idb > ida > 0
    assert a.call("CLIENT", "ID") == ida
    a.close()
    b.close()


def test_client_setname_getname(resp):
    assert resp.call("CLIENT", "GETNAME") is None
    assert resp.call("CLIENT", "SETNAME", "worker-1") == "OK"
    assert resp.call("CLIENT", "GETNAME") == b"worker-1"


def test_client_setname_empty_clears_name(resp):
    assert resp.call("CLIENT", "SETNAME", "x") == "OK"
    assert resp.call("CLIENT", "SETNAME", "") == "OK"
    assert resp.call("CLIENT", "GETNAME") is None


@pytest.mark.parametrize("name", ["a b", "a\nb", "tab\there"])
def test_client_setname_rejects_special_characters(resp, name):
    assert resp.call("CLIENT", "SETNAME", name) == \
        ("error", "ERR Client names cannot contain spaces, newlines or special characters.")


def test_client_setname_arity(resp):
    assert resp.call("CLIENT", "SETNAME", "x", "y") == \
        ("error", "ERR wrong number of arguments for 'client|setname' command")


def test_client_unknown_subcommand(resp):
    assert resp.call("CLIENT", "FOO") == \
        ("error", "ERR unknown subcommand 'FOO'. Try CLIENT HELP.")


def test_client_without_subcommand(resp):
    assert resp.call("CLIENT") == ("error", "ERR wrong number of arguments for 'client' command")


def test_client_info_describes_this_connection(resp):
    my_id = resp.call("CLIENT", "ID")
    assert resp.call("CLIENT", "SETNAME", "me") == "OK"
    assert resp.call("SELECT", "3") == "OK"
    line = resp.call("CLIENT", "INFO")
    assert isinstance(line, bytes) and line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.startswith(b"id=%d addr=" % my_id)
    e = client_list_entries(line)[0]
    assert e["id"] == str(my_id)
    assert e["name"] == "me"
    assert e["db"] == "3"
    assert e["cmd"] == "client|info"
    assert e["user"] == "default"
    assert e["resp"] == "2"
    assert e["laddr"].endswith(":%d" % resp.s.getpeername()[1])
    assert e["addr"] == "%s:%d" % resp.s.getsockname()


def test_client_info_resp3_is_verbatim_text(resp3):
    reply = resp3.call("CLIENT", "INFO")
    assert reply[0] == "verbatim" and reply[1] == "txt"
    assert client_list_entries(reply[2])[0]["resp"] == "3"


def test_client_list_contains_all_connections(server):
    a = connected(server.port)
    b = connected(server.port)
    assert b.call("CLIENT", "SETNAME", "bee") == "OK"
    entries = client_list_entries(a.call("CLIENT", "LIST"))
    by_id = {int(e["id"]): e for e in entries}
    ida, idb = a.call("CLIENT", "ID"), b.call("CLIENT", "ID")
    assert ida in by_id and idb in by_id
    assert by_id[idb]["name"] == "bee"
    assert by_id[ida]["cmd"] == "client|list"
    assert by_id[idb]["cmd"] == "client|setname"
    for e in entries:
        for field in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags",
                      "db", "sub", "psub", "multi", "cmd", "user", "resp"):
            assert field in e, (field, e)
    a.close()
    b.close()


def test_client_list_line_format(resp):
    text = resp.call("CLIENT", "LIST")
    assert isinstance(text, bytes) and text.endswith(b"\n")
    for line in text.decode().rstrip("\n").split("\n"):
        assert re.match(r"^id=\d+ addr=\S+:\d+ laddr=\S+:\d+ fd=\d+ name=\S* age=\d+ idle=\d+ ", line), line


def test_client_list_by_id(server):
    a = connected(server.port)
    b = connected(server.port)
    c = connected(server.port)
    ida, idb = a.call("CLIENT", "ID"), b.call("CLIENT", "ID")
    entries = client_list_entries(c.call("CLIENT", "LIST", "ID", str(ida), str(idb)))
    assert sorted(int(e["id"]) for e in entries) == sorted([ida, idb])
    assert c.call("CLIENT", "LIST", "ID", "999999999") == b""
    assert c.call("CLIENT", "LIST", "ID", "abc") == ("error", "ERR Invalid client ID")
    for x in (a, b, c):
        x.close()


def test_client_list_by_type(resp):
    my_id = resp.call("CLIENT", "ID")
    entries = client_list_entries(resp.call("CLIENT", "LIST", "TYPE", "normal"))
    assert my_id in [int(e["id"]) for e in entries]
    assert resp.call("CLIENT", "LIST", "TYPE", "pubsub") == b""
    assert resp.call("CLIENT", "LIST", "TYPE", "bad") == ("error", "ERR Unknown client type 'bad'")
    assert resp.call("CLIENT", "LIST", "FOO") == ("error", "ERR syntax error")


def test_client_kill_old_form_by_addr(server):
    a = connected(server.port)
    b = connected(server.port)
    addr = my_info(b)["addr"]
    assert a.call("CLIENT", "KILL", addr) == "OK"
    assert closed_by_server(b)
    assert a.call("PING") == "PONG"
    assert a.call("CLIENT", "KILL", addr) == ("error", "ERR No such client")
    a.close()


def test_client_kill_old_form_unknown_addr(resp):
    assert resp.call("CLIENT", "KILL", "1.2.3.4:5") == ("error", "ERR No such client")


def test_client_kill_by_id(server):
    a = connected(server.port)
    b = connected(server.port)
    idb = b.call("CLIENT", "ID")
    assert a.call("CLIENT", "KILL", "ID", str(idb)) == 1
    assert closed_by_server(b)
    assert a.call("CLIENT", "KILL", "ID", str(idb)) == 0
    assert a.call("CLIENT", "KILL", "ID", "abc") == \
        ("error", "ERR client-id should be greater than 0")
    a.close()


def test_client_kill_by_addr_filter_counts(server):
    a = connected(server.port)
    b = connected(server.port)
    addr = my_info(b)["addr"]
    assert a.call("CLIENT", "KILL", "ADDR", addr) == 1
    assert closed_by_server(b)
    assert a.call("CLIENT", "KILL", "ADDR", "1.1.1.1:1") == 0
    a.close()


def test_client_kill_self_is_skipped_by_default(resp):
    my_id = resp.call("CLIENT", "ID")
    assert resp.call("CLIENT", "KILL", "ID", str(my_id)) == 0
    assert resp.call("PING") == "PONG"


def test_client_kill_skipme_no_kills_self(server):
    a = connected(server.port)
    my_id = a.call("CLIENT", "ID")
    assert a.call("CLIENT", "KILL", "ID", str(my_id), "SKIPME", "no") == 1
    assert closed_by_server(a)


def test_client_kill_laddr_and_skipme(fresh_server):
    a = first_client(fresh_server)
    b = connected(fresh_server.port)
    c = connected(fresh_server.port)
    laddr = my_info(a)["laddr"]
    assert a.call("CLIENT", "KILL", "LADDR", laddr, "SKIPME", "yes") == 2
    assert closed_by_server(b) and closed_by_server(c)
    assert a.call("PING") == "PONG"
    assert a.call("CLIENT", "KILL", "LADDR", "127.0.0.1:1") == 0
    assert a.call("CLIENT", "KILL", "LADDR", laddr, "SKIPME", "no") == 1
    assert closed_by_server(a)


def test_client_kill_by_user(fresh_server):
    a = first_client(fresh_server)
    b = connected(fresh_server.port)
    assert a.call("CLIENT", "KILL", "USER", "default") == 1
    assert closed_by_server(b)
    assert a.call("CLIENT", "KILL", "USER", "nouser") == ("error", "ERR No such user 'nouser'")
    a.close()


def test_client_kill_by_type(fresh_server):
    a = first_client(fresh_server)
    b = connected(fresh_server.port)
    c = connected(fresh_server.port)
    assert a.call("CLIENT", "KILL", "TYPE", "pubsub") == 0
    assert a.call("CLIENT", "KILL", "TYPE", "normal") == 2
    assert closed_by_server(b) and closed_by_server(c)
    assert a.call("PING") == "PONG"
    assert a.call("CLIENT", "KILL", "TYPE", "foo") == ("error", "ERR Unknown client type 'foo'")
    a.close()


def test_client_kill_filter_errors(resp):
    assert resp.call("CLIENT", "KILL", "SKIPME", "maybe") == ("error", "ERR syntax error")
    assert resp.call("CLIENT", "KILL", "ID", "1", "FOO", "x") == ("error", "ERR syntax error")


def test_client_setinfo_lib_name_and_ver(resp):
    requires_72(resp)
    assert resp.call("CLIENT", "SETINFO", "lib-name", "redis-py") == "OK"
    assert resp.call("CLIENT", "SETINFO", "lib-ver", "4.3.4") == "OK"
    e = my_info(resp)
    assert e["lib-name"] == "redis-py"
    assert e["lib-ver"] == "4.3.4"
    assert resp.call("CLIENT", "SETINFO", "LIB-NAME", "other") == "OK"
    assert my_info(resp)["lib-name"] == "other"


def test_client_setinfo_errors(resp):
    requires_72(resp)
    assert resp.call("CLIENT", "SETINFO", "foo", "x") == ("error", "ERR Unrecognized option 'foo'")
    assert resp.call("CLIENT", "SETINFO", "lib-name", "a b") == \
        ("error", "ERR lib-name cannot contain spaces, newlines or special characters.")
    assert resp.call("CLIENT", "SETINFO", "lib-name") == \
        ("error", "ERR wrong number of arguments for 'client|setinfo' command")


def test_client_no_evict(resp):
    assert resp.call("CLIENT", "NO-EVICT", "on") == "OK"
    assert "e" in my_info(resp)["flags"]
    assert resp.call("CLIENT", "NO-EVICT", "off") == "OK"
    assert "e" not in my_info(resp)["flags"]
    assert resp.call("CLIENT", "NO-EVICT", "maybe") == ("error", "ERR syntax error")


def test_client_no_touch(resp):
    requires_72(resp)
    assert resp.call("CLIENT", "NO-TOUCH", "on") == "OK"
    assert "T" in my_info(resp)["flags"]
    assert resp.call("CLIENT", "NO-TOUCH", "off") == "OK"
    assert "T" not in my_info(resp)["flags"]
    assert resp.call("CLIENT", "NO-TOUCH", "maybe") == ("error", "ERR syntax error")


def test_client_reply_off_suppresses_replies(resp):
    resp.send("CLIENT", "REPLY", "OFF")
    resp.send("SET", "k", "1")
    resp.send("GET", "k")
    assert resp.call("CLIENT", "REPLY", "ON") == "OK"
    assert resp.call("GET", "k") == b"1"


def test_client_reply_skip_suppresses_next_reply_only(resp):
    resp.send("CLIENT", "REPLY", "SKIP")
    resp.send("SET", "k", "2")
    assert resp.call("GET", "k") == b"2"
    assert resp.call("PING") == "PONG"


def test_client_reply_bad_argument(resp):
    assert resp.call("CLIENT", "REPLY", "maybe") == ("error", "ERR syntax error")


# ------------------------------------------------------------------- COMMAND

def _entry(reply, name):
    for e in reply:
        if e and e[0] == name:
            return e
    return None


def test_command_lists_all_commands_with_info_shape(resp):
    reply = resp.call("COMMAND")
    assert isinstance(reply, list) and len(reply) > 50
    get = _entry(reply, b"get")
    assert get is not None
    assert len(get) == 10
    assert get[1:2] + get[3:6] == [2, 1, 1, 1]
    assert "readonly" in get[2]
    for e in reply:
        assert isinstance(e[0], bytes) and isinstance(e[1], int)
        assert isinstance(e[2], list)


def test_command_count_matches_command(resp):
    count = resp.call("COMMAND", "COUNT")
    assert isinstance(count, int)
    assert count == len(resp.call("COMMAND"))


def test_command_info_get_and_mset(resp):
    reply = resp.call("COMMAND", "INFO", "get", "mset", "nosuchcmd")
    assert len(reply) == 3
    get, mset, missing = reply
    assert get[0] == b"get" and get[1] == 2 and get[3:6] == [1, 1, 1]
    assert set(get[2]) >= {"readonly", "fast"}
    assert "@read" in get[6] and "@string" in get[6]
    assert mset[0] == b"mset" and mset[1] == -3 and mset[3:6] == [1, -1, 2]
    assert "write" in mset[2]
    assert missing is None


def test_command_info_is_case_insensitive(resp):
    reply = resp.call("COMMAND", "INFO", "GET")
    assert reply[0][0] == b"get"


def test_command_info_subcommand(resp):
    (entry,) = resp.call("COMMAND", "INFO", "config|get")
    assert entry[0] == b"config|get"
    assert entry[1] == -3


def test_command_docs_get(resp):
    reply = resp.call("COMMAND", "DOCS", "get")
    assert reply[0] == b"get"
    doc = dict(zip(reply[1][0::2], reply[1][1::2]))
    assert {b"summary", b"since", b"group", b"complexity", b"arguments"} <= set(doc)
    assert doc[b"group"] == b"string"
    assert doc[b"since"] == b"1.0.0"
    assert doc[b"complexity"] == b"O(1)"


def test_command_docs_resp3_is_map(resp3):
    reply = resp3.call("COMMAND", "DOCS", "get")
    assert isinstance(reply, dict) and list(reply) == [b"get"]
    assert reply[b"get"][b"group"] == b"string"


def test_command_docs_unknown_is_empty(resp):
    assert resp.call("COMMAND", "DOCS", "nosuchcmd") == []


def test_command_list(resp):
    names = resp.call("COMMAND", "LIST")
    assert b"get" in names and b"set" in names and b"command" in names
    assert b"config|get" in names
    assert len(names) == len(set(names))


def test_command_list_filterby_pattern(resp):
    assert sorted(resp.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "incr*")) == \
        [b"incr", b"incrby", b"incrbyfloat"]
    assert resp.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "config|g*") == [b"config|get"]
    assert resp.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "nosuch*") == []


def test_command_list_filterby_bad_option(resp):
    assert resp.call("COMMAND", "LIST", "FILTERBY", "FOO", "x") == ("error", "ERR syntax error")


def test_command_getkeys(resp):
    assert resp.call("COMMAND", "GETKEYS", "get", "a") == [b"a"]
    assert resp.call("COMMAND", "GETKEYS", "set", "k", "v") == [b"k"]
    assert resp.call("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2") == [b"a", b"b"]
    assert resp.call("COMMAND", "GETKEYS", "mget", "a", "b", "c") == [b"a", b"b", b"c"]


def test_command_getkeys_errors(resp):
    assert resp.call("COMMAND", "GETKEYS", "nosuchcmd", "a") == \
        ("error", "ERR Invalid command specified")
    assert resp.call("COMMAND", "GETKEYS", "ping", "x") == \
        ("error", "ERR The command has no key arguments")
    assert resp.call("COMMAND", "GETKEYS", "get", "a", "b") == \
        ("error", "ERR Invalid number of arguments specified for command")
    # Redis 7.2 lowered GETKEYS's arity to -3: the command name alone is
    # checked against the command's own arity (7.0: -4, an arity error).
    v = info_fields(resp, "server")["redis_version"]
    if tuple(int(x) for x in v.split(".")[:2]) >= (7, 2):
        assert resp.call("COMMAND", "GETKEYS", "get") == \
            ("error", "ERR Invalid number of arguments specified for command")
    else:
        assert resp.call("COMMAND", "GETKEYS", "get") == \
            ("error", "ERR wrong number of arguments for 'command|getkeys' command")
    assert resp.call("COMMAND", "GETKEYS") == \
        ("error", "ERR wrong number of arguments for 'command|getkeys' command")


def test_command_unknown_subcommand(resp):
    assert resp.call("COMMAND", "FOO") == \
        ("error", "ERR unknown subcommand 'FOO'. Try COMMAND HELP.")


# ---------------------------------------------------------------------- INFO

def test_info_server_fields(server, resp):
    f = info_fields(resp, "server")
    assert re.match(r"^\d+\.\d+\.\d+$", f["redis_version"])
    assert f["tcp_port"] == str(server.port)
    assert int(f["uptime_in_seconds"]) >= 0
    assert int(f["process_id"]) > 0
    if server.proc is not None:
        assert int(f["process_id"]) == server.proc.pid


def test_info_hotkv_version(resp):
    if IS_REDIS:
        pytest.skip("hotkv_version is HotKV-only")
    f = info_fields(resp, "server")
    assert re.match(r"^\d+\.\d+\.\d+", f["hotkv_version"])


def test_info_uptime_advances(resp):
    first = int(info_fields(resp, "server")["uptime_in_seconds"])
    time.sleep(1.1)
    assert int(info_fields(resp, "server")["uptime_in_seconds"]) >= first + 1


def test_info_connected_clients_tracks_connections(fresh_server):
    c = first_client(fresh_server)
    extra = [connected(fresh_server.port) for _ in range(3)]
    assert info_fields(c, "clients")["connected_clients"] == "4"
    for x in extra:
        x.close()
    assert wait_until(lambda: info_fields(c, "clients")["connected_clients"] == "1")
    c.close()


def test_info_used_memory_grows_with_data(resp):
    before = int(info_fields(resp, "memory")["used_memory"])
    assert before > 0
    assert resp.call("SET", "big", b"x" * (4 * 1024 * 1024)) == "OK"
    after = int(info_fields(resp, "memory")["used_memory"])
    assert after >= before + 4 * 1024 * 1024
    assert resp.call("DEL", "big") == 1


def test_info_total_commands_processed(resp):
    first = int(info_fields(resp, "stats")["total_commands_processed"])
    for _ in range(5):
        assert resp.call("PING") == "PONG"
    second = int(info_fields(resp, "stats")["total_commands_processed"])
    assert second - first == 6   # five PINGs and the first INFO


def test_info_keyspace_hits_and_misses(resp):
    assert resp.call("SET", "a", "1") == "OK"
    assert resp.call("CONFIG", "RESETSTAT") == "OK"
    assert resp.call("GET", "a") == b"1"
    assert resp.call("GET", "a") == b"1"
    assert resp.call("GET", "nokey") is None
    f = info_fields(resp, "stats")
    assert f["keyspace_hits"] == "2"
    assert f["keyspace_misses"] == "1"


def test_info_expired_keys(resp):
    assert resp.call("CONFIG", "RESETSTAT") == "OK"
    assert resp.call("SET", "shortlived", "v", "PX", "30") == "OK"
    time.sleep(0.1)
    assert resp.call("GET", "shortlived") is None
    assert info_fields(resp, "stats")["expired_keys"] == "1"


def test_info_keyspace_lines(resp):
    assert resp.call("MSET", "a", "1", "b", "2") == "OK"
    assert resp.call("SET", "c", "3", "EX", "100") == "OK"
    text = info_text(resp, "keyspace")
    assert text.startswith("# Keyspace\r\n")
    assert re.search(r"\r\ndb0:keys=3,expires=1,avg_ttl=\d+\r\n", text)
    assert "db1:" not in text
    assert resp.call("SELECT", "2") == "OK"
    assert resp.call("SET", "x", "1") == "OK"
    text = info_text(resp, "keyspace")
    assert "\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n" in text


def test_info_keyspace_empty_when_no_keys(resp):
    assert info_text(resp, "keyspace") == "# Keyspace\r\n"


def test_info_commandstats(resp):
    assert resp.call("CONFIG", "RESETSTAT") == "OK"
    for _ in range(3):
        resp.call("GET", "x")
    text = info_text(resp, "commandstats")
    assert text.startswith("# Commandstats\r\n")
    assert re.search(r"\r\ncmdstat_get:calls=3,usec=\d+,usec_per_call=\d+\.\d\d,"
                     r"rejected_calls=0,failed_calls=0\r\n", text), text
    assert "cmdstat_set:" not in text


def test_info_commandstats_counts_rejected_calls(resp):
    assert resp.call("CONFIG", "RESETSTAT") == "OK"
    resp.call("GET", "x")
    assert resp.call("GET", "x", "y")[0] == "error"
    text = info_text(resp, "commandstats")
    assert re.search(r"cmdstat_get:calls=1,usec=\d+,usec_per_call=[\d.]+,"
                     r"rejected_calls=1,failed_calls=0\r\n", text), text


def test_info_single_section_only(resp):
    assert info_sections(info_text(resp, "server")) == ["Server"]
    assert info_sections(info_text(resp, "SERVER")) == ["Server"]


def test_info_several_sections(resp):
    assert info_sections(info_text(resp, "server", "clients")) == ["Server", "Clients"]
    assert info_sections(info_text(resp, "memory", "stats", "keyspace")) == \
        ["Memory", "Stats", "Keyspace"]


def _in_order(have, want):
    pos = [have.index(s) for s in want]
    return pos == sorted(pos)


MAIN_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication",
                 "CPU", "Keyspace"]


def test_info_default_sections(resp):
    plain = info_sections(info_text(resp))
    default = info_sections(info_text(resp, "default"))
    assert plain == default
    assert set(MAIN_SECTIONS) <= set(plain)
    assert _in_order(plain, MAIN_SECTIONS)
    assert "Commandstats" not in plain


# Fields of Debian's redis-server 7.0 INFO that HotKV does not print:
# Redis resizes each client's 16 KiB reply buffer from its cron and counts
# it; HotKV's reply buffers have no such resizing to count.
INFO_NOT_PRINTED = {"reply_buffer_shrinks", "reply_buffer_expands"}


def _section_fields(text):
    out, cur = {}, None
    for line in text.split("\r\n"):
        if line.startswith("# "):
            cur = out.setdefault(line[2:].strip(), [])
        elif ":" in line and cur is not None:
            cur.append(line.split(":", 1)[0])
    return out


@pytest.mark.skipif(IS_REDIS or not shutil.which("redis-server"), reason="compares with redis-server")
def test_info_prints_every_field_redis_prints(resp):
    """Each field of redis-server 7.0's default INFO sections is in HotKV's
    INFO, in the same section and in the same order (HotKV may add its
    own).  Fields that depend on state (per-db keyspace lines, replicas,
    modules, errors) are left out by comparing two fresh servers."""
    port = free_port()
    d = tempfile.mkdtemp(prefix="hotkv-info-ref-")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--dir", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: _answers(port), timeout=10)
        ref = Resp(port)
        want = _section_fields(info_text(ref))
        ref.close()
    finally:
        p.terminate()
        p.wait(10)
        shutil.rmtree(d, ignore_errors=True)
    have = _section_fields(info_text(resp))
    for section, fields in want.items():
        if section in ("Keyspace", "Modules", "Errorstats"):
            continue
        assert section in have, section
        missing = [f for f in fields if f not in have[section] and f not in INFO_NOT_PRINTED]
        assert not missing, (section, missing)
        common = [f for f in fields if f in have[section]]
        assert _in_order(have[section], common), (section, common, have[section])


def _answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("arg", ["all", "everything"])
def test_info_all_and_everything_include_commandstats(resp, arg):
    sections = info_sections(info_text(resp, arg))
    assert set(MAIN_SECTIONS + ["Commandstats"]) <= set(sections)
    assert _in_order(sections, MAIN_SECTIONS)


def test_info_unknown_section_is_empty(resp):
    assert info_text(resp, "nosuchsection") == ""


def test_info_lines_are_crlf_terminated(resp):
    text = info_text(resp, "server")
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")


# -------------------------------------------------------------------- CONFIG

@requires_config("maxmemory")
def test_config_get_glob(resp):
    got = config_get(resp, "maxmemory*")
    assert set(got) == {"maxmemory", "maxmemory-policy", "maxmemory-samples",
                        "maxmemory-eviction-tenacity", "maxmemory-clients"}
    assert got["maxmemory"] == "0"
    assert got["maxmemory-policy"] == "noeviction"
    assert got["maxmemory-samples"] == "5"


def test_config_get_question_mark_glob(resp):
    assert config_get(resp, "timeou?") == {"timeout": "0"}


def test_config_get_multiple_params(server, resp):
    assert config_get(resp, "databases", "timeout", "port", "nosuchparam") == \
        {"databases": "16", "timeout": "0", "port": str(server.port)}


def test_config_get_unknown_is_empty(resp):
    assert resp.call("CONFIG", "GET", "nosuchparam") == []


def test_config_get_arity(resp):
    assert resp.call("CONFIG", "GET") == \
        ("error", "ERR wrong number of arguments for 'config|get' command")


def test_config_set_several_pairs(resp):
    try:
        assert resp.call("CONFIG", "SET", "timeout", "300", "hz", "7") == "OK"
        assert config_get(resp, "timeout", "hz") == {"timeout": "300", "hz": "7"}
    finally:
        assert resp.call("CONFIG", "SET", "timeout", "0", "hz", "10") == "OK"


def test_config_set_is_all_or_nothing(resp):
    assert resp.call("CONFIG", "SET", "timeout", "300", "maxmemory", "bad")[0] == "error"
    assert config_get(resp, "timeout") == {"timeout": "0"}


@pytest.mark.parametrize("value,expected", [
    ("1mb", "1048576"), ("2MB", "2097152"), ("1kb", "1024"), ("1k", "1000"),
    ("1gb", "1073741824"), ("12345", "12345"),
])
@requires_config("maxmemory")
def test_config_set_memory_units(resp, value, expected):
    try:
        assert resp.call("CONFIG", "SET", "maxmemory", value) == "OK"
        assert config_get(resp, "maxmemory") == {"maxmemory": expected}
    finally:
        assert resp.call("CONFIG", "SET", "maxmemory", "0") == "OK"


def _config_err(param, why):
    return ("error", "ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (param, why))


@pytest.mark.parametrize("param,value,why", [
    ("maxmemory", "abc", "argument must be a memory value"),
    ("maxmemory", "-1", "argument must be a memory value"),
    ("timeout", "-1", "argument must be between 0 and 2147483647 inclusive"),
    ("timeout", "abc", "argument couldn't be parsed into an integer"),
    ("timeout", "1.5", "argument couldn't be parsed into an integer"),
    ("maxclients", "0", "argument must be between 1 and 4294967295 inclusive"),
    ("appendonly", "maybe", "argument must be 'yes' or 'no'"),
    ("maxmemory-policy", "bogus",
     "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
     "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
])
def test_config_set_bad_value_error_text(resp, param, value, why):
    needs_config(resp, param)
    assert resp.call("CONFIG", "SET", param, value) == _config_err(param, why)


def test_config_set_duplicate_parameter(resp):
    assert resp.call("CONFIG", "SET", "timeout", "1", "timeout", "2") == \
        _config_err("timeout", "duplicate parameter")


def test_config_set_unknown_parameter(resp):
    assert resp.call("CONFIG", "SET", "nosuchparam", "1") == \
        ("error", "ERR Unknown option or number of arguments for CONFIG SET - 'nosuchparam'")


def test_config_set_arity(resp):
    assert resp.call("CONFIG", "SET", "timeout") == \
        ("error", "ERR wrong number of arguments for 'config|set' command")


def test_config_resetstat(resp):
    for _ in range(5):
        resp.call("GET", "x")
    assert resp.call("CONFIG", "RESETSTAT") == "OK"
    f = info_fields(resp, "stats")
    assert int(f["total_commands_processed"]) <= 2
    assert f["keyspace_misses"] == "0"
    assert f["keyspace_hits"] == "0"
    assert "cmdstat_get:" not in info_text(resp, "commandstats")


def test_config_resetstat_arity(resp):
    assert resp.call("CONFIG", "RESETSTAT", "x") == \
        ("error", "ERR wrong number of arguments for 'config|resetstat' command")


# ---------------------------------------------------------- TIME / LASTSAVE

def test_time(resp):
    reply = resp.call("TIME")
    assert isinstance(reply, list) and len(reply) == 2
    secs, usecs = int(reply[0]), int(reply[1])
    assert abs(secs + usecs / 1e6 - time.time()) < 5
    assert 0 <= usecs < 1000000


def test_lastsave(resp):
    ts = resp.call("LASTSAVE")
    assert isinstance(ts, int)
    assert 0 < ts <= time.time() + 1


# --------------------------------------------------------------------- DEBUG

def test_debug_sleep_zero(dbg):
    assert dbg.call("DEBUG", "SLEEP", "0") == "OK"


def test_debug_sleep_waits(dbg):
    t = time.time()
    assert dbg.call("DEBUG", "SLEEP", "0.2") == "OK"
    assert time.time() - t >= 0.19


def test_debug_populate_count(dbg):
    assert dbg.call("DEBUG", "POPULATE", "5") == "OK"
    assert dbg.call("DBSIZE") == 5
    assert sorted(dbg.call("KEYS", "*")) == [b"key:%d" % i for i in range(5)]
    assert dbg.call("GET", "key:3") == b"value:3"


def test_debug_populate_prefix(dbg):
    assert dbg.call("DEBUG", "POPULATE", "3", "pre") == "OK"
    assert sorted(dbg.call("KEYS", "*")) == [b"pre:0", b"pre:1", b"pre:2"]
    assert dbg.call("GET", "pre:2") == b"value:2"


def test_debug_populate_size_pads_and_truncates(dbg):
    assert dbg.call("DEBUG", "POPULATE", "2", "big", "12") == "OK"
    assert dbg.call("GET", "big:1") == b"value:1" + b"\x00" * 5
    assert dbg.call("DEBUG", "POPULATE", "2", "small", "3") == "OK"
    assert dbg.call("GET", "small:1") == b"val"


def test_debug_populate_keeps_existing_keys(dbg):
    assert dbg.call("SET", "key:1", "mine") == "OK"
    assert dbg.call("DEBUG", "POPULATE", "3") == "OK"
    assert dbg.call("GET", "key:1") == b"mine"
    assert dbg.call("GET", "key:2") == b"value:2"
    assert dbg.call("DBSIZE") == 3


def test_debug_populate_errors(dbg):
    assert dbg.call("DEBUG", "POPULATE", "-1") == \
        ("error", "ERR value is out of range, must be positive")
    assert dbg.call("DEBUG", "POPULATE", "abc") == \
        ("error", "ERR value is out of range, must be positive")


def test_debug_object(dbg):
    assert dbg.call("SET", "s", "hello") == "OK"
    out = dbg.call("DEBUG", "OBJECT", "s")
    assert isinstance(out, str)
    assert re.match(r"^Value at:\S+ refcount:\d+ encoding:embstr serializedlength:\d+ "
                    r"lru:\d+ lru_seconds_idle:\d+", out), out


def test_debug_object_encodings(dbg):
    assert dbg.call("SET", "n", "12345") == "OK"
    assert dbg.call("SET", "long", "x" * 100) == "OK"
    assert " encoding:int " in dbg.call("DEBUG", "OBJECT", "n")
    assert " encoding:raw " in dbg.call("DEBUG", "OBJECT", "long")


def test_debug_object_missing_key(dbg):
    assert dbg.call("DEBUG", "OBJECT", "nokey") == ("error", "ERR no such key")


def test_debug_unknown_subcommand(dbg):
    assert dbg.call("DEBUG", "FOO") == (
        "error", "ERR unknown subcommand or wrong number of arguments for 'FOO'. Try DEBUG HELP.")


# ----------------------------------------------------- SHUTDOWN and SIGTERM

def test_shutdown_nosave_stops_server(fresh_server):
    c = connected(fresh_server.port)
    c.send("SHUTDOWN", "NOSAVE")
    assert closed_by_server(c, timeout=5)
    assert fresh_server.proc.wait(10) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", fresh_server.port), timeout=1).close()


def test_shutdown_bad_argument(resp):
    assert resp.call("SHUTDOWN", "FOO") == ("error", "ERR syntax error")
    assert resp.call("PING") == "PONG"


def test_sigterm_exits_cleanly():
    s = Server()
    c = connected(s.port)
    assert c.call("SET", "k", "v") == "OK"
    assert s.stop() == 0
    assert closed_by_server(c)


@pytest.mark.parametrize("cmd", ["OBJECT", "MEMORY", "PUBSUB", "SLOWLOG", "CLIENT", "COMMAND", "CONFIG",
                                 "FUNCTION", "SCRIPT", "XINFO", "XGROUP", "ACL", "LATENCY"])
def test_help_starts_with_redis_header(resp, cmd):
    # Clients and Redis's own suite match this first line.
    lines = resp.call(cmd, "HELP")
    assert isinstance(lines, list) and len(lines) > 2, lines
    first = lines[0].decode() if isinstance(lines[0], bytes) else lines[0]
    assert first == "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" % cmd


def test_cluster_help_needs_cluster_mode(resp):
    assert resp.call("CLUSTER", "HELP") == ("error", "ERR This instance has cluster support disabled")
