"""hotkv-benchmark --cluster (issue #20) against a 3-master Redis Cluster.

The cluster is HotKV's (the binary under test) by default, Debian's
redis-server 7.0 with HOTKV_SERVER=redis; $HOTKV_CLUSTER_SERVER names
another server binary that takes the same options (--port,
--cluster-enabled yes, --cluster-config-file, --dir, --save, --appendonly).
A load-generator test: it runs on the release build only.  start_cluster() is the reusable part:
it starts n nodes on free ports, joins them with `redis-cli --cluster
create`, waits for cluster_state:ok everywhere, and returns an object whose
stop() kills every node it started (by PID).

What is checked: keys land on their owners (DBSIZE of every master > 0 and
the sum is the preloaded key space), no errors, per-node lines in the text
report and per-node figures in --json; -ASK is followed (ASKING, then the
request) while a slot is migrating; -MOVED is followed and the map updated
when a slot changes owner during an open-loop run, and while `redis-cli
--cluster reshard` moves 100 slots under load; templates that cannot be
routed are refused at startup.

The benchmark binary is found as in test_benchmark_tool.py:
$HOTKV_BENCHMARK, else hotkv-benchmark next to $HOTKV_BIN, else
build/hotkv-benchmark.
"""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from helpers import IS_REDIS, Resp, _conftest, release_only, wait_until
from test_benchmark_tool import _bench_path



BENCH = _bench_path()  # test_benchmark_tool's: $HOTKV_BENCHMARK, beside $HOTKV_BIN, build/
CLUSTER_SERVER = os.environ.get("HOTKV_CLUSTER_SERVER") or (shutil.which("redis-server") if IS_REDIS
                                                            else _conftest.BIN)
REDIS_CLI = shutil.which("redis-cli")

pytestmark = [
    release_only,
    pytest.mark.skipif(not os.path.exists(BENCH), reason="hotkv-benchmark not built (make all)"),
    pytest.mark.skipif(not CLUSTER_SERVER or not REDIS_CLI,
                       reason="needs redis-server (or $HOTKV_CLUSTER_SERVER) and redis-cli"),
]


# ---- a cluster of n masters ----

def _free_cluster_port():
    """A free port P whose cluster bus port P+10000 is free too."""
    return _conftest.free_port(bus=True)


def call(port, *args):
    c = Resp(port)
    try:
        return c.call(*args)
    finally:
        c.close()


class Cluster:
    def __init__(self):
        self.ports = []
        self.procs = []
        self.dir = None
        self.ids = {}

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        self.procs = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def node_id(self, port):
        if port not in self.ids:
            self.ids[port] = call(port, "CLUSTER", "MYID").decode()
        return self.ids[port]

    def owner(self, slot):
        """The port of the master serving slot (CLUSTER SLOTS of the first node)."""
        for rng in call(self.ports[0], "CLUSTER", "SLOTS"):
            if rng[0] <= slot <= rng[1]:
                return rng[2][1]
        raise AssertionError("slot %d not served" % slot)

    def wait_ok(self, timeout=20):
        def ok():
            for p in self.ports:
                info = call(p, "CLUSTER", "INFO")
                if b"cluster_state:ok" not in info:
                    return False
            return True
        assert wait_until(ok, timeout=timeout, interval=0.1), "cluster_state never ok"

    def wait_agree(self, slot, port, timeout=10):
        """Every node says slot is served by port."""
        def agree():
            for p in self.ports:
                for rng in call(p, "CLUSTER", "SLOTS"):
                    if rng[0] <= slot <= rng[1] and rng[2][1] != port:
                        return False
            return True
        assert wait_until(agree, timeout=timeout, interval=0.05), "slot %d not moved" % slot

    def move_slot(self, slot, src, dst):
        """Move an empty slot from master src to master dst, the documented
        way (IMPORTING, MIGRATING, then NODE everywhere, target first)."""
        sid, did = self.node_id(src), self.node_id(dst)
        assert call(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", sid) == "OK"
        assert call(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", did) == "OK"
        assert call(src, "CLUSTER", "COUNTKEYSINSLOT", slot) == 0
        for p in [dst, src] + [q for q in self.ports if q not in (src, dst)]:
            assert call(p, "CLUSTER", "SETSLOT", slot, "NODE", did) == "OK"
        self.wait_agree(slot, dst)

    def flushall(self):
        for p in self.ports:
            assert call(p, "FLUSHALL") == "OK"


def start_cluster(binary, n=3, extra_args=(), timeout=30):
    """Start n cluster-enabled masters of `binary` on free ports, join them
    with redis-cli --cluster create (slots split evenly) and wait until every
    node reports cluster_state:ok.  Returns a Cluster; call stop() (it kills
    the nodes by PID and removes their directory), also on failure."""
    cl = Cluster()
    cl.dir = tempfile.mkdtemp(prefix="hotkv-bench-cluster-")
    try:
        for _ in range(n):
            port = _free_cluster_port()
            log = open(os.path.join(cl.dir, "node-%d.log" % port), "w")
            args = [binary, "--port", str(port), "--bind", "127.0.0.1",
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes-%d.conf" % port,
                    "--dir", cl.dir, "--save", "", "--appendonly", "no"] + list(extra_args)
            cl.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
            log.close()
            cl.ports.append(port)
        for port in cl.ports:
            def up(port=port):
                try:
                    return call(port, "PING") == "PONG"
                except OSError:
                    return False
            assert wait_until(up, timeout=10, interval=0.05), "node %d did not start" % port
        p = subprocess.run([REDIS_CLI, "--cluster", "create"] +
                           ["127.0.0.1:%d" % port for port in cl.ports] + ["--cluster-yes"],
                           capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, (p.stdout, p.stderr)
        cl.wait_ok(timeout)
        return cl
    except BaseException:
        cl.stop()
        raise


@pytest.fixture(scope="module")
def cluster():
    cl = start_cluster(CLUSTER_SERVER, 3)
    try:
        yield cl
    finally:
        cl.stop()


# ---- running the benchmark ----

def bench(port, *args, timeout=50, check=True):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="hotkv-bench-cluster-")
    os.close(fd)
    os.unlink(path)
    cmd = [BENCH, "-p", str(port), "--cluster", "--no-progress", "--json", path] + \
        [str(a) for a in args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check:
            assert p.returncode == 0, (cmd, p.returncode, p.stdout, p.stderr)
        data = None
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
        return data, p
    finally:
        if os.path.exists(path):
            os.unlink(path)


def node_names(cl):
    return ["127.0.0.1:%d" % p for p in cl.ports]


def check_nodes(cl, step, stdout):
    """Every master has a per-node entry with requests and latency, the
    nodes add up to the total, and the text report has a line per node."""
    nodes = step["cluster"]["nodes"]
    assert sorted(n["node"] for n in nodes) == sorted(node_names(cl))
    assert sum(n["requests"] for n in nodes) == step["requests"]
    for n in nodes:
        assert n["requests"] > 0, n
        assert n["errors"] == 0, n
        assert 0 < n["p50_ms"] <= n["p99_ms"] <= n["max_ms"]
        assert n["achieved_rps"] > 0
    assert "per cluster node" in stdout
    for name in node_names(cl):
        assert any(line.split()[2:3] == [name] for line in stdout.splitlines()), name
    assert any(line.split()[2:3] == ["total"] for line in stdout.splitlines())


# ---- tests ----

def test_keyslot_routing_set_get_preload(cluster):
    cluster.flushall()
    keys = 300
    # Seed at the second node: any node can tell the map.
    data, p = bench(cluster.ports[1], "--workload", "set", "--preload", "--key-space", keys,
                    "--requests", 3000, "--clients", 4, "--pipeline", 4)
    assert data["config"]["cluster"] is True
    assert "preload: %d keys" % keys in p.stdout, p.stdout
    sizes = [call(port, "DBSIZE") for port in cluster.ports]
    assert all(s > 0 for s in sizes), sizes
    assert sum(sizes) == keys, sizes
    step = data["steps"][0]
    assert step["errors"] == 0, step
    assert step["requests"] == 3000
    assert step["cluster"]["moved"] == 0 and step["cluster"]["ask"] == 0
    check_nodes(cluster, step, p.stdout)
    # Every key at its owner: no MOVED while reading them back either.
    data, p = bench(cluster.ports[2], "--workload", "get", "--key-space", keys,
                    "--requests", 3000, "--clients", 3, "--pipeline", 8, "--threads", 2)
    step = data["steps"][0]
    assert step["errors"] == 0, step
    assert step["cluster"]["moved"] == 0
    check_nodes(cluster, step, p.stdout)
    # The server agrees with the tool's slot function (CLUSTER KEYSLOT).
    assert call(cluster.ports[0], "CLUSTER", "KEYSLOT", "123456789") == 12739
    for i in (0, 7, 299):
        k = "key:%012d" % i
        owner = cluster.owner(call(cluster.ports[0], "CLUSTER", "KEYSLOT", k))
        assert call(owner, "EXISTS", k) == 1, k


def test_open_loop_ratio_threads(cluster):
    """Open loop, a SET:GET mix, two threads, RESP3 (HELLO 3 on every node)."""
    data, p = bench(cluster.ports[0], "--ratio", "1:3", "--key-space", 1000, "--rate", 3000,
                    "--test-time", 2, "--clients", 6, "--threads", 2, "--resp", 3)
    step = data["steps"][0]
    assert step["mode"] == "open"
    assert step["errors"] == 0, step
    assert step["held"] is True, step
    check_nodes(cluster, step, p.stdout)


def test_ask_is_followed(cluster):
    """A migrating slot: its owner answers -ASK for keys it does not hold;
    the tool sends ASKING then the request to the importing node, once per
    request, without changing its map."""
    tag = "bmask"
    slot = call(cluster.ports[0], "CLUSTER", "KEYSLOT", "{%s}" % tag)
    src = cluster.owner(slot)
    dst = next(p for p in cluster.ports if p != src)
    assert call(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(src)) == "OK"
    assert call(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(dst)) == "OK"
    try:
        data, p = bench(src, "--command", "GET {%s}:__rand_int__" % tag, "--requests", 500,
                        "--clients", 2, "--pipeline", 4)
    finally:
        call(src, "CLUSTER", "SETSLOT", slot, "STABLE")
        call(dst, "CLUSTER", "SETSLOT", slot, "STABLE")
    step = data["steps"][0]
    assert step["errors"] == 0, step
    assert step["requests"] == 500
    assert step["cluster"]["ask"] == 500, step["cluster"]
    assert step["cluster"]["moved"] == 0
    by_node = {n["node"]: n for n in step["cluster"]["nodes"]}
    assert by_node["127.0.0.1:%d" % dst]["requests"] == 500
    assert by_node["127.0.0.1:%d" % src]["ask"] == 500
    assert "ASK" in p.stdout


def test_moved_updates_the_map(cluster):
    """The slot of every key changes owner after the tool read the map: the
    old owner answers -MOVED, the tool updates its map (a few MOVED, not one
    per request) and the requests are served by the new owner, no errors."""
    tag = "bmmoved"
    slot = call(cluster.ports[0], "CLUSTER", "KEYSLOT", "{%s}" % tag)
    src = cluster.owner(slot)
    dst = next(p for p in cluster.ports if p != src)
    out = {}

    def run():
        out["res"] = bench(src, "--command", "GET {%s}:__rand_int__" % tag, "--rate", 1000,
                           "--test-time", 3, "--clients", 4, check=False)

    t = threading.Thread(target=run)
    t.start()
    try:
        time.sleep(1.0)
        cluster.move_slot(slot, src, dst)
    finally:
        t.join(55)
    data, p = out["res"]
    assert p.returncode == 0, (p.stdout, p.stderr)
    step = data["steps"][0]
    assert step["errors"] == 0, step
    moved = step["cluster"]["moved"]
    assert 1 <= moved <= 100, step["cluster"]  # the map was updated, not asked every time
    by_node = {n["node"]: n for n in step["cluster"]["nodes"]}
    assert by_node["127.0.0.1:%d" % src]["requests"] > 0   # before the move
    assert by_node["127.0.0.1:%d" % dst]["requests"] > 0   # after it
    assert by_node["127.0.0.1:%d" % src]["moved"] == moved
    assert "MOVED" in p.stdout


def test_reshard_under_load(cluster):
    """redis-cli --cluster reshard moves 100 slots (with their keys) while an
    open-loop SET/GET run is going: redirects are followed, none is an error."""
    cluster.flushall()
    keys = 2000
    src, dst = cluster.ports[0], cluster.ports[1]
    out = {}

    def run():
        out["res"] = bench(src, "--ratio", "1:1", "--preload", "--key-space", keys,
                           "--rate", 3000, "--test-time", 5, "--clients", 4, check=False)

    t = threading.Thread(target=run)
    t.start()
    try:
        time.sleep(1.5)
        r = subprocess.run([REDIS_CLI, "--cluster", "reshard", "127.0.0.1:%d" % src,
                            "--cluster-from", cluster.node_id(src),
                            "--cluster-to", cluster.node_id(dst),
                            "--cluster-slots", "100", "--cluster-yes"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, (r.stdout, r.stderr)
    finally:
        t.join(55)
    data, p = out["res"]
    assert p.returncode == 0, (p.stdout, p.stderr)
    step = data["steps"][0]
    assert step["errors"] == 0, (step, p.stdout)
    c = step["cluster"]
    assert c["moved"] + c["ask"] > 0, c
    assert c["moved"] > 0, c
    assert sum(call(port, "DBSIZE") for port in cluster.ports) == keys


@pytest.mark.parametrize("args,msg", [
    (["--workload", "mget"], "MGET"),
    (["--workload", "mset"], "MSET"),
    (["--workload", "ping"], "has no key"),
    (["--command", "RENAME a:__rand_int__ b:__rand_int__"], "RENAME"),
    (["--preload-command", "MSET a:__rand_int__ x b:__rand_int__ y"], "MSET"),
    (["--pubsub"], "--pubsub"),
    (["--db", "1"], "database 0"),
])
def test_unroutable_is_refused(cluster, args, msg):
    _, p = bench(cluster.ports[0], *args, "--requests", 10, check=False, timeout=20)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert msg in p.stderr, p.stderr


def test_not_a_cluster(cluster):
    """A seed that is not in cluster mode: a clear error, exit 1."""
    port = _free_cluster_port()
    d = tempfile.mkdtemp(prefix="hotkv-bench-plain-")
    proc = subprocess.Popen([CLUSTER_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                             "--dir", d, "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: _pings(port), timeout=10, interval=0.05)
        _, p = bench(port, "--requests", 10, check=False, timeout=20)
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert "CLUSTER SLOTS" in p.stderr, p.stderr
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        shutil.rmtree(d, ignore_errors=True)


def _pings(port):
    try:
        return call(port, "PING") == "PONG"
    except OSError:
        return False
