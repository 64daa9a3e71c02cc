/* t_bitops.c - bit commands on string values: SETBIT, GETBIT, BITCOUNT,
 * BITPOS, BITOP, BITFIELD and BITFIELD_RO, with Redis 7.2's replies and
 * error texts.
 *
 * Bits are numbered from the most significant bit of the first byte, so bit
 * n is (byte[n / 8] >> (7 - n % 8)) & 1.  A string is an infinite run of
 * zero bits past its end: reads there give 0, writes grow the string (zero
 * filled) inside its entry, reallocating the entry and updating its table
 * slot as t_string.c does for APPEND.  Offsets are capped so that the byte
 * index stays below proto-max-bulk-len.  Counting and searching walk the
 * range in 8-byte words.  Handlers run with their keys' shard locks held by
 * the dispatcher. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "commands.h"
#include "notify.h"

#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_BF_TYPE "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

/* ----------------------------------------------------------- helpers --- */

/* Value of bit n of p (caller checks n is inside the buffer). */
static inline int bit_get(const unsigned char *p, uint64_t n)
{
    return (p[n >> 3] >> (7 - (n & 7))) & 1;
}

static inline void bit_put(unsigned char *p, uint64_t n, int v)
{
    unsigned char m = (unsigned char)(1u << (7 - (n & 7)));
    if (v)
        p[n >> 3] |= m;
    else
        p[n >> 3] &= (unsigned char)~m;
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Set bits in n bytes, 32 then 8 bytes at a time.  Built twice on x86-64:
 * plain, and with the POPCNT instruction, chosen at run time. */
#define POPCOUNT_BODY                                                                                   \
    uint64_t n0 = 0, n1 = 0, n2 = 0, n3 = 0;                                                            \
    while (n >= 32) {                                                                                   \
        n0 += (uint64_t)__builtin_popcountll(load64(p));                                                \
        n1 += (uint64_t)__builtin_popcountll(load64(p + 8));                                            \
        n2 += (uint64_t)__builtin_popcountll(load64(p + 16));                                           \
        n3 += (uint64_t)__builtin_popcountll(load64(p + 24));                                           \
        p += 32;                                                                                        \
        n -= 32;                                                                                        \
    }                                                                                                   \
    while (n >= 8) {                                                                                    \
        n0 += (uint64_t)__builtin_popcountll(load64(p));                                                \
        p += 8;                                                                                         \
        n -= 8;                                                                                         \
    }                                                                                                   \
    while (n > 0) {                                                                                     \
        n0 += (uint64_t)__builtin_popcount(*p++);                                                       \
        n--;                                                                                            \
    }                                                                                                   \
    return n0 + n1 + n2 + n3;

static uint64_t popcount_plain(const unsigned char *p, size_t n)
{
    POPCOUNT_BODY
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt"))) static uint64_t popcount_hw(const unsigned char *p, size_t n)
{
    POPCOUNT_BODY
}

static uint64_t popcount_bytes(const unsigned char *p, size_t n)
{
    if (n >= 16 && __builtin_cpu_supports("popcnt"))
        return popcount_hw(p, n);
    return popcount_plain(p, n);
}
#else
static uint64_t popcount_bytes(const unsigned char *p, size_t n)
{
    return popcount_plain(p, n);
}
#endif
#undef POPCOUNT_BODY

/* Set bits in the bit range [from, to] (inclusive, inside the buffer). */
static uint64_t count_bit_range(const unsigned char *p, uint64_t from, uint64_t to)
{
    uint64_t first = from >> 3, last = to >> 3;
    unsigned head = 0xffu >> (from & 7);                    /* bits from..7 of the first byte */
    unsigned tail = (0xff00u >> ((to & 7) + 1)) & 0xffu;    /* bits 0..to of the last byte */
    if (first == last)
        return (uint64_t)__builtin_popcount(p[first] & head & tail);
    return (uint64_t)__builtin_popcount(p[first] & head) + popcount_bytes(p + first + 1, (size_t)(last - first - 1)) +
           (uint64_t)__builtin_popcount(p[last] & tail);
}

/* First bit equal to bit in [from, to] (inclusive, inside the buffer), or
 * -1.  Whole words and bytes that cannot hold it are skipped. */
static long long find_bit(const unsigned char *p, uint64_t from, uint64_t to, int bit)
{
    const uint64_t skip_word = bit ? 0 : UINT64_MAX;
    const unsigned char skip_byte = bit ? 0 : 0xff;
    uint64_t n = from;
    while (n <= to && (n & 7)) {
        if (bit_get(p, n) == bit)
            return (long long)n;
        n++;
    }
    while (n <= to && to - n >= 63 && load64(p + (n >> 3)) == skip_word)
        n += 64;
    while (n <= to && to - n >= 7 && p[n >> 3] == skip_byte)
        n += 8;
    for (; n <= to; n++) {
        if (bit_get(p, n) == bit)
            return (long long)n;
    }
    return -1;
}

/* Parse a bit offset at argv[i].  With bf_bits > 0 (BITFIELD) "#N" means
 * N * bf_bits.  Replies and returns -1 when it is not an integer, negative
 * or its byte is at or past proto-max-bulk-len. */
static int parse_bit_offset(struct client *c, int i, int bf_bits, uint64_t *off)
{
    const char *s = c->argv[i];
    size_t n = c->argvlen[i];
    int hash = bf_bits > 0 && n > 0 && s[0] == '#';
    long long v;
    if (!str_to_ll(s + hash, n - (size_t)hash, &v) || (hash && __builtin_mul_overflow(v, (long long)bf_bits, &v)) ||
        v < 0 || (v >> 3) >= cfg.proto_max_bulk_len) {
        reply_error(&c->out, ERR_BIT_OFFSET);
        return -1;
    }
    *off = (uint64_t)v;
    return 0;
}

/* The string at argv[1] for writing, at least (maxbit / 8 + 1) bytes long:
 * created zero filled when missing, grown with zeros when shorter.  The
 * entry may move (the table slot is updated).  Replies WRONGTYPE and
 * returns NULL for other types.  *dirty: the key was created or grown. */
static struct entry *string_for_bit_write(struct client *c, uint64_t maxbit, int *dirty)
{
    unsigned slot = kslot(c, 1);
    long idx = -1;
    uint64_t want = (maxbit >> 3) + 1;
    struct entry *e = db_get_idx(c->db, slot, c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (e && e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return NULL;
    }
    if (want > (uint64_t)ENTRY_MAX_LEN) {
        /* Entries hold up to 4 GiB - 1 of value (entry.h). */
        reply_error(&c->out, ERR_STRING_SIZE);
        return NULL;
    }
    *dirty = 1;
    if (!e) {
        e = entry_new(OBJ_STRING, c->argv[1], c->argvlen[1], (size_t)want, -1);
        memset(entry_val(e), 0, (size_t)want);
        db_add(c->db, slot, e);
    } else if (entry_vlen(e) >= want) {
        *dirty = 0;
    } else {
        size_t old = entry_vlen(e);
        if (!entry_vlen_fits(e, (size_t)want)) {
            e = entry_to_long(e, 0);
            table_set(ks.dbs[c->db]->t[slot], idx, e);
        }
        size_t need = entry_hdr(e) + entry_klen(e) + (size_t)want;
        if (hk_usable(e) < need) {
            /* Room to spare for growth a bit at a time, as APPEND does. */
            size_t alloc = need < 1024 * 1024 ? need * 2 : need + 1024 * 1024;
            e = hk_realloc(e, alloc);
            table_set(ks.dbs[c->db]->t[slot], idx, e);
        }
        memset(entry_val(e) + old, 0, (size_t)want - old);
        entry_set_vlen(e, (size_t)want);
    }
    e->enc = ENC_RAW;
    return e;
}

/* The string at argv[1] for reading: NULL when missing (nothing replied)
 * or of another type (*wrong set, WRONGTYPE replied). */
static struct entry *string_for_read(struct client *c, int *wrong)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], 0);
    *wrong = 0;
    if (e && e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        *wrong = 1;
        return NULL;
    }
    return e;
}

/* Parse "BIT" / "BYTE" at argv[i]: 1, 0, or -1 after a syntax error. */
static int parse_unit(struct client *c, int i)
{
    if (arg_is(c, i, "bit"))
        return 1;
    if (arg_is(c, i, "byte"))
        return 0;
    reply_error(&c->out, ERR_SYNTAX);
    return -1;
}

/* ------------------------------------------------------ SETBIT/GETBIT --- */

void setbit_command(struct client *c)
{
    uint64_t off;
    long long v;
    struct entry *e;
    if (parse_bit_offset(c, 2, 0, &off) < 0)
        return;
    if (!str_to_ll(c->argv[3], c->argvlen[3], &v) || (v != 0 && v != 1)) {
        reply_error(&c->out, ERR_BIT_VALUE);
        return;
    }
    int dirty;
    e = string_for_bit_write(c, off, &dirty);
    if (!e)
        return;
    unsigned char *p = (unsigned char *)entry_val(e);
    int old = bit_get(p, off);
    bit_put(p, off, (int)v);
    /* Only a real change is an event (Redis 7.2+). */
    if (dirty || old != (int)v)
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "setbit");
    reply_int(&c->out, old);
}

void getbit_command(struct client *c)
{
    uint64_t off;
    int wrong;
    struct entry *e;
    if (parse_bit_offset(c, 2, 0, &off) < 0)
        return;
    e = string_for_read(c, &wrong);
    if (wrong)
        return;
    if (!e || (off >> 3) >= entry_vlen(e))
        reply_int(&c->out, 0);
    else
        reply_int(&c->out, bit_get((const unsigned char *)entry_val(e), off));
}

/* ---------------------------------------------------- BITCOUNT/BITPOS --- */

/* Resolve a [start, end] range given in bytes or bits (negative values
 * count from the end) against a string of len bytes, as bit positions.
 * Returns 0 when the range is empty. */
static int bit_range(long long start, long long end, int in_bits, long long len, uint64_t *from, uint64_t *to)
{
    long long total = in_bits ? len * 8 : len;
    if (start < 0)
        start += total;
    if (end < 0)
        end += total;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= total)
        end = total - 1;
    if (start > end)
        return 0;
    *from = in_bits ? (uint64_t)start : (uint64_t)start * 8;
    *to = in_bits ? (uint64_t)end : (uint64_t)end * 8 + 7;
    return 1;
}

/* BITCOUNT key [start end [BYTE|BIT]] */
void bitcount_command(struct client *c)
{
    long long start = 0, end = -1;
    int in_bits = 0, wrong;
    uint64_t from, to;
    struct entry *e;
    if (c->argc == 4 || c->argc == 5) {
        if (arg_ll(c, 2, &start) < 0 || arg_ll(c, 3, &end) < 0)
            return;
        if (c->argc == 5 && (in_bits = parse_unit(c, 4)) < 0)
            return;
    } else if (c->argc != 2) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    e = string_for_read(c, &wrong);
    if (wrong)
        return;
    if (!e || (start < 0 && end < 0 && start > end) || !bit_range(start, end, in_bits, entry_vlen(e), &from, &to)) {
        reply_int(&c->out, 0);
        return;
    }
    reply_int(&c->out, (long long)count_bit_range((const unsigned char *)entry_val(e), from, to));
}

/* BITPOS key bit [start [end [BYTE|BIT]]] */
void bitpos_command(struct client *c)
{
    long long bit, start = 0, end = -1, pos;
    int in_bits = 0, end_given = c->argc >= 5, wrong;
    uint64_t from, to;
    struct entry *e;
    if (arg_ll(c, 2, &bit) < 0)
        return;
    if (bit != 0 && bit != 1) {
        reply_error(&c->out, "ERR The bit argument must be 1 or 0.");
        return;
    }
    if (c->argc > 6) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 4) {
        if (arg_ll(c, 3, &start) < 0)
            return;
        if (c->argc == 6 && (in_bits = parse_unit(c, 5)) < 0)
            return;
        if (end_given && arg_ll(c, 4, &end) < 0)
            return;
    }
    e = string_for_read(c, &wrong);
    if (wrong)
        return;
    if (!e) {
        /* A missing key is an endless run of zeros. */
        reply_int(&c->out, bit ? -1 : 0);
        return;
    }
    if (!bit_range(start, end, in_bits, entry_vlen(e), &from, &to)) {
        reply_int(&c->out, -1);
        return;
    }
    pos = find_bit((const unsigned char *)entry_val(e), from, to, (int)bit);
    /* Looking for a 0 without an explicit end: the string continues with
     * zeros, so the first one is just past the range. */
    if (pos < 0 && bit == 0 && !end_given)
        pos = (long long)to + 1;
    reply_int(&c->out, pos);
}

/* -------------------------------------------------------------- BITOP --- */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* BITOP AND|OR|XOR|NOT destkey key [key ...] */
void bitop_command(struct client *c)
{
    int op, nsrc = c->argc - 3;
    size_t maxlen = 0;
    const unsigned char *stack_src[16], **src = stack_src;
    size_t stack_len[16], *len = stack_len;

    if (arg_is(c, 1, "and"))
        op = BITOP_AND;
    else if (arg_is(c, 1, "or"))
        op = BITOP_OR;
    else if (arg_is(c, 1, "xor"))
        op = BITOP_XOR;
    else if (arg_is(c, 1, "not"))
        op = BITOP_NOT;
    else {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && nsrc != 1) {
        reply_error(&c->out, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    if (nsrc > 16) {
        src = hk_malloc(sizeof(*src) * (size_t)nsrc);
        len = hk_malloc(sizeof(*len) * (size_t)nsrc);
    }
    for (int j = 0; j < nsrc; j++) {
        int ki = j + 3;
        struct entry *e = db_get(c->db, kslot(c, ki), c->argv[ki], c->argvlen[ki], 0);
        if (e && e->type != OBJ_STRING) {
            reply_error(&c->out, ERR_WRONGTYPE);
            goto out;
        }
        /* A missing key reads as zeros. */
        src[j] = e ? (const unsigned char *)entry_val(e) : NULL;
        len[j] = e ? entry_vlen(e) : 0;
        if (len[j] > maxlen)
            maxlen = len[j];
    }

    unsigned slot = kslot(c, 2);
    long idx = -1;
    if (maxlen == 0) {
        /* Empty result: the destination is deleted. */
        if (db_del(c->db, slot, c->argv[2], c->argvlen[2]))
            KEY_MODIFIED(c, 2, NOTIFY_GENERIC, "del");
        reply_int(&c->out, 0);
        goto out;
    }
    /* Compute straight into the new entry: the sources stay valid until the
     * old destination (possibly one of them) is replaced below. */
    struct entry *ne = entry_new(OBJ_STRING, c->argv[2], c->argvlen[2], maxlen, -1);
    unsigned char *dst = (unsigned char *)entry_val(ne);
    if (len[0])
        memcpy(dst, src[0], len[0]);
    memset(dst + len[0], 0, maxlen - len[0]);
    if (op == BITOP_NOT) {
        size_t i = 0;
        for (; i + 8 <= maxlen; i += 8) {
            uint64_t w = ~load64(dst + i);
            memcpy(dst + i, &w, 8);
        }
        for (; i < maxlen; i++)
            dst[i] = (unsigned char)~dst[i];
    }
    for (int j = 1; j < nsrc; j++) {
        const unsigned char *s = src[j];
        size_t n = len[j], i = 0;
        if (op == BITOP_AND) {
            /* Past the end of a shorter source the result is zero. */
            for (; i + 8 <= n; i += 8) {
                uint64_t w = load64(dst + i) & load64(s + i);
                memcpy(dst + i, &w, 8);
            }
            for (; i < n; i++)
                dst[i] &= s[i];
            memset(dst + n, 0, maxlen - n);
        } else if (op == BITOP_OR) {
            for (; i + 8 <= n; i += 8) {
                uint64_t w = load64(dst + i) | load64(s + i);
                memcpy(dst + i, &w, 8);
            }
            for (; i < n; i++)
                dst[i] |= s[i];
        } else {
            for (; i + 8 <= n; i += 8) {
                uint64_t w = load64(dst + i) ^ load64(s + i);
                memcpy(dst + i, &w, 8);
            }
            for (; i < n; i++)
                dst[i] ^= s[i];
        }
    }
    ne->enc = ENC_RAW;
    /* Like SET: any old value and TTL of the destination go. */
    if (db_get_idx(c->db, slot, c->argv[2], c->argvlen[2], LK_NOSTATS, &idx))
        db_replace(c->db, slot, idx, ne);
    else
        db_add(c->db, slot, ne);
    KEY_MODIFIED(c, 2, NOTIFY_STRING, "set");
    reply_int(&c->out, (long long)maxlen);
out:
    if (src != stack_src) {
        hk_free(src);
        hk_free(len);
    }
}

/* ----------------------------------------------------------- BITFIELD --- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { OW_WRAP, OW_SAT, OW_FAIL };

struct bf_op {
    uint64_t off;
    long long arg;     /* SET value or INCRBY increment */
    unsigned char op, ow, bits, sign;
};

/* Read bits bits at bit offset off as an unsigned number; bits past len
 * bytes read as zero. */
static uint64_t field_get(const unsigned char *p, size_t len, uint64_t off, unsigned bits)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bits; i++) {
        uint64_t n = off + i;
        v = (v << 1) | (uint64_t)((n >> 3) < len ? bit_get(p, n) : 0);
    }
    return v;
}

static void field_put(unsigned char *p, uint64_t off, unsigned bits, uint64_t v)
{
    for (unsigned i = 0; i < bits; i++)
        bit_put(p, off + i, (int)((v >> (bits - 1 - i)) & 1));
}

/* Two's complement value of the low bits bits of v. */
static int64_t sign_extend(uint64_t v, unsigned bits)
{
    if (bits < 64 && (v >> (bits - 1)) & 1)
        v |= UINT64_MAX << bits;
    return (int64_t)v;
}

/* Low bits bits of v (the stored form of a field). */
static uint64_t field_mask(uint64_t v, unsigned bits)
{
    return bits == 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

/* New value of a signed field: old + incr (SET: old is the value, incr 0).
 * Returns 1 on overflow, with *out the wrapped or saturated value. */
static int signed_update(int64_t old, int64_t incr, unsigned bits, int ow, int64_t *out)
{
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    int64_t min = -max - 1, sum;
    int dir = 0;   /* +1 above max, -1 below min */
    if (__builtin_add_overflow(old, incr, &sum))
        dir = incr > 0 ? 1 : -1;
    else if (sum > max)
        dir = 1;
    else if (sum < min)
        dir = -1;
    if (!dir) {
        *out = sum;
        return 0;
    }
    if (ow == OW_SAT)
        *out = dir > 0 ? max : min;
    else
        *out = sign_extend(field_mask((uint64_t)old + (uint64_t)incr, bits), bits);
    return 1;
}

/* Same for an unsigned field (bits <= 63).  old is the stored value or,
 * for SET, the given value taken as unsigned, so a negative SET value is
 * above max, as in Redis. */
static int unsigned_update(uint64_t old, int64_t incr, unsigned bits, int ow, uint64_t *out)
{
    uint64_t max = (UINT64_C(1) << bits) - 1;
    int dir = 0;
    if (old > max || (incr > 0 && (uint64_t)incr > max - old))
        dir = 1;
    else if (incr < 0 && (uint64_t)0 - (uint64_t)incr > old)
        dir = -1;
    if (!dir) {
        *out = old + (uint64_t)incr;
        return 0;
    }
    if (ow == OW_SAT)
        *out = dir > 0 ? max : 0;
    else
        *out = field_mask(old + (uint64_t)incr, bits);
    return 1;
}

/* Parse a field type "iN" (1..64) or "uN" (1..63) at argv[i]. */
static int parse_bf_type(struct client *c, int i, unsigned char *sign, unsigned char *bits)
{
    const char *s = c->argv[i];
    size_t n = c->argvlen[i];
    long long v;
    if (n < 2 || (s[0] != 'i' && s[0] != 'u') || !str_to_ll(s + 1, n - 1, &v) || v < 1 ||
        v > (s[0] == 'i' ? 64 : 63)) {
        reply_error(&c->out, ERR_BF_TYPE);
        return -1;
    }
    *sign = s[0] == 'i';
    *bits = (unsigned char)v;
    return 0;
}

static void bitfield_generic(struct client *c, int ro_cmd)
{
    struct bf_op stack_ops[8], *ops = stack_ops;
    int nops = 0, cap = 8, writes = 0, ow = OW_WRAP, dirty = 0;
    long changes = 0;
    uint64_t maxbit = 0;
    struct entry *e;

    for (int j = 2; j < c->argc; j++) {
        int more = c->argc - j - 1;
        struct bf_op o;
        memset(&o, 0, sizeof(o));
        if (arg_is(c, j, "get") && more >= 2) {
            o.op = BF_GET;
        } else if (arg_is(c, j, "set") && more >= 3) {
            o.op = BF_SET;
        } else if (arg_is(c, j, "incrby") && more >= 3) {
            o.op = BF_INCRBY;
        } else if (arg_is(c, j, "overflow") && more >= 1) {
            j++;
            if (arg_is(c, j, "wrap"))
                ow = OW_WRAP;
            else if (arg_is(c, j, "sat"))
                ow = OW_SAT;
            else if (arg_is(c, j, "fail"))
                ow = OW_FAIL;
            else {
                reply_error(&c->out, "ERR Invalid OVERFLOW type specified");
                goto out;
            }
            continue;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            goto out;
        }
        if (parse_bf_type(c, j + 1, &o.sign, &o.bits) < 0 || parse_bit_offset(c, j + 2, o.bits, &o.off) < 0)
            goto out;
        o.ow = (unsigned char)ow;
        if (o.op != BF_GET) {
            writes = 1;
            if (o.off + o.bits - 1 > maxbit)
                maxbit = o.off + o.bits - 1;
            if (arg_ll(c, j + 3, &o.arg) < 0)
                goto out;
        }
        if (nops == cap) {
            cap *= 2;
            if (ops == stack_ops) {
                ops = hk_malloc(sizeof(*ops) * (size_t)cap);
                memcpy(ops, stack_ops, sizeof(stack_ops));
            } else {
                ops = hk_realloc(ops, sizeof(*ops) * (size_t)cap);
            }
        }
        ops[nops++] = o;
        j += o.op == BF_GET ? 2 : 3;
    }

    if (!writes) {
        int wrong;
        e = string_for_read(c, &wrong);
        if (wrong)
            goto out;
    } else if (ro_cmd) {
        reply_error(&c->out, "ERR BITFIELD_RO only supports the GET subcommand");
        goto out;
    } else if (!(e = string_for_bit_write(c, maxbit, &dirty))) {
        goto out;
    }

    reply_array(&c->out, nops);
    for (int j = 0; j < nops; j++) {
        struct bf_op *o = &ops[j];
        unsigned char *p = e ? (unsigned char *)entry_val(e) : NULL;
        size_t len = e ? entry_vlen(e) : 0;
        uint64_t raw = field_get(p, len, o->off, o->bits);
        if (o->op == BF_GET) {
            if (o->sign)
                reply_int(&c->out, sign_extend(raw, o->bits));
            else
                reply_int(&c->out, (long long)raw);
            continue;
        }
        int over;
        uint64_t store;
        long long ret;
        if (o->sign) {
            int64_t old = sign_extend(raw, o->bits), nv;
            if (o->op == BF_INCRBY) {
                over = signed_update(old, o->arg, o->bits, o->ow, &nv);
                ret = nv;
            } else {
                over = signed_update(o->arg, 0, o->bits, o->ow, &nv);
                ret = old;
            }
            store = field_mask((uint64_t)nv, o->bits);
        } else {
            uint64_t nv;
            if (o->op == BF_INCRBY) {
                over = unsigned_update(raw, o->arg, o->bits, o->ow, &nv);
                ret = (long long)nv;
            } else {
                over = unsigned_update((uint64_t)o->arg, 0, o->bits, o->ow, &nv);
                ret = (long long)raw;
            }
            store = nv;
        }
        if (over && o->ow == OW_FAIL) {
            reply_null(&c->out);
            continue;
        }
        field_put(p, o->off, o->bits, store);
        if (dirty || store != raw)
            changes++;
        reply_int(&c->out, ret);
    }
    if (changes)
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "setbit");
out:
    if (ops != stack_ops)
        hk_free(ops);
}

/* BITFIELD key [GET type offset | SET type offset value |
 *               INCRBY type offset increment | OVERFLOW WRAP|SAT|FAIL ...] */
void bitfield_command(struct client *c)
{
    bitfield_generic(c, 0);
}

/* BITFIELD_RO key [GET type offset ...] */
void bitfield_ro_command(struct client *c)
{
    bitfield_generic(c, 1);
}
