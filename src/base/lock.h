/* lock.h - the shard spinlock.
 *
 * Critical sections under a shard lock are a hash probe and a memcpy, far
 * shorter than a futex round trip, so a test-and-test-and-set spinlock wins.
 * After a bounded spin it yields the CPU: with more threads than cores (the
 * 2-core CI machine runs 4-thread tests) a preempted holder must get to run.
 * One lock per cache line so neighbouring shards do not false-share.  (The
 * L2's spatial prefetcher still pairs lines by 128 bytes: two threads that
 * keep to slots 2k and 2k+1 move each other's lock lines.  Measured with
 * bench/inproc_scaling.sh: 2 threads on interleaved slots 1.3x of one,
 * on slot ranges 2.0x.  128-byte locks fix the interleaved case but cost
 * one thread about 16% in that benchmark at 300k keys a thread: twice the
 * cache for the lock array.  Random keys hit neighbouring slots at once
 * too rarely to pay that.) */
#ifndef HK_LOCK_H
#define HK_LOCK_H

#include <sched.h>
#include <stdatomic.h>

struct spinlock {
    atomic_int v;
} __attribute__((aligned(64)));

static inline void spin_init(struct spinlock *l)
{
    atomic_init(&l->v, 0);
}

static inline int spin_trylock(struct spinlock *l)
{
    return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0;
}

static inline void spin_lock(struct spinlock *l)
{
    unsigned spins = 0;
    for (;;) {
        if (atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0)
            return;
        while (atomic_load_explicit(&l->v, memory_order_relaxed) != 0) {
            if (++spins < 256)
                __builtin_ia32_pause();
            else {
                spins = 0;
                sched_yield();
            }
        }
    }
}

static inline void spin_unlock(struct spinlock *l)
{
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif
