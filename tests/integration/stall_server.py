#!/usr/bin/env python3
"""A tiny RESP server that stalls on purpose (Python 3 standard library only).

Used by tests/integration/test_benchmark_tool.py to show that
hotkv-benchmark's open loop sees server stalls that a closed-loop generator
(redis-benchmark) hides.  Every --period-ms the whole event loop blocks for
--stall-ms (time.sleep inside the loop, like a fork or an fsync would): no
reads, no replies.

Commands: PING [msg], ECHO, GET, SET, DEL, INCR, HELLO [2|3], AUTH, SELECT,
CONFIG GET, CLIENT, QUIT, SUBSCRIBE, PUBLISH (delivery delayed by
--pubsub-delay-ms, to check clock units end to end), DISCONNECT (closes
the connection without a reply, to test disconnect accounting), anything
else -> -ERR unknown command.

    stall_server.py [--port 0] [--stall-ms 100] [--period-ms 1000]
                    [--pubsub-delay-ms 0] [--password PW]

Prints "READY <port>" on stdout once it listens.
"""
import argparse
import asyncio
import sys
import time


def bulk(b):
    if b is None:
        return b"$-1\r\n"
    return b"$%d\r\n%s\r\n" % (len(b), b)


def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


class State:
    def __init__(self, args):
        self.args = args
        self.data = {}
        self.channels = {}  # name -> set of connections


class Conn(asyncio.Protocol):
    def __init__(self, state):
        self.st = state
        self.buf = b""
        self.resp3 = False
        self.subs = set()
        self.authed = state.args.password is None
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        for ch in self.subs:
            self.st.channels.get(ch, set()).discard(self)
        self.transport = None

    def data_received(self, data):
        self.buf += data
        out = []
        while True:
            cmd = self.parse()
            if cmd is None:
                break
            if cmd == []:
                continue
            reply = self.execute(cmd)
            if reply is False:  # DISCONNECT
                if out:
                    self.transport.write(b"".join(out))
                self.transport.close()
                self.buf = b""
                return
            if reply is not None:
                out.append(reply)
        if out and self.transport:
            self.transport.write(b"".join(out))

    def parse(self):
        buf = self.buf
        if not buf:
            return None
        if buf[:1] != b"*":  # inline
            i = buf.find(b"\r\n")
            if i < 0:
                return None
            self.buf = buf[i + 2:]
            return buf[:i].split()
        i = buf.find(b"\r\n")
        if i < 0:
            return None
        n = int(buf[1:i])
        pos = i + 2
        args = []
        for _ in range(n):
            j = buf.find(b"\r\n", pos)
            if j < 0:
                return None
            ln = int(buf[pos + 1:j])
            start = j + 2
            if len(buf) < start + ln + 2:
                return None
            args.append(buf[start:start + ln])
            pos = start + ln + 2
        self.buf = buf[pos:]
        return args

    def push(self, items):
        head = b">" if self.resp3 else b"*"
        return head + b"%d\r\n" % len(items) + b"".join(items)

    def execute(self, args):
        name = args[0].upper()
        if name == b"AUTH":
            if self.st.args.password is not None and args[-1].decode() != self.st.args.password:
                return b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
            self.authed = True
            return b"+OK\r\n"
        if not self.authed:
            return b"-NOAUTH Authentication required.\r\n"
        if name == b"PING":
            return bulk(args[1]) if len(args) > 1 else b"+PONG\r\n"
        if name == b"ECHO":
            return bulk(args[1])
        if name == b"GET":
            return bulk(self.st.data.get(args[1]))
        if name == b"SET":
            self.st.data[args[1]] = args[2]
            return b"+OK\r\n"
        if name == b"DEL":
            return b":%d\r\n" % sum(self.st.data.pop(k, None) is not None for k in args[1:])
        if name == b"INCR":
            try:
                v = int(self.st.data.get(args[1], b"0")) + 1
            except ValueError:
                return b"-ERR value is not an integer or out of range\r\n"
            self.st.data[args[1]] = str(v).encode()
            return b":%d\r\n" % v
        if name == b"HELLO":
            if len(args) > 1 and args[1] == b"3":
                self.resp3 = True
                return (b"%3\r\n+server\r\n+stall\r\n+version\r\n+0.1\r\n"
                        b"+proto\r\n:3\r\n")
            return array([bulk(b"server"), bulk(b"stall"), bulk(b"proto"), b":2\r\n"])
        if name in (b"SELECT", b"CLIENT"):
            return b"+OK\r\n"
        if name == b"CONFIG":
            conf = {b"save": b"", b"appendonly": b"no"}
            if len(args) > 2 and args[2] in conf:
                return array([bulk(args[2]), bulk(conf[args[2]])])
            return b"*0\r\n"
        if name == b"QUIT":
            self.transport.write(b"+OK\r\n")
            return False
        if name == b"DISCONNECT":
            return False
        if name == b"SUBSCRIBE":
            out = []
            for ch in args[1:]:
                self.subs.add(ch)
                self.st.channels.setdefault(ch, set()).add(self)
                out.append(self.push([bulk(b"subscribe"), bulk(ch), b":%d\r\n" % len(self.subs)]))
            return b"".join(out)
        if name == b"PUBLISH":
            ch, msg = args[1], args[2]
            receivers = list(self.st.channels.get(ch, ()))
            delay = self.st.args.pubsub_delay_ms / 1000.0

            def deliver():
                for c in receivers:
                    if c.transport:
                        c.transport.write(c.push([bulk(b"message"), bulk(ch), bulk(msg)]))

            if delay > 0:
                asyncio.get_running_loop().call_later(delay, deliver)
            else:
                deliver()
            return b":%d\r\n" % len(receivers)
        return b"-ERR unknown command '%s', with args beginning with: \r\n" % args[0][:64]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stall-ms", type=float, default=100)
    ap.add_argument("--period-ms", type=float, default=1000)
    ap.add_argument("--pubsub-delay-ms", type=float, default=0)
    ap.add_argument("--password", default=None)
    args = ap.parse_args()
    state = State(args)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Conn(state), "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print("READY %d" % port, flush=True)

    if args.stall_ms > 0:
        period = args.period_ms / 1000.0
        start = loop.time()

        def stall(k):
            time.sleep(args.stall_ms / 1000.0)  # block the whole loop
            loop.call_at(start + (k + 1) * period, stall, k + 1)

        loop.call_at(start + period, stall, 1)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
