/* intset.c - see intset.h. */
#include "intset.h"

#include <string.h>

#include "../base/mem.h"

#define IS_HDR 8

static inline uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline unsigned width(const unsigned char *is)
{
    return rd32(is);
}

size_t is_len(const unsigned char *is)
{
    return rd32(is + 4);
}

size_t is_bytes(const unsigned char *is)
{
    return IS_HDR + is_len(is) * width(is);
}

static int64_t get_w(const unsigned char *is, size_t i, unsigned w)
{
    const unsigned char *p = is + IS_HDR + i * w;
    uint64_t u = 0;
    for (unsigned k = 0; k < w; k++)
        u |= (uint64_t)p[k] << (8 * k);
    if (w < 8) {
        uint64_t m = (uint64_t)1 << (8 * w - 1);
        u &= ((uint64_t)1 << (8 * w)) - 1;
        return (int64_t)((u ^ m) - m);
    }
    return (int64_t)u;
}

static void set_w(unsigned char *is, size_t i, unsigned w, int64_t v)
{
    unsigned char *p = is + IS_HDR + i * w;
    for (unsigned k = 0; k < w; k++)
        p[k] = (unsigned char)((uint64_t)v >> (8 * k));
}

int64_t is_get(const unsigned char *is, size_t i)
{
    return get_w(is, i, width(is));
}

static unsigned width_for(int64_t v)
{
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 2;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 4;
    return 8;
}

unsigned char *is_new(void)
{
    unsigned char *is = hk_malloc(IS_HDR);
    wr32(is, 2);
    wr32(is + 4, 0);
    return is;
}

void is_free(unsigned char *is)
{
    hk_free(is);
}

/* Binary search: 1 and *pos = index if found, else 0 and *pos = the
 * insertion point. */
static int search(const unsigned char *is, int64_t v, size_t *pos)
{
    size_t lo = 0, hi = is_len(is);
    unsigned w = width(is);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = get_w(is, mid, w);
        if (x == v) {
            *pos = mid;
            return 1;
        }
        if (x < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

int is_find(const unsigned char *is, int64_t v)
{
    size_t pos;
    if (width_for(v) > width(is))
        return 0;
    return search(is, v, &pos);
}

unsigned char *is_add(unsigned char *is, int64_t v, int *changed)
{
    size_t n = is_len(is), pos;
    unsigned w = width(is), nw = width_for(v);
    if (changed)
        *changed = 0;
    if (nw > w) {
        /* Upgrade: v is outside the old range, so it goes first (negative)
         * or last; widen from the end backwards in place. */
        is = hk_realloc(is, IS_HDR + (n + 1) * nw);
        int prepend = v < 0;
        for (size_t i = n; i-- > 0;)
            set_w(is, i + (size_t)prepend, nw, get_w(is, i, w));
        set_w(is, prepend ? 0 : n, nw, v);
        wr32(is, nw);
        wr32(is + 4, (uint32_t)(n + 1));
        if (changed)
            *changed = 1;
        return is;
    }
    if (search(is, v, &pos))
        return is;
    is = hk_realloc(is, IS_HDR + (n + 1) * w);
    memmove(is + IS_HDR + (pos + 1) * w, is + IS_HDR + pos * w, (n - pos) * w);
    set_w(is, pos, w, v);
    wr32(is + 4, (uint32_t)(n + 1));
    if (changed)
        *changed = 1;
    return is;
}

unsigned char *is_remove(unsigned char *is, int64_t v, int *changed)
{
    size_t n = is_len(is), pos;
    unsigned w = width(is);
    if (changed)
        *changed = 0;
    if (width_for(v) > w || !search(is, v, &pos))
        return is;
    memmove(is + IS_HDR + pos * w, is + IS_HDR + (pos + 1) * w, (n - pos - 1) * w);
    wr32(is + 4, (uint32_t)(n - 1));
    is = hk_realloc(is, IS_HDR + (n - 1) * w);
    if (changed)
        *changed = 1;
    return is;
}

int64_t is_min(const unsigned char *is)
{
    return is_get(is, 0);
}

int64_t is_max(const unsigned char *is)
{
    return is_get(is, is_len(is) - 1);
}

int is_validate(const unsigned char *is, size_t size)
{
    unsigned w;
    size_t n;
    if (size < IS_HDR)
        return 0;
    w = width(is);
    if (w != 2 && w != 4 && w != 8)
        return 0;
    n = is_len(is);
    if (n == 0 || (size - IS_HDR) / w != n || (size - IS_HDR) % w != 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if (get_w(is, i - 1, w) >= get_w(is, i, w))
            return 0;
    return 1;
}
