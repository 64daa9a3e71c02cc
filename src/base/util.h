/* util.h - small, dependency-free helpers shared by every layer: number
 * parsing and formatting with Redis's exact rules, glob matching, hashing
 * (CRC16 for cluster slots, a 64-bit hash for tables) and clocks.
 *
 * Nothing here allocates or touches server state; every function is safe to
 * call from any thread. */
#ifndef HK_UTIL_H
#define HK_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HK_OK 0
#define HK_ERR (-1)

#define HK_LIKELY(x) __builtin_expect(!!(x), 1)
#define HK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HK_UNUSED(x) ((void)(x))

/* Parse a whole buffer as a signed 64-bit decimal with Redis's strictness:
 * no spaces, no leading '+', no leading zeros (except "0"), no overflow.
 * Returns 1 on success, 0 otherwise. */
int str_to_ll(const char *s, size_t len, long long *out);
/* Parse a double the way Redis does for scores/INCRBYFLOAT: whole buffer,
 * no spaces, no NaN. Accepts "inf"/"-inf". Returns 1 on success. */
int str_to_ld(const char *s, size_t len, long double *out);
int str_to_d(const char *s, size_t len, double *out);
/* Format; return the number of bytes written (no NUL counted). buf must hold
 * at least 21 bytes for ll and 64 bytes for doubles. */
int ll_to_str(char *buf, long long v);
int ull_to_str(char *buf, unsigned long long v);
/* INCRBYFLOAT style: %.17Lg, without trailing zeros, no exponent. */
int ld_to_str_human(char *buf, size_t cap, long double v);
/* RESP3 double / score formatting: %.17g, "inf", "-inf". */
int d_to_str(char *buf, size_t cap, double v);

/* Redis glob: * ? [abc] [^a] [a-z] and \ escapes. nocase for KEYS? no:
 * callers pass 0 for keys, 1 for CONFIG GET. Returns 1 on match. */
int glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);

/* Case-insensitive equality of a buffer with a NUL-terminated literal. */
int str_eq_nocase(const char *s, size_t len, const char *lit);

/* Redis Cluster key slot: CRC16 of the key, or of its first non-empty
 * {hash tag}, mod 16384. */
unsigned key_slot(const char *key, size_t len);
uint16_t crc16(const char *buf, size_t len);

/* 64-bit hash for hash tables (our own multiply-xorshift construction). */
uint64_t hash64(const void *key, size_t len, uint64_t seed);

/* Clocks. */
long long time_ms(void);          /* wall clock, unix ms */
long long time_us(void);          /* wall clock, unix us */
long long mono_us(void);          /* monotonic us */
long long mono_ns(void);

/* The command clock: the wall clock in unix us, read once per command to
 * time it (commandstats, slow log, latency) and to date what it does.
 * clock_refresh_us reads the system clock and remembers it with the CPU's
 * time-stamp counter; clock_now_us then extrapolates from that pair with
 * one RDTSC (about 12 ns here against 31 for clock_gettime through the
 * vDSO), for at most 1 ms, after which it reads the system clock again.
 * The counter is used only where CPUID says it is invariant (constant
 * rate, running in every C-state) and after clock_init measured its rate
 * against CLOCK_MONOTONIC_RAW (2 ms, once, before the workers start);
 * elsewhere clock_now_us is clock_refresh_us.  Each thread has its own
 * pair (a worker refreshes it per read batch, process_input), so nothing
 * is shared but the rate, written once before any thread reads it. */
void clock_init(void);
long long clock_refresh_us(void);
extern unsigned long long clock_tsc_mul; /* us per tick << 32; 0: no TSC */
extern unsigned long long clock_tsc_max; /* ticks in 1 ms */
struct clock_base {
    long long wall_us;
    unsigned long long tsc;
};
extern _Thread_local struct clock_base clock_base;
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline long long clock_now_us(void)
{
    if (clock_tsc_mul) {
        unsigned long long d = __rdtsc() - clock_base.tsc;
        if (d < clock_tsc_max)
            return clock_base.wall_us + (long long)((d * clock_tsc_mul) >> 32);
    }
    return clock_refresh_us();
}
#else
static inline long long clock_now_us(void)
{
    return clock_refresh_us();
}
#endif

/* SHA1-free random helpers: per-thread xorshift PRNG. */
uint64_t rand64(void);

/* Config memory units ("", b, k, kb, m, mb, g, gb, any case): 1 and the
 * multiplier in *mul, 0 when u is not one. */
int config_mem_unit(const char *u, unsigned long long *mul);
/* "<integer><unit>" (e.g. 100mb, -1): the byte count with *ok 1; *ok 0 on
 * a malformed number, an unknown unit or overflow. */
long long config_mem_parse(const char *s, int *ok);

#endif
