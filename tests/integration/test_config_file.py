"""Starting from an existing redis.conf: every Redis 7.2 directive accepted.

HotKV must start with Debian's stock /etc/redis/redis.conf (only port,
dir, pidfile, logfile, unixsocket and daemonize changed) and with the
directives Redis's own test suite starts its servers with; every directive
shows in CONFIG GET, invalid values get Redis's exact errors, and the
unixsocket listener serves clients (CLIENT LIST shows them as Redis does).
Run against redis-server too (HOTKV_SERVER=redis); the few checks on what
Redis 7.0 lacks or does differently skip themselves there.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from helpers import IS_REDIS, free_port, client_list_entries

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server")))
SERVER = "redis-server" if IS_REDIS else BIN
STOCK = "/etc/redis/redis.conf"


@pytest.fixture
def d():
    path = tempfile.mkdtemp(prefix="hotkv-conf-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Proc:
    """A server started from a config file (plus --name value args), ready
    once it answers PING on its TCP port or its unix socket."""

    def __init__(self, d, conf_text, *args, port=None, sock=None, wait=True):
        self.d, self.port, self.sock = d, port, sock
        self.conf = os.path.join(d, "server.conf")
        with open(self.conf, "w") as f:
            f.write(conf_text)
        self.out = open(os.path.join(d, "stdout.log"), "w")
        self.proc = subprocess.Popen([SERVER, self.conf] + [str(a) for a in args],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        if wait:
            self._wait()

    def client(self, **kw):
        if self.sock:
            return redis.Redis(unix_socket_path=self.sock, decode_responses=True, **kw)
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, **kw)

    def _wait(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if self.client(socket_timeout=1).ping():
                    return
            except (redis.ConnectionError, OSError):
                time.sleep(0.05)
        raise AssertionError("server did not start: %s" % self.output())

    def output(self):
        if not self.out.closed:
            self.out.flush()
        text = open(os.path.join(self.d, "stdout.log")).read()
        log = os.path.join(self.d, "server.log")
        if os.path.exists(log):
            text += open(log).read()
        return text

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        return self.proc.returncode


def start_fails(d, conf_text, *args):
    """Start with a bad config: the exit status and what it printed."""
    p = Proc(d, conf_text, *args, wait=False)
    try:
        rc = p.proc.wait(10)
    except subprocess.TimeoutExpired:
        p.stop(signal.SIGKILL)
        raise AssertionError("server started with a bad config")
    p.out.close()
    return rc, p.output()


def directives(text):
    """The directive names of a config file's active lines."""
    names = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line.split()[0].lower())
    return names


def stock_conf(d, port, sock):
    """Debian's stock redis.conf with only port, dir, pidfile, logfile,
    unixsocket and daemonize changed."""
    text = open(STOCK).read()
    repl = {
        "port": "port %d" % port,
        "dir": "dir %s" % d,
        "pidfile": "pidfile %s" % os.path.join(d, "server.pid"),
        "logfile": "logfile %s" % os.path.join(d, "server.log"),
        "daemonize": "daemonize no",
    }
    out = []
    for line in text.splitlines():
        word = line.split()[0] if line.strip() and not line.lstrip().startswith("#") else None
        out.append(repl.get(word, line))
    out.append("unixsocket %s" % sock)
    out.append("unixsocketperm 700")
    return "\n".join(out) + "\n"


@pytest.mark.skipif(not os.path.exists(STOCK), reason="no Debian redis.conf here")
def test_debian_stock_redis_conf(d):
    port = free_port()
    sock = os.path.join(d, "redis.sock")
    text = stock_conf(d, port, sock)
    p = Proc(d, text, port=port)
    try:
        c = p.client()
        assert c.ping()
        # Every directive of the file is shown by CONFIG GET.
        for name in set(directives(text)):
            got = c.config_get(name)
            assert name in got, name
        got = c.config_get("*")
        assert got["oom-score-adj-values"] == "0 200 800"
        assert got["proc-title-template"] == "{title} {listen-addr} {server-mode}"
        assert got["replica-read-only"] == "yes" and got["repl-diskless-load"] == "disabled"
        assert got["disable-thp"] == "yes" and got["jemalloc-bg-thread"] == "yes"
        assert got["client-output-buffer-limit"] == \
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        assert got["unixsocketperm"] == "700" and got["unixsocket"] == sock
        # The unix socket of the same server, with the mode asked.
        assert oct(os.stat(sock).st_mode & 0o777) == "0o700"
        u = redis.Redis(unix_socket_path=sock, decode_responses=True)
        u.set("k", "v")
        assert c.get("k") == "v"
        u.close()
    finally:
        assert p.stop() == 0
    assert not os.path.exists(sock), "socket file left behind"


# The directives Redis's test suite starts its servers with (its
# tests/assets/default.conf), written out here.
SUITE_CONF = """
always-show-logo yes
notify-keyspace-events KEA
daemonize no
pidfile {d}/server.pid
port {port}
timeout 0
bind 127.0.0.1
loglevel verbose
logfile ''
databases 16
latency-monitor-threshold 1
repl-diskless-sync-delay 0
save ''
rdbcompression yes
dbfilename dump.rdb
dir {d}
slave-serve-stale-data yes
appendonly no
appendfsync everysec
no-appendfsync-on-rewrite no
activerehashing yes
enable-protected-configs yes
enable-debug-command yes
enable-module-command yes
propagation-error-behavior panic
shutdown-on-sigterm force
unixsocket {d}/suite.sock
"""


def test_redis_test_suite_directives(d):
    port = free_port()
    p = Proc(d, SUITE_CONF.format(d=d, port=port), port=port)
    try:
        c = p.client()
        got = c.config_get("*")
        assert got["always-show-logo"] == "yes"
        assert got["repl-diskless-sync-delay"] == "0"
        assert got["propagation-error-behavior"] == "panic"
        assert got["shutdown-on-sigterm"] == "force"
        assert got["save"] == ""
        assert c.config_get("slave-serve-stale-data") == {"slave-serve-stale-data": "yes"}
        assert c.config_get("replica-serve-stale-data") == {"replica-serve-stale-data": "yes"}
        # Redis's suite runs DEBUG and sets protected configs.
        assert c.execute_command("DEBUG", "SLEEP", "0") == "OK"
        u = redis.Redis(unix_socket_path=os.path.join(d, "suite.sock"), decode_responses=True)
        assert u.ping()
        u.close()
    finally:
        assert p.stop() == 0


@pytest.fixture
def srv(d):
    port = free_port()
    p = Proc(d, "port %d\nbind 127.0.0.1\ndir %s\nsave ''\nunixsocket %s/s.sock\n" % (port, d, d), port=port)
    yield p
    assert p.stop() == 0


def set_error(c, name, value):
    with pytest.raises(redis.ResponseError) as e:
        c.config_set(name, value)
    return str(e.value)


def test_invalid_values_get_redis_errors(srv):
    c = srv.client()
    pre = "CONFIG SET failed (possibly related to argument '%s') - "
    cases = [
        ("repl-diskless-load", "foo", "argument(s) must be one of the following: disabled, on-empty-db, swapdb"),
        ("replica-priority", "-1", "argument must be between 0 and 2147483647 inclusive"),
        ("repl-backlog-size", "abc", "argument must be a memory value"),
        ("activerehashing", "maybe", "argument must be 'yes' or 'no'"),
        ("oom-score-adj-values", "0 200 3000",
         "Invalid oom-score-adj-values, elements must be between -2000 and 2000."),
        ("shutdown-on-sigterm", "save nosave", "shutdown options SAVE and NOSAVE can't be used simultaneously"),
        ("shutdown-on-sigint", "later",
         "argument(s) must be one of the following: default, save, nosave, now, force"),
        ("proc-title-template", "{bogus}", "template format is invalid or contains unknown variables"),
        ("cluster-announce-hostname", "a_b", "Hostnames may only contain alphanumeric characters, hyphens or dots"),
        ("repl-timeout", "0", "argument must be between 1 and 2147483647 inclusive"),
        ("unixsocket", "/tmp/x.sock", "can't set immutable config"),
        ("unixsocketperm", "700", "can't set immutable config"),
        ("replicaof", "127.0.0.1 6379", "can't set immutable config"),
        ("slaveof", "127.0.0.1 6379", "can't set immutable config"),
        ("always-show-logo", "yes", "can't set immutable config"),
        ("supervised", "systemd", "can't set immutable config"),
        ("activedefrag", "yes", "Active defragmentation cannot be enabled: it requires a Redis server compiled "
                                "with a modified Jemalloc like the one shipped by default with the Redis source "
                                "distribution"),
    ]
    for name, value, msg in cases:
        assert set_error(c, name, value) == pre % name + msg, name
    # Unknown directive.
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("no-such-directive", "1")
    assert "no-such-directive" in str(e.value)


def test_values_set_and_shown_as_redis(srv):
    c = srv.client()
    assert c.config_set("oom-score-adj", "relative")
    assert c.config_get("oom-score-adj") == {"oom-score-adj": "yes"}
    assert c.config_set("shutdown-on-sigterm", "force save")
    assert c.config_get("shutdown-on-sigterm") == {"shutdown-on-sigterm": "save force"}
    assert c.config_set("oom-score-adj-values", "0 100 900")
    assert c.config_get("oom-score-adj-values") == {"oom-score-adj-values": "0 100 900"}
    assert c.config_set("slave-read-only", "no")
    assert c.config_get("replica-read-only") == {"replica-read-only": "no"}
    assert c.config_set("repl-backlog-size", "2mb")
    assert c.config_get("repl-backlog-size") == {"repl-backlog-size": "2097152"}
    assert c.config_set("replica-announce-ip", "10.0.0.1")
    assert c.config_get("slave-announce-ip") == {"slave-announce-ip": "10.0.0.1"}
    # Aliases are entries of their own for a pattern, as in Redis.
    got = c.config_get("slave-*")
    assert got["slave-read-only"] == "no" and got["slave-priority"] == "100"
    # Hidden parameters: by exact name only.
    assert "use-exit-on-panic" not in c.config_get("*")
    assert c.config_get("use-exit-on-panic") == {"use-exit-on-panic": "no"}
    assert c.config_get("replicaof") == {"replicaof": ""}
    # hz: any non-negative number, kept within 1..500.
    assert c.config_set("hz", "1000")
    assert c.config_get("hz") == {"hz": "500"}
    assert c.config_set("hz", "0")
    assert c.config_get("hz") == {"hz": "1"}
    assert c.config_set("hz", "10")


def test_unixsocket_clients(srv):
    sock = os.path.join(srv.d, "s.sock")
    u = redis.Redis(unix_socket_path=sock, decode_responses=True)
    u.client_setname("viaunix")
    u.rpush("l", "a", "b")
    assert u.lrange("l", 0, -1) == ["a", "b"]
    entries = client_list_entries(srv.client().execute_command("CLIENT", "LIST"))
    mine = [e for e in entries if e["name"] == "viaunix"]
    assert len(mine) == 1
    assert mine[0]["addr"] == sock + ":0" and mine[0]["laddr"] == sock + ":0"
    assert "U" in mine[0]["flags"]
    # CLIENT KILL by that address.
    assert srv.client().client_kill_filter(_id=None, addr=sock + ":0", skipme=True) >= 1
    # Many connections spread over the workers, all served.
    conns = [redis.Redis(unix_socket_path=sock) for _ in range(20)]
    for i, x in enumerate(conns):
        x.set("k%d" % i, i)
    assert sum(int(x.get("k%d" % i)) for i, x in enumerate(conns)) == sum(range(20))
    for x in conns:
        x.close()
    u.close()


def test_unix_clients_are_local(d):
    """enable-debug-command local admits unix clients (always local), and
    protected mode never refuses them."""
    sock = os.path.join(d, "s.sock")
    p = Proc(d, "port 0\ndir %s\nsave ''\nunixsocket %s\nenable-debug-command local\nprotected-mode yes\n" % (d, sock),
             sock=sock)
    try:
        u = p.client()
        assert u.execute_command("DEBUG", "SLEEP", "0") == "OK"
        assert u.config_get("port") == {"port": "0"}
    finally:
        assert p.stop() == 0
    assert not os.path.exists(sock)


def test_port_zero_without_unixsocket_refused(d):
    rc, out = start_fails(d, "port 0\ndir %s\n" % d)
    assert rc != 0 and "Configured to not listen anywhere" in out, out


def test_bind_at_most_16_addresses(d):
    """Redis allows 16 bind addresses (CONFIG_BINDADDR_MAX); HotKV keeps 16
    listeners of each kind per worker, so a 17th must be refused, not
    overflow them."""
    addrs = ["127.0.0.%d" % i for i in range(1, 18)]
    for tls in ("", "tls-port %d\n" % free_port()):
        rc, out = start_fails(d, "port %d\n%sbind %s\ndir %s\n" % (free_port(), tls, " ".join(addrs), d))
        assert rc != 0 and "Too many bind addresses specified." in out, out
    port = free_port()
    p = Proc(d, "port %d\nbind %s\ndir %s\nsave ''\n" % (port, " ".join(addrs[:16]), d), port=port)
    try:
        assert redis.Redis(host="127.0.0.16", port=port).ping()
        c = p.client()
        with pytest.raises(redis.ResponseError, match="Too many bind addresses specified."):
            c.config_set("bind", " ".join(addrs))
        assert c.config_get("bind") == {"bind": " ".join(addrs[:16])}
    finally:
        assert p.stop() == 0


def test_replicaof_in_file_starts(d):
    port = free_port()
    p = Proc(d, "port %d\nbind 127.0.0.1\ndir %s\nsave ''\nreplicaof 127.0.0.1 1\nmasterauth secret\n"
             "repl-backlog-size 4mb\nslave-priority 50\n" % (port, d), port=port)
    try:
        c = p.client()
        got = c.config_get("*")
        assert got["replicaof"] == "127.0.0.1 1"
        assert got["masterauth"] == "secret"
        assert got["repl-backlog-size"] == str(4 << 20)
        assert got["replica-priority"] == "50"
    finally:
        assert p.stop() == 0


def test_config_file_errors(d):
    base = "port %d\ndir %s\n" % (free_port(), d)
    for line, msg in [
        ("unixsocketperm 999", "argument couldn't be parsed as an octal number"),
        ("unixsocketperm 1777", "argument must be between 0 and 777 inclusive"),
        ("oom-score-adj-values 0 200", "wrong number of arguments"),
        ("replicaof 127.0.0.1 99999", "Invalid master port"),
        ("repl-diskless-load sometimes",
         "argument(s) must be one of the following: disabled, on-empty-db, swapdb"),
        ("syslog-facility local9", "argument(s) must be one of the following: user, local0, local1, local2, "
                                   "local3, local4, local5, local6, local7"),
        ("no-such-directive 1", "Bad directive or wrong number of arguments"),
    ]:
        rc, out = start_fails(d, base + line + "\n")
        assert rc != 0 and msg in out, (line, out)


def test_include_and_deprecated(d):
    """include (a file and a pattern) and the directives Redis 7.2 still
    skips."""
    port = free_port()
    os.mkdir(os.path.join(d, "conf.d"))
    with open(os.path.join(d, "conf.d", "a.conf"), "w") as f:
        f.write("replica-priority 7\n")
    with open(os.path.join(d, "extra.conf"), "w") as f:
        f.write("repl-timeout 33\n")
    text = ("port %d\nbind 127.0.0.1\ndir %s\nsave ''\ninclude %s/extra.conf\ninclude %s/conf.d/*.conf\n"
            "include %s/empty.d/*.conf\nlist-max-ziplist-entries 512\nlua-replicate-commands yes\n"
            % (port, d, d, d, d))
    p = Proc(d, text, port=port)
    try:
        got = p.client().config_get("*")
        assert got["replica-priority"] == "7" and got["repl-timeout"] == "33"
    finally:
        assert p.stop() == 0


@pytest.mark.parametrize("mode,saved", [("default", True), ("nosave", False)])
def test_shutdown_on_sigterm(d, mode, saved):
    port = free_port()
    p = Proc(d, "port %d\nbind 127.0.0.1\ndir %s\nsave 3600 1\nshutdown-on-sigterm %s\n" % (port, d, mode), port=port)
    p.client().set("k", "v")
    assert p.stop() == 0
    assert os.path.exists(os.path.join(d, "dump.rdb")) == saved


@pytest.mark.skipif(IS_REDIS, reason="HotKV refuses what it cannot do (Redis without TLS fails later)")
def test_hotkv_refuses_what_it_cannot_do(d):
    base = "port %d\ndir %s\n" % (free_port(), d)
    for line, msg in [
        ("tls-port 6380", "Failed to configure TLS"),  # no tls-cert-file: as Redis, the start-up stops
        ("aclfile /nonexistent/users.acl", "Error loading ACLs, opening file '/nonexistent/users.acl'"),
        ("user alice on >pw ~* +@all\naclfile /tmp/x.acl", "either an ACL file or declare users"),
        ("loadmodule /x/mod.so", "HotKV does not load Redis modules"),
        ("mymodule.param 1", "Module Configuration detected without loadmodule directive"),
        ("sentinel monitor m 127.0.0.1 6379 2", "sentinel directive while not in sentinel mode"),
    ]:
        rc, out = start_fails(d, base + line + "\n")
        assert rc != 0 and msg in out, (line, out)


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 lacks these 7.2 directives")
def test_redis72_only_directives(srv):
    c = srv.client()
    assert c.config_get("locale-collate") == {"locale-collate": ""}
    assert set_error(c, "locale-collate", "xx_NOWHERE.bogus").endswith("Invalid locale name")
    assert c.config_set("locale-collate", "C")
    assert c.config_get("cluster-announce-human-nodename") == {"cluster-announce-human-nodename": ""}
    assert c.config_get("client-default-resp") == {"client-default-resp": "2"}
    assert "client-default-resp" not in c.config_get("*")


def test_config_from_a_pipe(d):
    """hotkv-server <(...): a config file with no size (a pipe) is read to
    its end."""
    port = free_port()
    rfd, wfd = os.pipe()
    text = ("port %d\nbind 127.0.0.1\ndir %s\nsave ''\nreplica-priority 9\n" % (port, d)).encode()
    out = open(os.path.join(d, "stdout.log"), "w")
    proc = subprocess.Popen([SERVER, "/dev/fd/%d" % rfd], pass_fds=(rfd,), stdout=out, stderr=subprocess.STDOUT)
    os.close(rfd)
    os.write(wfd, text)
    os.close(wfd)
    try:
        c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
        deadline = time.time() + 10
        while True:
            try:
                assert c.config_get("replica-priority") == {"replica-priority": "9"}
                break
            except redis.ConnectionError:
                assert proc.poll() is None and time.time() < deadline, open(os.path.join(d, "stdout.log")).read()
                time.sleep(0.05)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
        out.close()
