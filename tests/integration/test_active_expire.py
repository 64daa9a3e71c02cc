"""Active expiry at scale (issue 7): the memory of expired keys stays
bounded at any key count.  N keys with a short TTL (PX 2000..4999) and no
reads at all: the sweeper alone must delete every one of them and used_memory
must fall back to the empty server's figure within seconds of the last TTL.

The keys are loaded with the sweeper off (DEBUG SET-ACTIVE-EXPIRE 0), so
all N are in memory at once however long the load takes, then it is
switched on: the keys whose TTL passed during the load and those still
running out are left to the sweeper.  The bound is counted from the last
TTL (end of the load + 5 s).

- 200k keys: every tier (sanitizer builds too).
- 10 M keys: release builds only (INFO mem_allocator is "libc" in the
  sanitizer builds, which have no jemalloc and run ~10x slower), HotKV only
  (redis-server 7.0 still held 8.9 M of them 15 s after the last TTL).
  About 600 MB of memory; the load is a raw pipelined socket stream
  (~530 MB of RESP) over 4 connections, and takes most of the test's time
  (the server spends ~1.8 us of CPU per SET: ~15-30 s on an idle 2-core
  machine, ~55 s with other jobs loading it).

Measured on the 2-core development machine, shared with other jobs: keys
at 0 and used_memory back at the baseline 0.2-0.4 s after the last TTL with
--threads 2 at load average 4-7 (3.1 s at load average 14), 1.5 s with
--threads 1 (9 s at load average 14).  The sweeper deletes ~3.5 M keys/s per
worker when it has a core (~150-190 ns of CPU per key): the 10 M keys need
~1.8 CPU-s.  The 10 s bound (15 s from switching the sweeper on) leaves
room for a busy CI machine.  The sweeper before issue 7 (a fixed 25 % of
each cron tick, restarting a slot's scan at every table shrink) took 4.3 s
with --threads 2 and ~13 s with --threads 1 on the quieter machine."""
import os
import random
import socket
import threading
import time

import pytest

from helpers import IS_REDIS, Server, release_only

TTL_LO, TTL_HI = 2000, 4999  # ms


def info_int(c, section, name):
    return int(c.info(section)[name])


def is_sanitizer_build(c):
    """The ASan/TSan builds use the sanitizer's allocator (no jemalloc)."""
    return c.info("memory").get("mem_allocator", "") == "libc"


def resp_chunk_template(chunk, seed):
    """`chunk` SETs "k:" + 4 placeholder bytes + 4 digits, value "v", PX
    TTL_LO..TTL_HI (random, fixed per position).  Each chunk replaces the
    placeholder with its own 4-digit number: 10 M distinct keys without
    formatting 10 M commands in Python."""
    rnd = random.Random(seed)
    parts = []
    for i in range(chunk):
        ttl = b"%d" % rnd.randrange(TTL_LO, TTL_HI + 1)
        parts.append(b"*5\r\n$3\r\nSET\r\n$10\r\nk:\x00\x00\x00\x00%04d\r\n$1\r\nv\r\n$2\r\nPX\r\n$%d\r\n%s\r\n"
                     % (i, len(ttl), ttl))
    return b"".join(parts)


def load_expiring(port, n, conns=4, chunk=10000):
    """SET n keys with short TTLs over `conns` pipelined connections (the
    replies are drained by reader threads).  Returns (seconds, errors)."""
    assert n % chunk == 0 and n // chunk <= 10000
    tmpl = resp_chunk_template(chunk, 7)
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(conns)]
    nchunks = n // chunk
    want = [0] * conns
    for c in range(nchunks):
        want[c % conns] += chunk
    errors = []

    def drain(s, expect):
        got, tail = 0, b""
        while got < expect:
            d = s.recv(1 << 20)
            if not d:
                errors.append("connection closed after %d replies" % got)
                return
            if b"-" in tail + d:
                errors.append((tail + d)[:200])
                return
            got += d.count(b"\n")
            tail = d[-8:]

    readers = [threading.Thread(target=drain, args=(socks[i], want[i])) for i in range(conns)]
    for t in readers:
        t.start()
    t0 = time.time()
    try:
        for c in range(nchunks):
            socks[c % conns].sendall(tmpl.replace(b"\x00\x00\x00\x00", b"%04d" % c))
    finally:
        for t in readers:
            t.join()
        for s in socks:
            s.close()
    return time.time() - t0, errors


def run_mass_expiry(n, bound_s, threads=2):
    srv = Server("--enable-debug-command", "yes") if IS_REDIS else Server(threads=threads)
    c = srv.client(decode_responses=True)
    try:
        if n > 200000 and not IS_REDIS and is_sanitizer_build(c):
            pytest.skip("10M keys: release builds only (sanitizer allocator)")
        time.sleep(0.3)
        base = info_int(c, "memory", "used_memory")
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        secs, errors = load_expiring(srv.port, n)
        assert not errors, errors
        last_ttl = time.time() + TTL_HI / 1000.0
        assert c.dbsize() == n  # no reads, sweeper off: all still stored
        peak = info_int(c, "memory", "used_memory")
        assert peak > base + n * 30, (base, peak)
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        # Near the baseline: 1 MB plus 1 % of what the keys took.
        near = base + (1 << 20) + (peak - base) // 100
        deadline = last_ttl + bound_s
        zero_at = back_at = None
        while time.time() < deadline:
            now = time.time()
            keys = c.dbsize()  # counts stored keys, expires nothing itself
            used = info_int(c, "memory", "used_memory")
            if keys == 0 and zero_at is None:
                zero_at = now
            if keys == 0 and used <= near:
                back_at = now
                break
            time.sleep(0.1)
        print("\n%d keys (threads %d): loaded in %.1fs, used_memory %d -> %d -> %d; keys 0 at %s, memory back at %s "
              "(s after the last TTL)" % (n, threads, secs, base, peak, used,
                                          None if zero_at is None else round(zero_at - last_ttl, 2),
                                          None if back_at is None else round(back_at - last_ttl, 2)))
        assert zero_at is not None, "%d keys left %.0fs after the last TTL" % (c.dbsize(), bound_s)
        assert back_at is not None, "used_memory %d, baseline %d (near: %d)" % (used, base, near)
        assert info_int(c, "stats", "expired_keys") == n
    finally:
        c.close()
        rc = srv.stop()
    assert rc == 0, "server exited with %s, see %s" % (rc, srv.dir)


@release_only  # the sweep's effectiveness (statistics); the other expiry tests run everywhere
def test_active_expiry_200k_keys():
    run_mass_expiry(200000, bound_s=10)


# The figure is 10 M keys (HOTKV_EXPIRE_KEYS=10000000, about a
# minute, most of it loading); `make test` runs 3 M to stay short.
MASS_KEYS = int(os.environ.get("HOTKV_EXPIRE_KEYS", "3000000"))


@pytest.mark.skipif(IS_REDIS, reason="a HotKV bound: redis-server 7.0 is far slower at millions of keys")
@pytest.mark.skipif(os.environ.get("HOTKV_SKIP_10M") == "1", reason="HOTKV_SKIP_10M=1")
def test_active_expiry_millions_of_keys():
    run_mass_expiry(MASS_KEYS, bound_s=10)


def test_expiry_stats_in_info():
    """INFO stats: expired_stale_perc (running average of the share of
    sampled keys found expired), expired_time_cap_reached_count and
    expire_cycle_cpu_milliseconds move with a burst of expired keys, and
    CONFIG RESETSTAT zeroes them."""
    s = Server(*(("--enable-debug-command", "yes") if IS_REDIS else ()), threads=2)
    try:
        r = s.client()

        def stats():
            return r.info("stats")
        st = stats()
        assert st["expired_stale_perc"] == 0
        assert st["expired_time_cap_reached_count"] == 0
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        n = 100000
        p = r.pipeline(transaction=False)
        for i in range(n):
            p.set("e:%d" % i, "v", px=50)
            if i % 5000 == 4999:
                p.execute()
        p.execute()
        time.sleep(0.2)
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        deadline = time.time() + 20
        while r.dbsize() and time.time() < deadline:
            time.sleep(0.05)
        assert r.dbsize() == 0
        st = stats()
        assert st["expired_keys"] == n
        assert 0 < float(st["expired_stale_perc"]) <= 100
        # 100k keys to delete against a budget of about 0.1-25 ms a pass.
        assert st["expired_time_cap_reached_count"] >= 1
        assert st["expire_cycle_cpu_milliseconds"] >= 1
        r.config_resetstat()
        st = stats()
        assert st["expired_keys"] == 0
        assert st["expired_stale_perc"] == 0
        assert st["expired_time_cap_reached_count"] == 0
        assert st["expire_cycle_cpu_milliseconds"] == 0
    finally:
        assert s.stop() == 0
