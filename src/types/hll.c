/* types/hll.c - the HyperLogLog value (see hll.h for the byte layout).
 *
 * The sparse update follows Redis's rules step for step (which opcode is
 * split and how, when adjacent VALs are joined, when the value turns
 * dense), so the bytes after any sequence of PFADD/PFMERGE are the ones
 * redis-server would hold: DUMP payloads, STRLEN and PFDEBUG DECODE agree,
 * not only the estimate.  Where Redis reads the NUL after its string (a
 * value ending in half an XZERO opcode), reads here take that byte as 0
 * without touching memory past the value. */
#include "hll.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../base/mem.h"

long long hll_sparse_max_bytes = 3000;

/* CONFIG SET stores it with a relaxed atomic store on another thread. */
static inline long long sparse_max(void)
{
    return __atomic_load_n(&hll_sparse_max_bytes, __ATOMIC_RELAXED);
}

#define HLL_SEED 0xadc83b19U
/* The bias-free constant of Ertl's estimator, 1 / (2 ln 2). */
#define HLL_ALPHA_INF 0.721347520444481703680

/* Sparse opcodes. */
#define OP_IS_VAL(b) (((b) & 0x80) != 0)
#define OP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define OP_IS_ZERO(b) (((b) & 0xc0) == 0)
#define OP_VAL(v, n) ((uint8_t)(0x80 | (((v) - 1) << 2) | ((n) - 1)))
#define VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define VAL_RUN(b) (((b) & 3) + 1)
#define ZERO_MAX 64
#define VAL_RUN_MAX 4

/* ------------------------------------------------------------- hash --- */
static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t k;
    memcpy(&k, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    k = __builtin_bswap64(k);
#endif
    return k;
}

uint64_t hll_murmur64a(const void *key, size_t len, uint32_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const uint8_t *p = key;
    size_t blocks = len / 8, rem = len & 7;
    uint64_t h = (uint64_t)seed ^ ((uint64_t)len * m);

    for (size_t i = 0; i < blocks; i++, p += 8) {
        uint64_t k = load_le64(p);
        k *= m;
        k ^= k >> 47;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (rem) {
        for (size_t i = rem; i > 0; i--)
            h ^= (uint64_t)p[i - 1] << (8 * (i - 1));
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

int hll_pattern(const void *ele, size_t len, long *reg)
{
    uint64_t h = hll_murmur64a(ele, len, HLL_SEED);
    *reg = (long)(h & (HLL_REGISTERS - 1));
    /* The run is counted in the 50 bits above the index; the sentinel bit
     * caps it at 51 when they are all zero. */
    h = (h >> HLL_P) | (1ULL << HLL_Q);
    return __builtin_ctzll(h) + 1;
}

/* ----------------------------------------------------------- header --- */
int hll_is_valid(const uint8_t *v, size_t len)
{
    if (len < HLL_HDR_SIZE || memcmp(v, "HYLL", 4) != 0)
        return 0;
    if (v[4] == HLL_DENSE)
        return len == HLL_DENSE_SIZE;
    return v[4] == HLL_SPARSE;
}

void hll_init_empty(uint8_t *out)
{
    memset(out, 0, HLL_EMPTY_SIZE);
    memcpy(out, "HYLL", 4);
    out[4] = HLL_SPARSE;
    /* XZERO:16384 (the length is stored minus one). */
    out[HLL_HDR_SIZE] = 0x40 | (uint8_t)((HLL_REGISTERS - 1) >> 8);
    out[HLL_HDR_SIZE + 1] = (uint8_t)((HLL_REGISTERS - 1) & 0xff);
}

int hll_cache_get(const uint8_t *v, uint64_t *card)
{
    if (v[15] & 0x80)
        return 0;
    *card = load_le64(v + 8);
    return 1;
}

void hll_cache_set(uint8_t *v, uint64_t card)
{
    for (int i = 0; i < 8; i++)
        v[8 + i] = (uint8_t)(card >> (8 * i));
}

void hll_cache_invalidate(uint8_t *v)
{
    v[15] |= 0x80;
}

/* ------------------------------------------------------------ dense --- */
unsigned hll_dense_get(const uint8_t *regs, long i)
{
    size_t bit = (size_t)i * HLL_BITS, byte = bit >> 3;
    unsigned sh = bit & 7, v = regs[byte] >> sh;
    /* Past bit 2 the field spills into the next byte (never for the last
     * register, whose field ends the array). */
    if (sh > 8 - HLL_BITS)
        v |= (unsigned)regs[byte + 1] << (8 - sh);
    return v & HLL_REGISTER_MAX;
}

void hll_dense_set(uint8_t *regs, long i, unsigned val)
{
    size_t bit = (size_t)i * HLL_BITS, byte = bit >> 3;
    unsigned sh = bit & 7;
    val &= HLL_REGISTER_MAX;
    regs[byte] = (uint8_t)((regs[byte] & ~(HLL_REGISTER_MAX << sh)) | (val << sh));
    if (sh > 8 - HLL_BITS) {
        unsigned hi = 8 - sh;
        regs[byte + 1] = (uint8_t)((regs[byte + 1] & ~(HLL_REGISTER_MAX >> hi)) | (val >> hi));
    }
}

/* Histogram of the dense registers, four 6-bit fields per 3 bytes. */
static void dense_histogram(const uint8_t *r, int *hist)
{
    for (int g = 0; g < HLL_REGISTERS / 4; g++, r += 3) {
        hist[r[0] & 63]++;
        hist[((r[0] >> 6) | (r[1] << 2)) & 63]++;
        hist[((r[1] >> 4) | (r[2] << 4)) & 63]++;
        hist[r[2] >> 2]++;
    }
}

/* ----------------------------------------------------------- sparse --- */
/* The opcode at s[i] (i < n): its value (0 for the zero runs), its run and
 * its size in bytes.  An XZERO cut by the end reads its missing low byte
 * as 0, as Redis (whose strings end in a NUL) does. */
static inline size_t sparse_op(const uint8_t *s, size_t i, size_t n, unsigned *val, long *run)
{
    uint8_t b = s[i];
    if (OP_IS_VAL(b)) {
        *val = VAL_VALUE(b);
        *run = VAL_RUN(b);
        return 1;
    }
    *val = 0;
    if (OP_IS_ZERO(b)) {
        *run = (b & 0x3f) + 1;
        return 1;
    }
    *run = ((long)(b & 0x3f) << 8 | (i + 1 < n ? s[i + 1] : 0)) + 1;
    return 2;
}

/* max[r] = MAX(max[r], register r) over a sparse body.  As Redis: zero
 * runs only advance, a VAL run that would pass the last register stops the
 * walk, and the walk must end exactly at register 16384. */
static int sparse_merge(const uint8_t *s, size_t n, uint8_t *max)
{
    long r = 0, run;
    unsigned val;
    for (size_t i = 0; i < n;) {
        i += sparse_op(s, i, n, &val, &run);
        if (!val) {
            r += run;
            continue;
        }
        if (r + run > HLL_REGISTERS)
            break;
        for (; run > 0; run--, r++)
            if (val > max[r])
                max[r] = (uint8_t)val;
    }
    return r == HLL_REGISTERS ? 0 : -1;
}

static void sparse_histogram(const uint8_t *s, size_t n, int *hist, int *invalid)
{
    long r = 0, run;
    unsigned val;
    for (size_t i = 0; i < n;) {
        i += sparse_op(s, i, n, &val, &run);
        r += run;
        /* Past the last register the value is corrupt whatever follows;
         * stopping keeps a huge hostile body from overflowing the counts. */
        if (r > HLL_REGISTERS)
            break;
        hist[val] += (int)run;
    }
    if (r != HLL_REGISTERS && invalid)
        *invalid = 1;
}

/* A zero run of len registers (1..16384) as ZERO or XZERO; returns bytes. */
static int put_zero_run(uint8_t *out, long len)
{
    if (len <= ZERO_MAX) {
        out[0] = (uint8_t)(len - 1);
        return 1;
    }
    out[0] = (uint8_t)(0x40 | ((len - 1) >> 8));
    out[1] = (uint8_t)((len - 1) & 0xff);
    return 2;
}

static int ensure_cap(struct hll_buf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    return b->grow ? b->grow(b, need) : -1;
}

int hll_to_dense(struct hll_buf *b)
{
    uint8_t regs[HLL_REGISTERS];
    if (b->p[4] == HLL_DENSE)
        return 0;
    memset(regs, 0, sizeof(regs));
    if (sparse_merge(b->p + HLL_HDR_SIZE, b->len - HLL_HDR_SIZE, regs) < 0)
        return -1;
    if (ensure_cap(b, HLL_DENSE_SIZE) < 0)
        return -1;
    /* The header stays (magic, unused bytes, cached cardinality). */
    b->p[4] = HLL_DENSE;
    uint8_t *d = b->p + HLL_HDR_SIZE;
    memset(d, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    for (long r = 0; r < HLL_REGISTERS; r++)
        if (regs[r])
            hll_dense_set(d, r, regs[r]);
    b->len = HLL_DENSE_SIZE;
    return 1;
}

static int dense_raise(uint8_t *regs, long reg, uint8_t count)
{
    if (count <= hll_dense_get(regs, reg))
        return 0;
    hll_dense_set(regs, reg, count);
    return 1;
}

/* Join equal adjacent VALs from body offset q on, looking at five opcodes
 * at most (Redis's window, which keeps the bytes identical to its own). */
static void sparse_join(struct hll_buf *b, size_t q)
{
    uint8_t *s = b->p + HLL_HDR_SIZE;
    size_t n = b->len - HLL_HDR_SIZE;
    int window = 5;
    while (q < n && window-- > 0) {
        uint8_t o = s[q];
        if (OP_IS_XZERO(o)) {
            q += 2;
            continue;
        }
        if (OP_IS_ZERO(o)) {
            q++;
            continue;
        }
        if (q + 1 < n && OP_IS_VAL(s[q + 1]) && VAL_VALUE(o) == VAL_VALUE(s[q + 1])) {
            unsigned run = VAL_RUN(o) + VAL_RUN(s[q + 1]);
            if (run <= VAL_RUN_MAX) {
                s[q + 1] = OP_VAL(VAL_VALUE(o), run);
                memmove(s + q, s + q + 1, n - q - 1);
                n--;
                b->len--;
                continue; /* the joined run may join the next one too */
            }
        }
        q++;
    }
}

static int sparse_set(struct hll_buf *b, long reg, uint8_t count)
{
    uint8_t *s = b->p + HLL_HDR_SIZE;
    size_t n = b->len - HLL_HDR_SIZE, i = 0, oplen = 1, prev = 0;
    int has_prev = 0;
    long first = 0, span = 0;

    if (count > HLL_SPARSE_VAL_MAX)
        goto promote;
    /* Find the opcode covering reg. */
    while (i < n) {
        uint8_t o = s[i];
        oplen = 1;
        if (OP_IS_ZERO(o)) {
            span = (o & 0x3f) + 1;
        } else if (OP_IS_VAL(o)) {
            span = VAL_RUN(o);
        } else {
            if (i + 1 >= n)
                return -1; /* half an XZERO: no room to rewrite it */
            span = ((long)(o & 0x3f) << 8 | s[i + 1]) + 1;
            oplen = 2;
        }
        if (reg <= first + span - 1)
            break;
        prev = i;
        has_prev = 1;
        i += oplen;
        first += span;
    }
    if (i >= n)
        return -1; /* the body ends before reg */

    uint8_t o = s[i];
    if (OP_IS_VAL(o)) {
        if (VAL_VALUE(o) >= count)
            return 0;
        if (span == 1) {
            s[i] = OP_VAL(count, 1);
            goto updated;
        }
    } else if (OP_IS_ZERO(o) && span == 1) {
        s[i] = OP_VAL(count, 1);
        goto updated;
    }

    /* Split the run: [before] VAL(count,1) [after], five bytes at most
     * (XZERO VAL XZERO). */
    uint8_t seq[5];
    int sl = 0;
    long last = first + span - 1;
    if (OP_IS_VAL(o)) {
        unsigned cur = VAL_VALUE(o);
        if (reg != first)
            seq[sl++] = OP_VAL(cur, (unsigned)(reg - first));
        seq[sl++] = OP_VAL(count, 1);
        if (reg != last)
            seq[sl++] = OP_VAL(cur, (unsigned)(last - reg));
    } else {
        if (reg != first)
            sl += put_zero_run(seq + sl, reg - first);
        seq[sl++] = OP_VAL(count, 1);
        if (reg != last)
            sl += put_zero_run(seq + sl, last - reg);
    }
    long delta = sl - (long)oplen;
    long long max_bytes = sparse_max();
    if (delta > 0 && (long long)b->len + delta > max_bytes)
        goto promote;
    if (delta > 0 && b->len + (size_t)delta > b->cap) {
        /* Grow with some slack (as Redis: up to 300 bytes), never past
         * the sparse limit unless that is below what is needed. */
        size_t want = b->len + 3;
        want += want < 300 ? want : 300;
        if ((long long)want > max_bytes)
            want = (size_t)max_bytes;
        if (want < b->len + (size_t)delta)
            want = b->len + (size_t)delta;
        if (ensure_cap(b, want) < 0)
            return -1;
        s = b->p + HLL_HDR_SIZE;
    }
    size_t next = i + oplen;
    if (delta != 0 && next < n)
        memmove(s + next + delta, s + next, n - next);
    memcpy(s + i, seq, (size_t)sl);
    b->len = (size_t)((long)b->len + delta);

updated:
    sparse_join(b, has_prev ? prev : 0);
    return 1;

promote:
    if (hll_to_dense(b) < 0)
        return -1;
    return dense_raise(b->p + HLL_HDR_SIZE, reg, count);
}

int hll_set(struct hll_buf *b, long reg, uint8_t count)
{
    switch (b->p[4]) {
    case HLL_DENSE:
        return dense_raise(b->p + HLL_HDR_SIZE, reg, count);
    case HLL_SPARSE:
        return sparse_set(b, reg, count);
    default:
        return -1;
    }
}

int hll_add(struct hll_buf *b, const void *ele, size_t len)
{
    long reg;
    int count = hll_pattern(ele, len, &reg);
    return hll_set(b, reg, (uint8_t)count);
}

int hll_merge(uint8_t *max, const uint8_t *v, size_t len)
{
    if (v[4] == HLL_DENSE) {
        const uint8_t *d = v + HLL_HDR_SIZE;
        for (long r = 0; r < HLL_REGISTERS; r++) {
            unsigned x = hll_dense_get(d, r);
            if (x > max[r])
                max[r] = (uint8_t)x;
        }
        return 0;
    }
    return sparse_merge(v + HLL_HDR_SIZE, len - HLL_HDR_SIZE, max);
}

/* sparse_merge for a union: the same walk, written out for speed (one
 * test of the opcode's top bits per step), recording each register that
 * goes from zero to non-zero. */
static int sparse_merge_touch(const uint8_t *s, size_t n, struct hll_union *u)
{
    uint8_t *max = u->max;
    uint16_t *touched = u->touched;
    uint32_t nt = u->nt;
    long r = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        if (OP_IS_VAL(b)) {
            uint8_t val = (uint8_t)VAL_VALUE(b);
            long end = r + VAL_RUN(b);
            if (end > HLL_REGISTERS)
                break;
            for (; r < end; r++) {
                uint8_t m = max[r];
                if (val > m) {
                    if (!m)
                        touched[nt++] = (uint16_t)r;
                    max[r] = val;
                }
            }
            i++;
        } else if (OP_IS_ZERO(b)) {
            r += (b & 0x3f) + 1;
            i++;
        } else {
            r += ((long)(b & 0x3f) << 8 | (i + 1 < n ? s[i + 1] : 0)) + 1;
            i += 2;
        }
    }
    u->nt = nt;
    return r == HLL_REGISTERS ? 0 : -1;
}

int hll_union_add(struct hll_union *u, const uint8_t *v, size_t len)
{
    if (v[4] == HLL_DENSE) {
        u->full = 1;
        return hll_merge(u->max, v, len);
    }
    return sparse_merge_touch(v + HLL_HDR_SIZE, len - HLL_HDR_SIZE, u);
}

void hll_union_reset(struct hll_union *u)
{
    if (u->full)
        memset(u->max, 0, sizeof(u->max));
    else
        for (uint32_t j = 0; j < u->nt; j++)
            u->max[u->touched[j]] = 0;
    u->nt = 0;
    u->full = 0;
}

/* -------------------------------------------------------- estimator --- */
/* Ertl's sigma and tau (arXiv:1702.01284), iterated to a fixed point. */
static double ertl_sigma(double x)
{
    if (x == 1.)
        return INFINITY;
    double y = 1, z = x, before;
    do {
        x *= x;
        before = z;
        z += x * y;
        y += y;
    } while (before != z);
    return z;
}

static double ertl_tau(double x)
{
    if (x == 0. || x == 1.)
        return 0.;
    double y = 1.0, z = 1 - x, before;
    do {
        x = sqrt(x);
        before = z;
        y *= 0.5;
        /* pow() and not a product: the same rounding as Redis's build, so
         * estimates match to the unit. */
        z -= pow(1 - x, 2) * y;
    } while (before != z);
    return z / 3;
}

static uint64_t estimate(const int *hist)
{
    double m = HLL_REGISTERS;
    double z = m * ertl_tau((m - hist[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; j--) {
        z += hist[j];
        z *= 0.5;
    }
    z += m * ertl_sigma(hist[0] / m);
    return (uint64_t)llroundl(HLL_ALPHA_INF * m * m / z);
}

uint64_t hll_count(const uint8_t *v, size_t len, int *invalid)
{
    /* 64 buckets: a crafted dense register can hold up to 63. */
    int hist[64] = {0};
    if (v[4] == HLL_DENSE)
        dense_histogram(v + HLL_HDR_SIZE, hist);
    else
        sparse_histogram(v + HLL_HDR_SIZE, len - HLL_HDR_SIZE, hist, invalid);
    return estimate(hist);
}

uint64_t hll_count_registers(const uint8_t *regs)
{
    int hist[256] = {0};
    /* Eight registers per step: a union of small (sparse) HLLs is mostly
     * zero registers, and a zero word counts eight of them at once. */
    for (long r = 0; r < HLL_REGISTERS; r += 8) {
        uint64_t w;
        memcpy(&w, regs + r, 8);
        if (!w) {
            hist[0] += 8;
            continue;
        }
        for (int k = 0; k < 8; k++)
            hist[regs[r + k]]++;
    }
    return estimate(hist);
}

uint64_t hll_count_registers_clear(uint8_t *regs)
{
    int hist[256] = {0};
    for (long r = 0; r < HLL_REGISTERS; r += 8) {
        uint64_t w;
        memcpy(&w, regs + r, 8);
        if (!w) {
            hist[0] += 8;
            continue;
        }
        for (int k = 0; k < 8; k++)
            hist[regs[r + k]]++;
        memset(regs + r, 0, 8);
    }
    return estimate(hist);
}

uint64_t hll_union_count(struct hll_union *u)
{
    if (u->full) {
        u->nt = 0;
        u->full = 0;
        return hll_count_registers_clear(u->max);
    }
    int hist[256] = {0};
    hist[0] = HLL_REGISTERS - (int)u->nt;
    for (uint32_t j = 0; j < u->nt; j++) {
        uint8_t *m = &u->max[u->touched[j]];
        hist[*m]++;
        *m = 0;
    }
    u->nt = 0;
    return estimate(hist);
}

/* ------------------------------------------------------------ debug --- */
size_t hll_sparse_describe(const uint8_t *v, size_t len, char **out)
{
    const uint8_t *s = v + HLL_HDR_SIZE;
    size_t n = len - HLL_HDR_SIZE, o = 0;
    /* "Z:16384 " is the longest opcode text (8 bytes, one byte or more). */
    char *t = hk_malloc(n * 8 + 1);
    for (size_t i = 0; i < n;) {
        uint8_t b = s[i];
        unsigned val;
        long run;
        i += sparse_op(s, i, n, &val, &run);
        if (OP_IS_VAL(b))
            o += (size_t)sprintf(t + o, "v:%u,%ld ", val, run);
        else
            o += (size_t)sprintf(t + o, "%c:%ld ", OP_IS_ZERO(b) ? 'z' : 'Z', run);
    }
    if (o > 0)
        o--; /* the last separator */
    t[o] = 0;
    *out = t;
    return o;
}

/* --------------------------------------------------------- selftest --- */
static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static int heap_grow(struct hll_buf *b, size_t need)
{
    b->p = hk_realloc(b->p, need);
    b->cap = need;
    return 0;
}

int hll_selftest(char *err, size_t errlen)
{
    uint8_t *dense = hk_calloc(HLL_DENSE_SIZE);
    uint8_t ref[HLL_REGISTERS];
    struct hll_buf sp = {hk_malloc(64), HLL_EMPTY_SIZE, 64, heap_grow, NULL};
    uint64_t seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL | 1;
    int rc = -1;

    memcpy(dense, "HYLL", 4);
    /* 1: every register keeps its value and leaves its neighbours alone. */
    for (int cycle = 0; cycle < 1000; cycle++) {
        for (long r = 0; r < HLL_REGISTERS; r++) {
            ref[r] = (uint8_t)(xorshift(&seed) & HLL_REGISTER_MAX);
            hll_dense_set(dense + HLL_HDR_SIZE, r, ref[r]);
        }
        for (long r = 0; r < HLL_REGISTERS; r++) {
            unsigned got = hll_dense_get(dense + HLL_HDR_SIZE, r);
            if (got != ref[r]) {
                snprintf(err, errlen, "TESTFAILED Register %ld should be %d but is %u", r, ref[r], got);
                goto out;
            }
        }
    }

    /* 2: the estimate stays within six standard errors (1.04/sqrt(m)) at
     * every power of ten up to 10^7, a sparse and a dense HLL fed the same
     * elements agree, and small HLLs stay sparse. */
    memset(dense + HLL_HDR_SIZE, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    hll_init_empty(sp.p);
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    uint64_t base = xorshift(&seed);
    long long checkpoint = 1;
    struct hll_buf db = {dense, HLL_DENSE_SIZE, HLL_DENSE_SIZE, NULL, NULL};
    for (long long j = 1; j <= 10000000; j++) {
        uint8_t ele[8];
        uint64_t x = (uint64_t)j ^ base;
        for (int k = 0; k < 8; k++)
            ele[k] = (uint8_t)(x >> (8 * k));
        hll_add(&db, ele, 8);
        if (hll_add(&sp, ele, 8) < 0) {
            snprintf(err, errlen, "TESTFAILED sparse update failed");
            goto out;
        }
        if (j != checkpoint)
            continue;
        if (j < sparse_max() / 2 && sp.p[4] != HLL_SPARSE) {
            snprintf(err, errlen, "TESTFAILED sparse encoding not used");
            goto out;
        }
        uint64_t cd = hll_count(dense, HLL_DENSE_SIZE, NULL);
        if (cd != hll_count(sp.p, sp.len, NULL)) {
            snprintf(err, errlen, "TESTFAILED dense/sparse disagree");
            goto out;
        }
        long long abserr = checkpoint - (long long)cd;
        long long maxerr = (long long)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10)
            maxerr = 1; /* collisions make 10 too noisy for the bound */
        if (abserr < 0)
            abserr = -abserr;
        if (abserr > maxerr) {
            snprintf(err, errlen, "TESTFAILED Too big error. card:%lld abserr:%lld", checkpoint, abserr);
            goto out;
        }
        checkpoint *= 10;
    }
    rc = 0;
out:
    hk_free(dense);
    hk_free(sp.p);
    return rc;
}
