/* test_hll.c - the HyperLogLog value layer (types/hll.c) without a server:
 * bytes and estimates against values taken from redis-server 7.0.15 (same
 * hash, same sparse updates, same estimator), dense register packing,
 * sparse -> dense promotion by value and by size, the union, and corrupt
 * bodies rejected without reading past their end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "test.h"
#include "types/hll.h"

static int grow(struct hll_buf *b, size_t need)
{
    b->p = hk_realloc(b->p, need);
    b->cap = need;
    return 0;
}

static struct hll_buf new_hll(void)
{
    struct hll_buf b = {hk_malloc(HLL_EMPTY_SIZE), HLL_EMPTY_SIZE, HLL_EMPTY_SIZE, grow, NULL};
    hll_init_empty(b.p);
    return b;
}

/* Add the decimal strings first..last-1. */
static void add_range(struct hll_buf *b, long first, long last)
{
    char s[32];
    for (long i = first; i < last; i++) {
        int n = snprintf(s, sizeof(s), "%ld", i);
        CHECK(hll_add(b, s, (size_t)n) >= 0);
    }
}

static void unhex(const char *h, uint8_t *out, size_t *n)
{
    *n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned x;
        sscanf(h, "%2x", &x);
        out[(*n)++] = (uint8_t)x;
    }
}

TEST(hll_empty_value)
{
    struct hll_buf b = new_hll();
    static const uint8_t want[] = {'H', 'Y', 'L', 'L', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff};
    CHECK_MEM(b.p, b.len, want, sizeof(want));
    CHECK(hll_is_valid(b.p, b.len));
    int invalid = 0;
    CHECK_EQ(hll_count(b.p, b.len, &invalid), 0);
    CHECK_EQ(invalid, 0);
    uint64_t card = 99;
    CHECK(hll_cache_get(b.p, &card)); /* 0, valid: exactly an empty HLL */
    CHECK_EQ(card, 0);
    hk_free(b.p);
}

TEST(hll_bytes_match_redis)
{
    /* PFADD h foo bar hello on redis-server 7.0.15, then GET h. */
    uint8_t want[64];
    size_t wn;
    unhex("48594c4c0100000000000000000000805cb390474a8043158058e7", want, &wn);
    struct hll_buf b = new_hll();
    int changed = 0;
    changed += hll_add(&b, "foo", 3);
    changed += hll_add(&b, "bar", 3);
    changed += hll_add(&b, "hello", 5);
    CHECK_EQ(changed, 3);
    hll_cache_invalidate(b.p);
    CHECK_MEM(b.p, b.len, want, wn);
    char *text;
    size_t tn = hll_sparse_describe(b.p, b.len, &text);
    const char *wtext = "Z:7348 v:5,1 Z:1867 v:1,1 Z:790 v:1,1 Z:6376";
    CHECK_MEM(text, tn, wtext, strlen(wtext));
    hk_free(text);
    CHECK_EQ(hll_add(&b, "foo", 3), 0);

    /* PFADD a b c, PFCOUNT (the cache holds 3). */
    unhex("48594c4c01000000030000000000000060f38050b1844bfb80425a", want, &wn);
    struct hll_buf c = new_hll();
    hll_add(&c, "a", 1);
    hll_add(&c, "b", 1);
    hll_add(&c, "c", 1);
    hll_cache_invalidate(c.p);
    uint64_t card;
    CHECK(!hll_cache_get(c.p, &card));
    card = hll_count(c.p, c.len, NULL);
    CHECK_EQ(card, 3);
    hll_cache_set(c.p, card);
    CHECK_MEM(c.p, c.len, want, wn);
    hk_free(b.p);
    hk_free(c.p);
}

TEST(hll_estimates_match_redis)
{
    /* n decimal strings 0..n-1: redis-server's PFCOUNT, STRLEN, encoding. */
    static const struct {
        long n;
        uint64_t count;
        size_t len;
        int enc;
    } ref[] = {{1, 1, 21, HLL_SPARSE},       {10, 10, 48, HLL_SPARSE},        {100, 100, 287, HLL_SPARSE},
               {1000, 1001, 1923, HLL_SPARSE}, {10000, 9987, 12304, HLL_DENSE}, {100000, 99565, 12304, HLL_DENSE}};
    for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
        struct hll_buf b = new_hll();
        add_range(&b, 0, ref[i].n);
        CHECK_EQ(hll_count(b.p, b.len, NULL), ref[i].count);
        CHECK_EQ(b.len, ref[i].len);
        CHECK_EQ(hll_encoding(b.p), ref[i].enc);
        hk_free(b.p);
    }
}

TEST(hll_murmur_pattern)
{
    /* Blocks are read little endian and the tail byte by byte: every
     * length 0..17 hashes differently and deterministically. */
    const char *s = "0123456789abcdefgh";
    uint64_t seen[18];
    for (size_t n = 0; n < 18; n++) {
        seen[n] = hll_murmur64a(s, n, 0xadc83b19U);
        CHECK_EQ(seen[n], hll_murmur64a(s, n, 0xadc83b19U));
        for (size_t m = 0; m < n; m++)
            CHECK(seen[m] != seen[n]);
    }
    long reg;
    int run = hll_pattern("foo", 3, &reg);
    CHECK(reg >= 0 && reg < HLL_REGISTERS);
    CHECK(run >= 1 && run <= HLL_Q + 1);
}

TEST(hll_dense_registers)
{
    uint8_t *regs = hk_calloc(HLL_DENSE_SIZE - HLL_HDR_SIZE);
    uint8_t ref[HLL_REGISTERS];
    unsigned x = 12345;
    for (int round = 0; round < 3; round++) {
        for (long r = 0; r < HLL_REGISTERS; r++) {
            x = x * 1103515245u + 12345u;
            ref[r] = (uint8_t)((x >> 16) & 63);
            hll_dense_set(regs, r, ref[r]);
        }
        for (long r = 0; r < HLL_REGISTERS; r++)
            if (hll_dense_get(regs, r) != ref[r]) {
                CHECK_EQ(hll_dense_get(regs, r), ref[r]);
                break;
            }
    }
    hk_free(regs);
}

TEST(hll_promotion)
{
    long long saved = hll_sparse_max_bytes;
    /* By value: a register above 32 cannot be sparse. */
    struct hll_buf b = new_hll();
    CHECK_EQ(hll_set(&b, 100, 32), 1);
    CHECK_EQ(hll_encoding(b.p), HLL_SPARSE);
    CHECK_EQ(hll_set(&b, 200, 33), 1);
    CHECK_EQ(hll_encoding(b.p), HLL_DENSE);
    CHECK_EQ(b.len, HLL_DENSE_SIZE);
    CHECK_EQ(hll_dense_get(b.p + HLL_HDR_SIZE, 100), 32);
    CHECK_EQ(hll_dense_get(b.p + HLL_HDR_SIZE, 200), 33);
    CHECK_EQ(hll_to_dense(&b), 0);
    hk_free(b.p);

    /* By size: never longer than hll-sparse-max-bytes while sparse. */
    long long limits[] = {30, 100, 500, 3000};
    for (size_t i = 0; i < 4; i++) {
        hll_sparse_max_bytes = limits[i];
        b = new_hll();
        long n = 0;
        while (hll_encoding(b.p) == HLL_SPARSE) {
            CHECK((long long)b.len <= limits[i] || n == 0);
            add_range(&b, n, n + 1);
            n++;
        }
        CHECK_EQ(b.len, HLL_DENSE_SIZE);
        /* The dense copy counts what the sparse one had. */
        struct hll_buf d = new_hll();
        hll_sparse_max_bytes = 1 << 30;
        add_range(&d, 0, n);
        CHECK_EQ(hll_count(b.p, b.len, NULL), hll_count(d.p, d.len, NULL));
        hk_free(b.p);
        hk_free(d.p);
    }
    hll_sparse_max_bytes = saved;
}

TEST(hll_sparse_dense_agree)
{
    unsigned x = 7;
    for (int round = 0; round < TEST_SCALE(200); round++) {
        struct hll_buf s = new_hll(), d = new_hll();
        CHECK_EQ(hll_to_dense(&d), 1);
        x = x * 1103515245u + 12345u;
        long n = (x >> 16) % 200;
        add_range(&s, round * 1000, round * 1000 + n);
        add_range(&d, round * 1000, round * 1000 + n);
        CHECK_EQ(hll_encoding(s.p), HLL_SPARSE);
        CHECK_EQ(hll_count(s.p, s.len, NULL), hll_count(d.p, d.len, NULL));
        /* The union of the two is the same HLL again. */
        uint8_t max[HLL_REGISTERS];
        memset(max, 0, sizeof(max));
        CHECK_EQ(hll_merge(max, s.p, s.len), 0);
        CHECK_EQ(hll_merge(max, d.p, d.len), 0);
        CHECK_EQ(hll_count_registers(max), hll_count(d.p, d.len, NULL));
        hk_free(s.p);
        hk_free(d.p);
    }
}

TEST(hll_union_estimate)
{
    struct hll_buf a = new_hll(), b = new_hll(), all = new_hll();
    add_range(&a, 0, 3000);
    add_range(&b, 2000, 6000);
    add_range(&all, 0, 6000);
    uint8_t max[HLL_REGISTERS];
    memset(max, 0, sizeof(max));
    CHECK_EQ(hll_merge(max, a.p, a.len), 0);
    CHECK_EQ(hll_merge(max, b.p, b.len), 0);
    CHECK_EQ(hll_count_registers(max), hll_count(all.p, all.len, NULL));
    hk_free(a.p);
    hk_free(b.p);
    hk_free(all.p);
}

/* The PFCOUNT union (struct hll_union): the same estimate as hll_merge +
 * hll_count_registers for sparse-only and mixed sparse/dense key sets, and
 * all zeros (nothing touched) after each count or reset. */
static int union_is_empty(const struct hll_union *u)
{
    for (long r = 0; r < HLL_REGISTERS; r++)
        if (u->max[r])
            return 0;
    return u->nt == 0 && u->full == 0;
}

TEST(hll_union_matches_merge)
{
    static struct hll_union u;
    unsigned x = 11;
    for (int round = 0; round < TEST_SCALE(60); round++) {
        struct hll_buf k[6];
        uint8_t max[HLL_REGISTERS];
        memset(max, 0, sizeof(max));
        int nk = 1 + round % 6;
        for (int j = 0; j < nk; j++) {
            k[j] = new_hll();
            x = x * 1103515245u + 12345u;
            long first = (long)(x >> 8) % 5000, n = (long)(x >> 16) % (round % 3 ? 300 : 4000);
            add_range(&k[j], first, first + n);
            if (round % 5 == 4 && j == 0)
                hll_to_dense(&k[j]);
            CHECK_EQ(hll_merge(max, k[j].p, k[j].len), 0);
            CHECK_EQ(hll_union_add(&u, k[j].p, k[j].len), 0);
        }
        CHECK_EQ(hll_union_count(&u), hll_count_registers(max));
        CHECK(union_is_empty(&u));
        for (int j = 0; j < nk; j++)
            hk_free(k[j].p);
    }
    /* Reset after a partial merge (the error path) empties it too. */
    struct hll_buf a = new_hll();
    add_range(&a, 0, 500);
    CHECK_EQ(hll_union_add(&u, a.p, a.len), 0);
    hll_union_reset(&u);
    CHECK(union_is_empty(&u));
    hll_to_dense(&a);
    CHECK_EQ(hll_union_add(&u, a.p, a.len), 0);
    hll_union_reset(&u);
    CHECK(union_is_empty(&u));
    hk_free(a.p);
}

/* A sparse value with body bytes body[0..n-1], in an allocation of exactly
 * that size (ASan catches a read past it). */
static struct hll_buf sparse_of(const uint8_t *body, size_t n)
{
    uint8_t empty[HLL_EMPTY_SIZE];
    struct hll_buf b = {hk_malloc(HLL_HDR_SIZE + n), HLL_HDR_SIZE + n, HLL_HDR_SIZE + n, grow, NULL};
    hll_init_empty(empty);
    memcpy(b.p, empty, HLL_HDR_SIZE);
    memcpy(b.p + HLL_HDR_SIZE, body, n);
    hll_cache_invalidate(b.p);
    return b;
}

TEST(hll_corrupt_rejected)
{
    /* Header checks. */
    uint8_t v[HLL_DENSE_SIZE + 1];
    hll_init_empty(v);
    CHECK(hll_is_valid(v, HLL_EMPTY_SIZE));
    CHECK(!hll_is_valid(v, 15));
    v[4] = 2;
    CHECK(!hll_is_valid(v, HLL_EMPTY_SIZE));
    v[4] = HLL_DENSE;
    CHECK(!hll_is_valid(v, HLL_EMPTY_SIZE));
    CHECK(!hll_is_valid(v, HLL_DENSE_SIZE + 1));
    CHECK(hll_is_valid(v, HLL_DENSE_SIZE));
    v[0] = 'h';
    CHECK(!hll_is_valid(v, HLL_DENSE_SIZE));

    static const struct {
        uint8_t body[8];
        size_t n;
    } bad[] = {
        {{0}, 0},                      /* no registers at all */
        {{0x7f, 0xff, 0x00}, 3},       /* 16384 + 1 */
        {{0x7f, 0xfe}, 2},             /* 16383 */
        {{0x7f}, 1},                   /* half an XZERO: 16129 */
        {{0x7f, 0xfe, 0x80}, 3},       /* 16383 + VAL 1: fine for a walk, ... */
        {{0x7f, 0xff, 0x7f, 0xff}, 4}, /* 32768 */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hll_buf b = sparse_of(bad[i].body, bad[i].n);
        int invalid = 0;
        hll_count(b.p, b.len, &invalid);
        uint8_t max[HLL_REGISTERS] = {0};
        int merged = hll_merge(max, b.p, b.len);
        static struct hll_union u;
        CHECK_EQ(hll_union_add(&u, b.p, b.len), merged);
        hll_union_reset(&u);
        CHECK(union_is_empty(&u));
        if (i == 4) {
            /* ... 16383 zeros then one VAL is exactly 16384: valid. */
            CHECK_EQ(invalid, 0);
            CHECK_EQ(merged, 0);
        } else {
            CHECK_EQ(invalid, 1);
            CHECK_EQ(merged, -1);
            CHECK_EQ(hll_to_dense(&b), -1);
            CHECK_EQ(hll_encoding(b.p), HLL_SPARSE);
        }
        hk_free(b.p);
    }

    /* A register past the end of a short body: the update fails. */
    uint8_t shortb[] = {0x40, 0x09}; /* XZERO:10 */
    struct hll_buf b = sparse_of(shortb, 2);
    CHECK_EQ(hll_set(&b, 5000, 3), -1);
    CHECK_EQ(hll_set(&b, 5, 3), 1); /* inside: Redis updates it too */
    int invalid = 0;
    hll_count(b.p, b.len, &invalid);
    CHECK_EQ(invalid, 1);
    hk_free(b.p);

    /* Half an XZERO covering the register. */
    uint8_t half[] = {0x7f};
    b = sparse_of(half, 1);
    CHECK_EQ(hll_set(&b, 3, 3), -1);
    char *text;
    size_t tn = hll_sparse_describe(b.p, b.len, &text);
    CHECK_MEM(text, tn, "Z:16129", 7);
    hk_free(text);
    hk_free(b.p);

    /* Random bytes: never a crash nor a read past the end (ASan). */
    unsigned x = 99;
    for (int round = 0; round < TEST_SCALE(3000); round++) {
        uint8_t body[64];
        x = x * 1103515245u + 12345u;
        size_t n = 1 + (x >> 16) % sizeof(body);
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            body[i] = (uint8_t)(x >> 16);
        }
        b = sparse_of(body, n);
        hll_count(b.p, b.len, &invalid);
        uint8_t max[HLL_REGISTERS] = {0};
        hll_merge(max, b.p, b.len);
        hll_add(&b, "x", 1);
        hll_add(&b, "y", 1);
        for (int k = 0; k < 4; k++) {
            x = x * 1103515245u + 12345u;
            hll_set(&b, (long)((x >> 8) % HLL_REGISTERS), (uint8_t)(1 + (x >> 24) % 51));
        }
        if (hll_encoding(b.p) == HLL_SPARSE) {
            char *text;
            hll_sparse_describe(b.p, b.len, &text);
            hk_free(text);
        }
        hll_to_dense(&b);
        hk_free(b.p);
    }
}

TEST(hll_selftest_passes)
{
    char err[128] = "";
    if (TEST_SANITIZER)
        return; /* ten million updates: seconds even unsanitized */
    CHECK_EQ(hll_selftest(err, sizeof(err)), 0);
    if (err[0])
        printf("%s\n", err);
}
