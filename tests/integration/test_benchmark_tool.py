"""hotkv-benchmark (src/tools/benchmark) end to end.

- The stall test: stall_server.py blocks its event loop 100 ms every second.
  hotkv-benchmark's open loop (latency from each request's intended send
  time) must show it in p99/p99.9, while redis-benchmark's closed loop
  reports a p99 that does not (coordinated omission).
- --json carries every field the issue fixes, in closed loop, open loop and
  sweeps; errors, lost requests and disconnects are counted, never dropped;
  pub/sub latency has the right clock units (a 20 ms delivery delay measures
  ~20 ms); AUTH/HELLO 3/SELECT/--preload work; the named workloads run.

The binary is $HOTKV_BENCHMARK, else hotkv-benchmark next to $HOTKV_BIN
(so the sanitizer tiers test their own build), else build/hotkv-benchmark.
"""
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _bench_path():
    if os.environ.get("HOTKV_BENCHMARK"):
        return os.environ["HOTKV_BENCHMARK"]
    if os.environ.get("HOTKV_BIN"):
        cand = os.path.join(os.path.dirname(os.path.abspath(os.environ["HOTKV_BIN"])),
                            "hotkv-benchmark")
        if os.path.exists(cand):
            return cand
    return os.path.join(ROOT, "build", "hotkv-benchmark")


BENCH = _bench_path()
REDIS_BENCHMARK = shutil.which("redis-benchmark")
REDIS_SERVER = shutil.which("redis-server")

pytestmark = pytest.mark.skipif(not os.path.exists(BENCH),
                                reason="hotkv-benchmark not built (make all)")


class StallServer:
    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "stall_server.py"), "--port", "0"] +
            [str(a) for a in args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("READY "), line
        self.port = int(line.split()[1])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def stall():
    s = StallServer("--stall-ms", 100, "--period-ms", 1000)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def quiet_stub():
    """The stub without stalls; pub/sub deliveries delayed by 20 ms."""
    s = StallServer("--stall-ms", 0, "--pubsub-delay-ms", 20)
    yield s
    s.stop()


def bench(port, *args, timeout=60, check=True):
    """Run hotkv-benchmark; returns (json dict or None, CompletedProcess)."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix="hotkv-bench-")
    os.close(fd)
    os.unlink(path)
    cmd = [BENCH, "-p", str(port), "--json", path] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, (cmd, p.returncode, p.stdout, p.stderr)
    data = None
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
        os.unlink(path)
    return data, p


STEP_FIELDS = ["requested_rps", "achieved_rps", "held", "requests", "errors", "p50_ms",
               "p90_ms", "p99_ms", "p999_ms", "max_ms", "generator_cpu_pct"]


def check_step(step):
    for k in STEP_FIELDS:
        assert k in step, k
    assert step["p50_ms"] <= step["p90_ms"] <= step["p99_ms"] <= step["p999_ms"] \
        <= step["max_ms"]
    assert step["generator_cpu_pct"] >= 0
    assert isinstance(step["generator_saturated"], bool)


# ---- the stall test ----

@pytest.mark.skipif(any(d in os.environ.get("HOTKV_BIN", "") for d in ("build-address", "build-thread")),
                    reason="statistical (stall detection): release build only")
def test_open_loop_sees_stalls_redis_benchmark_does_not(stall):
    data, p = bench(stall.port, "--workload", "get", "--rate", 2000, "--clients", 4,
                    "--test-time", 3)
    s = data["steps"][0]
    check_step(s)
    assert s["errors"] == 0
    # (Not "held": a stall in the last 100 ms of the window leaves ~3% of
    # the replies after it.)
    assert s["achieved_rps"] >= 0.9 * 2000, s
    # Two or three 100 ms stalls in 3 s: ~5-10% of the requests wait up to
    # 100 ms from their intended send time.
    assert s["p99_ms"] >= 50, s
    assert s["p999_ms"] >= 80, s
    assert 90 <= s["max_ms"] < 1000, s
    assert s["p50_ms"] < 20, s

    if REDIS_BENCHMARK is None:
        pytest.skip("redis-benchmark not installed: closed-loop half not run")
    # Closed loop, 4 connections: only the few requests in flight at each
    # stall see it, so its p99 stays small although its max shows a stall.
    # Size the run to last ~3 s (two stalls or more) from the stub's
    # closed-loop speed, measured with our own closed loop.
    cl, _ = bench(stall.port, "--workload", "get", "--clients", 4, "--test-time", 0.5)
    n = int(min(1000000, max(20000, cl["steps"][0]["achieved_rps"] * 3)))
    t0 = time.time()
    rb = subprocess.run([REDIS_BENCHMARK, "-p", str(stall.port), "-t", "get", "-c", "4",
                         "-n", str(n), "--csv"], capture_output=True, text=True, timeout=60)
    elapsed = time.time() - t0
    assert rb.returncode == 0, rb.stderr
    rows = list(csv.reader(io.StringIO(rb.stdout)))
    row = dict(zip(rows[0], rows[1]))
    assert row["test"] == "GET", rb.stdout
    if elapsed < 2.1:
        pytest.skip("redis-benchmark ran only %.1f s: not sure to span a stall" % elapsed)
    assert float(row["max_latency_ms"]) >= 50, row  # it did meet the stalls...
    assert float(row["p99_latency_ms"]) < 20, row   # ...but its p99 hides them
    assert float(row["p99_latency_ms"]) * 4 < s["p99_ms"], (row, s)


# ---- JSON, modes, sweeps ----

def test_json_closed_loop_fields(server):
    data, p = bench(server.port, "--workload", "set", "--requests", 3000, "--clients", 8,
                    "--pipeline", 4, "--threads", 2, "--data-size", 64)
    assert data["tool"] == "hotkv-benchmark"
    assert data["mode"] == "closed"
    assert data["config"]["clients"] == 8 and data["config"]["pipeline"] == 4
    assert len(data["steps"]) == 1
    s = data["steps"][0]
    check_step(s)
    assert s["requested_rps"] is None
    assert s["held"] is None
    assert s["requests"] == 3000
    assert s["errors"] == 0 and s["disconnects"] == 0
    assert s["achieved_rps"] > 0
    assert "achieved/s" in p.stdout  # the human table


def test_json_open_loop_and_sweep(server):
    data, _ = bench(server.port, "--workload", "get", "--rate", 1000, "--clients", 5,
                    "--test-time", 1)
    assert data["mode"] == "open"
    s = data["steps"][0]
    check_step(s)
    assert s["requested_rps"] == 1000
    assert s["held"] is True
    assert 950 <= s["requests"] <= 1050
    assert 970 <= s["achieved_rps"] <= 1030

    data, p = bench(server.port, "--workload", "ping", "--sweep", "500,1k", "--runs", 2,
                    "--test-time", 0.5, "--clients", 4, "--threads", 2)
    assert [(s["run"], s["step"], s["requested_rps"]) for s in data["steps"]] == \
        [(1, 1, 500), (1, 2, 1000), (2, 1, 500), (2, 2, 1000)]
    for s in data["steps"]:
        check_step(s)
        assert s["held"] is True
    assert [x["requested_rps"] for x in data["summary"]] == [500, 1000]
    assert all(x["runs"] == 2 and x["held"] is True for x in data["summary"])
    assert "summary over 2 run(s)" in p.stdout


def test_not_sustained_is_reported_ns(stall):
    # The Python stub cannot do 1M GET/s: the step must say NS, not fake a
    # rate.  (--max-outstanding bounds the backlog it has to drain.)
    data, p = bench(stall.port, "--workload", "get", "--rate", "1M", "--clients", 4,
                    "--test-time", 1, "--max-outstanding", 1000, "--drain-timeout", 5)
    s = data["steps"][0]
    assert s["held"] is False, s
    assert s["achieved_rps"] < 0.97 * 1000000
    assert " NS " in p.stdout


# ---- errors and disconnects ----

def test_error_replies_counted(server):
    data, p = bench(server.port, "--command", "NOSUCHCOMMAND key:__rand_int__",
                    "--requests", 500, "--clients", 5)
    s = data["steps"][0]
    assert s["requests"] == 500
    assert s["errors"] == 500 and s["error_replies"] == 500
    assert "unknown command" in s["first_error"].lower()
    assert "500 errors" in p.stdout


def test_errors_from_a_wrong_value(server):
    # INCR on the 3-byte value 'xxx' fails every time.
    data, _ = bench(server.port, "--command", "SET k __data__", "--requests", 100,
                    "--clients", 1)
    data, _ = bench(server.port, "--command", "INCR k", "--requests", 300, "--clients", 3)
    s = data["steps"][0]
    assert s["errors"] == 300 and s["requests"] == 300


def test_disconnects_counted_and_reconnected(quiet_stub):
    data, p = bench(quiet_stub.port, "--command", "DISCONNECT", "--test-time", 1,
                    "--clients", 2)
    s = data["steps"][0]
    # Each connection loses its request, reconnects 100 ms later, repeats.
    assert s["disconnects"] >= 4, s
    assert s["lost"] >= 4 and s["errors"] >= s["lost"], s
    assert "closed the connection" in s["first_disconnect"]
    assert "disconnects" in p.stdout


def test_connect_refused_fails_fast():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    t0 = time.time()
    data, p = bench(port, "--requests", 10, "--connect-timeout", 0.5, check=False)
    assert p.returncode == 1
    assert "could not connect" in p.stderr
    assert time.time() - t0 < 5


def test_auth_and_resp3_handshake():
    s = StallServer("--stall-ms", 0, "--password", "sekret")
    try:
        data, p = bench(s.port, "-a", "wrong", "--requests", 10, check=False)
        assert p.returncode == 1 and "WRONGPASS" in p.stderr, p.stderr
        data, p = bench(s.port, "-a", "sekret", "--resp", 3, "--db", 2, "--workload", "ping",
                        "--requests", 200, "--clients", 2)
        assert data["steps"][0]["errors"] == 0
        assert data["steps"][0]["requests"] == 200
    finally:
        s.stop()


# ---- pub/sub ----

def test_pubsub_clock_units(quiet_stub):
    # The stub delays every delivery by 20 ms: p50 must read ~20 ms (a unit
    # mix-up would read 0.02 or 20000).
    data, _ = bench(quiet_stub.port, "--pubsub", "--publishers", 2, "--subscribers", 3,
                    "--channels", 3, "--payload", 64, "--rate", 300, "--test-time", 1)
    assert data["mode"] == "pubsub"
    s = data["steps"][0]
    check_step(s)
    assert s["errors"] == 0
    assert s["published"] >= 280
    assert s["requests"] >= 280  # deliveries measured
    assert 19.5 <= s["p50_ms"] <= 45, s
    # Deliveries of the window's last 20 ms land after it: ~98%.
    assert s["achieved_rps"] >= 0.9 * s["requested_rps"] == 0.9 * 300, s


# ---- the server itself: preload, RESP3, named workloads ----

def test_preload_fills_the_key_space(server):
    c = server.client()
    c.flushall()
    data, p = bench(server.port, "--preload", "--key-space", 5000, "--data-size", 16,
                    "--workload", "get", "--requests", 2000, "--resp", 3, "--clients", 10,
                    "--threads", 2)
    assert "preload: 5000 keys" in p.stdout
    assert c.dbsize() == 5000
    assert c.get("key:000000004999") == b"x" * 16
    assert data["steps"][0]["errors"] == 0


def test_key_patterns(server):
    for pattern in ("uniform", "sequential", "zipf"):
        c = server.client()
        c.flushall()
        data, _ = bench(server.port, "--workload", "set", "--key-pattern", pattern,
                        "--key-space", 100000, "--requests", 4000, "--clients", 4)
        assert data["steps"][0]["errors"] == 0
        n = c.dbsize()
        if pattern == "sequential":
            assert n == 4000  # 0..3999 exactly once
            assert c.exists("key:000000000000") and c.exists("key:000000003999")
        elif pattern == "uniform":
            assert n > 3800  # few repeats among 100k keys
        else:
            assert n < 3000  # Zipf(0.99): heavy repeats of the hot keys
            assert c.exists("key:000000000000")


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_named_workloads_against_redis_server():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    d = tempfile.mkdtemp(prefix="hotkv-bench-redis-")
    s = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--dir", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        for name in ("set", "get", "mget", "setnx", "append", "incr", "lpush", "rpush",
                     "sadd", "hset", "mset", "ping"):
            data, _ = bench(port, "--workload", name, "--requests", 300, "--clients", 3,
                            "--pipeline", 2, "--resp", 3 if name in ("mget", "hset") else 2)
            st = data["steps"][0]
            assert st["errors"] == 0 and st["requests"] == 300, (name, st)
        data, _ = bench(port, "--ratio", "1:10", "--requests", 1100, "--clients", 1)
        assert data["config"]["commands"] == ["SET key:__rand_int__ __data__",
                                              "GET key:__rand_int__"]
        assert data["steps"][0]["errors"] == 0
    finally:
        s.terminate()
        s.wait(10)
        shutil.rmtree(d, ignore_errors=True)
