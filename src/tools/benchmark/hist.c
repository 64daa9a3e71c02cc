/* hist.c - the log-linear latency histogram (see hist.h). */
#include "hist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hist *hist_new(void)
{
    struct hist *h = malloc(sizeof(*h));
    if (!h) {
        fprintf(stderr, "hotkv-benchmark: out of memory\n");
        abort();
    }
    hist_reset(h);
    return h;
}

void hist_free(struct hist *h)
{
    free(h);
}

void hist_reset(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

/* v < 2048: bucket v.  Otherwise, with e = floor(log2 v) and shift = e - 10,
 * sub = v >> shift lies in [1024, 2048) and the bucket is (shift << 10) + sub,
 * which continues the linear range without a gap. */
size_t hist_index(uint64_t v)
{
    if (v > HIST_MAX_TRACKABLE)
        v = HIST_MAX_TRACKABLE;
    if (v < 2 * HIST_HALF)
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = e - (HIST_SUB_BITS - 1);
    return ((size_t)shift << (HIST_SUB_BITS - 1)) + (size_t)(v >> shift);
}

uint64_t hist_lowest_equiv(size_t idx)
{
    if (idx < 2 * HIST_HALF)
        return idx;
    unsigned shift = (unsigned)(idx >> (HIST_SUB_BITS - 1)) - 1;
    uint64_t sub = idx - ((size_t)shift << (HIST_SUB_BITS - 1));
    return sub << shift;
}

uint64_t hist_highest_equiv(size_t idx)
{
    if (idx < 2 * HIST_HALF)
        return idx;
    unsigned shift = (unsigned)(idx >> (HIST_SUB_BITS - 1)) - 1;
    uint64_t sub = idx - ((size_t)shift << (HIST_SUB_BITS - 1));
    return ((sub + 1) << shift) - 1;
}

void hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    h->counts[hist_index(v)] += n;
    h->total += n;
    h->sum += (double)v * (double)n;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->total == 0)
        return;
    for (size_t i = 0; i < HIST_NBUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    if (h->total == 0)
        return 0;
    if (p >= 100.0)
        return h->max;
    if (p < 0.0)
        p = 0.0;
    /* The value at rank ceil(p% * total) (1-based) of the sorted sample. */
    double r = p / 100.0 * (double)h->total;
    uint64_t rank = (uint64_t)r;
    if ((double)rank < r)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > h->total)
        rank = h->total;
    uint64_t seen = 0;
    for (size_t i = 0; i < HIST_NBUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = hist_highest_equiv(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

double hist_mean(const struct hist *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}
