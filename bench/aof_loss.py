#!/usr/bin/env python3
"""bench/aof_loss.py - how much an AOF loses when the server dies (issue #6).

Two measurements, for hotkv and (with --redis) redis-server side by side:

1. kill -9: W writer threads (each its own connection) INCR their own
   counter as fast as they can and remember the last acknowledged value and
   how many INCRs they sent; after a random 1-3 s the server is killed with
   SIGKILL and restarted on the same files.  Reported per round: writes
   acknowledged, acknowledged writes missing after the restart (the loss),
   and writes sent but not acknowledged that did survive (in flight).
   A killed process keeps what it wrote to the kernel, so this measures
   whether a reply can leave before its bytes are written.

2. Power loss window (--strace): what an OS crash or power cut could lose
   is what was written but not yet fdatasynced.  strace timestamps every
   fdatasync/fsync of the server under the same load; the report gives the
   longest gap between the end of one fsync and the end of the next (the
   window of acknowledged writes at risk), the fsync durations, and that
   window times the measured write rate.

Usage: bench/aof_loss.py [--policy everysec] [--rounds 5] [--writers 8]
                         [--threads 4] [--redis] [--strace] [--bin PATH]
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import redis
except ImportError:
    sys.exit("needs python3-redis (apt-get install python3-redis)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_port(port, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            c = redis.Redis(port=port, socket_timeout=5)
            c.ping()
            return
        except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
            time.sleep(0.02)
    raise RuntimeError("server did not start")


def start(kind, binary, port, d, policy, threads):
    if kind == "redis":
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d,
               "--appendonly", "yes", "--appendfsync", policy]
    else:
        cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", d,
               "--threads", str(threads), "--appendonly", "yes", "--appendfsync", policy]
    log = open(os.path.join(d, "server.log"), "a")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, p)
    return p


class Writer(threading.Thread):
    def __init__(self, port, i):
        super().__init__(daemon=True)
        self.port, self.i = port, i
        self.acked = self.sent = 0
        self.key = "loss:%d" % i

    def run(self):
        c = redis.Redis(port=self.port, socket_timeout=10)
        try:
            while True:
                self.sent += 1
                self.acked = c.incr(self.key)
        except Exception:
            pass


def kill_round(kind, binary, port, policy, threads, writers, rnd):
    d = tempfile.mkdtemp(prefix="aofloss-")
    try:
        p = start(kind, binary, port, d, policy, threads)
        ws = [Writer(port, i) for i in range(writers)]
        for w in ws:
            w.start()
        time.sleep(rnd.uniform(1.0, 3.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
        for w in ws:
            w.join(10)
        p = start(kind, binary, port, d, policy, threads)
        c = redis.Redis(port=port)
        acked = lost = inflight = 0
        for w in ws:
            got = int(c.get(w.key) or 0)
            acked += w.acked
            lost += max(0, w.acked - got)
            inflight += max(0, got - w.acked)
        p.send_signal(signal.SIGKILL)
        p.wait()
        return acked, lost, inflight
    finally:
        shutil.rmtree(d, ignore_errors=True)


def strace_window(kind, binary, port, policy, threads, writers, secs):
    d = tempfile.mkdtemp(prefix="aofloss-")
    out = os.path.join(d, "strace.txt")
    try:
        p = start(kind, binary, port, d, policy, threads)
        st = subprocess.Popen(["strace", "-f", "-qq", "-ttt", "-T", "-e", "trace=fdatasync,fsync", "-o", out,
                               "-p", str(p.pid)], stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        ws = [Writer(port, i) for i in range(writers)]
        t0 = time.time()
        for w in ws:
            w.start()
        time.sleep(secs)
        total = sum(w.acked for w in ws)
        rate = total / (time.time() - t0)
        st.send_signal(signal.SIGINT)
        st.wait()
        p.send_signal(signal.SIGKILL)
        p.wait()
        ends, durs = [], []
        with open(out) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3 or "sync(" not in line or "<" not in line or "resumed" in line and "sync" not in parts[2]:
                    continue
                try:
                    ts = float(parts[1])
                    dur = float(line.rsplit("<", 1)[1].rstrip(">\n"))
                except ValueError:
                    continue
                ends.append(ts + dur)
                durs.append(dur)
        ends.sort()
        gaps = [b - a for a, b in zip(ends, ends[1:])]
        return {
            "fsyncs": len(ends),
            "max_gap_s": max(gaps) if gaps else None,
            "mean_gap_s": sum(gaps) / len(gaps) if gaps else None,
            "max_fsync_ms": max(durs) * 1000 if durs else None,
            "writes_per_s": rate,
        }
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server")))
    ap.add_argument("--policy", default="everysec")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--port", type=int, default=7399)
    ap.add_argument("--redis", action="store_true", help="also run redis-server")
    ap.add_argument("--strace", action="store_true", help="measure the fsync (power loss) window")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    kinds = ["hotkv"] + (["redis"] if a.redis else [])
    rnd = random.Random(a.seed)
    print("appendfsync %s, %d writer threads, %d rounds of kill -9" % (a.policy, a.writers, a.rounds))
    for kind in kinds:
        tot_acked = tot_lost = tot_inflight = 0
        for r in range(a.rounds):
            acked, lost, inflight = kill_round(kind, a.bin, a.port, a.policy, a.threads, a.writers, rnd)
            tot_acked += acked
            tot_lost += lost
            tot_inflight += inflight
            print("  %-6s round %d: acknowledged %7d, lost %d, in flight kept %d" % (kind, r + 1, acked, lost,
                                                                                     inflight))
        print("%-6s kill -9: %d acknowledged writes, %d lost (%.4f%%), %d unacknowledged in flight kept" % (
            kind, tot_acked, tot_lost, 100.0 * tot_lost / max(1, tot_acked), tot_inflight))
        if a.strace:
            w = strace_window(kind, a.bin, a.port, a.policy, a.threads, a.writers, 5.0)
            if w["max_gap_s"] is None:
                print("%-6s power loss window: fewer than 2 fsyncs seen (%d)" % (kind, w["fsyncs"]))
            else:
                print("%-6s power loss window: %d fsyncs in 5 s, longest gap %.3f s (mean %.3f s), slowest fsync "
                      "%.2f ms, %.0f writes/s -> at most ~%.0f acknowledged writes at risk" % (
                          kind, w["fsyncs"], w["max_gap_s"], w["mean_gap_s"], w["max_fsync_ms"],
                          w["writes_per_s"], w["writes_per_s"] * w["max_gap_s"]))


if __name__ == "__main__":
    main()
