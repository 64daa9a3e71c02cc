/* hnsw.c - see hnsw.h.
 *
 * Storage: every node is a fixed-size slot in a chunked slab (chunks of
 * `per` slots filling 1 MiB, one allocator size class exactly, so a chunk
 * wastes less than one slot; chunk 0 grows by doubling so a small set
 * stays small).  A slot is
 *
 *   header: payload, l2, then one u32 word: level, live, level-0 count
 *   level-0 links: 2*M u32 ids
 *   F32 and Q8 of more than HNSW_CODE_MINDIM dims: a dim-bit code (the
 *           signs of the rotated vector, code_of; Q8 of its int8 form)
 *   vector: F32 two planes of dim u16: the floats' high halves (bfloat16,
 *           truncated), then their low halves | Q8 f32 range, f32 1/|q|,
 *           dim int8 | BIN u64s
 *
 * Upper-level links (rare: a node reaches level 1 with probability 1/M)
 * are one small allocation per node, M+1 u32 per level (a word with the
 * count in its high half, then the ids), found through a small hash
 * table (id -> block), so the common slot carries no pointer for them.
 * A link block is addressed by its count word: count = word >> 16, ids
 * follow it.  No per-slot allocation and no pointer table: a node's
 * address is chunks[id / per] + (id % per) * slot size, the division done
 * by a multiply with a precomputed reciprocal (exact for 32-bit ids).
 * (Power-of-two chunks of slots were rounded up by the allocator to its
 * next large size class: 14% more memory with 656-byte slots.)
 *
 * Searches keep their state in thread-local scratch: visited tags (u16
 * epochs, cleared only when the epoch wraps), a candidate min-heap and a
 * result max-heap; the next neighbours' vectors are prefetched, and
 * without a filter the walk runs one expansion behind its prefetches
 * (search_layer_pipe).
 *
 * Distances: F32 1 - dot, walked on the high plane alone (half the bytes
 * of the floats: the walk is bound by memory traffic, a node's vector is
 * 6 KiB at 1536 dims) with the float query, each product within 2^-7 of
 * the exact one for unit vectors; the final candidates are re-ranked with
 * both planes (exact float32), as many as that bound says could still
 * enter the top k (see rerank_f32), so results and scores are exactly
 * float32's over the same candidates.  The planes cost no memory: hi and
 * lo together are the float.  BIN 2*hamming/dim (the query is binarised);
 * Q8 walks the graph with int8 x int8 products (the query quantised like
 * a stored vector, VNNI-fast) and re-ranks the final ef candidates with
 * the float query against the int8 vectors, which is more exact (the
 * measured best of both: the recall of the asymmetric product at the
 * speed of the symmetric one).  Q8 products are scaled by 1/|q| of each
 * side, i.e. taken between re-normalised dequantised vectors.
 *
 * Graph: new nodes pick M neighbours per level with the HNSW heuristic;
 * links are always bidirectional; a full node keeps the new link by
 * dropping a heuristic-dominated (redundant) one (try_link).  Drops never
 * split the graph, and deletes reconnect the former neighbours so they
 * stay in one piece (repair), so every live node stays reachable from the
 * entry point at level 0 (hnsw_check verifies it). */
#include "hnsw.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "vdist.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hnsw.c assumes a little-endian host (persistence format)"
#endif

/* F32 sets of up to this many dims keep no code and walk without the
 * screen: a 128-bit code is too loose an estimate to skip much, and the
 * 256-byte plane it would spare is not what the walk waits for.  Measured
 * in the server on 100,000 x 128 full-rank clusters (same graph, 1
 * client, alternating A/B runs): VSIM without the screen 2-6% more
 * queries/s at EF 40-500 with the same recall; VADD 10-12% faster in one
 * A/B and even in a noisier one, graph building 4-10% faster in-process;
 * on 50,000 x 256 build 3% faster and queries even.  At 1536 dims the screen
 * halves the work (see code_screen). */
#ifndef HNSW_CODE_MINDIM
#define HNSW_CODE_MINDIM 256
#endif
#define HNSW_MAGIC 0x57534e48u /* "HNSW" */
#define HNSW_VERSION 1u
#define HNSW_DEFAULT_EF 200u
#define HNSW_LOAD_MAX_DIM (1u << 20)
#define HNSW_LOAD_MAX_M 4096u
#define CHUNK_BYTES (1u << 20)

struct nhdr {
    void *payload;
    float l2;
    uint8_t level; /* these two and the level-0 count form the */
    uint8_t live;  /* level-0 block's count word (see LN) */
    uint16_t cnt0; /* never accessed by name */
};
_Static_assert(sizeof(struct nhdr) == 16, "node header is 16 bytes");

struct upent {
    uint32_t id;
    uint32_t *links;
};

/* Link blocks: lb[0] holds the count in its high 16 bits, lb[1..] ids. */
#define LN(lb) ((lb)[0] >> 16)
static inline void lset(uint32_t *lb, uint32_t n)
{
    lb[0] = (lb[0] & 0xFFFFu) | (n << 16);
}
static inline void lpush(uint32_t *lb, uint32_t id)
{
    uint32_t n = LN(lb);
    lb[1 + n] = id;
    lset(lb, n + 1);
}

struct hnsw {
    uint32_t dim, M, M0;
    int quant;
    uint32_t vbytes; /* stored vector bytes */
    uint32_t wbytes; /* of them, what the graph walk reads (F32: the high plane) */
    uint32_t nwords; /* BIN: 64-bit words */
    uint32_t nsize;  /* slot bytes */
    uint32_t voff;   /* vector offset in a slot */
    uint32_t cbytes; /* F32, Q8 of over HNSW_CODE_MINDIM dims: the sign-bit code's bytes, just before the vector */
    uint32_t rdim;   /* with a code: dim rounded up to a power of two (the rotation's size) */
    uint64_t *rsign; /* with a code: HNSW_ROT_ROUNDS x rdim random signs, one bit each */
    uint32_t per;    /* slots per chunk (>= 2) */
    uint64_t recip;  /* floor((2^64 - 1) / per) + 1: id / per = (recip * id) >> 64 */
    uint32_t cap0;   /* slots allocated in chunk 0 */
    uint8_t **chunks;
    uint32_t nchunks; /* table size */
    uint32_t max_id;
    uint64_t count;
    uint32_t *freeids;
    uint32_t nfree, free_cap;
    uint32_t entry;
    int max_level;
    struct upent *up; /* open addressing, linear probing */
    uint32_t upcap, upn, upbits;
    uint64_t rng;
    double mult;
    size_t mem;
};

/* ------------------------------------------------------------ slots --- */

static inline uint32_t chunk_of(const struct hnsw *h, uint32_t id)
{
    return (uint32_t)(((unsigned __int128)h->recip * id) >> 64);
}

static inline uint8_t *slot(const struct hnsw *h, uint32_t id)
{
    uint32_t c = chunk_of(h, id);
    return h->chunks[c] + (size_t)(id - c * h->per) * h->nsize;
}

static inline struct nhdr *hdr(const struct hnsw *h, uint32_t id)
{
    return (struct nhdr *)(void *)slot(h, id);
}

static inline uint32_t up_hash(const struct hnsw *h, uint32_t id)
{
    return (uint32_t)((id * 0x9E3779B1u) >> (32 - h->upbits));
}

static uint32_t *up_get(const struct hnsw *h, uint32_t id)
{
    if (!h->upcap)
        return NULL;
    uint32_t mask = h->upcap - 1;
    for (uint32_t i = up_hash(h, id);; i = (i + 1) & mask) {
        if (!h->up[i].links)
            return NULL;
        if (h->up[i].id == id)
            return h->up[i].links;
    }
}

static void up_put(struct hnsw *h, uint32_t id, uint32_t *links)
{
    if ((h->upn + 1) * 2 > h->upcap) {
        struct upent *old = h->up;
        uint32_t oldcap = h->upcap;
        h->upbits = h->upbits ? h->upbits + 1 : 4;
        h->upcap = 1u << h->upbits;
        h->up = hk_calloc((size_t)h->upcap * sizeof(*h->up));
        h->mem += (size_t)(h->upcap - oldcap) * sizeof(*h->up);
        h->upn = 0;
        for (uint32_t i = 0; i < oldcap; i++)
            if (old[i].links)
                up_put(h, old[i].id, old[i].links);
        hk_free(old);
    }
    uint32_t mask = h->upcap - 1, i = up_hash(h, id);
    while (h->up[i].links)
        i = (i + 1) & mask;
    h->up[i].id = id;
    h->up[i].links = links;
    h->upn++;
}

/* Remove id's entry (backward-shift deletion); returns its block. */
static uint32_t *up_del(struct hnsw *h, uint32_t id)
{
    if (!h->upcap)
        return NULL;
    uint32_t mask = h->upcap - 1, i = up_hash(h, id);
    while (h->up[i].links && h->up[i].id != id)
        i = (i + 1) & mask;
    uint32_t *links = h->up[i].links;
    if (!links)
        return NULL;
    for (uint32_t j = (i + 1) & mask; h->up[j].links; j = (j + 1) & mask) {
        uint32_t home = up_hash(h, h->up[j].id);
        /* move j into the hole at i unless its home lies in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            h->up[i] = h->up[j];
            i = j;
        }
    }
    h->up[i].links = NULL;
    h->upn--;
    return links;
}

static inline uint32_t *lblock_s(const struct hnsw *h, uint8_t *s, uint32_t id, int level)
{
    if (level == 0)
        return (uint32_t *)(void *)(s + 12);
    return up_get(h, id) + (size_t)(level - 1) * (h->M + 1);
}

static inline uint32_t *lblock(const struct hnsw *h, uint32_t id, int level)
{
    if (level == 0)
        return (uint32_t *)(void *)(slot(h, id) + 12);
    return up_get(h, id) + (size_t)(level - 1) * (h->M + 1);
}

static inline const uint8_t *vecp(const struct hnsw *h, uint32_t id)
{
    return slot(h, id) + h->voff;
}

/* F32 planes of a stored vector. */
static inline const uint16_t *hi_plane(const uint8_t *v)
{
    return (const uint16_t *)(const void *)v;
}

static inline const uint16_t *lo_plane(const struct hnsw *h, const uint8_t *v)
{
    return (const uint16_t *)(const void *)v + h->dim;
}

/* v: dim floats, any alignment. */
static void split_store(uint32_t dim, const void *v, uint8_t *dst)
{
    uint16_t *hi = (uint16_t *)(void *)dst, *lo = hi + dim;
    for (uint32_t i = 0; i < dim; i++) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)v + 4 * (size_t)i, 4);
        hi[i] = (uint16_t)(u >> 16);
        lo[i] = (uint16_t)u;
    }
}

/* out: dim floats, any alignment. */
static void split_load(uint32_t dim, const uint8_t *src, void *out)
{
    const uint16_t *hi = (const uint16_t *)(const void *)src, *lo = hi + dim;
    for (uint32_t i = 0; i < dim; i++) {
        uint32_t u = ((uint32_t)hi[i] << 16) | lo[i];
        memcpy((uint8_t *)out + 4 * (size_t)i, &u, 4);
    }
}

static inline uint32_t lcap(const struct hnsw *h, int level)
{
    return level == 0 ? h->M0 : h->M;
}

/* Make slot id (== max_id or a load hole) addressable. */
static void ensure_slot(struct hnsw *h, uint32_t id)
{
    uint32_t c = chunk_of(h, id);
    uint32_t per = h->per;
    if (c >= h->nchunks) {
        uint32_t n = h->nchunks ? h->nchunks : 4;
        while (n <= c)
            n *= 2;
        h->chunks = hk_realloc(h->chunks, (size_t)n * sizeof(*h->chunks));
        memset(h->chunks + h->nchunks, 0, (size_t)(n - h->nchunks) * sizeof(*h->chunks));
        h->mem += (size_t)(n - h->nchunks) * sizeof(*h->chunks);
        h->nchunks = n;
    }
    if (c == 0) {
        if (id < h->cap0)
            return;
        uint32_t n = h->cap0 ? h->cap0 * 2 : 8;
        while (n <= id)
            n *= 2;
        if (n > per)
            n = per;
        h->chunks[0] = hk_realloc(h->chunks[0], (size_t)n * h->nsize);
        h->mem += (size_t)(n - h->cap0) * h->nsize;
        h->cap0 = n;
    } else if (!h->chunks[c]) {
        h->chunks[c] = hk_malloc((size_t)per * h->nsize);
        h->mem += (size_t)per * h->nsize;
    }
}

/* ---------------------------------------------------------- scratch --- */

struct hq {
    float d;
    uint32_t id;
};

struct scratch {
    uint16_t *tags;
    uint32_t ntags;
    uint16_t epoch;
    struct hq *cand, *res, *w, *rk;
    uint32_t ccap, rcap, wcap, rkcap;
    uint32_t *ids;
    uint32_t idscap;
    float *fbuf;
    uint32_t fcap;
    uint64_t *bits;
    uint32_t bcap;
    float *raw; /* hnsw_raw's reassembled F32 vector */
    uint32_t rawcap;
    float *rot; /* code_of's rotation buffer */
    uint32_t rotcap;
    float *q8f; /* q8_code's dequantised vector */
    uint32_t q8fcap;
    uint64_t *q8q; /* a Q8 query's quantised form */
    uint32_t q8qcap;
    int reg; /* the thread-exit destructor is armed */
};

static _Thread_local struct scratch tl;

/* Every thread that searched frees its scratch when it exits (workers
 * come and go with the server; LeakSanitizer checks it). */
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_destroy(void *arg)
{
    (void)arg;
    hnsw_thread_cleanup();
}

static void tl_key_init(void)
{
    pthread_key_create(&tl_key, tl_destroy);
}

static inline void tl_arm(void)
{
    if (!tl.reg) {
        pthread_once(&tl_once, tl_key_init);
        pthread_setspecific(tl_key, &tl);
        tl.reg = 1;
    }
}

void hnsw_thread_cleanup(void)
{
    hk_free(tl.tags);
    hk_free(tl.cand);
    hk_free(tl.res);
    hk_free(tl.w);
    hk_free(tl.rk);
    hk_free(tl.ids);
    hk_free(tl.fbuf);
    hk_free(tl.bits);
    hk_free(tl.raw);
    hk_free(tl.rot);
    hk_free(tl.q8f);
    hk_free(tl.q8q);
    memset(&tl, 0, sizeof(tl));
}

static void *grow(void *p, uint32_t *cap, size_t need, size_t elsz)
{
    if (need <= *cap)
        return p;
    tl_arm();
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    *cap = (uint32_t)n;
    return hk_realloc(p, n * elsz);
}

static uint16_t visit_begin(uint32_t max_id)
{
    if (tl.ntags < max_id) {
        uint32_t n = tl.ntags ? tl.ntags : 1024;
        while (n < max_id)
            n = n > UINT32_MAX / 2 ? UINT32_MAX : n * 2;
        tl_arm();
        tl.tags = hk_realloc(tl.tags, (size_t)n * sizeof(uint16_t));
        memset(tl.tags + tl.ntags, 0, (size_t)(n - tl.ntags) * sizeof(uint16_t));
        tl.ntags = n;
    }
    if (++tl.epoch == 0) {
        memset(tl.tags, 0, (size_t)tl.ntags * sizeof(uint16_t));
        tl.epoch = 1;
    }
    return tl.epoch;
}

/* ------------------------------------------------------------ heaps --- */

static inline void minh_push(struct hq *a, uint32_t *n, float d, uint32_t id)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) >> 1;
        if (a[p].d <= d)
            break;
        a[i] = a[p];
        i = p;
    }
    a[i].d = d;
    a[i].id = id;
}

static inline void minh_pop(struct hq *a, uint32_t *n)
{
    uint32_t m = --(*n);
    if (m == 0)
        return;
    struct hq x = a[m];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && a[c + 1].d < a[c].d)
            c++;
        if (x.d <= a[c].d)
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

static inline void maxh_push(struct hq *a, uint32_t *n, float d, uint32_t id)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) >> 1;
        if (a[p].d >= d)
            break;
        a[i] = a[p];
        i = p;
    }
    a[i].d = d;
    a[i].id = id;
}

static inline void maxh_pop(struct hq *a, uint32_t *n)
{
    uint32_t m = --(*n);
    if (m == 0)
        return;
    struct hq x = a[m];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && a[c + 1].d > a[c].d)
            c++;
        if (x.d >= a[c].d)
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

/* A float's bits as an unsigned key in the same order. */
static inline uint32_t fkey(float d)
{
    uint32_t u;
    memcpy(&u, &d, 4);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* Empty the max-heap res (n items) into out in ascending order.  Small
 * heaps pop; larger ones (graph building's ef 200 candidates) sort with a
 * least-significant-digit radix sort on the distances' bits, 8 bits a
 * pass (4 passes of n moves instead of n pops of log n unpredictable
 * compares), stable, res as the scratch array. */
static void maxh_drain(struct hq *res, uint32_t n, struct hq *out)
{
    if (n < 64) {
        while (n) {
            out[n - 1] = res[0];
            maxh_pop(res, &n);
        }
        return;
    }
    struct hq *src = res, *dst = out;
    for (int shift = 0; shift < 32; shift += 8) {
        uint32_t cnt[256] = {0};
        for (uint32_t i = 0; i < n; i++)
            cnt[(fkey(src[i].d) >> shift) & 255]++;
        uint32_t sum = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++)
            dst[cnt[(fkey(src[i].d) >> shift) & 255]++] = src[i];
        struct hq *t = src;
        src = dst;
        dst = t;
    }
    /* four passes: the sorted run is back in res */
    memcpy(out, src, (size_t)n * sizeof(*out));
}

/* -------------------------------------------------------- distances --- */

/* A query in the form the distance needs: the float vector (F32, Q8 is
 * asymmetric: float query against int8 stored), or sign bits (BIN). */
struct qctx {
    const float *f;
    const uint64_t *bits;
    const uint8_t *q8;
};


/* A Q8 vector: f32 range (max |component|, what VEMB RAW reports), f32
 * scale = 1/|q| (range/127 divided by the norm of the dequantised vector,
 * so that dot products come out normalised), then dim int8 q. */
#define Q8_HDR 8

static inline float q8_range(const uint8_t *v)
{
    float r;
    memcpy(&r, v, sizeof(r));
    return r;
}

static inline float q8_scale(const uint8_t *v)
{
    float r;
    memcpy(&r, v + 4, sizeof(r));
    return r;
}

static float q8_compute_scale(const uint8_t *v, uint32_t dim)
{
    const int8_t *q = (const int8_t *)(v + Q8_HDR);
    int64_t ss = 0;
    for (uint32_t i = 0; i < dim; i++)
        ss += (int32_t)q[i] * q[i];
    if (ss == 0)
        return 0;
    return (float)(1.0 / sqrt((double)ss)); /* (range/127) / |q * range/127| */
}

/* Q8 with the float query against the int8 vector: more exact than the
 * int8 x int8 product the graph walk uses (measured: same recall at low
 * ef, better at high ef, but slower), so the final candidates are
 * re-ranked with it. */
static inline float q8_asym(const struct hnsw *h, const float *q, const uint8_t *v)
{
    return 1.0f - vd_dot_f32_i8(q, (const int8_t *)(v + Q8_HDR), h->dim) * q8_scale(v);
}

static inline float ndist(const struct hnsw *h, const uint8_t *a, const uint8_t *b);
static void store_vector(const struct hnsw *h, const float *v, uint8_t *dst);

static inline float qdist(const struct hnsw *h, const struct qctx *q, const uint8_t *v)
{
    switch (h->quant) {
    case HNSW_F32:
        return 1.0f - vd_dot_f32_bf16(q->f, hi_plane(v), h->dim);
    case HNSW_Q8:
        return ndist(h, q->q8, v);
    default:
        return 2.0f * (float)vd_hamming(q->bits, (const uint64_t *)(const void *)v, h->nwords) / (float)h->dim;
    }
}

static inline float ndist(const struct hnsw *h, const uint8_t *a, const uint8_t *b)
{
    switch (h->quant) {
    case HNSW_F32:
        return 1.0f - vd_dot_bf16(hi_plane(a), hi_plane(b), h->dim);
    case HNSW_Q8: {
        float s = q8_scale(a) * q8_scale(b);
        return 1.0f - (float)vd_dot_i8((const int8_t *)(a + Q8_HDR), (const int8_t *)(b + Q8_HDR), h->dim) * s;
    }
    default:
        return 2.0f * (float)vd_hamming((const uint64_t *)(const void *)a, (const uint64_t *)(const void *)b,
                                        h->nwords) /
               (float)h->dim;
    }
}

/* The most precise distance the stored form allows: exact float32 for
 * F32, the float query against the int8 vector for Q8. */
static inline float xdist(const struct hnsw *h, const struct qctx *q, const uint8_t *v)
{
    switch (h->quant) {
    case HNSW_F32:
        return 1.0f - vd_dot_f32_split(q->f, hi_plane(v), lo_plane(h, v), h->dim);
    case HNSW_Q8:
        return q8_asym(h, q->f, v);
    default:
        return qdist(h, q, v);
    }
}

static void quantize_bits(const struct hnsw *h, const float *v, uint64_t *out)
{
    memset(out, 0, (size_t)h->nwords * 8);
    for (uint32_t i = 0; i < h->dim; i++)
        if (v[i] > 0)
            out[i >> 6] |= 1ULL << (i & 63);
}

/* F32 codes: the sign bits of the vector after a fixed pseudo-random
 * rotation (HNSW_ROT_ROUNDS rounds of random sign flips and a
 * Walsh-Hadamard transform over the vector zero-padded to rdim, then the
 * first dim outputs).  Signs of random projections make the fraction of
 * differing bits estimate angle / pi for any data (random-hyperplane
 * hashing); the raw coordinates' signs would not, for example when every
 * vector shares a large common component, as real embeddings do. */
#define HNSW_ROT_ROUNDS 2

/* 64-bit words of one round's signs. */
static inline size_t rsign_words(uint32_t rdim)
{
    return rdim / 64 ? rdim / 64 : 1;
}

typedef float v4f __attribute__((vector_size(16), aligned(4)));

/* In place, unnormalised; n a power of two.  Four lanes at a time from
 * the stride of 4 up (SSE2, the x86-64 baseline, or any target's
 * generic vectors). */
static void fwht(float *x, uint32_t n)
{
    uint32_t len = 1;
    for (; len < n && len < 4; len <<= 1)
        for (uint32_t i = 0; i < n; i += 2 * len)
            for (uint32_t j = i; j < i + len; j++) {
                float a = x[j], b = x[j + len];
                x[j] = a + b;
                x[j + len] = a - b;
            }
    for (; len < n; len <<= 1)
        for (uint32_t i = 0; i < n; i += 2 * len)
            for (uint32_t j = i; j < i + len; j += 4) {
                v4f a = *(v4f *)(void *)(x + j), b = *(v4f *)(void *)(x + j + len);
                *(v4f *)(void *)(x + j) = a + b;
                *(v4f *)(void *)(x + j + len) = a - b;
            }
}

static void code_of(const struct hnsw *h, const float *v, uint64_t *out)
{
    uint32_t n = h->rdim;
    tl.rot = grow(tl.rot, &tl.rotcap, n, sizeof(float));
    float *x = tl.rot;
    memcpy(x, v, (size_t)h->dim * sizeof(float));
    memset(x + h->dim, 0, (size_t)(n - h->dim) * sizeof(float));
    for (uint32_t r = 0; r < HNSW_ROT_ROUNDS; r++) {
        const uint64_t *sg = h->rsign + (size_t)r * rsign_words(n);
        for (uint32_t i = 0; i < n; i++)
            if ((sg[i >> 6] >> (i & 63)) & 1)
                x[i] = -x[i];
        fwht(x, n);
    }
    memset(out, 0, (size_t)h->nwords * 8);
    for (uint32_t i = 0; i < h->dim; i++)
        if (x[i] > 0)
            out[i >> 6] |= 1ULL << (i & 63);
}

/* The code of a stored Q8 vector v: code_of over its int8 components
 * (the sign code ignores scale), so a set computes the same codes when
 * it inserts a vector and when it loads it.  Q8 sets keep the code above
 * HNSW_CODE_MINDIM dims as F32 sets do (a 1536-dim int8 product streams
 * 1.5 KiB; the code is 192 bytes): measured in-process on 20,000 x 1536
 * (bench/hnsw_inproc.c with a Q8 set, alternating builds), queries
 * 10-43% faster at EF 40-500 (EF 150: 252-275 -> 157-174 us; EF 500:
 * 926-1034 -> 526-742 us) with recall@10 equal or higher, inserts up to
 * 20% faster, 192 bytes more per element (still below Redis 8's Q8). */
static void q8_code(const struct hnsw *h, const uint8_t *v, uint64_t *out)
{
    tl.q8f = grow(tl.q8f, &tl.q8fcap, h->dim, sizeof(float));
    const int8_t *q = (const int8_t *)(v + Q8_HDR);
    for (uint32_t i = 0; i < h->dim; i++)
        tl.q8f[i] = (float)q[i];
    code_of(h, tl.q8f, out);
}

static void q8_store(const struct hnsw *h, const float *v, uint8_t *dst);

/* Store v in its quantised form at dst (and its code before it). */
static void store_vector(const struct hnsw *h, const float *v, uint8_t *dst)
{
    switch (h->quant) {
    case HNSW_F32:
        split_store(h->dim, v, dst);
        if (h->cbytes)
            code_of(h, v, (uint64_t *)(void *)(dst - h->cbytes));
        break;
    case HNSW_Q8:
        q8_store(h, v, dst);
        if (h->cbytes)
            q8_code(h, dst, (uint64_t *)(void *)(dst - h->cbytes));
        break;
    default:
        quantize_bits(h, v, (uint64_t *)(void *)dst);
        break;
    }
}

/* v quantised to a Q8 vector at dst. */
static void q8_store(const struct hnsw *h, const float *v, uint8_t *dst)
{
    float r = 0;
    for (uint32_t i = 0; i < h->dim; i++) {
        float a = fabsf(v[i]);
        if (a > r)
            r = a;
    }
    memcpy(dst, &r, sizeof(r));
    int8_t *q = (int8_t *)(dst + Q8_HDR);
    for (uint32_t i = 0; i < h->dim; i++) {
        float x = r > 0 ? v[i] / r * 127.0f : 0.0f;
        long t = lrintf(x);
        if (t > 127)
            t = 127;
        if (t < -127)
            t = -127;
        q[i] = (int8_t)t;
    }
    float sc = q8_compute_scale(dst, h->dim);
    memcpy(dst + 4, &sc, sizeof(sc));
}

/* Set up q for the float query v (BIN quantises into scratch). */
static void qctx_init(const struct hnsw *h, struct qctx *q, const float *v)
{
    q->f = v;
    q->bits = NULL;
    if (h->quant == HNSW_BIN || h->cbytes) {
        tl.bits = grow(tl.bits, &tl.bcap, h->nwords, sizeof(uint64_t));
        if (h->quant != HNSW_BIN)
            code_of(h, v, tl.bits);
        else
            quantize_bits(h, v, tl.bits);
        q->bits = tl.bits;
    }
    q->q8 = NULL;
    if (h->quant == HNSW_Q8) {
        tl.q8q = grow(tl.q8q, &tl.q8qcap, (h->vbytes + 7) / 8, sizeof(uint64_t));
        q8_store(h, v, (uint8_t *)tl.q8q);
        q->q8 = (const uint8_t *)tl.q8q;
    }
}

/* ---------------------------------------------------------- create --- */

static void layout(struct hnsw *h)
{
    h->M0 = 2 * h->M;
    switch (h->quant) {
    case HNSW_F32:
        h->vbytes = h->dim * 4;
        break;
    case HNSW_Q8:
        h->vbytes = Q8_HDR + h->dim;
        break;
    default:
        h->nwords = (h->dim + 63) / 64;
        h->vbytes = h->nwords * 8;
        break;
    }
    h->wbytes = h->quant == HNSW_F32 ? h->dim * 2 : h->vbytes;
    h->voff = (uint32_t)sizeof(struct nhdr) + 4 * h->M0;
    if (h->quant == HNSW_BIN || h->quant == HNSW_F32)
        h->voff = (h->voff + 7) & ~7u;
    h->cbytes = 0;
    if ((h->quant == HNSW_F32 || h->quant == HNSW_Q8) && h->dim > HNSW_CODE_MINDIM) {
        h->voff = (h->voff + 7) & ~7u;
        h->nwords = (h->dim + 63) / 64;
        h->cbytes = h->nwords * 8;
        h->voff += h->cbytes;
    }
    h->nsize = (h->voff + h->vbytes + 7) & ~7u;
    uint32_t per = CHUNK_BYTES / h->nsize;
    if (per < 2)
        per = 2;
    h->per = per;
    h->recip = UINT64_MAX / per + 1;
    h->mult = 1.0 / log((double)(h->M > 2 ? h->M : 2));
}

static uint64_t rng_next(uint64_t *s);

static struct hnsw *hnsw_alloc(uint32_t dim, int quant, uint32_t M)
{
    struct hnsw *h = hk_calloc(sizeof(*h));
    h->dim = dim;
    h->quant = quant;
    h->M = M;
    h->entry = HNSW_NONE;
    h->max_level = -1;
    h->rng = 0x2545F4914F6CDD1DULL ^ ((uint64_t)dim << 32) ^ M;
    layout(h);
    h->mem = sizeof(*h);
    if (h->cbytes) {
        uint32_t n = 1;
        while (n < dim)
            n <<= 1;
        h->rdim = n;
        size_t words = HNSW_ROT_ROUNDS * rsign_words(n);
        h->rsign = hk_malloc(words * 8);
        uint64_t st = 0x9E3779B97F4A7C15ULL ^ n; /* fixed: codes are rebuilt on load, but keep them stable */
        for (size_t i = 0; i < words; i++)
            h->rsign[i] = rng_next(&st);
        h->mem += words * 8;
    }
    return h;
}

struct hnsw *hnsw_new(uint32_t dim, int quant, uint32_t M)
{
    if (dim == 0 || M < 2 || M > HNSW_LOAD_MAX_M || (quant != HNSW_F32 && quant != HNSW_Q8 && quant != HNSW_BIN))
        return NULL;
    return hnsw_alloc(dim, quant, M);
}

void hnsw_free(struct hnsw *h)
{
    if (!h)
        return;
    for (uint32_t i = 0; i < h->upcap; i++)
        hk_free(h->up[i].links);
    hk_free(h->up);
    for (uint32_t c = 0; c < h->nchunks; c++)
        hk_free(h->chunks[c]);
    hk_free(h->chunks);
    hk_free(h->freeids);
    hk_free(h->rsign);
    hk_free(h);
}

uint32_t hnsw_dim(const struct hnsw *h) { return h->dim; }
int hnsw_quant(const struct hnsw *h) { return h->quant; }
uint32_t hnsw_m(const struct hnsw *h) { return h->M; }
uint64_t hnsw_count(const struct hnsw *h) { return h->count; }
uint32_t hnsw_max_id(const struct hnsw *h) { return h->max_id; }
int hnsw_max_level(const struct hnsw *h) { return h->max_level; }
uint32_t hnsw_entry(const struct hnsw *h) { return h->entry; }
size_t hnsw_mem(const struct hnsw *h) { return h->mem; }

int hnsw_exists(const struct hnsw *h, uint32_t id)
{
    return id < h->max_id && hdr(h, id)->live;
}

void *hnsw_payload(const struct hnsw *h, uint32_t id)
{
    return hnsw_exists(h, id) ? hdr(h, id)->payload : NULL;
}

void hnsw_set_payload(struct hnsw *h, uint32_t id, void *payload)
{
    if (hnsw_exists(h, id))
        hdr(h, id)->payload = payload;
}

int hnsw_node_level(const struct hnsw *h, uint32_t id)
{
    return hnsw_exists(h, id) ? hdr(h, id)->level : -1;
}

uint32_t hnsw_links(const struct hnsw *h, uint32_t id, int level, const uint32_t **links)
{
    if (links)
        *links = NULL;
    if (!hnsw_exists(h, id) || level < 0 || level > hdr(h, id)->level)
        return 0;
    const uint32_t *lb = lblock(h, id, level);
    if (links)
        *links = lb + 1;
    return LN(lb);
}

float hnsw_get_vector(const struct hnsw *h, uint32_t id, float *out)
{
    if (!hnsw_exists(h, id))
        return 0;
    const uint8_t *v = vecp(h, id);
    switch (h->quant) {
    case HNSW_F32:
        split_load(h->dim, v, out);
        break;
    case HNSW_Q8: {
        float s = q8_range(v) / 127.0f;
        const int8_t *q = (const int8_t *)(v + Q8_HDR);
        for (uint32_t i = 0; i < h->dim; i++)
            out[i] = (float)q[i] * s;
        break;
    }
    default: {
        float a = 1.0f / sqrtf((float)h->dim);
        const uint64_t *b = (const uint64_t *)(const void *)v;
        for (uint32_t i = 0; i < h->dim; i++)
            out[i] = (b[i >> 6] >> (i & 63)) & 1 ? a : -a;
        break;
    }
    }
    return hdr(h, id)->l2;
}

const void *hnsw_raw(const struct hnsw *h, uint32_t id, size_t *len, float *range)
{
    if (range)
        *range = 0;
    if (!hnsw_exists(h, id)) {
        if (len)
            *len = 0;
        return NULL;
    }
    const uint8_t *v = vecp(h, id);
    if (h->quant == HNSW_Q8) {
        if (range)
            *range = q8_range(v);
        if (len)
            *len = h->dim;
        return v + Q8_HDR;
    }
    if (len)
        *len = h->vbytes;
    if (h->quant == HNSW_F32) {
        tl.raw = grow(tl.raw, &tl.rawcap, h->dim, sizeof(float));
        split_load(h->dim, v, tl.raw);
        return tl.raw;
    }
    return v;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

uint32_t hnsw_random_node(const struct hnsw *h, uint64_t rnd)
{
    if (h->count == 0)
        return HNSW_NONE;
    uint64_t s = rnd | 1;
    uint32_t id = 0;
    for (int i = 0; i < 64; i++) {
        id = (uint32_t)(rng_next(&s) % h->max_id);
        if (hdr(h, id)->live)
            return id;
    }
    for (uint32_t i = 0; i < h->max_id; i++) {
        uint32_t j = (id + i) % h->max_id;
        if (hdr(h, j)->live)
            return j;
    }
    return HNSW_NONE;
}

/* ----------------------------------------------------------- search --- */

#ifndef HNSW_PF_AHEAD
#define HNSW_PF_AHEAD 1
#endif
/* Vectors whose code and walked bytes fit in this many bytes (up to
 * about 480 dims for F32) are prefetched whole for every new neighbour
 * of an expanded node at once, before the screen reads their codes: one
 * round of memory latency per expansion instead of one for the codes
 * and then one per neighbour.  Measured in-process on 100,000 x 128
 * (bench/hnsw_inproc.c, same graph, alternating runs): 22-28% less time
 * per query at EF 40-500, and inserts 20% faster.  Larger vectors keep
 * the code-first order, which skips reading most of them (at 1536 dims
 * deeper prefetching measured no different: the hardware prefetcher
 * streams a 3 KiB plane once it is started). */
#ifndef HNSW_PF_ALL
#define HNSW_PF_ALL 1024
#endif
#ifndef HNSW_PF_LINES
#define HNSW_PF_LINES 2
#endif

static inline void prefetch_vec(const struct hnsw *h, const uint8_t *v)
{
    uint32_t lines = (h->wbytes + 63) / 64;
    if (lines > HNSW_PF_LINES)
        lines = HNSW_PF_LINES;
    for (uint32_t i = 0; i < lines; i++)
        __builtin_prefetch(v + 64 * i);
}

/* Graph building screens too: the candidates an insert links to are its
 * nearest, which the screen keeps; measured on 20,000 x 1536 clustered
 * vectors, the build took half the time (22 -> 11 s) for a graph of the
 * same recall and query cost, and on full-rank clusters the same recall
 * at EF 40..150. */
#ifndef HNSW_BUILD_SCREEN
#define HNSW_BUILD_SCREEN 1
#endif
#ifndef HNSW_CODE_Z
#define HNSW_CODE_Z 2.5f
#endif

/* F32 and Q8 sets keep a code per vector (code_of: dim bits, 192 bytes at
 * 1536 dims, 1/32 of the floats, 1/8 of the int8 vector) whose fraction of
 * differing bits estimates
 * angle / pi, so it tells cheaply which neighbours
 * are far beyond the current ef-th result; those are not worth reading
 * 3 KiB for.  Keeps the ids in todo[0..m) whose hamming distance to the
 * query's code is at most that of a vector at distance `worst` plus
 * HNSW_CODE_Z standard deviations of the count (sqrt(dim)/2 bits: each
 * bit differs with probability at most 1/2), and returns their number.
 * Only used once ef results are held: before that every neighbour enters
 * anyway.  z is HNSW_CODE_Z for ef up to 100 and shrinks beyond: a
 * neighbour wrongly skipped at the edge of a deep candidate list is far
 * from the top k the query asks for (measured on full-rank 1536-dim
 * clusters: recall@10 unchanged at every EF from 40 to 500, and with
 * z = 0 at EF 500, but lower with z = 1 at EF 40).  It shrinks as
 * 100 / ef for codes of 512 bits or more, as sqrt(100 / ef) for shorter
 * ones: on 20,000 x 1536 (latent 64, latent 256 and full-rank clusters)
 * 100 / ef computes 16-30% fewer distances at EF 500 with recall@10 still
 * 1.0 at EF 150-500, while 128-bit codes lost recall with it (0.9990 at
 * EF 300 on 100,000 x 128 full-rank clusters, 1.0 with the square root). */

static uint32_t code_screen(const struct hnsw *h, const struct qctx *q, uint32_t *todo, uint32_t m, float worst,
                            float z)
{
    if (worst >= 2.0f)
        return m;
    float hm = (float)h->dim * acosf(1.0f - worst) * (float)(1.0 / M_PI) + z * 0.5f * sqrtf((float)h->dim);
    if (hm >= (float)h->dim)
        return m;
    uint32_t hmax = (uint32_t)hm;
    for (uint32_t j = 0; j < m; j++) {
        const uint8_t *c = slot(h, todo[j]) + h->voff - h->cbytes;
        for (uint32_t o = 0; o < h->cbytes; o += 64)
            __builtin_prefetch(c + o);
    }
    uint32_t k = 0;
    for (uint32_t j = 0; j < m; j++) {
        const uint8_t *c = slot(h, todo[j]) + h->voff - h->cbytes;
        if (vd_hamming(q->bits, (const uint64_t *)(const void *)c, h->nwords) <= hmax)
            todo[k++] = todo[j];
    }
    return k;
}

/* z for a search of depth ef (see code_screen). */
static inline float screen_z(const struct hnsw *h, uint32_t ef)
{
    if (ef <= 100)
        return HNSW_CODE_Z;
    float r = 100.0f / (float)ef;
    return HNSW_CODE_Z * (h->dim >= 512 ? r : sqrtf(r));
}

/* Greedy walk at an upper level towards q. */
static uint32_t greedy(const struct hnsw *h, const struct qctx *q, uint32_t ep, float *epd, int level)
{
    int changed = 1;
    while (changed) {
        changed = 0;
        const uint32_t *lb = lblock(h, ep, level);
        uint32_t n = LN(lb);
        for (uint32_t i = 0; i < n; i++)
            prefetch_vec(h, vecp(h, lb[1 + i]));
        for (uint32_t i = 0; i < n; i++) {
            float d = qdist(h, q, vecp(h, lb[1 + i]));
            if (d < *epd) {
                *epd = d;
                ep = lb[1 + i];
                changed = 1;
            }
        }
    }
    return ep;
}

#ifndef HNSW_PIPE
#define HNSW_PIPE 1
#endif

/* search_layer without a filter, one expansion behind: each turn pops
 * the best candidate, marks its new neighbours and prefetches them (small
 * vectors, up to HNSW_PF_ALL, whole; else the code, or the first lines of
 * the vector when there is no code), then computes the distances of the
 * neighbours the previous turn prefetched, which have had a whole turn to
 * arrive (large vectors: screened by their codes first, then each
 * survivor's vector prefetched one ahead, as in search_layer).  In
 * search_layer's order the first read of every expansion waits for
 * memory; here the wait overlaps the next expansion's link reads.  The
 * walk differs only in that a candidate is chosen before the previous
 * expansion's neighbours are in the heaps; the stop test is taken only
 * with none pending, so no neighbour is left out.  Measured in-process
 * (bench/hnsw_inproc.c, same graph, alternating runs): on 100,000 x 128
 * 10-20% less time per query at EF 40-500 (EF 500 231-244 -> 194-195 us)
 * with recall@10 equal or higher (EF 40 0.9500 -> 0.9556), inserts 10%
 * faster (138 -> 124 us); on 50,000 x 256 the same; on 20,000 x 1536
 * NOQUANT 4-8% less per query and inserts 3-4% faster, same recall; 1536
 * Q8 unchanged (its int8 products are the cost). */
static uint32_t search_layer_pipe(const struct hnsw *h, const struct qctx *q, uint32_t ep, float epd, uint32_t ef,
                                  int level, int screen)
{
    uint16_t tag = visit_begin(h->max_id);
    uint16_t *tags = tl.tags;
    float z = screen_z(h, ef);
    tl.res = grow(tl.res, &tl.rcap, (size_t)ef + 2, sizeof(struct hq));
    tl.cand = grow(tl.cand, &tl.ccap, (size_t)ef + h->M0 + 2, sizeof(struct hq));
    tl.ids = grow(tl.ids, &tl.idscap, (size_t)2 * h->M0, sizeof(uint32_t));
    struct hq *res = tl.res, *cand = tl.cand;
    uint32_t *pend = tl.ids, *todo = tl.ids + h->M0;
    uint32_t nc = 0, nr = 0, np = 0;
    uint32_t span = h->cbytes + h->wbytes, pfall = span <= HNSW_PF_ALL;
    tags[ep] = tag;
    minh_push(cand, &nc, epd, ep);
    maxh_push(res, &nr, epd, ep);
    for (;;) {
        uint32_t m = 0;
        if (nc && !(nr >= ef && cand[0].d > res[0].d)) {
            struct hq c = cand[0];
            minh_pop(cand, &nc);
            const uint32_t *lb = lblock(h, c.id, level);
            for (uint32_t i = 0, n = LN(lb); i < n; i++) {
                uint32_t nb = lb[1 + i];
                if (tags[nb] == tag)
                    continue;
                tags[nb] = tag;
                todo[m++] = nb;
                const uint8_t *v = slot(h, nb) + h->voff - h->cbytes;
                if (pfall) {
                    for (uint32_t o = 0; o < span; o += 64)
                        __builtin_prefetch(v + o);
                    __builtin_prefetch(v + span - 1);
                } else if (h->cbytes) {
                    for (uint32_t o = 0; o < h->cbytes; o += 64)
                        __builtin_prefetch(v + o);
                } else {
                    prefetch_vec(h, v);
                }
            }
            if (nc) {
                const uint8_t *ns = slot(h, cand[0].id) + 12;
                for (uint32_t o = 0; o < 4 * (h->M0 + 1); o += 64)
                    __builtin_prefetch(ns + o);
                __builtin_prefetch(ns + 4 * (h->M0 + 1) - 1);
            }
        } else if (!np) {
            break;
        }
        if (screen && h->cbytes && nr >= ef && np)
            np = code_screen(h, q, pend, np, res[0].d, z);
        if (!pfall && h->cbytes && np)
            prefetch_vec(h, vecp(h, pend[0]));
        for (uint32_t j = 0; j < np; j++) {
            uint32_t nb = pend[j];
            if (!pfall && h->cbytes && j + 1 < np)
                prefetch_vec(h, vecp(h, pend[j + 1]));
            float d = qdist(h, q, slot(h, nb) + h->voff);
            if (nr < ef || d < res[0].d) {
                if (nc + 1 > tl.ccap) {
                    tl.cand = grow(tl.cand, &tl.ccap, (size_t)nc + 1, sizeof(struct hq));
                    cand = tl.cand;
                }
                minh_push(cand, &nc, d, nb);
                maxh_push(res, &nr, d, nb);
                if (nr > ef)
                    maxh_pop(res, &nr);
            }
        }
        uint32_t *t = pend;
        pend = todo;
        todo = t;
        np = m;
    }
    return nr;
}

/* Best-first search of one level from ep.  Leaves up to ef results in the
 * max-heap tl.res; returns their number.  With a filter, only passing
 * nodes become results (every node is still explored), and at most
 * max_visit nodes are expanded (0 = no limit).  screen: skip neighbours
 * whose code says they are far (code_screen). */
static uint32_t search_layer(const struct hnsw *h, const struct qctx *q, uint32_t ep, float epd, uint32_t ef,
                             int level, hnsw_filter_fn filter, void *fctx, uint64_t max_visit, int screen)
{
    if (HNSW_PIPE && !filter)
        return search_layer_pipe(h, q, ep, epd, ef, level, screen);
    uint16_t tag = visit_begin(h->max_id);
    uint16_t *tags = tl.tags;
    float z = screen_z(h, ef);
    tl.res = grow(tl.res, &tl.rcap, (size_t)ef + 2, sizeof(struct hq));
    tl.cand = grow(tl.cand, &tl.ccap, (size_t)ef + h->M0 + 2, sizeof(struct hq));
    tl.ids = grow(tl.ids, &tl.idscap, h->M0, sizeof(uint32_t));
    struct hq *res = tl.res, *cand = tl.cand;
    uint32_t *todo = tl.ids;
    uint32_t nc = 0, nr = 0;
    tags[ep] = tag;
    minh_push(cand, &nc, epd, ep);
    if (!filter || filter(hdr(h, ep)->payload, fctx))
        maxh_push(res, &nr, epd, ep);
    uint64_t expanded = 0;
    while (nc) {
        if (filter && max_visit && expanded >= max_visit)
            break;
        struct hq c = cand[0];
        if (nr >= ef && c.d > res[0].d)
            break;
        minh_pop(cand, &nc);
        expanded++;
        const uint32_t *lb = lblock(h, c.id, level);
        uint32_t n = LN(lb), m = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t nb = lb[1 + i];
            if (tags[nb] == tag)
                continue;
            tags[nb] = tag;
            todo[m++] = nb;
        }
        if (nc) { /* the likely next expansion's links */
            const uint8_t *ns = slot(h, cand[0].id) + 12;
            for (uint32_t o = 0; o < 4 * (h->M0 + 1); o += 64)
                __builtin_prefetch(ns + o);
            __builtin_prefetch(ns + 4 * (h->M0 + 1) - 1);
        }
        uint32_t pfall = h->cbytes + h->wbytes <= HNSW_PF_ALL;
        if (pfall)
            for (uint32_t j = 0; j < m; j++) {
                const uint8_t *v = slot(h, todo[j]) + h->voff - h->cbytes;
                for (uint32_t o = 0; o < h->cbytes + h->wbytes; o += 64)
                    __builtin_prefetch(v + o);
                __builtin_prefetch(v + h->cbytes + h->wbytes - 1);
            }
        if (screen && h->cbytes && nr >= ef && m)
            m = code_screen(h, q, todo, m, res[0].d, z);
        for (uint32_t j = 0; j < m && j < HNSW_PF_AHEAD && !pfall; j++)
            prefetch_vec(h, vecp(h, todo[j]));
        for (uint32_t j = 0; j < m; j++) {
            uint32_t nb = todo[j];
            if (j + HNSW_PF_AHEAD < m && !pfall)
                prefetch_vec(h, vecp(h, todo[j + HNSW_PF_AHEAD]));
            const uint8_t *s = slot(h, nb);
            float d = qdist(h, q, s + h->voff);
            if (nr < ef || d < res[0].d) {
                if (nc + 1 > tl.ccap) {
                    tl.cand = grow(tl.cand, &tl.ccap, (size_t)nc + 1, sizeof(struct hq));
                    cand = tl.cand;
                }
                minh_push(cand, &nc, d, nb);
                if (!filter || filter(((const struct nhdr *)(const void *)s)->payload, fctx)) {
                    maxh_push(res, &nr, d, nb);
                    if (nr > ef)
                        maxh_pop(res, &nr);
                }
            }
        }
    }
    return nr;
}

/* Descend from the entry point to level `to` (exclusive of upper
 * levels' greedy walks below it). */
static uint32_t descend(const struct hnsw *h, const struct qctx *q, int to, float *epd)
{
    uint32_t ep = h->entry;
    *epd = qdist(h, q, vecp(h, ep));
    for (int l = h->max_level; l > to; l--)
        ep = greedy(h, q, ep, epd, l);
    return ep;
}

/* How far a high-plane distance can be from the exact one, for unit
 * vectors: each truncated component is within 2^-7 of its value
 * (relative), so |sum q_i (v_i - hi_i)| <= 2^-7 sum |q_i v_i| <= 2^-7;
 * plus room for the float sums' rounding. */
#define F32_WALK_BOUND (1.0f / 128 + 1e-4f)

/* F32: tl.res holds n candidates (a max-heap on walk distances).  Leave
 * in it the k best by exact distance among them: exact distances for the
 * candidates in ascending walk order, stopping at the first whose walk
 * distance minus the bound is above the k-th exact distance so far (it,
 * and every one after it, is exactly farther than k nodes already).
 * Returns the number left (min(n, k)). */
static uint32_t rerank_f32(const struct hnsw *h, const struct qctx *q, uint32_t n, uint32_t k)
{
    tl.w = grow(tl.w, &tl.wcap, (size_t)n + 1, sizeof(struct hq));
    struct hq *w = tl.w, *r = tl.res;
    maxh_drain(r, n, w); /* ascending into w */
    uint32_t nr = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (nr == k && w[i].d - F32_WALK_BOUND > r[0].d)
            break;
        float d = xdist(h, q, vecp(h, w[i].id));
        if (nr < k) {
            maxh_push(r, &nr, d, w[i].id);
        } else if (d < r[0].d) {
            maxh_pop(r, &nr);
            maxh_push(r, &nr, d, w[i].id);
        }
    }
    return nr;
}

uint32_t hnsw_search(const struct hnsw *h, const float *q, uint32_t k, uint32_t ef, hnsw_filter_fn filter, void *fctx,
                     uint64_t max_visit, struct hnsw_result *out)
{
    if (h->count == 0 || k == 0)
        return 0;
    struct qctx qc;
    qctx_init(h, &qc, q);
    float epd;
    uint32_t ep = descend(h, &qc, 0, &epd);
    if (ef < k)
        ef = k;
    uint32_t n = search_layer(h, &qc, ep, epd, ef, 0, filter, fctx, max_visit, 1);
    if (h->quant == HNSW_Q8 && n) {
        struct hq *r = tl.res;
        uint32_t m = n;
        tl.w = grow(tl.w, &tl.wcap, (size_t)n + 1, sizeof(struct hq));
        memcpy(tl.w, r, (size_t)n * sizeof(*r));
        n = 0;
        for (uint32_t i = 0; i < m; i++)
            maxh_push(r, &n, q8_asym(h, q, vecp(h, tl.w[i].id)), tl.w[i].id);
    } else if (h->quant == HNSW_F32 && n) {
        n = rerank_f32(h, &qc, n, k);
    }
    while (n > k)
        maxh_pop(tl.res, &n);
    uint32_t got = n;
    while (n) {
        out[n - 1].id = tl.res[0].id;
        out[n - 1].dist = tl.res[0].d;
        maxh_pop(tl.res, &n);
    }
    return got;
}

uint32_t hnsw_search_exact(const struct hnsw *h, const float *q, uint32_t k, hnsw_filter_fn filter, void *fctx,
                           struct hnsw_result *out)
{
    if (h->count == 0 || k == 0)
        return 0;
    struct qctx qc;
    qctx_init(h, &qc, q);
    tl.res = grow(tl.res, &tl.rcap, (size_t)k + 2, sizeof(struct hq));
    uint32_t nr = 0;
    for (uint32_t id = 0; id < h->max_id; id++) {
        const uint8_t *s = slot(h, id);
        const struct nhdr *nh = (const struct nhdr *)(const void *)s;
        if (!nh->live)
            continue;
        float d = xdist(h, &qc, s + h->voff);
        if (nr >= k && d >= tl.res[0].d)
            continue;
        if (filter && !filter(nh->payload, fctx))
            continue;
        maxh_push(tl.res, &nr, d, id);
        if (nr > k)
            maxh_pop(tl.res, &nr);
    }
    uint32_t got = nr;
    while (nr) {
        out[nr - 1].id = tl.res[0].id;
        out[nr - 1].dist = tl.res[0].d;
        maxh_pop(tl.res, &nr);
    }
    return got;
}

float hnsw_distance(const struct hnsw *h, const float *q, uint32_t id)
{
    if (!hnsw_exists(h, id))
        return 2.0f;
    struct qctx qc;
    qctx_init(h, &qc, q);
    return xdist(h, &qc, vecp(h, id));
}

/* ----------------------------------------------------------- insert --- */

static int linked(const struct hnsw *h, uint32_t a, uint32_t b, int level)
{
    const uint32_t *lb = lblock(h, a, level);
    for (uint32_t i = 0, n = LN(lb); i < n; i++)
        if (lb[1 + i] == b)
            return 1;
    return 0;
}

static void unlink_one(struct hnsw *h, uint32_t a, uint32_t b, int level)
{
    uint32_t *lb = lblock(h, a, level);
    for (uint32_t i = 0, n = LN(lb); i < n; i++) {
        if (lb[1 + i] == b) {
            lb[1 + i] = lb[n];
            lset(lb, n - 1);
            return;
        }
    }
}

static uint32_t random_level(struct hnsw *h)
{
    double u = (double)((rng_next(&h->rng) >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0,1] */
    double l = -log(u) * h->mult;
    if (l >= HNSW_MAX_LEVEL - 1)
        return HNSW_MAX_LEVEL - 1;
    return (uint32_t)l;
}

/* Dropping the link b-c keeps the graph's connectivity when b and c have
 * a common neighbour (another b-c path exists).  Every drop checks this,
 * so inserts never split the graph. */
static int safe_drop(const struct hnsw *h, uint32_t b, uint32_t c, int level)
{
    uint16_t tag = visit_begin(h->max_id);
    uint16_t *tags = tl.tags;
    const uint32_t *lb = lblock(h, b, level), *lc = lblock(h, c, level);
    for (uint32_t i = 0; i < LN(lb); i++)
        tags[lb[1 + i]] = tag;
    for (uint32_t i = 0; i < LN(lc); i++)
        if (tags[lc[1 + i]] == tag)
            return 1;
    return 0;
}

/* Link x and b at level, if x has room.  If b is full, rank b's links and
 * x by distance to b and run the neighbour heuristic over them: a link is
 * "dominated" when some closer kept link is nearer to it than b is (or is
 * a duplicate of one).  b then drops its farthest dominated link c (or,
 * when none is dominated, its farthest link if x is closer), and c drops
 * b.  x dominated and farther than every droppable dominated link means
 * no link, unless force.  A link is only dropped from a node whose degree
 * stays above a floor, and only if the graph stays connected: b and c
 * share a neighbour, or else c is re-linked to x (path c-x-b). */
static int try_link(struct hnsw *h, uint32_t x, uint32_t b, int level, int force)
{
    uint32_t cap = lcap(h, level);
    uint32_t *lx = lblock(h, x, level);
    if (LN(lx) >= cap || x == b || linked(h, b, x, level))
        return 0;
    uint32_t *lb = lblock(h, b, level);
    if (LN(lb) < cap) {
        lpush(lb, x);
        lpush(lx, b);
        return 1;
    }
    uint32_t floor = force ? 1 : (level == 0 ? h->M / 2 : h->M / 4);
    if (floor < 1)
        floor = 1;
    uint32_t n = LN(lb) + 1;
    tl.rk = grow(tl.rk, &tl.rkcap, (size_t)n * 3, sizeof(struct hq));
    struct hq *rk = tl.rk;
    uint32_t *keep = (uint32_t *)(void *)(rk + n);
    const uint8_t *vb = vecp(h, b);
    /* insertion sort by distance to b; .id is the node, keep[] indexes */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = i < n - 1 ? lb[1 + i] : x;
        float d = ndist(h, vb, vecp(h, c));
        uint32_t j = i;
        while (j > 0 && rk[j - 1].d > d) {
            rk[j] = rk[j - 1];
            j--;
        }
        rk[j].d = d;
        rk[j].id = c;
    }
    uint32_t nk = 0;
    int xdom = 0, xpos = -1;
    uint8_t *dom = (uint8_t *)(keep + n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = rk[i].id;
        const uint8_t *vc = vecp(h, c);
        dom[i] = 0;
        for (uint32_t k = 0; k < nk; k++) {
            float d = ndist(h, vc, vecp(h, rk[keep[k]].id));
            if (d < rk[i].d || d <= 0) {
                dom[i] = 1;
                break;
            }
        }
        if (c == x) {
            xdom = dom[i];
            xpos = (int)i;
        }
        if (!dom[i])
            keep[nk++] = i;
    }
    /* Victim: the farthest dominated link, else (x closer, or force) the
     * farthest link; degree floor and safe drop. */
    int victim = -1, reroute = 0;
    for (int pass = 0; pass < 2 && victim < 0; pass++) {
        for (int i = (int)n - 1; i >= 0; i--) {
            uint32_t c = rk[i].id;
            if (c == x && pass == 0 && !force && xdom)
                break; /* x is the farthest dominated one: refuse */
            if (c == x || (pass == 0 && !dom[i]))
                continue;
            if (pass == 1 && !force && (i > xpos || xdom))
                continue;
            if (LN(lblock(h, c, level)) <= floor)
                continue;
            reroute = 0;
            if (!safe_drop(h, b, c, level)) {
                /* c stays connected through x (c-x-b) if x can take it */
                if (LN(lx) + 2 > cap || linked(h, c, x, level))
                    continue;
                reroute = 1;
            }
            victim = i;
            break;
        }
    }
    if (victim < 0)
        return 0;
    uint32_t c = rk[victim].id;
    for (uint32_t i = 0; i < n - 1; i++)
        if (lb[1 + i] == c) {
            lb[1 + i] = x;
            break;
        }
    unlink_one(h, c, b, level);
    lpush(lx, b);
    if (reroute) {
        lpush(lblock(h, c, level), x);
        lpush(lx, c);
    }
    return 1;
}

/* Connect x (no links yet at level) to candidates w (ascending, n), chosen
 * with the HNSW heuristic. */
static void connect_node(struct hnsw *h, uint32_t x, int level, const struct hq *w, uint32_t n)
{
    tl.ids = grow(tl.ids, &tl.idscap, (size_t)h->M0 + h->M + 1, sizeof(uint32_t));
    uint32_t *sel = tl.ids;
    uint32_t ns = 0, want = h->M;
    for (uint32_t i = 0; i < n && ns < want; i++) {
        uint32_t c = w[i].id;
        if (c == x)
            continue;
        const uint8_t *vc = vecp(h, c);
        int good = 1;
        for (uint32_t j = 0; j < ns; j++) {
            float d = ndist(h, vc, vecp(h, w[sel[j]].id));
            if (d < w[i].d || d <= 0) {
                good = 0;
                break;
            }
        }
        if (good)
            sel[ns++] = i;
    }
    for (uint32_t j = 0; j < ns; j++)
        try_link(h, x, w[sel[j]].id, level, 0);
    /* No link: take the closest candidate with room, else force one. */
    if (LN(lblock(h, x, level)) == 0) {
        uint32_t cap = lcap(h, level);
        for (uint32_t i = 0; i < n; i++)
            if (w[i].id != x && LN(lblock(h, w[i].id, level)) < cap && try_link(h, x, w[i].id, level, 0))
                return;
        for (uint32_t i = 0; i < n; i++)
            if (w[i].id != x && try_link(h, x, w[i].id, level, 1))
                return;
    }
}

/* Search level `level` for x's neighbours (x's vector as the query) and
 * leave them ascending in tl.w; returns their number. */
static uint32_t candidates_for(struct hnsw *h, const struct qctx *q, uint32_t ep, float epd, uint32_t ef, int level)
{
    uint32_t n = search_layer(h, q, ep, epd, ef, level, NULL, NULL, 0, HNSW_BUILD_SCREEN);
    tl.w = grow(tl.w, &tl.wcap, (size_t)n + 1, sizeof(struct hq));
    maxh_drain(tl.res, n, tl.w);
    return n;
}

static uint32_t alloc_id(struct hnsw *h)
{
    if (h->nfree)
        return h->freeids[--h->nfree];
    uint32_t id = h->max_id;
    ensure_slot(h, id);
    h->max_id++;
    return id;
}

uint32_t hnsw_insert(struct hnsw *h, const float *v, float l2, void *payload, uint32_t ef)
{
    if (ef == 0)
        ef = HNSW_DEFAULT_EF;
    uint32_t id = alloc_id(h);
    uint32_t level = random_level(h);
    uint8_t *s = slot(h, id);
    struct nhdr *nh = (struct nhdr *)(void *)s;
    nh->payload = payload;
    nh->l2 = l2;
    lset(lblock_s(h, s, id, 0), 0);
    nh->level = (uint8_t)level;
    nh->live = 1;
    if (level) {
        size_t bytes = (size_t)level * (h->M + 1) * sizeof(uint32_t);
        up_put(h, id, hk_calloc(bytes));
        h->mem += bytes;
    }
    store_vector(h, v, s + h->voff);
    h->count++;
    if (h->entry == HNSW_NONE) {
        h->entry = id;
        h->max_level = (int)level;
        return id;
    }
    struct qctx qc;
    qc.f = v;
    qc.bits = h->quant == HNSW_BIN   ? (const uint64_t *)(const void *)(s + h->voff)
              : h->cbytes ? (const uint64_t *)(const void *)(s + h->voff - h->cbytes)
                                     : NULL;
    qc.q8 = s + h->voff;
    int top = (int)level < h->max_level ? (int)level : h->max_level;
    float epd;
    uint32_t ep = descend(h, &qc, top, &epd);
    for (int l = top; l >= 0; l--) {
        uint32_t n = candidates_for(h, &qc, ep, epd, ef, l);
        connect_node(h, id, l, tl.w, n);
        if (n) {
            ep = tl.w[0].id;
            epd = tl.w[0].d;
        }
    }
    if ((int)level > h->max_level) {
        h->entry = id;
        h->max_level = (int)level;
    }
    return id;
}

/* ----------------------------------------------------------- delete --- */

static uint32_t uf_find(uint32_t *p, uint32_t i)
{
    while (p[i] != i) {
        p[i] = p[p[i]];
        i = p[i];
    }
    return i;
}

/* Reconnect x's former neighbours nb[0..n) at level.  First each (having
 * lost its link to x) links to the closest other former neighbour that
 * accepts it (try_link's heuristic), which keeps the paths that went
 * through x.  Then, so that deleting x cannot split the graph, the former
 * neighbours are grouped by direct links and common neighbours, and
 * groups left apart are joined by their closest pair (forced if need be).
 * Any node left with no link gets a fresh set found by a search. */
static void repair(struct hnsw *h, const uint32_t *nb, uint32_t n, int level)
{
    uint32_t cap = lcap(h, level);
    if (n > 1) {
        struct hq *cd = hk_malloc((size_t)n * n * sizeof(*cd));
        uint32_t *par = hk_malloc((size_t)n * sizeof(uint32_t));
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = nb[i];
            par[i] = i;
            if (LN(lblock(h, a, level)) >= cap)
                continue;
            const uint8_t *va = vecp(h, a);
            uint32_t k = 0;
            for (uint32_t j = 0; j < n; j++) {
                if (j == i || linked(h, a, nb[j], level))
                    continue;
                float d = ndist(h, va, vecp(h, nb[j]));
                uint32_t p = k++;
                while (p > 0 && cd[p - 1].d > d) {
                    cd[p] = cd[p - 1];
                    p--;
                }
                cd[p].d = d;
                cd[p].id = nb[j];
            }
            for (uint32_t j = 0; j < k; j++)
                if (try_link(h, a, cd[j].id, level, 0))
                    break;
        }
        /* groups */
        uint32_t groups = n;
        for (uint32_t i = 0; i < n; i++) {
            uint16_t tag = visit_begin(h->max_id);
            uint16_t *tags = tl.tags;
            const uint32_t *li = lblock(h, nb[i], level);
            tags[nb[i]] = tag;
            for (uint32_t k = 0; k < LN(li); k++)
                tags[li[1 + k]] = tag;
            for (uint32_t j = i + 1; j < n; j++) {
                if (uf_find(par, i) == uf_find(par, j))
                    continue;
                int join = tags[nb[j]] == tag;
                const uint32_t *lj = lblock(h, nb[j], level);
                for (uint32_t k = 0; !join && k < LN(lj); k++)
                    join = tags[lj[1 + k]] == tag;
                if (join) {
                    par[uf_find(par, j)] = uf_find(par, i);
                    groups--;
                }
            }
        }
        while (groups > 1) {
            /* closest pair across groups */
            uint32_t k = 0;
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = i + 1; j < n; j++)
                    if (uf_find(par, i) != uf_find(par, j)) {
                        cd[k].d = ndist(h, vecp(h, nb[i]), vecp(h, nb[j]));
                        cd[k].id = i * n + j;
                        k++;
                    }
            int done = 0;
            for (int force = 0; force < 2 && !done; force++) {
                for (uint32_t t = 0; t < k && !done; t++) {
                    uint32_t best = t;
                    if (force == 0) { /* selection sort as we go */
                        for (uint32_t u = t + 1; u < k; u++)
                            if (cd[u].d < cd[best].d)
                                best = u;
                        struct hq tmp = cd[t];
                        cd[t] = cd[best];
                        cd[best] = tmp;
                    }
                    uint32_t i = cd[t].id / n, j = cd[t].id % n;
                    if (try_link(h, nb[i], nb[j], level, force) || try_link(h, nb[j], nb[i], level, force)) {
                        par[uf_find(par, j)] = uf_find(par, i);
                        groups--;
                        done = 1;
                    }
                }
            }
            if (!done)
                break;
        }
        hk_free(par);
        hk_free(cd);
    }
    if (h->count == 0)
        return;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t x = nb[i];
        if (LN(lblock(h, x, level)) != 0 || h->count < 2)
            continue;
        tl.fbuf = grow(tl.fbuf, &tl.fcap, h->dim, sizeof(float));
        hnsw_get_vector(h, x, tl.fbuf);
        struct qctx qc;
        qc.f = tl.fbuf;
        qc.bits = h->quant == HNSW_BIN   ? (const uint64_t *)(const void *)vecp(h, x)
                  : h->cbytes ? (const uint64_t *)(const void *)(vecp(h, x) - h->cbytes)
                                         : NULL;
        qc.q8 = vecp(h, x);
        float epd;
        uint32_t ep = descend(h, &qc, level, &epd);
        if (ep == x) {
            /* Reached x itself above this level: start from another
             * former neighbour instead. */
            if (n < 2)
                continue;
            ep = nb[(i + 1) % n];
            epd = qdist(h, &qc, vecp(h, ep));
        }
        uint32_t m = candidates_for(h, &qc, ep, epd, HNSW_DEFAULT_EF / 2, level);
        connect_node(h, x, level, tl.w, m);
    }
}

void hnsw_delete(struct hnsw *h, uint32_t id)
{
    if (!hnsw_exists(h, id))
        return;
    struct nhdr *nh = hdr(h, id);
    int L = nh->level;
    /* Save the neighbour lists and unlink at every level first, so the
     * repair searches never walk into the deleted node. */
    size_t total = h->M0 + (size_t)L * h->M + (size_t)L + 1;
    uint32_t *saved = hk_malloc(total * sizeof(uint32_t));
    uint32_t cnt[HNSW_MAX_LEVEL];
    size_t off = 0;
    for (int l = 0; l <= L; l++) {
        uint32_t *lb = lblock(h, id, l);
        cnt[l] = LN(lb);
        memcpy(saved + off, lb + 1, (size_t)cnt[l] * sizeof(uint32_t));
        for (uint32_t i = 0; i < cnt[l]; i++)
            unlink_one(h, lb[1 + i], id, l);
        lset(lb, 0);
        off += lcap(h, l);
    }
    nh->live = 0;
    nh->payload = NULL;
    h->count--;
    if (h->entry == id) {
        uint32_t ne = HNSW_NONE;
        int nl = -1;
        /* A neighbour at the top level has the same level. */
        size_t topoff = 0;
        for (int l = 0; l < L; l++)
            topoff += lcap(h, l);
        if (cnt[L] > 0) {
            ne = saved[topoff];
            nl = L;
        } else {
            for (uint32_t i = 0; i < h->max_id; i++) {
                struct nhdr *o = hdr(h, i);
                if (o->live && (int)o->level > nl) {
                    nl = o->level;
                    ne = i;
                }
            }
        }
        h->entry = ne;
        h->max_level = nl;
    }
    off = 0;
    for (int l = 0; l <= L; l++) {
        repair(h, saved + off, cnt[l], l);
        off += lcap(h, l);
    }
    hk_free(saved);
    if (L > 0) {
        h->mem -= (size_t)L * (h->M + 1) * sizeof(uint32_t);
        hk_free(up_del(h, id));
    }
    if (h->count == 0) {
        /* Empty: forget every id, keep the storage. */
        h->nfree = 0;
        h->max_id = 0;
        return;
    }
    if (h->nfree == h->free_cap) {
        uint32_t old = h->free_cap;
        h->freeids = grow(h->freeids, &h->free_cap, (size_t)h->nfree + 1, sizeof(uint32_t));
        h->mem += (size_t)(h->free_cap - old) * sizeof(uint32_t);
    }
    h->freeids[h->nfree++] = id;
}

/* ------------------------------------------------------------ check --- */

int hnsw_check(const struct hnsw *h, char *err, size_t errlen)
{
#define FAIL(...)                                      \
    do {                                               \
        if (err && errlen)                             \
            snprintf(err, errlen, __VA_ARGS__);        \
        hk_free(seen);                                 \
        hk_free(queue);                                \
        return -1;                                     \
    } while (0)
    uint8_t *seen = NULL;
    uint32_t *queue = NULL;
    uint64_t live = 0;
    int maxl = -1;
    for (uint32_t id = 0; id < h->max_id; id++) {
        const struct nhdr *nh = hdr(h, id);
        if (!nh->live)
            continue;
        live++;
        if (nh->level >= HNSW_MAX_LEVEL)
            FAIL("node %u: level %u too high", id, nh->level);
        if ((int)nh->level > maxl)
            maxl = nh->level;
        if (nh->level > 0 && !up_get(h, id))
            FAIL("node %u: level %u without upper links", id, nh->level);
        for (int l = 0; l <= nh->level; l++) {
            const uint32_t *lb = lblock(h, id, l);
            if (LN(lb) > lcap(h, l))
                FAIL("node %u level %d: %u links > %u", id, l, LN(lb), lcap(h, l));
            for (uint32_t i = 0; i < LN(lb); i++) {
                uint32_t t = lb[1 + i];
                if (t == id)
                    FAIL("node %u level %d: self link", id, l);
                if (!hnsw_exists(h, t))
                    FAIL("node %u level %d: link to missing node %u", id, l, t);
                if (hdr(h, t)->level < l)
                    FAIL("node %u level %d: link to %u of level %u", id, l, t, hdr(h, t)->level);
                for (uint32_t j = 0; j < i; j++)
                    if (lb[1 + j] == t)
                        FAIL("node %u level %d: duplicate link %u", id, l, t);
                if (!linked(h, t, id, l))
                    FAIL("node %u level %d: link to %u not reciprocated", id, l, t);
            }
        }
    }
    uint32_t nup = 0;
    for (uint32_t id = 0; id < h->max_id; id++)
        nup += hdr(h, id)->live && hdr(h, id)->level > 0;
    if (nup != h->upn)
        FAIL("%u nodes above level 0 but %u upper link blocks", nup, h->upn);
    if (live != h->count)
        FAIL("count %llu but %llu live nodes", (unsigned long long)h->count, (unsigned long long)live);
    if ((uint64_t)h->nfree + h->count != h->max_id)
        FAIL("free ids %u + count %llu != max id %u", h->nfree, (unsigned long long)h->count, h->max_id);
    for (uint32_t i = 0; i < h->nfree; i++)
        if (h->freeids[i] >= h->max_id || hdr(h, h->freeids[i])->live)
            FAIL("free id %u is live or out of range", h->freeids[i]);
    if (h->count == 0) {
        if (h->entry != HNSW_NONE || h->max_level != -1)
            FAIL("empty index with an entry point");
        return 0;
    }
    if (!hnsw_exists(h, h->entry))
        FAIL("entry point %u is not a live node", h->entry);
    if (maxl != h->max_level || hdr(h, h->entry)->level != maxl)
        FAIL("entry level %u, max level %d, highest node level %d", hdr(h, h->entry)->level, h->max_level, maxl);
    seen = hk_calloc(h->max_id);
    queue = hk_malloc((size_t)h->max_id * sizeof(uint32_t));
    uint32_t qh = 0, qt = 0;
    queue[qt++] = h->entry;
    seen[h->entry] = 1;
    while (qh < qt) {
        uint32_t x = queue[qh++];
        const uint32_t *lb = lblock(h, x, 0);
        for (uint32_t i = 0; i < LN(lb); i++)
            if (!seen[lb[1 + i]]) {
                seen[lb[1 + i]] = 1;
                queue[qt++] = lb[1 + i];
            }
    }
    if (qt != h->count)
        FAIL("only %u of %llu nodes reachable at level 0", qt, (unsigned long long)h->count);
    hk_free(seen);
    hk_free(queue);
    return 0;
#undef FAIL
}

/* ------------------------------------------------------ persistence --- */

uint64_t hnsw_hash_unit(uint64_t s, const void *p, size_t n)
{
    const uint8_t *b = p;
    const uint64_t K = 0x9E3779B97F4A7C15ULL;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        s = (s ^ w) * K;
        s ^= s >> 31;
        b += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, b, n);
    w ^= (uint64_t)n << 56;
    s = (s ^ w) * K;
    s ^= s >> 31;
    return s;
}

struct wbuf {
    hnsw_write_fn w;
    void *ctx;
    uint8_t *buf;
    size_t len;
    uint64_t hash;
    int err;
};

#define WBUF_CAP (64 * 1024)

static void wflush(struct wbuf *b)
{
    if (b->len && !b->err && b->w(b->ctx, b->buf, b->len) != 0)
        b->err = 1;
    b->len = 0;
}

static void wput(struct wbuf *b, const void *p, size_t n)
{
    b->hash = hnsw_hash_unit(b->hash, p, n);
    const uint8_t *s = p;
    while (n && !b->err) {
        size_t k = WBUF_CAP - b->len;
        if (k > n)
            k = n;
        memcpy(b->buf + b->len, s, k);
        b->len += k;
        s += k;
        n -= k;
        if (b->len == WBUF_CAP)
            wflush(b);
    }
}

static void wu32(struct wbuf *b, uint32_t v) { wput(b, &v, 4); }
static void wu64(struct wbuf *b, uint64_t v) { wput(b, &v, 8); }

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int hnsw_save(const struct hnsw *h, hnsw_write_fn w, void *ctx)
{
    struct wbuf b = {w, ctx, hk_malloc(WBUF_CAP), 0, 0, 0};
    wu32(&b, HNSW_MAGIC);
    wu32(&b, HNSW_VERSION);
    wu32(&b, h->dim);
    wu32(&b, (uint32_t)h->quant);
    wu32(&b, h->M);
    wu64(&b, h->count);
    wu32(&b, h->nfree);
    wu32(&b, h->entry);
    wu32(&b, (uint32_t)h->max_level);
    wu64(&b, h->rng);
    if (h->nfree) {
        uint32_t *f = hk_memdup(h->freeids, (size_t)h->nfree * 4);
        qsort(f, h->nfree, 4, cmp_u32);
        for (uint32_t i = 0; i < h->nfree; i += 4096) /* the units load reads */
            wput(&b, f + i, (size_t)(h->nfree - i < 4096 ? h->nfree - i : 4096) * 4);
        hk_free(f);
    }
    size_t fixed = 4 + 1 + 4 + h->vbytes;
    uint8_t *rec = hk_malloc(fixed);
    for (uint32_t id = 0; id < h->max_id && !b.err; id++) {
        const uint8_t *s = slot(h, id);
        const struct nhdr *nh = (const struct nhdr *)(const void *)s;
        if (!nh->live)
            continue;
        memcpy(rec, &id, 4);
        rec[4] = nh->level;
        memcpy(rec + 5, &nh->l2, 4);
        if (h->quant == HNSW_F32) /* the format keeps plain floats */
            split_load(h->dim, s + h->voff, rec + 9);
        else
            memcpy(rec + 9, s + h->voff, h->vbytes);
        wput(&b, rec, fixed);
        for (int l = 0; l <= nh->level; l++) {
            const uint32_t *lb = lblock(h, id, l);
            uint32_t cnt = LN(lb);
            wput(&b, &cnt, 4);
            wput(&b, lb + 1, (size_t)cnt * 4);
        }
    }
    hk_free(rec);
    uint64_t hs = b.hash;
    wput(&b, &hs, 8);
    wflush(&b);
    hk_free(b.buf);
    return b.err ? -1 : 0;
}

struct rbuf {
    hnsw_read_fn r;
    void *ctx;
    uint64_t hash;
};

static int rget(struct rbuf *b, void *p, size_t n)
{
    if (b->r(b->ctx, p, n) != 0)
        return -1;
    b->hash = hnsw_hash_unit(b->hash, p, n);
    return 0;
}

struct hnsw *hnsw_load(hnsw_read_fn r, void *ctx, char *err, size_t errlen)
{
    return hnsw_load_limit(r, ctx, UINT64_MAX, err, errlen);
}

struct hnsw *hnsw_load_limit(hnsw_read_fn r, void *ctx, uint64_t max_bytes, char *err, size_t errlen)
{
    struct rbuf b = {r, ctx, 0};
    struct hnsw *h = NULL;
    uint32_t *freeids = NULL;
    uint8_t *rec = NULL;
#define LFAIL(...)                                     \
    do {                                               \
        if (err && errlen)                             \
            snprintf(err, errlen, __VA_ARGS__);        \
        goto fail;                                     \
    } while (0)
#define RD(p, n)                                       \
    do {                                               \
        if (rget(&b, (p), (n)) != 0)                   \
            LFAIL("hnsw: truncated input");            \
    } while (0)
    uint32_t magic, ver, dim, quant, M, nfree, entry, maxl;
    uint64_t count, rng;
    RD(&magic, 4);
    RD(&ver, 4);
    if (magic != HNSW_MAGIC || ver != HNSW_VERSION)
        LFAIL("hnsw: bad magic or version");
    RD(&dim, 4);
    RD(&quant, 4);
    RD(&M, 4);
    RD(&count, 8);
    RD(&nfree, 4);
    RD(&entry, 4);
    RD(&maxl, 4);
    RD(&rng, 8);
    if (dim == 0 || dim > HNSW_LOAD_MAX_DIM || quant > HNSW_BIN || M < 2 || M > HNSW_LOAD_MAX_M)
        LFAIL("hnsw: bad parameters (dim %u, quant %u, M %u)", dim, quant, M);
    if (count >= HNSW_NONE || count + nfree >= HNSW_NONE || nfree > (1u << 31))
        LFAIL("hnsw: too many nodes");
    {
        /* The counts against what the input can still hold: a node record
         * is at least its fixed part and one link count, a free id 4
         * bytes, and the checksum trailer follows. */
        uint64_t vb = quant == HNSW_F32 ? 4ull * dim : quant == HNSW_Q8 ? 8ull + dim : 8ull * ((dim + 63) / 64);
        uint64_t need = count * (4 + 1 + 4 + vb + 4) + (uint64_t)nfree * 4 + 8;
        if (need > max_bytes)
            LFAIL("hnsw: %llu nodes and %u free ids need %llu bytes, the input holds at most %llu",
                  (unsigned long long)count, nfree, (unsigned long long)need, (unsigned long long)max_bytes);
    }
    int max_level = (int32_t)maxl;
    if (max_level < -1 || max_level >= HNSW_MAX_LEVEL)
        LFAIL("hnsw: bad max level %d", max_level);
    h = hnsw_alloc(dim, (int)quant, M);
    h->rng = rng ? rng : 1;
    uint32_t max_id = (uint32_t)(count + nfree);
    /* The free ids, ascending; read in blocks so a lying count costs no
     * more memory than the bytes that are really there. */
    uint32_t fcap = 0;
    for (uint32_t i = 0; i < nfree;) {
        uint32_t k = nfree - i < 4096 ? nfree - i : 4096;
        freeids = grow(freeids, &fcap, (size_t)i + k, 4);
        RD(freeids + i, (size_t)k * 4);
        for (uint32_t j = i; j < i + k; j++)
            if (freeids[j] >= max_id || (j > 0 && freeids[j] <= freeids[j - 1]))
                LFAIL("hnsw: bad free id list");
        i += k;
    }
    size_t fixed = 4 + 1 + 4 + h->vbytes;
    rec = hk_malloc(fixed);
    uint32_t next = 0, fi = 0;
    for (uint64_t i = 0; i < count; i++) {
        while (fi < nfree && freeids[fi] == next) {
            ensure_slot(h, next);
            hdr(h, next)->live = 0;
            hdr(h, next)->level = 0;
            hdr(h, next)->payload = NULL;
            h->max_id = ++next;
            fi++;
        }
        RD(rec, fixed);
        uint32_t id;
        float l2;
        memcpy(&id, rec, 4);
        memcpy(&l2, rec + 5, 4);
        uint32_t level = rec[4];
        if (id != next)
            LFAIL("hnsw: node id %u out of order (expected %u)", id, next);
        if (level >= HNSW_MAX_LEVEL || (int)level > max_level)
            LFAIL("hnsw: node %u: bad level %u", id, level);
        if (!isfinite(l2) || l2 < 0)
            LFAIL("hnsw: node %u: bad norm", id);
        const uint8_t *v = rec + 9;
        if (h->quant == HNSW_F32) {
            for (uint32_t j = 0; j < dim; j++) {
                float x;
                memcpy(&x, v + 4 * j, 4);
                if (!isfinite(x) || x > 1.001f || x < -1.001f)
                    LFAIL("hnsw: node %u: bad vector", id);
            }
        } else if (h->quant == HNSW_Q8) {
            float rg = q8_range(v), sc = q8_compute_scale(v, dim);
            if (!isfinite(rg) || rg < 0 || rg > 1.001f || memcmp(&sc, v + 4, 4) != 0)
                LFAIL("hnsw: node %u: bad quantisation range", id);
        } else if (dim & 63) {
            uint64_t last;
            memcpy(&last, v + (size_t)(h->nwords - 1) * 8, 8);
            if (last >> (dim & 63))
                LFAIL("hnsw: node %u: bits set past dim", id);
        }
        ensure_slot(h, id);
        h->max_id = ++next;
        uint8_t *s = slot(h, id);
        struct nhdr *nh = (struct nhdr *)(void *)s;
        nh->payload = NULL;
        nh->l2 = l2;
        lset(lblock_s(h, s, id, 0), 0);
        nh->level = (uint8_t)level;
        nh->live = 1;
        h->count++;
        if (level) {
            size_t bytes = (size_t)level * (M + 1) * sizeof(uint32_t);
            up_put(h, id, hk_calloc(bytes));
            h->mem += bytes;
        }
        if (h->quant == HNSW_F32) {
            split_store(dim, v, s + h->voff);
            if (h->cbytes) {
                tl.fbuf = grow(tl.fbuf, &tl.fcap, dim, sizeof(float));
                memcpy(tl.fbuf, v, (size_t)dim * 4);
                code_of(h, tl.fbuf, (uint64_t *)(void *)(s + h->voff - h->cbytes));
            }
        } else {
            memcpy(s + h->voff, v, h->vbytes);
            if (h->cbytes) /* Q8 */
                q8_code(h, s + h->voff, (uint64_t *)(void *)(s + h->voff - h->cbytes));
        }
        for (uint32_t l = 0; l <= level; l++) {
            uint32_t *lb = lblock_s(h, s, id, (int)l);
            uint32_t n;
            RD(&n, 4);
            if (n > lcap(h, (int)l))
                LFAIL("hnsw: node %u level %u: %u links", id, l, n);
            RD(lb + 1, (size_t)n * 4);
            lset(lb, n);
            for (uint32_t j = 0; j < n; j++)
                if (lb[1 + j] >= max_id)
                    LFAIL("hnsw: node %u: link to %u out of range", id, lb[1 + j]);
        }
    }
    while (fi < nfree) {
        if (freeids[fi] != next)
            LFAIL("hnsw: bad free id list");
        ensure_slot(h, next);
        hdr(h, next)->live = 0;
        hdr(h, next)->level = 0;
        hdr(h, next)->payload = NULL;
        h->max_id = ++next;
        fi++;
    }
    uint64_t want = b.hash, got;
    if (b.r(b.ctx, &got, 8) != 0)
        LFAIL("hnsw: truncated input");
    if (got != want)
        LFAIL("hnsw: checksum mismatch");
    /* Structure: links to live nodes of a high enough level, no self or
     * duplicate links, every link reciprocated; entry at the top. */
    int seen_max = -1;
    for (uint32_t id = 0; id < h->max_id; id++) {
        const struct nhdr *nh = hdr(h, id);
        if (!nh->live)
            continue;
        if ((int)nh->level > seen_max)
            seen_max = nh->level;
        for (int l = 0; l <= nh->level; l++) {
            const uint32_t *lb = lblock(h, id, l);
            for (uint32_t i = 0; i < LN(lb); i++) {
                uint32_t t = lb[1 + i];
                if (t == id || !hdr(h, t)->live || hdr(h, t)->level < l)
                    LFAIL("hnsw: node %u level %d: bad link to %u", id, l, t);
                for (uint32_t j = 0; j < i; j++)
                    if (lb[1 + j] == t)
                        LFAIL("hnsw: node %u level %d: duplicate link", id, l);
                if (!linked(h, t, id, l))
                    LFAIL("hnsw: node %u level %d: link to %u not reciprocated", id, l, t);
            }
        }
    }
    if (seen_max != max_level)
        LFAIL("hnsw: max level %d but highest node level %d", max_level, seen_max);
    if (count == 0) {
        if (entry != HNSW_NONE)
            LFAIL("hnsw: entry point in an empty index");
    } else if (entry >= h->max_id || !hdr(h, entry)->live || hdr(h, entry)->level != max_level) {
        LFAIL("hnsw: bad entry point %u", entry);
    }
    h->entry = count ? entry : HNSW_NONE;
    h->max_level = max_level;
    /* Free ids: pop the lowest first. */
    if (count == 0) {
        h->max_id = 0;
        nfree = 0;
    }
    h->free_cap = fcap;
    h->nfree = nfree;
    for (uint32_t i = 0; i < nfree / 2; i++) {
        uint32_t t = freeids[i];
        freeids[i] = freeids[nfree - 1 - i];
        freeids[nfree - 1 - i] = t;
    }
    h->freeids = freeids;
    h->mem += (size_t)fcap * 4;
    hk_free(rec);
    return h;
fail:
    hk_free(rec);
    hk_free(freeids);
    hnsw_free(h);
    return NULL;
#undef RD
#undef LFAIL
}

struct hnsw *hnsw_dup(const struct hnsw *h)
{
    struct hnsw *d = hk_malloc(sizeof(*d));
    *d = *h;
    if (h->rsign)
        d->rsign = hk_memdup(h->rsign, HNSW_ROT_ROUNDS * rsign_words(h->rdim) * 8);
    d->chunks = h->nchunks ? hk_calloc((size_t)h->nchunks * sizeof(*d->chunks)) : NULL;
    uint32_t per = h->per;
    for (uint32_t c = 0; c < h->nchunks; c++) {
        if (!h->chunks[c])
            continue;
        size_t n = c == 0 ? h->cap0 : per;
        d->chunks[c] = hk_memdup(h->chunks[c], n * h->nsize);
    }
    if (h->upcap) {
        d->up = hk_memdup(h->up, (size_t)h->upcap * sizeof(*h->up));
        for (uint32_t i = 0; i < h->upcap; i++)
            if (d->up[i].links)
                d->up[i].links = hk_memdup(d->up[i].links,
                                           (size_t)hdr(h, d->up[i].id)->level * (h->M + 1) * sizeof(uint32_t));
    }
    d->freeids = h->free_cap ? hk_malloc((size_t)h->free_cap * 4) : NULL;
    if (h->nfree)
        memcpy(d->freeids, h->freeids, (size_t)h->nfree * 4);
    return d;
}
