"""Replication, master side: Debian's redis-server 7.0 as a replica of a
HotKV master (PSYNC, the diskless full sync, the command stream, partial
resynchronization from the backlog, the replica output-buffer limit,
INFO replication and ROLE).

Every scenario starts its own servers on loopback ports and is bounded in
time.  The workload is test_propagation's random commands minus what Redis
7.0 cannot take (the hash-field TTL commands of Redis 7.4/8)."""
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, Server, free_port, wait_until
from test_propagation import DBS, blocking_command, dataset, random_command

pytestmark = [pytest.mark.skipif(IS_REDIS, reason="HotKV as the master"),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")]

NOT_IN_70 = {"HEXPIRE", "HPEXPIRE", "HPERSIST", "HPEXPIREAT"}


def compat_command(rnd):
    while True:
        cmd = random_command(rnd)
        if str(cmd[0]).upper() not in NOT_IN_70:
            return cmd


def worker(port, seed, n, errs):
    rnd = random.Random(seed)
    c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=30,
                    encoding_errors="surrogateescape")
    c.response_callbacks.clear()
    try:
        for _ in range(n):
            x = rnd.random()
            try:
                if x < 0.02:
                    c.execute_command("SELECT", rnd.randint(0, DBS - 1))
                elif x < 0.07:
                    p = c.pipeline(transaction=True)
                    for _ in range(rnd.randint(1, 4)):
                        p.execute_command(*compat_command(rnd))
                    p.execute(raise_on_error=False)
                elif x < 0.1:
                    c.execute_command(*blocking_command(rnd))
                else:
                    c.execute_command(*compat_command(rnd))
            except redis.exceptions.ResponseError:
                pass
    except Exception as e:  # noqa: BLE001
        errs.append(repr(e))
    finally:
        c.close()


class Replica:
    """Debian's redis-server, replica of the master on mport."""

    def __init__(self, mport, *extra):
        self.dir = tempfile.mkdtemp(prefix="hotkv-replica-")
        self.port = free_port()
        self.log = os.path.join(self.dir, "replica.log")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--logfile", self.log, "--replicaof", "127.0.0.1", str(mport)] + list(extra),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.c = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=10,
                             encoding_errors="surrogateescape")
        self.c.response_callbacks.clear()
        assert wait_until(self.pingable, timeout=10), self.logtext()

    def pingable(self):
        try:
            return self.c.ping() in (True, "PONG", b"PONG")
        except redis.ConnectionError:
            return False

    def info(self):
        text = self.c.execute_command("INFO", "replication")
        return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)

    def synced_with(self, master):
        """The link is up and the replica has every byte the master fed."""
        i = self.info()
        m = master.execute_command("INFO", "replication")
        moff = int(dict(l.split(":", 1) for l in m.split("\r\n") if ":" in l)["master_repl_offset"])
        return (i.get("master_link_status") == "up" and i.get("master_sync_in_progress") == "0"
                and int(i.get("slave_repl_offset", -1)) == moff)

    def logtext(self):
        try:
            with open(self.log) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def master_info(c):
    text = c.execute_command("INFO", "replication")
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)


def stat(c, name):
    text = c.execute_command("INFO", "stats")
    return int(dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)[name])


def raw(srv):
    c = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True, socket_timeout=10,
                    encoding_errors="surrogateescape")
    c.response_callbacks.clear()
    return c


def plain(port):
    """A client with redis-py's reply parsing (scan_iter needs it)."""
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10,
                       encoding_errors="surrogateescape")


def compare(m, r):
    time.sleep(0.3)  # the short TTLs (< 100 ms) are past
    mp, rp = plain(m.connection_pool.connection_kwargs["port"]), plain(r.port)
    for db in range(DBS):  # lazily expired keys are deleted (and DEL fed) now
        mp.execute_command("SELECT", db)
        list(mp.scan_iter(count=1000))
    mp.execute_command("SELECT", 0)
    assert wait_until(lambda: r.synced_with(m), timeout=10), (master_info(m), r.info())
    a, b = dataset(mp, field_ttls=False), dataset(rp, field_ttls=False)
    missing, extra = set(a) - set(b), set(b) - set(a)
    diff = [k for k in a if k in b and a[k] != b[k]]
    assert not missing and not extra and not diff, (
        "missing %s extra %s differ %s" % (sorted(missing)[:5], sorted(extra)[:5], [(k, a[k], b[k]) for k in diff[:3]]))
    return a


def load_function(m):
    m.execute_command("FUNCTION", "LOAD", "REPLACE", "#!lua name=difflib\nredis.register_function('pushit', "
                      "function(k, a) redis.call('RPUSH', k[1], a[1]); return redis.call('LLEN', k[1]) end)")


@pytest.fixture
def master():
    s = Server("--repl-diskless-sync-delay", "0", threads=4)
    yield s
    assert s.stop() == 0, "master exited badly, see %s" % s.dir


def test_no_replicas_role_and_info(master):
    m = raw(master)
    assert m.execute_command("ROLE") == ["master", 0, []]
    i = master_info(m)
    assert i["role"] == "master" and i["connected_slaves"] == "0" and i["repl_backlog_active"] == "0"
    assert len(i["master_replid"]) == 40
    assert m.execute_command("REPLCONF", "listening-port", "1234", "capa", "eof", "capa", "psync2") == "OK"
    with pytest.raises(redis.ResponseError, match="Unrecognized REPLCONF option: nonsense"):
        m.execute_command("REPLCONF", "nonsense", "1")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        m.execute_command("REPLCONF", "listening-port")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        m.execute_command("PSYNC", "?")


def test_full_sync_then_stream(master):
    m = raw(master)
    load_function(m)
    rnd = random.Random(5)
    for _ in range(1500):  # data before the replica comes: the RDB carries it
        try:
            m.execute_command(*compat_command(rnd))
        except redis.ResponseError:
            pass
    m.execute_command("SELECT", 2)
    m.execute_command("SET", "in-db-2", "x")
    m.execute_command("SELECT", 0)
    r = Replica(master.port)
    try:
        assert wait_until(lambda: r.synced_with(m), timeout=15), r.logtext()
        # Now the stream: 6 clients on 4 threads, MULTI, scripts, FCALL,
        # blocking pops, expiries.
        errs = []
        ts = [threading.Thread(target=worker, args=(master.port, 100 + i, 800, errs)) for i in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120)
        assert not errs, errs
        data = compare(m, r)
        assert len(data) > 20 and (2, "in-db-2") in data
        i = master_info(m)
        assert i["connected_slaves"] == "1" and i["repl_backlog_active"] == "1"
        assert i["slave0"].startswith("ip=127.0.0.1,port=%d,state=online," % r.port), i["slave0"]
        role = m.execute_command("ROLE")
        assert role[0] == "master" and role[1] == int(i["master_repl_offset"])
        assert role[2] == [["127.0.0.1", str(r.port), role[2][0][2]]]
        assert stat(m, "sync_full") == 1
        assert "Finished with success" in r.logtext()
    finally:
        r.stop()
    assert wait_until(lambda: master_info(m)["connected_slaves"] == "0", timeout=5)


def test_writes_during_the_snapshot(master):
    """The child's RDB and the stream meet exactly: writes that happen
    while the snapshot is being written reach the replica once."""
    m = raw(master)
    p = m.pipeline(transaction=False)
    for i in range(3000):
        p.execute_command("SET", "k:%d" % i, "v%d" % i)
    p.execute()
    m.execute_command("CONFIG", "SET", "rdb-key-save-delay", "200")  # 3000 keys: about 0.6 s of snapshot
    errs = []
    stop = threading.Event()

    def writer():
        c = raw(master)
        n = 0
        try:
            while not stop.is_set():
                c.execute_command("INCR", "counter")
                c.execute_command("SET", "k:%d" % (n % 3000), "w%d" % n)
                n += 1
        except Exception as e:  # noqa: BLE001
            errs.append(repr(e))

    t = threading.Thread(target=writer)
    t.start()
    r = Replica(master.port)
    try:
        assert wait_until(lambda: "Finished with success" in r.logtext(), timeout=20), r.logtext()
        time.sleep(0.3)
        stop.set()
        t.join()
        assert not errs, errs
        m.execute_command("CONFIG", "SET", "rdb-key-save-delay", "0")
        data = compare(m, r)
        assert int(data[(0, "counter")][1]) > 0
    finally:
        stop.set()
        r.stop()


def test_partial_resync_after_a_cut_link(master):
    m = raw(master)
    r = Replica(master.port)
    try:
        assert wait_until(lambda: r.synced_with(m), timeout=15), r.logtext()
        for i in range(200):
            m.execute_command("RPUSH", "l", i)
        full = stat(m, "sync_full")
        r.c.execute_command("CLIENT", "KILL", "TYPE", "master")
        for i in range(200):  # while the replica reconnects
            m.execute_command("RPUSH", "l", "after-%d" % i)
        assert wait_until(lambda: stat(m, "sync_partial_ok") == 1, timeout=10), r.logtext()
        assert stat(m, "sync_full") == full
        compare(m, r)
        assert "Successful partial resynchronization" in r.logtext()
    finally:
        r.stop()


def test_paused_replica_catches_up(master):
    """A replica that stops reading for a while (under its output limit)
    gets everything it missed when it goes on."""
    m = raw(master)
    r = Replica(master.port)
    try:
        assert wait_until(lambda: r.synced_with(m), timeout=15), r.logtext()
        r.proc.send_signal(signal.SIGSTOP)
        try:
            for i in range(300):  # ~300 KB it has not read
                m.execute_command("SET", "big:%d" % i, "x" * 1000)
        finally:
            r.proc.send_signal(signal.SIGCONT)
        compare(m, r)
        assert stat(m, "sync_full") == 1 and stat(m, "sync_partial_ok") == 0
    finally:
        r.stop()


def test_unknown_history_means_a_full_resync(master):
    """A replica whose replication id the master does not know (it was
    promoted meanwhile: REPLICAOF NO ONE) gets a full sync, counted as a
    failed partial one."""
    m = raw(master)
    r = Replica(master.port)
    try:
        assert wait_until(lambda: r.synced_with(m), timeout=15), r.logtext()
        r.c.execute_command("REPLICAOF", "NO", "ONE")
        m.execute_command("SET", "while-apart", "1")
        r.c.execute_command("SET", "only-on-the-replica", "1")
        r.c.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
        assert wait_until(lambda: stat(m, "sync_full") == 2, timeout=15), r.logtext()
        assert stat(m, "sync_partial_err") == 1
        compare(m, r)
    finally:
        r.stop()


def test_slow_replica_cut_at_its_output_limit(master):
    m = raw(master)
    m.execute_command("CONFIG", "SET", "client-output-buffer-limit", "replica 262144 0 0")
    m.execute_command("CONFIG", "SET", "repl-backlog-size", "16384")
    r = Replica(master.port)
    try:
        assert wait_until(lambda: r.synced_with(m), timeout=15), r.logtext()
        r.proc.send_signal(signal.SIGSTOP)
        try:
            t0 = time.time()
            # 16 MB the replica does not read: far over 256 KB, and over
            # what the loopback socket's buffers (both ends) can absorb.
            p = m.pipeline(transaction=False)
            for i in range(4000):
                p.execute_command("SET", "s:%d" % i, "y" * 4000)
            p.execute()
            assert time.time() - t0 < 10  # the master's clients never wait for the replica
            assert wait_until(lambda: master_info(m)["connected_slaves"] == "0", timeout=10), master_info(m)
        finally:
            r.proc.send_signal(signal.SIGCONT)
        full = stat(m, "sync_full")
        # It comes back, finds its offset gone from the backlog, full sync.
        assert wait_until(lambda: stat(m, "sync_full") == full + 1, timeout=15), r.logtext()
        compare(m, r)
    finally:
        r.stop()
