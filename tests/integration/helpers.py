"""Helpers shared by the HotKV integration tests (fixtures live in conftest.py).

The test modules import Server, Resp, MODE and raw from here rather than
from "conftest" directly: if another test directory also has a conftest.py,
the name "conftest" in sys.modules may point at that one, so this module
loads tests/integration/conftest.py by path when needed.
"""
import errno
import functools
import importlib.util
import inspect
import os
import re
import socket
import sys
import time

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_conftest():
    mod = sys.modules.get("conftest")
    if mod is not None and getattr(mod, "__file__", None) and \
            os.path.dirname(os.path.abspath(mod.__file__)) == _HERE:
        return mod
    name = "hotkv_integration_conftest"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, "conftest.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_conftest = _load_conftest()
Server = _conftest.Server
Resp = _conftest.Resp
MODE = _conftest.MODE
raw = _conftest.raw
free_port = _conftest.free_port
port_free = _conftest.port_free

IS_REDIS = MODE == "redis"
# The sanitizer builds (scripts/test.sh runs build-address/ and
# build-thread/): tests that only measure statistics or limits, and take
# seconds, run on the release build only, to keep `make test` short.
IS_SANITIZER = any(d in os.environ.get("HOTKV_BIN", "") for d in ("build-address", "build-thread"))
release_only = pytest.mark.skipif(IS_SANITIZER, reason="statistical/timing test: release build only")
# Long tests of single-threaded logic (a data structure against Redis,
# replaying files): the release and ASan tiers run them, TSan (which looks
# for races) does not.
IS_TSAN = "build-thread" in os.environ.get("HOTKV_BIN", "")
not_tsan = pytest.mark.skipif(IS_TSAN, reason="single-threaded logic: release and ASan tiers")


class RawConn:
    """A plain socket to the server for byte-exact request/reply checks."""

    def __init__(self, port, timeout=5.0, nodelay=True):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if nodelay:
            self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout

    def send(self, data):
        self.s.sendall(data)

    def recv_n(self, n, timeout=None):
        """Read until n bytes arrived, the peer closed, or timeout passed."""
        deadline = time.time() + (self.timeout if timeout is None else timeout)
        out = b""
        while len(out) < n:
            left = deadline - time.time()
            if left <= 0:
                break
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(min(n - len(out), 1 << 20))
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out

    def request(self, data, expected_len, timeout=None):
        self.send(data)
        return self.recv_n(expected_len, timeout)

    def is_closed(self, timeout=3.0):
        """True when the peer closes (EOF or reset) within timeout and sends
        nothing more."""
        return read_until_close(self.s, timeout)[1]

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def read_until_close(sock, timeout=3.0):
    """Read until EOF/reset or until timeout; returns (data, closed)."""
    deadline = time.time() + timeout
    out = b""
    while True:
        left = deadline - time.time()
        if left <= 0:
            return out, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return out, False
        except (ConnectionResetError, BrokenPipeError):
            return out, True
        if not chunk:
            return out, True
        out += chunk


def send_expect_close(port, payload, timeout=3.0):
    """Send payload on a fresh connection; return (reply bytes, closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return read_until_close(s, timeout)
    finally:
        s.close()


def parse_info(text):
    """INFO text -> {section_name_lower: {field: value}} plus a flat dict
    under key None.  Values stay strings."""
    if isinstance(text, bytes):
        text = text.decode()
    sections = {}
    flat = {}
    current = None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            current = line[2:].strip().lower()
            sections[current] = {}
            continue
        if ":" in line:
            k, v = line.split(":", 1)
            flat[k] = v
            if current is not None:
                sections[current][k] = v
    sections[None] = flat
    return sections


def info_sections(text):
    """Section headers ("Server", "Clients", ...) in order of appearance."""
    if isinstance(text, bytes):
        text = text.decode()
    return [line[2:].strip() for line in text.split("\r\n") if line.startswith("# ")]


def info_field(client, section, field):
    """One field of INFO <section> through a redis-py client."""
    raw_info = client.execute_command("INFO", section)
    if isinstance(raw_info, dict):
        v = raw_info.get(field)
        return None if v is None else str(v)
    return parse_info(raw_info)[None].get(field)


def server_version(client):
    """redis_version as a tuple of ints, e.g. (7, 0, 15)."""
    v = info_field(client, "server", "redis_version")
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def time_at_once(conns, fn, timeout=5.0):
    """fn(conn, i) on every connection at once, one thread each: the seconds
    each call took (a call still running after timeout is left out)."""
    import threading
    took = []

    def run(c, i):
        t0 = time.time()
        fn(c, i)
        took.append(time.time() - t0)

    ts = [threading.Thread(target=run, args=(c, i)) for i, c in enumerate(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    return took


def wait_until(pred, timeout=5.0, interval=0.02):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


def encode_command(*args):
    """One command in RESP multibulk form."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def client_list_entries(text):
    """CLIENT LIST text -> list of {field: value} dicts."""
    if isinstance(text, bytes):
        text = text.decode()
    out = []
    for line in text.strip("\n").split("\n"):
        if not line:
            continue
        d = {}
        for part in line.split(" "):
            if "=" in part:
                k, v = part.split("=", 1)
                d[k] = v
        out.append(d)
    return out


def is_conn_error(exc):
    return isinstance(exc, (ConnectionError, BrokenPipeError, ConnectionResetError)) or \
        getattr(exc, "errno", None) in (errno.ECONNRESET, errno.EPIPE)


# ------------------------------------------------------------------------
# Feature gates: skip a test when the server under test does not implement
# a command or a CONFIG parameter yet (it belongs to a later issue).  Once
# the feature lands, the gated tests run automatically.  Against redis-server
# every gate is open, so the tests still encode Redis's behaviour.

_known_commands = {}   # (port, NAME) -> bool
_known_configs = {}    # (port, name) -> bool


def _port_of(target):
    """A port from a Server/External, a Resp, a RawConn, a redis-py client,
    a socket, or a plain int."""
    if isinstance(target, int):
        return target
    port = getattr(target, "port", None)
    if isinstance(port, int):
        return port
    sock = getattr(target, "s", None) or (target if isinstance(target, socket.socket) else None)
    if sock is not None:
        return sock.getpeername()[1]
    pool = getattr(target, "connection_pool", None)
    if pool is not None:
        return int(pool.connection_kwargs["port"])
    raise TypeError("cannot tell which server %r talks to" % (target,))


def _ask(port, *args):
    c = Resp(port)
    try:
        return c.call(*args)
    finally:
        c.close()


def has_command(target, name):
    """Whether the server knows command `name` (or "container|sub"):
    COMMAND INFO answers nil for unknown commands.  An error reply (NOAUTH,
    COMMAND INFO itself missing) counts as known, so that the test runs and
    shows the real problem instead of being skipped; for replies already in
    hand use skip_if_unknown_command."""
    port = _port_of(target)
    key = (port, name.upper())
    if key not in _known_commands:
        reply = _ask(port, "COMMAND", "INFO", name)
        if isinstance(reply, list):
            known = bool(reply) and reply[0] is not None
        else:
            known = True
        _known_commands[key] = known
    return _known_commands[key]


def has_config(target, name):
    """Whether CONFIG GET name returns anything.  An error reply (NOAUTH,
    CONFIG itself missing) counts as known, so that the test runs and shows
    the real problem instead of being skipped."""
    port = _port_of(target)
    key = (port, name)
    if key not in _known_configs:
        reply = _ask(port, "CONFIG", "GET", name)
        _known_configs[key] = isinstance(reply, tuple) or bool(reply)
    return _known_configs[key]


def needs_commands(target, *names):
    """Skip the running test unless the server knows every command in names."""
    missing = [n for n in names if not has_command(target, n)]
    if missing:
        pytest.skip("server does not implement %s yet" % ", ".join(m.upper() for m in missing))


def needs_config(target, *names):
    """Skip the running test unless CONFIG GET knows every parameter in names."""
    missing = [n for n in names if not has_config(target, n)]
    if missing:
        pytest.skip("server has no config parameter %s yet" % ", ".join(missing))


def skip_if_unknown_command(reply):
    """For a reply already in hand: skip when it is an "unknown command"
    error (raw Resp tuple or a redis-py ResponseError)."""
    text = reply[1] if isinstance(reply, tuple) and reply and reply[0] == "error" else \
        str(reply) if isinstance(reply, Exception) else None
    if text is not None and "unknown command" in text:
        pytest.skip("server does not implement this command yet: %s" % text.strip())
    return reply


def _gate(check, names):
    """Decorator factory: run check(server, *names) before the test, where
    server is the module's `server` fixture (requested on the test's
    behalf when the test does not take it itself)."""
    def deco(fn):
        sig = inspect.signature(fn)
        takes_server = "server" in sig.parameters

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            srv = kwargs["server"] if takes_server else kwargs.pop("server")
            check(srv, *names)
            return fn(*args, **kwargs)

        if not takes_server:
            params = list(sig.parameters.values())
            params.append(inspect.Parameter("server", inspect.Parameter.KEYWORD_ONLY))
            wrapper.__signature__ = sig.replace(parameters=params)
        return wrapper
    return deco


def requires(*commands):
    """Decorator: skip the test when the server under test does not know one
    of `commands` (e.g. @requires("LPUSH", "RPOP")).  Uses the module's
    `server` fixture to ask, so it also works for tests that spawn their own
    server from the same binary."""
    return _gate(needs_commands, commands)


def requires_config(*names):
    """Decorator: skip the test when CONFIG GET <name> returns nothing for
    one of `names` (e.g. @requires_config("maxmemory"))."""
    return _gate(needs_config, names)


def arity_error(cmd):
    """Redis's wrong-number-of-arguments reply, as the resp fixture parses it."""
    return ("error", "ERR wrong number of arguments for '%s' command" % cmd)


def make_nonstring(resp, key):
    """Create a non-string key (a list) for WRONGTYPE tests; skip the test
    while the server has no lists (issue 4)."""
    reply = resp.call("LPUSH", key, "elem")
    if isinstance(reply, tuple) and "unknown command" in reply[1]:
        pytest.skip("server has no LPUSH (lists not implemented)")
    assert reply == 1


# CRC-64 (Jones polynomial, reflected), the checksum of DUMP payloads and RDB
# files, for tests that build or patch payloads by hand.
_CRC64_POLY = 0x95AC9329AC4BC9B5
_CRC64_TABLE = []
for _i in range(256):
    _v = _i
    for _ in range(8):
        _v = (_v >> 1) ^ _CRC64_POLY if _v & 1 else _v >> 1
    _CRC64_TABLE.append(_v)


def crc64(data, crc=0):
    for b in data:
        crc = _CRC64_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def write_aof_dir(d, content):
    """A Redis 7 multi-part AOF in d/appendonlydir: one incr file holding
    content (bytes) and its manifest."""
    ad = os.path.join(d, "appendonlydir")
    os.makedirs(ad, exist_ok=True)
    with open(os.path.join(ad, "appendonly.aof.1.incr.aof"), "wb") as f:
        f.write(content)
    with open(os.path.join(ad, "appendonly.aof.manifest"), "w") as f:
        f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")
