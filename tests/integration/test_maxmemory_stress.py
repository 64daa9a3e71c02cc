"""Memory-limit stress test (issue 7).

8 clients write random keys with values of random sizes (16 B to 64 KB,
uniform) for 30 s against maxmemory 256 MB.  Every 100 ms the test reads
the server's RSS (/proc/<pid>/status VmRSS, the pid from INFO process_id)
and INFO used_memory, and keeps the largest RSS - maxmemory and
used_memory - maxmemory: the RSS must never pass maxmemory by more than
RSS_SLACK, used_memory never by more than USED_SLACK.

Release builds only: the sanitizer builds (INFO mem_allocator "libc") have
another allocator and run far slower.  Every knob can be changed from the
environment, for measuring (the figures in the report come from such runs):
  HOTKV_STRESS_SECONDS   duration (30)
  HOTKV_STRESS_THREADS   server --threads (4; ignored with redis-server)
  HOTKV_STRESS_POLICY    maxmemory-policy (allkeys-lru)
  HOTKV_STRESS_MATRIX    e.g. "allkeys-lru:2,allkeys-random:4": one run per
                         policy:threads pair instead of the single default
  HOTKV_STRESS_OUT       a file to which each run appends its figures (JSON)
"""
import json
import multiprocessing as mp
import os
import random
import time

import pytest
import redis

from helpers import IS_REDIS, Server

MB = 1024 * 1024

MAXMEMORY = 256 * MB

# How far RSS and used_memory may pass maxmemory: the documented slack
# (docs/architecture.md "Slack"), set from the measured figures: used_memory
# within 2 MB; RSS within a quarter of the limit (the allocator's free space
# inside its pages, ~10%, and pages freed but not yet given back) plus 40 MB
# (binary, stacks, allocator metadata).  Measured on the 2-core VM: 57-79 MB
# over at 256 MB (redis-server 7.0.15 on the same test: 76-80 MB).
RSS_SLACK = MAXMEMORY // 4 + 40 * MB
USED_SLACK = 2 * MB
CLIENTS = 8
MIN_VALUE, MAX_VALUE = 16, 64 * 1024
PIPELINE = 8
SAMPLE_EVERY = 0.1

# 10 s in make test: the limit is reached in under a second and RSS peaks
# within about 4 s (measured: 12 s run, peak at 3.4 s); longer soak runs set
# HOTKV_STRESS_SECONDS.
DURATION = float(os.environ.get("HOTKV_STRESS_SECONDS", "10"))


def runs():
    matrix = os.environ.get("HOTKV_STRESS_MATRIX")
    if matrix:
        out = []
        for item in matrix.split(","):
            policy, threads = item.split(":")
            out.append((policy, int(threads)))
        return out
    return [(os.environ.get("HOTKV_STRESS_POLICY", "allkeys-lru"), int(os.environ.get("HOTKV_STRESS_THREADS", "4")))]


def writer(port, seed, deadline, q):
    """One client: pipelined SETs of random keys until the deadline; puts
    (commands, bytes, errors, first error) on q."""
    rnd = random.Random(seed)
    blob = os.urandom(MAX_VALUE + 4096)
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    n = nbytes = errs = 0
    first = None
    try:
        while time.time() < deadline:
            p = c.pipeline(transaction=False)
            for _ in range(PIPELINE):
                size = rnd.randint(MIN_VALUE, MAX_VALUE)
                off = rnd.randint(0, 4096)
                p.set("stress:%d:%x" % (seed, rnd.getrandbits(64)), blob[off:off + size])
                nbytes += size
            for x in p.execute(raise_on_error=False):
                n += 1
                if isinstance(x, Exception):
                    errs += 1
                    if first is None:
                        first = str(x)
    except Exception as e:  # a dropped connection fails the test below
        first = first or "client %d: %r" % (seed, e)
        errs += 1
    q.put((n, nbytes, errs, first))


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for pid %d" % pid)


def stress(policy, threads):
    s = Server("--maxmemory", str(MAXMEMORY), "--maxmemory-policy", policy, threads=threads)
    try:
        c = s.client(decode_responses=True)
        if c.info("memory")["mem_allocator"].startswith("libc"):
            pytest.skip("sanitizer build (libc allocator): release builds only")
        pid = int(c.info("server")["process_id"])
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        start = time.time()
        deadline = start + DURATION
        procs = [ctx.Process(target=writer, args=(s.port, n, deadline, q)) for n in range(CLIENTS)]
        for p in procs:
            p.start()
        rss_over = used_over = -MAXMEMORY
        peak_rss = peak_used = 0
        at_peak = {}
        samples = 0
        reached = None
        while time.time() < deadline:
            t = time.time()
            rss = vm_rss(pid)
            mem = c.info("memory")
            used = int(mem["used_memory"])
            samples += 1
            if rss > peak_rss:
                # Where the RSS above used_memory is: allocator_active -
                # allocated is fragmentation inside the allocator's pages,
                # resident - active its dirty pages not yet given back.
                at_peak = {k: int(mem[k]) for k in ("used_memory", "allocator_allocated", "allocator_active",
                                                    "allocator_resident") if k in mem}
                at_peak["rss"] = rss
                at_peak["t"] = round(t - start, 1)
            peak_rss, peak_used = max(peak_rss, rss), max(peak_used, used)
            rss_over = max(rss_over, rss - MAXMEMORY)
            used_over = max(used_over, used - MAXMEMORY)
            if reached is None and used >= 0.95 * MAXMEMORY:
                reached = t - start
            time.sleep(max(0.0, SAMPLE_EVERY - (time.time() - t)))
        results = [q.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(30)
        info = c.info()
        final_rss = vm_rss(pid)
        c.close()
    finally:
        rc = s.stop()
    assert rc == 0, "server exited with %s, see %s" % (rc, s.dir)
    cmds = sum(x[0] for x in results)
    errors = sum(x[2] for x in results)
    first = next((x[3] for x in results if x[3]), None)
    fig = {
        "server": "redis" if IS_REDIS else "hotkv", "policy": policy, "threads": threads,
        "seconds": DURATION, "samples": samples, "commands": cmds,
        "mb_written": round(sum(x[1] for x in results) / MB, 1),
        "errors": errors, "evicted_keys": int(info["evicted_keys"]), "keys_left": int(info["db0"]["keys"]) if "db0" in info else 0,
        "limit_reached_after_s": None if reached is None else round(reached, 1),
        "max_rss_over": rss_over, "max_used_over": used_over,
        "peak_rss": peak_rss, "peak_used": peak_used, "final_rss": final_rss,
        "final_used": int(info["used_memory"]),
        "at_peak_rss": at_peak, "malloc_conf": os.environ.get("MALLOC_CONF", ""),
    }
    print("\nstress %s" % json.dumps(fig))
    if os.environ.get("HOTKV_STRESS_OUT"):
        with open(os.environ["HOTKV_STRESS_OUT"], "a") as f:
            f.write(json.dumps(fig) + "\n")
    return fig, first


@pytest.mark.parametrize("policy,threads", runs())
def test_rss_stays_within_slack_of_maxmemory(policy, threads):
    fig, first = stress(policy, threads)
    assert fig["errors"] == 0, first
    # The run must have reached the limit and evicted, or it proved nothing.
    assert fig["limit_reached_after_s"] is not None, fig
    assert fig["evicted_keys"] > 1000, fig
    assert fig["max_used_over"] <= USED_SLACK, fig
    assert fig["max_rss_over"] <= RSS_SLACK, fig
