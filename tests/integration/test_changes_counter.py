"""rdb_changes_since_last_save counts changes as Redis does: per element
pushed, added, removed or popped by a collection command, a move between
two keys as one change, and a blocked pop as the pop it becomes.  The
counter decides when `save <seconds> <changes>` fires, so a count lower
than Redis's would snapshot less often than the same config does on Redis.
Every figure here is Redis 7's: the file also runs against Debian's
redis-server (HOTKV_SERVER=redis)."""
import threading
import time


def test_changes_counter_per_element(r):
    """Redis counts the changes of a collection write per element pushed,
    added, removed or popped (so `save <secs> <changes>` fires as it would
    on Redis), and a move between two keys as one change.  Each figure here
    is Redis 7's (the test runs against Debian's redis-server too)."""
    def changes():
        return int(r.info("persistence")["rdb_changes_since_last_save"])

    cases = [
        (("RPUSH", "l", "a", "b", "c", "a", "x", "y"), 6),
        (("LPUSH", "l", "z"), 1),
        (("LPUSHX", "l", "p", "q"), 2),
        (("LPUSHX", "nolist", "p", "q"), 0),
        (("LPOP", "l", 2), 2),
        (("RPOP", "l"), 1),
        (("LREM", "l", 0, "a"), 2),
        (("LREM", "l", 0, "nothere"), 0),
        (("LINSERT", "l", "BEFORE", "b", "n"), 1),
        (("LSET", "l", 0, "m"), 1),
        (("LMOVE", "l", "l2", "LEFT", "RIGHT"), 1),
        (("LMOVE", "l", "l", "LEFT", "RIGHT"), 1),
        (("RPOPLPUSH", "l", "l2"), 1),
        (("LTRIM", "l2", 0, -1), 0),
        (("RPUSH", "l3", 1, 2, 3, 4, 5), 5),
        (("LTRIM", "l3", 1, 2), 3),
        (("LMPOP", 2, "nolist", "l3", "LEFT", "COUNT", 5), 2),
        (("SADD", "s", "a", "b", "c", "a"), 3),
        (("SADD", "s", "a"), 0),
        (("SREM", "s", "a", "b", "zz"), 2),
        (("SADD", "s2", 1, 2, 3, 4), 4),
        (("SPOP", "s2", 3), 3),
        (("SPOP", "s2"), 1),
        (("SADD", "s3", 1, 2), 2),
        (("SPOP", "s3", 10), 2),
        (("SMOVE", "s", "s4", "c"), 2),
        (("HSET", "h", "f1", 1, "f2", 2, "f3", 3), 3),
        (("HSET", "h", "f1", 9), 1),
        (("HMSET", "h", "f4", 4, "f5", 5), 2),
        (("HDEL", "h", "f1", "f2", "nope"), 2),
        (("HINCRBY", "h", "f3", 1), 1),
        (("ZADD", "z", 1, "a", 2, "b", 3, "c"), 3),
        (("ZADD", "z", 5, "a", 6, "d", 3, "c"), 2),
        (("ZADD", "z", "CH", 7, "a"), 1),
        (("ZREM", "z", "a", "b", "nope"), 2),
        (("ZADD", "z2", 1, "a", 2, "b", 3, "c", 4, "d"), 4),
        (("ZREMRANGEBYSCORE", "z2", 1, 2), 2),
        (("ZPOPMIN", "z2", 5), 2),
        (("ZADD", "z3", 1, "a", 2, "b", 3, "c"), 3),
        (("ZPOPMAX", "z3"), 1),
        (("ZREMRANGEBYRANK", "z3", 0, -1), 2),
        (("SET", "a", 1), 1),
        (("RENAME", "a", "b"), 1),
        (("RENAMENX", "b", "c"), 1),
        (("MOVE", "c", 1), 1),
        (("XADD", "x", "1-0", "f", 1), 1),
        (("XADD", "x", "2-0", "f", 1), 1),
        (("XADD", "x", "3-0", "f", 1), 1),
        (("XADD", "x", "4-0", "f", 1), 1),
        (("XDEL", "x", "1-0", "2-0", "9-0"), 2),
        (("XTRIM", "x", "MAXLEN", 0), 2),
        (("RPUSH", "sl", 3, 1, 2), 3),
        (("SORT", "sl", "STORE", "st"), 3),
        (("SORT", "sl", "GET", "#", "GET", "#", "STORE", "st"), 6),
        (("SORT", "nolist", "STORE", "st"), 1),
        (("SORT", "nolist", "STORE", "st"), 0),
    ]
    for cmd, want in cases:
        c0 = changes()
        r.execute_command(*cmd)
        assert changes() - c0 == want, cmd


def test_changes_counter_blocked_pops(server, r, version):
    """A blocked BLPOP / BLMOVE served by a push counts as its plain pop or
    move: the push and the pop are 2 changes (Redis 7.2's list test; Redis
    7.0 counted only the push for BLPOP and BLMOVE)."""
    def changes():
        return int(r.info("persistence")["rdb_changes_since_last_save"])

    for cmd, want70 in ((("BLPOP", "bl", 0), 1), (("BLMOVE", "bl", "bl2", "LEFT", "LEFT", 0), 1),
                        (("BLMPOP", 0, 1, "bl", "LEFT", "COUNT", 3), 2)):
        want = 2 if version >= (7, 2) else want70
        c = server.client(decode_responses=True)
        try:
            c0 = changes()
            res = []
            t = threading.Thread(target=lambda: res.append(c.execute_command(*cmd)))
            t.start()
            for _ in range(200):
                if int(r.info("clients")["blocked_clients"]) == 1:
                    break
                time.sleep(0.01)
            r.lpush("bl", "a")
            t.join(5)
            assert res, cmd
            assert changes() - c0 == want, cmd
        finally:
            c.close()


def test_changes_counter_transactions(server, r):
    """Inside MULTI/EXEC each command counts as it would alone: MULTI and
    EXEC add nothing, a command that fails at run time adds nothing, and
    an EXEC refused by WATCH counts nothing (Redis 7's figures)."""
    def changes():
        return int(r.info("persistence")["rdb_changes_since_last_save"])

    cases = [
        ([("SET", "a", "1"), ("LPUSH", "l", "1", "2", "3")], 4),
        ([("SET", "a", "1"), ("INCR", "a"), ("DEL", "a", "b")], 3),
        ([("SADD", "s", "a", "b", "c"), ("SREM", "s", "a", "zz")], 4),
        ([("GET", "a")], 0),
        ([("SET", "a", "1"), ("LPUSH", "a", "x")], 1),
        ([("HSET", "h", "f1", "v", "f2", "v"), ("EXPIRE", "h", "100")], 3),
    ]
    for cmds, want in cases:
        r.flushall()
        before = changes()
        p = r.pipeline(transaction=True)
        for c in cmds:
            p.execute_command(*c)
        p.execute(raise_on_error=False)
        assert changes() - before == want, cmds
    r.flushall()
    before = changes()
    other = server.client()
    p = r.pipeline(transaction=True)
    p.watch("w")
    other.set("w", "1")
    p.multi()
    p.set("x", "1")
    try:
        p.execute()
    except Exception:  # redis.WatchError
        pass
    assert changes() - before == 1  # the other client's SET only
    other.close()
