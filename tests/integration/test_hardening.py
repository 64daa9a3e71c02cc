"""Redis 7's hardening configs and the listening port (issue 15).

enable-protected-configs / enable-debug-command / enable-module-command
(no|yes|local, default no, immutable), the protected configs (dir,
dbfilename), file names that are paths, DEBUG with hostile arguments,
rename-command, protected mode, and a second server on a busy port.

Every server here is started by this file WITHOUT conftest's
HARDENING_OFF flags, so the defaults are what is tested.  "local" means a
peer address of exactly 127.0.0.1 or ::1, as in Redis; a client bound to
127.0.0.2 is therefore a non-local client without leaving the loopback
interface.  HOTKV_SERVER=redis runs the same tests against redis-server
7.0 where they apply.
"""
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, MODE, Resp, free_port

IS_REDIS = MODE == "redis"

DEBUG_DENIED = ('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", '
                "you can run it from a local connection, otherwise you need to set this option in the "
                "configuration file, and then restart the server.")
MODULE_DENIED = ('ERR MODULE command not allowed. If the enable-module-command option is set to "local", '
                 "you can run it from a local connection, otherwise you need to set this option in the "
                 "configuration file, and then restart the server.")


def protected(name):
    return "ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected config" % name


def immutable(name):
    return "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config" % name


def base_cmd(port, d):
    if IS_REDIS:
        return ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", d]
    return [BIN, "--port", str(port), "--bind", "127.0.0.1", "--threads", "2", "--dir", d, "--save", ""]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Plain:
    """A server with the hardening defaults (no conftest flags)."""

    def __init__(self, *args, port=None):
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix="hotkv-hard-")
        self.logpath = os.path.join(self.dir, "server.log")
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(base_cmd(self.port, self.dir) + [str(a) for a in args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            if port_open(self.port):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("server did not start, log in %s" % self.logpath)

    def resp(self, src=None):
        c = Resp.__new__(Resp)
        s = socket.socket()
        if src:
            s.bind((src, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", self.port))
        c.s = s
        c.buf = b""
        return c

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def plain():
    servers = []

    def start(*args, **kw):
        s = Plain(*args, **kw)
        servers.append(s)
        return s
    yield start
    for s in servers:
        assert s.stop() == 0, "server exited badly, see %s" % s.logpath


def run_fail(*args, timeout=10):
    """Start a server that must refuse to start: (exit status, output)."""
    d = tempfile.mkdtemp(prefix="hotkv-hard-")
    p = subprocess.run(base_cmd(free_port(), d) + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


# ------------------------------------------------------ defaults, immutable

def test_defaults_and_immutable(plain):
    c = plain().resp()
    for name in ("enable-protected-configs", "enable-debug-command", "enable-module-command"):
        assert c.call("CONFIG", "GET", name) == [name.encode(), b"no"]
        assert c.call("CONFIG", "SET", name, "yes") == ("error", immutable(name))
        assert c.call("CONFIG", "GET", name) == [name.encode(), b"no"]


def test_bad_mode_value_refused_at_startup():
    rc, out = run_fail("--enable-debug-command", "maybe")
    assert rc != 0
    assert "argument(s) must be one of the following: no, yes, local" in out


# ----------------------------------------------------------- finding 5

def test_protected_configs_refused_by_default(plain):
    s = plain()
    c = s.resp()
    before = c.call("CONFIG", "GET", "dir")
    target = tempfile.mkdtemp(prefix="hotkv-evil-")
    assert c.call("CONFIG", "SET", "dir", target) == ("error", protected("dir"))
    assert c.call("CONFIG", "SET", "dbfilename", "authorized_keys") == ("error", protected("dbfilename"))
    # All or nothing: an allowed parameter next to a protected one is not set.
    assert c.call("CONFIG", "SET", "maxmemory-samples", "7", "dir", target) == ("error", protected("dir"))
    assert c.call("CONFIG", "GET", "maxmemory-samples") == [b"maxmemory-samples", b"5"]
    assert c.call("CONFIG", "GET", "dir") == before
    assert c.call("CONFIG", "GET", "dbfilename") == [b"dbfilename", b"dump.rdb"]
    assert c.call("SET", "k", "ssh-rsa AAAA attacker") == "OK"
    assert c.call("SAVE") == "OK"
    assert os.listdir(target) == []
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    # Other configs stay settable.
    assert c.call("CONFIG", "SET", "maxmemory-samples", "6") == "OK"


def test_protected_configs_yes_and_paths(plain):
    s = plain("--enable-protected-configs", "yes")
    c = s.resp()
    for bad in ("../x.rdb", "a/b.rdb", "/tmp/x.rdb", "a\\b.rdb"):
        assert c.call("CONFIG", "SET", "dbfilename", bad) == (
            "error", "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - "
                     "dbfilename can't be a path, just a filename")
    assert c.call("CONFIG", "GET", "dbfilename") == [b"dbfilename", b"dump.rdb"]
    assert c.call("CONFIG", "SET", "dbfilename", "other.rdb") == "OK"
    d2 = tempfile.mkdtemp(prefix="hotkv-hard-")
    assert c.call("CONFIG", "SET", "dir", d2) == "OK"
    assert c.call("SET", "k", "v") == "OK"
    assert c.call("SAVE") == "OK"
    assert os.path.exists(os.path.join(d2, "other.rdb"))
    assert not os.path.exists(os.path.join(os.path.dirname(s.dir), "x.rdb"))


@pytest.mark.parametrize("name,what", [("dbfilename", "filename"), ("appendfilename", "filename"),
                                       ("appenddirname", "dirname")])
def test_file_names_that_are_paths_refused_at_startup(name, what):
    rc, out = run_fail("--" + name, "../escape")
    assert rc != 0
    assert "%s can't be a path, just a %s" % (name, what) in out


def test_protected_configs_local(plain):
    s = plain("--enable-protected-configs", "local", "--protected-mode", "no")
    d2 = tempfile.mkdtemp(prefix="hotkv-hard-")
    far = s.resp(src="127.0.0.2")
    assert far.call("CONFIG", "SET", "dir", d2) == ("error", protected("dir"))
    near = s.resp()
    assert near.call("CONFIG", "SET", "dir", d2) == "OK"


# ----------------------------------------------------------- finding 6

def test_debug_refused_by_default(plain):
    c = plain().resp()
    assert c.call("DEBUG", "SLEEP", "0") == ("error", DEBUG_DENIED)
    assert c.call("DEBUG", "HELP") == ("error", DEBUG_DENIED)
    assert c.call("DEBUG", "POPULATE", "1", "k", "100000000000000") == ("error", DEBUG_DENIED)
    # The arity check comes first, as in Redis.
    assert c.call("DEBUG") == ("error", "ERR wrong number of arguments for 'debug' command")
    # Queued in MULTI: refused at once, EXEC aborts.
    assert c.call("MULTI") == "OK"
    assert c.call("DEBUG", "SLEEP", "0") == ("error", DEBUG_DENIED)
    err = c.call("EXEC")
    assert err[0] == "error" and err[1].startswith("EXECABORT")
    assert c.call("PING") == "PONG"


def test_debug_refused_before_auth(plain):
    c = plain("--requirepass", "pw").resp()
    assert c.call("DEBUG", "SLEEP", "0") == ("error", DEBUG_DENIED)


def test_debug_local(plain):
    s = plain("--enable-debug-command", "local", "--protected-mode", "no")
    assert s.resp().call("DEBUG", "SLEEP", "0") == "OK"
    assert s.resp(src="127.0.0.2").call("DEBUG", "SLEEP", "0") == ("error", DEBUG_DENIED)


@pytest.mark.skipif(IS_REDIS, reason="redis-server 7.0 aborts on these")
def test_debug_populate_hostile_sizes(plain):
    s = plain("--enable-debug-command", "yes")
    c = s.resp()
    r = c.call("DEBUG", "POPULATE", "1", "k", "100000000000000")
    assert r[0] == "error"
    r = c.call("DEBUG", "POPULATE", "100000000000000")
    assert r[0] == "error" and "memory" in r[1]
    r = c.call("DEBUG", "POPULATE", "9223372036854775807", "k", "1000")
    assert r[0] == "error"
    assert c.call("DBSIZE") == 0
    assert c.call("DEBUG", "POPULATE", "10", "k", "5") == "OK"
    assert c.call("DBSIZE") == 10
    assert c.call("PING") == "PONG"


@pytest.mark.skipif(IS_REDIS, reason="HotKV's bound on DEBUG POPULATE")
def test_debug_populate_bounded_by_maxmemory(plain):
    s = plain("--enable-debug-command", "yes", "--maxmemory", "20mb")
    c = s.resp()
    r = c.call("DEBUG", "POPULATE", "10000000", "k", "100")
    assert r[0] == "error"
    assert c.call("DBSIZE") == 0
    assert c.call("PING") == "PONG"


@pytest.mark.skipif(IS_REDIS, reason="redis-server blocks for the whole sleep")
def test_debug_sleep_huge_does_not_hold_shutdown(plain):
    s = plain("--enable-debug-command", "yes")
    c = s.resp()
    for junk in ("-1", "nan", "inf", "abc"):
        assert c.call("DEBUG", "SLEEP", junk) == "OK"
    c.send("DEBUG", "SLEEP", "1e300")
    time.sleep(0.3)
    t0 = time.time()
    s.proc.send_signal(signal.SIGTERM)
    s.proc.wait(10)
    assert time.time() - t0 < 5
    assert s.proc.returncode == 0


def test_debug_other_subcommands_hostile(plain):
    s = plain("--enable-debug-command", "yes")
    c = s.resp()
    assert c.call("DEBUG", "OBJECT", "nokey")[0] == "error"
    assert c.call("DEBUG", "POPULATE", "-5")[0] == "error"
    assert c.call("DEBUG", "POPULATE", "5", "k", "-1")[0] == "error"
    assert c.call("DEBUG", "NOSUCHTHING", "x")[0] == "error"
    assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "zzz") == "OK"
    assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"
    assert c.call("PING") == "PONG"


# -------------------------------------------------------------- MODULE

def test_module_command(plain):
    c = plain().resp()
    assert c.call("MODULE", "LIST") == []
    assert c.call("MODULE", "LOAD", "/tmp/x.so") == ("error", MODULE_DENIED)
    assert c.call("MODULE", "UNLOAD", "x") == ("error", MODULE_DENIED)
    assert c.call("MODULE", "FOO") == ("error", "ERR unknown subcommand 'FOO'. Try MODULE HELP.")


@pytest.mark.skipif(IS_REDIS, reason="HotKV has no modules")
def test_module_load_fails_when_allowed(plain):
    c = plain("--enable-module-command", "yes").resp()
    assert c.call("MODULE", "LOAD", "/tmp/x.so") == (
        "error", "ERR Error loading the extension. Please check the server logs.")
    assert c.call("MODULE", "UNLOAD", "x") == (
        "error", "ERR Error unloading module: no such module with that name")
    assert c.call("MODULE", "LIST") == []


# ------------------------------------------------------ rename-command

def test_rename_command(plain):
    conf = os.path.join(tempfile.mkdtemp(prefix="hotkv-hard-"), "r.conf")
    with open(conf, "w") as f:
        f.write('rename-command CONFIG ""\nrename-command FLUSHALL myflush\nrename-command get GET2\n')
    port = free_port()
    d = tempfile.mkdtemp(prefix="hotkv-hard-")
    if IS_REDIS:
        cmd = ["redis-server", conf, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d]
    else:
        cmd = [BIN, conf, "--port", str(port), "--bind", "127.0.0.1", "--threads", "2", "--save", "", "--dir", d]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 10
        while not port_open(port) and time.time() < deadline:
            time.sleep(0.02)
        c = Resp(port)
        r = c.call("CONFIG", "GET", "port")
        assert r[0] == "error" and r[1].startswith("ERR unknown command 'CONFIG'")
        assert c.call("FLUSHALL")[0] == "error"
        assert c.call("SET", "a", "1") == "OK"
        assert c.call("GET", "a")[0] == "error"
        assert c.call("get2", "a") == b"1"
        assert c.call("GeT2", "a") == b"1"
        assert c.call("MYFLUSH") == "OK"
        assert c.call("DBSIZE") == 0
        # Scripts see the same table.
        r = c.call("EVAL", "return redis.call('get','a')", "0")
        assert r[0] == "error"
        c.close()
    finally:
        p.terminate()
        assert p.wait(10) == 0


@pytest.mark.parametrize("line,msg", [
    ("rename-command CONFIG GET", "Target command name already exists"),
    ("rename-command NOPE x", "No such command in rename-command"),
    ("rename-command config", "Bad directive or wrong number of arguments"),
])
def test_rename_command_errors(line, msg):
    conf = os.path.join(tempfile.mkdtemp(prefix="hotkv-hard-"), "r.conf")
    with open(conf, "w") as f:
        f.write(line + "\n")
    binary = "redis-server" if IS_REDIS else BIN
    p = subprocess.run([binary, conf, "--port", str(free_port())], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=10)
    assert p.returncode != 0
    assert msg in p.stdout.decode()


# ------------------------------------------------------ protected mode

def read_to_close(conn):
    """Everything the server sends before it closes the connection."""
    data = b""
    try:
        while True:
            chunk = conn.s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def test_protected_mode_refuses_non_local_peer(plain):
    s = plain("--protected-mode", "yes")
    far = s.resp(src="127.0.0.2")
    # Nothing sent: the refusal is written at accept time, then the
    # connection closes (unread input would turn the close into a reset).
    data = read_to_close(far)
    assert data.startswith(b"-DENIED ")
    assert b"protected mode" in data
    assert s.resp().call("PING") == "PONG"


def test_protected_mode_off_or_password_allows_non_local(plain):
    s = plain("--protected-mode", "no")
    assert s.resp(src="127.0.0.2").call("PING") == "PONG"
    s2 = plain("--protected-mode", "yes", "--requirepass", "pw")
    c = s2.resp(src="127.0.0.2")
    assert c.call("AUTH", "pw") == "OK"
    assert c.call("PING") == "PONG"


def test_protected_mode_follows_the_default_users_password(plain):
    """Protected mode asks whether the default user has nopass (Redis 7),
    so a password given with ACL SETUSER opens it, and nopass closes it."""
    s = plain("--protected-mode", "yes")
    local = s.resp()
    assert local.call("ACL", "SETUSER", "default", ">pw") == "OK"
    c = s.resp(src="127.0.0.2")
    assert c.call("AUTH", "pw") == "OK" and c.call("PING") == "PONG"
    assert local.call("ACL", "SETUSER", "default", "nopass") == "OK"
    assert read_to_close(s.resp(src="127.0.0.2")).startswith(b"-DENIED ")


# ---------------------------------------------------------- finding 10

def _second_on(port):
    d = tempfile.mkdtemp(prefix="hotkv-hard-")
    cmd = base_cmd(port, d)
    if IS_REDIS:
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(timeout=8)
    except subprocess.TimeoutExpired:
        p.terminate()
        out, _ = p.communicate()
        pytest.fail("second server started on a busy port: %s" % out.decode(errors="replace")[-500:])
    assert time.time() - t0 < 8
    return p.returncode, out.decode(errors="replace")


def test_second_server_on_busy_port_fails(plain):
    s = plain()
    c = s.resp()
    assert c.call("SET", "owner", "first") == "OK"
    rc, out = _second_on(s.port)
    assert rc != 0
    assert "Address already in use" in out
    # Every new connection still reaches the first server.
    for _ in range(20):
        assert s.resp().call("GET", "owner") == b"first"


def test_redis_server_on_port_blocks_start(tmp_path):
    port = free_port()
    r = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 10
        while not port_open(port) and time.time() < deadline:
            time.sleep(0.02)
        rc, out = _second_on(port)
        assert rc != 0
        assert "Address already in use" in out
    finally:
        r.terminate()
        r.wait(10)


@pytest.mark.skipif(IS_REDIS, reason="HotKV's message")
def test_config_set_port_to_busy_port_fails(plain):
    a = plain()
    b = plain()
    c = a.resp()
    r = c.call("CONFIG", "SET", "port", str(b.port))
    assert r[0] == "error" and "Unable to listen on this port" in r[1]
    assert c.call("CONFIG", "GET", "port") == [b"port", str(a.port).encode()]
    assert a.resp().call("PING") == "PONG"


# ------------------------------------------- multi-word values, long input

def test_long_multi_word_config_values_refused_not_overflowed(plain):
    # Found by the config fuzzer: a client-output-buffer-limit value of
    # about 1 KB overflowed the buffer its words were joined into; a long
    # bind list was silently cut (possibly mid-address).
    c = plain().resp()
    long_value = " ".join(["normal 0 0 0"] * 90)  # ~1.1 KB, 360 words
    r = c.call("CONFIG", "SET", "client-output-buffer-limit", long_value)
    assert r[0] == "error" and "buffer limit" in r[1]
    r = c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 " + "9" * 1100)
    assert r[0] == "error"
    assert c.call("CONFIG", "GET", "client-output-buffer-limit")[1].startswith(b"normal 0 0 0")
    rc, out = run_fail("--bind", " ".join(["127.0.0.1"] * 120))
    assert rc != 0 and "Too many bind addresses" in out
    assert c.call("PING") == "PONG"
