#!/usr/bin/python3
"""Pipelined raw-RESP loader for bench/issue4.sh (no client library needed).

usage: issue4_load.py WHAT PORT [ARGS...]

  hashes PORT N [FIELDS=10] [VLEN=8]
        HSET hash:%d f0 V f1 V ... (FIELDS fields), N keys; V is a VLEN-byte
        string that is not an integer ('v' + digits), so no server can store
        it as a number.  Every reply must be :FIELDS.
  sets PORT N [MEMBERS=10] [str|int]
        SADD set:%d M ... (MEMBERS members), N keys.  str: 8-byte members
        's%07d' (not integers); int: integer members (i*MEMBERS+j), which
        Redis keeps as an intset.  Every reply must be :MEMBERS.
  zsets PORT N [MEMBERS=10]
        ZADD zset:%d S M ... (MEMBERS pairs), N keys; 8-byte members
        'z%07d', integer scores 1..MEMBERS.  Every reply must be :MEMBERS.
  list PORT KEY N [PER_CMD=100]
        RPUSH KEY element:0 element:1 ... element:N-1, PER_CMD elements per
        command.  The last reply must be :N.
  fill-list PORT KEY N DSIZE
        RPUSH KEY with N elements of DSIZE bytes ('x', redis-benchmark's
        payload), 100 per command.  The last reply must be :N.
  fill-set PORT KEY N
        SADD KEY element:%012d for 0..N-1 (redis-benchmark's member names),
        100 per command.  The replies must add up to N.
  fill-zset PORT KEY N
        ZADD KEY 0 member:0 1 member:1 ... (score i, member 'member:%d').
        The replies must add up to N.

Commands are sent in pipelined batches of about BATCH_BYTES and every reply
is checked.  Prints "objects=N payload_bytes=B commands=C" on success (B: the
key, field, member and value bytes sent, scores excluded); on an error reply
prints it to stderr and exits 2.
"""
import socket
import sys

BATCH_BYTES = 256 * 1024


def resp(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def _more(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            sys.exit("issue4_load.py: connection closed by server")
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._more()

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b":":
            return int(rest)
        if t in (b"+", b"-"):
            return (t, rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._more()
            v = self.buf[self.pos:self.pos + n]
            self.pos += n + 2
            return v
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        sys.exit("issue4_load.py: bad reply line %r" % line)

    def run(self, commands, check):
        """Send commands (lists of bytes) pipelined; check(i, reply) each."""
        batch, size, sent = [], 0, 0
        for c in commands:
            batch.append(resp(c))
            size += len(batch[-1])
            if size >= BATCH_BYTES:
                sent = self._flush(batch, sent, check)
                batch, size = [], 0
        if batch:
            sent = self._flush(batch, sent, check)
        return sent

    def _flush(self, batch, sent, check):
        self.s.sendall(b"".join(batch))
        for k in range(len(batch)):
            r = self.reply()
            if isinstance(r, tuple) and r[0] == b"-":
                sys.stderr.write("issue4_load.py: error reply to command %d: %s\n"
                                 % (sent + k, r[1].decode(errors="replace")))
                sys.exit(2)
            check(sent + k, r)
        return sent + len(batch)


def expect(value):
    def check(i, r):
        if r != value:
            sys.exit("issue4_load.py: command %d: expected :%d, got %r" % (i, value, r))
    return check


def chunks(n, per):
    for start in range(0, n, per):
        yield start, min(start + per, n)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, port, a = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    c = Conn(port)
    payload = 0
    total = [0]

    def adder(i, r):
        if not isinstance(r, int):
            sys.exit("issue4_load.py: command %d: expected an integer, got %r" % (i, r))
        total[0] += r

    if what == "hashes":
        n = int(a[0]); nf = int(a[1]) if len(a) > 1 else 10
        vlen = int(a[2]) if len(a) > 2 else 8
        fields = [b"f%d" % j for j in range(nf)]

        def gen():
            nonlocal payload
            for i in range(n):
                k = b"hash:%d" % i
                cmd = [b"HSET", k]
                for j, f in enumerate(fields):
                    v = (b"v%0*d" % (vlen - 1, (i * nf + j) % 10 ** (vlen - 1)))[:vlen]
                    cmd += [f, v]
                    payload += len(f) + len(v)
                payload += len(k)
                yield cmd
        cmds = c.run(gen(), expect(nf))
        objects = n
    elif what == "sets":
        n = int(a[0]); nm = int(a[1]) if len(a) > 1 else 10
        kind = a[2] if len(a) > 2 else "str"
        if kind not in ("str", "int"):
            sys.exit("issue4_load.py: sets: kind must be str or int")

        def gen():
            nonlocal payload
            for i in range(n):
                k = b"set:%d" % i
                if kind == "str":
                    ms = [b"s%07d" % ((i * nm + j) % 10 ** 7) for j in range(nm)]
                else:
                    ms = [b"%d" % (i * nm + j) for j in range(nm)]
                payload += len(k) + sum(len(m) for m in ms)
                yield [b"SADD", k] + ms
        cmds = c.run(gen(), expect(nm))
        objects = n
    elif what == "zsets":
        n = int(a[0]); nm = int(a[1]) if len(a) > 1 else 10

        def gen():
            nonlocal payload
            for i in range(n):
                k = b"zset:%d" % i
                cmd = [b"ZADD", k]
                payload += len(k)
                for j in range(nm):
                    m = b"z%07d" % ((i * nm + j) % 10 ** 7)
                    cmd += [b"%d" % (j + 1), m]
                    payload += len(m)
                yield cmd
        cmds = c.run(gen(), expect(nm))
        objects = n
    elif what in ("list", "fill-list"):
        key = a[0].encode(); n = int(a[1])
        if what == "list":
            per = int(a[2]) if len(a) > 2 else 100
            elem = lambda i: b"element:%d" % i
        else:
            per = 100
            val = b"x" * int(a[2])
            elem = lambda i: val
        last = [0]

        def gen():
            nonlocal payload
            for s, e in chunks(n, per):
                es = [elem(i) for i in range(s, e)]
                payload += sum(len(x) for x in es)
                yield [b"RPUSH", key] + es

        def check(i, r):
            if not isinstance(r, int):
                sys.exit("issue4_load.py: RPUSH %d: expected an integer, got %r" % (i, r))
            last[0] = r
        cmds = c.run(gen(), check)
        if last[0] != n:
            sys.exit("issue4_load.py: list length after load is %d, expected %d" % (last[0], n))
        objects = n
    elif what == "fill-set":
        key = a[0].encode(); n = int(a[1])

        def gen():
            nonlocal payload
            for s, e in chunks(n, 100):
                ms = [b"element:%012d" % i for i in range(s, e)]
                payload += sum(len(m) for m in ms)
                yield [b"SADD", key] + ms
        cmds = c.run(gen(), adder)
        if total[0] != n:
            sys.exit("issue4_load.py: SADD added %d members, expected %d" % (total[0], n))
        objects = n
    elif what == "fill-zset":
        key = a[0].encode(); n = int(a[1])

        def gen():
            nonlocal payload
            for s, e in chunks(n, 100):
                cmd = [b"ZADD", key]
                for i in range(s, e):
                    m = b"member:%d" % i
                    cmd += [b"%d" % i, m]
                    payload += len(m)
                yield cmd
        cmds = c.run(gen(), adder)
        if total[0] != n:
            sys.exit("issue4_load.py: ZADD added %d members, expected %d" % (total[0], n))
        objects = n
    else:
        sys.exit("issue4_load.py: unknown WHAT '%s'\n%s" % (what, __doc__))
    c.s.close()
    print("objects=%d payload_bytes=%d commands=%d" % (objects, payload, cmds))


if __name__ == "__main__":
    main()
