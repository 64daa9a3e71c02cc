/* keydist.h - random numbers and key-index distributions for
 * hotkv-benchmark: a per-thread xoshiro256** generator, uniform draws,
 * Zipf(s) over 1..n by rejection-inversion (O(1) per draw, constant memory,
 * any n up to 2^53), and sequential indexes handed out in blocks from a
 * counter shared by all threads.
 *
 * Thread: a bm_rng and a bm_keygen belong to one thread; the sequential
 * counter (an atomic) is shared. */
#ifndef HK_BM_KEYDIST_H
#define HK_BM_KEYDIST_H

#include <stdatomic.h>
#include <stdint.h>

struct bm_rng {
    uint64_t s[4];
};

void bm_rng_seed(struct bm_rng *r, uint64_t seed);
uint64_t bm_rng_next(struct bm_rng *r);
/* Uniform in [0, 1). */
double bm_rng_double(struct bm_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t bm_rng_below(struct bm_rng *r, uint64_t n);

/* Zipf: P(k) proportional to k^-s for k in 1..n. */
struct bm_zipf {
    uint64_t n;
    double s;
    double h_x1;  /* H(1.5) - h(1) */
    double h_n;   /* H(n + 0.5) */
    double sq;    /* squeeze threshold: accept without evaluating H when k - x <= sq */
};

/* Returns 0, or -1 if n == 0 or s <= 0 or s is not finite. */
int bm_zipf_init(struct bm_zipf *z, uint64_t n, double s);
uint64_t bm_zipf_draw(const struct bm_zipf *z, struct bm_rng *r); /* 1..n */

enum { KP_UNIFORM = 0, KP_SEQUENTIAL, KP_ZIPF };

#define BM_SEQ_BLOCK 1024

struct bm_keygen {
    int pattern;
    uint64_t n;               /* key space */
    struct bm_zipf zipf;
    struct bm_rng rng;
    _Atomic uint64_t *seq;    /* shared sequential counter */
    uint64_t seq_cur, seq_end;
};

/* pattern KP_*; seq is the shared counter for KP_SEQUENTIAL (may be NULL
 * otherwise).  Returns -1 on bad parameters. */
int bm_keygen_init(struct bm_keygen *g, int pattern, uint64_t n, double zipf_s, uint64_t seed,
                   _Atomic uint64_t *seq);
/* A key index in [0, n). Zipf rank 1 (the most frequent) is index 0. */
uint64_t bm_keygen_next(struct bm_keygen *g);

#endif
