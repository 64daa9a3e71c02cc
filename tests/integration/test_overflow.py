"""Issue 15: user-controlled numbers at their extremes, and value sizes.

Every row of CASES is a command with LLONG_MIN/LLONG_MAX/ULLONG_MAX (or
other edge) arguments and the exact reply Debian's redis-server 7.0.15
gives (HOTKV_SERVER=redis runs the same table against it).  Under the
ASan+UBSan build any signed overflow aborts the server, which fails the
module's shutdown check (conftest.server) and every later row.

HOTKV_ONLY holds the few edges where Redis 7.0 itself overflows, hangs or
answers with a bug that later Redis versions fixed; HotKV answers as those
later versions do.  The rest: proto-max-bulk-len is capped at what an entry
can hold (4 GiB - 1), and streams restored with extreme delivery/seen
times (patched DUMP payloads) answer XPENDING/XCLAIM/XAUTOCLAIM/XINFO as
Redis does.
"""
import struct

import pytest

from conftest import MODE, Server
from helpers import crc64

IS_REDIS = MODE == "redis"

SUB = {"{MIN}": "-9223372036854775808", "{MAX}": "9223372036854775807", "{UMAX}": "18446744073709551615"}


def expand(line):
    out = []
    for a in line.split(" "):
        for k, v in SUB.items():
            a = a.replace(k, v)
        out.append("" if a == "\\e" else a)
    return out


# Section -> rows, run in order on a flushed database.  "> CMD" is setup
# (its reply is not checked); ("CMD", reply) is checked; ("prefix", b)
# matches a bulk reply's first bytes.
CASES = {
    "zset_ranges": [
        '> ZADD z 1 a 2 b 3 c',
        ('ZRANGE z -inf +inf BYSCORE LIMIT 0 {MIN}', [b'a', b'b', b'c']),
        ('ZRANGE z -inf +inf BYSCORE LIMIT {MIN} {MIN}', []),
        ('ZRANGE z -inf +inf BYSCORE LIMIT {MAX} {MAX}', []),
        ('ZRANGE z -inf +inf BYSCORE LIMIT 1 {MAX}', [b'b', b'c']),
        ('ZRANGE z +inf -inf BYSCORE REV LIMIT 0 {MIN}', [b'c', b'b', b'a']),
        ('ZRANGE z +inf -inf BYSCORE REV LIMIT 1 {MIN}', [b'b', b'a']),
        ('ZRANGE z - + BYLEX LIMIT 0 {MIN}', [b'a', b'b', b'c']),
        ('ZRANGE z + - BYLEX REV LIMIT 0 {MIN}', [b'c', b'b', b'a']),
        ('ZRANGE z - + BYLEX LIMIT {MIN} 1', []),
        ('ZRANGEBYSCORE z -inf +inf LIMIT 0 {MIN}', [b'a', b'b', b'c']),
        ('ZRANGEBYSCORE z -inf +inf WITHSCORES LIMIT 1 {MIN}', [b'b', b'2', b'c', b'3']),
        ('ZRANGEBYSCORE z -inf +inf LIMIT {MIN} {MIN}', []),
        ('ZREVRANGEBYSCORE z +inf -inf LIMIT 0 {MIN}', [b'c', b'b', b'a']),
        ('ZRANGEBYLEX z - + LIMIT 0 {MIN}', [b'a', b'b', b'c']),
        ('ZREVRANGEBYLEX z + - LIMIT 0 {MIN}', [b'c', b'b', b'a']),
        ('ZREVRANGEBYLEX z + - LIMIT {MAX} {MIN}', []),
        ('ZRANGESTORE d z -inf +inf BYSCORE LIMIT 0 {MIN}', 3),
        ('ZRANGESTORE d z - + BYLEX LIMIT 0 {MIN}', 3),
        ('ZRANGESTORE d z -inf +inf BYSCORE LIMIT {MIN} {MIN}', 0),
        ('ZRANGE z {MIN} {MAX}', [b'a', b'b', b'c']),
        ('ZRANGE z {MAX} {MIN}', []),
        ('ZRANGE z 0 {MIN}', []),
        ('ZRANGE z {MIN} -1', [b'a', b'b', b'c']),
        ('ZRANGE z {MIN} {MIN} REV', []),
        ('ZREVRANGE z {MIN} {MAX}', [b'c', b'b', b'a']),
        ('ZRANGESTORE d z {MIN} {MAX}', 3),
        ('ZREMRANGEBYRANK z {MAX} {MIN}', 0),
        ('ZREMRANGEBYRANK z {MIN} {MIN}', 0),
        ('ZRANDMEMBER z {MIN}', ('error', 'ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807')),
        ('ZRANDMEMBER z {MIN} WITHSCORES', ('error', 'ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807')),
        ('ZPOPMIN z {MIN}', ('error', 'ERR value is out of range, must be positive')),
        ('ZMPOP 1 z MIN COUNT {MIN}', ('error', 'ERR count should be greater than 0')),
        ('ZINTERCARD 1 z LIMIT {MIN}', ('error', "ERR LIMIT can't be negative")),
        ('ZINTERCARD 1 z LIMIT {MAX}', 3),
        ('ZINTERCARD {MAX} z', ('error', 'ERR syntax error')),
        ('ZUNIONSTORE u {MAX} z', ('error', 'ERR syntax error')),
        ('ZUNIONSTORE u -1 z', ('error', "ERR at least 1 input key is needed for 'zunionstore' command")),
        ('ZCARD z', 3),
    ],
    "zset_scores": [
        '> ZADD z 1 a 2 b',
        ('ZINCRBY z nan a', ('error', 'ERR value is not a valid float')),
        ('ZINCRBY z inf a', b'inf'),
        ('ZINCRBY z -inf a', ('error', 'ERR resulting score is not a number (NaN)')),
        ('ZADD z INCR -inf a', ('error', 'ERR resulting score is not a number (NaN)')),
        ('ZSCORE z a', b'inf'),
        ('ZADD z 1e308 b', 0),
        ('ZINCRBY z 1e308 b', b'inf'),
        ('ZADD z 0 c', 1),
        ('ZUNIONSTORE u 1 z WEIGHTS 0', 3),
        ('ZSCORE u a', b'0'),
        ('ZINTERSTORE u 2 z z WEIGHTS inf -inf', 3),
        ('ZSCORE u a', b'0'),
        ('ZSCORE u c', b'0'),
        ('ZUNIONSTORE u 2 z z WEIGHTS inf 0 AGGREGATE SUM', 3),
        ('ZSCORE u c', b'0'),
        ('ZPOPMAX z {MAX}', [b'b', b'inf', b'a', b'inf', b'c', b'0']),
    ],
    "lists": [
        '> RPUSH l a b c d a',
        ('LRANGE l {MIN} {MAX}', [b'a', b'b', b'c', b'd', b'a']),
        ('LRANGE l {MAX} {MIN}', []),
        ('LRANGE l {MIN} {MIN}', []),
        ('LRANGE l -1 {MIN}', []),
        ('LRANGE l {MAX} {MAX}', []),
        ('LINDEX l {MIN}', None),
        ('LINDEX l {MAX}', None),
        ('LSET l {MIN} x', ('error', 'ERR index out of range')),
        ('LSET l {MAX} x', ('error', 'ERR index out of range')),
        ('LPOS l a RANK 0', ('error', "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")),
        ('LPOS l a RANK -9223372036854775807', None),
        ('LPOS l a RANK {MAX}', None),
        ('LPOS l a COUNT {MIN}', ('error', "ERR COUNT can't be negative")),
        ('LPOS l a MAXLEN {MIN}', ('error', "ERR MAXLEN can't be negative")),
        ('LPOS l a COUNT {MAX} MAXLEN {MAX} RANK -1', [4, 0]),
        ('LREM l {MIN} a', 2),
        ('LREM l {MAX} z', 0),
        ('LPOP l {MIN}', ('error', 'ERR value is out of range, must be positive')),
        ('RPOP l -1', ('error', 'ERR value is out of range, must be positive')),
        ('LMPOP 1 l LEFT COUNT {MIN}', ('error', 'ERR count should be greater than 0')),
        ('LMPOP {MAX} l LEFT', ('error', 'ERR syntax error')),
        ('LTRIM l {MAX} {MIN}', 'OK'),
        ('LLEN l', 0),
        '> RPUSH l2 a b c',
        ('LTRIM l2 {MIN} {MAX}', 'OK'),
        ('LRANGE l2 0 -1', [b'a', b'b', b'c']),
        ('LTRIM l2 -1 {MAX}', 'OK'),
        ('LRANGE l2 0 -1', [b'c']),
        ('LPOP l2 {MAX}', [b'c']),
    ],
    "strings": [
        '> SET s hello',
        ('GETRANGE s {MIN} {MAX}', b'hello'),
        ('GETRANGE s {MAX} {MIN}', b''),
        ('GETRANGE s {MIN} {MIN}', b'h'),
        ('GETRANGE s -1 {MIN}', b''),
        ('GETRANGE s {MAX} {MAX}', b''),
        ('SUBSTR s {MIN} 2', b'hel'),
        ('SETRANGE s {MAX} x', ('error', 'ERR string exceeds maximum allowed size (proto-max-bulk-len)')),
        ('SETRANGE s {MIN} x', ('error', 'ERR offset is out of range')),
        ('SETRANGE s 4294967295 AB', ('error', 'ERR string exceeds maximum allowed size (proto-max-bulk-len)')),
        ('SETRANGE s 536870911 AB', ('error', 'ERR string exceeds maximum allowed size (proto-max-bulk-len)')),
        ('SETRANGE s 536870911 \\e', 5),
        ('SETRANGE s {MAX} \\e', 5),
        ('STRLEN s', 5),
        '> SET n 9223372036854775806',
        ('INCR n', 9223372036854775807),
        ('INCR n', ('error', 'ERR increment or decrement would overflow')),
        ('INCRBY n 1', ('error', 'ERR increment or decrement would overflow')),
        ('DECRBY n {MIN}', ('error', 'ERR decrement would overflow')),
        ('INCRBY n {MIN}', -1),
        ('DECRBY n -1', 0),
        ('SET n {MIN}', 'OK'),
        ('DECR n', ('error', 'ERR increment or decrement would overflow')),
        ('DECRBY n 1', ('error', 'ERR increment or decrement would overflow')),
        ('INCRBY n {MIN}', ('error', 'ERR increment or decrement would overflow')),
        ('DECRBY n {MAX}', ('error', 'ERR increment or decrement would overflow')),
        ('INCRBY n {MAX}', -1),
        ('GET n', b'-1'),
        ('SET f 1.5', 'OK'),
        ('INCRBYFLOAT f nan', ('error', 'ERR value is not a valid float')),
        ('INCRBYFLOAT f inf', ('error', 'ERR increment would produce NaN or Infinity')),
        ('INCRBYFLOAT f -inf', ('error', 'ERR increment would produce NaN or Infinity')),
        ('INCRBYFLOAT f 1e4933', ('error', 'ERR value is not a valid float')),
        ('SET f 1e308', 'OK'),
        ('INCRBYFLOAT f 1e308', ('prefix', b'199999999999999999993371')),
        ('GET f', ('prefix', b'199999999999999999993371')),
        ('SET f inf', 'OK'),
        ('INCRBYFLOAT f 1', ('error', 'ERR increment would produce NaN or Infinity')),
    ],
    "bits": [
        '> SET s hello',
        ('BITCOUNT s {MIN} {MAX}', 21),
        ('BITCOUNT s {MAX} {MIN}', 0),
        ('BITCOUNT s {MIN} {MIN} BIT', 0),
        ('BITCOUNT s {MAX} {MAX} BIT', 0),
        ('BITCOUNT s -1 {MIN} BIT', 0),
        ('BITCOUNT s 0 {MAX} BIT', 21),
        ('BITCOUNT s {MIN} -1 BIT', 21),
        ('BITPOS s 1 {MIN} {MAX}', 1),
        ('BITPOS s 1 {MIN} {MAX} BIT', 1),
        ('BITPOS s 0 {MAX} {MIN} BIT', -1),
        ('BITPOS s 0 0 {MAX} BIT', 0),
        ('BITPOS s 0 {MIN}', 0),
        ('BITPOS s 1 -1 {MIN} BIT', -1),
        ('BITPOS s 0 {MAX}', -1),
        ('SETBIT s 4294967296 1', ('error', 'ERR bit offset is not an integer or out of range')),
        ('SETBIT s 34359738368 1', ('error', 'ERR bit offset is not an integer or out of range')),
        ('SETBIT s {MAX} 1', ('error', 'ERR bit offset is not an integer or out of range')),
        ('SETBIT s -1 1', ('error', 'ERR bit offset is not an integer or out of range')),
        ('GETBIT s {MAX}', ('error', 'ERR bit offset is not an integer or out of range')),
        ('GETBIT s 34359738368', ('error', 'ERR bit offset is not an integer or out of range')),
        ('BITFIELD s GET i64 0', [7522537965566820352]),
        ('BITFIELD s GET u63 0', [3761268982783410176]),
        ('BITFIELD s GET u64 0', ('error', 'ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.')),
        ('BITFIELD s SET i64 0 {MIN}', [7522537965566820352]),
        ('BITFIELD s INCRBY i64 0 -1', [9223372036854775807]),
        ('BITFIELD s OVERFLOW SAT INCRBY i64 0 -1', [9223372036854775806]),
        ('BITFIELD s OVERFLOW FAIL INCRBY i64 0 -1', [9223372036854775805]),
        ('BITFIELD s OVERFLOW WRAP INCRBY i64 0 {MIN}', [-3]),
        ('BITFIELD s SET i64 0 {MAX}', [-3]),
        ('BITFIELD s INCRBY i64 0 1', [-9223372036854775808]),
        ('BITFIELD s OVERFLOW SAT INCRBY i64 0 {MAX}', [-1]),
        ('BITFIELD s OVERFLOW FAIL INCRBY i64 0 1', [0]),
        ('BITFIELD s OVERFLOW SAT INCRBY i64 0 {MIN}', [-9223372036854775808]),
        ('BITFIELD s SET u63 0 {MAX}', [4611686018427387904]),
        ('BITFIELD s INCRBY u63 0 1', [0]),
        ('BITFIELD s OVERFLOW SAT INCRBY u63 0 {MAX}', [9223372036854775807]),
        ('BITFIELD s OVERFLOW SAT INCRBY u63 0 {MIN}', [0]),
        ('BITFIELD s OVERFLOW FAIL INCRBY u63 0 {MIN}', [None]),
        ('BITFIELD s OVERFLOW WRAP INCRBY u63 0 {MIN}', [0]),
        ('BITFIELD s SET i8 0 -128', [0]),
        ('BITFIELD s INCRBY i8 0 -1', [127]),
        ('BITFIELD s OVERFLOW SAT INCRBY i8 0 {MIN}', [-128]),
        ('BITFIELD s OVERFLOW SAT INCRBY i8 0 {MAX}', [127]),
        ('BITFIELD s OVERFLOW WRAP INCRBY i8 0 {MAX}', [126]),
        ('BITFIELD s OVERFLOW WRAP INCRBY i1 0 {MAX}', [-1]),
        ('BITFIELD s OVERFLOW SAT INCRBY u1 0 {MIN}', [0]),
        ('BITFIELD s SET u8 0 {MAX}', [126]),
        ('BITFIELD s SET i8 0 {MIN}', [-1]),
        ('BITFIELD s GET i8 #{MAX}', ('error', 'ERR bit offset is not an integer or out of range')),
        ('BITFIELD s GET i8 #536870912', ('error', 'ERR bit offset is not an integer or out of range')),
        ('BITFIELD s GET i64 #67108864', ('error', 'ERR bit offset is not an integer or out of range')),
        ('BITFIELD s GET i8 {MAX}', ('error', 'ERR bit offset is not an integer or out of range')),
        ('BITFIELD_RO s GET i64 #{MAX}', ('error', 'ERR bit offset is not an integer or out of range')),
        ('STRLEN s', 8),
    ],
    "expire": [
        '> SET k v',
        ('EXPIRE k {MAX}', ('error', "ERR invalid expire time in 'expire' command")),
        ('EXPIRE k {MIN}', ('error', "ERR invalid expire time in 'expire' command")),
        ('EXPIRE k 9223372036854775', ('error', "ERR invalid expire time in 'expire' command")),
        ('EXPIRE k 9223372036854776', ('error', "ERR invalid expire time in 'expire' command")),
        ('PEXPIRE k {MAX}', ('error', "ERR invalid expire time in 'pexpire' command")),
        ('PEXPIRE k 9223372036854775000', ('error', "ERR invalid expire time in 'pexpire' command")),
        ('EXPIREAT k {MAX}', ('error', "ERR invalid expire time in 'expireat' command")),
        ('EXPIREAT k 9223372036854776', ('error', "ERR invalid expire time in 'expireat' command")),
        ('PEXPIREAT k {MAX}', 1),
        ('SET k v EX {MAX}', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v EX 9223372036854776', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v PX {MAX}', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v EXAT {MAX}', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v EXAT 9223372036854776', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v PXAT {MAX}', 'OK'),
        ('SET k v EX 0', ('error', "ERR invalid expire time in 'set' command")),
        ('SET k v PX {MIN}', ('error', "ERR invalid expire time in 'set' command")),
        ('GETEX k EX {MAX}', ('error', "ERR invalid expire time in 'getex' command")),
        ('GETEX k PX {MAX}', ('error', "ERR invalid expire time in 'getex' command")),
        ('GETEX k EXAT 9223372036854776', ('error', "ERR invalid expire time in 'getex' command")),
        ('GETEX k PXAT {MAX}', b'v'),
        ('SETEX k {MAX} v', ('error', "ERR invalid expire time in 'setex' command")),
        ('SETEX k 9223372036854776 v', ('error', "ERR invalid expire time in 'setex' command")),
        ('PSETEX k {MAX} v', ('error', "ERR invalid expire time in 'psetex' command")),
        ('EXPIRE k {MIN}', ('error', "ERR invalid expire time in 'expire' command")),
        ('EXISTS k', 1),
    ],
    "hashes_sets": [
        '> HSET h f 9223372036854775806 g 1.5',
        '> SADD st a b c',
        ('HINCRBY h f 1', 9223372036854775807),
        ('HINCRBY h f 1', ('error', 'ERR increment or decrement would overflow')),
        ('HINCRBY h f {MIN}', -1),
        ('HSET h f {MIN}', 0),
        ('HINCRBY h f -1', ('error', 'ERR increment or decrement would overflow')),
        ('HINCRBY h f {MAX}', -1),
        ('HGET h f', b'-1'),
        ('HINCRBYFLOAT h g nan', ('error', 'ERR value is not a valid float')),
        ('HINCRBYFLOAT h g inf', ('error', 'ERR value is NaN or Infinity')),
        ('HINCRBYFLOAT h g 1e4933', ('error', 'ERR value is not a valid float')),
        ('HSET h g 1e308', 0),
        ('HINCRBYFLOAT h g 1e308', ('prefix', b'199999999999999999993371')),
        ('HRANDFIELD h {MIN}', ('error', 'ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807')),
        ('HRANDFIELD h {MIN} WITHVALUES', ('error', 'ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807')),
        ('HRANDFIELD h -4611686018427387905 WITHVALUES', ('error', 'ERR value is out of range')),
        ('SRANDMEMBER st {MIN}', ('error', 'ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807')),
        ('SPOP st {MIN}', ('error', 'ERR value is out of range, must be positive')),
        ('SPOP st -1', ('error', 'ERR value is out of range, must be positive')),
        ('SINTERCARD 1 st LIMIT {MIN}', ('error', "ERR LIMIT can't be negative")),
        ('SINTERCARD {MAX} st', ('error', "ERR Number of keys can't be greater than number of args")),
    ],
    "keyspace": [
        '> SET k v',
        '> HSET h f v',
        '> SADD st a',
        '> ZADD z 1 a',
        '> RPUSH sl 3 1 2',
        ('SCAN 0 COUNT {MIN}', ('error', 'ERR syntax error')),
        ('SCAN 18446744073709551616', ('error', 'ERR invalid cursor')),
        ('HSCAN h 0 COUNT {MIN}', ('error', 'ERR syntax error')),
        ('SORT sl LIMIT {MIN} {MIN}', [b'1', b'2', b'3']),
        ('SORT sl LIMIT {MAX} {MAX}', []),
        ('SORT sl LIMIT 1 {MAX}', [b'2', b'3']),
        ('SORT sl LIMIT {MIN} 2', [b'1', b'2']),
        ('SORT sl LIMIT 0 {MIN}', [b'1', b'2', b'3']),
        ('SORT sl LIMIT -1 -1', [b'1', b'2', b'3']),
        ('SORT sl BY nosort LIMIT {MAX} {MAX}', []),
        ('SORT sl BY nosort LIMIT 1 {MAX}', [b'1', b'2']),
        ('SORT sl BY nosort LIMIT {MIN} {MIN}', [b'3', b'1', b'2']),
        ('SORT sl BY nosort DESC LIMIT 1 {MAX}', [b'1', b'3']),
        ('SORT z BY nosort LIMIT 1 {MAX}', []),
        ('SORT z BY nosort DESC LIMIT 0 {MIN}', [b'a']),
        ('SORT_RO sl LIMIT {MAX} 1', []),
        ('SORT sl LIMIT 1 {MAX} STORE dst', 2),
        ('LRANGE dst 0 -1', [b'2', b'3']),
        ('COPY k k2 DB {MAX}', ('error', 'ERR value is out of range, value must between -2147483648 and 2147483647')),
        ('COPY k k2 DB {MIN}', ('error', 'ERR value is out of range, value must between -2147483648 and 2147483647')),
        ('MOVE k {MAX}', ('error', 'ERR value is out of range, value must between -2147483648 and 2147483647')),
        ('MOVE k -1', ('error', 'ERR DB index is out of range')),
        '> SET ss1 ohmytext',
        '> SET ss2 mynewtext',
        ('LCS ss1 ss2 IDX MINMATCHLEN {MAX}', [b'matches', [], b'len', 6]),
        ('LCS ss1 ss2 IDX MINMATCHLEN {MIN} WITHMATCHLEN', [b'matches', [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b'len', 6]),
    ],
    "streams": [
        ('XADD x {UMAX}-{UMAX} f v', b'18446744073709551615-18446744073709551615'),
        ('XADD x * f v', ('error', 'ERR The stream has exhausted the last possible ID, unable to add more items')),
        ('XADD x {UMAX}-* f v', ('error', 'ERR The stream has exhausted the last possible ID, unable to add more items')),
        ('XADD y 18446744073709551616-0 f v', ('error', 'ERR Invalid stream ID specified as stream command argument')),
        ('XADD y -1-0 f v', ('error', 'ERR Invalid stream ID specified as stream command argument')),
        ('XADD y 1-{UMAX} f v', b'1-18446744073709551615'),
        ('XADD y 2-* f v', b'2-0'),
        ('XRANGE y - +', [[b'1-18446744073709551615', [b'f', b'v']], [b'2-0', [b'f', b'v']]]),
        ('XRANGE x ({UMAX}-{UMAX} +', ('error', 'ERR invalid start ID for the interval')),
        ('XRANGE y - (0-0', ('error', 'ERR invalid end ID for the interval')),
        ('XREVRANGE y + (0-0', [[b'2-0', [b'f', b'v']], [b'1-18446744073709551615', [b'f', b'v']]]),
        ('XREVRANGE x ({UMAX}-{UMAX} -', []),
        ('XRANGE y - + COUNT {MIN}', None),
        ('XRANGE y - + COUNT {MAX}', [[b'1-18446744073709551615', [b'f', b'v']], [b'2-0', [b'f', b'v']]]),
        ('XREVRANGE y + - COUNT {MIN}', None),
        ('XADD z MAXLEN {MIN} * f v', ('error', 'ERR The MAXLEN argument must be >= 0.')),
        ('XADD z MAXLEN ~ 0 LIMIT {MIN} * f v', ('error', 'ERR The LIMIT argument must be >= 0.')),
        ('XTRIM y MAXLEN {MIN}', ('error', 'ERR The MAXLEN argument must be >= 0.')),
        ('XTRIM y MAXLEN ~ 1 LIMIT {MIN}', ('error', 'ERR The LIMIT argument must be >= 0.')),
        ('XTRIM y MAXLEN ~ {MAX} LIMIT {MAX}', 0),
        ('XTRIM y MINID 0 LIMIT {MAX}', ('error', 'ERR syntax error, LIMIT cannot be used without the special ~ option')),
        ('XTRIM y MINID {UMAX}-{UMAX}', 2),
        ('XLEN y', 0),
        '> XADD w 1-1 f v',
        '> XGROUP CREATE w g 0',
        '> XREADGROUP GROUP g c STREAMS w >',
        ('XREAD COUNT {MIN} STREAMS w 0', [[b'w', [[b'1-1', [b'f', b'v']]]]]),
        ('XREAD COUNT {MAX} STREAMS w 0', [[b'w', [[b'1-1', [b'f', b'v']]]]]),
        ('XREAD BLOCK {MIN} STREAMS w $', ('error', 'ERR timeout is negative')),
        ('XREAD BLOCK -1 STREAMS w $', ('error', 'ERR timeout is negative')),
        ('XREADGROUP GROUP g c COUNT {MIN} STREAMS w 0', [[b'w', [[b'1-1', [b'f', b'v']]]]]),
        ('XPENDING w g IDLE {MAX} - + 10', []),
        ('XPENDING w g - + {MIN}', []),
        ('XPENDING w g ({UMAX}-{UMAX} + 10', ('error', 'ERR invalid start ID for the interval')),
        ('XPENDING w g - (0-0 10', ('error', 'ERR invalid end ID for the interval')),
        ('XCLAIM w g c2 {MAX} 1-1 IDLE {MAX} JUSTID', []),
        ('XCLAIM w g c2 {MIN} 1-1 IDLE {MIN} JUSTID', [b'1-1']),
        ('XCLAIM w g c2 0 1-1 TIME {MIN} JUSTID', [b'1-1']),
        ('XCLAIM w g c2 0 1-1 TIME {MAX} JUSTID', [b'1-1']),
        ('XCLAIM w g c2 0 1-1 RETRYCOUNT {MAX} JUSTID', [b'1-1']),
        ('XCLAIM w g c2 0 1-1 RETRYCOUNT {MIN} JUSTID', [b'1-1']),
        ('XAUTOCLAIM w g c3 {MAX} 0 COUNT {MIN}', ('error', 'ERR COUNT must be > 0')),
        ('XAUTOCLAIM w g c3 {MAX} 0-0 COUNT 1 JUSTID', [b'0-0', [], []]),
        ('XAUTOCLAIM w g c3 0 ({UMAX}-{UMAX}', ('error', 'ERR invalid start ID for the interval')),
    ],
    "floats": [
        ('ZADD z 1e400 a', ('error', 'ERR value is not a valid float')),
        ('ZADD z -1e400 a', ('error', 'ERR value is not a valid float')),
        ('ZADD z 1e-400 a', ('error', 'ERR value is not a valid float')),
        ('ZADD z 4.9e-324 b', 1),
        ('ZINCRBY z 1e400 b', ('error', 'ERR value is not a valid float')),
        ('ZRANGEBYSCORE z 1e400 +inf', []),
        ('ZCOUNT z -1e400 1e400', 1),
        ('ZADD z 0x10 c', 1),
        ('ZADD z infinity d', 1),
        ('ZADD z -Infinity e', 1),
        ('ZADD z +inf f', 1),
        ('ZADD z NaN i', ('error', 'ERR value is not a valid float')),
        ('ZUNIONSTORE u 1 z WEIGHTS 1e400', ('error', 'ERR weight value is not a float')),
        ('ZRANGE z 0 -1 WITHSCORES', [b'e', b'-inf', b'b', b'4.9406564584124654e-324', b'c', b'16', b'd', b'inf', b'f', b'inf']),
        ('INCRBYFLOAT f 1e400', ('prefix', b'100000000000000000002818')),
        ('INCRBYFLOAT f 1e-5000', ('error', 'ERR value is not a valid float')),
        ('HINCRBYFLOAT h f 1e400', ('prefix', b'100000000000000000002818')),
        '> SET k v',
        ('EXPIRE k 1e3', ('error', 'ERR value is not an integer or out of range')),
    ],
}

# Redis 7.0 differs here by a bug of its own (signed overflow, a timeout
# check that overflows, an unbounded wait); HotKV answers as Redis 7.2+.
HOTKV_ONLY = [
    "> RPUSH l a b a",
    ("LPOS l a RANK {MIN}",
     ("error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")),
    ("LPOS l a RANK -9223372036854775807", None),
    ("BITFIELD s GET i64 #{MIN}", ("error", "ERR bit offset is not an integer or out of range")),
    ("BITFIELD s GET i8 #-1", ("error", "ERR bit offset is not an integer or out of range")),
    ("BLPOP l2 {MAX}", ("error", "ERR timeout is out of range")),
    ("BLPOP l2 9223372036854775.807", ("error", "ERR timeout is out of range")),
    ("BLPOP l2 18446744073709551616", ("error", "ERR timeout is out of range")),
    ("BLPOP l2 -1", ("error", "ERR timeout is negative")),
    ("BZPOPMIN z2 1e300", ("error", "ERR timeout is out of range")),
    ("BZPOPMIN z2 nan", ("error", "ERR timeout is not a float or out of range")),
    ("BZPOPMIN z2 inf", ("error", "ERR timeout is not a float or out of range")),
    ("BLMOVE a b LEFT LEFT 1e20", ("error", "ERR timeout is out of range")),
    ("BZMPOP 1e20 1 z2 MIN", ("error", "ERR timeout is out of range")),
    ("XREAD BLOCK {MAX} STREAMS w $", ("error", "ERR timeout is out of range")),
    ("XREAD COUNT 1 BLOCK 9223372036854775000 STREAMS w $", ("error", "ERR timeout is out of range")),
    ("BLPOP l2 9223372036854775", ("error", "ERR timeout is out of range")),
    # COUNT * attempts would overflow in 7.0.
    "> XADD w 1-1 f v",
    "> XGROUP CREATE w g 0",
    ("XAUTOCLAIM w g c 0 0 COUNT {MAX}", ("error", "ERR COUNT must be > 0")),
    ("XAUTOCLAIM w g c 0 0 COUNT 576460752303423488", ("error", "ERR COUNT must be > 0")),
    ("XAUTOCLAIM w g c 0 0 COUNT 576460752303423487 JUSTID", [b"0-0", [], []]),
    # Commands Redis 7.0 does not have (7.4 / 8.x texts).
    "> VADD v VALUES 2 1 2 a",
    ("VRANDMEMBER v {MIN}",
     ("error", "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")),
    ("VRANDMEMBER v {MAX}", [b"a"]),
    "> HSET h2 f v",
    ("HEXPIRE h2 {MAX} FIELDS 1 f", ("error", "ERR invalid expire time in 'hexpire' command")),
    ("HEXPIRE h2 9223372036854776 FIELDS 1 f", ("error", "ERR invalid expire time in 'hexpire' command")),
    ("HPEXPIRE h2 {MAX} FIELDS 1 f", ("error", "ERR invalid expire time in 'hpexpire' command")),
    ("HEXPIREAT h2 {MAX} FIELDS 1 f", ("error", "ERR invalid expire time in 'hexpireat' command")),
    ("HPEXPIREAT h2 {MAX} FIELDS 1 f", ("error", "ERR invalid expire time in 'hpexpireat' command")),
    ("HEXPIRE h2 {MIN} FIELDS 1 f", ("error", "ERR invalid expire time, must be >= 0")),
    ("HEXPIRE h2 10 FIELDS {MAX} f", ("error", "ERR The `numfields` parameter must match the number of arguments")),
    ("HEXPIRE h2 10 FIELDS {MIN} f", ("error", "ERR Parameter `numFields` should be greater than 0")),
    ("HTTL h2 FIELDS 1 f", [-1]),
]


def run_rows(resp, rows):
    bad = []
    for row in rows:
        if isinstance(row, str):
            resp.call(*expand(row[2:]))
            continue
        cmd, want = row
        got = resp.call(*expand(cmd))
        if isinstance(want, tuple) and want[0] == "prefix":
            ok = isinstance(got, bytes) and got.startswith(want[1])
        else:
            ok = got == want
        if not ok:
            bad.append("%s: got %r, want %r" % (cmd, got, want))
    return bad


@pytest.mark.parametrize("section", list(CASES))
def test_extreme_numbers_answer_as_redis(resp, section):
    assert run_rows(resp, CASES[section]) == []
    assert resp.call("PING") == "PONG"


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 overflows or blocks on these")
def test_extreme_numbers_where_redis_70_misbehaves(resp):
    assert run_rows(resp, HOTKV_ONLY) == []
    assert resp.call("PING") == "PONG"


# ------------------------------------------------- value size vs entry ---
ENTRY_MAX = 4294967295 - 64  # entry.h: 32-bit lengths, room for a listpack's header


@pytest.mark.skipif(IS_REDIS, reason="Redis keeps 64-bit string lengths")
def test_proto_max_bulk_len_cannot_exceed_entry_limit(resp):
    before = resp.call("CONFIG", "GET", "proto-max-bulk-len")
    try:
        for v in ("8gb", "4gb", str(ENTRY_MAX + 1), "4294967295", "9223372036854775807"):
            got = resp.call("CONFIG", "SET", "proto-max-bulk-len", v)
            assert isinstance(got, tuple) and got[0] == "error", (v, got)
            assert "proto-max-bulk-len" in got[1] and str(ENTRY_MAX) in got[1], got
        assert resp.call("CONFIG", "GET", "proto-max-bulk-len") == before
        assert resp.call("CONFIG", "SET", "proto-max-bulk-len", str(ENTRY_MAX)) == "OK"
        # Growth past what an entry holds is refused before allocating.
        err = ("error", "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        assert resp.call("SETRANGE", "big", "4294967295", "AB") == err
        assert resp.call("SETRANGE", "big", str(ENTRY_MAX - 1), "AB") == err
        assert resp.call("SET", "big", "x") == "OK"
        assert resp.call("SETRANGE", "big", "4294967295", "AB") == err
        assert resp.call("STRLEN", "big") == 1
        off = ("error", "ERR bit offset is not an integer or out of range")
        assert resp.call("SETBIT", "big", str(ENTRY_MAX * 8), "1") == off
        assert resp.call("BITFIELD", "big", "SET", "u8", str(ENTRY_MAX * 8), "1") == off
        got = resp.call("BITFIELD", "big", "SET", "i64", str(ENTRY_MAX * 8 - 8), "1")
        assert got == err or got == off, got
        assert resp.call("STRLEN", "big") == 1
        # The previous 512 MB limit: refused at once as well.
        assert resp.call("CONFIG", "SET", "proto-max-bulk-len", "512mb") == "OK"
        assert resp.call("SETRANGE", "big", "4294967295", "AB") == err
        assert resp.call("SETRANGE", "big", "536870911", "AB") == err
        assert resp.call("STRLEN", "big") == 1
    finally:
        resp.call("CONFIG", "SET", "proto-max-bulk-len", before[1])


@pytest.mark.skipif(IS_REDIS, reason="Redis accepts 8gb")
def test_startup_refuses_proto_max_bulk_len_above_entry_limit():
    with pytest.raises(RuntimeError):
        Server("--proto-max-bulk-len", "8gb")


# ------------------------------------- streams restored with odd times ---


def _pending_stream_payload(resp):
    """DUMP of a stream with one consumer group, one consumer and one
    pending entry delivered at a known time; returns (payload, seen)."""
    resp.call("XADD", "src", "1-1", "f", "v")
    resp.call("XGROUP", "CREATE", "src", "g", "0")
    resp.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "src", ">")
    assert resp.call("XCLAIM", "src", "g", "c", "0", "1-1", "TIME", "1234567890123", "JUSTID") == [b"1-1"]
    full = resp.call("XINFO", "STREAM", "src", "FULL")
    group = dict(zip(full[::2], full[1::2]))[b"groups"][0]
    cons = dict(zip(group[::2], group[1::2]))[b"consumers"][0]
    seen = dict(zip(cons[::2], cons[1::2]))[b"seen-time"]
    return resp.call("DUMP", "src"), seen


def _patched(payload, old, new):
    body = payload[:-8]
    assert body.count(struct.pack("<q", old)) >= 1
    body = body.replace(struct.pack("<q", old), struct.pack("<q", new))
    return body + struct.pack("<Q", crc64(body))


@pytest.mark.parametrize("t", [-2**63, -1, 2**63 - 1])
def test_restored_stream_with_extreme_delivery_time(resp, t):
    payload, seen = _pending_stream_payload(resp)
    p = _patched(payload, 1234567890123, t)
    if t != 1234567890123 and seen != 1234567890123:
        p = _patched(p, seen, t)
    assert resp.call("RESTORE", "s", "0", p) == "OK"
    assert resp.call("XPENDING", "s", "g") == [1, b"1-1", b"1-1", [[b"c", b"1"]]]
    ext = resp.call("XPENDING", "s", "g", "-", "+", "10")
    assert len(ext) == 1 and ext[0][:2] == [b"1-1", b"c"] and ext[0][3] == 1
    # Redis's now - delivery_time wraps for INT64_MIN: idle 0, never idle enough.
    if t != -1:
        assert ext[0][2] == 0
        assert resp.call("XPENDING", "s", "g", "IDLE", "1", "-", "+", "10") == []
        assert resp.call("XPENDING", "s", "g", "IDLE", "{MAX}".replace("{MAX}", SUB["{MAX}"]), "-", "+", "10", "c") == []
        assert resp.call("XCLAIM", "s", "g", "c2", "1", "1-1", "JUSTID") == []
        assert resp.call("XAUTOCLAIM", "s", "g", "c3", "1", "0", "JUSTID") == [b"0-0", [], []]
    else:
        assert ext[0][2] > 0
    cons = resp.call("XINFO", "CONSUMERS", "s", "g")
    assert len(cons) == 1 and dict(zip(cons[0][::2], cons[0][1::2]))[b"idle"] >= 0
    full = resp.call("XINFO", "STREAM", "s", "FULL")
    group = dict(zip(full[::2], full[1::2]))[b"groups"][0]
    assert dict(zip(group[::2], group[1::2]))[b"pending"] == [[b"1-1", b"c", t, 1]]
    # Claiming regardless of idle time still works and resets the time.
    assert resp.call("XCLAIM", "s", "g", "c2", "0", "1-1", "JUSTID") == [b"1-1"]
    assert resp.call("XCLAIM", "s", "g", "c2", "0", "1-1", "IDLE", SUB["{MIN}"], "JUSTID") == [b"1-1"]
    assert resp.call("PING") == "PONG"
