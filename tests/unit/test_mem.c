/* test_mem.c - unit tests for the memory accounting of src/base/mem.c:
 * blocks allocated on one thread and freed on another are counted once,
 * threads that exit keep their figures in the total, the fast estimate
 * stays within its documented slack, and the sum agrees with what the
 * allocator itself reports. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/malloc_stats.h"
#include "base/mem.h"
#include "test.h"

#define NBLK 1000
#define BLK 10000

struct handoff {
    void *blk[NBLK];
};

static void *alloc_thread(void *arg)
{
    struct handoff *h = arg;
    mem_thread_register();
    for (int i = 0; i < NBLK; i++) {
        h->blk[i] = hk_malloc(BLK);
        memset(h->blk[i], i & 0xff, BLK);
    }
    mem_thread_unregister();
    return NULL;
}

static void *free_thread(void *arg)
{
    struct handoff *h = arg;
    mem_thread_register();
    for (int i = 0; i < NBLK; i++)
        hk_free(h->blk[i]);
    mem_thread_unregister();
    return NULL;
}

static long long absdiff(size_t a, size_t b)
{
    return a > b ? (long long)(a - b) : (long long)(b - a);
}

TEST(test_mem_cross_thread_free_counted_once)
{
    static struct handoff h;
    pthread_t t;
    mem_thread_register();
    size_t base = mem_used();
    CHECK(pthread_create(&t, NULL, alloc_thread, &h) == 0);
    pthread_join(t, NULL);
    size_t mid = mem_used();
    /* 10 MB allocated by a thread that has exited since. */
    CHECK(mid >= base + (size_t)NBLK * BLK);
    CHECK(mid <= base + (size_t)NBLK * BLK * 2);
    CHECK(mem_peak() >= mid);
    CHECK(pthread_create(&t, NULL, free_thread, &h) == 0);
    pthread_join(t, NULL);
    size_t end = mem_used();
    CHECK(absdiff(end, base) < 256 * 1024);
}

TEST(test_mem_fast_estimate_within_slack)
{
    enum { N = 200, SZ = 50000 };
    static void *p[N];
    mem_thread_register();
    size_t base = mem_used();
    for (int i = 0; i < N; i++)
        p[i] = hk_malloc(SZ);
    size_t fast = mem_used_fast(), exact = mem_used();
    CHECK(exact >= base + (size_t)N * SZ);
    /* This thread's own change is always in the estimate; other threads
     * (none here but the test runner's) can be off by < 64 KB each. */
    CHECK(absdiff(fast, exact) < 4 * MEM_PUBLISH_STEP);
    long long net0 = mem_thread_net();
    for (int i = 0; i < N; i++)
        hk_free(p[i]);
    long long net1 = mem_thread_net();
    if (net0 || net1) /* 0 where the allocator has no per-thread counters */
        CHECK(net0 - net1 >= (long long)N * SZ);
    CHECK(absdiff(mem_used_fast(), mem_used()) < 4 * MEM_PUBLISH_STEP);
}

TEST(test_mem_agrees_with_allocator)
{
    struct alloc_stats st;
    mem_thread_register();
    if (alloc_stats_get(&st) < 0)
        return; /* sanitizer allocator: nothing to compare with */
    size_t used = mem_used(), slab = mem_used_slab();
    /* Both count usable sizes of live blocks (jemalloc's figure leaves out
     * the slab's, base/slab.h); jemalloc's is refreshed per epoch and
     * includes threads the test runner did not register (none that
     * allocate much). */
    CHECK(slab <= used);
    CHECK(absdiff(used - slab, st.allocated) < 1024 * 1024);
    CHECK(st.active >= st.allocated);
    CHECK(st.resident >= st.active);
}

/* Growth capacities: doubling from the current capacity (or the minimum),
 * never below what is needed, and no wrap near SIZE_MAX (a capacity whose
 * doubling would overflow becomes exactly what is needed). */
TEST(test_mem_grow_cap)
{
    CHECK_EQ(hk_grow_cap(0, 1, 16, 8), 16);
    CHECK_EQ(hk_grow_cap(0, 17, 16, 8), 32);
    CHECK_EQ(hk_grow_cap(16, 17, 4, 8), 32);
    CHECK_EQ(hk_grow_cap(16, 1000, 4, 8), 1024);
    CHECK_EQ(hk_grow_cap(0, 5, 0, 1), 8);
    CHECK_EQ(hk_grow_cap(3, 3, 16, 1), 3);
    CHECK(hk_grow_cap((size_t)1 << 62, ((size_t)1 << 62) + 1, 16, 1) == (size_t)1 << 63);
    CHECK(hk_grow_cap((size_t)1 << 62, ((size_t)1 << 62) + 1, 16, 2) == ((size_t)1 << 62) + 1);
    CHECK(hk_grow_cap(1, SIZE_MAX / 8, 16, 8) == SIZE_MAX / 8);
    CHECK(hk_array_bytes(1000, 24) == 24000);
    CHECK(hk_array_bytes(SIZE_MAX / 8, 8) == SIZE_MAX / 8 * 8);
    CHECK(hk_array_bytes(0, 8) == 0);
}
