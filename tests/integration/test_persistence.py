"""RDB snapshots: SAVE, BGSAVE, LASTSAVE, save points, SHUTDOWN SAVE /
NOSAVE, SIGTERM, DEBUG RELOAD, the MISCONF write gate, INFO persistence,
start-up loading, and the point-in-time consistency of a BGSAVE taken while
clients on every worker thread keep writing."""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import BIN, MODE, Server

pytestmark = pytest.mark.skipif(MODE == "redis", reason="starts hotkv-server processes")


def start(d, *args, threads=2):
    return Server("--dir", d, *args, threads=threads)


def wait_bgsave(c, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = c.info("persistence")
        if info["rdb_bgsave_in_progress"] == 0:
            return info
        time.sleep(0.02)
    raise AssertionError("BGSAVE did not finish")


@pytest.fixture
def d():
    p = tempfile.mkdtemp(prefix="hotkv-persist-")
    yield p
    shutil.rmtree(p, ignore_errors=True)


def test_save_and_restart(d):
    s = start(d)
    c = s.client(decode_responses=True)
    c.set("s", "v")
    c.set("n", 12345)
    c.rpush("l", *[str(i) for i in range(300)])
    c.hset("h", mapping={"f%d" % i: i for i in range(10)})
    c.sadd("st", 1, 2, 3)
    c.zadd("z", {"a": 1.5, "b": 2})
    c.set("ttl", "x", px=600000)
    c.select(3)
    c.set("in3", "yes")
    before = c.lastsave()
    time.sleep(1.1)
    assert c.save() is True
    assert c.lastsave() > before
    assert c.info("persistence")["rdb_changes_since_last_save"] == 0
    assert os.path.exists(os.path.join(d, "dump.rdb"))
    assert s.stop() == 0
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        assert c.get("s") == "v" and c.get("n") == "12345"
        assert c.lrange("l", 0, -1) == [str(i) for i in range(300)]
        assert c.hgetall("h") == {"f%d" % i: str(i) for i in range(10)}
        assert c.smembers("st") == {"1", "2", "3"}
        assert c.zrange("z", 0, -1, withscores=True) == [("a", 1.5), ("b", 2.0)]
        assert 590000 < c.pttl("ttl") <= 600000
        assert c.dbsize() == 7
        c.select(3)
        assert c.get("in3") == "yes"
        info = c.info("persistence")
        assert info["rdb_last_load_keys_loaded"] == 8
    finally:
        assert s.stop() == 0


def test_bgsave_reports_and_counts(d):
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        c.mset({"k%d" % i: i for i in range(1000)})
        assert c.info("persistence")["rdb_changes_since_last_save"] > 0
        forks = c.info("stats")["total_forks"]
        saves = c.info("persistence")["rdb_saves"]
        assert c.bgsave() is True
        info = wait_bgsave(c)
        assert info["rdb_last_bgsave_status"] == "ok"
        assert info["rdb_saves"] == saves + 1
        assert info["rdb_changes_since_last_save"] == 0
        assert info["rdb_last_bgsave_time_sec"] >= 0
        st = c.info("stats")
        assert st["total_forks"] == forks + 1
        assert st["latest_fork_usec"] > 0
        for f in ("current_cow_size", "rdb_last_cow_size", "current_cow_peak"):
            assert f in info
    finally:
        s.stop()


def test_bgsave_while_one_runs(d):
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        c.mset({"k%d" % i: i for i in range(200)})
        c.config_set("rdb-key-save-delay", 5000)  # 5 ms per key: about a second
        c.bgsave()
        assert c.info("persistence")["rdb_bgsave_in_progress"] == 1
        with pytest.raises(redis.ResponseError, match="Background save already in progress"):
            c.bgsave()
        with pytest.raises(redis.ResponseError, match="Background save already in progress"):
            c.execute_command("BGSAVE", "SCHEDULE")
        with pytest.raises(redis.ResponseError, match="Background save already in progress"):
            c.save()
        with pytest.raises(redis.ResponseError, match="syntax error"):
            c.execute_command("BGSAVE", "NOW")
        assert c.info("persistence")["rdb_current_bgsave_time_sec"] >= 0
        c.config_set("rdb-key-save-delay", 0)
        wait_bgsave(c)
    finally:
        s.stop()


def test_info_shows_the_childs_progress(d):
    """current_save_keys_total is the dataset at the fork, _processed what
    the child has written (Redis 7), and all three fields are 0 without a
    child."""
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        c.mset({"k%d" % i: i for i in range(400)})
        p = c.info("persistence")
        assert (p["current_fork_perc"], p["current_save_keys_processed"], p["current_save_keys_total"]) == (0, 0, 0)
        c.config_set("rdb-key-save-delay", 2000)  # 2 ms per key: about a second
        c.bgsave()
        c.set("after-fork", 1)  # not in this save's total

        def moving():
            p = c.info("persistence")
            return p["current_save_keys_total"] == 400 and 0 < p["current_save_keys_processed"] < 400
        deadline = time.time() + 5
        while not moving() and time.time() < deadline:
            time.sleep(0.02)
        p = c.info("persistence")
        assert p["current_save_keys_total"] == 400 and 0 < p["current_save_keys_processed"] < 400, p
        assert abs(p["current_fork_perc"] - p["current_save_keys_processed"] / 4.0) < 5
        c.config_set("rdb-key-save-delay", 0)
        p = wait_bgsave(c)
        assert (p["current_fork_perc"], p["current_save_keys_processed"], p["current_save_keys_total"]) == (0, 0, 0)
    finally:
        s.stop()


def test_writes_continue_during_bgsave_and_snapshot_is_point_in_time(d):
    """Four clients (spread over four worker threads) each write their own
    increasing sequence while a slow BGSAVE runs.  Writes must keep being
    acknowledged during the save, and the snapshot must hold, for every
    client, exactly a prefix 1..m of its sequence (a point in time: no
    later write without every earlier one), and every pair written by one
    MSET together."""
    s = start(d, "--rdb-key-save-delay", "300", threads=4)
    c = s.client(decode_responses=True)
    c.mset({"fill:%d" % i: "x" * 32 for i in range(3000)})  # ~1 s of saving
    stop = threading.Event()
    acked = {}
    during = {}
    errors = []

    def writer(w):
        cc = s.client(decode_responses=True)
        n = 0
        try:
            while not stop.is_set():
                n += 1
                cc.mset({"w%d:{%d}a" % (w, n): n, "w%d:{%d}b" % (w, n): n})
                cc.set("w%d:%d" % (w, n), n)
                acked[w] = n
                if c_in_progress[0]:
                    during[w] = during.get(w, 0) + 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    c_in_progress = [False]
    ts = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in ts:
        t.start()
    time.sleep(0.2)
    c_in_progress[0] = True
    c.bgsave()
    wait_bgsave(c, 60)
    c_in_progress[0] = False
    stop.set()
    for t in ts:
        t.join()
    assert not errors, errors
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert all(during.get(w, 0) > 10 for w in range(4)), during
    s.stop()
    shutil.copy(os.path.join(d, "dump.rdb"), os.path.join(d, "snap.rdb"))
    s = start(d, "--dbfilename", "snap.rdb")
    c = s.client(decode_responses=True)
    try:
        for w in range(4):
            keys = c.keys("w%d:*" % w)
            singles = sorted(int(k.split(":")[1]) for k in keys if "{" not in k)
            m = len(singles)
            assert singles == list(range(1, m + 1)), "client %d: not a prefix" % w
            # The pairs written before each SET are there too, and the pair
            # of write m+1 at most (its SET may not have happened yet).
            pairs = sorted(int(k.split("{")[1].split("}")[0]) for k in keys if k.endswith("a"))
            assert pairs in (list(range(1, m + 1)), list(range(1, m + 2))), "client %d" % w
            for n in pairs:
                assert c.get("w%d:{%d}a" % (w, n)) == c.get("w%d:{%d}b" % (w, n)) == str(n)
            assert 0 < m < acked[w]
    finally:
        s.stop()


def test_save_points(d):
    s = start(d, "--save", "1 3")
    c = s.client(decode_responses=True)
    try:
        assert c.config_get("save") == {"save": "1 3"}
        saves = c.info("persistence")["rdb_saves"]
        c.set("a", 1)
        c.set("b", 2)
        time.sleep(1.5)
        assert c.info("persistence")["rdb_saves"] == saves  # 2 changes < 3
        c.set("c", 3)
        deadline = time.time() + 5
        while c.info("persistence")["rdb_saves"] == saves and time.time() < deadline:
            time.sleep(0.05)
        assert c.info("persistence")["rdb_saves"] == saves + 1
        wait_bgsave(c)
        assert os.path.exists(os.path.join(d, "dump.rdb"))
    finally:
        s.stop()


def test_save_config_forms(d):
    s = start(d, "--save", "3600 1", "--save", "300 100")
    c = s.client(decode_responses=True)
    try:
        assert c.config_get("save") == {"save": "3600 1 300 100"}
        c.config_set("save", "60 10000")
        assert c.config_get("save") == {"save": "60 10000"}
        c.config_set("save", "")
        assert c.config_get("save") == {"save": ""}
        for bad in ("1", "a b", "10 -1"):
            with pytest.raises(redis.ResponseError):
                c.config_set("save", bad)
        assert c.config_get("save") == {"save": ""}
        assert c.config_get("rdb-version") == {"rdb-version": "11"}
        c.config_set("rdb-version", 10)
        with pytest.raises(redis.ResponseError):
            c.config_set("rdb-version", 9)
        for p in ("rdbcompression", "rdbchecksum", "stop-writes-on-bgsave-error"):
            assert c.config_get(p) == {p: "yes"}
    finally:
        s.stop()


def test_shutdown_save_nosave_and_sigterm(d):
    path = os.path.join(d, "dump.rdb")
    # No save points: a plain shutdown writes nothing, SHUTDOWN SAVE does.
    s = start(d)
    s.client().set("k", "v1")
    s.stop()
    assert not os.path.exists(path)
    s = start(d)
    c = s.client()
    c.set("k", "v2")
    c.shutdown(save=True)  # redis-py swallows the closed connection
    s.proc.wait(10)
    assert os.path.exists(path)
    # Save points and SHUTDOWN NOSAVE: the file keeps v2.
    s = start(d, "--save", "3600 1")
    c = s.client(decode_responses=True)
    assert c.get("k") == "v2"
    c.set("k", "v3")
    c.shutdown(nosave=True)
    s.proc.wait(10)
    s = start(d, "--save", "3600 1")
    c = s.client(decode_responses=True)
    assert c.get("k") == "v2"
    # SIGTERM with save points: saved.
    c.set("k", "v4")
    assert s.stop() == 0
    with open(os.path.join(s.dir, "server.log")) as f:
        assert "Saving the final RDB snapshot" in f.read()
    s = start(d)
    try:
        assert s.client().get("k") == b"v4"
    finally:
        s.stop()


def test_debug_reload(d):
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        c.set("a", "1")
        c.rpush("l", "x", "y")
        c.set("t", "z", ex=100)
        assert c.execute_command("DEBUG", "RELOAD") in (True, "OK")
        assert c.get("a") == "1" and c.lrange("l", 0, -1) == ["x", "y"]
        assert 0 < c.ttl("t") <= 100
        assert os.path.exists(os.path.join(d, "dump.rdb"))
        # NOSAVE loads the file as it is: the write since is gone.
        c.set("a", "2")
        c.set("new", "1")
        assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") in (True, "OK")
        assert c.get("a") == "1" and c.get("new") is None
        with pytest.raises(redis.ResponseError):
            c.execute_command("DEBUG", "RELOAD", "BOGUS")
    finally:
        s.stop()


def test_misconf_after_failed_bgsave(d):
    s = start(d, "--save", "3600 1")
    c = s.client(decode_responses=True)
    gone = os.path.join(d, "gone")
    os.mkdir(gone)
    try:
        c.set("k", "v")
        c.config_set("dir", gone)
        os.rmdir(gone)  # the child cannot create its temp file
        c.bgsave()
        info = wait_bgsave(c)
        assert info["rdb_last_bgsave_status"] == "err"
        with pytest.raises(redis.ResponseError, match="^MISCONF"):
            c.set("k", "w")
        with pytest.raises(redis.ResponseError, match="^MISCONF"):
            c.ping()
        assert c.get("k") == "v"  # reads still work
        c.config_set("stop-writes-on-bgsave-error", "no")
        assert c.set("k", "w")
        c.config_set("stop-writes-on-bgsave-error", "yes")
        c.config_set("dir", d)
        assert c.save()
        assert c.set("k", "x")  # a good save clears the gate
        assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    finally:
        c.config_set("save", "")
        s.stop()


def test_corrupt_file_refused_at_startup(d):
    s = start(d)
    c = s.client()
    c.mset({"k%d" % i: "v" * 100 for i in range(100)})
    c.save()
    s.stop()
    path = os.path.join(d, "dump.rdb")
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    log = os.path.join(d, "start.log")
    p = subprocess.run([BIN, "--port", "0", "--dir", d, "--logfile", log, "--save", ""], timeout=20)
    assert p.returncode != 0
    text = open(log).read()
    assert "offset" in text.lower(), text
    # A flipped byte in the middle: the checksum (or a bad value) refuses it.
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(bad))
    p = subprocess.run([BIN, "--port", "0", "--dir", d, "--logfile", log, "--save", ""], timeout=20)
    assert p.returncode != 0
    # Only the checksum spoilt: Redis's words "RDB CRC error" on the last
    # lines, after "Server initialized" (the order tools wait on).
    bad = bytearray(data)
    bad[-1] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(bad))
    os.unlink(log)
    p = subprocess.run([BIN, "--port", "0", "--dir", d, "--logfile", log, "--save", ""], timeout=20)
    assert p.returncode != 0
    text = open(log).read()
    last = text.splitlines()[-2:]
    assert "RDB CRC error" in last[0] and "Terminating server after rdb file reading failure." in last[1], text
    assert text.index("Server initialized") < text.index("RDB CRC error")


def test_flushall_stops_a_bgsave(d):
    """FLUSHALL kills a BGSAVE under way (it would write the dataset just
    emptied), as Redis 7: the change count stays, and BGSAVE works after."""
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        c.execute_command("DEBUG", "POPULATE", 5000)
        c.config_set("rdb-key-save-delay", 1000)  # 1 ms per key: 5 s
        c.bgsave()
        assert c.info("persistence")["rdb_bgsave_in_progress"] == 1
        t0 = time.time()
        assert c.flushall() is True
        info = wait_bgsave(c, timeout=2)
        assert time.time() - t0 < 2
        assert info["rdb_changes_since_last_save"] > 999
        assert info["rdb_last_bgsave_status"] == "ok"
        assert c.set("x", "xx") is True
        c.config_set("rdb-key-save-delay", 0)
        c.bgsave()
        assert wait_bgsave(c)["rdb_changes_since_last_save"] == 0
        with open(os.path.join(s.dir, "server.log")) as f:
            assert "Killing running background saving child" in f.read()
    finally:
        s.stop()


def test_info_persistence_fields(d):
    s = start(d)
    c = s.client(decode_responses=True)
    try:
        info = c.info("persistence")
        for f in ("loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
                  "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec",
                  "rdb_saves", "rdb_last_cow_size", "current_cow_size", "aof_enabled",
                  "aof_rewrite_in_progress", "aof_last_bgrewrite_status", "aof_last_write_status"):
            assert f in info, f
        assert int(c.lastsave().timestamp()) == info["rdb_last_save_time"]
        c.set("x", 1)
        c.incr("x")
        assert c.info("persistence")["rdb_changes_since_last_save"] >= 2
    finally:
        s.stop()


def test_reload_values_around_the_read_buffer_size(d):
    """Strings longer than half the loader's 256 KiB read buffer are read
    straight into place; when the buffer already held all of such a value
    the loader copied past it (a 150 KB string then a small key crashed
    the load).  Sizes around every boundary, each followed by small keys."""
    s = start(d)
    c = s.client()
    try:
        sizes = [128 * 1024 - 1, 128 * 1024, 128 * 1024 + 1, 150000, 200000, 256 * 1024 - 1, 256 * 1024,
                 256 * 1024 + 1, 300000, 1 << 20]
        vals = {}
        for i, n in enumerate(sizes):
            v = os.urandom(n)
            vals[b"big:%d" % i] = v
            vals[b"small:%d" % i] = b"x" * (i + 1)
        for k, v in vals.items():
            c.set(k, v)
        assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
        for k, v in vals.items():
            assert c.get(k) == v, k
        s.stop()
        s = start(d)  # and from the file at start-up
        c = s.client()
        for k, v in vals.items():
            assert c.get(k) == v, k
    finally:
        s.stop()
