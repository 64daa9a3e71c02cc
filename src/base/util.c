/* util.c - number parsing/formatting, glob matching, CRC16 and hashing.
 *
 * Number rules follow Redis exactly because clients see the results: an
 * integer argument must be the canonical decimal form ("01" and "+1" are
 * not integers), which is also what lets INCR store integers verbatim. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

int str_to_ll(const char *s, size_t len, long long *out)
{
    const char *p = s;
    size_t plen = 0;
    int neg = 0;
    unsigned long long v;

    if (len == 0 || len > 20)
        return 0;
    if (len == 1 && p[0] == '0') {
        *out = 0;
        return 1;
    }
    if (p[0] == '-') {
        neg = 1;
        p++;
        plen++;
        if (plen == len)
            return 0;
    }
    if (p[0] < '1' || p[0] > '9')
        return 0;
    v = (unsigned long long)(p[0] - '0');
    p++;
    plen++;
    while (plen < len) {
        unsigned d;
        if (p[0] < '0' || p[0] > '9')
            return 0;
        d = (unsigned)(p[0] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
        p++;
        plen++;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return 0;
        *out = (long long)(0ULL - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX)
            return 0;
        *out = (long long)v;
    }
    return 1;
}

int str_to_ld(const char *s, size_t len, long double *out)
{
    char buf[5120];
    char *eptr;
    long double v;

    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (isspace((unsigned char)buf[0]))
        return 0;
    errno = 0;
    v = strtold(buf, &eptr);
    if ((size_t)(eptr - buf) != len || isnan(v))
        return 0;
    if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO))
        return 0;
    *out = v;
    return 1;
}

int str_to_d(const char *s, size_t len, double *out)
{
    char buf[512];
    char *eptr;
    double v;

    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (isspace((unsigned char)buf[0]))
        return 0;
    errno = 0;
    v = strtod(buf, &eptr);
    if ((size_t)(eptr - buf) != len || isnan(v))
        return 0;
    if (errno == ERANGE && fpclassify(v) == FP_ZERO)
        return 0;
    *out = v;
    return 1;
}

/* Two digits per step from a table of "00".."99": a reply's length prefix
 * ("$256") is written for every bulk reply. */
static const char digits2[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

int ull_to_str(char *buf, unsigned long long v)
{
    int n = 1;
    for (unsigned long long t = v; t >= 10; t /= 10)
        n++;
    if (n <= 3) { /* the common case: no loop over the length */
        if (v < 10) {
            buf[0] = (char)('0' + v);
        } else if (v < 100) {
            memcpy(buf, digits2 + 2 * v, 2);
        } else {
            buf[0] = (char)('0' + v / 100);
            memcpy(buf + 1, digits2 + 2 * (v % 100), 2);
        }
        return n;
    }
    int i = n;
    while (v >= 100) {
        i -= 2;
        memcpy(buf + i, digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(buf + i - 2, digits2 + 2 * v, 2);
    else
        buf[i - 1] = (char)('0' + v);
    return n;
}

int ll_to_str(char *buf, long long v)
{
    if (v < 0) {
        buf[0] = '-';
        return 1 + ull_to_str(buf + 1, 0ULL - (unsigned long long)v);
    }
    return ull_to_str(buf, (unsigned long long)v);
}

int ld_to_str_human(char *buf, size_t cap, long double v)
{
    int n;
    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    n = snprintf(buf, cap, "%.17Lf", v);
    if (n < 0 || (size_t)n >= cap)
        return snprintf(buf, cap, "%.17Lg", v);
    /* Trim trailing zeros and a trailing dot. */
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0')
            n--;
        if (n > 0 && buf[n - 1] == '.')
            n--;
        buf[n] = '\0';
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

int d_to_str(char *buf, size_t cap, double v)
{
    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    if (isnan(v))
        return snprintf(buf, cap, "nan");
    return snprintf(buf, cap, "%.17g", v);
}

static int lower(int c, int nocase)
{
    return nocase ? tolower(c) : c;
}

/* Iterative glob with single backtracking point for '*'; classes and escapes
 * as in Redis.  Bounded O(plen*slen) even for nested stars. */
int glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase)
{
    size_t p = 0, i = 0;
    size_t star_p = (size_t)-1, star_i = 0;

    while (i < slen || p < plen) {
        if (p < plen) {
            char c = pat[p];
            if (c == '*') {
                while (p + 1 < plen && pat[p + 1] == '*')
                    p++;
                star_p = p++;
                star_i = i;
                continue;
            }
            if (i < slen) {
                if (c == '?') {
                    p++;
                    i++;
                    continue;
                }
                if (c == '[') {
                    size_t q = p + 1;
                    int neg = 0, match = 0;
                    if (q < plen && pat[q] == '^') {
                        neg = 1;
                        q++;
                    }
                    while (q < plen && pat[q] != ']') {
                        if (pat[q] == '\\' && q + 1 < plen) {
                            q++;
                            if (lower((unsigned char)pat[q], nocase) == lower((unsigned char)s[i], nocase))
                                match = 1;
                            q++;
                        } else if (q + 2 < plen && pat[q + 1] == '-') {
                            int a = lower((unsigned char)pat[q], nocase);
                            int b = lower((unsigned char)pat[q + 2], nocase);
                            int x = lower((unsigned char)s[i], nocase);
                            if (a > b) {
                                int t = a;
                                a = b;
                                b = t;
                            }
                            if (x >= a && x <= b)
                                match = 1;
                            q += 3;
                        } else {
                            if (lower((unsigned char)pat[q], nocase) == lower((unsigned char)s[i], nocase))
                                match = 1;
                            q++;
                        }
                    }
                    /* Unterminated class: Redis treats the end of pattern as
                     * the end of the class. */
                    if (neg)
                        match = !match;
                    if (match) {
                        p = q < plen ? q + 1 : q;
                        i++;
                        continue;
                    }
                } else {
                    if (c == '\\' && p + 1 < plen)
                        c = pat[++p];
                    if (lower((unsigned char)c, nocase) == lower((unsigned char)s[i], nocase)) {
                        p++;
                        i++;
                        continue;
                    }
                }
            }
        }
        if (star_p != (size_t)-1 && star_i < slen) {
            p = star_p + 1;
            i = ++star_i;
            continue;
        }
        return 0;
    }
    return 1;
}

static inline unsigned char ascii_lower(unsigned char c)
{
    return (unsigned char)((unsigned)(c - 'A') < 26u ? c | 0x20 : c);
}

int str_eq_nocase(const char *s, size_t len, const char *lit)
{
    size_t i;
    for (i = 0; i < len; i++) {
        if (lit[i] == '\0' || ascii_lower((unsigned char)s[i]) != ascii_lower((unsigned char)lit[i]))
            return 0;
    }
    return lit[len] == '\0';
}

/* CRC16-CCITT (XMODEM: poly 0x1021, init 0), as the cluster spec defines.
 * Sliced by 4: with a zero initial value the CRC is linear, and feeding a
 * 16-bit state c is the same as XORing it into the next two message bytes,
 * so four bytes fold in with four independent lookups, where tab[k][x] is
 * the CRC of byte x followed by k zero bytes.  Tables are built at start. */
static uint16_t crc16_tab[4][256];

static void crc16_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint16_t c = (uint16_t)(i << 8);
        for (int j = 0; j < 8; j++)
            c = (c & 0x8000) ? (uint16_t)((c << 1) ^ 0x1021) : (uint16_t)(c << 1);
        crc16_tab[0][i] = c;
    }
    for (int k = 1; k < 4; k++) {
        for (unsigned i = 0; i < 256; i++) {
            uint16_t c = crc16_tab[k - 1][i];
            crc16_tab[k][i] = (uint16_t)((c << 8) ^ crc16_tab[0][c >> 8]);
        }
    }
}

__attribute__((constructor)) static void util_ctor(void)
{
    crc16_init();
}

uint16_t crc16(const char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint16_t crc = 0;
    while (len >= 4) {
        crc = (uint16_t)(crc16_tab[3][(crc >> 8) ^ p[0]] ^ crc16_tab[2][(crc & 0xff) ^ p[1]] ^ crc16_tab[1][p[2]] ^
                         crc16_tab[0][p[3]]);
        p += 4;
        len -= 4;
    }
    while (len--)
        crc = (uint16_t)((crc << 8) ^ crc16_tab[0][((crc >> 8) ^ *p++) & 0xff]);
    return crc;
}

/* Does the 8-byte word have a '{' byte?  (The classic has-zero-byte test on
 * word ^ '{'*0x0101..., exact for the "any byte" question.) */
static inline int has_brace(uint64_t w)
{
    uint64_t x = w ^ 0x7b7b7b7b7b7b7b7bULL;
    return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
}

unsigned key_slot(const char *key, size_t len)
{
    size_t i = 0;
    /* Most keys have no '{': check 8 bytes at a time, then CRC the whole
     * key; only keys with a brace take the hash-tag path. */
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, key + i, 8);
        if (has_brace(w))
            break;
    }
    if (i + 8 > len) {
        for (; i < len && key[i] != '{'; i++)
            ;
    }
    if (i >= len)
        return crc16(key, len) & 16383;
    const char *open = memchr(key, '{', len);
    {
        size_t s = (size_t)(open - key);
        const char *close = memchr(open + 1, '}', len - s - 1);
        if (close && close != open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) & 16383;
    }
    return crc16(key, len) & 16383;
}

static inline uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t m = (__uint128_t)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* Two lanes of 64x64->128 multiply-fold over 16-byte blocks, then a final
 * fold with the length.  Constants are odd, high-entropy 64-bit values. */
uint64_t hash64(const void *key, size_t len, uint64_t seed)
{
    const unsigned char *p = key;
    const uint64_t k0 = 0x9fb21c651e98df25ULL, k1 = 0xc2b2ae3d27d4eb4fULL;
    const uint64_t k2 = 0x165667b19e3779f9ULL;
    uint64_t h = seed ^ (len * k2);
    size_t n = len;

    while (n >= 16) {
        h = mix(rd64(p) ^ k0, rd64(p + 8) ^ h ^ k1);
        p += 16;
        n -= 16;
    }
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = rd64(p);
        b = rd64(p + n - 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + n - 4, 4);
        a = x;
        b = y;
    } else if (n > 0) {
        a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
    }
    h = mix(a ^ k1 ^ h, b ^ k0);
    return mix(h ^ k2, (uint64_t)len ^ k0);
}

long long time_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long time_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long long mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

unsigned long long clock_tsc_mul, clock_tsc_max;
_Thread_local struct clock_base clock_base;

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static long long raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#endif

void clock_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (clock_tsc_mul || !__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    if (!(d & (1u << 8))) /* invariant TSC */
        return;
    long long n0 = raw_ns(), n1;
    unsigned long long t0 = __rdtsc(), t1;
    do {
        n1 = raw_ns();
        t1 = __rdtsc();
    } while (n1 - n0 < 2000000 && n1 >= n0);
    if (n1 - n0 < 2000000 || t1 <= t0)
        return;
    double ticks_per_us = (double)(t1 - t0) * 1000.0 / (double)(n1 - n0);
    /* Between 100 MHz and 100 GHz, or it is not a clock to trust. */
    if (!(ticks_per_us >= 100.0 && ticks_per_us <= 100000.0))
        return;
    clock_tsc_max = (unsigned long long)(ticks_per_us * 1000.0);
    clock_tsc_mul = (unsigned long long)(4294967296.0 / ticks_per_us);
#endif
}

long long clock_refresh_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
#if defined(__x86_64__) || defined(__i386__)
    if (clock_tsc_mul)
        clock_base.tsc = __rdtsc();
#endif
    clock_base.wall_us = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    return clock_base.wall_us;
}

uint64_t rand64(void)
{
    static _Thread_local uint64_t s;
    if (s == 0)
        s = (uint64_t)mono_ns() ^ ((uint64_t)(uintptr_t)&s << 17) ^ 0x2545F4914F6CDD1DULL;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    /* Finalize (splitmix64's mixer): without it the low bits of one output
     * follow from the low bits of the previous one, which skews
     * "rand64() & mask" followed by "rand64() % n" (random elements). */
    uint64_t x = s;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Memory sizes in the config syntax (config.c, DEBUG, maxmemory-clients):
 * a number and an optional unit. */
int config_mem_unit(const char *u, unsigned long long *mul)
{
    static const struct {
        const char *name;
        unsigned long long mul;
    } units[] = {{"", 1},           {"b", 1},           {"k", 1000},       {"kb", 1024},
                 {"m", 1000 * 1000}, {"mb", 1024 * 1024}, {"g", 1000000000ULL}, {"gb", 1024ULL * 1024 * 1024}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcasecmp(u, units[i].name)) {
            *mul = units[i].mul;
            return 1;
        }
    return 0;
}

long long config_mem_parse(const char *s, int *ok)
{
    char *end;
    unsigned long long mul;
    long long v;
    size_t n = strlen(s);
    char num[64];
    size_t i = 0;
    *ok = 0;
    while (i < n && (isdigit((unsigned char)s[i]) || (i == 0 && s[i] == '-')))
        i++;
    if (i == 0 || i >= sizeof(num))
        return 0;
    memcpy(num, s, i);
    num[i] = 0;
    if (!config_mem_unit(s + i, &mul))
        return 0;
    errno = 0;
    v = strtoll(num, &end, 10);
    if (errno || *end || (v > 0 && v > LLONG_MAX / (long long)mul) || (v < 0 && v < LLONG_MIN / (long long)mul))
        return 0;
    *ok = 1;
    return v * (long long)mul;
}
