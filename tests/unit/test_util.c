/* test_util.c - unit tests for src/base/util.c: canonical integer parsing,
 * number formatting, glob matching, cluster key slots, CRC16 and hash64. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "test.h"

static int ll_ok(const char *s, long long *out)
{
    return str_to_ll(s, strlen(s), out);
}

TEST(test_util_str_to_ll_accepts_canonical)
{
    long long v = 12345;
    CHECK(ll_ok("0", &v));
    CHECK_EQ(v, 0);
    CHECK(ll_ok("1", &v));
    CHECK_EQ(v, 1);
    CHECK(ll_ok("-1", &v));
    CHECK_EQ(v, -1);
    CHECK(ll_ok("1234567890", &v));
    CHECK_EQ(v, 1234567890LL);
    CHECK(ll_ok("-987654321", &v));
    CHECK_EQ(v, -987654321LL);
}

TEST(test_util_str_to_ll_rejects_noncanonical)
{
    static const char *bad[] = {"", "01", "00", "-0", "-01", "+1", " 1", "1 ", "-",
                                "1a", "a1", "0x10", "1.0", "1e3", "--1", "\t1"};
    long long v = 777;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (ll_ok(bad[i], &v))
            test_fail(__FILE__, __LINE__, "str_to_ll accepted \"%s\"", bad[i]);
    }
    CHECK_EQ(v, 777); /* untouched on failure */
    /* Only len bytes are looked at; an embedded NUL is not a digit. */
    CHECK(!str_to_ll("1\0002", 3, &v));
    CHECK(str_to_ll("12xyz", 2, &v));
    CHECK_EQ(v, 12);
}

TEST(test_util_str_to_ll_limits)
{
    long long v = 0;
    CHECK(ll_ok("9223372036854775807", &v));
    CHECK_EQ(v, LLONG_MAX);
    CHECK(ll_ok("-9223372036854775808", &v));
    CHECK(v == LLONG_MIN);
    CHECK(!ll_ok("9223372036854775808", &v));   /* LLONG_MAX + 1 */
    CHECK(!ll_ok("-9223372036854775809", &v));  /* LLONG_MIN - 1 */
    CHECK(!ll_ok("18446744073709551615", &v));  /* ULLONG_MAX */
    CHECK(!ll_ok("18446744073709551616", &v));  /* ULLONG_MAX + 1 */
    CHECK(!ll_ok("99999999999999999999", &v));
    CHECK(!ll_ok("100000000000000000000", &v));
    CHECK(!ll_ok("-100000000000000000000", &v));
}

/* Doubles at the edges: "inf" spelt out is accepted, a denormal is kept,
 * underflow to zero, NaN and padding never pass.  (An overflowing literal
 * such as 1e400 reads as inf here, as strtod gives it; ZADD's own score
 * parser refuses it as Redis does: test_overflow.py.) */
TEST(test_util_str_to_d_edges)
{
    static const char *bad[] = {"1e-400", "nan", "NaN", "-nan", " 1", "1 ", "", "1x", "--1"};
    static const char *good[] = {"inf", "-inf", "+inf", "infinity", "-Infinity", "4.9e-324", "0x10", "1e308", "-0"};
    double d;
    long double ld;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (str_to_d(bad[i], strlen(bad[i]), &d))
            test_fail(__FILE__, __LINE__, "str_to_d accepted \"%s\"", bad[i]);
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (!str_to_d(good[i], strlen(good[i]), &d))
            test_fail(__FILE__, __LINE__, "str_to_d refused \"%s\"", good[i]);
    }
    CHECK(str_to_d("0x10", 4, &d) && d == 16.0);
    CHECK(str_to_d("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(str_to_d("1e400", 5, &d) && isinf(d) && d > 0);
    /* long double: 1e400 fits, 1e5000 does not; NaN never. */
    CHECK(str_to_ld("1e400", 5, &ld) && !isinf(ld));
    CHECK(!str_to_ld("1e5000", 6, &ld));
    CHECK(!str_to_ld("1e-5000", 7, &ld));
    CHECK(!str_to_ld("nan", 3, &ld));
}

TEST(test_util_ll_to_str_round_trip)
{
    static const long long fixed[] = {0, 1, -1, 9, 10, -10, 99, 100, 1000000007LL,
                                      LLONG_MAX, LLONG_MIN, LLONG_MAX - 1, LLONG_MIN + 1};
    char buf[32], ref[32];
    long long back;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        int n = ll_to_str(buf, fixed[i]);
        snprintf(ref, sizeof(ref), "%lld", fixed[i]);
        CHECK_STR(buf, (size_t)n, ref);
        CHECK(str_to_ll(buf, (size_t)n, &back) && back == fixed[i]);
    }
    uint64_t x = 0x853c49e6748fea9bULL;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long long v = (long long)(x >> (x & 63)); /* all magnitudes */
        if (x & 64)
            v = -v;
        int n = ll_to_str(buf, v);
        snprintf(ref, sizeof(ref), "%lld", v);
        if (n != (int)strlen(ref) || memcmp(buf, ref, (size_t)n) != 0) {
            test_fail(__FILE__, __LINE__, "ll_to_str(%lld) wrong", v);
            break;
        }
        if (!str_to_ll(buf, (size_t)n, &back) || back != v) {
            test_fail(__FILE__, __LINE__, "str_to_ll(ll_to_str(%lld)) wrong", v);
            break;
        }
    }
    int n = ull_to_str(buf, ULLONG_MAX);
    CHECK_STR(buf, (size_t)n, "18446744073709551615");
    /* Every value below 100000 (each branch of the digit-pair writer),
     * and each side of every power of ten up to 10^19. */
    for (unsigned long long u = 0; u < 100000; u++) {
        n = ull_to_str(buf, u);
        snprintf(ref, sizeof(ref), "%llu", u);
        if (n != (int)strlen(ref) || memcmp(buf, ref, (size_t)n) != 0) {
            test_fail(__FILE__, __LINE__, "ull_to_str(%llu) wrong", u);
            break;
        }
    }
    for (unsigned long long p = 10;; p *= 10) {
        for (unsigned long long u = p - 2; u <= p + 2; u++) {
            n = ull_to_str(buf, u);
            snprintf(ref, sizeof(ref), "%llu", u);
            CHECK_STR(buf, (size_t)n, ref);
        }
        if (p > ULLONG_MAX / 10)
            break;
    }
}

TEST(test_util_ld_to_str_human)
{
    char buf[128];
    int n;
    n = ld_to_str_human(buf, sizeof(buf), 0.1L + 0.2L);
    CHECK_STR(buf, (size_t)n, "0.3");
    n = ld_to_str_human(buf, sizeof(buf), 1e20L);
    CHECK_STR(buf, (size_t)n, "100000000000000000000");
    n = ld_to_str_human(buf, sizeof(buf), 10.5L);
    CHECK_STR(buf, (size_t)n, "10.5");
    n = ld_to_str_human(buf, sizeof(buf), 3.0L);
    CHECK_STR(buf, (size_t)n, "3");
    n = ld_to_str_human(buf, sizeof(buf), 0.0L);
    CHECK_STR(buf, (size_t)n, "0");
    n = ld_to_str_human(buf, sizeof(buf), -0.0L);
    CHECK_STR(buf, (size_t)n, "0");
    n = ld_to_str_human(buf, sizeof(buf), -2.25L);
    CHECK_STR(buf, (size_t)n, "-2.25");
    n = ld_to_str_human(buf, sizeof(buf), 5000.0L);
    CHECK_STR(buf, (size_t)n, "5000"); /* zeros before the point stay */
    n = ld_to_str_human(buf, sizeof(buf), HUGE_VALL);
    CHECK_STR(buf, (size_t)n, "inf");
    /* No exponent and no trailing zero, whatever the value. */
    static const long double vals[] = {1e-5L, 123456.789L, 1e15L, 3.14159L, -1e10L, 0.5L};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        n = ld_to_str_human(buf, sizeof(buf), vals[i]);
        CHECK(n > 0 && (size_t)n == strlen(buf));
        CHECK(strchr(buf, 'e') == NULL);
        if (strchr(buf, '.'))
            CHECK(buf[n - 1] != '0' && buf[n - 1] != '.');
        CHECK(strtold(buf, NULL) - vals[i] < 1e-12L && vals[i] - strtold(buf, NULL) < 1e-12L);
    }
}

static int gm(const char *pat, const char *s)
{
    return glob_match(pat, strlen(pat), s, strlen(s), 0);
}

TEST(test_util_glob_star_and_question)
{
    CHECK(gm("*", ""));
    CHECK(gm("*", "anything"));
    CHECK(gm("**", "x"));
    CHECK(gm("", ""));
    CHECK(!gm("", "a"));
    CHECK(gm("h*llo", "hllo"));
    CHECK(gm("h*llo", "heeeello"));
    CHECK(!gm("h*llo", "hellox"));
    CHECK(gm("*llo", "hello"));
    CHECK(gm("he*", "hello"));
    CHECK(gm("user:*:name", "user:1000:name"));
    CHECK(!gm("user:*:name", "user:1000:age"));
    CHECK(gm("h?llo", "hello"));
    CHECK(gm("h?llo", "hallo"));
    CHECK(!gm("h?llo", "hllo"));
    CHECK(!gm("h?llo", "heello"));
    CHECK(gm("???", "abc"));
    CHECK(!gm("???", "ab"));
    CHECK(gm("*?", "a"));
    CHECK(!gm("*?", ""));
    CHECK(gm("a*b*c", "aXXbYYc"));
    CHECK(gm("a*b*c", "abcbc"));
    CHECK(!gm("a*b*c", "acb"));
}

TEST(test_util_glob_classes_ranges_negation)
{
    CHECK(gm("h[ae]llo", "hello"));
    CHECK(gm("h[ae]llo", "hallo"));
    CHECK(!gm("h[ae]llo", "hillo"));
    CHECK(gm("h[^e]llo", "hallo"));
    CHECK(gm("h[^e]llo", "hbllo"));
    CHECK(!gm("h[^e]llo", "hello"));
    CHECK(gm("h[a-b]llo", "hallo"));
    CHECK(gm("h[a-b]llo", "hbllo"));
    CHECK(!gm("h[a-b]llo", "hcllo"));
    CHECK(gm("[0-9][0-9]", "42"));
    CHECK(!gm("[0-9][0-9]", "4x"));
    CHECK(gm("[z-a]", "m")); /* reversed range, as Redis */
    CHECK(gm("[^0-9]*", "x123"));
    CHECK(!gm("[^0-9]*", "1abc"));
    CHECK(gm("[abc0-9]", "7"));
    CHECK(gm("[abc0-9]", "b"));
    CHECK(!gm("[abc0-9]", "d"));
    CHECK(!gm("[a]", ""));
}

TEST(test_util_glob_escapes)
{
    CHECK(gm("\\*", "*"));
    CHECK(!gm("\\*", "x"));
    CHECK(gm("a\\?b", "a?b"));
    CHECK(!gm("a\\?b", "axb"));
    CHECK(gm("\\[x\\]", "[x]"));
    CHECK(gm("[\\]]", "]"));
    CHECK(gm("[\\^a]", "^"));
    CHECK(gm("\\\\", "\\"));
    CHECK(gm("*\\*", "abc*"));
    CHECK(!gm("*\\*", "abc"));
    CHECK(gm("\\a", "a"));
}

TEST(test_util_glob_nocase)
{
    CHECK(glob_match("HeLLo", 5, "hello", 5, 1));
    CHECK(!glob_match("HeLLo", 5, "hello", 5, 0));
    CHECK(glob_match("H[A-C]*", 7, "hbx", 3, 1));
    CHECK(glob_match("[abc]", 5, "B", 1, 1));
    CHECK(!glob_match("[abc]", 5, "B", 1, 0));
    CHECK(glob_match("maxmemory*", 10, "MAXMEMORY-policy", 16, 1));
}

TEST(test_util_glob_binary_lengths)
{
    /* Lengths, not NULs, bound both strings. */
    CHECK(glob_match("a*", 2, "a\0b", 3, 0));
    CHECK(glob_match("a?b", 3, "a\0b", 3, 0));
    CHECK(!glob_match("abc", 2, "abc", 3, 0));
    CHECK(glob_match("abc", 2, "abX", 2, 0));
}

TEST(test_util_glob_pathological_is_fast)
{
    /* "a*a*...*b" against "aaaa...": exponential for naive recursion. */
    char pat[256], s[20001];
    size_t pl = 0;
    for (int i = 0; i < 60; i++) {
        pat[pl++] = 'a';
        pat[pl++] = '*';
    }
    pat[pl++] = 'b';
    memset(s, 'a', sizeof(s) - 1);
    s[sizeof(s) - 1] = '\0';
    long long t0 = mono_us();
    CHECK(!glob_match(pat, pl, s, 20000, 0));
    CHECK(!glob_match(pat, pl, s, 20000, 1));
    s[19999] = 'b';
    CHECK(glob_match(pat, pl, s, 20000, 0));
    /* The Redis test-suite shape. */
    const char *p2 = "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    CHECK(!gm(p2, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    long long us = mono_us() - t0;
    if (us > 2000000)
        test_fail(__FILE__, __LINE__, "pathological globs took %lld us", us);
}

TEST(test_util_crc16)
{
    CHECK_EQ(crc16("123456789", 9), 0x31C3);
    CHECK_EQ(crc16("", 0), 0);
}

static unsigned ks(const char *k)
{
    return key_slot(k, strlen(k));
}

TEST(test_util_key_slot)
{
    CHECK_EQ(ks("foo"), 12182);
    CHECK_EQ(ks("bar"), 5061);
    CHECK_EQ(ks("123456789"), 0x31C3 & 16383);
    CHECK_EQ(ks("{user1000}.following"), ks("{user1000}.followers"));
    CHECK_EQ(ks("{user1000}.following"), ks("user1000"));
    CHECK_EQ(ks("x{foo}y"), 12182);
    /* Empty first tag: the whole key is hashed. */
    CHECK_EQ(ks("foo{}{bar}"), crc16("foo{}{bar}", 10) & 16383);
    CHECK(ks("foo{}{bar}") != ks("bar"));
    /* The tag runs to the first '}' after the first '{'. */
    CHECK_EQ(ks("foo{{bar}}zap"), crc16("{bar", 4) & 16383);
    /* No closing brace: whole key. */
    CHECK_EQ(ks("foo{bar"), crc16("foo{bar", 7) & 16383);
    CHECK_EQ(ks("{"), crc16("{", 1) & 16383);
    CHECK_EQ(ks("}{"), crc16("}{", 2) & 16383);
    CHECK_EQ(ks(""), 0);
    for (int i = 0; i < 1000; i++) {
        char k[32];
        int n = snprintf(k, sizeof(k), "key:%d", i);
        CHECK(key_slot(k, (size_t)n) < 16384);
    }
}

TEST(test_util_hash64_deterministic)
{
    const char *k = "the quick brown fox jumps over the lazy dog";
    for (size_t len = 0; len <= strlen(k); len++) {
        uint64_t a = hash64(k, len, 42), b = hash64(k, len, 42);
        CHECK(a == b);
        CHECK(hash64(k, len, 42) != hash64(k, len, 43));
        if (len > 0)
            CHECK(hash64(k, len, 42) != hash64(k, len - 1, 42));
    }
    /* Only the bytes in [key, key+len) count, wherever they are. */
    char a[64], b[80];
    memcpy(a, k, 40);
    memcpy(b + 7, k, 40);
    b[47] = 'Z';
    a[40] = 'Q';
    for (size_t len = 0; len <= 40; len++)
        CHECK(hash64(a, len, 7) == hash64(b + 7, len, 7));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int popcount64(uint64_t x)
{
    return __builtin_popcountll(x);
}

TEST(test_util_hash64_spread)
{
    enum { N = 200000, BUCKETS = 1024 };
    static unsigned lo[BUCKETS], hi[BUCKETS];
    uint64_t *all = malloc(sizeof(uint64_t) * N);
    char k[32];
    memset(lo, 0, sizeof(lo));
    memset(hi, 0, sizeof(hi));
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "key:%d", i);
        uint64_t h = hash64(k, (size_t)n, 0x1234);
        all[i] = h;
        lo[h % BUCKETS]++;
        hi[h >> 54]++;
    }
    /* Expected 195 per bucket; a fair hash stays well within +-35%. */
    unsigned lmin = N, lmax = 0, hmin = N, hmax = 0;
    for (int b = 0; b < BUCKETS; b++) {
        lmin = lo[b] < lmin ? lo[b] : lmin;
        lmax = lo[b] > lmax ? lo[b] : lmax;
        hmin = hi[b] < hmin ? hi[b] : hmin;
        hmax = hi[b] > hmax ? hi[b] : hmax;
    }
    CHECK(lmin > 127 && lmax < 263);
    CHECK(hmin > 127 && hmax < 263);
    /* No two of 200k keys collide on 64 bits. */
    qsort(all, N, sizeof(uint64_t), cmp_u64);
    int dup = 0;
    for (int i = 1; i < N; i++)
        dup |= all[i] == all[i - 1];
    CHECK(!dup);
    free(all);
    /* Avalanche: flipping one input bit flips about half the output. */
    long total = 0, samples = 0;
    int worst_lo = 64, worst_hi = 0;
    for (int i = 0; i < 200; i++) {
        unsigned char buf[24];
        for (size_t j = 0; j < sizeof(buf); j++)
            buf[j] = (unsigned char)(i * 31 + j * 7);
        for (size_t len = 1; len <= sizeof(buf); len += 5) {
            uint64_t h0 = hash64(buf, len, 99);
            for (size_t bit = 0; bit < len * 8; bit++) {
                buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
                int d = popcount64(h0 ^ hash64(buf, len, 99));
                buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
                total += d;
                samples++;
                worst_lo = d < worst_lo ? d : worst_lo;
                worst_hi = d > worst_hi ? d : worst_hi;
            }
        }
    }
    double avg = (double)total / (double)samples;
    if (avg < 30.0 || avg > 34.0)
        test_fail(__FILE__, __LINE__, "avalanche average %.2f bits, want ~32", avg);
    CHECK(worst_lo >= 8);
}

/* The command clock (clock_now_us) against the system clock: extrapolated
 * from its base within 1 ms, read again after that.  Each reading is
 * bracketed by system clock reads, so that the thread being preempted
 * between them (a loaded machine, a sanitizer build) widens the bounds
 * instead of failing the test. */
TEST(test_util_command_clock_tracks_wall_clock)
{
    clock_init();
    if (clock_tsc_mul) {
        double ticks_per_us = 4294967296.0 / (double)clock_tsc_mul;
        CHECK(ticks_per_us >= 100.0 && ticks_per_us <= 100000.0);
        CHECK(clock_tsc_max > 0);
    }
    long long s0 = time_us(), base = clock_refresh_us(), s1 = time_us();
    CHECK(base >= s0 && base <= s1);
    /* Each read between the system clock's reads around it (20 us for
     * the rate's error and rounding), and never going back by more. */
    long long prev = base, worst = 0;
    for (int i = 0; i < 2000; i++) {
        long long a = time_us(), now = clock_now_us(), b = time_us();
        long long d = now < a ? a - now : now > b ? now - b : 0;
        worst = d > worst ? d : worst;
        CHECK(now + 20 >= prev);
        prev = now;
    }
    if (worst > 20)
        test_fail(__FILE__, __LINE__, "clock_now_us off the system clock by %lld us", worst);
    /* A busy 400 us: the extrapolated clock moves by as much. */
    long long ma = mono_us(), c0 = clock_refresh_us(), mb = mono_us();
    while (mono_us() - mb < 400)
        ;
    long long mc = mono_us(), c1 = clock_now_us(), md = mono_us();
    if (c1 - c0 < (mc - mb) - 20 || c1 - c0 > (md - ma) + 20)
        test_fail(__FILE__, __LINE__, "command clock moved %lld us over %lld-%lld us", c1 - c0, mc - mb, md - ma);
    /* Past 1 ms the system clock is read again (a new base). */
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
    long long later = clock_now_us();
    CHECK(clock_base.wall_us == later);
    CHECK(later - c1 >= 5000 && later - c1 < 1000000);
}
