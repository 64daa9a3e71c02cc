/* stamp.h - the clock of hotkv-benchmark and the send-time stamp carried in
 * pub/sub payloads.
 *
 * Every time in the tool is CLOCK_MONOTONIC nanoseconds (bm_now_ns());
 * latencies are recorded in ns and converted to milliseconds only for
 * output, by bm_ns_to_ms().  A pub/sub payload starts with the publisher's
 * intended send time as 16 lowercase hex digits (ns), padded with 'x' to
 * the payload size; publisher and subscribers share the host and the clock. */
#ifndef HK_BM_STAMP_H
#define HK_BM_STAMP_H

#include <stddef.h>
#include <stdint.h>

#define BM_STAMP_LEN 16

uint64_t bm_now_ns(void);

static inline double bm_ns_to_ms(double ns)
{
    return ns / 1e6;
}

/* Write a payload of exactly len bytes (len >= BM_STAMP_LEN) stamped t_ns. */
void bm_stamp_write(char *buf, size_t len, uint64_t t_ns);
/* Parse the stamp at the start of a payload: 0 on success, -1 if absent. */
int bm_stamp_read(const char *buf, size_t len, uint64_t *t_ns);
/* Delivery latency in ns of a payload received at now_ns (0 if the stamp
 * is in the future); -1 (as uint64) when the payload carries no stamp. */
uint64_t bm_stamp_latency_ns(const char *buf, size_t len, uint64_t now_ns);

#endif
