/* stream.c - see stream.h for the layout. */
#include "stream.h"

#include <stdio.h>
#include <string.h>

#include "../base/mem.h"

long long stream_node_max_bytes = 4096;
long long stream_node_max_entries = 100;

#define SE_DELETED 0x01
#define SE_SAMEFIELDS 0x02 /* field names are the block's master fields: only values stored */

struct sblock {
    struct stream_id base;   /* <= every entry's ID in the block, > every ID before it */
    struct stream_id last;   /* ID of the last entry appended (deleted or not) */
    uint32_t used, cap;      /* bytes of data[] used / allocated */
    uint32_t count, live;    /* entries (tombstones included) / live entries */
    uint32_t mlen, nmaster;  /* master fields: bytes at the start of data[], count */
    unsigned char data[];
};

/* ---------------------------------------------------------------- IDs --- */
int sid_incr(struct stream_id *id)
{
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX)
            return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int sid_decr(struct stream_id *id)
{
    if (id->seq == 0) {
        if (id->ms == 0)
            return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

int sid_format(char *buf, const struct stream_id *id)
{
    return sprintf(buf, "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
}

/* ------------------------------------------------------------ varints --- */
static inline size_t vlen_of(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline unsigned char *vput(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline uint64_t vget(const unsigned char **pp)
{
    const unsigned char *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        unsigned char b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
    }
    *pp = p;
    return v;
}

/* --------------------------------------------------------- entry codec --- */
/* Decode the header of the entry at p: flags, ID, nfields; returns the
 * pointer to its first field. */
static inline const unsigned char *ent_head(const struct sblock *b, const unsigned char *p, unsigned *flags,
                                            struct stream_id *id, uint64_t *nfields)
{
    *flags = *p++;
    id->ms = b->base.ms + vget(&p);
    id->seq = vget(&p);
    *nfields = (*flags & SE_SAMEFIELDS) ? b->nmaster : vget(&p);
    return p;
}

/* Pointer past the entry whose fields start at p. */
static inline const unsigned char *ent_skip(const unsigned char *p, uint64_t nfields, unsigned flags)
{
    uint64_t n = (flags & SE_SAMEFIELDS) ? nfields : 2 * nfields;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t l = vget(&p);
        p += l;
    }
    return p;
}

void stream_entry_field(struct stream_entry *e, const char **f, size_t *flen, const char **v, size_t *vlen)
{
    const unsigned char *p = e->p;
    if (e->mf) {
        const unsigned char *m = e->mf;
        *flen = (size_t)vget(&m);
        *f = (const char *)m;
        e->mf = m + *flen;
    } else {
        *flen = (size_t)vget(&p);
        *f = (const char *)p;
        p += *flen;
    }
    *vlen = (size_t)vget(&p);
    *v = (const char *)p;
    p += *vlen;
    e->p = p;
}

/* -------------------------------------------------------------- blocks --- */
static struct sblock *blk_new(const struct stream_id *base, size_t cap)
{
    struct sblock *b = hk_malloc(sizeof(*b) + cap);
    b->base = *base;
    b->last = *base;
    b->used = 0;
    b->cap = (uint32_t)cap;
    b->count = b->live = 0;
    b->mlen = b->nmaster = 0;
    return b;
}

static void arr_insert(struct stream *s, size_t i, struct sblock *b)
{
    if (s->nblk == s->cap) {
        s->cap = hk_grow_cap(s->cap, s->nblk + 1, 4, sizeof(*s->blk));
        s->blk = hk_realloc(s->blk, hk_array_bytes(s->cap, sizeof(*s->blk)));
    }
    memmove(&s->blk[i + 1], &s->blk[i], sizeof(*s->blk) * (s->nblk - i));
    s->blk[i] = b;
    s->nblk++;
}

static void arr_remove(struct stream *s, size_t i)
{
    hk_free(s->blk[i]);
    memmove(&s->blk[i], &s->blk[i + 1], sizeof(*s->blk) * (s->nblk - i - 1));
    s->nblk--;
    if (s->nblk == 0) {
        hk_free(s->blk);
        s->blk = NULL;
        s->cap = 0;
    } else if (s->cap > 16 && s->nblk < s->cap / 4) {
        s->cap /= 2;
        s->blk = hk_realloc(s->blk, sizeof(*s->blk) * s->cap);
    }
}

/* Index of the block that may hold id: the last one whose base <= id
 * (-1 when id is below every block). */
static long blk_find(const struct stream *s, const struct stream_id *id)
{
    long lo = 0, hi = (long)s->nblk - 1, ans = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (sid_cmp(&s->blk[mid]->base, id) <= 0) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

/* First live entry of block b (which has live > 0). */
static void blk_first_live(const struct sblock *b, struct stream_id *out)
{
    const unsigned char *p = b->data + b->mlen, *end = b->data + b->used;
    while (p < end) {
        unsigned flags;
        uint64_t nf;
        struct stream_id id;
        const unsigned char *q = ent_head(b, p, &flags, &id, &nf);
        if (!(flags & SE_DELETED)) {
            *out = id;
            return;
        }
        p = ent_skip(q, nf, flags);
    }
    out->ms = out->seq = 0;
}

static void update_first(struct stream *s)
{
    if (s->length == 0 || s->nblk == 0) {
        s->first_id.ms = s->first_id.seq = 0;
        return;
    }
    blk_first_live(s->blk[0], &s->first_id);
}

/* Rewrite block i without its tombstones (base and last are kept, so the
 * block still covers the same ID range). */
static void blk_compact(struct stream *s, size_t i)
{
    struct sblock *b = s->blk[i];
    struct sblock *n = blk_new(&b->base, b->used);
    const unsigned char *p = b->data + b->mlen, *end = b->data + b->used;
    n->last = b->last;
    memcpy(n->data, b->data, b->mlen);
    n->used = n->mlen = b->mlen;
    n->nmaster = b->nmaster;
    while (p < end) {
        unsigned flags;
        uint64_t nf;
        struct stream_id id;
        const unsigned char *start = p;
        const unsigned char *q = ent_head(b, p, &flags, &id, &nf);
        p = ent_skip(q, nf, flags);
        if (flags & SE_DELETED)
            continue;
        memcpy(n->data + n->used, start, (size_t)(p - start));
        n->used += (uint32_t)(p - start);
        n->count++;
        n->live++;
    }
    if (n->used < n->cap) {
        n->cap = n->used;
        n = hk_realloc(n, sizeof(*n) + (n->cap ? n->cap : 1));
    }
    hk_free(b);
    s->blk[i] = n;
}

/* After tombstones were added to block i: free it when empty, compact it
 * when mostly dead.  Returns 1 when the block was removed. */
static int blk_after_delete(struct stream *s, size_t i)
{
    struct sblock *b = s->blk[i];
    if (b->live == 0) {
        arr_remove(s, i);
        return 1;
    }
    if (b->count >= 8 && b->count - b->live > b->live)
        blk_compact(s, i);
    return 0;
}

/* ------------------------------------------------------------- stream --- */
struct stream *stream_new(void)
{
    return hk_calloc(sizeof(struct stream));
}

void stream_free(struct stream *s)
{
    for (size_t i = 0; i < s->nblk; i++)
        hk_free(s->blk[i]);
    hk_free(s->blk);
    hk_free(s);
}

struct stream *stream_dup(const struct stream *s)
{
    struct stream *n = hk_malloc(sizeof(*n));
    *n = *s;
    n->cgroups = NULL;
    n->blk = NULL;
    n->cap = n->nblk = 0;
    if (s->nblk) {
        n->cap = s->nblk;
        n->blk = hk_malloc(sizeof(*n->blk) * n->cap);
        for (size_t i = 0; i < s->nblk; i++) {
            const struct sblock *b = s->blk[i];
            struct sblock *c = hk_malloc(sizeof(*c) + (b->used ? b->used : 1));
            *c = *b;
            c->cap = b->used;
            memcpy(c->data, b->data, b->used);
            n->blk[i] = c;
        }
        n->nblk = s->nblk;
    }
    return n;
}

size_t stream_mem(const struct stream *s)
{
    size_t n = hk_usable((void *)s);
    if (s->blk)
        n += hk_usable(s->blk);
    for (size_t i = 0; i < s->nblk; i++)
        n += hk_usable(s->blk[i]);
    return n;
}

/* Do the n field names of fv match block b's master fields? */
static int same_fields(const struct sblock *b, const char *const *fv, const size_t *fvlen, size_t n)
{
    const unsigned char *m = b->data;
    if (b->nmaster != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t l = vget(&m);
        if (l != fvlen[2 * i] || memcmp(m, fv[2 * i], l) != 0)
            return 0;
        m += l;
    }
    return 1;
}

void stream_append(struct stream *s, const struct stream_id *id, const char *const *fv, const size_t *fvlen,
                   size_t nfields)
{
    struct sblock *b = s->nblk ? s->blk[s->nblk - 1] : NULL;
    size_t fbytes = 0, vbytes = 0;
    for (size_t i = 0; i < nfields; i++) {
        fbytes += vlen_of(fvlen[2 * i]) + fvlen[2 * i];
        vbytes += vlen_of(fvlen[2 * i + 1]) + fvlen[2 * i + 1];
    }
    /* Size without the master-field saving (the node rules use it). */
    size_t need = 1 + 10 + vlen_of(id->seq) + vlen_of(nfields) + fbytes + vbytes;
    /* A new block when the last is full by Redis's node rules. */
    if (b && ((stream_node_max_entries > 0 && (long long)b->count >= stream_node_max_entries) ||
              (stream_node_max_bytes > 0 && (long long)(b->used + need) > stream_node_max_bytes))) {
        /* Sealed: give back the room it will never use. */
        if (b->cap > b->used + 16) {
            b = hk_realloc(b, sizeof(*b) + b->used);
            b->cap = b->used;
            s->blk[s->nblk - 1] = b;
        }
        b = NULL;
    }
    if (!b) {
        /* The first entry's field names become the block's master fields. */
        size_t cap = fbytes + need < 64 ? 128 : fbytes + need + need / 2;
        b = blk_new(id, cap);
        unsigned char *m = b->data;
        for (size_t i = 0; i < nfields; i++) {
            m = vput(m, fvlen[2 * i]);
            memcpy(m, fv[2 * i], fvlen[2 * i]);
            m += fvlen[2 * i];
        }
        b->used = b->mlen = (uint32_t)(m - b->data);
        b->nmaster = (uint32_t)nfields;
        arr_insert(s, s->nblk, b);
    }
    int same = same_fields(b, fv, fvlen, nfields);
    size_t size = 1 + vlen_of(id->ms - b->base.ms) + vlen_of(id->seq) + vbytes +
                  (same ? 0 : vlen_of(nfields) + fbytes);
    if (b->used + size > b->cap) {
        size_t cap = b->cap + b->cap / 2;
        if (cap < b->used + size)
            cap = b->used + size;
        if (stream_node_max_bytes > 0 && (long long)cap > stream_node_max_bytes && b->used + size <= (size_t)stream_node_max_bytes)
            cap = (size_t)stream_node_max_bytes;
        b = hk_realloc(b, sizeof(*b) + cap);
        b->cap = (uint32_t)cap;
        s->blk[s->nblk - 1] = b;
    }
    unsigned char *p = b->data + b->used;
    *p++ = same ? SE_SAMEFIELDS : 0;
    p = vput(p, id->ms - b->base.ms);
    p = vput(p, id->seq);
    if (!same)
        p = vput(p, nfields);
    for (size_t i = 0; i < 2 * nfields; i++) {
        if (same && i % 2 == 0)
            continue;
        p = vput(p, fvlen[i]);
        memcpy(p, fv[i], fvlen[i]);
        p += fvlen[i];
    }
    b->used = (uint32_t)(p - b->data);
    b->count++;
    b->live++;
    b->last = *id;
    s->length++;
    s->entries_added++;
    s->last_id = *id;
    if (s->length == 1)
        s->first_id = *id;
}

int stream_delete(struct stream *s, const struct stream_id *id)
{
    long i = blk_find(s, id);
    if (i < 0)
        return 0;
    struct sblock *b = s->blk[i];
    if (sid_cmp(id, &b->last) > 0)
        return 0;
    unsigned char *p = b->data + b->mlen, *end = b->data + b->used;
    while (p < end) {
        unsigned flags;
        uint64_t nf;
        struct stream_id eid;
        const unsigned char *q = ent_head(b, p, &flags, &eid, &nf);
        int c = sid_cmp(&eid, id);
        if (c > 0)
            return 0;
        if (c == 0) {
            if (flags & SE_DELETED)
                return 0;
            *p = (unsigned char)(flags | SE_DELETED);
            b->live--;
            s->length--;
            int first = sid_cmp(id, &s->first_id) == 0;
            blk_after_delete(s, (size_t)i);
            if (first)
                update_first(s);
            return 1;
        }
        p = (unsigned char *)ent_skip(q, nf, flags);
    }
    return 0;
}

long long stream_trim(struct stream *s, long long maxlen, const struct stream_id *minid, int approx, long long limit)
{
    long long deleted = 0;
    while (s->nblk > 0) {
        struct sblock *b = s->blk[0];
        if (maxlen >= 0 && s->length <= (uint64_t)maxlen)
            break;
        long long entries = b->live;
        if (limit && deleted + entries > limit)
            break;
        int remove;
        if (maxlen >= 0)
            remove = (long long)s->length - entries >= maxlen;
        else
            remove = sid_cmp(&b->last, minid) < 0;
        if (remove) {
            s->length -= (uint64_t)entries;
            deleted += entries;
            arr_remove(s, 0);
            continue;
        }
        if (approx)
            break;
        /* Tombstones in this block, oldest first, until the target. */
        unsigned char *p = b->data + b->mlen, *end = b->data + b->used;
        while (p < end) {
            unsigned flags;
            uint64_t nf;
            struct stream_id id;
            const unsigned char *q = ent_head(b, p, &flags, &id, &nf);
            if (maxlen >= 0 ? s->length <= (uint64_t)maxlen : sid_cmp(&id, minid) >= 0)
                break;
            if (!(flags & SE_DELETED)) {
                *p = (unsigned char)(flags | SE_DELETED);
                b->live--;
                s->length--;
                deleted++;
            }
            p = (unsigned char *)ent_skip(q, nf, flags);
        }
        blk_after_delete(s, 0);
        break;
    }
    if (deleted)
        update_first(s);
    return deleted;
}

int stream_last_entry(const struct stream *s, struct stream_id *id)
{
    struct stream_iter it;
    struct stream_entry e;
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    int found = 0;
    id->ms = id->seq = 0;
    if (!s->length)
        return 0;
    stream_iter_start(&it, s, &lo, &hi, 1);
    if (stream_iter_next(&it, &e)) {
        *id = e.id;
        found = 1;
    }
    stream_iter_stop(&it);
    return found;
}

int stream_get(const struct stream *s, const struct stream_id *id, struct stream_entry *e)
{
    struct stream_iter it;
    int found;
    stream_iter_start(&it, s, id, id, 0);
    found = stream_iter_next(&it, e);
    stream_iter_stop(&it);
    return found;
}

int stream_range_has_tombstones(const struct stream *s, const struct stream_id *first, const struct stream_id *last)
{
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    if (!s->length || (s->max_deleted.ms == 0 && s->max_deleted.seq == 0))
        return 0;
    if (sid_cmp(&s->first_id, &s->max_deleted) > 0)
        return 0;
    if (first)
        lo = *first;
    if (last)
        hi = *last;
    return sid_cmp(&lo, &s->max_deleted) <= 0 && sid_cmp(&s->max_deleted, &hi) <= 0;
}

/* ---------------------------------------------------------- iteration --- */
/* Reverse: record the offsets of block bi's entries. */
static void iter_load_rev(struct stream_iter *it)
{
    const struct sblock *b = it->s->blk[it->bi];
    const unsigned char *p = b->data + b->mlen, *end = b->data + b->used;
    it->noffs = 0;
    if (it->offcap < b->count) {
        it->offcap = b->count;
        it->offs = hk_realloc(it->offs, sizeof(uint32_t) * it->offcap);
    }
    while (p < end) {
        unsigned flags;
        uint64_t nf;
        struct stream_id id;
        it->offs[it->noffs++] = (uint32_t)(p - b->data);
        const unsigned char *q = ent_head(b, p, &flags, &id, &nf);
        p = ent_skip(q, nf, flags);
    }
    it->oi = (int)it->noffs - 1;
}

void stream_iter_start(struct stream_iter *it, const struct stream *s, const struct stream_id *start,
                       const struct stream_id *end, int rev)
{
    memset(it, 0, sizeof(*it));
    it->s = s;
    it->start = *start;
    it->end = *end;
    it->rev = rev;
    if (s->nblk == 0 || sid_cmp(start, end) > 0) {
        it->done = 1;
        return;
    }
    if (!rev) {
        long i = blk_find(s, start);
        it->bi = i < 0 ? 0 : (size_t)i;
        it->off = s->blk[it->bi]->mlen;
    } else {
        long i = blk_find(s, end);
        if (i < 0) {
            it->done = 1;
            return;
        }
        it->bi = (size_t)i;
        iter_load_rev(it);
    }
}

int stream_iter_next(struct stream_iter *it, struct stream_entry *e)
{
    const struct stream *s = it->s;
    while (!it->done) {
        const struct sblock *b = s->blk[it->bi];
        unsigned flags;
        const unsigned char *p;
        if (!it->rev) {
            if (it->off >= b->used) {
                if (++it->bi >= s->nblk || sid_cmp(&s->blk[it->bi]->base, &it->end) > 0) {
                    it->done = 1;
                    break;
                }
                it->off = s->blk[it->bi]->mlen;
                continue;
            }
            p = ent_head(b, b->data + it->off, &flags, &e->id, &e->nfields);
            it->off = (uint32_t)(ent_skip(p, e->nfields, flags) - b->data);
            if (sid_cmp(&e->id, &it->end) > 0) {
                it->done = 1;
                break;
            }
            if ((flags & SE_DELETED) || sid_cmp(&e->id, &it->start) < 0)
                continue;
            e->p = p;
            e->mf = (flags & SE_SAMEFIELDS) ? b->data : NULL;
            return 1;
        }
        if (it->oi < 0) {
            if (it->bi == 0 || sid_cmp(&b->base, &it->start) <= 0) {
                it->done = 1;
                break;
            }
            it->bi--;
            iter_load_rev(it);
            continue;
        }
        p = ent_head(b, b->data + it->offs[it->oi--], &flags, &e->id, &e->nfields);
        if (sid_cmp(&e->id, &it->start) < 0) {
            it->done = 1;
            break;
        }
        if ((flags & SE_DELETED) || sid_cmp(&e->id, &it->end) > 0)
            continue;
        e->p = p;
        e->mf = (flags & SE_SAMEFIELDS) ? b->data : NULL;
        return 1;
    }
    return 0;
}

void stream_iter_stop(struct stream_iter *it)
{
    hk_free(it->offs);
    it->offs = NULL;
}

/* -------------------------------------------------------- persistence --- */
void stream_node_open(const struct stream *s, size_t i, struct stream_node *n)
{
    const struct sblock *b = s->blk[i];
    n->base = b->base;
    n->count = b->count;
    n->live = b->live;
    n->nmaster = b->nmaster;
    n->mf = b->data;
    n->blk = b;
    n->p = b->data + b->mlen;
    n->end = b->data + b->used;
}

void stream_node_master(struct stream_node *n, const char **f, size_t *flen)
{
    const unsigned char *m = n->mf;
    *flen = (size_t)vget(&m);
    *f = (const char *)m;
    n->mf = m + *flen;
}

int stream_node_next(struct stream_node *n, struct stream_entry *e, unsigned *flags)
{
    const struct sblock *b = n->blk;
    if (n->p >= n->end)
        return 0;
    const unsigned char *q = ent_head(b, n->p, flags, &e->id, &e->nfields);
    e->p = q;
    e->mf = (*flags & SE_SAMEFIELDS) ? b->data : NULL;
    n->p = ent_skip(q, e->nfields, *flags);
    return 1;
}

void stream_load_node(struct stream *s, const struct stream_id *base, const char *const *mf, const size_t *mflen,
                      size_t nmaster, size_t hint)
{
    size_t mbytes = 0;
    for (size_t i = 0; i < nmaster; i++)
        mbytes += vlen_of(mflen[i]) + mflen[i];
    if (hint > UINT32_MAX - mbytes)
        hint = UINT32_MAX - mbytes;
    struct sblock *b = blk_new(base, mbytes + (hint ? hint : 128));
    unsigned char *m = b->data;
    for (size_t i = 0; i < nmaster; i++) {
        m = vput(m, mflen[i]);
        memcpy(m, mf[i], mflen[i]);
        m += mflen[i];
    }
    b->used = b->mlen = (uint32_t)mbytes;
    b->nmaster = (uint32_t)nmaster;
    arr_insert(s, s->nblk, b);
}

int stream_load_entry(struct stream *s, const struct stream_id *id, const char *const *fv, const size_t *fvlen,
                      size_t nfields, int deleted)
{
    struct sblock *b = s->blk[s->nblk - 1];
    int same = same_fields(b, fv, fvlen, nfields);
    uint64_t size = 1 + vlen_of(id->ms - b->base.ms) + vlen_of(id->seq) + (same ? 0 : vlen_of(nfields));
    for (size_t i = 0; i < 2 * nfields; i++)
        if (!same || i % 2)
            size += vlen_of(fvlen[i]) + (uint64_t)fvlen[i];
    if ((uint64_t)b->used + size > UINT32_MAX)
        return -1;
    if (b->used + size > b->cap) {
        uint64_t cap = (uint64_t)b->cap + b->cap / 4;
        if (cap < b->used + size)
            cap = b->used + size;
        if (cap > UINT32_MAX)
            cap = UINT32_MAX;
        b = hk_realloc(b, sizeof(*b) + (size_t)cap);
        b->cap = (uint32_t)cap;
        s->blk[s->nblk - 1] = b;
    }
    unsigned char *p = b->data + b->used;
    *p++ = (unsigned char)((same ? SE_SAMEFIELDS : 0) | (deleted ? SE_DELETED : 0));
    p = vput(p, id->ms - b->base.ms);
    p = vput(p, id->seq);
    if (!same)
        p = vput(p, nfields);
    for (size_t i = 0; i < 2 * nfields; i++) {
        if (same && i % 2 == 0)
            continue;
        p = vput(p, fvlen[i]);
        memcpy(p, fv[i], fvlen[i]);
        p += fvlen[i];
    }
    b->used = (uint32_t)(p - b->data);
    b->count++;
    if (!deleted)
        b->live++;
    b->last = *id;
    return 0;
}

uint32_t stream_load_node_end(struct stream *s)
{
    struct sblock *b = s->blk[s->nblk - 1];
    uint32_t live = b->live;
    if (!live) {
        arr_remove(s, s->nblk - 1);
        return 0;
    }
    /* Shrink only when it pays: the copy costs more than a little slack. */
    if (b->cap - b->used > b->used / 8 + 64) {
        b = hk_realloc(b, sizeof(*b) + b->used);
        b->cap = b->used;
        s->blk[s->nblk - 1] = b;
    }
    return live;
}
