/* dict.c - see dict.h. */
#include "dict.h"

#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

#define DICT_MIN 4

static uint64_t dict_seed = 0x9e3779b97f4a7c15ULL;

uint64_t dict_hash(const char *key, size_t len)
{
    return hash64(key, len, dict_seed);
}

static uint64_t hash_of(const struct dict *d, const struct dict_link *it)
{
    size_t len;
    const char *k = d->type->key(it, &len);
    return dict_hash(k, len);
}

static void resize(struct dict *d, uint64_t nb)
{
    struct dict_link **nbk = hk_calloc(sizeof(*nbk) * nb);
    for (uint64_t i = 0; i <= d->mask; i++) {
        struct dict_link *it = d->b[i];
        while (it) {
            struct dict_link *next = it->next;
            uint64_t h = hash_of(d, it) & (nb - 1);
            it->next = nbk[h];
            nbk[h] = it;
            it = next;
        }
    }
    hk_free(d->b);
    d->b = nbk;
    d->mask = nb - 1;
    d->maxchain = 0;
    for (uint64_t i = 0; i < nb; i++) {
        size_t n = 0;
        for (struct dict_link *it = nbk[i]; it; it = it->next)
            n++;
        if (n > d->maxchain)
            d->maxchain = n;
    }
}

/* The bucket count for n elements: the smallest power of two >= n, at
 * least DICT_MIN and at most DICT_MAX_PRESIZE.  Hints come from counts
 * read from files and payloads too: past the cap the table is not sized
 * in advance but grows by doubling as elements really arrive, and the
 * doubling below can never wrap. */
uint64_t dict_buckets_for(size_t n)
{
    uint64_t b = DICT_MIN;
    if (n >= DICT_MAX_PRESIZE)
        return DICT_MAX_PRESIZE;
    while (b < n)
        b <<= 1;
    return b;
}

#define pow2_for dict_buckets_for

struct dict *dict_new(const struct dict_type *t, size_t size_hint)
{
    struct dict *d = hk_malloc(sizeof(*d));
    uint64_t nb = pow2_for(size_hint);
    d->b = hk_calloc(sizeof(*d->b) * nb);
    d->mask = nb - 1;
    d->used = 0;
    d->type = t;
    d->maxchain = 0;
    return d;
}

void dict_expand(struct dict *d, size_t n)
{
    uint64_t nb = pow2_for(n);
    if (nb > d->mask + 1)
        resize(d, nb);
}

void dict_free(struct dict *d, void (*free_it)(struct dict_link *))
{
    if (!d)
        return;
    if (free_it) {
        for (uint64_t i = 0; i <= d->mask; i++) {
            struct dict_link *it = d->b[i];
            while (it) {
                struct dict_link *next = it->next;
                free_it(it);
                it = next;
            }
        }
    }
    hk_free(d->b);
    hk_free(d);
}

struct dict_link *dict_find(const struct dict *d, const char *key, size_t len)
{
    struct dict_link *it = d->b[dict_hash(key, len) & d->mask];
    for (; it; it = it->next) {
        size_t l;
        const char *k = d->type->key(it, &l);
        if (l == len && memcmp(k, key, len) == 0)
            return it;
    }
    return NULL;
}

void dict_add(struct dict *d, struct dict_link *it)
{
    if (d->used >= d->mask + 1)
        resize(d, (d->mask + 1) * 2);
    uint64_t h = hash_of(d, it) & d->mask;
    size_t n = 1;
    it->next = d->b[h];
    d->b[h] = it;
    d->used++;
    for (struct dict_link *p = it->next; p; p = p->next)
        n++;
    if (n > d->maxchain)
        d->maxchain = n;
}

struct dict_link *dict_remove(struct dict *d, const char *key, size_t len)
{
    struct dict_link **pp = &d->b[dict_hash(key, len) & d->mask];
    for (; *pp; pp = &(*pp)->next) {
        size_t l;
        const char *k = d->type->key(*pp, &l);
        if (l == len && memcmp(k, key, len) == 0) {
            struct dict_link *it = *pp;
            *pp = it->next;
            d->used--;
            if (d->mask + 1 > DICT_MIN && d->used < (d->mask + 1) / 8)
                resize(d, pow2_for(d->used * 2));
            return it;
        }
    }
    return NULL;
}

void dict_replace(struct dict *d, struct dict_link *old, struct dict_link *nw)
{
    struct dict_link **pp = &d->b[hash_of(d, nw) & d->mask];
    for (; *pp; pp = &(*pp)->next) {
        if (*pp == old) {
            nw->next = old->next;
            *pp = nw;
            return;
        }
    }
}

size_t dict_mem(const struct dict *d)
{
    return hk_usable(d->b) + hk_usable((void *)d);
}

/* A uniform integer in [0, n): the high bits of the 64x64 product, so the
 * generator's weaker low bits do not decide the result. */
static inline uint64_t rand_below(uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rand64() * n) >> 64);
}

struct dict_link *dict_random(const struct dict *d)
{
    if (d->used == 0)
        return NULL;
    /* Rejection sampling, exactly uniform: draw a bucket and a depth below
     * maxchain (>= every chain's length); the element at that depth, if
     * there is one, is the answer.  Every element has probability
     * 1 / (buckets * maxchain) per draw.  (Picking a random element of a
     * random non-empty chain instead favours elements alone in their
     * bucket.)  Expected draws: buckets * maxchain / used. */
    uint64_t m = d->maxchain ? d->maxchain : 1;
    for (;;) {
        uint64_t r = rand_below((d->mask + 1) * m);
        uint64_t b = r / m, depth = r - b * m;
        struct dict_link *it = d->b[b];
        while (it && depth--)
            it = it->next;
        if (it)
            return it;
    }
}

struct dict_link *dict_next(const struct dict *d, struct dict_iter *it)
{
    if (it->cur && it->cur->next) {
        it->cur = it->cur->next;
        return it->cur;
    }
    uint64_t bk = it->cur ? it->bucket + 1 : it->bucket;
    for (; bk <= d->mask; bk++) {
        if (d->b[bk]) {
            it->bucket = bk;
            it->cur = d->b[bk];
            return it->cur;
        }
    }
    it->bucket = bk;
    it->cur = NULL;
    return NULL;
}

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16);
    return (v >> 32) | (v << 32);
}

/* The cursor counts buckets with its bits reversed: incrementing the high
 * bits first means that after the table doubles or halves, the buckets
 * already visited map onto buckets the cursor has also passed. */
uint64_t dict_scan(const struct dict *d, uint64_t v, void (*fn)(void *arg, const struct dict_link *it), void *arg)
{
    uint64_t m = d->mask;
    for (const struct dict_link *it = d->b[v & m]; it; it = it->next)
        fn(arg, it);
    v |= ~m;
    v = rev64(v);
    v++;
    v = rev64(v);
    return v;
}
