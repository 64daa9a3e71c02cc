"""EVAL scripts run in parallel with each other on different threads when
they keep to their declared keys (script/script.c, cmd/multi.c parallel
lock contexts), and stay atomic: scripts on the same slots still run one
after the other, and a script that touches keys it does not declare runs
alone.  CLIENT LIST's io-thread field (as Redis 8 prints it) tells which
worker serves a connection."""
import random
import threading
import time

import pytest
import redis
from redis.crc import key_slot

from conftest import MODE, Server

pytestmark = pytest.mark.skipif(MODE != "hotkv", reason="HotKV's threads")

# Busy for ARGV[1] microseconds after writing its declared key.  TIME is
# one instant inside a script (Redis 7.2), so the wait is DEBUG SLEEP in
# slices of at most 10 ms (the server allows it: SET-DISABLE-DENY-SCRIPTS).
WAIT_US = """
local function wait_us(n)
  while n > 0 do
    local s = math.min(n, 10000)
    redis.call('DEBUG', 'SLEEP', s / 1000000)
    n = n - s
  end
end
"""
SPIN = WAIT_US + """
redis.call('SET', KEYS[1], ARGV[2])
wait_us(tonumber(ARGV[1]))
return 1
"""

# The same, but it writes a key it does not declare.
SPIN_UNDECLARED = SPIN.replace("redis.call('SET', KEYS[1], ARGV[2])", "redis.call('SET', 'undeclared:' .. ARGV[2], 1)")


@pytest.fixture(scope="module")
def srv():
    s = Server(threads=2)
    s.client().execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    yield s
    assert s.stop() == 0, "server exited uncleanly, see %s" % s.dir


def io_thread(c):
    info = c.execute_command("CLIENT", "INFO")
    if isinstance(info, bytes):
        info = info.decode()
    return int(dict(kv.split("=", 1) for kv in info.split())["io-thread"])


def two_workers(srv):
    """Two connections served by different workers."""
    first = srv.client(decode_responses=True, socket_timeout=20)
    t0 = io_thread(first)
    for _ in range(64):
        c = srv.client(decode_responses=True, socket_timeout=20)
        if io_thread(c) != t0:
            return first, c
        c.close()
    pytest.fail("64 connections all on one worker")


def overlap(srv, body_a, keys_a, body_b, keys_b, spin_us=800000):
    """Run A, then (0.15 s later, on the other worker) B, each spinning
    spin_us; returns B's end relative to A's start, in seconds."""
    a, b = two_workers(srv)
    sha_a = a.script_load(body_a)
    sha_b = a.script_load(body_b)
    # First runs are alone; run each once so the next are parallel if they may.
    a.evalsha(sha_a, len(keys_a), *keys_a, 1, "warm")
    a.evalsha(sha_b, len(keys_b), *keys_b, 1, "warm")
    out = {}

    def run_a():
        out["a"] = a.evalsha(sha_a, len(keys_a), *keys_a, spin_us, "a")

    t = threading.Thread(target=run_a)
    start = time.time()
    t.start()
    time.sleep(0.15)
    assert b.evalsha(sha_b, len(keys_b), *keys_b, spin_us, "b") == 1
    end_b = time.time() - start
    t.join()
    assert out["a"] == 1
    a.close()
    b.close()
    return end_b


def test_scripts_on_different_slots_overlap(srv):
    # "a" and "b" hash to different slots: B does not wait for A.
    assert key_slot(b"a") != key_slot(b"b")
    end_b = overlap(srv, SPIN, ["a"], SPIN, ["b"])
    assert end_b < 1.45, "B ended %.2f s after A started: the scripts did not overlap" % end_b


def test_scripts_on_one_slot_take_turns(srv):
    # {t}x and {t}y share a slot: B waits for A's lock on it.
    end_b = overlap(srv, SPIN, ["{t}x"], SPIN, ["{t}y"])
    assert end_b >= 1.5, "B ended %.2f s after A started, inside A's run" % end_b


def test_a_script_with_undeclared_keys_runs_alone(srv):
    # B's key is its own, but it writes one it does not declare: from its
    # first run on it runs alone, after A.
    end_b = overlap(srv, SPIN, ["c"], SPIN_UNDECLARED, ["d"])
    assert end_b >= 1.5, "B ended %.2f s after A started, inside A's run" % end_b


def run_threads(fns):
    errs = []

    def wrap(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - re-raised below
            errs.append(e)

    ts = [threading.Thread(target=wrap, args=(fn,)) for fn in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise errs[0]


TRANSFER = """
local a = tonumber(redis.call('GET', KEYS[1]))
if a > 0 then
  redis.call('DECR', KEYS[1])
  redis.call('INCR', KEYS[2])
end
return a
"""
SUM_DECLARED = """
local s = 0
for i = 1, #KEYS do s = s + tonumber(redis.call('GET', KEYS[i])) end
return s
"""
SUM_UNDECLARED = """
local s = 0
for i = 0, tonumber(ARGV[1]) - 1 do s = s + tonumber(redis.call('GET', 'acct:' .. i)) end
return s
"""
TRANSFER_UNDECLARED = """
local from, to = 'acct:' .. ARGV[1], 'acct:' .. ARGV[2]
local a = tonumber(redis.call('GET', from))
if a > 0 then
  redis.call('DECR', from)
  redis.call('INCR', to)
end
return a
"""


def test_parallel_transfers_keep_the_total(srv):
    """Transfers between random pairs of 10 accounts from 6 connections
    (declared keys, parallel), some by a script that names its keys itself
    (alone), while readers sum every account (declared: parallel, and
    undeclared: alone): every sum sees the same total."""
    n, total = 10, 1000
    setup = srv.client(decode_responses=True)
    setup.flushall()
    for i in range(n):
        setup.set("acct:%d" % i, total // n)
    keys = ["acct:%d" % i for i in range(n)]
    shas = {name: setup.script_load(body) for name, body in
            (("t", TRANSFER), ("s", SUM_DECLARED), ("su", SUM_UNDECLARED), ("tu", TRANSFER_UNDECLARED))}
    # Their first runs, alone, settle how each runs from then on.
    setup.evalsha(shas["t"], 2, keys[0], keys[1])
    setup.evalsha(shas["t"], 2, keys[1], keys[0])
    setup.evalsha(shas["tu"], 0, 0, 1)
    setup.evalsha(shas["tu"], 0, 1, 0)
    deadline = time.time() + 3
    sums = []

    def transfer(undeclared):
        def fn():
            c = srv.client(decode_responses=True, socket_timeout=20)
            rnd = random.Random()
            while time.time() < deadline:
                i, j = rnd.sample(range(n), 2)
                if undeclared:
                    c.evalsha(shas["tu"], 0, i, j)
                else:
                    c.evalsha(shas["t"], 2, keys[i], keys[j])
        return fn

    def reader(undeclared):
        def fn():
            c = srv.client(decode_responses=True, socket_timeout=20)
            while time.time() < deadline:
                if undeclared:
                    sums.append(c.evalsha(shas["su"], 0, n))
                else:
                    sums.append(c.evalsha(shas["s"], n, *keys))
        return fn

    run_threads([transfer(False)] * 5 + [transfer(True), reader(False), reader(True)])
    assert sums and set(sums) == {total}, sorted(set(sums))
    assert sum(int(setup.get(k)) for k in keys) == total


def test_parallel_counters_are_exact(srv):
    """A rate-limiter-like script over 3 random keys of 50, from 8
    connections: every increment lands once."""
    body = """
local n = 0
for i = 1, #KEYS do n = n + redis.call('INCR', KEYS[i]) end
redis.call('EXPIRE', KEYS[1], 60)
return n
"""
    setup = srv.client(decode_responses=True)
    setup.flushall()
    sha = setup.script_load(body)
    setup.evalsha(sha, 1, "warm")
    setup.delete("warm")
    per, conns = 300, 8

    def worker():
        c = srv.client(decode_responses=True, socket_timeout=20)
        rnd = random.Random()
        for _ in range(per):
            ks = rnd.sample(range(50), 3)
            c.evalsha(sha, 3, *("rl:%d" % k for k in ks))

    run_threads([worker] * conns)
    assert sum(int(setup.get("rl:%d" % k) or 0) for k in range(50)) == per * conns * 3


def test_script_kill_while_another_script_runs(srv):
    """A script past busy-reply-threshold on one worker is the one SCRIPT
    KILL stops, while a parallel script on the other worker finishes."""
    a, b = two_workers(srv)
    admin = srv.client(decode_responses=True)
    admin.config_set("busy-reply-threshold", 100)
    try:
        loop = "redis.call('GET', KEYS[1]) while true do end"
        sha_loop = a.script_load(loop)
        sha_spin = a.script_load(SPIN)
        a.evalsha(sha_spin, 1, "k2", 1, "warm")
        errs = []

        def run_loop():
            try:
                a.evalsha(sha_loop, 1, "k1")
            except redis.ResponseError as e:
                errs.append(str(e))

        t = threading.Thread(target=run_loop)
        t.start()
        # Busy: other commands get BUSY, SCRIPT KILL gets through.
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                admin.ping()
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.ResponseError as e:
                if str(e).startswith("BUSY"):
                    break
            time.sleep(0.02)
        else:
            pytest.fail("the looping script never made the server busy")
        assert admin.execute_command("SCRIPT", "KILL") == "OK"
        t.join(5)
        assert not t.is_alive()
        assert errs and "killed" in errs[0].lower(), errs
        assert b.evalsha(sha_spin, 1, "k2", 1000, "x") == 1
        assert admin.ping()
    finally:
        admin.config_set("busy-reply-threshold", 5000)


def test_script_flush_reaches_every_thread(srv):
    a, b = two_workers(srv)
    sha = a.script_load("return 'one'")
    assert a.evalsha(sha, 0) == "one" and b.evalsha(sha, 0) == "one"
    assert b.script_flush() is True
    for c in (a, b):
        with pytest.raises(redis.exceptions.NoScriptError):
            c.evalsha(sha, 0)
    assert a.eval("return 'two'", 0) == "two" and b.eval("return 'two'", 0) == "two"
    info = a.info("memory")
    assert info["used_memory_vm_eval"] > 0


LIB = """#!lua name=plib
""" + WAIT_US + """
local function spin(keys, args)
  redis.call('SET', keys[1], args[2])
  wait_us(tonumber(args[1]))
  return 1
end
redis.register_function('pspin', spin)
redis.register_function('pspin_undeclared', function(keys, args)
  redis.call('SET', 'undeclared:' .. args[2], 1)
  return spin(keys, args)
end)
redis.register_function('which', function(keys, args) return 'v1' end)
"""


def foverlap(srv, fa, keys_a, fb, keys_b, spin_us=800000):
    a, b = two_workers(srv)
    a.execute_command("FCALL", fa, len(keys_a), *keys_a, 1, "warm")
    a.execute_command("FCALL", fb, len(keys_b), *keys_b, 1, "warm")
    out = {}

    def run_a():
        out["a"] = a.execute_command("FCALL", fa, len(keys_a), *keys_a, spin_us, "a")

    t = threading.Thread(target=run_a)
    start = time.time()
    t.start()
    time.sleep(0.15)
    assert b.execute_command("FCALL", fb, len(keys_b), *keys_b, spin_us, "b") == 1
    end_b = time.time() - start
    t.join()
    assert out["a"] == 1
    return end_b


def test_functions_run_in_parallel(srv):
    c = srv.client(decode_responses=True)
    c.execute_command("FUNCTION", "LOAD", "REPLACE", LIB)
    try:
        end_b = foverlap(srv, "pspin", ["fa"], "pspin", ["fb"])
        assert end_b < 1.45, "B ended %.2f s after A started: the functions did not overlap" % end_b
        end_b = foverlap(srv, "pspin", ["{f}a"], "pspin", ["{f}b"])
        assert end_b >= 1.5, "B ended %.2f s after A started, inside A's run" % end_b
        end_b = foverlap(srv, "pspin", ["fc"], "pspin_undeclared", ["fd"])
        assert end_b >= 1.5, "B ended %.2f s after A started, inside A's run" % end_b
        # A library replaced is what every thread runs next.
        a, b = two_workers(srv)
        for x in (a, b):
            for _ in range(2):
                assert x.execute_command("FCALL", "which", 1, "w") == "v1"
        c.execute_command("FUNCTION", "LOAD", "REPLACE", LIB.replace("'v1'", "'v2'"))
        for x in (a, b):
            assert x.execute_command("FCALL", "which", 1, "w") == "v2"
        c.execute_command("FUNCTION", "DELETE", "plib")
        for x in (a, b):
            with pytest.raises(redis.ResponseError, match="Function not found"):
                x.execute_command("FCALL", "which", 1, "w")
    finally:
        c.execute_command("FUNCTION", "FLUSH")


# Writes KEYS[1], spins ARGV[2] us, then reads ARGV[3] (a key it does not
# declare) if given; an error reading it is returned as "ERR:...".
LATE_READ = WAIT_US + """
redis.call('SET', KEYS[1], ARGV[1])
wait_us(tonumber(ARGV[2]))
if ARGV[3] == '' then return 'none' end
local v = redis.pcall('GET', ARGV[3])
if type(v) == 'table' and v.err then return 'ERR:' .. v.err end
return v
"""
# The same without the write first: a run that has done nothing with a side
# effect when it meets the other script's lock.
CLEAN_READ = """
redis.call('GET', KEYS[1])
if ARGV[1] == '' then return 'none' end
return redis.call('GET', ARGV[1])
"""


def keys_by_slot(lower):
    """Two keys whose slots are ordered: (first, second) with
    slot(first) < slot(second) when lower, else >."""
    a = "p%d" % random.randrange(1 << 30)
    while True:
        b = "q%d" % random.randrange(1 << 30)
        sa, sb = key_slot(a.encode()), key_slot(b.encode())
        if sa != sb and (sa < sb) == lower:
            return a, b


def late_read_pair(srv, tag, a_key, b_key, b_body, b_args):
    """A (LATE_READ) writes a_key, spins 0.8 s, then reads b_key; B starts
    0.15 s later on the other worker: b_body over b_key with b_args.
    Both scripts first run once on their declared keys only (so they run
    in parallel).  Returns (A's reply, B's reply, B's end in s)."""
    a, b = two_workers(srv)
    body_a = "-- %s a\n" % tag + LATE_READ
    body_b = "-- %s b\n" % tag + b_body
    sha_a, sha_b = a.script_load(body_a), a.script_load(body_b)
    assert a.evalsha(sha_a, 1, a_key, "w", 0, "") == "none"
    assert a.evalsha(sha_b, 1, b_key, *([""] if b_body is CLEAN_READ else ["w", 0, ""])) == "none"
    out = {}

    def run_a():
        out["a"] = a.evalsha(sha_a, 1, a_key, "from-a", 800000, b_key)

    t = threading.Thread(target=run_a)
    start = time.time()
    t.start()
    time.sleep(0.15)
    rb = b.evalsha(sha_b, 1, b_key, *b_args)
    end_b = time.time() - start
    t.join()
    return out["a"], rb, end_b


def test_a_clean_run_meeting_a_lock_runs_again_alone(srv):
    """B reads A's key, which A holds: B has written nothing, so it stops,
    runs again alone after A and reads what A wrote."""
    pa, pb = keys_by_slot(True)
    ra, rb, end_b = late_read_pair(srv, "clean", pa, pb, CLEAN_READ, [pa])
    assert rb == "from-a" and end_b >= 0.75, (rb, end_b)
    assert ra is None  # A read B's key, which nothing wrote (CLEAN_READ never writes)


@pytest.mark.parametrize("lower", [True, False], ids=["b-waits-out-of-order", "b-waits-ascending"])
def test_two_writers_meeting_mid_run(srv, lower):
    """A and B have both written when each wants the other's key: one of
    them waits (holding the out-of-order token, or ascending), the other's
    call fails with the parallel-conflict error instead of a deadlock; the
    one that waited reads what the other wrote."""
    pa, pb = keys_by_slot(lower)
    ra, rb, end_b = late_read_pair(srv, "dirty-%s" % lower, pa, pb, LATE_READ, ["from-b", 0, pa])
    errs = [x for x in (ra, rb) if x.startswith("ERR:")]
    assert len(errs) == 1 and "another script running in parallel" in errs[0], (ra, rb)
    if lower:   # B's wait is out of order (it takes the token): A's call fails
        assert ra.startswith("ERR:") and rb == "from-a", (ra, rb)
    else:       # B waits ascending; A, out of order, takes the token: B's call fails
        assert rb.startswith("ERR:") and ra == "from-b", (ra, rb)


STRESS_LIB = """#!lua name=stress
local function move(from, to)
  local a = tonumber(redis.call('GET', from))
  if a <= 0 then return 0 end
  redis.call('DECR', from)
  local r = redis.pcall('INCR', to)
  if type(r) == 'table' and r.err then
    redis.call('INCR', from) -- a parallel conflict: put it back (from is held)
    return -1
  end
  return 1
end
redis.register_function('fmove', function(keys, args) return move(keys[1], keys[2]) end)
redis.register_function('fmove_named', function(keys, args) return move('acct:' .. args[1], 'acct:' .. args[2]) end)
"""
# Declares one account, sometimes (ARGV[3] == '1') moves to an undeclared one.
STRESS_LATE = """
local from = KEYS[1]
local a = tonumber(redis.call('GET', from))
if a <= 0 then return 0 end
local to = KEYS[1]
if ARGV[3] == '1' then to = 'acct:' .. ARGV[2] end
if to == from then return 0 end
redis.call('DECR', from)
local r = redis.pcall('INCR', to)
if type(r) == 'table' and r.err then
  redis.call('INCR', from)
  return -1
end
return 1
"""


def test_parallel_scripts_stress(srv):
    """4 s of transfers by scripts and functions (declared, undeclared,
    and undeclared only on some runs, so mid-run conflicts happen), with
    sums, SCRIPT FLUSH, FUNCTION LOAD REPLACE, BGSAVE and EXEC around
    EVAL in between: the total never changes and the server stays up."""
    n, total = 16, 1600
    setup = srv.client(decode_responses=True)
    setup.flushall()
    setup.execute_command("FUNCTION", "FLUSH")
    for i in range(n):
        setup.set("acct:%d" % i, total // n)
    keys = ["acct:%d" % i for i in range(n)]
    setup.execute_command("FUNCTION", "LOAD", "REPLACE", STRESS_LIB)
    # First runs on declared keys only: the next ones run in parallel.
    setup.eval(STRESS_LATE, 1, keys[0], 0, 1, "0")
    setup.eval(TRANSFER, 2, keys[0], keys[1])
    setup.execute_command("FCALL", "fmove", 2, keys[0], keys[1])
    deadline = time.time() + 4
    sums, conflicts = [], [0]

    def mover(kind):
        def fn():
            c = srv.client(decode_responses=True, socket_timeout=30)
            rnd = random.Random()
            while time.time() < deadline:
                i, j = rnd.sample(range(n), 2)
                try:
                    if kind == "eval":
                        r = c.eval(TRANSFER, 2, keys[i], keys[j])
                    elif kind == "late":
                        r = c.eval(STRESS_LATE, 1, keys[i], 0, j, "1" if rnd.random() < 0.3 else "0")
                    elif kind == "fcall":
                        r = c.execute_command("FCALL", "fmove", 2, keys[i], keys[j])
                    else:
                        r = c.execute_command("FCALL", "fmove_named", 0, i, j)
                except redis.ResponseError as e:
                    # Between a FUNCTION LOAD REPLACE's unlink and relink
                    # nothing is missing (one exclusive section); a flush
                    # of the script cache only costs EVAL a recompile.
                    raise AssertionError("unexpected error: %s" % e)
                if r == -1:
                    conflicts[0] += 1
        return fn

    def reader():
        c = srv.client(decode_responses=True, socket_timeout=30)
        while time.time() < deadline:
            sums.append(c.eval(SUM_DECLARED, n, *keys))
            sums.append(c.eval(SUM_UNDECLARED, 0, n))

    def admin():
        c = srv.client(decode_responses=True, socket_timeout=30)
        k = 0
        while time.time() < deadline:
            k += 1
            if k % 3 == 0:
                c.script_flush()
            elif k % 3 == 1:
                c.execute_command("FUNCTION", "LOAD", "REPLACE", STRESS_LIB)
            else:
                try:
                    c.bgsave()
                except redis.ResponseError:
                    pass  # one already running
            p = c.pipeline(transaction=True)
            p.eval(TRANSFER, 2, keys[k % n], keys[(k + 1) % n])
            p.get(keys[0])
            p.execute()
            time.sleep(0.1)

    run_threads([mover("eval")] * 2 + [mover("late")] * 2 + [mover("fcall"), mover("named"), reader, admin])
    assert sums and set(sums) == {total}, sorted(set(sums))
    assert sum(int(setup.get(k)) for k in keys) == total
    assert setup.ping()
    deadline_save = time.time() + 10
    while setup.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline_save:
        time.sleep(0.05)
    setup.execute_command("FUNCTION", "FLUSH")
