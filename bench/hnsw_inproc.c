/* hnsw_inproc.c - the HNSW index (src/ds/hnsw.c) in-process, without a
 * server: build time, and per EF the time per query and recall@k, on a
 * bench/vecbench.c dataset.  For work on the index itself (the figures in
 * hnsw.c's comments come from it); the side-by-side comparison with
 * Redis 8 is bench/vector8.sh.
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -pthread -Isrc -o build/hnsw_inproc \
 *      bench/hnsw_inproc.c src/ds/hnsw.c src/ds/vdist.c -lm
 *   build/vecbench gen -o /tmp/d.bin -n 20000 -d 1536 -q 500 --latent 64
 *   taskset -c 1 build/hnsw_inproc /tmp/d.bin /tmp/d.graph 40,150,500 [M] [EF_BUILD]
 *
 * The graph is built (NOQUANT, M 16, build EF 200 by default) and saved
 * to GRAPH when that file does not exist, else loaded from it, so that
 * variants of the search code can be compared on one graph.  Queries run
 * one at a time on the calling thread; each EF is measured twice (the
 * first pass warms the caches). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ds/hnsw.h"
#include "ds/vdist.h"

/* hnsw.c allocates through base/mem.h; plain libc here. */
void *hk_malloc(size_t n);
void *hk_calloc(size_t n);
void *hk_realloc(void *p, size_t n);
void hk_free(void *p);
void *hk_memdup(const void *p, size_t n);
void *hk_malloc(size_t n) { return malloc(n ? n : 1); }
void *hk_calloc(size_t n) { return calloc(1, n ? n : 1); }
void *hk_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
void hk_free(void *p) { free(p); }
void *hk_memdup(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q)
        memcpy(q, p, n);
    return q;
}

static void die(const char *msg)
{
    fprintf(stderr, "hnsw_inproc: %s\n", msg);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static FILE *gf;
static int wr(void *c, const void *p, size_t n)
{
    (void)c;
    return fwrite(p, 1, n, gf) == n ? 0 : -1;
}
static int rd(void *c, void *p, size_t n)
{
    (void)c;
    return fread(p, 1, n, gf) == n ? 0 : -1;
}

static void normalise(float *v, uint32_t d)
{
    double s = 0;
    for (uint32_t i = 0; i < d; i++)
        s += (double)v[i] * v[i];
    if (s > 0) {
        float k = (float)(1.0 / sqrt(s));
        for (uint32_t i = 0; i < d; i++)
            v[i] *= k;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4)
        die("usage: hnsw_inproc DATASET GRAPH EF[,EF...] [M] [EF_BUILD]");
    uint32_t M = argc > 4 ? (uint32_t)atoi(argv[4]) : 16, efb = argc > 5 ? (uint32_t)atoi(argv[5]) : 200;
    vd_init();
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        die("cannot open the dataset");
    unsigned char hdr[64];
    uint32_t h32[5];
    if (fread(hdr, 64, 1, f) != 1 || memcmp(hdr, "HKVECS01", 8) != 0)
        die("not a vecbench dataset");
    memcpy(h32, hdr + 8, sizeof(h32));
    uint32_t n = h32[0], dim = h32[1], nq = h32[2], k = h32[3];
    size_t tot = (size_t)n + nq;
    float *all = malloc(sizeof(float) * tot * dim);
    uint32_t *truth = malloc(sizeof(uint32_t) * nq * k);
    if (!all || !truth || fread(all, sizeof(float) * dim, tot, f) != tot || fread(truth, sizeof(uint32_t) * k, nq, f) != nq)
        die("truncated dataset");
    fclose(f);
    for (size_t i = 0; i < tot; i++)
        normalise(all + i * dim, dim);
    struct hnsw *h;
    if ((gf = fopen(argv[2], "rb"))) {
        char err[256];
        h = hnsw_load(rd, NULL, err, sizeof(err));
        fclose(gf);
        if (!h)
            die(err);
        printf("loaded %s: %llu nodes, dim %u\n", argv[2], (unsigned long long)hnsw_count(h), hnsw_dim(h));
    } else {
        h = hnsw_new(dim, HNSW_F32, M);
        double t = now_s();
        for (uint32_t i = 0; i < n; i++)
            hnsw_insert(h, all + (size_t)i * dim, 1.0f, NULL, efb);
        printf("build %u x %u, M %u, EF %u: %.1f s (%.0f us per insert)\n", n, dim, M, efb, now_s() - t,
               (now_s() - t) / n * 1e6);
        if (!(gf = fopen(argv[2], "wb")) || hnsw_save(h, wr, NULL) != 0 || fclose(gf) != 0)
            die("cannot save the graph");
    }
    struct hnsw_result *out = malloc(sizeof(*out) * k);
    for (char *e = strtok(argv[3], ","); e; e = strtok(NULL, ",")) {
        uint32_t ef = (uint32_t)atoi(e);
        for (int rep = 0; rep < 2; rep++) {
            uint64_t hit = 0;
            double t = now_s();
            for (uint32_t q = 0; q < nq; q++) {
                uint32_t got = hnsw_search(h, all + ((size_t)n + q) * dim, k, ef, NULL, NULL, 0, out);
                for (uint32_t a = 0; a < got; a++)
                    for (uint32_t b = 0; b < k; b++)
                        hit += out[a].id == truth[(size_t)q * k + b];
            }
            double dt = now_s() - t;
            if (rep)
                printf("ef %u: %.1f us per query, recall@%u %.4f\n", ef, dt / nq * 1e6, k, (double)hit / nq / k);
        }
    }
    free(out);
    hnsw_free(h);
    hnsw_thread_cleanup();
    free(all);
    free(truth);
    return 0;
}
