/* test_hist.c - unit tests for hotkv-benchmark's internals
 * (src/tools/benchmark/): the log-linear histogram against exact
 * percentiles of known samples (1..1,000,000 and a sorted random sample,
 * within the 0.1% precision), merging, the Zipf sampler's empirical
 * distribution against the exact one, the uniform and sequential key
 * patterns, the pub/sub send-time stamp and its clock units (a known delay
 * must measure as that many ms, not 1000x off), and the incremental RESP
 * reply parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "tools/benchmark/hist.h"
#include "tools/benchmark/keydist.h"
#include "tools/benchmark/rparse.h"
#include "tools/benchmark/stamp.h"

/* The value at rank ceil(p% * n) of a sorted sample (the histogram's
 * definition). */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double p)
{
    double r = p / 100.0 * (double)n;
    size_t rank = (size_t)r;
    if ((double)rank < r)
        rank++;
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

static const double pcts[] = {0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999};

/* |got - want| <= 0.1% of want, and never below want (highest equivalent). */
static int within(uint64_t got, uint64_t want)
{
    return got >= want && (double)(got - want) <= (double)want * 0.001;
}

TEST(hist_bucket_bounds)
{
    uint64_t vals[] = {0, 1, 2047, 2048, 2049, 4095, 4096, 123456, 999999, 1ull << 30,
                       (1ull << 43) + 12345, HIST_MAX_TRACKABLE};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        uint64_t v = vals[i];
        size_t idx = hist_index(v);
        CHECK(idx < HIST_NBUCKETS);
        CHECK(hist_lowest_equiv(idx) <= v);
        CHECK(hist_highest_equiv(idx) >= v);
        uint64_t width = hist_highest_equiv(idx) - hist_lowest_equiv(idx) + 1;
        CHECK(width == 1 || (double)width <= (double)v / 1000.0);
    }
    /* Buckets tile the range: each starts right after the previous. */
    for (size_t i = 1; i < HIST_NBUCKETS; i++) {
        if (hist_lowest_equiv(i) != hist_highest_equiv(i - 1) + 1) {
            CHECK_EQ(hist_lowest_equiv(i), hist_highest_equiv(i - 1) + 1);
            break;
        }
    }
    CHECK_EQ(hist_highest_equiv(HIST_NBUCKETS - 1), HIST_MAX_TRACKABLE);
}

TEST(hist_one_to_a_million)
{
    struct hist *h = hist_new();
    size_t n = 1000000;
    uint64_t *v = malloc(n * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        v[i] = i + 1;
        hist_record(h, v[i]);
    }
    CHECK_EQ(h->total, n);
    CHECK_EQ(h->min, 1);
    CHECK_EQ(h->max, 1000000);
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        uint64_t got = hist_percentile(h, pcts[i]), want = exact_pct(v, n, pcts[i]);
        if (!within(got, want))
            test_fail(__FILE__, __LINE__, "p%g: got %llu want %llu", pcts[i],
                      (unsigned long long)got, (unsigned long long)want);
    }
    CHECK_EQ(hist_percentile(h, 100), 1000000);
    CHECK(fabs(hist_mean(h) - 500000.5) < 1.0);
    free(v);
    hist_free(h);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

TEST(hist_random_sample_and_merge)
{
    struct bm_rng rng;
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(uint64_t));
    struct hist *all = hist_new(), *a = hist_new(), *b = hist_new();
    bm_rng_seed(&rng, 42);
    for (size_t i = 0; i < n; i++) {
        /* Log-uniform from 1 us to 10 s in ns: a latency-like spread. */
        double e = 3.0 + 7.0 * bm_rng_double(&rng);
        v[i] = (uint64_t)pow(10.0, e);
        hist_record(all, v[i]);
        hist_record(i % 2 ? a : b, v[i]);
    }
    qsort(v, n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        uint64_t got = hist_percentile(all, pcts[i]), want = exact_pct(v, n, pcts[i]);
        if (!within(got, want))
            test_fail(__FILE__, __LINE__, "p%g: got %llu want %llu", pcts[i],
                      (unsigned long long)got, (unsigned long long)want);
    }
    CHECK_EQ(hist_percentile(all, 100), v[n - 1]);
    CHECK_EQ(all->min, v[0]);
    /* Merged per-thread halves equal the whole. */
    hist_merge(a, b);
    CHECK_EQ(a->total, all->total);
    CHECK_EQ(a->min, all->min);
    CHECK_EQ(a->max, all->max);
    CHECK(memcmp(a->counts, all->counts, sizeof(a->counts)) == 0);
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
        CHECK_EQ(hist_percentile(a, pcts[i]), hist_percentile(all, pcts[i]));
    free(v);
    hist_free(all);
    hist_free(a);
    hist_free(b);
}

TEST(hist_edges)
{
    struct hist *h = hist_new();
    CHECK_EQ(hist_percentile(h, 50), 0);
    CHECK(hist_mean(h) == 0.0);
    hist_record(h, 7);
    CHECK_EQ(hist_percentile(h, 0), 7);
    CHECK_EQ(hist_percentile(h, 50), 7);
    CHECK_EQ(hist_percentile(h, 100), 7);
    /* Beyond the tracked range: counted in the last bucket, max exact. */
    uint64_t big = (1ull << 50) + 3;
    hist_record(h, big);
    CHECK_EQ(h->total, 2);
    CHECK_EQ(hist_percentile(h, 100), big);
    CHECK(hist_percentile(h, 99) <= big);
    CHECK(hist_percentile(h, 99) >= HIST_MAX_TRACKABLE / 2);
    hist_record_n(h, 1000, 10);
    CHECK_EQ(h->total, 12);
    CHECK_EQ(hist_percentile(h, 50), 1000);
    hist_reset(h);
    CHECK_EQ(h->total, 0);
    hist_free(h);
}

/* Zipf(s) over 1..n against the exact probabilities. */
static void check_zipf(uint64_t n, double s, size_t draws, double tv_max)
{
    struct bm_zipf z;
    struct bm_rng rng;
    double *p = calloc(n + 1, sizeof(double)), norm = 0, tv = 0;
    uint64_t *cnt = calloc(n + 1, sizeof(uint64_t));
    CHECK_EQ(bm_zipf_init(&z, n, s), 0);
    bm_rng_seed(&rng, 7);
    for (uint64_t k = 1; k <= n; k++)
        norm += p[k] = pow((double)k, -s);
    for (size_t i = 0; i < draws; i++) {
        uint64_t k = bm_zipf_draw(&z, &rng);
        if (k < 1 || k > n) {
            CHECK(k >= 1 && k <= n);
            break;
        }
        cnt[k]++;
    }
    for (uint64_t k = 1; k <= n; k++) {
        double want = p[k] / norm, got = (double)cnt[k] / (double)draws;
        tv += fabs(want - got);
        /* The head of the distribution, each within 3% (relative). */
        if (k <= 5 && fabs(got - want) > 0.03 * want)
            test_fail(__FILE__, __LINE__, "zipf n=%llu s=%g: P(%llu) %.5f, want %.5f",
                      (unsigned long long)n, s, (unsigned long long)k, got, want);
    }
    tv /= 2; /* total variation distance */
    if (tv > tv_max)
        test_fail(__FILE__, __LINE__, "zipf n=%llu s=%g: total variation %.4f > %.4f",
                  (unsigned long long)n, s, tv, tv_max);
    free(p);
    free(cnt);
}

TEST(zipf_distribution)
{
    check_zipf(1000, 0.99, 1000000, 0.02);
    check_zipf(100, 1.0, 500000, 0.02);  /* s = 1 exactly (log branch) */
    check_zipf(50, 1.5, 500000, 0.02);
    check_zipf(10, 0.5, 200000, 0.02);
    check_zipf(1, 0.99, 1000, 0.0);
    struct bm_zipf z;
    CHECK_EQ(bm_zipf_init(&z, 0, 0.99), -1);
    CHECK_EQ(bm_zipf_init(&z, 10, 0), -1);
}

TEST(zipf_large_keyspace)
{
    /* A million keys: rank 1 should be drawn ~ 1/H(n, 0.99) of the time,
     * and every draw in range. */
    struct bm_keygen g;
    uint64_t n = 1000000, hits0 = 0, draws = 2000000;
    double norm = 0;
    for (uint64_t k = 1; k <= n; k++)
        norm += pow((double)k, -0.99);
    CHECK_EQ(bm_keygen_init(&g, KP_ZIPF, n, 0.99, 3, NULL), 0);
    for (uint64_t i = 0; i < draws; i++) {
        uint64_t k = bm_keygen_next(&g);
        if (k >= n) {
            CHECK(k < n);
            break;
        }
        hits0 += k == 0;
    }
    double want = 1.0 / norm, got = (double)hits0 / (double)draws;
    if (fabs(got - want) > 0.03 * want)
        test_fail(__FILE__, __LINE__, "P(index 0) %.5f want %.5f", got, want);
}

TEST(keygen_uniform_and_sequential)
{
    struct bm_keygen g;
    _Atomic uint64_t seq = 0;
    uint64_t cnt[10] = {0};
    CHECK_EQ(bm_keygen_init(&g, KP_UNIFORM, 10, 0, 1, NULL), 0);
    for (int i = 0; i < 100000; i++) {
        uint64_t k = bm_keygen_next(&g);
        CHECK(k < 10);
        if (k < 10)
            cnt[k]++;
    }
    for (int i = 0; i < 10; i++)
        CHECK(cnt[i] > 9500 && cnt[i] < 10500);
    CHECK_EQ(bm_keygen_init(&g, KP_SEQUENTIAL, 5000, 0, 1, &seq), 0);
    for (uint64_t i = 0; i < 12000; i++)
        CHECK_EQ(bm_keygen_next(&g), i % 5000);
    CHECK_EQ(bm_keygen_init(&g, KP_SEQUENTIAL, 10, 0, 1, NULL), -1);
}

TEST(stamp_roundtrip_and_clock_units)
{
    char buf[128];
    uint64_t t = 0x0123456789abcdefull, back = 0;
    bm_stamp_write(buf, sizeof(buf), t);
    CHECK_EQ(bm_stamp_read(buf, sizeof(buf), &back), 0);
    CHECK(back == t);
    CHECK(buf[16] == 'x' && buf[127] == 'x');
    CHECK_EQ(bm_stamp_read("nothex0000000000", 16, &back), -1);
    CHECK_EQ(bm_stamp_read(buf, 15, &back), -1);

    /* A message stamped now and received 20 ms later measures ~20 ms: the
     * stamp, the clock and the ns->ms conversion agree on units. */
    bm_stamp_write(buf, 32, bm_now_ns());
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint64_t lat = bm_stamp_latency_ns(buf, 32, bm_now_ns());
    struct hist *h = hist_new();
    hist_record(h, lat);
    double ms = bm_ns_to_ms((double)hist_percentile(h, 50));
    if (!(ms >= 19.9 && ms < 60.0))
        test_fail(__FILE__, __LINE__, "a 20 ms delay measured as %.6f ms", ms);
    hist_free(h);
    /* A stamp in the future measures 0, not a huge unsigned value. */
    bm_stamp_write(buf, 32, bm_now_ns() + 1000000000ull);
    CHECK_EQ(bm_stamp_latency_ns(buf, 32, bm_now_ns()), 0);
    CHECK(bm_stamp_latency_ns("garbage", 7, 1) == UINT64_MAX);
}

/* Feed a reply stream `step` bytes at a time; count replies and errors.
 * Returns -1 on a parse error. */
static int parse_all(const char *in, size_t len, size_t step, int *errors, struct bm_reply *last)
{
    struct bm_rparser p;
    size_t start = 0, avail = 0;
    int n = 0;
    bm_rp_init(&p);
    *errors = 0;
    while (avail < len) {
        avail = avail + step > len ? len : avail + step;
        while (start < avail) {
            struct bm_reply r;
            int rc = bm_rp_parse(&p, in + start, avail - start, &r);
            if (rc == BM_RP_ERR)
                return -1;
            if (rc == BM_RP_INCOMPLETE)
                break;
            n++;
            *errors += r.is_error;
            *last = r;
            start += r.len;
        }
    }
    return start == len ? n : -2;
}

TEST(reply_parser)
{
    static const char stream[] =
        "+OK\r\n"
        "-ERR unknown command 'FOO'\r\n"
        ":12345\r\n"
        "$5\r\nhello\r\n"
        "$-1\r\n"
        "*-1\r\n"
        "*0\r\n"
        "*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n:2\r\n$0\r\n\r\n"
        "%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n"
        "_\r\n,3.14\r\n#t\r\n(123456789012345678901234567890\r\n"
        "!21\r\nSYNTAX invalid syntax\r\n"
        "=15\r\ntxt:Some string\r\n"
        "~2\r\n+a\r\n+b\r\n"
        "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n+after-attribute\r\n"
        ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nbody\r\n";
    size_t len = sizeof(stream) - 1;
    for (size_t step = 1; step <= len; step = step < 8 ? step + 1 : step * 3) {
        int errors = -1;
        struct bm_reply last;
        int n = parse_all(stream, len, step, &errors, &last);
        if (n != 18 || errors != 2) {
            test_fail(__FILE__, __LINE__, "step %zu: %d replies, %d errors", step, n, errors);
            break;
        }
        /* The last one is a push whose elements were captured. */
        CHECK(last.type == '>');
        CHECK_EQ(last.nelem, 3);
        CHECK_EQ(last.elem[2].len, 4);
    }
    /* Offsets of a captured message. */
    {
        struct bm_rparser p;
        struct bm_reply r;
        const char *m = "*3\r\n$7\r\nmessage\r\n$9\r\nchannel:1\r\n$6\r\npayld!\r\n:99\r\n";
        bm_rp_init(&p);
        CHECK_EQ(bm_rp_parse(&p, m, strlen(m), &r), BM_RP_DONE);
        CHECK_EQ(r.nelem, 3);
        CHECK_STR(m + r.elem[0].off, r.elem[0].len, "message");
        CHECK_STR(m + r.elem[1].off, r.elem[1].len, "channel:1");
        CHECK_STR(m + r.elem[2].off, r.elem[2].len, "payld!");
        CHECK_EQ(bm_rp_parse(&p, m + r.len, strlen(m) - r.len, &r), BM_RP_DONE);
        CHECK(r.type == ':');
        CHECK_EQ(r.integer, 99);
    }
    /* Garbage is refused. */
    {
        struct bm_rparser p;
        struct bm_reply r;
        const char *bad[] = {"?oops\r\n", "$abc\r\n", "$3\r\nabcd\r\n", "*-2\r\n", "+x\n"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            bm_rp_init(&p);
            if (bm_rp_parse(&p, bad[i], strlen(bad[i]), &r) != BM_RP_ERR)
                test_fail(__FILE__, __LINE__, "accepted %s", bad[i]);
        }
    }
}
