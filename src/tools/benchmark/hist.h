/* hist.h - latency histogram for hotkv-benchmark: HDR-style log-linear
 * buckets with 3 significant decimal digits, constant memory, mergeable.
 *
 * Values are unsigned integers (the tool records nanoseconds).  Values below
 * 2048 get one bucket each (exact); above, every power-of-two range
 * [2^e, 2^(e+1)) is split into 1024 equal sub-buckets, so a bucket is at most
 * 1/1024 (< 0.1%) of the values it holds wide.  The highest value tracked
 * exactly is 2^44 - 1 (about 4.9 hours in ns); larger values land in the
 * last bucket while min/max keep the true extremes.
 *
 * A histogram is ~280 KB and is owned by one thread; merge per-thread
 * histograms with hist_merge() after the threads are done (or under a lock).
 * Percentiles report the highest value equivalent to the bucket holding the
 * requested rank (never understating a latency), clamped to [min, max]. */
#ifndef HK_BM_HIST_H
#define HK_BM_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 11                      /* 2048 sub-buckets per range */
#define HIST_HALF (1u << (HIST_SUB_BITS - 1)) /* 1024 */
#define HIST_MAX_EXP 44                       /* values < 2^44 tracked */
#define HIST_NBUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_HALF)
#define HIST_MAX_TRACKABLE ((UINT64_C(1) << HIST_MAX_EXP) - 1)

struct hist {
    uint64_t total;
    uint64_t min;
    uint64_t max;
    double sum;
    uint64_t counts[HIST_NBUCKETS];
};

struct hist *hist_new(void); /* zeroed; aborts on out of memory */
void hist_free(struct hist *h);
void hist_reset(struct hist *h);

/* Bucket arithmetic (exposed for the unit test). */
size_t hist_index(uint64_t v);
uint64_t hist_lowest_equiv(size_t idx);
uint64_t hist_highest_equiv(size_t idx);

void hist_record_n(struct hist *h, uint64_t v, uint64_t n);
static inline void hist_record(struct hist *h, uint64_t v)
{
    hist_record_n(h, v, 1);
}
void hist_merge(struct hist *dst, const struct hist *src);

/* p in [0, 100]; 0 when empty.  p >= 100 returns max. */
uint64_t hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

#endif
