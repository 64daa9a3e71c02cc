/* rkeys.c - a writable replica's own keys with a TTL (see rkeys.h). */
#include "rkeys.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../ds/dict.h"
#include "db.h"

struct rkey {
    struct dict_link link;
    uint64_t dbs;  /* bit d: got a TTL in database d */
    uint64_t adds; /* additions so far (see rkeys.h) */
    size_t klen;
    char key[];
};

static const char *rk_key(const struct dict_link *it, size_t *len)
{
    const struct rkey *k = (const struct rkey *)it;
    *len = k->klen;
    return k->key;
}

static const struct dict_type rk_type = {rk_key};

static pthread_mutex_t rk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dict *rk;      /* rk_mu; NULL until the first key */
static long long rk_n;       /* dict_size(rk), readable without rk_mu */

static void rk_free(struct dict_link *it)
{
    hk_free(it);
}

static void remember(int db, const char *key, size_t klen)
{
    if (db < 0 || db > 63)
        return;
    pthread_mutex_lock(&rk_mu);
    if (!rk)
        rk = dict_new(&rk_type, 0);
    struct rkey *k = (struct rkey *)dict_find(rk, key, klen);
    if (!k) {
        k = hk_malloc(sizeof(*k) + klen);
        k->dbs = 0;
        k->adds = 0;
        k->klen = klen;
        memcpy(k->key, key, klen);
        dict_add(rk, &k->link);
        __atomic_store_n(&rk_n, (long long)dict_size(rk), __ATOMIC_RELAXED);
    }
    k->dbs |= 1ULL << db;
    k->adds++;
    pthread_mutex_unlock(&rk_mu);
}

void rkeys_flush(void)
{
    pthread_mutex_lock(&rk_mu);
    if (rk)
        dict_free(rk, rk_free);
    rk = NULL;
    __atomic_store_n(&rk_n, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rk_mu);
}

void rkeys_enable(int on)
{
    atomic_store_explicit(&db_ttl_set_hook, on ? remember : NULL, memory_order_relaxed);
    if (!on)
        rkeys_flush();
}

long long rkeys_count(void)
{
    return __atomic_load_n(&rk_n, __ATOMIC_RELAXED);
}

void rkeys_cron(void)
{
    if (!rkeys_count())
        return;
    long long start = mono_us(), now = time_ms();
    int cycles = 0, noexpire = 0;
    char small[256];
    for (;;) {
        /* A random key, copied out: the deletes below take slot locks,
         * which must never wait behind rk_mu (rkeys.h). */
        pthread_mutex_lock(&rk_mu);
        struct rkey *k = rk ? (struct rkey *)dict_random(rk) : NULL;
        if (!k) {
            pthread_mutex_unlock(&rk_mu);
            break;
        }
        size_t klen = k->klen;
        uint64_t dbs = k->dbs, adds = k->adds;
        char *key = klen <= sizeof(small) ? small : hk_malloc(klen);
        memcpy(key, k->key, klen);
        pthread_mutex_unlock(&rk_mu);

        uint64_t keep = 0;
        for (int d = 0; d < 64; d++) {
            if (!(dbs & (1ULL << d)))
                continue;
            int r = db_expire_tracked(d, key, klen, now);
            if (r == 1 || r < 0) { /* a TTL to come, or a busy slot: later */
                keep |= 1ULL << d;
                noexpire += r == 1;
            }
        }

        pthread_mutex_lock(&rk_mu);
        k = rk ? (struct rkey *)dict_find(rk, key, klen) : NULL;
        if (k && k->adds == adds && !keep) { /* not re-added meanwhile */
            hk_free(dict_remove(rk, key, klen));
            __atomic_store_n(&rk_n, (long long)dict_size(rk), __ATOMIC_RELAXED);
        } else if (k && k->adds == adds) {
            k->dbs = keep;
        }
        int empty = !rk || dict_size(rk) == 0;
        pthread_mutex_unlock(&rk_mu);
        if (key != small)
            hk_free(key);

        cycles++;
        if (empty || noexpire > 3)
            break;
        if ((cycles % 64) == 0 && mono_us() - start > 1000)
            break;
    }
}
