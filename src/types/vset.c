/* types/vset.c - the vector-set value (types/vset.h): elements and their
 * attributes, the lex index, the HNSW wrapper (creation, projection,
 * normalisation, add/remove under the set's write lock), the persistence
 * API and vset_type_ops.
 *
 * Memory per element beyond the index node: the element (24 bytes + name,
 * rounded by the allocator), one hash bucket (8-16 bytes) and one lex-index
 * slot (8 bytes in leaves kept between 1/4 and full). */
#include "vset.h"
#include "types.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/mem.h"
#include "../db/object.h"

/* ---------------------------------------------------------- elements --- */
static const char *ve_key(const struct dict_link *it, size_t *len)
{
    const struct velem *e = (const struct velem *)it;
    *len = e->nlen;
    return e->name;
}

static const struct dict_type velem_dict_type = {ve_key};

/* ------------------------------------------------------- lex index ---
 * Seek = a binary search over the leaves' last names, then one inside the
 * leaf; insert/remove move at most one leaf's pointers (a full leaf splits
 * in two, a leaf that gets small merges with its right neighbour). */
static struct lexleaf *leaf_new(uint32_t cap)
{
    struct lexleaf *l = hk_malloc(sizeof(*l) + sizeof(struct velem *) * cap);
    l->n = 0;
    l->cap = cap;
    return l;
}

static void lex_set_leaf_array(struct lexidx *x, uint32_t cap)
{
    if (x->leaf)
        x->bytes -= hk_usable(x->leaf);
    x->leaf = hk_realloc(x->leaf, sizeof(struct lexleaf *) * cap);
    x->cap = cap;
    x->bytes += hk_usable(x->leaf);
}

/* Put leaf l at index i of the leaf array. */
static void lex_insert_leaf(struct lexidx *x, uint32_t i, struct lexleaf *l)
{
    if (x->nleaf == x->cap)
        lex_set_leaf_array(x, x->cap ? x->cap * 2 : 4);
    memmove(x->leaf + i + 1, x->leaf + i, sizeof(*x->leaf) * (x->nleaf - i));
    x->leaf[i] = l;
    x->nleaf++;
    x->bytes += hk_usable(l);
}

static void lex_drop_leaf(struct lexidx *x, uint32_t i)
{
    x->bytes -= hk_usable(x->leaf[i]);
    hk_free(x->leaf[i]);
    memmove(x->leaf + i, x->leaf + i + 1, sizeof(*x->leaf) * (x->nleaf - i - 1));
    x->nleaf--;
    if (x->nleaf == 0) {
        x->bytes -= hk_usable(x->leaf);
        hk_free(x->leaf);
        x->leaf = NULL;
        x->cap = 0;
    } else if (x->cap > 8 && x->nleaf < x->cap / 4) {
        lex_set_leaf_array(x, x->cap / 2);
    }
}

static struct lexleaf *leaf_resize(struct lexidx *x, uint32_t i, uint32_t cap)
{
    struct lexleaf *l = x->leaf[i];
    x->bytes -= hk_usable(l);
    l = hk_realloc(l, sizeof(*l) + sizeof(struct velem *) * cap);
    l->cap = cap;
    x->bytes += hk_usable(l);
    x->leaf[i] = l;
    return l;
}

/* Is element e before the bound (k, kl)?  excl: also when equal (the
 * bound itself is excluded, so equal elements come "before" it). */
static int before(const struct velem *e, const char *k, size_t kl, int excl)
{
    int c = vset_namecmp(e->name, e->nlen, k, kl);
    return c < 0 || (excl && c == 0);
}

uint32_t vset_lex_seek(const struct lexidx *x, const char *k, size_t kl, int excl, uint32_t *li)
{
    uint32_t lo = 0, hi = x->nleaf - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct lexleaf *l = x->leaf[mid];
        if (before(l->e[l->n - 1], k, kl, excl))
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct lexleaf *l = x->leaf[lo];
    uint32_t a = 0, b = l->n;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (before(l->e[mid], k, kl, excl))
            a = mid + 1;
        else
            b = mid;
    }
    *li = lo;
    return a;
}

static void lex_insert(struct lexidx *x, struct velem *e)
{
    uint32_t li, p;
    if (x->nleaf == 0) {
        lex_insert_leaf(x, 0, leaf_new(4));
        li = 0;
        p = 0;
    } else {
        p = vset_lex_seek(x, e->name, e->nlen, 0, &li);
    }
    struct lexleaf *l = x->leaf[li];
    if (l->n == VSET_LEX_LEAF_MAX) {
        /* Split: the upper half moves to a new leaf after this one. */
        uint32_t half = l->n / 2;
        struct lexleaf *r = leaf_new(VSET_LEX_LEAF_MAX);
        r->n = l->n - half;
        memcpy(r->e, l->e + half, sizeof(*r->e) * r->n);
        l->n = half;
        lex_insert_leaf(x, li + 1, r);
        if (p > half) {
            li++;
            p -= half;
            l = r;
        }
    }
    if (l->n == l->cap)
        l = leaf_resize(x, li, l->cap * 2 > VSET_LEX_LEAF_MAX ? VSET_LEX_LEAF_MAX : l->cap * 2);
    memmove(l->e + p + 1, l->e + p, sizeof(*l->e) * (l->n - p));
    l->e[p] = e;
    l->n++;
}

/* Append e, known to sort after every element (COPY, in order). */
static void lex_append(struct lexidx *x, struct velem *e)
{
    struct lexleaf *l = x->nleaf ? x->leaf[x->nleaf - 1] : NULL;
    if (!l || l->n == VSET_LEX_LEAF_MAX) {
        lex_insert_leaf(x, x->nleaf, leaf_new(VSET_LEX_LEAF_MAX));
        l = x->leaf[x->nleaf - 1];
    }
    l->e[l->n++] = e;
}

static void lex_remove(struct lexidx *x, const struct velem *e)
{
    uint32_t li, p = vset_lex_seek(x, e->name, e->nlen, 0, &li);
    struct lexleaf *l = x->leaf[li];
    if (p >= l->n || l->e[p] != e)
        return; /* not indexed (cannot happen) */
    memmove(l->e + p, l->e + p + 1, sizeof(*l->e) * (l->n - p - 1));
    l->n--;
    if (l->n == 0) {
        lex_drop_leaf(x, li);
        return;
    }
    if (li + 1 < x->nleaf && l->n + x->leaf[li + 1]->n <= VSET_LEX_LEAF_MAX / 2) {
        struct lexleaf *r = x->leaf[li + 1];
        if (l->cap < l->n + r->n)
            l = leaf_resize(x, li, VSET_LEX_LEAF_MAX / 2);
        memcpy(l->e + l->n, r->e, sizeof(*r->e) * r->n);
        l->n += r->n;
        lex_drop_leaf(x, li + 1);
    } else if (l->cap >= 16 && l->n <= l->cap / 4) {
        leaf_resize(x, li, l->cap / 2);
    }
}

static void lex_free(struct lexidx *x)
{
    for (uint32_t i = 0; i < x->nleaf; i++)
        hk_free(x->leaf[i]);
    hk_free(x->leaf);
    memset(x, 0, sizeof(*x));
}

void vset_lex_at(const struct lexidx *x, uint64_t pos, uint32_t *li, uint32_t *p)
{
    uint32_t i = 0;
    while (pos >= x->leaf[i]->n) {
        pos -= x->leaf[i]->n;
        i++;
    }
    *li = i;
    *p = (uint32_t)pos;
}

/* ------------------------------------------------------------- sets --- */
static atomic_ullong vset_next_uid;

static struct vset *vset_alloc(struct hnsw *h, uint32_t reduce_from, const float *proj)
{
    struct vset *vs = hk_calloc(sizeof(*vs));
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    /* Writer-preferring: a VADD waits for the running searches only, not
     * for the ones that start after it. */
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&vs->lock, &a);
    pthread_rwlockattr_destroy(&a);
    atomic_init(&vs->refs, 1);
    vs->h = h;
    vs->names = dict_new(&velem_dict_type, 0);
    if (reduce_from && proj) {
        size_t n = (size_t)reduce_from * hnsw_dim(h);
        vs->proj = hk_memdup(proj, sizeof(float) * n);
        vs->reduce_from = reduce_from;
    }
    vs->uid = atomic_fetch_add(&vset_next_uid, 1);
    return vs;
}

static void velem_free(struct dict_link *it)
{
    struct velem *e = (struct velem *)it;
    hk_free(e->attr);
    hk_free(e);
}

static void vset_destroy(struct vset *vs)
{
    dict_free(vs->names, velem_free);
    lex_free(&vs->lex);
    hnsw_free(vs->h);
    hk_free(vs->proj);
    pthread_rwlock_destroy(&vs->lock);
    hk_free(vs);
}

void vset_incref(struct vset *vs)
{
    atomic_fetch_add_explicit(&vs->refs, 1, memory_order_relaxed);
}

void vset_decref(struct vset *vs)
{
    if (atomic_fetch_sub_explicit(&vs->refs, 1, memory_order_acq_rel) == 1)
        vset_destroy(vs);
}

static struct vattr *vattr_new(const char *s, size_t len)
{
    if (len == 0)
        return NULL;
    struct vattr *a = hk_malloc(sizeof(*a) + len);
    a->len = (uint32_t)len;
    memcpy(a->s, s, len);
    return a;
}

static size_t attr_bytes(struct vattr *a)
{
    return a ? hk_usable(a) : 0;
}

/* Replace e's attributes by a (NULL: none), keeping the counts. */
static void elem_set_attr(struct vset *vs, struct velem *e, struct vattr *a)
{
    if (e->attr) {
        vs->nattr--;
        vs->elem_bytes -= attr_bytes(e->attr);
        hk_free(e->attr);
    }
    e->attr = a;
    if (a) {
        vs->nattr++;
        vs->elem_bytes += attr_bytes(a);
    }
}

/* A new element record attached to node id: hash, lex index, payload. */
static struct velem *elem_add(struct vset *vs, const char *name, size_t nlen, struct vattr *a, uint32_t id)
{
    struct velem *e = hk_malloc(sizeof(*e) + nlen);
    e->attr = NULL;
    e->id = id;
    e->nlen = (uint32_t)nlen;
    memcpy(e->name, name, nlen);
    vs->elem_bytes += hk_usable(e);
    elem_set_attr(vs, e, a);
    dict_add(vs->names, &e->link);
    lex_insert(&vs->lex, e);
    return e;
}

static void elem_del(struct vset *vs, struct velem *e)
{
    lex_remove(&vs->lex, e);
    dict_remove(vs->names, e->name, e->nlen);
    elem_set_attr(vs, e, NULL);
    vs->elem_bytes -= hk_usable(e);
    hk_free(e);
}

/* ------------------------------------------------ persistence API --- */
struct vset *vset_create(struct hnsw *h, uint32_t reduce_from, const float *proj)
{
    return vset_alloc(h, reduce_from, proj);
}

int vset_load_elem(struct vset *vs, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    if (nlen > UINT32_MAX || alen > UINT32_MAX || id >= hnsw_max_id(vs->h) || !hnsw_exists(vs->h, id) ||
        hnsw_payload(vs->h, id) != NULL || vset_find(vs, name, nlen))
        return -1;
    struct velem *e = elem_add(vs, name, nlen, attr ? vattr_new(attr, alen) : NULL, id);
    hnsw_set_payload(vs->h, id, e);
    return 0;
}

int vset_load_done(struct vset *vs, char *err, size_t errlen)
{
    if ((uint64_t)dict_size(vs->names) != hnsw_count(vs->h)) {
        if (err && errlen)
            snprintf(err, errlen, "vector set has %llu elements for %llu index nodes",
                     (unsigned long long)dict_size(vs->names), (unsigned long long)hnsw_count(vs->h));
        return -1;
    }
    return 0;
}

struct hnsw *vset_index(const struct vset *vs)
{
    return vs->h;
}

uint32_t vset_reduce_from(const struct vset *vs, const float **proj)
{
    if (proj)
        *proj = vs->proj;
    return vs->reduce_from;
}

void vset_foreach(const struct vset *vs, vset_elem_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < vs->lex.nleaf; i++) {
        const struct lexleaf *l = vs->lex.leaf[i];
        for (uint32_t j = 0; j < l->n; j++) {
            const struct velem *e = l->e[j];
            fn(ctx, e->name, e->nlen, e->attr ? e->attr->s : NULL, e->attr ? e->attr->len : 0, e->id);
        }
    }
}

uint64_t vset_card(const struct vset *vs)
{
    return dict_size(vs->names);
}

/* COPY: a deep copy (the caller holds the source's slot lock, so no writer
 * runs; searches only read). */
static struct vset *vset_dup(const struct vset *src)
{
    struct vset *vs = vset_alloc(hnsw_dup(src->h), src->reduce_from, src->proj);
    dict_expand(vs->names, dict_size(src->names));
    for (uint32_t i = 0; i < src->lex.nleaf; i++) {
        const struct lexleaf *l = src->lex.leaf[i];
        for (uint32_t j = 0; j < l->n; j++) {
            const struct velem *o = l->e[j];
            struct velem *e = hk_malloc(sizeof(*e) + o->nlen);
            e->attr = NULL;
            e->id = o->id;
            e->nlen = o->nlen;
            memcpy(e->name, o->name, o->nlen);
            vs->elem_bytes += hk_usable(e);
            if (o->attr)
                elem_set_attr(vs, e, vattr_new(o->attr->s, o->attr->len));
            dict_add(vs->names, &e->link);
            lex_append(&vs->lex, e);
            hnsw_set_payload(vs->h, e->id, e);
        }
    }
    return vs;
}

/* ------------------------------------------------------ type ops --- */
static void vt_free(void *p, uint8_t enc)
{
    (void)enc;
    vset_decref(p);
}

static void *vt_dup(const void *p, uint8_t enc)
{
    (void)enc;
    return vset_dup(p);
}

static size_t vt_mem(const void *p, uint8_t enc)
{
    (void)enc;
    const struct vset *vs = p;
    size_t n = hk_usable((void *)vs) + hnsw_mem(vs->h) + dict_mem(vs->names) + vs->elem_bytes + vs->lex.bytes;
    if (vs->proj)
        n += hk_usable(vs->proj);
    return n;
}

static size_t vt_len(const void *p, uint8_t enc)
{
    (void)enc;
    return (size_t)vset_card(p);
}

static size_t vt_effort(const void *p, uint8_t enc)
{
    (void)enc;
    const struct vset *vs = p;
    /* element + index node per element, attributes, leaves */
    return 2 * dict_size(vs->names) + vs->nattr + vs->lex.nleaf + 4;
}

const struct type_ops vset_type_ops = {vt_free, vt_dup, vt_mem, vt_len, vt_effort};

/* ------------------------------------------------------- vectors --- */
/* The REDUCE projection from `from` to `to` dimensions, Redis's
 * deterministic choice (so the same VADDs build the same set anywhere):
 * entry (i, j) is +-1/sqrt(from), negative when i & j has an odd number of
 * one bits (a Hadamard-like sign pattern). */
static float *proj_make(uint32_t from, uint32_t to)
{
    float *m = hk_malloc(sizeof(float) * (size_t)from * to);
    float scale = (float)(1.0 / sqrt((double)from));
    for (uint32_t i = 0; i < to; i++)
        for (uint32_t j = 0; j < from; j++)
            m[(size_t)i * from + j] = (__builtin_popcount(i & j) & 1) ? -scale : scale;
    return m;
}

static float *proj_apply(const float *m, uint32_t from, uint32_t to, const float *in)
{
    float *out = hk_malloc(sizeof(float) * to);
    for (uint32_t i = 0; i < to; i++) {
        const float *row = m + (size_t)i * from;
        float s = 0.0f;
        for (uint32_t j = 0; j < from; j++)
            s += row[j] * in[j];
        out[i] = s;
    }
    return out;
}

float vset_normalize(float *v, uint32_t dim)
{
    double s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    double l2 = sqrt(s);
    if (l2 > 0) {
        float inv = (float)(1.0 / l2);
        if (isinf(inv)) {
            /* A norm below 1/FLT_MAX (denormal components): 1/l2 is not a
             * float, and inf * v[i] would store inf and NaN. */
            for (uint32_t i = 0; i < dim; i++)
                v[i] = (float)((double)v[i] / l2);
        } else {
            for (uint32_t i = 0; i < dim; i++)
                v[i] *= inv;
        }
    }
    return (float)l2;
}

const char *vset_quant_name(int q)
{
    switch (q) {
    case HNSW_F32: return "f32";
    case HNSW_Q8: return "int8";
    case HNSW_BIN: return "bin";
    default: return "unknown";
    }
}

/* ------------------------------------------------------- creation --- */
struct vset *vset_new(uint32_t dim, int quant, uint32_t m, uint32_t reduce)
{
    struct vset *vs = vset_alloc(hnsw_new(reduce ? reduce : dim, quant, m), 0, NULL);
    if (reduce) {
        vs->proj = proj_make(dim, reduce);
        vs->reduce_from = dim;
    }
    return vs;
}

float *vset_project(const struct vset *vs, const float *in)
{
    return proj_apply(vs->proj, vs->reduce_from, hnsw_dim(vs->h), in);
}

/* --------------------------------------------------- element writers --- */
int vset_add(struct vset *vs, const char *name, size_t nlen, const float *v, float l2, int set_attr, const char *attr,
             size_t alen, uint32_t ef)
{
    int added;
    pthread_rwlock_wrlock(&vs->lock);
    struct velem *e = vset_find(vs, name, nlen);
    if (e) {
        /* Update: the element gets a new node with the new vector. */
        hnsw_delete(vs->h, e->id);
        e->id = hnsw_insert(vs->h, v, l2, e, ef);
        if (set_attr)
            elem_set_attr(vs, e, vattr_new(attr, alen));
        added = 0;
    } else {
        struct vattr *a = set_attr ? vattr_new(attr, alen) : NULL;
        e = elem_add(vs, name, nlen, a, 0);
        e->id = hnsw_insert(vs->h, v, l2, e, ef);
        added = 1;
    }
    pthread_rwlock_unlock(&vs->lock);
    return added;
}

int vset_remove(struct vset *vs, struct velem *e)
{
    pthread_rwlock_wrlock(&vs->lock);
    hnsw_delete(vs->h, e->id);
    elem_del(vs, e);
    int empty = dict_size(vs->names) == 0;
    pthread_rwlock_unlock(&vs->lock);
    return empty;
}

void vset_set_attr(struct vset *vs, struct velem *e, const char *attr, size_t alen)
{
    struct vattr *a = vattr_new(attr, alen);
    pthread_rwlock_wrlock(&vs->lock);
    elem_set_attr(vs, e, a);
    pthread_rwlock_unlock(&vs->lock);
}
