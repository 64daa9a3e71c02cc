"""MULTI / EXEC / DISCARD / WATCH / UNWATCH (issue 5).

Redis semantics: queued-command errors abort EXEC with EXECABORT, runtime
errors do not; WATCHed keys touched by any client on any thread (writes,
expiry, FLUSHALL/FLUSHDB, SWAPDB) make EXEC return a null array.  The
server runs with 4 worker threads so that connections land on different
workers, and the isolation tests check that no client anywhere sees a
partial transaction."""
import threading
import time

import pytest

from conftest import MODE, Resp, Server


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


def conn(server, proto=2):
    c = Resp(server.port, timeout=10)
    if proto == 3:
        c.call("HELLO", "3")
    return c


@pytest.fixture
def c(server):
    x = conn(server)
    x.call("FLUSHALL")
    yield x
    x.close()


def test_basics(c):
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "a", "1") == "QUEUED"
    assert c.call("INCR", "a") == "QUEUED"
    assert c.call("GET", "a") == "QUEUED"
    assert c.call("EXEC") == ["OK", 2, b"2"]
    assert c.call("GET", "a") == b"2"


def test_empty_transaction(c):
    assert c.call("MULTI") == "OK"
    assert c.call("EXEC") == []


def test_discard(c):
    c.call("SET", "x", "1")
    c.call("MULTI")
    c.call("INCR", "x")
    assert c.call("DISCARD") == "OK"
    assert c.call("GET", "x") == b"1"
    assert c.call("DISCARD") == ("error", "ERR DISCARD without MULTI")


def test_exec_without_multi(c):
    assert c.call("EXEC") == ("error", "ERR EXEC without MULTI")


def test_nested_multi(c):
    c.call("MULTI")
    assert c.call("MULTI") == ("error", "ERR MULTI calls can not be nested")
    c.call("SET", "k", "v")
    # Nested MULTI does not poison the transaction.
    assert c.call("EXEC") == ["OK"]


def test_watch_inside_multi(c):
    c.call("MULTI")
    assert c.call("WATCH", "x") == ("error", "ERR WATCH inside MULTI is not allowed")
    assert c.call("EXEC") == []


def test_queue_errors_abort(c):
    c.call("SET", "foo", "bar")
    c.call("MULTI")
    assert c.call("SET", "x") == ("error", "ERR wrong number of arguments for 'set' command")
    assert c.call("NOSUCHCOMMAND", "a")[0] == "error"
    assert c.call("SET", "foo", "baz") == "QUEUED"
    assert c.call("EXEC") == ("error", "EXECABORT Transaction discarded because of previous errors.")
    assert c.call("GET", "foo") == b"bar"
    # MULTI state is cleared after the abort.
    assert c.call("EXEC") == ("error", "ERR EXEC without MULTI")


def test_runtime_errors_do_not_abort(c):
    c.call("SET", "s", "str")
    c.call("MULTI")
    c.call("LPUSH", "s", "x")
    c.call("INCR", "n")
    r = c.call("EXEC")
    assert r[0] == ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert r[1] == 1


def test_no_multi_commands(c):
    c.call("MULTI")
    # WATCH is not queued; SUBSCRIBE/... are queued in Redis 7; SHUTDOWN is no-multi
    # only in newer versions, so use a stable one: MULTI nested already tested.
    assert c.call("PING") == "QUEUED"
    assert c.call("EXEC") == ["PONG"]


def test_select_inside_multi(c):
    c.call("SELECT", "9")
    c.call("MULTI")
    c.call("SELECT", "10")
    c.call("SET", "k", "in10")
    c.call("SELECT", "9")
    c.call("SET", "k", "in9")
    assert c.call("EXEC") == ["OK", "OK", "OK", "OK"]
    assert c.call("GET", "k") == b"in9"
    c.call("SELECT", "10")
    assert c.call("GET", "k") == b"in10"
    c.call("FLUSHALL")
    c.call("SELECT", "0")


def test_blocking_command_in_multi_does_not_block(c):
    c.call("MULTI")
    c.call("BLPOP", "empty", "0")
    c.call("LPUSH", "l", "a")
    assert c.call("EXEC") == [None, 1]


def test_watch_unmodified(c):
    c.call("SET", "x", "30")
    assert c.call("WATCH", "x") == "OK"
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]


def test_watch_modified_by_other_client(server, c):
    other = conn(server)
    c.call("SET", "x", "30")
    c.call("WATCH", "a", "b", "x", "k", "z")
    other.call("SET", "x", "40")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    other.close()


def test_watch_modified_by_self(c):
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    c.call("SET", "x", "40")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None


def test_watch_resp3_null(server):
    c3 = conn(server, proto=3)
    c3.call("FLUSHALL")
    c3.call("WATCH", "x")
    c3.call("SET", "x", "1")
    c3.call("MULTI")
    c3.call("PING")
    # RESP3 null
    c3.send("EXEC")
    assert c3._line() == b"_"
    c3.close()


def test_watch_sort_store_empty(c):
    c.call("DEL", "x", "lst")
    c.call("WATCH", "x")
    c.call("SET", "x", "foo")  # creates x; but then the test in Redis uses SORT STORE
    c.call("UNWATCH")
    c.call("LPUSH", "x", "1")
    c.call("DEL", "x")
    c.call("SET", "x", "1")
    c.call("WATCH", "x")
    c.call("SORT", "lst", "STORE", "x")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None


def test_after_exec_keys_unwatched(server, c):
    other = conn(server)
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]
    other.call("SET", "x", "40")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]
    other.close()


def test_after_failed_exec_keys_unwatched(c):
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    c.call("SET", "x", "40")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    c.call("SET", "x", "40")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]


def test_unwatch(c):
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    c.call("SET", "x", "40")
    assert c.call("UNWATCH") == "OK"
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]
    assert c.call("UNWATCH") == "OK"


def test_discard_clears_watch(server, c):
    other = conn(server)
    c.call("SET", "x", "10")
    c.call("WATCH", "x")
    other.call("SET", "x", "20")
    c.call("MULTI")
    c.call("DISCARD")
    c.call("MULTI")
    c.call("INCR", "x")
    assert c.call("EXEC") == [21]
    c.call("WATCH", "x")
    c.call("MULTI")
    c.call("DISCARD")
    other.call("SET", "x", "30")
    c.call("MULTI")
    c.call("INCR", "x")
    assert c.call("EXEC") == [31]
    other.close()


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_flush_touches_watched(server, c, flush):
    other = conn(server)
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    other.call(flush)
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    other.close()


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_flush_does_not_touch_absent(server, c, flush):
    other = conn(server)
    c.call("DEL", "x")
    c.call("WATCH", "x")
    other.call(flush)
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]
    other.close()


def test_swapdb_touches(server, c):
    c.call("SELECT", "0")
    c.call("SET", "x", "1")
    c.call("WATCH", "x")
    c.call("SWAPDB", "0", "1")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    # A key that does not exist in db 0 but exists in db 1.
    c.call("FLUSHALL")
    c.call("SELECT", "1")
    c.call("SET", "y", "1")
    c.call("SELECT", "0")
    c.call("WATCH", "y")
    c.call("SWAPDB", "0", "1")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    c.call("FLUSHALL")


def test_watch_remembers_db(server, c):
    other = conn(server)
    c.call("SELECT", "5")
    c.call("SET", "x", "30")
    c.call("WATCH", "x")
    c.call("SELECT", "1")
    c.call("SET", "x", "10")
    c.call("SELECT", "5")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") == ["PONG"]
    # modify the watched one (db 5) from another connection
    c.call("WATCH", "x")
    other.call("SELECT", "5")
    other.call("SET", "x", "1")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None
    c.call("FLUSHALL")
    c.call("SELECT", "0")
    other.close()


def test_watch_expire_touches(c):
    c.call("SET", "x", "foo")
    c.call("WATCH", "x")
    c.call("EXPIRE", "x", "10")
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None


def test_watch_key_expiring_fails_exec(c):
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.call("SET", "x", "foo", "PX", "50")
        c.call("WATCH", "x")
        time.sleep(0.1)
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") is None
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_watch_stale_key_does_not_fail(c):
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.call("SET", "x", "foo", "PX", "1")
        time.sleep(0.01)
        c.call("WATCH", "x")
        assert c.call("EXISTS", "x") == 0  # lazy deletion of a stale key
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") == ["PONG"]
        c.call("SET", "x", "foo", "PX", "1")
        time.sleep(0.01)
        c.call("WATCH", "x")
        c.call("FLUSHDB")
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") == ["PONG"]
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_watch_active_expiry(c):
    c.call("SET", "x", "foo", "PX", "30")
    c.call("WATCH", "x")
    deadline = time.time() + 5
    while c.call("DBSIZE") != 0 and time.time() < deadline:
        time.sleep(0.02)
    c.call("MULTI")
    c.call("PING")
    assert c.call("EXEC") is None


def test_client_list_multi_field(server, c):
    c.call("CLIENT", "SETNAME", "mx")
    other = conn(server)
    c.call("MULTI")
    c.call("SET", "a", "b")
    c.call("GET", "a")
    lst = other.call("CLIENT", "LIST").decode()
    line = [l for l in lst.splitlines() if "name=mx" in l][0]
    assert " multi=2 " in line
    assert "flags=x" in line
    c.call("EXEC")
    lst = other.call("CLIENT", "LIST").decode()
    line = [l for l in lst.splitlines() if "name=mx" in l][0]
    assert " multi=-1 " in line
    other.close()


def test_reset_discards(c):
    c.call("WATCH", "x")
    c.call("MULTI")
    c.call("SET", "x", "1")
    assert c.call("RESET") == "RESET"
    assert c.call("EXEC") == ("error", "ERR EXEC without MULTI")
    assert c.call("GET", "x") is None


def test_commandstats_count_queued_commands(c):
    c.call("CONFIG", "RESETSTAT")
    c.call("MULTI")
    c.call("SET", "a", "1")
    c.call("SET", "b", "2")
    c.call("EXEC")
    info = c.call("INFO", "commandstats").decode()
    line = [l for l in info.splitlines() if l.startswith("cmdstat_set:")][0]
    assert "calls=2," in line


# ------------------------------------------------------------ threads ---
def test_exec_is_isolated_across_threads(server):
    """A transaction moves one unit between two keys; readers on other
    threads must always see the sum unchanged (MGET is atomic too)."""
    setup = conn(server)
    setup.call("FLUSHALL")
    setup.call("MSET", "acct:a", "1000", "acct:b", "1000")
    stop = threading.Event()
    bad = []

    def mover(seed):
        m = conn(server)
        for i in range(400):
            m.call("MULTI")
            src, dst = ("acct:a", "acct:b") if (i + seed) % 2 else ("acct:b", "acct:a")
            m.call("DECR", src)
            m.call("INCR", dst)
            r = m.call("EXEC")
            assert isinstance(r, list) and len(r) == 2
        m.close()

    def reader():
        rd = conn(server)
        while not stop.is_set():
            a, b = rd.call("MGET", "acct:a", "acct:b")
            if int(a) + int(b) != 2000:
                bad.append((a, b))
        rd.close()

    readers = [threading.Thread(target=reader) for _ in range(2)]
    movers = [threading.Thread(target=mover, args=(k,)) for k in range(3)]
    for t in readers + movers:
        t.start()
    for t in movers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert bad == []
    a, b = setup.call("MGET", "acct:a", "acct:b")
    assert int(a) + int(b) == 2000
    setup.close()


def test_watch_optimistic_increment_across_threads(server):
    """The WATCH/GET/MULTI/SET/EXEC retry loop: concurrent clients on
    different threads, no lost update."""
    setup = conn(server)
    setup.call("FLUSHALL")
    setup.call("SET", "counter", "0")
    n_clients, per = 4, 60

    def worker():
        w = conn(server)
        done = 0
        while done < per:
            w.call("WATCH", "counter")
            v = int(w.call("GET", "counter"))
            w.call("MULTI")
            w.call("SET", "counter", str(v + 1))
            if w.call("EXEC") is not None:
                done += 1
        w.close()

    ts = [threading.Thread(target=worker) for _ in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert setup.call("GET", "counter") == str(n_clients * per).encode()
    setup.close()


def test_exec_with_keys_and_all_lock_commands(server, c):
    c.call("MSET", "k1", "1", "k2", "2")
    c.call("MULTI")
    c.call("KEYS", "k*")
    c.call("DBSIZE")
    c.call("SCAN", "0", "COUNT", "1000")
    c.call("RANDOMKEY")
    c.call("INCR", "k1")
    r = c.call("EXEC")
    assert sorted(r[0]) == [b"k1", b"k2"]
    assert r[1] == 2
    assert sorted(r[2][1]) == [b"k1", b"k2"]
    assert r[3] in (b"k1", b"k2")
    assert r[4] == 2


def test_exec_sort_by_pattern(c):
    c.call("RPUSH", "ids", "1", "2", "3")
    c.call("MSET", "w_1", "3", "w_2", "1", "w_3", "2", "obj_1", "a", "obj_2", "b", "obj_3", "c")
    c.call("MULTI")
    c.call("SORT", "ids", "BY", "w_*", "GET", "obj_*")
    assert c.call("EXEC") == [[b"b", b"c", b"a"]]


def test_exec_with_admin_commands_under_load(server):
    """CLIENT LIST / CONFIG GET / INFO inside EXEC (they ask every worker or
    lock slots themselves) while other threads run multi-key commands: no
    deadlock, every transaction completes."""
    stop = threading.Event()
    errors = []

    def hammer(seed):
        h = conn(server)
        i = 0
        while not stop.is_set():
            i += 1
            r = h.call("MSET", "h:%d:a" % seed, i, "h:%d:b" % (seed + 1), i, "zz%d" % (i % 50), i)
            if r != "OK":
                errors.append(r)
        h.close()

    ts = [threading.Thread(target=hammer, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    try:
        c = conn(server)
        for i in range(30):
            c.call("MULTI")
            c.call("SET", "tx:a", i)
            c.call("CLIENT", "LIST")
            c.call("INFO", "keyspace")
            c.call("CONFIG", "GET", "maxclients")
            c.call("SET", "tx:b", i)
            r = c.call("EXEC")
            assert isinstance(r, list) and len(r) == 5, r
            assert r[0] == "OK" and r[4] == "OK"
            assert b"cmd=exec" in r[1]
        c.close()
    finally:
        stop.set()
        for t in ts:
            t.join()
    assert errors == []


# ------------------------------------------------- lock context stress ---
def _crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _slot(key):
    return _crc16(key.encode()) % 16384


def test_scripts_with_undeclared_keys_vs_multikey_writers(server):
    """The deadlock-prone case: a script holds a high slot (declared) and
    reaches undeclared keys in lower slots, while other threads take the
    same slots in ascending order (MSET, EXEC) and SORT BY patterns.  Every
    command must finish (no deadlock) and every script must see its keys
    unchanged by others mid-script (atomicity)."""
    keys = sorted(("sk%d" % i for i in range(200)), key=_slot)
    low = keys[:6]
    high = keys[-1]
    setup = conn(server)
    setup.call("FLUSHALL")
    for k in low + [high]:
        setup.call("SET", k, "0")
    script = (
        "local v = redis.call('INCR', KEYS[1]) "
        "for i = 1, #ARGV do redis.call('SET', ARGV[i], v) end "
        "for i = 1, #ARGV do if tonumber(redis.call('GET', ARGV[i])) ~= v then return 0 end end "
        "return 1")
    stop = threading.Event()
    errors = []

    def scripter():
        s = conn(server)
        for _ in range(400):
            r = s.call("EVAL", script, "1", high, *reversed(low))
            if r != 1:
                errors.append(("script", r))
        s.close()

    def writer(seed):
        w = conn(server)
        i = 0
        while not stop.is_set():
            i += 1
            args = []
            for k in low + [high]:
                args += [k, str(i)]
            r = w.call("MSET", *args)
            if r != "OK":
                errors.append(("mset", r))
            w.call("MULTI")
            for k in low:
                w.call("INCR", k)
            w.call("SET", high, "1")
            r = w.call("EXEC")
            if not isinstance(r, list):
                errors.append(("exec", r))
        w.close()

    ws = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    ss = [threading.Thread(target=scripter) for _ in range(2)]
    for t in ws + ss:
        t.start()
    for t in ss:
        t.join(120)
    stop.set()
    for t in ws:
        t.join(30)
    assert not any(t.is_alive() for t in ws + ss), "deadlock: threads still running"
    assert errors == []
    setup.close()


def test_exec_rejected_while_script_busy(server):
    """EXEC arriving while a script is past busy-reply-threshold is
    rejected with EXECABORT naming BUSY, and the transaction is gone (no
    half of it runs); commands queued during the busy script abort EXEC."""
    runner, r2, admin = conn(server), conn(server), conn(server)
    admin.call("FLUSHALL")
    admin.call("CONFIG", "SET", "busy-reply-threshold", "10")
    try:
        admin.call("SET", "xx", "1")
        assert r2.call("MULTI") == "OK"
        assert r2.call("INCR", "xx") == "QUEUED"
        runner.send("EVAL", "while true do end", "0")
        time.sleep(0.2)
        assert r2.call("INCR", "xx")[1].startswith("BUSY")
        r = r2.call("EXEC")
        assert r[0] == "error" and r[1].startswith("EXECABORT Transaction discarded because of: BUSY"), r
        assert admin.call("SCRIPT", "KILL") == "OK"
        assert runner.read()[0] == "error"
        time.sleep(0.05)
        assert admin.call("GET", "xx") == b"1"
        assert r2.call("PING", "asdf") == b"asdf"  # no longer in MULTI
    finally:
        admin.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        for x in (runner, r2, admin):
            x.close()


@pytest.mark.skipif(MODE == "redis", reason="INFO fields of Redis 7.2 (Debian's redis-server is 7.0)")
def test_info_counts_watched_keys_and_watching_clients(server, c):
    def counts():
        f = dict(l.split(":", 1) for l in c.call("INFO", "clients").decode().split("\r\n") if ":" in l)
        return int(f["total_watched_keys"]), int(f["watching_clients"])
    a, b = conn(server), conn(server)
    assert counts() == (0, 0)
    assert a.call("WATCH", "k1", "k2", "k1") == "OK"
    assert counts() == (2, 1)
    assert b.call("WATCH", "k2", "k3") == "OK"
    assert counts() == (3, 2)
    b.call("SELECT", "1")
    assert b.call("WATCH", "k1") == "OK"  # another database: another key
    assert counts() == (4, 2)
    assert a.call("MULTI") == "OK" and a.call("EXEC") == []
    assert counts() == (3, 1)  # EXEC unwatches
    assert b.call("UNWATCH") == "OK"
    assert counts() == (0, 0)
    assert a.call("WATCH", "k9") == "OK"
    a.close()  # a client that goes unwatches too
    deadline = time.time() + 5
    while counts() != (0, 0) and time.time() < deadline:
        time.sleep(0.01)
    assert counts() == (0, 0)
    b.close()


def test_swapdb_bringing_a_stale_key_over_a_missing_watched_key_is_no_change(server, c):
    # WATCH compares each database before the swap with what it gets: a
    # missing key replaced by an expired one has not changed (Redis 7.0+).
    d = conn(server)
    assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    try:
        c.call("FLUSHALL")
        c.call("SET", "x", "foo", "PX", "1")
        time.sleep(0.01)
        d.call("SELECT", "1")
        assert d.call("WATCH", "x") == "OK"
        assert c.call("SWAPDB", "0", "1") == "OK"
        assert d.call("MULTI") == "OK" and d.call("PING") == "QUEUED"
        assert d.call("EXEC") == ["PONG"]
        # A live key replacing a missing watched one is a change.
        c.call("FLUSHALL")
        c.call("SET", "x", "live")
        assert d.call("WATCH", "x") == "OK"
        assert c.call("SWAPDB", "0", "1") == "OK"
        assert d.call("MULTI") == "OK" and d.call("PING") == "QUEUED"
        assert d.call("EXEC") is None
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.call("FLUSHALL")
    d.close()


def test_exec_is_judged_by_its_queued_commands_when_the_server_turns_replica():
    """A server that became a replica after the commands were queued: EXEC
    of a queued read aborts with MASTERDOWN when the link is down and
    replica-serve-stale-data is no, EXEC of a queued write with READONLY
    (Redis checks EXEC by its queued commands' flags)."""
    from helpers import free_port
    s = Server()
    try:
        c, admin = Resp(s.port), Resp(s.port)
        dead = str(free_port())  # nothing listens: the link stays down
        c.call("SET", "xx", "1")
        for stale, queued, err in (("no", ("GET", "xx"), "MASTERDOWN"), ("yes", ("SET", "xx", "2"), "READONLY")):
            assert admin.call("CONFIG", "SET", "replica-serve-stale-data", stale) == "OK"
            assert c.call("MULTI") == "OK"
            assert c.call(*queued) == "QUEUED"
            assert admin.call("REPLICAOF", "127.0.0.1", dead) == "OK"
            reply = c.call("EXEC")
            assert isinstance(reply, tuple) and reply[0] == "error", reply
            assert reply[1].startswith("EXECABORT Transaction discarded because of: " + err), reply
            assert admin.call("REPLICAOF", "NO", "ONE") == "OK"
        # Not stale: the same read runs.
        assert c.call("MULTI") == "OK" and c.call("GET", "xx") == "QUEUED"
        assert c.call("EXEC") == [b"1"]
    finally:
        assert s.stop() == 0
