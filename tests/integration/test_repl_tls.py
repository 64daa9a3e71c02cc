"""Replication over TLS (tls-replication): a replica dials its master's TLS
port and the whole link, handshake, full sync and stream, is TLS.

Both ways with Debian's redis-server 7.0 (built with TLS): HotKV master to
a HotKV replica and to a redis-server replica, HotKV replica of a
redis-server master; a partial resynchronization over TLS after the link is
cut; a master whose certificate the replica's CA does not trust is refused
and the link stays down.  A TLS replica's full sync is disk-based on a
HotKV master (the fork child cannot write through the parent's TLS
connection), whatever repl-diskless-sync says.

Certificates come from test_tls's fixture (the openssl CLI, made at test
time)."""
import os
import random
import shutil
import subprocess
import tempfile

import pytest
import redis

from helpers import IS_REDIS, Server, free_port, wait_until
from test_replica import fill, info, logtext, raw, same_data, stop_all, synced
from test_tls import certs, server_args  # noqa: F401 (certs is a fixture)

pytestmark = [pytest.mark.skipif(IS_REDIS, reason="HotKV as master or replica"),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server"),
              pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI")]


def tls_args(certs, ca="ca"):
    """A server that replicates over TLS and has a TLS port of its own."""
    return ["--tls-port", free_port(), "--tls-replication", "yes"] + server_args(certs, ca=ca)


def tls_port(srv):
    c = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True, socket_timeout=10)
    return int(c.config_get("tls-port")["tls-port"])


def plain(port):
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10,
                       encoding_errors="surrogateescape")


class RedisTls:
    """Debian's redis-server with a TLS port and tls-replication yes."""

    def __init__(self, certs, *extra):
        self.dir = tempfile.mkdtemp(prefix="hotkv-rtls-")
        self.port = free_port()
        self.tls = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--logfile", os.path.join(self.dir, "server.log"), "--repl-diskless-sync-delay",
             "0", "--tls-port", str(self.tls), "--tls-replication", "yes"]
            + [str(a) for a in server_args(certs)] + [str(a) for a in extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_until(self._up, timeout=10), logtext(self)

    def _up(self):
        try:
            return plain(self.port).ping()
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
        return 0


def test_hotkv_to_hotkv_and_redis_over_tls(certs):
    """A HotKV master feeds a HotKV replica and a redis-server replica over
    TLS: full sync (disk-based, though diskless is configured), the stream
    of a mixed workload, then the HotKV replica's link is killed and it
    continues with a partial resync over TLS."""
    m = r = ref = None
    try:
        m = Server("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", *tls_args(certs))
        mport = tls_port(m)
        fill(m.port, 1500, seed=1, compat=True)
        r = Server("--replicaof", "127.0.0.1", mport, *tls_args(certs))
        ref = RedisTls(certs, "--replicaof", "127.0.0.1", mport)
        mc = raw(m.port)
        assert wait_until(lambda: synced(raw(r.port), mc), timeout=20), logtext(r) + logtext(m)
        assert wait_until(lambda: synced(raw(ref.port), mc), timeout=20), logtext(ref) + logtext(m)
        assert "target: disk" in logtext(m)
        assert info(mc)["connected_slaves"] == "2"
        fill(m.port, 1500, seed=2, compat=True)
        assert wait_until(lambda: synced(raw(r.port), mc) and synced(raw(ref.port), mc), timeout=20)
        assert len(same_data(m.port, [r.port, ref.port], field_ttls=False)) > 40
        # The link is cut: the replica comes back with +CONTINUE over TLS.
        before = int(info(mc).get("sync_partial_ok", 0) or 0)
        rc = raw(r.port)
        assert rc.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        mc.set("after-cut", "yes")
        assert wait_until(lambda: synced(raw(r.port), mc) and rc.get("after-cut") == "yes", timeout=20), logtext(r)
        stats = dict(l.split(":", 1) for l in mc.execute_command("INFO", "stats").split("\r\n") if ":" in l)
        assert int(stats["sync_partial_ok"]) >= before + 1
        assert int(stats["sync_full"]) == 2
        # A big value crosses many TLS records in the stream.
        big = "".join(random.Random(3).choice("abcdef") for _ in range(300000))
        mc.set("big", big)
        assert wait_until(lambda: synced(raw(r.port), mc), timeout=20)
        assert rc.get("big") == big
        assert plain(ref.port).get("big") == big
    finally:
        stop_all(r, ref, m)


def test_hotkv_replica_of_redis_master_over_tls(certs):
    """The migration path over TLS: HotKV follows a redis-server 7.0 master
    through its TLS port (diskless full sync, then the stream), READONLY
    as any replica."""
    m = r = ref = None
    try:
        m = RedisTls(certs, "--repl-diskless-sync", "yes")
        fill(m.port, 1500, seed=4, compat=True)
        r = Server("--replicaof", "127.0.0.1", m.tls, *tls_args(certs))
        # What a redis-server replica of it holds is the reference (Redis
        # 7.0 does not stream some consumer-group metadata).
        ref = RedisTls(certs, "--replicaof", "127.0.0.1", m.tls)
        mc = raw(m.port)
        assert wait_until(lambda: synced(raw(r.port), mc), timeout=20), logtext(r) + logtext(m)
        fill(m.port, 1500, seed=5, compat=True)
        assert wait_until(lambda: synced(raw(r.port), mc), timeout=20), logtext(r)
        assert len(same_data(m.port, [r.port], field_ttls=False, ref=ref.port)) > 40
        with pytest.raises(redis.ResponseError, match="read only replica"):
            plain(r.port).set("x", 1)
    finally:
        stop_all(r, ref, m)


def test_untrusted_master_certificate_is_refused(certs):
    """The replica verifies its master's certificate against its own CA: a
    master whose certificate another CA signed is refused, and the link
    stays down; plain TCP to a TLS port fails too."""
    m = r = None
    try:
        m = Server(*tls_args(certs))
        r = Server("--replicaof", "127.0.0.1", tls_port(m), *tls_args(certs, ca="other-ca"))
        assert wait_until(lambda: "TLS handshake with MASTER failed" in logtext(r), timeout=10), logtext(r)
        assert info(raw(r.port))["master_link_status"] == "down"
        assert info(raw(m.port))["connected_slaves"] == "0"
        r.stop()
        # A replica without tls-replication dialling the TLS port.
        r = Server("--replicaof", "127.0.0.1", tls_port(m))
        assert wait_until(lambda: "Error" in logtext(r) or "error" in logtext(r), timeout=10), logtext(r)
        assert info(raw(r.port))["master_link_status"] == "down"
    finally:
        stop_all(r, m)
