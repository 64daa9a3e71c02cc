#!/usr/bin/python3
"""make_seeds.py - regenerate the seed inputs of the RESTORE, RDB, AOF and
AOF-manifest fuzz targets from a real server.

Starts build/hotkv-server (or $HOTKV_BIN) in a temporary directory with
small listpack / intset thresholds (so every encoding shows up with a
handful of elements), creates keys of every type and encoding, and writes:

  tests/fuzz/corpus-restore/seed-<name>   DUMP payloads WITHOUT the 10-byte
                                          trailer (RDB version + CRC-64): the
                                          RESTORE harness appends a valid one
  tests/fuzz/corpus-rdb/seed-<name>       whole dump.rdb files made by SAVE
  tests/fuzz/corpus-aof/seed-<name>       AOF files (commands; RDB preamble)
  tests/fuzz/corpus-manifest/seed-<name>  AOF manifests the server wrote
  tests/fuzz/corpus-hnsw/seed-<name>      the HNSW graphs of the vector-set
                                          payloads (hnsw_save's bytes without
                                          their 8-byte checksum trailer)
  tests/fuzz/corpus-function/seed-<name>  FUNCTION DUMP payloads WITHOUT the
                                          10-byte trailer
  tests/fuzz/corpus-config/seed-<name>    config files: CONFIG GET * of the
                                          server written back as a file
  tests/fuzz/corpus-vexpr/seed-<name>     FILTER expressions from
                                          tests/unit/test_vexpr.c and
                                          tests/integration/test_vset.py,
                                          with their JSON after a NUL byte

Run under Debian's python3 with python3-redis:
    /usr/bin/python3 tests/fuzz/make_seeds.py
Existing seed-* files of those corpora are replaced; other files (saved
findings, merged inputs) are kept.
"""
import ast
import glob
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("HOTKV_BIN", os.path.join(ROOT, "build", "hotkv-server"))
OUT = os.path.join(ROOT, "tests", "fuzz")

SMALL = ["--list-max-listpack-size", "4", "--hash-max-listpack-entries", "4",
         "--set-max-intset-entries", "4", "--set-max-listpack-entries", "4",
         "--zset-max-listpack-entries", "4", "--stream-node-max-entries", "3"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, extra=()):
        self.dir = tempfile.mkdtemp(prefix="hk-seeds-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--save", ""]
            + SMALL + list(extra),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.r = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                self.r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            raise SystemExit("the server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def fp32(v):
    return struct.pack("<%df" % len(v), *v)


def populate(r):
    """Keys of every type and encoding; returns {seed name: key}."""
    k = {}
    r.set("s:raw", "hello world"); k["string-raw"] = "s:raw"
    r.set("s:int", 123456789); k["string-int"] = "s:int"
    r.set("s:neg", -42); k["string-int-neg"] = "s:neg"
    r.set("s:lzf", "abcdefgh" * 40); k["string-lzf"] = "s:lzf"
    r.set("s:bin", bytes(range(256))); k["string-binary"] = "s:bin"
    r.rpush("l:lp", "a", "b", 1, 2, -300, 70000, "x" * 70); k["list-listpack"] = "l:lp"
    r.rpush("l:ql", *["e%d" % i for i in range(12)], *range(1000, 1006)); k["list-quicklist"] = "l:ql"
    r.rpush("l:big", "y" * 300, "z" * 20); k["list-quicklist-lzf"] = "l:big"
    r.sadd("set:int", 1, 2, 3, -7); k["set-intset"] = "set:int"
    r.sadd("set:int64", 1, 5000000000); k["set-intset-64"] = "set:int64"
    r.sadd("set:lp", "a", "b", "c"); k["set-listpack"] = "set:lp"
    r.sadd("set:ht", *["m%d" % i for i in range(8)]); k["set-hashtable"] = "set:ht"
    r.hset("h:lp", mapping={"f": "v", "f2": 12, "n": -1}); k["hash-listpack"] = "h:lp"
    r.hset("h:lpex", mapping={"a": 1, "b": "two", "c": "3"})
    r.execute_command("HEXPIRE", "h:lpex", 100000, "FIELDS", 1, "a")
    r.execute_command("HPEXPIREAT", "h:lpex", int(time.time() * 1000) + 5000000, "FIELDS", 1, "b")
    k["hash-listpackex"] = "h:lpex"
    r.hset("h:ht", mapping={"f%d" % i: "v%d" % i for i in range(8)}); k["hash-hashtable"] = "h:ht"
    r.hset("h:htttl", mapping={"f%d" % i: i for i in range(8)})
    r.execute_command("HEXPIRE", "h:htttl", 100000, "FIELDS", 3, "f1", "f3", "f5")
    k["hash-hashtable-ttl"] = "h:htttl"
    r.zadd("z:lp", {"a": 1, "b": 2.5, "c": -3}); k["zset-listpack"] = "z:lp"
    r.zadd("z:sl", {"m%d" % i: i * 1.5 for i in range(8)}); k["zset-skiplist"] = "z:sl"
    r.zadd("z:inf", {"lo": float("-inf"), "hi": float("inf"), "z": 0}); k["zset-inf"] = "z:inf"
    for i in range(7):
        r.xadd("x:s", {"f": i, "g": "v%d" % i}, id="%d-%d" % (1000 + i // 2, i))
    k["stream-plain"] = "x:s"
    for i in range(8):
        r.xadd("x:g", {"a": i} if i % 2 else {"a": i, "b": "bee"})
    r.xgroup_create("x:g", "g1", id="0")
    r.xgroup_create("x:g", "g2", id="$")
    r.xreadgroup("g1", "alice", {"x:g": ">"}, count=3)
    r.xreadgroup("g1", "bob", {"x:g": ">"}, count=2)
    first = r.xrange("x:g", count=1)[0][0]
    r.xack("x:g", "g1", first)
    r.execute_command("XAUTOCLAIM", "x:g", "g1", "carol", 0, "0-0", "COUNT", 1)
    r.xdel("x:g", r.xrange("x:g")[-1][0])
    k["stream-groups-pel"] = "x:g"
    r.xadd("x:e", {"a": 1}, id="5-1")
    r.xdel("x:e", "5-1")
    r.xgroup_create("x:e", "g", id="0")
    k["stream-empty-group"] = "x:e"
    r.xadd("x:trim", {"k": "v"}, id="1-1")
    r.xadd("x:trim", {"k": "w"}, id="2-1")
    r.xtrim("x:trim", maxlen=1)
    k["stream-trimmed"] = "x:trim"
    vecs = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0.5, 0, 0], [0.1, 0.2, 0.3, 0.4], [-1, 0, 0.5, 0]]
    for i, v in enumerate(vecs):
        r.execute_command("VADD", "v:q8", "FP32", fp32(v), "e%d" % i)
        r.execute_command("VADD", "v:fp", "FP32", fp32(v), "e%d" % i, "NOQUANT", "M", 4)
        r.execute_command("VADD", "v:bin", "VALUES", 4, *v, "e%d" % i, "BIN")
        args = ["SETATTR", '{"year": %d, "genre": "g%d"}' % (1990 + i, i % 2)] if i % 2 else []
        r.execute_command("VADD", "v:attr", "VALUES", 4, *v, "e%d" % i, *args)
    r.execute_command("VREM", "v:fp", "e2")
    k["vset-q8"] = "v:q8"
    k["vset-noquant-m4-deleted"] = "v:fp"
    k["vset-bin"] = "v:bin"
    k["vset-attr"] = "v:attr"
    for i, v in enumerate(vecs):
        r.execute_command("VADD", "v:red", "REDUCE", 2, "VALUES", 4, *v, "e%d" % i)
    k["vset-reduce"] = "v:red"
    r.execute_command("VADD", "v:one", "VALUES", 2, 3, 4, "only")
    k["vset-single"] = "v:one"
    return k


WRITTEN = set()


def write(corpus, name, data):
    """Write a seed, unless the same bytes went to that corpus already."""
    if (corpus, data) in WRITTEN:
        return
    WRITTEN.add((corpus, data))
    d = os.path.join(OUT, corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def clear(corpus):
    for p in glob.glob(os.path.join(OUT, corpus, "seed-*")):
        os.unlink(p)


def restore_seeds():
    clear("corpus-restore")
    s = Server()
    try:
        keys = populate(s.r)
        for ver in (10, 11, 12):
            s.r.config_set("rdb-version", ver)
            for comp in ("yes", "no"):
                s.r.config_set("rdbcompression", comp)
                for name, key in keys.items():
                    p = s.r.dump(key)
                    assert p is not None, key
                    tag = "%s-v%d" % (name, ver) + ("" if comp == "yes" else "-nocomp")
                    write("corpus-restore", tag, p[:-10])
    finally:
        s.stop()


def rdb_seeds():
    clear("corpus-rdb")
    s = Server()
    try:
        r = s.r
        keys = populate(r)
        r.expire("s:raw", 100000)
        r.pexpireat("l:lp", int(time.time() * 1000) + 9000000)
        r.select(3)
        r.set("db3", "x")
        r.expire("db3", 5000)
        r.select(0)
        r.execute_command("FUNCTION", "LOAD",
                          "#!lua name=seedlib\nredis.register_function('f1', function(k, a) return 1 end)")
        for ver in (10, 11, 12):
            r.config_set("rdb-version", ver)
            r.save()
            with open(os.path.join(s.dir, "dump.rdb"), "rb") as f:
                write("corpus-rdb", "all-v%d" % ver, f.read())
        r.config_set("rdbcompression", "no")
        r.config_set("rdb-version", 11)
        r.save()
        with open(os.path.join(s.dir, "dump.rdb"), "rb") as f:
            write("corpus-rdb", "all-nocomp", f.read())
        # One small file per kind of key: quicker to mutate (no function
        # library: loading one costs a Lua state per input).
        r.config_set("rdbcompression", "yes")
        r.execute_command("FUNCTION", "FLUSH")
        kinds = {}
        for name, key in keys.items():
            kinds.setdefault(name.split("-")[0], []).append(key)
        all_dumps = {key: r.dump(key) for key in keys.values()}
        for kind, ks in kinds.items():
            dumps = {key: all_dumps[key] for key in ks}
            r.flushall()
            for key, p in dumps.items():
                r.restore(key, 0, p)
            r.save()
            with open(os.path.join(s.dir, "dump.rdb"), "rb") as f:
                write("corpus-rdb", "only-" + kind, f.read())
        r.flushall()
        r.save()
        with open(os.path.join(s.dir, "dump.rdb"), "rb") as f:
            write("corpus-rdb", "empty", f.read())
    finally:
        s.stop()


def aof_seeds():
    clear("corpus-aof")
    clear("corpus-manifest")
    for preamble in ("no", "yes"):
        s = Server(["--appendonly", "yes", "--aof-use-rdb-preamble", preamble, "--appendfsync", "always"])
        try:
            r = s.r
            aofdir = os.path.join(s.dir, "appendonlydir")
            populate(r)
            r.expire("s:raw", 100000)
            r.select(2)
            r.set("k2", "v")
            with r.pipeline(transaction=True) as p:
                p.incr("counter")
                p.lpush("l2", "x")
                p.execute()
            r.execute_command("FUNCTION", "LOAD",
                              "#!lua name=aoflib\nredis.register_function('f1', function(k, a) return 1 end)")
            r.eval("redis.call('set', KEYS[1], ARGV[1])", 1, "evk", "val")
            r.execute_command("SETEX", "tmp", 100, "v")
            r.delete("s:neg")
            time.sleep(0.2)
            if preamble == "no":
                incr = sorted(glob.glob(os.path.join(aofdir, "*.incr.aof")))[-1]
                with open(incr, "rb") as f:
                    data = f.read()
                write("corpus-aof", "incr-all-types", data)
                # Smaller pieces: each a valid stream of whole commands.
                cmds, pos = [], 0
                while pos < len(data):
                    n = data.index(b"\r\n", pos)
                    argc = int(data[pos + 1:n])
                    q = n + 2
                    for _ in range(argc):
                        m = data.index(b"\r\n", q)
                        q = m + 2 + int(data[q + 1:m]) + 2
                    cmds.append(data[pos:q])
                    pos = q
                for i in range(0, len(cmds), 8):
                    write("corpus-aof", "incr-part%02d" % (i // 8), b"".join(cmds[i:i + 8]))
            r.bgrewriteaof()
            for _ in range(200):
                info = r.info("persistence")
                if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                    break
                time.sleep(0.05)
            time.sleep(0.2)
            r.set("after-rewrite", "1")
            time.sleep(0.1)
            base = glob.glob(os.path.join(aofdir, "*.base.*"))[0]
            with open(base, "rb") as f:
                write("corpus-aof", "base-preamble-" + preamble, f.read())
            man = glob.glob(os.path.join(aofdir, "*.manifest"))[0]
            with open(man, "rb") as f:
                write("corpus-manifest", "server-" + preamble, f.read())
        finally:
            s.stop()
    write("corpus-aof", "multi-exec-truncated",
          b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n")
    write("corpus-aof", "annotation-select",
          b"#TS:1700000000\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\n7\r\n")
    write("corpus-manifest", "quoted",
          b'file "appendonly aof.1.base.rdb" seq 1 type b\n'
          b"file appendonly.aof.1.incr.aof seq 1 type i extra x\n"
          b"file appendonly.aof.0.base.aof seq 0 type h\n")


def function_seeds():
    clear("corpus-function")
    s = Server()
    try:
        r = s.r
        libs = [
            "#!lua name=one\nredis.register_function('f1', function(keys, args) return 1 end)",
            "#!lua name=two\nlocal function g(keys, args) return redis.call('GET', keys[1]) end\n"
            "redis.register_function{function_name='g2', callback=g, flags={'no-writes'}, description='d'}\n"
            "redis.register_function('h2', function() return {1, 'x'} end)",
            "#!lua name=three\n-- comment\nlocal t = {} for i = 1, 3 do t[i] = i end\n"
            "redis.register_function('f3', function() return #t end)",
        ]
        for i, code in enumerate(libs):
            r.execute_command("FUNCTION", "LOAD", code)
            write("corpus-function", "libs-%d" % (i + 1), r.execute_command("FUNCTION", "DUMP")[:-10])
        r.execute_command("FUNCTION", "FLUSH")
        r.execute_command("FUNCTION", "LOAD", libs[2])
        write("corpus-function", "lib-three-only", r.execute_command("FUNCTION", "DUMP")[:-10])
    finally:
        s.stop()


def rdb_len(b, i):
    """An RDB length at b[i]: (value, next index, is_special_encoding)."""
    t = b[i] >> 6
    if t == 0:
        return b[i] & 0x3f, i + 1, False
    if t == 1:
        return ((b[i] & 0x3f) << 8) | b[i + 1], i + 2, False
    if t == 3:
        return b[i] & 0x3f, i + 1, True
    if b[i] == 0x80:
        return int.from_bytes(b[i + 1:i + 5], "big"), i + 5, False
    if b[i] == 0x81:
        return int.from_bytes(b[i + 1:i + 9], "big"), i + 9, False
    raise ValueError("bad length byte %#x" % b[i])


def vset_graph(payload):
    """The hnsw_save bytes inside a vector-set DUMP body (uncompressed)."""
    assert payload[0] == 7
    _, i, _ = rdb_len(payload, 1)              # module id
    vals = []
    for _ in range(4):                          # dim, quant, M, reduce
        op, i, _ = rdb_len(payload, i)
        v, i, _ = rdb_len(payload, i)
        vals.append(v)
    graph = b""
    first = True
    while True:
        op, j, _ = rdb_len(payload, i)
        if op != 5:                             # RDB_MODULE_OPCODE_STRING
            break
        n, j, special = rdb_len(payload, j)
        assert not special
        if vals[3] and first:                   # the REDUCE projection
            first = False
        else:
            graph += payload[j:j + n]
        i = j + n
    return graph


def hnsw_seeds():
    clear("corpus-hnsw")
    for f in sorted(glob.glob(os.path.join(OUT, "corpus-restore", "seed-vset-*-nocomp"))):
        with open(f, "rb") as fh:
            g = vset_graph(fh.read())
        write("corpus-hnsw", os.path.basename(f)[len("seed-"):], g[:-8])


def c_strings(text):
    """The C string literals of text (adjacent ones joined), decoded."""
    out = []
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
        lit = m.group(1)
        try:
            out.append(ast.literal_eval('b"' + lit + '"'))
        except (ValueError, SyntaxError):
            pass
    return out


def vexpr_seeds():
    clear("corpus-vexpr")
    seen = set()
    n = 0
    with open(os.path.join(ROOT, "tests", "unit", "test_vexpr.c")) as f:
        src = f.read()
    # T("e") F("e") bad("e") TJ("e", "json") FJ(...) ev("e", "json")
    for m in re.finditer(r'\b(?:T|F|TJ|FJ|bad|ev)\((.*?)\);', src):
        lits = c_strings(m.group(1))
        if not lits:
            continue
        data = lits[0] + (b"\0" + lits[1] if len(lits) > 1 else b"")
        if data in seen or len(data) > 2000:
            continue
        seen.add(data)
        write("corpus-vexpr", "unit-%03d" % n, data)
        n += 1
    with open(os.path.join(ROOT, "tests", "integration", "test_vset.py")) as f:
        py = f.read()
    for m in re.finditer(r'"FILTER",\s*(\'[^\']*\'|"[^"]*")', py):
        data = ast.literal_eval(m.group(1)).encode()
        if data in seen:
            continue
        seen.add(data)
        write("corpus-vexpr", "vset-%03d" % n, data + b'\0{"year": 1995, "genre": "action", "rating": 3, "n": 2}')
        n += 1


def config_seeds():
    clear("corpus-config")
    s = Server()
    try:
        conf = s.r.config_get("*")
    finally:
        s.stop()
    lines = []
    for k in sorted(conf):
        v = conf[k]
        if k in ("dir", "logfile", "pidfile", "bind", "port"):
            continue
        lines.append('%s "%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"')) if v == "" or " " in v
                     else "%s %s" % (k, v))
    write("corpus-config", "all-params", ("\n".join(lines) + "\n").encode())
    write("corpus-config", "typical",
          b"# a comment\n  port 7000\nmaxmemory 100mb\nmaxmemory-policy allkeys-lru\n"
          b"save 900 1 300 10\nappendonly no\nrequirepass \"p a\\\"ss\"\n"
          b"client-output-buffer-limit normal 0 0 0 replica 256mb 64mb 60\nnotify-keyspace-events Ex\n"
          b"rename-command FLUSHALL \"\"\nhash-max-listpack-entries 0x10\n")
    write("corpus-config", "quotes", b"requirepass 'single quoted'\nlogfile \"\"\nloglevel \"warning\"\n")
    # Redis 7.2 directives HotKV accepts with no effect (config/compat.tab),
    # the old slave-* names and the specials.
    write("corpus-config", "redis72",
          b"always-show-logo yes\nset-proc-title yes\nproc-title-template \"{title} {listen-addr} {server-mode}\"\n"
          b"replicaof 127.0.0.1 6380\nslaveof no one\nslave-read-only yes\nrepl-diskless-load swapdb\n"
          b"repl-backlog-size 1mb\noom-score-adj relative\noom-score-adj-values 0 200 800\n"
          b"shutdown-on-sigterm save now\nshutdown-on-sigint \"nosave force\"\nunixsocketperm 700\n"
          b"activedefrag no\ncluster-enabled no\ntls-port 0\nsyslog-facility local7\nlocale-collate C\n"
          b"cluster-announce-hostname host-1.example\nlist-max-ziplist-entries 512\nlua-replicate-commands yes\n"
          b"include /nonexistent-dir-for-fuzz/*.conf\n")


if __name__ == "__main__":
    if not os.path.exists(BIN):
        sys.exit("%s is missing: run make first" % BIN)
    restore_seeds()
    rdb_seeds()
    aof_seeds()
    hnsw_seeds()
    function_seeds()
    vexpr_seeds()
    config_seeds()
    for c in ("corpus-restore", "corpus-rdb", "corpus-aof", "corpus-manifest", "corpus-hnsw", "corpus-function", "corpus-vexpr",
              "corpus-config"):
        fs = glob.glob(os.path.join(OUT, c, "seed-*"))
        print("%s: %d seeds, %d bytes" % (c, len(fs), sum(os.path.getsize(f) for f in fs)))
