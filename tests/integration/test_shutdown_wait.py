"""A master's shutdown waits for lagging replicas (Redis 7's shutdown-timeout).

SHUTDOWN (without NOW) and SIGTERM on a master whose replica has not
acknowledged the whole stream: writes pause, reads go on, INFO shows
shutdown_in_milliseconds, the SHUTDOWN clients are blocked; the master
exits once the replica has caught up ("1 of 1 replicas are in sync when
shutting down."), or when shutdown-timeout runs out ("Lagging replica"),
and SHUTDOWN ABORT ends the wait (the blocked SHUTDOWNs get an error).
The replica is held back with SIGSTOP.  Runs against HotKV, and against
Debian's redis-server 7.0 with HOTKV_SERVER=redis (the same assertions).
Every scenario starts its own servers and is bounded in time."""
import os
import signal
import socket
import time

import pytest
import redis

from helpers import Server, wait_until



def logtext(srv):
    with open(os.path.join(srv.dir, "server.log"), errors="replace") as f:
        return f.read()


def client(srv):
    return redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True, socket_timeout=10)


def acked_all(m):
    """The master's replica has acknowledged every byte of the stream."""
    i = client(m).info("replication")
    s = i.get("slave0")
    return bool(s) and s.get("state") == "online" and int(s["offset"]) == int(i["master_repl_offset"])


class Pair:
    """A master (shutdown-timeout as given) and one replica, in sync."""

    def __init__(self, timeout):
        self.m = Server("--shutdown-timeout", str(timeout), "--repl-diskless-sync-delay", "0")
        self.r = Server("--replicaof", "127.0.0.1", str(self.m.port))
        self.mc, self.rc = client(self.m), client(self.r)
        assert wait_until(lambda: self.rc.info("replication").get("master_link_status") == "up", timeout=20)
        self.mc.set("k", 1)
        assert wait_until(lambda: acked_all(self.m), timeout=20), self.mc.info("replication")
        self.stopped = False

    def hold_replica(self):
        os.kill(self.r.proc.pid, signal.SIGSTOP)
        self.stopped = True

    def release_replica(self):
        if self.stopped:
            os.kill(self.r.proc.pid, signal.SIGCONT)
            self.stopped = False

    def waiting(self):
        try:
            return int(self.mc.info("server").get("shutdown_in_milliseconds", 0)) > 0
        except redis.ConnectionError:
            return False

    def close(self):
        self.release_replica()
        for s in (self.m, self.r):
            if s.proc.poll() is None:
                s.proc.kill()
            s.stop()


@pytest.fixture
def pair_factory():
    made = []

    def make(timeout):
        p = Pair(timeout)
        made.append(p)
        return p
    yield make
    for p in made:
        p.close()


def send(port, *args):
    """A raw connection that sent one command (its reply is read later)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
    return s


def read_reply(s, timeout):
    """What arrives within timeout, and whether the peer closed."""
    s.settimeout(timeout)
    out = b""
    try:
        while not out.endswith(b"\r\n"):
            chunk = s.recv(4096)
            if not chunk:
                return out, True
            out += chunk
    except socket.timeout:
        return out, False
    except ConnectionResetError:
        return out, True
    return out, False


@pytest.mark.parametrize("how", ["shutdown", "sigterm"])
def test_master_waits_for_lagging_replica(pair_factory, how):
    p = pair_factory(60)
    p.hold_replica()
    p.mc.incr("k")
    sd = None
    if how == "shutdown":
        sd = send(p.m.port, "SHUTDOWN")
    else:
        p.m.proc.send_signal(signal.SIGTERM)
    assert wait_until(p.waiting, timeout=10), logtext(p.m)
    if how == "shutdown":
        assert p.mc.info("clients")["blocked_clients"] == 1
    # Reads are served, writes wait.
    assert p.mc.get("k") == "2"
    w = send(p.m.port, "SET", "late", "1")
    assert read_reply(w, 0.5) == (b"", False)
    time.sleep(0.3)
    assert p.m.proc.poll() is None, "the master did not wait"
    assert "Waiting for replicas before shutting down." in logtext(p.m)
    p.release_replica()
    p.m.proc.wait(20)
    text = logtext(p.m)
    assert "1 of 1 replicas are in sync when shutting down." in text, text[-3000:]
    assert "Lagging replica" not in text
    if sd is not None:
        assert read_reply(sd, 5) == (b"", True)  # no reply: the connection closes
    assert read_reply(w, 5) == (b"", True)  # the paused write never ran
    assert p.rc.get("k") == "2"
    assert p.rc.get("late") is None


def test_master_gives_up_after_shutdown_timeout(pair_factory):
    p = pair_factory(1)
    p.hold_replica()
    p.mc.incr("k")
    t0 = time.time()
    p.m.proc.send_signal(signal.SIGTERM)
    p.m.proc.wait(15)
    took = time.time() - t0
    assert 0.8 < took < 10, took
    text = logtext(p.m)
    assert "Lagging replica" in text, text[-3000:]
    assert "0 of 1 replicas are in sync when shutting down." in text


def two_waiting_shutdowns(p):
    """The replica held back, a write it lacks, and two SHUTDOWNs blocked
    in the wait: their connections, for the replies."""
    p.hold_replica()
    p.mc.incr("k")
    a, b = send(p.m.port, "SHUTDOWN"), send(p.m.port, "SHUTDOWN")
    assert wait_until(p.waiting, timeout=10), logtext(p.m)
    assert wait_until(lambda: p.mc.info("clients")["blocked_clients"] == 2, timeout=5)
    return a, b


def test_shutdown_abort_ends_the_wait(pair_factory):
    p = pair_factory(60)
    a, b = two_waiting_shutdowns(p)
    assert p.mc.execute_command("SHUTDOWN", "ABORT") in (True, "OK")
    for s in (a, b):
        assert read_reply(s, 5) == (b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n", False)
    assert "shutdown_in_milliseconds" not in p.mc.info("server")
    assert p.mc.set("after", "1") is True  # writes run again
    with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
        p.mc.execute_command("SHUTDOWN", "ABORT")
    assert "Shutdown manually aborted." in logtext(p.m)
    p.release_replica()
    assert wait_until(lambda: p.rc.get("after") == "1", timeout=10)
    assert p.m.proc.poll() is None


@pytest.mark.parametrize("how", ["now", "timeout0"])
def test_no_wait(pair_factory, how):
    p = pair_factory(0 if how == "timeout0" else 60)
    p.hold_replica()
    p.mc.incr("k")
    t0 = time.time()
    if how == "now":
        sd = send(p.m.port, "SHUTDOWN", "NOW")
        assert read_reply(sd, 5) == (b"", True)
    else:
        p.m.proc.send_signal(signal.SIGTERM)
    p.m.proc.wait(10)
    assert time.time() - t0 < 5
    text = logtext(p.m)
    assert "Waiting for replicas" not in text
    assert "0 of 1 replicas are in sync when shutting down." in text, text[-3000:]


def test_sigint_during_the_wait_exits_at_once(pair_factory):
    p = pair_factory(60)
    p.hold_replica()
    p.mc.incr("k")
    p.m.proc.send_signal(signal.SIGTERM)
    assert wait_until(p.waiting, timeout=10), logtext(p.m)
    p.m.proc.send_signal(signal.SIGINT)
    assert p.m.proc.wait(10) == 1
    assert "You insist... exiting now." in logtext(p.m)


def test_writes_wait_while_a_replica_catches_up(pair_factory):
    """A write sent during the wait does not run, even once the replica
    has caught up: the master exits with writes still paused."""
    p = pair_factory(60)
    p.hold_replica()
    p.mc.incr("k")
    sd = send(p.m.port, "SHUTDOWN")
    assert wait_until(p.waiting, timeout=10)
    writers = [send(p.m.port, "INCR", "k") for _ in range(5)]
    p.release_replica()
    p.m.proc.wait(20)
    for s in writers + [sd]:
        assert read_reply(s, 5) == (b"", True)
    assert p.rc.get("k") == "2"


def slow_initial_aof(c):
    """AOF switched on with a first rewrite that takes minutes: the files
    do not hold the dataset until it ends."""
    c.config_set("rdb-key-save-delay", 30000000)  # 30 s per key
    c.config_set("appendonly", "yes")
    assert wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 1, timeout=10)


def test_initial_aof_rewrite_refuses_shutdown():
    """While the AOF is being written for the first time, a shutdown would
    lose the dataset (no save points here): SHUTDOWN fails, SIGTERM is
    refused, the server runs on with writes allowed; FORCE exits anyway."""
    s = Server()
    try:
        c = client(s)
        c.set("k", "v")
        slow_initial_aof(c)
        with pytest.raises(redis.ResponseError, match="^Errors trying to SHUTDOWN. Check logs.$"):
            c.execute_command("SHUTDOWN")
        assert "Writing initial AOF, can't exit." in logtext(s)
        assert "Errors trying to shut down the server. Check the logs for more information." in logtext(s)
        s.proc.send_signal(signal.SIGTERM)
        assert wait_until(lambda: logtext(s).count("Writing initial AOF, can't exit.") == 2,
                          timeout=10), logtext(s)[-2000:]
        assert s.proc.poll() is None
        assert c.set("after", "1") is True
        sd = send(s.port, "SHUTDOWN", "NOSAVE", "FORCE")
        assert read_reply(sd, 10) == (b"", True)
        assert s.proc.wait(15) == 0
        assert "Writing initial AOF. Exit anyway." in logtext(s)
    finally:
        s.stop()


def test_wait_for_replicas_then_initial_aof_refuses(pair_factory):
    """The check comes after the wait for lagging replicas (Redis's
    finishShutdown): the replicas are reported in sync, then the AOF's
    first rewrite calls the shutdown off and both blocked SHUTDOWNs get
    the error."""
    p = pair_factory(60)
    a, b = two_waiting_shutdowns(p)
    slow_initial_aof(p.mc)
    p.release_replica()
    for s in (a, b):
        assert read_reply(s, 10) == (b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n", False)
    text = logtext(p.m)
    assert "1 of 1 replicas are in sync when shutting down." in text, text[-3000:]
    assert "Writing initial AOF, can't exit." in text
    assert "shutdown_in_milliseconds" not in p.mc.info("server")
    assert p.mc.set("after", "1") is True  # writes run again
    assert p.m.proc.poll() is None
    p.mc.execute_command("CONFIG", "SET", "appendonly", "no")
