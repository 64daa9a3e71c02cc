/* table.c - see table.h. */
#include "table.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../base/log.h"
#include "../base/mem.h"

/* Read by every lookup on every thread, written once at start-up: a line
 * of its own, so no counter written at run time shares it. */
_Alignas(64) uint64_t table_seed = 0x5bd1e9955bd1e995ULL;

void table_bad_address(const void *e)
{
    log_msg(LL_WARNING, "table: entry address %p does not fit the index's 48 bits", e);
    abort();
}

static inline uint32_t home(const struct table *t, uint64_t h)
{
    return (uint32_t)(((h & 0xffffffffULL) * t->cap) >> 32);
}

static inline uint8_t tag_of(uint64_t h)
{
    return (uint8_t)(0x80 | (h >> 57));
}

void table_prefetch_home(const struct table *t, uint64_t h)
{
    uint32_t i = home(t, h);
    __builtin_prefetch(table_tags(t) + i);
    __builtin_prefetch(t->slots_ + (size_t)i * TABLE_PTR);
}

void table_prefetch_entry(const struct table *t, uint64_t h, int whole)
{
    const uint8_t *tags = table_tags(t);
    uint8_t tag = tag_of(h);
    uint32_t i = home(t, h);
    for (int n = 0; n < 8 && tags[i] != TAG_EMPTY; n++) {
        if (tags[i] == tag) {
            const struct entry *e = table_get(t, i);
            if (!whole) {
                __builtin_prefetch(e);
                return;
            }
            size_t len = entry_size_hint(e);
            if (len > 512)
                len = 512;
            for (size_t o = 64; o < len; o += 64)
                __builtin_prefetch((const char *)e + o);
            return;
        }
        if (++i == t->cap)
            i = 0;
    }
}

/* One allocation per table: the header, the pointer array, then the tags.
 * The capacity is widened to whatever the allocator's size class holds
 * anyway, so its rounding buys slots instead of being wasted. */
struct table *table_new(uint32_t cap)
{
    struct table *t;
    size_t per = TABLE_SLOT, usable;
    if (cap < 4)
        cap = 4;
    t = hk_malloc(sizeof(*t) + (size_t)cap * per);
    usable = hk_usable(t);
    if (usable > sizeof(*t) + (size_t)cap * per)
        cap = (uint32_t)((usable - sizeof(*t)) / per);
    t->cap = cap;
    t->used = t->tombs = t->expires = 0;
    memset(table_tags(t), 0, cap);
    return t;
}

void table_free(struct table *t, void (*free_entry)(struct entry *))
{
    if (!t)
        return;
    if (free_entry) {
        for (uint32_t i = 0; i < t->cap; i++)
            if (table_full(t, i))
                free_entry(table_get(t, i));
    }
    hk_free(t);
}

/* Probing reads 16 tags at a time with SSE2 (part of every x86-64 CPU):
 * one compare finds the tag matches and one the empty slots, so a miss at
 * 0.88 load (a long run of full and deleted slots before an empty one)
 * costs a few vector steps instead of a branch per slot.  Within the last
 * 15 slots before the wrap it goes one slot at a time (never reading past
 * the tag array). */
long table_find(const struct table *t, const char *key, size_t klen, uint64_t h)
{
    uint32_t i = home(t, h), cap = t->cap;
    uint8_t tag = tag_of(h);
    const uint8_t *tags = table_tags(t);
    /* The home slot first: most hits end there, and most misses of a
     * lightly loaded table too. */
    uint8_t g0 = tags[i];
    if (g0 == TAG_EMPTY)
        return -1;
    if (g0 == tag) {
        struct entry *e = table_get(t, i);
        if (entry_key_is(e, key, klen))
            return (long)i;
    }
    if (++i == cap)
        i = 0;
#ifdef __SSE2__
    const __m128i vt = _mm_set1_epi8((char)tag), ve = _mm_setzero_si128();
#endif
    for (;;) {
#ifdef __SSE2__
        if (i + 16 <= cap) {
            __m128i g = _mm_loadu_si128((const __m128i *)(tags + i));
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(g, vt));
            unsigned em = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(g, ve));
            if (em)
                m &= (em & (0u - em)) - 1; /* only matches before the first empty */
            while (m) {
                uint32_t j = i + (uint32_t)__builtin_ctz(m);
                struct entry *e = table_get(t, j);
                if (entry_key_is(e, key, klen))
                    return (long)j;
                m &= m - 1;
            }
            if (em)
                return -1;
            i += 16;
            if (i == cap)
                i = 0;
            continue;
        }
#endif
        uint8_t g = tags[i];
        if (g == tag) {
            struct entry *e = table_get(t, i);
            if (entry_key_is(e, key, klen))
                return (long)i;
        } else if (g == TAG_EMPTY) {
            return -1;
        }
        if (++i == cap)
            i = 0;
    }
}

static uint32_t place(struct table *t, struct entry *e, uint64_t h)
{
    uint32_t i = home(t, h), cap = t->cap;
    uint8_t *tags = table_tags(t);
    for (;;) {
#ifdef __SSE2__
        if (i + 16 <= cap) {
            /* A tag's top bit says full: the first clear one is free. */
            unsigned free = ~(unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(tags + i))) & 0xffffu;
            if (!free) {
                i += 16;
                if (i == cap)
                    i = 0;
                continue;
            }
            i += (uint32_t)__builtin_ctz(free);
            break;
        }
#endif
        if (!(tags[i] & 0x80))
            break;
        if (++i == cap)
            i = 0;
    }
    if (tags[i] == TAG_TOMB)
        t->tombs--;
    tags[i] = tag_of(h);
    table_set(t, i, e);
    return i;
}

static void resize(struct table **tp, uint32_t ncap)
{
    struct table *o = *tp, *n = table_new(ncap);
    for (uint32_t i = 0; i < o->cap; i++) {
        if (table_full(o, i)) {
            struct entry *e = table_get(o, i);
            place(n, e, table_hash(entry_key(e), entry_klen(e)));
        }
    }
    n->used = o->used;
    n->expires = o->expires;
    table_free(o, NULL);
    *tp = n;
}

long table_insert(struct table **tp, struct entry *e, uint64_t h)
{
    struct table *t = *tp;
    /* Keep (live + tombstones) under 88% so every probe sequence ends at
     * an empty slot and stays within a cache line of tags; grow by 1.25x
     * so the load stays between 0.70 and 0.88.  Tables under 32 slots
     * grow to the next allocator size class (table_new widens cap to fill
     * it: a step of 2-3 slots), so the few keys of a shard at 100k keys
     * do not sit in a table a third empty; rehashing that few is cheap. */
    if ((uint64_t)(t->used + t->tombs + 1) * 100 > (uint64_t)t->cap * 88) {
        uint32_t ncap = t->cap;
        if ((uint64_t)(t->used + 1) * 100 > (uint64_t)t->cap * 70) {
            ncap = t->cap < 32 ? t->cap + 1 : t->cap + t->cap / 4;
            /* Past 88% even after the step (an allocator without size
             * classes widens nothing): enough slots for that. */
            uint32_t min = (uint32_t)(((uint64_t)(t->used + 1) * 100 + 87) / 88);
            if (ncap < min)
                ncap = min;
        }
        resize(tp, ncap); /* same size: just drops tombstones */
        t = *tp;
    }
    t->used++;
    return (long)place(t, e, h);
}

/* Shrink by half once live entries fall under 20% of the slots. */
void table_remove(struct table **tp, long idx)
{
    struct table *t = *tp;
    table_remove_keep(t, idx);
    if (t->cap > 16 && (uint64_t)t->used * 100 < (uint64_t)t->cap * 20)
        resize(tp, t->cap / 2);
}

/* After many removals at once: straight to ~40% load in one rehash (the
 * allocator's rounding of the capacity lowers that a little, never to the
 * 20% that would shrink it again). */
void table_shrink(struct table **tp)
{
    struct table *t = *tp;
    if (t->cap > 16 && (uint64_t)t->used * 100 < (uint64_t)t->cap * 20) {
        uint32_t ncap = t->used * 5 / 2;
        resize(tp, ncap < 8 ? 8 : ncap);
    }
}

void table_remove_keep(struct table *t, long idx)
{
    uint32_t i = (uint32_t)idx;
    uint32_t next = i + 1 == t->cap ? 0 : i + 1;
    t->used--;
    if (table_tags(t)[next] == TAG_EMPTY) {
        /* End of a probe run: this slot and the tombstones before it can
         * become empty again. */
        table_tags(t)[i] = TAG_EMPTY;
        for (;;) {
            i = i == 0 ? t->cap - 1 : i - 1;
            if (table_tags(t)[i] != TAG_TOMB)
                break;
            table_tags(t)[i] = TAG_EMPTY;
            t->tombs--;
        }
    } else {
        table_tags(t)[i] = TAG_TOMB;
        t->tombs++;
    }
}

size_t table_bytes(const struct table *t)
{
    return t ? hk_usable((void *)t) : 0;
}
