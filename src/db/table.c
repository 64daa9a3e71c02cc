/* table.c - see table.h. */
#include "table.h"

#include <string.h>

#include "../base/mem.h"

uint64_t table_seed = 0x5bd1e9955bd1e995ULL;

static inline uint32_t home(const struct table *t, uint64_t h)
{
    return (uint32_t)(((h & 0xffffffffULL) * t->cap) >> 32);
}

static inline uint8_t tag_of(uint64_t h)
{
    return (uint8_t)(0x80 | (h >> 57));
}

/* One allocation per table: the header, the pointer array, then the tags.
 * The capacity is widened to whatever the allocator's size class holds
 * anyway, so its rounding buys slots instead of being wasted. */
struct table *table_new(uint32_t cap)
{
    struct table *t;
    size_t per = sizeof(struct entry *) + 1, usable;
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
                free_entry(t->slots[i]);
    }
    hk_free(t);
}

long table_find(const struct table *t, const char *key, size_t klen, uint64_t h)
{
    uint32_t i = home(t, h);
    uint8_t tag = tag_of(h);
    for (;;) {
        uint8_t g = table_tags(t)[i];
        if (g == tag) {
            struct entry *e = t->slots[i];
            if (e->klen == klen && memcmp(entry_key(e), key, klen) == 0)
                return (long)i;
        } else if (g == TAG_EMPTY) {
            return -1;
        }
        if (++i == t->cap)
            i = 0;
    }
}

static uint32_t place(struct table *t, struct entry *e, uint64_t h)
{
    uint32_t i = home(t, h);
    while (table_tags(t)[i] & 0x80) {
        if (++i == t->cap)
            i = 0;
    }
    if (table_tags(t)[i] == TAG_TOMB)
        t->tombs--;
    table_tags(t)[i] = tag_of(h);
    t->slots[i] = e;
    return i;
}

static void resize(struct table **tp, uint32_t ncap)
{
    struct table *o = *tp, *n = table_new(ncap);
    for (uint32_t i = 0; i < o->cap; i++) {
        if (table_full(o, i)) {
            struct entry *e = o->slots[i];
            place(n, e, table_hash(entry_key(e), e->klen));
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
     * so the load stays between 0.70 and 0.88 (about 11 bytes of index per
     * key).  Small tables grow by at least 4 slots. */
    if ((uint64_t)(t->used + t->tombs + 1) * 100 > (uint64_t)t->cap * 88) {
        uint32_t ncap = t->cap;
        if ((uint64_t)(t->used + 1) * 100 > (uint64_t)t->cap * 70)
            ncap = t->cap + (t->cap / 4 > 4 ? t->cap / 4 : 4);
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
