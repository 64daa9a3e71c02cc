/* db.c - see db.h. */
#include "db.h"

#include <pthread.h>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#define HK_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HK_LSAN 1
#endif
#endif
#ifdef HK_LSAN
#include <sanitizer/lsan_interface.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "object.h"

struct keyspace ks;
_Thread_local struct db_stats *db_tstats;
_Thread_local long long db_cmd_time_ms;
_Thread_local long long db_cmd_time_us;
_Thread_local int db_notouch;
/* The clocks share one line of their own: worker 0 writes it (only when a
 * value changes), every worker reads it per access. */
_Alignas(64) _Atomic uint32_t lru_clock_now;

static struct db_stats dummy_stats;

volatile int db_lfu_mode;
volatile int db_lfu_log_factor = 10, db_lfu_decay_time = 1;

/* Minutes for the LFU decay, cached with the LRU clock by the cron (a
 * clock read per access costs more than the rest of the LFU update). */
_Alignas(64) _Atomic uint32_t lfu_minutes_now;

uint32_t lfu_minutes_clock(void)
{
    return (uint32_t)((time_ms() / 60000) & 65535);
}

static inline unsigned lfu_minutes(void)
{
    return atomic_load_explicit(&lfu_minutes_now, memory_order_relaxed);
}

uint32_t lfu_init(void)
{
    return (lfu_minutes() << 8) | LFU_INIT_VAL;
}

unsigned lfu_decr_and_return(uint32_t lru)
{
    unsigned ldt = (lru >> 8) & 65535, counter = lru & 255, now = lfu_minutes();
    unsigned elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
    unsigned periods = db_lfu_decay_time ? elapsed / (unsigned)db_lfu_decay_time : 0;
    return periods > counter ? 0 : counter - periods;
}

uint32_t lfu_touch(uint32_t lru)
{
    unsigned counter = lfu_decr_and_return(lru);
    if (counter < 255) {
        double r = (double)(rand64() >> 11) / (double)(1ULL << 53);
        double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        if (r < 1.0 / (base * db_lfu_log_factor + 1))
            counter++;
    }
    return (lfu_minutes() << 8) | counter;
}

uint32_t lru_clock(void)
{
    return (uint32_t)(time_ms() / 1000) & 0xffffff;
}

long long db_now_ms(void)
{
    return db_cmd_time_ms ? db_cmd_time_ms : time_ms();
}

_Thread_local int db_loading;
_Thread_local int db_master_apply;

int db_already_expired(long long when)
{
    return !(db_loading | db_master_apply) && when <= db_now_ms();
}

void db_init(int ndb)
{
    ks.ndb = ndb;
    /* The slot locks (1 MiB) and database 0's table pointers (128 KiB),
     * which every lookup reads at a random slot, on one 2 MiB page of
     * their own with transparent huge pages asked for (MADV_HUGEPAGE,
     * honoured when the system's THP mode is madvise or always): one TLB
     * entry instead of 288, in a loop whose entries' pages keep evicting
     * them.  About 1% of a pipelined GET's server CPU (two servers on one
     * core side by side); the page is resident from the start. */
    size_t lsz = sizeof(struct spinlock) * NSLOTS, huge = 2u << 20;
    _Static_assert(sizeof(struct spinlock) * NSLOTS + sizeof(struct db) <= 2u << 20, "hot page");
    char *m = mmap(NULL, huge * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *a = NULL;
    if (m != MAP_FAILED) {
        a = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
        if (a > m)
            munmap(m, (size_t)(a - m));
        munmap(a + huge, (size_t)(m + huge * 2 - (a + huge)));
        madvise(a, huge, MADV_HUGEPAGE);
#ifdef HK_LSAN
        /* The table pointers live here: LeakSanitizer must scan it as it
         * scans globals, or every table of database 0 looks leaked. */
        __lsan_register_root_region(a, huge);
#endif
        ks.locks = (struct spinlock *)a;
    } else {
        ks.locks = aligned_alloc(_Alignof(struct spinlock), lsz);
        if (!ks.locks) {
            log_msg(LL_WARNING, "out of memory allocating the slot locks");
            abort();
        }
    }
    for (int i = 0; i < NSLOTS; i++)
        spin_init(&ks.locks[i]);
    for (int i = 0; i < ndb; i++)
        ks.dbs[i] = i == 0 && a ? (struct db *)(a + lsz) : hk_calloc(sizeof(struct db));
    table_seed = rand64() | 1;
    lru_clock_now = lru_clock();
    lfu_minutes_now = lfu_minutes_clock();
}

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

atomic_int db_lock_yield_req;
atomic_int db_child_active;
atomic_int script_busy;
int (*db_wait_jobs_pending)(void);
void (*db_wait_run_jobs)(void);

static int jobs_waiting(void)
{
    return db_wait_jobs_pending && db_wait_jobs_pending();
}

static void lock_backoff(unsigned *spins)
{
    if (++*spins < 256)
        __builtin_ia32_pause();
    else {
        *spins = 0;
        sched_yield();
    }
}

static void wait_yield_clear(void)
{
    unsigned spins = 0;
    while (atomic_load_explicit(&db_lock_yield_req, memory_order_acquire))
        lock_backoff(&spins);
}

/* 0 locked; -1 gave up (yield requested, busy script with busy_abort, or
 * jobs waiting for this worker). */
static int lock_wait(struct spinlock *l, int busy_abort, int jobs)
{
    unsigned spins = 0;
    for (;;) {
        if (spin_trylock(l))
            return 0;
        if (atomic_load_explicit(&db_lock_yield_req, memory_order_relaxed))
            return -1;
        if (busy_abort && atomic_load_explicit(&script_busy, memory_order_relaxed))
            return -1;
        if (jobs && jobs_waiting())
            return -1;
        lock_backoff(&spins);
    }
}

/* After a failed wait (everything released): serve this worker's jobs and
 * let a yield request clear before starting over. */
static void after_giveup(void)
{
    if (jobs_waiting())
        db_wait_run_jobs();
    wait_yield_clear();
}


int db_lock_or_yield(unsigned s)
{
    return lock_wait(&ks.locks[s], 0, 0);
}

int db_lock_one_ex(unsigned s, int busy_abort)
{
    unsigned spins = 0;
    for (;;) {
        if (spin_trylock(&ks.locks[s]))
            return 0;
        if (busy_abort && atomic_load_explicit(&script_busy, memory_order_relaxed))
            return -1;
        if (jobs_waiting())
            db_wait_run_jobs(); /* nothing held */
        lock_backoff(&spins);
    }
}

int db_lock_slots_ex(unsigned *slots, int n, int busy_abort)
{
    if (n > 1)
        qsort(slots, (size_t)n, sizeof(unsigned), cmp_uint);
    for (;;) {
        int i;
        for (i = 0; i < n; i++) {
            if (i > 0 && slots[i] == slots[i - 1])
                continue;
            if (!spin_trylock(&ks.locks[slots[i]]) && lock_wait(&ks.locks[slots[i]], busy_abort, 1) < 0)
                break;
        }
        if (i == n)
            return 0;
        db_unlock_slots(slots, i);
        if (busy_abort && atomic_load_explicit(&script_busy, memory_order_relaxed))
            return -1;
        after_giveup();
    }
}

void db_lock_slots(unsigned *slots, int n)
{
    db_lock_slots_ex(slots, n, 0);
}

void db_unlock_slots(const unsigned *slots, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (i > 0 && slots[i] == slots[i - 1])
            continue;
        spin_unlock(&ks.locks[slots[i]]);
    }
}

int db_lock_all_ex(int busy_abort)
{
    for (;;) {
        int i;
        for (i = 0; i < NSLOTS; i++) {
            if (!spin_trylock(&ks.locks[i]) && lock_wait(&ks.locks[i], busy_abort, 1) < 0)
                break;
        }
        if (i == NSLOTS)
            return 0;
        while (--i >= 0)
            spin_unlock(&ks.locks[i]);
        if (busy_abort && atomic_load_explicit(&script_busy, memory_order_relaxed))
            return -1;
        after_giveup();
    }
}

void db_lock_all(void)
{
    db_lock_all_ex(0);
}

void db_unlock_all(void)
{
    for (int i = NSLOTS - 1; i >= 0; i--)
        spin_unlock(&ks.locks[i]);
}

/* ------------------------------------------------------- script lock --- */
/* Taken before any slot lock (lock order: script lock, then slots).  The
 * wait is a timed loop of 1 ms waits so a holder that turns into a busy
 * script is noticed (script_busy) and the waiter gives up. */
static pthread_rwlock_t script_rw;
static pthread_once_t script_rw_once = PTHREAD_ONCE_INIT;
static _Thread_local int script_depth;
static _Thread_local int script_excl;

static void script_rw_init(void)
{
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&script_rw, &a);
    pthread_rwlockattr_destroy(&a);
}

static int script_lock_take(int excl)
{
    pthread_once(&script_rw_once, script_rw_init);
    if (script_depth > 0) {
        script_depth++;
        return 0;
    }
    for (;;) {
        if ((excl ? pthread_rwlock_trywrlock(&script_rw) : pthread_rwlock_tryrdlock(&script_rw)) == 0)
            break;
        if (atomic_load_explicit(&script_busy, memory_order_relaxed))
            return -1;
        /* Nothing is held yet (the script lock comes first): serve this
         * worker's jobs, since a thread holding every slot lock may be
         * waiting in worker_broadcast() for this worker while the lock's
         * writer waits for that thread's slots. */
        if (jobs_waiting())
            db_wait_run_jobs();
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        if ((excl ? pthread_rwlock_timedwrlock(&script_rw, &ts) : pthread_rwlock_timedrdlock(&script_rw, &ts)) == 0)
            break;
    }
    script_depth = 1;
    script_excl = excl;
    return 0;
}

int script_mutex_lock(void)
{
    return script_lock_take(1);
}

int script_shared_lock(void)
{
    return script_lock_take(0);
}

int script_lock_exclusive(void)
{
    return script_depth > 0 && script_excl;
}

void script_mutex_unlock(void)
{
    if (--script_depth == 0) {
        script_excl = 0;
        pthread_rwlock_unlock(&script_rw);
    }
}

static inline struct db_stats *st(void)
{
    return db_tstats ? db_tstats : &dummy_stats;
}

struct entry *entry_new(uint8_t type, const char *key, size_t klen, size_t vlen, long long expire)
{
    size_t hdr = entry_base_for(klen, vlen) + (expire >= 0 ? 8 : 0);
    /* Callers check sizes against proto-max-bulk-len (never above
     * ENTRY_MAX_LEN); a longer key or value would have its length
     * truncated to 32 bits, so stop rather than corrupt the keyspace. */
    if ((unsigned long long)klen > (unsigned long long)ENTRY_MAX_LEN ||
        (unsigned long long)vlen > (unsigned long long)ENTRY_MAX_LEN) {
        log_msg(LL_WARNING, "entry_new: a key or value of %zu/%zu bytes exceeds the entry's %lld-byte limit", klen,
                vlen, ENTRY_MAX_LEN);
        abort();
    }
    struct entry *e = hk_malloc_packed(hdr + klen + vlen);
    entry_init_hdr(e, type, klen, vlen, expire >= 0);
    entry_set_lru(e, db_lfu_mode ? lfu_init() : lru_clock_now);
    if (expire >= 0)
        entry_put_expire(e, expire);
    memcpy((char *)e + hdr, key, klen);
    return e;
}

struct entry *entry_to_long(struct entry *e, size_t extra)
{
    if (e->flags & E_LONG)
        return e;
    uint32_t k = entry_klen(e), v = entry_vlen(e);
    size_t body = entry_size(e) - ENTRY_SHORT_HDR;
    e = hk_realloc_packed(e, ENTRY_LONG_HDR + body + extra);
    memmove((char *)e + ENTRY_LONG_HDR, (char *)e + ENTRY_SHORT_HDR, body);
    e->sklen = 0;
    e->svlen = 0;
    e->flags |= E_LONG;
    ((char *)e)[7] = 0;
    memcpy((char *)e + 8, &k, 4);
    memcpy((char *)e + 12, &v, 4);
    return e;
}

/* The encoding OBJECT ENCODING reports for a freshly written string value:
 * Redis stores integers that fit a long as "int", short strings (<= 44
 * bytes) as "embstr", the rest as "raw". */
uint8_t string_enc(const char *v, size_t n)
{
    long long ll;
    if (n <= 20 && str_to_ll(v, n, &ll))
        return ENC_INT;
    return n <= 44 ? ENC_EMBSTR : ENC_RAW;
}

struct entry *entry_new_string(const char *key, size_t klen, const char *val, size_t vlen, long long expire)
{
    struct entry *e = entry_new(OBJ_STRING, key, klen, vlen, expire);
    memcpy(entry_val(e), val, vlen);
    e->enc = string_enc(val, vlen);
    return e;
}

void entry_free(struct entry *e)
{
    if (e->type != OBJ_STRING && !(e->flags & E_INLINE))
        obj_free_value(e->type, e->enc, entry_ptr(e));
    hk_free(e);
}

/* The value bytes a copy of e under a key of klen bytes needs: e's value
 * and, for an inline collection, at least the room of the pointer form
 * under the new key (object.h), which depends on the header and key
 * lengths: a write detaches the structure in place. */
static size_t copy_vlen(struct entry *e, size_t klen, long long exp)
{
    size_t v = entry_vlen(e);
    if (e->flags & E_INLINE) {
        size_t room = obj_ptr_room(obj_entry_base(klen, exp));
        if (v < room)
            v = room;
    }
    return v;
}

struct entry *entry_dup(struct entry *e, const char *key, size_t klen, int keep_ttl)
{
    long long exp = keep_ttl ? entry_expire(e) : -1;
    struct entry *n;
    if (e->type == OBJ_STRING || (e->flags & E_INLINE)) {
        n = entry_new(e->type, key, klen, copy_vlen(e, klen, exp), exp);
        memcpy(entry_val(n), entry_val(e), entry_vlen(e));
    } else {
        const struct type_ops *o = obj_ops(e->type);
        n = entry_new_obj(e->type, e->enc, key, klen, o->dup(entry_ptr(e), e->enc), exp);
    }
    n->enc = e->enc;
    entry_set_lru(n, entry_lru(e));
    n->flags |= e->flags & (E_HFE | E_INLINE);
    return n;
}

struct entry *entry_rekey(struct entry *e, const char *key, size_t klen)
{
    struct entry *n;
    if (e->type == OBJ_STRING || (e->flags & E_INLINE)) {
        n = entry_new(e->type, key, klen, copy_vlen(e, klen, entry_expire(e)), entry_expire(e));
        memcpy(entry_val(n), entry_val(e), entry_vlen(e));
    } else {
        n = entry_new_obj(e->type, e->enc, key, klen, entry_ptr(e), entry_expire(e));
    }
    n->enc = e->enc;
    entry_set_lru(n, entry_lru(e));
    n->flags |= e->flags & (E_HFE | E_INLINE);
    return n;
}

size_t entry_mem(struct entry *e)
{
    size_t n = hk_usable(e);
    if (e->type != OBJ_STRING && !(e->flags & E_INLINE)) {
        const struct type_ops *o = obj_ops(e->type);
        if (o && o->mem)
            n += o->mem(entry_ptr(e), e->enc);
    }
    return n;
}

static inline struct table **tslot(int db, unsigned slot)
{
    return &ks.dbs[db]->t[slot];
}

/* slot_sweep bit of slot s: set while slot s has keys with a TTL or hashes
 * with field TTLs.  Both counters change only under the slot's lock, so
 * the owner of a transition (0 <-> non-zero) sets or clears the bit; 64
 * slots share a word, hence the atomic or/and (only on transitions). */
static inline void sweep_bit(unsigned slot, uint32_t before, uint32_t after, uint32_t other)
{
    uint64_t bit = 1ULL << (slot & 63);
    if (other)
        return;
    if (!before && after)
        atomic_fetch_or_explicit(&ks.slot_sweep[slot >> 6], bit, memory_order_relaxed);
    else if (before && !after)
        atomic_fetch_and_explicit(&ks.slot_sweep[slot >> 6], ~bit, memory_order_relaxed);
}

static inline void slot_exp_add(unsigned slot, int d)
{
    uint32_t before = atomic_load_explicit(&ks.slot_expires[slot], memory_order_relaxed);
    uint32_t after = before + (uint32_t)d;
    atomic_store_explicit(&ks.slot_expires[slot], after, memory_order_relaxed);
    sweep_bit(slot, before, after, atomic_load_explicit(&ks.slot_hfe[slot], memory_order_relaxed));
}

static inline void slot_hfe_add(unsigned slot, int d)
{
    uint32_t before = atomic_load_explicit(&ks.slot_hfe[slot], memory_order_relaxed);
    uint32_t after = before + (uint32_t)d;
    atomic_store_explicit(&ks.slot_hfe[slot], after, memory_order_relaxed);
    sweep_bit(slot, before, after, atomic_load_explicit(&ks.slot_expires[slot], memory_order_relaxed));
}

void db_set_hfe(int db, unsigned slot, struct entry *e, int on)
{
    (void)db;
    if (on && !(e->flags & E_HFE)) {
        e->flags |= E_HFE;
        slot_hfe_add(slot, 1);
    } else if (!on && (e->flags & E_HFE)) {
        e->flags &= (uint8_t)~E_HFE;
        slot_hfe_add(slot, -1);
    }
}

/* A table appeared at (db, slot) or went away: keep slot_dbs and the
 * slot_keys bit in step (slot lock held). */
static inline void slot_table_add(int db, unsigned slot, int on)
{
    uint64_t before = ks.slot_dbs[slot];
    uint64_t after = on ? before | (1ULL << db) : before & ~(1ULL << db);
    ks.slot_dbs[slot] = after;
    if (!before && after)
        atomic_fetch_or_explicit(&ks.slot_keys[slot >> 6], 1ULL << (slot & 63), memory_order_relaxed);
    else if (before && !after)
        atomic_fetch_and_explicit(&ks.slot_keys[slot >> 6], ~(1ULL << (slot & 63)), memory_order_relaxed);
}

/* shrink 0: leave the table's size (and the other entries' indexes) as
 * they are, the caller calls table_shrink() (the expiry sweep). */
static void remove_at_ex(int db, unsigned slot, long idx, int free_it, int shrink)
{
    struct table **tp = tslot(db, slot);
    struct entry *e = table_get((*tp), idx);
    if (e->flags & E_HFE)
        slot_hfe_add(slot, -1);
    if (e->flags & E_HAS_EXPIRE) {
        (*tp)->expires--;
        slot_exp_add(slot, -1);
    }
    if (shrink)
        table_remove(tp, idx);
    else
        table_remove_keep(*tp, idx);
    if (e->type == OBJ_STREAM && db_stream_gone_hook) /* XREADGROUP waiters learn that the key is gone */
        db_stream_gone_hook(db, slot, entry_key(e), entry_klen(e));
    if ((*tp)->used == 0) {
        table_free(*tp, NULL);
        *tp = NULL;
        slot_table_add(db, slot, 0);
    }
    if (free_it)
        entry_free(e);
}

static void remove_at(int db, unsigned slot, long idx, int free_it)
{
    remove_at_ex(db, slot, idx, free_it, 1);
}

void (*db_stream_gone_hook)(int db, unsigned slot, const char *key, size_t klen);
atomic_int db_expire_paused;
void (*db_key_expired_hook)(int db, unsigned slot, const char *key, size_t klen);
void (*db_hash_expired_hook)(int db, unsigned slot, const char *key, size_t klen, int deleted);
void (*db_hash_field_expired_hook)(int db, const char *key, size_t klen, const char *field, size_t flen);
void (*_Atomic db_keymiss_hook)(int db, const char *key, size_t klen);
void (*_Atomic db_key_added_hook)(int db, const char *key, size_t klen);
void (*_Atomic db_ttl_set_hook)(int db, const char *key, size_t klen);

/* A key of db got a TTL (a new entry with one, or one set on it): tell
 * db_ttl_set_hook, unless a master's stream or an AOF replay wrote it. */
static inline void ttl_set(int db, const struct entry *e)
{
    void (*hook)(int, const char *, size_t) = atomic_load_explicit(&db_ttl_set_hook, memory_order_relaxed);
    if (HK_UNLIKELY(hook != NULL) && !(db_loading | db_master_apply))
        hook(db, entry_key((struct entry *)e), entry_klen(e));
}

static inline void count_miss(int db, const char *key, size_t klen)
{
    void (*hook)(int, const char *, size_t) = atomic_load_explicit(&db_keymiss_hook, memory_order_relaxed);
    STAT_ADD(st()->misses, 1);
    if (hook)
        hook(db, key, klen);
}

/* Delete e, at index i of its table, because its TTL passed: the hooks
 * (event, WATCH, DEL fed), the free (lazyfree-lazy-expire), the stat. */
static void expire_at_idx(int db, unsigned slot, long i, struct entry *e)
{
    remove_at(db, slot, i, 0);
    if (db_key_expired_hook)
        db_key_expired_hook(db, slot, entry_key(e), entry_klen(e));
    int lf = lazyfree_enter(LF_EXPIRE); /* lazyfree-lazy-expire */
    entry_free(e);
    lazyfree_leave(lf);
    STAT_ADD(st()->expired, 1);
}

struct entry *db_get_idx(int db, unsigned slot, const char *key, size_t klen, int flags, long *idx)
{
    struct table *t = *tslot(db, slot);
    long i;
    struct entry *e;
    if (!t) {
        if (!(flags & LK_NOSTATS))
            count_miss(db, key, klen);
        return NULL;
    }
    i = table_find(t, key, klen, db_key_hash(key, klen));
    if (i < 0) {
        if (!(flags & LK_NOSTATS))
            count_miss(db, key, klen);
        return NULL;
    }
    e = table_get(t, i);
    if ((e->flags & E_HAS_EXPIRE) && !(flags & LK_NOEXPIRE) && entry_expire(e) <= db_now_ms() && !(db_loading | db_master_apply)) {
        if (!(flags & LK_NOSTATS) && atomic_load_explicit(&db_expire_paused, memory_order_relaxed)) {
            count_miss(db, key, klen); /* paused: logically gone, not deleted */
            return NULL;
        }
        expire_at_idx(db, slot, i, e);
        if (!(flags & LK_NOSTATS))
            count_miss(db, key, klen);
        return NULL;
    }
    /* No access-time update while a snapshot child shares our pages: the
     * store would copy the page (as Redis skips it with a child active);
     * and none when the value would not change. */
    if (!(flags & LK_NOTOUCH) && !db_notouch && !atomic_load_explicit(&db_child_active, memory_order_relaxed)) {
        uint32_t v = db_lfu_mode ? lfu_touch(entry_lru(e)) : lru_clock_now;
        if (entry_lru(e) != v)
            entry_set_lru(e, v);
    }
    if (!(flags & LK_NOSTATS))
        STAT_ADD(st()->hits, 1);
    if (idx)
        *idx = i;
    return e;
}

_Thread_local struct db_pf db_hint;

/* Keys per round of db_prefetch_keys: each holds its keys' slot locks
 * through the four stages. */
#define PF_ROUND 16

void db_prefetch_keys(int db, struct db_pf *k, int n)
{
    for (int i = 0; i < n; i++) {
        k[i].slot = key_slot(k[i].key, k[i].klen);
        k[i].h = table_hash(k[i].key, k[i].klen);
        __builtin_prefetch(&ks.locks[k[i].slot], 1);
    }
    for (int r = 0; r < n; r += PF_ROUND) {
        struct db_pf *kr = k + r;
        int m = n - r < PF_ROUND ? n - r : PF_ROUND, live = 0;
        const struct table *t[PF_ROUND];
        unsigned char own[PF_ROUND];
        /* One trylock per key for all four stages, not one per stage: a
         * locked exchange costs about 20 cycles and orders the loads
         * around it.  A slot whose lock is busy is skipped, unless the
         * holder is this round (an earlier key of the same slot). */
        for (int i = 0; i < m; i++) {
            t[i] = NULL;
            own[i] = (unsigned char)spin_trylock(&ks.locks[kr[i].slot]);
            if (!own[i]) {
                int j = 0;
                while (j < i && !(own[j] && kr[j].slot == kr[i].slot))
                    j++;
                if (j == i)
                    continue;
            }
            t[i] = *tslot(db, kr[i].slot);
            if (t[i]) {
                __builtin_prefetch(t[i]);
                live++;
            }
        }
        if (live) {
            for (int i = 0; i < m; i++)
                if (t[i])
                    table_prefetch_home(t[i], kr[i].h);
            for (int i = 0; i < m; i++)
                if (t[i])
                    table_prefetch_entry(t[i], kr[i].h, 0);
            for (int i = 0; i < m; i++)
                if (t[i])
                    table_prefetch_entry(t[i], kr[i].h, 1);
        }
        for (int i = 0; i < m; i++)
            if (own[i])
                spin_unlock(&ks.locks[kr[i].slot]);
    }
}

struct entry *db_get(int db, unsigned slot, const char *key, size_t klen, int flags)
{
    return db_get_idx(db, slot, key, klen, flags, NULL);
}

void db_add(int db, unsigned slot, struct entry *e)
{
    void (*hook)(int, const char *, size_t) = atomic_load_explicit(&db_key_added_hook, memory_order_relaxed);
    struct table **tp = tslot(db, slot);
    if (hook)
        hook(db, entry_key(e), entry_klen(e));
    if (!*tp) {
        *tp = table_new(4);
        slot_table_add(db, slot, 1);
    }
    table_insert(tp, e, table_hash(entry_key(e), entry_klen(e)));
    if (e->flags & E_HFE)
        slot_hfe_add(slot, 1);
    if (e->flags & E_HAS_EXPIRE) {
        (*tp)->expires++;
        slot_exp_add(slot, 1);
        ttl_set(db, e);
    }
}

void db_replace(int db, unsigned slot, long idx, struct entry *e)
{
    struct table *t = *tslot(db, slot);
    struct entry *old = table_get(t, idx);
    if (old->flags & E_HFE)
        slot_hfe_add(slot, -1);
    if (e->flags & E_HFE)
        slot_hfe_add(slot, 1);
    if (old->flags & E_HAS_EXPIRE) {
        t->expires--;
        slot_exp_add(slot, -1);
    }
    if (e->flags & E_HAS_EXPIRE) {
        t->expires++;
        slot_exp_add(slot, 1);
        ttl_set(db, e);
    }
    table_set(t, idx, e);
    if (old->type == OBJ_STREAM && old != e && db_stream_gone_hook) /* overwritten: XREADGROUP waiters re-check */
        db_stream_gone_hook(db, slot, entry_key(e), entry_klen(e));
    if (old != e)
        entry_free(old);
}

void db_set(int db, unsigned slot, struct entry *e)
{
    long idx;
    if (db_get_idx(db, slot, entry_key(e), entry_klen(e), LK_NOSTATS | LK_NOTOUCH, &idx))
        db_replace(db, slot, idx, e);
    else
        db_add(db, slot, e);
}

int db_del(int db, unsigned slot, const char *key, size_t klen)
{
    long idx;
    if (!db_get_idx(db, slot, key, klen, LK_NOSTATS | LK_NOTOUCH, &idx))
        return 0;
    remove_at(db, slot, idx, 1);
    return 1;
}

struct entry *db_unlink(int db, unsigned slot, long idx)
{
    struct entry *e = table_get((*tslot(db, slot)), idx);
    remove_at(db, slot, idx, 0);
    return e;
}

struct entry *db_set_expire(int db, unsigned slot, long idx, long long when)
{
    struct table *t = *tslot(db, slot);
    struct entry *e = table_get(t, idx);
    size_t body = (size_t)entry_klen(e) + entry_vlen(e), b = entry_base(e);
    if (when >= 0 && (e->flags & E_HAS_EXPIRE)) {
        entry_put_expire(e, when);
        ttl_set(db, e);
        return e;
    }
    if (when < 0 && !(e->flags & E_HAS_EXPIRE))
        return e;
    if (when >= 0) {
        e = hk_realloc_packed(e, b + 8 + body);
        memmove((char *)e + b + 8, (char *)e + b, body);
        memcpy((char *)e + b, &when, 8);
        e->flags |= E_HAS_EXPIRE;
        t->expires++;
        slot_exp_add(slot, 1);
    } else {
        memmove((char *)e + b, (char *)e + b + 8, body);
        e->flags &= (uint8_t)~E_HAS_EXPIRE;
        e = hk_realloc_packed(e, b + body);
        t->expires--;
        slot_exp_add(slot, -1);
    }
    table_set(t, idx, e);
    if (when >= 0)
        ttl_set(db, e);
    return e;
}

int db_expire_tracked(int db, const char *key, size_t klen, long long now_ms)
{
    if (db < 0 || db >= ks.ndb)
        return 0;
    if (atomic_load_explicit(&db_expire_paused, memory_order_relaxed) & DB_EXPIRE_PAUSED_PAUSE)
        return 1; /* a client pause stops expiry: kept, looked at later */
    unsigned slot = key_slot(key, klen);
    struct spinlock *l = &ks.locks[slot];
    if (!spin_trylock(l))
        return -1;
    int r = 0;
    struct table *t = ks.dbs[db]->t[slot];
    long i = t ? table_find(t, key, klen, table_hash(key, klen)) : -1;
    struct entry *e = i >= 0 ? table_get(t, i) : NULL;
    if (e && (e->flags & E_HAS_EXPIRE)) {
        r = 1;
        if (entry_expire(e) <= now_ms) {
            expire_at_idx(db, slot, i, e);
            r = 2;
        }
    }
    spin_unlock(l);
    return r;
}

unsigned long long db_size(int db)
{
    unsigned long long n = 0;
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = ks.dbs[db]->t[s];
        if (t)
            n += t->used;
    }
    return n;
}

unsigned long long db_expires(int db)
{
    unsigned long long n = 0;
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = ks.dbs[db]->t[s];
        if (t)
            n += t->expires;
    }
    return n;
}

struct table *db_detach(int db, unsigned s)
{
    struct table *t = ks.dbs[db]->t[s];
    if (!t)
        return NULL;
    slot_exp_add(s, -(int)t->expires);
    for (uint32_t i = 0; i < t->cap; i++)
        if (table_full(t, i) && (table_get(t, i)->flags & E_HFE))
            slot_hfe_add(s, -1);
    ks.dbs[db]->t[s] = NULL;
    slot_table_add(db, s, 0);
    return t;
}

void db_flush(int db)
{
    /* Everything is freed here, big values too (never queued to the
     * lazy-free thread: FLUSH SYNC, DEBUG RELOAD and loads empty inline). */
    int lf = lazyfree_enter(LF_NEVER);
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = db_detach(db, s);
        if (t)
            table_free(t, entry_free);
    }
    lazyfree_leave(lf);
}

/* ------------------------------------------------ shadow datasets ---
 * A dataset built off the keyspace by one thread (a replica's async load,
 * repl-diskless-load swapdb), then swapped in whole. */
struct db_shadow {
    int ndb;
    uint32_t hfe[NSLOTS]; /* E_HFE entries per slot, over every database */
    struct table *t[];    /* ndb * NSLOTS */
};

struct db_shadow *db_shadow_new(void)
{
    struct db_shadow *s = hk_calloc(sizeof(*s) + sizeof(struct table *) * (size_t)ks.ndb * NSLOTS);
    s->ndb = ks.ndb;
    return s;
}

static inline struct table **shadow_slot(struct db_shadow *s, int db, unsigned slot)
{
    return &s->t[(size_t)db * NSLOTS + slot];
}

long db_shadow_find(struct db_shadow *s, int db, unsigned slot, const char *key, size_t klen)
{
    struct table *t = *shadow_slot(s, db, slot);
    return t ? table_find(t, key, klen, table_hash(key, klen)) : -1;
}

void db_shadow_add(struct db_shadow *s, int db, unsigned slot, struct entry *e)
{
    struct table **tp = shadow_slot(s, db, slot);
    if (!*tp)
        *tp = table_new(4);
    table_insert(tp, e, table_hash(entry_key(e), entry_klen(e)));
    if (e->flags & E_HAS_EXPIRE)
        (*tp)->expires++;
    if (e->flags & E_HFE)
        s->hfe[slot]++;
}

void db_shadow_replace(struct db_shadow *s, int db, unsigned slot, long idx, struct entry *e)
{
    struct table *t = *shadow_slot(s, db, slot);
    struct entry *old = table_get(t, idx);
    t->expires += (uint32_t)((e->flags & E_HAS_EXPIRE) != 0) - (uint32_t)((old->flags & E_HAS_EXPIRE) != 0);
    s->hfe[slot] += (uint32_t)((e->flags & E_HFE) != 0) - (uint32_t)((old->flags & E_HFE) != 0);
    table_set(t, idx, e);
    if (old != e)
        entry_free(old);
}

/* The tables of tabs[0..n) to the lazy-free thread, with tabs itself. */
static void free_tables_lazy(struct table **tabs, size_t n, unsigned long long nkeys)
{
    if (n)
        lazyfree_tables(tabs, n, nkeys);
    else
        hk_free(tabs);
}

void db_shadow_free(struct db_shadow *s)
{
    size_t n = 0, total = (size_t)s->ndb * NSLOTS;
    unsigned long long nkeys = 0;
    struct table **tabs = hk_malloc(sizeof(*tabs) * (total ? total : 1));
    for (size_t i = 0; i < total; i++)
        if (s->t[i]) {
            nkeys += s->t[i]->used;
            tabs[n++] = s->t[i];
        }
    free_tables_lazy(tabs, n, nkeys);
    hk_free(s);
}

void db_shadow_swap_in(struct db_shadow *s)
{
    size_t n = 0, total = (size_t)ks.ndb * NSLOTS;
    unsigned long long nkeys = 0;
    struct table **old = hk_malloc(sizeof(*old) * total);
    for (unsigned w = 0; w < NSLOTS / 64; w++) {
        uint64_t keys = 0, sweep = 0;
        for (unsigned b = 0; b < 64; b++) {
            unsigned slot = w * 64 + b;
            uint64_t dbs = 0;
            uint32_t exp = 0;
            for (int d = 0; d < ks.ndb; d++) {
                struct table *t = ks.dbs[d]->t[slot];
                if (t) {
                    nkeys += t->used;
                    old[n++] = t;
                }
                t = d < s->ndb ? *shadow_slot(s, d, slot) : NULL;
                ks.dbs[d]->t[slot] = t;
                if (t) {
                    dbs |= 1ULL << d;
                    exp += t->expires;
                }
            }
            ks.slot_dbs[slot] = dbs;
            atomic_store_explicit(&ks.slot_expires[slot], exp, memory_order_relaxed);
            atomic_store_explicit(&ks.slot_hfe[slot], s->hfe[slot], memory_order_relaxed);
            if (dbs)
                keys |= 1ULL << b;
            if (exp || s->hfe[slot])
                sweep |= 1ULL << b;
        }
        atomic_store_explicit(&ks.slot_keys[w], keys, memory_order_relaxed);
        atomic_store_explicit(&ks.slot_sweep[w], sweep, memory_order_relaxed);
    }
    hk_free(s);
    free_tables_lazy(old, n, nkeys);
}

void db_swap(int a, int b)
{
    struct db *t = ks.dbs[a];
    ks.dbs[a] = ks.dbs[b];
    ks.dbs[b] = t;
    /* The tables moved with their databases: so do their slot_dbs bits
     * (slot_keys, the union, is unchanged). */
    for (unsigned s = 0; s < NSLOTS; s++) {
        uint64_t m = ks.slot_dbs[s], ba = (m >> a) & 1, bb = (m >> b) & 1;
        if (ba != bb)
            ks.slot_dbs[s] = m ^ ((1ULL << a) | (1ULL << b));
    }
}

/* Sweep expired keys (db.h).  A slot's tables are small (1/16384 of the
 * keys) and scanned whole under the slot's lock; the budget is checked
 * after every slot that had keys with a TTL.  Entries are prefetched
 * SWEEP_PREFETCH slots ahead: a sweep over millions of keys is bound by the
 * cache misses of reading each entry's expire time. */
#define SWEEP_PREFETCH 16
static inline void sweep_prefetch(const struct table *t, uint32_t i)
{
    if (i < t->cap && table_full(t, i)) {
#if defined(__x86_64__) || defined(__i386__)
        /* (GCC 12 at -O2 drops this __builtin_prefetch altogether) */
        __asm__ volatile("prefetcht0 (%0)" : : "r"(table_get(t, i)));
#else
        __builtin_prefetch(t->slots[i]);
#endif
    }
}

long db_active_expire(unsigned from, unsigned to, unsigned *cursor, struct expire_pass *p)
{
    if (atomic_load_explicit(&db_expire_paused, memory_order_relaxed)) {
        p->checked = p->expired = 0; /* a client pause stops expiry */
        p->timed_out = 0;
        p->busy = 0;
        return 0;
    }
    long long start = mono_us(), now = time_ms();
    long removed = 0, checked = 0, b_checked = 0, b_expired = 0;
    unsigned s = *cursor < from || *cursor >= to ? from : *cursor;
    unsigned visited = 0, span = to - from;
    int lf = lazyfree_enter(LF_EXPIRE); /* lazyfree-lazy-expire */

    p->timed_out = 0;
    p->busy = 0;
    while (visited < span) {
        /* 64 slots without TTLs at once (the common case): one load. */
        if ((s & 63) == 0 && s + 64 <= to &&
            !atomic_load_explicit(&ks.slot_sweep[s >> 6], memory_order_relaxed)) {
            visited += 64;
            s += 64;
            if (s >= to)
                s = from;
            continue;
        }
        struct spinlock *l = &ks.locks[s];
        int hfe = atomic_load_explicit(&ks.slot_hfe[s], memory_order_relaxed) != 0;
        int worked = 0, ttls = atomic_load_explicit(&ks.slot_expires[s], memory_order_relaxed) || hfe;
        if (ttls && !spin_trylock(l)) {
            p->busy++;
        } else if (ttls) {
            worked = 1;
            for (int d = 0; d < ks.ndb; d++) {
                struct table *t = ks.dbs[d]->t[s];
                if (!t || (t->expires == 0 && !hfe))
                    continue;
                for (uint32_t i = 0; i < SWEEP_PREFETCH; i++)
                    sweep_prefetch(t, i);
                for (uint32_t i = 0; i < t->cap; i++) {
                    sweep_prefetch(t, i + SWEEP_PREFETCH);
                    if (!table_full(t, i))
                        continue;
                    struct entry *e = table_get(t, i);
                    if (!(e->flags & (E_HAS_EXPIRE | E_HFE)))
                        continue;
                    int gone = (e->flags & E_HAS_EXPIRE) && entry_expire(e) <= now;
                    int expired = gone;
                    checked++;
                    b_checked++;
                    if (!gone && (e->flags & E_HFE)) {
                        int empty = 0;
                        long dropped = obj_ops(OBJ_HASH)->expire_fields(d, e, s, now, &empty);
                        gone = empty;
                        /* (e stays in place: expiry only shrinks it) */
                        if ((dropped || empty) && db_hash_expired_hook)
                            db_hash_expired_hook(d, s, entry_key(e), entry_klen(e), empty);
                    }
                    if (!gone)
                        continue;
                    /* No shrink while scanning (indexes stay valid); the
                     * table goes away with its last key. */
                    remove_at_ex(d, s, (long)i, 0, 0);
                    if (expired && db_key_expired_hook)
                        db_key_expired_hook(d, s, entry_key(e), entry_klen(e));
                    entry_free(e);
                    removed++;
                    b_expired++;
                    if (!ks.dbs[d]->t[s])
                        break;
                }
                if (ks.dbs[d]->t[s])
                    table_shrink(&ks.dbs[d]->t[s]);
            }
            spin_unlock(l);
        }
        visited++;
        if (++s >= to)
            s = from;
        if (!worked && (visited & 63) != 0)
            continue;
        /* A full batch of mostly live keys: the rest of the range is likely
         * as clean, stop here (the cursor keeps the place). */
        if (p->batch && b_checked >= (long)p->batch) {
            int stale = b_expired * 100 > b_checked * (long)p->stale_pct;
            b_checked = b_expired = 0;
            if (!stale)
                break;
        }
        if (mono_us() - start >= p->budget_us) {
            p->timed_out = 1;
            break;
        }
    }
    lazyfree_leave(lf);
    *cursor = s;
    p->checked = checked;
    p->expired = removed;
    if (db_tstats)
        STAT_ADD(db_tstats->expired, (unsigned long long)removed);
    return removed;
}
