"""DEBUG PAUSE-CRON (Redis's test aid): while set, the periodic work waits.

Active expiry stops, a finished BGSAVE is not reaped (the save stays "in
progress"), and a SIGTERM's shutdown is held: SHUTDOWN ABORT cancels it,
PAUSE-CRON 0 lets it go on, a SIGINT on top exits at once ("You
insist").  Runs against HotKV, and against Debian's redis-server 7.0 with
HOTKV_SERVER=redis (the same assertions).  Each case starts its own
server."""
import os
import signal
import time

import pytest
import redis

from helpers import Server, wait_until


def client(srv):
    return redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True, socket_timeout=10)


def logtext(srv):
    with open(os.path.join(srv.dir, "server.log"), errors="replace") as f:
        return f.read()


def test_pause_cron_holds_active_expiry():
    s = Server()
    try:
        c = client(s)
        assert c.execute_command("DEBUG", "PAUSE-CRON", "1") == "OK"
        c.set("k", "v", px=50)
        time.sleep(0.6)  # many cron periods
        assert c.info("stats")["expired_keys"] == 0
        assert c.info("keyspace")["db0"]["keys"] == 1
        assert c.execute_command("DEBUG", "PAUSE-CRON", "0") == "OK"
        assert wait_until(lambda: c.info("stats")["expired_keys"] == 1, timeout=5)
        assert c.dbsize() == 0
    finally:
        s.stop()


def test_pause_cron_leaves_a_finished_bgsave_unreaped():
    s = Server()
    try:
        c = client(s)
        c.set("k", "v")
        c.execute_command("DEBUG", "PAUSE-CRON", "1")
        c.bgsave()
        dump = os.path.join(s.dir, "dump.rdb")
        assert wait_until(lambda: os.path.exists(dump), timeout=5)
        time.sleep(0.5)  # the child is long done
        assert c.info("persistence")["rdb_bgsave_in_progress"] == 1
        c.execute_command("DEBUG", "PAUSE-CRON", "0")
        assert wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=5)
        assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    finally:
        s.stop()


def held_sigterm():
    """A server whose cron is paused, with a SIGTERM held back: (server,
    client)."""
    s = Server()
    c = client(s)
    c.execute_command("DEBUG", "PAUSE-CRON", "1")
    os.kill(s.proc.pid, signal.SIGTERM)
    assert wait_until(lambda: "Received SIGTERM" in logtext(s), timeout=5)
    return s, c


def test_shutdown_abort_cancels_a_held_sigterm():
    s = Server()
    c = client(s)
    try:
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            c.execute_command("SHUTDOWN", "ABORT")
        c.execute_command("DEBUG", "PAUSE-CRON", "1")
        os.kill(s.proc.pid, signal.SIGTERM)
        assert wait_until(lambda: "Received SIGTERM" in logtext(s), timeout=5)
        time.sleep(0.2)
        assert s.proc.poll() is None and c.ping()
        assert c.execute_command("SHUTDOWN", "ABORT") is True
        assert wait_until(lambda: "Shutdown manually aborted" in logtext(s), timeout=5)
        c.execute_command("DEBUG", "PAUSE-CRON", "0")
        time.sleep(0.3)
        assert s.proc.poll() is None and c.ping()
        # Nothing is held any more.
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            c.execute_command("SHUTDOWN", "ABORT")
    finally:
        assert s.stop() == 0


def test_held_sigterm_goes_on_when_the_cron_resumes():
    s, c = held_sigterm()
    time.sleep(0.2)
    assert s.proc.poll() is None and c.ping()
    c.execute_command("DEBUG", "PAUSE-CRON", "0")
    s.proc.wait(10)
    assert s.proc.returncode == 0
    s.stop()


def test_sigint_on_a_held_shutdown_exits_at_once():
    s, _ = held_sigterm()
    os.kill(s.proc.pid, signal.SIGINT)
    s.proc.wait(10)
    assert s.proc.returncode == 1
    assert "You insist" in logtext(s)
    s.stop()


def test_shutdown_command_goes_ahead_of_a_held_sigterm():
    s, c = held_sigterm()
    try:
        c.execute_command("SHUTDOWN", "NOSAVE")
    except redis.ConnectionError:
        pass
    s.proc.wait(10)
    assert s.proc.returncode == 0
    s.stop()
