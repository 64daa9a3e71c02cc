/* test_rdb.c - the RDB format core (persist/lzf.c, rdb.c, rdb_types.c)
 * without a server: LZF round trips (random, compressible, edge sizes) and
 * a Redis-made compressed string; length / string / double primitives and
 * their exact bytes; truncated and corrupt input with the offset in the
 * error; value round trips of every type and encoding for RDB 10, 11, 12
 * (which types each version writes); the old ziplist / zipmap / intset /
 * text-score encodings; Redis 7.0 DUMP payloads; whole files (databases,
 * TTLs, expired keys, checksum); and random corruption that must be
 * refused, never crash. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/util.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/intset.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "persist/lzf.h"
#include "persist/rdb.h"
#include "base/crc64.h"
#include "cmd/cmd.h"
#include "test.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/zset.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned char *hex(const char *h, size_t *n)
{
    size_t l = strlen(h) / 2;
    unsigned char *o = hk_malloc(l + 1);
    for (size_t i = 0; i < l; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        o[i] = (unsigned char)v;
    }
    *n = l;
    return o;
}

/* ================================================================ LZF === */

static void lzf_trip(const unsigned char *in, size_t n, int expect_compress)
{
    size_t cap = n + n / 8 + 64;
    unsigned char *c = hk_malloc(cap), *d = hk_malloc(n + 1);
    size_t cl = lzf_compress(in, n, c, cap);
    if (n == 0) {
        CHECK_EQ(cl, 0);
    } else {
        CHECK(cl > 0);
        if (expect_compress && cl >= n)
            printf("n=%zu cl=%zu first=%02x\n", n, cl, in[0]);
        if (expect_compress)
            CHECK(cl < n);
        CHECK_EQ(lzf_decompress(c, cl, d, n), n);
        CHECK(memcmp(in, d, n) == 0);
        /* one byte short of room: refused, no overflow */
        if (n > 1)
            CHECK_EQ(lzf_decompress(c, cl, d, n - 1), 0);
        /* a capacity too small to compress into */
        if (cl > 1)
            CHECK_EQ(lzf_compress(in, n, c, cl - 1), 0);
    }
    hk_free(c);
    hk_free(d);
}

TEST(test_rdb_lzf_round_trips)
{
    static unsigned char buf[70000];
    size_t sizes[] = {0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 100, 264, 265, 1000, 8191, 8192, 8193, 20000, 70000};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        /* random: must still round trip (compressor may fail only by size) */
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)rnd();
        {
            size_t cap = n + n / 8 + 64;
            unsigned char *c = hk_malloc(cap), *d = hk_malloc(n + 1);
            size_t cl = lzf_compress(buf, n, c, cap);
            if (n) {
                CHECK(cl > 0);
                CHECK_EQ(lzf_decompress(c, cl, d, n), n);
                CHECK(memcmp(buf, d, n) == 0);
                CHECK_EQ(lzf_compress(buf, n, c, n > 4 ? n - 4 : 0), 0); /* incompressible */
            }
            hk_free(c);
            hk_free(d);
        }
        /* one repeated byte (long back references, overlapping copies) */
        memset(buf, 'a', n);
        lzf_trip(buf, n, n >= 8);
        /* text with repeats at various distances */
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)("abcdefgh"[(i / 3) % 8] + (i % 1000 == 0));
        lzf_trip(buf, n, n >= 64);
        /* small alphabet */
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)('0' + rnd() % 4);
        lzf_trip(buf, n, n >= 1000);
    }
    /* matches at the window edge (8192 back) */
    for (size_t i = 0; i < 20000; i++)
        buf[i] = (unsigned char)rnd();
    memcpy(buf + 8192 + 100, buf + 100, 3000);
    lzf_trip(buf, 20000, 1);
}

TEST(test_rdb_lzf_decompresses_redis_output)
{
    /* DUMP of a 376-byte string from redis-server 7.0.15 (type, LZF). */
    size_t n;
    unsigned char *p = hex("00c3405d41781f54686520717569636b2062726f776e20666f782030206a756d7073206f76657201207420200a6c6"
                           "17a7920646f672e2054200de0072e0031e0252e0032e0252e0033e0252e0034e0252e0035e0252e0036e0252e00"
                           "37e00f2e012e200a00a341ee74a469205d",
                           &n);
    char want[400];
    size_t wl = 0;
    for (int i = 0; i < 8; i++)
        wl += (size_t)sprintf(want + wl, "The quick brown fox %d jumps over the lazy dog. ", i);
    CHECK_EQ(wl, 376);
    unsigned char out[376];
    CHECK_EQ(lzf_decompress(p + 6, 0x5d, out, 376), 376);
    CHECK_MEM(out, 376, want, wl);
    /* and through the RDB string reader */
    struct rdb_in in;
    rdb_in_init_mem(&in, p + 1, n - 11);
    size_t l;
    unsigned char *s = rdb_r_str(&in, &l);
    CHECK(s != NULL);
    if (s)
        CHECK_MEM(s, l, want, wl);
    hk_free(s);
    /* our compressor's output of the same text reads back too */
    unsigned char c[400];
    size_t cl = lzf_compress(want, wl, c, sizeof(c));
    CHECK(cl > 0 && cl < 200);
    CHECK_EQ(lzf_decompress(c, cl, out, 376), 376);
    CHECK_MEM(out, 376, want, wl);
    hk_free(p);
}

TEST(test_rdb_lzf_malformed_input_is_refused)
{
    unsigned char in[300], out[600];
    for (int it = 0; it < 20000; it++) {
        size_t n = rnd() % sizeof(in), ol = rnd() % sizeof(out);
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)rnd();
        size_t r = lzf_decompress(in, n, out, ol);
        CHECK(r == 0 || r == ol);
    }
    /* a back reference before the start */
    unsigned char bad[] = {0x00, 'a', 0x20, 0x05};
    CHECK_EQ(lzf_decompress(bad, sizeof(bad), out, 4), 0);
    /* truncated literal run */
    unsigned char trunc[] = {0x05, 'a', 'b'};
    CHECK_EQ(lzf_decompress(trunc, sizeof(trunc), out, 6), 0);
}

/* ========================================================= primitives === */

TEST(test_rdb_lengths_round_trip_with_exact_sizes)
{
    uint64_t v[] = {0, 1, 63, 64, 16383, 16384, 0xffffffffULL, 0x100000000ULL, UINT64_MAX};
    size_t sz[] = {1, 1, 1, 2, 2, 5, 5, 9, 9};
    struct rdb_out o;
    rdb_out_init_mem(&o);
    for (int i = 0; i < 9; i++) {
        size_t before = o.len;
        CHECK_EQ(rdb_w_len(&o, v[i]), 0);
        CHECK_EQ(o.len - before, sz[i]);
    }
    struct rdb_in in;
    rdb_in_init_mem(&in, o.buf, o.len);
    for (int i = 0; i < 9; i++) {
        uint64_t r;
        int enc;
        CHECK_EQ(rdb_r_len(&in, &r, &enc), 0);
        CHECK(r == v[i]);
        CHECK_EQ(enc, 0);
    }
    uint64_t r;
    CHECK_EQ(rdb_r_len(&in, &r, NULL), -1);
    CHECK(strstr(in.err, "truncated") && strstr(in.err, "offset 35"));
    rdb_out_free(&o);
}

TEST(test_rdb_strings_integer_and_raw_encodings)
{
    struct {
        const char *s;
        const char *bytes; /* hex of the encoding */
    } cases[] = {
        {"0", "c000"},           {"-1", "c0ff"},        {"127", "c07f"},          {"-128", "c080"},
        {"128", "c18000"},       {"-32768", "c10080"},  {"32767", "c1ff7f"},      {"32768", "c200800000"},
        {"2147483647", "c2ffffff7f"}, {"-2147483648", "c200000080"}, {"2147483648", "0a32313437343833363438"},
        {"007", "03303037"},     {"-0", "022d30"},      {"", "00"},               {"+1", "022b31"},
        {"12345678901", "0b3132333435363738393031"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rdb_out o;
        rdb_out_init_mem(&o);
        rdb_w_str(&o, cases[i].s, strlen(cases[i].s));
        size_t n;
        unsigned char *want = hex(cases[i].bytes, &n);
        CHECK_MEM(o.buf, o.len, want, n);
        struct rdb_in in;
        rdb_in_init_mem(&in, o.buf, o.len);
        size_t l;
        unsigned char *s = rdb_r_str(&in, &l);
        CHECK(s != NULL);
        if (s)
            CHECK_STR((char *)s, l, cases[i].s);
        CHECK_EQ(rdb_in_offset(&in), o.len);
        hk_free(s);
        hk_free(want);
        rdb_out_free(&o);
    }
    /* rdb_w_ll_str */
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_ll_str(&o, -5);
    rdb_w_ll_str(&o, 1LL << 40);
    struct rdb_in in;
    rdb_in_init_mem(&in, o.buf, o.len);
    size_t l;
    unsigned char *s = rdb_r_str(&in, &l);
    CHECK_STR((char *)s, l, "-5");
    hk_free(s);
    s = rdb_r_str(&in, &l);
    CHECK_STR((char *)s, l, "1099511627776");
    hk_free(s);
    rdb_out_free(&o);
    /* compression: only when it pays, and only for > 20 bytes */
    char big[1000];
    memset(big, 'x', sizeof(big));
    rdb_out_init_mem(&o);
    o.compress = 1;
    rdb_w_str(&o, big, sizeof(big));
    CHECK(o.len < 100);
    CHECK_EQ(o.buf[0], 0xc3);
    rdb_in_init_mem(&in, o.buf, o.len);
    s = rdb_r_str(&in, &l);
    CHECK_MEM(s, l, big, sizeof(big));
    hk_free(s);
    rdb_out_free(&o);
    rdb_out_init_mem(&o);
    o.compress = 1;
    rdb_w_str(&o, big, 20);
    CHECK_EQ(o.len, 21); /* raw */
    rdb_out_free(&o);
}

TEST(test_rdb_doubles_millis_and_text_scores)
{
    double v[] = {0.0, -0.0, 1.5, -3.25e300, INFINITY, -INFINITY, 4.9e-324};
    struct rdb_out o;
    rdb_out_init_mem(&o);
    for (int i = 0; i < 7; i++)
        rdb_w_double_bin(&o, v[i]);
    rdb_w_millis(&o, 1700000000123LL);
    CHECK_EQ(o.len, 64);
    CHECK_EQ(o.buf[8 * 2], 0); /* 1.5 = 0x3ff8000000000000, little-endian */
    CHECK_EQ(o.buf[8 * 2 + 7], 0x3f);
    struct rdb_in in;
    rdb_in_init_mem(&in, o.buf, o.len);
    for (int i = 0; i < 7; i++) {
        double d;
        CHECK_EQ(rdb_r_double_bin(&in, &d), 0);
        CHECK(memcmp(&d, &v[i], 8) == 0);
    }
    long long ms;
    CHECK_EQ(rdb_r_millis(&in, &ms), 0);
    CHECK_EQ(ms, 1700000000123LL);
    rdb_out_free(&o);
    unsigned char txt[] = {3, '1', '.', '5', 253, 254, 255, 2, 'x', 'y'};
    rdb_in_init_mem(&in, txt, sizeof(txt));
    double d;
    CHECK_EQ(rdb_r_double_str(&in, &d), 0);
    CHECK(d == 1.5);
    CHECK_EQ(rdb_r_double_str(&in, &d), 0);
    CHECK(isnan(d));
    CHECK_EQ(rdb_r_double_str(&in, &d), 0);
    CHECK(isinf(d) && d > 0);
    CHECK_EQ(rdb_r_double_str(&in, &d), 0);
    CHECK(isinf(d) && d < 0);
    CHECK_EQ(rdb_r_double_str(&in, &d), -1);
    CHECK(strstr(in.err, "Invalid double") != NULL);
}

TEST(test_rdb_bad_strings_report_offsets)
{
    /* claims 100 bytes, has 3 */
    unsigned char a[] = {0x00, 60, 'a', 'b', 'c'};
    struct rdb_in in;
    rdb_in_init_mem(&in, a, sizeof(a));
    int t;
    size_t l;
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(strstr(in.err, "truncated") != NULL);
    if (!strstr(in.err, "at offset 2"))
        printf("%s\n", in.err);
    CHECK(strstr(in.err, "at offset 2") != NULL);
    /* every later read fails too, the first error stays */
    CHECK_EQ(rdb_r_type(&in, &t), -1);
    CHECK(strstr(in.err, "at offset 2") != NULL);
    /* an unknown string encoding */
    unsigned char b[] = {0xc7, 0};
    rdb_in_init_mem(&in, b, sizeof(b));
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(strstr(in.err, "encoding") != NULL);
    /* LZF with impossible lengths (no giant allocation) */
    unsigned char c[] = {0xc3, 0x01, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00};
    rdb_in_init_mem(&in, c, sizeof(c));
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(strstr(in.err, "LZF") != NULL);
    /* a huge raw length */
    unsigned char d[] = {0x81, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'x'};
    rdb_in_init_mem(&in, d, sizeof(d));
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(in.failed);
}

/* ===================================================== value round trips === */

/* A canonical text of a value: type, then its items (sorted for unordered
 * types), with TTLs for hash fields. */
struct canon {
    char **it;
    size_t n, cap;
};

static void canon_add(struct canon *c, const char *s, size_t len)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->it = hk_realloc(c->it, c->cap * sizeof(*c->it));
    }
    char *x = hk_malloc(len + 1);
    memcpy(x, s, len);
    x[len] = 0;
    c->it[c->n++] = x;
}

static int canon_elem(void *arg, const char *s, size_t len)
{
    canon_add(arg, s, len);
    return 0;
}

static int canon_zelem(void *arg, const char *s, size_t len, double score)
{
    char b[600];
    int n = snprintf(b, sizeof(b), "%.17g=%.*s", score, (int)(len > 500 ? 500 : len), s);
    canon_add(arg, b, (size_t)n);
    return 0;
}

static int canon_hfield(void *arg, const char *f, size_t fl, const char *v, size_t vl, long long ttl)
{
    char *b = hk_malloc(fl + vl + 64);
    int n = sprintf(b, "%.*s=%.*s@%lld", (int)fl, f, (int)vl, v, ttl);
    canon_add(arg, b, (size_t)n);
    hk_free(b);
    return 0;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hash of the canonical form (and its size). */
static uint64_t canon_of(struct entry *e, size_t *count)
{
    struct canon c = {NULL, 0, 0};
    int sorted = 0;
    switch (e->type) {
    case OBJ_STRING: canon_add(&c, entry_val(e), entry_vlen(e)); break;
    case OBJ_LIST: list_visit(e, canon_elem, &c); break;
    case OBJ_SET: set_visit(e, canon_elem, &c), sorted = 1; break;
    case OBJ_ZSET: zset_visit(e, 0, canon_zelem, &c); break;
    case OBJ_HASH: hash_visit_fields(e, canon_hfield, &c), sorted = 1; break;
    default: break;
    }
    if (sorted && c.n)
        qsort(c.it, c.n, sizeof(*c.it), cmpstr);
    uint8_t type = (uint8_t)e->type;
    uint64_t h = crc64(0, &type, 1);
    for (size_t i = 0; i < c.n; i++) {
        h = crc64(h, c.it[i], strlen(c.it[i]) + 1);
        hk_free(c.it[i]);
    }
    hk_free(c.it);
    *count = c.n;
    return h;
}

/* Save e as version ver, check the type byte written, load it back, and
 * compare.  Returns the loaded entry (caller frees). */
static struct entry *trip(struct entry *e, int ver, int want_type, int compress)
{
    struct rdb_out o;
    rdb_out_init_mem(&o);
    o.compress = compress;
    CHECK_EQ(rdb_save_value(&o, e, ver), 0);
    CHECK(o.len > 0);
    if (want_type >= 0 && o.len)
        CHECK_EQ(o.buf[0], want_type);
    struct rdb_in in;
    int t = -1;
    rdb_in_init_mem(&in, o.buf, o.len);
    in.now_ms = time_ms();
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    struct entry *n = rdb_load_value(&in, t, "key", 3, entry_expire(e));
    CHECK(n != NULL);
    if (!n) {
        printf("load failed: %s\n", in.err);
        rdb_out_free(&o);
        return NULL;
    }
    CHECK_EQ(rdb_in_offset(&in), o.len);
    size_t c1, c2;
    CHECK(canon_of(e, &c1) == canon_of(n, &c2));
    CHECK_EQ(c1, c2);
    CHECK_EQ(n->type, e->type);
    CHECK_EQ(entry_expire(n), entry_expire(e));
    rdb_out_free(&o);
    return n;
}

static struct entry *mk_list(size_t n, size_t width)
{
    const char **s = hk_malloc(sizeof(*s) * (n + 1));
    size_t *l = hk_malloc(sizeof(*l) * (n + 1));
    char *buf = hk_malloc(n * (width + 24) + 1);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        int k = (i % 3 == 0) ? sprintf(buf + off, "%zu", i * 7) : sprintf(buf + off, "e%zu-", i);
        while ((size_t)k < width && i % 3)
            buf[off + (size_t)k++] = (char)('a' + i % 26);
        s[i] = buf + off;
        l[i] = (size_t)k;
        off += (size_t)k;
    }
    uint8_t enc;
    void *p = list_build(s, l, n, &enc);
    hk_free(s);
    hk_free(l);
    hk_free(buf);
    return entry_new_obj(OBJ_LIST, enc, "key", 3, p, -1);
}

TEST(test_rdb_value_strings)
{
#define LONGSTR "a string of some length that compresses "
    const char *vals[] = {"", "x", "12", "-7", "123456789012345", LONGSTR LONGSTR};
#undef LONGSTR
    for (int v = 10; v <= 12; v++)
        for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
            struct entry *e = entry_new_string("key", 3, vals[i], strlen(vals[i]), i == 2 ? 1234567890123LL : -1);
            struct entry *n = trip(e, v, RDB_TYPE_STRING, (int)(i & 1));
            if (n) {
                CHECK_EQ(n->enc, e->enc);
                entry_free(n);
            }
            entry_free(e);
        }
    /* 1 MB string through the file-sized path */
    size_t big = 1 << 20;
    char *b = hk_malloc(big);
    for (size_t i = 0; i < big; i++)
        b[i] = (char)rnd();
    struct entry *e = entry_new_string("key", 3, b, big, -1);
    struct entry *n = trip(e, 11, RDB_TYPE_STRING, 1);
    if (n)
        entry_free(n);
    entry_free(e);
    hk_free(b);
}

TEST(test_rdb_value_lists)
{
    size_t sizes[] = {1, 3, 128, 129, 1000, 20000};
    for (int v = 10; v <= 12; v++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            struct entry *e = mk_list(sizes[i], i % 2 ? 5 : 40);
            struct entry *n = trip(e, v, RDB_TYPE_LIST_QUICKLIST_2, v == 11);
            if (n) {
                CHECK_EQ(n->enc, e->enc);
                entry_free(n);
            }
            entry_free(e);
        }
    /* compressed nodes (list-compress-depth) and plain (large) elements */
    int saved = list_compress_depth;
    list_compress_depth = 1;
    struct entry *e = mk_list(5000, 60);
    CHECK_EQ(e->enc, ENC_QUICKLIST);
    struct quicklist *ql = entry_ptr(e);
    char *huge = hk_malloc(100000);
    memset(huge, 'h', 100000);
    ql_push(ql, QL_TAIL, huge, 100000);
    ql_push(ql, QL_HEAD, huge, 70000);
    int lz = 0, plain = 0;
    for (struct ql_node *nd = ql->head; nd; nd = nd->next) {
        lz += (nd->flags & QLN_LZ) != 0;
        plain += (nd->flags & QLN_PLAIN) != 0;
    }
    CHECK(lz > 0);
    CHECK_EQ(plain, 2);
    struct entry *n = trip(e, 10, RDB_TYPE_LIST_QUICKLIST_2, 1);
    if (n) {
        CHECK(ql_check(entry_ptr(n)) == NULL);
        entry_free(n);
    }
    entry_free(e);
    hk_free(huge);
    list_compress_depth = saved;
}

static struct entry *mk_set(size_t n, int ints, size_t width)
{
    struct entry *e = set_load_new("key", 3, -1, n);
    char b[300];
    for (size_t i = 0; i < n; i++) {
        int k = ints ? sprintf(b, "%lld", (long long)(i * 1000003) - 500) : sprintf(b, "m%zu:", i);
        while (!ints && (size_t)k < width)
            b[k++] = 'z';
        CHECK_EQ(set_load_add(e, b, (size_t)k), 1);
    }
    return set_load_finish(e);
}

TEST(test_rdb_value_sets_per_version)
{
    struct {
        size_t n;
        int ints;
        size_t width;
        uint8_t enc;
        int t10, t11;
    } cases[] = {
        {5, 1, 0, ENC_INTSET, RDB_TYPE_SET_INTSET, RDB_TYPE_SET_INTSET},
        {512, 1, 0, ENC_INTSET, RDB_TYPE_SET_INTSET, RDB_TYPE_SET_INTSET},
        {513, 1, 0, ENC_HT, RDB_TYPE_SET, RDB_TYPE_SET},
        {5, 0, 3, ENC_LISTPACK, RDB_TYPE_SET, RDB_TYPE_SET_LISTPACK},
        {128, 0, 10, ENC_LISTPACK, RDB_TYPE_SET, RDB_TYPE_SET_LISTPACK},
        {129, 0, 10, ENC_HT, RDB_TYPE_SET, RDB_TYPE_SET},
        {3, 0, 65, ENC_HT, RDB_TYPE_SET, RDB_TYPE_SET},
        {3000, 0, 20, ENC_HT, RDB_TYPE_SET, RDB_TYPE_SET},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct entry *e = mk_set(cases[i].n, cases[i].ints, cases[i].width);
        CHECK_EQ(e->enc, cases[i].enc);
        for (int v = 10; v <= 12; v++) {
            struct entry *n = trip(e, v, v == 10 ? cases[i].t10 : cases[i].t11, 0);
            if (n) {
                /* v10 writes listpack sets as plain sets: they load as listpack again */
                CHECK_EQ(n->enc, e->enc);
                CHECK_EQ(n->flags & E_INLINE, e->flags & E_INLINE);
                entry_free(n);
            }
        }
        entry_free(e);
    }
}

static struct entry *mk_zset(size_t n, size_t width)
{
    uint8_t enc;
    void *p = zset_new_value(n, width + 12, &enc);
    struct entry *e = entry_new_obj(OBJ_ZSET, enc, "key", 3, p, 99999999999999LL);
    char b[300];
    double sc[] = {0, -0.5, 1e300, -INFINITY, INFINITY, 3.141592653589793, 1.0 / 3};
    for (size_t i = 0; i < n; i++) {
        int k = sprintf(b, "z%zu", i);
        while ((size_t)k < width)
            b[k++] = 'q';
        int out;
        double ns;
        zset_add(e, i < 7 ? sc[i] : (double)(i % 50) * 1.25, b, (size_t)k, 0, &out, &ns);
    }
    return zset_load_finish(e);
}

TEST(test_rdb_value_zsets)
{
    size_t sizes[] = {1, 7, 128, 129, 2000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int w = 0; w < 2; w++) {
            struct entry *e = mk_zset(sizes[i], w ? 70 : 4);
            int lp = e->enc == ENC_LISTPACK;
            CHECK_EQ(lp, sizes[i] <= 128 && !w);
            for (int v = 10; v <= 12; v++) {
                struct entry *n = trip(e, v, lp ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2, 1);
                if (n) {
                    CHECK_EQ(n->enc, e->enc);
                    entry_free(n);
                }
            }
            entry_free(e);
        }
}

static struct entry *mk_hash(size_t n, size_t width, int ttls, long long now)
{
    struct entry *e = entry_new_obj(OBJ_HASH, ENC_LISTPACK, "key", 3, hash_new(), -1);
    char f[300], v[300];
    for (size_t i = 0; i < n; i++) {
        int fl = sprintf(f, "f%zu", i), vl = i % 4 == 0 ? sprintf(v, "%zu", i * 13) : sprintf(v, "val%zu", i);
        while ((size_t)vl < width && i % 4)
            v[vl++] = 'v';
        hash_set(e, f, (size_t)fl, v, (size_t)vl, 0);
        if (ttls && i % 3 == 1)
            hash_set_field_ttl(e, f, (size_t)fl, now + 100000 + (long long)((i * 7919) % 1000) * 1000, 0, now);
    }
    if (hash_has_ttl(e))
        e->flags |= E_HFE;
    return hash_load_finish(e);
}

TEST(test_rdb_value_hashes_and_field_ttls)
{
    long long now = time_ms();
    db_cmd_time_ms = 0;
    struct {
        size_t n, width;
        int ttls;
        uint8_t enc;
        int type;
    } cases[] = {
        {1, 3, 0, ENC_LISTPACK, RDB_TYPE_HASH_LISTPACK},
        {128, 10, 0, ENC_LISTPACK, RDB_TYPE_HASH_LISTPACK},
        {129, 10, 0, ENC_HT, RDB_TYPE_HASH},
        {3, 65, 0, ENC_HT, RDB_TYPE_HASH},
        {5, 3, 1, ENC_LISTPACK_EX, RDB_TYPE_HASH_LISTPACK_EX},
        {100, 10, 1, ENC_LISTPACK_EX, RDB_TYPE_HASH_LISTPACK_EX},
        {500, 10, 1, ENC_HT, RDB_TYPE_HASH_METADATA},
        {4, 100, 1, ENC_HT, RDB_TYPE_HASH_METADATA},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct entry *e = mk_hash(cases[i].n, cases[i].width, cases[i].ttls, now);
        CHECK_EQ(e->enc, cases[i].enc);
        for (int v = 10; v <= 12; v++) {
            /* field TTLs are written as 24/25 whatever the version */
            struct entry *n = trip(e, v, cases[i].type, 0);
            if (n) {
                CHECK_EQ(n->enc, e->enc);
                CHECK_EQ(n->flags & E_HFE, e->flags & E_HFE);
                entry_free(n);
            }
        }
        entry_free(e);
    }
}

TEST(test_rdb_hash_fields_already_expired_are_dropped)
{
    long long now = time_ms();
    db_cmd_time_ms = 0;
    for (int big = 0; big < 2; big++) {
        struct entry *e = mk_hash(big ? 300 : 10, 5, 1, now);
        struct rdb_out o;
        rdb_out_init_mem(&o);
        CHECK_EQ(rdb_save_value(&o, e, 12), 0);
        struct rdb_in in;
        int t;
        rdb_in_init_mem(&in, o.buf, o.len);
        in.now_ms = now + 100000 + 500 * 1000; /* about half the TTL'd fields are gone */
        rdb_r_type(&in, &t);
        struct entry *n = rdb_load_value(&in, t, "key", 3, -1);
        CHECK(n != NULL);
        if (n) {
            size_t before = hash_length(e), after = hash_length(n);
            CHECK(after < before);
            CHECK(after > before / 2);
            CHECK(hash_min_field_ttl(n) > in.now_ms);
            entry_free(n);
        }
        /* everything expired: "empty" (a file skips the key, RESTORE creates nothing) */
        struct entry *only = entry_new_obj(OBJ_HASH, ENC_LISTPACK, "k", 1, hash_new(), -1);
        hash_set(only, "a", 1, "b", 1, 0);
        hash_set_field_ttl(only, "a", 1, now + 1000, 0, now);
        if (big)
            hash_convert_ht(only, 0);
        rdb_out_free(&o);
        rdb_out_init_mem(&o);
        CHECK_EQ(rdb_save_value(&o, only, 12), 0);
        rdb_in_init_mem(&in, o.buf, o.len);
        in.now_ms = now + 2000;
        rdb_r_type(&in, &t);
        CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
        CHECK_EQ(in.empty_key, 2);
        CHECK(!in.failed);
        entry_free(only);
        entry_free(e);
        rdb_out_free(&o);
    }
}

TEST(test_rdb_loaded_values_follow_thresholds)
{
    /* a listpack hash of 200 fields (Redis 7.0's default allows 512) */
    unsigned char *lp = lp_new();
    char b[32];
    for (int i = 0; i < 200; i++) {
        int n = sprintf(b, "f%d", i);
        lp = lp_append(lp, b, (size_t)n);
        lp = lp_append(lp, "v", 1);
    }
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_HASH_LISTPACK);
    rdb_w_blob(&o, lp, lp_bytes(lp));
    struct rdb_in in;
    int t;
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(e->enc, ENC_HT);
        CHECK_EQ(hash_length(e), 200);
        entry_free(e);
    }
    rdb_out_free(&o);
    lp_free(lp);
    /* a listpack set with a member over set-max-listpack-value */
    lp = lp_append(lp_new(), "short", 5);
    char longm[100];
    memset(longm, 'L', sizeof(longm));
    lp = lp_append(lp, longm, sizeof(longm));
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_SET_LISTPACK);
    rdb_w_blob(&o, lp, lp_bytes(lp));
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    e = rdb_load_value(&in, t, "k", 1, -1);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(e->enc, ENC_HT);
        entry_free(e);
    }
    rdb_out_free(&o);
    lp_free(lp);
    /* small values come out inline where commands would make them so */
    struct entry *s = mk_set(3, 1, 0);
    CHECK(s->flags & E_INLINE);
    struct entry *n = trip(s, 11, RDB_TYPE_SET_INTSET, 0);
    if (n) {
        CHECK(n->flags & E_INLINE);
        entry_free(n);
    }
    entry_free(s);
}

TEST(test_rdb_duplicates_and_bad_blobs_are_refused)
{
    struct {
        int type;
        const char *elems[6];
        int n;
        const char *why;
    } cases[] = {
        {RDB_TYPE_SET_LISTPACK, {"a", "b", "a"}, 3, "Duplicate"},
        {RDB_TYPE_SET_LISTPACK, {"1", "01", "1"}, 3, "Duplicate"},
        {RDB_TYPE_HASH_LISTPACK, {"f", "1", "f", "2"}, 4, "dup"},
        {RDB_TYPE_HASH_LISTPACK, {"f", "1", "g"}, 3, "integrity"},
        {RDB_TYPE_ZSET_LISTPACK, {"m", "1", "m", "2"}, 4, "Duplicate"},
        {RDB_TYPE_ZSET_LISTPACK, {"m", "notanumber"}, 2, "score"},
        {RDB_TYPE_ZSET_LISTPACK, {"m", "nan"}, 2, "score"},
        {RDB_TYPE_HASH_LISTPACK_EX, {"f", "v", "x"}, 3, "integrity"},
        {RDB_TYPE_HASH_LISTPACK_EX, {"f", "v", "-5"}, 3, "integrity"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *lp = lp_new();
        for (int k = 0; k < cases[i].n; k++)
            lp = lp_append(lp, cases[i].elems[k], strlen(cases[i].elems[k]));
        struct rdb_out o;
        rdb_out_init_mem(&o);
        rdb_w_type(&o, (unsigned char)cases[i].type);
        if (cases[i].type == RDB_TYPE_HASH_LISTPACK_EX)
            rdb_w_millis(&o, 0);
        rdb_w_blob(&o, lp, lp_bytes(lp));
        struct rdb_in in;
        int t;
        rdb_in_init_mem(&in, o.buf, o.len);
        rdb_r_type(&in, &t);
        struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
        CHECK(e == NULL);
        if (e)
            entry_free(e);
        CHECK(in.failed);
        if (!strstr(in.err, cases[i].why))
            printf("case %zu: %s\n", i, in.err);
        CHECK(strstr(in.err, cases[i].why) != NULL);
        rdb_out_free(&o);
        lp_free(lp);
    }
    /* a plain set, hash and zset with a repeated member */
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_SET);
    rdb_w_len(&o, 2);
    rdb_w_str(&o, "x", 1);
    rdb_w_str(&o, "x", 1);
    rdb_w_type(&o, RDB_TYPE_ZSET_2);
    rdb_w_len(&o, 2);
    rdb_w_str(&o, "x", 1);
    rdb_w_double_bin(&o, 1);
    rdb_w_str(&o, "x", 1);
    rdb_w_double_bin(&o, 2);
    struct rdb_in in;
    int t;
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(strstr(in.err, "Duplicate") != NULL);
    rdb_in_init_mem(&in, o.buf + 6, o.len - 6);
    rdb_r_type(&in, &t);
    CHECK_EQ(t, RDB_TYPE_ZSET_2);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(strstr(in.err, "Duplicate") != NULL);
    rdb_out_free(&o);
    /* empty collections are "empty keys", not errors */
    unsigned char empty_set[] = {RDB_TYPE_SET, 0};
    rdb_in_init_mem(&in, empty_set, 2);
    rdb_r_type(&in, &t);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(!in.failed && in.empty_key == 1);
    /* values of module types other than our vector sets are refused
     * (test_rdb_vset.c has the rest) */
    unsigned char mod[] = {RDB_TYPE_MODULE_2, 0};
    rdb_in_init_mem(&in, mod, 2);
    rdb_r_type(&in, &t);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(strstr(in.err, "module data I can't load: no matching module type") != NULL);
}

/* ===================================================== old encodings === */

/* A ziplist holding the given strings (integers where they parse), in the
 * format Redis < 7 wrote. */
static unsigned char *zl_make(const char *const *s, int n, size_t *outlen)
{
    unsigned char *z = hk_malloc(4096);
    size_t p = 10, prev = 0, last = 10;
    for (int i = 0; i < n; i++) {
        size_t start = p;
        long long v;
        size_t len = strlen(s[i]);
        if (prev < 254) {
            z[p++] = (unsigned char)prev;
        } else {
            z[p++] = 254;
            memcpy(z + p, &(uint32_t){(uint32_t)prev}, 4);
            p += 4;
        }
        if (str_to_ll(s[i], len, &v)) {
            if (v >= 0 && v <= 12) {
                z[p++] = (unsigned char)(0xF1 + v);
            } else if (v >= -128 && v <= 127) {
                z[p++] = 0xFE;
                z[p++] = (unsigned char)v;
            } else if (v >= -32768 && v <= 32767) {
                z[p++] = 0xC0;
                z[p++] = (unsigned char)v;
                z[p++] = (unsigned char)(v >> 8);
            } else if (v >= -(1 << 23) && v < (1 << 23)) {
                z[p++] = 0xF0;
                z[p++] = (unsigned char)v;
                z[p++] = (unsigned char)(v >> 8);
                z[p++] = (unsigned char)(v >> 16);
            } else if (v >= INT32_MIN && v <= INT32_MAX) {
                z[p++] = 0xD0;
                memcpy(z + p, &(int32_t){(int32_t)v}, 4);
                p += 4;
            } else {
                z[p++] = 0xE0;
                memcpy(z + p, &v, 8);
                p += 8;
            }
        } else if (len < 64) {
            z[p++] = (unsigned char)len;
            memcpy(z + p, s[i], len);
            p += len;
        } else {
            z[p++] = (unsigned char)(0x40 | (len >> 8));
            z[p++] = (unsigned char)len;
            memcpy(z + p, s[i], len);
            p += len;
        }
        prev = p - start;
        last = start;
    }
    z[p++] = 0xFF;
    memcpy(z, &(uint32_t){(uint32_t)p}, 4);
    memcpy(z + 4, &(uint32_t){(uint32_t)last}, 4);
    z[8] = (unsigned char)n;
    z[9] = (unsigned char)(n >> 8);
    *outlen = p;
    return z;
}

static struct entry *load_blob(int type, const void *blob, size_t n, char *err)
{
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, (unsigned char)type);
    rdb_w_blob(&o, blob, n);
    struct rdb_in in;
    int t;
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
    if (err)
        strcpy(err, in.err);
    rdb_out_free(&o);
    return e;
}

static int canon_cmp_strs(struct entry *e, const char *const *want, int n, int sorted)
{
    struct canon c = {NULL, 0, 0};
    if (e->type == OBJ_LIST)
        list_visit(e, canon_elem, &c);
    else
        set_visit(e, canon_elem, &c);
    int ok = (int)c.n == n;
    const char **w = hk_malloc(sizeof(*w) * (size_t)(n ? n : 1));
    memcpy(w, want, sizeof(*w) * (size_t)n);
    if (sorted) {
        qsort(c.it, c.n, sizeof(*c.it), cmpstr);
        qsort(w, (size_t)n, sizeof(*w), cmpstr);
    }
    for (size_t i = 0; ok && i < c.n; i++)
        ok = strcmp(c.it[i], w[i]) == 0;
    for (size_t i = 0; i < c.n; i++)
        hk_free(c.it[i]);
    hk_free(c.it);
    hk_free(w);
    return ok;
}

TEST(test_rdb_old_ziplist_zipmap_intset_encodings)
{
    char err[256];
    const char *items[] = {"a", "12", "-1", "300", "-70000", "9000000", "5000000000", "hello world", "0", "13"};
    size_t zn;
    unsigned char *zl = zl_make(items, 10, &zn);
    /* list ziplist (10) */
    struct entry *e = load_blob(RDB_TYPE_LIST_ZIPLIST, zl, zn, err);
    CHECK(e != NULL);
    if (!e)
        printf("%s\n", err);
    if (e) {
        CHECK(canon_cmp_strs(e, items, 10, 0));
        entry_free(e);
    }
    /* quicklist v1 (14): two ziplist nodes */
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_LIST_QUICKLIST);
    rdb_w_len(&o, 2);
    rdb_w_blob(&o, zl, zn);
    rdb_w_blob(&o, zl, zn);
    struct rdb_in in;
    int t;
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    e = rdb_load_value(&in, t, "k", 1, -1);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(obj_len(e), 20);
        entry_free(e);
    }
    rdb_out_free(&o);
    /* hash ziplist (13) and zset ziplist (12): pairs */
    const char *pairs[] = {"f1", "1", "f2", "2", "f3", "3.5"};
    unsigned char *zp = zl_make(pairs, 6, &zn);
    e = load_blob(RDB_TYPE_HASH_ZIPLIST, zp, zn, err);
    CHECK(e != NULL);
    if (e) {
        char ib[32], out[32];
        const char *v;
        size_t vl;
        CHECK_EQ(hash_length(e), 3);
        CHECK(hash_get_field(e, "f2", 2, &v, &vl, ib));
        memcpy(out, v, vl);
        CHECK_STR(out, vl, "2");
        entry_free(e);
    }
    e = load_blob(RDB_TYPE_ZSET_ZIPLIST, zp, zn, err);
    CHECK(e != NULL);
    if (e) {
        double s;
        CHECK_EQ(zset_length(e), 3);
        CHECK(zset_score(e, "f3", 2, &s) && s == 3.5);
        CHECK(zset_score(e, "f1", 2, &s) && s == 1);
        entry_free(e);
    }
    hk_free(zp);
    const char *zbad[] = {"m", "v1"};
    zp = zl_make(zbad, 2, &zn);
    CHECK(load_blob(RDB_TYPE_ZSET_ZIPLIST, zp, zn, err) == NULL);
    CHECK(strstr(err, "ziplist") != NULL);
    hk_free(zp);
    /* zipmap (9): "a" -> "bb", "key" -> "" (with 2 free bytes) */
    unsigned char zm[] = {2, 1, 'a', 2, 0, 'b', 'b', 3, 'k', 'e', 'y', 0, 2, 'x', 'x', 0xFF};
    e = load_blob(RDB_TYPE_HASH_ZIPMAP, zm, sizeof(zm), err);
    CHECK(e != NULL);
    if (e) {
        char ib[32];
        const char *v;
        size_t vl;
        CHECK_EQ(hash_length(e), 2);
        CHECK(hash_get_field(e, "a", 1, &v, &vl, ib) && vl == 2 && !memcmp(v, "bb", 2));
        CHECK(hash_get_field(e, "key", 3, &v, &vl, ib) && vl == 0);
        entry_free(e);
    }
    zm[3] = 9; /* value length past the end */
    CHECK(load_blob(RDB_TYPE_HASH_ZIPMAP, zm, sizeof(zm), err) == NULL);
    /* corrupt ziplists: bad total, bad prevlen, bad encoding */
    zl[0]++;
    CHECK(load_blob(RDB_TYPE_LIST_ZIPLIST, zl, zn, err) == NULL);
    zl[0]--;
    zl[10] = 5;
    CHECK(load_blob(RDB_TYPE_LIST_ZIPLIST, zl, zn, err) == NULL);
    zl[10] = 0;
    zl[11] = 0xFF;
    CHECK(load_blob(RDB_TYPE_LIST_ZIPLIST, zl, zn, err) == NULL);
    hk_free(zl);
    /* intset (11) with its width, and one past set-max-intset-entries */
    unsigned char *is = is_new();
    is = is_add(is, 5, NULL);
    is = is_add(is, -70000, NULL);
    e = load_blob(RDB_TYPE_SET_INTSET, is, is_bytes(is), err);
    CHECK(e && e->enc == ENC_INTSET && obj_len(e) == 2);
    if (e)
        entry_free(e);
    unsigned char *bad = hk_memdup(is, is_bytes(is));
    bad[15] = 0x80; /* 5 becomes very negative: out of order */
    CHECK(load_blob(RDB_TYPE_SET_INTSET, bad, is_bytes(is), err) == NULL);
    CHECK(strstr(err, "Intset") != NULL);
    hk_free(bad);
    for (int i = 0; i < 600; i++)
        is = is_add(is, i * 3, NULL);
    e = load_blob(RDB_TYPE_SET_INTSET, is, is_bytes(is), err);
    CHECK(e && e->enc == ENC_HT && obj_len(e) == 602);
    if (e)
        entry_free(e);
    is_free(is);
    /* old ZSET (3) with text scores, and the linked list (1) */
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_ZSET);
    rdb_w_len(&o, 2);
    rdb_w_str(&o, "a", 1);
    rdb_w_raw(&o, "\x03" "2.5", 4);
    rdb_w_str(&o, "b", 1);
    rdb_w_raw(&o, "\xfe", 1);
    rdb_w_type(&o, RDB_TYPE_LIST);
    rdb_w_len(&o, 2);
    rdb_w_str(&o, "x", 1);
    rdb_w_str(&o, "77", 2);
    rdb_in_init_mem(&in, o.buf, o.len);
    rdb_r_type(&in, &t);
    e = rdb_load_value(&in, t, "k", 1, -1);
    CHECK(e != NULL);
    if (e) {
        double s;
        CHECK(zset_score(e, "b", 1, &s) && isinf(s));
        entry_free(e);
    }
    rdb_r_type(&in, &t);
    e = rdb_load_value(&in, t, "k", 1, -1);
    CHECK(e && e->enc == ENC_LISTPACK && obj_len(e) == 2);
    if (e)
        entry_free(e);
    rdb_out_free(&o);
}

/* Payloads from redis-server 7.0.15 (DUMP, without the version and CRC footer). */
TEST(test_rdb_loads_redis_70_dump_payloads)
{
    struct {
        const char *hex;
        int type;
        uint8_t enc;
        size_t len;
    } cases[] = {
        /* RPUSH l a b 1 2 */
        {"1201021111000000040081610281620201010201ff", OBJ_LIST, ENC_LISTPACK, 4},
        /* SADD si 1 2 3 */
        {"0b0e0200000003000000010002000300", OBJ_SET, ENC_INTSET, 3},
        /* ZADD z 1 a 2.5 b */
        {"1114140000000400816102010181620283322e3504ff", OBJ_ZSET, ENC_LISTPACK, 2},
        /* HSET h f v f2 12 */
        {"1013130000000400816602817602826632030c01ff", OBJ_HASH, ENC_LISTPACK, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n;
        unsigned char *p = hex(cases[i].hex, &n);
        struct rdb_in in;
        int t;
        rdb_in_init_mem(&in, p, n);
        rdb_r_type(&in, &t);
        struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
        CHECK(e != NULL);
        if (!e)
            printf("case %zu: %s\n", i, in.err);
        if (e) {
            CHECK_EQ(e->type, cases[i].type);
            CHECK_EQ(e->enc, cases[i].enc);
            CHECK_EQ(obj_len(e), cases[i].len);
            entry_free(e);
        }
        hk_free(p);
    }
}

/* ============================================================ files === */

static void db_setup(void)
{
    cfg.rdbchecksum = 1;
    if (!ks.dbs[0])
        db_init(16);
    for (int d = 0; d < ks.ndb; d++)
        db_flush(d);
}

static void put(int db, struct entry *e)
{
    db_add(db, key_slot(entry_key(e), entry_klen(e)), e);
}

static struct entry *get(int db, const char *k)
{
    return db_get(db, key_slot(k, strlen(k)), k, strlen(k), LK_NOSTATS | LK_NOTOUCH);
}

static struct entry *rekey(struct entry *e, const char *k)
{
    struct entry *n = entry_dup(e, k, strlen(k), 1);
    entry_free(e);
    return n;
}

static void fill_keyspace(long long now)
{
    char k[32];
    for (int i = 0; i < 1000; i++) {
        int n = sprintf(k, "str:%d", i);
        char v[64];
        int vl = sprintf(v, i % 2 ? "%d" : "value-%d-padding-padding-padding", i);
        put(0, entry_new_string(k, (size_t)n, v, (size_t)vl, i % 10 == 0 ? now + 3600000 : -1));
    }
    put(0, entry_new_string("gone", 4, "x", 1, now - 1000)); /* expired: not saved back */
    put(3, rekey(mk_list(3000, 20), "list"));
    put(3, rekey(mk_set(50, 0, 5), "set"));
    put(3, rekey(mk_zset(300, 8), "zset"));
    put(5, rekey(mk_hash(40, 8, 1, now), "hash"));
    put(5, rekey(mk_hash(400, 8, 0, now), "bighash"));
}

static uint64_t keyspace_sig(void)
{
    uint64_t h = 0;
    const char *keys[] = {"list", "set", "zset"};
    for (int i = 0; i < 3; i++) {
        size_t c;
        struct entry *e = get(3, keys[i]);
        h = h * 31 + (e ? canon_of(e, &c) : 1);
    }
    const char *hk[] = {"hash", "bighash"};
    for (int i = 0; i < 2; i++) {
        size_t c;
        struct entry *e = get(5, hk[i]);
        h = h * 31 + (e ? canon_of(e, &c) : 1);
    }
    return h;
}

TEST(test_rdb_file_save_and_load_round_trip)
{
    long long now = time_ms();
    db_cmd_time_ms = 0;
    db_setup();
    fill_keyspace(now);
    uint64_t sig = keyspace_sig();
    for (int ver = 10; ver <= 12; ver++) {
        struct rdb_save_opts opt = {ver, ver == 11, 1, 0, 0};
        struct rdb_out o;
        rdb_out_init_mem(&o);
        CHECK_EQ(rdb_save(&o, &opt), 0);
        char hdr[10];
        snprintf(hdr, sizeof(hdr), "REDIS%04d", ver);
        CHECK(memcmp(o.buf, hdr, 9) == 0);
        /* aux fields as Redis writes them: redis-ver, then redis-bits "64" int-encoded */
        CHECK(memcmp(o.buf + 9, "\xfa\x09redis-ver\x05" "7.2.4\xfa\x0aredis-bits\xc0\x40\xfa\x05" "ctime",
                     1 + 10 + 6 + 1 + 11 + 2 + 1 + 6) == 0);
        CHECK_EQ(o.buf[o.len - 9], RDB_OPCODE_EOF);
        db_setup();
        struct rdb_in in;
        struct rdb_load_stats st;
        rdb_in_init_mem(&in, o.buf, o.len);
        CHECK_EQ(rdb_load_in(&in, &st), 0);
        if (in.failed)
            printf("%s\n", in.err);
        CHECK_EQ(st.version, ver);
        CHECK_EQ(st.keys, 1005);
        CHECK_EQ(st.expired, ver == 10 ? 1 : 0); /* the expired key was saved only the first time */
        CHECK_STR(st.redis_ver, strlen(st.redis_ver), "7.2.4");
        CHECK(st.ctime > 0);
        CHECK_EQ(db_size(0), 1000);
        CHECK_EQ(db_expires(0), 100);
        CHECK(entry_expire(get(0, "str:10")) == now + 3600000);
        struct entry *s1 = get(0, "str:1");
        CHECK(s1 && s1->enc == ENC_INT);
        CHECK(keyspace_sig() == sig);
        /* the hash with field TTLs is flagged for the sweeper */
        struct entry *h = get(5, "hash");
        CHECK(h && (h->flags & E_HFE));
        rdb_out_free(&o);
    }
}

TEST(test_rdb_file_corruption_is_refused_with_offset)
{
    long long now = time_ms();
    db_cmd_time_ms = 0;
    db_setup();
    fill_keyspace(now);
    struct rdb_save_opts opt = {11, 1, 1, 0, 0};
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save(&o, &opt), 0);
    struct rdb_in in;
    struct rdb_load_stats st;
    /* truncated anywhere: refused, "truncated", an offset */
    size_t cuts[] = {0, 5, 9, 50, o.len / 2, o.len - 9, o.len - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        db_setup();
        rdb_in_init_mem(&in, o.buf, cuts[i]);
        CHECK_EQ(rdb_load_in(&in, &st), -1);
        CHECK(strstr(in.err, "at offset") != NULL);
    }
    db_setup();
    rdb_in_init_mem(&in, o.buf, o.len / 2);
    rdb_load_in(&in, &st);
    CHECK(strstr(in.err, "truncated") != NULL);
    /* a flipped byte in a value: the checksum catches it */
    unsigned char *c = hk_memdup(o.buf, o.len);
    size_t at = o.len - 200;
    c[at] ^= 0x01;
    db_setup();
    rdb_in_init_mem(&in, c, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), -1);
    CHECK(in.failed);
    char want[64];
    snprintf(want, sizeof(want), "at offset %zu", o.len - 8);
    if (strstr(in.err, "checksum"))
        CHECK(strstr(in.err, want) != NULL);
    /* a bad signature / version */
    c[at] ^= 0x01;
    memcpy(c, "REDIS0013", 9);
    rdb_in_init_mem(&in, c, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), -1);
    CHECK(strstr(in.err, "version") != NULL);
    memcpy(c, "RADIS0011", 9);
    rdb_in_init_mem(&in, c, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), -1);
    CHECK(strstr(in.err, "signature") != NULL);
    /* checksum 0 means "not computed": accepted */
    memcpy(c, o.buf, o.len);
    memset(c + o.len - 8, 0, 8);
    db_setup();
    rdb_in_init_mem(&in, c, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), 0);
    /* a duplicate key */
    db_setup();
    rdb_in_init_mem(&in, o.buf, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), 0);
    rdb_in_init_mem(&in, o.buf, o.len);
    CHECK_EQ(rdb_load_in(&in, &st), -1);
    CHECK(strstr(in.err, "Duplicate key") != NULL);
    /* unless duplicates are allowed (DEBUG RELOAD NOFLUSH): the file's value wins */
    struct entry *s0 = get(0, "str:2");
    CHECK(s0 != NULL);
    db_set(0, key_slot("str:2", 5), entry_new_string("str:2", 5, "changed", 7, -1));
    rdb_in_init_mem(&in, o.buf, o.len);
    in.allow_dup = 1;
    CHECK_EQ(rdb_load_in(&in, &st), 0);
    s0 = get(0, "str:2");
    CHECK(s0 && entry_vlen(s0) == 31 && memcmp(entry_val(s0), "value-2-", 8) == 0);
    CHECK_EQ(db_size(0), 1000);
    hk_free(c);
    rdb_out_free(&o);
}

/* Random corruption of payloads of every kind: refused or loaded, never a
 * crash (run under the sanitizer tier for out-of-bounds reads). */
TEST(test_rdb_random_corruption_never_crashes)
{
    long long now = time_ms();
    db_cmd_time_ms = 0;
    struct entry *vals[] = {
        mk_list(50, 5),        mk_list(2000, 30),  mk_set(10, 1, 0),     mk_set(10, 0, 4),
        mk_set(300, 0, 4),     mk_zset(20, 3),     mk_zset(300, 3),      mk_hash(10, 3, 0, now),
        mk_hash(10, 3, 1, now), mk_hash(300, 3, 1, now), mk_hash(300, 3, 0, now),
        entry_new_string("key", 3, "some string value that is long enough to be compressed compressed", 66, -1),
    };
    int nv = (int)(sizeof(vals) / sizeof(vals[0]));
    int loaded = 0, refused = 0;
    for (int i = 0; i < nv; i++) {
        for (int ver = 10; ver <= 12; ver += 2) {
            struct rdb_out o;
            rdb_out_init_mem(&o);
            o.compress = 1;
            CHECK_EQ(rdb_save_value(&o, vals[i], ver), 0);
            unsigned char *c = hk_malloc(o.len);
            for (int it = 0; it < 400; it++) {
                memcpy(c, o.buf, o.len);
                int flips = 1 + (int)(rnd() % 3);
                for (int f = 0; f < flips; f++)
                    c[rnd() % o.len] = (unsigned char)rnd();
                size_t n = it % 5 == 0 ? rnd() % o.len : o.len;
                struct rdb_in in;
                int t;
                rdb_in_init_mem(&in, c, n);
                in.now_ms = now;
                if (rdb_r_type(&in, &t) < 0 || !rdb_is_object_type(t)) {
                    refused++;
                    continue;
                }
                struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
                if (e) {
                    size_t cnt;
                    canon_of(e, &cnt); /* walk it */
                    entry_free(e);
                    loaded++;
                } else {
                    refused++;
                }
            }
            hk_free(c);
            rdb_out_free(&o);
        }
        entry_free(vals[i]);
    }
    CHECK(refused > 0);
    CHECK(loaded > 0);
}

/* ====================================================== untrusted counts === */

/* Counts no input could hold are refused before anything is sized from
 * them, for every counted type, at 2^40 .. 2^64-1 (2^63 and more used to
 * make the dict presizing loop wrap and spin forever). */
TEST(test_rdb_huge_counts_are_refused_before_allocating)
{
    const int types[] = {RDB_TYPE_SET,       RDB_TYPE_ZSET,          RDB_TYPE_ZSET_2,
                         RDB_TYPE_HASH,      RDB_TYPE_LIST,          RDB_TYPE_LIST_QUICKLIST,
                         RDB_TYPE_LIST_QUICKLIST_2, RDB_TYPE_HASH_METADATA, RDB_TYPE_STREAM_LISTPACKS_2};
    const uint64_t counts[] = {1ULL << 40, 1ULL << 62, 1ULL << 63, (1ULL << 63) + 1, UINT64_MAX, 1000};
    db_setup();
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
            struct rdb_out o;
            rdb_out_init_mem(&o);
            rdb_w_type(&o, (unsigned char)types[i]);
            if (types[i] == RDB_TYPE_HASH_METADATA)
                rdb_w_millis(&o, 1LL << 40);
            rdb_w_len(&o, counts[k]);
            rdb_w_str(&o, "a", 1);
            rdb_w_str(&o, "b", 1);
            struct rdb_in in;
            int t;
            rdb_in_init_mem(&in, o.buf, o.len);
            rdb_r_type(&in, &t);
            long long t0 = mono_us();
            struct entry *e = rdb_load_value(&in, t, "k", 1, -1);
            long long us = mono_us() - t0;
            CHECK(e == NULL);
            CHECK(in.failed);
            CHECK(strstr(in.err, "truncated") != NULL);
            CHECK(us < 500000);
            rdb_out_free(&o);
        }
    }
}

TEST(test_rdb_count_and_presize_helpers)
{
    unsigned char buf[64] = {0};
    struct rdb_in in;
    uint64_t n;
    /* 20 bytes after a 1-byte count of 20: fits with minsz 1, not with 2 */
    buf[0] = 20;
    rdb_in_init_mem(&in, buf, 21);
    CHECK_EQ(rdb_r_count(&in, &n, 1, "x"), 0);
    CHECK_EQ(n, 20);
    CHECK_EQ(rdb_in_left(&in), 20);
    CHECK_EQ(rdb_presize(&in, 5), 5);
    CHECK_EQ(rdb_presize(&in, 1000), 20);
    CHECK_EQ(rdb_presize(&in, UINT64_MAX), 20);
    rdb_in_init_mem(&in, buf, 21);
    CHECK_EQ(rdb_r_count(&in, &n, 2, "x"), -1);
    CHECK(in.failed);
    /* LZF: an original length beyond 133x the compressed one */
    unsigned char lz[] = {0xC3, 0x03, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0x01, 'a', 'b'};
    size_t l;
    rdb_in_init_mem(&in, lz, sizeof(lz));
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(strstr(in.err, "LZF") != NULL);
    /* a raw string longer than the input */
    unsigned char rs[] = {0x81, 0, 0, 1, 0, 0, 0, 0, 0, 'a'};
    rdb_in_init_mem(&in, rs, sizeof(rs));
    CHECK(rdb_r_str(&in, &l) == NULL);
    CHECK(strstr(in.err, "truncated") != NULL);
}
