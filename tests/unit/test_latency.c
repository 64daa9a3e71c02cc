/* test_latency.c - the per-command latency histogram's indexing
 * (cmd/slowlog.h): its constants are HdrHistogram's counts indexes (1 ns
 * unit, 2 significant digits) of 131 us and 1 s, every whole microsecond
 * lands in a count no coarser than Redis's HDR bucket of that duration, and
 * the indexes grow with the duration and stay inside the array. */
#include "test.h"
#include "cmd/slowlog.h"

/* HdrHistogram's bucket of v ns, computed the long way: the octave's
 * bucket index and the sub-bucket within it. */
static void hdr_bucket(unsigned long long v, unsigned long long *lo, unsigned long long *width)
{
    int bucket = 0;
    while ((v | 255) >> (bucket + 8))
        bucket++;
    *lo = (v >> bucket) << bucket;
    *width = 1ULL << bucket;
}

TEST(latency_hdr_constants)
{
    CHECK_EQ(latency_hdr_index(131000), (size_t)LATENCY_HDR_FIRST);
    CHECK_EQ(latency_hdr_index(1000000000ULL), (size_t)LATENCY_HDR_LAST);
    /* The last exact microsecond is in a lower HDR bucket than the first
     * bucketed one: no HDR bucket is split between the two regions. */
    CHECK(latency_hdr_index(130000) < (size_t)LATENCY_HDR_FIRST);
}

TEST(latency_fine_index_is_no_coarser_than_hdr)
{
    size_t prev = 0;
    unsigned long long prev_lo = 0;
    for (unsigned long long us = 0; us < 2000000; us += us < 5000 ? 1 : 7) {
        size_t i = latency_fine_index(us);
        CHECK(i < (size_t)LATENCY_FINE_N);
        CHECK(i >= prev);
        unsigned long long ns = us == 0 ? 1 : us < 1000000 ? us * 1000 : 1000000000ULL, lo, w;
        hdr_bucket(ns, &lo, &w);
        /* Two durations share a count only if Redis puts them in one
         * bucket too. */
        if (i == prev && us > 0)
            CHECK_EQ(lo, prev_lo);
        prev = i;
        prev_lo = lo;
    }
    CHECK_EQ(latency_fine_index(5000000), (size_t)LATENCY_FINE_N - 1); /* clamped at 1 s, as Redis */
}
