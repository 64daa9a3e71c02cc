"""Wire protocol: RESP2/RESP3, HELLO, null shapes, inline commands,
pipelining, protocol errors, big and fragmented requests.

Every expectation here is Redis 7.x behaviour, checked byte for byte where
the exact encoding matters."""
import socket
import threading
import time

import pytest

from helpers import (RawConn, Resp, Server, encode_command, parse_info,
                     requires, send_expect_close)

HELLO_KEYS = [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]


@pytest.fixture(scope="module")
def auth_server():
    s = Server("--requirepass", "pw")
    yield s
    s.stop()


@pytest.fixture
def conn(server):
    c = RawConn(server.port)
    assert c.request(b"FLUSHALL\r\n", 5) == b"+OK\r\n"
    yield c
    c.close()


@pytest.fixture
def conn3(server):
    """Raw connection already switched to RESP3 (HELLO reply consumed)."""
    c = Resp(server.port)
    assert isinstance(c.call("HELLO", "3"), dict)
    assert c.call("FLUSHALL") == "OK"
    assert c.buf == b""
    rc = RawConn.__new__(RawConn)
    rc.s = c.s
    rc.timeout = 5.0
    rc.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    yield rc
    rc.close()


# --------------------------------------------------------------------- HELLO

def test_hello_without_args_replies_flat_array_in_resp2(resp):
    reply = resp.call("HELLO")
    assert isinstance(reply, list) and len(reply) == 14
    assert reply[0::2] == HELLO_KEYS
    fields = dict(zip(reply[0::2], reply[1::2]))
    assert fields[b"proto"] == 2
    assert fields[b"mode"] == b"standalone"
    assert fields[b"role"] == b"master"
    assert fields[b"modules"] == []


def test_hello_2_replies_flat_array(resp):
    reply = resp.call("HELLO", "2")
    assert reply[0::2] == HELLO_KEYS
    assert dict(zip(reply[0::2], reply[1::2]))[b"proto"] == 2


def test_hello_3_replies_map_with_all_fields(resp):
    my_id = resp.call("CLIENT", "ID")
    reply = resp.call("HELLO", "3")
    assert isinstance(reply, dict)
    assert list(reply.keys()) == HELLO_KEYS
    assert reply[b"server"] == b"redis"
    assert reply[b"proto"] == 3
    assert reply[b"id"] == my_id
    assert reply[b"mode"] == b"standalone"
    assert reply[b"role"] == b"master"
    assert reply[b"modules"] == []


def test_hello_version_matches_info_redis_version(resp):
    reply = resp.call("HELLO", "3")
    info = resp.call("INFO", "server")
    text = info[2] if isinstance(info, tuple) else info
    assert reply[b"version"].decode() == parse_info(text)[None]["redis_version"]


def test_hello_3_map_is_encoded_as_resp3_map(conn):
    conn.send(b"HELLO 3\r\n")
    head = conn.recv_n(len(b"%7\r\n$6\r\nserver\r\n"))
    assert head == b"%7\r\n$6\r\nserver\r\n"


# CONFIG GET of an unknown parameter is an empty map in RESP3 and an empty
# array in RESP2: the probe for which protocol a connection speaks.

def test_hello_2_after_hello_3_switches_back(resp):
    assert isinstance(resp.call("HELLO", "3"), dict)
    assert isinstance(resp.call("CONFIG", "GET", "nosuchparam"), dict)
    reply = resp.call("HELLO", "2")
    assert isinstance(reply, list)
    assert resp.call("CONFIG", "GET", "nosuchparam") == []


@pytest.mark.parametrize("version", ["4", "1", "0", "-1"])
def test_hello_unsupported_protocol_version(resp, version):
    assert resp.call("HELLO", version) == ("error", "NOPROTO unsupported protocol version")
    # The connection stays usable and in RESP2.
    assert resp.call("CONFIG", "GET", "nosuchparam") == []


def test_hello_non_integer_version(resp):
    assert resp.call("HELLO", "abc") == \
        ("error", "ERR Protocol version is not an integer or out of range")


def test_hello_unknown_option_is_syntax_error(resp):
    assert resp.call("HELLO", "3", "FOO") == ("error", "ERR Syntax error in HELLO option 'FOO'")
    # Failed HELLO does not switch protocol.
    assert resp.call("CONFIG", "GET", "nosuchparam") == []


def test_hello_auth_with_missing_password_is_syntax_error(resp):
    assert resp.call("HELLO", "3", "AUTH", "default") == \
        ("error", "ERR Syntax error in HELLO option 'AUTH'")


def test_hello_setname_sets_client_name(resp):
    reply = resp.call("HELLO", "3", "SETNAME", "proto-test")
    assert reply[b"proto"] == 3
    assert resp.call("CLIENT", "GETNAME") == b"proto-test"


def test_hello_setname_rejects_spaces(resp):
    assert resp.call("HELLO", "3", "SETNAME", "a b") == \
        ("error", "ERR Client names cannot contain spaces, newlines or special characters.")


def test_hello_without_auth_on_password_server_is_noauth(auth_server):
    c = Resp(auth_server.port)
    # Redis 7.0 says "the HELLO AUTH <user> <pass> option", 7.2 added "<proto>".
    texts = ["NOAUTH HELLO must be called with the client already authenticated, otherwise "
             "the HELLO %sAUTH <user> <pass> option can be used to authenticate the client "
             "and select the RESP protocol version at the same time" % proto
             for proto in ("", "<proto> ")]
    reply = c.call("HELLO", "3")
    assert reply[0] == "error" and reply[1] in texts, reply
    assert c.call("GET", "x") == ("error", "NOAUTH Authentication required.")
    c.close()


def test_hello_auth_wrong_password_is_wrongpass(auth_server):
    c = Resp(auth_server.port)
    assert c.call("HELLO", "3", "AUTH", "default", "bad") == \
        ("error", "WRONGPASS invalid username-password pair or user is disabled.")
    assert c.call("GET", "x") == ("error", "NOAUTH Authentication required.")
    c.close()


def test_hello_auth_and_setname_in_one_call(auth_server):
    c = Resp(auth_server.port)
    reply = c.call("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "myname")
    assert isinstance(reply, dict)
    assert reply[b"proto"] == 3
    assert c.call("GET", "x") is None
    assert c.call("CLIENT", "GETNAME") == b"myname"
    c.close()


def test_unauthenticated_multibulk_length_limit(auth_server):
    out, closed = send_expect_close(auth_server.port, b"*20\r\n")
    assert out == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    assert closed


def test_unauthenticated_bulk_length_limit(auth_server):
    out, closed = send_expect_close(auth_server.port, b"*1\r\n$20000\r\n")
    assert out == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    assert closed


# --------------------------------------------------------------- null shapes

def test_resp2_missing_key_is_null_bulk(conn):
    assert conn.request(b"GET nokey\r\n", 5) == b"$-1\r\n"


@requires("BLPOP")
def test_resp2_blpop_timeout_is_null_array(conn):
    assert conn.request(b"BLPOP nolist 0.01\r\n", 5) == b"*-1\r\n"


def test_resp2_mget_missing_element_is_null_bulk(conn):
    assert conn.request(b"SET k v\r\n", 5) == b"+OK\r\n"
    expected = b"*2\r\n$1\r\nv\r\n$-1\r\n"
    assert conn.request(b"MGET k nokey\r\n", len(expected)) == expected


@requires("HGETALL", "SMEMBERS")
def test_resp2_empty_hash_and_set_are_empty_arrays(conn):
    assert conn.request(b"HGETALL nokey\r\n", 4) == b"*0\r\n"
    assert conn.request(b"SMEMBERS nokey\r\n", 4) == b"*0\r\n"


def test_resp3_missing_key_is_underscore_null(conn3):
    assert conn3.request(b"GET nokey\r\n", 3) == b"_\r\n"


@requires("BLPOP")
def test_resp3_blpop_timeout_is_underscore_null(conn3):
    assert conn3.request(b"BLPOP nolist 0.01\r\n", 3) == b"_\r\n"


def test_resp3_mget_missing_element_is_underscore_null(conn3):
    assert conn3.request(b"SET k v\r\n", 5) == b"+OK\r\n"
    expected = b"*2\r\n$1\r\nv\r\n_\r\n"
    assert conn3.request(b"MGET k nokey\r\n", len(expected)) == expected


@requires("HSET", "HGETALL")
def test_resp3_hgetall_is_map(conn3):
    assert conn3.request(b"HSET h a 1\r\n", 4) == b":1\r\n"
    expected = b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert conn3.request(b"HGETALL h\r\n", len(expected)) == expected
    assert conn3.request(b"HGETALL nokey\r\n", 4) == b"%0\r\n"


@requires("SADD", "SMEMBERS")
def test_resp3_smembers_is_set(conn3):
    assert conn3.request(b"SADD s a\r\n", 4) == b":1\r\n"
    expected = b"~1\r\n$1\r\na\r\n"
    assert conn3.request(b"SMEMBERS s\r\n", len(expected)) == expected
    assert conn3.request(b"SMEMBERS nokey\r\n", 4) == b"~0\r\n"


@requires("ZADD", "ZSCORE", "ZRANGE")
def test_resp3_zscore_is_double(conn3):
    assert conn3.request(b"ZADD z 1.5 x 2 y\r\n", 4) == b":2\r\n"
    assert conn3.request(b"ZSCORE z x\r\n", 6) == b",1.5\r\n"
    assert conn3.request(b"ZSCORE z y\r\n", 4) == b",2\r\n"
    expected = b"*2\r\n*2\r\n$1\r\nx\r\n,1.5\r\n*2\r\n$1\r\ny\r\n,2\r\n"
    assert conn3.request(b"ZRANGE z 0 -1 WITHSCORES\r\n", len(expected)) == expected


@requires("ZADD", "ZSCORE")
def test_resp2_zscore_is_bulk_string(conn):
    assert conn.request(b"ZADD z 1.5 x\r\n", 4) == b":1\r\n"
    assert conn.request(b"ZSCORE z x\r\n", 9) == b"$3\r\n1.5\r\n"


def test_resp3_config_get_is_map(resp3):
    assert resp3.call("CONFIG", "GET", "databases") == {b"databases": b"16"}


@requires("HSET", "HGETALL", "SADD", "SMEMBERS")
def test_resp3_parsed_types(resp3):
    assert resp3.call("SET", "k", "v") == "OK"
    assert resp3.call("GET", "k") == b"v"
    assert resp3.call("EXISTS", "k") == 1
    assert resp3.call("GET", "nokey") is None
    assert resp3.call("HSET", "h", "f", "1") == 1
    assert resp3.call("HGETALL", "h") == {b"f": b"1"}
    assert resp3.call("SADD", "s", "m") == 1
    assert resp3.call("SMEMBERS", "s") == {b"m"}


# -------------------------------------------------------------------- inline

def test_inline_ping(conn):
    assert conn.request(b"PING\r\n", 7) == b"+PONG\r\n"


def test_inline_accepts_lf_only_line_ending(conn):
    assert conn.request(b"PING\n", 7) == b"+PONG\r\n"


def test_inline_double_and_single_quoted_args(conn):
    assert conn.request(b"SET \"a b\" 'x y'\r\n", 5) == b"+OK\r\n"
    assert conn.request(b"GET \"a b\"\r\n", 9) == b"$3\r\nx y\r\n"
    assert conn.request(b"EXISTS 'a b'\r\n", 4) == b":1\r\n"


def test_inline_escape_sequences_in_double_quotes(conn):
    assert conn.request(b'ECHO "a\\x41\\n\\t"\r\n', 10) == b"$4\r\naA\n\t\r\n"


def test_inline_escaped_quote_in_single_quotes(conn):
    assert conn.request(b"ECHO 'it\\'s'\r\n", 10) == b"$4\r\nit's\r\n"


def test_inline_empty_quoted_argument(conn):
    assert conn.request(b'ECHO ""\r\n', 6) == b"$0\r\n\r\n"
    assert conn.request(b"ECHO ''\r\n", 6) == b"$0\r\n\r\n"


def test_inline_empty_lines_are_ignored(conn):
    conn.send(b"\r\n\r\n\n")
    assert conn.request(b"PING\r\n", 7) == b"+PONG\r\n"
    # Nothing else was answered for the empty lines.
    assert conn.recv_n(1, timeout=0.3) == b""


def test_inline_extra_whitespace_between_args(conn):
    assert conn.request(b"   SET   k    v   \r\n", 5) == b"+OK\r\n"
    assert conn.request(b"GET k\r\n", 7) == b"$1\r\nv\r\n"


def test_inline_commands_are_case_insensitive(conn):
    assert conn.request(b"pInG\r\n", 7) == b"+PONG\r\n"


def test_inline_and_multibulk_mixed_in_one_packet(conn):
    data = b"PING\r\n*1\r\n$4\r\nPING\r\nPING\r\n"
    assert conn.request(data, 21) == b"+PONG\r\n" * 3


def test_empty_multibulk_is_ignored(conn):
    assert conn.request(b"*0\r\n*1\r\n$4\r\nPING\r\n", 7) == b"+PONG\r\n"


# ---------------------------------------------------------------- pipelining

def _pipeline(port, payload, expected_len, timeout=20.0):
    """Send payload from a thread while reading, so neither side blocks."""
    c = RawConn(port, timeout=timeout)
    t = threading.Thread(target=c.send, args=(payload,))
    t.start()
    out = c.recv_n(expected_len, timeout=timeout)
    t.join()
    c.close()
    return out


def test_pipeline_10000_incr_replies_in_order(server, r):
    payload = encode_command("INCR", "ctr") * 10000
    expected = b"".join(b":%d\r\n" % i for i in range(1, 10001))
    assert _pipeline(server.port, payload, len(expected)) == expected
    assert r.get("ctr") == "10000"


def test_pipeline_10000_mixed_commands_in_order(server, r):
    cmds = []
    expected = []
    for i in range(5000):
        cmds.append(encode_command("SET", "k%d" % i, "v%d" % i))
        expected.append(b"+OK\r\n")
        v = b"v%d" % i
        cmds.append(encode_command("GET", "k%d" % i))
        expected.append(b"$%d\r\n%s\r\n" % (len(v), v))
    expected = b"".join(expected)
    assert _pipeline(server.port, b"".join(cmds), len(expected)) == expected
    assert r.dbsize() == 5000


def test_pipeline_inline_commands_in_order(server, r):
    payload = b"".join(b"ECHO e%d\r\n" % i for i in range(2000))
    expected = b"".join(b"$%d\r\ne%d\r\n" % (len(b"e%d" % i), i) for i in range(2000))
    assert _pipeline(server.port, payload, len(expected)) == expected


# ----------------------------------------------------------- protocol errors

PROTOCOL_ERRORS = [
    (b"*abc\r\n", "invalid multibulk length"),
    (b"*\r\n", "invalid multibulk length"),
    (b"*3000000000\r\n", "invalid multibulk length"),
    (b"*1\r\n$abc\r\n", "invalid bulk length"),
    (b"*1\r\n$\r\n", "invalid bulk length"),
    (b"*1\r\n$-1\r\n", "invalid bulk length"),
    (b"*1\r\n$-5\r\n", "invalid bulk length"),
    (b"*1\r\n$536870913\r\n", "invalid bulk length"),
    (b"*1\r\nx\r\n", "expected '$', got 'x'"),
    (b"*2\r\n$4\r\nECHO\r\n:5\r\n", "expected '$', got ':'"),
    (b'PING "a b\r\n', "unbalanced quotes in request"),
    (b"PING 'a b\r\n", "unbalanced quotes in request"),
    (b'ECHO "abc"d\r\n', "unbalanced quotes in request"),
    (b"x" * 66000, "too big inline request"),
    (b"*" + b"1" * 66000, "too big mbulk count string"),
    (b"*1\r\n$" + b"1" * 66000, "too big bulk count string"),
]


@pytest.mark.parametrize("payload,message", PROTOCOL_ERRORS,
                         ids=[m + "-" + str(i) for i, (_, m) in enumerate(PROTOCOL_ERRORS)])
def test_protocol_error_replies_and_closes(server, payload, message):
    out, closed = send_expect_close(server.port, payload)
    assert out == b"-ERR Protocol error: " + message.encode() + b"\r\n"
    assert closed, "connection must be closed after a protocol error"


def test_commands_before_protocol_error_are_executed(server, r):
    out, closed = send_expect_close(
        server.port, b"PING\r\nSET a 1\r\n*abc\r\nSET b 2\r\n")
    assert out == b"+PONG\r\n+OK\r\n-ERR Protocol error: invalid multibulk length\r\n"
    assert closed
    assert r.get("a") == "1"
    assert r.get("b") is None


def test_server_serves_others_after_protocol_error(server, r):
    send_expect_close(server.port, b"*1\r\n$abc\r\n")
    assert r.ping() is True


def test_incomplete_command_waits_for_more_data(server):
    c = RawConn(server.port)
    c.send(b"*1\r\n$4\r\nPI")
    assert c.recv_n(1, timeout=0.3) == b""
    c.send(b"NG\r\n")
    assert c.recv_n(7) == b"+PONG\r\n"
    c.close()


# ------------------------------------------------- unknown command and arity

def test_unknown_command_error_lists_args(conn):
    expected = b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
    assert conn.request(b"FOO a b\r\n", len(expected)) == expected
    # The connection stays open.
    assert conn.request(b"PING\r\n", 7) == b"+PONG\r\n"


def test_unknown_command_keeps_case_of_name(conn):
    expected = b"-ERR unknown command 'fOo', with args beginning with: 'x' \r\n"
    assert conn.request(encode_command("fOo", "x"), len(expected)) == expected


def test_unknown_command_without_args(conn):
    expected = b"-ERR unknown command 'nosuchcmd', with args beginning with: \r\n"
    assert conn.request(b"nosuchcmd\r\n", len(expected)) == expected


def test_unknown_command_in_resp_client(resp):
    assert resp.call("FOO", "a", "b") == \
        ("error", "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")


@pytest.mark.parametrize("args,name", [
    (("GET",), "get"),
    (("get", "a", "b"), "get"),
    (("SET", "a"), "set"),
    (("ECHO",), "echo"),
    (("PING", "a", "b"), "ping"),
    (("INCR",), "incr"),
    (("MSET", "a"), "mset"),
    (("MSET", "a", "1", "b"), "mset"),
    (("CONFIG", "GET"), "config|get"),
])
def test_arity_error_text(resp, args, name):
    assert resp.call(*args) == \
        ("error", "ERR wrong number of arguments for '%s' command" % name)


def test_arity_error_keeps_connection_open(resp):
    assert resp.call("GET")[0] == "error"
    assert resp.call("PING") == "PONG"


# ----------------------------------------------------- big and split requests

def test_bulk_argument_of_20mb(server, r):
    size = 20 * 1024 * 1024
    value = bytes(range(256)) * (size // 256)
    c = Resp(server.port, timeout=30)
    assert c.call("SET", "big", value) == "OK"
    assert c.call("STRLEN", "big") == size
    assert c.call("GETRANGE", "big", "-3", "-1") == value[-3:]
    assert c.call("GET", "big") == value
    assert c.call("DEL", "big") == 1
    c.close()


def test_binary_safe_bulk_with_crlf_and_nul(resp):
    value = b"a\r\nb\x00c\r\n$-1\r\n"
    assert resp.call("SET", b"bin\r\nkey", value) == "OK"
    assert resp.call("GET", b"bin\r\nkey") == value


def test_multibulk_command_split_byte_by_byte(server, r):
    c = RawConn(server.port)
    for b in encode_command("SET", "split", "hello world"):
        c.send(bytes([b]))
        time.sleep(0.0005)
    assert c.recv_n(5) == b"+OK\r\n"
    c.close()
    assert r.get("split") == "hello world"


def test_inline_command_split_byte_by_byte(server, r):
    c = RawConn(server.port)
    for b in b"SET 'in line' \"v v\"\r\n":
        c.send(bytes([b]))
        time.sleep(0.0005)
    assert c.recv_n(5) == b"+OK\r\n"
    c.close()
    assert r.get("in line") == "v v"


def test_pipeline_split_at_awkward_boundaries(server):
    c = RawConn(server.port)
    data = encode_command("PING") + encode_command("ECHO", "abc") + b"PING\r\n"
    for chunk in (data[:3], data[3:9], data[9:15], data[15:17], data[17:30], data[30:]):
        c.send(chunk)
        time.sleep(0.01)
    expected = b"+PONG\r\n$3\r\nabc\r\n+PONG\r\n"
    assert c.recv_n(len(expected)) == expected
    c.close()


def test_large_value_split_across_many_sends(server, r):
    value = b"z" * 300000
    data = encode_command("SET", "chunky", value)
    c = RawConn(server.port)
    for i in range(0, len(data), 7001):
        c.send(data[i:i + 7001])
    assert c.recv_n(5) == b"+OK\r\n"
    c.close()
    assert r.strlen("chunky") == 300000
