"""Bit command integration tests: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
BITFIELD and BITFIELD_RO (Redis 7.2 semantics).

Reference: Debian's redis-server 7.0.15 (HOTKV_SERVER=redis).  Where 7.2
changed behaviour (BITCOUNT/BITPOS now check their arguments before looking
at the key, so a missing key no longer hides an argument error) the tests
branch on the server's reported version.  Error replies are compared on the
wire through the raw `resp` client; binary values go through `rb`.
"""
import random

import pytest

from helpers import arity_error as arity, make_nonstring

WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = ("error", "ERR syntax error")
NOT_INT = ("error", "ERR value is not an integer or out of range")
BIT_OFFSET = ("error", "ERR bit offset is not an integer or out of range")
BIT_VALUE = ("error", "ERR bit is not an integer or out of range")
BIT_ARG = ("error", "ERR The bit argument must be 1 or 0.")
BITOP_NOT = ("error", "ERR BITOP NOT must be called with a single source key.")
BF_TYPE = ("error", "ERR Invalid bitfield type. Use something like i16 u8. "
           "Note that u64 is not supported but i64 is.")
BF_OVERFLOW = ("error", "ERR Invalid OVERFLOW type specified")
BF_RO = ("error", "ERR BITFIELD_RO only supports the GET subcommand")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808
MB = 1024 * 1024




def version_at_least(resp, major, minor):
    info = resp.call("INFO", "server").decode()
    for line in info.split("\r\n"):
        if line.startswith("redis_version:"):
            v = [int(x) for x in line.split(":", 1)[1].split(".")[:2]]
            return v >= [major, minor]
    return False


@pytest.fixture
def small_bulk_len(resp):
    """Lower proto-max-bulk-len to its 1 MB minimum for offset-limit tests."""
    old = resp.call("CONFIG", "GET", "proto-max-bulk-len")[1]
    assert resp.call("CONFIG", "SET", "proto-max-bulk-len", str(MB)) == "OK"
    yield MB
    assert resp.call("CONFIG", "SET", "proto-max-bulk-len", old) == "OK"


# ------------------------------------------------------- Python models ---

def bits_of(data):
    return "".join(format(b, "08b") for b in data)


def resolve(start, end, total):
    """Redis's range rule: negatives from the end, clamp; None when empty."""
    if start < 0:
        start += total
    if end < 0:
        end += total
    start = max(start, 0)
    end = max(end, 0)
    end = min(end, total - 1)
    if start > end:
        return None
    return start, end


def ref_bitcount(data, start=None, end=None, unit="byte"):
    if data is None:
        return 0
    if start is None:
        return bits_of(data).count("1")
    if start < 0 and end < 0 and start > end:
        return 0
    if unit == "bit":
        rng = resolve(start, end, len(data) * 8)
        return 0 if rng is None else bits_of(data)[rng[0]:rng[1] + 1].count("1")
    rng = resolve(start, end, len(data))
    return 0 if rng is None else bits_of(data[rng[0]:rng[1] + 1]).count("1")


def ref_bitpos(data, bit, start=None, end=None, unit="byte"):
    if data is None:
        return -1 if bit else 0
    bits = bits_of(data)
    s = 0 if start is None else start
    e = -1 if end is None else end
    total = len(bits) if unit == "bit" else len(data)
    rng = resolve(s, e, total)
    if rng is None:
        return -1
    lo, hi = rng if unit == "bit" else (rng[0] * 8, rng[1] * 8 + 7)
    pos = bits.find(str(bit), lo, hi + 1)
    if pos >= 0:
        return pos
    if bit == 0 and end is None:
        return hi + 1
    return -1


def ref_bitop(op, values):
    maxlen = max([len(v) for v in values] + [0])
    padded = [v + b"\x00" * (maxlen - len(v)) for v in values]
    out = bytearray(padded[0])
    if op == "not":
        out = bytearray(~b & 0xff for b in out)
    for v in padded[1:]:
        for i in range(maxlen):
            if op == "and":
                out[i] &= v[i]
            elif op == "or":
                out[i] |= v[i]
            else:
                out[i] ^= v[i]
    return bytes(out)


def rand_bytes(rng, n):
    return bytes(rng.choice([0, 0xff, rng.randrange(256)]) for _ in range(n))


# ------------------------------------------------------------- SETBIT ---

def test_setbit_returns_old_bit_and_builds_bytes(rb):
    assert rb.setbit("k", 1, 1) == 0
    assert rb.get("k") == b"\x40"
    assert rb.setbit("k", 7, 1) == 0
    assert rb.get("k") == b"A"
    assert rb.setbit("k", 7, 1) == 1
    assert rb.setbit("k", 7, 0) == 1
    assert rb.get("k") == b"@"
    assert rb.setbit("k", 7, 0) == 0


def test_setbit_grows_zero_padded(rb):
    rb.set("k", b"\xff")
    assert rb.setbit("k", 100, 1) == 0
    assert rb.strlen("k") == 13
    assert rb.get("k") == b"\xff" + b"\x00" * 11 + b"\x08"
    # Clearing a bit past the end still grows the string.
    assert rb.setbit("k", 200, 0) == 0
    assert rb.strlen("k") == 26


def test_setbit_creates_key_even_for_zero(rb):
    assert rb.setbit("k", 17, 0) == 0
    assert rb.get("k") == b"\x00\x00\x00"


def test_setbit_grows_one_byte_at_a_time(rb):
    for i in range(0, 4096, 3):
        assert rb.setbit("k", i, 1) == 0
    data = rb.get("k")
    assert len(data) == 4095 // 8 + 1
    assert [i for i, b in enumerate(bits_of(data)) if b == "1"] == list(range(0, 4096, 3))


def test_setbit_on_int_encoded_string(resp):
    resp.call("SET", "k", "1")          # 0x31 = 00110001
    assert resp.call("OBJECT", "ENCODING", "k") == b"int"
    assert resp.call("SETBIT", "k", 6, 1) == 0
    assert resp.call("GET", "k") == b"3"
    assert resp.call("OBJECT", "ENCODING", "k") == b"raw"
    resp.call("SET", "n", "12345")
    assert resp.call("SETBIT", "n", 39, 0) == 1
    assert resp.call("GET", "n") == b"12344"


def test_setbit_keeps_ttl(resp):
    resp.call("SET", "k", "abc", "EX", 100)
    for off in (0, 1000, 100000):
        resp.call("SETBIT", "k", off, 1)
        assert 0 < resp.call("TTL", "k") <= 100
    assert resp.call("GETBIT", "k", 100000) == 1
    assert resp.call("STRLEN", "k") == 12501


def test_setbit_value_errors(resp):
    for v in ("2", "-1", "a", "", "1.0", "01"):
        assert resp.call("SETBIT", "k", 0, v) == BIT_VALUE
    assert resp.call("EXISTS", "k") == 0


def test_setbit_offset_errors(resp):
    for off in ("-1", "a", "", "#1", "1.5", str(LLONG_MAX), "99999999999999999999"):
        assert resp.call("SETBIT", "k", off, 1) == BIT_OFFSET
    # 512 MB default limit: bit 2^32 is the first one past it.
    assert resp.call("SETBIT", "k", 4294967296, 1) == BIT_OFFSET
    # The offset is checked before the value.
    assert resp.call("SETBIT", "k", "-1", "5") == BIT_OFFSET
    assert resp.call("EXISTS", "k") == 0


def test_setbit_offset_at_the_limit(resp, small_bulk_len):
    last = small_bulk_len * 8 - 1
    assert resp.call("SETBIT", "k", last, 1) == 0
    assert resp.call("STRLEN", "k") == small_bulk_len
    assert resp.call("GETBIT", "k", last) == 1
    assert resp.call("SETBIT", "k", last + 1, 1) == BIT_OFFSET
    assert resp.call("GETBIT", "k", last + 1) == BIT_OFFSET
    assert resp.call("BITCOUNT", "k") == 1
    assert resp.call("BITPOS", "k", 1) == last


def test_setbit_wrongtype(resp):
    make_nonstring(resp, "l")
    assert resp.call("SETBIT", "l", 0, 1) == WRONGTYPE
    assert resp.call("GETBIT", "l", 0) == WRONGTYPE


def test_setbit_getbit_arity(resp):
    assert resp.call("SETBIT", "k", 0) == arity("setbit")
    assert resp.call("SETBIT", "k", 0, 1, 1) == arity("setbit")
    assert resp.call("GETBIT", "k") == arity("getbit")
    assert resp.call("GETBIT", "k", 0, 1) == arity("getbit")


# ------------------------------------------------------------- GETBIT ---

def test_getbit_basics(rb):
    assert rb.getbit("missing", 0) == 0
    assert rb.getbit("missing", 4294967295) == 0
    rb.set("k", b"\x80\x01")
    assert rb.getbit("k", 0) == 1
    assert rb.getbit("k", 1) == 0
    assert rb.getbit("k", 15) == 1
    assert rb.getbit("k", 16) == 0
    assert rb.getbit("k", 1000000) == 0
    rb.set("e", b"")
    assert rb.getbit("e", 0) == 0


def test_getbit_offset_errors(resp):
    resp.call("SET", "k", "x")
    for off in ("-1", "x", "#0", str(4294967296)):
        assert resp.call("GETBIT", "k", off) == BIT_OFFSET
    # Checked before the key lookup.
    assert resp.call("GETBIT", "missing", "-1") == BIT_OFFSET


def test_getbit_matches_bytes(rb):
    rng = random.Random(1)
    data = rand_bytes(rng, 64)
    rb.set("k", data)
    bits = bits_of(data)
    for i in range(len(bits) + 16):
        assert rb.getbit("k", i) == (int(bits[i]) if i < len(bits) else 0)


# ----------------------------------------------------------- BITCOUNT ---

def test_bitcount_basics(rb):
    assert rb.bitcount("missing") == 0
    rb.set("k", "foobar")
    assert rb.bitcount("k") == 26
    assert rb.bitcount("k", 0, 0) == 4
    assert rb.bitcount("k", 1, 1) == 6
    assert rb.bitcount("k", 1, -2) == ref_bitcount(b"foobar", 1, -2)
    assert rb.bitcount("k", 0, 1000) == 26
    assert rb.bitcount("k", -100, 100) == 26
    rb.set("e", b"")
    assert rb.bitcount("e") == 0
    assert rb.bitcount("e", 0, -1) == 0


def test_bitcount_bit_and_byte_units(resp):
    resp.call("SET", "k", "foobar")
    assert resp.call("BITCOUNT", "k", 1, 1, "BYTE") == 6
    assert resp.call("BITCOUNT", "k", 5, 30, "BIT") == ref_bitcount(b"foobar", 5, 30, "bit") == 17
    assert resp.call("BITCOUNT", "k", 5, 30, "bit") == 17
    assert resp.call("BITCOUNT", "k", 0, -1, "bit") == 26
    assert resp.call("BITCOUNT", "k", 3, 3, "bit") == 0
    assert resp.call("BITCOUNT", "k", 1, 1, "bit") == 1
    assert resp.call("BITCOUNT", "k", 10, -34, "bit") == ref_bitcount(b"foobar", 10, -34, "bit")
    assert resp.call("BITCOUNT", "k", 3, -19, "bit") == ref_bitcount(b"foobar", 3, -19, "bit")
    assert resp.call("BITCOUNT", "k", -2, 1, "bit") == 0
    assert resp.call("BITCOUNT", "k", 0, 1000, "bit") == 26


def test_bitcount_negative_and_out_of_range(resp):
    resp.call("SET", "k", "xxxx")
    assert resp.call("BITCOUNT", "k", 4, 10) == 0
    assert resp.call("BITCOUNT", "k", 32, 87, "bit") == 0
    assert resp.call("BITCOUNT", "k", -6, -7) == 0
    assert resp.call("BITCOUNT", "k", -6, -15, "bit") == 0
    assert resp.call("BITCOUNT", "k", -1, -1) == ref_bitcount(b"xxxx", -1, -1)
    assert resp.call("BITCOUNT", "k", -100, -1) == ref_bitcount(b"xxxx")
    assert resp.call("BITCOUNT", "k", 0, 4294967296) == ref_bitcount(b"xxxx")
    assert resp.call("BITCOUNT", "k", LLONG_MIN, LLONG_MAX) == ref_bitcount(b"xxxx")


def test_bitcount_errors(resp):
    resp.call("SET", "k", "foobar")
    assert resp.call("BITCOUNT", "k", 0) == SYNTAX
    assert resp.call("BITCOUNT", "k", 0, 1, "hello") == SYNTAX
    assert resp.call("BITCOUNT", "k", 0, 1, "bit", "x") == SYNTAX
    assert resp.call("BITCOUNT", "k", "a", 1) == NOT_INT
    assert resp.call("BITCOUNT", "k", 0, "1.5") == NOT_INT
    assert resp.call("BITCOUNT") == arity("bitcount")


def test_bitcount_missing_key_argument_checks(resp):
    """7.2 checks arguments before the key; 7.0 answered 0 for a missing key."""
    if version_at_least(resp, 7, 2):
        assert resp.call("BITCOUNT", "missing", 0) == SYNTAX
        assert resp.call("BITCOUNT", "missing", "a", 1) == NOT_INT
        assert resp.call("BITCOUNT", "missing", 0, 1, "foo") == SYNTAX
    else:
        assert resp.call("BITCOUNT", "missing", 0) == 0
        assert resp.call("BITCOUNT", "missing", "a", 1) == 0
    assert resp.call("BITCOUNT", "missing", 0, 1000, "bit") == 0


def test_bitcount_wrongtype(resp):
    make_nonstring(resp, "l")
    assert resp.call("BITCOUNT", "l") == WRONGTYPE
    assert resp.call("BITCOUNT", "l", 0, 1) == WRONGTYPE


def test_bitcount_misaligned(rb):
    rb.set("k", "ab")
    assert rb.bitcount("k", 1, -1) == 3
    rb.set("k", "__PPxxxxxxxxxxxxxxxxRR__")
    assert rb.bitcount("k", 2, -3) == 74


def test_bitcount_fuzz(resp):
    rng = random.Random(7)
    for _ in range(150):
        data = rand_bytes(rng, rng.choice([0, 1, 7, 8, 9, 31, 33, 100, 1000]))
        resp.call("SET", "k", data)
        assert resp.call("BITCOUNT", "k") == ref_bitcount(data)
        for unit in ("byte", "bit"):
            total = len(data) * (8 if unit == "bit" else 1) + 3
            s = rng.randrange(-total, total)
            e = rng.randrange(-total, total)
            assert resp.call("BITCOUNT", "k", s, e, unit) == ref_bitcount(data, s, e, unit), (data, s, e, unit)


def test_bitcount_large(rb):
    data = bytes(range(256)) * 4096 + b"\x7f"
    rb.set("k", data)
    assert rb.bitcount("k") == bits_of(data).count("1")
    assert rb.bitcount("k", 3, -5) == bits_of(data[3:-4]).count("1")


# ------------------------------------------------------------- BITPOS ---

def test_bitpos_missing_key(resp):
    assert resp.call("BITPOS", "missing", 0) == 0
    assert resp.call("BITPOS", "missing", 1) == -1
    assert resp.call("BITPOS", "missing", 0, 0, -1, "bit") == 0
    assert resp.call("BITPOS", "missing", 1, 0, -1) == -1
    assert resp.call("BITPOS", "missing", 1, 5) == -1


def test_bitpos_basics(rb):
    rb.set("k", b"\xff\xf0\x00")
    assert rb.bitpos("k", 0) == 12
    assert rb.bitpos("k", 1) == 0
    rb.set("k", b"\x00\x0f\x00")
    assert rb.bitpos("k", 1) == 12
    assert rb.bitpos("k", 0) == 0
    rb.set("k", b"\x00\xff\xf0")
    assert rb.bitpos("k", 1, 0) == 8
    assert rb.bitpos("k", 1, 2) == 16
    assert rb.bitpos("k", 1, 3) == -1
    assert rb.bitpos("k", 0, 0) == 0
    assert rb.bitpos("k", 0, 1) == 20


def test_bitpos_zero_bit_length_rule(resp):
    """Searching for 0 in an all-ones string: without an end the answer is
    the first bit past the string; with an explicit end it is -1."""
    resp.call("SET", "k", b"\xff\xff\xff")
    assert resp.call("BITPOS", "k", 0) == 24
    assert resp.call("BITPOS", "k", 0, 0) == 24
    assert resp.call("BITPOS", "k", 0, 2) == 24
    assert resp.call("BITPOS", "k", 0, -1) == 24
    assert resp.call("BITPOS", "k", 0, 0, -1) == -1
    assert resp.call("BITPOS", "k", 0, 0, 2) == -1
    assert resp.call("BITPOS", "k", 0, 0, 100) == -1
    assert resp.call("BITPOS", "k", 0, 0, -1, "bit") == -1
    assert resp.call("BITPOS", "k", 0, 3, 20, "bit") == -1
    # A start past the end is an empty range: -1 even for 0 bits.
    assert resp.call("BITPOS", "k", 0, 3) == -1
    assert resp.call("BITPOS", "k", 0, 100) == -1
    assert resp.call("BITPOS", "k", 1, 3) == -1


def test_bitpos_one_bit_not_found(resp):
    resp.call("SET", "k", b"")
    for j in range(20):
        assert resp.call("BITPOS", "k", 1) == -1
        assert resp.call("BITPOS", "k", 1, 0, -1, "bit") == -1
        resp.call("APPEND", "k", b"\x00")
    assert resp.call("BITPOS", "k", 0) == 0


def test_bitpos_empty_string(resp):
    resp.call("SET", "k", "")
    assert resp.call("BITPOS", "k", 0) == -1
    assert resp.call("BITPOS", "k", 1) == -1
    assert resp.call("BITPOS", "k", 0, 0) == -1


def test_bitpos_intervals(resp):
    resp.call("SET", "k", b"\x00\xff\x00")
    assert resp.call("BITPOS", "k", 0, 0, -1) == 0
    assert resp.call("BITPOS", "k", 0, 1, -1) == 16
    assert resp.call("BITPOS", "k", 0, 2, -1) == 16
    assert resp.call("BITPOS", "k", 0, 2, 200) == 16
    assert resp.call("BITPOS", "k", 0, 1, 1) == -1
    assert resp.call("BITPOS", "k", 0, 8, -1, "bit") == 16
    assert resp.call("BITPOS", "k", 0, 16, 200, "bit") == 16
    assert resp.call("BITPOS", "k", 0, 8, 8, "bit") == -1
    assert resp.call("BITPOS", "k", 1, 0, -1) == 8
    assert resp.call("BITPOS", "k", 1, 2, -1) == -1
    assert resp.call("BITPOS", "k", 1, 1, 1) == 8
    assert resp.call("BITPOS", "k", 1, 16, -1, "bit") == -1
    assert resp.call("BITPOS", "k", 1, 8, 8, "bit") == 8
    assert resp.call("BITPOS", "k", 1, 9, 15, "BIT") == 9
    assert resp.call("BITPOS", "k", 1, 0, 0, "BYTE") == -1
    # Negative ranges.
    assert resp.call("BITPOS", "k", 1, -2) == 8
    assert resp.call("BITPOS", "k", 1, -1) == -1
    assert resp.call("BITPOS", "k", 0, -1) == 16
    assert resp.call("BITPOS", "k", 1, -12, -9, "bit") == 12
    assert resp.call("BITPOS", "k", 1, -2, -3) == -1


def test_bitpos_unaligned_words(rb):
    rb.set("k", b"\xff" * 27 + b"\x0f")
    rb.set("z", b"\x00" * 27 + b"\xf0")
    for s in range(9):
        assert rb.bitpos("k", 0, s) == 216
        assert rb.bitpos("z", 1, s) == 216
    for s in (1, 9, 17, 25, 33, 41, 49, 57, 65):
        assert rb.execute_command("BITPOS", "k", 0, s, -1, "BIT") == 216
        assert rb.execute_command("BITPOS", "z", 1, s, -1, "BIT") == 216


def test_bitpos_errors(resp):
    resp.call("SET", "k", "foo")
    assert resp.call("BITPOS", "k", 2) == BIT_ARG
    assert resp.call("BITPOS", "k", -1) == BIT_ARG
    assert resp.call("BITPOS", "k", "a") == NOT_INT
    assert resp.call("BITPOS", "missing", 2) == BIT_ARG
    assert resp.call("BITPOS", "k", 1, "a") == NOT_INT
    assert resp.call("BITPOS", "k", 1, 0, "a") == NOT_INT
    assert resp.call("BITPOS", "k", 1, 0, 1, "foo") == SYNTAX
    assert resp.call("BITPOS", "k", 1, 0, 1, "bit", "x") == SYNTAX
    assert resp.call("BITPOS", "k") == arity("bitpos")


def test_bitpos_missing_key_argument_checks(resp):
    if version_at_least(resp, 7, 2):
        assert resp.call("BITPOS", "missing", 1, 0, 1, "foo") == SYNTAX
        assert resp.call("BITPOS", "missing", 0, "a") == NOT_INT
    else:
        assert resp.call("BITPOS", "missing", 1, 0, 1, "foo") == -1
        assert resp.call("BITPOS", "missing", 0, "a") == 0


def test_bitpos_wrongtype(resp):
    make_nonstring(resp, "l")
    assert resp.call("BITPOS", "l", 1) == WRONGTYPE
    assert resp.call("BITPOS", "l", 0, 0, 1, "bit") == WRONGTYPE


def test_bitpos_fuzz(resp):
    rng = random.Random(11)
    for _ in range(200):
        n = rng.choice([1, 2, 7, 8, 9, 16, 17, 40, 100])
        fill = rng.choice([0, 0xff])
        data = bytearray([fill] * n)
        for _ in range(rng.randrange(3)):
            data[rng.randrange(n)] = rng.randrange(256)
        data = bytes(data)
        resp.call("SET", "k", data)
        for bit in (0, 1):
            assert resp.call("BITPOS", "k", bit) == ref_bitpos(data, bit)
            s = rng.randrange(-n - 2, n + 2)
            assert resp.call("BITPOS", "k", bit, s) == ref_bitpos(data, bit, s), (data, bit, s)
            for unit in ("byte", "bit"):
                total = n * (8 if unit == "bit" else 1) + 2
                s = rng.randrange(-total, total)
                e = rng.randrange(-total, total)
                got = resp.call("BITPOS", "k", bit, s, e, unit)
                assert got == ref_bitpos(data, bit, s, e, unit), (data, bit, s, e, unit)


def test_bitpos_with_setbit(resp):
    rng = random.Random(3)
    first = -1
    for _ in range(200):
        assert resp.call("BITPOS", "k", 1) == first
        pos = rng.randrange(100000)
        resp.call("SETBIT", "k", pos, 1)
        first = pos if first < 0 else min(first, pos)
    assert resp.call("BITPOS", "k", 1, 0, -1, "bit") == first


# -------------------------------------------------------------- BITOP ---

def test_bitop_basic_ops(rb):
    rb.set("a", b"\x01\x02\xff\xff")
    rb.set("b", b"\x01\x02\xff")
    assert rb.bitop("AND", "d1", "a", "b") == 4
    assert rb.get("d1") == b"\x01\x02\xff\x00"
    assert rb.bitop("OR", "d2", "a", "b") == 4
    assert rb.get("d2") == b"\x01\x02\xff\xff"
    assert rb.bitop("XOR", "d3", "a", "b") == 4
    assert rb.get("d3") == b"\x00\x00\x00\xff"
    assert rb.bitop("NOT", "d4", "b") == 3
    assert rb.get("d4") == b"\xfe\xfd\x00"


def test_bitop_single_source_unchanged(rb):
    rb.set("a", b"\x01\x02\xff")
    for op in ("and", "or", "xor"):
        assert rb.bitop(op, "r", "a") == 3
        assert rb.get("r") == b"\x01\x02\xff"


def test_bitop_missing_keys_are_zeros(rb):
    rb.set("a", b"\x01\x02\xff")
    assert rb.bitop("and", "r1", "nokey", "a") == 3
    assert rb.get("r1") == b"\x00\x00\x00"
    assert rb.bitop("or", "r2", "nokey", "a", "nokey2") == 3
    assert rb.get("r2") == b"\x01\x02\xff"
    assert rb.bitop("xor", "r3", "nokey", "a") == 3
    assert rb.get("r3") == b"\x01\x02\xff"


def test_bitop_empty_result_deletes_destination(rb):
    rb.set("dest", "old")
    assert rb.bitop("and", "dest", "nokey1", "nokey2") == 0
    assert rb.exists("dest") == 0
    rb.set("dest", "old")
    assert rb.bitop("not", "dest", "nokey") == 0
    assert rb.exists("dest") == 0
    rb.set("e", b"")
    rb.set("dest", "old")
    assert rb.bitop("or", "dest", "e", "e") == 0
    assert rb.exists("dest") == 0
    assert rb.bitop("not", "dest", "e") == 0
    assert rb.exists("dest") == 0


def test_bitop_empty_after_non_empty(rb):
    rb.set("a", b"\x00" * 32)
    assert rb.bitop("or", "x", "a", "b") == 32
    assert rb.get("x") == b"\x00" * 32


def test_bitop_not_known_string(rb):
    rb.set("s", b"\xaa\x00\xff\x55")
    assert rb.bitop("not", "d", "s") == 4
    assert rb.get("d") == b"\x55\xff\x00\xaa"


def test_bitop_dest_is_source(rb):
    rb.set("s", b"\xaa\x00\xff\x55")
    assert rb.bitop("not", "s", "s") == 4
    assert rb.get("s") == b"\x55\xff\x00\xaa"
    rb.set("t", b"\x0f")
    assert rb.bitop("xor", "t", "t", "s") == 4
    assert rb.get("t") == b"\x5a\xff\x00\xaa"


def test_bitop_integer_sources(rb):
    rb.set("a", 1)
    rb.set("b", 2)
    assert rb.bitop("xor", "d", "a", "b", "a") == 1
    assert rb.get("d") == b"2"


def test_bitop_replaces_ttl_and_encoding(resp):
    resp.call("SET", "dest", "12", "EX", 100)
    resp.call("SET", "a", "xyz")
    assert resp.call("BITOP", "OR", "dest", "a") == 3
    assert resp.call("TTL", "dest") == -1
    assert resp.call("GET", "dest") == b"xyz"
    assert resp.call("OBJECT", "ENCODING", "dest") == b"raw"


def test_bitop_overwrites_other_types(resp):
    make_nonstring(resp, "dest")
    resp.call("SET", "a", "x")
    assert resp.call("BITOP", "AND", "dest", "a") == 1
    assert resp.call("GET", "dest") == b"x"


def test_bitop_errors(resp):
    resp.call("SET", "a", "x")
    assert resp.call("BITOP", "NOT", "d", "a", "b") == BITOP_NOT
    assert resp.call("BITOP", "nand", "d", "a") == SYNTAX
    assert resp.call("BITOP", "", "d", "a") == SYNTAX
    assert resp.call("BITOP", "NOT", "d") == arity("bitop")
    assert resp.call("BITOP", "AND", "d") == arity("bitop")
    assert resp.call("EXISTS", "d") == 0


def test_bitop_wrongtype_source(resp):
    make_nonstring(resp, "l")
    resp.call("SET", "a", "1")
    resp.call("SET", "d", "keep")
    assert resp.call("BITOP", "XOR", "d", "a", "l", "missing") == WRONGTYPE
    assert resp.call("BITOP", "NOT", "d", "l") == WRONGTYPE
    assert resp.call("GET", "d") == b"keep"


def test_bitop_many_keys_and_lengths(rb):
    rng = random.Random(5)
    for op in ("and", "or", "xor"):
        for _ in range(10):
            n = rng.randrange(1, 40)
            vals = [rand_bytes(rng, rng.randrange(0, 70)) for _ in range(n)]
            keys = ["v%d" % i for i in range(n)]
            for k, v in zip(keys, vals):
                rb.set(k, v)
            expect = ref_bitop(op, vals)
            assert rb.bitop(op, "target", *keys) == len(expect)
            if expect:
                assert rb.get("target") == expect
            else:
                assert rb.exists("target") == 0
            rb.delete(*keys)


def test_bitop_not_fuzz(rb):
    rng = random.Random(6)
    for n in (1, 7, 8, 9, 15, 16, 17, 100, 1001):
        v = rand_bytes(rng, n)
        rb.set("s", v)
        assert rb.bitop("not", "t", "s") == n
        assert rb.get("t") == ref_bitop("not", [v])


# ----------------------------------------------------------- BITFIELD ---

def test_bitfield_signed_and_unsigned_set_get(resp):
    assert resp.call("BITFIELD", "b", "SET", "i8", 0, -100) == [0]
    assert resp.call("BITFIELD", "b", "SET", "i8", 0, 101) == [-100]
    assert resp.call("BITFIELD", "b", "GET", "i8", 0) == [101]
    resp.call("DEL", "b")
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, 255) == [0]
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, 100) == [255]
    assert resp.call("BITFIELD", "b", "GET", "u8", 0) == [100]
    resp.call("DEL", "b")
    assert resp.call("BITFIELD", "b", "set", "i8", 0, 255, "set", "i8", 0, 100, "get", "i8", 0) == [0, -1, 100]
    resp.call("DEL", "b")
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, 255, "INCRBY", "u8", 0, 100, "GET", "u8", 0) == [0, 99, 99]


def test_bitfield_hash_offsets(resp):
    resp.call("BITFIELD", "b", "SET", "u8", "#0", 65)
    resp.call("BITFIELD", "b", "SET", "u8", "#1", 66)
    resp.call("BITFIELD", "b", "SET", "u8", "#2", 67)
    assert resp.call("GET", "b") == b"ABC"
    assert resp.call("BITFIELD", "b", "GET", "u4", "#1", "GET", "u16", "#1") == [1, 0x4300]
    assert resp.call("BITFIELD", "b", "GET", "i3", "#2") == [2]  # bits 6..8: 010


def test_bitfield_unaligned_fields(resp):
    resp.call("SET", "b", b"\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11")
    assert resp.call("BITFIELD", "b", "GET", "u12", 4, "GET", "i12", 4, "GET", "u1", 3) == [0x234, 0x234, 1]
    assert resp.call("BITFIELD", "b", "GET", "u63", 1) == [0x123456789abcdef0]
    assert resp.call("BITFIELD", "b", "GET", "i64", 4) == [0x23456789abcdef01]
    assert resp.call("BITFIELD", "b", "GET", "i64", 8) == [0x3456789abcdef011]
    assert resp.call("BITFIELD", "b", "GET", "i64", 32) == [0x9abcdef011000000 - (1 << 64)]
    assert resp.call("BITFIELD", "b", "SET", "u5", 3, 31) == [0x12 & 0x1f]
    assert resp.call("GET", "b")[:1] == b"\x1f"


def test_bitfield_get_past_end(resp):
    resp.call("SET", "b", b"\xff")
    assert resp.call("BITFIELD", "b", "GET", "u8", 4, "GET", "u8", 8, "GET", "i8", 4) == [0xf0, 0, -16]
    assert resp.call("BITFIELD", "b", "GET", "u8", 1000000) == [0]
    assert resp.call("BITFIELD", "missing", "GET", "i64", 0) == [0]
    assert resp.call("EXISTS", "missing") == 0
    assert resp.call("STRLEN", "b") == 1


def test_bitfield_no_operations(resp):
    assert resp.call("BITFIELD", "b") == []
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL") == []
    assert resp.call("EXISTS", "b") == 0


def test_bitfield_incrby(resp):
    resp.call("BITFIELD", "b", "SET", "u8", "#0", 10)
    assert resp.call("BITFIELD", "b", "INCRBY", "u8", "#0", 100) == [110]
    assert resp.call("BITFIELD", "b", "INCRBY", "u8", "#0", 100, "INCRBY", "u8", "#0", 1) == [210, 211]
    assert resp.call("BITFIELD", "b", "INCRBY", "i5", 100, -3) == [-3]
    assert resp.call("STRLEN", "b") == 14


def test_bitfield_overflow_unsigned(resp):
    resp.call("BITFIELD", "b", "SET", "u8", "#0", 100)
    assert resp.call("BITFIELD", "b", "OVERFLOW", "WRAP", "INCRBY", "u8", "#0", 257) == [101]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "wrap", "INCRBY", "u8", "#0", 255) == [100]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "u8", "#0", 257) == [255]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "sat", "INCRBY", "u8", "#0", -256) == [0]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "#0", -1) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "#0", 255) == [255]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "#0", 1) == [None]
    assert resp.call("BITFIELD", "b", "GET", "u8", "#0") == [255]
    # SET out of range: negative values count as huge, so SAT gives max.
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "SET", "u8", 0, -1, "GET", "u8", 0) == [255, 255]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "SET", "u8", 0, 256, "GET", "u8", 0) == [255, 255]
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, 258, "GET", "u8", 0) == [255, 2]
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, -2, "GET", "u8", 0) == [2, 254]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "u8", 0, 256, "GET", "u8", 0) == [None, 254]


def test_bitfield_overflow_signed(resp):
    resp.call("BITFIELD", "b", "SET", "i8", "#0", 100)
    assert resp.call("BITFIELD", "b", "OVERFLOW", "WRAP", "INCRBY", "i8", "#0", 257) == [101]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "WRAP", "INCRBY", "i8", "#0", 255) == [100]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i8", "#0", 257) == [127]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i8", "#0", -255) == [-128]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "i8", "#0", -1) == [None]
    assert resp.call("BITFIELD", "b", "INCRBY", "i8", "#0", -1) == [127]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "SET", "i8", 0, 200, "GET", "i8", 0) == [127, 127]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "SET", "i8", 0, -200, "GET", "i8", 0) == [127, -128]
    assert resp.call("BITFIELD", "b", "SET", "i8", 0, 200, "GET", "i8", 0) == [-128, -56]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "i8", 0, 128) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "i8", 0, -128) == [-56]


def test_bitfield_overflow_mode_applies_to_following_ops(resp):
    resp.call("BITFIELD", "b", "SET", "u2", 0, 3)
    reply = resp.call("BITFIELD", "b", "INCRBY", "u2", 0, 1, "OVERFLOW", "SAT", "INCRBY", "u2", 0, 5,
                      "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 1, "OVERFLOW", "WRAP", "INCRBY", "u2", 0, 1)
    assert reply == [0, 3, None, 0]


def test_bitfield_i1_u1(resp):
    assert resp.call("BITFIELD", "b", "SET", "i1", 0, -1, "GET", "u1", 0, "GET", "i1", 0) == [0, 1, -1]
    assert resp.call("BITFIELD", "b", "INCRBY", "i1", 0, 1) == [0]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i1", 0, 5, "INCRBY", "i1", 0, -5) == [0, -1]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "u1", 1, 2, "SET", "u1", 1, 1) == [None, 0]
    assert resp.call("GET", "b") == b"\xc0"


def test_bitfield_i64_edges(resp):
    assert resp.call("BITFIELD", "b", "SET", "i64", 0, LLONG_MAX) == [0]
    assert resp.call("BITFIELD", "b", "GET", "i64", 0, "GET", "u63", 0) == [LLONG_MAX, LLONG_MAX >> 1]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "i64", 0, 1) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i64", 0, 1) == [LLONG_MAX]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i64", 0, LLONG_MAX) == [LLONG_MAX]
    assert resp.call("BITFIELD", "b", "INCRBY", "i64", 0, 1) == [LLONG_MIN]
    assert resp.call("BITFIELD", "b", "GET", "i64", 0, "GET", "u8", 0) == [LLONG_MIN, 128]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "i64", 0, -1) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i64", 0, LLONG_MIN) == [LLONG_MIN]
    assert resp.call("BITFIELD", "b", "INCRBY", "i64", 0, -1) == [LLONG_MAX]
    assert resp.call("BITFIELD", "b", "INCRBY", "i64", 0, LLONG_MIN) == [-1]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "i64", 0, LLONG_MIN) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "i64", 0, LLONG_MIN, "SET", "i64", 0, LLONG_MAX) == [-1, LLONG_MIN]
    # An i64 across a byte boundary, partly past the end of the string.
    assert resp.call("BITFIELD", "b", "SET", "i64", 3, -1, "GET", "i64", 3, "GET", "u8", 0) == [-8, -1, 0x7f]
    assert resp.call("STRLEN", "b") == 9


def test_bitfield_u63_edges(resp):
    umax = (1 << 63) - 1
    assert resp.call("BITFIELD", "b", "SET", "u63", 0, LLONG_MAX) == [0]
    assert resp.call("BITFIELD", "b", "GET", "u63", 0, "GET", "i64", 0) == [umax, -2]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u63", 0, 1) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "u63", 0, 1) == [umax]
    assert resp.call("BITFIELD", "b", "INCRBY", "u63", 0, 1) == [0]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "u63", 0, -1) == [0]
    assert resp.call("BITFIELD", "b", "INCRBY", "u63", 0, -1) == [umax]
    assert resp.call("BITFIELD", "b", "INCRBY", "u63", 0, LLONG_MIN) == [umax]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u63", 0, LLONG_MIN) == [None]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "u63", 0, LLONG_MIN) == [0]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "SAT", "SET", "u63", 0, -1, "GET", "u63", 0) == [0, umax]
    assert resp.call("BITFIELD", "b", "SET", "u63", 0, LLONG_MIN, "GET", "u63", 0) == [umax, 0]
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "SET", "u63", 0, -5) == [None]


def test_bitfield_type_errors(resp):
    for t in ("u64", "i65", "i0", "u0", "x8", "I8", "U8", "i", "u", "i-1", "", "i08", "u8x", "i 8"):
        assert resp.call("BITFIELD", "b", "GET", t, 0) == BF_TYPE, t
    assert resp.call("BITFIELD", "b", "SET", "u64", 0, 1) == BF_TYPE
    assert resp.call("EXISTS", "b") == 0


def test_bitfield_offset_errors(resp):
    for off in ("-1", "#-1", "#", "a", "#a", "", "1.5", str(4294967296), "#536870912"):
        assert resp.call("BITFIELD", "b", "GET", "u8", off) == BIT_OFFSET, off
    assert resp.call("BITFIELD", "b", "GET", "u8", "#536870911") == [0]
    assert resp.call("BITFIELD", "b", "GET", "u8", 4294967295) == [0]
    assert resp.call("EXISTS", "b") == 0


def test_bitfield_syntax_errors(resp):
    assert resp.call("BITFIELD", "b", "GET", "u8") == SYNTAX
    assert resp.call("BITFIELD", "b", "SET", "u8", 0) == SYNTAX
    assert resp.call("BITFIELD", "b", "INCRBY", "u8", 0) == SYNTAX
    assert resp.call("BITFIELD", "b", "FOO", "u8", 0) == SYNTAX
    assert resp.call("BITFIELD", "b", "OVERFLOW") == SYNTAX
    assert resp.call("BITFIELD", "b", "GET", "u8", 0, "GET") == SYNTAX
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FOO", "GET", "u8", 0) == BF_OVERFLOW
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, "x") == NOT_INT
    assert resp.call("BITFIELD", "b", "INCRBY", "u8", 0, "1.5") == NOT_INT
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, "99999999999999999999") == NOT_INT
    # A bad op after good ones fails the whole command: nothing is written.
    assert resp.call("BITFIELD", "b", "SET", "u8", 0, 1, "SET", "u8", 0) == SYNTAX
    assert resp.call("EXISTS", "b") == 0
    assert resp.call("BITFIELD") == arity("bitfield")


def test_bitfield_fail_still_creates_key(resp):
    assert resp.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", 10, 10) == [None]
    assert resp.call("GET", "b") == b"\x00\x00"


def test_bitfield_wrongtype(resp):
    make_nonstring(resp, "l")
    assert resp.call("BITFIELD", "l", "GET", "u8", 0) == WRONGTYPE
    assert resp.call("BITFIELD", "l", "SET", "u8", 0, 1) == WRONGTYPE
    assert resp.call("BITFIELD", "l") == WRONGTYPE
    assert resp.call("BITFIELD_RO", "l", "GET", "u8", 0) == WRONGTYPE


def test_bitfield_resp3_null(resp3):
    assert resp3.call("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 300, "GET", "u8", 0) == [None, 0]


def test_bitfield_on_int_encoded_string(resp):
    resp.call("SET", "b", "1")
    assert resp.call("BITFIELD", "b", "GET", "u8", 0) == [0x31]
    assert resp.call("BITFIELD", "b", "INCRBY", "u8", 0, 1) == [0x32]
    assert resp.call("GET", "b") == b"2"
    assert resp.call("BITFIELD", "b", "GET", "u1", 0) == [0]


def test_bitfield_regression_3564(resp):
    for _ in range(5):
        resp.call("DEL", "s")
        assert resp.call("BITFIELD", "s", "SET", "i8", 0, 10, "SET", "i8", 64, 10, "INCRBY", "i8", 10, 99900) == [0, 0, 60]


def test_bitfield_write_near_limit(resp, small_bulk_len):
    last = small_bulk_len * 8 - 1
    # The offset is within the limit; the field may end a few bytes past it.
    assert resp.call("BITFIELD", "b", "SET", "u8", last, 255) == [0]
    assert resp.call("STRLEN", "b") == small_bulk_len + 1
    assert resp.call("BITFIELD", "b", "GET", "u8", last, "GET", "u1", last + 1) == BIT_OFFSET
    assert resp.call("BITFIELD", "b", "GET", "u8", last - 7) == [1]
    assert resp.call("BITFIELD", "b", "SET", "i64", last + 1, 1) == BIT_OFFSET


def ref_field_update(sign, bits, value, incr, mode):
    """(overflowed, stored value) for value + incr in a bits-wide field."""
    if sign:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        lo, hi = 0, (1 << bits) - 1
        if value < 0:          # a negative SET value is taken as unsigned
            value += 1 << 64
    total = value + incr
    if lo <= total <= hi:
        return False, total
    if mode == "sat":
        return True, hi if total > hi else lo
    wrapped = total % (1 << bits)
    if sign and wrapped > hi:
        wrapped -= 1 << bits
    return True, wrapped


def test_bitfield_overflow_fuzz(resp):
    rng = random.Random(9)
    for _ in range(600):
        bits = rng.randrange(1, 65)
        sign = 1 if bits == 64 else rng.randrange(2)
        typ = ("i%d" if sign else "u%d") % bits
        lo = -(1 << (bits - 1)) if sign else 0
        span = 1 << bits
        value = max(LLONG_MIN, min(LLONG_MAX, lo * 2 + rng.randrange(span * 2)))
        incr = max(LLONG_MIN, min(LLONG_MAX, lo * 2 + rng.randrange(span * 2)))
        mode = rng.choice(["wrap", "sat", "fail"])
        resp.call("DEL", "b")
        over1, v1 = ref_field_update(sign, bits, value, 0, mode)
        r1 = resp.call("BITFIELD", "b", "OVERFLOW", mode, "SET", typ, 0, value)
        assert r1 == ([None] if over1 and mode == "fail" else [0]), (typ, value, mode)
        stored = 0 if (over1 and mode == "fail") else v1
        over2, v2 = ref_field_update(sign, bits, stored, incr, mode)
        r2 = resp.call("BITFIELD", "b", "OVERFLOW", mode, "INCRBY", typ, 0, incr)
        if over2 and mode == "fail":
            assert r2 == [None], (typ, value, incr, mode)
            final = stored
        else:
            assert r2 == [v2], (typ, value, incr, mode)
            final = v2
        assert resp.call("BITFIELD", "b", "GET", typ, 0) == [final], (typ, value, incr, mode)


def test_bitfield_matches_bytes(rb):
    rng = random.Random(2)
    data = rand_bytes(rng, 32)
    rb.set("b", data)
    bits = bits_of(data)
    for _ in range(300):
        width = rng.randrange(1, 65)
        sign = 1 if width == 64 else rng.randrange(2)
        off = rng.randrange(0, 300)
        field = (bits + "0" * 400)[off:off + width]
        expect = int(field, 2)
        if sign and field[0] == "1":
            expect -= 1 << width
        typ = ("i%d" if sign else "u%d") % width
        assert rb.execute_command("BITFIELD", "b", "GET", typ, off) == [expect], (typ, off)


# -------------------------------------------------------- BITFIELD_RO ---

def test_bitfield_ro(resp):
    resp.call("BITFIELD", "b", "SET", "u8", 0, 255)
    assert resp.call("BITFIELD_RO", "b", "GET", "u8", 0) == [255]
    assert resp.call("bitfield_ro", "b", "get", "i8", 0, "GET", "u4", "#1") == [-1, 15]
    assert resp.call("BITFIELD_RO", "b") == []
    assert resp.call("BITFIELD_RO", "missing", "GET", "u8", 0) == [0]
    assert resp.call("EXISTS", "missing") == 0
    assert resp.call("BITFIELD_RO", "b", "SET", "u8", 0, 100, "GET", "u8", 0) == BF_RO
    assert resp.call("BITFIELD_RO", "b", "INCRBY", "u8", 0, 1) == BF_RO
    assert resp.call("BITFIELD_RO", "b", "OVERFLOW", "SAT", "GET", "u8", 0) == [255]
    # Argument errors are reported before the read-only check.
    assert resp.call("BITFIELD_RO", "b", "SET", "u8", 0, "x") == NOT_INT
    assert resp.call("BITFIELD_RO", "b", "GET", "u64", 0) == BF_TYPE
    assert resp.call("BITFIELD_RO", "b", "GET", "u8") == SYNTAX
    assert resp.call("BITFIELD_RO") == arity("bitfield_ro")
    assert resp.call("GET", "b") == b"\xff"


# ------------------------------------------------------------ COMMAND ---

@pytest.mark.parametrize("name,arity_,flags,first,last,step,acl", [
    ("setbit", 4, {"write", "denyoom"}, 1, 1, 1, {"@write", "@bitmap", "@slow"}),
    ("getbit", 3, {"readonly", "fast"}, 1, 1, 1, {"@read", "@bitmap", "@fast"}),
    ("bitcount", -2, {"readonly"}, 1, 1, 1, {"@read", "@bitmap", "@slow"}),
    ("bitpos", -3, {"readonly"}, 1, 1, 1, {"@read", "@bitmap", "@slow"}),
    ("bitop", -4, {"write", "denyoom"}, 2, -1, 1, {"@write", "@bitmap", "@slow"}),
    ("bitfield", -2, {"write", "denyoom"}, 1, 1, 1, {"@write", "@bitmap", "@slow"}),
    ("bitfield_ro", -2, {"readonly", "fast"}, 1, 1, 1, {"@read", "@bitmap", "@fast"}),
])
def test_command_info(resp, name, arity_, flags, first, last, step, acl):
    info = resp.call("COMMAND", "INFO", name)[0]
    assert info[0] == name.encode()
    assert info[1] == arity_
    assert set(f if isinstance(f, str) else f.decode() for f in info[2]) == flags
    assert info[3:6] == [first, last, step]
    assert set(a if isinstance(a, str) else a.decode() for a in info[6]) == acl


def test_command_getkeys_bitop(resp):
    assert resp.call("COMMAND", "GETKEYS", "BITOP", "AND", "d", "a", "b") == [b"d", b"a", b"b"]
