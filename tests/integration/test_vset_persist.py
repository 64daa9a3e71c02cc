"""Persistence of vector sets (persist/rdb_vset.c, aof.c, cmd/t_dump.c).

A vector set is saved in the RDB as a module value (type 7) of HotKV's own
module type "hotkv-vec" (encoding version 1), body in the module opcode
framing, with the HNSW graph itself: after SAVE + restart, DEBUG RELOAD,
BGSAVE, DUMP/RESTORE or an AOF with the RDB preamble, every element,
attribute and vector (VEMB) is the same, VLINKS is identical (the graph is
loaded, not rebuilt) and VSIM answers exactly as before.  The command-form
AOF (aof-use-rdb-preamble no) writes one VADD per element (VEMB equal to
float rounding, the graph rebuilt), and REDUCE sets as RESTORE of their
DUMP payload.  Commands reach the AOF as they run (VADD, VREM, VSETATTR).
Damaged payloads and files are refused cleanly; another module's value (a
Redis 8 "vectorset") is refused with Redis's error; hotkv-check-rdb and
Debian's redis-check-rdb 7.0 walk over our values."""
import json
import math
import os
import random
import shutil
import struct
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import BIN, MODE, Server, free_port
from helpers import IS_SANITIZER, crc64

pytestmark = pytest.mark.skipif(MODE == "redis", reason="starts hotkv-server processes")

N = 60 if IS_SANITIZER else 300
DIM = 16

# -------------------------------------------------------------- helpers ---


def reseal(payload, body):
    """payload's footer (version) on a new body, with a correct CRC."""
    p = body + payload[-10:-8]
    return p + struct.pack("<Q", crc64(p))


CSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def module_id(name, encver):
    v = 0
    for ch in name:
        v = v << 6 | CSET.index(ch)
    return v << 10 | encver


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_str(s):
    if isinstance(s, str):
        s = s.encode()
    return rdb_len(len(s)) + s


def foreign_module_value(name="vectorset", encver=0):
    """A module value body as another module writes it (type byte included)."""
    body = rdb_len(module_id(name, encver))
    body += rdb_len(2) + rdb_len(3)                  # UINT 3
    body += rdb_len(5) + rdb_str(b"some bytes")      # STRING
    body += rdb_len(4) + struct.pack("<d", 1.5)      # DOUBLE
    body += rdb_len(3) + struct.pack("<f", 2.5)      # FLOAT
    body += rdb_len(0)                               # EOF
    return body


def rdb_file(values, version=11):
    """A whole RDB file: values = [(type byte, key, encoded value)]."""
    out = b"REDIS%04d" % version
    out += b"\xfa" + rdb_str("redis-ver") + rdb_str("7.0.15")
    out += b"\xfe\x00\xfb" + rdb_len(len(values)) + rdb_len(0)
    for t, k, v in values:
        out += bytes([t]) + rdb_str(k) + v
    out += b"\xff"
    return out + struct.pack("<Q", crc64(out))


def vec(rnd, dim):
    return [rnd.gauss(0, 1) * 3 for _ in range(dim)]


def blob(v):
    return struct.pack("<%df" % len(v), *v)


def ok(reply):
    return reply in (True, b"OK", "OK")


def fill(c, key, n=N, dim=DIM, opts=(), reduce=None, seed=1, first=0):
    """n elements e<first>.. with random vectors, attributes on every third."""
    rnd = random.Random(seed)
    p = c.pipeline(transaction=False)
    names = []
    for i in range(first, first + n):
        name = b"e%d" % i
        names.append(name)
        args = ["VADD", key]
        if reduce:
            args += ["REDUCE", reduce]
        args += ["FP32", blob(vec(rnd, dim)), name] + list(opts)
        if i % 3 == 0:
            args += ["SETATTR", json.dumps({"i": i, "g": "g%d" % (i % 5)})]
        p.execute_command(*args)
    assert p.execute() == [1] * n
    return names


def queries(dim, k=6, seed=77):
    rnd = random.Random(seed)
    return [blob(vec(rnd, dim)) for _ in range(k)]


def snap(c, key, names, qdim, graph=True):
    """Everything observable about the set: per element VEMB, VGETATTR and
    VLINKS; VSIM answers (with scores) for a few queries; VCARD/VDIM."""
    p = c.pipeline(transaction=False)
    for n in names:
        p.execute_command("VEMB", key, n)
        p.execute_command("VGETATTR", key, n)
        if graph:
            p.execute_command("VLINKS", key, n)
    for q in queries(qdim):
        p.execute_command("VSIM", key, "FP32", q, "WITHSCORES", "COUNT", 10)
    for n in names[:5]:
        p.execute_command("VSIM", key, "ELE", n, "COUNT", 5)
    p.execute_command("VCARD", key)
    p.execute_command("VDIM", key)
    return p.execute()


def elements(c, key, names):
    """Per element (VEMB as floats, attributes), for the rebuilt-graph checks."""
    p = c.pipeline(transaction=False)
    for n in names:
        p.execute_command("VEMB", key, n)
        p.execute_command("VGETATTR", key, n)
    r = p.execute()
    return {names[i]: ([float(x) for x in r[2 * i]], r[2 * i + 1]) for i in range(len(names))}


def same_elements(a, b):
    assert a.keys() == b.keys()
    for k in a:
        va, aa = a[k]
        vb, ab = b[k]
        assert aa == ab, k
        assert len(va) == len(vb)
        for x, y in zip(va, vb):
            assert math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-5), (k, va, vb)


def top(c, key, count=8):
    """Exact top (VSIM TRUTH) for a fixed query: [(element, score)]."""
    r = c.execute_command("VSIM", key, "FP32", queries(DIM, 1)[0], "TRUTH", "WITHSCORES", "COUNT", count)
    if isinstance(r, dict):
        r = [x for kv in r.items() for x in kv]
    return [(r[i], float(r[i + 1])) for i in range(0, len(r), 2)]


def same_top(a, b):
    """Same scores (to float rounding); the same elements except among ties
    (binary vectors tie often, and ties may come in another order)."""
    assert len(a) == len(b)
    for (_, x), (_, y) in zip(a, b):
        assert math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-6), (a, b)
    last = a[-1][1]
    sure_a = {n for n, sc in a if sc > last + 1e-5}
    sure_b = {n for n, sc in b if sc > last + 1e-5}
    assert sure_a == sure_b, (a, b)


def vinfo(c, key):
    r = c.execute_command("VINFO", key)
    if isinstance(r, dict):
        items = r.items()
    else:
        items = zip(r[::2], r[1::2])
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in items}


@pytest.fixture
def d():
    p = tempfile.mkdtemp(prefix="hotkv-vsetp-")
    yield p
    shutil.rmtree(p, ignore_errors=True)


def start(d, *args):
    return Server("--dir", d, *args)


def restart(s, d, *args):
    assert s.stop() == 0
    return start(d, *args)


def try_start(d, log, timeout=20):
    """Start hotkv-server on d expecting it may refuse its files: returns
    (exit status or None if it came up and was stopped, log text)."""
    port = free_port()
    with open(log, "w") as lf:
        p = subprocess.Popen([BIN, "--port", str(port), "--bind", "127.0.0.1", "--dir", d, "--save", ""],
                             stdout=lf, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        rc = None
        while time.time() < deadline:
            rc = p.poll()
            if rc is not None:
                break
            try:
                c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
                c.ping()
                c.close()
                p.terminate()
                assert p.wait(20) == 0
                rc = None
                break
            except redis.exceptions.BusyLoadingError:
                time.sleep(0.02)
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        else:
            p.kill()
            p.wait()
            raise AssertionError("neither started nor exited")
    text = open(log).read()
    assert "Sanitizer" not in text and "runtime error" not in text, text
    return rc, text


def wait_bg(c, field, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if c.info("persistence")[field] == 0:
            return
        time.sleep(0.02)
    raise AssertionError(field + " did not finish")


QUANTS = [("NOQUANT", "f32"), ("Q8", "int8"), ("BIN", "bin")]

# ------------------------------------------------------------------- RDB ---


@pytest.mark.parametrize("quant,qname", QUANTS)
def test_save_restart_keeps_everything(d, quant, qname):
    s = start(d)
    c = s.client()
    names = fill(c, "v", opts=[quant, "M", 8])
    c.set("plain", "x")
    before = snap(c, "v", names, DIM)
    assert c.save() is True
    s = restart(s, d)
    c = s.client()
    try:
        assert c.type("v") == b"vectorset"
        after = snap(c, "v", names, DIM)
        assert after == before
        info = vinfo(c, "v")
        assert info["quant-type"] in (qname.encode(), qname)
        assert int(info["hnsw-m"]) == 8
        assert c.get("plain") == b"x"
        assert c.info("persistence")["rdb_last_load_keys_loaded"] == 2
    finally:
        assert s.stop() == 0


def test_reduce_set_save_restart(d):
    s = start(d)
    c = s.client()
    names = fill(c, "r", n=N // 2, dim=32, reduce=8)
    assert c.execute_command("VDIM", "r") == 8
    before = snap(c, "r", names, 32)
    c.save()
    s = restart(s, d)
    c = s.client()
    try:
        assert snap(c, "r", names, 32) == before
        assert int(vinfo(c, "r")["projection-input-dim"]) == 32
        # The projection came back: new elements land where they did before.
        more = fill(c, "r", n=5, dim=32, reduce=8, seed=5, first=1000)
        assert c.execute_command("VCARD", "r") == N // 2 + 5
        for m in more:
            assert c.execute_command("VSIM", "r", "ELE", m, "COUNT", 1) == [m]
    finally:
        assert s.stop() == 0


def test_debug_reload_and_bgsave(d):
    s = start(d)
    c = s.client()
    try:
        names = fill(c, "v", opts=["Q8"])
        names2 = fill(c, "w", n=40, opts=["NOQUANT", "M", 4], seed=3)
        c.pexpire("w", 600000)
        before = snap(c, "v", names, DIM), snap(c, "w", names2, DIM)
        assert ok(c.execute_command("DEBUG", "RELOAD"))
        assert (snap(c, "v", names, DIM), snap(c, "w", names2, DIM)) == before
        assert 0 < c.pttl("w") <= 600000
        assert c.bgsave() is True
        # Writes while the child saves are not in the snapshot.
        c.execute_command("VREM", "v", names[0])
        c.execute_command("VSETATTR", "v", names[1], '{"late":1}')
        wait_bg(c, "rdb_bgsave_in_progress")
        assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    finally:
        assert s.stop() == 0
    s = start(d)
    c = s.client()
    try:
        assert (snap(c, "v", names, DIM), snap(c, "w", names2, DIM)) == before
    finally:
        assert s.stop() == 0


def test_bgsave_while_writing(d):
    """Snapshots forked while clients keep adding and removing elements
    (on other worker threads) load: every saved graph passes the loader's
    checks, and each set holds what it held at one instant."""
    s = start(d)
    c = s.client()
    stop = threading.Event()
    errors = []

    def writer(key, seed):
        w = s.client()
        rnd = random.Random(seed)
        i = 0
        try:
            while not stop.is_set():
                p = w.pipeline(transaction=False)
                for _ in range(20):
                    p.execute_command("VADD", key, "FP32", blob(vec(rnd, DIM)), "w%d" % i, "M", 6)
                    if i >= 10:
                        p.execute_command("VREM", key, "w%d" % (i - 10))
                    i += 1
                p.execute()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=("a%d" % k, k)) for k in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            time.sleep(0.2)
            assert c.bgsave() is True
            wait_bg(c, "rdb_bgsave_in_progress")
            assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    s = restart(s, d)
    c = s.client()
    try:
        for k in ("a0", "a1"):
            assert c.type(k) == b"vectorset"
            # A sliding window of 10 elements (11 between a VADD and its
            # VREM) as it was at the fork instant.
            assert c.execute_command("VCARD", k) in (10, 11)
            assert c.execute_command("VSIM", k, "VALUES", DIM, *([1] * DIM), "COUNT", 20) != []
    finally:
        assert s.stop() == 0


def test_empty_set_leaves_no_key(d):
    s = start(d)
    c = s.client()
    c.execute_command("VADD", "v", "VALUES", 2, 1, 0, "only")
    assert c.execute_command("VREM", "v", "only") == 1
    assert c.exists("v") == 0
    c.execute_command("VADD", "keep", "VALUES", 2, 1, 0, "a")
    c.save()
    s = restart(s, d)
    c = s.client()
    try:
        assert c.exists("v") == 0
        assert c.dbsize() == 1
        assert c.execute_command("VCARD", "keep") == 1
    finally:
        assert s.stop() == 0


# -------------------------------------------------------- DUMP / RESTORE ---


def test_dump_restore_roundtrip(d):
    s = start(d)
    c = s.client()
    try:
        names = fill(c, "v", opts=["Q8", "M", 12])
        before = snap(c, "v", names, DIM)
        p = c.dump("v")
        # The value is a module value of type hotkv-vec, encoding version 1.
        assert p[0] == 7
        assert p[1:10] == b"\x81" + struct.pack(">Q", module_id("hotkv-vec", 1))
        assert ok(c.restore("v2", 0, p))
        assert snap(c, "v2", names, DIM) == before
        with pytest.raises(redis.ResponseError, match="BUSYKEY"):
            c.restore("v2", 0, p)
        c.execute_command("VREM", "v2", names[0])
        assert ok(c.restore("v2", 0, p, replace=True))
        assert snap(c, "v2", names, DIM) == before
        assert ok(c.restore("t", 100000, p))
        assert 0 < c.pttl("t") <= 100000
        # Replacing a key of another type.
        c.set("s", "x")
        assert ok(c.restore("s", 0, p, replace=True))
        assert c.type("s") == b"vectorset"
        # DEL of a restored copy leaves the original alone.
        c.delete("v2")
        assert snap(c, "v", names, DIM) == before
        # Every quantization and REDUCE.
        for key, opts, red, dim in (("n", ["NOQUANT"], None, DIM), ("b", ["BIN"], None, DIM),
                                    ("r", [], 6, 24)):
            nn = fill(c, key, n=50, dim=dim, opts=opts, reduce=red, seed=11)
            b0 = snap(c, key, nn, dim)
            c.restore(key + "c", 0, c.dump(key))
            assert snap(c, key + "c", nn, dim) == b0
    finally:
        assert s.stop() == 0


def test_restore_damaged_payloads(d):
    s = start(d)
    c = s.client()
    try:
        fill(c, "v", n=40, dim=8, opts=["NOQUANT", "M", 4])
        p = c.dump("v")
        body = p[:-10]
        # Wrong CRC: the payload check.
        bad = bytearray(p)
        bad[20] ^= 0xFF
        with pytest.raises(redis.ResponseError, match="payload version or checksum are wrong"):
            c.restore("x", 0, bytes(bad))
        # Truncated bodies (CRC fixed up): always refused.
        for cut in (1, 2, 5, 17, len(body) // 3, len(body) // 2, len(body) - 12):
            with pytest.raises(redis.ResponseError, match="Bad data format"):
                c.restore("x", 0, reseal(p, body[:len(body) - cut]))
        # A different module id: Redis's error for unknown module types.
        other = body[:1] + rdb_len(module_id("vectorset", 0)) + body[10:]
        with pytest.raises(redis.ResponseError, match="Bad data format"):
            c.restore("x", 0, reseal(p, other))
        newer = body[:1] + rdb_len(module_id("hotkv-vec", 2)) + body[10:]
        with pytest.raises(redis.ResponseError, match="Bad data format"):
            c.restore("x", 0, reseal(p, newer))
        # Random byte damage: refused or (a harmless change, e.g. inside a
        # vector) loaded; the server survives and stays consistent.
        rnd = random.Random(5)
        flips = 60 if IS_SANITIZER else 250
        refused = 0
        for i in range(flips):
            b = bytearray(body)
            for _ in range(rnd.choice((1, 1, 2, 4))):
                pos = rnd.randrange(1, len(b))
                b[pos] ^= 1 << rnd.randrange(8)
            try:
                c.restore("x%d" % i, 0, reseal(p, bytes(b)))
                assert c.type("x%d" % i) == b"vectorset"
                c.execute_command("VSIM", "x%d" % i, "VALUES", 8, *([1] * 8), "COUNT", 5)
                c.delete("x%d" % i)
            except redis.ResponseError as e:
                assert "Bad data format" in str(e)
                refused += 1
        assert refused > flips // 4
        assert c.ping()
    finally:
        assert s.stop() == 0


def test_foreign_module_refused(d):
    """A Redis 8 vector set (module "vectorset") cannot be loaded: RESTORE
    says Bad data format, start-up refuses the file naming the module, and
    hotkv-check-rdb walks over the value."""
    s = start(d)
    c = s.client()
    try:
        payload = b"\x07" + foreign_module_value() + struct.pack("<H", 11)
        payload += struct.pack("<Q", crc64(payload))
        with pytest.raises(redis.ResponseError, match="Bad data format"):
            c.restore("x", 0, payload)
    finally:
        assert s.stop() == 0
    path = os.path.join(d, "dump.rdb")
    with open(path, "wb") as f:
        f.write(rdb_file([(7, "vs", foreign_module_value()), (0, "s", rdb_str("v"))]))
    rc, text = try_start(d, os.path.join(d, "fail.log"))
    assert rc not in (None, 0) and rc > 0, text
    assert "no matching module type 'vectorset'" in text
    chk = os.path.join(os.path.dirname(BIN), "hotkv-check-rdb")
    r = subprocess.run([chk, path], capture_output=True, timeout=30)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out
    assert "Module value of type 'vectorset'" in out
    assert "RDB looks OK" in out


# -------------------------------------------------------- damaged files ---


def test_damaged_rdb_file_refused(d):
    s = start(d)
    c = s.client()
    fill(c, "v", n=40, dim=8, opts=["Q8", "M", 4])
    c.save()
    assert s.stop() == 0
    path = os.path.join(d, "dump.rdb")
    good = open(path, "rb").read()
    vpos = good.index(b"\x07\x01v")  # type 7, key "v"
    chk = os.path.join(os.path.dirname(BIN), "hotkv-check-rdb")
    r = subprocess.run([chk, path], capture_output=True, timeout=30)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0 and "vectorset 1" in out and "40 elements" in out, out
    rnd = random.Random(3)
    cases = [good[:vpos + 40], good[:len(good) - 30]]
    for _ in range(6 if IS_SANITIZER else 12):
        b = bytearray(good[:-8])
        pos = rnd.randrange(vpos + 12, len(b) - 1)
        b[pos] ^= 1 << rnd.randrange(8)
        cases.append(bytes(b) + b"\0" * 8)  # checksum 0: not checked, the loader must catch it
    refused = 0
    for i, data in enumerate(cases):
        with open(path, "wb") as f:
            f.write(data)
        # Refused with a message naming the offset, or (a harmless flip,
        # e.g. inside a vector) loaded; never a crash.
        rc, text = try_start(d, os.path.join(d, "bad%d.log" % i))
        if rc is not None:
            assert rc > 0, text
            assert "offset" in text, text
            refused += 1
        r = subprocess.run([chk, path], capture_output=True, timeout=30)
        assert r.returncode in (0, 1)
        assert (r.returncode == 1) == (rc is not None), r.stdout
    assert refused >= 2


# ------------------------------------------------------------------- AOF ---


def aof_dir_files(d):
    ad = os.path.join(d, "appendonlydir")
    return {f: os.path.join(ad, f) for f in os.listdir(ad)}


def check_aof(d):
    """hotkv-check-aof accepts the AOF (an RDB base with vector sets too)."""
    man = os.path.join(d, "appendonlydir", "appendonly.aof.manifest")
    r = subprocess.run([os.path.join(os.path.dirname(BIN), "hotkv-check-aof"), man], capture_output=True,
                       timeout=60)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0 and "valid" in out, out


def test_aof_propagation_and_restart(d):
    """VADD / VREM / VSETATTR reach the AOF as they run; a restart replays
    them to the same elements, vectors and attributes."""
    s = start(d, "--appendonly", "yes")
    c = s.client()
    names = fill(c, "v", n=N // 2, opts=["NOQUANT"])
    fill(c, "q", n=50, opts=["Q8", "M", 6], seed=2)
    rnames = fill(c, "r", n=30, dim=20, reduce=5, seed=4)
    c.execute_command("VADD", "b", "VALUES", 3, 1, 2, 3, "x", "BIN")
    c.execute_command("VADD", "b", "VALUES", 3, -1, 2, 0.5, "y", "BIN", "SETATTR", '{"a":1}')
    # Updates of existing elements, removals, attributes set and cleared.
    c.execute_command("VADD", "v", "VALUES", DIM, *([0.5] * DIM), names[3], "NOQUANT")
    for n in names[10:20]:
        assert c.execute_command("VREM", "v", n) == 1
    c.execute_command("VSETATTR", "v", names[21], '{"new":true}')
    c.execute_command("VSETATTR", "v", names[0], "")  # clears
    c.execute_command("VADD", "gone", "VALUES", 2, 1, 1, "a")
    c.execute_command("VREM", "gone", "a")
    c.execute_command("MULTI")
    c.execute_command("VADD", "v", "VALUES", DIM, *([1] * DIM), b"tx", "NOQUANT")
    c.execute_command("VSETATTR", "v", b"tx", '{"tx":1}')
    c.execute_command("EXEC")
    live = [n for n in names if n not in names[10:20]] + [b"tx"]
    check_aof(d)
    before = (elements(c, "v", live), elements(c, "q", [b"e%d" % i for i in range(50)]),
              elements(c, "r", rnames), elements(c, "b", [b"x", b"y"]))
    s = restart(s, d, "--appendonly", "yes")
    c = s.client()
    try:
        after = (elements(c, "v", live), elements(c, "q", [b"e%d" % i for i in range(50)]),
                 elements(c, "r", rnames), elements(c, "b", [b"x", b"y"]))
        for a, b in zip(before, after):
            same_elements(a, b)
        assert c.exists("gone") == 0
        assert c.execute_command("VCARD", "v") == len(live)
        assert c.execute_command("VGETATTR", "v", names[0]) is None
        assert c.execute_command("VDIM", "r") == 5
    finally:
        assert s.stop() == 0


def test_aof_rewrite_with_preamble_keeps_graph(d):
    s = start(d, "--appendonly", "yes", "--aof-use-rdb-preamble", "yes")
    c = s.client()
    names = fill(c, "v", opts=["Q8"])
    rnames = fill(c, "r", n=40, dim=24, reduce=6, seed=8)
    c.bgrewriteaof()
    wait_bg(c, "aof_rewrite_in_progress")
    files = aof_dir_files(d)
    assert any(f.endswith(".base.rdb") for f in files)
    check_aof(d)
    before = snap(c, "v", names, DIM), snap(c, "r", rnames, 24)
    s = restart(s, d, "--appendonly", "yes", "--aof-use-rdb-preamble", "yes")
    c = s.client()
    try:
        assert (snap(c, "v", names, DIM), snap(c, "r", rnames, 24)) == before
        # Writes after the rewrite go to the incr file and replay on top.
        c.execute_command("VREM", "v", names[5])
        c.execute_command("VSETATTR", "v", names[6], '{"z":2}')
        more = fill(c, "v", n=10, seed=9, first=5000)
        live = [n for n in names if n != names[5]] + more
        e0 = elements(c, "v", live)
    except BaseException:
        s.stop()
        raise
    s = restart(s, d, "--appendonly", "yes", "--aof-use-rdb-preamble", "yes")
    c = s.client()
    try:
        same_elements(e0, elements(c, "v", live))
        assert c.execute_command("VISMEMBER", "v", names[5]) in (0, False)
    finally:
        assert s.stop() == 0


def test_aof_rewrite_command_form(d):
    """aof-use-rdb-preamble no: VADDs (REDUCE sets: RESTORE), TTLs kept."""
    args = ("--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    s = start(d, *args)
    c = s.client()
    sets = {}
    for key, opts in (("n", ["NOQUANT", "M", 5]), ("q", ["Q8"]), ("b", ["BIN", "M", 7])):
        sets[key] = (fill(c, key, n=N // 3, opts=opts, seed=len(key) + ord(key)), DIM)
    sets["r"] = (fill(c, "r", n=30, dim=24, reduce=6, seed=8), 24)
    c.execute_command("VADD", "bin\x00key", "FP32", blob([1.0] * 4), b"\x00\xffname", "SETATTR", b"\x01raw")
    sets["bin\x00key"] = ([b"\x00\xffname"], 4)
    c.pexpire("q", 900000)
    c.bgrewriteaof()
    wait_bg(c, "aof_rewrite_in_progress")
    files = aof_dir_files(d)
    base = [p for f, p in files.items() if f.endswith(".base.aof")]
    assert len(base) == 1
    text = open(base[0], "rb").read()
    assert text.count(b"$4\r\nVADD\r\n") == sum(len(v[0]) for k, v in sets.items() if k != "r")
    assert b"$7\r\nRESTORE\r\n$1\r\nr\r\n" in text
    assert b"$7\r\nNOQUANT\r\n" in text and b"$3\r\nBIN\r\n" in text and b"$2\r\nQ8\r\n" in text
    check_aof(d)
    before = {k: elements(c, k, v[0]) for k, v in sets.items()}
    raw = {k: [c.execute_command("VEMB", k, n, "RAW") for n in sets[k][0]] for k in ("q", "b")}
    rsnap = snap(c, "r", sets["r"][0], 24)
    infos = {k: vinfo(c, k) for k in sets}
    truth = {k: top(c, k) for k in ("n", "q", "b")}
    s = restart(s, d, *args)
    c = s.client()
    try:
        for k, v in sets.items():
            same_elements(before[k], elements(c, k, v[0]))
            i2 = vinfo(c, k)
            for f in ("quant-type", "vector-dim", "size", "hnsw-m", "projection-input-dim"):
                assert i2.get(f) == infos[k].get(f), (k, f)
        # Q8 codes and binary vectors are stored exactly as before.
        # (and the Q8 range and the norm to float rounding: the replayed
        # vector is rebuilt so that quantizing it gives the same range).
        for k in ("q", "b"):
            for n, r0 in zip(sets[k][0], raw[k]):
                r1 = c.execute_command("VEMB", k, n, "RAW")
                assert r1[:2] == r0[:2] and len(r1) == len(r0)
                for x, y in zip(r0[2:], r1[2:]):
                    assert math.isclose(float(x), float(y), rel_tol=1e-4), (k, n, r0, r1)
        # The REDUCE set came back through RESTORE: graph and all.
        assert snap(c, "r", sets["r"][0], 24) == rsnap
        for k in ("n", "q", "b"):
            same_top(top(c, k), truth[k])
        assert 0 < c.pttl("q") <= 900000
        assert c.pttl("n") == -1
    finally:
        assert s.stop() == 0


# --------------------------------------------------------- other tools ---


def test_redis_check_rdb_walks_over_vector_sets(d):
    """Debian's redis-check-rdb 7.0 knows no hotkv-vec module but, with the
    opcode framing, checks the rest of the file; redis-server 7.0 refuses
    the file naming our module type."""
    if not shutil.which("redis-check-rdb"):
        pytest.skip("redis-check-rdb not installed")
    s = start(d, "--rdb-version", 10)
    c = s.client()
    fill(c, "v", n=50, opts=["Q8"])
    fill(c, "r", n=20, dim=24, reduce=6)
    c.set("s", "x")
    c.save()
    assert s.stop() == 0
    path = os.path.join(d, "dump.rdb")
    r = subprocess.run(["redis-check-rdb", path], capture_output=True, timeout=60)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out
    assert "RDB looks OK" in out
    assert "3 keys read" in out
    if shutil.which("redis-server"):
        log = os.path.join(d, "redis.log")
        p = subprocess.run(["redis-server", "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", d,
                            "--save", "", "--logfile", log],
                           capture_output=True, timeout=30)
        # (Redis then runs its RDB check on the file and exits.)
        assert "no matching module type 'hotkv-vec'" in open(log).read()
        assert b"Ready to accept connections" not in p.stdout
