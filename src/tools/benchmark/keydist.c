/* keydist.c - see keydist.h.
 *
 * Zipf by rejection-inversion (W. Hormann and G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 6(3), 1996).  With h(x) = x^-s and H its antiderivative,
 * H(x) = (x^(1-s) - 1) / (1-s), the continuous hat over [0.5, n + 0.5] is
 * inverted; a draw x is rounded to k and accepted when it falls under the
 * area that belongs to k.  Acceptance is above 90% for every s and n, so a
 * draw costs O(1) (a few exp/log) whatever the key space. */
#include "keydist.h"

#include <math.h>

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void bm_rng_seed(struct bm_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1;
}

/* xoshiro256** (Blackman and Vigna). */
uint64_t bm_rng_next(struct bm_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double bm_rng_double(struct bm_rng *r)
{
    return (double)(bm_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t bm_rng_below(struct bm_rng *r, uint64_t n)
{
    /* Multiply-high: bias below 2^-64 * n, irrelevant here. */
    return (uint64_t)(((unsigned __int128)bm_rng_next(r) * n) >> 64);
}

/* expm1(t)/t and log1p(t)/t, both 1 at t = 0, computed so that s near 1
 * loses no precision. */
static double expm1_over(double t)
{
    return fabs(t) > 1e-8 ? expm1(t) / t : 1.0 + t / 2.0 * (1.0 + t / 3.0);
}

static double log1p_over(double t)
{
    return fabs(t) > 1e-8 ? log1p(t) / t : 1.0 - t * (0.5 - t / 3.0);
}

static double zh(const struct bm_zipf *z, double x)
{
    return exp(-z->s * log(x));
}

static double zH(const struct bm_zipf *z, double x)
{
    double lx = log(x);
    return expm1_over((1.0 - z->s) * lx) * lx;
}

static double zH_inv(const struct bm_zipf *z, double y)
{
    double t = y * (1.0 - z->s);
    if (t < -1.0)
        t = -1.0; /* rounding at the very end of the range */
    return exp(log1p_over(t) * y);
}

int bm_zipf_init(struct bm_zipf *z, uint64_t n, double s)
{
    if (n == 0 || !(s > 0.0) || !isfinite(s))
        return -1;
    z->n = n;
    z->s = s;
    z->h_x1 = zH(z, 1.5) - 1.0;
    z->h_n = zH(z, (double)n + 0.5);
    z->sq = 2.0 - zH_inv(z, zH(z, 2.5) - zh(z, 2.0));
    return 0;
}

uint64_t bm_zipf_draw(const struct bm_zipf *z, struct bm_rng *r)
{
    for (;;) {
        double u = z->h_n + bm_rng_double(r) * (z->h_x1 - z->h_n);
        double x = zH_inv(z, u);
        double kd = floor(x + 0.5);
        if (kd < 1.0)
            kd = 1.0;
        else if (kd > (double)z->n)
            kd = (double)z->n;
        if (kd - x <= z->sq || u >= zH(z, kd + 0.5) - zh(z, kd))
            return (uint64_t)kd;
    }
}

int bm_keygen_init(struct bm_keygen *g, int pattern, uint64_t n, double zipf_s, uint64_t seed,
                   _Atomic uint64_t *seq)
{
    if (n == 0)
        return -1;
    g->pattern = pattern;
    g->n = n;
    g->seq = seq;
    g->seq_cur = g->seq_end = 0;
    bm_rng_seed(&g->rng, seed);
    if (pattern == KP_ZIPF)
        return bm_zipf_init(&g->zipf, n, zipf_s);
    if (pattern == KP_SEQUENTIAL && !seq)
        return -1;
    return pattern == KP_UNIFORM || pattern == KP_SEQUENTIAL ? 0 : -1;
}

uint64_t bm_keygen_next(struct bm_keygen *g)
{
    switch (g->pattern) {
    case KP_SEQUENTIAL:
        if (g->seq_cur == g->seq_end) {
            g->seq_cur = atomic_fetch_add_explicit(g->seq, BM_SEQ_BLOCK, memory_order_relaxed);
            g->seq_end = g->seq_cur + BM_SEQ_BLOCK;
        }
        return g->seq_cur++ % g->n;
    case KP_ZIPF:
        return bm_zipf_draw(&g->zipf, &g->rng) - 1;
    default:
        return bm_rng_below(&g->rng, g->n);
    }
}
