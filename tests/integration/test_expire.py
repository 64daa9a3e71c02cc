"""Key expiry integration tests (Redis 7.x semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Errors are
compared on the wire (raw `resp` client) so the "ERR" prefix is included.
"""
import time

import pytest

NOT_INT = ("error", "ERR value is not an integer or out of range")
NX_CONFLICT = ("error", "ERR NX and XX, GT or LT options at the same time are not compatible")
GT_LT_CONFLICT = ("error", "ERR GT and LT options at the same time are not compatible")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808
EXPIRE_CMDS = ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"]
FAR_SECONDS = 33177117420          # year 3021, seconds since the epoch
FAR_MS = FAR_SECONDS * 1000


def arity(cmd):
    return ("error", "ERR wrong number of arguments for '%s' command" % cmd)


def invalid_expire(cmd):
    return ("error", "ERR invalid expire time in '%s' command" % cmd)


def expired_keys(r):
    return int(r.info("stats")["expired_keys"])


# ------------------------------------------------------------ TTL / PTTL

def test_ttl_missing_key(resp):
    assert resp.call("TTL", "missing") == -2
    assert resp.call("PTTL", "missing") == -2


def test_ttl_no_expire(resp):
    resp.call("SET", "k", "v")
    assert resp.call("TTL", "k") == -1
    assert resp.call("PTTL", "k") == -1


def test_ttl_rounds_to_nearest_second(resp):
    # TTL is (pttl + 500) / 1000.
    resp.call("SET", "k", "v")
    resp.call("PEXPIRE", "k", "1200")
    assert resp.call("TTL", "k") == 1
    resp.call("PEXPIRE", "k", "1800")
    assert resp.call("TTL", "k") == 2
    resp.call("PEXPIRE", "k", "300")
    assert resp.call("TTL", "k") == 0


def test_ttl_arity(resp):
    for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"):
        assert resp.call(cmd) == arity(cmd.lower())
        assert resp.call(cmd, "a", "b") == arity(cmd.lower())


# --------------------------------------------------------- EXPIRE family

def test_expire(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100") == 1
    assert resp.call("TTL", "k") == 100
    assert 99000 < resp.call("PTTL", "k") <= 100000


def test_pexpire(resp):
    resp.call("SET", "k", "v")
    assert resp.call("PEXPIRE", "k", "100000") == 1
    assert 99000 < resp.call("PTTL", "k") <= 100000
    assert resp.call("TTL", "k") == 100


def test_expireat(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIREAT", "k", str(FAR_SECONDS)) == 1
    assert resp.call("EXPIRETIME", "k") == FAR_SECONDS
    assert resp.call("PEXPIRETIME", "k") == FAR_MS


def test_pexpireat(resp):
    resp.call("SET", "k", "v")
    assert resp.call("PEXPIREAT", "k", str(FAR_MS + 123)) == 1
    assert resp.call("PEXPIRETIME", "k") == FAR_MS + 123
    # EXPIRETIME rounds to the nearest second: (ms + 500) / 1000, like TTL.
    assert resp.call("EXPIRETIME", "k") == FAR_SECONDS
    resp.call("PEXPIREAT", "k", str(FAR_MS + 499))
    assert resp.call("EXPIRETIME", "k") == FAR_SECONDS
    resp.call("PEXPIREAT", "k", str(FAR_MS + 500))
    assert resp.call("EXPIRETIME", "k") == FAR_SECONDS + 1
    resp.call("PEXPIREAT", "k", str(FAR_MS + 999))
    assert resp.call("EXPIRETIME", "k") == FAR_SECONDS + 1


def test_expireat_relative_ttl(resp):
    resp.call("SET", "k", "v")
    at = int(time.time()) + 100
    assert resp.call("EXPIREAT", "k", str(at)) == 1
    assert 98 <= resp.call("TTL", "k") <= 100


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_expire_missing_key(resp, cmd):
    assert resp.call(cmd, "missing", "100" if "AT" not in cmd else str(FAR_SECONDS)) == 0
    assert resp.call("EXISTS", "missing") == 0


def test_expire_overwrites_previous_ttl(resp):
    resp.call("SET", "k", "v", "EX", "100")
    assert resp.call("EXPIRE", "k", "200") == 1
    assert resp.call("TTL", "k") == 200
    assert resp.call("EXPIRE", "k", "50") == 1
    assert resp.call("TTL", "k") == 50


def test_expiretime_missing_and_persistent(resp):
    assert resp.call("EXPIRETIME", "missing") == -2
    assert resp.call("PEXPIRETIME", "missing") == -2
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRETIME", "k") == -1
    assert resp.call("PEXPIRETIME", "k") == -1


def test_expiretime_matches_set_exat(r):
    at = int(time.time()) + 500
    r.set("k", "v", exat=at)
    assert r.expiretime("k") == at
    assert r.pexpiretime("k") == at * 1000


# ----------------------------------------------------- NX / XX / GT / LT

def test_expire_nx(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100", "NX") == 1
    assert resp.call("EXPIRE", "k", "200", "NX") == 0
    assert resp.call("TTL", "k") == 100


def test_expire_xx(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100", "XX") == 0
    assert resp.call("TTL", "k") == -1
    resp.call("EXPIRE", "k", "100")
    assert resp.call("EXPIRE", "k", "200", "XX") == 1
    assert resp.call("TTL", "k") == 200


def test_expire_gt(resp):
    resp.call("SET", "k", "v")
    # A key without TTL counts as infinite: GT never applies to it.
    assert resp.call("EXPIRE", "k", "100", "GT") == 0
    assert resp.call("TTL", "k") == -1
    resp.call("EXPIRE", "k", "100")
    assert resp.call("EXPIRE", "k", "50", "GT") == 0
    assert resp.call("EXPIRE", "k", "200", "GT") == 1
    assert resp.call("TTL", "k") == 200


def test_expire_lt(resp):
    resp.call("SET", "k", "v")
    # A key without TTL counts as infinite: any LT applies.
    assert resp.call("EXPIRE", "k", "100", "LT") == 1
    assert resp.call("TTL", "k") == 100
    assert resp.call("EXPIRE", "k", "200", "LT") == 0
    assert resp.call("EXPIRE", "k", "50", "LT") == 1
    assert resp.call("TTL", "k") == 50


def test_expire_gt_lt_equal_time_is_not_applied(resp):
    resp.call("SET", "k", "v")
    resp.call("PEXPIREAT", "k", str(FAR_MS))
    assert resp.call("PEXPIREAT", "k", str(FAR_MS), "GT") == 0
    assert resp.call("PEXPIREAT", "k", str(FAR_MS), "LT") == 0
    assert resp.call("EXPIREAT", "k", str(FAR_SECONDS), "GT") == 0
    assert resp.call("PEXPIREAT", "k", str(FAR_MS + 1), "GT") == 1
    assert resp.call("PEXPIRETIME", "k") == FAR_MS + 1


def test_expire_xx_gt_combination(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100", "XX", "GT") == 0
    resp.call("EXPIRE", "k", "100")
    assert resp.call("EXPIRE", "k", "200", "XX", "GT") == 1
    assert resp.call("EXPIRE", "k", "50", "XX", "LT") == 1
    assert resp.call("TTL", "k") == 50


def test_expire_options_case_insensitive_and_repeatable(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100", "nx", "Nx") == 1
    assert resp.call("PEXPIRE", "k", "200000", "gT") == 1
    assert resp.call("TTL", "k") == 200


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_pexpireat_options(resp, cmd):
    resp.call("SET", "k", "v")
    when = {"EXPIRE": "1000", "PEXPIRE": "1000000",
            "EXPIREAT": str(FAR_SECONDS), "PEXPIREAT": str(FAR_MS)}[cmd]
    assert resp.call(cmd, "k", when, "XX") == 0
    assert resp.call(cmd, "k", when, "GT") == 0
    assert resp.call(cmd, "k", when, "NX") == 1
    assert resp.call(cmd, "k", when, "NX") == 0
    assert resp.call(cmd, "k", when, "XX") == 1
    assert resp.call(cmd, "k", when, "LT") == 0


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
@pytest.mark.parametrize("opts", [["NX", "XX"], ["XX", "NX"], ["NX", "GT"], ["NX", "LT"],
                                  ["GT", "NX"], ["NX", "XX", "GT"]])
def test_expire_nx_conflicts(resp, cmd, opts):
    resp.call("SET", "k", "v")
    assert resp.call(cmd, "k", "100", *opts) == NX_CONFLICT
    assert resp.call("TTL", "k") == -1


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_expire_gt_lt_conflict(resp, cmd):
    resp.call("SET", "k", "v")
    assert resp.call(cmd, "k", "100", "GT", "LT") == GT_LT_CONFLICT
    assert resp.call(cmd, "k", "100", "LT", "GT") == GT_LT_CONFLICT
    assert resp.call("TTL", "k") == -1


def test_expire_unsupported_option(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "100", "FOO") == ("error", "ERR Unsupported option FOO")
    assert resp.call("PEXPIRE", "k", "100", "nx", "bar") == ("error", "ERR Unsupported option bar")
    assert resp.call("TTL", "k") == -1


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_expire_not_integer(resp, cmd):
    resp.call("SET", "k", "v")
    for bad in ("abc", "1.5", "", "99999999999999999999"):
        assert resp.call(cmd, "k", bad) == NOT_INT


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_expire_arity(resp, cmd):
    assert resp.call(cmd, "k") == arity(cmd.lower())
    assert resp.call(cmd) == arity(cmd.lower())


# ---------------------------------------------------------- overflow

@pytest.mark.parametrize("cmd,when", [
    ("EXPIRE", str(LLONG_MAX)),
    ("EXPIRE", "9223372036854775"),        # * 1000 + now overflows
    ("EXPIRE", str(LLONG_MIN)),
    ("EXPIRE", "-9223372036854776"),        # * 1000 underflows
    ("PEXPIRE", str(LLONG_MAX)),            # + now overflows
    ("PEXPIRE", str(LLONG_MAX - 1000)),
    ("EXPIREAT", str(LLONG_MAX)),
    ("EXPIREAT", "9223372036854776"),
])
def test_expire_overflow(resp, cmd, when):
    resp.call("SET", "k", "v")
    assert resp.call(cmd, "k", when) == invalid_expire(cmd.lower())
    assert resp.call("TTL", "k") == -1
    assert resp.call("GET", "k") == b"v"


def test_pexpireat_llong_max_is_accepted(resp):
    resp.call("SET", "k", "v")
    assert resp.call("PEXPIREAT", "k", str(LLONG_MAX)) == 1
    assert resp.call("PEXPIRETIME", "k") == LLONG_MAX
    assert resp.call("GET", "k") == b"v"


# ----------------------------------------- non-positive / past: delete

@pytest.mark.parametrize("cmd,when", [
    ("EXPIRE", "0"), ("EXPIRE", "-10"), ("PEXPIRE", "0"), ("PEXPIRE", "-1"),
    ("EXPIREAT", "1"), ("EXPIREAT", "0"), ("EXPIREAT", "-5"), ("PEXPIREAT", "1"),
    ("PEXPIRE", str(LLONG_MIN)),
])
def test_past_expire_deletes_key(resp, cmd, when):
    resp.call("SET", "k", "v")
    assert resp.call(cmd, "k", when) == 1
    assert resp.call("EXISTS", "k") == 0
    assert resp.call("TTL", "k") == -2
    assert resp.call("GET", "k") is None


def test_past_expire_counts_as_deletion_not_expiry(r):
    # Redis treats EXPIRE-in-the-past as a DEL (it does not bump expired_keys).
    r.set("k", "v")
    before = expired_keys(r)
    assert r.expire("k", -1) is True
    assert r.exists("k") == 0
    assert expired_keys(r) == before


def test_past_expire_on_missing_key(resp):
    assert resp.call("EXPIRE", "missing", "-1") == 0


def test_past_expire_with_gt_on_persistent_key_keeps_it(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "-10", "GT") == 0
    assert resp.call("EXPIRE", "k", "-10", "XX") == 0
    assert resp.call("EXISTS", "k") == 1


def test_past_expire_with_lt_or_nx_deletes(resp):
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "-10", "LT") == 1
    assert resp.call("EXISTS", "k") == 0
    resp.call("SET", "k", "v")
    assert resp.call("EXPIRE", "k", "-10", "NX") == 1
    assert resp.call("EXISTS", "k") == 0


# ----------------------------------------------------------------- PERSIST

def test_persist(resp):
    resp.call("SET", "k", "v", "EX", "100")
    assert resp.call("PERSIST", "k") == 1
    assert resp.call("TTL", "k") == -1
    assert resp.call("PERSIST", "k") == 0
    assert resp.call("PERSIST", "missing") == 0
    assert resp.call("GET", "k") == b"v"


def test_persist_then_expire_nx(resp):
    resp.call("SET", "k", "v", "EX", "100")
    resp.call("PERSIST", "k")
    assert resp.call("EXPIRE", "k", "5", "NX") == 1


# -------------------------------------------------- TTL preservation rules

def test_set_keepttl_keeps_ttl(r):
    r.set("k", "v", px=100000)
    r.set("k", "w", keepttl=True)
    assert r.get("k") == "w"
    assert 99000 < r.pttl("k") <= 100000


def test_set_without_keepttl_clears_ttl(r):
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1


def test_rename_keeps_ttl(r):
    r.set("a", "v", ex=100)
    r.rename("a", "b")
    assert r.ttl("b") == 100
    assert r.ttl("a") == -2


def test_rename_to_key_with_ttl_takes_source_ttl(r):
    r.set("a", "v")
    r.set("b", "w", ex=100)
    r.rename("a", "b")
    assert r.ttl("b") == -1


def test_renamenx_keeps_ttl(r):
    r.set("a", "v", ex=100)
    assert r.renamenx("a", "b") is True
    assert r.ttl("b") == 100


def test_modifying_commands_keep_ttl(r):
    r.set("k", "1", ex=100)
    r.incr("k")
    r.append("k", "0")
    r.setrange("k", 0, "3")
    r.incrbyfloat("k", 1)
    assert r.get("k") == "31"
    assert r.ttl("k") == 100


def test_overwriting_commands_clear_ttl(r):
    for setter in (lambda: r.set("k", "x"), lambda: r.getset("k", "x"),
                   lambda: r.mset({"k": "x"})):
        r.set("k", "v", ex=100)
        setter()
        assert r.ttl("k") == -1


def test_getex_persist_and_set(r):
    r.set("k", "v")
    r.getex("k", ex=100)
    assert r.ttl("k") == 100
    r.getex("k", persist=True)
    assert r.ttl("k") == -1


def test_del_then_recreate_has_no_ttl(r):
    r.set("k", "v", ex=100)
    r.delete("k")
    r.set("k", "v")
    assert r.ttl("k") == -1


# ----------------------------------------------- millisecond precision

def test_psetex_millisecond_precision(r):
    r.psetex("k", 100, "v")
    assert r.get("k") == "v"
    time.sleep(0.15)
    assert r.get("k") is None
    assert r.exists("k") == 0
    assert r.pttl("k") == -2


def test_pexpire_millisecond_precision(r):
    r.set("k", "v")
    r.pexpire("k", 200)
    time.sleep(0.05)
    assert r.get("k") == "v"
    assert 0 < r.pttl("k") <= 150
    time.sleep(0.2)
    assert r.get("k") is None


def test_set_px_precision(r):
    r.set("k", "v", px=100)
    time.sleep(0.15)
    assert r.get("k") is None


def test_pexpireat_precision(r):
    r.set("k", "v")
    r.pexpireat("k", int(time.time() * 1000) + 100)
    assert r.exists("k") == 1
    time.sleep(0.2)
    assert r.exists("k") == 0


# -------------------------------------------------------------- lazy expiry

def test_expired_key_invisible_to_reads(resp):
    resp.call("SET", "k", "v", "PX", "20")
    time.sleep(0.06)
    assert resp.call("GET", "k") is None
    assert resp.call("EXISTS", "k") == 0
    assert resp.call("TTL", "k") == -2
    assert resp.call("STRLEN", "k") == 0
    assert resp.call("TYPE", "k") == "none"
    assert resp.call("MGET", "k") == [None]
    assert resp.call("KEYS", "*") == []


def test_expired_key_treated_as_missing_by_writes(r):
    r.set("n", "41", px=20)
    r.set("a", "abc", px=20)
    r.set("x", "v", px=20)
    r.set("y", "v", px=20)
    time.sleep(0.06)
    assert r.incr("n") == 1
    assert r.ttl("n") == -1
    assert r.append("a", "z") == 1
    assert r.ttl("a") == -1
    assert r.set("x", "new", nx=True) is True
    assert r.get("x") == "new"
    assert r.ttl("x") == -1
    assert r.set("y", "new", xx=True) is None


def test_expired_key_rename_fails(resp):
    resp.call("SET", "k", "v", "PX", "20")
    time.sleep(0.06)
    assert resp.call("RENAME", "k", "k2") == ("error", "ERR no such key")
    assert resp.call("EXPIRE", "k", "100") == 0
    assert resp.call("PERSIST", "k") == 0


def test_lazy_expiry_on_access_counts_expired_keys(r):
    before = expired_keys(r)
    pipe = r.pipeline(transaction=False)
    for i in range(200):
        pipe.set("lazy:%d" % i, "v", px=30)
    pipe.execute()
    time.sleep(0.08)
    # Whether the active cycle or this access reclaims them, they are gone.
    assert r.mget(["lazy:%d" % i for i in range(200)]) == [None] * 200
    assert expired_keys(r) - before == 200
    assert r.dbsize() == 0


def test_expired_keys_stat_increases(r):
    before = expired_keys(r)
    r.set("k", "v", px=10)
    time.sleep(0.03)
    assert r.get("k") is None
    assert expired_keys(r) == before + 1


# ------------------------------------------------------------ active expiry

def test_active_expiry_reclaims_untouched_keys(r):
    before = expired_keys(r)
    n = 20000
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set("active:%d" % i, "v", px=100)
    pipe.execute()
    r.set("persistent", "v")
    # never touch the volatile keys again: only the active cycle may free them
    deadline = time.time() + 5
    size = r.dbsize()
    while time.time() < deadline:
        size = r.dbsize()
        if size == 1:
            break
        time.sleep(0.05)
    assert size == 1
    assert r.get("persistent") == "v"
    assert expired_keys(r) - before == n


def test_active_expiry_in_other_db(resp, server):
    c = server.client(db=4, decode_responses=True)
    try:
        pipe = c.pipeline(transaction=False)
        for i in range(1000):
            pipe.set("x:%d" % i, "v", px=50)
        pipe.execute()
        deadline = time.time() + 5
        while time.time() < deadline and c.dbsize() > 0:
            time.sleep(0.05)
        assert c.dbsize() == 0
    finally:
        c.close()
