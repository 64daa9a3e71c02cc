"""Start-up and shutdown: redis-server style arguments, config files,
--logfile, --daemonize/--pidfile, signals and bad configuration."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import BIN, MODE, free_port


@pytest.fixture(autouse=True)
def _in_temp_dir(tmp_path, monkeypatch):
    """Servers started here use the working directory for dump.rdb (save
    points are on by default, so they save at shutdown): keep it out of
    the checkout."""
    monkeypatch.chdir(tmp_path)

pytestmark = pytest.mark.skipif(MODE == "redis", reason="HotKV binary start-up")


def wait_port(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_gone(pid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_config_file_and_args_override():
    d = tempfile.mkdtemp()
    port = free_port()
    conf = os.path.join(d, "hotkv.conf")
    with open(conf, "w") as f:
        f.write("# comment\nport %d\nbind 127.0.0.1\ntimeout 77\n"
                "requirepass \"s3cret pw\"\nhz 20\n" % port)
    p = subprocess.Popen([BIN, conf, "--hz", "15", "--threads", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        assert wait_port(port)
        c = redis.Redis(port=port, password="s3cret pw", decode_responses=True)
        assert c.config_get("timeout") == {"timeout": "77"}
        assert c.config_get("hz") == {"hz": "15"}  # the argument wins
        assert c.info("server")["config_file"] == conf
    finally:
        p.terminate()
        assert p.wait(10) == 0


def test_logfile_gets_log_lines():
    d = tempfile.mkdtemp()
    port = free_port()
    log = os.path.join(d, "hk.log")
    p = subprocess.Popen([BIN, "--port", str(port), "--logfile", log],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert wait_port(port)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 0
    text = open(log).read()
    assert "Ready to accept connections" in text
    assert "Received SIGINT scheduling shutdown" in text
    assert b"Ready to accept" not in out  # nothing on stdout when logging to a file


def test_stdout_logging_by_default():
    port = free_port()
    p = subprocess.Popen([BIN, "--port", str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    assert wait_port(port)
    p.terminate()
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 0
    assert b"Ready to accept connections" in out
    assert b"Received SIGTERM scheduling shutdown" in out


@pytest.mark.parametrize("server", ["hotkv", "redis"])
@pytest.mark.parametrize("logo", [False, True])
def test_startup_banner(server, logo):
    """Without a terminal, one "Running mode=standalone, port=N." line; with
    always-show-logo yes, a banner whose " PID: n" line comes before "Server
    initialized", which Redis's own test suite waits for when it starts a
    server.  The same checks hold for redis-server."""
    import shutil
    exe = BIN if server == "hotkv" else shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    args = [exe, "--port", str(port), "--save", ""] + (["--always-show-logo", "yes"] if logo else [])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert wait_port(port)
    p.terminate()
    out, _ = p.communicate(timeout=10)
    text = out.decode()
    running = "Running mode=standalone, port=%d." % port
    if logo:
        assert running not in text
        assert re.search(r" Port: %d\n.* PID: %d\n.*Server initialized" % (port, p.pid), text, re.S), text
    else:
        assert running in text
        assert " PID: " not in text


def test_daemonize_and_pidfile():
    d = tempfile.mkdtemp()
    port = free_port()
    pidfile = os.path.join(d, "hk.pid")
    log = os.path.join(d, "hk.log")
    rc = subprocess.call([BIN, "--port", str(port), "--daemonize", "yes",
                          "--pidfile", pidfile, "--logfile", log])
    assert rc == 0  # the parent returns at once
    assert wait_port(port)
    pid = int(open(pidfile).read().strip())
    c = redis.Redis(port=port)
    assert c.info("server")["process_id"] == pid
    try:
        c.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    assert wait_gone(pid)
    assert not os.path.exists(pidfile)  # removed on clean exit


def test_shutdown_command_exits_zero():
    port = free_port()
    p = subprocess.Popen([BIN, "--port", str(port)], stdout=subprocess.DEVNULL)
    assert wait_port(port)
    try:
        redis.Redis(port=port).shutdown()
    except redis.ConnectionError:
        pass
    assert p.wait(10) == 0


@pytest.mark.parametrize("args,needle", [
    (["--no-such-option", "1"], b"Bad directive"),
    (["--port", "notanumber"], b"argument couldn't be parsed into an integer"),
    (["--loglevel", "loud"], b"argument(s) must be one of the following"),
    (["/nonexistent/hotkv.conf"], b"can't open config file"),
])
def test_bad_configuration_refuses_to_start(args, needle):
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=10)
    assert p.returncode != 0
    assert needle in p.stdout


def test_unbalanced_quotes_in_config_file():
    d = tempfile.mkdtemp()
    conf = os.path.join(d, "bad.conf")
    with open(conf, "w") as f:
        f.write('requirepass "oops\n')
    p = subprocess.run([BIN, conf], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=10)
    assert p.returncode != 0
    assert b"Unbalanced quotes" in p.stdout


def test_port_in_use_fails_cleanly():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        p = subprocess.run([BIN, "--port", str(port), "--bind", "127.0.0.1"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        assert p.returncode == 1
        assert b"Could not create server TCP listening socket" in p.stdout
    finally:
        s.close()


def test_config_set_port_moves_listeners():
    port = free_port()
    p = subprocess.Popen([BIN, "--port", str(port), "--threads", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        assert wait_port(port)
        c = redis.Redis(port=port, decode_responses=True)
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        # A port that cannot be bound changes nothing.
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("port", taken)
        assert "Unable to listen on this port" in str(e.value)
        busy.close()
        assert c.ping()
        new = free_port()
        assert c.config_set("port", new)
        c2 = redis.Redis(port=new, decode_responses=True)
        assert c2.config_get("port") == {"port": str(new)}
        assert c2.info("server")["tcp_port"] == new
        # The old port no longer accepts connections; the open one still works.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5)
        assert c.ping()
    finally:
        p.terminate()
        assert p.wait(10) == 0
