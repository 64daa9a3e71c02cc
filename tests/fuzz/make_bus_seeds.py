#!/usr/bin/python3
"""make_bus_seeds.py - the seed inputs of the cluster bus fuzz target
(tests/fuzz/corpus-bus/seed-*): one message of each type, laid out as
Redis 7.0's cluster bus (big-endian; a 2256-byte header, then the type's
data), from the names the harness's fixed view knows (cluster_fuzz_message
in src/cluster/cluster.c: A = "a" * 40, a master with slots 0-8191; B =
"b" * 40, its replica).  An input arrives on the outbound link of A, or
inbound when bit 0 of byte 2216 (reserved in the protocol) is set: each
seed exists both ways.

    /usr/bin/python3 tests/fuzz/make_bus_seeds.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-bus")
A, B, Z = b"a" * 40, b"b" * 40, b"\0" * 40
T_PING, T_PONG, T_MEET, T_FAIL, T_PUBLISH, T_AUTH_REQ, T_AUTH_ACK, T_UPDATE, T_MFSTART, T_MODULE, T_PUBSHARD = range(11)


def slots(lo, hi):
    bm = bytearray(2048)
    for s in range(lo, hi + 1):
        bm[s >> 3] |= 1 << (s & 7)
    return bytes(bm)


def header(typ, count=0, sender=A, master=Z, myslots=None, flags=1, cur=6, cfg=5, exts=0, mflags=0):
    h = bytearray(2256)
    h[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", h, 4, 0, 1, 7000, typ, count)
    struct.pack_into(">QQQ", h, 16, cur, cfg, 1234)
    h[40:80] = sender
    h[80:2128] = myslots if myslots is not None else slots(0, 8191)
    h[2128:2168] = master
    h[2168:2168 + 9] = b"127.0.0.1"
    struct.pack_into(">H", h, 2214, exts)
    struct.pack_into(">HHH", h, 2246, 0, 17000, flags)
    h[2252] = 0
    h[2253] = mflags
    return h


def gossip(name, flags, ip=b"127.0.0.3", port=7002):
    g = bytearray(104)
    g[0:40] = name
    struct.pack_into(">II", g, 40, 1, 2)
    g[48:48 + len(ip)] = ip
    struct.pack_into(">HHHH", g, 94, port, port + 10000, flags, 0)
    return bytes(g)


def ext(typ, data):
    body = data + b"\0" * ((8 - len(data) % 8) % 8)
    return struct.pack(">IHH", 8 + len(body), typ, 0) + body


def finish(h, data=b""):
    m = bytes(h) + data
    return m[:4] + struct.pack(">I", len(m)) + m[8:]


def seeds():
    c = b"c" * 40
    yield "ping", finish(header(T_PING, 2), gossip(B, 2) + gossip(c, 1))
    yield "pong-pfail", finish(header(T_PONG, 1), gossip(B, 2 | 4))
    yield "meet", finish(header(T_MEET, 1, sender=c), gossip(A, 1))
    exts = ext(0, b"host-a\0") + ext(1, b"human\0") + ext(2, B + struct.pack(">Q", 60)) + ext(3, b"d" * 40)
    yield "ping-ext", finish(header(T_PING, 1, exts=4, mflags=4), gossip(B, 2) + exts)
    yield "ping-replica", finish(header(T_PING, 0, sender=B, master=A, flags=2, myslots=slots(0, 8191)))
    yield "ping-claims-mine", finish(header(T_PING, 0, cfg=9, myslots=slots(8000, 9000)))
    yield "fail", finish(header(T_FAIL), B)
    yield "publish", finish(header(T_PUBLISH), struct.pack(">II", 4, 5) + b"chanhello")
    yield "publishshard", finish(header(T_PUBSHARD), struct.pack(">II", 2, 1) + b"chx")
    yield "auth-req", finish(header(T_AUTH_REQ, sender=B, master=A, flags=2, mflags=2))
    yield "auth-ack", finish(header(T_AUTH_ACK))
    yield "mfstart", finish(header(T_MFSTART, sender=B, master=A, flags=2))
    yield "update", finish(header(T_UPDATE), struct.pack(">Q", 12) + A + slots(0, 16383))
    yield "module", finish(header(T_MODULE), struct.pack(">QIB", 7, 3, 1) + b"\0\0\0" + b"abc")


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.startswith("seed-"):
            os.unlink(os.path.join(OUT, f))
    for name, m in seeds():
        inbound = bytearray(m)
        inbound[2216] |= 1
        for way, data in (("out", m), ("in", bytes(inbound))):
            with open(os.path.join(OUT, "seed-%s-%s" % (name, way)), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
