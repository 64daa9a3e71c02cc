/* test_slab.c - unit tests for src/base/slab.c: exact 16-byte classes,
 * alignment, reuse of freed blocks and pages, frees from other threads
 * (collected by the holder, or by slab_maintain for a pooled heap), and a
 * threaded stress run that checks every block's contents (TSan runs it in
 * the sanitizer tier). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/slab.h"
#include "test.h"

TEST(slab_classes_and_alignment)
{
    void *b[SLAB_MAX + 1];
    for (size_t n = SLAB_MIN; n <= SLAB_MAX; n++) {
        b[n] = slab_alloc(n);
        CHECK(b[n] != NULL);
        if (!b[n])
            return;
        CHECK(slab_owns(b[n]));
        CHECK_EQ((uintptr_t)b[n] % 16, 0);
        CHECK_EQ(slab_size(b[n]), slab_round(n));
        CHECK(slab_size(b[n]) >= n && slab_size(b[n]) < n + 16);
        memset(b[n], (int)(n & 0xff), n);
    }
    for (size_t n = SLAB_MIN; n <= SLAB_MAX; n++) {
        unsigned char *p = b[n];
        int ok = 1;
        for (size_t i = 0; i < n; i++)
            ok &= p[i] == (unsigned char)(n & 0xff);
        CHECK(ok);
        slab_free(b[n]);
    }
    int x;
    CHECK(!slab_owns(&x));
    void *m = malloc(300);
    CHECK(!slab_owns(m));
    free(m);
}

TEST(slab_reuses_freed_blocks_and_pages)
{
    enum { N = 4000 }; /* about 18 pages of 288-byte blocks */
    static void *b[N];
    struct slab_stats s0, s1, s2;
    for (int i = 0; i < N; i++)
        b[i] = slab_alloc(288);
    slab_stats(&s0);
    for (int i = 0; i < N; i++)
        slab_free(b[i]);
    slab_stats(&s1);
    /* Every page but the current one went back. */
    CHECK(s1.free_pages >= s0.free_pages + (N * 288) / SLAB_PAGE - 2);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < N; i++)
            b[i] = slab_alloc(288);
        for (int i = 0; i < N; i++)
            slab_free(b[i]);
    }
    slab_stats(&s2);
    CHECK_EQ(s2.pages, s0.pages); /* nothing new carved */
    slab_maintain();              /* dirty pages to the kernel: still reusable */
    for (int i = 0; i < N; i++) {
        b[i] = slab_alloc(288);
        memset(b[i], 0x5a, 288);
    }
    for (int i = 0; i < N; i++)
        slab_free(b[i]);
}

struct batch {
    void **blk;
    int n;
    size_t size;
};

static void *free_batch(void *arg)
{
    struct batch *bt = arg;
    for (int i = 0; i < bt->n; i++)
        slab_free(bt->blk[i]);
    slab_thread_exit();
    return NULL;
}

TEST(slab_remote_frees_are_collected)
{
    enum { N = 3000 };
    static void *b[N];
    struct batch bt = {b, N, 400};
    struct slab_stats s0, s1;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++) {
            b[i] = slab_alloc(400);
            memset(b[i], round, 400);
        }
        if (round == 0)
            slab_stats(&s0);
        pthread_t t;
        pthread_create(&t, NULL, free_batch, &bt);
        pthread_join(t, NULL);
    }
    /* The later rounds reused what the other thread freed. */
    slab_stats(&s1);
    CHECK(s1.pages <= s0.pages + 2);
}

static void *alloc_and_lend(void *arg)
{
    struct batch *bt = arg;
    for (int i = 0; i < bt->n; i++)
        bt->blk[i] = slab_alloc(bt->size);
    slab_thread_idle(); /* not persistent: the heap goes to the pool */
    return NULL;
}

TEST(slab_pooled_heap_pages_come_back)
{
    enum { N = 5000 };
    static void *b[N];
    struct batch bt = {b, N, 992};
    pthread_t t;
    pthread_create(&t, NULL, alloc_and_lend, &bt);
    pthread_join(t, NULL);
    struct slab_stats s0, s1;
    slab_stats(&s0);
    for (int i = 0; i < N; i++)
        slab_free(b[i]); /* remote: the pooled heap is not ours */
    slab_maintain();
    slab_stats(&s1);
    CHECK(s1.free_pages >= s0.free_pages + (N * 992) / SLAB_PAGE - 2);
}

/* Threads pass blocks round-robin through mutex-guarded mailboxes; each
 * block carries its size and a pattern that the freeing thread checks. */
#define ST_THREADS 4
#define ST_BOX 256
struct mailbox {
    pthread_mutex_t mu;
    void *blk[ST_BOX];
    int n;
};
static struct mailbox boxes[ST_THREADS];
static int stress_bad;

static int check_block(void *p)
{
    unsigned char *c = p;
    uint32_t n;
    memcpy(&n, c, 4);
    if (n < SLAB_MIN || n > SLAB_MAX || slab_size(p) != slab_round(n))
        return 0;
    for (uint32_t i = 4; i < n; i++)
        if (c[i] != (unsigned char)(n + i))
            return 0;
    return 1;
}

static void *stress_thread(void *arg)
{
    int me = (int)(intptr_t)arg;
    unsigned seed = 12345u + (unsigned)me;
    int rounds = TEST_SCALE(40000);
    if (me % 2 == 0)
        slab_thread_persistent();
    for (int r = 0; r < rounds; r++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t n = SLAB_MIN + (seed >> 8) % (SLAB_MAX - SLAB_MIN + 1);
        unsigned char *p = slab_alloc(n);
        if (!p) {
            __atomic_store_n(&stress_bad, 1, __ATOMIC_RELAXED);
            break;
        }
        memcpy(p, &n, 4);
        for (uint32_t i = 4; i < n; i++)
            p[i] = (unsigned char)(n + i);
        struct mailbox *to = &boxes[(me + 1 + (int)((seed >> 20) % (ST_THREADS - 1))) % ST_THREADS];
        void *evict = NULL;
        pthread_mutex_lock(&to->mu);
        if (to->n == ST_BOX)
            evict = to->blk[--to->n];
        to->blk[to->n++] = p;
        pthread_mutex_unlock(&to->mu);
        if (evict) {
            if (!check_block(evict))
                __atomic_store_n(&stress_bad, 1, __ATOMIC_RELAXED);
            slab_free(evict);
        }
        /* Drain our own box now and then. */
        if ((r & 63) == 0) {
            struct mailbox *mine = &boxes[me];
            pthread_mutex_lock(&mine->mu);
            while (mine->n > ST_BOX / 2) {
                void *q = mine->blk[--mine->n];
                if (!check_block(q))
                    __atomic_store_n(&stress_bad, 1, __ATOMIC_RELAXED);
                slab_free(q);
            }
            pthread_mutex_unlock(&mine->mu);
            slab_thread_idle();
        }
    }
    slab_thread_exit();
    return NULL;
}

TEST(slab_threaded_stress)
{
    pthread_t t[ST_THREADS];
    for (int i = 0; i < ST_THREADS; i++) {
        pthread_mutex_init(&boxes[i].mu, NULL);
        boxes[i].n = 0;
    }
    struct slab_stats s0, s1;
    slab_maintain();
    slab_stats(&s0);
    for (int i = 0; i < ST_THREADS; i++)
        pthread_create(&t[i], NULL, stress_thread, (void *)(intptr_t)i);
    for (int i = 0; i < ST_THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(!stress_bad);
    for (int i = 0; i < ST_THREADS; i++) {
        while (boxes[i].n) {
            void *q = boxes[i].blk[--boxes[i].n];
            CHECK(check_block(q));
            slab_free(q);
        }
        pthread_mutex_destroy(&boxes[i].mu);
    }
    slab_maintain();
    slab_maintain();
    slab_stats(&s1);
    /* Everything is free again: what stays out is at most each heap's
     * current page per class. */
    size_t out1 = s1.pages - s1.free_pages, out0 = s0.pages - s0.free_pages;
    CHECK(out1 <= out0 + s1.heaps * (SLAB_MAX / 16 - 8));
}

/* Packed blocks (key entries): classes 8 bytes apart, 8-byte aligned; the
 * 16-byte requests beside them keep their 16-byte alignment. */
TEST(slab_packed_classes)
{
    void *b[SLAB_MAX + 1], *g[SLAB_MAX + 1];
    for (size_t n = SLAB_MIN; n <= SLAB_MAX; n++) {
        b[n] = slab_alloc_packed(n);
        g[n] = slab_alloc(n);
        CHECK(b[n] != NULL && g[n] != NULL);
        if (!b[n] || !g[n])
            return;
        CHECK_EQ((uintptr_t)b[n] % 8, 0);
        CHECK_EQ((uintptr_t)g[n] % 16, 0);
        CHECK_EQ(slab_size(b[n]), slab_round_packed(n));
        CHECK_EQ(slab_size(g[n]), slab_round(n));
        memset(b[n], (int)(n & 0xff), n);
        memset(g[n], (int)(~n & 0xff), n);
    }
    for (size_t n = SLAB_MIN; n <= SLAB_MAX; n++) {
        const unsigned char *p = b[n], *q = g[n];
        int ok = 1;
        for (size_t i = 0; i < n; i++)
            ok &= p[i] == (unsigned char)(n & 0xff) && q[i] == (unsigned char)(~n & 0xff);
        CHECK(ok);
        slab_free(b[n]);
        slab_free(g[n]);
    }
}
