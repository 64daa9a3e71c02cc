#!/usr/bin/python3
"""Pipelined raw-RESP loader for bench/issue2.sh (no client library needed).

usage: memkey.py PORT [NKEYS=1000000] [VALUE_SIZE=256] [BATCH=1000]

Sets exactly NKEYS keys named like redis-benchmark's -r keys
(key:%012d, i.e. key:000000000123) to VALUE_SIZE-byte values of 'x'
(redis-benchmark's payload), using plain SET commands sent in pipelined
batches; checks every reply is +OK. Prints "keys=N avg_key_len=L".
"""
import socket
import sys


def main():
    port = int(sys.argv[1])
    nkeys = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    vsize = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    val = b"x" * vsize
    tail = b"\r\n$%d\r\n%s\r\n" % (vsize, val)
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    keylen_total = 0
    ok = b"+OK\r\n"
    for start in range(0, nkeys, batch):
        end = min(start + batch, nkeys)
        parts = []
        for i in range(start, end):
            k = b"key:%012d" % i
            keylen_total += len(k)
            parts.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s%s" % (len(k), k, tail))
        s.sendall(b"".join(parts))
        want = len(ok) * (end - start)
        buf = bytearray()
        while len(buf) < want:
            chunk = s.recv(want - len(buf))
            if not chunk:
                sys.exit("memkey.py: connection closed by server")
            buf += chunk
        if bytes(buf) != ok * (end - start):
            sys.exit("memkey.py: unexpected reply: %r" % bytes(buf[:200]))
    s.close()
    print("keys=%d avg_key_len=%.2f" % (nkeys, keylen_total / nkeys if nkeys else 0))


if __name__ == "__main__":
    main()
