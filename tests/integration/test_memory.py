"""MEMORY command family and the INFO memory / eviction fields.

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis runs every test
here against it).  Reply shapes, key names and order, error texts and the
INFO field names are Redis's; the figures themselves are checked for being
real (they move with the data, add up, and stay in sane ratios), not equal.

MEMORY USAGE is compared with the figures redis-server 7.0.15 reports for
the same values (REDIS_USAGE below, measured with SAMPLES 0): HotKV must be
within a factor of 2 either way.  The differences are layout, not
accounting: a HotKV key is one allocation (header, key and small values
together) plus its share of its slot's table, which for a key alone in its
slot is the whole small table (64 bytes), so tiny keys read higher than in
Redis and collections of small elements lower (listpacks inline, no
per-element robj)."""
import socket
import time

import pytest

from conftest import MODE, Resp, Server
from helpers import arity_error as arity, parse_info, wait_until

SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")

STATS_KEYS = [
    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
    "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
    "functions.caches",
    # db.N maps go here, one per non-empty database
    "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes",
    "dataset.percentage", "peak.percentage", "allocator.allocated", "allocator.active",
    "allocator.resident", "allocator-fragmentation.ratio", "allocator-fragmentation.bytes",
    "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes",
    "fragmentation", "fragmentation.bytes",
]
DOUBLE_KEYS = {
    "dataset.percentage", "peak.percentage", "allocator-fragmentation.ratio",
    "allocator-rss.ratio", "rss-overhead.ratio", "fragmentation",
}
DB_KEYS = ["overhead.hashtable.main", "overhead.hashtable.expires", "overhead.hashtable.slot-to-keys"]

# redis-server 7.0.15's INFO memory fields, in its order.
INFO_MEMORY_FIELDS = [
    "used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human",
    "used_memory_peak", "used_memory_peak_human", "used_memory_peak_perc",
    "used_memory_overhead", "used_memory_startup", "used_memory_dataset",
    "used_memory_dataset_perc", "allocator_allocated", "allocator_active",
    "allocator_resident", "total_system_memory", "total_system_memory_human",
    "used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human",
    "used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions",
    "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
    "used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts",
    "used_memory_scripts_human", "maxmemory", "maxmemory_human", "maxmemory_policy",
    "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
    "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes",
    "mem_fragmentation_ratio", "mem_fragmentation_bytes", "mem_not_counted_for_evict",
    "mem_replication_backlog", "mem_clients_slaves", "mem_clients_normal",
    "mem_cluster_links", "mem_aof_buffer", "mem_allocator", "active_defrag_running",
    "lazyfree_pending_objects", "lazyfreed_objects",
]
INFO_STATS_EVICTION_FIELDS = [
    "evicted_keys", "evicted_clients", "total_eviction_exceeded_time",
    "current_eviction_exceeded_time",
]


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def pairs(reply):
    """A RESP2 flat list or a RESP3 map as an ordered list of (str, value)."""
    if isinstance(reply, dict):
        return [(text(k), v) for k, v in reply.items()]
    assert isinstance(reply, list) and len(reply) % 2 == 0, reply
    return [(text(k), v) for k, v in zip(reply[0::2], reply[1::2])]


def stats(c):
    """MEMORY STATS as {key: value} with db.N maps as dicts and doubles as
    floats, whatever the protocol."""
    out = {}
    for k, v in pairs(c.call("MEMORY", "STATS")):
        if k.startswith("db."):
            v = dict(pairs(v))
        elif k in DOUBLE_KEYS:
            v = float(v)
        out[k] = v
    return out


def info(c, section="memory"):
    reply = c.call("INFO", section)
    if isinstance(reply, tuple) and reply[0] == "verbatim":
        reply = reply[2]
    return parse_info(reply)[None]


def num(v):
    return float(v.rstrip("%")) if isinstance(v, str) else v


def allocator_is_jemalloc(c):
    return info(c)["mem_allocator"].startswith("jemalloc")


def fill(c, n, size, prefix="k"):
    """n string keys of size bytes, pipelined."""
    val = b"x" * size
    for start in range(0, n, 200):
        batch = range(start, min(n, start + 200))
        for i in batch:
            c.send("SET", "%s%d" % (prefix, i), val)
        for _ in batch:
            assert c.read() == "OK"


# ---------------------------------------------------------------- HELP ---

def test_memory_help(resp):
    lines = resp.call("MEMORY", "HELP")
    assert lines == [
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    ]


def test_memory_errors(resp):
    assert resp.call("MEMORY") == arity("memory")
    assert resp.call("MEMORY", "FOO") == ("error", "ERR unknown subcommand 'FOO'. Try MEMORY HELP.")
    for sub in ("STATS", "DOCTOR", "MALLOC-STATS", "PURGE", "HELP"):
        assert resp.call("MEMORY", sub, "x") == arity("memory|%s" % sub.lower())
    assert resp.call("MEMORY", "USAGE") == arity("memory|usage")


def test_memory_command_table(resp):
    subs = {}
    for entry in resp.call("COMMAND", "INFO", "memory")[0][9]:
        subs[text(entry[0])] = entry
    assert set(subs) == {"memory|doctor", "memory|help", "memory|malloc-stats",
                         "memory|purge", "memory|stats", "memory|usage"}
    for name, e in subs.items():
        assert e[1] == (-3 if name == "memory|usage" else 2), name
    assert [text(f) for f in subs["memory|usage"][2]] == ["readonly"]
    assert subs["memory|usage"][3:6] == [2, 2, 1]
    for name in ("memory|stats", "memory|doctor", "memory|malloc-stats", "memory|purge"):
        assert subs[name][2] == [], name  # no flags, as Redis
    docs = resp.call("COMMAND", "DOCS", "memory")
    sub_docs = dict(pairs(dict(pairs(docs))["memory"]))
    sub_docs = dict(pairs(sub_docs["subcommands"]))
    for name in subs:
        d = dict(pairs(sub_docs[name]))
        assert d.get("summary"), name
        assert text(d["group"]) == "server"


# --------------------------------------------------------------- USAGE ---

def test_usage_errors(resp):
    resp.call("SET", "k", "v")
    assert resp.call("MEMORY", "USAGE", "k", "SAMPLES", "-1") == SYNTAX
    assert resp.call("MEMORY", "USAGE", "k", "SAMPLES", "x") == NOT_INT
    assert resp.call("MEMORY", "USAGE", "k", "SAMPLES") == SYNTAX
    assert resp.call("MEMORY", "USAGE", "k", "samples", "1", "FOO") == SYNTAX
    # Options are checked before the key is looked up.
    assert resp.call("MEMORY", "USAGE", "missing", "SAMPLES", "-1") == SYNTAX
    usage = resp.call("MEMORY", "USAGE", "k")
    assert resp.call("MEMORY", "USAGE", "k", "SAMPLES", "0") == usage
    assert resp.call("MEMORY", "USAGE", "k", "samples", "0", "SAMPLES", "3") == usage


def test_usage_missing_key(resp, resp3):
    assert resp.call("MEMORY", "USAGE", "nokey") is None
    assert resp3.call("MEMORY", "USAGE", "nokey") is None


def test_usage_other_db(resp):
    resp.call("SELECT", "5")
    try:
        resp.call("SET", "k5", "v" * 100)
        assert resp.call("MEMORY", "USAGE", "k5") > 100
        resp.call("SELECT", "0")
        assert resp.call("MEMORY", "USAGE", "k5") is None
    finally:
        resp.call("SELECT", "5")
        resp.call("FLUSHDB")
        resp.call("SELECT", "0")


def test_usage_grows_with_value(resp):
    sizes = [1, 100, 1000, 10000, 100000]
    usage = []
    for n in sizes:
        resp.call("SET", "s%d" % n, "x" * n)
        usage.append(resp.call("MEMORY", "USAGE", "s%d" % n))
    assert usage == sorted(usage)
    for n, u in zip(sizes, usage):
        assert n < u < n * 1.3 + 200, (n, u)


# Measured on redis-server 7.0.15 (jemalloc-5.3.0), SAMPLES 0.  (Small
# sets are left out: 7.0 keeps them as hash tables, HotKV as 7.2 does, in
# a listpack.)
REDIS_USAGE = {
    "s1": 64, "s1k": 1072, "sint": 48, "s40": 96, "s100k": 114736,
    "l100": 352, "l10k": 81384, "h10": 144, "h1k": 64296, "si1k": 40296,
    "ss1k": 48296, "z10": 128, "z1k": 101688,
}


def load_usage_keys(c):
    c.call("SET", "s1", "v")
    c.call("SET", "s1k", "x" * 1000)
    c.call("SET", "sint", "12345")
    c.call("SET", "s40", "y" * 40)
    c.call("SET", "s100k", "z" * 100000)
    c.call("RPUSH", "l100", *[str(i) for i in range(100)])
    c.call("RPUSH", "l10k", *["e%05d" % i for i in range(10000)])
    args = []
    for i in range(10):
        args += ["f%d" % i, "v%d" % i]
    c.call("HSET", "h10", *args)
    args = []
    for i in range(1000):
        args += ["field:%d" % i, "value:%d" % i]
    c.call("HSET", "h1k", *args)
    c.call("SADD", "si1k", *range(1000))
    c.call("SADD", "ss1k", *["member:%d" % i for i in range(1000)])
    c.call("SADD", "ss10", *["m%d" % i for i in range(10)])
    args = []
    for i in range(10):
        args += [i, "m%d" % i]
    c.call("ZADD", "z10", *args)
    args = []
    for i in range(1000):
        args += [i, "member:%d" % i]
    c.call("ZADD", "z1k", *args)


def test_usage_close_to_redis(resp):
    load_usage_keys(resp)
    for key, ref in REDIS_USAGE.items():
        got = resp.call("MEMORY", "USAGE", key, "SAMPLES", "0")
        assert ref / 2 <= got <= ref * 2, (key, got, ref)


def test_usage_counts_every_element(resp):
    """A hash table set grows in MEMORY USAGE with its members (SAMPLES 0
    measures them all)."""
    resp.call("SADD", "big", *["member:%d" % i for i in range(1000)])
    small = resp.call("MEMORY", "USAGE", "big", "SAMPLES", "0")
    resp.call("SADD", "big", *["member:%d" % i for i in range(1000, 5000)])
    large = resp.call("MEMORY", "USAGE", "big", "SAMPLES", "0")
    assert large > small * 3


# --------------------------------------------------------------- STATS ---

def check_stats_shape(reply, resp3):
    if resp3:
        assert isinstance(reply, dict)
    else:
        assert isinstance(reply, list)
    items = pairs(reply)
    keys = [k for k, _ in items]
    dbs = [k for k in keys if k.startswith("db.")]
    assert [k for k in keys if not k.startswith("db.")] == STATS_KEYS
    # The db.N entries sit between functions.caches and overhead.total.
    if dbs:
        first = keys.index(dbs[0])
        assert keys[first - 1] == "functions.caches"
        assert keys[first + len(dbs)] == "overhead.total"
    for k, v in items:
        if k.startswith("db."):
            sub = pairs(v)
            assert [x for x, _ in sub] == DB_KEYS
            assert all(isinstance(x, int) and x >= 0 for _, x in sub)
        elif k in DOUBLE_KEYS:
            if resp3:
                assert isinstance(v, float), (k, v)
            else:
                assert isinstance(v, bytes), (k, v)
                float(v)
        else:
            assert isinstance(v, int), (k, v)
    return dbs


def test_stats_shape_resp2(resp):
    resp.call("SET", "a", "1")
    assert check_stats_shape(resp.call("MEMORY", "STATS"), False) == ["db.0"]


def test_stats_shape_resp3(resp3):
    resp3.call("SET", "a", "1")
    assert check_stats_shape(resp3.call("MEMORY", "STATS"), True) == ["db.0"]


def test_stats_empty_has_no_db_maps(resp):
    assert check_stats_shape(resp.call("MEMORY", "STATS"), False) == []
    s = stats(resp)
    assert s["keys.count"] == 0
    assert s["keys.bytes-per-key"] == 0


def test_stats_lists_only_nonempty_dbs(resp):
    try:
        resp.call("SET", "a", "1")
        resp.call("SELECT", "3")
        resp.call("SET", "b", "1", "EX", "100")
        resp.call("SET", "c", "1")
        resp.call("SELECT", "0")
        s = stats(resp)
        assert sorted(k for k in s if k.startswith("db.")) == ["db.0", "db.3"]
        assert s["keys.count"] == 3
        assert s["db.0"]["overhead.hashtable.expires"] == 0
        assert s["db.3"]["overhead.hashtable.expires"] > 0
        assert s["db.3"]["overhead.hashtable.main"] >= s["db.0"]["overhead.hashtable.main"] > 0
    finally:
        resp.call("FLUSHALL")
        resp.call("SELECT", "0")


def test_stats_figures_add_up(resp):
    fill(resp, 2000, 1000)
    s = stats(resp)
    assert s["keys.count"] == 2000
    assert s["peak.allocated"] >= s["total.allocated"] > s["startup.allocated"] > 0
    overhead = (s["startup.allocated"] + s["replication.backlog"] + s["clients.slaves"] +
                s["clients.normal"] + s["cluster.links"] + s["aof.buffer"] + s["lua.caches"] +
                s["functions.caches"] + s["db.0"]["overhead.hashtable.main"] +
                s["db.0"]["overhead.hashtable.expires"] + s["db.0"]["overhead.hashtable.slot-to-keys"])
    assert s["overhead.total"] == overhead
    assert s["dataset.bytes"] == s["total.allocated"] - s["overhead.total"]
    # 2000 values of 1000 bytes: the dataset holds at least them.
    assert s["dataset.bytes"] >= 2000 * 1000
    net = s["total.allocated"] - s["startup.allocated"]
    assert s["keys.bytes-per-key"] == net // 2000
    assert s["dataset.percentage"] == pytest.approx(s["dataset.bytes"] * 100 / net, rel=1e-3)
    assert s["peak.percentage"] == pytest.approx(s["total.allocated"] * 100 / s["peak.allocated"], rel=1e-3)
    assert 0 < s["peak.percentage"] <= 100
    assert s["replication.backlog"] == s["clients.slaves"] == s["cluster.links"] == 0
    assert s["aof.buffer"] == 0  # appendonly no
    assert s["fragmentation"] > 0
    if MODE != "redis":  # Redis takes these two from its last cron sample
        rss = s["fragmentation.bytes"] + s["total.allocated"]
        assert s["fragmentation"] == pytest.approx(rss / s["total.allocated"], rel=0.05)


def test_stats_index_overhead_grows_with_keys(resp):
    fill(resp, 100, 10)
    few = stats(resp)["db.0"]["overhead.hashtable.main"]
    fill(resp, 5000, 10, prefix="more")
    many = stats(resp)["db.0"]["overhead.hashtable.main"]
    assert many > few
    # A pointer-sized slot or more per key, far less than a value.
    assert 8 * 5100 <= many <= 200 * 5100


def test_stats_allocator_figures(resp):
    if not allocator_is_jemalloc(resp):
        pytest.skip("allocator statistics need jemalloc")
    fill(resp, 1000, 1000)
    s = stats(resp)
    assert s["allocator.allocated"] > 1000 * 1000
    assert s["allocator.active"] >= s["allocator.allocated"]
    assert s["allocator.resident"] >= s["allocator.active"]
    assert s["allocator-fragmentation.bytes"] == s["allocator.active"] - s["allocator.allocated"]
    assert s["allocator-fragmentation.ratio"] == pytest.approx(
        s["allocator.active"] / s["allocator.allocated"], rel=1e-3)
    assert s["allocator-rss.bytes"] == s["allocator.resident"] - s["allocator.active"]
    assert s["allocator-rss.ratio"] == pytest.approx(s["allocator.resident"] / s["allocator.active"], rel=1e-3)
    assert 0.5 < s["rss-overhead.ratio"] < 10


def test_stats_scripting_caches(resp):
    before = stats(resp)
    for i in range(20):
        resp.call("SCRIPT", "LOAD", "return %d" % i)
    after = stats(resp)
    assert after["lua.caches"] > before["lua.caches"]
    resp.call("SCRIPT", "FLUSH")
    code = "#!lua name=memlib\nredis.register_function('memf', function() return 1 end)"
    assert resp.call("FUNCTION", "LOAD", "REPLACE", code) == b"memlib"
    try:
        with_fn = stats(resp)
        assert with_fn["functions.caches"] > 0
        m = info(resp)
        assert int(m["used_memory_functions"]) > 0
        assert int(m["used_memory_scripts"]) == int(m["used_memory_scripts_eval"]) + int(m["used_memory_functions"])
    finally:
        resp.call("FUNCTION", "FLUSH")


def test_stats_client_buffers(server, resp):
    """A connection holding a large unfinished command shows in
    clients.normal (the other workers publish theirs from their cron)."""
    if MODE == "redis":
        pytest.skip("redis-server accounts client memory in its own cron order")
    base = stats(resp)["clients.normal"]
    s = socket.create_connection(("127.0.0.1", server.port))
    try:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$4000000\r\n" + b"x" * 2000000)
        assert wait_until(lambda: stats(resp)["clients.normal"] > base + 1500000, timeout=5)
        assert int(info(resp)["mem_clients_normal"]) > base + 1500000
    finally:
        s.close()
    assert wait_until(lambda: stats(resp)["clients.normal"] < base + 1000000, timeout=5)


def test_stats_in_multi_and_script(resp):
    resp.call("SET", "a", "1")
    assert resp.call("MULTI") == "OK"
    assert resp.call("MEMORY", "STATS") == "QUEUED"
    assert resp.call("MEMORY", "DOCTOR") == "QUEUED"
    assert resp.call("SET", "b", "2") == "QUEUED"
    out = resp.call("EXEC")
    assert len(out) == 3
    assert check_stats_shape(out[0], False) == ["db.0"]
    assert isinstance(out[1], bytes) and out[1].startswith(b"Hi Sam")
    reply = resp.call("EVAL", "return redis.call('MEMORY', 'STATS')", "0")
    check_stats_shape(reply, False)


# -------------------------------------------------------------- DOCTOR ---

def test_doctor_empty_instance(resp, resp3):
    r2 = resp.call("MEMORY", "DOCTOR")
    assert isinstance(r2, bytes)
    assert r2.startswith(b"Hi Sam, this instance is empty or is using very little memory")
    r3 = resp3.call("MEMORY", "DOCTOR")
    assert r3[0] == "verbatim" and r3[1] == "txt"
    assert r3[2] == r2


@pytest.fixture
def fresh():
    """A server of its own: the peak and the RSS of the shared one depend on
    what earlier tests wrote."""
    srv = Server()
    c = Resp(srv.port)
    yield c
    c.close()
    assert srv.stop() == 0


def test_doctor_no_issue_then_peak(fresh):
    fill(fresh, 4000, 10000)  # 40 MB
    time.sleep(0.3)           # let the crons see the peak
    report = fresh.call("MEMORY", "DOCTOR")
    if allocator_is_jemalloc(fresh):  # (sanitizer allocators inflate the RSS)
        assert report == (b"Hi Sam, I can't find any memory issue in your instance. "
                          b"I can only account for what occurs on this base.\n")
    for start in range(0, 3000, 100):
        fresh.call("DEL", *["k%d" % i for i in range(start, start + 100)])
    report = fresh.call("MEMORY", "DOCTOR").decode()
    assert report.startswith("Sam, I")
    assert " * Peak memory:" in report
    assert "MEMORY PURGE" in report


# ----------------------------------------------- MALLOC-STATS and PURGE ---

def test_malloc_stats(resp, resp3):
    r2 = resp.call("MEMORY", "MALLOC-STATS")
    assert isinstance(r2, bytes) and len(r2) > 0
    if allocator_is_jemalloc(resp):
        assert b"jemalloc" in r2
        assert b"allocated" in r2
        r3 = resp3.call("MEMORY", "MALLOC-STATS")
        assert r3[0] == "verbatim" and r3[1] == "txt" and b"jemalloc" in r3[2]
    else:
        assert r2 == b"Stats not supported for the current allocator"


def test_purge(resp):
    fill(resp, 1000, 10000)
    resp.call("FLUSHALL")
    assert resp.call("MEMORY", "PURGE") == "OK"
    assert resp.call("MEMORY", "PURGE") == "OK"


def test_purge_returns_pages(resp):
    if not allocator_is_jemalloc(resp):
        pytest.skip("needs jemalloc")
    for i in range(0, 3000, 2):
        resp.call("SET", "p%d" % i, "x" * 20000)
    for i in range(0, 3000, 4):
        resp.call("DEL", "p%d" % i)
    before = stats(resp)["allocator.resident"]
    assert resp.call("MEMORY", "PURGE") == "OK"
    after = stats(resp)["allocator.resident"]
    assert after <= before


# ---------------------------------------------------------------- INFO ---

def test_info_memory_fields(resp):
    m = info(resp)
    missing = [f for f in INFO_MEMORY_FIELDS if f not in m]
    assert not missing
    # Redis's order for the fields both have.
    keys = [k for k in m if k in INFO_MEMORY_FIELDS]
    assert keys == [f for f in INFO_MEMORY_FIELDS if f in keys]
    assert m["maxmemory_policy"] == "noeviction"
    assert m["mem_replication_backlog"] == m["mem_clients_slaves"] == m["mem_cluster_links"] == "0"
    assert m["active_defrag_running"] == "0"
    assert m["mem_aof_buffer"] == "0"
    for f in ("used_memory_peak_perc", "used_memory_dataset_perc"):
        assert m[f].endswith("%")
        float(m[f][:-1])


def test_info_stats_eviction_fields(resp):
    st = info(resp, "stats")
    for f in INFO_STATS_EVICTION_FIELDS:
        assert f in st, f
        assert int(st[f]) >= 0
    assert st["evicted_keys"] == "0"
    assert st["evicted_clients"] == "0"


def test_info_memory_tracks_data(resp):
    base = int(info(resp)["used_memory"])
    fill(resp, 1000, 10000)  # 10 MB of values
    m = info(resp)
    used = int(m["used_memory"])
    grown = used - base
    assert 10_000_000 <= grown <= 10_000_000 * 1.5, grown
    assert int(m["used_memory_peak"]) >= used
    assert int(m["used_memory_rss"]) >= used // 2
    assert int(m["used_memory_overhead"]) + int(m["used_memory_dataset"]) == pytest.approx(used, rel=0.01)
    assert int(m["used_memory_startup"]) <= used
    if m["mem_allocator"].startswith("jemalloc"):
        # (Redis samples the allocator in its cron: wait for a fresh one.)
        assert wait_until(lambda: int(info(resp)["allocator_allocated"]) >= 10_000_000, timeout=2)
        m = info(resp)
        assert int(m["allocator_active"]) >= int(m["allocator_allocated"])
        assert int(m["allocator_resident"]) >= int(m["allocator_active"])
        assert float(m["allocator_frag_ratio"]) >= 1.0
        assert float(m["allocator_rss_ratio"]) >= 1.0
    peak = int(m["used_memory_peak"])
    resp.call("FLUSHALL")
    m = info(resp)
    assert int(m["used_memory"]) < base + 1_000_000
    assert int(m["used_memory_peak"]) >= peak
    assert num(m["used_memory_peak_perc"]) < 50


def test_info_memory_matches_stats(resp):
    fill(resp, 500, 1000)
    m = info(resp)
    s = stats(resp)
    assert int(m["used_memory_startup"]) == s["startup.allocated"]
    assert int(m["mem_clients_slaves"]) == s["clients.slaves"]
    assert int(m["used_memory"]) == pytest.approx(s["total.allocated"], rel=0.05)
    assert int(m["used_memory_overhead"]) == pytest.approx(s["overhead.total"], rel=0.05)


def test_info_all_includes_memory_and_keyspace(resp):
    resp.call("SET", "a", "1", "EX", "100")
    text_ = resp.call("INFO", "all")
    sections = parse_info(text_)
    assert "used_memory_overhead" in sections["memory"]
    assert sections["keyspace"]["db0"].startswith("keys=1,expires=1")


def test_peak_seen_without_info(fresh):
    """The peak is kept between INFO calls (a cron notes it), as Redis
    records it after commands and in its cron."""
    base_peak = int(info(fresh)["used_memory_peak"])
    fill(fresh, 2000, 10000)  # 20 MB
    time.sleep(0.5)
    fresh.call("FLUSHALL")
    assert int(info(fresh)["used_memory_peak"]) >= base_peak + 15_000_000
