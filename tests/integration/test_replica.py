"""Replication, replica side: HotKV following a master (REPLICAOF).

HotKV as a replica of Debian's redis-server 7.0 (the migration path into
HotKV), of another HotKV, and of a replica (chained); partial
resynchronization after a cut link; promotion with REPLICAOF NO ONE and the
other replicas continuing from the promoted one (the secondary replication
id); what a replica answers (READONLY, MASTERDOWN, expired keys hidden but
kept until the master's DEL, INFO replication, ROLE, CLIENT LIST/KILL TYPE
master).

Every scenario starts its own servers on loopback ports and is bounded in
time."""
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
from test_propagation import DBS, dataset, random_command
from test_replication import Replica, compat_command, load_function, master_info, plain, stat, worker

pytestmark = [pytest.mark.skipif(IS_REDIS, reason="HotKV as the replica"),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")]


def raw(port):
    c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10,
                    encoding_errors="surrogateescape")
    c.response_callbacks.clear()
    return c


info = master_info  # INFO replication as a dict (either role)


def synced(r, m):
    """r's link is up and it has every byte m fed."""
    try:
        i, mi = info(r), info(m)
    except redis.ConnectionError:
        return False
    return (i.get("master_link_status") == "up" and i.get("master_sync_in_progress") == "0"
            and int(i.get("slave_repl_offset", -1)) == int(mi["master_repl_offset"]))


def logtext(srv):
    try:
        with open(os.path.join(srv.dir, "server.log")) as f:
            return f.read()[-4000:]
    except OSError:
        return ""


def unsynced(rc, mc, r, m):
    """Why `synced` is false: both sides' INFO replication and log tails."""
    out = []
    for name, c, srv in (("replica", rc, r), ("master", mc, m)):
        try:
            i = info(c)
        except redis.RedisError as e:
            i = repr(e)
        out.append("%s INFO: %r\n%s log:\n%s" % (name, i, name, logtext(srv)))
    return "\n".join(out)


def flush_lazy_expired(port):
    """Touch every key on the master: the ones whose TTL passed are deleted
    (and their DEL streamed) now."""
    p = plain(port)
    for db in range(DBS):
        p.execute_command("SELECT", db)
        list(p.scan_iter(count=1000))
    p.close()


def same_data(mport, rports, field_ttls=True, ref=None):
    """Every replica in rports holds what the master on mport holds (or,
    with ref, what the replica on port ref holds)."""
    time.sleep(0.3)  # short TTLs are past
    flush_lazy_expired(mport)
    m = raw(mport)
    for rp in rports + ([ref] if ref else []):
        assert wait_until(lambda: synced(raw(rp), m), timeout=15), "master %r\nreplica %r" % (info(m), info(raw(rp)))
    a = dataset(plain(ref or mport), field_ttls=field_ttls)
    for rp in rports:
        b = dataset(plain(rp), field_ttls=field_ttls)
        missing, extra = set(a) - set(b), set(b) - set(a)
        diff = [k for k in a if k in b and a[k] != b[k]]
        assert not missing and not extra and not diff, "\n".join(
            ["replica on %d: missing %s extra %s" % (rp, sorted(missing)[:5], sorted(extra)[:5])] +
            ["%r\n  want %r\n  got  %r" % (k, a[k], b[k]) for k in diff[:2]])
    return a


def stop_all(*servers):
    """Stop every server given (None skipped), then check they exited
    cleanly (a sanitizer report exits non-zero): one failing never leaves
    the others running."""
    rcs = [(getattr(x, "dir", "?"), x.stop()) for x in servers if x]
    bad = [(d, rc) for d, rc in rcs if rc not in (0, None)]
    assert not bad, "servers exited badly (see their logs): %s" % bad


class RedisMaster:
    """Debian's redis-server as the master."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="hotkv-rmaster-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--logfile", os.path.join(self.dir, "server.log"),
             "--repl-diskless-sync-delay", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = raw(self.port)
        assert wait_until(lambda: self._ping(c), timeout=10)

    @staticmethod
    def _ping(c):
        try:
            return c.ping() in (True, "PONG")
        except redis.ConnectionError:
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def hotkv(*extra, threads=2):
    return Server("--repl-diskless-sync-delay", "0", *extra, threads=threads)


def fill(port, n, seed, compat=False):
    c = raw(port)
    rnd = random.Random(seed)
    for _ in range(n):
        try:
            c.execute_command(*(compat_command(rnd) if compat else random_command(rnd)))
        except redis.ResponseError:
            pass


def run_workers(port, nthreads, n, seed):
    errs = []
    ts = [threading.Thread(target=worker, args=(port, seed + i, n, errs)) for i in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errs, errs


def test_replica_of_redis_master():
    """The migration path: HotKV follows a running redis-server 7.0 (full
    sync of every type in two databases, then 6 writers with MULTI,
    scripts, functions and blocking pops) and ends up with exactly what a
    redis-server replica of the same master holds.  (Not always what the
    master holds: Redis 7.0 does not stream some consumer-group metadata,
    e.g. a consumer created by an XREADGROUP of its empty history, or the
    delivery count a history read bumps; its own replicas lack them too.)"""
    m = RedisMaster()
    r = ref = None
    try:
        mc = raw(m.port)
        load_function(mc)
        fill(m.port, 1500, 7, compat=True)
        mc.execute_command("SELECT", 2)
        mc.execute_command("SET", "in-db-5", "x")
        mc.execute_command("SELECT", 0)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), threads=4)
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), logtext(r)
        assert rc.execute_command("FUNCTION", "LIST")[0][1] == "difflib"
        ref = Replica(m.port)
        # Both replicas must get the workload through the stream: Redis 7.0
        # does not stream a group's entries-read (XREADGROUP) but its RDB
        # carries it, so a reference replica whose snapshot came in the
        # middle of the workload would differ from both.
        assert wait_until(lambda: ref.synced_with(mc), timeout=15), ref.logtext()
        # Redis streams an approximate trim as "MAXLEN = <length>" with the
        # LIMIT left in: a replica must obey it (HotKV's own clients get
        # an error for LIMIT without ~).
        for i in range(30):
            mc.execute_command("XADD", "lim", "MAXLEN", "~", 2, "LIMIT", 10, "*", "f", i)
        run_workers(m.port, 8, 450, 300)  # 8 writers
        data = same_data(m.port, [r.port], field_ttls=False, ref=ref.port)
        assert len(data) > 20 and (2, "in-db-5") in data
        i = info(rc)
        assert i["role"] == "slave" and i["master_host"] == "127.0.0.1" and i["master_port"] == str(m.port)
        assert i["master_link_status"] == "up" and int(i["master_last_io_seconds_ago"]) <= 10
        assert i["slave_read_only"] == "1" and i["slave_priority"] == "100"
        assert i["master_replid"] == info(mc)["master_replid"]
        role = rc.execute_command("ROLE")
        assert role[:4] == ["slave", "127.0.0.1", m.port, "connected"] and role[4] == int(i["slave_repl_offset"])
        # The master sees our ACKs: our offset, online.
        assert wait_until(lambda: info(mc).get("slave0", "").endswith(
            "state=online,offset=%s,lag=0" % info(mc)["master_repl_offset"]) or
            ",offset=%s," % info(mc)["master_repl_offset"] in info(mc).get("slave0", ""), timeout=5), info(mc)
        # redis-py raises ReadOnlyError for a -READONLY reply (the code cut).
        with pytest.raises(redis.exceptions.ReadOnlyError, match="^You can't write against a read only replica.$"):
            rc.execute_command("SET", "x", "1")
        with pytest.raises(redis.exceptions.ReadOnlyError):
            rc.execute_command("EVAL", "#!lua\nreturn redis.call('SET', KEYS[1], 'v')", 1, "x")
        with pytest.raises(redis.ResponseError, match="You can't write against a read only replica"):
            rc.execute_command("EVAL", "return redis.call('SET', KEYS[1], 'v')", 1, "x")
        assert rc.execute_command("EVAL", "return redis.call('GET', KEYS[1])", 1, "in-db-5") is None
        lst = rc.execute_command("CLIENT", "LIST", "TYPE", "master")
        assert lst.count("\n") == 1 and "flags=M" in lst, lst
        assert "Finished with success" in logtext(r)
    finally:
        stop_all(ref, r, m)


def test_partial_resync_and_chain():
    """HotKV -> HotKV -> HotKV: the middle one streams its master's bytes
    (same offsets, same id); a cut link resumes with +CONTINUE from the
    backlog, and the chained replica never notices."""
    m = hotkv(threads=4)
    r1 = r2 = None
    try:
        mc = raw(m.port)
        fill(m.port, 1000, 11)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r1c = raw(r1.port)
        assert wait_until(lambda: synced(r1c, mc), timeout=15), logtext(r1)
        r2 = hotkv("--replicaof", "127.0.0.1", str(r1.port), "--repl-diskless-load", "swapdb")
        r2c = raw(r2.port)
        assert wait_until(lambda: synced(r2c, r1c), timeout=15), logtext(r2)
        assert info(r2c)["master_replid"] == info(mc)["master_replid"]
        assert "receiving streamed RDB from master to memory" in logtext(r2)
        run_workers(m.port, 4, 400, 500)
        same_data(m.port, [r1.port, r2.port])
        # INFO stats' replication traffic: the stream out of m and r1, into r1 and r2.
        assert stat(mc, "total_net_repl_output_bytes") > 10000 and stat(mc, "total_net_repl_input_bytes") == 0
        assert stat(r1c, "total_net_repl_input_bytes") > 10000 and stat(r1c, "total_net_repl_output_bytes") > 10000
        assert stat(r2c, "total_net_repl_input_bytes") > 10000
        full = stat(mc, "sync_full")
        assert r1c.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        fill(m.port, 300, 12)  # while r1 reconnects
        assert wait_until(lambda: stat(mc, "sync_partial_ok") == 1, timeout=10), logtext(r1)
        assert stat(mc, "sync_full") == full
        same_data(m.port, [r1.port, r2.port])
        assert stat(r1c, "sync_full") == 1 and stat(r1c, "sync_partial_ok") == 0
        assert "Successful partial resynchronization" in logtext(r1)
    finally:
        stop_all(r2, r1, m)


def test_promotion_and_the_others_follow():
    """Failover by hand: the master dies, one replica is promoted
    (REPLICAOF NO ONE), the other follows it with a partial resync (the
    promoted one keeps the old history as its secondary id), and the old
    master comes back as a replica of the new one."""
    m = hotkv(threads=4)
    r1 = r2 = None
    try:
        mc = raw(m.port)
        fill(m.port, 800, 21)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port), "--repl-diskless-load", "on-empty-db")
        r2 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r1c, r2c = raw(r1.port), raw(r2.port)
        assert wait_until(lambda: synced(r1c, mc) and synced(r2c, mc), timeout=15)
        assert "to memory" in logtext(r1) and "to disk" in logtext(r2)
        run_workers(m.port, 3, 300, 700)
        same_data(m.port, [r1.port, r2.port])
        old_id = info(mc)["master_replid"]
        assert m.stop() == 0
        m = None
        assert wait_until(lambda: info(r1c)["master_link_status"] == "down", timeout=5)
        off = int(info(r1c)["master_repl_offset"])
        assert r1c.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        i = info(r1c)
        assert i["role"] == "master" and i["master_replid2"] == old_id and i["second_repl_offset"] == str(off + 1)
        assert i["master_replid"] != old_id
        r1c.execute_command("SET", "after-failover", "1")
        assert r2c.execute_command("REPLICAOF", "127.0.0.1", str(r1.port)) == "OK"
        assert wait_until(lambda: synced(r2c, r1c), timeout=15), logtext(r2)
        assert stat(r1c, "sync_partial_ok") == 1 and stat(r1c, "sync_full") == 0, logtext(r1)
        assert r2c.execute_command("GET", "after-failover") == "1"
        run_workers(r1.port, 2, 200, 900)
        same_data(r1.port, [r2.port])
        # The old master returns (empty: no persistence) as a replica.
        m = hotkv("--replicaof", "127.0.0.1", str(r1.port))
        same_data(r1.port, [r2.port, m.port])
        assert r1c.execute_command("ROLE")[2] and len(r1c.execute_command("ROLE")[2]) == 2
    finally:
        stop_all(r2, r1, m)


def test_reconfigured_inside_exec_while_the_stream_starts():
    """Sentinel's reconfiguration: MULTI, REPLICAOF <promoted replica>,
    CLIENT KILL TYPE normal, CLIENT KILL TYPE pubsub, EXEC.  The partial
    resync with the promoted replica completes within the EXEC and its
    first stream bytes come with +CONTINUE; the link's worker must not run
    them (their commands take slot locks) while it waits inside CLIENT KILL
    holding every slot lock.  It did: the EXEC never answered and the
    server stopped serving.  Writers feed the master; each round they stop
    until everyone is in sync, a replica is promoted, they write to it, the
    old master follows it, and the reconfiguration above moves the third
    server over: every move is a partial resync with backlog to send."""
    backlog = ("--repl-backlog-size", "64mb")
    x = hotkv(*backlog)
    y = b = None
    stop, go = threading.Event(), threading.Event()
    cur = {"port": x.port}
    idle = [threading.Event(), threading.Event()]

    def writer(i):
        n = 0
        while not stop.is_set():
            try:
                port = cur["port"]
                c = raw(port)
                while not stop.is_set() and port == cur["port"]:
                    if not go.is_set():
                        idle[i].set()
                        go.wait(0.1)
                        continue
                    idle[i].clear()
                    p = c.pipeline(transaction=False)
                    for _ in range(20):
                        n += 1
                        p.set("k%d" % (n % 500), n)
                    p.execute()
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                time.sleep(0.01)

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(2)]
    try:
        y = hotkv("--replicaof", "127.0.0.1", str(x.port), *backlog)
        b = hotkv("--replicaof", "127.0.0.1", str(x.port), *backlog)
        assert wait_until(lambda: synced(raw(y.port), raw(x.port)) and synced(raw(b.port), raw(x.port)), timeout=15)
        go.set()
        for t in threads:
            t.start()
        master, replica = x, y
        for rnd in range(8):
            time.sleep(0.2)
            go.clear()
            assert wait_until(lambda: all(e.is_set() for e in idle), timeout=10)
            mc, rc = raw(master.port), raw(replica.port)
            assert wait_until(lambda: synced(rc, mc) and synced(raw(b.port), mc), timeout=10), rnd
            cur["port"] = replica.port
            assert rc.execute_command("REPLICAOF", "NO", "ONE") == "OK"
            go.set()
            time.sleep(random.uniform(0.05, 0.2))
            # A new connection each round: the EXEC lands on either worker.
            # (Sentinel's CONFIG REWRITE there gives the link the time to
            # finish its handshake; DEBUG SLEEP stands for it.)
            s = redis.Redis(port=b.port, socket_timeout=5, decode_responses=True)
            p = s.pipeline(transaction=True)
            p.execute_command("REPLICAOF", "127.0.0.1", str(replica.port))
            p.execute_command("DEBUG", "SLEEP", "0.05")
            p.execute_command("CLIENT", "KILL", "TYPE", "normal")
            p.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            try:
                p.execute()
            except redis.TimeoutError:
                pytest.fail("round %d: the EXEC did not answer in 5 s\n%s" % (rnd, logtext(b)[-3000:]))
            s.close()
            assert raw(b.port).ping(), rnd
            assert wait_until(lambda: info(raw(b.port)).get("master_link_status") == "up"
                              and info(raw(b.port)).get("master_port") == str(replica.port), timeout=10), (
                rnd, logtext(b)[-3000:])
            assert mc.execute_command("REPLICAOF", "127.0.0.1", str(replica.port)) == "OK"
            master, replica = replica, master
        stop.set()
        for t in threads:
            t.join(10)
        assert wait_until(lambda: synced(raw(b.port), raw(master.port)), timeout=15), logtext(b)[-3000:]
        # Every move was a partial resync (B's eight, the old masters' seven).
        partial = sum(stat(raw(n.port), "sync_partial_ok") for n in (x, y))
        assert partial >= 15, (partial, logtext(b)[-3000:])
        same_data(master.port, [b.port])
    finally:
        stop.set()
        go.set()
        stop_all(b, y, x)


def test_expired_keys_wait_for_the_masters_del():
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        mc.execute_command("SET", "short", "v", "PX", "150")
        mc.execute_command("SET", "long", "v")
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        time.sleep(0.3)
        # Logically gone on the replica, still there until the master says.
        assert rc.execute_command("GET", "short") is None
        assert rc.execute_command("EXISTS", "short") == 0
        assert rc.execute_command("DBSIZE") == 2
        time.sleep(0.2)
        assert rc.execute_command("DBSIZE") == 2  # no active expiry on a replica
        # Nor by SCAN or RANDOMKEY (which still answer; Redis too).
        assert rc.execute_command("SCAN", "0", "COUNT", "16384") == ["0", ["long"]]
        for _ in range(20):
            assert rc.execute_command("RANDOMKEY") in ("long", "short")
        assert rc.execute_command("DBSIZE") == 2
        assert mc.execute_command("GET", "short") is None  # the master deletes it: DEL streamed
        assert wait_until(lambda: rc.execute_command("DBSIZE") == 1, timeout=5)
        # A TTL already past when the master's command comes is kept too
        # (the master streams the DEL when it expires the key).
        mc.execute_command("SET", "k2", "v", "PX", "100000")
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        assert rc.execute_command("PTTL", "k2") > 0
    finally:
        stop_all(r, m)


def test_link_down_stale_data_and_replicaof_errors():
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        mc.execute_command("SET", "k", "v")
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--replica-serve-stale-data", "no")
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        mport = m.port
        assert rc.execute_command("GET", "k") == "v"
        assert rc.execute_command("REPLICAOF", "127.0.0.1", str(m.port)) == "OK Already connected to specified master"
        with pytest.raises(redis.ResponseError, match="Invalid master port"):
            rc.execute_command("REPLICAOF", "127.0.0.1", "70000")
        with pytest.raises(redis.ResponseError, match="value is not an integer"):
            rc.execute_command("REPLICAOF", "127.0.0.1", "x")
        assert m.stop() == 0
        m = None
        assert wait_until(lambda: info(rc)["master_link_status"] == "down", timeout=5)
        with pytest.raises(redis.ResponseError, match="^MASTERDOWN Link with MASTER is down and "
                                                      "replica-serve-stale-data is set to 'no'."):
            rc.execute_command("GET", "k")
        i = info(rc)  # INFO is a stale command: it runs
        assert int(i["master_link_down_since_seconds"]) >= 0 and i["master_last_io_seconds_ago"] == "-1"
        rc.execute_command("CONFIG", "SET", "replica-serve-stale-data", "yes")
        assert rc.execute_command("GET", "k") == "v"
        assert rc.execute_command("ROLE")[3] in ("connect", "connecting")
        # A replica refuses replicas of its own while its link is down.
        with pytest.raises(redis.ResponseError, match="NOMASTERLINK"):
            rc.execute_command("PSYNC", "?", "-1")
        assert rc.execute_command("CONFIG", "GET", "replicaof") == ["replicaof", "127.0.0.1 %d" % mport]
        # Promoted: writable, and CONFIG REWRITE / GET show no master.
        assert rc.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        assert rc.execute_command("SET", "k", "w") == "OK"
        assert rc.execute_command("CONFIG", "GET", "replicaof") == ["replicaof", ""]
        assert rc.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    finally:
        stop_all(r, m)


def test_one_diskless_snapshot_streams_to_all_its_replicas_at_once():
    """The replicas one diskless fork serves get +FULLRESYNC together and
    the one snapshot side by side (Redis's replication-buffer setup waits
    for both in state sync), and one that dies mid-transfer does not stop
    the others."""
    m = hotkv("--repl-diskless-sync-delay", 5, "--repl-diskless-sync-max-replicas", 3)
    rs = []
    try:
        mc = raw(m.port)
        mc.execute_command("DEBUG", "POPULATE", 100)
        mc.execute_command("CONFIG", "SET", "rdb-key-save-delay", 20000)  # 2 s per transfer
        rs = [hotkv("--replicaof", "127.0.0.1", str(m.port)) for _ in range(3)]
        cs = [raw(r.port) for r in rs]
        t0 = time.time()
        assert wait_until(lambda: all(c.execute_command("ROLE")[3] == "sync" for c in cs), timeout=5)
        assert time.time() - t0 < 1.5  # not one after the other
        assert mc.execute_command("INFO", "persistence").count("rdb_bgsave_in_progress:1") == 1
        dead = rs.pop(0)
        dead.proc.kill()
        dead.proc.wait()
        dead.log.close()
        assert wait_until(lambda: all(synced(c, mc) for c in cs[1:]), timeout=15), logtext(m)
        assert time.time() - t0 < 6
        assert [c.execute_command("DBSIZE") for c in cs[1:]] == [100, 100]
        assert logtext(m).count("Starting BGSAVE for SYNC") == 1
    finally:
        stop_all(*rs, m)


def test_a_replica_adds_nothing_of_its_own_to_the_stream():
    """A replica's stream is its master's byte for byte: it sends its own
    replicas no PING (repl-ping-replica-period) and no GETACK, or its
    history would differ from the master's under the same id, and a
    sub-replica continuing from it later would read the wrong bytes at its
    offset (Redis's psync2-pingoff crashed HotKV sub-replicas so)."""
    m = hotkv("--repl-ping-replica-period", 60)
    r1 = r2 = None
    try:
        mc = raw(m.port)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port), "--repl-ping-replica-period", 1)
        r1c = raw(r1.port)
        r2 = hotkv("--replicaof", "127.0.0.1", str(r1.port))
        r2c = raw(r2.port)
        mc.execute_command("SET", "k", "1")
        assert wait_until(lambda: synced(r1c, mc) and synced(r2c, r1c), timeout=15)
        time.sleep(2.5)  # two of r1's ping periods
        assert info(r1c)["master_repl_offset"] == info(mc)["master_repl_offset"]
        assert info(r2c)["master_repl_offset"] == info(mc)["master_repl_offset"]
        # Links cut: everyone continues, and the stream still parses.
        r1c.execute_command("CLIENT", "KILL", "TYPE", "master")
        r2c.execute_command("CLIENT", "KILL", "TYPE", "master")
        mc.execute_command("INCR", "k")
        assert wait_until(lambda: r2c.execute_command("GET", "k") == "2", timeout=15), logtext(r2)
        assert stat(r1c, "sync_partial_ok") >= 1
    finally:
        stop_all(r2, r1, m)


def test_writable_replica_keeps_its_writes_local():
    """replica-read-only no: a client's write lands on the replica only
    (it is not streamed to the replica's own replicas, as in Redis)."""
    m = hotkv()
    r1 = r2 = None
    try:
        mc = raw(m.port)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port), "--replica-read-only", "no")
        r2 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r1c, r2c = raw(r1.port), raw(r2.port)
        assert wait_until(lambda: synced(r1c, mc) and synced(r2c, mc), timeout=15)
        r2c.execute_command("REPLICAOF", "127.0.0.1", str(r1.port))
        assert wait_until(lambda: synced(r2c, r1c), timeout=15)
        assert r1c.execute_command("SET", "local", "1") == "OK"
        mc.execute_command("SET", "from-master", "1")
        assert wait_until(lambda: r2c.execute_command("GET", "from-master") == "1", timeout=5)
        assert r1c.execute_command("GET", "local") == "1"
        assert r2c.execute_command("GET", "local") is None
        assert info(r1c)["master_repl_offset"] == info(mc)["master_repl_offset"]
    finally:
        stop_all(r2, r1, m)


def test_debug_replicate_streams_without_running():
    """DEBUG REPLICATE <command...>: the replicas get the command, the
    master does not run it (Redis 7.2's data-divergence test aid); a
    replica that gets it streams nothing of its own, and a replicated MULTI
    does not hold back the master's later writes."""
    m = hotkv()
    r1 = r2 = None
    try:
        mc = raw(m.port)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r1c = raw(r1.port)
        assert wait_until(lambda: synced(r1c, mc), timeout=15)
        mc.execute_command("SELECT", 3)
        assert mc.execute_command("DEBUG", "REPLICATE", "SET", "only-there", "1") == "OK"
        assert wait_until(lambda: synced(r1c, mc), timeout=5)
        assert mc.execute_command("EXISTS", "only-there") == 0
        # No SELECT of its own: it runs in the db the stream was in (0).
        assert r1c.execute_command("GET", "only-there") == "1"
        # A MULTI sent this way is not a transaction of the master's.
        assert mc.execute_command("DEBUG", "REPLICATE", "MULTI") == "OK"
        assert mc.execute_command("DEBUG", "REPLICATE", "DISCARD") == "OK"
        mc.execute_command("SELECT", 0)
        mc.execute_command("SET", "after", "2")
        assert wait_until(lambda: r1c.execute_command("GET", "after") == "2", timeout=5)
        r2 = hotkv("--replicaof", "127.0.0.1", str(r1.port))
        r2c = raw(r2.port)
        assert wait_until(lambda: synced(r2c, r1c), timeout=15)
        off = info(r1c)["master_repl_offset"]
        assert r1c.execute_command("DEBUG", "REPLICATE", "SET", "x", "1") == "OK"
        assert info(r1c)["master_repl_offset"] == off
        with pytest.raises(redis.ResponseError, match="unknown subcommand or wrong number of arguments for 'REPLICATE'"):
            mc.execute_command("DEBUG", "REPLICATE")
    finally:
        stop_all(r2, r1, m)


def test_writable_replica_expires_its_own_keys():
    """replica-read-only no: keys a client gives a TTL on the replica are
    expired by the replica (no DEL will come from the master for them), as
    Redis's slaveKeysWithExpire; keys the master wrote still wait for the
    master's DEL.  INFO's slave_expires_tracked_keys counts them."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--replica-read-only", "no")
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        tracked = lambda: stat(rc, "slave_expires_tracked_keys")
        mc.execute_command("SET", "from-master", "v", "PX", "150")
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        assert tracked() == 0
        rc.execute_command("SET", "a", "1", "PX", "150")
        rc.execute_command("SET", "b", "1")
        rc.execute_command("PEXPIRE", "b", "150")
        rc.execute_command("SET", "c", "1", "EX", "100")
        rc.execute_command("SET", "nottl", "1")
        r3 = redis.Redis(host="127.0.0.1", port=r.port, db=3, decode_responses=True)
        r3.execute_command("SET", "a", "1", "PX", "150")
        assert tracked() == 3  # a (databases 0 and 3), b, c
        # Deleted by the replica's cron; the master's key still waits for
        # its DEL (hidden from reads meanwhile).
        assert wait_until(lambda: rc.execute_command("DBSIZE") == 3, timeout=5), rc.execute_command("KEYS", "*")
        assert sorted(rc.execute_command("KEYS", "*")) == ["c", "nottl"]  # from-master: logically expired
        # Database 3's "a" got its TTL a moment after database 0's: a cron
        # pass between the two deadlines deletes one and keeps the other.
        assert wait_until(lambda: r3.execute_command("DBSIZE") == 0, timeout=5), r3.execute_command("KEYS", "*")
        assert wait_until(lambda: tracked() == 1, timeout=5)
        assert stat(rc, "expired_keys") >= 3
        # A TTL removed: forgotten by the next look, the key stays.
        rc.execute_command("PERSIST", "c")
        rc.execute_command("SET", "d", "1", "PX", "100")
        assert wait_until(lambda: tracked() == 0, timeout=5)
        assert rc.execute_command("GET", "c") == "1" and rc.execute_command("EXISTS", "d") == 0
        # FLUSHALL and promotion forget every tracked key.
        rc.execute_command("SET", "e", "1", "EX", "100")
        assert tracked() == 1
        rc.execute_command("FLUSHALL")
        assert tracked() == 0
        rc.execute_command("SET", "f", "1", "EX", "100")
        assert tracked() == 1
        assert rc.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        assert tracked() == 0
        rc.execute_command("SET", "g", "1", "EX", "100")
        assert tracked() == 0  # a master expires its keys itself
        r3.close()
    finally:
        stop_all(r, m)


def restart(old, *args, threads=2):
    """old stopped, then a HotKV on its port and directory (its dump.rdb)."""
    from helpers import _conftest
    assert old.stop() == 0
    s = Server.__new__(Server)
    s.port, s.dir = old.port, old.dir
    cmd = [_conftest.BIN, "--port", str(s.port), "--bind", "127.0.0.1", "--threads", str(threads), "--dir", s.dir,
           "--save", "", "--repl-diskless-sync-delay", "0"] + _conftest.HARDENING_OFF + [str(a) for a in args]
    s.log = open(os.path.join(s.dir, "server.log"), "a")
    s.proc = subprocess.Popen(cmd, stdout=s.log, stderr=subprocess.STDOUT)
    assert wait_until(lambda: RedisMaster._ping(raw(s.port)), timeout=10), logtext(s)
    return s


def test_restarts_resume_with_a_partial_resync():
    """The RDB's repl-id / repl-offset / repl-stream-db: a replica that
    saved on shutdown continues from its offset after a restart, and so do
    the replicas of a master that did (Redis 7's behaviour)."""
    m = hotkv(threads=4)
    r = None
    try:
        mc = raw(m.port)
        fill(m.port, 600, 31)
        mc.execute_command("SELECT", 1)
        mc.execute_command("SET", "in-db-1", "a")  # the stream is in db 1 now
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), logtext(r)
        mc.execute_command("SET", "in-db-1-b", "b")
        assert wait_until(lambda: synced(rc, mc), timeout=15)  # ASan on a loaded 2-core box: more than 5 s once
        rc.execute_command("SAVE")
        full = stat(mc, "sync_full")
        # The replica goes down (it saved), the master goes on in db 1.
        r.proc.terminate()
        r.proc.wait(10)
        mc.execute_command("SET", "while-down", "c")  # no SELECT: the stream stays in db 1
        r = restart(r, "--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), logtext(r)
        assert stat(mc, "sync_full") == full and stat(mc, "sync_partial_ok") == 1, logtext(r)
        assert "restored from the RDB file" in logtext(r)
        rc.execute_command("SELECT", 1)
        assert rc.execute_command("GET", "while-down") == "c"
        rc.execute_command("SELECT", 0)
        same_data(m.port, [r.port])
        # Now the master restarts from its own snapshot: the replica
        # continues with it.
        mc.execute_command("SAVE")
        m = restart(m, threads=4)
        mc = raw(m.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), (logtext(m), logtext(r))
        assert stat(mc, "sync_partial_ok") == 1 and stat(mc, "sync_full") == 0, logtext(m)
        mc.execute_command("SET", "after-master-restart", "d")
        same_data(m.port, [r.port])
    finally:
        stop_all(r, m)


def shutdown_now(s):
    """SHUTDOWN SAVE NOW: the snapshot holds the offset the replicas have."""
    try:
        raw(s.port).execute_command("SHUTDOWN", "SAVE", "NOW")
    except redis.ConnectionError:
        pass
    assert s.proc.wait(10) == 0


def test_master_restart_shifts_its_history_and_streams_expired_keys():
    """A master restarted from its RDB takes a new replication id and keeps
    the file's as its second (replicas continue from it, and one that saw
    more of the old history than the file holds cannot run on into the new
    writes), streams a DEL for each key that expired while it was down,
    and, when those DELs are more than the backlog holds, lets no replica
    continue (Redis 7.2's psync2-master-restart)."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), logtext(r)
        mc.execute_command("SET", "kept", "1")
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        for j in range(100):
            mc.execute_command("SELECT", j % 4)
            mc.execute_command("SET", "gone:%d" % j, "v", "PX", 10)
        mc.execute_command("SELECT", 0)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        old, off = info(mc)["master_replid"], int(info(mc)["master_repl_offset"])
        time.sleep(0.05)
        shutdown_now(m)  # NOW: no GETACK after the save moves the offset on
        m = restart(m)
        mc = raw(m.port)
        i = info(mc)
        assert i["master_replid"] != old and i["master_replid2"] == old, i
        assert int(i["second_repl_offset"]) == off + 1
        assert int(i["master_repl_offset"]) > off  # the DELs
        assert wait_until(lambda: synced(rc, mc), timeout=15), (logtext(m), logtext(r))
        assert stat(mc, "sync_partial_ok") == 1 and stat(mc, "sync_full") == 0, logtext(m)
        assert info(rc)["master_replid"] == i["master_replid"]
        for db in range(4):
            mc.execute_command("SELECT", db)
            rc.execute_command("SELECT", db)
            assert rc.execute_command("DBSIZE") == mc.execute_command("DBSIZE")
        mc.execute_command("SELECT", 0)
        rc.execute_command("SELECT", 0)
        assert rc.execute_command("GET", "kept") == "1"
        # Too many: 300 DELs do not fit a 1 kB backlog; a full sync.
        mc.execute_command("CONFIG", "SET", "repl-backlog-size", 1024)
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        for j in range(300):
            mc.execute_command("SET", "many:%d" % j, "v", "PX", 10)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        time.sleep(0.05)
        shutdown_now(m)
        m = restart(m, "--repl-backlog-size", 1024)
        mc = raw(m.port)
        assert int(info(mc)["second_repl_offset"]) == -1
        assert wait_until(lambda: synced(rc, mc), timeout=15), (logtext(m), logtext(r))
        assert stat(mc, "sync_full") == 1 and stat(mc, "sync_partial_ok") == 0, logtext(m)
        assert rc.execute_command("DBSIZE") == mc.execute_command("DBSIZE") == 1
    finally:
        stop_all(r, m)


def test_disk_based_sync_and_backlog_ttl():
    """repl-diskless-sync no: the RDB goes through a file and "$<size>"
    (a HotKV and a redis-server 7.0 replica load it); repl-backlog-ttl
    frees the backlog of a master left without replicas, with a new
    history."""
    m = hotkv("--repl-diskless-sync", "no", "--repl-backlog-ttl", "1", threads=4)
    r = ref = None
    try:
        mc = raw(m.port)
        fill(m.port, 800, 41, compat=True)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        ref = Replica(m.port)
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc) and ref.synced_with(mc), timeout=15), logtext(m)
        assert "receiving RDB from master to disk" in logtext(r)
        assert "target: disk" in logtext(m)
        assert not [f for f in os.listdir(m.dir) if f.startswith("temp-repl-sync")]
        run_workers(m.port, 3, 300, 1100)
        same_data(m.port, [r.port, ref.port], field_ttls=False)
        old = info(mc)["master_replid"]
        assert info(mc)["repl_backlog_active"] == "1"
        ref.stop()
        ref = None
        assert r.stop() == 0
        r = None
        assert wait_until(lambda: info(mc)["repl_backlog_active"] == "0", timeout=8)
        assert info(mc)["master_replid"] != old
        assert "Replication backlog freed" in logtext(m)
    finally:
        stop_all(ref, r, m)


def test_failover_command():
    """FAILOVER (Redis 6.2): writes pause until the target has everything,
    then the master follows it and the target promotes itself on the
    PSYNC ... FAILOVER, continuing partially; TIMEOUT without FORCE and
    ABORT give the master role back; the errors are Redis's."""
    m = hotkv(threads=2)
    r1 = r2 = None
    try:
        mc = raw(m.port)
        with pytest.raises(redis.ResponseError, match="^FAILOVER requires connected replicas.$"):
            mc.execute_command("FAILOVER")
        with pytest.raises(redis.ResponseError, match="^No failover in progress.$"):
            mc.execute_command("FAILOVER", "ABORT")
        fill(m.port, 500, 51)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r2 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        r1c, r2c = raw(r1.port), raw(r2.port)
        assert wait_until(lambda: synced(r1c, mc) and synced(r2c, mc), timeout=15)
        with pytest.raises(redis.ResponseError, match="^FAILOVER with force option requires both a timeout"):
            mc.execute_command("FAILOVER", "TO", "127.0.0.1", r1.port, "FORCE")
        with pytest.raises(redis.ResponseError, match="^FAILOVER target HOST and PORT is not a replica.$"):
            mc.execute_command("FAILOVER", "TO", "127.0.0.1", 1)
        with pytest.raises(redis.ResponseError, match="^FAILOVER timeout must be greater than 0$"):
            mc.execute_command("FAILOVER", "TIMEOUT", 0)
        with pytest.raises(redis.ResponseError, match="syntax error"):
            mc.execute_command("FAILOVER", "NOW")
        with pytest.raises(redis.ResponseError, match="^FAILOVER is not valid when server is a replica.$"):
            r1c.execute_command("FAILOVER")
        # A target that cannot catch up (stopped): writes wait, the timeout
        # aborts, and the waiting write then runs on the master.
        r2.proc.send_signal(signal.SIGSTOP)
        try:
            mc.execute_command("SET", "before-pause", "1")
            assert wait_until(lambda: "port=%d,state=online" % r2.port in str(info(mc)), timeout=5), info(mc)
            assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r2.port, "TIMEOUT", 800) == "OK"
            assert info(mc)["master_failover_state"] == "waiting-for-sync"
            with pytest.raises(redis.ResponseError, match="^FAILOVER already in progress.$"):
                mc.execute_command("FAILOVER")
            with pytest.raises(redis.ResponseError, match="REPLICAOF not allowed while failing over"):
                mc.execute_command("REPLICAOF", "NO", "ONE")
            t0 = time.time()
            assert raw(m.port).execute_command("SET", "paused-write", "1") == "OK"
            assert time.time() - t0 > 0.4  # it waited for the abort
            assert info(mc)["master_failover_state"] == "no-failover" and info(mc)["role"] == "master"
            assert "aborted: Replica never caught up before timeout" in logtext(m)
            # ABORT while waiting.
            assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r2.port) == "OK"
            assert mc.execute_command("FAILOVER", "ABORT") == "OK"
            assert info(mc)["master_failover_state"] == "no-failover"
            assert mc.execute_command("SET", "after-abort", "1") == "OK"
        finally:
            r2.proc.send_signal(signal.SIGCONT)
        assert wait_until(lambda: synced(r1c, mc) and synced(r2c, mc), timeout=15)
        # The real one.
        full = stat(r1c, "sync_full")
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r1.port) == "OK"
        assert wait_until(lambda: info(r1c)["role"] == "master" and info(mc).get("master_link_status") == "up",
                          timeout=10), (logtext(m), logtext(r1))
        assert wait_until(lambda: info(mc)["master_failover_state"] == "no-failover", timeout=5)
        assert info(mc)["master_port"] == str(r1.port)
        assert stat(r1c, "sync_partial_ok") >= 1 and stat(r1c, "sync_full") == full, logtext(r1)
        with pytest.raises(redis.exceptions.ReadOnlyError):
            mc.execute_command("SET", "x", "1")
        r1c.execute_command("SET", "on-the-new-master", "1")
        assert wait_until(lambda: r2c.execute_command("GET", "on-the-new-master") == "1", timeout=10)
        same_data(r1.port, [m.port])
    finally:
        for s in (r2, r1, m):
            if s:
                s.proc.send_signal(signal.SIGCONT)
        stop_all(r2, r1, m)


def test_becoming_a_replica_unblocks_blocked_clients():
    a, b = hotkv(), hotkv()
    try:
        errs = []

        def blpop():
            try:
                raw(a.port).execute_command("BLPOP", "q", 0)
                errs.append("returned")
            except redis.ResponseError as e:
                errs.append(str(e))

        t = threading.Thread(target=blpop)
        t.start()
        assert wait_until(lambda: "blocked_clients:1" in raw(a.port).execute_command("INFO", "clients"), timeout=5)
        assert raw(a.port).execute_command("REPLICAOF", "127.0.0.1", str(b.port)) == "OK"
        t.join(5)
        assert errs == ["UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"]
    finally:
        stop_all(a, b)


def test_cut_during_full_sync_restarts_cleanly():
    """The link breaks while the RDB is on its way (the master drops the
    replica): the replica throws the partial payload away, dials again and
    completes a second full sync; nothing is left in its directory."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        p = mc.pipeline(transaction=False)
        for i in range(2000):
            p.execute_command("SET", "k:%d" % i, "v%d" % i)
        p.execute()
        mc.execute_command("CONFIG", "SET", "rdb-key-save-delay", "300")  # ~0.6 s of snapshot
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: info(rc).get("master_sync_in_progress") == "1", timeout=5)
        time.sleep(0.2)
        assert mc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
        assert wait_until(lambda: "I/O error trying to sync with MASTER" in logtext(r), timeout=10), logtext(r)
        mc.execute_command("CONFIG", "SET", "rdb-key-save-delay", "0")
        assert wait_until(lambda: synced(rc, mc), timeout=15), logtext(r)
        assert stat(mc, "sync_full") == 2
        same_data(m.port, [r.port])
        assert not [f for f in os.listdir(r.dir) if f.startswith("temp-")]
    finally:
        stop_all(r, m)


def test_waitaof_counts_a_hotkv_replica_with_an_aof():
    """A HotKV replica with appendonly yes sends FACK (its AOF's fsynced
    offset): WAITAOF's replica count includes it; one without an AOF
    never counts."""
    m = hotkv()
    r1 = r2 = None
    try:
        mc = raw(m.port)
        r1 = hotkv("--replicaof", "127.0.0.1", str(m.port), "--appendonly", "yes", "--appendfsync", "always")
        r2 = hotkv("--replicaof", "127.0.0.1", str(m.port))
        assert wait_until(lambda: synced(raw(r1.port), mc) and synced(raw(r2.port), mc), timeout=15)
        mc.execute_command("SET", "k", "v")
        assert mc.execute_command("WAIT", 2, 2000) == 2
        assert mc.execute_command("WAITAOF", 0, 1, 3000) == [0, 1]
        t0 = time.time()
        assert mc.execute_command("WAITAOF", 0, 2, 300) == [0, 1]  # r2 has no AOF: the timeout
        assert time.time() - t0 >= 0.25
    finally:
        stop_all(r2, r1, m)


def test_acks_count_the_commands_applied_before_getack():
    """A replica applies a run of the stream's commands as one batch and
    feeds their bytes to its history at the batch's end; a REPLCONF
    GETACK inside the run must still acknowledge every command before it,
    and with appendfsync always its FACK covers them too.  Each round
    sends 300 SETs and WAIT (then WAITAOF) in one write: the master's
    GETACK follows the SETs in the same read on the replica.  An ACK that
    left them out would hold the wait until the replica's next periodic
    ACK (up to a second)."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--appendonly", "yes", "--appendfsync", "always")
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        slow = []
        for rnd in range(20):
            for cmd, want in ((("WAIT", 1, 5000), 1), (("WAITAOF", 0, 1, 5000), [0, 1])):
                p = mc.pipeline(transaction=False)
                for i in range(300):
                    p.execute_command("SET", "ack:%d" % i, "%d-%d" % (rnd, i))
                p.execute_command(*cmd)
                t0 = time.time()
                res = p.execute()
                took = time.time() - t0
                assert res[-1] == want, (cmd, res[-1])
                if took >= 0.5:
                    slow.append((rnd, cmd[0], took))
        assert not slow, slow
        assert rc.execute_command("GET", "ack:299") == "19-299"
    finally:
        stop_all(r, m)


def test_disk_write_errors_on_a_replica():
    """A replica whose last save failed (MISCONF for its clients) never
    refuses its master's stream silently: with replica-ignore-disk-write-
    errors no it drops the link (applies nothing) until the disk works;
    with yes it applies the stream anyway."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--save", "3600 1")  # MISCONF needs a save point
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        gone = os.path.join(r.dir, "gone")
        os.mkdir(gone)
        rc.execute_command("CONFIG", "SET", "dir", gone)
        os.rmdir(gone)
        rc.execute_command("BGSAVE")
        assert wait_until(lambda: "rdb_last_bgsave_status:err" in rc.execute_command("INFO", "persistence"),
                          timeout=10)
        mc.execute_command("SET", "a", "1")
        assert wait_until(lambda: "unable to write command to disk" in logtext(r), timeout=5), logtext(r)
        assert rc.execute_command("GET", "a") is None
        rc.execute_command("CONFIG", "SET", "replica-ignore-disk-write-errors", "yes")
        assert wait_until(lambda: synced(rc, mc) and rc.execute_command("GET", "a") == "1", timeout=10), logtext(r)
        with pytest.raises(redis.ResponseError, match="^MISCONF"):
            rc.execute_command("PING")
        rc.execute_command("CONFIG", "SET", "dir", r.dir)
        assert rc.execute_command("SAVE") == "OK"
        rc.execute_command("CONFIG", "SET", "save", "")
    finally:
        stop_all(r, m)


def test_stream_waits_for_a_busy_script():
    """A script running past busy-reply-threshold on the replica: the
    master's stream is not answered BUSY and lost, it waits and runs when
    the script ends."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--busy-reply-threshold", "100")
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        done = []

        def busy():
            c = raw(r.port)
            # 1.5 s or more (TIME does not move inside a script), with
            # enough instructions between the sleeps for the busy check.
            c.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
            c.execute_command("EVAL", "for i = 1, 150 do redis.call('DEBUG', 'SLEEP', 0.01) "
                              "local x = 0 for j = 1, 100000 do x = x + j end end; return 1", 0)
            done.append(1)

        t = threading.Thread(target=busy)
        t.start()
        time.sleep(0.4)  # the script is busy now
        with pytest.raises(redis.ResponseError, match="BUSY"):
            rc.execute_command("GET", "x")
        for i in range(50):
            mc.execute_command("INCR", "n")
        t.join(10)
        assert done == [1]
        assert wait_until(lambda: synced(rc, mc) and rc.execute_command("GET", "n") == "50", timeout=10), logtext(r)
    finally:
        stop_all(r, m)


def test_replica_lazy_flush():
    """replica-lazy-flush yes: a full sync hands the old dataset to the
    lazy-free thread (INFO lazyfreed_objects) instead of freeing it inline."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        p = mc.pipeline(transaction=False)
        for i in range(3000):
            p.execute_command("RPUSH", "l:%d" % i, *range(80))  # collections: the free is worth a thread
        p.execute()
        r = hotkv("--replicaof", "127.0.0.1", str(m.port), "--replica-lazy-flush", "yes")
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        # What the link thread loaded is in used_memory (its allocations
        # are counted like a worker's).
        mem = master_info_memory(rc)
        assert int(mem["used_memory"]) - int(mem["used_memory_startup"]) > 512 * 1024, mem  # ~1 MB of lists
        before = int(master_info_memory(rc)["lazyfreed_objects"])
        # A history the master does not know: the next sync is a full one.
        rc.execute_command("REPLICAOF", "NO", "ONE")
        rc.execute_command("SET", "local", "1")
        rc.execute_command("REPLICAOF", "127.0.0.1", str(m.port))
        assert wait_until(lambda: stat(mc, "sync_full") == 2 and synced(rc, mc), timeout=15), logtext(r)
        assert wait_until(lambda: int(master_info_memory(rc)["lazyfreed_objects"]) >= before + 3000, timeout=10)
        same_data(m.port, [r.port])
    finally:
        stop_all(r, m)


def master_info_memory(c):  # INFO memory as a dict
    text = c.execute_command("INFO", "memory")
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)


def test_info_memory_splits_the_replication_buffer():
    """As Redis 7: mem_total_replication_buffers is the whole buffer, the
    part beyond repl-backlog-size that a lagging replica still needs is
    mem_clients_slaves, the rest mem_replication_backlog; all of it is
    overhead."""
    m = hotkv("--repl-backlog-size", "16384")
    r = None
    try:
        mc = raw(m.port)
        assert master_info_memory(mc)["mem_total_replication_buffers"] == "0"
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        for i in range(200):
            mc.execute_command("SET", "k%d" % i, "v" * 200)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        mi = master_info_memory(mc)
        total, backlog, slaves = (int(mi[f]) for f in ("mem_total_replication_buffers", "mem_replication_backlog",
                                                       "mem_clients_slaves"))
        assert total > 0 and total == backlog + slaves and backlog <= 16384 + 64 * 1024
        assert int(mi["used_memory_overhead"]) >= total
        # A replica that stops reading keeps what it has not read.
        os.kill(r.proc.pid, signal.SIGSTOP)
        try:
            # 30 MB: more than the sockets' buffers take in.
            p = mc.pipeline(transaction=False)
            for i in range(30000):
                p.execute_command("SET", "big%d" % i, "v" * 1000)
            p.execute()
            mi = master_info_memory(mc)
            total, backlog, slaves = (int(mi[f]) for f in ("mem_total_replication_buffers",
                                                           "mem_replication_backlog", "mem_clients_slaves"))
            assert slaves > 10 << 20 and total == backlog + slaves and backlog <= 16384 + 64 * 1024
        finally:
            os.kill(r.proc.pid, signal.SIGCONT)
    finally:
        stop_all(r, m)


def test_evictions_reach_the_replica():
    """maxmemory on the master: what it evicts reaches its replicas as
    DELs (the replica itself never evicts: replica-ignore-maxmemory), and
    both end with the same keys while 8 writers keep filling it."""
    m = hotkv("--maxmemory-policy", "allkeys-lru", threads=4)
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15)
        used = int(master_info_memory(mc)["used_memory"])
        # Room for the 1 MB backlog (counted, as in Redis) and a few MB of keys.
        mc.execute_command("CONFIG", "SET", "maxmemory", used + 8 * 1024 * 1024)
        errs = []

        def writer(i):
            c = raw(m.port)
            try:
                for j in range(1500):
                    c.execute_command("SET", "w%d:%d" % (i, j), "v" * 1000)
            except Exception as e:  # noqa: BLE001
                errs.append(repr(e))

        ts = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert not errs, errs
        assert stat(mc, "evicted_keys") > 1000
        assert stat(rc, "evicted_keys") == 0
        same_data(m.port, [r.port])
    finally:
        stop_all(r, m)


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="no redis-cli")
def test_sync_for_redis_cli_rdb_and_replica():
    """SYNC (the protocol before PSYNC) and REPLCONF rdb-only: redis-cli
    --rdb takes a backup RDB of a running HotKV, redis-cli --replica shows
    its stream."""
    m = hotkv()
    try:
        mc = raw(m.port)
        mc.execute_command("SET", "a", "1")
        mc.execute_command("RPUSH", "l", "x", "y")
        out = os.path.join(m.dir, "backup.rdb")
        p = subprocess.run(["redis-cli", "-p", str(m.port), "--rdb", out], capture_output=True, text=True, timeout=20)
        assert p.returncode == 0 and "Transfer finished with success" in p.stdout + p.stderr, p.stdout + p.stderr
        from helpers import _conftest
        chk = subprocess.run([os.path.join(os.path.dirname(_conftest.BIN), "hotkv-check-rdb"), out],
                             capture_output=True, text=True, timeout=20)
        assert chk.returncode == 0 and "2 keys read" in chk.stdout + chk.stderr, chk.stdout + chk.stderr
        assert wait_until(lambda: info(mc)["connected_slaves"] == "0", timeout=5)  # rdb-only: then it is gone
        rep = subprocess.Popen(["stdbuf", "-oL", "redis-cli", "-p", str(m.port), "--replica"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        try:
            assert wait_until(lambda: info(mc)["connected_slaves"] == "1" and "state=online" in info(mc).get("slave0", ""),
                              timeout=10)
            mc.execute_command("SET", "b", "2")
            got = []
            reader = threading.Thread(target=lambda: got.append(rep.stdout.read()), daemon=True)
            reader.start()
            time.sleep(1.5)  # redis-cli prints the stream as it comes
        finally:
            rep.terminate()
            rep.wait(10)
        reader.join(10)
        text = "".join(got)
        assert '"set","b","2"' in text.lower(), text
    finally:
        assert m.stop() == 0


def test_bind_source_addr():
    """bind-source-addr: the link to the master leaves from that address,
    which the master sees as the replica's (no replica-announce-ip)."""
    m = r = None
    try:
        m = hotkv("--protected-mode", "no")  # 127.0.0.2 is not 127.0.0.1 to protected mode
        r = hotkv("--bind-source-addr", "127.0.0.2", "--replicaof", "127.0.0.1", m.port)
        mc = raw(m.port)
        assert wait_until(lambda: synced(raw(r.port), mc), timeout=15), logtext(r)
        assert info(mc)["slave0"].startswith("ip=127.0.0.2,port=%d," % r.port)
        assert raw(r.port).config_get("bind-source-addr") == ["bind-source-addr", "127.0.0.2"]
    finally:
        stop_all(r, m)


def test_functions_only_rdb_for_redis_cli():
    """REPLCONF rdb-filter-only: redis-cli --functions-rdb gets an RDB with
    the function libraries and no key, which a fresh server loads; the
    filter's errors are Redis's."""
    m = hotkv()
    fresh = None
    try:
        mc = raw(m.port)
        for i in range(50):
            mc.execute_command("SET", "k%d" % i, i)
        load_function(mc)
        out = os.path.join(m.dir, "functions.rdb")
        p = subprocess.run(["redis-cli", "-p", str(m.port), "--functions-rdb", out], capture_output=True, text=True,
                           timeout=20)
        assert p.returncode == 0 and "Transfer finished with success" in p.stdout + p.stderr, p.stdout + p.stderr
        fresh = hotkv("--dir", os.path.dirname(out), "--dbfilename", os.path.basename(out))
        fc = raw(fresh.port)
        assert fc.execute_command("DBSIZE") == 0
        assert fc.execute_command("FCALL", "pushit", 1, "l", "x") == 1
        # The filters Redis knows: "functions" alone, or none ("").
        with pytest.raises(redis.ResponseError, match="^Unsupported rdb-filter-only option: keys$"):
            mc.execute_command("REPLCONF", "rdb-filter-only", "functions keys")
        c = raw(m.port)
        assert c.execute_command("REPLCONF", "rdb-filter-only", "") == "OK"
        with pytest.raises(redis.ResponseError, match="^Filtered replica requires EOF capability$"):
            c.execute_command("PSYNC", "?", "-1")
    finally:
        stop_all(fresh, m)


def test_swapdb_async_loading_serves_the_old_dataset():
    """repl-diskless-load swapdb: the master's RDB is loaded beside the
    replica's old dataset, which keeps answering reads meanwhile (INFO
    async_loading:1; SAVE, a no-async-loading command, gets -LOADING), then
    the new dataset and the master's function libraries are swapped in."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        p = mc.pipeline(transaction=False)
        for i in range(20000):
            p.execute_command("SET", "new:%d" % i, "v%d" % i)
        p.execute_command("HSET", "h", "f", "v")
        p.execute_command("HEXPIRE", "h", "1000", "FIELDS", "1", "f")
        p.execute_command("SET", "ttl", "x", "EX", "1000")
        p.execute()
        mc.execute_command("FUNCTION", "LOAD",
                           "#!lua name=swaplib\nredis.register_function{function_name='sw', "
                           "callback=function() return 7 end, flags={'no-writes'}}")
        r = hotkv("--repl-diskless-load", "swapdb")
        rc = raw(r.port)
        rc.execute_command("SET", "old", "kept")
        rc.execute_command("SET", "new:5", "stale")
        rc.execute_command("CONFIG", "SET", "key-load-delay", "50")  # ~1 s of loading
        watcher = redis.Redis(host="127.0.0.1", port=r.port, decode_responses=True).pipeline()
        watcher.watch("old")  # the swap touches every key, as FLUSHALL does
        rc.execute_command("REPLICAOF", "127.0.0.1", str(m.port))
        seen = []

        def async_loading():
            text = rc.execute_command("INFO", "persistence")
            return dict(l.split(":", 1) for l in text.splitlines() if ":" in l).get("async_loading")

        def loading():
            # Reads between two looks that both say async_loading:1 ran on
            # the old dataset (the flag is cleared before the swap's thaw).
            if async_loading() != "1":
                return bool(seen)
            sample = [rc.execute_command("GET", "old"), rc.execute_command("GET", "new:5"),
                      rc.execute_command("DBSIZE")]
            try:
                rc.execute_command("SAVE")
                sample.append("saved")
            except redis.exceptions.BusyLoadingError:  # redis-py's -LOADING
                sample.append("LOADING")
            if async_loading() == "1":
                seen.append(tuple(sample))
            return False

        assert wait_until(loading, timeout=30, interval=0.05), unsynced(rc, mc, r, m)
        assert all(s == ("kept", "stale", 2, "LOADING") for s in seen), seen
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        rc.execute_command("CONFIG", "SET", "key-load-delay", "0")
        assert async_loading() == "0"
        assert rc.execute_command("GET", "old") is None
        assert rc.execute_command("GET", "new:5") == "v5"
        assert rc.execute_command("DBSIZE") == mc.execute_command("DBSIZE") == 20002
        assert 0 < rc.execute_command("TTL", "ttl") <= 1000
        assert rc.execute_command("HTTL", "h", "FIELDS", "1", "f")[0] > 0
        assert rc.execute_command("FCALL_RO", "sw", "0") == 7
        assert "async: the old dataset serves meanwhile" in logtext(r)
        watcher.multi()
        watcher.get("old")
        with pytest.raises(redis.WatchError):
            watcher.execute()
        watcher.reset()
        # The stream goes on over the swapped-in dataset.
        mc.execute_command("SET", "after", "1")
        mc.execute_command("DEL", "new:0")
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        assert rc.execute_command("GET", "after") == "1" and rc.execute_command("EXISTS", "new:0") == 0
        # Expiry bookkeeping came with the swap: the replica's sweeper
        # finds nothing wrong, and DEBUG DIGEST matches the master's.
        assert rc.execute_command("DEBUG", "DIGEST") == mc.execute_command("DEBUG", "DIGEST")
    finally:
        stop_all(r, m)


def _messages(sub, n, timeout=10):
    """The next n pub/sub messages' (channel, data)."""
    got, end = [], time.time() + timeout
    while len(got) < n and time.time() < end:
        m = sub.get_message(timeout=0.2)
        if m and m["type"] == "message":
            got.append((m["channel"], m["data"]))
    return got


@pytest.mark.parametrize("master_kind", ["hotkv", "redis"])
def test_publish_reaches_the_replicas_subscribers(master_kind):
    """PUBLISH on the master reaches the subscribers of its replicas, alone
    or inside MULTI/EXEC with a write, as Redis propagates it (to the
    replicas only: the master's AOF has the SET, not the PUBLISH)."""
    m = hotkv("--appendonly", "yes") if master_kind == "hotkv" else RedisMaster()
    r = None
    try:
        mc = raw(m.port)
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        sub = redis.Redis(host="127.0.0.1", port=r.port, decode_responses=True).pubsub()
        sub.subscribe("news")
        assert wait_until(lambda: sub.get_message(timeout=0.1) is not None, timeout=5)  # the confirmation
        assert mc.execute_command("PUBLISH", "news", "one") == 0  # nobody on the master
        p = mc.pipeline(transaction=True)
        p.execute_command("SET", "k", "v")
        p.execute_command("PUBLISH", "news", "two")
        p.execute()
        assert _messages(sub, 2) == [("news", "one"), ("news", "two")]
        assert wait_until(lambda: rc.execute_command("GET", "k") == "v", timeout=5)
        sub.close()
        if master_kind == "hotkv":
            aof = ""
            d = os.path.join(m.dir, "appendonlydir")
            for name in sorted(os.listdir(d)):
                if name.endswith(".aof"):
                    with open(os.path.join(d, name), "rb") as f:
                        aof += f.read().decode("latin-1")
            assert "\r\nSET\r\n" in aof.upper() and "PUBLISH" not in aof.upper(), aof
    finally:
        stop_all(r, m)


def test_a_replica_attached_after_replicaof_no_one_is_kept():
    """REPLICAOF (to a master that is not there) and back to NO ONE with no
    replica attached: the next replica to attach is served, not cut at
    once by a drop left pending from the role change."""
    m = hotkv()
    r = None
    try:
        mc = raw(m.port)
        assert mc.execute_command("REPLICAOF", "127.0.0.1", str(free_port())) == "OK"
        assert mc.execute_command("REPLICAOF", "NO", "ONE") == "OK"
        mc.execute_command("SET", "k", "v")
        r = hotkv("--replicaof", "127.0.0.1", str(m.port))
        rc = raw(r.port)
        assert wait_until(lambda: synced(rc, mc), timeout=15), unsynced(rc, mc, r, m)
        time.sleep(0.5)  # the replication thread's housekeeping has run
        assert "killed" not in logtext(m), logtext(m)
        assert synced(rc, mc) and rc.execute_command("GET", "k") == "v"
        assert int(info(mc)["connected_slaves"]) == 1
    finally:
        stop_all(r, m)
