/* quicklist.c - see quicklist.h for the structure and the contract. */
#include "quicklist.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"

/* Byte limits of fill -1..-5, and the limit of count-limited nodes. */
static const size_t ql_levels[5] = {4096, 8192, 16384, 32768, 65536};
#define QL_SAFETY 8192
/* Per-element size estimate added when checking a push against a node's
 * limit (an over-estimate of the entry's header and backlen). */
#define QL_OVERHEAD 8
#define QL_PACKED_DEFAULT (1ULL << 30)
/* Compression: nodes below this are not tried; the result must save at
 * least QL_MIN_GAIN bytes to be kept. */
#define QL_MIN_COMPRESS 48
#define QL_MIN_GAIN 8

/* Written by DEBUG on any worker, read by all: relaxed atomics (a plain
 * load on x86-64). */
static unsigned long long ql_packed_threshold = QL_PACKED_DEFAULT;

static inline uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* ------------------------------------------------------------- limits --- */

static size_t level_of(int fill)
{
    long i = -(long)fill - 1;
    if (i > 4)
        i = 4;
    return ql_levels[i];
}

void ql_node_limit(int fill, size_t *sz, size_t *count)
{
    if (fill >= 0) {
        *sz = SIZE_MAX;
        *count = fill == 0 ? 1 : (size_t)fill;
    } else {
        *sz = level_of(fill);
        *count = SIZE_MAX;
    }
}

int ql_exceeds(int fill, size_t sz, size_t count)
{
    if (fill < 0)
        return sz > level_of(fill);
    return sz > QL_SAFETY || count > (fill == 0 ? 1 : (size_t)fill);
}

int ql_set_packed_threshold(unsigned long long sz)
{
    if (sz > (1ULL << 32) - (1ULL << 20))
        return 0;
    __atomic_store_n(&ql_packed_threshold, sz ? sz : QL_PACKED_DEFAULT, __ATOMIC_RELAXED);
    return 1;
}

/* Does an element of len bytes need a plain node of its own? */
static inline int is_large(size_t len, int fill)
{
    unsigned long long t = __atomic_load_n(&ql_packed_threshold, __ATOMIC_RELAXED);
    if (HK_UNLIKELY(t != QL_PACKED_DEFAULT))
        return len >= t;
    return len > (fill >= 0 ? (size_t)QL_SAFETY : level_of(fill));
}

static inline int allow_insert(const struct ql_node *n, int fill, size_t len)
{
    if (!n || (n->flags & QLN_PLAIN) || is_large(len, fill))
        return 0;
    return !ql_exceeds(fill, (size_t)n->sz + len + QL_OVERHEAD, (size_t)n->count + 1);
}

static inline int allow_merge(const struct ql_node *a, const struct ql_node *b, int fill)
{
    if (!a || !b || ((a->flags | b->flags) & QLN_PLAIN))
        return 0;
    return !ql_exceeds(fill, (size_t)a->sz + b->sz - (LP_HDR + 1), (size_t)a->count + b->count);
}

/* ---------------------------------------------------------- LZ codec ---
 * A byte-oriented LZ77 of our own: a sequence of (literals, match) pairs.
 *   token  : high nibble = literal count, low nibble = match length - 4;
 *            15 in either means "continued": add following bytes, each
 *            255 asking for one more
 *   literal-count extension bytes, then the literals
 *   offset : 1 byte 0ooooooo (distance 1..128) or 2 bytes 1ooooooo oooooooo
 *            (distance 1..32768)
 *   match-length extension bytes
 * The stream ends right after the literals that fill the output, so the
 * last pair may have no match.  Matches are found with a 4-byte hash of
 * the most recent position (greedy). */
#define LZ_HBITS 12
#define LZ_MIN 4
#define LZ_MAXDIST 32768

static inline int lz_put_ext(unsigned char *out, size_t *op, size_t cap, size_t v)
{
    while (v >= 255) {
        if (*op >= cap)
            return 0;
        out[(*op)++] = 255;
        v -= 255;
    }
    if (*op >= cap)
        return 0;
    out[(*op)++] = (unsigned char)v;
    return 1;
}

/* One pair: nlit literals at lit, then (if mlen) a match of mlen at dist. */
static int lz_emit(unsigned char *out, size_t *op, size_t cap, const unsigned char *lit, size_t nlit, size_t dist,
                   size_t mlen)
{
    size_t tpos = *op;
    unsigned t;
    if (*op >= cap)
        return 0;
    (*op)++;
    t = (unsigned)(nlit >= 15 ? 15 : nlit) << 4;
    if (nlit >= 15 && !lz_put_ext(out, op, cap, nlit - 15))
        return 0;
    if (nlit > cap - *op)
        return 0;
    memcpy(out + *op, lit, nlit);
    *op += nlit;
    if (mlen) {
        size_t d = dist - 1, m = mlen - LZ_MIN;
        if (cap - *op < 2)
            return 0;
        if (d < 0x80) {
            out[(*op)++] = (unsigned char)d;
        } else {
            out[(*op)++] = (unsigned char)(0x80 | (d >> 8));
            out[(*op)++] = (unsigned char)(d & 0xFF);
        }
        t |= m >= 15 ? 15u : (unsigned)m;
        if (m >= 15 && !lz_put_ext(out, op, cap, m - 15))
            return 0;
    }
    out[tpos] = (unsigned char)t;
    return 1;
}

size_t ql_lz_compress(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    uint32_t tab[1u << LZ_HBITS];
    size_t ip = 0, anchor = 0, op = 0;

    if (n >= (size_t)UINT32_MAX)
        return 0;
    memset(tab, 0, sizeof(tab));
    while (ip + LZ_MIN <= n) {
        uint32_t seq, h, ref;
        memcpy(&seq, in + ip, 4);
        h = (seq * 2654435761u) >> (32 - LZ_HBITS);
        ref = tab[h];
        tab[h] = (uint32_t)ip + 1;
        if (ref && ip - (ref - 1) <= LZ_MAXDIST && memcmp(in + ref - 1, in + ip, 4) == 0) {
            size_t r = ref - 1, m = LZ_MIN;
            while (ip + m < n && in[r + m] == in[ip + m])
                m++;
            if (!lz_emit(out, &op, cap, in + anchor, ip - anchor, ip - r, m))
                return 0;
            /* Remember a position inside the match too: helps the next one. */
            if (m > 8 && ip + m - 4 + LZ_MIN <= n) {
                uint32_t s2;
                memcpy(&s2, in + ip + m - 4, 4);
                tab[(s2 * 2654435761u) >> (32 - LZ_HBITS)] = (uint32_t)(ip + m - 4) + 1;
            }
            ip += m;
            anchor = ip;
        } else {
            ip++;
        }
    }
    if (anchor < n && !lz_emit(out, &op, cap, in + anchor, n - anchor, 0, 0))
        return 0;
    return op;
}

static inline int lz_get_ext(const unsigned char *in, size_t n, size_t *ip, size_t *v)
{
    unsigned b;
    do {
        if (*ip >= n)
            return 0;
        b = in[(*ip)++];
        *v += b;
    } while (b == 255);
    return 1;
}

int ql_lz_decompress(const unsigned char *in, size_t n, unsigned char *out, size_t outlen)
{
    size_t ip = 0, op = 0;
    while (op < outlen) {
        size_t nlit, dist, mlen;
        unsigned t;
        if (ip >= n)
            return 0;
        t = in[ip++];
        nlit = t >> 4;
        if (nlit == 15 && !lz_get_ext(in, n, &ip, &nlit))
            return 0;
        if (nlit > n - ip || nlit > outlen - op)
            return 0;
        memcpy(out + op, in + ip, nlit);
        ip += nlit;
        op += nlit;
        if (op == outlen)
            break;
        if (ip >= n)
            return 0;
        dist = in[ip++];
        if (dist & 0x80) {
            if (ip >= n)
                return 0;
            dist = ((dist & 0x7F) << 8) | in[ip++];
        }
        dist++;
        mlen = t & 15;
        if (mlen == 15 && !lz_get_ext(in, n, &ip, &mlen))
            return 0;
        mlen += LZ_MIN;
        if (dist > op || mlen > outlen - op)
            return 0;
        if (dist >= mlen) {
            memcpy(out + op, out + op - dist, mlen);
        } else {
            for (size_t k = 0; k < mlen; k++)
                out[op + k] = out[op + k - dist];
        }
        op += mlen;
    }
    return ip == n;
}

/* ------------------------------------------------------------- nodes --- */

static void lp_hdr_write(unsigned char *lp, size_t bytes, size_t count)
{
    unsigned c = count >= 65535 ? 65535 : (unsigned)count;
    wr32(lp, (uint32_t)bytes);
    lp[4] = (unsigned char)c;
    lp[5] = (unsigned char)(c >> 8);
}

/* A new listpack holding the count entries encoded in [p, p + nbytes). */
static unsigned char *lp_from_entries(const unsigned char *p, size_t nbytes, size_t count)
{
    unsigned char *lp = hk_malloc(nbytes + LP_HDR + 1);
    lp_hdr_write(lp, nbytes + LP_HDR + 1, count);
    memcpy(lp + LP_HDR, p, nbytes);
    lp[LP_HDR + nbytes] = LP_EOF;
    return lp;
}

static struct ql_node *node_new(unsigned char *lp, uint8_t flags)
{
    struct ql_node *n = hk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->sz = (uint32_t)lp_bytes(lp);
    n->count = (uint16_t)lp_count(lp);
    n->flags = flags;
    n->spare = 0;
    return n;
}

static struct ql_node *node_with(const char *s, size_t len, int plain)
{
    return node_new(lp_append(lp_new(), s, len), plain ? QLN_PLAIN : 0);
}

static void node_free(struct ql_node *n)
{
    hk_free(n->lp);
    hk_free(n);
}

/* The node's listpack was modified (count is the caller's business). */
static inline void node_changed(struct ql_node *n)
{
    n->sz = (uint32_t)lp_bytes(n->lp);
    n->flags &= (uint8_t)~QLN_RAWOK;
}

static size_t node_image_size(const struct ql_node *n)
{
    return (n->flags & QLN_LZ) ? 4 + (size_t)rd32(n->lp) : n->sz;
}

static void node_raw(struct ql_node *n)
{
    unsigned char *raw;
    if (!(n->flags & QLN_LZ))
        return;
    raw = hk_malloc(n->sz);
    if (!ql_lz_decompress(n->lp + 4, rd32(n->lp), raw, n->sz)) {
        log_msg(LL_WARNING, "quicklist: corrupt compressed node");
        abort();
    }
    hk_free(n->lp);
    n->lp = raw;
    n->flags &= (uint8_t)~QLN_LZ;
}

static void node_compress(struct ql_node *n)
{
    unsigned char *out;
    size_t c;
    if (n->flags & (QLN_LZ | QLN_RAWOK))
        return;
    if (n->sz < QL_MIN_COMPRESS) {
        n->flags |= QLN_RAWOK;
        return;
    }
    out = hk_malloc(4 + (size_t)n->sz);
    c = ql_lz_compress(n->lp, n->sz, out + 4, n->sz - QL_MIN_GAIN);
    if (!c) {
        hk_free(out);
        n->flags |= QLN_RAWOK;
        return;
    }
    wr32(out, (uint32_t)c);
    out = hk_realloc(out, 4 + c);
    hk_free(n->lp);
    n->lp = out;
    n->flags |= QLN_LZ;
}

/* Put n next to old (after or before it); old NULL: n is the only node. */
static void link_node(struct quicklist *ql, struct ql_node *old, struct ql_node *n, int after)
{
    if (!old) {
        n->prev = n->next = NULL;
        ql->head = ql->tail = n;
    } else if (after) {
        n->prev = old;
        n->next = old->next;
        if (old->next)
            old->next->prev = n;
        else
            ql->tail = n;
        old->next = n;
    } else {
        n->next = old;
        n->prev = old->prev;
        if (old->prev)
            old->prev->next = n;
        else
            ql->head = n;
        old->prev = n;
    }
    ql->len++;
}

static void unlink_node(struct quicklist *ql, struct ql_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        ql->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        ql->tail = n->prev;
    ql->len--;
}

/* Keep the `depth` nodes at each end uncompressed, compress the first
 * node past the window on each side, and n (may be NULL) when it lies
 * outside the window.  Called after every change of the node chain and
 * after modifying a node in place. */
static void ql_fix(struct quicklist *ql, struct ql_node *n)
{
    unsigned d = ql->depth;
    struct ql_node *f, *r;
    int inside = 0;
    if (!d || !ql->len)
        return;
    if (ql->len <= 2u * d) {
        for (f = ql->head; f; f = f->next)
            node_raw(f);
        return;
    }
    f = ql->head;
    r = ql->tail;
    for (unsigned i = 0; i < d; i++) {
        node_raw(f);
        node_raw(r);
        if (f == n || r == n)
            inside = 1;
        f = f->next;
        r = r->prev;
    }
    node_compress(f);
    node_compress(r);
    if (n && !inside)
        node_compress(n);
}

/* Node holding element index (< count) and the index inside it. */
static struct ql_node *seek(const struct quicklist *ql, size_t index, size_t *local)
{
    struct ql_node *n;
    size_t acc = 0;
    if (index < ql->count / 2) {
        for (n = ql->head; n; n = n->next) {
            if (index < acc + n->count)
                break;
            acc += n->count;
        }
        *local = index - acc;
    } else {
        size_t r = ql->count - 1 - index;
        for (n = ql->tail; n; n = n->prev) {
            if (r < acc + n->count)
                break;
            acc += n->count;
        }
        *local = n->count - 1 - (r - acc);
    }
    return n;
}

/* Split raw node n around the element at pos.  after: n keeps up to pos,
 * the returned (unlinked) node gets what follows; otherwise n keeps pos
 * and what follows, the returned node gets what precedes.  Both halves
 * must be non-empty. */
static struct ql_node *split_node(struct ql_node *n, size_t pos, int after)
{
    size_t cut = after ? lp_next(n->lp, pos) : pos, k = 0, end = n->sz - 1;
    unsigned char *a, *b;
    struct ql_node *x;
    for (size_t p = lp_first(n->lp); p != LP_NONE && p < cut; p = lp_next(n->lp, p))
        k++;
    a = lp_from_entries(n->lp + LP_HDR, cut - LP_HDR, k);
    b = lp_from_entries(n->lp + cut, end - cut, (size_t)n->count - k);
    hk_free(n->lp);
    if (after) {
        n->lp = a;
        n->count = (uint16_t)k;
        x = node_new(b, 0);
    } else {
        n->lp = b;
        n->count = (uint16_t)(n->count - k);
        x = node_new(a, 0);
    }
    node_changed(n);
    return x;
}

/* Merge b (the node right of a) into a; b is freed.  Returns a. */
static struct ql_node *merge_nodes(struct quicklist *ql, struct ql_node *a, struct ql_node *b)
{
    size_t na, nb;
    unsigned char *lp;
    node_raw(a);
    node_raw(b);
    na = a->sz - LP_HDR - 1;
    nb = b->sz - LP_HDR - 1;
    lp = hk_malloc(na + nb + LP_HDR + 1);
    lp_hdr_write(lp, na + nb + LP_HDR + 1, (size_t)a->count + b->count);
    memcpy(lp + LP_HDR, a->lp + LP_HDR, na);
    memcpy(lp + LP_HDR + na, b->lp + LP_HDR, nb);
    lp[LP_HDR + na + nb] = LP_EOF;
    hk_free(a->lp);
    a->lp = lp;
    a->count = (uint16_t)(a->count + b->count);
    node_changed(a);
    unlink_node(ql, b);
    node_free(b);
    ql_fix(ql, a);
    return a;
}

/* After a split next to center: merge what fits among the two nodes on
 * each side of it and center itself. */
static void merge_around(struct quicklist *ql, struct ql_node *center)
{
    int fill = ql->fill;
    struct ql_node *prev = center->prev, *next = center->next, *target = center;
    if (prev && allow_merge(prev->prev, prev, fill))
        merge_nodes(ql, prev->prev, prev);
    if (next && allow_merge(next, next->next, fill))
        merge_nodes(ql, next, next->next);
    if (allow_merge(center->prev, center, fill))
        target = merge_nodes(ql, center->prev, center);
    if (allow_merge(target, target->next, fill))
        merge_nodes(ql, target, target->next);
}

/* ---------------------------------------------------------- the list --- */

struct quicklist *ql_new(int fill, int depth)
{
    struct quicklist *ql = hk_malloc(sizeof(*ql));
    ql->head = ql->tail = NULL;
    ql->count = 0;
    ql->len = 0;
    ql->fill = (int16_t)(fill > 32767 ? 32767 : fill < -5 ? -5 : fill);
    ql->depth = (uint16_t)(depth < 0 ? 0 : depth > 65535 ? 65535 : depth);
    return ql;
}

void ql_free(struct quicklist *ql)
{
    struct ql_node *n = ql->head;
    while (n) {
        struct ql_node *next = n->next;
        node_free(n);
        n = next;
    }
    hk_free(ql);
}

struct quicklist *ql_dup(const struct quicklist *ql)
{
    struct quicklist *c = hk_malloc(sizeof(*c));
    *c = *ql;
    c->head = c->tail = NULL;
    c->len = 0;
    for (const struct ql_node *n = ql->head; n; n = n->next) {
        struct ql_node *x = hk_malloc(sizeof(*x));
        *x = *n;
        x->lp = hk_memdup(n->lp, node_image_size(n));
        link_node(c, c->tail, x, 1);
    }
    return c;
}

size_t ql_mem(const struct quicklist *ql)
{
    size_t m = hk_usable((void *)ql);
    for (const struct ql_node *n = ql->head; n; n = n->next)
        m += hk_usable((void *)n) + hk_usable(n->lp);
    return m;
}

void ql_append_lp(struct quicklist *ql, unsigned char *lp)
{
    struct ql_node *n = node_new(lp, 0);
    link_node(ql, ql->tail, n, 1);
    ql->count += n->count;
    ql_fix(ql, n);
}

unsigned char *ql_take_single(struct quicklist *ql)
{
    unsigned char *lp;
    if (ql->len != 1 || (ql->head->flags & QLN_PLAIN))
        return NULL;
    node_raw(ql->head);
    lp = ql->head->lp;
    hk_free(ql->head);
    hk_free(ql);
    return lp;
}

void ql_push(struct quicklist *ql, int where, const char *s, size_t len)
{
    int fill = ql->fill;
    struct ql_node *end = where == QL_HEAD ? ql->head : ql->tail, *n;
    ql->count++;
    if (HK_LIKELY(allow_insert(end, fill, len))) {
        end->lp = where == QL_HEAD ? lp_prepend(end->lp, s, len) : lp_append(end->lp, s, len);
        end->count++;
        node_changed(end);
        return;
    }
    n = node_with(s, len, is_large(len, fill));
    link_node(ql, end, n, where == QL_TAIL);
    ql_fix(ql, n);
}

unsigned char *ql_end(struct quicklist *ql, int where, size_t *pos)
{
    struct ql_node *n = where == QL_HEAD ? ql->head : ql->tail;
    if (!n)
        return NULL;
    *pos = where == QL_HEAD ? lp_first(n->lp) : lp_last(n->lp);
    return n->lp;
}

void ql_pop(struct quicklist *ql, int where)
{
    struct ql_node *n = where == QL_HEAD ? ql->head : ql->tail;
    if (!n)
        return;
    ql->count--;
    if (n->count == 1) {
        unlink_node(ql, n);
        node_free(n);
        ql_fix(ql, NULL);
        return;
    }
    n->lp = lp_delete(n->lp, where == QL_HEAD ? lp_first(n->lp) : lp_last(n->lp), 1, NULL);
    n->count--;
    node_changed(n);
}

void ql_del_range(struct quicklist *ql, size_t start, size_t n)
{
    size_t local;
    struct ql_node *node;
    if (start >= ql->count || n == 0)
        return;
    if (n > ql->count - start)
        n = ql->count - start;
    node = seek(ql, start, &local);
    while (n > 0) {
        struct ql_node *next = node->next;
        size_t del = node->count - local;
        if (del > n)
            del = n;
        ql->count -= del;
        n -= del;
        if (del == node->count) {
            unlink_node(ql, node);
            node_free(node);
            ql_fix(ql, NULL);
        } else {
            node_raw(node);
            node->lp = lp_delete(node->lp, lp_seek(node->lp, (long long)local), del, NULL);
            node->count = (uint16_t)(node->count - del);
            node_changed(node);
            ql_fix(ql, node);
        }
        node = next;
        local = 0;
    }
}

/* Insert s before/after the element at pos of the raw node n, splitting
 * n or using a neighbour when n is full (Redis's placement rules). */
static void insert_in(struct quicklist *ql, struct ql_node *n, size_t pos, int after, const char *s, size_t len)
{
    int fill = ql->fill;
    int large = is_large(len, fill);
    int full = !allow_insert(n, fill, len);
    int at_tail = after && lp_next(n->lp, pos) == LP_NONE;
    int at_head = !after && pos == LP_HDR;
    struct ql_node *x;

    ql->count++;
    if (large) {
        x = node_with(s, len, 1);
        if ((n->flags & QLN_PLAIN) || at_tail || at_head) {
            link_node(ql, n, x, after);
        } else {
            struct ql_node *rest = split_node(n, pos, after);
            link_node(ql, n, x, after);
            link_node(ql, x, rest, after);
            ql_fix(ql, rest);
        }
        ql_fix(ql, x);
        ql_fix(ql, n);
        return;
    }
    if (!full) {
        n->lp = lp_insert(n->lp, after ? lp_next(n->lp, pos) : pos, s, len);
        n->count++;
        node_changed(n);
        ql_fix(ql, n);
        return;
    }
    if (at_tail && allow_insert(n->next, fill, len)) {
        x = n->next;
        node_raw(x);
        x->lp = lp_prepend(x->lp, s, len);
        x->count++;
        node_changed(x);
        ql_fix(ql, x);
        ql_fix(ql, n);
        return;
    }
    if (at_head && allow_insert(n->prev, fill, len)) {
        x = n->prev;
        node_raw(x);
        x->lp = lp_append(x->lp, s, len);
        x->count++;
        node_changed(x);
        ql_fix(ql, x);
        ql_fix(ql, n);
        return;
    }
    if (at_tail || at_head) {
        x = node_with(s, len, 0);
        link_node(ql, n, x, after);
        ql_fix(ql, x);
        ql_fix(ql, n);
        return;
    }
    x = split_node(n, pos, after);
    x->lp = after ? lp_prepend(x->lp, s, len) : lp_append(x->lp, s, len);
    x->count++;
    node_changed(x);
    link_node(ql, n, x, after);
    ql_fix(ql, x);
    ql_fix(ql, n);
    merge_around(ql, n);
}

void ql_insert_at(struct quicklist *ql, size_t index, const char *s, size_t len)
{
    size_t local;
    struct ql_node *n;
    if (!ql->count) {
        ql_push(ql, QL_TAIL, s, len);
        return;
    }
    if (index >= ql->count) {
        n = ql->tail;
        insert_in(ql, n, lp_last(n->lp), 1, s, len);
        return;
    }
    n = seek(ql, index, &local);
    node_raw(n);
    insert_in(ql, n, lp_seek(n->lp, (long long)local), 0, s, len);
}

int ql_replace(struct quicklist *ql, long long index, const char *s, size_t len)
{
    size_t local, pos, next, old;
    struct ql_node *n;
    int fill = ql->fill;
    if (index < 0)
        index += (long long)ql->count;
    if (index < 0 || (size_t)index >= ql->count)
        return 0;
    n = seek(ql, (size_t)index, &local);
    node_raw(n);
    pos = lp_seek(n->lp, (long long)local);
    next = lp_next(n->lp, pos);
    old = (next == LP_NONE ? n->sz - 1 : next) - pos;
    if ((n->flags & QLN_PLAIN) ? is_large(len, fill)
                               : (!is_large(len, fill) &&
                                  !ql_exceeds(fill, n->sz - old + len + QL_OVERHEAD, n->count))) {
        n->lp = lp_replace(n->lp, pos, s, len);
        node_changed(n);
        ql_fix(ql, n);
        return 1;
    }
    /* Does not fit where it is: remove it, then insert at the same index
     * (which splits the node or uses a neighbour or a plain node). */
    ql_del_range(ql, (size_t)index, 1);
    ql_insert_at(ql, (size_t)index, s, len);
    return 1;
}

/* ---------------------------------------------------------- iterator --- */

static void it_load(struct ql_iter *it, struct ql_node *n, int at_start)
{
    it->node = n;
    it->dirty = 0;
    if (!n) {
        it->lp = NULL;
        it->pos = LP_NONE;
        return;
    }
    if (n->flags & QLN_LZ) {
        if (it->bufcap < n->sz) {
            hk_free(it->buf);
            it->buf = hk_malloc(n->sz);
            it->bufcap = n->sz;
        }
        if (!ql_lz_decompress(n->lp + 4, rd32(n->lp), it->buf, n->sz)) {
            log_msg(LL_WARNING, "quicklist: corrupt compressed node");
            abort();
        }
        it->lp = it->buf;
    } else {
        it->lp = n->lp;
    }
    if (at_start)
        it->pos = it->fwd ? lp_first(it->lp) : lp_last(it->lp);
}

static void it_leave(struct ql_iter *it)
{
    if (it->dirty && it->node) {
        it->dirty = 0;
        ql_fix(it->ql, it->node);
    }
}

int ql_iter_start(struct ql_iter *it, struct quicklist *ql, long long index, int fwd)
{
    size_t local;
    it->ql = ql;
    it->fwd = fwd;
    it->dirty = 0;
    it->buf = NULL;
    it->bufcap = 0;
    it->node = NULL;
    it->lp = NULL;
    it->pos = LP_NONE;
    if (index < 0)
        index += (long long)ql->count;
    if (index < 0 || (size_t)index >= ql->count)
        return 0;
    it_load(it, seek(ql, (size_t)index, &local), 0);
    it->pos = lp_seek(it->lp, (long long)local);
    return 1;
}

int ql_iter_next(struct ql_iter *it)
{
    size_t p;
    struct ql_node *n;
    if (!it->node)
        return 0;
    p = it->fwd ? lp_next(it->lp, it->pos) : lp_prev(it->lp, it->pos);
    if (p != LP_NONE) {
        it->pos = p;
        return 1;
    }
    n = it->fwd ? it->node->next : it->node->prev;
    it_leave(it);
    it_load(it, n, 1);
    return it->pos != LP_NONE;
}

/* Make the current node writable: a compressed node takes the iterator's
 * decompressed copy as its listpack. */
static void it_writable(struct ql_iter *it)
{
    struct ql_node *n = it->node;
    if (n->flags & QLN_LZ) {
        hk_free(n->lp);
        n->lp = it->buf;
        n->flags &= (uint8_t)~QLN_LZ;
        it->buf = NULL;
        it->bufcap = 0;
        it->lp = n->lp;
    }
}

int ql_iter_del(struct ql_iter *it)
{
    struct ql_node *n = it->node, *nx;
    struct quicklist *ql = it->ql;
    size_t next, p;
    ql->count--;
    if (n->count == 1) {
        nx = it->fwd ? n->next : n->prev;
        unlink_node(ql, n);
        node_free(n);
        it->node = NULL;
        ql_fix(ql, NULL);
        it_load(it, nx, 1);
        return it->pos != LP_NONE;
    }
    it_writable(it);
    n->lp = lp_delete(n->lp, it->pos, 1, &next);
    n->count--;
    node_changed(n);
    it->lp = n->lp;
    it->dirty = ql->depth != 0;
    if (it->fwd)
        p = next;
    else
        p = next == LP_NONE ? lp_last(n->lp) : lp_prev(n->lp, next);
    if (p != LP_NONE) {
        it->pos = p;
        return 1;
    }
    nx = it->fwd ? n->next : n->prev;
    it_leave(it);
    it_load(it, nx, 1);
    return it->pos != LP_NONE;
}

void ql_iter_insert(struct ql_iter *it, int after, const char *s, size_t len)
{
    struct ql_node *n = it->node;
    size_t pos = it->pos;
    it_writable(it);
    it->node = NULL;
    it->dirty = 0;
    it->lp = NULL;
    it->pos = LP_NONE;
    insert_in(it->ql, n, pos, after, s, len);
}

void ql_iter_end(struct ql_iter *it)
{
    it_leave(it);
    hk_free(it->buf);
    it->buf = NULL;
    it->bufcap = 0;
    it->node = NULL;
}

/* ------------------------------------------------------------- check --- */

const char *ql_check(const struct quicklist *ql)
{
    size_t count = 0;
    uint32_t len = 0, i = 0;
    const struct ql_node *prev = NULL;
    for (const struct ql_node *n = ql->head; n; n = n->next, i++) {
        unsigned char *lp = n->lp;
        unsigned char *tmp = NULL;
        if (n->prev != prev)
            return "broken prev link";
        if (n->count == 0)
            return "empty node";
        if (n->flags & QLN_LZ) {
            tmp = hk_malloc(n->sz);
            if (!ql_lz_decompress(n->lp + 4, rd32(n->lp), tmp, n->sz)) {
                hk_free(tmp);
                return "bad compressed image";
            }
            lp = tmp;
        }
        if (lp_bytes(lp) != n->sz || !lp_validate(lp, n->sz) || lp_count(lp) != n->count) {
            hk_free(tmp);
            return "node size/count mismatch";
        }
        hk_free(tmp);
        if ((n->flags & QLN_PLAIN) && n->count != 1)
            return "plain node with several elements";
        count += n->count;
        len++;
        prev = n;
    }
    if (prev != ql->tail)
        return "bad tail";
    if (count != ql->count)
        return "bad element count";
    if (len != ql->len)
        return "bad node count";
    if (ql->depth) {
        const struct ql_node *f = ql->head, *r = ql->tail;
        for (unsigned k = 0; k < ql->depth && f; k++) {
            if ((f->flags & QLN_LZ) || (r->flags & QLN_LZ))
                return "compressed node inside the depth window";
            f = f->next;
            r = r->prev;
        }
    } else {
        for (const struct ql_node *n = ql->head; n; n = n->next)
            if (n->flags & QLN_LZ)
                return "compressed node with depth 0";
    }
    return NULL;
}

/* ------------------------------------------------------------- repr --- */

void ql_repr(const struct quicklist *ql, int full, FILE *f)
{
    size_t i = 0;
    fprintf(f, "quicklist %p: %zu elements in %u nodes, fill %d, compress depth %u\n", (const void *)ql, ql->count,
            ql->len, ql->fill, ql->depth);
    for (const struct ql_node *n = ql->head; n; n = n->next, i++) {
        fprintf(f, "  node %zu %p: %u elements, %u bytes%s%s\n", i, (const void *)n, n->count, n->sz,
                n->flags & QLN_LZ ? ", compressed" : "", n->flags & QLN_PLAIN ? ", plain" : "");
        if (!full)
            continue;
        if (!(n->flags & QLN_LZ)) {
            lp_repr(n->lp, f, "    ");
            continue;
        }
        unsigned char *tmp = hk_malloc(n->sz);
        if (ql_lz_decompress(n->lp + 4, rd32(n->lp), tmp, n->sz))
            lp_repr(tmp, f, "    ");
        else
            fprintf(f, "    (compressed image does not decode)\n");
        hk_free(tmp);
    }
}
