/* skiplist.c - see skiplist.h.  Level of a new node: each further level
 * with probability 1/4 (a geometric draw from one random word). */
#include "skiplist.h"

#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

static size_t node_size(unsigned level, size_t mlen)
{
    return sizeof(struct zsl_node) + (size_t)level * sizeof(struct zsl_level) + mlen;
}

static struct zsl_node *node_new(struct zsl *z, unsigned level, double score, const char *m, size_t mlen)
{
    size_t sz = node_size(level, mlen);
    struct zsl_node *n = hk_malloc(sz);
    n->link.next = NULL;
    n->score = score;
    n->back = NULL;
    n->nlevel = level;
    n->mlen = (uint32_t)mlen;
    if (mlen)
        memcpy((char *)&n->level[level], m, mlen);
    for (unsigned i = 0; i < level; i++) {
        n->level[i].fwd = NULL;
        n->level[i].span = 0;
    }
    z->bytes += sz;
    return n;
}

static void node_free(struct zsl *z, struct zsl_node *n)
{
    z->bytes -= node_size(n->nlevel, n->mlen);
    hk_free(n);
}

void zsl_init(struct zsl *z)
{
    z->bytes = 0;
    z->head = node_new(z, ZSL_MAXLEVEL, 0, NULL, 0);
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
}

void zsl_release(struct zsl *z)
{
    struct zsl_node *n = z->head->level[0].fwd;
    hk_free(z->head);
    while (n) {
        struct zsl_node *next = n->level[0].fwd;
        hk_free(n);
        n = next;
    }
    z->head = z->tail = NULL;
    z->length = 0;
    z->bytes = 0;
}

struct zsl *zsl_new(void)
{
    struct zsl *z = hk_malloc(sizeof(*z));
    zsl_init(z);
    return z;
}

void zsl_free(struct zsl *z)
{
    zsl_release(z);
    hk_free(z);
}

static unsigned random_level(void)
{
    uint64_t r = rand64();
    unsigned level = 1;
    while ((r & 3) == 0 && level < ZSL_MAXLEVEL) {
        level++;
        r >>= 2;
    }
    return level;
}

int zsl_memcmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t l = al < bl ? al : bl;
    int c = l ? memcmp(a, b, l) : 0;
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* Order: score, then member bytes. */
static inline int cmp(const struct zsl_node *n, double s, const char *m, size_t l)
{
    if (n->score < s)
        return -1;
    if (n->score > s)
        return 1;
    return zsl_memcmp(zsl_member(n), n->mlen, m, l);
}

/* Link node x (its level and score/member set) at its place. */
static void link_node(struct zsl *z, struct zsl_node *x)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *p = z->head;
    unsigned long rank[ZSL_MAXLEVEL];
    const char *m = zsl_member(x);
    int level = (int)x->nlevel;
    for (int i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (p->level[i].fwd && cmp(p->level[i].fwd, x->score, m, x->mlen) < 0) {
            rank[i] += p->level[i].span;
            p = p->level[i].fwd;
        }
        update[i] = p;
    }
    if (level > z->level) {
        for (int i = z->level; i < level; i++) {
            rank[i] = 0;
            update[i] = z->head;
            update[i]->level[i].span = z->length;
        }
        z->level = level;
    }
    for (int i = 0; i < level; i++) {
        x->level[i].fwd = update[i]->level[i].fwd;
        update[i]->level[i].fwd = x;
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = level; i < z->level; i++)
        update[i]->level[i].span++;
    x->back = update[0] == z->head ? NULL : update[0];
    if (x->level[0].fwd)
        x->level[0].fwd->back = x;
    else
        z->tail = x;
    z->length++;
}

struct zsl_node *zsl_insert(struct zsl *z, double score, const char *m, size_t mlen)
{
    struct zsl_node *x = node_new(z, random_level(), score, m, mlen);
    link_node(z, x);
    return x;
}

static void unlink_node(struct zsl *z, struct zsl_node *x, struct zsl_node **update)
{
    for (int i = 0; i < z->level; i++) {
        if (update[i]->level[i].fwd == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].fwd = x->level[i].fwd;
        } else {
            update[i]->level[i].span--;
        }
    }
    if (x->level[0].fwd)
        x->level[0].fwd->back = x->back;
    else
        z->tail = x->back;
    while (z->level > 1 && z->head->level[z->level - 1].fwd == NULL)
        z->level--;
    z->length--;
}

static struct zsl_node *find_update(struct zsl *z, double score, const char *m, size_t mlen, struct zsl_node **update)
{
    struct zsl_node *x = z->head;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && cmp(x->level[i].fwd, score, m, mlen) < 0)
            x = x->level[i].fwd;
        update[i] = x;
    }
    x = x->level[0].fwd;
    if (x && cmp(x, score, m, mlen) == 0)
        return x;
    return NULL;
}

int zsl_delete(struct zsl *z, double score, const char *m, size_t mlen)
{
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = find_update(z, score, m, mlen, update);
    if (!x)
        return 0;
    unlink_node(z, x, update);
    node_free(z, x);
    return 1;
}

struct zsl_node *zsl_update_score(struct zsl *z, double cur, const char *m, size_t mlen, double score)
{
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = find_update(z, cur, m, mlen, update);
    if (!x)
        return NULL;
    const char *xm = zsl_member(x);
    /* Still in order where it is: change the score in place. */
    if ((x->back == NULL || cmp(x->back, score, xm, x->mlen) < 0) &&
        (x->level[0].fwd == NULL || cmp(x->level[0].fwd, score, xm, x->mlen) > 0)) {
        x->score = score;
        return x;
    }
    unlink_node(z, x, update);
    x->score = score;
    link_node(z, x);
    return x;
}

unsigned long zsl_rank(const struct zsl *z, double score, const char *m, size_t mlen)
{
    const struct zsl_node *x = z->head;
    unsigned long rank = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && cmp(x->level[i].fwd, score, m, mlen) <= 0) {
            rank += x->level[i].span;
            x = x->level[i].fwd;
        }
        if (x != z->head && cmp(x, score, m, mlen) == 0)
            return rank;
    }
    return 0;
}

struct zsl_node *zsl_by_rank(const struct zsl *z, unsigned long rank)
{
    struct zsl_node *x = z->head;
    unsigned long traversed = 0;
    if (rank == 0 || rank > z->length)
        return NULL;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && traversed + x->level[i].span <= rank) {
            traversed += x->level[i].span;
            x = x->level[i].fwd;
        }
        if (traversed == rank)
            return x;
    }
    return NULL;
}

int zsl_range_empty(const struct zsl_range *r)
{
    return r->min > r->max || (r->min == r->max && (r->min_ex || r->max_ex));
}

int zsl_lex_gte_min(const char *m, size_t len, const struct zsl_lex *r)
{
    if (r->min.kind == ZLEX_NEG)
        return 1;
    if (r->min.kind == ZLEX_POS)
        return 0;
    int c = zsl_memcmp(m, len, r->min.s, r->min.len);
    return r->min.ex ? c > 0 : c >= 0;
}

int zsl_lex_lte_max(const char *m, size_t len, const struct zsl_lex *r)
{
    if (r->max.kind == ZLEX_POS)
        return 1;
    if (r->max.kind == ZLEX_NEG)
        return 0;
    int c = zsl_memcmp(m, len, r->max.s, r->max.len);
    return r->max.ex ? c < 0 : c <= 0;
}

int zsl_lex_empty(const struct zsl_lex *r)
{
    if (r->min.kind == ZLEX_POS || r->max.kind == ZLEX_NEG)
        return 1;
    if (r->min.kind == ZLEX_NEG || r->max.kind == ZLEX_POS)
        return 0;
    int c = zsl_memcmp(r->min.s, r->min.len, r->max.s, r->max.len);
    return c > 0 || (c == 0 && (r->min.ex || r->max.ex));
}

struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zsl_range *r, unsigned long *rank)
{
    struct zsl_node *x = z->head;
    unsigned long rk = 0;
    if (zsl_range_empty(r))
        return NULL;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && !zsl_gte_min(x->level[i].fwd->score, r)) {
            rk += x->level[i].span;
            x = x->level[i].fwd;
        }
    x = x->level[0].fwd;
    if (!x || !zsl_lte_max(x->score, r))
        return NULL;
    if (rank)
        *rank = rk + 1;
    return x;
}

struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zsl_range *r, unsigned long *rank)
{
    struct zsl_node *x = z->head;
    unsigned long rk = 0;
    if (zsl_range_empty(r))
        return NULL;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && zsl_lte_max(x->level[i].fwd->score, r)) {
            rk += x->level[i].span;
            x = x->level[i].fwd;
        }
    if (x == z->head || !zsl_gte_min(x->score, r))
        return NULL;
    if (rank)
        *rank = rk;
    return x;
}

/* Could the range hold anything?  (Redis's test: the last member is not
 * below min and the first not above max; it decides the answer when the
 * members are not in lexicographical order, i.e. the scores differ.) */
static int lex_overlaps(const struct zsl *z, const struct zsl_lex *r)
{
    const struct zsl_node *first = z->head->level[0].fwd;
    if (zsl_lex_empty(r) || !z->tail || !first)
        return 0;
    return zsl_lex_gte_min(zsl_member(z->tail), z->tail->mlen, r) && zsl_lex_lte_max(zsl_member(first), first->mlen, r);
}

struct zsl_node *zsl_first_in_lex(const struct zsl *z, const struct zsl_lex *r, unsigned long *rank)
{
    struct zsl_node *x = z->head;
    unsigned long rk = 0;
    if (!lex_overlaps(z, r))
        return NULL;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && !zsl_lex_gte_min(zsl_member(x->level[i].fwd), x->level[i].fwd->mlen, r)) {
            rk += x->level[i].span;
            x = x->level[i].fwd;
        }
    x = x->level[0].fwd;
    if (!x || !zsl_lex_lte_max(zsl_member(x), x->mlen, r))
        return NULL;
    if (rank)
        *rank = rk + 1;
    return x;
}

struct zsl_node *zsl_last_in_lex(const struct zsl *z, const struct zsl_lex *r, unsigned long *rank)
{
    struct zsl_node *x = z->head;
    unsigned long rk = 0;
    if (!lex_overlaps(z, r))
        return NULL;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && zsl_lex_lte_max(zsl_member(x->level[i].fwd), x->level[i].fwd->mlen, r)) {
            rk += x->level[i].span;
            x = x->level[i].fwd;
        }
    if (x == z->head || !zsl_lex_gte_min(zsl_member(x), x->mlen, r))
        return NULL;
    if (rank)
        *rank = rk;
    return x;
}

unsigned long zsl_delete_range_by_rank(struct zsl *z, unsigned long start, unsigned long end,
                                       void (*cb)(void *arg, struct zsl_node *n), void *arg)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->head;
    unsigned long traversed = 0, removed = 0;
    if (start == 0)
        start = 1;
    if (start > end || start > z->length)
        return 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && traversed + x->level[i].span < start) {
            traversed += x->level[i].span;
            x = x->level[i].fwd;
        }
        update[i] = x;
    }
    traversed++;
    x = x->level[0].fwd;
    while (x && traversed <= end) {
        struct zsl_node *next = x->level[0].fwd;
        unlink_node(z, x, update);
        if (cb)
            cb(arg, x);
        node_free(z, x);
        removed++;
        traversed++;
        x = next;
    }
    return removed;
}

/* Range deletions: from the first element not below the minimum, every
 * element up to the first one above the maximum. */
static unsigned long delete_run(struct zsl *z, struct zsl_node **update, const struct zsl_range *r,
                                const struct zsl_lex *lx, void (*cb)(void *arg, struct zsl_node *n), void *arg)
{
    unsigned long removed = 0;
    struct zsl_node *x = update[0]->level[0].fwd;
    while (x && (r ? zsl_lte_max(x->score, r) : zsl_lex_lte_max(zsl_member(x), x->mlen, lx))) {
        struct zsl_node *next = x->level[0].fwd;
        unlink_node(z, x, update);
        if (cb)
            cb(arg, x);
        node_free(z, x);
        removed++;
        x = next;
    }
    return removed;
}

unsigned long zsl_delete_range_by_score(struct zsl *z, const struct zsl_range *r,
                                        void (*cb)(void *arg, struct zsl_node *n), void *arg)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->head;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && !zsl_gte_min(x->level[i].fwd->score, r))
            x = x->level[i].fwd;
        update[i] = x;
    }
    return delete_run(z, update, r, NULL, cb, arg);
}

unsigned long zsl_delete_range_by_lex(struct zsl *z, const struct zsl_lex *r,
                                      void (*cb)(void *arg, struct zsl_node *n), void *arg)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->head;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && !zsl_lex_gte_min(zsl_member(x->level[i].fwd), x->level[i].fwd->mlen, r))
            x = x->level[i].fwd;
        update[i] = x;
    }
    return delete_run(z, update, NULL, r, cb, arg);
}
