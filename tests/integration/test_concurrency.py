"""Many clients in many threads on overlapping keys: every command must stay
atomic and counts must be exact.  HotKV runs with --threads 4 here; against
redis-server (single-threaded) the same checks hold trivially, which is what
makes them a valid specification."""
import random
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, Server, requires

THREADS = 8


@pytest.fixture(scope="module")
def mt_server():
    s = Server(threads=4)
    yield s
    assert s.stop() == 0, "server exited uncleanly, see %s" % s.dir


@pytest.fixture
def mr(mt_server):
    c = mt_server.client(decode_responses=True)
    c.flushall()
    yield c
    c.close()


def new_client(server):
    return server.client(decode_responses=True, socket_timeout=20)


def run_threads(fns):
    """Run each fn in its own thread; re-raise the first failure."""
    errors = []

    def wrap(fn):
        def inner():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return inner

    threads = [threading.Thread(target=wrap(fn)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "worker thread hung"
    if errors:
        raise errors[0]


@pytest.mark.skipif(IS_REDIS, reason="--threads is a HotKV-only option")
@pytest.mark.parametrize("threads", [1, 4])
def test_server_runs_with_threads_option(threads):
    s = Server(threads=threads)
    try:
        clients = [s.client(decode_responses=True) for _ in range(4)]
        for i, c in enumerate(clients):
            assert c.incr("n") == i + 1
        for c in clients:
            c.close()
    finally:
        assert s.stop() == 0


# ---------------------------------------------------------------------- INCR

def test_concurrent_incr_counts_are_exact(mt_server, mr):
    keys = ["ctr:a", "ctr:b", "ctr:c"]
    per_thread = 2000
    seen = {k: [] for k in keys}
    lock = threading.Lock()

    def worker():
        c = new_client(mt_server)
        mine = {k: [] for k in keys}
        for i in range(per_thread):
            k = keys[i % 3]
            mine[k].append(c.incr(k))
        c.close()
        with lock:
            for k in keys:
                seen[k].extend(mine[k])

    run_threads([worker] * THREADS)
    for idx, k in enumerate(keys):
        expected = THREADS * len(range(idx, per_thread, 3))
        assert int(mr.get(k)) == expected
        # Every INCR returned a distinct value: no two saw the same count.
        assert sorted(seen[k]) == list(range(1, expected + 1))


@requires("HINCRBY", "HGET")
def test_concurrent_pipelined_incrby_totals(mt_server, mr):
    def worker():
        c = new_client(mt_server)
        for _ in range(10):
            p = c.pipeline(transaction=False)
            for j in range(300):
                p.incrby("sum:%d" % (j % 4), 1)
                p.hincrby("h", "f%d" % (j % 2), 2)
            p.execute()
        c.close()

    run_threads([worker] * THREADS)
    total = THREADS * 10 * 300
    assert sum(int(mr.get("sum:%d" % i)) for i in range(4)) == total
    assert int(mr.hget("h", "f0")) + int(mr.hget("h", "f1")) == 2 * total


# ---------------------------------------------------------------- MSET/MGET

def test_mset_mget_are_atomic(mt_server, mr):
    keys = ["mk%d" % i for i in range(1, 11)]
    mr.mset({k: "init" for k in keys})
    stop = threading.Event()
    reads = [0]

    def writer(wid):
        def fn():
            c = new_client(mt_server)
            for i in range(400):
                c.mset({k: "w%d_%d" % (wid, i) for k in keys})
            c.close()
        return fn

    def reader():
        c = new_client(mt_server)
        while not stop.is_set():
            vals = c.mget(keys)
            assert len(set(vals)) == 1, "torn MGET: %r" % (vals,)
            reads[0] += 1
        c.close()

    readers = [threading.Thread(target=reader) for _ in range(3)]
    errors = []
    for t in readers:
        t.start()
    try:
        run_threads([writer(w) for w in range(4)])
    except BaseException as e:  # noqa: BLE001
        errors.append(e)
    stop.set()
    for t in readers:
        t.join(30)
    if errors:
        raise errors[0]
    assert reads[0] > 0
    final = mr.mget(keys)
    assert len(set(final)) == 1 and final[0].endswith("_399")


def test_msetnx_sets_all_or_nothing_under_contention(mt_server, mr):
    winners = []
    lock = threading.Lock()

    def worker(wid):
        def fn():
            c = new_client(mt_server)
            for i in range(100):
                # Overlapping key groups: group i shares keys with i+1.
                keys = ["nx:%d" % i, "nx:%d" % (i + 1)]
                if c.msetnx({k: "t%d" % wid for k in keys}):
                    with lock:
                        winners.append((i, wid))
            c.close()
        return fn

    run_threads([worker(w) for w in range(THREADS)])
    vals = mr.mget(["nx:%d" % i for i in range(101)])
    # Each successful MSETNX wrote both of its keys with the same owner.
    for i, wid in winners:
        assert vals[i] == "t%d" % wid and vals[i + 1] == "t%d" % wid
    # Successful groups never overlap.
    won = sorted(i for i, _ in winners)
    assert all(b - a >= 2 for a, b in zip(won, won[1:]))


# ----------------------------------------------------------------------- DEL

def test_multi_key_del_is_atomic(mt_server, mr):
    keys = ["d1", "d2", "d3"]
    stop = threading.Event()

    def setter():
        c = new_client(mt_server)
        for i in range(1500):
            c.mset({k: str(i) for k in keys})
        c.close()

    def deleter():
        c = new_client(mt_server)
        for _ in range(1500):
            n = c.delete(*keys)
            assert n in (0, 3), "DEL removed %d of 3 keys" % n
        c.close()

    def reader():
        c = new_client(mt_server)
        while not stop.is_set():
            vals = c.mget(keys)
            assert vals == [None] * 3 or len(set(vals)) == 1, vals
        c.close()

    rt = threading.Thread(target=reader)
    rt.start()
    try:
        run_threads([setter, deleter, deleter])
    finally:
        stop.set()
        rt.join(30)
    assert mr.exists(*keys) in (0, 3)


# -------------------------------------------------------------------- RENAME

def test_rename_under_concurrent_reads(mt_server, mr):
    mr.set("ra", "payload")
    stop = threading.Event()

    def renamer():
        c = new_client(mt_server)
        for _ in range(1000):
            c.rename("ra", "rb")
            c.rename("rb", "ra")
        c.close()

    def reader():
        c = new_client(mt_server)
        while not stop.is_set():
            a, b = c.mget(["ra", "rb"])
            assert sorted([a, b], key=lambda x: x is None) == ["payload", None], (a, b)
            assert c.exists("ra", "rb") == 1
        c.close()

    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        run_threads([renamer])
    finally:
        stop.set()
        for t in readers:
            t.join(30)
    assert mr.get("ra") == "payload" and mr.get("rb") is None


def test_racing_renames_never_lose_the_value(mt_server, mr):
    mr.set("x", "only")

    def worker(seed):
        def fn():
            rng = random.Random(seed)
            c = new_client(mt_server)
            for _ in range(500):
                src, dst = rng.choice([("x", "y"), ("y", "x")])
                try:
                    c.rename(src, dst)
                except redis.ResponseError as e:
                    assert str(e) == "no such key"
            c.close()
        return fn

    run_threads([worker(s) for s in range(4)])
    vals = mr.mget(["x", "y"])
    assert sorted(vals, key=lambda v: v is None) == ["only", None]
    assert mr.dbsize() == 1


# --------------------------------------------------------- SET NX ownership

def test_set_nx_has_exactly_one_winner_per_key(mt_server, mr):
    wins = []
    lock = threading.Lock()

    def worker(wid):
        def fn():
            c = new_client(mt_server)
            mine = [i for i in range(300) if c.set("lock:%d" % i, wid, nx=True)]
            c.close()
            with lock:
                wins.extend(mine)
        return fn

    run_threads([worker(w) for w in range(THREADS)])
    assert sorted(wins) == list(range(300))


# -------------------------------------------------------------- list queue

@requires("LPUSH", "RPOP", "LLEN")
def test_list_push_pop_delivers_each_item_once(mt_server, mr):
    producers, per_producer = 4, 500
    got = []
    lock = threading.Lock()
    done = threading.Event()

    def producer(pid):
        def fn():
            c = new_client(mt_server)
            for i in range(0, per_producer, 50):
                c.lpush("q", *["%d:%d" % (pid, j) for j in range(i, i + 50)])
            c.close()
        return fn

    def consumer():
        c = new_client(mt_server)
        mine = []
        while True:
            item = c.rpop("q")
            if item is None:
                if done.is_set() and c.llen("q") == 0:
                    break
                time.sleep(0.001)
                continue
            mine.append(item)
        c.close()
        with lock:
            got.extend(mine)

    consumers = [threading.Thread(target=consumer) for _ in range(3)]
    for t in consumers:
        t.start()
    try:
        run_threads([producer(p) for p in range(producers)])
    finally:
        done.set()
        for t in consumers:
            t.join(30)
    expected = sorted("%d:%d" % (p, j) for p in range(producers) for j in range(per_producer))
    assert sorted(got) == expected


# ------------------------------------------------- KEYS / DBSIZE / SCAN

def test_keys_dbsize_scan_while_writing(mt_server, mr):
    stable = ["stable:%d" % i for i in range(300)]
    mr.mset({k: "s" for k in stable})
    universe = set(stable) | {"churn:%d" % i for i in range(400)}
    stop = threading.Event()

    def writer(seed):
        def fn():
            rng = random.Random(seed)
            c = new_client(mt_server)
            for _ in range(1500):
                k = "churn:%d" % rng.randrange(400)
                if rng.random() < 0.6:
                    c.set(k, "v")
                else:
                    c.delete(k)
            c.close()
        return fn

    def observer():
        c = new_client(mt_server)
        while not stop.is_set():
            n = c.dbsize()
            assert len(stable) <= n <= len(universe), n
            keys = c.keys("*")
            assert len(keys) == len(set(keys))
            assert set(keys) <= universe
            assert set(stable) <= set(keys)
            scanned = set()
            cursor = 0
            while True:
                cursor, batch = c.scan(cursor=cursor, count=50)
                scanned.update(batch)
                if cursor == 0:
                    break
            assert scanned <= universe
            # SCAN guarantee: keys present for the whole scan are returned.
            assert set(stable) <= scanned, sorted(set(stable) - scanned)[:5]
            assert set(c.keys("stable:*")) == set(stable)
        c.close()

    obs = [threading.Thread(target=observer) for _ in range(2)]
    for t in obs:
        t.start()
    try:
        run_threads([writer(s) for s in range(4)])
    finally:
        stop.set()
        for t in obs:
            t.join(60)
    final_keys = set(mr.keys("*"))
    assert mr.dbsize() == len(final_keys)
    assert set(mr.scan_iter(count=100)) == final_keys


def test_dbsize_never_exceeds_distinct_keys_written(mt_server, mr):
    distinct = 200
    stop = threading.Event()
    maxima = []

    def writer(seed):
        def fn():
            rng = random.Random(seed)
            c = new_client(mt_server)
            for _ in range(1500):
                c.set("dk:%d" % rng.randrange(distinct), seed)
            c.close()
        return fn

    def watcher():
        c = new_client(mt_server)
        m = 0
        while not stop.is_set():
            m = max(m, c.dbsize())
        c.close()
        maxima.append(m)

    w = threading.Thread(target=watcher)
    w.start()
    try:
        run_threads([writer(s) for s in range(6)])
    finally:
        stop.set()
        w.join(30)
    assert maxima and maxima[0] <= distinct
    assert mr.dbsize() == len(mr.keys("dk:*")) <= distinct


# ------------------------------------------------------------------ FLUSHALL

@requires("LPUSH", "HSET", "SADD")
def test_flushall_while_others_write(mt_server, mr):
    stop = threading.Event()

    def writer(wid):
        def fn():
            c = new_client(mt_server)
            i = 0
            while not stop.is_set():
                c.set("s:%d:%d" % (wid, i % 50), i)
                c.incr("n:%d" % wid)
                c.lpush("l:%d" % wid, i)
                c.hset("h:%d" % wid, "f%d" % (i % 10), i)
                c.sadd("set:%d" % wid, i % 20)
                i += 1
            c.close()
        return fn

    def flusher():
        c = new_client(mt_server)
        for _ in range(20):
            assert c.flushall() is True
            time.sleep(0.02)
        c.close()
        stop.set()

    run_threads([writer(w) for w in range(6)] + [flusher])
    # Consistent afterwards: all views of the keyspace agree.
    keys = set(mr.keys("*"))
    assert mr.dbsize() == len(keys)
    assert set(mr.scan_iter(count=100)) == keys
    for k in keys:
        assert mr.type(k) in ("string", "list", "hash", "set")
    assert mr.flushall() is True
    assert mr.dbsize() == 0 and mr.keys("*") == []
    assert mr.set("after", "1") is True and mr.get("after") == "1"
    info = mr.info("keyspace")
    assert info.get("db0", {}).get("keys") == 1


def test_flushdb_only_affects_selected_db_under_load(mt_server, mr):
    stop = threading.Event()

    wrote = threading.Event()

    def writer_db1():
        c = mt_server.client(decode_responses=True, db=1)
        i = 0
        while not stop.is_set():
            c.set("one:%d" % (i % 100), i)
            wrote.set()
            i += 1
        c.close()

    c1 = mt_server.client(decode_responses=True, db=1)
    c1.flushdb()
    t = threading.Thread(target=writer_db1)
    t.start()
    try:
        assert wrote.wait(10)
        for _ in range(30):
            mr.mset({"zero:%d" % i: i for i in range(20)})
            assert mr.flushdb() is True
            assert mr.dbsize() == 0
    finally:
        stop.set()
        t.join(30)
    assert 0 < c1.dbsize() <= 100
    c1.flushdb()
    c1.close()


# ------------------------------------------------------------- many clients

def test_many_simultaneous_connections(mt_server, mr):
    conns = [new_client(mt_server) for _ in range(64)]
    for i, c in enumerate(conns):
        assert c.set("conn:%d" % i, i) is True

    def worker(idx):
        def fn():
            c = conns[idx]
            for j in range(50):
                assert c.get("conn:%d" % idx) == str(idx)
                c.incr("conn:total")
        return fn

    run_threads([worker(i) for i in range(len(conns))])
    assert int(mr.get("conn:total")) == 64 * 50
    assert int(mr.info("clients")["connected_clients"]) >= 65
    for c in conns:
        c.close()
