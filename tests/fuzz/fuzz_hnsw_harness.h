/* fuzz_hnsw_harness.h - the vector-set graph loader (ds/hnsw.c:
 * hnsw_load_limit), the HNSW part of a vector set's RDB encoding
 * (persist/rdb_vset.c feeds it the graph's STRING chunks).
 *
 * Input: hnsw_save's bytes WITHOUT the 8-byte checksum trailer (seeds:
 * the graphs of the vector-set DUMP payloads of tests/fuzz/corpus-restore,
 * cut out by tests/fuzz/make_seeds.py).  The reader serves the input in the
 * units the loader asks for and folds them with hnsw_hash_unit, as the
 * loader does; an 8-byte read exactly at the end of the input gets that
 * checksum, so mutated graphs reach the structural checks.
 *
 * A graph that loads must pass hnsw_check (the loader promises it
 * validated everything), answer a search with live nodes, and save, load
 * and save again to the same bytes. */
#ifndef HK_FUZZ_HNSW_HARNESS_H
#define HK_FUZZ_HNSW_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "ds/hnsw.h"
#include "fuzz_common.h"

struct fuzz_hnsw_src {
    const uint8_t *p;
    size_t len, pos;
    uint64_t hash;
    int trailer_served;
};

static int fuzz_hnsw_read(void *ctx, void *out, size_t n)
{
    struct fuzz_hnsw_src *s = ctx;
    if (s->pos == s->len && n == 8 && !s->trailer_served) {
        memcpy(out, &s->hash, 8);
        s->trailer_served = 1;
        return 0;
    }
    if (n > s->len - s->pos)
        return -1;
    memcpy(out, s->p + s->pos, n);
    s->pos += n;
    s->hash = hnsw_hash_unit(s->hash, out, n);
    return 0;
}

struct fuzz_hnsw_sink {
    uint8_t *b;
    size_t len, cap;
};

static int fuzz_hnsw_write(void *ctx, const void *p, size_t n)
{
    struct fuzz_hnsw_sink *s = ctx;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < s->len + n)
            cap *= 2;
        s->b = hk_realloc(s->b, cap);
        s->cap = cap;
    }
    memcpy(s->b + s->len, p, n);
    s->len += n;
    return 0;
}

/* Load a complete saved graph (trailer included). */
static int fuzz_hnsw_read_plain(void *ctx, void *out, size_t n)
{
    struct fuzz_hnsw_src *s = ctx;
    if (n > s->len - s->pos)
        return -1;
    memcpy(out, s->p + s->pos, n);
    s->pos += n;
    return 0;
}

static void fuzz_hnsw_exercise(struct hnsw *h)
{
    char err[256];
    if (hnsw_check(h, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_hnsw: loaded graph fails hnsw_check: %s\n", err);
        FZ_CHECK(!"hnsw_load accepted a graph hnsw_check refuses");
    }
    uint64_t live = 0;
    for (uint32_t id = 0; id < hnsw_max_id(h); id++)
        if (hnsw_exists(h, id))
            live++;
    FZ_CHECK(live == hnsw_count(h));
    uint32_t dim = hnsw_dim(h);
    if (live == 0)
        return;
    float *q = hk_malloc(sizeof(float) * dim);
    for (uint32_t i = 0; i < dim; i++)
        q[i] = (float)((i * 5 + 1) % 7) - 3.0f;
    struct hnsw_result res[10];
    uint32_t got = hnsw_search(h, q, 10, 20, NULL, NULL, 0, res);
    FZ_CHECK(got <= 10 && got <= live);
    for (uint32_t i = 0; i < got; i++) {
        FZ_CHECK(hnsw_exists(h, res[i].id));
        hnsw_get_vector(h, res[i].id, q);
        const uint32_t *links;
        for (int l = 0; l <= hnsw_node_level(h, res[i].id); l++)
            hnsw_links(h, res[i].id, l, &links);
    }
    hk_free(q);
}

static inline void fuzz_hnsw_one(const uint8_t *data, size_t size)
{
    char err[256];
    struct fuzz_hnsw_src src = {data, size, 0, 0, 0};
    fuzz_server_init();
    struct hnsw *h = hnsw_load_limit(fuzz_hnsw_read, &src, (uint64_t)size + 8, err, sizeof(err));
    if (!h) {
        FZ_CHECK(err[0] != 0);
        return;
    }
    fuzz_hnsw_exercise(h);
    struct fuzz_hnsw_sink s1 = {0}, s2 = {0};
    FZ_CHECK(hnsw_save(h, fuzz_hnsw_write, &s1) == 0);
    hnsw_free(h);
    struct fuzz_hnsw_src again = {s1.b, s1.len, 0, 0, 0};
    h = hnsw_load_limit(fuzz_hnsw_read_plain, &again, s1.len, err, sizeof(err));
    if (!h)
        fprintf(stderr, "fuzz_hnsw: the saved graph does not load: %s\n", err);
    FZ_CHECK(h != NULL);
    FZ_CHECK(again.pos == again.len);
    FZ_CHECK(hnsw_save(h, fuzz_hnsw_write, &s2) == 0);
    FZ_CHECK(s1.len == s2.len && memcmp(s1.b, s2.b, s1.len) == 0);
    hnsw_free(h);
    hk_free(s1.b);
    hk_free(s2.b);
}

#endif
