/* stamp.c - see stamp.h. */
#include "stamp.h"

#include <string.h>
#include <time.h>

uint64_t bm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bm_stamp_write(char *buf, size_t len, uint64_t t_ns)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = BM_STAMP_LEN - 1; i >= 0; i--) {
        buf[i] = hex[t_ns & 15];
        t_ns >>= 4;
    }
    if (len > BM_STAMP_LEN)
        memset(buf + BM_STAMP_LEN, 'x', len - BM_STAMP_LEN);
}

int bm_stamp_read(const char *buf, size_t len, uint64_t *t_ns)
{
    uint64_t v = 0;
    if (len < BM_STAMP_LEN)
        return -1;
    for (int i = 0; i < BM_STAMP_LEN; i++) {
        char c = buf[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return -1;
        v = (v << 4) | d;
    }
    *t_ns = v;
    return 0;
}

uint64_t bm_stamp_latency_ns(const char *buf, size_t len, uint64_t now_ns)
{
    uint64_t t;
    if (bm_stamp_read(buf, len, &t) < 0)
        return UINT64_MAX;
    return now_ns > t ? now_ns - t : 0;
}
