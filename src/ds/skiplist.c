/* skiplist.c - see skiplist.h.  Level of a new node: each further level
 * with probability 1/4 (a geometric draw from one random word). */
#include "skiplist.h"

#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

static struct zsl_node *node_new(int level, double score, const char *m, size_t mlen)
{
    struct zsl_node *n = hk_malloc(sizeof(*n) + (size_t)level * sizeof(struct zsl_level) + mlen);
    n->score = score;
    n->back = NULL;
    n->nlevel = level;
    n->mlen = mlen;
    n->member = (char *)&n->level[level];
    if (mlen)
        memcpy(n->member, m, mlen);
    for (int i = 0; i < level; i++) {
        n->level[i].fwd = NULL;
        n->level[i].span = 0;
    }
    return n;
}

struct zsl *zsl_new(void)
{
    struct zsl *z = hk_malloc(sizeof(*z));
    z->head = node_new(ZSL_MAXLEVEL, 0, NULL, 0);
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
    return z;
}

void zsl_free(struct zsl *z)
{
    struct zsl_node *n = z->head->level[0].fwd;
    hk_free(z->head);
    while (n) {
        struct zsl_node *next = n->level[0].fwd;
        hk_free(n);
        n = next;
    }
    hk_free(z);
}

static int random_level(void)
{
    uint64_t r = rand64();
    int level = 1;
    while ((r & 3) == 0 && level < ZSL_MAXLEVEL) {
        level++;
        r >>= 2;
    }
    return level;
}

/* Order: score, then member bytes (a shorter prefix first). */
static int cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2)
{
    if (s1 < s2)
        return -1;
    if (s1 > s2)
        return 1;
    size_t l = l1 < l2 ? l1 : l2;
    int c = l ? memcmp(m1, m2, l) : 0;
    if (c)
        return c;
    return l1 < l2 ? -1 : l1 > l2;
}

static inline int before(const struct zsl_node *n, double s, const char *m, size_t l)
{
    return cmp(n->score, n->member, n->mlen, s, m, l) < 0;
}

struct zsl_node *zsl_insert(struct zsl *z, double score, const char *m, size_t mlen)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->head;
    unsigned long rank[ZSL_MAXLEVEL];
    for (int i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (x->level[i].fwd && before(x->level[i].fwd, score, m, mlen)) {
            rank[i] += x->level[i].span;
            x = x->level[i].fwd;
        }
        update[i] = x;
    }
    int level = random_level();
    if (level > z->level) {
        for (int i = z->level; i < level; i++) {
            rank[i] = 0;
            update[i] = z->head;
            update[i]->level[i].span = z->length;
        }
        z->level = level;
    }
    x = node_new(level, score, m, mlen);
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
        while (x->level[i].fwd && before(x->level[i].fwd, score, m, mlen))
            x = x->level[i].fwd;
        update[i] = x;
    }
    x = x->level[0].fwd;
    if (x && cmp(x->score, x->member, x->mlen, score, m, mlen) == 0)
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
    hk_free(x);
    return 1;
}

struct zsl_node *zsl_update_score(struct zsl *z, double cur, const char *m, size_t mlen, double score)
{
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = find_update(z, cur, m, mlen, update);
    if (!x)
        return NULL;
    /* Still in order where it is: change the score in place. */
    if ((x->back == NULL || cmp(x->back->score, x->back->member, x->back->mlen, score, m, mlen) < 0) &&
        (x->level[0].fwd == NULL ||
         cmp(x->level[0].fwd->score, x->level[0].fwd->member, x->level[0].fwd->mlen, score, m, mlen) > 0)) {
        x->score = score;
        return x;
    }
    unlink_node(z, x, update);
    struct zsl_node *n = zsl_insert(z, score, x->member, x->mlen);
    hk_free(x);
    return n;
}

unsigned long zsl_rank(const struct zsl *z, double score, const char *m, size_t mlen)
{
    const struct zsl_node *x = z->head;
    unsigned long rank = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].fwd && cmp(x->level[i].fwd->score, x->level[i].fwd->member, x->level[i].fwd->mlen, score, m, mlen) <= 0) {
            rank += x->level[i].span;
            x = x->level[i].fwd;
        }
        if (x != z->head && cmp(x->score, x->member, x->mlen, score, m, mlen) == 0)
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

static int above_min(double s, const struct zsl_range *r)
{
    return r->min_ex ? s > r->min : s >= r->min;
}

static int below_max(double s, const struct zsl_range *r)
{
    return r->max_ex ? s < r->max : s <= r->max;
}

struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zsl_range *r)
{
    struct zsl_node *x = z->head;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && !above_min(x->level[i].fwd->score, r))
            x = x->level[i].fwd;
    x = x->level[0].fwd;
    return x && below_max(x->score, r) ? x : NULL;
}

struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zsl_range *r)
{
    struct zsl_node *x = z->head;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].fwd && below_max(x->level[i].fwd->score, r))
            x = x->level[i].fwd;
    return x != z->head && above_min(x->score, r) ? x : NULL;
}
