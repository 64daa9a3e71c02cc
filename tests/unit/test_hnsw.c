/* test_hnsw.c - the HNSW index (ds/hnsw.c): graph invariants (hnsw_check)
 * after random inserts and deletes, including deleting the entry point and
 * emptying the index; recall@10 against brute force on clustered data for
 * F32, Q8 and BIN; filtered search and its visit limit; exact search;
 * accessors; save/load round trip (same links, same results); loading
 * corrupt or truncated input fails cleanly; dup. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/hnsw.h"
#include "ds/vdist.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HNSW_T_SAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HNSW_T_SAN 1
#endif
#endif
#ifndef HNSW_T_SAN
#define HNSW_T_SAN 0
#endif

static uint64_t trng = 1;

static uint64_t tr_next(void)
{
    trng ^= trng >> 12;
    trng ^= trng << 25;
    trng ^= trng >> 27;
    return trng * 0x2545F4914F6CDD1DULL;
}

static double tr_unit(void)
{
    return (double)((tr_next() >> 11) + 1) / 9007199254740993.0;
}

static float tr_gauss(void)
{
    double u = tr_unit(), v = tr_unit();
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static float normalize(float *v, uint32_t dim)
{
    double s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    float l2 = (float)sqrt(s);
    if (l2 > 0)
        for (uint32_t i = 0; i < dim; i++)
            v[i] /= l2;
    return l2;
}

/* n clustered Gaussian vectors (normalised) into a new array; l2s
 * optional. */
static float *gen_data(uint32_t n, uint32_t dim, uint32_t clusters, float sigma, uint64_t seed, float *l2s)
{
    trng = seed * 2654435761ULL + 1;
    float *cent = malloc((size_t)clusters * dim * sizeof(float));
    for (size_t i = 0; i < (size_t)clusters * dim; i++)
        cent[i] = tr_gauss();
    float *v = malloc((size_t)n * dim * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)(tr_next() % clusters);
        for (uint32_t j = 0; j < dim; j++)
            v[(size_t)i * dim + j] = cent[(size_t)c * dim + j] + sigma * tr_gauss();
        float l2 = normalize(v + (size_t)i * dim, dim);
        if (l2s)
            l2s[i] = l2;
    }
    free(cent);
    return v;
}

static float dotf(const float *a, const float *b, uint32_t dim)
{
    float s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += a[i] * b[i];
    return s;
}

/* Exact top k (indexes into data) of q by float cosine. */
static void brute_topk(const float *data, uint32_t n, uint32_t dim, const float *q, uint32_t k, uint32_t *out)
{
    float *best = malloc(k * sizeof(float));
    uint32_t nb = 0;
    for (uint32_t i = 0; i < n; i++) {
        float d = 1 - dotf(q, data + (size_t)i * dim, dim);
        if (nb == k && d >= best[k - 1])
            continue;
        uint32_t j = nb < k ? nb++ : k - 1;
        while (j > 0 && best[j - 1] > d) {
            best[j] = best[j - 1];
            out[j] = out[j - 1];
            j--;
        }
        best[j] = d;
        out[j] = i;
    }
    free(best);
}

static void check_ok(const struct hnsw *h, int line)
{
    char err[256];
    if (hnsw_check(h, err, sizeof err) != 0)
        test_fail(__FILE__, line, "hnsw_check: %s", err);
}
#define CHECK_GRAPH(h) check_ok((h), __LINE__)

TEST(test_hnsw_basic_api)
{
    CHECK(hnsw_new(0, HNSW_F32, 16) == NULL);
    CHECK(hnsw_new(4, 7, 16) == NULL);
    CHECK(hnsw_new(4, HNSW_F32, 1) == NULL);
    struct hnsw *h = hnsw_new(3, HNSW_F32, 8);
    CHECK_EQ(hnsw_dim(h), 3);
    CHECK_EQ(hnsw_quant(h), HNSW_F32);
    CHECK_EQ(hnsw_m(h), 8);
    CHECK_EQ(hnsw_count(h), 0);
    CHECK_EQ(hnsw_max_level(h), -1);
    CHECK_EQ(hnsw_entry(h), HNSW_NONE);
    CHECK_EQ(hnsw_random_node(h, 5), HNSW_NONE);
    struct hnsw_result r[4];
    float q[3] = {1, 0, 0};
    CHECK_EQ(hnsw_search(h, q, 3, 10, NULL, NULL, 0, r), 0);
    CHECK_EQ(hnsw_search_exact(h, q, 3, NULL, NULL, r), 0);
    CHECK_EQ(hnsw_check(h, NULL, 0), 0);

    float a[3] = {1, 0, 0}, b[3] = {0, 1, 0}, c[3] = {0, 0, -1};
    int pa = 1, pb = 2, pc = 3;
    uint32_t ia = hnsw_insert(h, a, 2.0f, &pa, 0);
    uint32_t ib = hnsw_insert(h, b, 3.0f, &pb, 0);
    uint32_t ic = hnsw_insert(h, c, 4.0f, &pc, 0);
    CHECK_EQ(hnsw_count(h), 3);
    CHECK(hnsw_exists(h, ia) && hnsw_exists(h, ib) && hnsw_exists(h, ic));
    CHECK(!hnsw_exists(h, 1000));
    CHECK(hnsw_payload(h, ib) == &pb);
    hnsw_set_payload(h, ib, &pa);
    CHECK(hnsw_payload(h, ib) == &pa);
    CHECK_EQ(hnsw_max_id(h), 3);
    float out[3];
    CHECK(hnsw_get_vector(h, ic, out) == 4.0f);
    CHECK(out[2] == -1.0f);
    size_t len;
    float range;
    const float *raw = hnsw_raw(h, ib, &len, &range);
    CHECK_EQ(len, 12);
    CHECK(raw[1] == 1.0f && range == 0);
    CHECK_EQ(hnsw_search(h, q, 3, 10, NULL, NULL, 0, r), 3);
    CHECK_EQ(r[0].id, ia);
    CHECK(r[0].dist < 1e-6f);
    CHECK(fabsf(r[1].dist - 1.0f) < 1e-6f);
    CHECK(fabsf(r[2].dist - 1.0f) < 1e-6f);
    CHECK(fabsf(hnsw_distance(h, c, ia) - 1.0f) < 1e-6f);
    CHECK(fabsf(hnsw_distance(h, c, ic)) < 1e-6f);
    float neg[3] = {-1, 0, 0};
    CHECK(fabsf(hnsw_distance(h, neg, ia) - 2.0f) < 1e-6f);
    /* links are mutual for 3 nodes */
    const uint32_t *l;
    CHECK_EQ(hnsw_links(h, ia, 0, &l), 2);
    CHECK_EQ(hnsw_links(h, ia, 20, &l), 0);
    CHECK(l == NULL);
    CHECK_EQ(hnsw_links(h, 999, 0, NULL), 0);
    CHECK_GRAPH(h);
    uint32_t rn = hnsw_random_node(h, 12345);
    CHECK(rn == ia || rn == ib || rn == ic);
    CHECK(hnsw_mem(h) > 3 * 12);
    hnsw_delete(h, ib);
    hnsw_delete(h, ib); /* twice: no-op */
    CHECK_EQ(hnsw_count(h), 2);
    CHECK(!hnsw_exists(h, ib));
    CHECK_GRAPH(h);
    /* freed id reused */
    CHECK_EQ(hnsw_insert(h, b, 1.0f, NULL, 0), ib);
    CHECK_GRAPH(h);
    hnsw_free(h);
}

static struct hnsw *build(const float *data, uint32_t n, uint32_t dim, int quant, uint32_t M, uint32_t ef,
                          uint32_t *ids)
{
    struct hnsw *h = hnsw_new(dim, quant, M);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = hnsw_insert(h, data + (size_t)i * dim, 1.0f, (void *)(uintptr_t)(i + 1), ef);
        if (ids)
            ids[i] = id;
    }
    return h;
}

TEST(test_hnsw_invariants_random_ops)
{
    const uint32_t dim = 8, n = HNSW_T_SAN ? 600 : 2000;
    for (int quant = 0; quant < 3; quant++) {
        uint32_t M = quant == 1 ? 4 : 8;
        float *data = gen_data(n, dim, 10, 0.3f, 7 + (uint64_t)quant, NULL);
        uint32_t *ids = malloc(n * sizeof(uint32_t));
        uint8_t *in = calloc(n, 1);
        struct hnsw *h = hnsw_new(dim, quant, M);
        trng = 99 + (uint64_t)quant;
        uint64_t live = 0;
        for (uint32_t step = 0; step < 3 * n; step++) {
            uint32_t i = (uint32_t)(tr_next() % n);
            if (in[i]) {
                hnsw_delete(h, ids[i]);
                in[i] = 0;
                live--;
            } else {
                ids[i] = hnsw_insert(h, data + (size_t)i * dim, 1, NULL, 40);
                in[i] = 1;
                live++;
            }
            if (step % 500 == 0) {
                CHECK_GRAPH(h);
                /* delete the entry point */
                uint32_t e = hnsw_entry(h);
                for (uint32_t j = 0; j < n && e != HNSW_NONE; j++)
                    if (in[j] && ids[j] == e) {
                        hnsw_delete(h, e);
                        in[j] = 0;
                        live--;
                        break;
                    }
                CHECK_GRAPH(h);
            }
        }
        CHECK_EQ(hnsw_count(h), live);
        CHECK_GRAPH(h);
        /* delete everything, in random order */
        for (uint32_t i = 0; i < n; i++) {
            uint32_t j = (uint32_t)(tr_next() % n);
            if (in[j]) {
                hnsw_delete(h, ids[j]);
                in[j] = 0;
            }
        }
        for (uint32_t i = 0; i < n; i++)
            if (in[i]) {
                hnsw_delete(h, ids[i]);
                in[i] = 0;
            }
        CHECK_EQ(hnsw_count(h), 0);
        CHECK_EQ(hnsw_entry(h), HNSW_NONE);
        CHECK_EQ(hnsw_max_level(h), -1);
        CHECK_GRAPH(h);
        /* and back */
        for (uint32_t i = 0; i < n / 2; i++)
            hnsw_insert(h, data + (size_t)i * dim, 1, NULL, 40);
        CHECK_EQ(hnsw_count(h), n / 2);
        CHECK(hnsw_max_id(h) <= n / 2);
        CHECK_GRAPH(h);
        hnsw_free(h);
        free(data);
        free(ids);
        free(in);
    }
}

static double recall_at(const struct hnsw *h, const float *data, uint32_t n, uint32_t dim, const float *qs,
                        uint32_t nq, uint32_t ef, const uint32_t *ids)
{
    uint32_t truth[10];
    struct hnsw_result r[10];
    uint32_t hit = 0;
    for (uint32_t i = 0; i < nq; i++) {
        const float *q = qs + (size_t)i * dim;
        brute_topk(data, n, dim, q, 10, truth);
        uint32_t got = hnsw_search(h, q, 10, ef, NULL, NULL, 0, r);
        for (uint32_t a = 0; a < got; a++)
            for (uint32_t b = 0; b < 10; b++)
                if (r[a].id == ids[truth[b]]) {
                    hit++;
                    break;
                }
    }
    return (double)hit / (nq * 10.0);
}

/* Graph recall: the share of results no farther than the exact (linear
 * scan) 10th distance in the same index, so quantisation error and ties
 * do not count against the graph. */
static double graph_recall(const struct hnsw *h, const float *qs, uint32_t nq, uint32_t dim, uint32_t ef)
{
    struct hnsw_result r[10], e[10];
    uint32_t hit = 0;
    for (uint32_t i = 0; i < nq; i++) {
        const float *q = qs + (size_t)i * dim;
        uint32_t ne = hnsw_search_exact(h, q, 10, NULL, NULL, e);
        uint32_t got = hnsw_search(h, q, 10, ef, NULL, NULL, 0, r);
        for (uint32_t a = 0; a < got && ne == 10; a++)
            hit += r[a].dist <= e[9].dist + 1e-6f;
    }
    return (double)hit / (nq * 10.0);
}

static void recall_case(int quant, double bound, double gbound)
{
    const uint32_t dim = 48, n = HNSW_T_SAN ? 1000 : 5000, nq = HNSW_T_SAN ? 50 : 200;
    float *data = gen_data(n + nq, dim, 50, 2.0f, 11, NULL);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, quant, 16, HNSW_T_SAN ? 100 : 200, ids);
    const float *qs = data + (size_t)n * dim;
    double rc = recall_at(h, data, n, dim, qs, nq, 100, ids);
    if (rc < bound)
        test_fail(__FILE__, __LINE__, "quant %d: recall@10 %.4f < %.3f", quant, rc, bound);
    double gr = graph_recall(h, qs, nq, dim, 20); /* a small ef shows the graph */
    if (gr < gbound)
        test_fail(__FILE__, __LINE__, "quant %d: graph recall@10 %.4f < %.3f", quant, gr, gbound);
    /* and better with a larger ef */
    CHECK(graph_recall(h, qs, nq, dim, 200) >= gr);
    CHECK_GRAPH(h);
    hnsw_free(h);
    free(ids);
    free(data);
}

TEST(test_hnsw_recall_f32) { recall_case(HNSW_F32, 0.97, 0.74); }
TEST(test_hnsw_recall_q8) { recall_case(HNSW_Q8, 0.95, 0.74); }
TEST(test_hnsw_recall_bin) { recall_case(HNSW_BIN, 0.12, 0.90); }

/* F32 above 256 dims walks a compact code and 16-bit planes and screens
 * neighbours by the code (hnsw.c).  The screen must hold on data whose
 * coordinates are far from alike: here the directions live in 16 of 512
 * coordinates (plus a large common component, as real embeddings have: all
 * similarities high), and the other 496 carry only faint noise whose
 * signs say nothing about the angles (with the raw coordinates' signs as
 * the code, near neighbours look far: recall fell below 0.96).  The reported distances
 * must be the exact float32 ones. */
#ifndef Q8_CC_BOUND
#define Q8_CC_BOUND 0.95
#endif
static float *common_component_data(uint32_t n, uint32_t dim, uint32_t low)
{
    float *base = gen_data(n, low, 30, 0.5f, 21, NULL);
    float *data = malloc((size_t)n * dim * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
        float *v = data + (size_t)i * dim;
        for (uint32_t j = 0; j < dim; j++)
            v[j] = j < low ? base[(size_t)i * low + j] + (j == 0 ? 2.0f : 0.0f) : 0.002f * tr_gauss();
        normalize(v, dim);
    }
    free(base);
    return data;
}

/* Q8 above 256 dims keeps the same code (taken from its int8 components)
 * and screens by it: the same data must keep its recall, and the scores
 * are the float query against the stored int8 vector. */
TEST(test_hnsw_q8_codes_with_a_common_component)
{
    const uint32_t dim = 512, low = 16, n = HNSW_T_SAN ? 800 : 3000, nq = HNSW_T_SAN ? 40 : 150;
    float *data = common_component_data(n + nq, dim, low);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, HNSW_Q8, 16, HNSW_T_SAN ? 100 : 200, ids);
    const float *qs = data + (size_t)n * dim;
    double rc = recall_at(h, data, n, dim, qs, nq, 100, ids);
    if (rc < Q8_CC_BOUND)
        test_fail(__FILE__, __LINE__, "Q8 recall@10 %.4f < %.2f with a common component", rc, Q8_CC_BOUND);
    struct hnsw_result r[10];
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t got = hnsw_search(h, qs + (size_t)i * dim, 10, 60, NULL, NULL, 0, r);
        CHECK(got == 10);
        for (uint32_t a = 0; a < got; a++) {
            CHECK(r[a].dist == hnsw_distance(h, qs + (size_t)i * dim, r[a].id));
            if (a)
                CHECK(r[a].dist >= r[a - 1].dist);
        }
    }
    CHECK_GRAPH(h);
    hnsw_free(h);
    free(ids);
    free(data);
}

TEST(test_hnsw_f32_codes_with_a_common_component)
{
    const uint32_t dim = 512, low = 16, n = HNSW_T_SAN ? 800 : 3000, nq = HNSW_T_SAN ? 40 : 150;
    float *data = common_component_data(n + nq, dim, low);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, HNSW_F32, 16, HNSW_T_SAN ? 100 : 200, ids);
    const float *qs = data + (size_t)n * dim;
    double rc = recall_at(h, data, n, dim, qs, nq, 100, ids);
    if (rc < 0.97)
        test_fail(__FILE__, __LINE__, "recall@10 %.4f < 0.97 with a common component", rc);
    /* exact distances: what vd_dot_f32 gives on the stored floats */
    float *v = malloc(dim * sizeof(float));
    struct hnsw_result r[10];
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t got = hnsw_search(h, qs + (size_t)i * dim, 10, 60, NULL, NULL, 0, r);
        CHECK(got == 10);
        for (uint32_t a = 0; a < got; a++) {
            hnsw_get_vector(h, r[a].id, v);
            CHECK(r[a].dist == 1.0f - vd_dot_f32(qs + (size_t)i * dim, v, dim));
            CHECK(r[a].dist == hnsw_distance(h, qs + (size_t)i * dim, r[a].id));
            if (a)
                CHECK(r[a].dist >= r[a - 1].dist);
        }
    }
    CHECK_GRAPH(h);
    hnsw_free(h);
    free(v);
    free(ids);
    free(data);
}

/* Deep candidate lists (graph building's ef, a query's re-rank) are
 * sorted by the distances' bits (hnsw.c maxh_drain): 80 copies of one
 * vector, whose exact distance to itself rounds below zero, must all come
 * out first, ascending and exact, from an EF 300 search. */
TEST(test_hnsw_deep_lists_sort_ties_and_zero)
{
    const uint32_t dim = 32, n = HNSW_T_SAN ? 300 : 1200, dups = 80;
    float *data = gen_data(n, dim, 10, 0.3f, 33, NULL);
    /* the first dups vectors are copies of one whose distance to itself
     * rounds below zero */
    uint32_t neg = 0;
    while (neg < n && !(1.0f - vd_dot_f32(data + (size_t)neg * dim, data + (size_t)neg * dim, dim) < 0))
        neg++;
    if (neg == n)
        test_fail(__FILE__, __LINE__, "no vector with a negative self-distance");
    memcpy(data, data + (size_t)neg * dim, dim * sizeof(float));
    for (uint32_t i = 1; i < dups; i++)
        memcpy(data + (size_t)i * dim, data, dim * sizeof(float));
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, HNSW_F32, 16, 200, ids);
    struct hnsw_result r[100];
    uint32_t got = hnsw_search(h, data, 100, 300, NULL, NULL, 0, r);
    CHECK_EQ(got, 100);
    float self = 1.0f - vd_dot_f32(data, data, dim);
    CHECK(self < 0);
    uint32_t same = 0;
    for (uint32_t a = 0; a < got; a++) {
        if (a)
            CHECK(r[a].dist >= r[a - 1].dist);
        CHECK(r[a].dist == hnsw_distance(h, data, r[a].id));
        same += r[a].dist == self;
    }
    CHECK_EQ(same, dups);
    for (uint32_t a = 0; a < dups; a++)
        CHECK(r[a].dist == self);
    CHECK_GRAPH(h);
    hnsw_free(h);
    free(ids);
    free(data);
}

/* ------------------------------------------------ filter and exact --- */

static int pass_even(void *payload, void *ctx)
{
    (void)ctx;
    return ((uintptr_t)payload & 1) == 0;
}

static int pass_none(void *payload, void *ctx)
{
    (void)payload;
    (*(int *)ctx)++;
    return 0;
}

TEST(test_hnsw_filter_and_exact)
{
    const uint32_t dim = 16, n = HNSW_T_SAN ? 800 : 3000;
    float *data = gen_data(n + 20, dim, 20, 0.4f, 21, NULL);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, HNSW_F32, 16, 100, ids);
    struct hnsw_result r[10], e[10];
    int agree = 0;
    for (uint32_t t = 0; t < 20; t++) {
        const float *q = data + (size_t)(n + t) * dim;
        /* exact equals brute force */
        uint32_t truth[10];
        brute_topk(data, n, dim, q, 10, truth);
        CHECK_EQ(hnsw_search_exact(h, q, 10, NULL, NULL, e), 10);
        for (int i = 0; i < 10; i++) {
            CHECK_EQ(e[i].id, ids[truth[i]]);
            if (i)
                CHECK(e[i].dist >= e[i - 1].dist);
        }
        /* filtered: only even payloads (payload = index + 1) */
        uint32_t got = hnsw_search(h, q, 10, 100, pass_even, NULL, 0, r);
        CHECK_EQ(got, 10);
        uint32_t ge = hnsw_search_exact(h, q, 10, pass_even, NULL, e);
        CHECK_EQ(ge, 10);
        for (uint32_t i = 0; i < got; i++) {
            CHECK(((uintptr_t)hnsw_payload(h, r[i].id) & 1) == 0);
            if (i)
                CHECK(r[i].dist >= r[i - 1].dist);
            for (uint32_t j = 0; j < ge; j++)
                if (e[j].id == r[i].id)
                    agree++;
        }
        /* k larger than ef: ef becomes k */
        struct hnsw_result big[50];
        CHECK_EQ(hnsw_search(h, q, 50, 10, NULL, NULL, 0, big), 50);
        /* a filter nobody passes: bounded by max_visit, nothing returned */
        int calls = 0;
        CHECK_EQ(hnsw_search(h, q, 10, 10, pass_none, &calls, 50, r), 0);
        CHECK(calls > 0 && calls <= 50 * 2 * 16 + 1);
        calls = 0;
        CHECK_EQ(hnsw_search(h, q, 10, 10, pass_none, &calls, 0, r), 0);
        CHECK_EQ(calls, n); /* no limit: every node visited once */
        CHECK_EQ(hnsw_search_exact(h, q, 5, pass_none, &calls, r), 0);
    }
    CHECK(agree >= 20 * 10 * 95 / 100);
    hnsw_free(h);
    free(ids);
    free(data);
}

/* Many identical vectors (and BIN in few dimensions, where most vectors
 * collide) must stay connected and searchable. */
TEST(test_hnsw_duplicates_stay_connected)
{
    for (int quant = 0; quant < 3; quant++) {
        const uint32_t dim = 8;
        struct hnsw *h = hnsw_new(dim, quant, 4);
        float one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        normalize(one, dim);
        float *data = gen_data(300, dim, 3, 0.2f, 5, NULL);
        uint32_t ids[600];
        for (uint32_t i = 0; i < 600; i++)
            ids[i] = hnsw_insert(h, i % 2 ? one : data + (size_t)(i / 2) * dim, 1, NULL, 50);
        CHECK_GRAPH(h);
        struct hnsw_result r[10];
        CHECK_EQ(hnsw_search(h, one, 10, 50, NULL, NULL, 0, r), 10);
        CHECK(r[0].dist < 1e-3f);
        for (uint32_t i = 0; i < 600; i += 2)
            hnsw_delete(h, ids[i + 1]);
        CHECK_GRAPH(h);
        for (uint32_t i = 0; i < 600; i += 2)
            hnsw_delete(h, ids[i]);
        CHECK_EQ(hnsw_count(h), 0);
        CHECK_GRAPH(h);
        hnsw_free(h);
        free(data);
    }
}

TEST(test_hnsw_quantised_forms)
{
    const uint32_t dim = 70; /* not a multiple of 64 */
    float *data = gen_data(10, dim, 2, 0.5f, 3, NULL);
    struct hnsw *q8 = hnsw_new(dim, HNSW_Q8, 8), *bin = hnsw_new(dim, HNSW_BIN, 8);
    uint32_t a = hnsw_insert(q8, data, 3.5f, NULL, 0);
    uint32_t b = hnsw_insert(bin, data, 2.5f, NULL, 0);
    size_t len;
    float range;
    const int8_t *raw = hnsw_raw(q8, a, &len, &range);
    CHECK_EQ(len, dim);
    float mx = 0;
    for (uint32_t i = 0; i < dim; i++)
        mx = fmaxf(mx, fabsf(data[i]));
    CHECK(range == mx);
    int has127 = 0;
    for (uint32_t i = 0; i < dim; i++) {
        CHECK(abs((int)raw[i] - (int)lrintf(data[i] / mx * 127)) <= 1);
        has127 |= abs(raw[i]) == 127;
    }
    CHECK(has127);
    float out[70];
    CHECK(hnsw_get_vector(q8, a, out) == 3.5f);
    for (uint32_t i = 0; i < dim; i++)
        CHECK(fabsf(out[i] - data[i]) <= mx / 127);
    CHECK(hnsw_distance(q8, data, a) < 1e-3f);
    /* BIN: signs, distance 2*hamming/dim */
    const uint8_t *bits = hnsw_raw(bin, b, &len, &range);
    CHECK_EQ(len, 16);
    CHECK(range == 0);
    CHECK(hnsw_get_vector(bin, b, out) == 2.5f);
    for (uint32_t i = 0; i < dim; i++) {
        CHECK(((bits[i / 8] >> (i % 8)) & 1) == (data[i] > 0));
        CHECK(fabsf(fabsf(out[i]) - 1 / sqrtf(dim)) < 1e-6f);
        CHECK((out[i] > 0) == (data[i] > 0));
    }
    float neg[70];
    for (uint32_t i = 0; i < dim; i++)
        neg[i] = -data[i];
    CHECK(hnsw_distance(bin, data, b) == 0.0f);
    CHECK(fabsf(hnsw_distance(bin, neg, b) - 2.0f) < 1e-6f);
    neg[0] = data[0]; /* one bit agrees */
    CHECK(fabsf(hnsw_distance(bin, neg, b) - 2.0f * 69 / 70) < 1e-6f);
    /* zero vector: distance 1 from anything */
    float zero[70] = {0};
    uint32_t z = hnsw_insert(q8, zero, 0, NULL, 0);
    CHECK(fabsf(hnsw_distance(q8, data, z) - 1.0f) < 1e-6f);
    hnsw_free(q8);
    hnsw_free(bin);
    free(data);
}

/* ------------------------------------------------------ persistence --- */

struct mbuf {
    uint8_t *p;
    size_t len, cap, pos;
    size_t fail_after; /* writer: fail once this many bytes are written */
};

static int mwrite(void *ctx, const void *p, size_t n)
{
    struct mbuf *m = ctx;
    if (m->fail_after && m->len + n > m->fail_after)
        return -1;
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->p = realloc(m->p, m->cap);
    }
    memcpy(m->p + m->len, p, n);
    m->len += n;
    return 0;
}

static int mread(void *ctx, void *p, size_t n)
{
    struct mbuf *m = ctx;
    if (n > m->len - m->pos)
        return -1;
    memcpy(p, m->p + m->pos, n);
    m->pos += n;
    return 0;
}

static void same_graph(const struct hnsw *a, const struct hnsw *b, int line)
{
    int bad = 0;
    bad |= hnsw_count(a) != hnsw_count(b) || hnsw_max_id(a) != hnsw_max_id(b) || hnsw_entry(a) != hnsw_entry(b) ||
           hnsw_max_level(a) != hnsw_max_level(b) || hnsw_dim(a) != hnsw_dim(b) || hnsw_quant(a) != hnsw_quant(b) ||
           hnsw_m(a) != hnsw_m(b);
    for (uint32_t id = 0; id < hnsw_max_id(a) && !bad; id++) {
        if (hnsw_exists(a, id) != hnsw_exists(b, id)) {
            bad = 1;
            break;
        }
        if (!hnsw_exists(a, id))
            continue;
        bad |= hnsw_node_level(a, id) != hnsw_node_level(b, id);
        for (int l = 0; l <= hnsw_node_level(a, id) && !bad; l++) {
            const uint32_t *la, *lb;
            uint32_t na = hnsw_links(a, id, l, &la), nb = hnsw_links(b, id, l, &lb);
            bad |= na != nb || (na && memcmp(la, lb, na * 4) != 0);
        }
        size_t l1, l2;
        float r1, r2;
        const void *v1 = hnsw_raw(a, id, &l1, &r1), *v2 = hnsw_raw(b, id, &l2, &r2);
        bad |= l1 != l2 || r1 != r2 || memcmp(v1, v2, l1) != 0;
        float t1[64], t2[64];
        if (hnsw_dim(a) <= 64)
            bad |= hnsw_get_vector(a, id, t1) != hnsw_get_vector(b, id, t2);
    }
    if (bad)
        test_fail(__FILE__, line, "graphs differ");
}

/* A graph with holes (freed ids), several levels, every quantisation. */
static struct hnsw *small_graph(int quant, uint32_t n, uint32_t dim, float **datap)
{
    float *data = gen_data(n, dim, 4, 0.4f, 77 + (uint64_t)quant, NULL);
    struct hnsw *h = hnsw_new(dim, quant, 4);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++)
        ids[i] = hnsw_insert(h, data + (size_t)i * dim, 1.0f + (float)i, NULL, 30);
    for (uint32_t i = 0; i < n; i += 7)
        hnsw_delete(h, ids[i]);
    free(ids);
    if (datap)
        *datap = data;
    else
        free(data);
    return h;
}

TEST(test_hnsw_save_load_round_trip)
{
    /* F32, Q8, BIN; then F32 and Q8 above 256 dims (with codes) */
    for (int c = 0; c < 5; c++) {
        int quant = c < 3 ? c : c - 3;
        float *data;
        uint32_t dim = c >= 3 ? 300 : quant == 2 ? 100 : 24, n = HNSW_T_SAN ? 300 : 1500;
        struct hnsw *h = small_graph(quant, n, dim, &data);
        CHECK(hnsw_max_level(h) >= 1);
        struct mbuf m = {0};
        CHECK_EQ(hnsw_save(h, mwrite, &m), 0);
        char err[128] = "";
        struct hnsw *g = hnsw_load(mread, &m, err, sizeof err);
        CHECK(g != NULL);
        if (!g) {
            test_fail(__FILE__, __LINE__, "load: %s", err);
            continue;
        }
        CHECK_EQ(m.pos, m.len);
        same_graph(h, g, __LINE__);
        CHECK_GRAPH(g);
        CHECK(hnsw_payload(g, hnsw_entry(g)) == NULL);
        struct hnsw_result r1[10], r2[10];
        for (uint32_t t = 0; t < 30; t++) {
            const float *q = data + (size_t)(t * 13 % n) * dim;
            uint32_t a = hnsw_search(h, q, 10, 50, NULL, NULL, 0, r1);
            uint32_t b = hnsw_search(g, q, 10, 50, NULL, NULL, 0, r2);
            CHECK_EQ(a, b);
            CHECK(memcmp(r1, r2, a * sizeof(r1[0])) == 0);
        }
        /* inserts after load reuse the freed ids */
        for (uint32_t i = 0; i < 5; i++) {
            uint32_t before = hnsw_max_id(g);
            uint32_t id = hnsw_insert(g, data + (size_t)i * dim, 1, NULL, 30);
            CHECK(id < before);
            CHECK_EQ(hnsw_max_id(g), before);
        }
        CHECK_GRAPH(g);
        /* dup: same graph, independent */
        struct hnsw *d = hnsw_dup(h);
        same_graph(h, d, __LINE__);
        CHECK_GRAPH(d);
        CHECK_EQ(hnsw_mem(d), hnsw_mem(h));
        uint32_t e = hnsw_entry(d);
        hnsw_delete(d, e);
        CHECK(hnsw_exists(h, e));
        CHECK_GRAPH(h);
        CHECK_GRAPH(d);
        hnsw_free(d);
        hnsw_free(g);
        /* writer failure propagates */
        struct mbuf f = {0};
        f.fail_after = m.len / 2;
        CHECK_EQ(hnsw_save(h, mwrite, &f), -1);
        free(f.p);
        free(m.p);
        hnsw_free(h);
        free(data);
    }
    /* empty index, and one emptied by deletes */
    struct hnsw *h = hnsw_new(5, HNSW_Q8, 6);
    struct mbuf m = {0};
    CHECK_EQ(hnsw_save(h, mwrite, &m), 0);
    struct hnsw *g = hnsw_load(mread, &m, NULL, 0);
    CHECK(g && hnsw_count(g) == 0 && hnsw_dim(g) == 5 && hnsw_m(g) == 6 && hnsw_quant(g) == HNSW_Q8);
    CHECK_GRAPH(g);
    hnsw_free(g);
    hnsw_free(h);
    free(m.p);
}

static char last_err[128];

static void expect_load_fails(const uint8_t *p, size_t len, int line)
{
    struct mbuf m = {(uint8_t *)p, len, len, 0, 0};
    last_err[0] = 0;
    struct hnsw *g = hnsw_load(mread, &m, last_err, sizeof last_err);
    if (g) {
        test_fail(__FILE__, line, "corrupt input of %zu bytes loaded", len);
        hnsw_free(g);
    }
}

TEST(test_hnsw_load_corrupt_input)
{
    for (int quant = 0; quant < 3; quant++) {
        struct hnsw *h = small_graph(quant, 40, 6, NULL);
        struct mbuf m = {0};
        CHECK_EQ(hnsw_save(h, mwrite, &m), 0);
        /* truncation at every length */
        for (size_t len = 0; len < m.len; len++)
            expect_load_fails(m.p, len, __LINE__);
        /* one flipped bit at every byte (and every bit of the header) */
        uint8_t *c = malloc(m.len);
        trng = 5 + (uint64_t)quant;
        for (size_t i = 0; i < m.len; i++) {
            int bits = i < 48 ? 8 : 1;
            for (int k = 0; k < bits; k++) {
                memcpy(c, m.p, m.len);
                c[i] ^= (uint8_t)(1u << (bits == 8 ? k : (int)(tr_next() % 8)));
                expect_load_fails(c, m.len, __LINE__);
            }
        }
        /* random garbage after a valid header prefix, and pure garbage */
        for (int t = 0; t < 300; t++) {
            size_t len = (size_t)(tr_next() % m.len) + 1, keep = (size_t)(tr_next() % 60);
            for (size_t i = 0; i < len; i++)
                c[i] = i < keep && i < m.len ? m.p[i] : (uint8_t)tr_next();
            expect_load_fails(c, len, __LINE__);
        }
        free(c);
        free(m.p);
        hnsw_free(h);
    }
}

/* The checksum is not the only guard: damage with a recomputed checksum
 * is caught by the structure checks (hnsw_hash_unit: the save format's
 * checksum step). */
/* Recompute the trailer of a saved F32 index in place. */
static void rehash(uint8_t *p, size_t len, uint32_t dim)
{
    static const int hdr_units[] = {4, 4, 4, 4, 4, 8, 4, 4, 4, 8};
    uint64_t s = 0;
    size_t off = 0;
    for (int i = 0; i < 10; i++) {
        s = hnsw_hash_unit(s, p + off, (size_t)hdr_units[i]);
        off += (size_t)hdr_units[i];
    }
    uint32_t nfree;
    memcpy(&nfree, p + 28, 4);
    for (uint32_t i = 0; i < nfree; i += 4096) {
        size_t k = (size_t)(nfree - i < 4096 ? nfree - i : 4096) * 4;
        s = hnsw_hash_unit(s, p + off, k);
        off += k;
    }
    while (off < len - 8) {
        size_t fixed = 9 + (size_t)dim * 4;
        uint8_t level = p[off + 4];
        s = hnsw_hash_unit(s, p + off, fixed);
        off += fixed;
        for (int l = 0; l <= level; l++) {
            uint32_t n;
            memcpy(&n, p + off, 4);
            s = hnsw_hash_unit(s, p + off, 4);
            s = hnsw_hash_unit(s, p + off + 4, (size_t)n * 4);
            off += 4 + (size_t)n * 4;
        }
    }
    memcpy(p + len - 8, &s, 8);
}

TEST(test_hnsw_load_checks_structure)
{
    const uint32_t dim = 6;
    struct hnsw *h = small_graph(HNSW_F32, 60, dim, NULL);
    struct mbuf m = {0};
    CHECK_EQ(hnsw_save(h, mwrite, &m), 0);
    uint8_t *c = malloc(m.len);
    /* rehash of the unmodified bytes loads (the test's parser is right) */
    memcpy(c, m.p, m.len);
    rehash(c, m.len, dim);
    CHECK(memcmp(c, m.p, m.len) == 0);
    uint32_t nfree;
    memcpy(&nfree, m.p + 28, 4);
    size_t first = 48 + (size_t)nfree * 4; /* first node record */
    /* 1. a level-0 link redirected: no longer reciprocated */
    memcpy(c, m.p, m.len);
    size_t lnk = first + 9 + dim * 4; /* its level-0 count */
    uint32_t cnt, t;
    memcpy(&cnt, c + lnk, 4);
    CHECK(cnt >= 2);
    memcpy(&t, c + lnk + 8, 4);
    memcpy(c + lnk + 4, &t, 4); /* duplicate of the second link */
    rehash(c, m.len, dim);
    expect_load_fails(c, m.len, __LINE__);
    CHECK(strstr(last_err, "duplicate link") != NULL);
    /* 2. the entry point replaced by a level-0 node */
    memcpy(c, m.p, m.len);
    uint32_t low = HNSW_NONE;
    for (uint32_t id = 0; id < hnsw_max_id(h); id++)
        if (hnsw_exists(h, id) && hnsw_node_level(h, id) == 0) {
            low = id;
            break;
        }
    memcpy(c + 32, &low, 4);
    rehash(c, m.len, dim);
    expect_load_fails(c, m.len, __LINE__);
    CHECK(strstr(last_err, "entry point") != NULL);
    /* 3. a link to a freed id */
    if (nfree) {
        memcpy(c, m.p, m.len);
        memcpy(c + lnk + 4, m.p + 48, 4);
        rehash(c, m.len, dim);
        expect_load_fails(c, m.len, __LINE__);
        CHECK(strstr(last_err, "bad link") != NULL);
    }
    /* 4. a component made non-finite */
    memcpy(c, m.p, m.len);
    float nan = NAN;
    memcpy(c + first + 9, &nan, 4);
    rehash(c, m.len, dim);
    expect_load_fails(c, m.len, __LINE__);
    CHECK(strstr(last_err, "bad vector") != NULL);
    /* 5. count claims more nodes than present (reads past the end) */
    memcpy(c, m.p, m.len);
    uint64_t big = 1u << 30;
    memcpy(c + 20, &big, 8);
    rehash(c, m.len, dim);
    expect_load_fails(c, m.len, __LINE__);
    CHECK(strstr(last_err, "truncated") != NULL);
    /* flipped bit without a rehash: the checksum */
    memcpy(c, m.p, m.len);
    c[first + 10] ^= 4;
    expect_load_fails(c, m.len, __LINE__);
    CHECK(strstr(last_err, "checksum") != NULL);
    free(c);
    free(m.p);
    hnsw_free(h);
}

/* Searches from several threads at once (const API, per-thread scratch)
 * give the same answers as from one thread. */
#include <pthread.h>

struct par_arg {
    const struct hnsw *h;
    const float *qs;
    uint32_t nq, dim;
    const struct hnsw_result *expect;
    int mismatches;
};

static void *par_search(void *p)
{
    struct par_arg *a = p;
    struct hnsw_result r[10];
    for (int rep = 0; rep < 3; rep++)
        for (uint32_t i = 0; i < a->nq; i++) {
            uint32_t got = hnsw_search(a->h, a->qs + (size_t)i * a->dim, 10, 60, NULL, NULL, 0, r);
            if (got != 10 || memcmp(r, a->expect + (size_t)i * 10, sizeof r) != 0)
                a->mismatches++;
        }
    hnsw_thread_cleanup();
    return NULL;
}

TEST(test_hnsw_parallel_readers)
{
    const uint32_t dim = 16, n = HNSW_T_SAN ? 500 : 3000, nq = 50;
    float *data = gen_data(n + nq, dim, 10, 0.5f, 31, NULL);
    struct hnsw *h = build(data, n, dim, HNSW_Q8, 8, 60, NULL);
    struct hnsw_result *expect = malloc((size_t)nq * 10 * sizeof(*expect));
    const float *qs = data + (size_t)n * dim;
    for (uint32_t i = 0; i < nq; i++)
        CHECK_EQ(hnsw_search(h, qs + (size_t)i * dim, 10, 60, NULL, NULL, 0, expect + (size_t)i * 10), 10);
    pthread_t th[4];
    struct par_arg args[4];
    for (int t = 0; t < 4; t++) {
        args[t] = (struct par_arg){h, qs, nq, dim, expect, 0};
        pthread_create(&th[t], NULL, par_search, &args[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ(args[t].mismatches, 0);
    }
    free(expect);
    hnsw_free(h);
    free(data);
}

/* Constant deletes and re-inserts keep the recall of the graph. */
TEST(test_hnsw_recall_under_churn)
{
    const uint32_t dim = 32, n = HNSW_T_SAN ? 800 : 3000, nq = HNSW_T_SAN ? 40 : 150;
    float *data = gen_data(n + nq, dim, 30, 1.5f, 41, NULL);
    uint32_t *ids = malloc(n * sizeof(uint32_t));
    struct hnsw *h = build(data, n, dim, HNSW_F32, 12, 100, ids);
    const float *qs = data + (size_t)n * dim;
    double before = graph_recall(h, qs, nq, dim, 20);
    trng = 4242;
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < n / 3; i++) {
            uint32_t j = (uint32_t)(tr_next() % n);
            hnsw_delete(h, ids[j]);
            ids[j] = hnsw_insert(h, data + (size_t)j * dim, 1, NULL, 100);
        }
        CHECK_GRAPH(h);
    }
    CHECK_EQ(hnsw_count(h), n);
    CHECK_EQ(hnsw_max_id(h), n);
    double after = graph_recall(h, qs, nq, dim, 20);
    if (after < before - 0.03)
        test_fail(__FILE__, __LINE__, "graph recall %.4f after churn, %.4f before", after, before);
    double rc = recall_at(h, data, n, dim, qs, nq, 100, ids);
    if (rc < 0.95)
        test_fail(__FILE__, __LINE__, "recall@10 %.4f after churn", rc);
    hnsw_free(h);
    free(ids);
    free(data);
}
