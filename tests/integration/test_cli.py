"""redis-cli (Debian's redis-tools) against the server: plain commands,
output modes, RESP3, INFO, --scan, -n, piped command files, --pipe mass
insertion, auth.  redis-cli's stdout is not a tty here, so its default
output is the raw form."""
import os
import shutil
import subprocess

import pytest

from helpers import Server, requires

CLI = shutil.which("redis-cli")
pytestmark = pytest.mark.skipif(CLI is None, reason="redis-cli (redis-tools) not installed")


def cli(port, *args, stdin=None, timeout=20):
    p = subprocess.run([CLI, "-p", str(port)] + [str(a) for a in args],
                       input=stdin, capture_output=True, timeout=timeout)
    return p


def out(port, *args, stdin=None):
    p = cli(port, *args, stdin=stdin)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return p.stdout.decode()


@pytest.fixture(scope="module")
def auth_server():
    s = Server("--requirepass", "pw")
    yield s
    s.stop()


def test_cli_ping(server, r):
    assert out(server.port, "ping") == "PONG\n"


def test_cli_set_and_get(server, r):
    assert out(server.port, "set", "foo", "bar") == "OK\n"
    assert out(server.port, "get", "foo") == "bar\n"
    assert r.get("foo") == "bar"


def test_cli_get_missing_key(server, r):
    assert out(server.port, "get", "nokey") == "\n"
    assert out(server.port, "--no-raw", "get", "nokey") == "(nil)\n"


def test_cli_no_raw_formatting(server, r):
    r.set("foo", "bar")
    r.mset({"e1": "a", "e2": "b", "e3": "c"})
    assert out(server.port, "--no-raw", "get", "foo") == '"bar"\n'
    assert out(server.port, "--no-raw", "incr", "n") == "(integer) 1\n"
    assert out(server.port, "--no-raw", "mget", "e1", "e2", "e3") == '1) "a"\n2) "b"\n3) "c"\n'
    assert out(server.port, "--no-raw", "keys", "nokey*") == "(empty array)\n"


def test_cli_raw_output(server, r):
    r.mset({"e1": "a", "e2": "b", "e3": "c"})
    r.set("bin", "x y")
    assert out(server.port, "--raw", "mget", "e1", "e2", "e3") == "a\nb\nc\n"
    assert out(server.port, "--raw", "get", "bin") == "x y\n"
    assert out(server.port, "--raw", "incr", "n") == "1\n"


def test_cli_csv_output(server, r):
    r.mset({"e1": "a", "e2": "b", "e3": "c"})
    assert out(server.port, "--csv", "mget", "e1", "e2", "e3") == '"a","b","c"\n'


def test_cli_error_reply(server, r):
    p = cli(server.port, "-e", "foo", "bar")
    assert p.returncode == 1
    assert b"ERR unknown command 'foo', with args beginning with: 'bar' " in p.stdout + p.stderr


def test_cli_resp3_hello(server, r):
    text = out(server.port, "-3", "--no-raw", "hello", "3")
    lines = text.splitlines()
    assert lines[0] == '1# "server" => "redis"'
    assert lines[2] == '3# "proto" => (integer) 3'
    assert lines[4] == '5# "mode" => "standalone"'
    assert lines[5] == '6# "role" => "master"'
    assert lines[6] == '7# "modules" => (empty array)'
    assert lines[1].startswith('2# "version" => "')
    assert lines[3].startswith('4# "id" => (integer) ')


@requires("ZADD", "ZSCORE", "HGETALL")
def test_cli_resp3_types(server, r):
    r.zadd("z", {"a": 1.5})
    assert out(server.port, "-3", "--no-raw", "zscore", "z", "a") == "(double) 1.5\n"
    assert out(server.port, "-3", "--no-raw", "hgetall", "nokey") == "(empty hash)\n"
    assert out(server.port, "-3", "--no-raw", "get", "nokey") == "(nil)\n"
    assert out(server.port, "-3", "zscore", "z", "a") == "1.5\n"


def test_cli_info_server(server, r):
    text = out(server.port, "info", "server")
    lines = text.splitlines()
    assert lines[0] == "# Server"
    fields = dict(l.split(":", 1) for l in lines[1:] if ":" in l)
    assert "redis_version" in fields
    assert fields["tcp_port"] == str(server.port)


def test_cli_scan_with_pattern(server, r):
    for i in range(1, 4):
        r.set("user:%d" % i, "x")
    r.set("other", "y")
    assert sorted(out(server.port, "--scan", "--pattern", "user:*").split()) == \
        ["user:1", "user:2", "user:3"]
    assert sorted(out(server.port, "--scan").split()) == ["other", "user:1", "user:2", "user:3"]


def test_cli_scan_many_keys(server, r):
    r.mset({"k%d" % i: i for i in range(500)})
    keys = out(server.port, "--scan", "--pattern", "k*").split()
    assert len(set(keys)) == 500


def test_cli_select_db_with_n(server, r):
    assert out(server.port, "-n", "2", "set", "k", "in-db-2") == "OK\n"
    assert out(server.port, "-n", "2", "get", "k") == "in-db-2\n"
    assert out(server.port, "get", "k") == "\n"
    assert out(server.port, "-n", "2", "dbsize") == "1\n"


def test_cli_uri_with_db(server, r):
    url = "redis://127.0.0.1:%d/3" % server.port
    p = subprocess.run([CLI, "-u", url, "set", "uk", "1"], capture_output=True, timeout=20)
    assert p.returncode == 0 and p.stdout == b"OK\n"
    assert out(server.port, "-n", "3", "get", "uk") == "1\n"


def test_cli_commands_from_stdin_file(server, r, tmp_path):
    f = tmp_path / "cmds.txt"
    f.write_bytes(b'SET a 1\nINCR a\nGET a\nECHO "hello world"\nDBSIZE\n')
    with open(f, "rb") as fh:
        p = subprocess.run([CLI, "-p", str(server.port)], stdin=fh,
                           capture_output=True, timeout=20)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == "OK\n2\n2\nhello world\n1\n"


def test_cli_x_reads_last_arg_from_stdin(server, r):
    assert out(server.port, "-x", "set", "fromstdin", stdin=b"line1\nline2\n") == "OK\n"
    assert r.get("fromstdin") == "line1\nline2\n"


def test_cli_repeat(server, r):
    assert out(server.port, "-r", "3", "incr", "rep") == "1\n2\n3\n"


def test_cli_pipe_mass_insertion(server, r, tmp_path):
    n = 5000
    data = b"".join(
        b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v)
        for k, v in ((b"mass:%d" % i, b"value-%d" % i) for i in range(n)))
    f = tmp_path / "mass.resp"
    f.write_bytes(data)
    with open(f, "rb") as fh:
        p = subprocess.run([CLI, "-p", str(server.port), "--pipe"], stdin=fh,
                           capture_output=True, timeout=60)
    assert p.returncode == 0, (p.stdout, p.stderr)
    text = p.stdout.decode()
    assert "All data transferred" in text
    assert "errors: 0, replies: %d" % n in text
    assert r.dbsize() == n
    assert r.get("mass:4999") == "value-4999"


def test_cli_pipe_reports_errors(server, r):
    p = cli(server.port, "--pipe", stdin=b"SET q1 1\r\nNOSUCHCMD\r\nSET q2 2\r\n")
    assert p.returncode == 1
    assert b"errors: 1, replies: 3" in p.stdout
    assert r.mget("q1", "q2") == ["1", "2"]


@requires("RPUSH")
def test_cli_bigkeys(server, r):
    r.set("small", "x")
    r.set("largest", "x" * 22)
    r.rpush("mylist", "a", "b", "c")
    text = out(server.port, "--bigkeys")
    assert "Sampled 3 keys in the keyspace!" in text
    assert "Biggest string found '\"largest\"' has 22 bytes" in text
    assert "Biggest   list found '\"mylist\"' has 3 items" in text


def test_cli_auth_with_password(auth_server):
    p = cli(auth_server.port, "ping")
    assert b"NOAUTH Authentication required." in p.stdout + p.stderr
    assert cli(auth_server.port, "-a", "pw", "--no-auth-warning", "ping").stdout == b"PONG\n"
    p = cli(auth_server.port, "--user", "default", "--pass", "pw", "--no-auth-warning", "ping")
    assert p.stdout == b"PONG\n"


def test_cli_auth_wrong_password(auth_server):
    p = cli(auth_server.port, "-a", "bad", "--no-auth-warning", "ping")
    text = (p.stdout + p.stderr).decode()
    assert "WRONGPASS invalid username-password pair or user is disabled." in text


def test_cli_env_password(auth_server):
    env = dict(os.environ, REDISCLI_AUTH="pw")
    p = subprocess.run([CLI, "-p", str(auth_server.port), "ping"], env=env,
                       capture_output=True, timeout=20)
    assert p.stdout == b"PONG\n"
